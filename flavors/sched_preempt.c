/*
 * sched_preempt: Kueue's classical preemption (kueue-scheduler.md §4.1-4.4)
 * on sched's records: which workloads holding quota a pending workload
 * may evict, and the minimal set of them that lets it fit.
 *
 * DESIGN
 * Candidates are the holders (scq.holders) of the preemptor's
 * ClusterQueue (withinClusterQueue) and of the borrowing ClusterQueues of
 * its cohort tree (reclaimWithinCohort), each classified as Kueue's
 * preemption variants: within the ClusterQueue, hierarchical reclaim
 * (the preemptor's subtree has the closer claim on the quota), reclaim
 * only if the preemptor then does not borrow, reclaim while borrowing
 * (borrowWithinCohort). They are ordered (evicted first, hierarchical,
 * then priority-based cross-queue, then same-queue; inside each, lower
 * priority, then most recently admitted, then uid) and removed from the
 * live tree one by one through the undo log until the demand fits; then
 * every earlier one that is not needed is given back (fill-back). The
 * tree is restored to the caller's savepoint before returning, so the
 * question leaves nothing behind.
 *
 * A victim whose eviction is under way (Evicted=True in its status, or a
 * DEC_PREEMPT emitted and not yet seen: swl.preempting) still holds its
 * quota until its reservation is cleared; it is ordered first and never
 * preempted twice.
 *
 * The same search answers the flavor assigner's oracle (one flavor x
 * resource at a time, §2.3) and the nominated assignment (every flavor x
 * resource whose cell needs preemption).
 *
 * Cost: O(h log h) for h candidate holders of the cohort tree, plus
 * O(h x n) tree updates for n the demand's flavor-resources.
 */
#include "flavors/sched.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "flavors/sched_int.h"

/* One question: who may make room for demand u of preemptor p in c. */
struct pctx {
	struct sched *s;
	int32_t cq;            /* c's id */
	int node;              /* c's tree node */
	const struct swl *p;   /* the preemptor */
	const struct fr_val *u; /* the demand */
	size_t nu;
	const int *need;       /* fr ids whose assignment needs preemption */
	size_t nneed;
	enum preempt_within_cq within;
	enum reclaim_within_cohort reclaim;
	bool bwc_never;
	bool has_thr;
	int32_t thr;
};

static bool within_nominal(const struct tree *t, int node, const int *need,
			   size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (tree_subtree_quota(t, node, need[i]) <
		    tree_usage(t, node, need[i]))
			return false;
	return true;
}

static bool uses_any(const struct swl *r, const int *need, size_t n)
{
	for (size_t i = 0; i < r->nusage; i++)
		for (size_t k = 0; k < n; k++)
			if (r->usage[i].fr == need[k] && r->usage[i].v > 0)
				return true;
	return false;
}

/* Kueue's SatisfiesPreemptionPolicy for candidate r. */
static bool policy_allows(const struct pctx *x, const struct swl *r,
			  bool own)
{
	int32_t pp = x->p->qi.priority, cp = r->qi.priority;
	bool lower = pp > cp;

	if (own) {
		switch (x->within) {
		case WCQ_LOWER_PRIORITY:
			return lower;
		case WCQ_LOWER_OR_NEWER_EQUAL_PRIORITY:
			return lower || (pp == cp && x->p->qi.ts_ms < r->qi.ts_ms);
		case WCQ_NEVER:
			return false;
		}
		return false;
	}
	switch (x->reclaim) {
	case RWC_LOWER_PRIORITY:
		return lower;
	case RWC_ANY:
		return true;
	case RWC_NEVER:
		return false;
	}
	return false;
}

/* Kueue's classifyPreemptionVariant; PV_NEVER when not a candidate. */
static enum sched_pvariant classify(const struct pctx *x, const struct swl *r,
				    bool hier_adv)
{
	bool own = r->hold_cq == x->cq;
	int32_t cp = r->qi.priority;

	if (!uses_any(r, x->need, x->nneed) || !policy_allows(x, r, own))
		return PV_NEVER;
	if (own)
		return PV_WITHIN_CQ;
	if (hier_adv)
		return PV_HIER;
	if (x->bwc_never || cp >= x->p->qi.priority ||
	    (x->has_thr && cp > x->thr))
		return PV_RECLAIM_NO_BORROW;
	return PV_RECLAIM_WHILE_BORROW;
}

