/*
 * sched_explain: flavors/explain.h over sched's private state. The
 * assessment is the cycle's own (sched_assess: nominate with the
 * preemption oracle); everything else here only reads.
 */
#include "flavors/explain.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "flavors/sched_int.h"
#include "model/objects.h"

static const char *const xkind_names[] = {
	[SXK_QUOTA] = "quota",
	[SXK_MAX_CAPACITY] = "maxCapacity",
	[SXK_TAINT] = "taint",
	[SXK_LABEL] = "label",
	[SXK_NOT_FOUND] = "notFound",
	[SXK_UNAVAILABLE] = "unavailable",
	[SXK_TOPOLOGY] = "topology",
};

static const char *const xstate_names[] = {
	[SX_UNKNOWN] = "unknown",
	[SX_NOT_QUEUED] = "notQueued",
	[SX_PENDING] = "pending",
	[SX_PARKED] = "inadmissible",
	[SX_HOLDING] = "admitted",
	[SX_FINISHED] = "finished",
};

const char *sched_xkind_name(enum sched_xkind k)
{
	return (size_t)k < sizeof(xkind_names) / sizeof(xkind_names[0])
		       ? xkind_names[k]
		       : "unknown";
}

const char *sched_xstate_name(enum sched_xstate st)
{
	return (size_t)st < sizeof(xstate_names) / sizeof(xstate_names[0])
		       ? xstate_names[st]
		       : "unknown";
}

void sched_explain_release(struct sched_explain *x)
{
	free(x->message);
	for (size_t i = 0; i < x->nps; i++) {
		free(x->ps[i].res);
		free(x->ps[i].per_pod);
		free(x->ps[i].flavor);
	}
	free(x->ps);
	for (size_t i = 0; i < x->nreasons; i++)
		free(x->reasons[i].text);
	free(x->reasons);
	free(x->quota);
	free(x->victims);
	memset(x, 0, sizeof(*x));
	x->position = -1;
}

static enum sched_xkind xkind_of(uint8_t k)
{
	switch (k) {
	case AR_MAX_CAPACITY:
		return SXK_MAX_CAPACITY;
	case AR_TAINT:
		return SXK_TAINT;
	case AR_AFFINITY:
		return SXK_LABEL;
	case AR_NOT_FOUND:
		return SXK_NOT_FOUND;
	case AR_UNAVAILABLE:
		return SXK_UNAVAILABLE;
	case AR_TAS_NO_SUPPORT:
	case AR_TAS_ONLY:
	case AR_TAS_UNSUPPORTED:
		return SXK_TOPOLOGY;
	default:
		return SXK_QUOTA;
	}
}

static int64_t usage_at(const struct swl *r, int fr)
{
	for (size_t i = 0; i < r->nusage; i++)
		if (r->usage[i].fr == fr)
			return r->usage[i].v;
	return 0;
}

/* Keeps the n largest holders of fr (largest first, ties by key). */
static void top_add(struct sched_xholder *top, size_t *n,
		    const struct sched *s, const struct swl *r, int fr)
{
	int64_t v = usage_at(r, fr);
	size_t i;

	if (v <= 0 || !r->w)
		return;
	for (i = *n; i > 0; i--) {
		const struct sched_xholder *h = &top[i - 1];

		if (h->v >= v)
			break;
	}
	if (i >= SCHED_XHOLDERS)
		return;
	if (*n < SCHED_XHOLDERS)
		(*n)++;
	memmove(&top[i + 1], &top[i], (*n - 1 - i) * sizeof(*top));
	top[i].w = r->w;
	top[i].cq = s->cqs[r->hold_cq].name;
	top[i].v = v;
}

static int64_t ps_total(const struct swl *r, int res, int pods_res)
{
	int64_t t = 0;

	for (size_t p = 0; p < r->nps; p++) {
		const struct assign_podset *ps = &r->ps[p];

		if (res == pods_res) {
			t += ps->count * 1000;
			continue;
		}
		for (size_t k = 0; k < ps->nreq; k++)
			if (ps->req[k].res == res)
				t += ps->req[k].milli * ps->count;
	}
	return t;
}

static bool requests(const struct swl *r, int res, int pods_res)
{
	if (res == pods_res && res >= 0)
		return r->nps > 0;
	for (size_t p = 0; p < r->nps; p++)
		for (size_t k = 0; k < r->ps[p].nreq; k++)
			if (r->ps[p].req[k].res == res)
				return true;
	return false;
}

