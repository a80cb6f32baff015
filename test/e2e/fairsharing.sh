#!/usr/bin/env bash
# fairsharing: Kueue's Fair Sharing end to end (kueue-scheduler.md §2.5,
# §4.5, §4.6; kueue-api.md §3, §5, §13, §14) with batch/v1 Jobs through
# the real webhook and the real kubectl, on one devcluster whose manager
# reads a Configuration written by the suite: first v1beta2 with
# `fairSharing: {preemptionStrategies: [LessThanOrEqualToFinalShare,
# LessThanInitialShare]}` (Kueue's documented default), then, restarted
# for scenario 6, v1beta1 with `fairSharing: {enable: true,
# preemptionStrategies: [LessThanOrEqualToFinalShare]}`. Each scenario
# has its own namespace sN, cohort and queues (manifests/fairsharing/;
# scenario 4's at kueue.x-k8s.io/v1beta1); every Job asks for 1 cpu
# unless said otherwise, and all have priority 0. A share below is a
# queue's (or Cohort's) borrowed cpu in thousandths of what its parent
# can lend, divided by its weight, rounded up, as
# status.fairSharing.weightedShare and the v0.14 gauges report it.
#  1. convergence: cq-1a, cq-1b, cq-1c (weights 1 by default, 1, 2;
#     nominal 0) borrow the 8 cpu of Cohort co-1's own resourceGroups.
#     cq-1a takes all 8 first (share 1000); then work arrives for cq-1b
#     and cq-1c and fair preemptions (InCohortFairSharing) bring the
#     usage to 2:2:4, shares 250 each (the Cohort object's 0: a root
#     borrows from nobody), in the statuses and the gauges
#     kueue_cluster_queue_weighted_share / kueue_cohort_weighted_share;
#     more work arrives while the running generation finishes: 2:2:4
#     again;
#  2. fair preemption and its reasons: cq-2a (nominal 1) borrows all of
#     the lender cq-2l's 4 cpu and cq-2b's 1 (6 Jobs, share 834); cq-2b
#     (nominal 1) sends Jobs one at a time: the first, within its nominal
#     quota, reclaims one (InCohortReclamation, "due to reclamation within
#     the cohort"), the next two take one each (InCohortFairSharing, "due
#     to Fair Sharing within the cohort; preemptor path: /co-2/cq-2b;
#     preemptee path: /co-2/cq-2a"), each with the preemptor's UIDs; the
#     fourth would leave cq-2b above cq-2a (500 against 334 before, 167
#     after): nothing is preempted, it waits;
#  3. weight 0: cq-3z (weight 0) borrows all of Cohort co-3's 4 cpu while
#     cq-3n is idle (its weightedShare is MaxInt64); cq-3n's 4 Jobs
#     preempt all of cq-3z's, which waits without preempting anything;
#     when two of cq-3n's end cq-3z gets their cpu, and loses it first
#     when cq-3n wants it again;
#  4. hierarchy: Cohorts important-org (weight 0.75, cq-4i) and
#     regular-org (weight 0.25, cq-4r and cq-4t) under root-4 (8 cpu), as
#     on Kueue's Cohort page: cq-4i takes all 8, then the regular org's
#     queues get 1 each and cq-4i keeps 6: the sub-cohorts' shares (1000
#     each) decide, not the queues' (cq-4r at 125 never preempts cq-4i at
#     750); the victims' paths name the sub-cohorts; statuses read at
#     v1beta1 too;
#  5. and 6. the strategies: cq-Na holds 4 of cq-Nl's 5 cpu in one Job
#     (share 800), cq-Nb 1 (200); cq-Nb's second Job would end at 400,
#     against cq-Na's 800 before and 0 after: LessThanInitialShare (the
#     second default strategy) preempts in s5; after the restart, with
#     LessThanOrEqualToFinalShare alone, nothing is preempted in s6, the
#     restart itself preempted nothing elsewhere, the gauges are back,
#     and the manager said nothing about fairSharing with either file.
#  7. admission fair sharing (both Configurations also carry
#     admissionFairSharing: half life 1m, sampled every second): cq-7 (1
#     cpu, UsageBasedAdmissionFairSharing) with LocalQueues heavy and
#     light; heavy runs h1 and h2 one after the other, and its
#     status.fairSharing.admissionFairSharingStatus.consumedResources
#     grows; the restart of scenario 6 keeps that history (read back from
#     the status, not reset); then h3 (heavy) and, later, l1 (light) wait
#     behind the second: once it ends l1 goes first, although h3 is
#     older.
# Also: kueue_preempted_workloads_total by preempting queue and reason
# and kueue_evicted_workloads_total agree with the victims'
# schedulingStats; the queues of scenarios 1-4 stay as they converged
# until the end.
#
# As preemption.sh: cueue-invariants at the observation points, and a
# Workload watch and a Job watch recorded for the whole run, merged by
# history.py into every state the cluster went through, each checked by
# cueue-invariants (in the background, while the suite goes on); from the
# same record, each victim held its quota until its Job stopped, at each
# of its evictions.
#
# The devserver's job runner completes a Job --job-runtime after it is
# unsuspended; the suite sets that to 1h and ends Jobs with `release`.
# MANAGER_BIN / DEVSERVER_BIN / INVARIANTS_BIN test other binaries.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init fairsharing

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
history_py=$e2e_dir/history.py
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
# How long (tenths of a second, wall time) a change may take to show.
T=${FAIRSHARING_WAIT:-300}
MAXINT64=9223372036854775807
cd "$e2e_dir/manifests/fairsharing" || exit 1

