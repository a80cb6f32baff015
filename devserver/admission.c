/*
 * admission: kube-apiserver's MutatingAdmissionWebhook and
 * ValidatingAdmissionWebhook plugins (k8s-api.md §11) for the devserver's
 * write path. Reads the Mutating/ValidatingWebhookConfigurations through
 * api_internal_list when their resource changed (struct admission_cache,
 * keyed by store_resource_rv), decides which webhooks apply
 * (apiserver webhook/predicates and generic/webhook.go ShouldCallHook),
 * sends AdmissionReview v1 (or v1beta1) through webhook_client.h and turns
 * the answers into patches, warnings and Status errors worded as
 * apiserver's dispatchers word them.
 *
 * Between calls it owns only the cache, whose mutex (a leaf lock) is
 * held to compare an RV and take or swap a reference; it never holds a
 * lock across a list or a webhook call; every call runs on the writer's
 * thread.
 *
 * Not implemented: reinvocationPolicy IfNeeded (webhooks run once),
 * matchConditions (CEL; a webhook that has them is called as if they
 * held), auditAnnotations (dropped).
 */
#include "devserver/admission.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jx.h"
#include "devserver/api.h"
#include "devserver/convert.h"
#include "devserver/fault.h"
#include "devserver/patch.h"
#include "devserver/registry.h"
#include "devserver/status.h"
#include "devserver/store.h"
#include "devserver/webhook_client.h"
#include "model/selector.h"
#include "model/smap.h"

static const char adm_group[] = "admissionregistration.k8s.io";
static const char default_user[] = "kubernetes-admin";

/* ---- the webhook configurations ---- */

/* One webhook, borrowed from the configurations it came with. */
struct hook {
	const json_t *w;    /* the webhook object */
};

struct hooks {
	json_t *configs; /* owned: the listed configurations */
	struct hook *v;  /* owned; n entries in call order */
	size_t n;
};

static const char *name_of(const json_t *obj)
{
	const char *n = jx_str(json_object_get(obj, "metadata"), "name");

	return n ? n : "";
}

static int by_name(const void *a, const void *b)
{
	return strcmp(name_of(*(json_t *const *)a),
		      name_of(*(json_t *const *)b));
}

enum hook_kind {
	HOOKS_MUTATING,
	HOOKS_VALIDATING,
	HOOKS_KINDS,
};

static const char *const hook_plural[HOOKS_KINDS] = {
	"mutatingwebhookconfigurations",
	"validatingwebhookconfigurations",
};

static const char *const hook_res[HOOKS_KINDS] = {
	"admissionregistration.k8s.io/mutatingwebhookconfigurations",
	"admissionregistration.k8s.io/validatingwebhookconfigurations",
};

/*
 * Invariant: when valid[k], configs[k] is the list of kind k, sorted by
 * name, as it was at store_resource_rv == rv[k] or later (a list taken
 * after the RV was read); a differing RV means reload. The arrays are
 * shared read-only with every admission holding a reference.
 */
struct admission_cache {
	pthread_mutex_t mu;              /* leaf lock */
	bool valid[HOOKS_KINDS];
	uint64_t rv[HOOKS_KINDS];
	json_t *configs[HOOKS_KINDS];    /* owned refs when valid */
};

struct admission_cache *admission_cache_new(void)
{
	struct admission_cache *c = xcalloc(1, sizeof(*c));

	if (pthread_mutex_init(&c->mu, NULL) != 0)
		BUG("admission: mutex init failed");
	return c;
}

void admission_cache_free(struct admission_cache *c)
{
	if (!c)
		return;
	for (int k = 0; k < HOOKS_KINDS; k++)
		json_decref(c->configs[k]);
	pthread_mutex_destroy(&c->mu);
	free(c);
}

/* New reference to the configurations of kind k in name order
 * (apiserver's configuration manager sorts by name), or NULL when the
 * list failed. */
static json_t *configs_list(struct api *api, enum hook_kind k)
{
	struct api_ref ref = { .group = adm_group, .version = "v1",
			       .resource = hook_plural[k] };
	struct api_status st = API_STATUS_INIT;
	json_t *list = NULL, *sorted, **cfg, *c;
	size_t i, n;

	if (api_internal_list(api, &ref, NULL, NULL, &list, NULL, &st) < 0) {
		status_release(&st);
		return NULL;
	}
	n = json_array_size(list);
	cfg = xcalloc(n + 1, sizeof(*cfg));
	json_array_foreach(list, i, c)
		cfg[i] = c;
	qsort(cfg, n, sizeof(*cfg), by_name);
	sorted = json_array();
	for (i = 0; i < n; i++)
		json_array_append(sorted, cfg[i]);
	free(cfg);
	json_decref(list);
	return sorted;
}

