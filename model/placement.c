/*
 * placement: taints, tolerations, node affinity and Kueue's flavor check
 * (see placement.h).
 *
 * toleration_tolerates is core/v1 Toleration.ToleratesTaint verbatim in
 * meaning, including its corner: a toleration with an empty key and
 * operator Equal tolerates any key whose taint value equals its value
 * (API validation refuses such tolerations, the matcher does not).
 * flavor_matches_selectors is Kueue's flavorSelector plus the
 * nodeaffinity match against a fake node carrying the flavor's nodeLabels
 * (pkg/scheduler/flavorassigner), with the flavor's own label keys as the
 * filter, as in current Kueue.
 *
 * Owns only what its structs say; no I/O.
 */
#include "model/placement.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static const char *const effect_names[] = {
	[EFFECT_ALL] = "",
	[EFFECT_NO_SCHEDULE] = "NoSchedule",
	[EFFECT_PREFER_NO_SCHEDULE] = "PreferNoSchedule",
	[EFFECT_NO_EXECUTE] = "NoExecute",
};

#define NEFFECTS (sizeof(effect_names) / sizeof(effect_names[0]))

const char *taint_effect_name(enum taint_effect e)
{
	if ((size_t)e >= NEFFECTS)
		BUG("bad taint effect %d", (int)e);
	return effect_names[e];
}

int taint_effect_parse(const char *s, bool allow_all, enum taint_effect *out)
{
	if (!s || !*s) {
		if (!allow_all)
			return -1;
		*out = EFFECT_ALL;
		return 0;
	}
	for (size_t i = EFFECT_NO_SCHEDULE; i < NEFFECTS; i++) {
		if (!strcmp(s, effect_names[i])) {
			*out = (enum taint_effect)i;
			return 0;
		}
	}
	return -1;
}

/* NULL reads as "" so a half-built struct cannot crash a matcher. */
static const char *or_empty(const char *s)
{
	return s ? s : "";
}

void taint_release(struct taint *t)
{
	FREE_AND_NULL(t->key);
	FREE_AND_NULL(t->value);
	FREE_AND_NULL(t->time_added);
}

/* dst is treated as uninitialized (there is no taint_init): it is
 * overwritten, never freed. */
void taint_copy(struct taint *dst, const struct taint *src)
{
	dst->key = xstrdup_or_null(src->key);
	dst->value = xstrdup_or_null(src->value);
	dst->effect = src->effect;
	dst->time_added = xstrdup_or_null(src->time_added);
}

void toleration_release(struct toleration *t)
{
	FREE_AND_NULL(t->key);
	FREE_AND_NULL(t->value);
}

/* As taint_copy: dst is overwritten, never freed. */
void toleration_copy(struct toleration *dst, const struct toleration *src)
{
	dst->key = xstrdup_or_null(src->key);
	dst->op = src->op;
	dst->value = xstrdup_or_null(src->value);
	dst->effect = src->effect;
	dst->has_seconds = src->has_seconds;
	dst->seconds = src->seconds;
}

/* Field-by-field equality, tolerationSeconds included (two tolerations
 * that differ only there evict at different times, so both are kept when
 * lists are merged). */
bool toleration_equal(const struct toleration *a, const struct toleration *b)
{
	if (strcmp(or_empty(a->key), or_empty(b->key)) ||
	    a->op != b->op ||
	    strcmp(or_empty(a->value), or_empty(b->value)) ||
	    a->effect != b->effect || a->has_seconds != b->has_seconds)
		return false;
	return !a->has_seconds || a->seconds == b->seconds;
}

bool toleration_tolerates(const struct toleration *tol, const struct taint *t)
{
	const char *key = or_empty(tol->key);

	if (tol->effect != EFFECT_ALL && tol->effect != t->effect)
		return false;
	if (*key && strcmp(key, or_empty(t->key)))
		return false;
	switch (tol->op) {
	case TOL_EQUAL:
		return !strcmp(or_empty(tol->value),
			       or_empty(t->value));
	case TOL_EXISTS:
		return true;
	}
	return false;
}

static bool tolerated_by(const struct taint *t, const struct toleration *tols,
			 size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (toleration_tolerates(&tols[i], t))
			return true;
	return false;
}

