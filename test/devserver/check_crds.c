/*
 * Suite "crds": the CustomResourceDefinitions cueue installs for
 * kueue.x-k8s.io (manifests/crds/, one YAML file per kind), against the
 * Kueue contract (kueue-api.md §1, §2-7, §9, §10) and against the
 * devserver's schema engine.
 *
 *  - structure: names, short names, scope, versions (v1beta2 storage,
 *    v1beta1 served and deprecated with Kueue's warning), the Webhook
 *    conversion through the manager's /convert, status subresource,
 *    printer columns of each version, and a structural-schema lint of
 *    every node of both versions' schemas (known keywords only, a type
 *    everywhere, list-map keys required or defaulted, defaults valid
 *    against their own schema, CEL rules with a message).
 *  - upstream: every Kueue object in test/fixtures/upstream/, at its own
 *    version and converted (codec_convert) to the other one, goes through
 *    that version's schema_prune (nothing may be pruned), schema_default,
 *    schema_validate (no errors) and the codec (no errors): the v1beta1
 *    schema must hold everything the conversion writes; every Job there
 *    becomes a Workload through jobwl_build and codec_encode_workload
 *    (both versions), which must pass the same way.
 *  - invalid: objects the schema of their version must reject, with the
 *    error expected.
 *  - defaults: the Kueue defaults an empty or sparse object gets.
 *  - status: statuses written by the codec's status encoders, at both
 *    versions, lose nothing to pruning and validate.
 *
 * Table JSON uses ' for " to stay readable; t_jq() swaps them back.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/yamljson.h"
#include "base/jx.h"
#include "devserver/schema.h"
#include "model/codec.h"
#include "model/jobwl.h"
#include "model/objects.h"
#include "model/svec.h"
#include "suites.h"
#include "test/support/support.h"

#define CRD_DIR "manifests/crds"
#define UPSTREAM_DIR TOP_SRCDIR "/test/fixtures/upstream"
#define GROUP "kueue.x-k8s.io"
#define V1BETA2 GROUP "/v1beta2"
#define V1BETA1 GROUP "/v1beta1"
#define DEPRECATION "This version is deprecated. Use v1beta2 instead."
/* The examples hold 34 Kueue objects and 8 Jobs today; fewer means the
 * walk or the dispatch silently lost some. */
#define MIN_UPSTREAM_OBJECTS 30
#define MIN_UPSTREAM_JOBS 6

/* ------------------------------------------------------------------ */
/* What each CRD must say                                              */

struct column {
	const char *name;
	const char *type;
	const char *jsonpath;
	const char *description;
	int priority; /* 0: no priority key (or 0) */
};

struct crd_case {
	const char *file;
	const char *kind;
	const char *list_kind;
	const char *plural;
	const char *singular;
	const char *scope;
	const char *const *short_names; /* NULL-terminated */
	bool status;          /* subresources.status present */
	bool subresources;    /* a subresources key at all */
	const struct column *columns;
	size_t ncolumns;
	const struct column *columns1; /* v1beta1's; NULL: as v1beta2 */
};

static const char *const rf_short[] = { "flavor", "flavors", "rf", NULL };
static const char *const cq_short[] = { "cq", NULL };
static const char *const lq_short[] = { "queue", "queues", "lq", NULL };
/* HEAD's set: v0.14's "wl" is gone (see workloads.yaml). */
static const char *const wl_short[] = { "kwl", "kueueworkload",
					"kueueworkloads", NULL };
static const char *const wpc_short[] = { "wpc", NULL };
static const char *const co_short[] = { "co", NULL };

static const struct column cq_cols[] = {
	{ "Cohort", "string", ".spec.cohortName",
	  "Cohort that this ClusterQueue belongs to", 0 },
	{ "Strategy", "string", ".spec.queueingStrategy",
	  "The queueing strategy used to prioritize workloads", 1 },
	{ "Pending Workloads", "integer", ".status.pendingWorkloads",
	  "Number of pending workloads", 0 },
	{ "Admitted Workloads", "integer", ".status.admittedWorkloads",
	  "Number of admitted workloads that haven't finished yet", 1 },
};
/* v1beta1: the Cohort column reads spec.cohort */
static const struct column cq1_cols[] = {
	{ "Cohort", "string", ".spec.cohort",
	  "Cohort that this ClusterQueue belongs to", 0 },
	{ "Strategy", "string", ".spec.queueingStrategy",
	  "The queueing strategy used to prioritize workloads", 1 },
	{ "Pending Workloads", "integer", ".status.pendingWorkloads",
	  "Number of pending workloads", 0 },
	{ "Admitted Workloads", "integer", ".status.admittedWorkloads",
	  "Number of admitted workloads that haven't finished yet", 1 },
};
static const struct column lq_cols[] = {
	{ "ClusterQueue", "string", ".spec.clusterQueue",
	  "Backing ClusterQueue", 0 },
	{ "Pending Workloads", "integer", ".status.pendingWorkloads",
	  "Number of pending workloads", 0 },
	{ "Admitted Workloads", "integer", ".status.admittedWorkloads",
	  "Number of admitted workloads that haven't finished yet.", 0 },
};
static const struct column wl_cols[] = {
	{ "Queue", "string", ".spec.queueName",
	  "Name of the queue this workload was submitted to", 0 },
	{ "Reserved in", "string", ".status.admission.clusterQueue",
	  "Name of the ClusterQueue where the workload is reserving quota", 0 },
	{ "Admitted", "string",
	  ".status.conditions[?(@.type=='Admitted')].status",
	  "Admission status", 0 },
	{ "Finished", "string",
	  ".status.conditions[?(@.type=='Finished')].status",
	  "Workload finished", 0 },
	{ "Age", "date", ".metadata.creationTimestamp",
	  "Time this workload was created", 0 },
};
static const struct column wpc_cols[] = {
	{ "Value", "integer", ".value",
	  "Value of workloadPriorityClass's Priority", 0 },
};

#define COLS(a) a, sizeof(a) / sizeof(a[0])

static const struct crd_case crds[] = {
	{ "resourceflavors.yaml", "ResourceFlavor", "ResourceFlavorList",
	  "resourceflavors", "resourceflavor", "Cluster", rf_short,
	  false, false, NULL, 0, NULL },
	{ "cohorts.yaml", "Cohort", "CohortList", "cohorts", "cohort",
	  "Cluster", co_short, true, true, NULL, 0, NULL },
	{ "clusterqueues.yaml", "ClusterQueue", "ClusterQueueList",
	  "clusterqueues", "clusterqueue", "Cluster", cq_short, true, true,
	  COLS(cq_cols), cq1_cols },
	{ "localqueues.yaml", "LocalQueue", "LocalQueueList", "localqueues",
	  "localqueue", "Namespaced", lq_short, true, true, COLS(lq_cols),
	  NULL },
	{ "workloadpriorityclasses.yaml", "WorkloadPriorityClass",
	  "WorkloadPriorityClassList", "workloadpriorityclasses",
	  "workloadpriorityclass", "Cluster", wpc_short, false, true,
	  COLS(wpc_cols), NULL },
	{ "workloads.yaml", "Workload", "WorkloadList", "workloads",
	  "workload", "Namespaced", wl_short, true, true, COLS(wl_cols),
	  NULL },
};

#define NCRDS (sizeof(crds) / sizeof(crds[0]))

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

/* Parses table JSON written with ' instead of "; new ref. */
static char *dump(const json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS |
				 JSON_ENCODE_ANY) : NULL;

	return s ? s : xstrdup("(NULL)");
}

/* Loads manifests/crds/<file>, which must hold exactly one document;
 * new ref. */
static json_t *load_crd(const char *file)
{
	char *rel = xasprintf("%s/%s", CRD_DIR, file);
	char *path = t_src_path(rel);
	struct err err = { "" };
	json_t *docs = NULL, *crd;

	ck_assert_msg(yamljson_load_file(path, &docs, &err) == 0, "%s",
		      err.msg);
	ck_assert_msg(json_array_size(docs) == 1,
		      "%s: %zu documents, want 1", rel, json_array_size(docs));
	crd = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	free(path);
	free(rel);
	return crd;
}

/* The entry of spec.versions named name; borrowed, NULL if none. */
static const json_t *version_of(const json_t *crd, const char *name)
{
	const json_t *vs = json_object_get(json_object_get(crd, "spec"),
					   "versions");
	const json_t *v;
	size_t i;

	json_array_foreach(vs, i, v)
		if (jx_str(v, "name") && !strcmp(jx_str(v, "name"), name))
			return v;
	return NULL;
}

static const json_t *schema_of_version(const json_t *crd, const char *version)
{
	const json_t *v = version_of(crd, version);

	return json_object_get(json_object_get(v, "schema"), "openAPIV3Schema");
}

static const json_t *schema_of(const json_t *crd)
{
	return schema_of_version(crd, "v1beta2");
}

/* "v1beta1" for a kueue.x-k8s.io/v1beta1 object, else "v1beta2". */
static const char *version_of_object(const json_t *obj)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));

	return av && !strcmp(av, V1BETA1) ? "v1beta1" : "v1beta2";
}

/* All six CRDs, loaded once per test. */
struct crdset {
	json_t *crd[NCRDS];
};

