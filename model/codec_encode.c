/*
 * codec_encode: the structs of objects.h -> Kubernetes JSON (see codec.h).
 *
 * Each encoder returns a new json_t the caller owns (STYLE P3a) and never
 * fails: jansson allocates through xmalloc, so the only failure left is
 * invalid UTF-8 in a string, which cannot come from our decoders. Field
 * presence follows the Go JSON tags of the version asked for (v1beta1's
 * status counters and usage lists are not omitempty; v1beta2's lists are),
 * and quantities are printed the way Kueue prints them (resource_format).
 *
 * Status encoders produce what a JSON merge patch of /status carries, so
 * codec_encode_workload_status writes "admission": null and "requeueState":
 * null when they are unset: without the nulls a patch could never clear
 * them. The full-object encoder omits them instead, and the decoder reads
 * null as absent, so round trips are unaffected either way.
 */
#include "model/codec.h"

#include <string.h>

#include "model/codec_int.h"
#include "model/quantity.h"
#include "model/timestamp.h"

/* Sets key to a string unless s is NULL. */
static void set_str(json_t *o, const char *key, const char *s)
{
	if (s)
		json_object_set_new(o, key, json_string(s));
}

static void set_int(json_t *o, const char *key, int64_t v)
{
	json_object_set_new(o, key, json_integer((json_int_t)v));
}

static void set_time(json_t *o, const char *key, int64_t ms)
{
	char buf[TIMESTAMP_BUF];

	set_str(o, key, timestamp_format(ms, buf, sizeof(buf)));
}

static void set_qty(json_t *o, const char *key, const char *resource,
		    int64_t milli)
{
	char buf[QUANTITY_BUF];

	set_str(o, key, resource_format(resource, milli, buf, sizeof(buf)));
}

/* Sets key to the parsed compact JSON text (opaque sub-objects). */
static void set_opaque(json_t *o, const char *key, const char *text)
{
	json_t *j = codec_load(text);

	if (j)
		json_object_set_new(o, key, j);
}

static json_t *enc_strmap(const struct smap *m)
{
	json_t *o = json_object();

	for (size_t i = 0; i < m->n; i++)
		set_str(o, m->v[i].key, m->v[i].value);
	return o;
}

/* Sets key to the map unless it is empty (omitempty maps). */
static void set_strmap(json_t *o, const char *key, const struct smap *m)
{
	if (m->n)
		json_object_set_new(o, key, enc_strmap(m));
}

static json_t *enc_strv(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, json_string(v[i] ? v[i] : ""));
	return a;
}

static json_t *enc_reslist(const struct reslist *r)
{
	json_t *o = json_object();

	for (size_t i = 0; i < r->n; i++)
		set_qty(o, r->v[i].name, r->v[i].name, r->v[i].milli);
	return o;
}

static void set_reslist(json_t *o, const char *key, const struct reslist *r)
{
	if (r->n)
		json_object_set_new(o, key, enc_reslist(r));
}

json_t *codec_encode_object_meta(const struct object_meta *m)
{
	json_t *o = json_object();

	set_str(o, "name", m->name);
	set_str(o, "generateName", m->generate_name);
	set_str(o, "namespace", m->namespace);
	set_str(o, "uid", m->uid);
	set_str(o, "resourceVersion", m->resource_version);
	if (m->generation)
		set_int(o, "generation", m->generation);
	if (m->creation_ms)
		set_time(o, "creationTimestamp", m->creation_ms);
	if (m->deletion_ms)
		set_time(o, "deletionTimestamp", m->deletion_ms);
	set_strmap(o, "labels", &m->labels);
	set_strmap(o, "annotations", &m->annotations);
	if (m->nowners) {
		json_t *a = json_array();

		for (size_t i = 0; i < m->nowners; i++) {
			const struct owner_ref *r = &m->owners[i];
			json_t *e = json_object();

			set_str(e, "apiVersion", r->api_version);
			set_str(e, "kind", r->kind);
			set_str(e, "name", r->name);
			set_str(e, "uid", r->uid);
			if (r->controller)
				json_object_set_new(e, "controller",
						    json_true());
			if (r->block_owner_deletion)
				json_object_set_new(e, "blockOwnerDeletion",
						    json_true());
			json_array_append_new(a, e);
		}
		json_object_set_new(o, "ownerReferences", a);
	}
	if (m->nfinalizers)
		json_object_set_new(o, "finalizers",
				    enc_strv(m->finalizers, m->nfinalizers));
	return o;
}

