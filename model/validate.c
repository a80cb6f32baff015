/*
 * validate: Kueue's admission rules for ResourceFlavor, ClusterQueue,
 * Cohort, LocalQueue and WorkloadPriorityClass (kueue-api.md §2-6), and
 * the helpers every validator shares (validate_int.h). Workloads live in
 * validate_workload.c, batch/v1 Jobs in validate_job.c.
 *
 * DESIGN
 * A Kueue object meets two gates in a real cluster: the CRD schema
 * (OpenAPI markers + CEL rules, run by the apiserver) and then Kueue's
 * validating webhook. Each rule here is rendered in the words of the gate
 * that owns it, so users see what Kueue would have shown them. Where both
 * gates cover one rule, the schema wins (the webhook is never called once
 * the schema refused the object) and the rule is reported once, in the
 * schema's words: e.g. a borrowingLimit without a cohort is the CEL error
 * at "spec", not the webhook's per-field one. Unlike the two gates, we
 * report both families in one list, so a user fixes everything at once.
 * The codec has already reported JSON type and enum problems.
 *
 * Pure: no I/O, no clock; allocation only for messages and scratch arrays.
 */
#include "model/validate.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "model/selector.h"
#include "model/validate_int.h"

/* The patterns of Kueue's reference types, as the CRD YAML spells them. */
#define SUBDOMAIN_PATTERN \
	"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
#define LABEL_PATTERN "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"

/* ------------------------------------------------------------------ */
/* Shared helpers (validate_int.h) */

void validate_path_init(struct validate_path *p, const char *root)
{
	p->n = 0;
	p->s[0] = '\0';
	validate_path_push(p, "%s", root);
}

size_t validate_path_push(struct validate_path *p, const char *fmt, ...)
{
	size_t mark = p->n, room = sizeof(p->s) - p->n;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vsnprintf(p->s + p->n, room, fmt, ap);
	va_end(ap);
	if (r > 0 && (size_t)r < room)
		p->n += (size_t)r;
	else if (r > 0) /* cut: keep whole UTF-8 characters */
		p->n += utf8_trim_tail(p->s + p->n);
	return mark;
}

void validate_path_pop(struct validate_path *p, size_t mark)
{
	p->n = mark;
	p->s[mark] = '\0';
}

static const struct {
	size_t max;          /* MaxLength */
	const char *pattern; /* Pattern, as printed */
	bool (*match)(const char *s);
} ref_kinds[] = {
	[REF_SUBDOMAIN] = { 253, SUBDOMAIN_PATTERN,
			    is_dns1123_subdomain_pattern },
	[REF_LABEL] = { 63, LABEL_PATTERN, is_dns1123_label_pattern },
};

void validate_ref_name(struct field_errors *fe, const char *path,
		       const char *s, enum validate_ref kind)
{
	size_t n;

	if (!s)
		return;
	n = strlen(s);
	/* kube-openapi checks maxLength before pattern. */
	if (n > ref_kinds[kind].max)
		fe_too_long(fe, path, ref_kinds[kind].max);
	if (!ref_kinds[kind].match(s))
		fe_add(fe, FE_INVALID, path, s, true, "%s in body should match '%s'",
		       path, ref_kinds[kind].pattern);
}

/*
 * ValidateObjectMeta's name rules: a non-empty generateName is checked as
 * a prefix, reported as written; then the name. Unlike the apiserver,
 * which has generated the name by then, an object that only has a
 * generateName is accepted, since callers may validate before naming.
 */
void validate_object_name(const struct object_meta *m, struct field_errors *fe)
{
	bool has_prefix = m->generate_name && *m->generate_name;

	if (has_prefix)
		check_dns1123_subdomain_prefix(fe, "metadata.generateName",
					       m->generate_name);
	if (m->name && *m->name)
		check_dns1123_subdomain(fe, "metadata.name", m->name);
	else if (!has_prefix)
		fe_required(fe, "metadata.name",
			    "name or generateName is required");
}

