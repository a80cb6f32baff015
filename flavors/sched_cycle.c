/*
 * sched_cycle: the scheduling cycle of flavors/sched (kueue-scheduler.md
 * §2), and the eviction and requeue checks that run before it (§5): what
 * sched_cycle decides from the state sched.c keeps. sched.c owns the
 * inputs and the requeue events; sched_status.c the status answers.
 *
 * DESIGN
 * A cycle pops, assigns (flavors/assign.h) and admits on integers only,
 * straight on the live tree: an admission is an assumption (usage added
 * at once, state WS_ASSUMED) that the controller confirms or forgets.
 * Per-round reservations for workloads that would need preemption go
 * through the tree's undo log and are reverted to the round's savepoint
 * when the round ends, which is what Kueue gets from throwing its
 * per-cycle snapshot away.
 *
 * Evictions come first: every workload flagged since the last call
 * (sched_flag_check) that holds quota and should not (inactive, its
 * ClusterQueue or LocalQueue draining) gets one DEC_EVICT; it keeps its
 * quota until its status shows the reservation gone. A pending workload
 * held by Requeued=False whose cause has ended (reactivated, its queue
 * restarted) gets one DEC_REQUEUE.
 *
 * Preemption (§2.6, §4): the assigner asks sched_preempt_oracle per
 * flavor x resource; a head whose assignment needs preemption gets its
 * victims from sched_preempt_targets. Without victims it is reported with
 * Kueue's "insufficient unused quota ... N more needed" and, unless
 * reclaimWithinCohort is Any, reserves its share for the round. With
 * victims, in entry order: skipped when a victim was already chosen this
 * round or when it would not fit once this round's victims are gone;
 * otherwise its usage is held for the round, each victim not already
 * being evicted gets a DEC_PREEMPT, and it waits ("Pending the
 * preemption of N workload(s)", requeued at once and sticky). Victims
 * keep their quota until their status shows it released, so the
 * preemptor is admitted only in a later cycle. One deliberate
 * difference from Kueue: a Fit entry processed after a preemptor in the
 * same round is checked against the live tree (victims still counted
 * and the preemptor's share held), where Kueue counts the victims as
 * gone and may admit it while they still run; cueue never lets reserved
 * quota exceed the queues' limits.
 */
#include "flavors/sched.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "flavors/sched_int.h"

#define MSG_NS_MISMATCH "Workload namespace doesn't match ClusterQueue selector"
#define MSG_NO_LONGER_FITS \
	"Workload no longer fits after processing another workload"
#define REASON_PENDING "Pending"
#define MSG_DEFERRED \
	"Workload has overlapping preemption targets with another " \
	"workload, but will fit after these preemptions complete"
#define MSG_OVERLAP \
	"Workload has overlapping preemption targets with another workload"
#define REASON_WAITING_READY "WaitingForPodsReady"
#define MSG_WAITING_READY \
	"waiting for all admitted workloads to be in PodsReady condition"

/* ---- the cycle ---- */

static struct sched_assignment *make_asg(int32_t cq,
					 const struct assign_result *r)
{
	size_t sz = sizeof(struct sched_assignment) +
		    r->ncells * sizeof(struct assign_cell) +
		    r->nusage * sizeof(struct fr_val) +
		    (r->nps + 1) * sizeof(size_t) + r->nps * sizeof(int32_t);
	struct sched_assignment *a = xmalloc(sz);
	char *p = (char *)(a + 1);
	size_t c = 0;

	a->cq = cq;
	a->nps = r->nps;
	a->ncells = r->ncells;
	a->nusage = r->nusage;
	a->cells = (struct assign_cell *)(void *)p;
	p += r->ncells * sizeof(struct assign_cell);
	a->usage = (struct fr_val *)(void *)p;
	p += r->nusage * sizeof(struct fr_val);
	a->first = (size_t *)(void *)p;
	p += (r->nps + 1) * sizeof(size_t);
	a->count = (int32_t *)(void *)p;
	if (r->ncells)
		memcpy(a->cells, r->cells, r->ncells * sizeof(*a->cells));
	if (r->nusage)
		memcpy(a->usage, r->usage, r->nusage * sizeof(*a->usage));
	for (size_t i = 0; i < r->nps; i++) {
		a->count[i] = r->count[i];
		a->first[i] = c;
		while (c < r->ncells && r->cells[c].ps == (int32_t)i)
			c++;
	}
	a->first[r->nps] = c;
	return a;
}

