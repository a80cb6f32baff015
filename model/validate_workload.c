/*
 * validate_workload: Kueue's admission rules for Workloads (kueue-api.md
 * §7), spec and status, create and update, as v0.14's CRD schema, CEL
 * rules and workload webhook enforce them; v1beta2 objects get the CEL
 * wording of HEAD (priorityClassRef, "... while workload quota reserved").
 *
 * The webhook also guards the status subresource, so the update rules here
 * cover what the scheduler and the controllers write: status.admission may
 * be set or cleared but not edited, reclaimable pods only grow while quota
 * is reserved, podSetUpdates of a Ready check are frozen.
 *
 * Root-level CEL rules are reported at Kubernetes' nil path ("<nil>").
 * Pure: no I/O, no clock.
 */
#include "model/validate.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"
#include "model/resources.h"
#include "model/validate_int.h"

/* Pod sets (and the lists that follow them): v0.14's v1beta1 allows 8,
 * v1beta2 (HEAD, cueue's storage version and CRD) allows 18. */
#define MAX_POD_SETS_V1BETA1 8
#define MAX_POD_SETS_V1BETA2 18

static size_t max_pod_sets(const struct workload *w)
{
	return w->version == API_V1BETA2 ? MAX_POD_SETS_V1BETA2
					 : MAX_POD_SETS_V1BETA1;
}
#define MAX_CHECKS 8             /* status.admissionChecks */
#define MAX_CHECK_MESSAGE 32768  /* admissionChecks[].message */
#define RESERVED_RESOURCE "pods" /* Kueue's own per-podset count */

/* ------------------------------------------------------------------ */
/* spec */

static void check_reserved_requests(const struct container_res *c, size_t n,
				    const char *kind, struct validate_path *p,
				    struct field_errors *fe)
{
	for (size_t i = 0; i < n; i++) {
		size_t m;

		if (!reslist_has(&c[i].requests, RESERVED_RESOURCE))
			continue;
		m = validate_path_push(p, ".template.spec.%s[%zu].resources.requests[%s]",
				       kind, i, RESERVED_RESOURCE);
		fe_invalid(fe, p->s, RESERVED_RESOURCE,
			   "the key is reserved for internal kueue use");
		validate_path_pop(p, m);
	}
}

static void check_pod_sets(const struct workload *w, struct field_errors *fe)
{
	const char **names = xcalloc(w->npod_sets + 1, sizeof(*names));
	bool *dup = xcalloc(w->npod_sets + 1, sizeof(*dup));
	struct validate_path p;
	size_t with_min = 0;

	validate_path_init(&p, "spec.podSets");
	if (!w->npod_sets)
		fe_required(fe, p.s, NULL);
	if (w->npod_sets > max_pod_sets(w))
		fe_too_many(fe, p.s, w->npod_sets, max_pod_sets(w));
	for (size_t i = 0; i < w->npod_sets; i++)
		names[i] = w->pod_sets[i].name;
	validate_mark_dups(names, w->npod_sets, dup);

	for (size_t i = 0; i < w->npod_sets; i++) {
		const struct pod_set *ps = &w->pod_sets[i];
		size_t m = validate_path_push(&p, "[%zu]", i), k;

		if (dup[i])
			validate_dup_map_key(fe, p.s, "name", ps->name);
		k = validate_path_push(&p, ".name");
		validate_ref_name(fe, p.s, ps->name, REF_LABEL);
		validate_path_pop(&p, k);
		if (ps->count < 0) {
			k = validate_path_push(&p, ".count");
			validate_minimum(fe, p.s, ps->count, 0);
			validate_path_pop(&p, k);
		}
		if (ps->has_min_count) {
			with_min++;
			if (ps->min_count < 1) {
				k = validate_path_push(&p, ".minCount");
				validate_minimum(fe, p.s, ps->min_count, 1);
				validate_path_pop(&p, k);
			}
			if (ps->min_count > ps->count)
				validate_cel(fe, p.s, "object",
					     "minCount should be positive and less or equal to count");
		}
		/* Kueue checks initContainers first. */
		check_reserved_requests(ps->tmpl.init_containers,
					ps->tmpl.ninit_containers,
					"initContainers", &p, fe);
		check_reserved_requests(ps->tmpl.containers,
					ps->tmpl.ncontainers, "containers",
					&p, fe);
		validate_path_pop(&p, m);
	}
	if (with_min > 1) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%zu", with_min);
		fe_add(fe, FE_INVALID, "spec.podSets", buf, false,
		       "at most one podSet can use minCount");
	}
	free(dup);
	free(names);
}

