#!/usr/bin/env bash
# test/chaos/chaos.sh: the chaos suite (issue 19): two manager replicas
# under faults, with the invariants proven on every state a recorded
# watch saw. See test/chaos/README.md.
#
#   chaos.sh [--profile short|full] [--seed N] [--baseline] [--no-faults]
#            [--summary FILE]
#
# One run: a devcluster with 2 replicas (test/chaos/config.yaml: leader
# election 15 s / 10 s / 2 s, waitForPodsReady 30 s, backoffLimitCount
# 1), the devserver's fault injection (a fixed seed), the queues of
# setup.yaml, record.py recording Workloads, Jobs and the Lease from the
# start, and stream.py's Jobs (the same plan for a seed and a profile).
# Meanwhile the driver, one loop:
#  - kills the leader (SIGKILL), stops it (SIGTERM) or restarts the
#    devserver (SIGTERM, then started again on its data dir), in a seeded
#    order, each a seeded few seconds after the previous one was over (a
#    leader leads again and both replicas run): short 3 / 1 / 1, full
#    20 / 5 / 3;
#  - restarts, as kubelet would, every replica that exited: the ones it
#    killed or stopped a second later, and any that exited on its own (a
#    leader that could not renew its Lease for renewDeadline exits 1:
#    logged "exiting: leader election lost"; any other exit fails);
#  - takes a snapshot every few seconds and runs cueue-invariants on it.
# Then it waits until every Job that can end did, checks the quiet
# cluster (cueue-invariants --status), stops the recorder (its final
# list), the cluster, and runs check.py on the recording: every observed
# state, no double admission, every preemption justified, no Job lost;
# and the figures (failover times, faults survived, throughput).
#
# --baseline first plays the same stream on a quiet cluster (no faults,
# no kills) for the throughput comparison. --no-faults turns the
# devserver's fault injection off (the kills stay). --summary FILE
# writes the run's figures as the Markdown of test/chaos/RESULTS.md.
# CHAOS_DIR=DIR keeps everything in DIR (else a /tmp directory, removed
# on success unless E2E_KEEP=1). MANAGER_BIN, DEVSERVER_BIN,
# INVARIANTS_BIN test other binaries.
#
# Prints one line per check and "N passed, M failed" last (lib.bash).
set -u
# shellcheck source=../e2e/lib.bash
. "$(dirname "$(readlink -f "$0")")/../e2e/lib.bash"

chaos_dir=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
cmdline="test/chaos/chaos.sh $*"
profile=short
seed=19
baseline=
faults=1
summary=
while [ $# -gt 0 ]; do
	case $1 in
	--profile) profile=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--baseline) baseline=1; shift ;;
	--no-faults) faults=; shift ;;
	--summary) summary=$2; shift 2 ;;
	*) echo "usage: chaos.sh [--profile short|full] [--seed N] [--baseline] [--no-faults] [--summary FILE]" >&2
	   exit 2 ;;
	esac
done
case $profile in
short)
	actions=(sigkill sigterm sigkill devserver sigkill)
	gap_min=2 gap_rand=4     # seconds after recovery, before an action
	snap_every=10            # seconds between snapshots
	drain_s=240              # the end: Jobs left to end within this
	fault_args=(--fault-429 0.01 --fault-500 0.005 --fault-watch-drop 0.002
		--fault-gone 0.2 --fault-slow 0.01:200ms --fault-webhook-timeout 0.02)
	;;
full)
	actions=()
	for _ in $(seq 20); do actions+=(sigkill); done
	for _ in $(seq 5); do actions+=(sigterm); done
	for _ in $(seq 3); do actions+=(devserver); done
	gap_min=4 gap_rand=10
	snap_every=20
	drain_s=900
	fault_args=(--fault-429 0.02 --fault-500 0.01 --fault-watch-drop 0.005
		--fault-gone 0.3 --fault-slow 0.02:300ms --fault-webhook-timeout 0.03)
	;;
*) echo "chaos.sh: --profile short or full" >&2; exit 2 ;;
esac

if [ -n "${CHAOS_DIR:-}" ]; then
	mkdir -p "$CHAOS_DIR" && work=$(cd "$CHAOS_DIR" && pwd)
	trap e2e_cleanup EXIT
	trap 'exit 130' INT TERM
	E2E_KEEP=1