static int cmp_entry(const void *pa, const void *pb)
{
	return sched_entry_cmp(pa, pb);
}

static struct sched_decision *decision_slot(struct sched_decisions *out,
					    struct swl *r, uint64_t call)
{
	struct sched_decision *d;

	if (r->dec_call == call && r->dec_idx < out->n) {
		d = &out->v[r->dec_idx];
		free(d->message);
		free(d->asg);
		memset(d, 0, sizeof(*d));
		return d;
	}
	if (out->n == out->cap)
		XGROW(out->v, out->cap, out->n + 1);
	r->dec_call = call;
	r->dec_idx = out->n;
	d = &out->v[out->n++];
	memset(d, 0, sizeof(*d));
	return d;
}

/* 64-bit FNV-1a of a message; never 0 (0 = nothing reported). */
static uint64_t msg_hash(const char *m)
{
	uint64_t h = 14695981039346656037ULL;

	for (; *m; m++) {
		h ^= (unsigned char)*m;
		h *= 1099511628211ULL;
	}
	return h ? h : 1;
}

/* Emits (or replaces this call's) pending decision; takes msg. */
static void emit_pending(struct sched *s, struct sched_decisions *out,
			 struct swl *r, const struct scq *c,
			 const char *reason, char *msg)
{
	struct sched_decision *d;

	/* Nothing changed since the same report: a StrictFIFO head popped
	 * again, say. Not repeated (see the file comment). */
	uint64_t h = msg_hash(msg);

	if (r->dec_call != s->calls && r->last_state == s->state &&
	    r->last_reason == reason && r->last_hash == h) {
		free(msg);
		return;
	}
	r->last_hash = h;
	r->last_reason = reason;
	r->last_state = s->state;
	d = decision_slot(out, r, s->calls);
	d->kind = DEC_PENDING;
	d->wl = r->w;
	d->cq = c->name;
	d->reason = reason;
	d->message = msg;
}

/* Kueue's resourcesToReserve for a head that would need preemption but
 * has no candidates: hold what it could get so lower-priority work of
 * the cohort cannot take it this round. */
static void reserve(struct sched *s, const struct scq *c,
		    const struct sentry *e)
{
	const struct sched_assignment *a = e->asg;

	for (size_t i = 0; i < a->nusage; i++) {
		int fr = a->usage[i].fr;
		int64_t v = a->usage[i].v;
		int64_t nom = tree_nominal(s->t, c->node, fr);
		int64_t use = tree_usage(s->t, c->node, fr);
		int64_t r;
		struct fr_val fv;

		if (e->borrowing > 0) {
			int64_t bl = tree_borrowing_limit(s->t, c->node, fr);

			r = bl == TREE_UNLIMITED ? v
			    : nom + bl - use < v  ? nom + bl - use
						  : v;
		} else {
			r = nom - use < v ? nom - use : v;
		}
		if (r <= 0)
			continue;
		fv = (struct fr_val){ fr, r };
		tree_add_usage_undo(s->t, c->node, &fv, 1, &s->undo);
	}
}

/* An admit: usage into the live tree now (assume). Takes e->asg. */
static void admit(struct sched *s, struct sched_decisions *out,
		  struct sentry *e)
{
	struct swl *r = s->wls[e->wl];
	struct scq *c = &s->cqs[e->cq];
	struct sched_decision *d;

	sched_account(s, r, -1);
	queue_remove(&c->q, &r->qi);
	sched_set_requeue_at(s, r, 0);
	r->state = WS_ASSUMED;
	r->hold_cq = e->cq;
	r->admitted = false;
	r->qr_ms = 0; /* "now" until its QuotaReserved is seen */
	free(r->usage);
	r->nusage = e->asg->nusage;
	r->usage = xmalloc((r->nusage ? r->nusage : 1) * sizeof(*r->usage));
	memcpy(r->usage, e->asg->usage, r->nusage * sizeof(*r->usage));
	sched_tree_apply(s, r, true);
	sched_account(s, r, 1);
	sched_afs_push(s, r);
	r->last_hash = 0;
	r->last_reason = NULL;
	d = decision_slot(out, r, s->calls);
	d->kind = DEC_ADMIT;
	d->wl = r->w;
	d->cq = c->name;
	d->borrowing = e->borrowing;
	d->asg = e->asg;
	e->asg = NULL;
}

