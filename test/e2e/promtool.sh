#!/usr/bin/env bash
# promtool: cueue's Prometheus surface judged by Prometheus' own tool
# (Debian package prometheus; make deps installs it):
#   - a real scrape of controller/httpd.h's /metrics, every Kueue family
#     populated plus process_* (written by the devserver-tests runner's
#     case httpd/dump), passes `promtool check metrics` with no finding
#     and carries every family the rules and Kueue dashboards use;
#   - so does a scrape of a running cueue-manager (test/e2e/devcluster,
#     enableClusterQueueResources on) taken while one workload is
#     pending, two are admitted and one is finished;
#   - manifests/prometheus/rules.yaml and the groups extracted from
#     prometheus-rule.yaml are identical and pass `promtool check rules`;
#   - the alerts fire (and stay quiet) as designed on synthetic series
#     (`promtool test rules`, cases below);
#   - scrape-config.yaml passes `promtool check config`.
#
# Usage: test/e2e/promtool.sh   (E2E_BUILD=build/<cfg> tests another build;
# MANAGER_BIN / DEVSERVER_BIN other binaries for the devcluster)
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init promtool

cluster=$work/cluster
on_exit_stop_clusters "$cluster"

prom=$e2e_top/manifests/prometheus
build=${E2E_BUILD:-$e2e_top/build/default}
case $build in /*) ;; *) build=$e2e_top/$build ;; esac

if ! command -v promtool >/dev/null 2>&1; then
	fail "promtool is installed" \
		"promtool is not on PATH: install the Debian package prometheus (make deps does)"
	e2e_finish
fi
pass "promtool is installed: $(promtool --version 2>&1 | head -1)"

# ---- the exposition ----
# A copy of the runner, so a rebuild during the run does not interfere.
runner=$work/devserver-tests
if [ ! -x "$build/devserver-tests" ] || ! cp "$build/devserver-tests" "$runner"; then
	fail "devserver-tests runner present" "$build/devserver-tests missing (run make all)"
	e2e_finish
fi
scrape=$work/scrape.txt
run_cmd env CK_RUN_SUITE=httpd CK_RUN_CASE=dump CUEUE_METRICS_DUMP="$scrape" "$runner"
if [ "$rc" -eq 0 ] && [ -s "$scrape" ]; then
	pass "a scrape of /metrics written by httpd/dump ($(wc -l <"$scrape") lines)"
else
	fail "a scrape of /metrics written by httpd/dump" "exit status $rc (no file: a runner built before check_httpd.c? run make all):
$out"
	e2e_finish
fi

# (the scrape is promtool's stdin inside bash -c: a redirection here would
# compete with expect's here-document)
expect "promtool check metrics: no finding" 0 \
	bash -c 'promtool check metrics <"$1"' _ "$scrape" <<'OUT'
OUT

# Every family of the v0.14 core set (and cueue's own; the LocalQueue ones
# with the LocalQueueMetrics gate, which the dump turns on) with its type.
families="
kueue_admission_attempts_total counter
kueue_admission_attempt_duration_seconds histogram
kueue_admission_cycle_preemption_skips gauge
kueue_build_info gauge
kueue_pending_workloads gauge
kueue_quota_reserved_workloads_total counter
kueue_quota_reserved_wait_time_seconds histogram
kueue_admitted_workloads_total counter
kueue_admission_wait_time_seconds histogram
kueue_admission_checks_wait_time_seconds histogram
kueue_evicted_workloads_total counter
kueue_evicted_workloads_once_total counter
kueue_pods_ready_to_evicted_time_seconds histogram
kueue_preempted_workloads_total counter
kueue_replaced_workload_slices_total counter
kueue_reserving_active_workloads gauge
kueue_admitted_active_workloads gauge
kueue_cluster_queue_status gauge
kueue_ready_wait_time_seconds histogram
kueue_admitted_until_ready_wait_time_seconds histogram
kueue_cluster_queue_resource_reservation gauge
kueue_cluster_queue_resource_usage gauge
kueue_cluster_queue_nominal_quota gauge
kueue_cluster_queue_borrowing_limit gauge
kueue_cluster_queue_lending_limit gauge
kueue_cluster_queue_weighted_share gauge
kueue_cohort_weighted_share gauge
cueue_scheduling_cycle_duration_seconds histogram
cueue_api_requests_total counter
kueue_local_queue_pending_workloads gauge
kueue_local_queue_quota_reserved_workloads_total counter
kueue_local_queue_quota_reserved_wait_time_seconds histogram
kueue_local_queue_admitted_workloads_total counter
kueue_local_queue_admission_wait_time_seconds histogram
kueue_local_queue_admission_checks_wait_time_seconds histogram
kueue_local_queue_ready_wait_time_seconds histogram
kueue_local_queue_admitted_until_ready_wait_time_seconds histogram
kueue_local_queue_evicted_workloads_total counter
kueue_local_queue_reserving_active_workloads gauge
kueue_local_queue_admitted_active_workloads gauge
kueue_local_queue_status gauge
kueue_local_queue_resource_reservation gauge
kueue_local_queue_resource_usage gauge
controller_runtime_webhook_latency_seconds histogram
controller_runtime_webhook_requests_total counter
process_cpu_seconds_total counter
process_resident_memory_bytes gauge
process_virtual_memory_bytes gauge
process_open_fds gauge
process_max_fds gauge
process_start_time_seconds gauge"
missing=$(while read -r name type; do
	[ -n "$name" ] || continue
	grep -qx "# TYPE $name $type" "$scrape" || echo "$name ($type)"
done <<<"$families")
if [ -z "$missing" ]; then
	pass "every Kueue v0.14 core family, cueue's and process_* exposed with its type"
else
	fail "every Kueue v0.14 core family, cueue's and process_* exposed with its type" \
		"missing or mistyped: $missing"
fi

# ---- a live manager's scrape: pending, admitted and finished at once ----
live_scrape() {
	local murl w st
	cp "${MANAGER_BIN:-$e2e_top/bin/cueue-manager}" "$work/cueue-manager" ||
		return 1
	sed 's/^  # enableClusterQueueResources: true$/  enableClusterQueueResources: true/' \
		"$e2e_top/manifests/config/controller_manager_config.yaml" >"$work/config.yaml"
	MANAGER_BIN=$work/cueue-manager DEVCLUSTER_WEBHOOK=0 \
		DEVCLUSTER_MANAGER_ARGS="--log-level debug" \
		DEVCLUSTER_CONFIG=$work/config.yaml \
		"$e2e_dir/devcluster" start "$cluster" >/dev/null || return 1
	export KUBECONFIG=$cluster/kubeconfig KUBECACHEDIR=$work/kcache
	# cq-a: 4 cpu; w1 (1) admitted then finished, w2 and w3 (2 each)
	# admitted, w4 (3) pending. w1 goes alone first.
	printf '%s\n' 'apiVersion: kueue.x-k8s.io/v1beta2' \
		'kind: ResourceFlavor' 'metadata:' '  name: default-flavor' \
		--- 'apiVersion: kueue.x-k8s.io/v1beta2' 'kind: ClusterQueue' \
		'metadata:' '  name: cq-a' 'spec:' '  namespaceSelector: {}' \
		'  resourceGroups:' '  - coveredResources: ["cpu"]' \
		'    flavors:' '    - name: default-flavor' \
		'      resources:' '      - name: cpu' '        nominalQuota: 4' \
		--- 'apiVersion: kueue.x-k8s.io/v1beta2' 'kind: LocalQueue' \
		'metadata:' '  name: lq-a' '  namespace: default' 'spec:' \
		'  clusterQueue: cq-a' >"$work/live1.yaml"
	for w in w1:1 w2:2 w3:2 w4:3; do
		wl "${w%:*}" lq-a "${w#*:}"
	done >"$work/wls.yaml"
	awk '/^---$/ { n++ } n <= 1' "$work/wls.yaml" >>"$work/live1.yaml"
	awk '/^---$/ { n++ } n > 1' "$work/wls.yaml" >"$work/live2.yaml"
	kubectl apply -f "$work/live1.yaml" >/dev/null || return 1
	live_step="w1 admitted"
	for _ in $(seq 1 150); do
		st=$(kubectl get workload w1 -o jsonpath='{.status.conditions[?(@.type=="Admitted")].status}' 2>/dev/null)
		[ "$st" = True ] && break
		sleep 0.2
	done
	[ "$st" = True ] || return 1
	live_step="the scrape shows the state"
	kubectl patch workload w1 --subresource=status --type=json -p "$FINISHED" \
		>/dev/null || return 1
	kubectl apply -f "$work/live2.yaml" >/dev/null || return 1
	murl=$(metrics_url)
	# wait for the state: pending 1 (w4), admitted active 2 (w2, w3),
	# admitted total 3 (w1 finished)
	for _ in $(seq 1 150); do
		curl -sf --max-time 5 "$murl/metrics" >"$live" || return 1
		grep -q '^kueue_pending_workloads{cluster_queue="cq-a",status="inadmissible"} 1$' "$live" &&
			grep -q '^kueue_admitted_active_workloads{cluster_queue="cq-a"} 2$' "$live" &&
			grep -q '^kueue_admitted_workloads_total{cluster_queue="cq-a",priority_class=""} 3$' "$live" &&
			return 0
		sleep 0.2
	done
	return 1
}
live=$work/live-scrape.txt
live_step=
if live_scrape; then
	pass "a live manager's scrape: 1 pending, 2 admitted, 1 finished ($(wc -l <"$live") lines)"
	expect "promtool check metrics on the live scrape: no finding" 0 \
		bash -c 'promtool check metrics <"$1"' _ "$live" <<'OUT'
OUT
else
	# what was seen, for the next reader of a CI log
	fail "a live manager's scrape: 1 pending, 2 admitted, 1 finished" \
		"step: ${live_step:-start}
$(grep -E '^kueue_(pending|admitted|cluster_queue_status)' "$live" 2>/dev/null | head)
$(kubectl get workloads -o custom-columns='NAME:.metadata.name,RV:.metadata.resourceVersion,CONDS:.status.conditions[*].type,STATUS:.status.conditions[*].status' 2>&1)
$(kubectl get clusterqueue cq-a -o jsonpath='{.status}' 2>&1)
$(grep -E 'w[1-4]|cq-a|lq-a|error|warn' "$cluster/manager.log" 2>/dev/null | tail -40)"
fi
"$e2e_dir/devcluster" stop "$cluster" >/dev/null 2>&1

# Kueue's wait-time buckets, exactly.
match "kueue wait histograms: le 1, 2.5, 5 ... 10240, +Inf" 0 \
	'^1,2\.5,5,10,20,40,80,160,320,640,1280,2560,5120,10240,\+Inf$' \
	bash -c "grep '^kueue_admission_wait_time_seconds_bucket{cluster_queue=\"team-a\",priority_class=\"high\"' '$scrape' | sed 's/.*le=\"\([^\"]*\)\".*/\1/' | paste -sd,"

