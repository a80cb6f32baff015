#!/usr/bin/env bash
# demo: `make demo`'s driver (demo/demo.sh) run as a script would run it,
# with no terminal (stdin </dev/null, stdout a file) and a short stream
# (DEMO_JOBS=21: the 18 Jobs of the scripted scenes of demo/feed.c and 3
# seeded ones up to 14 s, runtimes x0.3) in a temporary state dir:
#  - it exits 0 and prints plain periodic lines (no ANSI), the summary
#    with plausible numbers and the kubectl hints;
#  - the scenes' preemptions happened, each shown as one line with its
#    victim, preemptor, reason and GPUs freed: nlp's two experiments and
#    recsys' second training Job reclaim what their teams lent to
#    research (InCohortReclamation: three research experiments or more,
#    each reclaim by one of those three Jobs, whichever the timing
#    favoured), production inference preempts one of nlp's experiments
#    (InClusterQueue); the summary counts them by
#    reason, every victim ran again and finished, and the inference Job
#    that preempted has its wait shown apart;
#  - waitForPodsReady, with the timings of demo/manager-config.yaml
#    (which is the shipped Configuration but for waitForPodsReady): the
#    scenes' gang research-gang-018, whose pods are never ready, is
#    admitted, times out (evicted PodsReadyTimeout, requeueState.count 1
#    and 2 with requeueAt one backoff later, the second backoff longer),
#    is queued again after each backoff and admitted again, and is then
#    deactivated (spec.active=false, Evicted
#    DeactivatedDueToRequeuingLimitExceeded), each shown as a line in
#    that order; the summary names it with backoffLimitCount + 1
#    timeouts and the limit, and names no other Job as timed out;
#  - cueue-invariants holds on every state polled while the demo runs
#    (victims and the gang in flight included) and on the final store;
#  - every other Job finished: the summary says so, and the cluster's
#    store, read back afterwards with the devserver alone, has those 20
#    Jobs Complete and the gang's suspended, its Workload inactive with
#    the evictions the summary counted (and no other Workload timed
#    out), Jobs admitted and finished while the gang was stuck, its
#    EvictedDueToPodsReadyTimeout events, the Preempted events of the
#    scenes and, on every preempted Workload, an eviction count that adds
#    up to the summary's and Finished=True;
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
export DEMO_STATE=$state DEMO_JOBS=21 DEMO_SPAN=14 DEMO_RUNTIME_SCALE=0.3 \
	DEMO_INTERVAL=500 DEMO_TIMEOUT=90
