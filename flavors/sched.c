/*
 * sched: the scheduling core's state (see sched.h). This file holds the
 * inputs (flavors, cohorts, ClusterQueues, LocalQueues, namespaces,
 * workloads), the requeue events they cause (kueue-scheduler.md §1.4),
 * the holder index and the backoff clock; sched_cycle.c holds the cycle
 * and sched_status.c answers the status questions.
 *
 * DESIGN
 * Everything that needs strings is resolved at _set time: names become
 * dense ids (hash indexes in struct nidx), a ClusterQueue's resource
 * groups become tree fr ids (struct assign_cq), a pending workload's pod sets
 * become per-pod (resource id, milli) pairs (struct assign_podset), so the
 * cycle works on integers only. Each ClusterQueue keeps the list of the
 * workloads holding quota in its tree node (its holders), which eviction
 * walks and preemption will search.
 *
 * Decisions the spec leaves open (documented in the report and here):
 *  - One decision per workload per sched_cycle call: when a later round
 *    decides again (skipped, then retried), its outcome replaces the
 *    earlier entry in out.
 *  - A pending decision equal to the last one reported for that workload
 *    is not emitted again when no input changed in between (a StrictFIFO
 *    head that stays blocked is not re-reported every cycle); after any
 *    input it is reported on its next pop, even if unchanged.
 *  - Active=False reasons beyond Kueue's: "Invalid" (the object failed
 *    validation; message "Can't admit new workloads: <why>.") and
 *    "CohortCycle" ("Can't admit new workloads: references cohort <c>,
 *    which is part of a cycle."). Admission checks are not supported, so
 *    a CQ naming any is inactive: AdmissionCheckNotFound while it is
 *    missing, AdmissionCheckInactive once it exists (no check controller
 *    runs for it here, so the queue admits nothing rather than skip it).
 *  - An inactive workload (spec.active false) that holds quota keeps it
 *    until its eviction has completed (its status shows no reservation):
 *    Kueue drops it from its cache at once, which over-admits while the
 *    Job still runs.
 */
#include "flavors/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "base/text.h"
#include "flavors/sched_int.h"
#include "model/podreq.h"
#include "model/resources.h"
#include "model/selector.h"


/* ---- name index ---- */

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 16777619u;
	}
	return h;
}

static int32_t nidx_find(const struct nidx *x, const char *name)
{
	uint32_t h;
	size_t mask, i;

	if (!x->nlive)
		return -1;
	h = hash_str(name);
	mask = x->nslot - 1;
	for (i = h & mask;; i = (i + 1) & mask) {
		const struct nslot *sl = &x->slot[i];

		if (sl->id < 0)
			return -1;
		if (sl->hash == h && !strcmp(x->key[sl->id], name))
			return sl->id;
	}
}

static void nidx_put(struct nidx *x, struct nslot sl)
{
	size_t mask = x->nslot - 1, i;

	for (i = sl.hash & mask; x->slot[i].id >= 0; i = (i + 1) & mask)
		;
	x->slot[i] = sl;
}

/* Adds name (copied), which must be absent; returns its id: the most
 * recently freed one (nidx_free_id), else a new one (x->n - 1). */
static int32_t nidx_add(struct nidx *x, const char *name)
{
	struct nslot sl = { -1, hash_str(name) };

	if ((x->nlive + 1) * 2 > x->nslot) {
		size_t n = x->nslot ? x->nslot * 2 : 16;
		struct nslot *old = x->slot;
		size_t nold = x->nslot;

		x->slot = xmalloc(n * sizeof(*x->slot));
		for (size_t i = 0; i < n; i++)
			x->slot[i].id = -1;
		x->nslot = n;
		for (size_t i = 0; i < nold; i++)
			if (old[i].id >= 0)
				nidx_put(x, old[i]);
		free(old);
	}
	if (x->nfree) {
		sl.id = x->free[--x->nfree];
	} else {
		if (x->n == x->cap)
			XGROW(x->key, x->cap, x->n + 1);
		sl.id = (int32_t)x->n++;
	}
	x->key[sl.id] = xstrdup(name);
	x->nlive++;
	nidx_put(x, sl);
	return sl.id;
}

/*
 * Takes id's name out of the index and frees it (key[id] becomes NULL):
 * the name is unknown from now on, a new add of it gets another id. The
 * id itself stays retired until nidx_free_id. Backward-shift deletion
 * (Knuth's Algorithm R): later entries of the probe run move up into the
 * hole, so there are no tombstones and probe runs never lengthen.
 */
static void nidx_unlink(struct nidx *x, int32_t id)
{
	size_t mask = x->nslot - 1, i, j;
	uint32_t h = hash_str(x->key[id]);

	for (i = h & mask; x->slot[i].id != id; i = (i + 1) & mask)
		if (x->slot[i].id < 0)
			BUG("nidx_unlink: id %d not indexed", (int)id);
	x->slot[i].id = -1;
	for (j = (i + 1) & mask; x->slot[j].id >= 0; j = (j + 1) & mask) {
		size_t home = x->slot[j].hash & mask;

		/* The entry at j may fill the hole at i unless its home
		 * lies cyclically in (i, j]. */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		x->slot[i] = x->slot[j];
		x->slot[j].id = -1;
		i = j;
	}
	FREE_AND_NULL(x->key[id]);
	x->nlive--;
}

/* Makes a retired id (nidx_unlink) available to nidx_add again. */
static void nidx_free_id(struct nidx *x, int32_t id)
{
	if (x->key[id])
		BUG("nidx_free_id: id %d still named", (int)id);
	if (x->nfree == x->capfree)
		XGROW(x->free, x->capfree, x->nfree + 1);
	x->free[x->nfree++] = id;
}

static void nidx_release(struct nidx *x)
{
	for (size_t i = 0; i < x->n; i++)
		free(x->key[i]);
	free(x->key);
	free(x->slot);
	free(x->free);
	memset(x, 0, sizeof(*x));
}

static bool nidx_check(const struct nidx *x)
{
	size_t live = 0, inslots = 0;
	bool ok = true;
	char *isfree = xcalloc(x->n ? x->n : 1, 1);

	if (x->nslot & (x->nslot - 1) || (x->nslot && x->nlive * 2 > x->nslot)
	    || x->nfree > x->n)
		ok = false;
	for (size_t i = 0; ok && i < x->nfree; i++) {
		int32_t id = x->free[i];

		if (id < 0 || (size_t)id >= x->n || x->key[id] || isfree[id])
			ok = false;
		else
			isfree[id] = 1;
	}
	for (size_t i = 0; ok && i < x->n; i++) {
		if (!x->key[i])
			continue;
		live++;
		if (nidx_find(x, x->key[i]) != (int32_t)i)
			ok = false;
	}
	for (size_t i = 0; ok && i < x->nslot; i++) {
		const struct nslot *sl = &x->slot[i];

		if (sl->id < 0)
			continue;
		inslots++;
		if ((size_t)sl->id >= x->n || !x->key[sl->id] ||
		    sl->hash != hash_str(x->key[sl->id]))
			ok = false;
	}
	if (live != x->nlive || inslots != x->nlive)
		ok = false;
	free(isfree);
	return ok;
}

/* ---- dirty sets ---- */

/* Fair sharing: the cohorts above a changed ClusterQueue report new
 * shares. A dirty cohort's ancestors are dirty too (all are taken at
 * once), so the walk stops at the first one already marked. */
static void dirty_cohorts_above(struct sched *s, int node)
{
	size_t cap = tree_node_cap(s->t);

	if (s->capcoh_dirty < cap) {
		s->coh_dirty = xrealloc(s->coh_dirty,
					cap * sizeof(*s->coh_dirty));
		memset(s->coh_dirty + s->capcoh_dirty, 0,
		       cap - s->capcoh_dirty);
		s->capcoh_dirty = cap;
	}
	for (int p = tree_parent(s->t, node); p >= 0 && !s->coh_dirty[p];
	     p = tree_parent(s->t, p)) {
		s->coh_dirty[p] = 1;
		if (s->ndirty_coh == s->capdirty_coh)
			XGROW(s->dirty_coh, s->capdirty_coh,
			      s->ndirty_coh + 1);
		s->dirty_coh[s->ndirty_coh++] = p;
	}
}

void sched_dirty_cq(struct sched *s, int32_t id)
{
	if (id < 0 || s->cqs[id].dirty)
		return;
	s->cqs[id].dirty = true;
	if (s->ndirty_cq == s->capdirty_cq)
		XGROW(s->dirty_cq, s->capdirty_cq, s->ndirty_cq + 1);
	s->dirty_cq[s->ndirty_cq++] = id;
	if (s->o.fair_sharing)
		dirty_cohorts_above(s, s->cqs[id].node);
}