static void check_spec(const struct workload *w, struct field_errors *fe)
{
	bool v2 = w->version == API_V1BETA2;

	if (w->priority_class_name && !w->has_priority)
		validate_cel(fe, "spec", "object",
			     v2 ? "priority should not be nil when priorityClassRef is set"
				: "priority should not be nil when priorityClassName is set");
	check_pod_sets(w, fe);
	validate_ref_name(fe, "spec.queueName", w->queue_name, REF_SUBDOMAIN);
	if (v2 && w->priority_class_name && !*w->priority_class_name)
		fe_add(fe, FE_INVALID, "spec.priorityClassRef.name", "", true,
		       "spec.priorityClassRef.name in body should be at least 1 chars long");
	validate_ref_name(fe, v2 ? "spec.priorityClassRef.name"
				 : "spec.priorityClassName",
			  w->priority_class_name, REF_SUBDOMAIN);
	if (w->has_max_exec && w->max_exec_seconds < 1)
		validate_minimum(fe, "spec.maximumExecutionTimeSeconds",
				 w->max_exec_seconds, 1);
}

/* ------------------------------------------------------------------ */
/* status */

static const struct pod_set *find_pod_set(const struct workload *w,
					  const char *name)
{
	for (size_t i = 0; i < w->npod_sets; i++)
		if (validate_str_eq(w->pod_sets[i].name, name))
			return &w->pod_sets[i];
	return NULL;
}

/* Kueue's resources.ResourceValue: cpu in milli-units, the rest in units. */
static int64_t resource_value(const struct resource *r)
{
	return !strcmp(r->name, "cpu") ? r->milli : quantity_value(r->milli);
}

/* validateAdmission, run while the workload holds a quota reservation. */
static void check_assignments(const struct workload *w,
			      struct field_errors *fe)
{
	struct validate_path p;

	validate_path_init(&p, "status.admission.podSetAssignments");
	for (size_t i = 0; i < w->admission.npsa; i++) {
		const struct pod_set_assignment *a = &w->admission.psa[i];
		size_t m = validate_path_push(&p, "[%zu]", i), k;
		int32_t count = a->has_count ? a->count : 0;

		if (!find_pod_set(w, a->name)) {
			k = validate_path_push(&p, ".name");
			fe_add(fe, FE_NOT_FOUND, p.s, a->name ? a->name : "",
			       true, NULL);
			validate_path_pop(&p, k);
		}
		for (size_t r = 0; count > 0 && r < a->usage.n; r++) {
			const struct resource *res = &a->usage.v[r];
			char buf[QUANTITY_BUF];

			if (resource_value(res) % count == 0)
				continue;
			k = validate_path_push(&p, ".resourceUsage[%s]", res->name);
			fe_add(fe, FE_INVALID, p.s,
			       validate_quantity(res->name, res->milli, buf),
			       true, "is not a multiple of %d", (int)count);
			validate_path_pop(&p, k);
		}
		validate_path_pop(&p, m);
	}
}

static void check_admission_schema(const struct workload *w,
				   struct field_errors *fe)
{
	struct validate_path p;

