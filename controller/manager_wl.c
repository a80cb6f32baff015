/*
 * manager_wl: the manager's Workload cache (manager_int.h): each version
 * decoded, trimmed and resolved to its LocalQueue and ClusterQueue, a
 * cycle's decisions turned into the writes each workload needs, and
 * those writes.
 *
 * Workload writes. Each workload entry has at most one write in flight.
 * Admit decisions copy their assignment into the entry (admit_pending)
 * and wait in the admit queue; QuotaReserved=False writes wait in the
 * pending queue; at most max_wl_writes are submitted at once (admits
 * first), so a burst of decisions never piles serialised bodies into the
 * client. Bodies are built at submission from the cached object.
 *
 * It never runs a cycle nor writes queue status (manager.c does). JSON:
 * as manager.c (informer objects, merge-patch bodies).
 */
#include "controller/manager_int.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "controller/events.h"
#include "controller/kube.h"
#include "controller/kueue_metrics.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "flavors/sched.h"
#include "model/codec.h"
#include "model/validate.h"

#define COND_QUOTA_RESERVED "QuotaReserved"
#define COND_ADMITTED "Admitted"
#define REASON_INADMISSIBLE "Inadmissible"
#define REASON_PENDING "Pending"
#define DEFER_TICK_MS 1000

/* ------------------------------------------------------------------ */
/* Workload queues */

static void wl_dequeue(struct manager *m, struct wl_entry *e)
{
	(void)m;
	dlist_remove(&e->q_link);
	e->inq = WQ_NONE;
}

static void wl_enqueue(struct manager *m, struct wl_entry *e, enum wl_queue q)
{
	if (e->inq == q)
		return;
	wl_dequeue(m, e);
	dlist_insert_before(q == WQ_ADMIT ? &m->admitq : &m->pendq,
			    &e->q_link);
	e->inq = q;
}

/* ------------------------------------------------------------------ */
/* Workload state */

/* Pending in Kueue's sense: could be queued (no quota, not finished,
 * active); only such workloads get QuotaReserved=False written. */
static bool wl_is_pending(const struct workload *w)
{
	return w->active && !workload_is_finished(w) &&
	       !workload_has_quota_reservation(w);
}

static void want_set(struct wl_entry *e, const char *reason, const char *msg)
{
	if (text_same(e->want_reason, reason) && text_same(e->want_msg, msg))
		return;
	if (!e->want_reason)
		e->want_since_ms = loop_now_ms(e->m->l);
	set_str(&e->want_reason, reason);
	set_str(&e->want_msg, msg);
}

static void want_clear(struct wl_entry *e)
{
	FREE_AND_NULL(e->want_reason);
	FREE_AND_NULL(e->want_msg);
}

/*
 * Whether the object lacks the QuotaReserved=False condition wanted, and
 * how soon it gets it (the rule is in controller/README.md, "Pending
 * conditions"): a new condition, a status or a reason change at once; a
 * change of the scheduler's message text alone (reason Pending) at once
 * when the workload had at most one pending write in the last
 * pending_msg_ms (so a message that changes once, the common case in a
 * quiet cluster, is exact at once), otherwise when that window has
 * passed, the latest text then (so the object ends up exact: at most two
 * writes per window under churn); Inadmissible texts at once.
 */
enum pend_need {
	PEND_NONE,
	PEND_NOW,
	PEND_LATER,
};

static enum pend_need wl_pending_need(const struct manager *m,
				      const struct wl_entry *e)
{
	const struct condition *c;

	if (!e->want_reason || !wl_is_pending(e->w))
		return PEND_NONE;
	if (e->sent_rv && text_same(e->sent_rv, e->w->meta.resource_version))
		return PEND_NONE;
	c = conditions_find(&e->w->conds, COND_QUOTA_RESERVED);
	/* A workload that never had a QuotaReserved condition and does not
	 * fit yet gets its first one after pending_grace_ms: under a
	 * stream most are admitted sooner, and never written pending. */
	if (!c && m->o.pending_grace_ms > 0 &&
	    text_same(e->want_reason, REASON_PENDING) &&
	    loop_now_ms(m->l) - e->want_since_ms < m->o.pending_grace_ms)
		return PEND_LATER;
	if (!c || c->status != COND_FALSE ||
	    !text_same(c->reason, e->want_reason))
		return PEND_NOW;
	if (text_same(c->message, e->want_msg))
		return PEND_NONE;
	/* Inadmissible texts name a missing or stopped queue: a new one
	 * is a new state, and rare. */
	if (!e->pend_prev_ms || text_same(e->want_reason, REASON_INADMISSIBLE) ||
	    loop_now_ms(m->l) - e->pend_prev_ms >= m->o.pending_msg_ms)
		return PEND_NOW;
	return PEND_LATER;
}

static void defer_add(struct manager *m, struct wl_entry *e)
{
	if (e->deferred)
		return;
	e->deferred = true;
	dlist_insert_after(&m->deferq, &e->d_link);
	if (!m->ndeferred++)
		loop_timer_arm(m->l, &m->defer, DEFER_TICK_MS);
}

static void defer_del(struct manager *m, struct wl_entry *e)
{
	if (!e->deferred)
		return;
	dlist_remove(&e->d_link);
	e->deferred = false;
	if (!--m->ndeferred)
		loop_timer_cancel(m->l, &m->defer);
}

/* Queues whatever write the entry needs now (none while one is in
 * flight: its end calls this again). */
static void wl_sync(struct manager *m, struct wl_entry *e)
{
	if (e->call)
		return;
	if (e->admit_pending || e->chk_pending || e->dl_pending) {
		wl_enqueue(m, e, WQ_ADMIT);
		return;
	}
	if (e->want_reason && !wl_is_pending(e->w))
		want_clear(e);
	switch (wl_pending_need(m, e)) {
	case PEND_NOW:
		defer_del(m, e);
		wl_enqueue(m, e, WQ_PENDING);
		break;
	case PEND_LATER:
		if (e->inq == WQ_PENDING)
			wl_dequeue(m, e);
		defer_add(m, e);
		break;
	case PEND_NONE:
		defer_del(m, e);
		if (e->inq == WQ_PENDING)
			wl_dequeue(m, e);
		break;
	}
}

/* The deferred pending writes whose time came go to the pending queue. */
void manager_wl_on_defer(void *ud, int64_t now_ms)
{
	struct manager *m = ud;
	struct dlist *pos, *tmp;

	(void)now_ms;
	DLIST_FOREACH_SAFE(pos, tmp, &m->deferq) {
		struct wl_entry *e = DLIST_ENTRY(pos, struct wl_entry, d_link);

		if (wl_pending_need(m, e) != PEND_LATER)
			wl_sync(m, e);
	}
	if (m->ndeferred)
		loop_timer_arm(m->l, &m->defer, DEFER_TICK_MS);
	manager_wl_pump(m);
}

