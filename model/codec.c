/*
 * codec: Kubernetes JSON -> the structs of objects.h for the Kueue kinds
 * (see codec.h), in both kueue.x-k8s.io versions, with the CRD defaults
 * applied while decoding (kueue-api.md §2-7, §9).
 *
 * The module is split by layer, sharing the private codec_int.h:
 *   codec_cursor.c  the cursor, the tree walk and the field readers
 *   codec_k8s.c     meta/v1, core/v1 and batch/v1 shapes (ObjectMeta,
 *                   conditions, selectors, tolerations, pod templates, Job)
 *   codec.c         this file: kinds and the Kueue objects
 *   codec_encode.c  structs -> JSON
 *   codec_convert.c v1beta1 <-> v1beta2 on the JSON tree
 * Only these files may include jansson in model/ (STYLE P8). Every string
 * the structs get is an xstrdup'ed copy, so no jansson pointer outlives
 * its tree (P3c), and no input makes a decoder abort: every problem is a
 * field error with the field's full path.
 *
 * Each decoder zeroes its output first, so it may be given an
 * uninitialised struct (not a filled one: that would leak).
 */
#include "model/codec.h"

#include <stdlib.h>
#include <string.h>

#include "model/codec_int.h"

/* ------------------------------------------------------------------ */
/* Kinds */

static const struct {
	const char *name;
	enum kind kind;
} kinds[] = {
	{ "ResourceFlavor", KIND_RESOURCE_FLAVOR },
	{ "ClusterQueue", KIND_CLUSTER_QUEUE },
	{ "LocalQueue", KIND_LOCAL_QUEUE },
	{ "Cohort", KIND_COHORT },
	{ "WorkloadPriorityClass", KIND_WORKLOAD_PRIORITY_CLASS },
	{ "Workload", KIND_WORKLOAD },
	{ "Job", KIND_JOB },
};

const char *kind_name(enum kind k)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == k)
			return kinds[i].name;
	return "";
}

enum kind codec_kind_of(const json_t *obj)
{
	const char *av = json_string_value(json_object_get(obj, "apiVersion"));
	const char *k = json_string_value(json_object_get(obj, "kind"));
	bool batch;

	if (!av || !k)
		return KIND_UNKNOWN;
	batch = !strcmp(av, "batch/v1");
	if (!batch && api_version_parse(av) == API_UNKNOWN)
		return KIND_UNKNOWN;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!strcmp(kinds[i].name, k))
			return (kinds[i].kind == KIND_JOB) == batch ?
				       kinds[i].kind : KIND_UNKNOWN;
	return KIND_UNKNOWN;
}

/* ------------------------------------------------------------------ */
/* Enum tables, per version where the spellings differ (kueue-api.md) */

static const struct codec_enum stop_tab[] = {
	{ "None", STOP_NONE, false },
	{ "Hold", STOP_HOLD, false },
	{ "HoldAndDrain", STOP_HOLD_AND_DRAIN, false },
	{ NULL, 0, false },
};

static const struct codec_enum queueing_tab[] = {
	{ "StrictFIFO", QS_STRICT_FIFO, false },
	{ "BestEffortFIFO", QS_BEST_EFFORT_FIFO, false },
	{ NULL, 0, false },
};

/* v1beta1 takes v1beta2's MayStopSearch too, as Kueue's does at HEAD: a
 * v1beta2 MayStopSearch reads as MayStopSearch in v1beta1
 * (model/codec_convert.c), and a v1beta1 write must be able to keep it. */
static const struct codec_enum borrow_v1_tab[] = {
	{ "MayStopSearch", FUNG_MAY_STOP_SEARCH, false },
	{ "TryNextFlavor", FUNG_TRY_NEXT_FLAVOR, false },
	{ "Borrow", FUNG_MAY_STOP_SEARCH, false },
	{ NULL, 0, false },
};

static const struct codec_enum preempt_v1_tab[] = {
	{ "MayStopSearch", FUNG_MAY_STOP_SEARCH, false },
	{ "TryNextFlavor", FUNG_TRY_NEXT_FLAVOR, false },
	{ "Preempt", FUNG_MAY_STOP_SEARCH, false },
	{ NULL, 0, false },
};

