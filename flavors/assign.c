/*
 * assign: the flavor assigner (see assign.h; kueue-scheduler.md §2.3-2.4,
 * Kueue's pkg/scheduler/flavorassigner). Reads the cohort tree, never
 * writes it; owns nothing but the caller's scratch it grows.
 *
 * DESIGN
 * Kueue keeps per-resource maps of strings; here a pod set's requests are
 * (resource id, milli) pairs sorted by resource name, a ClusterQueue is a
 * resource id -> group table plus per group a flavor x resource matrix of
 * tree fr ids, and a flavor match is a byte cached per (pod set, flavor
 * generation). Reasons are recorded as small structs and turned into
 * Kueue's sentences only when a caller asks for the message, so the
 * admitting path formats nothing.
 *
 * Deliberate differences from Kueue v0.14, each from its own later fix
 * or from cueue's contract:
 *  - resources are visited in name order (Kueue: Go map order), so the
 *    resource at which a flavor stops being considered is deterministic;
 *  - a flavor's node labels alone decide which selector keys count
 *    (model/placement.h, Kueue >= v0.15; v0.14 used the union of the
 *    group's label keys);
 *  - flavor-scan progress (lastAssignment) is not kept: every assignment
 *    starts at the first flavor. It only matters after preemptions,
 *    which cueue does not issue yet.
 */
#include "flavors/assign.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/placement.h"
#include "model/quantity.h"
#include "model/resources.h"

enum assign_match {
	M_UNKNOWN = 0,
	M_OK,
	M_TAINT,
	M_AFFINITY,
	M_NOT_FOUND,
};

/* Kueue's preemptionMode, ordered worst to best. */
enum pmode {
	PM_NOFIT = 0,
	PM_NO_CANDIDATES,
	PM_PREEMPT,
	PM_RECLAIM,
	PM_FIT,
};

/* Kueue's granularMode. */
struct gmode {
	enum pmode pm;
	int borrow;
};

/* ---- small helpers ---- */

void assign_cq_release(struct assign_cq *c)
{
	for (size_t i = 0; i < c->ngroups; i++) {
		free(c->groups[i].res);
		free(c->groups[i].flv);
		free(c->groups[i].fr);
	}
	free(c->groups);
	free(c->group_of);
	memset(c, 0, sizeof(*c));
	c->node = -1;
}

void assign_podset_release(struct assign_podset *p)
{
	free(p->req);
	free(p->mstamp);
	free(p->mres);
	memset(p, 0, sizeof(*p));
}

void assign_result_release(struct assign_result *r)
{
	free(r->count);
	free(r->ps_mode);
	free(r->cells);
	free(r->usage);
	free(r->reasons);
	free(r->counts_scratch);
	free(r->best);
	free(r->cand);
	free(r->reqs);
	free(r->group_flv);
	sbuf_release(&r->msg);
	free(r->offs);
	memset(r, 0, sizeof(*r));
}

enum assign_preempt assign_oracle_none(void *ctx, const struct assign_cq *cq,
				       int32_t preemptor, int fr, int64_t val,
				       int *borrow_after)
{
	(void)ctx;
	(void)cq;
	(void)preemptor;
	(void)fr;
	(void)val;
	*borrow_after = 0;
	return ASSIGN_PP_NO_CANDIDATES;
}

static int64_t mul_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return INT64_MAX;
	return r;
}

static int64_t add_sat(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return INT64_MAX;
	return r;
}

static enum assign_mode to_mode(enum pmode pm)
{
	switch (pm) {
	case PM_NOFIT:
		return ASSIGN_NOFIT;
	case PM_FIT:
		return ASSIGN_FIT;
	default:
		return ASSIGN_PREEMPT;
	}
}

/* Kueue's isPreferred: is a better than b under the CQ's preference. */
static bool is_preferred(struct gmode a, struct gmode b,
			 enum fungibility_preference pref)
{
	bool an, bn;

