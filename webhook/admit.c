/*
 * admit: the handlers behind cueue's webhook paths. Each starts from the
 * decoded review, checks the object is of the route's kind, and either
 * edits a deep copy of it (mutating; the answer is the JSON Patch diff)
 * or decodes it with model/codec.h and runs model/validate.h
 * (validating). See admit.h for the table of what each path does.
 */
#include "webhook/admit.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "config/config.h"
#include "model/validate.h"
#include "webhook/jsonpatch.h"

#define NS_NAME_LABEL "kubernetes.io/metadata.name"
#define DEFAULT_LQ "default"
#define DEFAULT_WPC "default"

/* ---- policy ---- */

/* integrations.frameworks names -> the job kind each manages (Kueue's
 * integration GVKs; an owner of one of these kinds makes a Job a child). */
static const struct {
	const char *framework;
	const char *api_version;
	const char *kind;
} frameworks[] = {
	{ "batch/job", "batch/v1", "Job" },
	{ "kubeflow.org/mpijob", "kubeflow.org/v2beta1", "MPIJob" },
	{ "ray.io/rayjob", "ray.io/v1", "RayJob" },
	{ "ray.io/raycluster", "ray.io/v1", "RayCluster" },
	{ "ray.io/rayservice", "ray.io/v1", "RayService" },
	{ "jobset.x-k8s.io/jobset", "jobset.x-k8s.io/v1alpha2", "JobSet" },
	{ "kubeflow.org/paddlejob", "kubeflow.org/v1", "PaddleJob" },
	{ "kubeflow.org/pytorchjob", "kubeflow.org/v1", "PyTorchJob" },
	{ "kubeflow.org/tfjob", "kubeflow.org/v1", "TFJob" },
	{ "kubeflow.org/xgboostjob", "kubeflow.org/v1", "XGBoostJob" },
	{ "kubeflow.org/jaxjob", "kubeflow.org/v1", "JAXJob" },
	{ "trainer.kubeflow.org/trainjob", "trainer.kubeflow.org/v1alpha1",
	  "TrainJob" },
	{ "workload.codeflare.dev/appwrapper", "workload.codeflare.dev/v1beta2",
	  "AppWrapper" },
	{ "sparkoperator.k8s.io/sparkapplication",
	  "sparkoperator.k8s.io/v1beta2", "SparkApplication" },
	{ "pod", "v1", "Pod" },
	{ "deployment", "apps/v1", "Deployment" },
	{ "statefulset", "apps/v1", "StatefulSet" },
	{ "leaderworkerset.x-k8s.io/leaderworkerset",
	  "leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet" },
};

static void add_owner(struct admit_policy *p, const char *av,
		      const char *kind)
{
	p->owners = xrealloc(p->owners, (p->nowners + 1) * sizeof(*p->owners));
	p->owners[p->nowners].api_version = xstrdup(av);
	p->owners[p->nowners].kind = xstrdup(kind);
	p->nowners++;
}

static void add_framework(struct admit_policy *p, const char *name)
{
	for (size_t i = 0; i < sizeof(frameworks) / sizeof(frameworks[0]); i++)
		if (!strcmp(frameworks[i].framework, name))
			add_owner(p, frameworks[i].api_version,
				  frameworks[i].kind);
}

/* "Kind.version.group" (externalFrameworks) -> apiVersion + kind. */
static void add_external(struct admit_policy *p, const char *spec)
{
	const char *d1 = strchr(spec, '.'), *d2;
	char *kind, *av;

	if (!d1)
		return;
	d2 = strchr(d1 + 1, '.');
	kind = xstrndup(spec, (size_t)(d1 - spec));
	av = d2 ? xasprintf("%s/%.*s", d2 + 1, (int)(d2 - d1 - 1), d1 + 1)
		: xstrdup(d1 + 1);
	add_owner(p, av, kind);
	free(kind);
	free(av);
}

void admit_policy_defaults(struct admit_policy *p)
{
	static const char *const sys[] = { "kube-system", "kueue-system" };

	memset(p, 0, sizeof(*p));
	p->has_ns_selector = true;
	label_selector_init(&p->ns_selector);
	label_selector_add(&p->ns_selector, NS_NAME_LABEL, SEL_NOT_IN, sys, 2);
	p->lq_defaulting = true;
	p->partial_admission = true;
	add_framework(p, "batch/job");
}