on_exit_stop_clusters "$cluster"

# The two Configurations: the shipped file with a fairSharing section,
# at v1beta2 and (its apiVersion changed) at v1beta1.
shipped=$e2e_top/manifests/config/controller_manager_config.yaml
{
	cat "$shipped"
	printf '%s\n' 'fairSharing:' \
		'  preemptionStrategies: [LessThanOrEqualToFinalShare, LessThanInitialShare]' \
		'admissionFairSharing:' '  usageHalfLifeTime: 1m' \
		'  usageSamplingInterval: 1s'
} >"$work/config-v1beta2.yaml"
{
	sed 's#^apiVersion: config.kueue.x-k8s.io/v1beta2$#apiVersion: config.kueue.x-k8s.io/v1beta1#' "$shipped"
	printf '%s\n' 'fairSharing:' '  enable: true' \
		'  preemptionStrategies: [LessThanOrEqualToFinalShare]' \
		'admissionFairSharing:' '  usageHalfLifeTime: 1m' \
		'  usageSamplingInterval: 1s'
} >"$work/config-v1beta1.yaml"
export DEVCLUSTER_CONFIG=$work/config-v1beta2.yaml

# ---------------------------------------------------------------------
# Helpers (jp, cond_line, wait_until, expect_eventually, match_eventually,
# invariants, wl_name, release and metrics_url are lib.bash's)