static void push_cands(const struct pctx *x, int32_t cq, int lca,
		       bool hier_adv, uint8_t list)
{
	struct sched *s = x->s;

	for (struct swl *r = s->cqs[cq].holders; r; r = r->h_next) {
		enum sched_pvariant v = classify(x, r, hier_adv);
		struct sched_pcand *pc;

		if (v == PV_NEVER ||
		    (s->excl_round && r->victim_round == s->cycle))
			continue;
		/* Admitted by an earlier round of this call: its DEC_ADMIT
		 * is in the caller's list, not written yet; it becomes a
		 * candidate once its admission is seen. */
		if (r->state == WS_ASSUMED && r->dec_call == s->calls) {
			s->pskipped = true;
			continue;
		}
		if (s->npc == s->cappc)
			XGROW(s->pc, s->cappc, s->npc + 1);
		pc = &s->pc[s->npc++];
		pc->r = r;
		pc->lca = lca;
		pc->variant = (uint8_t)v;
		pc->list = list;
		/* its eviction is under way: written, decided here, or a
		 * DEC_EVICT of the checks (chk_sent on a holder) */
		pc->evicted = r->evicted || r->preempting ||
			      (r->chk_sent && r->state == WS_HOLDING);
		pc->qr = r->qr_ms ? r->qr_ms : s->now;
		pc->prio = r->qi.priority;
		pc->afs_on = s->cqs[r->hold_cq].afs && r->lq >= 0;
		pc->afs = pc->afs_on ? sched_afs_usage(s, &s->lqs[r->lq]) : 0;
		pc->uid = r->w && r->w->meta.uid ? r->w->meta.uid : "";
	}
}

/* QuantitiesFitInQuota: whether rem fits node's subtree quota, and what
 * is left of it past node's local availability (in place). */
static bool fit_in_quota(const struct tree *t, int node, struct fr_val *rem,
			 size_t n)
{
	bool fits = true;

	for (size_t i = 0; i < n; i++) {
		int64_t la = tree_local_available(t, node, rem[i].fr);

		if (tree_subtree_quota(t, node, rem[i].fr) <
		    tree_usage(t, node, rem[i].fr) + rem[i].v)
			fits = false;
		rem[i].v = rem[i].v > la ? rem[i].v - la : 0;
	}
	return fits;
}

/* Candidates in the subtree of root (skipping subtree skip, subtrees
 * within nominal and the preemptor's own queue). */
static void collect_subtree(const struct pctx *x, int root, int skip,
			    bool hier_adv, uint8_t list)
{
	struct sched *s = x->s;
	size_t sp = 0;

	if (s->capstack < 16)
		XGROW(s->stack, s->capstack, 16);
	s->stack[sp++] = root;
	while (sp) {
		int n = s->stack[--sp];
		size_t nc = tree_children(s->t, n, NULL, 0), base = sp;

		if (sp + nc > s->capstack)
			XGROW(s->stack, s->capstack, sp + nc);
		tree_children(s->t, n, s->stack + sp, nc);
		for (size_t i = 0; i < nc; i++) {
			int ch = s->stack[base + i];

			if (ch == skip ||
			    within_nominal(s->t, ch, x->need, x->nneed))
				continue;
			if (tree_node_kind(s->t, ch) == NODE_COHORT) {
				s->stack[sp++] = ch;
				continue;
			}
			if (ch == x->node || (size_t)ch >= s->ncq_of_node ||
			    s->cq_of_node[ch] < 0)
				continue;
			push_cands(x, s->cq_of_node[ch], root, hier_adv, list);
		}
	}
}

/* Candidate order (§4.2, §4.3's lists): whether a goes before b. */
static bool pc_before(const struct sched_pcand *a, const struct sched_pcand *b)
{
	int c;

	if (a->evicted != b->evicted)
		return a->evicted;
	if (a->list != b->list)
		return a->list < b->list;
	/* admission fair sharing: in one queue, the LocalQueue that used
	 * more first */
	if (a->afs_on && b->afs_on && a->r->hold_cq == b->r->hold_cq &&
	    a->r->lq != b->r->lq && a->afs != b->afs)
		return a->afs > b->afs;
	if (a->prio != b->prio)
		return a->prio < b->prio;
	if (a->qr != b->qr)
		return a->qr > b->qr;
	c = strcmp(a->uid, b->uid);
	if (c)
		return c < 0;
	return a->r->id < b->r->id;
}

static void heap_down(struct sched *s, size_t i)
{
	int32_t *h = s->hp;
	size_t n = s->nhp;

	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < n && pc_before(&s->pc[h[l]], &s->pc[h[m]]))
			m = l;
		if (l + 1 < n && pc_before(&s->pc[h[l + 1]], &s->pc[h[m]]))
			m = l + 1;
		if (m == i)
			return;
		{
			int32_t t = h[i];

			h[i] = h[m];
			h[m] = t;
		}
		i = m;
	}
}