/*
 * Resolves the workload's LocalQueue and ClusterQueue, tells sched when
 * the answer (or the object, force) changed, and sets the Inadmissible
 * condition Kueue's workload controller writes for a missing, stopped or
 * inactive link (kueue-api.md §3.6, §7.4).
 */
void manager_wl_resolve(struct manager *m, struct wl_entry *e, bool force)
{
	const struct workload *w = e->w;
	struct lq_entry *lqe = e->lqe, *res_lqe = NULL;
	struct cq_entry *cqe = NULL;
	char *msg = NULL, *dra_msg = NULL;
	bool dra_changed = false;

	if (!m->fed)
		return;
	/* its devices first: a workload whose claims cannot be counted is
	 * not queued (Kueue's workload controller: handleDRA) */
	if (w->queue_name && *w->queue_name && wl_is_pending(w)) {
		dra_msg = manager_dra_fill(m, e->w, &dra_changed);
		if (dra_changed)
			sched_wl_podsets_changed(m->s, e->key);
	}
	if (!w->queue_name || !*w->queue_name) {
		/* not ours to queue */
	} else if (!lqe || !lqe->lq) {
		msg = xasprintf("LocalQueue %s doesn't exist", w->queue_name);
	} else {
		res_lqe = lqe;
		if (lqe->lq->stop != STOP_NONE)
			msg = xasprintf("LocalQueue %s is inactive",
					w->queue_name);
		else if (!lqe->cqe || !lqe->cqe->cq)
			msg = xasprintf("ClusterQueue %s doesn't exist",
					lqe->lq->cluster_queue);
		else if (!lqe->cqe->active)
			msg = xasprintf("ClusterQueue %s is inactive",
					lqe->cqe->name);
		/* An existing ClusterQueue, active or not, holds the
		 * workload in its queue (sched takes no head from an
		 * inactive one), as Kueue's queue manager does: it counts
		 * as pending there, and is considered once the queue is
		 * active again. */
		if (lqe->lq->stop == STOP_NONE && lqe->cqe && lqe->cqe->cq)
			cqe = lqe->cqe;
	}
	if (dra_msg)
		cqe = NULL;
	if (force || dra_changed || !e->in_sched || cqe != e->res_cqe ||
	    res_lqe != e->res_lqe) {
		sched_wl_set(m->s, w, cqe ? cqe->name : NULL,
			     res_lqe ? res_lqe->key : NULL);
		e->in_sched = true;
		e->res_cqe = cqe;
		e->res_lqe = res_lqe;
		m->changed = true;
	}
	if (msg && wl_is_pending(w))
		want_set(e, REASON_INADMISSIBLE, msg);
	else if (!msg && dra_msg)
		want_set(e, REASON_MISCONFIGURED, dra_msg);
	else if (!msg && (text_same(e->want_reason, REASON_INADMISSIBLE) ||
			  text_same(e->want_reason, REASON_MISCONFIGURED)))
		want_clear(e);
	free(msg);
	free(dra_msg);
	manager_dl_check(m, e);
	wl_sync(m, e);
}

/* ------------------------------------------------------------------ */
/* Workload writes */

static void wl_done(void *ud, const struct kube_reply *r, json_t *body);

static json_t *patch_with_rv(const char *rv, json_t *status_take)
{
	json_t *p = json_object(), *md = json_object();

	json_object_set_new(md, "resourceVersion", json_string(rv ? rv : ""));
	json_object_set_new(p, "metadata", md);
	json_object_set_new(p, "status", status_take);
	return p;
}

void manager_wl_submit(struct manager *m, struct wl_entry *e, json_t *body,
		       enum wl_call kind, const char *rv, bool status)
{
	const char *name;
	char *ns = split_key(e->key, &name);
	char *path = path_of("workloads", ns, name, status ? "status" : NULL);
	struct kube_req req = { .verb = KUBE_PATCH_MERGE, .path = path,
				.body = body, .discard_answer = true,
				.done = wl_done, .ud = e };

	e->call_kind = kind;
	set_str(&e->call_rv, rv);
	m->wl_inflight++;
	e->call = kube_submit(m->k, &req);
	json_decref(body);
	free(path);
	free(ns);
}

void manager_wl_delete(struct manager *m, struct wl_entry *e, const char *rv)
{
	const char *name;
	char *ns = split_key(e->key, &name);
	char *path = path_of("workloads", ns, name, NULL);
	struct kube_req req = { .verb = KUBE_DELETE, .path = path,
				.precondition_rv = rv, .propagation =
				"Background", .discard_answer = true,
				.done = wl_done, .ud = e };

	e->call_kind = WC_DEADLINE;
	set_str(&e->call_rv, rv);
	m->wl_inflight++;
	e->call = kube_submit(m->k, &req);
	free(path);
	free(ns);
}

const struct owner_ref *manager_wl_job_owner(const struct workload *w)
{
	for (size_t i = 0; i < w->meta.nowners; i++) {
		const struct owner_ref *o = &w->meta.owners[i];

		if (o->controller && text_same(o->kind, "Job") &&
		    text_same(o->api_version, "batch/v1"))
			return o;
	}
	return NULL;
}

bool manager_wl_delete_job(struct manager *m, struct wl_entry *e)
{
	const struct owner_ref *o = manager_wl_job_owner(e->w);
	struct kube_ref ref = { .group = "batch", .version = "v1",
				.resource = "jobs",
				.ns = e->w->meta.namespace };
	struct kube_req req = { .verb = KUBE_DELETE, .propagation =
				"Background", .discard_answer = true,
				.done = wl_done, .ud = e };
	char *path;

	if (!o || !o->name)
		return false;
	ref.name = o->name;
	path = kube_path(&ref);
	req.path = path;
	/* the Job this workload describes, not a later one of its name */
	req.precondition_uid = o->uid;
	e->call_kind = WC_DEADLINE;
	set_str(&e->call_rv, e->w->meta.resource_version);
	m->wl_inflight++;
	e->call = kube_submit(m->k, &req);
	free(path);
	return true;
}

void manager_wl_event(struct manager *m, const struct wl_entry *e,
		      enum event_type type, const char *reason,
		      const char *fmt, ...)
{
	const struct workload *w = e->w;
	struct event_object o = {
		.api_version = KUEUE_GROUP "/" KUEUE_VERSION,
		.kind = "Workload", .ns = w->meta.namespace,
		.name = w->meta.name, .uid = w->meta.uid,
		.resource_version = w->meta.resource_version,
	};
	char msg[EVENT_MESSAGE_MAX + 2]; /* one more: event_record cuts */
	va_list ap;

	if (!m->ev)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	event_record(m->ev, &o, type, reason, msg);
}

