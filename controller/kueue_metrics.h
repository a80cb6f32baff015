/*
 * kueue_metrics: Kueue's metric families (kueue-api.md §14.2, the v0.14
 * core set with v0.14's labels: no replica_role, no custom labels; the
 * LocalQueue families behind the LocalQueueMetrics gate, off by default
 * as in v0.14), controller-runtime's two webhook families and cueue's
 * own, registered in a struct metrics with Kueue's exact names,
 * help texts, types, label names and bucket layouts, plus one typed
 * function per event the manager reports. Dashboards and alerts written
 * for Kueue read cueue unchanged.
 *
 * Buckets: Kueue's wait-time histograms use 1 then 2.5 x 2^k (14 bounds:
 * 1, 2.5, 5, ... 10240 s); admission_attempt_duration_seconds uses the Go
 * client's DefBuckets; cueue_scheduling_cycle_duration_seconds uses
 * 100 us .. 10 s in 1-2.5-5 steps.
 *
 * Label values are copied; "" is a valid value (a workload without a
 * priority class has priority_class=""). Resource values are given in
 * milli-units as the core holds them and exported in base units as
 * Kueue's QuantityToFloat does (cpu 500m -> 0.5, memory bytes, GPUs).
 *
 * Threads: every function may be called from any thread (see metrics.h);
 * the manager calls them from the loop thread. Calls look their series up
 * by name (one family lock each), never allocate once the series exists,
 * and never format strings, except kueue_metrics_api_request's integer
 * code.
 */
#ifndef CONTROLLER_KUEUE_METRICS_H
#define CONTROLLER_KUEUE_METRICS_H

#include <stdbool.h>
#include <stdint.h>

struct metrics;
struct kueue_metrics;

struct kueue_metrics_opts {
	/* metrics.enableClusterQueueResources: registers the per-flavor
	 * kueue_cluster_queue_{resource_reservation,resource_usage,
	 * nominal_quota,borrowing_limit,lending_limit} gauges. */
	bool cq_resources;
	/* featureGates LocalQueueMetrics (alpha, off by default in v0.14):
	 * registers the kueue_local_queue_* families. */
	bool lq_metrics;
	/* kueue_build_info's labels (borrowed during the call; NULL = "").
	 * compiler and platform are filled from the build. */
	const char *git_version;
	const char *git_commit;
	const char *build_date;
};

/* Registers every family in reg (which must outlive the result). New;
 * kueue_metrics_free(NULL) is a no-op. */
struct kueue_metrics *kueue_metrics_new(struct metrics *reg,
					const struct kueue_metrics_opts *o);
void kueue_metrics_free(struct kueue_metrics *km);

/* ---- the scheduler ---- */

/* One admission attempt (a scheduling cycle that had heads to try):
 * success = at least one workload got quota. Feeds
 * kueue_admission_attempts_total{result} and
 * kueue_admission_attempt_duration_seconds{result}. */
void kueue_metrics_admission_attempt(struct kueue_metrics *km, bool success,
				     double seconds);
/* cueue_scheduling_cycle_duration_seconds: every sched_cycle call. */
void kueue_metrics_cycle(struct kueue_metrics *km, double seconds);
/* kueue_admission_cycle_preemption_skips{cluster_queue} = n. */
void kueue_metrics_preemption_skips(struct kueue_metrics *km, const char *cq,
				    int64_t n);
/* kueue_preempted_workloads_total{preempting_cluster_queue,reason}: once
 * per victim; reason InClusterQueue, InCohortReclamation,
 * InCohortFairSharing or InCohortReclaimWhileBorrowing. */
void kueue_metrics_preempted(struct kueue_metrics *km, const char *cq,
			     const char *reason);

/* ---- workload transitions (wait = now - creation or last requeue) ---- */

/* QuotaReserved became True: kueue_quota_reserved_workloads_total and
 * kueue_quota_reserved_wait_time_seconds{cluster_queue,priority_class}. */
void kueue_metrics_quota_reserved(struct kueue_metrics *km, const char *cq,
				  const char *priority_class, double wait_s);
/* Admitted became True: kueue_admitted_workloads_total and
 * kueue_admission_wait_time_seconds. */
void kueue_metrics_admitted(struct kueue_metrics *km, const char *cq,
			    const char *priority_class, double wait_s);
/* Admitted became True after QuotaReserved: the admission checks' share,
 * kueue_admission_checks_wait_time_seconds (wait = admitted - reserved). */
void kueue_metrics_admission_checks_wait(struct kueue_metrics *km,
					 const char *cq,
					 const char *priority_class,
					 double wait_s);
/* waitForPodsReady: PodsReady became True. ready: created/requeued ->
 * ready (kueue_ready_wait_time_seconds); admitted_until_ready: admitted
 * -> ready (kueue_admitted_until_ready_wait_time_seconds). */
