/*
 * manager: the controller's reconcilers around the scheduling core. It
 * owns the informers of every kind the manager watches, the decoded
 * object caches, the scheduling state (flavors/sched.h) and every write
 * the manager makes:
 *
 *  - informers (kube_watch.h) on kueue.x-k8s.io/v1beta2 resourceflavors,
 *    cohorts, clusterqueues, localqueues, workloadpriorityclasses,
 *    workloads, topologies and admissionchecks (the last two by name
 *    only: which exist) and core/v1 namespaces; each object is decoded once
 *    (model/codec.h), validated (model/validate.h) and kept by name or
 *    namespace/name, and fed to sched once every informer has synced, in
 *    the order flavors, cohorts, ClusterQueues, namespaces, LocalQueues,
 *    workloads (so a restart rebuilds admitted usage before anything is
 *    scheduled);
 *  - workload -> LocalQueue -> ClusterQueue resolution, with Kueue's
 *    Inadmissible conditions when a link is missing, stopped or inactive;
 *  - the scheduling cycle in the loop's before-sleep step when something
 *    changed (and on sched's backoff wakeup), and the writes of its
 *    decisions: admissions as merge patches of workload /status with a
 *    resourceVersion precondition (assume, then confirm or forget), and
 *    QuotaReserved=False only when it differs from what the object shows;
 *  - finalizers of ClusterQueues and ResourceFlavors, and the coalesced
 *    status of ClusterQueues and LocalQueues (status.h);
 *  - the scheduler's Workload events (events.h, component
 *    kueue-admission): QuotaReserved and Admitted when an admission write
 *    succeeds, Pending (Warning) each time a pending message is written.
 *
 * A version whose spec and scheduling-relevant status did not move (the
 * manager's own pending and queue status writes coming back) is taken
 * into the cached struct in place: not validated again, sched not told.
 * A pending message whose text alone changed is rewritten at most once
 * per pending_msg_ms (controller/README.md, "Pending conditions").
 *
 * Only merge patches are written, never whole objects: the codec's full
 * encoders drop fields cueue does not model.
 *
 * Lifetimes: created on a kube client (whose loop it installs its
 * before-sleep hook on); free the manager before the client and the loop.
 * Threads: the loop thread only.
 */
#ifndef CONTROLLER_MANAGER_H
#define CONTROLLER_MANAGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/deadline.h"
#include "flavors/sched.h"

struct config_device_class_mappings;
struct kube;
struct kueue_metrics;
struct metrics;
struct manager;

/* A test seam: runs right before an admission write is submitted. */
typedef void manager_hook_fn(void *ud, const char *ns, const char *name);

struct manager_opts {
	bool ignore_undeclared;     /* quotaCheckStrategy IgnoreUndeclared */
	bool no_partial_admission;  /* PartialAdmission feature gate off */
	int64_t status_interval_ms; /* per CQ/LQ status write; 0: 1 s */
	unsigned max_wl_writes;     /* workload writes in flight; 0: 128 */
	unsigned page_size;         /* informer list pages; 0: 500 */
	int64_t pending_msg_ms;     /* a pending message whose text alone
				       changed is rewritten at most this
				       often per workload; 0: 10 s (see
				       controller/README.md) */
	int64_t pending_grace_ms;   /* a workload's first QuotaReserved=
				       False (reason Pending) waits this
				       long after its first failed attempt,
				       and is never written if it is
				       admitted meanwhile; 0: none (tests);
				       the manager binary: 1 s */
	bool no_events;             /* post no Events (tests) */
	bool standby;               /* a follower until manager_lead */
	bool inspect;               /* read only (kubectl cueue): the
				       caches are fed to sched once synced,
				       and nothing is ever decided, timed or
				       written; the caller asks sched
				       (manager_sched) */
	struct metrics *registry;   /* borrowed; NULL: the event recorder
				       counts only in manager_stats */
	manager_hook_fn *before_admit_write; /* tests; may be NULL */
	void *hook_ud;              /* borrowed */
	struct kueue_metrics *metrics; /* borrowed; NULL: no metrics
					  (controller/kueue_metrics.h) */
	/* waitForPodsReady (model/deadline.h; ready.enabled false: off)
	 * and its blockAdmission; maximumExecutionTimeSeconds is enforced
	 * either way. */
	struct deadline_policy ready;
	bool block_admission;
	bool requeue_ts_creation; /* requeuingStrategy.timestamp Creation */
	/* fairSharing (flavors/sched.h sched_opts): on, and its
	 * preemptionStrategies (nfs 0: the default list) */
	bool fair_sharing;
	enum sched_fs_strategy fs_strategies[2];
	size_t nfs_strategies;
	/* admissionFairSharing (sched_opts.afs...): on, usageHalfLifeTime,
	 * usageSamplingInterval (the LocalQueue history's sampling timer),
	 * resourceWeights (borrowed for manager_new's call) */
	bool afs;
	int64_t afs_half_life_ms;
	int64_t afs_sampling_ms;
	const char *const *afs_res;
	const double *afs_w;
	size_t nafs_w;
	/* resources.excludeResourcePrefixes and transformations; copied by
	 * manager_new; NULL: none */
	const struct res_policy *res_policy;
	/* resources.deviceClassMappings (borrowed for manager_new, which
	 * copies it): the device classes of DRA claim templates charged as
	 * quota resources (manager_dra.c); NULL: none */
	const struct config_device_class_mappings *dra_mappings;
};

