#!/usr/bin/env bash
# demo: `make demo`'s driver (demo/demo.sh) run as a script would run it,
# with no terminal (stdin </dev/null, stdout a file) and a short stream
# (DEMO_JOBS=20: the 17 Jobs of the scripted scenes of demo/feed.c and 3
# seeded ones up to 14 s, runtimes x0.3) in a temporary state dir:
#  - it exits 0 and prints plain periodic lines (no ANSI), the summary
#    with plausible numbers and the kubectl hints;
#  - the scenes' preemptions happened, each shown as one line with its
#    victim, preemptor, reason and GPUs freed: nlp's two experiments and
#    recsys' second training Job reclaim what their teams lent to
#    research (InCohortReclamation), production inference preempts one of
#    nlp's experiments (InClusterQueue); the summary counts them by
#    reason, every victim ran again and finished, and the inference Job
#    that preempted has its wait shown apart;
#  - cueue-invariants holds on every state polled while the demo runs
#    (victims in flight included) and on the final store;
#  - every Job finished: the summary says so, and the cluster's store,
#    read back afterwards with the devserver alone, has 20 Jobs Complete,
#    the Preempted events of the scenes and, on every preempted Workload,
#    an eviction count that adds up to the summary's and Finished=True;
#  - nothing is left running (the devcluster's pid files, and no process
#    naming the state dir);
#  - a second run works, even with a cluster still running in the state
#    dir (the one the previous check left up on purpose).
#
# DEMO_BIN / MANAGER_BIN / DEVSERVER_BIN test other binaries.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init demo

devcluster=$e2e_dir/devcluster
state=$work/state
export DEMO_STATE=$state DEMO_JOBS=20 DEMO_SPAN=14 DEMO_RUNTIME_SCALE=0.3 \
	DEMO_INTERVAL=500 DEMO_TIMEOUT=90
inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
[ -x "$inv_bin" ] || {
	fail "cueue-invariants built" "$inv_bin missing (run make all)"
	e2e_finish
}
export KUBECACHEDIR=$work/kcache

on_exit_stop_clusters "$state"

# leftovers: processes whose command line names the state dir (the
# devserver's --data-dir, the manager's and cueue-demo's --kubeconfig)
leftovers() {
	pgrep -af -- "$state/" 2>/dev/null | grep -v pgrep
}

# poll_invariants N: until $work/run-N.rc exists, snapshots the cluster
# (whenever its kubeconfig is there and kubectl answers) and runs
# cueue-invariants on it; appends "ok" or the violations to
# $work/inv-N.log, one entry per state checked.
poll_invariants() {
	local n=$1 snap=$work/inv-$1.json
	while [ ! -e "$work/run-$n.rc" ]; do
		if [ -e "$state/kubeconfig" ] &&
			KUBECONFIG=$state/kubeconfig snapshot "$snap" 2>/dev/null; then
			if "$inv_bin" "$snap" >"$snap.out" 2>&1; then
				echo ok >>"$work/inv-$n.log"
			else
				{ echo "violation:"; cat "$snap.out"; } >>"$work/inv-$n.log"
			fi
		fi
		sleep 0.3
	done
}

# run N: the driver, non-interactively, the invariant poller beside it;
# output in $work/run-N.out
run_demo() {
	local poller
	: >"$work/inv-$1.log"
	poll_invariants "$1" &
	poller=$!
	"$e2e_top/demo/demo.sh" </dev/null >"$work/run-$1.out" 2>&1
	echo "$?" >"$work/run-$1.rc"
	wait "$poller"
}

