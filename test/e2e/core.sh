#!/usr/bin/env bash
# core: the manager end to end. test/e2e/devcluster starts the devserver
# and bin/cueue-manager; the real kubectl applies queue setups (the
# upstream examples unchanged, and manifests/core/), creates Workloads
# directly and reads back what the manager wrote: admissions in the right
# flavor, Kueue's pending messages, Kueue's columns, status counts and
# flavorsReservation with borrowed, borrowing and lending limits in a
# cohort, inactive queues (missing flavor, cohort cycle) recovering, a
# manager restart that admits nothing twice, and a load case (200
# workloads over 6 ClusterQueues in 2 cohorts).
#
# build/default/tools/cueue-invariants (test/tools/invariants.c, an
# arithmetic independent of flavors/) checks the quota invariants on
# `kubectl get ... -o json` at every observation point; its own fixtures
# (test/fixtures/invariants/) are checked first, without a cluster.
#
# MANAGER_BIN / DEVSERVER_BIN / INVARIANTS_BIN test other binaries.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init core

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
fixtures=$e2e_top/test/fixtures/invariants
upstream=$e2e_top/test/fixtures/upstream
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
# How long (tenths of a second, wall time) a change may take to show.
T=${CORE_WAIT:-300}
cd "$e2e_dir/manifests/core" || exit 1

# The cluster is stopped on any exit, before lib.bash's cleanup.
on_exit_stop_clusters "$cluster"

# ---------------------------------------------------------------------
# 1. The invariant checker on its fixtures (no cluster).

if [ ! -x "$inv_bin" ]; then
	fail "cueue-invariants built" "$inv_bin missing (run make all)"
	e2e_finish
