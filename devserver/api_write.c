/*
 * api_write: the one write path of the devserver, shared by POST, PUT,
 * PATCH, DELETE, deletecollection and the internal API (api.h), in the
 * order kube-apiserver runs it (handlers/create.go, update.go, patch.go
 * and registry/generic/registry/store.go):
 *
 *   1. decode    body -> object; apiVersion and kind must match the URL
 *   2. default   built-in Go defaults, CRD structural defaults
 *   3. prune     fields the schema does not declare (fieldValidation:
 *                Strict -> 400, Warn -> Warning headers, Ignore)
 *   4. mutating admission                          (admission.h seam)
 *      and default + prune again over its result
 *   5. prepare   system fields: create -> name from generateName, uid,
 *                creationTimestamp, generation 1, status dropped/reset;
 *                update -> server-owned metadata kept, status (or spec)
 *                split of the subresource, generation bump for spec
 *                changes; then the built-in strategy hook
 *   6. validate  metadata, built-in rules, CRD schema -> 422 Invalid
 *   7. validating admission                        (admission.h seam)
 *   8. convert to the storage version (convert.h seam) and store, unless
 *      dryRun; an object being deleted whose last finalizer went away is
 *      removed instead of stored
 *   9. answer in the request version
 *
 * Deletion (api_write_delete) checks preconditions, runs validating
 * admission, then either marks the object (finalizers: deletionTimestamp,
 * deletionGracePeriodSeconds 0, generation + 1) or removes it.
 * Removing a CRD also removes every object of its type and republishes
 * the registry, as do all CRD writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "devserver/admission.h"
#include "base/jx.h"
#include "devserver/api_int.h"
#include "devserver/builtin.h"
#include "devserver/convert.h"
#include "devserver/http.h"
#include "devserver/managed.h"
#include "devserver/patch.h"
#include "devserver/schema.h"
#include "devserver/store.h"
#include "model/names.h"
#include "model/timestamp.h"

#define RETRIES 8
#define ANNOTATIONS_MAX 262144

static const char crd_kind[] = "CustomResourceDefinition";

/* ---- helpers ---- */

static json_t *meta(json_t *obj)
{
	json_t *m = json_object_get(obj, "metadata");

	if (!json_is_object(m)) {
		m = json_object();
		json_object_set_new(obj, "metadata", m);
	}
	return m;
}

static bool has_generation(const struct rtype *t)
{
	return !t->bi || (t->bi->flags & BI_GENERATION);
}

static bool is_crd(const struct rtype *t)
{
	return t->bi && !strcmp(t->kind, crd_kind);
}

static bool is_namespace(const struct rtype *t)
{
	return t->bi && (t->bi->flags & BI_FINALIZE);
}

static bool status_reset(const struct rtype *t)
{
	return t->bi && (t->bi->flags & BI_STATUS_RESET);
}

static void set_or_del(json_t *obj, const char *key, json_t *val)
{
	if (val)
		json_object_set(obj, key, val);
	else
		json_object_del(obj, key);
}

static int store_failed(struct op *op, enum store_rc rc, const char *name,
			struct api_status *st)
{
	const struct rtype *t = op->type;

	switch (rc) {
	case STORE_EXISTS:
		return status_already_exists(st, t->group, t->plural, name);
	case STORE_NOT_FOUND:
		return status_not_found(st, t->group, t->plural, name);
	case STORE_CONFLICT:
		return status_conflict(st, t->group, t->plural, name);
	default:
		return status_internal(st, "the object could not be stored");
	}
}

/* options: what kube-apiserver hands admission as request.options:
 * CreateOptions for a create (an apply that creates included, as
 * patchToCreateOptions does), UpdateOptions for PUT and PATCH
 * (patchToUpdateOptions), DeleteOptions for a delete. */
static struct admission_req adm_req(struct op *op, enum admission_op aop,
				    const char *name, const json_t *old,
				    const json_t *options)
{
	struct admission_req r = {
		.api = op->api, .type = op->type, .version = op->ver->name,
		.subresource = op->sub, .op = aop, .ns = op->ns,
		.name = name ? name : "", .old = old, .options = options,
		.user = op->user, .dry_run = op->dry_run,
		.warnings = op->warnings,
	};

	return r;
}

/* DeleteOptions for admission: as sent, or (internal deletes) built
 * from d. New reference. */
static json_t *delete_options(const struct op *op,
			      const struct delete_opts *d)
{
	json_t *o;

	if (d->options)
		return json_incref((json_t *)d->options);
	o = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion",
		      "meta.k8s.io/v1");
	if (d->pre_uid || d->pre_rv) {
		json_t *p = json_object();

		if (d->pre_uid)
			json_object_set_new(p, "uid", json_string(d->pre_uid));
		if (d->pre_rv)
			json_object_set_new(p, "resourceVersion",
					    json_string(d->pre_rv));
		json_object_set_new(o, "preconditions", p);
	}
	if (d->propagation)
		json_object_set_new(o, "propagationPolicy",
				    json_string(d->propagation));
	if (op->dry_run)
		json_object_set_new(o, "dryRun", json_pack("[s]", "All"));
	return o;
}

/* ---- step 1: decode (the body itself is parsed in api.c) ---- */

