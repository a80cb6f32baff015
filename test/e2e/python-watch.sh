#!/usr/bin/env bash
# python-watch: Debian's python3-kubernetes (make deps) against
# bin/cueue-devserver, as k8s-api.md §14.2 and §17.6 describe it: a
# CustomObjectsApi list + watch from the list's resourceVersion with
# bookmarks while another thread writes /status, deletes and creates; a
# typed BatchV1Api watch without an RV; ApiException bodies. The checks
# are in test/e2e/watch.py; this script starts the server (TLS + token,
# Kueue's CRDs preloaded), runs it, and adds a plain-http list.
#
# Usage: test/e2e/python-watch.sh
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init python-watch

# The python3 that has the kubernetes module: the one on PATH, else
# Debian's (a pyenv or venv python3 may shadow /usr/bin/python3).
py=
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null 2>&1 &&
		"$p" -c 'import kubernetes' >/dev/null 2>&1; then
		py=$(command -v "$p")
		break
	fi
done
if [ -z "$py" ]; then
	fail "python3 with the kubernetes module" \
		"no python3 on PATH or /usr/bin/python3 imports kubernetes (make deps installs python3-kubernetes)"
	e2e_finish
fi
pass "python3 with the kubernetes module: $py ($("$py" -c 'import kubernetes; print(kubernetes.__version__)'))"

start_server tls --tls --token py-token --kubeconfig-out "$work/kubeconfig" \
	--preload "$e2e_top/manifests/crds"
"$py" "$e2e_dir/watch.py" "$work/kubeconfig" >"$work/watch.out" 2>&1
rc=$?
sed '$d' "$work/watch.out"
last=$(tail -1 "$work/watch.out")
if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
	passed=$((passed + BASH_REMATCH[1]))
	failed=$((failed + BASH_REMATCH[2]))
	if [ "$rc" -ne 0 ] && [ "${BASH_REMATCH[2]}" -eq 0 ]; then
		fail "watch.py exit status" "exit status $rc with no failed check"
	fi
else
	echo "$last"
	fail "watch.py ran to the end" "exit status $rc; last line: $last"
fi
stop_server tls

# Plain http: no credentials in the kubeconfig, none sent, none needed.
start_server http --kubeconfig-out "$work/kubeconfig-http" \
	--preload "$e2e_top/manifests/crds"
expect "http: CustomObjectsApi list" 0 "$py" -c '
import sys
from kubernetes import client, config
config.load_kube_config(config_file=sys.argv[1])
l = client.CustomObjectsApi().list_cluster_custom_object(
    "kueue.x-k8s.io", "v1beta2", "workloads")
print(l["kind"], l["apiVersion"], len(l["items"]))
' "$work/kubeconfig-http" <<'EOF'
WorkloadList kueue.x-k8s.io/v1beta2 0
EOF
stop_server http
e2e_finish
