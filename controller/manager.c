/*
 * manager: informer consumers, object caches, workload resolution, the
 * scheduling cycle and the writes of its decisions (see manager.h).
 *
 * Caches. One hash map per kind (hmap.h). Entries for LocalQueues,
 * ClusterQueues and ResourceFlavors also exist as placeholders (object
 * NULL) while something references the name, so links survive the
 * referenced object's absence and recover when it appears:
 *   workload --lq_prev/next--> lq_entry --cq_prev/next--> cq_entry
 * A change of a LocalQueue or ClusterQueue re-resolves only the
 * workloads linked to it; no event scans all workloads.
 *
 * Workload writes. Each workload entry has at most one write in flight.
 * Admit decisions copy their assignment into the entry (admit_pending)
 * and wait in the admit queue; QuotaReserved=False writes wait in the
 * pending queue; at most max_wl_writes are submitted at once (admits
 * first), so a burst of decisions never piles serialised bodies into the
 * client. Bodies are built at submission from the cached object.
 * A ClusterQueue's finalizer patch and its status write never overlap;
 * the one held back goes when the other ends.
 *
 * Cycles run in the before-sleep step when a sched input changed and
 * when sched's backoff wakeup is due: one sched_cycle tries every pending
 * workload once and the core is deterministic, so nothing is polled.
 *
 * JSON: this file holds json_t, outside STYLE P3(c)'s list, because it
 * is where informer objects meet the codec and where merge-patch bodies
 * are assembled from codec output; no json_t outlives a callback except
 * the status writer's last bodies (status.c).
 */
#include "controller/manager.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "controller/events.h"
#include "controller/hmap.h"
#include "controller/kube.h"
#include "controller/kube_watch.h"
#include "controller/kueue_metrics.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/status.h"
#include "flavors/sched.h"
#include "model/alloc.h"
#include "model/codec.h"
#include "model/validate.h"

#define KUEUE_VERSION "v1beta2"
#define COND_QUOTA_RESERVED "QuotaReserved"
#define COND_ADMITTED "Admitted"
#define COND_ACTIVE "Active"
#define REASON_INADMISSIBLE "Inadmissible"
#define REASON_PENDING "Pending"
#define EVENT_COMPONENT "kueue-admission"
#define DEFAULT_PENDING_MSG_MS 10000
#define DEFAULT_STATUS_INTERVAL_MS 1000
#define DEFER_TICK_MS 1000
#define METRICS_FLUSH_MS 250 /* ClusterQueue gauges: at most 4 refreshes/s */
#define AUDIT_MS 5000 /* audit_holds period at --log-level debug */

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
	struct lq_entry *lqs;     /* LocalQueues naming this queue */
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
	struct lq_entry *cq_prev, *cq_next;
	struct wl_entry *wls;    /* workloads naming this LocalQueue */
	uint64_t seen;
	int32_t parked;          /* on_mflush's scratch: of its pending,
				    those parked in its ClusterQueue */
};

struct ns_entry {
	char *name;           /* owned; map key */
	char *rv;             /* owned */
	struct strmap labels;
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
	struct wl_entry *lq_prev, *lq_next;
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
	enum wl_queue inq;
	struct wl_entry *q_prev, *q_next;
	int64_t pend_ms;         /* loop time of the last QuotaReserved=False
				    write sent; 0: none yet */
	int64_t pend_prev_ms;    /* of the one before; 0: none */
	bool deferred;           /* in m->deferq: a message-only change
				    waits for pending_msg_ms */
	struct wl_entry *d_prev, *d_next;
	uint64_t seen;
};

struct wl_fifo {
	struct wl_entry *head, *tail;
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
	INF_N
};

struct manager;
typedef void apply_fn(struct manager *m, const json_t *obj, const char *key);
typedef void remove_fn(struct manager *m, const char *key);
typedef void sweep_fn(struct manager *m, uint64_t gen);

static apply_fn apply_rf, apply_cohort, apply_cq, apply_ns, apply_lq,
	apply_wpc, apply_wl;
static remove_fn remove_rf, remove_cohort, remove_cq, remove_ns, remove_lq,
	remove_wpc, remove_wl;
static sweep_fn sweep_rf, sweep_cohort, sweep_cq, sweep_ns, sweep_lq,
	sweep_wpc, sweep_wl;

static const struct inf_def {
	const char *group;     /* "" for core */
	const char *version;
	const char *resource;
	bool namespaced;       /* key "ns/name" */
	apply_fn *apply;       /* ADDED, MODIFIED, list items */
	remove_fn *remove;     /* DELETED */
	sweep_fn *sweep;       /* resync: drop entries not seen in gen */
} inf_defs[INF_N] = {
	[INF_RF] = { KUEUE_GROUP, KUEUE_VERSION, "resourceflavors", false,
		     apply_rf, remove_rf, sweep_rf },
	[INF_COHORT] = { KUEUE_GROUP, KUEUE_VERSION, "cohorts", false,
			 apply_cohort, remove_cohort, sweep_cohort },
	[INF_CQ] = { KUEUE_GROUP, KUEUE_VERSION, "clusterqueues", false,
		     apply_cq, remove_cq, sweep_cq },
	[INF_NS] = { "", "v1", "namespaces", false, apply_ns, remove_ns,
		     sweep_ns },
	[INF_LQ] = { KUEUE_GROUP, KUEUE_VERSION, "localqueues", true,
		     apply_lq, remove_lq, sweep_lq },
	[INF_WPC] = { KUEUE_GROUP, KUEUE_VERSION, "workloadpriorityclasses",
		      false, apply_wpc, remove_wpc, sweep_wpc },
	[INF_WL] = { KUEUE_GROUP, KUEUE_VERSION, "workloads", true, apply_wl,
		     remove_wl, sweep_wl },
};

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
	uint64_t gen[INF_N];      /* list generation per kind (entries
				     record the one they were seen in) */
	struct hmap rfs, cohorts, cqs, nss, lqs, wpcs, wls;
	struct wl_fifo admitq, pendq;
	struct wl_entry *deferq;  /* deferred message-only pending writes
				     (d_prev/d_next), in no order */
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
	struct timer wake;        /* run the before-sleep step again soon */
	struct timer backoff;     /* sched_next_wakeup */
	char **mdirty;            /* owned; ClusterQueues whose gauges the
				     next mflush refreshes */
	size_t nmdirty, cap_mdirty;
	struct timer mflush;      /* METRICS_FLUSH_MS after the first mark */
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
/* Small helpers */

