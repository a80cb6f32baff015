/*
 * deadline: what Kueue's workload controller does with time, as pure
 * decisions (kueue-scheduler.md §1.5 and §6, kueue-api.md §7.2, §7.4):
 * the PodsReady timeout and recovery timeout, the requeue backoff after a
 * PodsReady timeout (requeueState), deactivation once the backoff limit
 * or the maximum execution time is exceeded (DeactivationTarget, then
 * spec.active=false), and the PodsReady condition a Job integration
 * derives from its pods.
 *
 * No clock and no randomness: now and the jitter draw are passed in, so
 * the same inputs give the same answer (tests use a fixed clock). The
 * caller (controller/manager_deadline.c) writes what the answer says and
 * asks again when the object changes or at the time the answer names.
 */
#ifndef MODEL_DEADLINE_H
#define MODEL_DEADLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "model/objects.h"

#define COND_PODS_READY "PodsReady"
#define COND_DEACTIVATION_TARGET "DeactivationTarget"

/* waitForPodsReady as the Configuration resolved it (config.h). */
struct deadline_policy {
	bool enabled;                /* waitForPodsReady on */
	int64_t timeout_ms;          /* timeout (>= 0) */
	int64_t recovery_timeout_ms; /* recoveryTimeout; < 0: none */
	bool has_limit;              /* backoffLimitCount set */
	int32_t backoff_limit;       /* backoffLimitCount (>= 0) */
	int64_t backoff_base_s;      /* backoffBaseSeconds */
	int64_t backoff_max_s;       /* backoffMaxSeconds; 0: no cap */
	/* objectRetentionPolicies.workloads.afterFinished: a finished
	 * workload is deleted this long after its Finished condition */
	bool has_after_finished;
	int64_t after_finished_ms;   /* >= 0 */
	/* objectRetentionPolicies.workloads.afterDeactivatedByKueue: the Job
	 * of a workload Kueue deactivated (spec.active=false, Evicted=True
	 * with a DeactivatedDueTo... reason) is deleted this long after the
	 * Evicted transition */
	bool has_after_deactivated;
	int64_t after_deactivated_ms; /* >= 0 */
};

enum deadline_kind {
	DL_NONE,         /* nothing to do and nothing to wait for */
	DL_WAIT,         /* nothing yet: ask again at at_ms */
	DL_SET_INACTIVE, /* DeactivationTarget=True on an active workload:
			    write spec.active=false */
	DL_TIMEOUT,      /* PodsReady timeout: Evicted=True PodsReadyTimeout
			    with message, requeueState {count, requeue_at} */
	DL_DEACTIVATE,   /* DeactivationTarget=True reason/message (the
			    backoff limit or the maximum execution time) */
	DL_BACKOFF_DONE, /* pending after its backoff: requeueAt cleared and
			    Requeued=True BackoffFinished */
	DL_CLEAR_STATE,  /* inactive without quota: requeueState cleared and
			    DeactivationTarget removed */
	DL_DELETE,       /* finished past afterFinished: delete it */
	DL_DELETE_JOB,   /* deactivated by Kueue past afterDeactivatedByKueue:
			    delete its Job (the Workload goes with it) */
};

struct deadline_action {
	enum deadline_kind kind;
	int64_t at_ms;        /* DL_WAIT: epoch ms to ask again */
	/* DL_TIMEOUT: the underlying cause ("WaitForStart" or
	 * "WaitForRecovery"). DL_DEACTIVATE: the DeactivationTarget reason
	 * ("RequeuingLimitExceeded", "MaximumExecutionTimeExceeded").
	 * Static strings. */
	const char *reason;
	const char *message;  /* DL_DEACTIVATE: the condition's message */
	int32_t count;        /* DL_TIMEOUT: requeueState.count to write */
	int64_t requeue_at_ms; /* DL_TIMEOUT: requeueState.requeueAt */
	bool max_exec;        /* DL_DEACTIVATE by maximum execution time:
				 accumulatedPast...Seconds is cleared and
				 the MaximumExecutionTimeExceeded event
				 posted */
};

/*
 * What w needs at now_ms under p (Kueue's workload Reconcile order):
 * finished -> none, or with afterFinished delete once it has passed since
 * the Finished transition (wait until then); active with DeactivationTarget -> set inactive;
 * a requeueAt in the future -> wait for it; pending after its backoff
 * (requeueAt passed, or Requeued=False PodsReadyTimeout) -> backoff done;
 * admitted, not evicted, PodsReady not True past its timeout (from the
 * Admitted transition, or for WaitForRecovery from that transition
 * against the recovery timeout) -> timeout, or deactivate once count+1
 * exceeds the backoff limit; admitted past maximumExecutionTimeSeconds
 * (counting accumulatedPast...Seconds) -> deactivate; otherwise wait for
 * the earliest of those times, or none. An inactive workload that holds
 * no quota and still carries a requeueState or DeactivationTarget gets
 * them cleared (one that holds quota gets that with its eviction).
 * jitter_u in [0, 1) is the jitter draw of the backoff.
 */
void deadline_eval(const struct workload *w, const struct deadline_policy *p,
		   int64_t now_ms, double jitter_u, struct deadline_action *a);

/*
 * The backoff before requeue number count (>= 1), in ms: Kueue's
 * wait.Backoff with factor 2 and jitter 1e-4: base, then doubled per
 * count and capped at max (the cap applies from the second on), then
 * plus jitter_u * 1e-4 of itself. Saturates rather than overflows.
 */
int64_t deadline_backoff_ms(const struct deadline_policy *p, int32_t count,
			    double jitter_u);

/*
 * The PodsReady condition a Job integration derives (Kueue's
 * generatePodsReadyCondition): not admitted -> False WaitForStart; pods
 * ready -> True Started (Recovered after a WaitForRecovery or
 * Recovered); not ready after being True or in WaitForRecovery -> False
 * WaitForRecovery; otherwise False WaitForStart. *reason and *msg are
 * static. pods_ready: ready + succeeded pods >= the pod set count.
 */
enum cond_status deadline_pods_ready_cond(const struct workload *w,
					  bool pods_ready, const char **reason,
					  const char **msg);

/*
 * Kueue's admitted-time bookkeeping when Admitted goes True -> False at
 * now_ms: the whole seconds it was admitted are added to
 * accumulatedPast...Seconds. No-op unless Admitted is True in w.
 */
void deadline_admitted_off(struct workload *w, int64_t now_ms);

#endif
