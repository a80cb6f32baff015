#!/usr/bin/env bash
# kubectl-matrix: every row of the k8s-api.md §15 command matrix, driven
# through the real kubectl against bin/cueue-devserver, with the output
# compared to what kubectl prints against kube-apiserver (§15, §17, §18).
#
# Three clients, each against its own fresh server (TLS + token, the
# kubeconfig written by --kubeconfig-out) and its own KUBECACHEDIR:
#   1.32  the dispatcher on PATH (it picks kubectl.1.32 from /version):
#         the whole matrix;
#   1.28  kubectl.1.28 called directly (asks for aggregated discovery
#         v2beta1 only): the core rows;
#   1.33  kubectl.1.33 called directly: the core rows.
# Core rows: version, api-resources, create, get, apply, apply
# --server-side, patch, delete, wait, get -w. Then each client runs a few
# commands against a plain-http server (no credentials).
#
# Manifests: the real Kueue CRDs (manifests/crds, v1beta2 stored, v1beta1 converted) and
# test/e2e/manifests/; long expected outputs: test/e2e/golden/
# (E2E_UPDATE_GOLDEN=1 rewrites them; review the diff).
# Usage: test/e2e/kubectl-matrix.sh [1.32|1.28|1.33]...
#   Without arguments the three clients run concurrently (E2E_SERIAL=1:
#   one after the other).
# Prints one line per check, "N passed, M failed" last; exit 1 on failure.
# $K (the kubectl binary) and $VF (empty, or --validate=false) are
# expanded unquoted on purpose: an empty $VF must vanish.
# shellcheck disable=SC2086,SC2317
set -u
. "$(dirname "$0")/lib.bash"
e2e_init kubectl-matrix

crds=$e2e_top/manifests/crds
cd "$e2e_dir/manifests" || exit 1 # kubectl names files as given

if [ -z "$kubectl_dir" ]; then
	fail "kubectl on PATH" "kubectl (the dispatcher) is not installed"
	e2e_finish
fi

# Expected `kubectl version` output per client (stdout, then stderr).
version_out() {
	case $1 in
	1.32) printf '%s\n' 'Client Version: v1.32.4-dispatcher' \
		'Kustomize Version: v5.5.0' 'Server Version: v1.32.4' ;;
	1.28) printf '%s\n' 'Client Version: v1.28.15' \
		'Kustomize Version: v5.0.4-0.20230601165947-6ce0bf390ce3' \
		'Server Version: v1.32.4' \
		'WARNING: version difference between client (1.28) and server (1.32) exceeds the supported minor version skew of +/-1' ;;
	1.33) printf '%s\n' 'Client Version: v1.33.1' \
		'Kustomize Version: v5.6.0' 'Server Version: v1.32.4' ;;
	esac
}

# kubectl 1.28 loads the OpenAPI v2 document (protobuf) before any
# create/apply with its default validation; the devserver answers it
# with an empty document (devserver/api.c serve_openapi_v2).

ADMITTED_STATUS='{"status":{"admission":{"clusterQueue":"cluster-queue"},"conditions":[{"type":"Admitted","status":"True","reason":"Admitted","message":"ok","lastTransitionTime":"2025-01-01T00:00:00Z"}]}}'

# later SECONDS CMD...: CMD in the background after SECONDS (a second
# client racing the command under test, as in §18 e18/e19).
later() {
	local s=$1
	shift
	e2e_bg bash -c 'sleep "$0"; "$@" >/dev/null 2>&1' "$s" "$@"
}

# kueue_rows / builtin_rows: api-resources filtered to some rows.
kueue_rows() {
	set -o pipefail
	$K api-resources 2>&1 | grep -E '^NAME |kueue\.x-k8s\.io'
}
builtin_rows() {
	set -o pipefail
	$K api-resources 2>&1 | grep -E '^(NAME|namespaces|jobs|customresourcedefinitions|events|leases) '
}

# discovery_log: which discovery documents kubectl fetched (-v=8).
discovery_log() {
	$K api-resources -v=8 2>&1 | sed -nE \
		-e 's#.*GET https?://[^/ ]+(/apis?(/[^? ]*)?)(\?[^ ]*)?$#GET \1#p' \
		-e 's#.*"Request" verb="GET" url="https?://[^/"]+(/apis?(/[^?"]*)?)(\?[^"]*)?".*#GET \1#p' \
		-e 's#^.*Content-Type: (application/json;g=apidiscovery[^ ]*).*#  -> \1#p' |
		uniq
}