void sched_dirty_lq(struct sched *s, int32_t id)
{
	if (id < 0 || s->lqs[id].dirty)
		return;
	s->lqs[id].dirty = true;
	if (s->ndirty_lq == s->capdirty_lq)
		XGROW(s->dirty_lq, s->capdirty_lq, s->ndirty_lq + 1);
	s->dirty_lq[s->ndirty_lq++] = id;
}

/* ---- eviction and requeue checks ---- */

void sched_flag_check(struct sched *s, struct swl *r)
{
	if (r->flagged)
		return;
	r->flagged = true;
	if (s->nchk == s->capchk)
		XGROW(s->chk, s->capchk, s->nchk + 1);
	s->chk[s->nchk++] = r->id;
}

/* Flags every holder of ClusterQueue id (lq < 0), or only those of
 * LocalQueue lq. */
static void flag_holders(struct sched *s, int32_t id, int32_t lq)
{
	for (struct swl *r = s->cqs[id].holders; r; r = r->h_next)
		if (lq < 0 || r->lq == lq)
			sched_flag_check(s, r);
}

static void flag_parked(void *ctx, struct qitem *it)
{
	struct sched *s = ctx;

	if (it->requeued_false)
		sched_flag_check(s, SWL_OF(it));
}

/* ---- interning ---- */

static uint32_t next_gen(struct sched *s)
{
	if (++s->gen == 0)
		s->gen = 1;
	return s->gen;
}

static int32_t flavor_get(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->flv_idx, name);

	if (id >= 0)
		return id;
	id = nidx_add(&s->flv_idx, name);
	if (s->nflv == s->capflv)
		XGROW(s->flv, s->capflv, s->nflv + 1);
	s->flv[s->nflv++] = (struct assign_flavor){
		.name = s->flv_idx.key[id], .rf = NULL, .gen = next_gen(s) };
	return id;
}

static int32_t res_get(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->res_idx, name);

	if (id >= 0)
		return id;
	id = nidx_add(&s->res_idx, name);
	if (!strcmp(name, "pods"))
		s->pods_res = id;
	return id;
}

int32_t sched_res_id(struct sched *s, const char *name)
{
	return res_get(s, name);
}

static int32_t ns_get(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->ns_idx, name);

	if (id >= 0)
		return id;
	id = nidx_add(&s->ns_idx, name);
	if ((size_t)id == s->nns) {
		if (s->nns == s->capns)
			XGROW(s->ns, s->capns, s->nns + 1);
		s->nns++;
	}
	memset(&s->ns[id], 0, sizeof(s->ns[id]));
	s->ns[id].name = s->ns_idx.key[id];
	s->ns[id].gen = next_gen(s);
	return id;
}

/* Frees namespace id's record once no workload refers to it and it has
 * no labels: it reads as an unknown namespace then. */
static void ns_reap(struct sched *s, int32_t id)
{
	struct sns *n = &s->ns[id];

	if (n->nref || n->labels.n)
		return;
	smap_release(&n->labels);
	nidx_unlink(&s->ns_idx, id);
	nidx_free_id(&s->ns_idx, id);
	memset(n, 0, sizeof(*n));
}

static int32_t lq_get(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->lq_idx, name);

	if (id >= 0)
		return id;
	id = nidx_add(&s->lq_idx, name);
	if ((size_t)id == s->nlq) {
		if (s->nlq == s->caplq)
			XGROW(s->lqs, s->caplq, s->nlq + 1);
		s->nlq++;
	}
	memset(&s->lqs[id], 0, sizeof(s->lqs[id]));
	s->lqs[id].name = s->lq_idx.key[id];
	s->lqs[id].cq = -1;
	return id;
}

int32_t sched_lq_find_or_add(struct sched *s, const char *name, bool create)
{
	int32_t id = nidx_find(&s->lq_idx, name);

	if (id >= 0 || !create)
		return id;
	return lq_get(s, name);
}

void sched_lq_reap(struct sched *s, int32_t id)
{
	struct slq *l = &s->lqs[id];

	if (l->nref || l->stop != STOP_NONE || l->dirty ||
	    sched_afs_keep(l))
		return;
	free(l->res_usage);
	free(l->adm_usage);
	free(l->afs_cons);
	free(l->afs_pen);
	nidx_unlink(&s->lq_idx, id);
	nidx_free_id(&s->lq_idx, id);
	memset(l, 0, sizeof(*l));
	l->cq = -1;
}

static int32_t cohort_get(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->coh_idx, name);

	if (id >= 0)
		return id;
	id = nidx_add(&s->coh_idx, name);
	if (s->ncoh == s->capcoh)
		XGROW(s->coh, s->capcoh, s->ncoh + 1);
	s->coh[id] = (struct scohort){ s->coh_idx.key[id], NULL };
	s->ncoh++;
	return id;
}

static void map_node(struct sched *s, int node, int32_t cq)
{
	if ((size_t)node >= s->ncq_of_node) {
		size_t n = (size_t)node * 2 + 16;

		s->cq_of_node = xrealloc(s->cq_of_node,
					 n * sizeof(*s->cq_of_node));
		for (size_t i = s->ncq_of_node; i < n; i++)
			s->cq_of_node[i] = -1;
		s->ncq_of_node = n;
	}
	s->cq_of_node[node] = cq;
}

/* The ClusterQueue record of name, created (absent, with a tree node)
 * when unknown: workloads may hold quota in a queue not seen yet. */
static int32_t cq_get(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->cq_idx, name);
	struct scq *c;

	if (id >= 0)
		return id;
	id = nidx_add(&s->cq_idx, name);
	if (s->ncq == s->capcq)
		XGROW(s->cqs, s->capcq, s->ncq + 1);
	c = &s->cqs[id];
	memset(c, 0, sizeof(*c));
	c->name = s->cq_idx.key[id];
	c->node = tree_node(s->t, NODE_CQ, name);
	c->c.node = c->node;
	queue_init(&c->q, QS_BEST_EFFORT_FIFO);
	map_node(s, c->node, id);
	s->ncq++;
	return id;
}

int32_t sched_cq_id(struct sched *s, const char *name)
{
	return cq_get(s, name);
}


int32_t sched_find_cq(const struct sched *s, const char *name)
{
	return nidx_find(&s->cq_idx, name);
}

int32_t sched_find_lq(const struct sched *s, const char *name)
{
	return nidx_find(&s->lq_idx, name);
}

int32_t sched_find_wl(const struct sched *s, const char *key)
{
	return nidx_find(&s->wl_idx, key);
}

bool sched_index_check(const struct sched *s)
{
	const struct nidx *x[] = { &s->flv_idx, &s->res_idx, &s->coh_idx,
				   &s->cq_idx, &s->lq_idx, &s->ns_idx,
				   &s->wl_idx };

	for (size_t i = 0; i < sizeof(x) / sizeof(x[0]); i++)
		if (!nidx_check(x[i]))
			return false;
	/* Kinds that never free keep every id named. */
	if (s->flv_idx.nlive != s->flv_idx.n || s->cq_idx.nlive != s->cq_idx.n
	    || s->coh_idx.nlive != s->coh_idx.n ||
	    s->res_idx.nlive != s->res_idx.n)
		return false;
	if (s->nlq != s->lq_idx.n || s->nns != s->ns_idx.n ||
	    s->nwl != s->wl_idx.n)
		return false;
	for (size_t i = 0; i < s->nlq; i++)
		if (s->lqs[i].name != s->lq_idx.key[i])
			return false;
	for (size_t i = 0; i < s->nns; i++)
		if (s->ns[i].name != s->ns_idx.key[i])
			return false;
	for (size_t i = 0; i < s->nwl; i++) {
		const struct swl *r = s->wls[i];

		/* A freed id has no record; a dead record is retired (no
		 * name, not yet free). */
		if (!r) {
			if (s->wl_idx.key[i])
				return false;
			continue;
		}
		if (r->id != (int32_t)i || r->key != s->wl_idx.key[i])
			return false;
	}
	return true;
}

void sched_assign_env(const struct sched *s, struct assign_env *e)
{
	memset(e, 0, sizeof(*e));
	e->t = s->t;
	e->flavors = s->flv;
	e->nflavors = s->nflv;
	e->res_names = (const char *const *)s->res_idx.key;
	e->nres = s->res_idx.n;
	e->pods_res = s->pods_res;
	e->oracle = assign_oracle_none;
	e->preemptor = -1;
	e->ignore_undeclared = s->o.ignore_undeclared;
	e->partial_admission = s->o.partial_admission;
}

/* ---- lifecycle ---- */

void sched_opts_default(struct sched_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->partial_admission = true;
}

struct sched *sched_new(const struct sched_opts *o)
{
	struct sched *s = xcalloc(1, sizeof(*s));