struct manager_stats {
	uint64_t cycles;          /* scheduling cycles run */
	uint64_t admit_writes;    /* admission patches sent */
	uint64_t check_writes;    /* eviction and requeue patches sent */
	uint64_t evicted;         /* eviction patches that succeeded */
	uint64_t admitted;        /* of those, accepted */
	uint64_t admit_conflicts; /* of those, 409 */
	uint64_t admit_failures;  /* of those, other failures */
	uint64_t pending_writes;  /* QuotaReserved=False patches sent */
	uint64_t finalizer_writes; /* metadata.finalizers patches sent */
	uint64_t admits_held;     /* write-queue passes that found an
				     admission waiting for the evictions
				     made for it to be answered */
	uint64_t status_writes;   /* CQ + LQ status patches sent */
	uint64_t invalid;         /* object versions that failed to decode
				     or validate */
	uint64_t status_only;     /* versions whose spec and metadata did
				     not move: sched not told */
	uint64_t events_recorded; /* Events recorded (events.h) */
	uint64_t events_posted;   /* of those, posted */
	uint64_t events_dropped;  /* of those, dropped (queue full) */
};

/* Returns a new manager on k (borrowed; must outlive it); its informers
 * start at once. o may be NULL (defaults). */
struct manager *manager_new(struct kube *k, const struct manager_opts *o);
/* Stops the informers, cancels every write, removes the hook. NULL-safe. */
void manager_free(struct manager *m);

/* True once every informer has synced (the caches are warm: the webhook
 * view and readiness use them, on a follower too). */
bool manager_synced(const struct manager *m);
/*
 * True once the manager leads and its caches were handed to sched:
 * cycles run and it writes (the Job integration waits for this), until
 * manager_drain.
 */
bool manager_active(const struct manager *m);
/*
 * Leader election (controller/election.h): a manager made with
 * opts.standby keeps its informers and caches warm and decides and
 * writes nothing until manager_lead; then it starts exactly as a
 * manager that just synced after a restart (everything is level
 * triggered from the caches). No way back: a replica that loses the
 * lease exits.
 */
void manager_lead(struct manager *m);
/*
 * Graceful shutdown: no more cycles, deadline evictions or fair-sharing
 * samples; writes already decided still go out (manager_idle tells when
 * they are done). No way back.
 */
void manager_drain(struct manager *m);
/* How long the informer that has been failing longest has failed (ms
 * of loop time; 0 when all list and watch fine). */
int64_t manager_api_failing_ms(const struct manager *m);
/* True when no write of the manager is queued or in flight. */
bool manager_idle(const struct manager *m);
/* Borrowed; valid until manager_free. */
const struct manager_stats *manager_stats(const struct manager *m);
/* sched_check over the manager's scheduling state (tests). */
bool manager_check(const struct manager *m);

/*
 * One visibility API query (manager_vis.c): the pending workloads of
 * ClusterQueue cq, or (lq set) of LocalQueue ns/lq, as a
 * PendingWorkloadsSummary of api_version (e.g.
 * "visibility.kueue.x-k8s.io/v1beta1"); offset and limit as given (0:
 * the defaults). Returns the JSON text (new) and the HTTP status in
 * *code: 200, 404 with a Status, or 503 when this replica does not
 * schedule. Loop thread.
 */
struct manager_vis_query {
	const char *api_version;
	const char *cq;  /* ClusterQueue query */
	const char *ns;  /* LocalQueue query: namespace and name */
	const char *lq;
	int64_t offset;
	int64_t limit;
};
char *manager_visibility(struct manager *m, const struct manager_vis_query *q,
			 unsigned *code);

/*
 * Inspection (opts.inspect; kubectl cueue, cli/): once manager_synced,
 * the scheduling state fed exactly as a leader's is, for the caller to
 * question and to run cycles on (their decisions are the caller's to
 * read, never written). Borrowed; NULL before the caches were fed.
 */