const struct taint *taints_find_untolerated(const struct taint *taints,
					    size_t ntaints,
					    const struct toleration *tols_a,
					    size_t na,
					    const struct toleration *tols_b,
					    size_t nb)
{
	for (size_t i = 0; i < ntaints; i++) {
		const struct taint *t = &taints[i];

		/* Kueue filters to the effects that keep pods off nodes. */
		if (t->effect != EFFECT_NO_SCHEDULE &&
		    t->effect != EFFECT_NO_EXECUTE)
			continue;
		if (!tolerated_by(t, tols_a, na) &&
		    !tolerated_by(t, tols_b, nb))
			return t;
	}
	return NULL;
}

void node_affinity_init(struct node_affinity *a)
{
	a->present = false;
	a->terms = NULL;
	a->n = 0;
	a->cap = 0;
}

void node_affinity_release(struct node_affinity *a)
{
	for (size_t i = 0; i < a->n; i++)
		label_selector_release(&a->terms[i].exprs);
	free(a->terms);
	node_affinity_init(a);
}

void node_affinity_copy(struct node_affinity *dst,
			const struct node_affinity *src)
{
	if (dst == src)
		return; /* releasing dst first would free src */
	node_affinity_release(dst);
	for (size_t i = 0; i < src->n; i++) {
		struct node_term *t = node_affinity_add_term(dst);

		label_selector_copy(&t->exprs, &src->terms[i].exprs);
		t->nfields = src->terms[i].nfields;
	}
	dst->present = src->present;
}

/* Also sets present: a term can only belong to a required affinity. */
struct node_term *node_affinity_add_term(struct node_affinity *a)
{
	struct node_term *t;

	XGROW(a->terms, a->cap, a->n + 1);
	t = &a->terms[a->n++];
	label_selector_init(&t->exprs);
	t->nfields = 0;
	a->present = true;
	return t;
}

/*
 * Kubernetes' LazyErrorNodeSelector: terms ORed; a term without
 * matchExpressions is skipped (matches nothing) — including one that has
 * only matchFields, since a label map carries no node name to test them
 * against; matchFields of other terms are likewise not evaluated. No
 * terms at all matches nothing.
 */
bool node_affinity_matches(const struct node_affinity *a,
			   const struct smap *labels)
{
	if (!a || !a->present)
		return true;
	for (size_t i = 0; i < a->n; i++) {
		const struct label_selector *e = &a->terms[i].exprs;

		if (e->n && label_selector_matches(e, labels))
			return true;
	}
	return false;
}

/* The term restricted to the keys in node_labels matches them; nkept
 * receives how many expressions survived the filter. */
static bool filtered_term_matches(const struct label_selector *e,
				  const struct smap *node_labels,
				  size_t *nkept)
{
	bool ok = true;

	*nkept = 0;
	for (size_t i = 0; i < e->n; i++) {
		if (!smap_has(node_labels, e->reqs[i].key))
			continue;
		(*nkept)++;
		if (!sel_req_matches(&e->reqs[i], node_labels))
			ok = false;
	}
	return ok;
}

bool flavor_matches_selectors(const struct smap *node_labels,
			      const struct smap *node_selector,
			      const struct node_affinity *affinity)
{
	bool matched = false;

	/* 1. nodeSelector: keys the flavor defines must carry equal values */
	for (size_t i = 0; node_selector && i < node_selector->n; i++) {
		const char *have = smap_get(node_labels,
					    node_selector->v[i].key);

		if (have && strcmp(have, node_selector->v[i].value))
			return false;
	}
	if (!affinity || !affinity->present)
		return true;

	/*
	 * 2. required affinity, each term filtered to the flavor's keys. A
	 * term left empty makes the whole affinity match (terms are ORed),
	 * whatever the other terms say, and so does an affinity without
	 * terms: Kueue then builds no affinity at all.
	 */
	for (size_t i = 0; i < affinity->n; i++) {
		size_t nkept;
		bool ok = filtered_term_matches(&affinity->terms[i].exprs,
						node_labels, &nkept);

		if (!nkept)
			return true;
		if (ok)
			matched = true;
	}
	return matched || affinity->n == 0;
}