void admit_policy_from_config(struct admit_policy *p, const struct config *c)
{
	memset(p, 0, sizeof(*p));
	p->manage_jobs_without_queue_name = c->manage_jobs_without_queue_name;
	p->has_ns_selector = c->managed_jobs_ns_selector.set;
	label_selector_init(&p->ns_selector);
	if (p->has_ns_selector)
		label_selector_copy(&p->ns_selector,
				    &c->managed_jobs_ns_selector.sel);
	p->lq_defaulting = config_feature_gate(c, "LocalQueueDefaulting", true);
	p->lq_defaulting_needs_managed_ns =
		c->api == CONFIG_API_V1BETA2 ||
		config_feature_gate(c,
				    "ManagedJobsNamespaceSelectorAlwaysRespected",
				    false);
	p->partial_admission = config_feature_gate(c, "PartialAdmission", true);
	p->wpc_defaulting = config_feature_gate(c,
		"WorkloadPriorityClassDefaulting", c->api == CONFIG_API_V1BETA2);
	for (size_t i = 0; i < c->int_frameworks.n; i++)
		add_framework(p, c->int_frameworks.v[i]);
	for (size_t i = 0; i < c->int_external_frameworks.n; i++)
		add_external(p, c->int_external_frameworks.v[i]);
}

void admit_policy_copy(struct admit_policy *dst, const struct admit_policy *src)
{
	if (dst == src)
		return;
	admit_policy_release(dst);
	*dst = *src;
	label_selector_init(&dst->ns_selector);
	label_selector_copy(&dst->ns_selector, &src->ns_selector);
	dst->owners = NULL;
	dst->nowners = 0;
	for (size_t i = 0; i < src->nowners; i++)
		add_owner(dst, src->owners[i].api_version, src->owners[i].kind);
}

void admit_policy_release(struct admit_policy *p)
{
	if (!p)
		return;
	label_selector_release(&p->ns_selector);
	for (size_t i = 0; i < p->nowners; i++) {
		free(p->owners[i].api_version);
		free(p->owners[i].kind);
	}
	free(p->owners);
	memset(p, 0, sizeof(*p));
}

/* ---- helpers ---- */

bool admit_ns_is_managed(const struct admit_ctx *ctx, const char *ns)
{
	const struct smap *labels;
	struct smap tmp = SMAP_INIT;
	bool ok;

	if (!ctx->pol->has_ns_selector)
		return true;
	labels = nsview_labels(ctx->ns, ns);
	if (!labels) {
		smap_set(&tmp, NS_NAME_LABEL, ns ? ns : "");
		labels = &tmp;
	}
	ok = label_selector_matches(&ctx->pol->ns_selector, labels);
	smap_release(&tmp);
	return ok;
}

/* Refuses req when its object is not of kind want (code 400). */
static bool kind_ok(enum kind want, const json_t *obj,
		    struct review_response *out)
{
	char *m;

	if (codec_kind_of(obj) == want)
		return true;
	m = xasprintf("expected a %s%s object, got apiVersion \"%s\", kind "
		      "\"%s\"", want == KIND_JOB ? "batch/v1 " : "",
		      kind_name(want),
		      json_string_value(json_object_get(obj, "apiVersion"))
		      ? json_string_value(json_object_get(obj, "apiVersion"))
		      : "",
		      json_string_value(json_object_get(obj, "kind"))
		      ? json_string_value(json_object_get(obj, "kind")) : "");
	review_deny(out, 400, NULL, m);
	free(m);
	return false;
}

static void deny_fe(struct review_response *out, int32_t code,
		    const char *reason, const struct field_errors *fe)
{
	char *m = field_errors_aggregate(fe);

	review_deny(out, code, reason, m);
	free(m);
}

/* The member key of obj as an object, created when absent or not one. */
static json_t *ensure_object(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	if (!json_is_object(v)) {
		v = json_object();
		json_object_set_new(obj, key, v);
	}
	return v;
}

/* Answers the difference between the request's object and copy. */
static void answer_patch(const struct review_request *req, json_t *copy,
			 struct review_response *out)
{
	out->allowed = true;
	out->patch = jsonpatch_diff(req->object, copy);
}

/* ---- Job (kueue-api.md §12.2, §12.3) ---- */

static const char *nonempty(const char *s)
{
	return s && *s ? s : NULL;
}

/* Kueue's QueueNameForObject: the label, else (v0.14) the annotation. */
static const char *job_queue_name(const struct job *j)
{
	const char *q = nonempty(smap_get(&j->meta.labels,
					  LABEL_QUEUE_NAME));

	return q ? q : nonempty(smap_get(&j->meta.annotations,
					 LABEL_QUEUE_NAME));
}

