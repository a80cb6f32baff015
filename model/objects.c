/*
 * objects: lifecycle of the object structs (release, copy) and the small
 * derivations every layer needs (conditions, workload state). Field
 * meanings live in objects.h; this file only frees and copies them, so a
 * new field means one line here in each of _release and _copy.
 */
#include "model/objects.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/svec.h"

enum api_version api_version_parse(const char *s)
{
	if (!s)
		return API_UNKNOWN;
	if (!strcmp(s, KUEUE_GROUP "/v1beta1"))
		return API_V1BETA1;
	if (!strcmp(s, KUEUE_GROUP "/v1beta2"))
		return API_V1BETA2;
	return API_UNKNOWN;
}

const char *api_version_name(enum api_version v)
{
	switch (v) {
	case API_V1BETA1: return KUEUE_GROUP "/v1beta1";
	case API_V1BETA2: return KUEUE_GROUP "/v1beta2";
	case API_UNKNOWN: break;
	}
	return "";
}

/* ---- metadata ---------------------------------------------------- */

static void owner_ref_release(struct owner_ref *o)
{
	free(o->api_version);
	free(o->kind);
	free(o->name);
	free(o->uid);
}

void object_meta_release(struct object_meta *m)
{
	free(m->name);
	free(m->namespace);
	free(m->generate_name);
	free(m->uid);
	free(m->resource_version);
	smap_release(&m->labels);
	smap_release(&m->annotations);
	svec_free(m->finalizers, m->nfinalizers);
	for (size_t i = 0; i < m->nowners; i++)
		owner_ref_release(&m->owners[i]);
	free(m->owners);
	memset(m, 0, sizeof(*m));
}

void object_meta_copy(struct object_meta *dst, const struct object_meta *src)
{
	if (dst == src)
		return; /* releasing dst first would free src */
	object_meta_release(dst);
	dst->name = xstrdup_or_null(src->name);
	dst->namespace = xstrdup_or_null(src->namespace);
	dst->generate_name = xstrdup_or_null(src->generate_name);
	dst->uid = xstrdup_or_null(src->uid);
	dst->resource_version = xstrdup_or_null(src->resource_version);
	dst->generation = src->generation;
	dst->creation_ms = src->creation_ms;
	dst->deletion_ms = src->deletion_ms;
	smap_copy(&dst->labels, &src->labels);
	smap_copy(&dst->annotations, &src->annotations);
	dst->finalizers = svec_copy((const char *const *)src->finalizers,
				    src->nfinalizers);
	dst->nfinalizers = src->nfinalizers;
	if (src->nowners) {
		dst->owners = xcalloc(src->nowners, sizeof(*dst->owners));
		for (size_t i = 0; i < src->nowners; i++) {
			const struct owner_ref *s = &src->owners[i];
			struct owner_ref *d = &dst->owners[i];

			d->api_version = xstrdup_or_null(s->api_version);
			d->kind = xstrdup_or_null(s->kind);
			d->name = xstrdup_or_null(s->name);
			d->uid = xstrdup_or_null(s->uid);
			d->controller = s->controller;
			d->block_owner_deletion = s->block_owner_deletion;
		}
		dst->nowners = src->nowners;
	}
}

bool object_meta_has_finalizer(const struct object_meta *m, const char *f)
{
	for (size_t i = 0; i < m->nfinalizers; i++)
		if (!strcmp(m->finalizers[i], f))
			return true;
	return false;
}

void object_meta_add_finalizer(struct object_meta *m, const char *f)
{
	if (object_meta_has_finalizer(m, f))
		return;
	m->finalizers = xrealloc(m->finalizers,
				 (m->nfinalizers + 1) * sizeof(*m->finalizers));
	m->finalizers[m->nfinalizers++] = xstrdup(f);
}

/* ---- conditions -------------------------------------------------- */

static void condition_release(struct condition *c)
{
	free(c->type);
	free(c->reason);
	free(c->message);
}

