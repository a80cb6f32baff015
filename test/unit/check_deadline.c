/*
 * Suite "deadline": the workload controller's timed decisions
 * (model/deadline.h) on plain structs and a fixed clock: PodsReady and
 * recovery timeouts, the requeue backoff and its limit, the maximum
 * execution time, and the PodsReady condition of the Job integration.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/deadline.h"
#include "model/objects.h"
#include "suites.h"
#include "test/support/support.h"

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
#define T0 1700000000000LL /* the fixed clock's origin */
#define S 1000LL

static struct deadline_policy policy(void)
{
	return (struct deadline_policy){
		.enabled = true, .timeout_ms = 300 * S,
		.recovery_timeout_ms = 60 * S, .backoff_base_s = 60,
		.backoff_max_s = 3600 };
}

static void cond(struct workload *w, const char *type, enum cond_status st,
		 const char *reason, int64_t at)
{
	conditions_set(&w->conds, type, st, reason, "m", 1, at);
}

/* An admitted workload: QuotaReserved and Admitted True at t. */
static void admitted(struct workload *w, int64_t t)
{
	memset(w, 0, sizeof(*w));
	w->active = true;
	w->has_admission = true;
	cond(w, "QuotaReserved", COND_TRUE, "QuotaReserved", t);
	cond(w, "Admitted", COND_TRUE, "Admitted", t);
}

START_TEST(backoff_sequence)
{
	struct deadline_policy p = policy();

	ck_assert_int_eq(deadline_backoff_ms(&p, 1, 0), 60 * S);
	ck_assert_int_eq(deadline_backoff_ms(&p, 2, 0), 120 * S);
	ck_assert_int_eq(deadline_backoff_ms(&p, 3, 0), 240 * S);
	ck_assert_int_eq(deadline_backoff_ms(&p, 6, 0), 1920 * S);
	ck_assert_int_eq(deadline_backoff_ms(&p, 7, 0), 3600 * S);
	ck_assert_int_eq(deadline_backoff_ms(&p, 40, 0), 3600 * S);
	ck_assert_int_eq(deadline_backoff_ms(&p, INT32_MAX, 0), 3600 * S);
	/* jitter: at most 1e-4 of the step */
	ck_assert_int_eq(deadline_backoff_ms(&p, 1, 0.5), 60 * S + 3);
	ck_assert_int_ge(deadline_backoff_ms(&p, 2, 0.999999), 120 * S);
	ck_assert_int_lt(deadline_backoff_ms(&p, 2, 0.999999), 120 * S + 12);
	/* a base above the cap: the first step is the base (wait.Backoff
	 * caps the next step, not the first) */
	p.backoff_base_s = 100;
	p.backoff_max_s = 50;
	ck_assert_int_eq(deadline_backoff_ms(&p, 1, 0), 100 * S);
	ck_assert_int_eq(deadline_backoff_ms(&p, 2, 0), 50 * S);
	/* no cap: doubling saturates instead of overflowing */
	p.backoff_base_s = 1;
	p.backoff_max_s = 0;
	ck_assert_int_eq(deadline_backoff_ms(&p, 11, 0), 1024 * S);
	ck_assert_int_gt(deadline_backoff_ms(&p, 200, 0), 0);
	/* base 0: requeue at once */
	p.backoff_base_s = 0;
	ck_assert_int_eq(deadline_backoff_ms(&p, 5, 0.9), 0);
}
END_TEST

START_TEST(timeout_from_admission)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;

	admitted(&w, T0);
	deadline_eval(&w, &p, T0 + 10 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 300 * S);
	/* WaitForStart written by the Job integration: same clock */
	cond(&w, COND_PODS_READY, COND_FALSE, "WaitForStart", T0 + 5 * S);
	deadline_eval(&w, &p, T0 + 299 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 300 * S);
	deadline_eval(&w, &p, T0 + 300 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_TIMEOUT);
	ck_assert_str_eq(a.reason, "WaitForStart");
	ck_assert_int_eq(a.count, 1);
	ck_assert_int_eq(a.requeue_at_ms, T0 + 360 * S);
	/* the second timeout: count 2, twice the wait */
	w.has_requeue_count = true;
	w.requeue_count = 1;
	deadline_eval(&w, &p, T0 + 400 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_TIMEOUT);
	ck_assert_int_eq(a.count, 2);
	ck_assert_int_eq(a.requeue_at_ms, T0 + 520 * S);
	/* ready: nothing to wait for */
	cond(&w, COND_PODS_READY, COND_TRUE, "Started", T0 + 30 * S);
	deadline_eval(&w, &p, T0 + 400 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	workload_release(&w);
}
END_TEST

