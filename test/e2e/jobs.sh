#!/usr/bin/env bash
# jobs: the batch/v1 Job integration end to end, through the real webhook
# path (test/e2e/devcluster with the webhook on). The upstream Kueue
# examples of test/fixtures/upstream/ that use only Jobs and Kueue objects
# at v1beta2 are applied unchanged (setups with `kubectl apply`, Jobs with
# `kubectl create -f`, as Kueue's docs say), and the suite reads back what
# the webhook and the manager did: Jobs suspended on create, their
# Workloads (name job-<job>-<hash>, owner reference), admission in the
# right flavor (nodeSelector from the flavor's nodeLabels, tolerations),
# Kueue's columns, a Job that waits for quota and is admitted when an
# earlier one finishes, partial admission, LocalQueue defaulting, Workload
# deletion with its Job; the queue-name label changing while suspended
# (the Workload follows) and denied once running, as are template and
# completions changes (kube's own 422); a Job waiting for its
# LocalQueue to be created; invalid objects of every Kueue kind denied
# with every bad field in one message; managedJobsNamespaceSelector with
# manageJobsWithoutQueueName (the manager restarted with a custom
# Configuration). cueue-invariants checks the quota invariants at the
# observation points.
#
# The devserver's job runner completes a Job --job-runtime after it is
# unsuspended; the suite sets that to 1h and ends a Job when it chooses by
# annotating it cueue.dev/runtime=1ms (release), so no check races a
# finishing Job. manifests/jobs/ holds the suite's own objects.
#
# The v1beta1 examples (test/fixtures/upstream/v1beta1/*) run in
# v1beta1.sh. Not covered: serving-workloads/sample-hami.yaml (a
# Deployment).
#
# MANAGER_BIN / DEVSERVER_BIN / INVARIANTS_BIN test other binaries.
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init jobs

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
up=$e2e_top/test/fixtures/upstream
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
# How long (tenths of a second, wall time) a change may take to show.
T=${JOBS_WAIT:-300}
cd "$e2e_dir/manifests/jobs" || exit 1

on_exit_stop_clusters "$cluster"

# ---------------------------------------------------------------------
# Helpers (now_ms, wait_until, is_eq, expect_eventually, jp, cond_line,
# active_of, admission_of, snapshot, invariants, wl_name and release are
# lib.bash's)

# track JOB [NS]: fills the cache (call it in the suite's own shell).
track() {
	wl_name "$@" >/dev/null
}

# admitted_in JOB [NS]: "Admitted-status CQ flavors" of the Job's Workload.
admitted_in() {
	admission_of "$(wl_name "$1" "${2:-default}")" "${2:-default}"
}

# reserved_msg JOB [NS]: the Workload's QuotaReserved "status reason: message".
reserved_msg() {
	cond_line "workload/$(wl_name "$1" "${2:-default}")" QuotaReserved "${2:-default}"
}

# finished_of JOB [NS]: the Workload's Finished "status reason".
finished_of() {
	jp "workload/$(wl_name "$1" "${2:-default}")" '{range .status.conditions[?(@.type=="Finished")]}{.status} {.reason}{end}' "${2:-default}"
}

# running JOB [NS]: "suspend nodeSelector tolerations podset-label".
running() {
	jp "job/$1" '{.spec.suspend} {.spec.template.spec.nodeSelector} {.spec.template.spec.tolerations} {.spec.template.metadata.labels.kueue\.x-k8s\.io/podset}' "${2:-default}"
}

# cq_state CQ: "pending reserving admitted" and the reservation.
cq_state() {
	jp "clusterqueue/$1" '{.status.pendingWorkloads} {.status.reservingWorkloads} {.status.admittedWorkloads} {.status.flavorsReservation}'
}

# create_job NAME FILE [ARGS...]: kubectl create -f FILE (unchanged): one
# check that it is created suspended (the answer to the create is the
# object as the mutating webhook left it); sets $job to its name.
create_job() {
	local name=$1 f=$2
	shift 2
	run_cmd kubectl create -f "$f" "$@" -o jsonpath='{.metadata.name} {.spec.suspend}'
	job=${out% *}
	[ "$rc" -eq 0 ] && track "$job"
	if [ "$rc" -eq 0 ] && [ "${out##* }" = true ]; then
		pass "$name: created suspended ($job)"
	else
		fail "$name: created suspended" "kubectl create -f $f $*: exit $rc: $out"
	fi
}

# Job names made by generateName become aliases in compared tables, and
# the Workload hash suffix <h>; rows are sorted (generated names order).
aliases=()
alias_job() { aliases+=("s/$1/$2/g"); }
norm_jobs() {
	local a s=''
	for a in "${aliases[@]}"; do s+="$a;"; done
	norm_table | sed -E "$s"'s/^((default|jobs-[a-z]+) \| )?(job-[A-Za-z0-9-]+)-[0-9a-f]{5} \|/\1\3-<h> |/' |
		{ IFS= read -r h; echo "$h"; LC_ALL=C sort; }
}
expect_jobs_table() {
	local name=$1 want=$2
	shift 2
	compare "$name" "$want" norm_jobs "$@"
}

