/*
 * Suite "webhook_admit": what cueue's webhooks decide, called directly
 * (no server): the Job mutation of kueue-api.md §12.2 (LocalQueue
 * defaulting, suspend-on-create, children of managed owners, the
 * namespace selector), the validations of §12.3 and §2-7 with their exact
 * denial texts, the Kueue-object defaults (finalizers, Workload pod
 * sets), ConversionReview round trips of the upstream examples, and the
 * helpers under them: review envelopes, JSON Patch diffs, the namespace
 * view. The server, TLS and the devserver are suite "webhook".
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "config/config.h"
#include "config/yamljson.h"
#include "suites.h"
#include "test/support/support.h"
#include "webhook/admit.h"
#include "webhook/jsonpatch.h"
#include "webhook/nsview.h"
#include "webhook/review.h"

#define QL "kueue.x-k8s.io/queue-name"

/* A Job in namespace team; META and SPEC are spliced into metadata and
 * spec (each starts with a comma when not empty). */
#define JOB(META, SPEC)                                                   \
	"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"    \
	"\"name\":\"j\",\"namespace\":\"team\"" META "},\"spec\":{"       \
	"\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","        \
	"\"image\":\"i\"}],\"restartPolicy\":\"Never\"}}" SPEC "}}"
#define QLABEL(v) ",\"labels\":{\"" QL "\":\"" v "\"}"
#define SUSPEND(b) ",\"suspend\":" b
#define ADD_SUSPEND "{\"op\":\"add\",\"path\":\"/spec/suspend\",\"value\":true}"
#define ADD_QLABEL \
	"{\"op\":\"add\",\"path\":\"/metadata/labels/kueue.x-k8s.io~1queue-name\"," \
	"\"value\":\"default\"}"

#define CQ(V, SPEC)                                                       \
	"{\"apiVersion\":\"kueue.x-k8s.io/" V "\",\"kind\":\"ClusterQueue\"," \
	"\"metadata\":{\"name\":\"cq\"},\"spec\":" SPEC "}"
