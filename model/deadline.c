/*
 * deadline: the workload controller's timed decisions (see deadline.h).
 */
#include "model/deadline.h"

#include <string.h>

#define JITTER 0.0001
#define BACKOFF_CEIL_MS ((int64_t)1 << 50) /* ~35,000 years */

static bool text_is(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

int64_t deadline_backoff_ms(const struct deadline_policy *p, int32_t count,
			    double jitter_u)
{
	int64_t d = p->backoff_base_s > 0 ? p->backoff_base_s * 1000 : 0;
	int64_t cap = p->backoff_max_s > 0 ? p->backoff_max_s * 1000 : 0;

	if (d > BACKOFF_CEIL_MS)
		d = BACKOFF_CEIL_MS;
	/* wait.Backoff.Step: the first step is the base itself; each next
	 * one doubles the last, capped (and stays at the cap) */
	for (int32_t i = 1; i < count; i++) {
		if (cap && d >= cap) {
			d = cap;
			break;
		}
		d = d * 2 > BACKOFF_CEIL_MS ? BACKOFF_CEIL_MS : d * 2;
		if (cap && d > cap)
			d = cap;
	}
	if (jitter_u > 0 && jitter_u < 1)
		d += (int64_t)((double)d * JITTER * jitter_u);
	return d;
}

enum cond_status deadline_pods_ready_cond(const struct workload *w,
					  bool pods_ready, const char **reason,
					  const char **msg)
{
	const struct condition *c = conditions_find(&w->conds,
						    COND_PODS_READY);
	static const char *not_ready = "Not all pods are ready or succeeded";
	static const char *recovering =
		"At least one pod has failed, waiting for recovery";

	if (!workload_is_admitted(w)) {
		*reason = "WaitForStart";
		*msg = not_ready;
		return COND_FALSE;
	}
	if (pods_ready) {
		*reason = c && (text_is(c->reason, "WaitForRecovery") ||
				text_is(c->reason, "Recovered"))
				  ? "Recovered"
				  : "Started";
		*msg = "All pods reached readiness and the workload is running";
		return COND_TRUE;
	}
	if (c && (c->status == COND_TRUE ||
		  text_is(c->reason, "WaitForRecovery"))) {
		*reason = "WaitForRecovery";
		*msg = recovering;
		return COND_FALSE;
	}
	*reason = "WaitForStart";
	*msg = not_ready;
	return COND_FALSE;
}

void deadline_admitted_off(struct workload *w, int64_t now_ms)
{
	const struct condition *a = conditions_find(&w->conds, "Admitted");
	int64_t d;

	if (!a || a->status != COND_TRUE)
		return;
	/* int32(now.Sub(lastTransitionTime).Seconds()): whole seconds */
	d = (now_ms - a->last_transition_ms) / 1000;
	if (d < 0)
		d = 0;
	w->accumulated_seconds = (w->has_accumulated ? w->accumulated_seconds
						     : 0) + d;
	w->has_accumulated = true;
}

/* Keeps the earliest time to ask again in a (DL_WAIT). */
static void wait_until(struct deadline_action *a, int64_t at)
{
	if (a->kind == DL_NONE || (a->kind == DL_WAIT && at < a->at_ms)) {
		a->kind = DL_WAIT;
		a->at_ms = at;
	}
}

/* The PodsReady timeout of an admitted, not evicted workload. */
static void eval_pods_ready(const struct workload *w,
			    const struct deadline_policy *p, int64_t now,
			    double u, struct deadline_action *a)
{
	const struct condition *pr = conditions_find(&w->conds,
						     COND_PODS_READY);
	const struct condition *adm = conditions_find(&w->conds, "Admitted");
	const char *cause;
	int64_t due;
	int32_t n;

	if (!p->enabled || !adm || adm->status != COND_TRUE)
		return;
	if (pr && pr->status == COND_TRUE)
		return;
	if (!pr || text_is(pr->reason, "WaitForStart") ||
	    text_is(pr->reason, "PodsReady")) {
		cause = "WaitForStart";
		due = adm->last_transition_ms + p->timeout_ms;
	} else if (text_is(pr->reason, "WaitForRecovery") &&
		   p->recovery_timeout_ms >= 0) {
		cause = "WaitForRecovery";
		due = pr->last_transition_ms + p->recovery_timeout_ms;
	} else {
		return;
	}
	if (now < due) {
		wait_until(a, due);
		return;
	}
	n = w->has_requeue_count ? w->requeue_count : 0;
	if (p->has_limit && (int64_t)n + 1 > p->backoff_limit) {
		a->kind = DL_DEACTIVATE;
		a->reason = "RequeuingLimitExceeded";
		a->message = "exceeding the maximum number of re-queuing "
			     "retries";
		return;
	}
	a->kind = DL_TIMEOUT;
	a->reason = cause;
	a->count = n + 1;
	a->requeue_at_ms = now + deadline_backoff_ms(p, n + 1, u);
	/* only moved forward (Kueue's SetRequeueState) */
	if (w->requeue_at_ms > a->requeue_at_ms)
		a->requeue_at_ms = w->requeue_at_ms;
}

/* maximumExecutionTimeSeconds of an admitted workload. */
static void eval_max_exec(const struct workload *w, int64_t now,
			  struct deadline_action *a)
{
	const struct condition *adm = conditions_find(&w->conds, "Admitted");
	int64_t left_ms;

	if (!w->has_max_exec || !adm || adm->status != COND_TRUE)
		return;
	left_ms = ((int64_t)w->max_exec_seconds -
		   (w->has_accumulated ? w->accumulated_seconds : 0)) * 1000 -
		  (now - adm->last_transition_ms);
	if (left_ms > 0) {
		wait_until(a, now + left_ms);
		return;
	}
	if (conditions_is_true(&w->conds, COND_DEACTIVATION_TARGET))
		return;
	a->kind = DL_DEACTIVATE;
	a->reason = "MaximumExecutionTimeExceeded";
	a->message = "exceeding the maximum execution time";
	a->max_exec = true;
}

/* afterDeactivatedByKueue: an inactive workload evicted because Kueue
 * deactivated it (Kueue's IsEvictedDueToDeactivationByKueue: Evicted=True
 * with a reason starting "DeactivatedDueTo"; a user's spec.active=false
 * gives reason Deactivated and is kept). */
static void eval_deactivated(const struct workload *w,
			     const struct deadline_policy *p, int64_t now,
			     struct deadline_action *a)
{
	const struct condition *ev = conditions_find(&w->conds, "Evicted");
	bool job = false;
	int64_t at;

	/* Kueue's Job reconciler does it: only a workload a Job owns */
	for (size_t i = 0; i < w->meta.nowners; i++)
		job |= w->meta.owners[i].controller &&
		       text_is(w->meta.owners[i].kind, "Job") &&
		       text_is(w->meta.owners[i].api_version, "batch/v1");
	if (!job || !p->has_after_deactivated || !ev ||
	    ev->status != COND_TRUE || !ev->reason ||
	    strncmp(ev->reason, "DeactivatedDueTo", 16) != 0)
		return;
	at = ev->last_transition_ms > INT64_MAX - p->after_deactivated_ms
		     ? INT64_MAX
		     : ev->last_transition_ms + p->after_deactivated_ms;
	if (now < at) {
		wait_until(a, at);
		return;
	}
	a->kind = DL_DELETE_JOB;
	a->reason = "Deleted";
	a->message = "Deleted job: deactivation retention period expired";
}

void deadline_eval(const struct workload *w, const struct deadline_policy *p,
		   int64_t now_ms, double jitter_u, struct deadline_action *a)
{
	const struct condition *rq, *ev;
	bool pending;

	memset(a, 0, sizeof(*a));
	a->kind = DL_NONE;
	if (workload_is_finished(w)) {
		const struct condition *fin = conditions_find(&w->conds,
							      "Finished");
		int64_t at;

		if (!p->has_after_finished || !fin)
			return;
		at = fin->last_transition_ms > INT64_MAX - p->after_finished_ms
			     ? INT64_MAX
			     : fin->last_transition_ms + p->after_finished_ms;
		if (now_ms >= at) {
			a->kind = DL_DELETE;
			a->reason = "Deleted";
			a->message = "Deleted finished workload due to elapsed "
				     "retention";
		} else {
			wait_until(a, at);
		}
		return;
	}
	pending = !workload_has_quota_reservation(w);
	if (!w->active) {
		if (pending && (w->has_requeue_count || w->requeue_at_ms ||
				conditions_find(&w->conds,
						COND_DEACTIVATION_TARGET)))
			a->kind = DL_CLEAR_STATE;
		else
			eval_deactivated(w, p, now_ms, a);
		return;
	}
	if (conditions_is_true(&w->conds, COND_DEACTIVATION_TARGET)) {
		a->kind = DL_SET_INACTIVE;
		return;
	}
	if (w->requeue_at_ms && now_ms < w->requeue_at_ms) {
		wait_until(a, w->requeue_at_ms);
		return;
	}
	rq = conditions_find(&w->conds, "Requeued");
	if (pending &&
	    (w->requeue_at_ms ||
	     (rq && rq->status == COND_FALSE &&
	      (text_is(rq->reason, "PodsReadyTimeout") ||
	       text_is(rq->reason, "AdmissionCheck"))))) {
		a->kind = DL_BACKOFF_DONE;
		return;
	}
	ev = conditions_find(&w->conds, "Evicted");
	if (!ev || ev->status != COND_TRUE) {
		eval_pods_ready(w, p, now_ms, jitter_u, a);
		if (a->kind != DL_NONE && a->kind != DL_WAIT)
			return;
	}
	eval_max_exec(w, now_ms, a);
}
