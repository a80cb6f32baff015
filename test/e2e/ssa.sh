#!/usr/bin/env bash
# ssa: server-side apply's field ownership (metadata.managedFields) with
# the real kubectl against bin/cueue-devserver: two field managers
# applying a ClusterQueue (`kubectl apply --server-side --field-manager`),
# the conflict kubectl prints for a field the other one owns,
# `--force-conflicts` moving the ownership, an equal value co-owned, a
# dropped field removed on the next apply (unless someone else owns it),
# the Update entries of kubectl's create and patch (the status
# subresource's own), and `kubectl get -o yaml --show-managed-fields`
# showing the entries that plain `-o yaml` hides.
#
# Usage: test/e2e/ssa.sh
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
set -u
. "$(dirname "$0")/lib.bash"
e2e_init ssa

if [ -z "$kubectl_dir" ]; then
	fail "kubectl on PATH" "kubectl not found"
	e2e_finish
fi
start_server s --kubeconfig-out "$work/kubeconfig"
K=(kubectl --kubeconfig "$work/kubeconfig")

expect "the ClusterQueue CRD, applied server-side" 0 \
	"${K[@]}" apply --server-side -f "$e2e_top/manifests/crds/clusterqueues.yaml" <<'EOF'
customresourcedefinition.apiextensions.k8s.io/clusterqueues.kueue.x-k8s.io serverside-applied
EOF

# cq SPEC-LINE...: a ClusterQueue "ssa" manifest in $work/cq.yaml.
cq() {
	{
		printf 'apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n'
		printf 'metadata:\n  name: ssa\nspec:\n'
		printf '  %s\n' "$@"
	} >"$work/cq.yaml"
}

cq "cohortName: team-a" "stopPolicy: Hold"
expect "alice applies cohortName and stopPolicy" 0 \
	"${K[@]}" apply --server-side --field-manager=alice -f "$work/cq.yaml" <<'EOF'
clusterqueue.kueue.x-k8s.io/ssa serverside-applied
EOF

cq "cohortName: team-b"
expect "bob's other cohortName: the conflict with alice, as kubectl prints it" 1 \
	"${K[@]}" apply --server-side --field-manager=bob -f "$work/cq.yaml" <<'EOF'
error: Apply failed with 1 conflict: conflict with "alice": .spec.cohortName
Please review the fields above--they currently have other managers. Here
are the ways you can resolve this warning:
* If you intend to manage all of these fields, please re-run the apply
  command with the `--force-conflicts` flag.
* If you do not intend to manage all of the fields, please edit your
  manifest to remove references to the fields that should keep their
  current managers.
* You may co-own fields by updating your manifest to match the existing
  value; in this case, you'll become the manager if the other manager(s)
  stop managing the field (remove it from their configuration).
See https://kubernetes.io/docs/reference/using-api/server-side-apply/#conflicts
EOF

expect "the refused apply changed nothing" 0 \
	"${K[@]}" get clusterqueue ssa -o 'jsonpath={.spec.cohortName}{"\n"}' <<'EOF'
team-a
EOF

expect "bob with --force-conflicts" 0 \
	"${K[@]}" apply --server-side --field-manager=bob --force-conflicts \
	-f "$work/cq.yaml" <<'EOF'
clusterqueue.kueue.x-k8s.io/ssa serverside-applied
EOF

# owners: "manager operation subresource: fieldsV1" per entry, sorted
# (kube orders entries by operation, then time in seconds, which the
# checks do not pin).
owners() {
	"${K[@]}" get clusterqueue ssa -o 'jsonpath={range .metadata.managedFields[*]}{.manager} {.operation} {.subresource}: {.fieldsV1}{"\n"}{end}' |
		sort
}
expect "the value and its ownership moved to bob" 0 owners <<'EOF'
alice Apply : {"f:spec":{"f:stopPolicy":{}}}
bob Apply : {"f:spec":{"f:cohortName":{}}}
EOF

expect "carol applies the same value: co-owned, no conflict" 0 \
	"${K[@]}" apply --server-side --field-manager=carol -f "$work/cq.yaml" <<'EOF'
clusterqueue.kueue.x-k8s.io/ssa serverside-applied
EOF

cq "queueingStrategy: StrictFIFO"
expect "bob drops cohortName: carol still owns it" 0 \
	"${K[@]}" apply --server-side --field-manager=bob -f "$work/cq.yaml" <<'EOF'
clusterqueue.kueue.x-k8s.io/ssa serverside-applied
EOF
expect "the co-owned value stays" 0 \
	"${K[@]}" get clusterqueue ssa -o 'jsonpath={.spec.cohortName} {.spec.queueingStrategy}{"\n"}' <<'EOF'
team-b StrictFIFO
EOF

cq "cohortName: team-b"
expect "alice drops stopPolicy" 0 \
	"${K[@]}" apply --server-side --field-manager=alice --force-conflicts \
	-f "$work/cq.yaml" <<'EOF'
clusterqueue.kueue.x-k8s.io/ssa serverside-applied
EOF
expect "a field only its applier owned goes (the schema default is back)" 0 \
	"${K[@]}" get clusterqueue ssa -o 'jsonpath={.spec.stopPolicy}{"\n"}' <<'EOF'
None
EOF

expect "kubectl patch of the status subresource" 0 \
	"${K[@]}" patch clusterqueue ssa --subresource=status --type=merge \
	-p '{"status":{"pendingWorkloads":3}}' <<'EOF'
clusterqueue.kueue.x-k8s.io/ssa patched
EOF

expect "every entry, the status one with subresource status" 0 owners <<'EOF'
alice Apply : {"f:spec":{"f:cohortName":{}}}
bob Apply : {"f:spec":{"f:queueingStrategy":{}}}
carol Apply : {"f:spec":{"f:cohortName":{}}}
kubectl-patch Update status: {"f:status":{".":{},"f:pendingWorkloads":{}}}
EOF

match "-o yaml --show-managed-fields shows the entries" 0 \
	'^  - apiVersion: kueue.x-k8s.io/v1beta2$' \
	"${K[@]}" get clusterqueue ssa -o yaml --show-managed-fields
match "... with their fieldsV1" 0 '^        f:pendingWorkloads: \{\}$' \
	"${K[@]}" get clusterqueue ssa -o yaml --show-managed-fields
run_cmd "${K[@]}" get clusterqueue ssa -o yaml
if [ "$rc" -eq 0 ] && ! grep -q managedFields <<<"$out"; then
	pass "plain -o yaml hides them"
else
	fail "plain -o yaml hides them" "exit status $rc; output:
$(head -20 <<<"$out")"
fi

# kubectl create records an Update entry for kubectl-create; a
# server-side apply of another value then names it with its apiVersion.
expect "kubectl create" 0 "${K[@]}" create configmap ssa-cm --from-literal=k=v <<'EOF'
configmap/ssa-cm created
EOF
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa-cm\ndata:\n  k: w\n' \
	>"$work/cm.yaml"
match "an apply over kubectl-create's value names it and its apiVersion" 1 \
	'^error: Apply failed with 1 conflict: conflict with "kubectl-create" using v1: \.data\.k$' \
	"${K[@]}" apply --server-side --field-manager=dave -f "$work/cm.yaml"

stop_server s
e2e_finish