void validate_cel(struct field_errors *fe, const char *path, const char *type,
		  const char *message)
{
	fe_add(fe, FE_INVALID, path, type, true, "%s", message);
}

void validate_minimum(struct field_errors *fe, const char *path, int64_t v,
		      int64_t min)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)v);
	fe_add(fe, FE_INVALID, path, buf, false,
	       "%s in body should be greater than or equal to %lld", path,
	       (long long)min);
}

void validate_min_items(struct field_errors *fe, const char *path,
			bool present, size_t n, size_t min)
{
	char buf[32];

	if (n >= min)
		return;
	if (!present) {
		fe_required(fe, path, NULL);
		return;
	}
	snprintf(buf, sizeof(buf), "%zu", n);
	fe_add(fe, FE_INVALID, path, buf, false,
	       "%s in body should have at least %zu items", path, min);
}

void validate_dup_map_key(struct field_errors *fe, const char *path,
			  const char *key, const char *value)
{
	char *q = go_quote(value ? value : "");
	char *v = xasprintf("map[string]interface {}{\"%s\":%s}", key, q);

	fe_add(fe, FE_DUPLICATE, path, v, false, NULL);
	free(v);
	free(q);
}

struct name_at {
	const char *name;
	size_t idx;
};

static int name_at_cmp(const void *a, const void *b)
{
	const struct name_at *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

void validate_mark_dups(const char *const *names, size_t n, bool *dup)
{
	struct name_at *v;
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		dup[i] = false;
	if (n < 2)
		return;
	v = xcalloc(n, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		if (!names[i])
			continue;
		v[m].name = names[i];
		v[m].idx = i;
		m++;
	}
	qsort(v, m, sizeof(*v), name_at_cmp);
	for (size_t i = 1; i < m; i++)
		if (!strcmp(v[i].name, v[i - 1].name))
			dup[v[i].idx] = true;
	free(v);
}

void validate_immutable(struct field_errors *fe, const char *path,
			const char *value, bool quote)
{
	fe_add(fe, FE_INVALID, path, value, quote, "field is immutable");
}

char *validate_quantity(const char *name, int64_t milli, char *buf)
{
	if (name)
		return resource_format(name, milli, buf, QUANTITY_BUF);
	return quantity_format(milli, QF_DECIMAL_SI, buf, QUANTITY_BUF);
}

bool validate_str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

const char *validate_go_pkg(enum api_version v)
{
	return v == API_V1BETA2 ? "v1beta2" : "v1beta1";
}

bool validate_opt_str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return !a && !b;
	return !strcmp(a, b);
}

static void nonnegative(struct field_errors *fe, const char *path,
			const char *resource, int64_t milli)
{
	char buf[QUANTITY_BUF];

	if (milli < 0)
		fe_add(fe, FE_INVALID, path,
		       validate_quantity(resource, milli, buf), true,
		       "must be greater than or equal to 0");
}

/* fairSharing.weight of a ClusterQueue or Cohort; Kueue reports it at the
 * fairSharing path itself. */
static void check_fair_sharing(bool has_weight, int64_t weight,
			       struct field_errors *fe)
{
	if (has_weight)
		nonnegative(fe, "spec.fairSharing", NULL, weight);
}

/* ------------------------------------------------------------------ */
/* ResourceFlavor */

#define RF_MAX_LABELS 8
#define RF_MAX_TAINTS 8
#define RF_MAX_TOLS 8

static bool text_empty(const char *s)
{
	return !s || !*s;
}

/* The CEL rules on spec.tolerations that the codec's enum checks do not
 * cover, in the order of the CRD; each fails at most once for the list. */
static bool tol_key_needs_exists(const struct toleration *t)
{
	return text_empty(t->key) && t->op != TOL_EXISTS;
}

static bool tol_seconds_need_no_execute(const struct toleration *t)
{
	return t->has_seconds && t->effect != EFFECT_NO_EXECUTE;
}

static bool tol_exists_has_value(const struct toleration *t)
{
	return t->op == TOL_EXISTS && !text_empty(t->value);
}

