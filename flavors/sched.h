/*
 * sched: the scheduling core's state and its cycle (kueue-scheduler.md
 * §1-3, kueue-api.md §3.5-3.7, §7.4): what Kueue splits into its cache,
 * queue manager and scheduler, as one pure value.
 *
 * The controller feeds it the objects it watches (flavors, cohorts,
 * ClusterQueues, namespaces, workloads) and runs sched_cycle when
 * something changed; the cycle returns decisions (admit with an
 * assignment, or stay pending with Kueue's reason and message) and the
 * controller writes them to the API. Everything else it needs to know
 * (queue counts, usage for status, whether a ClusterQueue is active) it
 * asks here.
 *
 * Borrowing, not copying: sched keeps pointers to the controller's
 * decoded objects (struct resource_flavor, cohort, cluster_queue,
 * workload). A pointer given to a _set call stays valid until the next
 * _set or _remove for the same name; the controller frees the old struct
 * only after that call returns. Derived data (tree quotas, per-pod
 * requests, flavor matches) is computed at _set time, never in the cycle.
 *
 * Assume, then confirm (Kueue's "assume in cache"): an admit decision
 * adds the workload's usage at once (state ASSUMED), so the next cycle
 * cannot hand the same quota out twice while the status write is in
 * flight. The controller then either sees the write come back through
 * its informer (sched_wl_set with QuotaReserved=True: confirmed) or calls
 * sched_wl_forget (the write failed: usage released, workload requeued).
 * A stale pending copy of an assumed workload arriving meanwhile does not
 * undo the assumption.
 *
 * One cycle admits as much as fits: it runs rounds, each of which is a
 * Kueue cycle (one head per active ClusterQueue, flavor assignment,
 * classical entry order, in-cycle reservation), until a round neither
 * admits nor parks anything: every pending workload is tried once per
 * call, and a blocked StrictFIFO head ends it. The ordering guarantees are Kueue's (StrictFIFO heads block,
 * BestEffortFIFO parks inadmissible heads), only without waiting for the
 * API between rounds.
 *
 * Scheduling equivalence (kueue-scheduler.md §1.3, Kueue's
 * SchedulingEquivalenceHashing; off with opts.no_equivalence): pending
 * workloads of a BestEffortFIFO ClusterQueue with the same namespace,
 * effective priority and pod sets (names, counts, minCounts, per-pod
 * requests, node selector, affinity, tolerations) and no backoff form a
 * class. When one is found inadmissible (NoFit, or preemption without
 * candidates) the whole class parks with it, and a requeue event retries
 * one representative per class (the best-ordered member), not every
 * member: the cost of a requeue event is O(classes), not O(pending).
 * A workload created while its class is parked is tried once on its own.
 * Messages: a member parked with its class is never re-evaluated, so it
 * gets no new message on later requeue events; a member that was never
 * evaluated at all gets, once, the pending decision its representative
 * just got (same reason and message: equivalent workloads get the same
 * verdict at the same quota state), so every pending workload has one
 * truthful QuotaReserved=False message, written once rather than once
 * per requeue event. Like any parked workload's, it dates from its last
 * evaluation (Kueue also leaves parked workloads' messages untouched).
 * Decisions per queue are unchanged (the members would fail too: usage
 * only grows between requeue events); in a cohort, skipping members lets
 * the next workload of a queue be tried a round earlier, so which of two
 * competing queues' workloads gets freed quota may differ from trying
 * every member, as with Kueue's own hashing.
 *
 * Pure (STYLE, ARCHITECTURE): no I/O, no clock (now is passed in), no
 * JSON, no global state; not thread-safe; deterministic for the same
 * sequence of calls.
 */
#ifndef FLAVORS_SCHED_H
#define FLAVORS_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/objects.h"
#include "model/respolicy.h"
#include "model/smap.h"

struct sched;