static int check_type_meta(struct op *op, const json_t *obj,
			   struct api_status *st)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	char want[300];

	api_op_version(op, want, sizeof(want));
	if (!json_is_object(obj))
		return status_bad_request(st, "the body must be a JSON object");
	if (!kind || !*kind)
		return status_bad_request(st, "Object 'Kind' is missing in "
					  "the request body");
	if (!av || !*av)
		return status_bad_request(st, "Object 'apiVersion' is missing "
					  "in the request body");
	if (strcmp(av, want))
		return status_bad_request(st, "the API version in the data "
			"(%s) does not match the expected API version (%s)",
			av, want);
	if (strcmp(kind, op->type->kind))
		return status_bad_request(st, "the kind in the data (%s) does "
			"not match the expected kind (%s)", kind,
			op->type->kind);
	return 0;
}

/* ---- steps 2 and 3: defaults, pruning ---- */

static void apply_defaults(struct op *op, json_t *obj)
{
	if (op->type->bi && op->type->bi->defaults)
		op->type->bi->defaults(obj);
	if (op->ver->schema)
		schema_default(obj, op->ver->schema);
}

static int apply_prune(struct op *op, json_t *obj, bool report,
		       struct api_status *st)
{
	json_t *unknown;
	char msg[1500];
	size_t o = 0, i;
	json_t *p;

	if (!op->ver->schema)
		return 0;
	unknown = report && op->fv != FV_IGNORE ? json_array() : NULL;
	schema_prune(obj, op->ver->schema, unknown);
	if (!json_array_size(unknown)) {
		json_decref(unknown);
		return 0;
	}
	if (op->fv == FV_WARN) {
		json_array_foreach(unknown, i, p)
			api_op_warn(op, "unknown field \"%s\"", json_string_value(p));
		json_decref(unknown);
		return 0;
	}
	msg[0] = '\0';
	json_array_foreach(unknown, i, p) {
		int n = snprintf(msg + o, sizeof(msg) - o,
				 "%sunknown field \"%s\"", i ? ", " : "",
				 json_string_value(p));

		if (n < 0 || (size_t)n >= sizeof(msg) - o)
			break;
		o += (size_t)n;
	}
	json_decref(unknown);
	return status_bad_request(st, "%s in version \"%s\" cannot be handled "
				  "as a %s: strict decoding error: %s",
				  op->type->kind, op->ver->name,
				  op->type->kind, msg);
}

/* ---- step 6: validation ---- */

static void validate_labels(const json_t *m, struct field_errors *fe)
{
	const char *k;
	json_t *v;
	size_t total = 0;

	json_object_foreach(json_object_get(m, "labels"), k, v) {
		check_qualified_name(fe, "metadata.labels", k);
		if (!json_is_string(v))
			fe_invalid(fe, "metadata.labels", k,
				   "label values must be strings");
		else
			check_label_value(fe, "metadata.labels",
					  json_string_value(v));
	}
	json_object_foreach(json_object_get(m, "annotations"), k, v) {
		check_qualified_name(fe, "metadata.annotations", k);
		total += strlen(k) + (json_is_string(v)
				      ? strlen(json_string_value(v)) : 0);
	}
	if (total > ANNOTATIONS_MAX)
		fe_too_long(fe, "metadata.annotations", ANNOTATIONS_MAX);
}

static void validate_owners(const json_t *m, struct field_errors *fe)
{
	const json_t *refs = json_object_get(m, "ownerReferences"), *r;
	size_t i, controllers = 0;

	json_array_foreach(refs, i, r) {
		static const char *const req[] = { "apiVersion", "kind", "name",
						   "uid" };
		char p[96];

		for (size_t k = 0; k < 4; k++) {
			const char *v = json_string_value(json_object_get(r,
								  req[k]));

			snprintf(p, sizeof(p), "metadata.ownerReferences.%s",
				 req[k]);
			if (!v || !*v)
				fe_invalid(fe, p, "", k == 3
					   ? "uid must not be empty"
					   : "must not be empty");
		}
		if (json_is_true(json_object_get(r, "controller")))
			controllers++;
	}
	if (controllers > 1)
		fe_invalid(fe, "metadata.ownerReferences", "[...]",
			   "Only one reference can have Controller set to "
			   "true");
}

static void validate_finalizers(const json_t *m, const json_t *old,
				struct field_errors *fe)
{
	const json_t *fins = json_object_get(m, "finalizers"), *f;
	const json_t *ofins = json_object_get(json_object_get(old, "metadata"),
					      "finalizers");
	bool deleting = old && jx_meta_str(old, "deletionTimestamp");
	char added[512] = "";
	size_t i, o = 0;

	json_array_foreach(fins, i, f) {
		const char *s = json_string_value(f);
		bool had = false;
		size_t j;
		json_t *g;
		char p[64];

		snprintf(p, sizeof(p), "metadata.finalizers[%zu]", i);
		if (!s) {
			fe_invalid(fe, p, "", "must be a string");
			continue;
		}
		check_qualified_name(fe, p, s);
		if (!deleting)
			continue;
		json_array_foreach(ofins, j, g)
			if (json_string_value(g) &&
			    !strcmp(json_string_value(g), s))
				had = true;
		if (!had && o < sizeof(added))
			o += (size_t)snprintf(added + o, sizeof(added) - o,
					      "%s\"%s\"", o ? ", " : "", s);
	}
	if (o)
		fe_add(fe, FE_FORBIDDEN, "metadata.finalizers", NULL, false,
		       "no new finalizers can be added if the object is being "
		       "deleted, found new finalizers []string{%s}", added);
}

