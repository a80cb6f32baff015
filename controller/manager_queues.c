/*
 * manager_queues: the manager's caches of everything but workloads
 * (manager_int.h): ResourceFlavors, Cohorts, ClusterQueues, Namespaces,
 * LocalQueues and WorkloadPriorityClasses, each fed to sched; the
 * LocalQueue -> ClusterQueue links and the re-resolution of the linked
 * workloads; the resource-in-use finalizers of ClusterQueues and
 * ResourceFlavors; and the informer table, beside six of its seven rows.
 *
 * A ClusterQueue's finalizer patch and its status write never overlap;
 * the one held back goes when the other ends. A queue change re-resolves
 * only the workloads linked to it, never all of them.
 *
 * JSON: as manager.c (informer objects, finalizer patch bodies).
 */
#include "controller/manager_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "controller/kube.h"
#include "controller/kueue_metrics.h"
#include "controller/log.h"
#include "controller/status.h"
#include "flavors/sched.h"
#include "model/codec.h"
#include "model/validate.h"

/* ------------------------------------------------------------------ */
/* Informers (STYLE P11: one row per watched kind) */

static apply_fn apply_rf, apply_cohort, apply_cq, apply_ns, apply_lq,
	apply_wpc, apply_topo, apply_ac;
static remove_fn remove_rf, remove_cohort, remove_cq, remove_ns, remove_lq,
	remove_wpc, remove_topo, remove_ac;
static sweep_fn sweep_rf, sweep_cohort, sweep_cq, sweep_ns, sweep_lq,
	sweep_wpc, sweep_topo, sweep_ac;

const struct inf_def manager_queues_inf_defs[INF_N] = {
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
	[INF_WL] = { KUEUE_GROUP, KUEUE_VERSION, "workloads", true,
		     manager_wl_apply, manager_wl_remove, manager_wl_sweep },
	[INF_TOPO] = { KUEUE_GROUP, KUEUE_VERSION, "topologies", false,
		       apply_topo, remove_topo, sweep_topo },
	[INF_AC] = { KUEUE_GROUP, KUEUE_VERSION, "admissionchecks", false,
		     apply_ac, remove_ac, sweep_ac },
};

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
	    !text_same(e->fin_rv, e->cq->meta.resource_version))
		manager_queues_cq_finalize(e->m, e);
}

void manager_queues_cq_finalize(struct manager *m, struct cq_entry *e)
{
	struct sched_cq_status st;
	int action;

	if (!manager_leads(m) || !e->cq || e->fin_call ||
	    !e->cq->meta.name ||
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
	    !text_same(e->fin_rv, e->rf->meta.resource_version))
		manager_queues_rf_finalize(e->m, e);
}

void manager_queues_rf_finalize(struct manager *m, struct rf_entry *e)
{
	int action;

	if (!manager_leads(m) || !e->rf || e->fin_call ||
	    !e->rf->meta.name)
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

void manager_queues_rf_entry_free(struct manager *m, struct rf_entry *e)
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
	manager_queues_rf_entry_free(m, e);
}