#define RG(FLAVOR_RES)                                                    \
	"{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":[{" \
	"\"name\":\"f\",\"resources\":[{\"name\":\"cpu\"" FLAVOR_RES "}]}]}]"

enum view { V_NONE, V_TEAM, V_WPC };
enum pol { P_DEFAULT, P_MANAGE_ALL, P_HEAD, P_NO_PARTIAL };

static struct nsview *make_view(enum view v)
{
	struct nsview *nv;
	struct smap l = SMAP_INIT;

	if (v == V_NONE)
		return NULL;
	nv = nsview_new();
	smap_set(&l, "kubernetes.io/metadata.name", "team");
	smap_set(&l, "env", "prod");
	nsview_set_labels(nv, "team", &l);
	nsview_set_default_lq(nv, "team");
	smap_release(&l);
	smap_set(&l, "kubernetes.io/metadata.name", "kube-system");
	nsview_set_labels(nv, "kube-system", &l);
	nsview_set_default_lq(nv, "kube-system");
	smap_release(&l);
	smap_set(&l, "kubernetes.io/metadata.name", "other");
	nsview_set_labels(nv, "other", &l);
	smap_release(&l);
	if (v == V_WPC)
		nsview_set_default_wpc(nv);
	nsview_freeze(nv);
	return nv;
}

static void make_policy(enum pol p, struct admit_policy *out)
{
	admit_policy_defaults(out);
	switch (p) {
	case P_DEFAULT:
		break;
	case P_MANAGE_ALL:
		out->manage_jobs_without_queue_name = true;
		break;
	case P_HEAD:
		out->manage_jobs_without_queue_name = true;
		out->lq_defaulting_needs_managed_ns = true;
		out->wpc_defaulting = true;
		break;
	case P_NO_PARTIAL:
		out->partial_admission = false;
		break;
	}
}

struct acase {
	const char *name;
	admit_fn *fn;
	enum kind want;
	enum review_op op;
	const char *ns;      /* request.namespace */
	const char *obj;     /* JSON text */
	const char *old;     /* JSON text or NULL */
	enum view view;
	enum pol pol;
	bool allowed;
	int code;            /* status.code, 0 = none */
	const char *message; /* exact status.message, or NULL */
	const char *patch;   /* JSON text of the patch; NULL = none */
};

/* Runs one handler on a review built from the case. */
static void run(const struct acase *c, struct review_response *out)
{
	struct admit_policy pol;
	struct nsview *nv = make_view(c->view);
	struct admit_ctx ctx = { &pol, nv };
	struct review_request req;

	memset(&req, 0, sizeof(req));
	memset(out, 0, sizeof(*out));
	make_policy(c->pol, &pol);
	req.uid = xstrdup("u-1");
	req.op = c->op;
	req.namespace = c->ns ? xstrdup(c->ns) : NULL;
	req.object = c->obj ? t_json(c->obj) : NULL;
	req.old_object = c->old ? t_json(c->old) : NULL;
	c->fn(&ctx, c->want, &req, out);
	review_request_release(&req);
	admit_policy_release(&pol);
	nsview_free(nv);
}

static void check_case(const struct acase *c)
{
	struct review_response out;

	run(c, &out);
	ck_assert_msg(out.allowed == c->allowed, "%s: allowed=%d message=%s",
		      c->name, out.allowed,
		      out.message ? out.message : "(none)");
	ck_assert_msg(out.code == c->code, "%s: code %d, want %d (%s)",
		      c->name, out.code, c->code,
		      out.message ? out.message : "");
	if (c->message)
		ck_assert_msg(out.message && !strcmp(out.message, c->message),
			      "%s:\n got  %s\n want %s", c->name,
			      out.message ? out.message : "(none)",
			      c->message);
	if (c->patch) {
		json_t *want = t_json(c->patch);

		ck_assert_msg(out.patch && json_equal(out.patch, want),
			      "%s: patch %s", c->name,
			      out.patch ? json_dumps(out.patch, JSON_COMPACT)
					: "(none)");
		json_decref(want);
	} else {
		ck_assert_msg(!out.patch || !json_array_size(out.patch),
			      "%s: unexpected patch %s", c->name,
			      json_dumps(out.patch, JSON_COMPACT));
	}
	review_response_release(&out);
}

/* ---- Job mutation (§12.2) ---- */

static const struct acase mutate_job[] = {
	{ "queue label suspends", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team", JOB(QLABEL("q"), ""), NULL, V_TEAM,
	  P_DEFAULT, true, 0, NULL, "[" ADD_SUSPEND "]" },
	{ "already suspended: no patch", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team", JOB(QLABEL("q"), SUSPEND("true")), NULL,
	  V_TEAM, P_DEFAULT, true, 0, NULL, NULL },
	{ "suspend false is replaced", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team", JOB(QLABEL("q"), SUSPEND("false")), NULL,
	  V_TEAM, P_DEFAULT, true, 0, NULL,
	  "[{\"op\":\"replace\",\"path\":\"/spec/suspend\",\"value\":true}]" },
	{ "default LocalQueue: label added, then suspended", admit_mutate_job,
	  KIND_JOB, REVIEW_OP_CREATE, "team",
	  JOB(",\"labels\":{\"app\":\"x\"}", ""), NULL, V_TEAM, P_DEFAULT,
	  true, 0, NULL, "[" ADD_QLABEL "," ADD_SUSPEND "]" },
	{ "default LocalQueue, no labels at all", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team", JOB("", ""), NULL, V_TEAM, P_DEFAULT, true,
	  0, NULL,
	  "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"" QL
	  "\":\"default\"}}," ADD_SUSPEND "]" },
	{ "empty queue label is defaulted", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team", JOB(QLABEL(""), ""), NULL, V_TEAM,
	  P_DEFAULT, true, 0, NULL,
	  "[{\"op\":\"replace\",\"path\":\"/metadata/labels/kueue.x-k8s.io~1"
	  "queue-name\",\"value\":\"default\"}," ADD_SUSPEND "]" },
	{ "no default LocalQueue, not managing: nothing", admit_mutate_job,
	  KIND_JOB, REVIEW_OP_CREATE, "other", JOB("", ""), NULL, V_TEAM,
	  P_DEFAULT, true, 0, NULL, NULL },
	{ "nothing published yet: nothing", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team", JOB("", ""), NULL, V_NONE, P_DEFAULT,
	  true, 0, NULL, NULL },
	{ "manageJobsWithoutQueueName: suspended", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "other", JOB("", ""), NULL, V_TEAM, P_MANAGE_ALL,
	  true, 0, NULL, "[" ADD_SUSPEND "]" },
	{ "manageJobsWithoutQueueName, namespace unknown to the view",
	  admit_mutate_job, KIND_JOB, REVIEW_OP_CREATE, "fresh", JOB("", ""),
	  NULL, V_TEAM, P_MANAGE_ALL, true, 0, NULL, "[" ADD_SUSPEND "]" },
	{ "manageJobsWithoutQueueName, kueue-system excluded",
	  admit_mutate_job, KIND_JOB, REVIEW_OP_CREATE, "kueue-system",
	  JOB("", ""), NULL, V_TEAM, P_MANAGE_ALL, true, 0, NULL, NULL },
	{ "v0.14: defaulting ignores the namespace selector",
	  admit_mutate_job, KIND_JOB, REVIEW_OP_CREATE, "kube-system",
	  JOB(",\"labels\":{\"app\":\"x\"}", ""), NULL, V_TEAM, P_MANAGE_ALL,
	  true, 0, NULL, "[" ADD_QLABEL "," ADD_SUSPEND "]" },
	{ "HEAD: no defaulting outside managed namespaces", admit_mutate_job,
	  KIND_JOB, REVIEW_OP_CREATE, "kube-system",
	  JOB(",\"labels\":{\"app\":\"x\"}", ""), NULL, V_TEAM, P_HEAD, true,
	  0, NULL, NULL },
	{ "HEAD: defaulting in a managed namespace", admit_mutate_job,
	  KIND_JOB, REVIEW_OP_CREATE, "team",
	  JOB(",\"labels\":{\"app\":\"x\"}", ""), NULL, V_TEAM, P_HEAD, true,
	  0, NULL, "[" ADD_QLABEL "," ADD_SUSPEND "]" },
	{ "HEAD: WorkloadPriorityClass default applied", admit_mutate_job,
	  KIND_JOB, REVIEW_OP_CREATE, "other", JOB("", ""), NULL, V_WPC,
	  P_HEAD, true, 0, NULL,
	  "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{"
	  "\"kueue.x-k8s.io/priority-class\":\"default\"}}," ADD_SUSPEND "]" },
	{ "HEAD: a class already named is kept", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "kube-system",
	  JOB(",\"labels\":{\"kueue.x-k8s.io/priority-class\":\"high\"}",
	      ""), NULL, V_WPC, P_HEAD, true, 0, NULL, NULL },
	{ "v0.14: no WorkloadPriorityClass defaulting", admit_mutate_job,
	  KIND_JOB, REVIEW_OP_CREATE, "other", JOB("", ""), NULL, V_WPC,
	  P_DEFAULT, true, 0, NULL, NULL },
	{ "queue name from the v0.14 annotation", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "other",
	  JOB(",\"annotations\":{\"" QL "\":\"q\"}", ""), NULL, V_TEAM,
	  P_DEFAULT, true, 0, NULL, "[" ADD_SUSPEND "]" },
	{ "child of a managed Job: left alone", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team",
	  JOB(QLABEL("q") ",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\","
	      "\"kind\":\"Job\",\"name\":\"p\",\"uid\":\"1\","
	      "\"controller\":true}]", ""), NULL, V_TEAM, P_MANAGE_ALL, true,
	  0, NULL, NULL },
	{ "owner of a framework not enabled: managed", admit_mutate_job,
	  KIND_JOB, REVIEW_OP_CREATE, "other",
	  JOB(QLABEL("q") ",\"ownerReferences\":[{\"apiVersion\":"
	      "\"jobset.x-k8s.io/v1alpha2\",\"kind\":\"JobSet\",\"name\":\"p\","
	      "\"uid\":\"1\",\"controller\":true}]", ""), NULL, V_TEAM,
	  P_DEFAULT, true, 0, NULL, "[" ADD_SUSPEND "]" },
	{ "a non-controller owner does not count", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "other",
	  JOB(QLABEL("q") ",\"ownerReferences\":[{\"apiVersion\":\"batch/v1\","
	      "\"kind\":\"Job\",\"name\":\"p\",\"uid\":\"1\"}]", ""), NULL,
	  V_TEAM, P_DEFAULT, true, 0, NULL, "[" ADD_SUSPEND "]" },
	{ "namespace from the object when the request has none",
	  admit_mutate_job, KIND_JOB, REVIEW_OP_CREATE, NULL, JOB("", ""),
	  NULL, V_TEAM, P_DEFAULT, true, 0, NULL,
	  "[{\"op\":\"add\",\"path\":\"/metadata/labels\",\"value\":{\"" QL
	  "\":\"default\"}}," ADD_SUSPEND "]" },
	{ "generateName, no name yet (kubectl create -f sample-job.yaml)",
	  admit_mutate_job, KIND_JOB, REVIEW_OP_CREATE, "other",
	  "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
	  "\"generateName\":\"sample-job-\",\"labels\":{\"" QL "\":\"q\"}},"
	  "\"spec\":{\"parallelism\":3,\"completions\":3,\"template\":{"
	  "\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\","
	  "\"resources\":{\"requests\":{\"cpu\":\"1\",\"memory\":"
	  "\"200Mi\"}}}],\"restartPolicy\":\"Never\"}}}}", NULL, V_TEAM,
	  P_DEFAULT, true, 0, NULL, "[" ADD_SUSPEND "]" },
	{ "UPDATE is not mutated", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_UPDATE, "team", JOB(QLABEL("q"), ""), JOB(QLABEL("q"), ""),
	  V_TEAM, P_DEFAULT, true, 0, NULL, NULL },
	{ "not a Job", admit_mutate_job, KIND_JOB, REVIEW_OP_CREATE, "team",
	  "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	  "{\"name\":\"x\"}}", NULL, V_TEAM, P_DEFAULT, false, 400,
	  "expected a batch/v1 Job object, got apiVersion \"v1\", kind "
	  "\"ConfigMap\"", NULL },
	{ "a Job that does not decode", admit_mutate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team", JOB(",\"labels\":[]", ""), NULL, V_TEAM,
	  P_DEFAULT, false, 400, NULL, NULL },
};

START_TEST(job_mutation)
{
	check_case(&mutate_job[_i]);
}
END_TEST

/* ---- Job validation (§12.3) ---- */

#define SUBDOMAIN_MSG(v)                                                  \
	"Invalid value: \"" v "\": a lowercase RFC 1123 subdomain must "   \
	"consist of lower case alphanumeric characters, '-' or '.', and "  \
	"must start and end with an alphanumeric character (e.g. "         \
	"'example.com', regex used for validation is "                     \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"

static const struct acase validate_jobs[] = {
	{ "valid create", admit_validate_job, KIND_JOB, REVIEW_OP_CREATE,
	  "team", JOB(QLABEL("q"), ""), NULL, V_TEAM, P_DEFAULT, true, 0,
	  NULL, NULL },
	{ "bad queue name", admit_validate_job, KIND_JOB, REVIEW_OP_CREATE,
	  "team", JOB(QLABEL("Bad_Name"), ""), NULL, V_TEAM, P_DEFAULT, false,
	  403, "metadata.labels[" QL "]: " SUBDOMAIN_MSG("Bad_Name"), NULL },
	{ "every problem in one denial", admit_validate_job, KIND_JOB,
	  REVIEW_OP_CREATE, "team",
	  JOB(",\"labels\":{\"kueue.x-k8s.io/max-exec-time-seconds\":\"0\"},"
	      "\"annotations\":{\"kueue.x-k8s.io/job-min-parallelism\":\"5\"}",
	      ",\"parallelism\":3"), NULL, V_TEAM, P_DEFAULT, false, 403,
	  "[metadata.labels[kueue.x-k8s.io/max-exec-time-seconds]: Invalid "
	  "value: 0: should be greater than 0, metadata.annotations[kueue."
	  "x-k8s.io/job-min-parallelism]: Invalid value: 5: should be between "
	  "0 and 2]", NULL },
	{ "queue change on a running Job", admit_validate_job, KIND_JOB,
	  REVIEW_OP_UPDATE, "team", JOB(QLABEL("b"), SUSPEND("false")),
	  JOB(QLABEL("a"), SUSPEND("false")), V_TEAM, P_DEFAULT, false, 403,
	  "metadata.labels[" QL "]: Invalid value: \"b\": field is immutable",
	  NULL },
	{ "queue change on a suspended Job", admit_validate_job, KIND_JOB,
	  REVIEW_OP_UPDATE, "team", JOB(QLABEL("b"), SUSPEND("true")),
	  JOB(QLABEL("a"), SUSPEND("true")), V_TEAM, P_DEFAULT, true, 0, NULL,
	  NULL },
	{ "queue removed where a default LocalQueue exists",
	  admit_validate_job, KIND_JOB, REVIEW_OP_UPDATE, "team",
	  JOB("", SUSPEND("true")), JOB(QLABEL("a"), SUSPEND("true")), V_TEAM,
	  P_DEFAULT, false, 403,
	  "metadata.labels[" QL "]: Invalid value: \"\": queue-name must not "
	  "be empty in namespace with default queue", NULL },
	{ "queue removed, no default LocalQueue", admit_validate_job, KIND_JOB,
	  REVIEW_OP_UPDATE, "other", JOB("", SUSPEND("true")),
	  JOB(QLABEL("a"), SUSPEND("true")), V_TEAM, P_DEFAULT, true, 0, NULL,
	  NULL },
	{ "DELETE is allowed", admit_validate_job, KIND_JOB, REVIEW_OP_DELETE,
	  "team", NULL, JOB(QLABEL("Bad_Name"), ""), V_TEAM, P_DEFAULT, true,
	  0, NULL, NULL },
};

START_TEST(job_validation)
{
	check_case(&validate_jobs[_i]);
}
END_TEST

/* ---- Kueue objects ---- */

#define FIN "kueue.x-k8s.io/resource-in-use"
#define RF(META, SPEC)                                                    \
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"             \
	"\"ResourceFlavor\",\"metadata\":{\"name\":\"f\"" META "},"        \
	"\"spec\":" SPEC "}"
#define WL(V, PODSET, STATUS)                                             \
	"{\"apiVersion\":\"kueue.x-k8s.io/" V "\",\"kind\":\"Workload\","  \
	"\"metadata\":{\"name\":\"w\",\"namespace\":\"team\"},\"spec\":{"  \
	"\"queueName\":\"q\",\"podSets\":[{" PODSET "\"count\":2,"         \
	"\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","         \
	"\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}]}}}]}" \
	STATUS "}"