	if (o)
		s->o = *o;
	else
		sched_opts_default(&s->o);
	s->t = tree_new();
	s->fair = fair_new();
	smap_init(&s->topos);
	smap_init(&s->acs);
	if (s->o.nafs_w) {
		s->nafs_w = s->o.nafs_w;
		s->afs_wname = xcalloc(s->nafs_w, sizeof(*s->afs_wname));
		s->afs_w = xcalloc(s->nafs_w, sizeof(*s->afs_w));
		for (size_t i = 0; i < s->nafs_w; i++) {
			s->afs_wname[i] = xstrdup(s->o.afs_res[i]);
			s->afs_w[i] = s->o.afs_w[i];
		}
	}
	s->o.afs_res = NULL;
	s->o.afs_w = NULL;
	s->pods_res = -1;
	s->ready_wait = -1;
	return s;
}

static void wl_free_record(struct swl *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nps; i++)
		assign_podset_release(&r->ps[i]);
	free(r->ps);
	free(r->usage);
	free(r->afs_pen);
	free(r);
}

void sched_free(struct sched *s)
{
	if (!s)
		return;
	/* Queues first: they unlink items that live in the records. */
	for (size_t i = 0; i < s->ncq; i++)
		queue_release(&s->cqs[i].q);
	for (size_t i = 0; i < s->nwl; i++)
		wl_free_record(s->wls[i]);
	free(s->wls);
	for (size_t i = 0; i < s->ncq; i++) {
		struct scq *c = &s->cqs[i];

		assign_cq_release(&c->c);
		free(c->flavors);
		free(c->invalid);
		free(c->message);
		free(c->adm_usage);
	}
	free(s->cqs);
	for (size_t i = 0; i < s->nlq; i++) {
		free(s->lqs[i].res_usage);
		free(s->lqs[i].adm_usage);
		free(s->lqs[i].afs_cons);
		free(s->lqs[i].afs_pen);
	}
	for (size_t i = 0; i < s->nafs_w; i++)
		free(s->afs_wname[i]);
	free(s->afs_wname);
	free(s->afs_w);
	free(s->lqs);
	for (size_t i = 0; i < s->nns; i++)
		smap_release(&s->ns[i].labels);
	free(s->ns);
	free(s->coh);
	free(s->flv);
	nidx_release(&s->flv_idx);
	nidx_release(&s->res_idx);
	nidx_release(&s->coh_idx);
	nidx_release(&s->cq_idx);
	nidx_release(&s->lq_idx);
	nidx_release(&s->ns_idx);
	nidx_release(&s->wl_idx);
	free(s->cq_of_node);
	fair_free(s->fair);
	free(s->fn);
	free(s->coh_dirty);
	free(s->dirty_coh);
	free(s->fp_path);
	free(s->fp_pruned);
	free(s->fq);
	free(s->fq_stamp);
	free(s->fq_idx);
	free(s->fnext);
	free(s->fretry);
	free(s->ftouched);
	free(s->fheap);
	free(s->ftop);
	free(s->dirty_cq);
	free(s->dirty_lq);
	for (size_t i = 0; i < s->nent; i++) {
		free(s->ent[i].message);
		free(s->ent[i].asg);
	}
	free(s->ent);
	assign_result_release(&s->res_scratch);
	tree_undo_release(&s->undo);
	free(s->stack);
	free(s->mark);
	free(s->rq_pending);
	free(s->chk);
	free(s->pc);
	free(s->ptg);
	free(s->ord);
	free(s->hp);
	free(s->acc_tg);
	free(s->rem);
	free(s->need);
	free(s->rvict);
	tree_free(s->t);
	smap_release(&s->topos);
	smap_release(&s->acs);
	free(s);
}

/* ---- namespace selector ---- */

bool sched_ns_ok(struct sched *s, struct swl *r, const struct scq *c)
{
	const struct sns *n = &s->ns[r->ns];

	if (!c->cq || c->invalid || !c->cq->has_ns_selector)
		return false;
	if (r->sel_cq_gen == c->gen && r->sel_ns_gen == n->gen)
		return r->sel_ok;
	r->sel_ok = label_selector_matches(&c->cq->ns_selector, &n->labels);
	r->sel_cq_gen = c->gen;
	r->sel_ns_gen = n->gen;
	return r->sel_ok;
}

/* ---- requeue events (§1.4) ---- */

struct keep_ctx {
	struct sched *s;
	const struct scq *c;
};

static bool keep_ns(void *ctx, const struct qitem *it)
{
	struct keep_ctx *k = ctx;

	return sched_ns_ok(k->s, SWL_OF(it), k->c);
}

static void requeue_cq(struct sched *s, int32_t id)
{
	struct scq *c = &s->cqs[id];
	struct keep_ctx k = { s, c };

	if (queue_requeue_parked(&c->q, s->now, keep_ns, &k))
		sched_dirty_cq(s, id);
}

/* Every ClusterQueue below node (a DFS over tree children). */
static void requeue_below(struct sched *s, int node)
{
	size_t sp = 0;

	if (s->capstack < 16)
		XGROW(s->stack, s->capstack, 16);
	s->stack[sp++] = node;
	while (sp) {
		int n = s->stack[--sp];
		size_t nc;

		if (tree_node_kind(s->t, n) == NODE_CQ) {
			if ((size_t)n < s->ncq_of_node && s->cq_of_node[n] >= 0)
				requeue_cq(s, s->cq_of_node[n]);
			continue;
		}
		nc = tree_children(s->t, n, NULL, 0);
		if (sp + nc > s->capstack)
			XGROW(s->stack, s->capstack, sp + nc);
		tree_children(s->t, n, s->stack + sp, nc);
		sp += nc;
	}
}

/* A requeue event for the whole cohort tree of node (a CQ or cohort);
 * ignored while that tree has a cycle, as Kueue does. */
static void requeue_tree_of_node(struct sched *s, int node)
{
	int root;

	if (node < 0)
		return;
	if (tree_in_cycle(s->t, node)) {
		if (tree_node_kind(s->t, node) == NODE_CQ &&
		    s->cq_of_node[node] >= 0)
			requeue_cq(s, s->cq_of_node[node]);
		return;
	}
	root = tree_root(s->t, node);
	requeue_below(s, root < 0 ? node : root);
}

static void requeue_tree(struct sched *s, int32_t cq)
{
	requeue_tree_of_node(s, s->cqs[cq].node);
}

/* ---- ClusterQueue Active condition (kueue-api.md §3.5) ---- */

/* Appends name to the comma-separated list in b. */
static void join_name(struct sbuf *b, const char *name)
{
	if (b->len)
		sbuf_addch(b, ',');
	sbuf_adds(b, name);
}

static void cq_update_active(struct sched *s, int32_t id)
{
	struct scq *c = &s->cqs[id];
	const struct cluster_queue *cq = c->cq;
	const char *reason = NULL;
	char *msg = NULL;
	bool active = false;

	if (!c->exists) {
		reason = NULL;
	} else if (cq->meta.deletion_ms) {
		reason = "Terminating";
		msg = xstrdup("Can't admit new workloads; clusterQueue is "
			      "terminating");
	} else if (c->invalid) {
		reason = "Invalid";
		msg = xasprintf("Can't admit new workloads: %s.", c->invalid);
	} else {
		/* The causes, in Kueue's order, joined by ", ". */
		struct sbuf miss = SBUF_INIT, acs = SBUF_INIT;
		struct sbuf inact = SBUF_INIT, topo = SBUF_INIT;
		struct sbuf causes = SBUF_INIT;
		const char *rs[6];
		size_t nrs = 0;

		for (size_t i = 0; i < c->nflavors; i++) {
			const struct assign_flavor *f = &s->flv[c->flavors[i]];

			if (!f->rf)
				join_name(&miss, f->name);
			else if (f->rf->topology_name &&
				 !smap_has(&s->topos, f->rf->topology_name))
				sbuf_addf(&topo, "%sthere is no Topology \"%s\" "
					  "for TAS flavor \"%s\"",
					  topo.len ? ", " : "",
					  f->rf->topology_name, f->name);
		}
		for (size_t i = 0; i < cq->nadmission_checks; i++)
			join_name(smap_has(&s->acs, cq->admission_checks[i])
					  ? &inact
					  : &acs,
				  cq->admission_checks[i]);
		for (size_t i = 0; i < cq->nac_rules; i++)
			join_name(smap_has(&s->acs, cq->ac_rules[i].name)
					  ? &inact
					  : &acs,
				  cq->ac_rules[i].name);
		if (cq->stop != STOP_NONE) {
			rs[nrs++] = "Stopped";
			sbuf_adds(&causes, "is stopped");
		}
		if (miss.len) {
			rs[nrs++] = "FlavorNotFound";
			sbuf_addf(&causes,
				  "%sreferences missing ResourceFlavor(s): %s",
				  causes.len ? ", " : "", miss.buf);
		}
		if (acs.len) {
			rs[nrs++] = "AdmissionCheckNotFound";
			sbuf_addf(&causes,
				  "%sreferences missing AdmissionCheck(s): %s",
				  causes.len ? ", " : "", acs.buf);
		}
		if (inact.len) {
			rs[nrs++] = "AdmissionCheckInactive";
			sbuf_addf(&causes,
				  "%sreferences inactive AdmissionCheck(s): %s",
				  causes.len ? ", " : "", inact.buf);
		}
		if (topo.len) {
			rs[nrs++] = "TopologyNotFound";
			sbuf_addf(&causes, "%s%s", causes.len ? ", " : "",
				  topo.buf);
		}
		if (tree_in_cycle(s->t, c->node)) {
			rs[nrs++] = "CohortCycle";
			sbuf_addf(&causes,
				  "%sreferences cohort %s, which is part of a "
				  "cycle",
				  causes.len ? ", " : "",
				  cq->cohort ? cq->cohort : "");
		}
		if (nrs) {
			reason = rs[0];
			msg = xasprintf("Can't admit new workloads: %s.",
					sbuf_cstr(&causes));
		} else {
			active = true;
			reason = "Ready";
			msg = xstrdup("Can admit new workloads");
		}
		sbuf_release(&miss);
		sbuf_release(&acs);
		sbuf_release(&inact);
		sbuf_release(&topo);
		sbuf_release(&causes);
	}
	if (c->active != active || c->reason != reason ||
	    (!msg) != (!c->message) ||
	    (msg && strcmp(msg, c->message))) {
		c->active = active;
		c->reason = reason;
		free(c->message);
		c->message = msg;
		sched_dirty_cq(s, id);
	} else {
		free(msg);
	}
}