	if (a.pm == PM_NOFIT)
		return false;
	if (b.pm == PM_NOFIT)
		return true;
	/* A flavor without preemption candidates cannot be admitted now:
	 * below every viable mode, whatever the preference. */
	an = a.pm == PM_NO_CANDIDATES;
	bn = b.pm == PM_NO_CANDIDATES;
	if (an != bn)
		return !an;
	if (pref == FPREF_PREEMPTION_OVER_BORROWING) {
		if (a.borrow != b.borrow)
			return a.borrow < b.borrow;
		return a.pm > b.pm;
	}
	if (a.pm != b.pm)
		return a.pm > b.pm;
	return a.borrow < b.borrow;
}

/* Kueue's shouldTryNextFlavor. */
static bool should_try_next(struct gmode m, const struct assign_cq *cq)
{
	if (m.pm == PM_NOFIT || m.pm == PM_NO_CANDIDATES)
		return true;
	if ((m.pm == PM_PREEMPT || m.pm == PM_RECLAIM) &&
	    cq->when_preempt == FUNG_TRY_NEXT_FLAVOR)
		return true;
	if (m.borrow > 0 && cq->when_borrow == FUNG_TRY_NEXT_FLAVOR)
		return true;
	return false;
}

static void push_reason(struct assign_result *r, int32_t ps, int kind,
			int32_t res, int32_t flv, int64_t a, int64_t b,
			int64_t c)
{
	if (r->nreasons == r->cap_reasons)
		XGROW(r->reasons, r->cap_reasons, r->nreasons + 1);
	r->reasons[r->nreasons++] = (struct assign_reason){
		.ps = ps, .kind = (uint8_t)kind, .res = res, .flv = flv,
		.a = a, .b = b, .c = c,
	};
}

static int64_t assumed_usage(const struct assign_result *r, int fr)
{
	for (size_t i = 0; i < r->nusage; i++)
		if (r->usage[i].fr == fr)
			return r->usage[i].v;
	return 0;
}

static void add_usage(struct assign_result *r, int fr, int64_t v)
{
	for (size_t i = 0; i < r->nusage; i++) {
		if (r->usage[i].fr == fr) {
			r->usage[i].v = add_sat(r->usage[i].v, v);
			return;
		}
	}
	if (r->nusage == r->cap_usage)
		XGROW(r->usage, r->cap_usage, r->nusage + 1);
	r->usage[r->nusage++] = (struct fr_val){ fr, v };
}

/* ---- flavor matching ---- */

static enum assign_match match_compute(const struct assign_env *e,
				       const struct assign_podset *p, int flv)
{
	const struct resource_flavor *rf = e->flavors[flv].rf;
	const struct pod_template *t = &p->ps->tmpl;

	if (!rf)
		return M_NOT_FOUND;
	if (taints_find_untolerated(rf->taints, rf->ntaints, t->tols, t->ntols,
				    rf->tols, rf->ntols))
		return M_TAINT;
	if (!flavor_matches_selectors(&rf->node_labels, &t->node_selector,
				      &t->affinity))
		return M_AFFINITY;
	return M_OK;
}

static enum assign_match match_cached(const struct assign_env *e,
				      struct assign_podset *p, int flv)
{
	uint32_t gen = e->flavors[flv].gen;
	enum assign_match m;

	if ((size_t)flv >= p->nm) {
		size_t n = e->nflavors > (size_t)flv ? e->nflavors
						       : (size_t)flv + 1;

		p->mstamp = xrealloc(p->mstamp, n * sizeof(*p->mstamp));
		p->mres = xrealloc(p->mres, n);
		memset(p->mstamp + p->nm, 0, (n - p->nm) * sizeof(*p->mstamp));
		memset(p->mres + p->nm, 0, n - p->nm);
		p->nm = n;
	}
	if (gen && p->mstamp[flv] == gen)
		return (enum assign_match)p->mres[flv];
	m = match_compute(e, p, flv);
	p->mstamp[flv] = gen;
	p->mres[flv] = (uint8_t)m;
	return m;
}

/* ---- quota ---- */