void kueue_metrics_ready(struct kueue_metrics *km, const char *cq,
			 const char *priority_class, double ready_wait_s,
			 double admitted_until_ready_s);
/* Each eviction: kueue_evicted_workloads_total{cluster_queue,reason,
 * underlying_cause,priority_class}; reason is the Evicted condition's
 * reason (Preempted, PodsReadyTimeout, AdmissionCheck,
 * ClusterQueueStopped, LocalQueueStopped, Deactivated, ...) and
 * underlying_cause "" or e.g. RequeuingLimitExceeded. */
void kueue_metrics_evicted(struct kueue_metrics *km, const char *cq,
			   const char *reason, const char *underlying_cause,
			   const char *priority_class);
/* The first eviction of a workload (Kueue counts each workload once):
 * kueue_evicted_workloads_once_total{...,detailed_reason,...}. */
void kueue_metrics_evicted_once(struct kueue_metrics *km, const char *cq,
				const char *reason,
				const char *detailed_reason,
				const char *priority_class);
/* An eviction of a workload whose pods were ready: seconds from
 * PodsReady to the eviction, kueue_pods_ready_to_evicted_time_seconds. */
void kueue_metrics_pods_ready_to_evicted(struct kueue_metrics *km,
					 const char *cq, const char *reason,
					 const char *underlying_cause,
					 double seconds);
/* kueue_replaced_workload_slices_total{cluster_queue}. */
void kueue_metrics_replaced_slice(struct kueue_metrics *km, const char *cq);

/* ---- ClusterQueue state (after each status computation) ---- */

/* kueue_pending_workloads{cluster_queue,status=active|inadmissible}. */
void kueue_metrics_pending(struct kueue_metrics *km, const char *cq,
			   int64_t active, int64_t inadmissible);
/* kueue_reserving_active_workloads and kueue_admitted_active_workloads. */
void kueue_metrics_cq_workloads(struct kueue_metrics *km, const char *cq,
				int64_t reserving, int64_t admitted);

enum kueue_cq_status {
	KUEUE_CQ_PENDING,     /* not active: missing flavor/check, stopped */
	KUEUE_CQ_ACTIVE,
	KUEUE_CQ_TERMINATING, /* deletion pending (finalizer) */
};
/* kueue_cluster_queue_status{cluster_queue,status}: 1 for st, 0 for the
 * other two. */
void kueue_metrics_cq_status(struct kueue_metrics *km, const char *cq,
			     enum kueue_cq_status st);

/* A nil borrowingLimit / lendingLimit (flavors/tree.h TREE_UNLIMITED). */
#define KUEUE_METRICS_NO_LIMIT INT64_MAX

/* One (flavor, resource) of a ClusterQueue, in milli-units. */
struct kueue_resource_values {
	int64_t nominal;     /* nominalQuota */
	int64_t borrowing;   /* borrowingLimit or KUEUE_METRICS_NO_LIMIT */
	int64_t lending;     /* lendingLimit or KUEUE_METRICS_NO_LIMIT */
	int64_t reservation; /* status.flavorsReservation total */
	int64_t usage;       /* status.flavorsUsage total (admitted) */
};
/*
 * The five kueue_cluster_queue_* resource gauges{cohort,cluster_queue,
 * flavor,resource} for one covered (flavor, resource); cohort "" when
 * none. A nil limit reports 0, as v0.14 does (HEAD reports +Inf). No-op
 * unless opts.cq_resources.
 */
void kueue_metrics_cq_resources(struct kueue_metrics *km, const char *cohort,
				const char *cq, const char *flavor,
				const char *resource,
				const struct kueue_resource_values *v);
/* Drops all of cq's resource series (its cohort changed: Kueue drops
 * them before reporting again). No-op unless opts.cq_resources. */
void kueue_metrics_cq_resources_clear(struct kueue_metrics *km,
				      const char *cq);
/* Drops one (flavor, resource) of cq that left its spec; cohort as it
 * was reported. No-op unless opts.cq_resources. */
void kueue_metrics_cq_resource_remove(struct kueue_metrics *km,
				      const char *cohort, const char *cq,
				      const char *flavor,
				      const char *resource);

/* Fair sharing: kueue_cluster_queue_weighted_share{cluster_queue} and
 * kueue_cohort_weighted_share{cohort}, the rounded-up integer share as
 * status shows it (v0.14). */
void kueue_metrics_cq_weighted_share(struct kueue_metrics *km,
				     const char *cq, int64_t share);
void kueue_metrics_cohort_weighted_share(struct kueue_metrics *km,
					 const char *cohort, int64_t share);