static void update_all_active(struct sched *s)
{
	for (size_t i = 0; i < s->ncq; i++)
		cq_update_active(s, (int32_t)i);
}

/* ---- Topologies and AdmissionChecks: names that exist ---- */

/* Every ClusterQueue's Active condition again, and the trees of those it
 * changed requeued (few objects; rare events). */
static void names_changed(struct sched *s)
{
	s->state++;
	for (size_t i = 0; i < s->ncq; i++) {
		bool was = s->cqs[i].active;

		cq_update_active(s, (int32_t)i);
		if (s->cqs[i].active != was)
			requeue_tree(s, (int32_t)i);
	}
}

static void name_set(struct sched *s, struct smap *m, const char *name,
		     bool exists)
{
	bool had = smap_has(m, name);

	if (had == exists)
		return;
	if (exists)
		smap_set(m, name, "");
	else
		smap_del(m, name);
	names_changed(s);
}

void sched_topology_set(struct sched *s, const char *name, bool exists)
{
	name_set(s, &s->topos, name, exists);
}

void sched_admission_check_set(struct sched *s, const char *name,
			       bool exists)
{
	name_set(s, &s->acs, name, exists);
}

/* ---- ResourceFlavors ---- */

static void flavor_changed(struct sched *s, int32_t fid)
{
	s->flv[fid].gen = next_gen(s);
	s->state++;
	for (size_t i = 0; i < s->ncq; i++) {
		struct scq *c = &s->cqs[i];

		for (size_t j = 0; j < c->nflavors; j++) {
			if (c->flavors[j] != fid)
				continue;
			cq_update_active(s, (int32_t)i);
			requeue_tree(s, (int32_t)i);
			break;
		}
	}
}

void sched_flavor_set(struct sched *s, const struct resource_flavor *rf)
{
	int32_t id = flavor_get(s, rf->meta.name);

	s->flv[id].rf = rf;
	flavor_changed(s, id);
}

void sched_flavor_remove(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->flv_idx, name);

	if (id < 0)
		return;
	s->flv[id].rf = NULL;
	flavor_changed(s, id);
}

/* ---- cohorts ---- */

/* The tree node of cohort name; an object-less one is made implicit once
 * linked (call after linking a child to it). */
static void cohort_mark_implicit(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->coh_idx, name);
	int node;

	if (id >= 0 && s->coh[id].c)
		return;
	node = tree_node_find(s->t, NODE_COHORT, name);
	if (node >= 0)
		tree_node_remove(s->t, node);
}

static void set_quotas(struct sched *s, int node,
		       const struct resource_group *g, size_t ng)
{
	tree_clear_quotas(s->t, node);
	for (size_t i = 0; i < ng; i++) {
		for (size_t j = 0; j < g[i].nflavors; j++) {
			const struct flavor_quotas *fq = &g[i].flavors[j];

			for (size_t k = 0; k < fq->nres; k++) {
				const struct resource_quota *q = &fq->res[k];
				int fr = tree_fr(s->t, fq->name, q->name);

				tree_set_quota(s->t, node, fr,
					       q->nominal < 0 ? 0 : q->nominal,
					       q->has_borrowing
						       ? q->borrowing
						       : TREE_UNLIMITED,
					       q->has_lending
						       ? q->lending
						       : TREE_UNLIMITED);
			}
		}
	}
}

void sched_cohort_set(struct sched *s, const struct cohort *co)
{
	const char *name = co->meta.name;
	int32_t id = cohort_get(s, name);
	int node = tree_node(s->t, NODE_COHORT, name);

	s->state++;
	s->coh[id].c = co;
	requeue_tree_of_node(s, node);
	if (co->parent && *co->parent) {
		tree_set_parent(s->t, node,
				tree_node(s->t, NODE_COHORT, co->parent));
		cohort_mark_implicit(s, co->parent);
	} else {
		tree_set_parent(s->t, node, -1);
	}
	set_quotas(s, node, co->groups, co->ngroups);
	tree_set_weight(s->t, node,
			co->has_fs_weight ? co->fs_weight
					  : TREE_WEIGHT_DEFAULT);
	update_all_active(s);
	requeue_tree_of_node(s, node);
}

void sched_cohort_remove(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->coh_idx, name);
	int node = tree_node_find(s->t, NODE_COHORT, name);

	s->state++;
	if (id >= 0)
		s->coh[id].c = NULL;
	if (node < 0)
		return;
	requeue_tree_of_node(s, node);
	tree_node_remove(s->t, node);
	node = tree_node_find(s->t, NODE_COHORT, name);
	update_all_active(s);
	if (node >= 0)
		requeue_tree_of_node(s, node);
}

/* ---- ClusterQueues ---- */

static void add_flavor_ref(struct scq *c, int32_t f)
{
	for (size_t i = 0; i < c->nflavors; i++)
		if (c->flavors[i] == f)
			return;
	c->flavors = xrealloc(c->flavors,
			      (c->nflavors + 1) * sizeof(*c->flavors));
	c->flavors[c->nflavors++] = f;
}

static void cq_compile(struct sched *s, struct scq *c)
{
	const struct cluster_queue *cq = c->cq;
	struct assign_cq *a = &c->c;

	a->groups = xcalloc(cq->ngroups ? cq->ngroups : 1, sizeof(*a->groups));
	a->ngroups = cq->ngroups;
	for (size_t g = 0; g < cq->ngroups; g++) {
		const struct resource_group *rg = &cq->groups[g];
		struct assign_group *ag = &a->groups[g];

		ag->nres = rg->ncovered;
		ag->res = xcalloc(ag->nres ? ag->nres : 1, sizeof(*ag->res));
		for (size_t k = 0; k < rg->ncovered; k++)
			ag->res[k] = res_get(s, rg->covered[k]);
		ag->nflv = rg->nflavors;
		ag->flv = xcalloc(ag->nflv ? ag->nflv : 1, sizeof(*ag->flv));
		ag->fr = xcalloc(ag->nflv * ag->nres + 1, sizeof(*ag->fr));
		for (size_t j = 0; j < rg->nflavors; j++) {
			const struct flavor_quotas *fq = &rg->flavors[j];

			ag->flv[j] = flavor_get(s, fq->name);
			add_flavor_ref(c, ag->flv[j]);
			for (size_t k = 0; k < ag->nres; k++)
				ag->fr[j * ag->nres + k] =
					tree_fr(s->t, fq->name,
						rg->covered[k]);
		}
	}
	a->ngroup_of = s->res_idx.n;
	a->group_of = xmalloc((a->ngroup_of ? a->ngroup_of : 1) *
			      sizeof(*a->group_of));
	for (size_t i = 0; i < a->ngroup_of; i++)
		a->group_of[i] = -1;
	for (size_t g = 0; g < a->ngroups; g++)
		for (size_t k = 0; k < a->groups[g].nres; k++)
			if (a->group_of[a->groups[g].res[k]] < 0)
				a->group_of[a->groups[g].res[k]] = (int16_t)g;
	a->when_borrow = cq->when_can_borrow;
	a->when_preempt = cq->when_can_preempt;
	a->pref = cq->fung_preference;
	/* Kueue's canPreemptWhileBorrowing: fair sharing's preemption may
	 * leave the preemptor borrowing whenever it may reclaim. */
	a->can_preempt_while_borrowing =
		cq->borrow_policy != BWC_NEVER ||
		(s->o.fair_sharing && cq->reclaim != RWC_NEVER);
}

