#!/usr/bin/env bash
# visibility: Kueue's visibility API (visibility.kueue.x-k8s.io v1beta1
# and v1beta2, pendingworkloads of a ClusterQueue and of a LocalQueue)
# served by the manager and reached the way a cluster reaches it: the
# real kubectl (`kubectl get --raw`) asks the devserver, which proxies to
# the APIService's Service (manifests/visibility.yaml, preloaded by
# devcluster) as kube-apiserver's aggregator does.
#
#   vis-cq      BestEffortFIFO, 2 cpu; LocalQueues lq-a, lq-b
#   vis-strict  StrictFIFO, 2 cpu; LocalQueue lq-s
#   priorities  vis-high 100, vis-low 10
#
# r1 (2 cpu) holds vis-cq; then p1 (lq-a, low, 1), p2 (lq-b, high, 1),
# p3 (lq-b, low, 1), p4 (lq-a, high, 5: never fits) wait, in priority
# then creation order: p2 p4 p1 p3. The checks: every field of the items
# (owner Job, positions in the ClusterQueue and the LocalQueue,
# priority, localQueueName), both versions, limit and offset, the
# LocalQueue view, discovery, NotFound and BadRequest, StrictFIFO's
# blocked head (s3, 5 cpu, first; quota freed admits nobody behind it),
# the list after admissions, and the proxy verifying the server against
# the APIService's caBundle (the certificate manager's CA passes, another
# CA fails with 503). cueue-invariants runs at each observation point.
#
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init visibility

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
T=${VISIBILITY_WAIT:-300}
V1=/apis/visibility.kueue.x-k8s.io/v1beta1
V2=/apis/visibility.kueue.x-k8s.io/v1beta2
cd "$e2e_dir/manifests/visibility" || exit 1

on_exit_stop_clusters "$cluster"

# mkjob NAME QUEUE PRIORITY CPU
mkjob() {
	sed -e "s/NAME/$1/" -e "s/QUEUE/$2/" -e "s/PRIO/$3/" -e "s/CPU/$4/" \
		job.tmpl >"$work/$1.yaml"
	expect "create job $1 ($2, $3, cpu $4)" 0 \
		kubectl create -f "$work/$1.yaml" -o jsonpath='{.spec.suspend}' <<<'true'
}
# state JOB: "suspend active-pods".
state() {
	local s
	s=$(jp "job/$1" '{.spec.suspend} {.status.active}')
	[ "${s% }" != "$s" ] && s+=0
	echo "$s"
}
# pending PATH: one line per item, "JOB posCQ posLQ priority localQueue"
# (JOB: the controller owner's name), then the kind and apiVersion.
pending() {
	kubectl get --raw "$1" 2>&1 | python3 -c '
import json, sys
text = sys.stdin.read()
try:
    d = json.loads(text)
except ValueError:
    print(text.strip())
    sys.exit(0)
for it in d.get("items") or []:
    m = it["metadata"]
    own = [o["name"] for o in m.get("ownerReferences", []) if o.get("kind") == "Job"]
    print(own[0] if own else m["name"], it["positionInClusterQueue"],
          it["positionInLocalQueue"], it["priority"], it["localQueueName"])
print(d.get("kind"), d.get("apiVersion"))'
}
# inv NAME: cueue-invariants on the cluster now.
inv() { invariants "$1"; }

job_cluster_start
expect "apply the queues" 0 kubectl apply -f setup.yaml <<'EOF'
resourceflavor.kueue.x-k8s.io/vis-flavor created
workloadpriorityclass.kueue.x-k8s.io/vis-high created
workloadpriorityclass.kueue.x-k8s.io/vis-low created
clusterqueue.kueue.x-k8s.io/vis-cq created
clusterqueue.kueue.x-k8s.io/vis-strict created
localqueue.kueue.x-k8s.io/lq-a created
localqueue.kueue.x-k8s.io/lq-b created
localqueue.kueue.x-k8s.io/lq-s created
EOF
expect "the APIServices are registered (preloaded from manifests/visibility.yaml)" 0 \
	kubectl get apiservices -o 'jsonpath={range .items[*]}{.metadata.name} {.spec.service.name}{"\n"}{end}' <<'EOF'
v1beta1.visibility.kueue.x-k8s.io cueue-visibility-server
v1beta2.visibility.kueue.x-k8s.io cueue-visibility-server
EOF

# ---------------------------------------------------------------------
# 1. Discovery and errors.

