#!/usr/bin/env bash
# cli: `kubectl cueue` (bin/kubectl-cueue, issue 20) through kubectl's
# plugin mechanism (bin/ on PATH), against a devcluster with the org of
# manifests/cli/setup.yaml:
#   pending     the queue in order, as the visibility API lists it (the
#               positions compared), every ClusterQueue, one, a LocalQueue
#   explain     a workload waiting for quota (its message equals the one
#               the object shows; the quota arithmetic; the holder named),
#               one that never fits, an admitted one, by Job, job/ and
#               workload/; an unknown name
#   simulate    every verdict and exit code (admitted now on its flavor,
#               preempting the named victim, waits, never fits, invalid by
#               the API server's validation, a malformed file with its
#               line and column, a missing LocalQueue), and nothing is
#               created by it
#   doctor      the findings of a broken setup and their exit code
#   property    cli_property.py: simulate's verdict equals the manager's
#               decision over random states (CLI_PROPERTY_ROUNDS, 12)
# cueue-invariants runs at each observation point.
#
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init cli

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
plugin_src=${KUBECTL_CUEUE_BIN:-$e2e_top/bin/kubectl-cueue}
devcluster=$e2e_dir/devcluster
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
T=${CLI_WAIT:-300}
rounds=${CLI_PROPERTY_ROUNDS:-12}
V1=/apis/visibility.kueue.x-k8s.io/v1beta1
cd "$e2e_dir/manifests/cli" || exit 1

on_exit_stop_clusters "$cluster"

# The plugin from a copy (a rebuild during the suite cannot swap it), found
# by kubectl on PATH as kubectl-cueue.
mkdir -p "$work/bin"
cp "$plugin_src" "$work/bin/kubectl-cueue" || exit 1
export PATH=$work/bin:$PATH

# mkjob NAME NS QUEUE PRIORITY CPU: the Job's YAML in $work/NAME.yaml.
mkjob() {
	sed -e "s/NAME/$1/" -e "s/NS/$2/" -e "s/QUEUE/$3/" -e "s/PRIO/$4/" \
		-e "s/CPU/$5/" job.tmpl >"$work/$1.yaml"
}
# create NAME NS QUEUE PRIORITY CPU: mkjob, then create it (a second apart:
# queue order ties on whole seconds).
create() {
	mkjob "$@"
	sleep 1.1
	expect "create job $2/$1 ($3, $4, cpu $5)" 0 \
		kubectl create -f "$work/$1.yaml" -o jsonpath='{.spec.suspend}' <<<'true'
}
# state JOB NS: "suspend active-pods".
state() {
	local s
	s=$(jp "job/$1" '{.spec.suspend} {.status.active}' "$2")
	[ "${s% }" != "$s" ] && s+=0
	echo "$s"
}
# py CODE ARGS...: python3 on stdin's JSON.
py() {
	python3 -c "import json, sys
d = json.load(sys.stdin)
$1" "${@:2}"
}
# pending_jobs ARGS...: "JOB position [inLQ] state" per row of
# `kubectl cueue pending ARGS -o json`.
pending_jobs() {
	kubectl cueue pending "$@" -o json | py '
for it in d["items"]:
    print(it["owner"].split("/")[1], it["positionInClusterQueue"],
          it.get("positionInLocalQueue", "-"),
          "inadmissible" if it["inadmissible"] else "pending")'
}
# vis_jobs PATH: "JOB posCQ posLQ" of the visibility API.
vis_jobs() {
	kubectl get --raw "$1" | py '
for it in d["items"]:
    own = [o["name"] for o in it["metadata"]["ownerReferences"]]
    print(own[0], it["positionInClusterQueue"], it["positionInLocalQueue"])'
}
# doctor_lines: "severity check object" per finding, then the exit code.
doctor_lines() {
	local rc
	kubectl cueue doctor -o json >"$work/doctor.json"
	rc=$?
	py '
for f in d["findings"]:
    print(f["severity"], f["check"], f["object"])
print("errors", d["errors"], "warnings", d["warnings"])' <"$work/doctor.json"
	echo "exit $rc"
}
# sim FILE [FLAGS...]: simulate's JSON reduced to the facts (workload
# names carry a hash of a uid: the Job's name stands for them), then
# its exit code.
sim() {
	local rc
	kubectl cueue simulate -f "$@" -o json >"$work/sim.json" 2>&1
	rc=$?
	py '
print(d["verdict"], d.get("clusterQueue"))
for ps, f in sorted((d.get("flavors") or {}).items()):
    print("flavors", ps, sorted(f.items()))
for v in d.get("preempts") or []:
    print("preempts", v["namespace"], v["name"].rsplit("-", 1)[0], v["clusterQueue"], v["reason"])
if d.get("message"):
    print(d["message"])' <"$work/sim.json"
	echo "exit $rc"
}
inv() { invariants "$1"; }