/* The quota rows: every flavor x resource of c's groups the workload
 * asks for, in spec order. */
static void explain_quota(const struct sched *s, const struct scq *c,
			  const struct swl *r, struct sched_explain *x)
{
	size_t cap = 0;
	int root = tree_root(s->t, c->node);

	for (size_t g = 0; g < c->c.ngroups; g++) {
		const struct assign_group *grp = &c->c.groups[g];

		for (size_t j = 0; j < grp->nres; j++) {
			int res = grp->res[j];

			if (!requests(r, res, s->pods_res))
				continue;
			for (size_t f = 0; f < grp->nflv; f++) {
				int fr = grp->fr[f * grp->nres + j];
				struct sched_xquota *q;
				int64_t v;

				if (x->nquota == cap)
					XGROW(x->quota, cap, x->nquota + 1);
				q = &x->quota[x->nquota++];
				memset(q, 0, sizeof(*q));
				q->flavor = s->flv[grp->flv[f]].name;
				q->resource = s->res_idx.key[res];
				q->request = ps_total(r, res, s->pods_res);
				q->nominal = tree_nominal(s->t, c->node, fr);
				v = tree_borrowing_limit(s->t, c->node, fr);
				q->has_borrowing_limit = v != TREE_UNLIMITED;
				q->borrowing_limit = q->has_borrowing_limit ? v : 0;
				v = tree_lending_limit(s->t, c->node, fr);
				q->has_lending_limit = v != TREE_UNLIMITED;
				q->lending_limit = q->has_lending_limit ? v : 0;
				q->used = tree_usage(s->t, c->node, fr);
				q->cohort_used = root >= 0 && root != c->node
							 ? tree_usage(s->t, root, fr)
							 : q->used;
				q->available = tree_available(s->t, c->node, fr);
				q->max = tree_potential_available(s->t, c->node,
								  fr);
				for (const struct swl *h = c->holders; h;
				     h = h->h_next)
					top_add(q->top, &q->ntop, s, h, fr);
				if (root < 0 || root == c->node)
					continue;
				for (size_t k = 0; k < s->ncq; k++) {
					const struct scq *o = &s->cqs[k];

					if (o == c || !o->exists ||
					    tree_root(s->t, o->node) != root)
						continue;
					for (const struct swl *h = o->holders; h;
					     h = h->h_next)
						top_add(q->ctop, &q->nctop, s, h,
							fr);
				}
			}
		}
	}
}

static void explain_podsets(const struct sched *s, const struct swl *r,
			    struct sched_explain *x)
{
	x->ps = xcalloc(r->nps ? r->nps : 1, sizeof(*x->ps));
	x->nps = r->nps;
	for (size_t p = 0; p < r->nps; p++) {
		const struct assign_podset *ps = &r->ps[p];
		struct sched_xpodset *o = &x->ps[p];
		size_t n = ps->nreq;

		o->name = ps->ps && ps->ps->name ? ps->ps->name
						 : DEFAULT_PODSET_NAME;
		o->count = ps->count;
		o->min_count = ps->min_count;
		o->res = xcalloc(n ? n : 1, sizeof(*o->res));
		o->per_pod = xcalloc(n ? n : 1, sizeof(*o->per_pod));
		o->flavor = xcalloc(n ? n : 1, sizeof(*o->flavor));
		o->nres = n;
		for (size_t k = 0; k < n; k++) {
			o->res[k] = s->res_idx.key[ps->req[k].res];
			o->per_pod[k] = ps->req[k].milli;
		}
	}
}

/* The assignment's chosen flavors and reasons (res: the assessment). */
static void explain_assignment(const struct sched *s, const struct swl *r,
			       const struct assign_result *res,
			       struct sched_explain *x)
{
	struct assign_env env;
	struct sbuf b = SBUF_INIT;