/* New reference to the configurations of kind k, from the cache when
 * their resource has not been written since it was filled; NULL when a
 * list failed (not cached). */
static json_t *configs_get(struct api *api, enum hook_kind k)
{
	struct admission_cache *c = api_admission_cache(api);
	uint64_t rv = store_resource_rv(api_store(api), hook_res[k]);
	json_t *configs = NULL, *old = NULL;

	pthread_mutex_lock(&c->mu);
	if (c->valid[k] && c->rv[k] == rv)
		configs = json_incref(c->configs[k]);
	pthread_mutex_unlock(&c->mu);
	if (configs)
		return configs;
	/* Listed after rv was read: at least as new as rv. */
	configs = configs_list(api, k);
	if (!configs)
		return NULL;
	pthread_mutex_lock(&c->mu);
	if (!c->valid[k] || c->rv[k] <= rv) {
		old = c->configs[k];
		c->configs[k] = json_incref(configs);
		c->rv[k] = rv;
		c->valid[k] = true;
	}
	pthread_mutex_unlock(&c->mu);
	json_decref(old);
	return configs;
}

/* Every webhook of the configurations of kind k, configurations in name
 * order and webhooks in list order. A list failure means no webhooks. */
static void hooks_load(struct api *api, enum hook_kind k, struct hooks *h)
{
	json_t *c, *w;
	size_t i, j;

	memset(h, 0, sizeof(*h));
	h->configs = configs_get(api, k);
	json_array_foreach(h->configs, i, c) {
		json_array_foreach(json_object_get(c, "webhooks"), j, w) {
			if (!json_is_object(w))
				continue;
			h->v = xrealloc(h->v, (h->n + 1) * sizeof(*h->v));
			h->v[h->n].w = w;
			h->n++;
		}
	}
}

static void hooks_release(struct hooks *h)
{
	json_decref(h->configs);
	free(h->v);
	memset(h, 0, sizeof(*h));
}

/* ---- the request as the plugins see it (admission.Attributes) ---- */

struct attrs {
	const struct admission_req *req;
	const char *op;     /* "CREATE", "UPDATE", "DELETE" */
	const char *ns;     /* request namespace; a Namespace's own name */
	bool ns_resource;   /* the core "namespaces" resource */
};

static void attrs_init(struct attrs *a, const struct admission_req *req)
{
	const struct rtype *t = req->type;

	a->req = req;
	a->op = req->op == ADMISSION_CREATE ? "CREATE"
		: req->op == ADMISSION_UPDATE ? "UPDATE" : "DELETE";
	a->ns_resource = !*t->group && !strcmp(t->plural, "namespaces");
	/* create.go: "if len(namespace) == 0 && scope.Resource ==
	 * namespaceGVR { namespace = name }"; requestinfo does the same
	 * for the other verbs. */
	a->ns = a->ns_resource ? req->name : req->ns ? req->ns : "";
}

/* rules.IsExemptAdmissionConfigurationResource */
static bool is_exempt(const struct rtype *t)
{
	static const char *const kinds[] = {
		"ValidatingWebhookConfiguration",
		"MutatingWebhookConfiguration",
		"ValidatingAdmissionPolicy",
		"ValidatingAdmissionPolicyBinding",
		"MutatingAdmissionPolicy",
		"MutatingAdmissionPolicyBinding",
		NULL,
	};

	if (strcmp(t->group, adm_group))
		return false;
	for (size_t i = 0; kinds[i]; i++)
		if (!strcmp(t->kind, kinds[i]))
			return true;
	return false;
}

/* ---- matching (webhook/predicates) ---- */

static bool has_or_star(const json_t *list, const char *want)
{
	size_t i;
	json_t *v;

	json_array_foreach(list, i, v) {
		const char *s = json_string_value(v);

		if (s && (!strcmp(s, "*") || !strcmp(s, want)))
			return true;
	}
	return false;
}

/* rules.Matcher: scope, operation, group, version, resource. */
static bool rule_matches(const json_t *rule, const struct attrs *a,
			 const char *version)
{
	const struct rtype *t = a->req->type;
	const char *scope = jx_str(rule, "scope");
	const char *sub = a->req->subresource ? a->req->subresource : "";
	const json_t *res = json_object_get(rule, "resources"), *r;
	size_t i;

	if (scope && strcmp(scope, "*")) {
		bool ok;

		if (!strcmp(scope, "Namespaced"))
			ok = !a->ns_resource && *a->ns;
		else if (!strcmp(scope, "Cluster"))
			ok = a->ns_resource || !*a->ns;
		else
			ok = false;
		if (!ok)
			return false;
	}
	if (!has_or_star(json_object_get(rule, "operations"), a->op) ||
	    !has_or_star(json_object_get(rule, "apiGroups"), t->group) ||
	    !has_or_star(json_object_get(rule, "apiVersions"), version))
		return false;
	json_array_foreach(res, i, r) {
		const char *s = json_string_value(r), *slash;
		size_t rl;
		bool rm, sm;

		if (!s)
			continue;
		slash = strchr(s, '/');
		rl = slash ? (size_t)(slash - s) : strlen(s);
		rm = (rl == 1 && *s == '*') ||
		     (rl == strlen(t->plural) && !strncmp(s, t->plural, rl));
		sm = slash ? (!strcmp(slash + 1, "*") ||
			      !strcmp(slash + 1, sub))
			   : !*sub;
		if (rm && sm)
			return true;
	}
	return false;
}

