#!/usr/bin/env bash
# scrape.sh: does scraping /metrics slow admission? The aim: scraping
# /metrics under load does not slow admission measurably. ROW lines for
# test/bench/run.sh (its protocol; QUICK=1 the reduced run), progress on
# stderr.
#
# The same admission workload, scenario-bench's "quick" scenario
# (test/bench/scenario.c: 1 cohort x 3 ClusterQueues, 60 workloads of
# three sizes created on a schedule, finished by its fake job runner),
# runs on a fresh devcluster (no webhook, QPS 1000 / burst 2000, as run.sh
# --scenario) twice per round: once quiet, once while SCRAPERS curl
# processes (default 1) fetch the manager's /metrics back to back on
# keep-alive connections (curl URL globbing: one process, one connection,
# up to 10^6 requests each) for the whole scenario. The scrapers run at
# nice 10: on a 2-core machine a load generator at normal priority takes
# the CPU the manager needs, and the figure would be curl's cost, not the
# cost of serving scrapes; niced, curl scrapes as fast as the CPU the
# manager leaves allows (every scrape it sends is still served by the
# manager at normal priority). Without QUICK=1 a
# third run per round, "paced", has one curl scraping at 10/s (curl
# --rate; ten times Prometheus' 1 s e2e interval, 150 times a 15 s one),
# the rate a real deployment could ever ask for. Rounds: 1 with QUICK=1
# (quiet and scraped only; about 25-30 s, the two devcluster starts
# dominate), 3 otherwise (the modes alternate, so drift in the machine's
# load hits all of them).
#
# Figures, each quiet / scraped / ratio: mean time to admission of the
# small and medium classes (create POST -> Admitted watch event; these
# are not quota-bound: the manager's reaction time), the scenario's wall
# time, manager CPU per workload (scrapes are rendered in the manager's
# process, so this one is expected to grow); plus scrapes/s achieved,
# scrape latency p50/p99 (curl's time_total) and the scrape size.
#
# Environment: BENCH_BUILD (default build/default), DEVSERVER_BIN,
# MANAGER_BIN (default bin/ of this tree), SCRAPERS, QUICK.
# Exit 0 when every scenario completed and scrapes succeeded.
set -u

top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BENCH_BUILD:-$top/build/default}
devcluster=$top/test/e2e/devcluster
scrapers=${SCRAPERS:-1}
rounds=3
modes="quiet scraped paced"
if [ "${QUICK:-}" = 1 ]; then
	rounds=1
	modes="quiet scraped"
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-scrape.XXXXXX")
cluster=
spids=()

