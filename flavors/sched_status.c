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
	}
	s->ndirty_lq = 0;
}

bool sched_check(const struct sched *s)
{
	size_t nfr = tree_nfr(s->t);
	int64_t *sum = NULL;
	int32_t *res = NULL, *adm = NULL;
	bool ok = true;

	if (!tree_check(s->t))
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

			if (r->lq != (int32_t)i)
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