#define RESERVED                                                          \
	",\"status\":{\"conditions\":[{\"type\":\"QuotaReserved\","        \
	"\"status\":\"True\",\"reason\":\"QuotaReserved\",\"message\":"    \
	"\"m\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}],"         \
	"\"admission\":{\"clusterQueue\":\"cq\",\"podSetAssignments\":[{"  \
	"\"name\":\"main\",\"flavors\":{\"cpu\":\"f\"},\"resourceUsage\":" \
	"{\"cpu\":\"2\"},\"count\":2}]}}"

static const struct acase kueue[] = {
	{ "ClusterQueue gets the finalizer", admit_mutate_finalizer,
	  KIND_CLUSTER_QUEUE, REVIEW_OP_CREATE, NULL, CQ("v1beta1", "{}"),
	  NULL, V_NONE, P_DEFAULT, true, 0, NULL,
	  "[{\"op\":\"add\",\"path\":\"/metadata/finalizers\",\"value\":[\""
	  FIN "\"]}]" },
	{ "finalizer appended to others", admit_mutate_finalizer,
	  KIND_RESOURCE_FLAVOR, REVIEW_OP_CREATE, NULL,
	  RF(",\"finalizers\":[\"x\"]", "{}"), NULL, V_NONE, P_DEFAULT, true,
	  0, NULL,
	  "[{\"op\":\"replace\",\"path\":\"/metadata/finalizers\",\"value\":"
	  "[\"x\",\"" FIN "\"]}]" },
	{ "finalizer already there", admit_mutate_finalizer,
	  KIND_RESOURCE_FLAVOR, REVIEW_OP_CREATE, NULL,
	  RF(",\"finalizers\":[\"" FIN "\"]", "{}"), NULL, V_NONE, P_DEFAULT,
	  true, 0, NULL, NULL },
	{ "finalizer route refuses another kind", admit_mutate_finalizer,
	  KIND_CLUSTER_QUEUE, REVIEW_OP_CREATE, NULL, RF("", "{}"), NULL,
	  V_NONE, P_DEFAULT, false, 400,
	  "expected a ClusterQueue object, got apiVersion \"kueue.x-k8s.io/"
	  "v1beta1\", kind \"ResourceFlavor\"", NULL },
	{ "Workload: the single pod set is named main", admit_mutate_workload,
	  KIND_WORKLOAD, REVIEW_OP_CREATE, "team", WL("v1beta1", "", ""),
	  NULL, V_NONE, P_DEFAULT, true, 0, NULL,
	  "[{\"op\":\"add\",\"path\":\"/spec/podSets/0/name\",\"value\":"
	  "\"main\"}]" },
	{ "Workload: minCount kept with PartialAdmission",
	  admit_mutate_workload, KIND_WORKLOAD, REVIEW_OP_CREATE, "team",
	  WL("v1beta2", "\"name\":\"main\",\"minCount\":1,", ""), NULL,
	  V_NONE, P_DEFAULT, true, 0, NULL, NULL },
	{ "Workload: minCount dropped without PartialAdmission",
	  admit_mutate_workload, KIND_WORKLOAD, REVIEW_OP_CREATE, "team",
	  WL("v1beta2", "\"name\":\"main\",\"minCount\":1,", ""), NULL,
	  V_NONE, P_NO_PARTIAL, true, 0, NULL,
	  "[{\"op\":\"remove\",\"path\":\"/spec/podSets/0/minCount\"}]" },
	{ "valid ClusterQueue", admit_validate_kueue, KIND_CLUSTER_QUEUE,
	  REVIEW_OP_CREATE, NULL,
	  CQ("v1beta2", RG(",\"nominalQuota\":\"10\"") ",\"cohortName\":"
	     "\"c\"}"), NULL, V_NONE, P_DEFAULT, true, 0, NULL, NULL },
	{ "ClusterQueue v1beta1: borrowing without cohort, lending > nominal",
	  admit_validate_kueue, KIND_CLUSTER_QUEUE, REVIEW_OP_CREATE, NULL,
	  CQ("v1beta1", RG(",\"nominalQuota\":\"1\",\"borrowingLimit\":\"1\","
			   "\"lendingLimit\":\"2\"") "}"), NULL, V_NONE,
	  P_DEFAULT, false, 403, NULL, NULL },
	{ "ClusterQueue that does not decode", admit_validate_kueue,
	  KIND_CLUSTER_QUEUE, REVIEW_OP_CREATE, NULL,
	  CQ("v1beta2", "{\"queueingStrategy\":5}"), NULL, V_NONE, P_DEFAULT,
	  false, 400, NULL, NULL },
	{ "LocalQueue clusterQueue is immutable", admit_validate_kueue,
	  KIND_LOCAL_QUEUE, REVIEW_OP_UPDATE, "team",
	  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"LocalQueue\","
	  "\"metadata\":{\"name\":\"l\",\"namespace\":\"team\"},\"spec\":{"
	  "\"clusterQueue\":\"b\"}}",
	  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"LocalQueue\","
	  "\"metadata\":{\"name\":\"l\",\"namespace\":\"team\"},\"spec\":{"
	  "\"clusterQueue\":\"a\"}}", V_NONE, P_DEFAULT, false, 403,
	  "spec.clusterQueue: Invalid value: \"string\": field is immutable",
	  NULL },
	{ "Cohort limits need a parent", admit_validate_kueue, KIND_COHORT,
	  REVIEW_OP_CREATE, NULL,
	  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Cohort\","
	  "\"metadata\":{\"name\":\"c\"},\"spec\":" RG(",\"nominalQuota\":"
	  "\"1\",\"borrowingLimit\":\"1\"") "}}", NULL, V_NONE, P_DEFAULT,
	  false, 403, NULL, NULL },
	{ "ResourceFlavor duplicate taints", admit_validate_kueue,
	  KIND_RESOURCE_FLAVOR, REVIEW_OP_CREATE, NULL,
	  RF("", "{\"nodeTaints\":[{\"key\":\"k\",\"value\":\"a\",\"effect\":"
	     "\"NoSchedule\"},{\"key\":\"k\",\"value\":\"b\",\"effect\":"
	     "\"NoSchedule\"}]}"), NULL, V_NONE, P_DEFAULT, false, 403, NULL,
	  NULL },
	{ "WorkloadPriorityClass valid", admit_validate_kueue,
	  KIND_WORKLOAD_PRIORITY_CLASS, REVIEW_OP_CREATE, NULL,
	  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
	  "\"WorkloadPriorityClass\",\"metadata\":{\"name\":\"p\"},"
	  "\"value\":10}", NULL, V_NONE, P_DEFAULT, true, 0, NULL, NULL },
	{ "Workload pod sets immutable while reserved", admit_validate_kueue,
	  KIND_WORKLOAD, REVIEW_OP_UPDATE, "team",
	  WL("v1beta1", "\"name\":\"main\",\"minCount\":1,", RESERVED),
	  WL("v1beta1", "\"name\":\"main\",", RESERVED), V_NONE, P_DEFAULT,
	  false, 403, NULL, NULL },
	{ "Workload reserved, unchanged", admit_validate_kueue, KIND_WORKLOAD,
	  REVIEW_OP_UPDATE, "team",
	  WL("v1beta1", "\"name\":\"main\",", RESERVED),
	  WL("v1beta1", "\"name\":\"main\",", RESERVED), V_NONE, P_DEFAULT,
	  true, 0, NULL, NULL },
	{ "Workload requests pods", admit_validate_kueue, KIND_WORKLOAD,
	  REVIEW_OP_CREATE, "team",
	  "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Workload\","
	  "\"metadata\":{\"name\":\"w\",\"namespace\":\"team\"},\"spec\":{"
	  "\"podSets\":[{\"name\":\"main\",\"count\":1,\"template\":{\"spec\":"
	  "{\"containers\":[{\"name\":\"c\",\"image\":\"i\",\"resources\":{"
	  "\"requests\":{\"pods\":\"1\"}}}]}}}]}}", NULL, V_NONE, P_DEFAULT,
	  false, 403,
	  "spec.podSets[0].template.spec.containers[0].resources.requests[pods]"
	  ": Invalid value: \"pods\": the key is reserved for internal kueue "
	  "use", NULL },
	{ "ResourceFlavor: an unknown taint effect is denied with the rest",
	  admit_validate_kueue, KIND_RESOURCE_FLAVOR, REVIEW_OP_CREATE, NULL,
	  RF("", "{\"nodeLabels\":{\"ok\":\"bad value!\"},\"nodeTaints\":"
	     "[{\"key\":\"k\",\"effect\":\"Sometimes\"}]}"), NULL, V_NONE,
	  P_DEFAULT, false, 403,
	  "[spec.nodeTaints[0].effect: Unsupported value: \"Sometimes\": "
	  "supported values: \"NoSchedule\", \"PreferNoSchedule\", "
	  "\"NoExecute\", spec.nodeLabels: Invalid value: \"bad value!\": a "
	  "valid label must be an empty string or consist of alphanumeric "
	  "characters, '-', '_' or '.', and must start and end with an "
	  "alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
	  "'12345', regex used for validation is "
	  "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')]", NULL },
	{ "DELETE of a Kueue object", admit_validate_kueue, KIND_CLUSTER_QUEUE,
	  REVIEW_OP_DELETE, NULL, NULL, CQ("v1beta1", "{}"), V_NONE,
	  P_DEFAULT, true, 0, NULL, NULL },
};