else
	e2e_init chaos
fi
inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
export KUBECACHEDIR=$work/kcache
for b in "$inv_bin" "$manager_src" "$devserver_bin"; do
	if [ ! -x "$b" ]; then
		fail "binaries built" "$b missing (run make all)"
		e2e_finish
	fi
done
# copies: a rebuild during the run cannot swap them
cp "$manager_src" "$work/cueue-manager"
cp "$devserver_bin" "$work/cueue-devserver"
export MANAGER_BIN=$work/cueue-manager DEVSERVER_BIN=$work/cueue-devserver
export DEVCLUSTER_CONFIG=$chaos_dir/config.yaml
export DEVCLUSTER_JOB_RUNTIME=5s
export DEVCLUSTER_STOP_TIMEOUT=15
on_exit_stop_clusters "$work/quiet/cluster" "$work/chaos/cluster"
# the interpreter itself for the background helpers, so that their pid
# is the process a signal must reach (python3 is lib.bash's function)
py=${E2E_PYTHON:-$(command -v python3)}
has_faults=
"$DEVSERVER_BIN" --help 2>&1 | grep -q -- '--fault-seed' && has_faults=1

# ---------------------------------------------------------------------
# Helpers

# now: wall clock, seconds with microseconds (python's time.time()).
now() {
	echo "$EPOCHREALTIME"
}
# elapsed T0: whole seconds since T0 (a `now`).
elapsed() {
	local a=${EPOCHREALTIME%.*} b=${1%.*}
	echo $((a - b))
}
# note JSON-FIELDS [T]: one line in $run/actions.log, with "t" (T or now).
note() {
	printf '{"t": %s, %s}\n' "${2:-$(now)}" "$1" >>"$run/actions.log"
}
# stem R: the devcluster file stem of replica R.
stem() {
	if [ "$1" = 1 ]; then echo manager; else echo "manager-$1"; fi
}
# pid_alive PIDFILE
pid_alive() {
	local pid
	[ -s "$1" ] || return 1
	pid=$(cat "$1")
	case $(ps -o stat= -p "$pid" 2>/dev/null) in
	'' | Z*) return 1 ;;
	esac
}
# leader: "R PID HOLDER" of the replica holding the Lease (record.py
# keeps $run/rec/leader), when that process runs.
leader() {
	local h r pid
	read -r h _ <"$run/rec/leader" 2>/dev/null || return 1
	[[ $h =~ _([0-9]+)_[0-9a-f]{8}$ ]] || return 1
	pid=${BASH_REMATCH[1]}
	for r in 1 2; do
		if [ "$(cat "$cl/$(stem "$r").pid" 2>/dev/null)" = "$pid" ] &&
			pid_alive "$cl/$(stem "$r").pid"; then
			echo "$r $pid $h"
			return 0
		fi
	done
	return 1
}
# retry N CMD...: CMD until it succeeds, at most N times, 1 s apart
# (kubectl through the faults: 500s are not retried by client-go).
retry() {
	local n=$1 i
	shift
	for i in $(seq "$n"); do
		run_cmd "$@"
		[ "$rc" -eq 0 ] && return 0
		sleep 1
	done
	return 1
}

# expected[R]=1 while replica R is down because the driver stopped it
# (restarted when $restart_at[R] has passed).
declare -A expected=() restart_at=()
exits_own=0
exits_bad=()
# supervise: restarts the replicas that are not running, as kubelet
# would: one the driver stopped once its restart time came, one that
# exited on its own at once (noted in actions.log with its reason).
supervise() {
	local r pf lf down=0 why tail
	pid_alive "$cl/devserver.pid" || return 0
	for r in 1 2; do
		pf=$cl/$(stem "$r").pid lf=$cl/$(stem "$r").log
		pid_alive "$pf" && continue
		if [ -n "${expected[$r]:-}" ]; then
			[ "$(elapsed "${restart_at[$r]}")" -ge 0 ] || continue
			unset "expected[$r]"
		elif [ -s "$pf" ]; then
			# exited on its own: the last run's log says why
			tail=$(tail -n 40 "$lf" | grep -v '^===' | tail -n 5)
			if grep -q 'exiting: leader election lost' <<<"$tail"; then
				why=lease-lost
				exits_own=$((exits_own + 1))
			else
				why=crash
				exits_bad+=("$(stem "$r") (pid $(cat "$pf")): $tail")
			fi
			note "\"action\": \"exit\", \"replica\": $r, \"why\": \"$why\""
			rm -f "$pf"
		fi
		down=1
	done
	[ "$down" = 1 ] || return 0
	"$devcluster" start "$cl" >>"$run/supervise.log" 2>&1 ||
		echo "supervise: devcluster start failed at $(date +%T)" >>"$run/supervise.log"
}

