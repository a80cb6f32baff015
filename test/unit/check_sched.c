/*
 * Suite "sched": black-box scenarios for the scheduling core's contract
 * (flavors/sched.h), written from kueue-scheduler.md §1-3, kueue-api.md
 * §3 and §7.4 and Kueue v0.14's flavorassigner wording, not from the
 * implementation.
 *
 * Each test builds plain objects (model/objects.h) with the helpers
 * below, feeds them to sched, runs cycles at a fixed clock and asserts
 * on the decisions (kind, queue, reason, message, admission), the queue
 * status and usage, and the LocalQueue counts. sched_check runs after
 * every step. Every object handed to sched stays alive in a pool until
 * the test ends, so replaced objects are never freed under sched.
 * Two randomized cases (loop tests, fixed seeds) compare the usage sched
 * reports with the sum of the admissions it decided, and re-derive the
 * §3 tree limits independently to prove nothing is ever over-admitted.
 *
 * Units: cpu in milli-units (CPU(2) = 2000), everything else in
 * milli-units of whole values (N(3) = 3000, GI(1) = 1Gi x 1000).
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "flavors/sched.h"
#include "model/objects.h"
#include "test/unit/quota_spec.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "suites.h"
#include "test/support/support.h"

#define T0 INT64_C(1767225600000) /* the fixed clock: 2026-01-01T00:00Z */
#define SEC INT64_C(1000)
#define CPU(n) ((int64_t)(n) * 1000)
#define N(n) ((int64_t)(n) * 1000)
#define GI(n) ((int64_t)(n) * INT64_C(1073741824) * 1000)

#define PS_MAIN "couldn't assign flavors to pod set main: "

/*
 * For an expectation the implementation does not meet yet (marked IMPL
 * BUG with its spec reference where used; none at the moment): it
 * prints instead of failing, unless built with -DSCHED_STRICT.
 */
#ifdef SCHED_STRICT
#define IMPL_BUG(cond, ...) ck_assert_msg(cond, __VA_ARGS__)
#else
#define IMPL_BUG(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "IMPL BUG (check_sched.c:%d): ", \
				__LINE__); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)
#endif

#define CHECK() \
	ck_assert_msg(sched_check(F.s), "sched_check failed at line %d", \
		      __LINE__)

/* ------------------------------------------------------------------ */
/* The fixture: sched, the object pool and a log of every decision. */

struct rec {
	char *wl;        /* workload name */
	enum sched_dec_kind kind;
	char *cq;        /* decision's ClusterQueue or NULL */
	char *reason;    /* pending: reason */
	char *msg;       /* pending: message */
	int borrowing;   /* admit: borrowing level */
	struct admission adm; /* admit: sched_decision_admission */
	unsigned cycle;  /* which cycle (1-based) */
};

struct wlent {
	struct workload *w; /* owned */
	char *cq;           /* owned or NULL: the cq argument it was set with */
	char *lq;           /* owned or NULL */
	bool set;           /* handed to sched_wl_set */
};

struct fx {
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
	struct wlent *wl;
	size_t nwl, capwl;
	struct rec *log;
	size_t nlog, caplog;
};

static struct fx F;

static void fx_begin_opts(const struct sched_opts *o)
{
	memset(&F, 0, sizeof(F));
	F.s = sched_new(o);
	ck_assert_ptr_nonnull(F.s);
	F.now = T0;
	CHECK();
}

static void fx_begin(void)
{
	struct sched_opts o;

	sched_opts_default(&o);
	fx_begin_opts(&o);
}

static void fx_end(void)
{
	size_t i;

	sched_decisions_release(&F.d);
	sched_free(F.s);
	for (i = 0; i < F.nrf; i++) {
		resource_flavor_release(F.rf[i]);
		free(F.rf[i]);
	}
	for (i = 0; i < F.nco; i++) {
		cohort_release(F.co[i]);
		free(F.co[i]);
	}
	for (i = 0; i < F.ncq; i++) {
		cluster_queue_release(F.cq[i]);
		free(F.cq[i]);
	}
	for (i = 0; i < F.nwl; i++) {
		workload_release(F.wl[i].w);
		free(F.wl[i].w);
		free(F.wl[i].cq);
		free(F.wl[i].lq);
	}
	for (i = 0; i < F.nlog; i++) {
		free(F.log[i].wl);
		free(F.log[i].cq);
		free(F.log[i].reason);
		free(F.log[i].msg);
		admission_release(&F.log[i].adm);
	}
	free(F.rf);
	free(F.co);
	free(F.cq);
	free(F.wl);
	free(F.log);
	memset(&F, 0, sizeof(F));
}

/* ------------------------------------------------------------------ */
/* Object builders. mk_* allocate into the pool; put_* hand to sched. */

static struct resource_flavor *mk_flavor(const char *name)
{
	struct resource_flavor *rf = xcalloc(1, sizeof(*rf));

	rf->meta.name = xstrdup(name);
	rf->meta.uid = xasprintf("uid-rf-%s", name);
	rf->meta.generation = 1;
	rf->meta.creation_ms = T0 - 3600 * SEC;
	rf->version = API_V1BETA1;
	XGROW(F.rf, F.caprf, F.nrf + 1);
	F.rf[F.nrf++] = rf;
	return rf;
}

static void flavor_taint(struct resource_flavor *rf, const char *key,
			 const char *value, enum taint_effect effect)
{
	rf->taints = xrealloc(rf->taints,
			      (rf->ntaints + 1) * sizeof(*rf->taints));
	memset(&rf->taints[rf->ntaints], 0, sizeof(*rf->taints));
	rf->taints[rf->ntaints].key = xstrdup(key);
	rf->taints[rf->ntaints].value = xstrdup(value);
	rf->taints[rf->ntaints].effect = effect;
	rf->ntaints++;
}

static void put_flavor(struct resource_flavor *rf)
{
	sched_flavor_set(F.s, rf);
	CHECK();
}

static struct resource_flavor *add_flavor(const char *name)
{
	struct resource_flavor *rf = mk_flavor(name);

	put_flavor(rf);
	return rf;
}

static struct cohort *mk_cohort(const char *name, const char *parent,
				const char *groups)
{
	struct cohort *c = xcalloc(1, sizeof(*c));

	c->meta.name = xstrdup(name);
	c->meta.uid = xasprintf("uid-co-%s", name);
	c->meta.generation = 1;
	c->meta.creation_ms = T0 - 3600 * SEC;
	c->version = API_V1BETA1;
	c->parent = xstrdup_or_null(parent);
	spec_groups(groups, &c->groups, &c->ngroups);
	XGROW(F.co, F.capco, F.nco + 1);
	F.co[F.nco++] = c;
	return c;
}

static void put_cohort(struct cohort *c)
{
	sched_cohort_set(F.s, c);
	CHECK();
}

static struct cluster_queue *mk_cq(const char *name, const char *cohort,
				   const char *groups)
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
	XGROW(F.cq, F.capcq, F.ncq + 1);
	F.cq[F.ncq++] = cq;
	return cq;
}

static void put_cq(struct cluster_queue *cq)
{
	sched_cq_set(F.s, cq, NULL);
	CHECK();
}

static struct cluster_queue *add_cq(const char *name, const char *cohort,
				    const char *groups)
{
	struct cluster_queue *cq = mk_cq(name, cohort, groups);

	put_cq(cq);
	return cq;
}

static struct workload *pool_wl(void)
{
	struct workload *w = xcalloc(1, sizeof(*w));

	XGROW(F.wl, F.capwl, F.nwl + 1);
	memset(&F.wl[F.nwl], 0, sizeof(F.wl[F.nwl]));
	F.wl[F.nwl++].w = w;
	return w;
}

static struct wlent *wl_entry(const struct workload *w)
{
	for (size_t i = 0; i < F.nwl; i++)
		if (F.wl[i].w == w)
			return &F.wl[i];
	ck_abort_msg("workload not in the pool");
	return NULL;
}

/* The last struct of that name that was handed to sched. */
static struct wlent *wl_latest(const char *name)
{
	for (size_t i = F.nwl; i-- > 0;)
		if (F.wl[i].set)
			if (!strcmp(F.wl[i].w->meta.name, name))
				return &F.wl[i];
	ck_abort_msg("no workload %s was set", name);
	return NULL;
}

/* Appends a pod set with one container requesting req. */
static struct pod_set *add_ps(struct workload *w, const char *name,
			      int32_t count, const char *req)
{
	struct pod_set *ps;

	w->pod_sets = xrealloc(w->pod_sets,
			       (w->npod_sets + 1) * sizeof(*w->pod_sets));
	ps = &w->pod_sets[w->npod_sets++];
	memset(ps, 0, sizeof(*ps));
	ps->name = xstrdup(name);
	ps->count = count;
	ps->tmpl.containers = xcalloc(1, sizeof(*ps->tmpl.containers));
	ps->tmpl.ncontainers = 1;
	ps->tmpl.containers[0].name = xstrdup("c");
	reslist_init(&ps->tmpl.containers[0].requests);
	reslist_init(&ps->tmpl.containers[0].limits);
	if (req)
		spec_res(req, &ps->tmpl.containers[0].requests);
	node_affinity_init(&ps->tmpl.affinity);
	return ps;
}

/* A pending workload ns/name, one pod set "main" (count x req). */
static struct workload *mk_wl_ns(const char *ns, const char *name,
				 int32_t prio, int64_t created, int32_t count,
				 const char *req)
{
	struct workload *w = pool_wl();

	w->meta.name = xstrdup(name);
	w->meta.namespace = xstrdup(ns);
	w->meta.uid = xasprintf("uid-%s", name);
	w->meta.generation = 1;
	w->meta.creation_ms = created;
	w->version = API_V1BETA1;
	w->queue_name = xstrdup("lq");
	w->has_priority = true;
	w->priority = prio;
	w->active = true;
	if (req)
		add_ps(w, DEFAULT_PODSET_NAME, count, req);
	return w;
}

static struct workload *mk_wl(const char *name, int32_t prio,
			      int64_t created, int32_t count, const char *req)
{
	return mk_wl_ns("ns", name, prio, created, count, req);
}

static void put_wl_lq(struct workload *w, const char *cq, const char *lq)
{
	struct wlent *e = wl_entry(w);

	free(e->cq);
	free(e->lq);
	e->cq = xstrdup_or_null(cq);
	e->lq = xstrdup_or_null(lq);
	e->set = true;
	sched_wl_set(F.s, w, cq, lq);
	CHECK();
}

static void put_wl(struct workload *w, const char *cq)
{
	put_wl_lq(w, cq, "ns/lq");
}

/* A fresh pool copy of the last struct of name, set with the same queue. */
static struct workload *wl_copy_latest(const char *name, struct wlent **src)
{
	const struct workload *old = wl_latest(name)->w;
	struct workload *w = pool_wl(); /* may move the pool: old is stable */

	workload_copy(w, old);
	*src = wl_latest(name);
	return w;
}

static void wl_finish(const char *name)
{
	struct wlent *e;
	struct workload *w = wl_copy_latest(name, &e);

	ck_assert(conditions_set(&w->conds, "Finished", COND_TRUE, "Succeeded",
				 "Job finished successfully", 1, F.now));
	put_wl_lq(w, e->cq, e->lq);
}

/* ------------------------------------------------------------------ */
/* Cycles and the decision log. */

static void log_decision(const struct sched_decision *d)
{
	struct rec *r;

	XGROW(F.log, F.caplog, F.nlog + 1);
	r = &F.log[F.nlog++];
	memset(r, 0, sizeof(*r));
	ck_assert_ptr_nonnull(d->wl);
	r->wl = xstrdup(d->wl->meta.name);
	r->kind = d->kind;
	r->cq = xstrdup_or_null(d->cq);
	r->cycle = F.ncycles;
	if (d->kind == DEC_ADMIT) {
		ck_assert_ptr_null(d->reason);
		ck_assert_ptr_null(d->message);
		r->borrowing = d->borrowing;
		sched_decision_admission(F.s, d, &r->adm);
		ck_assert_ptr_nonnull(r->adm.cluster_queue);
		ck_assert_str_eq(r->adm.cluster_queue, d->cq);
	} else {
		ck_assert_ptr_nonnull(d->reason);
		ck_assert_ptr_nonnull(d->message);
		r->reason = xstrdup(d->reason);
		r->msg = xstrdup(d->message);
	}
}

/* One sched_cycle at F.now; returns how many were admitted. */
static size_t cycle(void)
{
	size_t n, admits = 0;

	sched_decisions_clear(&F.d);
	F.ncycles++;
	n = sched_cycle(F.s, F.now, &F.d);
	CHECK();
	for (size_t i = 0; i < F.d.n; i++) {
		log_decision(&F.d.v[i]);
		if (F.d.v[i].kind == DEC_ADMIT)
			admits++;
	}
	ck_assert_uint_eq(n, admits);
	return n;
}

static bool same_names(size_t a0, size_t a1, size_t b0, size_t b1)
{
	if (a1 - a0 != b1 - b0)
		return false;
	for (size_t i = b0; i < b1; i++) {
		bool found = false;

		for (size_t j = a0; j < a1 && !found; j++)
			found = !strcmp(F.log[i].wl, F.log[j].wl) &&
				F.log[i].kind == F.log[j].kind;
		if (!found)
			return false;
	}
	return true;
}

/* Cycles until nothing changes any more (at most 16). */
static void settle(void)
{
	size_t prev0 = 0, prev1 = 0;
	bool have_prev = false;

	for (int i = 0; i < 16 && sched_has_work(F.s); i++) {
		size_t start = F.nlog, n = cycle();

		if (n == 0 && start == F.nlog)
			break;
		if (n == 0 && have_prev && same_names(prev0, prev1, start,
						      F.nlog))
			break;
		prev0 = start;
		prev1 = F.nlog;
		have_prev = true;
	}
}

static const struct rec *last_rec(const char *wl)
{
	for (size_t i = F.nlog; i-- > 0;)
		if (!strcmp(F.log[i].wl, wl))
			return &F.log[i];
	return NULL;
}

static const struct rec *last_admit(const char *wl)
{
	for (size_t i = F.nlog; i-- > 0;)
		if (!strcmp(F.log[i].wl, wl) && F.log[i].kind == DEC_ADMIT)
			return &F.log[i];
	return NULL;
}

static size_t admits_of(const char *wl)
{
	size_t n = 0;

	for (size_t i = 0; i < F.nlog; i++)
		if (!strcmp(F.log[i].wl, wl) && F.log[i].kind == DEC_ADMIT)
			n++;
	return n;
}

#define expect_admitted(wl, cqname) expect_admitted_at(__LINE__, wl, cqname)
static const struct rec *expect_admitted_at(int line, const char *wl,
					    const char *cqname)
{
	const struct rec *r = last_rec(wl);

	ck_assert_msg(r, "line %d: no decision for %s", line, wl);
	ck_assert_msg(r->kind == DEC_ADMIT,
		      "line %d: %s not admitted: %s: %s", line, wl,
		      r->reason ? r->reason : "", r->msg ? r->msg : "");
	ck_assert_msg(r->cq && !strcmp(r->cq, cqname),
		      "line %d: %s admitted to %s, expected %s", line, wl,
		      r->cq ? r->cq : "(null)", cqname);
	return r;
}

/* The last decision for wl is pending (reason Pending) with message msg
 * (when msg is not NULL). */
#define expect_pending(wl, msg) expect_pending_at(__LINE__, wl, msg)
static void expect_pending_at(int line, const char *wl, const char *msg)
{
	const struct rec *r = last_rec(wl);

	ck_assert_msg(r, "line %d: no decision for %s", line, wl);
	ck_assert_msg(r->kind == DEC_PENDING,
		      "line %d: %s was admitted, expected pending", line, wl);
	ck_assert_msg(!strcmp(r->reason, "Pending"),
		      "line %d: %s reason '%s', expected 'Pending'", line, wl,
		      r->reason);
	if (msg)
		ck_assert_msg(!strcmp(r->msg, msg),
			      "line %d: %s message\n  got:      '%s'\n"
			      "  expected: '%s'", line, wl, r->msg, msg);
}

static void expect_not_admitted(const char *wl)
{
	ck_assert_msg(admits_of(wl) == 0, "%s was admitted", wl);
}

static const struct pod_set_assignment *psa_of(const struct rec *r,
					       const char *ps)
{
	for (size_t i = 0; i < r->adm.npsa; i++)
		if (r->adm.psa[i].name && !strcmp(r->adm.psa[i].name, ps))
			return &r->adm.psa[i];
	ck_abort_msg("no pod set assignment %s for %s", ps, r->wl);
	return NULL;
}

static const char *flavor_of(const struct rec *r, const char *ps,
			     const char *res)
{
	return smap_get(&psa_of(r, ps)->flavors, res);
}

static void expect_flavor(const struct rec *r, const char *ps,
			  const char *res, const char *flavor)
{
	const char *got = flavor_of(r, ps, res);

	ck_assert_msg(got && !strcmp(got, flavor),
		      "%s/%s: %s on flavor %s, expected %s", r->wl, ps, res,
		      got ? got : "(none)", flavor);
}

static void expect_usage(const struct rec *r, const char *ps,
			 const char *res, int64_t milli)
{
	const struct pod_set_assignment *a = psa_of(r, ps);

	ck_assert_msg(reslist_has(&a->usage, res), "%s/%s: no usage of %s",
		      r->wl, ps, res);
	ck_assert_msg(reslist_get(&a->usage, res) == milli,
		      "%s/%s: usage of %s %" PRId64 ", expected %" PRId64,
		      r->wl, ps, res, reslist_get(&a->usage, res), milli);
}

static void expect_count(const struct rec *r, const char *ps, int32_t n)
{
	const struct pod_set_assignment *a = psa_of(r, ps);

	ck_assert_msg(a->has_count, "%s/%s: admission without count", r->wl,
		      ps);
	ck_assert_int_eq(a->count, n);
}

/* ------------------------------------------------------------------ */
/* Status and usage */

static struct sched_cq_status cq_status(const char *name)
{
	struct sched_cq_status st;

	memset(&st, 0, sizeof(st));
	sched_cq_status(F.s, name, &st);
	return st;
}

static struct sched_lq_status lq_status(const char *name)
{
	struct sched_lq_status st;

	memset(&st, 0, sizeof(st));
	sched_lq_status(F.s, name, &st);
	return st;
}

/* total/borrowed of (flavor, res) in a CQ's reservation (or usage). */
static void cq_fr(const char *cq, bool admitted_only, const char *flavor,
		  const char *res, int64_t *total, int64_t *borrowed)
{
	struct flavor_usage *u = NULL;
	size_t n = 0;
	bool found = false;

	sched_cq_usage(F.s, cq, admitted_only, &u, &n);
	for (size_t i = 0; i < n && !found; i++) {
		if (strcmp(u[i].name, flavor) != 0)
			continue;
		for (size_t j = 0; j < u[i].nres; j++) {
			if (strcmp(u[i].res[j].name, res) != 0)
				continue;
			*total = u[i].res[j].total;
			*borrowed = u[i].res[j].borrowed;
			found = true;
			break;
		}
	}
	flavor_usages_release(u, n); /* frees the array too (objects.c) */
	ck_assert_msg(found, "%s: no usage entry for %s/%s", cq, flavor, res);
}

#define expect_cq_usage(cq, fl, res, tot, bor) \
	expect_cq_usage_at(__LINE__, cq, fl, res, tot, bor)
static void expect_cq_usage_at(int line, const char *cq, const char *flavor,
			       const char *res, int64_t total,
			       int64_t borrowed)
{
	int64_t t = -1, b = -1;

	cq_fr(cq, false, flavor, res, &t, &b);
	ck_assert_msg(t == total && b == borrowed,
		      "line %d: %s %s/%s: total %" PRId64 " borrowed %" PRId64
		      ", expected %" PRId64 "/%" PRId64, line, cq, flavor, res,
		      t, b, total, borrowed);
}

/* ------------------------------------------------------------------ */
/* dirty-set collectors */

struct seen {
	char names[16][64];
	size_t n;
};

static void seen_add(void *ud, const char *name)
{
	struct seen *s = ud;

	ck_assert_uint_lt(s->n, 16);
	snprintf(s->names[s->n++], sizeof(s->names[0]), "%s", name);
}

static size_t seen_count(const struct seen *s, const char *name)
{
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->names[i], name))
			k++;
	return k;
}

/* One ud for both callbacks: route to the right collector. */
struct both {
	struct seen cq, lq;
};

static void both_cq(void *ud, const char *name)
{
	seen_add(&((struct both *)ud)->cq, name);
}