# ---------------------------------------------------------------------
# 1. The cluster: devserver + manager with the real webhook path.

job_cluster_start

# ---------------------------------------------------------------------
# 2. Quick start (getting-started/): the Job first, then the setup.

expect "create upstream quick-start-job (no queue yet)" 0 \
	kubectl create -f "$up/getting-started/quick-start-job.yaml" <<'EOF'
job.batch/sample-job created
EOF
expect "sample-job suspended by the webhook" 0 jp job/sample-job '{.spec.suspend}' <<'EOF'
true
EOF
expect_eventually "sample-job's Workload pending: LocalQueue missing" "$T" \
	"False Inadmissible: LocalQueue user-queue doesn't exist" reserved_msg sample-job
track sample-job
sj_uid=$(jp job/sample-job '{.metadata.uid}')
expect "Workload job-sample-job-<hash>: owner reference, job-uid label, pod set" 0 \
	jp "workload/$(wl_name sample-job)" "{.metadata.ownerReferences} {.metadata.labels.kueue\.x-k8s\.io/job-uid} {.spec.queueName} {.spec.podSets[0].name} {.spec.podSets[0].count}" <<EOF
[{"apiVersion":"batch/v1","blockOwnerDeletion":true,"controller":true,"kind":"Job","name":"sample-job","uid":"<uid>"}] <uid> user-queue main 3
EOF
got=$(jp "workload/$(wl_name sample-job)" '{.metadata.ownerReferences[0].uid}')
if [ -n "$sj_uid" ] && [ "$got" = "$sj_uid" ]; then
	pass "the owner reference names this Job's uid"
else
	fail "the owner reference names this Job's uid" "Job uid '$sj_uid', owner uid '$got'"
fi
expect "still suspended while pending" 0 running sample-job <<'EOF'
true
EOF

expect "apply upstream quick-start-setup" 0 \
	kubectl apply -f "$up/getting-started/quick-start-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/default-flavor created
clusterqueue.kueue.x-k8s.io/cluster-queue created
localqueue.kueue.x-k8s.io/user-queue created
EOF
expect_eventually "sample-job admitted in default-flavor" "$T" \
	'True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' admitted_in sample-job
expect_eventually "sample-job unsuspended (no nodeSelector: the flavor has no labels)" "$T" \
	'false   main' running sample-job
expect_eventually "sample-job runs (job runner: active 3)" "$T" "3" jp job/sample-job '{.status.active}'
# job_events JOB: its Events as "reason: message", sorted (timestamps
# have second precision, so kubectl's order is not stable).
job_events() {
	kubectl get events --field-selector "involvedObject.kind=Job,involvedObject.name=$1" \
		-o 'jsonpath={range .items[*]}{.reason}: {.message}{"\n"}{end}' 2>&1 | LC_ALL=C sort
}
expect "sample-job events" 0 job_events sample-job <<EOF
CreatedWorkload: Created Workload: default/$(wl_name sample-job)
Started: Admitted by clusterQueue cluster-queue
EOF
invariants "quick start admitted" --status

# jobs/sample-job.yaml (generateName), twice: both fit beside sample-job
# (3 + 3 + 3 of 9 cpu); a third waits.
create_job "upstream sample-job.yaml #1" "$up/jobs/sample-job.yaml"
j1=$job && alias_job "$j1" sample-job-J1
create_job "upstream sample-job.yaml #2" "$up/jobs/sample-job.yaml"
j2=$job && alias_job "$j2" sample-job-J2
expect_eventually "#1 admitted" "$T" 'True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' admitted_in "$j1"
expect_eventually "#2 admitted" "$T" 'True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' admitted_in "$j2"
create_job "upstream sample-job.yaml #3" "$up/jobs/sample-job.yaml"
j3=$job && alias_job "$j3" sample-job-J3
expect_eventually "#3 waits: quota used up" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 3 more needed" \
	reserved_msg "$j3"
expect "#3 stays suspended" 0 running "$j3" <<'EOF'
true
EOF
expect_eventually "cluster-queue: 1 pending, 3 reserving, 3 admitted, 9 cpu" "$T" \
	'1 3 3 [{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"9"},{"borrowed":"0","name":"memory","total":"1800Mi"}]}]' \
	cq_state cluster-queue
invariants "#3 waits" --status
expect_jobs_table "get workloads: three admitted, one waiting" 0 kubectl get workloads <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
job-sample-job-<h> | user-queue | cluster-queue | True |  | <age>
job-sample-job-J1-<h> | user-queue | cluster-queue | True |  | <age>
job-sample-job-J2-<h> | user-queue | cluster-queue | True |  | <age>
job-sample-job-J3-<h> | user-queue |  |  |  | <age>
EOF

release sample-job
expect_eventually "sample-job completes" "$T" "3" jp job/sample-job '{.status.succeeded}'
expect_eventually "sample-job's Workload Finished" "$T" "True Succeeded" finished_of sample-job
expect_eventually "#3 admitted once sample-job finished" "$T" \
	'True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' admitted_in "$j3"