static int validate_all(struct op *op, const json_t *obj, const json_t *old,
			struct api_status *st)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	const json_t *m = json_object_get(obj, "metadata");
	const char *name = jx_meta_str(obj, "name");

	if (!old) {
		if (!name || !*name)
			fe_required(&fe, "metadata.name",
				    "name or generateName is required");
		else if (op->type->bi &&
			 (op->type->bi->flags & BI_NAME_LABEL))
			check_dns1123_label(&fe, "metadata.name", name);
		else
			check_dns1123_subdomain(&fe, "metadata.name", name);
	}
	validate_labels(m, &fe);
	validate_owners(m, &fe);
	validate_finalizers(m, old, &fe);
	if (op->type->bi && op->type->bi->validate)
		op->type->bi->validate(obj, old, &fe);
	if (op->ver->schema)
		schema_validate_update(obj, old, op->ver->schema, &fe);
	if (fe.n) {
		status_invalid(st, op->type->group, op->type->kind,
			       name ? name : "", &fe);
		field_errors_release(&fe);
		return -1;
	}
	return 0;
}

/* ---- step 8: storage ---- */

/* After the object of a CRD is gone: remove every object of its type
 * (the customresourcecleanup finalizer's work, done at once). */
static void crd_cleanup(struct op *op, const json_t *crd)
{
	const json_t *spec = json_object_get(crd, "spec");
	const char *g = json_string_value(json_object_get(spec, "group"));
	const char *p = json_string_value(json_object_get(
		json_object_get(spec, "names"), "plural"));
	struct store_list_opts o = { 0 };
	struct store_list_result r;
	char *key;
	size_t i;
	json_t *obj;

	if (!g || !p)
		return;
	key = xasprintf("%s/%s", g, p);
	store_list(op->api->store, key, &o, &r);
	json_array_foreach(r.items, i, obj) {
		const char *ns = jx_meta_str(obj, "namespace");

		store_delete(op->api->store, key, ns ? ns : "",
			     jx_meta_str(obj, "name"), 0, NULL);
	}
	store_list_result_release(&r);
	free(key);
}

static void after_write(struct op *op)
{
	if (is_crd(op->type) && !op->dry_run)
		registry_rebuild(op->api->reg, op->api->store);
}

/* Converts obj (request version, taken) to the storage version. */
static json_t *to_storage(struct op *op, json_t *obj, struct api_status *st)
{
	json_t *s = convert_object(op->api, op->type, obj,
				   rtype_storage(op->type)->name, st);

	json_decref(obj);
	return s;
}

/* Stored object -> answer in the request version. */
static int answer(struct op *op, json_t *stored, json_t **out,
		  struct api_status *st)
{
	json_t *o = api_read_render_object(op, stored, st);

	json_decref(stored);
	if (!o)
		return -1;
	*out = o;
	return 0;
}


/* ---- managedFields (managed.h) ---- */

/* How a write's managedFields come about. */
enum mf_mode {
	MF_UPDATE, /* the bookkeeping of a create, update or patch */
	MF_KEEP,   /* an apply computed them already */
};

/*
 * The bookkeeping request of op. The manager is ?fieldManager, else the
 * User-Agent's prefix (kube-apiserver's managerOrUserAgent), else, for
 * the internal API, the caller's user; *owned receives what must be
 * freed after.
 */
static void mf_req(const struct op *op, struct managed_req *r, char *av,
		   size_t n, char **owned)
{
	const char *mgr = op->field_manager;

	*owned = NULL;
	if (!mgr && op->req)
		mgr = *owned = managed_manager_from_agent(
			http_header(op->req, "User-Agent"));
	if (!mgr)
		mgr = op->user ? op->user : "";
	*r = (struct managed_req){
		.manager = mgr,
		.api_version = api_op_version(op, av, n),
		.subresource = op->sub,
		.schema = op->type->bi ? NULL : op->ver->schema,
		.keys = op->type->bi ? smp_builtin_keys : NULL,
		.has_status = op->ver->status,
		.now_ms = op->now_ms,
	};
}

/* The Update bookkeeping of obj over live (NULL: a create). Untracked
 * writes (--preload) leave what live had. */
static void mf_update(const struct op *op, const json_t *live, json_t *obj)
{
	struct managed_req r;
	char av[256], *owned;

	if (op->untracked) {
		set_or_del(meta(obj), "managedFields",
			   json_object_get(json_object_get(live, "metadata"),
					   "managedFields"));
		return;
	}
	mf_req(op, &r, av, sizeof(av), &owned);
	managed_update(&r, live, obj);
	free(owned);
}

/* ---- create ---- */

static int check_namespace(struct op *op, const char *name,
			   struct api_status *st)
{
	json_t *ns;
	bool terminating;

	if (!op->type->namespaced)
		return 0;
	ns = store_get(op->api->store, "/namespaces", "", op->ns);
	if (!ns)
		return status_not_found(st, "", "namespaces", op->ns);
	terminating = jx_meta_str(ns, "deletionTimestamp") != NULL;
	json_decref(ns);
	if (terminating) {
		char *d = xasprintf("unable to create new content in namespace "
				    "%s because it is being terminated", op->ns);

		status_forbidden(st, op->type->group, op->type->plural,
				 name ? name : "", d);
		free(d);
		return -1;
	}
	return 0;
}