static void both_lq(void *ud, const char *name)
{
	seen_add(&((struct both *)ud)->lq, name);
}

static void take_both(struct both *b)
{
	memset(b, 0, sizeof(*b));
	sched_take_dirty(F.s, both_cq, both_lq, b);
	CHECK();
}

/* ------------------------------------------------------------------ */
/* opts */

START_TEST(opts_defaults)
{
	struct sched_opts o;

	memset(&o, 0xff, sizeof(o));
	sched_opts_default(&o);
	ck_assert(o.partial_admission);
	ck_assert(!o.ignore_undeclared);
	ck_assert_uint_eq(o.max_rounds, 0);
}
END_TEST

START_TEST(empty_state)
{
	struct sched_cq_status st;
	struct sched_lq_status lst;

	fx_begin();
	ck_assert(!sched_has_work(F.s));
	ck_assert_uint_eq(cycle(), 0);
	ck_assert_uint_eq(F.d.n, 0);
	st = cq_status("nope");
	ck_assert(!st.exists);
	lst = lq_status("ns/nope");
	ck_assert_int_eq(lst.pending, 0);
	ck_assert_int_eq(lst.reserving, 0);
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "nope"));
	ck_assert_int_eq(sched_next_wakeup(F.s), 0);
	/* Unknown names are harmless. */
	sched_wl_forget(F.s, "ns", "nope");
	sched_wl_remove(F.s, "ns", "nope");
	sched_cq_remove(F.s, "nope");
	sched_flavor_remove(F.s, "nope");
	sched_cohort_remove(F.s, "nope");
	CHECK();
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* borrowing */

/* a borrows b's unused nominal, up to its borrowingLimit. */
START_TEST(borrow_within_limit)
{
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	add_cq("a", "co", "default:cpu=10/5");
	add_cq("b", "co", "default:cpu=10");

	put_wl(mk_wl("wa1", 0, T0 - 10 * SEC, 1, "cpu=14"), "a");
	settle();
	r = expect_admitted("wa1", "a");
	ck_assert_int_eq(r->borrowing, 1);
	expect_flavor(r, "main", "cpu", "default");
	expect_usage(r, "main", "cpu", CPU(14));
	expect_count(r, "main", 1);
	expect_cq_usage("a", "default", "cpu", CPU(14), CPU(4));
	expect_cq_usage("b", "default", "cpu", 0, 0);
	ck_assert(sched_wl_holds_quota(F.s, "ns", "wa1"));

	/* 14 + 2 > 10 + 5: the limit, not the cohort (6 free), stops it. */
	put_wl(mk_wl("wa2", 0, T0 - 9 * SEC, 1, "cpu=2"), "a");
	settle();
	expect_pending("wa2", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1 more needed");
	/* Exactly up to the limit. */
	put_wl(mk_wl("wa3", 0, T0 - 8 * SEC, 1, "cpu=1"), "a");
	settle();
	r = expect_admitted("wa3", "a");
	ck_assert_int_eq(r->borrowing, 1);
	expect_not_admitted("wa2");
	expect_cq_usage("a", "default", "cpu", CPU(15), CPU(5));

	/* b only has what a left over: 20 - 15 = 5. */
	put_wl(mk_wl("wb1", 0, T0 - 7 * SEC, 1, "cpu=6"), "b");
	settle();
	expect_pending("wb1", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1 more needed");
	put_wl(mk_wl("wb2", 0, T0 - 6 * SEC, 1, "cpu=5"), "b");
	settle();
	r = expect_admitted("wb2", "b");
	ck_assert_int_eq(r->borrowing, 0);
	expect_cq_usage("b", "default", "cpu", CPU(5), 0);
	expect_cq_usage("a", "default", "cpu", CPU(15), CPU(5));
	ck_assert_int_eq(cq_status("a").reserving, 2);
	ck_assert_int_eq(cq_status("a").pending, 1);
	ck_assert_int_eq(cq_status("b").reserving, 1);
	ck_assert_int_eq(cq_status("b").pending, 1);

	/* wa1 finishes: its 14 come back; wa2 and wb1 both fit now. */
	wl_finish("wa1");
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "wa1"));
	expect_cq_usage("a", "default", "cpu", CPU(1), 0);
	settle();
	expect_admitted("wa2", "a");
	expect_admitted("wb1", "b");
	expect_cq_usage("a", "default", "cpu", CPU(3), 0);
	expect_cq_usage("b", "default", "cpu", CPU(11), CPU(1));
	ck_assert_uint_eq(admits_of("wa1"), 1);
	fx_end();
}
END_TEST

/* DRA: the devices a pod's claims stand for (pod_set.dra, filled by the
 * manager) count per pod beside its containers' requests, and a change of
 * them in place recompiles the pod set (sched_wl_podsets_changed). */
START_TEST(dra_devices_per_pod)
{
	struct workload *w;
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	add_cq("a", NULL, "default:cpu=10,example.com/gpu=4");
	w = mk_wl("d1", 0, T0 - 10 * SEC, 2, "cpu=1");
	reslist_set(&w->pod_sets[0].dra, "example.com/gpu", 3000);
	put_wl(w, "a");
	settle();
	expect_pending("d1", PS_MAIN "insufficient quota for example.com/gpu "
		       "in flavor default, previously considered podsets "
		       "requests (0) + current podset request (6) > maximum "
		       "capacity (4)");
	reslist_set(&w->pod_sets[0].dra, "example.com/gpu", 2000);
	sched_wl_podsets_changed(F.s, "ns/d1");
	put_wl(w, "a");
	settle();
	r = expect_admitted("d1", "a");
	expect_usage(r, "main", "example.com/gpu", N(4));
	expect_usage(r, "main", "cpu", CPU(2));
	fx_end();
}
END_TEST