/*
 * The order is extracted lazily: the minimal set usually stops after a
 * few candidates, so a heap (O(n) to build, O(log n) per candidate
 * taken) beats sorting all n. Returns the index in pc of the i-th
 * candidate in order, or -1 past the last.
 */
static int32_t cand_at(struct sched *s, size_t i)
{
	while (s->nord <= i && s->nhp) {
		s->ord[s->nord++] = s->hp[0];
		s->hp[0] = s->hp[--s->nhp];
		heap_down(s, 0);
	}
	return i < s->nord ? s->ord[i] : -1;
}

static void order_begin(struct sched *s)
{
	if (s->capord < s->npc) {
		s->ord = xrealloc(s->ord, s->npc * sizeof(*s->ord));
		s->hp = xrealloc(s->hp, s->npc * sizeof(*s->hp));
		s->capord = s->npc;
	}
	s->nord = 0;
	s->nhp = s->npc;
	for (size_t i = 0; i < s->npc; i++)
		s->hp[i] = (int32_t)i;
	for (size_t i = s->nhp / 2; i-- > 0;)
		heap_down(s, i);
}

/* queueUnderNominalInResourcesNeedingPreemption: usage < nominal in
 * every fr that needs preemption. */
static bool under_nominal(const struct pctx *x)
{
	const struct tree *t = x->s->t;

	for (size_t i = 0; i < x->nneed; i++)
		if (tree_nominal(t, x->node, x->need[i]) <=
		    tree_usage(t, x->node, x->need[i]))
			return false;
	return true;
}

/* Lists of §4.3 (evicted split first by the sort key). */
enum { L_HIER = 0, L_PRIO = 1, L_SAME = 2 };

static void collect(const struct pctx *x)
{
	struct sched *s = x->s;
	const struct tree *t = s->t;

	s->npc = 0;
	if (x->within != WCQ_NEVER)
		push_cands(x, x->cq, -1, false, L_SAME);
	if (tree_parent(t, x->node) >= 0 && x->reclaim != RWC_NEVER) {
		struct fr_val *rem;
		bool hier;
		int prev = -1;
		size_t steps = 0;
		/* Without borrowWithinCohort and at or over nominal, the
		 * only attempt allows borrowing, where every candidate
		 * without hierarchical advantage is ReclaimWithoutBorrowing
		 * and so never valid (minimal_set): not worth collecting.
		 * In a full cohort that is most heads and most holders. */
		bool prio_useless = x->bwc_never && !under_nominal(x);

		if (s->caprem < x->nu)
			XGROW(s->rem, s->caprem, x->nu);
		rem = s->rem;
		memcpy(rem, x->u, x->nu * sizeof(*rem));
		hier = fit_in_quota(t, x->node, rem, x->nu);
		for (int a = tree_parent(t, x->node); a >= 0 && steps < 4096;
		     a = tree_parent(t, a), steps++) {
			if (hier || !prio_useless)
				collect_subtree(x, a, prev, hier,
						hier ? L_HIER : L_PRIO);
			hier = fit_in_quota(t, a, rem, x->nu) || hier;
			prev = a;
		}
	}
	order_begin(s);
}

/* Whether candidate pc may go in this attempt (§4.3 last point). */
static bool cand_valid(const struct pctx *x, const struct sched_pcand *pc,
		       bool borrow)
{
	const struct tree *t = x->s->t;
	int node;

	if (pc->r->hold_cq == x->cq)
		return true;
	if (borrow && pc->variant == PV_RECLAIM_NO_BORROW)
		return false;
	node = x->s->cqs[pc->r->hold_cq].node;
	if (within_nominal(t, node, x->need, x->nneed))
		return false;
	for (int n = tree_parent(t, node); n >= 0 && n != pc->lca;
	     n = tree_parent(t, n))
		if (within_nominal(t, n, x->need, x->nneed))
			return false;
	return true;
}

/* workloadFits: the demand fits now; without borrowing when !borrow. */
static bool demand_fits(const struct pctx *x, bool borrow)
{
	const struct tree *t = x->s->t;

	for (size_t i = 0; i < x->nu; i++) {
		int fr = x->u[i].fr;
		int64_t v = x->u[i].v;

		if (!borrow &&
		    tree_nominal(t, x->node, fr) < tree_usage(t, x->node, fr) + v)
			return false;
		if (v > tree_available(t, x->node, fr))
			return false;
	}
	return true;
}

static void take_out(struct sched *s, const struct swl *r)
{
	tree_remove_usage_undo(s->t, s->cqs[r->hold_cq].node, r->usage,
			       r->nusage, &s->undo);
}

static void put_back(struct sched *s, const struct swl *r)
{
	tree_add_usage_undo(s->t, s->cqs[r->hold_cq].node, r->usage,
			    r->nusage, &s->undo);
}