job_cluster_start
expect "apply the org" 0 kubectl apply -f setup.yaml <<'EOF'
namespace/team-a created
namespace/team-b created
workloadpriorityclass.kueue.x-k8s.io/cli-low created
workloadpriorityclass.kueue.x-k8s.io/cli-high created
resourceflavor.kueue.x-k8s.io/cli-std created
resourceflavor.kueue.x-k8s.io/cli-gpu created
clusterqueue.kueue.x-k8s.io/cli-a created
clusterqueue.kueue.x-k8s.io/cli-b created
clusterqueue.kueue.x-k8s.io/cli-gpu created
clusterqueue.kueue.x-k8s.io/cli-broken created
localqueue.kueue.x-k8s.io/main created
localqueue.kueue.x-k8s.io/gpu created
localqueue.kueue.x-k8s.io/ghost created
localqueue.kueue.x-k8s.io/main created
localqueue.kueue.x-k8s.io/idle created
EOF
match "kubectl finds the plugin on PATH" 0 '/kubectl-cueue$' kubectl plugin list
match "kubectl cueue --help" 0 '^  kubectl cueue simulate -f FILE' kubectl cueue --help
expect "an unknown command: its message" 0 bash -c 'kubectl cueue frobnicate 2>&1 | head -1' <<'EOF'
kubectl-cueue: unknown command "frobnicate"
EOF
run_cmd kubectl cueue frobnicate
[ "$rc" -eq 4 ] && pass "an unknown command exits 4" ||
	fail "an unknown command exits 4" "exit $rc"

# ---------------------------------------------------------------------
# 1. doctor on the empty org

expect "doctor: the broken setup, before any job" 0 doctor_lines <<'EOF'
error missing-flavor ClusterQueue/cli-broken
error missing-clusterqueue LocalQueue/team-a/ghost
warning nothing-lendable ClusterQueue/cli-b
warning preemption-without-cohort ClusterQueue/cli-gpu
info unused-localqueue LocalQueue/team-a/ghost
info unused-localqueue LocalQueue/team-a/gpu
info unused-localqueue LocalQueue/team-a/main
info unused-localqueue LocalQueue/team-b/idle
info unused-localqueue LocalQueue/team-b/main
errors 2 warnings 2
exit 2
EOF

# ---------------------------------------------------------------------
# 2. A queue with a holder, a waiter, one that never fits

create a1 team-a main cli-low 2
expect_eventually "a1 runs" "$T" "false 1" state a1 team-a
create a2 team-a main cli-low 1
create a3 team-a main cli-low 5
create g1 team-a gpu cli-low 1
a2=$(wl_name a2 team-a)
match_eventually "a2 is pending with Kueue's message" "$T" \
	'^False Pending: couldn.t assign flavors to pod set main: insufficient unused quota for cpu in flavor cli-std, 1 more needed$' \
	cond_line "workload/$a2" QuotaReserved team-a
match_eventually "a3 is pending (maximum capacity)" "$T" 'maximum capacity \(2\)$' \
	cond_line "workload/$(wl_name a3 team-a)" QuotaReserved team-a
match_eventually "g1 is pending (untolerated taint)" "$T" 'untolerated taint' \
	cond_line "workload/$(wl_name g1 team-a)" QuotaReserved team-a
# A topology request: TopologyAwareScheduling is not built, so it waits
# with Kueue's message instead of being admitted as if it asked nothing.
sed -e 's/NAME/t1/' -e 's/NS/team-b/' -e 's/QUEUE/main/' -e 's/PRIO/cli-low/' \
	-e 's/CPU/1/' -e 's/^    spec:$/    metadata:\n      annotations:\n        kueue.x-k8s.io\/podset-required-topology: cloud.com\/rack\n    spec:/' \
	job.tmpl >"$work/t1.yaml"
expect "create t1 (a required topology) in an empty queue" 0 \
	kubectl create -f "$work/t1.yaml" -o name <<<'job.batch/t1'
match_eventually "t1 waits: the flavor has no topology (never admitted without one)" "$T" \
	'^False Pending: couldn.t assign flavors to pod set main: Flavor "cli-std" does not support TopologyAwareScheduling$' \
	cond_line "workload/$(wl_name t1 team-b)" QuotaReserved team-b
