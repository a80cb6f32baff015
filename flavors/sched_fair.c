/*
 * sched_fair: the order in which a round processes its entries when fair
 * sharing is on (kueue-scheduler.md §2.5, Kueue's fair_sharing_iterator).
 *
 * Kueue runs a tournament for every pop: each cohort of the tree picks,
 * among its children's nominees, the one whose child would have the
 * lowest dominant resource share once that nominee is admitted
 * (preferring a child that would not borrow on the flavor-resources the
 * nominee asks for, then the lower share, then priority, then queue
 * time), and the root's pick is processed next. Recomputing every share
 * of the tree on every pop costs O(ClusterQueues) per decision.
 *
 * DESIGN
 * A share depends only on the node's own usage (fair.h), and processing
 * an entry changes the usage of its ClusterQueue and of that queue's
 * ancestors only. So the tournament is kept, not rerun: every cohort
 * holds its present children in a binary heap ordered by their keys at
 * that cohort (the share of the child with its nominee admitted, and the
 * borrowing flag), and its nominee is its heap's top. After an entry is
 * processed, only its path is repaired: its ClusterQueue leaves its
 * parent's heap, and each ancestor takes its new top and recomputes its
 * own key at its parent, one sift per level. A pop costs O(depth x
 * (log fanout + depth x flavor-resources)), independent of how many
 * ClusterQueues the tree has; building the tournament for a round costs
 * O(entries x depth) plus the heaps.
 *
 * Roots (a cohort tree's root, or a ClusterQueue without cohort) meet in
 * one more heap by their nominees' classical order: independent trees
 * share no quota, so their relative order only decides ties of the
 * round (Kueue takes them in map order, which is random).
 *
 * Ties are broken by uid after queue time, so the order is total and the
 * same inputs always give the same decisions.
 */
#include "flavors/sched.h"

#include <string.h>

#include "base/alloc.h"
#include "flavors/sched_int.h"

static struct sfnode *fnode(struct sched *s, int32_t node)
{
	struct sfnode *f = &s->fn[node];

	if (f->stamp != s->cycle) {
		memset(f, 0, sizeof(*f));
		f->stamp = s->cycle;
		f->ent = -1;
		f->hpos = -1;
		if (s->nftouched == s->capftouched)
			XGROW(s->ftouched, s->capftouched, s->nftouched + 1);
		s->ftouched[s->nftouched++] = node;
	}
	return f;
}

/* Entry order after the share: priority, queue time, uid. */
static int ent_tail_cmp(const struct sentry *a, const struct sentry *b)
{
	int c;

	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	if (a->uid_pre != b->uid_pre)
		return a->uid_pre < b->uid_pre ? -1 : 1;
	c = strcmp(a->uid, b->uid);
	return c < 0 ? -1 : c > 0;
}

/* Kueue's entryComparer.less at a cohort, as a total order: < 0 when
 * child x's nominee goes before child y's. */
static int kid_cmp(const struct sched *s, int32_t x, int32_t y)
{
	const struct sfnode *a = &s->fn[x], *b = &s->fn[y];
	int c;

	if (a->bon != b->bon)
		return a->bon ? 1 : -1;
	c = fair_cmp(&a->drs, &b->drs);
	if (c)
		return c;
	return ent_tail_cmp(&s->ent[a->ent], &s->ent[b->ent]);
}

/* Roots: the classical order of their nominees. */
static int root_cmp(const struct sched *s, int32_t x, int32_t y)
{
	return sched_entry_cmp(&s->ent[s->fn[x].ent], &s->ent[s->fn[y].ent]);
}

/* The heap node x lives in: its parent's, or the top heap. */
static int32_t *heap_of(struct sched *s, int32_t x, int32_t **n32,
			size_t **nsz, bool *top)
{
	int32_t p = tree_parent(s->t, x);

	*top = p < 0;
	if (*top) {
		*n32 = NULL;
		*nsz = &s->nftop;
		return s->ftop;
	}
	*n32 = &s->fn[p].hn;
	*nsz = NULL;
	return s->fheap + s->fn[p].hoff;
}

static int hcmp(const struct sched *s, bool top, int32_t x, int32_t y)
{
	return top ? root_cmp(s, x, y) : kid_cmp(s, x, y);
}

static void hset(struct sched *s, int32_t *h, size_t i, int32_t x)
{
	h[i] = x;
	s->fn[x].hpos = (int32_t)i;
}

static void sift(struct sched *s, int32_t *h, size_t n, bool top, size_t i)
{
	int32_t x = h[i];

	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (hcmp(s, top, x, h[p]) >= 0)
			break;
		hset(s, h, i, h[p]);
		i = p;
	}
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		int32_t best = x;

		if (l < n && hcmp(s, top, h[l], best) < 0) {
			m = l;
			best = h[l];
		}
		if (l + 1 < n && hcmp(s, top, h[l + 1], best) < 0)
			m = l + 1;
		if (m == i)
			break;
		hset(s, h, i, h[m]);
		i = m;
	}
	hset(s, h, i, x);
}

static size_t hlen(int32_t *n32, size_t *nsz)
{
	return n32 ? (size_t)*n32 : *nsz;
}

static void hsetlen(int32_t *n32, size_t *nsz, size_t n)
{
	if (n32)
		*n32 = (int32_t)n;
	else
		*nsz = n;
}

