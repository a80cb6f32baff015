#!/usr/bin/env bash
# resources: the Configuration's resources.excludeResourcePrefixes and
# resources.transformations (issue 21), with Jobs through the webhook on a
# devcluster whose manager reads manifests/resources/config.yaml: MIG
# profiles are charged as the accelerator memory and credits they stand
# for (nvidia.com/mig-1g.10gb Replace, nvidia.com/mig-3g.40gb Retain),
# example.com/ignored-* never.
#   - a 1g.10gb Job is admitted, its admission charges 10Gi and 1 credit
#     and neither the profile nor the ignored resource;
#   - two more pods of 1g.10gb fill 3 of 4 credits;
#   - a 3g.40gb Job waits with Kueue's message naming the transformed
#     resource, and is admitted once the 1g Jobs end, charged 40Gi, 3
#     credits and (Retain) the profile itself;
#   - kubectl cueue explain shows the transformed requests;
#   - objectRetentionPolicies.workloads.afterFinished (3s): the finished
#     Workloads are deleted, their Jobs stay, with Kueue's Deleted event;
#   - afterDeactivatedByKueue (2s): a Job whose pods never get ready is
#     deactivated at its first PodsReady timeout (backoffLimitCount 0),
#     then the Job itself is deleted, with Kueue's event on the Job, and
#     its Workload goes with it; a Workload a user deactivated stays;
#   - dynamic resource allocation: a claim template's devices of a class
#     resources.deviceClassMappings names are charged per pod as the
#     mapped resource; a class no mapping names, a claim by name and a
#     missing template keep the Job out of the queue with Kueue's
#     Misconfigured message (until the template appears);
#   - cueue-invariants (--config: the same policy) at every step.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init resources

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
T=${RESOURCES_WAIT:-300}
cd "$e2e_dir/manifests/resources" || exit 1
on_exit_stop_clusters "$cluster"
export DEVCLUSTER_CONFIG=$PWD/config.yaml
mkdir -p "$work/bin"
cp "${KUBECTL_CUEUE_BIN:-$e2e_top/bin/kubectl-cueue}" "$work/bin/kubectl-cueue"
export PATH=$work/bin:$PATH

# mkjob NAME PROFILE PODS
mkjob() {
	sed -e "s/NAME/$1/" -e "s#PROFILE#$2#" -e "s/PODS/$3/" job.tmpl |
		kubectl create -f - -o name
}
# usage JOB: the admission's flavor and resourceUsage, one per line.
# Quantities as Kueue renders them: by resource name (cpu in milli,
# memory binary, any other resource decimal: 10Gi of accelerator memory
# is 10737418240).
usage() {
	kubectl get workload -n mig "$(wl_name "$1" mig)" -o json | python3 -c '
import json, sys
a = json.load(sys.stdin)["status"].get("admission")
if a:
    for p in a["podSetAssignments"]:
        print(p["name"], p.get("count"))
        for r, q in sorted(p["resourceUsage"].items()):
            print(" ", r, q, p["flavors"].get(r))'
}
inv() {
	local label=$1
	snapshot "$work/snap.json" || { fail "invariants: $label" "snapshot"; return; }
	run_cmd "$inv_bin" --config "$DEVCLUSTER_CONFIG" "$work/snap.json"
	[ "$rc" -eq 0 ] && pass "invariants: $label" || fail "invariants: $label" "$out"
}

job_cluster_start
expect "apply the MIG queue" 0 kubectl apply -f setup.yaml <<'EOF'
namespace/mig created
resourceflavor.kueue.x-k8s.io/mig-a100 created
clusterqueue.kueue.x-k8s.io/mig-cq created
localqueue.kueue.x-k8s.io/main created
EOF
expect "the manager warns about neither setting (both honoured)" 1 \
	grep -cE 'resources\.(excludeResourcePrefixes|transformations)' "$cluster/manager.log" <<<'0'