static const struct codec_enum fung_v2_tab[] = {
	{ "MayStopSearch", FUNG_MAY_STOP_SEARCH, false },
	{ "TryNextFlavor", FUNG_TRY_NEXT_FLAVOR, false },
	{ NULL, 0, false },
};

static const struct codec_enum fpref_tab[] = {
	{ "BorrowingOverPreemption", FPREF_BORROWING_OVER_PREEMPTION, false },
	{ "PreemptionOverBorrowing", FPREF_PREEMPTION_OVER_BORROWING, false },
	{ NULL, 0, false },
};

static const struct codec_enum within_cq_tab[] = {
	{ "Never", WCQ_NEVER, false },
	{ "LowerPriority", WCQ_LOWER_PRIORITY, false },
	{ "LowerOrNewerEqualPriority", WCQ_LOWER_OR_NEWER_EQUAL_PRIORITY,
	  false },
	{ NULL, 0, false },
};

static const struct codec_enum reclaim_tab[] = {
	{ "Never", RWC_NEVER, false },
	{ "LowerPriority", RWC_LOWER_PRIORITY, false },
	{ "Any", RWC_ANY, false },
	{ NULL, 0, false },
};

static const struct codec_enum bwc_tab[] = {
	{ "Never", BWC_NEVER, false },
	{ "LowerPriority", BWC_LOWER_PRIORITY, false },
	{ NULL, 0, false },
};

static const struct codec_enum admission_mode_tab[] = {
	{ "UsageBasedAdmissionFairSharing", AM_USAGE_BASED_FAIR_SHARING,
	  false },
	{ "NoAdmissionFairSharing", AM_NO_FAIR_SHARING, false },
	{ NULL, 0, false },
};

static const struct codec_enum migration_tab[] = {
	{ "TryPreferredFlavors", MIG_TRY_PREFERRED_FLAVORS, false },
	{ "RetainFirstAdmission", MIG_RETAIN_FIRST_ADMISSION, false },
	{ NULL, 0, false },
};

static const struct codec_enum psrc_tab[] = {
	{ "kueue.x-k8s.io/workloadpriorityclass", PSRC_WPC, false },
	{ "scheduling.k8s.io/priorityclass", PSRC_POD, false },
	{ "", PSRC_NONE, false },
	{ NULL, 0, false },
};

static const struct codec_enum pref_group_tab[] = {
	{ KUEUE_GROUP, PSRC_WPC, false },
	{ "scheduling.k8s.io", PSRC_POD, false },
	{ NULL, 0, false },
};

static const struct codec_enum pref_kind_tab[] = {
	{ "WorkloadPriorityClass", PSRC_WPC, false },
	{ "PriorityClass", PSRC_POD, false },
	{ NULL, 0, false },
};

static const struct codec_enum check_state_tab[] = {
	{ "Pending", CHECK_PENDING, false },
	{ "Ready", CHECK_READY, false },
	{ "Retry", CHECK_RETRY, false },
	{ "Rejected", CHECK_REJECTED, false },
	{ NULL, 0, false },
};

/* ------------------------------------------------------------------ */
/* Quota and usage, shared by ClusterQueue, Cohort and LocalQueue */

static void dec_quota(struct codec_ctx *c, const json_t *e,
		      struct resource_quota *q)
{
	q->name = codec_strdup(c, e, "name");
	if (!codec_member(e, "nominalQuota")) {
		size_t m = codec_push_field(c, "nominalQuota");

		fe_required(c->fe, c->path.buf, NULL);
		codec_pop(c, m);
	}
	codec_qty(c, e, "nominalQuota", &q->nominal);
	q->has_borrowing = codec_qty(c, e, "borrowingLimit", &q->borrowing);
	q->has_lending = codec_qty(c, e, "lendingLimit", &q->lending);
	if (q->name) {
		/* Kueue counts non-cpu quota in whole units (rounded up). */
		q->nominal = resource_units_milli(q->name, q->nominal);
		q->borrowing = resource_units_milli(q->name, q->borrowing);
		q->lending = resource_units_milli(q->name, q->lending);
	}
}

static void dec_flavor_quotas(struct codec_ctx *c, const json_t *e,
			      struct flavor_quotas *f)
{
	const json_t *a, *r;
	size_t m, mi, n;