/* Kueue's fitsResourceQuota for demand req on top of assumed. */
static enum pmode fits_quota(const struct assign_env *e,
			     const struct assign_cq *cq,
			     struct assign_result *r, int32_t ps, int res,
			     int flv, int fr, int64_t assumed, int64_t req,
			     int *borrow)
{
	int64_t avail = tree_available(e->t, cq->node, fr);
	int64_t maxcap = tree_potential_available(e->t, cq->node, fr);
	int64_t val = add_sat(assumed, req);
	bool may_reclaim = false;

	*borrow = 0;
	if (val > maxcap) {
		push_reason(r, ps, AR_MAX_CAPACITY, res, flv, assumed, req,
			    maxcap);
		return PM_NOFIT;
	}
	*borrow = tree_borrow_level(e->t, cq->node, fr, val, &may_reclaim);
	if (val <= avail)
		return PM_FIT;
	push_reason(r, ps, AR_UNUSED, res, flv, val - avail, 0, 0);
	if (tree_nominal(e->t, cq->node, fr) >= val || may_reclaim ||
	    cq->can_preempt_while_borrowing) {
		assign_oracle_fn *fn = e->oracle ? e->oracle : assign_oracle_none;

		switch (fn(e->oracle_ctx, cq, e->preemptor, fr, val,
			   borrow)) {
		case ASSIGN_PP_PREEMPT:
			return PM_PREEMPT;
		case ASSIGN_PP_RECLAIM:
			return PM_RECLAIM;
		case ASSIGN_PP_NO_CANDIDATES:
			return PM_NO_CANDIDATES;
		}
	}
	return PM_NOFIT;
}

/* Per-cell mode and borrow of a candidate flavor, parallel to cells. */
struct cell_meta {
	int8_t mode;
	int borrow;
};

/* Whether env's pin gives group g of pod set ps a flavor other than f. */
static bool pinned_away(const struct assign_env *e, const struct assign_cq *cq,
			int32_t ps, int g, int f)
{
	for (size_t i = 0; i < e->npin; i++) {
		const struct assign_cell *c = &e->pin[i];

		if (c->ps == ps && (size_t)c->res < cq->ngroup_of &&
		    cq->group_of[c->res] == g)
			return c->flv != f;
	}
	return false;
}

/* Kueue's IsTASOnly: every flavor of cq names a topology. */
static bool cq_tas_only(const struct assign_env *e, const struct assign_cq *cq)
{
	size_t n = 0;

	for (size_t g = 0; g < cq->ngroups; g++)
		for (size_t i = 0; i < cq->groups[g].nflv; i++) {
			const struct resource_flavor *rf =
				e->flavors[cq->groups[g].flv[i]].rf;

			if (!rf || !rf->topology_name)
				return false;
			n++;
		}
	return n > 0;
}

/*
 * Kueue's checkPodSetAndFlavorMatchForTAS for flavor f of group g: 0 when
 * it matches, else the reason kind. A pod set asks for a topology
 * explicitly, or implicitly in a ClusterQueue whose flavors all have one.
 * cueue does not place pods in a topology (TopologyAwareScheduling is not
 * built), so a flavor with a topology never matches: what it cannot
 * place as asked it never admits.
 */
static int tas_mismatch(const struct assign_env *e, const struct assign_cq *cq,
			const struct assign_podset *p, int g,
			const struct assign_req *reqs, size_t nreqs, int f)
{
	const struct resource_flavor *rf = e->flavors[f].rf;

	if (!rf)
		return 0;
	if (p->ps->tas_requested || cq_tas_only(e, cq)) {
		if (rf->topology_name)
			return AR_TAS_UNSUPPORTED;
		/* a flavor giving none of the pod set's resources (quota
		 * only) is fine */
		for (size_t k = 0; k < nreqs; k++)
			if ((size_t)reqs[k].res < cq->ngroup_of &&
			    cq->group_of[reqs[k].res] == g)
				return AR_TAS_NO_SUPPORT;
		return 0;
	}
	return rf->topology_name ? AR_TAS_ONLY : 0;
}

/*
 * Kueue's findFlavorForPodSets for group g of pod set ps: the chosen
 * flavor's cells go to r->best[0..*nbest) with meta in bmeta; returns the
 * flavor index in the group or -1. Reasons are appended to r (dropped
 * when the choice is a clean fit).
 */
static int find_flavor(const struct assign_env *e, const struct assign_cq *cq,
		       struct assign_podset *p, int32_t ps, int g,
		       const struct assign_req *reqs, size_t nreqs,
		       struct assign_result *r, size_t *nbest,
		       struct cell_meta *bmeta, struct cell_meta *cmeta)
{
	const struct assign_group *grp = &cq->groups[g];
	struct gmode best_m = { PM_NOFIT, INT_MAX };
	size_t rstart = r->nreasons;
	int best = -1;