/* The borrowingLimit caps the maximum capacity (ExceedsMaxQuota). */
START_TEST(borrow_limit_is_max_capacity)
{
	fx_begin();
	add_flavor("default");
	add_cq("a", "co", "default:cpu=10/2");
	add_cq("b", "co", "default:cpu=10");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=13"), "a");
	settle();
	expect_pending("w", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (13) > maximum capacity (12)");
	/* Without a cohort the nominal is the maximum. */
	add_cq("solo", NULL, "default:cpu=10");
	put_wl(mk_wl("s", 0, T0, 1, "cpu=10500m"), "solo");
	settle();
	expect_pending("s", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (10500m) > maximum capacity "
		       "(10)");
	expect_cq_usage("solo", "default", "cpu", 0, 0);
	fx_end();
}
END_TEST

/* sched_cq_parked_by_lq (the LocalQueue pending metric's split): the
 * workloads that did not fit wait parked, counted per LocalQueue, both
 * the parked list and the members of a parked equivalence class; one
 * holding quota is not counted, and an unknown queue reports nothing. */
struct lq_counts {
	char *lq[4];
	int32_t n[4];
	size_t len;
};

static void on_lq_count(void *ud, const char *lq, int32_t n)
{
	struct lq_counts *c = ud;

	ck_assert_uint_lt(c->len, 4);
	c->lq[c->len] = xstrdup(lq);
	c->n[c->len++] = n;
}

static int32_t lq_count(const struct lq_counts *c, const char *lq)
{
	int32_t found = -1;

	for (size_t i = 0; i < c->len; i++)
		if (!strcmp(c->lq[i], lq)) {
			ck_assert_int_eq(found, -1); /* once per LocalQueue */
			found = c->n[i];
		}
	return found;
}

static void lq_counts_free(struct lq_counts *c)
{
	for (size_t i = 0; i < c->len; i++)
		free(c->lq[i]);
	c->len = 0;
}

START_TEST(parked_split)
{
	struct lq_counts c = { 0 };
	struct sched_opts o;

	/* _i 0: equivalence classes (the parked ones hold every item
	 * here); 1: no classes, so the plain parked list */
	sched_opts_default(&o);
	o.no_equivalence = _i == 1;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("solo", NULL, "default:cpu=10");
	put_wl(mk_wl("fits", 0, T0 - 4 * SEC, 1, "cpu=6"), "solo");
	put_wl(mk_wl("big", 0, T0 - 3 * SEC, 1, "cpu=7"), "solo");
	put_wl_lq(mk_wl("o1", 0, T0 - 2 * SEC, 1, "cpu=6"), "solo",
		  "ns/other");
	put_wl_lq(mk_wl("o2", 0, T0 - SEC, 1, "cpu=6"), "solo", "ns/other");
	settle();
	expect_admitted("fits", "solo");
	ck_assert_int_eq(cq_status("solo").pending_inadmissible, 3);
	for (int round = 0; round < 2; round++) { /* the scratch resets */
		sched_cq_parked_by_lq(F.s, "solo", on_lq_count, &c);
		ck_assert_uint_eq(c.len, 2);
		ck_assert_int_eq(lq_count(&c, "ns/lq"), 1);
		ck_assert_int_eq(lq_count(&c, "ns/other"), 2);
		lq_counts_free(&c);
	}
	sched_cq_parked_by_lq(F.s, "nope", on_lq_count, &c);
	ck_assert_uint_eq(c.len, 0);
	fx_end();
}
END_TEST

/* whenCanBorrow: MayStopSearch takes the first flavor even when it has
 * to borrow; TryNextFlavor prefers a later one that fits without. */
START_TEST(fungibility_borrow)
{
	struct cluster_queue *a;
	const struct rec *r;

	fx_begin();
	add_flavor("f1");
	add_flavor("f2");
	add_cq("a", "co", "f1:cpu=2 f2:cpu=4");
	add_cq("lender", "co", "f1:cpu=10");
	put_wl(mk_wl("w1", 0, T0 - 2 * SEC, 1, "cpu=3"), "a");
	settle();
	r = expect_admitted("w1", "a");
	expect_flavor(r, "main", "cpu", "f1");
	ck_assert_int_eq(r->borrowing, 1);
	expect_cq_usage("a", "f1", "cpu", CPU(3), CPU(1));
	expect_cq_usage("a", "f2", "cpu", 0, 0);

	a = mk_cq("a", "co", "f1:cpu=2 f2:cpu=4");
	a->when_can_borrow = FUNG_TRY_NEXT_FLAVOR;
	put_cq(a);
	put_wl(mk_wl("w2", 0, T0 - SEC, 1, "cpu=3"), "a");
	settle();
	r = expect_admitted("w2", "a");
	expect_flavor(r, "main", "cpu", "f2");
	ck_assert_int_eq(r->borrowing, 0);
	expect_cq_usage("a", "f2", "cpu", CPU(3), 0);
	expect_cq_usage("a", "f1", "cpu", CPU(3), CPU(1));
	/* f2 cannot take 2 more (3 + 2 > 4); f1 fits by borrowing: with
	 * TryNextFlavor the best candidate seen is still used. */
	put_wl(mk_wl("w3", 0, T0, 1, "cpu=2"), "a");
	settle();
	r = expect_admitted("w3", "a");
	expect_flavor(r, "main", "cpu", "f1");
	ck_assert_int_eq(r->borrowing, 1);
	expect_cq_usage("a", "f1", "cpu", CPU(5), CPU(3));
	fx_end();
}
END_TEST

/* A flavor whose quota is in use (preemption impossible) is skipped
 * for the next one that fits. */
START_TEST(quota_fallback_next_flavor)
{
	const struct rec *r;

	fx_begin();
	add_flavor("f1");
	add_flavor("f2");
	add_cq("q", NULL, "f1:cpu=2 f2:cpu=10");
	put_wl(mk_wl("h", 0, T0 - 10 * SEC, 1, "cpu=2"), "q");
	settle();
	r = expect_admitted("h", "q");
	expect_flavor(r, "main", "cpu", "f1");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=2"), "q");
	settle();
	r = expect_admitted("w", "q");
	expect_flavor(r, "main", "cpu", "f2");
	expect_cq_usage("q", "f1", "cpu", CPU(2), 0);
	expect_cq_usage("q", "f2", "cpu", CPU(2), 0);
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* lending limits */

/* Flat cohort: only lendingLimit of a's nominal is visible to b; the
 * rest (nominal - lendingLimit) stays a's even when b could use it. */
START_TEST(lending_flat)
{
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	add_cq("a", "co", "default:cpu=10/-/4");
	add_cq("b", "co", "default:cpu=0");
	put_wl(mk_wl("big", 0, T0 - 3 * SEC, 1, "cpu=5"), "b");
	settle();
	expect_pending("big", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (5) > maximum capacity (4)");
	put_wl(mk_wl("b4", 0, T0 - 2 * SEC, 1, "cpu=4"), "b");
	settle();
	r = expect_admitted("b4", "b");
	ck_assert_int_eq(r->borrowing, 1);
	expect_cq_usage("b", "default", "cpu", CPU(4), CPU(4));
	/* a keeps its exclusive 6, and no more. */
	put_wl(mk_wl("a7", 0, T0 - SEC, 1, "cpu=7"), "a");
	settle();
	expect_pending("a7", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1 more needed");
	put_wl(mk_wl("a6", 0, T0, 1, "cpu=6"), "a");
	settle();
	r = expect_admitted("a6", "a");
	ck_assert_int_eq(r->borrowing, 0);
	expect_cq_usage("a", "default", "cpu", CPU(6), 0);
	expect_not_admitted("big");
	expect_not_admitted("a7");
	fx_end();
}
END_TEST

/*
 * Two levels: root <- mid (own quota 4, lendingLimit 2) <- {a, b}, and c
 * directly in root.
 *   a: nominal 10, lendingLimit 4 -> 6 exclusive, 4 lent to mid
 *   mid: subtree 4 + 4 = 8, lendingLimit 2 -> 6 kept inside mid
 *   root: subtree 2 -> c (nominal 0) can borrow at most 2
 * So c's maximum is 2, b's is 8 (6 + 2), a's is 14.
 */
START_TEST(lending_two_levels)
{
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	put_cohort(mk_cohort("root", NULL, NULL));
	put_cohort(mk_cohort("mid", "root", "default:cpu=4/-/2"));
	add_cq("a", "mid", "default:cpu=10/-/4");
	add_cq("b", "mid", "default:cpu=0");
	add_cq("c", "root", "default:cpu=0");

	put_wl(mk_wl("c3", 0, T0 - 10 * SEC, 1, "cpu=3"), "c");
	settle();
	expect_pending("c3", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (3) > maximum capacity (2)");
	put_wl(mk_wl("c2", 0, T0 - 9 * SEC, 1, "cpu=2"), "c");
	settle();
	r = expect_admitted("c2", "c");
	ck_assert_int_eq(r->borrowing, 2); /* from root, height 2 */
	expect_cq_usage("c", "default", "cpu", CPU(2), CPU(2));

	/* root's 2 are gone; b still has mid's 6. */
	put_wl(mk_wl("b7", 0, T0 - 8 * SEC, 1, "cpu=7"), "b");
	settle();
	expect_pending("b7", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1 more needed");
	put_wl(mk_wl("b6", 0, T0 - 7 * SEC, 1, "cpu=6"), "b");
	settle();
	r = expect_admitted("b6", "b");
	ck_assert_int_eq(r->borrowing, 1); /* from mid, height 1 */
	expect_cq_usage("b", "default", "cpu", CPU(6), CPU(6));

	/* Everything lendable is used; a still has its exclusive 6. */
	put_wl(mk_wl("a6", 0, T0 - 6 * SEC, 1, "cpu=6"), "a");
	settle();
	r = expect_admitted("a6", "a");
	ck_assert_int_eq(r->borrowing, 0);
	put_wl(mk_wl("a1", 0, T0 - 5 * SEC, 1, "cpu=1"), "a");
	settle();
	expect_pending("a1", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1 more needed");
	expect_cq_usage("a", "default", "cpu", CPU(6), 0);
	expect_cq_usage("b", "default", "cpu", CPU(6), CPU(6));
	expect_cq_usage("c", "default", "cpu", CPU(2), CPU(2));
	expect_not_admitted("c3");
	expect_not_admitted("b7");

	/* c2 finishes: root's 2 come back, reachable by a (6+... ) too. */
	wl_finish("c2");
	settle();
	expect_admitted("a1", "a");
	expect_cq_usage("a", "default", "cpu", CPU(7), 0);
	expect_not_admitted("c3");
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* StrictFIFO and BestEffortFIFO */

static void fifo_setup(enum queueing_strategy qs)
{
	struct cluster_queue *cq;

	fx_begin();
	add_flavor("default");
	cq = mk_cq("q", NULL, "default:cpu=4");
	cq->strategy = qs;
	put_cq(cq);
	put_wl(mk_wl("holder", 0, T0 - 100 * SEC, 1, "cpu=3"), "q");
	settle();
	expect_admitted("holder", "q");
	put_wl(mk_wl("big", 0, T0 - 50 * SEC, 1, "cpu=3"), "q");
	put_wl(mk_wl("small", 0, T0 - 40 * SEC, 1, "cpu=1"), "q");
}

START_TEST(fifo_strict_blocks)
{
	struct sched_cq_status st;

	fifo_setup(QS_STRICT_FIFO);
	settle();
	expect_pending("big", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 2 more needed");
	expect_not_admitted("small");
	/* The head is retried every cycle; small stays behind it. */
	for (int i = 0; i < 3; i++) {
		cycle();
		expect_pending("big", NULL);
	}
	expect_not_admitted("small");
	st = cq_status("q");
	ck_assert_int_eq(st.pending, 2);
	ck_assert_msg(st.pending_active == 2 && st.pending_inadmissible == 0,
		      "StrictFIFO head: active %d inadmissible %d, "
		      "expected 2/0",
		      st.pending_active, st.pending_inadmissible);
	/* sched.h: "some active queue has a head"; §1.3, §1.7: the
	 * StrictFIFO head is back in the heap and popped every cycle. */
	ck_assert_msg(sched_has_work(F.s),
		      "sched_has_work false with a StrictFIFO head in the "
		      "heap");
	ck_assert_int_eq(st.reserving, 1);
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);

	wl_finish("holder");
	settle();
	expect_admitted("big", "q");
	expect_admitted("small", "q");
	expect_cq_usage("q", "default", "cpu", CPU(4), 0);
	st = cq_status("q");
	ck_assert_int_eq(st.pending, 0);
	ck_assert_int_eq(st.reserving, 2);
	fx_end();
}
END_TEST

START_TEST(best_effort_skips)
{
	struct sched_cq_status st;

	fifo_setup(QS_BEST_EFFORT_FIFO);
	settle();
	expect_pending("big", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 2 more needed");
	expect_admitted("small", "q");
	st = cq_status("q");
	ck_assert_int_eq(st.pending, 1);
	ck_assert_int_eq(st.pending_inadmissible, 1);
	ck_assert_int_eq(st.pending_active, 0);
	ck_assert_int_eq(st.reserving, 2);
	/* Parked: no more work, and not reported again. */
	ck_assert(!sched_has_work(F.s));
	cycle();
	ck_assert_uint_eq(F.d.n, 0);

	/* A holder finishing requeues the parked head. */
	wl_finish("holder");
	st = cq_status("q");
	ck_assert_int_eq(st.pending, 1);
	ck_assert_int_eq(st.reserving, 1);
	ck_assert(sched_has_work(F.s));
	settle();
	expect_admitted("big", "q");
	ck_assert_uint_eq(admits_of("big"), 1);
	ck_assert_uint_eq(admits_of("small"), 1);
	expect_cq_usage("q", "default", "cpu", CPU(4), 0);
	st = cq_status("q");
	ck_assert_int_eq(st.pending, 0);
	ck_assert_int_eq(st.reserving, 2);
	fx_end();
}
END_TEST

/* Removing a holder (deleted workload) is a requeue event too. */
START_TEST(best_effort_requeue_on_remove)
{
	fifo_setup(QS_BEST_EFFORT_FIFO);
	settle();
	expect_not_admitted("big");
	sched_wl_remove(F.s, "ns", "holder");
	CHECK();
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "holder"));
	settle();
	expect_admitted("big", "q");
	expect_cq_usage("q", "default", "cpu", CPU(4), 0);
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* flavors: taints, tolerations, labels, affinity, resource groups */

static void taint_setup(void)
{
	struct resource_flavor *spot;

	fx_begin();
	spot = mk_flavor("spot");
	flavor_taint(spot, "spot", "true", EFFECT_NO_SCHEDULE);
	put_flavor(spot);
	add_flavor("on-demand");
	add_cq("q", NULL, "spot:cpu=10 on-demand:cpu=10");
}

static void tolerate(struct pod_set *ps, const char *key, const char *value,
		     enum taint_effect effect)
{
	struct pod_template *t = &ps->tmpl;

	t->tols = xrealloc(t->tols, (t->ntols + 1) * sizeof(*t->tols));
	memset(&t->tols[t->ntols], 0, sizeof(*t->tols));
	t->tols[t->ntols].key = xstrdup(key);
	t->tols[t->ntols].op = value ? TOL_EQUAL : TOL_EXISTS;
	t->tols[t->ntols].value = xstrdup(value ? value : "");
	t->tols[t->ntols].effect = effect;
	t->ntols++;
}

START_TEST(taint_skips_flavor)
{
	const struct rec *r;
	struct workload *w;

	taint_setup();
	put_wl(mk_wl("plain", 0, T0 - 2 * SEC, 1, "cpu=1"), "q");
	w = mk_wl("tolerant", 0, T0 - SEC, 1, "cpu=1");
	tolerate(&w->pod_sets[0], "spot", "true", EFFECT_NO_SCHEDULE);
	put_wl(w, "q");
	w = mk_wl("exists", 0, T0, 1, "cpu=1");
	tolerate(&w->pod_sets[0], "spot", NULL, EFFECT_ALL);
	put_wl(w, "q");
	settle();
	r = expect_admitted("plain", "q");
	expect_flavor(r, "main", "cpu", "on-demand");
	r = expect_admitted("tolerant", "q");
	expect_flavor(r, "main", "cpu", "spot");
	r = expect_admitted("exists", "q");
	expect_flavor(r, "main", "cpu", "spot");
	expect_cq_usage("q", "spot", "cpu", CPU(2), 0);
	expect_cq_usage("q", "on-demand", "cpu", CPU(1), 0);
	fx_end();
}
END_TEST

/* The flavor's own tolerations count; PreferNoSchedule is ignored; a
 * toleration for another effect does not help. */
START_TEST(taint_flavor_tolerations)
{
	struct resource_flavor *rf;
	const struct rec *r;
	struct workload *w;

	fx_begin();
	rf = mk_flavor("self");
	flavor_taint(rf, "gpu", "yes", EFFECT_NO_EXECUTE);
	rf->tols = xcalloc(1, sizeof(*rf->tols));
	rf->ntols = 1;
	rf->tols[0].key = xstrdup("gpu");
	rf->tols[0].op = TOL_EXISTS;
	rf->tols[0].value = xstrdup("");
	rf->tols[0].effect = EFFECT_ALL;
	put_flavor(rf);
	rf = mk_flavor("soft");
	flavor_taint(rf, "soft", "x", EFFECT_PREFER_NO_SCHEDULE);
	put_flavor(rf);
	rf = mk_flavor("hard");
	flavor_taint(rf, "hard", "x", EFFECT_NO_EXECUTE);
	put_flavor(rf);
	add_cq("self-q", NULL, "self:cpu=1");
	add_cq("soft-q", NULL, "soft:cpu=1");
	add_cq("hard-q", NULL, "hard:cpu=1");
	put_wl(mk_wl("ws", 0, T0, 1, "cpu=1"), "self-q");
	put_wl(mk_wl("wp", 0, T0, 1, "cpu=1"), "soft-q");
	w = mk_wl("wh", 0, T0, 1, "cpu=1");
	tolerate(&w->pod_sets[0], "hard", "x", EFFECT_NO_SCHEDULE);
	put_wl(w, "hard-q");
	settle();
	r = expect_admitted("ws", "self-q");
	expect_flavor(r, "main", "cpu", "self");
	r = expect_admitted("wp", "soft-q");
	expect_flavor(r, "main", "cpu", "soft");
	expect_pending("wh", PS_MAIN "untolerated taint {hard x NoExecute "
		       "<nil>} in flavor hard");
	fx_end();
}
END_TEST

START_TEST(taint_nofit_message)
{
	struct resource_flavor *spot;

	fx_begin();
	spot = mk_flavor("spot");
	flavor_taint(spot, "spot", "true", EFFECT_NO_SCHEDULE);
	put_flavor(spot);
	add_cq("q", NULL, "spot:cpu=10");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "q");
	settle();
	expect_pending("w", PS_MAIN "untolerated taint {spot true NoSchedule "
		       "<nil>} in flavor spot");
	expect_cq_usage("q", "spot", "cpu", 0, 0);
	fx_end();
}
END_TEST

static void arch_setup(void)
{
	struct resource_flavor *rf;

	fx_begin();
	rf = mk_flavor("x86");
	smap_set(&rf->node_labels, "arch", "amd64");
	smap_set(&rf->node_labels, "pool", "main");
	put_flavor(rf);
	rf = mk_flavor("arm");
	smap_set(&rf->node_labels, "arch", "arm64");
	put_flavor(rf);
	add_cq("q", NULL, "x86:cpu=10 arm:cpu=10");
}

static void affinity_in(struct pod_set *ps, const char *key,
			const char *value)
{
	struct node_term *t = node_affinity_add_term(&ps->tmpl.affinity);
	const char *vals[1] = { value };

	label_selector_add(&t->exprs, key, SEL_IN, vals, 1);
	ps->tmpl.affinity.present = true;
}

START_TEST(node_selector_picks_flavor)
{
	const struct rec *r;
	struct workload *w;

	arch_setup();
	w = mk_wl("arm-sel", 0, T0 - 3 * SEC, 1, "cpu=1");
	smap_set(&w->pod_sets[0].tmpl.node_selector, "arch", "arm64");
	put_wl(w, "q");
	/* A key no flavor defines is ignored. */
	w = mk_wl("zone-sel", 0, T0 - 2 * SEC, 1, "cpu=1");
	smap_set(&w->pod_sets[0].tmpl.node_selector, "zone", "z1");
	put_wl(w, "q");
	/* pool=main only exists on x86: arm ignores the key. */
	w = mk_wl("pool-sel", 0, T0 - SEC, 1, "cpu=1");
	smap_set(&w->pod_sets[0].tmpl.node_selector, "pool", "other");
	put_wl(w, "q");
	settle();
	r = expect_admitted("arm-sel", "q");
	expect_flavor(r, "main", "cpu", "arm");
	r = expect_admitted("zone-sel", "q");
	expect_flavor(r, "main", "cpu", "x86");
	r = expect_admitted("pool-sel", "q");
	expect_flavor(r, "main", "cpu", "arm");
	fx_end();
}
END_TEST

START_TEST(node_affinity_picks_flavor)
{
	const struct rec *r;
	struct workload *w;

	arch_setup();
	w = mk_wl("arm-aff", 0, T0 - 2 * SEC, 1, "cpu=1");
	affinity_in(&w->pod_sets[0], "arch", "arm64");
	put_wl(w, "q");
	/* A term whose every key is unknown to the flavor matches it. */
	w = mk_wl("other-aff", 0, T0 - SEC, 1, "cpu=1");
	affinity_in(&w->pod_sets[0], "gpu-model", "a100");
	put_wl(w, "q");
	settle();
	r = expect_admitted("arm-aff", "q");
	expect_flavor(r, "main", "cpu", "arm");
	r = expect_admitted("other-aff", "q");
	expect_flavor(r, "main", "cpu", "x86");
	fx_end();
}
END_TEST

START_TEST(node_affinity_nofit_message)
{
	struct resource_flavor *rf;
	struct workload *w;

	fx_begin();
	rf = mk_flavor("x86");
	smap_set(&rf->node_labels, "arch", "amd64");
	put_flavor(rf);
	add_cq("q", NULL, "x86:cpu=10");
	w = mk_wl("sel", 0, T0 - SEC, 1, "cpu=1");
	smap_set(&w->pod_sets[0].tmpl.node_selector, "arch", "arm64");
	put_wl(w, "q");
	settle();
	expect_pending("sel", PS_MAIN "flavor x86 doesn't match node affinity");
	w = mk_wl("aff", 0, T0, 1, "cpu=1");
	affinity_in(&w->pod_sets[0], "arch", "arm64");
	put_wl(w, "q");
	settle();
	expect_pending("aff", PS_MAIN "flavor x86 doesn't match node affinity");
	fx_end();
}
END_TEST

/* Several reasons of one pod set are sorted and joined with ", ". */
START_TEST(nofit_reasons_sorted)
{
	struct resource_flavor *rf;
	struct workload *w;

	fx_begin();
	rf = mk_flavor("spot");
	flavor_taint(rf, "spot", "true", EFFECT_NO_SCHEDULE);
	put_flavor(rf);
	rf = mk_flavor("x86");
	smap_set(&rf->node_labels, "arch", "amd64");
	put_flavor(rf);
	add_cq("q", NULL, "spot:cpu=10 x86:cpu=10");
	w = mk_wl("w", 0, T0, 1, "cpu=1");
	smap_set(&w->pod_sets[0].tmpl.node_selector, "arch", "arm64");
	put_wl(w, "q");
	settle();
	expect_pending("w", PS_MAIN "flavor x86 doesn't match node affinity, "
		       "untolerated taint {spot true NoSchedule <nil>} in "
		       "flavor spot");
	fx_end();
}
END_TEST

/* cpu+memory share a group (one flavor for both), gpus have their own
 * group and choose independently. */
START_TEST(multi_resource_groups)
{
	struct flavor_usage *u = NULL;
	const struct rec *r;
	size_t n = 0;

	fx_begin();
	add_flavor("f1");
	add_flavor("f2");
	add_flavor("g1");
	add_flavor("g2");
	add_cq("q", NULL,
	       "f1:cpu=4,memory=4Gi f2:cpu=8,memory=8Gi;"
	       "g1:nvidia.com/gpu=2 g2:nvidia.com/gpu=4");
	/* cpu alone would fit f1; memory does not, so both go to f2;
	 * 3 gpus exceed g1 and go to g2. */
	put_wl(mk_wl("w2", 0, T0 - SEC, 3, "cpu=1,memory=2Gi,"
		     "nvidia.com/gpu=1"), "q");
	settle();
	r = expect_admitted("w2", "q");
	expect_flavor(r, "main", "cpu", "f2");
	expect_flavor(r, "main", "memory", "f2");
	expect_flavor(r, "main", "nvidia.com/gpu", "g2");
	expect_usage(r, "main", "cpu", CPU(3));
	expect_usage(r, "main", "memory", GI(6));
	expect_usage(r, "main", "nvidia.com/gpu", N(3));
	expect_count(r, "main", 3);

	/* Status shape: every flavor in spec order, resources by name,
	 * zeros included, borrowed 0 without a cohort. */
	sched_cq_usage(F.s, "q", false, &u, &n);
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(u[0].name, "f1");
	ck_assert_str_eq(u[1].name, "f2");
	ck_assert_str_eq(u[2].name, "g1");
	ck_assert_str_eq(u[3].name, "g2");
	ck_assert_uint_eq(u[0].nres, 2);
	ck_assert_str_eq(u[0].res[0].name, "cpu");
	ck_assert_str_eq(u[0].res[1].name, "memory");
	ck_assert_int_eq(u[0].res[0].total, 0);
	ck_assert_int_eq(u[0].res[1].total, 0);
	ck_assert_uint_eq(u[1].nres, 2);
	ck_assert_int_eq(u[1].res[0].total, CPU(3));
	ck_assert_int_eq(u[1].res[1].total, GI(6));
	ck_assert_int_eq(u[1].res[1].borrowed, 0);
	ck_assert_uint_eq(u[2].nres, 1);
	ck_assert_str_eq(u[2].res[0].name, "nvidia.com/gpu");
	ck_assert_int_eq(u[2].res[0].total, 0);
	ck_assert_uint_eq(u[3].nres, 1);
	ck_assert_int_eq(u[3].res[0].total, N(3));
	flavor_usages_release(u, n); /* frees the array too (objects.c) */

	/* Group-wide choice with the gpus still on the first flavor. */
	put_wl(mk_wl("w3", 0, T0, 1, "cpu=1,memory=1Gi,nvidia.com/gpu=1"),
	       "q");
	settle();
	r = expect_admitted("w3", "q");
	expect_flavor(r, "main", "cpu", "f1");
	expect_flavor(r, "main", "memory", "f1");
	expect_flavor(r, "main", "nvidia.com/gpu", "g1");
	/* Only what is requested gets a flavor. */
	put_wl(mk_wl("cpu-only", 0, T0, 1, "cpu=1"), "q");
	settle();
	r = expect_admitted("cpu-only", "q");
	expect_flavor(r, "main", "cpu", "f1");
	ck_assert_ptr_null(flavor_of(r, "main", "memory"));
	ck_assert_ptr_null(flavor_of(r, "main", "nvidia.com/gpu"));
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* the cycle: in-cycle reservation, rounds, order */

/* a and b are full, c lends 2: both heads want those 2 in one cycle. */
static void race_setup(const struct sched_opts *o)
{
	fx_begin_opts(o);
	add_flavor("default");
	add_cq("a", "co", "default:cpu=4");
	add_cq("b", "co", "default:cpu=4");
	add_cq("c", "co", "default:cpu=2");
	put_wl(mk_wl("ha", 0, T0 - 100 * SEC, 1, "cpu=4"), "a");
	put_wl(mk_wl("hb", 0, T0 - 100 * SEC, 1, "cpu=4"), "b");
	settle();
	expect_admitted("ha", "a");
	expect_admitted("hb", "b");
}

static void race_check(unsigned max_rounds, int32_t prio_b)
{
	struct sched_opts o;
	const char *winner, *loser;
	const struct rec *r;
	size_t n;

	sched_opts_default(&o);
	o.max_rounds = max_rounds;
	race_setup(&o);
	put_wl(mk_wl("wa", 0, T0 - 20 * SEC, 1, "cpu=2"), "a");
	put_wl(mk_wl("wb", prio_b, T0 - 10 * SEC, 1, "cpu=2"), "b");
	n = cycle();
	ck_assert_uint_eq(n, 1);
	winner = prio_b > 0 ? "wb" : "wa";
	loser = prio_b > 0 ? "wa" : "wb";
	r = expect_admitted(winner, prio_b > 0 ? "b" : "a");
	ck_assert_int_eq(r->borrowing, 1);
	ck_assert_ptr_nonnull(last_rec(loser));
	ck_assert(last_rec(loser)->kind == DEC_PENDING);
	if (max_rounds == 0)
		expect_pending(loser, PS_MAIN "insufficient unused quota for "
			       "cpu in flavor default, 2 more needed");
	else /* Kueue's skipped entry (scheduler.go processEntry) */
		expect_pending(loser, "Workload no longer fits after "
			       "processing another workload");
	/* Never over-admitted, whatever more cycles do. */
	settle();
	expect_not_admitted(loser);
	expect_cq_usage(winner[1] == 'a' ? "a" : "b", "default", "cpu", CPU(6),
			CPU(2));
	expect_cq_usage(loser[1] == 'a' ? "a" : "b", "default", "cpu", CPU(4),
			0);
	expect_cq_usage("c", "default", "cpu", 0, 0);
	fx_end();
}

START_TEST(in_cycle_reservation)
{
	race_check(0, 0);
}
END_TEST

START_TEST(in_cycle_reservation_one_round)
{
	race_check(1, 0);
}
END_TEST

START_TEST(in_cycle_reservation_priority)
{
	race_check(0, 10);
}
END_TEST

/* A non-borrowing head goes before a borrowing one in the same cycle,
 * even when it is younger and of lower priority. */
START_TEST(in_cycle_non_borrowing_first)
{
	fx_begin();
	add_flavor("default");
	add_cq("a", "co", "default:cpu=4");
	add_cq("b", "co", "default:cpu=4");
	put_wl(mk_wl("ha", 0, T0 - 100 * SEC, 1, "cpu=4"), "a");
	put_wl(mk_wl("hb", 0, T0 - 100 * SEC, 1, "cpu=2"), "b");
	settle();
	/* b has 2 spare: wa (borrowing) and wb (within nominal) race. */
	put_wl(mk_wl("wa", 100, T0 - 20 * SEC, 1, "cpu=2"), "a");
	put_wl(mk_wl("wb", 0, T0 - 10 * SEC, 1, "cpu=2"), "b");
	ck_assert_uint_eq(cycle(), 1);
	expect_admitted("wb", "b");
	expect_not_admitted("wa");
	settle();
	expect_not_admitted("wa");
	expect_cq_usage("a", "default", "cpu", CPU(4), 0);
	expect_cq_usage("b", "default", "cpu", CPU(4), 0);
	fx_end();
}
END_TEST

/* max_rounds 0: one cycle admits as much as fits from one queue. */
START_TEST(rounds_unlimited)
{
	char name[16];
	struct sched_cq_status st;
	struct sched_lq_status lst;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	for (int i = 0; i < 6; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		put_wl(mk_wl(name, 0, T0 - (10 - i) * SEC, 1, "cpu=2"), "q");
	}
	st = cq_status("q");
	ck_assert_int_eq(st.pending, 6);
	ck_assert_int_eq(st.pending_active, 6);
	lst = lq_status("ns/lq");
	ck_assert_int_eq(lst.pending, 6);
	ck_assert_uint_eq(cycle(), 5);
	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof(name), "w%d", i);
		expect_admitted(name, "q");
	}
	expect_pending("w5", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 2 more needed");
	expect_cq_usage("q", "default", "cpu", CPU(10), 0);
	st = cq_status("q");
	ck_assert_int_eq(st.pending, 1);
	ck_assert_int_eq(st.reserving, 5);
	lst = lq_status("ns/lq");
	ck_assert_int_eq(lst.pending, 1);
	ck_assert_int_eq(lst.reserving, 5);
	ck_assert_uint_eq(cycle(), 0);
	expect_not_admitted("w5");
	fx_end();
}
END_TEST

/* max_rounds 1: Kueue's cycle, one head per ClusterQueue. */
START_TEST(rounds_one)
{
	struct sched_opts o;
	char name[16];

	sched_opts_default(&o);
	o.max_rounds = 1;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("x", NULL, "default:cpu=10");
	add_cq("y", NULL, "default:cpu=10");
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "x%d", i);
		put_wl(mk_wl(name, 0, T0 - (10 - i) * SEC, 1, "cpu=1"), "x");
		snprintf(name, sizeof(name), "y%d", i);
		put_wl(mk_wl(name, i, T0 - (10 - i) * SEC, 1, "cpu=1"), "y");
	}
	ck_assert_uint_eq(cycle(), 2);
	expect_admitted("x0", "x");
	expect_admitted("y2", "y"); /* highest priority */
	ck_assert_uint_eq(F.d.n, 2);
	ck_assert_uint_eq(cycle(), 2);
	expect_admitted("x1", "x");
	expect_admitted("y1", "y");
	ck_assert_uint_eq(cycle(), 2);
	expect_admitted("x2", "x");
	expect_admitted("y0", "y");
	ck_assert(!sched_has_work(F.s));
	ck_assert_uint_eq(cycle(), 0);
	ck_assert_int_eq(cq_status("x").reserving, 3);
	ck_assert_int_eq(cq_status("y").reserving, 3);
	fx_end();
}
END_TEST

/* Within a CQ: priority, then creation time, then uid. */
START_TEST(priority_order)
{
	static const char *const expect[] = { "w2", "w4", "w5", "w3", "w1" };
	struct workload *w;
	struct sched_opts o;

	sched_opts_default(&o);
	o.max_rounds = 1;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=5");
	put_wl(mk_wl("w1", 0, T0 - 100 * SEC, 1, "cpu=1"), "q");
	put_wl(mk_wl("w2", 10, T0 - 50 * SEC, 1, "cpu=1"), "q");
	w = mk_wl("w3", 5, T0 - 70 * SEC, 1, "cpu=1");
	free(w->meta.uid);
	w->meta.uid = xstrdup("uid-b");
	put_wl(w, "q");
	put_wl(mk_wl("w4", 5, T0 - 80 * SEC, 1, "cpu=1"), "q");
	w = mk_wl("w5", 5, T0 - 70 * SEC, 1, "cpu=1");
	free(w->meta.uid);
	w->meta.uid = xstrdup("uid-a");
	put_wl(w, "q");
	for (size_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(cycle(), 1);
		ck_assert_uint_eq(F.d.n, 1);
		ck_assert_msg(!strcmp(F.d.v[0].wl->meta.name, expect[i]),
			      "admission %zu: got %s, expected %s", i,
			      F.d.v[0].wl->meta.name, expect[i]);
	}
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* assume, confirm, forget */

static void confirm(const char *name, bool admitted)
{
	const struct rec *r = last_admit(name);
	struct wlent *e;
	struct workload *w;
	char *msg;

	ck_assert_ptr_nonnull(r);
	w = wl_copy_latest(name, &e);
	admission_copy(&w->admission, &r->adm);
	w->has_admission = true;
	msg = xasprintf("Quota reserved in ClusterQueue %s", r->cq);
	conditions_set(&w->conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       msg, 1, F.now);
	free(msg);
	if (admitted)
		conditions_set(&w->conds, "Admitted", COND_TRUE, "Admitted",
			       "The workload is admitted", 1, F.now);
	put_wl_lq(w, e->cq, e->lq);
}

/* ------------------------------------------------------------------ */
/* eviction and requeue checks (kueue-scheduler.md §5) */

static size_t count_kind(const char *wl, enum sched_dec_kind kind)
{
	size_t n = 0;

	for (size_t i = 0; i < F.nlog; i++)
		if (!strcmp(F.log[i].wl, wl) && F.log[i].kind == kind)
			n++;
	return n;
}

/*
 * A workload admitted in one round of a sched_cycle call is no
 * preemption candidate in a later round of the same call: the call
 * returns one decision per workload, so a DEC_PREEMPT would replace its
 * DEC_ADMIT; the caller would never write (nor forget) the admission
 * while sched holds its quota for ever (the demo's stuck Job). The next
 * call may preempt it, once its admission is the caller's to write.
 *
 * a borrows b's idle quota for w1 in round 1 (b's own b1 goes first:
 * non-borrowing); in round 2 b's next head p needs that quota back.
 */
START_TEST(preempt_not_admitted_same_call)
{
	struct cluster_queue *a, *b;
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	a = mk_cq("a", "co", "default:cpu=0/4");
	b = mk_cq("b", "co", "default:cpu=4");
	b->reclaim = RWC_ANY;
	put_cq(a);
	put_cq(b);
	put_wl(mk_wl("w1", 0, T0 - 30 * SEC, 1, "cpu=2"), "a");
	put_wl(mk_wl("b1", 10, T0 - 20 * SEC, 1, "cpu=2"), "b");
	put_wl(mk_wl("p", 10, T0 - 10 * SEC, 1, "cpu=2"), "b");
	cycle();
	expect_admitted("b1", "b");
	expect_admitted("w1", "a");
	ck_assert_uint_eq(count_kind("w1", DEC_PREEMPT), 0);
	ck_assert(sched_wl_holds_quota(F.s, "ns", "w1"));
	expect_not_admitted("p");

	/* The next call: w1's admission is written (or on its way), and
	 * p takes its quota back. */
	confirm("w1", true);
	confirm("b1", true);
	settle();
	r = last_rec("w1");
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->kind, DEC_PREEMPT);
	ck_assert_uint_eq(count_kind("w1", DEC_PREEMPT), 1);
	expect_not_admitted("p");
	fx_end();
}
END_TEST


#define expect_last(wl, kind, reason, msg) \
	expect_last_at(__LINE__, wl, kind, reason, msg)
static void expect_last_at(int line, const char *wl, enum sched_dec_kind kind,
			   const char *reason, const char *msg)
{
	const struct rec *r = last_rec(wl);

	ck_assert_msg(r, "line %d: no decision for %s", line, wl);
	ck_assert_msg(r->kind == kind, "line %d: %s: kind %d, expected %d",
		      line, wl, (int)r->kind, (int)kind);
	ck_assert_msg(!strcmp(r->reason, reason) && !strcmp(r->msg, msg),
		      "line %d: %s: '%s' '%s'", line, wl, r->reason, r->msg);
}

/* The eviction written: Evicted=True, the reservation still there. */
static void wl_mark_evicted(const char *name, const char *reason,
			    const char *msg)
{
	struct wlent *e;
	struct workload *w = wl_copy_latest(name, &e);

	conditions_set(&w->conds, "Evicted", COND_TRUE, reason, msg, 1,
		       F.now);
	put_wl_lq(w, e->cq, e->lq);
}

/* The integration stopped the Job: the reservation cleared. */
static void wl_release(const char *name, bool active)
{
	struct wlent *e;
	struct workload *w = wl_copy_latest(name, &e);
	const struct condition *ev = conditions_find(&w->conds, "Evicted");
	char *reason = xstrdup(ev ? ev->reason : "Pending");
	char *msg = xstrdup(ev ? ev->message : "");

	conditions_set(&w->conds, "Requeued", COND_FALSE, reason, msg, 1,
		       F.now);
	conditions_set(&w->conds, "QuotaReserved", COND_FALSE, "Pending",
		       msg, 1, F.now);
	conditions_set(&w->conds, "Admitted", COND_FALSE, "NoReservation",
		       "The workload has no reservation", 1, F.now);
	admission_release(&w->admission);
	w->has_admission = false;
	w->active = active;
	put_wl_lq(w, e->cq, e->lq);
	free(reason);
	free(msg);
}

static void wl_set_active(const char *name, bool active)
{
	struct wlent *e;
	struct workload *w = wl_copy_latest(name, &e);

	w->active = active;
	w->meta.generation++;
	put_wl_lq(w, e->cq, e->lq);
}

START_TEST(evict_inactive_keeps_quota)
{
	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=2");
	put_wl(mk_wl("a", 0, T0 - 10 * SEC, 1, "cpu=2"), "q");
	settle();
	expect_admitted("a", "q");
	confirm("a", true);

	/* spec.active=false: evicted, and the quota stays meanwhile */
	wl_set_active("a", false);
	cycle();
	expect_last("a", DEC_EVICT, "Deactivated",
		    "The workload is deactivated");
	ck_assert(sched_wl_holds_quota(F.s, "ns", "a"));
	expect_cq_usage("q", "default", "cpu", CPU(2), 0);
	ck_assert_int_eq(cq_status("q").reserving, 1);
	put_wl(mk_wl("b", 0, T0 - 5 * SEC, 1, "cpu=2"), "q");
	cycle();
	cycle();
	expect_not_admitted("b");
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 1); /* once */

	/* the Evicted condition arrives: nothing more to decide */
	wl_mark_evicted("a", "Deactivated", "The workload is deactivated");
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 1);
	expect_not_admitted("b");
	ck_assert(sched_wl_holds_quota(F.s, "ns", "a"));

	/* the Job stopped, the reservation cleared: b gets the quota */
	wl_release("a", false);
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "a"));
	settle();
	expect_admitted("b", "q");
	ck_assert_uint_eq(count_kind("a", DEC_REQUEUE), 0);

	/* active again: Requeued=True Reactivated, then queued */
	wl_set_active("a", true);
	cycle();
	expect_last("a", DEC_REQUEUE, "Reactivated",
		    "The workload was reactivated");
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_REQUEUE), 1);
	fx_end();
}
END_TEST

