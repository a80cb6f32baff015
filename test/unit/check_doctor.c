/*
 * check_doctor: each check of cli/doctor.h on plain structs (and, for
 * the ones that ask the scheduler, a sched fed the same structs): the
 * finding when the misconfiguration is there, none when it is not.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "cli/doctor.h"
#include "flavors/sched.h"
#include "model/objects.h"
#include "model/placement.h"
#include "model/resources.h"
#include "model/selector.h"
#include "suites.h"
#include "test/unit/quota_spec.h"

#define T0 INT64_C(1767225600000)
#define MAXN 16

/* One setup, everything owned here. */
struct dfx {
	struct resource_flavor rf[MAXN];
	const struct resource_flavor *rfp[MAXN];
	size_t nrf;
	struct cohort co[MAXN];
	const struct cohort *cop[MAXN];
	size_t nco;
	struct cluster_queue cq[MAXN];
	const struct cluster_queue *cqp[MAXN];
	const char *inv[MAXN];
	size_t ncq;
	struct smap nsl[MAXN];
	struct doctor_ns ns[MAXN];
	size_t nns;
	struct local_queue lq[MAXN];
	const struct local_queue *lqp[MAXN];
	size_t nlq;
	struct workload wl[MAXN];
	const struct workload *wlp[MAXN];
	size_t nwl;
	struct sched *s;
	struct doctor_report rep;
};

static struct dfx F;

static void fx_setup(void)
{
	memset(&F, 0, sizeof(F));
}

static void fx_teardown(void)
{
	sched_free(F.s);
	for (size_t i = 0; i < F.nrf; i++)
		resource_flavor_release(&F.rf[i]);
	for (size_t i = 0; i < F.nco; i++)
		cohort_release(&F.co[i]);
	for (size_t i = 0; i < F.ncq; i++)
		cluster_queue_release(&F.cq[i]);
	for (size_t i = 0; i < F.nns; i++)
		smap_release(&F.nsl[i]);
	for (size_t i = 0; i < F.nlq; i++)
		local_queue_release(&F.lq[i]);
	for (size_t i = 0; i < F.nwl; i++)
		workload_release(&F.wl[i]);
	doctor_report_release(&F.rep);
}

static struct resource_flavor *rf(const char *name)
{
	struct resource_flavor *r = &F.rf[F.nrf];

	r->meta.name = xstrdup(name);
	smap_init(&r->node_labels);
	F.rfp[F.nrf++] = r;
	return r;
}

static void rf_taint(struct resource_flavor *r, const char *key)
{
	r->taints = xcalloc(1, sizeof(*r->taints));
	r->ntaints = 1;
	r->taints[0].key = xstrdup(key);
	r->taints[0].value = xstrdup("");
	r->taints[0].effect = EFFECT_NO_SCHEDULE;
}

static struct toleration *tol(const char *key)
{
	struct toleration *t = xcalloc(1, sizeof(*t));

	t->key = xstrdup(key);
	t->op = TOL_EXISTS;
	t->value = xstrdup("");
	t->effect = EFFECT_ALL;
	return t;
}

static struct cohort *cohort(const char *name, const char *parent)
{
	struct cohort *c = &F.co[F.nco];

	c->meta.name = xstrdup(name);
	c->parent = xstrdup_or_null(parent);
	F.cop[F.nco++] = c;
	return c;
}

static struct cluster_queue *cq(const char *name, const char *cohort_name,
				const char *groups)
{
	struct cluster_queue *q = &F.cq[F.ncq];

	q->meta.name = xstrdup(name);
	q->meta.uid = xasprintf("uid-%s", name);
	q->meta.creation_ms = T0 - 3600000;
	q->version = API_V1BETA2;
	q->cohort = xstrdup_or_null(cohort_name);
	spec_groups(groups, &q->groups, &q->ngroups);
	q->has_ns_selector = true; /* {} */
	label_selector_init(&q->ns_selector);
	q->when_can_borrow = FUNG_MAY_STOP_SEARCH;
	q->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
	F.cqp[F.ncq++] = q;
	return q;
}

static void ns(const char *name, const char *key, const char *value)
{
	smap_init(&F.nsl[F.nns]);
	if (key)
		smap_set(&F.nsl[F.nns], key, value);
	F.ns[F.nns].name = name;
	F.ns[F.nns].labels = &F.nsl[F.nns];
	F.nns++;
}