# add_jobs NS QUEUE CPU NAME...: Job manifests for create_jobs.
new_jobs=()
add_jobs() {
	local ns=$1 q=$2 cpu=$3 n
	shift 3
	for n in "$@"; do
		sed -e "s/NAME/$n/" -e "s/NS/$ns/" -e "s/QUEUE/$q/" \
			-e "s/CPU/$cpu/" job.tmpl >"$work/$ns-$n.yaml"
		new_jobs+=("$ns/$n")
	done
}
# create_jobs LABEL: creates the Jobs add_jobs wrote with one kubectl
# create; one check that each was suspended by the webhook. Their
# Workloads' names go into wl_name's cache, from the create's answer.
create_jobs() {
	local j files=() line h bad=
	for j in "${new_jobs[@]}"; do
		files+=(-f "$work/${j%/*}-${j#*/}.yaml")
	done
	run_cmd kubectl create "${files[@]}" \
		-o jsonpath='{.metadata.namespace}/{.metadata.name} {.spec.suspend} {.metadata.uid}{"\n"}'
	for j in "${new_jobs[@]}"; do
		line=$(grep "^$j true " <<<"$out")
		if [ "$rc" -eq 0 ] && [ -n "$line" ]; then
			h=$(printf 'Job\nbatch\n%s\n%s' "${j#*/}" "${line##* }" | sha1sum | cut -c1-5)
			wl_cache[$j]=job-${j#*/}-$h
		else
			bad+=" $j"
		fi
	done
	if [ -z "$bad" ]; then
		pass "create $1: suspended"
	else
		fail "create $1: suspended" "not suspended:$bad; exit $rc: $out"
	fi
	new_jobs=()
}
# seqnames PREFIX FROM TO: PREFIXFROM ... PREFIXTO.
seqnames() {
	local i
	for i in $(seq "$2" "$3"); do
		printf '%s%d ' "$1" "$i"
	done
}
# CQS: per ClusterQueue "NAME: RESERVING/PENDING cpu=USAGE share=SHARE"
# (reservingWorkloads, pendingWorkloads, the admitted cpu of flavorsUsage
# and fairSharing.weightedShare).
CQS='{range .items[*]}{.metadata.name}: {.status.reservingWorkloads}/{.status.pendingWorkloads} cpu={.status.flavorsUsage[0].resources[0].total} share={.status.fairSharing.weightedShare}{"\n"}{end}'
# cqs CQ...: their CQS lines, sorted.
cqs() {
	kubectl get clusterqueues "$@" -o jsonpath="$CQS" 2>&1 | sort
}
# cohort_shares CO...: "NAME=weightedShare ..." of Cohort objects, sorted.
cohort_shares() {
	kubectl get cohorts "$@" -o jsonpath='{range .items[*]}{.metadata.name}={.status.fairSharing.weightedShare}{"\n"}{end}' 2>&1 |
		sort | paste -sd' ' -
}
# running NS: the Jobs of NS that run (not suspended, one active pod),
# sorted, on one line.
running() {
	kubectl get jobs -n "$1" -o jsonpath='{range .items[*]}{.metadata.name} {.spec.suspend} {.status.active}{"\n"}{end}' 2>&1 |
		awk '$2 == "false" && $3 == 1 { print $1 }' | sort -V | paste -sd' ' -
}
# letters NS: running's names without their numbers.
letters() {
	running "$1" | tr -d '0-9'
}
# WLS: per Workload "JOB|EVICTIONS|PREEMPTED-STATUS|PREEMPTED-REASON",
# EVICTIONS the count of its schedulingStats.evictions by preemption
# (empty when none).
WLS='{range .items[*]}{.metadata.ownerReferences[0].name}|{.status.schedulingStats.evictions[?(@.reason=="Preempted")].count}|{.status.conditions[?(@.type=="Preempted")].status}|{.status.conditions[?(@.type=="Preempted")].reason}{"\n"}{end}'
wls() {
	kubectl get workloads -n "$1" -o jsonpath="$WLS" 2>&1
}
# preempted NS: "JOB REASON" of each Workload of NS whose Preempted
# condition is True, sorted.
preempted() {
	wls "$1" | awk -F'|' '$3 == "True" { print $1, $4 }' | sort -V
}
# victims_by_queue NS [Q]: "Q REASON: N", N the Workloads with
# Preempted=True for REASON whose Job's name starts with Q (the suite
# names a Job after its LocalQueue); only Q's when given.
victims_by_queue() {
	wls "$1" | awk -F'|' '$3 == "True" { n[substr($1, 1, 1) " " $4]++ }
		END { for (k in n) print k ": " n[k] }' | sort |
		grep "^${2:-.}"
}
# victim_reasons NS: the reasons of the Preempted=True conditions in NS,
# each once.
victim_reasons() {
	wls "$1" | awk -F'|' '$3 == "True" { print $4 }' | sort -u
}
# evictions NS [Q]: the sum of the evictions by preemption of NS's
# Workloads (of queue Q's Jobs only, when given).
evictions() {
	wls "$1" | awk -F'|' -v q="${2:-}" \
		'$2 ~ /^[0-9]+$/ && index($1, q) == 1 { n += $2 } END { print n + 0 }'
}
# wlc NS JOB TYPE: the Job's Workload's condition TYPE, "status reason: message".
wlc() {
	cond_line "workload/$(wl_name "$2" "$1")" "$3" "$1"
}
# pmsg NS PREEMPTOR-JOB WHY PREEMPTOR-PATH VICTIM-PATH: Kueue's
# preemption message (the preemptor's Workload and Job UIDs).
pmsg() {
	echo "Preempted to accommodate a workload (UID: $(jp "workload/$(wl_name "$2" "$1")" '{.metadata.uid}' "$1"), JobUID: $(jp "job/$2" '{.metadata.uid}' "$1")) due to $3; preemptor path: $4; preemptee path: $5"
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
# quiet: no eviction in flight: no suspended Job has a pod left, and no
# Workload has Evicted=True while it holds quota.
quiet() {
	local j w
	j=$(kubectl get jobs -A -o jsonpath='{range .items[*]}{.spec.suspend}/{.status.active}{"\n"}{end}' 2>&1) &&
		w=$(kubectl get workloads -A -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Evicted")].status}/{.status.conditions[?(@.type=="QuotaReserved")].status}{"\n"}{end}' 2>&1) &&
		! grep -Eq '^true/[1-9]' <<<"$j" && ! grep -qx 'True/True' <<<"$w"
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
# preempted_by CQ: "REASON COUNT" of each kueue_preempted_workloads_total
# series of preempting queue CQ.
preempted_by() {
	grep "^kueue_preempted_workloads_total{.*preempting_cluster_queue=\"$1\"" "$work/metrics.txt" |
		sed -E 's/.*reason="([A-Za-z]+)".* /\1 /' | sort
}
# gauges_are X=V...: the scraped kueue_cluster_queue_weighted_share of
# ClusterQueue X (kueue_cohort_weighted_share of Cohort C for
# cohort:C=V) is the number V (9.223372036854776e+18 is MaxInt64); the
# ones that are not, on stdout.
gauges_are() {
	awk -v w="$*" 'BEGIN {
		n = split(w, a, " ")
		for (i = 1; i <= n; i++) {
			k = substr(a[i], 1, index(a[i], "=") - 1)
			if (k ~ /^cohort:/)
				s = "kueue_cohort_weighted_share{cohort=\"" substr(k, 8) "\"}"
			else
				s = "kueue_cluster_queue_weighted_share{cluster_queue=\"" k "\"}"
			want[s] = substr(a[i], index(a[i], "=") + 1)
		}
	}
	$1 in want { got[$1] = $2 }
	END {
		for (s in want)
			if (!(s in got) || got[s] + 0 != want[s] + 0) {
				print s " want " want[s] " got " (s in got ? got[s] : "none")
				bad = 1
			}
		exit bad
	}' "$work/metrics.txt"
}
# gauges_eventually X=V...: one check: scraped until gauges_are.
gauges_eventually() {
	scrape_gauges() {
		scrape && gauges_are "$@"
	}
	if wait_until "$T" scrape_gauges "$@"; then
		pass "metrics: weighted share gauges: $*"
	else
		fail "metrics: weighted share gauges: $*" "$(gauges_are "$@")"
	fi
}
# metric_table: from the scrape, "preempted Q REASON N" for
# kueue_preempted_workloads_total by preempting queue and reason, and
# "evicted Q N" for kueue_evicted_workloads_total{reason="Preempted"} by
# queue, N > 0 only; cq-1b and cq-1c count as one ("cq-1b|cq-1c"), so do
# cq-4r and cq-4t.
metric_table() {
	awk 'function q(x) {
		sub(/^cq-1[bc]$/, "cq-1b|cq-1c", x)
		sub(/^cq-4[rt]$/, "cq-4r|cq-4t", x)
		return x
	}
	function lab(s, k) {
		if (!match(s, "[{,]" k "=\"[^\"]*\""))
			return ""
		return substr(s, RSTART + length(k) + 3, RLENGTH - length(k) - 4)
	}
	/^kueue_preempted_workloads_total\{/ {
		n["preempted " q(lab($1, "preempting_cluster_queue")) " " lab($1, "reason")] += $2
	}
	/^kueue_evicted_workloads_total\{/ && lab($1, "reason") == "Preempted" {
		n["evicted " q(lab($1, "cluster_queue"))] += $2
	}
	END { for (k in n) if (n[k] > 0) print k, n[k] }' "$work/metrics.txt" | sort
}
# config_warnings FROM: the keys of the manager's Configuration warnings
# logged after byte FROM of manager.log, one a line.
config_warnings() {
	tail -c +"$(($1 + 1))" "$cluster/manager.log" |
		sed -n 's/.*level=warn component=config msg="[^"]*:[0-9]*:[0-9]*: \([^:]*\): .*/\1/p'
}

# History (as preemption.sh): hist_sync writes marker number $hist_seq of
# each kind and prints the resourceVersion up to which both watch streams
# are complete.
hist_seq=0
last_rv() {
	awk '/}$/ { l = $0 } END {
		if (match(l, /"resourceVersion":"[0-9]+"/))
			print substr(l, RSTART + 19, RLENGTH - 20)
		else
			print 0 }' "$1"
}
hist_sync() {
	local rw rj lw lj
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
# history_start: history.py check, in the background, on every state
# recorded since the last call (its result in $work/histN.out, status in
# .rc): the states are checked while the suite goes on.
hist_cut=0
hist_runs=()
history_start() {
	local from=$hist_cut
	hist_seq=$((hist_seq + 1))
	if ! kill -0 "$wl_watch" 2>/dev/null || ! kill -0 "$job_watch" 2>/dev/null; then
		fail "history: the watches run" "a watch ended: $(tail -3 "$work/wl.stream" "$work/job.stream")"
		return
	fi
	if ! hist_cut=$(hist_sync); then
		fail "history: the watches deliver" "the markers did not come"
		return
	fi
	kubectl get clusterqueues,cohorts,resourceflavors,localqueues -A -o json \
		>"$work/queues$hist_seq.json" 2>"$work/queues.err"
	mkdir -p "$work/hist$hist_seq"
	e2e_bg sh -c 'python3 "$@" >"$0.out" 2>&1; echo $? >"$0.rc"' \
		"$work/hist$hist_seq" "$history_py" check "$inv_bin" \
		"$work/queues$hist_seq.json" "$work/wl.stream" "$work/job.stream" \
		"$from" "$hist_cut" "$work/hist$hist_seq"
	hist_runs+=("$e2e_bg_pid:$work/hist$hist_seq:$from-$hist_cut")
}
# history_finish: the background checks' results (one check each); then
# one check per victim (a Workload evicted by preemption) up to the cut: at
# each of its evictions it held its quota when Evicted=True was written
# and gave it back only once its Job was suspended with no active pods.
history_finish() {
	local keys=() k want r f
	for r in "${hist_runs[@]}"; do
		f=${r#*:}
		f=${f%:*}
		wait "${r%%:*}"
		if [ "$(cat "$f.rc")" = 0 ]; then
			pass "history: every state of resourceVersions ${r##*:} passes cueue-invariants ($(sed 's/^states //' "$f.out"))"
		else
			fail "history: every state of resourceVersions ${r##*:} passes cueue-invariants" "$(cat "$f.out")"
		fi
	done
	mapfile -t keys < <(kubectl get workloads -A -o jsonpath='{range .items[*]}{.metadata.namespace}/{.metadata.name}={.metadata.ownerReferences[0].name}:{.status.schedulingStats.evictions[?(@.reason=="Preempted")].count}{"\n"}{end}' |
		grep -v ':$' | sort)
	if [ "${#keys[@]}" -eq 0 ]; then
		fail "history: the victims" "no Workload was preempted"
		return
	fi
	run_cmd python3 "$history_py" stops "$work/wl.stream" "$work/job.stream" "${keys[@]%:*}"
	want=$(for k in "${keys[@]}"; do
		printf '%s:' "${k%%=*}"
		printf ' held+stopped%.0s' $(seq 1 "${k##*:}")
		echo
	done)
	if [ "$rc" -eq 0 ] && [ "$out" == "$want" ]; then
		pass "history: each of the ${#keys[@]} victims held its quota until its Job stopped, at each of its evictions"
	else
		fail "history: each victim held its quota until its Job stopped, at each of its evictions" \
			"exit $rc; diff want got:
$(diff <(printf '%s\n' "$want") <(printf '%s\n' "$out"))"
	fi
}

job_cluster_start

e2e_bg kubectl get workloads -A -w --output-watch-events -o json \
	>"$work/wl.stream" 2>"$work/wl.err"
wl_watch=$e2e_bg_pid
e2e_bg kubectl get jobs.batch -A -w --output-watch-events -o json \
	>"$work/job.stream" 2>"$work/job.err"
job_watch=$e2e_bg_pid

expect "the manager says nothing about fairSharing (v1beta2)" 0 \
	config_warnings 0 <<'EOF'
controller.groupKindConcurrency
EOF
run_cmd kubectl apply -f setup.yaml
if [ "$rc" -eq 0 ]; then
	pass "apply the v1beta2 flavor, namespaces, cohorts and queues"
else
	fail "apply setup.yaml" "$out"
	e2e_finish
fi
run_cmd kubectl apply -f hierarchy-v1beta1.yaml
if [ "$rc" -eq 0 ] && grep -q '^cohort.kueue.x-k8s.io/regular-org created$' <<<"$out"; then
	pass "apply the v1beta1 Cohort tree and queues (scenario 4)"
else
	fail "apply hierarchy-v1beta1.yaml" "$out"
fi
# Kueue's conversion (Go) writes a converted Quantity canonically
# ("750m"); cueue's converts the JSON and keeps the text: the same value.
readback() {
	kubectl get cohorts/important-org cohorts/regular-org clusterqueues/cq-4r clusterqueues/cq-3z \
		-o jsonpath='{range .items[*]}{.metadata.name}: {.spec.parentName}{.spec.cohortName} {.spec.fairSharing.weight}{"\n"}{end}' 2>&1 |
		sed -e 's/ 750m$/ 0.75/' -e 's/ 250m$/ 0.25/'
}
expect "read back at v1beta2: weights 0.75 and 0.25, parents, cohortName, weight 0" 0 \
	readback <<'EOF'
important-org: root-4 0.75
regular-org: root-4 0.25
cq-4r: regular-org
cq-3z: co-3 0
EOF

# ---------------------------------------------------------------------
# The first arrivals: each cohort filled by one queue while the others
# there are idle.

add_jobs s1 qa 1 $(seqnames a 1 10)
add_jobs s2 qa 1 $(seqnames a 1 6)
add_jobs s3 qz 1 $(seqnames z 1 4)
add_jobs s4 qi 1 $(seqnames i 1 8)
add_jobs s5 qa 4 a1
add_jobs s6 qa 4 a1
create_jobs "the first arrivals (s1 a1-a10, s2 a1-a6, s3 z1-z4, s4 i1-i8, s5 and s6 a1 with 4 cpu)"
add_jobs s5 qb 1 b1
add_jobs s6 qb 1 b1
create_jobs "s5 and s6 b1"

expect_eventually "s1: cq-1a borrows all 8 cpu (share 1000), 2 wait" "$T" \
	"cq-1a: 8/2 cpu=8 share=1000
cq-1b: 0/0 cpu=0 share=0
cq-1c: 0/0 cpu=0 share=0" cqs cq-1a cq-1b cq-1c
# cq-2a may borrow cq-2b's unused nominal quota too: all 6 cpu, 5 of
# them borrowed, of the 6 the cohort can lend.
expect_eventually "s2: cq-2a uses all 6 cpu (share 834)" "$T" \
	"cq-2a: 6/0 cpu=6 share=834
cq-2b: 0/0 cpu=0 share=0" cqs cq-2a cq-2b
expect_eventually "s3: weight 0: cq-3z borrows all 4 cpu while cq-3n is idle (share MaxInt64)" "$T" \
	"cq-3n: 0/0 cpu=0 share=0
cq-3z: 4/0 cpu=4 share=$MAXINT64" cqs cq-3z cq-3n
expect_eventually "s4: cq-4i borrows all 8 cpu (share 1000)" "$T" \
	"cq-4i: 8/0 cpu=8 share=1000
cq-4r: 0/0 cpu=0 share=0
cq-4t: 0/0 cpu=0 share=0" cqs cq-4i cq-4r cq-4t
expect_eventually "s5, s6: a1 (4 of 5 cpu, share 800) and b1 (share 200) run" "$T" \
	"cq-5a: 1/0 cpu=4 share=800
cq-5b: 1/0 cpu=1 share=200
cq-6a: 1/0 cpu=4 share=800
cq-6b: 1/0 cpu=1 share=200" cqs cq-5a cq-5b cq-6a cq-6b
# important-org: 8 of 8 borrowed, weight 0.75: 1333.3.
expect_eventually "Cohort weightedShare: important-org 1334, regular-org 0, roots co-1, co-3, root-4 0" "$T" \
	"co-1=0 co-3=0 important-org=1334 regular-org=0 root-4=0" \
	cohort_shares co-1 co-3 important-org regular-org root-4
invariants "the first arrivals in" --status
if scrape; then
	pass "metrics: scraped $(metrics_url)/metrics"
else
	fail "metrics: scrape $(metrics_url)/metrics" "$(tail -5 "$cluster/manager.log")"
fi
gauges_eventually cq-1a=1000 cq-1b=0 cq-2a=834 cq-3z=$MAXINT64 cq-3n=0 \
	cq-4i=1000 cq-4r=0 cq-5a=800 cohort:important-org=1334 \
	cohort:regular-org=0 cohort:co-1=0 cohort:co-3=0

# 7. heavy's history: h1 runs and ends, h2 runs (and keeps cq-7 full).
# One kubectl create makes both Jobs, so which one the manager turns
# into a Workload first (and so admits first) is the order their watch
# events came in: a loaded run saw h2 first. The history does not care
# which: one runs and ends, then the other runs.
add_jobs s7 heavy 1 h1 h2
create_jobs "s7 h1, h2 (heavy)"
s7_one_runs() {
	case $(running s7) in h1 | h2) return 0 ;; *) return 1 ;; esac
}
if wait_until "$T" s7_one_runs; then
	s7_first=$(running s7)
	pass "s7: $s7_first runs, the other waits"
else
	s7_first=h1
	fail "s7: one of h1, h2 runs, the other waits" "running: $(running s7)"
fi
s7_second=h2
[ "$s7_first" = h2 ] && s7_second=h1
release -n s7 "$s7_first"
expect_eventually "s7: $s7_second runs" "$T" "$s7_second" running s7
# s7_cpu LQ: its consumedResources cpu in milli-units (0 when none).
s7_cpu() {
	local q
	q=$(jp "localqueue/$1" '{.status.fairSharing.admissionFairSharingStatus.consumedResources.cpu}' s7)
	case $q in
	'') echo 0 ;;
	*m) echo "${q%m}" ;;
	*) echo $((q * 1000)) ;;
	esac
}
s7_grown() {
	[ "$(s7_cpu heavy)" -ge "$1" ]
}
if wait_until "$T" s7_grown 50; then
	pass "s7: heavy's consumedResources grow while it runs ($(s7_cpu heavy)m cpu)"