void sched_cq_set(struct sched *s, const struct cluster_queue *cq,
		  const char *invalid)
{
	int32_t id = cq_get(s, cq->meta.name);
	struct scq *c = &s->cqs[id];

	s->state++;
	requeue_tree(s, id); /* the old tree: its shape changes */
	c->cq = cq;
	c->exists = true;
	free(c->invalid);
	c->invalid = xstrdup_or_null(invalid);
	c->gen = next_gen(s);
	assign_cq_release(&c->c);
	c->c.node = c->node;
	free(c->flavors);
	c->flavors = NULL;
	c->nflavors = 0;
	if (!invalid) {
		cq_compile(s, c);
		set_quotas(s, c->node, cq->groups, cq->ngroups);
		tree_set_weight(s->t, c->node,
				cq->has_fs_weight ? cq->fs_weight
						  : TREE_WEIGHT_DEFAULT);
		if (cq->cohort && *cq->cohort) {
			tree_set_parent(s->t, c->node,
					tree_node(s->t, NODE_COHORT,
						  cq->cohort));
			cohort_mark_implicit(s, cq->cohort);
		} else {
			tree_set_parent(s->t, c->node, -1);
		}
		queue_set_strategy(&c->q, cq->strategy);
		c->afs = s->o.afs &&
			 cq->admission_mode == AM_USAGE_BASED_FAIR_SHARING;
		c->afs_stale = true;
		queue_set_by_usage(&c->q, c->afs);
	} else {
		tree_clear_quotas(s->t, c->node);
		tree_set_parent(s->t, c->node, -1);
	}
	/* A ClusterQueue is a leaf: joining or leaving a cohort cannot make
	 * or break a cycle, so only its own Active condition can move. */
	cq_update_active(s, id);
	requeue_tree(s, id);
	sched_dirty_cq(s, id);
	if (!invalid && cq->stop != c->stop) {
		/* Draining evicts its holders; a restart requeues those it
		 * evicted (held by Requeued=False). */
		c->stop = cq->stop;
		flag_holders(s, id, -1);
		queue_visit_parked(&c->q, flag_parked, s);
	}
}

void sched_cq_remove(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->cq_idx, name);
	struct scq *c;

	if (id < 0)
		return;
	s->state++;
	c = &s->cqs[id];
	requeue_tree(s, id);
	c->cq = NULL;
	c->exists = false;
	FREE_AND_NULL(c->invalid);
	c->gen = next_gen(s);
	assign_cq_release(&c->c);
	c->c.node = c->node;
	free(c->flavors);
	c->flavors = NULL;
	c->nflavors = 0;
	tree_clear_quotas(s->t, c->node);
	tree_set_parent(s->t, c->node, -1);
	cq_update_active(s, id);
	sched_dirty_cq(s, id);
}

/* ---- LocalQueues ---- */

void sched_lq_set(struct sched *s, const char *lq, enum stop_policy stop)
{
	int32_t id = nidx_find(&s->lq_idx, lq);
	struct slq *l;

	if (id < 0 && stop == STOP_NONE)
		return; /* what an unknown LocalQueue already reads as */
	if (id < 0)
		id = lq_get(s, lq);
	l = &s->lqs[id];
	if (l->stop == stop)
		return;
	l->stop = stop;
	s->state++;
	/* Its holders may be draining now; its Requeued=False workloads
	 * come back through the controller's re-resolution. */
	for (size_t i = 0; i < s->ncq; i++)
		flag_holders(s, (int32_t)i, id);
	sched_lq_reap(s, id);
}

/* ---- namespaces ---- */

void sched_namespace_set(struct sched *s, const char *name,
			 const struct smap *labels)
{
	int32_t id = ns_get(s, name);

	s->state++;
	if (labels)
		smap_copy(&s->ns[id].labels, labels);
	else
		smap_release(&s->ns[id].labels);
	s->ns[id].gen = next_gen(s);
	for (size_t i = 0; i < s->ncq; i++)
		requeue_cq(s, (int32_t)i);
	ns_reap(s, id);
}

void sched_namespace_remove(struct sched *s, const char *name)
{
	int32_t id = nidx_find(&s->ns_idx, name);

	if (id < 0)
		return;
	s->state++;
	smap_release(&s->ns[id].labels);
	s->ns[id].gen = next_gen(s);
	ns_reap(s, id);
}

/* ---- workloads: accounting ---- */

static void grow_fr_array(int64_t **a, size_t *n, size_t need)
{
	if (need <= *n)
		return;
	*a = xrealloc(*a, need * sizeof(**a));
	memset(*a + *n, 0, (need - *n) * sizeof(**a));
	*n = need;
}

/* Adds (sign 1) or removes (-1) r's contribution to its LocalQueue's
 * counts and usage and to its holding CQ's counts (not the tree). */
void sched_account(struct sched *s, struct swl *r, int sign)
{
	bool holds = r->state == WS_HOLDING || r->state == WS_ASSUMED;
	size_t nfr = tree_nfr(s->t);

	if (holds && r->not_ready) {
		if (sign > 0)
			s->nnot_ready++;
		else
			s->nnot_ready--;
	}

	if (r->lq >= 0) {
		struct slq *l = &s->lqs[r->lq];

		if (r->state == WS_PENDING)
			l->pending += sign;
		if (holds) {
			l->reserving += sign;
			if (r->admitted)
				l->admitted += sign;
			if (l->nusage < nfr) {
				size_t n = l->nusage;

				grow_fr_array(&l->res_usage, &n, nfr);
				n = l->nusage;
				grow_fr_array(&l->adm_usage, &n, nfr);
				l->nusage = nfr;
			}
			for (size_t i = 0; i < r->nusage; i++) {
				int fr = r->usage[i].fr;

				l->res_usage[fr] += sign * r->usage[i].v;
				if (r->admitted)
					l->adm_usage[fr] +=
						sign * r->usage[i].v;
			}
		}
		sched_dirty_lq(s, r->lq);
	}
	if (holds) {
		struct scq *c = &s->cqs[r->hold_cq];

		c->reserving += sign;
		if (r->admitted) {
			c->admitted += sign;
			grow_fr_array(&c->adm_usage, &c->nadm, nfr);
			for (size_t i = 0; i < r->nusage; i++)
				c->adm_usage[r->usage[i].fr] +=
					sign * r->usage[i].v;
		}
		sched_dirty_cq(s, r->hold_cq);
	}
	if (r->state == WS_PENDING)
		sched_dirty_cq(s, r->cq);
}

void sched_holder_link(struct sched *s, struct swl *r)
{
	struct scq *c = &s->cqs[r->hold_cq];

	r->h_prev = NULL;
	r->h_next = c->holders;
	if (c->holders)
		c->holders->h_prev = r;
	c->holders = r;
	c->nholders++;
}

void sched_holder_unlink(struct sched *s, struct swl *r)
{
	struct scq *c = &s->cqs[r->hold_cq];

	if (r->h_prev)
		r->h_prev->h_next = r->h_next;
	else
		c->holders = r->h_next;
	if (r->h_next)
		r->h_next->h_prev = r->h_prev;
	r->h_prev = r->h_next = NULL;
	c->nholders--;
}

void sched_tree_apply(struct sched *s, struct swl *r, bool add)
{
	int node = s->cqs[r->hold_cq].node;

	if (add)
		sched_holder_link(s, r);
	else
		sched_holder_unlink(s, r);

	for (size_t i = 0; i < r->nusage; i++) {
		if (add)
			tree_add_usage(s->t, node, r->usage[i].fr,
				       r->usage[i].v);
		else
			tree_remove_usage(s->t, node, r->usage[i].fr,
					  r->usage[i].v);
	}
}

/* The requeue event of quota released in cq's tree: at once, or batched
 * (opts.requeue_batch_ms; applied by sched_tick when due). */
static void requeue_released(struct sched *s, int32_t cq)
{
	struct scq *c = &s->cqs[cq];

	if (s->o.requeue_batch_ms <= 0) {
		requeue_tree(s, cq);
		return;
	}
	if (c->rq_due)
		return;
	c->rq_due = s->now + s->o.requeue_batch_ms;
	if (c->rq_due == 0)
		c->rq_due = 1;
	if (s->nrq == s->caprq)
		XGROW(s->rq_pending, s->caprq, s->nrq + 1);
	s->rq_pending[s->nrq++] = cq;
}

/* Applies the batched requeue events due by now. */
static void requeue_due(struct sched *s, int64_t now)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nrq; i++) {
		int32_t cq = s->rq_pending[i];
		struct scq *c = &s->cqs[cq];

		if (c->rq_due > now) {
			s->rq_pending[k++] = cq;
			continue;
		}
		c->rq_due = 0;
		s->state++;
		requeue_tree(s, cq);
	}
	s->nrq = k;
}

/* Drops r's quota (tree only) and fires the requeue event. */
static void release_hold(struct sched *s, struct swl *r)
{
	sched_afs_drop(s, r);
	r->preempting = false;
	sched_tree_apply(s, r, false);
	requeue_released(s, r->hold_cq);
	FREE_AND_NULL(r->usage);
	r->nusage = 0;
}