/* []metav1.Condition: reason and message are required (may be ""). */
static json_t *enc_conditions(const struct conditions *c)
{
	json_t *a = json_array();

	for (size_t i = 0; i < c->n; i++) {
		const struct condition *x = &c->v[i];
		json_t *e = json_object();

		set_str(e, "type", x->type ? x->type : "");
		set_str(e, "status", cond_status_name(x->status));
		if (x->observed_generation)
			set_int(e, "observedGeneration",
				x->observed_generation);
		set_time(e, "lastTransitionTime", x->last_transition_ms);
		set_str(e, "reason", x->reason ? x->reason : "");
		set_str(e, "message", x->message ? x->message : "");
		json_array_append_new(a, e);
	}
	return a;
}

static void set_conditions(json_t *o, const struct conditions *c)
{
	if (c->n)
		json_object_set_new(o, "conditions", enc_conditions(c));
}

/* []FlavorUsage (with borrowed) or []LocalQueueFlavorUsage. */
static json_t *enc_usages(const struct flavor_usage *u, size_t n,
			  bool borrowed)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *e = json_object(), *ra = json_array();

		set_str(e, "name", u[i].name ? u[i].name : "");
		for (size_t j = 0; j < u[i].nres; j++) {
			const struct resource_usage *r = &u[i].res[j];
			const char *rn = r->name ? r->name : "";
			json_t *re = json_object();

			set_str(re, "name", rn);
			set_qty(re, "total", rn, r->total);
			if (borrowed)
				set_qty(re, "borrowed", rn, r->borrowed);
			json_array_append_new(ra, re);
		}
		json_object_set_new(e, "resources", ra);
		json_array_append_new(a, e);
	}
	return a;
}

/* always: v1beta1's non-omitempty lists ([] when empty). */
static void set_usages(json_t *o, const char *key, const struct flavor_usage *u,
		       size_t n, bool borrowed, bool always)
{
	if (n || always)
		json_object_set_new(o, key, enc_usages(u, n, borrowed));
}

/* ------------------------------------------------------------------ */
/* Pod templates */

static json_t *enc_tolerations(const struct toleration *t, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *e = json_object();

		if (t[i].key && *t[i].key)
			set_str(e, "key", t[i].key);
		set_str(e, "operator",
			t[i].op == TOL_EXISTS ? "Exists" : "Equal");
		if (t[i].value && *t[i].value)
			set_str(e, "value", t[i].value);
		if (t[i].effect != EFFECT_ALL)
			set_str(e, "effect", taint_effect_name(t[i].effect));
		if (t[i].has_seconds)
			set_int(e, "tolerationSeconds", t[i].seconds);
		json_array_append_new(a, e);
	}
	return a;
}

static json_t *enc_exprs(const struct label_selector *s)
{
	json_t *a = json_array();

	for (size_t i = 0; i < s->n; i++) {
		const struct sel_req *r = &s->reqs[i];
		json_t *e = json_object();

		set_str(e, "key", r->key);
		set_str(e, "operator", sel_op_name(r->op));
		if (r->nvalues)
			json_object_set_new(e, "values",
					    enc_strv(r->values, r->nvalues));
		json_array_append_new(a, e);
	}
	return a;
}

/* Only the required node affinity is modelled; matchFields survive
 * through raw, never through this path (only their count is kept). */
static json_t *enc_affinity(const struct node_affinity *na)
{
	json_t *terms = json_array(), *req = json_object();
	json_t *nodeaff = json_object(), *aff = json_object();

	for (size_t i = 0; i < na->n; i++) {
		json_t *t = json_object();

		if (na->terms[i].exprs.n)
			json_object_set_new(t, "matchExpressions",
					    enc_exprs(&na->terms[i].exprs));
		json_array_append_new(terms, t);
	}
	json_object_set_new(req, "nodeSelectorTerms", terms);
	json_object_set_new(nodeaff,
			    "requiredDuringSchedulingIgnoredDuringExecution",
			    req);
	json_object_set_new(aff, "nodeAffinity", nodeaff);
	return aff;
}