	sched_assign_env(s, &env);
	for (size_t i = 0; i < res->nps && i < x->nps; i++)
		x->ps[i].assigned_count = res->count[i];
	for (size_t i = 0; i < res->ncells && res->mode != ASSIGN_NOFIT; i++) {
		const struct assign_cell *cl = &res->cells[i];
		struct sched_xpodset *o;

		if (cl->ps < 0 || (size_t)cl->ps >= x->nps)
			continue;
		o = &x->ps[cl->ps];
		for (size_t k = 0; k < o->nres; k++)
			if (r->ps[cl->ps].req[k].res == cl->res)
				o->flavor[k] = s->flv[cl->flv].name;
	}
	x->reasons = xcalloc(res->nreasons ? res->nreasons : 1,
			     sizeof(*x->reasons));
	x->nreasons = res->nreasons;
	for (size_t i = 0; i < res->nreasons; i++) {
		const struct assign_reason *rs = &res->reasons[i];
		struct sched_xreason *o = &x->reasons[i];

		o->ps = rs->ps;
		o->kind = xkind_of(rs->kind);
		o->flavor = rs->flv >= 0 ? s->flv[rs->flv].name : "";
		o->resource = rs->res >= 0 ? s->res_idx.key[rs->res] : "";
		if (rs->kind == AR_UNUSED)
			o->needed = rs->a;
		else if (rs->kind == AR_MAX_CAPACITY) {
			o->needed = rs->a + rs->b;
			o->max = rs->c;
		}
		sbuf_reset(&b);
		assign_reason_append(&b, &env, &r->ps[rs->ps], rs);
		o->text = xstrdup(b.buf ? b.buf : "");
	}
	sbuf_release(&b);
}

/*
 * Never fits: with the smallest counts it may be admitted with, some pod
 * set is rejected by every flavor for reasons no release of quota lifts
 * (maximum capacity, taints, labels, missing flavors or resources).
 */
static bool never_fits(struct sched *s, struct scq *c, struct swl *r)
{
	struct assign_env env;
	struct assign_result res = { 0 };
	int32_t *counts = xcalloc(r->nps ? r->nps : 1, sizeof(*counts));
	bool never = false;

	sched_assign_env(s, &env); /* oracle none: quota only */
	for (size_t p = 0; p < r->nps; p++)
		counts[p] = s->o.partial_admission ? r->ps[p].min_count
						   : r->ps[p].count;
	if (assign_flavors_with_counts(&env, &c->c, r->ps, r->nps, counts,
				       &res) == ASSIGN_NOFIT) {
		for (size_t p = 0; p < r->nps && !never; p++) {
			bool any = false, lift = false;

			for (size_t k = 0; k < res.nreasons; k++) {
				if (res.reasons[k].ps != (int32_t)p)
					continue;
				any = true;
				if (res.reasons[k].kind == AR_UNUSED)
					lift = true;
			}
			never = any && !lift;
		}
	}
	assign_result_release(&res);
	free(counts);
	return never;
}

struct ending {
	struct swl *r;
	int64_t end_ms;
};

static int cmp_ending(const void *pa, const void *pb)
{
	const struct ending *a = pa, *b = pb;

	if (a->end_ms != b->end_ms)
		return a->end_ms < b->end_ms ? -1 : 1;
	return a->r->id < b->r->id ? -1 : a->r->id > b->r->id;
}

/* When holders of the cohort tree with a maximum execution time have
 * ended, in the order they end, the first moment r fits. */
static void estimate_start(struct sched *s, struct scq *c, struct swl *r,
			   int64_t now_ms, struct sched_explain *x)
{
	int root = tree_root(s->t, c->node);
	struct ending *v = NULL;
	size_t n = 0, cap = 0;
	struct assign_env env;
	struct assign_result res = { 0 };
	size_t sp;

	for (size_t k = 0; k < s->ncq; k++) {
		struct scq *o = &s->cqs[k];

		if (!o->exists || (o != c && (root < 0 ||
					      tree_root(s->t, o->node) != root)))
			continue;
		for (struct swl *h = o->holders; h; h = h->h_next) {
			const struct workload *w = h->w;
			const struct condition *adm =
				w ? conditions_find(&w->conds, "Admitted")
				  : NULL;

			if (!w || !w->has_max_exec || !adm ||
			    adm->status != COND_TRUE)
				continue;
			if (n == cap)
				XGROW(v, cap, n + 1);
			v[n].r = h;
			v[n].end_ms = adm->last_transition_ms +
				      ((int64_t)w->max_exec_seconds -
				       (w->has_accumulated
						? w->accumulated_seconds
						: 0)) * 1000;
			n++;
		}
	}
	if (!n)
		return;
	qsort(v, n, sizeof(*v), cmp_ending);
	sched_assign_env(s, &env);
	sp = tree_undo_savepoint(&s->undo);
	for (size_t i = 0; i < n; i++) {
		tree_remove_usage_undo(s->t, s->cqs[v[i].r->hold_cq].node,
				       v[i].r->usage, v[i].r->nusage, &s->undo);
		if (assign_flavors(&env, &c->c, r->ps, r->nps, &res) ==
		    ASSIGN_FIT) {
			x->est_start_ms = v[i].end_ms > now_ms ? v[i].end_ms
							       : now_ms;
			x->est_after = i + 1;
			break;
		}
	}
	tree_undo_to(s->t, &s->undo, sp);
	assign_result_release(&res);
	free(v);
}