void conditions_release(struct conditions *c)
{
	for (size_t i = 0; i < c->n; i++)
		condition_release(&c->v[i]);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

void conditions_copy(struct conditions *dst, const struct conditions *src)
{
	if (dst == src)
		return; /* releasing dst first would free src */
	conditions_release(dst);
	if (!src->n)
		return;
	dst->v = xcalloc(src->n, sizeof(*dst->v));
	dst->cap = src->n;
	for (size_t i = 0; i < src->n; i++) {
		dst->v[i] = src->v[i];
		dst->v[i].type = xstrdup_or_null(src->v[i].type);
		dst->v[i].reason = xstrdup_or_null(src->v[i].reason);
		dst->v[i].message = xstrdup_or_null(src->v[i].message);
	}
	dst->n = src->n;
}

const struct condition *conditions_find(const struct conditions *c,
					const char *type)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].type && !strcmp(c->v[i].type, type))
			return &c->v[i];
	return NULL;
}

bool conditions_is_true(const struct conditions *c, const char *type)
{
	const struct condition *x = conditions_find(c, type);

	return x && x->status == COND_TRUE;
}

static bool eq_null_empty(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

bool conditions_set(struct conditions *c, const char *type,
		    enum cond_status status, const char *reason,
		    const char *message, int64_t observed_generation,
		    int64_t now_ms)
{
	struct condition *x = (struct condition *)conditions_find(c, type);
	bool changed = false;

	if (!x) {
		XGROW(c->v, c->cap, c->n + 1);
		x = &c->v[c->n++];
		memset(x, 0, sizeof(*x));
		x->type = xstrdup(type);
		x->status = status;
		x->last_transition_ms = now_ms;
		changed = true;
	} else if (x->status != status) {
		x->status = status;
		x->last_transition_ms = now_ms;
		changed = true;
	}
	if (!x->reason || !eq_null_empty(x->reason, reason)) {
		free(x->reason);
		x->reason = xstrdup(reason ? reason : "");
		changed = true;
	}
	if (!x->message || !eq_null_empty(x->message, message)) {
		free(x->message);
		x->message = xstrdup(message ? message : "");
		changed = true;
	}
	if (x->observed_generation != observed_generation) {
		x->observed_generation = observed_generation;
		changed = true;
	}
	return changed;
}

bool conditions_remove(struct conditions *c, const char *type)
{
	for (size_t i = 0; i < c->n; i++) {
		if (!c->v[i].type || strcmp(c->v[i].type, type))
			continue;
		condition_release(&c->v[i]);
		memmove(c->v + i, c->v + i + 1, (c->n - i - 1) * sizeof(*c->v));
		c->n--;
		return true;
	}
	return false;
}

const char *cond_status_name(enum cond_status s)
{
	switch (s) {
	case COND_TRUE: return "True";
	case COND_FALSE: return "False";
	case COND_UNKNOWN: break;
	}
	return "Unknown";
}

/* ---- quota ------------------------------------------------------- */

static void flavor_quotas_release(struct flavor_quotas *f)
{
	free(f->name);
	for (size_t i = 0; i < f->nres; i++)
		free(f->res[i].name);
	free(f->res);
}

void resource_groups_release(struct resource_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		svec_free(g[i].covered, g[i].ncovered);
		for (size_t j = 0; j < g[i].nflavors; j++)
			flavor_quotas_release(&g[i].flavors[j]);
		free(g[i].flavors);
	}
	free(g);
}

void flavor_usages_release(struct flavor_usage *u, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(u[i].name);
		for (size_t j = 0; j < u[i].nres; j++)
			free(u[i].res[j].name);
		free(u[i].res);
	}
	free(u);
}

/* ---- kinds ------------------------------------------------------- */

void resource_flavor_release(struct resource_flavor *rf)
{
	object_meta_release(&rf->meta);
	smap_release(&rf->node_labels);
	for (size_t i = 0; i < rf->ntaints; i++)
		taint_release(&rf->taints[i]);
	free(rf->taints);
	for (size_t i = 0; i < rf->ntols; i++)
		toleration_release(&rf->tols[i]);
	free(rf->tols);
	free(rf->topology_name);
	memset(rf, 0, sizeof(*rf));
}