static void add_fr(struct fr_val **u, size_t *n, int fr, int64_t v)
{
	for (size_t i = 0; i < *n; i++) {
		if ((*u)[i].fr == fr) {
			(*u)[i].v += v;
			return;
		}
	}
	*u = xrealloc(*u, (*n + 1) * sizeof(**u));
	(*u)[(*n)++] = (struct fr_val){ fr, v };
}

/* The usage an admission reserves: resourceUsage per assigned flavor,
 * scaled down by reclaimable pods. */
static void admission_usage(struct sched *s, const struct workload *w,
			    struct fr_val **out, size_t *n)
{
	const struct admission *a = &w->admission;

	*out = NULL;
	*n = 0;
	for (size_t i = 0; i < a->npsa; i++) {
		const struct pod_set_assignment *p = &a->psa[i];
		int32_t count = p->has_count ? p->count : 0, recl = 0;

		if (!p->has_count)
			for (size_t j = 0; j < w->npod_sets; j++)
				if (p->name && w->pod_sets[j].name &&
				    !strcmp(p->name, w->pod_sets[j].name))
					count = w->pod_sets[j].count;
		for (size_t j = 0; j < w->nreclaimable; j++)
			if (p->name && w->reclaimable[j].name &&
			    !strcmp(p->name, w->reclaimable[j].name))
				recl = w->reclaimable[j].count;
		for (size_t k = 0; k < p->usage.n; k++) {
			const char *rn = p->usage.v[k].name;
			const char *fl = smap_get(&p->flavors, rn);
			int64_t v = p->usage.v[k].milli;

			if (!fl || v <= 0)
				continue;
			if (recl > 0 && count > 0)
				v = recl >= count ? 0 : v / count *
							(count - recl);
			add_fr(out, n, tree_fr(s->t, fl, rn), v);
		}
	}
}

static bool same_usage(const struct fr_val *a, size_t na,
		       const struct fr_val *b, size_t nb)
{
	if (na != nb)
		return false;
	for (size_t i = 0; i < na; i++) {
		size_t j;

		for (j = 0; j < nb; j++)
			if (b[j].fr == a[i].fr)
				break;
		if (j == nb || b[j].v != a[i].v)
			return false;
	}
	return true;
}

/* ---- workloads: compiled pod sets ---- */

/* The queue-order timestamp (§7.6): the eviction time of a workload
 * evicted by an admission check, or by a PodsReady timeout unless
 * requeuingStrategy.timestamp is Creation; else the creation time. */
static int64_t queue_ts(const struct sched *s, const struct workload *w)
{
	const struct condition *ev = conditions_find(&w->conds, "Evicted");

	if (ev && ev->status == COND_TRUE && ev->reason &&
	    ((!s->o.requeue_ts_creation &&
	      !strcmp(ev->reason, "PodsReadyTimeout")) ||
	     !strcmp(ev->reason, "AdmissionCheck")))
		return ev->last_transition_ms;
	return w->meta.creation_ms;
}

static uint32_t mix(uint32_t h, uint64_t v)
{
	for (int i = 0; i < 8; i++) {
		h ^= (uint32_t)(v & 0xff);
		h *= 16777619u;
		v >>= 8;
	}
	return h;
}

/* A signature of what makes a parked workload worth another look. */
static uint32_t wl_sig(const struct workload *w, const struct swl *r)
{
	const char *types[2] = { "Evicted", "Requeued" };
	uint32_t h = 2166136261u;

	h = mix(h, (uint64_t)w->meta.generation);
	h = mix(h, (uint64_t)(uint32_t)workload_priority(w));
	for (int i = 0; i < 2; i++) {
		const struct condition *c = conditions_find(&w->conds,
							    types[i]);

		h = mix(h, c ? (uint64_t)c->status + 1 : 0);
		h = mix(h, c ? (uint64_t)c->last_transition_ms : 0);
	}
	for (size_t i = 0; i < r->nps; i++) {
		h = mix(h, (uint64_t)r->ps[i].count);
		h = mix(h, (uint64_t)r->ps[i].min_count);
		for (size_t k = 0; k < r->ps[i].nreq; k++) {
			h = mix(h, (uint64_t)r->ps[i].req[k].res);
			h = mix(h, (uint64_t)r->ps[i].req[k].milli);
		}
	}
	return h;
}

/* ---- workloads: scheduling equivalence (§1.3) ---- */

static uint64_t eq_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

static uint64_t eq_u64(uint64_t h, uint64_t v)
{
	h = (h ^ v) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 32);
}

static uint64_t eq_str(uint64_t h, const char *str)
{
	if (!str)
		return eq_u64(h, 0x5a5a5a5aULL);
	return eq_bytes(h, str, strlen(str) + 1);
}

static uint64_t eq_strmap(uint64_t h, const struct smap *m)
{
	h = eq_u64(h, m->n);
	for (size_t i = 0; i < m->n; i++) {
		h = eq_str(h, m->v[i].key);
		h = eq_str(h, m->v[i].value);
	}
	return h;
}

static uint64_t eq_selector(uint64_t h, const struct label_selector *ls)
{
	h = eq_u64(h, ls->n);
	for (size_t i = 0; i < ls->n; i++) {
		const struct sel_req *q = &ls->reqs[i];

		h = eq_str(h, q->key);
		h = eq_u64(h, (uint64_t)q->op);
		h = eq_u64(h, q->nvalues);
		for (size_t j = 0; j < q->nvalues; j++)
			h = eq_str(h, q->values[j]);
	}
	return h;
}

/*
 * Kueue's scheduling equivalence hash: what the cycle's verdict on a
 * pending workload depends on besides the quota state. The namespace
 * (for the ClusterQueue's namespaceSelector), the effective priority,
 * and per pod set its name (messages name it), effective count and
 * minCount, per-pod requests (so total requests too) and what flavor
 * matching reads (a topology request, node selector, required node
 * affinity, tolerations).
 * Never 0 (0 = no class).
 */
static uint64_t wl_eq_hash(const struct swl *r)
{
	uint64_t h = 14695981039346656037ULL;

	h = eq_u64(h, (uint64_t)(uint32_t)r->ns);
	h = eq_u64(h, (uint64_t)(uint32_t)r->qi.priority);
	h = eq_u64(h, r->nps);
	for (size_t i = 0; i < r->nps; i++) {
		const struct assign_podset *p = &r->ps[i];
		const struct pod_template *t = &p->ps->tmpl;

		h = eq_str(h, p->ps->name);
		h = eq_u64(h, p->ps->tas_requested);
		h = eq_u64(h, (uint64_t)(uint32_t)p->count);
		h = eq_u64(h, (uint64_t)(uint32_t)p->min_count);
		h = eq_u64(h, p->nreq);
		for (size_t k = 0; k < p->nreq; k++) {
			h = eq_u64(h, (uint64_t)(uint32_t)p->req[k].res);
			h = eq_u64(h, (uint64_t)p->req[k].milli);
		}
		h = eq_strmap(h, &t->node_selector);
		h = eq_u64(h, t->affinity.present);
		if (t->affinity.present) {
			h = eq_u64(h, t->affinity.n);
			for (size_t k = 0; k < t->affinity.n; k++) {
				h = eq_selector(h, &t->affinity.terms[k].exprs);
				h = eq_u64(h, t->affinity.terms[k].nfields);
			}
		}
		h = eq_u64(h, t->ntols);
		for (size_t k = 0; k < t->ntols; k++) {
			const struct toleration *o = &t->tols[k];

			h = eq_str(h, o->key);
			h = eq_u64(h, (uint64_t)o->op);
			h = eq_str(h, o->value);
			h = eq_u64(h, (uint64_t)o->effect);
		}
	}
	return h ? h : 1;
}

static bool containers_same(const struct container_res *a,
			    const struct container_res *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i].sidecar != b[i].sidecar ||
		    !reslist_equal(&a[i].requests, &b[i].requests) ||
		    !reslist_equal(&a[i].limits, &b[i].limits))
			return false;
	return true;
}

/*
 * Whether everything compile_podsets and wl_eq_hash read is the same in
 * the old and the new copy of a workload (the old one is still valid
 * during its replacement's _set, per the borrowing contract): then a
 * status-only update (the echo of a pending write, say) keeps the
 * compiled pod sets and their flavor-match caches.
 */