/* Step 5 for a create. */
static int prepare_create(struct op *op, json_t *obj, struct api_status *st)
{
	json_t *m = meta(obj);
	const char *bns = json_string_value(json_object_get(m, "namespace"));
	const char *name = json_string_value(json_object_get(m, "name"));
	const char *gen = json_string_value(json_object_get(m, "generateName"));
	char uid[37], ts[TIMESTAMP_BUF];

	if (op->type->namespaced) {
		if (bns && *bns && strcmp(bns, op->ns))
			return status_bad_request(st, "the namespace of the "
				"provided object does not match the namespace "
				"sent on the request");
		json_object_set_new(m, "namespace", json_string(op->ns));
	} else {
		json_object_del(m, "namespace");
	}
	if (json_object_get(m, "resourceVersion"))
		return status_bad_request(st, "resourceVersion should not be "
					  "set on objects to be created");
	if ((!name || !*name) && gen && *gen) {
		char base[64], full[128], sfx[6];

		snprintf(base, sizeof(base), "%.58s", gen);
		for (int i = 0; i < RETRIES; i++) {
			json_t *clash;

			api_name_suffix(sfx);
			snprintf(full, sizeof(full), "%s%s", base, sfx);
			clash = store_get(op->api->store, op->type->key,
					  op->ns, full);
			json_decref(clash);
			if (!clash)
				break;
		}
		json_object_set_new(m, "name", json_string(full));
	}
	api_uuid(uid);
	json_object_set_new(m, "uid", json_string(uid));
	timestamp_format(op->now_ms, ts, sizeof(ts));
	json_object_set_new(m, "creationTimestamp", json_string(ts));
	if (has_generation(op->type))
		json_object_set_new(m, "generation", json_integer(1));
	else
		json_object_del(m, "generation");
	json_object_del(m, "deletionTimestamp");
	json_object_del(m, "deletionGracePeriodSeconds");
	json_object_del(m, "selfLink");
	if (op->ver->status) {
		if (status_reset(op->type))
			json_object_set_new(obj, "status", json_object());
		else
			json_object_del(obj, "status");
	}
	if (op->type->bi && op->type->bi->prepare)
		op->type->bi->prepare(obj, NULL, op->now_ms);
	return 0;
}

/* The create of obj (taken); mf: how its managedFields come about. */
static int create_obj(struct op *op, json_t *obj, enum mf_mode mf,
		      json_t **out, struct api_status *st)
{
	struct admission_req ar;
	json_t *stored = NULL, *sobj, *opts = api_op_options(op, "CreateOptions");
	enum store_rc rc;
	const char *name;

	/* 1. decode */
	if (check_type_meta(op, obj, st) < 0)
		goto fail;
	name = jx_meta_str(obj, "name");
	if (check_namespace(op, name, st) < 0)
		goto fail;
	/* 2-3. defaults, pruning */
	apply_defaults(op, obj);
	if (apply_prune(op, obj, true, st) < 0)
		goto fail;
	/* field ownership, before admission as kube's create handler does
	 * it (what webhooks change is nobody's) */
	if (mf == MF_UPDATE)
		mf_update(op, NULL, obj);
	/* 4. mutating admission: metadata.name and request.name are still
	 * empty under generateName, as in kube-apiserver, where the generic
	 * store's create() makes the name up after the mutating webhooks */
	ar = adm_req(op, ADMISSION_CREATE, name, NULL, opts);
	if (admission_mutate(&ar, &obj, st) < 0)
		goto fail;
	apply_defaults(op, obj);
	apply_prune(op, obj, false, st);
	/* 5. prepare */
	if (prepare_create(op, obj, st) < 0)
		goto fail;
	name = jx_meta_str(obj, "name");
	/* 6. validate */
	if (validate_all(op, obj, NULL, st) < 0)
		goto fail;
	/* 7. validating admission: the generated name is in the object and
	 * in request.name (AdmissionToValidateObjectFunc takes it from the
	 * object when the request had none) */
	ar = adm_req(op, ADMISSION_CREATE, name, NULL, opts);
	if (admission_validate(&ar, obj, st) < 0)
		goto fail;
	json_decref(opts);
	opts = NULL;
	if (op->dry_run) {
		/* kube-apiserver's dry-run storage answers a create over an
		 * existing name as the real one would: AlreadyExists */
		json_t *cur = name ? store_get(op->api->store, op->type->key,
					       op->ns, name)
				   : NULL;

		if (cur) {
			json_decref(cur);
			store_failed(op, STORE_EXISTS, name, st);
			goto fail;
		}
		*out = obj;
		return 0;
	}
	/* 8. convert and store */
	{
		char *n = xstrdup(name);

		sobj = to_storage(op, obj, st);
		obj = NULL;
		if (!sobj) {
			free(n);
			goto fail;
		}
		rc = store_create(op->api->store, op->type->key, op->ns, n,
				  sobj, &stored);
		if (rc != STORE_OK) {
			store_failed(op, rc, n, st);
			free(n);
			goto fail;
		}
		free(n);
	}
	after_write(op);
	/* 9. answer */
	return answer(op, stored, out, st);
fail:
	json_decref(opts);
	json_decref(obj);
	return -1;
}

int api_write_create(struct op *op, json_t *obj, json_t **out,
		     struct api_status *st)
{
	return create_obj(op, obj, MF_UPDATE, out, st);
}

/* ---- update ---- */

/* True when obj and old differ outside metadata (and status, when it has
 * its own subresource): what bumps metadata.generation. */
static bool spec_changed(const json_t *obj, const json_t *old, bool status)
{
	json_t *a = json_copy((json_t *)obj), *b = json_copy((json_t *)old);
	bool eq;

	json_object_del(a, "metadata");
	json_object_del(b, "metadata");
	if (status) {
		json_object_del(a, "status");
		json_object_del(b, "status");
	}
	eq = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return !eq;
}

