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
# SCENARIO=fair (make demo SCENARIO=fair) plays the fair-sharing demo
# instead: demo/manager-config-fair.yaml (fair sharing on),
# demo/platform-fair.yaml (four teams with weights sharing a cohort's
# pool) and cueue-demo --scenario fair (teams that arrive one after the
# other and preempt by fair sharing; the dashboard shows each queue's
# weightedShare over time).
#
# SCENARIO=mig (make demo SCENARIO=mig) walks through GPUs shared as MIG
# instances with kubectl instead of the stream: demo/manager-config-mig.yaml
# (the shipped Configuration plus resources.transformations that charge
# each MIG profile as compute slices and accelerator memory),
# demo/platform-mig.yaml (one queue over two A100 80GB), the Jobs of
# demo/jobs-mig.yaml and demo/job-mig-big.yaml; the whole-GPU Job waits,
# kubectl cueue explain says why, and it runs once the gang ends.
#
# Environment:
#   SCENARIO            classic (default), fair or mig
#   DEMO_STATE          state dir (default: ./.demo of the source tree)
#   DEMO_JOBS           Jobs in the stream (default 61; the first 18 are
#                       the scenes of demo/feed.c; fair: default 96)
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
scenario=${SCENARIO:-classic}

die() {
	echo "demo: $*" >&2
	exit 1
}

[ -x "$demo_bin" ] || die "$demo_bin missing (run make all)"
case $scenario in
classic)
	config=$top/demo/manager-config.yaml
	platform=$top/demo/platform.yaml
	jobs=${DEMO_JOBS:-61}
	;;
fair)
	config=$top/demo/manager-config-fair.yaml
	platform=$top/demo/platform-fair.yaml
	jobs=${DEMO_JOBS:-96}
	;;
mig)
	config=$top/demo/manager-config-mig.yaml
	platform=$top/demo/platform-mig.yaml
	;;
*) die "SCENARIO=$scenario: classic, fair or mig" ;;
esac
command -v kubectl >/dev/null 2>&1 || die "kubectl missing (run make deps)"
mkdir -p "$state" || die "cannot create $state"
state=$(cd "$state" && pwd)