fi
for f in "$fixtures"/*.json; do
	n=$(basename "$f" .json)
	a=()
	[[ $n == *status* ]] && a=(--status)
	run_cmd "$inv_bin" "${a[@]}" "$f"
	got=$(printf '%s\nexit %s\n' "$(grep -v '^cueue-invariants: note' <<<"$out")" "$rc")
	if [ "$got" == "$(cat "$fixtures/$n.want")" ]; then
		pass "invariants fixture $n"
	else
		fail "invariants fixture $n" "$(diff "$fixtures/$n.want" <(printf '%s\n' "$got"))"
	fi
done

# ---------------------------------------------------------------------
# Helpers

# (now_ms, wait_until, is_eq, expect_eventually, jp, cond_line,
# active_of, admission_of, snapshot, invariants, wl and FINISHED are
# lib.bash's.)

# finish NAME...: adds Finished=True (the way a job integration does).
finish() {
	kubectl patch workload "$@" --subresource=status --type=json \
		-p "$FINISHED" >"$work/finish.out" 2>&1
}

# finish_many NAME...: finish in parallel kubectl processes of 5 names:
# kubectl's client-side rate limit (5 qps, burst 10; a patch is a GET and
# a PATCH) would otherwise make 50 patches take 10 s.
finish_many() {
	local pids=() p
	while [ "$#" -gt 0 ]; do
		kubectl patch workload "${@:1:5}" --subresource=status --type=json \
			-p "$FINISHED" >/dev/null 2>&1 &
		pids+=("$!")
		shift $(($# < 5 ? $# : 5))
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
}

pending_msg() { # pending_msg WL: QuotaReserved's "status reason: message"
	cond_line "workload/$1" QuotaReserved
}

# ---------------------------------------------------------------------
# 2. The cluster

if [ ! -x "$manager_src" ]; then
	fail "cueue-manager built" "$manager_src missing (run make all)"
	e2e_finish
fi
# Like run.sh's devserver copy: a rebuild during the run does not mix in.
cp "$manager_src" "$work/cueue-manager"
export MANAGER_BIN=$work/cueue-manager
# Workloads are created directly here (the Job path with the webhook has its
# own suite), and some checks write while the manager is down, which the
# fail-closed webhooks would refuse, as Kueue's do.
export DEVCLUSTER_WEBHOOK=0
# The reservation lines checked at the end are debug lines (Kueue's V(2)).
export DEVCLUSTER_MANAGER_ARGS="--log-level debug"

devcluster_start "devcluster start"
match "devcluster status" 0 '^manager: running' "$devcluster" status "$cluster"

# ---------------------------------------------------------------------
# 3. One ClusterQueue: the upstream single-clusterqueue setup, unchanged.

expect "apply upstream single-clusterqueue setup" 0 \
	kubectl apply -f "$upstream/admin/single-clusterqueue-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/default-flavor created
clusterqueue.kueue.x-k8s.io/cluster-queue created
localqueue.kueue.x-k8s.io/user-queue created
EOF
expect_eventually "cluster-queue Active" "$T" "True Ready: Can admit new workloads" \
	active_of cluster-queue

{ wl w1 user-queue 4 1Gi; wl w2 user-queue 2 1Gi 2; } >"$work/w12.yaml"
expect "create w1, w2" 0 kubectl create -f "$work/w12.yaml" <<'EOF'
workload.kueue.x-k8s.io/w1 created
workload.kueue.x-k8s.io/w2 created
EOF
expect_eventually "w1 admitted in default-flavor" "$T" \
	'True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' admission_of w1
expect_eventually "w2 admitted in default-flavor" "$T" \
	'True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' admission_of w2
invariants "w1, w2 admitted"
expect "w2 admission" 0 kubectl get workload w2 -o jsonpath='{.status.admission}' <<'EOF'
{"clusterQueue":"cluster-queue","podSetAssignments":[{"count":2,"flavors":{"cpu":"default-flavor","memory":"default-flavor"},"name":"main","resourceUsage":{"cpu":"4","memory":"2Gi"}}]}
EOF

wl w3 user-queue 2 >"$work/w3.yaml"
expect "create w3" 0 kubectl create -f "$work/w3.yaml" <<'EOF'
workload.kueue.x-k8s.io/w3 created
EOF
expect_eventually "w3 pending with Kueue's message" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 1 more needed" \
	pending_msg w3
expect_eventually "cluster-queue counts (pending 1, reserving 2, admitted 2)" "$T" "1 2 2" \
	jp clusterqueue/cluster-queue '{.status.pendingWorkloads} {.status.reservingWorkloads} {.status.admittedWorkloads}'
invariants "w3 pending" --status

expect_table "get workloads" 0 kubectl get workloads <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
w1 | user-queue | cluster-queue | True |  | <age>
w2 | user-queue | cluster-queue | True |  | <age>
w3 | user-queue |  |  |  | <age>
EOF
expect_table "get clusterqueues -o wide" 0 kubectl get clusterqueues -o wide <<'EOF'
NAME | COHORT | STRATEGY | PENDING WORKLOADS | ADMITTED WORKLOADS
cluster-queue |  | BestEffortFIFO | 1 | 2
EOF
expect_table "get localqueues" 0 kubectl get localqueues <<'EOF'
NAME | CLUSTERQUEUE | PENDING WORKLOADS | ADMITTED WORKLOADS
user-queue | cluster-queue | 1 | 2
EOF
expect "cluster-queue flavorsReservation" 0 \
	kubectl get clusterqueue cluster-queue -o jsonpath='{.status.flavorsReservation}' <<'EOF'
[{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"8"},{"borrowed":"0","name":"memory","total":"3Gi"}]}]
EOF
expect "user-queue flavorsReservation" 0 \
	kubectl get localqueue user-queue -o jsonpath='{.status.flavorsReservation}' <<'EOF'
[{"name":"default-flavor","resources":[{"name":"cpu","total":"8"},{"name":"memory","total":"3Gi"}]}]
EOF

finish w1
expect "finish w1" 0 cat "$work/finish.out" <<'EOF'
workload.kueue.x-k8s.io/w1 patched
EOF
expect_eventually "w3 admitted once w1 finished" "$T" \
	'True cluster-queue {"cpu":"default-flavor"}' admission_of w3
expect_eventually "cluster-queue counts (pending 0, reserving 2, admitted 2)" "$T" "0 2 2" \
	jp clusterqueue/cluster-queue '{.status.pendingWorkloads} {.status.reservingWorkloads} {.status.admittedWorkloads}'
expect_eventually "cluster-queue reservation after w1" "$T" \
	'[{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"6"},{"borrowed":"0","name":"memory","total":"2Gi"}]}]' \
	jp clusterqueue/cluster-queue '{.status.flavorsReservation}'
invariants "w1 finished, w3 admitted" --status
expect_table "get workloads after finishing w1" 0 kubectl get workloads <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
w1 | user-queue | cluster-queue | True | True | <age>
w2 | user-queue | cluster-queue | True |  | <age>
w3 | user-queue | cluster-queue | True |  | <age>
EOF

# ---------------------------------------------------------------------
# 4. A cohort: borrowing, borrowingLimit, the next flavor, lending.

expect "apply flavors and cohort pool" 0 kubectl apply -f flavors.yaml -f cohort-pool.yaml <<'EOF'
resourceflavor.kueue.x-k8s.io/on-demand created
resourceflavor.kueue.x-k8s.io/spot created
clusterqueue.kueue.x-k8s.io/team-a created
clusterqueue.kueue.x-k8s.io/team-b created
localqueue.kueue.x-k8s.io/lq-a created
localqueue.kueue.x-k8s.io/lq-b created
EOF
wl wa1 lq-a 3 | kubectl create -f - >/dev/null 2>&1
expect_eventually "wa1 (3 cpu) admitted in on-demand" "$T" 'True team-a {"cpu":"on-demand"}' admission_of wa1
wl wa2 lq-a 3 | kubectl create -f - >/dev/null 2>&1
expect_eventually "wa2 (3 cpu) borrows on-demand from team-b" "$T" 'True team-a {"cpu":"on-demand"}' admission_of wa2
wl wa3 lq-a 1 | kubectl create -f - >/dev/null 2>&1
expect_eventually "wa3 (1 cpu) goes to spot: borrowingLimit 2 reached" "$T" 'True team-a {"cpu":"spot"}' admission_of wa3
expect_eventually "team-a flavorsReservation shows borrowed" "$T" \
	'[{"name":"on-demand","resources":[{"borrowed":"2","name":"cpu","total":"6"},{"borrowed":"0","name":"memory","total":"0"}]},{"name":"spot","resources":[{"borrowed":"0","name":"cpu","total":"1"},{"borrowed":"0","name":"memory","total":"0"}]}]' \
	jp clusterqueue/team-a '{.status.flavorsReservation}'
expect_eventually "team-a flavorsUsage shows borrowed" "$T" \
	'[{"name":"on-demand","resources":[{"borrowed":"2","name":"cpu","total":"6"},{"borrowed":"0","name":"memory","total":"0"}]},{"name":"spot","resources":[{"borrowed":"0","name":"cpu","total":"1"},{"borrowed":"0","name":"memory","total":"0"}]}]' \
	jp clusterqueue/team-a '{.status.flavorsUsage}'
invariants "team-a borrowing"
wl wb1 lq-b 3 | kubectl create -f - >/dev/null 2>&1
expect_eventually "wb1 (3 cpu) pending: team-b lent 2 of its 4" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor on-demand, 1 more needed" \
	pending_msg wb1
invariants "wb1 pending" --status
expect_table "get clusterqueues with the cohort" 0 kubectl get clusterqueues <<'EOF'
NAME | COHORT | PENDING WORKLOADS
cluster-queue |  | 0
team-a | pool | 0
team-b | pool | 1
EOF
finish wa2
expect_eventually "wb1 admitted once wa2 finished" "$T" 'True team-b {"cpu":"on-demand"}' admission_of wb1
expect_eventually "team-a no longer borrows" "$T" \
	'[{"name":"on-demand","resources":[{"borrowed":"0","name":"cpu","total":"3"},{"borrowed":"0","name":"memory","total":"0"}]},{"name":"spot","resources":[{"borrowed":"0","name":"cpu","total":"1"},{"borrowed":"0","name":"memory","total":"0"}]}]' \
	jp clusterqueue/team-a '{.status.flavorsReservation}'
invariants "wa2 finished, wb1 admitted" --status
expect_table "get localqueues in the cohort" 0 kubectl get localqueues <<'EOF'
NAME | CLUSTERQUEUE | PENDING WORKLOADS | ADMITTED WORKLOADS
lq-a | team-a | 0 | 2
lq-b | team-b | 0 | 1
user-queue | cluster-queue | 0 | 2
EOF

# BestEffortFIFO: beside big1 (8 of 9 cpu), big2 (5 cpu) does not fit;
# small (1 cpu), created with it, fits and must not wait behind it.
kubectl apply -f fifo.yaml >/dev/null 2>&1
wl big1 lq-fifo 8 | kubectl create -f - >/dev/null 2>&1
expect_eventually "big1 (8 of 9 cpu) admitted in fifo" "$T" 'True fifo {"cpu":"default-flavor"}' admission_of big1
{ wl big2 lq-fifo 5; wl small lq-fifo 1; } | kubectl create -f - >/dev/null 2>&1
expect_eventually "small (1 cpu), created with big2 (5 cpu), admitted" "$T" \
	'True fifo {"cpu":"default-flavor"}' admission_of small
match_eventually "big2 pending (4 or 5 more needed, by which went first)" "$T" \
	"^False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, [45] more needed$" \
	pending_msg big2
invariants "BestEffortFIFO"
# big2's message dates from its last evaluation, which may precede small's
# admission ("4 more needed"): as in Kueue, a parked workload is evaluated
# again only on a requeue event, and a restarted manager evaluates it
# afresh. It goes now, so that the restart check below starts from a
# state every evaluation agrees with.
kubectl delete workload big2 >/dev/null 2>&1

# ---------------------------------------------------------------------
# 5. Bad objects: the queues say why they are inactive; the manager runs on.

kubectl apply -f cq-missing-flavor.yaml >/dev/null 2>&1
expect_eventually "missing flavor: cq-gpu inactive (FlavorNotFound)" "$T" \
	"False FlavorNotFound: Can't admit new workloads: references missing ResourceFlavor(s): gpu-flavor." \
	active_of cq-gpu
kubectl apply -f flavor-gpu.yaml >/dev/null 2>&1
expect_eventually "flavor created: cq-gpu active" "$T" \
	"True Ready: Can admit new workloads" active_of cq-gpu
kubectl apply -f cohort-cycle.yaml >/dev/null 2>&1
cycle_inactive() {
	local s
	s=$(active_of cq-cycle)
	echo "$s"
	[[ $s == False\ * ]] && grep -qi cycle <<<"$s"
}
if wait_until "$T" cycle_inactive; then
	pass "cohort cycle: cq-cycle inactive, the message names the cycle ($(active_of cq-cycle))"
else
	fail "cohort cycle: cq-cycle inactive, the message names the cycle" \
		"Active: $(active_of cq-cycle)"
fi
kubectl patch cohort cyc-y --type=merge -p '{"spec":{"parentName":null}}' >/dev/null 2>&1
expect_eventually "cycle broken: cq-cycle active" "$T" \
	"True Ready: Can admit new workloads" active_of cq-cycle
# A TAS flavor whose Topology does not exist; an admission check cueue
# does not run (Kueue's reasons and messages).
kubectl apply -f tas-checks.yaml >/dev/null 2>&1
expect_eventually "missing Topology: cq-tas inactive (TopologyNotFound)" "$T" \
	"False TopologyNotFound: Can't admit new workloads: there is no Topology \"dc-topology\" for TAS flavor \"tas-flavor\"." \
	active_of cq-tas
expect "create the Topology" 0 kubectl apply -f topology.yaml <<<'topology.kueue.x-k8s.io/dc-topology created'
expect_eventually "Topology created: cq-tas active" "$T" \
	"True Ready: Can admit new workloads" active_of cq-tas
expect_eventually "missing AdmissionCheck: cq-checked inactive (AdmissionCheckNotFound)" "$T" \
	"False AdmissionCheckNotFound: Can't admit new workloads: references missing AdmissionCheck(s): prov-check." \
	active_of cq-checked
expect "create the AdmissionCheck" 0 kubectl apply -f admissioncheck.yaml <<<'admissioncheck.kueue.x-k8s.io/prov-check created'
expect_eventually "the AdmissionCheck exists: still inactive, cueue runs no check (AdmissionCheckInactive)" "$T" \
	"False AdmissionCheckInactive: Can't admit new workloads: references inactive AdmissionCheck(s): prov-check." \
	active_of cq-checked
expect "delete the Topology" 0 kubectl delete topology dc-topology <<<'topology.kueue.x-k8s.io "dc-topology" deleted'
expect_eventually "Topology deleted: cq-tas inactive again" "$T" \
	"False TopologyNotFound: Can't admit new workloads: there is no Topology \"dc-topology\" for TAS flavor \"tas-flavor\"." \
	active_of cq-tas
match "the manager still runs" 0 '^manager: running' "$devcluster" status "$cluster"
invariants "after bad objects" --status

# ---------------------------------------------------------------------
# 6. Manager restart: admitted and pending workloads as they were.

wl wc user-queue 5 | kubectl create -f - >/dev/null 2>&1
expect_eventually "wc (5 cpu) pending in cluster-queue" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 2 more needed" \
	pending_msg wc
view() {
	kubectl get workloads -o custom-columns='NAME:.metadata.name,RV:.metadata.resourceVersion,CQ:.status.admission.clusterQueue,FLAVORS:.status.admission.podSetAssignments[*].flavors,RESERVED:.status.conditions[?(@.type=="QuotaReserved")].status,SINCE:.status.conditions[?(@.type=="QuotaReserved")].lastTransitionTime,FINISHED:.status.conditions[?(@.type=="Finished")].status' 2>&1
	kubectl get clusterqueues,localqueues -A -o custom-columns='NAME:.metadata.name,PENDING:.status.pendingWorkloads,RESERVING:.status.reservingWorkloads,ADMITTED:.status.admittedWorkloads,RESERVATION:.status.flavorsReservation' 2>&1
}
invariants "before restart" --status
# The checker is not vacuous on kubectl's JSON: the same state with
# cluster-queue's 9 cpu lowered to 5 (6 are in use) is a violation.
sed -E 's/("nominalQuota": )"?9"?([,}]|$)/\1"5"\2/' "$work/snap.json" >"$work/snap-lowered.json"
match "invariants: a lowered quota in the same JSON is caught" 1 \
	'^ClusterQueue cluster-queue: flavor default-flavor resource cpu: usage 6 exceeds nominal quota 5$' \
	"$inv_bin" "$work/snap-lowered.json"
view >"$work/view-before"
run_cmd "$devcluster" restart-manager "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "devcluster restart-manager"
else
	fail "devcluster restart-manager" "exit $rc: $out"
fi
# The restarted manager has listed everything once pending wc carries its
# condition again and the counts are back; give it a moment to misbehave.
sleep 2
view >"$work/view-after"
if diff -u "$work/view-before" "$work/view-after" >"$work/view-diff"; then
	pass "restart: no workload written again, counts identical"
else
	fail "restart: no workload written again, counts identical" "$(cat "$work/view-diff")"
fi
invariants "after restart" --status

# While the manager is down, w2 finishes: the new manager admits wc.
kill -TERM "$(cat "$cluster/manager.pid")" 2>/dev/null
wait_until 100 bash -c "! kill -0 $(cat "$cluster/manager.pid") 2>/dev/null"
finish w2
run_cmd "$devcluster" start "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "devcluster start (manager only) after a stop"
else
	fail "devcluster start (manager only) after a stop" "exit $rc: $out"
fi
expect_eventually "wc admitted by the new manager" "$T" 'True cluster-queue {"cpu":"default-flavor"}' admission_of wc
expect_eventually "cluster-queue counts after catching up" "$T" "0 2 2" \
	jp clusterqueue/cluster-queue '{.status.pendingWorkloads} {.status.reservingWorkloads} {.status.admittedWorkloads}'
invariants "manager caught up" --status

# ---------------------------------------------------------------------
# 7. Load: 200 workloads of random sizes over 6 ClusterQueues in 2
#    cohorts, created at once; invariants at every poll; finished in
#    batches until none is left.

kubectl apply -f heavy.yaml >/dev/null 2>&1
RANDOM=4242 # the same sizes every run
queues=(h1a h1b h1c h2a h2b h2c)
for i in $(seq 1 200); do
	q=${queues[RANDOM % 6]}
	cpu=$((RANDOM % 4 + 1))
	[ $((RANDOM % 3)) -eq 0 ] && cpu=$((cpu * 1000 - 500))m
	wl "load-$i" "lq-$q" "$cpu" "$((RANDOM % 4 + 1))Gi"
done >"$work/load.yaml"
t0=$(date +%s%N)
run_cmd kubectl create -f "$work/load.yaml"
if [ "$rc" -eq 0 ] && [ "$(grep -c ' created$' <<<"$out")" -eq 200 ]; then
	pass "load: 200 workloads created ($((($(date +%s%N) - t0) / 1000000)) ms)"
else
	fail "load: 200 workloads created" "$(tail -5 <<<"$out")"
fi

# poll LABEL: one snapshot, the checker with --counts on it (one failed
# check for each of the first three polls that break an invariant); sets
# $counts, $holding (names of workloads holding quota), $finished.
bad_polls=0
polls=0
poll() {
	snapshot "$work/load.json" || return 1
	run_cmd "$inv_bin" --counts "$work/load.json"
	polls=$((polls + 1))
	if [ "$rc" -ne 0 ]; then
		bad_polls=$((bad_polls + 1))
		[ "$bad_polls" -le 3 ] && fail "load: invariants at a poll ($1)" "$out"
	fi
	counts=$(sed -n 's/^counts: //p' <<<"$out")
	holding=$(sed -n 's/^holding: *//p' <<<"$out")
	finished=$(sed -n 's/.*finished=\([0-9]*\).*/\1/p' <<<"$counts")
}
# Quiet: every workload holds quota, is pending with its condition or is
# finished, and three polls in a row agree. A poll (a snapshot of 200
# workloads and the checker) takes seconds when the other suites load the
# machine, so the deadline is 90 s; the loop ends at the third agreeing
# poll.
quiet=0
prev=
end=$((SECONDS + 90))
while [ "$SECONDS" -lt "$end" ]; do
	poll "after creation"
	if [[ $counts == *unmarked=0 ]] && [ "$counts" = "$prev" ]; then
		quiet=$((quiet + 1))
		[ "$quiet" -ge 2 ] && break
	else
		quiet=0
	fi
	prev=$counts
	sleep 0.3
