#!/usr/bin/env bash
# upstream: cueue held to Kueue's own material (issue 21).
#   1. cueue's CRDs (manifests/crds) against Kueue's published ones
#      (test/fixtures/upstream-crds), path by path: test/tools/crdcompare.py,
#      one check per CRD and per accepted difference.
#   2. A bare devserver takes Kueue's published CRDs as Kueue's README
#      installs them (kubectl apply --server-side), then every example of
#      test/fixtures/upstream/ (setups with kubectl apply, Jobs with
#      kubectl create), at both API versions. Kueue's CEL rules refuse what
#      Kueue refuses with kube-apiserver's 422 "is invalid" and the rule's
#      own message, one object per rule group, the transition rules on
#      update included.
#   3. A devcluster (manager, webhook) on Kueue's CRDs instead of cueue's,
#      as on a cluster where Kueue was installed first, with the
#      Configuration that admin/shared-quota-setup.yaml names as its
#      prerequisite (cpu also counts as cpu_credits): the getting-started
#      Job waits (its queue covers no cpu_credits); five shared-quota sample Jobs of 3 cpu fill
#      on-demand (9) then spot, and the fifth waits on the 14 cpu_credits
#      although spot still has room, until one ends. cueue-invariants
#      (--config) at each step.
# The examples' behaviour on cueue's own CRDs is jobs.sh's and v1beta1.sh's.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init upstream

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
up=$e2e_top/test/fixtures/upstream
ucrds=$e2e_top/test/fixtures/upstream-crds
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
T=${UPSTREAM_WAIT:-300}
on_exit_stop_clusters "$cluster"

# ---------------------------------------------------------------------
# 1. The CRDs, path by path
run_cmd python3 "$e2e_top/test/tools/crdcompare.py" "$e2e_top/manifests/crds" "$ucrds"
while IFS= read -r line; do
	case $line in
	'ok   '*) pass "crdcompare: ${line#ok   }" ;;
	'FAIL '*) fail "crdcompare: ${line#FAIL }" ;;
	esac
done <<<"$out"
[[ $out =~ [0-9]+\ passed,\ 0\ failed ]] && [ "$rc" -eq 0 ] ||
	fail "crdcompare ends with 0 failed" "exit $rc: $(tail -3 <<<"$out")"

# ---------------------------------------------------------------------
# 2. Kueue's CRDs on a bare devserver
start_server bare --kubeconfig-out "$work/kubeconfig-bare"
export KUBECONFIG=$work/kubeconfig-bare

expect "apply --server-side Kueue's published CRDs" 0 \
	kubectl apply --server-side -f "$ucrds" <<'EOF'
customresourcedefinition.apiextensions.k8s.io/admissionchecks.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/clusterqueues.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/cohorts.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/localqueues.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/resourceflavors.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/topologies.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/workloadpriorityclasses.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io serverside-applied
EOF
run_cmd kubectl wait --for condition=established --timeout=10s \
	crd/admissionchecks.kueue.x-k8s.io crd/clusterqueues.kueue.x-k8s.io \
	crd/cohorts.kueue.x-k8s.io crd/localqueues.kueue.x-k8s.io \
	crd/resourceflavors.kueue.x-k8s.io crd/topologies.kueue.x-k8s.io \
	crd/workloadpriorityclasses.kueue.x-k8s.io crd/workloads.kueue.x-k8s.io
[ "$rc" -eq 0 ] && [ "$(grep -c 'condition met$' <<<"$out")" -eq 8 ] &&
	pass "all eight are Established" || fail "all eight are Established" "$out"