	f->name = codec_strdup(c, e, "name");
	n = codec_arr_begin(c, e, "resources", &a, &m);
	if (n)
		f->res = xcalloc(n, sizeof(*f->res));
	for (size_t i = 0; i < n; i++) {
		r = codec_elem_obj(c, a, i, &mi);
		if (!r)
			continue;
		dec_quota(c, r, &f->res[f->nres++]);
		codec_pop(c, mi);
	}
	codec_pop(c, m);
}

/* spec.resourceGroups of a ClusterQueue or Cohort. */
static void dec_groups(struct codec_ctx *c, const json_t *spec,
		       struct resource_group **out, size_t *nout)
{
	const json_t *a, *e, *fa, *fe;
	size_t m, mi, mf, mfi;
	size_t n = codec_arr_begin(c, spec, "resourceGroups", &a, &m);

	if (n)
		*out = xcalloc(n, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		struct resource_group *g;
		size_t nf;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		g = &(*out)[(*nout)++];
		g->ncovered = codec_strv(c, e, "coveredResources", &g->covered);
		nf = codec_arr_begin(c, e, "flavors", &fa, &mf);
		if (nf)
			g->flavors = xcalloc(nf, sizeof(*g->flavors));
		for (size_t j = 0; j < nf; j++) {
			fe = codec_elem_obj(c, fa, j, &mfi);
			if (!fe)
				continue;
			dec_flavor_quotas(c, fe, &g->flavors[g->nflavors++]);
			codec_pop(c, mfi);
		}
		codec_pop(c, mf);
		codec_pop(c, mi);
	}
	codec_pop(c, m);
}

/* status.fairSharing {weightedShare} of a ClusterQueue or Cohort. */
static void dec_fs_status(struct codec_ctx *c, const json_t *st, bool *has,
			  int64_t *share)
{
	size_t m;
	const json_t *fs = codec_enter(c, st, "fairSharing", &m);

	if (!fs)
		return;
	*has = true;
	codec_i64(c, fs, "weightedShare", share);
	codec_pop(c, m);
}

/* LocalQueue status.fairSharing.admissionFairSharingStatus. */
static void dec_afs_status(struct codec_ctx *c, const json_t *st,
			   struct local_queue *out)
{
	size_t m, m2;
	const json_t *fs = codec_enter(c, st, "fairSharing", &m);
	const json_t *a;

	if (!fs)
		return;
	a = codec_enter(c, fs, "admissionFairSharingStatus", &m2);
	if (a) {
		out->has_afs_status = true;
		codec_reslist(c, a, "consumedResources", &out->afs_consumed);
		codec_time(c, a, "lastUpdate", &out->afs_last_ms);
		codec_pop(c, m2);
	}
	codec_pop(c, m);
}

/* fairSharing {weight}: the CRD defaults weight to 1 once the object is
 * there. */
static void dec_fair_sharing(struct codec_ctx *c, const json_t *spec,
			     bool *has, int64_t *weight)
{
	size_t m;
	const json_t *fs = codec_enter(c, spec, "fairSharing", &m);

	if (!fs)
		return;
	*has = true;
	*weight = 1000;
	codec_qty(c, fs, "weight", weight);
	codec_pop(c, m);
}

static int cmp_usage(const void *a, const void *b)
{
	const struct resource_usage *x = a, *y = b;

	return strcmp(x->name ? x->name : "", y->name ? y->name : "");
}

/* []FlavorUsage (ClusterQueue, with borrowed) or []LocalQueueFlavorUsage. */
static void dec_usages(struct codec_ctx *c, const json_t *status,
		       const char *key, bool borrowed,
		       struct flavor_usage **out, size_t *nout)
{
	const json_t *a, *e, *ra, *re;
	size_t m, mi, mr, mri, n = codec_arr_begin(c, status, key, &a, &m);

