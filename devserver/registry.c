/*
 * registry: built-in + CRD types, published as immutable snapshots with
 * their discovery and OpenAPI documents prebuilt (see registry.h for the
 * locking design). Document shapes follow k8s-api.md §2 and §3.1.
 */
#include "devserver/registry.h"

#include <openssl/sha.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "devserver/builtin.h"
#include "devserver/store.h"

#define CRD_KEY "apiextensions.k8s.io/customresourcedefinitions"

struct gvdoc {
	char *group;          /* "" core */
	char *version;
	char *resource_list;  /* APIResourceList JSON */
	char *oa_key;         /* "api/v1", "apis/<g>/<v>" */
	char *openapi;        /* the /openapi/v3/<key> document */
	char *hash;           /* hex SHA-256 of openapi */
};

struct groupdoc {
	char *group;
	char **versions;      /* nversions, preferred first */
	size_t nversions;
	char *api_group;      /* APIGroup JSON */
};

struct registry_snap {
	atomic_int refs;
	struct rtype *types;  /* ntypes */
	size_t ntypes;
	struct groupdoc *groups; /* ngroups; core first, built-ins, CRDs */
	size_t ngroups;
	struct gvdoc *gvs;    /* ngvs */
	size_t ngvs;
	char *docs[DOC_COUNT];
};

struct registry {
	pthread_mutex_t mu;   /* guards cur; held across a rebuild */
	struct registry_snap *cur;
};

static const char *const verbs_all[] = {
	"create", "delete", "deletecollection", "get", "list", "patch",
	"update", "watch", NULL,
};

/* ---- types ---- */

static void rtype_release(struct rtype *t)
{
	free(t->group);
	free(t->plural);
	free(t->singular);
	free(t->kind);
	free(t->list_kind);
	for (size_t i = 0; i < t->nshort; i++)
		free(t->short_names[i]);
	free(t->short_names);
	for (size_t i = 0; i < t->ncat; i++)
		free(t->categories[i]);
	free(t->categories);
	for (size_t i = 0; i < t->nversions; i++) {
		free(t->versions[i].name);
		free(t->versions[i].warning);
	}
	free(t->versions);
	free(t->key);
	json_decref(t->crd);
}

static char **dup_list(const char *const *src, size_t *n)
{
	char **v;

	*n = 0;
	if (!src)
		return NULL;
	while (src[*n])
		(*n)++;
	v = xcalloc(*n ? *n : 1, sizeof(*v));
	for (size_t i = 0; i < *n; i++)
		v[i] = xstrdup(src[i]);
	return v;
}

static char **text_list(const json_t *arr, size_t *n)
{
	char **v = xcalloc(json_array_size(arr) + 1, sizeof(*v));
	size_t i;
	json_t *s;

	*n = 0;
	json_array_foreach(arr, i, s)
		if (json_is_string(s))
			v[(*n)++] = xstrdup(json_string_value(s));
	return v;
}

static void type_from_builtin(struct rtype *t, const struct builtin *b)
{
	memset(t, 0, sizeof(*t));
	t->group = xstrdup(b->group);
	t->plural = xstrdup(b->plural);
	t->singular = xstrdup(b->singular);
	t->kind = xstrdup(b->kind);
	t->list_kind = xasprintf("%sList", b->kind);
	t->short_names = dup_list(b->short_names, &t->nshort);
	t->categories = dup_list(b->categories, &t->ncat);
	t->namespaced = b->namespaced;
	t->versions = xcalloc(1, sizeof(*t->versions));
	t->nversions = 1;
	t->versions[0].name = xstrdup(b->version);
	t->versions[0].served = true;
	t->versions[0].storage = true;
	t->versions[0].status = (b->flags & BI_STATUS) != 0;
	t->key = xasprintf("%s/%s", b->group, b->plural);
	t->bi = b;
}

static int version_sort(const void *a, const void *b)
{
	const struct rversion *x = a, *y = b;

	return builtin_version_cmp(x->name, y->name);
}

/* Fills t from a CRD object (referenced, not copied). Returns -1 when the
 * CRD cannot be served. */
