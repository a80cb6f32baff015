/*
 * manager_deadline: the workload controller's timed duties, Kueue's
 * workload Reconcile for waitForPodsReady and maximumExecutionTimeSeconds
 * (kueue-scheduler.md §1.5, §6; kueue-api.md §7.2, §7.4): model/deadline.h
 * decides, this file writes the answer and keeps one timer per workload
 * for the next deadline.
 *
 * The writes, each with the decided version as precondition:
 *   PodsReady timeout   Evicted=True PodsReadyTimeout, requeueState
 *                       {count+1, requeueAt}, schedulingStats; the Job
 *                       integration then stops the Job and releases the
 *                       quota (Requeued=False PodsReadyTimeout), and sched
 *                       keeps the workload parked until requeueAt;
 *   backoff finished    Requeued=True BackoffFinished and requeueAt
 *                       cleared (count kept): sched queues it again
 *                       (Kueue clears requeueAt, then sets Requeued in a
 *                       second reconcile: one write here);
 *   deactivation        DeactivationTarget=True with the cause (the
 *                       backoff limit, or the maximum execution time,
 *                       which also clears accumulatedPast...Seconds and
 *                       posts the MaximumExecutionTimeExceeded event),
 *                       then spec.active=false on the object itself;
 *                       sched then evicts it DeactivatedDueTo<Cause>,
 *                       which clears the target and the requeue state;
 *   inactive leftovers  requeueState and DeactivationTarget cleared on an
 *                       inactive workload that holds no quota.
 * After a successful write the entry decides nothing more until its
 * version moves (the informer brings the write's own effect). Every
 * input is on the object, so a restarted manager picks up each deadline
 * where it was: requeueAt is honoured, never reset.
 *
 * JSON: merge-patch bodies are assembled here, as in manager_wl.c.
 */
#include "controller/manager_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "controller/kube.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "model/codec.h"

#define RETRY_MS 1000
#define RETRY_MAX_MS (5 * 60 * 1000)

/* The jitter draw of a backoff: a hash of the uid and the count, so a
 * retried write asks for the same requeueAt. */