	if (n)
		*out = xcalloc(n, sizeof(**out));
	for (size_t i = 0; i < n; i++) {
		struct flavor_usage *u;
		size_t nr;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		u = &(*out)[(*nout)++];
		u->name = codec_strdup(c, e, "name");
		nr = codec_arr_begin(c, e, "resources", &ra, &mr);
		if (nr)
			u->res = xcalloc(nr, sizeof(*u->res));
		for (size_t j = 0; j < nr; j++) {
			struct resource_usage *r;

			re = codec_elem_obj(c, ra, j, &mri);
			if (!re)
				continue;
			r = &u->res[u->nres++];
			r->name = codec_strdup(c, re, "name");
			codec_qty(c, re, "total", &r->total);
			if (borrowed)
				codec_qty(c, re, "borrowed", &r->borrowed);
			codec_pop(c, mri);
		}
		codec_pop(c, mr);
		if (u->nres > 1)
			qsort(u->res, u->nres, sizeof(*u->res), cmp_usage);
		codec_pop(c, mi);
	}
	codec_pop(c, m);
}

/* ------------------------------------------------------------------ */
/* ResourceFlavor */

int codec_decode_resource_flavor(const json_t *obj,
				 struct resource_flavor *out,
				 struct field_errors *fe)
{
	struct codec_ctx c;
	const json_t *spec, *a, *e;
	size_t m, mt, mi, n;

	memset(out, 0, sizeof(*out));
	if (codec_begin(&c, obj, fe, NULL, "ResourceFlavor") != 0)
		return codec_ctx_finish(&c);
	out->version = codec_kueue_version(&c, obj);
	codec_read_meta(&c, obj, &out->meta);
	spec = codec_enter(&c, obj, "spec", &m);
	if (spec) {
		codec_map(&c, spec, "nodeLabels", &out->node_labels);
		n = codec_arr_begin(&c, spec, "nodeTaints", &a, &mt);
		if (n)
			out->taints = xcalloc(n, sizeof(*out->taints));
		for (size_t i = 0; i < n; i++) {
			e = codec_elem_obj(&c, a, i, &mi);
			if (!e)
				continue;
			codec_read_taint(&c, e, &out->taints[out->ntaints++]);
			codec_pop(&c, mi);
		}
		codec_pop(&c, mt);
		out->ntols = codec_read_tolerations(&c, spec, &out->tols);
		out->topology_name = codec_strdup(&c, spec, "topologyName");
		codec_pop(&c, m);
	}
	return codec_ctx_finish(&c);
}

/* ------------------------------------------------------------------ */
/* ClusterQueue */

static void dec_cq_fungibility(struct codec_ctx *c, const json_t *spec,
			       struct cluster_queue *cq)
{
	bool v2 = c->v == API_V1BETA2;
	size_t m;
	const json_t *ff = codec_enter(c, spec, "flavorFungibility", &m);
	int v;

	if (!ff)
		return;
	if (codec_enum(c, ff, "whenCanBorrow",
		       v2 ? fung_v2_tab : borrow_v1_tab, &v))
		cq->when_can_borrow = (enum fungibility)v;
	if (codec_enum(c, ff, "whenCanPreempt",
		       v2 ? fung_v2_tab : preempt_v1_tab, &v))
		cq->when_can_preempt = (enum fungibility)v;
	/* Both versions have preference (Kueue's v1beta1 at HEAD too). */
	if (codec_enum(c, ff, "preference", fpref_tab, &v))
		cq->fung_preference = (enum fungibility_preference)v;
	codec_pop(c, m);
}

static void dec_cq_preemption(struct codec_ctx *c, const json_t *spec,
			      struct cluster_queue *cq)
{
	size_t m, mb;
	const json_t *p = codec_enter(c, spec, "preemption", &m), *b;
	int v;

	if (!p)
		return;
	if (codec_enum(c, p, "withinClusterQueue", within_cq_tab, &v))
		cq->within_cq = (enum preempt_within_cq)v;
	if (codec_enum(c, p, "reclaimWithinCohort", reclaim_tab, &v))
		cq->reclaim = (enum reclaim_within_cohort)v;
	b = codec_enter(c, p, "borrowWithinCohort", &mb);
	if (b) {
		if (codec_enum(c, b, "policy", bwc_tab, &v))
			cq->borrow_policy = (enum borrow_within_cohort)v;
		cq->has_borrow_threshold = codec_i32(
			c, b, "maxPriorityThreshold", &cq->borrow_threshold);
		codec_pop(c, mb);
	}
	codec_pop(c, m);
}