/* metav1.LabelSelector (JSON) into out. Returns 0, or -1 + err. */
static int selector_from_json(const json_t *j, struct label_selector *out,
			      struct err *err)
{
	const char *k;
	json_t *v, *e;
	size_t i;

	json_object_foreach((json_t *)json_object_get(j, "matchLabels"), k,
			    v) {
		const char *s = json_string_value(v);

		if (!s)
			return err_set(err, "matchLabels[%s] must be a string",
				       k);
		label_selector_add(out, k, SEL_IN, &s, 1);
	}
	json_array_foreach(json_object_get(j, "matchExpressions"), i, e) {
		const char *key = jx_str(e, "key");
		const char *opn = jx_str(e, "operator");
		const json_t *vals = json_object_get(e, "values");
		const char **vs;
		enum sel_op op;
		size_t n = json_array_size(vals), m = 0;

		if (sel_op_parse(opn, false, &op) < 0)
			return err_set(err, "\"%s\" is not a valid label "
				       "selector operator", opn ? opn : "");
		if (!key)
			return err_set(err, "matchExpressions[%zu].key: "
				       "Required value", i);
		vs = xcalloc(n + 1, sizeof(*vs));
		for (size_t x = 0; x < n; x++)
			if (json_string_value(json_array_get(vals, x)))
				vs[m++] = json_string_value(
					json_array_get(vals, x));
		label_selector_add(out, key, op, vs, m);
		free(vs);
	}
	return 0;
}

static void labels_of(const json_t *obj, struct smap *m)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)json_object_get(json_object_get(obj,
		"metadata"), "labels"), k, v)
		if (json_string_value(v))
			smap_set(m, k, json_string_value(v));
}

enum sel_result { SEL_NO, SEL_YES, SEL_ERROR };

/* namespace.Matcher.MatchNamespaceSelector; SEL_ERROR fills st. */
static enum sel_result match_namespace(const struct attrs *a,
				       const json_t *hook, const json_t *obj,
				       struct api_status *st)
{
	const json_t *js = json_object_get(hook, "namespaceSelector");
	struct label_selector sel = LABEL_SELECTOR_INIT;
	struct smap labels = SMAP_INIT;
	struct err err = { "" };
	enum sel_result r;

	if (!*a->ns && !a->ns_resource)
		return SEL_YES; /* cluster-scoped: never exempted */
	if (selector_from_json(js, &sel, &err) < 0) {
		label_selector_release(&sel);
		status_internal(st, err.msg);
		return SEL_ERROR;
	}
	if (!sel.n) {
		label_selector_release(&sel);
		return SEL_YES;
	}
	if (a->ns_resource && !*a->req->subresource &&
	    a->req->op != ADMISSION_DELETE) {
		/* The namespace being written: its own (new) labels. */
		labels_of(obj, &labels);
	} else {
		struct api_ref ref = { .group = "", .version = "v1",
				       .resource = "namespaces",
				       .name = a->ns };
		json_t *ns = api_internal_get(a->req->api, &ref, st);

		if (!ns) {
			label_selector_release(&sel);
			return SEL_ERROR;
		}
		labels_of(ns, &labels);
		json_decref(ns);
	}
	r = label_selector_matches(&sel, &labels) ? SEL_YES : SEL_NO;
	label_selector_release(&sel);
	smap_release(&labels);
	return r;
}

/* object.Matcher.MatchObjectSelector: object or oldObject labels. */
static enum sel_result match_object(const struct attrs *a,
				    const json_t *hook, const json_t *obj,
				    struct api_status *st)
{
	struct label_selector sel = LABEL_SELECTOR_INIT;
	struct err err = { "" };
	enum sel_result r = SEL_NO;
	const json_t *objs[2] = { obj, a->req->old };

	if (selector_from_json(json_object_get(hook, "objectSelector"), &sel,
			       &err) < 0) {
		label_selector_release(&sel);
		status_internal(st, err.msg);
		return SEL_ERROR;
	}
	if (!sel.n) {
		label_selector_release(&sel);
		return SEL_YES;
	}
	for (size_t i = 0; i < 2 && r == SEL_NO; i++) {
		struct smap labels = SMAP_INIT;

		if (!objs[i])
			continue;
		labels_of(objs[i], &labels);
		if (label_selector_matches(&sel, &labels))
			r = SEL_YES;
		smap_release(&labels);
	}
	label_selector_release(&sel);
	return r;
}