/* Step 5 for an update; may replace *objp (subresources). */
static void prepare_update(struct op *op, json_t **objp, const json_t *old)
{
	json_t *obj = *objp, *m, *om = json_object_get(old, "metadata");
	static const char *const keep[] = {
		"uid", "creationTimestamp", "deletionTimestamp",
		"deletionGracePeriodSeconds", "generation", "name",
		"namespace", NULL,
	};

	if (!strcmp(op->sub, "status") || !strcmp(op->sub, "finalize")) {
		json_t *n = json_deep_copy(old);

		if (*op->sub == 's') {
			set_or_del(n, "status", json_object_get(obj, "status"));
		} else {
			json_t *spec = json_object_get(n, "spec");

			if (!json_is_object(spec)) {
				spec = json_object();
				json_object_set_new(n, "spec", spec);
			}
			set_or_del(spec, "finalizers", json_object_get(
				json_object_get(obj, "spec"), "finalizers"));
		}
		/* the one field of metadata a subresource write sets */
		set_or_del(meta(n), "managedFields",
			   json_object_get(json_object_get(obj, "metadata"),
					   "managedFields"));
		json_decref(obj);
		*objp = n;
		return;
	}
	m = meta(obj);
	for (size_t i = 0; keep[i]; i++)
		set_or_del(m, keep[i], json_object_get(om, keep[i]));
	if (op->ver->status)
		set_or_del(obj, "status", json_object_get(old, "status"));
	if (is_namespace(op->type)) {
		json_t *spec = json_object_get(obj, "spec");
		json_t *ofin = json_object_get(json_object_get(old, "spec"),
					       "finalizers");

		if (!json_is_object(spec)) {
			spec = json_object();
			json_object_set_new(obj, "spec", spec);
		}
		set_or_del(spec, "finalizers", ofin);
	}
	if (has_generation(op->type)) {
		json_int_t g = json_integer_value(json_object_get(om,
							  "generation"));

		if (spec_changed(obj, old, op->ver->status))
			g++;
		json_object_set_new(m, "generation", json_integer(g ? g : 1));
	}
	if (op->type->bi && op->type->bi->prepare)
		op->type->bi->prepare(obj, old, op->now_ms);
}

/* True when an object being deleted has nothing left to wait for. */
static bool ready_to_go(const json_t *obj)
{
	const json_t *f = json_object_get(json_object_get(obj, "metadata"),
					  "finalizers");
	const json_t *sf = json_object_get(json_object_get(obj, "spec"),
					   "finalizers");

	return jx_meta_str(obj, "deletionTimestamp") && !json_array_size(f) &&
	       !json_array_size(sf);
}

/*
 * One attempt of steps 1-9 of an update of obj (taken, request version)
 * over old (stored, borrowed). conditional: the body carried a
 * resourceVersion the client wants checked. Sets *retry when a
 * concurrent write won and the attempt may be repeated.
 */
static int update_once(struct op *op, json_t *obj, const json_t *old,
		       bool is_put, bool patch_pinned, enum mf_mode mf,
		       json_t **out, bool *retry, struct api_status *st)
{
	const struct rtype *t = op->type;
	struct admission_req ar;
	json_t *old_v = api_read_render_object(op, old, st), *m, *sobj, *stored = NULL;
	json_t *opts = api_op_options(op, "UpdateOptions");
	const char *bname, *bns, *brv;
	bool pinned; /* the client asked for this resourceVersion */
	uint64_t rv = jx_rv_u64(old);
	enum store_rc rc;

	*retry = false;
	if (!old_v)
		goto fail;
	/* 1. decode: type, name, namespace, precondition */
	if (check_type_meta(op, obj, st) < 0)
		goto fail;
	m = meta(obj);
	bname = json_string_value(json_object_get(m, "name"));
	bns = json_string_value(json_object_get(m, "namespace"));
	brv = json_string_value(json_object_get(m, "resourceVersion"));
	/* brv points into obj, which admission and storage replace: decide
	 * now. A patch carries the stored version unless the client's patch
	 * named one, so only a pinned patch is a precondition. */
	pinned = is_put ? brv && *brv : patch_pinned;
	if (bname && strcmp(bname, op->name)) {
		status_bad_request(st, "the name of the object (%s) does not "
				   "match the name on the URL (%s)", bname,
				   op->name);
		goto fail;
	}
	if (t->namespaced && bns && *bns && strcmp(bns, op->ns)) {
		status_bad_request(st, "the namespace of the provided object "
				   "does not match the namespace sent on the "
				   "request");
		goto fail;
	}
	if (brv && *brv && strtoull(brv, NULL, 10) != rv) {
		status_conflict(st, t->group, t->plural, op->name);
		goto fail;
	}
	if ((!brv || !*brv) && is_put && !t->bi) {
		struct field_errors fe = FIELD_ERRORS_INIT;

		fe_add(&fe, FE_INVALID, "metadata.resourceVersion", "0x0",
		       false, "must be specified for an update");
		status_invalid(st, t->group, t->kind, op->name, &fe);
		field_errors_release(&fe);
		goto fail;
	}
	/* 2-3. defaults, pruning */
	apply_defaults(op, obj);
	if (apply_prune(op, obj, true, st) < 0)
		goto fail;
	/* field ownership (kube's fieldManager transformer runs before
	 * admission) */
	if (mf == MF_UPDATE)
		mf_update(op, old_v, obj);
	/* 4. mutating admission */
	ar = adm_req(op, ADMISSION_UPDATE, op->name, old_v, opts);
	if (admission_mutate(&ar, &obj, st) < 0)
		goto fail;
	apply_defaults(op, obj);
	apply_prune(op, obj, false, st);
	/* 5. prepare */
	prepare_update(op, &obj, old_v);
	/* 6. validate */
	if (validate_all(op, obj, old_v, st) < 0)
		goto fail;
	/* 7. validating admission */
	ar = adm_req(op, ADMISSION_UPDATE, op->name, old_v, opts);
	if (admission_validate(&ar, obj, st) < 0)
		goto fail;
	json_decref(old_v);
	old_v = NULL;
	json_decref(opts);
	opts = NULL;
	if (op->dry_run) {
		*out = obj;
		return 0;
	}
	/* 8. convert and store (or remove: last finalizer gone) */
	if (ready_to_go(obj)) {
		json_t *last = NULL;

		rc = store_delete(op->api->store, t->key, op->ns, op->name, rv,
				  &last);
		if (rc != STORE_OK) {
			*retry = rc == STORE_CONFLICT;
			store_failed(op, rc, op->name, st);
			goto fail;
		}
		if (is_crd(t))
			crd_cleanup(op, last);
		json_decref(last);
		after_write(op);
		*out = obj;
		return 0;
	}
	sobj = to_storage(op, obj, st);
	obj = NULL;
	if (!sobj)
		goto fail;
	rc = store_update(op->api->store, t->key, op->ns, op->name, rv, sobj,
			  &stored);
	if (rc != STORE_OK) {
		*retry = rc == STORE_CONFLICT && !pinned;
		store_failed(op, rc, op->name, st);
		goto fail;
	}
	after_write(op);
	/* 9. answer */
	return answer(op, stored, out, st);
fail:
	json_decref(opts);
	json_decref(old_v);
	json_decref(obj);
	return -1;
}