static void crdset_load(struct crdset *s)
{
	for (size_t i = 0; i < NCRDS; i++)
		s->crd[i] = load_crd(crds[i].file);
}

static void crdset_release(struct crdset *s)
{
	for (size_t i = 0; i < NCRDS; i++)
		json_decref(s->crd[i]);
}

/* The schema of version for kind; borrowed, NULL when no CRD serves
 * it. */
static const json_t *crdset_schema_v(const struct crdset *s, const char *kind,
				     const char *version)
{
	for (size_t i = 0; i < NCRDS; i++)
		if (kind && !strcmp(crds[i].kind, kind))
			return schema_of_version(s->crd[i], version);
	return NULL;
}

/* The v1beta2 schema for kind. */
static const json_t *crdset_schema(const struct crdset *s, const char *kind)
{
	return crdset_schema_v(s, kind, "v1beta2");
}

/* The schema of obj's own version (kind and apiVersion). */
static const json_t *crdset_schema_of(const struct crdset *s, const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));

	return crdset_schema_v(s, kind, version_of_object(obj));
}

/* Problems found across many objects: one line each, reported at once. */
struct report {
	char *text;
	size_t len;
	size_t lines;
};

static void report_add(struct report *r, const char *fmt, ...)
	PRINTF_LIKE(2, 3);

static void report_add(struct report *r, const char *fmt, ...)
{
	char line[4096];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	n = strlen(line);
	r->text = xrealloc(r->text, r->len + n + 2);
	memcpy(r->text + r->len, line, n);
	r->len += n;
	r->text[r->len++] = '\n';
	r->text[r->len] = '\0';
	r->lines++;
}

static void report_check(struct report *r)
{
	ck_assert_msg(r->lines == 0, "%zu problem(s):\n%.3000s", r->lines,
		      r->text ? r->text : "");
	free(r->text);
}

/* Decodes obj (a v1beta1 or v1beta2 Kueue object) with the codec; appends the
 * errors to fe and returns the decoder's result. */
static int decode(const json_t *obj, struct field_errors *fe)
{
	int rc;

	switch (codec_kind_of(obj)) {
	case KIND_RESOURCE_FLAVOR: {
		struct resource_flavor o = { 0 };

		rc = codec_decode_resource_flavor(obj, &o, fe);
		resource_flavor_release(&o);
		return rc;
	}
	case KIND_CLUSTER_QUEUE: {
		struct cluster_queue o = { 0 };

		rc = codec_decode_cluster_queue(obj, &o, fe);
		cluster_queue_release(&o);
		return rc;
	}
	case KIND_LOCAL_QUEUE: {
		struct local_queue o = { 0 };

		rc = codec_decode_local_queue(obj, &o, fe);
		local_queue_release(&o);
		return rc;
	}
	case KIND_COHORT: {
		struct cohort o = { 0 };

		rc = codec_decode_cohort(obj, &o, fe);
		cohort_release(&o);
		return rc;
	}
	case KIND_WORKLOAD_PRIORITY_CLASS: {
		struct workload_priority_class o = { 0 };

		rc = codec_decode_workload_priority_class(obj, &o, fe);
		workload_priority_class_release(&o);
		return rc;
	}
	case KIND_WORKLOAD: {
		struct workload o = { 0 };

		rc = codec_decode_workload(obj, &o, fe);
		workload_release(&o);
		return rc;
	}
	default:
		fe_forbidden(fe, "kind", "not a Kueue kind the codec knows");
		return -1;
	}
}

/*
 * What the API server does with an object (of its own version's schema)
 * before storing it: prune (nothing may go), default, validate (no
 * errors); then the codec must read the result. Problems go to r under
 * the label where. obj is not modified.
 */
static void admit_clean(const struct crdset *set, const json_t *obj,
			const char *where, struct report *r)
{
	const json_t *schema = crdset_schema_of(set, obj);
	json_t *x, *unknown;
	struct field_errors fe = FIELD_ERRORS_INIT;

	if (!schema) {
		report_add(r, "%s: no CRD serves kind %s", where,
			   jx_str(obj, "kind") ? jx_str(obj, "kind") : "?");
		return;
	}
	x = json_deep_copy(obj);
	unknown = json_array();
	schema_prune(x, schema, unknown);
	if (json_array_size(unknown)) {
		char *u = dump(unknown);

		report_add(r, "%s: pruned %s", where, u);
		free(u);
	}
	schema_default(x, schema);
	schema_validate(x, schema, &fe);
	if (fe.n)
		report_add(r, "%s: schema: %s", where, t_fe_text(&fe));
	field_errors_release(&fe);
	if (decode(x, &fe) != 0 || fe.n)
		report_add(r, "%s: codec: %s", where, t_fe_text(&fe));
	field_errors_release(&fe);
	json_decref(unknown);
	json_decref(x);
}

/* ------------------------------------------------------------------ */
/* Structure                                                           */

static void check_columns(const struct crd_case *c, const json_t *v,
			  const struct column *want)
{
	const json_t *cols = json_object_get(v, "additionalPrinterColumns");

	if (!c->ncolumns) {
		ck_assert_msg(!cols, "%s: has printer columns", c->file);
		return;
	}
	ck_assert_msg(json_array_size(cols) == c->ncolumns,
		      "%s: %zu columns, want %zu", c->file,
		      json_array_size(cols), c->ncolumns);
	for (size_t i = 0; i < c->ncolumns; i++) {
		const struct column *w = &want[i];
		const json_t *col = json_array_get(cols, i);
		const json_t *prio = json_object_get(col, "priority");

		ck_assert_str_eq(jx_str(col, "name"), w->name);
		ck_assert_str_eq(jx_str(col, "type"), w->type);
		ck_assert_str_eq(jx_str(col, "jsonPath"), w->jsonpath);
		ck_assert_str_eq(jx_str(col, "description"), w->description);
		ck_assert_int_eq(prio ? json_integer_value(prio) : 0,
				 w->priority);
		ck_assert_uint_eq(json_object_size(col), prio ? 5 : 4);
	}
}

/* spec.conversion: Webhook through the manager's /convert (the
 * Service of manifests/webhooks.yaml), ConversionReview v1 only; the
 * caBundle is left to the manager's certificate management. */
static void check_conversion(const struct crd_case *c, const json_t *conv)
{
	const json_t *wh = json_object_get(conv, "webhook");
	const json_t *cc = json_object_get(wh, "clientConfig");
	const json_t *svc = json_object_get(cc, "service");
	const json_t *rv = json_object_get(wh, "conversionReviewVersions");

	ck_assert_msg(json_is_object(conv), "%s: no conversion", c->file);
	ck_assert_str_eq(jx_str(conv, "strategy"), "Webhook");
	ck_assert_uint_eq(json_object_size(conv), 2);
	ck_assert_uint_eq(json_object_size(wh), 2);
	ck_assert_msg(json_object_size(cc) == 1, "%s: clientConfig has more "
		      "than a service (no url, no caBundle)", c->file);
	ck_assert_str_eq(jx_str(svc, "namespace"), "cueue-system");
	ck_assert_str_eq(jx_str(svc, "name"), "cueue-webhook-service");
	ck_assert_str_eq(jx_str(svc, "path"), "/convert");
	ck_assert_int_eq(json_integer_value(json_object_get(svc, "port")), 443);
	ck_assert_uint_eq(json_object_size(svc), 4);
	ck_assert_uint_eq(json_array_size(rv), 1);
	ck_assert_str_eq(json_string_value(json_array_get(rv, 0)), "v1");
}

static void check_subresources(const struct crd_case *c, const json_t *v)
{
	const json_t *sub = json_object_get(v, "subresources");

	ck_assert_msg((sub != NULL) == c->subresources,
		      "%s: subresources key", c->file);
	ck_assert_msg(json_is_object(json_object_get(sub, "status")) ==
		      c->status, "%s: status subresource", c->file);
	ck_assert_msg(!json_object_get(sub, "scale"), "%s: scale", c->file);
	if (sub)
		ck_assert_uint_eq(json_object_size(sub), c->status ? 1 : 0);
}