/* Is the Job's controller owner a job kind Kueue manages? Then the
 * owner's workload covers it and the webhook leaves it alone. */
static bool owner_is_managed(const struct admit_policy *p, const struct job *j)
{
	for (size_t i = 0; i < j->meta.nowners; i++) {
		const struct owner_ref *o = &j->meta.owners[i];

		if (!o->controller || !o->api_version || !o->kind)
			continue;
		for (size_t k = 0; k < p->nowners; k++)
			if (!strcmp(o->api_version, p->owners[k].api_version) &&
			    !strcmp(o->kind, p->owners[k].kind))
				return true;
		return false; /* there is one controller at most */
	}
	return false;
}

static const char *req_namespace(const struct review_request *req,
				 const struct job *j)
{
	return nonempty(req->namespace) ? req->namespace : j->meta.namespace;
}

/* Decodes the request's job (or old job); false + a 400 answer when it
 * does not decode. */
static bool decode_job(const json_t *obj, struct job *j,
		       struct review_response *out)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	bool ok = codec_decode_job(obj, j, &fe) == 0;

	if (!ok)
		deny_fe(out, 400, NULL, &fe);
	field_errors_release(&fe);
	return ok;
}

void admit_mutate_job(const struct admit_ctx *ctx, enum kind want,
		      const struct review_request *req,
		      struct review_response *out)
{
	const struct admit_policy *p = ctx->pol;
	struct job j = { 0 };
	const char *ns, *queue;
	bool child, suspend = false;
	json_t *copy = NULL;

	if (req->op != REVIEW_OP_CREATE) {
		out->allowed = true;
		return;
	}
	if (!kind_ok(want, req->object, out) ||
	    !decode_job(req->object, &j, out))
		goto out;
	copy = json_deep_copy(req->object);
	ns = req_namespace(req, &j);
	queue = job_queue_name(&j);
	child = owner_is_managed(p, &j);
	/* 1. LocalQueue defaulting: no queue name, not a child, and a
	 * LocalQueue "default" in the namespace (HEAD: a managed one). */
	if (!queue && !child && p->lq_defaulting &&
	    nsview_has_default_lq(ctx->ns, ns) &&
	    (!p->lq_defaulting_needs_managed_ns ||
	     admit_ns_is_managed(ctx, ns))) {
		json_t *labels = ensure_object(ensure_object(copy, "metadata"),
					       "labels");

		json_object_set_new(labels, LABEL_QUEUE_NAME,
				    json_string(DEFAULT_LQ));
		queue = DEFAULT_LQ;
	}
	/* 2. (HEAD) WorkloadPriorityClass defaulting: no class label, not a
	 * child, and a class named "default" exists. */
	if (p->wpc_defaulting && !child &&
	    !nonempty(smap_get(&j.meta.labels, LABEL_PRIORITY_CLASS)) &&
	    nsview_has_default_wpc(ctx->ns))
		json_object_set_new(ensure_object(ensure_object(copy,
							       "metadata"),
						  "labels"),
				    LABEL_PRIORITY_CLASS,
				    json_string(DEFAULT_WPC));
	/* 3. Suspend on create: a queue name, or every Job of a managed
	 * namespace with manageJobsWithoutQueueName; never a child. */
	if (!child) {
		if (queue)
			suspend = true;
		else if (p->manage_jobs_without_queue_name)
			suspend = admit_ns_is_managed(ctx, ns);
	}
	if (suspend && !j.suspend)
		json_object_set_new(ensure_object(copy, "spec"), "suspend",
				    json_true());
	answer_patch(req, copy, out);
out:
	json_decref(copy);
	job_release(&j);
}

void admit_validate_job(const struct admit_ctx *ctx, enum kind want,
			const struct review_request *req,
			struct review_response *out)
{
	struct job j = { 0 }, old = { 0 };
	struct field_errors fe = FIELD_ERRORS_INIT;
	bool update = req->op == REVIEW_OP_UPDATE;