/* PodsReady=False WaitForStart: what a new admission starts from (a
 * stale True left by a reservation cleared while waitForPodsReady was
 * off is reset with the admission). */
static bool is_wait_for_start(const struct condition *c)
{
	return c && c->status == COND_FALSE &&
	       text_same(c->reason, "WaitForStart");
}

/*
 * The admission write: status.admission and the whole conditions list
 * (a merge patch replaces lists), computed from the cached object so
 * conditions cueue does not manage survive, with the decided version as
 * precondition.
 */
static void send_admit(struct manager *m, struct wl_entry *e)
{
	struct workload tmp;
	const char *name, *cq = e->adm.cluster_queue;
	char *ns = split_key(e->key, &name), *msg;
	int64_t now = loop_wall_ms(m->l), gen = e->w->meta.generation;
	json_t *enc, *st = json_object();

	if (m->o.before_admit_write)
		m->o.before_admit_write(m->o.hook_ud, ns, name);
	memset(&tmp, 0, sizeof(tmp));
	conditions_copy(&tmp.conds, &e->w->conds);
	/* Kueue flips Evicted/Preempted to False on a new reservation. */
	for (size_t i = 0; i < tmp.conds.n; i++) {
		struct condition *c = &tmp.conds.v[i];

		if (c->status != COND_TRUE || (!text_same(c->type, "Evicted") &&
					       !text_same(c->type, "Preempted")))
			continue;
		msg = xasprintf("Previously: %s", c->message ? c->message : "");
		conditions_set(&tmp.conds, c->type, COND_FALSE,
			       COND_QUOTA_RESERVED, msg, gen, now);
		free(msg);
	}
	msg = xasprintf("Quota reserved in ClusterQueue %s", cq ? cq : "");
	conditions_set(&tmp.conds, COND_QUOTA_RESERVED, COND_TRUE,
		       COND_QUOTA_RESERVED, msg, gen, now);
	free(msg);
	conditions_set(&tmp.conds, COND_ADMITTED, COND_TRUE, "Admitted",
		       "The workload is admitted", gen, now);
	/* waitForPodsReady: the Job integration would write PodsReady=
	 * False WaitForStart for the admitted workload of a Job right after
	 * this write; it comes with it instead (one write fewer). */
	if (m->o.ready.enabled && e->owned &&
	    !is_wait_for_start(conditions_find(&tmp.conds, COND_PODS_READY)))
		conditions_set(&tmp.conds, COND_PODS_READY, COND_FALSE,
			       "WaitForStart",
			       "Not all pods are ready or succeeded", gen, now);
	tmp.has_admission = true;
	tmp.admission = e->adm; /* shallow: e keeps ownership */
	e->admit_wall_ms = now;
	enc = codec_encode_workload_status(&tmp, API_V1BETA2);
	json_object_set(st, "admission", json_object_get(enc, "admission"));
	json_object_set(st, "conditions", json_object_get(enc, "conditions"));
	json_decref(enc);
	conditions_release(&tmp.conds);
	e->admit_pending = false;
	m->stats.admit_writes++;
	manager_wl_submit(m, e, patch_with_rv(e->admit_rv, st), WC_ADMIT,
			  e->admit_rv, true);
	free(ns);
}

static void send_pending(struct manager *m, struct wl_entry *e)
{
	struct workload tmp;
	json_t *enc, *st = json_object();

	memset(&tmp, 0, sizeof(tmp));
	conditions_copy(&tmp.conds, &e->w->conds);
	conditions_set(&tmp.conds, COND_QUOTA_RESERVED, COND_FALSE,
		       e->want_reason, e->want_msg, e->w->meta.generation,
		       loop_wall_ms(m->l));
	enc = codec_encode_workload_status(&tmp, API_V1BETA2);
	json_object_set(st, "conditions", json_object_get(enc, "conditions"));
	json_decref(enc);
	conditions_release(&tmp.conds);
	m->stats.pending_writes++;
	m->pend_inflight++;
	e->pend_prev_ms = e->pend_ms;
	e->pend_ms = loop_now_ms(m->l);
	manager_wl_submit(m, e, patch_with_rv(e->w->meta.resource_version, st),
			  WC_PENDING, e->w->meta.resource_version, true);
	/* Kueue's Pending event, once per message written (never per
	 * attempt: the write rule above paces both). Not for the
	 * Inadmissible conditions of missing or stopped queues, which
	 * Kueue's workload controller writes without an event, nor for
	 * blockAdmission's WaitingForPodsReady (Kueue's scheduler patches
	 * it without one). */
	if (!text_same(e->want_reason, REASON_INADMISSIBLE) &&
	    !text_same(e->want_reason, "WaitingForPodsReady"))
		manager_wl_event(m, e, EVENT_WARNING, "Pending", "%s",
			 e->want_msg ? e->want_msg : "");
}

bool manager_wl_evictions_inc(struct workload *tmp, const struct workload *w,
			      const char *reason, const char *cause)
{
	size_t i;

	tmp->evictions = xcalloc(w->nevictions + 1, sizeof(*tmp->evictions));
	for (i = 0; i < w->nevictions; i++) {
		tmp->evictions[i].reason = xstrdup(w->evictions[i].reason ?
							   w->evictions[i].reason : "");
		tmp->evictions[i].cause = xstrdup(w->evictions[i].cause ?
							  w->evictions[i].cause : "");
		tmp->evictions[i].count = w->evictions[i].count;
	}
	tmp->nevictions = w->nevictions;
	for (i = 0; i < tmp->nevictions; i++)
		if (!strcmp(tmp->evictions[i].reason, reason) &&
		    !strcmp(tmp->evictions[i].cause, cause))
			break;
	if (i == tmp->nevictions) {
		tmp->evictions[i].reason = xstrdup(reason);
		tmp->evictions[i].cause = xstrdup(cause);
		tmp->nevictions++;
	}
	return tmp->evictions[i].count++ == 0;
}

/* A DeactivatedDueTo<Cause> reason counts as Deactivated with that
 * underlying cause (Kueue's workloadEvictionStateInc and metrics): the
 * base reason into *reason (static or r itself), the cause returned. */
static const char *split_cause(const char *r, const char **reason)
{
	if (!strncmp(r, "DeactivatedDueTo", 16)) {
		*reason = "Deactivated";
		return r + 16;
	}
	*reason = r;
	return "";
}

void manager_wl_clear_conds(struct workload *tmp, const char *reason,
			    const char *msg, int64_t gen, int64_t now)
{
	/* Requeued True only after a preemption or node failure (§7.4) */
	bool requeue = !strcmp(reason, "Preempted") ||
		       !strcmp(reason, "NodeFailures");

	conditions_set(&tmp->conds, "Requeued",
		       requeue ? COND_TRUE : COND_FALSE, reason, msg, gen, now);
	conditions_set(&tmp->conds, COND_QUOTA_RESERVED, COND_FALSE,
		       REASON_PENDING, msg, gen, now);
	deadline_admitted_off(tmp, now);
	conditions_set(&tmp->conds, COND_ADMITTED, COND_FALSE, "NoReservation",
		       "The workload has no reservation", gen, now);
}