static const char *jstr(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static const char *meta_str(const json_t *obj, const char *k)
{
	return jstr(json_object_get(obj, "metadata"), k);
}

static bool str_eq(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

static void set_str(char **dst, const char *s)
{
	char *n = xstrdup_or_null(s);

	free(*dst);
	*dst = n;
}

static char *path_of(const char *resource, const char *ns, const char *name,
		     const char *sub)
{
	const char *group = KUEUE_GROUP, *version = KUEUE_VERSION;
	struct kube_ref r = { .group = group, .version = version,
			      .resource = resource, .ns = ns, .name = name,
			      .subresource = sub };

	return kube_path(&r);
}

/* Splits "ns/name" in place into a copy; *name points into it. */
static char *split_key(const char *key, const char **name)
{
	char *ns = xstrdup(key), *slash = strchr(ns, '/');

	if (!slash)
		BUG("namespaced key without '/': %s", key);
	*slash = '\0';
	*name = slash + 1;
	return ns;
}

static void wake_soon(struct manager *m)
{
	loop_timer_arm(m->l, &m->wake, 0);
}

/* Logs the field errors of an invalid object once per version and
 * returns their aggregate (new). */
static char *log_invalid(struct manager *m, const char *kind,
			 const char *ns, const char *name,
			 const struct field_errors *fe)
{
	char *msg = field_errors_aggregate(fe);

	m->stats.invalid++;
	log_msg(LOG_WARN, kind, ns, name, "invalid object ignored: %s", msg);
	return msg;
}

/* ------------------------------------------------------------------ */
/* Workload queues */

static void fifo_push(struct wl_fifo *q, struct wl_entry *e)
{
	e->q_next = NULL;
	e->q_prev = q->tail;
	if (q->tail)
		q->tail->q_next = e;
	else
		q->head = e;
	q->tail = e;
}

static void fifo_unlink(struct wl_fifo *q, struct wl_entry *e)
{
	if (e->q_prev)
		e->q_prev->q_next = e->q_next;
	else
		q->head = e->q_next;
	if (e->q_next)
		e->q_next->q_prev = e->q_prev;
	else
		q->tail = e->q_prev;
	e->q_prev = e->q_next = NULL;
}

static void wl_dequeue(struct manager *m, struct wl_entry *e)
{
	if (e->inq == WQ_ADMIT)
		fifo_unlink(&m->admitq, e);
	else if (e->inq == WQ_PENDING)
		fifo_unlink(&m->pendq, e);
	e->inq = WQ_NONE;
}

static void wl_enqueue(struct manager *m, struct wl_entry *e, enum wl_queue q)
{
	if (e->inq == q)
		return;
	wl_dequeue(m, e);
	fifo_push(q == WQ_ADMIT ? &m->admitq : &m->pendq, e);
	e->inq = q;
}

/* ------------------------------------------------------------------ */
/* Workload state */

/* Pending in Kueue's sense: could be queued (no quota, not finished,
 * active); only such workloads get QuotaReserved=False written. */
static bool wl_is_pending(const struct workload *w)
{
	return w->active && !workload_is_finished(w) &&
	       !workload_has_quota_reservation(w);
}

static void want_set(struct wl_entry *e, const char *reason, const char *msg)
{
	if (str_eq(e->want_reason, reason) && str_eq(e->want_msg, msg))
		return;
	if (!e->want_reason)
		e->want_since_ms = loop_now_ms(e->m->l);
	set_str(&e->want_reason, reason);
	set_str(&e->want_msg, msg);
}

static void want_clear(struct wl_entry *e)
{
	FREE_AND_NULL(e->want_reason);
	FREE_AND_NULL(e->want_msg);
}

/*
 * Whether the object lacks the QuotaReserved=False condition wanted, and
 * how soon it gets it (the rule is in controller/README.md, "Pending
 * conditions"): a new condition, a status or a reason change at once; a
 * change of the scheduler's message text alone (reason Pending) at once
 * when the workload had at most one pending write in the last
 * pending_msg_ms (so a message that changes once, the common case in a
 * quiet cluster, is exact at once), otherwise when that window has
 * passed, the latest text then (so the object ends up exact: at most two
 * writes per window under churn); Inadmissible texts at once.
 */
enum pend_need {
	PEND_NONE,
	PEND_NOW,
	PEND_LATER,
};

static enum pend_need wl_pending_need(const struct manager *m,
				      const struct wl_entry *e)
{
	const struct condition *c;

	if (!e->want_reason || !wl_is_pending(e->w))
		return PEND_NONE;
	if (e->sent_rv && str_eq(e->sent_rv, e->w->meta.resource_version))
		return PEND_NONE;
	c = conditions_find(&e->w->conds, COND_QUOTA_RESERVED);
	/* A workload that never had a QuotaReserved condition and does not
	 * fit yet gets its first one after pending_grace_ms: under a
	 * stream most are admitted sooner, and never written pending. */
	if (!c && m->o.pending_grace_ms > 0 &&
	    str_eq(e->want_reason, REASON_PENDING) &&
	    loop_now_ms(m->l) - e->want_since_ms < m->o.pending_grace_ms)
		return PEND_LATER;
	if (!c || c->status != COND_FALSE ||
	    !str_eq(c->reason, e->want_reason))
		return PEND_NOW;
	if (str_eq(c->message, e->want_msg))
		return PEND_NONE;
	/* Inadmissible texts name a missing or stopped queue: a new one
	 * is a new state, and rare. */
	if (!e->pend_prev_ms || str_eq(e->want_reason, REASON_INADMISSIBLE) ||
	    loop_now_ms(m->l) - e->pend_prev_ms >= m->o.pending_msg_ms)
		return PEND_NOW;
	return PEND_LATER;
}

static void defer_add(struct manager *m, struct wl_entry *e)
{
	if (e->deferred)
		return;
	e->deferred = true;
	e->d_prev = NULL;
	e->d_next = m->deferq;
	if (m->deferq)
		m->deferq->d_prev = e;
	m->deferq = e;
	if (!m->ndeferred++)
		loop_timer_arm(m->l, &m->defer, DEFER_TICK_MS);
}

static void defer_del(struct manager *m, struct wl_entry *e)
{
	if (!e->deferred)
		return;
	if (e->d_prev)
		e->d_prev->d_next = e->d_next;
	else
		m->deferq = e->d_next;
	if (e->d_next)
		e->d_next->d_prev = e->d_prev;
	e->d_prev = e->d_next = NULL;
	e->deferred = false;
	if (!--m->ndeferred)
		loop_timer_cancel(m->l, &m->defer);
}

static void pump(struct manager *m);

/* Queues whatever write the entry needs now (none while one is in
 * flight: its end calls this again). */
static void wl_sync(struct manager *m, struct wl_entry *e)
{
	if (e->call)
		return;
	if (e->admit_pending) {
		wl_enqueue(m, e, WQ_ADMIT);
		return;
	}
	if (e->want_reason && !wl_is_pending(e->w))
		want_clear(e);
	switch (wl_pending_need(m, e)) {
	case PEND_NOW:
		defer_del(m, e);
		wl_enqueue(m, e, WQ_PENDING);
		break;
	case PEND_LATER:
		if (e->inq == WQ_PENDING)
			wl_dequeue(m, e);
		defer_add(m, e);
		break;
	case PEND_NONE:
		defer_del(m, e);
		if (e->inq == WQ_PENDING)
			wl_dequeue(m, e);
		break;
	}
}

/* The deferred pending writes whose time came go to the pending queue. */
static void on_defer(void *ud, int64_t now_ms)
{
	struct manager *m = ud;
	struct wl_entry *e = m->deferq, *next;

	(void)now_ms;
	for (; e; e = next) {
		next = e->d_next;
		if (wl_pending_need(m, e) != PEND_LATER)
			wl_sync(m, e);
	}
	if (m->ndeferred)
		loop_timer_arm(m->l, &m->defer, DEFER_TICK_MS);
	pump(m);
}

/*
 * Resolves the workload's LocalQueue and ClusterQueue, tells sched when
 * the answer (or the object, force) changed, and sets the Inadmissible
 * condition Kueue's workload controller writes for a missing, stopped or
 * inactive link (kueue-api.md §3.6, §7.4).
 */
static void wl_resolve(struct manager *m, struct wl_entry *e, bool force)
{
	const struct workload *w = e->w;
	struct lq_entry *lqe = e->lqe, *res_lqe = NULL;
	struct cq_entry *cqe = NULL;
	char *msg = NULL;

	if (!m->fed)
		return;
	if (!w->queue_name || !*w->queue_name) {
		/* not ours to queue */
	} else if (!lqe || !lqe->lq) {
		msg = xasprintf("LocalQueue %s doesn't exist", w->queue_name);
	} else {
		res_lqe = lqe;
		if (lqe->lq->stop != STOP_NONE)
			msg = xasprintf("LocalQueue %s is inactive",
					w->queue_name);
		else if (!lqe->cqe || !lqe->cqe->cq)
			msg = xasprintf("ClusterQueue %s doesn't exist",
					lqe->lq->cluster_queue);
		else if (!lqe->cqe->active)
			msg = xasprintf("ClusterQueue %s is inactive",
					lqe->cqe->name);
		/* An existing ClusterQueue, active or not, holds the
		 * workload in its queue (sched takes no head from an
		 * inactive one), as Kueue's queue manager does: it counts
		 * as pending there, and is considered once the queue is
		 * active again. */
		if (lqe->lq->stop == STOP_NONE && lqe->cqe && lqe->cqe->cq)
			cqe = lqe->cqe;
	}
	if (force || !e->in_sched || cqe != e->res_cqe ||
	    res_lqe != e->res_lqe) {
		sched_wl_set(m->s, w, cqe ? cqe->name : NULL,
			     res_lqe ? res_lqe->key : NULL);
		e->in_sched = true;
		e->res_cqe = cqe;
		e->res_lqe = res_lqe;
		m->changed = true;
	}
	if (msg && wl_is_pending(w))
		want_set(e, REASON_INADMISSIBLE, msg);
	else if (!msg && str_eq(e->want_reason, REASON_INADMISSIBLE))
		want_clear(e);
	free(msg);
	wl_sync(m, e);
}

static void cq_metrics_mark(struct manager *m, struct cq_entry *e);

/* A LocalQueue's status (and gauges, with its ClusterQueue's) may have
 * changed. */
static void lq_mark(struct manager *m, struct lq_entry *e)
{
	status_writer_mark(m->lqw, e->key);
	if (e->cqe)
		cq_metrics_mark(m, e->cqe);
}

static void lq_resolve_all(struct manager *m, struct lq_entry *lqe)
{
	for (struct wl_entry *e = lqe->wls; e; e = e->lq_next)
		wl_resolve(m, e, false);
}

static void cq_resolve_all(struct manager *m, struct cq_entry *cqe)
{
	for (struct lq_entry *l = cqe->lqs; l; l = l->cq_next) {
		lq_mark(m, l);
		lq_resolve_all(m, l);
	}
}

/* ------------------------------------------------------------------ */
/* Workload writes */

static void wl_done(void *ud, const struct kube_reply *r, json_t *body);

static json_t *patch_with_rv(const char *rv, json_t *status_take)
{
	json_t *p = json_object(), *md = json_object();

	json_object_set_new(md, "resourceVersion", json_string(rv ? rv : ""));
	json_object_set_new(p, "metadata", md);
	json_object_set_new(p, "status", status_take);
	return p;
}

static void wl_submit(struct manager *m, struct wl_entry *e, json_t *body,
		      enum wl_call kind, const char *rv)
{
	const char *name;
	char *ns = split_key(e->key, &name);
	char *path = path_of("workloads", ns, name, "status");
	struct kube_req req = { .verb = KUBE_PATCH_MERGE, .path = path,
				.body = body, .discard_answer = true,
				.done = wl_done, .ud = e };

	e->call_kind = kind;
	set_str(&e->call_rv, rv);
	m->wl_inflight++;
	e->call = kube_submit(m->k, &req);
	json_decref(body);
	free(path);
	free(ns);
}

/* An event about the workload (kueue-admission). */
static void wl_event(struct manager *m, const struct wl_entry *e,
		     enum event_type type, const char *reason,
		     const char *fmt, ...) PRINTF_LIKE(5, 6);
static void wl_event(struct manager *m, const struct wl_entry *e,
		     enum event_type type, const char *reason,
		     const char *fmt, ...)
{
	const struct workload *w = e->w;
	struct event_object o = {
		.api_version = KUEUE_GROUP "/" KUEUE_VERSION,
		.kind = "Workload", .ns = w->meta.namespace,
		.name = w->meta.name, .uid = w->meta.uid,
		.resource_version = w->meta.resource_version,
	};
	char msg[EVENT_MESSAGE_MAX + 2]; /* one more: event_record cuts */
	va_list ap;

	if (!m->ev)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	event_record(m->ev, &o, type, reason, msg);
}

/*
 * The admission write: status.admission and the whole conditions list
 * (a merge patch replaces lists), computed from the cached object so
 * conditions cueue does not manage survive, with the decided version as
 * precondition.
 */
static void send_admit(struct manager *m, struct wl_entry *e)
{
	struct workload tmp;
	const char *name, *cq = e->adm.cluster_queue;
	char *ns = split_key(e->key, &name), *msg;
	int64_t now = loop_wall_ms(m->l), gen = e->w->meta.generation;
	json_t *enc, *st = json_object();

	if (m->o.before_admit_write)
		m->o.before_admit_write(m->o.hook_ud, ns, name);
	memset(&tmp, 0, sizeof(tmp));
	conditions_copy(&tmp.conds, &e->w->conds);
	/* Kueue flips Evicted/Preempted to False on a new reservation. */
	for (size_t i = 0; i < tmp.conds.n; i++) {
		struct condition *c = &tmp.conds.v[i];

		if (c->status != COND_TRUE || (!str_eq(c->type, "Evicted") &&
					       !str_eq(c->type, "Preempted")))
			continue;
		msg = xasprintf("Previously: %s", c->message ? c->message : "");
		conditions_set(&tmp.conds, c->type, COND_FALSE,
			       COND_QUOTA_RESERVED, msg, gen, now);
		free(msg);
	}
	msg = xasprintf("Quota reserved in ClusterQueue %s", cq ? cq : "");
	conditions_set(&tmp.conds, COND_QUOTA_RESERVED, COND_TRUE,
		       COND_QUOTA_RESERVED, msg, gen, now);
	free(msg);
	conditions_set(&tmp.conds, COND_ADMITTED, COND_TRUE, "Admitted",
		       "The workload is admitted", gen, now);
	tmp.has_admission = true;
	tmp.admission = e->adm; /* shallow: e keeps ownership */
	e->admit_wall_ms = now;
	enc = codec_encode_workload_status(&tmp, API_V1BETA2);
	json_object_set(st, "admission", json_object_get(enc, "admission"));
	json_object_set(st, "conditions", json_object_get(enc, "conditions"));
	json_decref(enc);
	conditions_release(&tmp.conds);
	e->admit_pending = false;
	m->stats.admit_writes++;
	wl_submit(m, e, patch_with_rv(e->admit_rv, st), WC_ADMIT,
		  e->admit_rv);
	free(ns);
}

static void send_pending(struct manager *m, struct wl_entry *e)
{
	struct workload tmp;
	json_t *enc, *st = json_object();

	memset(&tmp, 0, sizeof(tmp));
	conditions_copy(&tmp.conds, &e->w->conds);
	conditions_set(&tmp.conds, COND_QUOTA_RESERVED, COND_FALSE,
		       e->want_reason, e->want_msg, e->w->meta.generation,
		       loop_wall_ms(m->l));
	enc = codec_encode_workload_status(&tmp, API_V1BETA2);
	json_object_set(st, "conditions", json_object_get(enc, "conditions"));
	json_decref(enc);
	conditions_release(&tmp.conds);
	m->stats.pending_writes++;
	m->pend_inflight++;
	e->pend_prev_ms = e->pend_ms;
	e->pend_ms = loop_now_ms(m->l);
	wl_submit(m, e, patch_with_rv(e->w->meta.resource_version, st),
		  WC_PENDING, e->w->meta.resource_version);
	/* Kueue's Pending event, once per message written (never per
	 * attempt: the write rule above paces both). Not for the
	 * Inadmissible conditions of missing or stopped queues, which
	 * Kueue's workload controller writes without an event. */
	if (!str_eq(e->want_reason, REASON_INADMISSIBLE))
		wl_event(m, e, EVENT_WARNING, "Pending", "%s",
			 e->want_msg ? e->want_msg : "");
}

static struct wl_entry *fifo_pop(struct wl_fifo *q)
{
	struct wl_entry *e = q->head;

	if (e)
		fifo_unlink(q, e);
	return e;
}

/*
 * Submits queued workload writes: admissions first, up to max_wl_writes
 * in flight; pending writes only while fewer than a quarter of those are
 * pending writes, so tens of thousands of new workloads getting their
 * first Pending condition never hold the connections an admission
 * write needs.
 */
static void pump(struct manager *m)
{
	unsigned max = m->o.max_wl_writes;

	while (!m->closing && m->wl_inflight < max) {
		struct wl_entry *e = fifo_pop(&m->admitq);

		if (!e && m->pend_inflight < (max + 3) / 4)
			e = fifo_pop(&m->pendq);
		if (!e)
			break;
		e->inq = WQ_NONE;
		if (e->call)
			continue;
		if (e->admit_pending)
			send_admit(m, e);
		else if (wl_pending_need(m, e) == PEND_NOW)
			send_pending(m, e);
	}
}


/* An admission write succeeded: QuotaReserved and Admitted became True
 * (kueue_metrics.h), and their events (kueue-api.md §7.5, Kueue's
 * wording). The queued wait runs from the last requeue, else from
 * creation, as Kueue's QueuedWaitTime; the reservation wait from the
 * QuotaReserved time written (whole seconds, as the object shows it). */
static void admit_report(struct manager *m, const struct wl_entry *e)
{
	const struct workload *w = e->w;
	const struct condition *rq;
	const char *cq = e->adm.cluster_queue ? e->adm.cluster_queue : "";
	const char *pc = w->priority_class_name ? w->priority_class_name : "";
	int64_t since = w->meta.creation_ms, now = loop_wall_ms(m->l);
	double wait, rwait;

	rq = conditions_find(&w->conds, "Requeued");
	if (rq && rq->last_transition_ms)
		since = rq->last_transition_ms;
	wait = since ? (double)(now - since) / 1000.0 : 0;
	if (wait < 0)
		wait = 0;
	rwait = (double)(now - e->admit_wall_ms / 1000 * 1000) / 1000.0;
	if (rwait < 0)
		rwait = 0;
	if (m->o.metrics) {
		kueue_metrics_quota_reserved(m->o.metrics, cq, pc, wait);
		kueue_metrics_admitted(m->o.metrics, cq, pc, wait);
		if (w->queue_name) {
			kueue_metrics_lq_quota_reserved(m->o.metrics,
				w->meta.namespace, w->queue_name, pc, wait);
			kueue_metrics_lq_admitted(m->o.metrics, w->meta.namespace,
						  w->queue_name, pc, wait);
		}
	}
	wl_event(m, e, EVENT_NORMAL, "QuotaReserved",
		 "Quota reserved in ClusterQueue %s, wait time since queued "
		 "was %.0fs", cq, wait);
	wl_event(m, e, EVENT_NORMAL, "Admitted",
		 "Admitted by ClusterQueue %s, wait time since reservation "
		 "was %.0fs", cq, rwait);
}

static void wl_done(void *ud, const struct kube_reply *r, json_t *body)
{
	struct wl_entry *e = ud;
	struct manager *m = e->m;
	enum wl_call kind = e->call_kind;
	const char *name;
	char *ns = split_key(e->key, &name);
	bool newer = !str_eq(e->call_rv, e->w->meta.resource_version);

	json_decref(body);
	e->call = NULL;
	e->call_kind = WC_NONE;
	m->wl_inflight--;
	if (kind == WC_PENDING)
		m->pend_inflight--;
	if (kind == WC_ADMIT) {
		if (r->outcome == KUBE_OK) {
			m->stats.admitted++;
			admit_report(m, e);
			want_clear(e);
			/* debug: one line per admission is Kueue's V(2) */
			log_msg(LOG_DEBUG, "scheduler", ns, name,
				"quota reserved in ClusterQueue %s",
				e->adm.cluster_queue ? e->adm.cluster_queue
						     : "");
		} else if (r->code == 409) {
			/* The object moved on: forget the assumption once
			 * that newer version is here, so the next cycle
			 * decides on it (never on the stale one). */
			m->stats.admit_conflicts++;
			log_msg(LOG_DEBUG, "scheduler", ns, name,
				"admission conflict, will retry: %s",
				r->message);
			if (newer) {
				sched_wl_forget(m->s, ns, name);
				m->changed = true;
			} else {
				e->forget_on_update = true;
			}
		} else {
			m->stats.admit_failures++;
			if (r->code != 404)
				log_msg(LOG_WARN, "scheduler", ns, name,
					"admission write failed (%ld): %s",
					r->code, r->message);
			sched_wl_forget(m->s, ns, name);
			m->changed = true;
		}
	} else if (kind == WC_PENDING) {
		if (r->outcome == KUBE_OK) {
			set_str(&e->sent_rv, e->call_rv);
		} else if (r->code != 409 && r->code != 404) {
			log_msg(LOG_WARN, "workload", ns, name,
				"status write failed (%ld): %s", r->code,
				r->message);
		}
	}
	if (kind == WC_ADMIT && !e->admit_pending)
		admission_release(&e->adm);
	FREE_AND_NULL(e->call_rv);
	free(ns);
	wl_sync(m, e);
	pump(m);
}

/* ------------------------------------------------------------------ */
/* Decisions */

/* The cache entry of w, found by "ns/name" built in a stack buffer
 * (this runs for every decision of every cycle). */
static struct wl_entry *wl_entry_of(struct manager *m,
				    const struct workload *w)
{
	char buf[320];
	char *key = object_key_buf(buf, sizeof(buf), w->meta.namespace,
				   w->meta.name);
	struct wl_entry *e = hmap_get(&m->wls, key);

	if (key != buf)
		free(key);
	return e;
}

static void apply_decisions(struct manager *m)
{
	for (size_t i = 0; i < m->decs.n; i++) {
		const struct sched_decision *d = &m->decs.v[i];
		struct wl_entry *e = wl_entry_of(m, d->wl);

		if (!e)
			continue;
		if (d->kind == DEC_ADMIT) {
			sched_decision_admission(m->s, d, &e->adm);
			set_str(&e->admit_rv, d->wl->meta.resource_version);
			e->admit_pending = true;
			want_clear(e);
			if (e->inq == WQ_PENDING)
				wl_dequeue(m, e);
		} else {
			want_set(e, d->reason ? d->reason : REASON_PENDING,
				 d->message ? d->message : "");
			log_msg(LOG_DEBUG, "scheduler", d->wl->meta.namespace,
				d->wl->meta.name, "pending: %s",
				e->want_msg);
		}
		wl_sync(m, e);
	}
}

/* ------------------------------------------------------------------ */
/* ClusterQueue and LocalQueue status */

/* Sets key to null in a merge patch when absent (an omitted empty list
 * would leave the old value in place). */
static void null_if_absent(json_t *st, const char *key)
{
	if (!json_object_get(st, key))
		json_object_set_new(st, key, json_null());
}

static json_t *build_cq(void *ud, const char *name, char **path)
{
	struct manager *m = ud;
	struct cq_entry *e = hmap_get(&m->cqs, name);
	struct sched_cq_status st;
	struct cluster_queue tmp;
	json_t *cur, *nw, *body = NULL;

	if (!e || !e->cq || !m->fed)
		return NULL;
	/* One write per object at a time: the finalizer patch's end marks
	 * the status again. */
	if (e->fin_call)
		return NULL;
	sched_cq_status(m->s, name, &st);
	if (!st.exists)
		return NULL;
	memset(&tmp, 0, sizeof(tmp));
	conditions_copy(&tmp.conds, &e->cq->conds);
	conditions_set(&tmp.conds, COND_ACTIVE,
		       st.active ? COND_TRUE : COND_FALSE,
		       st.reason ? st.reason : "",
		       st.message ? st.message : "", e->cq->meta.generation,
		       loop_wall_ms(m->l));
	sched_cq_usage(m->s, name, false, &tmp.reservation, &tmp.nreservation);
	sched_cq_usage(m->s, name, true, &tmp.usage, &tmp.nusage);
	tmp.pending = st.pending;
	tmp.reserving = st.reserving;
	tmp.admitted = st.admitted;
	cur = codec_encode_cluster_queue_status(e->cq, API_V1BETA2);
	nw = codec_encode_cluster_queue_status(&tmp, API_V1BETA2);
	if (!json_equal(cur, nw)) {
		null_if_absent(nw, "flavorsReservation");
		null_if_absent(nw, "flavorsUsage");
		body = json_pack("{s:O}", "status", nw);
		*path = path_of("clusterqueues", NULL, name, "status");
	}
	json_decref(cur);
	json_decref(nw);
	cluster_queue_release(&tmp);
	return body;
}

/* A LocalQueue's Active condition (e->lq set): its status, reason and
 * message (static strings). */
static enum cond_status lq_active(const struct lq_entry *e,
				  const char **reason, const char **msg)
{
	*msg = "Can't submit new workloads to clusterQueue";
	if (e->lq->stop != STOP_NONE) {
		*reason = "Stopped";
		*msg = "LocalQueue is stopped";
	} else if (!e->cqe || !e->cqe->cq) {
		*reason = "ClusterQueueDoesNotExist";
	} else if (!e->cqe->active) {
		*reason = "ClusterQueueIsInactive";
	} else {
		*reason = "Ready";
		*msg = "Can submit new workloads to localQueue";
		return COND_TRUE;
	}
	return COND_FALSE;
}

static json_t *build_lq(void *ud, const char *key, char **path)
{
	struct manager *m = ud;
	struct lq_entry *e = hmap_get(&m->lqs, key);
	struct sched_lq_status st;
	struct local_queue tmp;
	json_t *cur, *nw, *body = NULL;
	enum cond_status cs;
	const char *reason, *msg;

	if (!e || !e->lq || !m->fed)
		return NULL;
	cs = lq_active(e, &reason, &msg);
	memset(&tmp, 0, sizeof(tmp));
	conditions_copy(&tmp.conds, &e->lq->conds);
	conditions_set(&tmp.conds, COND_ACTIVE, cs, reason, msg,
		       e->lq->meta.generation, loop_wall_ms(m->l));
	sched_lq_status(m->s, key, &st);
	tmp.pending = st.pending;
	tmp.reserving = st.reserving;
	tmp.admitted = st.admitted;
	sched_lq_usage(m->s, key, false, &tmp.reservation, &tmp.nreservation);
	sched_lq_usage(m->s, key, true, &tmp.usage, &tmp.nusage);
	cur = codec_encode_local_queue_status(e->lq, API_V1BETA2);
	nw = codec_encode_local_queue_status(&tmp, API_V1BETA2);
	if (!json_equal(cur, nw)) {
		const char *name;
		char *ns = split_key(key, &name);

		null_if_absent(nw, "flavorsReservation");
		null_if_absent(nw, "flavorsUsage");
		body = json_pack("{s:O}", "status", nw);
		*path = path_of("localqueues", ns, name, "status");
		free(ns);
	}
	json_decref(cur);
	json_decref(nw);
	local_queue_release(&tmp);
	return body;
}

static void status_result(struct manager *m, const char *key,
			  const struct kube_reply *r)
{
	if (r->outcome == KUBE_OK)
		m->stats.status_writes++;
	else if (r->code != 404 && r->code != 409)
		log_msg(LOG_WARN, "status", NULL, key,
			"status write failed (%ld): %s", r->code, r->message);
}

static void cq_finalize(struct manager *m, struct cq_entry *e);

/* A ClusterQueue's status write ended: a finalizer change held back
 * meanwhile (one write per object at a time) may go now. */
static void cq_status_result(void *ud, const char *key,
			     const struct kube_reply *r)
{
	struct manager *m = ud;
	struct cq_entry *e = hmap_get(&m->cqs, key);

	status_result(m, key, r);
	if (e)
		cq_finalize(m, e);
}

static void lq_status_result(void *ud, const char *key,
			     const struct kube_reply *r)
{
	status_result(ud, key, r);
}

/* ------------------------------------------------------------------ */
/* Finalizers */

static json_t *finalizer_patch(const struct object_meta *meta, bool add)
{
	json_t *list = json_array(), *p;

	for (size_t i = 0; i < meta->nfinalizers; i++)
		if (strcmp(meta->finalizers[i], FINALIZER_RESOURCE_IN_USE))
			json_array_append_new(list,
					      json_string(meta->finalizers[i]));
	if (add)
		json_array_append_new(list,
				      json_string(FINALIZER_RESOURCE_IN_USE));
	p = json_pack("{s:{s:s, s:o}}", "metadata", "resourceVersion",
		      meta->resource_version ? meta->resource_version : "",
		      "finalizers", list);
	return p;
}

/* Whether meta needs the finalizer added (1), removed (-1) or nothing. */
static int finalizer_action(const struct object_meta *meta, bool in_use)
{
	bool has = object_meta_has_finalizer(meta, FINALIZER_RESOURCE_IN_USE);

	if (!meta->deletion_ms)
		return has ? 0 : 1;
	return has && !in_use ? -1 : 0;
}

static struct kube_call *submit_finalizer(struct manager *m,
					  const char *resource,
					  const struct object_meta *meta,
					  int action, kube_done_take_fn *done,
					  void *ud)
{
	json_t *body = finalizer_patch(meta, action > 0);
	char *path = path_of(resource, NULL, meta->name, NULL);
	struct kube_req req = { .verb = KUBE_PATCH_MERGE, .path = path,
				.body = body, .done = done, .ud = ud };
	struct kube_call *c;

	m->stats.finalizer_writes++;
	m->fin_inflight++;
	log_msg(LOG_INFO, resource, NULL, meta->name, "%s finalizer %s",
		action > 0 ? "adding" : "removing", FINALIZER_RESOURCE_IN_USE);
	c = kube_submit(m->k, &req);
	json_decref(body);
	free(path);
	return c;
}

static void rf_finalize(struct manager *m, struct rf_entry *e);

static void fin_cancel(struct manager *m, struct kube_call **c)
{
	if (!*c)
		return;
	kube_cancel(m->k, *c);
	*c = NULL;
	m->fin_inflight--;
}

static void cq_fin_done(void *ud, const struct kube_reply *r, json_t *body)
{
	struct cq_entry *e = ud;

	json_decref(body);
	e->fin_call = NULL;
	e->m->fin_inflight--;
	if (e->cq)
		status_writer_mark(e->m->cqw, e->name);
	if (r->outcome != KUBE_OK && r->code != 409 && r->code != 404)
		log_msg(LOG_WARN, "clusterqueues", NULL, e->name,
			"finalizer patch failed (%ld): %s", r->code,
			r->message);
	/* A newer version that arrived meanwhile was not looked at. */
	if (r->outcome != KUBE_OK && e->cq &&
	    !str_eq(e->fin_rv, e->cq->meta.resource_version))
		cq_finalize(e->m, e);
}

static void cq_finalize(struct manager *m, struct cq_entry *e)
{
	struct sched_cq_status st;
	int action;

	if (!m->fed || !e->cq || e->fin_call || !e->cq->meta.name ||
	    status_writer_busy(m->cqw, e->name))
		return;
	sched_cq_status(m->s, e->name, &st);
	action = finalizer_action(&e->cq->meta, st.reserving > 0);
	if (!action)
		return;
	set_str(&e->fin_rv, e->cq->meta.resource_version);
	e->fin_call = submit_finalizer(m, "clusterqueues", &e->cq->meta,
				       action, cq_fin_done, e);
}

static void rf_fin_done(void *ud, const struct kube_reply *r, json_t *body)
{
	struct rf_entry *e = ud;

	json_decref(body);
	e->fin_call = NULL;
	e->m->fin_inflight--;
	if (r->outcome != KUBE_OK && r->code != 409 && r->code != 404)
		log_msg(LOG_WARN, "resourceflavors", NULL, e->name,
			"finalizer patch failed (%ld): %s", r->code,
			r->message);
	if (r->outcome != KUBE_OK && e->rf &&
	    !str_eq(e->fin_rv, e->rf->meta.resource_version))
		rf_finalize(e->m, e);
}

static void rf_finalize(struct manager *m, struct rf_entry *e)
{
	int action;

	if (!m->fed || !e->rf || e->fin_call || !e->rf->meta.name)
		return;
	action = finalizer_action(&e->rf->meta, e->refs > 0);
	if (!action)
		return;
	set_str(&e->fin_rv, e->rf->meta.resource_version);
	e->fin_call = submit_finalizer(m, "resourceflavors", &e->rf->meta,
				       action, rf_fin_done, e);
}

/* ------------------------------------------------------------------ */
/* ResourceFlavors */

static struct rf_entry *rf_get(struct manager *m, const char *name)
{
	struct rf_entry *e = hmap_get(&m->rfs, name);

	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->name = xstrdup(name);
		e->m = m;
		hmap_put(&m->rfs, e->name, e);
	}
	return e;
}

static void rf_entry_free(struct manager *m, struct rf_entry *e)
{
	fin_cancel(m, &e->fin_call);
	if (e->rf)
		resource_flavor_release(e->rf);
	free(e->rf);
	free(e->fin_rv);
	free(e->name);
	free(e);
}

static void rf_gc(struct manager *m, struct rf_entry *e)
{
	if (e->rf || e->refs)
		return;
	hmap_del(&m->rfs, e->name);
	rf_entry_free(m, e);
}

static void apply_rf(struct manager *m, const json_t *obj, const char *key)
{
	struct rf_entry *e = rf_get(m, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct resource_flavor *nw, *old = e->rf;

	e->seen = m->gen[INF_RF];
	if (old && str_eq(meta_str(obj, "resourceVersion"),
			  old->meta.resource_version))
		return;
	nw = xcalloc(1, sizeof(*nw));
	if (!codec_decode_resource_flavor(obj, nw, &fe))
		validate_resource_flavor(nw, NULL, &fe);
	if (fe.n) {
		free(log_invalid(m, "resourceflavors", NULL, key, &fe));
		field_errors_release(&fe);
		resource_flavor_release(nw);
		free(nw);
		rf_gc(m, e);
		return;
	}
	e->rf = nw;
	if (m->fed) {
		sched_flavor_set(m->s, nw);
		m->changed = true;
	}
	if (old) {
		resource_flavor_release(old);
		free(old);
	} else {
		log_msg(LOG_DEBUG, "resourceflavors", NULL, key, "added");
	}
	rf_finalize(m, e);
}

static void rf_drop(struct manager *m, struct rf_entry *e)
{
	if (!e->rf)
		return;
	if (m->fed) {
		sched_flavor_remove(m->s, e->name);
		m->changed = true;
	}
	resource_flavor_release(e->rf);
	FREE_AND_NULL(e->rf);
	fin_cancel(m, &e->fin_call);
	rf_gc(m, e);
}

static void remove_rf(struct manager *m, const char *key)
{
	struct rf_entry *e = hmap_get(&m->rfs, key);

	if (e)
		rf_drop(m, e);
}

static void sweep_rf(struct manager *m, uint64_t gen)
{
	struct rf_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->rfs, &pos, NULL)))
		if (e->rf && e->seen != gen)
			rf_drop(m, e);
}