START_TEST(kueue_objects)
{
	check_case(&kueue[_i]);
}
END_TEST

/* The exact texts of the cases above that leave message NULL, so a
 * change in wording shows up here, next to Kueue's. */
START_TEST(kueue_denial_texts)
{
	static const struct {
		size_t idx;
		const char *want;
	} texts[] = {
		/* the CRD's CEL rule, then the webhook's two */
		{ 8, "[spec: Invalid value: \"object\": borrowingLimit must be "
		     "nil when cohort is empty, spec.resourceGroups[0]."
		     "flavors[0].resources[0].lendingLimit: Invalid value: "
		     "\"2\": must be nil when cohort is empty, spec."
		     "resourceGroups[0].flavors[0].resources[0].lendingLimit: "
		     "Invalid value: \"2\": must be less than or equal to the "
		     "nominalQuota]" },
		{ 11, "spec.resourceGroups[0].flavors[0].resources[0]."
		      "borrowingLimit: Invalid value: \"1\": must be nil when "
		      "parent is empty" },
		{ 12, "spec.nodeTaints[1]: Duplicate value: v1.Taint{Key:\"k\", "
		      "Value:\"b\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)"
		      "(nil)}: taints must be unique by key and effect pair" },
	};

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct review_response out;

		run(&kueue[texts[i].idx], &out);
		ck_assert_msg(out.message &&
			      !strcmp(out.message, texts[i].want),
			      "%s:\n got  %s\n want %s",
			      kueue[texts[i].idx].name,
			      out.message ? out.message : "(none)",
			      texts[i].want);
		review_response_release(&out);
	}
}
END_TEST