/* FNV-1a over an assignment's counts and cells: which one it is. */
static uint64_t asg_sig(const struct assign_result *res)
{
	uint64_t h = 14695981039346656037ULL;
	const unsigned char *p;

	for (size_t i = 0; i < res->nps; i++) {
		p = (const unsigned char *)&res->count[i];
		for (size_t k = 0; k < sizeof(res->count[i]); k++)
			h = (h ^ p[k]) * 1099511628211ULL;
	}
	for (size_t i = 0; i < res->ncells; i++) {
		const struct assign_cell *c = &res->cells[i];
		int64_t v[5] = { c->ps, c->res, c->flv, c->fr, c->v };

		p = (const unsigned char *)v;
		for (size_t k = 0; k < sizeof(v); k++)
			h = (h ^ p[k]) * 1099511628211ULL;
	}
	return h ^ res->ncells;
}

/* The flavor assignment and victims of e's workload on the tree as it
 * is (nominate, and the overlap recomputation); sets e's verdict. */
static void assign_entry(struct sched *s, struct assign_env *env,
			 struct sentry *e)
{
	struct swl *r = s->wls[e->wl];
	struct scq *c = &s->cqs[e->cq];
	struct assign_result *res = &s->res_scratch;

	env->preemptor = r->id;
	s->nom_cq = e->cq;
	s->nom_wl = e->wl;
	s->pskipped = false;
	FREE_AND_NULL(s->acc_tg);
	s->acc_ntg = 0;
	e->mode = assign_flavors(env, &c->c, r->ps, r->nps, res);
	e->borrowing = res->borrowing;
	if (e->mode == ASSIGN_PREEMPT && s->acc_tg &&
	    s->acc_sig == asg_sig(res)) {
		/* accept_preempt answered for this very assignment */
		e->tg = s->acc_tg;
		e->ntg = s->acc_ntg;
		s->acc_tg = NULL;
		s->acc_ntg = 0;
	} else if (e->mode == ASSIGN_PREEMPT) {
		e->ntg = sched_preempt_targets(s, e->cq, r, res, &e->tg);
	}
	if (e->mode != ASSIGN_NOFIT)
		e->asg = make_asg(e->cq, res);
	if (e->mode != ASSIGN_FIT) {
		e->why = e->mode == ASSIGN_NOFIT ? RQ_NO_FIT
					      : RQ_PREEMPTION_NO_CANDIDATES;
		/* A candidate was left out because its admission is not
		 * written yet: decide again next call, when it counts
		 * (it may well be the victim Kueue would choose), and do
		 * not park meanwhile. */
		if (e->mode == ASSIGN_PREEMPT && s->pskipped) {
			FREE_AND_NULL(e->tg);
			e->ntg = 0;
			e->why = RQ_FAILED_AFTER_NOMINATION;
		}
		e->reason = REASON_PENDING;
		e->message = assign_message(env, r->ps, res);
	}
}

/* Nominate (§2.2) one popped head into entry e. */
static void nominate(struct sched *s, struct assign_env *env,
		     struct sentry *e)
{
	struct swl *r = s->wls[e->wl];
	struct scq *c = &s->cqs[e->cq];

	e->priority = r->qi.priority;
	e->ts = r->qi.ts_ms;
	e->uid = r->qi.uid;
	e->uid_pre = queue_uid_prefix(e->uid);
	e->borrowing = 0;
	e->asg = NULL;
	e->message = NULL;
	e->reason = NULL;
	if (!sched_ns_ok(s, r, c)) {
		e->mode = ASSIGN_NOFIT;
		e->why = RQ_NAMESPACE_MISMATCH;
		e->reason = REASON_PENDING;
		e->message = xstrdup(MSG_NS_MISMATCH);
		return;
	}
	assign_entry(s, env, e);
}

/*
 * §2.6, gate RecomputeAssignmentUponPreemptionTargetsOverlap (Beta, on):
 * e's victims overlap this round's, so its assignment is computed again,
 * pinned to the flavors it was nominated with, as if this round's victims
 * were gone (and so not candidates). Returns true when it would then fit
 * (Kueue's DeferredFit); otherwise e holds the new assignment, victims and
 * verdict. The tree is as it was on return.
 */