/* Kueue deactivated it (DeactivationTarget, then spec.active=false):
 * the eviction names the cause. */
START_TEST(evict_deactivation_target)
{
	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=2");
	put_wl(mk_wl("a", 0, T0 - 10 * SEC, 1, "cpu=2"), "q");
	put_wl(mk_wl("m", 0, T0 - 9 * SEC, 1, "cpu=0"), "q");
	settle();
	confirm("a", true);
	confirm("m", true);
	{
		struct wlent *e;
		struct workload *w = wl_copy_latest("a", &e);

		conditions_set(&w->conds, "DeactivationTarget", COND_TRUE,
			       "RequeuingLimitExceeded",
			       "exceeding the maximum number of re-queuing "
			       "retries", 1, F.now);
		put_wl_lq(w, e->cq, e->lq);
		w = wl_copy_latest("m", &e);
		conditions_set(&w->conds, "DeactivationTarget", COND_TRUE,
			       "MaximumExecutionTimeExceeded",
			       "exceeding the maximum execution time", 1,
			       F.now);
		put_wl_lq(w, e->cq, e->lq);
	}
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 0); /* still active */
	wl_set_active("a", false);
	wl_set_active("m", false);
	cycle();
	expect_last("a", DEC_EVICT, "DeactivatedDueToRequeuingLimitExceeded",
		    "The workload is deactivated due to exceeding the "
		    "maximum number of re-queuing retries");
	expect_last("m", DEC_EVICT,
		    "DeactivatedDueToMaximumExecutionTimeExceeded",
		    "The workload is deactivated due to exceeding the "
		    "maximum execution time");
	fx_end();
}
END_TEST

static void wl_pods_ready(const char *name, bool ready)
{
	struct wlent *e;
	struct workload *w = wl_copy_latest(name, &e);

	conditions_set(&w->conds, "PodsReady", ready ? COND_TRUE : COND_FALSE,
		       ready ? "Started" : "WaitForStart", "m", 1, F.now);
	put_wl_lq(w, e->cq, e->lq);
}

static bool wl_is_ready(const char *name)
{
	return conditions_is_true(&wl_latest(name)->w->conds, "PodsReady");
}

static void block_setup(bool block)
{
	struct sched_opts o;

	sched_opts_default(&o);
	o.block_admission = block;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	add_cq("r", NULL, "default:cpu=1");
	put_wl(mk_wl("a", 0, T0 - 10 * SEC, 1, "cpu=1"), "q");
	put_wl(mk_wl("b", 0, T0 - 9 * SEC, 1, "cpu=1"), "q");
	put_wl(mk_wl("c", 0, T0 - 8 * SEC, 1, "cpu=1"), "q");
}

/* blockAdmission (kueue-scheduler.md §6): one not-ready workload at a
 * time; the next waits with WaitingForPodsReady and the loop stops. */
START_TEST(block_admission_one_at_a_time)
{
	block_setup(true);
	settle();
	expect_admitted("a", "q");
	expect_last("b", DEC_PENDING, "WaitingForPodsReady",
		    "waiting for all admitted workloads to be in PodsReady "
		    "condition");
	ck_assert_ptr_null(last_rec("c")); /* never reached */
	ck_assert(!sched_has_work(F.s));
	/* confirmed, still not ready: still blocked, nothing decided */
	confirm("a", true);
	{
		size_t n = F.nlog;

		cycle();
		ck_assert_uint_eq(F.nlog, n);
	}
	/* a workload of another queue that would fit waits too */
	put_wl(mk_wl("x", 0, T0 - 7 * SEC, 1, "cpu=1"), "r");
	cycle();
	ck_assert_ptr_null(last_rec("x"));
	/* ready: the next one goes, and blocks the one after */
	wl_pods_ready("a", true);
	settle();
	expect_admitted("b", "q");
	ck_assert_uint_eq(admits_of("b"), 1);
	ck_assert(!last_admit("c") || !last_admit("x"));
	confirm("b", true);
	wl_pods_ready("b", true);
	settle();
	for (int k = 0; k < 2; k++) {
		const char *n = last_admit("c") && !wl_is_ready("c") ? "c"
									 : "x";

		ck_assert_uint_eq(admits_of("c") + admits_of("x"),
				  (size_t)k + 1);
		confirm(n, true);
		wl_pods_ready(n, true);
		settle();
	}
	expect_admitted("c", "q");
	expect_admitted("x", "r");
	/* a holder losing readiness (WaitForRecovery) blocks again */
	wl_pods_ready("c", false);
	put_wl(mk_wl("d", 0, T0 - 1 * SEC, 1, "cpu=1"), "q");
	settle();
	expect_not_admitted("d");
	expect_last("d", DEC_PENDING, "WaitingForPodsReady",
		    "waiting for all admitted workloads to be in PodsReady "
		    "condition");
	/* the not-ready one finishes (or is evicted): unblocked */
	wl_finish("c");
	settle();
	expect_admitted("d", "q");
	fx_end();
}
END_TEST

/* requeuingStrategy.timestamp (§7.6): a workload evicted by a PodsReady
 * timeout queues from its eviction (Eviction) or keeps its creation time
 * (Creation). */
static void requeue_ts_case(bool creation, const char *first,
			    const char *reason)
{
	struct sched_opts o;
	struct workload *a;

	sched_opts_default(&o);
	o.requeue_ts_creation = creation;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=1");
	a = mk_wl("a", 0, T0 - 10 * SEC, 1, "cpu=1");
	conditions_set(&a->conds, "Evicted", COND_TRUE, reason,
		       "evicted", 1, T0 - 1 * SEC);
	conditions_set(&a->conds, "Requeued", COND_TRUE, "BackoffFinished",
		       "The workload backoff was finished", 1, T0);
	put_wl(a, "q");
	put_wl(mk_wl("b", 0, T0 - 5 * SEC, 1, "cpu=1"), "q");
	settle();
	expect_admitted(first, "q");
	expect_not_admitted(strcmp(first, "a") ? "a" : "b");
	fx_end();
}

START_TEST(requeue_timestamp_eviction)
{
	requeue_ts_case(false, "b", "PodsReadyTimeout");
}
END_TEST

START_TEST(requeue_timestamp_creation)
{
	requeue_ts_case(true, "a", "PodsReadyTimeout");
	/* Creation is waitForPodsReady's: an admission check's eviction
	 * still queues from its time (Kueue's GetQueueOrderTimestamp) */
	requeue_ts_case(true, "b", "AdmissionCheck");
}
END_TEST

START_TEST(block_admission_off)
{
	block_setup(false);
	settle();
	expect_admitted("a", "q");
	expect_admitted("b", "q");
	expect_admitted("c", "q");
	fx_end();
}
END_TEST

/* Entries that do not fit are still processed before the block (Kueue
 * blocks only an entry that would be admitted). */
START_TEST(block_admission_nofit_still_reported)
{
	block_setup(true);
	put_wl(mk_wl("big", 0, T0 - 20 * SEC, 1, "cpu=5"), "r");
	settle();
	expect_pending("big", "couldn't assign flavors to pod set main: "
			      "insufficient quota for cpu in flavor default, "
			      "previously considered podsets requests (0) + "
			      "current podset request (5) > maximum capacity "
			      "(1)");
	expect_admitted("a", "q");
	expect_not_admitted("b");
	fx_end();
}
END_TEST

START_TEST(evict_recheck_after_failed_write)
{
	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=2");
	put_wl(mk_wl("a", 0, T0 - 10 * SEC, 1, "cpu=1"), "q");
	settle();
	confirm("a", true);
	wl_set_active("a", false);
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 1);
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 1);
	/* the write failed: decided again at the next cycle */
	sched_wl_recheck(F.s, "ns", "a");
	sched_wl_recheck(F.s, "ns", "nope"); /* unknown: no-op */
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 2);
	/* removed meanwhile: nothing */
	sched_wl_recheck(F.s, "ns", "a");
	sched_wl_remove(F.s, "ns", "a");
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 2);
	CHECK();
	fx_end();
}
END_TEST

START_TEST(evict_hold_and_drain)
{
	struct cluster_queue *cq;

	fx_begin();
	add_flavor("default");
	cq = add_cq("q", NULL, "default:cpu=4");
	put_wl(mk_wl("a", 0, T0 - 10 * SEC, 1, "cpu=1"), "q");
	put_wl_lq(mk_wl("b", 0, T0 - 9 * SEC, 1, "cpu=1"), "q", "ns/other");
	settle();
	confirm("a", true);
	confirm("b", true);

	/* Hold: admitted workloads keep running */
	cq = mk_cq("q", NULL, "default:cpu=4");
	cq->stop = STOP_HOLD;
	put_cq(cq);
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 0);
	ck_assert_uint_eq(count_kind("b", DEC_EVICT), 0);

	/* HoldAndDrain: both evicted, with the ClusterQueue's reason */
	cq = mk_cq("q", NULL, "default:cpu=4");
	cq->stop = STOP_HOLD_AND_DRAIN;
	put_cq(cq);
	cycle();
	expect_last("a", DEC_EVICT, "ClusterQueueStopped",
		    "The ClusterQueue is stopped");
	expect_last("b", DEC_EVICT, "ClusterQueueStopped",
		    "The ClusterQueue is stopped");
	ck_assert(sched_wl_holds_quota(F.s, "ns", "a"));
	wl_mark_evicted("a", "ClusterQueueStopped",
			"The ClusterQueue is stopped");
	wl_release("a", true);
	wl_mark_evicted("b", "ClusterQueueStopped",
			"The ClusterQueue is stopped");
	wl_release("b", true);
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_REQUEUE), 0); /* still stopped */

	/* restarted: Requeued=True ClusterQueueRestarted for both */
	cq = mk_cq("q", NULL, "default:cpu=4");
	put_cq(cq);
	cycle();
	expect_last("a", DEC_REQUEUE, "ClusterQueueRestarted",
		    "The ClusterQueue was restarted after being stopped");
	expect_last("b", DEC_REQUEUE, "ClusterQueueRestarted",
		    "The ClusterQueue was restarted after being stopped");
	fx_end();
}
END_TEST

START_TEST(evict_local_queue_drain)
{
	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	put_wl(mk_wl("a", 0, T0 - 10 * SEC, 1, "cpu=1"), "q");
	put_wl_lq(mk_wl("b", 0, T0 - 9 * SEC, 1, "cpu=1"), "q", "ns/other");
	settle();
	confirm("a", true);
	confirm("b", true);
	sched_lq_set(F.s, "ns/lq", STOP_HOLD);
	cycle();
	ck_assert_uint_eq(count_kind("a", DEC_EVICT), 0);
	sched_lq_set(F.s, "ns/lq", STOP_HOLD_AND_DRAIN);
	cycle();
	expect_last("a", DEC_EVICT, "LocalQueueStopped",
		    "The LocalQueue is stopped");
	ck_assert_uint_eq(count_kind("b", DEC_EVICT), 0); /* other queue */
	CHECK();
	fx_end();
}
END_TEST