START_TEST(crd_structure)
{
	const struct crd_case *c = &crds[_i];
	json_t *crd = load_crd(c->file);
	const json_t *spec = json_object_get(crd, "spec");
	const json_t *names = json_object_get(spec, "names");
	const json_t *versions = json_object_get(spec, "versions");
	const json_t *shorts = json_object_get(names, "shortNames");
	const json_t *v;
	char *want_name = xasprintf("%s." GROUP, c->plural);
	size_t i, n = 0, storage = 0;

	ck_assert_str_eq(jx_str(crd, "apiVersion"), "apiextensions.k8s.io/v1");
	ck_assert_str_eq(jx_str(crd, "kind"), "CustomResourceDefinition");
	ck_assert_str_eq(jx_str(json_object_get(crd, "metadata"), "name"),
			 want_name);
	ck_assert_str_eq(jx_str(spec, "group"), GROUP);
	ck_assert_str_eq(jx_str(spec, "scope"), c->scope);
	ck_assert_str_eq(jx_str(names, "kind"), c->kind);
	ck_assert_str_eq(jx_str(names, "listKind"), c->list_kind);
	ck_assert_str_eq(jx_str(names, "plural"), c->plural);
	ck_assert_str_eq(jx_str(names, "singular"), c->singular);
	ck_assert_msg(!json_object_get(names, "categories"),
		      "%s: Kueue declares no categories", c->file);
	while (c->short_names[n])
		n++;
	ck_assert_msg(json_array_size(shorts) == n, "%s: %zu short names",
		      c->file, json_array_size(shorts));
	for (i = 0; i < n; i++)
		ck_assert_str_eq(json_string_value(json_array_get(shorts, i)),
				 c->short_names[i]);
	check_conversion(c, json_object_get(spec, "conversion"));

	ck_assert_msg(json_array_size(versions) >= 1, "%s: no versions",
		      c->file);
	json_array_foreach(versions, i, v) {
		ck_assert_msg(!strcmp(jx_str(v, "name"), "v1beta1") ||
			      !strcmp(jx_str(v, "name"), "v1beta2"),
			      "%s: version %s", c->file, jx_str(v, "name"));
		storage += json_is_true(json_object_get(v, "storage"));
	}
	ck_assert_msg(storage == 1, "%s: %zu storage versions", c->file,
		      storage);
	v = version_of(crd, "v1beta2");
	ck_assert_msg(v != NULL, "%s: no v1beta2", c->file);
	ck_assert(json_is_true(json_object_get(v, "served")));
	ck_assert(json_is_true(json_object_get(v, "storage")));
	ck_assert(!json_is_true(json_object_get(v, "deprecated")));

	check_subresources(c, v);
	check_columns(c, v, c->columns);

	/* v1beta1: served, deprecated with Kueue's warning, not stored */
	v = version_of(crd, "v1beta1");
	ck_assert_msg(v != NULL, "%s: no v1beta1", c->file);
	ck_assert(json_is_true(json_object_get(v, "served")));
	ck_assert(json_is_false(json_object_get(v, "storage")));
	ck_assert(json_is_true(json_object_get(v, "deprecated")));
	ck_assert_str_eq(jx_str(v, "deprecationWarning"), DEPRECATION);
	ck_assert_uint_eq(json_array_size(versions), 2);
	check_subresources(c, v);
	check_columns(c, v, c->columns1 ? c->columns1 : c->columns);

	/* status declared exactly when the status subresource is */
	ck_assert_msg((json_object_get(json_object_get(schema_of(crd),
		"properties"), "status") != NULL) == c->status,
		"%s: status schema vs subresource", c->file);
	ck_assert_msg((json_object_get(json_object_get(schema_of_version(crd,
		"v1beta1"), "properties"), "status") != NULL) == c->status,
		"%s: v1beta1 status schema vs subresource", c->file);
	free(want_name);
	json_decref(crd);
}
END_TEST

/* The keywords a structural schema may use (and we use). */
static const char *const keywords[] = {
	"type", "description", "properties", "items", "required", "enum",
	"default", "nullable", "format", "maxLength", "minLength", "maxItems",
	"minItems", "maxProperties", "minProperties", "minimum", "maximum",
	"pattern", "anyOf", "additionalProperties",
	"x-kubernetes-preserve-unknown-fields",
	"x-kubernetes-embedded-resource", "x-kubernetes-int-or-string",
	"x-kubernetes-list-type", "x-kubernetes-list-map-keys",
	"x-kubernetes-map-type", "x-kubernetes-validations", NULL,
};

static bool known_keyword(const char *k)
{
	for (size_t i = 0; keywords[i]; i++)
		if (!strcmp(keywords[i], k))
			return true;
	return false;
}

static bool is_scalar_type(const char *t)
{
	return t && (!strcmp(t, "string") || !strcmp(t, "integer") ||
		     !strcmp(t, "number") || !strcmp(t, "boolean"));
}

/* Lints one schema node and everything under it; problems go to r. */
static void lint(const json_t *s, const char *path, struct report *r)
{
	const char *type = jx_str(s, "type"), *k;
	const json_t *v, *props = json_object_get(s, "properties");
	const json_t *items = json_object_get(s, "items");
	const json_t *ap = json_object_get(s, "additionalProperties");
	const char *lt = jx_str(s, "x-kubernetes-list-type");
	bool ios = json_is_true(json_object_get(s, "x-kubernetes-int-or-string"));
	size_t i;

	if (!json_is_object(s)) {
		report_add(r, "%s: not a schema object", path);
		return;
	}
	json_object_foreach((json_t *)s, k, v)
		if (!known_keyword(k))
			report_add(r, "%s: unknown keyword %s", path, k);
	if (ios) {
		const json_t *any = json_object_get(s, "anyOf");

		if (type)
			report_add(r, "%s: int-or-string with a type", path);
		if (json_array_size(any) != 2 ||
		    strcmp(jx_str(json_array_get(any, 0), "type"), "integer") ||
		    strcmp(jx_str(json_array_get(any, 1), "type"), "string"))
			report_add(r, "%s: int-or-string needs anyOf integer, string",
				   path);
	} else {
		if (!type)
			report_add(r, "%s: no type", path);
		if (json_object_get(s, "anyOf"))
			report_add(r, "%s: anyOf outside int-or-string", path);
	}
	if ((json_is_true(json_object_get(s, "x-kubernetes-preserve-unknown-fields")) ||
	     json_object_get(s, "x-kubernetes-embedded-resource")) &&
	    (!type || strcmp(type, "object")))
		report_add(r, "%s: preserve-unknown/embedded on a non-object", path);
	if (props && ap)
		report_add(r, "%s: both properties and additionalProperties", path);
	if (type && !strcmp(type, "array") && !json_is_object(items))
		report_add(r, "%s: array without items", path);
	if (json_object_get(s, "required")) {
		json_array_foreach(json_object_get(s, "required"), i, v)
			if (!json_object_get(props, json_string_value(v)))
				report_add(r, "%s: required %s is not a property",
					   path, json_string_value(v));
	}
	if (lt && !strcmp(lt, "map")) {
		const json_t *keys = json_object_get(s, "x-kubernetes-list-map-keys");
		const json_t *ip = json_object_get(items, "properties");

		if (!json_array_size(keys))
			report_add(r, "%s: list map without keys", path);
		json_array_foreach(keys, i, v) {
			const char *key = json_string_value(v);
			const json_t *ks = json_object_get(ip, key);
			bool required = false;
			const json_t *q;
			size_t j;

			json_array_foreach(json_object_get(items, "required"), j, q)
				required |= !strcmp(json_string_value(q), key);
			if (!ks || !is_scalar_type(jx_str(ks, "type")))
				report_add(r, "%s: map key %s is not a scalar property",
					   path, key);
			else if (!required && !json_object_get(ks, "default"))
				report_add(r, "%s: map key %s neither required nor defaulted",
					   path, key);
		}
	} else if (lt && !strcmp(lt, "set")) {
		if (!is_scalar_type(jx_str(items, "type")))
			report_add(r, "%s: set of non-scalars", path);
	} else if (lt && strcmp(lt, "atomic")) {
		report_add(r, "%s: list type %s", path, lt);
	} else if (json_object_get(s, "x-kubernetes-list-map-keys")) {
		report_add(r, "%s: map keys on a non-map list", path);
	}
	if (json_object_get(s, "default")) {
		struct field_errors fe = FIELD_ERRORS_INIT;

		schema_validate(json_object_get(s, "default"), s, &fe);
		if (fe.n)
			report_add(r, "%s: default invalid: %s", path,
				   t_fe_text(&fe));
		field_errors_release(&fe);
	}
	json_array_foreach(json_object_get(s, "x-kubernetes-validations"), i, v)
		if (!jx_str(v, "rule") || !*jx_str(v, "rule") ||
		    !jx_str(v, "message") || !*jx_str(v, "message"))
			report_add(r, "%s: CEL rule %zu lacks rule or message",
				   path, i);
	json_object_foreach((json_t *)props, k, v) {
		char *p = xasprintf("%s.%s", path, k);

		lint(v, p, r);
		free(p);
	}
	if (json_is_object(ap)) {
		char *p = xasprintf("%s[*]", path);

		lint(ap, p, r);
		free(p);
	}
	if (items) {
		char *p = xasprintf("%s[]", path);

		lint(items, p, r);
		free(p);
	}
}

/* Loop index: CRD (_i / 2), version (v1beta2 even, v1beta1 odd). */
START_TEST(schema_structural)
{
	const struct crd_case *c = &crds[_i / 2];
	const char *version = _i % 2 ? "v1beta1" : "v1beta2";
	json_t *crd = load_crd(c->file);
	const json_t *schema = schema_of_version(crd, version);
	const json_t *props = json_object_get(schema, "properties");
	struct report r = { NULL, 0, 0 };
	char *label = xasprintf("%s(%s)", c->kind, version);

	ck_assert_msg(schema != NULL, "%s: no schema", label);
	ck_assert_str_eq(jx_str(schema, "type"), "object");
	ck_assert_str_eq(jx_str(json_object_get(props, "apiVersion"), "type"),
			 "string");
	ck_assert_str_eq(jx_str(json_object_get(props, "kind"), "type"),
			 "string");
	ck_assert_str_eq(jx_str(json_object_get(props, "metadata"), "type"),
			 "object");
	/* the root metadata may not be restricted beyond type object */
	ck_assert_uint_eq(json_object_size(json_object_get(props, "metadata")),
			  1);
	lint(schema, label, &r);
	report_check(&r);
	free(label);
	json_decref(crd);
}
END_TEST