snaps=0
snaps_bad=()
last_snap=0
# snapshot_check: every $snap_every s, a snapshot through cueue-invariants.
snapshot_check() {
	[ "$(elapsed "$last_snap")" -ge "$snap_every" ] || return 0
	last_snap=$(now)
	python3 "$chaos_dir/snap.py" snapshot "$cl/kubeconfig" "$run/snap.json" \
		2>>"$run/snap.err" || return 0
	snaps=$((snaps + 1))
	run_cmd "$inv_bin" "$run/snap.json"
	if [ "$rc" -ne 0 ]; then
		cp "$run/snap.json" "$run/snap-$snaps.json"
		snaps_bad+=("snapshot $snaps (snap-$snaps.json): $out")
	fi
}

# final_invariants NAME: cueue-invariants --status on a snapshot, for up
# to 10 s (the manager writes a queue's status at most once a second).
final_invariants() {
	local end=$(($(now_ms) + 10000))
	while :; do
		if python3 "$chaos_dir/snap.py" snapshot "$cl/kubeconfig" \
			"$run/final.json" 2>>"$run/snap.err"; then
			run_cmd "$inv_bin" --status "$run/final.json"
		else
			rc=1 out="snap.py failed: $(tail -3 "$run/snap.err")"
		fi
		[ "$rc" -eq 0 ] && break
		[ "$(now_ms)" -lt "$end" ] || break
		sleep 0.5
	done
	if [ "$rc" -eq 0 ]; then pass "$1"; else fail "$1" "$out"; fi
}

# tick: one turn of the loop's duties.
tick() {
	supervise
	snapshot_check
	sleep 0.5
}

# wait_recovered: until both replicas run and one of them leads.
wait_recovered() {
	local end=$(($(now_ms) + 120000))
	while [ "$(now_ms)" -lt "$end" ]; do
		tick
		pid_alive "$cl/manager.pid" && pid_alive "$cl/manager-2.pid" &&
			leader >/dev/null && return 0
	done
	return 1
}

# act KIND: one chaos action.
act() {
	local kind=$1 l r pid h t0 i
	if [ "$kind" = devserver ]; then
		local t_stopped t_up dc
		t0=$(now)
		pid=$(cat "$cl/devserver.pid")
		kill -TERM "$pid"
		for i in $(seq 100); do
			pid_alive "$cl/devserver.pid" || break
			sleep 0.05
		done
		t_stopped=$(now)
		rm -f "$cl/devserver.out"
		fault_seed=$((fault_seed + 1))
		set_devserver_args
		# the devserver only: the replicas that exit meanwhile (a
		# leader that cannot renew) are supervise's, which notes why
		DEVCLUSTER_NO_MANAGER=1 "$devcluster" start "$cl" >>"$run/supervise.log" 2>&1 &
		dc=$!
		for i in $(seq 600); do
			grep -q '^listening on' "$cl/devserver.out" 2>/dev/null && break
			sleep 0.05
		done
		t_up=$(now)
		wait "$dc"
		note "\"action\": \"devserver\", \"t_up\": $t_up, \"pid\": $pid, \"stop_s\": $(awk -v a="$t0" -v b="$t_stopped" 'BEGIN { printf "%.2f", b - a }'), \"down_s\": $(awk -v a="$t0" -v b="$t_up" 'BEGIN { printf "%.2f", b - a }')" "$t0"
		return
	fi
	l=$(leader) || return 1
	read -r r pid h <<<"$l"
	if [ "$kind" = sigkill ]; then
		note "\"action\": \"sigkill\", \"replica\": $r, \"pid\": $pid, \"holder\": \"$h\""
		kill -KILL "$pid"
	else
		note "\"action\": \"sigterm\", \"replica\": $r, \"pid\": $pid, \"holder\": \"$h\""
		kill -TERM "$pid"
	fi
	expected[$r]=1
	# kubelet starts the container again about a second later
	restart_at[$r]=$(($(date +%s) + 1))
}