else
	fail "s7: heavy's consumedResources grow while it runs" \
		"$(kubectl get localqueue -n s7 heavy -o jsonpath='{.status}' 2>&1)"
fi
match_eventually "s7: light's status: no history, weightedShare 0, a lastUpdate" "$T" \
	'^\{"admissionFairSharingStatus":\{"consumedResources":\{\},"lastUpdate":"<ts>"\},"weightedShare":0\}$' \
	jp localqueue/light '{.status.fairSharing}' s7

# ---------------------------------------------------------------------
# The second arrivals (all but scenario 2's), at once.

add_jobs s1 qb 1 $(seqnames b 1 4)
add_jobs s1 qc 1 $(seqnames c 1 6)
add_jobs s3 qn 1 $(seqnames n 1 4)
add_jobs s4 qr 1 r1 r2
add_jobs s4 qt 1 t1 t2
add_jobs s5 qb 1 b2
create_jobs "the second arrivals (s1 b1-b4 and c1-c6, s3 n1-n4, s4 r1, r2, t1, t2, s5 b2)"

# 2. While those converge: cq-2b's Jobs one at a time.
# s2_step JOB WANT-CQS: JOB created; the queues come to be WANT; v is the
# Job of cq-2a newly Preempted.
s2_victims=
s2_step() {
	add_jobs s2 qb 1 "$1"
	create_jobs "s2 $1"
	expect_eventually "s2: $1 admitted: cq-2a and cq-2b as wanted" "$T" "$2" \
		cqs cq-2a cq-2b
	# shellcheck disable=SC2086 # one name a word
	v=$(preempted s2 | awk '{ print $1 }' |
		grep -vxF -f <(printf '%s\n' $s2_victims none) | paste -sd' ' -)
	s2_victims+=" $v"
}
s2_step b1 "cq-2a: 5/1 cpu=5 share=667
cq-2b: 1/0 cpu=1 share=0"
same "s2: b1 (within cq-2b's nominal quota) preempted $v: InCohortReclamation" \
	"True InCohortReclamation: $(pmsg s2 b1 "reclamation within the cohort" /co-2/cq-2b /co-2/cq-2a)" \
	"$(wlc s2 "$v" Preempted)"
