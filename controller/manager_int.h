/*
 * manager_int: what manager.c, manager_wl.c and manager_queues.c share,
 * and nothing else includes: the cache entries, struct manager, the
 * informer table's row type, the helpers all three use, and the few
 * functions one of them calls in another (listed by defining file).
 *
 * Caches. One hash map per kind (hmap.h). Entries for LocalQueues,
 * ClusterQueues and ResourceFlavors also exist as placeholders (object
 * NULL) while something references the name, so links survive the
 * referenced object's absence and recover when it appears:
 *   workload --lq_prev/next--> lq_entry --cq_prev/next--> cq_entry
 * A change of a LocalQueue or ClusterQueue re-resolves only the
 * workloads linked to it; no event scans all workloads.
 *
 * Threads: the loop thread only. JSON: as manager.c (see there).
 */
#ifndef CONTROLLER_MANAGER_INT_H
#define CONTROLLER_MANAGER_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/dlist.h"
#include "base/hmap.h"
#include "base/jx.h"
#include "base/text.h"
#include "controller/events.h"
#include "controller/kube.h"
#include "controller/log.h"
#include "controller/manager.h"
#include "controller/timers.h"
#include "flavors/sched.h"
#include "model/deadline.h"
#include "model/errors.h"
#include "model/objects.h"
#include "model/respolicy.h"
#include "model/smap.h"

struct event_recorder;
struct kube_watch;
struct loop;
struct status_writer;

#define KUEUE_VERSION "v1beta2"

/* ------------------------------------------------------------------ */
/* Entries */

struct wl_entry;
struct lq_entry;

struct rf_entry {
	char *name;                 /* owned; map key */
	struct manager *m;          /* borrowed; for write callbacks */
	struct resource_flavor *rf; /* owned; NULL: placeholder */
	size_t refs;                /* ClusterQueues listing it */
	struct kube_call *fin_call; /* finalizer patch in flight */
	char *fin_rv;               /* owned; its precondition */
	uint64_t seen;              /* list generation (resync sweep) */
};

struct cohort_entry {
	char *name;       /* owned; map key */
	struct cohort *c; /* owned */
	uint64_t seen;
};

struct cq_entry {
	char *name;               /* owned; map key */
	struct manager *m;        /* borrowed; for write callbacks */
	struct cluster_queue *cq; /* owned; NULL: placeholder */
	char *invalid;            /* owned; why cq failed, or NULL */
	char **flavors;           /* owned; distinct flavor names of cq */
	size_t nflavors;
	struct dlist lqs;         /* LocalQueues naming this queue
				     (lq_entry.cq_link) */
	bool active;              /* last seen through sched_cq_status */
	bool mdirty;              /* named in m->mdirty: gauges to refresh */
	struct kube_call *fin_call;
	char *fin_rv;
	uint64_t seen;
};

struct lq_entry {
	char *key;               /* owned; "ns/name"; map key */
	struct local_queue *lq;  /* owned; NULL: placeholder */
	struct cq_entry *cqe;    /* borrowed; the queue lq names, or NULL */
	struct dlist cq_link;    /* in cqe->lqs */
	struct dlist wls;        /* workloads naming this LocalQueue
				    (wl_entry.lq_link) */
	uint64_t seen;
	int32_t parked;          /* on_mflush's scratch: of its pending,
				    those parked in its ClusterQueue */
};

struct ns_entry {
	char *name;           /* owned; map key */
	char *rv;             /* owned */
	struct smap labels;
	uint64_t seen;
};

/* An object cueue knows by name only (Topology, AdmissionCheck). */
struct name_entry {
	char *name;                         /* owned; map key */
	uint64_t seen;
};
struct wpc_entry {
	char *name;                         /* owned; map key */
	struct workload_priority_class *p;  /* owned */
	uint64_t seen;
};

enum wl_call {
	WC_NONE = 0,
	WC_ADMIT,
	WC_PENDING,
	WC_CHECK,     /* an evict or requeue decision's write */
	WC_DEADLINE,  /* a timed write of manager_deadline.c (status) */
	WC_SPEC,      /* spec.active=false (manager_deadline.c) */
};

enum wl_queue {
	WQ_NONE = 0,
	WQ_ADMIT,
	WQ_PENDING,
};