expect_eventually "#3 runs" "$T" 'false   main' running "$j3"
expect_eventually "cluster-queue: sample-job's quota freed, #3's taken" "$T" \
	'0 3 3 [{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"9"},{"borrowed":"0","name":"memory","total":"1800Mi"}]}]' \
	cq_state cluster-queue
match "FinishedWorkload event on sample-job" 0 \
	"^FinishedWorkload +Workload 'default/job-sample-job-[0-9a-f]{5}' is declared finished$" \
	kubectl get events --field-selector involvedObject.name=sample-job,reason=FinishedWorkload \
	-o 'custom-columns=REASON:.reason,MESSAGE:.message'
invariants "sample-job finished, #3 admitted" --status
expect_jobs_table "get workloads: FINISHED column" 0 kubectl get workloads <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
job-sample-job-<h> | user-queue | cluster-queue | True | True | <age>
job-sample-job-J1-<h> | user-queue | cluster-queue | True |  | <age>
job-sample-job-J2-<h> | user-queue | cluster-queue | True |  | <age>
job-sample-job-J3-<h> | user-queue | cluster-queue | True |  | <age>
EOF

release "$j1" "$j2" "$j3"
finished3() {
	finished_of "$j1"
	printf '|'
	finished_of "$j2"
	printf '|'
	finished_of "$j3"
}
expect_eventually "all finished: cluster-queue's quota free" "$T" \
	'0 0 0 [{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"0"},{"borrowed":"0","name":"memory","total":"0"}]}]' \
	cq_state cluster-queue
expect_eventually "#1..#3 Workloads Finished" "$T" "True Succeeded|True Succeeded|True Succeeded" \
	finished3
expect "the four Jobs completed (succeeded 3, Complete)" 0 \
	kubectl get jobs -o 'jsonpath={range .items[*]}{.status.succeeded} {.status.conditions[?(@.type=="Complete")].status}{"\n"}{end}' <<'EOF'
3 True
3 True
3 True
3 True
EOF
invariants "all finished" --status

# ---------------------------------------------------------------------
# 3. Flavors with labels: taints (admin/resource-flavor-taints.yaml),
#    then tolerations (admin/resource-flavor-tolerations.yaml), both
#    named spot; flavor-cq tries spot, then default-flavor.

expect "apply upstream resource-flavor-taints, resource-flavor-empty" 0 \
	kubectl apply -f "$up/admin/resource-flavor-taints.yaml" -f "$up/admin/resource-flavor-empty.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/spot created
resourceflavor.kueue.x-k8s.io/default-flavor unchanged
EOF
expect "apply flavor-queue" 0 kubectl apply -f flavor-queue.yaml <<'EOF'
clusterqueue.kueue.x-k8s.io/flavor-cq created
localqueue.kueue.x-k8s.io/flavor-queue created
EOF
create_job "tolerant (tolerates spot's taint)" job-tolerant.yaml
create_job "plain (no toleration)" job-plain.yaml
expect_eventually "tolerant admitted in spot" "$T" 'True flavor-cq {"cpu":"spot"}' admitted_in tolerant
expect_eventually "plain admitted in default-flavor (spot's taint untolerated)" "$T" \
	'True flavor-cq {"cpu":"default-flavor"}' admitted_in plain
expect_eventually "tolerant runs with spot's nodeLabels as nodeSelector" "$T" \
	'false {"instance-type":"spot"} [{"effect":"NoSchedule","key":"spot","operator":"Equal","value":"true"}] main' running tolerant
expect_eventually "plain runs without nodeSelector" "$T" 'false   main' running plain

expect "apply upstream resource-flavor-tolerations (spot: no taint, tolerations)" 0 \
	kubectl apply -f "$up/admin/resource-flavor-tolerations.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/spot configured
EOF
expect "spot's spec" 0 jp resourceflavor/spot '{.spec}' <<'EOF'
{"nodeLabels":{"instance-type":"spot"},"tolerations":[{"effect":"NoSchedule","key":"spot-taint","operator":"Exists"}]}
EOF
create_job "plain2 (no toleration)" job-plain2.yaml
expect_eventually "plain2 admitted in spot" "$T" 'True flavor-cq {"cpu":"spot"}' admitted_in plain2
expect_eventually "plain2 runs with spot's nodeSelector and tolerations" "$T" \
	'false {"instance-type":"spot"} [{"effect":"NoSchedule","key":"spot-taint","operator":"Exists"}] main' running plain2
invariants "flavors" --status
release tolerant plain plain2
expect_eventually "flavor-cq's quota free" "$T" \
	'0 0 0 [{"name":"spot","resources":[{"borrowed":"0","name":"cpu","total":"0"}]},{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"0"}]}]' \
	cq_state flavor-cq

# ---------------------------------------------------------------------
# 4. LocalQueue defaulting: an unlabelled Job in a namespace with a
#    LocalQueue named "default"; and in one without.