static int32_t queue_position(const struct scq *c, const struct swl *r,
			      bool *parked)
{
	struct qitem **v;
	size_t na, n = queue_snapshot(&c->q, &v, &na);
	int32_t pos = -1;

	for (size_t i = 0; i < n; i++)
		if (v[i] == &r->qi) {
			pos = (int32_t)i;
			*parked = i >= na;
			break;
		}
	free(v);
	return pos;
}

static enum sched_xstate explain(struct sched *s, const char *ns,
				  const char *name, int64_t now_ms,
				  struct sched_explain *x, bool full)
{
	char buf[256];
	char *key = object_key_buf(buf, sizeof(buf), ns, name);
	int32_t id = sched_find_wl(s, key);
	struct swl *r;
	struct scq *c;
	struct sentry e;
	bool parked = false;

	if (key != buf)
		free(key);
	sched_explain_release(x);
	if (id < 0 || !s->wls[id] || !s->wls[id]->w)
		return x->state = SX_UNKNOWN;
	r = s->wls[id];
	x->w = r->w;
	x->lq = r->lq >= 0 ? s->lqs[r->lq].name : NULL;
	x->priority = workload_priority(r->w);
	switch (r->state) {
	case WS_HOLDING:
	case WS_ASSUMED:
		x->cq = s->cqs[r->hold_cq].name;
		return x->state = SX_HOLDING;
	case WS_NONE:
		x->state = workload_is_finished(r->w) || !r->w->active
				   ? SX_FINISHED
				   : SX_NOT_QUEUED;
		return x->state;
	case WS_PENDING:
		break;
	}
	c = &s->cqs[r->cq];
	x->cq = c->name;
	x->cq_active = c->active;
	x->cq_reason = c->reason;
	x->cq_message = c->message;
	x->strict_fifo = c->cq && c->cq->strategy == QS_STRICT_FIFO;
	x->priority = r->qi.priority;
	if (full) {
		x->position = queue_position(c, r, &parked);
		x->state = parked ? SX_PARKED : SX_PENDING;
	} else {
		x->state = queue_item_parked(&c->q, &r->qi) ? SX_PARKED
							    : SX_PENDING;
	}
	explain_podsets(s, r, x);
	if (full)
		explain_quota(s, c, r, x);
	memset(&e, 0, sizeof(e));
	e.wl = r->id;
	e.cq = (int32_t)(c - s->cqs);
	sched_assess(s, &e);
	x->assessed = true;
	x->mode = e.mode;
	x->borrowing = e.borrowing;
	x->ns_mismatch = e.why == RQ_NAMESPACE_MISMATCH;
	if (!x->ns_mismatch)
		explain_assignment(s, r, &s->res_scratch, x);
	if (e.ntg) {
		x->victims = xcalloc(e.ntg, sizeof(*x->victims));
		x->nvictims = e.ntg;
		for (size_t i = 0; i < e.ntg; i++) {
			const struct swl *v = s->wls[e.tg[i].wl];

			x->victims[i].w = v->w;
			x->victims[i].cq = s->cqs[v->hold_cq].name;
			x->victims[i].reason = sched_pvariant_reason(
				(enum sched_pvariant)e.tg[i].variant);
		}
		x->message = xasprintf(
			"%s. Pending the preemption of %zu workload(s)",
			e.message ? e.message : "", e.ntg);
		free(e.message);
	} else {
		x->message = e.message ? e.message : xstrdup("");
	}
	free(e.tg);
	free(e.asg);
	if (x->mode == ASSIGN_NOFIT && !x->ns_mismatch)
		x->never_fits = never_fits(s, c, r);
	if (full && x->mode != ASSIGN_FIT && !x->never_fits &&
	    !x->ns_mismatch && !x->nvictims)
		estimate_start(s, c, r, now_ms, x);
	return x->state;
}

enum sched_xstate sched_explain(struct sched *s, const char *ns,
				const char *name, int64_t now_ms,
				struct sched_explain *x)
{
	return explain(s, ns, name, now_ms, x, true);
}

enum sched_xstate sched_explain_fit(struct sched *s, const char *ns,
				    const char *name, int64_t now_ms,
				    struct sched_explain *x)
{
	return explain(s, ns, name, now_ms, x, false);
}