static int type_from_crd(struct rtype *t, json_t *crd)
{
	const json_t *spec = json_object_get(crd, "spec");
	const json_t *names = json_object_get(spec, "names");
	const json_t *versions = json_object_get(spec, "versions"), *v;
	const char *group = jx_str(spec, "group");
	const char *plural = jx_str(names, "plural");
	const char *kind = jx_str(names, "kind"), *conv;
	size_t i, nserved = 0;

	if (!group || !plural || !kind || !json_array_size(versions))
		return -1;
	memset(t, 0, sizeof(*t));
	t->group = xstrdup(group);
	t->plural = xstrdup(plural);
	t->kind = xstrdup(kind);
	t->singular = xstrdup(jx_str(names, "singular") ?
			      jx_str(names, "singular") : plural);
	t->list_kind = jx_str(names, "listKind") ?
		       xstrdup(jx_str(names, "listKind")) :
		       xasprintf("%sList", kind);
	t->short_names = text_list(json_object_get(names, "shortNames"),
				   &t->nshort);
	t->categories = text_list(json_object_get(names, "categories"),
				  &t->ncat);
	t->namespaced = !jx_str(spec, "scope") ||
			strcmp(jx_str(spec, "scope"), "Cluster") != 0;
	t->versions = xcalloc(json_array_size(versions), sizeof(*t->versions));
	json_array_foreach(versions, i, v) {
		struct rversion *rv = &t->versions[t->nversions];
		const json_t *sub = json_object_get(v, "subresources");
		const char *name = jx_str(v, "name");

		if (!name)
			continue;
		t->nversions++;
		rv->name = xstrdup(name);
		rv->served = json_is_true(json_object_get(v, "served"));
		rv->storage = json_is_true(json_object_get(v, "storage"));
		rv->deprecated = json_is_true(json_object_get(v, "deprecated"));
		if (rv->deprecated)
			rv->warning = jx_str(v, "deprecationWarning")
				? xstrdup(jx_str(v, "deprecationWarning"))
				: xasprintf("%s/%s %s is deprecated", group,
					    name, kind);
		rv->schema = json_object_get(json_object_get(v, "schema"),
					     "openAPIV3Schema");
		rv->columns = json_object_get(v, "additionalPrinterColumns");
		rv->status = json_is_object(json_object_get(sub, "status"));
		rv->scale = json_is_object(json_object_get(sub, "scale"));
		nserved += rv->served;
	}
	qsort(t->versions, t->nversions, sizeof(*t->versions), version_sort);
	t->storage = 0;
	for (i = 0; i < t->nversions; i++)
		if (t->versions[i].storage)
			t->storage = i;
	conv = jx_str(json_object_get(spec, "conversion"), "strategy");
	t->conversion = conv && !strcmp(conv, "Webhook") ? CONV_WEBHOOK
							 : CONV_NONE;
	t->key = xasprintf("%s/%s", group, plural);
	t->crd = json_incref(crd);
	if (!nserved) {
		rtype_release(t);
		return -1;
	}
	return 0;
}

/* ---- lookups ---- */

size_t registry_ntypes(const struct registry_snap *s)
{
	return s->ntypes;
}

const struct rtype *registry_type_at(const struct registry_snap *s, size_t i)
{
	return i < s->ntypes ? &s->types[i] : NULL;
}

const struct rtype *registry_find(const struct registry_snap *s,
				  const char *group, const char *plural)
{
	for (size_t i = 0; i < s->ntypes; i++)
		if (!strcmp(s->types[i].group, group) &&
		    !strcmp(s->types[i].plural, plural))
			return &s->types[i];
	return NULL;
}

const struct rtype *registry_find_kind(const struct registry_snap *s,
				       const char *group, const char *kind)
{
	for (size_t i = 0; i < s->ntypes; i++)
		if (!strcmp(s->types[i].group, group) &&
		    !strcmp(s->types[i].kind, kind))
			return &s->types[i];
	return NULL;
}

const struct rversion *rtype_version(const struct rtype *t, const char *v)
{
	for (size_t i = 0; i < t->nversions; i++)
		if (t->versions[i].served && !strcmp(t->versions[i].name, v))
			return &t->versions[i];
	return NULL;
}

const struct rversion *rtype_preferred(const struct rtype *t)
{
	for (size_t i = 0; i < t->nversions; i++)
		if (t->versions[i].served)
			return &t->versions[i];
	return &t->versions[0];
}

const struct rversion *rtype_storage(const struct rtype *t)
{
	return &t->versions[t->storage];
}

const char *rtype_api_version(const struct rtype *t, const char *version,
			      char *buf, size_t n)
{
	if (*t->group)
		snprintf(buf, n, "%s/%s", t->group, version);
	else
		snprintf(buf, n, "%s", version);
	return buf;
}