cleanup() {
	local p
	for p in "${spids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	spids=()
	[ -n "$cluster" ] && "$devcluster" stop "$cluster" >/dev/null 2>&1
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 143' TERM INT

export DEVCLUSTER_WEBHOOK=0
export DEVCLUSTER_MANAGER_ARGS="--kube-api-qps 1000 --kube-api-burst 2000"
if [ ! -x "$build/scenario-bench" ]; then
	echo "scrape: $build/scenario-bench missing (make all)" >&2
	exit 1
fi

# fig FILE METRIC: the figure of scenario-bench's ROW "...: METRIC".
fig() {
	awk -F'\t' -v m="$2" '$1 == "ROW" && $2 ~ (": " m "$") { print $3; exit }' "$1"
}

# one MODE N: one scenario run on a fresh devcluster; MODE quiet, scraped
# (SCRAPERS back-to-back loops) or paced (one loop at 10/s). Leaves
# scenario-bench's output in $work/MODE-N.rows and, when scraping, the
# scrape latencies (s, one a line) in $work/MODE-N.lat.
one() {
	local mode=$1 n=$2 murl i rc t0 t1
	cluster=$work/cluster-$mode-$n
	"$devcluster" start "$cluster" >/dev/null || return 1
	murl=$(sed -n 's/.*metrics[a-z ]* server listening on \(http:\/\/[^" ]*\).*/\1/p' \
		"$cluster/manager.log" | tail -1)
	if [ -z "$murl" ]; then
		echo "scrape: no metrics URL in $cluster/manager.log" >&2
		return 1
	fi
	if [ "$mode" = paced ]; then
		curl -s --max-time 600 -o /dev/null --rate 10/s \
			-w '%{stderr}%{http_code} %{time_total} %{size_download}\n' \
			"$murl/metrics?n=[1-1000000]" \
			>/dev/null 2>"$work/$mode-$n.s1" &
		spids+=("$!")
		sleep 0.3
	fi
	if [ "$mode" = scraped ]; then
		for i in $(seq 1 "$scrapers"); do
			nice -n 10 curl -s --max-time 600 -o /dev/null \
				-w '%{stderr}%{http_code} %{time_total} %{size_download}\n' \
				"$murl/metrics?n=[1-1000000]" \
				>/dev/null 2>"$work/$mode-$n.s$i" &
			spids+=("$!")
		done
		sleep 0.3
	fi
	t0=$(date +%s%N)
	"$build/scenario-bench" --cluster "$cluster" --scenario quick \
		>"$work/$mode-$n.rows" 2>"$work/$mode-$n.err"
	rc=$?
	t1=$(date +%s%N)
	if [ "$mode" != quiet ]; then
		for i in "${spids[@]}"; do
			kill "$i" 2>/dev/null
			wait "$i" 2>/dev/null
		done
		spids=()
		cat "$work/$mode-$n".s* >"$work/$mode-$n.all"
		# only complete lines of successful scrapes count
		awk '$1 == 200 && NF == 3 { print $2 }' "$work/$mode-$n.all" >"$work/$mode-$n.lat"
		awk '$1 == 200 && NF == 3 { s = $3 } END { print s + 0 }' "$work/$mode-$n.all" >"$work/$mode-$n.size"
		awk '$1 != 200 && NF == 3' "$work/$mode-$n.all" | head -3 >"$work/$mode-$n.bad"
		echo "$(((t1 - t0) / 1000000))" >"$work/$mode-$n.ms"
	fi
	"$devcluster" stop "$cluster" >/dev/null 2>&1
	cluster=
	if [ "$rc" -ne 0 ]; then
		echo "scrape: scenario-bench ($mode, round $n) failed:" >&2
		tail -5 "$work/$mode-$n.err" >&2
		return 1
	fi
	return 0
}

for n in $(seq 1 "$rounds"); do
	for mode in $modes; do
		echo "scrape: round $n/$rounds: $mode" >&2
		one "$mode" "$n" || exit 1
	done
done

# mean MODE METRIC: the mean of the figure over the rounds.
mean() {
	local n
	for n in $(seq 1 "$rounds"); do
		fig "$work/$1-$n.rows" "$2"
	done | awk '{ s += $1; k++ } END { if (k) printf "%.4f", s / k; else print "nan" }'
}

row() { # row WHAT FIGURE UNIT NOTE
	printf 'ROW\t%s\t%s\t%s\t—\t—\t%s\n' "$1" "$2" "$3" "$4"
}

load=$(cut -d' ' -f1 /proc/loadavg)
what="scenario quick (60 wl), $rounds round(s), $scrapers scrapers"
for m in "avg time to admission, small" "avg time to admission, medium" \
	"wall time" "manager CPU per workload"; do
	q=$(mean quiet "$m")
	s=$(mean scraped "$m")
	unit=s
	[ "$m" = "manager CPU per workload" ] && unit=ms
	r=$(awk -v q="$q" -v s="$s" 'BEGIN { if (q > 0) printf "%.2f", s / q; else print "—" }')
	row "/metrics under load: $m, quiet" "$(printf '%.3f' "$q")" "$unit" \
		"$what; scenario-bench's figure, mean over rounds; no scraping"
	row "/metrics under load: $m, scraped" "$(printf '%.3f' "$s")" "$unit" \
		"same workload on a fresh devcluster while $scrapers curl loops scrape /metrics back to back"
	row "/metrics under load: $m, scraped / quiet" "$r" "x" \
		"1.00 = no effect; load avg $load on a shared 2-core machine"
	case $modes in *paced*) ;; *) continue ;; esac
	p=$(mean paced "$m")
	r=$(awk -v q="$q" -v s="$p" 'BEGIN { if (q > 0) printf "%.2f", s / q; else print "—" }')
	row "/metrics under load: $m, paced 10/s" "$(printf '%.3f' "$p")" "$unit" \
		"same workload while one curl scrapes /metrics at 10/s"
	row "/metrics under load: $m, paced / quiet" "$r" "x" \
		"1.00 = no effect"
done

cat "$work"/scraped-*.lat >"$work/lat"
nscrapes=$(wc -l <"$work/lat")
ms=$(cat "$work"/scraped-*.ms | awk '{ s += $1 } END { print s }')
sort -g "$work/lat" >"$work/lat.sorted"
q_of() { # q_of Q: nearest-rank quantile in ms
	awk -v q="$1" -v n="$nscrapes" 'BEGIN { k = int(q * n + 0.999999); if (k < 1) k = 1 }
		NR == k { printf "%.2f", $1 * 1000; exit }' "$work/lat.sorted"
}
size=$(cat "$work"/scraped-*.size | tail -1)
row "/metrics under load: scrapes/s achieved" \
	"$(awk -v n="$nscrapes" -v ms="$ms" 'BEGIN { printf "%.0f", (ms > 0 ? n * 1000 / ms : 0) }')" \
	"scrapes/s" "$scrapers keep-alive curl loops, during the scenario runs ($nscrapes scrapes of ~$size bytes)"
row "/metrics under load: scrape latency p50" "$(q_of 0.50)" "ms" \
	"curl's time_total per scrape (keep-alive; includes rendering and transfer)"
row "/metrics under load: scrape latency p99" "$(q_of 0.99)" "ms" "same"

bad=$(cat "$work"/*.bad)
if [ -n "$bad" ] || [ "$nscrapes" -eq 0 ]; then
	echo "scrape: FAILED: $nscrapes successful scrapes; failures: $bad" >&2
	exit 1
fi
exit 0