/*
 * Each version's schema spells its own fields, CEL rules included (the
 * devserver does not evaluate CEL, so a rule naming the other version's
 * field would only fail on a real API server): none of the other
 * version's names appears in it.
 */
static const char *const v1beta2_only[] = {
	"\"cohortName\"", "self.cohortName",
	"\"priorityClassRef\"", "priorityClassRef)", "\"preemptionGates\"",
	"\"accumulatedPastExecutionTimeSeconds\"",
	"\"concurrentAdmissionPolicy\"",
	"\"slices\"", NULL,
};
static const char *const v1beta1_only[] = {
	"\"cohort\"", "self.cohort)", "self.cohort ", "\"flavorUsage\"",
	"\"priorityClassName\"", "\"priorityClassSource\"",
	"priorityClassName)", "\"accumulatedPastExexcutionTimeSeconds\"",
	"\"pendingWorkloadsStatus\"", "\"domains\"", "\"Borrow\"",
	"\"Preempt\"", NULL,
};

static void drop_pod_template(json_t *crd)
{
	json_t *vs = json_object_get(json_object_get(crd, "spec"), "versions");
	size_t i;
	json_t *v;

	json_array_foreach(vs, i, v) {
		json_t *s = json_object_get(json_object_get(v, "schema"),
					    "openAPIV3Schema");
		const char *path[] = { "spec", "podSets", "template", NULL };

		for (size_t k = 0; s && path[k]; k++) {
			json_t *props = json_object_get(s, "properties");

			if (!path[k + 1]) {
				json_object_del(props, path[k]);
				break;
			}
			s = json_object_get(props, path[k]);
			if (json_object_get(s, "items"))
				s = json_object_get(s, "items");
		}
	}
}

START_TEST(own_spelling)
{
	const struct crd_case *c = &crds[_i];
	json_t *crd = load_crd(c->file);
	char *v1, *v2;

	/* PodTemplateSpec's own fields (priorityClassName, ...) do not count */
	drop_pod_template(crd);
	v1 = dump(schema_of_version(crd, "v1beta1"));
	v2 = dump(schema_of(crd));

	for (size_t i = 0; v1beta2_only[i]; i++)
		ck_assert_msg(!strstr(v1, v1beta2_only[i]), "%s: v1beta1 "
			      "schema has %s", c->file, v1beta2_only[i]);
	for (size_t i = 0; v1beta1_only[i]; i++)
		ck_assert_msg(!strstr(v2, v1beta1_only[i]), "%s: v1beta2 "
			      "schema has %s", c->file, v1beta1_only[i]);
	if (!strcmp(c->kind, "LocalQueue")) {
		/* ClusterQueue says flavorsUsage at both versions */
		const json_t *v1s = schema_of_version(crd, "v1beta1");
		const json_t *st = json_object_get(json_object_get(
			json_object_get(v1s, "properties"), "status"),
			"properties");

		ck_assert(!json_object_get(st, "flavorsUsage"));
		ck_assert(json_object_get(st, "flavorUsage"));
		ck_assert(json_object_get(st, "flavors"));
	}
	free(v1);
	free(v2);
	json_decref(crd);
}
END_TEST

/*
 * The pod template has PodTemplateSpec's schema, as upstream's CRD does:
 * a mistyped template is refused with the field's path, a field that
 * PodTemplateSpec does not have is pruned (and reported, for
 * fieldValidation=Strict), and a well-formed template is kept as sent.
 */
START_TEST(pod_template_schema)
{
	json_t *crd = load_crd("workloads.yaml");
	const json_t *schema = schema_of(crd);
	json_t *obj = t_jq("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload',"
			   "'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{'name':'main','count':1,'template':"
			   "{'metadata':{'labels':{'a':'b'}},"
			   "'spec':{'containers':[{'name':'c','image':'i','futureField':{'x':1},"
			   "'resources':{'requests':{'cpu':'1','nvidia.com/gpu':2}}}],'restartPolicy':'Never',"
			   "'tolerations':[{'key':'k','operator':'Exists','effect':'NoSchedule'}]}}}]}}");
	json_t *bad = t_jq("{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload',"
			   "'metadata':{'name':'w','namespace':'ns'},'spec':{'podSets':[{'name':'main','count':1,'template':"
			   "{'spec':{'containers':{'name':'c'},'restartPolicy':7}}}]}}");
	json_t *unknown = json_array();
	struct field_errors fe;
	char *got;

	schema_prune(obj, schema, unknown);
	got = json_dumps(unknown, JSON_COMPACT);
	ck_assert_str_eq(got, "[\"spec.podSets[0].template.spec.containers[0].futureField\"]");
	free(got);
	field_errors_init(&fe);
	schema_validate(obj, schema, &fe);
	ck_assert_msg(fe.n == 0, "valid template refused: %s", t_fe_text(&fe));
	field_errors_release(&fe);

	schema_validate(bad, schema, &fe);
	got = field_errors_aggregate(&fe);
	ck_assert_msg(strstr(got, "spec.podSets[0].template.spec.containers: Invalid value: \"object\": "
			      "spec.podSets[0].template.spec.containers in body must be of type array"),
		      "%s", got);
	ck_assert_msg(strstr(got, "spec.podSets[0].template.spec.restartPolicy: Invalid value: \"integer\": "
			      "spec.podSets[0].template.spec.restartPolicy in body must be of type string"),
		      "%s", got);
	free(got);
	field_errors_release(&fe);
	json_decref(unknown);
	json_decref(bad);
	json_decref(obj);
	json_decref(crd);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The upstream examples                                               */

static char **files;
static size_t nfiles, capfiles;

static bool has_yaml_suffix(const char *name)
{
	size_t n = strlen(name);

	return n > 5 && !strcmp(name + n - 5, ".yaml");
}

static void walk(const char *rel)
{
	char *path = *rel ? xasprintf("%s/%s", UPSTREAM_DIR, rel)
			  : xstrdup(UPSTREAM_DIR);
	DIR *d = opendir(path);
	struct dirent *e;

	free(path);
	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char *sub;
		DIR *probe;

		if (e->d_name[0] == '.')
			continue;
		sub = *rel ? xasprintf("%s/%s", rel, e->d_name)
			   : xstrdup(e->d_name);
		path = xasprintf("%s/%s", UPSTREAM_DIR, sub);
		probe = opendir(path);
		free(path);
		if (probe) {
			closedir(probe);
			walk(sub);
			free(sub);
		} else if (has_yaml_suffix(e->d_name)) {
			XGROW(files, capfiles, nfiles + 1);
			files[nfiles++] = sub;
		} else {
			free(sub);
		}
	}
	closedir(d);
}

static void find_files(void)
{
	if (files)
		return;
	walk("");
	if (nfiles)
		qsort(files, nfiles, sizeof(*files), svec_cmp);
}

/* A Job from the examples -> the Workload cueue would create for it
 * (v1beta2), through the same checks. */
static void check_job_workload(const struct crdset *set, const json_t *doc,
			       const char *where, struct report *r)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct jobwl_opts opts = { .prio = NULL };
	struct job job = { 0 };
	struct workload wl = { 0 };
	struct err err = { "" };
	json_t *obj;
	char *label;

	if (codec_decode_job(doc, &job, &fe) != 0) {
		report_add(r, "%s: job decode: %s", where, t_fe_text(&fe));
		goto out;
	}
	if (!job.meta.name && job.meta.generate_name)
		job.meta.name = xasprintf("%sx7k2p", job.meta.generate_name);
	if (!job.meta.uid)
		job.meta.uid = xstrdup("0b6f6a3e-5d1c-4c4e-9a43-2b7f7a1c9e01");
	if (jobwl_build(&job, &opts, &wl, &err) != 0) {
		report_add(r, "%s: jobwl_build: %s", where, err.msg);
		goto out;
	}
	obj = codec_encode_workload(&wl, API_V1BETA2);
	label = xasprintf("%s -> Workload", where);
	admit_clean(set, obj, label, r);
	free(label);
	json_decref(obj);
	obj = codec_encode_workload(&wl, API_V1BETA1);
	label = xasprintf("%s -> Workload v1beta1", where);
	admit_clean(set, obj, label, r);
	free(label);
	json_decref(obj);
out:
	field_errors_release(&fe);
	job_release(&job);
	workload_release(&wl);
}

/* doc at its own version, and converted to the other one. */
static void admit_both(const struct crdset *set, const json_t *doc,
		       const char *where, struct report *r)
{
	const char *av = jx_str(doc, "apiVersion");
	const char *to = av && !strcmp(av, V1BETA2) ? V1BETA1 : V1BETA2;
	struct err err = { "" };
	json_t *other = NULL;
	char *label;

	admit_clean(set, doc, where, r);
	if (codec_convert(doc, to, &other, &err) != 0) {
		report_add(r, "%s: convert to %s: %s", where, to, err.msg);
		return;
	}
	label = xasprintf("%s -> %s", where, to);
	admit_clean(set, other, label, r);
	free(label);
	json_decref(other);
}