	*nbest = 0;
	for (size_t idx = 0; idx < grp->nflv; idx++) {
		int f = grp->flv[idx];
		enum assign_match m = match_cached(e, p, f);
		struct gmode rep = { PM_FIT, 0 };
		size_t nc = 0;

		if (pinned_away(e, cq, ps, g, f))
			continue;
		if (m != M_NOT_FOUND) {
			int tas = tas_mismatch(e, cq, p, g, reqs, nreqs, f);

			if (tas) {
				push_reason(r, ps, tas, -1, f, 0, 0, 0);
				continue;
			}
		}
		if (m != M_OK) {
			int kind = m == M_TAINT      ? AR_TAINT
				   : m == M_AFFINITY ? AR_AFFINITY
						     : AR_NOT_FOUND;

			push_reason(r, ps, kind, -1, f, 0, 0, 0);
			continue;
		}
		for (size_t k = 0; k < nreqs; k++) {
			int res = reqs[k].res;
			size_t j;
			int fr, borrow;
			enum pmode pm;
			struct gmode mode;

			if ((size_t)res >= cq->ngroup_of ||
			    cq->group_of[res] != g)
				continue;
			for (j = 0; j < grp->nres && grp->res[j] != res; j++)
				;
			fr = grp->fr[idx * grp->nres + j];
			pm = fits_quota(e, cq, r, ps, res, f, fr,
					assumed_usage(r, fr), reqs[k].milli,
					&borrow);
			mode = (struct gmode){ pm, borrow };
			if (is_preferred(rep, mode, cq->pref))
				rep = mode;
			if (rep.pm == PM_NOFIT)
				break;
			r->cand[nc] = (struct assign_cell){
				.ps = ps, .res = res, .flv = f, .fr = fr,
				.v = reqs[k].milli,
			};
			cmeta[nc] = (struct cell_meta){ (int8_t)to_mode(pm),
							borrow };
			nc++;
		}
		if (!should_try_next(rep, cq) ||
		    is_preferred(rep, best_m, cq->pref)) {
			best = (int)idx;
			best_m = rep;
			memcpy(r->best, r->cand, nc * sizeof(*r->best));
			memcpy(bmeta, cmeta, nc * sizeof(*bmeta));
			*nbest = nc;
			if (!should_try_next(rep, cq))
				break;
		}
	}
	if (best >= 0 && best_m.pm == PM_FIT)
		r->nreasons = rstart;
	return best;
}

static void ensure_caps(struct assign_result *r, const struct assign_cq *cq,
			size_t nps, size_t maxreq)
{
	if (r->cap_ps < nps) {
		r->count = xrealloc(r->count, nps * sizeof(*r->count));
		r->ps_mode = xrealloc(r->ps_mode, nps * sizeof(*r->ps_mode));
		r->cap_ps = nps;
	}
	if (r->cap_group < cq->ngroups + 1) {
		r->group_flv = xrealloc(r->group_flv, (cq->ngroups + 1) *
						      sizeof(*r->group_flv));
		r->cap_group = cq->ngroups + 1;
	}
	if (r->cap_reqs < maxreq) {
		r->reqs = xrealloc(r->reqs, maxreq * sizeof(*r->reqs));
		r->cap_reqs = maxreq;
	}
	/* best/cand hold at most one group's cells: <= maxreq. Their meta
	 * rides in the tail of the same allocations (see
	 * assign_flavors_with_counts). */
	if (r->cap_best < maxreq) {
		size_t n = maxreq * (sizeof(struct assign_cell) +
				     sizeof(struct cell_meta));

		r->best = xrealloc(r->best, n);
		r->cand = xrealloc(r->cand, n);
		r->cap_best = r->cap_cand = maxreq;
	}
}

