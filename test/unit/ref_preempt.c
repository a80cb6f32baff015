/*
 * ref_preempt: the naive reference of the classical preemption decision
 * (see ref_preempt.h). Each function below is one sentence of
 * kueue-scheduler.md §3, §2.3 or §4.1-4.4, evaluated over a "world": the
 * scenario plus a mask of the admitted workloads removed in the current
 * simulation. Nothing is cached: quota and usage of a node are recomputed
 * from its subtree every time they are asked.
 */
#include "test/unit/ref_preempt.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

struct world {
	const struct ref_preempt_scn *s;
	bool gone[REF_PREEMPT_MAX_WL]; /* removed from the snapshot */
};

static int64_t max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* ------------------------------------------------------------------ */
/* §3 quota accounting, from scratch */

static int64_t local_quota(const struct world *w, int n, size_t r);

/* SubtreeQuota: a ClusterQueue's nominal; a Cohort's own nominal plus
 * what each child exposes (its subtree quota minus its local quota). */
static int64_t subtree_quota(const struct world *w, int n, size_t r)
{
	const struct ref_preempt_node *nd = &w->s->node[n];
	int64_t q = nd->nominal[r];

	if (nd->is_cq)
		return q;
	for (size_t c = 0; c < w->s->nnodes; c++)
		if (w->s->node[c].parent == n)
			q += subtree_quota(w, (int)c, r) -
			     local_quota(w, (int)c, r);
	return q;
}

/* Capacity kept from the parent by a lendingLimit. */
static int64_t local_quota(const struct world *w, int n, size_t r)
{
	const struct ref_preempt_node *nd = &w->s->node[n];

	if (!nd->has_lend[r])
		return 0;
	return max64(0, subtree_quota(w, n, r) - nd->lend[r]);
}

/* Usage: a ClusterQueue's sum over its workloads still holding quota; a
 * Cohort's sum of what each child uses beyond its local quota. */
static int64_t usage(const struct world *w, int n, size_t r)
{
	int64_t u = 0;

	if (w->s->node[n].is_cq) {
		for (size_t i = 0; i < w->s->nadm; i++)
			if (!w->gone[i] && w->s->adm[i].cq == n)
				u += w->s->adm[i].use[r];
		return u;
	}
	for (size_t c = 0; c < w->s->nnodes; c++)
		if (w->s->node[c].parent == n)
			u += max64(0, usage(w, (int)c, r) -
					      local_quota(w, (int)c, r));
	return u;
}

static int64_t local_available(const struct world *w, int n, size_t r)
{
	return max64(0, local_quota(w, n, r) - usage(w, n, r));
}

/* available(n) of §3 (unclamped). */
static int64_t available_raw(const struct world *w, int n, size_t r)
{
	const struct ref_preempt_node *nd = &w->s->node[n];
	int64_t p;

	if (nd->parent < 0)
		return subtree_quota(w, n, r) - usage(w, n, r);
	p = available_raw(w, nd->parent, r);
	if (nd->has_borrow[r]) {
		int64_t lq = local_quota(w, n, r);
		int64_t stored = subtree_quota(w, n, r) - lq;
		int64_t used = max64(0, usage(w, n, r) - lq);

		p = min64(p, stored - used + nd->borrow[r]);
	}
	return local_available(w, n, r) + p;
}

static int64_t available(const struct world *w, int cq, size_t r)
{
	return max64(0, available_raw(w, cq, r));
}

/* PotentialAvailable: the capacity with no usage anywhere. */
static int64_t potential(const struct world *w, int n, size_t r)
{
	const struct ref_preempt_node *nd = &w->s->node[n];
	int64_t a;

	if (nd->parent < 0)
		return subtree_quota(w, n, r);
	a = local_quota(w, n, r) + potential(w, nd->parent, r);
	if (nd->has_borrow[r])
		a = min64(a, subtree_quota(w, n, r) + nd->borrow[r]);
	return a;
}

static bool borrowing_with(const struct world *w, int n, size_t r,
			   int64_t v)
{
	return usage(w, n, r) + v > subtree_quota(w, n, r);
}

/* Within nominal in every resource needing preemption. */
static bool within_nominal(const struct world *w, int n, const bool *need)
{
	for (size_t r = 0; r < w->s->nres; r++)
		if (need[r] && usage(w, n, r) > subtree_quota(w, n, r))
			return false;
	return true;
}