bool registry_serves_gv(const struct registry_snap *s, const char *group,
			const char *version)
{
	for (size_t i = 0; i < s->ngvs; i++)
		if (!strcmp(s->gvs[i].group, group) &&
		    !strcmp(s->gvs[i].version, version))
			return true;
	return false;
}

const char *registry_doc(const struct registry_snap *s, enum registry_doc d)
{
	return s->docs[d];
}

const char *registry_resource_list(const struct registry_snap *s,
				   const char *group, const char *version)
{
	for (size_t i = 0; i < s->ngvs; i++)
		if (!strcmp(s->gvs[i].group, group) &&
		    !strcmp(s->gvs[i].version, version))
			return s->gvs[i].resource_list;
	return NULL;
}

const char *registry_api_group(const struct registry_snap *s,
			       const char *group)
{
	for (size_t i = 0; i < s->ngroups; i++)
		if (!strcmp(s->groups[i].group, group))
			return s->groups[i].api_group;
	return NULL;
}

const char *registry_openapi(const struct registry_snap *s, const char *key,
			     const char **hash)
{
	for (size_t i = 0; i < s->ngvs; i++)
		if (!strcmp(s->gvs[i].oa_key, key)) {
			if (hash)
				*hash = s->gvs[i].hash;
			return s->gvs[i].openapi;
		}
	return NULL;
}

/* ---- documents ---- */

static char *dump(json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	if (!s)
		BUG("json_dumps failed");
	return s;
}

static json_t *str_array(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i]));
	return a;
}

static json_t *verbs_json(void)
{
	json_t *a = json_array();

	for (size_t i = 0; verbs_all[i]; i++)
		json_array_append_new(a, json_string(verbs_all[i]));
	return a;
}

static json_t *gvk(const struct rtype *t, const char *version)
{
	return json_pack("{s:s, s:s, s:s}", "group", t->group, "version",
			 version, "kind", t->kind);
}

static int type_cmp(const void *a, const void *b)
{
	const struct rtype *const *x = a, *const *y = b;

	return strcmp((*x)->plural, (*y)->plural);
}

/* The types that serve group/version, sorted by plural, into a new
 * array of n pointers. */
static const struct rtype **types_in_gv(const struct registry_snap *s,
					const char *group, const char *version,
					size_t *n)
{
	const struct rtype **v = xcalloc(s->ntypes + 1, sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < s->ntypes; i++)
		if (!strcmp(s->types[i].group, group) &&
		    rtype_version(&s->types[i], version))
			v[(*n)++] = &s->types[i];
	qsort(v, *n, sizeof(*v), type_cmp);
	return v;
}

static json_t *agg_resource(const struct rtype *t, const char *version)
{
	json_t *r = json_object(), *subs = json_array();
	const struct rversion *rv = rtype_version(t, version);

	json_object_set_new(r, "resource", json_string(t->plural));
	json_object_set_new(r, "responseKind", gvk(t, version));
	json_object_set_new(r, "scope", json_string(t->namespaced
					? "Namespaced" : "Cluster"));
	json_object_set_new(r, "singularResource", json_string(t->singular));
	json_object_set_new(r, "verbs", verbs_json());
	if (t->nshort)
		json_object_set_new(r, "shortNames",
				    str_array(t->short_names, t->nshort));
	if (t->ncat)
		json_object_set_new(r, "categories",
				    str_array(t->categories, t->ncat));
	if (rv->status)
		json_array_append_new(subs, json_pack(
			"{s:s, s:o, s:[s,s,s]}", "subresource", "status",
			"responseKind", gvk(t, version), "verbs", "get",
			"patch", "update"));
	if (t->bi && (t->bi->flags & BI_FINALIZE))
		json_array_append_new(subs, json_pack(
			"{s:s, s:o, s:[s]}", "subresource", "finalize",
			"responseKind", gvk(t, version), "verbs", "update"));
	if (json_array_size(subs))
		json_object_set_new(r, "subresources", subs);
	else
		json_decref(subs);
	return r;
}

static json_t *agg_group(const struct registry_snap *s,
			 const struct groupdoc *g)
{
	json_t *versions = json_array();

	for (size_t v = 0; v < g->nversions; v++) {
		size_t n;
		const struct rtype **ts = types_in_gv(s, g->group,
						      g->versions[v], &n);
		json_t *res = json_array();

		for (size_t i = 0; i < n; i++)
			json_array_append_new(res,
				agg_resource(ts[i], g->versions[v]));
		free(ts);
		json_array_append_new(versions, json_pack(
			"{s:s, s:o, s:s}", "version", g->versions[v],
			"resources", res, "freshness", "Current"));
	}
	return json_pack("{s:{s:s, s:n}, s:o}", "metadata", "name", g->group,
			 "creationTimestamp", "versions", versions);
}