static void apply_rf(struct manager *m, const json_t *obj, const char *key)
{
	struct rf_entry *e = rf_get(m, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct resource_flavor *nw, *old = e->rf;

	e->seen = m->gen[INF_RF];
	if (old && text_same(jx_meta_str(obj, "resourceVersion"),
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
	manager_queues_rf_finalize(m, e);
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

void manager_queues_cohort_entry_free(struct cohort_entry *e)
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
		if (text_same(jx_meta_str(obj, "resourceVersion"),
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
	manager_queues_cohort_entry_free(e);
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
/* A queue's workloads */

static void lq_resolve_all(struct manager *m, struct lq_entry *lqe)
{
	struct dlist *pos;

	DLIST_FOREACH(pos, &lqe->wls)
		manager_wl_resolve(m, DLIST_ENTRY(pos, struct wl_entry,
						  lq_link), false);
}

void manager_queues_cq_resolve_all(struct manager *m, struct cq_entry *cqe)
{
	struct dlist *pos;

	DLIST_FOREACH(pos, &cqe->lqs) {
		struct lq_entry *l = DLIST_ENTRY(pos, struct lq_entry,
						 cq_link);

		manager_lq_mark(m, l);
		lq_resolve_all(m, l);
	}
}

/* ------------------------------------------------------------------ */
/* ClusterQueues */

static struct cq_entry *cq_get(struct manager *m, const char *name)
{
	struct cq_entry *e = hmap_get(&m->cqs, name);

	if (!e) {
		e = xcalloc(1, sizeof(*e));
		dlist_init(&e->lqs);
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

void manager_queues_cq_entry_free(struct manager *m, struct cq_entry *e)
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
	if (!e || e->cq || !dlist_empty(&e->lqs))
		return;
	hmap_del(&m->cqs, e->name);
	manager_queues_cq_entry_free(m, e);
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
			manager_queues_rf_finalize(m, rf);
			rf_gc(m, rf);
		}
	}
	free_strv(old, nold);
}

/* Whether cur and nw are the same object with the same spec and the
 * same metadata the manager reads (generation moves with every spec
 * change: k8s-api.md, CRDs with a status subresource). */
static bool meta_same(const struct object_meta *a, const struct object_meta *b)
{
	if (!a->generation || a->generation != b->generation ||
	    !text_same(a->uid, b->uid) || a->deletion_ms != b->deletion_ms ||
	    a->nfinalizers != b->nfinalizers)
		return false;
	for (size_t i = 0; i < a->nfinalizers; i++)
		if (!text_same(a->finalizers[i], b->finalizers[i]))
			return false;
	return true;
}

static bool cq_same_spec(const struct cluster_queue *cur,
			 const struct cluster_queue *nw)
{
	return meta_same(&cur->meta, &nw->meta) &&
	       smap_equal(&cur->meta.labels, &nw->meta.labels);
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
	if (old && text_same(jx_meta_str(obj, "resourceVersion"),
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
		manager_queues_cq_finalize(m, e);
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
		manager_cq_metrics(m, e);
	if (old) {
		cluster_queue_release(old);
		free(old);
	} else if (m->fed) {
		struct sched_cq_status st;

		sched_cq_status(m->s, e->name, &st);
		e->active = st.active;
		manager_queues_cq_resolve_all(m, e);
	}
	status_writer_mark(m->cqw, e->name);
	manager_queues_cq_finalize(m, e);
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
	manager_queues_cq_resolve_all(m, e);
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

void manager_queues_ns_entry_free(struct ns_entry *e)
{
	smap_release(&e->labels);
	free(e->rv);
	free(e->name);
	free(e);
}

static void apply_ns(struct manager *m, const json_t *obj, const char *key)
{
	struct ns_entry *e = hmap_get(&m->nss, key);
	const char *rv = jx_meta_str(obj, "resourceVersion"), *k;
	const json_t *labels = json_object_get(json_object_get(obj,
							       "metadata"),
					       "labels");
	json_t *v;

	if (e) {
		e->seen = m->gen[INF_NS];
		if (text_same(rv, e->rv))
			return;
	} else {
		e = xcalloc(1, sizeof(*e));
		e->name = xstrdup(key);
		e->seen = m->gen[INF_NS];
		hmap_put(&m->nss, e->name, e);
	}
	set_str(&e->rv, rv);
	m->nsview_gen++;
	smap_release(&e->labels);
	json_object_foreach((json_t *)labels, k, v)
		if (json_is_string(v))
			smap_set(&e->labels, k, json_string_value(v));
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
	manager_queues_ns_entry_free(e);
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

struct lq_entry *manager_queues_lq_get(struct manager *m, const char *key)
{
	struct lq_entry *e = hmap_get(&m->lqs, key);

	if (!e) {
		e = xcalloc(1, sizeof(*e));
		dlist_init(&e->cq_link);
		dlist_init(&e->wls);
		e->key = xstrdup(key);
		hmap_put(&m->lqs, e->key, e);
	}
	return e;
}

void manager_queues_lq_entry_free(struct lq_entry *e)
{
	if (e->lq)
		local_queue_release(e->lq);
	free(e->lq);
	free(e->key);
	free(e);
}

void manager_queues_lq_gc(struct manager *m, struct lq_entry *e)
{
	if (!e || e->lq || !dlist_empty(&e->wls))
		return;
	hmap_del(&m->lqs, e->key);
	manager_queues_lq_entry_free(e);
}

/* Unlinks e from its ClusterQueue entry; returns that entry. */
static struct cq_entry *lq_unlink_cq(struct lq_entry *e)
{
	struct cq_entry *c = e->cqe;

	if (!c)
		return NULL;
	dlist_remove(&e->cq_link);
	e->cqe = NULL;
	return c;
}

static void lq_link_cq(struct lq_entry *e, struct cq_entry *c)
{
	e->cqe = c;
	dlist_insert_after(&c->lqs, &e->cq_link);
}

static void apply_lq(struct manager *m, const json_t *obj, const char *key)
{
	struct lq_entry *e = manager_queues_lq_get(m, key);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct local_queue *nw, *old = e->lq;
	struct cq_entry *old_cqe = NULL;
	bool relevant, stop_moved;

	e->seen = m->gen[INF_LQ];
	if (old && text_same(jx_meta_str(obj, "resourceVersion"),
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
		manager_queues_lq_gc(m, e);
		return;
	}
	stop_moved = !old || old->stop != nw->stop;
	relevant = stop_moved ||
		   !text_same(old->cluster_queue, nw->cluster_queue);
	if (!old || !text_same(old->cluster_queue, nw->cluster_queue)) {
		old_cqe = lq_unlink_cq(e);
		lq_link_cq(e, cq_get(m, nw->cluster_queue));
	}
	e->lq = nw;
	m->nsview_gen++;
	if (old) {
		local_queue_release(old);
		free(old);
	}
	manager_lq_mark(m, e);
	if (m->fed && stop_moved) {
		sched_lq_set(m->s, e->key, nw->stop);
		m->changed = true;
	}
	manager_lq_fs(m, e->key, nw);
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
	if (m->fed && e->lq->stop != STOP_NONE) {
		sched_lq_set(m->s, e->key, STOP_NONE);
		m->changed = true;
	}
	manager_lq_fs(m, e->key, NULL);
	local_queue_release(e->lq);
	FREE_AND_NULL(e->lq);
	m->nsview_gen++;
	lq_resolve_all(m, e);
	cq_gc(m, c);
	manager_queues_lq_gc(m, e);
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

void manager_queues_wpc_entry_free(struct wpc_entry *e)
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
		if (text_same(jx_meta_str(obj, "resourceVersion"),
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
		manager_queues_wpc_entry_free(e);
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
			manager_queues_wpc_entry_free(e);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Topologies and AdmissionChecks: cueue needs only which exist */

static struct hmap *names_of(struct manager *m, enum inf_kind k)
{
	return k == INF_TOPO ? &m->topos : &m->acs;
}

static void names_tell(struct manager *m, enum inf_kind k, const char *name,
		       bool exists)
{
	if (!m->fed)
		return;
	if (k == INF_TOPO)
		sched_topology_set(m->s, name, exists);
	else
		sched_admission_check_set(m->s, name, exists);
	m->changed = true;
}

static void names_apply(struct manager *m, enum inf_kind k, const char *key)
{
	struct hmap *h = names_of(m, k);
	struct name_entry *e = hmap_get(h, key);

	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->name = xstrdup(key);
		hmap_put(h, e->name, e);
		names_tell(m, k, key, true);
	}
	e->seen = m->gen[k];
}

static void names_drop(struct manager *m, enum inf_kind k,
		       struct name_entry *e)
{
	hmap_del(names_of(m, k), e->name);
	names_tell(m, k, e->name, false);
	free(e->name);
	free(e);
}

static void names_remove(struct manager *m, enum inf_kind k, const char *key)
{
	struct name_entry *e = hmap_get(names_of(m, k), key);

	if (e)
		names_drop(m, k, e);
}

static void names_sweep(struct manager *m, enum inf_kind k, uint64_t gen)
{
	struct name_entry *e;
	size_t pos = 0;

	while ((e = hmap_next(names_of(m, k), &pos, NULL)))
		if (e->seen != gen)
			names_drop(m, k, e);
}

static void apply_topo(struct manager *m, const json_t *obj, const char *key)
{
	(void)obj;
	names_apply(m, INF_TOPO, key);
}

static void remove_topo(struct manager *m, const char *key)
{
	names_remove(m, INF_TOPO, key);
}

static void sweep_topo(struct manager *m, uint64_t gen)
{
	names_sweep(m, INF_TOPO, gen);
}

static void apply_ac(struct manager *m, const json_t *obj, const char *key)
{
	(void)obj;
	names_apply(m, INF_AC, key);
}

static void remove_ac(struct manager *m, const char *key)
{
	names_remove(m, INF_AC, key);
}

static void sweep_ac(struct manager *m, uint64_t gen)
{
	names_sweep(m, INF_AC, gen);
}

void manager_queues_feed_names(struct manager *m)
{
	struct name_entry *e;
	size_t pos;

	for (pos = 0; (e = hmap_next(&m->topos, &pos, NULL));)
		sched_topology_set(m->s, e->name, true);
	for (pos = 0; (e = hmap_next(&m->acs, &pos, NULL));)
		sched_admission_check_set(m->s, e->name, true);
}

void manager_queues_names_free(struct manager *m)
{
	struct hmap *hs[] = { &m->topos, &m->acs };
	struct name_entry *e;

	for (size_t i = 0; i < 2; i++) {
		for (size_t pos = 0; (e = hmap_next(hs[i], &pos, NULL));) {
			free(e->name);
			free(e);
		}
		hmap_release(hs[i]);
	}
}