	if (!w->has_admission)
		return;
	validate_path_init(&p, "status.admission");
	validate_ref_name(fe, "status.admission.clusterQueue",
			  w->admission.cluster_queue, REF_SUBDOMAIN);
	validate_path_push(&p, ".podSetAssignments");
	if (w->admission.npsa > max_pod_sets(w))
		fe_too_many(fe, p.s, w->admission.npsa, max_pod_sets(w));
	for (size_t i = 0; i < w->admission.npsa; i++) {
		const struct pod_set_assignment *a = &w->admission.psa[i];
		size_t m;

		if (!a->has_count || a->count >= 0)
			continue;
		m = validate_path_push(&p, "[%zu].count", i);
		validate_minimum(fe, p.s, a->count, 0);
		validate_path_pop(&p, m);
	}
}

static void check_reclaimable(const struct workload *w,
			      struct field_errors *fe)
{
	const char **names = xcalloc(w->nreclaimable + w->npod_sets + 1,
				     sizeof(*names));
	const char **known = names + w->nreclaimable;
	bool *dup = xcalloc(w->nreclaimable + 1, sizeof(*dup));
	struct validate_path p;

	validate_path_init(&p, "status.reclaimablePods");
	if (w->nreclaimable > max_pod_sets(w))
		fe_too_many(fe, p.s, w->nreclaimable, max_pod_sets(w));
	for (size_t i = 0; i < w->nreclaimable; i++)
		names[i] = w->reclaimable[i].name;
	for (size_t i = 0; i < w->npod_sets; i++)
		known[i] = w->pod_sets[i].name ? w->pod_sets[i].name : "";
	validate_mark_dups(names, w->nreclaimable, dup);

	/* Schema: list-map keys and minimum, by index. */
	for (size_t i = 0; i < w->nreclaimable; i++) {
		size_t m = validate_path_push(&p, "[%zu]", i);

		if (dup[i])
			validate_dup_map_key(fe, p.s, "name", names[i]);
		if (w->reclaimable[i].count < 0) {
			validate_path_push(&p, ".count");
			validate_minimum(fe, p.s, w->reclaimable[i].count, 0);
		}
		validate_path_pop(&p, m);
	}
	/* Webhook: by key. */
	for (size_t i = 0; i < w->nreclaimable; i++) {
		const struct reclaimable_pods *rp = &w->reclaimable[i];
		const struct pod_set *ps = find_pod_set(w, rp->name);
		size_t m = validate_path_push(&p, "[%s]", rp->name ? rp->name : "");

		if (!ps) {
			validate_path_push(&p, ".name");
			fe_unsupported(fe, p.s, rp->name ? rp->name : "", known);
		} else if (rp->count > ps->count) {
			char buf[32];

			validate_path_push(&p, ".count");
			snprintf(buf, sizeof(buf), "%d", (int)rp->count);
			fe_add(fe, FE_INVALID, p.s, buf, false,
			       "should be less or equal to %d", (int)ps->count);
		}
		validate_path_pop(&p, m);
	}
	free(dup);
	free(names);
}

static void check_checks(const struct workload *w, struct field_errors *fe)
{
	const char **names = xcalloc(w->nchecks + 1, sizeof(*names));
	bool *dup = xcalloc(w->nchecks + 1, sizeof(*dup));
	struct validate_path p;

	validate_path_init(&p, "status.admissionChecks");
	if (w->nchecks > MAX_CHECKS)
		fe_too_many(fe, p.s, w->nchecks, MAX_CHECKS);
	for (size_t i = 0; i < w->nchecks; i++)
		names[i] = w->checks[i].name;
	validate_mark_dups(names, w->nchecks, dup);
	for (size_t i = 0; i < w->nchecks; i++) {
		size_t m = validate_path_push(&p, "[%zu]", i);

		if (dup[i])
			validate_dup_map_key(fe, p.s, "name", names[i]);
		if (w->checks[i].message &&
		    strlen(w->checks[i].message) > MAX_CHECK_MESSAGE) {
			validate_path_push(&p, ".message");
			fe_too_long(fe, p.s, MAX_CHECK_MESSAGE);
		}
		validate_path_pop(&p, m);
	}
	free(dup);
	free(names);
}