gang=research-gang-018
demo_config=$e2e_top/demo/manager-config.yaml
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
	elif [ "$(grep -c '^\[t+ *[0-9.]*s\] jobs [0-9]*/21 created' "$out")" -ge 2 ]; then
		pass "run $n: plain periodic lines, no ANSI escapes"
	else
		fail "run $n: plain periodic lines, no ANSI escapes" "$(head -20 "$out")"
	fi
	line=$(grep '^jobs: ' "$out")
	if [[ $line =~ ^jobs:\ 21\ planned,\ 21\ created,\ 21\ admitted,\ 20\ finished,\ 0\ failed,\ 1\ deactivated,\ in\ ([0-9]+)\.[0-9]s$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge 10 ] && [ "${BASH_REMATCH[1]}" -lt 90 ]; then
		pass "run $n: summary: every Job created and admitted, all but the gang finished, the gang deactivated"
	else
		fail "run $n: summary: every Job created and admitted, all but the gang finished, the gang deactivated" "got: $line"
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
	if [ "$ok" = 1 ] && [ "$sum_jobs" = 21 ]; then
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
	if [ "$sum_fl" = 21 ] && ! grep -q '^dash: ' "$out" &&
		{ [ "${BASH_REMATCH[1]}" = 0 ] || [ "$peak_h100" -gt 0 ]; } &&
		{ [ "${BASH_REMATCH[2]}" = 0 ] || [ "$peak_a100" -gt 0 ]; }; then
		pass "run $n: summary: admissions by flavor, each counted in use"
	else
		fail "run $n: summary: admissions by flavor, each counted in use" "got: $line; $(grep "^dash: " "$out")"
	fi
	check_preemptions "$n"
	check_ready "$n"
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
	# research's borrowing experiments, the preemptors the three Jobs
	# of nlp and recsys that take back what their teams lent. Which of
	# them preempts depends on timing: on a loaded machine a victim's
	# release can come after recsys-train-016 arrives, and 016 (training
	# outranks experiments) then takes the freed GPUs without preempting
	# while an nlp experiment reclaims a second time; and the seeded
	# stream's Jobs may reclaim too. So: at least three research
	# experiments reclaimed by the three, and production inference
	# preempting one of nlp's experiments.
	ok=1
	local rwant='preempted research-exp-0(0[89]|1[0-2]) \(4 GPUs freed\) for (nlp-exp-01[45]|recsys-train-016): InCohortReclamation$'
	local iwant='preempted nlp-exp-01[45] \(4 GPUs freed\) for nlp-infer-017: InClusterQueue$'
	[ "$(grep -E -- "$rwant" <<<"$lines" | grep -Eo 'research-exp-0[0-9]+' | sort -u | grep -c .)" -ge 3 ] || ok=0
	grep -Eq -- "$iwant" <<<"$lines" || ok=0
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
	# (a victim deactivated since, the gang, is counted apart)
	line=$(grep '^preempted jobs: ' "$out")
	if [[ $line =~ ^preempted\ jobs:\ ([0-9]+),\ ([0-9]+)\ re-admitted\ and\ finished(,\ ([0-9]+)\ deactivated)?$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge 4 ] &&
		[ "${BASH_REMATCH[1]}" = $((BASH_REMATCH[2] + ${BASH_REMATCH[4]:-0})) ]; then
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

# check_ready N: waitForPodsReady in run N's output: the gang's lines in
# order, the summary's lines. The numbers the demo prints come from the
# API; what they must be comes from demo/manager-config.yaml.
check_ready() {
	local n=$1 out=$work/run-$1.out lines got k line nadm=0
	local backoffs=()
	lines=$(grep -E "^\[t\+ *[0-9.]+s\] (preempted )?$gang " "$out" | sed 's/^\[t+ *[0-9.]*s\] //')
	# The story, in this order: admitted, timed out with count 1,
	# backoff over, admitted, timed out with count 2 (longer backoff),
	# backoff over, admitted, deactivated. Each line becomes a token
	# (A: admitted, numbered 1, 2, ... in turn). Two orders may swap: the
	# end of a backoff (a Workload event) and the admission it allows (a
	# Job event, from another watch read in the same loop). And should
	# a lender reclaim quota the gang borrowed (P: a "preempted" line),
	# it is admitted once more then, with no timeout counted.
	local pat=("A:admitted \(admission ([0-9]+)\), holds 2 GPUs of [a-z0-9]+, 0/2 pods ready"
		"T1:PodsReady timeout: 0/2 pods ready [0-9]+s after admission: evicted \(PodsReadyTimeout\), requeueState.count 1, requeueAt [0-9:]{8}Z \(backoff ([0-9]+)s\)"
		"T2:PodsReady timeout: 0/2 pods ready [0-9]+s after admission: evicted \(PodsReadyTimeout\), requeueState.count 2, requeueAt [0-9:]{8}Z \(backoff ([0-9]+)s\)"
		"B:backoff over \(Requeued BackoffFinished\): queued again"
		"D:deactivated: requeueState.count 2 reached backoffLimitCount, spec.active=false, Evicted DeactivatedDueToRequeuingLimitExceeded")
	local tokens="" tok p adm_ok=1
	while IFS= read -r got; do
		tok="?"
		if [[ $got =~ ^preempted\ $gang\  ]]; then
			tok=P
		else
			for p in "${pat[@]}"; do
				[[ $got =~ ^$gang\ ${p#*:}$ ]] || continue
				tok=${p%%:*}
				case $tok in
				A)
					nadm=$((nadm + 1))
					[ "${BASH_REMATCH[1]}" = "$nadm" ] || adm_ok=0
					;;
				T*) backoffs+=("${BASH_REMATCH[1]}") ;;
				esac
				break
			done
		fi
		tokens+="$tok "
	done <<<"$lines"
	tokens=$(sed 's/T\([12]\) A B /T\1 B A /; s/A A P /A P A /g' <<<"$tokens")
	# backoffBaseSeconds 2, doubled: 2 s then 4 s (requeueAt and the
	# eviction's time are whole seconds: one more at most)
	if [[ $tokens =~ ^A\ (P\ A\ )*T1\ B\ A\ (P\ A\ )*T2\ B\ A\ (P\ A\ )*D\ $ ]] &&
		[ "$adm_ok" = 1 ] && [ "${#backoffs[@]}" = 2 ] &&
		[ "${backoffs[0]}" -ge 2 ] && [ "${backoffs[0]}" -le 3 ] &&
		[ "${backoffs[1]}" -ge 4 ] && [ "${backoffs[1]}" -le 5 ]; then
		pass "run $n: the gang admitted, timed out and requeued after a backoff twice (${backoffs[*]} s), admitted again, deactivated"
	else
		fail "run $n: the gang admitted, timed out and requeued after a backoff twice, admitted again, deactivated" "events: $tokens(want A T1 B A T2 B A D); backoffs: ${backoffs[*]}; got:
$lines"
	fi
	# the summary: read from the API, what the configuration says it
	# must be (the limit, and one timeout more than it)
	k=$(python3 -c 'import sys, yaml
print(yaml.safe_load(open(sys.argv[1]))["waitForPodsReady"]["requeuingStrategy"]["backoffLimitCount"])' "$demo_config")
	got=$(grep -A1 "^gang $gang: " "$out")
	if [ "$(head -1 <<<"$got")" = "gang $gang: never ready, timed out $((k + 1)) times, deactivated after backoffLimitCount=$k" ] &&
		[[ $(tail -1 <<<"$got") =~ ^\ \ 0\ of\ 2\ pods\ ready\ in\ $nadm\ admissions,\ 2\ GPUs\ held\ [0-9.]+s\ in\ all\;\ evicted\ PodsReadyTimeout\ $k\ times,\ requeued\ after\ backoffs\ of\ [0-9]+s,\ [0-9]+s\;\ spec.active=false,\ Evicted\ DeactivatedDueToRequeuingLimitExceeded\ at\ t\+[0-9.]+s$ ]]; then
		pass "run $n: summary: the gang never ready, timed out $((k + 1)) times, deactivated after backoffLimitCount=$k"
		echo "$((k + 1))" >"$work/timeouts-$n"
	else
		fail "run $n: summary: the gang never ready, timed out $((k + 1)) times, deactivated after backoffLimitCount=$k" "got:
$got"
	fi
	# every other Job's pods were ready in time: the gang alone timed out
	line=$(grep '^pods ready after admission: ' "$out")
	if [[ $line =~ ^pods\ ready\ after\ admission:\ 20\ jobs,\ mean\ [0-9.]+s,\ max\ [0-9.]+s\;\ PodsReady\ timeouts:\ $gang\ \($((k + 1))\)$ ]] &&
		[ "$(grep -c '^gang \|^job ' "$out")" = 1 ]; then
		pass "run $n: summary: the 20 other Jobs ready after admission, none timed out"
	else
		fail "run $n: summary: the 20 other Jobs ready after admission, none timed out" "got: $line
$(grep '^gang \|^job ' "$out")"
	fi
}

# The demo's Configuration is the shipped one but for waitForPodsReady,
# which sets every timing the demo relies on.
got=$(python3 -c 'import sys, yaml
demo, shipped = (yaml.safe_load(open(f)) for f in sys.argv[1:])
w = demo.pop("waitForPodsReady", None) or {}
print("same" if demo == shipped else "differs")
print(sorted(w), sorted(w.get("requeuingStrategy", {})))' \
	"$demo_config" "$e2e_top/manifests/config/controller_manager_config.yaml" 2>&1)
if [ "$got" = "same
['blockAdmission', 'recoveryTimeout', 'requeuingStrategy', 'timeout'] ['backoffBaseSeconds', 'backoffLimitCount', 'backoffMaxSeconds', 'timestamp']" ]; then
	pass "demo/manager-config.yaml: the shipped Configuration but for waitForPodsReady"
else
	fail "demo/manager-config.yaml: the shipped Configuration but for waitForPodsReady" "got: $got"
fi

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
		jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Complete")].status}{" "}{.spec.suspend}{"\n"}{end}' 2>&1 |
		sed "s/^$gang /gang /; s/^[a-z]*-[a-z]*-[0-9]* /job /" | sort | uniq -c | sed 's/^ *//')
	if [ "$got" = "1 gang  true
20 job True false" ]; then
		pass "the store holds 20 demo Jobs unsuspended and Complete, and the gang suspended"
	else
		fail "the store holds 20 demo Jobs unsuspended and Complete, and the gang suspended" "got: $got"
	fi
	# The gang's Workload: inactive, evicted for the requeuing limit, its
	# evictions those the summary counted; no other Workload timed out;
	# other Jobs were admitted and finished while it was stuck (from its
	# creation to its deactivation, in the API's whole seconds).
	got=$(kubectl get workloads -A -o json 2>&1 | python3 -c 'import json, sys
gang = sys.argv[1]
items = json.load(sys.stdin)["items"]
def conds(w):
    return {c["type"]: c for c in w.get("status", {}).get("conditions", [])}
def ev(w, reason, cause=None):
    return sum(e.get("count", 0)
               for e in w.get("status", {}).get("schedulingStats", {}).get("evictions", [])
               if e.get("reason") == reason and cause in (None, e.get("underlyingCause")))
g = [w for w in items if w["metadata"]["ownerReferences"][0]["name"] == gang]
others = [w for w in items if w not in g]
if len(g) != 1:
    sys.exit("%d Workloads of %s" % (len(g), gang))
g = g[0]
c = conds(g)
print("active", g["spec"].get("active"), "evicted", c.get("Evicted", {}).get("status"),
      c.get("Evicted", {}).get("reason"), "requeueState", g.get("status", {}).get("requeueState"),
      "timeouts", ev(g, "PodsReadyTimeout", "WaitForStart"), "+",
      ev(g, "Deactivated", "RequeuingLimitExceeded"))
print("others timed out", sum(ev(w, "PodsReadyTimeout") for w in others))
start, end = g["metadata"]["creationTimestamp"], c.get("Evicted", {}).get("lastTransitionTime", "")
def within(w, t):
    return start <= conds(w).get(t, {}).get("lastTransitionTime", "") <= end
meanwhile = [w for w in others if within(w, "Admitted") and within(w, "Finished")
             and conds(w)["Finished"]["status"] == "True"]
print("admitted and finished meanwhile:", len(meanwhile) > 0)' "$gang" 2>&1)
	k=$(cat "$work/timeouts-1" 2>/dev/null)
	if [ -n "$k" ] && [ "$got" = "active False evicted True DeactivatedDueToRequeuingLimitExceeded requeueState None timeouts $((k - 1)) + 1
others timed out 0
admitted and finished meanwhile: True" ]; then
		pass "the gang's Workload: inactive, Evicted DeactivatedDueToRequeuingLimitExceeded, $((k - 1)) + 1 timeouts as the summary says; none other timed out; others admitted and finished meanwhile"
	else
		fail "the gang's Workload: inactive, Evicted DeactivatedDueToRequeuingLimitExceeded, timeouts as the summary says; none other timed out; others admitted and finished meanwhile" "summary: ${k:-none}; got:
$got"
	fi
	# one Event per eviction (count 1 each, as Kueue v0.14 posts them),
	# every one naming the gang's Workload
	got=$(kubectl get events -A \
		--field-selector reason=EvictedDueToPodsReadyTimeout \
		-o jsonpath='{range .items[*]}{.involvedObject.name}{" "}{.count}{" "}{.message}{"\n"}{end}' 2>&1)
	if [ -n "$k" ] && [ "$(grep -cE "^(job-$gang-[a-z0-9]+) 1 Exceeded the PodsReady timeout team-research/\1$" <<<"$got")" = $((k - 1)) ] &&
		[ "$(grep -c . <<<"$got")" = $((k - 1)) ]; then
		pass "EvictedDueToPodsReadyTimeout events: $((k - 1)) for the gang, none for another Workload"
	else
		fail "EvictedDueToPodsReadyTimeout events: $((k - 1)) for the gang, none for another Workload" "got:
$got"
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
    # the gang, if preempted, is deactivated rather than finished
    if w["spec"].get("active") is False: continue
    if not any(x["type"]=="Finished" and x["status"]=="True" for x in st.get("conditions",[])):
        print("not finished:", w["metadata"]["name"])
print("preempted", n)' 2>&1)
	if [ "$got" = "preempted $(cat "$work/preempted-1" 2>/dev/null)" ]; then
		pass "the preempted Workloads all finished, their evictions add up to the summary's count"
	else
		fail "the preempted Workloads all finished, their evictions add up to the summary's count" "got: $got; summary: $(cat "$work/preempted-1" 2>/dev/null)"
	fi
else
	fail "the store holds 20 demo Jobs unsuspended and Complete, and the gang suspended" "devcluster start (devserver only) failed"
fi

run_demo 2
check_run 2
if grep -q '^cueue-demo: 21 Jobs over' "$work/run-2.out" &&
	[ "$(grep -c '^== cueue demo summary ==$' "$work/run-2.out")" = 1 ]; then
	pass "run 2 started fresh over a cluster left running"
else
	fail "run 2 started fresh over a cluster left running" "$(head -10 "$work/run-2.out")"
fi
e2e_finish
