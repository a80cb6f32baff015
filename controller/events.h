/*
 * events: a best-effort recorder of core/v1 Events (kueue-api.md §7.5,
 * §12.10) for the controller's reconcilers, as Kueue's event recorder
 * posts them in v0.14: one POST of a new Event per record (no
 * aggregation, count 1), source.component and reportingComponent the
 * recorder's component ("kueue-admission" for the scheduler,
 * "batch/job-kueue-controller" for the Job reconciler), messages cut at
 * 1024 bytes.
 *
 * Asynchronous and bounded, never in the way of admission: a record
 * copies what it needs into a FIFO of at most max_queued events and
 * returns. Events are posted from that FIFO with at most max_inflight
 * POSTs in flight, and only while no request of the kube client waits
 * for a rate-limit token (kube_saturated: its token bucket is FIFO, so
 * an event queued there would delay an admission write). A record
 * that finds the FIFO full is dropped and counted; a POST that fails is
 * not retried (counted). The body is built when the POST goes.
 *
 * Counting: the stats below, and when a metrics registry is given the
 * counter cueue_events_total{component, result} with result "posted",
 * "failed" or "dropped".
 *
 * Any reconciler can own one recorder per component; jobs.c's own
 * post_event (one POST per event, unbounded) maps onto event_record
 * with the Job as object (see controller/README.md).
 *
 * Lifetimes: created on a kube client (borrowed; must outlive it); free
 * it before the client. Threads: the loop thread only.
 */
#ifndef CONTROLLER_EVENTS_H
#define CONTROLLER_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"

struct kube;
struct metrics;
struct event_recorder;

/* Messages longer than this are cut (on a UTF-8 boundary). */
#define EVENT_MESSAGE_MAX 1024

enum event_type {
	EVENT_NORMAL,
	EVENT_WARNING,
};

/* The involvedObject. Every string is borrowed for the call (copied). */
struct event_object {
	const char *api_version;      /* "kueue.x-k8s.io/v1beta2" */
	const char *kind;             /* "Workload" */
	const char *ns;               /* required: events are namespaced;
					 cluster-scoped objects use
					 "default", as client-go does */
	const char *name;             /* required */
	const char *uid;              /* or NULL */
	const char *resource_version; /* or NULL */
};

struct event_recorder_opts {
	const char *component;      /* required; copied */
	const char *instance;       /* reportingInstance; NULL:
				       "cueue-manager"; copied */
	size_t max_queued;          /* FIFO bound; 0: 4096 */
	unsigned max_inflight;      /* POSTs at once; 0: 16 */
	int64_t recheck_ms;         /* how soon a FIFO held back by a
				       saturated client is looked at
				       again; 0: 20 ms */
	struct metrics *registry;   /* borrowed; NULL: no metric */
};

struct event_recorder_stats {
	uint64_t recorded; /* event_record calls */
	uint64_t posted;   /* POSTs answered 2xx */
	uint64_t failed;   /* POSTs that failed */
	uint64_t dropped;  /* records dropped: the FIFO was full */
};

/* Returns a new recorder on k (borrowed). o is required (component). */
struct event_recorder *event_recorder_new(struct kube *k,
					  const struct event_recorder_opts *o);
/* Cancels the POSTs in flight and drops the FIFO. NULL-safe. */
void event_recorder_free(struct event_recorder *r);

/*
 * Records one event about obj at the loop's current wall time: type,
 * reason (CamelCase) and message (cut at EVENT_MESSAGE_MAX). Never
 * blocks and never fails from the caller's view (see above).
 */
void event_record(struct event_recorder *r, const struct event_object *obj,
		  enum event_type type, const char *reason,
		  const char *message);
/* event_record with a printf message. */
void event_recordf(struct event_recorder *r, const struct event_object *obj,
		   enum event_type type, const char *reason, const char *fmt,
		   ...) PRINTF_LIKE(5, 6);

/* Events queued or in flight (0: idle). */
size_t event_recorder_pending(const struct event_recorder *r);
/* Borrowed; valid until event_recorder_free. */
const struct event_recorder_stats *
event_recorder_stats(const struct event_recorder *r);

#endif