/* A ClusterQueue was deleted: every series with cluster_queue=cq (and
 * preempting_cluster_queue=cq) goes, as Kueue's ClearClusterQueueMetrics,
 * ClearCacheMetrics and ClearClusterQueueResourceMetrics do. */
void kueue_metrics_cq_delete(struct kueue_metrics *km, const char *cq);
/* A Cohort was deleted: its weighted share goes. */
void kueue_metrics_cohort_delete(struct kueue_metrics *km,
				 const char *cohort);

/* ---- cueue's API client ---- */

/* cueue_api_requests_total{verb,code}: one finished request to the API
 * server; verb GET, LIST, WATCH, POST, PUT, PATCH, DELETE; code the HTTP
 * status, or 0 for a transport failure (reported as "<error>", as
 * client-go does). */
void kueue_metrics_api_request(struct kueue_metrics *km, const char *verb,
			       int code);
/* The same counter set to an absolute count n, for mirroring a table the
 * client keeps itself (controller/kube.h kube_stats: call it from the
 * loop thread for each entry, e.g. on a few-second timer). */
void kueue_metrics_api_requests_set(struct kueue_metrics *km,
				    const char *verb, int code, uint64_t n);

/* ---- LocalQueues (opts.lq_metrics; every call a no-op without) ---- */

/*
 * Kueue's kueue_local_queue_* families, v0.14 labels: name, namespace
 * (the LocalQueue's), plus priority_class on the counters and
 * histograms. They mirror the ClusterQueue calls above and are made at
 * the same moments, with the workload's LocalQueue (spec.queueName in
 * its namespace).
 */
/* Whether the kueue_local_queue_* families are on (km may be NULL). */
bool kueue_metrics_lq_enabled(const struct kueue_metrics *km);
void kueue_metrics_lq_pending(struct kueue_metrics *km, const char *ns,
			      const char *name, int64_t active,
			      int64_t inadmissible);
void kueue_metrics_lq_workloads(struct kueue_metrics *km, const char *ns,
				const char *name, int64_t reserving,
				int64_t admitted);

/* The LocalQueue's Active condition status. */
enum kueue_lq_active {
	KUEUE_LQ_TRUE,
	KUEUE_LQ_FALSE,
	KUEUE_LQ_UNKNOWN,
};
/* kueue_local_queue_status{name,namespace,active}: 1 for st, 0 for the
 * other two. */
void kueue_metrics_lq_status(struct kueue_metrics *km, const char *ns,
			     const char *name, enum kueue_lq_active st);
void kueue_metrics_lq_quota_reserved(struct kueue_metrics *km,
				     const char *ns, const char *name,
				     const char *priority_class,
				     double wait_s);
void kueue_metrics_lq_admitted(struct kueue_metrics *km, const char *ns,
			       const char *name, const char *priority_class,
			       double wait_s);
void kueue_metrics_lq_admission_checks_wait(struct kueue_metrics *km,
					    const char *ns, const char *name,
					    const char *priority_class,
					    double wait_s);
void kueue_metrics_lq_ready(struct kueue_metrics *km, const char *ns,
			    const char *name, const char *priority_class,
			    double ready_wait_s, double admitted_until_ready_s);
void kueue_metrics_lq_evicted(struct kueue_metrics *km, const char *ns,
			      const char *name, const char *reason,
			      const char *underlying_cause,
			      const char *priority_class);
/* kueue_local_queue_resource_{reservation,usage}{name,namespace,flavor,
 * resource}, milli-units in, base units out (status.flavorsReservation
 * and flavorsUsage of the LocalQueue). */
void kueue_metrics_lq_resources(struct kueue_metrics *km, const char *ns,
				const char *name, const char *flavor,
				const char *resource, int64_t reservation,
				int64_t usage);
/* Drops the LocalQueue's resource series (before reporting a new set). */
void kueue_metrics_lq_resources_clear(struct kueue_metrics *km,
				      const char *ns, const char *name);
/* A LocalQueue was deleted: every kueue_local_queue_* series of it goes
 * (Kueue's ClearLocalQueueMetrics, ...CacheMetrics, ...ResourceMetrics). */
void kueue_metrics_lq_delete(struct kueue_metrics *km, const char *ns,
			     const char *name);

/* ---- the webhook server ---- */

/*
 * One served admission or conversion request (webhook/server.h
 * server_observe_fn: pass this function as webhook_opts.observe with the
 * struct kueue_metrics as observe_ud): controller-runtime's
 * controller_runtime_webhook_latency_seconds{webhook} (DefBuckets;
 * seconds from the body complete to the response queued) and
 * controller_runtime_webhook_requests_total{code,webhook}; webhook is the
 * path ("/mutate-batch-v1-job"). Runs on the webhook's threads.
 */
void kueue_metrics_webhook_observe(void *km, const char *path, unsigned code,
				   double seconds);

#endif
