/*
 * codec_k8s: decoders for the Kubernetes shapes Kueue objects embed or
 * cueue reads directly: meta/v1 ObjectMeta, Condition and LabelSelector,
 * core/v1 Taint, Toleration and PodTemplateSpec (the scheduling view plus
 * the raw JSON), and batch/v1 Job. The Kueue kinds are in codec.c; the
 * cursor and readers in codec_cursor.c.
 */
#include "model/codec.h"

#include <stdlib.h>
#include <string.h>

#include "model/codec_int.h"
#include "model/svec.h"

/* ------------------------------------------------------------------ */
/* Enum tables */

static const struct codec_enum cond_status_tab[] = {
	{ "True", COND_TRUE, false },
	{ "False", COND_FALSE, false },
	{ "Unknown", COND_UNKNOWN, false },
	{ NULL, 0, false },
};

static const struct codec_enum taint_effect_tab[] = {
	{ "NoSchedule", EFFECT_NO_SCHEDULE, false },
	{ "PreferNoSchedule", EFFECT_PREFER_NO_SCHEDULE, false },
	{ "NoExecute", EFFECT_NO_EXECUTE, false },
	{ NULL, 0, false },
};

static const struct codec_enum tol_effect_tab[] = {
	{ "NoSchedule", EFFECT_NO_SCHEDULE, false },
	{ "PreferNoSchedule", EFFECT_PREFER_NO_SCHEDULE, false },
	{ "NoExecute", EFFECT_NO_EXECUTE, false },
	{ "", EFFECT_ALL, true },
	{ NULL, 0, false },
};

static const struct codec_enum tol_op_tab[] = {
	{ "Equal", TOL_EQUAL, false },
	{ "Exists", TOL_EXISTS, false },
	{ "", TOL_EQUAL, true },
	{ NULL, 0, false },
};

static const struct codec_enum sel_op_tab[] = {
	{ "In", SEL_IN, false },
	{ "NotIn", SEL_NOT_IN, false },
	{ "Exists", SEL_EXISTS, false },
	{ "DoesNotExist", SEL_DOES_NOT_EXIST, false },
	{ NULL, 0, false },
};

static const struct codec_enum node_op_tab[] = {
	{ "In", SEL_IN, false },
	{ "NotIn", SEL_NOT_IN, false },
	{ "Exists", SEL_EXISTS, false },
	{ "DoesNotExist", SEL_DOES_NOT_EXIST, false },
	{ "Gt", SEL_GT, false },
	{ "Lt", SEL_LT, false },
	{ NULL, 0, false },
};

static const struct codec_enum completion_mode_tab[] = {
	{ "NonIndexed", 0, false },
	{ "Indexed", 1, false },
	{ NULL, 0, false },
};

/* ------------------------------------------------------------------ */
/* meta/v1 and core/v1 */

static void dec_owner(struct codec_ctx *c, const json_t *e, struct owner_ref *o)
{
	o->api_version = codec_strdup(c, e, "apiVersion");
	o->kind = codec_strdup(c, e, "kind");
	o->name = codec_strdup(c, e, "name");
	o->uid = codec_strdup(c, e, "uid");
	codec_bool(c, e, "controller", &o->controller);
	codec_bool(c, e, "blockOwnerDeletion", &o->block_owner_deletion);
}

void codec_read_meta(struct codec_ctx *c, const json_t *obj,
		     struct object_meta *m)
{
	size_t mark, am, mi;
	const json_t *md = codec_enter(c, obj, "metadata", &mark), *a, *e;
	size_t n;

	if (!md)
		return;
	m->name = codec_strdup(c, md, "name");
	m->namespace = codec_strdup(c, md, "namespace");
	m->generate_name = codec_strdup(c, md, "generateName");
	m->uid = codec_strdup(c, md, "uid");
	m->resource_version = codec_strdup(c, md, "resourceVersion");
	codec_i64(c, md, "generation", &m->generation);
	codec_time(c, md, "creationTimestamp", &m->creation_ms);
	codec_time(c, md, "deletionTimestamp", &m->deletion_ms);
	codec_map(c, md, "labels", &m->labels);
	codec_map(c, md, "annotations", &m->annotations);
	m->nfinalizers = codec_strv(c, md, "finalizers", &m->finalizers);
	n = codec_arr_begin(c, md, "ownerReferences", &a, &am);
	if (n)
		m->owners = xcalloc(n, sizeof(*m->owners));
	for (size_t i = 0; i < n; i++) {
		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		dec_owner(c, e, &m->owners[m->nowners++]);
		codec_pop(c, mi);
	}
	codec_pop(c, am);
	codec_pop(c, mark);
}