static void lq(const char *nsname, const char *name, const char *cqname)
{
	struct local_queue *l = &F.lq[F.nlq];

	l->meta.name = xstrdup(name);
	l->meta.namespace = xstrdup(nsname);
	l->cluster_queue = xstrdup(cqname);
	F.lqp[F.nlq++] = l;
}

/* A pending workload of LocalQueue lqname in namespace "t": one pod. */
static struct workload *wl(const char *name, const char *lqname,
			   const char *req)
{
	struct workload *w = &F.wl[F.nwl];
	struct pod_set *ps;

	w->meta.name = xstrdup(name);
	w->meta.namespace = xstrdup("t");
	w->meta.uid = xasprintf("uid-%s", name);
	w->meta.generation = 1;
	w->meta.creation_ms = T0 - 60000 + (int64_t)F.nwl;
	w->version = API_V1BETA2;
	w->queue_name = xstrdup(lqname);
	w->active = true;
	w->pod_sets = xcalloc(1, sizeof(*w->pod_sets));
	w->npod_sets = 1;
	ps = &w->pod_sets[0];
	ps->name = xstrdup(DEFAULT_PODSET_NAME);
	ps->count = 1;
	ps->tmpl.containers = xcalloc(1, sizeof(*ps->tmpl.containers));
	ps->tmpl.ncontainers = 1;
	ps->tmpl.containers[0].name = xstrdup("c");
	reslist_init(&ps->tmpl.containers[0].requests);
	reslist_init(&ps->tmpl.containers[0].limits);
	spec_res(req, &ps->tmpl.containers[0].requests);
	node_affinity_init(&ps->tmpl.affinity);
	F.wlp[F.nwl++] = w;
	return w;
}

/* Feeds a sched with everything (the queues' workloads pending). */
static void feed(void)
{
	struct sched_opts o;
	struct sched_decisions d = { 0 };

	sched_opts_default(&o);
	F.s = sched_new(&o);
	for (size_t i = 0; i < F.nrf; i++)
		sched_flavor_set(F.s, &F.rf[i]);
	for (size_t i = 0; i < F.nco; i++)
		sched_cohort_set(F.s, &F.co[i]);
	for (size_t i = 0; i < F.ncq; i++)
		sched_cq_set(F.s, &F.cq[i], F.inv[i]);
	for (size_t i = 0; i < F.nns; i++)
		sched_namespace_set(F.s, F.ns[i].name, F.ns[i].labels);
	for (size_t i = 0; i < F.nwl; i++) {
		const char *cqn = NULL;
		char *key = xasprintf("t/%s", F.wl[i].queue_name);

		for (size_t k = 0; k < F.nlq; k++)
			if (!strcmp(F.lq[k].meta.name, F.wl[i].queue_name))
				cqn = F.lq[k].cluster_queue;
		sched_wl_set(F.s, &F.wl[i], cqn, key);
		free(key);
	}
	sched_cycle(F.s, T0, &d); /* parks what does not fit */
	sched_decisions_release(&d);
}

static void run(void)
{
	struct doctor_input in = {
		.rfs = F.rfp, .nrf = F.nrf, .cohorts = F.cop, .ncohort = F.nco,
		.cqs = F.cqp, .cq_invalid = F.inv, .ncq = F.ncq,
		.nss = F.ns, .nns = F.nns, .lqs = F.lqp, .nlq = F.nlq,
		.wls = F.wlp, .nwl = F.nwl, .s = F.s, .now_ms = T0,
	};

	doctor_run(&in, &F.rep);
}

static const struct doctor_finding *finding(const char *check)
{
	for (size_t i = 0; i < F.rep.n; i++)
		if (!strcmp(F.rep.v[i].check, check))
			return &F.rep.v[i];
	return NULL;
}

/* A healthy setup: a cohort of two queues, their LocalQueues in use. */
static void healthy(void)
{
	rf("std");
	cohort("org", NULL);
	cq("a", "org", "std:cpu=4");
	cq("b", "org", "std:cpu=4");
	ns("t", "team", "t");
	lq("t", "qa", "a");
	lq("t", "qb", "b");
	wl("w1", "qa", "cpu=1");
	wl("w2", "qb", "cpu=1");
}