expect "create m1 (one 1g.10gb pod)" 0 mkjob m1 nvidia.com/mig-1g.10gb 1 <<<'job.batch/m1'
expect_eventually "m1 admitted: 10Gi and 1 credit, not the profile nor the ignored resource" "$T" \
	"main 1
  cpu 1 mig-a100
  example.com/accelerator-memory 10737418240 mig-a100
  example.com/credits 1 mig-a100" usage m1
expect "create m2 (two 1g.10gb pods)" 0 mkjob m2 nvidia.com/mig-1g.10gb 2 <<<'job.batch/m2'
expect_eventually "m2 admitted: 20Gi and 2 credits" "$T" \
	"main 2
  cpu 2 mig-a100
  example.com/accelerator-memory 21474836480 mig-a100
  example.com/credits 2 mig-a100" usage m2
inv "three 1g pods"
expect_eventually "mig-cq reserves 30Gi and 3 credits" "$T" \
	"32212254720 3" jp clusterqueue/mig-cq \
	'{.status.flavorsReservation[0].resources[?(@.name=="example.com/accelerator-memory")].total} {.status.flavorsReservation[0].resources[?(@.name=="example.com/credits")].total}'

expect "create big (one 3g.40gb pod)" 0 mkjob big nvidia.com/mig-3g.40gb 1 <<<'job.batch/big'
match_eventually "big waits for the transformed resources" "$T" \
	'^False Pending: couldn.t assign flavors to pod set main: insufficient unused quota for example\.com/accelerator-memory in flavor mig-a100, 32212254720 more needed, insufficient unused quota for example\.com/credits in flavor mig-a100, 2 more needed$' \
	cond_line "workload/$(wl_name big mig)" QuotaReserved mig
match "explain big: the transformed requests per pod" 0 \
	'^Pod set main: 1 pods, per pod cpu=1 example\.com/accelerator-memory=42949672960 example\.com/credits=3 nvidia\.com/mig-3g\.40gb=1$' \
	kubectl cueue explain big -n mig
release m1 m2
kubectl annotate --overwrite -n mig job m1 m2 cueue.dev/runtime=1ms >/dev/null 2>&1
expect_eventually "the 1g Jobs end: big admitted, 40Gi, 3 credits and (Retain) the profile" "$T" \
	"main 1
  cpu 1 mig-a100
  example.com/accelerator-memory 42949672960 mig-a100
  example.com/credits 3 mig-a100
  nvidia.com/mig-3g.40gb 1 mig-a100" usage big
inv "big admitted"

# objectRetentionPolicies.workloads.afterFinished: 3s
expect_eventually "m1's and m2's Workloads deleted 3 s after they finished; the Jobs stay" "$T" \
	"big
big m1 m2" bash -c 'kubectl get workloads -n mig -o jsonpath="{range .items[*]}{.metadata.ownerReferences[0].name} {end}" | xargs; kubectl get jobs -n mig -o jsonpath="{range .items[*]}{.metadata.name} {end}" | xargs'
match "the Deleted event of Kueue's retention" 0 \
	'^Normal +Deleted +Deleted finished workload due to elapsed retention$' \
	bash -c 'kubectl get events -n mig -o jsonpath="{range .items[*]}{.type} {.reason} {.message}{\"\\n\"}{end}" | sort -u'
match "the manager says why" 0 'deleted: finished, its retention elapsed' cat "$cluster/manager.log"
inv "after the retention"

# objectRetentionPolicies.workloads.afterDeactivatedByKueue: 2s
release big
kubectl annotate --overwrite -n mig job big cueue.dev/runtime=1ms >/dev/null 2>&1
# (its Workload goes 3 s after it finished: the Job tells)
expect_eventually "big ends" "$T" "1" jp job/big '{.status.succeeded}' mig
sed -e "s/NAME/dq/" -e "s#PROFILE#nvidia.com/mig-1g.10gb#" -e "s/PODS/1/" \
	-e '/^  labels:/i\  annotations:\n    cueue.dev/ready-after: never' job.tmpl >"$work/dq.yaml"