# apply_example FILE: kubectl apply (create for generateName files); every
# line of the output says created/configured/unchanged, but for v1beta1's
# deprecation warnings.
apply_example() {
	local f=$1 verb=apply rel=${1#"$up"/} bad
	grep -q '^ *generateName:' "$f" && verb=create
	run_cmd kubectl "$verb" -f "$f"
	bad=$(grep -Ev '^[a-z0-9.-]+/[a-z0-9.-]+ (created|configured|unchanged)$|^Warning: This version is deprecated\. Use v1beta2 instead\.$' <<<"$out")
	# serving-workloads/sample-hami.yaml also has a Deployment, which the
	# devserver does not serve (apps/v1; upstream/README.md: later)
	if [ "$rel" = serving-workloads/sample-hami.yaml ]; then
		bad=$(grep -Ev '^error: resource mapping not found for name: "gpu-burn" .*no matches for kind "Deployment" in version "apps/v1"$|^ensure CRDs are installed first$' <<<"$bad")
		[ -z "$bad" ] && rc=0
	fi
	if [ "$rc" -eq 0 ] && [ -z "$bad" ]; then
		pass "Kueue's CRDs: kubectl $verb $rel"
	else
		fail "Kueue's CRDs: kubectl $verb $rel" "exit $rc: $out"
	fi
}
n=0
total=$(find "$up" -name '*.yaml' | wc -l)
# setups before the Jobs that use them; v1beta2 before v1beta1
for f in $(find "$up" -name '*.yaml' | sort); do
	grep -q '^kind: Job' "$f" || { apply_example "$f"; n=$((n + 1)); }
done
for f in $(find "$up" -name '*.yaml' | sort); do
	grep -q '^kind: Job' "$f" && { apply_example "$f"; n=$((n + 1)); }
done
[ "$n" -eq "$total" ] && [ "$n" -ge 23 ] && pass "every example tried ($n files)" ||
	fail "every example tried" "$n of $total files under $up"

# Kueue's CEL rules. invalid NAME PATTERN JSON: kubectl create is refused
# with 422 (kubectl: "is invalid") and the pattern.
invalid() {
	local name=$1 pat=$2
	printf '%s\n' "$3" >"$work/invalid.json"
	match "CEL: $name" 1 "$pat" kubectl create -f "$work/invalid.json"
}
CQ='"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ClusterQueue"'
RF='"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"ResourceFlavor"'
WL='"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Workload"'
PODS='"podSets":[{"name":"main","count":1,"template":{"spec":{"restartPolicy":"Never","containers":[{"name":"c","image":"i"}]}}}]'
invalid "borrowingLimit without a cohort" \
	'^The ClusterQueue "cel-1" is invalid: spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty$' \
	"{$CQ,\"metadata\":{\"name\":\"cel-1\"},\"spec\":{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":1,\"borrowingLimit\":1}]}]}]}}"
invalid "a flavor without every covered resource" \
	'^The ClusterQueue "cel-2" is invalid: spec.resourceGroups\[0\]: Invalid value: "object": flavors must have the same number of resources as the coveredResources$' \
	"{$CQ,\"metadata\":{\"name\":\"cel-2\"},\"spec\":{\"resourceGroups\":[{\"coveredResources\":[\"cpu\",\"memory\"],\"flavors\":[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":1}]}]}]}}"
invalid "reclaimWithinCohort Never with borrowWithinCohort" \
	'^The ClusterQueue "cel-3" is invalid: spec.preemption: Invalid value: "object": reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never$' \
	"{$CQ,\"metadata\":{\"name\":\"cel-3\"},\"spec\":{\"preemption\":{\"reclaimWithinCohort\":\"Never\",\"borrowWithinCohort\":{\"policy\":\"LowerPriority\"}}}}"
invalid "fungibility preference without TryNextFlavor" \
	'^The ClusterQueue "cel-4" is invalid: spec.flavorFungibility: Invalid value: "object": preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor$' \
	"{$CQ,\"metadata\":{\"name\":\"cel-4\"},\"spec\":{\"flavorFungibility\":{\"preference\":\"BorrowingOverPreemption\"}}}"
invalid "a toleration with operator Exists and a value" \
	"^The ResourceFlavor \"cel-5\" is invalid: spec.tolerations: Invalid value: \"array\": a value must be empty when 'operator' is 'Exists'$" \
	"{$RF,\"metadata\":{\"name\":\"cel-5\"},\"spec\":{\"tolerations\":[{\"key\":\"k\",\"operator\":\"Exists\",\"value\":\"v\"}]}}"
invalid "a topology without node labels" \
	'^The ResourceFlavor "cel-6" is invalid: spec: Invalid value: "object": at least one nodeLabel is required when topology is set$' \
	"{$RF,\"metadata\":{\"name\":\"cel-6\"},\"spec\":{\"nodeLabels\":{},\"topologyName\":\"t\"}}"