s2_step b2 "cq-2a: 4/2 cpu=4 share=500
cq-2b: 2/0 cpu=2 share=167"
same "s2: b2 (borrowing: 167 <= cq-2a's 500 after) preempted $v: InCohortFairSharing" \
	"True InCohortFairSharing: $(pmsg s2 b2 "Fair Sharing within the cohort" /co-2/cq-2b /co-2/cq-2a)" \
	"$(wlc s2 "$v" Preempted)"
s2_step b3 "cq-2a: 3/3 cpu=3 share=334
cq-2b: 3/0 cpu=3 share=334"
same "s2: b3 (334 <= cq-2a's 334 after) preempted $v: InCohortFairSharing" \
	"True InCohortFairSharing: $(pmsg s2 b3 "Fair Sharing within the cohort" /co-2/cq-2b /co-2/cq-2a)" \
	"$(wlc s2 "$v" Preempted)"
add_jobs s2 qb 1 b4
create_jobs "s2 b4"
match_eventually "s2: b4 (500 against cq-2a's 334 before, 167 after) waits" "$T" \
	'^False Pending: ' wlc s2 b4 QuotaReserved
expect "s2: nothing more preempted: cq-2a keeps 3" 0 cqs cq-2a cq-2b <<'EOF'
cq-2a: 3/3 cpu=3 share=334
cq-2b: 3/1 cpu=3 share=334
EOF
expect "s2: 3 evictions, one each" 0 evictions s2 <<<'3'