fault_seed=$seed
set_devserver_args() {
	if [ "$mode" = chaos ] && [ -n "$faults" ] && [ -n "$has_faults" ]; then
		DEVCLUSTER_DEVSERVER_ARGS="--fault-seed $fault_seed ${fault_args[*]}"
	else
		DEVCLUSTER_DEVSERVER_ARGS=
	fi
	export DEVCLUSTER_DEVSERVER_ARGS
}

# play MODE: one run (quiet or chaos) in $work/MODE; the checks of a
# chaos run; the figures in $work/MODE/results.json.
play() {
	mode=$1
	run=$work/$mode
	cl=$run/cluster
	local t_start rec_pid stream_pid i a prog label
	label=$mode
	mkdir -p "$run/rec"
	: >"$run/actions.log"
	t_start=$(now)
	fault_seed=$seed
	set_devserver_args
	run_cmd "$devcluster" start "$cl" --replicas 2
	if [ "$rc" -ne 0 ]; then
		fail "$label: devcluster start (2 replicas)" "$out"
		e2e_finish
	fi
	pass "$label: devcluster start (2 replicas${DEVCLUSTER_DEVSERVER_ARGS:+, devserver $DEVCLUSTER_DEVSERVER_ARGS})"
	export KUBECONFIG=$cl/kubeconfig
	e2e_bg "$py" "$chaos_dir/record.py" "$cl/kubeconfig" "$run/rec" \
		workloads=/apis/kueue.x-k8s.io/v1beta2/workloads \
		jobs=/apis/batch/v1/jobs \
		leases=/apis/coordination.k8s.io/v1/namespaces/cueue-system/leases \
		2>"$run/record.err"
	rec_pid=$e2e_bg_pid
	if retry 20 kubectl apply -f "$chaos_dir/setup.yaml"; then
		pass "$label: apply setup.yaml (cohort of 3 ClusterQueues, priorities)"
	else
		fail "$label: apply setup.yaml" "$out"
		e2e_finish
	fi
	active3() {
		[ "$(kubectl get clusterqueues -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Active")].status}{"\n"}{end}' 2>/dev/null |
			grep -c True)" = 3 ]
	}
	if wait_until 600 active3 &&
		retry 20 kubectl get clusterqueues,cohorts,resourceflavors,localqueues -A -o json &&
		printf '%s\n' "$out" >"$run/queues.json"; then
		pass "$label: ClusterQueues active"
	else
		fail "$label: ClusterQueues active" "$out"
		e2e_finish
	fi
	python3 "$chaos_dir/stream.py" plan "$profile" "$seed" >"$run/plan.json"
	e2e_bg "$py" "$chaos_dir/stream.py" run "$cl/kubeconfig" "$run/plan.json" \
		"$run/created.log" 2>"$run/stream.err"
	stream_pid=$e2e_bg_pid
	last_snap=$(now)
	if [ "$mode" = chaos ]; then
		for a in "${chaos_order[@]}"; do
			if ! wait_recovered; then
				fail "$label: recovered before the next action ($a)" \
					"$(tail -5 "$run/supervise.log"; "$devcluster" status "$cl")"
				break
			fi
			i=$((gap_min + RANDOM % (gap_rand + 1)))
			local end=$(($(now_ms) + i * 1000))
			while [ "$(now_ms)" -lt "$end" ]; do
				tick
			done
			# the leader may have changed meanwhile: act reads it now
			act "$a" || fail "$label: $a: no leader to act on"
		done
	fi
	# the end: every Job that can end does, the replicas still supervised
	local end=$(($(now_ms) + drain_s * 1000)) stream_done=
	while [ "$(now_ms)" -lt "$end" ]; do
		tick
		if [ -z "$stream_done" ] && ! kill -0 "$stream_pid" 2>/dev/null; then
			wait "$stream_pid"
			stream_done=1
		fi
		[ -n "$stream_done" ] || continue
		prog=$(python3 "$chaos_dir/snap.py" progress "$cl/kubeconfig" "$run/plan.json" 2>/dev/null)
		[ -n "$prog" ] && [ "${prog% *}" = "${prog#* }" ] && break
	done
	if [ -n "$stream_done" ] && [ "${prog% *}" = "${prog#* }" ]; then
		pass "$label: every Job that can end did ($prog) within ${drain_s}s of the last action"
	else
		fail "$label: every Job that can end did within ${drain_s}s of the last action" \
			"done/total: ${prog:-?}; stream: ${stream_done:-still running}"
	fi
	if [ "${#snaps_bad[@]}" -eq 0 ]; then
		pass "$label: cueue-invariants on $snaps snapshots during the run"
	else
		fail "$label: cueue-invariants on $snaps snapshots during the run" \
			"$(printf '%s\n' "${snaps_bad[@]}")"
	fi
	snaps=0 snaps_bad=()
	wait_recovered >/dev/null
	final_invariants "$label: cueue-invariants --status on the quiet cluster at the end"
	if [ "${#exits_bad[@]}" -eq 0 ]; then
		pass "$label: no replica exited but by the driver or a lost Lease ($exits_own lost)"
	else
		fail "$label: no replica exited but by the driver or a lost Lease" \
			"$(printf '%s\n' "${exits_bad[@]}")"
	fi
	exits_own_of[$mode]=$exits_own
	exits_own=0 exits_bad=()
	kill -TERM "$rec_pid"
	wait "$rec_pid"
	run_cmd "$devcluster" stop "$cl"
	[ "$rc" -eq 0 ] || fail "$label: devcluster stop" "$out"
	if grep -Eiq 'AddressSanitizer|runtime error:|BUG at|Assertion .* failed' \
		"$cl"/manager*.log "$cl/devserver.log"; then
		fail "$label: no sanitizer report, BUG or assertion in the logs" \
			"$(grep -Ei 'AddressSanitizer|runtime error:|BUG at|Assertion .* failed' "$cl"/manager*.log "$cl/devserver.log" | head)"
	fi
	# the faults the devserver injected, summed over its runs (it reports
	# them at exit: "fault NAME: N injected of M (rate R)")
	sed -nE 's/^(cueue-devserver: )?fault ([a-z0-9-]+): ([0-9]+) injected of ([0-9]+).*/\2 \3 \4/p' \
		"$cl/devserver.log" |
		awk '{ n[$1] += $2; c[$1] += $3 }
		END { for (k in n) printf "%s %d %d\n", k, n[k], c[k] }' |
		sort >"$run/faults.txt"
	run_cmd python3 "$chaos_dir/check.py" "$inv_bin" "$run"
	# its lines as this suite's: the counts follow
	while IFS= read -r line; do
		case $line in
		'ok   '*) pass "$label: ${line#ok   }" ;;
		'FAIL '*) failed=$((failed + 1))
			printf 'FAIL %s: %s\n' "$label" "${line#FAIL }" ;;
		*) printf '%s\n' "$line" ;;
		esac
	done <<<"$out"
	grep -q '^\(ok\|FAIL\) ' <<<"$out" ||
		fail "$label: check.py ran" "$out"
	run_seconds[$mode]=$(elapsed "$t_start")
}

# the chaos actions in a seeded order
RANDOM=$seed
chaos_order=()
mapfile -t chaos_order < <(for a in "${actions[@]}"; do echo "$RANDOM $a"; done |
	sort -n | cut -d' ' -f2)
declare -A run_seconds=() exits_own_of=()

[ -n "$baseline" ] && play quiet
RANDOM=$seed
play chaos

# ---------------------------------------------------------------------
# The figures
python3 "$chaos_dir/report.py" "$work" "$profile" "$seed" \
	"${run_seconds[quiet]:-}" "${run_seconds[chaos]:-}" \
	"${exits_own_of[chaos]:-0}" "$cmdline" >"$work/summary.md" 2>"$work/report.err" ||
	fail "report.py" "$(cat "$work/report.err")"
sed 's/^/     # /' "$work/summary.md"
[ -n "$summary" ] && cp "$work/summary.md" "$summary"
[ "$failed" -eq 0 ] || E2E_KEEP=1
[ -z "${E2E_KEEP:-}" ] || echo "     # run directory: $work"
e2e_finish