expect "apply defaulting namespaces and LocalQueue" 0 kubectl apply -f defaulting.yaml <<'EOF'
namespace/jobs-defaulting created
namespace/jobs-plain created
localqueue.kueue.x-k8s.io/default created
EOF
expect "unlabelled Job in jobs-defaulting: queue-name default, suspended" 0 \
	kubectl create -f job-unlabelled.yaml -n jobs-defaulting \
	-o jsonpath='{.metadata.labels.kueue\.x-k8s\.io/queue-name} {.spec.suspend}' <<'EOF'
default true
EOF
track unlabelled jobs-defaulting
expect_eventually "its Workload admitted from queue default" "$T" \
	'True cluster-queue {"cpu":"default-flavor"}' admitted_in unlabelled jobs-defaulting
expect_eventually "it runs and its Workload finishes (runtime 200ms)" "$T" "True Succeeded" \
	finished_of unlabelled jobs-defaulting
expect "unlabelled Job in jobs-plain: not managed, not suspended" 0 \
	kubectl create -f job-unlabelled.yaml -n jobs-plain \
	-o jsonpath='{.metadata.labels.kueue\.x-k8s\.io/queue-name} {.spec.suspend}' <<'EOF'
 false
EOF
expect_eventually "it completes on its own" "$T" "1" jp job/unlabelled '{.status.succeeded}' jobs-plain
expect "no Workload in jobs-plain" 0 kubectl get workloads -n jobs-plain <<'EOF'
No resources found in jobs-plain namespace.
EOF

# ---------------------------------------------------------------------
# 5. The other v1beta2 setups apply unchanged; their Jobs run.

expect "apply upstream minimal-cq" 0 kubectl apply -f "$up/admin/minimal-cq.yaml" <<'EOF'
clusterqueue.kueue.x-k8s.io/cluster-queue-2 created
EOF
expect_eventually "cluster-queue-2 inactive: its AdmissionChecks do not exist" "$T" \
	"False AdmissionCheckNotFound: Can't admit new workloads: references missing AdmissionCheck(s): sample-prov,sample-prov-2." \
	active_of cluster-queue-2
expect "apply upstream concurrent-admission-setup" 0 \
	kubectl apply -f "$up/admin/concurrent-admission-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/reservation created
resourceflavor.kueue.x-k8s.io/on-demand created
resourceflavor.kueue.x-k8s.io/spot configured
clusterqueue.kueue.x-k8s.io/team-cluster-queue created
localqueue.kueue.x-k8s.io/team-queue created
EOF
# Both setups name their ClusterQueue team-cluster-queue, and
# concurrentAdmissionPolicy is immutable (as in Kueue): delete it first.
expect "delete team-cluster-queue" 0 kubectl delete clusterqueue team-cluster-queue <<'EOF'
clusterqueue.kueue.x-k8s.io "team-cluster-queue" deleted
EOF
expect "apply upstream shared-quota-setup" 0 \
	kubectl apply -f "$up/admin/shared-quota-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/on-demand configured
resourceflavor.kueue.x-k8s.io/spot configured
resourceflavor.kueue.x-k8s.io/credits created
clusterqueue.kueue.x-k8s.io/team-cluster-queue created
localqueue.kueue.x-k8s.io/team-queue unchanged
EOF
# Without the Configuration's transformation (not in the shipped file)
# the Job asks for cpu only: on-demand, the first flavor, fits.
create_job "upstream shared-quota-sample-job" "$up/admin/shared-quota-sample-job.yaml"
sq=$job && alias_job "$sq" sample-job-SQ
expect_eventually "shared-quota job admitted in on-demand" "$T" \
	'True team-cluster-queue {"cpu":"on-demand"}' admitted_in "$sq"
expect_eventually "shared-quota job runs with on-demand's nodeSelector" "$T" \
	'false {"node-type":"on-demand"}  main' running "$sq"
release "$sq"
expect_eventually "shared-quota job's Workload Finished" "$T" "True Succeeded" finished_of "$sq"

# admission-fs/: its setup reconfigures cluster-queue (StrictFIFO, cpu only).
expect "apply upstream admission-fair-sharing-setup" 0 \
	kubectl apply -f "$up/admission-fs/admission-fair-sharing-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/default-flavor unchanged
clusterqueue.kueue.x-k8s.io/cluster-queue configured
localqueue.kueue.x-k8s.io/lq-a created
localqueue.kueue.x-k8s.io/lq-b created
EOF
create_job "upstream lq-a-simple-job" "$up/admission-fs/lq-a-simple-job.yaml"
fa=$job && alias_job "$fa" sample-job-FA
create_job "upstream lq-b-simple-job" "$up/admission-fs/lq-b-simple-job.yaml"
fb=$job && alias_job "$fb" sample-job-FB
expect_eventually "lq-a job admitted" "$T" 'True cluster-queue {"cpu":"default-flavor"}' admitted_in "$fa"
expect_eventually "lq-b job admitted" "$T" 'True cluster-queue {"cpu":"default-flavor"}' admitted_in "$fb"
invariants "admission-fs jobs" --status
release "$fa" "$fb"
expect_eventually "cluster-queue's quota free again" "$T" \
	'0 0 0 [{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"0"}]}]' \
	cq_state cluster-queue