/* ------------------------------------------------------------------ */
/* Cohorts */

static void cohort_entry_free(struct cohort_entry *e)
{
	if (e->c)
		cohort_release(e->c);
	free(e->c);
	free(e->name);
	free(e);
}

static void apply_cohort(struct manager *m, const json_t *obj,
			 const char *key)
{
	struct cohort_entry *e = hmap_get(&m->cohorts, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cohort *nw;

	if (e) {
		e->seen = m->gen[INF_COHORT];
		if (str_eq(meta_str(obj, "resourceVersion"),
			   e->c->meta.resource_version))
			return;
	}
	nw = xcalloc(1, sizeof(*nw));
	if (!codec_decode_cohort(obj, nw, &fe))
		validate_cohort(nw, NULL, &fe);
	if (fe.n) {
		free(log_invalid(m, "cohorts", NULL, key, &fe));
		field_errors_release(&fe);
		cohort_release(nw);
		free(nw);
		return;
	}
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->name = xstrdup(key);
		e->seen = m->gen[INF_COHORT];
		hmap_put(&m->cohorts, e->name, e);
	}
	if (m->fed) {
		sched_cohort_set(m->s, nw);
		m->changed = true;
	}
	if (e->c)
		cohort_release(e->c);
	free(e->c);
	e->c = nw;
}

