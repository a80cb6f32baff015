#!/usr/bin/env bash
# podsready.sh: one podsready-bench run (test/bench/podsready.c:
# waitForPodsReady with 1,000 directly created Workloads, a tenth never
# ready, then the same without them) on a devcluster of its own, started
# in a temp dir and stopped on any exit. test/bench/run.sh's table calls
# it; by hand:
#
#   test/bench/podsready.sh [podsready-bench arguments...]  (QUICK=1: small)
#
# The manager runs with the Configuration `podsready-bench --print-config`
# prints (waitForPodsReady timeout 2 s, backoff 1 s base / 4 s max,
# backoffLimitCount 2, blockAdmission false), without the webhook
# (DEVCLUSTER_WEBHOOK=0: the Workloads are created directly) and at
# --kube-api-qps 1000 --kube-api-burst 2000 (devcluster's default; as the
# scenario rows). At the end the program checks the cluster with
# cueue-invariants --status (build/<cfg>/tools/). DEVSERVER_BIN and
# MANAGER_BIN (default: bin/ of this tree) pick the binaries, BENCH_BUILD
# the directory of podsready-bench (default build/default).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BENCH_BUILD:-$top/build/default}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-podsready.XXXXXX")
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	"$top/test/e2e/devcluster" stop "$dir/cluster" >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

"$build/podsready-bench" --print-config >"$dir/config.yaml" || exit 1
unset DEVCLUSTER_NO_MANAGER
export DEVCLUSTER_WEBHOOK=0 DEVCLUSTER_CONFIG=$dir/config.yaml
export DEVCLUSTER_MANAGER_ARGS="--kube-api-qps 1000 --kube-api-burst 2000"
"$top/test/e2e/devcluster" start "$dir/cluster" >/dev/null || exit 1
"$build/podsready-bench" --cluster "$dir/cluster" \
	--invariants "$build/tools/cueue-invariants" "$@" &
pid=$!
wait "$pid"
rc=$?
pid=""
exit "$rc"