/*
 * ShouldCallHook: 1 and *version (the version the webhook is called with,
 * borrowed from the type) when hook applies, 0 when it does not, -1 + st
 * when a selector could not be evaluated for a hook whose rules match.
 * obj is the object in any version (labels only are read).
 */
static int should_call(const struct attrs *a, const json_t *hook,
		       const json_t *obj, const char **version,
		       struct api_status *st)
{
	const struct rtype *t = a->req->type;
	const json_t *rules = json_object_get(hook, "rules"), *r;
	const char *mp = jx_str(hook, "matchPolicy");
	struct api_status ns_err = API_STATUS_INIT, obj_err = API_STATUS_INIT;
	enum sel_result nm, om;
	size_t i;

	*version = NULL;
	nm = match_namespace(a, hook, obj, &ns_err);
	if (nm == SEL_NO)
		return 0;
	om = match_object(a, hook, obj, &obj_err);
	if (om == SEL_NO) {
		status_release(&ns_err);
		return 0;
	}
	json_array_foreach(rules, i, r)
		if (rule_matches(r, a, a->req->version)) {
			*version = a->req->version;
			break;
		}
	/* matchPolicy Equivalent (the v1 default): the same resource in
	 * another served version, earlier rules first. */
	if (!*version && (!mp || !strcmp(mp, "Equivalent"))) {
		json_array_foreach(rules, i, r) {
			for (size_t v = 0; v < t->nversions && !*version; v++) {
				const struct rversion *rv = &t->versions[v];

				if (!rv->served ||
				    !strcmp(rv->name, a->req->version))
					continue;
				if (rule_matches(r, a, rv->name))
					*version = rv->name;
			}
			if (*version)
				break;
		}
	}
	if (!*version) {
		status_release(&ns_err);
		status_release(&obj_err);
		return 0;
	}
	if (status_is_set(&ns_err) || status_is_set(&obj_err)) {
		struct api_status *e = status_is_set(&ns_err) ? &ns_err
							     : &obj_err;

		*st = *e;
		status_init(e);
		status_release(&ns_err);
		status_release(&obj_err);
		return -1;
	}
	return 1;
}

/* ---- the AdmissionReview ---- */

static json_t *gvk(const char *group, const char *version, const char *kind)
{
	return json_pack("{s:s, s:s, s:s}", "group", group, "version", version,
			 "kind", kind);
}

static json_t *gvr(const char *group, const char *version,
		   const char *resource)
{
	return json_pack("{s:s, s:s, s:s}", "group", group, "version", version,
			 "resource", resource);
}

/* CreateOptions / UpdateOptions / DeleteOptions when the writer gave
 * none. */
static json_t *default_options(const struct admission_req *req)
{
	static const char *const kinds[] = {
		[ADMISSION_CREATE] = "CreateOptions",
		[ADMISSION_UPDATE] = "UpdateOptions",
		[ADMISSION_DELETE] = "DeleteOptions",
	};
	json_t *o = json_pack("{s:s, s:s}", "kind", kinds[req->op],
			      "apiVersion", "meta.k8s.io/v1");

	if (req->dry_run)
		json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
	return o;
}

/* CreateV1AdmissionReview: Go's field order and omitempty. */
static json_t *review_new(const struct attrs *a, const char *api_version,
			  const char *uid, const char *version,
			  const json_t *obj, const json_t *old)
{
	const struct admission_req *req = a->req;
	const struct rtype *t = req->type;
	const char *sub = req->subresource ? req->subresource : "";
	const char *user = req->user ? req->user : default_user;
	json_t *r = json_object(), *groups;

	json_object_set_new(r, "uid", json_string(uid));
	json_object_set_new(r, "kind", gvk(t->group, version, t->kind));
	json_object_set_new(r, "resource", gvr(t->group, version, t->plural));
	if (*sub)
		json_object_set_new(r, "subResource", json_string(sub));
	json_object_set_new(r, "requestKind", gvk(t->group, req->version,
						  t->kind));
	json_object_set_new(r, "requestResource", gvr(t->group, req->version,
						      t->plural));
	if (*sub)
		json_object_set_new(r, "requestSubResource", json_string(sub));
	if (req->name && *req->name)
		json_object_set_new(r, "name", json_string(req->name));
	if (*a->ns)
		json_object_set_new(r, "namespace", json_string(a->ns));
	json_object_set_new(r, "operation", json_string(a->op));
	groups = !strcmp(user, default_user)
		? json_pack("[s, s]", "system:masters", "system:authenticated")
		: json_pack("[s]", "system:authenticated");
	json_object_set_new(r, "userInfo", json_pack("{s:s, s:o}", "username",
						     user, "groups", groups));
	json_object_set(r, "object", obj ? (json_t *)obj : json_null());
	json_object_set(r, "oldObject", old ? (json_t *)old : json_null());
	json_object_set_new(r, "dryRun", json_boolean(req->dry_run));
	if (req->options)
		json_object_set(r, "options", (json_t *)req->options);
	else
		json_object_set_new(r, "options", default_options(req));
	return json_pack("{s:s, s:s, s:o}", "kind", "AdmissionReview",
			 "apiVersion", api_version, "request", r);
}