/* fairSharing.preemptionStrategies (kueue-scheduler.md §4.5). */
enum sched_fs_strategy {
	FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE, /* S2-a */
	FS_LESS_THAN_INITIAL_SHARE,           /* S2-b */
};

struct sched_opts {
	/* quotaCheckStrategy IgnoreUndeclared: requests of resources the
	 * ClusterQueue does not cover are ignored instead of NoFit. */
	bool ignore_undeclared;
	/* PartialAdmission feature gate (default on in Kueue): pod sets
	 * with minCount may be admitted with fewer pods (§2.4). */
	bool partial_admission;
	/* Rounds per sched_cycle; 0 = until a round admits nothing. 1 gives
	 * Kueue's one-head-per-ClusterQueue cycle exactly. */
	unsigned max_rounds;
	/* Turns scheduling equivalence off (tests, benchmarks): every
	 * pending workload is tried on its own after each requeue event. */
	bool no_equivalence;
	/* Requeue batching (Kueue's requeueBatchPeriod, §1.4, 1 s there):
	 * when > 0, the requeue event of a workload releasing quota is
	 * applied at most this many ms later, once for all releases of the
	 * window, rather than at once (sched_next_wakeup reports when).
	 * 0 (default): at once. Other requeue events are always at once. */
	int64_t requeue_batch_ms;
	/* waitForPodsReady.blockAdmission (kueue-scheduler.md §6): while a
	 * workload holding quota is not PodsReady, the first entry that
	 * would be admitted gets QuotaReserved=False reason
	 * WaitingForPodsReady and the cycle stops there; no cycle runs
	 * until every holder is PodsReady (or gone). */
	bool block_admission;
	/* waitForPodsReady.requeuingStrategy.timestamp Creation: a workload
	 * evicted by a PodsReady timeout keeps its creation time in queue
	 * order (default Eviction: it queues from its eviction time). */
	bool requeue_ts_creation;
	/*
	 * Fair sharing (Configuration fairSharing; kueue-scheduler.md
	 * §2.5, §4.5, §4.6): the heads of a cohort tree are admitted in
	 * the order of a tournament on dominant resource shares (the
	 * lowest share after admission first), and preemption across
	 * ClusterQueues follows fs_strategies instead of the classical
	 * rules. ClusterQueue and Cohort weights come from their
	 * spec.fairSharing.weight.
	 */
	bool fair_sharing;
	enum sched_fs_strategy fs_strategies[2]; /* in order */
	size_t nfs_strategies; /* 0: the default, both, LTE first */
	/*
	 * Admission fair sharing (Configuration admissionFairSharing;
	 * ClusterQueues with admissionScope.admissionMode
	 * UsageBasedAdmissionFairSharing): pending workloads are ordered by
	 * their LocalQueue's decayed usage over its weight before priority.
	 * afs_res/afs_w (resourceWeights, nafs_w entries) are copied by
	 * sched_new.
	 */
	bool afs;
	int64_t afs_half_life_ms;  /* usageHalfLifeTime (0: no history) */
	int64_t afs_sampling_ms;   /* usageSamplingInterval */
	const char *const *afs_res;
	const double *afs_w;
	size_t nafs_w;
	/* resources.excludeResourcePrefixes and transformations
	 * (model/respolicy.h), applied to every pod's requests before they
	 * count against quota; borrowed (must outlive the sched); NULL: none */
	const struct res_policy *res_policy;
};

/* Defaults: partial_admission true, the rest zero. */
void sched_opts_default(struct sched_opts *o);

struct sched *sched_new(const struct sched_opts *o);
void sched_free(struct sched *s);

/* ------------------------------------------------------------------ */
/* Inputs. Each _set adds or replaces (by name) and triggers the requeue
 * events of kueue-scheduler.md §1.4 for what it can affect. */

void sched_flavor_set(struct sched *s, const struct resource_flavor *rf);
void sched_flavor_remove(struct sched *s, const char *name);