static void check_status(const struct workload *w, struct field_errors *fe)
{
	bool reserved = workload_has_quota_reservation(w);

	if (reserved && w->has_admission &&
	    w->admission.npsa != w->npod_sets)
		validate_cel(fe, VALIDATE_ROOT_PATH, "object",
			     "podSetAssignments must have the same number of podSets as the spec");
	check_admission_schema(w, fe);
	if (w->has_requeue_count && w->requeue_count < 0)
		validate_minimum(fe, "status.requeueState.count",
				 w->requeue_count, 0);
	if (reserved && w->has_admission)
		check_assignments(w, fe);
	check_reclaimable(w, fe);
	check_checks(w, fe);
}

/* ------------------------------------------------------------------ */
/* update */

static bool containers_equal(const struct container_res *a,
			     const struct container_res *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!validate_str_eq(a[i].name, b[i].name) ||
		    !reslist_equal(&a[i].requests, &b[i].requests) ||
		    !reslist_equal(&a[i].limits, &b[i].limits) ||
		    a[i].sidecar != b[i].sidecar)
			return false;
	return true;
}

static bool tolerations_equal(const struct toleration *a,
			      const struct toleration *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!toleration_equal(&a[i], &b[i]))
			return false;
	return true;
}

static bool selectors_equal(const struct label_selector *a,
			    const struct label_selector *b)
{
	char *x = label_selector_string(a), *y = label_selector_string(b);
	bool eq = !strcmp(x, y);

	free(x);
	free(y);
	return eq;
}

static bool affinity_equal(const struct node_affinity *a,
			   const struct node_affinity *b)
{
	if (a->present != b->present || a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->terms[i].nfields != b->terms[i].nfields ||
		    !selectors_equal(&a->terms[i].exprs, &b->terms[i].exprs))
			return false;
	return true;
}

/*
 * The pod template as Kueue's reflect.DeepEqual sees it, restricted to
 * what cueue models, plus the received JSON for everything else.
 */
static bool template_equal(const struct pod_template *a,
			   const struct pod_template *b)
{
	return smap_equal(&a->labels, &b->labels) &&
	       smap_equal(&a->annotations, &b->annotations) &&
	       a->ncontainers == b->ncontainers &&
	       containers_equal(a->containers, b->containers, a->ncontainers) &&
	       a->ninit_containers == b->ninit_containers &&
	       containers_equal(a->init_containers, b->init_containers,
				a->ninit_containers) &&
	       reslist_equal(&a->overhead, &b->overhead) &&
	       a->has_pod_resources == b->has_pod_resources &&
	       reslist_equal(&a->pod_requests, &b->pod_requests) &&
	       reslist_equal(&a->pod_limits, &b->pod_limits) &&
	       smap_equal(&a->node_selector, &b->node_selector) &&
	       affinity_equal(&a->affinity, &b->affinity) &&
	       a->ntols == b->ntols &&
	       tolerations_equal(a->tols, b->tols, a->ntols) &&
	       validate_str_eq(a->priority_class_name, b->priority_class_name) &&
	       validate_str_eq(a->runtime_class_name, b->runtime_class_name) &&
	       validate_str_eq(a->raw, b->raw);
}

static bool pod_set_equal(const struct pod_set *a, const struct pod_set *b)
{
	return validate_str_eq(a->name, b->name) && a->count == b->count &&
	       a->has_min_count == b->has_min_count &&
	       (!a->has_min_count || a->min_count == b->min_count) &&
	       validate_str_eq(a->topology_request, b->topology_request) &&
	       template_equal(&a->tmpl, &b->tmpl);
}

/*
 * validateImmutablePodSets. The value Kueue prints is the Go dump of the
 * new PodSet; we print its type with the fields elided. Kueue names the
 * element "spec.podSets.0" (path.Child(strconv.Itoa(i))); we keep the
 * index form every other message uses.
 */
static void check_pod_sets_update(const struct workload *w,
				  const struct workload *old,
				  struct field_errors *fe)
{
	const char *pkg = validate_go_pkg(w->version);
	char val[64];