static const struct {
	bool (*fails)(const struct toleration *t);
	const char *message;
} toleration_rules[] = {
	{ tol_key_needs_exists,
	  "operator must be Exists when 'key' is empty, which means 'match all values and all keys'" },
	{ tol_seconds_need_no_execute,
	  "effect must be 'NoExecute' when 'tolerationSeconds' is set" },
	{ tol_exists_has_value,
	  "a value must be empty when 'operator' is 'Exists'" },
};

/*
 * The value Kueue's duplicate-taint error prints: the Go %#v of the
 * corev1.Taint. The detail is glued on, because fe_add's Duplicate kind
 * takes no detail and field.Duplicate + Detail renders "value: detail".
 */
static void duplicate_taint(struct field_errors *fe, const char *path,
			    const struct taint *t)
{
	char *k = go_quote(t->key ? t->key : "");
	char *v = go_quote(t->value ? t->value : "");
	char *e = go_quote(taint_effect_name(t->effect));
	char *ta = t->time_added ? go_quote(t->time_added) : NULL;
	char *s;

	if (ta)
		s = xasprintf("v1.Taint{Key:%s, Value:%s, Effect:%s, TimeAdded:&v1.Time{Time:%s}}: "
			      "taints must be unique by key and effect pair",
			      k, v, e, ta);
	else
		s = xasprintf("v1.Taint{Key:%s, Value:%s, Effect:%s, TimeAdded:(*v1.Time)(nil)}: "
			      "taints must be unique by key and effect pair",
			      k, v, e);
	fe_add(fe, FE_DUPLICATE, path, s, false, NULL);
	free(s);
	free(ta);
	free(e);
	free(v);
	free(k);
}

static void check_taints(const struct taint *taints, size_t n,
			 struct field_errors *fe)
{
	struct validate_path p;

	validate_path_init(&p, "spec.nodeTaints");
	if (n > RF_MAX_TAINTS)
		fe_too_many(fe, p.s, n, RF_MAX_TAINTS);
	for (size_t i = 0; i < n; i++) {
		const struct taint *t = &taints[i];
		size_t m = validate_path_push(&p, "[%zu]", i), k;
		bool dup = false;

		k = validate_path_push(&p, ".key");
		if (!t->key)
			fe_required(fe, p.s, NULL);
		else
			check_qualified_name(fe, p.s, t->key);
		validate_path_pop(&p, k);
		if (t->value) {
			k = validate_path_push(&p, ".value");
			check_label_value(fe, p.s, t->value);
			validate_path_pop(&p, k);
		}
		/* Pairwise, so only within the schema's limit (past it the
		 * webhook would never run). A missing effect is the codec's
		 * "Required value". */
		for (size_t j = 0; j < i && n <= RF_MAX_TAINTS && !dup; j++)
			dup = taints[j].effect == t->effect &&
			      validate_str_eq(taints[j].key, t->key);
		if (dup)
			duplicate_taint(fe, p.s, t);
		validate_path_pop(&p, m);
	}
}