# ---------------------------------------------------------------------
# 6. Run a Job (admin/single-clusterqueue-setup.yaml): partial admission,
#    an elastic Job, deletion.

expect "apply upstream single-clusterqueue-setup" 0 \
	kubectl apply -f "$up/admin/single-clusterqueue-setup.yaml" <<'EOF'
resourceflavor.kueue.x-k8s.io/default-flavor unchanged
clusterqueue.kueue.x-k8s.io/cluster-queue configured
localqueue.kueue.x-k8s.io/user-queue unchanged
EOF
create_job "upstream sample-job.yaml #4" "$up/jobs/sample-job.yaml"
j4=$job && alias_job "$j4" sample-job-J4
expect_eventually "#4 admitted (3 of 9 cpu)" "$T" \
	'True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' admitted_in "$j4"
create_job "upstream sample-job-partial-admission" "$up/jobs/sample-job-partial-admission.yaml"
partial_state() {
	jp "workload/$(wl_name sample-job-partial-admission)" '{.status.admission.podSetAssignments[0].count} '
	admitted_in sample-job-partial-admission
}
expect_eventually "partial admission: 6 of 20 pods (6 cpu left, min 5)" "$T" \
	'6 True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' \
	partial_state
expect_eventually "the Job runs with parallelism 6, completions 20" "$T" "false 6 20" \
	jp job/sample-job-partial-admission '{.spec.suspend} {.spec.parallelism} {.spec.completions}'
expect_eventually "cluster-queue full: 9 cpu" "$T" \
	'0 2 2 [{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"9"},{"borrowed":"0","name":"memory","total":"1800Mi"}]}]' \
	cq_state cluster-queue
invariants "partial admission" --status
expect "create upstream sample-scalable-job" 0 \
	kubectl create -f "$up/jobs/sample-scalable-job.yaml" <<'EOF'
job.batch/sample-elastic-job created
EOF
track sample-elastic-job
expect_eventually "sample-elastic-job waits (300m cpu; the queue is full)" "$T" \
	"False Pending: couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default-flavor, 300m more needed" \
	reserved_msg sample-elastic-job
wl4=$(wl_name "$j4")
expect "delete #4 (admitted, running)" 0 kubectl delete job "$j4" <<EOF
job.batch "$j4" deleted
EOF
expect_eventually "#4's Workload removed" "$T" \
	"Error from server (NotFound): workloads.kueue.x-k8s.io \"$wl4\" not found" \
	kubectl get workload "$wl4"
expect_eventually "sample-elastic-job admitted in the freed quota" "$T" \
	'True cluster-queue {"cpu":"default-flavor","memory":"default-flavor"}' admitted_in sample-elastic-job
expect_jobs_table "get workloads -A" 0 kubectl get workloads -A <<'EOF'
NAMESPACE | NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
default | job-plain-<h> | flavor-queue | flavor-cq | True | True | <age>
default | job-plain2-<h> | flavor-queue | flavor-cq | True | True | <age>
default | job-sample-elastic-job-<h> | user-queue | cluster-queue | True |  | <age>
default | job-sample-job-<h> | user-queue | cluster-queue | True | True | <age>
default | job-sample-job-FA-<h> | lq-a | cluster-queue | True | True | <age>
default | job-sample-job-FB-<h> | lq-b | cluster-queue | True | True | <age>
default | job-sample-job-J1-<h> | user-queue | cluster-queue | True | True | <age>
default | job-sample-job-J2-<h> | user-queue | cluster-queue | True | True | <age>
default | job-sample-job-J3-<h> | user-queue | cluster-queue | True | True | <age>
default | job-sample-job-SQ-<h> | team-queue | team-cluster-queue | True | True | <age>
default | job-sample-job-partial-admission-<h> | user-queue | cluster-queue | True |  | <age>
default | job-tolerant-<h> | flavor-queue | flavor-cq | True | True | <age>
jobs-defaulting | job-unlabelled-<h> | default | cluster-queue | True | True | <age>
EOF
invariants "#4 deleted" --status
release sample-job-partial-admission sample-elastic-job
expect_eventually "partial-admission Job's Workload Finished" "$T" \
	"True Succeeded" finished_of sample-job-partial-admission
expect_eventually "sample-elastic-job's Workload Finished" "$T" "True Succeeded" finished_of sample-elastic-job
expect_eventually "cluster-queue empty at the end" "$T" \
	'0 0 0 [{"name":"default-flavor","resources":[{"borrowed":"0","name":"cpu","total":"0"},{"borrowed":"0","name":"memory","total":"0"}]}]' \
	cq_state cluster-queue
# Deleting a finished Job removes its Workload too.
wlq=$(wl_name sample-job)
expect "delete the finished sample-job" 0 kubectl delete job sample-job <<'EOF'
job.batch "sample-job" deleted
EOF
expect_eventually "its Workload removed" "$T" \
	"Error from server (NotFound): workloads.kueue.x-k8s.io \"$wlq\" not found" \
	kubectl get workload "$wlq"
invariants "end" --status
match "the manager still runs" 0 '^manager: running' "$devcluster" status "$cluster"