# list_requests ARGS...: the GET requests `kubectl get ARGS` sent (-v=6).
list_requests() {
	$K get "$@" -v=6 2>&1 | sed -nE \
		-e 's#.*GET https?://[^/ ]+(/apis/kueue[^ ]*) .*#\1#p' \
		-e 's#.*"Response" verb="GET" url="https?://[^/"]+(/apis/kueue[^"]*)".*#\1#p' |
		sed -E 's/continue=[A-Za-z0-9_-]+/continue=<token>/'
}

# elapsed_ms CMD...: runs CMD, output in $out, status in $rc, time in $ms.
elapsed_ms() {
	local t0
	t0=$(date +%s%N)
	run_cmd "$@"
	ms=$((($(date +%s%N) - t0) / 1000000))
}

# get_watch NAME: `kubectl get workloads -w` under timeout 5 (as in the
# §18 e18 run: rc 124); once the initial rows are out, another client patches
# x; the MODIFIED row must follow.
get_watch() {
	local f=$work/watch-$label pid alive=no
	# No fixed deadline on the watch: on a loaded machine the patch's
	# own kubectl may take seconds to start. It is stopped once the
	# MODIFIED row came (or 30 s passed), and must still be running
	# then: kubectl get -w ends only when told to.
	$K get workloads -w >"$f" 2>&1 &
	pid=$!
	e2e_pids+=("$pid")
	if wait_for_line "$f" '^x +' 300; then
		$K patch workload x --type=merge -p '{"spec":{"queueName":"qw"}}' \
			>/dev/null 2>&1
		wait_for_line "$f" '^x +qw +' 300
	fi
	kill -0 "$pid" 2>/dev/null && alive=yes
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	if [ "$alive" = yes ] &&
		norm <"$f" | grep -Eq '^NAME +QUEUE +RESERVED IN +ADMITTED +FINISHED +AGE$' &&
		norm <"$f" | sed -n '2p' | grep -Eq '^x +q3 +cluster-queue +True +[0-9smhd]+$' &&
		norm <"$f" | sed -n '3,$p' | grep -Eq '^x +qw +cluster-queue +True +[0-9smhd]+$'; then
		pass "$1"
	else
		fail "$1" "kubectl get workloads -w (still running when stopped: $alive); output:
$(head -10 "$f")"
	fi
}