# ---- the rules ----
extract='import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
assert doc["kind"] == "PrometheusRule", doc["kind"]
yaml.safe_dump(doc["spec"], open(sys.argv[2], "w"), sort_keys=False)'
same='import sys, yaml
a = yaml.safe_load(open(sys.argv[1]))
b = yaml.safe_load(open(sys.argv[2]))
if a != b:
    print("rules.yaml and prometheus-rule.yaml spec.groups differ")
    sys.exit(1)'
py=python3
command -v python3 >/dev/null 2>&1 || py=/usr/bin/python3
expect "PrometheusRule spec.groups extracted" 0 \
	"$py" -c "$extract" "$prom/prometheus-rule.yaml" "$work/extracted-rules.yaml" <<'OUT'
OUT
expect "rules.yaml and prometheus-rule.yaml carry the same groups" 0 \
	"$py" -c "$same" "$prom/rules.yaml" "$work/extracted-rules.yaml" <<'OUT'
OUT
nrules=$(grep -c '^ *- alert:' "$prom/rules.yaml")
expect "promtool check rules rules.yaml" 0 promtool check rules "$prom/rules.yaml" <<OUT
Checking $prom/rules.yaml
  SUCCESS: $nrules rules found

OUT
expect "promtool check rules on the PrometheusRule's groups" 0 \
	promtool check rules "$work/extracted-rules.yaml" <<OUT