static json_t *enc_containers(const struct container_res *c, size_t n,
			      bool init)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *e = json_object(), *res = json_object();

		set_str(e, "name", c[i].name);
		set_reslist(res, "requests", &c[i].requests);
		set_reslist(res, "limits", &c[i].limits);
		json_object_set_new(e, "resources", res);
		if (init && c[i].sidecar)
			set_str(e, "restartPolicy", "Always");
		json_array_append_new(a, e);
	}
	return a;
}

static json_t *build_pod_template(const struct pod_template *t)
{
	json_t *o = json_object(), *md = json_object(), *spec = json_object();

	set_strmap(md, "labels", &t->labels);
	set_strmap(md, "annotations", &t->annotations);
	json_object_set_new(o, "metadata", md);
	json_object_set_new(spec, "containers",
			    enc_containers(t->containers, t->ncontainers,
					   false));
	if (t->ninit_containers)
		json_object_set_new(spec, "initContainers",
				    enc_containers(t->init_containers,
						   t->ninit_containers, true));
	set_reslist(spec, "overhead", &t->overhead);
	if (t->has_pod_resources) {
		json_t *res = json_object();

		set_reslist(res, "requests", &t->pod_requests);
		set_reslist(res, "limits", &t->pod_limits);
		json_object_set_new(spec, "resources", res);
	}
	set_strmap(spec, "nodeSelector", &t->node_selector);
	if (t->affinity.present)
		json_object_set_new(spec, "affinity",
				    enc_affinity(&t->affinity));
	if (t->ntols)
		json_object_set_new(spec, "tolerations",
				    enc_tolerations(t->tols, t->ntols));
	set_str(spec, "priorityClassName", t->priority_class_name);
	set_str(spec, "runtimeClassName", t->runtime_class_name);
	json_object_set_new(o, "spec", spec);
	return o;
}

/* Replaces (or removes, when empty) metadata[key] with m. */
static void replace_map(json_t *md, const char *key, const struct smap *m)
{
	if (m->n)
		json_object_set_new(md, key, enc_strmap(m));
	else
		json_object_del(md, key);
}

json_t *codec_encode_pod_template(const struct pod_template *t)
{
	json_t *o = codec_load(t->raw), *md;

	if (!json_is_object(o)) {
		json_decref(o);
		return build_pod_template(t);
	}
	md = json_object_get(o, "metadata");
	if (!json_is_object(md)) {
		if (!t->labels.n && !t->annotations.n)
			return o;
		md = json_object();
		json_object_set_new(o, "metadata", md);
	}
	replace_map(md, "labels", &t->labels);
	replace_map(md, "annotations", &t->annotations);
	return o;
}

/* ------------------------------------------------------------------ */
/* Workload */

static const char *psrc_name(enum priority_source s)
{
	switch (s) {
	case PSRC_WPC: return "kueue.x-k8s.io/workloadpriorityclass";
	case PSRC_POD: return "scheduling.k8s.io/priorityclass";
	case PSRC_NONE: break;
	}
	return "";
}

static const char *check_state_name(enum check_state s)
{
	switch (s) {
	case CHECK_READY: return "Ready";
	case CHECK_RETRY: return "Retry";
	case CHECK_REJECTED: return "Rejected";
	case CHECK_PENDING: break;
	}
	return "Pending";
}

static json_t *enc_admission(const struct admission *a)
{
	json_t *o = json_object(), *psa = json_array();

	set_str(o, "clusterQueue", a->cluster_queue ? a->cluster_queue : "");
	for (size_t i = 0; i < a->npsa; i++) {
		const struct pod_set_assignment *p = &a->psa[i];
		json_t *e = json_object();

		set_str(e, "name", p->name ? p->name : DEFAULT_PODSET_NAME);
		set_strmap(e, "flavors", &p->flavors);
		set_reslist(e, "resourceUsage", &p->usage);
		if (p->has_count)
			set_int(e, "count", p->count);
		set_opaque(e, "topologyAssignment", p->topology_assignment);
		json_array_append_new(psa, e);
	}
	json_object_set_new(o, "podSetAssignments", psa);
	return o;
}

