/*
 * sched_status: what status writers, metrics and the invariant checker
 * read from flavors/sched (see sched.h): ClusterQueue and LocalQueue
 * counts and usage, the Active condition, dirty sets, sched_check.
 * Reads sched's state only, except sched_take_dirty which empties the
 * dirty sets. Never part of a cycle.
 */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "flavors/sched.h"
#include "flavors/sched_int.h"

void sched_cq_status(const struct sched *s, const char *name,
		     struct sched_cq_status *st)
{
	int32_t id = sched_find_cq(s, name);
	const struct scq *c;

	memset(st, 0, sizeof(*st));
	if (id < 0 || !s->cqs[id].exists)
		return;
	c = &s->cqs[id];
	st->exists = true;
	st->active = c->active;
	st->reason = c->reason;
	st->message = c->message;
	st->pending = (int32_t)queue_len_pending(&c->q);
	st->pending_active = (int32_t)queue_len_active(&c->q);
	st->pending_inadmissible = (int32_t)queue_len_parked(&c->q);
	st->reserving = c->reserving;
	st->admitted = c->admitted;
	if (s->o.fair_sharing) {
		struct fair_drs d;

		fair_drs(s->fair, s->t, c->node, &d);
		st->fair = true;
		st->weighted_share = fair_share_rounded(&d);
		st->share = fair_share(&d);
	}
}

bool sched_cohort_share(const struct sched *s, const char *name,
			int64_t *rounded, double *share)
{
	int node = tree_node_find(s->t, NODE_COHORT, name);
	struct fair_drs d;

	if (!s->o.fair_sharing || node < 0)
		return false;
	fair_drs(s->fair, s->t, node, &d);
	*rounded = fair_share_rounded(&d);
	*share = fair_share(&d);
	return true;
}

void sched_take_dirty_cohorts(struct sched *s, sched_dirty_fn *fn, void *ud)
{
	for (size_t i = 0; i < s->ndirty_coh; i++) {
		int node = s->dirty_coh[i];

		s->coh_dirty[node] = 0;
		if (fn && tree_node_exists(s->t, node) &&
		    tree_node_kind(s->t, node) == NODE_COHORT)
			fn(ud, tree_node_name(s->t, node));
	}
	s->ndirty_coh = 0;
}

/* Resource ids of a group sorted by name (insertion sort: groups are
 * small). */
