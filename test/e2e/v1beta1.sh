#!/usr/bin/env bash
# v1beta1: kueue.x-k8s.io/v1beta1 end to end, on a devcluster with the
# real webhook path. The CRDs store v1beta2 and serve v1beta1 too
# (deprecated), converted by the manager's webhook (/convert, the CA that
# its certificate management injects into the CRDs). The suite applies
# every file of test/fixtures/upstream/v1beta1/ unchanged with the real
# kubectl (the deprecation warning is printed), reads the objects back at
# v1beta1 and at v1beta2 with Kueue's field mapping (cohort/cohortName,
# the admissionChecks list into admissionChecksStrategy, Borrow and
# Preempt into MayStopSearch, flavorUsage/flavorsUsage,
# priorityClassName+Source/priorityClassRef,
# accumulatedPastExexcutionTimeSeconds), checks what a v1beta1 reader gets
# back (Kueue's v1beta1 view: a strategy stays a strategy, MayStopSearch
# stays MayStopSearch, no conversion annotation), v1beta1's
# printer columns, list and watch at v1beta1, runs the sample Job of
# jobs_sample-job.yaml on the v1beta1 setup (suspended, Workload,
# admitted in default-flavor, finished, quota freed) as jobs.sh does for
# the v1beta2 examples, checks that invalid v1beta1 objects are denied
# (the CRD's v1beta1 schema, the validating webhook's v1beta1 path), and
# that a conversion failure (manager stopped) gives kubectl a clear error
# while v1beta2 keeps working and nothing is lost once the manager is back,
# and that kubectl apply at v1beta1 over a ClusterQueue created at v1beta2
# can remove its admission checks and set admissionChecksStrategy again.
# Last, a devserver started as with DEVCLUSTER_WEBHOOK=0 serves v1beta2
# and refuses v1beta1 with a conversion error (see devcluster's header).
#
# The devserver's job runner runs a Job for 1h; the suite ends one by
# annotating it cueue.dev/runtime=1ms, as jobs.sh does. The suite's own
# objects are here documents below.
#
# MANAGER_BIN / DEVSERVER_BIN test other binaries.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init v1beta1

manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
up=$e2e_top/test/fixtures/upstream/v1beta1
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
nowebhook=$work/nowebhook
# How long (tenths of a second, wall time) a change may take to show.
T=${V1BETA1_WAIT:-300}
V1=v1beta1.kueue.x-k8s.io
V2=v1beta2.kueue.x-k8s.io
WARNING='Warning: This version is deprecated. Use v1beta2 instead.'

on_exit_stop_clusters "$cluster" "$nowebhook"

# ---------------------------------------------------------------------
# Helpers (now_ms, wait_until, is_eq, expect_eventually, wl_name and
# release are lib.bash's)

# nowarn: drops kubectl's deprecation warning lines (checked on their own).
nowarn() {
	grep -vFx -- "$WARNING"
	return 0
}

# get VERSION RESOURCE NAME JSONPATH [NS]: kubectl get RESOURCE at
# VERSION (1 or 2) -o jsonpath, stderr included, without the warning.
get() {
	local v=V$1
	kubectl get "$2.${!v}" ${3:+"$3"} -n "${5:-default}" -o jsonpath="$4" 2>&1 | nowarn
}

# both RESOURCE NAME JSONPATH [NS]: get at v1beta1, then at v1beta2 (each
# ends with a newline: nowarn's grep adds it).
both() {
	get 1 "$1" "$2" "$3" "${4:-default}"
	get 2 "$1" "$2" "$3" "${4:-default}"
}

# table1 RESOURCE ARGS...: kubectl get RESOURCE at v1beta1, no warning.
table1() {
	kubectl get "$1.$V1" "${@:2}" 2>&1 | nowarn
}

# json VERSION RESOURCE NAME [NS]: the object as compact JSON with sorted
# keys, without what changes on every write (resourceVersion,
# managedFields) and kubectl's last-applied annotation.
json() {
	local v=V$1
	kubectl get "$2.${!v}" "$3" -n "${4:-default}" -o json 2>&1 | nowarn |
		python3 -c '
import json, sys
o = json.load(sys.stdin)
md = o.get("metadata", {})
md.pop("resourceVersion", None)
md.pop("managedFields", None)
ann = md.get("annotations", {})
ann.pop("kubectl.kubernetes.io/last-applied-configuration", None)
if not ann:
    md.pop("annotations", None)
print(json.dumps(o, sort_keys=True, separators=(",", ":")))'
}

