#!/usr/bin/env bash
# run.sh: the benchmark driver behind `make bench`, `make bench QUICK=1`
# and `make bench-quick` (the reduced run `make check` does once to keep
# the harness alive).
#
# It builds nothing (`make bench` depends on `all`): it runs every bench
# program in the table below, collects their rows, prints one table, and
# unless BENCH_NO_WRITE=1 rewrites the generated block of BENCHMARKS.md
# (between the bench:begin and bench:end markers; text outside them is
# written by hand and kept). It ends with "N passed, M failed", counting
# programs that ran to completion (exit 0) against those that crashed,
# failed a correctness check or timed out. No performance threshold is
# asserted anywhere.
#
# The protocol a bench program follows:
#   - stdout: one line per figure,
#       ROW<TAB>what<TAB>figure<TAB>unit<TAB>anchor<TAB>ratio<TAB>note
#     anchor is the Kueue (or Kubernetes) figure for the same scenario and
#     ratio ours/anchor, each "—" when there is none; note says in one
#     line how the figure is measured. Other stdout lines are ignored.
#   - stderr: progress, shown as it comes (a full run takes minutes).
#   - QUICK=1 in the environment: the reduced run; all programs together
#     stay under 60 s.
#   - exit 0 when it ran to completion and its own checks held.
#
# The devserver binary is copied once at the start, so a build that
# replaces bin/cueue-devserver mid-run (say, a CFG=asan build in another
# shell: bin/ is shared by every build config) cannot mix two binaries into
# one table. A sanitizer-built devserver still runs (the harness stays
# alive) but BENCHMARKS.md is then left alone: its figures would be the
# sanitizer's.
#
# Environment: QUICK, BENCH_NO_WRITE, BENCH_JOBS (below), BENCH_BUILD (the Makefile sets it to
# $(BUILD); default build/default), BENCH_DEVSERVER (default
# bin/cueue-devserver), BENCH_CMD (the command to record; default:
# reconstructed from MAKELEVEL and QUICK).
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BENCH_BUILD:-$top/build/default}

# `run.sh --scenario NAME`: one scenario-bench run (test/bench/scenario.c,
# Kueue's scheduler performance scenarios) on a devcluster of its own,
# started in a temp dir and stopped on any exit; the table below calls it.
# The manager runs at --kube-api-qps $BENCH_SCENARIO_QPS (default 1000;
# 2000 for large, below) and --kube-api-burst $BENCH_SCENARIO_BURST
# (default 2000; 4000 for large) (Kueue's runner: 50/100), and without the webhook
# (DEVCLUSTER_WEBHOOK=0), as Kueue's minimalkueue runs without one.
# DEVSERVER_BIN and MANAGER_BIN (default: bin/ of this tree) pick the
# binaries. `run.sh --deepq` runs deepq-bench (test/bench/deepq.c: one
# ClusterQueue 100 / 1,000 / 10,000 deep) the same way.
if [ "${1:-}" = --scenario ] || [ "${1:-}" = --deepq ]; then
	scenario=deepq
	[ "$1" = --scenario ] && scenario=${2:?usage: run.sh --scenario NAME}
	sdir=$(mktemp -d "${TMPDIR:-/tmp}/bench-scenario.XXXXXX")
	spid=""
	scenario_cleanup() {
		[ -n "$spid" ] && kill "$spid" 2>/dev/null
		"$top/test/e2e/devcluster" stop "$sdir" >/dev/null 2>&1
		# BENCH_KEEP=1 keeps the cluster's dir (logs) for a look
		if [ -n "${BENCH_KEEP:-}" ]; then
			echo "bench: kept $sdir" >&2
		else
			rm -rf "$sdir"
		fi
	}
	trap scenario_cleanup EXIT
	trap 'exit 143' TERM INT
	export DEVCLUSTER_WEBHOOK=0
	# The large scale runs the manager at 2000/4000: its 50,000
	# admission writes alone take 50 s at 1000 requests a second, so
	# the 60 s aim is out of reach at 1000 whatever the scheduler does
	# (measured: 64.7 s at 1000, 52.1 s at 2000). The row states it.
	qps=1000 burst=2000
	[ "$scenario" = large ] && qps=2000 burst=4000
	export DEVCLUSTER_MANAGER_ARGS="--kube-api-qps ${BENCH_SCENARIO_QPS:-$qps}
		--kube-api-burst ${BENCH_SCENARIO_BURST:-$burst}"
	"$top/test/e2e/devcluster" start "$sdir" >/dev/null || exit 1
	if [ "$scenario" = deepq ]; then
		"$build/deepq-bench" --cluster "$sdir" &
	else
		"$build/scenario-bench" --cluster "$sdir" --scenario "$scenario" &
	fi
	spid=$!
	wait "$spid"
	rc=$?
	spid=""
	exit "$rc"
