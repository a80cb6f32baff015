/*
 * manager: the reconcilers' hub (see manager.h). It owns struct manager,
 * sched, the informers and their callbacks, the status writers, the
 * timers and the before-sleep step, and builds ClusterQueue and
 * LocalQueue status bodies and gauges. The caches live beside it,
 * sharing manager_int.h: manager_queues.c (the informer table, flavors,
 * cohorts, ClusterQueues, namespaces, LocalQueues, priority classes,
 * finalizers) and manager_wl.c (workloads, their writes, decisions). It
 * never writes an object itself: those files and status.h do.
 *
 * Cycles run in the before-sleep step when a sched input changed and
 * when sched's backoff wakeup is due: one sched_cycle tries every pending
 * workload once and the core is deterministic, so nothing is polled.
 *
 * JSON: the manager files hold json_t, outside STYLE P3(c)'s list, where
 * informer objects meet the codec and merge-patch bodies are assembled
 * from codec output; no json_t outlives a callback except the status
 * writer's last bodies (status.c).
 */
#include "controller/manager.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "base/alloc.h"
#include "base/hmap.h"
#include "controller/events.h"
#include "controller/kube.h"
#include "controller/kube_watch.h"
#include "controller/kueue_metrics.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/manager_int.h"
#include "controller/status.h"
#include "flavors/sched.h"
#include "model/codec.h"

#define COND_ACTIVE "Active"
#define EVENT_COMPONENT "kueue-admission"
#define DEFAULT_PENDING_MSG_MS 10000
#define DEFAULT_STATUS_INTERVAL_MS 1000
#define METRICS_FLUSH_MS 250 /* ClusterQueue gauges: at most 4 refreshes/s */
#define AUDIT_MS 5000 /* audit_holds period at --log-level debug */

/* ------------------------------------------------------------------ */
/* Small helpers */

static void wake_soon(struct manager *m)
{
	loop_timer_arm(m->l, &m->wake, 0);
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

	if (!e || !e->cq || !manager_leads(m))
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
	tmp.has_fs_status = st.fair;
	tmp.fs_weighted_share = st.weighted_share;
	cur = codec_encode_cluster_queue_status(e->cq, API_V1BETA2);
	nw = codec_encode_cluster_queue_status(&tmp, API_V1BETA2);
	if (!json_equal(cur, nw)) {
		null_if_absent(nw, "flavorsReservation");
		null_if_absent(nw, "flavorsUsage");
		null_if_absent(nw, "fairSharing"); /* fair sharing now off */
		body = json_pack("{s:O}", "status", nw);
		*path = path_of("clusterqueues", NULL, name, "status");
	}
	json_decref(cur);
	json_decref(nw);
	cluster_queue_release(&tmp);
	return body;
}