static void dec_cq_checks(struct codec_ctx *c, const json_t *spec,
			  struct cluster_queue *cq)
{
	size_t m, ma, mi;
	const json_t *s, *a, *e;
	size_t n;

	if (c->v == API_V1BETA1)
		cq->nadmission_checks = codec_strv(c, spec, "admissionChecks",
					       &cq->admission_checks);
	s = codec_enter(c, spec, "admissionChecksStrategy", &m);
	if (!s)
		return;
	cq->has_ac_strategy = true;
	n = codec_arr_begin(c, s, "admissionChecks", &a, &ma);
	if (n)
		cq->ac_rules = xcalloc(n, sizeof(*cq->ac_rules));
	for (size_t i = 0; i < n; i++) {
		struct admission_check_rule *r;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		r = &cq->ac_rules[cq->nac_rules++];
		r->name = codec_strdup(c, e, "name");
		r->non_flavors = codec_strv(c, e, "onFlavors", &r->on_flavors);
		codec_pop(c, mi);
	}
	codec_pop(c, ma);
	codec_pop(c, m);
}

static void dec_cq_spec(struct codec_ctx *c, const json_t *obj,
			struct cluster_queue *cq)
{
	size_t m, m2, m3;
	const json_t *spec = codec_enter(c, obj, "spec", &m), *x, *y;
	int v;

	if (!spec)
		return;
	dec_groups(c, spec, &cq->groups, &cq->ngroups);
	cq->cohort = codec_strdup(c, spec,
			      c->v == API_V1BETA2 ? "cohortName" : "cohort");
	if (codec_enum(c, spec, "queueingStrategy", queueing_tab, &v))
		cq->strategy = (enum queueing_strategy)v;
	cq->has_ns_selector = codec_read_selector(c, spec, "namespaceSelector",
					   &cq->ns_selector);
	dec_cq_fungibility(c, spec, cq);
	dec_cq_preemption(c, spec, cq);
	dec_cq_checks(c, spec, cq);
	if (codec_enum(c, spec, "stopPolicy", stop_tab, &v))
		cq->stop = (enum stop_policy)v;
	dec_fair_sharing(c, spec, &cq->has_fs_weight, &cq->fs_weight);
	x = codec_enter(c, spec, "admissionScope", &m2);
	if (x) {
		if (codec_enum(c, x, "admissionMode", admission_mode_tab, &v))
			cq->admission_mode = (enum admission_mode)v;
		codec_pop(c, m2);
	}
	if (c->v == API_V1BETA2) {
		x = codec_enter(c, spec, "concurrentAdmissionPolicy", &m2);
		y = x ? codec_enter(c, x, "migration", &m3) : NULL;
		if (y) {
			const json_t *cons;
			size_t mc;

			if (codec_enum(c, y, "mode", migration_tab, &v))
				cq->migration = (enum migration_mode)v;
			cons = codec_enter(c, y, "constraints", &mc);
			if (cons) {
				cq->last_acceptable_flavor = codec_strdup(
					c, cons, "lastAcceptableFlavorName");
				codec_pop(c, mc);
			}
			codec_pop(c, m3);
		}
		if (x)
			codec_pop(c, m2);
	}
	codec_pop(c, m);
}

int codec_decode_cluster_queue(const json_t *obj, struct cluster_queue *out,
			       struct field_errors *fe)
{
	struct codec_ctx c;
	size_t m;
	const json_t *st;

	memset(out, 0, sizeof(*out));
	/* CRD defaults; the other enums default to their zero value. */
	out->when_can_borrow = FUNG_MAY_STOP_SEARCH;
	out->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
	if (codec_begin(&c, obj, fe, NULL, "ClusterQueue") != 0)
		return codec_ctx_finish(&c);
	out->version = codec_kueue_version(&c, obj);
	codec_read_meta(&c, obj, &out->meta);
	dec_cq_spec(&c, obj, out);
	st = codec_enter(&c, obj, "status", &m);
	if (st) {
		codec_read_conditions(&c, st, &out->conds);
		dec_usages(&c, st, "flavorsReservation", true,
			   &out->reservation, &out->nreservation);
		dec_usages(&c, st, "flavorsUsage", true, &out->usage,
			   &out->nusage);
		codec_i32(&c, st, "pendingWorkloads", &out->pending);
		codec_i32(&c, st, "reservingWorkloads", &out->reserving);
		codec_i32(&c, st, "admittedWorkloads", &out->admitted);
		dec_fs_status(&c, st, &out->has_fs_status,
			      &out->fs_weighted_share);
		codec_pop(&c, m);
	}
	return codec_ctx_finish(&c);
}