# SCENARIO=mig: a narrated walk through MIG quota with kubectl (no
# dashboard): what the team asks for, what the queue charges, why the
# whole-GPU Job waits, and that it runs once the gang ends.
mig_wait() { # TENTHS CMD...: until CMD succeeds
	local n=$1
	shift
	while ! "$@" >/dev/null 2>&1; do
		n=$((n - 1))
		[ "$n" -gt 0 ] || return 1
		sleep 0.2
	done
}
mig_admitted() { # JOB...: each Job's Workload is admitted
	local j v
	for j; do
		v=$(kubectl get workloads -n team-ml -o jsonpath="{range .items[?(@.metadata.ownerReferences[0].name==\"$j\")]}{.status.conditions[?(@.type==\"Admitted\")].status}{end}")
		[ "$v" = True ] || return 1
	done
}
mig_finished() { # JOB...: each Job has succeeded
	local j
	for j; do
		[ "$(kubectl get job -n team-ml "$j" -o jsonpath='{.status.succeeded}')" = "$(kubectl get job -n team-ml "$j" -o jsonpath='{.spec.completions}')" ] || return 1
	done
}
mig_usage() { # the reservation; bytes shown in Gi too (Kueue writes a
	# resource that is not memory in plain units)
	kubectl get clusterqueue mig-pool -o jsonpath='{range .status.flavorsReservation[0].resources[*]}  {.name}: {.total}{"\n"}{end}' |
		awk '$2 ~ /^[0-9]+$/ && $2 >= 1073741824 && $2 % 1073741824 == 0 {
			$0 = $0 " (" $2 / 1073741824 "Gi)" } { print }'
}
mig_slices() { # WANT: mig-pool's status shows WANT slices reserved
	[ "$(kubectl get clusterqueue mig-pool -o jsonpath='{.status.flavorsReservation[0].resources[?(@.name=="platform.example.com/gpu-slices")].total}')" = "$1" ]
}
play_mig() {
	local big
	echo
	echo "demo: the team asks for MIG profiles; the queue budgets slices and memory:"
	echo "      1g.10gb = 1 slice + 10Gi, 2g.20gb = 2 + 20Gi, 3g.40gb = 3 + 40Gi, 7g.80gb = 7 + 80Gi"
	echo "      (resources.transformations in demo/manager-config-mig.yaml); mig-pool holds 14 slices, 160Gi"
	echo
	echo "\$ kubectl create -f demo/jobs-mig.yaml   # 2 notebooks (1g), a fine-tuning gang (2 x 3g), an evaluation (2g)"
	kubectl create -f "$top/demo/jobs-mig.yaml" || return 1
	mig_wait 300 mig_admitted notebook-a notebook-b finetune eval ||
		{ echo "demo: the four Jobs were not admitted"; return 1; }
	mig_wait 100 mig_slices 10
	echo
	echo "\$ kubectl get workloads -n team-ml"
	kubectl get workloads -n team-ml
	echo
	echo "mig-pool's reservation (10 of 14 slices, 120Gi of 160Gi):"
	mig_usage
	echo
	echo "\$ kubectl create -f demo/job-mig-big.yaml   # a training run on a whole GPU: 7g.80gb"
	kubectl create -f "$top/demo/job-mig-big.yaml" || return 1
	big=$(kubectl get workloads -n team-ml -o jsonpath='{range .items[?(@.metadata.ownerReferences[0].name=="big-train")]}{.metadata.name}{end}')
	mig_wait 300 bash -c "kubectl get workload -n team-ml '$big' -o jsonpath='{.status.conditions[?(@.type==\"QuotaReserved\")].reason}' | grep -q Pending" ||
		{ echo "demo: big-train did not show why it waits"; return 1; }
	echo
	echo "big-train waits, in Kueue's words:"
	kubectl get workload -n team-ml "$big" -o jsonpath='  {.status.conditions[?(@.type=="QuotaReserved")].message}{"\n"}'
	echo
	echo "\$ kubectl cueue explain job/big-train -n team-ml"
	kubectl cueue explain job/big-train -n team-ml
	echo
	echo "demo: the fine-tuning gang finishes (the job runner ends it now)"
	kubectl annotate --overwrite -n team-ml job finetune cueue.dev/runtime=1ms >/dev/null
	mig_wait 300 mig_admitted big-train ||
		{ echo "demo: big-train was never admitted"; return 1; }
	echo "demo: big-train admitted on the 6 slices and 80Gi the gang freed"
	echo "      and 1 of the 4 slices left (11 of 14 slices, 120Gi of 160Gi):"
	mig_wait 100 mig_slices 11
	mig_usage
	echo
	echo "demo: the training run, the notebooks and the evaluation finish too"
	kubectl annotate --overwrite -n team-ml job big-train notebook-a notebook-b eval cueue.dev/runtime=1ms >/dev/null
	mig_wait 600 mig_finished notebook-a notebook-b finetune eval big-train ||
		{ echo "demo: not every Job finished"; return 1; }
	echo
	echo "\$ kubectl get workloads -n team-ml"
	kubectl get workloads -n team-ml
	echo
	echo "demo: mig done: 5 Jobs admitted and finished; MIG profiles charged as slices and memory"
}

# The end of a demo that went well: with a terminal on stdin the cluster
# stays up until Ctrl-C (now the normal way out), otherwise it stops.
hold_or_stop() {
	if [ -t 0 ]; then
		echo
		echo "The cluster stays up until you press Ctrl-C."
		trap 'echo; echo "demo: stopping the cluster"; exit 0' INT TERM
		sleep infinity &
		waiter=$!
		wait "$waiter"
	else
		echo "demo: stdin is not a terminal: stopping the cluster"
	fi
	exit 0
}

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
if ! DEVCLUSTER_CONFIG=$config \
	"$devcluster" start "$state" >"$state/devcluster.out" 2>&1; then
	cat "$state/devcluster.out" >&2
	die "the devcluster did not start"
fi
export KUBECONFIG=$state/kubeconfig
export KUBECACHEDIR=$state/kcache