static void sorted_res(const struct sched *s, const struct assign_group *g,
		       size_t *order)
{
	for (size_t i = 0; i < g->nres; i++)
		order[i] = i;
	for (size_t i = 1; i < g->nres; i++) {
		size_t v = order[i], j = i;

		while (j > 0 &&
		       strcmp(s->res_idx.key[g->res[order[j - 1]]],
			      s->res_idx.key[g->res[v]]) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = v;
	}
}

void sched_cq_usage(const struct sched *s, const char *name,
		    bool admitted_only, struct flavor_usage **out, size_t *n)
{
	int32_t id = sched_find_cq(s, name);
	const struct scq *c;
	size_t nf = 0, k = 0;
	bool cohort;

	*out = NULL;
	*n = 0;
	if (id < 0 || !s->cqs[id].exists || s->cqs[id].invalid)
		return;
	c = &s->cqs[id];
	cohort = c->cq->cohort && *c->cq->cohort;
	for (size_t g = 0; g < c->c.ngroups; g++)
		nf += c->c.groups[g].nflv;
	if (!nf)
		return;
	*out = xcalloc(nf, sizeof(**out));
	for (size_t g = 0; g < c->c.ngroups; g++) {
		const struct assign_group *grp = &c->c.groups[g];
		size_t *order = xmalloc((grp->nres ? grp->nres : 1) *
					sizeof(*order));

		sorted_res(s, grp, order);
		for (size_t j = 0; j < grp->nflv; j++) {
			struct flavor_usage *fu = &(*out)[k++];

			fu->name = xstrdup(s->flv[grp->flv[j]].name);
			fu->nres = grp->nres;
			fu->res = xcalloc(grp->nres ? grp->nres : 1,
					  sizeof(*fu->res));
			for (size_t r = 0; r < grp->nres; r++) {
				size_t col = order[r];
				int fr = grp->fr[j * grp->nres + col];
				int64_t total, nom;

				if (admitted_only)
					total = (size_t)fr < c->nadm
							? c->adm_usage[fr]
							: 0;
				else
					total = tree_usage(s->t, c->node, fr);
				nom = tree_nominal(s->t, c->node, fr);
				fu->res[r].name =
					xstrdup(s->res_idx.key[grp->res[col]]);
				fu->res[r].total = total;
				fu->res[r].borrowed =
					cohort && total > nom ? total - nom : 0;
			}
		}
		free(order);
	}
	*n = k;
}

void sched_lq_status(const struct sched *s, const char *lq,
		     struct sched_lq_status *st)
{
	int32_t id = sched_find_lq(s, lq);

	memset(st, 0, sizeof(*st));
	if (id < 0)
		return;
	st->pending = s->lqs[id].pending;
	st->reserving = s->lqs[id].reserving;
	st->admitted = s->lqs[id].admitted;
}

static int cmp_res_name(const void *a, const void *b, void *ctx)
{
	const struct sched *s = ctx;
	int fa = *(const int *)a, fb = *(const int *)b;
	int c = strcmp(tree_fr_flavor(s->t, fa), tree_fr_flavor(s->t, fb));

	if (c)
		return c;
	return strcmp(tree_fr_resource(s->t, fa), tree_fr_resource(s->t, fb));
}

void sched_lq_usage(const struct sched *s, const char *lq,
		    bool admitted_only, struct flavor_usage **out, size_t *n)
{
	int32_t id = sched_find_lq(s, lq);
	const struct slq *l;
	const int64_t *u;
	int *frs;
	size_t nfr = 0, nf = 0;

	*out = NULL;
	*n = 0;
	if (id < 0)
		return;
	l = &s->lqs[id];
	u = admitted_only ? l->adm_usage : l->res_usage;
	frs = xmalloc((l->nusage ? l->nusage : 1) * sizeof(*frs));
	for (size_t i = 0; i < l->nusage; i++)
		if (u[i] > 0)
			frs[nfr++] = (int)i;
	/* Sorted by flavor, then resource (insertion sort: few entries). */
	for (size_t i = 1; i < nfr; i++) {
		int v = frs[i];
		size_t j = i;

		while (j > 0 && cmp_res_name(&frs[j - 1], &v, (void *)s) > 0) {
			frs[j] = frs[j - 1];
			j--;
		}
		frs[j] = v;
	}
	if (!nfr) {
		free(frs);
		return;
	}
	*out = xcalloc(nfr, sizeof(**out));
	for (size_t i = 0; i < nfr;) {
		const char *fl = tree_fr_flavor(s->t, frs[i]);
		struct flavor_usage *fu = &(*out)[nf++];
		size_t j = i;

		while (j < nfr && !strcmp(tree_fr_flavor(s->t, frs[j]), fl))
			j++;
		fu->name = xstrdup(fl);
		fu->nres = j - i;
		fu->res = xcalloc(fu->nres, sizeof(*fu->res));
		for (size_t k = i; k < j; k++) {
			fu->res[k - i].name =
				xstrdup(tree_fr_resource(s->t, frs[k]));
			fu->res[k - i].total = u[frs[k]];
		}
		i = j;
	}
	free(frs);
	*n = nf;
}

bool sched_wl_holds_quota(const struct sched *s, const char *ns,
			  const char *name)
{
	char *key = xasprintf("%s/%s", ns ? ns : "", name ? name : "");
	int32_t id = sched_find_wl(s, key);

	free(key);
	if (id < 0)
		return false;
	return s->wls[id]->state == WS_HOLDING ||
	       s->wls[id]->state == WS_ASSUMED;
}

struct park_count {
	struct sched *s;
	int32_t *seen; /* LocalQueue ids, first count order */
	size_t nseen;
};

static void count_parked(void *ctx, struct qitem *it)
{
	struct park_count *pc = ctx;
	const struct swl *r = SWL_OF(it);
	struct slq *l;

	if (r->lq < 0)
		return;
	l = &pc->s->lqs[r->lq];
	if (l->park_stamp != pc->s->park_stamp) {
		l->park_stamp = pc->s->park_stamp;
		l->parked = 0;
		pc->seen[pc->nseen++] = r->lq;
	}
	l->parked++;
}

void sched_cq_parked_by_lq(struct sched *s, const char *cq,
			   sched_lq_count_fn *fn, void *ud)
{
	int32_t id = sched_find_cq(s, cq);
	struct park_count pc = { .s = s };
	const struct cq_queue *q;

	if (id < 0)
		return;
	q = &s->cqs[id].q;
	if (!queue_len_parked(q) || !s->nlq)
		return;
	pc.seen = xmalloc(s->nlq * sizeof(*pc.seen));
	s->park_stamp++;
	queue_visit_parked(q, count_parked, &pc);
	for (size_t i = 0; i < pc.nseen; i++)
		fn(ud, s->lqs[pc.seen[i]].name, s->lqs[pc.seen[i]].parked);
	free(pc.seen);
}

bool sched_cq_pending(const struct sched *s, const char *cq,
		      sched_pending_fn *fn, void *ud)
{
	int32_t id = sched_find_cq(s, cq);
	struct qitem **v;
	size_t n, na;

	if (id < 0 || !s->cqs[id].exists)
		return false;
	n = queue_snapshot(&s->cqs[id].q, &v, &na);
	for (size_t i = 0; i < n; i++) {
		const struct swl *r = SWL_OF(v[i]);

		if (!r->w)
			continue;
		if (!fn(ud, r->w, r->lq >= 0 ? s->lqs[r->lq].name : NULL,
			v[i]->priority, i >= na))
			break;
	}
	free(v);
	return true;
}

void sched_take_dirty(struct sched *s, sched_dirty_fn *cq_fn,
		      sched_dirty_fn *lq_fn, void *ud)
{
	for (size_t i = 0; i < s->ndirty_cq; i++) {
		struct scq *c = &s->cqs[s->dirty_cq[i]];

		c->dirty = false;
		if (cq_fn)
			cq_fn(ud, c->name);
	}
	s->ndirty_cq = 0;
	for (size_t i = 0; i < s->ndirty_lq; i++) {
		struct slq *l = &s->lqs[s->dirty_lq[i]];

		l->dirty = false;
		if (lq_fn)
			lq_fn(ud, l->name);
		/* Its last status write was owed: a LocalQueue no workload
		 * refers to any more can go now. */
		sched_lq_reap(s, s->dirty_lq[i]);
	}
	s->ndirty_lq = 0;
}

void sched_stats(const struct sched *s, struct sched_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->workloads = s->wl_idx.nlive;
	st->wl_records = s->nwl_rec;
	st->wl_ids = s->wl_idx.n;
	st->local_queues = s->lq_idx.nlive;
	st->lq_ids = s->lq_idx.n;
	st->namespaces = s->ns_idx.nlive;
	st->ns_ids = s->ns_idx.n;
	st->cluster_queues = s->cq_idx.nlive;
}

struct visit_ctx {
	const struct sched *s;
	int32_t cq;
	size_t n;
	bool ok;
};

/* A queued item must be a live pending record of that queue. */
static void check_item(void *ctx, struct qitem *it)
{
	struct visit_ctx *v = ctx;
	const struct swl *r = SWL_OF(it);

	v->n++;
	if (r->id < 0 || (size_t)r->id >= v->s->nwl ||
	    v->s->wls[r->id] != r || !r->key || r->state != WS_PENDING ||
	    r->cq != v->cq)
		v->ok = false;
}

/*
 * What refers to workload records holds live ones only (sched_int.h):
 * queues, holder lists and sticky preemptors; the check list holds
 * exactly the flagged records, and dead ones only there; reference counts
 * of LocalQueues and namespaces are exact and freed ids are blank.
 */
static bool check_refs(const struct sched *s)
{
	size_t npending = 0, nqueued = 0, nholding = 0, nlinked = 0;
	size_t nflagged = 0, nrec = 0;
	int32_t *lref = xcalloc(s->nlq ? s->nlq : 1, sizeof(*lref));
	int32_t *nref = xcalloc(s->nns ? s->nns : 1, sizeof(*nref));
	bool ok = sched_index_check(s);

	for (size_t i = 0; ok && i < s->nwl; i++) {
		const struct swl *r = s->wls[i];

		if (!r)
			continue;
		nrec++;
		nflagged += r->flagged;
		if (!r->key) {
			/* Dead: removed while flagged, blank but for that. */
			if (!r->flagged || r->w || r->state != WS_NONE ||
			    r->qi.place != QPLACE_NONE || r->ps || r->usage ||
			    r->ns >= 0 || r->lq >= 0 || r->h_prev || r->h_next)
				ok = false;
			continue;
		}
		if (r->ns >= 0 && (size_t)r->ns < s->nns && s->ns[r->ns].name)
			nref[r->ns]++;
		else if (r->ns >= 0 || r->w)
			ok = false;
		if (r->lq >= 0 && (size_t)r->lq < s->nlq && s->lqs[r->lq].name)
			lref[r->lq]++;
		else if (r->lq >= 0)
			ok = false;
		npending += r->state == WS_PENDING;
		nholding += r->state == WS_HOLDING || r->state == WS_ASSUMED;
	}
	if (nrec != s->nwl_rec || nflagged != s->nchk)
		ok = false;
	for (size_t i = 0; ok && i < s->nchk; i++) {
		int32_t id = s->chk[i];

		if (id < 0 || (size_t)id >= s->nwl || !s->wls[id] ||
		    !s->wls[id]->flagged)
			ok = false;
	}
	for (size_t i = 0; ok && i < s->ncq; i++) {
		const struct scq *c = &s->cqs[i];
		struct visit_ctx v = { s, (int32_t)i, 0, true };
		int32_t n = 0;

		queue_visit(&c->q, check_item, &v);
		nqueued += v.n;
		if (!v.ok)
			ok = false;
		if (c->q.sticky) {
			struct visit_ctx sv = { s, (int32_t)i, 0, true };

			check_item(&sv, c->q.sticky);
			ok = ok && sv.ok;
		}
		for (const struct swl *r = c->holders; ok && r; r = r->h_next) {
			bool holds = r->state == WS_HOLDING ||
				     r->state == WS_ASSUMED;

			n++;
			if (r->id < 0 || (size_t)r->id >= s->nwl ||
			    s->wls[r->id] != r || !r->key || !holds ||
			    r->hold_cq != (int32_t)i ||
			    (r->h_next && r->h_next->h_prev != r))
				ok = false;
		}
		if (n != c->nholders)
			ok = false;
		nlinked += (size_t)n;
	}
	if (nqueued != npending || nlinked != nholding)
		ok = false;
	for (size_t i = 0; ok && i < s->nlq; i++) {
		const struct slq *l = &s->lqs[i];

		if (l->nref != lref[i])
			ok = false;
		/* A LocalQueue nobody refers to holds nothing. */
		if (!l->nref && (l->pending || l->reserving || l->admitted))
			ok = false;
		for (size_t f = 0; ok && !l->nref && f < l->nusage; f++)
			if (l->res_usage[f] || l->adm_usage[f])
				ok = false;
		if (!l->name && (l->nusage || l->dirty || l->stop != STOP_NONE))
			ok = false;
	}
	for (size_t i = 0; ok && i < s->nns; i++) {
		const struct sns *n = &s->ns[i];

		if (n->nref != nref[i] || (!n->name && n->labels.n))
			ok = false;
	}
	free(lref);
	free(nref);
	return ok;
}


bool sched_check(const struct sched *s)
{
	size_t nfr = tree_nfr(s->t);
	int64_t *sum = NULL;
	int32_t *res = NULL, *adm = NULL;
	bool ok = true;

	if (!tree_check(s->t) || !check_refs(s))
		return false;
	for (size_t i = 0; i < s->ncq; i++)
		if (!queue_check(&s->cqs[i].q))
			return false;
	sum = xcalloc(s->ncq * (nfr ? nfr : 1), sizeof(*sum));
	res = xcalloc(s->ncq ? s->ncq : 1, sizeof(*res));
	adm = xcalloc(s->ncq ? s->ncq : 1, sizeof(*adm));
	/* 1. Usage in each CQ node = the workloads holding quota there;
	 *    states agree with queue places. */
	for (size_t i = 0; i < s->nwl; i++) {
		const struct swl *r = s->wls[i];

		if (!r)
			continue;
		switch (r->state) {
		case WS_HOLDING:
		case WS_ASSUMED:
			if (r->hold_cq < 0 || r->qi.place != QPLACE_NONE)
				ok = false;
			if (r->hold_cq < 0)
				break;
			res[r->hold_cq]++;
			if (r->admitted)
				adm[r->hold_cq]++;
			for (size_t k = 0; k < r->nusage; k++)
				sum[(size_t)r->hold_cq * nfr +
				    (size_t)r->usage[k].fr] += r->usage[k].v;
			break;
		case WS_PENDING:
			if (r->cq < 0 || r->qi.place == QPLACE_NONE ||
			    r->qi.place == QPLACE_INFLIGHT)
				ok = false;
			break;
		case WS_NONE:
			if (r->qi.place != QPLACE_NONE)
				ok = false;
			break;
		}
		/* only a holder can be on its way out by preemption */
		if (r->preempting && r->state != WS_HOLDING &&
		    r->state != WS_ASSUMED)
			ok = false;
	}
	for (size_t i = 0; ok && i < s->ncq; i++) {
		const struct scq *c = &s->cqs[i];

		if (c->reserving != res[i] || c->admitted != adm[i])
			ok = false;
		for (size_t f = 0; ok && f < nfr; f++)
			if (tree_usage(s->t, c->node, (int)f) !=
			    sum[i * nfr + f])
				ok = false;
	}
	/* 2. LocalQueue counts match the records. */
	for (size_t i = 0; ok && i < s->nlq; i++) {
		int32_t pend = 0, rsv = 0, ad = 0;

		for (size_t j = 0; j < s->nwl; j++) {
			const struct swl *r = s->wls[j];

			if (!r || r->lq != (int32_t)i)
				continue;
			if (r->state == WS_PENDING)
				pend++;
			if (r->state == WS_HOLDING || r->state == WS_ASSUMED) {
				rsv++;
				if (r->admitted)
					ad++;
			}
		}
		if (pend != s->lqs[i].pending || rsv != s->lqs[i].reserving ||
		    ad != s->lqs[i].admitted)
			ok = false;
	}
	free(sum);
	free(res);
	free(adm);
	return ok;
}
