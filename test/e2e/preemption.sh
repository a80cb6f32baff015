#!/usr/bin/env bash
# preemption: Kueue's classical preemption end to end (kueue-scheduler.md
# §2.3, §4; kueue-api.md §3.3-3.4, §7.4, §7.5, §12.7) with batch/v1 Jobs
# through the real webhook, WorkloadPriorityClasses and the real kubectl.
# Each scenario has its own namespace sN, flavors and queues
# (manifests/preemption/setup.yaml):
#  1. withinClusterQueue LowerPriority: a high-priority Job preempts a
#     running low-priority one: the victim's Evicted/Preempted/Requeued
#     conditions with Kueue's message (the preemptor's Workload and Job
#     UIDs, both paths), schedulingStats.evictions, the Preempted and
#     EvictedDueToPreempted events, its Job suspended with the nodeSelector
#     of the flavor's nodeLabels removed again, the preemptor admitted only
#     once the victim released its quota (its pending message, when written
#     before, "... Pending the preemption of 1 workload(s)"), `kubectl
#     describe` and `kubectl get workloads`, the victim admitted again when
#     the preemptor ends; two preemptors created together with one victim;
#  2. withinClusterQueue Never: nothing is preempted;
#  3. LowerOrNewerEqualPriority: an equal-priority workload created
#     earlier preempts a newer one; a newer one never preempts an older;
#  4. reclaimWithinCohort in a flat cohort: Any reclaims a borrower of
#     any priority, Never waits, LowerPriority reclaims only the
#     lower-priority borrower (the policy patched on the live queue);
#  5. reclaim through a two-level tree of Cohort objects;
#  6. borrowWithinCohort LowerPriority with maxPriorityThreshold: a
#     borrowing preemptor takes a workload at or below the threshold
#     (InCohortReclaimWhileBorrowing), never one above it;
#  7. two flavors: with Kueue's default flavorFungibility (whenCanPreempt
#     TryNextFlavor, BorrowingOverPreemption) the preemptor skips the first
#     flavor, where it would preempt in its own queue, for the second,
#     where it reclaims lent quota;
#  9. the manager's kueue_preempted_workloads_total and
#     kueue_evicted_workloads_total{reason="Preempted"} for all of the above
#     (before the restarts, which reset the counters);
#  8. the manager killed (SIGKILL) as soon as the victim is Evicted, and
#     stopped (SIGTERM) right after the preemptor was created: after the
#     restart the victim was preempted once (one eviction counted, at most
#     one Preempted event: the recorder is best effort), it is not lost
#     (admitted again later) and the preemptor gets in.
#
# "At no moment may the sum of reserved quota exceed what the queues allow":
# besides cueue-invariants at the observation points (as evict.sh), the
# suite records a watch on Workloads and one on Jobs for its whole run;
# history.py merges them by resourceVersion into every state the cluster
# went through (the victim still holding quota while its Job stops
# included) and runs cueue-invariants on each ("history" checks). From the
# same record: each victim held its quota until its Job was suspended with
# no active pods, at each of its evictions, and each preemptor's pending
# messages before its admission said "Pending the preemption of K
# workload(s)".
#
# The devserver's job runner completes a Job --job-runtime after it is
# unsuspended; the suite sets that to 1h and ends Jobs with `release`.
# MANAGER_BIN / DEVSERVER_BIN / INVARIANTS_BIN test other binaries.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init preemption

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
history_py=$e2e_dir/history.py
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
# How long (tenths of a second, wall time) a change may take to show.
T=${PREEMPTION_WAIT:-300}
cd "$e2e_dir/manifests/preemption" || exit 1

on_exit_stop_clusters "$cluster"

# ---------------------------------------------------------------------
# Helpers (jp, cond_line, wait_until, expect_eventually, match_eventually,
# invariants, wl_name, release and metrics_url are lib.bash's)