struct wl_entry {
	char *key;               /* owned; "ns/name"; map key */
	struct manager *m;       /* borrowed; for write callbacks */
	struct workload *w;      /* owned; the last good version */
	char *bad_rv;            /* owned; last version that failed */
	struct lq_entry *lqe;    /* borrowed; NULL without queueName */
	struct dlist lq_link;    /* in lqe->wls */
	bool in_sched;           /* sched_wl_set was called */
	struct cq_entry *res_cqe; /* what sched was last told */
	struct lq_entry *res_lqe;
	/* the QuotaReserved=False condition the object should show */
	char *want_reason;       /* owned or NULL */
	char *want_msg;          /* owned or NULL */
	int64_t want_since_ms;   /* loop time want_reason was last set
				    from none */
	/* an admit decision waiting for its write */
	bool admit_pending;
	struct admission adm;    /* owned while admit_pending */
	int64_t admit_wall_ms;   /* QuotaReserved's lastTransitionTime
				    in the admission write in flight */
	char *admit_rv;          /* owned; the version decided on */
	/* the write in flight */
	struct kube_call *call;
	enum wl_call call_kind;
	char *call_rv;           /* owned; its precondition */
	char *sent_rv;           /* owned; a pending write based on this
				    version succeeded: no rewrite until a
				    newer version arrives */
	bool forget_on_update;   /* 409 on an admit: forget the assumption
				    when the newer version arrives */
	/* an evict (DEC_EVICT) or requeue (DEC_REQUEUE) decision waiting
	 * for its write */
	bool chk_pending;
	enum sched_dec_kind chk_kind;
	const char *chk_reason;  /* static (sched's) */
	char *chk_msg;           /* owned */
	char *chk_rv;            /* owned; the version decided on */
	/* DEC_PREEMPT: the Preempted reason (static), the preempting
	 * ClusterQueue and the preemptor's priority (for the Event) */
	const char *chk_preempt;
	char *chk_by_cq;         /* owned */
	int32_t chk_by_prio;
	/* DEC_PREEMPT: the preemptor's key ("ns/name"), of the decision
	 * waiting (chk_by_key) and of the write in flight (call_by_key);
	 * each counts once in that preemptor's victims_out */
	char *chk_by_key;        /* owned; NULL unless chk_pending */
	char *call_by_key;       /* owned; NULL unless a WC_CHECK flies */
	/* as a preemptor: evictions decided for it whose writes have not
	 * been answered; its admission write waits for none left (see
	 * controller/README.md "Preemption writes") */
	unsigned victims_out;
	bool chk_first;          /* the eviction sent is the first of its
				    reason and cause (schedulingStats) */
	bool recheck_on_update;  /* 409 on it: sched checks again when the
				    newer version arrives */
	bool owned;              /* has ownerReferences: an integration
				    (or the owner) stops what runs before
				    the reservation is cleared */
	enum wl_queue inq;
	struct dlist q_link;     /* in m->admitq or m->pendq (inq) */
	int64_t pend_ms;         /* loop time of the last QuotaReserved=False
				    write sent; 0: none yet */
	int64_t pend_prev_ms;    /* of the one before; 0: none */
	bool deferred;           /* in m->deferq: a message-only change
				    waits for pending_msg_ms */
	struct dlist d_link;     /* in m->deferq while deferred */
	/* the workload controller's timed duties (manager_deadline.c) */
	struct timer dl_timer;   /* armed for the next deadline */
	bool dl_pending;         /* dl_act waits for its write */
	struct deadline_action dl_act;
	char *dl_rv;             /* owned; the version decided on */
	char *dl_sent_rv;        /* owned; a write based on this version
				    succeeded: decide again once it moves */
	bool dl_first;           /* the timeout eviction sent is the first
				    of its reason and cause */
	int64_t dl_retry_ms;     /* delay of the last retry after a failed
				    timed write; 0 after a success */
	/* what an eviction's report needs of the version it was written
	 * on (the reply may find a newer one, its reservation cleared) */
	char *ev_cq;             /* owned; admission.clusterQueue */
	int64_t ev_ready_ms;     /* PodsReady=True since; 0: not ready */
	uint64_t seen;
};

/* ------------------------------------------------------------------ */
/* Informers (STYLE P11: one row per watched kind) */

enum inf_kind {
	INF_RF,
	INF_COHORT,
	INF_CQ,
	INF_NS,
	INF_LQ,
	INF_WPC,
	INF_WL,
	INF_TOPO,  /* Topologies: names only */
	INF_AC,    /* AdmissionChecks: names only */
	INF_N
};

struct manager;
typedef void apply_fn(struct manager *m, const json_t *obj, const char *key);
typedef void remove_fn(struct manager *m, const char *key);
typedef void sweep_fn(struct manager *m, uint64_t gen);