static char *agg_doc(const struct registry_snap *s, bool core,
		     const char *api_version)
{
	json_t *items = json_array();

	for (size_t i = 0; i < s->ngroups; i++)
		if ((*s->groups[i].group == '\0') == core)
			json_array_append_new(items, agg_group(s,
							       &s->groups[i]));
	return dump(json_pack("{s:s, s:s, s:{}, s:o}", "kind",
			      "APIGroupDiscoveryList", "apiVersion",
			      api_version, "metadata", "items", items));
}

static json_t *group_json(const struct groupdoc *g)
{
	json_t *vs = json_array();
	char gv[256];

	for (size_t v = 0; v < g->nversions; v++) {
		snprintf(gv, sizeof(gv), "%s/%s", g->group, g->versions[v]);
		json_array_append_new(vs, json_pack("{s:s, s:s}",
			"groupVersion", gv, "version", g->versions[v]));
	}
	snprintf(gv, sizeof(gv), "%s/%s", g->group, g->versions[0]);
	return json_pack("{s:s, s:o, s:{s:s, s:s}}", "name", g->group,
			 "versions", vs, "preferredVersion", "groupVersion",
			 gv, "version", g->versions[0]);
}

static char *resource_list(const struct registry_snap *s, const char *group,
			   const char *version)
{
	size_t n;
	const struct rtype **ts = types_in_gv(s, group, version, &n);
	json_t *res = json_array();
	char gv[256];

	for (size_t i = 0; i < n; i++) {
		const struct rtype *t = ts[i];
		json_t *r = json_pack("{s:s, s:s, s:b, s:s, s:o}", "name",
				      t->plural, "singularName", t->singular,
				      "namespaced", t->namespaced, "kind",
				      t->kind, "verbs", verbs_json());

		if (t->nshort)
			json_object_set_new(r, "shortNames",
				str_array(t->short_names, t->nshort));
		if (t->ncat)
			json_object_set_new(r, "categories",
				str_array(t->categories, t->ncat));
		json_array_append_new(res, r);
		if (rtype_version(t, version)->status) {
			char *sub = xasprintf("%s/status", t->plural);

			json_array_append_new(res, json_pack(
				"{s:s, s:s, s:b, s:s, s:[s,s,s]}", "name", sub,
				"singularName", "", "namespaced",
				t->namespaced, "kind", t->kind, "verbs", "get",
				"patch", "update"));
			free(sub);
		}
		if (t->bi && (t->bi->flags & BI_FINALIZE)) {
			char *sub = xasprintf("%s/finalize", t->plural);

			json_array_append_new(res, json_pack(
				"{s:s, s:s, s:b, s:s, s:[s]}", "name", sub,
				"singularName", "", "namespaced",
				t->namespaced, "kind", t->kind, "verbs",
				"update"));
			free(sub);
		}
	}
	free(ts);
	if (*group)
		snprintf(gv, sizeof(gv), "%s/%s", group, version);
	else
		snprintf(gv, sizeof(gv), "%s", version);
	return dump(json_pack("{s:s, s:s, s:s, s:o}", "kind",
			      "APIResourceList", "apiVersion", "v1",
			      "groupVersion", gv, "resources", res));
}

static json_t *oa_param(const char *name, const char *type)
{
	return json_pack("{s:s, s:s, s:{s:s, s:b}}", "name", name, "in",
			 "query", "schema", "type", type, "uniqueItems", 1);
}

/* The minimal per-GV OpenAPI v3 document of §3.1: one PATCH operation
 * per kind carrying x-kubernetes-group-version-kind and fieldValidation,
 * which is what kubectl's query-param verifier looks for. */