static bool podsets_same(const struct workload *o, const struct workload *w)
{
	if (o->npod_sets != w->npod_sets ||
	    o->nreclaimable != w->nreclaimable)
		return false;
	for (size_t i = 0; i < w->nreclaimable; i++)
		if (o->reclaimable[i].count != w->reclaimable[i].count ||
		    !text_same(o->reclaimable[i].name, w->reclaimable[i].name))
			return false;
	for (size_t i = 0; i < w->npod_sets; i++) {
		const struct pod_set *a = &o->pod_sets[i], *b = &w->pod_sets[i];
		const struct pod_template *x = &a->tmpl, *y = &b->tmpl;

		if (a->count != b->count ||
		    a->has_min_count != b->has_min_count ||
		    (a->has_min_count && a->min_count != b->min_count) ||
		    !text_same(a->name, b->name) ||
		    !reslist_equal(&a->dra, &b->dra))
			return false;
		if (x->ncontainers != y->ncontainers ||
		    x->ninit_containers != y->ninit_containers ||
		    x->has_pod_resources != y->has_pod_resources ||
		    x->ntols != y->ntols || x->affinity.present ||
		    y->affinity.present)
			return false;
		if (!containers_same(x->containers, y->containers,
				     x->ncontainers) ||
		    !containers_same(x->init_containers, y->init_containers,
				     x->ninit_containers) ||
		    !reslist_equal(&x->overhead, &y->overhead) ||
		    !reslist_equal(&x->pod_requests, &y->pod_requests) ||
		    !reslist_equal(&x->pod_limits, &y->pod_limits) ||
		    !smap_equal(&x->node_selector, &y->node_selector))
			return false;
		for (size_t k = 0; k < x->ntols; k++)
			if (!toleration_equal(&x->tols[k], &y->tols[k]))
				return false;
	}
	return true;
}

static void compile_podsets(struct sched *s, struct swl *r,
			    const struct workload *w)
{
	for (size_t i = 0; i < r->nps; i++)
		assign_podset_release(&r->ps[i]);
	free(r->ps);
	r->nps = w->npod_sets;
	r->ps = xcalloc(r->nps ? r->nps : 1, sizeof(*r->ps));
	for (size_t i = 0; i < r->nps; i++) {
		const struct pod_set *p = &w->pod_sets[i];
		struct assign_podset *a = &r->ps[i];
		struct reslist rl = RESLIST_INIT;
		struct err err;
		int32_t recl = 0;

		a->ps = p;
		for (size_t j = 0; j < w->nreclaimable; j++)
			if (p->name && w->reclaimable[j].name &&
			    !strcmp(p->name, w->reclaimable[j].name))
				recl = w->reclaimable[j].count;
		a->count = p->count - recl < 0 ? 0 : p->count - recl;
		a->min_count = p->has_min_count && p->min_count < a->count
				       ? p->min_count
				       : a->count;
		if (pod_requests(&p->tmpl, &rl, &err) < 0) {
			/* An overflowing request can never fit: keep it
			 * as the largest value rather than dropping it. */
			for (size_t k = 0; k < rl.n; k++)
				rl.v[k].milli = INT64_MAX;
		}
		res_policy_apply(s->o.res_policy, &rl);
		/* the devices of its claims, after the transformations (as
		 * Kueue adds its DRA resources to the transformed requests) */
		for (size_t k = 0; k < p->dra.n; k++)
			if (reslist_add(&rl, p->dra.v[k].name, p->dra.v[k].milli,
					&err) < 0)
				reslist_set(&rl, p->dra.v[k].name, INT64_MAX);
		a->req = xcalloc(rl.n ? rl.n : 1, sizeof(*a->req));
		a->nreq = rl.n;
		for (size_t k = 0; k < rl.n; k++) {
			a->req[k].res = res_get(s, rl.v[k].name);
			a->req[k].milli = resource_units_milli(rl.v[k].name,
							       rl.v[k].milli);
		}
		reslist_release(&rl);
	}
}

/* ---- workloads: inputs ---- */

/* Keeps s->nbackoff = the records whose qitem carries a backoff. */
void sched_set_requeue_at(struct sched *s, struct swl *r, int64_t at)
{
	if (!r->qi.requeue_at_ms != !at)
		s->nbackoff += at ? 1 : -1;
	r->qi.requeue_at_ms = at;
}

/* The record of key, a new zeroed one when unknown (perhaps on the id
 * of a freed one: nothing of that one survives but the id). */
static struct swl *wl_get(struct sched *s, const char *key)
{
	int32_t id = nidx_find(&s->wl_idx, key);
	struct swl *r;

	if (id >= 0)
		return s->wls[id];
	id = nidx_add(&s->wl_idx, key);
	if ((size_t)id == s->nwl) {
		if (s->nwl == s->capwl)
			XGROW(s->wls, s->capwl, s->nwl + 1);
		s->wls[s->nwl++] = NULL;
	}
	if (s->wls[id])
		BUG("sched: workload id %d reused while its record lives",
		    (int)id);
	r = xcalloc(1, sizeof(*r));
	r->key = s->wl_idx.key[id];
	r->id = id;
	r->ns = -1;
	r->cq = -1;
	r->lq = -1;
	r->hold_cq = -1;
	s->wls[id] = r;
	s->nwl_rec++;
	return r;
}

/* Points r at namespace ns and LocalQueue lq (-1: none), keeping their
 * reference counts; a record no longer referred to may be freed. */
static void wl_refs(struct sched *s, struct swl *r, int32_t ns, int32_t lq)
{
	int32_t ons = r->ns, olq = r->lq;

	if (ns == ons && lq == olq)
		return;
	if (ns >= 0)
		s->ns[ns].nref++;
	if (lq >= 0)
		s->lqs[lq].nref++;
	r->ns = ns;
	r->lq = lq;
	if (ons >= 0) {
		s->ns[ons].nref--;
		ns_reap(s, ons);
	}
	if (olq >= 0) {
		s->lqs[olq].nref--;
		sched_lq_reap(s, olq);
	}
}

void sched_wl_reap(struct sched *s, struct swl *r)
{
	int32_t id = r->id;

	if (r->key || r->flagged)
		BUG("sched_wl_reap: workload record %d is in use", (int)id);
	wl_free_record(r);
	if (s->ready_wait == id)
		s->ready_wait = -1;
	s->wls[id] = NULL;
	s->nwl_rec--;
	nidx_free_id(&s->wl_idx, id);
}

static void leave_queue(struct sched *s, struct swl *r)
{
	sched_set_requeue_at(s, r, 0);
	if (r->state != WS_PENDING)
		return;
	queue_remove(&s->cqs[r->cq].q, &r->qi);
	sched_dirty_cq(s, r->cq);
	r->state = WS_NONE;
}

static void make_holding(struct sched *s, struct swl *r,
			 const struct workload *w)
{
	struct fr_val *u;
	size_t n;
	int32_t cq;

	admission_usage(s, w, &u, &n);
	cq = cq_get(s, w->admission.cluster_queue ? w->admission.cluster_queue
						  : "");
	if ((r->state == WS_HOLDING || r->state == WS_ASSUMED) &&
	    r->hold_cq == cq && same_usage(u, n, r->usage, r->nusage)) {
		free(u);
	} else {
		if (r->state == WS_HOLDING || r->state == WS_ASSUMED)
			release_hold(s, r);
		r->hold_cq = cq;
		r->usage = u;
		r->nusage = n;
		sched_tree_apply(s, r, true);
	}
	r->state = WS_HOLDING;
	r->admitted = workload_is_admitted(w);
	/* what preemption orders candidates by (sched_preempt.c) */
	r->qi.priority = workload_priority(w);
	r->qi.ts_ms = queue_ts(s, w);
	{
		const struct condition *qr =
			conditions_find(&w->conds, "QuotaReserved");

		r->qr_ms = qr && qr->status == COND_TRUE
				   ? qr->last_transition_ms
				   : 0;
	}
}

static uint32_t cond_mix(uint32_t h, const struct condition *c)
{
	h = h * 31 + (c ? (uint32_t)c->status + 1 : 0);
	for (const char *p = c && c->reason ? c->reason : ""; *p; p++)
		h = h * 31 + (unsigned char)*p;
	return h;
}

/* What the eviction and requeue checks read of w. */
static uint32_t chk_sig(const struct workload *w)
{
	uint32_t h = w->active ? 2 : 1;

	h = cond_mix(h, conditions_find(&w->conds, "Evicted"));
	h = cond_mix(h, conditions_find(&w->conds, "Requeued"));
	h = cond_mix(h, conditions_find(&w->conds, "QuotaReserved"));
	return h;
}

void sched_wl_podsets_changed(struct sched *s, const char *key)
{
	int32_t id = nidx_find(&s->wl_idx, key);

	if (id >= 0 && s->wls[id])
		s->wls[id]->recompile = true;
}