/* ------------------------------------------------------------------ */
/* Cohort, LocalQueue, WorkloadPriorityClass */

int codec_decode_cohort(const json_t *obj, struct cohort *out,
			struct field_errors *fe)
{
	struct codec_ctx c;
	size_t m;
	const json_t *spec;

	memset(out, 0, sizeof(*out));
	if (codec_begin(&c, obj, fe, NULL, "Cohort") != 0)
		return codec_ctx_finish(&c);
	out->version = codec_kueue_version(&c, obj);
	codec_read_meta(&c, obj, &out->meta);
	spec = codec_enter(&c, obj, "spec", &m);
	if (spec) {
		out->parent = codec_strdup(&c, spec, "parentName");
		dec_groups(&c, spec, &out->groups, &out->ngroups);
		dec_fair_sharing(&c, spec, &out->has_fs_weight,
				 &out->fs_weight);
		codec_pop(&c, m);
	}
	spec = codec_enter(&c, obj, "status", &m);
	if (spec) {
		dec_fs_status(&c, spec, &out->has_fs_status,
			      &out->fs_weighted_share);
		codec_pop(&c, m);
	}
	return codec_ctx_finish(&c);
}

int codec_decode_local_queue(const json_t *obj, struct local_queue *out,
			     struct field_errors *fe)
{
	struct codec_ctx c;
	size_t m;
	const json_t *spec, *st;
	int v;

	memset(out, 0, sizeof(*out));
	if (codec_begin(&c, obj, fe, NULL, "LocalQueue") != 0)
		return codec_ctx_finish(&c);
	out->version = codec_kueue_version(&c, obj);
	codec_read_meta(&c, obj, &out->meta);
	spec = codec_enter(&c, obj, "spec", &m);
	if (spec) {
		out->cluster_queue = codec_strdup(&c, spec, "clusterQueue");
		if (codec_enum(&c, spec, "stopPolicy", stop_tab, &v))
			out->stop = (enum stop_policy)v;
		dec_fair_sharing(&c, spec, &out->has_fs_weight,
				 &out->fs_weight);
		codec_pop(&c, m);
	}
	st = codec_enter(&c, obj, "status", &m);
	if (st) {
		codec_read_conditions(&c, st, &out->conds);
		dec_usages(&c, st, "flavorsReservation", false,
			   &out->reservation, &out->nreservation);
		dec_usages(&c, st,
			   out->version == API_V1BETA2 ? "flavorsUsage" :
							 "flavorUsage",
			   false, &out->usage, &out->nusage);
		codec_i32(&c, st, "pendingWorkloads", &out->pending);
		codec_i32(&c, st, "reservingWorkloads", &out->reserving);
		codec_i32(&c, st, "admittedWorkloads", &out->admitted);
		dec_afs_status(&c, st, out);
		codec_pop(&c, m);
	}
	return codec_ctx_finish(&c);
}

int codec_decode_workload_priority_class(const json_t *obj,
					 struct workload_priority_class *out,
					 struct field_errors *fe)
{
	struct codec_ctx c;

	memset(out, 0, sizeof(*out));
	if (codec_begin(&c, obj, fe, NULL, "WorkloadPriorityClass") != 0)
		return codec_ctx_finish(&c);
	out->version = codec_kueue_version(&c, obj);
	codec_read_meta(&c, obj, &out->meta);
	out->has_value = codec_i32(&c, obj, "value", &out->value);
	out->description = codec_strdup(&c, obj, "description");
	return codec_ctx_finish(&c);
}

/* ------------------------------------------------------------------ */
/* Workload */

/* Kueue's IsExplicitlyRequestingTAS for one topologyRequest (NULL or not
 * an object: false). */