/*
 * Preemption writes (controller/README.md): one eviction decided for
 * the preemptor by_key (NULL: none) is new (delta +1) or answered or
 * dropped (-1). When the preemptor's last one goes, its held admission
 * write goes to the queue.
 */
static void victims_move(struct manager *m, const char *by_key, int delta)
{
	struct wl_entry *p = by_key ? hmap_get(&m->wls, by_key) : NULL;

	if (!p)
		return;
	if (delta > 0) {
		p->victims_out++;
		return;
	}
	if (p->victims_out && --p->victims_out == 0 && p->admit_pending)
		wl_sync(m, p);
}

/* Drops a victim's link to its preemptor (e->chk_by_key or
 * e->call_by_key): the decision was replaced, its write answered, or
 * the victim is gone. */
static void victim_unlink(struct manager *m, char **by_key)
{
	if (*by_key) {
		victims_move(m, *by_key, -1);
		FREE_AND_NULL(*by_key);
	}
}

/*
 * The write of an evict or requeue decision (kueue-scheduler.md §5):
 *  - evict: Evicted=True with the decision's reason and message. The
 *    workload keeps its quota: the integration that runs it (jobs.c for
 *    a batch/v1 Job) stops it, then clears the reservation. A workload
 *    with no owner has nothing running for it, so the same write clears
 *    the reservation too (QuotaReserved=False Pending, Admitted=False,
 *    Requeued, no admission), as jobs.c would once the Job stopped.
 *  - requeue: Requeued=True with the decision's reason and message.
 * Both carry the decided version as precondition.
 */
static void send_check(struct manager *m, struct wl_entry *e)
{
	struct workload tmp;
	int64_t now = loop_wall_ms(m->l), gen = e->w->meta.generation;
	bool clear = false, deact = false;
	const char *base, *cause;
	json_t *enc, *st = json_object();

	memset(&tmp, 0, sizeof(tmp));
	conditions_copy(&tmp.conds, &e->w->conds);
	tmp.has_accumulated = e->w->has_accumulated;
	tmp.accumulated_seconds = e->w->accumulated_seconds;
	switch (e->chk_kind) {
	case DEC_PREEMPT:
	case DEC_EVICT:
		conditions_set(&tmp.conds, "Evicted", COND_TRUE,
			       e->chk_reason, e->chk_msg, gen, now);
		if (e->chk_kind == DEC_PREEMPT)
			conditions_set(&tmp.conds, "Preempted", COND_TRUE,
				       e->chk_preempt, e->chk_msg, gen, now);
		cause = split_cause(e->chk_reason, &base);
		e->chk_first = manager_wl_evictions_inc(&tmp, e->w, base,
							cause);
		/* a deactivation clears the requeue state and the
		 * DeactivationTarget that caused it (§5.5) */
		deact = !strcmp(base, "Deactivated");
		if (deact)
			conditions_remove(&tmp.conds,
					  COND_DEACTIVATION_TARGET);
		if (!e->owned) {
			clear = true;
			manager_wl_clear_conds(&tmp, e->chk_reason, e->chk_msg,
					       gen, now);
		}
		break;
	case DEC_REQUEUE:
		conditions_set(&tmp.conds, "Requeued", COND_TRUE,
			       e->chk_reason, e->chk_msg, gen, now);
		break;
	case DEC_ADMIT:
	case DEC_PENDING:
	default:
		BUG("check write of decision kind %d", (int)e->chk_kind);
	}
	enc = codec_encode_workload_status(&tmp, API_V1BETA2);
	json_object_set(st, "conditions", json_object_get(enc, "conditions"));
	if (json_object_get(enc, "schedulingStats"))
		json_object_set(st, "schedulingStats",
				json_object_get(enc, "schedulingStats"));
	if (tmp.has_accumulated &&
	    json_object_get(enc, "accumulatedPastExecutionTimeSeconds"))
		json_object_set(st, "accumulatedPastExecutionTimeSeconds",
				json_object_get(enc,
					"accumulatedPastExecutionTimeSeconds"));
	if (deact && (e->w->has_requeue_count || e->w->requeue_at_ms))
		json_object_set_new(st, "requeueState", json_null());
	if (clear)
		json_object_set_new(st, "admission", json_null());
	json_decref(enc);
	workload_release(&tmp);
	e->chk_pending = false;
	/* the link follows the decision into its write */
	free(e->call_by_key);
	e->call_by_key = e->chk_by_key;
	e->chk_by_key = NULL;
	manager_wl_evict_note(e);
	m->stats.check_writes++;
	manager_wl_submit(m, e, patch_with_rv(e->chk_rv, st), WC_CHECK,
			  e->chk_rv, true);
}

void manager_wl_evict_report(struct manager *m, const struct wl_entry *e,
			     const char *event_reason, const char *reason,
			     const char *cause, const char *msg, bool first)
{
	const struct workload *w = e->w;
	const char *cq = e->ev_cq ? e->ev_cq : "";
	const char *pc = w->priority_class_name ? w->priority_class_name : "";

	if (m->o.metrics) {
		kueue_metrics_evicted(m->o.metrics, cq, reason, cause, pc);
		/* once per workload and (reason, cause): the count in its
		 * schedulingStats went from 0 to 1, as Kueue reports it */
		if (first)
			kueue_metrics_evicted_once(m->o.metrics, cq, reason,
						   cause, pc);
		if (w->queue_name)
			kueue_metrics_lq_evicted(m->o.metrics,
						 w->meta.namespace,
						 w->queue_name, reason, cause,
						 pc);
		/* its pods were ready: how long they ran ready */
		if (e->ev_ready_ms) {
			double d = (double)(loop_wall_ms(m->l) -
					    e->ev_ready_ms) / 1000.0;

			kueue_metrics_pods_ready_to_evicted(
				m->o.metrics, cq, reason, cause,
				d < 0 ? 0 : d);
		}
	}
	{
		char *why = xasprintf("EvictedDueTo%s", event_reason);

		manager_wl_event(m, e, EVENT_NORMAL, why, "%s",
				 msg ? msg : "");
		free(why);
	}
}

void manager_wl_evict_note(struct wl_entry *e)
{
	const struct condition *pr = conditions_find(&e->w->conds,
						     COND_PODS_READY);

	set_str(&e->ev_cq, e->w->admission.cluster_queue);
	/* 0: not ready, or no time to count from (no sample) */
	e->ev_ready_ms = pr && pr->status == COND_TRUE
				 ? pr->last_transition_ms
				 : 0;
}