/* ---- policy from a Configuration ---- */

START_TEST(policy_from_config)
{
	static const char yaml[] =
		"apiVersion: config.kueue.x-k8s.io/v1beta1\n"
		"kind: Configuration\n"
		"namespace: kueue-system\n"
		"manageJobsWithoutQueueName: true\n"
		"featureGates:\n  PartialAdmission: false\n"
		"integrations:\n  frameworks: [batch/job, jobset.x-k8s.io/jobset]\n"
		"  externalFrameworks: [Foo.v1.example.com]\n";
	struct config c;
	struct config_opts co = { .namespace_file = "" };
	struct err err = { "" };
	struct admit_policy p;
	struct admit_ctx ctx = { &p, NULL };

	ck_assert_msg(config_load_string(yaml, strlen(yaml), &co, &c, &err) ==
		      0, "%s", err.msg);
	admit_policy_from_config(&p, &c);
	ck_assert(p.manage_jobs_without_queue_name);
	ck_assert(!p.partial_admission);
	ck_assert(p.lq_defaulting);
	ck_assert(!p.lq_defaulting_needs_managed_ns);
	ck_assert(!p.wpc_defaulting);
	ck_assert_uint_eq(p.nowners, 3);
	ck_assert_str_eq(p.owners[1].api_version, "jobset.x-k8s.io/v1alpha2");
	ck_assert_str_eq(p.owners[2].api_version, "example.com/v1");
	ck_assert_str_eq(p.owners[2].kind, "Foo");
	ck_assert(admit_ns_is_managed(&ctx, "team"));
	ck_assert(!admit_ns_is_managed(&ctx, "kube-system"));
	ck_assert(!admit_ns_is_managed(&ctx, "kueue-system"));
	admit_policy_release(&p);
	config_release(&c);
}
END_TEST

/* A custom managedJobsNamespaceSelector reaches the webhook's policy and
 * is matched against the namespace view's labels. */
START_TEST(policy_custom_selector)
{
	static const char yaml[] =
		"apiVersion: config.kueue.x-k8s.io/v1beta2\n"
		"kind: Configuration\n"
		"namespace: cueue-system\n"
		"manageJobsWithoutQueueName: true\n"
		"managedJobsNamespaceSelector:\n"
		"  matchLabels:\n    env: prod\n";
	struct config c;
	struct config_opts co = { .namespace_file = "" };
	struct err err = { "" };
	struct admit_policy p;
	struct nsview *nv = make_view(V_TEAM);
	struct admit_ctx ctx = { &p, nv };

	ck_assert_msg(config_load_string(yaml, strlen(yaml), &co, &c, &err) ==
		      0, "%s", err.msg);
	admit_policy_from_config(&p, &c);
	ck_assert(p.has_ns_selector);
	ck_assert(p.lq_defaulting_needs_managed_ns); /* v1beta2: HEAD */
	ck_assert(admit_ns_is_managed(&ctx, "team"));  /* env=prod */
	ck_assert(!admit_ns_is_managed(&ctx, "other"));
	ck_assert(!admit_ns_is_managed(&ctx, "kube-system"));
	ck_assert(!admit_ns_is_managed(&ctx, "unknown"));
	admit_policy_release(&p);
	config_release(&c);
	nsview_free(nv);
}
END_TEST

/* ---- hostile objects: every node of valid objects replaced by values
 * of every JSON type, run through every handler as CREATE and UPDATE ---- */

static admit_fn *const all_fns[] = {
	admit_mutate_job, admit_validate_job, admit_mutate_finalizer,
	admit_mutate_workload, admit_validate_kueue,
};

static const enum kind all_kinds[] = {
	KIND_JOB, KIND_CLUSTER_QUEUE, KIND_RESOURCE_FLAVOR, KIND_WORKLOAD,
	KIND_LOCAL_QUEUE, KIND_COHORT, KIND_WORKLOAD_PRIORITY_CLASS,
};

struct fuzz {
	const json_t *orig;
	struct nsview *view;
	struct admit_policy pol;
	size_t runs;
};