# 3. the platform
if ! kubectl apply -f "$platform" >"$state/platform.out" 2>&1; then
	cat "$state/platform.out" >&2
	die "kubectl apply -f demo/${platform##*/} failed"
fi
t1=${EPOCHREALTIME/./}
if [ "$scenario" = mig ]; then
	printf 'demo: cluster up and platform applied in %d.%ds: ResourceFlavor a100-mig, ClusterQueue mig-pool,\n' \
		$(((t1 - t0) / 1000000)) $(((t1 - t0) / 100000 % 10))
	echo "      LocalQueue team-ml/gpus; MIG profiles transformed (demo/manager-config-mig.yaml)"
	export PATH=$top/bin:$PATH # kubectl finds its plugin kubectl-cueue there
	play_mig
	rc=$?
	cat <<EOF2

The demo cluster is a real API endpoint; point kubectl at it:
  export KUBECONFIG=$KUBECONFIG
  kubectl get workloads -n team-ml -o yaml   # status.admission: resourceUsage in slices and memory
  kubectl get clusterqueue mig-pool -o yaml
  kubectl cueue pending mig-pool
Logs: $state/manager.log, $state/devserver.log
EOF2
	if [ "$rc" -ne 0 ]; then
		echo "demo: the MIG walk-through failed; stopping the cluster" >&2
		exit "$rc"
	fi
	hold_or_stop
elif [ "$scenario" = fair ]; then
	printf 'demo: cluster up and platform applied in %d.%ds: fair sharing on (demo/manager-config-fair.yaml);\n' \
		$(((t1 - t0) / 1000000)) $(((t1 - t0) / 100000 % 10))
	echo "      Cohort ai-org holds 32 a100 GPUs; ClusterQueues team-nlp (weight 2), team-recsys (1),"
	echo "      team-research (1), team-vision (2) have no quota of their own: fair sharing splits"
	echo "      the pool by weight; research comes first, nlp and recsys 2 s and 4 s later, vision late"
else
printf 'demo: cluster up and platform applied in %d.%ds: ResourceFlavors h100 (tainted) and a100,\n' \
	$(((t1 - t0) / 1000000)) $(((t1 - t0) / 100000 % 10))
echo "      cohort ai-org with ClusterQueues team-nlp, team-recsys, team-research, their"
echo "      LocalQueues \"gpus\", WorkloadPriorityClasses prod-inference > training > experiment;"
echo "      preemption: LowerPriority within a queue, reclaim of lent quota from any borrower;"
echo "      waitForPodsReady (demo/manager-config.yaml): timeout 5s, backoff 2s doubling, backoffLimitCount 2"
fi

# 4. the stream
args=(--kubeconfig "$KUBECONFIG" --jobs "$jobs"
	--span "${DEMO_SPAN:-40}" --runtime-scale "${DEMO_RUNTIME_SCALE:-1}"
	--seed "${DEMO_SEED:-1}" --timeout "${DEMO_TIMEOUT:-300}")
[ -n "${DEMO_INTERVAL:-}" ] && args+=(--interval "$DEMO_INTERVAL")
[ "$scenario" = fair ] && args+=(--scenario fair)
"$demo_bin" "${args[@]}"
rc=$?
[ "$rc" -eq 130 ] && exit 130

# 5. kubectl, and the end
if [ "$scenario" = fair ]; then
	cat <<EOF2

The demo cluster is a real API endpoint; point kubectl at it:
  export KUBECONFIG=$KUBECONFIG
  kubectl get clusterqueues -o custom-columns=NAME:.metadata.name,WEIGHT:.spec.fairSharing.weight,SHARE:.status.fairSharing.weightedShare
  kubectl get cohorts -o yaml                      # ai-org: the pool, status.fairSharing
  kubectl get events -A --field-selector reason=Preempted
  kubectl get workloads -A
Logs: $state/manager.log, $state/devserver.log
EOF2
else
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
fi
if [ "$rc" -ne 0 ]; then
	echo "demo: cueue-demo failed (exit $rc); stopping the cluster" >&2
	exit "$rc"
fi
hold_or_stop