/* fillBackWorkloads: with ptg[0..nt) taken out and the demand fitting,
 * gives back every victim but the last, newest removal first, that is
 * not needed. Returns the new count; the tree keeps the removals. */
static size_t fill_back(const struct pctx *x, size_t nt, bool borrow)
{
	struct sched *s = x->s;

	for (size_t k = nt - 1; k-- > 0;) {
		put_back(s, s->pc[s->ptg[k]].r);
		if (demand_fits(x, borrow)) {
			s->ptg[k] = s->ptg[nt - 1];
			nt--;
		} else {
			take_out(s, s->pc[s->ptg[k]].r);
		}
	}
	return nt;
}

/*
 * classicalPreemptions: fills s->ptg[0..n) with indexes into s->pc of
 * the minimal victim set and returns n (0: no preemption helps). The
 * tree is as it was on return.
 */
static size_t minimal_set(const struct pctx *x)
{
	struct sched *s = x->s;
	size_t sp = tree_undo_savepoint(&s->undo);
	size_t nhier = 0, nprio = 0;
	bool attempts[2];
	size_t natt;

	if (!s->npc)
		return 0;
	for (size_t i = 0; i < s->npc; i++) {
		nhier += s->pc[i].list == L_HIER;
		nprio += s->pc[i].list == L_PRIO;
	}
	if (s->capptg < s->npc)
		XGROW(s->ptg, s->capptg, s->npc);
	{
		bool under = under_nominal(x);

		if (!nhier && !nprio) {
			attempts[0] = true;
			natt = 1;
		} else if (x->bwc_never && !under) {
			attempts[0] = true;
			natt = 1;
		} else if (x->bwc_never && !nhier) {
			attempts[0] = false;
			attempts[1] = true;
			natt = 2;
		} else {
			attempts[0] = true;
			attempts[1] = false;
			natt = 2;
		}
	}
	for (size_t a = 0; a < natt; a++) {
		bool borrow = attempts[a];
		size_t nt = 0;

		int32_t ci;

		for (size_t i = 0; (ci = cand_at(s, i)) >= 0; i++) {
			if (!cand_valid(x, &s->pc[ci], borrow))
				continue;
			take_out(s, s->pc[ci].r);
			s->ptg[nt++] = ci;
			if (!demand_fits(x, borrow))
				continue;
			nt = fill_back(x, nt, borrow);
			tree_undo_to(s->t, &s->undo, sp);
			return nt;
		}
		tree_undo_to(s->t, &s->undo, sp);
	}
	return 0;
}

/* ---- fair sharing preemption (kueue-scheduler.md §4.5) ---- */

/* Kueue's cqIsBorrowing: a ClusterQueue with a cohort above its nominal
 * quota on some flavor-resource that needs preemption. */
static bool cq_borrowing_on(const struct pctx *x, int node)
{
	const struct tree *t = x->s->t;

	if (tree_parent(t, node) < 0)
		return false;
	for (size_t i = 0; i < x->nneed; i++)
		if (tree_usage(t, node, x->need[i]) >
		    tree_nominal(t, node, x->need[i]))
			return true;
	return false;
}

static void fair_collect(const struct pctx *x)
{
	struct sched *s = x->s;
	const struct tree *t = s->t;
	int root;
	size_t sp = 0;

	s->npc = 0;
	if (x->within != WCQ_NEVER)
		push_cands(x, x->cq, -1, false, L_SAME);
	if (tree_parent(t, x->node) < 0 || x->reclaim == RWC_NEVER)
		return;
	root = tree_root(t, x->node);
	if (root < 0)
		return;
	if (s->capstack < 16)
		XGROW(s->stack, s->capstack, 16);
	s->stack[sp++] = root;
	while (sp) {
		int n = s->stack[--sp];
		size_t nc = tree_children(t, n, NULL, 0), base = sp;

		if (sp + nc > s->capstack)
			XGROW(s->stack, s->capstack, sp + nc);
		tree_children(t, n, s->stack + sp, nc);
		for (size_t i = 0; i < nc; i++) {
			int ch = s->stack[base + i];

			if (tree_node_kind(t, ch) == NODE_COHORT) {
				s->stack[sp++] = ch;
				continue;
			}
			if (ch == x->node || (size_t)ch >= s->ncq_of_node ||
			    s->cq_of_node[ch] < 0 || !cq_borrowing_on(x, ch))
				continue;
			push_cands(x, s->cq_of_node[ch], -1, false, L_PRIO);
		}
	}
}

