#!/usr/bin/env bash
# evict: the eviction path end to end with Jobs, the real webhook and the
# real kubectl (kueue-scheduler.md §5, kueue-api.md §3.6, §7.4, §12.7):
#  - deactivation (`kubectl patch workload ... spec.active=false`): the
#    Workload is evicted (Deactivated), its Job suspended with its pods
#    gone, and only then is the quota released: a Job created meanwhile
#    waits (the over-admission this suite was written for); active=true
#    requeues it (Requeued=True Reactivated);
#  - stopPolicy on a ClusterQueue: Hold keeps admitted Jobs running,
#    HoldAndDrain evicts them (ClusterQueueStopped), None requeues them
#    (ClusterQueueRestarted); on a LocalQueue: LocalQueueStopped;
#  - a Job compared with its Workload (Kueue's equivalentToWorkload):
#    the parallelism of a pending Job raised or lowered (the Workload
#    follows, keeping its place), of a running Job raised (stopped "No
#    matching Workload", Workload replaced, queued again), a pending
#    Workload's count patched by hand (put back);
#  - a suspended Job whose queue label is removed: its Workload deleted.
# cueue-invariants runs at every observation point, with the Jobs: a Job
# never runs on a Workload that does not hold quota for its pods.
#
# The devserver's job runner completes a Job --job-runtime after it is
# unsuspended; the suite sets that to 1h and ends Jobs with `release`.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init evict

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
T=${EVICT_WAIT:-300}
cd "$e2e_dir/manifests/evict" || exit 1

on_exit_stop_clusters "$cluster"