static void cohort_drop(struct manager *m, struct cohort_entry *e)
{
	if (m->fed) {
		sched_cohort_remove(m->s, e->name);
		m->changed = true;
	}
	if (m->o.metrics)
		kueue_metrics_cohort_delete(m->o.metrics, e->name);
	hmap_del(&m->cohorts, e->name);
	cohort_entry_free(e);
}

static void remove_cohort(struct manager *m, const char *key)
{
	struct cohort_entry *e = hmap_get(&m->cohorts, key);

	if (e)
		cohort_drop(m, e);
}

static void sweep_cohort(struct manager *m, uint64_t gen)
{
	struct cohort_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->cohorts, &pos, NULL)))
		if (e->seen != gen)
			cohort_drop(m, e);
}

/* ------------------------------------------------------------------ */
/* ClusterQueues */

static struct cq_entry *cq_get(struct manager *m, const char *name)
{
	struct cq_entry *e = hmap_get(&m->cqs, name);

	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->name = xstrdup(name);
		e->m = m;
		hmap_put(&m->cqs, e->name, e);
	}
	return e;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static void cq_entry_free(struct manager *m, struct cq_entry *e)
{
	fin_cancel(m, &e->fin_call);
	if (e->cq)
		cluster_queue_release(e->cq);
	free(e->cq);
	free(e->invalid);
	free_strv(e->flavors, e->nflavors);
	free(e->fin_rv);
	free(e->name);
	free(e);
}

static void cq_gc(struct manager *m, struct cq_entry *e)
{
	if (!e || e->cq || e->lqs)
		return;
	hmap_del(&m->cqs, e->name);
	cq_entry_free(m, e);
}

/* The distinct flavor names cq lists (new vector). */
static char **cq_flavor_names(const struct cluster_queue *cq, size_t *n)
{
	char **v = NULL;
	size_t cap = 0;

	*n = 0;
	for (size_t g = 0; g < cq->ngroups; g++) {
		for (size_t f = 0; f < cq->groups[g].nflavors; f++) {
			const char *name = cq->groups[g].flavors[f].name;
			bool dup = false;

			if (!name)
				continue;
			for (size_t i = 0; i < *n && !dup; i++)
				dup = !strcmp(v[i], name);
			if (dup)
				continue;
			XGROW(v, cap, *n + 1);
			v[(*n)++] = xstrdup(name);
		}
	}
	return v;
}

/* Moves e's flavor references to the names of cq (NULL: none). */
static void cq_set_flavor_refs(struct manager *m, struct cq_entry *e,
			       const struct cluster_queue *cq)
{
	char **old = e->flavors;
	size_t nold = e->nflavors;

	e->flavors = NULL;
	e->nflavors = 0;
	if (cq)
		e->flavors = cq_flavor_names(cq, &e->nflavors);
	for (size_t i = 0; i < e->nflavors; i++)
		rf_get(m, e->flavors[i])->refs++;
	for (size_t i = 0; i < nold; i++) {
		struct rf_entry *rf = hmap_get(&m->rfs, old[i]);

		if (!rf)
			continue;
		if (--rf->refs == 0) {
			rf_finalize(m, rf);
			rf_gc(m, rf);
		}
	}
	free_strv(old, nold);
}

/* The usage total of (flavor, resource) in u (0 when absent). */
static int64_t usage_of(const struct flavor_usage *u, size_t n,
			const char *flavor, const char *res)
{
	for (size_t i = 0; i < n; i++) {
		if (!str_eq(u[i].name, flavor))
			continue;
		for (size_t j = 0; j < u[i].nres; j++)
			if (str_eq(u[i].res[j].name, res))
				return u[i].res[j].total;
	}
	return 0;
}

/*
 * Reports a LocalQueue's gauges (the LocalQueueMetrics gate): its
 * counts from sched, the pending ones split as Kueue's LocalQueue
 * metric does (a workload parked in the ClusterQueue's inadmissible set
 * is "inadmissible", else "active"; all of them when the ClusterQueue
 * is inactive), its Active condition, and its flavorsReservation and
 * flavorsUsage. Refreshed with its ClusterQueue's gauges (on_mflush).
 */
static void lq_metrics(struct manager *m, const struct lq_entry *e)
{
	struct kueue_metrics *km = m->o.metrics;
	struct sched_lq_status st;
	struct flavor_usage *rsv = NULL, *use = NULL;
	size_t nrsv = 0, nuse = 0;
	const char *name, *reason, *msg;
	char *ns;
	bool active;

	if (!kueue_metrics_lq_enabled(km) || !e->lq || !m->fed)
		return;
	ns = split_key(e->key, &name);
	sched_lq_status(m->s, e->key, &st);
	active = lq_active(e, &reason, &msg) == COND_TRUE;
	if (active)
		kueue_metrics_lq_pending(km, ns, name, st.pending - e->parked,
					 e->parked);
	else
		kueue_metrics_lq_pending(km, ns, name, 0, st.pending);
	kueue_metrics_lq_workloads(km, ns, name, st.reserving, st.admitted);
	kueue_metrics_lq_status(km, ns, name,
				active ? KUEUE_LQ_TRUE : KUEUE_LQ_FALSE);
	kueue_metrics_lq_resources_clear(km, ns, name);
	sched_lq_usage(m->s, e->key, false, &rsv, &nrsv);
	sched_lq_usage(m->s, e->key, true, &use, &nuse);
	for (size_t f = 0; f < nrsv; f++)
		for (size_t r = 0; r < rsv[f].nres; r++)
			kueue_metrics_lq_resources(km, ns, name, rsv[f].name,
				rsv[f].res[r].name, rsv[f].res[r].total,
				usage_of(use, nuse, rsv[f].name,
					 rsv[f].res[r].name));
	flavor_usages_release(rsv, nrsv);
	flavor_usages_release(use, nuse);
	free(ns);
}

