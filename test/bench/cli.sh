#!/usr/bin/env bash
# cli.sh: one cli-bench run (test/bench/cli_bench.c: kubectl cueue's
# answer times with 10,000 pending workloads in 100 ClusterQueues) on a
# devcluster of its own, started in a temp dir and stopped on any exit.
# test/bench/run.sh's table calls it; by hand:
#
#   test/bench/cli.sh [cli-bench arguments...]   (QUICK=1: small)
#
# The Workloads are created directly (DEVCLUSTER_WEBHOOK=0); the manager
# runs at --kube-api-qps 1000 --kube-api-burst 2000, as the scenario
# rows. DEVSERVER_BIN and MANAGER_BIN (default: bin/ of this tree) pick
# the binaries, KUBECTL_CUEUE_BIN the plugin (default bin/kubectl-cueue),
# BENCH_BUILD the directory of cli-bench (default build/default).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BENCH_BUILD:-$top/build/default}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-cli.XXXXXX")
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	"$top/test/e2e/devcluster" stop "$dir/cluster" >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

# a copy: a rebuild during the run cannot swap the plugin
cp "${KUBECTL_CUEUE_BIN:-$top/bin/kubectl-cueue}" "$dir/kubectl-cueue" || exit 1
unset DEVCLUSTER_NO_MANAGER
export DEVCLUSTER_WEBHOOK=0
export DEVCLUSTER_MANAGER_ARGS="--kube-api-qps 1000 --kube-api-burst 2000"
"$top/test/e2e/devcluster" start "$dir/cluster" >/dev/null || exit 1
"$build/cli-bench" --cluster "$dir/cluster" --plugin "$dir/kubectl-cueue" "$@" &
pid=$!
wait "$pid"
rc=$?
pid=""
exit "$rc"
