/*
 * nsview: two sorted arrays, built unsorted and sorted once by
 * nsview_freeze. Duplicates from repeated set calls are resolved at
 * freeze time (the last labels win).
 */
#include "webhook/nsview.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/svec.h"

struct ns_entry {
	char *name;          /* owned */
	struct smap labels;
	size_t seq;          /* insertion order, for last-wins */
};

struct nsview {
	struct ns_entry *ns; /* owned; sorted by name once frozen */
	size_t nns;
	size_t capns;
	char **dflt;         /* owned names with a "default" LocalQueue */
	size_t ndflt;
	size_t capdflt;
	bool default_wpc;    /* a WorkloadPriorityClass "default" exists */
	bool frozen;
};

struct nsview *nsview_new(void)
{
	return xcalloc(1, sizeof(struct nsview));
}

void nsview_free(struct nsview *v)
{
	if (!v)
		return;
	for (size_t i = 0; i < v->nns; i++) {
		free(v->ns[i].name);
		smap_release(&v->ns[i].labels);
	}
	free(v->ns);
	for (size_t i = 0; i < v->ndflt; i++)
		free(v->dflt[i]);
	free(v->dflt);
	free(v);
}

void nsview_set_labels(struct nsview *v, const char *ns,
		       const struct smap *labels)
{
	struct ns_entry *e;

	if (v->frozen)
		BUG("nsview_set_labels on a frozen view");
	XGROW(v->ns, v->capns, v->nns + 1);
	e = &v->ns[v->nns];
	e->name = xstrdup(ns);
	smap_init(&e->labels);
	if (labels)
		smap_copy(&e->labels, labels);
	e->seq = v->nns++;
}

void nsview_set_default_lq(struct nsview *v, const char *ns)
{
	if (v->frozen)
		BUG("nsview_set_default_lq on a frozen view");
	XGROW(v->dflt, v->capdflt, v->ndflt + 1);
	v->dflt[v->ndflt++] = xstrdup(ns);
}

void nsview_set_default_wpc(struct nsview *v)
{
	if (v->frozen)
		BUG("nsview_set_default_wpc on a frozen view");
	v->default_wpc = true;
}

bool nsview_has_default_wpc(const struct nsview *v)
{
	return v && v->default_wpc;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct ns_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void nsview_freeze(struct nsview *v)
{
	size_t w = 0;

	if (v->frozen)
		return;
	if (v->nns) /* qsort's base must not be NULL, even for 0 items */
		qsort(v->ns, v->nns, sizeof(*v->ns), cmp_entry);
	/* keep the last entry of each name */
	for (size_t i = 0; i < v->nns; i++) {
		if (i + 1 < v->nns && !strcmp(v->ns[i].name, v->ns[i + 1].name)) {
			free(v->ns[i].name);
			smap_release(&v->ns[i].labels);
			continue;
		}
		v->ns[w++] = v->ns[i];
	}
	v->nns = w;
	if (v->ndflt)
		qsort(v->dflt, v->ndflt, sizeof(*v->dflt), svec_cmp);
	w = 0;
	for (size_t i = 0; i < v->ndflt; i++) {
		if (w && !strcmp(v->dflt[w - 1], v->dflt[i])) {
			free(v->dflt[i]);
			continue;
		}
		v->dflt[w++] = v->dflt[i];
	}
	v->ndflt = w;
	v->frozen = true;
}

bool nsview_is_frozen(const struct nsview *v)
{
	return v && v->frozen;
}

bool nsview_has_default_lq(const struct nsview *v, const char *ns)
{
	if (!v || !ns)
		return false;
	if (!v->frozen)
		BUG("nsview read before it was frozen");
	if (!v->ndflt) /* bsearch's base must not be NULL */
		return false;
	return bsearch(&ns, v->dflt, v->ndflt, sizeof(*v->dflt),
		       svec_cmp) != NULL;
}

static int cmp_key_entry(const void *key, const void *e)
{
	return strcmp(key, ((const struct ns_entry *)e)->name);
}

const struct smap *nsview_labels(const struct nsview *v, const char *ns)
{
	const struct ns_entry *e;

	if (!v || !ns)
		return NULL;
	if (!v->frozen)
		BUG("nsview read before it was frozen");
	if (!v->nns)
		return NULL;
	e = bsearch(ns, v->ns, v->nns, sizeof(*v->ns), cmp_key_entry);
	return e ? &e->labels : NULL;
}

size_t nsview_count(const struct nsview *v)
{
	return v ? v->nns : 0;
}