/* status.conditions: []metav1.Condition (Job conditions read the same). */
void codec_read_conditions(struct codec_ctx *c, const json_t *status,
			   struct conditions *out)
{
	const json_t *a, *e;
	size_t m, mi, n = codec_arr_begin(c, status, "conditions", &a, &m);

	if (n) {
		out->v = xcalloc(n, sizeof(*out->v));
		out->cap = n;
	}
	for (size_t i = 0; i < n; i++) {
		struct condition *x;
		int st = COND_UNKNOWN;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		x = &out->v[out->n++];
		x->type = codec_strdup(c, e, "type");
		codec_enum(c, e, "status", cond_status_tab, &st);
		x->status = (enum cond_status)st;
		x->reason = codec_strdup_empty(c, e, "reason");
		x->message = codec_strdup_empty(c, e, "message");
		codec_time(c, e, "lastTransitionTime", &x->last_transition_ms);
		codec_i64(c, e, "observedGeneration", &x->observed_generation);
		codec_pop(c, mi);
	}
	codec_pop(c, m);
}

/* matchExpressions (label selectors) or a node selector term's
 * expressions (ops adds Gt/Lt). Items with a bad operator are skipped. */
static void dec_exprs(struct codec_ctx *c, const json_t *o, const char *key,
		      const struct codec_enum *ops, struct label_selector *out)
{
	const json_t *a, *e;
	size_t m, mi, n = codec_arr_begin(c, o, key, &a, &m);

	for (size_t i = 0; i < n; i++) {
		const char *k;
		char **vals = NULL;
		size_t nvals;
		int op;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		k = codec_str(c, e, "key");
		nvals = codec_strv(c, e, "values", &vals);
		if (!codec_member(e, "operator")) {
			size_t mo = codec_push_field(c, "operator");

			fe_required(c->fe, c->path.buf, NULL);
			codec_pop(c, mo);
		} else if (codec_enum(c, e, "operator", ops, &op)) {
			label_selector_add(out, k ? k : "", (enum sel_op)op,
					   (const char *const *)vals, nvals);
		}
		svec_free(vals, nvals);
		codec_pop(c, mi);
	}
	codec_pop(c, m);
}

/* metav1.LabelSelector; returns true when present (nil and {} differ). */
bool codec_read_selector(struct codec_ctx *c, const json_t *o, const char *key,
			 struct label_selector *out)
{
	size_t m, ml;
	const json_t *s = codec_enter(c, o, key, &m), *ml_obj;
	const char *k;
	json_t *v;

	if (!s)
		return false;
	ml_obj = codec_enter(c, s, "matchLabels", &ml);
	if (ml_obj) {
		json_object_foreach((json_t *)ml_obj, k, v) {
			size_t mk = codec_push_key(c, k);
			const char *val = codec_v_str(c, NULL, v);

			if (val)
				label_selector_add(out, k, SEL_IN, &val, 1);
			codec_pop(c, mk);
		}
		codec_pop(c, ml);
	}
	dec_exprs(c, s, "matchExpressions", sel_op_tab, out);
	codec_pop(c, m);
	return true;
}

static void dec_toleration(struct codec_ctx *c, const json_t *e,
			   struct toleration *t)
{
	int v;

	t->key = codec_strdup_empty(c, e, "key");
	t->value = codec_strdup_empty(c, e, "value");
	if (codec_enum(c, e, "operator", tol_op_tab, &v))
		t->op = (enum tol_op)v;
	if (codec_enum(c, e, "effect", tol_effect_tab, &v))
		t->effect = (enum taint_effect)v;
	t->has_seconds = codec_i64(c, e, "tolerationSeconds", &t->seconds);
}

size_t codec_read_tolerations(struct codec_ctx *c, const json_t *o,
			      struct toleration **out)
{
	const json_t *a, *e;
	size_t m, mi, k = 0, n = codec_arr_begin(c, o, "tolerations", &a, &m);

	*out = n ? xcalloc(n, sizeof(**out)) : NULL;
	for (size_t i = 0; i < n; i++) {
		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		dec_toleration(c, e, &(*out)[k++]);
		codec_pop(c, mi);
	}
	codec_pop(c, m);
	return k;
}