static void run_all(struct fuzz *f, json_t *obj)
{
	struct admit_ctx ctx = { &f->pol, f->view };

	for (size_t op = 0; op < 2; op++)
		for (size_t i = 0; i < sizeof(all_fns) / sizeof(all_fns[0]);
		     i++)
			for (size_t k = 0; k < sizeof(all_kinds) /
					       sizeof(all_kinds[0]); k++) {
				struct review_request req;
				struct review_response out;
				json_t *ans;

				/* validate_kueue serves Kueue kinds only */
				if (all_fns[i] == admit_validate_kueue &&
				    all_kinds[k] == KIND_JOB)
					continue;
				memset(&req, 0, sizeof(req));
				memset(&out, 0, sizeof(out));
				req.op = op ? REVIEW_OP_UPDATE
					    : REVIEW_OP_CREATE;
				req.namespace = (char *)"team";
				req.object = obj;
				req.old_object = op ? (json_t *)f->orig : NULL;
				all_fns[i](&ctx, all_kinds[k], &req, &out);
				ck_assert(out.allowed || out.code >= 400);
				ans = review_encode_admission(NULL, "u", &out);
				ck_assert_ptr_nonnull(ans);
				json_decref(ans);
				review_response_release(&out);
				f->runs++;
			}
}

static json_t *replacement(int i)
{
	switch (i) {
	case 0: return json_null();
	case 1: return json_integer(-1);
	case 2: return json_string("x");
	case 3: return json_array();
	case 4: return json_object();
	case 5: return json_true();
	default: return json_real(1e300);
	}
}

static void walk(struct fuzz *f, json_t *root, json_t *node)
{
	if (json_is_object(node)) {
		const char *key;
		json_t *v, *keys = json_array();
		size_t i;

		json_object_foreach(node, key, v)
			json_array_append_new(keys, json_string(key));
		json_array_foreach(keys, i, v) {
			const char *k = json_string_value(v);
			json_t *child = json_incref(json_object_get(node, k));

			for (int r = 0; r < 7; r++) {
				json_object_set_new(node, k, replacement(r));
				run_all(f, root);
			}
			json_object_del(node, k);
			run_all(f, root);
			json_object_set(node, k, child);
			walk(f, root, child);
			json_decref(child);
		}
		json_decref(keys);
	} else if (json_is_array(node)) {
		for (size_t i = 0; i < json_array_size(node); i++) {
			json_t *child = json_incref(json_array_get(node, i));

			for (int r = 0; r < 7; r++) {
				json_array_set_new(node, i, replacement(r));
				run_all(f, root);
			}
			json_array_set(node, i, child);
			walk(f, root, child);
			json_decref(child);
		}
	}
}

static const char *const hostile_seeds[] = {
	JOB(QLABEL("q") ",\"annotations\":{\"kueue.x-k8s.io/job-min-"
	    "parallelism\":\"1\"},\"ownerReferences\":[{\"apiVersion\":"
	    "\"batch/v1\",\"kind\":\"Job\",\"name\":\"p\",\"uid\":\"1\","
	    "\"controller\":true}]", ",\"parallelism\":2,\"suspend\":false"),
	CQ("v1beta1", RG(",\"nominalQuota\":\"10\",\"lendingLimit\":\"1\"")
	   ",\"cohort\":\"c\",\"namespaceSelector\":{\"matchLabels\":{\"a\":"
	   "\"b\"}}}"),
	WL("v1beta1", "\"minCount\":1,", RESERVED),
};

START_TEST(hostile_objects)
{
	struct fuzz f;
	json_t *obj;

	memset(&f, 0, sizeof(f));
	f.orig = t_json(hostile_seeds[_i]);
	f.view = make_view(V_TEAM);
	admit_policy_defaults(&f.pol);
	f.pol.manage_jobs_without_queue_name = true;
	f.pol.partial_admission = false;
	obj = json_deep_copy(f.orig);
	walk(&f, obj, obj);
	ck_assert_msg(json_equal(obj, f.orig), "the walk must restore");
	ck_assert_uint_gt(f.runs, 1000);
	json_decref(obj);
	json_decref((json_t *)f.orig);
	nsview_free(f.view);
	admit_policy_release(&f.pol);
}
END_TEST

/* ---- conversion ---- */

static json_t *conversion_review(const char *desired, json_t *objects)
{
	return json_pack("{s:s, s:s, s:{s:s, s:s, s:o}}", "apiVersion",
			 REVIEW_CONVERSION_V1, "kind", "ConversionReview",
			 "request", "uid", "c-1", "desiredAPIVersion", desired,
			 "objects", objects);
}

/* Converts objs (taken) to desired through the review codec and
 * admit_convert; returns the response (new). */
static json_t *convert_via_review(const char *desired, json_t *objs)
{
	json_t *rev = conversion_review(desired, objs), *ans;
	char *text = json_dumps(rev, JSON_COMPACT);
	struct review_conversion c;
	struct err err = { "" };

	ck_assert_msg(review_decode_conversion(text, strlen(text), &c, &err) ==
		      0, "%s", err.msg);
	ans = admit_convert(&c);
	review_conversion_release(&c);
	free(text);
	json_decref(rev);
	return ans;
}

static bool is_kueue(const json_t *doc)
{
	const char *av = json_string_value(json_object_get(doc, "apiVersion"));

	return av && !strncmp(av, "kueue.x-k8s.io/", 15);
}

/* Every Kueue object of the upstream examples, one review per file, to
 * the other version and back: the way back gives the original, but for
 * spec.concurrentAdmissionPolicy, which v1beta1 lacks and Kueue's
 * conversion drops (model/codec_convert.c). */