# ---------------------------------------------------------------------
# 7. The queue-name label (kueue-api.md §12.3, §12.4): while the Job is
#    suspended it may change and the Workload follows; once the Job runs
#    the change is denied. A Job for a missing LocalQueue stays
#    suspended, its Workload pending with Kueue's message, until the
#    LocalQueue is created; then it is admitted and finishes.

# job_yaml NAME QUEUE: a one-pod Job (1 cpu) of namespace default.
job_yaml() {
	cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: $2
spec:
  template:
    spec:
      containers:
      - name: c
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        resources:
          requests:
            cpu: "1"
      restartPolicy: Never
EOF
}
job_yaml relabel nowhere-queue >"$work/relabel.yaml"
create_job "relabel (queue nowhere-queue, missing)" "$work/relabel.yaml"
expect_eventually "relabel's Workload pending: LocalQueue missing" "$T" \
	"False Inadmissible: LocalQueue nowhere-queue doesn't exist" reserved_msg relabel
expect "suspended: changing the queue-name label is allowed" 0 \
	kubectl label --overwrite job relabel kueue.x-k8s.io/queue-name=user-queue <<'EOF'
job.batch/relabel labeled
EOF
expect_eventually "the Workload follows the label (spec.queueName user-queue)" "$T" \
	"user-queue" jp "workload/$(wl_name relabel)" '{.spec.queueName}'
expect_eventually "relabel admitted through user-queue" "$T" \
	'True cluster-queue {"cpu":"default-flavor"}' admitted_in relabel
expect_eventually "relabel runs" "$T" 'false   main' running relabel
expect "running: changing the queue-name label is denied" 1 \
	kubectl label --overwrite job relabel kueue.x-k8s.io/queue-name=lq-a <<'EOF'
Error from server (Forbidden): admission webhook "vjob.kb.io" denied the request: metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "lq-a": field is immutable
EOF
expect "running: removing the queue-name label is denied" 1 \
	kubectl label job relabel kueue.x-k8s.io/queue-name- <<'EOF'
Error from server (Forbidden): admission webhook "vjob.kb.io" denied the request: metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "": field is immutable
EOF
expect "running: a merge patch changing it is denied too" 1 \
	kubectl patch job relabel --type=merge \
	-p '{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"lq-b"}}}' <<'EOF'
Error from server (Forbidden): admission webhook "vjob.kb.io" denied the request: metadata.labels[kueue.x-k8s.io/queue-name]: Invalid value: "lq-b": field is immutable
EOF
# kube-apiserver's own Job validation (devserver/jobval.h) answers before
# the webhook: a running Job's pod template is immutable, with kube's 422.
expect "running: a template patch is refused with kube's 422" 1 \
	kubectl patch job relabel --type=merge \
	-p '{"spec":{"template":{"spec":{"nodeSelector":{"disk":"ssd"}}}}}' <<'EOF'
The Job "relabel" is invalid: spec.template: Invalid value: core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:"", GenerateName:"", Namespace:"", SelfLink:"", UID:"", ResourceVersion:"", Generation:0, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriod...: field is immutable
EOF
expect "running: so is a completions patch of a NonIndexed Job" 1 \
	kubectl patch job relabel --type=strategic -p '{"spec":{"completions":5}}' <<'EOF'
The Job "relabel" is invalid: spec.completions: Invalid value: 5: field is immutable
EOF
expect "the label and the Workload's queue are unchanged" 0 \
	jp job/relabel '{.metadata.labels.kueue\.x-k8s\.io/queue-name} {.spec.suspend}' <<'EOF'
user-queue false
EOF
release relabel
expect_eventually "relabel's Workload Finished" "$T" "True Succeeded" finished_of relabel

job_yaml late late-queue >"$work/late.yaml"
create_job "late (queue late-queue, not created yet)" "$work/late.yaml"
expect_eventually "late's Workload pending: LocalQueue missing" "$T" \
	"False Inadmissible: LocalQueue late-queue doesn't exist" reserved_msg late
sleep 2
expect "late still suspended and pending 2 s later" 0 reserved_msg late <<'EOF'
False Inadmissible: LocalQueue late-queue doesn't exist
EOF
expect "late has no pods" 0 jp job/late '{.spec.suspend}|{.status.active}|' <<'EOF'
true||
EOF
cat >"$work/late-queue.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: late-queue
  namespace: default
spec:
  clusterQueue: cluster-queue
EOF
expect "create LocalQueue late-queue" 0 kubectl create -f "$work/late-queue.yaml" <<'EOF'
localqueue.kueue.x-k8s.io/late-queue created
EOF
expect_eventually "late admitted once its LocalQueue exists" "$T" \
	'True cluster-queue {"cpu":"default-flavor"}' admitted_in late
expect_eventually "late runs" "$T" 'false   main' running late
release late
expect_eventually "late's Workload Finished" "$T" "True Succeeded" finished_of late
expect "late completed" 0 \
	jp job/late '{.status.succeeded} {.status.conditions[?(@.type=="Complete")].status}' <<'EOF'
