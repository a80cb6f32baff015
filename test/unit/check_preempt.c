/*
 * Suite "preempt": classical preemption (kueue-scheduler.md §4.1-4.4,
 * §2.3 and §2.6; kueue-api.md §3.3-3.4, §7.4) through the public contract
 * of flavors/sched.h: DEC_PREEMPT per victim, with its Preempted reason
 * and message, and the preemptor's DEC_PENDING ". Pending the preemption
 * of N workload(s)"; the preemptor admitted only once the victims
 * released their quota.
 *
 * Four parts, none reading the implementation:
 * 1. a table of scenarios (ClusterQueues, Cohorts, admitted workloads,
 *    pending ones; the expected victims, waits and admissions), written
 *    by hand from the spec, each run as a few Kueue cycles (max_rounds 1);
 * 2. dedicated tests for what a table row cannot say (message text,
 *    feedback of Evicted=True, removal, in-cycle reservation);
 * 3. a randomized comparison with ref_preempt.c, an independent naive
 *    reference of §3-§4.4 (fixed seeds; the seed and the scenario are
 *    printed on a mismatch). The table rows with one flavor are also
 *    checked against the reference, so the two judges agree;
 * 4. fair sharing (§2.5, §4.5, §4.6): the tournament's order and fair
 *    preemption's strategies, as table rows run with fair_sharing on
 *    (with classical control rows), and the InCohortFairSharing message.
 *
 * Units as in check_sched.c: cpu in milli-units, memory in milli-bytes.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "flavors/explain.h"
#include "flavors/sched.h"
#include "model/objects.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "suites.h"
#include "test/support/support.h"
#include "test/unit/quota_spec.h"
#include "test/unit/ref_preempt.h"

#define T0 INT64_C(1767225600000) /* the fixed clock: 2026-01-01T00:00Z */
#define SEC INT64_C(1000)
#define CPU(n) ((int64_t)(n) * 1000)
#define GI(n) ((int64_t)(n) * INT64_C(1073741824) * 1000)

#define PENDING_SUFFIX ". Pending the preemption of "

/* T_ASSERT_MSG (support.h): the generated scenarios check ~50,000 times */
#define CHECK() \
	T_ASSERT_MSG(sched_check(P.s), "sched_check failed at line %d", \
		     __LINE__)

static size_t words(const char *text, char out[8][64]);

/* ------------------------------------------------------------------ */
/* The fixture: sched, an object pool and the log of every decision. */

struct prec {
	char *wl;                 /* workload name */
	enum sched_dec_kind kind;
	char *cq;                 /* the decision's ClusterQueue */
	char *reason;             /* NULL for admit */
	char *msg;                /* NULL for admit */
	const char *preempt_reason; /* DEC_PREEMPT: static */
	char *preemptor;          /* DEC_PREEMPT: preemptor's name */
	char *preemptor_cq;       /* DEC_PREEMPT */
	struct admission adm;     /* DEC_ADMIT */
	unsigned cycle;           /* 1-based */
};

struct pwl {
	struct workload *w; /* owned */
	char *cq;           /* owned: the queue it was set with */
};

struct pfx {
	struct sched *s;
	struct sched_decisions d;
	int64_t now;
	unsigned ncycles;
	struct resource_flavor **rf;
	size_t nrf, caprf;
	struct cohort **co;
	size_t nco, capco;
	struct cluster_queue **cq;
	size_t ncq, capcq;
	struct pwl *wl;
	size_t nwl, capwl;
	struct prec *log;
	size_t nlog, caplog;
};

static struct pfx P;

/*
 * fs NULL: classical preemption. Otherwise fair sharing on, with
 * fairSharing.preemptionStrategies from fs: "" for the default list,
 * else "LTE" (LessThanOrEqualToFinalShare) and/or "LTI"
 * (LessThanInitialShare), space separated, in order.
 */
static void fx_begin_fs(unsigned max_rounds, const char *fs)
{
	struct sched_opts o;

	sched_opts_default(&o);
	o.max_rounds = max_rounds;
	if (fs) {
		char w[8][64];
		size_t n = words(fs, w);

		o.fair_sharing = true;
		ck_assert_uint_le(n, 2);
		for (size_t i = 0; i < n; i++) {
			ck_assert(!strcmp(w[i], "LTE") || !strcmp(w[i], "LTI"));
			o.fs_strategies[i] = !strcmp(w[i], "LTE") ?
				FS_LESS_THAN_OR_EQUAL_TO_FINAL_SHARE :
				FS_LESS_THAN_INITIAL_SHARE;
		}
		o.nfs_strategies = n;
	}
	memset(&P, 0, sizeof(P));
	P.s = sched_new(&o);
	ck_assert_ptr_nonnull(P.s);
	P.now = T0;
}

static void fx_begin(unsigned max_rounds)
{
	fx_begin_fs(max_rounds, NULL);
}

static void fx_end(void)
{
	sched_decisions_release(&P.d);
	sched_free(P.s);
	for (size_t i = 0; i < P.nrf; i++) {
		resource_flavor_release(P.rf[i]);
		free(P.rf[i]);
	}
	for (size_t i = 0; i < P.nco; i++) {
		cohort_release(P.co[i]);
		free(P.co[i]);
	}
	for (size_t i = 0; i < P.ncq; i++) {
		cluster_queue_release(P.cq[i]);
		free(P.cq[i]);
	}
	for (size_t i = 0; i < P.nwl; i++) {
		workload_release(P.wl[i].w);
		free(P.wl[i].w);
		free(P.wl[i].cq);
	}
	for (size_t i = 0; i < P.nlog; i++) {
		free(P.log[i].wl);
		free(P.log[i].cq);
		free(P.log[i].reason);
		free(P.log[i].msg);
		free(P.log[i].preemptor);
		free(P.log[i].preemptor_cq);
		admission_release(&P.log[i].adm);
	}
	free(P.rf);
	free(P.co);
	free(P.cq);
	free(P.wl);
	free(P.log);
	memset(&P, 0, sizeof(P));
}

/* ------------------------------------------------------------------ */
/* Parsing: quota_spec.h's notation, and the policies. */

/*
 * spec.preemption and spec.flavorFungibility, space separated:
 * wcq=LowerPriority|LowerOrNewerEqualPriority rwc=LowerPriority|Any
 * bwc=LowerPriority thr=<int> wcb=TryNextFlavor wcp=MayStopSearch
 * pref=PreemptionOverBorrowing|BorrowingOverPreemption, and
 * spec.fairSharing.weight w=<milli-units> (w=250 is weight 0.25).
 */