match "explain t1: a topology rejection, never fits" 0 \
	'^ +cli-std +topology +Flavor "cli-std" does not support TopologyAwareScheduling$' \
	kubectl cueue explain t1 -n team-b
expect "delete t1" 0 kubectl delete job t1 -n team-b -o name <<<'job.batch/t1'
expect_eventually "t1's Workload is gone with it" "$T" "0" \
	bash -c 'kubectl get workloads -n team-b --no-headers 2>/dev/null | wc -l'
inv "three waiting"

expect "pending: every ClusterQueue" 0 pending_jobs <<'EOF'
a2 0 - inadmissible
a3 1 - inadmissible
g1 0 - inadmissible
EOF
expect "pending cli-a: the visibility API's positions" 0 \
	vis_jobs "$V1/clusterqueues/cli-a/pendingworkloads" <<'EOF'
a2 0 0
a3 1 1
EOF
expect "pending -n team-a main: positions in both queues" 0 \
	pending_jobs -n team-a main <<'EOF'
a2 0 0 inadmissible
a3 1 1 inadmissible
EOF
expect "pending -n team-b main: nothing" 0 kubectl cueue -n team-b pending main <<'EOF'
No pending workloads.
EOF
expect "pending of an unknown ClusterQueue: exit 4" 4 kubectl cueue pending nope <<'EOF'
kubectl-cueue: ClusterQueue nope not found
EOF
match "pending cli-a: the table's header" 0 \
	'^POSITION +WORKLOAD +JOB +PRIORITY +REQUESTS +WAITED +STATE$' \
	kubectl cueue pending cli-a
match "pending cli-a: the table's first row" 0 \
	"^0 +team-a/$a2 +Job/a2 +10 +1x\\{cpu=1\\} +[0-9]+[smhd]+ +inadmissible\$" \
	kubectl cueue pending cli-a

# ---------------------------------------------------------------------
# 3. explain

expect "explain a2: agrees with its QuotaReserved message, and adds the arithmetic" 0 \
	bash -c 'kubectl cueue explain a2 -n team-a -o json | python3 -c "