/* nulls: write "admission"/"requeueState": null when unset (merge patch
 * bodies; see the file comment). */
static json_t *enc_wl_status(const struct workload *w, enum api_version v,
			     bool nulls)
{
	json_t *o = json_object();

	set_conditions(o, &w->conds);
	if (w->has_admission)
		json_object_set_new(o, "admission",
				    enc_admission(&w->admission));
	else if (nulls)
		json_object_set_new(o, "admission", json_null());
	if (w->has_requeue_count || w->requeue_at_ms) {
		json_t *rq = json_object();

		if (w->has_requeue_count)
			set_int(rq, "count", w->requeue_count);
		if (w->requeue_at_ms)
			set_time(rq, "requeueAt", w->requeue_at_ms);
		json_object_set_new(o, "requeueState", rq);
	} else if (nulls) {
		json_object_set_new(o, "requeueState", json_null());
	}
	if (w->nreclaimable) {
		json_t *a = json_array();

		for (size_t i = 0; i < w->nreclaimable; i++) {
			json_t *e = json_object();

			set_str(e, "name", w->reclaimable[i].name);
			set_int(e, "count", w->reclaimable[i].count);
			json_array_append_new(a, e);
		}
		json_object_set_new(o, "reclaimablePods", a);
	}
	if (w->nevictions) {
		json_t *a = json_array(), *ss = json_object();

		for (size_t i = 0; i < w->nevictions; i++) {
			json_t *e = json_object();

			set_str(e, "reason", w->evictions[i].reason);
			set_str(e, "underlyingCause",
				w->evictions[i].cause ? w->evictions[i].cause
						      : "");
			set_int(e, "count", w->evictions[i].count);
			json_array_append_new(a, e);
		}
		json_object_set_new(ss, "evictions", a);
		json_object_set_new(o, "schedulingStats", ss);
	}
	if (w->nchecks) {
		json_t *a = json_array();

		for (size_t i = 0; i < w->nchecks; i++) {
			const struct admission_check_state *s = &w->checks[i];
			json_t *e = json_object();

			set_str(e, "name", s->name);
			set_str(e, "state", check_state_name(s->state));
			set_time(e, "lastTransitionTime",
				 s->last_transition_ms);
			set_str(e, "message", s->message ? s->message : "");
			set_opaque(e, "podSetUpdates", s->pod_set_updates);
			json_array_append_new(a, e);
		}
		json_object_set_new(o, "admissionChecks", a);
	}
	if (w->has_accumulated)
		set_int(o, v == API_V1BETA2 ?
				   "accumulatedPastExecutionTimeSeconds" :
				   "accumulatedPastExexcutionTimeSeconds",
			w->accumulated_seconds);
	return o;
}

json_t *codec_encode_workload_status(const struct workload *w,
				     enum api_version v)
{
	return enc_wl_status(w, v, true);
}

/* spec.priorityClassName+Source (v1beta1) or spec.priorityClassRef. A
 * class name without a source has no v1beta2 spelling and is dropped. */
static void enc_priority_class(json_t *spec, const struct workload *w,
			       enum api_version v)
{
	if (v != API_V1BETA2) {
		set_str(spec, "priorityClassName", w->priority_class_name);
		if (w->priority_source != PSRC_NONE)
			set_str(spec, "priorityClassSource",
				psrc_name(w->priority_source));
		return;
	}
	if (w->priority_source != PSRC_NONE && w->priority_class_name) {
		bool wpc = w->priority_source == PSRC_WPC;
		json_t *ref = json_object();

		set_str(ref, "group", wpc ? KUEUE_GROUP : "scheduling.k8s.io");
		set_str(ref, "kind", wpc ? "WorkloadPriorityClass" :
					   "PriorityClass");
		set_str(ref, "name", w->priority_class_name);
		json_object_set_new(spec, "priorityClassRef", ref);
	}
}