/* ---- the answer (VerifyAdmissionResponse) ---- */

struct answer {
	bool allowed;
	const json_t *status;   /* response.status (borrowed) or NULL */
	const json_t *warnings; /* borrowed array or NULL */
	unsigned char *patch;   /* owned decoded patch, or NULL */
	size_t npatch;
	const char *patch_type; /* borrowed, or NULL */
};

static const char *go_json_type(const json_t *j)
{
	return json_is_string(j) ? "string" : json_is_number(j) ? "number"
		: json_is_boolean(j) ? "bool" : json_is_array(j) ? "array"
		: "object";
}

/*
 * The decoding part of Into(): wrong JSON types where Go has typed
 * fields. Returns 0, or -1 + err (a "failed to call webhook" class).
 */
static int decode_types(const json_t *rev, struct err *err)
{
	static const struct {
		const char *field;
		int type;          /* JSON_STRING, JSON_TRUE (bool), ... */
		const char *go;
	} fields[] = {
		{ "uid", JSON_STRING, "types.UID" },
		{ "allowed", JSON_TRUE, "bool" },
		{ "patch", JSON_STRING, "[]uint8" },
		{ "patchType", JSON_STRING, "v1.PatchType" },
		{ "status", JSON_OBJECT, "v1.Status" },
		{ "warnings", JSON_ARRAY, "[]string" },
		{ "auditAnnotations", JSON_OBJECT, "map[string]string" },
	};
	const json_t *resp = json_object_get(rev, "response"), *v;
	const char *tm[] = { "apiVersion", "kind" };

	for (size_t i = 0; i < 2; i++) {
		v = json_object_get(rev, tm[i]);
		if (v && !json_is_null(v) && !json_is_string(v))
			return err_set(err, "json: cannot unmarshal %s into Go "
				       "struct field AdmissionReview.%s of "
				       "type string", go_json_type(v), tm[i]);
	}
	if (!resp || json_is_null(resp))
		return 0;
	if (!json_is_object(resp))
		return err_set(err, "json: cannot unmarshal %s into Go struct "
			       "field AdmissionReview.response of type "
			       "v1.AdmissionResponse", go_json_type(resp));
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		bool ok;

		v = json_object_get(resp, fields[i].field);
		if (!v || json_is_null(v))
			continue;
		switch (fields[i].type) {
		case JSON_TRUE:
			ok = json_is_boolean(v);
			break;
		default:
			ok = (int)json_typeof(v) == fields[i].type;
			break;
		}
		if (!ok)
			return err_set(err, "json: cannot unmarshal %s into Go "
				       "struct field AdmissionResponse.response."
				       "%s of type %s", go_json_type(v),
				       fields[i].field, fields[i].go);
	}
	v = json_object_get(resp, "warnings");
	for (size_t i = 0; i < json_array_size(v); i++)
		if (!json_is_string(json_array_get(v, i)))
			return err_set(err, "json: cannot unmarshal %s into Go "
				       "struct field AdmissionResponse.response."
				       "warnings of type string",
				       go_json_type(json_array_get(v, i)));
	return 0;
}

enum verdict {
	V_OK,          /* ans is filled */
	V_CALL_FAILED, /* err: "failed to call webhook: ..." */
	V_INVALID,     /* err: "received invalid webhook response: ..." */
};