int api_write_update(struct op *op, json_t *obj, json_t **out,
		     struct api_status *st)
{
	for (int i = 0; i < RETRIES; i++) {
		json_t *old = store_get(op->api->store, op->type->key, op->ns,
					op->name);
		bool retry;
		int rc;

		if (!old) {
			json_decref(obj);
			return status_not_found(st, op->type->group,
						op->type->plural, op->name);
		}
		rc = update_once(op, json_deep_copy(obj), old, true, false,
				 MF_UPDATE, out, &retry, st);
		json_decref(old);
		if (rc == 0 || !retry || i == RETRIES - 1) {
			json_decref(obj);
			return rc;
		}
		status_release(st);
	}
	json_decref(obj);
	return -1;
}

/* ---- patch ---- */

enum ptype { PT_MERGE, PT_JSON, PT_SMP, PT_APPLY, PT_UNKNOWN };

static enum ptype patch_type(const char *ctype)
{
	size_t n = strcspn(ctype, ";");

	if (n == 28 && !strncasecmp(ctype, "application/merge-patch+json", n))
		return PT_MERGE;
	if (n == 27 && !strncasecmp(ctype, "application/json-patch+json", n))
		return PT_JSON;
	if (n == 38 &&
	    !strncasecmp(ctype, "application/strategic-merge-patch+json", n))
		return PT_SMP;
	if (n == 28 && !strncasecmp(ctype, "application/apply-patch+yaml", n))
		return PT_APPLY;
	return PT_UNKNOWN;
}

static int unsupported_patch(const struct op *op, struct api_status *st)
{
	return status_unsupported_media(st, op->type->bi
		? "application/json-patch+json, application/merge-patch+json, "
		  "application/apply-patch+yaml, "
		  "application/strategic-merge-patch+json"
		: "application/json-patch+json, application/merge-patch+json, "
		  "application/apply-patch+yaml");
}

/* Applies the patch to cur (request version). New object or NULL + st. */
static json_t *apply_patch(struct op *op, enum ptype pt, const json_t *cur,
			   const json_t *patch, struct api_status *st)
{
	struct err err = { "" };
	json_t *r = NULL;

	switch (pt) {
	case PT_MERGE:
		r = patch_merge(cur, patch);
		break;
	case PT_JSON:
		r = patch_json(cur, patch, &err);
		break;
	case PT_SMP:
		r = patch_strategic(cur, patch, smp_builtin_keys, &err);
		break;
	case PT_APPLY:
		r = patch_apply(cur, patch, op->ver->schema, &err);
		break;
	case PT_UNKNOWN:
		break;
	}
	if (!r)
		status_set(st, 422, "Invalid", NULL, "%s", err.msg[0] ? err.msg
			   : "the server rejected our request due to an error "
			     "in our request");
	return r;
}

int api_write_patch_ctype_check(const struct op *op, const char *ctype,
				struct api_status *st)
{
	enum ptype pt = patch_type(ctype);

	if (pt == PT_UNKNOWN || (pt == PT_SMP && !op->type->bi))
		return unsupported_patch(op, st);
	return 0;
}

/* Whether a patch names metadata.resourceVersion itself (a precondition
 * the server must not retry past), as opposed to inheriting it. */
static bool patch_pins_rv(enum ptype pt, const json_t *patch)
{
	size_t i;
	const json_t *o;

	if (pt != PT_JSON) {
		const json_t *rv = json_object_get(
			json_object_get(patch, "metadata"), "resourceVersion");

		return json_is_string(rv) && *json_string_value(rv);
	}
	json_array_foreach(patch, i, o) {
		const char *path = json_string_value(json_object_get(o, "path"));

		if (path && !strcmp(path, "/metadata/resourceVersion"))
			return true;
	}
	return false;
}