/* Reports a ClusterQueue's gauges (kueue_metrics.h) from sched. */
static void cq_metrics(struct manager *m, const struct cq_entry *e)
{
	struct kueue_metrics *km = m->o.metrics;
	const struct cluster_queue *cq = e->cq;
	struct sched_cq_status st;
	struct flavor_usage *rsv = NULL, *use = NULL;
	size_t nrsv = 0, nuse = 0;

	if (!km || !cq || !m->fed)
		return;
	sched_cq_status(m->s, e->name, &st);
	if (!st.exists)
		return;
	/* An inactive queue's pending workloads are all inadmissible
	 * (Kueue's reportPendingWorkloads). */
	if (st.active)
		kueue_metrics_pending(km, e->name, st.pending_active,
				      st.pending_inadmissible);
	else
		kueue_metrics_pending(km, e->name, 0,
				      st.pending_active +
					      st.pending_inadmissible);
	kueue_metrics_cq_workloads(km, e->name, st.reserving, st.admitted);
	kueue_metrics_cq_status(km, e->name,
				cq->meta.deletion_ms ? KUEUE_CQ_TERMINATING
				: st.active ? KUEUE_CQ_ACTIVE
					    : KUEUE_CQ_PENDING);
	sched_cq_usage(m->s, e->name, false, &rsv, &nrsv);
	sched_cq_usage(m->s, e->name, true, &use, &nuse);
	for (size_t g = 0; g < cq->ngroups; g++) {
		const struct resource_group *rg = &cq->groups[g];

		for (size_t f = 0; f < rg->nflavors; f++) {
			const struct flavor_quotas *fq = &rg->flavors[f];

			for (size_t r = 0; r < fq->nres; r++) {
				const struct resource_quota *q = &fq->res[r];
				struct kueue_resource_values v = {
					.nominal = q->nominal,
					.borrowing = q->has_borrowing
						? q->borrowing
						: KUEUE_METRICS_NO_LIMIT,
					.lending = q->has_lending
						? q->lending
						: KUEUE_METRICS_NO_LIMIT,
					.reservation = usage_of(rsv, nrsv,
						fq->name, q->name),
					.usage = usage_of(use, nuse, fq->name,
							  q->name),
				};

				kueue_metrics_cq_resources(km,
					cq->cohort ? cq->cohort : "",
					e->name, fq->name, q->name, &v);
			}
		}
	}
	flavor_usages_release(rsv, nrsv);
	flavor_usages_release(use, nuse);
}

/* Whether cur and nw are the same object with the same spec and the
 * same metadata the manager reads (generation moves with every spec
 * change: k8s-api.md, CRDs with a status subresource). */
static bool meta_same(const struct object_meta *a, const struct object_meta *b)
{
	if (!a->generation || a->generation != b->generation ||
	    !str_eq(a->uid, b->uid) || a->deletion_ms != b->deletion_ms ||
	    a->nfinalizers != b->nfinalizers)
		return false;
	for (size_t i = 0; i < a->nfinalizers; i++)
		if (!str_eq(a->finalizers[i], b->finalizers[i]))
			return false;
	return true;
}

static bool cq_same_spec(const struct cluster_queue *cur,
			 const struct cluster_queue *nw)
{
	return meta_same(&cur->meta, &nw->meta) &&
	       strmap_equal(&cur->meta.labels, &nw->meta.labels);
}

/* Moves nw's status and resourceVersion into cur; nw gets cur's old
 * ones, to be released with it. */
static void cq_take_status(struct cluster_queue *cur, struct cluster_queue *nw)
{
	char *rv = cur->meta.resource_version;
	struct conditions conds = cur->conds;
	struct flavor_usage *rsv = cur->reservation, *use = cur->usage;
	size_t nrsv = cur->nreservation, nuse = cur->nusage;

	cur->meta.resource_version = nw->meta.resource_version;
	nw->meta.resource_version = rv;
	cur->conds = nw->conds;
	nw->conds = conds;
	cur->reservation = nw->reservation;
	cur->nreservation = nw->nreservation;
	nw->reservation = rsv;
	nw->nreservation = nrsv;
	cur->usage = nw->usage;
	cur->nusage = nw->nusage;
	nw->usage = use;
	nw->nusage = nuse;
	cur->pending = nw->pending;
	cur->reserving = nw->reserving;
	cur->admitted = nw->admitted;
}

static void apply_cq(struct manager *m, const json_t *obj, const char *key)
{
	struct cq_entry *e = cq_get(m, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cluster_queue *nw, *old = e->cq;
	char *invalid = NULL;

	e->seen = m->gen[INF_CQ];
	if (old && str_eq(meta_str(obj, "resourceVersion"),
			  old->meta.resource_version))
		return;
	nw = xcalloc(1, sizeof(*nw));
	if (!codec_decode_cluster_queue(obj, nw, &fe) &&
	    !(old && !e->invalid && cq_same_spec(old, nw)))
		validate_cluster_queue(nw, NULL, &fe);
	if (fe.n) {
		invalid = log_invalid(m, "clusterqueues", NULL, key, &fe);
		field_errors_release(&fe);
	}
	if (!invalid && old && !e->invalid && cq_same_spec(old, nw)) {
		/* Only the status moved (mostly our own status writes): keep
		 * the struct sched borrows, take the new status into it, and
		 * leave sched alone (a sched_cq_set requeues every parked
		 * workload of the cohort tree). */
		cq_take_status(old, nw);
		cluster_queue_release(nw);
		free(nw);
		m->stats.status_only++;
		status_writer_mark(m->cqw, e->name);
		cq_finalize(m, e);
		return;
	}
	if (!nw->meta.name)
		nw->meta.name = xstrdup(key);
	cq_set_flavor_refs(m, e, nw);
	e->cq = nw;
	free(e->invalid);
	e->invalid = invalid;
	if (m->fed) {
		sched_cq_set(m->s, nw, invalid);
		m->changed = true;
	}
	if (old && m->o.metrics)
		kueue_metrics_cq_resources_clear(m->o.metrics, e->name);
	if (m->fed)
		cq_metrics(m, e);
	if (old) {
		cluster_queue_release(old);
		free(old);
	} else if (m->fed) {
		struct sched_cq_status st;

		sched_cq_status(m->s, e->name, &st);
		e->active = st.active;
		cq_resolve_all(m, e);
	}
	status_writer_mark(m->cqw, e->name);
	cq_finalize(m, e);
}

static void cq_drop(struct manager *m, struct cq_entry *e)
{
	if (!e->cq)
		return;
	if (m->fed) {
		sched_cq_remove(m->s, e->name);
		m->changed = true;
	}
	cq_set_flavor_refs(m, e, NULL);
	if (m->o.metrics)
		kueue_metrics_cq_delete(m->o.metrics, e->name);
	cluster_queue_release(e->cq);
	FREE_AND_NULL(e->cq);
	FREE_AND_NULL(e->invalid);
	fin_cancel(m, &e->fin_call);
	status_writer_forget(m->cqw, e->name);
	e->active = false;
	cq_resolve_all(m, e);
	cq_gc(m, e);
}

static void remove_cq(struct manager *m, const char *key)
{
	struct cq_entry *e = hmap_get(&m->cqs, key);

	if (e)
		cq_drop(m, e);
}

static void sweep_cq(struct manager *m, uint64_t gen)
{
	struct cq_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->cqs, &pos, NULL)))
		if (e->cq && e->seen != gen)
			cq_drop(m, e);
}

/* ------------------------------------------------------------------ */
/* Namespaces (labels for namespaceSelectors) */

static void ns_entry_free(struct ns_entry *e)
{
	strmap_release(&e->labels);
	free(e->rv);
	free(e->name);
	free(e);
}

static void apply_ns(struct manager *m, const json_t *obj, const char *key)
{
	struct ns_entry *e = hmap_get(&m->nss, key);
	const char *rv = meta_str(obj, "resourceVersion"), *k;
	const json_t *labels = json_object_get(json_object_get(obj,
							       "metadata"),
					       "labels");
	json_t *v;

	if (e) {
		e->seen = m->gen[INF_NS];
		if (str_eq(rv, e->rv))
			return;
	} else {
		e = xcalloc(1, sizeof(*e));
		e->name = xstrdup(key);
		e->seen = m->gen[INF_NS];
		hmap_put(&m->nss, e->name, e);
	}
	set_str(&e->rv, rv);
	m->nsview_gen++;
	strmap_release(&e->labels);
	json_object_foreach((json_t *)labels, k, v)
		if (json_is_string(v))
			strmap_set(&e->labels, k, json_string_value(v));
	if (m->fed) {
		sched_namespace_set(m->s, e->name, &e->labels);
		m->changed = true;
	}
}

static void ns_drop(struct manager *m, struct ns_entry *e)
{
	if (m->fed) {
		sched_namespace_remove(m->s, e->name);
		m->changed = true;
	}
	m->nsview_gen++;
	hmap_del(&m->nss, e->name);
	ns_entry_free(e);
}

static void remove_ns(struct manager *m, const char *key)
{
	struct ns_entry *e = hmap_get(&m->nss, key);

	if (e)
		ns_drop(m, e);
}

static void sweep_ns(struct manager *m, uint64_t gen)
{
	struct ns_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->nss, &pos, NULL)))
		if (e->seen != gen)
			ns_drop(m, e);
}

/* ------------------------------------------------------------------ */
/* LocalQueues */

static struct lq_entry *lq_get(struct manager *m, const char *key)
{
	struct lq_entry *e = hmap_get(&m->lqs, key);

	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->key = xstrdup(key);
		hmap_put(&m->lqs, e->key, e);
	}
	return e;
}

static void lq_entry_free(struct lq_entry *e)
{
	if (e->lq)
		local_queue_release(e->lq);
	free(e->lq);
	free(e->key);
	free(e);
}

static void lq_gc(struct manager *m, struct lq_entry *e)
{
	if (!e || e->lq || e->wls)
		return;
	hmap_del(&m->lqs, e->key);
	lq_entry_free(e);
}

/* Unlinks e from its ClusterQueue entry; returns that entry. */
static struct cq_entry *lq_unlink_cq(struct lq_entry *e)
{
	struct cq_entry *c = e->cqe;

	if (!c)
		return NULL;
	if (e->cq_prev)
		e->cq_prev->cq_next = e->cq_next;
	else
		c->lqs = e->cq_next;
	if (e->cq_next)
		e->cq_next->cq_prev = e->cq_prev;
	e->cq_prev = e->cq_next = NULL;
	e->cqe = NULL;
	return c;
}

static void lq_link_cq(struct lq_entry *e, struct cq_entry *c)
{
	e->cqe = c;
	e->cq_prev = NULL;
	e->cq_next = c->lqs;
	if (c->lqs)
		c->lqs->cq_prev = e;
	c->lqs = e;
}

static void apply_lq(struct manager *m, const json_t *obj, const char *key)
{
	struct lq_entry *e = lq_get(m, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct local_queue *nw, *old = e->lq;
	struct cq_entry *old_cqe = NULL;
	bool relevant;

	e->seen = m->gen[INF_LQ];
	if (old && str_eq(meta_str(obj, "resourceVersion"),
			  old->meta.resource_version))
		return;
	nw = xcalloc(1, sizeof(*nw));
	if (!codec_decode_local_queue(obj, nw, &fe))
		validate_local_queue(nw, NULL, &fe);
	if (fe.n || !nw->cluster_queue) {
		free(log_invalid(m, "localqueues", NULL, key, &fe));
		field_errors_release(&fe);
		local_queue_release(nw);
		free(nw);
		lq_gc(m, e);
		return;
	}
	relevant = !old || old->stop != nw->stop ||
		   !str_eq(old->cluster_queue, nw->cluster_queue);
	if (!old || !str_eq(old->cluster_queue, nw->cluster_queue)) {
		old_cqe = lq_unlink_cq(e);
		lq_link_cq(e, cq_get(m, nw->cluster_queue));
	}
	e->lq = nw;
	m->nsview_gen++;
	if (old) {
		local_queue_release(old);
		free(old);
	}
	lq_mark(m, e);
	if (relevant)
		lq_resolve_all(m, e);
	if (old_cqe != e->cqe)
		cq_gc(m, old_cqe);
}

static void lq_drop(struct manager *m, struct lq_entry *e)
{
	struct cq_entry *c;

	if (!e->lq)
		return;
	status_writer_forget(m->lqw, e->key);
	if (kueue_metrics_lq_enabled(m->o.metrics)) {
		const char *name;
		char *ns = split_key(e->key, &name);

		kueue_metrics_lq_delete(m->o.metrics, ns, name);
		free(ns);
	}
	c = lq_unlink_cq(e);
	local_queue_release(e->lq);
	FREE_AND_NULL(e->lq);
	m->nsview_gen++;
	lq_resolve_all(m, e);
	cq_gc(m, c);
	lq_gc(m, e);
}

static void remove_lq(struct manager *m, const char *key)
{
	struct lq_entry *e = hmap_get(&m->lqs, key);

	if (e)
		lq_drop(m, e);
}

static void sweep_lq(struct manager *m, uint64_t gen)
{
	struct lq_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->lqs, &pos, NULL)))
		if (e->lq && e->seen != gen)
			lq_drop(m, e);
}