Checking <work>/extracted-rules.yaml
  SUCCESS: $nrules rules found

OUT

# Every metric the rules read is one cueue exports (up is Prometheus').
used=$(grep -v '^ *#' "$prom/rules.yaml" | grep -oE '\b(kueue|cueue)_[a-z_]+' | sed 's/_bucket$//' | sort -u)
unknown=$(for m in $used; do grep -q "^# TYPE $m " "$scrape" || echo "$m"; done)
if [ -z "$unknown" ]; then
	pass "every metric the rules read is exported ($(echo $used | wc -w) names)"
else
	fail "every metric the rules read is exported" "not in the scrape: $unknown"
fi

# The alerts on synthetic series: when each fires, with which labels and
# annotations, and the neighbours that must stay quiet.
cp "$prom/rules.yaml" "$work/rules.yaml"
cat >"$work/alerts.test.yaml" <<'TESTS'
rule_files:
  - rules.yaml
evaluation_interval: 1m
tests:
  - interval: 1m
    input_series:
      # cq-a: 3 pending, never reserved anything -> alerts
      - series: 'kueue_pending_workloads{cluster_queue="cq-a",status="active"}'
        values: '3x60'
      - series: 'kueue_pending_workloads{cluster_queue="cq-a",status="inadmissible"}'
        values: '0x60'
      # cq-b: 2 pending but admitting one a minute -> quiet
      - series: 'kueue_pending_workloads{cluster_queue="cq-b",status="active"}'
        values: '2x60'
      - series: 'kueue_quota_reserved_workloads_total{cluster_queue="cq-b",priority_class=""}'
        values: '0+1x60'
      # cq-c inactive, cq-a active
      - series: 'kueue_cluster_queue_status{cluster_queue="cq-c",status="pending"}'
        values: '1x60'
      - series: 'kueue_cluster_queue_status{cluster_queue="cq-a",status="pending"}'
        values: '0x60'
      - series: 'kueue_cluster_queue_status{cluster_queue="cq-a",status="active"}'
        values: '1x60'
    alert_rule_test:
      - eval_time: 10m
        alertname: KueuePendingWorkloadsStuck
      - eval_time: 20m
        alertname: KueuePendingWorkloadsStuck
        exp_alerts:
          - exp_labels:
              severity: warning
              cluster_queue: cq-a
            exp_annotations:
              summary: "Workloads pending in ClusterQueue cq-a with no admission for 45m"
              description: "3 workloads are pending in ClusterQueue cq-a and none got quota in the last 45 minutes. Check the queue's quota, its cohort's borrowing, and `kubectl describe clusterqueue cq-a`."
      - eval_time: 5m
        alertname: KueueClusterQueueInactive
      - eval_time: 15m
        alertname: KueueClusterQueueInactive
        exp_alerts:
          - exp_labels:
              severity: warning
              cluster_queue: cq-c
              status: pending
            exp_annotations:
              summary: "ClusterQueue cq-c is inactive"
              description: "ClusterQueue cq-c has not been active for 10 minutes and admits nothing; its quota cannot be borrowed. `kubectl get clusterqueue cq-c -o jsonpath='{.status.conditions}'` says why."

  - interval: 1m
    input_series:
      # gpu-a: 4 GPUs reserved, none used, admissions flat -> alerts
      - series: 'kueue_cluster_queue_resource_reservation{cohort="org",cluster_queue="gpu-a",flavor="a100",resource="nvidia.com/gpu"}'
        values: '4x90'
      - series: 'kueue_cluster_queue_resource_usage{cohort="org",cluster_queue="gpu-a",flavor="a100",resource="nvidia.com/gpu"}'
        values: '0x90'
      - series: 'kueue_admitted_workloads_total{cluster_queue="gpu-a",priority_class=""}'
        values: '5x90'
      # gpu-b: reserved and used -> quiet
      - series: 'kueue_cluster_queue_resource_reservation{cohort="org",cluster_queue="gpu-b",flavor="a100",resource="nvidia.com/gpu"}'
        values: '4x90'
      - series: 'kueue_cluster_queue_resource_usage{cohort="org",cluster_queue="gpu-b",flavor="a100",resource="nvidia.com/gpu"}'
        values: '4x90'
      # gpu-c: a gap, but workloads keep getting admitted -> quiet
      - series: 'kueue_cluster_queue_resource_reservation{cohort="org",cluster_queue="gpu-c",flavor="a100",resource="nvidia.com/gpu"}'
        values: '8x90'
      - series: 'kueue_cluster_queue_resource_usage{cohort="org",cluster_queue="gpu-c",flavor="a100",resource="nvidia.com/gpu"}'
        values: '6x90'
      - series: 'kueue_admitted_workloads_total{cluster_queue="gpu-c",priority_class="high"}'
        values: '0+1x90'
      # cpu of gpu-a: not GPUs -> ignored
      - series: 'kueue_cluster_queue_resource_reservation{cohort="org",cluster_queue="gpu-a",flavor="default",resource="cpu"}'
        values: '10x90'
    alert_rule_test:
      - eval_time: 20m
        alertname: KueueGPUQuotaReservedIdle
      - eval_time: 45m
        alertname: KueueGPUQuotaReservedIdle
        exp_alerts:
          - exp_labels:
              severity: warning
              cluster_queue: gpu-a
              flavor: a100
            exp_annotations:
              summary: "4 GPUs reserved but idle in ClusterQueue gpu-a"
              description: "4 nvidia.com/gpu of flavor a100 are reserved by workloads of ClusterQueue gpu-a but used by no admitted workload for 30 minutes, and no workload of the queue was admitted in the last hour. Look for workloads with QuotaReserved=True and Admitted=False (pending admission checks)."

  - interval: 1m
    input_series:
      # every cycle takes 1..2.5 s
      - series: 'cueue_scheduling_cycle_duration_seconds_bucket{job="cueue-manager",le="1"}'
        values: '0x30'
      - series: 'cueue_scheduling_cycle_duration_seconds_bucket{job="cueue-manager",le="2.5"}'
        values: '0+10x30'
      - series: 'cueue_scheduling_cycle_duration_seconds_bucket{job="cueue-manager",le="+Inf"}'
        values: '0+10x30'
      # admissions take 2560..5120 s in cq-slow, under 1 s in cq-fast
      - series: 'kueue_admission_wait_time_seconds_bucket{cluster_queue="cq-slow",priority_class="",le="2560"}'
        values: '0x90'
      - series: 'kueue_admission_wait_time_seconds_bucket{cluster_queue="cq-slow",priority_class="",le="5120"}'
        values: '0+1x90'
      - series: 'kueue_admission_wait_time_seconds_bucket{cluster_queue="cq-slow",priority_class="",le="+Inf"}'
        values: '0+1x90'
      - series: 'kueue_admission_wait_time_seconds_bucket{cluster_queue="cq-fast",priority_class="",le="1"}'
        values: '0+1x90'
      - series: 'kueue_admission_wait_time_seconds_bucket{cluster_queue="cq-fast",priority_class="",le="+Inf"}'
        values: '0+1x90'
      - series: 'up{job="cueue-manager",instance="10.0.0.7:8080"}'
        values: '1 1 0x20'
    alert_rule_test:
      - eval_time: 20m
        alertname: CueueSchedulingCycleSlow
        exp_alerts:
          - exp_labels:
              severity: warning
              job: cueue-manager
            exp_annotations:
              summary: "cueue scheduling cycles are slow"
              description: "The 99th percentile of cueue's scheduling cycle took 2.485s over the last 5 minutes."
      - eval_time: 50m
        alertname: KueueAdmissionWaitHigh
        exp_alerts:
          - exp_labels:
              severity: info
              cluster_queue: cq-slow
            exp_annotations:
              summary: "Slow admission in ClusterQueue cq-slow"
              description: "90% of the workloads admitted in ClusterQueue cq-slow over the last hour waited up to 1h 21m 4s."
      - eval_time: 5m
        alertname: CueueManagerDown
      - eval_time: 10m
        alertname: CueueManagerDown
        exp_alerts:
          - exp_labels:
              severity: critical
              job: cueue-manager
              instance: 10.0.0.7:8080
            exp_annotations:
              summary: "cueue-manager is not reachable"
              description: "Prometheus could not scrape 10.0.0.7:8080 for 5 minutes: no admissions are being made or reported."