/* Server-side apply with field ownership: the merged object with its
 * managedFields, or NULL + st (409 on conflicts unless force). */
static json_t *apply_managed(struct op *op, const json_t *cur,
			     const json_t *patch, bool force,
			     struct api_status *st)
{
	struct managed_req r;
	char av[256], *owned;
	json_t *out;

	mf_req(op, &r, av, sizeof(av), &owned);
	out = managed_apply(&r, cur, patch, force, st);
	free(owned);
	return out;
}

int api_write_patch(struct op *op, const char *ctype, const json_t *patch,
		    json_t **out, int *code, struct api_status *st)
{
	enum ptype pt = patch_type(ctype);
	const char *fq = api_op_query(op, "force");
	bool force = false;
	/* apply with ownership; --preload merges without (untracked) */
	bool managed = pt == PT_APPLY && !op->untracked;

	*code = 200;
	if (fq && *fq && api_parse_go_bool(fq, &force) < 0)
		return status_bad_request(st, "force: Invalid value: \"%s\": "
					  "strconv.ParseBool: parsing \"%s\": "
					  "invalid syntax", fq, fq);
	if (api_write_patch_ctype_check(op, ctype, st) < 0)
		return -1;
	if (pt == PT_JSON && !json_is_array(patch))
		return status_bad_request(st, "the JSON patch must be an array "
					  "of operations");
	if (pt != PT_JSON && !json_is_object(patch))
		return status_bad_request(st, "the patch must be a JSON object");
	if (pt == PT_APPLY) {
		if (!op->field_manager || !*op->field_manager)
			return status_bad_request(st, "PatchOptions.meta.k8s.io "
				"\"\" is invalid: fieldManager: Required "
				"value: is required for apply patch");
		if (check_type_meta(op, patch, st) < 0)
			return -1;
	}
	for (int i = 0; i < RETRIES; i++) {
		json_t *old = store_get(op->api->store, op->type->key, op->ns,
					op->name), *cur, *next;
		bool retry;
		int rc;

		if (!old && pt == PT_APPLY && !*op->sub) {
			json_t *obj = json_deep_copy(patch), *merged;

			*code = 201;
			json_object_set_new(meta(obj), "name",
					    json_string(op->name));
			if (!managed)
				return create_obj(op, obj, MF_UPDATE, out, st);
			/* kube applies to an empty object: an Apply entry */
			merged = apply_managed(op, NULL, obj, force, st);
			json_decref(obj);
			if (!merged)
				return -1;
			return create_obj(op, merged, MF_KEEP, out, st);
		}
		if (!old)
			return status_not_found(st, op->type->group,
						op->type->plural, op->name);
		cur = api_read_render_object(op, old, st);
		if (!cur) {
			json_decref(old);
			return -1;
		}
		next = managed ? apply_managed(op, cur, patch, force, st)
			       : apply_patch(op, pt, cur, patch, st);
		json_decref(cur);
		if (!next) {
			json_decref(old);
			return -1;
		}
		rc = update_once(op, next, old, false, patch_pins_rv(pt, patch),
				 managed ? MF_KEEP : MF_UPDATE, out, &retry,
				 st);
		json_decref(old);
		if (rc == 0 || !retry)
			return rc;
		status_release(st);
	}
	return status_conflict(st, op->type->group, op->type->plural,
			       op->name);
}

/* ---- delete ---- */

static const char job_orphan_warning[] =
	"child pods are preserved by default when jobs are deleted; set "
	"propagationPolicy=Background to remove them or set "
	"propagationPolicy=Orphan to suppress this warning";

static void add_finalizer(json_t *fins, const char *f)
{
	size_t i;
	json_t *v;

	json_array_foreach(fins, i, v)
		if (json_string_value(v) && !strcmp(json_string_value(v), f))
			return;
	json_array_append_new(fins, json_string(f));
}

/*
 * One object's deletion. *obj_out: the object as the client sees it
 * (marked or last state); *removed: whether it is gone.
 */