# 1. Convergence: from 8:0:0, fair preemptions until no queue with one
# more Job would be at most another's share without one.
expect_eventually "s1: usage converges to 2:2:4 (weights 1:1:2), shares 250" "$T" \
	"cq-1a: 2/8 cpu=2 share=250
cq-1b: 2/2 cpu=2 share=250
cq-1c: 4/2 cpu=4 share=250" cqs cq-1a cq-1b cq-1c
# From 8:0:0 cq-1a lost 6 at least; on the way a Job of cq-1b may have
# been preempted too (at 3:3:2 cq-1c's share is the lowest, and cq-1a and
# cq-1b tie).
match_eventually "s1: 6 or more of cq-1a's Jobs preempted" "$T" \
	'^a InCohortFairSharing: ([6-9]|1[0-9])$' victims_by_queue s1 a
expect "s1: every victim by InCohortFairSharing" 0 victim_reasons s1 \
	<<<'InCohortFairSharing'

# 3. Weight 0: cq-3n's Jobs take everything back.
expect_eventually "s3: cq-3n's 4 Jobs preempt all 4 of cq-3z's (share 1000; cq-3z starved)" "$T" \
	"cq-3n: 4/0 cpu=4 share=1000
cq-3z: 0/4 cpu=0 share=0" cqs cq-3z cq-3n
same "s3: each of cq-3z's Jobs preempted once, by InCohortFairSharing" \
	"z1 InCohortFairSharing z2 InCohortFairSharing z3 InCohortFairSharing z4 InCohortFairSharing evictions=4" \
	"$(preempted s3 | paste -sd' ' -) evictions=$(evictions s3)"