START_TEST(clean)
{
	healthy();
	feed();
	run();
	ck_assert_msg(F.rep.n == 0, "%zu findings, first %s: %s", F.rep.n,
		      F.rep.n ? F.rep.v[0].check : "",
		      F.rep.n ? F.rep.v[0].message : "");
}
END_TEST

START_TEST(missing_flavor)
{
	const struct doctor_finding *f;

	healthy();
	cq("c", NULL, "std:cpu=1 gpu:cpu=1");
	cohort("org2", NULL);
	spec_groups("nope:cpu=1", &F.co[F.nco - 1].groups,
		    &F.co[F.nco - 1].ngroups);
	feed();
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "missing-flavor"), 2);
	f = finding("missing-flavor");
	ck_assert_int_eq(f->sev, DOC_ERROR);
	ck_assert_str_eq(f->object, "ClusterQueue/c");
	ck_assert_ptr_nonnull(strstr(f->message, "gpu"));
	ck_assert_ptr_nonnull(strstr(f->fix, "create ResourceFlavor(s) gpu"));
	/* the inactive check does not repeat it */
	ck_assert_uint_eq(doctor_count(&F.rep, "inactive-clusterqueue"), 0);
}
END_TEST

START_TEST(missing_clusterqueue)
{
	const struct doctor_finding *f;

	healthy();
	lq("t", "ghost", "no-such-cq");
	feed();
	run();
	f = finding("missing-clusterqueue");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(f->sev, DOC_ERROR);
	ck_assert_str_eq(f->object, "LocalQueue/t/ghost");
	ck_assert_ptr_nonnull(strstr(f->message, "no-such-cq"));
}
END_TEST

START_TEST(invalid_and_stopped)
{
	healthy();
	cq("bad", NULL, "std:cpu=1");
	F.inv[F.ncq - 1] = "spec.resourceGroups[0]: Invalid value";
	cq("held", NULL, "std:cpu=1")->stop = STOP_HOLD;
	feed();
	run();
	ck_assert_int_eq(finding("invalid-clusterqueue")->sev, DOC_ERROR);
	ck_assert_str_eq(finding("invalid-clusterqueue")->object,
			 "ClusterQueue/bad");
	ck_assert_int_eq(finding("stopped-clusterqueue")->sev, DOC_INFO);
	ck_assert_str_eq(finding("stopped-clusterqueue")->object,
			 "ClusterQueue/held");
	/* errors sort first */
	ck_assert_int_eq(F.rep.v[0].sev, DOC_ERROR);
}
END_TEST

START_TEST(cohort_cycle)
{
	healthy();
	cohort("x", "y");
	cohort("y", "z");
	cohort("z", "x");
	cohort("leaf", "x"); /* under the cycle, not in it */
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "cohort-cycle"), 1);
	ck_assert_str_eq(finding("cohort-cycle")->object, "Cohort/x");
	ck_assert_ptr_nonnull(strstr(finding("cohort-cycle")->message,
				     "x -> y -> z -> x"));
}
END_TEST

START_TEST(never_fits)
{
	healthy();
	cq("small", NULL, "std:cpu=2");
	lq("t", "qs", "small");
	wl("huge", "qs", "cpu=5");
	wl("ok", "qs", "cpu=1");
	feed();
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "never-fits"), 1);
	ck_assert_str_eq(finding("never-fits")->object, "ClusterQueue/small");
	/* "ok" was admitted by the warm-up cycle: 1 of the 1 pending */
	ck_assert_ptr_nonnull(strstr(finding("never-fits")->message,
				     "1 of 1 pending"));
	ck_assert_ptr_nonnull(strstr(finding("never-fits")->message,
				     "t/huge: insufficient quota for cpu"));
}
END_TEST

START_TEST(borrowing_is_not_never)
{
	/* 5 cpu fit by borrowing from the cohort: waits, never "never" */
	healthy();
	wl("big", "qa", "cpu=7");
	feed();
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "never-fits"), 0);
}
END_TEST