invalid "no nodeLabels at all: the rule's evaluation error, as kube-apiserver gives it" \
	'^The ResourceFlavor "cel-6b" is invalid: spec: Invalid value: "object": no such key: nodeLabels evaluating rule: at least one nodeLabel is required when topology is set$' \
	"{$RF,\"metadata\":{\"name\":\"cel-6b\"},\"spec\":{\"topologyName\":\"t\"}}"
invalid "a Topology with a level twice" \
	'^The Topology "cel-7" is invalid: spec.levels: Invalid value: "array": must be unique$' \
	'{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"Topology","metadata":{"name":"cel-7"},"spec":{"levels":[{"nodeLabel":"rack"},{"nodeLabel":"rack"}]}}'
invalid "minCount above count" \
	'^The Workload "cel-8" is invalid: spec.podSets\[0\]: Invalid value: "object": minCount should be positive and less or equal to count$' \
	"{$WL,\"metadata\":{\"name\":\"cel-8\",\"namespace\":\"default\"},\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":1,\"minCount\":2,\"template\":{\"spec\":{\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}}]}}"
invalid "a priorityClassRef without a priority" \
	'^The Workload "cel-9" is invalid: spec: Invalid value: "object": priority should not be nil when priorityClassRef is set$' \
	"{$WL,\"metadata\":{\"name\":\"cel-9\",\"namespace\":\"default\"},\"spec\":{\"priorityClassRef\":{\"group\":\"kueue.x-k8s.io\",\"kind\":\"WorkloadPriorityClass\",\"name\":\"p\"},$PODS}}"