static char *openapi_doc(const struct registry_snap *s, const char *group,
			 const char *version)
{
	size_t n;
	const struct rtype **ts = types_in_gv(s, group, version, &n);
	json_t *paths = json_object();

	for (size_t i = 0; i < n; i++) {
		const struct rtype *t = ts[i];
		char *prefix = *group ? xasprintf("/apis/%s/%s", group, version)
				      : xasprintf("/api/%s", version);
		char *path = t->namespaced
			? xasprintf("%s/namespaces/{namespace}/%s/{name}",
				    prefix, t->plural)
			: xasprintf("%s/%s/{name}", prefix, t->plural);
		char *op = xasprintf("patch%s", t->kind);
		json_t *params = json_array();

		json_array_append_new(params, oa_param("dryRun", "string"));
		json_array_append_new(params,
				      oa_param("fieldManager", "string"));
		json_array_append_new(params,
				      oa_param("fieldValidation", "string"));
		json_array_append_new(params, oa_param("force", "boolean"));
		json_object_set_new(paths, path, json_pack(
			"{s:{s:s, s:s, s:o, s:o, s:{s:{s:s}}}}", "patch",
			"operationId", op, "x-kubernetes-action", "patch",
			"x-kubernetes-group-version-kind", gvk(t, version),
			"parameters", params, "responses", "200",
			"description", "OK"));
		free(prefix);
		free(path);
		free(op);
	}
	free(ts);
	return dump(json_pack("{s:s, s:{s:s, s:s}, s:o, s:{s:{}}}", "openapi",
			      "3.0.0", "info", "title", "Kubernetes",
			      "version", "v1.32.4", "paths", paths,
			      "components", "schemas"));
}

static char *sha_hex(const char *s)
{
	unsigned char md[SHA256_DIGEST_LENGTH];
	char *hex = xmalloc(2 * sizeof(md) + 1);

	SHA256((const unsigned char *)s, strlen(s), md);
	for (size_t i = 0; i < sizeof(md); i++)
		snprintf(hex + 2 * i, 3, "%02X", md[i]);
	return hex;
}

static struct groupdoc *group_for(struct registry_snap *s, const char *g)
{
	for (size_t i = 0; i < s->ngroups; i++)
		if (!strcmp(s->groups[i].group, g))
			return &s->groups[i];
	s->groups = xrealloc(s->groups, (s->ngroups + 1) * sizeof(*s->groups));
	memset(&s->groups[s->ngroups], 0, sizeof(*s->groups));
	s->groups[s->ngroups].group = xstrdup(g);
	return &s->groups[s->ngroups++];
}

static void group_add_version(struct groupdoc *g, const char *v)
{
	for (size_t i = 0; i < g->nversions; i++)
		if (!strcmp(g->versions[i], v))
			return;
	g->versions = xrealloc(g->versions,
			       (g->nversions + 1) * sizeof(*g->versions));
	g->versions[g->nversions++] = xstrdup(v);
}

static int vstr_cmp(const void *a, const void *b)
{
	return builtin_version_cmp(*(char *const *)a, *(char *const *)b);
}

static int group_name_cmp(const void *a, const void *b)
{
	const struct groupdoc *x = a, *y = b;

	return strcmp(x->group, y->group);
}

static void build_docs(struct registry_snap *s, size_t nbuiltin_groups)
{
	json_t *legacy = json_array(), *index = json_object();

	/* Built-in groups keep the table's order; CRD groups follow,
	 * sorted, as the real server lists them after its own. */
	qsort(s->groups + nbuiltin_groups, s->ngroups - nbuiltin_groups,
	      sizeof(*s->groups), group_name_cmp);
	for (size_t i = 0; i < s->ngroups; i++) {
		struct groupdoc *g = &s->groups[i];

		qsort(g->versions, g->nversions, sizeof(*g->versions),
		      vstr_cmp);
		if (*g->group) {
			json_t *gj = group_json(g);

			json_array_append(legacy, gj);
			json_object_set_new(gj, "kind", json_string("APIGroup"));
			json_object_set_new(gj, "apiVersion", json_string("v1"));
			g->api_group = dump(gj);
		}
		for (size_t v = 0; v < g->nversions; v++) {
			struct gvdoc *d;
			char *url;

			s->gvs = xrealloc(s->gvs, (s->ngvs + 1) * sizeof(*s->gvs));
			d = &s->gvs[s->ngvs++];
			d->group = xstrdup(g->group);
			d->version = xstrdup(g->versions[v]);
			d->resource_list = resource_list(s, g->group,
							 g->versions[v]);
			d->oa_key = *g->group
				? xasprintf("apis/%s/%s", g->group, g->versions[v])
				: xasprintf("api/%s", g->versions[v]);
			d->openapi = openapi_doc(s, g->group, g->versions[v]);
			d->hash = sha_hex(d->openapi);
			url = xasprintf("/openapi/v3/%s?hash=%s", d->oa_key,
					d->hash);
			json_object_set_new(index, d->oa_key, json_pack(
				"{s:s}", "serverRelativeURL", url));
			free(url);
		}
	}
	s->docs[DOC_AGG_API_V2] = agg_doc(s, true, "apidiscovery.k8s.io/v2");
	s->docs[DOC_AGG_API_V2BETA1] = agg_doc(s, true,
					       "apidiscovery.k8s.io/v2beta1");
	s->docs[DOC_AGG_APIS_V2] = agg_doc(s, false, "apidiscovery.k8s.io/v2");
	s->docs[DOC_AGG_APIS_V2BETA1] = agg_doc(s, false,
						"apidiscovery.k8s.io/v2beta1");
	s->docs[DOC_LEGACY_APIS] = dump(json_pack("{s:s, s:s, s:o}", "kind",
		"APIGroupList", "apiVersion", "v1", "groups", legacy));
	s->docs[DOC_OPENAPI_INDEX] = dump(json_pack("{s:o}", "paths", index));
}