static bool tas_requested(const json_t *tr)
{
	static const char *const keys[] = {
		"required", "preferred", "unconstrained",
		"podSetSliceRequiredTopology", "podSetSliceSize",
	};
	const json_t *v;

	if (!json_is_object(tr))
		return false;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		v = json_object_get(tr, keys[i]);
		if (v && !json_is_null(v))
			return true;
	}
	v = json_object_get(tr, "podsetSliceRequiredTopologyConstraints");
	return json_is_array(v) && json_array_size(v) > 0;
}

static void dec_pod_set(struct codec_ctx *c, const json_t *e,
			struct pod_set *ps)
{
	ps->name = codec_strdup(c, e, "name");
	if (!ps->name)
		ps->name = xstrdup(DEFAULT_PODSET_NAME);
	ps->count = 1;
	codec_i32(c, e, "count", &ps->count);
	ps->has_min_count = codec_i32(c, e, "minCount", &ps->min_count);
	codec_read_template(c, e, &ps->tmpl);
	ps->topology_request = codec_opaque(c, e, "topologyRequest", "object");
	ps->tas_requested = tas_requested(json_object_get(e, "topologyRequest"));
}

/* v1beta2 spec.priorityClassRef {group, kind, name}. */
static void dec_priority_ref(struct codec_ctx *c, const json_t *spec,
			     struct workload *w)
{
	size_t m;
	const json_t *ref = codec_enter(c, spec, "priorityClassRef", &m);
	int g = PSRC_NONE, k = PSRC_NONE;
	bool hg, hk;

	if (!ref)
		return;
	hg = codec_enum(c, ref, "group", pref_group_tab, &g);
	hk = codec_enum(c, ref, "kind", pref_kind_tab, &k);
	if (hg && hk && g != k)
		fe_add(c->fe, FE_INVALID, c->path.buf, "object", true,
		       "only the %s kind is allowed for the %s group",
		       g == PSRC_POD ? "PriorityClass" :
				       "WorkloadPriorityClass",
		       g == PSRC_POD ? "scheduling.k8s.io" : KUEUE_GROUP);
	w->priority_source = (enum priority_source)(hg ? g : k);
	w->priority_class_name = codec_strdup(c, ref, "name");
	codec_pop(c, m);
}

static void dec_wl_spec(struct codec_ctx *c, const json_t *obj,
			struct workload *w)
{
	size_t m, ma, mi;
	const json_t *spec = codec_enter(c, obj, "spec", &m), *a, *e;
	size_t n;
	int v;

	if (!spec)
		return;
	n = codec_arr_begin(c, spec, "podSets", &a, &ma);
	if (n)
		w->pod_sets = xcalloc(n, sizeof(*w->pod_sets));
	for (size_t i = 0; i < n; i++) {
		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		dec_pod_set(c, e, &w->pod_sets[w->npod_sets++]);
		codec_pop(c, mi);
	}
	codec_pop(c, ma);
	w->queue_name = codec_strdup(c, spec, "queueName");
	if (c->v == API_V1BETA2) {
		dec_priority_ref(c, spec, w);
	} else {
		w->priority_class_name =
			codec_strdup(c, spec, "priorityClassName");
		if (codec_enum(c, spec, "priorityClassSource", psrc_tab, &v))
			w->priority_source = (enum priority_source)v;
	}
	w->has_priority = codec_i32(c, spec, "priority", &w->priority);
	codec_bool(c, spec, "active", &w->active);
	w->has_max_exec = codec_i32(c, spec, "maximumExecutionTimeSeconds",
				&w->max_exec_seconds);
	codec_pop(c, m);
}

static void dec_admission(struct codec_ctx *c, const json_t *st,
			  struct workload *w)
{
	size_t m, ma, mi;
	const json_t *adm = codec_enter(c, st, "admission", &m), *a, *e;
	size_t n;

	if (!adm)
		return;
	w->has_admission = true;
	w->admission.cluster_queue = codec_strdup(c, adm, "clusterQueue");
	n = codec_arr_begin(c, adm, "podSetAssignments", &a, &ma);
	if (n)
		w->admission.psa = xcalloc(n, sizeof(*w->admission.psa));
	for (size_t i = 0; i < n; i++) {
		struct pod_set_assignment *p;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		p = &w->admission.psa[w->admission.npsa++];
		p->name = codec_strdup(c, e, "name");
		if (!p->name)
			p->name = xstrdup(DEFAULT_PODSET_NAME);
		codec_map(c, e, "flavors", &p->flavors);
		codec_reslist(c, e, "resourceUsage", &p->usage);
		p->has_count = codec_i32(c, e, "count", &p->count);
		p->topology_assignment =
			codec_opaque(c, e, "topologyAssignment", "object");
		codec_pop(c, mi);
	}
	codec_pop(c, ma);
	codec_pop(c, m);
}