START_TEST(conversion_round_trips)
{
	static const char *const files[] = {
		"upstream/v1beta1/admin_single-clusterqueue-setup.yaml",
		"upstream/v1beta1/admin_minimal-cq.yaml",
		"upstream/v1beta1/admin_resource-flavor-taints.yaml",
		"upstream/admin/single-clusterqueue-setup.yaml",
		"upstream/admin/concurrent-admission-setup.yaml",
		"upstream/admission-fs/admission-fair-sharing-setup.yaml",
		"upstream/getting-started/quick-start-setup.yaml",
	};
	size_t total = 0;

	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char *rel = xasprintf("test/fixtures/%s", files[f]);
		char *path = t_src_path(rel);
		json_t *docs = NULL, *objs = json_array(), *doc, *there, *back;
		json_t *want;
		struct err err = { "" };
		const char *from = NULL, *to;
		size_t i;

		ck_assert_msg(yamljson_load_file(path, &docs, &err) == 0, "%s",
			      err.msg);
		json_array_foreach(docs, i, doc)
			if (is_kueue(doc)) {
				from = json_string_value(
					json_object_get(doc, "apiVersion"));
				json_array_append(objs, doc);
			}
		ck_assert_msg(json_array_size(objs) > 0, "%s", files[f]);
		total += json_array_size(objs);
		to = strstr(from, "v1beta1") ? "kueue.x-k8s.io/v1beta2"
					     : "kueue.x-k8s.io/v1beta1";
		there = convert_via_review(to, json_incref(objs));
		ck_assert_str_eq(json_string_value(json_object_get(
			json_object_get(there, "response"), "uid")), "c-1");
		ck_assert_msg(!strcmp(json_string_value(json_object_get(
			json_object_get(json_object_get(there, "response"),
					"result"), "status")), "Success"),
			"%s: %s", files[f], json_dumps(there, 0));
		json_array_foreach(json_object_get(json_object_get(there,
			"response"), "convertedObjects"), i, doc)
			ck_assert_str_eq(json_string_value(json_object_get(
				doc, "apiVersion")), to);
		/* mixed versions in one review are fine too */
		back = convert_via_review(
			strstr(to, "v1beta2") ? "kueue.x-k8s.io/v1beta1"
					      : "kueue.x-k8s.io/v1beta2",
			json_incref(json_object_get(json_object_get(there,
				"response"), "convertedObjects")));
		want = json_deep_copy(objs);
		json_array_foreach(want, i, doc)
			json_object_del(json_object_get(doc, "spec"),
					"concurrentAdmissionPolicy");
		ck_assert_msg(json_equal(json_object_get(json_object_get(back,
			"response"), "convertedObjects"), want),
			"%s: round trip changed it", files[f]);
		json_decref(want);
		json_decref(there);
		json_decref(back);
		json_decref(objs);
		json_decref(docs);
		free(path);
		free(rel);
	}
	ck_assert_uint_ge(total, 8);
}
END_TEST

START_TEST(conversion_failures)
{
	json_t *ans, *res;

	ans = convert_via_review("kueue.x-k8s.io/v1beta2",
		t_json("[{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
		       "\"ClusterQueue\",\"metadata\":{\"name\":\"a\"},"
		       "\"spec\":{\"cohort\":\"x\"}},{\"apiVersion\":\"v1\","
		       "\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"cm\"}}]"));
	res = json_object_get(json_object_get(ans, "response"), "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "status")),
			 "Failure");
	ck_assert_str_eq(json_string_value(json_object_get(res, "message")),
			 "objects[1] (ConfigMap cm): conversion: not a "
			 "kueue.x-k8s.io v1beta1/v1beta2 object of a known "
			 "kind");
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(ans,
		"response"), "convertedObjects")), 0);
	json_decref(ans);

	ans = convert_via_review("kueue.x-k8s.io/v9", t_json("[{\"apiVersion\":"
		"\"kueue.x-k8s.io/v1beta1\",\"kind\":\"Cohort\",\"metadata\":"
		"{\"name\":\"c\"}}]"));
	res = json_object_get(json_object_get(ans, "response"), "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "message")),
			 "objects[0] (Cohort c): conversion: unsupported "
			 "apiVersion \"kueue.x-k8s.io/v9\"");
	json_decref(ans);

	ans = convert_via_review("kueue.x-k8s.io/v1beta2", t_json("[7]"));
	res = json_object_get(json_object_get(ans, "response"), "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "message")),
			 "objects[0]: not an object");
	json_decref(ans);

	/* an empty list converts to an empty list */
	ans = convert_via_review("kueue.x-k8s.io/v1beta2", json_array());
	res = json_object_get(json_object_get(ans, "response"), "result");
	ck_assert_str_eq(json_string_value(json_object_get(res, "status")),
			 "Success");
	json_decref(ans);
}
END_TEST

/* ---- review envelopes ---- */

static const struct {
	const char *name;
	const char *body;
	const char *err;  /* NULL: decodes */
} envelopes[] = {
	{ "empty", "", "request body is empty" },
	{ "not JSON", "{nope", NULL },
	{ "not an object", "[1]", "couldn't decode the AdmissionReview: not a "
	  "JSON object" },
	{ "no kind", "{\"apiVersion\":\"admission.k8s.io/v1\"}",
	  "couldn't get version/kind of the AdmissionReview" },
	{ "a ConversionReview", "{\"apiVersion\":\"apiextensions.k8s.io/v1\","
	  "\"kind\":\"ConversionReview\"}", "unexpected apiextensions.k8s.io/"
	  "v1/ConversionReview, expected AdmissionReview" },
	{ "no request", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
	  "\"AdmissionReview\"}", "got an empty AdmissionRequest" },
	{ "no uid", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
	  "\"AdmissionReview\",\"request\":{\"kind\":{\"group\":\"\","
	  "\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\"}}",
	  "the AdmissionRequest has no uid" },
	{ "bad operation", "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
	  "\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"group\":"
	  "\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":\"EAT\"}}",
	  "the AdmissionRequest has an unknown operation" },
	{ "UPDATE without oldObject", "{\"apiVersion\":\"admission.k8s.io/v1\","
	  "\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":"
	  "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":"
	  "\"UPDATE\",\"object\":{}}}", "the AdmissionRequest has no oldObject" },
	{ "CREATE without object", "{\"apiVersion\":\"admission.k8s.io/v1\","
	  "\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":"
	  "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":"
	  "\"CREATE\"}}", "the AdmissionRequest has no object" },
	{ "DELETE without object", "{\"apiVersion\":\"admission.k8s.io/v1\","
	  "\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":"
	  "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":"
	  "\"DELETE\",\"oldObject\":{}}}", NULL },
};

START_TEST(review_decoding)
{
	struct review_request r;
	struct err err = { "" };
	int rc = review_decode_admission(envelopes[_i].body,
					 strlen(envelopes[_i].body), &r, &err);

	if (!envelopes[_i].err && strcmp(envelopes[_i].name, "not JSON")) {
		ck_assert_msg(rc == 0, "%s: %s", envelopes[_i].name, err.msg);
	} else {
		ck_assert_int_eq(rc, -1);
		if (envelopes[_i].err)
			ck_assert_str_eq(err.msg, envelopes[_i].err);
		else
			ck_assert_msg(strstr(err.msg, "couldn't decode the "
					     "AdmissionReview: "), "%s",
				      err.msg);
	}
	review_request_release(&r);
}
END_TEST

static bool is_json_text(const json_t *j, const char *text)
{
	json_t *w = t_json(text);
	bool eq = json_equal(j, w);

	json_decref(w);
	return eq;
}