static bool recompute_overlap(struct sched *s, struct assign_env *env,
			      struct sentry *e)
{
	size_t sp = tree_undo_savepoint(&s->undo);
	struct sched_assignment *old = e->asg;

	for (size_t i = 0; i < s->nrvict; i++) {
		const struct swl *v = s->wls[s->rvict[i]];

		tree_remove_usage_undo(s->t, s->cqs[v->hold_cq].node, v->usage,
				       v->nusage, &s->undo);
	}
	FREE_AND_NULL(e->tg);
	FREE_AND_NULL(e->message);
	e->ntg = 0;
	e->asg = NULL;
	e->reason = NULL;
	env->pin = old->cells;
	env->npin = old->ncells;
	s->excl_round = true;
	assign_entry(s, env, e);
	s->excl_round = false;
	env->pin = NULL;
	env->npin = 0;
	free(old);
	tree_undo_to(s->t, &s->undo, sp);
	return e->mode == ASSIGN_FIT;
}

/* The assigner's accept: a Preempt assignment with victims (§2.2). */
static bool accept_preempt(void *ctx, const struct assign_result *res)
{
	struct sched *s = ctx;
	struct sched_target *tg;
	size_t n = sched_preempt_targets(s, s->nom_cq, s->wls[s->nom_wl], res,
					 &tg);

	free(s->acc_tg);
	s->acc_tg = tg;
	s->acc_ntg = n;
	s->acc_sig = asg_sig(res);
	return n > 0;
}

void sched_assess(struct sched *s, struct sentry *e)
{
	struct assign_env env;
	uint64_t calls = s->calls;

	sched_assign_env(s, &env);
	env.oracle = sched_preempt_oracle;
	env.oracle_ctx = s;
	env.accept = accept_preempt;
	env.accept_ctx = s;
	/* As the next call would see it: no round's victims yet, and what
	 * the last call assumed counts as a candidate. */
	s->nrvict = 0;
	s->calls++;
	nominate(s, &env, e);
	s->calls = calls;
	FREE_AND_NULL(s->acc_tg);
	s->acc_ntg = 0;
}

/* Whether a victim of e was chosen by an earlier entry of this round. */
static bool targets_overlap(const struct sched *s, const struct sentry *e)
{
	for (size_t i = 0; i < e->ntg; i++)
		if (s->wls[e->tg[i].wl]->victim_round == s->cycle)
			return true;
	return false;
}

/* Kueue's fits() for a preemptor: e's usage fits once this round's
 * victims and its own are gone. The tree is as it was on return. */
static bool fits_after_victims(struct sched *s, const struct scq *c,
			       const struct sentry *e)
{
	size_t sp = tree_undo_savepoint(&s->undo);
	bool ok;

	for (size_t i = 0; i < s->nrvict + e->ntg; i++) {
		const struct swl *v =
			s->wls[i < s->nrvict ? s->rvict[i]
					     : e->tg[i - s->nrvict].wl];

		tree_remove_usage_undo(s->t, s->cqs[v->hold_cq].node,
				       v->usage, v->nusage, &s->undo);
	}
	ok = tree_fits(s->t, c->node, e->asg->usage, e->asg->nusage);
	tree_undo_to(s->t, &s->undo, sp);
	return ok;
}

/*
 * Issues e's preemptions (§2.6, §4.7): its victims join the round's,
 * its usage is held against later entries of the round, and every
 * victim whose eviction is not under way yet gets a DEC_PREEMPT. The
 * preemptor's pending message says how many it waits for.
 */
static void issue_preemptions(struct sched *s, struct sched_decisions *out,
			      struct sentry *e)
{
	struct swl *p = s->wls[e->wl];
	struct scq *c = &s->cqs[e->cq];
	char *msg;