/* An eviction decision was written: its metrics and its Event (Kueue's
 * EvictedDueTo<Reason>, §7.5), and for a preemption Kueue's Preempted
 * event and counter. */
static void evict_report(struct manager *m, const struct wl_entry *e)
{
	const struct workload *w = e->w;
	const char *reason, *cause = split_cause(e->chk_reason, &reason);

	manager_wl_evict_report(m, e, e->chk_reason, reason, cause,
				e->chk_msg, e->chk_first);
	if (e->chk_kind != DEC_PREEMPT)
		return;
	if (m->o.metrics)
		kueue_metrics_preempted(m->o.metrics,
					e->chk_by_cq ? e->chk_by_cq : "",
					e->chk_preempt);
	/* Kueue's Preempted event: the message, then both priorities
	 * (cueue has no priority boost: base = effective, boost 0) */
	manager_wl_event(m, e, EVENT_NORMAL, "Preempted",
		 "%s; preemptor effective priority: %d (base: %d, boost: 0); "
		 "preemptee effective priority: %d (base: %d, boost: 0)",
		 e->chk_msg ? e->chk_msg : "", (int)e->chk_by_prio,
		 (int)e->chk_by_prio, (int)workload_priority(w),
		 (int)workload_priority(w));
}

static struct wl_entry *fifo_pop(struct dlist *q)
{
	struct dlist *n = dlist_first(q);

	if (!n)
		return NULL;
	dlist_remove(n);
	return DLIST_ENTRY(n, struct wl_entry, q_link);
}

/*
 * Submits queued workload writes: admissions first, up to max_wl_writes
 * in flight; pending writes only while fewer than a quarter of those are
 * pending writes, so tens of thousands of new workloads getting their
 * first Pending condition never hold the connections an admission
 * write needs.
 */
void manager_wl_pump(struct manager *m)
{
	unsigned max = m->o.max_wl_writes;

	if (!manager_leads(m))
		return;
	while (!m->closing && m->wl_inflight < max) {
		struct wl_entry *e = fifo_pop(&m->admitq);

		if (!e && m->pend_inflight < (max + 3) / 4)
			e = fifo_pop(&m->pendq);
		if (!e)
			break;
		e->inq = WQ_NONE;
		if (e->call)
			continue;
		if (e->admit_pending && e->victims_out)
			m->stats.admits_held++; /* sent by victims_move */
		else if (e->admit_pending)
			send_admit(m, e);
		else if (e->chk_pending)
			send_check(m, e);
		else if (e->dl_pending)
			manager_dl_send(m, e);
		else if (wl_pending_need(m, e) == PEND_NOW)
			send_pending(m, e);
	}
}

/* An admission write succeeded: QuotaReserved and Admitted became True
 * (kueue_metrics.h), and their events (kueue-api.md §7.5, Kueue's
 * wording). The queued wait runs from the last requeue, else from
 * creation, as Kueue's QueuedWaitTime; the reservation wait from the
 * QuotaReserved time written (whole seconds, as the object shows it). */
static void admit_report(struct manager *m, const struct wl_entry *e)
{
	const struct workload *w = e->w;
	const struct condition *rq;
	const char *cq = e->adm.cluster_queue ? e->adm.cluster_queue : "";
	const char *pc = w->priority_class_name ? w->priority_class_name : "";
	int64_t since = w->meta.creation_ms, now = loop_wall_ms(m->l);
	double wait, rwait;

	rq = conditions_find(&w->conds, "Requeued");
	if (rq && rq->last_transition_ms)
		since = rq->last_transition_ms;
	wait = since ? (double)(now - since) / 1000.0 : 0;
	if (wait < 0)
		wait = 0;
	rwait = (double)(now - e->admit_wall_ms / 1000 * 1000) / 1000.0;
	if (rwait < 0)
		rwait = 0;
	if (m->o.metrics) {
		kueue_metrics_quota_reserved(m->o.metrics, cq, pc, wait);
		kueue_metrics_admitted(m->o.metrics, cq, pc, wait);
		if (w->queue_name) {
			kueue_metrics_lq_quota_reserved(m->o.metrics,
				w->meta.namespace, w->queue_name, pc, wait);
			kueue_metrics_lq_admitted(m->o.metrics, w->meta.namespace,
						  w->queue_name, pc, wait);
		}
	}
	manager_wl_event(m, e, EVENT_NORMAL, "QuotaReserved",
		 "Quota reserved in ClusterQueue %s, wait time since queued "
		 "was %.0fs", cq, wait);
	manager_wl_event(m, e, EVENT_NORMAL, "Admitted",
		 "Admitted by ClusterQueue %s, wait time since reservation "
		 "was %.0fs", cq, rwait);
}

static void wl_done(void *ud, const struct kube_reply *r, json_t *body)
{
	struct wl_entry *e = ud;
	struct manager *m = e->m;
	enum wl_call kind = e->call_kind;
	const char *name;
	char *ns = split_key(e->key, &name);
	bool newer = !text_same(e->call_rv, e->w->meta.resource_version);

	json_decref(body);
	e->call = NULL;
	e->call_kind = WC_NONE;
	m->wl_inflight--;
	if (kind == WC_PENDING)
		m->pend_inflight--;
	if (kind == WC_ADMIT) {
		if (r->outcome == KUBE_OK) {
			m->stats.admitted++;
			admit_report(m, e);
			want_clear(e);
			/* debug: one line per admission is Kueue's V(2) */
			log_msg(LOG_DEBUG, "scheduler", ns, name,
				"quota reserved in ClusterQueue %s",
				e->adm.cluster_queue ? e->adm.cluster_queue
						     : "");
		} else if (r->code == 409) {
			/* The object moved on: forget the assumption once
			 * that newer version is here, so the next cycle
			 * decides on it (never on the stale one). */
			m->stats.admit_conflicts++;
			log_msg(LOG_DEBUG, "scheduler", ns, name,
				"admission conflict, will retry: %s",
				r->message);
			if (newer) {
				sched_wl_forget(m->s, ns, name);
				m->changed = true;
			} else {
				e->forget_on_update = true;
			}
		} else {
			m->stats.admit_failures++;
			if (r->code != 404)
				log_msg(LOG_WARN, "scheduler", ns, name,
					"admission write failed (%ld): %s",
					r->code, r->message);
			sched_wl_forget(m->s, ns, name);
			m->changed = true;
		}
	} else if (kind == WC_CHECK) {
		victim_unlink(m, &e->call_by_key);
		if (r->outcome == KUBE_OK) {
			if (e->chk_kind != DEC_REQUEUE) {
				m->stats.evicted++;
				evict_report(m, e);
			}
			log_msg(LOG_INFO, "workload", ns, name, "%s: %s%s%s",
				e->chk_kind == DEC_PREEMPT ? "preempted"
				: e->chk_kind == DEC_EVICT ? "evicted"
							   : "requeued",
				e->chk_kind == DEC_PREEMPT ? e->chk_preempt
							   : e->chk_reason,
				e->chk_kind == DEC_PREEMPT ? ": " : "",
				e->chk_kind == DEC_PREEMPT ? e->chk_msg : "");
		} else if (r->code == 409 && !newer) {
			/* decided again on the version that won */
			e->recheck_on_update = true;
		} else if (r->code != 404) {
			if (r->code != 409)
				log_msg(LOG_WARN, "workload", ns, name,
					"%s write failed (%ld): %s",
					e->chk_kind == DEC_REQUEUE ? "requeue"
								   : "eviction",
					r->code, r->message);
			sched_wl_recheck(m->s, ns, name);
			m->changed = true;
		}
		/* a decision applied while this write was in flight is
		 * still to be sent, with its own fields */
		if (!e->chk_pending) {
			FREE_AND_NULL(e->chk_msg);
			FREE_AND_NULL(e->chk_rv);
		}
	} else if (kind == WC_DEADLINE || kind == WC_SPEC) {
		manager_dl_done(m, e, r);
	} else if (kind == WC_PENDING) {
		if (r->outcome == KUBE_OK) {
			set_str(&e->sent_rv, e->call_rv);
		} else if (r->code != 409 && r->code != 404) {
			log_msg(LOG_WARN, "workload", ns, name,
				"status write failed (%ld): %s", r->code,
				r->message);
		}
	}
	if (kind == WC_ADMIT && !e->admit_pending)
		admission_release(&e->adm);
	FREE_AND_NULL(e->call_rv);
	free(ns);
	wl_sync(m, e);
	manager_wl_pump(m);
}