import json, sys
d = json.load(sys.stdin)
print(d[\"state\"], d[\"verdict\"], d[\"clusterQueue\"], d[\"localQueue\"], d[\"positionInClusterQueue\"])
print(\"agrees\", d[\"message\"] == d[\"quotaReservedMessage\"])
for r in d[\"rejections\"]:
    print(r[\"flavor\"], r[\"resource\"], r[\"kind\"], r[\"needed\"])
for q in d[\"quota\"]:
    print(q[\"flavor\"], q[\"resource\"], \"requested\", q[\"requested\"], \"nominal\", q[\"nominal\"],
          \"used\", q[\"usedByClusterQueue\"], \"available\", q[\"available\"], \"max\", q[\"maximum\"])
    for h in q[\"topHolders\"]:
        print(\"holder\", h[\"name\"].rsplit(\"-\", 1)[0], h[\"uses\"])
print(\"victims\", len(d[\"preemptionVictims\"]))
print(d[\"preemptionPolicy\"])
"' <<'EOF'
inadmissible Waits cli-a main 0
agrees True
cli-std cpu quota 1
cli-std cpu requested 1 nominal 2 used 2 available 0 max 2
holder job-a1 2
victims 0
withinClusterQueue: LowerPriority, reclaimWithinCohort: Any, borrowWithinCohort: Never
EOF
match "explain a2 (table): the verdict" 0 '^Verdict: +waits for quota$' \
	kubectl cueue explain a2 -n team-a
match "explain a2 (table): what would make it fit" 0 '^ +free 1 of cpu in flavor cli-std$' \
	kubectl cueue explain a2 -n team-a
match "explain a3: never fits" 0 '^Verdict: +can never fit as the queues are set up$' \
	kubectl cueue explain job/a3 -n team-a
match "explain g1: the taint named" 0 '^ +cli-gpu +taint +untolerated taint \{nvidia.com/gpu true NoSchedule <nil>\} in flavor cli-gpu$' \
	kubectl cueue -n team-a explain g1
match "explain workload/NAME of a1: admitted" 0 '^State: +admitted \(holds quota in ClusterQueue cli-a\)$' \
	kubectl cueue explain "workload/$(wl_name a1 team-a)" -n team-a
expect "explain an unknown Job: exit 4" 4 kubectl cueue explain nope -n team-a <<'EOF'
kubectl-cueue: jobs.batch "nope" not found
EOF

# ---------------------------------------------------------------------
# 4. simulate: every verdict, and nothing created

njobs=$(kubectl get jobs -A --no-headers | wc -l)
nwls=$(kubectl get workloads -A --no-headers | wc -l)
mkjob h1 team-a main cli-high 1
expect "simulate a high-priority job: admitted after preempting a1" 0 sim "$work/h1.yaml" <<'EOF'
Preempt cli-a
preempts team-a job-a1 cli-a InClusterQueue
couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor cli-std, 1 more needed. Pending the preemption of 1 workload(s)
exit 1
EOF
mkjob b1 team-b main cli-low 1
expect "simulate in team-b: admitted now on cli-std" 0 sim "$work/b1.yaml" <<'EOF'
Admit cli-b
flavors main [('cpu', 'cli-std')]
exit 0
EOF
mkjob big team-b main cli-low 5
expect "simulate 5 cpu: never fits (cli-a lends 2 at most: 4)" 0 sim "$work/big.yaml" <<'EOF'
NeverFits cli-b
couldn't assign flavors to pod set main: insufficient quota for cpu in flavor cli-std, previously considered podsets requests (0) + current podset request (5) > maximum capacity (4)
exit 2
EOF
mkjob w1 team-a main cli-low 1
expect "simulate a low job in team-a: waits" 0 sim "$work/w1.yaml" <<'EOF'
Wait cli-a
couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor cli-std, 1 more needed
exit 1
EOF
mkjob lost team-a nolq cli-low 1
expect "simulate into a missing LocalQueue: waits, saying so" 0 sim "$work/lost.yaml" <<'EOF'
Wait None
LocalQueue nolq doesn't exist
exit 1
EOF
sed 's/parallelism: 1/parallelism: -1/' "$work/w1.yaml" >"$work/neg.yaml"
expect "simulate an invalid Job: the API server's error, exit 3" 0 sim "$work/neg.yaml" <<'EOF'
Invalid None
Job.batch "w1" is invalid: spec.parallelism: Invalid value: -1: must be greater than or equal to 0
exit 3
EOF
printf 'apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: x\n  labels: {a: [}\n' >"$work/bad.yaml"
expect "simulate a malformed file: line and column, exit 3" 3 \
	kubectl cueue simulate -f "$work/bad.yaml" <<'EOF'
Verdict: invalid
<work>/bad.yaml: line 5, column 16: did not find expected node content (while parsing a flow node at line 5, column 16)
EOF
expect "simulate from stdin" 0 bash -c "kubectl cueue simulate -f - <'$work/b1.yaml' >/dev/null; echo \$?" <<'EOF'
0
EOF
expect "simulate created nothing" 0 bash -c \
	'echo $(kubectl get jobs -A --no-headers | wc -l) $(kubectl get workloads -A --no-headers | wc -l)' <<EOF
$njobs $nwls
EOF
inv "after the simulations"

# The verdict comes true: h1 created for real preempts a1 and runs.
expect "create h1 for real" 0 kubectl create -f "$work/h1.yaml" -o name <<'EOF'
job.batch/h1
EOF
expect_eventually "h1 runs" "$T" "false 1" state h1 team-a
match "a1 was preempted for it" 0 '^True Preempted: Preempted to accommodate a workload' \
	cond_line "workload/$(wl_name a1 team-a)" Evicted team-a
inv "h1 admitted"

# ---------------------------------------------------------------------
# 5. doctor with work waiting

expect "doctor: never-fits and the untolerated taint join" 0 doctor_lines <<'EOF'
error never-fits ClusterQueue/cli-a
error missing-flavor ClusterQueue/cli-broken
error never-fits ClusterQueue/cli-gpu
error missing-clusterqueue LocalQueue/team-a/ghost
warning nothing-lendable ClusterQueue/cli-b
warning preemption-without-cohort ClusterQueue/cli-gpu
warning untolerated-taint ResourceFlavor/cli-gpu
info unused-localqueue LocalQueue/team-a/ghost
info unused-localqueue LocalQueue/team-b/idle
info unused-localqueue LocalQueue/team-b/main
errors 4 warnings 3
exit 2
EOF

# ---------------------------------------------------------------------
# 6. The property: simulate's verdict is the manager's decision

kubectl delete jobs -n team-a a3 g1 >/dev/null 2>&1
while IFS= read -r line; do
	case $line in
	PASS\ *) pass "property: ${line#PASS }" ;;
	FAIL\ *) fail "property: ${line#FAIL }" ;;
	*) fail "property: unexpected output" "$line" ;;
	esac
done < <(python3 "$e2e_dir/cli_property.py" "$e2e_dir/manifests/cli/job.tmpl" \
	"$work" "${CLI_PROPERTY_SEED:-20}" "$rounds" 2>&1)
inv "after the property rounds"

e2e_finish