static void dec_wl_status(struct codec_ctx *c, const json_t *obj,
			  struct workload *w)
{
	size_t m, mr, ma, mi;
	const json_t *st = codec_enter(c, obj, "status", &m), *rq, *a, *e;
	size_t n;
	int32_t acc;

	if (!st)
		return;
	codec_read_conditions(c, st, &w->conds);
	dec_admission(c, st, w);
	rq = codec_enter(c, st, "requeueState", &mr);
	if (rq) {
		w->has_requeue_count =
			codec_i32(c, rq, "count", &w->requeue_count);
		codec_time(c, rq, "requeueAt", &w->requeue_at_ms);
		codec_pop(c, mr);
	}
	n = codec_arr_begin(c, st, "reclaimablePods", &a, &ma);
	if (n)
		w->reclaimable = xcalloc(n, sizeof(*w->reclaimable));
	for (size_t i = 0; i < n; i++) {
		struct reclaimable_pods *r;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		r = &w->reclaimable[w->nreclaimable++];
		r->name = codec_strdup(c, e, "name");
		codec_i32(c, e, "count", &r->count);
		codec_pop(c, mi);
	}
	codec_pop(c, ma);
	rq = codec_enter(c, st, "schedulingStats", &mr);
	if (rq) {
		n = codec_arr_begin(c, rq, "evictions", &a, &ma);
		if (n)
			w->evictions = xcalloc(n, sizeof(*w->evictions));
		for (size_t i = 0; i < n; i++) {
			struct eviction_count *ev;

			e = codec_elem_obj(c, a, i, &mi);
			if (!e)
				continue;
			ev = &w->evictions[w->nevictions++];
			ev->reason = codec_strdup(c, e, "reason");
			ev->cause = codec_strdup(c, e, "underlyingCause");
			codec_i32(c, e, "count", &ev->count);
			codec_pop(c, mi);
		}
		codec_pop(c, ma);
		codec_pop(c, mr);
	}
	n = codec_arr_begin(c, st, "admissionChecks", &a, &ma);
	if (n)
		w->checks = xcalloc(n, sizeof(*w->checks));
	for (size_t i = 0; i < n; i++) {
		struct admission_check_state *s;
		int v;

		e = codec_elem_obj(c, a, i, &mi);
		if (!e)
			continue;
		s = &w->checks[w->nchecks++];
		s->name = codec_strdup(c, e, "name");
		if (codec_enum(c, e, "state", check_state_tab, &v))
			s->state = (enum check_state)v;
		codec_time(c, e, "lastTransitionTime", &s->last_transition_ms);
		s->message = codec_strdup(c, e, "message");
		s->pod_set_updates =
			codec_opaque(c, e, "podSetUpdates", "array");
		codec_pop(c, mi);
	}
	codec_pop(c, ma);
	/* (sic) v1beta1 misspells it; v1beta2 fixed the name. */
	if (codec_i32(c, st,
		  c->v == API_V1BETA2 ? "accumulatedPastExecutionTimeSeconds" :
					"accumulatedPastExexcutionTimeSeconds",
		  &acc)) {
		w->has_accumulated = true;
		w->accumulated_seconds = acc;
	}
	codec_pop(c, m);
}

int codec_decode_workload(const json_t *obj, struct workload *out,
			  struct field_errors *fe)
{
	struct codec_ctx c;

	memset(out, 0, sizeof(*out));
	out->active = true; /* CRD default */
	if (codec_begin(&c, obj, fe, NULL, "Workload") != 0)
		return codec_ctx_finish(&c);
	out->version = codec_kueue_version(&c, obj);
	codec_read_meta(&c, obj, &out->meta);
	dec_wl_spec(&c, obj, out);
	dec_wl_status(&c, obj, out);
	return codec_ctx_finish(&c);
}