expect "discovery: the group's resources" 0 python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.check_output(["kubectl", "get", "--raw", sys.argv[1]]))
print(d["kind"], d["groupVersion"])
for r in d["resources"]:
    print(r["name"], r["namespaced"], r["kind"], ",".join(r["verbs"]))' "$V1" <<'EOF'
APIResourceList visibility.kueue.x-k8s.io/v1beta1
clusterqueues False ClusterQueue
clusterqueues/pendingworkloads False PendingWorkloadsSummary get
localqueues True LocalQueue
localqueues/pendingworkloads True PendingWorkloadsSummary get
EOF
expect "an empty ClusterQueue lists nothing" 0 pending "$V1/clusterqueues/vis-cq/pendingworkloads" <<'EOF'
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta1
EOF
expect "an unknown ClusterQueue: NotFound" 1 \
	kubectl get --raw "$V1/clusterqueues/nope/pendingworkloads" <<'EOF'
Error from server (NotFound): clusterqueue.visibility.kueue.x-k8s.io "nope" not found
EOF
expect "an unknown LocalQueue: NotFound" 1 \
	kubectl get --raw "$V1/namespaces/default/localqueues/nope/pendingworkloads" <<'EOF'
Error from server (NotFound): localqueue.visibility.kueue.x-k8s.io "nope" not found
EOF
expect "a limit that is no integer: BadRequest" 1 \
	kubectl get --raw "$V1/clusterqueues/vis-cq/pendingworkloads?limit=ten" <<'EOF'
Error from server (BadRequest): limit and offset must be integers
EOF

# ---------------------------------------------------------------------
# 2. A BestEffortFIFO queue: priority, then creation order.

mkjob r1 lq-a vis-low 2
expect_eventually "r1 runs" "$T" "false 1" state r1
# queue order ties on creationTimestamp (whole seconds) are broken by
# uid: a second apart, creation order decides
mkjob p1 lq-a vis-low 1
sleep 1.1
mkjob p2 lq-b vis-high 1
sleep 1.1
mkjob p3 lq-b vis-low 1
sleep 1.1
mkjob p4 lq-a vis-high 5
want_cq='p2 0 0 100 lq-b
p4 1 0 100 lq-a
p1 2 1 10 lq-a
p3 3 1 10 lq-b'
expect_eventually "vis-cq v1beta1: p2 p4 p1 p3 with their positions" "$T" \
	"$want_cq
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta1" \
	pending "$V1/clusterqueues/vis-cq/pendingworkloads"
inv "four pending behind r1"
expect "vis-cq v1beta2: the same" 0 pending "$V2/clusterqueues/vis-cq/pendingworkloads" <<EOF
$want_cq
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta2
EOF
expect "vis-cq limit=2 offset=1: p4 p1, LocalQueue positions counted from the start" 0 \
	pending "$V1/clusterqueues/vis-cq/pendingworkloads?limit=2&offset=1" <<'EOF'
p4 1 0 100 lq-a
p1 2 1 10 lq-a
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta1
EOF
expect "vis-cq offset past the end: nothing" 0 \
	pending "$V1/clusterqueues/vis-cq/pendingworkloads?offset=9" <<'EOF'
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta1
EOF
expect "lq-a: p4 p1 (positions in the ClusterQueue kept)" 0 \
	pending "$V1/namespaces/default/localqueues/lq-a/pendingworkloads" <<'EOF'
p4 1 0 100 lq-a
p1 2 1 10 lq-a
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta1
EOF
expect "lq-b offset=1: p3" 0 \
	pending "$V2/namespaces/default/localqueues/lq-b/pendingworkloads?offset=1" <<'EOF'
p3 3 1 10 lq-b
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta2
EOF
expect "the items carry Kueue's metadata (name, namespace, creationTimestamp, ownerReferences)" 0 \
	python3 -c '
import json, subprocess, sys
d = json.loads(subprocess.check_output(["kubectl", "get", "--raw", sys.argv[1]]))
it = d["items"][0]
m = it["metadata"]
print(sorted(it), sorted(m), m["namespace"], m["name"].startswith("job-p2-"),
      [(o["apiVersion"], o["kind"], o["name"], bool(o["uid"])) for o in m["ownerReferences"]],
      m["creationTimestamp"].endswith("Z"))' \
	"$V1/clusterqueues/vis-cq/pendingworkloads?limit=1" <<'EOF'
['localQueueName', 'metadata', 'positionInClusterQueue', 'positionInLocalQueue', 'priority'] ['creationTimestamp', 'name', 'namespace', 'ownerReferences'] default True [('batch/v1', 'Job', 'p2', True)] True
EOF