sed -e "s/NAME/user-off/" -e "s#PROFILE#nvidia.com/mig-1g.10gb#" -e "s/PODS/1/" job.tmpl >"$work/uo.yaml"
expect "create dq (its pods never get ready) and user-off" 0 \
	kubectl create -f "$work/dq.yaml" -f "$work/uo.yaml" -o name <<'EOF'
job.batch/dq
job.batch/user-off
EOF
dq_wl=$(wl_name dq mig)
uo_wl=$(wl_name user-off mig)
expect_eventually "user-off admitted" "$T" "True" jp "workload/$uo_wl" \
	'{.status.conditions[?(@.type=="Admitted")].status}' mig
expect "a user deactivates user-off's Workload" 0 kubectl patch workload -n mig "$uo_wl" \
	--type merge -p '{"spec":{"active":false}}' <<<"workload.kueue.x-k8s.io/$uo_wl patched"
# (the Workload is gone 2 s later: its events tell what happened)
expect_eventually "dq deactivated by Kueue at its first PodsReady timeout" "$T" \
	"EvictedDueToDeactivatedDueToRequeuingLimitExceeded" \
	bash -c "kubectl get events -n mig --field-selector involvedObject.name=$dq_wl -o jsonpath='{range .items[*]}{.reason}{\"\\n\"}{end}' | grep -x EvictedDueToDeactivatedDueToRequeuingLimitExceeded"
inv "dq deactivated"
expect_eventually "2 s later its Job is deleted" "$T" "" \
	bash -c 'kubectl get jobs -n mig -o name | grep "/dq$"'
match "Kueue's event on the Job" 0 \
	'^Normal Deleted Deleted job: deactivation retention period expired$' \
	kubectl get events -n mig --field-selector involvedObject.kind=Job,involvedObject.name=dq \
	-o jsonpath='{range .items[*]}{.type} {.reason} {.message}{"\n"}{end}'
expect_eventually "its Workload goes with it (owner reference)" "$T" "" \
	bash -c "kubectl get workloads -n mig -o name | grep '/$dq_wl\$'"
match "the manager says why" 0 'its Job dq deleted: deactivated by Kueue, its retention elapsed' \
	cat "$cluster/manager.log"
expect "user-off (deactivated by a user: Evicted Deactivated) and its Job stay" 0 \
	bash -c "kubectl get job user-off -n mig -o name; kubectl get workload -n mig $uo_wl -o jsonpath='{.spec.active} {.status.conditions[?(@.type==\"Evicted\")].reason}'" <<EOF
job.batch/user-off
false Deactivated
EOF
inv "after the deactivation retention"

# Dynamic resource allocation (resources.deviceClassMappings)
expect "apply dra-cq, its LocalQueue, a DeviceClass and two claim templates" 0 kubectl apply -f dra.yaml <<'EOF'
clusterqueue.kueue.x-k8s.io/dra-cq created
localqueue.kueue.x-k8s.io/dra created
deviceclass.resource.k8s.io/gpu.example.com created
resourceclaimtemplate.resource.k8s.io/two-gpus created
resourceclaimtemplate.resource.k8s.io/fpga created
EOF
# drajob NAME PODS CLAIM-LINE
drajob() {
	sed -e "s/NAME/$1/" -e "s/PODS/$2/" -e "s#CLAIM#$3#" dra-job.tmpl |
		kubectl create -f - -o name
}
dra_usage() {
	jp "workload/$(wl_name "$1" mig)" '{.status.admission.podSetAssignments[0].resourceUsage}' mig
}
expect "create d1: 2 pods, each a claim of two-gpus" 0 drajob d1 2 'resourceClaimTemplateName: two-gpus' <<<'job.batch/d1'
expect_eventually "d1 admitted: 2 x 2 devices charged as example.com/gpu" "$T" \
	'{"cpu":"2","example.com/gpu":"4"}' dra_usage d1