/* The second result of heightOfLowestSubtreeThatFits (§2.3): whether
 * the lowest subtree that fits val is not the whole tree. */
static bool may_reclaim_in_hierarchy(const struct world *w, int cq,
				     size_t r, int64_t val)
{
	int64_t remaining;

	if (!borrowing_with(w, cq, r, val) || w->s->node[cq].parent < 0)
		return w->s->node[cq].parent >= 0;
	remaining = val - local_available(w, cq, r);
	for (int a = w->s->node[cq].parent; a >= 0; a = w->s->node[a].parent) {
		if (!borrowing_with(w, a, r, remaining))
			return w->s->node[a].parent >= 0;
		remaining -= local_available(w, a, r);
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* §4.1 policies, §4.2 ordering, §4.3 candidates */

enum variant {
	V_NEVER,
	V_WITHIN_CQ,
	V_HIERARCHICAL,
	V_RECLAIM_WITHOUT_BORROWING,
	V_RECLAIM_WHILE_BORROWING,
};

static const char *variant_reason(enum variant v)
{
	switch (v) {
	case V_WITHIN_CQ:
		return "InClusterQueue";
	case V_HIERARCHICAL:
	case V_RECLAIM_WITHOUT_BORROWING:
		return "InCohortReclamation";
	case V_RECLAIM_WHILE_BORROWING:
		return "InCohortReclaimWhileBorrowing";
	case V_NEVER:
		break;
	}
	return "Unknown";
}

struct cand {
	int wl;      /* index into adm[] */
	enum variant v;
	int lca;     /* cross-queue: the cohort it was collected at */
};

struct ctx {
	struct world w;
	const struct ref_preempt_wl *pre;
	const struct ref_preempt_node *pcq;
	bool need[REF_PREEMPT_NRES];  /* resources needing preemption */
	struct cand hier[REF_PREEMPT_MAX_WL], prio[REF_PREEMPT_MAX_WL],
		same[REF_PREEMPT_MAX_WL];
	size_t nhier, nprio, nsame;
};

static bool uses_needed(const struct ctx *c, const struct ref_preempt_wl *v)
{
	for (size_t r = 0; r < c->w.s->nres; r++)
		if (c->need[r] && v->use[r] > 0)
			return true;
	return false;
}

static bool satisfies(const struct ref_preempt_wl *pre,
		      const struct ref_preempt_wl *v, int policy_lower,
		      int policy_newer_equal, int policy_any)
{
	bool lower = pre->prio > v->prio;

	if (policy_any)
		return true;
	if (policy_newer_equal)
		return lower || (pre->prio == v->prio &&
				 pre->created_ms < v->created_ms);
	if (policy_lower)
		return lower;
	return false;
}

static enum variant classify(const struct ctx *c, int wi, bool advantage)
{
	const struct ref_preempt_wl *v = &c->w.s->adm[wi];
	const struct ref_preempt_node *q = c->pcq;
	bool same = v->cq == c->pre->cq, ok;

	if (!uses_needed(c, v))
		return V_NEVER;
	if (same)
		ok = satisfies(c->pre, v, q->within == WCQ_LOWER_PRIORITY,
			       q->within == WCQ_LOWER_OR_NEWER_EQUAL_PRIORITY,
			       0);
	else
		ok = satisfies(c->pre, v, q->reclaim == RWC_LOWER_PRIORITY, 0,
			       q->reclaim == RWC_ANY);
	if (!ok)
		return V_NEVER;
	if (same)
		return V_WITHIN_CQ;
	if (advantage)
		return V_HIERARCHICAL;
	if (q->borrow_policy == BWC_NEVER)
		return V_RECLAIM_WITHOUT_BORROWING;
	if (v->prio >= c->pre->prio)
		return V_RECLAIM_WITHOUT_BORROWING;
	if (q->has_threshold && v->prio > q->threshold)
		return V_RECLAIM_WITHOUT_BORROWING;
	return V_RECLAIM_WHILE_BORROWING;
}

static void add_from_cq(struct ctx *c, int cq, int lca, bool advantage,
			struct cand *list, size_t *n)
{
	for (size_t i = 0; i < c->w.s->nadm; i++) {
		enum variant v;

		if (c->w.s->adm[i].cq != cq)
			continue;
		v = classify(c, (int)i, advantage);
		if (v == V_NEVER)
			continue;
		list[*n].wl = (int)i;
		list[*n].v = v;
		list[*n].lca = lca;
		(*n)++;
	}
}

/* Every ClusterQueue under cur (skipping the subtree skip, the
 * preemptor's queue and nodes within nominal in the needed resources). */
static void collect_subtree(struct ctx *c, int cur, int root, int skip,
			    bool advantage)
{
	const struct ref_preempt_scn *s = c->w.s;

	for (size_t n = 0; n < s->nnodes; n++) {
		if (s->node[n].parent != cur || s->node[n].is_cq)
			continue;
		if ((int)n == skip || within_nominal(&c->w, (int)n, c->need))
			continue;
		collect_subtree(c, (int)n, root, skip, advantage);
	}
	for (size_t n = 0; n < s->nnodes; n++) {
		if (s->node[n].parent != cur || !s->node[n].is_cq)
			continue;
		if ((int)n == c->pre->cq ||
		    within_nominal(&c->w, (int)n, c->need))
			continue;
		if (advantage)
			add_from_cq(c, (int)n, root, true, c->hier, &c->nhier);
		else
			add_from_cq(c, (int)n, root, false, c->prio, &c->nprio);
	}
}

/* QuantitiesFitInQuota of node n for rem, updating rem to what exceeds
 * n's local availability. */
static bool fits_in_quota(const struct ctx *c, int n, int64_t *rem)
{
	bool fits = true;

	for (size_t r = 0; r < c->w.s->nres; r++) {
		if (c->pre->use[r] <= 0)
			continue;
		if (subtree_quota(&c->w, n, r) < usage(&c->w, n, r) + rem[r])
			fits = false;
		rem[r] = max64(0, rem[r] - local_available(&c->w, n, r));
	}
	return fits;
}

static void collect(struct ctx *c)
{
	const struct ref_preempt_scn *s = c->w.s;
	int64_t rem[REF_PREEMPT_NRES];
	bool advantage;
	int prev = -1;

	if (c->pcq->within != WCQ_NEVER)
		for (size_t i = 0; i < s->nadm; i++) {
			enum variant v;

			if (s->adm[i].cq != c->pre->cq)
				continue;
			v = classify(c, (int)i, false);
			if (v == V_NEVER)
				continue;
			c->same[c->nsame].wl = (int)i;
			c->same[c->nsame].v = v;
			c->same[c->nsame].lca = -1;
			c->nsame++;
		}
	if (c->pcq->parent < 0 || c->pcq->reclaim == RWC_NEVER)
		return;
	memcpy(rem, c->pre->use, sizeof(rem));
	advantage = fits_in_quota(c, c->pre->cq, rem);
	for (int a = c->pcq->parent; a >= 0; a = s->node[a].parent) {
		collect_subtree(c, a, a, prev, advantage);
		if (fits_in_quota(c, a, rem))
			advantage = true;
		prev = a;
	}
}

/* §4.2: negative when a goes first. */
static int order(const struct ctx *c, const struct cand *a,
		 const struct cand *b)
{
	const struct ref_preempt_wl *x = &c->w.s->adm[a->wl];
	const struct ref_preempt_wl *y = &c->w.s->adm[b->wl];
	bool xo = x->cq == c->pre->cq, yo = y->cq == c->pre->cq;
	char ux[40], uy[40];

	if (x->evicted != y->evicted)
		return x->evicted ? -1 : 1;
	if (xo != yo)
		return xo ? 1 : -1;
	if (x->prio != y->prio)
		return x->prio < y->prio ? -1 : 1;
	if (x->admitted_ms != y->admitted_ms)
		return x->admitted_ms > y->admitted_ms ? -1 : 1;
	snprintf(ux, sizeof(ux), "uid-%s", x->name);
	snprintf(uy, sizeof(uy), "uid-%s", y->name);
	return strcmp(ux, uy);
}

/* Insertion sort: tiny lists, and no qsort context pointer in C17. */
static void sort(const struct ctx *c, struct cand *l, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct cand k = l[i];
		size_t j = i;

		while (j > 0 && order(c, &k, &l[j - 1]) < 0) {
			l[j] = l[j - 1];
			j--;
		}
		l[j] = k;
	}
}

/* ------------------------------------------------------------------ */
/* §4.4 the minimal set */

static bool valid(const struct ctx *c, const struct cand *k, bool borrow)
{
	const struct ref_preempt_wl *v = &c->w.s->adm[k->wl];

	if (v->cq == c->pre->cq)
		return true;
	if (borrow && k->v == V_RECLAIM_WITHOUT_BORROWING)
		return false;
	if (within_nominal(&c->w, v->cq, c->need))
		return false;
	for (int n = c->w.s->node[v->cq].parent; n >= 0 && n != k->lca;
	     n = c->w.s->node[n].parent)
		if (within_nominal(&c->w, n, c->need))
			return false;
	return true;
}

static bool fits(const struct ctx *c, bool borrow)
{
	for (size_t r = 0; r < c->w.s->nres; r++) {
		int64_t v = c->pre->use[r];

		if (v <= 0)
			continue;
		if (!borrow && borrowing_with(&c->w, c->pre->cq, r, v))
			return false;
		if (v > available(&c->w, c->pre->cq, r))
			return false;
	}
	return true;
}

/* One attempt over the ordered list; true with the targets in r. */
static bool attempt(struct ctx *c, const struct cand *list, size_t n,
		    bool borrow, struct ref_preempt_result *r)
{
	const struct cand *t[REF_PREEMPT_MAX_WL];
	bool keep[REF_PREEMPT_MAX_WL];
	size_t nt = 0;

	memset(c->w.gone, 0, sizeof(c->w.gone));
	for (size_t i = 0; i < n; i++) {
		if (!valid(c, &list[i], borrow))
			continue;
		c->w.gone[list[i].wl] = true;
		keep[nt] = true;
		t[nt++] = &list[i];
		if (!fits(c, borrow))
			continue;
		/* fill back, newest removal first, never the last one */
		for (size_t j = nt - 1; j-- > 0;) {
			c->w.gone[t[j]->wl] = false;
			if (fits(c, borrow))
				keep[j] = false;
			else
				c->w.gone[t[j]->wl] = true;
		}
		r->nvictims = 0;
		for (size_t j = 0; j < nt; j++) {
			if (!keep[j])
				continue;
			r->victim[r->nvictims] = t[j]->wl;
			r->reason[r->nvictims++] = variant_reason(t[j]->v);
		}
		memset(c->w.gone, 0, sizeof(c->w.gone));
		return true;
	}
	memset(c->w.gone, 0, sizeof(c->w.gone));
	return false;
}

static void classical(struct ctx *c, struct ref_preempt_result *r)
{
	struct cand list[3 * REF_PREEMPT_MAX_WL];
	const struct cand *parts[3] = { c->hier, c->prio, c->same };
	size_t nparts[3];
	size_t n = 0;
	bool tries[2];
	size_t ntries;
	bool under = true;

	collect(c);
	nparts[0] = c->nhier;
	nparts[1] = c->nprio;
	nparts[2] = c->nsame;
	sort(c, c->hier, c->nhier);
	sort(c, c->prio, c->nprio);
	sort(c, c->same, c->nsame);
	/* evicted ones of each list, then the others */
	for (int pass = 0; pass < 2; pass++)
		for (int p = 0; p < 3; p++)
			for (size_t i = 0; i < nparts[p]; i++)
				if (c->w.s->adm[parts[p][i].wl].evicted ==
				    (pass == 0))
					list[n++] = parts[p][i];
	for (size_t res = 0; res < c->w.s->nres; res++)
		if (c->need[res] && c->pcq->nominal[res] <=
					    usage(&c->w, c->pre->cq, res))
			under = false;
	if (c->nhier + c->nprio == 0 ||
	    (c->pcq->borrow_policy == BWC_NEVER && !under)) {
		tries[0] = true;
		ntries = 1;
	} else if (c->pcq->borrow_policy == BWC_NEVER && c->nhier == 0) {
		tries[0] = false;
		tries[1] = true;
		ntries = 2;
	} else {
		tries[0] = true;
		tries[1] = false;
		ntries = 2;
	}
	for (size_t i = 0; i < ntries; i++)
		if (attempt(c, list, n, tries[i], r)) {
			r->outcome = REF_PREEMPT_VICTIMS;
			return;
		}
	r->outcome = REF_PREEMPT_NO_CANDIDATES;
}

/* ------------------------------------------------------------------ */

void ref_preempt_decide(const struct ref_preempt_scn *s,
			struct ref_preempt_result *r)
{
	struct ctx *c = xcalloc(1, sizeof(*c));
	bool any = false;

	memset(r, 0, sizeof(*r));
	c->w.s = s;
	c->pre = &s->pre;
	c->pcq = &s->node[s->pre.cq];
	/* §2.3 fitsResourceQuota per requested resource */
	for (size_t res = 0; res < s->nres; res++) {
		int64_t val = s->pre.use[res];

		if (val <= 0)
			continue;
		if (val > potential(&c->w, s->pre.cq, res)) {
			r->outcome = REF_PREEMPT_NOFIT;
			goto out;
		}
		if (val <= available(&c->w, s->pre.cq, res))
			continue;
		if (!(c->pcq->nominal[res] >= val ||
		      may_reclaim_in_hierarchy(&c->w, s->pre.cq, res, val) ||
		      c->pcq->borrow_policy != BWC_NEVER)) {
			r->outcome = REF_PREEMPT_NOFIT;
			goto out;
		}
		c->need[res] = true;
		any = true;
	}
	if (!any) {
		r->outcome = REF_PREEMPT_FITS;
		goto out;
	}
	classical(c, r);
out:
	free(c);
}

int64_t ref_preempt_available(const struct ref_preempt_scn *s, int cq,
			      size_t res)
{
	struct world w;

	memset(&w, 0, sizeof(w));
	w.s = s;
	return available(&w, cq, res);
}

const char *ref_preempt_outcome_name(enum ref_preempt_outcome o)
{
	switch (o) {
	case REF_PREEMPT_NOFIT:
		return "nofit";
	case REF_PREEMPT_NO_CANDIDATES:
		return "no-candidates";
	case REF_PREEMPT_FITS:
		return "fits";
	case REF_PREEMPT_VICTIMS:
		return "victims";
	}
	return "?";
}

static void dump_limits(FILE *f, const struct ref_preempt_scn *s,
			const struct ref_preempt_node *n)
{
	for (size_t r = 0; r < s->nres; r++) {
		fprintf(f, " %s=%lld", r ? "mem" : "cpu",
			(long long)n->nominal[r]);
		if (n->has_borrow[r])
			fprintf(f, "/b%lld", (long long)n->borrow[r]);
		if (n->has_lend[r])
			fprintf(f, "/l%lld", (long long)n->lend[r]);
	}
}

static void dump_wl(FILE *f, const struct ref_preempt_scn *s,
		    const struct ref_preempt_wl *w)
{
	fprintf(f, "  %-6s cq=%s prio=%d created=%lld admitted=%lld%s use",
		w->name, s->node[w->cq].name, (int)w->prio,
		(long long)w->created_ms, (long long)w->admitted_ms,
		w->evicted ? " EVICTED" : "");
	for (size_t r = 0; r < s->nres; r++)
		fprintf(f, " %lld", (long long)w->use[r]);
	fputc('\n', f);
}

void ref_preempt_dump(FILE *f, const struct ref_preempt_scn *s,
		      const struct ref_preempt_result *r)
{
	fprintf(f, "scenario (%zu resources; milli-units):\n", s->nres);
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct ref_preempt_node *n = &s->node[i];

		fprintf(f, "  %s %s parent=%s", n->is_cq ? "cq" : "cohort",
			n->name, n->parent < 0 ? "-" : s->node[n->parent].name);
		dump_limits(f, s, n);
		if (n->is_cq)
			fprintf(f, " within=%d reclaim=%d borrow=%d thr=%s%d",
				(int)n->within, (int)n->reclaim,
				(int)n->borrow_policy,
				n->has_threshold ? "" : "unset:",
				(int)n->threshold);
		fputc('\n', f);
	}
	for (size_t i = 0; i < s->nadm; i++)
		dump_wl(f, s, &s->adm[i]);
	fprintf(f, "preemptor:\n");
	dump_wl(f, s, &s->pre);
	if (!r)
		return;
	fprintf(f, "reference: %s", ref_preempt_outcome_name(r->outcome));
	for (size_t i = 0; i < r->nvictims; i++)
		fprintf(f, " %s:%s", s->adm[r->victim[i]].name, r->reason[i]);
	fputc('\n', f);
}