static enum verdict verify(const json_t *rev, bool v1, const char *uid,
			   bool mutating, struct answer *ans, struct err *err)
{
	const json_t *resp = json_object_get(rev, "response");
	const char *p;
	const json_t *pt;

	memset(ans, 0, sizeof(*ans));
	if (decode_types(rev, err) < 0)
		return V_CALL_FAILED;
	p = jx_str(resp, "patch");
	if (p) {
		ans->patch = webhook_client_base64_decode(p, &ans->npatch, err);
		if (!ans->patch)
			return V_CALL_FAILED;
	}
	if (!json_is_object(resp)) {
		err_set(err, "webhook response was absent");
		goto invalid;
	}
	ans->allowed = json_is_true(json_object_get(resp, "allowed"));
	ans->status = json_is_object(json_object_get(resp, "status"))
		? json_object_get(resp, "status") : NULL;
	ans->warnings = json_object_get(resp, "warnings");
	pt = json_object_get(resp, "patchType");
	if (json_is_null(pt))
		pt = NULL;
	if (!v1) {
		/* v1beta1: no uid, GVK or patchType checks; JSONPatch. */
		if (!mutating)
			FREE_AND_NULL(ans->patch);
		ans->patch_type = ans->patch && ans->npatch ? "JSONPatch"
							    : NULL;
		return V_OK;
	}
	{
		const char *got = jx_str(resp, "uid");
		const char *av = jx_str(rev, "apiVersion");
		const char *kind = jx_str(rev, "kind");
		const char *slash;

		if (strcmp(got ? got : "", uid)) {
			char *q = go_quote(got ? got : "");

			err_set(err, "expected response.uid=\"%s\", got %s",
				uid, q);
			free(q);
			goto invalid;
		}
		av = av ? av : "";
		if (strcmp(av, "admission.k8s.io/v1") ||
		    strcmp(kind ? kind : "", "AdmissionReview")) {
			slash = strchr(av, '/');
			err_set(err, "expected webhook response of "
				"admission.k8s.io/v1, Kind=AdmissionReview, "
				"got %.*s/%s, Kind=%s",
				slash ? (int)(slash - av) : 0, av,
				slash ? slash + 1 : av, kind ? kind : "");
			goto invalid;
		}
	}
	if (mutating) {
		if (ans->npatch && !pt) {
			err_set(err, "webhook returned response.patch but not "
				"response.patchType");
			goto invalid;
		}
		if (pt && !ans->npatch) {
			err_set(err, "webhook returned response.patchType but "
				"not response.patch");
			goto invalid;
		}
		if (pt && !*json_string_value(pt)) {
			err_set(err, "webhook returned invalid "
				"response.patchType of \"\"");
			goto invalid;
		}
		ans->patch_type = pt ? json_string_value(pt) : NULL;
	} else {
		if (ans->npatch) {
			err_set(err, "validating webhook may not return "
				"response.patch");
			goto invalid;
		}
		if (pt) {
			err_set(err, "validating webhook may not return "
				"response.patchType");
			goto invalid;
		}
	}
	return V_OK;
invalid:
	FREE_AND_NULL(ans->patch);
	return V_INVALID;
}

/* ---- outcomes ---- */

/* Records st unless it already holds a failure; takes message and
 * details. */
static int set_status(struct api_status *st, int code, const char *reason,
		      char *message, json_t *details)
{
	if (status_is_set(st)) {
		free(message);
		json_decref(details);
		return -1;
	}
	st->code = code;
	snprintf(st->reason, sizeof(st->reason), "%s", reason ? reason : "");
	st->message = message;
	st->details = details;
	return -1;
}

/* webhookerrors.ToStatusErr: the webhook's own Status, code >= 400. */
static int denied(const char *hook, const json_t *s, struct api_status *st)
{
	const char *msg = jx_str(s, "message"), *reason = jx_str(s, "reason");
	json_int_t code = json_integer_value(json_object_get(s, "code"));
	const json_t *det = json_object_get(s, "details");
	char *m;

	if (msg && *msg)
		m = xasprintf("admission webhook \"%s\" denied the request: %s",
			      hook, msg);
	else if (reason && *reason)
		m = xasprintf("admission webhook \"%s\" denied the request: %s",
			      hook, reason);
	else
		m = xasprintf("admission webhook \"%s\" denied the request "
			      "without explanation", hook);
	return set_status(st, code < 400 || code > 599 ? 400 : (int)code,
			  reason, m, json_is_object(det)
			  ? json_deep_copy(det) : NULL);
}

/* apierrors.NewInternalError of an ErrCallingWebhook. */
static int call_failed(const char *hook, const char *what, const char *why,
		       struct api_status *st)
{
	char *e = xasprintf("failed calling webhook \"%s\": %s%s", hook, what,
			    why);

	set_status(st, 500, "InternalError",
		   xasprintf("Internal error occurred: %s", e),
		   json_pack("{s:[{s:s}]}", "causes", "message", e));
	free(e);
	return -1;
}

static int internal(struct api_status *st, char *msg)
{
	set_status(st, 500, "InternalError",
		   xasprintf("Internal error occurred: %s", msg),
		   json_pack("{s:[{s:s}]}", "causes", "message", msg));
	free(msg);
	return -1;
}

static void add_warnings(const struct admission_req *req, const json_t *w)
{
	size_t i, j;
	json_t *v, *have;

	if (!req->warnings)
		return;
	json_array_foreach(w, i, v) {
		bool dup = false;

		if (!json_string_value(v) || !*json_string_value(v))
			continue;
		json_array_foreach(req->warnings, j, have)
			if (json_equal(have, v))
				dup = true;
		if (!dup)
			json_array_append(req->warnings, v);
	}
}

