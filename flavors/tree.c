/*
 * tree: the cohort forest and its quota arithmetic (kueue-scheduler.md §3,
 * after Kueue's pkg/cache/scheduler/resource_node.go). Owns every node,
 * quota and usage cell of one tree value; never does I/O, never reads a
 * clock, keeps no global state. Allocation goes through base/alloc.h.
 *
 * DESIGN
 *
 * Nodes are slots of two flat arrays: `node` (links, flags, name) and
 * `cell`, a nodes x stride matrix of struct cell {nominal, borrowing,
 * lending, subtree, usage} indexed [node * stride + fr]. One cell holds
 * everything a walk up the tree reads for one level, so available() costs
 * one cache line per ancestor. stride >= tree_nfr; growing it re-lays the
 * matrix out (rare: a new flavor x resource pair). Free slots are chained
 * through next_sib and reused.
 *
 * Names: node names are NUL-terminated strings in one arena (`names`,
 * offsets in the nodes), found through an open-addressing index of node
 * ids keyed by (kind, name). Removal leaves garbage that tree_node
 * compacts before the arena would grow, which is why tree_node_name's
 * pointer lives only until the next tree_node. The fr table is shared
 * between copies, copy-on-write: tree_copy takes a reference; a tree that
 * interns a new pair while the table is shared forks it. The fork keeps
 * a reference to the old table, whose strings it points to, so every fr
 * name a tree ever returned stays valid for that tree's life. Reference
 * counts are atomic, so copies may live on different threads.
 *
 * tree_copy is therefore: one struct, four memcpy's (nodes, cells, index,
 * names) and one reference count increment.
 *
 * Aggregates. A node x is LINKED when its contribution is counted in its
 * parent's aggregates: subtree - localQuota to the parent's subtree and
 * max(0, usage - localQuota) to the parent's usage (§3). Every change
 * (usage, quota, link) computes x's contribution before and after and
 * pushes the difference up the LINKED chain, stopping as soon as a level's
 * contribution does not move. For usage this is exactly §3's
 * addUsage/removeUsage: when x's usage grows by v the contribution grows
 * by max(0, v - LocalAvailable); when it shrinks by v <= usage it shrinks
 * by min(v, usage - localQuota) when positive. Quota and link changes cost
 * nfr x depth, never a whole-tree recomputation.
 *
 * Cycles (Kueue: hierarchy/cycle.go; a cohort tree with a cycle is not
 * recomputed and its CQs are inactive). Here the nodes on a cycle are
 * flagged N_ON_CYCLE and are not LINKED: aggregation runs over the forest
 * left after cutting every cycle member's parent link, so every number
 * stays well defined and tree_check can verify it. A node is "in cycle"
 * (tree_in_cycle) when it or an ancestor is on a cycle; such CQs admit
 * nothing: available and potential are 0, fits is false. Their usage is
 * still counted, as Kueue keeps admitted workloads in its cache. Breaking
 * the cycle re-links the members and restores exact aggregates.
 *
 * Arithmetic: quotas and usages are milli-units up to INT64_MAX
 * (TREE_UNLIMITED for nil limits). Aggregates use wrapping adds (defined
 * behaviour, and exactly invertible), so totals past INT64_MAX in one
 * cohort (8 PiB of memory) would be wrong but never undefined; a CQ's
 * own usage and the queries saturate.
 */
#include "flavors/tree.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define NIL (-1)
#define UNLIM TREE_UNLIMITED

enum {
	N_ALIVE = 1,     /* slot holds a node */
	N_ON_CYCLE = 2,  /* on a parent-link cycle (not merely below one) */
	N_LINKED = 4,    /* contribution counted in the parent's aggregates */
	N_IMPLICIT = 8,  /* cohort kept only for its children (no object) */
};

struct tnode {
	int32_t parent;      /* cohort id or NIL */
	int32_t first_child; /* every child, LINKED or not; NIL when none */
	int32_t last_child;
	int32_t next_sib;    /* sibling chain; also the free-slot chain */
	int32_t prev_sib;
	int32_t nchildren;   /* length of the child chain */
	int32_t height;      /* over LINKED children; see tree_height */
	uint32_t name_off;   /* into tree.names, NUL-terminated */
	uint32_t hash;       /* of (kind, name) */
	uint8_t kind;        /* enum node_kind */
	uint8_t flags;       /* N_* */
	int64_t weight;      /* fairSharing.weight, milli-units (1000) */
	uint64_t ustamp;     /* tree.ugen when its usage last changed */
};

struct cell {
	int64_t nominal;   /* >= 0 */
	int64_t borrowing; /* >= 0, or UNLIM when nil */
	int64_t lending;   /* >= 0, or UNLIM when nil */
	int64_t subtree;   /* §3 SubtreeQuota: CQ nominal; cohort nominal +
			      children's (subtree - localQuota) */
	int64_t usage;     /* §3 Usage, >= 0; cohort: sum of children's
			      max(0, usage - localQuota) */
};

static const struct cell cell_default = { 0, UNLIM, UNLIM, 0, 0 };

/* Interned (flavor, resource) pairs, shared copy-on-write (see DESIGN). */
struct frtab {
	atomic_long refs;
	struct frtab *base; /* owns the strings of ids < own_from; ref held */
	int own_from;
	int n, cap;
	char **name;        /* [cap] "flavor\0resource\0" */
	uint32_t *hash;     /* [cap] */
	int32_t *slot;      /* open addressing over ids; NIL empty */
	size_t nslot;       /* power of two, > 2n */
};

struct tree {
	struct frtab *fr;     /* reference held */
	size_t stride;        /* cells per node; >= fr->n */
	struct tnode *node;   /* [cap] */
	struct cell *cell;    /* [cap * stride] */
	size_t cap;
	size_t nslot;         /* ids < nslot have been used */
	size_t nlive;
	int32_t free_head;    /* free-slot chain through next_sib */
	int32_t *index;       /* open addressing over node ids; NIL empty */
	size_t nindex;        /* power of two, >= 2 * nlive */
	char *names;          /* arena of node names */
	size_t names_len;
	size_t names_cap;
	size_t names_garbage; /* bytes of removed nodes' names */
	uint64_t qgen;        /* bumped by every quota or shape change */
	uint64_t ugen;        /* bumped by every usage change */
};

