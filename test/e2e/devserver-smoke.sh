#!/usr/bin/env bash
# devserver-smoke: the real kubectl against bin/cueue-devserver, for what
# the kubectl matrix (kubectl-matrix.sh) does not cover: the in-process
# controllers and the protobuf request bodies.
#
# Starts the devserver (TLS + token, kubeconfig written by the server,
# the small fixture CRDs of test/fixtures/crds), then: a suspended Job
# unsuspended with a strategic merge patch completes (job runner) and
# prints as Complete; `kubectl create namespace|configmap` (protobuf
# bodies); deleting a namespace deletes its content and then the
# namespace (namespace lifecycle). Each check compares kubectl's exit
# code and output with what it prints against a real kube-apiserver
# (k8s-api.md §15, §17, §18). The rest of the command matrix, with exact
# outputs and three kubectl versions, is kubectl-matrix.sh.
#
# Usage: test/e2e/devserver-smoke.sh [path/to/cueue-devserver]
#   (default: $DEVSERVER_BIN, else bin/cueue-devserver)
# Prints "N passed, M failed"; exits non-zero when anything failed.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-${DEVSERVER_BIN:-$top/bin/cueue-devserver}}
fixtures=$top/test/fixtures/crds
work=$(mktemp -d /tmp/devserver-smoke.XXXXXX)
export KUBECACHEDIR=$work/cache
export KUBECONFIG=$work/kubeconfig
pids=()
passed=0
failed=0

cleanup() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT

# start_server OUTFILE ARGS...: starts the devserver, waits for its
# "listening on" line, records its pid.
start_server() {
	local out=$1
	shift
	"$bin" --listen 127.0.0.1:0 "$@" >"$out" 2>"$out.err" &
	pids+=("$!")
	for _ in $(seq 1 100); do
		grep -q '^listening on ' "$out" && return 0
		sleep 0.1
	done
	echo "devserver did not start:" >&2
	cat "$out.err" >&2
	exit 1
}

# check NAME WANT_RC PATTERN CMD...: runs CMD; passes when its exit code
# is WANT_RC and its stdout+stderr match the extended regex PATTERN.
check() {
	local name=$1 want=$2 pat=$3 out rc
	shift 3
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -Eq -- "$pat" <<<"$out"; then
		passed=$((passed + 1))
		printf 'ok   %s\n' "$name"
	else
		failed=$((failed + 1))
		printf 'FAIL %s (rc %s, want %s; pattern: %s)\n' "$name" "$rc" \
			"$want" "$pat"
		sed 's/^/     | /' <<<"$out" | head -20
	fi
}

# ---- manifests ----
cat >"$work/wl.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: w1
spec:
  queueName: user-queue
  podSets:
  - name: main
    count: 1
EOF
cat >"$work/job.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: sample-job
  labels:
    kueue.x-k8s.io/queue-name: user-queue
spec:
  parallelism: 3
  completions: 3
  suspend: true
  template:
    spec:
      containers:
      - name: dummy-job
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        args: ["entrypoint-tester", "hello", "world"]
        resources:
          requests:
            cpu: 1
            memory: "200Mi"
      restartPolicy: Never
EOF

# ---- TLS server, kubeconfig from the server ----
start_server "$work/tls.out" --tls --token smoke-token \
	--kubeconfig-out "$KUBECONFIG" --job-runtime 2s
k=kubectl

check "create CRD" 0 \
	'customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io created' \
	$k create -f "$fixtures/workloads.yaml"
check "wait established" 0 'condition met' \
	$k wait --for condition=established \
	crd/workloads.kueue.x-k8s.io --timeout=10s
check "create CR" 0 'workload.kueue.x-k8s.io/w1 created' \
	$k create -f "$work/wl.yaml"
check "get row (short name)" 0 '^w1 +user-queue' $k get wl w1
check "apply job new" 0 'job.batch/sample-job created' \
	$k apply -f "$work/job.yaml"
check "job defaults" 0 '^3 6 NonIndexed true$' \
	$k get job sample-job -o \
	jsonpath='{.spec.parallelism} {.spec.backoffLimit} {.spec.completionMode} {.spec.suspend}'
check "suspended Job (table)" 0 '^sample-job +Suspended +0/3 +[0-9]+s$' \
	$k get job sample-job --no-headers
check "default patch on a Job (SMP)" 0 'job.batch/sample-job patched' \
	$k patch job sample-job -p '{"spec":{"suspend":false}}'
check "unsuspended Job completes (job runner)" 0 \
	'job.batch/sample-job condition met' \
	$k wait --for=condition=complete job/sample-job --timeout=30s
check "completed Job (table)" 0 '^sample-job +Complete +3/3 +[0-9]+s +[0-9]+s$' \
	$k get job sample-job --no-headers
check "completed Job (status)" 0 '^3 True$' \
	$k get job sample-job -o \
	jsonpath='{.status.succeeded} {.status.conditions[?(@.type=="Complete")].status}'
check "delete job" 0 'job.batch "sample-job" deleted' \
	$k delete -f "$work/job.yaml"
check "create namespace (protobuf body)" 0 'namespace/team-a created' \
	$k create namespace team-a
check "create configmap (protobuf body)" 0 'configmap/c1 created' \
	$k create configmap c1 -n team-a --from-literal=a=b
check "configmap data" 0 '^b$' \
	$k get configmap c1 -n team-a -o jsonpath='{.data.a}'
check "delete namespace (namespace lifecycle)" 0 'namespace "team-a" deleted' \
	$k delete namespace team-a --timeout=30s
check "namespace gone" 1 'NotFound' $k get namespace team-a
check "its content gone" 1 'NotFound' $k get configmap c1 -n team-a

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