struct inf_def {
	const char *group;     /* "" for core */
	const char *version;
	const char *resource;
	bool namespaced;       /* key "ns/name" */
	apply_fn *apply;       /* ADDED, MODIFIED, list items */
	remove_fn *remove;     /* DELETED */
	sweep_fn *sweep;       /* resync: drop entries not seen in gen */
};

/* The informer table (manager_queues.c): one row per kind, indexed by
 * enum inf_kind. */
extern const struct inf_def manager_queues_inf_defs[INF_N];

struct informer {
	struct manager *m;      /* borrowed */
	enum inf_kind kind;
	struct kube_watch *w;   /* owned */
	bool synced;
	bool paged;             /* the list in progress came in pages */
};

struct manager {
	struct kube *k;           /* borrowed */
	struct loop *l;           /* borrowed */
	struct manager_opts o;
	struct sched *s;          /* owned */
	struct informer inf[INF_N];
	size_t nsynced;
	bool fed;                 /* caches handed to sched: cycles may run */
	bool changed;             /* sched inputs changed since the last cycle */
	bool closing;             /* manager_free: submit nothing more */
	bool leading;             /* may decide and write (manager_lead;
				     from the start without opts.standby);
				     a follower feeds sched too, passively,
				     for the visibility API (manager_leads) */
	struct sched_opts so;     /* what sched_new was given (afs_res and
				     afs_w point at afs_names, afs_wv) */
	char **afs_names;         /* owned copies of opts.afs_res */
	struct res_policy res_policy; /* owned copy of opts.res_policy */
	double *afs_wv;           /* owned copy of opts.afs_w */
	bool draining;            /* manager_drain: decide nothing more */
	uint64_t gen[INF_N];      /* list generation per kind (entries
				     record the one they were seen in) */
	struct hmap rfs, cohorts, cqs, nss, lqs, wpcs, wls;
	struct hmap topos, acs;   /* struct name_entry by name */
	/* dynamic resource allocation (manager_dra.c) */
	struct hmap rcts;         /* ResourceClaimTemplates by "ns/name" */
	struct hmap dra_map;      /* device class -> quota resource (owned
				     strings) */
	struct kube_watch *rctw;  /* owned; resourceclaimtemplates */
	uint64_t dra_gen;         /* list generation of rcts */
	struct dlist admitq, pendq; /* write FIFOs (wl_entry.q_link) */
	struct dlist deferq;      /* deferred message-only pending writes
				     (wl_entry.d_link), in no order */
	size_t ndeferred;
	struct timer defer;       /* DEFER_TICK_MS while deferq is set */
	struct timer audit;       /* audit_holds every AUDIT_MS (debug) */
	struct event_recorder *ev; /* owned; "kueue-admission" */
	size_t wl_inflight;
	size_t pend_inflight;     /* of those, pending writes */
	size_t fin_inflight;      /* finalizer patches in flight */
	size_t n_requeue_at;      /* cached workloads with a requeueAt */
	struct sched_decisions decs;
	struct status_writer *cqw, *lqw; /* owned */
	struct status_writer *cow;       /* owned; Cohorts (fair sharing) */
	struct timer wake;        /* run the before-sleep step again soon */
	struct timer backoff;     /* sched_next_wakeup */
	char **mdirty;            /* owned; ClusterQueues whose gauges the
				     next mflush refreshes */
	size_t nmdirty, cap_mdirty;
	struct timer mflush;      /* METRICS_FLUSH_MS after the first mark */
	struct timer afs;         /* admission fair sharing sampling */
	char **dirty_cq;          /* owned; collected by sched_take_dirty */
	size_t ndirty_cq, cap_dirty_cq;
	char **dirty_lq;
	size_t ndirty_lq, cap_dirty_lq;
	struct manager_stats stats;
	uint64_t nsview_gen;      /* manager_nsview_gen */
	manager_wl_observer_fn *wl_obs; /* jobs.c; may be NULL */
	void *wl_obs_ud;          /* borrowed */
};

/* ------------------------------------------------------------------ */
/* Dynamic resource allocation (manager_dra.c) */

/* Starts the ResourceClaimTemplates watch and copies the Configuration's
 * deviceClassMappings (manager_new); free stops and frees it. */
void manager_dra_start(struct manager *m);
void manager_dra_free(struct manager *m);
/*
 * Counts w's claim templates' devices into its pod sets' dra lists
 * (changed: some list changed). Returns NULL when w's devices are
 * counted (or it has no claims), else Kueue's message for why they
 * cannot be (a new string): w must then not be queued, and shows it with
 * reason REASON_MISCONFIGURED.
 */