void sched_cohort_set(struct sched *s, const struct cohort *c);
void sched_cohort_remove(struct sched *s, const char *name);

/*
 * A ClusterQueue. invalid is NULL for a good object; otherwise the
 * object failed to decode or validate (only cq->meta is trusted) and
 * invalid says why: the queue exists, admits nothing, and is reported
 * inactive with that message.
 */
void sched_cq_set(struct sched *s, const struct cluster_queue *cq,
		  const char *invalid);
void sched_cq_remove(struct sched *s, const char *name);

/* Namespace labels, for ClusterQueue namespaceSelectors (copied). A
 * namespace never set has no labels. */
void sched_namespace_set(struct sched *s, const char *name,
			 const struct smap *labels);
void sched_namespace_remove(struct sched *s, const char *name);

/*
 * A workload (key: namespace/name), as the controller resolved it:
 *   cq     the ClusterQueue its LocalQueue points at (active or not: an
 *          inactive queue holds its workloads, counted as pending, and
 *          gives no heads until it is active), or NULL when it has no
 *          LocalQueue, the LocalQueue is missing or stopped, or the
 *          ClusterQueue is missing (the controller reports those itself;
 *          the workload is not queued);
 *   lq     "namespace/name" of its LocalQueue for the per-LocalQueue
 *          counts, or NULL.
 * What sched does with it follows its status: holding quota
 * (QuotaReserved=True with an admission, not finished; inactive or
 * evicted ones too, until the reservation is cleared) -> its usage
 * counts in status.admission.clusterQueue's tree (whether or not that
 * queue exists yet); finished, or inactive without a reservation ->
 * nothing; otherwise pending in cq's queue. Queue order uses
 * spec.priority and the creation timestamp (§1.2).
 */
/*
 * The pod sets of the workload key ("ns/name") changed in place (the
 * manager filled their dra lists): the next sched_wl_set compiles them
 * afresh. No-op for an unknown key.
 */
void sched_wl_podsets_changed(struct sched *s, const char *key);
void sched_wl_set(struct sched *s, const struct workload *w, const char *cq,
		  const char *lq);
void sched_wl_remove(struct sched *s, const char *ns, const char *name);
/* An admit decision's write failed: drop the assumption (usage
 * released) and requeue the workload as it was. No-op unless assumed. */
void sched_wl_forget(struct sched *s, const char *ns, const char *name);
/* An evict or requeue decision's write failed: check the workload again
 * at the next cycle (a decision is emitted once per version). */
void sched_wl_recheck(struct sched *s, const char *ns, const char *name);

/*
 * The Topologies and AdmissionChecks that exist (names, copied). A
 * ResourceFlavor naming a Topology that does not exist makes every
 * ClusterQueue using it inactive (TopologyNotFound, Kueue's message). A
 * ClusterQueue naming an AdmissionCheck is inactive: AdmissionCheckNotFound
 * while the check does not exist, AdmissionCheckInactive once it does
 * (cueue runs no admission check, so it admits nothing there rather than
 * skip the check).
 */
void sched_topology_set(struct sched *s, const char *name, bool exists);
void sched_admission_check_set(struct sched *s, const char *name,
			       bool exists);

/*
 * A LocalQueue's stopPolicy ("namespace/name"; STOP_NONE for one never
 * set or removed). HoldAndDrain evicts the workloads of the LocalQueue
 * that hold quota (Evicted reason LocalQueueStopped).
 */
void sched_lq_set(struct sched *s, const char *lq, enum stop_policy stop);