START_TEST(upstream_examples)
{
	struct crdset set;
	struct report r = { NULL, 0, 0 };
	size_t kueue = 0, jobs = 0;

	find_files();
	crdset_load(&set);
	ck_assert_msg(nfiles > 0, "no examples under %s", UPSTREAM_DIR);
	for (size_t f = 0; f < nfiles; f++) {
		char *path = xasprintf("%s/%s", UPSTREAM_DIR, files[f]);
		struct err err = { "" };
		json_t *docs = NULL;
		size_t *lines = NULL;

		if (yamljson_load_file_lines(path, &docs, &lines, &err) != 0) {
			report_add(&r, "%s", err.msg);
			free(path);
			continue;
		}
		for (size_t i = 0; i < json_array_size(docs); i++) {
			const json_t *doc = json_array_get(docs, i);
			const char *av = jx_str(doc, "apiVersion");
			char *where = xasprintf("%s:%zu %s", files[f], lines[i],
						jx_str(doc, "kind") ?
						jx_str(doc, "kind") : "?");

			if (codec_kind_of(doc) == KIND_JOB) {
				jobs++;
				check_job_workload(&set, doc, where, &r);
			} else if (av && !strncmp(av, GROUP "/",
						  strlen(GROUP) + 1)) {
				kueue++;
				admit_both(&set, doc, where, &r);
			}
			free(where);
		}
		json_decref(docs);
		free(lines);
		free(path);
	}
	ck_assert_msg(kueue >= MIN_UPSTREAM_OBJECTS,
		      "only %zu Kueue objects found", kueue);
	ck_assert_msg(jobs >= MIN_UPSTREAM_JOBS, "only %zu Jobs found", jobs);
	report_check(&r);
	crdset_release(&set);
}
END_TEST

/* The codec's own fixtures of both versions, each also converted to the
 * other: the fullest objects we have, statuses included. */
static const char *const codec_fixtures[] = {
	"codec/rf-v1beta2.json", "codec/cq-v1beta2.json",
	"codec/lq-v1beta2.json", "codec/cohort-v1beta2.json",
	"codec/wpc-v1beta2.json", "codec/wl-v1beta2.json",
	"codec/rf-v1beta1.json", "codec/lq-v1beta1.json",
	"codec/cohort-v1beta1.json", "codec/wpc-v1beta1.json",
	"codec/wl-v1beta1.json",
};

START_TEST(codec_fixture)
{
	const char *name = codec_fixtures[_i];
	json_t *doc = t_fixture_json(name);
	struct crdset set;
	struct report r = { NULL, 0, 0 };

	crdset_load(&set);
	admit_both(&set, doc, name, &r);
	report_check(&r);
	json_decref(doc);
	crdset_release(&set);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Objects the schema must reject                                      */

struct invalid_case {
	const char *name;
	const char *obj;  /* ' for " */
	const char *want; /* a substring of one of the errors */
};

#define CQ_HEAD "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ClusterQueue','metadata':{'name':'cq'},"
#define WL_HEAD "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload','metadata':{'name':'w','namespace':'ns'},"
#define CQ1_HEAD "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'cq'},"
#define WL1_HEAD "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload','metadata':{'name':'w','namespace':'ns'},"
#define TMPL "'template':{'spec':{'containers':[{'name':'c','image':'i'}]}}"
#define LONG317 \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa" \
	"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
#define ONE_RG "'resourceGroups':[{'coveredResources':['cpu'],'flavors':[{'name':'f','resources':[{'name':'cpu','nominalQuota':%s}]}]}]"

static const struct invalid_case invalid_cases[] = {
	{ "cq bad enum", CQ_HEAD "'spec':{'queueingStrategy':'FIFO'}}",
	  "spec.queueingStrategy: Unsupported value: \"FIFO\": supported values: \"StrictFIFO\", \"BestEffortFIFO\"" },
	{ "cq v1beta1 fungibility spelling", CQ_HEAD
	  "'spec':{'flavorFungibility':{'whenCanBorrow':'Borrow'}}}",
	  "spec.flavorFungibility.whenCanBorrow: Unsupported value: \"Borrow\"" },
	{ "cq bad quantity", CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],"
	  "'flavors':[{'name':'f','resources':[{'name':'cpu','nominalQuota':'ten'}]}]}]}}",
	  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"ten\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota in body should match '^(\\+|-)?" },
	{ "cq float quantity", CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],"
	  "'flavors':[{'name':'f','resources':[{'name':'cpu','nominalQuota':0.5}]}]}]}}",
	  "nominalQuota in body must be of type integer,string" },
	{ "cq missing nominalQuota", CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],"
	  "'flavors':[{'name':'f','resources':[{'name':'cpu'}]}]}]}}",
	  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Required value" },
	{ "cq no covered resources", CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':[],"
	  "'flavors':[{'name':'f','resources':[{'name':'cpu','nominalQuota':1}]}]}]}}",
	  "spec.resourceGroups[0].coveredResources in body should have at least 1 items" },
	{ "cq duplicate flavor", CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],"
	  "'flavors':[{'name':'f','resources':[{'name':'cpu','nominalQuota':1}]},"
	  "{'name':'f','resources':[{'name':'cpu','nominalQuota':1}]}]}]}}",
	  "spec.resourceGroups[0].flavors[1]: Duplicate value" },
	{ "cq bad flavor name", CQ_HEAD "'spec':{'resourceGroups':[{'coveredResources':['cpu'],"
	  "'flavors':[{'name':'Spot_Flavor','resources':[{'name':'cpu','nominalQuota':1}]}]}]}}",
	  "spec.resourceGroups[0].flavors[0].name: Invalid value: \"Spot_Flavor\"" },
	{ "cq bad cohort name", CQ_HEAD "'spec':{'cohortName':'Team A'}}",
	  "spec.cohortName: Invalid value: \"Team A\"" },
	{ "cq v1beta1 cohort field is unknown", CQ_HEAD "'spec':{'cohort':'a','stopPolicy':'Paused'}}",
	  "spec.stopPolicy: Unsupported value: \"Paused\"" },
	{ "cq int32 threshold", CQ_HEAD "'spec':{'preemption':{'borrowWithinCohort':"
	  "{'policy':'LowerPriority','maxPriorityThreshold':3000000000}}}}",
	  "spec.preemption.borrowWithinCohort.maxPriorityThreshold: Invalid value: 3000000000" },
	{ "cq admission mode", CQ_HEAD "'spec':{'admissionScope':{'admissionMode':'Fair'}}}",
	  "spec.admissionScope.admissionMode: Unsupported value: \"Fair\"" },
	{ "cq admission mode required", CQ_HEAD "'spec':{'admissionScope':{}}}",
	  "spec.admissionScope.admissionMode: Required value" },
	{ "cq migration mode", CQ_HEAD "'spec':{'concurrentAdmissionPolicy':{'migration':{'mode':'Always'}}}}",
	  "spec.concurrentAdmissionPolicy.migration.mode: Unsupported value: \"Always\"" },
	{ "cq empty check name", CQ_HEAD "'spec':{'admissionChecksStrategy':{'admissionChecks':[{'name':''}]}}}",
	  "spec.admissionChecksStrategy.admissionChecks[0].name: Invalid value: \"\": spec.admissionChecksStrategy.admissionChecks[0].name in body should be at least 1 chars long" },
	{ "cq condition without reason", CQ_HEAD "'spec':{},'status':{'conditions':[{'type':'Active',"
	  "'status':'True','message':'','lastTransitionTime':'2026-01-01T00:00:00Z'}]}}",
	  "status.conditions[0].reason: Required value" },
	{ "cq condition bad reason", CQ_HEAD "'spec':{},'status':{'conditions':[{'type':'Active',"
	  "'status':'True','reason':'not ready!','message':'','lastTransitionTime':'2026-01-01T00:00:00Z'}]}}",
	  "status.conditions[0].reason in body should match" },
	{ "cq condition bad status", CQ_HEAD "'spec':{},'status':{'conditions':[{'type':'Active',"
	  "'status':'Yes','reason':'Ready','message':'','lastTransitionTime':'2026-01-01T00:00:00Z'}]}}",
	  "status.conditions[0].status: Unsupported value: \"Yes\"" },
	{ "cq condition bad time", CQ_HEAD "'spec':{},'status':{'conditions':[{'type':'Active',"
	  "'status':'True','reason':'Ready','message':'','lastTransitionTime':'yesterday'}]}}",
	  "status.conditions[0].lastTransitionTime" },
	{ "cq duplicate condition", CQ_HEAD "'spec':{},'status':{'conditions':["
	  "{'type':'Active','status':'True','reason':'Ready','message':'','lastTransitionTime':'2026-01-01T00:00:00Z'},"
	  "{'type':'Active','status':'False','reason':'Stopped','message':'','lastTransitionTime':'2026-01-01T00:00:00Z'}]}}",
	  "status.conditions[1]: Duplicate value" },
	{ "cq usage bad quantity", CQ_HEAD "'spec':{},'status':{'flavorsUsage':[{'name':'f',"
	  "'resources':[{'name':'cpu','total':'1.5 cores'}]}]}}",
	  "status.flavorsUsage[0].resources[0].total in body should match" },
	{ "lq bad cluster queue", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue',"
	  "'metadata':{'name':'q','namespace':'ns'},'spec':{'clusterQueue':'Cluster_Queue'}}",
	  "spec.clusterQueue: Invalid value: \"Cluster_Queue\": spec.clusterQueue in body should match '^[a-z0-9]" },
	{ "lq bad stop policy", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue',"
	  "'metadata':{'name':'q','namespace':'ns'},'spec':{'clusterQueue':'cq','stopPolicy':'Drain'}}",
	  "spec.stopPolicy: Unsupported value: \"Drain\"" },
	{ "rf too many labels", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
	  "'metadata':{'name':'rf'},'spec':{'nodeLabels':{'a':'1','b':'2','c':'3','d':'4','e':'5',"
	  "'f':'6','g':'7','h':'8','i':'9'}}}",
	  "spec.nodeLabels: Too many: 9: must have at most 8 items" },
	{ "rf taint without key", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
	  "'metadata':{'name':'rf'},'spec':{'nodeTaints':[{'effect':'NoSchedule'}]}}",
	  "spec.nodeTaints[0].key: Required value" },
	{ "rf bad topology name", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
	  "'metadata':{'name':'rf'},'spec':{'nodeLabels':{'a':'b'},'topologyName':'My Topology'}}",
	  "spec.topologyName: Invalid value: \"My Topology\"" },
	{ "wpc without value", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'WorkloadPriorityClass',"
	  "'metadata':{'name':'p'},'description':'x'}",
	  "value: Required value" },
	{ "wpc string value", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'WorkloadPriorityClass',"
	  "'metadata':{'name':'p'},'value':'high'}",
	  "value: Invalid value: \"string\": value in body must be of type integer: \"string\"" },
	{ "wl podset name with a dot", WL_HEAD "'spec':{'podSets':[{'name':'main.x'," TMPL "}]}}",
	  "spec.podSets[0].name: Invalid value: \"main.x\": spec.podSets[0].name in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'" },
	{ "wl no podsets", WL_HEAD "'spec':{'podSets':[]}}",
	  "spec.podSets in body should have at least 1 items" },
	{ "wl duplicate podset", WL_HEAD "'spec':{'podSets':[{" TMPL "},{" TMPL "}]}}",
	  "spec.podSets[1]: Duplicate value: map[string]interface {}{\"name\":\"main\"}" },
	{ "wl negative count", WL_HEAD "'spec':{'podSets':[{'count':-1," TMPL "}]}}",
	  "spec.podSets[0].count in body should be greater than or equal to 0" },
	{ "wl template required", WL_HEAD "'spec':{'podSets':[{'name':'main','count':1}]}}",
	  "spec.podSets[0].template: Required value" },
	{ "wl zero max exec", WL_HEAD "'spec':{'maximumExecutionTimeSeconds':0,'podSets':[{" TMPL "}]}}",
	  "spec.maximumExecutionTimeSeconds in body should be greater than or equal to 1" },
	{ "wl priority class group", WL_HEAD "'spec':{'priority':1,'priorityClassRef':"
	  "{'group':'example.com','kind':'PriorityClass','name':'high'},'podSets':[{" TMPL "}]}}",
	  "spec.priorityClassRef.group: Unsupported value: \"example.com\"" },
	{ "wl float count (v1beta1 fields pruned)", WL_HEAD "'spec':{'priorityClassName':'high','priorityClassSource':"
	  "'bogus','podSets':[{'count':1.5," TMPL "}]}}",
	  "spec.podSets[0].count: Invalid value: \"float64\": spec.podSets[0].count in body must be of type int32" },
	{ "wl check state", WL_HEAD "'spec':{'podSets':[{" TMPL "}]},'status':{'admissionChecks':"
	  "[{'name':'prov','state':'Done','message':'','lastTransitionTime':'2026-01-01T00:00:00Z'}]}}",
	  "status.admissionChecks[0].state: Unsupported value: \"Done\"" },
	{ "wl assignment flavor name", WL_HEAD "'spec':{'podSets':[{" TMPL "}]},'status':{'admission':"
	  "{'clusterQueue':'cq','podSetAssignments':[{'name':'main','flavors':{'cpu':'Bad Flavor'}}]}}}",
	  "status.admission.podSetAssignments[0].flavors.cpu: Invalid value: \"Bad Flavor\"" },
	{ "wl delayed topology", WL_HEAD "'spec':{'podSets':[{" TMPL "}]},'status':{'admission':"
	  "{'clusterQueue':'cq','podSetAssignments':[{'name':'main','delayedTopologyRequest':'Later'}]}}}",
	  "status.admission.podSetAssignments[0].delayedTopologyRequest" },
	/* v1beta1: its own schema */
	{ "v1beta1 cq fungibility enum", CQ1_HEAD "'spec':{'flavorFungibility':{'whenCanPreempt':'Borrow'}}}",
	  "spec.flavorFungibility.whenCanPreempt: Unsupported value: \"Borrow\": supported values: \"MayStopSearch\", \"TryNextFlavor\", \"Preempt\"" },
	{ "v1beta1 cq bad cohort name", CQ1_HEAD "'spec':{'cohort':'Team A'}}",
	  "spec.cohort: Invalid value: \"Team A\"" },
	{ "v1beta1 cq admission check name too long", CQ1_HEAD "'spec':{'admissionChecks':['" LONG317 "']}}",
	  "spec.admissionChecks[0]: Too long: may not be more than 316 bytes" },
	{ "v1beta1 wl priorityClassSource enum", WL1_HEAD "'spec':{'priority':1,'priorityClassName':'high',"
	  "'priorityClassSource':'kueue.x-k8s.io/priorityclass','podSets':[{" TMPL "}]}}",
	  "spec.priorityClassSource: Unsupported value: \"kueue.x-k8s.io/priorityclass\"" },
	{ "v1beta1 wl topology domain count", WL1_HEAD "'spec':{'podSets':[{" TMPL "}]},'status':{'admission':"
	  "{'clusterQueue':'cq','podSetAssignments':[{'name':'main','topologyAssignment':{'levels':['l'],"
	  "'domains':[{'values':['a'],'count':0}]}}]}}}",
	  "status.admission.podSetAssignments[0].topologyAssignment.domains[0].count in body should be greater than or equal to 1" },
	{ "wl gate position", WL_HEAD "'spec':{'preemptionGates':[{'name':'g'}],'podSets':[{" TMPL "}]},"
	  "'status':{'preemptionGates':[{'name':'g','position':'Ajar','lastTransitionTime':'2026-01-01T00:00:00Z'}]}}",
	  "status.preemptionGates[0].position: Unsupported value: \"Ajar\"" },
};