/* A Cohort object's status.fairSharing (fair sharing on). */
static json_t *build_cohort(void *ud, const char *name, char **path)
{
	struct manager *m = ud;
	struct cohort_entry *e = hmap_get(&m->cohorts, name);
	struct cohort tmp;
	double share;
	json_t *cur, *nw, *body = NULL;

	if (!e || !e->c || !manager_leads(m))
		return NULL;
	memset(&tmp, 0, sizeof(tmp));
	if (!sched_cohort_share(m->s, name, &tmp.fs_weighted_share, &share))
		return NULL;
	tmp.has_fs_status = true;
	cur = codec_encode_cohort_status(e->c);
	nw = codec_encode_cohort_status(&tmp);
	if (!json_equal(cur, nw)) {
		body = json_pack("{s:O}", "status", nw);
		*path = path_of("cohorts", NULL, name, "status");
	}
	json_decref(cur);
	json_decref(nw);
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

	if (!e || !e->lq || !manager_leads(m))
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
	tmp.has_afs_status = sched_lq_afs_status(
		m->s, key, &tmp.afs_consumed, &tmp.afs_last_ms);
	if (tmp.has_afs_status && !tmp.afs_last_ms)
		tmp.afs_last_ms = e->lq->has_afs_status ? e->lq->afs_last_ms
					: loop_wall_ms(m->l);
	cur = codec_encode_local_queue_status(e->lq, API_V1BETA2);
	nw = codec_encode_local_queue_status(&tmp, API_V1BETA2);
	if (!json_equal(cur, nw)) {
		const char *name;
		char *ns = split_key(key, &name);

		null_if_absent(nw, "flavorsReservation");
		null_if_absent(nw, "flavorsUsage");
		null_if_absent(nw, "fairSharing");
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

/* A ClusterQueue's status write ended: a finalizer change held back
 * meanwhile (one write per object at a time) may go now. */
static void cq_status_result(void *ud, const char *key,
			     const struct kube_reply *r)
{
	struct manager *m = ud;
	struct cq_entry *e = hmap_get(&m->cqs, key);

	status_result(m, key, r);
	if (e)
		manager_queues_cq_finalize(m, e);
}

static void lq_status_result(void *ud, const char *key,
			     const struct kube_reply *r)
{
	status_result(ud, key, r);
}

/* ------------------------------------------------------------------ */
/* ClusterQueue and LocalQueue gauges */

/* The usage total of (flavor, resource) in u (0 when absent). */
static int64_t usage_of(const struct flavor_usage *u, size_t n,
			const char *flavor, const char *res)
{
	for (size_t i = 0; i < n; i++) {
		if (!text_same(u[i].name, flavor))
			continue;
		for (size_t j = 0; j < u[i].nres; j++)
			if (text_same(u[i].res[j].name, res))
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

	if (!kueue_metrics_lq_enabled(km) || !e->lq || !manager_leads(m))
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
void manager_cq_metrics(struct manager *m, const struct cq_entry *e)
{
	struct kueue_metrics *km = m->o.metrics;
	const struct cluster_queue *cq = e->cq;
	struct sched_cq_status st;
	struct flavor_usage *rsv = NULL, *use = NULL;
	size_t nrsv = 0, nuse = 0;

	if (!km || !cq || !manager_leads(m))
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
	if (st.fair)
		kueue_metrics_cq_weighted_share(km, e->name,
						st.weighted_share);
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

static void cq_metrics_mark(struct manager *m, struct cq_entry *e);

/* A LocalQueue's status (and gauges, with its ClusterQueue's) may have
 * changed. */
void manager_lq_mark(struct manager *m, struct lq_entry *e)
{
	status_writer_mark(m->lqw, e->key);
	if (e->cqe)
		cq_metrics_mark(m, e->cqe);
}

/* ------------------------------------------------------------------ */
/* Debug audit */

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

/* ------------------------------------------------------------------ */
/* Informer callbacks */

/* The cache key of obj: name, or namespace/name (new), or NULL. */
static char *obj_key(const struct inf_def *d, const json_t *obj)
{
	const char *name = jx_meta_str(obj, "name"), *ns;

	if (!name || !*name)
		return NULL;
	if (!d->namespaced)
		return xstrdup(name);
	ns = jx_meta_str(obj, "namespace");
	if (!ns || !*ns)
		return NULL;
	return xasprintf("%s/%s", ns, name);
}

static void on_event(void *ud, enum kube_event_type type, json_t *obj)
{
	struct informer *inf = ud;
	const struct inf_def *d = &manager_queues_inf_defs[inf->kind];
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
	const struct inf_def *d = &manager_queues_inf_defs[inf->kind];
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
	const struct inf_def *d = &manager_queues_inf_defs[inf->kind];
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

	log_msg(LOG_WARN, "informer", NULL,
		manager_queues_inf_defs[inf->kind].resource, "%s", message);
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
	manager_queues_feed_names(m);
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
	for (pos = 0; (lq = hmap_next(&m->lqs, &pos, NULL));)
		if (lq->lq) {
			sched_lq_set(m->s, lq->key, lq->lq->stop);
			manager_lq_fs(m, lq->key, lq->lq);
		}
	for (pos = 0; (cq = hmap_next(&m->cqs, &pos, NULL));) {
		struct sched_cq_status st;

		if (!cq->cq)
			continue;
		sched_cq_status(m->s, cq->name, &st);
		cq->active = st.active;
	}
	for (pos = 0; (wl = hmap_next(&m->wls, &pos, NULL));)
		manager_wl_resolve(m, wl, true);
	if (!manager_leads(m)) {
		/* a follower's (or kubectl cueue's) passive state: no
		 * status, no finalizers, no writes */
		log_msg(LOG_INFO, "manager", NULL, NULL,
			"caches synced (not leading: the scheduling state "
			"serves the visibility API only)");
		return;
	}
	for (pos = 0; (cq = hmap_next(&m->cqs, &pos, NULL));) {
		status_writer_mark(m->cqw, cq->name);
		manager_queues_cq_finalize(m, cq);
	}
	for (pos = 0; (lq = hmap_next(&m->lqs, &pos, NULL));)
		if (lq->lq)
			manager_lq_mark(m, lq);
	for (pos = 0; (rf = hmap_next(&m->rfs, &pos, NULL));)
		manager_queues_rf_finalize(m, rf);
	m->changed = true;
	log_msg(LOG_INFO, "manager", NULL, NULL,
		"caches synced: %zu resourceflavors, %zu cohorts, "
		"%zu clusterqueues, %zu localqueues, %zu workloads",
		hmap_count(&m->rfs), hmap_count(&m->cohorts),
		hmap_count(&m->cqs), hmap_count(&m->lqs),
		hmap_count(&m->wls));
	manager_wl_pump(m);
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

/* A cohort whose share may have moved: its status and gauge. */
static void cohort_dirty(void *ud, const char *name)
{
	struct manager *m = ud;
	int64_t share;
	double f;

	if (m->o.metrics && sched_cohort_share(m->s, name, &share, &f))
		kueue_metrics_cohort_weighted_share(m->o.metrics, name, share);
	if (hmap_get(&m->cohorts, name))
		status_writer_mark(m->cow, name);
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

	struct dlist *pos;

	DLIST_FOREACH(pos, &e->lqs)
		DLIST_ENTRY(pos, struct lq_entry, cq_link)->parked = 0;
	if (!dlist_empty(&e->lqs) && kueue_metrics_lq_enabled(m->o.metrics))
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
			manager_cq_metrics(m, e);
			count_lq_parked(m, e);
			struct dlist *pos;

			DLIST_FOREACH(pos, &e->lqs)
				lq_metrics(m, DLIST_ENTRY(pos, struct lq_entry,
							  cq_link));
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
	sched_take_dirty_cohorts(m->s, cohort_dirty, m);
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
				manager_queues_cq_resolve_all(m, e);
			}
			status_writer_mark(m->cqw, e->name);
			cq_metrics_mark(m, e);
			if (e->cq->meta.deletion_ms)
				manager_queues_cq_finalize(m, e);
		}
		free(m->dirty_cq[i]);
	}
	m->ndirty_cq = 0;
	for (size_t i = 0; i < m->ndirty_lq; i++) {
		struct lq_entry *e = hmap_get(&m->lqs, m->dirty_lq[i]);

		if (e && e->lq)
			manager_lq_mark(m, e);
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
	manager_wl_apply_decisions(m);
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
	if (m->fed && !m->leading && !m->o.inspect) {
		/* a follower's passive state: nothing is owed to anyone */
		sched_drop_checks(m->s);
		sched_take_dirty(m->s, NULL, NULL, NULL);
		sched_take_dirty_cohorts(m->s, NULL, NULL);
		return;
	}
	if (!manager_leads(m))
		return;
	if (m->draining) {
		manager_wl_pump(m); /* what was decided still goes out */
		return;
	}
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
	manager_wl_pump(m);
}

static void on_wake(void *ud, int64_t now_ms)
{
	(void)ud;
	(void)now_ms;
}

/*
 * The follower's passive scheduling state is thrown away at the lead: the
 * leader starts from a fresh one fed from the caches, exactly as after a
 * restart (its queues never parked anything, its admission fair sharing
 * history was never sampled).
 */
static void unfeed(struct manager *m)
{
	struct wl_entry *wl;
	size_t pos;

	sched_free(m->s);
	m->s = sched_new(&m->so);
	m->fed = false;
	for (pos = 0; (wl = hmap_next(&m->wls, &pos, NULL));) {
		wl->in_sched = false;
		wl->res_cqe = NULL;
		wl->res_lqe = NULL;
	}
}

void manager_lq_fs(struct manager *m, const char *key,
		   const struct local_queue *lq)
{
	if (!m->fed)
		return;
	if (sched_lq_set_fs(m->s, key, lq ? lq->cluster_queue : NULL,
			    lq && lq->has_fs_weight ? lq->fs_weight : 1000))
		m->changed = true;
	if (lq && m->o.afs && lq->has_afs_status &&
	    sched_lq_afs_seed(m->s, key, &lq->afs_consumed,
			      loop_wall_ms(m->l)))
		m->changed = true;
}

/* Admission fair sharing: every usageSamplingInterval, each LocalQueue's
 * history takes in its usage now (and its status is written). */
static void on_afs(void *ud, int64_t now_ms)
{
	struct manager *m = ud;

	(void)now_ms;
	if (manager_leads(m)) {
		sched_afs_sample(m->s, loop_wall_ms(m->l));
		m->changed = true;
	}
	loop_timer_arm(m->l, &m->afs, m->o.afs_sampling_ms);
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
	if (m->o.inspect) {
		m->o.standby = false;
		m->o.no_events = true;
		m->o.metrics = NULL;
	}
	m->leading = !m->o.standby;
	dlist_init(&m->admitq);
	dlist_init(&m->pendq);
	dlist_init(&m->deferq);
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
	so.block_admission = m->o.ready.enabled && m->o.block_admission;
	so.requeue_ts_creation = m->o.requeue_ts_creation;
	so.fair_sharing = m->o.fair_sharing;
	so.nfs_strategies = m->o.nfs_strategies;
	so.fs_strategies[0] = m->o.fs_strategies[0];
	so.fs_strategies[1] = m->o.fs_strategies[1];
	so.afs = m->o.afs;
	so.afs_half_life_ms = m->o.afs_half_life_ms;
	so.afs_sampling_ms = m->o.afs_sampling_ms;
	so.nafs_w = m->o.nafs_w;
	if (so.nafs_w) {
		m->afs_names = xcalloc(so.nafs_w, sizeof(*m->afs_names));
		m->afs_wv = xcalloc(so.nafs_w, sizeof(*m->afs_wv));
		for (size_t i = 0; i < so.nafs_w; i++) {
			m->afs_names[i] = xstrdup(m->o.afs_res[i]);
			m->afs_wv[i] = m->o.afs_w[i];
		}
	}
	so.afs_res = (const char *const *)m->afs_names;
	so.afs_w = m->afs_wv;
	if (m->o.res_policy)
		res_policy_copy(&m->res_policy, m->o.res_policy);
	m->o.res_policy = NULL; /* copied */
	so.res_policy = &m->res_policy;
	m->so = so;
	m->s = sched_new(&so);
	hmap_init(&m->rfs);
	hmap_init(&m->cohorts);
	hmap_init(&m->cqs);
	hmap_init(&m->nss);
	hmap_init(&m->lqs);
	hmap_init(&m->wpcs);
	hmap_init(&m->wls);
	hmap_init(&m->topos);
	hmap_init(&m->acs);
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
	wo.build = build_cohort;
	wo.result = NULL;
	m->cow = status_writer_new(k, &wo);
	timers_setup(&m->wake, on_wake, m);
	timers_setup(&m->backoff, on_backoff, m);
	timers_setup(&m->defer, manager_wl_on_defer, m);
	timers_setup(&m->audit, on_audit, m);
	timers_setup(&m->mflush, on_mflush, m);
	timers_setup(&m->afs, on_afs, m);
	m->o.afs_res = NULL; /* sched copied them */
	m->o.afs_w = NULL;
	if (m->o.afs && m->o.afs_sampling_ms > 0)
		loop_timer_arm(m->l, &m->afs, m->o.afs_sampling_ms);
	if (log_enabled(LOG_DEBUG))
		loop_timer_arm(m->l, &m->audit, AUDIT_MS);
	loop_before_sleep_add(m->l, before_sleep, m);
	for (int i = 0; i < INF_N; i++) {
		const struct inf_def *d = &manager_queues_inf_defs[i];
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
	manager_dra_start(m);
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
	loop_before_sleep_remove(m->l, before_sleep, m);
	loop_timer_cancel(m->l, &m->wake);
	loop_timer_cancel(m->l, &m->backoff);
	loop_timer_cancel(m->l, &m->defer);
	loop_timer_cancel(m->l, &m->audit);
	loop_timer_cancel(m->l, &m->mflush);
	loop_timer_cancel(m->l, &m->afs);
	status_writer_free(m->cqw);
	status_writer_free(m->lqw);
	status_writer_free(m->cow);
	sched_decisions_release(&m->decs);
	/* sched borrows the cached structs: free it before them */
	sched_free(m->s);
	m->s = NULL;
	m->fed = false;
	for (size_t i = 0; i < m->so.nafs_w; i++)
		free(m->afs_names ? m->afs_names[i] : NULL);
	free(m->afs_names);
	free(m->afs_wv);
	res_policy_release(&m->res_policy);
	for (pos = 0; (e = hmap_next(&m->wls, &pos, NULL));) {
		struct wl_entry *w = e;

		w->lqe = NULL; /* entries are all going */
		manager_wl_drop(m, w);
	}
	for (pos = 0; (e = hmap_next(&m->lqs, &pos, NULL));)
		manager_queues_lq_entry_free(e);
	for (pos = 0; (e = hmap_next(&m->cqs, &pos, NULL));)
		manager_queues_cq_entry_free(m, e);
	for (pos = 0; (e = hmap_next(&m->rfs, &pos, NULL));)
		manager_queues_rf_entry_free(m, e);
	for (pos = 0; (e = hmap_next(&m->cohorts, &pos, NULL));)
		manager_queues_cohort_entry_free(e);
	for (pos = 0; (e = hmap_next(&m->nss, &pos, NULL));)
		manager_queues_ns_entry_free(e);
	for (pos = 0; (e = hmap_next(&m->wpcs, &pos, NULL));)
		manager_queues_wpc_entry_free(e);
	manager_queues_names_free(m);
	manager_dra_free(m);
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
	return m->nsynced == INF_N;
}

int64_t manager_api_failing_ms(const struct manager *m)
{
	int64_t worst = 0, now = loop_now_ms(m->l);

	for (int i = 0; i < INF_N; i++) {
		int64_t since = m->inf[i].w
					? kube_watch_failing_since(m->inf[i].w)
					: 0;

		if (since && now - since > worst)
			worst = now - since;
	}
	return worst;
}

bool manager_active(const struct manager *m)
{
	return manager_leads(m) && !m->draining;
}

void manager_lead(struct manager *m)
{
	if (m->leading)
		return;
	m->leading = true;
	log_msg(LOG_INFO, "manager", NULL, NULL,
		"leading: %s", m->nsynced == INF_N
				       ? "the warm caches go to the scheduler"
				       : "waiting for the informers to sync");
	if (m->fed)
		unfeed(m);
	if (m->nsynced == INF_N)
		feed(m);
}

void manager_drain(struct manager *m)
{
	m->draining = true;
	loop_timer_cancel(m->l, &m->backoff);
	loop_timer_cancel(m->l, &m->afs);
}

bool manager_idle(const struct manager *m)
{
	return !m->wl_inflight && !m->fin_inflight && dlist_empty(&m->admitq) &&
	       dlist_empty(&m->pendq) && !m->ndeferred &&
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
