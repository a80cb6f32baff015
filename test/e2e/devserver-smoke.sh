#!/usr/bin/env bash
# devserver-smoke: the real kubectl against bin/cueue-devserver.
#
# Starts the devserver (TLS + token, kubeconfig written by the server),
# then runs the kubectl commands a user and the Kueue docs run: version,
# api-resources, create/apply/apply --server-side of CRDs and objects,
# get (table, yaml, watch), patch (merge, json, strategic), replace with a
# stale resourceVersion, delete through a finalizer, wait, describe. A
# second, plain-HTTP server checks the no-credentials path. Each check
# compares kubectl's exit code and output with what it prints against a
# real kube-apiserver (k8s-api.md §15, §17, §18).
#
# Usage: test/e2e/devserver-smoke.sh [path/to/cueue-devserver]
# Prints "N passed, M failed"; exits non-zero when anything failed.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
bin=${1:-$top/bin/cueue-devserver}
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
	"$bin" "$@" >"$out" 2>"$out.err" &
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
sed 's/user-queue/other-queue/' "$work/wl.yaml" >"$work/wl2.yaml"
cat >"$work/cq.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cluster-queue
spec:
  namespaceSelector: {}
  cohort: team-a
EOF
sed 's/team-a/team-b/' "$work/cq.yaml" >"$work/cq2.yaml"
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
sed 's/parallelism: 3/parallelism: 2/' "$work/job.yaml" >"$work/job2.yaml"
cat >"$work/badjob.yaml" <<'EOF'
apiVersion: batch/v1
kind: Job
metadata:
  name: bad
spec: {}
EOF
cat >"$work/nsjob.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: nosuchns
EOF

# ---- TLS server, kubeconfig from the server ----
start_server "$work/tls.out" --tls --token smoke-token \
	--kubeconfig-out "$KUBECONFIG" --job-runtime 2s
k=kubectl

check "version" 0 'Server Version: v1\.32\.4' $k version
check "api-resources" 0 'jobs +batch/v1 +true +Job' $k api-resources
check "create CRD" 0 \
	'customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io created' \
	$k create -f "$fixtures/workloads.yaml"
check "wait established" 0 'condition met' \
	$k wait --for condition=established \
	crd/workloads.kueue.x-k8s.io --timeout=10s
check "create CR" 0 'workload.kueue.x-k8s.io/w1 created' \
	$k create -f "$work/wl.yaml"
check "create CR again (409)" 1 \
	'Error from server \(AlreadyExists\): error when creating .*workloads.kueue.x-k8s.io "w1" already exists' \
	$k create -f "$work/wl.yaml"
check "get (table)" 0 \
	'NAME +QUEUE +RESERVED IN +ADMITTED +FINISHED +AGE' $k get workloads
check "get row" 0 '^w1 +user-queue' $k get wl w1
check "get -o yaml" 0 'resourceVersion: "[0-9]+"' $k get wl w1 -o yaml
check "get missing (404)" 1 \
	'Error from server \(NotFound\): workloads.kueue.x-k8s.io "nosuch" not found' \
	$k get workload nosuch
check "apply CR changed" 0 'workload.kueue.x-k8s.io/w1 configured' \
	$k apply -f "$work/wl2.yaml"
check "apply job new" 0 'job.batch/sample-job created' \
	$k apply -f "$work/job.yaml"
check "apply job unchanged" 0 'job.batch/sample-job unchanged' \
	$k apply -f "$work/job.yaml"
check "apply job changed" 0 'job.batch/sample-job configured' \
	$k apply -f "$work/job2.yaml"
check "job defaults" 0 '^2 6 NonIndexed true$' \
	$k get job sample-job -o \
	jsonpath='{.spec.parallelism} {.spec.backoffLimit} {.spec.completionMode} {.spec.suspend}'
check "get jobs (table)" 0 'NAME +STATUS +COMPLETIONS +DURATION +AGE' \
	$k get jobs
check "apply --server-side CRD" 0 \
	'customresourcedefinition.apiextensions.k8s.io/clusterqueues.kueue.x-k8s.io serverside-applied' \
	$k apply --server-side -f "$fixtures/clusterqueues.yaml"
check "apply --server-side CR new" 0 \
	'clusterqueue.kueue.x-k8s.io/cluster-queue serverside-applied' \
	$k apply --server-side -f "$work/cq.yaml"
check "apply --server-side CR changed" 0 'serverside-applied' \
	$k apply --server-side -f "$work/cq2.yaml"
check "server-side result and defaults" 0 '^team-b BestEffortFIFO$' \
	$k get cq cluster-queue -o \
	jsonpath='{.spec.cohort} {.spec.queueingStrategy}'
check "get -o wide (priority columns)" 0 \
	'NAME +COHORT +STRATEGY +PENDING WORKLOADS +ADMITTED WORKLOADS' \
	$k get clusterqueues -o wide
check "deprecated version warning" 0 \
	'Warning: This version is deprecated\. Use v1beta2 instead\.' \
	$k get clusterqueues.v1beta1.kueue.x-k8s.io
check "patch --type=merge" 0 'workload.kueue.x-k8s.io/w1 patched' \
	$k patch workload w1 --type=merge -p '{"spec":{"queueName":"q2"}}'