/* ------------------------------------------------------------------ */
/* WorkloadPriorityClasses (cached for completeness: workloads carry
 * their priority in spec.priority) */

static void wpc_entry_free(struct wpc_entry *e)
{
	if (e->p)
		workload_priority_class_release(e->p);
	free(e->p);
	free(e->name);
	free(e);
}

static void apply_wpc(struct manager *m, const json_t *obj, const char *key)
{
	struct wpc_entry *e = hmap_get(&m->wpcs, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct workload_priority_class *nw;

	if (e) {
		e->seen = m->gen[INF_WPC];
		if (str_eq(meta_str(obj, "resourceVersion"),
			   e->p->meta.resource_version))
			return;
	}
	nw = xcalloc(1, sizeof(*nw));
	if (!codec_decode_workload_priority_class(obj, nw, &fe))
		validate_workload_priority_class(nw, NULL, &fe);
	if (fe.n) {
		free(log_invalid(m, "workloadpriorityclasses", NULL, key,
				 &fe));
		field_errors_release(&fe);
		workload_priority_class_release(nw);
		free(nw);
		return;
	}
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->name = xstrdup(key);
		e->seen = m->gen[INF_WPC];
		hmap_put(&m->wpcs, e->name, e);
	}
	if (e->p)
		workload_priority_class_release(e->p);
	free(e->p);
	e->p = nw;
	m->nsview_gen++;
}

static void remove_wpc(struct manager *m, const char *key)
{
	struct wpc_entry *e = hmap_del(&m->wpcs, key);

	if (e) {
		m->nsview_gen++;
		wpc_entry_free(e);
	}
}

static void sweep_wpc(struct manager *m, uint64_t gen)
{
	struct wpc_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->wpcs, &pos, NULL))) {
		if (e->seen != gen) {
			m->nsview_gen++;
			hmap_del(&m->wpcs, e->name);
			wpc_entry_free(e);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Workloads */

static void wl_unlink_lq(struct wl_entry *e)
{
	struct lq_entry *l = e->lqe;

	if (!l)
		return;
	if (e->lq_prev)
		e->lq_prev->lq_next = e->lq_next;
	else
		l->wls = e->lq_next;
	if (e->lq_next)
		e->lq_next->lq_prev = e->lq_prev;
	e->lq_prev = e->lq_next = NULL;
	e->lqe = NULL;
}

static void wl_link_lq(struct wl_entry *e, struct lq_entry *l)
{
	e->lqe = l;
	e->lq_prev = NULL;
	e->lq_next = l->wls;
	if (l->wls)
		l->wls->lq_prev = e;
	l->wls = e;
}

/*
 * The manager never encodes a whole workload and sched reads only the
 * scheduling view (requests, node selector, affinity, tolerations,
 * status), so the rest of a decoded workload is dropped to keep a cache
 * of tens of thousands small: raw pod templates, template and object
 * labels and annotations, owner references, finalizers.
 */
static void wl_trim(struct workload *w)
{
	for (size_t i = 0; i < w->npod_sets; i++) {
		struct pod_template *t = &w->pod_sets[i].tmpl;

		FREE_AND_NULL(t->raw);
		strmap_release(&t->labels);
		strmap_release(&t->annotations);
	}
	strmap_release(&w->meta.labels);
	strmap_release(&w->meta.annotations);
	for (size_t i = 0; i < w->meta.nowners; i++) {
		struct owner_ref *o = &w->meta.owners[i];

		free(o->api_version);
		free(o->kind);
		free(o->name);
		free(o->uid);
	}
	FREE_AND_NULL(w->meta.owners);
	w->meta.nowners = 0;
	for (size_t i = 0; i < w->meta.nfinalizers; i++)
		free(w->meta.finalizers[i]);
	FREE_AND_NULL(w->meta.finalizers);
	w->meta.nfinalizers = 0;
}

static bool cond_equal(const struct condition *a, const struct condition *b)
{
	return a->status == b->status && str_eq(a->type, b->type) &&
	       str_eq(a->reason, b->reason) &&
	       str_eq(a->message, b->message) &&
	       a->last_transition_ms == b->last_transition_ms &&
	       a->observed_generation == b->observed_generation;
}

/* A QuotaReserved condition that is not True: its reason, message and
 * time are ours to write and nothing sched reads. */
static bool is_pending_cond(const struct condition *c)
{
	return c && str_eq(c->type, COND_QUOTA_RESERVED) &&
	       c->status != COND_TRUE;
}

/*
 * Whether nw differs from the cached cur (trimmed) only in what sched
 * never reads: same object, same spec (generation), no admission, the
 * same requeue state, and every condition equal except a QuotaReserved
 * that is not True on either side.
 */
static bool wl_is_quiet(const struct workload *cur, const struct workload *nw)
{
	const struct condition *a, *b;
	size_t na = 0, nb = 0;

	if (!cur->meta.generation ||
	    cur->meta.generation != nw->meta.generation ||
	    !str_eq(cur->meta.uid, nw->meta.uid) ||
	    cur->meta.deletion_ms != nw->meta.deletion_ms ||
	    cur->has_admission || nw->has_admission ||
	    cur->requeue_at_ms != nw->requeue_at_ms ||
	    cur->has_requeue_count != nw->has_requeue_count ||
	    cur->requeue_count != nw->requeue_count ||
	    cur->nreclaimable || nw->nreclaimable || cur->nchecks ||
	    nw->nchecks || cur->has_accumulated != nw->has_accumulated ||
	    cur->accumulated_seconds != nw->accumulated_seconds)
		return false;
	a = conditions_find(&cur->conds, COND_QUOTA_RESERVED);
	b = conditions_find(&nw->conds, COND_QUOTA_RESERVED);
	if ((a && !is_pending_cond(a)) || (b && !is_pending_cond(b)))
		return false;
	for (size_t i = 0; i < cur->conds.n; i++)
		na += !is_pending_cond(&cur->conds.v[i]);
	for (size_t i = 0; i < nw->conds.n; i++) {
		const struct condition *c = &nw->conds.v[i], *o;

		if (is_pending_cond(c))
			continue;
		nb++;
		o = conditions_find(&cur->conds, c->type);
		if (!o || !cond_equal(o, c))
			return false;
	}
	return na == nb;
}

/*
 * A version of the same spec decoded cheaply, or NULL. Every spec change
 * moves metadata.generation (k8s-api.md, CRDs with a status
 * subresource), so a version with cur's generation and uid has cur's
 * spec: obj is decoded with an empty spec (the pod templates and their
 * path bookkeeping were most of the decoding cost), and the caller
 * either keeps only its status (wl_is_quiet: the manager's own pending
 * writes coming back) or swaps cur's spec in (wl_swap_spec: admissions,
 * finishes, evictions). NULL when the generation or uid differ or the
 * lite decode finds an error (the caller decodes in full, which reports
 * it).
 */
static struct workload *wl_decode_lite(const json_t *obj,
				       const struct workload *cur)
{
	const json_t *md = json_object_get(obj, "metadata");
	const json_t *st = json_object_get(obj, "status");
	json_t *lite;
	struct workload *nw;
	struct field_errors fe = FIELD_ERRORS_INIT;

	if (!cur->meta.generation || !cur->meta.uid || !json_is_object(md) ||
	    json_integer_value(json_object_get(md, "generation")) !=
		    cur->meta.generation ||
	    !str_eq(jstr(md, "uid"), cur->meta.uid))
		return NULL;
	lite = json_object();
	json_object_set(lite, "apiVersion", json_object_get(obj, "apiVersion"));
	json_object_set(lite, "kind", json_object_get(obj, "kind"));
	json_object_set(lite, "metadata", (json_t *)md);
	if (st)
		json_object_set(lite, "status", (json_t *)st);
	json_object_set_new(lite, "spec", json_object());
	nw = xcalloc(1, sizeof(*nw));
	if (codec_decode_workload(lite, nw, &fe) || fe.n) {
		field_errors_release(&fe);
		workload_release(nw);
		FREE_AND_NULL(nw);
	}
	json_decref(lite);
	return nw;
}

/* dst's spec fields become src's (shallow: pointers are shared). */
static void wl_spec_assign(struct workload *dst, const struct workload *src)
{
	dst->pod_sets = src->pod_sets;
	dst->npod_sets = src->npod_sets;
	dst->queue_name = src->queue_name;
	dst->priority_class_name = src->priority_class_name;
	dst->priority_source = src->priority_source;
	dst->has_priority = src->has_priority;
	dst->priority = src->priority;
	dst->active = src->active;
	dst->has_max_exec = src->has_max_exec;
	dst->max_exec_seconds = src->max_exec_seconds;
}

/* Swaps the spec fields of a and b (all of struct workload's spec). */
static void wl_swap_spec(struct workload *a, struct workload *b)
{
	struct workload t = *a;

	wl_spec_assign(a, b);
	wl_spec_assign(b, &t);
}

/* Moves nw's conditions and resourceVersion into cur (the rest of the
 * status is equal: wl_is_quiet); nw gets cur's old ones. */
static void wl_take_status(struct workload *cur, struct workload *nw)
{
	char *rv = cur->meta.resource_version;
	struct conditions conds = cur->conds;

	cur->meta.resource_version = nw->meta.resource_version;
	nw->meta.resource_version = rv;
	cur->conds = nw->conds;
	nw->conds = conds;
}

static void apply_wl(struct manager *m, const json_t *obj, const char *key)
{
	struct wl_entry *e = hmap_get(&m->wls, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	const char *rv = meta_str(obj, "resourceVersion");
	struct workload *nw, *old;
	struct lq_entry *old_lqe = NULL;
	bool quiet = false, same_spec = false;

	if (e) {
		e->seen = m->gen[INF_WL];
		if (str_eq(rv, e->w->meta.resource_version) ||
		    str_eq(rv, e->bad_rv))
			return;
	}
	nw = e ? wl_decode_lite(obj, e->w) : NULL;
	if (nw && !e->forget_on_update && wl_is_quiet(e->w, nw)) {
		quiet = true;
	} else if (nw) {
		/* The cached spec moves into nw (sched's compiled pod sets
		 * point into the pod_sets array, which does not move); on
		 * a validation error it moves back. */
		wl_swap_spec(nw, e->w);
		validate_workload(nw, NULL, &fe);
		if (fe.n)
			wl_swap_spec(nw, e->w);
		else
			same_spec = true;
	} else {
		nw = xcalloc(1, sizeof(*nw));
		if (!codec_decode_workload(obj, nw, &fe))
			validate_workload(nw, NULL, &fe);
	}
	if (fe.n || !nw->meta.name || !nw->meta.namespace) {
		free(log_invalid(m, "workloads", meta_str(obj, "namespace"),
				 meta_str(obj, "name"), &fe));
		field_errors_release(&fe);
		workload_release(nw);
		free(nw);
		if (e)
			set_str(&e->bad_rv, rv);
		return;
	}
	if (m->wl_obs)
		m->wl_obs(m->wl_obs_ud, MANAGER_WL_UPSERT, nw);
	if (quiet) {
		/* Nothing sched reads moved (typically our own pending
		 * write coming back): the cached struct, which sched
		 * borrows, takes the new conditions and version; sched is
		 * not told, so no cycle runs for it. */
		wl_take_status(e->w, nw);
		workload_release(nw);
		free(nw);
		m->stats.status_only++;
		FREE_AND_NULL(e->bad_rv);
		if (e->sent_rv && !str_eq(e->sent_rv, rv))
			FREE_AND_NULL(e->sent_rv);
		wl_sync(m, e);
		return;
	}
	wl_trim(nw);
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->key = xstrdup(key);
		e->m = m;
		e->seen = m->gen[INF_WL];
		hmap_put(&m->wls, e->key, e);
	}
	old = e->w;
	m->n_requeue_at += (nw->requeue_at_ms != 0) -
			   (old && old->requeue_at_ms != 0);
	if (!old ||
	    (!same_spec && !str_eq(old->queue_name, nw->queue_name))) {
		old_lqe = e->lqe;
		wl_unlink_lq(e);
		if (nw->queue_name && *nw->queue_name) {
			char *lk = xasprintf("%s/%s", nw->meta.namespace,
					     nw->queue_name);

			wl_link_lq(e, lq_get(m, lk));
			free(lk);
		}
	}
	e->w = nw;
	FREE_AND_NULL(e->bad_rv);
	if (e->sent_rv && !str_eq(e->sent_rv, rv))
		FREE_AND_NULL(e->sent_rv);
	if (m->fed) {
		if (e->forget_on_update) {
			sched_wl_forget(m->s, nw->meta.namespace,
					nw->meta.name);
			e->forget_on_update = false;
		}
		wl_resolve(m, e, true);
	}
	if (old) {
		workload_release(old);
		free(old);
	}
	if (old_lqe != e->lqe)
		lq_gc(m, old_lqe);
}

static void wl_drop(struct manager *m, struct wl_entry *e)
{
	struct lq_entry *l = e->lqe;

	if (m->wl_obs && !m->closing)
		m->wl_obs(m->wl_obs_ud, MANAGER_WL_DELETE, e->w);
	if (m->fed && e->in_sched) {
		sched_wl_remove(m->s, e->w->meta.namespace, e->w->meta.name);
		m->changed = true;
	}
	if (e->call) {
		kube_cancel(m->k, e->call);
		m->wl_inflight--;
		if (e->call_kind == WC_PENDING)
			m->pend_inflight--;
	}
	wl_dequeue(m, e);
	defer_del(m, e);
	wl_unlink_lq(e);
	hmap_del(&m->wls, e->key);
	m->n_requeue_at -= e->w->requeue_at_ms != 0;
	workload_release(e->w);
	free(e->w);
	admission_release(&e->adm);
	free(e->bad_rv);
	free(e->want_reason);
	free(e->want_msg);
	free(e->admit_rv);
	free(e->call_rv);
	free(e->sent_rv);
	free(e->key);
	free(e);
	lq_gc(m, l);
	pump(m);
}

/*
 * Debug audit of what sched holds against the cache: a workload sched
 * counts as holding quota whose cached version does not hold any (and
 * no admission of ours is on its way) is a phantom reservation. Logs
 * the counts and a few examples; O(workloads), run after a resync.
 */
static void audit_holds(struct manager *m, const char *why)
{
	size_t pos = 0, n = 0, adm = 0, call = 0, fou = 0, fin = 0;
	size_t shown = 0;
	struct wl_entry *e;

	if (!m->fed || !log_enabled(LOG_DEBUG))
		return;
	while ((e = hmap_next(&m->wls, &pos, NULL))) {
		const struct workload *w = e->w;
		bool cache_holds = workload_holds_quota(w);
		const char *name;
		char *ns;

		if (cache_holds)
			continue;
		ns = split_key(e->key, &name);
		if (!sched_wl_holds_quota(m->s, ns, name)) {
			free(ns);
			continue;
		}
		n++;
		adm += e->admit_pending;
		call += e->call_kind == WC_ADMIT;
		fou += e->forget_on_update;
		fin += workload_is_finished(w);
		if (shown < 5 && !e->admit_pending &&
		    e->call_kind != WC_ADMIT) {
			shown++;
			log_msg(LOG_DEBUG, "audit", ns, name,
				"phantom hold: rv %s admit_rv %s sent_rv %s "
				"forget_on_update %d finished %d active %d "
				"in_sched %d",
				w->meta.resource_version,
				e->admit_rv ? e->admit_rv : "-",
				e->sent_rv ? e->sent_rv : "-",
				e->forget_on_update, workload_is_finished(w),
				w->active, e->in_sched);
		}
		free(ns);
	}
	log_msg(LOG_DEBUG, "audit", NULL, NULL,
		"%s: %zu held by sched, not by the cache (admit pending %zu, "
		"admit in flight %zu, forget_on_update %zu, finished %zu)",
		why, n, adm, call, fou, fin);
}

static void on_audit(void *ud, int64_t now_ms)
{
	struct manager *m = ud;

	(void)now_ms;
	audit_holds(m, "periodic");
	loop_timer_arm(m->l, &m->audit, AUDIT_MS);
}

static void remove_wl(struct manager *m, const char *key)
{
	struct wl_entry *e = hmap_get(&m->wls, key);

	if (e)
		wl_drop(m, e);
}

static void sweep_wl(struct manager *m, uint64_t gen)
{
	struct wl_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->wls, &pos, NULL)))
		if (e->seen != gen)
			wl_drop(m, e);
}

