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
 *   running      startTime, active = min(parallelism, completions -
 *                succeeded), ready = active while the pods are ready
 *                (always, without the annotations below); resuming a
 *                suspended Job sets Suspended=False (JobResumed, "Job
 *                resumed") and restarts startTime and every clock
 *   after the    succeeded = completions (parallelism when completions is
 *   runtime      unset), active/ready 0, completionTime, conditions
 *                SuccessCriteriaMet then Complete (CompletionsReached)
 *   failing      with the annotation cueue.dev/fail: "true": failed =
 *                active, conditions FailureTarget then Failed
 *                (BackoffLimitExceeded), at the same moment it would
 *                otherwise complete
 *
 * The runtime is --job-runtime (api_job_runtime_ms; 5 s when <= 0),
 * unless the Job carries the annotation cueue.dev/runtime, a Go duration
 * ("2s", "150ms", "1m30s"). It counts only time in which the pods are
 * ready, for Kueue's waitForPodsReady:
 *
 *   cueue.dev/ready-after    a Go duration or "never": ready stays 0 for
 *                            that long after the run's start (startTime),
 *                            or for the whole run
 *   cueue.dev/unready-after  a Go duration: that long after the pods
 *                            became ready, ready drops to 0 for the rest
 *                            of the run (a lost node; pods stay active)
 *
 * So a run is ready in [start + ready-after, that + unready-after) and
 * finishes (completes, or fails with cueue.dev/fail) runtime after the
 * window opens when the window is at least that long (a tie finishes);
 * otherwise it stays running, active and unready, until it is suspended
 * or deleted. While a stop-delay holds a suspended Job's pods, active and
 * ready stay as they were. A ready annotation whose value does not parse
 * counts as absent, and the runner logs it once per Job (a bad
 * cueue.dev/runtime or stop-delay is ignored too, silently, as before).
 * Finished Jobs are left alone; after a restart with a data dir, running
 * Jobs keep their clocks from startTime.
 *
 * One thread follows the Job events of the store; a timer heap holds
 * the running Jobs' next ready transition or finish times, so thousands
 * of Jobs cost no thread each and an unchanging Job costs no wake-up.
 * Status is written with a merge patch on the status subresource
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
#define JOBRUNNER_READY_AFTER_ANNOTATION "cueue.dev/ready-after"
#define JOBRUNNER_UNREADY_AFTER_ANNOTATION "cueue.dev/unready-after"

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
	const char *bad;  /* static: the key of a malformed ready annotation
			   * the plan ignored, or NULL */
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