expect "create d2: one more pod of two-gpus" 0 drajob d2 1 'resourceClaimTemplateName: two-gpus' <<<'job.batch/d2'
match_eventually "d2 waits for example.com/gpu" "$T" \
	'^False Pending: couldn.t assign flavors to pod set main: insufficient unused quota for example\.com/gpu in flavor mig-a100, 2 more needed$' \
	cond_line "workload/$(wl_name d2 mig)" QuotaReserved mig
expect "create d3: a claim of a class no mapping names" 0 drajob d3 1 'resourceClaimTemplateName: fpga' <<<'job.batch/d3'
expect_eventually "d3 is not queued: Misconfigured, Kueue's message" "$T" \
	'False Misconfigured: spec.podSets[0].template.spec.resourceClaims[0].resourceClaimTemplateName: Not found: "DeviceClass fpga.example.com is not mapped in DRA configuration for podset main"' \
	cond_line "workload/$(wl_name d3 mig)" QuotaReserved mig
expect "create d4: a claim by name" 0 drajob d4 1 'resourceClaimName: shared' <<<'job.batch/d4'
expect_eventually "d4 is not queued: claims by name are not supported" "$T" \
	'False Misconfigured: KueueDRAIntegration feature does not support use of resource claims' \
	cond_line "workload/$(wl_name d4 mig)" QuotaReserved mig
expect "create d5: a claim template that does not exist yet" 0 drajob d5 1 'resourceClaimTemplateName: one-gpu' <<<'job.batch/d5'
expect_eventually "d5 is not queued while its template is missing" "$T" \
	'False Misconfigured: spec.podSets[0].template.spec.resourceClaims[0]: Internal error: failed to get claim spec for ResourceClaimTemplate one-gpu in podset main: resourceclaimtemplates.resource.k8s.io "one-gpu" not found' \
	cond_line "workload/$(wl_name d5 mig)" QuotaReserved mig
expect "dra-cq counts d2 only as pending" 0 jp clusterqueue/dra-cq '{.status.pendingWorkloads}' <<<'1'
inv "DRA: d1 admitted, d2 waiting, d3-d5 misconfigured"
printf '%s\n' 'apiVersion: resource.k8s.io/v1' 'kind: ResourceClaimTemplate' \
	'metadata: {namespace: mig, name: one-gpu}' \
	'spec: {spec: {devices: {requests: [{name: g, exactly: {deviceClassName: gpu.example.com}}]}}}' >"$work/one-gpu.yaml"
expect "create the template one-gpu (count defaults to 1)" 0 kubectl create -f "$work/one-gpu.yaml" <<<'resourceclaimtemplate.resource.k8s.io/one-gpu created'
match_eventually "d5 now waits for quota like d2" "$T" \
	'^False Pending: couldn.t assign flavors to pod set main: insufficient unused quota for example\.com/gpu in flavor mig-a100, 1 more needed$' \
	cond_line "workload/$(wl_name d5 mig)" QuotaReserved mig
release d1
kubectl annotate --overwrite -n mig job d1 cueue.dev/runtime=1ms >/dev/null 2>&1
expect_eventually "d1 ends: d2 admitted (2 devices)" "$T" '{"cpu":"1","example.com/gpu":"2"}' dra_usage d2
expect_eventually "and d5 (1 device)" "$T" '{"cpu":"1","example.com/gpu":"1"}' dra_usage d5
expect "d3 and d4 still not queued" 0 bash -c "kubectl get workloads -n mig -o jsonpath='{range .items[*]}{.metadata.ownerReferences[0].name} {.status.conditions[?(@.type==\"QuotaReserved\")].reason}{\"\\n\"}{end}' | grep -E '^d[34] '" <<'EOF'
d3 Misconfigured
d4 Misconfigured
EOF
inv "DRA: after the release"

e2e_finish