	if (req->op != REVIEW_OP_CREATE && !update) {
		out->allowed = true;
		return;
	}
	if (!kind_ok(want, req->object, out) ||
	    (update && !kind_ok(want, req->old_object, out)) ||
	    !decode_job(req->object, &j, out) ||
	    (update && !decode_job(req->old_object, &old, out)))
		goto out;
	validate_job(&j, update ? &old : NULL,
		     nsview_has_default_lq(ctx->ns, req_namespace(req, &j)),
		     &fe);
	if (fe.n)
		deny_fe(out, 403, "Forbidden", &fe);
	else
		out->allowed = true;
out:
	field_errors_release(&fe);
	job_release(&j);
	job_release(&old);
}

/* ---- Kueue objects ---- */

void admit_mutate_finalizer(const struct admit_ctx *ctx, enum kind want,
			    const struct review_request *req,
			    struct review_response *out)
{
	json_t *copy, *fin;
	size_t i;
	json_t *v;

	(void)ctx;
	if (req->op != REVIEW_OP_CREATE) {
		out->allowed = true;
		return;
	}
	if (!kind_ok(want, req->object, out))
		return;
	copy = json_deep_copy(req->object);
	fin = json_object_get(ensure_object(copy, "metadata"), "finalizers");
	if (!json_is_array(fin)) {
		fin = json_array();
		json_object_set_new(json_object_get(copy, "metadata"),
				    "finalizers", fin);
	}
	json_array_foreach(fin, i, v)
		if (json_is_string(v) &&
		    !strcmp(json_string_value(v), FINALIZER_RESOURCE_IN_USE))
			break;
	if (i == json_array_size(fin))
		json_array_append_new(fin,
				      json_string(FINALIZER_RESOURCE_IN_USE));
	answer_patch(req, copy, out);
	json_decref(copy);
}

void admit_mutate_workload(const struct admit_ctx *ctx, enum kind want,
			   const struct review_request *req,
			   struct review_response *out)
{
	json_t *copy, *sets, *ps;
	const json_t *name;
	size_t i;

	if (req->op != REVIEW_OP_CREATE) {
		out->allowed = true;
		return;
	}
	if (!kind_ok(want, req->object, out))
		return;
	copy = json_deep_copy(req->object);
	sets = json_object_get(json_object_get(copy, "spec"), "podSets");
	if (json_is_array(sets) && json_array_size(sets) == 1) {
		ps = json_array_get(sets, 0);
		name = json_object_get(ps, "name");
		if (json_is_object(ps) &&
		    (!name || (json_is_string(name) &&
			       !*json_string_value(name))))
			json_object_set_new(ps, "name",
					    json_string(DEFAULT_PODSET_NAME));
	}
	if (!ctx->pol->partial_admission && json_is_array(sets))
		json_array_foreach(sets, i, ps)
			if (json_is_object(ps))
				json_object_del(ps, "minCount");
	answer_patch(req, copy, out);
	json_decref(copy);
}

/*
 * Is every decode error one the API server would report as a validation
 * error (an enum value, a bad quantity, a length) rather than refuse to
 * decode the object at all (a wrong JSON type)? Then the validators run
 * on what did decode, and the denial lists everything, as Kubernetes'
 * schema and Kueue's webhook together would.
 */
static bool decode_errors_are_soft(const struct field_errors *dec)
{
	for (size_t i = 0; i < dec->n; i++)
		if (dec->v[i].kind == FE_TYPE || dec->v[i].kind == FE_INTERNAL)
			return false;
	return true;
}

/*
 * decode + validate for one kind, with the old object on update. The
 * macro stamps out one function per struct type; the bodies differ only
 * in the type and the three functions. Returns -1 when a decode error
 * is a hard one (dec holds them all); otherwise 0 with the validators'
 * findings in fe (after the soft decode errors, if any).
 */
#define KUEUE_CHECK(fn, T, decode, validate, release)                       \
	static int fn(const json_t *obj, const json_t *oldobj,              \
		      struct field_errors *dec, struct field_errors *fe)    \
	{                                                                   \
		struct T n, o;                                              \
		int rc = 0;                                                 \
									    \
		memset(&o, 0, sizeof(o));                                   \
		if (decode(obj, &n, dec) != 0)                              \
			rc = -1;                                            \
		if (oldobj && decode(oldobj, &o, dec) != 0)                 \
			rc = -1;                                            \
		if (rc == 0 || decode_errors_are_soft(dec)) {               \
			validate(&n, oldobj ? &o : NULL, fe);               \
			merge_soft(dec, fe);                                \
			rc = 0;                                             \
		}                                                           \
		release(&n);                                                \
		release(&o);                                                \
		return rc;                                                  \
	}

