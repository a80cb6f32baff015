/*
 * jobrunner: plays kubelet and the Job controller for batch/v1 Jobs in
 * the devserver (k8s-api.md §13), so queues drain in tests, demos and
 * benchmarks. No Pods are created; the Job's status tells the story as
 * the 1.32 Job controller writes it:
 *
 *   suspended    active 0, ready 0, condition Suspended=True
 *                (JobSuspended, "Job suspended"); startTime stays, as
 *                the 1.32 controller leaves it (KEP-5440 clears it later).
 *                With the annotation cueue.dev/stop-delay (a Go
 *                duration) a running Job's pods stay active that long
 *                after the suspension (the Suspended condition's time),
 *                as when the Job controller is slow to delete them: the
 *                window in which an evicted Workload must keep its quota
 *   running      startTime, active = ready = min(parallelism,
 *                completions - succeeded); resuming a suspended Job sets
 *                Suspended=False (JobResumed, "Job resumed") and restarts
 *                startTime and the runtime clock
 *   after the    succeeded = completions (parallelism when completions is
 *   runtime      unset), active/ready 0, completionTime, conditions
 *                SuccessCriteriaMet then Complete (CompletionsReached)
 *   failing      with the annotation cueue.dev/fail: "true": failed =
 *                active, conditions FailureTarget then Failed
 *                (BackoffLimitExceeded)
 *
 * The runtime is --job-runtime (api_job_runtime_ms; 5 s when <= 0),
 * unless the Job carries the annotation cueue.dev/runtime, a Go duration
 * ("2s", "150ms", "1m30s"). Finished Jobs are left alone; after a restart
 * with a data dir, running Jobs finish at startTime + runtime.
 *
 * One thread follows the Job events of the store; a timer heap holds
 * the running Jobs' finish times, so thousands of Jobs cost no thread
 * each. Status is written with a merge patch on the status subresource
 * carrying a resourceVersion precondition, re-planned on 409.
 */
#ifndef DEVSERVER_JOBRUNNER_H
#define DEVSERVER_JOBRUNNER_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/errors.h"

struct api;
struct jobrunner;

#define JOBRUNNER_DEFAULT_RUNTIME_MS 5000
#define JOBRUNNER_RUNTIME_ANNOTATION "cueue.dev/runtime"
#define JOBRUNNER_FAIL_ANNOTATION "cueue.dev/fail"
#define JOBRUNNER_STOP_DELAY_ANNOTATION "cueue.dev/stop-delay"

/*
 * Starts the runner's thread on a (borrowed; it must outlive
 * jobrunner_stop). Returns new, or NULL + err.
 */
struct jobrunner *jobrunner_start(struct api *a, struct err *err);

/* Stops the thread, waits for it and frees r (NULL is a no-op). Call it
 * before api_free. */
void jobrunner_stop(struct jobrunner *r);

/*
 * What the runner decides for one Job at now_ms: the pure core of the
 * runner (no clock, no I/O), exposed for tests.
 */
struct jobrunner_plan {
	json_t *status;   /* new: the status merge patch; NULL: no write */
	int64_t wake_ms;  /* plan again at this time; 0: only on change */
	int64_t start_ms; /* the start the plan assumes (0: not running) */
	bool done;        /* finished or being deleted: forget the Job */
};

/*
 * Plans job (borrowed, batch/v1 JSON) at now_ms. runtime_ms is the
 * default runtime; start_hint_ms is the precise start a previous plan
 * returned (0: none), used while status.startTime still names its second.
 * Fills out; the caller releases out->status.
 */
void jobrunner_plan_job(const json_t *job, int64_t now_ms, int64_t runtime_ms,
			int64_t start_hint_ms, struct jobrunner_plan *out);

/* Go time.ParseDuration for non-negative durations ("1m30s", "150ms",
 * "1.5s"); a bare "0" is accepted. Returns 0, or -1 when s is not one. */
int jobrunner_parse_duration(const char *s, int64_t *ms) MUST_CHECK;

#endif