/* The first AdmissionReview version the webhook accepts, or NULL. */
static const char *review_version(const json_t *hook)
{
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(hook, "admissionReviewVersions"),
			   i, v) {
		const char *s = json_string_value(v);

		if (s && !strcmp(s, "v1"))
			return "admission.k8s.io/v1";
		if (s && !strcmp(s, "v1beta1"))
			return "admission.k8s.io/v1beta1";
	}
	return NULL;
}

/*
 * Calls one webhook with the object and old object in version (both
 * borrowed, either may be NULL). A mutating webhook's patch result goes
 * to *patched (new; NULL when nothing changed). Returns 0 (allowed, or a
 * call failure under failurePolicy Ignore), or -1 + st.
 */
static int call_hook(const struct attrs *a, const json_t *hook,
		     const char *version, const json_t *obj, const json_t *old,
		     bool mutating, json_t **patched, struct api_status *st)
{
	const char *name = jx_str(hook, "name") ? jx_str(hook, "name") : "";
	const char *fp = jx_str(hook, "failurePolicy");
	const char *se = jx_str(hook, "sideEffects");
	const char *rv = review_version(hook);
	const json_t *to = json_object_get(hook, "timeoutSeconds");
	bool ignore = fp && !strcmp(fp, "Ignore");
	struct webhook_call call = { 0 };
	struct err err = { "" };
	struct answer ans = { 0 };
	json_t *review = NULL, *resp = NULL, *ops = NULL;
	char uid[37];
	int rc = -1;

	if (patched)
		*patched = NULL;
	if (a->req->dry_run) {
		if (!se) {
			rc = ignore ? 0 : call_failed(name, "",
				"Webhook SideEffects is nil", st);
			goto out;
		}
		if (strcmp(se, "None") && strcmp(se, "NoneOnDryRun")) {
			status_bad_request(st, "admission webhook \"%s\" does "
					   "not support dry run", name);
			goto out;
		}
	}
	if (!rv) {
		rc = ignore ? 0 : call_failed(name, "could not create "
			"admission objects: ", "webhook does not accept known "
			"AdmissionReview versions (v1, v1beta1)", st);
		goto out;
	}
	webhook_client_uuid(uid);
	review = review_new(a, rv, uid, version, obj, old);
	call.client_config = json_object_get(hook, "clientConfig");
	call.timeout_s = json_is_integer(to) ? (int)json_integer_value(to) : 10;
	if (call.timeout_s < 1 || call.timeout_s > 30)
		call.timeout_s = call.timeout_s < 1 ? 1 : 30;
	call.inject_timeout = fault_hit(api_faults(a->req->api),
					FAULT_WEBHOOK_TIMEOUT);
	resp = webhook_client_post(a->req->api, &call, review, &err);
	if (!resp) {
		rc = ignore ? 0 : call_failed(name,
			call.fail == WEBHOOK_FAIL_CLIENT
			? "could not get REST client: "
			: "failed to call webhook: ", err.msg, st);
		goto out;
	}
	switch (verify(resp, !strcmp(rv, "admission.k8s.io/v1"), uid,
		       mutating, &ans, &err)) {
	case V_OK:
		break;
	case V_CALL_FAILED:
		rc = ignore ? 0 : call_failed(name, "failed to call webhook: ",
					      err.msg, st);
		goto out;
	case V_INVALID:
		rc = ignore ? 0 : call_failed(name, "received invalid webhook "
					      "response: ", err.msg, st);
		goto out;
	}
	add_warnings(a->req, ans.warnings);
	if (!ans.allowed) {
		denied(name, ans.status, st);
		goto out;
	}
	rc = 0;
	if (!mutating || !ans.npatch)
		goto out;
	/* jsonpatch.DecodePatch, then apply: internal errors whatever
	 * the failurePolicy. */
	{
		json_error_t je;

		ops = json_loadb((const char *)ans.patch, ans.npatch,
				 JSON_DECODE_ANY, &je);
		if (!ops) {
			rc = internal(st, xstrdup(je.text));
			goto out;
		}
		if (!json_is_array(ops)) {
			rc = internal(st, xasprintf("json: cannot unmarshal %s "
				"into Go value of type jsonpatch.Patch",
				go_json_type(ops)));
			goto out;
		}
	}
	if (!json_array_size(ops))
		goto out;
	if (!obj) {
		rc = internal(st, xasprintf("admission webhook \"%s\" "
			"attempted to modify the object, which is not "
			"supported for this operation", name));
		goto out;
	}
	if (strcmp(ans.patch_type, "JSONPatch")) {
		char *q = go_quote(ans.patch_type);

		rc = ignore ? 0 : call_failed(name, "unsupported patch type ",
					      q, st);
		free(q);
		goto out;
	}
	*patched = patch_json(obj, ops, &err);
	if (!*patched) {
		rc = internal(st, xstrdup(err.msg[0] ? err.msg
			: "the JSON patch does not apply"));
		goto out;
	}
	if (!json_is_object(*patched)) {
		json_decref(*patched);
		*patched = NULL;
		rc = internal(st, xstrdup("the patched object is not a JSON "
					  "object"));
		goto out;
	}
out:
	free(ans.patch);
	json_decref(ops);
	json_decref(resp);
	json_decref(review);
	return rc;
}