match "s3: z1's message: Fair Sharing, preemptor /co-3/cq-3n" 0 \
	'^True InCohortFairSharing: Preempted to accommodate a workload \(UID: <uid>, JobUID: <uid>\) due to Fair Sharing within the cohort; preemptor path: /co-3/cq-3n; preemptee path: /co-3/cq-3z$' \
	wlc s3 z1 Preempted

# 4. The hierarchy: the sub-cohorts' shares decide.
expect_eventually "s4: cq-4i keeps 6, cq-4r and cq-4t get 1 each" "$T" \
	"cq-4i: 6/2 cpu=6 share=750
cq-4r: 1/1 cpu=1 share=125
cq-4t: 1/1 cpu=1 share=125" cqs cq-4i cq-4r cq-4t
expect_eventually "s4: Cohort weightedShare: important-org 1000, regular-org 1000 (weights 0.75, 0.25)" "$T" \
	"important-org=1000 regular-org=1000 root-4=0" cohort_shares important-org regular-org root-4
expect "s4: 2 of cq-4i's Jobs preempted (InCohortFairSharing)" 0 \
	victims_by_queue s4 i <<<'i InCohortFairSharing: 2'
# every victim's message names the sub-cohorts on both paths (a Job of
# the regular org may have been preempted by the other queue there)
s4msgs() {
	kubectl get workloads -n s4 -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Preempted")].status} {.status.conditions[?(@.type=="Preempted")].message}{"\n"}{end}' |
		sed -n 's/^True //p' | norm |
		sed -E 's#^Preempted to accommodate a workload \(UID: <uid>, JobUID: <uid>\) due to Fair Sharing within the cohort; preemptor path: /root-4/regular-org/cq-4[rt]; preemptee path: /root-4/(important-org/cq-4i|regular-org/cq-4[rt])$#ok#' |
		sort | uniq -c | sed 's/^ *//'
}
match "s4: the victims' messages: preemptor /root-4/regular-org/cq-4[rt], preemptee /root-4/important-org/cq-4i" 0 \
	'^[2-9] ok$' s4msgs
expect "s4: read at v1beta1: cq-4r (cohort regular-org, 125) and regular-org (1000)" 0 \
	kubectl get clusterqueues.v1beta1.kueue.x-k8s.io/cq-4r cohorts.v1beta1.kueue.x-k8s.io/regular-org \
	-o jsonpath='{range .items[*]}{.kind} {.metadata.name}: {.spec.cohort} {.status.fairSharing.weightedShare}{"\n"}{end}' <<'EOF'
Warning: This version is deprecated. Use v1beta2 instead.
ClusterQueue cq-4r: regular-org 125
Cohort regular-org:  1000
EOF

# 5. Both strategies: b2 ends at 400 against cq-5a's 800 before, 0
# after: LessThanInitialShare preempts.
expect_eventually "s5: b2 preempts a1 (LessThanInitialShare): cq-5a 0, cq-5b 400" "$T" \
	"cq-5a: 0/1 cpu=0 share=0
cq-5b: 2/0 cpu=2 share=400" cqs cq-5a cq-5b
same "s5: a1's Preempted condition: InCohortFairSharing, by b2" \
	"True InCohortFairSharing: $(pmsg s5 b2 "Fair Sharing within the cohort" /co-5/cq-5b /co-5/cq-5a)" \
	"$(wlc s5 a1 Preempted)"

wait_until "$T" quiet
invariants "the second arrivals, converged" --status
history_start

# ---------------------------------------------------------------------
# More work: s1's running generation ends while more arrives; two of
# s3's cq-3n Jobs end.

add_jobs s1 qb 1 b5 b6
add_jobs s1 qc 1 c7 c8
create_jobs "s1 b5, b6, c7, c8"
expect_eventually "s1: the running generation: 2 of cq-1a, 2 of cq-1b, 4 of cq-1c" "$T" \
	"a a b b c c c c" letters s1
gen1=$(running s1)
# shellcheck disable=SC2086 # a Job name a word
release -n s1 $gen1
release -n s3 n1 n2
expect_eventually "s1: the next generation: 2:2:4 again (cq-1c's backlog used up)" "$T" \
	"cq-1a: 2/6 cpu=2 share=250
cq-1b: 2/2 cpu=2 share=250
cq-1c: 4/0 cpu=4 share=250" cqs cq-1a cq-1b cq-1c
expect_eventually "s3: n1, n2 done: cq-3z gets their 2 cpu (what nobody else wants)" "$T" \
	"cq-3n: 2/0 cpu=2 share=500
cq-3z: 2/2 cpu=2 share=$MAXINT64" cqs cq-3z cq-3n
add_jobs s3 qn 1 n5
create_jobs "s3 n5"
expect_eventually "s3: n5 preempts one of cq-3z's again" "$T" \
	"cq-3n: 3/0 cpu=3 share=750
cq-3z: 1/3 cpu=1 share=$MAXINT64" cqs cq-3z cq-3n
wait_until "$T" quiet
expect "s3: 5 evictions" 0 evictions s3 <<<'5'
s1a=$(evictions s1 a)
s1all=$(evictions s1)
s4all=$(evictions s4)