invalid "a mistyped pod template (PodTemplateSpec's schema)" \
	'^\* spec.podSets\[0\].template.spec.containers: Invalid value: "string": spec.podSets\[0\].template.spec.containers in body must be of type array: "string"$' \
	"{$WL,\"metadata\":{\"name\":\"cel-10\",\"namespace\":\"default\"},\"spec\":{\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":{\"containers\":\"c\"}}}]}}"
expect "nothing refused was stored" 0 bash -c \
	'{ kubectl get clusterqueues,resourceflavors,topologies -o name; kubectl get workloads -n default -o name; } | grep /cel- || true' <<<''
# transition rules: only on update, against the stored object
echo '{"apiVersion":"kueue.x-k8s.io/v1beta2","kind":"AdmissionCheck","metadata":{"name":"ac"},"spec":{"controllerName":"kueue.x-k8s.io/provisioning-request"}}' >"$work/ac.json"
expect "create AdmissionCheck ac" 0 kubectl create -f "$work/ac.json" <<<'admissioncheck.kueue.x-k8s.io/ac created'
match "CEL: spec.controllerName is immutable (oldSelf)" 1 \
	'^The AdmissionCheck "ac" is invalid: spec.controllerName: Invalid value: "string": field is immutable$' \
	kubectl patch admissioncheck ac --type merge -p '{"spec":{"controllerName":"other"}}'
echo "{$RF,\"metadata\":{\"name\":\"topo\"},\"spec\":{\"nodeLabels\":{\"a\":\"b\"},\"topologyName\":\"t\"}}" >"$work/topo.json"
expect "create ResourceFlavor topo with a topology" 0 kubectl create -f "$work/topo.json" <<<'resourceflavor.kueue.x-k8s.io/topo created'
match "CEL: topologyName may not change once set (oldSelf)" 1 \
	'^The ResourceFlavor "topo" is invalid: spec: Invalid value: "object": topologyName is immutable when topologyName is set$' \
	kubectl patch resourceflavor topo --type merge -p '{"spec":{"topologyName":"u"}}'
expect "a patch that keeps topologyName passes" 0 \
	kubectl patch resourceflavor topo --type merge -p '{"spec":{"nodeLabels":{"a":"c"}}}' <<<'resourceflavor.kueue.x-k8s.io/topo patched'
expect "apply --server-side Kueue's CRDs again: unchanged objects stay" 0 \
	bash -c "kubectl apply --server-side -f '$ucrds' >/dev/null && kubectl get resourceflavor topo -o jsonpath='{.spec.topologyName}'" <<<'t'
stop_server bare

# ---------------------------------------------------------------------
# 3. cueue's manager on Kueue's CRDs
export DEVCLUSTER_CRDS=$ucrds
export DEVCLUSTER_CONFIG=$e2e_dir/manifests/upstream/config.yaml
job_cluster_start

admitted_in() {
	admission_of "$(wl_name "$1")" default
}
# create_example FILE: kubectl create; sets $job to the Job's name.
create_example() {
	run_cmd kubectl create -f "$1" -o name
	job=${out#job.batch/}
	if [ "$rc" -eq 0 ] && [[ $out == job.batch/* ]]; then
		pass "create ${1#"$up"/} ($job)"
		wl_name "$job" >/dev/null
	else
		fail "create ${1#"$up"/}" "exit $rc: $out"
	fi
}
inv() {
	snapshot "$work/snap.json" || { fail "invariants: $1" "snapshot"; return; }
	run_cmd "$inv_bin" --config "$DEVCLUSTER_CONFIG" "$work/snap.json"
	[ "$rc" -eq 0 ] && pass "invariants: $1" || fail "invariants: $1" "$out"
}

expect "apply getting-started/quick-start-setup.yaml" 0 \
	kubectl apply -f "$up/getting-started/quick-start-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/default-flavor created
clusterqueue.kueue.x-k8s.io/cluster-queue created
localqueue.kueue.x-k8s.io/user-queue created
EOF
create_example "$up/getting-started/quick-start-job.yaml"
qs=$job
# The transformation applies to every queue: cluster-queue covers no
# cpu_credits, so Kueue leaves the quick-start Job pending.
expect_eventually "the quick-start Job waits: cluster-queue has no cpu_credits" "$T" \
	"False Pending: couldn't assign flavors to pod set main: resource cpu_credits unavailable in ClusterQueue" \
	cond_line "workload/$(wl_name "$qs")" QuotaReserved
expect "and stays suspended" 0 jp "job/$qs" '{.spec.suspend}' <<<true

expect "apply admin/shared-quota-setup.yaml" 0 \
	kubectl apply -f "$up/admin/shared-quota-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/on-demand created
resourceflavor.kueue.x-k8s.io/spot created
resourceflavor.kueue.x-k8s.io/credits created
clusterqueue.kueue.x-k8s.io/team-cluster-queue created
localqueue.kueue.x-k8s.io/team-queue created
EOF
sq=()
for i in 1 2 3; do
	create_example "$up/admin/shared-quota-sample-job.yaml"
	sq+=("$job")
	expect_eventually "shared-quota Job $i in on-demand, charged 3 cpu_credits" "$T" \
		'True team-cluster-queue {"cpu":"on-demand","cpu_credits":"credits"}' admitted_in "$job"
done
create_example "$up/admin/shared-quota-sample-job.yaml"
sq+=("$job")
expect_eventually "shared-quota Job 4: on-demand is full, spot" "$T" \
	'True team-cluster-queue {"cpu":"spot","cpu_credits":"credits"}' admitted_in "$job"
create_example "$up/admin/shared-quota-sample-job.yaml"
sq+=("$job")
match_eventually "shared-quota Job 5 waits on the 14 credits though spot has room" "$T" \
	'^False Pending: couldn.t assign flavors to pod set main: .*insufficient unused quota for cpu_credits in flavor credits, 1 more needed' \
	cond_line "workload/$(wl_name "$job")" QuotaReserved
inv "shared quota, 12 of 14 credits used"
release "${sq[0]}"
expect_eventually "one Job ends: Job 5 admitted in on-demand" "$T" \
	'True team-cluster-queue {"cpu":"on-demand","cpu_credits":"credits"}' admitted_in "${sq[4]}"
inv "shared quota after the release"
invalid "with the manager's webhook too, kubectl create of an invalid ClusterQueue is refused by the rule (422)" \
	'^The ClusterQueue "cel-1" is invalid: spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty$' \
	"{$CQ,\"metadata\":{\"name\":\"cel-1\"},\"spec\":{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":1,\"borrowingLimit\":1}]}]}]}}"

e2e_finish
