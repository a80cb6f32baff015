#!/usr/bin/env bash
# demo/demo.sh: the driver of `make demo` (demo/README.md).
#
#  1. stops a demo cluster still running in the state dir and wipes its
#     store, so every run starts fresh;
#  2. starts a devcluster there (test/e2e/devcluster: the devserver and
#     the manager with its webhook on loopback), the manager configured
#     by demo/manager-config.yaml (the shipped Configuration with short
#     waitForPodsReady timings);
#  3. applies demo/platform.yaml with kubectl;
#  4. runs cueue-demo: the Job stream (scripted scenes that end in
#     preemptions and a gang that never gets ready, then a seeded
#     stream), the dashboard, the summary;
#  5. says how to point kubectl at the cluster; with a terminal on stdin
#     it keeps the cluster up until Ctrl-C, otherwise it stops it.
# Whatever happens (Ctrl-C included), the cluster is stopped on exit and
# nothing started here is left running.
#
# Environment:
#   DEMO_STATE          state dir (default: ./.demo of the source tree)
#   DEMO_JOBS           Jobs in the stream (default 61; the first 18 are
#                       the scenes of demo/feed.c)
#   DEMO_SPAN           the seeded Jobs are created from 12 s to this
#                       many seconds into the stream (default 40)
#   DEMO_RUNTIME_SCALE  multiplies every Job's runtime (default 1)
#   DEMO_SEED           the stream's seed (default 1)
#   DEMO_INTERVAL       dashboard refresh in ms (default: 250 on a
#                       terminal, 5000 otherwise)
#   DEMO_TIMEOUT        seconds before giving up on the stream (300)
#   DEMO_BIN, DEVSERVER_BIN, MANAGER_BIN  the programs (default: bin/)
set -u

top=$(cd "$(dirname "$(readlink -f "$0")")/.." && pwd)
devcluster=$top/test/e2e/devcluster
demo_bin=${DEMO_BIN:-$top/bin/cueue-demo}
state=${DEMO_STATE:-$top/.demo}
waiter=

die() {
	echo "demo: $*" >&2
	exit 1
}

[ -x "$demo_bin" ] || die "$demo_bin missing (run make all)"
command -v kubectl >/dev/null 2>&1 || die "kubectl missing (run make deps)"
mkdir -p "$state" || die "cannot create $state"
state=$(cd "$state" && pwd)

cleanup() {
	[ -n "$waiter" ] && kill "$waiter" 2>/dev/null && wait "$waiter" 2>/dev/null
	"$devcluster" stop "$state" >/dev/null 2>&1 ||
		echo "demo: could not stop the cluster in $state" >&2
}
trap cleanup EXIT
trap 'echo; echo "demo: stopping"; exit 130' INT TERM

# 1. a fresh start, even after a demo that was killed
"$devcluster" stop "$state" >/dev/null 2>&1
rm -rf "$state/data" "$state/kcache"
rm -f "$state"/devserver.{out,log} "$state"/manager.log \
	"$state"/kubeconfig "$state"/*.out

# 2. the cluster
echo "demo: starting a devcluster in $state (devserver + cueue-manager with its webhook)"
t0=${EPOCHREALTIME/./}
if ! DEVCLUSTER_CONFIG=$top/demo/manager-config.yaml \
	"$devcluster" start "$state" >"$state/devcluster.out" 2>&1; then
	cat "$state/devcluster.out" >&2
	die "the devcluster did not start"
fi
export KUBECONFIG=$state/kubeconfig
export KUBECACHEDIR=$state/kcache

# 3. the platform
if ! kubectl apply -f "$top/demo/platform.yaml" >"$state/platform.out" 2>&1; then
	cat "$state/platform.out" >&2
	die "kubectl apply -f demo/platform.yaml failed"
fi
t1=${EPOCHREALTIME/./}
printf 'demo: cluster up and platform applied in %d.%ds: ResourceFlavors h100 (tainted) and a100,\n' \
	$(((t1 - t0) / 1000000)) $(((t1 - t0) / 100000 % 10))
echo "      cohort ai-org with ClusterQueues team-nlp, team-recsys, team-research, their"
echo "      LocalQueues \"gpus\", WorkloadPriorityClasses prod-inference > training > experiment;"
echo "      preemption: LowerPriority within a queue, reclaim of lent quota from any borrower;"
echo "      waitForPodsReady (demo/manager-config.yaml): timeout 5s, backoff 2s doubling, backoffLimitCount 2"

# 4. the stream
args=(--kubeconfig "$KUBECONFIG" --jobs "${DEMO_JOBS:-61}"
	--span "${DEMO_SPAN:-40}" --runtime-scale "${DEMO_RUNTIME_SCALE:-1}"
	--seed "${DEMO_SEED:-1}" --timeout "${DEMO_TIMEOUT:-300}")
[ -n "${DEMO_INTERVAL:-}" ] && args+=(--interval "$DEMO_INTERVAL")
"$demo_bin" "${args[@]}"
rc=$?
[ "$rc" -eq 130 ] && exit 130

# 5. kubectl, and the end
cat <<EOF2

The demo cluster is a real API endpoint; point kubectl at it:
  export KUBECONFIG=$KUBECONFIG
  kubectl get workloads -A
  kubectl get clusterqueues
  kubectl get jobs -A -L kueue.x-k8s.io/priority-class
  kubectl get events -A --field-selector reason=Preempted
  kubectl get events -A --field-selector reason=EvictedDueToPodsReadyTimeout
  kubectl get workloads -n team-research -o yaml  # the gang: requeueState, Evicted, spec.active
Logs: $state/manager.log, $state/devserver.log
EOF2
if [ "$rc" -ne 0 ]; then
	echo "demo: cueue-demo failed (exit $rc); stopping the cluster" >&2
	exit "$rc"
fi
if [ -t 0 ]; then
	echo
	echo "The cluster stays up until you press Ctrl-C."
	# the demo is complete: Ctrl-C now is the normal way out
	trap 'echo; echo "demo: stopping the cluster"; exit 0' INT TERM
	sleep infinity &
	waiter=$!
	wait "$waiter"
else
	echo "demo: stdin is not a terminal: stopping the cluster"
fi
exit 0