static void snap_free(struct registry_snap *s)
{
	for (size_t i = 0; i < s->ntypes; i++)
		rtype_release(&s->types[i]);
	free(s->types);
	for (size_t i = 0; i < s->ngroups; i++) {
		for (size_t v = 0; v < s->groups[i].nversions; v++)
			free(s->groups[i].versions[v]);
		free(s->groups[i].versions);
		free(s->groups[i].group);
		free(s->groups[i].api_group);
	}
	free(s->groups);
	for (size_t i = 0; i < s->ngvs; i++) {
		free(s->gvs[i].group);
		free(s->gvs[i].version);
		free(s->gvs[i].resource_list);
		free(s->gvs[i].oa_key);
		free(s->gvs[i].openapi);
		free(s->gvs[i].hash);
	}
	free(s->gvs);
	for (size_t d = 0; d < DOC_COUNT; d++)
		free(s->docs[d]);
	free(s);
}

/* Builds a snapshot from the built-ins and crds (a JSON array, borrowed). */
static struct registry_snap *snap_build(const json_t *crds)
{
	struct registry_snap *s = xcalloc(1, sizeof(*s));
	size_t nbg;
	size_t i;
	json_t *crd;

	atomic_init(&s->refs, 1);
	s->types = xcalloc(builtin_ntypes + json_array_size(crds) + 1,
			   sizeof(*s->types));
	for (i = 0; i < builtin_ntypes; i++) {
		type_from_builtin(&s->types[s->ntypes++], &builtin_types[i]);
		group_add_version(group_for(s, builtin_types[i].group),
				  builtin_types[i].version);
	}
	nbg = s->ngroups;
	json_array_foreach(crds, i, crd) {
		struct rtype *t = &s->types[s->ntypes];
		const json_t *spec = json_object_get(crd, "spec");
		const char *g = jx_str(spec, "group");
		const char *p = JX_STR(spec, "names", "plural");

		if (!g || !p || registry_find(s, g, p))
			continue;
		if (type_from_crd(t, crd) < 0)
			continue;
		s->ntypes++;
		for (size_t v = 0; v < t->nversions; v++)
			if (t->versions[v].served)
				group_add_version(group_for(s, g),
						  t->versions[v].name);
	}
	build_docs(s, nbg);
	return s;
}

struct registry *registry_new(void)
{
	struct registry *r = xcalloc(1, sizeof(*r));
	json_t *none = json_array();

	pthread_mutex_init(&r->mu, NULL);
	r->cur = snap_build(none);
	json_decref(none);
	return r;
}

void registry_free(struct registry *r)
{
	if (!r)
		return;
	registry_put(r->cur);
	pthread_mutex_destroy(&r->mu);
	free(r);
}

struct registry_snap *registry_get(struct registry *r)
{
	struct registry_snap *s;

	pthread_mutex_lock(&r->mu);
	s = r->cur;
	atomic_fetch_add(&s->refs, 1);
	pthread_mutex_unlock(&r->mu);
	return s;
}

struct registry_snap *registry_ref(struct registry_snap *s)
{
	atomic_fetch_add(&s->refs, 1);
	return s;
}

void registry_put(struct registry_snap *s)
{
	if (s && atomic_fetch_sub(&s->refs, 1) == 1)
		snap_free(s);
}

void registry_rebuild(struct registry *r, struct store *st)
{
	struct store_list_opts o = { 0 };
	struct store_list_result res;
	struct registry_snap *old, *s;

	pthread_mutex_lock(&r->mu);
	store_list(st, CRD_KEY, &o, &res);
	s = snap_build(res.items);
	store_list_result_release(&res);
	old = r->cur;
	r->cur = s;
	pthread_mutex_unlock(&r->mu);
	registry_put(old);
}