# spec_of VERSION RESOURCE NAME [NS]: .spec (.value/.description for a
# WorkloadPriorityClass) as compact sorted JSON.
spec_of() {
	local v=V$1
	kubectl get "$2.${!v}" "$3" -n "${4:-default}" -o json 2>&1 | nowarn | python3 -c '
import json, sys
o = json.load(sys.stdin)
s = o.get("spec", {k: o[k] for k in ("value", "description") if k in o})
print(json.dumps(s, sort_keys=True, separators=(",", ":")))'
}

# warned NAME: the last run_cmd printed the deprecation warning.
warned() {
	if grep -qFx -- "$WARNING" <<<"$out"; then
		pass "$1: kubectl printed the deprecation warning"
	else
		fail "$1: kubectl printed the deprecation warning" "output:
$out"
	fi
}

# applied NAME WANT CMD...: CMD exits 0, prints the deprecation warning
# and, apart from it, exactly WANT.
applied() {
	local name=$1 want=$2 got
	shift 2
	run_cmd "$@"
	got=$(nowarn <<<"$out" | norm)
	if [ "$rc" -eq 0 ] && [ "$got" == "$want" ]; then
		pass "$name"
	else
		fail "$name" "command: $*
exit $rc; want:
$want
got:
$out"
	fi
	warned "$name"
}

# subset NAME FILE DOC VERSION RESOURCE OBJ [NS]: every field of the spec
# of document DOC (0-based) of FILE (YAML) is in the live object OBJ read
# at VERSION,
# with the same value (the live one also has the CRD's defaults).
subset() {
	local name=$1 file=$2 doc=$3 version=$4 res=$5 obj=$6 ns=${7:-default}
	local live
	live=$(json "$version" "$res" "$obj" "$ns")
	run_cmd python3 -c '
import json, sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
want = docs[int(sys.argv[2])]
live = json.loads(sys.argv[3])
def norm(v):
    return json.loads(json.dumps(v))
def sub(w, l, path):
    if isinstance(w, dict):
        if not isinstance(l, dict):
            print("%s: want an object, got %r" % (path, l)); return False
        return all([sub(v, l.get(k), path + "." + k) for k, v in w.items()])
    if w != l:
        print("%s: want %r, got %r" % (path, w, l)); return False
    return True
ok = live.get("apiVersion") == want["apiVersion"]
if not ok:
    print("apiVersion %s" % live.get("apiVersion"))
for k in ("spec", "value", "description"):
    if k in want:
        ok = sub(norm(want[k]), live.get(k), k) and ok
sys.exit(0 if ok else 1)' "$file" "$doc" "$live"
	if [ "$rc" -eq 0 ]; then
		pass "$name"
	else
		fail "$name" "$out
live: $live"
	fi
}

# ---------------------------------------------------------------------
# 1. The cluster: devserver + manager with the real webhook path.

if [ ! -x "$manager_src" ]; then
	fail "binaries built" "$manager_src missing (run make all)"
	e2e_finish
fi
python3 -c 'import yaml' 2>/dev/null || {
	fail "python3 with yaml" "python3 -c 'import yaml' failed"
	e2e_finish
}
cp "$manager_src" "$work/cueue-manager"
export MANAGER_BIN=$work/cueue-manager
export DEVCLUSTER_JOB_RUNTIME=1h
devcluster_start "devcluster start (webhook serving)"

# The CA the manager's certificate management injected into the CRDs'
# conversion is the one of its webhook configurations.
ca_of_crds() {
	local c
	for c in clusterqueues cohorts localqueues resourceflavors \
		workloadpriorityclasses workloads; do
		kubectl get crd "$c.kueue.x-k8s.io" \
			-o jsonpath='{.spec.conversion.strategy} {.spec.conversion.webhook.clientConfig.service.path} {.spec.conversion.webhook.clientConfig.caBundle}{"\n"}'
	done | sort -u
}
vca=$(kubectl get validatingwebhookconfiguration cueue-validating-webhook-configuration \
	-o jsonpath='{.webhooks[0].clientConfig.caBundle}')
expect_eventually "caBundle injected into every CRD's conversion (the webhooks' CA)" "$T" \
	"Webhook /convert $vca" ca_of_crds
if [ -z "$vca" ]; then
	fail "the webhook configuration has a caBundle" "empty"
fi

# ---------------------------------------------------------------------
# 2. The upstream v1beta1 examples, applied unchanged.

applied "apply v1beta1 single-clusterqueue-setup" "resourceflavor.kueue.x-k8s.io/default-flavor created
clusterqueue.kueue.x-k8s.io/cluster-queue created
localqueue.kueue.x-k8s.io/user-queue created" \
	kubectl apply -f "$up/admin_single-clusterqueue-setup.yaml"
applied "apply v1beta1 resource-flavor-empty (same name: unchanged)" \
	"resourceflavor.kueue.x-k8s.io/default-flavor unchanged" \
	kubectl apply -f "$up/admin_resource-flavor-empty.yaml"