fi
quick=0
[ "${QUICK:-}" = 1 ] && quick=1
export QUICK=$quick
[ "$quick" = 1 ] || unset QUICK

work=$(mktemp -d "${TMPDIR:-/tmp}/bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# BENCH_JOBS=N runs N programs at a time (make bench-quick: 2), each
# program's stderr shown when it ends; their figures are then those of a
# machine they share, so a run that writes BENCHMARKS.md runs them one at
# a time whatever BENCH_JOBS says.
njobs=${BENCH_JOBS:-1}
[ "${BENCH_NO_WRITE:-}" = 1 ] || njobs=1

devserver_src=${BENCH_DEVSERVER:-$top/bin/cueue-devserver}
devserver=$work/cueue-devserver
if ! cp "$devserver_src" "$devserver" 2>/dev/null; then
	echo "bench: no devserver at $devserver_src (make all builds it)" >&2
	devserver=$devserver_src
fi
# The scenario rows' devclusters run this same copy unless told otherwise.
export DEVSERVER_BIN=${DEVSERVER_BIN:-$devserver}
devserver_about="\`${devserver_src#"$top"/}\`"
if [ -f "$devserver" ]; then
	devserver_about="$devserver_about (sha256 $(sha256sum "$devserver" |
		cut -c1-12), built $(date -u -r "$devserver_src" \
		'+%Y-%m-%d %H:%M UTC'))"
fi
sanitizers=$(ldd "$devserver" 2>/dev/null |
	grep -oE 'lib(a|t|ub|l|m|hwa)san' | sort -u | tr '\n' ' ')
sanitizers=${sanitizers% }
if [ -z "$sanitizers" ] && [ -f "$devserver" ] &&
	grep -aqE '__(a|t|m|hwa)san_init|__ubsan_handle' "$devserver"; then
	sanitizers="static sanitizer runtime"
fi
if [ -n "$sanitizers" ]; then
	echo "bench: WARNING: $devserver_src links $sanitizers; its figures" \
		"are the sanitizer's, so BENCHMARKS.md is left alone" >&2
fi

# The bench programs, in run order (STYLE P11: a table, not code).
#   name | timeout in s (full run) | timeout in s (QUICK=1) | command
benches=(
	"devserver|900|50|$build/dsbench --devserver $devserver"
	# core-bench: flavors/sched in memory (drain of 46 workloads; Kueue's
	# 1,000-ClusterQueue / 50,000-workload shape; QUICK=1: 100 / 5,000;
	# one preemption decision at 10 / 100 / 1,000 candidates).
	"core|300|20|$build/core-bench"
	# fair-bench: fair sharing in flavors/sched (8 weighted queues
	# borrowing from one Cohort: share deviation, Jain's index,
	# utilisation, against the classical order; cost per admission at
	# 10 / 100 / 1,000 / 10,000 ClusterQueues; QUICK=1: 2,000
	# workloads, up to 1,000 ClusterQueues, about 10 s of CPU).
	"fair|600|60|$build/fair-bench"
	# scenario-bench: Kueue's test/performance/scheduler scenarios against
	# a devcluster (baseline 5x6 CQs / 15,000 workloads, large scale 10x100
	# CQs / 50,000); QUICK=1: one reduced scenario (1x3 CQs, 60 workloads).
	# A fresh devcluster per scenario (run.sh --scenario, above).
)
if [ "$quick" = 1 ]; then
	benches+=("scenario quick|60|60|$top/test/bench/run.sh --scenario quick")
else
	# timeouts: scenario-bench's own (600 s, 1200 s) plus a minute, so
	# that its own timeout reports what was still pending
	benches+=("scenario baseline|660|60|$top/test/bench/run.sh --scenario baseline"
		"scenario large|1260|60|$top/test/bench/run.sh --scenario large")
fi

# deepq: freed quota -> next admission with one ClusterQueue 100 / 1,000 /
# 10,000 deep, preemption on (test/bench/deepq.c); QUICK=1: 100 / 1,000.
benches+=("deepq|600|60|$top/test/bench/run.sh --deepq")

# podsready: waitForPodsReady (timeout 2 s, backoff 1 s / 4 s, limit 2)
# with 1,000 Workloads created directly, a tenth never ready, then the
# same without that tenth, on a devcluster of its own
# (test/bench/podsready.sh); QUICK=1: 100. Its own timeout is 120 s a
# phase (QUICK=1: 30 s); a full run takes about a minute.
benches+=("podsready|300|90|$top/test/bench/podsready.sh")