# ---------------------------------------------------------------------
# The metrics of scenarios 1-5 (the restart below resets the counters).

if scrape; then
	pass "metrics: scraped $(metrics_url)/metrics"
else
	fail "metrics: scrape $(metrics_url)/metrics" "$(tail -5 "$cluster/manager.log")"
fi
want=$(printf '%s\n' \
	"preempted cq-1b|cq-1c InCohortFairSharing $s1all" \
	"preempted cq-2b InCohortFairSharing 2" \
	"preempted cq-2b InCohortReclamation 1" \
	"preempted cq-3n InCohortFairSharing 5" \
	"preempted cq-4r|cq-4t InCohortFairSharing $s4all" \
	"preempted cq-5b InCohortFairSharing 1" \
	"evicted cq-1a $s1a" "evicted cq-1b|cq-1c $((s1all - s1a))" \
	"evicted cq-2a 3" "evicted cq-3z 5" "evicted cq-4i 2" \
	"evicted cq-4r|cq-4t $((s4all - 2))" "evicted cq-5a 1" |
	grep -v ' 0$' | sort)
expect "metrics: kueue_preempted_workloads_total by preempting queue and reason, kueue_evicted_workloads_total{reason=\"Preempted\"} by queue: as the victims' schedulingStats" 0 \
	metric_table <<<"$want"
gauges_eventually cq-1a=250 cq-1b=250 cq-1c=250 cq-2a=334 cq-2b=334 \
	cq-3z=$MAXINT64 cq-3n=750 cq-4i=750 cq-4r=125 cq-4t=125 cq-5a=0 \
	cq-5b=400 cohort:important-org=1000 cohort:regular-org=1000 \
	cohort:root-4=0 cohort:co-1=0

# ---------------------------------------------------------------------
# 6. The manager restarted with the v1beta1 Configuration:
# LessThanOrEqualToFinalShare alone.

# s15: the queues of scenarios 1-5 and s1's evictions.
s15() {
	cqs cq-1a cq-1b cq-1c cq-2a cq-2b cq-3z cq-3n cq-4i cq-4r cq-4t cq-5a cq-5b
	echo "s1 evictions: $(evictions s1)"
}
s_before=$(s15)
s7_before=$(s7_cpu heavy)
history_start
logsize=$(stat -c %s "$cluster/manager.log")
run_cmd env DEVCLUSTER_CONFIG="$work/config-v1beta1.yaml" "$devcluster" restart-manager "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "restart the manager with the v1beta1 Configuration (fairSharing.enable: true)"
else
	fail "restart the manager with the v1beta1 Configuration" "$out"
fi
expect "the manager says nothing about fairSharing (v1beta1)" 0 \
	config_warnings "$logsize" <<'EOF'
controller.groupKindConcurrency
EOF
add_jobs s6 qb 1 b2
create_jobs "s6 b2"
match_eventually "s6: [LessThanOrEqualToFinalShare]: b2 (400 against cq-6a's 0 after) waits" "$T" \
	'^False Pending: ' wlc s6 b2 QuotaReserved
expect "s6: nothing preempted" 0 cqs cq-6a cq-6b <<'EOF'
cq-6a: 1/0 cpu=4 share=800
cq-6b: 1/1 cpu=1 share=200
EOF
gauges_eventually cq-1a=250 cq-1c=250 cq-2a=334 cq-3z=$MAXINT64 \
	cq-4i=750 cq-5b=400 cq-6a=800 cohort:important-org=1000 \
	cohort:regular-org=1000 cohort:co-1=0
expect "metrics: the new manager preempted nothing" 0 \
	metric kueue_preempted_workloads_total '' <<<'0'

# 7. After the restart: heavy's history was read back (it only grew:
# the second of h1, h2 still runs), and light, without one, goes before
# heavy's older h3.
s7_kept() {
	[ "$(s7_cpu heavy)" -gt "$s7_before" ]
}
if wait_until "$T" s7_kept; then
	pass "s7: heavy's history survived the restart ($s7_before -> $(s7_cpu heavy) milli-cpu)"
else
	fail "s7: heavy's history survived the restart" "before $s7_before, now $(s7_cpu heavy)"
fi
add_jobs s7 heavy 1 h3
create_jobs "s7 h3 (heavy)"
match_eventually "s7: h3 waits behind $s7_second" "$T" '^False Pending: ' wlc s7 h3 QuotaReserved
add_jobs s7 light 1 l1
create_jobs "s7 l1 (light), newer than h3"
match_eventually "s7: l1 waits behind $s7_second" "$T" '^False Pending: ' wlc s7 l1 QuotaReserved
release -n s7 "$s7_second"
expect_eventually "s7: $s7_second ends: light's l1 is admitted before heavy's older h3" "$T" \
	"l1" running s7
match_eventually "s7: h3 still waits" 1 '^False Pending: ' wlc s7 h3 QuotaReserved

# ---------------------------------------------------------------------
# The end: scenarios 1-5 as they were before the restart (nothing was
# preempted once they had converged), every recorded state.

expect "s1-s5: the queues and s1's evictions unchanged since before the restart" 0 \
	s15 <<<"$s_before"
history_finish
invariants "the end, statuses agree" --status
kill "$wl_watch" "$job_watch" 2>/dev/null
devcluster_stop
e2e_finish