	tree_add_usage_undo(s->t, c->node, e->asg->usage, e->asg->nusage,
			    &s->undo);
	for (size_t i = 0; i < e->ntg; i++) {
		struct swl *v = s->wls[e->tg[i].wl];
		struct sched_decision *d;

		v->victim_round = s->cycle;
		if (s->nrvict == s->caprvict)
			XGROW(s->rvict, s->caprvict, s->nrvict + 1);
		s->rvict[s->nrvict++] = v->id;
		if (v->evicted || v->preempting ||
		    (v->chk_sent && v->state == WS_HOLDING))
			continue;
		v->preempting = true;
		d = decision_slot(out, v, s->calls);
		d->kind = DEC_PREEMPT;
		d->wl = v->w;
		d->cq = s->cqs[v->hold_cq].name;
		d->reason = "Preempted";
		d->preempt_reason = sched_pvariant_reason(
			(enum sched_pvariant)e->tg[i].variant);
		d->message = sched_preempt_message(
			s, p, e->cq, v, (enum sched_pvariant)e->tg[i].variant);
		d->preemptor = p->w;
		d->preemptor_cq = c->name;
	}
	msg = xasprintf("%s. Pending the preemption of %zu workload(s)",
			e->message ? e->message : "", e->ntg);
	free(e->message);
	e->message = msg;
	e->why = RQ_PENDING_PREEMPTION;
	e->reason = REASON_PENDING;
}

struct fresh_ctx {
	struct sched *s;
	struct sched_decisions *out;
	const struct scq *c;
	const struct sentry *e;
};

/* A member of a class that just parked, never evaluated: it gets the
 * verdict its equivalent representative just got (same reason and
 * message: equivalent workloads get the same one at the same state). */
static void report_fresh(void *ctx, struct qitem *it)
{
	struct fresh_ctx *f = ctx;

	emit_pending(f->s, f->out, SWL_OF(it), f->c, f->e->reason,
		     xstrdup(f->e->message));
}

/* The entries not processed yet go back to their heaps, with no
 * verdict (a blocked loop never reached them). */
static void unprocessed(struct sched *s, int64_t now)
{
	for (size_t j = 0; j < s->nent; j++) {
		struct sentry *e = &s->ent[j];
		struct swl *r = s->wls[e->wl];

		if (e->done)
			continue;
		e->done = true;
		queue_requeue(&s->cqs[e->cq].q, &r->qi,
			      RQ_FAILED_AFTER_NOMINATION, now);
		sched_dirty_cq(s, e->cq);
		FREE_AND_NULL(e->message);
		FREE_AND_NULL(e->asg);
		FREE_AND_NULL(e->tg);
		e->ntg = 0;
	}
}

bool sched_ready_blocked(const struct sched *s)
{
	const struct swl *r;

	if (!s->o.block_admission || !s->nnot_ready || s->ready_wait < 0)
		return false;
	r = s->wls[s->ready_wait];
	return r && r->key && r->state == WS_PENDING;
}

/* Processes one entry of a round (§2.6): admits it, issues its
 * preemptions, or gives it back with its verdict. Returns 1 when
 * admitted; sets *blocked when blockAdmission stops the round. */