START_TEST(selector_matches_nothing)
{
	struct cluster_queue *q;
	const char *v[] = { "zzz" };

	healthy();
	q = cq("nil", NULL, "std:cpu=1");
	q->has_ns_selector = false;
	q = cq("nomatch", NULL, "std:cpu=1");
	label_selector_add(&q->ns_selector, "team", SEL_IN, v, 1);
	q = cq("match", NULL, "std:cpu=1");
	v[0] = "t";
	label_selector_add(&q->ns_selector, "team", SEL_IN, v, 1);
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "selector-matches-nothing"), 2);
	ck_assert_int_eq(finding("selector-matches-nothing")->sev,
			 DOC_WARNING);
	for (size_t i = 0; i < F.rep.n; i++)
		ck_assert_str_ne(F.rep.v[i].object, "ClusterQueue/match");
}
END_TEST

START_TEST(untolerated_taint)
{
	struct resource_flavor *g;

	healthy();
	g = rf("gpu");
	rf_taint(g, "nvidia.com/gpu");
	cq("gq", NULL, "gpu:cpu=8");
	lq("t", "qg", "gq");
	wl("g1", "qg", "cpu=1");
	wl("g2", "qg", "cpu=1");
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "untolerated-taint"), 1);
	ck_assert_str_eq(finding("untolerated-taint")->object,
			 "ResourceFlavor/gpu");
	ck_assert_ptr_nonnull(strstr(finding("untolerated-taint")->message,
				     "2 pending"));
	/* one workload that tolerates it silences the check */
	F.wl[F.nwl - 1].pod_sets[0].tmpl.tols = tol("nvidia.com/gpu");
	F.wl[F.nwl - 1].pod_sets[0].tmpl.ntols = 1;
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "untolerated-taint"), 0);
	/* as does the flavor tolerating its own taint */
	F.wl[F.nwl - 1].pod_sets[0].tmpl.ntols = 0;
	g->tols = tol("nvidia.com/gpu");
	g->ntols = 1;
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "untolerated-taint"), 0);
	g->ntols = 1;
	/* toleration arrays are freed with their owners */
	F.wl[F.nwl - 1].pod_sets[0].tmpl.ntols = 1;
}
END_TEST

START_TEST(policies)
{
	struct cluster_queue *q;

	healthy();
	q = cq("lonely", NULL, "std:cpu=1");
	q->reclaim = RWC_ANY;
	q = cq("noborrow", "org", "std:cpu=1/0");
	q->reclaim = RWC_ANY;
	q->borrow_policy = BWC_LOWER_PRIORITY;
	cq("nolend", "org", "std:cpu=1/-/0");
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "preemption-without-cohort"), 1);
	ck_assert_str_eq(finding("preemption-without-cohort")->object,
			 "ClusterQueue/lonely");
	ck_assert_uint_eq(doctor_count(&F.rep, "borrow-within-cohort-unusable"),
			  1);
	ck_assert_str_eq(finding("borrow-within-cohort-unusable")->object,
			 "ClusterQueue/noborrow");
	ck_assert_uint_eq(doctor_count(&F.rep, "nothing-lendable"), 1);
	ck_assert_str_eq(finding("nothing-lendable")->object,
			 "ClusterQueue/nolend");
	ck_assert_int_eq(finding("nothing-lendable")->sev, DOC_WARNING);
}
END_TEST

START_TEST(unused_localqueue)
{
	healthy();
	lq("t", "idle", "a");
	run();
	ck_assert_uint_eq(doctor_count(&F.rep, "unused-localqueue"), 1);
	ck_assert_str_eq(finding("unused-localqueue")->object,
			 "LocalQueue/t/idle");
	ck_assert_int_eq(finding("unused-localqueue")->sev, DOC_INFO);
}
END_TEST

Suite *doctor_suite(void)
{
	Suite *s = suite_create("doctor");
	TCase *tc = tcase_create("checks");

	tcase_add_checked_fixture(tc, fx_setup, fx_teardown);
	tcase_add_test(tc, clean);
	tcase_add_test(tc, missing_flavor);
	tcase_add_test(tc, missing_clusterqueue);
	tcase_add_test(tc, invalid_and_stopped);
	tcase_add_test(tc, cohort_cycle);
	tcase_add_test(tc, never_fits);
	tcase_add_test(tc, borrowing_is_not_never);
	tcase_add_test(tc, selector_matches_nothing);
	tcase_add_test(tc, untolerated_taint);
	tcase_add_test(tc, policies);
	tcase_add_test(tc, unused_localqueue);
	suite_add_tcase(s, tc);
	return s;
}