START_TEST(assume_confirm_forget)
{
	struct workload *w1, *stale;
	struct flavor_usage *u = NULL;
	size_t n = 0;
	int64_t t, b;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	w1 = mk_wl("w1", 0, T0 - 20 * SEC, 1, "cpu=3");
	put_wl(w1, "q");
	ck_assert_uint_eq(cycle(), 1);
	expect_admitted("w1", "q");
	/* Assumed: usage held at once. */
	ck_assert(sched_wl_holds_quota(F.s, "ns", "w1"));
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	ck_assert_int_eq(cq_status("q").reserving, 1);
	ck_assert_int_eq(cq_status("q").pending, 0);
	ck_assert_int_eq(lq_status("ns/lq").reserving, 1);

	/* A stale pending copy arrives: the assumption stays. */
	stale = pool_wl();
	workload_copy(stale, w1);
	put_wl(stale, "q");
	ck_assert(sched_wl_holds_quota(F.s, "ns", "w1"));
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	ck_assert_int_eq(cq_status("q").reserving, 1);
	ck_assert_int_eq(cq_status("q").pending, 0);
	cycle();
	ck_assert_uint_eq(admits_of("w1"), 1);

	/* The held quota keeps w2 out. */
	put_wl(mk_wl("w2", 0, T0 - 10 * SEC, 1, "cpu=2"), "q");
	settle();
	expect_pending("w2", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1 more needed");

	/* The write failed: forget releases and requeues w1. */
	sched_wl_forget(F.s, "ns", "w1");
	CHECK();
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "w1"));
	expect_cq_usage("q", "default", "cpu", 0, 0);
	ck_assert_int_eq(cq_status("q").reserving, 0);
	ck_assert_int_eq(cq_status("q").pending, 2);
	settle();
	/* w1 (older) first again; w2 still does not fit beside it. */
	ck_assert_uint_eq(admits_of("w1"), 2);
	expect_admitted("w1", "q");
	expect_not_admitted("w2");
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);

	/* Confirmed with QuotaReserved only: reserved, not yet used. */
	confirm("w1", false);
	ck_assert(sched_wl_holds_quota(F.s, "ns", "w1"));
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	cq_fr("q", true, "default", "cpu", &t, &b);
	ck_assert_int_eq(t, 0);
	ck_assert_int_eq(cq_status("q").reserving, 1);
	ck_assert_int_eq(cq_status("q").admitted, 0);
	/* forget is a no-op once confirmed. */
	sched_wl_forget(F.s, "ns", "w1");
	CHECK();
	ck_assert(sched_wl_holds_quota(F.s, "ns", "w1"));
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);

	/* Admitted=True as well: flavorsUsage and admitted count follow. */
	confirm("w1", true);
	cq_fr("q", true, "default", "cpu", &t, &b);
	ck_assert_int_eq(t, CPU(3));
	ck_assert_int_eq(cq_status("q").admitted, 1);
	ck_assert_int_eq(lq_status("ns/lq").admitted, 1);
	ck_assert_int_eq(lq_status("ns/lq").reserving, 1);
	ck_assert_int_eq(lq_status("ns/lq").pending, 1);
	sched_lq_usage(F.s, "ns/lq", false, &u, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(u[0].name, "default");
	ck_assert_uint_eq(u[0].nres, 1);
	ck_assert_str_eq(u[0].res[0].name, "cpu");
	ck_assert_int_eq(u[0].res[0].total, CPU(3));
	ck_assert_int_eq(u[0].res[0].borrowed, 0);
	flavor_usages_release(u, n); /* frees the array too (objects.c) */
	settle();
	ck_assert_uint_eq(admits_of("w1"), 2);
	expect_not_admitted("w2");

	/* Finishing releases everything; w2 goes in. */
	wl_finish("w1");
	ck_assert_int_eq(cq_status("q").admitted, 0);
	settle();
	expect_admitted("w2", "q");
	expect_cq_usage("q", "default", "cpu", CPU(2), 0);
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* restart: workloads holding quota arrive before their queue */

static struct workload *mk_held(const char *name, const char *cq,
				const char *flavor, int32_t count,
				const char *req, bool admitted)
{
	struct workload *w = mk_wl(name, 0, T0 - 1000 * SEC, count, req);
	struct pod_set_assignment *a;
	struct reslist per_pod = RESLIST_INIT;
	char *msg;

	w->has_admission = true;
	w->admission.cluster_queue = xstrdup(cq);
	w->admission.psa = xcalloc(1, sizeof(*w->admission.psa));
	w->admission.npsa = 1;
	a = &w->admission.psa[0];
	a->name = xstrdup(DEFAULT_PODSET_NAME);
	a->has_count = true;
	a->count = count;
	spec_res(req, &per_pod);
	for (size_t i = 0; i < per_pod.n; i++) {
		smap_set(&a->flavors, per_pod.v[i].name, flavor);
		reslist_set(&a->usage, per_pod.v[i].name,
			    per_pod.v[i].milli * count);
	}
	reslist_release(&per_pod);
	msg = xasprintf("Quota reserved in ClusterQueue %s", cq);
	conditions_set(&w->conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       msg, 1, T0 - 900 * SEC);
	free(msg);
	if (admitted)
		conditions_set(&w->conds, "Admitted", COND_TRUE, "Admitted",
			       "The workload is admitted", 1, T0 - 900 * SEC);
	return w;
}

START_TEST(restart_rebuild)
{
	struct sched_cq_status st;
	int64_t t, b;

	fx_begin();
	/* Workloads first, as informers may deliver them. */
	put_wl(mk_held("h1", "q", "default", 1, "cpu=1", true), "q");
	put_wl(mk_held("h2", "q", "default", 2, "cpu=1", false), "q");
	put_wl(mk_wl("p3", 0, T0 - 10 * SEC, 1, "cpu=2"), "q");
	ck_assert(sched_wl_holds_quota(F.s, "ns", "h1"));
	ck_assert(sched_wl_holds_quota(F.s, "ns", "h2"));
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "p3"));
	ck_assert_uint_eq(cycle(), 0); /* no queue yet */

	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	st = cq_status("q");
	ck_assert(st.exists);
	ck_assert(st.active);
	ck_assert_int_eq(st.reserving, 2);
	ck_assert_int_eq(st.admitted, 1);
	ck_assert_int_eq(st.pending, 1);
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	cq_fr("q", true, "default", "cpu", &t, &b);
	ck_assert_int_eq(t, CPU(1));
	ck_assert_int_eq(lq_status("ns/lq").reserving, 2);
	ck_assert_int_eq(lq_status("ns/lq").admitted, 1);

	settle();
	expect_not_admitted("h1");
	expect_not_admitted("h2");
	expect_pending("p3", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1 more needed");
	put_wl(mk_wl("p4", 0, T0 - 5 * SEC, 1, "cpu=1"), "q");
	settle();
	expect_admitted("p4", "q");
	expect_not_admitted("h1");
	expect_not_admitted("h2");
	expect_cq_usage("q", "default", "cpu", CPU(4), 0);
	/* The same held workload set again changes nothing. */
	put_wl(mk_held("h2", "q", "default", 2, "cpu=1", false), "q");
	expect_cq_usage("q", "default", "cpu", CPU(4), 0);
	ck_assert_int_eq(cq_status("q").reserving, 3);
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* inactive queues */

#define expect_active(cq, act, rsn, msg) \
	expect_active_at(__LINE__, cq, act, rsn, msg)
static void expect_active_at(int line, const char *cq, bool active,
			     const char *reason, const char *message)
{
	struct sched_cq_status st = cq_status(cq);

	ck_assert_msg(st.exists, "line %d: %s unknown", line, cq);
	ck_assert_msg(st.active == active, "line %d: %s active %d", line, cq,
		      st.active);
	ck_assert_msg(st.reason && !strcmp(st.reason, reason),
		      "line %d: %s reason '%s', expected '%s'", line, cq,
		      st.reason ? st.reason : "(null)", reason);
	ck_assert_msg(st.message && !strcmp(st.message, message),
		      "line %d: %s message\n  got:      '%s'\n  expected: '%s'",
		      line, cq, st.message ? st.message : "(null)", message);
}

START_TEST(inactive_missing_flavor)
{
	fx_begin();
	add_cq("q", NULL, "zeta:cpu=4 alpha:cpu=4");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "q");
	expect_active("q", false, "FlavorNotFound",
		      "Can't admit new workloads: references missing "
		      "ResourceFlavor(s): zeta,alpha.");
	ck_assert(!sched_has_work(F.s));
	settle();
	cycle();
	expect_not_admitted("w");
	ck_assert_int_eq(cq_status("q").pending, 1);

	add_flavor("zeta");
	expect_active("q", false, "FlavorNotFound",
		      "Can't admit new workloads: references missing "
		      "ResourceFlavor(s): alpha.");
	cycle();
	expect_not_admitted("w");

	add_flavor("alpha");
	expect_active("q", true, "Ready", "Can admit new workloads");
	ck_assert(sched_has_work(F.s));
	settle();
	expect_admitted("w", "q");

	/* Removing a flavor deactivates the queue again. */
	put_wl(mk_wl("w2", 0, T0, 1, "cpu=1"), "q");
	sched_flavor_remove(F.s, "alpha");
	CHECK();
	expect_active("q", false, "FlavorNotFound",
		      "Can't admit new workloads: references missing "
		      "ResourceFlavor(s): alpha.");
	{
		struct both b;

		take_both(&b);
		ck_assert_uint_eq(seen_count(&b.cq, "q"), 1);
	}
	settle();
	expect_not_admitted("w2");
	fx_end();
}
END_TEST

/* A TAS flavor whose Topology does not exist: TopologyNotFound with
 * Kueue's message; admission checks: NotFound while missing, Inactive
 * once they exist (cueue runs none), both in Kueue's cause order. */
START_TEST(inactive_topology_and_checks)
{
	struct resource_flavor *rf;
	struct cluster_queue *cq;

	fx_begin();
	add_flavor("plain");
	rf = mk_flavor("tas");
	rf->topology_name = xstrdup("topo");
	put_flavor(rf);
	add_cq("t", NULL, "tas:cpu=4");
	expect_active("t", false, "TopologyNotFound",
		      "Can't admit new workloads: there is no Topology "
		      "\"topo\" for TAS flavor \"tas\".");
	sched_topology_set(F.s, "topo", true);
	CHECK();
	expect_active("t", true, "Ready", "Can admit new workloads");
	sched_topology_set(F.s, "topo", false);
	expect_active("t", false, "TopologyNotFound",
		      "Can't admit new workloads: there is no Topology "
		      "\"topo\" for TAS flavor \"tas\".");
	cq = mk_cq("ac", NULL, "plain:cpu=4");
	cq->admission_checks = xcalloc(2, sizeof(*cq->admission_checks));
	cq->admission_checks[0] = xstrdup("prov");
	cq->admission_checks[1] = xstrdup("mk");
	cq->nadmission_checks = 2;
	put_cq(cq);
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "ac");
	expect_active("ac", false, "AdmissionCheckNotFound",
		      "Can't admit new workloads: references missing "
		      "AdmissionCheck(s): prov,mk.");
	sched_admission_check_set(F.s, "prov", true);
	CHECK();
	expect_active("ac", false, "AdmissionCheckNotFound",
		      "Can't admit new workloads: references missing "
		      "AdmissionCheck(s): mk, references inactive "
		      "AdmissionCheck(s): prov.");
	sched_admission_check_set(F.s, "mk", true);
	expect_active("ac", false, "AdmissionCheckInactive",
		      "Can't admit new workloads: references inactive "
		      "AdmissionCheck(s): prov,mk.");
	settle();
	expect_not_admitted("w");
	fx_end();
}
END_TEST

START_TEST(inactive_stopped)
{
	struct cluster_queue *cq;

	fx_begin();
	add_flavor("default");
	cq = mk_cq("q", NULL, "default:cpu=4");
	cq->stop = STOP_HOLD;
	put_cq(cq);
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "q");
	expect_active("q", false, "Stopped",
		      "Can't admit new workloads: is stopped.");
	ck_assert(!sched_has_work(F.s));
	cycle();
	settle();
	expect_not_admitted("w");
	ck_assert_int_eq(cq_status("q").pending, 1);

	/* Stopped and a missing flavor: the first cause is the reason. */
	cq = mk_cq("q", NULL, "default:cpu=4 gone:cpu=4");
	cq->stop = STOP_HOLD;
	put_cq(cq);
	expect_active("q", false, "Stopped",
		      "Can't admit new workloads: is stopped, references "
		      "missing ResourceFlavor(s): gone.");
	cycle();
	expect_not_admitted("w");

	add_cq("q", NULL, "default:cpu=4");
	expect_active("q", true, "Ready", "Can admit new workloads");
	settle();
	expect_admitted("w", "q");
	fx_end();
}
END_TEST

START_TEST(inactive_terminating)
{
	struct cluster_queue *cq;

	fx_begin();
	add_flavor("default");
	cq = mk_cq("q", NULL, "default:cpu=4");
	cq->meta.deletion_ms = T0 - SEC;
	put_cq(cq);
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "q");
	expect_active("q", false, "Terminating",
		      "Can't admit new workloads; clusterQueue is terminating");
	cycle();
	settle();
	expect_not_admitted("w");
	fx_end();
}
END_TEST

START_TEST(inactive_invalid)
{
	struct cluster_queue *cq;
	struct sched_cq_status st;

	fx_begin();
	add_flavor("default");
	/* Only meta is to be trusted; the groups look fine but must not
	 * be used. */
	cq = mk_cq("q", NULL, "default:cpu=4");
	sched_cq_set(F.s, cq, "spec.resourceGroups[0]: Invalid value: x");
	CHECK();
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "q");
	st = cq_status("q");
	ck_assert(st.exists);
	ck_assert(!st.active);
	ck_assert_ptr_nonnull(st.message);
	ck_assert_msg(strstr(st.message, "spec.resourceGroups[0]") != NULL,
		      "message '%s' does not say why", st.message);
	cycle();
	settle();
	expect_not_admitted("w");

	/* Fixed: the same name becomes a good queue. */
	add_cq("q", NULL, "default:cpu=4");
	expect_active("q", true, "Ready", "Can admit new workloads");
	settle();
	expect_admitted("w", "q");
	fx_end();
}
END_TEST

START_TEST(cohort_cycle)
{
	fx_begin();
	add_flavor("default");
	put_cohort(mk_cohort("A", "B", NULL));
	put_cohort(mk_cohort("B", "A", "default:cpu=4"));
	add_cq("x", "A", "default:cpu=4");
	add_cq("y", NULL, "default:cpu=4");
	put_wl(mk_wl("wx", 0, T0, 1, "cpu=1"), "x");
	put_wl(mk_wl("wy", 0, T0, 1, "cpu=1"), "y");
	cycle();
	settle();
	expect_not_admitted("wx");
	expect_admitted("wy", "y"); /* other trees are unaffected */
	expect_cq_usage("x", "default", "cpu", 0, 0);

	/* Break the cycle: x admits again. */
	put_cohort(mk_cohort("B", NULL, "default:cpu=4"));
	settle();
	expect_admitted("wx", "x");
	expect_cq_usage("x", "default", "cpu", CPU(1), 0);
	fx_end();
}
END_TEST

static void ns_labels(const char *ns, const char *key, const char *value)
{
	struct smap m = SMAP_INIT;

	smap_set(&m, key, value);
	sched_namespace_set(F.s, ns, &m);
	smap_release(&m);
	CHECK();
}

START_TEST(namespace_mismatch)
{
	struct cluster_queue *cq;
	const char *team_a[1] = { "a" };

	fx_begin();
	add_flavor("default");
	cq = mk_cq("q", NULL, "default:cpu=4");
	label_selector_add(&cq->ns_selector, "team", SEL_IN, team_a, 1);
	put_cq(cq);
	ns_labels("ns", "team", "b");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "q");
	settle();
	expect_pending("w", "Workload namespace doesn't match ClusterQueue "
		       "selector");
	expect_cq_usage("q", "default", "cpu", 0, 0);

	/* The namespace gets the label: a requeue event. */
	ns_labels("ns", "team", "a");
	settle();
	expect_admitted("w", "q");
	fx_end();
}
END_TEST

/* Under StrictFIFO a namespace mismatch parks the head instead of
 * blocking the queue. An unset namespace has no labels. */