void sched_wl_set(struct sched *s, const struct workload *w, const char *cq,
		  const char *lq)
{
	char buf[256];
	char *key = object_key_buf(buf, sizeof(buf), w->meta.namespace,
			       w->meta.name);
	struct swl *r = wl_get(s, key);
	bool holds = workload_holds_quota(w);
	bool gone = workload_is_finished(w) || !w->active;
	/* r->ps was compiled from r->w only while it stayed pending. */
	const struct workload *old = r->state == WS_PENDING ? r->w : NULL;
	bool was_admitted = r->state == WS_HOLDING && r->admitted;

	if (key != buf)
		free(key);
	s->state++;
	sched_account(s, r, -1);
	r->w = w;
	r->not_ready = !conditions_is_true(&w->conds, "PodsReady");
	wl_refs(s, r, ns_get(s, w->meta.namespace ? w->meta.namespace : ""),
		lq ? lq_get(s, lq) : -1);
	if (r->state == WS_ASSUMED && !holds && !gone &&
	    w->meta.generation == r->gen) {
		/* A stale pending copy: the assumption stands. Re-point the
		 * compiled pod sets at the new object. A new generation is
		 * a new spec: the admission in flight (decided on the old
		 * one) will fail its precondition, and the workload is
		 * pending again as it is now, compiled afresh. */
		for (size_t i = 0; i < r->nps && i < w->npod_sets; i++)
			r->ps[i].ps = &w->pod_sets[i];
		sched_account(s, r, 1);
		return;
	}
	{
		uint32_t sig = chk_sig(w);
		const struct condition *ev = conditions_find(&w->conds,
							     "Evicted");

		if (sig != r->chk_sig)
			r->chk_sent = false;
		r->chk_sig = sig;
		r->evicted = holds && ev && ev->status == COND_TRUE;
		sched_flag_check(s, r);
	}
	if (holds) {
		leave_queue(s, r);
		make_holding(s, r, w);
		r->last_hash = 0;
		r->last_reason = NULL;
	} else if (gone || !cq) {
		leave_queue(s, r);
		if (r->state == WS_HOLDING || r->state == WS_ASSUMED)
			release_hold(s, r);
		r->state = WS_NONE;
	} else {
		int32_t c = cq_get(s, cq);
		uint32_t sig;
		bool changed;

		if (r->state == WS_HOLDING || r->state == WS_ASSUMED) {
			release_hold(s, r);
			r->state = WS_NONE;
		}
		/* The same pod_sets array (a caller that moved the spec
		 * of the old version into the new one) or equal sets. */
		if (!r->recompile && old && r->ps && r->nps == w->npod_sets &&
		    ((r->nps && r->ps[0].ps == &w->pod_sets[0]) ||
		     podsets_same(old, w))) {
			for (size_t i = 0; i < r->nps; i++)
				r->ps[i].ps = &w->pod_sets[i];
		} else {
			compile_podsets(s, r, w);
		}
		r->recompile = false;
		sig = wl_sig(w, r);
		changed = sig != r->cond_sig || r->state != WS_PENDING ||
			  r->cq != c;
		if (sig != r->cond_sig && r->gen != w->meta.generation) {
			r->last_hash = 0;
			r->last_reason = NULL;
		}
		r->cond_sig = sig;
		r->gen = w->meta.generation;
		if (r->state == WS_PENDING && r->cq != c)
			leave_queue(s, r);
		r->qi.priority = workload_priority(w);
		r->qi.ts_ms = queue_ts(s, w);
		r->qi.uid = r->w->meta.uid ? r->w->meta.uid : r->key;
		r->qi.eq_hash = s->o.no_equivalence ? 0 : wl_eq_hash(r);
		sched_set_requeue_at(s, r, w->requeue_at_ms);
		{
			const struct condition *rq =
				conditions_find(&w->conds, "Requeued");

			r->qi.requeued_false = rq && rq->status == COND_FALSE;
		}
		r->cq = c;
		sched_afs_key(s, r);
		queue_push(&s->cqs[c].q, &r->qi, changed, s->now);
		r->state = WS_PENDING;
		sched_dirty_cq(s, c);
	}
	sched_account(s, r, 1);
	if (r->lq >= 0 && (r->state == WS_PENDING || r->state == WS_HOLDING))
		s->lqs[r->lq].cq = r->state == WS_PENDING ? r->cq : r->hold_cq;
	/* Admission fair sharing: its entry penalty becomes history once
	 * it is seen admitted (Kueue settles on that transition). */
	if (r->state == WS_HOLDING && r->admitted && !was_admitted &&
	    r->afs_pen)
		sched_afs_settle(s, r);
}

void sched_wl_remove(struct sched *s, const char *ns, const char *name)
{
	char buf[256];
	char *key = object_key_buf(buf, sizeof(buf), ns, name);
	int32_t id = nidx_find(&s->wl_idx, key);
	struct swl *r;

	if (key != buf)
		free(key);
	if (id < 0)
		return;
	s->state++;
	r = s->wls[id];
	sched_account(s, r, -1);
	leave_queue(s, r);
	if (r->state == WS_HOLDING || r->state == WS_ASSUMED)
		release_hold(s, r);
	r->state = WS_NONE;
	r->w = NULL;
	wl_refs(s, r, -1, -1);
	/* Out of every queue, holder list and count now: the name goes, and
	 * the record with it unless the check list still holds its id
	 * (check_flagged reaps it then). */
	nidx_unlink(&s->wl_idx, id);
	r->key = NULL;
	r->qi.uid = NULL;
	for (size_t i = 0; i < r->nps; i++)
		assign_podset_release(&r->ps[i]);
	FREE_AND_NULL(r->ps);
	r->nps = 0;
	if (!r->flagged)
		sched_wl_reap(s, r);
}

void sched_wl_recheck(struct sched *s, const char *ns, const char *name)
{
	char buf[256];
	char *key = object_key_buf(buf, sizeof(buf), ns, name);
	int32_t id = nidx_find(&s->wl_idx, key);

	if (key != buf)
		free(key);
	if (id < 0 || !s->wls[id]->w)
		return;
	s->state++;
	s->wls[id]->chk_sent = false;
	s->wls[id]->preempting = false; /* its preemption write failed */
	sched_flag_check(s, s->wls[id]);
}

void sched_wl_forget(struct sched *s, const char *ns, const char *name)
{
	char buf[256];
	char *key = object_key_buf(buf, sizeof(buf), ns, name);
	int32_t id = nidx_find(&s->wl_idx, key);
	struct swl *r;

	if (key != buf)
		free(key);
	if (id < 0 || s->wls[id]->state != WS_ASSUMED)
		return;
	s->state++;
	r = s->wls[id];
	sched_account(s, r, -1);
	release_hold(s, r);
	r->state = WS_NONE;
	if (r->w && r->cq >= 0 && r->nps) {
		sched_afs_key(s, r);
		queue_push(&s->cqs[r->cq].q, &r->qi, true, s->now);
		r->state = WS_PENDING;
		sched_dirty_cq(s, r->cq);
	}
	sched_account(s, r, 1);
}

bool sched_has_work(const struct sched *s)
{
	if (sched_ready_blocked(s))
		return false;
	for (size_t i = 0; i < s->ncq; i++)
		if (s->cqs[i].active && queue_len_active(&s->cqs[i].q))
			return true;
	return false;
}

int64_t sched_next_wakeup(const struct sched *s)
{
	int64_t best = 0;

	for (size_t i = 0; i < s->nrq; i++) {
		int64_t due = s->cqs[s->rq_pending[i]].rq_due;

		if (!best || due < best)
			best = due;
	}
	if (!s->nbackoff)
		return best;
	/* Like queue_next_backoff, but a workload held by Requeued=False
	 * waits for its condition, not for the clock: a timer for it would
	 * fire forever. */
	for (size_t i = 0; i < s->ncq; i++) {
		const struct qitem *it;

		for (it = s->cqs[i].q.parked; it; it = it->park_next) {
			if (!it->requeue_at_ms || it->requeued_false)
				continue;
			if (!best || it->requeue_at_ms < best)
				best = it->requeue_at_ms;
		}
	}
	return best;
}

struct tick_ctx {
	struct sched *s;
	int64_t now;
	size_t moved;
};

static bool keep_expired(void *ctx, const struct qitem *it)
{
	struct tick_ctx *k = ctx;
	struct swl *r = SWL_OF(it);

	if (!it->requeue_at_ms || k->now < it->requeue_at_ms)
		return false;
	sched_set_requeue_at(k->s, r, 0); /* will move: the backoff is over */
	k->moved++;
	return true;
}

void sched_tick(struct sched *s, int64_t now_ms)
{
	if (now_ms > s->now)
		s->now = now_ms;
	if (s->nrq)
		requeue_due(s, now_ms);
	if (!s->nbackoff)
		return; /* nothing waits for the clock: skip the walk */
	for (size_t i = 0; i < s->ncq; i++) {
		struct scq *c = &s->cqs[i];
		struct tick_ctx k = { s, now_ms, 0 };
		uint64_t rc = c->q.requeue_cycle;

		if (!queue_len_parked(&c->q) || !queue_next_backoff(&c->q))
			continue;
		queue_requeue_parked(&c->q, now_ms, keep_expired, &k);
		c->q.requeue_cycle = rc; /* expiry is not a requeue event */
		if (k.moved) {
			s->state++;
			sched_dirty_cq(s, (int32_t)i);
		}
	}
}