/* Per-node stamps for the orderings (fp_path, fp_pruned). */
static void fair_scratch(struct sched *s)
{
	size_t cap = tree_node_cap(s->t);

	if (s->capfp < cap) {
		s->fp_path = xrealloc(s->fp_path, cap * sizeof(*s->fp_path));
		s->fp_pruned = xrealloc(s->fp_pruned,
					cap * sizeof(*s->fp_pruned));
		memset(s->fp_path + s->capfp, 0,
		       (cap - s->capfp) * sizeof(*s->fp_path));
		memset(s->fp_pruned + s->capfp, 0,
		       (cap - s->capfp) * sizeof(*s->fp_pruned));
		s->capfp = cap;
	}
	if (s->capfqc < s->ncq) {
		s->fq_stamp = xrealloc(s->fq_stamp,
				       s->ncq * sizeof(*s->fq_stamp));
		s->fq_idx = xrealloc(s->fq_idx, s->ncq * sizeof(*s->fq_idx));
		memset(s->fq_stamp + s->capfqc, 0,
		       (s->ncq - s->capfqc) * sizeof(*s->fq_stamp));
		s->capfqc = s->ncq;
	}
	if (s->capfnext < s->npc)
		XGROW(s->fnext, s->capfnext, s->npc);
}

/* A new target ordering (MakeClusterQueueOrdering) over the pc indexes
 * idx[0..n), which are in candidate order: one list per ClusterQueue. */
static void ordering_begin(struct sched *s, const int32_t *idx, size_t n)
{
	s->fp_ord = ++s->fp_gen;
	s->nfq = 0;
	for (size_t i = 0; i < n; i++) {
		int32_t k = idx[i], cq = s->pc[k].r->hold_cq;
		struct sfq *q;

		if (s->fq_stamp[cq] != s->fp_ord) {
			s->fq_stamp[cq] = s->fp_ord;
			s->fq_idx[cq] = (int32_t)s->nfq;
			if (s->nfq == s->capfq)
				XGROW(s->fq, s->capfq, s->nfq + 1);
			s->fq[s->nfq++] = (struct sfq){ cq, -1, -1 };
		}
		q = &s->fq[s->fq_idx[cq]];
		s->fnext[k] = -1;
		if (q->tail >= 0)
			s->fnext[q->tail] = k;
		else
			q->head = k;
		q->tail = k;
	}
}

static struct sfq *fq_of(struct sched *s, int32_t cq)
{
	if (s->fq_stamp[cq] != s->fp_ord)
		return NULL;
	return &s->fq[s->fq_idx[cq]];
}

static bool fq_has(struct sched *s, int32_t cq)
{
	struct sfq *q = fq_of(s, cq);

	return q && q->head >= 0;
}

static int32_t fq_pop(struct sched *s, int32_t cq)
{
	struct sfq *q = fq_of(s, cq);
	int32_t k = q->head;

	q->head = s->fnext[k];
	if (q->head < 0)
		q->tail = -1;
	return k;
}

static bool pruned(const struct sched *s, int node)
{
	return s->fp_pruned[node] == s->fp_ord;
}

static void prune(struct sched *s, int node)
{
	s->fp_pruned[node] = s->fp_ord;
}

/* Kueue's nextTarget: descend from cohort towards the child with the
 * highest share, pruning what can yield nothing more. Returns a CQ id,
 * or -1 when this step only pruned. */
static int32_t next_target(const struct pctx *x, int cohort)
{
	struct sched *s = x->s;
	const struct tree *t = s->t;
	size_t nc = tree_children(t, cohort, NULL, 0);
	int *kids = xmalloc((nc ? nc : 1) * sizeof(*kids));
	int best_cq = -1, best_coh = -1;
	struct fair_drs bq, bc, d;
	int32_t ret;

	fair_drs_negative(&bq);
	fair_drs_negative(&bc);
	tree_children(t, cohort, kids, nc);
	for (size_t i = 0; i < nc; i++) {
		int ch = kids[i];

		if (pruned(s, ch))
			continue;
		fair_drs(s->fair, t, ch, &d);
		if (tree_node_kind(t, ch) == NODE_CQ) {
			int32_t cq = (size_t)ch < s->ncq_of_node
					     ? s->cq_of_node[ch]
					     : -1;
			int c;

			if ((!d.borrowing && ch != x->node) || cq < 0 ||
			    !fq_has(s, cq)) {
				prune(s, ch);
				continue;
			}
			c = fair_cmp(&d, &bq);
			if (c == 0 && best_cq >= 0) {
				const struct sfq *a = fq_of(s, cq);
				const struct sfq *b =
					fq_of(s, s->cq_of_node[best_cq]);

				if (pc_before(&s->pc[a->head], &s->pc[b->head]))
					best_cq = ch;
			} else if (c > 0) {
				bq = d;
				best_cq = ch;
			}
		} else if (!d.borrowing && s->fp_path[ch] != s->fp_pgen) {
			prune(s, ch);
		} else if (fair_cmp(&d, &bc) >= 0) {
			bc = d;
			best_coh = ch;
		}
	}
	free(kids);
	if (best_cq < 0 && best_coh < 0) {
		prune(s, cohort);
		return -1;
	}
	if (best_coh >= 0 && fair_cmp(&bc, &bq) >= 0) {
		ret = next_target(x, best_coh);
		return ret;
	}
	return s->cq_of_node[best_cq];
}