START_TEST(review_round_trip)
{
	static const char body[] =
		"{\"apiVersion\":\"admission.k8s.io/v1beta1\",\"kind\":"
		"\"AdmissionReview\",\"request\":{\"uid\":\"abc\",\"kind\":{"
		"\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"},"
		"\"operation\":\"CREATE\",\"namespace\":\"ns\",\"name\":\"n\","
		"\"subResource\":\"status\",\"dryRun\":true,\"object\":{"
		"\"a\":1}}}";
	struct review_request r;
	struct review_response out;
	struct err err = { "" };
	json_t *ans, *resp;
	unsigned char *patch;
	size_t n;

	ck_assert_int_eq(review_decode_admission(body, strlen(body), &r, &err),
			 0);
	ck_assert_str_eq(r.uid, "abc");
	ck_assert_str_eq(r.group, "batch");
	ck_assert_str_eq(r.kind, "Job");
	ck_assert_str_eq(r.namespace, "ns");
	ck_assert_str_eq(r.sub_resource, "status");
	ck_assert(r.dry_run);
	ck_assert_int_eq(r.op, REVIEW_OP_CREATE);
	ck_assert_ptr_null(r.old_object);

	memset(&out, 0, sizeof(out));
	out.allowed = true;
	out.patch = t_json("[{\"op\":\"add\",\"path\":\"/b\",\"value\":2}]");
	review_warn(&out, "careful");
	ans = review_encode_admission(r.api_version, r.uid, &out);
	ck_assert_str_eq(json_string_value(json_object_get(ans, "apiVersion")),
			 "admission.k8s.io/v1beta1");
	resp = json_object_get(ans, "response");
	ck_assert_str_eq(json_string_value(json_object_get(resp, "uid")), "abc");
	ck_assert(json_is_true(json_object_get(resp, "allowed")));
	ck_assert_str_eq(json_string_value(json_object_get(resp, "patchType")),
			 "JSONPatch");
	patch = b64_decode(json_string_value(json_object_get(resp, "patch")),
			   json_string_length(json_object_get(resp, "patch")),
			   B64_STD, &n, NULL);
	ck_assert_ptr_nonnull(patch);
	ck_assert_str_eq((char *)patch,
			 "[{\"op\":\"add\",\"path\":\"/b\",\"value\":2}]");
	ck_assert_str_eq(json_string_value(json_array_get(
		json_object_get(resp, "warnings"), 0)), "careful");
	ck_assert_ptr_null(json_object_get(resp, "status"));
	free(patch);
	json_decref(ans);

	review_deny(&out, 403, "Forbidden", "no");
	ans = review_encode_admission(NULL, "abc", &out);
	resp = json_object_get(ans, "response");
	ck_assert(is_json_text(json_object_get(resp, "status"),
		"{\"metadata\":{},\"status\":\"Failure\",\"message\":\"no\","
		"\"reason\":\"Forbidden\",\"code\":403}"));
	ck_assert_ptr_null(json_object_get(resp, "patch"));
	ck_assert_str_eq(json_string_value(json_object_get(ans, "apiVersion")),
			 "admission.k8s.io/v1");
	json_decref(ans);
	review_response_release(&out);
	review_request_release(&r);
}
END_TEST

/* ---- JSON Patch ---- */


static const struct {
	const char *from, *to, *patch;
} diffs[] = {
	{ "{}", "{}", "[]" },
	{ "{\"a/b\":{\"c~d\":1}}", "{\"a/b\":{\"c~d\":2}}",
	  "[{\"op\":\"replace\",\"path\":\"/a~1b/c~0d\",\"value\":2}]" },
	{ "{\"a\":1,\"b\":2}", "{\"b\":2,\"c\":[1]}",
	  "[{\"op\":\"remove\",\"path\":\"/a\"},{\"op\":\"add\",\"path\":"
	  "\"/c\",\"value\":[1]}]" },
	{ "{\"l\":[1,{\"x\":1}]}", "{\"l\":[1,{\"x\":1,\"y\":2}]}",
	  "[{\"op\":\"add\",\"path\":\"/l/1/y\",\"value\":2}]" },
	{ "{\"l\":[1]}", "{\"l\":[1,2]}",
	  "[{\"op\":\"replace\",\"path\":\"/l\",\"value\":[1,2]}]" },
	{ "[1]", "{}", "[{\"op\":\"replace\",\"path\":\"\",\"value\":{}}]" },
	{ "{\"a\":null}", "{\"a\":\"x\"}",
	  "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":\"x\"}]" },
};

START_TEST(patch_diffs)
{
	json_t *a = t_json(diffs[_i].from), *b = t_json(diffs[_i].to);
	json_t *want = t_json(diffs[_i].patch), *got = jsonpatch_diff(a, b);

	ck_assert_msg(json_equal(got, want), "%s -> %s: %s", diffs[_i].from,
		      diffs[_i].to, json_dumps(got, JSON_COMPACT));
	json_decref(a);
	json_decref(b);
	json_decref(want);
	json_decref(got);
}
END_TEST

/* ---- the namespace view ---- */

START_TEST(namespace_view)
{
	struct nsview *v = nsview_new();
	struct smap a = SMAP_INIT, b = SMAP_INIT;

	smap_set(&a, "x", "1");
	smap_set(&b, "x", "2");
	nsview_set_labels(v, "n2", &a);
	nsview_set_labels(v, "n1", &a);
	nsview_set_labels(v, "n2", &b); /* the later one wins */
	nsview_set_default_lq(v, "n2");
	nsview_set_default_lq(v, "n2");
	ck_assert(!nsview_is_frozen(v));
	nsview_freeze(v);
	ck_assert_uint_eq(nsview_count(v), 2);
	ck_assert_str_eq(smap_get(nsview_labels(v, "n2"), "x"), "2");
	ck_assert_str_eq(smap_get(nsview_labels(v, "n1"), "x"), "1");
	ck_assert_ptr_null(nsview_labels(v, "n3"));
	ck_assert(nsview_has_default_lq(v, "n2"));
	ck_assert(!nsview_has_default_lq(v, "n1"));
	ck_assert(!nsview_has_default_lq(NULL, "n1"));
	smap_release(&a);
	smap_release(&b);
	nsview_free(v);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

Suite *webhook_admit_suite(void)
{
	Suite *s = suite_create("webhook_admit");
	TCase *tc;

	tc = tcase_create("job-mutation");
	tcase_add_loop_test(tc, job_mutation, 0, N(mutate_job));
	suite_add_tcase(s, tc);

	tc = tcase_create("job-validation");
	tcase_add_loop_test(tc, job_validation, 0, N(validate_jobs));
	suite_add_tcase(s, tc);

	tc = tcase_create("kueue-objects");
	tcase_add_loop_test(tc, kueue_objects, 0, N(kueue));
	tcase_add_test(tc, kueue_denial_texts);
	tcase_add_test(tc, policy_from_config);
	tcase_add_test(tc, policy_custom_selector);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, hostile_objects, 0, N(hostile_seeds));
	suite_add_tcase(s, tc);

	tc = tcase_create("conversion");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, conversion_round_trips);
	tcase_add_test(tc, conversion_failures);
	suite_add_tcase(s, tc);

	tc = tcase_create("envelopes");
	tcase_add_loop_test(tc, review_decoding, 0, N(envelopes));
	tcase_add_test(tc, review_round_trip);
	tcase_add_loop_test(tc, patch_diffs, 0, N(diffs));
	tcase_add_test(tc, namespace_view);
	suite_add_tcase(s, tc);

	return s;
}
