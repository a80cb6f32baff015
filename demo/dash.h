/*
 * dash: what the demo knows and shows. It follows the planned Jobs (when
 * each was created, unsuspended, finished, on which flavor), the
 * ClusterQueues (quotas from their spec, usage and counts from their
 * status, as the manager writes them), the ResourceFlavors (to name
 * the flavor an admitted Job's nodeSelector points at) and the Workloads
 * (who preempted whom, why, and the GPUs it freed; what waitForPodsReady
 * did to a Job whose pods were not ready in time), and renders:
 *
 *  - a dashboard: on a terminal a block redrawn in place with ANSI
 *    cursor movement; otherwise one plain line per call, after one line
 *    per preemption and waitForPodsReady event seen since the previous
 *    call;
 *  - the summary once the stream has drained.
 *
 * In the fair scenario (make demo SCENARIO=fair) it follows the Cohort
 * too, and shows per ClusterQueue its weight, fair part of the pool and
 * weightedShare with a history of it, and sums up how the GPUs held
 * compared with the weights while every team had work pending.
 *
 * Times are the caller's monotonic milliseconds, taken when the demo
 * observes an event (a POST answer, a watch event), so a wait is what a
 * user of the cluster experiences, not a difference of second-precision
 * timestamps. Owns its state; borrows the plan. No I/O but the FILE the
 * render functions are given.
 */
#ifndef DEMO_DASH_H
#define DEMO_DASH_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "demo/feed.h"

struct json_t;
struct dash;

/* s is borrowed and must outlive the dash; tty selects the redrawn
 * dashboard; width is the terminal's (0: 100 columns). New. */
struct dash *dash_new(const struct feed *s, bool tty, int width);
void dash_free(struct dash *d);
/* The plan plays sc (FEED_CLASSIC until said). */
void dash_set_scenario(struct dash *d, enum feed_scenario sc);
/* The terminal was resized: lines are clipped to width (0: 100). */
void dash_set_width(struct dash *d, int width);

/* The stream starts now (times in the dashboard count from here). */
void dash_start(struct dash *d, int64_t now_ms);
/* The POST of planned Job i was answered 2xx at now_ms. */
void dash_job_created(struct dash *d, size_t i, int64_t now_ms);
/* The POST of planned Job i failed for good (message borrowed). */
void dash_job_failed_create(struct dash *d, size_t i, const char *message);

/* A Job, ClusterQueue, ResourceFlavor or Workload as listed or watched
 * (borrowed); deleted when it is gone. A Workload owned by a planned Job
 * gives the Job's Workload UID (preemption messages name preemptors by
 * it) and each preemption it went through: a new count of reason
 * Preempted in status.schedulingStats.evictions is one preemption, with
 * the Preempted condition's reason, the preemptor's UID from its
 * message and the GPUs of the admission it lost; and what
 * waitForPodsReady did to it: each new count of reason PodsReadyTimeout
 * there is one timeout (with its requeueState), a Requeued=True
 * BackoffFinished the end of its backoff, spec.active=false with Evicted
 * DeactivatedDueTo<Cause> its deactivation. A Job gives its pods ready
 * (status.ready + succeeded). */
void dash_job(struct dash *d, const struct json_t *job, bool deleted,
	      int64_t now_ms);
void dash_cluster_queue(struct dash *d, const struct json_t *cq,
			bool deleted, int64_t now_ms);
void dash_flavor(struct dash *d, const struct json_t *rf, bool deleted);
/* A Cohort (the fair scenario): its own GPU quota (the pool) and its
 * status.fairSharing.weightedShare. The dash follows the first one seen
 * and ignores others. ClusterQueues give their spec.fairSharing.weight
 * and status.fairSharing.weightedShare too, in either scenario. */
void dash_cohort(struct dash *d, const struct json_t *co, bool deleted);
void dash_workload(struct dash *d, const struct json_t *wl, bool deleted,
		   int64_t now_ms);

/* Records the peaks of GPUs in use (all flavors, each flavor). Call after
 * each watch event and after each whole relist, never in the middle of
 * one: list order is not write order. */
void dash_sample(struct dash *d);

/* The fair scenario's clock, every tick of the caller (100 ms): a
 * column of share history each second, and the contention measure of
 * the summary (the time every team had Jobs pending, and what each
 * held and its share meanwhile). Nothing in the classic scenario. */
void dash_tick(struct dash *d, int64_t now_ms);

/* Every ClusterQueue the plan's teams use (team-<name>) is known and
 * reports Active=True, in the fair scenario a Cohort is known, and the
 * ResourceFlavor of every flavor a known queue names is known: the
 * flavor of an admitted Job is read from its nodeSelector against the
 * flavors' nodeLabels, which a second informer brings in no order with
 * the Jobs. */
bool dash_ready(const struct dash *d);
/* Every planned Job was created and finished (or failed to be created),
 * or was deactivated and seen stopped (suspended) since. */
bool dash_drained(const struct dash *d);
/* Planned Jobs that finished (Complete or Failed). */
size_t dash_finished(const struct dash *d);

/* One frame: the redrawn block on a terminal, a plain line otherwise. */
void dash_render(struct dash *d, int64_t now_ms, FILE *out);
/* Leaves the terminal as it found it (shows the cursor); call once at the
 * end on a terminal, whatever happened. */
void dash_end(struct dash *d, FILE *out);
/* The summary block. */
void dash_summary(const struct dash *d, int64_t now_ms, FILE *out);

#endif