char *manager_dra_fill(struct manager *m, struct workload *w, bool *changed);
#define REASON_MISCONFIGURED "Misconfigured"

/* ------------------------------------------------------------------ */
/* Small helpers (static inline: two or more manager files use them) */

/*
 * Whether this manager decides and writes: it leads, its caches were fed,
 * and it does not only inspect. A follower (and kubectl cueue's
 * inspecting manager) also feeds sched once synced, so the visibility API
 * can answer from any replica, as Kueue's does since it serves from every
 * replica; it runs no cycle, no timed duty, no write and no status.
 */
static inline bool manager_leads(const struct manager *m)
{
	return m->fed && m->leading && !m->o.inspect;
}


static inline void set_str(char **dst, const char *s)
{
	char *n = xstrdup_or_null(s);

	free(*dst);
	*dst = n;
}

static inline char *path_of(const char *resource, const char *ns,
			    const char *name, const char *sub)
{
	const char *group = KUEUE_GROUP, *version = KUEUE_VERSION;
	struct kube_ref r = { .group = group, .version = version,
			      .resource = resource, .ns = ns, .name = name,
			      .subresource = sub };

	return kube_path(&r);
}

/* Splits "ns/name" in place into a copy; *name points into it. */
static inline char *split_key(const char *key, const char **name)
{
	char *ns = xstrdup(key), *slash = strchr(ns, '/');

	if (!slash)
		BUG("namespaced key without '/': %s", key);
	*slash = '\0';
	*name = slash + 1;
	return ns;
}

/* Logs the field errors of an invalid object once per version and
 * returns their aggregate (new). */
static inline char *log_invalid(struct manager *m, const char *kind,
				const char *ns, const char *name,
				const struct field_errors *fe)
{
	char *msg = field_errors_aggregate(fe);

	m->stats.invalid++;
	log_msg(LOG_WARN, kind, ns, name, "invalid object ignored: %s", msg);
	return msg;
}

/* ------------------------------------------------------------------ */
/* Shared functions, by the file that defines them */

/* manager.c */

/* Refreshes e's ClusterQueue gauges from sched now (no-op without
 * metrics, a ClusterQueue, or before the caches were fed). */
void manager_cq_metrics(struct manager *m, const struct cq_entry *e);

/* Marks e's status for a write and its ClusterQueue's gauges for the
 * next flush. */
void manager_lq_mark(struct manager *m, struct lq_entry *e);

/* manager_wl.c */

/* The defer timer's callback (ud: the manager). */
void manager_wl_on_defer(void *ud, int64_t now_ms);

/* Re-resolves e's LocalQueue and ClusterQueue and tells sched when the
 * answer changed (always with force); a no-op before the caches were
 * fed. */
void manager_wl_resolve(struct manager *m, struct wl_entry *e, bool force);

/* Submits queued workload writes, up to max_wl_writes in flight. */
void manager_wl_pump(struct manager *m);

/* Turns m->decs (the last cycle's decisions) into wanted writes. */
void manager_wl_apply_decisions(struct manager *m);

/* The Workloads row of manager_queues_inf_defs. */
apply_fn manager_wl_apply;
remove_fn manager_wl_remove;
sweep_fn manager_wl_sweep;

/* Tells sched, cancels e's write in flight, unlinks and frees e (and
 * its LocalQueue placeholder when that was its last use). */
void manager_wl_drop(struct manager *m, struct wl_entry *e);

/* Submits body as a merge patch of the workload (its /status when
 * status) with rv as the precondition recorded for the reply. */
void manager_wl_submit(struct manager *m, struct wl_entry *e, json_t *body,
		       enum wl_call kind, const char *rv, bool status);

/* DELETE of the workload with rv as its precondition (a timed duty:
 * objectRetentionPolicies); its reply goes to manager_dl_done. */
void manager_wl_delete(struct manager *m, struct wl_entry *e, const char *rv);
/* afterDeactivatedByKueue: DELETE of the Job owning e (its controller
 * owner reference; preconditions.uid, propagation Background), as a
 * WC_DEADLINE call of e. Returns false when e has no Job owner. */
bool manager_wl_delete_job(struct manager *m, struct wl_entry *e);
/* The controller owner reference of kind batch/v1 Job of w, or NULL. */
const struct owner_ref *manager_wl_job_owner(const struct workload *w);
/* An event about the workload (kueue-admission). */
void manager_wl_event(struct manager *m, const struct wl_entry *e,
		      enum event_type type, const char *reason,
		      const char *fmt, ...) PRINTF_LIKE(5, 6);