void cluster_queue_release(struct cluster_queue *cq)
{
	object_meta_release(&cq->meta);
	resource_groups_release(cq->groups, cq->ngroups);
	free(cq->cohort);
	label_selector_release(&cq->ns_selector);
	svec_free(cq->admission_checks, cq->nadmission_checks);
	for (size_t i = 0; i < cq->nac_rules; i++) {
		free(cq->ac_rules[i].name);
		svec_free(cq->ac_rules[i].on_flavors, cq->ac_rules[i].non_flavors);
	}
	free(cq->ac_rules);
	free(cq->last_acceptable_flavor);
	conditions_release(&cq->conds);
	flavor_usages_release(cq->reservation, cq->nreservation);
	flavor_usages_release(cq->usage, cq->nusage);
	memset(cq, 0, sizeof(*cq));
}

void cohort_release(struct cohort *c)
{
	object_meta_release(&c->meta);
	free(c->parent);
	resource_groups_release(c->groups, c->ngroups);
	memset(c, 0, sizeof(*c));
}

void local_queue_release(struct local_queue *lq)
{
	object_meta_release(&lq->meta);
	free(lq->cluster_queue);
	conditions_release(&lq->conds);
	flavor_usages_release(lq->reservation, lq->nreservation);
	flavor_usages_release(lq->usage, lq->nusage);
	reslist_release(&lq->afs_consumed);
	memset(lq, 0, sizeof(*lq));
}

void workload_priority_class_release(struct workload_priority_class *w)
{
	object_meta_release(&w->meta);
	free(w->description);
	memset(w, 0, sizeof(*w));
}

/* ---- pod templates ----------------------------------------------- */

static void containers_release(struct container_res *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(c[i].name);
		reslist_release(&c[i].requests);
		reslist_release(&c[i].limits);
	}
	free(c);
}

static struct container_res *containers_copy(const struct container_res *c,
					     size_t n)
{
	struct container_res *d;

	if (!n)
		return NULL;
	d = xcalloc(n, sizeof(*d));
	for (size_t i = 0; i < n; i++) {
		d[i].name = xstrdup_or_null(c[i].name);
		reslist_copy(&d[i].requests, &c[i].requests);
		reslist_copy(&d[i].limits, &c[i].limits);
		d[i].sidecar = c[i].sidecar;
	}
	return d;
}

void pod_template_release(struct pod_template *t)
{
	smap_release(&t->labels);
	smap_release(&t->annotations);
	containers_release(t->containers, t->ncontainers);
	containers_release(t->init_containers, t->ninit_containers);
	reslist_release(&t->overhead);
	reslist_release(&t->pod_requests);
	reslist_release(&t->pod_limits);
	smap_release(&t->node_selector);
	node_affinity_release(&t->affinity);
	for (size_t i = 0; i < t->ntols; i++)
		toleration_release(&t->tols[i]);
	free(t->tols);
	free(t->priority_class_name);
	free(t->runtime_class_name);
	for (size_t i = 0; i < t->nclaims; i++) {
		free(t->claims[i].name);
		free(t->claims[i].template_name);
		free(t->claims[i].claim_name);
	}
	free(t->claims);
	free(t->raw);
	memset(t, 0, sizeof(*t));
}