/* ------------------------------------------------------------------ */
/* Informer callbacks */

/* The cache key of obj: name, or namespace/name (new), or NULL. */
static char *obj_key(const struct inf_def *d, const json_t *obj)
{
	const char *name = meta_str(obj, "name"), *ns;

	if (!name || !*name)
		return NULL;
	if (!d->namespaced)
		return xstrdup(name);
	ns = meta_str(obj, "namespace");
	if (!ns || !*ns)
		return NULL;
	return xasprintf("%s/%s", ns, name);
}

static void on_event(void *ud, enum kube_event_type type, json_t *obj)
{
	struct informer *inf = ud;
	const struct inf_def *d = &inf_defs[inf->kind];
	char *key = obj_key(d, obj);

	if (key) {
		if (type == KUBE_DELETED)
			d->remove(inf->m, key);
		else
			d->apply(inf->m, obj, key);
	}
	free(key);
	json_decref(obj);
}

static void on_replace(void *ud, json_t *items, bool initial)
{
	struct informer *inf = ud;
	struct manager *m = inf->m;
	const struct inf_def *d = &inf_defs[inf->kind];
	size_t i;
	json_t *obj;

	if (!inf->paged)
		m->gen[inf->kind]++;
	inf->paged = false;
	json_array_foreach(items, i, obj) {
		char *key = obj_key(d, obj);

		if (key)
			d->apply(m, obj, key);
		free(key);
	}
	/* A list's JSON was many small blocks among long-lived cache
	 * entries: give the free pages back. */
#ifdef __GLIBC__
	malloc_trim(0);
#endif
	if (!initial) {
		log_msg(LOG_INFO, "informer", NULL, d->resource,
			"resynced");
		d->sweep(m, m->gen[inf->kind]);
		if (inf->kind == INF_WL)
			audit_holds(m, "after workloads resync");
	}
	json_decref(items);
}

/* One page of a list: applied at once, so a large list never sits in
 * memory as JSON. */
static void on_page(void *ud, json_t *items, bool first)
{
	struct informer *inf = ud;
	struct manager *m = inf->m;
	const struct inf_def *d = &inf_defs[inf->kind];
	size_t i;
	json_t *obj;

	if (first)
		m->gen[inf->kind]++;
	inf->paged = true;
	json_array_foreach(items, i, obj) {
		char *key = obj_key(d, obj);

		if (key)
			d->apply(m, obj, key);
		free(key);
	}
	json_decref(items);
}

static void feed(struct manager *m);

static void on_synced(void *ud)
{
	struct informer *inf = ud;
	struct manager *m = inf->m;

	if (inf->synced)
		return;
	inf->synced = true;
	if (++m->nsynced == INF_N)
		feed(m);
}

static void on_error(void *ud, const char *message)
{
	struct informer *inf = ud;

	log_msg(LOG_WARN, "informer", NULL, inf_defs[inf->kind].resource,
		"%s", message);
}

static const struct kube_watch_ops inf_ops = {
	.event = on_event,
	.replace = on_replace,
	.synced = on_synced,
	.error = on_error,
	.page = on_page,
};

/*
 * Every informer has synced: hand the caches to sched in dependency
 * order, so workloads holding quota find their queues and flavors and
 * nothing is scheduled against a half-built state.
 */
static void feed(struct manager *m)
{
	struct rf_entry *rf;
	struct cohort_entry *co;
	struct cq_entry *cq;
	struct ns_entry *ns;
	struct lq_entry *lq;
	struct wl_entry *wl;
	size_t pos;

	m->fed = true;
	for (pos = 0; (rf = hmap_next(&m->rfs, &pos, NULL));)
		if (rf->rf)
			sched_flavor_set(m->s, rf->rf);
	for (pos = 0; (co = hmap_next(&m->cohorts, &pos, NULL));)
		sched_cohort_set(m->s, co->c);
	for (pos = 0; (cq = hmap_next(&m->cqs, &pos, NULL));)
		if (cq->cq)
			sched_cq_set(m->s, cq->cq, cq->invalid);
	for (pos = 0; (ns = hmap_next(&m->nss, &pos, NULL));)
		sched_namespace_set(m->s, ns->name, &ns->labels);
	for (pos = 0; (cq = hmap_next(&m->cqs, &pos, NULL));) {
		struct sched_cq_status st;

		if (!cq->cq)
			continue;
		sched_cq_status(m->s, cq->name, &st);
		cq->active = st.active;
	}
	for (pos = 0; (wl = hmap_next(&m->wls, &pos, NULL));)
		wl_resolve(m, wl, true);
	for (pos = 0; (cq = hmap_next(&m->cqs, &pos, NULL));) {
		status_writer_mark(m->cqw, cq->name);
		cq_finalize(m, cq);
	}
	for (pos = 0; (lq = hmap_next(&m->lqs, &pos, NULL));)
		if (lq->lq)
			lq_mark(m, lq);
	for (pos = 0; (rf = hmap_next(&m->rfs, &pos, NULL));)
		rf_finalize(m, rf);
	m->changed = true;
	log_msg(LOG_INFO, "manager", NULL, NULL,
		"caches synced: %zu resourceflavors, %zu cohorts, "
		"%zu clusterqueues, %zu localqueues, %zu workloads",
		hmap_count(&m->rfs), hmap_count(&m->cohorts),
		hmap_count(&m->cqs), hmap_count(&m->lqs),
		hmap_count(&m->wls));
	pump(m);
}

/* ------------------------------------------------------------------ */
/* The before-sleep step */

static void collect(char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		*v = xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = xstrdup(s);
}

static void collect_cq(void *ud, const char *name)
{
	struct manager *m = ud;

	collect(&m->dirty_cq, &m->ndirty_cq, &m->cap_dirty_cq, name);
}

static void collect_lq(void *ud, const char *key)
{
	struct manager *m = ud;

	collect(&m->dirty_lq, &m->ndirty_lq, &m->cap_dirty_lq, key);
}

/*
 * A ClusterQueue's gauges are refreshed at most every METRICS_FLUSH_MS,
 * not after every cycle that touched the queue: with a thousand queues
 * each refresh (a dozen labelled series looked up, two usage tables
 * built) was a fifth of the manager's CPU, and a scrape interval is
 * seconds. manager_idle waits for the flush.
 */
static void cq_metrics_mark(struct manager *m, struct cq_entry *e)
{
	if (!m->o.metrics || e->mdirty)
		return;
	e->mdirty = true;
	collect(&m->mdirty, &m->nmdirty, &m->cap_mdirty, e->name);
	if (m->nmdirty == 1)
		loop_timer_arm(m->l, &m->mflush, METRICS_FLUSH_MS);
}

struct parked_ctx {
	struct manager *m;
	const struct cq_entry *cqe;
};

static void set_parked(void *ud, const char *lq, int32_t n)
{
	struct parked_ctx *pc = ud;
	struct lq_entry *l = hmap_get(&pc->m->lqs, lq);

	if (l && l->cqe == pc->cqe)
		l->parked = n;
}

/* Counts each LocalQueue's parked workloads of ClusterQueue e, for
 * lq_metrics: one walk of the queue's parked set. */
static void count_lq_parked(struct manager *m, struct cq_entry *e)
{
	struct parked_ctx pc = { m, e };

	for (struct lq_entry *l = e->lqs; l; l = l->cq_next)
		l->parked = 0;
	if (e->lqs && kueue_metrics_lq_enabled(m->o.metrics))
		sched_cq_parked_by_lq(m->s, e->name, set_parked, &pc);
}

static void on_mflush(void *ud, int64_t now_ms)
{
	struct manager *m = ud;

	(void)now_ms;
	for (size_t i = 0; i < m->nmdirty; i++) {
		struct cq_entry *e = hmap_get(&m->cqs, m->mdirty[i]);

		if (e && e->mdirty) {
			e->mdirty = false;
			cq_metrics(m, e);
			count_lq_parked(m, e);
			for (const struct lq_entry *l = e->lqs; l;
			     l = l->cq_next)
				lq_metrics(m, l);
		}
		free(m->mdirty[i]);
	}
	m->nmdirty = 0;
}