void codec_read_taint(struct codec_ctx *c, const json_t *e, struct taint *t)
{
	int v;
	int64_t ms;

	t->key = codec_strdup_empty(c, e, "key");
	t->value = codec_strdup_empty(c, e, "value");
	t->effect = EFFECT_NO_SCHEDULE;
	if (!codec_member(e, "effect")) {
		size_t m = codec_push_field(c, "effect");

		fe_required(c->fe, c->path.buf, NULL);
		codec_pop(c, m);
	} else if (codec_enum(c, e, "effect", taint_effect_tab, &v)) {
		t->effect = (enum taint_effect)v;
	}
	if (codec_time(c, e, "timeAdded", &ms))
		t->time_added = codec_strdup(c, e, "timeAdded");
}

/* ------------------------------------------------------------------ */
/* Pod templates */

static size_t dec_containers(struct codec_ctx *c, const json_t *spec,
			     const char *key, bool init,
			     struct container_res **out)
{
	static const struct codec_enum restart_tab[] = {
		{ "Always", 1, false },
		{ NULL, 0, false },
	};
	const json_t *a, *e;
	size_t m, mi, k = 0, n = codec_arr_begin(c, spec, key, &a, &m);

	*out = n ? xcalloc(n, sizeof(**out)) : NULL;
	for (size_t i = 0; i < n; i++) {
		struct container_res *x;
		size_t mr;
		const json_t *res;
		int always = 0;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		x = &(*out)[k++];
		x->name = codec_strdup(c, e, "name");
		res = codec_enter(c, e, "resources", &mr);
		if (res) {
			codec_reslist(c, res, "requests", &x->requests);
			codec_reslist(c, res, "limits", &x->limits);
			codec_pop(c, mr);
		}
		if (init && codec_enum(c, e, "restartPolicy", restart_tab,
				       &always))
			x->sidecar = always == 1;
		codec_pop(c, mi);
	}
	codec_pop(c, m);
	return k;
}

/* requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms */
static void dec_node_terms(struct codec_ctx *c, const json_t *req,
			   struct node_affinity *out)
{
	const json_t *a, *e, *fa;
	size_t mt, mi, mf, n = codec_arr_begin(c, req, "nodeSelectorTerms", &a,
					       &mt);

	out->present = true;
	for (size_t i = 0; i < n; i++) {
		struct node_term *t;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		t = node_affinity_add_term(out);
		dec_exprs(c, e, "matchExpressions", node_op_tab, &t->exprs);
		t->nfields = codec_arr_begin(c, e, "matchFields", &fa, &mf);
		codec_pop(c, mf);
		codec_pop(c, mi);
	}
	codec_pop(c, mt);
}

/* spec.affinity.nodeAffinity's required terms; preferred ones and pod
 * (anti-)affinity do not decide flavors and ride along in raw. */
static void dec_node_affinity(struct codec_ctx *c, const json_t *spec,
			      struct node_affinity *out)
{
	size_t m1, m2, m3;
	const json_t *aff, *na, *req;

	aff = codec_enter(c, spec, "affinity", &m1);
	na = aff ? codec_enter(c, aff, "nodeAffinity", &m2) : NULL;
	req = na ? codec_enter(c, na,
			       "requiredDuringSchedulingIgnoredDuringExecution",
			       &m3) : NULL;
	if (req) {
		dec_node_terms(c, req, out);
		codec_pop(c, m3);
	}
	if (na)
		codec_pop(c, m2);
	if (aff)
		codec_pop(c, m1);
}

/* spec.resourceClaims: name, and the template or claim it comes from. */
static size_t dec_claims(struct codec_ctx *c, const json_t *spec,
			 struct pod_claim **out)
{
	const json_t *a, *e;
	size_t m, mi, k = 0, n = codec_arr_begin(c, spec, "resourceClaims",
						  &a, &m);

	*out = n ? xcalloc(n, sizeof(**out)) : NULL;
	for (size_t i = 0; i < n; i++) {
		struct pod_claim *pc;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		pc = &(*out)[k++];
		pc->name = codec_strdup(c, e, "name");
		pc->template_name =
			codec_strdup(c, e, "resourceClaimTemplateName");
		pc->claim_name = codec_strdup(c, e, "resourceClaimName");
		codec_pop(c, mi);
	}
	codec_pop(c, m);
	return k;
}

static void dec_pod_template(struct codec_ctx *c, const json_t *t,
			     struct pod_template *out)
{
	size_t m, mr;
	const json_t *md, *spec, *res;