# ----------------------------------------------------------------------
# matrix LABEL MODE(full|core): one client against a fresh TLS server.
matrix() {
	label=$1
	local mode=$2 t=
	echo "== kubectl $label ($mode rows), TLS + token"
	start_server tls --tls --token e2e-token \
		--kubeconfig-out "$work/kubeconfig-$label" --job-runtime 2s
	export KUBECONFIG=$work/kubeconfig-$label
	export KUBECACHEDIR=$work/cache-$label
	t="[$label]"
	VF=
	[ "$mode" = full ] && full=1 || full=

	# version, and the dispatcher's choice (from the server's /version)
	expect "$t version" 0 $K version < <(version_out "$label")
	[ "$label" = 1.32 ] && match "$t the dispatcher runs kubectl 1.32.4" 0 \
		'User-Agent: kubectl/v1\.32\.4 ' $K get namespaces -v=8

	# install Kueue's CRDs as Kueue does (apply --server-side)
	expect "$t apply --server-side -f <Kueue CRDs>" 0 \
		$K apply --server-side $VF -f "$crds" <<'EOF'
customresourcedefinition.apiextensions.k8s.io/admissionchecks.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/clusterqueues.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/cohorts.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/localqueues.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/resourceflavors.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/topologies.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/workloadpriorityclasses.kueue.x-k8s.io serverside-applied
customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io serverside-applied
EOF
	if [ "$rc" -ne 0 ]; then
		# kubectl 1.28 validates client-side against /openapi/v2
		# before anything else; go on without it so the remaining
		# rows still test their own paths (the failed check stays).
		VF=--validate=false
		t="[$label $VF]"
		echo "NOTE $t: the rows below use $VF"
		$K apply --server-side $VF -f "$crds" >/dev/null 2>&1
	fi
	expect "$t wait --for condition=established crd/..." 0 \
		$K wait --for condition=established \
		crd/workloads.kueue.x-k8s.io crd/clusterqueues.kueue.x-k8s.io \
		--timeout=10s <<'EOF'
customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io condition met
customresourcedefinition.apiextensions.k8s.io/clusterqueues.kueue.x-k8s.io condition met
EOF

	# api-resources (aggregated discovery: v2, or v2beta1 for 1.28)
	expect_table "$t api-resources (Kueue rows)" 0 kueue_rows <<'EOF'
NAME | SHORTNAMES | APIVERSION | NAMESPACED | KIND
admissionchecks | ac | kueue.x-k8s.io/v1beta2 | false | AdmissionCheck
clusterqueues | cq | kueue.x-k8s.io/v1beta2 | false | ClusterQueue
cohorts | co | kueue.x-k8s.io/v1beta2 | false | Cohort
localqueues | queue,queues,lq | kueue.x-k8s.io/v1beta2 | true | LocalQueue
resourceflavors | flavor,flavors,rf | kueue.x-k8s.io/v1beta2 | false | ResourceFlavor
topologies | topo | kueue.x-k8s.io/v1beta2 | false | Topology
workloadpriorityclasses | wpc | kueue.x-k8s.io/v1beta2 | false | WorkloadPriorityClass
workloads | kwl,kueueworkload,kueueworkloads | kueue.x-k8s.io/v1beta2 | true | Workload
EOF
	expect_table "$t api-resources (built-in rows)" 0 builtin_rows <<'EOF'
NAME | SHORTNAMES | APIVERSION | NAMESPACED | KIND
events | ev | v1 | true | Event
namespaces | ns | v1 | false | Namespace
customresourcedefinitions | crd,crds | apiextensions.k8s.io/v1 | false | CustomResourceDefinition
jobs |  | batch/v1 | true | Job
leases |  | coordination.k8s.io/v1 | true | Lease
events | ev | events.k8s.io/v1 | true | Event
EOF
	local disc=v2
	[ "$label" = 1.28 ] && disc=v2beta1
	KUBECACHEDIR=$work/cache-$label-disc expect \
		"$t aggregated discovery $disc only (no legacy fallback)" 0 \
		discovery_log <<EOF
GET /api
  -> application/json;g=apidiscovery.k8s.io;v=$disc;as=APIGroupDiscoveryList
GET /apis
  -> application/json;g=apidiscovery.k8s.io;v=$disc;as=APIGroupDiscoveryList
EOF

	# get, empty
	expect "$t get workloads (empty)" 0 $K get workloads <<'EOF'
No resources found in default namespace.
EOF

	# create -f, 409, 404 namespace
	expect "$t create -f" 0 $K create $VF -f cq.yaml <<'EOF'
clusterqueue.kueue.x-k8s.io/cluster-queue created
EOF
	expect "$t create -f again (409 AlreadyExists)" 1 $K create $VF -f cq.yaml <<'EOF'
Error from server (AlreadyExists): error when creating "cq.yaml": clusterqueues.kueue.x-k8s.io "cluster-queue" already exists
EOF
	expect "$t create -f in a missing namespace (404)" 1 \
		$K create $VF -f cm-nosuchns.yaml <<'EOF'
Error from server (NotFound): error when creating "cm-nosuchns.yaml": namespaces "nosuchns" not found
EOF

	# apply -f: new, unchanged, changed; a Job (SMP) and a CR (merge)
	expect "$t apply -f Job (new)" 0 $K apply $VF -f job.yaml <<'EOF'
job.batch/sample-job created
EOF
	expect "$t apply -f Job (unchanged)" 0 $K apply $VF -f job.yaml <<'EOF'
job.batch/sample-job unchanged
EOF
	expect "$t apply -f Job (changed)" 0 $K apply $VF -f job2.yaml <<'EOF'
job.batch/sample-job configured
EOF
	expect "$t applied Job: defaults and the change" 0 $K get job sample-job \
		-o jsonpath='{.spec.parallelism} {.spec.backoffLimit} {.spec.completionMode} {.spec.suspend}{"\n"}' <<'EOF'
2 6 NonIndexed true
EOF
	expect "$t apply -f CR (new)" 0 $K apply $VF -f wl.yaml <<'EOF'
workload.kueue.x-k8s.io/x created
EOF
	expect "$t apply -f CR (unchanged)" 0 $K apply $VF -f wl.yaml <<'EOF'
workload.kueue.x-k8s.io/x unchanged
EOF
	expect "$t apply -f CR (changed)" 0 $K apply $VF -f wl2.yaml <<'EOF'
workload.kueue.x-k8s.io/x configured
EOF

	# get (table)
	expect_table "$t get workloads" 0 $K get workloads <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
x | other-queue |  |  |  | <age>
EOF
	expect_table "$t get <type> <name>" 0 $K get clusterqueue cluster-queue <<'EOF'
NAME | COHORT | PENDING WORKLOADS
cluster-queue |  |
EOF
	expect "$t get missing (404)" 1 $K get workload nosuch <<'EOF'
Error from server (NotFound): workloads.kueue.x-k8s.io "nosuch" not found
EOF

	# apply --server-side of a CR: new, changed
	expect "$t apply --server-side -f CR (new)" 0 \
		$K apply --server-side $VF -f cq-cohort.yaml <<'EOF'
clusterqueue.kueue.x-k8s.io/a-team-queue serverside-applied
EOF
	expect "$t apply --server-side -f CR (changed)" 0 \
		$K apply --server-side $VF -f cq-cohort2.yaml <<'EOF'
clusterqueue.kueue.x-k8s.io/a-team-queue serverside-applied
EOF
	expect "$t server-side applied CR" 0 $K get cq a-team-queue \
		-o jsonpath='{.spec.cohortName} {.spec.queueingStrategy} {.spec.resourceGroups[0].flavors[0].resources[0].nominalQuota}{"\n"}' <<'EOF'
team-b StrictFIFO 4
EOF

	if [ -n "$full" ]; then
		# get -o yaml (the job runner marks a suspended Job first)
		expect "$t wait --for=condition=Suspended job" 0 \
			$K wait --for=condition=Suspended job/sample-job --timeout=10s <<'EOF'
job.batch/sample-job condition met
EOF
		expect_golden "$t get jobs -o yaml" 0 get-jobs.yaml $K get jobs -o yaml
		expect_table "$t get clusterqueues -o wide" 0 \
			$K get clusterqueues -o wide <<'EOF'
NAME | COHORT | STRATEGY | PENDING WORKLOADS | ADMITTED WORKLOADS
a-team-queue | team-b | StrictFIFO |  |
cluster-queue |  | BestEffortFIFO |  |
EOF
		expect_table "$t get --sort-by" 0 \
			$K get clusterqueues --sort-by=.spec.queueingStrategy -o wide <<'EOF'
NAME | COHORT | STRATEGY | PENDING WORKLOADS | ADMITTED WORKLOADS
cluster-queue |  | BestEffortFIFO |  |
a-team-queue | team-b | StrictFIFO |  |
EOF
		expect "$t get --sort-by asks for includeObject=Object" 0 \
			list_requests clusterqueues --sort-by=.metadata.name <<'EOF'
/apis/kueue.x-k8s.io/v1beta2/clusterqueues?includeObject=Object
EOF
		expect "$t create -f Namespace" 0 $K create $VF -f ns-team-a.yaml <<'EOF'
namespace/team-a created
EOF
		expect "$t create -f -n" 0 $K create $VF -f wl.yaml -n team-a <<'EOF'
workload.kueue.x-k8s.io/x created
EOF
		expect_table "$t get -A" 0 $K get workloads -A <<'EOF'
NAMESPACE | NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
default | x | other-queue |  |  |  | <age>
team-a | x | user-queue |  |  |  | <age>
EOF
	fi

	# patch: merge, json, strategic (default) on a Job
	expect "$t patch --type=merge" 0 \
		$K patch workload x --type=merge -p '{"spec":{"queueName":"q2"}}' <<'EOF'
workload.kueue.x-k8s.io/x patched
EOF
	expect "$t patch --type=json" 0 $K patch workload x --type=json \
		-p '[{"op":"replace","path":"/spec/queueName","value":"q3"}]' <<'EOF'
workload.kueue.x-k8s.io/x patched
EOF
	expect "$t patched CR" 0 $K get workload x -o jsonpath='{.spec.queueName}{"\n"}' <<'EOF'
q3
EOF
	# A Job's pod template is immutable (kube 1.32's Job strategy) but
	# for the scheduling directives of a suspended Job that never ran:
	# two strategic patches of its nodeSelector merge the maps.
	expect "$t patch (strategic) on a suspended Job" 0 $K patch job sample-job \
		-p '{"spec":{"template":{"spec":{"nodeSelector":{"pool":"a"}}}}}' <<'EOF'
job.batch/sample-job patched
EOF
	expect "$t patch (strategic) on a suspended Job, another key" 0 $K patch job sample-job \
		-p '{"spec":{"template":{"spec":{"nodeSelector":{"zone":"z1"}}}}}' <<'EOF'
job.batch/sample-job patched
EOF
	expect "$t strategic patches merged the nodeSelector" 0 \
		$K get job sample-job -o jsonpath='{.spec.template.spec.nodeSelector}{"\n"}' <<'EOF'
{"pool":"a","zone":"z1"}
EOF
	run_cmd $K patch job sample-job \
		-p '{"spec":{"template":{"spec":{"containers":[{"name":"dummy-job","image":"registry.k8s.io/e2e-test-images/agnhost:2.54"}]}}}}'
	if [ "$rc" -eq 1 ] && [[ $out == *'The Job "sample-job" is invalid: spec.template: Invalid value: '*'field is immutable'* ]]; then
		pass "$t patch (strategic) of a Job's container: 422 field is immutable"
	else
		fail "$t patch (strategic) of a Job's container: 422 field is immutable" "exit $rc: $out"
	fi

	# wait --for=condition (another client admits x through /status)
	later 1 $K patch workload x --subresource=status --type=merge -p "$ADMITTED_STATUS"
	expect "$t wait --for=condition=Admitted" 0 \
		$K wait --for=condition=Admitted workload/x --timeout=15s <<'EOF'
workload.kueue.x-k8s.io/x condition met
EOF
	wait "$e2e_bg_pid"

	if [ -n "$full" ]; then
		expect "$t patch --subresource=status" 0 $K patch workload x \
			--subresource=status --type=merge \
			-p '{"status":{"conditions":[{"type":"Admitted","status":"True","reason":"Admitted","message":"ok","lastTransitionTime":"2025-01-01T00:00:00Z"},{"type":"Finished","status":"True","reason":"Succeeded","message":"done","lastTransitionTime":"2025-01-01T00:00:01Z"}]}}' <<'EOF'
workload.kueue.x-k8s.io/x patched
EOF
		expect_table "$t status columns after the status patches" 0 \
			$K get workload x <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
x | q3 | cluster-queue | True | True | <age>
EOF
		expect "$t status in the main resource is ignored" 0 $K patch workload x \
			--type=merge -p '{"status":{"admission":{"clusterQueue":"other"}}}' <<'EOF'
workload.kueue.x-k8s.io/x patched (no change)
EOF
		expect "$t patch --subresource=status back (for get -w)" 0 \
			$K patch workload x --subresource=status --type=json \
			-p '[{"op":"remove","path":"/status/conditions/1"}]' <<'EOF'
workload.kueue.x-k8s.io/x patched
EOF
		expect "$t patch (strategic) on a CR (415)" 1 \
			$K patch workload x -p '{"spec":{"queueName":"q4"}}' <<'EOF'
error: application/strategic-merge-patch+json is not supported by kueue.x-k8s.io/v1beta2, Kind=Workload: the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml
EOF
	fi

	# get -w: a MODIFIED row after a concurrent patch
	get_watch "$t get -w (MODIFIED row after a concurrent patch)"

	if [ -n "$full" ]; then
		# replace, then with a stale resourceVersion (409)
		$K get workload x -o yaml >"$work/wl-live.yaml" 2>&1
		sed 's/queueName: qw/queueName: q5/' "$work/wl-live.yaml" >"$work/wl-replace.yaml"
		expect "$t replace -f" 0 $K replace $VF -f "$work/wl-replace.yaml" <<'EOF'
workload.kueue.x-k8s.io/x replaced
EOF
		expect "$t replace -f with a stale resourceVersion (409)" 1 \
			$K replace $VF -f "$work/wl-live.yaml" <<'EOF'
Error from server (Conflict): error when replacing "<work>/wl-live.yaml": Operation cannot be fulfilled on workloads.kueue.x-k8s.io "x": the object has been modified; please apply your changes to the latest version and try again
EOF

		# describe (no events are recorded for these objects)
		expect_golden "$t describe workload" 0 describe-workload.txt \
			$K describe workload x
		expect_golden "$t describe job" 0 describe-job.txt \
			$K describe job sample-job

		# 422
		expect "$t create -f badjob.yaml (422)" 1 $K create $VF -f badjob.yaml <<'EOF'
The Job "bad" is invalid: spec.template: Required value
EOF

		# pagination, selectors, generateName
		expect "$t create -f (three objects)" 0 $K create $VF -f wl-abc.yaml <<'EOF'
workload.kueue.x-k8s.io/a created
workload.kueue.x-k8s.io/b created
workload.kueue.x-k8s.io/c created
EOF
		expect_table "$t get --chunk-size=2" 0 $K get workloads --chunk-size=2 <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
a | user-queue |  |  |  | <age>
b | user-queue |  |  |  | <age>
c | user-queue |  |  |  | <age>
x | q5 | cluster-queue | True |  | <age>
EOF
		expect "$t get --chunk-size=2 pages with limit/continue" 0 \
			list_requests workloads --chunk-size=2 <<'EOF'
/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads?limit=2
/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads?continue=<token>&limit=2
EOF
		expect_table "$t get -l 'team in (ta,tc)' --field-selector metadata.name!=c" 0 \
			$K get workloads -l 'team in (ta,tc)' --field-selector 'metadata.name!=c' <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
a | user-queue |  |  |  | <age>
EOF
		expect "$t get --field-selector on an unsupported field (400)" 1 \
			$K get workloads --field-selector spec.queueName=q5 <<'EOF'
Error from server (BadRequest): Unable to find "kueue.x-k8s.io/v1beta2, Resource=workloads" that match label selector "", field selector "spec.queueName=q5": field label not supported: spec.queueName
EOF
		expect "$t create -f with generateName" 0 $K create $VF -f wl-generate.yaml <<'EOF'
workload.kueue.x-k8s.io/job-sample-<gen> created
EOF
		match "$t the generated object is listed" 0 '^job-sample-<gen> +user-queue' \
			$K get workloads --no-headers

		# the deprecated-version Warning (test-only CRD)
		expect "$t create -f CRD (deprecated v1beta1 + v1beta2)" 0 \
			$K create $VF -f widgets-crd.yaml <<'EOF'
customresourcedefinition.apiextensions.k8s.io/widgets.e2e.cueue.dev created
EOF
		expect "$t wait --for condition=established (new CRD)" 0 \
			$K wait --for condition=established crd/widgets.e2e.cueue.dev --timeout=10s <<'EOF'
customresourcedefinition.apiextensions.k8s.io/widgets.e2e.cueue.dev condition met
EOF
		expect "$t create -f v1beta1 object: deprecation Warning" 0 \
			$K create $VF -f widget-v1beta1.yaml <<'EOF'
Warning: This version is deprecated. Use v1beta2 instead.
widget.e2e.cueue.dev/w1 created
EOF
		expect_table "$t get <plural>.v1beta1.<group>: deprecation Warning" 0 \
			$K get widgets.v1beta1.e2e.cueue.dev <<'EOF'
Warning: This version is deprecated. Use v1beta2 instead.
NAME | SIZE
w1 | 3
EOF
		expect_table "$t get <plural> (preferred v1beta2): no Warning" 0 \
			$K get widgets <<'EOF'
NAME | SIZE
w1 | 3
EOF
		expect "$t stored as v1beta2" 0 $K get widget w1 -o jsonpath='{.apiVersion}{"\n"}' <<'EOF'
e2e.cueue.dev/v1beta2
EOF
	fi

	# delete: without a finalizer; with one (kubectl waits); wait --for=delete
	$K create $VF -f wl.yaml -n kube-public >/dev/null 2>&1
	expect "$t delete (no finalizer)" 0 $K delete workload x -n kube-public <<'EOF'
workload.kueue.x-k8s.io "x" deleted
EOF
	expect "$t deleted object is gone" 1 $K get workload x -n kube-public <<'EOF'
Error from server (NotFound): workloads.kueue.x-k8s.io "x" not found
EOF
	expect "$t add a finalizer" 0 $K patch workload x --type=merge \
		-p '{"metadata":{"finalizers":["kueue.x-k8s.io/resource-in-use"]}}' <<'EOF'
workload.kueue.x-k8s.io/x patched
EOF
	later 1.5 $K patch workload x --type=json \
		-p '[{"op":"remove","path":"/metadata/finalizers"}]'
	elapsed_ms $K delete workload x --timeout=20s
	wait "$e2e_bg_pid"
	if [ "$rc" -eq 0 ] && [ "$out" = 'workload.kueue.x-k8s.io "x" deleted' ] &&
		[ "$ms" -ge 1200 ]; then
		pass "$t delete (finalizer): kubectl waits until it is removed"
	else
		fail "$t delete (finalizer): kubectl waits until it is removed" \
			"exit status $rc after ${ms} ms (want 0 after >= 1200 ms); output:
$out"
	fi
	expect "$t ... and the object is gone" 1 $K get workload x <<'EOF'
Error from server (NotFound): workloads.kueue.x-k8s.io "x" not found
EOF
	$K create $VF -f wl.yaml >/dev/null 2>&1
	$K patch workload x --type=merge \
		-p '{"metadata":{"finalizers":["kueue.x-k8s.io/resource-in-use"]}}' >/dev/null 2>&1
	expect "$t delete --wait=false (finalizer)" 0 $K delete workload x --wait=false <<'EOF'
workload.kueue.x-k8s.io "x" deleted
EOF
	expect "$t marked for deletion, still there" 0 $K get workload x \
		-o jsonpath='{.metadata.deletionTimestamp} {.metadata.finalizers}{"\n"}' <<'EOF'
<ts> ["kueue.x-k8s.io/resource-in-use"]
EOF
	later 2 $K patch workload x --type=json \
		-p '[{"op":"remove","path":"/metadata/finalizers"}]'
	# kubectl prints "condition met" when it saw the object go, and
	# nothing when it was gone before its first read (a loaded machine
	# can start kubectl after the finalizer was removed): both succeed
	run_cmd $K wait --for=delete workload/x --timeout=15s
	if [ "$rc" -eq 0 ] && { [ -z "$out" ] ||
		[ "$out" = "workload.kueue.x-k8s.io/x condition met" ]; }; then
		pass "$t wait --for=delete"
	else
		fail "$t wait --for=delete" "exit $rc: $out"
	fi
	wait "$e2e_bg_pid"
	expect "$t delete -f Job" 0 $K delete -f job.yaml <<'EOF'
job.batch "sample-job" deleted
EOF

	# create and apply with kubectl's default (strict) validation
	$K create namespace team-b >/dev/null 2>&1
	expect "[$label] create -f (default validation)" 0 $K create -f wl.yaml -n team-b <<'EOF'
workload.kueue.x-k8s.io/x created
EOF
	expect "[$label] apply -f (default validation)" 0 $K apply -f job.yaml -n team-b <<'EOF'
job.batch/sample-job created
EOF

	if [ -n "$full" ]; then
		# TLS: the token is required; /version is public, but a wrong
		# token is 401 everywhere (kube-apiserver does not treat a bad
		# bearer token as anonymous: union.NewFailOnError in
		# pkg/kubeapiserver/authenticator/config.go)
		sed 's/token: e2e-token/token: wrong-token/' "$KUBECONFIG" >"$work/kubeconfig-bad"
		KUBECONFIG=$work/kubeconfig-bad KUBECACHEDIR=$work/cache-bad expect \
			"$t TLS with a wrong token (401)" 1 $K get namespaces <<'EOF'
E<klog> memcache.go:265] "Unhandled Error" err="couldn't get current server API group list: the server has asked for the client to provide credentials"
E<klog> memcache.go:265] "Unhandled Error" err="couldn't get current server API group list: the server has asked for the client to provide credentials"
E<klog> memcache.go:265] "Unhandled Error" err="couldn't get current server API group list: the server has asked for the client to provide credentials"
E<klog> memcache.go:265] "Unhandled Error" err="couldn't get current server API group list: the server has asked for the client to provide credentials"
E<klog> memcache.go:265] "Unhandled Error" err="couldn't get current server API group list: the server has asked for the client to provide credentials"
error: You must be logged in to the server (the server has asked for the client to provide credentials)
EOF
		KUBECONFIG=$work/kubeconfig-bad KUBECACHEDIR=$work/cache-bad match \
			"$t TLS with a wrong token: /version is 401 too" 1 \
			'^error: You must be logged in to the server' $K version
		expect "$t kubeconfig from --kubeconfig-out (TLS + token)" 0 \
			sed -E -e 's/(certificate-authority-data: ).+/\1<ca>/' \
			-e 's#https://127\.0\.0\.1:[0-9]+$#https://127.0.0.1:<port>#' \
			"$KUBECONFIG" <<'EOF'