done
unmarked_names() {
	kubectl get workloads -o custom-columns='NAME:.metadata.name,R:.status.conditions[?(@.type=="QuotaReserved")].status' --no-headers 2>&1 |
		awk '$2 == "<none>" { print $1 }' | paste -sd' ' -
}
if [ "$quiet" -ge 2 ]; then
	pass "load: quiet after creation ($counts)"
else
	fail "load: quiet after creation (every workload admitted or pending with a message)" \
		"last counts: $counts; without a QuotaReserved condition: $(unmarked_names)"
fi
invariants "load quiet" --status
# Finish whatever load workload holds quota, poll, repeat, until all 200
# are finished (w1, w2 and wa2 of the earlier sections are finished too)
# or no poll has shown a change for 8 s. The 8 s count from the end of the
# last poll that showed one: a poll takes seconds when the machine is
# loaded, so counting from the finishing instead ended the loop while the
# poll that would show the next batch admitted was still running.
rounds=0
prev=$counts
last_change=$SECONDS
while [ "${finished:-0}" -lt 203 ] && [ $((SECONDS - last_change)) -lt 8 ]; do
	load_holding=$(tr ' ' '\n' <<<"$holding" | grep '^load-' | paste -sd' ' -)
	if [ -n "$load_holding" ]; then
		rounds=$((rounds + 1))
		# shellcheck disable=SC2086 # names
		finish_many $load_holding
	fi
	sleep 0.3
	poll "round $rounds"
	[ "$counts" = "$prev" ] || last_change=$SECONDS
	prev=$counts
