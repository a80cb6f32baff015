#!/usr/bin/env bash
# ha.sh: leader election end to end with two replicas of the manager
# (devcluster start --replicas 2), Jobs through the webhook, the real
# kubectl:
#  - one leader, one follower (devcluster status, the Lease's holder, the
#    role gauges cueue_replica_role and leader_election_master_status);
#    both ready and serving the webhook; the follower writes nothing; both
#    answer the visibility API with the same queue;
#  - graceful stop of the leader (SIGTERM): it releases the Lease, the
#    follower takes over and admits; the time from the stop to the next
#    admission is printed;
#  - SIGKILL of the leader: a Job created right after it is accepted (the
#    webhook Service has both replicas as endpoints; the dead one refuses
#    the connection); the follower takes over once the Lease has expired
#    and admits it; the time from the kill to that admission is printed
#    (aim: leaseDuration + 2 s);
#  - a stolen Lease: the leader sees another holder at its next renewal,
#    stops writing and exits 1 ("leader election lost");
#  - a restarted replica comes back as a follower;
#  - the devserver restarted (same data dir, port and token) while both
#    replicas run: they lose readiness while it is down (api-connection)
#    and are ready again soon after it answers;
#  - cueue-invariants at every step.
# Figures are printed in the check names, never asserted against a bound
# (the machine may be loaded); correctness is asserted.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init ha

inv_bin=${INVARIANTS_BIN:-$e2e_top/build/default/tools/cueue-invariants}
manager_src=${MANAGER_BIN:-$e2e_top/bin/cueue-manager}
devcluster=$e2e_dir/devcluster
export KUBECACHEDIR=$work/kcache
cluster=$work/cluster
T=${HA_WAIT:-60}
lease=c1f6bfd2.kueue.x-k8s.io

on_exit_stop_clusters "$cluster"

cp "$manager_src" "$work/cueue-manager"
export MANAGER_BIN=$work/cueue-manager
export DEVCLUSTER_JOB_RUNTIME=1h
run_cmd "$devcluster" start "$cluster" --replicas 2
if [ "$rc" -eq 0 ] && [ "$out" = "export KUBECONFIG=$cluster/kubeconfig" ]; then
	pass "devcluster start --replicas 2"
else
	fail "devcluster start --replicas 2" "exit $rc: $out"
	e2e_finish
fi
export KUBECONFIG=$cluster/kubeconfig

# ---- helpers ----

# pidfile R: replica R's pid file.
pidfile() {
	if [ "$1" = 1 ]; then echo "$cluster/manager.pid"; else echo "$cluster/manager-$1.pid"; fi
}
logfile() {
	if [ "$1" = 1 ]; then echo "$cluster/manager.log"; else echo "$cluster/manager-$1.log"; fi
}
# role_of R: leader, follower or stopped, from devcluster status.
role_of() {
	local n=manager
	[ "$1" = 1 ] || n=manager-$1
	"$devcluster" status "$cluster" 2>/dev/null |
		sed -n "s/^$n: running (pid [0-9]*, \([a-z]*\))\$/\1/p;s/^$n: stopped\$/stopped/p"
}
# leader: the replica number that leads now, or nothing.
leader() {
	local r
	for r in 1 2; do
		[ "$(role_of "$r")" = leader ] && echo "$r" && return
	done
}
other() { [ "$1" = 1 ] && echo 2 || echo 1; }
holder() {
	jp "lease/$lease" '{.spec.holderIdentity}' cueue-system
}
# url R KIND: replica R's metrics or health URL from its log (the last start).
url() {
	sed -n "s/.*$2[a-z ]* server listening on \(http[^\" ]*\).*/\1/p" "$(logfile "$1")" | tail -1
}
metric() { # R REGEX: the lines of replica R's /metrics matching REGEX
	curl -sf "$(url "$1" metrics)/metrics" | grep -E -- "$2"
}
# rel JOB...: the job runner completes them now (their quota frees).
rel() {
	kubectl annotate --overwrite job -n ha-jobs "$@" cueue.dev/runtime=1ms >/dev/null 2>&1
}
# roles: the two replicas' roles, sorted, on one line.
roles() {
	printf '%s\n' "$(role_of 1)" "$(role_of 2)" | sort | tr '\n' ' '
}
# restarted_as_follower R: devcluster start brings replica R back; one
# check that it follows.
restarted_as_follower() {
	run_cmd "$devcluster" start "$cluster"
	if [ "$rc" -eq 0 ] && wait_until 50 is_eq follower role_of "$1"; then
		pass "replica $1 started again: a follower"
	else
		fail "replica $1 started again as a follower" "$("$devcluster" status "$cluster")"
	fi
}
ready() { curl -sf "$(url "$1" 'health probe')/readyz" >/dev/null; }
unready() { ! ready "$1"; }