/* ------------------------------------------------------------------ */
/* Decisions */

/* The cache entry of w, found by "ns/name" built in a stack buffer
 * (this runs for every decision of every cycle). */
static struct wl_entry *wl_entry_of(struct manager *m,
				    const struct workload *w)
{
	char buf[320];
	char *key = object_key_buf(buf, sizeof(buf), w->meta.namespace,
				   w->meta.name);
	struct wl_entry *e = hmap_get(&m->wls, key);

	if (key != buf)
		free(key);
	return e;
}

void manager_wl_apply_decisions(struct manager *m)
{
	for (size_t i = 0; i < m->decs.n; i++) {
		const struct sched_decision *d = &m->decs.v[i];
		struct wl_entry *e = wl_entry_of(m, d->wl);

		if (!e)
			continue;
		switch (d->kind) {
		case DEC_ADMIT:
			sched_decision_admission(m->s, d, &e->adm);
			set_str(&e->admit_rv, d->wl->meta.resource_version);
			e->admit_pending = true;
			want_clear(e);
			if (e->inq == WQ_PENDING)
				wl_dequeue(m, e);
			break;
		case DEC_PENDING:
			want_set(e, d->reason ? d->reason : REASON_PENDING,
				 d->message ? d->message : "");
			log_msg(LOG_DEBUG, "scheduler", d->wl->meta.namespace,
				d->wl->meta.name, "pending: %s",
				e->want_msg);
			break;
		case DEC_PREEMPT:
		case DEC_EVICT:
		case DEC_REQUEUE:
			/* a waiting decision replaced drops its link */
			victim_unlink(m, &e->chk_by_key);
			if (d->kind == DEC_PREEMPT) {
				e->chk_preempt = d->preempt_reason;
				set_str(&e->chk_by_cq, d->preemptor_cq);
				e->chk_by_prio = workload_priority(d->preemptor);
				e->chk_by_key = object_key_buf(NULL, 0,
					d->preemptor->meta.namespace,
					d->preemptor->meta.name);
				victims_move(m, e->chk_by_key, +1);
			}
			e->chk_kind = d->kind;
			e->chk_reason = d->reason;
			set_str(&e->chk_msg, d->message);
			set_str(&e->chk_rv, d->wl->meta.resource_version);
			e->chk_pending = true;
			break;
		default:
			BUG("decision kind %d", (int)d->kind);
		}
		wl_sync(m, e);
	}
}

/* ------------------------------------------------------------------ */
/* Workloads */

static void wl_unlink_lq(struct wl_entry *e)
{
	struct lq_entry *l = e->lqe;

	if (!l)
		return;
	dlist_remove(&e->lq_link);
	e->lqe = NULL;
}

static void wl_link_lq(struct wl_entry *e, struct lq_entry *l)
{
	e->lqe = l;
	dlist_insert_after(&l->wls, &e->lq_link);
}

/*
 * The manager never encodes a whole workload and sched reads only the
 * scheduling view (requests, node selector, affinity, tolerations,
 * status), so the rest of a decoded workload is dropped to keep a cache
 * of tens of thousands small: raw pod templates, template and object
 * labels (all but kueue.x-k8s.io/job-uid) and annotations, owner
 * references but the controller's, finalizers.
 */
static void wl_trim(struct workload *w)
{
	for (size_t i = 0; i < w->npod_sets; i++) {
		struct pod_template *t = &w->pod_sets[i].tmpl;

		FREE_AND_NULL(t->raw);
		smap_release(&t->labels);
		smap_release(&t->annotations);
	}
	{
		/* the job-uid label stays: preemption messages name it */
		const char *j = smap_get(&w->meta.labels, LABEL_JOB_UID);
		char *juid = j ? xstrdup(j) : NULL;

		smap_release(&w->meta.labels);
		if (juid) {
			smap_init(&w->meta.labels);
			smap_set(&w->meta.labels, LABEL_JOB_UID, juid);
			free(juid);
		}
	}
	smap_release(&w->meta.annotations);
	{
		/* the controller reference stays: the visibility API names
		 * it (manager_vis.c) */
		size_t keep = 0;

		for (size_t i = 0; i < w->meta.nowners; i++) {
			struct owner_ref *o = &w->meta.owners[i];

			if (o->controller && !keep &&
			    o->api_version && o->kind && o->name && o->uid) {
				w->meta.owners[keep++] = *o;
				continue;
			}
			free(o->api_version);
			free(o->kind);
			free(o->name);
			free(o->uid);
		}
		w->meta.nowners = keep;
		if (!keep)
			FREE_AND_NULL(w->meta.owners);
	}
	for (size_t i = 0; i < w->meta.nfinalizers; i++)
		free(w->meta.finalizers[i]);
	FREE_AND_NULL(w->meta.finalizers);
	w->meta.nfinalizers = 0;
}

static bool cond_equal(const struct condition *a, const struct condition *b)
{
	return a->status == b->status && text_same(a->type, b->type) &&
	       text_same(a->reason, b->reason) &&
	       text_same(a->message, b->message) &&
	       a->last_transition_ms == b->last_transition_ms &&
	       a->observed_generation == b->observed_generation;
}