START_TEST(invalid)
{
	const struct invalid_case *c = &invalid_cases[_i];
	struct crdset set;
	json_t *obj = t_jq(c->obj);
	const json_t *schema;
	struct field_errors fe = FIELD_ERRORS_INIT;

	crdset_load(&set);
	schema = crdset_schema_of(&set, obj);
	ck_assert_msg(schema != NULL, "%s: no schema", c->name);
	schema_prune(obj, schema, NULL);
	schema_default(obj, schema);
	schema_validate(obj, schema, &fe);
	ck_assert_msg(t_fe_contains(&fe, c->want),
		      "%s: no error containing '%s' in: %s", c->name, c->want,
		      t_fe_text(&fe));
	field_errors_release(&fe);
	json_decref(obj);
	crdset_release(&set);
}
END_TEST

/* 17 resource groups and 19 pod sets: one over each limit. */
START_TEST(too_many)
{
	struct crdset set;
	json_t *cq = t_jq(CQ_HEAD "'spec':{'resourceGroups':[]}}");
	json_t *wl = t_jq(WL_HEAD "'spec':{'podSets':[]}}");
	json_t *rgs = json_object_get(json_object_get(cq, "spec"),
				      "resourceGroups");
	json_t *pss = json_object_get(json_object_get(wl, "spec"), "podSets");
	struct field_errors fe = FIELD_ERRORS_INIT;

	crdset_load(&set);
	for (int i = 0; i < 17; i++) {
		char *s = xasprintf("{'coveredResources':['r%d'],'flavors':[{'name':'f%d',"
				    "'resources':[{'name':'r%d','nominalQuota':1}]}]}",
				    i, i, i);

		json_array_append_new(rgs, t_jq(s));
		free(s);
	}
	for (int i = 0; i < 19; i++) {
		char *s = xasprintf("{'name':'ps%d'," TMPL "}", i);

		json_array_append_new(pss, t_jq(s));
		free(s);
	}
	schema_validate(cq, crdset_schema(&set, "ClusterQueue"), &fe);
	ck_assert_fe(&fe, "spec.resourceGroups: Too many: 17: must have at most 16 items");
	/* a blocking error: the CEL rules are not run, one notice says so */
	ck_assert_fe(&fe, "<nil>: Invalid value: \"null\": some validation "
		     "rules were not checked because the object was invalid; "
		     "correct the existing errors to complete validation");
	ck_assert_uint_eq(fe.n, 2);
	field_errors_release(&fe);
	schema_validate(wl, crdset_schema(&set, "Workload"), &fe);
	ck_assert_fe(&fe, "spec.podSets: Too many: 19: must have at most 18 items");
	ck_assert_uint_eq(fe.n, 2);
	field_errors_release(&fe);
	/* 16 and 18 are fine */
	json_array_remove(rgs, 16);
	json_array_remove(pss, 18);
	schema_validate(cq, crdset_schema(&set, "ClusterQueue"), &fe);
	schema_validate(wl, crdset_schema(&set, "Workload"), &fe);
	ck_assert_msg(fe.n == 0, "%s", t_fe_text(&fe));
	json_decref(cq);
	json_decref(wl);
	crdset_release(&set);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Defaults                                                            */

struct default_case {
	const char *name;
	const char *obj;  /* ' for " */
	const char *want; /* the whole object after defaulting */
};

static const struct default_case default_cases[] = {
	{ "cq empty spec", CQ_HEAD "'spec':{}}",
	  CQ_HEAD "'spec':{'queueingStrategy':'BestEffortFIFO','stopPolicy':'None',"
	  "'flavorFungibility':{'whenCanBorrow':'MayStopSearch','whenCanPreempt':'TryNextFlavor'},"
	  "'preemption':{'reclaimWithinCohort':'Never','withinClusterQueue':'Never',"
	  "'borrowWithinCohort':{'policy':'Never'}}}}" },
	{ "cq explicit values stay", CQ_HEAD "'spec':{'queueingStrategy':'StrictFIFO',"
	  "'flavorFungibility':{'whenCanPreempt':'MayStopSearch'},"
	  "'preemption':{'withinClusterQueue':'LowerPriority','borrowWithinCohort':{'maxPriorityThreshold':5}},"
	  "'fairSharing':{}}}",
	  CQ_HEAD "'spec':{'queueingStrategy':'StrictFIFO','stopPolicy':'None',"
	  "'flavorFungibility':{'whenCanBorrow':'MayStopSearch','whenCanPreempt':'MayStopSearch'},"
	  "'preemption':{'reclaimWithinCohort':'Never','withinClusterQueue':'LowerPriority',"
	  "'borrowWithinCohort':{'policy':'Never','maxPriorityThreshold':5}},"
	  "'fairSharing':{'weight':1}}}" },
	{ "cq no spec, no defaults", CQ_HEAD "'status':{}}", CQ_HEAD "'status':{}}" },
	{ "lq", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'q'},"
	  "'spec':{'clusterQueue':'cq','fairSharing':{}}}",
	  "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'LocalQueue','metadata':{'name':'q'},"
	  "'spec':{'clusterQueue':'cq','stopPolicy':'None','fairSharing':{'weight':1}}}" },
	{ "cohort", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},"
	  "'spec':{'fairSharing':{}}}",
	  "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Cohort','metadata':{'name':'c'},"
	  "'spec':{'fairSharing':{'weight':1}}}" },
	{ "wl podset and active", WL_HEAD "'spec':{'podSets':[{" TMPL "}]},"
	  "'status':{'admission':{'clusterQueue':'cq','podSetAssignments':[{'count':1}]}}}",
	  WL_HEAD "'spec':{'active':true,'podSets':[{'name':'main','count':1," TMPL "}]},"
	  "'status':{'admission':{'clusterQueue':'cq','podSetAssignments':[{'name':'main','count':1}]}}}" },
	{ "wl inactive stays", WL_HEAD "'spec':{'active':false,'podSets':[{'name':'w','count':0," TMPL "}]}}",
	  WL_HEAD "'spec':{'active':false,'podSets':[{'name':'w','count':0," TMPL "}]}}" },
	{ "v1beta1 cq empty spec: MayStopSearch, as Kueue's v1beta1 defaults it", CQ1_HEAD "'spec':{}}",
	  CQ1_HEAD "'spec':{'queueingStrategy':'BestEffortFIFO','stopPolicy':'None',"
	  "'flavorFungibility':{'whenCanBorrow':'MayStopSearch','whenCanPreempt':'TryNextFlavor'},"
	  "'preemption':{'reclaimWithinCohort':'Never','withinClusterQueue':'Never',"
	  "'borrowWithinCohort':{'policy':'Never'}}}}" },
	{ "v1beta1 wl priorityClassSource", WL1_HEAD "'spec':{'podSets':[{" TMPL "}]}}",
	  WL1_HEAD "'spec':{'active':true,'priorityClassSource':'','podSets':[{'name':'main','count':1," TMPL "}]}}" },
	{ "wpc and rf: none", "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
	  "'metadata':{'name':'rf'},'spec':{}}",
	  "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'ResourceFlavor',"
	  "'metadata':{'name':'rf'},'spec':{}}" },
};