static size_t process(struct sched *s, struct sched_decisions *out,
		      struct assign_env *env, struct sentry *e, int64_t now,
		      size_t *nparked, bool *blocked)
{
	struct scq *c = &s->cqs[e->cq];
	struct swl *r = s->wls[e->wl];

	if (e->mode == ASSIGN_PREEMPT && e->ntg &&
	    targets_overlap(s, e) && recompute_overlap(s, env, e)) {
		/* DeferredFit: it fits once this round's victims
		 * are gone; hold its usage and wait for them. */
		tree_add_usage_undo(s->t, c->node, e->asg->usage,
				    e->asg->nusage, &s->undo);
		e->why = RQ_PENDING_PREEMPTION;
		e->reason = REASON_PENDING;
		e->message = xstrdup(MSG_DEFERRED);
	} else if (e->mode == ASSIGN_PREEMPT && !e->ntg) {
		if (c->cq->reclaim != RWC_ANY)
			reserve(s, c, e);
	} else if (e->mode == ASSIGN_PREEMPT &&
		   targets_overlap(s, e)) {
		e->why = RQ_FAILED_AFTER_NOMINATION;
		e->reason = REASON_PENDING;
		free(e->message);
		e->message = xstrdup(MSG_OVERLAP);
	} else if (e->mode == ASSIGN_PREEMPT &&
		   !fits_after_victims(s, c, e)) {
		e->why = RQ_FAILED_AFTER_NOMINATION;
		e->reason = REASON_PENDING;
		free(e->message);
		e->message = xstrdup(MSG_NO_LONGER_FITS);
	} else if (e->mode == ASSIGN_PREEMPT) {
		issue_preemptions(s, out, e);
	} else if (e->mode == ASSIGN_FIT &&
		   !tree_fits(s->t, c->node, e->asg->usage,
			      e->asg->nusage)) {
		e->why = RQ_FAILED_AFTER_NOMINATION;
		e->reason = REASON_PENDING;
		e->message = xstrdup(MSG_NO_LONGER_FITS);
	} else if (e->mode == ASSIGN_FIT && s->o.block_admission &&
		   s->nnot_ready) {
		/* blockAdmission (§6): it would be admitted, but an
		 * admitted workload is not PodsReady yet. It waits at
		 * the head and the loop stops here. */
		e->why = RQ_FAILED_AFTER_NOMINATION;
		e->reason = REASON_WAITING_READY;
		free(e->message);
		e->message = xstrdup(MSG_WAITING_READY);
		s->ready_wait = r->id;
		*blocked = true;
	} else if (e->mode == ASSIGN_FIT) {
		e->done = true;
		admit(s, out, e);
		return 1;
	}
	/* 5. Not admitted: back to the queue, report once. */
	queue_requeue(&c->q, &r->qi, e->why, now);
	if (queue_item_parked(&c->q, &r->qi)) {
		struct fresh_ctx f = { s, out, c, e };

		(*nparked)++;
		/* Its class parked with it: members never
		 * evaluated get its verdict, once. */
		queue_take_fresh(&c->q, &r->qi, report_fresh, &f);
	}
	sched_dirty_cq(s, e->cq);
	if (r->lq >= 0)
		sched_dirty_lq(s, r->lq);
	emit_pending(s, out, r, c, e->reason, e->message);
	e->message = NULL;
	FREE_AND_NULL(e->asg);
	FREE_AND_NULL(e->tg);
	e->ntg = 0;
	e->done = true;
	return 0;
}

/* One Kueue cycle (§2.1): returns admissions; *npopped the heads,
 * *nparked those that went to the parked set (BestEffortFIFO NoFit). */
static size_t round_run(struct sched *s, struct sched_decisions *out,
			int64_t now, size_t *npopped, size_t *nparked)
{
	struct assign_env env;
	size_t nadm = 0;
	bool blocked = false;
	/* the round's reservations are undone to here at its end */
	size_t sp = tree_undo_savepoint(&s->undo);

	sched_assign_env(s, &env);
	env.oracle = sched_preempt_oracle;
	env.oracle_ctx = s;
	env.accept = accept_preempt;
	env.accept_ctx = s;
	s->cycle++;
	s->nent = 0;
	s->nrvict = 0;
	sched_afs_refresh(s);
	/* 1. Heads: one per active ClusterQueue. */
	for (size_t i = 0; i < s->ncq; i++) {
		struct scq *c = &s->cqs[i];
		struct qitem *it;
		struct sentry *e;

		if (!c->active || !queue_len_active(&c->q))
			continue;
		it = queue_pop(&c->q, s->cycle);
		if (!it)
			continue;
		if (s->nent == s->capent)
			XGROW(s->ent, s->capent, s->nent + 1);
		e = &s->ent[s->nent++];
		memset(e, 0, sizeof(*e));
		e->wl = SWL_OF(it)->id;
		e->cq = (int32_t)i;
		/* 2. Nominate: namespace, flavor assignment. */
		nominate(s, &env, e);
	}
	*npopped = s->nent;
	if (!s->nent)
		return 0;
	/* 3. Entry order (§2.5): classical, or the fair tournament. 4. Each
	 *    entry with in-cycle reservation (§2.6). */
	if (s->o.fair_sharing) {
		int32_t i;

		sched_fair_begin(s);
		while (!blocked && (i = sched_fair_next(s)) >= 0) {
			nadm += process(s, out, &env, &s->ent[i], now,
					nparked, &blocked);
			sched_fair_done(s, i);
		}
	} else {
		qsort(s->ent, s->nent, sizeof(*s->ent), cmp_entry);
		for (size_t i = 0; i < s->nent && !blocked; i++)
			nadm += process(s, out, &env, &s->ent[i], now,
					nparked, &blocked);
	}
	if (blocked)
		unprocessed(s, now);
	s->nent = 0;
	/* 6. Drop this round's reservations (Kueue drops its snapshot). */
	tree_undo_to(s->t, &s->undo, sp);
	return nadm;
}