static int delete_one(struct op *op, const struct delete_opts *d,
		      json_t **obj_out, bool *removed, struct api_status *st)
{
	const struct rtype *t = op->type;
	const char *prop = d->propagation;

	*removed = false;
	if (!prop && t->bi && (t->bi->flags & BI_ORPHAN_DEFAULT)) {
		prop = "Orphan";
		api_op_warn(op, "%s", job_orphan_warning);
	}
	for (int i = 0; i < RETRIES; i++) {
		json_t *old = store_get(op->api->store, t->key, op->ns,
					op->name), *fins, *n, *stored = NULL;
		const char *uid = old ? jx_meta_str(old, "uid") : NULL;
		uint64_t rv = old ? jx_rv_u64(old) : 0;
		struct admission_req ar;
		json_t *old_v, *opts;
		enum store_rc rc;
		bool denied;
		char ts[TIMESTAMP_BUF];

		if (!old)
			return status_not_found(st, t->group, t->plural,
						op->name);
		if (d->pre_uid && strcmp(d->pre_uid, uid ? uid : "")) {
			char *m = xasprintf("Precondition failed: UID in "
				"precondition: %s, UID in object meta: %s",
				d->pre_uid, uid ? uid : "");

			json_decref(old);
			status_conflict_detail(st, t->group, t->plural,
					       op->name, m);
			free(m);
			return -1;
		}
		if (d->pre_rv && strtoull(d->pre_rv, NULL, 10) != rv) {
			char *m = xasprintf("Precondition failed: "
				"ResourceVersion in precondition: %s, "
				"ResourceVersion in object meta: %llu",
				d->pre_rv, (unsigned long long)rv);

			json_decref(old);
			status_conflict_detail(st, t->group, t->plural,
					       op->name, m);
			free(m);
			return -1;
		}
		old_v = api_read_render_object(op, old, st);
		if (!old_v) {
			json_decref(old);
			return -1;
		}
		opts = delete_options(op, d);
		ar = adm_req(op, ADMISSION_DELETE, op->name, old_v, opts);
		denied = admission_validate(&ar, NULL, st) < 0;
		json_decref(opts);
		if (denied) {
			json_decref(old);
			json_decref(old_v);
			return -1;
		}
		if (jx_meta_str(old, "deletionTimestamp")) {
			json_decref(old);
			*obj_out = old_v;
			return 0;
		}
		n = json_deep_copy(old_v);
		json_decref(old_v);
		fins = json_object_get(meta(n), "finalizers");
		if (!json_is_array(fins)) {
			fins = json_array();
			json_object_set_new(meta(n), "finalizers", fins);
		}
		if (op->api->propagation_finalizers && prop &&
		    !strcmp(prop, "Orphan"))
			add_finalizer(fins, "orphan");
		if (op->api->propagation_finalizers && prop &&
		    !strcmp(prop, "Foreground"))
			add_finalizer(fins, "foregroundDeletion");
		if (!json_array_size(fins))
			json_object_del(meta(n), "finalizers");
		if (json_array_size(fins) ||
		    json_array_size(json_object_get(json_object_get(n, "spec"),
						    "finalizers"))) {
			/* Mark: the finalizers' owners finish the job. */
			timestamp_format(op->now_ms, ts, sizeof(ts));
			json_object_set_new(meta(n), "deletionTimestamp",
					    json_string(ts));
			json_object_set_new(meta(n),
					    "deletionGracePeriodSeconds",
					    json_integer(0));
			if (has_generation(t))
				json_object_set_new(meta(n), "generation",
					json_integer(json_integer_value(
						json_object_get(meta(n),
							"generation")) + 1));
			if (is_namespace(t))
				json_object_set_new(n, "status", json_pack(
					"{s:s}", "phase", "Terminating"));
			json_decref(old);
			if (op->dry_run) {
				*obj_out = n;
				return 0;
			}
			n = to_storage(op, n, st);
			if (!n)
				return -1;
			rc = store_update(op->api->store, t->key, op->ns,
					  op->name, rv, n, &stored);
			if (rc == STORE_CONFLICT)
				continue;
			if (rc != STORE_OK)
				return store_failed(op, rc, op->name, st);
			after_write(op);
			return answer(op, stored, obj_out, st);
		}
		json_decref(n);
		if (op->dry_run) {
			*removed = true;
			*obj_out = api_read_render_object(op, old, st);
			json_decref(old);
			return *obj_out ? 0 : -1;
		}
		json_decref(old);
		rc = store_delete(op->api->store, t->key, op->ns, op->name, rv,
				  &stored);
		if (rc == STORE_CONFLICT)
			continue;
		if (rc != STORE_OK)
			return store_failed(op, rc, op->name, st);
		if (is_crd(t))
			crd_cleanup(op, stored);
		after_write(op);
		*removed = true;
		return answer(op, stored, obj_out, st);
	}
	return status_conflict(st, t->group, t->plural, op->name);
}

int api_write_delete(struct op *op, const struct delete_opts *d, json_t **out,
		     struct api_status *st)
{
	json_t *obj;
	bool removed;

	if (delete_one(op, d, &obj, &removed, st) < 0)
		return -1;
	if (!removed || (op->type->bi &&
			 (op->type->bi->flags & BI_RETURN_DELETED))) {
		*out = obj;
		return 0;
	}
	*out = status_success(json_pack("{s:s, s:s, s:s, s:s}", "name",
					op->name, "group", op->type->group,
					"kind", op->type->plural, "uid",
					jx_text(jx_obj_peek(obj, "metadata"),
						"uid")));
	if (!*op->type->group)
		json_object_del(json_object_get(*out, "details"), "group");
	json_decref(obj);
	return 0;
}

int api_write_delete_collection(struct op *op, const struct selectors *sel,
				const struct delete_opts *d, json_t **out,
				struct api_status *st)
{
	json_t *items, *deleted = json_array(), *it;
	uint64_t rv;
	size_t i;
	char av[300], rvb[32];

	items = api_read_matching(op, sel, &rv);
	json_array_foreach(items, i, it) {
		struct op one;
		const char *ns = jx_meta_str(it, "namespace");
		json_t *obj;
		bool removed;

		api_op_init(&one, op->api, op->snap, op->type, op->ver,
			    ns ? ns : "", jx_meta_str(it, "name"), "");
		one.req = op->req;
		one.dry_run = op->dry_run;
		one.user = op->user;
		if (delete_one(&one, d, &obj, &removed, st) < 0) {
			api_op_release(&one);
			if (st->code == 404) {
				status_release(st);
				continue;
			}
			json_decref(items);
			json_decref(deleted);
			return -1;
		}
		json_array_append_new(deleted, obj);
		api_op_release(&one);
	}
	json_decref(items);
	snprintf(rvb, sizeof(rvb), "%llu",
		 (unsigned long long)store_rv(op->api->store));
	*out = json_pack("{s:s, s:s, s:{s:s}, s:o}", "kind",
			 op->type->list_kind, "apiVersion",
			 api_op_version(op, av, sizeof(av)), "metadata",
			 "resourceVersion", rvb, "items", deleted);
	return 0;
}