1 True
EOF
invariants "queue-name changes, late LocalQueue" --status

# ---------------------------------------------------------------------
# 8. Invalid Kueue objects are denied, every bad field in one message.
#    What the CRD schema finds (patterns, enums, int32) and its CEL
#    rules (x-kubernetes-validations) come back as the API server's "is
#    invalid" list, and the validating webhooks are not called; what
#    passes the schema reaches Kueue's webhooks, which answer one
#    "denied the request: [a, b, ...]" aggregate.

# denied NAME FILE KIND/NAME PATH...: kubectl create -f FILE fails with
# one error message naming every PATH, and nothing was created.
denied() {
	local name=$1 f=$2 obj=$3 p missing='' n
	shift 3
	run_cmd kubectl create -f "$f"
	for p in "$@"; do
		grep -Fq -- "$p" <<<"$out" || missing+=" [$p]"
	done
	n=$(grep -cE '^(Error from server|The .* is invalid)' <<<"$out")
	if [ "$rc" -ne 0 ] && [ -z "$missing" ] && [ "$n" -eq 1 ] &&
		! kubectl get "$obj" >/dev/null 2>&1; then
		pass "$name"
	else
		fail "$name" "exit $rc; $n error messages; missing:${missing:- none}
$out"
	fi
}
cat >"$work/bad-cq.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: bad-cq
spec:
  namespaceSelector:
    matchExpressions:
    - key: team
      operator: In
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: -1
        borrowingLimit: 2
        lendingLimit: 5
EOF
# The CRD's CEL rule refuses the borrowingLimit before the webhook runs
# (kube-apiserver validates, CEL included, before validating admission).
expect "ClusterQueue: the CRD's CEL rule, before the webhook" 1 \
	kubectl create -f "$work/bad-cq.yaml" <<'EOF'
The ClusterQueue "bad-cq" is invalid: spec: Invalid value: "object": borrowingLimit must be nil when cohort is empty
EOF
grep -v borrowingLimit "$work/bad-cq.yaml" >"$work/bad-cq-hook.yaml"
expect "ClusterQueue: the webhook names the other four problems at once" 1 \
	kubectl create -f "$work/bad-cq-hook.yaml" <<'EOF'