/* A QuotaReserved condition that is not True: its reason, message and
 * time are ours to write and nothing sched reads. */
static bool is_pending_cond(const struct condition *c)
{
	return c && text_same(c->type, COND_QUOTA_RESERVED) &&
	       c->status != COND_TRUE;
}

/*
 * Whether nw differs from the cached cur (trimmed) only in what sched
 * never reads: same object, same spec (generation), no admission, the
 * same requeue state, and every condition equal except a QuotaReserved
 * that is not True on either side.
 */
static bool wl_is_quiet(const struct workload *cur, const struct workload *nw)
{
	const struct condition *a, *b;
	size_t na = 0, nb = 0;

	if (!cur->meta.generation ||
	    cur->meta.generation != nw->meta.generation ||
	    !text_same(cur->meta.uid, nw->meta.uid) ||
	    cur->meta.deletion_ms != nw->meta.deletion_ms ||
	    cur->has_admission || nw->has_admission ||
	    cur->requeue_at_ms != nw->requeue_at_ms ||
	    cur->has_requeue_count != nw->has_requeue_count ||
	    cur->requeue_count != nw->requeue_count ||
	    cur->nreclaimable || nw->nreclaimable || cur->nchecks ||
	    nw->nchecks || cur->has_accumulated != nw->has_accumulated ||
	    cur->accumulated_seconds != nw->accumulated_seconds)
		return false;
	a = conditions_find(&cur->conds, COND_QUOTA_RESERVED);
	b = conditions_find(&nw->conds, COND_QUOTA_RESERVED);
	if ((a && !is_pending_cond(a)) || (b && !is_pending_cond(b)))
		return false;
	for (size_t i = 0; i < cur->conds.n; i++)
		na += !is_pending_cond(&cur->conds.v[i]);
	for (size_t i = 0; i < nw->conds.n; i++) {
		const struct condition *c = &nw->conds.v[i], *o;

		if (is_pending_cond(c))
			continue;
		nb++;
		o = conditions_find(&cur->conds, c->type);
		if (!o || !cond_equal(o, c))
			return false;
	}
	return na == nb;
}

/*
 * A version of the same spec decoded cheaply, or NULL. Every spec change
 * moves metadata.generation (k8s-api.md, CRDs with a status
 * subresource), so a version with cur's generation and uid has cur's
 * spec: obj is decoded with an empty spec (the pod templates and their
 * path bookkeeping were most of the decoding cost), and the caller
 * either keeps only its status (wl_is_quiet: the manager's own pending
 * writes coming back) or swaps cur's spec in (wl_swap_spec: admissions,
 * finishes, evictions). NULL when the generation or uid differ or the
 * lite decode finds an error (the caller decodes in full, which reports
 * it).
 */
static struct workload *wl_decode_lite(const json_t *obj,
				       const struct workload *cur)
{
	const json_t *md = json_object_get(obj, "metadata");
	const json_t *st = json_object_get(obj, "status");
	json_t *lite;
	struct workload *nw;
	struct field_errors fe = FIELD_ERRORS_INIT;

	if (!cur->meta.generation || !cur->meta.uid || !json_is_object(md) ||
	    json_integer_value(json_object_get(md, "generation")) !=
		    cur->meta.generation ||
	    !text_same(jx_str(md, "uid"), cur->meta.uid))
		return NULL;
	lite = json_object();
	json_object_set(lite, "apiVersion", json_object_get(obj, "apiVersion"));
	json_object_set(lite, "kind", json_object_get(obj, "kind"));
	json_object_set(lite, "metadata", (json_t *)md);
	if (st)
		json_object_set(lite, "status", (json_t *)st);
	json_object_set_new(lite, "spec", json_object());
	nw = xcalloc(1, sizeof(*nw));
	if (codec_decode_workload(lite, nw, &fe) || fe.n) {
		field_errors_release(&fe);
		workload_release(nw);
		FREE_AND_NULL(nw);
	}
	json_decref(lite);
	return nw;
}

/* dst's spec fields become src's (shallow: pointers are shared). */
static void wl_spec_assign(struct workload *dst, const struct workload *src)
{
	dst->pod_sets = src->pod_sets;
	dst->npod_sets = src->npod_sets;
	dst->queue_name = src->queue_name;
	dst->priority_class_name = src->priority_class_name;
	dst->priority_source = src->priority_source;
	dst->has_priority = src->has_priority;
	dst->priority = src->priority;
	dst->active = src->active;
	dst->has_max_exec = src->has_max_exec;
	dst->max_exec_seconds = src->max_exec_seconds;
}

/* Swaps the spec fields of a and b (all of struct workload's spec). */
static void wl_swap_spec(struct workload *a, struct workload *b)
{
	struct workload t = *a;

	wl_spec_assign(a, b);
	wl_spec_assign(b, &t);
}

/* Moves nw's conditions and resourceVersion into cur (the rest of the
 * status is equal: wl_is_quiet); nw gets cur's old ones. */
static void wl_take_status(struct workload *cur, struct workload *nw)
{
	char *rv = cur->meta.resource_version;
	struct conditions conds = cur->conds;

	cur->meta.resource_version = nw->meta.resource_version;
	nw->meta.resource_version = rv;
	cur->conds = nw->conds;
	nw->conds = conds;
}

/*
 * PodsReady became True (reason Started: the first time since the
 * admission, not a recovery) in nw: kueue_ready_wait_time_seconds (from
 * the last requeue, else creation) and kueue_admitted_until_ready_wait_
 * time_seconds, as Kueue's Job reconciler reports them when it writes
 * the condition. Seen on the informer so any integration counts; a
 * version first seen after a restart is not reported again.
 */
static void ready_report(struct manager *m, const struct workload *old,
			 const struct workload *nw)
{
	const struct condition *a = conditions_find(&old->conds,
						    COND_PODS_READY);
	const struct condition *b = conditions_find(&nw->conds,
						    COND_PODS_READY);
	const struct condition *adm, *rq;
	const char *cq = nw->admission.cluster_queue;
	const char *pc = nw->priority_class_name ? nw->priority_class_name
						 : "";
	int64_t since = nw->meta.creation_ms;
	double wait, adm_wait = 0;

	if (!b || b->status != COND_TRUE || !text_same(b->reason, "Started") ||
	    (a && a->status == COND_TRUE) || !nw->has_admission || !cq)
		return;
	rq = conditions_find(&nw->conds, "Requeued");
	if (rq && rq->last_transition_ms)
		since = rq->last_transition_ms;
	wait = (double)(b->last_transition_ms - since) / 1000.0;
	adm = conditions_find(&nw->conds, COND_ADMITTED);
	if (adm && adm->status == COND_TRUE)
		adm_wait = (double)(b->last_transition_ms -
				    adm->last_transition_ms) / 1000.0;
	if (wait < 0)
		wait = 0;
	if (adm_wait < 0)
		adm_wait = 0;
	kueue_metrics_ready(m->o.metrics, cq, pc, wait, adm_wait);
	if (nw->queue_name)
		kueue_metrics_lq_ready(m->o.metrics, nw->meta.namespace,
				       nw->queue_name, pc, wait, adm_wait);
}