/* Emits an evict or requeue decision for r; takes msg. */
static void emit_check(struct sched *s, struct sched_decisions *out,
		       struct swl *r, enum sched_dec_kind kind, int32_t cq,
		       const char *reason, const char *msg)
{
	struct sched_decision *d = decision_slot(out, r, s->calls);

	d->kind = kind;
	d->wl = r->w;
	d->cq = cq >= 0 ? s->cqs[cq].name : NULL;
	d->reason = reason;
	d->message = xstrdup(msg);
	r->chk_sent = true;
}

/* Whether a Requeued=False (Evicted) reason is a deactivation's. */
static bool is_deactivation(const char *reason)
{
	return reason && (!strcmp(reason, "Deactivated") ||
			  !strncmp(reason, "DeactivatedDueTo", 16) ||
			  !strcmp(reason, "InactiveWorkload"));
}

/* DeactivatedDueTo<Cause> for the DeactivationTarget reasons Kueue
 * sets (static reasons, as decisions carry). */
static const char *const deact_reasons[][2] = {
	{ "RequeuingLimitExceeded",
	  "DeactivatedDueToRequeuingLimitExceeded" },
	{ "MaximumExecutionTimeExceeded",
	  "DeactivatedDueToMaximumExecutionTimeExceeded" },
	{ "AdmissionCheck", "DeactivatedDueToAdmissionCheck" },
};

/* The eviction a holder is due (§5.5), or NULL. *msg is static, or
 * built in buf (size n). */
static const char *evict_due(const struct sched *s, const struct swl *r,
			     const char **msg, char *buf, size_t n)
{
	const struct scq *c = &s->cqs[r->hold_cq];

	if (!r->w->active) {
		const struct condition *dt = conditions_find(
			&r->w->conds, "DeactivationTarget");

		*msg = "The workload is deactivated";
		if (!dt || dt->status != COND_TRUE || !dt->reason)
			return "Deactivated";
		/* deactivated by Kueue: the cause is in the reason */
		snprintf(buf, n, "The workload is deactivated due to %s",
			 dt->message ? dt->message : "");
		*msg = buf;
		for (size_t i = 0; i < sizeof(deact_reasons) /
					       sizeof(deact_reasons[0]);
		     i++)
			if (!strcmp(dt->reason, deact_reasons[i][0]))
				return deact_reasons[i][1];
		return "Deactivated";
	}
	if (c->exists && c->stop == STOP_HOLD_AND_DRAIN) {
		*msg = "The ClusterQueue is stopped";
		return "ClusterQueueStopped";
	}
	if (r->lq >= 0 && s->lqs[r->lq].stop == STOP_HOLD_AND_DRAIN) {
		*msg = "The LocalQueue is stopped";
		return "LocalQueueStopped";
	}
	return NULL;
}

/* The Requeued=True a pending workload held by Requeued=False is due
 * once the cause of its eviction ended (§5.4), or NULL. */
static const char *requeue_due_for(const struct sched *s,
				   const struct swl *r, const char **msg)
{
	const struct condition *rq = conditions_find(&r->w->conds,
						     "Requeued");

	if (!rq || rq->status != COND_FALSE || !rq->reason)
		return NULL;
	if (is_deactivation(rq->reason) && r->w->active) {
		*msg = "The workload was reactivated";
		return "Reactivated";
	}
	if (!strcmp(rq->reason, "ClusterQueueStopped") &&
	    s->cqs[r->cq].exists && s->cqs[r->cq].stop == STOP_NONE) {
		*msg = "The ClusterQueue was restarted after being stopped";
		return "ClusterQueueRestarted";
	}
	if (!strcmp(rq->reason, "LocalQueueStopped") &&
	    (r->lq < 0 || s->lqs[r->lq].stop == STOP_NONE)) {
		*msg = "The LocalQueue was restarted after being stopped";
		return "LocalQueueRestarted";
	}
	return NULL;
}

/* Step 0: the workloads flagged since the last call, checked once; the
 * records of those removed meanwhile are freed here. */