applied "apply v1beta1 minimal-cq" "clusterqueue.kueue.x-k8s.io/cluster-queue-2 created" \
	kubectl apply -f "$up/admin_minimal-cq.yaml"
applied "apply v1beta1 resource-flavor-taints" "resourceflavor.kueue.x-k8s.io/spot created" \
	kubectl apply -f "$up/admin_resource-flavor-taints.yaml"
subset "spot (taints) reads back at v1beta1" "$up/admin_resource-flavor-taints.yaml" 0 1 resourceflavors spot
applied "apply v1beta1 resource-flavor-tolerations (same name: configured)" \
	"resourceflavor.kueue.x-k8s.io/spot configured" \
	kubectl apply -f "$up/admin_resource-flavor-tolerations.yaml"
applied "apply v1beta1 single-clusterqueue-setup again: unchanged" "resourceflavor.kueue.x-k8s.io/default-flavor unchanged
clusterqueue.kueue.x-k8s.io/cluster-queue unchanged
localqueue.kueue.x-k8s.io/user-queue unchanged" \
	kubectl apply -f "$up/admin_single-clusterqueue-setup.yaml"
applied "server-side apply of the v1beta1 setup" "resourceflavor.kueue.x-k8s.io/default-flavor serverside-applied
clusterqueue.kueue.x-k8s.io/cluster-queue serverside-applied
localqueue.kueue.x-k8s.io/user-queue serverside-applied" \
	kubectl apply --server-side -f "$up/admin_single-clusterqueue-setup.yaml"

# Read back at v1beta1: what the files say is there.
subset "default-flavor reads back at v1beta1" "$up/admin_single-clusterqueue-setup.yaml" 0 1 resourceflavors default-flavor
subset "cluster-queue reads back at v1beta1" "$up/admin_single-clusterqueue-setup.yaml" 1 1 clusterqueues cluster-queue
subset "user-queue reads back at v1beta1" "$up/admin_single-clusterqueue-setup.yaml" 2 1 localqueues user-queue
subset "cluster-queue-2 reads back at v1beta1" "$up/admin_minimal-cq.yaml" 0 1 clusterqueues cluster-queue-2
subset "spot (tolerations) reads back at v1beta1" "$up/admin_resource-flavor-tolerations.yaml" 0 1 resourceflavors spot

# ... and at v1beta2, with the field mapping.
expect "cluster-queue at v1beta1: defaults read back as Kueue's v1beta1 shows them (MayStopSearch)" 0 get 1 clusterqueues cluster-queue \
	'{.apiVersion} {.spec.flavorFungibility} {.spec.cohort}|{.spec.cohortName}' <<'EOF'
kueue.x-k8s.io/v1beta1 {"whenCanBorrow":"MayStopSearch","whenCanPreempt":"TryNextFlavor"} |
EOF
expect "cluster-queue at v1beta2: stored as v1beta2 (MayStopSearch)" 0 get 2 clusterqueues cluster-queue \
	'{.apiVersion} {.spec.flavorFungibility} {.metadata.annotations.kueue\.x-k8s\.io/conversion-data}' <<'EOF'
kueue.x-k8s.io/v1beta2 {"whenCanBorrow":"MayStopSearch","whenCanPreempt":"TryNextFlavor"}
EOF
expect "cluster-queue-2: admissionChecksStrategy with onFlavors is the same at both versions" 0 \
	both clusterqueues cluster-queue-2 '{.spec.admissionChecksStrategy}|{.spec.admissionChecks}' <<'EOF'
{"admissionChecks":[{"name":"sample-prov","onFlavors":["default-flavor"]},{"name":"sample-prov-2"}]}|
{"admissionChecks":[{"name":"sample-prov","onFlavors":["default-flavor"]},{"name":"sample-prov-2"}]}|
EOF
for o in "resourceflavors default-flavor" "resourceflavors spot" \
	"clusterqueues cluster-queue" "clusterqueues cluster-queue-2" \
	"localqueues user-queue"; do
	# shellcheck disable=SC2086 # "resource name" on purpose
	a=$(spec_of 1 $o) b=$(spec_of 2 $o)
	if [ -n "$a" ] && [ "$a" = "$b" ]; then
		pass "$o: same spec at v1beta1 and v1beta2"
	else
		fail "$o: same spec at v1beta1 and v1beta2" "v1beta1: $a
v1beta2: $b"
	fi
done

# The suite's own v1beta1 objects: every field that differs.
cat >"$work/team.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a
spec:
  cohort: research
  admissionChecks: ["check-a", "check-b"]
  flavorFungibility:
    whenCanBorrow: Borrow
    whenCanPreempt: Preempt
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 2
        lendingLimit: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata:
  name: research
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 1
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: WorkloadPriorityClass
metadata:
  name: high
