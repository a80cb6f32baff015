#!/usr/bin/env bash
# prometheus: cueue's /metrics read by a real Prometheus (Debian package
# prometheus), as an operator's dashboards and alerts read it. The suite
# starts a devcluster (test/e2e/devcluster, no webhook: Workloads are
# created directly) whose manager runs with
# metrics.enableClusterQueueResources, and a Prometheus on a free loopback
# port scraping only that manager every second (config, storage and log in
# the work dir; loopback only, no remote write, no admin API). It builds
# a small cluster state:
#
#   ResourceFlavor default-flavor; cohort "team":
#     cq-a  BestEffortFIFO  cpu nominal 4, borrowingLimit 2, lendingLimit 1;
#                           memory nominal 4Gi (no limits)
#     cq-b  StrictFIFO      cpu nominal 2 (no limits)
#   cq-c  (no cohort) flavor missing-flavor: inactive
#   LocalQueues lq-a, lq-b, lq-c in namespace default.
#   a0 (cpu 1) admitted in cq-a, then Finished by the suite;
#   a1, a2 (cpu 2 each) admitted in cq-a (nominal used up);
#   a3 (cpu 3) never fits cq-a (4 + borrowingLimit 2): inadmissible;
#   b1 (cpu 1) admitted in cq-b; b2 (cpu 5) never fits cq-b: StrictFIFO
#   keeps it at the head, so it stays "active";
#   (no workload in cq-c: whether a workload of an inactive queue counts
#   as pending is the manager's business, not this suite's)
#
# and asserts through Prometheus' HTTP API (/api/v1/query, parsed with
# sed/awk: neither jq nor python3 is needed) that every series of
# kueue_pending_workloads, kueue_admitted_workloads_total,
# kueue_quota_reserved_workloads_total, kueue_reserving_active_workloads,
# kueue_admitted_active_workloads, kueue_cluster_queue_status and the five
# kueue_cluster_queue_* resource gauges has exactly the value that state
# implies (polled until Prometheus has caught up, bounded). A scrape
# taken by curl in that state (pending, admitted and finished workloads at
# once) passes `promtool check metrics`.
#
# Usage: test/e2e/prometheus.sh  (MANAGER_BIN / DEVSERVER_BIN: other
# binaries; PROMETHEUS_BIN: default prometheus on PATH)
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init prometheus

devcluster=$e2e_dir/devcluster
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
prom_bin=${PROMETHEUS_BIN:-$(command -v prometheus 2>/dev/null || echo /usr/bin/prometheus)}
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
prom_pid=
# How long (tenths of a second, wall time) a change may take to show:
# admission, then at least one 1 s scrape and Prometheus' ingestion.
T=${PROMETHEUS_WAIT:-300}

prom_cleanup() {
	if [ -n "$prom_pid" ]; then
		kill -TERM "$prom_pid" 2>/dev/null
		for _ in $(seq 1 50); do
			kill -0 "$prom_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$prom_pid" 2>/dev/null
		wait "$prom_pid" 2>/dev/null
		prom_pid=
	fi
	e2e_cluster_cleanup
}
on_exit_stop_clusters "$cluster"
trap prom_cleanup EXIT # Prometheus first, then lib.bash's cluster cleanup

for tool in kubectl curl; do
	if ! command -v "$tool" >/dev/null 2>&1; then
		fail "$tool is installed" "$tool is not on PATH"
		e2e_finish
	fi
done
if [ ! -x "$prom_bin" ]; then
	fail "prometheus is installed" \
		"$prom_bin missing: install the Debian package prometheus (make deps does)"
	e2e_finish
fi
if [ ! -x "$manager_src" ]; then
	fail "cueue-manager built" "$manager_src missing (run make all)"
	e2e_finish
fi

# ---------------------------------------------------------------------
# Helpers (now_ms, wait_until, is_eq, expect_eventually, jp, wl, FINISHED
# and metrics_url are lib.bash's). wait_until polls every 0.3 s here.
poll_every=0.3