# check_run N: every assertion on run N's output
check_run() {
	local n=$1 out=$work/run-$1.out rc line sum_jobs=0 sum_fl=0 ok
	rc=$(cat "$work/run-$n.rc")
	if [ "$rc" = 0 ]; then
		pass "run $n: exit status 0"
	else
		fail "run $n: exit status 0" "exit $rc; output:
$(tail -30 "$out")"
	fi
	if grep -q $'\033' "$out"; then
		fail "run $n: no ANSI escapes without a terminal" "$(grep -c $'\033' "$out") lines"
	elif [ "$(grep -c '^\[t+ *[0-9.]*s\] jobs [0-9]*/20 created' "$out")" -ge 2 ]; then
		pass "run $n: plain periodic lines, no ANSI escapes"
	else
		fail "run $n: plain periodic lines, no ANSI escapes" "$(head -20 "$out")"
	fi
	line=$(grep '^jobs: ' "$out")
	if [[ $line =~ ^jobs:\ 20\ planned,\ 20\ created,\ 20\ admitted,\ 20\ finished,\ 0\ failed,\ in\ ([0-9]+)\.[0-9]s$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge 10 ] && [ "${BASH_REMATCH[1]}" -lt 90 ]; then
		pass "run $n: summary: every Job created, admitted and finished"
	else
		fail "run $n: summary: every Job created, admitted and finished" "got: $line"
	fi
	# per class: n jobs, mean <= p95 (n < 20, so p95 is the maximum),
	# both under the run's length
	ok=1
	for c in prod-inference training experiment; do
		line=$(grep -E "^  $c +[0-9]+ jobs" "$out")
		if [[ $line =~ ([0-9]+)\ jobs\ +mean\ +([0-9]+)\.([0-9]+)s\ +p95\ +([0-9]+)\.([0-9]+)s$ ]]; then
			sum_jobs=$((sum_jobs + BASH_REMATCH[1]))
			local mean=$((10#${BASH_REMATCH[2]}${BASH_REMATCH[3]}))
			local p95=$((10#${BASH_REMATCH[4]}${BASH_REMATCH[5]}))
			[ "$mean" -le "$((p95 + 1))" ] && [ "$p95" -lt 4000 ] || ok=0
		elif [[ $line =~ \ 0\ jobs$ ]]; then
			:
		else
			ok=0
		fi
	done
	if [ "$ok" = 1 ] && [ "$sum_jobs" = 20 ]; then
		pass "run $n: summary: mean and p95 wait per priority class"
	else
		fail "run $n: summary: mean and p95 wait per priority class" "$(grep -A4 '^wait from' "$out")"
	fi
	line=$(grep '^peak GPU utilisation: ' "$out")
	# from the Jobs watch, so a real bound: never more GPUs than exist,
	# per flavor or in all
	if [[ $line =~ ^peak\ GPU\ utilisation:\ ([0-9]+)/40\ GPUs\ \(([0-9]+)%\)\;\ h100\ ([0-9]+)/16,\ a100\ ([0-9]+)/24$ ]] &&
		[ "${BASH_REMATCH[1]}" -gt 0 ] && [ "${BASH_REMATCH[2]}" -le 100 ] &&
		[ "${BASH_REMATCH[3]}" -le 16 ] && [ "${BASH_REMATCH[4]}" -le 24 ]; then
		pass "run $n: summary: peak GPU utilisation"
	else
		fail "run $n: summary: peak GPU utilisation" "got: $line"
	fi
	peak_h100=${BASH_REMATCH[3]:-0} peak_a100=${BASH_REMATCH[4]:-0}
	# every Job got a flavor, in the queues' order (h100 first)
	line=$(grep '^admitted by flavor: ' "$out")
	[[ $line =~ ^admitted\ by\ flavor:\ h100\ ([0-9]+),\ a100\ ([0-9]+)$ ]] &&
		sum_fl=$((BASH_REMATCH[1] + BASH_REMATCH[2]))
	# ... and the in-use count saw each of them: a flavor that admitted
	# Jobs has a peak, and nothing stays counted once all have ended
	if [ "$sum_fl" = 20 ] && ! grep -q '^dash: ' "$out" &&
		{ [ "${BASH_REMATCH[1]}" = 0 ] || [ "$peak_h100" -gt 0 ]; } &&
		{ [ "${BASH_REMATCH[2]}" = 0 ] || [ "$peak_a100" -gt 0 ]; }; then
		pass "run $n: summary: admissions by flavor, each counted in use"
	else
		fail "run $n: summary: admissions by flavor, each counted in use" "got: $line; $(grep "^dash: " "$out")"
	fi
	check_preemptions "$n"
	if grep -qx "  export KUBECONFIG=$state/kubeconfig" "$out" &&
		grep -qx '  kubectl get workloads -A' "$out" &&
		grep -qx '  kubectl get clusterqueues' "$out"; then
		pass "run $n: how to point kubectl at the cluster"
	else
		fail "run $n: how to point kubectl at the cluster" "$(tail -12 "$out")"
	fi
	ok=1
	for p in devserver manager; do
		[ -e "$state/$p.pid" ] && ok=0
	done
	if [ "$ok" = 1 ] && [ -z "$(leftovers)" ] &&
		! "$devcluster" status "$state" >/dev/null 2>&1; then
		pass "run $n: the cluster is stopped, nothing left running"
	else
		fail "run $n: the cluster is stopped, nothing left running" "$(ls "$state"; leftovers)"
	fi
}

# check_preemptions N: the scenes' preemptions in run N's output and
# summary, and the invariant polls
check_preemptions() {
	local n=$1 out=$work/run-$1.out line lines ic rc rwb total
	lines=$(grep -E '^\[t\+ *[0-9.]+s\] preempted ' "$out")
	# The scenes (demo/feed.c): the victims of the reclaims are any of
	# research's borrowing experiments, the preemptors are fixed.
	ok=1
	for want in \
		'preempted research-exp-0(0[89]|1[0-2]) \(4 GPUs freed\) for nlp-exp-014: InCohortReclamation$' \
		'preempted research-exp-0(0[89]|1[0-2]) \(4 GPUs freed\) for nlp-exp-015: InCohortReclamation$' \
		'preempted research-exp-0(0[89]|1[0-2]) \(4 GPUs freed\) for recsys-train-016: InCohortReclamation$' \
		'preempted nlp-exp-01[45] \(4 GPUs freed\) for nlp-infer-017: InClusterQueue$'; do
		grep -Eq -- "$want" <<<"$lines" || ok=0
	done
	if [ "$ok" = 1 ]; then
		pass "run $n: the scenes' preemptions, one line each (victim, GPUs freed, preemptor, reason)"
	else
		fail "run $n: the scenes' preemptions, one line each (victim, GPUs freed, preemptor, reason)" "got:
$lines"
	fi
	line=$(grep '^preemptions: ' "$out")
	if [[ $line =~ ^preemptions:\ ([0-9]+)\ \(InClusterQueue\ ([0-9]+),\ InCohortReclamation\ ([0-9]+),\ InCohortReclaimWhileBorrowing\ ([0-9]+)\),\ ([0-9]+)\ GPUs\ freed$ ]] &&
		total=${BASH_REMATCH[1]} ic=${BASH_REMATCH[2]} rc=${BASH_REMATCH[3]} rwb=${BASH_REMATCH[4]} &&
		[ "$ic" -ge 1 ] && [ "$rc" -ge 3 ] &&
		[ "$total" = $((ic + rc + rwb)) ] &&
		[ "$total" = "$(grep -c . <<<"$lines")" ] &&
		[ "${BASH_REMATCH[5]}" -ge 16 ]; then
		pass "run $n: summary: preemptions by reason ($ic InClusterQueue, $rc InCohortReclamation, $rwb InCohortReclaimWhileBorrowing), as many as lines"
		echo "$total" >"$work/preempted-$n"
	else
		fail "run $n: summary: preemptions by reason" "got: $line; $(grep -c . <<<"$lines") lines"
	fi
	line=$(grep '^preempted jobs: ' "$out")
	if [[ $line =~ ^preempted\ jobs:\ ([0-9]+),\ ([0-9]+)\ re-admitted\ and\ finished$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge 4 ] &&
		[ "${BASH_REMATCH[1]}" = "${BASH_REMATCH[2]}" ]; then
		pass "run $n: summary: every preempted Job re-admitted and finished"
	else
		fail "run $n: summary: every preempted Job re-admitted and finished" "got: $line"
	fi
	line=$(grep '^prod-inference admitted by preempting: ' "$out")
	if [[ $line =~ ^prod-inference\ admitted\ by\ preempting:\ ([0-9]+)\ jobs,\ wait\ mean\ [0-9]+\.[0-9]+s,\ max\ [0-9]+\.[0-9]+s\ \(without\ preempting:\ ([0-9]+)\ jobs, ]] &&
		[ "${BASH_REMATCH[1]}" -ge 1 ]; then
		pass "run $n: summary: the wait of inference admitted by preempting"
	else
		fail "run $n: summary: the wait of inference admitted by preempting" "got: $line"
	fi
	local polls bad
	polls=$(grep -c '^ok$' "$work/inv-$n.log")
	bad=$(grep -c '^violation:$' "$work/inv-$n.log")
	if [ "$bad" = 0 ] && [ "$polls" -ge 1 ]; then
		pass "run $n: invariants held at all $polls states polled during the demo"
	else
		fail "run $n: invariants held at every state polled during the demo" "$polls ok, $bad violations:
$(grep -A6 '^violation:$' "$work/inv-$n.log" | head -30)"
	fi
}

run_demo 1
check_run 1

# The store outlives the run: read it back with the devserver alone
# (no manager, so nothing changes): the Complete Jobs, the invariants on
# the final state, the Preempted events and the preempted Workloads.
# That cluster stays up for the second run to find and stop.
if DEVCLUSTER_NO_MANAGER=1 "$devcluster" start "$state" >/dev/null 2>&1; then
	export KUBECONFIG=$state/kubeconfig
	got=$(kubectl get jobs -A \
		-l app.kubernetes.io/part-of=cueue-demo -o \
		jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Complete")].status}{" "}{.spec.suspend}{"\n"}{end}' 2>&1 |
		sort | uniq -c | sed 's/^ *//')
	if [ "$got" = "20 True false" ]; then
		pass "the store holds 20 demo Jobs, all unsuspended and Complete"
	else
		fail "the store holds 20 demo Jobs, all unsuspended and Complete" "got: $got"
	fi
	invariants "the final store"
	# Kueue's Preempted events name the reason in their message: the
	# scenes' three reclaims and one preemption in the ClusterQueue.
	got=$(kubectl get events -A --field-selector reason=Preempted \
		-o jsonpath='{range .items[*]}{.message}{"\n"}{end}' 2>&1)
	if [ "$(grep -c 'due to reclamation within the cohort;' <<<"$got")" -ge 3 ] &&
		[ "$(grep -c 'due to prioritization in the ClusterQueue;' <<<"$got")" -ge 1 ]; then
		pass "Preempted events: at least 3 reclaims and 1 preemption in the ClusterQueue"
	else
		fail "Preempted events: at least 3 reclaims and 1 preemption in the ClusterQueue" "got:
$got"
	fi
	# Every Workload that was preempted finished; their eviction counts
	# add up to the preemptions the demo showed.
	got=$(kubectl get workloads -A -o json 2>&1 | python3 -c 'import json,sys
n=done=0
for w in json.load(sys.stdin)["items"]:
    st=w.get("status",{})
    c=sum(e.get("count",0) for e in st.get("schedulingStats",{}).get("evictions",[]) if e.get("reason")=="Preempted")
    if not c: continue
    n+=c
    done+=any(x["type"]=="Finished" and x["status"]=="True" for x in st.get("conditions",[]))
    if not any(x["type"]=="Finished" and x["status"]=="True" for x in st.get("conditions",[])):
        print("not finished:", w["metadata"]["name"])
print("preempted", n)' 2>&1)
	if [ "$got" = "preempted $(cat "$work/preempted-1" 2>/dev/null)" ]; then
		pass "the preempted Workloads all finished, their evictions add up to the summary's count"
	else
		fail "the preempted Workloads all finished, their evictions add up to the summary's count" "got: $got; summary: $(cat "$work/preempted-1" 2>/dev/null)"
	fi
else
	fail "the store holds 20 demo Jobs, all unsuspended and Complete" "devcluster start (devserver only) failed"
fi

run_demo 2
check_run 2
if grep -q '^cueue-demo: 20 Jobs over' "$work/run-2.out" &&
	[ "$(grep -c '^== cueue demo summary ==$' "$work/run-2.out")" = 1 ]; then
	pass "run 2 started fresh over a cluster left running"
else
	fail "run 2 started fresh over a cluster left running" "$(head -10 "$work/run-2.out")"
fi
e2e_finish