/* The next target ClusterQueue of the ordering, or -1 when done. */
static int32_t ordering_next(const struct pctx *x)
{
	struct sched *s = x->s;
	int root;

	if (tree_parent(s->t, x->node) < 0)
		return !pruned(s, x->node) && fq_has(s, x->cq) ? x->cq : -1;
	root = tree_root(s->t, x->node);
	while (root >= 0 && !pruned(s, root)) {
		int32_t cq = next_target(x, root);

		if (cq >= 0)
			return cq;
	}
	return -1;
}

/* getAlmostLCAs: the children of the lowest common ancestor of the
 * preemptor's queue and target cq that hold each of them. */
static void almost_lcas(const struct pctx *x, int32_t cq, int *pa, int *ta)
{
	const struct sched *s = x->s;
	const struct tree *t = s->t;
	int lca = -1, n = s->cqs[cq].node;

	*ta = n;
	for (int a = tree_parent(t, n); a >= 0; a = tree_parent(t, a)) {
		if (s->fp_path[a] == s->fp_pgen) {
			lca = a;
			break;
		}
		*ta = a;
	}
	*pa = x->node;
	for (int a = tree_parent(t, x->node); a >= 0 && a != lca;
	     a = tree_parent(t, a))
		*pa = a;
}

/* workloadFitsForFairSharing: the demand fits, borrowing allowed, with
 * the incoming usage (added for the shares) taken out again. */
static bool fits_fs(const struct pctx *x)
{
	struct sched *s = x->s;
	size_t sp = tree_undo_savepoint(&s->undo);
	bool ok;

	tree_remove_usage_undo(s->t, x->node, x->u, x->nu, &s->undo);
	ok = demand_fits(x, true);
	tree_undo_to(s->t, &s->undo, sp);
	return ok;
}

static bool strategy_ok(enum sched_fs_strategy st, const struct fair_drs *pn,
			const struct fair_drs *to, const struct fair_drs *tn)
{
	switch (st) {
	case FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
		return fair_cmp(pn, tn) <= 0;
	case FS_LESS_THAN_INITIAL_SHARE:
		return fair_cmp(pn, to) < 0;
	}
	BUG("sched: bad fair sharing strategy %d", (int)st);
}

static void add_target(struct sched *s, size_t *nt, int32_t k,
		       enum sched_pvariant v)
{
	take_out(s, s->pc[k].r);
	s->pc[k].variant = (uint8_t)v;
	s->ptg[(*nt)++] = k;
}

static void retry_add(struct sched *s, int32_t k)
{
	if (s->nfretry == s->capfretry)
		XGROW(s->fretry, s->capfretry, s->nfretry + 1);
	s->fretry[s->nfretry++] = k;
}

/* runFirstFsStrategy: true when the demand fits with ptg[0..*nt). */
static bool first_strategy(const struct pctx *x, enum sched_fs_strategy st,
			   bool within_nominal, size_t *nt)
{
	struct sched *s = x->s;
	int32_t cq;

	while ((cq = ordering_next(x)) >= 0) {
		struct fair_drs pn, to;
		int pa, ta;

		if (cq == x->cq || within_nominal) {
			add_target(s, nt, fq_pop(s, cq),
				   cq == x->cq ? PV_WITHIN_CQ
					       : PV_RECLAIM_NO_BORROW);
			if (fits_fs(x))
				return true;
			continue;
		}
		almost_lcas(x, cq, &pa, &ta);
		fair_drs(s->fair, s->t, pa, &pn);
		fair_drs(s->fair, s->t, ta, &to);
		if (fair_share(&pn) == INFINITY &&
		    fair_share(&to) != INFINITY) {
			while (fq_has(s, cq))
				retry_add(s, fq_pop(s, cq));
			continue;
		}
		while (fq_has(s, cq)) {
			int32_t k = fq_pop(s, cq);
			size_t sp = tree_undo_savepoint(&s->undo);
			struct fair_drs tn;

			take_out(s, s->pc[k].r);
			fair_drs(s->fair, s->t, ta, &tn);
			tree_undo_to(s->t, &s->undo, sp);
			if (!strategy_ok(st, &pn, &to, &tn)) {
				retry_add(s, k);
				continue;
			}
			add_target(s, nt, k, PV_FAIR);
			if (fits_fs(x))
				return true;
			break; /* shares moved: pick the target again */
		}
	}
	return false;
}