static void heap_push(struct sched *s, int32_t x)
{
	int32_t *n32;
	size_t *nsz, n;
	bool top;
	int32_t *h;

	if (tree_parent(s->t, x) < 0 && s->nftop == s->capftop)
		XGROW(s->ftop, s->capftop, s->nftop + 1);
	h = heap_of(s, x, &n32, &nsz, &top);
	n = hlen(n32, nsz);
	hset(s, h, n, x);
	hsetlen(n32, nsz, n + 1);
	sift(s, h, n + 1, top, n);
}

static void heap_remove(struct sched *s, int32_t x)
{
	int32_t *n32;
	size_t *nsz, n, i = (size_t)s->fn[x].hpos;
	bool top;
	int32_t *h = heap_of(s, x, &n32, &nsz, &top);

	n = hlen(n32, nsz) - 1;
	hsetlen(n32, nsz, n);
	s->fn[x].hpos = -1;
	if (i == n)
		return;
	hset(s, h, i, h[n]);
	sift(s, h, n, top, i);
}

static void heap_fix(struct sched *s, int32_t x)
{
	int32_t *n32;
	size_t *nsz;
	bool top;
	int32_t *h = heap_of(s, x, &n32, &nsz, &top);

	sift(s, h, hlen(n32, nsz), top, (size_t)s->fn[x].hpos);
}

/* x's key at its parent: its share and borrowing with its nominee's
 * usage added to the nominee's ClusterQueue (undone at once). */
static void key(struct sched *s, int32_t x)
{
	struct sfnode *f = &s->fn[x];
	const struct sentry *e = &s->ent[f->ent];
	const struct fr_val *u = e->asg ? e->asg->usage : NULL;
	size_t nu = e->asg ? e->asg->nusage : 0;
	size_t sp = tree_undo_savepoint(&s->undo);

	if (tree_parent(s->t, x) < 0)
		return;
	if (nu)
		tree_add_usage_undo(s->t, s->cqs[e->cq].node, u, nu, &s->undo);
	fair_drs(s->fair, s->t, x, &f->drs);
	f->bon = fair_borrowing_on(s->t, x, u, nu);
	tree_undo_to(s->t, &s->undo, sp);
}

int sched_entry_cmp(const struct sentry *a, const struct sentry *b)
{
	if (a->borrowing != b->borrowing)
		return a->borrowing < b->borrowing ? -1 : 1;
	return ent_tail_cmp(a, b);
}

void sched_fair_begin(struct sched *s)
{
	size_t cap = tree_node_cap(s->t), off = 0, maxh = 0;

	if (s->capfn < cap) {
		s->fn = xrealloc(s->fn, cap * sizeof(*s->fn));
		memset(s->fn + s->capfn, 0,
		       (cap - s->capfn) * sizeof(*s->fn));
		s->capfn = cap;
	}
	s->nftouched = 0;
	s->nftop = 0;
	/* 1. Every node on an entry's path, with its present children
	 *    counted. */
	for (size_t i = 0; i < s->nent; i++) {
		int32_t x = s->cqs[s->ent[i].cq].node;
		struct sfnode *f = fnode(s, x);

		f->ent = (int32_t)i;
		for (int32_t p = tree_parent(s->t, x); p >= 0;
		     x = p, p = tree_parent(s->t, p)) {
			bool fresh = s->fn[p].stamp != s->cycle;

			fnode(s, p)->nkids++;
			if (!fresh)
				break; /* the rest of the path is counted */
		}
	}
	for (size_t i = 0; i < s->nftouched; i++) {
		struct sfnode *f = &s->fn[s->ftouched[i]];
		size_t h = (size_t)tree_height(s->t, s->ftouched[i]);

		f->hoff = (int32_t)off;
		off += (size_t)f->nkids;
		if (h > maxh)
			maxh = h;
	}
	if (s->capfheap < off + 1)
		XGROW(s->fheap, s->capfheap, off + 1);
	/* 2. Bottom up by height: each node's nominee is its heap's top
	 *    once its children are in. Heights are small (a few levels),
	 *    so one pass per level. */
	for (size_t h = 0; h <= maxh; h++) {
		for (size_t i = 0; i < s->nftouched; i++) {
			int32_t x = s->ftouched[i];
			struct sfnode *f = &s->fn[x];

			if ((size_t)tree_height(s->t, x) != h)
				continue;
			if (tree_node_kind(s->t, x) == NODE_COHORT) {
				if (!f->hn)
					continue;
				f->ent = s->fn[s->fheap[f->hoff]].ent;
			}
			key(s, x);
			heap_push(s, x);
		}
	}
}

int32_t sched_fair_next(struct sched *s)
{
	if (!s->nftop)
		return -1;
	return s->fn[s->ftop[0]].ent;
}

void sched_fair_done(struct sched *s, int32_t ent)
{
	int32_t x = s->cqs[s->ent[ent].cq].node;

	heap_remove(s, x);
	for (int32_t p = tree_parent(s->t, x); p >= 0;
	     p = tree_parent(s->t, p)) {
		struct sfnode *f = &s->fn[p];

		if (!f->hn) {
			f->ent = -1;
			heap_remove(s, p);
			continue;
		}
		f->ent = s->fn[s->fheap[f->hoff]].ent;
		key(s, p);
		heap_fix(s, p);
	}
}