# urlencode TEXT: percent-encodes everything but [A-Za-z0-9._~-].
urlencode() {
	local s=$1 i c out=
	for ((i = 0; i < ${#s}; i++)); do
		c=${s:i:1}
		case $c in
		[A-Za-z0-9._~-]) out+=$c ;;
		*) printf -v c '%%%02X' "'$c"; out+=$c ;;
		esac
	done
	printf '%s' "$out"
}

# promq EXPR: the instant vector EXPR evaluates to in Prometheus, one
# series a line, sorted: name{label="value",...} value, without the
# target labels (job, instance). Prometheus writes each result as
# {"metric":{...labels, keys sorted...},"value":[ts,"v"]}; label values
# here never contain quotes, commas or braces. Prints "error: ..." when
# the query fails.
promq() {
	local body
	body=$(curl -sS --max-time 5 \
		"$prom_url/api/v1/query?query=$(urlencode "$1")" 2>&1) ||
		{ echo "error: $body"; return 1; }
	case $body in
	*'"status":"success"'*) ;;
	*) echo "error: $body"; return 1 ;;
	esac
	sed 's/{"metric":{/\n/g' <<<"$body" | sed '1d' | awk '
	{
		m = $0
		sub(/},"value":\[.*/, "", m)
		v = $0
		sub(/.*"value":\[[^,]*,"/, "", v)
		sub(/".*/, "", v)
		name = ""; labels = ""
		n = split(m, kv, ",")
		for (i = 1; i <= n; i++) {
			k = kv[i]; sub(/:.*/, "", k); gsub(/"/, "", k)
			val = kv[i]; sub(/^[^:]*:/, "", val)
			if (k == "__name__") { name = val; gsub(/"/, "", name); continue }
			if (k == "job" || k == "instance" || k == "") continue
			labels = labels (labels == "" ? "" : ",") k "=" val
		}
		print name "{" labels "} " v
	}' | LC_ALL=C sort
}

admitted() { # admitted WL: the Admitted condition's status
	jp "workload/$1" '{.status.conditions[?(@.type=="Admitted")].status}'
}

# ---------------------------------------------------------------------
# 1. The cluster, with enableClusterQueueResources

cp "$manager_src" "$work/cueue-manager"
export MANAGER_BIN=$work/cueue-manager
export DEVCLUSTER_WEBHOOK=0
sed 's/^  # enableClusterQueueResources: true$/  enableClusterQueueResources: true/' \
	"$e2e_top/manifests/config/controller_manager_config.yaml" >"$work/config.yaml"
if grep -q '^  enableClusterQueueResources: true$' "$work/config.yaml"; then
	pass "manager config derived from the shipped one, enableClusterQueueResources on"
else
	fail "manager config derived from the shipped one, enableClusterQueueResources on" \
		"manifests/config/controller_manager_config.yaml has no commented-out 'enableClusterQueueResources: true' line"
	e2e_finish
fi
export DEVCLUSTER_CONFIG=$work/config.yaml

devcluster_start "devcluster start"
murl=$(metrics_url)
if [ -n "$murl" ] && curl -sf --max-time 5 "$murl/metrics" >/dev/null; then
	pass "the manager serves /metrics at $murl"
else
	fail "the manager serves /metrics" "no URL in manager.log, or it does not answer ($murl):
$(grep -i listening "$cluster/manager.log" | tail -5)"
	e2e_finish
fi
target=${murl#*://}

# ---------------------------------------------------------------------
# 2. Prometheus: loopback only, 1 s scrapes of the manager alone

cat >"$work/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: cueue-manager
    metrics_path: /metrics
    static_configs:
      - targets: ['$target']
EOF

# start_prometheus: on a random free loopback port (a few tries: the port
# may be taken between the check and the bind). Sets prom_url, prom_pid.
start_prometheus() {
	local port i
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 40000))
		ss -ltnH "sport = :$port" 2>/dev/null | grep -q . && continue
		"$prom_bin" --config.file="$work/prometheus.yml" \
			--storage.tsdb.path="$work/prom-data" \
			--storage.tsdb.retention.time=1h \
			--web.listen-address="127.0.0.1:$port" \
			--query.lookback-delta=5s \
			--log.level=warn >"$work/prometheus.log" 2>&1 </dev/null &
		prom_pid=$!
		prom_url=http://127.0.0.1:$port
		for i in $(seq 1 150); do
			if ! kill -0 "$prom_pid" 2>/dev/null; then
				wait "$prom_pid" 2>/dev/null
				prom_pid=
				break
			fi
			curl -sf --max-time 1 "$prom_url/-/ready" >/dev/null 2>&1 && return 0
			sleep 0.1
		done
		[ -n "$prom_pid" ] && return 1
	done
	return 1
}
if start_prometheus; then
	pass "prometheus $("$prom_bin" --version 2>&1 | sed -n '1s/^prometheus, version \([^ ]*\).*/\1/p') ready on $prom_url"
else
	fail "prometheus starts on a loopback port" "$(tail -20 "$work/prometheus.log")"
	e2e_finish
fi
up_of() { promq 'up{job="cueue-manager"}'; }
expect_eventually "prometheus scrapes the manager (up == 1)" "$T" \
	'up{} 1' up_of

# ---------------------------------------------------------------------
# 3. The cluster state

cat >"$work/setup.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: default-flavor
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq-a
spec:
  cohortName: team
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 4
        borrowingLimit: 2
        lendingLimit: 1
      - name: memory
        nominalQuota: 4Gi
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq-b
spec:
  cohortName: team
  queueingStrategy: StrictFIFO
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 2
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: cq-c
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: missing-flavor
      resources:
      - name: cpu
        nominalQuota: 8
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-a
  namespace: default
spec:
  clusterQueue: cq-a
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-b
  namespace: default
spec:
  clusterQueue: cq-b
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: lq-c
  namespace: default
spec:
  clusterQueue: cq-c
EOF
run_cmd kubectl apply -f "$work/setup.yaml"
if [ "$rc" -eq 0 ]; then
	pass "apply flavor, cq-a, cq-b (cohort team), cq-c, three LocalQueues"
else
	fail "apply flavor, ClusterQueues, LocalQueues" "$out"
	e2e_finish
fi

# a0 first, alone, so that it is admitted before the rest compete.
wl a0 lq-a 1 >"$work/a0.yaml"
run_cmd kubectl create -f "$work/a0.yaml"
[ "$rc" -eq 0 ] || fail "create a0" "$out"
expect_eventually "a0 admitted" "$T" True admitted a0
run_cmd kubectl patch workload a0 --subresource=status --type=json -p "$FINISHED"
if [ "$rc" -eq 0 ]; then
	pass "a0 marked Finished"
else
	fail "a0 marked Finished" "$out"
fi
fin_of() { jp workload/a0 '{.status.conditions[?(@.type=="Finished")].status}'; }
expect_eventually "a0 Finished (quota released)" "$T" True fin_of
# a1, a2 fill cq-a's nominal cpu; b1 goes to cq-b.
{ wl a1 lq-a 2; wl a2 lq-a 2; wl b1 lq-b 1; } >"$work/w1.yaml"
run_cmd kubectl create -f "$work/w1.yaml"
[ "$rc" -eq 0 ] || fail "create a1, a2, b1" "$out"
expect_eventually "a1, a2, b1 admitted" "$T" "True True True" \
	bash -c 'for w in a1 a2 b1; do kubectl get workload $w -o jsonpath="{.status.conditions[?(@.type==\"Admitted\")].status}"; echo; done | paste -sd" "'
# then the ones that cannot fit
{ wl a3 lq-a 3; wl b2 lq-b 5; } >"$work/w2.yaml"
run_cmd kubectl create -f "$work/w2.yaml"
[ "$rc" -eq 0 ] || fail "create a3, b2" "$out"
cq_counts() {
	for q in cq-a cq-b cq-c; do
		jp "clusterqueue/$q" "$q {.status.pendingWorkloads} {.status.reservingWorkloads} {.status.admittedWorkloads}"
		echo
	done
}
expect_eventually "ClusterQueue status: pending/reserving/admitted" "$T" \
	"cq-a 1 2 2
cq-b 1 1 1
cq-c 0 0 0" cq_counts

# ---------------------------------------------------------------------
# 4. What Prometheus sees

check() { # check NAME QUERY WANT
	local name=$1 q=$2 want=$3
	expect_eventually "$name" "$T" "$want" promq "$q"
}

check "kueue_pending_workloads{cluster_queue,status}" kueue_pending_workloads \
'kueue_pending_workloads{cluster_queue="cq-a",status="active"} 0
kueue_pending_workloads{cluster_queue="cq-a",status="inadmissible"} 1
kueue_pending_workloads{cluster_queue="cq-b",status="active"} 1
kueue_pending_workloads{cluster_queue="cq-b",status="inadmissible"} 0
kueue_pending_workloads{cluster_queue="cq-c",status="active"} 0
kueue_pending_workloads{cluster_queue="cq-c",status="inadmissible"} 0'

check "kueue_admitted_workloads_total (a0 finished still counts)" \
	kueue_admitted_workloads_total \
'kueue_admitted_workloads_total{cluster_queue="cq-a"} 3
kueue_admitted_workloads_total{cluster_queue="cq-b"} 1'

check "kueue_quota_reserved_workloads_total" \
	kueue_quota_reserved_workloads_total \
'kueue_quota_reserved_workloads_total{cluster_queue="cq-a"} 3
kueue_quota_reserved_workloads_total{cluster_queue="cq-b"} 1'

check "kueue_admission_wait_time_seconds_count matches the admissions" \
	'sum by (cluster_queue) (kueue_admission_wait_time_seconds_count)' \
'{cluster_queue="cq-a"} 3
{cluster_queue="cq-b"} 1'

check "kueue_admitted_active_workloads (finished a0 not active)" \
	kueue_admitted_active_workloads \
'kueue_admitted_active_workloads{cluster_queue="cq-a"} 2
kueue_admitted_active_workloads{cluster_queue="cq-b"} 1
kueue_admitted_active_workloads{cluster_queue="cq-c"} 0'

check "kueue_reserving_active_workloads" kueue_reserving_active_workloads \
'kueue_reserving_active_workloads{cluster_queue="cq-a"} 2
kueue_reserving_active_workloads{cluster_queue="cq-b"} 1
kueue_reserving_active_workloads{cluster_queue="cq-c"} 0'

check "kueue_cluster_queue_status (cq-c pending: missing flavor)" \
	kueue_cluster_queue_status \
'kueue_cluster_queue_status{cluster_queue="cq-a",status="active"} 1
kueue_cluster_queue_status{cluster_queue="cq-a",status="pending"} 0
kueue_cluster_queue_status{cluster_queue="cq-a",status="terminating"} 0
kueue_cluster_queue_status{cluster_queue="cq-b",status="active"} 1
kueue_cluster_queue_status{cluster_queue="cq-b",status="pending"} 0
kueue_cluster_queue_status{cluster_queue="cq-b",status="terminating"} 0
kueue_cluster_queue_status{cluster_queue="cq-c",status="active"} 0
kueue_cluster_queue_status{cluster_queue="cq-c",status="pending"} 1
kueue_cluster_queue_status{cluster_queue="cq-c",status="terminating"} 0'

# The resource gauges: base units (cpu cores, memory bytes); a nil limit
# is 0 (v0.14). Prometheus drops labels with empty values (priority_class
# "", cq-c's cohort ""), so they do not show below.
res_want() { # res_want FAMILY A_CPU A_MEM B_CPU C_CPU
	printf '%s{cluster_queue="cq-a",cohort="team",flavor="default-flavor",resource="cpu"} %s\n' "$1" "$2"
	printf '%s{cluster_queue="cq-a",cohort="team",flavor="default-flavor",resource="memory"} %s\n' "$1" "$3"
	printf '%s{cluster_queue="cq-b",cohort="team",flavor="default-flavor",resource="cpu"} %s\n' "$1" "$4"
	printf '%s{cluster_queue="cq-c",flavor="missing-flavor",resource="cpu"} %s' "$1" "$5"
}
check "kueue_cluster_queue_nominal_quota" kueue_cluster_queue_nominal_quota \
	"$(res_want kueue_cluster_queue_nominal_quota 4 4294967296 2 8)"
check "kueue_cluster_queue_borrowing_limit" kueue_cluster_queue_borrowing_limit \
	"$(res_want kueue_cluster_queue_borrowing_limit 2 0 0 0)"
check "kueue_cluster_queue_lending_limit" kueue_cluster_queue_lending_limit \
	"$(res_want kueue_cluster_queue_lending_limit 1 0 0 0)"
check "kueue_cluster_queue_resource_reservation" kueue_cluster_queue_resource_reservation \
	"$(res_want kueue_cluster_queue_resource_reservation 4 0 1 0)"
check "kueue_cluster_queue_resource_usage" kueue_cluster_queue_resource_usage \
	"$(res_want kueue_cluster_queue_resource_usage 4 0 1 0)"

check "kueue_admission_attempts_total: both results counted" \
	'count by (result) (kueue_admission_attempts_total > 0)' \
'{result="inadmissible"} 1
{result="success"} 1'

# The LocalQueue families (LocalQueueMetrics: on by default for the
# shipped v1beta2 Configuration, as since Kueue 0.17): the same state
# per LocalQueue; lq-c's ClusterQueue is inactive.
check "kueue_local_queue_pending_workloads{name,namespace,status}" \
	kueue_local_queue_pending_workloads \
'kueue_local_queue_pending_workloads{name="lq-a",namespace="default",status="active"} 0
kueue_local_queue_pending_workloads{name="lq-a",namespace="default",status="inadmissible"} 1
kueue_local_queue_pending_workloads{name="lq-b",namespace="default",status="active"} 1
kueue_local_queue_pending_workloads{name="lq-b",namespace="default",status="inadmissible"} 0
kueue_local_queue_pending_workloads{name="lq-c",namespace="default",status="active"} 0
kueue_local_queue_pending_workloads{name="lq-c",namespace="default",status="inadmissible"} 0'
check "kueue_local_queue_admitted_workloads_total" \
	kueue_local_queue_admitted_workloads_total \
'kueue_local_queue_admitted_workloads_total{name="lq-a",namespace="default"} 3
kueue_local_queue_admitted_workloads_total{name="lq-b",namespace="default"} 1'
check "kueue_local_queue_reserving_active_workloads" \
	kueue_local_queue_reserving_active_workloads \
'kueue_local_queue_reserving_active_workloads{name="lq-a",namespace="default"} 2
kueue_local_queue_reserving_active_workloads{name="lq-b",namespace="default"} 1
kueue_local_queue_reserving_active_workloads{name="lq-c",namespace="default"} 0'
check "kueue_local_queue_status (lq-c: its ClusterQueue inactive)" \
	'kueue_local_queue_status == 1' \
'kueue_local_queue_status{active="False",name="lq-c",namespace="default"} 1
kueue_local_queue_status{active="True",name="lq-a",namespace="default"} 1
kueue_local_queue_status{active="True",name="lq-b",namespace="default"} 1'
check "kueue_local_queue_resource_reservation" \
	kueue_local_queue_resource_reservation \
'kueue_local_queue_resource_reservation{flavor="default-flavor",name="lq-a",namespace="default",resource="cpu"} 4
kueue_local_queue_resource_reservation{flavor="default-flavor",name="lq-b",namespace="default",resource="cpu"} 1'

# ---------------------------------------------------------------------
# 5. The same state, scraped directly, passes promtool

if command -v promtool >/dev/null 2>&1; then
	curl -sf --max-time 5 "$murl/metrics" >"$work/scrape.txt"
	expect "promtool check metrics: a scrape with pending, admitted and finished workloads" 0 \
		bash -c 'promtool check metrics <"$1"' _ "$work/scrape.txt" <<'OUT'
OUT
fi

# ---------------------------------------------------------------------
# 6. Changes reach Prometheus: a1 finishes, a3 still does not fit (4 - 2
# + 3 = 5 <= 4 + 2: it does now), so it is admitted by borrowing 1 cpu.

run_cmd kubectl patch workload a1 --subresource=status --type=json -p "$FINISHED"
[ "$rc" -eq 0 ] || fail "a1 marked Finished" "$out"
expect_eventually "a3 admitted after a1 finished" "$T" True admitted a3
check "after a1 finished: cq-a pending 0, reservation 5 cpu (1 borrowed)" \
	'kueue_pending_workloads{cluster_queue="cq-a"} or kueue_cluster_queue_resource_reservation{cluster_queue="cq-a",resource="cpu"} or kueue_admitted_workloads_total{cluster_queue="cq-a"}' \
'kueue_admitted_workloads_total{cluster_queue="cq-a"} 4
kueue_cluster_queue_resource_reservation{cluster_queue="cq-a",cohort="team",flavor="default-flavor",resource="cpu"} 5
kueue_pending_workloads{cluster_queue="cq-a",status="active"} 0
kueue_pending_workloads{cluster_queue="cq-a",status="inadmissible"} 0'

# ---------------------------------------------------------------------
# 7. Stop: Prometheus, then the cluster (the trap does it too on failure)

kill -TERM "$prom_pid" 2>/dev/null
for _ in $(seq 1 100); do
	kill -0 "$prom_pid" 2>/dev/null || break
	sleep 0.1
done
if kill -0 "$prom_pid" 2>/dev/null; then
	fail "prometheus stops on SIGTERM" "still running after 10 s"
else
	wait "$prom_pid" 2>/dev/null
	pass "prometheus stops on SIGTERM"
fi
prom_pid=
run_cmd "$devcluster" stop "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "devcluster stop"
else
	fail "devcluster stop" "$out"
fi

e2e_finish