struct tree_undo_op {
	int32_t cq;
	int32_t fr;
	int64_t v;  /* amount actually added or removed */
	bool add;
};

/* ---- arithmetic ---- */

static int64_t sat_add(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

static int64_t sat_sub(int64_t a, int64_t b)
{
	if (b < 0 && a > INT64_MAX + b)
		return INT64_MAX;
	if (b > 0 && a < INT64_MIN + b)
		return INT64_MIN;
	return a - b;
}

/* Wrapping, for the invertible aggregates (see DESIGN). */
static int64_t wadd(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

static int64_t wsub(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a - (uint64_t)b);
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* §3 localQuota: capacity never lent to the parent. */
static int64_t local_quota(const struct cell *c)
{
	if (c->lending == UNLIM)
		return 0;
	return max64(0, sat_sub(c->subtree, c->lending));
}

/* §3 LocalAvailable. */
static int64_t local_available(const struct cell *c)
{
	return max64(0, sat_sub(local_quota(c), c->usage));
}

/* What c adds to its parent: subtree and usage past localQuota. */
static void contrib(const struct cell *c, int64_t *sc, int64_t *uc)
{
	int64_t l = local_quota(c);

	*sc = wsub(c->subtree, l);
	*uc = c->usage > l ? wsub(c->usage, l) : 0;
}

/* ---- hashing ---- */

static uint32_t fnv(uint32_t h, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

static uint32_t node_hash(enum node_kind kind, const char *name)
{
	unsigned char k = (unsigned char)kind;

	return fnv(fnv(2166136261u, (const char *)&k, 1), name, strlen(name));
}

static uint32_t fr_hash(const char *flavor, const char *resource)
{
	/* The NUL of flavor separates the two names. */
	return fnv(fnv(2166136261u, flavor, strlen(flavor) + 1), resource,
		   strlen(resource));
}

static size_t pow2_at_least(size_t n)
{
	size_t p = 8;

	while (p < n)
		p <<= 1;
	return p;
}

/* ---- the fr table ---- */

static struct frtab *frtab_new(void)
{
	struct frtab *f = xcalloc(1, sizeof(*f));

	atomic_init(&f->refs, 1);
	f->nslot = 8;
	f->slot = xmalloc(f->nslot * sizeof(*f->slot));
	memset(f->slot, 0xff, f->nslot * sizeof(*f->slot));
	return f;
}

static void frtab_unref(struct frtab *f)
{
	while (f && atomic_fetch_sub(&f->refs, 1) == 1) {
		struct frtab *base = f->base;

		for (int i = f->own_from; i < f->n; i++)
			free(f->name[i]);
		free(f->name);
		free(f->hash);
		free(f->slot);
		free(f);
		f = base;
	}
}

static const char *fr_flavor_of(const struct frtab *f, int id)
{
	return f->name[id];
}

static const char *fr_resource_of(const struct frtab *f, int id)
{
	return f->name[id] + strlen(f->name[id]) + 1;
}

static int frtab_find(const struct frtab *f, const char *flavor,
		      const char *resource)
{
	uint32_t h = fr_hash(flavor, resource);
	size_t mask = f->nslot - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		int32_t id = f->slot[i];

		if (id == NIL)
			return -1;
		if (f->hash[id] == h &&
		    !strcmp(fr_flavor_of(f, id), flavor) &&
		    !strcmp(fr_resource_of(f, id), resource))
			return id;
	}
}

static void frtab_slot_put(struct frtab *f, int id)
{
	size_t mask = f->nslot - 1;
	size_t i = f->hash[id] & mask;

	while (f->slot[i] != NIL)
		i = (i + 1) & mask;
	f->slot[i] = id;
}

/*
 * A private copy of a shared table: the caller's reference to old moves
 * into the fork's base, which keeps old's strings (and every name pointer
 * handed out so far) alive.
 */
static struct frtab *frtab_fork(struct frtab *old)
{
	struct frtab *f = xcalloc(1, sizeof(*f));

	atomic_init(&f->refs, 1);
	f->base = old;
	f->own_from = old->n;
	f->n = old->n;
	f->cap = old->n;
	f->name = xmalloc((size_t)f->cap * sizeof(*f->name));
	f->hash = xmalloc((size_t)f->cap * sizeof(*f->hash));
	if (old->n) {
		memcpy(f->name, old->name, (size_t)old->n * sizeof(*f->name));
		memcpy(f->hash, old->hash, (size_t)old->n * sizeof(*f->hash));
	}
	f->nslot = old->nslot;
	f->slot = xmalloc(f->nslot * sizeof(*f->slot));
	memcpy(f->slot, old->slot, f->nslot * sizeof(*f->slot));
	return f;
}

static int frtab_add(struct frtab *f, const char *flavor, const char *resource)
{
	size_t lf = strlen(flavor), lr = strlen(resource);
	char *s = xmalloc(lf + lr + 2);
	int id = f->n;

	memcpy(s, flavor, lf + 1);
	memcpy(s + lf + 1, resource, lr + 1);
	if (f->n == f->cap) {
		size_t cap = (size_t)f->cap;

		XGROW(f->name, cap, (size_t)f->n + 1);
		f->hash = xrealloc(f->hash, cap * sizeof(*f->hash));
		f->cap = (int)cap;
	}
	f->name[id] = s;
	f->hash[id] = fr_hash(flavor, resource);
	f->n++;
	if ((size_t)f->n * 2 > f->nslot) {
		free(f->slot);
		f->nslot = pow2_at_least((size_t)f->n * 4);
		f->slot = xmalloc(f->nslot * sizeof(*f->slot));
		memset(f->slot, 0xff, f->nslot * sizeof(*f->slot));
		for (int i = 0; i < f->n; i++)
			frtab_slot_put(f, i);
	} else {
		frtab_slot_put(f, id);
	}
	return id;
}

/* ---- node slots, names, index ---- */

static struct cell *cell_at(const struct tree *t, int32_t node, int fr)
{
	return &t->cell[(size_t)node * t->stride + (size_t)fr];
}

static const char *name_of(const struct tree *t, int32_t id)
{
	return t->names + t->node[id].name_off;
}

static bool is_alive(const struct tree *t, int node)
{
	return node >= 0 && (size_t)node < t->nslot &&
	       (t->node[node].flags & N_ALIVE);
}

static void need_node(const struct tree *t, int node)
{
	if (!is_alive(t, node))
		BUG("tree: no node %d", node);
}

static void need_fr(const struct tree *t, int fr)
{
	if (fr < 0 || fr >= t->fr->n)
		BUG("tree: no fr %d", fr);
}

static void need_cq(const struct tree *t, int cq)
{
	need_node(t, cq);
	if (t->node[cq].kind != NODE_CQ)
		BUG("tree: node %d is not a ClusterQueue", cq);
}

static void index_put(struct tree *t, int32_t id)
{
	size_t mask = t->nindex - 1;
	size_t i = t->node[id].hash & mask;

	while (t->index[i] != NIL)
		i = (i + 1) & mask;
	t->index[i] = id;
}

static void index_rebuild(struct tree *t, size_t nindex)
{
	free(t->index);
	t->nindex = nindex;
	t->index = xmalloc(nindex * sizeof(*t->index));
	memset(t->index, 0xff, nindex * sizeof(*t->index));
	for (size_t i = 0; i < t->nslot; i++)
		if (t->node[i].flags & N_ALIVE)
			index_put(t, (int32_t)i);
}

/* Linear-probing delete with backward shift: no tombstones. */
static void index_del(struct tree *t, int32_t id)
{
	size_t mask = t->nindex - 1;
	size_t i = t->node[id].hash & mask;

	while (t->index[i] != id)
		i = (i + 1) & mask;
	for (size_t j = (i + 1) & mask; t->index[j] != NIL;
	     j = (j + 1) & mask) {
		size_t home = t->node[t->index[j]].hash & mask;

		/* Move j into the hole i unless its home lies in (i, j]. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			t->index[i] = t->index[j];
			i = j;
		}
	}
	t->index[i] = NIL;
}

/* Rewrites the arena with live names only (offsets change). */
static void names_compact(struct tree *t)
{
	char *old = t->names;
	size_t len = 0;

	t->names = xmalloc(t->names_cap);
	for (size_t i = 0; i < t->nslot; i++) {
		struct tnode *n = &t->node[i];
		size_t l;

		if (!(n->flags & N_ALIVE))
			continue;
		l = strlen(old + n->name_off) + 1;
		memcpy(t->names + len, old + n->name_off, l);
		n->name_off = (uint32_t)len;
		len += l;
	}
	free(old);
	t->names_len = len;
	t->names_garbage = 0;
}

static uint32_t names_put(struct tree *t, const char *name)
{
	size_t l = strlen(name) + 1;
	uint32_t off;

	if (t->names_len + l > t->names_cap && t->names_garbage &&
	    t->names_garbage * 2 >= t->names_len)
		names_compact(t);
	if (t->names_len + l > UINT32_MAX)
		BUG("tree: node name arena past 4 GiB");
	XGROW(t->names, t->names_cap, t->names_len + l);
	off = (uint32_t)t->names_len;
	memcpy(t->names + off, name, l);
	t->names_len += l;
	return off;
}

static void cells_reset(struct tree *t, int32_t id)
{
	for (size_t f = 0; f < t->stride; f++)
		t->cell[(size_t)id * t->stride + f] = cell_default;
}

static int32_t slot_alloc(struct tree *t)
{
	int32_t id;

	if (t->free_head != NIL) {
		id = t->free_head;
		t->free_head = t->node[id].next_sib;
		return id;
	}
	if (t->nslot == t->cap) {
		size_t cap = t->cap;

		if (t->nslot >= INT32_MAX)
			BUG("tree: too many nodes");
		XGROW(t->node, cap, t->nslot + 1);
		t->cell = xrealloc(t->cell,
				   cap * (t->stride ? t->stride : 1) *
					   sizeof(*t->cell));
		t->cap = cap;
	}
	return (int32_t)t->nslot++;
}

/* Re-lays the cell matrix out with a wider stride (new columns default). */
static void restride(struct tree *t, size_t stride)
{
	struct cell *c = xmalloc((t->cap ? t->cap : 1) * stride * sizeof(*c));

	for (size_t i = 0; i < t->nslot; i++) {
		for (size_t f = 0; f < stride; f++)
			c[i * stride + f] = f < t->stride ?
				t->cell[i * t->stride + f] : cell_default;
	}
	free(t->cell);
	t->cell = c;
	t->stride = stride;
}

/* ---- lifecycle ---- */

struct tree *tree_new(void)
{
	struct tree *t = xcalloc(1, sizeof(*t));

	t->fr = frtab_new();
	t->stride = 4;
	t->free_head = NIL;
	t->nindex = 8;
	t->index = xmalloc(t->nindex * sizeof(*t->index));
	memset(t->index, 0xff, t->nindex * sizeof(*t->index));
	t->cell = xmalloc(sizeof(*t->cell));
	return t;
}

void tree_free(struct tree *t)
{
	if (!t)
		return;
	frtab_unref(t->fr);
	free(t->node);
	free(t->cell);
	free(t->index);
	free(t->names);
	free(t);
}

struct tree *tree_copy(const struct tree *t)
{
	struct tree *c = xmalloc(sizeof(*c));
	size_t ncell = t->nslot * t->stride;

	*c = *t;
	atomic_fetch_add(&t->fr->refs, 1);
	c->cap = t->nslot;
	c->node = xmalloc((t->nslot ? t->nslot : 1) * sizeof(*c->node));
	c->cell = xmalloc((ncell ? ncell : 1) * sizeof(*c->cell));
	c->index = xmalloc(t->nindex * sizeof(*c->index));
	c->names_cap = t->names_len;
	c->names = xmalloc(t->names_len ? t->names_len : 1);
	if (t->nslot)
		memcpy(c->node, t->node, t->nslot * sizeof(*c->node));
	if (ncell)
		memcpy(c->cell, t->cell, ncell * sizeof(*c->cell));
	memcpy(c->index, t->index, t->nindex * sizeof(*c->index));
	if (t->names_len)
		memcpy(c->names, t->names, t->names_len);
	return c;
}

/* ---- interning ---- */

int tree_fr(struct tree *t, const char *flavor, const char *resource)
{
	int id = frtab_find(t->fr, flavor, resource);

	if (id >= 0)
		return id;
	if (atomic_load(&t->fr->refs) > 1)
		t->fr = frtab_fork(t->fr);
	id = frtab_add(t->fr, flavor, resource);
	if ((size_t)t->fr->n > t->stride)
		restride(t, t->stride * 2);
	return id;
}

int tree_fr_find(const struct tree *t, const char *flavor,
		 const char *resource)
{
	return frtab_find(t->fr, flavor, resource);
}

size_t tree_nfr(const struct tree *t)
{
	return (size_t)t->fr->n;
}

const char *tree_fr_flavor(const struct tree *t, int fr)
{
	need_fr(t, fr);
	return fr_flavor_of(t->fr, fr);
}

const char *tree_fr_resource(const struct tree *t, int fr)
{
	need_fr(t, fr);
	return fr_resource_of(t->fr, fr);
}

/* ---- nodes ---- */

int tree_node_find(const struct tree *t, enum node_kind kind,
		   const char *name)
{
	uint32_t h = node_hash(kind, name);
	size_t mask = t->nindex - 1;

	for (size_t i = h & mask;; i = (i + 1) & mask) {
		int32_t id = t->index[i];

		if (id == NIL)
			return -1;
		if (t->node[id].hash == h && t->node[id].kind == kind &&
		    !strcmp(name_of(t, id), name))
			return id;
	}
}

int tree_node(struct tree *t, enum node_kind kind, const char *name)
{
	int id = tree_node_find(t, kind, name);
	struct tnode *n;

	if (id >= 0)
		return id;
	if (kind != NODE_CQ && kind != NODE_COHORT)
		BUG("tree: bad node kind %d", (int)kind);
	id = slot_alloc(t);
	n = &t->node[id];
	memset(n, 0, sizeof(*n)); /* not N_ALIVE: names_put may compact */
	n->name_off = names_put(t, name);
	n->parent = n->first_child = n->last_child = NIL;
	n->next_sib = n->prev_sib = NIL;
	n->kind = (uint8_t)kind;
	n->hash = node_hash(kind, name);
	n->flags = N_ALIVE;
	n->weight = TREE_WEIGHT_DEFAULT;
	n->ustamp = ++t->ugen;
	t->qgen++;
	cells_reset(t, id);
	t->nlive++;
	if (t->nlive * 2 > t->nindex)
		index_rebuild(t, t->nindex * 2);
	else
		index_put(t, id);
	return id;
}

enum node_kind tree_node_kind(const struct tree *t, int node)
{
	need_node(t, node);
	return (enum node_kind)t->node[node].kind;
}

const char *tree_node_name(const struct tree *t, int node)
{
	need_node(t, node);
	return name_of(t, node);
}

int tree_parent(const struct tree *t, int node)
{
	need_node(t, node);
	return t->node[node].parent;
}

size_t tree_children(const struct tree *t, int cohort, int *out, size_t max)
{
	size_t n = 0;

	need_node(t, cohort);
	for (int32_t c = t->node[cohort].first_child; c != NIL;
	     c = t->node[c].next_sib) {
		if (n < max)
			out[n] = c;
		n++;
	}
	return n;
}

static void child_unlink(struct tree *t, int32_t x)
{
	struct tnode *n = &t->node[x];
	struct tnode *p = &t->node[n->parent];

	if (n->prev_sib != NIL)
		t->node[n->prev_sib].next_sib = n->next_sib;
	else
		p->first_child = n->next_sib;
	if (n->next_sib != NIL)
		t->node[n->next_sib].prev_sib = n->prev_sib;
	else
		p->last_child = n->prev_sib;
	p->nchildren--;
	n->next_sib = n->prev_sib = NIL;
}

static void child_link(struct tree *t, int32_t x, int32_t parent)
{
	struct tnode *n = &t->node[x];
	struct tnode *p = &t->node[parent];

	n->prev_sib = p->last_child;
	n->next_sib = NIL;
	if (p->last_child != NIL)
		t->node[p->last_child].next_sib = x;
	else
		p->first_child = x;
	p->last_child = x;
	p->nchildren++;
}

/* Frees a node with no parent and no children. */
static void node_free(struct tree *t, int32_t x)
{
	struct tnode *n = &t->node[x];

	t->qgen++;
	index_del(t, x);
	t->names_garbage += strlen(name_of(t, x)) + 1;
	cells_reset(t, x);
	n->flags = 0;
	n->next_sib = t->free_head;
	t->free_head = x;
	t->nlive--;
}

/* ---- aggregates ---- */

/*
 * x's cell for fr changed; (osc, ouc) was its contribution before. Push
 * the difference up the LINKED chain until a level stops moving.
 */
static void propagate(struct tree *t, int32_t x, int fr, int64_t osc,
		      int64_t ouc)
{
	while (t->node[x].flags & N_LINKED) {
		int32_t p = t->node[x].parent;
		struct cell *pc = cell_at(t, p, fr);
		int64_t sc, uc, psc, puc;

		contrib(cell_at(t, x, fr), &sc, &uc);
		if (sc == osc && uc == ouc)
			return;
		contrib(pc, &psc, &puc);
		pc->subtree = wadd(pc->subtree, wsub(sc, osc));
		pc->usage = wadd(pc->usage, wsub(uc, ouc));
		t->node[p].ustamp = ++t->ugen;
		x = p;
		osc = psc;
		ouc = puc;
	}
}

/* Adds (ds, du) to p's aggregates for fr and propagates. */
static void apply_delta(struct tree *t, int32_t p, int fr, int64_t ds,
			int64_t du)
{
	struct cell *pc = cell_at(t, p, fr);
	int64_t osc, ouc;

	contrib(pc, &osc, &ouc);
	pc->subtree = wadd(pc->subtree, ds);
	pc->usage = wadd(pc->usage, du);
	t->node[p].ustamp = ++t->ugen;
	propagate(t, p, fr, osc, ouc);
}

static int32_t height_of(const struct tree *t, int32_t x)
{
	int32_t h = 0;

	for (int32_t c = t->node[x].first_child; c != NIL;
	     c = t->node[c].next_sib)
		if ((t->node[c].flags & N_LINKED) && t->node[c].height + 1 > h)
			h = t->node[c].height + 1;
	return h;
}

/* x's LINKED children changed: recompute up while heights move. */
static void height_fix(struct tree *t, int32_t x)
{
	while (x != NIL) {
		int32_t h = height_of(t, x);

		if (h == t->node[x].height)
			return;
		t->node[x].height = h;
		if (!(t->node[x].flags & N_LINKED))
			return;
		x = t->node[x].parent;
	}
}

/* x became LINKED: heights above can only grow. */
static void height_raise(struct tree *t, int32_t x)
{
	while (t->node[x].flags & N_LINKED) {
		int32_t p = t->node[x].parent;

		if (t->node[x].height + 1 <= t->node[p].height)
			return;
		t->node[p].height = t->node[x].height + 1;
		x = p;
	}
}

/* Takes x's contribution out of its parent's chain; x stays a child. */
static void detach(struct tree *t, int32_t x)
{
	int32_t p = t->node[x].parent;

	for (int fr = 0; fr < t->fr->n; fr++) {
		int64_t sc, uc;

		contrib(cell_at(t, x, fr), &sc, &uc);
		apply_delta(t, p, fr, wsub(0, sc), wsub(0, uc));
	}
	t->node[x].flags &= (uint8_t)~N_LINKED;
	if (t->node[x].height + 1 == t->node[p].height)
		height_fix(t, p);
}

/* Counts x's contribution in its parent's chain. */
static void attach(struct tree *t, int32_t x)
{
	int32_t p = t->node[x].parent;

	t->node[x].flags |= N_LINKED;
	for (int fr = 0; fr < t->fr->n; fr++) {
		int64_t sc, uc;

		contrib(cell_at(t, x, fr), &sc, &uc);
		apply_delta(t, p, fr, sc, uc);
	}
	height_raise(t, x);
}

/* Walks parent links from x; BUGs rather than loop on corrupt links. */
#define WALK_GUARD(t, steps) \
	do { \
		if (++(steps) > (t)->nslot) \
			BUG("tree: unflagged parent-link cycle"); \
	} while (0)

/*
 * Sets x's parent to p (NIL: root), keeping aggregates, heights and cycle
 * flags exact:
 *  1. take x's contribution out of its old parent q;
 *  2. if x was on a cycle, that cycle is broken now: unflag its members
 *     (none of them is LINKED) and remember them;
 *  3. move x between child lists;
 *  4. if walking up from p reaches x, x closed a new cycle: detach its
 *     LINKED members and flag them all;
 *  5. attach x and the old cycle's members that are no longer on one.
 * The LINKED edges stay a subset of an acyclic set throughout, so every
 * propagation terminates.
 *  6. an implicit q left without children goes away, as in Kueue.
 */
static void relink(struct tree *t, int32_t x, int32_t p)
{
	int32_t q = t->node[x].parent;
	int32_t *old = NULL;
	size_t nold = 0, steps = 0;

	t->qgen++;
	if (q == p)
		return;
	/* 1. */
	if (t->node[x].flags & N_LINKED)
		detach(t, x);
	/* 2. */
	if (t->node[x].flags & N_ON_CYCLE) {
		old = xmalloc(t->nlive * sizeof(*old));
		for (int32_t y = q; y != x; y = t->node[y].parent) {
			WALK_GUARD(t, steps);
			old[nold++] = y;
			t->node[y].flags &= (uint8_t)~N_ON_CYCLE;
		}
		t->node[x].flags &= (uint8_t)~N_ON_CYCLE;
	}
	/* 3. */
	if (q != NIL)
		child_unlink(t, x);
	t->node[x].parent = p;
	if (p != NIL)
		child_link(t, x, p);
	/* 4. */
	steps = 0;
	for (int32_t y = p; y != NIL; y = t->node[y].parent) {
		WALK_GUARD(t, steps);
		if (t->node[y].flags & N_ON_CYCLE)
			break;
		if (y != x)
			continue;
		for (int32_t m = p; m != x; m = t->node[m].parent) {
			if (t->node[m].flags & N_LINKED)
				detach(t, m);
		}
		for (int32_t m = p; m != x; m = t->node[m].parent)
			t->node[m].flags |= N_ON_CYCLE;
		t->node[x].flags |= N_ON_CYCLE;
		break;
	}
	/* 5. */
	if (p != NIL && !(t->node[x].flags & N_ON_CYCLE))
		attach(t, x);
	for (size_t i = 0; i < nold; i++) {
		int32_t m = old[i];

		if (!(t->node[m].flags & (N_ON_CYCLE | N_LINKED)))
			attach(t, m);
	}
	free(old);
	/* 6. */
	if (q != NIL && (t->node[q].flags & N_IMPLICIT) &&
	    t->node[q].nchildren == 0)
		node_free(t, q);
}

void tree_set_parent(struct tree *t, int node, int parent)
{
	need_node(t, node);
	if (parent != NIL) {
		need_node(t, parent);
		if (t->node[parent].kind != NODE_COHORT)
			BUG("tree: parent %d is not a cohort", parent);
	}
	/* Setting a cohort's parent is a Cohort spec: an object exists. */
	t->node[node].flags &= (uint8_t)~N_IMPLICIT;
	relink(t, node, parent);
}

bool tree_in_cycle(const struct tree *t, int node)
{
	size_t steps = 0;

	need_node(t, node);
	for (int32_t y = node; y != NIL; y = t->node[y].parent) {
		WALK_GUARD(t, steps);
		if (t->node[y].flags & N_ON_CYCLE)
			return true;
	}
	return false;
}

int tree_root(const struct tree *t, int node)
{
	size_t steps = 0;
	int32_t y = node;

	need_node(t, node);
	for (;;) {
		WALK_GUARD(t, steps);
		if (t->node[y].flags & N_ON_CYCLE)
			return -1;
		if (t->node[y].parent == NIL)
			return y;
		y = t->node[y].parent;
	}
}

int tree_height(const struct tree *t, int node)
{
	need_node(t, node);
	return t->node[node].height;
}

/* ---- quotas ---- */

static void set_quota(struct tree *t, int32_t node, int fr, int64_t nominal,
		      int64_t borrowing, int64_t lending)
{
	struct cell *c = cell_at(t, node, fr);
	int64_t osc, ouc;

	t->qgen++;
	contrib(c, &osc, &ouc);
	c->subtree = wadd(c->subtree, wsub(nominal, c->nominal));
	c->nominal = nominal;
	c->borrowing = borrowing;
	c->lending = lending;
	propagate(t, node, fr, osc, ouc);
}

static void clear_quotas(struct tree *t, int32_t node)
{
	for (int fr = 0; fr < t->fr->n; fr++)
		set_quota(t, node, fr, 0, UNLIM, UNLIM);
}

void tree_set_quota(struct tree *t, int node, int fr, int64_t nominal,
		    int64_t borrowing, int64_t lending)
{
	need_node(t, node);
	need_fr(t, fr);
	if (nominal < 0 || borrowing < 0 || lending < 0)
		BUG("tree: negative quota %lld/%lld/%lld", (long long)nominal,
		    (long long)borrowing, (long long)lending);
	t->node[node].flags &= (uint8_t)~N_IMPLICIT;
	set_quota(t, node, fr, nominal, borrowing, lending);
}

void tree_clear_quotas(struct tree *t, int node)
{
	need_node(t, node);
	t->node[node].flags &= (uint8_t)~N_IMPLICIT;
	clear_quotas(t, node);
}

int64_t tree_nominal(const struct tree *t, int node, int fr)
{
	need_node(t, node);
	need_fr(t, fr);
	return cell_at(t, node, fr)->nominal;
}

int64_t tree_borrowing_limit(const struct tree *t, int node, int fr)
{
	need_node(t, node);
	need_fr(t, fr);
	return cell_at(t, node, fr)->borrowing;
}

int64_t tree_lending_limit(const struct tree *t, int node, int fr)
{
	need_node(t, node);
	need_fr(t, fr);
	return cell_at(t, node, fr)->lending;
}

int64_t tree_subtree_quota(const struct tree *t, int node, int fr)
{
	need_node(t, node);
	need_fr(t, fr);
	return cell_at(t, node, fr)->subtree;
}

/*
 * Kueue's DeleteCohort: a cohort with children survives as an implicit
 * one (no quota, no parent) and goes when its last child leaves.
 */
void tree_node_remove(struct tree *t, int node)
{
	need_node(t, node);
	/* First, so that a self-loop's only child (itself) is gone. */
	relink(t, node, NIL);
	if (t->node[node].nchildren == 0) {
		node_free(t, node);
		return;
	}
	clear_quotas(t, node);
	t->node[node].flags |= N_IMPLICIT;
	t->node[node].weight = TREE_WEIGHT_DEFAULT;
}

void tree_set_weight(struct tree *t, int node, int64_t milli)
{
	need_node(t, node);
	t->node[node].weight = milli < 0 ? 0 : milli;
	t->qgen++;
}

bool tree_node_exists(const struct tree *t, int node)
{
	return is_alive(t, node);
}

uint64_t tree_usage_stamp(const struct tree *t, int node)
{
	need_node(t, node);
	return t->node[node].ustamp;
}

size_t tree_node_cap(const struct tree *t)
{
	return t->nslot;
}

uint64_t tree_quota_gen(const struct tree *t)
{
	return t->qgen;
}

int64_t tree_weight(const struct tree *t, int node)
{
	need_node(t, node);
	return t->node[node].weight;
}

/* ---- usage ---- */

static void need_usage_args(const struct tree *t, int cq, int fr, int64_t v)
{
	need_cq(t, cq);
	need_fr(t, fr);
	if (v < 0)
		BUG("tree: negative usage %lld", (long long)v);
}

/* §3 addUsage (see DESIGN: the contribution delta is max(0, v - la)). */
void tree_add_usage(struct tree *t, int cq, int fr, int64_t v)
{
	struct cell *c;
	int64_t osc, ouc;

	need_usage_args(t, cq, fr, v);
	c = cell_at(t, cq, fr);
	contrib(c, &osc, &ouc);
	c->usage = sat_add(c->usage, v);
	t->node[cq].ustamp = ++t->ugen;
	propagate(t, cq, fr, osc, ouc);
}

/* Removes min(v, usage); returns the amount removed. */
static int64_t remove_usage(struct tree *t, int cq, int fr, int64_t v)
{
	struct cell *c = cell_at(t, cq, fr);
	int64_t osc, ouc;

	v = min64(v, c->usage);
	contrib(c, &osc, &ouc);
	c->usage -= v;
	t->node[cq].ustamp = ++t->ugen;
	propagate(t, cq, fr, osc, ouc);
	return v;
}

/* §3 removeUsage, clamped at zero for the CQ. */
void tree_remove_usage(struct tree *t, int cq, int fr, int64_t v)
{
	need_usage_args(t, cq, fr, v);
	remove_usage(t, cq, fr, v);
}

int64_t tree_usage(const struct tree *t, int node, int fr)
{
	need_node(t, node);
	need_fr(t, fr);
	return cell_at(t, node, fr)->usage;
}

int64_t tree_local_available(const struct tree *t, int node, int fr)
{
	need_node(t, node);
	need_fr(t, fr);
	return local_available(cell_at(t, node, fr));
}

/* ---- queries ---- */

/*
 * §3 available, without recursion. Each non-root level k maps its
 * parent's availability z to LA_k + min(z, cap_k): a function of the form
 * min(z + A, B). Such functions compose into the same form, so walking
 * up from the CQ keeps just (A, B) and applies them to the root's
 * subtree - usage at the end. B = INT64_MAX stands for "no bound".
 */
static int64_t available(const struct tree *t, int32_t x, int fr)
{
	int64_t a = 0, b = INT64_MAX;

	while (t->node[x].parent != NIL) {
		const struct cell *c = cell_at(t, x, fr);
		int64_t la = local_available(c);
		int64_t cap = INT64_MAX;

		if (c->borrowing != UNLIM) {
			int64_t l = local_quota(c);
			int64_t stored = sat_sub(c->subtree, l);
			int64_t used = max64(0, sat_sub(c->usage, l));

			cap = sat_add(sat_sub(stored, used), c->borrowing);
		}
		if (cap != INT64_MAX)
			b = min64(b, sat_add(sat_add(cap, la), a));
		a = sat_add(a, la);
		x = t->node[x].parent;
	}
	{
		const struct cell *c = cell_at(t, x, fr);

		return min64(sat_add(sat_sub(c->subtree, c->usage), a), b);
	}
}

int64_t tree_available(const struct tree *t, int cq, int fr)
{
	need_cq(t, cq);
	need_fr(t, fr);
	if (tree_in_cycle(t, cq))
		return 0;
	return max64(0, available(t, cq, fr));
}

/* §3 potentialAvailable, composed the same way as available(). */
int64_t tree_potential_available(const struct tree *t, int cq, int fr)
{
	need_cq(t, cq);
	return tree_node_potential(t, cq, fr);
}

int64_t tree_node_potential(const struct tree *t, int node, int fr)
{
	int64_t a = 0, b = INT64_MAX;
	int32_t x = node;

	need_node(t, node);
	need_fr(t, fr);
	if (tree_in_cycle(t, node))
		return 0;
	while (t->node[x].parent != NIL) {
		const struct cell *c = cell_at(t, x, fr);

		if (c->borrowing != UNLIM)
			b = min64(b, sat_add(sat_add(c->subtree, c->borrowing),
					     a));
		a = sat_add(a, local_quota(c));
		x = t->node[x].parent;
	}
	return max64(0, min64(sat_add(cell_at(t, x, fr)->subtree, a), b));
}

int64_t tree_borrowed(const struct tree *t, int cq, int fr)
{
	const struct cell *c;

	need_cq(t, cq);
	need_fr(t, fr);
	if (t->node[cq].parent == NIL)
		return 0;
	c = cell_at(t, cq, fr);
	return max64(0, sat_sub(c->usage, c->nominal));
}

/*
 * §2.3 heightOfLowestSubtreeThatFits (Kueue classical/hierarchical
 * FindHeightOfLowestSubtreeThatFits): the first ancestor that is not
 * borrowing once it holds what is left of val, after each level spent
 * its own LocalAvailable.
 */
int tree_borrow_level(const struct tree *t, int cq, int fr, int64_t val,
		      bool *may_reclaim)
{
	const struct cell *c;
	int64_t rem;
	int32_t y, last = NIL;

	need_cq(t, cq);
	need_fr(t, fr);
	if (may_reclaim)
		*may_reclaim = false;
	if (tree_in_cycle(t, cq))
		return 0;
	c = cell_at(t, cq, fr);
	if (t->node[cq].parent == NIL ||
	    sat_add(c->usage, val) <= c->nominal) {
		if (may_reclaim)
			*may_reclaim = t->node[cq].parent != NIL;
		return 0;
	}
	rem = sat_sub(val, local_available(c));
	for (y = t->node[cq].parent; y != NIL; y = t->node[y].parent) {
		const struct cell *yc = cell_at(t, y, fr);

		if (sat_add(yc->usage, rem) <= yc->subtree) {
			if (may_reclaim)
				*may_reclaim = t->node[y].parent != NIL;
			return t->node[y].height;
		}
		rem = sat_sub(rem, local_available(yc));
		last = y;
	}
	return t->node[last].height;
}

bool tree_fits(const struct tree *t, int cq, const struct fr_val *usage,
	       size_t n)
{
	need_cq(t, cq);
	if (tree_in_cycle(t, cq))
		return false;
	for (size_t i = 0; i < n; i++) {
		need_fr(t, usage[i].fr);
		if (usage[i].v > max64(0, available(t, cq, usage[i].fr)))
			return false;
	}
	return true;
}

/* ---- undo ---- */

static void undo_push(struct tree_undo *u, int cq, int fr, int64_t v,
		      bool add)
{
	XGROW(u->ops, u->cap, u->n + 1);
	u->ops[u->n++] = (struct tree_undo_op){ cq, fr, v, add };
}

void tree_add_usage_undo(struct tree *t, int cq, const struct fr_val *usage,
			 size_t n, struct tree_undo *undo)
{
	for (size_t i = 0; i < n; i++) {
		tree_add_usage(t, cq, usage[i].fr, usage[i].v);
		undo_push(undo, cq, usage[i].fr, usage[i].v, true);
	}
}

void tree_remove_usage_undo(struct tree *t, int cq,
			    const struct fr_val *usage, size_t n,
			    struct tree_undo *undo)
{
	for (size_t i = 0; i < n; i++) {
		int64_t v;

		need_usage_args(t, cq, usage[i].fr, usage[i].v);
		v = remove_usage(t, cq, usage[i].fr, usage[i].v);
		undo_push(undo, cq, usage[i].fr, v, false);
	}
}

void tree_undo(struct tree *t, struct tree_undo *undo)
{
	tree_undo_to(t, undo, 0);
}

size_t tree_undo_savepoint(const struct tree_undo *undo)
{
	return undo->n;
}

void tree_undo_to(struct tree *t, struct tree_undo *undo, size_t savepoint)
{
	if (savepoint > undo->n)
		BUG("undo savepoint %zu beyond %zu", savepoint, undo->n);
	while (undo->n > savepoint) {
		const struct tree_undo_op *op = &undo->ops[--undo->n];

		if (op->add)
			tree_remove_usage(t, op->cq, op->fr, op->v);
		else
			tree_add_usage(t, op->cq, op->fr, op->v);
	}
}

void tree_undo_release(struct tree_undo *undo)
{
	FREE_AND_NULL(undo->ops);
	undo->n = undo->cap = 0;
}

/* ---- invariants ---- */

static bool check_frs(const struct tree *t)
{
	const struct frtab *f = t->fr;

	if ((size_t)f->n > t->stride || f->nslot < (size_t)f->n * 2 ||
	    (f->nslot & (f->nslot - 1)))
		return false;
	for (int i = 0; i < f->n; i++) {
		const char *fl = fr_flavor_of(f, i), *rs = fr_resource_of(f, i);

		if (f->hash[i] != fr_hash(fl, rs) || frtab_find(f, fl, rs) != i)
			return false;
	}
	return true;
}

static bool check_links(const struct tree *t, int32_t x)
{
	const struct tnode *n = &t->node[x];
	int32_t count = 0, prev = NIL;

	if (n->kind != NODE_CQ && n->kind != NODE_COHORT)
		return false;
	if (n->parent != NIL && (!is_alive(t, n->parent) ||
				 t->node[n->parent].kind != NODE_COHORT))
		return false;
	if (n->hash != node_hash((enum node_kind)n->kind, name_of(t, x)) ||
	    tree_node_find(t, (enum node_kind)n->kind, name_of(t, x)) != x)
		return false;
	for (int32_t c = n->first_child; c != NIL; c = t->node[c].next_sib) {
		if (!is_alive(t, c) || t->node[c].parent != x ||
		    t->node[c].prev_sib != prev || ++count > n->nchildren)
			return false;
		prev = c;
	}
	if (count != n->nchildren || n->last_child != prev)
		return false;
	if (n->kind == NODE_CQ && n->nchildren)
		return false;
	if ((n->flags & N_LINKED) !=
	    ((n->parent != NIL && !(n->flags & N_ON_CYCLE)) ? N_LINKED : 0))
		return false;
	if (n->flags & N_IMPLICIT) {
		if (n->kind != NODE_COHORT || n->parent != NIL ||
		    !n->nchildren)
			return false;
		for (int fr = 0; fr < t->fr->n; fr++) {
			const struct cell *c = cell_at(t, x, fr);

			if (c->nominal || c->borrowing != UNLIM ||
			    c->lending != UNLIM)
				return false;
		}
	}
	return n->height == (n->kind == NODE_CQ ? 0 : height_of(t, x));
}

/* ON_CYCLE must flag exactly the nodes on a parent-link cycle. */
static bool check_cycles(const struct tree *t)
{
	/* 0 unvisited, 1 on the current walk, 2 done. */
	unsigned char *state = xcalloc(t->nslot ? t->nslot : 1, 1);
	bool ok = true;

	for (size_t s = 0; s < t->nslot && ok; s++) {
		int32_t y = (int32_t)s;

		if (!(t->node[s].flags & N_ALIVE) || state[s])
			continue;
		while (y != NIL && !state[y]) {
			state[y] = 1;
			y = t->node[y].parent;
		}
		if (y != NIL && state[y] == 1) {
			/* A new cycle through y: all flagged. */
			int32_t m = y;

			do {
				if (!(t->node[m].flags & N_ON_CYCLE))
					ok = false;
				state[m] = 3;
				m = t->node[m].parent;
			} while (m != y);
		}
		for (y = (int32_t)s; y != NIL && state[y] == 1;
		     y = t->node[y].parent) {
			if (t->node[y].flags & N_ON_CYCLE)
				ok = false;
			state[y] = 2;
		}
	}
	free(state);
	return ok;
}

static bool check_cells(const struct tree *t, int32_t x)
{
	const struct tnode *n = &t->node[x];

	for (size_t f = 0; f < t->stride; f++) {
		const struct cell *c = &t->cell[(size_t)x * t->stride + f];
		int64_t sub = c->nominal, use = 0;

		if ((int)f >= t->fr->n) {
			if (memcmp(c, &cell_default, sizeof(*c)))
				return false;
			continue;
		}
		if (c->nominal < 0 || c->borrowing < 0 || c->lending < 0 ||
		    c->usage < 0)
			return false;
		if (n->kind == NODE_CQ) {
			if (c->subtree != c->nominal)
				return false;
			continue;
		}
		for (int32_t k = n->first_child; k != NIL;
		     k = t->node[k].next_sib) {
			int64_t sc, uc;

			if (!(t->node[k].flags & N_LINKED))
				continue;
			contrib(&t->cell[(size_t)k * t->stride + f], &sc, &uc);
			sub = wadd(sub, sc);
			use = wadd(use, uc);
		}
		if (c->subtree != sub || c->usage != use)
			return false;
	}
	return true;
}

bool tree_check(const struct tree *t)
{
	size_t live = 0, nfree = 0;

	if (!t || !t->fr || t->nslot > t->cap ||
	    t->names_len > t->names_cap || t->nindex < t->nlive * 2 ||
	    (t->nindex & (t->nindex - 1)))
		return false;
	if (!check_frs(t))
		return false;
	for (int32_t f = t->free_head; f != NIL; f = t->node[f].next_sib) {
		if (f < 0 || (size_t)f >= t->nslot ||
		    (t->node[f].flags & N_ALIVE) || ++nfree > t->nslot)
			return false;
	}
	for (size_t i = 0; i < t->nslot; i++) {
		if (!(t->node[i].flags & N_ALIVE))
			continue;
		live++;
		if (t->node[i].name_off >= t->names_len ||
		    !check_links(t, (int32_t)i) ||
		    !check_cells(t, (int32_t)i))
			return false;
	}
	if (live != t->nlive || live + nfree != t->nslot)
		return false;
	live = 0;
	for (size_t i = 0; i < t->nindex; i++) {
		if (t->index[i] == NIL)
			continue;
		if (!is_alive(t, t->index[i]))
			return false;
		live++;
	}
	if (live != t->nlive)
		return false;
	return check_cycles(t);
}