START_TEST(defaults)
{
	const struct default_case *c = &default_cases[_i];
	struct crdset set;
	json_t *obj = t_jq(c->obj), *want = t_jq(c->want);
	const json_t *schema;
	struct field_errors fe = FIELD_ERRORS_INIT;

	crdset_load(&set);
	schema = crdset_schema_of(&set, obj);
	schema_default(obj, schema);
	if (!json_equal(obj, want)) {
		char *g = dump(obj), *w = dump(want);

		ck_abort_msg("%s:\n  got  %.1400s\n  want %.1400s", c->name, g, w);
	}
	schema_validate(obj, schema, &fe);
	ck_assert_msg(fe.n == 0, "%s: %s", c->name, t_fe_text(&fe));
	json_decref(obj);
	json_decref(want);
	crdset_release(&set);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Statuses written by the codec                                       */

#define T0 1796083200000LL /* 2026-12-01T00:00:00Z */

static void usage_entry(struct flavor_usage *u, const char *flavor,
			int64_t cpu, int64_t mem, int64_t borrowed_cpu)
{
	u->name = xstrdup(flavor);
	u->nres = 2;
	u->res = xcalloc(2, sizeof(*u->res));
	u->res[0].name = xstrdup("cpu");
	u->res[0].total = cpu;
	u->res[0].borrowed = borrowed_cpu;
	u->res[1].name = xstrdup("memory");
	u->res[1].total = mem;
}

/* Prunes a copy of obj with schema: nothing may go, nothing may change;
 * then it must validate. */
static void assert_survives(const char *name, const json_t *obj,
			    const json_t *schema)
{
	json_t *x = json_deep_copy(obj), *unknown = json_array();
	struct field_errors fe = FIELD_ERRORS_INIT;

	schema_prune(x, schema, unknown);
	if (json_array_size(unknown) || !json_equal(x, obj)) {
		char *u = dump(unknown), *o = dump(obj), *p = dump(x);

		/* Check's messages are capped at 4 KiB: keep the heads */
		ck_abort_msg("%s: pruned %.800s\n  was %.1000s\n  now %.1000s",
			     name, u, o, p);
	}
	schema_validate(x, schema, &fe);
	ck_assert_msg(fe.n == 0, "%s: %s", name, t_fe_text(&fe));
	json_decref(unknown);
	json_decref(x);
}

/* {apiVersion, kind, metadata, spec, status} around a status. */
static json_t *wrap_v(const char *av, const char *kind, json_t *spec,
		      json_t *status)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}}", "apiVersion",
			      av, "kind", kind, "metadata", "name", "x",
			      "namespace", "ns");

	json_object_set_new(o, "spec", spec);
	json_object_set_new(o, "status", status);
	return o;
}

static json_t *wrap(const char *kind, json_t *spec, json_t *status)
{
	return wrap_v(V1BETA2, kind, spec, status);
}

START_TEST(cluster_queue_status)
{
	struct crdset set;
	struct cluster_queue cq = { 0 };
	json_t *obj;

	crdset_load(&set);
	conditions_set(&cq.conds, "Active", COND_TRUE, "Ready",
		       "Can admit new workloads", 3, T0);
	cq.nreservation = 2;
	cq.reservation = xcalloc(2, sizeof(*cq.reservation));
	usage_entry(&cq.reservation[0], "on-demand", 1500, 1LL << 40, 500);
	usage_entry(&cq.reservation[1], "spot", 0, 0, 0);
	cq.nusage = 1;
	cq.usage = xcalloc(1, sizeof(*cq.usage));
	usage_entry(&cq.usage[0], "on-demand", 1000, 512LL << 30, 0);
	cq.pending = 4;
	cq.reserving = 2;
	cq.admitted = 1;
	obj = wrap("ClusterQueue", t_jq("{'namespaceSelector':{}}"),
		   codec_encode_cluster_queue_status(&cq, API_V1BETA2));
	json_object_del(json_object_get(obj, "metadata"), "namespace");
	assert_survives("cq status", obj, crdset_schema(&set, "ClusterQueue"));
	json_decref(obj);
	obj = wrap_v(V1BETA1, "ClusterQueue", t_jq("{'namespaceSelector':{}}"),
		     codec_encode_cluster_queue_status(&cq, API_V1BETA1));
	json_object_del(json_object_get(obj, "metadata"), "namespace");
	assert_survives("cq status v1beta1", obj,
			crdset_schema_v(&set, "ClusterQueue", "v1beta1"));
	json_decref(obj);

	/* an idle queue: counters only */
	cluster_queue_release(&cq);
	obj = wrap("ClusterQueue", json_object(),
		   codec_encode_cluster_queue_status(&cq, API_V1BETA2));
	assert_survives("idle cq status", obj,
			crdset_schema(&set, "ClusterQueue"));
	json_decref(obj);
	crdset_release(&set);
}
END_TEST