/*
 * Admission fair sharing. A LocalQueue object's ClusterQueue
 * (spec.clusterQueue; NULL: the object is gone) and
 * spec.fairSharing.weight (milli-units; 1000 when unset). Its history read back from its
 * status.fairSharing.admissionFairSharingStatus.consumedResources (the
 * first call per LocalQueue record counts; later ones are ignored, as
 * the status then only echoes what sched wrote; the history's clock starts
 * at now_ms). sched_afs_sample, every
 * usageSamplingInterval: each LocalQueue of a fair sharing ClusterQueue
 * decays its history with its admitted usage now and is marked dirty.
 * sched_lq_afs_status: the consumedResources (milli-units, rounded) and
 * lastUpdate to write, false when the LocalQueue's ClusterQueue does not
 * use admission fair sharing; out is released first.
 * sched_lq_afs_usage: the weighted usage the queue orders by.
 */
bool sched_lq_set_fs(struct sched *s, const char *lq, const char *cq,
		     int64_t milli); /* true when it changed anything */
bool sched_lq_afs_seed(struct sched *s, const char *lq,
		       const struct reslist *consumed, int64_t now_ms);
void sched_afs_sample(struct sched *s, int64_t now_ms);
bool sched_lq_afs_status(const struct sched *s, const char *lq,
			 struct reslist *out, int64_t *last_ms);
double sched_lq_afs_usage(const struct sched *s, const char *lq);

/* ------------------------------------------------------------------ */
/* The cycle */

enum sched_dec_kind {
	DEC_ADMIT,   /* quota reserved: write admission + QuotaReserved */
	DEC_PENDING, /* not admitted: write QuotaReserved=False */
	DEC_EVICT,   /* holds quota it should not: write Evicted=True (it
			keeps the quota until the reservation is cleared) */
	DEC_REQUEUE, /* held by Requeued=False whose cause ended: write
			Requeued=True */
	DEC_PREEMPT, /* a victim of classical preemption (§4): write
			Evicted=True reason Preempted and Preempted=True
			with preempt_reason; it keeps its quota until the
			reservation is cleared, like DEC_EVICT */
};

struct sched_decision {
	enum sched_dec_kind kind;
	const struct workload *wl; /* borrowed (the last one set) */
	const char *cq;            /* borrowed ClusterQueue name */
	/* DEC_PENDING: Kueue v0.14's reason ("Pending" for NoFit) and the
	 * message it gives, e.g. "couldn't assign flavors to pod set main:
	 * insufficient unused quota for cpu in flavor default, 1 more
	 * needed". DEC_EVICT: the Evicted reason ("Deactivated",
	 * "ClusterQueueStopped", "LocalQueueStopped") and message ("The
	 * workload is deactivated", ...). DEC_REQUEUE: the Requeued=True
	 * reason ("Reactivated", "ClusterQueueRestarted",
	 * "LocalQueueRestarted") and message. Reason static, message owned.
	 * DEC_ADMIT: NULL. */
	const char *reason;
	char *message;
	/* DEC_ADMIT: the borrowing level of §2.3 (0 = none). */
	int borrowing;
	/*
	 * DEC_PREEMPT: wl is the victim and cq its ClusterQueue; reason is
	 * "Preempted"; preempt_reason the Preempted condition's reason
	 * ("InClusterQueue", "InCohortReclamation",
	 * "InCohortReclaimWhileBorrowing"; static); message Kueue's
	 * "Preempted to accommodate a workload (UID: <u>, JobUID: <j>) due
	 * to <why>; preemptor path: /<cohorts...>/<cq>; preemptee path:
	 * ..." (UNKNOWN for a missing UID or job-uid label). preemptor is
	 * the workload it makes room for (borrowed) and preemptor_cq its
	 * ClusterQueue. The preemptor itself gets a DEC_PENDING in the same
	 * call whose message ends with ". Pending the preemption of N
	 * workload(s)".
	 */
	const char *preempt_reason;
	const struct workload *preemptor;
	const char *preemptor_cq;
	/* Private to sched: the compact assignment. */
	struct sched_assignment *asg;
};

struct sched_decisions {
	struct sched_decision *v; /* owned */
	size_t n;
	size_t cap;
};