apiVersion: v1
kind: Config
clusters:
- name: cueue-devserver
  cluster:
    server: https://127.0.0.1:<port>
    certificate-authority-data: <ca>
users:
- name: cueue-devserver
  user:
    token: e2e-token
contexts:
- name: cueue-devserver
  context:
    cluster: cueue-devserver
    user: cueue-devserver
    namespace: default
current-context: cueue-devserver
EOF
	fi
	stop_server tls "$t"

	# plain http: no credentials in the kubeconfig, none required
	echo "== kubectl $label, plain http"
	start_server http --kubeconfig-out "$work/kubeconfig-http-$label" --preload "$crds"
	export KUBECONFIG=$work/kubeconfig-http-$label
	export KUBECACHEDIR=$work/cache-http-$label
	expect "$t http: kubeconfig without credentials" 0 \
		grep -cE 'token|certificate-authority|http://127\.0\.0\.1:[0-9]+$' "$KUBECONFIG" <<'EOF'
1
EOF
	expect "$t http: version" 0 $K version < <(version_out "$label")
	expect "$t http: get preloaded CRDs" 0 $K get crd -o name <<'EOF'
customresourcedefinition.apiextensions.k8s.io/admissionchecks.kueue.x-k8s.io
customresourcedefinition.apiextensions.k8s.io/clusterqueues.kueue.x-k8s.io
customresourcedefinition.apiextensions.k8s.io/cohorts.kueue.x-k8s.io
customresourcedefinition.apiextensions.k8s.io/localqueues.kueue.x-k8s.io
customresourcedefinition.apiextensions.k8s.io/resourceflavors.kueue.x-k8s.io
customresourcedefinition.apiextensions.k8s.io/topologies.kueue.x-k8s.io
customresourcedefinition.apiextensions.k8s.io/workloadpriorityclasses.kueue.x-k8s.io
customresourcedefinition.apiextensions.k8s.io/workloads.kueue.x-k8s.io
EOF
	expect "$t http: apply -f" 0 $K apply $VF -f wl.yaml <<'EOF'