START_TEST(local_queue_status)
{
	struct crdset set;
	struct local_queue lq = { 0 };
	json_t *obj;

	crdset_load(&set);
	conditions_set(&lq.conds, "Active", COND_FALSE, "ClusterQueueDoesNotExist",
		       "Can't submit new workloads to clusterQueue", 1, T0);
	lq.nreservation = 1;
	lq.reservation = xcalloc(1, sizeof(*lq.reservation));
	usage_entry(&lq.reservation[0], "default", 2000, 1LL << 30, 0);
	lq.nusage = 1;
	lq.usage = xcalloc(1, sizeof(*lq.usage));
	usage_entry(&lq.usage[0], "default", 500, 0, 0);
	lq.pending = 1;
	lq.reserving = 1;
	lq.admitted = 1;
	obj = wrap("LocalQueue", t_jq("{'clusterQueue':'cq'}"),
		   codec_encode_local_queue_status(&lq, API_V1BETA2));
	assert_survives("lq status", obj, crdset_schema(&set, "LocalQueue"));
	json_decref(obj);
	obj = wrap_v(V1BETA1, "LocalQueue", t_jq("{'clusterQueue':'cq'}"),
		     codec_encode_local_queue_status(&lq, API_V1BETA1));
	ck_assert(json_object_get(json_object_get(obj, "status"),
				  "flavorUsage"));
	assert_survives("lq status v1beta1", obj,
			crdset_schema_v(&set, "LocalQueue", "v1beta1"));
	json_decref(obj);
	local_queue_release(&lq);
	crdset_release(&set);
}
END_TEST

static const char wl_spec[] =
	"{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload',"
	"'metadata':{'name':'job-sample-1a2b3','namespace':'ns','uid':'u1',"
	"'generation':2,'creationTimestamp':'2026-12-01T00:00:00Z',"
	"'labels':{'kueue.x-k8s.io/job-uid':'j1'},"
	"'finalizers':['kueue.x-k8s.io/resource-in-use'],"
	"'ownerReferences':[{'apiVersion':'batch/v1','kind':'Job','name':'sample',"
	"'uid':'j1','controller':true,'blockOwnerDeletion':true}]},"
	"'spec':{'queueName':'user-queue','priority':100,"
	"'priorityClassRef':{'group':'kueue.x-k8s.io','kind':'WorkloadPriorityClass','name':'high'},"
	"'active':true,'maximumExecutionTimeSeconds':600,"
	"'podSets':[{'name':'main','count':3,'minCount':2,"
	"'topologyRequest':{'podIndexLabel':'batch.kubernetes.io/job-completion-index'},"
	"'template':{'metadata':{'labels':{'app':'x'}},'spec':{'restartPolicy':'Never',"
	"'containers':[{'name':'c','image':'busybox','resources':{'requests':{'cpu':'1','memory':'1Gi'}}}]}}}]}}";

START_TEST(workload_status)
{
	struct crdset set;
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct workload w = { 0 };
	struct pod_set_assignment *p;
	json_t *in = t_jq(wl_spec), *obj, *st;
	const json_t *schema;

	crdset_load(&set);
	schema = crdset_schema(&set, "Workload");
	ck_assert_msg(codec_decode_workload(in, &w, &fe) == 0, "%s",
		      t_fe_text(&fe));
	conditions_set(&w.conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       "Quota reserved in ClusterQueue cq", 0, T0);
	conditions_set(&w.conds, "Admitted", COND_TRUE, "Admitted",
		       "The workload is admitted", 2, T0 + 1000);
	conditions_set(&w.conds, "Requeued", COND_TRUE, "BackoffFinished",
		       "The workload backoff was finished", 2, T0);
	w.has_admission = true;
	w.admission.cluster_queue = xstrdup("cq");
	w.admission.npsa = 1;
	w.admission.psa = p = xcalloc(1, sizeof(*p));
	p->name = xstrdup("main");
	smap_set(&p->flavors, "cpu", "on-demand");
	smap_set(&p->flavors, "memory", "on-demand");
	reslist_set(&p->usage, "cpu", 3000);
	reslist_set(&p->usage, "memory", 3000LL << 30);
	p->has_count = true;
	p->count = 3;
	p->topology_assignment = xstrdup(
		"{\"levels\":[\"cloud.example.com/block\",\"kubernetes.io/hostname\"],"
		"\"slices\":[{\"domainCount\":2,\"valuesPerLevel\":[{\"universal\":\"b1\"},"
		"{\"individual\":{\"prefix\":\"node-\",\"roots\":[\"1\",\"2\"]}}],"
		"\"podCounts\":{\"individual\":[2,1]}}]}");
	w.has_requeue_count = true;
	w.requeue_count = 2;
	w.requeue_at_ms = T0 + 60000;
	w.nreclaimable = 1;
	w.reclaimable = xcalloc(1, sizeof(*w.reclaimable));
	w.reclaimable[0].name = xstrdup("main");
	w.reclaimable[0].count = 1;
	w.nchecks = 1;
	w.checks = xcalloc(1, sizeof(*w.checks));
	w.checks[0].name = xstrdup("prov");
	w.checks[0].state = CHECK_READY;
	w.checks[0].last_transition_ms = T0;
	w.checks[0].message = xstrdup("");
	w.checks[0].pod_set_updates = xstrdup(
		"[{\"name\":\"main\",\"labels\":{\"a\":\"b\"},\"annotations\":{\"c\":\"d\"},"
		"\"nodeSelector\":{\"zone\":\"z1\"},\"tolerations\":[{\"key\":\"k\","
		"\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}]}]");
	w.has_accumulated = true;
	w.accumulated_seconds = 42;

	/* the full object, as the controller would PUT it */
	obj = codec_encode_workload(&w, API_V1BETA2);
	assert_survives("wl object", obj, schema);
	json_decref(obj);

	/* the status encoder's merge-patch body, put in an object */
	st = codec_encode_workload_status(&w, API_V1BETA2);
	obj = json_deep_copy(in);
	json_object_set_new(obj, "status", st);
	assert_survives("wl status", obj, schema);
	json_decref(obj);

	/* v1beta1, but for the topology assignment: v1beta1 spells it as a
	 * list of domains, which neither the codec nor the conversion
	 * writes (workloads.yaml) */
	FREE_AND_NULL(p->topology_assignment);
	obj = codec_encode_workload(&w, API_V1BETA1);
	ck_assert(json_object_get(json_object_get(obj, "status"),
				  "accumulatedPastExexcutionTimeSeconds"));
	ck_assert_str_eq(jx_str(json_object_get(obj, "spec"),
			      "priorityClassName"), "high");
	assert_survives("wl object v1beta1", obj,
			crdset_schema_v(&set, "Workload", "v1beta1"));
	json_decref(obj);

	/* nothing set: "admission": null and "requeueState": null are what a
	 * merge patch needs; in a whole object the server drops them quietly */
	workload_release(&w);
	ck_assert(codec_decode_workload(in, &w, &fe) == 0);
	st = codec_encode_workload_status(&w, API_V1BETA2);
	ck_assert(json_is_null(json_object_get(st, "admission")));
	obj = json_deep_copy(in);
	json_object_set_new(obj, "status", st);
	{
		json_t *unknown = json_array();

		schema_prune(obj, schema, unknown);
		ck_assert_uint_eq(json_array_size(unknown), 0);
		ck_assert_uint_eq(json_object_size(json_object_get(obj, "status")), 0);
		json_decref(unknown);
	}
	schema_validate(obj, schema, &fe);
	ck_assert_msg(fe.n == 0, "%s", t_fe_text(&fe));
	json_decref(obj);
	workload_release(&w);
	json_decref(in);
	crdset_release(&set);
}
END_TEST

/* ------------------------------------------------------------------ */

Suite *crds_suite(void)
{
	Suite *s = suite_create("crds");
	TCase *tc;

	tc = tcase_create("structure");
	tcase_add_loop_test(tc, crd_structure, 0, (int)NCRDS);
	tcase_add_loop_test(tc, schema_structural, 0, (int)(2 * NCRDS));
	tcase_add_loop_test(tc, own_spelling, 0, (int)NCRDS);
	tcase_add_test(tc, pod_template_schema);
	suite_add_tcase(s, tc);

	tc = tcase_create("objects");
	tcase_add_test(tc, upstream_examples);
	tcase_add_loop_test(tc, codec_fixture, 0,
			    (int)(sizeof(codec_fixtures) / sizeof(codec_fixtures[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("invalid");
	tcase_add_loop_test(tc, invalid, 0,
			    (int)(sizeof(invalid_cases) / sizeof(invalid_cases[0])));
	tcase_add_test(tc, too_many);
	suite_add_tcase(s, tc);

	tc = tcase_create("defaults");
	tcase_add_loop_test(tc, defaults, 0,
			    (int)(sizeof(default_cases) / sizeof(default_cases[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("status");
	tcase_add_test(tc, cluster_queue_status);
	tcase_add_test(tc, local_queue_status);
	tcase_add_test(tc, workload_status);
	suite_add_tcase(s, tc);
	return s;
}