# mkjob NAME [CPU]: a Job in ha-jobs through the webhook (queue "ha").
mkjob() {
	printf '%s\n' 'apiVersion: batch/v1' 'kind: Job' 'metadata:' \
		"  name: $1" '  namespace: ha-jobs' '  labels:' \
		'    kueue.x-k8s.io/queue-name: ha' 'spec:' '  template:' \
		'    spec:' '      restartPolicy: Never' '      containers:' \
		'      - name: c' \
		'        image: registry.k8s.io/e2e-test-images/agnhost:2.53' \
		'        resources:' '          requests:' \
		"            cpu: \"${2:-1}\"" | kubectl create -f - 2>&1
}
reserved() { # JOB: the Workload of JOB holds quota
	[ "$(jp "workload/$(wl_name "$1" ha-jobs)" \
		'{.status.conditions[?(@.type=="QuotaReserved")].status}' ha-jobs)" = True ]
}

kubectl apply -f - >/dev/null <<'EOF'
apiVersion: v1
kind: Namespace
metadata:
  name: ha-jobs
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: ha-default
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: ha-cq
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: ha-default
      resources:
      - name: cpu
        nominalQuota: "3"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: ha
  namespace: ha-jobs
spec:
  clusterQueue: ha-cq
EOF

# ---- 1. roles ----

L=$(leader)
if [ -n "$L" ] && [ "$(role_of "$(other "$L")")" = follower ]; then
	pass "devcluster status: replica $L leads, replica $(other "$L") follows"
else
	fail "devcluster status: one leader, one follower" "$("$devcluster" status "$cluster")"
	e2e_finish
fi
F=$(other "$L")
match "the Lease names the leader's pid" 0 "^[^_]+_$(cat "$(pidfile "$L")")_[0-9a-f]{8}\$" holder
expect_eventually "leader: cueue_replica_role{role=leader} 1, leader_election_master_status 1" 50 \
	"cueue_replica_role{role=\"follower\"} 0