/*
 * Runs one cycle at now_ms and appends its decisions to out (which the
 * caller zeroed, or reused after sched_decisions_clear). It starts with
 * sched_tick(s, now_ms), so backoffs expired by now_ms compete; then the
 * evictions and requeues of the workloads whose input changed (at most
 * one per workload version), then the admission rounds. Returns how
 * many workloads were admitted. Pending decisions are reported at most
 * once per pop: a parked workload is not reported again until it was
 * retried.
 */
size_t sched_cycle(struct sched *s, int64_t now_ms,
		   struct sched_decisions *out);
/* Builds the status.admission of an admit decision into out (released
 * first): clusterQueue, and per pod set the flavors, resourceUsage
 * (per-pod x count) and count. Valid until the next sched call that
 * changes state. */
void sched_decision_admission(const struct sched *s,
			      const struct sched_decision *d,
			      struct admission *out);
void sched_decisions_clear(struct sched_decisions *d); /* keeps storage */
void sched_decisions_release(struct sched_decisions *d);

/* A state nobody schedules from (a follower's, kept for the
 * visibility API): the eviction and requeue checks owed are dropped
 * without a decision, and the records of workloads removed meanwhile are
 * freed. A state that runs cycles never calls it. */
void sched_drop_checks(struct sched *s);

/* True when a cycle may admit or report something now (some active
 * queue has a head, and admission is not blocked waiting for
 * PodsReady). */
bool sched_has_work(const struct sched *s);
/* Earliest time a parked workload's backoff expires, or 0: the
 * controller arms a timer and calls sched_cycle then. */
int64_t sched_next_wakeup(const struct sched *s);
/* Moves workloads whose backoff expired by now_ms back to their heaps
 * (sched_cycle does it first; alone, it moves them without a cycle). */
void sched_tick(struct sched *s, int64_t now_ms);

/* ------------------------------------------------------------------ */
/* What status writers and metrics read */

struct sched_cq_status {
	bool exists;
	bool active;
	/* Active condition (kueue-api.md §3.5): reason "Ready", "Stopped",
	 * "FlavorNotFound", "Terminating", ... and its message ("Can admit
	 * new workloads", "Can't admit new workloads: references missing
	 * ResourceFlavor(s): a,b."). Borrowed; valid until the next _set. */
	const char *reason;
	const char *message;
	int32_t pending;              /* heap + parked + inflight */
	int32_t pending_active;       /* heap */
	int32_t pending_inadmissible; /* parked */
	int32_t reserving;            /* holding quota (incl. assumed) */
	int32_t admitted;             /* of those, Admitted=True */
	/* Fair sharing on: status.fairSharing.weightedShare (rounded up;
	 * INT64_MAX for a zero weight that borrows) and the exact share
	 * (+Inf for that case) for kueue_cluster_queue_weighted_share. */
	bool fair;
	int64_t weighted_share;
	double share;
};

/* Fills st for ClusterQueue name; st->exists false when unknown. */
void sched_cq_status(const struct sched *s, const char *name,
		     struct sched_cq_status *st);

/*
 * status.flavorsReservation (admitted_only false) or flavorsUsage (true)
 * of a ClusterQueue as Kueue writes them: one entry per flavor listed in
 * its resourceGroups (in spec order), inside it one per covered resource
 * sorted by name, zero totals included, borrowed = max(0, total -
 * nominal) and 0 without a cohort. *out is a new array (the caller
 * releases it with flavor_usages_release, which frees the array too);
 * *n its length.
 */
void sched_cq_usage(const struct sched *s, const char *name,
		    bool admitted_only, struct flavor_usage **out, size_t *n);

struct sched_lq_status {
	int32_t pending;
	int32_t reserving;
	int32_t admitted;
};

/* Counts of one LocalQueue ("namespace/name"); zeros when unknown. */
void sched_lq_status(const struct sched *s, const char *lq,
		     struct sched_lq_status *st);