workload.kueue.x-k8s.io/x created
EOF
	expect_table "$t http: get" 0 $K get workloads <<'EOF'
NAME | QUEUE | RESERVED IN | ADMITTED | FINISHED | AGE
x | user-queue |  |  |  | <age>
EOF
	stop_server http "$t"
}

clients=("$@")
if [ ${#clients[@]} -eq 0 ] && [ -z "${E2E_SERIAL:-}" ]; then
	# one process per client, concurrently (each has its own servers,
	# cache and work dir); their outputs are printed in order
	for c in 1.32 1.28 1.33; do
		e2e_bg "$e2e_dir/kubectl-matrix.sh" "$c" >"$work/client-$c.log" 2>&1
		printf -v "pid_${c/./_}" '%s' "$e2e_bg_pid"
	done
	for c in 1.32 1.28 1.33; do
		p=pid_${c/./_}
		wait "${!p}"
		rc=$?
		sed '$d' "$work/client-$c.log"
		last=$(tail -1 "$work/client-$c.log")
		if [[ $last =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			passed=$((passed + BASH_REMATCH[1]))
			failed=$((failed + BASH_REMATCH[2]))
			[ "$rc" -eq 0 ] || [ "${BASH_REMATCH[2]}" -gt 0 ] ||
				fail "[$c] exit status" "$rc with no failed check"
		else
			echo "$last"
			fail "[$c] ran to the end" "exit status $rc"
		fi
	done
	e2e_finish
fi
[ ${#clients[@]} -eq 0 ] && clients=(1.32 1.28 1.33)
for c in "${clients[@]}"; do
	case $c in
	1.32) K=kubectl mode=full ;;
	1.28 | 1.33) K=$kubectl_dir/kubectl.$c mode=core ;;
	*) echo "unknown client $c" >&2; exit 2 ;;
	esac
	if [ ! -x "$(command -v "$K")" ]; then
		fail "[$c] kubectl binary" "$K is not installed"
		continue
	fi
	matrix "$c" "$mode"
done
e2e_finish