cueue_replica_role{role=\"leader\"} 1
cueue_replica_role{role=\"standalone\"} 0
leader_election_master_status{name=\"$lease\"} 1" \
	metric "$L" '^(cueue_replica_role|leader_election_master_status)\{'
expect_eventually "follower: cueue_replica_role{role=follower} 1, leader_election_master_status 0" 50 \
	"cueue_replica_role{role=\"follower\"} 1
cueue_replica_role{role=\"leader\"} 0
cueue_replica_role{role=\"standalone\"} 0
leader_election_master_status{name=\"$lease\"} 0" \
	metric "$F" '^(cueue_replica_role|leader_election_master_status)\{'
if wait_until 50 ready "$L" && wait_until 50 ready "$F"; then
	pass "both replicas ready (/readyz)"
else
	fail "both replicas ready" "$(curl -s "$(url "$F" 'health probe')/readyz?verbose")"
fi

# ---- 2. Jobs; the follower writes nothing ----

for j in a b c d; do mkjob "$j" >/dev/null && wl_name "$j" ha-jobs >/dev/null; done
if wait_until $((T * 10)) reserved a && wait_until $((T * 10)) reserved c; then
	pass "a, b, c admitted by the leader (3 cpu); d pending"
else
	fail "a, b, c admitted" "$(kubectl get workloads -n ha-jobs 2>&1)"
fi
invariants "three admitted, one pending"
# the API request counters are mirrored every 5 s
sleep 5.5
w=$(metric "$F" '^cueue_api_requests_total\{' | grep -E 'verb="(POST|PUT|PATCH|DELETE)"' | awk '$2 > 0')
if [ -z "$w" ] && [ -n "$(metric "$F" '^cueue_api_requests_total\{.*verb="(GET|LIST|WATCH)"')" ]; then
	pass "the follower reads and writes nothing (cueue_api_requests_total)"
else
	fail "the follower writes nothing" "$w"
fi

# vis R: the Jobs replica R's visibility server lists pending in ha-cq,
# with their positions ("JOB pos", one per line).
vis() {
	local f=$cluster/visibility.port
	[ "$1" = 1 ] || f=$cluster/visibility-$1.port
	curl -sk "https://127.0.0.1:$(cat "$f")/apis/visibility.kueue.x-k8s.io/v1beta1/clusterqueues/ha-cq/pendingworkloads" |
		python3 -c 'import json, sys
for it in json.load(sys.stdin)["items"]:
    print(it["metadata"]["ownerReferences"][0]["name"], it["positionInClusterQueue"])'
}
expect "the leader's visibility server lists d" 0 vis "$L" <<<'d 0'
expect "the follower's visibility server lists d too (Kueue serves it from every replica)" 0 \
	vis "$F" <<<'d 0'

# ---- 3. graceful stop of the leader ----

rel a
t0=$(now_ms)
run_cmd "$devcluster" stop-manager "$cluster" "$L"
if [ "$rc" -eq 0 ] && [ -z "$out" ]; then
	pass "SIGTERM to the leader: it exits by itself"
else
	fail "SIGTERM to the leader" "exit $rc: $out"
fi
match "... after releasing the Lease" 0 'msg="lease released"' tail -5 "$(logfile "$L")"
if wait_until $((T * 10)) reserved d; then
	pass "replica $F took over and admitted d (seen $(($(now_ms) - t0)) ms after the stop, polling every ${poll_every} s at most)"
else
	fail "replica $F admitted d after the graceful stop" "$(kubectl get workloads -n ha-jobs 2>&1)
$(tail -5 "$(logfile "$F")")"
fi
same_leader=$(leader)
if [ "$same_leader" = "$F" ]; then
	pass "devcluster status: replica $F leads"
else
	fail "devcluster status: replica $F leads" "$("$devcluster" status "$cluster")"
fi
expect "leaseTransitions 1" 0 jp "lease/$lease" '{.spec.leaseTransitions}' cueue-system <<<1
invariants "after the graceful hand-over"

# the stopped replica comes back as a follower
restarted_as_follower "$L"

# ---- 4. SIGKILL of the leader; a Job created at once ----

L=$F
F=$(other "$L")
wait_until 50 ready "$F"
rel b
wait_until $((T * 10)) eval '! reserved b'
kill -KILL "$(cat "$(pidfile "$L")")"
t0=$(now_ms)
run_cmd mkjob e
if [ "$rc" -eq 0 ] && [ "$out" = "job.batch/e created" ]; then
	pass "a Job created right after the leader's SIGKILL: accepted (the webhook's other endpoint answered)"
else
	fail "a Job created right after the leader's SIGKILL" "$out"
fi
wl_name e ha-jobs >/dev/null
if wait_until $((T * 10)) reserved e; then
	pass "replica $F took over after the Lease expired and admitted e (seen $(($(now_ms) - t0)) ms after the kill; leaseDuration 15 s)"
else
	fail "replica $F admitted e after the SIGKILL" "$(kubectl get workloads -n ha-jobs 2>&1)
$(tail -5 "$(logfile "$F")")"
fi
expect "leaseTransitions 2" 0 jp "lease/$lease" '{.spec.leaseTransitions}' cueue-system <<<2
invariants "after the SIGKILL"
restarted_as_follower "$L"

# ---- 5. a stolen Lease ----

L=$F
F=$(other "$L")
kubectl patch lease "$lease" -n cueue-system --type=merge \
	-p '{"spec":{"holderIdentity":"somebody-else"}}' >/dev/null
if wait_until 150 is_eq stopped role_of "$L"; then
	pass "the leader saw another holder and exited"
else
	fail "the leader exited after its Lease was taken" "$(tail -5 "$(logfile "$L")")"
fi
match "... \"leader election lost: the lease names another holder\"" 0 \
	'level=error component=leader .*msg="leader election lost: the lease names another holder"' \
	cat "$(logfile "$L")"
match "... then \"exiting: leader election lost\"" 0 'msg="exiting: leader election lost"' \
	tail -3 "$(logfile "$L")"
# "somebody-else" never renews: the follower takes it once it expired
if wait_until $((T * 10)) is_eq leader role_of "$F"; then
	pass "replica $F took the expired Lease"
else
	fail "replica $F took the expired Lease" "$(holder)"
fi
rel c
run_cmd mkjob f
if [ "$rc" -eq 0 ] && [ "$out" = "job.batch/f created" ]; then
	pass "Job f created (the webhook answers from the new leader)"
else
	fail "Job f created" "$out"
fi
wl_name f ha-jobs >/dev/null
if wait_until $((T * 10)) reserved f; then
	pass "replica $F admits (f)"
else
	fail "replica $F admits (f)" "$(kubectl get workloads -n ha-jobs 2>&1)"
fi
"$devcluster" start "$cluster" >/dev/null 2>&1
wait_until 50 is_eq follower role_of "$L"
invariants "after the stolen Lease"

# ---- 6. the devserver restarted under both replicas ----

L=$F
F=$(other "$L")
kill -KILL "$(cat "$cluster/devserver.pid")"
if wait_until 100 unready "$F"; then
	pass "the API server gone: the follower is not ready (api-connection)"
else
	fail "the follower unready while the API server is gone" "$(curl -s "$(url "$F" 'health probe')/readyz?verbose")"
fi
match "... its /readyz says api-connection" 0 '^\[-\]api-connection' \
	curl -s "$(url "$F" 'health probe')/readyz?verbose"
DEVCLUSTER_NO_MANAGER=1 "$devcluster" start "$cluster" >/dev/null 2>&1
t0=$(now_ms)
if wait_until $((T * 10)) ready "$F"; then
	pass "the devserver back (same port, token and CA): the follower ready again ($(($(now_ms) - t0)) ms after the devserver answered)"
else
	fail "the follower ready again" "$(curl -s "$(url "$F" 'health probe')/readyz?verbose")
$(tail -5 "$(logfile "$F")")"
fi
# A leader that could not renew for its renew deadline meanwhile exits
# (possibly only now): started again as kubelet would, until the roles
# settle.
settled() {
	"$devcluster" start "$cluster" >/dev/null 2>&1
	is_eq "follower leader " roles
}
if wait_until $((T * 10)) settled; then
	pass "after the devserver's restart: one leader, one follower (a leader cut off for its renew deadline exits and was started again)"
else
	fail "one leader, one follower after the devserver's restart" "$("$devcluster" status "$cluster")"
fi
rel d e f
run_cmd mkjob g
wl_name g ha-jobs >/dev/null
if wait_until $((T * 10)) reserved g; then
	pass "the leader admits after the devserver's restart (g)"
else
	fail "the leader admits after the devserver's restart" "$(kubectl get workloads -n ha-jobs 2>&1)"
fi
invariants "at the end"

devcluster_stop
e2e_finish