/* fe = dec's soft errors, then fe's own on other paths (a field the
 * decoder already refused is not reported twice). dec ends empty. */
static void merge_soft(struct field_errors *dec, struct field_errors *fe)
{
	size_t keep = 0;

	if (!dec->n)
		return;
	/* drop (free) fe's entries on a path dec names, in place */
	for (size_t i = 0; i < fe->n; i++) {
		if (field_errors_has_path(dec, fe->v[i].path)) {
			free(fe->v[i].path);
			free(fe->v[i].text);
			continue;
		}
		fe->v[keep++] = fe->v[i];
	}
	fe->n = keep;
	/* take_all memcpy()s from src->v, which is NULL while src is
	 * empty: never hand it an empty list */
	if (fe->n)
		field_errors_take_all(dec, fe);
	field_errors_release(fe);
	field_errors_take_all(fe, dec);
}

KUEUE_CHECK(check_rf, resource_flavor, codec_decode_resource_flavor,
	    validate_resource_flavor, resource_flavor_release)
KUEUE_CHECK(check_cq, cluster_queue, codec_decode_cluster_queue,
	    validate_cluster_queue, cluster_queue_release)
KUEUE_CHECK(check_lq, local_queue, codec_decode_local_queue,
	    validate_local_queue, local_queue_release)
KUEUE_CHECK(check_cohort, cohort, codec_decode_cohort, validate_cohort,
	    cohort_release)
KUEUE_CHECK(check_wpc, workload_priority_class,
	    codec_decode_workload_priority_class,
	    validate_workload_priority_class, workload_priority_class_release)
KUEUE_CHECK(check_wl, workload, codec_decode_workload, validate_workload,
	    workload_release)

void admit_validate_kueue(const struct admit_ctx *ctx, enum kind want,
			  const struct review_request *req,
			  struct review_response *out)
{
	struct field_errors dec = FIELD_ERRORS_INIT, fe = FIELD_ERRORS_INIT;
	const json_t *old = NULL;
	int rc;

	(void)ctx;
	if (req->op != REVIEW_OP_CREATE && req->op != REVIEW_OP_UPDATE) {
		out->allowed = true;
		return;
	}
	if (req->op == REVIEW_OP_UPDATE) {
		old = req->old_object;
		if (!kind_ok(want, old, out))
			return;
	}
	if (!kind_ok(want, req->object, out))
		return;
	switch (want) {
	case KIND_RESOURCE_FLAVOR:
		rc = check_rf(req->object, old, &dec, &fe);
		break;
	case KIND_CLUSTER_QUEUE:
		rc = check_cq(req->object, old, &dec, &fe);
		break;
	case KIND_LOCAL_QUEUE:
		rc = check_lq(req->object, old, &dec, &fe);
		break;
	case KIND_COHORT:
		rc = check_cohort(req->object, old, &dec, &fe);
		break;
	case KIND_WORKLOAD_PRIORITY_CLASS:
		rc = check_wpc(req->object, old, &dec, &fe);
		break;
	case KIND_WORKLOAD:
		rc = check_wl(req->object, old, &dec, &fe);
		break;
	case KIND_JOB:
	case KIND_UNKNOWN:
	default:
		BUG("admit_validate_kueue for kind %d", (int)want);
	}
	if (rc != 0)
		deny_fe(out, 400, NULL, &dec);
	else if (fe.n)
		deny_fe(out, 403, "Forbidden", &fe);
	else
		out->allowed = true;
	field_errors_release(&dec);
	field_errors_release(&fe);
}

/* ---- conversion ---- */

json_t *admit_convert(const struct review_conversion *c)
{
	json_t *done = json_array(), *obj, *conv, *answer;
	char *failure = NULL;
	size_t i;

	json_array_foreach(c->objects, i, obj) {
		struct err err = { "" };

		if (!json_is_object(obj)) {
			failure = xasprintf("objects[%zu]: not an object", i);
			break;
		}
		if (codec_convert(obj, c->desired, &conv, &err) != 0) {
			const char *k = json_string_value(json_object_get(obj,
									  "kind"));
			const char *n = json_string_value(json_object_get(
				json_object_get(obj, "metadata"), "name"));

			failure = xasprintf("objects[%zu] (%s %s): %s", i,
					    k ? k : "?", n ? n : "?", err.msg);
			break;
		}
		json_array_append_new(done, conv);
	}
	answer = review_encode_conversion(c->api_version, c->uid, done, failure);
	free(failure);
	json_decref(done);
	return answer;
}