value: 1000
description: "urgent work"
EOF
applied "apply own v1beta1 ClusterQueue, Cohort, WorkloadPriorityClass" "clusterqueue.kueue.x-k8s.io/team-a created
cohort.kueue.x-k8s.io/research created
workloadpriorityclass.kueue.x-k8s.io/high created" \
	kubectl apply -f "$work/team.yaml"
expect "team-a at v1beta2: cohortName, admissionChecksStrategy, MayStopSearch" 0 get 2 clusterqueues team-a \
	'{.spec.cohortName}|{.spec.cohort}|{.spec.admissionChecksStrategy}|{.spec.admissionChecks}|{.spec.flavorFungibility}' <<'EOF'
research||{"admissionChecks":[{"name":"check-a"},{"name":"check-b"}]}||{"whenCanBorrow":"MayStopSearch","whenCanPreempt":"MayStopSearch"}
EOF
expect "team-a read back at v1beta1: Kueue's v1beta1 view (strategy, MayStopSearch) with the CRD defaults" 0 spec_of 1 clusterqueues team-a <<'EOF'
{"admissionChecksStrategy":{"admissionChecks":[{"name":"check-a"},{"name":"check-b"}]},"cohort":"research","flavorFungibility":{"whenCanBorrow":"MayStopSearch","whenCanPreempt":"MayStopSearch"},"namespaceSelector":{},"preemption":{"borrowWithinCohort":{"policy":"Never"},"reclaimWithinCohort":"Never","withinClusterQueue":"Never"},"queueingStrategy":"StrictFIFO","resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"default-flavor","resources":[{"lendingLimit":1,"name":"cpu","nominalQuota":2}]}]}],"stopPolicy":"None"}
EOF
expect "team-a stored without a conversion annotation" 0 get 2 clusterqueues team-a \
	'{.metadata.annotations.kueue\.x-k8s\.io/conversion-data}' <<'EOF'
EOF
subset "research (Cohort) reads back at v1beta1" "$work/team.yaml" 1 1 cohorts research
subset "high (WorkloadPriorityClass) reads back at v1beta1" "$work/team.yaml" 2 1 workloadpriorityclasses high
expect "high at v1beta2" 0 get 2 workloadpriorityclasses high '{.apiVersion} {.value} {.description}' <<'EOF'
kueue.x-k8s.io/v1beta2 1000 urgent work
EOF

# Patch at v1beta1 (a JSON merge patch in v1beta1 spelling).
run_cmd kubectl patch "clusterqueues.$V1" team-a --type merge -p '{"spec":{"cohort":"research-2"}}'
if [ "$rc" -eq 0 ] && grep -qx 'clusterqueue.kueue.x-k8s.io/team-a patched' <<<"$out"; then
	pass "merge patch at v1beta1 (spec.cohort)"
else
	fail "merge patch at v1beta1 (spec.cohort)" "exit $rc: $out"
fi
expect "...lands in cohortName" 0 get 2 clusterqueues team-a '{.spec.cohortName}' <<'EOF'
research-2
EOF

# ---------------------------------------------------------------------
# 3. Columns, lists and watches at v1beta1.

expect_eventually "cluster-queue Active" "$T" "True" get 2 clusterqueues cluster-queue \
	'{.status.conditions[?(@.type=="Active")].status}'
run_cmd kubectl get "clusterqueues.$V1" -o wide
warned "get clusterqueues.$V1"
expect_table "get clusterqueues.$V1 -o wide: v1beta1's columns (COHORT from spec.cohort)" 0 \
	table1 clusterqueues -o wide <<'EOF'
NAME | COHORT | STRATEGY | PENDING WORKLOADS | ADMITTED WORKLOADS
cluster-queue |  | BestEffortFIFO | 0 | 0
cluster-queue-2 |  | BestEffortFIFO | 0 | 0
team-a | research-2 | StrictFIFO | 0 | 0
EOF
expect_table "get clusterqueues.$V1: without -o wide" 0 \
	table1 clusterqueues <<'EOF'
NAME | COHORT | PENDING WORKLOADS
cluster-queue |  | 0
cluster-queue-2 |  | 0
team-a | research-2 | 0
EOF
expect_table "get localqueues.$V1" 0 \
	table1 localqueues <<'EOF'
NAME | CLUSTERQUEUE | PENDING WORKLOADS | ADMITTED WORKLOADS
user-queue | cluster-queue | 0 | 0
EOF
expect_table "get workloadpriorityclasses.$V1" 0 \
	table1 workloadpriorityclasses <<'EOF'
NAME | VALUE
high | 1000
EOF
list1() {
	kubectl get "clusterqueues.$V1,localqueues.$V1,resourceflavors.$V1,cohorts.$V1,workloadpriorityclasses.$V1" \
		-A -o jsonpath='{range .items[*]}{.apiVersion} {.kind} {.metadata.name}{"\n"}{end}' 2>&1 | nowarn | sort
}
expect "list at v1beta1: every item in v1beta1" 0 list1 <<'EOF'
kueue.x-k8s.io/v1beta1 ClusterQueue cluster-queue
kueue.x-k8s.io/v1beta1 ClusterQueue cluster-queue-2
kueue.x-k8s.io/v1beta1 ClusterQueue team-a
kueue.x-k8s.io/v1beta1 Cohort research
kueue.x-k8s.io/v1beta1 LocalQueue user-queue
kueue.x-k8s.io/v1beta1 ResourceFlavor default-flavor
kueue.x-k8s.io/v1beta1 ResourceFlavor spot
kueue.x-k8s.io/v1beta1 WorkloadPriorityClass high
EOF

# A watch at v1beta1 sees a change made at v1beta2 in v1beta1 spelling.
e2e_bg kubectl get "clusterqueues.$V1" team-a --watch --output-watch-events \
	-o jsonpath='{.type} {.object.apiVersion} {.object.spec.cohort}|{.object.spec.cohortName}{"\n"}' \
	>"$work/watch.out" 2>&1
watch_pid=$e2e_bg_pid
if wait_for_line "$work/watch.out" '^ADDED ' 100; then
	kubectl patch "clusterqueues.$V2" team-a --type merge -p '{"spec":{"cohortName":"research"}}' >/dev/null 2>&1
fi
if wait_for_line "$work/watch.out" '^MODIFIED kueue.x-k8s.io/v1beta1 research\|$' 100 &&
	grep -qx 'ADDED kueue.x-k8s.io/v1beta1 research-2|' "$work/watch.out"; then
	pass "watch at v1beta1: ADDED and MODIFIED in v1beta1 (spec.cohort)"
else
	fail "watch at v1beta1" "$(cat "$work/watch.out")"
fi
kill "$watch_pid" 2>/dev/null
if grep -qFx -- "$WARNING" "$work/watch.out"; then
	pass "watch at v1beta1: deprecation warning"
else
	fail "watch at v1beta1: deprecation warning" "$(cat "$work/watch.out")"
fi

# ---------------------------------------------------------------------
# 4. The sample Job on the v1beta1 setup.

run_cmd kubectl create -f "$up/jobs_sample-job.yaml" -o jsonpath='{.metadata.name} {.spec.suspend}'
job=${out% *}
if [ "$rc" -eq 0 ] && [ "${out##* }" = true ]; then
	pass "create v1beta1 jobs_sample-job.yaml: suspended on create ($job)"
else
	fail "create v1beta1 jobs_sample-job.yaml: suspended on create" "exit $rc: $out"
	job=none
fi
wl=$(wl_name "$job")
expect_eventually "its Workload is admitted in default-flavor (read at v1beta1)" "$T" \
	'kueue.x-k8s.io/v1beta1 True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' \
	get 1 workloads "$wl" '{.apiVersion} {.status.conditions[?(@.type=="Admitted")].status} {.status.admission.clusterQueue} {.status.admission.podSetAssignments[0].flavors}'
expect "the Workload's owner is the Job; queue user-queue" 0 get 1 workloads "$wl" \
	'{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name} {.spec.queueName} {.spec.podSets[0].count}' <<EOF
Job/$job user-queue 3
EOF
expect_eventually "the Job is unsuspended" "$T" "false" \
	kubectl get job "$job" -o jsonpath='{.spec.suspend}'
expect_eventually "user-queue status at v1beta1: flavorUsage (singular), no flavorsUsage" "$T" \
	'[{"name":"default-flavor","resources":[{"name":"cpu","total":"3"},{"name":"memory","total":"600Mi"}]}]||1 1' \
	get 1 localqueues user-queue '{.status.flavorUsage}|{.status.flavorsUsage}|{.status.reservingWorkloads} {.status.admittedWorkloads}'
expect "user-queue status at v1beta2: flavorsUsage" 0 get 2 localqueues user-queue \
	'{.status.flavorsUsage}|{.status.flavorUsage}' <<'EOF'
[{"name":"default-flavor","resources":[{"name":"cpu","total":"3"},{"name":"memory","total":"600Mi"}]}]|
EOF
expect "user-queue flavorsReservation: the same at both versions" 0 \
	both localqueues user-queue '{.status.flavorsReservation}' <<'EOF'
[{"name":"default-flavor","resources":[{"name":"cpu","total":"3"},{"name":"memory","total":"600Mi"}]}]
[{"name":"default-flavor","resources":[{"name":"cpu","total":"3"},{"name":"memory","total":"600Mi"}]}]
EOF
expect "cluster-queue status at v1beta1: 3 cpu in use" 0 get 1 clusterqueues cluster-queue \
	'{.status.admittedWorkloads} {.status.flavorsUsage[0].resources[0]}' <<'EOF'
1 {"borrowed":"0","name":"cpu","total":"3"}
EOF
expect_table "get localqueues.$V1: one admitted" 0 \
	table1 localqueues <<'EOF'
NAME | CLUSTERQUEUE | PENDING WORKLOADS | ADMITTED WORKLOADS
user-queue | cluster-queue | 0 | 1
EOF
a=$(json 1 workloads "$wl") && b=$(json 1 workloads "$wl")
if [ -n "$a" ] && [ "$a" = "$b" ] && ! grep -q conversion-data <<<"$a"; then
	pass "the Workload reads the same at v1beta1 twice, no conversion annotation"
else
	fail "the Workload reads the same at v1beta1 twice" "$a
$b"
fi
release "$job"
expect_eventually "the Job completes" "$T" "3" kubectl get job "$job" -o jsonpath='{.status.succeeded}'
expect_eventually "its Workload Finished (read at v1beta1)" "$T" "True Succeeded" \
	get 1 workloads "$wl" '{range .status.conditions[?(@.type=="Finished")]}{.status} {.reason}{end}'
expect_eventually "cluster-queue's quota is free again (read at v1beta1)" "$T" \
	'0 0 [{"borrowed":"0","name":"cpu","total":"0"},{"borrowed":"0","name":"memory","total":"0"}]' \
	get 1 clusterqueues cluster-queue '{.status.reservingWorkloads} {.status.admittedWorkloads} {.status.flavorsReservation[0].resources}'

# A Workload written at v1beta1: priorityClassName + priorityClassSource.
cat >"$work/wl.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: direct
  namespace: default
spec:
  queueName: user-queue
  priorityClassName: high
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  priority: 1000
  podSets:
  - name: main
    count: 1
    template:
      spec:
        restartPolicy: Never
        containers:
        - name: c
          image: busybox
          resources:
            requests:
              cpu: "1"
EOF
applied "create a v1beta1 Workload (priorityClassName + priorityClassSource)" \
	"workload.kueue.x-k8s.io/direct created" kubectl create -f "$work/wl.yaml"
expect "at v1beta2: priorityClassRef" 0 get 2 workloads direct \
	'{.spec.priorityClassRef}|{.spec.priorityClassName}|{.spec.priority}' <<'EOF'
{"group":"kueue.x-k8s.io","kind":"WorkloadPriorityClass","name":"high"}||1000
EOF
subset "direct reads back at v1beta1" "$work/wl.yaml" 0 1 workloads direct
expect_eventually "direct admitted (read at v1beta1)" "$T" \
	'True cluster-queue {"cpu":"default-flavor"}' \
	get 1 workloads direct '{.status.conditions[?(@.type=="Admitted")].status} {.status.admission.clusterQueue} {.status.admission.podSetAssignments[0].flavors}'
# Status written at v1beta1 (the status subresource) in v1beta1 spelling.
run_cmd kubectl patch "workloads.$V1" direct --subresource=status --type merge \
	-p '{"status":{"accumulatedPastExexcutionTimeSeconds":7}}'
if [ "$rc" -eq 0 ]; then
	pass "status patch at v1beta1 (accumulatedPastExexcutionTimeSeconds)"
else
	fail "status patch at v1beta1" "exit $rc: $out"
fi
expect "...stored in v1beta2 spelling" 0 get 2 workloads direct \
	'{.status.accumulatedPastExecutionTimeSeconds}|{.status.accumulatedPastExexcutionTimeSeconds}' <<'EOF'
7|
EOF
expect "...read back in v1beta1 spelling" 0 get 1 workloads direct \
	'{.status.accumulatedPastExexcutionTimeSeconds}|{.status.accumulatedPastExecutionTimeSeconds}' <<'EOF'
7|
EOF
b=$(kubectl get "workloads.$V1" direct -o json 2>/dev/null | python3 -c '
import json, sys
o = json.load(sys.stdin)
print(json.dumps(o["status"], sort_keys=True))')
c=$(kubectl get "workloads.$V2" direct -o json 2>/dev/null | python3 -c '
import json, sys
o = json.load(sys.stdin)
s = o["status"]
s["accumulatedPastExexcutionTimeSeconds"] = s.pop("accumulatedPastExecutionTimeSeconds")
print(json.dumps(s, sort_keys=True))')
if [ -n "$b" ] && [ "$b" = "$c" ]; then
	pass "direct: the whole status is the same at both versions (up to the spelling)"
else
	fail "direct: the whole status is the same at both versions" "v1beta1: $b
v1beta2: $c"
fi
applied "delete the v1beta1 Workload at v1beta1" 'workload.kueue.x-k8s.io "direct" deleted' \
	kubectl delete "workloads.$V1" direct
expect_eventually "cluster-queue's quota is free again" "$T" "0 0" \
	get 1 clusterqueues cluster-queue '{.status.reservingWorkloads} {.status.admittedWorkloads}'

# ---------------------------------------------------------------------
# 5. Invalid v1beta1 objects are denied.

bad_cq() { # NAME SPEC-JSON
	printf '{"apiVersion":"kueue.x-k8s.io/v1beta1","kind":"ClusterQueue","metadata":{"name":"%s"},"spec":%s}' "$1" "$2"
}
bad_cq bad-1 '{"admissionChecks":["a"],"admissionChecksStrategy":{"admissionChecks":[{"name":"b"}]}}' >"$work/bad1.json"
match "v1beta1 webhook: admissionChecks and admissionChecksStrategy together" 1 \
	'admission webhook "vclusterqueue-v1beta1.kb.io" denied the request: .*Either AdmissionChecks or AdmissionCheckStrategy can be set, but not both' \
	kubectl create -f "$work/bad1.json"
bad_cq bad-2 '{"cohort":"c","resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":1,"lendingLimit":2}]}]}]}' >"$work/bad2.json"
match "v1beta1 webhook: lendingLimit above nominalQuota" 1 \
	'admission webhook "vclusterqueue-v1beta1.kb.io" denied the request: spec.resourceGroups\[0\].flavors\[0\].resources\[0\].lendingLimit: Invalid value: .*must be less than or equal to the nominalQuota' \
	kubectl create -f "$work/bad2.json"
bad_cq bad-3 '{"resourceGroups":[{"coveredResources":["cpu"],"flavors":[{"name":"f","resources":[{"name":"cpu","nominalQuota":1,"borrowingLimit":1}]}]}]}' >"$work/bad3.json"
match "v1beta1 webhook: borrowingLimit without cohort" 1 \
	'borrowingLimit must be nil when cohort is empty' \
	kubectl create -f "$work/bad3.json"
bad_cq bad-4 '{"flavorFungibility":{"whenCanBorrow":"Sometimes"}}' >"$work/bad4.json"
match "v1beta1 schema: fungibility enum" 1 \
	'spec.flavorFungibility.whenCanBorrow: Unsupported value: "Sometimes": supported values: "MayStopSearch", "TryNextFlavor", "Borrow"' \
	kubectl create -f "$work/bad4.json"
bad_cq bad-5 '{"cohortName":"c"}' >"$work/bad5.json"
match "v1beta1 schema: v1beta2's cohortName is an unknown field" 1 \
	'unknown field "spec.cohortName"' \
	kubectl create -f "$work/bad5.json"
expect "nothing of the denied objects was stored" 0 \
	kubectl get clusterqueues -o 'jsonpath={range .items[*]}{.metadata.name} {end}' <<'EOF'
cluster-queue cluster-queue-2 team-a
EOF

# ---------------------------------------------------------------------
# 6. Conversion failure: the manager stopped.

before=$(kubectl get clusterqueues,localqueues,resourceflavors,cohorts,workloadpriorityclasses,workloads \
	-A -o json | python3 -c '
import json, sys
for o in json.load(sys.stdin)["items"]:
    print(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"],
          json.dumps(o.get("spec", o.get("value")), sort_keys=True))' | sort)
run_cmd "$devcluster" stop-manager "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "devcluster stop-manager"
else
	fail "devcluster stop-manager" "exit $rc: $out"
fi
match "manager down: get at v1beta1 fails with the conversion error" 1 \
	'^Error from server: conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueueList failed: Post "https://cueue-webhook-service.cueue-system.svc:443/convert\?timeout=30s": .*connection refused$' \
	kubectl get "clusterqueues.$V1"
match "manager down: get one object at v1beta1 fails too" 1 \
	'^Error from server: conversion webhook for kueue.x-k8s.io/v1beta2, Kind=LocalQueue failed: .*' \
	kubectl get "localqueues.$V1" user-queue
expect_table "manager down: v1beta2 works as usual" 0 kubectl get clusterqueues <<'EOF'
NAME | COHORT | PENDING WORKLOADS
cluster-queue |  | 0
cluster-queue-2 |  | 0
team-a | research | 0
EOF
run_cmd "$devcluster" start "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "devcluster start brings the manager back"
else
	fail "devcluster start brings the manager back" "exit $rc: $out"
fi
expect_eventually "v1beta1 reads work again" "$T" "cluster-queue cluster-queue-2 team-a " \
	get 1 clusterqueues "" '{range .items[*]}{.metadata.name} {end}'
after=$(kubectl get clusterqueues,localqueues,resourceflavors,cohorts,workloadpriorityclasses,workloads \
	-A -o json | python3 -c '
import json, sys
for o in json.load(sys.stdin)["items"]:
    print(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"],
          json.dumps(o.get("spec", o.get("value")), sort_keys=True))' | sort)
if [ -n "$before" ] && [ "$before" = "$after" ]; then
	pass "nothing lost while the manager was down ($(wc -l <<<"$after") objects)"
else
	fail "nothing lost while the manager was down" "$(diff <(echo "$before") <(echo "$after"))"
fi
expect "team-a still reads the same at v1beta1" 0 get 1 clusterqueues team-a \
	'{.spec.cohort} {.spec.admissionChecksStrategy} {.spec.flavorFungibility.whenCanPreempt}' <<'EOF'
research {"admissionChecks":[{"name":"check-a"},{"name":"check-b"}]} MayStopSearch
EOF

# A ClusterQueue created at v1beta2 with admissionChecksStrategy, then
# applied at v1beta1 (issue 21): the first v1beta1 apply removes the
# checks, the second sets admissionChecksStrategy again. Both are accepted
# and stored as Kueue stores them.
cq_yaml() { # VERSION SPEC-LINES
	printf 'apiVersion: kueue.x-k8s.io/%s\nkind: ClusterQueue\nmetadata:\n  name: checked\nspec:\n  namespaceSelector: {}\n%s' "$1" "$2"
}
cq_yaml v1beta2 '  admissionChecksStrategy:
    admissionChecks:
    - name: check-x
' >"$work/checked-2.yaml"
cq_yaml v1beta1 '' >"$work/checked-1a.yaml"
cq_yaml v1beta1 '  admissionChecksStrategy:
    admissionChecks:
    - name: check-y
      onFlavors: [default-flavor]
' >"$work/checked-1b.yaml"
expect "apply a v1beta2 ClusterQueue with admissionChecksStrategy" 0 \
	kubectl apply -f "$work/checked-2.yaml" <<'EOF'
clusterqueue.kueue.x-k8s.io/checked created
EOF
expect "...read at v1beta1: the strategy, no admissionChecks list, no annotation" 0 get 1 clusterqueues checked \
	'{.spec.admissionChecksStrategy}|{.spec.admissionChecks}|{.metadata.annotations.kueue\.x-k8s\.io/conversion-data}' <<'EOF'
{"admissionChecks":[{"name":"check-x"}]}||
EOF
applied "apply at v1beta1 without admission checks" \
	"clusterqueue.kueue.x-k8s.io/checked configured" \
	kubectl apply -f "$work/checked-1a.yaml"
expect "...stored without admission checks" 0 get 2 clusterqueues checked \
	'{.spec.admissionChecksStrategy}|{.spec.admissionChecks}' <<'EOF'
|
EOF
applied "apply at v1beta1 with admissionChecksStrategy again" \
	"clusterqueue.kueue.x-k8s.io/checked configured" \
	kubectl apply -f "$work/checked-1b.yaml"
expect "...stored as given" 0 get 2 clusterqueues checked \
	'{.spec.admissionChecksStrategy}' <<'EOF'
{"admissionChecks":[{"name":"check-y","onFlavors":["default-flavor"]}]}
EOF

# ---------------------------------------------------------------------
# 7. No webhook (DEVCLUSTER_WEBHOOK=0, as core.sh and the benchmarks):
# v1beta2 as usual, v1beta1 refused with a conversion error.

run_cmd env DEVCLUSTER_WEBHOOK=0 DEVCLUSTER_NO_MANAGER=1 "$devcluster" start "$nowebhook"
if [ "$rc" -eq 0 ]; then
	pass "devserver without webhook (DEVCLUSTER_WEBHOOK=0)"
else
	fail "devserver without webhook (DEVCLUSTER_WEBHOOK=0)" "exit $rc: $out"
fi
expect "no webhook: v1beta2 apply works" 0 \
	kubectl --kubeconfig "$nowebhook/kubeconfig" apply -f "$e2e_top/test/fixtures/upstream/admin/single-clusterqueue-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/default-flavor created
clusterqueue.kueue.x-k8s.io/cluster-queue created
localqueue.kueue.x-k8s.io/user-queue created
EOF
match "no webhook: v1beta1 refused with the conversion error" 1 \
	'^Error from server: conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueueList failed: .*no endpoints available for service "cueue-webhook-service"' \
	kubectl --kubeconfig "$nowebhook/kubeconfig" get "clusterqueues.$V1"
run_cmd "$devcluster" stop "$nowebhook"
if [ "$rc" -eq 0 ]; then
	pass "devcluster stop (no webhook)"
else
	fail "devcluster stop (no webhook)" "exit $rc: $out"
fi

# ---------------------------------------------------------------------
# 8. Stop.

devcluster_stop
e2e_finish