static double jitter_of(const struct workload *w)
{
	uint32_t h = 2166136261u;
	const char *p = w->meta.uid ? w->meta.uid : "";

	for (; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	h = (h ^ (uint32_t)w->requeue_count) * 16777619u;
	return (double)h / 4294967296.0;
}

void manager_dl_check(struct manager *m, struct wl_entry *e)
{
	struct deadline_action a;
	int64_t wall;

	if (!manager_leads(m) || m->closing || m->draining)
		return;
	if (e->call &&
	    (e->call_kind == WC_DEADLINE || e->call_kind == WC_SPEC))
		return; /* its end decides again */
	if (e->dl_sent_rv &&
	    text_same(e->dl_sent_rv, e->w->meta.resource_version))
		return;
	FREE_AND_NULL(e->dl_sent_rv);
	wall = loop_wall_ms(m->l);
	deadline_eval(e->w, &m->o.ready, wall, jitter_of(e->w), &a);
	e->dl_pending = false;
	switch (a.kind) {
	case DL_NONE:
		loop_timer_cancel(m->l, &e->dl_timer);
		return;
	case DL_WAIT:
		/* one ms late rather than early: the answer at at_ms acts */
		loop_timer_arm(m->l, &e->dl_timer, a.at_ms - wall + 1);
		return;
	case DL_SET_INACTIVE:
	case DL_TIMEOUT:
	case DL_DEACTIVATE:
	case DL_BACKOFF_DONE:
	case DL_CLEAR_STATE:
	case DL_DELETE:
	case DL_DELETE_JOB:
		break;
	}
	loop_timer_cancel(m->l, &e->dl_timer);
	e->dl_act = a;
	set_str(&e->dl_rv, e->w->meta.resource_version);
	e->dl_pending = true;
}

void manager_dl_on_timer(void *ud, int64_t now_ms)
{
	struct wl_entry *e = ud;
	struct manager *m = e->m;

	(void)now_ms;
	FREE_AND_NULL(e->dl_sent_rv); /* a retry after a failed write */
	manager_wl_resolve(m, e, false);
	manager_wl_pump(m);
}

/* The requeueState of a status patch: {count, requeueAt} or, with
 * at 0, requeueAt removed and the count kept. */
static json_t *requeue_state(int32_t count, bool has_count, int64_t at)
{
	struct workload w;
	json_t *enc, *rq;

	memset(&w, 0, sizeof(w));
	w.has_requeue_count = has_count;
	w.requeue_count = count;
	w.requeue_at_ms = at;
	enc = codec_encode_workload_status(&w, API_V1BETA2);
	rq = json_object_get(enc, "requeueState");
	rq = json_is_object(rq) ? json_copy(rq) : json_object();
	json_decref(enc);
	if (!at)
		json_object_set_new(rq, "requeueAt", json_null());
	return rq;
}

void manager_dl_send(struct manager *m, struct wl_entry *e)
{
	const struct deadline_action *a = &e->dl_act;
	const struct workload *w = e->w;
	int64_t now = loop_wall_ms(m->l), gen = w->meta.generation;
	struct workload tmp;
	const struct condition *rq;
	json_t *st, *enc, *body;
	char *msg;

	e->dl_pending = false;
	if (a->kind == DL_DELETE) {
		manager_wl_delete(m, e, e->dl_rv);
		return;
	}
	if (a->kind == DL_DELETE_JOB) {
		if (!manager_wl_delete_job(m, e))
			BUG("afterDeactivatedByKueue without a Job owner");
		return;
	}
	if (a->kind == DL_SET_INACTIVE) {
		body = json_pack("{s:{s:s}, s:{s:b}}", "metadata",
				 "resourceVersion", e->dl_rv, "spec",
				 "active", 0);
		manager_wl_submit(m, e, body, WC_SPEC, e->dl_rv, false);
		return;
	}
	st = json_object();
	memset(&tmp, 0, sizeof(tmp));
	conditions_copy(&tmp.conds, &w->conds);
	switch (a->kind) {
	case DL_TIMEOUT:
		msg = xasprintf("Exceeded the PodsReady timeout %s", e->key);
		conditions_set(&tmp.conds, "Evicted", COND_TRUE,
			       "PodsReadyTimeout", msg, gen, now);
		free(msg);
		e->dl_first = manager_wl_evictions_inc(&tmp, w,
						       "PodsReadyTimeout",
						       a->reason);
		json_object_set_new(st, "requeueState",
				    requeue_state(a->count, true,
						  a->requeue_at_ms));
		if (!e->owned) {
			/* nothing runs for it: the reservation goes now */
			msg = xasprintf("Exceeded the PodsReady timeout %s",
					e->key);
			tmp.has_accumulated = w->has_accumulated;
			tmp.accumulated_seconds = w->accumulated_seconds;
			manager_wl_clear_conds(&tmp, "PodsReadyTimeout", msg,
					       gen, now);
			free(msg);
			json_object_set_new(st, "admission", json_null());
		}
		break;
	case DL_DEACTIVATE:
		conditions_set(&tmp.conds, COND_DEACTIVATION_TARGET,
			       COND_TRUE, a->reason, a->message, gen, now);
		if (a->max_exec && w->has_accumulated)
			json_object_set_new(
				st, "accumulatedPastExecutionTimeSeconds",
				json_null());
		break;
	case DL_BACKOFF_DONE:
		rq = conditions_find(&w->conds, "Requeued");
		if (rq && rq->status == COND_FALSE &&
		    (text_same(rq->reason, "PodsReadyTimeout") ||
		     text_same(rq->reason, "AdmissionCheck")))
			conditions_set(&tmp.conds, "Requeued", COND_TRUE,
				       "BackoffFinished",
				       "The workload backoff was finished",
				       gen, now);
		if (w->requeue_at_ms)
			json_object_set_new(st, "requeueState",
					    requeue_state(w->requeue_count,
							  w->has_requeue_count,
							  0));
		break;
	case DL_CLEAR_STATE:
		conditions_remove(&tmp.conds, COND_DEACTIVATION_TARGET);
		if (w->has_requeue_count || w->requeue_at_ms)
			json_object_set_new(st, "requeueState", json_null());
		break;
	case DL_NONE:
	case DL_WAIT:
	case DL_SET_INACTIVE:
	case DL_DELETE:
	case DL_DELETE_JOB:
	default:
		BUG("deadline write of kind %d", (int)a->kind);
	}
	enc = codec_encode_workload_status(&tmp, API_V1BETA2);
	/* the whole list (a merge patch replaces it), empty included */
	if (json_object_get(enc, "conditions"))
		json_object_set(st, "conditions",
				json_object_get(enc, "conditions"));
	else
		json_object_set_new(st, "conditions", json_array());
	if (a->kind == DL_TIMEOUT)
		json_object_set(st, "schedulingStats",
				json_object_get(enc, "schedulingStats"));
	if (a->kind == DL_TIMEOUT && tmp.has_accumulated &&
	    json_object_get(enc, "accumulatedPastExecutionTimeSeconds"))
		json_object_set(st, "accumulatedPastExecutionTimeSeconds",
				json_object_get(enc,
					"accumulatedPastExecutionTimeSeconds"));
	json_decref(enc);
	workload_release(&tmp);
	body = json_pack("{s:{s:s}, s:o}", "metadata", "resourceVersion",
			 e->dl_rv, "status", st);
	m->stats.check_writes++;
	manager_wl_evict_note(e);
	manager_wl_submit(m, e, body, WC_DEADLINE, e->dl_rv, true);
}

void manager_dl_deleted(struct manager *m, struct wl_entry *e)
{
	const char *name;
	char *ns = split_key(e->key, &name);

	log_msg(LOG_INFO, "workload", ns, name,
		"deleted: finished, its retention elapsed");
	manager_wl_event(m, e, EVENT_NORMAL, e->dl_act.reason, "%s",
			 e->dl_act.message);
	free(ns);
}

/* afterDeactivatedByKueue: the Job is gone (the garbage collector takes
 * the Workload); Kueue's event goes to the Job. */
static void job_deleted(struct manager *m, struct wl_entry *e,
			const char *ns, const char *name)
{
	const struct owner_ref *o = manager_wl_job_owner(e->w);
	struct event_object obj = { .api_version = "batch/v1", .kind = "Job",
				    .ns = ns };

	log_msg(LOG_INFO, "workload", ns, name,
		"its Job %s deleted: deactivated by Kueue, its retention "
		"elapsed", o && o->name ? o->name : "?");
	if (!o || !m->ev)
		return;
	obj.name = o->name;
	obj.uid = o->uid;
	event_record(m->ev, &obj, EVENT_NORMAL, e->dl_act.reason,
		     e->dl_act.message);
}

/* A timed write succeeded: its log line, events and metrics. */
static void report(struct manager *m, struct wl_entry *e, const char *ns,
		   const char *name)
{
	const struct deadline_action *a = &e->dl_act;
	char *msg;

	switch (a->kind) {
	case DL_TIMEOUT:
		m->stats.evicted++;
		msg = xasprintf("Exceeded the PodsReady timeout %s", e->key);
		manager_wl_evict_report(m, e, "PodsReadyTimeout",
					"PodsReadyTimeout", a->reason, msg,
					e->dl_first);
		free(msg);
		log_msg(LOG_INFO, "workload", ns, name,
			"evicted: PodsReadyTimeout (%s), requeue %d after "
			"%.1fs", a->reason, (int)a->count,
			(double)(a->requeue_at_ms - loop_wall_ms(m->l)) /
				1000.0);
		break;
	case DL_DEACTIVATE:
		log_msg(LOG_INFO, "workload", ns, name,
			"to be deactivated: %s", a->message);
		if (a->max_exec)
			manager_wl_event(m, e, EVENT_WARNING,
					 "MaximumExecutionTimeExceeded",
					 "The maximum execution time (%ds) "
					 "exceeded",
					 (int)e->w->max_exec_seconds);
		break;
	case DL_SET_INACTIVE:
		log_msg(LOG_INFO, "workload", ns, name,
			"deactivated (spec.active=false)");
		break;
	case DL_BACKOFF_DONE:
		log_msg(LOG_DEBUG, "workload", ns, name,
			"backoff finished: requeued");
		break;
	case DL_DELETE:
		manager_dl_deleted(m, e);
		break;
	case DL_DELETE_JOB:
		job_deleted(m, e, ns, name);
		break;
	case DL_CLEAR_STATE:
	case DL_NONE:
	case DL_WAIT:
	default:
		break;
	}
}

void manager_dl_done(struct manager *m, struct wl_entry *e,
		     const struct kube_reply *r)
{
	const char *name;
	char *ns = split_key(e->key, &name);

	if (r->outcome == KUBE_OK) {
		set_str(&e->dl_sent_rv, e->call_rv);
		report(m, e, ns, name);
		e->dl_retry_ms = 0;
	} else if (r->code != 409 && r->code != 404) {
		/* 409: the newer version decides again when it arrives.
		 * Others: again after a delay doubling up to RETRY_MAX_MS
		 * (a lasting 403 or 422 is not retried every second) */
		e->dl_retry_ms = e->dl_retry_ms ? e->dl_retry_ms * 2 : RETRY_MS;
		if (e->dl_retry_ms > RETRY_MAX_MS)
			e->dl_retry_ms = RETRY_MAX_MS;
		log_msg(LOG_WARN, "workload", ns, name,
			"timed write failed (%ld), retrying in %lld ms: %s",
			r->code, (long long)e->dl_retry_ms, r->message);
		loop_timer_arm(m->l, &e->dl_timer, e->dl_retry_ms);
	}
	/* a version that arrived while the write was in flight was not
	 * looked at (manager_dl_check waits for the write): now */
	if (!text_same(e->call_rv, e->w->meta.resource_version))
		manager_dl_check(m, e);
	free(ns);
}

void manager_dl_drop(struct manager *m, struct wl_entry *e)
{
	loop_timer_cancel(m->l, &e->dl_timer);
	FREE_AND_NULL(e->dl_rv);
	FREE_AND_NULL(e->dl_sent_rv);
	e->dl_pending = false;
}