static void check_flagged(struct sched *s, struct sched_decisions *out)
{
	for (size_t i = 0; i < s->nchk; i++) {
		struct swl *r = s->wls[s->chk[i]];
		const char *reason, *msg = NULL;
		char buf[512];

		r->flagged = false;
		if (!r->key) {
			/* Removed since it was flagged: this was the last
			 * reference to it (sched_int.h). */
			sched_wl_reap(s, r);
			continue;
		}
		if (!r->w || r->chk_sent)
			continue;
		if (r->state == WS_HOLDING && !r->evicted && !r->preempting) {
			reason = evict_due(s, r, &msg, buf, sizeof(buf));
			if (reason)
				emit_check(s, out, r, DEC_EVICT, r->hold_cq,
					   reason, msg);
		} else if (r->state == WS_PENDING) {
			reason = requeue_due_for(s, r, &msg);
			if (reason)
				emit_check(s, out, r, DEC_REQUEUE, r->cq,
					   reason, msg);
		} else if (r->state == WS_NONE && r->w->active) {
			/* Reactivated but not queued (no ClusterQueue):
			 * the requeue still lets it in once one exists. */
			const struct condition *rq = conditions_find(
				&r->w->conds, "Requeued");

			if (rq && rq->status == COND_FALSE &&
			    is_deactivation(rq->reason) &&
			    !workload_is_finished(r->w))
				emit_check(s, out, r, DEC_REQUEUE, -1,
					   "Reactivated",
					   "The workload was reactivated");
		}
	}
	s->nchk = 0;
}

void sched_drop_checks(struct sched *s)
{
	for (size_t i = 0; i < s->nchk; i++) {
		struct swl *r = s->wls[s->chk[i]];

		r->flagged = false;
		if (!r->key)
			sched_wl_reap(s, r);
	}
	s->nchk = 0;
}

size_t sched_cycle(struct sched *s, int64_t now_ms,
		   struct sched_decisions *out)
{
	size_t total = 0;

	s->calls++;
	sched_tick(s, now_ms);
	check_flagged(s, out);
	if (!s->nnot_ready)
		s->ready_wait = -1;
	for (unsigned round = 0;
	     !s->o.max_rounds || round < s->o.max_rounds; round++) {
		size_t npopped = 0, nparked = 0, n;

		if (sched_ready_blocked(s))
			break;

		/* Go on while a round admits or parks a head: a parked head
		 * uncovers the next one (BestEffortFIFO), so one call tries
		 * every pending workload once. Each workload parks at most
		 * once per call, so this ends; a StrictFIFO head that stays
		 * blocked neither admits nor parks, and stops it. */
		n = round_run(s, out, now_ms, &npopped, &nparked);
		total += n;
		if (!npopped || (!n && !nparked))
			break;
	}
	return total;
}

void sched_decision_admission(const struct sched *s,
			      const struct sched_decision *d,
			      struct admission *out)
{
	const struct sched_assignment *a = d->asg;
	const struct workload *w = d->wl;

	admission_release(out);
	if (!a)
		return;
	out->cluster_queue = xstrdup(s->cqs[a->cq].name);
	out->npsa = a->nps;
	out->psa = xcalloc(a->nps ? a->nps : 1, sizeof(*out->psa));
	for (size_t i = 0; i < a->nps; i++) {
		struct pod_set_assignment *p = &out->psa[i];
		const char *name = i < w->npod_sets && w->pod_sets[i].name
					   ? w->pod_sets[i].name
					   : DEFAULT_PODSET_NAME;

		p->name = xstrdup(name);
		smap_init(&p->flavors);
		reslist_init(&p->usage);
		for (size_t k = a->first[i]; k < a->first[i + 1]; k++) {
			const struct assign_cell *c = &a->cells[k];
			const char *rn = s->res_idx.key[c->res];

			smap_set(&p->flavors, rn, s->flv[c->flv].name);
			reslist_set(&p->usage, rn, c->v);
		}
		p->has_count = true;
		p->count = a->count[i];
	}
}

void sched_decisions_clear(struct sched_decisions *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].message);
		free(d->v[i].asg);
	}
	d->n = 0;
}

void sched_decisions_release(struct sched_decisions *d)
{
	sched_decisions_clear(d);
	free(d->v);
	d->v = NULL;
	d->cap = 0;
}

