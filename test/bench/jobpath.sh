#!/usr/bin/env bash
# jobpath.sh: one jobpath-bench run (test/bench/jobpath.c: batch/v1 Jobs
# through the TLS webhooks to Complete) on a devcluster of its own, with
# the webhook on (the default devcluster), started in a temp dir and
# stopped on any exit. test/bench/run.sh's table calls it; by hand:
#
#   test/bench/jobpath.sh [jobpath-bench arguments...]   (QUICK=1: small)
#
# The manager runs as devcluster starts it (--kube-api-qps 1000
# --kube-api-burst 2000, the shipped Configuration). DEVSERVER_BIN and
# MANAGER_BIN (default: bin/ of this tree) pick the binaries, BENCH_BUILD
# the directory of jobpath-bench (default build/default).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BENCH_BUILD:-$top/build/default}
dir=$(mktemp -d "${TMPDIR:-/tmp}/bench-jobpath.XXXXXX")
pid=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	"$top/test/e2e/devcluster" stop "$dir" >/dev/null 2>&1
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

unset DEVCLUSTER_WEBHOOK DEVCLUSTER_NO_MANAGER DEVCLUSTER_CONFIG
"$top/test/e2e/devcluster" start "$dir" >/dev/null || exit 1
"$build/jobpath-bench" --cluster "$dir" "$@" &
pid=$!
wait "$pid"
rc=$?
pid=""
exit "$rc"