/* LocalQueue flavorsReservation / flavorsUsage: one entry per flavor
 * with usage, resources sorted by name, borrowed always 0. Same
 * ownership as sched_cq_usage. */
void sched_lq_usage(const struct sched *s, const char *lq,
		    bool admitted_only, struct flavor_usage **out, size_t *n);

/* Whether a workload is known and holds quota (confirmed or assumed). */
bool sched_wl_holds_quota(const struct sched *s, const char *ns,
			  const char *name);
/*
 * The pending workloads of ClusterQueue cq that wait in its inadmissible
 * set (parked), counted per LocalQueue, as Kueue's LocalQueue pending
 * metric splits them: fn(ud, "namespace/name", n) once per LocalQueue
 * with n > 0, in no particular order. O(parked of cq); nothing for an
 * unknown cq. Not const: it counts in the LocalQueue records.
 */
typedef void sched_lq_count_fn(void *ud, const char *lq, int32_t n);
void sched_cq_parked_by_lq(struct sched *s, const char *cq,
			   sched_lq_count_fn *fn, void *ud);

/*
 * The pending workloads of ClusterQueue cq in the order the next cycles
 * would try them (queue_snapshot: active ones in queue order, then the
 * parked ones), for the visibility API: fn(ud, w, lq, priority, parked)
 * for each, lq its LocalQueue "namespace/name" or NULL, priority the
 * effective one the queue orders by; fn returns false to stop. Returns
 * false (nothing visited) when cq is unknown. Between cycles only.
 */
typedef bool sched_pending_fn(void *ud, const struct workload *w,
			      const char *lq, int32_t priority, bool parked);
bool sched_cq_pending(const struct sched *s, const char *cq,
		      sched_pending_fn *fn, void *ud);

/*
 * Coalesced status writes: every ClusterQueue and LocalQueue whose
 * status (counts, usage, Active) may have changed since the last call is
 * visited once, then forgotten. Names are borrowed for the call.
 */
typedef void sched_dirty_fn(void *ud, const char *name);
void sched_take_dirty(struct sched *s, sched_dirty_fn *cq_fn,
		      sched_dirty_fn *lq_fn, void *ud);

/* Fair sharing on and a cohort of that name in the tree: its weighted
 * share, as sched_cq_status gives a ClusterQueue's. False otherwise. */
bool sched_cohort_share(const struct sched *s, const char *name,
			int64_t *rounded, double *share);
/* Fair sharing: every cohort above a ClusterQueue whose usage or
 * status changed since the last call, visited once (names borrowed for
 * the call), then forgotten. */
void sched_take_dirty_cohorts(struct sched *s, sched_dirty_fn *fn, void *ud);

/* ClusterQueues using cohort tree quota arithmetic, for the invariant
 * checker and tests: STYLE P15 over the whole state (tree, queues,
 * usage sums equal the workloads holding quota). */
bool sched_check(const struct sched *s);

/*
 * Record counts, for tests and the soak benchmark: memory follows what
 * exists, not what ever existed. A removed workload's record is freed at
 * once, or by the next sched_cycle when an eviction check was still owed
 * for it; a LocalQueue or namespace record once no workload refers to
 * it and it carries nothing of its own (no stopPolicy and no status
 * write owed; no labels). Ids are reused, so the *_ids high waters stay
 * at the peak of what existed at once.
 */
struct sched_stats {
	size_t workloads;      /* known by name (set, not removed) */
	size_t wl_records;     /* allocated: known + removed, not yet freed */
	size_t wl_ids;         /* workload ids ever handed out */
	size_t local_queues;   /* LocalQueue records */
	size_t lq_ids;
	size_t namespaces;     /* namespace records */
	size_t ns_ids;
	size_t cluster_queues; /* ClusterQueue records (never freed) */
};

void sched_stats(const struct sched *s, struct sched_stats *st);

#endif