	if (w->npod_sets != old->npod_sets) {
		snprintf(val, sizeof(val), "[]%s.PodSet{...}", pkg);
		validate_immutable(fe, "spec.podSets", val, false);
		return;
	}
	snprintf(val, sizeof(val), "%s.PodSet{...}", pkg);
	for (size_t i = 0; i < w->npod_sets; i++) {
		char path[48];

		if (pod_set_equal(&w->pod_sets[i], &old->pod_sets[i]))
			continue;
		snprintf(path, sizeof(path), "spec.podSets[%zu]", i);
		validate_immutable(fe, path, val, false);
	}
}

static bool psa_equal(const struct pod_set_assignment *a,
		      const struct pod_set_assignment *b)
{
	/* topologyAssignment may be filled in later (TAS, on by default). */
	return validate_str_eq(a->name, b->name) &&
	       smap_equal(&a->flavors, &b->flavors) &&
	       reslist_equal(&a->usage, &b->usage) &&
	       a->has_count == b->has_count &&
	       (!a->has_count || a->count == b->count);
}

/* validateAdmissionUpdate: admission may be set or cleared, not edited. */
static void check_admission_update(const struct workload *w,
				   const struct workload *old,
				   struct field_errors *fe)
{
	const struct admission *a = &w->admission, *b = &old->admission;
	bool same;
	char val[64];

	if (!w->has_admission || !old->has_admission)
		return;
	same = validate_str_eq(a->cluster_queue, b->cluster_queue) &&
	       a->npsa == b->npsa;
	for (size_t i = 0; same && i < a->npsa; i++)
		same = psa_equal(&a->psa[i], &b->psa[i]);
	if (same)
		return;
	snprintf(val, sizeof(val), "%s.Admission{...}",
		 validate_go_pkg(w->version));
	validate_immutable(fe, "status.admission", val, false);
}

static const struct reclaimable_pods *find_reclaimable(const struct workload *w,
							const char *name)
{
	for (size_t i = 0; i < w->nreclaimable; i++)
		if (validate_str_eq(w->reclaimable[i].name, name))
			return &w->reclaimable[i];
	return NULL;
}

/* validateReclaimablePodsUpdate, while quota is reserved in old and new:
 * counts may not go down, entries may not go away. */
static void check_reclaimable_update(const struct workload *w,
				     const struct workload *old,
				     struct field_errors *fe)
{
	for (size_t i = 0; i < w->nreclaimable; i++) {
		const struct reclaimable_pods *n = &w->reclaimable[i];
		const struct reclaimable_pods *o = find_reclaimable(old, n->name);
		char path[320], buf[32];

		if (!o || n->count >= o->count)
			continue;
		snprintf(path, sizeof(path), "status.reclaimablePods[%s].count",
			 n->name ? n->name : "");
		snprintf(buf, sizeof(buf), "%d", (int)n->count);
		fe_add(fe, FE_INVALID, path, buf, false,
		       "cannot be less then %d", (int)o->count);
	}
	for (size_t i = 0; i < old->nreclaimable; i++) {
		const struct reclaimable_pods *o = &old->reclaimable[i];
		char path[320];

		if (find_reclaimable(w, o->name))
			continue;
		snprintf(path, sizeof(path), "status.reclaimablePods[%s]",
			 o->name ? o->name : "");
		fe_required(fe, path, "cannot be removed");
	}
}

/* validateImmutablePodSetUpdates: a check Ready in old and new keeps its
 * podSetUpdates. Reported at the old list's index, as Kueue does. */
static void check_pod_set_updates(const struct workload *w,
				  const struct workload *old,
				  struct field_errors *fe)
{
	const char *pkg = validate_go_pkg(w->version);