void pod_template_copy(struct pod_template *dst, const struct pod_template *src)
{
	if (dst == src)
		return; /* releasing dst first would free src */
	pod_template_release(dst);
	smap_copy(&dst->labels, &src->labels);
	smap_copy(&dst->annotations, &src->annotations);
	dst->containers = containers_copy(src->containers, src->ncontainers);
	dst->ncontainers = src->ncontainers;
	dst->init_containers = containers_copy(src->init_containers,
					       src->ninit_containers);
	dst->ninit_containers = src->ninit_containers;
	reslist_copy(&dst->overhead, &src->overhead);
	dst->has_pod_resources = src->has_pod_resources;
	reslist_copy(&dst->pod_requests, &src->pod_requests);
	reslist_copy(&dst->pod_limits, &src->pod_limits);
	smap_copy(&dst->node_selector, &src->node_selector);
	node_affinity_copy(&dst->affinity, &src->affinity);
	if (src->ntols) {
		dst->tols = xcalloc(src->ntols, sizeof(*dst->tols));
		for (size_t i = 0; i < src->ntols; i++)
			toleration_copy(&dst->tols[i], &src->tols[i]);
		dst->ntols = src->ntols;
	}
	dst->priority_class_name = xstrdup_or_null(src->priority_class_name);
	dst->runtime_class_name = xstrdup_or_null(src->runtime_class_name);
	if (src->nclaims) {
		dst->claims = xcalloc(src->nclaims, sizeof(*dst->claims));
		for (size_t i = 0; i < src->nclaims; i++) {
			const struct pod_claim *c = &src->claims[i];

			dst->claims[i].name = xstrdup_or_null(c->name);
			dst->claims[i].template_name =
				xstrdup_or_null(c->template_name);
			dst->claims[i].claim_name =
				xstrdup_or_null(c->claim_name);
		}
		dst->nclaims = src->nclaims;
	}
	dst->raw = xstrdup_or_null(src->raw);
}

/* ---- workloads --------------------------------------------------- */

static void psa_release(struct pod_set_assignment *p)
{
	free(p->name);
	smap_release(&p->flavors);
	reslist_release(&p->usage);
	free(p->topology_assignment);
}

void admission_release(struct admission *a)
{
	free(a->cluster_queue);
	for (size_t i = 0; i < a->npsa; i++)
		psa_release(&a->psa[i]);
	free(a->psa);
	memset(a, 0, sizeof(*a));
}

void admission_copy(struct admission *dst, const struct admission *src)
{
	if (dst == src)
		return; /* releasing dst first would free src */
	admission_release(dst);
	dst->cluster_queue = xstrdup_or_null(src->cluster_queue);
	if (!src->npsa)
		return;
	dst->psa = xcalloc(src->npsa, sizeof(*dst->psa));
	for (size_t i = 0; i < src->npsa; i++) {
		const struct pod_set_assignment *s = &src->psa[i];
		struct pod_set_assignment *d = &dst->psa[i];

		d->name = xstrdup_or_null(s->name);
		smap_copy(&d->flavors, &s->flavors);
		reslist_copy(&d->usage, &s->usage);
		d->has_count = s->has_count;
		d->count = s->count;
		d->topology_assignment = xstrdup_or_null(s->topology_assignment);
	}
	dst->npsa = src->npsa;
}

void workload_release(struct workload *w)
{
	object_meta_release(&w->meta);
	for (size_t i = 0; i < w->npod_sets; i++) {
		free(w->pod_sets[i].name);
		pod_template_release(&w->pod_sets[i].tmpl);
		free(w->pod_sets[i].topology_request);
		reslist_release(&w->pod_sets[i].dra);
	}
	free(w->pod_sets);
	free(w->queue_name);
	free(w->priority_class_name);
	conditions_release(&w->conds);
	admission_release(&w->admission);
	for (size_t i = 0; i < w->nreclaimable; i++)
		free(w->reclaimable[i].name);
	free(w->reclaimable);
	for (size_t i = 0; i < w->nevictions; i++) {
		free(w->evictions[i].reason);
		free(w->evictions[i].cause);
	}
	free(w->evictions);
	for (size_t i = 0; i < w->nchecks; i++) {
		free(w->checks[i].name);
		free(w->checks[i].message);
		free(w->checks[i].pod_set_updates);
	}
	free(w->checks);
	memset(w, 0, sizeof(*w));
}