/* runSecondFsStrategy (LessThanInitialShare) over the retry list. */
static bool second_strategy(const struct pctx *x, size_t *nt)
{
	struct sched *s = x->s;
	int32_t cq;

	ordering_begin(s, s->fretry, s->nfretry);
	while ((cq = ordering_next(x)) >= 0) {
		struct fair_drs pn, to;
		int pa, ta;
		int32_t k;

		almost_lcas(x, cq, &pa, &ta);
		fair_drs(s->fair, s->t, pa, &pn);
		fair_drs(s->fair, s->t, ta, &to);
		k = fq_pop(s, cq);
		if (fair_cmp(&pn, &to) < 0) {
			add_target(s, nt, k, PV_FAIR);
			if (fits_fs(x))
				return true;
		}
		prune(s, s->cqs[cq].node); /* DropQueue */
	}
	return false;
}

/*
 * fairPreemptions: fills s->ptg with the pc indexes of the victims (each
 * pc's variant set to its reason) and returns how many; 0 when the
 * strategies cannot make the demand fit. The tree is as it was on
 * return.
 */
static size_t fair_set(const struct pctx *x)
{
	struct sched *s = x->s;
	size_t sp = tree_undo_savepoint(&s->undo), nt = 0;
	size_t nst = s->o.nfs_strategies;
	enum sched_fs_strategy st0 =
		nst ? s->o.fs_strategies[0]
		    : FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE;
	bool second = nst ? nst > 1 : true;
	bool within = true, ok;
	int32_t ci;

	fair_collect(x);
	if (!s->npc)
		return 0;
	if (s->capptg < s->npc)
		XGROW(s->ptg, s->capptg, s->npc);
	fair_scratch(s);
	/* every candidate in order (§4.2) */
	order_begin(s);
	for (size_t i = 0; (ci = cand_at(s, i)) >= 0; i++)
		;
	s->fp_pgen = ++s->fp_gen;
	for (int a = tree_parent(s->t, x->node); a >= 0;
	     a = tree_parent(s->t, a))
		s->fp_path[a] = s->fp_pgen;
	ordering_begin(s, s->ord, s->nord);
	s->nfretry = 0;
	/* DRS values include the incoming workload */
	tree_add_usage_undo(s->t, x->node, x->u, x->nu, &s->undo);
	for (size_t i = 0; i < x->nneed; i++)
		if (tree_parent(s->t, x->node) >= 0 &&
		    tree_usage(s->t, x->node, x->need[i]) >
			    tree_nominal(s->t, x->node, x->need[i]))
			within = false;
	ok = first_strategy(x, st0, within, &nt);
	if (!ok && second)
		ok = second_strategy(x, &nt);
	tree_undo_to(s->t, &s->undo, sp);
	if (!ok)
		return 0;
	/* fill back (allowBorrowing), without the incoming usage */
	for (size_t i = 0; i < nt; i++)
		take_out(s, s->pc[s->ptg[i]].r);
	nt = fill_back(x, nt, true);
	tree_undo_to(s->t, &s->undo, sp);
	return nt;
}

static void pctx_init(struct pctx *x, struct sched *s, int32_t cq,
		      const struct swl *p)
{
	const struct cluster_queue *q = s->cqs[cq].cq;

	memset(x, 0, sizeof(*x));
	x->s = s;
	x->cq = cq;
	x->node = s->cqs[cq].node;
	x->p = p;
	if (q) {
		x->within = q->within_cq;
		x->reclaim = q->reclaim;
		x->bwc_never = q->borrow_policy == BWC_NEVER;
		x->has_thr = q->has_borrow_threshold;
		x->thr = q->borrow_threshold;
	} else {
		x->bwc_never = true;
	}
}

/* The victims of x: classical or fair sharing (Kueue's getTargets). */
static size_t search(const struct pctx *x)
{
	if (x->s->o.fair_sharing)
		return fair_set(x);
	collect(x);
	return minimal_set(x);
}