START_TEST(namespace_mismatch_strict_parks)
{
	struct cluster_queue *cq;
	const char *team_a[1] = { "a" };

	fx_begin();
	add_flavor("default");
	cq = mk_cq("q", NULL, "default:cpu=4");
	cq->strategy = QS_STRICT_FIFO;
	label_selector_add(&cq->ns_selector, "team", SEL_IN, team_a, 1);
	put_cq(cq);
	ns_labels("good", "team", "a");
	put_wl(mk_wl_ns("nowhere", "early", 0, T0 - 10 * SEC, 1, "cpu=1"),
	       "q");
	put_wl(mk_wl_ns("good", "late", 0, T0, 1, "cpu=1"), "q");
	settle();
	expect_pending("early", "Workload namespace doesn't match "
		       "ClusterQueue selector");
	expect_admitted("late", "q");
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* partial admission */

START_TEST(partial_reduces_count)
{
	struct workload *w;
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	w = mk_wl("w", 0, T0, 8, "cpu=2");
	w->pod_sets[0].has_min_count = true;
	w->pod_sets[0].min_count = 3;
	put_wl(w, "q");
	settle();
	r = expect_admitted("w", "q");
	expect_count(r, "main", 5);
	expect_usage(r, "main", "cpu", CPU(10));
	expect_flavor(r, "main", "cpu", "default");
	expect_cq_usage("q", "default", "cpu", CPU(10), 0);
	fx_end();
}
END_TEST

START_TEST(partial_floor)
{
	struct workload *w;
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	put_wl(mk_wl("h", 0, T0 - 100 * SEC, 1, "cpu=5"), "q");
	settle();
	/* 5 free: even minCount 3 x 2 = 6 does not fit. */
	w = mk_wl("w", 0, T0 - 10 * SEC, 8, "cpu=2");
	w->pod_sets[0].has_min_count = true;
	w->pod_sets[0].min_count = 3;
	put_wl(w, "q");
	settle();
	expect_pending("w", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (16) > maximum capacity (10)");
	/* With 6 free the floor fits. */
	wl_finish("h");
	put_wl(mk_wl("h2", 0, T0 - 100 * SEC, 1, "cpu=4"), "q");
	settle();
	r = expect_admitted("w", "q");
	/* h2 is older and goes first (4), leaving 6 = 3 pods. */
	expect_admitted("h2", "q");
	expect_count(r, "main", 3);
	expect_usage(r, "main", "cpu", CPU(6));
	expect_cq_usage("q", "default", "cpu", CPU(10), 0);
	fx_end();
}
END_TEST

START_TEST(partial_disabled)
{
	struct sched_opts o;
	struct workload *w;

	sched_opts_default(&o);
	o.partial_admission = false;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	w = mk_wl("w", 0, T0, 8, "cpu=2");
	w->pod_sets[0].has_min_count = true;
	w->pod_sets[0].min_count = 3;
	put_wl(w, "q");
	settle();
	expect_pending("w", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (16) > maximum capacity (10)");
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* NoFit messages */

START_TEST(msg_more_needed_units)
{
	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10,memory=4Gi");
	put_wl(mk_wl("h", 0, T0 - 100 * SEC, 1, "cpu=9,memory=3Gi"), "q");
	settle();
	expect_admitted("h", "q");
	put_wl(mk_wl("c", 0, T0 - 10 * SEC, 1, "cpu=2500m"), "q");
	put_wl(mk_wl("m", 0, T0 - 9 * SEC, 1, "memory=2Gi"), "q");
	settle();
	expect_pending("c", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1500m more needed");
	expect_pending("m", PS_MAIN "insufficient unused quota for memory in "
		       "flavor default, 1Gi more needed");
	fx_end();
}
END_TEST

/* Earlier pod sets' usage counts against later ones. */
START_TEST(msg_previous_podsets)
{
	struct workload *w;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=8");
	w = mk_wl("w", 0, T0, 1, NULL);
	add_ps(w, "driver", 1, "cpu=2");
	add_ps(w, "workers", 4, "cpu=2");
	put_wl(w, "q");
	settle();
	expect_pending("w", "couldn't assign flavors to pod set workers: "
		       "insufficient quota for cpu in flavor default, "
		       "previously considered podsets requests (2) + current "
		       "podset request (8) > maximum capacity (8)");
	/* Assignment stops at the first pod set without flavors. */
	w = mk_wl("first-fails", 0, T0, 1, NULL);
	add_ps(w, "a", 1, "cpu=9");
	add_ps(w, "b", 1, "example.com/foo=1");
	put_wl(w, "q");
	settle();
	expect_pending("first-fails", "couldn't assign flavors to pod set a: "
		       "insufficient quota for cpu in flavor default, "
		       "previously considered podsets requests (0) + current "
		       "podset request (9) > maximum capacity (8)");
	w = mk_wl("ok", 0, T0, 1, NULL);
	add_ps(w, "driver", 1, "cpu=2");
	add_ps(w, "workers", 3, "cpu=2");
	put_wl(w, "q");
	settle();
	{
		const struct rec *r = expect_admitted("ok", "q");

		expect_usage(r, "driver", "cpu", CPU(2));
		expect_usage(r, "workers", "cpu", CPU(6));
		expect_count(r, "driver", 1);
		expect_count(r, "workers", 3);
	}
	expect_cq_usage("q", "default", "cpu", CPU(8), 0);
	fx_end();
}
END_TEST

START_TEST(msg_resource_unavailable)
{
	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1,example.com/foo=1"), "q");
	settle();
	expect_pending("w", PS_MAIN "resource example.com/foo unavailable in "
		       "ClusterQueue");
	expect_cq_usage("q", "default", "cpu", 0, 0);
	fx_end();
}
END_TEST

START_TEST(ignore_undeclared)
{
	struct sched_opts o;
	const struct rec *r;

	sched_opts_default(&o);
	o.ignore_undeclared = true;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1,example.com/foo=1"), "q");
	settle();
	r = expect_admitted("w", "q");
	expect_flavor(r, "main", "cpu", "default");
	ck_assert_ptr_null(flavor_of(r, "main", "example.com/foo"));
	expect_cq_usage("q", "default", "cpu", CPU(1), 0);
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* pods */

START_TEST(pods_resource)
{
	struct sched_opts o;
	const struct rec *r;

	sched_opts_default(&o);
	o.partial_admission = false;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10,pods=3");
	put_wl(mk_wl("four", 0, T0 - 10 * SEC, 4, "cpu=1"), "q");
	settle();
	expect_pending("four", PS_MAIN "insufficient quota for pods in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (4) > maximum capacity (3)");
	put_wl(mk_wl("two", 0, T0 - 9 * SEC, 2, "cpu=1"), "q");
	settle();
	r = expect_admitted("two", "q");
	expect_flavor(r, "main", "pods", "default");
	expect_flavor(r, "main", "cpu", "default");
	expect_usage(r, "main", "pods", N(2));
	expect_usage(r, "main", "cpu", CPU(2));
	expect_cq_usage("q", "default", "pods", N(2), 0);
	expect_cq_usage("q", "default", "cpu", CPU(2), 0);
	put_wl(mk_wl("two-more", 0, T0 - 8 * SEC, 2, "cpu=1"), "q");
	settle();
	expect_pending("two-more", PS_MAIN "insufficient unused quota for pods "
		       "in flavor default, 1 more needed");
	/* A queue without pods ignores the pod count. */
	add_cq("nopods", NULL, "default:cpu=10");
	put_wl(mk_wl("many", 0, T0, 5, "cpu=1"), "nopods");
	settle();
	r = expect_admitted("many", "nopods");
	ck_assert_ptr_null(flavor_of(r, "main", "pods"));
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* dirty tracking */

START_TEST(take_dirty_once)
{
	struct both b;

	fx_begin();
	add_flavor("default");
	add_cq("a", NULL, "default:cpu=4");
	add_cq("other", NULL, "default:cpu=4");
	take_both(&b);
	ck_assert_uint_eq(seen_count(&b.cq, "a"), 1);
	ck_assert_uint_eq(seen_count(&b.cq, "other"), 1);
	take_both(&b);
	ck_assert_uint_eq(b.cq.n, 0);
	ck_assert_uint_eq(b.lq.n, 0);

	put_wl_lq(mk_wl("w1", 0, T0 - 2 * SEC, 1, "cpu=1"), "a", "ns/lq-a");
	put_wl_lq(mk_wl("w2", 0, T0 - SEC, 1, "cpu=1"), "a", "ns/lq-a");
	take_both(&b);
	ck_assert_uint_eq(seen_count(&b.cq, "a"), 1);
	ck_assert_uint_eq(seen_count(&b.lq, "ns/lq-a"), 1);
	ck_assert_uint_eq(seen_count(&b.cq, "other"), 0);
	ck_assert_uint_eq(b.cq.n, 1);
	ck_assert_uint_eq(b.lq.n, 1);

	ck_assert_uint_eq(cycle(), 2);
	take_both(&b);
	ck_assert_uint_eq(seen_count(&b.cq, "a"), 1);
	ck_assert_uint_eq(seen_count(&b.lq, "ns/lq-a"), 1);
	ck_assert_uint_eq(seen_count(&b.cq, "other"), 0);
	take_both(&b);
	ck_assert_uint_eq(b.cq.n, 0);
	ck_assert_uint_eq(b.lq.n, 0);
	ck_assert_int_eq(lq_status("ns/lq-a").reserving, 2);

	confirm("w2", true);
	take_both(&b);
	ck_assert_uint_eq(seen_count(&b.cq, "a"), 1);
	ck_assert_uint_eq(seen_count(&b.lq, "ns/lq-a"), 1);
	ck_assert_int_eq(lq_status("ns/lq-a").admitted, 1);

	wl_finish("w1");
	take_both(&b);
	ck_assert_uint_eq(seen_count(&b.cq, "a"), 1);
	ck_assert_uint_eq(seen_count(&b.lq, "ns/lq-a"), 1);
	ck_assert_int_eq(lq_status("ns/lq-a").reserving, 1);
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* backoff (requeueState.requeueAt) */

START_TEST(backoff_requeue_at)
{
	struct workload *w;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	w = mk_wl("w", 0, T0 - 100 * SEC, 1, "cpu=1");
	w->has_requeue_count = true;
	w->requeue_count = 1;
	w->requeue_at_ms = T0 + 60 * SEC;
	put_wl(w, "q");
	w = mk_wl("later", 0, T0 - 100 * SEC, 1, "cpu=1");
	w->requeue_at_ms = T0 + 120 * SEC;
	put_wl(w, "q");
	cycle();
	expect_not_admitted("w");
	expect_not_admitted("later");
	ck_assert_int_eq(sched_next_wakeup(F.s), T0 + 60 * SEC);
	ck_assert_int_eq(cq_status("q").pending, 2);
	F.now = T0 + 60 * SEC;
	sched_tick(F.s, F.now);
	CHECK();
	settle();
	expect_admitted("w", "q");
	expect_not_admitted("later");
	ck_assert_int_eq(sched_next_wakeup(F.s), T0 + 120 * SEC);
	F.now = T0 + 120 * SEC;
	sched_tick(F.s, F.now);
	CHECK();
	settle();
	expect_admitted("later", "q");
	ck_assert_int_eq(sched_next_wakeup(F.s), 0);
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* more cohort shapes */

/* A cohort's borrowingLimit caps what its subtree takes from above. */
START_TEST(cohort_borrowing_limit)
{
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	put_cohort(mk_cohort("mid", "root", "default:cpu=0/3"));
	add_cq("b", "mid", "default:cpu=2");
	add_cq("lender", "root", "default:cpu=10");
	put_wl(mk_wl("b6", 0, T0 - 2 * SEC, 1, "cpu=6"), "b");
	settle();
	expect_pending("b6", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (6) > maximum capacity (5)");
	put_wl(mk_wl("b5", 0, T0 - SEC, 1, "cpu=5"), "b");
	settle();
	r = expect_admitted("b5", "b");
	ck_assert_int_eq(r->borrowing, 2);
	expect_cq_usage("b", "default", "cpu", CPU(5), CPU(3));
	/* The lender keeps the remaining 7. */
	put_wl(mk_wl("l7", 0, T0, 1, "cpu=7"), "lender");
	settle();
	expect_admitted("l7", "lender");
	put_wl(mk_wl("l1", 0, T0, 1, "cpu=1"), "lender");
	settle();
	expect_pending("l1", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 1 more needed");
	fx_end();
}
END_TEST

/* A cohort's own quota is lendable; removing the Cohort object leaves
 * an implicit, empty cohort (usage kept, nothing more fits). */
START_TEST(cohort_own_quota_and_removal)
{
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	put_cohort(mk_cohort("co", NULL, "default:cpu=4"));
	add_cq("a", "co", "default:cpu=0");
	put_wl(mk_wl("w3", 0, T0 - 2 * SEC, 1, "cpu=3"), "a");
	settle();
	r = expect_admitted("w3", "a");
	ck_assert_int_eq(r->borrowing, 1);
	expect_cq_usage("a", "default", "cpu", CPU(3), CPU(3));
	sched_cohort_remove(F.s, "co");
	CHECK();
	expect_cq_usage("a", "default", "cpu", CPU(3), CPU(3));
	ck_assert(sched_wl_holds_quota(F.s, "ns", "w3"));
	put_wl(mk_wl("w1", 0, T0 - SEC, 1, "cpu=1"), "a");
	settle();
	expect_pending("w1", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (1) > maximum capacity (0)");
	/* Back again: one more fits. */
	put_cohort(mk_cohort("co", NULL, "default:cpu=4"));
	settle();
	expect_admitted("w1", "a");
	expect_cq_usage("a", "default", "cpu", CPU(4), CPU(4));
	fx_end();
}
END_TEST

/*
 * §2.6: a head that needs preemption but finds no candidates (reclaim
 * Never) reserves its nominal in the cycle's snapshot, so a borrowing
 * head of another queue cannot take that capacity in the same cycle.
 */
START_TEST(no_candidates_reserves_in_cycle)
{
	struct sched_opts o;

	/* One round = one Kueue cycle, where the reservation lives. */
	sched_opts_default(&o);
	o.max_rounds = 1;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("A", "co", "default:cpu=4");
	add_cq("B", "co", "default:cpu=4");
	put_wl(mk_wl("hb", 0, T0 - 100 * SEC, 1, "cpu=6"), "B");
	settle();
	expect_admitted("hb", "B");
	put_wl(mk_wl("wa", 10, T0 - 20 * SEC, 1, "cpu=4"), "A");
	put_wl(mk_wl("wb", 0, T0 - 10 * SEC, 1, "cpu=2"), "B");
	ck_assert_uint_eq(cycle(), 0);
	expect_pending("wa", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 2 more needed");
	expect_not_admitted("wb");
	expect_cq_usage("B", "default", "cpu", CPU(6), CPU(2));
	/* The reservation ends with the round; wa is parked
	 * (BestEffortFIFO), so the next one admits wb, as Kueue's next
	 * cycle does. */
	ck_assert_uint_eq(cycle(), 1);
	expect_admitted("wb", "B");
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* more assignment shapes */

/* Pod sets choose flavors one by one; earlier pod sets' usage counts. */
START_TEST(podsets_split_flavors)
{
	struct workload *w;
	const struct rec *r;

	fx_begin();
	add_flavor("f1");
	add_flavor("f2");
	add_cq("q", NULL, "f1:cpu=4 f2:cpu=10");
	w = mk_wl("w", 0, T0, 1, NULL);
	add_ps(w, "driver", 1, "cpu=2");
	add_ps(w, "workers", 2, "cpu=2");
	put_wl(w, "q");
	settle();
	r = expect_admitted("w", "q");
	expect_flavor(r, "driver", "cpu", "f1");
	expect_flavor(r, "workers", "cpu", "f2");
	expect_usage(r, "driver", "cpu", CPU(2));
	expect_usage(r, "workers", "cpu", CPU(4));
	expect_cq_usage("q", "f1", "cpu", CPU(2), 0);
	expect_cq_usage("q", "f2", "cpu", CPU(4), 0);
	fx_end();
}
END_TEST

/* Reasons from every flavor tried, sorted: exceeding f1's maximum and
 * missing unused quota on f2. BinarySI for memory. */
START_TEST(msg_across_flavors)
{
	fx_begin();
	add_flavor("f1");
	add_flavor("f2");
	add_cq("q", NULL, "f1:cpu=2,memory=4Gi f2:cpu=4,memory=8Gi");
	put_wl(mk_wl("h", 0, T0 - 100 * SEC, 1, "cpu=3"), "q");
	settle();
	expect_admitted("h", "q");
	put_wl(mk_wl("w", 0, T0 - 10 * SEC, 1, "cpu=3"), "q");
	settle();
	expect_pending("w", PS_MAIN "insufficient quota for cpu in flavor f1, "
		       "previously considered podsets requests (0) + current "
		       "podset request (3) > maximum capacity (2), "
		       "insufficient unused quota for cpu in flavor f2, 2 more "
		       "needed");
	put_wl(mk_wl("m", 0, T0 - 5 * SEC, 1, "memory=9Gi"), "q");
	settle();
	expect_pending("m", PS_MAIN "insufficient quota for memory in flavor "
		       "f1, previously considered podsets requests (0) + "
		       "current podset request (9Gi) > maximum capacity (4Gi), "
		       "insufficient quota for memory in flavor f2, previously "
		       "considered podsets requests (0) + current podset "
		       "request (9Gi) > maximum capacity (8Gi)");
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* workload lifecycle */

START_TEST(wl_lifecycle)
{
	struct workload *w;
	struct wlent *e;
	struct sched_cq_status st;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	put_wl(mk_wl("h", 0, T0 - 100 * SEC, 1, "cpu=4"), "q");
	settle();
	expect_admitted("h", "q");

	/* Pending workloads that are finished or inactive are not queued. */
	w = mk_wl("done", 0, T0 - 50 * SEC, 1, "cpu=1");
	conditions_set(&w->conds, "Finished", COND_TRUE, "Succeeded", "x", 1,
		       T0);
	put_wl(w, "q");
	w = mk_wl("off", 0, T0 - 50 * SEC, 1, "cpu=1");
	w->active = false;
	put_wl(w, "q");
	put_wl(mk_wl("gone", 0, T0 - 40 * SEC, 1, "cpu=1"), "q");
	put_wl(mk_wl("p", 0, T0 - 30 * SEC, 1, "cpu=2"), "q");
	st = cq_status("q");
	ck_assert_int_eq(st.pending, 2);
	sched_wl_remove(F.s, "ns", "gone");
	CHECK();
	ck_assert_int_eq(cq_status("q").pending, 1);
	ck_assert_int_eq(lq_status("ns/lq").pending, 1);
	settle();
	expect_pending("p", NULL);

	/* Deactivating the holder releases its quota (a requeue event). */
	w = wl_copy_latest("h", &e);
	w->active = false;
	put_wl_lq(w, e->cq, e->lq);
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "h"));
	expect_cq_usage("q", "default", "cpu", 0, 0);
	settle();
	expect_admitted("p", "q");
	expect_not_admitted("done");
	expect_not_admitted("off");
	expect_not_admitted("gone");
	/* Reactivated, "off" is queued and fits beside p. */
	w = wl_copy_latest("off", &e);
	w->active = true;
	put_wl_lq(w, e->cq, e->lq);
	settle();
	expect_admitted("off", "q");
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	fx_end();
}
END_TEST

/* A priority change of a pending workload re-sorts its queue. */
START_TEST(priority_update_resorts)
{
	struct sched_opts o;
	struct workload *w;
	struct wlent *e;

	sched_opts_default(&o);
	o.max_rounds = 1;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	put_wl(mk_wl("first", 0, T0 - 20 * SEC, 1, "cpu=1"), "q");
	put_wl(mk_wl("second", 0, T0 - 10 * SEC, 1, "cpu=1"), "q");
	w = wl_copy_latest("second", &e);
	w->priority = 5;
	put_wl_lq(w, e->cq, e->lq);
	ck_assert_uint_eq(cycle(), 1);
	expect_admitted("second", "q");
	ck_assert_uint_eq(cycle(), 1);
	expect_admitted("first", "q");
	fx_end();
}
END_TEST

/* A removed ClusterQueue admits nothing; its held usage survives and
 * counts again when it comes back. */
START_TEST(cq_remove_and_return)
{
	struct sched_cq_status st;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	put_wl(mk_wl("h", 0, T0 - 100 * SEC, 1, "cpu=3"), "q");
	settle();
	expect_admitted("h", "q");
	sched_cq_remove(F.s, "q");
	CHECK();
	st = cq_status("q");
	ck_assert(!st.exists);
	put_wl(mk_wl("p", 0, T0 - 10 * SEC, 1, "cpu=1"), "q");
	put_wl(mk_wl("big", 0, T0 - 5 * SEC, 1, "cpu=2"), "q");
	cycle();
	settle();
	expect_not_admitted("p");
	ck_assert(sched_wl_holds_quota(F.s, "ns", "h"));
	add_cq("q", NULL, "default:cpu=4");
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	ck_assert_int_eq(cq_status("q").reserving, 1);
	ck_assert_int_eq(cq_status("q").pending, 2);
	settle();
	expect_admitted("p", "q");
	expect_not_admitted("big");
	ck_assert_uint_eq(admits_of("h"), 1);
	expect_cq_usage("q", "default", "cpu", CPU(4), 0);
	fx_end();
}
END_TEST

/* A quota increase is a requeue event for parked workloads. */
START_TEST(quota_change_requeues)
{
	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=2");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=3"), "q");
	settle();
	expect_pending("w", PS_MAIN "insufficient quota for cpu in flavor "
		       "default, previously considered podsets requests (0) + "
		       "current podset request (3) > maximum capacity (2)");
	ck_assert_int_eq(cq_status("q").pending_inadmissible, 1);
	add_cq("q", NULL, "default:cpu=3");
	settle();
	expect_admitted("w", "q");
	fx_end();
}
END_TEST

/* A workload that moves between LocalQueues / ClusterQueues, or has
 * none (cq NULL: not queued at all). */
START_TEST(wl_moves_queues)
{
	struct workload *w;
	struct wlent *e;

	fx_begin();
	add_flavor("default");
	add_cq("a", NULL, "default:cpu=4");
	add_cq("b", NULL, "default:cpu=4");
	w = mk_wl("w", 0, T0, 1, "cpu=1");
	put_wl_lq(w, NULL, NULL);
	ck_assert_int_eq(cq_status("a").pending, 0);
	ck_assert(!sched_has_work(F.s));
	cycle();
	expect_not_admitted("w");

	w = wl_copy_latest("w", &e);
	put_wl_lq(w, "a", "ns/lq1");
	ck_assert_int_eq(cq_status("a").pending, 1);
	ck_assert_int_eq(lq_status("ns/lq1").pending, 1);

	w = wl_copy_latest("w", &e);
	put_wl_lq(w, "b", "ns/lq2");
	ck_assert_int_eq(cq_status("a").pending, 0);
	ck_assert_int_eq(lq_status("ns/lq1").pending, 0);
	ck_assert_int_eq(cq_status("b").pending, 1);
	ck_assert_int_eq(lq_status("ns/lq2").pending, 1);
	settle();
	expect_admitted("w", "b");
	ck_assert_int_eq(lq_status("ns/lq2").reserving, 1);
	ck_assert_int_eq(lq_status("ns/lq1").reserving, 0);
	expect_cq_usage("a", "default", "cpu", 0, 0);
	expect_cq_usage("b", "default", "cpu", CPU(1), 0);
	fx_end();
}
END_TEST

/* Quota released in one queue requeues parked workloads of the whole
 * cohort tree. */
START_TEST(requeue_whole_cohort)
{
	fx_begin();
	add_flavor("default");
	put_cohort(mk_cohort("child", "top", NULL));
	add_cq("x", "child", "default:cpu=0");
	add_cq("y", "top", "default:cpu=4");
	put_wl(mk_wl("h", 0, T0 - 100 * SEC, 1, "cpu=4"), "y");
	settle();
	put_wl(mk_wl("wx", 0, T0 - 10 * SEC, 1, "cpu=2"), "x");
	settle();
	expect_pending("wx", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 2 more needed");
	ck_assert_int_eq(cq_status("x").pending_inadmissible, 1);
	wl_finish("h");
	settle();
	expect_admitted("wx", "x");
	expect_cq_usage("x", "default", "cpu", CPU(2), CPU(2));
	fx_end();
}
END_TEST

/* Partial admission counts borrowable quota. */
START_TEST(partial_with_borrowing)
{
	struct workload *w;
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	add_cq("a", "co", "default:cpu=2/3");
	add_cq("b", "co", "default:cpu=10");
	w = mk_wl("w", 0, T0, 10, "cpu=1");
	w->pod_sets[0].has_min_count = true;
	w->pod_sets[0].min_count = 1;
	put_wl(w, "a");
	settle();
	r = expect_admitted("w", "a");
	expect_count(r, "main", 5);
	expect_usage(r, "main", "cpu", CPU(5));
	ck_assert_int_eq(r->borrowing, 1);
	expect_cq_usage("a", "default", "cpu", CPU(5), CPU(3));
	fx_end();
}
END_TEST

/* The pods resource follows the reduced count. */
START_TEST(partial_with_pods)
{
	struct workload *w;
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=100,pods=5");
	w = mk_wl("w", 0, T0, 8, "cpu=1");
	w->pod_sets[0].has_min_count = true;
	w->pod_sets[0].min_count = 2;
	put_wl(w, "q");
	settle();
	r = expect_admitted("w", "q");
	expect_count(r, "main", 5);
	expect_usage(r, "main", "pods", N(5));
	expect_usage(r, "main", "cpu", CPU(5));
	fx_end();
}
END_TEST

/* v0.14 (kueue-api.md §3.2): even a zero request of a resource the
 * ClusterQueue does not cover is NoFit. */
START_TEST(msg_zero_undeclared)
{
	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1,example.com/foo=0"), "q");
	settle();
	expect_pending("w", PS_MAIN "resource example.com/foo unavailable in "
		       "ClusterQueue");
	fx_end();
}
END_TEST

/* Per-pod requests as Kubernetes computes them (kueue-api.md §12.5):
 * limits stand in for missing requests, init containers take the max,
 * overhead adds. */
START_TEST(pod_requests_shape)
{
	struct workload *w;
	struct pod_template *t;
	const struct rec *r;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=100,memory=100Gi");
	w = mk_wl("lim", 0, T0 - 3 * SEC, 2, NULL);
	t = &add_ps(w, "main", 2, NULL)->tmpl;
	spec_res("cpu=2,memory=1Gi", &t->containers[0].limits);
	put_wl(w, "q");
	w = mk_wl("init", 0, T0 - 2 * SEC, 1, NULL);
	t = &add_ps(w, "main", 3, "cpu=1")->tmpl;
	t->init_containers = xcalloc(1, sizeof(*t->init_containers));
	t->ninit_containers = 1;
	t->init_containers[0].name = xstrdup("init");
	spec_res("cpu=4", &t->init_containers[0].requests);
	spec_res("cpu=500m", &t->overhead);
	put_wl(w, "q");
	settle();
	r = expect_admitted("lim", "q");
	expect_usage(r, "main", "cpu", CPU(4));
	expect_usage(r, "main", "memory", GI(2));
	r = expect_admitted("init", "q");
	/* max(1, 4) + 0.5 per pod, 3 pods */
	expect_usage(r, "main", "cpu", 13500);
	expect_cq_usage("q", "default", "cpu", 17500, 0);
	fx_end();
}
END_TEST

/* reclaimablePods of an admitted workload shrink its usage (§2.3). */
START_TEST(reclaimable_pods_release)
{
	struct workload *w;
	struct wlent *e;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	put_wl(mk_held("h", "q", "default", 4, "cpu=1", true), "q");
	expect_cq_usage("q", "default", "cpu", CPU(4), 0);
	put_wl(mk_wl("p", 0, T0, 1, "cpu=2"), "q");
	settle();
	expect_pending("p", PS_MAIN "insufficient unused quota for cpu in "
		       "flavor default, 2 more needed");
	w = wl_copy_latest("h", &e);
	w->reclaimable = xcalloc(1, sizeof(*w->reclaimable));
	w->nreclaimable = 1;
	w->reclaimable[0].name = xstrdup("main");
	w->reclaimable[0].count = 2;
	put_wl_lq(w, e->cq, e->lq);
	expect_cq_usage("q", "default", "cpu", CPU(2), 0);
	settle();
	expect_admitted("p", "q");
	expect_cq_usage("q", "default", "cpu", CPU(4), 0);
	fx_end();
}
END_TEST

/* A holder whose reservation is released (evicted, QuotaReserved=False,
 * no admission) is pending again and its quota is free. */
START_TEST(evicted_back_to_pending)
{
	struct workload *w;
	struct wlent *e;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	put_wl(mk_held("h", "q", "default", 1, "cpu=3", true), "q");
	put_wl(mk_wl("p", 0, T0 - 10 * SEC, 1, "cpu=2"), "q");
	settle();
	expect_pending("p", NULL);
	/* Evicted but still reserving: counts. */
	w = wl_copy_latest("h", &e);
	conditions_set(&w->conds, "Evicted", COND_TRUE, "Preempted", "x", 1,
		       F.now);
	put_wl_lq(w, e->cq, e->lq);
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	ck_assert(sched_wl_holds_quota(F.s, "ns", "h"));
	/* Released: pending again; h is older than p, so it goes first
	 * and p still waits. */
	w = wl_copy_latest("h", &e);
	w->has_admission = false;
	admission_release(&w->admission);
	conditions_set(&w->conds, "QuotaReserved", COND_FALSE, "Pending",
		       "Preempted", 1, F.now);
	conditions_remove(&w->conds, "Admitted");
	put_wl_lq(w, e->cq, e->lq);
	ck_assert(!sched_wl_holds_quota(F.s, "ns", "h"));
	expect_cq_usage("q", "default", "cpu", 0, 0);
	ck_assert_int_eq(cq_status("q").pending, 2);
	settle();
	expect_admitted("h", "q");
	expect_not_admitted("p");
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	fx_end();
}
END_TEST

/* Queue-order timestamp (§1.2): a PodsReadyTimeout (or AdmissionCheck)
 * eviction moves a workload behind younger ones of its priority; a
 * preemption keeps its creation time. */
START_TEST(eviction_time_ordering)
{
	static const char *const expect[] = { "pre", "young", "prt", "ac" };
	struct sched_opts o;
	struct workload *w;

	sched_opts_default(&o);
	o.max_rounds = 1;
	fx_begin_opts(&o);
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=10");
	w = mk_wl("prt", 0, T0 - 100 * SEC, 1, "cpu=1");
	conditions_set(&w->conds, "Evicted", COND_TRUE, "PodsReadyTimeout",
		       "Exceeded the PodsReady timeout ns/prt", 1,
		       T0 - 20 * SEC);
	put_wl(w, "q");
	w = mk_wl("ac", 0, T0 - 90 * SEC, 1, "cpu=1");
	conditions_set(&w->conds, "Evicted", COND_TRUE, "AdmissionCheck",
		       "At least one admission check is false", 1,
		       T0 - 10 * SEC);
	put_wl(w, "q");
	w = mk_wl("pre", 0, T0 - 80 * SEC, 1, "cpu=1");
	conditions_set(&w->conds, "Evicted", COND_TRUE, "Preempted", "x", 1,
		       T0 - 5 * SEC);
	put_wl(w, "q");
	put_wl(mk_wl("young", 0, T0 - 30 * SEC, 1, "cpu=1"), "q");
	for (size_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(cycle(), 1);
		ck_assert_msg(!strcmp(F.d.v[0].wl->meta.name, expect[i]),
			      "admission %zu: got %s, expected %s", i,
			      F.d.v[0].wl->meta.name, expect[i]);
	}
	fx_end();
}
END_TEST

/* Setting a parked workload again unchanged keeps it parked; a spec
 * change (new generation) makes it eligible again (§1.3 PushOrUpdate). */
START_TEST(parked_update)
{
	struct workload *w;
	struct wlent *e;
	size_t n0;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	put_wl(mk_wl("w", 0, T0, 1, "cpu=5"), "q");
	settle();
	expect_pending("w", NULL);
	ck_assert_int_eq(cq_status("q").pending_inadmissible, 1);
	w = wl_copy_latest("w", &e);
	put_wl_lq(w, e->cq, e->lq);
	ck_assert_int_eq(cq_status("q").pending_inadmissible, 1);
	n0 = F.nlog;
	cycle();
	ck_assert_uint_eq(F.nlog, n0);

	w = wl_copy_latest("w", &e);
	w->meta.generation = 2;
	reslist_set(&w->pod_sets[0].tmpl.containers[0].requests, "cpu",
		    CPU(3));
	put_wl_lq(w, e->cq, e->lq);
	ck_assert_int_eq(cq_status("q").pending_inadmissible, 0);
	settle();
	{
		const struct rec *r = expect_admitted("w", "q");

		expect_usage(r, "main", "cpu", CPU(3));
	}
	fx_end();
}
END_TEST

/* Workloads are keyed by namespace/name. */
START_TEST(same_name_two_namespaces)
{
	struct workload *w1, *w2, *f;

	fx_begin();
	add_flavor("default");
	add_cq("q", NULL, "default:cpu=4");
	w1 = mk_wl_ns("ns1", "w", 0, T0 - 2 * SEC, 1, "cpu=1");
	w2 = mk_wl_ns("ns2", "w", 0, T0 - SEC, 1, "cpu=2");
	put_wl_lq(w1, "q", "ns1/lq");
	put_wl_lq(w2, "q", "ns2/lq");
	ck_assert_int_eq(cq_status("q").pending, 2);
	ck_assert_uint_eq(cycle(), 2);
	ck_assert(sched_wl_holds_quota(F.s, "ns1", "w"));
	ck_assert(sched_wl_holds_quota(F.s, "ns2", "w"));
	expect_cq_usage("q", "default", "cpu", CPU(3), 0);
	ck_assert_int_eq(lq_status("ns1/lq").reserving, 1);
	ck_assert_int_eq(lq_status("ns2/lq").reserving, 1);
	f = pool_wl();
	workload_copy(f, w2);
	conditions_set(&f->conds, "Finished", COND_TRUE, "Succeeded", "x", 1,
		       F.now);
	put_wl_lq(f, "q", "ns2/lq");
	ck_assert(sched_wl_holds_quota(F.s, "ns1", "w"));
	ck_assert(!sched_wl_holds_quota(F.s, "ns2", "w"));
	expect_cq_usage("q", "default", "cpu", CPU(1), 0);
	sched_wl_remove(F.s, "ns2", "w");
	CHECK();
	ck_assert(sched_wl_holds_quota(F.s, "ns1", "w"));
	sched_wl_forget(F.s, "ns1", "w");
	CHECK();
	ck_assert(!sched_wl_holds_quota(F.s, "ns1", "w"));
	expect_cq_usage("q", "default", "cpu", 0, 0);
	fx_end();
}
END_TEST

/* Removing a namespace drops its labels. Unknown queues report no
 * usage. */
START_TEST(namespace_remove)
{
	struct cluster_queue *cq;
	struct flavor_usage *u = NULL;
	const char *team_a[1] = { "a" };
	size_t n = 7;

	fx_begin();
	add_flavor("default");
	cq = mk_cq("q", NULL, "default:cpu=4");
	label_selector_add(&cq->ns_selector, "team", SEL_IN, team_a, 1);
	put_cq(cq);
	ns_labels("ns", "team", "a");
	sched_namespace_remove(F.s, "ns");
	CHECK();
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "q");
	settle();
	expect_pending("w", "Workload namespace doesn't match ClusterQueue "
		       "selector");
	sched_cq_usage(F.s, "nope", false, &u, &n);
	ck_assert_uint_eq(n, 0);
	flavor_usages_release(u, n);
	fx_end();
}
END_TEST

/* Usage goes to status.admission.clusterQueue, not to the queue its
 * LocalQueue points at now. */
START_TEST(held_usage_follows_admission)
{
	fx_begin();
	add_flavor("default");
	add_cq("a", NULL, "default:cpu=4");
	add_cq("b", NULL, "default:cpu=4");
	put_wl(mk_held("h", "a", "default", 1, "cpu=3", true), "b");
	expect_cq_usage("a", "default", "cpu", CPU(3), 0);
	expect_cq_usage("b", "default", "cpu", 0, 0);
	ck_assert_int_eq(cq_status("a").reserving, 1);
	ck_assert_int_eq(cq_status("b").reserving, 0);
	put_wl(mk_wl("pa", 0, T0, 1, "cpu=2"), "a");
	put_wl(mk_wl("pb", 0, T0, 1, "cpu=4"), "b");
	settle();
	expect_pending("pa", NULL);
	expect_admitted("pb", "b");
	wl_finish("h");
	settle();
	expect_admitted("pa", "a");
	fx_end();
}
END_TEST

/* Spec changes never lose held usage: a quota cut below usage admits
 * nothing more; a flavor dropped from the spec and added back shows its
 * usage again. */
START_TEST(cq_spec_change_keeps_usage)
{
	struct flavor_usage *u = NULL;
	size_t n = 0;

	fx_begin();
	add_flavor("f1");
	add_flavor("f2");
	add_cq("q", NULL, "f1:cpu=4 f2:cpu=4");
	put_wl(mk_held("h1", "q", "f1", 1, "cpu=3", true), "q");
	put_wl(mk_held("h2", "q", "f2", 1, "cpu=2", true), "q");
	add_cq("q", NULL, "f1:cpu=2 f2:cpu=4");
	expect_cq_usage("q", "f1", "cpu", CPU(3), 0);
	put_wl(mk_wl("w", 0, T0, 1, "cpu=1"), "q");
	add_cq("q", NULL, "f1:cpu=2");
	sched_cq_usage(F.s, "q", false, &u, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(u[0].name, "f1");
	flavor_usages_release(u, n);
	settle();
	expect_not_admitted("w");
	add_cq("q", NULL, "f1:cpu=2 f2:cpu=4");
	expect_cq_usage("q", "f2", "cpu", CPU(2), 0);
	expect_cq_usage("q", "f1", "cpu", CPU(3), 0);
	settle();
	{
		const struct rec *r = expect_admitted("w", "q");

		expect_flavor(r, "main", "cpu", "f2");
	}
	fx_end();
}
END_TEST

/* Changing a flavor's labels or taints is a requeue event. */
START_TEST(flavor_change_requeues)
{
	struct resource_flavor *rf;
	struct workload *w;

	fx_begin();
	rf = mk_flavor("gpu");
	smap_set(&rf->node_labels, "arch", "amd64");
	flavor_taint(rf, "gpu", "true", EFFECT_NO_SCHEDULE);
	put_flavor(rf);
	add_cq("q", NULL, "gpu:cpu=4");
	w = mk_wl("w", 0, T0, 1, "cpu=1");
	smap_set(&w->pod_sets[0].tmpl.node_selector, "arch", "arm64");
	put_wl(w, "q");
	settle();
	expect_pending("w", PS_MAIN "untolerated taint {gpu true NoSchedule "
		       "<nil>} in flavor gpu");
	rf = mk_flavor("gpu");
	smap_set(&rf->node_labels, "arch", "amd64");
	put_flavor(rf);
	settle();
	expect_pending("w", PS_MAIN "flavor gpu doesn't match node affinity");
	rf = mk_flavor("gpu");
	smap_set(&rf->node_labels, "arch", "arm64");
	put_flavor(rf);
	settle();
	expect_admitted("w", "q");
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */
/* randomized: never over-admitted, usage = sum of live admissions */

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	rng_state = rng_state * UINT64_C(6364136223846793005) +
		    UINT64_C(1442695040888963407);
	return (uint32_t)(rng_state >> 33) % n;
}

struct live {
	char name[16];
	size_t rec;    /* index of its admit record in F.log */
	bool alive;
};

/* Sum over live admissions of (cq, flavor, cpu). */
static int64_t live_usage(const struct live *l, size_t n, const char *cq,
			  const char *flavor)
{
	int64_t sum = 0;

	for (size_t i = 0; i < n; i++) {
		const struct rec *r = &F.log[l[i].rec];

		if (!l[i].alive || strcmp(r->cq, cq) != 0)
			continue;
		for (size_t j = 0; j < r->adm.npsa; j++) {
			const char *f = smap_get(&r->adm.psa[j].flavors,
						 "cpu");

			if (f && !strcmp(f, flavor))
				sum += reslist_get(&r->adm.psa[j].usage, "cpu");
		}
	}
	return sum;
}

START_TEST(random_no_overadmission)
{
	static const char *const cqs[4] = { "q0", "q1", "q2", "q3" };
	static const char *const fls[2] = { "f1", "f2" };
	struct live *live = NULL;
	size_t nlive = 0, cap = 0;
	unsigned nwl = 0;

	rng_state = (uint64_t)_i * 7919 + 1;
	fx_begin();
	add_flavor("f1");
	add_flavor("f2");
	add_cq("q0", "co", "f1:cpu=8/4 f2:cpu=4");
	add_cq("q1", "co", "f1:cpu=6/-/3 f2:cpu=6");
	add_cq("q2", "co", "f1:cpu=0 f2:cpu=2/2");
	add_cq("q3", NULL, "f1:cpu=5");
	for (int step = 0; step < 150; step++) {
		uint32_t op = rnd(10);
		size_t start;
		int64_t u[4][2], b;

		if (op < 5) {
			char name[16], req[32];
			struct workload *w;

			snprintf(name, sizeof(name), "r%u", nwl++);
			snprintf(req, sizeof(req), "cpu=%u", 1 + rnd(5));
			w = mk_wl(name, (int32_t)rnd(3),
				  T0 - (int64_t)(1000 - step) * SEC,
				  (int32_t)(1 + rnd(2)), req);
			put_wl(w, cqs[rnd(4)]);
		} else if (op < 8 && nlive > 0) {
			size_t k = rnd((uint32_t)nlive);

			if (live[k].alive) {
				wl_finish(live[k].name);
				live[k].alive = false;
			}
		} else if (nlive > 0) {
			size_t k = rnd((uint32_t)nlive);

			if (live[k].alive && rnd(2))
				confirm(live[k].name, rnd(2));
		}
		start = F.nlog;
		cycle();
		for (size_t i = start; i < F.nlog; i++) {
			if (F.log[i].kind != DEC_ADMIT)
				continue;
			for (size_t k = 0; k < nlive; k++)
				ck_assert_msg(!live[k].alive ||
					      strcmp(live[k].name,
						     F.log[i].wl) != 0,
					      "%s admitted twice", F.log[i].wl);
			XGROW(live, cap, nlive + 1);
			snprintf(live[nlive].name, sizeof(live[0].name), "%s",
				 F.log[i].wl);
			live[nlive].rec = i;
			live[nlive].alive = true;
			nlive++;
		}
		for (int c = 0; c < 4; c++)
			for (int f = 0; f < 2; f++) {
				u[c][f] = 0;
				if (c == 3 && f == 1)
					continue;
				cq_fr(cqs[c], false, fls[f], "cpu", &u[c][f],
				      &b);
				ck_assert_msg(u[c][f] ==
					      live_usage(live, nlive, cqs[c],
							 fls[f]),
					      "step %d: %s/%s usage %" PRId64
					      " != live admissions %" PRId64,
					      step, cqs[c], fls[f], u[c][f],
					      live_usage(live, nlive, cqs[c],
							 fls[f]));
			}
		/* Limits: own nominal + borrowingLimit, cohort totals, and
		 * q1's 3 exclusive f1 never used by the others. */
		ck_assert_int_le(u[0][0], CPU(12));
		ck_assert_int_le(u[2][1], CPU(4));
		ck_assert_int_le(u[3][0], CPU(5));
		ck_assert_int_le(u[0][0] + u[1][0] + u[2][0], CPU(14));
		ck_assert_int_le(u[0][1] + u[1][1] + u[2][1], CPU(12));
		ck_assert_int_le(u[0][0] + u[2][0], CPU(11));
	}
	/* Everything finishes: all usage returns to zero. */
	for (size_t k = 0; k < nlive; k++)
		if (live[k].alive) {
			wl_finish(live[k].name);
			live[k].alive = false;
		}
	for (int c = 0; c < 3; c++)
		for (int f = 0; f < 2; f++)
			expect_cq_usage(cqs[c], fls[f], "cpu", 0, 0);
	free(live);
	fx_end();
}
END_TEST

/*
 * Randomized over a two-level tree with lending and borrowing limits,
 * against an independent re-derivation of §3: from the live admissions
 * alone, bottom-up Usage(n) = Σ children max(0, Usage(c) - local(c));
 * then the root never exceeds its subtree quota and no node with a
 * borrowingLimit exceeds subtree + limit. Forget and remove included.
 */
struct tnode {
	const char *name;
	int parent;      /* index or -1 */
	bool cq;
	int64_t nominal; /* whole cpus */
	int64_t bl, ll;  /* -1 = unset */
};

static const struct tnode tree_nodes[] = {
	{ "root", -1, false, 2, -1, -1 },
	{ "mid1", 0, false, 0, 4, 3 },
	{ "mid2", 0, false, 4, -1, -1 },
	{ "q0", 1, true, 6, -1, 2 },
	{ "q1", 1, true, 2, 3, -1 },
	{ "q2", 2, true, 0, -1, -1 },
	{ "q3", 2, true, 5, 2, 1 },
	{ "q4", 0, true, 3, 0, -1 },
	{ "q5", -1, true, 4, -1, -1 },
};
#define NNODES (sizeof(tree_nodes) / sizeof(tree_nodes[0]))

static char *quota_text(const struct tnode *n)
{
	char b[16], l[16];

	snprintf(b, sizeof(b), "%" PRId64, n->bl);
	snprintf(l, sizeof(l), "%" PRId64, n->ll);
	return xasprintf("default:cpu=%" PRId64 "/%s/%s", n->nominal,
			 n->bl < 0 ? "-" : b, n->ll < 0 ? "-" : l);
}

static void tree_oracle(const struct live *l, size_t nl, int step)
{
	int64_t subtree[NNODES], local[NNODES], usage[NNODES];

	/* Children come after parents in the table: walk it backwards. */
	for (size_t i = 0; i < NNODES; i++) {
		subtree[i] = CPU(tree_nodes[i].nominal);
		usage[i] = tree_nodes[i].cq ?
			   live_usage(l, nl, tree_nodes[i].name, "default") :
			   0;
	}
	for (size_t i = NNODES; i-- > 0;) {
		const struct tnode *n = &tree_nodes[i];

		local[i] = n->ll < 0 ? 0 : subtree[i] - CPU(n->ll);
		if (local[i] < 0)
			local[i] = 0;
		if (n->parent >= 0) {
			subtree[n->parent] += subtree[i] - local[i];
			if (usage[i] > local[i])
				usage[n->parent] += usage[i] - local[i];
		}
	}
	for (size_t i = 0; i < NNODES; i++) {
		const struct tnode *n = &tree_nodes[i];

		if (n->parent < 0)
			ck_assert_msg(usage[i] <= subtree[i],
				      "step %d: %s usage %" PRId64
				      " > subtree quota %" PRId64, step,
				      n->name, usage[i], subtree[i]);
		if (n->bl >= 0)
			ck_assert_msg(usage[i] <= subtree[i] + CPU(n->bl),
				      "step %d: %s usage %" PRId64
				      " > subtree %" PRId64 " + limit %" PRId64,
				      step, n->name, usage[i], subtree[i],
				      CPU(n->bl));
		if (n->cq) {
			int64_t t = -1, b = -1, exp_b;

			cq_fr(n->name, false, "default", "cpu", &t, &b);
			ck_assert_msg(t == usage[i], "step %d: %s usage %"
				      PRId64 " != live admissions %" PRId64,
				      step, n->name, t, usage[i]);
			exp_b = n->parent < 0 || t <= CPU(n->nominal) ? 0 :
				t - CPU(n->nominal);
			ck_assert_msg(b == exp_b, "step %d: %s borrowed %"
				      PRId64 ", expected %" PRId64, step,
				      n->name, b, exp_b);
		}
	}
}

START_TEST(random_tree_oracle)
{
	struct live *live = NULL;
	size_t nlive = 0, cap = 0;
	unsigned nwl = 0;
	size_t admitted = 0;

	rng_state = (uint64_t)_i * 104729 + 17;
	fx_begin();
	add_flavor("default");
	for (size_t i = 0; i < NNODES; i++) {
		const struct tnode *n = &tree_nodes[i];
		char *q = quota_text(n);

		if (n->cq)
			add_cq(n->name, n->parent < 0 ? NULL :
			       tree_nodes[n->parent].name, q);
		else
			put_cohort(mk_cohort(n->name, n->parent < 0 ? NULL :
					     tree_nodes[n->parent].name, q));
		free(q);
	}
	for (int step = 0; step < 200; step++) {
		uint32_t op = rnd(20);
		size_t start;

		if (op < 9) {
			char name[16], req[32];
			struct workload *w;
			int32_t count = (int32_t)(1 + rnd(3));

			snprintf(name, sizeof(name), "t%u", nwl++);
			snprintf(req, sizeof(req), "cpu=%u", 1 + rnd(4));
			w = mk_wl(name, (int32_t)rnd(3),
				  T0 - (int64_t)(1000 - step) * SEC, count,
				  req);
			if (count > 1 && rnd(3) == 0) {
				w->pod_sets[0].has_min_count = true;
				w->pod_sets[0].min_count = 1;
			}
			put_wl(w, tree_nodes[3 + rnd(NNODES - 3)].name);
		} else if (op < 14 && nlive > 0) {
			size_t k = rnd((uint32_t)nlive);

			if (live[k].alive) {
				wl_finish(live[k].name);
				live[k].alive = false;
			}
		} else if (op < 16 && nlive > 0) {
			/* The last admission's write failed. */
			size_t k = nlive - 1;

			if (live[k].alive &&
			    last_admit(live[k].name)->cycle == F.ncycles &&
			    sched_wl_holds_quota(F.s, "ns", live[k].name)) {
				sched_wl_forget(F.s, "ns", live[k].name);
				CHECK();
				live[k].alive = false;
			}
		} else if (op < 18 && nlive > 0) {
			size_t k = rnd((uint32_t)nlive);

			if (live[k].alive)
				confirm(live[k].name, rnd(2));
		} else if (nwl > 0) {
			char name[16];

			snprintf(name, sizeof(name), "t%u", rnd(nwl));
			if (!sched_wl_holds_quota(F.s, "ns", name)) {
				sched_wl_remove(F.s, "ns", name);
				CHECK();
			}
		}
		start = F.nlog;
		cycle();
		for (size_t i = start; i < F.nlog; i++) {
			if (F.log[i].kind != DEC_ADMIT)
				continue;
			for (size_t k = 0; k < nlive; k++)
				ck_assert_msg(!live[k].alive ||
					      strcmp(live[k].name,
						     F.log[i].wl) != 0,
					      "%s admitted twice", F.log[i].wl);
			XGROW(live, cap, nlive + 1);
			snprintf(live[nlive].name, sizeof(live[0].name), "%s",
				 F.log[i].wl);
			live[nlive].rec = i;
			live[nlive].alive = true;
			nlive++;
			admitted++;
		}
		tree_oracle(live, nlive, step);
	}
	ck_assert_uint_gt(admitted, 20); /* the scenario did something */
	free(live);
	fx_end();
}
END_TEST

/* ------------------------------------------------------------------ */

/* Generous timeouts: sanitizers on a busy shared machine. */
/* ------------------------------------------------------------------ */
/* Admission fair sharing (kueue-api.md §3.1 admissionScope, §13
 * admissionFairSharing; Kueue's KEP 4136): inside a
 * UsageBasedAdmissionFairSharing ClusterQueue the LocalQueue with the
 * lower decayed usage over its weight goes first, before priority and
 * queue time. Half life 10 min, sampling 1 min: a = 1 - 0.5^(1/10). */

#define AFS_HALF (10 * 60 * SEC)
#define AFS_SAMPLE (60 * SEC)

static void afs_begin_w(bool afs_mode, int64_t half_life, double cpu_weight)
{
	static const char *const res[] = { "cpu" };
	double w[] = { cpu_weight };
	struct sched_opts o;
	struct cluster_queue *cq;

	sched_opts_default(&o);
	o.afs = true;
	o.afs_half_life_ms = half_life;
	o.afs_sampling_ms = AFS_SAMPLE;
	if (cpu_weight != 1) {
		o.afs_res = res;
		o.afs_w = w;
		o.nafs_w = 1;
	}
	fx_begin_opts(&o);
	add_flavor("default");
	cq = mk_cq("a", NULL, "default:cpu=1");
	if (afs_mode)
		cq->admission_mode = AM_USAGE_BASED_FAIR_SHARING;
	put_cq(cq);
	sched_lq_set_fs(F.s, "ns/heavy", "a", 1000);
	sched_lq_set_fs(F.s, "ns/light", "a", 1000);
	CHECK();
}

static void afs_begin(bool afs_mode, int64_t half_life)
{
	afs_begin_w(afs_mode, half_life, 1);
}

/* consumedResources cpu of a LocalQueue's status, milli-units. */
static int64_t afs_cpu(const char *lq, int64_t *last)
{
	struct reslist r;
	int64_t v = -1;

	reslist_init(&r);
	ck_assert(sched_lq_afs_status(F.s, lq, &r, last));
	for (size_t i = 0; i < r.n; i++)
		if (!strcmp(r.v[i].name, "cpu"))
			v = r.v[i].milli;
	reslist_release(&r);
	return v < 0 ? 0 : v;
}

static void afs_seed(const char *lq, const char *consumed)
{
	struct reslist r;

	reslist_init(&r);
	spec_res(consumed, &r);
	sched_lq_afs_seed(F.s, lq, &r, F.now);
	reslist_release(&r);
	CHECK();
}

/* heavy's older workload waits for light's newer one: heavy has used
 * more; without the admission mode the queue order is the usual one. */
START_TEST(afs_lower_usage_first)
{
	bool mode = _i == 0;

	afs_begin(mode, AFS_HALF);
	afs_seed("ns/heavy", "cpu=4");
	put_wl_lq(mk_wl("h1", 0, T0 - 100 * SEC, 1, "cpu=1"), "a",
		  "ns/heavy");
	put_wl_lq(mk_wl("l1", 0, T0 - 10 * SEC, 1, "cpu=1"), "a",
		  "ns/light");
	cycle();
	if (mode) {
		expect_admitted("l1", "a");
		expect_not_admitted("h1");
		ck_assert(sched_lq_afs_usage(F.s, "ns/heavy") > 3.9);
	} else {
		expect_admitted("h1", "a");
		expect_not_admitted("l1");
	}
	fx_end();
}
END_TEST

/* The LocalQueue weight divides the usage: heavy (4 cpu of history,
 * weight 8) goes before light (1 cpu, weight 1); and priority does not
 * beat usage. */
START_TEST(afs_weight_scales_usage)
{
	afs_begin(true, AFS_HALF);
	afs_seed("ns/heavy", "cpu=4");
	afs_seed("ns/light", "cpu=1");
	sched_lq_set_fs(F.s, "ns/heavy", "a", 8000);
	put_wl_lq(mk_wl("l1", 100, T0 - 100 * SEC, 1, "cpu=1"), "a",
		  "ns/light");
	put_wl_lq(mk_wl("h1", 0, T0 - 10 * SEC, 1, "cpu=1"), "a",
		  "ns/heavy");
	cycle();
	expect_admitted("h1", "a");
	expect_not_admitted("l1");
	fx_end();
}
END_TEST

/* No history yet: the first admission's entry penalty puts its
 * LocalQueue behind the other at once, within the same call. */
START_TEST(afs_entry_penalty)
{
	struct cluster_queue *cq;

	afs_begin(true, AFS_HALF);
	cq = mk_cq("a", NULL, "default:cpu=2");
	cq->admission_mode = AM_USAGE_BASED_FAIR_SHARING;
	put_cq(cq);
	put_wl_lq(mk_wl("h1", 0, T0 - 300 * SEC, 1, "cpu=1"), "a",
		  "ns/heavy");
	put_wl_lq(mk_wl("h2", 0, T0 - 200 * SEC, 1, "cpu=1"), "a",
		  "ns/heavy");
	put_wl_lq(mk_wl("l1", 0, T0 - 100 * SEC, 1, "cpu=1"), "a",
		  "ns/light");
	settle();
	expect_admitted("h1", "a");
	expect_admitted("l1", "a");
	expect_not_admitted("h2");
	/* the penalty: 1 cpu x a(1 min), before anything is sampled */
	ck_assert(fabs(sched_lq_afs_usage(F.s, "ns/heavy") -
		       (1 - pow(0.5, 0.1))) < 1e-6);
	fx_end();
}
END_TEST

/* Settlement and sampling: admitted usage decays into the history,
 * which the status reports with its lastUpdate. */
START_TEST(afs_sample_decays)
{
	double a = 1 - pow(0.5, 0.1);
	int64_t last = 0, v;

	afs_begin(true, AFS_HALF);
	put_wl_lq(mk_wl("h1", 0, T0 - 100 * SEC, 1, "cpu=1"), "a",
		  "ns/heavy");
	cycle();
	expect_admitted("h1", "a");
	/* seen admitted: the penalty (1000 a milli-cpu) becomes history */
	confirm("h1", true);
	v = afs_cpu("ns/heavy", &last);
	ck_assert_int_eq(v, llround(1000 * a));
	/* a minute later the admitted cpu is sampled in */
	sched_afs_sample(F.s, T0 + AFS_SAMPLE);
	v = afs_cpu("ns/heavy", &last);
	ck_assert_int_eq(v, llround(1000 * a * (1 - a) + 1000 * a));
	ck_assert_int_eq(last, T0 + AFS_SAMPLE);
	/* finished: the history only decays from now on */
	F.now = T0 + AFS_SAMPLE;
	wl_finish("h1");
	sched_afs_sample(F.s, T0 + 2 * AFS_SAMPLE);
	ck_assert_int_eq(afs_cpu("ns/heavy", &last),
			 llround((1000 * a * (1 - a) + 1000 * a) * (1 - a)));
	/* light has no history: its status says 0 */
	ck_assert_int_eq(afs_cpu("ns/light", &last), 0);
	fx_end();
}
END_TEST

/* usageHalfLifeTime 0: no history and no penalty; usual order. */
START_TEST(afs_no_half_life)
{
	int64_t last;

	afs_begin(true, 0);
	afs_seed("ns/heavy", "cpu=4");
	sched_afs_sample(F.s, T0);
	ck_assert_int_eq(afs_cpu("ns/heavy", &last), 0);
	put_wl_lq(mk_wl("h1", 0, T0 - 100 * SEC, 1, "cpu=1"), "a",
		  "ns/heavy");
	put_wl_lq(mk_wl("l1", 0, T0 - 10 * SEC, 1, "cpu=1"), "a",
		  "ns/light");
	cycle();
	expect_admitted("h1", "a");
	fx_end();
}
END_TEST

/* A restarted manager reads the history back once; later status echoes
 * do not add it again; a LocalQueue without workloads keeps it. */
START_TEST(afs_seed_once)
{
	int64_t last;

	afs_begin(true, AFS_HALF);
	afs_seed("ns/heavy", "cpu=3");
	afs_seed("ns/heavy", "cpu=3");
	ck_assert_int_eq(afs_cpu("ns/heavy", &last), 3000);
	sched_afs_sample(F.s, T0 + AFS_SAMPLE);
	ck_assert_int_eq(afs_cpu("ns/heavy", &last),
			 llround(3000 * pow(0.5, 0.1)));
	/* the LocalQueue object goes: its record with it */
	sched_lq_set_fs(F.s, "ns/heavy", NULL, 1000);
	CHECK();
	fx_end();
}
END_TEST


/* Preemption inside such a queue takes from the LocalQueue that used
 * more first, before priority and admission time (§4.2 rule 3): h1 is
 * older than l1, which the classical order would take. */
START_TEST(afs_preempt_heavier_lq_first)
{
	struct cluster_queue *cq;

	afs_begin(true, AFS_HALF);
	cq = mk_cq("a", NULL, "default:cpu=2");
	cq->admission_mode = AM_USAGE_BASED_FAIR_SHARING;
	cq->within_cq = WCQ_LOWER_PRIORITY;
	put_cq(cq);
	afs_seed("ns/heavy", "cpu=4");
	put_wl_lq(mk_wl("h1", 0, T0 - 100 * SEC, 1, "cpu=1"), "a",
		  "ns/heavy");
	cycle();
	confirm("h1", true);
	F.now += 10 * SEC;
	put_wl_lq(mk_wl("l1", 0, T0 - 50 * SEC, 1, "cpu=1"), "a",
		  "ns/light");
	cycle();
	confirm("l1", true);
	F.now += 10 * SEC;
	put_wl_lq(mk_wl("p", 10, T0, 1, "cpu=1"), "a", "ns/light");
	cycle();
	ck_assert_uint_eq(count_kind("h1", DEC_PREEMPT), 1);
	ck_assert_uint_eq(count_kind("l1", DEC_PREEMPT), 0);
	fx_end();
}
END_TEST


/* resourceWeights: usage is the weighted sum over resources; with cpu
 * weighted 0, heavy's cpu history no longer counts (the usual order),
 * with cpu weighted 0.1 it still does. */
START_TEST(afs_resource_weights)
{
	afs_begin_w(true, AFS_HALF, _i ? 0.1 : 0);
	afs_seed("ns/heavy", "cpu=4");
	ck_assert(fabs(sched_lq_afs_usage(F.s, "ns/heavy") -
		       (_i ? 0.4 : 0)) < 1e-9);
	put_wl_lq(mk_wl("h1", 0, T0 - 100 * SEC, 1, "cpu=1"), "a",
		  "ns/heavy");
	put_wl_lq(mk_wl("l1", 0, T0 - 10 * SEC, 1, "cpu=1"), "a",
		  "ns/light");
	cycle();
	expect_admitted(_i ? "l1" : "h1", "a");
	fx_end();
}
END_TEST

static TCase *new_tcase(const char *name)
{
	TCase *tc = tcase_create(name);

	tcase_set_timeout(tc, 60);
	return tc;
}

Suite *sched_suite(void)
{
	Suite *s = suite_create("sched");
	TCase *tc;


	tc = new_tcase("api");
	tcase_add_test(tc, opts_defaults);
	tcase_add_test(tc, empty_state);
	tcase_add_loop_test(tc, parked_split, 0, 2);
	suite_add_tcase(s, tc);

	tc = new_tcase("borrowing");
	tcase_add_test(tc, borrow_within_limit);
	tcase_add_test(tc, dra_devices_per_pod);
	tcase_add_test(tc, borrow_limit_is_max_capacity);
	tcase_add_test(tc, fungibility_borrow);
	tcase_add_test(tc, quota_fallback_next_flavor);
	suite_add_tcase(s, tc);

	tc = new_tcase("lending");
	tcase_add_test(tc, lending_flat);
	tcase_add_test(tc, lending_two_levels);
	suite_add_tcase(s, tc);

	tc = new_tcase("cohorts");
	tcase_add_test(tc, cohort_borrowing_limit);
	tcase_add_test(tc, cohort_own_quota_and_removal);
	tcase_add_test(tc, no_candidates_reserves_in_cycle);
	suite_add_tcase(s, tc);

	tc = new_tcase("admission_fair_sharing");
	tcase_add_loop_test(tc, afs_lower_usage_first, 0, 2);
	tcase_add_test(tc, afs_weight_scales_usage);
	tcase_add_test(tc, afs_entry_penalty);
	tcase_add_test(tc, afs_sample_decays);
	tcase_add_test(tc, afs_no_half_life);
	tcase_add_test(tc, afs_seed_once);
	tcase_add_test(tc, afs_preempt_heavier_lq_first);
	tcase_add_loop_test(tc, afs_resource_weights, 0, 2);
	suite_add_tcase(s, tc);

	tc = new_tcase("lifecycle");
	tcase_add_test(tc, wl_lifecycle);
	tcase_add_test(tc, priority_update_resorts);
	tcase_add_test(tc, cq_remove_and_return);
	tcase_add_test(tc, quota_change_requeues);
	tcase_add_test(tc, wl_moves_queues);
	tcase_add_test(tc, requeue_whole_cohort);
	tcase_add_test(tc, pod_requests_shape);
	tcase_add_test(tc, reclaimable_pods_release);
	tcase_add_test(tc, evicted_back_to_pending);
	tcase_add_test(tc, eviction_time_ordering);
	tcase_add_test(tc, parked_update);
	tcase_add_test(tc, same_name_two_namespaces);
	tcase_add_test(tc, held_usage_follows_admission);
	tcase_add_test(tc, flavor_change_requeues);
	tcase_add_test(tc, cq_spec_change_keeps_usage);
	suite_add_tcase(s, tc);

	tc = new_tcase("queueing-strategy");
	tcase_add_test(tc, fifo_strict_blocks);
	tcase_add_test(tc, best_effort_skips);
	tcase_add_test(tc, best_effort_requeue_on_remove);
	suite_add_tcase(s, tc);

	tc = new_tcase("flavor-matching");
	tcase_add_test(tc, taint_skips_flavor);
	tcase_add_test(tc, taint_flavor_tolerations);
	tcase_add_test(tc, taint_nofit_message);
	tcase_add_test(tc, node_selector_picks_flavor);
	tcase_add_test(tc, node_affinity_picks_flavor);
	tcase_add_test(tc, node_affinity_nofit_message);
	tcase_add_test(tc, nofit_reasons_sorted);
	tcase_add_test(tc, multi_resource_groups);
	tcase_add_test(tc, podsets_split_flavors);
	tcase_add_test(tc, msg_across_flavors);
	suite_add_tcase(s, tc);

	tc = new_tcase("cycle");
	tcase_add_test(tc, in_cycle_reservation);
	tcase_add_test(tc, in_cycle_reservation_one_round);
	tcase_add_test(tc, in_cycle_reservation_priority);
	tcase_add_test(tc, in_cycle_non_borrowing_first);
	tcase_add_test(tc, rounds_unlimited);
	tcase_add_test(tc, rounds_one);
	tcase_add_test(tc, priority_order);
	tcase_add_loop_test(tc, random_no_overadmission, 0, 4);
	tcase_add_loop_test(tc, random_tree_oracle, 0, 6);
	suite_add_tcase(s, tc);

	tc = new_tcase("eviction");
	tcase_add_test(tc, evict_inactive_keeps_quota);
	tcase_add_test(tc, evict_deactivation_target);
	tcase_add_test(tc, block_admission_one_at_a_time);
	tcase_add_test(tc, block_admission_off);
	tcase_add_test(tc, requeue_timestamp_eviction);
	tcase_add_test(tc, requeue_timestamp_creation);
	tcase_add_test(tc, block_admission_nofit_still_reported);
	tcase_add_test(tc, evict_recheck_after_failed_write);
	tcase_add_test(tc, evict_hold_and_drain);
	tcase_add_test(tc, evict_local_queue_drain);
	suite_add_tcase(s, tc);

	tc = new_tcase("assume");
	tcase_add_test(tc, assume_confirm_forget);
	tcase_add_test(tc, preempt_not_admitted_same_call);
	tcase_add_test(tc, restart_rebuild);
	suite_add_tcase(s, tc);

	tc = new_tcase("inactive");
	tcase_add_test(tc, inactive_missing_flavor);
	tcase_add_test(tc, inactive_stopped);
	tcase_add_test(tc, inactive_topology_and_checks);
	tcase_add_test(tc, inactive_terminating);
	tcase_add_test(tc, inactive_invalid);
	tcase_add_test(tc, cohort_cycle);
	tcase_add_test(tc, namespace_mismatch);
	tcase_add_test(tc, namespace_mismatch_strict_parks);
	tcase_add_test(tc, namespace_remove);
	suite_add_tcase(s, tc);

	tc = new_tcase("partial-admission");
	tcase_add_test(tc, partial_reduces_count);
	tcase_add_test(tc, partial_floor);
	tcase_add_test(tc, partial_disabled);
	tcase_add_test(tc, partial_with_borrowing);
	tcase_add_test(tc, partial_with_pods);
	suite_add_tcase(s, tc);

	tc = new_tcase("nofit-messages");
	tcase_add_test(tc, msg_more_needed_units);
	tcase_add_test(tc, msg_previous_podsets);
	tcase_add_test(tc, msg_resource_unavailable);
	tcase_add_test(tc, msg_zero_undeclared);
	tcase_add_test(tc, ignore_undeclared);
	tcase_add_test(tc, pods_resource);
	suite_add_tcase(s, tc);

	tc = new_tcase("status");
	tcase_add_test(tc, take_dirty_once);
	tcase_add_test(tc, backoff_requeue_at);
	suite_add_tcase(s, tc);

	return s;
}