enum assign_mode assign_flavors_with_counts(const struct assign_env *e,
					    const struct assign_cq *cq,
					    struct assign_podset *ps, size_t nps,
					    const int32_t *counts, struct assign_result *r)
{
	bool pods_covered = e->pods_res >= 0 &&
			    (size_t)e->pods_res < cq->ngroup_of &&
			    cq->group_of[e->pods_res] >= 0;
	size_t maxreq = 1;
	struct cell_meta *bmeta, *cmeta;

	for (size_t i = 0; i < nps; i++)
		if (ps[i].nreq + 1 > maxreq)
			maxreq = ps[i].nreq + 1;
	ensure_caps(r, cq, nps, maxreq);
	bmeta = (struct cell_meta *)(void *)(r->best + r->cap_best);
	cmeta = (struct cell_meta *)(void *)(r->cand + r->cap_cand);
	r->mode = ASSIGN_FIT;
	r->borrowing = 0;
	r->nps = 0;
	r->ncells = 0;
	r->nusage = 0;
	r->nreasons = 0;

	for (size_t i = 0; i < nps; i++) {
		int32_t c = counts[i];
		size_t nreqs = 0, rstart = r->nreasons, cstart = r->ncells;
		enum assign_mode psm = ASSIGN_FIT;
		bool fail = false;

		/* 1. This pod set's demand: per pod x count, plus `pods`
		 *    when the ClusterQueue covers it. */
		for (size_t k = 0; k < ps[i].nreq; k++) {
			if (pods_covered && ps[i].req[k].res == e->pods_res)
				continue;
			r->reqs[nreqs++] = (struct assign_req){
				ps[i].req[k].res,
				mul_sat(ps[i].req[k].milli, c),
			};
		}
		if (pods_covered)
			r->reqs[nreqs++] = (struct assign_req){
				e->pods_res, mul_sat(1000, c) };
		r->count[i] = c;
		r->nps = i + 1;
		for (size_t g = 0; g < cq->ngroups; g++)
			r->group_flv[g] = -1;

		/* 2. One flavor per resource group. */
		for (size_t k = 0; k < nreqs; k++) {
			int res = r->reqs[k].res;
			int g = (size_t)res < cq->ngroup_of ? cq->group_of[res]
							    : -1;
			size_t nbest = 0, fstart = r->nreasons;
			int idx;

			if (g < 0) {
				if (e->ignore_undeclared)
					continue;
				r->nreasons = rstart;
				push_reason(r, (int32_t)i, AR_UNAVAILABLE, res,
					    -1, 0, 0, 0);
				fail = true;
				break;
			}
			if (r->group_flv[g] >= 0)
				continue;
			idx = find_flavor(e, cq, &ps[i], (int32_t)i, g, r->reqs,
					  nreqs, r, &nbest, bmeta, cmeta);
			if (idx < 0) {
				/* The pod set's status becomes this group's
				 * (Kueue replaces it on failure). */
				size_t n = r->nreasons - fstart;

				memmove(r->reasons + rstart,
					r->reasons + fstart,
					n * sizeof(*r->reasons));
				r->nreasons = rstart + n;
				fail = true;
				break;
			}
			r->group_flv[g] = idx;
			if (r->ncells + nbest > r->cap_cells)
				XGROW(r->cells, r->cap_cells,
				      r->ncells + nbest);
			for (size_t b = 0; b < nbest; b++) {
				r->best[b].mode = bmeta[b].mode;
				r->cells[r->ncells++] = r->best[b];
				if (bmeta[b].mode < (int8_t)psm)
					psm = (enum assign_mode)bmeta[b].mode;
				if (bmeta[b].borrow > r->borrowing)
					r->borrowing = bmeta[b].borrow;
			}
		}
		if (fail) {
			r->ncells = cstart;
			r->ps_mode[i] = ASSIGN_NOFIT;
			r->mode = ASSIGN_NOFIT;
			return r->mode;
		}
		/* 3. Later pod sets see this one's usage (assumedUsage). */
		for (size_t b = cstart; b < r->ncells; b++)
			add_usage(r, r->cells[b].fr, r->cells[b].v);
		r->ps_mode[i] = (int8_t)psm;
		if (psm < r->mode)
			r->mode = psm;
	}
	return r->mode;
}

/* §2.4: counts for step k of D: count - floor(d * k / D). */
static void reduced_counts(const struct assign_podset *ps, size_t nps,
			   int64_t k, int64_t d, int32_t *out)
{
	for (size_t i = 0; i < nps; i++) {
		int64_t di = ps[i].count - ps[i].min_count;

		if (di < 0)
			di = 0;
		out[i] = (int32_t)(ps[i].count - (di * k) / d);
	}
}