enum assign_preempt sched_preempt_oracle(void *ctx, const struct assign_cq *cq,
					 int32_t preemptor, int fr, int64_t val,
					 int *borrow_after)
{
	struct sched *s = ctx;
	const struct scq *c = (const struct scq *)(const void *)(
		(const char *)cq - offsetof(struct scq, c));
	struct fr_val u = { fr, val };
	int need = fr;
	struct pctx x;
	size_t n, sp;
	bool may_reclaim, own = false;

	if (preemptor < 0 || (size_t)preemptor >= s->nwl ||
	    !s->wls[preemptor]) {
		*borrow_after = tree_borrow_level(s->t, c->node, fr, val,
						  &may_reclaim);
		return ASSIGN_PP_NO_CANDIDATES;
	}
	pctx_init(&x, s, (int32_t)(c - s->cqs), s->wls[preemptor]);
	x.u = &u;
	x.nu = 1;
	x.need = &need;
	x.nneed = 1;
	n = search(&x);
	if (!n) {
		*borrow_after = tree_borrow_level(s->t, c->node, fr, val,
						  &may_reclaim);
		return ASSIGN_PP_NO_CANDIDATES;
	}
	sp = tree_undo_savepoint(&s->undo);
	for (size_t i = 0; i < n; i++) {
		const struct swl *r = s->pc[s->ptg[i]].r;

		own = own || r->hold_cq == x.cq;
		take_out(s, r);
	}
	*borrow_after = tree_borrow_level(s->t, c->node, fr, val,
					  &may_reclaim);
	tree_undo_to(s->t, &s->undo, sp);
	return own ? ASSIGN_PP_PREEMPT : ASSIGN_PP_RECLAIM;
}

size_t sched_preempt_targets(struct sched *s, int32_t cq, const struct swl *p,
			     const struct assign_result *res,
			     struct sched_target **out)
{
	struct pctx x;
	size_t n, nneed = 0;

	*out = NULL;
	if (s->capneed < res->ncells)
		XGROW(s->need, s->capneed, res->ncells);
	for (size_t i = 0; i < res->ncells; i++) {
		const struct assign_cell *c = &res->cells[i];
		size_t k;

		if (c->mode != ASSIGN_PREEMPT)
			continue;
		for (k = 0; k < nneed && s->need[k] != c->fr; k++)
			;
		if (k == nneed)
			s->need[nneed++] = c->fr;
	}
	if (!nneed)
		return 0;
	pctx_init(&x, s, cq, p);
	x.u = res->usage;
	x.nu = res->nusage;
	x.need = s->need;
	x.nneed = nneed;
	n = search(&x);
	if (!n)
		return 0;
	*out = xmalloc(n * sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		const struct sched_pcand *pc = &s->pc[s->ptg[i]];

		(*out)[i] = (struct sched_target){ pc->r->id,
						   (uint8_t)pc->variant };
	}
	return n;
}

const char *sched_pvariant_reason(enum sched_pvariant v)
{
	switch (v) {
	case PV_WITHIN_CQ:
		return "InClusterQueue";
	case PV_HIER:
	case PV_RECLAIM_NO_BORROW:
		return "InCohortReclamation";
	case PV_RECLAIM_WHILE_BORROW:
		return "InCohortReclaimWhileBorrowing";
	case PV_FAIR:
		return "InCohortFairSharing";
	case PV_NEVER:
		break;
	}
	return "Unknown";
}

static const char *human_reason(enum sched_pvariant v)
{
	switch (v) {
	case PV_WITHIN_CQ:
		return "prioritization in the ClusterQueue";
	case PV_HIER:
	case PV_RECLAIM_NO_BORROW:
		return "reclamation within the cohort";
	case PV_RECLAIM_WHILE_BORROW:
		return "reclamation within the cohort while borrowing";
	case PV_FAIR:
		return "Fair Sharing within the cohort";
	case PV_NEVER:
		break;
	}
	return "UNKNOWN";
}

/* "/<root cohort>/.../<cq>" of ClusterQueue cq. */
static void add_path(struct sbuf *b, const struct sched *s, int32_t cq)
{
	const struct tree *t = s->t;
	int path[64];
	size_t n = 0;

	for (int node = s->cqs[cq].node; node >= 0 && n < 64;
	     node = tree_parent(t, node))
		path[n++] = node;
	while (n--)
		sbuf_addf(b, "/%s", tree_node_name(t, path[n]));
}

char *sched_preempt_message(const struct sched *s, const struct swl *p,
			    int32_t pcq, const struct swl *victim,
			    enum sched_pvariant v)
{
	const struct workload *w = p->w;
	const char *uid = w && w->meta.uid && *w->meta.uid ? w->meta.uid
							  : "UNKNOWN";
	const char *juid = w ? smap_get(&w->meta.labels, LABEL_JOB_UID) : NULL;
	struct sbuf b = SBUF_INIT;

	sbuf_addf(&b,
		  "Preempted to accommodate a workload (UID: %s, JobUID: %s) "
		  "due to %s; preemptor path: ",
		  uid, juid && *juid ? juid : "UNKNOWN", human_reason(v));
	add_path(&b, s, pcq);
	sbuf_addf(&b, "; preemptee path: ");
	add_path(&b, s, victim->hold_cq);
	return sbuf_detach(&b, NULL);
}