done
if [ "${finished:-0}" -eq 203 ]; then
	pass "load: all 200 admitted and finished in $rounds rounds"
else
	fail "load: all 200 admitted and finished" "rounds $rounds; last counts: $counts"
fi
if [ "$bad_polls" -eq 0 ]; then
	pass "load: invariants held at all $polls polls"
else
	fail "load: invariants held at all $polls polls" "$bad_polls polls failed"
fi
invariants "load finished" --status

# The manager logs each reservation once at debug (controller/manager_wl.c:
# object=NS/NAME msg="quota reserved in ClusterQueue CQ"); across both
# restarts and the load, no workload may have been reserved twice.
reserved_lines=$(grep -o 'object=[^ ]* msg="quota reserved' "$cluster/manager.log")
twice=$(sort <<<"$reserved_lines" | uniq -d | sed 's/ msg=.*//' | paste -sd' ' -)
if [ "$(grep -c . <<<"$reserved_lines")" -lt 200 ]; then
	fail "manager log: no workload reserved twice" \
		"only $(grep -c . <<<"$reserved_lines") 'quota reserved' lines: did the log format change?"
elif [ -n "$twice" ]; then
	fail "manager log: no workload reserved twice" "reserved more than once: $twice"
else
	pass "manager log: no workload reserved twice ($(grep -c . <<<"$reserved_lines") reservations)"
fi

# ---------------------------------------------------------------------
# 8. Stop: both processes end on SIGTERM.

devcluster_stop
match "devcluster status after stop" 1 '^manager: stopped' "$devcluster" status "$cluster"
run_cmd "$devcluster" stop "$cluster"
if [ "$rc" -eq 0 ]; then pass "devcluster stop again (idempotent)"; else fail "devcluster stop again" "exit $rc: $out"; fi
e2e_finish