# ---------------------------------------------------------------------
# 3. StrictFIFO: the head blocks, and is listed first.

mkjob s1 lq-s vis-low 2
expect_eventually "s1 runs" "$T" "false 1" state s1
mkjob s2 lq-s vis-low 1
sleep 1.1
mkjob s3 lq-s vis-high 5
sleep 1.1
mkjob s4 lq-s vis-high 1
want_s='s3 0 0 100 lq-s
s4 1 1 100 lq-s
s2 2 2 10 lq-s
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta1'
expect_eventually "vis-strict: s3 s4 s2" "$T" "$want_s" \
	pending "$V1/clusterqueues/vis-strict/pendingworkloads"
release s1
expect_eventually "s1 finished" "$T" "True Succeeded" \
	jp "workload/$(wl_name s1)" '{range .status.conditions[?(@.type=="Finished")]}{.status} {.reason}{end}'
inv "vis-strict free, s3 blocking"
# the freed quota is not given to s4 or s2: s3 blocks the queue
sleep 2
expect "StrictFIFO: s4 still waits behind s3" 0 state s4 <<<'true 0'
expect "StrictFIFO: the list is unchanged" 0 pending "$V1/clusterqueues/vis-strict/pendingworkloads" <<<"$want_s"

# ---------------------------------------------------------------------
# 4. Admissions take workloads off the list.

release r1
expect_eventually "p2 runs once r1 ended" "$T" "false 1" state p2
expect_eventually "p1 runs too" "$T" "false 1" state p1
expect_eventually "vis-cq: p4 p3 left" "$T" 'p4 0 0 100 lq-a
p3 1 0 10 lq-b
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta1' \
	pending "$V1/clusterqueues/vis-cq/pendingworkloads"
inv "p2 and p1 admitted"

# ---------------------------------------------------------------------
# 5. The proxy verifies the server against caBundle.

ca=$(kubectl get secret -n cueue-system cueue-webhook-server-cert -o 'jsonpath={.data.ca\.crt}')
expect "v1beta1 APIService: verify against the certificate manager's CA" 0 \
	kubectl patch apiservice v1beta1.visibility.kueue.x-k8s.io --type=merge \
	-p "{\"spec\":{\"insecureSkipTLSVerify\":false,\"caBundle\":\"$ca\"}}" -o name <<<'apiservice.apiregistration.k8s.io/v1beta1.visibility.kueue.x-k8s.io'
expect "verified: the serving certificate names cueue-visibility-server.cueue-system.svc" 0 \
	pending "$V1/clusterqueues/vis-cq/pendingworkloads" <<'EOF'
p4 0 0 100 lq-a
p3 1 0 10 lq-b
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta1
EOF
other=$(openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
	-keyout /dev/null -subj /CN=other-ca -days 1 2>/dev/null | base64 -w0)
expect "v1beta1 APIService: another CA" 0 \
	kubectl patch apiservice v1beta1.visibility.kueue.x-k8s.io --type=merge \
	-p "{\"spec\":{\"caBundle\":\"$other\"}}" -o name <<<'apiservice.apiregistration.k8s.io/v1beta1.visibility.kueue.x-k8s.io'
match "another CA: 503, the certificate refused" 1 \
	'^Error from server \(ServiceUnavailable\): error trying to reach service: Get "https://cueue-visibility-server.cueue-system.svc:443/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/vis-cq/pendingworkloads": .*certificate' \
	kubectl get --raw "$V1/clusterqueues/vis-cq/pendingworkloads"
expect "v1beta2 (insecureSkipTLSVerify, as Kueue ships it) still answers" 0 \
	pending "$V2/clusterqueues/vis-cq/pendingworkloads" <<'EOF'
p4 0 0 100 lq-a
p3 1 0 10 lq-b
PendingWorkloadsSummary visibility.kueue.x-k8s.io/v1beta2
EOF
expect "insecureSkipTLSVerify with a caBundle is refused" 1 \
	kubectl patch apiservice v1beta1.visibility.kueue.x-k8s.io --type=merge \
	-p '{"spec":{"insecureSkipTLSVerify":true}}' -o name <<'EOF'
The APIService "v1beta1.visibility.kueue.x-k8s.io" is invalid: spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present
EOF

release p1 p2 p3 r1 s2 s3 s4 2>/dev/null
inv "the end"
devcluster_stop
e2e_finish