	md = codec_enter(c, t, "metadata", &m);
	if (md) {
		codec_map(c, md, "labels", &out->labels);
		codec_map(c, md, "annotations", &out->annotations);
		codec_pop(c, m);
	}
	spec = codec_enter(c, t, "spec", &m);
	if (spec) {
		out->ncontainers = dec_containers(c, spec, "containers", false,
						  &out->containers);
		out->ninit_containers = dec_containers(
			c, spec, "initContainers", true, &out->init_containers);
		codec_reslist(c, spec, "overhead", &out->overhead);
		res = codec_enter(c, spec, "resources", &mr);
		if (res) {
			out->has_pod_resources = true;
			codec_reslist(c, res, "requests", &out->pod_requests);
			codec_reslist(c, res, "limits", &out->pod_limits);
			codec_pop(c, mr);
		}
		codec_map(c, spec, "nodeSelector", &out->node_selector);
		dec_node_affinity(c, spec, &out->affinity);
		out->ntols = codec_read_tolerations(c, spec, &out->tols);
		out->priority_class_name =
			codec_strdup(c, spec, "priorityClassName");
		out->runtime_class_name =
			codec_strdup(c, spec, "runtimeClassName");
		out->nclaims = dec_claims(c, spec, &out->claims);
		codec_pop(c, m);
	}
	out->raw = codec_dump(t);
}

/* A required PodTemplateSpec member: absent is "Required value", null or
 * any other non-object a type error. */
void codec_read_template(struct codec_ctx *c, const json_t *o,
			 struct pod_template *out)
{
	const json_t *t = json_object_get(o, "template");
	size_t m = codec_push_field(c, "template");

	if (!t)
		fe_required(c->fe, c->path.buf, NULL);
	else if (!json_is_object(t))
		codec_bad_type(c, NULL, t, "object");
	else
		dec_pod_template(c, t, out);
	codec_pop(c, m);
}

int codec_decode_pod_template(const json_t *tmpl, const char *path,
			      struct pod_template *out,
			      struct field_errors *fe)
{
	struct codec_ctx c;

	memset(out, 0, sizeof(*out));
	if (codec_begin(&c, tmpl, fe, path, NULL) == 0)
		dec_pod_template(&c, tmpl, out);
	return codec_ctx_finish(&c);
}

/* ------------------------------------------------------------------ */
/* batch/v1 Job */

int codec_decode_job(const json_t *obj, struct job *out,
		     struct field_errors *fe)
{
	struct codec_ctx c;
	size_t m, m2;
	const json_t *spec, *st;
	const char *av;
	int v;

	memset(out, 0, sizeof(*out));
	if (codec_begin(&c, obj, fe, NULL, "Job") != 0)
		return codec_ctx_finish(&c);
	av = codec_str(&c, obj, "apiVersion");
	if (av && strcmp(av, "batch/v1")) {
		static const char *const want[] = { "batch/v1", NULL };

		fe_unsupported(fe, "apiVersion", av, want);
	}
	codec_read_meta(&c, obj, &out->meta);
	spec = codec_enter(&c, obj, "spec", &m);
	if (spec) {
		codec_bool(&c, spec, "suspend", &out->suspend);
		out->has_parallelism = codec_i32(&c, spec, "parallelism",
					     &out->parallelism);
		out->has_completions = codec_i32(&c, spec, "completions",
					     &out->completions);
		if (codec_enum(&c, spec, "completionMode", completion_mode_tab,
			       &v))
			out->indexed = v == 1;
		codec_read_template(&c, spec, &out->tmpl);
		codec_pop(&c, m);
	}
	st = codec_enter(&c, obj, "status", &m);
	if (st) {
		codec_i32(&c, st, "active", &out->active);
		codec_i32(&c, st, "ready", &out->ready);
		codec_i32(&c, st, "succeeded", &out->succeeded);
		{
			const json_t *u = codec_enter(
				&c, st, "uncountedTerminatedPods", &m2);

			if (u) {
				const json_t *arr;
				size_t m3;

				out->uncounted_succeeded =
					(int32_t)codec_arr_begin(&c, u,
								 "succeeded",
								 &arr, &m3);
				codec_pop(&c, m3);
				codec_pop(&c, m2);
			}
		}
		codec_i32(&c, st, "failed", &out->failed);
		codec_time(&c, st, "startTime", &out->start_ms);
		codec_time(&c, st, "completionTime", &out->completion_ms);
		codec_read_conditions(&c, st, &out->conds);
		codec_pop(&c, m);
	}
	return codec_ctx_finish(&c);
}