json_t *codec_encode_workload(const struct workload *w, enum api_version v)
{
	json_t *o = json_object(), *spec = json_object(), *ps = json_array();

	if (v == API_UNKNOWN)
		v = API_V1BETA1;
	set_str(o, "apiVersion", api_version_name(v));
	set_str(o, "kind", "Workload");
	json_object_set_new(o, "metadata", codec_encode_object_meta(&w->meta));
	for (size_t i = 0; i < w->npod_sets; i++) {
		const struct pod_set *p = &w->pod_sets[i];
		json_t *e = json_object();

		set_str(e, "name", p->name ? p->name : DEFAULT_PODSET_NAME);
		json_object_set_new(e, "template",
				    codec_encode_pod_template(&p->tmpl));
		set_int(e, "count", p->count);
		if (p->has_min_count)
			set_int(e, "minCount", p->min_count);
		set_opaque(e, "topologyRequest", p->topology_request);
		json_array_append_new(ps, e);
	}
	json_object_set_new(spec, "podSets", ps);
	set_str(spec, "queueName", w->queue_name);
	enc_priority_class(spec, w, v);
	if (w->has_priority)
		set_int(spec, "priority", w->priority);
	json_object_set_new(spec, "active", json_boolean(w->active));
	if (w->has_max_exec)
		set_int(spec, "maximumExecutionTimeSeconds",
			w->max_exec_seconds);
	json_object_set_new(o, "spec", spec);
	json_object_set_new(o, "status", enc_wl_status(w, v, false));
	return o;
}

/* ------------------------------------------------------------------ */
/* Queue statuses */

json_t *codec_encode_cluster_queue_status(const struct cluster_queue *cq,
					  enum api_version v)
{
	json_t *o = json_object();
	bool v1 = v != API_V1BETA2;

	set_conditions(o, &cq->conds);
	set_usages(o, "flavorsReservation", cq->reservation, cq->nreservation,
		   true, v1);
	set_usages(o, "flavorsUsage", cq->usage, cq->nusage, true, v1);
	/* Not omitempty in either version (a merge patch must be able to
	 * bring a counter back to 0). */
	set_int(o, "pendingWorkloads", cq->pending);
	set_int(o, "reservingWorkloads", cq->reserving);
	set_int(o, "admittedWorkloads", cq->admitted);
	if (cq->has_fs_status)
		json_object_set_new(o, "fairSharing",
				    json_pack("{s:I}", "weightedShare",
					      (json_int_t)cq->fs_weighted_share));
	return o;
}

json_t *codec_encode_cohort_status(const struct cohort *co)
{
	json_t *o = json_object();

	if (co->has_fs_status)
		json_object_set_new(o, "fairSharing",
				    json_pack("{s:I}", "weightedShare",
					      (json_int_t)co->fs_weighted_share));
	return o;
}

json_t *codec_encode_local_queue_status(const struct local_queue *lq,
					enum api_version v)
{
	json_t *o = json_object();
	bool v1 = v != API_V1BETA2;

	set_conditions(o, &lq->conds);
	set_int(o, "pendingWorkloads", lq->pending);
	set_int(o, "reservingWorkloads", lq->reserving);
	set_int(o, "admittedWorkloads", lq->admitted);
	set_usages(o, "flavorsReservation", lq->reservation, lq->nreservation,
		   false, v1);
	set_usages(o, v1 ? "flavorUsage" : "flavorsUsage", lq->usage,
		   lq->nusage, false, v1);
	if (lq->has_afs_status) {
		json_t *a = json_object();

		json_object_set_new(a, "consumedResources",
				    enc_reslist(&lq->afs_consumed));
		set_time(a, "lastUpdate", lq->afs_last_ms);
		/* weightedShare is required; Kueue leaves it 0 on
		 * LocalQueues */
		json_object_set_new(o, "fairSharing",
				    json_pack("{s:i, s:o}", "weightedShare", 0,
					      "admissionFairSharingStatus",
					      a));
	}
	return o;
}
