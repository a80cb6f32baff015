#!/usr/bin/env bash
# demo: `make demo`'s driver (demo/demo.sh) run as a script would run it,
# with no terminal (stdin </dev/null, stdout a file) and a short stream
# (DEMO_JOBS=12 over 2 s, runtimes x0.15) in a temporary state dir:
#  - it exits 0 and prints plain periodic lines (no ANSI), the summary
#    with plausible numbers and the kubectl hints;
#  - every Job finished: the summary says so, and the cluster's store,
#    read back afterwards with the devserver alone, has 12 Jobs Complete;
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
export DEMO_STATE=$state DEMO_JOBS=12 DEMO_SPAN=2 DEMO_RUNTIME_SCALE=0.15 \
	DEMO_INTERVAL=500 DEMO_TIMEOUT=40
export KUBECACHEDIR=$work/kcache

on_exit_stop_clusters "$state"

# leftovers: processes whose command line names the state dir (the
# devserver's --data-dir, the manager's and cueue-demo's --kubeconfig)
leftovers() {
	pgrep -af -- "$state/" 2>/dev/null | grep -v pgrep
}

# run N: the driver, non-interactively; output in $work/run-N.out
run_demo() {
	"$e2e_top/demo/demo.sh" </dev/null >"$work/run-$1.out" 2>&1
	echo "$?" >"$work/run-$1.rc"
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
	elif [ "$(grep -c '^\[t+ *[0-9.]*s\] jobs [0-9]*/12 created' "$out")" -ge 2 ]; then
		pass "run $n: plain periodic lines, no ANSI escapes"
	else
		fail "run $n: plain periodic lines, no ANSI escapes" "$(head -20 "$out")"
	fi
	line=$(grep '^jobs: ' "$out")
	if [[ $line =~ ^jobs:\ 12\ planned,\ 12\ created,\ 12\ admitted,\ 12\ finished,\ 0\ failed,\ in\ ([0-9]+)\.[0-9]s$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -lt 40 ]; then
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
	if [ "$ok" = 1 ] && [ "$sum_jobs" = 12 ]; then
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
	if [ "$sum_fl" = 12 ] && ! grep -q '^dash: ' "$out" &&
		{ [ "${BASH_REMATCH[1]}" = 0 ] || [ "$peak_h100" -gt 0 ]; } &&
		{ [ "${BASH_REMATCH[2]}" = 0 ] || [ "$peak_a100" -gt 0 ]; }; then
		pass "run $n: summary: admissions by flavor, each counted in use"
	else
		fail "run $n: summary: admissions by flavor, each counted in use" "got: $line; $(grep "^dash: " "$out")"
	fi
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

run_demo 1
check_run 1

# The store outlives the run: read it back with the devserver alone
# (no manager, so nothing changes) and count the Complete Jobs. That
# cluster stays up for the second run to find and stop.
if DEVCLUSTER_NO_MANAGER=1 "$devcluster" start "$state" >/dev/null 2>&1; then
	got=$(KUBECONFIG=$state/kubeconfig kubectl get jobs -A \
		-l app.kubernetes.io/part-of=cueue-demo -o \
		jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Complete")].status}{" "}{.spec.suspend}{"\n"}{end}' 2>&1 |
		sort | uniq -c | sed 's/^ *//')
	if [ "$got" = "12 True false" ]; then
		pass "the store holds 12 demo Jobs, all unsuspended and Complete"
	else
		fail "the store holds 12 demo Jobs, all unsuspended and Complete" "got: $got"
	fi
else
	fail "the store holds 12 demo Jobs, all unsuspended and Complete" "devcluster start (devserver only) failed"
fi

run_demo 2
check_run 2
if grep -q '^cueue-demo: 12 Jobs over' "$work/run-2.out" &&
	[ "$(grep -c '^== cueue demo summary ==$' "$work/run-2.out")" = 1 ]; then
	pass "run 2 started fresh over a cluster left running"
else
	fail "run 2 started fresh over a cluster left running" "$(head -10 "$work/run-2.out")"
fi
e2e_finish