static void parse_policy(struct cluster_queue *cq, const char *spec)
{
	char *buf, *save = NULL, *tok;

	if (!spec)
		return;
	buf = xstrdup(spec);
	for (tok = strtok_r(buf, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		char *v = strchr(tok, '=');

		ck_assert_ptr_nonnull(v);
		*v++ = '\0';
		if (!strcmp(tok, "wcq"))
			cq->within_cq = !strcmp(v, "LowerPriority") ?
				WCQ_LOWER_PRIORITY :
				!strcmp(v, "LowerOrNewerEqualPriority") ?
				WCQ_LOWER_OR_NEWER_EQUAL_PRIORITY : WCQ_NEVER;
		else if (!strcmp(tok, "rwc"))
			cq->reclaim = !strcmp(v, "LowerPriority") ?
				RWC_LOWER_PRIORITY :
				!strcmp(v, "Any") ? RWC_ANY : RWC_NEVER;
		else if (!strcmp(tok, "bwc"))
			cq->borrow_policy = !strcmp(v, "LowerPriority") ?
				BWC_LOWER_PRIORITY : BWC_NEVER;
		else if (!strcmp(tok, "thr")) {
			cq->has_borrow_threshold = true;
			cq->borrow_threshold = atoi(v);
		} else if (!strcmp(tok, "wcb"))
			cq->when_can_borrow = !strcmp(v, "TryNextFlavor") ?
				FUNG_TRY_NEXT_FLAVOR : FUNG_MAY_STOP_SEARCH;
		else if (!strcmp(tok, "wcp"))
			cq->when_can_preempt = !strcmp(v, "TryNextFlavor") ?
				FUNG_TRY_NEXT_FLAVOR : FUNG_MAY_STOP_SEARCH;
		else if (!strcmp(tok, "pref"))
			cq->fung_preference =
				!strcmp(v, "PreemptionOverBorrowing") ?
				FPREF_PREEMPTION_OVER_BORROWING :
				FPREF_BORROWING_OVER_PREEMPTION;
		else if (!strcmp(tok, "w")) {
			cq->has_fs_weight = true;
			cq->fs_weight = atoll(v);
		} else
			ck_abort_msg("unknown policy key %s", tok);
	}
	free(buf);
}

/* ------------------------------------------------------------------ */
/* Object builders: everything stays in the pool until fx_end. */

static void add_flavor(const char *name)
{
	struct resource_flavor *rf = xcalloc(1, sizeof(*rf));

	rf->meta.name = xstrdup(name);
	rf->meta.uid = xasprintf("uid-rf-%s", name);
	rf->meta.generation = 1;
	rf->meta.creation_ms = T0 - 3600 * SEC;
	rf->version = API_V1BETA1;
	XGROW(P.rf, P.caprf, P.nrf + 1);
	P.rf[P.nrf++] = rf;
	sched_flavor_set(P.s, rf);
	CHECK();
}

/* weight: spec.fairSharing.weight in milli-units as text, or NULL. */
static struct cohort *add_cohort_w(const char *name, const char *parent,
				   const char *groups, const char *weight)
{
	struct cohort *c = xcalloc(1, sizeof(*c));

	c->meta.name = xstrdup(name);
	c->meta.uid = xasprintf("uid-co-%s", name);
	c->meta.generation = 1;
	c->meta.creation_ms = T0 - 3600 * SEC;
	c->version = API_V1BETA1;
	c->parent = xstrdup_or_null(parent);
	spec_groups(groups, &c->groups, &c->ngroups);
	if (weight) {
		c->has_fs_weight = true;
		c->fs_weight = atoll(weight);
	}
	XGROW(P.co, P.capco, P.nco + 1);
	P.co[P.nco++] = c;
	sched_cohort_set(P.s, c);
	CHECK();
	return c;
}

static struct cohort *add_cohort(const char *name, const char *parent,
				 const char *groups)
{
	return add_cohort_w(name, parent, groups, NULL);
}

static struct cluster_queue *mk_cq(const char *name, const char *cohort,
				   const char *groups, const char *policy)
{
	struct cluster_queue *cq = xcalloc(1, sizeof(*cq));

	cq->meta.name = xstrdup(name);
	cq->meta.uid = xasprintf("uid-cq-%s", name);
	cq->meta.generation = 1;
	cq->meta.creation_ms = T0 - 3600 * SEC;
	cq->version = API_V1BETA1;
	cq->cohort = xstrdup_or_null(cohort);
	spec_groups(groups, &cq->groups, &cq->ngroups);
	cq->strategy = QS_BEST_EFFORT_FIFO;
	cq->has_ns_selector = true; /* {}: every namespace */
	label_selector_init(&cq->ns_selector);
	cq->when_can_borrow = FUNG_MAY_STOP_SEARCH;  /* API default */
	cq->when_can_preempt = FUNG_TRY_NEXT_FLAVOR; /* API default */
	parse_policy(cq, policy);
	XGROW(P.cq, P.capcq, P.ncq + 1);
	P.cq[P.ncq++] = cq;
	return cq;
}

static struct cluster_queue *add_cq(const char *name, const char *cohort,
				    const char *groups, const char *policy)
{
	struct cluster_queue *cq = mk_cq(name, cohort, groups, policy);

	sched_cq_set(P.s, cq, NULL);
	CHECK();
	return cq;
}

static struct workload *pool_wl(const char *cq)
{
	struct workload *w = xcalloc(1, sizeof(*w));

	XGROW(P.wl, P.capwl, P.nwl + 1);
	P.wl[P.nwl].w = w;
	P.wl[P.nwl].cq = xstrdup_or_null(cq);
	P.nwl++;
	return w;
}

/* The last struct of that name in the pool. */
static struct pwl *wl_latest(const char *name)
{
	for (size_t i = P.nwl; i-- > 0;)
		if (!strcmp(P.wl[i].w->meta.name, name))
			return &P.wl[i];
	ck_abort_msg("no workload %s", name);
	return NULL;
}

static void wl_base(struct workload *w, const char *name, int32_t prio,
		    int64_t created)
{
	w->meta.name = xstrdup(name);
	w->meta.namespace = xstrdup("ns");
	w->meta.uid = xasprintf("uid-%s", name);
	w->meta.generation = 1;
	w->meta.creation_ms = created;
	smap_set(&w->meta.labels, LABEL_JOB_UID, "job-uid-x");
	w->version = API_V1BETA1;
	w->queue_name = xstrdup("lq");
	w->has_priority = true;
	w->priority = prio;
	w->active = true;
}

static struct pod_set *add_ps(struct workload *w, int32_t count,
			      const char *req)
{
	struct pod_set *ps;

	w->pod_sets = xrealloc(w->pod_sets,
			       (w->npod_sets + 1) * sizeof(*w->pod_sets));
	ps = &w->pod_sets[w->npod_sets++];
	memset(ps, 0, sizeof(*ps));
	ps->name = xstrdup(DEFAULT_PODSET_NAME);
	ps->count = count;
	ps->tmpl.containers = xcalloc(1, sizeof(*ps->tmpl.containers));
	ps->tmpl.ncontainers = 1;
	ps->tmpl.containers[0].name = xstrdup("c");
	reslist_init(&ps->tmpl.containers[0].requests);
	reslist_init(&ps->tmpl.containers[0].limits);
	spec_res(req, &ps->tmpl.containers[0].requests);
	node_affinity_init(&ps->tmpl.affinity);
	return ps;
}

static void put(struct workload *w)
{
	sched_wl_set(P.s, w, wl_latest(w->meta.name)->cq, "ns/lq");
	CHECK();
}

/* A pending workload: count pods of req, created at created. */
static struct workload *add_pending(const char *name, const char *cq,
				    int32_t prio, int64_t created,
				    int32_t count, const char *req,
				    int32_t min_count)
{
	struct workload *w = pool_wl(cq);
	struct pod_set *ps;

	wl_base(w, name, prio, created);
	ps = add_ps(w, count, req);
	if (min_count > 0) {
		ps->has_min_count = true;
		ps->min_count = min_count;
	}
	put(w);
	return w;
}

/*
 * An admitted workload holding quota in cq: one pod using total (every
 * resource on flavor), QuotaReserved=True since admitted (the candidate
 * order's "admitted at"), Admitted=True; with evicted, Evicted=True
 * (reason Preempted) and Preempted=True as a preemption in flight.
 */
static struct workload *add_admitted(const char *name, const char *cq,
				     int32_t prio, int64_t created,
				     int64_t admitted, const char *flavor,
				     const char *total, bool evicted)
{
	struct workload *w = pool_wl(cq);
	struct pod_set_assignment *a;
	char *msg;

	wl_base(w, name, prio, created);
	add_ps(w, 1, total);
	w->has_admission = true;
	w->admission.cluster_queue = xstrdup(cq);
	w->admission.psa = xcalloc(1, sizeof(*w->admission.psa));
	w->admission.npsa = 1;
	a = &w->admission.psa[0];
	a->name = xstrdup(DEFAULT_PODSET_NAME);
	a->has_count = true;
	a->count = 1;
	spec_res(total, &a->usage);
	for (size_t i = 0; i < a->usage.n; i++)
		smap_set(&a->flavors, a->usage.v[i].name, flavor);
	msg = xasprintf("Quota reserved in ClusterQueue %s", cq);
	conditions_set(&w->conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       msg, 1, admitted);
	free(msg);
	conditions_set(&w->conds, "Admitted", COND_TRUE, "Admitted",
		       "The workload is admitted", 1, admitted);
	if (evicted) {
		conditions_set(&w->conds, "Evicted", COND_TRUE, "Preempted",
			       "Preempted to accommodate a workload (UID: "
			       "uid-old, JobUID: UNKNOWN) due to "
			       "prioritization in the ClusterQueue", 1,
			       admitted + SEC);
		conditions_set(&w->conds, "Preempted", COND_TRUE,
			       "InClusterQueue", "earlier preemption", 1,
			       admitted + SEC);
	}
	put(w);
	return w;
}

/* A fresh pool copy of the latest struct of name (same queue). */
static struct workload *wl_copy(const char *name)
{
	struct pwl *old = wl_latest(name);
	const struct workload *src = old->w;
	char *cq = xstrdup_or_null(old->cq);
	struct workload *w = pool_wl(cq); /* may move the pool */

	free(cq);
	workload_copy(w, src);
	return w;
}

/* The eviction written back: Evicted=True / Preempted, quota kept. */
static void wl_mark_preempted(const char *name)
{
	struct workload *w = wl_copy(name);

	conditions_set(&w->conds, "Evicted", COND_TRUE, "Preempted",
		       "Preempted to accommodate a workload", 1, P.now);
	conditions_set(&w->conds, "Preempted", COND_TRUE, "InClusterQueue",
		       "Preempted to accommodate a workload", 1, P.now);
	put(w);
}

/* The job stopped: the reservation cleared, back to pending. */
static void wl_release(const char *name)
{
	struct workload *w = wl_copy(name);

	conditions_set(&w->conds, "Evicted", COND_TRUE, "Preempted",
		       "Preempted to accommodate a workload", 1, P.now);
	conditions_set(&w->conds, "Requeued", COND_TRUE, "Preempted",
		       "Preempted to accommodate a workload", 1, P.now);
	conditions_set(&w->conds, "QuotaReserved", COND_FALSE, "Pending",
		       "Preempted to accommodate a workload", 1, P.now);
	conditions_set(&w->conds, "Admitted", COND_FALSE, "NoReservation",
		       "The workload has no reservation", 1, P.now);
	admission_release(&w->admission);
	w->has_admission = false;
	put(w);
}

/* ------------------------------------------------------------------ */
/* Cycles and the decision log */

static void log_decision(const struct sched_decision *d)
{
	struct prec *r;

	XGROW(P.log, P.caplog, P.nlog + 1);
	r = &P.log[P.nlog++];
	memset(r, 0, sizeof(*r));
	ck_assert_ptr_nonnull(d->wl);
	r->wl = xstrdup(d->wl->meta.name);
	r->kind = d->kind;
	r->cq = xstrdup_or_null(d->cq);
	r->cycle = P.ncycles;
	if (d->kind == DEC_ADMIT) {
		sched_decision_admission(P.s, d, &r->adm);
		return;
	}
	ck_assert_ptr_nonnull(d->reason);
	ck_assert_ptr_nonnull(d->message);
	r->reason = xstrdup(d->reason);
	r->msg = xstrdup(d->message);
	if (d->kind != DEC_PREEMPT)
		return;
	ck_assert_str_eq(d->reason, "Preempted");
	ck_assert_ptr_nonnull(d->preempt_reason);
	ck_assert_ptr_nonnull(d->preemptor);
	ck_assert_ptr_nonnull(d->preemptor_cq);
	r->preempt_reason = d->preempt_reason;
	r->preemptor = xstrdup(d->preemptor->meta.name);
	r->preemptor_cq = xstrdup(d->preemptor_cq);
}

static void cycle(void)
{
	size_t n, admits = 0;

	sched_decisions_clear(&P.d);
	P.ncycles++;
	n = sched_cycle(P.s, P.now, &P.d);
	CHECK();
	for (size_t i = 0; i < P.d.n; i++) {
		log_decision(&P.d.v[i]);
		if (P.d.v[i].kind == DEC_ADMIT)
			admits++;
	}
	ck_assert_uint_eq(n, admits);
}

/* The last record of wl of that kind in cycle c (0: any cycle). */
static const struct prec *find_rec(const char *wl, enum sched_dec_kind k,
				   unsigned c)
{
	for (size_t i = P.nlog; i-- > 0;)
		if (!strcmp(P.log[i].wl, wl) && P.log[i].kind == k &&
		    (!c || P.log[i].cycle == c))
			return &P.log[i];
	return NULL;
}

static size_t count_rec(const char *wl, enum sched_dec_kind k)
{
	size_t n = 0;

	for (size_t i = 0; i < P.nlog; i++)
		if (!strcmp(P.log[i].wl, wl) && P.log[i].kind == k)
			n++;
	return n;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

/* A readable list of the decisions of cycle c, for failure messages. */
static const char *log_text(unsigned c)
{
	static char buf[4096];
	size_t off = 0;
	static const char *const kinds[] = { "admit", "pending", "evict",
					     "requeue", "preempt" };

	buf[0] = '\0';
	for (size_t i = 0; i < P.nlog && off < sizeof(buf) - 200; i++) {
		const struct prec *r = &P.log[i];

		if (c && r->cycle != c)
			continue;
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					"\n    [%u] %s %s cq=%s %s %s",
					r->cycle, kinds[r->kind], r->wl,
					r->cq ? r->cq : "-",
					r->preempt_reason ?
					r->preempt_reason : "",
					r->msg ? r->msg : "");
	}
	return buf;
}

/* The flavor of resource res in the admission, or NULL. */
static const char *adm_flavor(const struct prec *r, const char *res)
{
	for (size_t i = 0; i < r->adm.npsa; i++) {
		const char *f = smap_get(&r->adm.psa[i].flavors, res);

		if (f)
			return f;
	}
	return NULL;
}

static int32_t adm_count(const struct prec *r)
{
	ck_assert_uint_ge(r->adm.npsa, 1);
	return r->adm.psa[0].has_count ? r->adm.psa[0].count : -1;
}

/* ------------------------------------------------------------------ */
/* 1. The table */

struct t_co {
	const char *name, *parent, *groups;
	const char *weight; /* fairSharing.weight, milli-units; NULL unset */
};

struct t_cq {
	const char *name, *cohort, *groups, *policy;
};

/* Admitted T0 - age s (created 60 s before), one pod using use on
 * flavor. */
struct t_adm {
	const char *name, *cq;
	int prio, age;
	const char *flavor, *use;
	bool evicted;
};

/* Pending, created T0 - age s: count pods of req (minCount min). */
struct t_pend {
	const char *name, *cq;
	int prio, age, count;
	const char *req;
	int min;
};

#define NADM 10

struct pcase {
	const char *name;
	struct t_co co[4];
	struct t_cq cq[5];
	struct t_adm adm[NADM];
	struct t_pend pend[3];
	/* DEC_PREEMPT of cycle 1, each "victim:Reason[@preemptor]" (the
	 * first pending workload by default); space separated */
	const char *victims;
	/* admitted in cycle 1: "name:flavor[:count]" */
	const char *now;
	/* DEC_PENDING of cycle 1 ending ". Pending the preemption of N
	 * workload(s)": "name:N" */
	const char *waiting;
	/* admitted once the victims (and the Evicted ones) released */
	const char *after;
	/* NULL: classical; else fair sharing with these strategies (see
	 * fx_begin_fs) */
	const char *fs;
};

#define POL_LP "wcq=LowerPriority"
#define ONE "default:cpu=4"

static const struct pcase cases[] = {
	/* §4.1 withinClusterQueue */
	{ .name = "within_never",
	  .cq = { { "a", NULL, ONE, NULL } },
	  .adm = { { "low", "a", 0, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	/* lowest priority first, then the newest admitted; mid (5) kept */
	{ .name = "within_lower_priority",
	  .cq = { { "a", NULL, "default:cpu=6", POL_LP } },
	  .adm = { { "low1", "a", 0, 100, "default", "cpu=2", false },
		   { "low2", "a", 0, 50, "default", "cpu=2", false },
		   { "mid", "a", 5, 200, "default", "cpu=2", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "low2:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:default" },
	{ .name = "within_lower_priority_equal",
	  .cq = { { "a", NULL, ONE, POL_LP } },
	  .adm = { { "e", "a", 5, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 5, 300, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	/* equal priority: the preemptor (created T0-200s) is older than the
	 * victim (created T0-160s) */
	{ .name = "within_newer_equal_preemptor_older",
	  .cq = { { "a", NULL, ONE,
		    "wcq=LowerOrNewerEqualPriority" } },
	  .adm = { { "v", "a", 5, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 5, 200, 1, "cpu=2", 0 } },
	  .victims = "v:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:default" },
	{ .name = "within_newer_equal_preemptor_newer",
	  .cq = { { "a", NULL, ONE,
		    "wcq=LowerOrNewerEqualPriority" } },
	  .adm = { { "v", "a", 5, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 5, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	/* equal creation times: "strictly earlier" does not hold */
	{ .name = "within_newer_equal_same_time",
	  .cq = { { "a", NULL, ONE,
		    "wcq=LowerOrNewerEqualPriority" } },
	  .adm = { { "v", "a", 5, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 5, 160, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	{ .name = "within_newer_equal_lower_priority",
	  .cq = { { "a", NULL, ONE,
		    "wcq=LowerOrNewerEqualPriority" } },
	  .adm = { { "v", "a", 4, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 5, 10, 1, "cpu=2", 0 } },
	  .victims = "v:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:default" },

	/* §4.1 reclaimWithinCohort */
	{ .name = "reclaim_never",
	  .cq = { { "a", "co", ONE, NULL }, { "b", "co", ONE, NULL } },
	  .adm = { { "bw1", "b", 0, 100, "default", "cpu=4", false },
		   { "bw2", "b", 0, 50, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	{ .name = "reclaim_lower_priority",
	  .cq = { { "a", "co", ONE, "rwc=LowerPriority" },
		  { "b", "co", ONE, NULL } },
	  .adm = { { "bw1", "b", 0, 100, "default", "cpu=4", false },
		   { "bw2", "b", 10, 50, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 5, 10, 1, "cpu=2", 0 } },
	  .victims = "bw1:InCohortReclamation", .now = "",
	  .waiting = "p:1", .after = "p:default" },
	{ .name = "reclaim_lower_priority_none_lower",
	  .cq = { { "a", "co", ONE, "rwc=LowerPriority" },
		  { "b", "co", ONE, NULL } },
	  .adm = { { "bw1", "b", 0, 100, "default", "cpu=4", false },
		   { "bw2", "b", 10, 50, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	/* Any: priorities only order the candidates */
	{ .name = "reclaim_any",
	  .cq = { { "a", "co", ONE, "rwc=Any" }, { "b", "co", ONE, NULL } },
	  .adm = { { "bw1", "b", 5, 100, "default", "cpu=4", false },
		   { "bw2", "b", 3, 50, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "bw2:InCohortReclamation", .now = "",
	  .waiting = "p:1", .after = "p:default" },
	/* b is within its nominal: its lower, newer workload is safe */
	{ .name = "reclaim_only_borrowing_queues",
	  .cq = { { "a", "co", ONE, "rwc=Any" }, { "b", "co", ONE, NULL },
		  { "c", "co", ONE, NULL } },
	  .adm = { { "b1", "b", -5, 10, "default", "cpu=4", false },
		   { "c1", "c", 0, 100, "default", "cpu=4", false },
		   { "c2", "c", 0, 50, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 0, 20, 1, "cpu=4", 0 } },
	  .victims = "c2:InCohortReclamation", .now = "", .waiting = "p:1",
	  .after = "p:default" },
	/*
	 * Order c2, c1, b1. Removing c2 brings c back to its nominal, so
	 * c1 is no longer a valid candidate when reached; b1 makes it fit,
	 * and fill-back gives c2 back (§4.3 validity, §4.4 fill back).
	 */
	{ .name = "reclaim_validity_and_fill_back",
	  .cq = { { "a", "co", ONE, "rwc=Any" },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", "default:cpu=2", NULL } },
	  .adm = { { "b1", "b", 1, 100, "default", "cpu=3", false },
		   { "c1", "c", 0, 100, "default", "cpu=2", false },
		   { "c2", "c", 0, 50, "default", "cpu=1", false } },
	  .pend = { { "p", "a", 0, 20, 1, "cpu=4", 0 } },
	  .victims = "b1:InCohortReclamation", .now = "", .waiting = "p:1",
	  .after = "p:default" },

	/* §4.1 borrowWithinCohort: p (6) borrows 4 after preempting */
	{ .name = "borrow_within_cohort",
	  .cq = { { "a", "co", "default:cpu=2",
		    "rwc=LowerPriority bwc=LowerPriority" },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", ONE, NULL } },
	  .adm = { { "b1", "b", 0, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=6", 0 } },
	  .victims = "b1:InCohortReclaimWhileBorrowing", .now = "",
	  .waiting = "p:1", .after = "p:default" },
	{ .name = "borrow_within_cohort_above_threshold",
	  .cq = { { "a", "co", "default:cpu=2",
		    "rwc=LowerPriority bwc=LowerPriority thr=-1" },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", ONE, NULL } },
	  .adm = { { "b1", "b", 0, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=6", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	{ .name = "borrow_within_cohort_at_threshold",
	  .cq = { { "a", "co", "default:cpu=2",
		    "rwc=LowerPriority bwc=LowerPriority thr=0" },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", ONE, NULL } },
	  .adm = { { "b1", "b", 0, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=6", 0 } },
	  .victims = "b1:InCohortReclaimWhileBorrowing", .now = "",
	  .waiting = "p:1", .after = "p:default" },
	/* without borrowWithinCohort the same preemptor cannot preempt */
	{ .name = "borrow_within_cohort_never",
	  .cq = { { "a", "co", "default:cpu=2", "rwc=LowerPriority" },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", ONE, NULL } },
	  .adm = { { "b1", "b", 0, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=6", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },

	/* hierarchical cohorts: root{left{a,b}, right{c}} */
	{ .name = "hier_reclaim_two_levels",
	  .co = { { "root", NULL, NULL }, { "left", "root", NULL },
		  { "right", "root", NULL } },
	  .cq = { { "a", "left", ONE, "rwc=Any" },
		  { "b", "left", ONE, NULL },
		  { "c", "right", ONE, NULL } },
	  .adm = { { "b1", "b", -1, 5, "default", "cpu=4", false },
		   { "c1", "c", 0, 100, "default", "cpu=4", false },
		   { "c2", "c", 0, 50, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 0, 10, 1, "cpu=4", 0 } },
	  .victims = "c2:InCohortReclamation", .now = "", .waiting = "p:1",
	  .after = "p:default" },
	/* a would borrow, but left fits p: the advantage is won at left,
	 * so higher-priority workloads of c are reclaimed */
	{ .name = "hier_advantage_lower_priority_preemptor",
	  .co = { { "root", NULL, NULL }, { "left", "root", NULL },
		  { "right", "root", NULL } },
	  .cq = { { "a", "left", "default:cpu=2", "rwc=Any" },
		  { "b", "left", ONE, NULL },
		  { "c", "right", "default:cpu=2", NULL } },
	  .adm = { { "b1", "b", 0, 100, "default", "cpu=2", false },
		   { "c1", "c", 5, 100, "default", "cpu=2", false },
		   { "c2", "c", 5, 50, "default", "cpu=2", false } },
	  .pend = { { "p", "a", 0, 10, 1, "cpu=4", 0 } },
	  .victims = "c2:InCohortReclamation", .now = "", .waiting = "p:1",
	  .after = "p:default" },
	/* the same, but left is full: no advantage, victims >= p's
	 * priority cannot be taken while borrowing */
	{ .name = "hier_no_advantage",
	  .co = { { "root", NULL, NULL }, { "left", "root", NULL },
		  { "right", "root", NULL } },
	  .cq = { { "a", "left", "default:cpu=2",
		    "rwc=Any bwc=LowerPriority" },
		  { "b", "left", ONE, NULL },
		  { "c", "right", "default:cpu=2", NULL } },
	  .adm = { { "b1", "b", 0, 100, "default", "cpu=4", false },
		   { "c1", "c", 5, 100, "default", "cpu=2", false },
		   { "c2", "c", 5, 50, "default", "cpu=2", false } },
	  .pend = { { "p", "a", 0, 10, 1, "cpu=4", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	/* three levels: root(own 1){mid{left{a}, m}, z}; z2 is tried
	 * first, z1 makes it fit, z2 is given back */
	{ .name = "hier_three_levels_fill_back",
	  .co = { { "root", NULL, "default:cpu=1" },
		  { "mid", "root", NULL }, { "left", "mid", NULL } },
	  .cq = { { "a", "left", ONE, "rwc=LowerPriority" },
		  { "m", "mid", "default:cpu=2", NULL },
		  { "z", "root", "default:cpu=2", NULL } },
	  .adm = { { "z1", "z", 0, 100, "default", "cpu=4", false },
		   { "z2", "z", 0, 50, "default", "cpu=2", false },
		   { "m1", "m", 0, 10, "default", "cpu=2", false } },
	  .pend = { { "p", "a", 3, 10, 1, "cpu=4", 0 } },
	  .victims = "z1:InCohortReclamation", .now = "", .waiting = "p:1",
	  .after = "p:default" },

	/* §4.2 order */
	{ .name = "order_evicted_first",
	  .cq = { { "a", NULL, ONE, POL_LP } },
	  .adm = { { "vev", "a", 3, 200, "default", "cpu=2", true },
		   { "vnew", "a", 0, 10, "default", "cpu=2", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "p:1", .after = "p:default" },
	{ .name = "order_other_queues_first",
	  .cq = { { "a", "co", ONE, POL_LP " rwc=Any" },
		  { "b", "co", ONE, NULL } },
	  .adm = { { "a1", "a", 0, 10, "default", "cpu=2", false },
		   { "b1", "b", 5, 100, "default", "cpu=4", false },
		   { "b2", "b", 5, 50, "default", "cpu=2", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "b2:InCohortReclamation", .now = "", .waiting = "p:1",
	  .after = "p:default" },
	/*
	 * Only cpu needs preemption; memory fits, by borrowing. am uses
	 * memory only, so it is no candidate: the no-borrowing attempt
	 * (bc, ac) fails on memory, the borrowing one takes ac. Were am a
	 * candidate, {bc, am} would be chosen.
	 */
	{ .name = "victim_must_use_needed_resource",
	  .cq = { { "a", "co", "default:cpu=4,memory=4Gi",
		    POL_LP " rwc=LowerPriority" },
		  { "b", "co", "default:cpu=4,memory=4Gi", NULL } },
	  .adm = { { "am", "a", 0, 10, "default", "memory=3Gi", false },
		   { "ac", "a", 0, 100, "default", "cpu=1", false },
		   { "bc", "b", 0, 50, "default", "cpu=6", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2,memory=2Gi", 0 } },
	  .victims = "ac:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:default" },

	/* §2.3 / kueue-api §3.3 flavorFungibility */
	{ .name = "fungibility_try_next_flavor_fits",
	  .cq = { { "a", NULL, "f1:cpu=4 f2:cpu=4", POL_LP } },
	  .adm = { { "x", "a", 0, 100, "f1", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "p:f2", .waiting = "", .after = "" },
	{ .name = "fungibility_preempt_may_stop_search",
	  .cq = { { "a", NULL, "f1:cpu=4 f2:cpu=4",
		    POL_LP " wcp=MayStopSearch" } },
	  .adm = { { "x", "a", 0, 100, "f1", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "x:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:f1" },
	/* f1 has no candidates (hi is not lower), so the search goes on
	 * even with MayStopSearch and stops at f2 */
	{ .name = "fungibility_no_candidates_next_flavor",
	  .cq = { { "a", NULL, "f1:cpu=4 f2:cpu=4",
		    POL_LP " wcp=MayStopSearch" } },
	  .adm = { { "hi", "a", 20, 100, "f1", "cpu=4", false },
		   { "lo", "a", 0, 100, "f2", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "lo:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:f2" },
	/*
	 * f1: p (3) is above a's nominal (2), does not fit a subtree below
	 * the root and borrowWithinCohort is Never, so §2.3 gives noFit
	 * without asking the oracle (removing a1 would make it fit by
	 * borrowing); f2 preempts a2. With MayStopSearch a preempting f1
	 * would have stopped the search.
	 */
	{ .name = "fungibility_nominal_below_request_is_nofit",
	  .cq = { { "a", "co", "f1:cpu=2 f2:cpu=4",
		    POL_LP " wcp=MayStopSearch" },
		  { "b", "co", "f1:cpu=4 f2:cpu=0", NULL } },
	  .adm = { { "a1", "a", 0, 100, "f1", "cpu=3", false },
		   { "b1", "b", 0, 100, "f1", "cpu=3", false },
		   { "a2", "a", 0, 50, "f2", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=3", 0 } },
	  .victims = "a2:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:f2" },
	/* both flavors need preemption; after it p borrows in f1 (level 1)
	 * and not in f2 (level 0): f2 is preferred */
	{ .name = "fungibility_preempt_lower_borrowing_wins",
	  .cq = { { "a", "co", "f1:cpu=2 f2:cpu=4",
		    POL_LP " rwc=LowerPriority bwc=LowerPriority" },
		  { "b", "co", "f1:cpu=4 f2:cpu=0", NULL } },
	  .adm = { { "a1", "a", 0, 100, "f1", "cpu=3", false },
		   { "b1", "b", 0, 100, "f1", "cpu=3", false },
		   { "a2", "a", 0, 50, "f2", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=3", 0 } },
	  .victims = "a2:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:f2" },
	{ .name = "fungibility_preempt_borrowing_may_stop",
	  .cq = { { "a", "co", "f1:cpu=2 f2:cpu=4",
		    POL_LP " rwc=LowerPriority bwc=LowerPriority "
		    "wcp=MayStopSearch" },
		  { "b", "co", "f1:cpu=4 f2:cpu=0", NULL } },
	  .adm = { { "a1", "a", 0, 100, "f1", "cpu=3", false },
		   { "b1", "b", 0, 100, "f1", "cpu=3", false },
		   { "a2", "a", 0, 50, "f2", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=3", 0 } },
	  .victims = "a1:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:f1" },
	/* two resource groups: cpu fits in f1, memory needs preemption in
	 * g1; only a workload using g1 memory is a victim */
	{ .name = "two_groups_only_needed_group",
	  .cq = { { "a", NULL, "f1:cpu=4; g1:memory=4Gi", POL_LP } },
	  .adm = { { "xc", "a", 0, 10, "f1", "cpu=3", false },
		   { "xm", "a", 0, 100, "g1", "memory=4Gi", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=1,memory=2Gi", 0 } },
	  .victims = "xm:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:f1" },
	/* f1 fits by borrowing, f2 needs preemption */
	{ .name = "fungibility_borrow_stops_search",
	  .cq = { { "a", "co", "f1:cpu=0 f2:cpu=4", POL_LP },
		  { "b", "co", "f1:cpu=4 f2:cpu=0", NULL } },
	  .adm = { { "x", "a", 0, 100, "f2", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "p:f1", .waiting = "", .after = "" },
	{ .name = "fungibility_borrow_try_next_fit_beats_preempt",
	  .cq = { { "a", "co", "f1:cpu=0 f2:cpu=4",
		    POL_LP " wcb=TryNextFlavor" },
		  { "b", "co", "f1:cpu=4 f2:cpu=0", NULL } },
	  .adm = { { "x", "a", 0, 100, "f2", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "p:f1", .waiting = "", .after = "" },
	{ .name = "fungibility_borrow_try_next_preempt_stops",
	  .cq = { { "a", "co", "f1:cpu=0 f2:cpu=4",
		    POL_LP " wcb=TryNextFlavor wcp=MayStopSearch" },
		  { "b", "co", "f1:cpu=4 f2:cpu=0", NULL } },
	  .adm = { { "x", "a", 0, 100, "f2", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "x:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:f2" },
	{ .name = "fungibility_preemption_over_borrowing",
	  .cq = { { "a", "co", "f1:cpu=0 f2:cpu=4",
		    POL_LP " wcb=TryNextFlavor "
		    "pref=PreemptionOverBorrowing" },
		  { "b", "co", "f1:cpu=4 f2:cpu=0", NULL } },
	  .adm = { { "x", "a", 0, 100, "f2", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "x:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:f2" },
	/* f1 needs preemption in a, f2 only reclaim from b: reclaim is the
	 * better mode, so f2 */
	{ .name = "fungibility_reclaim_beats_preempt",
	  .cq = { { "a", "co", "f1:cpu=4 f2:cpu=4", POL_LP " rwc=Any" },
		  { "b", "co", "f1:cpu=0 f2:cpu=2", NULL } },
	  .adm = { { "x", "a", 0, 100, "f1", "cpu=4", false },
		   { "y", "b", 0, 50, "f2", "cpu=6", false } },
	  .pend = { { "p", "a", 10, 10, 1, "cpu=2", 0 } },
	  .victims = "y:InCohortReclamation", .now = "", .waiting = "p:1",
	  .after = "p:f2" },

	/* §2.4 partial admission: full count with preemption first */
	{ .name = "partial_full_count_first",
	  .cq = { { "a", NULL, ONE, POL_LP } },
	  .adm = { { "x1", "a", 0, 100, "default", "cpu=2", false },
		   { "x2", "a", 0, 50, "default", "cpu=2", false } },
	  .pend = { { "p", "a", 10, 10, 4, "cpu=1", 2 } },
	  .victims = "x1:InClusterQueue x2:InClusterQueue", .now = "",
	  .waiting = "p:2", .after = "p:default:4" },
	{ .name = "partial_reduced_with_preemption",
	  .cq = { { "a", NULL, ONE, POL_LP } },
	  .adm = { { "x1", "a", 20, 100, "default", "cpu=2", false },
		   { "x2", "a", 0, 50, "default", "cpu=2", false } },
	  .pend = { { "p", "a", 10, 10, 4, "cpu=1", 2 } },
	  .victims = "x2:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:default:2" },

	/* 6 pods exceed the maximum capacity: the reduced count (4) is
	 * searched, and it needs preemption */
	{ .name = "partial_nofit_full_reduced_preempts",
	  .cq = { { "a", NULL, ONE, POL_LP } },
	  .adm = { { "x", "a", 0, 100, "default", "cpu=4", false } },
	  .pend = { { "p", "a", 10, 10, 6, "cpu=1", 2 } },
	  .victims = "x:InClusterQueue", .now = "", .waiting = "p:1",
	  .after = "p:default:4" },

	/* §2.6 within one cycle */
	{ .name = "cycle_overlapping_victims_first_preempts",
	  .cq = { { "a", "co", "default:cpu=2", "rwc=Any" },
		  { "b", "co", "default:cpu=2", "rwc=Any" },
		  { "c", "co", "default:cpu=2", NULL } },
	  .adm = { { "c1", "c", 0, 100, "default", "cpu=6", false } },
	  .pend = { { "pa", "a", 5, 20, 1, "cpu=2", 0 },
		    { "pb", "b", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "c1:InCohortReclamation@pa", .now = "",
	  .waiting = "pa:1", .after = "pa:default pb:default" },
	/*
	 * pa and pb both pick c1 (the newest); pa goes first. pb's
	 * assignment is recomputed with c1 gone (gate
	 * RecomputeAssignmentUponPreemptionTargetsOverlap, on): it still
	 * needs preemption, now of c2, which overlaps nothing, so pb
	 * preempts c2 in the same cycle.
	 */
	{ .name = "cycle_overlap_recomputed_new_targets",
	  .cq = { { "a", "co", "default:cpu=2", "rwc=Any" },
		  { "b", "co", "default:cpu=2", "rwc=Any" },
		  { "c", "co", "default:cpu=0", NULL } },
	  .adm = { { "c1", "c", 0, 50, "default", "cpu=2", false },
		   { "c2", "c", 0, 100, "default", "cpu=2", false } },
	  .pend = { { "pa", "a", 5, 20, 1, "cpu=2", 0 },
		    { "pb", "b", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "c1:InCohortReclamation@pa c2:InCohortReclamation@pb",
	  .now = "", .waiting = "pa:1 pb:1",
	  .after = "pa:default pb:default" },
	{ .name = "cycle_preemptor_no_longer_fits",
	  .cq = { { "a", "co", ONE, NULL },
		  { "b", "co", ONE, "rwc=Any bwc=LowerPriority" },
		  { "c", "co", ONE, NULL } },
	  .adm = { { "c1", "c", 0, 100, "default", "cpu=6", false } },
	  .pend = { { "pa", "a", 20, 20, 1, "cpu=6", 0 },
		    { "pb", "b", 10, 10, 1, "cpu=8", 0 } },
	  .victims = "", .now = "pa:default", .waiting = "", .after = "" },
	/* no candidates (hb is not lower): wa reserves its nominal, so
	 * wb cannot borrow it in this cycle */
	{ .name = "cycle_no_candidates_reserves",
	  .cq = { { "A", "co", ONE, "rwc=LowerPriority" },
		  { "B", "co", ONE, NULL } },
	  .adm = { { "hb", "B", 10, 100, "default", "cpu=6", false } },
	  .pend = { { "wa", "A", 5, 20, 1, "cpu=4", 0 },
		    { "wb", "B", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "" },
	/*
	 * With Any, hb is preempted. Kueue (§2.6, scheduler.go fits())
	 * counts hb out for later entries and admits wb in this cycle,
	 * while hb still runs. cueue deliberately does not (flavors/README:
	 * reserved quota never exceeds the queues' limits): wb waits until
	 * hb released its quota, then both get in.
	 */
	{ .name = "cycle_fit_waits_for_victims_to_leave",
	  .cq = { { "A", "co", ONE, "rwc=Any" }, { "B", "co", ONE, NULL } },
	  .adm = { { "hb", "B", 10, 100, "default", "cpu=6", false } },
	  .pend = { { "wa", "A", 5, 20, 1, "cpu=4", 0 },
		    { "wb", "B", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "hb:InCohortReclamation@wa", .now = "",
	  .waiting = "wa:1", .after = "wa:default wb:default" },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static const struct t_adm *case_adm(const struct pcase *c, const char *name)
{
	for (size_t i = 0; i < NADM && c->adm[i].name; i++)
		if (!strcmp(c->adm[i].name, name))
			return &c->adm[i];
	return NULL;
}

static const struct t_pend *case_pend(const struct pcase *c,
				      const char *name)
{
	for (size_t i = 0; i < 3 && c->pend[i].name; i++)
		if (!strcmp(c->pend[i].name, name))
			return &c->pend[i];
	return NULL;
}

static size_t case_npend(const struct pcase *c)
{
	size_t n = 0;

	while (n < 3 && c->pend[n].name)
		n++;
	return n;
}

static void case_build(const struct pcase *c)
{
	add_flavor("default");
	add_flavor("f1");
	add_flavor("f2");
	add_flavor("g1");
	for (size_t i = 0; i < 4 && c->co[i].name; i++)
		add_cohort_w(c->co[i].name, c->co[i].parent, c->co[i].groups,
			     c->co[i].weight);
	for (size_t i = 0; i < 5 && c->cq[i].name; i++)
		add_cq(c->cq[i].name, c->cq[i].cohort, c->cq[i].groups,
		       c->cq[i].policy);
	for (size_t i = 0; i < NADM && c->adm[i].name; i++) {
		const struct t_adm *a = &c->adm[i];
		int64_t at = T0 - a->age * SEC;

		add_admitted(a->name, a->cq, a->prio, at - 60 * SEC, at,
			     a->flavor, a->use, a->evicted);
	}
	for (size_t i = 0; i < 3 && c->pend[i].name; i++) {
		const struct t_pend *p = &c->pend[i];

		add_pending(p->name, p->cq, p->prio, T0 - p->age * SEC,
			    p->count, p->req, p->min);
	}
}

/* Splits "a b c" into tokens (at most 8, each < 64 chars). */
static size_t words(const char *text, char out[8][64])
{
	size_t n = 0;
	const char *p = text;

	while (p && *p) {
		size_t len;

		while (*p == ' ')
			p++;
		len = strcspn(p, " ");
		if (!len)
			break;
		ck_assert_uint_lt(n, 8);
		ck_assert_uint_lt(len, 64);
		memcpy(out[n], p, len);
		out[n][len] = '\0';
		n++;
		p += len;
	}
	return n;
}

/* "x:y[:z]" -> fields (modified in place); returns how many. */
static size_t fields(char *w, char **f)
{
	size_t n = 0;
	char *save = NULL;

	for (char *t = strtok_r(w, ":@", &save); t && n < 3;
	     t = strtok_r(NULL, ":@", &save))
		f[n++] = t;
	return n;
}

static void check_admits(const struct pcase *c, const char *spec,
			 unsigned in_cycle)
{
	char w[8][64];
	size_t n = words(spec, w);

	for (size_t i = 0; i < n; i++) {
		char *f[3] = { NULL, NULL, NULL };
		const struct prec *r;
		const char *got;

		fields(w[i], f);
		r = find_rec(f[0], DEC_ADMIT, in_cycle);
		ck_assert_msg(r, "%s: %s not admitted%s; decisions:%s",
			      c->name, f[0],
			      in_cycle ? " in cycle 1" : "", log_text(0));
		got = adm_flavor(r, "cpu");
		ck_assert_msg(got && !strcmp(got, f[1]),
			      "%s: %s admitted on %s, expected %s", c->name,
			      f[0], got ? got : "(none)", f[1]);
		if (f[2])
			ck_assert_msg(adm_count(r) == atoi(f[2]),
				      "%s: %s admitted with count %d, "
				      "expected %s", c->name, f[0],
				      (int)adm_count(r), f[2]);
	}
}

static bool listed(const char *spec, const char *name)
{
	char w[8][64];
	size_t n = words(spec, w);

	for (size_t i = 0; i < n; i++) {
		char *f[3] = { NULL, NULL, NULL };

		fields(w[i], f);
		if (!strcmp(f[0], name))
			return true;
	}
	return false;
}

/* The DEC_PREEMPT of cycle 1 are exactly c->victims. */
static void check_victims(const struct pcase *c)
{
	char w[8][64];
	size_t n = words(c->victims, w), seen = 0;

	for (size_t i = 0; i < P.nlog; i++)
		if (P.log[i].cycle == 1 && P.log[i].kind == DEC_PREEMPT)
			seen++;
	ck_assert_msg(seen == n, "%s: %zu preemptions, expected %zu (%s);"
		      " decisions:%s", c->name, seen, n, c->victims,
		      log_text(1));
	for (size_t i = 0; i < n; i++) {
		char *f[3] = { NULL, NULL, NULL };
		const char *pre;
		const struct t_adm *a;
		const struct t_pend *p;
		const struct prec *r;

		fields(w[i], f);
		pre = f[2] ? f[2] : c->pend[0].name;
		a = case_adm(c, f[0]);
		p = case_pend(c, pre);
		ck_assert_ptr_nonnull(a);
		ck_assert_ptr_nonnull(p);
		r = find_rec(f[0], DEC_PREEMPT, 1);
		ck_assert_msg(r, "%s: %s not preempted; decisions:%s",
			      c->name, f[0], log_text(1));
		ck_assert_uint_eq(count_rec(f[0], DEC_PREEMPT), 1);
		ck_assert_msg(!strcmp(r->preempt_reason, f[1]),
			      "%s: %s preempted with %s, expected %s",
			      c->name, f[0], r->preempt_reason, f[1]);
		ck_assert_msg(!strcmp(r->preemptor, pre),
			      "%s: %s preempted for %s, expected %s",
			      c->name, f[0], r->preemptor, pre);
		ck_assert_str_eq(r->preemptor_cq, p->cq);
		ck_assert_str_eq(r->cq, a->cq);
		/* victims keep their quota until released */
		ck_assert(sched_wl_holds_quota(P.s, "ns", f[0]));
	}
}

static void check_waiting(const struct pcase *c)
{
	char w[8][64];
	size_t n = words(c->waiting, w);

	for (size_t i = 0; i < n; i++) {
		char *f[3] = { NULL, NULL, NULL };
		const struct prec *r;
		char *suffix;

		fields(w[i], f);
		r = find_rec(f[0], DEC_PENDING, 1);
		ck_assert_msg(r, "%s: no pending decision for %s; "
			      "decisions:%s", c->name, f[0], log_text(1));
		suffix = xasprintf(PENDING_SUFFIX "%s workload(s)", f[1]);
		ck_assert_msg(ends_with(r->msg, suffix),
			      "%s: %s message '%s' does not end with '%s'",
			      c->name, f[0], r->msg, suffix);
		free(suffix);
		ck_assert_str_eq(r->reason, "Pending");
	}
	/* one pending workload: nothing else may claim a preemption */
	if (case_npend(c) == 1 && n == 0) {
		const struct prec *r = find_rec(c->pend[0].name, DEC_PENDING,
						1);

		if (r)
			ck_assert_msg(!strstr(r->msg, PENDING_SUFFIX),
				      "%s: unexpected '%s'", c->name, r->msg);
	}
}

/* One row: Kueue cycles (max_rounds 1), classical or fair sharing. */
static void run_case(const struct pcase *c)
{
	size_t before;

	fx_begin_fs(1, c->fs);
	case_build(c);
	cycle();
	check_victims(c);
	check_admits(c, c->now, 1);
	for (size_t i = 0; i < 3 && c->pend[i].name; i++)
		if (!listed(c->now, c->pend[i].name))
			ck_assert_msg(!find_rec(c->pend[i].name, DEC_ADMIT, 1),
				      "%s: %s admitted in cycle 1;"
				      " decisions:%s", c->name,
				      c->pend[i].name, log_text(1));
	check_waiting(c);
	if (!*c->victims && !*c->waiting)
		goto out;

	/* Not admitted while the victims hold their quota, and a victim
	 * already preempted is not preempted again. */
	before = P.nlog;
	cycle();
	for (size_t i = before; i < P.nlog; i++) {
		const struct prec *r = &P.log[i];

		ck_assert_msg(r->kind != DEC_PREEMPT ||
			      count_rec(r->wl, DEC_PREEMPT) == 1,
			      "%s: %s preempted twice;%s", c->name, r->wl,
			      log_text(0));
		ck_assert_msg(r->kind != DEC_PREEMPT || !case_adm(c, r->wl) ||
			      !case_adm(c, r->wl)->evicted,
			      "%s: evicted %s preempted again", c->name,
			      r->wl);
		ck_assert_msg(r->kind != DEC_ADMIT ||
			      !listed(c->waiting, r->wl),
			      "%s: %s admitted before its victims released;"
			      "%s", c->name, r->wl, log_text(0));
	}

	/* The victims (and the Evicted ones) release their quota. */
	P.now += 5 * SEC;
	for (size_t i = 0; i < NADM && c->adm[i].name; i++)
		if (c->adm[i].evicted ||
		    count_rec(c->adm[i].name, DEC_PREEMPT) > 0)
			wl_release(c->adm[i].name);
	for (int k = 0; k < 4; k++)
		cycle();
	check_admits(c, c->after, 0);
out:
	fx_end();
}

START_TEST(table)
{
	run_case(&cases[_i]);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The table rows the reference can judge (one flavor, one pending
 * workload, no minCount) agree with it: a wrong hand-written row or a
 * wrong reference both fail here. */

static const char *const res_names[REF_PREEMPT_NRES] = { "cpu", "memory" };

static int scn_node(struct ref_preempt_scn *s, const char *name, bool is_cq)
{
	for (size_t i = 0; i < s->nnodes; i++)
		if (s->node[i].is_cq == is_cq &&
		    !strcmp(s->node[i].name, name))
			return (int)i;
	ck_assert_uint_lt(s->nnodes, REF_PREEMPT_MAX_NODES);
	memset(&s->node[s->nnodes], 0, sizeof(s->node[0]));
	snprintf(s->node[s->nnodes].name, sizeof(s->node[0].name), "%s",
		 name);
	s->node[s->nnodes].parent = -1;
	s->node[s->nnodes].is_cq = is_cq;
	return (int)s->nnodes++;
}

/* Quotas of groups (one flavor "default") into node n; false when the
 * groups are not of that shape. */
static bool scn_quotas(struct ref_preempt_scn *s, int n,
		       const struct resource_group *g, size_t ng)
{
	struct ref_preempt_node *nd = &s->node[n];

	for (size_t i = 0; i < ng; i++) {
		if (g[i].nflavors != 1 ||
		    strcmp(g[i].flavors[0].name, "default") != 0)
			return false;
		for (size_t j = 0; j < g[i].flavors[0].nres; j++) {
			const struct resource_quota *q =
				&g[i].flavors[0].res[j];
			size_t r = !strcmp(q->name, "cpu") ? 0 : 1;

			if (r == 1 && strcmp(q->name, "memory") != 0)
				return false;
			if (r == 1)
				s->nres = 2;
			nd->nominal[r] = q->nominal;
			nd->has_borrow[r] = q->has_borrowing;
			nd->borrow[r] = q->borrowing;
			nd->has_lend[r] = q->has_lending;
			nd->lend[r] = q->lending;
		}
	}
	return true;
}

static void scn_use(const char *spec, int64_t mult, int64_t *use)
{
	struct reslist l = RESLIST_INIT;

	spec_res(spec, &l);
	for (size_t r = 0; r < REF_PREEMPT_NRES; r++)
		use[r] = reslist_has(&l, res_names[r]) ?
			 reslist_get(&l, res_names[r]) * mult : 0;
	reslist_release(&l);
}

/* The case as a reference scenario (after case_build); false when the
 * reference cannot judge it. */
static bool scn_from_case(const struct pcase *c, struct ref_preempt_scn *s)
{
	const struct t_pend *p = &c->pend[0];

	memset(s, 0, sizeof(*s));
	s->nres = 1;
	if (case_npend(c) != 1 || p->min > 0)
		return false;
	for (size_t i = 0; i < P.nco; i++) {
		int n = scn_node(s, P.co[i]->meta.name, false);

		if (!scn_quotas(s, n, P.co[i]->groups, P.co[i]->ngroups))
			return false;
	}
	for (size_t i = 0; i < P.nco; i++)
		if (P.co[i]->parent)
			s->node[scn_node(s, P.co[i]->meta.name, false)].parent =
				scn_node(s, P.co[i]->parent, false);
	for (size_t i = 0; i < P.ncq; i++) {
		const struct cluster_queue *q = P.cq[i];
		int n = scn_node(s, q->meta.name, true);
		struct ref_preempt_node *nd;

		if (!scn_quotas(s, n, q->groups, q->ngroups))
			return false;
		if (q->cohort) {
			int parent = scn_node(s, q->cohort, false);

			s->node[n].parent = parent;
		}
		nd = &s->node[n];
		nd->within = q->within_cq;
		nd->reclaim = q->reclaim;
		nd->borrow_policy = q->borrow_policy;
		nd->has_threshold = q->has_borrow_threshold;
		nd->threshold = q->borrow_threshold;
	}
	for (size_t i = 0; i < NADM && c->adm[i].name; i++) {
		const struct t_adm *a = &c->adm[i];
		struct ref_preempt_wl *w = &s->adm[s->nadm++];

		snprintf(w->name, sizeof(w->name), "%s", a->name);
		w->cq = scn_node(s, a->cq, true);
		w->prio = a->prio;
		w->admitted_ms = T0 - a->age * SEC;
		w->created_ms = w->admitted_ms - 60 * SEC;
		w->evicted = a->evicted;
		scn_use(a->use, 1, w->use);
	}
	snprintf(s->pre.name, sizeof(s->pre.name), "%s", p->name);
	s->pre.cq = scn_node(s, p->cq, true);
	s->pre.prio = p->prio;
	s->pre.created_ms = T0 - p->age * SEC;
	scn_use(p->req, p->count, s->pre.use);
	return true;
}

/* The victims of r as "name:Reason" words, sorted, into buf. */
static void victims_text(const struct ref_preempt_scn *s,
			 const struct ref_preempt_result *r, char *buf,
			 size_t size)
{
	const char *v[REF_PREEMPT_MAX_WL];
	size_t n = 0, off = 0;

	for (size_t i = 0; i < r->nvictims; i++)
		if (!s->adm[r->victim[i]].evicted)
			v[n++] = s->adm[r->victim[i]].name;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(v[j], v[j - 1]) < 0; j--) {
			const char *t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < r->nvictims; j++) {
			if (strcmp(s->adm[r->victim[j]].name, v[i]) != 0)
				continue;
			off += (size_t)snprintf(buf + off, size - off,
						"%s%s:%s", off ? " " : "",
						v[i], r->reason[j]);
		}
}

/* The same for a table spec (without "@preemptor"), sorted. */
static void spec_text(const char *spec, char *buf, size_t size)
{
	char w[8][64];
	size_t n = words(spec, w), off = 0;

	for (size_t i = 0; i < n; i++)
		w[i][strcspn(w[i], "@")] = '\0';
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(w[j], w[j - 1]) < 0; j--) {
			char t[64];

			memcpy(t, w[j], 64);
			memcpy(w[j], w[j - 1], 64);
			memcpy(w[j - 1], t, 64);
		}
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(buf + off, size - off, "%s%s",
					off ? " " : "", w[i]);
}

START_TEST(table_vs_reference)
{
	struct ref_preempt_scn *s = xcalloc(1, sizeof(*s));
	struct ref_preempt_result r;
	size_t judged = 0;

	for (size_t i = 0; i < NCASES; i++) {
		const struct pcase *c = &cases[i];
		char got[512], want[512];
		bool fits;

		fx_begin(1);
		case_build(c);
		if (!scn_from_case(c, s)) {
			fx_end();
			continue;
		}
		judged++;
		ref_preempt_decide(s, &r);
		victims_text(s, &r, got, sizeof(got));
		spec_text(c->victims, want, sizeof(want));
		if (strcmp(got, want) != 0)
			ref_preempt_dump(stderr, s, &r);
		ck_assert_msg(!strcmp(got, want), "%s: reference '%s', table"
			      " '%s'", c->name, got, want);
		fits = r.outcome == REF_PREEMPT_FITS;
		ck_assert_msg(fits == listed(c->now, c->pend[0].name),
			      "%s: reference says %s", c->name,
			      ref_preempt_outcome_name(r.outcome));
		ck_assert_msg((r.outcome == REF_PREEMPT_VICTIMS) ==
			      (*c->waiting != '\0'), "%s: reference says %s",
			      c->name, ref_preempt_outcome_name(r.outcome));
		fx_end();
	}
	ck_assert_uint_ge(judged, 20);
	free(s);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 2. What a row cannot say */

/* kueue-api §7.4: the Preempted message with both paths, per reason;
 * UNKNOWN for a preemptor without uid and job-uid label. */
START_TEST(message_and_paths)
{
	struct workload *q;
	const struct prec *r;

	fx_begin(1);
	add_flavor("default");
	/* reclamation through root{left{a}, z} */
	add_cohort("root", NULL, NULL);
	add_cohort("left", "root", NULL);
	add_cq("a", "left", ONE, "rwc=Any");
	add_cq("z", "root", "default:cpu=2", NULL);
	add_admitted("z1", "z", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=4", false);
	add_pending("p", "a", 0, T0 - 10 * SEC, 1, "cpu=4", 0);
	/* prioritization in a queue without cohort, anonymous preemptor */
	add_cq("solo", NULL, "default:cpu=2", POL_LP);
	add_admitted("s1", "solo", 0, T0 - 200 * SEC, T0 - 100 * SEC,
		     "default", "cpu=2", false);
	q = pool_wl("solo");
	wl_base(q, "q", 5, T0 - 10 * SEC);
	free(q->meta.uid);
	q->meta.uid = NULL;
	smap_del(&q->meta.labels, LABEL_JOB_UID);
	add_ps(q, 1, "cpu=2");
	put(q);
	/* reclamation while borrowing in the flat cohort fl */
	add_cq("x", "fl", "default:cpu=2",
	       "rwc=LowerPriority bwc=LowerPriority");
	add_cq("y", "fl", "default:cpu=2", NULL);
	add_admitted("y1", "y", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=4", false);
	add_pending("rr", "x", 10, T0 - 10 * SEC, 1, "cpu=4", 0);
	cycle();

	r = find_rec("z1", DEC_PREEMPT, 1);
	ck_assert_msg(r, "z1 not preempted:%s", log_text(1));
	ck_assert_str_eq(r->cq, "z");
	ck_assert_str_eq(r->reason, "Preempted");
	ck_assert_str_eq(r->preempt_reason, "InCohortReclamation");
	ck_assert_str_eq(r->preemptor, "p");
	ck_assert_str_eq(r->preemptor_cq, "a");
	ck_assert_str_eq(r->msg, "Preempted to accommodate a workload (UID: "
			 "uid-p, JobUID: job-uid-x) due to reclamation within"
			 " the cohort; preemptor path: /root/left/a; "
			 "preemptee path: /root/z");

	r = find_rec("s1", DEC_PREEMPT, 1);
	ck_assert_msg(r, "s1 not preempted:%s", log_text(1));
	ck_assert_str_eq(r->preempt_reason, "InClusterQueue");
	ck_assert_str_eq(r->preemptor, "q");
	ck_assert_str_eq(r->preemptor_cq, "solo");
	ck_assert_str_eq(r->msg, "Preempted to accommodate a workload (UID: "
			 "UNKNOWN, JobUID: UNKNOWN) due to prioritization in "
			 "the ClusterQueue; preemptor path: /solo; preemptee "
			 "path: /solo");

	r = find_rec("y1", DEC_PREEMPT, 1);
	ck_assert_msg(r, "y1 not preempted:%s", log_text(1));
	ck_assert_str_eq(r->preempt_reason, "InCohortReclaimWhileBorrowing");
	ck_assert_str_eq(r->msg, "Preempted to accommodate a workload (UID: "
			 "uid-rr, JobUID: job-uid-x) due to reclamation within"
			 " the cohort while borrowing; preemptor path: /fl/x;"
			 " preemptee path: /fl/y");

	for (int i = 0; i < 3; i++) {
		const char *pre = i == 0 ? "p" : i == 1 ? "q" : "rr";

		r = find_rec(pre, DEC_PENDING, 1);
		ck_assert_msg(r, "no pending decision for %s", pre);
		ck_assert_msg(ends_with(r->msg, PENDING_SUFFIX
					"1 workload(s)"), "%s: '%s'", pre,
			      r->msg);
		ck_assert(!find_rec(pre, DEC_ADMIT, 0));
	}
	fx_end();
}
END_TEST

/*
 * The eviction is written back (Evicted=True, quota still held): the
 * next cycles do not preempt it again, the preemptor keeps waiting for
 * it, and is admitted once it released its quota.
 */
START_TEST(evicted_written_back)
{
	const struct prec *r;

	fx_begin(_i == 0 ? 1 : 0);
	add_flavor("default");
	add_cq("a", NULL, ONE, POL_LP);
	add_admitted("v", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=4", false);
	add_pending("p", "a", 5, T0 - 10 * SEC, 1, "cpu=3", 0);
	cycle();
	ck_assert_msg(find_rec("v", DEC_PREEMPT, 1), "v not preempted:%s",
		      log_text(1));
	ck_assert(!find_rec("p", DEC_ADMIT, 0));
	P.now += SEC;
	wl_mark_preempted("v");
	ck_assert(sched_wl_holds_quota(P.s, "ns", "v"));
	for (int k = 0; k < 3; k++) {
		P.now += SEC;
		cycle();
	}
	ck_assert_uint_eq(count_rec("v", DEC_PREEMPT), 1);
	ck_assert(!find_rec("p", DEC_ADMIT, 0));
	/* if it is reported again, it is still waiting for v */
	r = find_rec("p", DEC_PENDING, 0);
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(ends_with(r->msg, PENDING_SUFFIX "1 workload(s)"),
		      "'%s'", r->msg);
	P.now += SEC;
	wl_release("v");
	cycle();
	cycle();
	r = find_rec("p", DEC_ADMIT, 0);
	ck_assert_msg(r, "p not admitted after the release:%s", log_text(0));
	ck_assert_str_eq(adm_flavor(r, "cpu"), "default");
	ck_assert(!find_rec("v", DEC_ADMIT, 0)); /* 4 + 3 > 4 */
	fx_end();
}
END_TEST

/* A victim deleted instead of released frees its quota as well; one
 * victim of two gone is not enough. */
START_TEST(victims_removed)
{
	fx_begin(1);
	add_flavor("default");
	add_cq("a", NULL, ONE, POL_LP);
	add_admitted("v1", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=2", false);
	add_admitted("v2", "a", 0, T0 - 200 * SEC, T0 - 90 * SEC, "default",
		     "cpu=2", false);
	add_pending("p", "a", 5, T0 - 10 * SEC, 1, "cpu=4", 0);
	cycle();
	ck_assert_msg(find_rec("v1", DEC_PREEMPT, 1) &&
		      find_rec("v2", DEC_PREEMPT, 1), "%s", log_text(1));
	ck_assert(ends_with(find_rec("p", DEC_PENDING, 1)->msg,
			    PENDING_SUFFIX "2 workload(s)"));
	sched_wl_remove(P.s, "ns", "v2");
	CHECK();
	cycle();
	cycle();
	ck_assert_msg(!find_rec("p", DEC_ADMIT, 0), "admitted with v1 still"
		      " holding quota:%s", log_text(0));
	ck_assert_uint_eq(count_rec("v1", DEC_PREEMPT), 1);
	sched_wl_remove(P.s, "ns", "v1");
	CHECK();
	cycle();
	cycle();
	ck_assert_msg(find_rec("p", DEC_ADMIT, 0), "%s", log_text(0));
	fx_end();
}
END_TEST

/*
 * §1.6 sticky preemptor: once p issued preemptions it stays its queue's
 * head, so h (higher priority, arriving meanwhile) does not take the
 * capacity p is waiting for.
 */
START_TEST(sticky_preemptor)
{
	fx_begin(1);
	add_flavor("default");
	add_cq("a", NULL, ONE, POL_LP);
	add_admitted("v", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=4", false);
	add_pending("p", "a", 5, T0 - 10 * SEC, 1, "cpu=4", 0);
	cycle();
	ck_assert_msg(find_rec("v", DEC_PREEMPT, 1), "%s", log_text(1));
	P.now += SEC;
	add_pending("h", "a", 7, T0 - 5 * SEC, 1, "cpu=4", 0);
	cycle();
	ck_assert_msg(!find_rec("p", DEC_PREEMPT, 0), "%s", log_text(0));
	P.now += SEC;
	wl_release("v");
	cycle();
	ck_assert_msg(find_rec("p", DEC_ADMIT, 0), "p not admitted first:%s",
		      log_text(0));
	ck_assert_msg(!find_rec("h", DEC_ADMIT, 0), "%s", log_text(0));
	fx_end();
}
END_TEST

/* A workload with QuotaReserved=True but not yet Admitted (admission
 * checks pending) holds quota and is a candidate like any other. */
START_TEST(reserved_not_admitted_is_candidate)
{
	struct workload *w;

	fx_begin(1);
	add_flavor("default");
	add_cq("a", NULL, ONE, POL_LP);
	add_admitted("r", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=4", false);
	w = wl_copy("r");
	conditions_remove(&w->conds, "Admitted");
	put(w);
	add_pending("p", "a", 5, T0 - 10 * SEC, 1, "cpu=2", 0);
	cycle();
	ck_assert_msg(find_rec("r", DEC_PREEMPT, 1), "%s", log_text(1));
	ck_assert_str_eq(find_rec("r", DEC_PREEMPT, 1)->preempt_reason,
			 "InClusterQueue");
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* 3. Randomized comparison with the reference */

static uint64_t rng;

static uint32_t rnd(uint32_t n)
{
	rng = rng * UINT64_C(6364136223846793005) +
	      UINT64_C(1442695040888963407);
	return (uint32_t)(rng >> 33) % n;
}

static const int64_t unit[REF_PREEMPT_NRES] = { CPU(1), GI(1) };

static int gen_node(struct ref_preempt_scn *s, const char *prefix, int parent,
		    bool is_cq)
{
	struct ref_preempt_node *n = &s->node[s->nnodes];

	T_ASSERT_UINT(s->nnodes, <, REF_PREEMPT_MAX_NODES);
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s%zu", prefix, s->nnodes);
	n->parent = parent;
	n->is_cq = is_cq;
	if (is_cq) {
		for (size_t r = 0; r < s->nres; r++) {
			n->nominal[r] = rnd(7) * unit[r];
			if (parent >= 0 && !rnd(3)) {
				n->has_borrow[r] = true;
				n->borrow[r] = rnd(5) * unit[r];
			}
			if (parent >= 0 && !rnd(3)) {
				n->has_lend[r] = true;
				n->lend[r] = rnd((uint32_t)(n->nominal[r] /
							    unit[r]) + 1) *
					     unit[r];
			}
		}
		n->within = (enum preempt_within_cq)rnd(3);
		n->reclaim = (enum reclaim_within_cohort)rnd(3);
		if (n->reclaim != RWC_NEVER && rnd(2))
			n->borrow_policy = BWC_LOWER_PRIORITY;
		if (n->borrow_policy != BWC_NEVER && rnd(2)) {
			n->has_threshold = true;
			n->threshold = (int32_t)rnd(4) - 1;
		}
	} else if (!rnd(3)) {
		for (size_t r = 0; r < s->nres; r++) {
			n->nominal[r] = rnd(4) * unit[r];
			if (parent >= 0 && !rnd(3)) {
				n->has_borrow[r] = true;
				n->borrow[r] = rnd(4) * unit[r];
			}
			if (parent >= 0 && !rnd(3)) {
				n->has_lend[r] = true;
				n->lend[r] = rnd(6) * unit[r];
			}
		}
	}
	return (int)s->nnodes++;
}

static int random_cq(const struct ref_preempt_scn *s)
{
	int k = 0, pick;

	for (size_t i = 0; i < s->nnodes; i++)
		k += s->node[i].is_cq;
	pick = (int)rnd((uint32_t)k);
	for (size_t i = 0; i < s->nnodes; i++)
		if (s->node[i].is_cq && pick-- == 0)
			return (int)i;
	BUG("no ClusterQueue");
	return -1;
}

static void gen_use(const struct ref_preempt_scn *s, int64_t *use,
		    uint32_t max_cpu)
{
	use[0] = (1 + rnd(max_cpu)) * unit[0];
	use[1] = 0;
	if (s->nres == 2) {
		use[1] = rnd(5) * unit[1];
		if (use[1] && !rnd(4))
			use[0] = 0;
	}
}

/* A cohort under parent with 1-3 ClusterQueues (room permitting). */
static int gen_cohort(struct ref_preempt_scn *s, int parent)
{
	int co = gen_node(s, "co", parent, false);
	int n = 1 + (int)rnd(3);

	for (int i = 0; i < n && s->nnodes < REF_PREEMPT_MAX_NODES; i++)
		gen_node(s, "q", co, true);
	return co;
}

/*
 * Shapes: a ClusterQueue without cohort; a flat cohort of 2-4 queues;
 * root{2-3 cohorts} with maybe a queue of its own; three levels
 * root{mid{1-2 cohorts}, mid{...}} with queues at every level.
 */
static void gen_scenario(struct ref_preempt_scn *s)
{
	int shape = (int)rnd(7);

	memset(s, 0, sizeof(*s));
	s->nres = 1 + rnd(2);
	if (shape == 0) {
		gen_node(s, "q", -1, true);
	} else if (shape <= 3) {
		int co = gen_node(s, "co", -1, false);
		int n = 2 + (int)rnd(3);

		for (int i = 0; i < n; i++)
			gen_node(s, "q", co, true);
	} else if (shape <= 4) {
		int root = gen_node(s, "co", -1, false);
		int kids = 2 + (int)rnd(2);

		for (int k = 0; k < kids; k++)
			gen_cohort(s, root);
		if (rnd(2))
			gen_node(s, "q", root, true);
	} else {
		int root = gen_node(s, "co", -1, false);

		for (int m = 0; m < 2; m++) {
			int mid = gen_node(s, "co", root, false);
			int kids = 1 + (int)rnd(2);

			for (int k = 0; k < kids; k++)
				gen_cohort(s, mid);
			if (rnd(2) && s->nnodes < REF_PREEMPT_MAX_NODES)
				gen_node(s, "q", mid, true);
		}
		if (rnd(2) && s->nnodes < REF_PREEMPT_MAX_NODES)
			gen_node(s, "q", root, true);
	}
	/* admitted workloads, each fitting when it was admitted; admission
	 * times collide now and then (the uid breaks the tie) */
	for (int tries = 0; tries < 24 && s->nadm < 18; tries++) {
		struct ref_preempt_wl *w = &s->adm[s->nadm];
		bool ok = true;

		memset(w, 0, sizeof(*w));
		snprintf(w->name, sizeof(w->name), "w%02zu", s->nadm);
		w->cq = random_cq(s);
		w->prio = (int32_t)rnd(5) - 1;
		w->admitted_ms = T0 - (1 + rnd(20)) * SEC;
		w->created_ms = w->admitted_ms - rnd(100) * SEC;
		w->evicted = !rnd(8);
		gen_use(s, w->use, 4);
		for (size_t r = 0; r < s->nres; r++)
			if (w->use[r] > ref_preempt_available(s, w->cq, r))
				ok = false;
		if (ok)
			s->nadm++;
	}
	snprintf(s->pre.name, sizeof(s->pre.name), "pre");
	s->pre.cq = random_cq(s);
	s->pre.prio = (int32_t)rnd(5) - 1;
	s->pre.created_ms = T0 - rnd(150) * SEC;
	gen_use(s, s->pre.use, 4);
}

/* "default:cpu=..,memory=.." quotas of node n, or NULL when none. */
static char *groups_text(const struct ref_preempt_scn *s, int n)
{
	const struct ref_preempt_node *nd = &s->node[n];
	char buf[256];
	size_t off = 0;
	bool any = nd->is_cq;

	for (size_t r = 0; r < s->nres; r++)
		any = any || nd->nominal[r] || nd->has_borrow[r] ||
		      nd->has_lend[r];
	if (!any)
		return NULL;
	off += (size_t)snprintf(buf, sizeof(buf), "default:");
	for (size_t r = 0; r < s->nres; r++) {
		const char *u = r ? "Gi" : "";

		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					"%s%s=%lld%s", r ? "," : "",
					res_names[r],
					(long long)(nd->nominal[r] / unit[r]),
					u);
		if (nd->has_borrow[r])
			off += (size_t)snprintf(buf + off, sizeof(buf) - off,
						"/%lld%s",
						(long long)(nd->borrow[r] /
							    unit[r]), u);
		else if (nd->has_lend[r])
			off += (size_t)snprintf(buf + off, sizeof(buf) - off,
						"/-");
		if (nd->has_lend[r])
			off += (size_t)snprintf(buf + off, sizeof(buf) - off,
						"/%lld%s",
						(long long)(nd->lend[r] /
							    unit[r]), u);
	}
	return xstrdup(buf);
}

static char *use_text(const struct ref_preempt_scn *s, const int64_t *use)
{
	char buf[128];
	size_t off = 0;

	buf[0] = '\0';
	for (size_t r = 0; r < s->nres; r++)
		if (use[r])
			off += (size_t)snprintf(buf + off, sizeof(buf) - off,
						"%s%s=%lld%s", off ? "," : "",
						res_names[r],
						(long long)(use[r] / unit[r]),
						r ? "Gi" : "");
	return xstrdup(buf);
}

static void build_scenario(const struct ref_preempt_scn *s)
{
	add_flavor("default");
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct ref_preempt_node *nd = &s->node[i];
		char *g;

		if (nd->is_cq)
			continue;
		g = groups_text(s, (int)i);
		/* a root without quota may stay implicit */
		if (g || nd->parent >= 0 || rnd(2))
			add_cohort(nd->name, nd->parent >= 0 ?
				   s->node[nd->parent].name : NULL, g);
		free(g);
	}
	for (size_t i = 0; i < s->nnodes; i++) {
		const struct ref_preempt_node *nd = &s->node[i];
		struct cluster_queue *cq;
		char *g;

		if (!nd->is_cq)
			continue;
		g = groups_text(s, (int)i);
		cq = mk_cq(nd->name, nd->parent >= 0 ?
			   s->node[nd->parent].name : NULL, g, NULL);
		free(g);
		cq->within_cq = nd->within;
		cq->reclaim = nd->reclaim;
		cq->borrow_policy = nd->borrow_policy;
		cq->has_borrow_threshold = nd->has_threshold;
		cq->borrow_threshold = nd->threshold;
		sched_cq_set(P.s, cq, NULL);
		CHECK();
	}
	for (size_t i = 0; i < s->nadm; i++) {
		const struct ref_preempt_wl *w = &s->adm[i];
		char *u = use_text(s, w->use);

		add_admitted(w->name, s->node[w->cq].name, w->prio,
			     w->created_ms, w->admitted_ms, "default", u,
			     w->evicted);
		free(u);
	}
	{
		char *u = use_text(s, s->pre.use);

		add_pending("pre", s->node[s->pre.cq].name, s->pre.prio,
			    s->pre.created_ms, 1, u, 0);
		free(u);
	}
}

/* sched's outcome of cycle 1 as the same text as victims_text; NULL
 * when it matches r, else a new description of the difference. */
static char *compare(const struct ref_preempt_scn *s,
		     const struct ref_preempt_result *r)
{
	const struct prec *adm = find_rec("pre", DEC_ADMIT, 1);
	const struct prec *pend = find_rec("pre", DEC_PENDING, 1);
	char want[1024], got[1024];
	const char *v[REF_PREEMPT_MAX_WL];
	size_t n = 0, off = 0;
	char *suffix;

	for (size_t i = 0; i < P.nlog; i++)
		if (P.log[i].cycle == 1 && P.log[i].kind == DEC_PREEMPT) {
			if (strcmp(P.log[i].preemptor, "pre") != 0 ||
			    strcmp(P.log[i].preemptor_cq,
				   s->node[s->pre.cq].name) != 0)
				return xstrdup("wrong preemptor fields");
			v[n++] = P.log[i].wl;
		}
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && strcmp(v[j], v[j - 1]) < 0; j--) {
			const char *t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	got[0] = '\0';
	for (size_t i = 0; i < n; i++)
		off += (size_t)snprintf(got + off, sizeof(got) - off,
					"%s%s:%s", off ? " " : "", v[i],
					find_rec(v[i], DEC_PREEMPT, 1)->
					preempt_reason);
	victims_text(s, r, want, sizeof(want));
	if (strcmp(got, want) != 0)
		return xasprintf("victims: sched '%s', reference '%s'", got,
				 want);
	if (r->outcome == REF_PREEMPT_FITS)
		return adm ? NULL : xstrdup("not admitted, reference fits");
	if (adm)
		return xasprintf("admitted, reference %s",
				 ref_preempt_outcome_name(r->outcome));
	if (!pend)
		return xstrdup("no pending decision for the preemptor");
	if (r->outcome != REF_PREEMPT_VICTIMS)
		return strstr(pend->msg, PENDING_SUFFIX) ?
		       xasprintf("'%s', reference %s", pend->msg,
				 ref_preempt_outcome_name(r->outcome)) : NULL;
	suffix = xasprintf(PENDING_SUFFIX "%zu workload(s)", r->nvictims);
	if (!ends_with(pend->msg, suffix)) {
		char *d = xasprintf("'%s' does not end with '%s'", pend->msg,
				    suffix);

		free(suffix);
		return d;
	}
	free(suffix);
	return NULL;
}

/* The victims deleted: the preemptor is admitted at the next cycle. */
static char *after_removal(const struct ref_preempt_scn *s,
			   const struct ref_preempt_result *r)
{
	for (size_t i = 0; i < r->nvictims; i++) {
		sched_wl_remove(P.s, "ns", s->adm[r->victim[i]].name);
		CHECK();
	}
	P.now += SEC;
	cycle();
	if (!find_rec("pre", DEC_ADMIT, 0))
		return xstrdup("not admitted once the victims were removed");
	return NULL;
}

#define RANDOM_PER_SEED 1000

START_TEST(random_vs_reference)
{
	struct ref_preempt_scn *s = xcalloc(1, sizeof(*s));
	struct ref_preempt_result r;
	size_t outcomes[4] = { 0 }, failures = 0;

	for (int k = 0; k < RANDOM_PER_SEED; k++) {
		uint64_t seed = (uint64_t)_i * 100000 + (uint64_t)k;
		char *diff;

		rng = seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
		gen_scenario(s);
		ref_preempt_decide(s, &r);
		outcomes[r.outcome]++;
		fx_begin(_i % 2 ? 0 : 1);
		build_scenario(s);
		cycle();
		diff = compare(s, &r);
		if (!diff && r.outcome == REF_PREEMPT_VICTIMS)
			diff = after_removal(s, &r);
		if (diff) {
			fprintf(stderr, "preempt random mismatch, seed %" PRIu64
				": %s\n", seed, diff);
			ref_preempt_dump(stderr, s, &r);
			fprintf(stderr, "sched decisions:%s\n", log_text(1));
			free(diff);
			failures++;
		}
		fx_end();
		if (failures >= 3)
			break;
	}
	/* the generator reaches every outcome */
	for (int o = 0; o < 4 && !failures; o++)
		ck_assert_msg(outcomes[o] > 10, "outcome %s only %zu times",
			      ref_preempt_outcome_name(
				      (enum ref_preempt_outcome)o),
			      outcomes[o]);
	free(s);
	ck_assert_msg(!failures, "%zu random scenarios differ from the "
		      "reference (seeds and scenarios on stderr)", failures);
}
END_TEST

/*
 * Randomized streams: the generated trees with several pending workloads
 * of random sizes, run for a dozen cycles in which admissions are
 * confirmed, evictions written back and victims released at random. The
 * rules that hold whatever the order (§4.1, §4.7, §2.6):
 * - a victim holds quota and is preempted once per reservation, never
 *   after its Evicted=True was written back;
 * - InClusterQueue victims share the preemptor's queue and satisfy
 *   withinClusterQueue; cohort victims are in another queue of the same
 *   tree, satisfy reclaimWithinCohort, and InCohortReclaimWhileBorrowing
 *   ones are below the preemptor's priority and the threshold;
 * - the preemptor is pending in its queue, is not admitted in the same
 *   call and waits for at least as many workloads as it preempted.
 */
struct swl {
	char name[24];
	int cq;          /* node index of its queue */
	int32_t prio;
	int64_t created;
	bool holds;      /* holds quota (confirmed or assumed) */
	bool preempted;  /* DEC_PREEMPT seen for this reservation */
	bool evicted;    /* Evicted=True written back */
};

static int root_of(const struct ref_preempt_scn *s, int n)
{
	while (s->node[n].parent >= 0)
		n = s->node[n].parent;
	return n;
}

static struct swl *swl_find(struct swl *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].name, name))
			return &v[i];
	ck_abort_msg("unknown workload %s", name);
	return NULL;
}

/* The admission decided for w written back: QuotaReserved, Admitted. */
static void confirm(const char *name, const struct prec *r)
{
	struct workload *w = wl_copy(name);
	char *msg = xasprintf("Quota reserved in ClusterQueue %s", r->cq);

	admission_copy(&w->admission, &r->adm);
	w->has_admission = true;
	conditions_set(&w->conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       msg, 1, P.now);
	conditions_set(&w->conds, "Admitted", COND_TRUE, "Admitted",
		       "The workload is admitted", 1, P.now);
	conditions_remove(&w->conds, "Evicted");
	conditions_remove(&w->conds, "Preempted");
	free(msg);
	put(w);
}

static void stream_check(const struct ref_preempt_scn *s, struct swl *v,
			 size_t nv, size_t from)
{
	for (size_t i = from; i < P.nlog; i++) {
		const struct prec *r = &P.log[i];
		struct swl *w = swl_find(v, nv, r->wl), *pre;
		const struct ref_preempt_node *pq;
		size_t mine = 0;
		unsigned waits;
		const char *m;

		if (r->kind == DEC_ADMIT) {
			ck_assert_msg(!w->holds, "%s admitted twice", r->wl);
			for (size_t j = from; j < P.nlog; j++)
				ck_assert_msg(P.log[j].kind != DEC_PENDING ||
					      strcmp(P.log[j].wl, r->wl) ||
					      !strstr(P.log[j].msg,
						      PENDING_SUFFIX),
					      "%s admitted while waiting",
					      r->wl);
			continue;
		}
		if (r->kind == DEC_PENDING && strstr(r->msg, PENDING_SUFFIX)) {
			m = strstr(r->msg, PENDING_SUFFIX) +
			    strlen(PENDING_SUFFIX);
			ck_assert(sscanf(m, "%u", &waits) == 1);
			for (size_t j = from; j < P.nlog; j++)
				if (P.log[j].kind == DEC_PREEMPT &&
				    !strcmp(P.log[j].preemptor, r->wl))
					mine++;
			ck_assert_msg(waits >= mine && waits > 0,
				      "%s waits for %u, preempted %zu",
				      r->wl, waits, mine);
			ck_assert(!w->holds);
			continue;
		}
		if (r->kind != DEC_PREEMPT)
			continue;
		pre = swl_find(v, nv, r->preemptor);
		pq = &s->node[pre->cq];
		ck_assert_msg(w->holds, "%s preempted without quota", r->wl);
		ck_assert_msg(!w->preempted, "%s preempted twice", r->wl);
		ck_assert_msg(!w->evicted, "evicted %s preempted", r->wl);
		ck_assert(!pre->holds);
		ck_assert_str_eq(r->preemptor_cq, pq->name);
		ck_assert_str_eq(r->cq, s->node[w->cq].name);
		w->preempted = true;
		if (!strcmp(r->preempt_reason, "InClusterQueue")) {
			ck_assert_int_eq(w->cq, pre->cq);
			ck_assert(pq->within != WCQ_NEVER);
			ck_assert_msg(w->prio < pre->prio ||
				      (pq->within ==
				       WCQ_LOWER_OR_NEWER_EQUAL_PRIORITY &&
				       w->prio == pre->prio &&
				       pre->created < w->created),
				      "%s (%d) for %s (%d)", r->wl,
				      (int)w->prio, pre->name, (int)pre->prio);
			continue;
		}
		ck_assert_int_ne(w->cq, pre->cq);
		ck_assert(pq->parent >= 0 && s->node[w->cq].parent >= 0);
		ck_assert_int_eq(root_of(s, w->cq), root_of(s, pre->cq));
		ck_assert(pq->reclaim != RWC_NEVER);
		if (pq->reclaim == RWC_LOWER_PRIORITY)
			ck_assert_int_lt(w->prio, pre->prio);
		if (!strcmp(r->preempt_reason,
			    "InCohortReclaimWhileBorrowing")) {
			ck_assert(pq->borrow_policy == BWC_LOWER_PRIORITY);
			ck_assert_int_lt(w->prio, pre->prio);
			ck_assert(!pq->has_threshold ||
				  w->prio <= pq->threshold);
		} else {
			ck_assert_str_eq(r->preempt_reason,
					 "InCohortReclamation");
		}
	}
}

START_TEST(random_streams)
{
	struct ref_preempt_scn *s = xcalloc(1, sizeof(*s));
	struct swl v[REF_PREEMPT_MAX_WL + 8];
	size_t preempts = 0, admits = 0;

	for (int k = 0; k < 60; k++) {
		size_t nv = 0, npend = 3 + rnd(4);

		rng = ((uint64_t)_i * 1000 + (uint64_t)k) *
		      UINT64_C(0xD1B54A32D192ED03) + 7;
		gen_scenario(s);
		fx_begin(_i % 2 ? 0 : 1);
		build_scenario(s);
		for (size_t i = 0; i < s->nadm; i++) {
			struct swl *w = &v[nv++];

			memset(w, 0, sizeof(*w));
			snprintf(w->name, sizeof(w->name), "%s",
				 s->adm[i].name);
			w->cq = s->adm[i].cq;
			w->prio = s->adm[i].prio;
			w->created = s->adm[i].created_ms;
			w->holds = true;
			w->evicted = s->adm[i].evicted;
		}
		/* build_scenario added "pre"; more pending ones join it */
		memset(&v[nv], 0, sizeof(v[0]));
		snprintf(v[nv].name, sizeof(v[nv].name), "pre");
		v[nv].cq = s->pre.cq;
		v[nv].prio = s->pre.prio;
		v[nv].created = s->pre.created_ms;
		nv++;
		for (size_t i = 0; i < npend; i++) {
			struct swl *w = &v[nv++];
			int64_t use[REF_PREEMPT_NRES];
			char *u;

			memset(w, 0, sizeof(*w));
			snprintf(w->name, sizeof(w->name), "p%02zu", i);
			w->cq = random_cq(s);
			w->prio = (int32_t)rnd(5) - 1;
			w->created = T0 - rnd(150) * SEC;
			gen_use(s, use, 4);
			u = use_text(s, use);
			add_pending(w->name, s->node[w->cq].name, w->prio,
				    w->created, 1, u, 0);
			free(u);
		}
		for (int step = 0; step < 12; step++) {
			size_t from = P.nlog;

			P.now += SEC;
			cycle();
			stream_check(s, v, nv, from);
			for (size_t i = from; i < P.nlog; i++) {
				struct swl *w = swl_find(v, nv, P.log[i].wl);

				if (P.log[i].kind == DEC_PREEMPT)
					preempts++;
				if (P.log[i].kind != DEC_ADMIT)
					continue;
				admits++;
				w->holds = true;
				confirm(w->name, &P.log[i]);
			}
			/* evictions written back, victims released */
			for (size_t i = 0; i < nv; i++) {
				struct swl *w = &v[i];

				if (!w->holds || !(w->preempted || w->evicted))
					continue;
				if (!w->evicted && rnd(2)) {
					wl_mark_preempted(w->name);
					w->evicted = true;
				} else if (rnd(3)) {
					wl_release(w->name);
					w->holds = false;
					w->preempted = false;
					w->evicted = false;
				}
			}
		}
		fx_end();
	}
	/* the streams do preempt and admit */
	ck_assert_uint_gt(preempts, 20);
	ck_assert_uint_gt(admits, 50);
	free(s);
}
END_TEST

/* ------------------------------------------------------------------ */

/* A preemption write that failed: sched_wl_recheck lets the next cycle
 * decide the victim again (once); without it nothing is repeated. */
START_TEST(failed_write_rechecked)
{
	fx_begin(0);
	add_flavor("default");
	add_cq("a", NULL, ONE, POL_LP);
	add_admitted("v", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=4", false);
	add_pending("p", "a", 5, T0 - 10 * SEC, 1, "cpu=3", 0);
	cycle();
	ck_assert_uint_eq(count_rec("v", DEC_PREEMPT), 1);
	P.now += SEC;
	cycle();
	ck_assert_uint_eq(count_rec("v", DEC_PREEMPT), 1);
	sched_wl_recheck(P.s, "ns", "v");
	P.now += SEC;
	cycle();
	ck_assert_uint_eq(count_rec("v", DEC_PREEMPT), 2);
	P.now += SEC;
	cycle();
	ck_assert_uint_eq(count_rec("v", DEC_PREEMPT), 2);
	ck_assert(!find_rec("p", DEC_ADMIT, 0));
	fx_end();
}
END_TEST

/*
 * l is admitted (borrowing a's quota) by the first round of a call; p,
 * a's next head, would reclaim it in a later round of the same call,
 * before l's admission is written. l is not a candidate until its
 * admission is seen, and p is not parked meanwhile: the next call
 * preempts l.
 */
START_TEST(admitted_in_same_call)
{
	const struct prec *r;

	fx_begin(0);
	add_flavor("default");
	add_cq("a", "co", ONE, "rwc=Any");
	add_cq("b", "co", "default:cpu=0", NULL);
	add_pending("x", "a", 9, T0 - 30 * SEC, 1, "cpu=8", 0);
	add_pending("p", "a", 5, T0 - 20 * SEC, 1, "cpu=4", 0);
	add_pending("l", "b", 0, T0 - 10 * SEC, 1, "cpu=4", 0);
	cycle();
	r = find_rec("l", DEC_ADMIT, 1);
	ck_assert_msg(r, "l not admitted:%s", log_text(1));
	ck_assert_msg(!find_rec("l", DEC_PREEMPT, 1), "%s", log_text(1));
	ck_assert(!find_rec("p", DEC_ADMIT, 1));
	P.now += SEC;
	confirm("l", r);
	cycle();
	ck_assert_msg(find_rec("l", DEC_PREEMPT, 2), "l not preempted:%s",
		      log_text(2));
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/*
 * 4. Fair sharing (kueue-scheduler.md §2.5, §4.5, §4.6; kueue-api.md §3,
 * §13-14): the same rows, run with fair_sharing on. Shares worked out by
 * hand in each comment: in a tree without lending limits a node's share
 * is max(0, usage - subtree quota) * 1000 / (the root's subtree quota),
 * divided by its weight. Preemption rows follow Kueue's own
 * TestFairPreemptions cases (preemption_fair_test.go) where one fits;
 * "FS" is their ClusterQueue policy (borrowWithinCohort is ignored under
 * fair sharing, §4.1).
 */

#define FS "wcq=LowerPriority rwc=Any bwc=LowerPriority thr=-3"
/* Kueue's base cohort "all": a, b, c (3 cpu each) and x (0 cpu) */
#define FS_BASE { "a", "all", "default:cpu=3", FS }, \
		{ "b", "all", "default:cpu=3", FS }, \
		{ "c", "all", "default:cpu=3", FS }, \
		{ "x", "all", "default:cpu=0", NULL }
#define U1(n, q) { n, q, 0, 100, "default", "cpu=1", false }

static const struct pcase fcases[] = {
	/*
	 * §2.5 the tournament. co = a(2) b(2) c(4): 8 cpu, 3 free. pa (1,
	 * older) leaves a at 4: share 2000/8 = 250; pb (3) leaves b at 3:
	 * 125. Both borrow; only one fits. Fair sharing takes pb, the
	 * classical order (same borrowing level, older first) takes pa.
	 */
	{ .name = "tournament_lower_share_wins",
	  .cq = { { "a", "co", "default:cpu=2", NULL },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", "default:cpu=4", NULL } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "c1", "c", 0, 100, "default", "cpu=2", false } },
	  .pend = { { "pa", "a", 0, 100, 1, "cpu=1", 0 },
		    { "pb", "b", 0, 10, 1, "cpu=3", 0 } },
	  .victims = "", .now = "pb:default", .waiting = "", .after = "",
	  .fs = "" },
	{ .name = "tournament_classical_control",
	  .cq = { { "a", "co", "default:cpu=2", NULL },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", "default:cpu=4", NULL } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "c1", "c", 0, 100, "default", "cpu=2", false } },
	  .pend = { { "pa", "a", 0, 100, 1, "cpu=1", 0 },
		    { "pb", "b", 0, 10, 1, "cpu=3", 0 } },
	  .victims = "", .now = "pa:default", .waiting = "", .after = "" },
	/* the same with b's weight 0.25: 125 / 0.25 = 500 > 250 */
	{ .name = "tournament_weight_changes_winner",
	  .cq = { { "a", "co", "default:cpu=2", NULL },
		  { "b", "co", "default:cpu=2", "w=250" },
		  { "c", "co", "default:cpu=4", NULL } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "c1", "c", 0, 100, "default", "cpu=2", false } },
	  .pend = { { "pa", "a", 0, 100, 1, "cpu=1", 0 },
		    { "pb", "b", 0, 10, 1, "cpu=3", 0 } },
	  .victims = "", .now = "pa:default", .waiting = "", .after = "",
	  .fs = "" },
	/* and a's weight 4 against b's 1: 250 / 4 = 62.5 < 125 */
	{ .name = "tournament_weight_favours_heavy",
	  .cq = { { "a", "co", "default:cpu=2", "w=4000" },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", "default:cpu=4", NULL } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "c1", "c", 0, 100, "default", "cpu=2", false } },
	  .pend = { { "pa", "a", 0, 10, 1, "cpu=1", 0 },
		    { "pb", "b", 0, 100, 1, "cpu=3", 0 } },
	  .victims = "", .now = "pa:default", .waiting = "", .after = "",
	  .fs = "" },
	/*
	 * 4 free; pa (1, older) would give a 1000/8 = 125, pb (4) b 250.
	 * a's weight is 0: any borrowing is an infinite share, so pb wins.
	 */
	{ .name = "tournament_zero_weight_loses",
	  .cq = { { "a", "co", "default:cpu=2", "w=0" },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", "default:cpu=4", NULL } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=2", false },
		   { "c1", "c", 0, 100, "default", "cpu=2", false } },
	  .pend = { { "pa", "a", 0, 100, 1, "cpu=1", 0 },
		    { "pb", "b", 0, 10, 1, "cpu=4", 0 } },
	  .victims = "", .now = "pb:default", .waiting = "", .after = "",
	  .fs = "" },
	{ .name = "tournament_zero_weight_control",
	  .cq = { { "a", "co", "default:cpu=2", NULL },
		  { "b", "co", "default:cpu=2", NULL },
		  { "c", "co", "default:cpu=4", NULL } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=2", false },
		   { "c1", "c", 0, 100, "default", "cpu=2", false } },
	  .pend = { { "pa", "a", 0, 100, 1, "cpu=1", 0 },
		    { "pb", "b", 0, 10, 1, "cpu=4", 0 } },
	  .victims = "", .now = "pa:default", .waiting = "", .after = "",
	  .fs = "" },
	/*
	 * root(own 4){left{la(0), lb(4)}, right{ra(2), rb(2)}}: 12 cpu, 2
	 * free. pl (2) in la: la's share in left 2000/12 = 167, left's at
	 * the root 167 (6 over 4). pr (1, older) in ra: ra's 83 in right,
	 * right's 250 at the root (7 over 4). The root compares the
	 * cohorts: pl. Comparing the queues, or the classical order (both
	 * borrow from the root; older first), would give pr.
	 */
	{ .name = "tournament_hierarchy_cohort_shares",
	  .co = { { "root", NULL, "default:cpu=4", NULL },
		  { "left", "root", NULL, NULL },
		  { "right", "root", NULL, NULL } },
	  .cq = { { "la", "left", "default:cpu=0", NULL },
		  { "lb", "left", "default:cpu=4", NULL },
		  { "ra", "right", "default:cpu=2", NULL },
		  { "rb", "right", "default:cpu=2", NULL } },
	  .adm = { { "lb1", "lb", 0, 100, "default", "cpu=4", false },
		   { "ra1", "ra", 0, 100, "default", "cpu=2", false },
		   { "rb1", "rb", 0, 100, "default", "cpu=4", false } },
	  .pend = { { "pl", "la", 0, 10, 1, "cpu=2", 0 },
		    { "pr", "ra", 0, 100, 1, "cpu=1", 0 } },
	  .victims = "", .now = "pl:default", .waiting = "", .after = "",
	  .fs = "" },
	{ .name = "tournament_hierarchy_classical_control",
	  .co = { { "root", NULL, "default:cpu=4", NULL },
		  { "left", "root", NULL, NULL },
		  { "right", "root", NULL, NULL } },
	  .cq = { { "la", "left", "default:cpu=0", NULL },
		  { "lb", "left", "default:cpu=4", NULL },
		  { "ra", "right", "default:cpu=2", NULL },
		  { "rb", "right", "default:cpu=2", NULL } },
	  .adm = { { "lb1", "lb", 0, 100, "default", "cpu=4", false },
		   { "ra1", "ra", 0, 100, "default", "cpu=2", false },
		   { "rb1", "rb", 0, 100, "default", "cpu=4", false } },
	  .pend = { { "pl", "la", 0, 10, 1, "cpu=2", 0 },
		    { "pr", "ra", 0, 100, 1, "cpu=1", 0 } },
	  .victims = "", .now = "pr:default", .waiting = "", .after = "" },
	/*
	 * Within nominal beats borrowing, even with the higher share: a
	 * borrows 4 on f2 (share 4000/12 = 333, lendable cpu is f1 4 + f2
	 * 8), but pa asks f1 where a stays within its nominal; pb (older,
	 * higher priority) would make b borrow 1 on f1 (83). 3 f1 free.
	 */
	{ .name = "tournament_within_nominal_beats_borrowing",
	  .cq = { { "a", "co", "f1:cpu=2 f2:cpu=0", NULL },
		  { "b", "co", "f1:cpu=1 f2:cpu=0", NULL },
		  { "c", "co", "f1:cpu=1 f2:cpu=8", NULL } },
	  .adm = { { "a2", "a", 0, 100, "f2", "cpu=4", false },
		   { "c1", "c", 0, 100, "f1", "cpu=1", false } },
	  .pend = { { "pa", "a", 0, 10, 1, "cpu=2", 0 },
		    { "pb", "b", 5, 100, 1, "cpu=2", 0 } },
	  .victims = "", .now = "pa:f1", .waiting = "", .after = "",
	  .fs = "" },

	/*
	 * §4.5 preemption. "reclaim nominal from user using the most": c
	 * stays within its nominal with c_in, so it reclaims from b (the
	 * highest share) without a strategy check; b1 first (same
	 * admission time: uid).
	 */
	{ .name = "fs_within_nominal_reclaims",
	  .cq = { FS_BASE },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   U1("b1", "b"), U1("b2", "b"), U1("b3", "b"),
		   U1("b4", "b"), U1("b5", "b"), U1("c1", "c") },
	  .pend = { { "c_in", "c", 0, 10, 1, "cpu=1", 0 } },
	  .victims = "b1:InCohortReclamation", .now = "",
	  .waiting = "c_in:1", .after = "c_in:default", .fs = "" },
	/*
	 * S2-a. all = a b c d (3 each): 12, full. a_in (2) makes a 4:
	 * 1000/12 = 83. b (6) is at 250, c (4) at 83 with the newest
	 * workload. b3, b's newest, leaves b at 83 >= 83: preempted.
	 */
	{ .name = "fs_lte_highest_share_newest",
	  .cq = { { "a", "all", "default:cpu=3", FS },
		  { "b", "all", "default:cpu=3", FS },
		  { "c", "all", "default:cpu=3", FS },
		  { "d", "all", "default:cpu=3", FS } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=2", false },
		   { "b1", "b", 0, 100, "default", "cpu=2", false },
		   { "b2", "b", 0, 80, "default", "cpu=2", false },
		   { "b3", "b", 0, 60, "default", "cpu=2", false },
		   { "c1", "c", 0, 50, "default", "cpu=4", false } },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "b3:InCohortFairSharing", .now = "",
	  .waiting = "a_in:1", .after = "a_in:default", .fs = "LTE" },
	{ .name = "fs_default_highest_share_newest",
	  .cq = { { "a", "all", "default:cpu=3", FS },
		  { "b", "all", "default:cpu=3", FS },
		  { "c", "all", "default:cpu=3", FS },
		  { "d", "all", "default:cpu=3", FS } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=2", false },
		   { "b1", "b", 0, 100, "default", "cpu=2", false },
		   { "b2", "b", 0, 80, "default", "cpu=2", false },
		   { "b3", "b", 0, 60, "default", "cpu=2", false },
		   { "c1", "c", 0, 50, "default", "cpu=4", false } },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "b3:InCohortFairSharing", .now = "",
	  .waiting = "a_in:1", .after = "a_in:default", .fs = "" },
	/* "can't preempt when it would switch the imbalance": a_in makes a
	 * 5 (222); b at 5 (222) would drop to 111. */
	{ .name = "fs_no_inversion",
	  .cq = { FS_BASE },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   U1("b1", "b"), U1("b2", "b"), U1("b3", "b"),
		   U1("b4", "b"), U1("b5", "b") },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "", .fs = "" },
	/*
	 * Only S2-b: a_in makes a 5 (222); b (6) is at 333 and its only
	 * workload would leave it at 0: S2-a fails (222 > 0), S2-b passes
	 * (222 < 333).
	 */
	{ .name = "fs_only_second_strategy",
	  .cq = { FS_BASE },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "b1", "b", 0, 100, "default", "cpu=6", false } },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "b1:InCohortFairSharing", .now = "",
	  .waiting = "a_in:1", .after = "a_in:default", .fs = "" },
	{ .name = "fs_only_second_strategy_lte_alone",
	  .cq = { FS_BASE },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "b1", "b", 0, 100, "default", "cpu=6", false } },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "",
	  .fs = "LTE" },
	{ .name = "fs_only_second_strategy_lti_alone",
	  .cq = { FS_BASE },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "b1", "b", 0, 100, "default", "cpu=6", false } },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "b1:InCohortFairSharing", .now = "",
	  .waiting = "a_in:1", .after = "a_in:default", .fs = "LTI" },
	/*
	 * "preempt lower priority first, even if big" ([LTI]) and
	 * "preempt workload that doesn't transfer the imbalance" ([LTE],
	 * here the default list): a_in makes a 4 (111), b (6) is at 333.
	 * LTI takes b's first candidate, b_low; LTE rejects it (b would
	 * drop to 0) and takes b_high (b stays at 222).
	 */
	{ .name = "fs_lti_lower_priority_first",
	  .cq = { FS_BASE },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "b_low", "b", 0, 100, "default", "cpu=5", false },
		   { "b_high", "b", 1, 100, "default", "cpu=1", false } },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=1", 0 } },
	  .victims = "b_low:InCohortFairSharing", .now = "",
	  .waiting = "a_in:1", .after = "a_in:default", .fs = "LTI" },
	{ .name = "fs_lte_no_transfer_even_high_priority",
	  .cq = { FS_BASE },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   { "b_low", "b", 0, 100, "default", "cpu=5", false },
		   { "b_high", "b", 1, 100, "default", "cpu=1", false } },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=1", 0 } },
	  .victims = "b_high:InCohortFairSharing", .now = "",
	  .waiting = "a_in:1", .after = "a_in:default", .fs = "" },
	/*
	 * withinClusterQueue still decides inside a: "can preempt lower
	 * priority workloads from same CQ". a (4) with a_in is at 333, b
	 * at 222: a1_low goes (a 222); b's workloads would drop b to 111;
	 * a2_low goes.
	 */
	{ .name = "fs_within_cq_lower_priority",
	  .cq = { FS_BASE },
	  .adm = { { "a1_low", "a", -1, 100, "default", "cpu=1", false },
		   { "a2_low", "a", -1, 100, "default", "cpu=1", false },
		   { "a3", "a", 0, 100, "default", "cpu=2", false },
		   U1("b1", "b"), U1("b2", "b"), U1("b3", "b"),
		   U1("b4", "b"), U1("b5", "b") },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "a1_low:InClusterQueue a2_low:InClusterQueue",
	  .now = "", .waiting = "a_in:2", .after = "a_in:default",
	  .fs = "" },
	/* "can preempt a combination of same CQ and highest user": b (6,
	 * 333) gives b1 (S2-a: 222 <= 222), then a's own a_low */
	{ .name = "fs_within_cq_and_highest_share",
	  .cq = { FS_BASE },
	  .adm = { { "a_low", "a", -1, 100, "default", "cpu=1", false },
		   { "a2", "a", 0, 100, "default", "cpu=2", false },
		   U1("b1", "b"), U1("b2", "b"), U1("b3", "b"),
		   U1("b4", "b"), U1("b5", "b"), U1("b6", "b") },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "a_low:InClusterQueue b1:InCohortFairSharing",
	  .now = "", .waiting = "a_in:2", .after = "a_in:default",
	  .fs = "" },
	/* "CQ with higher weight can preempt more": a's weight 2 */
	{ .name = "fs_weight_preempts_more",
	  .cq = { { "a", "all", "default:cpu=3",
		    "wcq=LowerPriority rwc=Any w=2000" },
		  { "b", "all", "default:cpu=3",
		    "wcq=LowerPriority rwc=Any" },
		  { "c", "all", "default:cpu=3",
		    "wcq=LowerPriority rwc=Any" } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   U1("b1", "b"), U1("b2", "b"), U1("b3", "b"),
		   U1("b4", "b"), U1("b5", "b"), U1("b6", "b") },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=2", 0 } },
	  .victims = "b1:InCohortFairSharing b2:InCohortFairSharing",
	  .now = "", .waiting = "a_in:2", .after = "a_in:default",
	  .fs = "" },
	/* "can preempt anything borrowing from CQ with 0 weight" */
	{ .name = "fs_zero_weight_target",
	  .cq = { { "a", "all", "default:cpu=3",
		    "wcq=LowerPriority rwc=Any" },
		  { "b", "all", "default:cpu=3",
		    "wcq=LowerPriority rwc=Any w=0" },
		  { "c", "all", "default:cpu=3",
		    "wcq=LowerPriority rwc=Any" } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   U1("b1", "b"), U1("b2", "b"), U1("b3", "b"),
		   U1("b4", "b"), U1("b5", "b"), U1("b6", "b") },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=3", 0 } },
	  .victims = "b1:InCohortFairSharing b2:InCohortFairSharing "
		     "b3:InCohortFairSharing",
	  .now = "", .waiting = "a_in:3", .after = "a_in:default",
	  .fs = "" },
	/* "can't preempt nominal from CQ with 0 weight" */
	{ .name = "fs_zero_weight_keeps_nominal",
	  .cq = { { "a", "all", "default:cpu=3",
		    "wcq=LowerPriority rwc=Any" },
		  { "b", "all", "default:cpu=3",
		    "wcq=LowerPriority rwc=Any w=0" } },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=3", false },
		   U1("b1", "b"), U1("b2", "b"), U1("b3", "b") },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=1", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "", .fs = "" },
	/*
	 * "can't preempt nominal from Cohort with 0 weight": root{left-cq
	 * (0), right-cohort(1, weight 0){right-cq(0, weight 0)}}; right-1
	 * uses right-cohort's own quota, which left-1 may not take.
	 */
	{ .name = "fs_zero_weight_cohort_keeps_nominal",
	  .co = { { "root", NULL, NULL, NULL },
		  { "right-cohort", "root", "default:cpu=1", "0" } },
	  .cq = { { "left-cq", "root", "default:cpu=0", "rwc=Any" },
		  { "right-cq", "right-cohort", "default:cpu=0",
		    "rwc=Any w=0" } },
	  .adm = { { "right-1", "right-cq", 0, 100, "default", "cpu=1",
		     false } },
	  .pend = { { "left-1", "left-cq", 0, 10, 1, "cpu=1", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "", .fs = "" },
	/*
	 * "can't preempt huge workload if the incoming is also huge": a_in
	 * makes a 7 (444); b (7) is at 444: neither strategy passes.
	 */
	{ .name = "fs_huge_incoming",
	  .cq = { FS_BASE },
	  .adm = { { "a1", "a", 0, 100, "default", "cpu=2", false },
		   { "b1", "b", 0, 100, "default", "cpu=7", false } },
	  .pend = { { "a_in", "a", 0, 10, 1, "cpu=5", 0 } },
	  .victims = "", .now = "", .waiting = "", .after = "", .fs = "" },
};

#define NFCASES (sizeof(fcases) / sizeof(fcases[0]))

START_TEST(fair_table)
{
	run_case(&fcases[_i]);
}
END_TEST

/*
 * kueue-api §7.4 under fair sharing: reason InCohortFairSharing, "due to
 * Fair Sharing within the cohort", and both paths through a hierarchy.
 * root{left{a(3)}, right{b(1)}, z(5)}: a_in makes left 5 over 3 (222);
 * right is 6 over 1 (556) and would drop to 0 without b1, so only S2-b
 * (222 < 556) preempts it.
 */
START_TEST(fair_message_paths)
{
	const struct prec *r;

	fx_begin_fs(1, "");
	add_flavor("default");
	add_cohort("root", NULL, NULL);
	add_cohort("left", "root", NULL);
	add_cohort("right", "root", NULL);
	add_cq("a", "left", "default:cpu=3", FS);
	add_cq("b", "right", "default:cpu=1", NULL);
	add_cq("z", "root", "default:cpu=5", NULL);
	add_admitted("a1", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=3", false);
	add_admitted("b1", "b", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=6", false);
	add_pending("a_in", "a", 0, T0 - 10 * SEC, 1, "cpu=2", 0);
	cycle();
	r = find_rec("b1", DEC_PREEMPT, 1);
	ck_assert_msg(r, "b1 not preempted:%s", log_text(1));
	ck_assert_str_eq(r->cq, "b");
	ck_assert_str_eq(r->reason, "Preempted");
	ck_assert_str_eq(r->preempt_reason, "InCohortFairSharing");
	ck_assert_str_eq(r->preemptor, "a_in");
	ck_assert_str_eq(r->preemptor_cq, "a");
	ck_assert_str_eq(r->msg, "Preempted to accommodate a workload (UID: "
			 "uid-a_in, JobUID: job-uid-x) due to Fair Sharing "
			 "within the cohort; preemptor path: /root/left/a; "
			 "preemptee path: /root/right/b");
	ck_assert(!find_rec("a1", DEC_PREEMPT, 0));
	r = find_rec("a_in", DEC_PENDING, 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_msg(ends_with(r->msg, PENDING_SUFFIX "1 workload(s)"), "'%s'",
		      r->msg);
	P.now += SEC;
	wl_release("b1");
	cycle();
	ck_assert_msg(find_rec("a_in", DEC_ADMIT, 0), "%s", log_text(0));
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* explain (flavors/explain.h): the cycle's question, as data */

/* The quota arithmetic and holders of a parked workload, and its message
 * equal to the one the cycle wrote. all{a(4), b(4)}: a1 holds 3 in a, b1
 * 4 in b; a_in asks for 3 and nothing may be preempted. */
START_TEST(explain_quota_and_holders)
{
	struct sched_explain x = { .position = -1 };
	const struct prec *r;

	fx_begin(0);
	add_flavor("default");
	add_cq("a", "all", "default:cpu=4", NULL);
	add_cq("b", "all", "default:cpu=4", NULL);
	add_admitted("a1", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=3", false);
	add_admitted("b1", "b", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=4", false);
	add_pending("a_in", "a", 0, T0 - 10 * SEC, 1, "cpu=3", 0);
	cycle();
	r = find_rec("a_in", DEC_PENDING, 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(sched_explain(P.s, "ns", "a_in", P.now, &x),
			 SX_PARKED);
	ck_assert_str_eq(x.cq, "a");
	ck_assert_str_eq(x.lq, "ns/lq");
	ck_assert_int_eq(x.position, 0);
	ck_assert(x.assessed && x.cq_active && !x.never_fits);
	ck_assert_int_ne(x.mode, ASSIGN_FIT);
	ck_assert_str_eq(x.message, r->msg);
	ck_assert_uint_eq(x.nps, 1);
	ck_assert_int_eq(x.ps[0].count, 1);
	ck_assert_uint_eq(x.ps[0].nres, 1);
	ck_assert_str_eq(x.ps[0].res[0], "cpu");
	ck_assert_int_eq(x.ps[0].per_pod[0], CPU(3));
	ck_assert_uint_eq(x.nquota, 1);
	ck_assert_str_eq(x.quota[0].flavor, "default");
	ck_assert_str_eq(x.quota[0].resource, "cpu");
	ck_assert_int_eq(x.quota[0].request, CPU(3));
	ck_assert_int_eq(x.quota[0].nominal, CPU(4));
	ck_assert(!x.quota[0].has_borrowing_limit);
	ck_assert_int_eq(x.quota[0].used, CPU(3));
	ck_assert_int_eq(x.quota[0].cohort_used, CPU(7));
	ck_assert_int_eq(x.quota[0].available, CPU(1));
	ck_assert_int_eq(x.quota[0].max, CPU(8));
	ck_assert_uint_eq(x.quota[0].ntop, 1);
	ck_assert_str_eq(x.quota[0].top[0].w->meta.name, "a1");
	ck_assert_int_eq(x.quota[0].top[0].v, CPU(3));
	ck_assert_uint_eq(x.quota[0].nctop, 1);
	ck_assert_str_eq(x.quota[0].ctop[0].w->meta.name, "b1");
	ck_assert_str_eq(x.quota[0].ctop[0].cq, "b");
	ck_assert_uint_eq(x.nreasons, 1);
	ck_assert_int_eq(x.reasons[0].kind, SXK_QUOTA);
	ck_assert_int_eq(x.reasons[0].needed, CPU(2));
	ck_assert_str_eq(x.reasons[0].text, "insufficient unused quota for "
			 "cpu in flavor default, 2 more needed");
	ck_assert_uint_eq(x.nvictims, 0);
	ck_assert_int_eq(x.est_start_ms, 0);
	/* the holder and an unknown name */
	ck_assert_int_eq(sched_explain(P.s, "ns", "a1", P.now, &x),
			 SX_HOLDING);
	ck_assert_str_eq(x.cq, "a");
	ck_assert_int_eq(sched_explain(P.s, "ns", "nope", P.now, &x),
			 SX_UNKNOWN);
	sched_explain_release(&x);
	fx_end();
}
END_TEST

/* The victims explain names are the ones the next cycle preempts, and
 * asking changes nothing: the cycle still decides the same. */
START_TEST(explain_victims_match_cycle)
{
	struct sched_explain x = { .position = -1 };
	const struct prec *r;

	fx_begin(0);
	add_flavor("default");
	add_cq("a", NULL, "default:cpu=4", "wcq=LowerPriority");
	add_admitted("a1", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=2", false);
	add_admitted("a2", "a", 5, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=2", false);
	add_pending("a_hi", "a", 10, T0 - 10 * SEC, 1, "cpu=2", 0);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(sched_explain(P.s, "ns", "a_hi", P.now, &x),
				 SX_PENDING);
		ck_assert_int_eq(x.mode, ASSIGN_PREEMPT);
		ck_assert_uint_eq(x.nvictims, 1);
		ck_assert_str_eq(x.victims[0].w->meta.name, "a1");
		ck_assert_str_eq(x.victims[0].reason, "InClusterQueue");
		ck_assert_msg(ends_with(x.message, PENDING_SUFFIX
					"1 workload(s)"), "'%s'", x.message);
	}
	CHECK();
	cycle();
	r = find_rec("a1", DEC_PREEMPT, 1);
	ck_assert_msg(r, "a1 not preempted:%s", log_text(1));
	ck_assert(!find_rec("a2", DEC_PREEMPT, 0));
	r = find_rec("a_hi", DEC_PENDING, 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->msg, x.message);
	sched_explain_release(&x);
	fx_end();
}
END_TEST

/* Never fits: above the maximum capacity on every flavor, or only
 * tainted flavors; a pod set whose minCount fits is not "never". */
START_TEST(explain_never_fits)
{
	struct sched_explain x = { .position = -1 };

	fx_begin(0);
	add_flavor("default");
	add_cq("a", "all", "default:cpu=4/2", NULL);
	add_cq("b", "all", "default:cpu=4", NULL);
	add_admitted("a1", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC, "default",
		     "cpu=4", false);
	add_pending("huge", "a", 0, T0 - 10 * SEC, 7, "cpu=1", 0);
	add_pending("part", "a", 0, T0 - 9 * SEC, 7, "cpu=1", 2);
	ck_assert_int_eq(sched_explain(P.s, "ns", "huge", P.now, &x),
			 SX_PENDING);
	ck_assert(x.never_fits);
	ck_assert_uint_eq(x.nreasons, 1);
	ck_assert_int_eq(x.reasons[0].kind, SXK_MAX_CAPACITY);
	ck_assert_int_eq(x.reasons[0].needed, CPU(7));
	ck_assert_int_eq(x.reasons[0].max, CPU(6));
	ck_assert_int_eq(x.quota[0].max, CPU(6));
	ck_assert(x.quota[0].has_borrowing_limit);
	ck_assert_int_eq(x.quota[0].borrowing_limit, CPU(2));
	ck_assert_int_eq(sched_explain(P.s, "ns", "part", P.now, &x),
			 SX_PENDING);
	ck_assert(!x.never_fits);
	ck_assert_int_eq(x.ps[0].min_count, 2);
	/* partial admission: 2 of 7 fit the 2 borrowable */
	ck_assert_int_eq(x.mode, ASSIGN_FIT);
	ck_assert_int_eq(x.ps[0].assigned_count, 2);
	ck_assert_str_eq(x.ps[0].flavor[0], "default");
	sched_explain_release(&x);
	fx_end();
}
END_TEST

/* The estimated start: when the holders with a maximum execution time
 * that must end for it to fit have reached it. */
START_TEST(explain_estimated_start)
{
	struct sched_explain x = { .position = -1 };
	struct workload *w;

	fx_begin(0);
	add_flavor("default");
	add_cq("a", NULL, "default:cpu=4", NULL);
	w = add_admitted("a1", "a", 0, T0 - 200 * SEC, T0 - 100 * SEC,
			 "default", "cpu=2", false);
	w = wl_copy("a1");
	w->has_max_exec = true;
	w->max_exec_seconds = 600;
	put(w);
	w = add_admitted("a2", "a", 0, T0 - 200 * SEC, T0 - 50 * SEC,
			 "default", "cpu=2", false);
	w = wl_copy("a2");
	w->has_max_exec = true;
	w->max_exec_seconds = 300;
	w->has_accumulated = true;
	w->accumulated_seconds = 100;
	put(w);
	/* a2 ends at T0 + 150 s, a1 at T0 + 500 s: 3 cpus need both */
	add_pending("wait3", "a", 0, T0 - 10 * SEC, 1, "cpu=3", 0);
	ck_assert_int_eq(sched_explain(P.s, "ns", "wait3", P.now, &x),
			 SX_PENDING);
	ck_assert_int_eq(x.est_start_ms, T0 + 500 * SEC);
	ck_assert_uint_eq(x.est_after, 2);
	add_pending("wait2", "a", 0, T0 - 5 * SEC, 1, "cpu=2", 0);
	ck_assert_int_eq(sched_explain(P.s, "ns", "wait2", P.now, &x),
			 SX_PENDING);
	ck_assert_int_eq(x.est_start_ms, T0 + 150 * SEC);
	ck_assert_uint_eq(x.est_after, 1);
	CHECK();
	sched_explain_release(&x);
	fx_end();
}
END_TEST

/* TopologyAwareScheduling is not built: a pod set asking for a topology
 * is never admitted onto a flavor without one (Kueue's message), nor onto
 * one with a topology (cueue cannot place it); a flavor with a topology
 * takes nothing else. explain calls these never-fits. */
START_TEST(tas_never_admitted)
{
	struct sched_explain x = { .position = -1 };
	const struct prec *r;
	struct workload *w;

	fx_begin(0);
	add_flavor("plain");
	add_flavor("tas");
	P.rf[1]->topology_name = xstrdup("topo");
	sched_flavor_set(P.s, P.rf[1]);
	sched_topology_set(P.s, "topo", true);
	add_cq("a", NULL, "plain:cpu=4", NULL);
	add_cq("t", NULL, "tas:cpu=4", NULL);
	add_cq("m", NULL, "plain:cpu=4 tas:cpu=4", NULL);
	add_pending("a_tas", "a", 0, T0 - 10 * SEC, 1, "cpu=1", 0);
	w = wl_copy("a_tas");
	w->pod_sets[0].tas_requested = true;
	put(w);
	add_pending("a_plain", "a", 0, T0 - 9 * SEC, 1, "cpu=1", 0);
	add_pending("t_plain", "t", 0, T0 - 8 * SEC, 1, "cpu=1", 0);
	add_pending("m_plain", "m", 0, T0 - 7 * SEC, 1, "cpu=1", 0);
	add_pending("m_tas", "m", 0, T0 - 6 * SEC, 1, "cpu=1", 0);
	w = wl_copy("m_tas");
	w->pod_sets[0].tas_requested = true;
	put(w);
	cycle();
	r = find_rec("a_tas", DEC_PENDING, 1);
	ck_assert_msg(r, "%s", log_text(1));
	ck_assert_str_eq(r->msg, "couldn't assign flavors to pod set main: "
			 "Flavor \"plain\" does not support "
			 "TopologyAwareScheduling");
	ck_assert_ptr_nonnull(find_rec("a_plain", DEC_ADMIT, 1));
	r = find_rec("t_plain", DEC_PENDING, 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->msg, "couldn't assign flavors to pod set main: "
			 "Flavor \"tas\" uses TopologyAwareScheduling, which "
			 "cueue does not implement yet");
	r = find_rec("m_plain", DEC_ADMIT, 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(adm_flavor(r, "cpu"), "plain");
	r = find_rec("m_tas", DEC_PENDING, 1);
	ck_assert_ptr_nonnull(r);
	ck_assert_str_eq(r->msg, "couldn't assign flavors to pod set main: "
			 "Flavor \"plain\" does not support "
			 "TopologyAwareScheduling, Flavor \"tas\" uses "
			 "TopologyAwareScheduling, which cueue does not "
			 "implement yet");
	ck_assert_int_eq(sched_explain(P.s, "ns", "m_tas", P.now, &x),
			 SX_PARKED);
	ck_assert(x.never_fits);
	ck_assert_uint_eq(x.nreasons, 2);
	ck_assert_int_eq(x.reasons[0].kind, SXK_TOPOLOGY);
	ck_assert_str_eq(sched_xkind_name(x.reasons[1].kind), "topology");
	/* a flavor with a topology takes no plain pod set in a queue that
	 * mixes: Kueue's "supports only" */
	add_cq("m2", NULL, "tas:cpu=4 plain:cpu=0", NULL);
	add_pending("m2_plain", "m2", 0, T0 - 5 * SEC, 1, "cpu=1", 0);
	cycle();
	r = find_rec("m2_plain", DEC_PENDING, 0);
	ck_assert_msg(r, "%s", log_text(0));
	ck_assert_ptr_nonnull(strstr(r->msg, "Flavor \"tas\" supports only "
				     "TopologyAwareScheduling"));
	sched_explain_release(&x);
	fx_end();
}
END_TEST

static TCase *new_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 60);
	return tc;
}

Suite *preempt_suite(void)
{
	Suite *s = suite_create("preempt");
	TCase *tc;

	tc = new_tcase("table");
	tcase_add_loop_test(tc, table, 0, (int)NCASES);
	tcase_add_test(tc, table_vs_reference);
	suite_add_tcase(s, tc);

	tc = new_tcase("lifecycle");
	tcase_add_test(tc, message_and_paths);
	tcase_add_loop_test(tc, evicted_written_back, 0, 2);
	tcase_add_test(tc, victims_removed);
	tcase_add_test(tc, sticky_preemptor);
	tcase_add_test(tc, reserved_not_admitted_is_candidate);
	tcase_add_test(tc, failed_write_rechecked);
	tcase_add_test(tc, admitted_in_same_call);
	suite_add_tcase(s, tc);

	tc = new_tcase("fair");
	tcase_add_loop_test(tc, fair_table, 0, (int)NFCASES);
	tcase_add_test(tc, fair_message_paths);
	suite_add_tcase(s, tc);

	tc = new_tcase("explain");
	tcase_add_test(tc, explain_quota_and_holders);
	tcase_add_test(tc, explain_victims_match_cycle);
	tcase_add_test(tc, explain_never_fits);
	tcase_add_test(tc, explain_estimated_start);
	tcase_add_test(tc, tas_never_admitted);
	suite_add_tcase(s, tc);

	tc = new_tcase("random");
	tcase_add_loop_test(tc, random_vs_reference, 0, 4);
	tcase_add_loop_test(tc, random_streams, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