# mkjobs NS QUEUE PRIORITY-CLASS CPU NAME...: creates the Jobs with one
# kubectl create (suspended by the webhook; one check each) and caches
# their uids and their Workloads' names (wl_name's cache, filled from the
# create's answer).
declare -A job_uid=()
mkjobs() {
	local ns=$1 q=$2 pc=$3 cpu=$4 n files=() line h
	shift 4
	for n in "$@"; do
		sed -e "s/NAME/$n/" -e "s/NS/$ns/g" -e "s/QUEUE/$q/" -e "s/PRIO/$pc/" \
			-e "s/CPU/$cpu/" job.tmpl >"$work/$ns-$n.yaml"
		files+=(-f "$work/$ns-$n.yaml")
	done
	run_cmd kubectl create "${files[@]}" \
		-o jsonpath='{.metadata.name} {.spec.suspend} {.metadata.uid}{"\n"}'
	for n in "$@"; do
		line=$(grep "^$n true " <<<"$out")
		if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
			pass "$ns: create job $n (queue $q, priority $pc, cpu $cpu): suspended"
			job_uid[$ns/$n]=${line##* }
			h=$(printf 'Job\nbatch\n%s\n%s' "$n" "${line##* }" | sha1sum | cut -c1-5)
			wl_cache[$ns/$n]=job-$n-$h
		else
			fail "$ns: create job $n: suspended" "exit $rc: $out"
		fi
	done
}
# mkjob NS NAME QUEUE PRIORITY-CLASS CPU: one Job.
mkjob() {
	mkjobs "$1" "$3" "$4" "$5" "$2"
}
# job_of NS JOB: "suspend active-pods nodeSelector" (status.active is
# omitted at 0).
job_of() {
	local s
	s=$(jp "job/$2" '{.spec.suspend} {.status.active} {.spec.template.spec.nodeSelector}' "$1")
	[[ $s == *' '' '* ]] && s=${s/  / 0 }
	echo "$s"
}
# state NS JOB: "suspend active-pods".
state() {
	local s
	s=$(job_of "$@")
	echo "${s% *}"
}
# wlc NS JOB TYPE: the Job's Workload's condition TYPE, "status reason: message".
wlc() {
	cond_line "workload/$(wl_name "$2" "$1")" "$3" "$1"
}
# flavor_of NS JOB: "QuotaReserved-status flavor" of the Job's Workload.
flavor_of() {
	jp "workload/$(wl_name "$2" "$1")" '{.status.conditions[?(@.type=="QuotaReserved")].status} {.status.admission.podSetAssignments[0].flavors.cpu}' "$1" |
		sed 's/ *$//'
}
# EVICTIONS: status.schedulingStats.evictions as "reason/cause=count ...".
EVICTIONS='{range .status.schedulingStats.evictions[*]}{.reason}/{.underlyingCause}={.count} {end}'
# evictions_of NS JOB: the Job's Workload's EVICTIONS.
evictions_of() {
	jp "workload/$(wl_name "$2" "$1")" "$EVICTIONS" "$1" | sed 's/ *$//'
}
# rel NS JOB...: the job runner completes them now.
rel() {
	local ns=$1
	shift
	release -n "$ns" "$@"
}
# pmsg NS PREEMPTOR-JOB WHY PREEMPTOR-PATH VICTIM-PATH: Kueue's preemption
# message (the preemptor's Workload and Job UIDs), once the Workload exists.
pmsg() {
	local w
	w=$(wl_name "$2" "$1")
	wait_until "$T" kubectl get workload "$w" -n "$1"
	echo "Preempted to accommodate a workload (UID: $(jp "workload/$w" '{.metadata.uid}' "$1"), JobUID: ${job_uid[$1/$2]:-?}) due to $3; preemptor path: $4; preemptee path: $5"
}
# events_of NS JOB REASON: "count: message" of each event REASON of the
# Job's Workload.
events_of() {
	kubectl get events -n "$1" -o jsonpath="{range .items[?(@.involvedObject.name==\"$(wl_name "$2" "$1")\")]}{.reason}|{.count}: {.message}{\"\\n\"}{end}" 2>&1 |
		sed -n "s/^$3|//p"
}
# not_evicted NS JOB: the Job runs and its Workload was never evicted.
not_evicted() {
	echo "$(state "$1" "$2") $(jp "workload/$(wl_name "$2" "$1")" "evicted:[{.status.conditions[?(@.type==\"Evicted\")].status}] stats:[$EVICTIONS]" "$1")"
}
# wait_running NS JOB: one check, the Job comes to run one pod.
wait_running() {
	expect_eventually "$1: $2 runs" "$T" "false 1" state "$1" "$2"
}
# same NAME WANT GOT: one check, GOT is WANT.
same() {
	if [ "$2" == "$3" ]; then
		pass "$1"
	else
		fail "$1" "want: $2
got:  $3"
	fi
}
# check_victim NS JOB WHY MESSAGE COUNT [NOINV]: the victim's Evicted and
# Preempted conditions, cueue-invariants once the eviction is written
# (unless NOINV; the history check sees the states in between), its Job stopped, the reservation cleared and requeued,
# COUNT evictions counted.
check_victim() {
	local ns=$1 j=$2 v
	expect_eventually "$ns: $j evicted: Evicted=True Preempted" "$T" \
		"True Preempted: $4" wlc "$ns" "$j" Evicted
	[ -n "${6:-}" ] || invariants "$ns: $j's eviction written (in flight or done)"
	expect_eventually "$ns: $j suspended, its pods gone" "$T" "true 0" state "$ns" "$j"
	expect_eventually "$ns: $j requeued: Requeued=True Preempted" "$T" \
		"True Preempted: $4" wlc "$ns" "$j" Requeued
	v=$(jp "workload/$(wl_name "$j" "$ns")" "{range .status.conditions[?(@.type==\"Preempted\")]}{.status} {.reason}: {.message}{end}
{.status.conditions[?(@.type==\"QuotaReserved\")].status} {.status.conditions[?(@.type==\"QuotaReserved\")].reason} [{.status.admission}]
$EVICTIONS" "$ns")
	same "$ns: $j Preempted=True $3" "True $3: $4" "$(sed -n 1p <<<"$v")"
	same "$ns: $j's reservation cleared: QuotaReserved=False Pending, no admission" \
		"False Pending []" "$(sed -n 2p <<<"$v")"
	same "$ns: $j schedulingStats.evictions" "Preempted/=$5 " "$(sed -n 3p <<<"$v")"
	victims[$ns/$(wl_name "$j" "$ns")=$j]=$5
}
# The victims whose evictions history checks: NS/WORKLOAD=JOB -> count.
declare -A victims=()
# The preemptors whose pending messages history_pending checks.
preemptors=()
# preemptor NS JOB N: JOB's Workload issued N preemptions; checked later.
preemptor() {
	preemptors+=("$1/$(wl_name "$2" "$1")=$3")
}

# history_victims: one check per victim recorded since the last history
# check: at each of its evictions it held its quota when Evicted=True was
# written, and gave it back only once its Job was suspended with no
# active pods (kueue-scheduler.md §5).
history_victims() {
	local v want line keys
	[ "${#victims[@]}" -gt 0 ] || return
	mapfile -t keys < <(printf '%s\n' "${!victims[@]}" | sort)
	run_cmd python3 "$history_py" stops "$work/wl.stream" "$work/job.stream" "${keys[@]}"
	for v in "${keys[@]}"; do
		want=$(printf 'held+stopped %.0s' $(seq 1 "${victims[$v]}"))
		line=$(grep -F "${v%=*}: " <<<"$out")
		same "history: ${v%=*}: quota held until its Job stopped, at each of its ${victims[$v]} eviction(s)" \
			"${v%=*}: ${want% }" "$line"
	done
	victims=()
}

# History: every state the Workload and Job watches saw, checked by
# history.py (see the top). hist_rv is the resourceVersion checked up to.
hist_rv=0
hist_seq=0
mkdir -p "$work/hist"
# last_rv STREAM: the resourceVersion of the stream's last complete event.
last_rv() {
	awk '/}$/ { l = $0 } END {
		if (match(l, /"resourceVersion":"[0-9]+"/))
			print substr(l, RSTART + 19, RLENGTH - 20)
		else
			print 0 }' "$1"
}
# hist_sync: prints the resourceVersion up to which both streams are
# complete: a marker of each kind is touched and both streams are waited for.
hist_sync() {
	local rw rj lw lj
	hist_seq=$((hist_seq + 1))
	rw=$(kubectl annotate --overwrite workload mark -n marks cueue.dev/mark="$hist_seq" \
		-o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
	rj=$(kubectl annotate --overwrite job mark -n marks cueue.dev/mark="$hist_seq" \
		-o jsonpath='{.metadata.resourceVersion}' 2>/dev/null)
	[ -n "$rw" ] && [ -n "$rj" ] || return 1
	hist_past() {
		lw=$(last_rv "$work/wl.stream")
		lj=$(last_rv "$work/job.stream")
		[ "$lw" -ge "$rw" ] && [ "$lj" -ge "$rj" ]
	}
	wait_until "$T" hist_past || return 1
	hist_past
	echo $((lw < lj ? lw : lj))
}
# history LABEL: one check: every state since the last history check
# passes cueue-invariants; then one check per preemptor recorded since:
# each pending message it had before its reservation says it waits for
# K of its N victims (K < N once some were evicted: they count as done,
# kueue-scheduler.md §4.7). The manager writes a new workload's first
# pending condition after a grace, so a preemptor admitted at once may
# have none.
history() {
	local cut p n line msgs
	if ! kill -0 "$wl_watch" 2>/dev/null || ! kill -0 "$job_watch" 2>/dev/null; then
		fail "history: $1" "a watch ended: $(tail -3 "$work/wl.stream" "$work/job.stream")"
		return
	fi
	if ! cut=$(hist_sync); then
		fail "history: $1" "the watches did not deliver the markers"
		return
	fi
	kubectl get clusterqueues,cohorts,resourceflavors,localqueues -A -o json \
		>"$work/queues.json" 2>"$work/queues.err"
	run_cmd python3 "$history_py" check "$inv_bin" "$work/queues.json" \
		"$work/wl.stream" "$work/job.stream" "$hist_rv" "$cut" "$work/hist"
	if [ "$rc" -eq 0 ]; then
		pass "history: $1: every state passes cueue-invariants (${out#states })"
	else
		fail "history: $1: every state passes cueue-invariants" "$out"
	fi
	hist_rv=$cut
	history_victims
	[ "${#preemptors[@]}" -gt 0 ] || return
	run_cmd python3 "$history_py" pending "$work/wl.stream" "${preemptors[@]%=*}"
	for p in "${preemptors[@]}"; do
		n=${p##*=} p=${p%=*}
		line=$(grep -F "$p: " <<<"$out")
		msgs=${line#"$p: "}
		if [ -z "$line" ] || [ "$msgs" = "?" ]; then
			fail "history: $p waited for its $n victim(s)" "no reservation in the watch: $line"
		elif [ -z "$msgs" ]; then
			pass "history: $p waited for its $n victim(s) (admitted before its pending condition was due)"
		elif ! printf '%s\n' "${msgs// | /$'\n'}" |
			grep -Ev "\. Pending the preemption of [1-$n] workload\(s\)$" | grep -q .; then
			pass "history: $p waited for its $n victim(s) with \"... Pending the preemption of K workload(s)\" (K <= $n)"
		else
			fail "history: $p waited for its $n victim(s) with \"... Pending the preemption of K workload(s)\" (K <= $n)" "$msgs"
		fi
	done
	preemptors=()
}
# scrape: the manager's /metrics into $work/metrics.txt.
scrape() {
	curl -sf --max-time 5 "$(metrics_url)/metrics" >"$work/metrics.txt"
}
# metric NAME LABEL-ERE: the sum of the scraped series NAME whose labels
# match LABEL-ERE (0 when none).
metric() {
	awk -v n="$1" -v l="$2" 'BEGIN { v = 0 }
			index($1, n "{") == 1 && $1 ~ l { v += $2 }
			END { print v }' "$work/metrics.txt"
}
# preempted_series: every kueue_preempted_workloads_total series, sorted.
preempted_series() {
	grep '^kueue_preempted_workloads_total{' "$work/metrics.txt" | sort
}

job_cluster_start

# The recorders start before anything exists; kubectl prints one event a line.
e2e_bg kubectl get workloads -A -w --output-watch-events -o json \
	>"$work/wl.stream" 2>"$work/wl.err"
wl_watch=$e2e_bg_pid
e2e_bg kubectl get jobs.batch -A -w --output-watch-events -o json \
	>"$work/job.stream" 2>"$work/job.err"
job_watch=$e2e_bg_pid

run_cmd kubectl apply -f setup.yaml
if [ "$rc" -eq 0 ]; then
	pass "apply the priority classes, namespaces, flavors, cohorts and queues"
else
	fail "apply the setup" "$out"
	e2e_finish
fi

# ---------------------------------------------------------------------
# 1. withinClusterQueue LowerPriority.

mkjob s1 low q low 2
expect_eventually "s1: low runs with rf-1's nodeLabels" "$T" \
	'false 1 {"cueue.dev/pool":"pool-1","cueue.dev/team":"s1"}' job_of s1 low
mkjob s1 high q high 2
msg=$(pmsg s1 high "prioritization in the ClusterQueue" /cq-1 /cq-1)
check_victim s1 low InClusterQueue "$msg" 1
expect "s1: low's nodeSelector restored" 0 job_of s1 low <<<'true 0 {"cueue.dev/team":"s1"}'
expect_eventually "s1: high admitted once low released its quota" "$T" \
	'false 1 {"cueue.dev/pool":"pool-1","cueue.dev/team":"s1"}' job_of s1 high
preemptor s1 high 1
expect_eventually "s1: low's Preempted event (with both priorities)" "$T" \
	"1: $msg; preemptor effective priority: 1000 (base: 1000, boost: 0); preemptee effective priority: 100 (base: 100, boost: 0)" \
	events_of s1 low Preempted
expect_eventually "s1: low's EvictedDueToPreempted event" "$T" "1: $msg" \
	events_of s1 low EvictedDueToPreempted
lw=$(wl_name low s1)
match "s1: kubectl describe workload: the Preempted condition" 0 \
	"^    Reason: +InClusterQueue$" kubectl describe workload "$lw" -n s1
match "s1: kubectl describe workload: the Preempted event" 0 \
	"^  Normal +Preempted +[0-9a-z]+ +kueue-admission +Preempted to accommodate a workload \(UID: <uid>, JobUID: <uid>\) due to prioritization in the ClusterQueue; preemptor path: /cq-1; preemptee path: /cq-1; preemptor effective priority: 1000" \
	kubectl describe workload "$lw" -n s1
expect_table "s1: kubectl get workloads" 0 kubectl get workloads -n s1 <<EOF
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
$(wl_name high s1) | q | cq-1 | True |  | <age>
$lw | q |  | False |  | <age>
EOF
rel s1 high
expect_eventually "s1: low admitted again when high ends" "$T" \
	'false 1 {"cueue.dev/pool":"pool-1","cueue.dev/team":"s1"}' job_of s1 low
expect_eventually "s1: low's Evicted flipped: False QuotaReserved" 10 \
	"False QuotaReserved: Previously: $msg" wlc s1 low Evicted
expect_eventually "s1: low's Preempted flipped: False QuotaReserved" 10 \
	"False QuotaReserved: Previously: $msg" wlc s1 low Preempted
expect "s1: low evicted once" 0 evictions_of s1 low <<<'Preempted/=1'
# Two preemptors with one victim, created together (likely one cycle):
# low is preempted once more, by one of them; both fit once it is gone.
mkjobs s1 q high 1 h1 h2
match_eventually "s1: low evicted again, by h1 or h2" "$T" \
	'^True Preempted: Preempted to accommodate a workload \(UID: <uid>, JobUID: <uid>\) due to prioritization in the ClusterQueue; preemptor path: /cq-1; preemptee path: /cq-1$' \
	wlc s1 low Evicted
msg=$(wlc s1 low Evicted)
msg=${msg#True Preempted: }
check_victim s1 low InClusterQueue "$msg" 2
wait_running s1 h1
wait_running s1 h2
preemptor s1 h1 1
preemptor s1 h2 1

# ---------------------------------------------------------------------
# 2. withinClusterQueue Never.

mkjob s2 low q low 2
wait_running s2 low
mkjob s2 high q high 2
expect_eventually "s2: high waits, no preemption" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor rf-2, 2 more needed" \
	wlc s2 high QuotaReserved
expect "s2: low never evicted" 0 not_evicted s2 low <<<'false 1 evicted:[] stats:[]'

# ---------------------------------------------------------------------
# 3. LowerOrNewerEqualPriority: "old" waits for LocalQueue "late", which
# does not exist yet, while the newer "new" (same priority, created a
# second later at least) runs; once "late" exists, old preempts new.

mkjob s3 old late mid 2
match_eventually "s3: old inadmissible (no LocalQueue late)" "$T" \
	"^False Inadmissible: LocalQueue late doesn't exist" wlc s3 old QuotaReserved
old_ts=$(date -d "$(jp "workload/$(wl_name old s3)" '{.metadata.creationTimestamp}' s3)" +%s)
# Kueue compares the queue-order timestamps at second precision.
past() {
	[ "$(date +%s)" -gt "$1" ]
}
wait_until 20 past "$old_ts"
mkjob s3 new q mid 2
wait_running s3 new
expect "s3: create LocalQueue late" 0 kubectl create -f late.yaml -o name \
	<<<'localqueue.kueue.x-k8s.io/late'
msg=$(pmsg s3 old "prioritization in the ClusterQueue" /cq-3 /cq-3)
check_victim s3 new InClusterQueue "$msg" 1
wait_running s3 old
preemptor s3 old 1
expect_eventually "s3: new (requeued: newer than old) waits, no preemption" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor rf-3, 2 more needed" \
	wlc s3 new QuotaReserved
mkjob s3 newest q mid 2
expect_eventually "s3: newest waits, no preemption" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor rf-3, 2 more needed" \
	wlc s3 newest QuotaReserved
expect "s3: old never evicted" 0 not_evicted s3 old <<<'false 1 evicted:[] stats:[]'
expect "s3: new evicted once" 0 evictions_of s3 new <<<'Preempted/=1'

# ---------------------------------------------------------------------
# 4. reclaimWithinCohort in the flat cohort co-4: cq-4b (nominal 0)
# borrows cq-4a's 2 cpu.

mkjob s4 bh qb high 1
mkjob s4 bl qb low 1
wait_running s4 bh
wait_running s4 bl
# Any: a low-priority workload of the lender reclaims both, the
# high-priority borrower included.
mkjob s4 a1 qa low 2
msg=$(pmsg s4 a1 "reclamation within the cohort" /co-4/cq-4a /co-4/cq-4b)
check_victim s4 bh InCohortReclamation "$msg" 1
check_victim s4 bl InCohortReclamation "$msg" 1 noinv
wait_running s4 a1
preemptor s4 a1 2
# Never: the borrowers come back and a2 waits.
expect "s4: cq-4a reclaimWithinCohort Never" 0 kubectl patch clusterqueue cq-4a --type=merge \
	-p '{"spec":{"preemption":{"reclaimWithinCohort":"Never"}}}' \
	-o jsonpath='{.spec.preemption.reclaimWithinCohort}' <<<'Never'
rel s4 a1
wait_running s4 bh
wait_running s4 bl
mkjob s4 a2 qa mid 1
expect_eventually "s4: Never: a2 waits, no reclaim" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor rf-4, 1 more needed" \
	wlc s4 a2 QuotaReserved
expect "s4: Never: bh not evicted again" 0 evictions_of s4 bh <<<'Preempted/=1'
expect "s4: Never: bl not evicted again" 0 evictions_of s4 bl <<<'Preempted/=1'
# LowerPriority, patched on the live queue (Kueue requeues the queue's
# inadmissible workloads on a spec change): a2 (mid) reclaims bl (low)
# only, never bh (high).
expect "s4: cq-4a reclaimWithinCohort LowerPriority" 0 kubectl patch clusterqueue cq-4a --type=merge \
	-p '{"spec":{"preemption":{"reclaimWithinCohort":"LowerPriority"}}}' \
	-o jsonpath='{.spec.preemption.reclaimWithinCohort}' <<<'LowerPriority'
msg=$(pmsg s4 a2 "reclamation within the cohort" /co-4/cq-4a /co-4/cq-4b)
check_victim s4 bl InCohortReclamation "$msg" 2
wait_running s4 a2
expect "s4: LowerPriority: bh (high) kept" 0 evictions_of s4 bh <<<'Preempted/=1'
expect "s4: LowerPriority: bh runs" 0 state s4 bh <<<'false 1'

# ---------------------------------------------------------------------
# 5. Hierarchical cohorts: cq-5a (left-5) reclaims what cq-5b (right-5)
# borrowed through root-5.

mkjob s5 b1 qb high 2
wait_running s5 b1
mkjob s5 a1 qa low 2
msg=$(pmsg s5 a1 "reclamation within the cohort" /root-5/left-5/cq-5a /root-5/right-5/cq-5b)
check_victim s5 b1 InCohortReclamation "$msg" 1
wait_running s5 a1
preemptor s5 a1 1

# ---------------------------------------------------------------------
# 6. borrowWithinCohort LowerPriority, maxPriorityThreshold 200: cq-6b
# borrows cq-6l's 2 cpu for bl (low, 100) and bm (mid, 300); cq-6a
# (nominal 0) borrows for a high-priority preemptor.

mkjob s6 bl qb low 1
mkjob s6 bm qb mid 1
wait_running s6 bl
wait_running s6 bm
mkjob s6 ah qa high 1
msg=$(pmsg s6 ah "reclamation within the cohort while borrowing" /co-6/cq-6a /co-6/cq-6b)
check_victim s6 bl InCohortReclaimWhileBorrowing "$msg" 1
wait_running s6 ah
preemptor s6 ah 1
mkjob s6 ah2 qa high 1
expect_eventually "s6: ah2 waits: bm is above the threshold" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor rf-6, 1 more needed" \
	wlc s6 ah2 QuotaReserved
expect "s6: bm never evicted" 0 not_evicted s6 bm <<<'false 1 evicted:[] stats:[]'

# ---------------------------------------------------------------------
# 7. Two flavors: al fills cq-7a's rf-7x; bl borrows cq-7a's rf-7y. ah
# could preempt al in rf-7x or reclaim bl in rf-7y: reclaim ranks above
# preempt, and whenCanPreempt TryNextFlavor looks on, so rf-7y.

mkjob s7 al qa low 2
expect_eventually "s7: al admitted in rf-7x" "$T" "True rf-7x" flavor_of s7 al
mkjob s7 bl qb low 2
expect_eventually "s7: bl admitted in rf-7y (borrowing)" "$T" "True rf-7y" flavor_of s7 bl
wait_running s7 al
wait_running s7 bl
mkjob s7 ah qa high 2
msg=$(pmsg s7 ah "reclamation within the cohort" /co-7/cq-7a /co-7/cq-7b)
check_victim s7 bl InCohortReclamation "$msg" 1
preemptor s7 ah 1
expect_eventually "s7: ah admitted in rf-7y" "$T" "True rf-7y" flavor_of s7 ah
wait_running s7 ah
expect "s7: al never evicted" 0 not_evicted s7 al <<<'false 1 evicted:[] stats:[]'
history "scenarios 1-7"

# ---------------------------------------------------------------------
# 9. Metrics, before the restarts reset them.

if scrape; then
	pass "metrics: scraped $(metrics_url)/metrics"
else
	fail "metrics: scrape $(metrics_url)/metrics" "$(tail -5 "$cluster/manager.log")"
fi
expect "metrics: kueue_preempted_workloads_total by preempting queue and reason" 0 \
	preempted_series <<'EOF'
kueue_preempted_workloads_total{preempting_cluster_queue="cq-1",reason="InClusterQueue"} 2
kueue_preempted_workloads_total{preempting_cluster_queue="cq-3",reason="InClusterQueue"} 1
kueue_preempted_workloads_total{preempting_cluster_queue="cq-4a",reason="InCohortReclamation"} 3
kueue_preempted_workloads_total{preempting_cluster_queue="cq-5a",reason="InCohortReclamation"} 1
kueue_preempted_workloads_total{preempting_cluster_queue="cq-6a",reason="InCohortReclaimWhileBorrowing"} 1
kueue_preempted_workloads_total{preempting_cluster_queue="cq-7a",reason="InCohortReclamation"} 1
EOF
for cq_n in cq-1=2 cq-2=0 cq-3=1 cq-4a=0 cq-4b=3 cq-5b=1 cq-6b=1 cq-7a=0 cq-7b=1; do
	expect "metrics: kueue_evicted_workloads_total{cluster_queue=\"${cq_n%=*}\",reason=\"Preempted\"}" 0 \
		metric kueue_evicted_workloads_total "cluster_queue=\"${cq_n%=*}\".*reason=\"Preempted\"|reason=\"Preempted\".*cluster_queue=\"${cq_n%=*}\"" \
		<<<"${cq_n#*=}"
done

# ---------------------------------------------------------------------
# 8. Restarts between "preemption issued" and "preemptor admitted".

# restart_check V LOW HIGH: after the restart: HIGH admitted, LOW
# preempted once and requeued, then admitted again when HIGH ends.
restart_check() {
	local v=$1 lo=$2 hi=$3 m
	m=$(pmsg s8 "$hi" "prioritization in the ClusterQueue" /cq-8 /cq-8)
	expect_eventually "s8 $v: $hi admitted after the restart" "$T" "false 1" state s8 "$hi"
	preemptor s8 "$hi" 1
	victims[s8/$(wl_name "$lo" s8)=$lo]=1
	expect_eventually "s8 $v: $lo requeued: Requeued=True Preempted" "$T" \
		"True Preempted: $m" wlc s8 "$lo" Requeued
	expect "s8 $v: $lo suspended" 0 state s8 "$lo" <<<'true 0'
	expect "s8 $v: $lo preempted once (schedulingStats)" 0 evictions_of s8 "$lo" <<<'Preempted/=1'
	rel s8 "$hi"
	expect_eventually "s8 $v: $lo admitted again (not lost)" "$T" "false 1" state s8 "$lo"
	expect "s8 $v: $lo still preempted once" 0 evictions_of s8 "$lo" <<<'Preempted/=1'
	# a manager killed right after the eviction may not have sent its Event
	ev=$(events_of s8 "$lo" Preempted)
	if [ -z "$ev" ] || [ "$ev" = "1: $m; preemptor effective priority: 1000 (base: 1000, boost: 0); preemptee effective priority: 100 (base: 100, boost: 0)" ]; then
		pass "s8 $v: at most one Preempted event for $lo ($([ -n "$ev" ] && echo one || echo none))"
	else
		fail "s8 $v: at most one Preempted event for $lo" "$ev"
	fi
	rel s8 "$lo"
	expect_eventually "s8 $v: $lo finished" "$T" "True" \
		jp "workload/$(wl_name "$lo" s8)" '{.status.conditions[?(@.type=="Finished")].status}' s8
}

# kill_on_evicted WL OFFSET: SIGKILL to the manager as soon as the
# Workload watch, after byte OFFSET, shows WL with Evicted=True Preempted
# (kubectl prints an object's keys sorted), polled every 10 ms. The
# manager and the job runner usually finish the eviction (Job stopped,
# reservation cleared, preemptor admitted) within those milliseconds all
# the same: the check says in which state the manager died. Status 1 if
# not seen within T.
kill_on_evicted() {
	local end=$(($(now_ms) + T * 100))
	while [ "$(now_ms)" -lt "$end" ]; do
		if tail -c +"$(($2 + 1))" "$work/wl.stream" | grep -F "\"name\":\"$1\"" |
			grep -qF '"reason":"Preempted","status":"True","type":"Evicted"'; then
			kill -KILL "$(cat "$cluster/manager.pid")"
			return
		fi
		sleep 0.01
	done
	return 1
}
# wl_brief NS JOB: "QuotaReserved-status Evicted-status" of the Job's Workload.
wl_brief() {
	jp "workload/$(wl_name "$2" "$1")" 'QuotaReserved={.status.conditions[?(@.type=="QuotaReserved")].status} Evicted={.status.conditions[?(@.type=="Evicted")].status}' "$1"
}

# a: SIGKILL as soon as the victim's Evicted=True is written.
mkjob s8 lowa q low 2
wait_running s8 lowa
off=$(stat -c %s "$work/wl.stream")
e2e_bg kill_on_evicted "$(wl_name lowa s8)" "$off"
killer=$e2e_bg_pid
mkjob s8 higha q high 2
if wait "$killer"; then
	pass "s8 a: lowa Evicted=True written; manager killed (SIGKILL) at once (then: lowa $(wl_brief s8 lowa), higha $(wl_brief s8 higha))"
else
	fail "s8 a: lowa Evicted=True written" "$(wlc s8 lowa Evicted)"
fi
invariants "s8 a: manager down right after the eviction"
run_cmd "$devcluster" start "$cluster"
if [ "$rc" -eq 0 ]; then pass "s8 a: manager started again"; else fail "s8 a: manager started again" "$out"; fi
restart_check a lowa higha
scrape
expect "s8 a: the new manager preempted nothing in cq-8" 0 \
	metric kueue_preempted_workloads_total 'preempting_cluster_queue="cq-8"' <<<'0'

# b: SIGTERM right after the preemptor was created (the preemption may
# or may not have been issued before the manager stopped).
mkjob s8 lowb q low 2
wait_running s8 lowb
mkjob s8 highb q high 2
run_cmd "$devcluster" stop-manager "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "s8 b: manager stopped (then: lowb $(wl_brief s8 lowb), highb $(wl_brief s8 highb))"
else
	fail "s8 b: manager stopped" "$out"
fi
invariants "s8 b: manager down"
run_cmd "$devcluster" start "$cluster"
if [ "$rc" -eq 0 ]; then pass "s8 b: manager started again"; else fail "s8 b: manager started again" "$out"; fi
restart_check b lowb highb

# c: the victim's pod stays active once its Job is suspended until the
# suite lets it go (devserver annotation cueue.dev/stop-delay, 10 min),
# so the restart lands mid-eviction: SIGKILL as soon as Evicted=True is
# written; after the restart the Job is suspended with its pods still
# active, the victim keeps its quota and the preemptor waits, until the
# pods are gone (the stop delay cut to 1 ms once that has been checked,
# rather than a fixed delay the suite would wait out).
mkjob s8 lowc q low 2
wait_running s8 lowc
run_cmd kubectl annotate -n s8 job lowc cueue.dev/stop-delay=10m
[ "$rc" -eq 0 ] || fail "s8 c: annotate lowc with a stop delay" "$out"
off=$(stat -c %s "$work/wl.stream")
e2e_bg kill_on_evicted "$(wl_name lowc s8)" "$off"
killer=$e2e_bg_pid
mkjob s8 highc q high 2
if wait "$killer"; then
	pass "s8 c: lowc Evicted=True written; manager killed (SIGKILL) at once (then: lowc $(wl_brief s8 lowc), highc $(wl_brief s8 highc))"
else
	fail "s8 c: lowc Evicted=True written" "$(wlc s8 lowc Evicted)"
fi
invariants "s8 c: manager down mid-eviction"
expect "s8 c: manager down: lowc keeps its quota" 0 \
	jp "workload/$(wl_name lowc s8)" '{.status.conditions[?(@.type=="QuotaReserved")].status}' s8 <<<'True'
run_cmd "$devcluster" start "$cluster"
if [ "$rc" -eq 0 ]; then pass "s8 c: manager started again"; else fail "s8 c: manager started again" "$out"; fi
expect_eventually "s8 c: lowc suspended, its pod still active" "$T" "true 1" state s8 lowc
expect "s8 c: lowc keeps its quota while its pods run" 0 \
	jp "workload/$(wl_name lowc s8)" '{.status.conditions[?(@.type=="QuotaReserved")].status}' s8 <<<'True'
expect "s8 c: highc not admitted while lowc's pods run" 0 state s8 highc <<<'true 0'
invariants "s8 c: after the restart, the victim's pods still running"
run_cmd kubectl annotate --overwrite -n s8 job lowc cueue.dev/stop-delay=1ms
[ "$rc" -eq 0 ] || fail "s8 c: end lowc's stop delay" "$out"
restart_check c lowc highc
history "the restarts"

# ---------------------------------------------------------------------

invariants "the end, statuses agree" --status
kill "$wl_watch" "$job_watch" 2>/dev/null
devcluster_stop
e2e_finish