static void check_tolerations(const char *root, const struct toleration *tols,
			      size_t n, size_t max, struct field_errors *fe)
{
	struct validate_path p;

	validate_path_init(&p, root);
	if (n > max)
		fe_too_many(fe, p.s, n, max);
	for (size_t r = 0; r < sizeof(toleration_rules) / sizeof(toleration_rules[0]); r++) {
		for (size_t i = 0; i < n; i++) {
			if (toleration_rules[r].fails(&tols[i])) {
				validate_cel(fe, p.s, "array",
					     toleration_rules[r].message);
				break;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		size_t m;

		if (text_empty(tols[i].key))
			continue;
		m = validate_path_push(&p, "[%zu].key", i);
		check_qualified_name(fe, p.s, tols[i].key);
		validate_path_pop(&p, m);
	}
}

static bool taint_equal(const struct taint *a, const struct taint *b)
{
	return validate_opt_str_eq(a->key, b->key) &&
	       validate_opt_str_eq(a->value, b->value) &&
	       a->effect == b->effect &&
	       validate_opt_str_eq(a->time_added, b->time_added);
}

/* CEL's self == oldSelf on the whole ResourceFlavorSpec. */
static bool rf_spec_equal(const struct resource_flavor *a,
			  const struct resource_flavor *b)
{
	if (!smap_equal(&a->node_labels, &b->node_labels) ||
	    a->ntaints != b->ntaints || a->ntols != b->ntols ||
	    !validate_opt_str_eq(a->topology_name, b->topology_name))
		return false;
	for (size_t i = 0; i < a->ntaints; i++)
		if (!taint_equal(&a->taints[i], &b->taints[i]))
			return false;
	for (size_t i = 0; i < a->ntols; i++)
		if (!toleration_equal(&a->tols[i], &b->tols[i]))
			return false;
	return true;
}

void validate_resource_flavor(const struct resource_flavor *rf,
			      const struct resource_flavor *old,
			      struct field_errors *fe)
{
	validate_object_name(&rf->meta, fe);

	/* CEL on spec (schema), in the order of the CRD. */
	if (rf->topology_name && rf->node_labels.n == 0)
		validate_cel(fe, "spec", "object",
			     "at least one nodeLabel is required when topology is set");
	if (old && old->topology_name && !rf_spec_equal(rf, old))
		validate_cel(fe, "spec", "object",
			     "resourceFlavorSpec are immutable when topologyName is set");

	/* metav1validation.ValidateLabels reports keys and values at the
	 * map's own path. */
	if (rf->node_labels.n > RF_MAX_LABELS)
		fe_too_many(fe, "spec.nodeLabels", rf->node_labels.n,
			    RF_MAX_LABELS);
	for (size_t i = 0; i < rf->node_labels.n; i++) {
		check_qualified_name(fe, "spec.nodeLabels",
				     rf->node_labels.v[i].key);
		check_label_value(fe, "spec.nodeLabels",
				  rf->node_labels.v[i].value);
	}
	check_taints(rf->taints, rf->ntaints, fe);
	check_tolerations("spec.tolerations", rf->tols, rf->ntols, RF_MAX_TOLS,
			  fe);
	validate_ref_name(fe, "spec.topologyName", rf->topology_name,
			  REF_SUBDOMAIN);
}

/* ------------------------------------------------------------------ */
/* Resource groups: ClusterQueue and Cohort */

#define MAX_GROUPS 16
#define MAX_COVERED 64          /* per group */
#define MAX_FLAVORS 64          /* per group */
#define MAX_RESOURCES 64        /* per flavor */
#define MAX_TOTAL_FLAVORS 256   /* ClusterQueue, across groups */
#define MAX_TOTAL_COVERED 256   /* ClusterQueue, across groups */
#define MAX_GROUP_COMBOS 512    /* ClusterQueue, flavors x resources */

struct rg_opts {
	const char *parent_word; /* "cohort" / "parent" in "must be nil when ..." */
	bool has_parent;         /* cohort / parentName non-empty */
	bool cel_borrowing;      /* borrowingLimit-without-parent reported by CEL */
	bool lending_le_nominal; /* ClusterQueue: lendingLimit <= nominalQuota */
};

/* Flat views of the groups, for duplicate detection across them. */
struct rg_dups {
	bool *covered;     /* webhook: resource seen in any earlier position */
	bool *flavor_same; /* schema: list-map key repeated within a group */
	bool *flavor_any;  /* webhook: flavor seen in any earlier position */
};

static void rg_dups_init(struct rg_dups *d, const struct resource_group *g,
			 size_t n)
{
	size_t nc = 0, nf = 0, ic = 0, jf = 0;
	const char **cn, **fn;

	for (size_t i = 0; i < n; i++) {
		nc += g[i].ncovered;
		nf += g[i].nflavors;
	}
	cn = xcalloc(nc + 1, sizeof(*cn));
	fn = xcalloc(nf + 1, sizeof(*fn));
	d->covered = xcalloc(nc + 1, sizeof(bool));
	d->flavor_same = xcalloc(nf + 1, sizeof(bool));
	d->flavor_any = xcalloc(nf + 1, sizeof(bool));
	for (size_t i = 0; i < n; i++) {
		size_t first = jf;

		for (size_t j = 0; j < g[i].ncovered; j++)
			cn[ic++] = g[i].covered[j];
		for (size_t j = 0; j < g[i].nflavors; j++)
			fn[jf++] = g[i].flavors[j].name;
		validate_mark_dups(fn + first, g[i].nflavors,
				   d->flavor_same + first);
	}
	validate_mark_dups(cn, nc, d->covered);
	validate_mark_dups(fn, nf, d->flavor_any);
	free(cn);
	free(fn);
}

static void rg_dups_release(struct rg_dups *d)
{
	free(d->covered);
	free(d->flavor_same);
	free(d->flavor_any);
}

static bool any_borrowing_limit(const struct resource_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < g[i].nflavors; j++)
			for (size_t k = 0; k < g[i].flavors[j].nres; k++)
				if (g[i].flavors[j].res[k].has_borrowing)
					return true;
	return false;
}

static void check_quota(const struct resource_quota *q, const char *covered,
			const struct rg_opts *o, struct validate_path *p,
			struct field_errors *fe)
{
	char buf[QUANTITY_BUF];
	size_t m;

	if (!validate_str_eq(q->name, covered)) {
		m = validate_path_push(p, ".name");
		fe_invalid(fe, p->s, q->name ? q->name : "",
			   "must match the name in coveredResources");
		validate_path_pop(p, m);
	}
	m = validate_path_push(p, ".nominalQuota");
	nonnegative(fe, p->s, q->name, q->nominal);
	validate_path_pop(p, m);
	if (q->has_borrowing) {
		m = validate_path_push(p, ".borrowingLimit");
		if (!o->has_parent && !o->cel_borrowing)
			fe_add(fe, FE_INVALID, p->s,
			       validate_quantity(q->name, q->borrowing, buf), true,
			       "must be nil when %s is empty", o->parent_word);
		nonnegative(fe, p->s, q->name, q->borrowing);
		validate_path_pop(p, m);
	}
	if (q->has_lending) {
		m = validate_path_push(p, ".lendingLimit");
		validate_quantity(q->name, q->lending, buf);
		nonnegative(fe, p->s, q->name, q->lending);
		if (!o->has_parent)
			fe_add(fe, FE_INVALID, p->s, buf, true,
			       "must be nil when %s is empty", o->parent_word);
		if (o->lending_le_nominal && q->lending > q->nominal)
			fe_add(fe, FE_INVALID, p->s, buf, true,
			       "must be less than or equal to the nominalQuota");
		validate_path_pop(p, m);
	}
}

static void check_flavor(const struct flavor_quotas *f,
			 const struct resource_group *g,
			 const struct rg_opts *o, struct validate_path *p,
			 struct field_errors *fe)
{
	const char **names = xcalloc(f->nres + 1, sizeof(*names));
	bool *dup = xcalloc(f->nres + 1, sizeof(*dup));
	size_t m = validate_path_push(p, ".resources");

	validate_min_items(fe, p->s, f->res != NULL, f->nres, 1);
	if (f->nres > MAX_RESOURCES)
		fe_too_many(fe, p->s, f->nres, MAX_RESOURCES);
	validate_path_pop(p, m);
	for (size_t k = 0; k < f->nres; k++)
		names[k] = f->res[k].name;
	validate_mark_dups(names, f->nres, dup);
	for (size_t k = 0; k < f->nres; k++) {
		m = validate_path_push(p, ".resources[%zu]", k);
		if (dup[k])
			validate_dup_map_key(fe, p->s, "name", f->res[k].name);
		/* Kueue stops at the end of coveredResources. */
		if (k < g->ncovered)
			check_quota(&f->res[k], g->covered[k], o, p, fe);
		validate_path_pop(p, m);
	}
	free(dup);
	free(names);
}

static void check_resource_groups(const struct resource_group *groups,
				  size_t n, const struct rg_opts *o,
				  struct field_errors *fe)
{
	struct validate_path p;
	struct rg_dups d;
	size_t ic = 0, jf = 0;

	validate_path_init(&p, "spec.resourceGroups");
	if (n > MAX_GROUPS)
		fe_too_many(fe, p.s, n, MAX_GROUPS);
	rg_dups_init(&d, groups, n);
	for (size_t i = 0; i < n; i++) {
		const struct resource_group *g = &groups[i];
		size_t mg = validate_path_push(&p, "[%zu]", i), m;
		bool counts_differ = false;

		for (size_t j = 0; j < g->nflavors; j++)
			counts_differ |= g->flavors[j].nres != g->ncovered;
		if (counts_differ)
			validate_cel(fe, p.s, "object",
				     "flavors must have the same number of resources as the coveredResources");

		m = validate_path_push(&p, ".coveredResources");
		validate_min_items(fe, p.s, g->covered != NULL, g->ncovered, 1);
		if (g->ncovered > MAX_COVERED)
			fe_too_many(fe, p.s, g->ncovered, MAX_COVERED);
		for (size_t j = 0; j < g->ncovered; j++, ic++) {
			size_t mj = validate_path_push(&p, "[%zu]", j);

			check_qualified_name(fe, p.s, g->covered[j]);
			if (d.covered[ic])
				fe_duplicate(fe, p.s, g->covered[j]);
			validate_path_pop(&p, mj);
		}
		validate_path_pop(&p, m);

		m = validate_path_push(&p, ".flavors");
		validate_min_items(fe, p.s, g->flavors != NULL, g->nflavors, 1);
		if (g->nflavors > MAX_FLAVORS)
			fe_too_many(fe, p.s, g->nflavors, MAX_FLAVORS);
		validate_path_pop(&p, m);
		for (size_t j = 0; j < g->nflavors; j++, jf++) {
			const struct flavor_quotas *f = &g->flavors[j];
			size_t mj = validate_path_push(&p, ".flavors[%zu]", j);

			if (d.flavor_same[jf])
				validate_dup_map_key(fe, p.s, "name", f->name);
			m = validate_path_push(&p, ".name");
			if (!f->name)
				fe_required(fe, p.s, NULL);
			validate_ref_name(fe, p.s, f->name, REF_SUBDOMAIN);
			/* Across groups only: within one group the schema's
			 * list-map check above has already refused it. */
			if (d.flavor_any[jf] && !d.flavor_same[jf])
				fe_duplicate(fe, p.s, f->name);
			validate_path_pop(&p, m);
			check_flavor(f, g, o, &p, fe);
			validate_path_pop(&p, mj);
		}
		validate_path_pop(&p, mg);
	}
	rg_dups_release(&d);
}

/* The ClusterQueue-only size limits of Kueue's webhook. */
static void check_totals(const struct resource_group *g, size_t n,
			 struct field_errors *fe)
{
	size_t flavors = 0, covered = 0;
	char buf[32];

	for (size_t i = 0; i < n; i++) {
		flavors += g[i].nflavors;
		covered += g[i].ncovered;
	}
	if (flavors > MAX_TOTAL_FLAVORS) {
		snprintf(buf, sizeof(buf), "%zu", flavors);
		fe_add(fe, FE_INVALID, "spec.resourceGroups", buf, false,
		       "total number of flavors across all resourceGroups must be ≤ %d, got %zu",
		       MAX_TOTAL_FLAVORS, flavors);
	}
	if (covered > MAX_TOTAL_COVERED) {
		snprintf(buf, sizeof(buf), "%zu", covered);
		fe_add(fe, FE_INVALID, "spec.resourceGroups", buf, false,
		       "total number of covered resources across all resourceGroups must be ≤ %d, got %zu",
		       MAX_TOTAL_COVERED, covered);
	}
	for (size_t i = 0; i < n; i++) {
		size_t combos = 0;
		char *path;

		for (size_t j = 0; j < g[i].nflavors; j++)
			combos += g[i].flavors[j].nres;
		if (combos <= MAX_GROUP_COMBOS)
			continue;
		snprintf(buf, sizeof(buf), "%zu", combos);
		path = xasprintf("spec.resourceGroups[%zu]", i);
		fe_add(fe, FE_INVALID, path, buf, false,
		       "number of flavor-resource combinations in a resourceGroup must be ≤ %d, got %zu",
		       MAX_GROUP_COMBOS, combos);
		free(path);
	}
}

/* ------------------------------------------------------------------ */
/* ClusterQueue */

#define MAX_AC_NAME 316 /* AdmissionCheckReference */

static void check_admission_checks(const struct cluster_queue *cq,
				   struct field_errors *fe)
{
	struct validate_path p;

	validate_path_init(&p, "spec.admissionChecks");
	for (size_t i = 0; i < cq->nadmission_checks; i++) {
		size_t m = validate_path_push(&p, "[%zu]", i);

		if (cq->admission_checks[i] &&
		    strlen(cq->admission_checks[i]) > MAX_AC_NAME)
			fe_too_long(fe, p.s, MAX_AC_NAME);
		validate_path_pop(&p, m);
	}
	validate_path_init(&p, "spec.admissionChecksStrategy.admissionChecks");
	for (size_t i = 0; i < cq->nac_rules; i++) {
		const struct admission_check_rule *r = &cq->ac_rules[i];
		size_t m = validate_path_push(&p, "[%zu]", i), k;

		k = validate_path_push(&p, ".name");
		if (r->name && strlen(r->name) > MAX_AC_NAME)
			fe_too_long(fe, p.s, MAX_AC_NAME);
		validate_path_pop(&p, k);
		for (size_t j = 0; j < r->non_flavors; j++) {
			k = validate_path_push(&p, ".onFlavors[%zu]", j);
			validate_ref_name(fe, p.s, r->on_flavors[j],
					  REF_SUBDOMAIN);
			validate_path_pop(&p, k);
		}
		validate_path_pop(&p, m);
	}
	/* v1beta1 only: v1beta2 has no spec.admissionChecks. */
	if (cq->has_ac_strategy && cq->nadmission_checks)
		fe_add(fe, FE_INVALID, "spec", "v1beta1.ClusterQueueSpec{...}",
		       false,
		       "Either AdmissionChecks or AdmissionCheckStrategy can be set, but not both");
}

static void check_concurrent_admission(const struct cluster_queue *cq,
				       const struct cluster_queue *old,
				       struct field_errors *fe)
{
	validate_ref_name(fe,
			  "spec.concurrentAdmissionPolicy.migration.constraints.lastAcceptableFlavorName",
			  cq->last_acceptable_flavor, REF_SUBDOMAIN);
	if (!old)
		return;
	if (cq->migration != old->migration ||
	    !validate_opt_str_eq(cq->last_acceptable_flavor,
				 old->last_acceptable_flavor))
		validate_immutable(fe, "spec.concurrentAdmissionPolicy",
				   cq->migration == MIG_UNSET ? "null" :
				   "v1beta2.ConcurrentAdmissionPolicy{...}",
				   false);
}

void validate_cluster_queue(const struct cluster_queue *cq,
			    const struct cluster_queue *old,
			    struct field_errors *fe)
{
	bool v2 = cq->version == API_V1BETA2;
	struct rg_opts o = {
		.parent_word = "cohort",
		.has_parent = !text_empty(cq->cohort),
		/* CEL's !has(self.cohort): an explicit "" slips past it and
		 * meets the webhook's per-field check instead. */
		.cel_borrowing = !cq->cohort,
		.lending_le_nominal = true,
	};

	validate_object_name(&cq->meta, fe);

	/* Schema: CEL rules and reference patterns. */
	if (o.cel_borrowing && any_borrowing_limit(cq->groups, cq->ngroups))
		validate_cel(fe, "spec", "object",
			     "borrowingLimit must be nil when cohort is empty");
	validate_ref_name(fe, v2 ? "spec.cohortName" : "spec.cohort",
			  cq->cohort, REF_SUBDOMAIN);
	if (cq->reclaim == RWC_NEVER && cq->borrow_policy != BWC_NEVER)
		validate_cel(fe, "spec.preemption", "object",
			     "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never");
	if (cq->fung_preference != FPREF_NONE &&
	    (cq->when_can_borrow != FUNG_TRY_NEXT_FLAVOR ||
	     cq->when_can_preempt != FUNG_TRY_NEXT_FLAVOR))
		validate_cel(fe, "spec.flavorFungibility", "object",
			     "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor");

	/* Webhook, in the order of Kueue's ValidateClusterQueue. */
	check_resource_groups(cq->groups, cq->ngroups, &o, fe);
	if (cq->has_ns_selector)
		label_selector_validate(&cq->ns_selector, "spec.namespaceSelector",
					fe);
	check_admission_checks(cq, fe);
	check_fair_sharing(cq->has_fs_weight, cq->fs_weight, fe);
	check_totals(cq->groups, cq->ngroups, fe);
	/*
	 * Not enforced: HEAD's "onFlavors must name flavors of this
	 * ClusterQueue" (validateAdmissionCheckOnFlavors). v0.14 has no such
	 * rule, and Kueue's own example admin/minimal-cq.yaml breaks it.
	 */
	if (v2)
		check_concurrent_admission(cq, old, fe);
}

/* ------------------------------------------------------------------ */
/* Cohort */

void validate_cohort(const struct cohort *c, const struct cohort *old,
		     struct field_errors *fe)
{
	struct rg_opts o = {
		.parent_word = "parent",
		.has_parent = !text_empty(c->parent),
		.cel_borrowing = false,   /* no CEL on CohortSpec */
		.lending_le_nominal = false,
	};

	(void)old; /* Kueue checks a Cohort update like a create */
	validate_object_name(&c->meta, fe);
	validate_ref_name(fe, "spec.parentName", c->parent, REF_SUBDOMAIN);
	/*
	 * A Cohort naming itself as parent is accepted, as Kueue accepts
	 * it: a file valid for Kueue must apply unchanged. The cohort tree
	 * disables every member of a cycle at run time, with a condition
	 * that says why.
	 */
	check_fair_sharing(c->has_fs_weight, c->fs_weight, fe);
	check_resource_groups(c->groups, c->ngroups, &o, fe);
}

/* ------------------------------------------------------------------ */
/* LocalQueue */

void validate_local_queue(const struct local_queue *lq,
			  const struct local_queue *old,
			  struct field_errors *fe)
{
	validate_object_name(&lq->meta, fe);
	/* Optional, as in Kueue's schema: a LocalQueue without one is simply
	 * inactive (ClusterQueueDoesNotExist). */
	validate_ref_name(fe, "spec.clusterQueue", lq->cluster_queue,
			  REF_SUBDOMAIN);
	/* CEL transition rule self == oldSelf: evaluated only when the
	 * field is present in both objects. */
	if (old && old->cluster_queue && lq->cluster_queue &&
	    strcmp(old->cluster_queue, lq->cluster_queue))
		validate_cel(fe, "spec.clusterQueue", "string",
			     "field is immutable");
}

/* ------------------------------------------------------------------ */
/* WorkloadPriorityClass */

#define WPC_MAX_DESCRIPTION 2048 /* v1beta2; characters */

/* OpenAPI maxLength counts characters, not bytes. */
static size_t utf8_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

void validate_workload_priority_class(const struct workload_priority_class *w,
				      const struct workload_priority_class *old,
				      struct field_errors *fe)
{
	(void)old; /* no update rules */
	validate_object_name(&w->meta, fe);
	if (!w->has_value)
		fe_required(fe, "value", NULL);
	if (w->version == API_V1BETA2 && w->description &&
	    utf8_chars(w->description) > WPC_MAX_DESCRIPTION)
		fe_too_long(fe, "description", WPC_MAX_DESCRIPTION);
}