/*
 * Status writes for the queues sched marked, and the consequences of a
 * ClusterQueue turning active or inactive (its workloads re-resolved,
 * its LocalQueues' Active condition). Collected first, acted on after:
 * sched is not re-entered while it walks its dirty sets.
 */
static void process_dirty(struct manager *m)
{
	sched_take_dirty(m->s, collect_cq, collect_lq, m);
	for (size_t i = 0; i < m->ndirty_cq; i++) {
		struct cq_entry *e = hmap_get(&m->cqs, m->dirty_cq[i]);
		struct sched_cq_status st;

		if (e && e->cq) {
			sched_cq_status(m->s, e->name, &st);
			if (st.active != e->active) {
				e->active = st.active;
				log_msg(LOG_INFO, "clusterqueues", NULL,
					e->name, "%s: %s",
					st.active ? "active" : "inactive",
					st.message ? st.message : "");
				cq_resolve_all(m, e);
			}
			status_writer_mark(m->cqw, e->name);
			cq_metrics_mark(m, e);
			if (e->cq->meta.deletion_ms)
				cq_finalize(m, e);
		}
		free(m->dirty_cq[i]);
	}
	m->ndirty_cq = 0;
	for (size_t i = 0; i < m->ndirty_lq; i++) {
		struct lq_entry *e = hmap_get(&m->lqs, m->dirty_lq[i]);

		if (e && e->lq)
			lq_mark(m, e);
		free(m->dirty_lq[i]);
	}
	m->ndirty_lq = 0;
}

/*
 * One scheduling cycle when an input changed: sched_cycle tries every
 * pending workload once (see the end of this function for why it is
 * not run again until the next change).
 */

static void cycle(struct manager *m)
{
	int64_t now = loop_wall_ms(m->l);
	size_t n;
	bool had_work = m->o.metrics && sched_has_work(m->s);
	struct timespec t0, t1;

	m->changed = false;
	sched_tick(m->s, now);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	n = sched_cycle(m->s, now, &m->decs);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (m->o.metrics) {
		double dt = (double)(t1.tv_sec - t0.tv_sec) +
			    (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;

		kueue_metrics_cycle(m->o.metrics, dt);
		if (had_work)
			kueue_metrics_admission_attempt(m->o.metrics, n > 0,
							dt);
	}
	m->stats.cycles++;
	apply_decisions(m);
	sched_decisions_clear(&m->decs);
	/*
	 * No timer to run again: sched_cycle went on until a round neither
	 * admitted nor parked anything, and running it before an input
	 * changes would decide the same. Only blocked StrictFIFO heads can
	 * be left; they wait for the next change or the backoff wakeup.
	 */
}

static void before_sleep(void *ud)
{
	struct manager *m = ud;
	int64_t wake;

	if (m->ev) {
		const struct event_recorder_stats *es =
			event_recorder_stats(m->ev);

		m->stats.events_recorded = es->recorded;
		m->stats.events_posted = es->posted;
		m->stats.events_dropped = es->dropped;
	}
	if (!m->fed)
		return;
	process_dirty(m);
	if (m->changed) {
		cycle(m);
		process_dirty(m);
		/* Only workloads with requeueState.requeueAt wait for a
		 * time, and sched_next_wakeup walks every parked one: ask
		 * only after a cycle and when some workload has one. */
		wake = m->n_requeue_at ? sched_next_wakeup(m->s) : 0;
		if (wake > 0)
			loop_timer_arm(m->l, &m->backoff,
				       wake - loop_wall_ms(m->l));
		else
			loop_timer_cancel(m->l, &m->backoff);
	}
	if (m->changed)
		wake_soon(m);
	pump(m);
}

static void on_wake(void *ud, int64_t now_ms)
{
	(void)ud;
	(void)now_ms;
}

/* The backoff timer: a cycle is due. */
static void on_backoff(void *ud, int64_t now_ms)
{
	struct manager *m = ud;

	(void)now_ms;
	m->changed = true;
}

/* ------------------------------------------------------------------ */
/* Construction */

struct manager *manager_new(struct kube *k, const struct manager_opts *o)
{
	static const struct manager_opts dflt;
	struct manager *m = xcalloc(1, sizeof(*m));
	struct sched_opts so;
	struct status_writer_opts wo = { .result = NULL };

	m->k = k;
	m->l = kube_loop(k);
	m->o = o ? *o : dflt;
	if (!m->o.max_wl_writes)
		m->o.max_wl_writes = 128;
	if (!m->o.pending_msg_ms)
		m->o.pending_msg_ms = DEFAULT_PENDING_MSG_MS;
	if (!m->o.no_events) {
		struct event_recorder_opts eo = {
			.component = EVENT_COMPONENT,
			.registry = m->o.registry,
		};

		m->ev = event_recorder_new(k, &eo);
	}
	sched_opts_default(&so);
	so.ignore_undeclared = m->o.ignore_undeclared;
	so.partial_admission = !m->o.no_partial_admission;
	m->s = sched_new(&so);
	hmap_init(&m->rfs);
	hmap_init(&m->cohorts);
	hmap_init(&m->cqs);
	hmap_init(&m->nss);
	hmap_init(&m->lqs);
	hmap_init(&m->wpcs);
	hmap_init(&m->wls);
	/* One write per queue per second at most: pending/admitted
	 * counts and usage change with every admission, and 60 queues at
	 * 100 ms were a third of the API traffic of the baseline. */
	wo.min_interval_ms = m->o.status_interval_ms
			     ? m->o.status_interval_ms
			     : DEFAULT_STATUS_INTERVAL_MS;
	wo.ud = m;
	wo.build = build_cq;
	wo.result = cq_status_result;
	m->cqw = status_writer_new(k, &wo);
	wo.build = build_lq;
	wo.result = lq_status_result;
	m->lqw = status_writer_new(k, &wo);
	timers_setup(&m->wake, on_wake, m);
	timers_setup(&m->backoff, on_backoff, m);
	timers_setup(&m->defer, on_defer, m);
	timers_setup(&m->audit, on_audit, m);
	timers_setup(&m->mflush, on_mflush, m);
	if (log_enabled(LOG_DEBUG))
		loop_timer_arm(m->l, &m->audit, AUDIT_MS);
	loop_set_before_sleep(m->l, before_sleep, m);
	for (int i = 0; i < INF_N; i++) {
		const struct inf_def *d = &inf_defs[i];
		struct kube_ref ref = { .group = d->group,
					.version = d->version,
					.resource = d->resource };
		char *path = kube_path(&ref);
		struct kube_watch_opts wopts = { .path = path,
						 .page_size = m->o.page_size,
						 .ops = &inf_ops,
						 .ud = &m->inf[i] };

		m->inf[i].m = m;
		m->inf[i].kind = (enum inf_kind)i;
		m->inf[i].w = kube_watch_new(k, &wopts);
		free(path);
	}
	return m;
}

void manager_free(struct manager *m)
{
	void *e;
	size_t pos;

	if (!m)
		return;
	log_msg(LOG_INFO, "manager", NULL, NULL,
		"stopping: %llu cycles, %llu admission writes (%llu "
		"conflicts), %llu pending writes, %llu queue status writes, "
		"%llu status-only versions, %llu events (%llu posted, %llu "
		"dropped)",
		(unsigned long long)m->stats.cycles,
		(unsigned long long)m->stats.admit_writes,
		(unsigned long long)m->stats.admit_conflicts,
		(unsigned long long)m->stats.pending_writes,
		(unsigned long long)m->stats.status_writes,
		(unsigned long long)m->stats.status_only,
		(unsigned long long)m->stats.events_recorded,
		(unsigned long long)m->stats.events_posted,
		(unsigned long long)m->stats.events_dropped);
	m->closing = true;
	for (int i = 0; i < INF_N; i++)
		kube_watch_free(m->inf[i].w);
	loop_set_before_sleep(m->l, NULL, NULL);
	loop_timer_cancel(m->l, &m->wake);
	loop_timer_cancel(m->l, &m->backoff);
	loop_timer_cancel(m->l, &m->defer);
	loop_timer_cancel(m->l, &m->audit);
	loop_timer_cancel(m->l, &m->mflush);
	status_writer_free(m->cqw);
	status_writer_free(m->lqw);
	sched_decisions_release(&m->decs);
	/* sched borrows the cached structs: free it before them */
	sched_free(m->s);
	m->s = NULL;
	m->fed = false;
	for (pos = 0; (e = hmap_next(&m->wls, &pos, NULL));) {
		struct wl_entry *w = e;

		w->lqe = NULL; /* entries are all going */
		wl_drop(m, w);
	}
	for (pos = 0; (e = hmap_next(&m->lqs, &pos, NULL));)
		lq_entry_free(e);
	for (pos = 0; (e = hmap_next(&m->cqs, &pos, NULL));)
		cq_entry_free(m, e);
	for (pos = 0; (e = hmap_next(&m->rfs, &pos, NULL));)
		rf_entry_free(m, e);
	for (pos = 0; (e = hmap_next(&m->cohorts, &pos, NULL));)
		cohort_entry_free(e);
	for (pos = 0; (e = hmap_next(&m->nss, &pos, NULL));)
		ns_entry_free(e);
	for (pos = 0; (e = hmap_next(&m->wpcs, &pos, NULL));)
		wpc_entry_free(e);
	hmap_release(&m->wls);
	hmap_release(&m->lqs);
	hmap_release(&m->cqs);
	hmap_release(&m->rfs);
	hmap_release(&m->cohorts);
	hmap_release(&m->nss);
	hmap_release(&m->wpcs);
	event_recorder_free(m->ev);
	for (size_t i = 0; i < m->nmdirty; i++)
		free(m->mdirty[i]);
	free(m->mdirty);
	free(m->dirty_cq);
	free(m->dirty_lq);
	free(m);
}

bool manager_synced(const struct manager *m)
{
	return m->fed;
}

bool manager_idle(const struct manager *m)
{
	return !m->wl_inflight && !m->fin_inflight && !m->admitq.head &&
	       !m->pendq.head && !m->ndeferred &&
	       !event_recorder_pending(m->ev) && !m->nmdirty &&
	       status_writer_idle(m->cqw) && status_writer_idle(m->lqw);
}

const struct manager_stats *manager_stats(const struct manager *m)
{
	return &m->stats;
}

bool manager_check(const struct manager *m)
{
	return !m->s || sched_check(m->s);
}

void manager_set_wl_observer(struct manager *m, manager_wl_observer_fn *fn,
			     void *ud)
{
	m->wl_obs = fn;
	m->wl_obs_ud = fn ? ud : NULL;
}

const struct workload *manager_workload_peek(const struct manager *m,
					     const char *ns, const char *name)
{
	char *key = xasprintf("%s/%s", ns, name);
	const struct wl_entry *e = hmap_get(&m->wls, key);

	free(key);
	return e ? e->w : NULL;
}

const struct resource_flavor *manager_flavor_peek(const struct manager *m,
						  const char *name)
{
	const struct rf_entry *e = hmap_get(&m->rfs, name);

	return e ? e->rf : NULL;
}

bool manager_wpc_value(const struct manager *m, const char *name,
		       int32_t *value)
{
	const struct wpc_entry *e = hmap_get(&m->wpcs, name);

	if (!e || !e->p || !e->p->has_value)
		return false;
	*value = e->p->value;
	return true;
}

bool manager_has_local_queue(const struct manager *m, const char *ns,
			     const char *name)
{
	char *key = xasprintf("%s/%s", ns, name);
	const struct lq_entry *e = hmap_get(&m->lqs, key);

	free(key);
	return e && e->lq;
}

uint64_t manager_nsview_gen(const struct manager *m)
{
	return m->nsview_gen;
}

void manager_foreach_namespace(const struct manager *m, manager_ns_fn *fn,
			       void *ud)
{
	const struct ns_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->nss, &pos, NULL)))
		fn(ud, e->name, &e->labels);
}

void manager_foreach_lq_named(const struct manager *m, const char *name,
			      manager_ns_fn *fn, void *ud)
{
	const struct lq_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(&m->lqs, &pos, NULL))) {
		const char *slash = strchr(e->key, '/');
		char *ns;

		if (!e->lq || !slash || strcmp(slash + 1, name))
			continue;
		ns = xstrndup(e->key, (size_t)(slash - e->key));
		fn(ud, ns, NULL);
		free(ns);
	}
}

bool manager_has_wpc(const struct manager *m, const char *name)
{
	return hmap_get(&m->wpcs, name) != NULL;
}