# jobpath: batch/v1 Jobs created through the TLS webhooks to Complete on a
# devcluster of its own (test/bench/jobpath.sh); QUICK=1: 60 Jobs.
benches+=("jobpath|360|60|$top/test/bench/jobpath.sh")
# cli: kubectl cueue (pending, explain, simulate, doctor) with 10,000
# pending workloads in 100 ClusterQueues on a devcluster of its own
# (test/bench/cli.sh); QUICK=1: 1,000 in 10.
benches+=("cli|600|90|$top/test/bench/cli.sh")
# webhook: the manager's webhook server in-process beside a bare TLS
# libmicrohttpd responder, same client load (test/bench/webhook_bench.c).
# scrape: an admission scenario quiet and with /metrics scraped in a
# tight loop, on fresh devclusters (test/bench/scrape.sh).
benches+=("webhook|120|30|$build/webhook-bench"
	"scrape|600|120|$top/test/bench/scrape.sh")

# BENCH_SKIP: an extended regex of bench names to leave out (e.g. the
# long large-scale scenario); the recorded command says so.
if [ -n "${BENCH_SKIP:-}" ]; then
	kept=()
	for b in "${benches[@]}"; do
		[[ ${b%%|*} =~ ^(${BENCH_SKIP})$ ]] || kept+=("$b")
	done
	benches=("${kept[@]}")
fi

if [ -n "${BENCH_CMD:-}" ]; then
	cmd=$BENCH_CMD
elif [ -n "${MAKELEVEL:-}" ]; then
	cmd="make bench"
	[ "$quick" = 1 ] && cmd="make bench QUICK=1"
	[ "${BENCH_NO_WRITE:-}" = 1 ] && cmd="make bench-quick"
	[ -n "${BENCH_SKIP:-}" ] && cmd="BENCH_SKIP='$BENCH_SKIP' $cmd"
else
	cmd="test/bench/run.sh"
	[ "$quick" = 1 ] && cmd="QUICK=1 $cmd"
fi

rows=$work/rows
: >"$rows"
passed=0
failed=0
failures=""
load0=$(cut -d' ' -f1-3 /proc/loadavg)
start=$SECONDS

echo "bench: $([ "$quick" = 1 ] && echo reduced || echo full) run," \
	"${#benches[@]} program(s); load average $load0"
# run_one I T ARGV...: program I under timeout T, stdout to out.I (and,
# when the programs run side by side, stderr to err.I); "rc seconds" to
# rc.I.
run_one() {
	local i=$1 t=$2 t0=$SECONDS rc
	shift 2
	if [ "$njobs" -gt 1 ]; then
		timeout --kill-after=10 "$t" "$@" >"$work/out.$i" 2>"$work/err.$i"
	else
		timeout --kill-after=10 "$t" "$@" >"$work/out.$i"
	fi
	rc=$?
	echo "$rc $((SECONDS - t0))" >"$work/rc.$i"
}

# collect I NAME T: program I's rows and verdict.
collect() {
	local i=$1 name=$2 t=$3 rc secs why
	[ -f "$work/err.$i" ] && cat "$work/err.$i" >&2
	read -r rc secs <"$work/rc.$i"
	grep -a "^ROW	" "$work/out.$i" >>"$rows"
	if [ "$rc" -eq 0 ]; then
		passed=$((passed + 1))
		echo "bench: [$i/${#benches[@]}] $name done in $secs s"
	else
		failed=$((failed + 1))
		why="exit $rc"
		[ "$rc" -eq 124 ] && why="timed out after ${t}s"
		[ "$rc" -gt 128 ] && [ "$rc" -ne 124 ] &&
			why="killed by signal $((rc - 128))"
		failures="$failures $name ($why);"
		echo "bench: [$i/${#benches[@]}] $name FAILED: $why" >&2
	fi
}

i=0
for b in "${benches[@]}"; do
	IFS='|' read -r name tfull tquick argv <<<"$b"
	i=$((i + 1))
	t=$tfull
	[ "$quick" = 1 ] && t=$tquick
	echo "bench: [$i/${#benches[@]}] $name (timeout ${t}s)"
	if [ "$njobs" -le 1 ]; then
		# shellcheck disable=SC2086 # argv is a word list by design
		run_one "$i" "$t" $argv
		collect "$i" "$name" "$t"
		continue
	fi
	while [ "$(jobs -pr | wc -l)" -ge "$njobs" ]; do
		wait -n
	done
	# shellcheck disable=SC2086 # argv is a word list by design
	run_one "$i" "$t" $argv &
done
if [ "$njobs" -gt 1 ]; then
	wait
	i=0
	for b in "${benches[@]}"; do
		IFS='|' read -r name tfull tquick argv <<<"$b"
		i=$((i + 1))
		t=$tfull
		[ "$quick" = 1 ] && t=$tquick
		collect "$i" "$name" "$t"
	done
fi
elapsed=$((SECONDS - start))