TESTS
expect "promtool test rules: the alerts fire and stay quiet as designed" 0 \
	promtool test rules "$work/alerts.test.yaml" <<'OUT'
Unit Testing:  <work>/alerts.test.yaml
  SUCCESS

OUT

# ---- the scrape configuration ----
# Debian builds promtool without Kubernetes service discovery; there the
# kubernetes_sd_configs block is swapped for a static target so that the
# rest (relabelling, paths, timeouts) is still checked.
cfg=$prom/scrape-config.yaml
run_cmd promtool check config "$cfg"
if [ "$rc" -ne 0 ] && grep -q 'field kubernetes_sd_configs not found' <<<"$out"; then
	"$py" -c 'import sys, yaml
c = yaml.safe_load(open(sys.argv[1]))
for j in c["scrape_configs"]:
    if j.pop("kubernetes_sd_configs", None) is not None:
        j["static_configs"] = [{"targets": ["127.0.0.1:8080"]}]
yaml.safe_dump(c, open(sys.argv[2], "w"))' "$cfg" "$work/scrape-config.yaml"
	cfg=$work/scrape-config.yaml
	run_cmd promtool check config "$cfg"
	note=" (Kubernetes SD swapped: promtool built without it)"
else
	note=
fi
if [ "$rc" -eq 0 ] && grep -q 'SUCCESS' <<<"$out"; then
	pass "promtool check config scrape-config.yaml$note"
else
	fail "promtool check config scrape-config.yaml$note" "$out"
fi

e2e_finish