Error from server (Forbidden): error when creating "<work>/bad-cq-hook.yaml": admission webhook "vclusterqueue.kb.io" denied the request: [spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-1": must be greater than or equal to 0, spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "5": must be nil when cohort is empty, spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "5": must be less than or equal to the nominalQuota, spec.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn']
EOF
cat >"$work/bad-cq2.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: bad-cq2
spec:
  cohortName: Not_A_Name
  queueingStrategy: Random
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: 1
EOF
denied "ClusterQueue: schema errors listed together" "$work/bad-cq2.yaml" clusterqueue/bad-cq2 \
	'spec.cohortName: Invalid value: "Not_A_Name"' \
	'spec.queueingStrategy: Unsupported value: "Random"'
cat >"$work/bad-lq.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: Bad_LQ
  namespace: default
spec:
  clusterQueue: Bad_CQ
  stopPolicy: Maybe
EOF
denied "LocalQueue: name, clusterQueue, stopPolicy" "$work/bad-lq.yaml" localqueue/Bad_LQ \
	'metadata.name: Invalid value: "Bad_LQ"' 'spec.clusterQueue: Invalid value: "Bad_CQ"' \
	'spec.stopPolicy: Unsupported value: "Maybe"'
# (the CRD's CEL rule self == oldSelf, evaluated by the API server: CEL
# names the value by its type)
expect "LocalQueue: clusterQueue is immutable" 1 \
	kubectl patch localqueue late-queue --type=merge -p '{"spec":{"clusterQueue":"flavor-cq"}}' <<'EOF'
The LocalQueue "late-queue" is invalid: spec.clusterQueue: Invalid value: "string": field is immutable
EOF
cat >"$work/bad-rf.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: bad-rf
spec:
  nodeLabels:
    "bad key!": "x"
    ok: "bad value!"
  nodeTaints:
  - key: k
    value: "bad value!"
    effect: NoSchedule
EOF
denied "ResourceFlavor: labels and taint (the webhook)" "$work/bad-rf.yaml" resourceflavor/bad-rf \
	'spec.nodeLabels: Invalid value: "bad key!"' \
	'spec.nodeLabels: Invalid value: "bad value!"' \
	'spec.nodeTaints[0].value: Invalid value: "bad value!"'
cat >"$work/bad-rf-cel.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: bad-rf
spec:
  nodeTaints:
  - key: k
    effect: Sometimes
  tolerations:
  - key: t
    operator: Exists
    value: v
EOF
denied "ResourceFlavor: taint and toleration (the CRD's CEL rules)" "$work/bad-rf-cel.yaml" resourceflavor/bad-rf \
	"spec.nodeTaints: Invalid value: \"array\": supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'" \
	"spec.tolerations: Invalid value: \"array\": a value must be empty when 'operator' is 'Exists'"
cat >"$work/bad-cohort.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata:
  name: bad-cohort
spec:
  resourceGroups:
  - coveredResources: ["cpu"]
    flavors:
    - name: default-flavor
      resources:
      - name: cpu
        nominalQuota: -2
        lendingLimit: 1
EOF
denied "Cohort: quota and lending limit" "$work/bad-cohort.yaml" cohort/bad-cohort \
	'spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: "-2"' \
	'spec.resourceGroups[0].flavors[0].resources[0].lendingLimit: Invalid value: "1"'
cat >"$work/bad-wpc.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata:
  name: Bad_WPC
value: 2147483648
EOF
denied "WorkloadPriorityClass: name and value" "$work/bad-wpc.yaml" workloadpriorityclass/Bad_WPC \
	'metadata.name: Invalid value: "Bad_WPC"' 'value: Invalid value: 2147483648'
cat >"$work/bad-wl.yaml" <<'EOF'
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: bad-wl
  namespace: default
spec:
  queueName: Bad_Q
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          image: x
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: c
          image: x
EOF
denied "Workload: queueName and duplicate pod set" "$work/bad-wl.yaml" workload/bad-wl \
	'spec.queueName: Invalid value: "Bad_Q"' 'spec.podSets[1]: Duplicate value'

# ---------------------------------------------------------------------
# 9. managedJobsNamespaceSelector (kueue-api.md §12.1, §13.1): the
#    manager restarts with a Configuration that also manages Jobs
#    without a queue name, only in namespaces labelled
#    cueue-e2e/managed=true. It is a v1beta2 file, so the selector is
#    always respected (HEAD, where ManagedJobsNamespaceSelectorAlways-
#    Respected is GA): a queue-labelled Job in another namespace is
#    suspended by the webhook but gets no Workload.
#    The namespace is created before the restart, so the restarted
#    manager (and its webhook's namespace view) know its labels.

cat >"$work/optin-ns.yaml" <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: jobs-optin
  labels:
    cueue-e2e/managed: "true"
EOF
expect "create namespace jobs-optin (cueue-e2e/managed=true)" 0 \
	kubectl create -f "$work/optin-ns.yaml" <<'EOF'
namespace/jobs-optin created
EOF
{
	cat "$e2e_top/manifests/config/controller_manager_config.yaml"
	cat <<'EOF'
manageJobsWithoutQueueName: true
managedJobsNamespaceSelector:
  matchLabels:
    cueue-e2e/managed: "true"
EOF
} >"$work/selector-config.yaml"
run_cmd env DEVCLUSTER_CONFIG="$work/selector-config.yaml" "$devcluster" restart-manager "$cluster"
if [ "$rc" -eq 0 ]; then
	pass "manager restarted with a custom managedJobsNamespaceSelector"
else
	fail "manager restarted with a custom managedJobsNamespaceSelector" "exit $rc: $out
$(tail -20 "$cluster/manager.log")"
fi

# free_job_yaml NAME NS [QUEUE]: a one-pod Job that the runner ends after
# 200ms once it runs.
free_job_yaml() {
	cat <<EOF
apiVersion: batch/v1
kind: Job
metadata:
  name: $1
  namespace: $2
  annotations:
    cueue.dev/runtime: 200ms
${3:+  labels:
    kueue.x-k8s.io/queue-name: $3}
spec:
  template:
    spec:
      containers:
      - name: c
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        resources:
          requests:
            cpu: 100m
      restartPolicy: Never
EOF
}
free_job_yaml optin jobs-optin >"$work/optin.yaml"
expect "no queue name, namespace selected: suspended on create" 0 \
	kubectl create -f "$work/optin.yaml" -o jsonpath='{.spec.suspend}' <<'EOF'
true
EOF
track optin jobs-optin
expect_eventually "its Workload is created (no queue name)" "$T" "optin " \
	jp "workload/$(wl_name optin jobs-optin)" '{.metadata.ownerReferences[0].name} {.spec.queueName}' jobs-optin
free_job_yaml outside jobs-plain >"$work/outside.yaml"
expect "no queue name, namespace not selected: left alone" 0 \
	kubectl create -f "$work/outside.yaml" -o jsonpath='{.spec.suspend}' <<'EOF'
false
EOF
expect_eventually "it completes on its own" "$T" "1" jp job/outside '{.status.succeeded}' jobs-plain
free_job_yaml outside-labelled jobs-plain user-queue >"$work/outside-labelled.yaml"
expect "queue name, namespace not selected: suspended by the webhook" 0 \
	kubectl create -f "$work/outside-labelled.yaml" -o jsonpath='{.spec.suspend}' <<'EOF'
true
EOF
sleep 2
expect "...but the reconciler ignores it: no Workload in jobs-plain" 0 \
	kubectl get workloads -n jobs-plain <<'EOF'
No resources found in jobs-plain namespace.
EOF
expect "the Jobs of jobs-plain, with and without a queue name" 0 \
	kubectl get jobs -n jobs-plain -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.suspend}{"\n"}{end}' <<'EOF'
outside false
outside-labelled true
unlabelled false
EOF

# ---------------------------------------------------------------------
# 10. Stop.

devcluster_stop
e2e_finish