/*
 * An eviction was written: kueue_evicted_workloads_total and friends
 * (reason, underlying cause; first: the first of that reason and cause
 * in the workload's schedulingStats), kueue_pods_ready_to_evicted_time_
 * seconds when its pods were ready, and the EvictedDueTo<Reason> event
 * (event_reason: the Evicted condition's reason as written).
 */
void manager_wl_evict_report(struct manager *m, const struct wl_entry *e,
			     const char *event_reason, const char *reason,
			     const char *cause, const char *msg, bool first);
/* Records in e what manager_wl_evict_report reads of the version an
 * eviction write is based on (call when sending it). */
void manager_wl_evict_note(struct wl_entry *e);

/*
 * tmp's schedulingStats.evictions: w's, with one more of (reason,
 * cause). True when it is the first of that reason and cause.
 */
bool manager_wl_evictions_inc(struct workload *tmp, const struct workload *w,
			      const char *reason, const char *cause);

/*
 * An eviction's effect on an ownerless workload, whose reservation the
 * eviction write clears itself (nothing runs for it to stop): the
 * conditions of tmp become those of the clear (Requeued as §7.4 says
 * for reason, QuotaReserved=False Pending with msg, Admitted=False
 * NoReservation, the admitted seconds accumulated); the caller writes
 * "admission": null and accumulatedPastExecutionTimeSeconds.
 */
void manager_wl_clear_conds(struct workload *tmp, const char *reason,
			    const char *msg, int64_t gen, int64_t now);

/* manager_deadline.c */

/* Decides what e needs now (deadline.h) and queues its write, or arms
 * its timer for the next deadline. No-op before the caches were fed or
 * while a write of it is in flight. */
void manager_dl_check(struct manager *m, struct wl_entry *e);
/* Sends the queued timed write of e. */
void manager_dl_send(struct manager *m, struct wl_entry *e);
/* A retention DELETE took effect (its reply, or the watch's DELETED
 * event that may come first and cancels the reply): log and event. */
void manager_dl_deleted(struct manager *m, struct wl_entry *e);
/* Its reply (WC_DEADLINE or WC_SPEC). */
void manager_dl_done(struct manager *m, struct wl_entry *e,
		     const struct kube_reply *r);
/* e's timer (ud: e). */
void manager_dl_on_timer(void *ud, int64_t now_ms);
/* e is going: its timer is cancelled, its fields freed. */
void manager_dl_drop(struct manager *m, struct wl_entry *e);

/* manager_queues.c */

/* Adds or removes the resource-in-use finalizer when needed, one patch
 * per object in flight (a ClusterQueue's never beside its status
 * write). */
void manager_queues_cq_finalize(struct manager *m, struct cq_entry *e);
void manager_queues_rf_finalize(struct manager *m, struct rf_entry *e);

/* Marks each LocalQueue of cqe and re-resolves its workloads. */
void manager_queues_cq_resolve_all(struct manager *m, struct cq_entry *cqe);

/* The LocalQueue entry of "ns/name" (borrowed: m->lqs owns it), created
 * as a placeholder when absent; manager_queues_lq_gc frees e (NULL:
 * no-op) once it has neither a LocalQueue nor workloads. */
struct lq_entry *manager_queues_lq_get(struct manager *m, const char *key);
void manager_queues_lq_gc(struct manager *m, struct lq_entry *e);

/* For manager_free: each frees one entry and what it owns (cancelling
 * a finalizer patch in flight), telling neither sched nor the maps. */
void manager_queues_rf_entry_free(struct manager *m, struct rf_entry *e);
void manager_queues_cohort_entry_free(struct cohort_entry *e);
/* A LocalQueue's fair sharing weight and, once, its admission fair
 * sharing history (its status) to sched; lq NULL: it is gone. */
void manager_lq_fs(struct manager *m, const char *key,
		   const struct local_queue *lq);
void manager_queues_cq_entry_free(struct manager *m, struct cq_entry *e);
void manager_queues_ns_entry_free(struct ns_entry *e);
void manager_queues_lq_entry_free(struct lq_entry *e);
void manager_queues_wpc_entry_free(struct wpc_entry *e);
/* Tells sched every Topology and AdmissionCheck cached (the first feed). */
void manager_queues_feed_names(struct manager *m);
void manager_queues_names_free(struct manager *m);

#endif