struct sched *manager_sched(struct manager *m);
/*
 * Takes obj (a Workload, as the API would list it; borrowed) into the
 * caches and sched as the informer would: decoded, validated, resolved.
 * Returns 0, or -1 + err with the field errors when it is invalid.
 */
struct json_t;
int manager_inject_workload(struct manager *m, const struct json_t *obj,
			    struct err *err);
/*
 * Why workload ns/name is not queued, as the manager would write it
 * (QuotaReserved=False reason Inadmissible: "LocalQueue x doesn't
 * exist", "ClusterQueue y is inactive"...), or NULL. Borrowed.
 */
const char *manager_wl_inadmissible(const struct manager *m, const char *ns,
				    const char *name);
/*
 * Every cached object of the queueing setup (for doctor): fn(ud, kind,
 * obj, invalid) with obj the decoded struct (resource_flavor, cohort,
 * cluster_queue, local_queue, workload_priority_class) or, for
 * namespaces, the struct smap of its labels with name; invalid the
 * reason a ClusterQueue failed validation, else NULL. Placeholders are
 * skipped.
 */
enum manager_kind {
	MK_FLAVOR,
	MK_COHORT,
	MK_CLUSTER_QUEUE,
	MK_NAMESPACE,
	MK_LOCAL_QUEUE,
	MK_WORKLOAD,
};
typedef void manager_visit_fn(void *ud, enum manager_kind kind,
			      const char *name, const void *obj,
			      const char *invalid);
void manager_visit(const struct manager *m, manager_visit_fn *fn, void *ud);

/*
 * The Configuration's settings the manager honours, as manager_opts
 * (what cueue-manager's main does; kubectl cueue reads the same file).
 * The admission fair sharing weights are new arrays in *afs_res and
 * *afs_w (the caller frees both, after manager_new); the resource policy
 * is built into *rp (initialised by the caller, which releases it after
 * manager_new) and pointed at by mo->res_policy.
 */
struct config;
struct res_policy;
void manager_opts_from_config(struct manager_opts *mo,
			      const struct config *cfg,
			      const char ***afs_res, double **afs_w,
			      struct res_policy *rp);

/*
 * What the webhook's namespace view (webhook/nsview.h) is built from
 * (controller/webhookview.h does it). The generation grows whenever a
 * Namespace, a LocalQueue or a WorkloadPriorityClass is added, changed
 * or removed, so a caller rebuilds only when it moved. The callbacks
 * get borrowed strings valid during the call.
 */
struct smap;
uint64_t manager_nsview_gen(const struct manager *m);
typedef void manager_ns_fn(void *ud, const char *ns,
			   const struct smap *labels);
void manager_foreach_namespace(const struct manager *m, manager_ns_fn *fn,
			       void *ud);
/* Calls fn (labels NULL) for every namespace with a LocalQueue name. */
void manager_foreach_lq_named(const struct manager *m, const char *name,
			      manager_ns_fn *fn, void *ud);
/* Whether a WorkloadPriorityClass name is cached. */
bool manager_has_wpc(const struct manager *m, const char *name);

/*
 * For the Job integration (controller/jobs.h). The observer hears of
 * every workload version the manager accepts (decoded and validated,
 * before the manager trims it for its cache: owner references, labels,
 * finalizers and raw templates are still there) and of every workload
 * dropped (deleted, or gone on a resync); w is borrowed for the call.
 * A status-only version (same generation, no admission, only a
 * QuotaReserved condition that is not True moved: manager_wl.c) comes with
 * its spec not decoded (npod_sets 0); metadata and status are whole.
 * It runs from inside the informer callback, before the manager's own
 * state reflects the change: the observer must only take note (never
 * submit, never call back into the manager). One observer; fn NULL
 * removes it. Never called from manager_free.
 */
struct workload;
struct resource_flavor;
enum manager_wl_event {
	MANAGER_WL_UPSERT,
	MANAGER_WL_DELETE,
};
typedef void manager_wl_observer_fn(void *ud, enum manager_wl_event ev,
				    const struct workload *w);
void manager_set_wl_observer(struct manager *m, manager_wl_observer_fn *fn,
			     void *ud);
/* The cached (trimmed) workload ns/name, or NULL; borrowed, valid until
 * the loop next delivers an informer event. */
const struct workload *manager_workload_peek(const struct manager *m,
					     const char *ns,
					     const char *name);
/* The cached ResourceFlavor, or NULL; borrowed as above. */
const struct resource_flavor *manager_flavor_peek(const struct manager *m,
						  const char *name);
/* A cached WorkloadPriorityClass's value: true and *value when found. */
bool manager_wpc_value(const struct manager *m, const char *name,
		       int32_t *value);

#endif