void manager_wl_apply(struct manager *m, const json_t *obj, const char *key)
{
	struct wl_entry *e = hmap_get(&m->wls, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	const char *rv = jx_meta_str(obj, "resourceVersion");
	struct workload *nw, *old;
	struct lq_entry *old_lqe = NULL;
	bool quiet = false, same_spec = false;

	if (e) {
		e->seen = m->gen[INF_WL];
		if (text_same(rv, e->w->meta.resource_version) ||
		    text_same(rv, e->bad_rv))
			return;
	}
	nw = e ? wl_decode_lite(obj, e->w) : NULL;
	if (nw && !e->forget_on_update && wl_is_quiet(e->w, nw)) {
		quiet = true;
	} else if (nw) {
		/* The cached spec moves into nw (sched's compiled pod sets
		 * point into the pod_sets array, which does not move); on
		 * a validation error it moves back. */
		wl_swap_spec(nw, e->w);
		validate_workload(nw, NULL, &fe);
		if (fe.n)
			wl_swap_spec(nw, e->w);
		else
			same_spec = true;
	} else {
		nw = xcalloc(1, sizeof(*nw));
		if (!codec_decode_workload(obj, nw, &fe))
			validate_workload(nw, NULL, &fe);
	}
	if (fe.n || !nw->meta.name || !nw->meta.namespace) {
		free(log_invalid(m, "workloads", jx_meta_str(obj, "namespace"),
				 jx_meta_str(obj, "name"), &fe));
		field_errors_release(&fe);
		workload_release(nw);
		free(nw);
		if (e)
			set_str(&e->bad_rv, rv);
		return;
	}
	if (m->wl_obs)
		m->wl_obs(m->wl_obs_ud, MANAGER_WL_UPSERT, nw);
	if (quiet) {
		/* Nothing sched reads moved (typically our own pending
		 * write coming back): the cached struct, which sched
		 * borrows, takes the new conditions and version; sched is
		 * not told, so no cycle runs for it. */
		wl_take_status(e->w, nw);
		workload_release(nw);
		free(nw);
		m->stats.status_only++;
		FREE_AND_NULL(e->bad_rv);
		if (e->sent_rv && !text_same(e->sent_rv, rv))
			FREE_AND_NULL(e->sent_rv);
		/* a timed write that lost its precondition to this very
		 * version (409) waits for it: decide again */
		manager_dl_check(m, e);
		wl_sync(m, e);
		return;
	}
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		dlist_init(&e->lq_link);
		dlist_init(&e->q_link);
		dlist_init(&e->d_link);
		e->key = xstrdup(key);
		e->m = m;
		timers_setup(&e->dl_timer, manager_dl_on_timer, e);
		e->seen = m->gen[INF_WL];
		hmap_put(&m->wls, e->key, e);
	}
	e->owned = nw->meta.nowners > 0;
	wl_trim(nw);
	old = e->w;
	m->n_requeue_at += (nw->requeue_at_ms != 0) -
			   (old && old->requeue_at_ms != 0);
	if (!old ||
	    (!same_spec && !text_same(old->queue_name, nw->queue_name))) {
		old_lqe = e->lqe;
		wl_unlink_lq(e);
		if (nw->queue_name && *nw->queue_name) {
			char *lk = xasprintf("%s/%s", nw->meta.namespace,
					     nw->queue_name);

			wl_link_lq(e, manager_queues_lq_get(m, lk));
			free(lk);
		}
	}
	e->w = nw;
	if (old && m->o.metrics)
		ready_report(m, old, nw);
	FREE_AND_NULL(e->bad_rv);
	if (e->sent_rv && !text_same(e->sent_rv, rv))
		FREE_AND_NULL(e->sent_rv);
	if (m->fed) {
		if (e->forget_on_update) {
			sched_wl_forget(m->s, nw->meta.namespace,
					nw->meta.name);
			e->forget_on_update = false;
		}
		if (e->recheck_on_update) {
			sched_wl_recheck(m->s, nw->meta.namespace,
					 nw->meta.name);
			e->recheck_on_update = false;
		}
		manager_wl_resolve(m, e, true);
	}
	if (old) {
		workload_release(old);
		free(old);
	}
	if (old_lqe != e->lqe)
		manager_queues_lq_gc(m, old_lqe);
}

void manager_wl_drop(struct manager *m, struct wl_entry *e)
{
	struct lq_entry *l = e->lqe;

	if (m->wl_obs && !m->closing)
		m->wl_obs(m->wl_obs_ud, MANAGER_WL_DELETE, e->w);
	if (m->fed && e->in_sched) {
		sched_wl_remove(m->s, e->w->meta.namespace, e->w->meta.name);
		m->changed = true;
	}
	if (e->call) {
		/* the watch can bring a retention DELETE's effect before
		 * its reply, which cancelling drops: it happened */
		if (!m->closing && e->call_kind == WC_DEADLINE &&
		    e->dl_act.kind == DL_DELETE)
			manager_dl_deleted(m, e);
		kube_cancel(m->k, e->call);
		m->wl_inflight--;
		if (e->call_kind == WC_PENDING)
			m->pend_inflight--;
	}
	/* its eviction, waiting or cancelled, no longer holds anyone */
	wl_dequeue(m, e);
	victim_unlink(m, &e->chk_by_key);
	victim_unlink(m, &e->call_by_key);
	defer_del(m, e);
	manager_dl_drop(m, e);
	wl_unlink_lq(e);
	hmap_del(&m->wls, e->key);
	m->n_requeue_at -= e->w->requeue_at_ms != 0;
	workload_release(e->w);
	free(e->w);
	admission_release(&e->adm);
	free(e->bad_rv);
	free(e->want_reason);
	free(e->want_msg);
	free(e->admit_rv);
	free(e->chk_msg);
	free(e->chk_rv);
	free(e->chk_by_cq);
	free(e->chk_by_key);
	free(e->call_by_key);
	free(e->ev_cq);
	free(e->call_rv);
	free(e->sent_rv);
	free(e->key);
	free(e);
	manager_queues_lq_gc(m, l);
	manager_wl_pump(m);
}

void manager_wl_remove(struct manager *m, const char *key)
{
	struct wl_entry *e = hmap_get(&m->wls, key);

	if (e)
		manager_wl_drop(m, e);
}

void manager_wl_sweep(struct manager *m, uint64_t gen)
{
	struct wl_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->wls, &pos, NULL)))
		if (e->seen != gen)
			manager_wl_drop(m, e);
}