# mkjob NAME PARALLELISM COMPLETIONS CPU: creates the Job (suspended by
# the webhook) and caches its Workload's name.
mkjob() {
	sed -e "s/NAME/$1/" -e "s/PAR/$2/" -e "s/COMP/$3/" -e "s/CPU/$4/" \
		job.tmpl >"$work/$1.yaml"
	expect "create job $1 (parallelism $2, cpu $4)" 0 \
		kubectl create -f "$work/$1.yaml" -o jsonpath='{.spec.suspend}' <<<'true'
	wl_name "$1" >/dev/null
}
# state JOB: "suspend active-pods" (status.active is omitted at 0).
state() {
	local s
	s=$(jp "job/$1" '{.spec.suspend} {.status.active}')
	[ "${s% }" != "$s" ] && s+=0
	echo "$s"
}
# wlc JOB TYPE: the Job's Workload's condition TYPE, "status reason: message".
wlc() {
	cond_line "workload/$(wl_name "$1")" "$2"
}
# count_of JOB: the Workload's pod set count and admitted count.
count_of() {
	jp "workload/$(wl_name "$1")" '{.spec.podSets[0].count} {.status.admission.podSetAssignments[0].count}'
}
# evicted_metric REASON: the manager's kueue_evicted_workloads_total for
# evict-cq and REASON (0 when the series is missing).
evicted_metric() {
	curl -sf --max-time 5 "$(metrics_url)/metrics" |
		awk -v r="$1" 'BEGIN { v = 0 }
			$1 ~ /^kueue_evicted_workloads_total\{/ &&
			$1 ~ /cluster_queue="evict-cq"/ &&
			$1 ~ ("reason=\"" r "\"") { v = $2 }
			END { print v }'
}

job_cluster_start
expect "apply the queues" 0 kubectl apply -f setup.yaml <<'EOF'
resourceflavor.kueue.x-k8s.io/evict-flavor created
clusterqueue.kueue.x-k8s.io/evict-cq created
localqueue.kueue.x-k8s.io/evict-queue created
EOF

# ---------------------------------------------------------------------
# 1. Deactivation keeps the quota until the Job stopped.

mkjob a 1 1 2
expect_eventually "a runs" "$T" "false 1" state a
invariants "a admitted"
expect "deactivate a's Workload" 0 \
	kubectl patch workload "$(wl_name a)" --type=merge -p '{"spec":{"active":false}}' \
	-o jsonpath='{.spec.active}' <<<'false'
invariants "a's eviction in flight"
mkjob b 1 1 2
invariants "a's eviction in flight, b created"
expect_eventually "a's Workload evicted: Deactivated" "$T" \
	"True Deactivated: The workload is deactivated" wlc a Evicted
expect_eventually "a suspended, its pods gone" "$T" "true 0" state a
expect_eventually "a's reservation cleared" "$T" \
	"False Pending: The workload is deactivated" wlc a QuotaReserved
expect "a's Requeued: False Deactivated" 0 wlc a Requeued <<<'False Deactivated: The workload is deactivated'
invariants "a deactivated"
expect "kueue_evicted_workloads_total{reason=Deactivated} counts a" 0 \
	evicted_metric Deactivated <<<'1'
expect_eventually "b admitted once a released its quota" "$T" "false 1" state b
invariants "b runs"
expect "a's Workload Admitted False NoReservation" 0 wlc a Admitted \
	<<<'False NoReservation: The workload has no reservation'
expect "reactivate a" 0 \
	kubectl patch workload "$(wl_name a)" --type=merge -p '{"spec":{"active":true}}' \
	-o jsonpath='{.spec.active}' <<<'true'
expect_eventually "a requeued: Reactivated" "$T" \
	"True Reactivated: The workload was reactivated" wlc a Requeued
match_eventually "a pending behind b" "$T" \
	'^False Pending: couldn.t assign flavors' wlc a QuotaReserved
invariants "a pending"
release b
expect_eventually "a admitted again when b ends" "$T" "false 1" state a
invariants "a runs again"
release a
expect_eventually "a finished" "$T" "True Succeeded" \
	jp "workload/$(wl_name a)" '{range .status.conditions[?(@.type=="Finished")]}{.status} {.reason}{end}'

# ---------------------------------------------------------------------
# 2. stopPolicy: Hold keeps, HoldAndDrain evicts, None requeues.

mkjob c 1 1 1
expect_eventually "c runs" "$T" "false 1" state c
expect "Hold" 0 kubectl patch clusterqueue evict-cq --type=merge \
	-p '{"spec":{"stopPolicy":"Hold"}}' -o jsonpath='{.spec.stopPolicy}' <<<'Hold'
match_eventually "Hold: evict-cq inactive" "$T" '^False Stopped' active_of evict-cq
expect "Hold: c keeps running" 0 state c <<<'false 1'
expect "Hold: c not evicted" 0 wlc c Evicted <<<''
expect "HoldAndDrain" 0 kubectl patch clusterqueue evict-cq --type=merge \
	-p '{"spec":{"stopPolicy":"HoldAndDrain"}}' -o jsonpath='{.spec.stopPolicy}' <<<'HoldAndDrain'
invariants "c's eviction in flight"
expect_eventually "HoldAndDrain: c evicted" "$T" \
	"True ClusterQueueStopped: The ClusterQueue is stopped" wlc c Evicted
expect_eventually "HoldAndDrain: c suspended" "$T" "true 0" state c
expect_eventually "HoldAndDrain: c's reservation cleared" "$T" \
	"False ClusterQueueStopped: The ClusterQueue is stopped" wlc c Requeued
match_eventually "HoldAndDrain: c pending, its queue inactive" "$T" \
	'^False (Pending|Inadmissible)' wlc c QuotaReserved
invariants "c drained"
expect "kueue_evicted_workloads_total{reason=ClusterQueueStopped} counts c" 0 \
	evicted_metric ClusterQueueStopped <<<'1'
expect "None" 0 kubectl patch clusterqueue evict-cq --type=merge \
	-p '{"spec":{"stopPolicy":"None"}}' -o jsonpath='{.spec.stopPolicy}' <<<'None'
expect_eventually "restarted: c requeued" "$T" \
	"True ClusterQueueRestarted: The ClusterQueue was restarted after being stopped" wlc c Requeued
expect_eventually "restarted: c runs again" "$T" "false 1" state c
expect "LocalQueue HoldAndDrain" 0 kubectl patch localqueue evict-queue --type=merge \
	-p '{"spec":{"stopPolicy":"HoldAndDrain"}}' -o jsonpath='{.spec.stopPolicy}' <<<'HoldAndDrain'
invariants "c's LocalQueue eviction in flight"
expect_eventually "LocalQueue HoldAndDrain: c evicted" "$T" \
	"True LocalQueueStopped: The LocalQueue is stopped" wlc c Evicted
expect_eventually "LocalQueue HoldAndDrain: c suspended" "$T" "true 0" state c
invariants "c drained by its LocalQueue"
expect "LocalQueue None" 0 kubectl patch localqueue evict-queue --type=merge \
	-p '{"spec":{"stopPolicy":"None"}}' -o jsonpath='{.spec.stopPolicy}' <<<'None'
expect_eventually "LocalQueue restarted: c requeued" "$T" \
	"True LocalQueueRestarted: The LocalQueue was restarted after being stopped" wlc c Requeued
expect_eventually "LocalQueue restarted: c runs again" "$T" "false 1" state c
invariants "c runs again"

# ---------------------------------------------------------------------
# 3. A Job is compared with its Workload.

# c holds 1 cpu of 2; e takes the other; d (parallelism 1 of 4) waits.
mkjob e 1 1 1
expect_eventually "e runs (the queue is full)" "$T" "false 1" state e
mkjob d 1 4 1
match_eventually "d pending" "$T" '^False Pending' wlc d QuotaReserved
expect "raise d's parallelism to 4 while pending" 0 \
	kubectl patch job d --type=merge -p '{"spec":{"parallelism":4}}' -o jsonpath='{.spec.parallelism}' <<<'4'
expect_eventually "d's Workload follows: count 4" "$T" "4 " count_of d
release e
match_eventually "d (4 cpu) pending on a 2-cpu queue" "$T" \
	'^False Pending: couldn.t assign flavors' wlc d QuotaReserved
expect "d still suspended" 0 state d <<<'true 0'
invariants "d waits"
expect "lower d's parallelism to 1" 0 \
	kubectl patch job d --type=merge -p '{"spec":{"parallelism":1}}' -o jsonpath='{.spec.parallelism}' <<<'1'
expect_eventually "d's Workload follows: count 1, admitted" "$T" "1 1" count_of d
expect_eventually "d runs one pod" "$T" "false 1" state d
invariants "d runs"
# The Job controller creates the extra pod at once, before the manager
# can stop the Job (Kueue has the same interval): the invariants are
# checked once it stopped.
expect "raise running d's parallelism to 2" 0 \
	kubectl patch job d --type=merge -p '{"spec":{"parallelism":2}}' -o jsonpath='{.spec.parallelism}' <<<'2'
expect_eventually "d stopped (No matching Workload), queued again for 2" "$T" "2 " count_of d
invariants "d replaced"
release c
expect_eventually "d runs 2 pods on its new Workload" "$T" "false 2" state d
expect "d's new Workload admitted for 2" 0 count_of d <<<'2 2'
invariants "d runs 2"
dwl=$(wl_name d)
expect "d's Job events" 0 sh -c "kubectl get events -n default --field-selector involvedObject.name=d -o jsonpath='{range .items[*]}{.reason}: {.message}{\"\\n\"}{end}' | grep -E '^(Stopped|DeletedWorkload)' | sort -u" <<ENDEV
DeletedWorkload: Deleted not matching Workload: default/$dwl
Stopped: No matching Workload
ENDEV
release d
mkjob f 4 4 1
match_eventually "f (4 cpu) pending" "$T" '^False Pending' wlc f QuotaReserved
expect "patch f's Workload count to 1 by hand" 0 \
	kubectl patch workload "$(wl_name f)" --type=json \
	-p '[{"op":"replace","path":"/spec/podSets/0/count","value":1}]' \
	-o jsonpath='{.spec.podSets[0].count}' <<<'1'
expect_eventually "f's Workload put back to count 4" "$T" "4 " count_of f
sleep 2
expect "f never starts" 0 state f <<<'true 0'
invariants "f waits"

# ---------------------------------------------------------------------
# 4. A suspended Job whose queue label goes: its Workload goes too.

fwl=$(wl_name f)
expect "remove f's queue label" 0 \
	kubectl label job f kueue.x-k8s.io/queue-name- <<<'job.batch/f unlabeled'
expect_eventually "f's Workload deleted" "$T" "" \
	sh -c "kubectl get workload $fwl -n default -o name 2>/dev/null"
invariants "f unmanaged"

devcluster_stop
e2e_finish