/* A Fit, or a Preempt the caller accepts (it has victims). */
static bool good_enough(const struct assign_env *e, enum assign_mode m,
			const struct assign_result *r)
{
	return m == ASSIGN_FIT ||
	       (m == ASSIGN_PREEMPT && e->accept && e->accept(e->accept_ctx, r));
}

enum assign_mode assign_flavors(const struct assign_env *e,
				const struct assign_cq *cq,
				struct assign_podset *ps, size_t nps,
				struct assign_result *r)
{
	int64_t d = 0, lo, hi, good = -1, last = -1;
	int32_t *counts;

	if (r->cap_counts < nps + 1) {
		r->counts_scratch = xrealloc(r->counts_scratch,
					     (nps + 1) *
						     sizeof(*r->counts_scratch));
		r->cap_counts = nps + 1;
	}
	counts = r->counts_scratch;
	for (size_t i = 0; i < nps; i++) {
		counts[i] = ps[i].count;
		if (ps[i].min_count < ps[i].count)
			d += ps[i].count - ps[i].min_count;
	}
	if (good_enough(e, assign_flavors_with_counts(e, cq, ps, nps, counts,
						       r),
			r) ||
	    !e->partial_admission || d == 0)
		return r->mode;
	/* Go's sort.Search over [0, D]: the smallest k whose reduced counts
	 * fit (the predicate is assumed monotone, as Kueue does). */
	lo = 0;
	hi = d + 1;
	while (lo < hi) {
		int64_t h = lo + (hi - lo) / 2;

		reduced_counts(ps, nps, h, d, counts);
		last = h;
		if (good_enough(e, assign_flavors_with_counts(e, cq, ps, nps,
							       counts, r),
				r)) {
			good = h;
			hi = h;
		} else {
			lo = h + 1;
		}
	}
	if (good >= 0 && good == lo) {
		if (last != good) {
			reduced_counts(ps, nps, good, d, counts);
			assign_flavors_with_counts(e, cq, ps, nps, counts, r);
		}
		return r->mode;
	}
	/* Nothing fits: report the full-count assignment. */
	for (size_t i = 0; i < nps; i++)
		counts[i] = ps[i].count;
	return assign_flavors_with_counts(e, cq, ps, nps, counts, r);
}

/* ---- messages ---- */

/*
 * Go's %s of a core/v1 Taint value: its fields in order, the nil
 * *metav1.Time as <nil>, a set one as time.Time.String() ("2024-01-02
 * 03:04:05 +0000 UTC" for the RFC 3339 UTC form the codec keeps).
 */
static void sb_taint(struct sbuf *b, const struct taint *t)
{
	const char *ta = t->time_added;

	sbuf_addf(b, "{%s %s %s ", t->key ? t->key : "",
		t->value ? t->value : "", taint_effect_name(t->effect));
	if (!ta)
		sbuf_addf(b, "<nil>}");
	else if (strlen(ta) == 20 && ta[10] == 'T' && ta[19] == 'Z')
		sbuf_addf(b, "%.10s %.8s +0000 UTC}", ta, ta + 11);
	else
		sbuf_addf(b, "%s}", ta);
}