START_TEST(timeout_off_or_evicted)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;

	admitted(&w, T0);
	p.enabled = false;
	deadline_eval(&w, &p, T0 + 1000 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	p.enabled = true;
	/* already evicted (its Job being stopped): no second eviction */
	cond(&w, "Evicted", COND_TRUE, "Preempted", T0 + 1 * S);
	deadline_eval(&w, &p, T0 + 1000 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	/* quota reserved, not admitted: not timed */
	workload_release(&w);
	admitted(&w, T0);
	cond(&w, "Admitted", COND_FALSE, "NoReservation", T0);
	deadline_eval(&w, &p, T0 + 1000 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	/* finished: nothing */
	cond(&w, "Finished", COND_TRUE, "Succeeded", T0);
	deadline_eval(&w, &p, T0 + 1000 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	workload_release(&w);
}
END_TEST

START_TEST(recovery_timeout)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;

	admitted(&w, T0);
	cond(&w, COND_PODS_READY, COND_FALSE, "WaitForRecovery", T0 + 500 * S);
	/* measured from the WaitForRecovery transition, not admission */
	deadline_eval(&w, &p, T0 + 520 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 560 * S);
	deadline_eval(&w, &p, T0 + 560 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_TIMEOUT);
	ck_assert_str_eq(a.reason, "WaitForRecovery");
	/* no recovery timeout: a recovering workload is not timed */
	p.recovery_timeout_ms = -1;
	deadline_eval(&w, &p, T0 + 100000 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	workload_release(&w);
}
END_TEST

START_TEST(backoff_limit)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;

	p.has_limit = true;
	p.backoff_limit = 2;
	admitted(&w, T0);
	w.has_requeue_count = true;
	w.requeue_count = 1;
	deadline_eval(&w, &p, T0 + 300 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_TIMEOUT);
	ck_assert_int_eq(a.count, 2);
	w.requeue_count = 2;
	deadline_eval(&w, &p, T0 + 300 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_DEACTIVATE);
	ck_assert_str_eq(a.reason, "RequeuingLimitExceeded");
	ck_assert_str_eq(a.message, "exceeding the maximum number of "
				    "re-queuing retries");
	ck_assert(!a.max_exec);
	/* limit 0: the first timeout deactivates */
	p.backoff_limit = 0;
	w.has_requeue_count = false;
	w.requeue_count = 0;
	deadline_eval(&w, &p, T0 + 300 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_DEACTIVATE);
	/* DeactivationTarget written: spec.active goes false next */
	cond(&w, COND_DEACTIVATION_TARGET, COND_TRUE,
	     "RequeuingLimitExceeded", T0 + 300 * S);
	deadline_eval(&w, &p, T0 + 301 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_SET_INACTIVE);
	workload_release(&w);
}
END_TEST

START_TEST(backoff_done)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;

	memset(&w, 0, sizeof(w));
	w.active = true;
	cond(&w, "QuotaReserved", COND_FALSE, "Pending", T0);
	cond(&w, "Evicted", COND_TRUE, "PodsReadyTimeout", T0);
	cond(&w, "Requeued", COND_FALSE, "PodsReadyTimeout", T0);
	w.has_requeue_count = true;
	w.requeue_count = 1;
	w.requeue_at_ms = T0 + 60 * S;
	deadline_eval(&w, &p, T0 + 59 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 60 * S);
	deadline_eval(&w, &p, T0 + 60 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_BACKOFF_DONE);
	/* requeueAt gone (a restart, or Kueue's first step) but still
	 * Requeued=False: done too */
	w.requeue_at_ms = 0;
	deadline_eval(&w, &p, T0 + 61 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_BACKOFF_DONE);
	/* written: nothing more */
	cond(&w, "Requeued", COND_TRUE, "BackoffFinished", T0 + 61 * S);
	deadline_eval(&w, &p, T0 + 62 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	/* Requeued=False for another reason is not a backoff */
	cond(&w, "Requeued", COND_FALSE, "ClusterQueueStopped", T0 + 63 * S);
	deadline_eval(&w, &p, T0 + 64 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	workload_release(&w);
}
END_TEST

START_TEST(inactive_cleared)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;

	memset(&w, 0, sizeof(w));
	w.active = false;
	w.has_requeue_count = true;
	w.requeue_count = 3;
	deadline_eval(&w, &p, T0, 0, &a);
	ck_assert_int_eq(a.kind, DL_CLEAR_STATE);
	/* holding quota: its eviction write clears it, not this */
	w.has_admission = true;
	cond(&w, "QuotaReserved", COND_TRUE, "QuotaReserved", T0);
	deadline_eval(&w, &p, T0, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	workload_release(&w);
	memset(&w, 0, sizeof(w));
	w.active = false;
	deadline_eval(&w, &p, T0, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	cond(&w, COND_DEACTIVATION_TARGET, COND_TRUE, "X", T0);
	deadline_eval(&w, &p, T0, 0, &a);
	ck_assert_int_eq(a.kind, DL_CLEAR_STATE);
	workload_release(&w);
}
END_TEST

/* objectRetentionPolicies.workloads.afterFinished: a finished workload
 * waits until the retention has passed since Finished, then is deleted;
 * without the setting it is kept. */
START_TEST(retention_after_finished)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;

	admitted(&w, T0);
	cond(&w, "Finished", COND_TRUE, "Succeeded", T0 + 10 * S);
	deadline_eval(&w, &p, T0 + 20 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	p.has_after_finished = true;
	p.after_finished_ms = 60 * S;
	deadline_eval(&w, &p, T0 + 20 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 70 * S);
	deadline_eval(&w, &p, T0 + 70 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_DELETE);
	ck_assert_str_eq(a.reason, "Deleted");
	ck_assert_str_eq(a.message,
			 "Deleted finished workload due to elapsed retention");
	/* 0s: at once; and the waitForPodsReady switch does not matter */
	p.after_finished_ms = 0;
	p.enabled = false;
	deadline_eval(&w, &p, T0 + 10 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_DELETE);
	workload_release(&w);
}
END_TEST

/* objectRetentionPolicies.workloads.afterDeactivatedByKueue: the Job of
 * a workload Kueue deactivated (Evicted=True DeactivatedDueTo...) is
 * deleted once the retention has passed since the eviction; a user's
 * deactivation, a workload no Job owns, pending state to clear first,
 * and no setting keep it. */
START_TEST(retention_after_deactivated)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;
	struct owner_ref *o;

	memset(&w, 0, sizeof(w));
	w.active = false;
	cond(&w, "Evicted", COND_TRUE,
	     "DeactivatedDueToRequeuingLimitExceeded", T0);
	p.has_after_deactivated = true;
	p.after_deactivated_ms = 30 * S;
	deadline_eval(&w, &p, T0 + 40 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE); /* no Job owns it */
	o = calloc(1, sizeof(*o));
	ck_assert_ptr_nonnull(o);
	o->api_version = strdup("batch/v1");
	o->kind = strdup("Job");
	o->name = strdup("train");
	o->uid = strdup("u1");
	o->controller = true;
	w.meta.owners = o;
	w.meta.nowners = 1;
	deadline_eval(&w, &p, T0 + 10 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 30 * S);
	deadline_eval(&w, &p, T0 + 30 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_DELETE_JOB);
	ck_assert_str_eq(a.reason, "Deleted");
	ck_assert_str_eq(a.message,
			 "Deleted job: deactivation retention period expired");
	/* its requeueState is cleared first */
	w.has_requeue_count = true;
	w.requeue_count = 2;
	deadline_eval(&w, &p, T0 + 30 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_CLEAR_STATE);
	w.has_requeue_count = false;
	/* without the setting it is kept */
	p.has_after_deactivated = false;
	deadline_eval(&w, &p, T0 + 30 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	p.has_after_deactivated = true;
	/* a user's spec.active=false: reason Deactivated, kept */
	cond(&w, "Evicted", COND_TRUE, "Deactivated", T0);
	deadline_eval(&w, &p, T0 + 30 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	/* the maximum execution time's deactivation counts too */
	cond(&w, "Evicted", COND_TRUE,
	     "DeactivatedDueToMaximumExecutionTimeExceeded", T0);
	deadline_eval(&w, &p, T0 + 30 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_DELETE_JOB);
	/* not evicted (yet): nothing */
	cond(&w, "Evicted", COND_FALSE,
	     "DeactivatedDueToMaximumExecutionTimeExceeded", T0);
	deadline_eval(&w, &p, T0 + 30 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_NONE);
	workload_release(&w);
}
END_TEST

START_TEST(max_exec)
{
	struct deadline_policy p = policy();
	struct workload w;
	struct deadline_action a;

	p.enabled = false; /* max exec does not need waitForPodsReady */
	admitted(&w, T0);
	w.has_max_exec = true;
	w.max_exec_seconds = 100;
	w.has_accumulated = true;
	w.accumulated_seconds = 40;
	deadline_eval(&w, &p, T0 + 10 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 60 * S);
	deadline_eval(&w, &p, T0 + 60 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_DEACTIVATE);
	ck_assert_str_eq(a.reason, "MaximumExecutionTimeExceeded");
	ck_assert_str_eq(a.message, "exceeding the maximum execution time");
	ck_assert(a.max_exec);
	/* the earlier of the two deadlines is waited for */
	p.enabled = true;
	p.timeout_ms = 30 * S;
	deadline_eval(&w, &p, T0 + 10 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 30 * S);
	cond(&w, COND_PODS_READY, COND_TRUE, "Started", T0 + 5 * S);
	deadline_eval(&w, &p, T0 + 10 * S, 0, &a);
	ck_assert_int_eq(a.kind, DL_WAIT);
	ck_assert_int_eq(a.at_ms, T0 + 60 * S);
	workload_release(&w);
}
END_TEST

START_TEST(pods_ready_condition)
{
	struct workload w;
	const char *reason, *msg;

	memset(&w, 0, sizeof(w));
	w.active = true;
	/* not admitted: WaitForStart whatever the pods say */
	ck_assert_int_eq(deadline_pods_ready_cond(&w, true, &reason, &msg),
			 COND_FALSE);
	ck_assert_str_eq(reason, "WaitForStart");
	ck_assert_str_eq(msg, "Not all pods are ready or succeeded");
	workload_release(&w);
	admitted(&w, T0);
	ck_assert_int_eq(deadline_pods_ready_cond(&w, false, &reason, &msg),
			 COND_FALSE);
	ck_assert_str_eq(reason, "WaitForStart");
	ck_assert_int_eq(deadline_pods_ready_cond(&w, true, &reason, &msg),
			 COND_TRUE);
	ck_assert_str_eq(reason, "Started");
	ck_assert_str_eq(msg,
			 "All pods reached readiness and the workload is running");
	cond(&w, COND_PODS_READY, COND_TRUE, "Started", T0);
	ck_assert_int_eq(deadline_pods_ready_cond(&w, false, &reason, &msg),
			 COND_FALSE);
	ck_assert_str_eq(reason, "WaitForRecovery");
	ck_assert_str_eq(msg,
			 "At least one pod has failed, waiting for recovery");
	cond(&w, COND_PODS_READY, COND_FALSE, "WaitForRecovery", T0);
	ck_assert_int_eq(deadline_pods_ready_cond(&w, false, &reason, &msg),
			 COND_FALSE);
	ck_assert_str_eq(reason, "WaitForRecovery");
	ck_assert_int_eq(deadline_pods_ready_cond(&w, true, &reason, &msg),
			 COND_TRUE);
	ck_assert_str_eq(reason, "Recovered");
	cond(&w, COND_PODS_READY, COND_TRUE, "Recovered", T0);
	ck_assert_int_eq(deadline_pods_ready_cond(&w, true, &reason, &msg),
			 COND_TRUE);
	ck_assert_str_eq(reason, "Recovered");
	workload_release(&w);
}
END_TEST

START_TEST(admitted_off)
{
	struct workload w;

	admitted(&w, T0);
	deadline_admitted_off(&w, T0 + 12999);
	ck_assert(w.has_accumulated);
	ck_assert_int_eq(w.accumulated_seconds, 12);
	deadline_admitted_off(&w, T0 + 20000);
	ck_assert_int_eq(w.accumulated_seconds, 32);
	cond(&w, "Admitted", COND_FALSE, "NoReservation", T0 + 20000);
	deadline_admitted_off(&w, T0 + 90000);
	ck_assert_int_eq(w.accumulated_seconds, 32);
	workload_release(&w);
}
END_TEST

Suite *deadline_suite(void)
{
	Suite *s = suite_create("deadline");
	TCase *tc = tcase_create("backoff");

	tcase_add_test(tc, backoff_sequence);
	tcase_add_test(tc, backoff_limit);
	tcase_add_test(tc, backoff_done);
	suite_add_tcase(s, tc);

	tc = tcase_create("timeouts");
	tcase_add_test(tc, timeout_from_admission);
	tcase_add_test(tc, timeout_off_or_evicted);
	tcase_add_test(tc, recovery_timeout);
	tcase_add_test(tc, inactive_cleared);
	tcase_add_test(tc, max_exec);
	tcase_add_test(tc, retention_after_finished);
	tcase_add_test(tc, retention_after_deactivated);
	suite_add_tcase(s, tc);

	tc = tcase_create("conditions");
	tcase_add_test(tc, pods_ready_condition);
	tcase_add_test(tc, admitted_off);
	suite_add_tcase(s, tc);
	return s;
}