	for (size_t i = 0; i < old->nchecks; i++) {
		const struct admission_check_state *o = &old->checks[i], *n = NULL;
		char path[64], val[64];

		for (size_t j = 0; j < w->nchecks && !n; j++)
			if (validate_str_eq(w->checks[j].name, o->name))
				n = &w->checks[j];
		if (!n || o->state != CHECK_READY || n->state != CHECK_READY ||
		    validate_str_eq(o->pod_set_updates, n->pod_set_updates))
			continue;
		snprintf(path, sizeof(path),
			 "status.admissionChecks[%zu].podSetUpdates", i);
		snprintf(val, sizeof(val),
			 n->pod_set_updates ? "[]%s.PodSetUpdate{...}"
					    : "[]%s.PodSetUpdate(nil)", pkg);
		validate_immutable(fe, path, val, false);
	}
}

static int32_t max_exec_or_zero(const struct workload *w)
{
	return w->has_max_exec ? w->max_exec_seconds : 0;
}

/* The root-level CEL transition rules, in the order of the CRD. */
static void check_cel_update(const struct workload *w,
			     const struct workload *old,
			     struct field_errors *fe)
{
	bool v2 = w->version == API_V1BETA2;
	bool old_res = workload_has_quota_reservation(old);
	bool new_res = workload_has_quota_reservation(w);
	bool both_adm = workload_is_admitted(old) && workload_is_admitted(w);
	bool both_ref = old->priority_class_name && w->priority_class_name;
	const char *root = VALIDATE_ROOT_PATH;

	if (!v2) {
		if (old_res && w->priority_source != old->priority_source)
			validate_cel(fe, root, "object", "field is immutable");
		if (old_res && both_ref &&
		    strcmp(w->priority_class_name, old->priority_class_name))
			validate_cel(fe, root, "object", "field is immutable");
		if (old_res && new_res && old->queue_name && w->queue_name &&
		    strcmp(w->queue_name, old->queue_name))
			validate_cel(fe, root, "object", "field is immutable");
		if (both_adm && max_exec_or_zero(w) != max_exec_or_zero(old))
			validate_cel(fe, root, "object",
				     "maximumExecutionTimeSeconds is immutable while admitted");
		return;
	}
	/* v1beta2: priorityClassRef{group, kind, name}; group and kind come
	 * in pairs (CEL), both carried by priority_source. */
	if (old_res && !old->priority_class_name != !w->priority_class_name)
		validate_cel(fe, root, "object",
			     "priorityClassRef is immutable while workload quota reserved");
	if (old_res && both_ref && w->priority_source != old->priority_source) {
		validate_cel(fe, root, "object",
			     "priorityClassRef.group is immutable while workload quota reserved");
		validate_cel(fe, root, "object",
			     "priorityClassRef.kind is immutable while workload quota reserved");
	}
	if (old_res && both_ref && w->priority_source == PSRC_POD &&
	    !validate_opt_str_eq(w->priority_class_name, old->priority_class_name))
		validate_cel(fe, root, "object",
			     "priorityClassRef.name is immutable for scheduling.k8s.io/priorityclass while workload quota reserved");
	if (old_res && new_res && old->queue_name && w->queue_name &&
	    strcmp(w->queue_name, old->queue_name))
		validate_cel(fe, root, "object",
			     "queueName is immutable while workload quota reserved");
	if (both_adm && max_exec_or_zero(w) != max_exec_or_zero(old))
		validate_cel(fe, root, "object",
			     "maximumExecutionTimeSeconds is immutable while workload quota reserved");
}

void validate_workload(const struct workload *w, const struct workload *old,
		       struct field_errors *fe)
{
	validate_object_name(&w->meta, fe);
	check_spec(w, fe);
	check_status(w, fe);
	if (!old)
		return;
	check_cel_update(w, old, fe);
	/* Webhook, in the order of Kueue's ValidateWorkloadUpdate. */
	if (workload_has_quota_reservation(old))
		check_pod_sets_update(w, old, fe);
	if (workload_has_quota_reservation(w) &&
	    workload_has_quota_reservation(old))
		check_reclaimable_update(w, old, fe);
	check_admission_update(w, old, fe);
	check_pod_set_updates(w, old, fe);
}