# The table for the terminal: numbered rows, aligned columns (widths in
# characters, not bytes: the figures use UTF-8 dashes), then the notes.
print_table() {
	awk -F'\t' '
	function w(s,  t) { t = s; gsub(/[\200-\277]/, "", t); return length(t) }
	function pad(s, n) { return s sprintf("%" (n - w(s) > 0 ? n - w(s) : 0) "s", "") }
	{
		n++; for (c = 2; c <= 6; c++) { cell[n, c] = $c; if (w($c) > wd[c]) wd[c] = w($c) }
		if (!($7 in noteno)) { noteno[$7] = ++nn; note[nn] = $7 }
		ref[n] = noteno[$7]
	}
	END {
		hd[2] = "what"; hd[3] = "figure"; hd[4] = "unit"; hd[5] = "anchor"; hd[6] = "ratio"
		for (c = 2; c <= 6; c++) if (w(hd[c]) > wd[c]) wd[c] = w(hd[c])
		line = pad("#", 3); for (c = 2; c <= 6; c++) line = line "  " pad(hd[c], wd[c])
		print line " how"
		for (r = 1; r <= n; r++) {
			line = pad(r, 3)
			for (c = 2; c <= 6; c++) line = line "  " pad(cell[r, c], wd[c])
			print line " [" ref[r] "]"
		}
		for (k = 1; k <= nn; k++) print "[" k "] " note[k]
	}' "$rows"
}

# The generated block of BENCHMARKS.md.
markdown_block() {
	local mem cpu commit dirty
	mem=$(awk '/^MemTotal:/ { printf "%.1f GiB", $2 / 1048576 }' \
		/proc/meminfo)
	cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
	commit=$(git -C "$top" rev-parse --short HEAD 2>/dev/null ||
		echo unknown)
	dirty=""
	[ -n "$(git -C "$top" status --porcelain 2>/dev/null)" ] &&
		dirty=" (with uncommitted changes)"
	echo "<!-- bench:begin -->"
	echo "<!-- generated by test/bench/run.sh: edits up to the end marker"
	echo "     are overwritten by the next \`make bench\` -->"
	echo "## Figures"
	echo
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "- Command: \`$cmd\` ($([ "$quick" = 1 ] &&
		echo "reduced run" || echo "full run"), ${elapsed} s)"
	echo "- Machine: $(nproc) CPUs (\`nproc\`), ${cpu:-unknown CPU}," \
		"$mem RAM (MemTotal), Linux $(uname -r) $(uname -m)"
	echo "- Load average at the start: $load0; at the end:" \
		"$(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- Source: commit $commit$dirty"
	echo "- Devserver: $devserver_about, copied at the start of the run;" \
		"sanitizers: ${sanitizers:-none}"
	echo "- Bench programs: $passed passed, $failed failed${failures:+:$failures}"
	echo
	echo "| # | what | figure | unit | anchor | ratio | how |"
	echo "|---:|---|---:|---|---|---:|---|"
	awk -F'\t' '
	function md(s) { gsub(/\|/, "\\|", s); return s }
	{
		if (!($7 in noteno)) { noteno[$7] = ++nn; note[nn] = $7 }
		printf "| %d | %s | %s | %s | %s | %s | [%d] |\n", NR, md($2),
			md($3), md($4), md($5), md($6), noteno[$7]
	}
	END {
		print ""
		print "How each figure is measured:"
		print ""
		for (k = 1; k <= nn; k++) printf "%d. %s\n", k, md(note[k])
	}' "$rows"
	echo "<!-- bench:end -->"
}

# Replaces the block between the markers (or appends one), keeping the
# hand-written text around it.
write_benchmarks() {
	local f=$top/BENCHMARKS.md
	markdown_block >"$work/block"
	if [ ! -f "$f" ]; then
		{
			echo "# Benchmarks"
			echo
			echo "\`make bench\` regenerates the block between the" \
				"bench markers; the rest is written by hand."
			echo
		} >"$f"
	fi
	if grep -q '^<!-- bench:begin' "$f" && grep -q '^<!-- bench:end' "$f"
	then
		awk -v blockfile="$work/block" '
		/^<!-- bench:begin/ {
			while ((getline l < blockfile) > 0) print l
			skip = 1; next
		}
		/^<!-- bench:end/ { skip = 0; next }
		!skip { print }' "$f" >"$work/new"
	else
		{ cat "$f"; echo; cat "$work/block"; } >"$work/new"
	fi
	cat "$work/new" >"$f"
	echo "bench: wrote $(basename "$f")"
}

echo
if [ -s "$rows" ]; then
	print_table
else
	echo "bench: no rows"
fi
echo
if [ "${BENCH_NO_WRITE:-}" != 1 ] && [ -z "$sanitizers" ]; then
	write_benchmarks
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