/* obj (borrowed) in version, as a new reference; NULL + st. */
static json_t *in_version(const struct admission_req *req, const json_t *obj,
			  const char *version, struct api_status *st)
{
	return convert_object(req->api, req->type, obj, version, st);
}

/*
 * The mutating webhooks in order, each seeing the previous one's result.
 * objp is NULL for DELETE (webhooks see oldObject only); otherwise *objp
 * is replaced when a webhook patched it.
 */
static int run_mutating(const struct admission_req *req, json_t **objp,
			struct api_status *st)
{
	struct attrs a;
	struct hooks h;
	json_t *cur = objp ? json_incref(*objp) : NULL;
	bool changed = false;
	int rc = -1;

	attrs_init(&a, req);
	hooks_load(req->api, HOOKS_MUTATING, &h);
	for (size_t i = 0; i < h.n; i++) {
		const char *version;
		json_t *vobj = NULL, *vold = NULL, *patched = NULL;
		int call;

		call = should_call(&a, h.v[i].w, cur, &version, st);
		if (call < 0)
			goto out;
		if (!call)
			continue;
		if (cur && !(vobj = in_version(req, cur, version, st)))
			goto out;
		if (req->old && !(vold = in_version(req, req->old, version,
						    st))) {
			json_decref(vobj);
			goto out;
		}
		call = call_hook(&a, h.v[i].w, version, vobj, vold, true,
				 &patched, st);
		json_decref(vobj);
		json_decref(vold);
		if (call < 0)
			goto out;
		if (patched) {
			json_decref(cur);
			cur = patched;
			changed = true;
		}
	}
	if (changed) {
		json_t *back = in_version(req, cur, req->version, st);

		if (!back)
			goto out;
		json_decref(*objp);
		/* The caller modifies it: never hand out shared structure. */
		*objp = json_deep_copy(back);
		json_decref(back);
	}
	rc = 0;
out:
	json_decref(cur);
	hooks_release(&h);
	return rc;
}

/* The validating webhooks: every match is called (the real server calls
 * them in parallel); the first failure in call order is the answer. */
static int run_validating(const struct admission_req *req, const json_t *obj,
			  struct api_status *st)
{
	struct attrs a;
	struct hooks h;
	const char **versions;
	int rc = 0;

	attrs_init(&a, req);
	hooks_load(req->api, HOOKS_VALIDATING, &h);
	versions = xcalloc(h.n + 1, sizeof(*versions));
	/* Matching errors end the request before any call. */
	for (size_t i = 0; i < h.n; i++)
		if (should_call(&a, h.v[i].w, obj, &versions[i], st) < 0) {
			rc = -1;
			goto out;
		}
	for (size_t i = 0; i < h.n; i++) {
		struct api_status one = API_STATUS_INIT;
		json_t *vobj = NULL, *vold = NULL;

		if (!versions[i])
			continue;
		if (obj && !(vobj = in_version(req, obj, versions[i], &one)))
			goto failed;
		if (req->old && !(vold = in_version(req, req->old, versions[i],
						    &one)))
			goto failed;
		if (call_hook(&a, h.v[i].w, versions[i], vobj, vold, false,
			      NULL, &one) == 0)
			goto next;
failed:
		if (!rc) {
			*st = one;
			status_init(&one);
			rc = -1;
		}
next:
		status_release(&one);
		json_decref(vobj);
		json_decref(vold);
	}
out:
	free(versions);
	hooks_release(&h);
	return rc;
}

int admission_mutate(const struct admission_req *req, json_t **obj,
		     struct api_status *st)
{
	if (is_exempt(req->type))
		return 0;
	return run_mutating(req, req->op == ADMISSION_DELETE ? NULL : obj,
			    st);
}

int admission_validate(const struct admission_req *req, const json_t *obj,
		       struct api_status *st)
{
	if (is_exempt(req->type))
		return 0;
	/* DELETE has no separate mutating seam: apiserver runs the
	 * mutating webhooks (object null, oldObject set) and then the
	 * validating ones in the same delete validation step. */
	if (req->op == ADMISSION_DELETE && run_mutating(req, NULL, st) < 0)
		return -1;
	return run_validating(req, obj, st);
}