check "patch --type=json" 0 'workload.kueue.x-k8s.io/w1 patched' \
	$k patch workload w1 --type=json \
	-p '[{"op":"replace","path":"/spec/queueName","value":"q3"}]'
check "patched value" 0 '^q3$' \
	$k get wl w1 -o jsonpath='{.spec.queueName}'
check "default patch on a Job (SMP)" 0 'job.batch/sample-job patched' \
	$k patch job sample-job -p '{"spec":{"suspend":false}}'
check "unsuspended Job completes (job runner)" 0 \
	'job.batch/sample-job condition met' \
	$k wait --for=condition=complete job/sample-job --timeout=30s
check "default patch on a CR (415)" 1 \
	'application/strategic-merge-patch\+json is not supported by kueue.x-k8s.io/v1beta2, Kind=Workload: the body of the request was in an unknown format - accepted media types include: application/json-patch\+json, application/merge-patch\+json, application/apply-patch\+yaml' \
	$k patch workload w1 -p '{"spec":{"queueName":"q4"}}'
$k get wl w1 -o yaml >"$work/stale.yaml" 2>/dev/null
$k patch wl w1 --type=merge -p '{"spec":{"queueName":"q5"}}' >/dev/null 2>&1
check "replace with stale RV (409)" 1 \
	'Error from server \(Conflict\): error when replacing .*Operation cannot be fulfilled on workloads.kueue.x-k8s.io "w1": the object has been modified; please apply your changes to the latest version and try again' \
	$k replace -f "$work/stale.yaml"
check "422 Invalid" 1 \
	'The Job "bad" is invalid: spec.template: Required value' \
	$k create -f "$work/badjob.yaml"
check "missing namespace (404)" 1 'namespaces "nosuchns" not found' \
	$k create -f "$work/nsjob.yaml"
check "add finalizer" 0 'patched' $k patch wl w1 --type=merge \
	-p '{"metadata":{"finalizers":["kueue.x-k8s.io/resource-in-use"]}}'
check "delete with finalizer" 0 'workload.kueue.x-k8s.io "w1" deleted' \
	$k delete wl w1 --wait=false
check "marked for deletion" 0 '^[0-9TZ:-]+ \["kueue.x-k8s.io/resource-in-use"\]$' \
	$k get wl w1 -o \
	jsonpath='{.metadata.deletionTimestamp} {.metadata.finalizers}'
(sleep 1; $k patch wl w1 --type=json \
	-p '[{"op":"remove","path":"/metadata/finalizers"}]' >/dev/null 2>&1) &
helper=$!
check "removing the finalizer deletes" 0 'condition met' \
	$k wait --for=delete workload/w1 --timeout=15s
wait "$helper"
check "gone" 1 'NotFound' $k get wl w1
$k create -f "$work/wl.yaml" >/dev/null 2>&1
(sleep 1; $k patch wl w1 --subresource=status --type=merge -p \
	'{"status":{"admission":{"clusterQueue":"cluster-queue"},"conditions":[{"type":"Admitted","status":"True","reason":"Admitted","message":"ok","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}' \
	>/dev/null 2>&1) &
helper=$!
check "wait --for=condition" 0 'workload.kueue.x-k8s.io/w1 condition met' \
	$k wait --for=condition=Admitted workload/w1 --timeout=15s
wait "$helper"
check "status columns" 0 '^w1 +user-queue +cluster-queue +True' \
	$k get wl w1 --no-headers
(sleep 1.5; $k patch wl w1 --type=merge -p '{"spec":{"queueName":"qw"}}' \
	>/dev/null 2>&1) &
helper=$!
check "get -w with a timeout" 124 '(^|\n)w1 +qw ' timeout 4 $k get wl -w
wait "$helper"
check "describe CR" 0 'Name: +w1' $k describe workload w1
check "describe Job" 0 'Completion Mode: +NonIndexed' \
	$k describe job sample-job
check "chunked list" 0 'w1' $k get wl --chunk-size=1 -A
check "delete job" 0 'job.batch "sample-job" deleted' \
	$k delete -f "$work/job.yaml"
check "create namespace (protobuf body)" 0 'namespace/team-a created' \
	$k create namespace team-a
check "create configmap (protobuf body)" 0 'configmap/c1 created' \
	$k create configmap c1 -n team-a --from-literal=a=b
check "delete namespace (namespace lifecycle)" 0 'namespace "team-a" deleted' \
	$k delete namespace team-a --timeout=30s
check "namespace gone" 1 'NotFound' $k get namespace team-a

# ---- plain HTTP: no credentials sent, none required ----
start_server "$work/http.out" --kubeconfig-out "$work/kubeconfig-http" \
	--preload "$fixtures"
check "http: get preloaded CRDs" 0 'workloads.kueue.x-k8s.io' \
	env KUBECONFIG="$work/kubeconfig-http" KUBECACHEDIR="$work/cache2" \
	$k get crd
check "http: create and get" 0 'workload.kueue.x-k8s.io/w1 created' \
	env KUBECONFIG="$work/kubeconfig-http" KUBECACHEDIR="$work/cache2" \
	$k create -f "$work/wl.yaml"

printf '%d passed, %d failed\n' "$passed" "$failed"
[ "$failed" -eq 0 ]