void assign_reason_append(struct sbuf *b, const struct assign_env *e,
			  const struct assign_podset *p,
			  const struct assign_reason *rs)
{
	char q1[QUANTITY_BUF], q2[QUANTITY_BUF], q3[QUANTITY_BUF];
	const char *res = rs->res >= 0 ? e->res_names[rs->res] : "";
	const char *flv = rs->flv >= 0 ? e->flavors[rs->flv].name : "";

	switch (rs->kind) {
	case AR_UNAVAILABLE:
		sbuf_addf(b, "resource %s unavailable in ClusterQueue", res);
		break;
	case AR_NOT_FOUND:
		sbuf_addf(b, "flavor %s not found", flv);
		break;
	case AR_TAINT: {
		const struct resource_flavor *rf = e->flavors[rs->flv].rf;
		const struct pod_template *t = &p->ps->tmpl;
		const struct taint *taint =
			rf ? taints_find_untolerated(rf->taints, rf->ntaints,
						     t->tols, t->ntols,
						     rf->tols, rf->ntols)
			   : NULL;

		sbuf_addf(b, "untolerated taint ");
		if (taint)
			sb_taint(b, taint);
		sbuf_addf(b, " in flavor %s", flv);
		break;
	}
	case AR_AFFINITY:
		sbuf_addf(b, "flavor %s doesn't match node affinity", flv);
		break;
	case AR_TAS_NO_SUPPORT:
		sbuf_addf(b, "Flavor \"%s\" does not support "
			  "TopologyAwareScheduling", flv);
		break;
	case AR_TAS_ONLY:
		sbuf_addf(b, "Flavor \"%s\" supports only "
			  "TopologyAwareScheduling", flv);
		break;
	case AR_TAS_UNSUPPORTED:
		sbuf_addf(b, "Flavor \"%s\" uses TopologyAwareScheduling, "
			  "which cueue does not implement yet", flv);
		break;
	case AR_MAX_CAPACITY:
		sbuf_addf(b,
			"insufficient quota for %s in flavor %s, previously "
			"considered podsets requests (%s) + current podset "
			"request (%s) > maximum capacity (%s)",
			res, flv, resource_format(res, rs->a, q1, sizeof(q1)),
			resource_format(res, rs->b, q2, sizeof(q2)),
			resource_format(res, rs->c, q3, sizeof(q3)));
		break;
	case AR_UNUSED:
		sbuf_addf(b,
			"insufficient unused quota for %s in flavor %s, %s more "
			"needed",
			res, flv, resource_format(res, rs->a, q1, sizeof(q1)));
		break;
	default:
		BUG("assign: reason kind %d", rs->kind);
	}
}

char *assign_message(const struct assign_env *e, const struct assign_podset *ps,
		     struct assign_result *r)
{
	struct sbuf *b = &r->msg; /* no ceiling: appends cannot fail */
	size_t *off, total = 1, i = 0;
	char *out, *w;

	/* 1. Every sentence into the scratch, NUL-separated. */
	if (r->cap_offs < r->nreasons + 1) {
		r->offs = xrealloc(r->offs,
				   (r->nreasons + 1) * sizeof(*r->offs));
		r->cap_offs = r->nreasons + 1;
	}
	off = r->offs;
	sbuf_reset(b);
	for (size_t k = 0; k < r->nreasons; k++) {
		off[k] = b->len;
		assign_reason_append(b, e, &ps[r->reasons[k].ps],
				     &r->reasons[k]);
		sbuf_addch(b, '\0'); /* sentences stay NUL-separated */
	}
	/* 2. Per pod set, sorted (Kueue's Status.Message); measure. */
	while (i < r->nreasons) {
		int32_t p = r->reasons[i].ps;
		size_t j = i;

		while (j < r->nreasons && r->reasons[j].ps == p)
			j++;
		for (size_t k = i + 1; k < j; k++) {
			size_t v = off[k], m = k;

			while (m > i &&
			       strcmp(b->buf + off[m - 1], b->buf + v) > 0) {
				off[m] = off[m - 1];
				m--;
			}
			off[m] = v;
		}
		total += strlen("; couldn't assign flavors to pod set : ") +
			 strlen(ps[p].ps->name ? ps[p].ps->name
					       : DEFAULT_PODSET_NAME);
		for (size_t k = i; k < j; k++)
			total += strlen(b->buf + off[k]) + 2;
		i = j;
	}
	/* 3. One allocation for the answer. */
	out = xmalloc(total);
	w = out;
	i = 0;
	while (i < r->nreasons) {
		int32_t p = r->reasons[i].ps;
		const char *name = ps[p].ps->name ? ps[p].ps->name
						  : DEFAULT_PODSET_NAME;
		size_t j = i;

		while (j < r->nreasons && r->reasons[j].ps == p)
			j++;
		w += sprintf(w, "%scouldn't assign flavors to pod set %s: ",
			     w == out ? "" : "; ", name);
		for (size_t k = i; k < j; k++) {
			size_t n = strlen(b->buf + off[k]);

			if (k > i) {
				memcpy(w, ", ", 2);
				w += 2;
			}
			memcpy(w, b->buf + off[k], n);
			w += n;
		}
		i = j;
	}
	*w = '\0';
	return out;
}