void workload_copy(struct workload *dst, const struct workload *src)
{
	if (dst == src)
		return; /* releasing dst first would free src */
	workload_release(dst);
	object_meta_copy(&dst->meta, &src->meta);
	dst->version = src->version;
	if (src->npod_sets) {
		dst->pod_sets = xcalloc(src->npod_sets, sizeof(*dst->pod_sets));
		for (size_t i = 0; i < src->npod_sets; i++) {
			const struct pod_set *s = &src->pod_sets[i];
			struct pod_set *d = &dst->pod_sets[i];

			d->name = xstrdup_or_null(s->name);
			d->count = s->count;
			d->has_min_count = s->has_min_count;
			d->min_count = s->min_count;
			pod_template_copy(&d->tmpl, &s->tmpl);
			d->topology_request = xstrdup_or_null(s->topology_request);
			reslist_copy(&d->dra, &s->dra);
			d->tas_requested = s->tas_requested;
		}
		dst->npod_sets = src->npod_sets;
	}
	dst->queue_name = xstrdup_or_null(src->queue_name);
	dst->priority_class_name = xstrdup_or_null(src->priority_class_name);
	dst->priority_source = src->priority_source;
	dst->has_priority = src->has_priority;
	dst->priority = src->priority;
	dst->active = src->active;
	dst->has_max_exec = src->has_max_exec;
	dst->max_exec_seconds = src->max_exec_seconds;
	conditions_copy(&dst->conds, &src->conds);
	dst->has_admission = src->has_admission;
	admission_copy(&dst->admission, &src->admission);
	dst->has_requeue_count = src->has_requeue_count;
	dst->requeue_count = src->requeue_count;
	dst->requeue_at_ms = src->requeue_at_ms;
	if (src->nreclaimable) {
		dst->reclaimable = xcalloc(src->nreclaimable,
					   sizeof(*dst->reclaimable));
		for (size_t i = 0; i < src->nreclaimable; i++) {
			dst->reclaimable[i].name =
				xstrdup_or_null(src->reclaimable[i].name);
			dst->reclaimable[i].count = src->reclaimable[i].count;
		}
		dst->nreclaimable = src->nreclaimable;
	}
	if (src->nevictions) {
		dst->evictions = xcalloc(src->nevictions,
					 sizeof(*dst->evictions));
		for (size_t i = 0; i < src->nevictions; i++) {
			dst->evictions[i].reason =
				xstrdup_or_null(src->evictions[i].reason);
			dst->evictions[i].cause =
				xstrdup_or_null(src->evictions[i].cause);
			dst->evictions[i].count = src->evictions[i].count;
		}
		dst->nevictions = src->nevictions;
	}
	if (src->nchecks) {
		dst->checks = xcalloc(src->nchecks, sizeof(*dst->checks));
		for (size_t i = 0; i < src->nchecks; i++) {
			const struct admission_check_state *s = &src->checks[i];
			struct admission_check_state *d = &dst->checks[i];

			d->name = xstrdup_or_null(s->name);
			d->state = s->state;
			d->last_transition_ms = s->last_transition_ms;
			d->message = xstrdup_or_null(s->message);
			d->pod_set_updates = xstrdup_or_null(s->pod_set_updates);
		}
		dst->nchecks = src->nchecks;
	}
	dst->has_accumulated = src->has_accumulated;
	dst->accumulated_seconds = src->accumulated_seconds;
}

int32_t workload_priority(const struct workload *w)
{
	return w->has_priority ? w->priority : 0;
}

bool workload_is_finished(const struct workload *w)
{
	return conditions_is_true(&w->conds, "Finished");
}

bool workload_is_admitted(const struct workload *w)
{
	return conditions_is_true(&w->conds, "Admitted");
}

bool workload_has_quota_reservation(const struct workload *w)
{
	return conditions_is_true(&w->conds, "QuotaReserved");
}

bool workload_holds_quota(const struct workload *w)
{
	return workload_has_quota_reservation(w) && w->has_admission &&
	       !workload_is_finished(w);
}

char *object_key_buf(char *buf, size_t size, const char *ns,
		     const char *name)
{
	size_t a, b;
	char *key = buf;

	ns = ns ? ns : "";
	name = name ? name : "";
	a = strlen(ns);
	b = strlen(name);
	if (a + b + 2 > size)
		key = xmalloc(a + b + 2);
	memcpy(key, ns, a);
	key[a] = '/';
	memcpy(key + a + 1, name, b + 1);
	return key;
}

void job_release(struct job *j)
{
	object_meta_release(&j->meta);
	pod_template_release(&j->tmpl);
	conditions_release(&j->conds);
	memset(j, 0, sizeof(*j));
}
