/*
 * Suite "assign": the flavor assigner (flavors/assign.h) and the internals
 * of flavors/sched it drives (kueue-scheduler.md §2-3): flavor order with
 * taints and labels, flavorFungibility, several resource groups and pod
 * sets, partial admission, the `pods` resource, undeclared resources,
 * Kueue's exact NoFit messages, in-cycle reservation, StrictFIFO versus
 * BestEffortFIFO, assume / forget / confirm and status usage.
 *
 * Objects are built from a tiny text notation (see the builders below)
 * and kept alive in a per-test world, since sched borrows them. Every
 * step is followed by sched_check (STYLE P15).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flavors/assign.h"
#include "flavors/sched.h"
#include "model/quantity.h"
#include "model/resources.h"
#include "suites.h"
#include "test/support/support.h"

#define MAXOBJ 64

struct world {
	struct sched *s;
	struct resource_flavor *rf[MAXOBJ];
	size_t nrf;
	struct cluster_queue *cq[MAXOBJ];
	size_t ncq;
	struct cohort *co[MAXOBJ];
	size_t nco;
	struct workload **wl; /* owned array */
	size_t nwl, capwl;
	struct sched_decisions d;
};

#define CHECK(w) \
	ck_assert_msg(sched_check((w)->s), "sched_check failed at line %d", \
		      __LINE__)

static int64_t q(const char *res, const char *text)
{
	struct quantity qt;
	struct err err;

	ck_assert_msg(quantity_parse(text, &qt, &err) == 0, "bad quantity %s",
		      text);
	return resource_units_milli(res, qt.milli);
}

static void world_init(struct world *w, const struct sched_opts *o)
{
	memset(w, 0, sizeof(*w));
	w->s = sched_new(o);
}

static void world_free(struct world *w)
{
	sched_decisions_release(&w->d);
	sched_free(w->s);
	for (size_t i = 0; i < w->nrf; i++) {
		resource_flavor_release(w->rf[i]);
		free(w->rf[i]);
	}
	for (size_t i = 0; i < w->ncq; i++) {
		cluster_queue_release(w->cq[i]);
		free(w->cq[i]);
	}
	for (size_t i = 0; i < w->nco; i++) {
		cohort_release(w->co[i]);
		free(w->co[i]);
	}
	for (size_t i = 0; i < w->nwl; i++) {
		workload_release(w->wl[i]);
		free(w->wl[i]);
	}
	free(w->wl);
}

static void keep_wl(struct world *w, struct workload *wl)
{
	XGROW(w->wl, w->capwl, w->nwl + 1);
	w->wl[w->nwl++] = wl;
}

/* "name" with labels "k=v,k2=v2" (or NULL) and taints "k=v:NoSchedule,..."
 * (or NULL). */
static struct resource_flavor *flavor(struct world *w, const char *name,
				      const char *labels, const char *taints)
{
	struct resource_flavor *rf = xcalloc(1, sizeof(*rf));
	char *buf, *tok, *save;

	rf->meta.name = xstrdup(name);
	if (labels) {
		buf = xstrdup(labels);
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(tok, '=');

			*eq = '\0';
			smap_set(&rf->node_labels, tok, eq + 1);
		}
		free(buf);
	}
	if (taints) {
		buf = xstrdup(taints);
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(tok, '='), *colon = strchr(tok, ':');
			struct taint *t;
			enum taint_effect e;

			rf->taints = xrealloc(rf->taints, (rf->ntaints + 1) *
								 sizeof(*t));
			t = &rf->taints[rf->ntaints++];
			memset(t, 0, sizeof(*t));
			*eq = *colon = '\0';
			t->key = xstrdup(tok);
			t->value = xstrdup(eq + 1);
			ck_assert(taint_effect_parse(colon + 1, false, &e) ==
				  0);
			t->effect = e;
		}
		free(buf);
	}
	w->rf[w->nrf++] = rf;
	sched_flavor_set(w->s, rf);
	CHECK(w);
	return rf;
}

/* One quota "10", "10~b4" (borrowing 4), "10~l2" (lending 2). */
static void quota(struct resource_quota *rq, const char *res, char *text)
{
	char *b = strstr(text, "~b"), *l = strstr(text, "~l");

	rq->name = xstrdup(res);
	if (b) {
		rq->has_borrowing = true;
		rq->borrowing = q(res, b + 2);
	}
	if (l) {
		rq->has_lending = true;
		rq->lending = q(res, l + 2);
	}
	if (b)
		*b = '\0';
	if (l)
		*l = '\0';
	rq->nominal = q(res, text);
}

/* Groups "cpu,memory: f1=10,20Gi f2=5,5Gi | gpu: g=4". */
static void groups(struct resource_group **out, size_t *nout,
		   const char *spec)
{
	char *buf = xstrdup(spec), *gsave, *gtok;

	*out = NULL;
	*nout = 0;
	for (gtok = strtok_r(buf, "|", &gsave); gtok;
	     gtok = strtok_r(NULL, "|", &gsave)) {
		struct resource_group *g;
		char *colon = strchr(gtok, ':'), *rsave, *rtok, *fsave, *ftok;

		*out = xrealloc(*out, (*nout + 1) * sizeof(**out));
		g = &(*out)[(*nout)++];
		memset(g, 0, sizeof(*g));
		*colon = '\0';
		for (rtok = strtok_r(gtok, ", ", &rsave); rtok;
		     rtok = strtok_r(NULL, ", ", &rsave)) {
			g->covered = xrealloc(g->covered, (g->ncovered + 1) *
								  sizeof(char *));
			g->covered[g->ncovered++] = xstrdup(rtok);
		}
		for (ftok = strtok_r(colon + 1, " ", &fsave); ftok;
		     ftok = strtok_r(NULL, " ", &fsave)) {
			char *eq = strchr(ftok, '='), *vsave, *vtok;
			struct flavor_quotas *fq;
			size_t k = 0;

			g->flavors = xrealloc(g->flavors, (g->nflavors + 1) *
								  sizeof(*fq));
			fq = &g->flavors[g->nflavors++];
			memset(fq, 0, sizeof(*fq));
			*eq = '\0';
			fq->name = xstrdup(ftok);
			fq->res = xcalloc(g->ncovered, sizeof(*fq->res));
			for (vtok = strtok_r(eq + 1, ",", &vsave);
			     vtok && k < g->ncovered;
			     vtok = strtok_r(NULL, ",", &vsave), k++)
				quota(&fq->res[k], g->covered[k], vtok);
			fq->nres = k;
		}
	}
	free(buf);
}

static struct cluster_queue *cq_new(const char *name, const char *cohort,
				    const char *spec)
{
	struct cluster_queue *cq = xcalloc(1, sizeof(*cq));

	cq->meta.name = xstrdup(name);
	cq->cohort = xstrdup_or_null(cohort);
	cq->has_ns_selector = true; /* {}: every namespace */
	cq->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
	groups(&cq->groups, &cq->ngroups, spec);
	return cq;
}

static struct cluster_queue *cq_add(struct world *w, struct cluster_queue *cq)
{
	w->cq[w->ncq++] = cq;
	sched_cq_set(w->s, cq, NULL);
	CHECK(w);
	return cq;
}

static struct cluster_queue *clusterqueue(struct world *w, const char *name,
					  const char *cohort, const char *spec)
{
	return cq_add(w, cq_new(name, cohort, spec));
}

/* Pod sets "main:3:cpu=1,memory=1Gi;workers:4/2:cpu=500m" (count/min). */
static struct workload *wl_new(const char *ns, const char *name, int prio,
			       int64_t ts, const char *spec)
{
	struct workload *wl = xcalloc(1, sizeof(*wl));
	char *buf = xstrdup(spec), *psave, *ptok;
	char uid[64];

	wl->meta.namespace = xstrdup(ns);
	wl->meta.name = xstrdup(name);
	snprintf(uid, sizeof(uid), "uid-%s", name);
	wl->meta.uid = xstrdup(uid);
	wl->meta.creation_ms = ts;
	wl->meta.generation = 1;
	wl->has_priority = true;
	wl->priority = prio;
	wl->active = true;
	for (ptok = strtok_r(buf, ";", &psave); ptok;
	     ptok = strtok_r(NULL, ";", &psave)) {
		char *c1 = strchr(ptok, ':'), *c2, *slash, *rsave, *rtok;
		struct pod_set *ps;
		struct container_res *ct;

		*c1 = '\0';
		c2 = strchr(c1 + 1, ':');
		*c2 = '\0';
		wl->pod_sets = xrealloc(wl->pod_sets, (wl->npod_sets + 1) *
							      sizeof(*ps));
		ps = &wl->pod_sets[wl->npod_sets++];
		memset(ps, 0, sizeof(*ps));
		ps->name = xstrdup(ptok);
		ps->count = atoi(c1 + 1);
		slash = strchr(c1 + 1, '/');
		if (slash) {
			ps->has_min_count = true;
			ps->min_count = atoi(slash + 1);
		}
		node_affinity_init(&ps->tmpl.affinity);
		ps->tmpl.containers = xcalloc(1, sizeof(*ct));
		ps->tmpl.ncontainers = 1;
		ct = &ps->tmpl.containers[0];
		ct->name = xstrdup("c");
		for (rtok = strtok_r(c2 + 1, ",", &rsave); rtok;
		     rtok = strtok_r(NULL, ",", &rsave)) {
			char *eq = strchr(rtok, '=');

			*eq = '\0';
			reslist_set(&ct->requests, rtok, q(rtok, eq + 1));
		}
	}
	free(buf);
	return wl;
}

static struct workload *wl_add(struct world *w, struct workload *wl,
			       const char *cq)
{
	char lq[128];

	snprintf(lq, sizeof(lq), "%s/lq", wl->meta.namespace);
	keep_wl(w, wl);
	sched_wl_set(w->s, wl, cq, lq);
	CHECK(w);
	return wl;
}

static struct workload *workload(struct world *w, const char *name, int prio,
				 int64_t ts, const char *cq, const char *spec)
{
	return wl_add(w, wl_new("ns", name, prio, ts, spec), cq);
}

static size_t cycle(struct world *w)
{
	size_t n;

	sched_decisions_clear(&w->d);
	n = sched_cycle(w->s, 1000, &w->d);
	CHECK(w);
	return n;
}

static const struct sched_decision *dec_of(const struct world *w,
					   const char *name)
{
	for (size_t i = 0; i < w->d.n; i++)
		if (!strcmp(w->d.v[i].wl->meta.name, name))
			return &w->d.v[i];
	return NULL;
}

static void expect_admit(const struct world *w, const char *name)
{
	const struct sched_decision *d = dec_of(w, name);

	ck_assert_msg(d, "no decision for %s", name);
	ck_assert_msg(d->kind == DEC_ADMIT, "%s not admitted: %s", name,
		      d->message ? d->message : "");
}

static void expect_pending(const struct world *w, const char *name,
			   const char *msg)
{
	const struct sched_decision *d = dec_of(w, name);

	ck_assert_msg(d, "no decision for %s", name);
	ck_assert_msg(d->kind == DEC_PENDING, "%s admitted", name);
	ck_assert_str_eq(d->reason, "Pending");
	ck_assert_str_eq(d->message, msg);
}

/* The flavor and usage of resource res in pod set i of name's admission,
 * as "flavor=usage" ("-" when absent); also checks the count. */
static char *adm_of(const struct world *w, const char *name, size_t i,
		    const char *res, int32_t *count)
{
	const struct sched_decision *d = dec_of(w, name);
	struct admission a = { 0 };
	static char buf[128];
	const char *f;

	ck_assert(d && d->kind == DEC_ADMIT);
	sched_decision_admission(w->s, d, &a);
	ck_assert_uint_gt(a.npsa, i);
	f = smap_get(&a.psa[i].flavors, res);
	if (count)
		*count = a.psa[i].count;
	if (!f) {
		snprintf(buf, sizeof(buf), "-");
	} else {
		char qb[QUANTITY_BUF];

		snprintf(buf, sizeof(buf), "%s=%s", f,
			 resource_format(res, reslist_get(&a.psa[i].usage, res),
					 qb, sizeof(qb)));
	}
	admission_release(&a);
	return buf;
}

/* Marks an admitted workload's status as the controller would write it
 * (QuotaReserved=True + admission) and feeds it back. */
static void confirm(struct world *w, const char *name, bool admitted)
{
	const struct sched_decision *d = dec_of(w, name);
	struct workload *nw = xcalloc(1, sizeof(*nw));

	ck_assert(d && d->kind == DEC_ADMIT);
	workload_copy(nw, d->wl);
	nw->has_admission = true;
	sched_decision_admission(w->s, d, &nw->admission);
	conditions_set(&nw->conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       "ok", 1, 1000);
	if (admitted)
		conditions_set(&nw->conds, "Admitted", COND_TRUE, "Admitted",
			       "ok", 1, 1000);
	keep_wl(w, nw);
	sched_wl_set(w->s, nw, nw->admission.cluster_queue, "ns/lq");
	CHECK(w);
}

static void finish(struct world *w, const char *name)
{
	struct workload *nw = NULL;

	for (size_t i = w->nwl; i-- > 0;)
		if (!strcmp(w->wl[i]->meta.name, name)) {
			nw = w->wl[i];
			break;
		}
	ck_assert(nw);
	conditions_set(&nw->conds, "Finished", COND_TRUE, "Succeeded", "done",
		       1, 2000);
	sched_wl_set(w->s, nw, NULL, "ns/lq");
	CHECK(w);
}

static int64_t usage_of(struct world *w, const char *cq, bool admitted,
			const char *flv, const char *res, int64_t *borrowed)
{
	struct flavor_usage *u;
	size_t n;
	int64_t v = -1;

	sched_cq_usage(w->s, cq, admitted, &u, &n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(u[i].name, flv))
			continue;
		for (size_t k = 0; k < u[i].nres; k++)
			if (!strcmp(u[i].res[k].name, res)) {
				v = u[i].res[k].total;
				if (borrowed)
					*borrowed = u[i].res[k].borrowed;
			}
	}
	/* flavor_usages_release frees the array too (objects.c), despite
	 * sched.h's "flavor_usages_release and free". */
	flavor_usages_release(u, n);
	return v;
}

/* ---- messages ---------------------------------------------------------- */

START_TEST(fit_and_admission)
{
	struct world w;
	int32_t count;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu,memory: default=10,10Gi");
	workload(&w, "a", 0, 1, "cq", "main:3:cpu=1,memory=1Gi");
	ck_assert_uint_eq(cycle(&w), 1);
	expect_admit(&w, "a");
	ck_assert_str_eq(adm_of(&w, "a", 0, "cpu", &count), "default=3");
	ck_assert_int_eq(count, 3);
	ck_assert_str_eq(adm_of(&w, "a", 0, "memory", NULL), "default=3Gi");
	ck_assert_int_eq(dec_of(&w, "a")->borrowing, 0);
	ck_assert(sched_wl_holds_quota(w.s, "ns", "a"));
	ck_assert_int_eq(usage_of(&w, "cq", false, "default", "cpu", NULL),
			 3000);
	world_free(&w);
}
END_TEST

START_TEST(msg_unused_quota)
{
	struct world w;

	world_init(&w, NULL);
	flavor(&w, "default-flavor", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default-flavor=4");
	workload(&w, "a", 0, 1, "cq", "main:3:cpu=1");
	workload(&w, "b", 0, 2, "cq", "main:2:cpu=1");
	/* Round 1 admits a; round 2 tries b. */
	ck_assert_uint_eq(cycle(&w), 1);
	expect_admit(&w, "a");
	expect_pending(&w, "b",
		       "couldn't assign flavors to pod set main: insufficient "
		       "unused quota for cpu in flavor default-flavor, 1 more "
		       "needed");
	world_free(&w);
}
END_TEST

START_TEST(msg_max_capacity)
{
	struct world w;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu,memory: default=8,1Gi");
	workload(&w, "a", 0, 1, "cq", "main:1:cpu=10");
	workload(&w, "m", 0, 1, "cq", "main:1:memory=1536Mi");
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "a",
		       "couldn't assign flavors to pod set main: insufficient "
		       "quota for cpu in flavor default, previously considered "
		       "podsets requests (0) + current podset request (10) > "
		       "maximum capacity (8)");
	expect_pending(&w, "m",
		       "couldn't assign flavors to pod set main: insufficient "
		       "quota for memory in flavor default, previously "
		       "considered podsets requests (0) + current podset "
		       "request (1536Mi) > maximum capacity (1Gi)");
	world_free(&w);
}
END_TEST

START_TEST(msg_previous_podsets)
{
	struct world w;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default=10");
	workload(&w, "a", 0, 1, "cq", "driver:2:cpu=3;workers:1:cpu=5");
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "a",
		       "couldn't assign flavors to pod set workers: "
		       "insufficient quota for cpu in flavor default, "
		       "previously considered podsets requests (6) + current "
		       "podset request (5) > maximum capacity (10)");
	world_free(&w);
}
END_TEST

START_TEST(msg_undeclared)
{
	struct world w;
	struct sched_opts o;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default=10");
	workload(&w, "a", 0, 1, "cq", "main:1:cpu=1,nvidia.com/gpu=1");
	workload(&w, "z", 0, 2, "cq", "main:1:cpu=1,example.com/foo=0");
	/* One call tries both (a parks, uncovering z). */
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "a",
		       "couldn't assign flavors to pod set main: resource "
		       "nvidia.com/gpu unavailable in ClusterQueue");
	/* v0.14: even a zero request of an undeclared resource. */
	expect_pending(&w, "z",
		       "couldn't assign flavors to pod set main: resource "
		       "example.com/foo unavailable in ClusterQueue");
	world_free(&w);

	sched_opts_default(&o);
	o.ignore_undeclared = true;
	world_init(&w, &o);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default=10");
	workload(&w, "a", 0, 1, "cq", "main:1:cpu=1,nvidia.com/gpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "a", 0, "cpu", NULL), "default=1");
	ck_assert_str_eq(adm_of(&w, "a", 0, "nvidia.com/gpu", NULL), "-");
	world_free(&w);
}
END_TEST

/* ---- flavor matching --------------------------------------------------- */

static void set_selector(struct workload *wl, const char *k, const char *v)
{
	smap_set(&wl->pod_sets[0].tmpl.node_selector, k, v);
}

static void add_toleration(struct workload *wl, const char *k, const char *v)
{
	struct pod_template *t = &wl->pod_sets[0].tmpl;
	struct toleration *tol;

	t->tols = xrealloc(t->tols, (t->ntols + 1) * sizeof(*tol));
	tol = &t->tols[t->ntols++];
	memset(tol, 0, sizeof(*tol));
	tol->key = xstrdup(k);
	tol->value = xstrdup(v);
	tol->op = TOL_EQUAL;
	tol->effect = EFFECT_NO_SCHEDULE;
}

START_TEST(flavor_taints_labels)
{
	struct world w;
	struct workload *a, *b, *c;

	world_init(&w, NULL);
	flavor(&w, "tainted", NULL, "spot=true:NoSchedule");
	flavor(&w, "zone-a", "zone=a", NULL);
	flavor(&w, "plain", NULL, NULL);
	clusterqueue(&w, "cq", NULL,
		     "cpu: tainted=10 zone-a=10 plain=1");
	a = wl_new("ns", "a", 0, 1, "main:1:cpu=1");
	set_selector(a, "zone", "b");
	wl_add(&w, a, "cq");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "a", 0, "cpu", NULL), "plain=1");

	/* Nothing left on plain: both mismatches are reported, sorted. */
	b = wl_new("ns", "b", 0, 2, "main:1:cpu=1");
	set_selector(b, "zone", "b");
	wl_add(&w, b, "cq");
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "b",
		       "couldn't assign flavors to pod set main: flavor zone-a "
		       "doesn't match node affinity, insufficient unused quota "
		       "for cpu in flavor plain, 1 more needed, untolerated "
		       "taint {spot true NoSchedule <nil>} in flavor tainted");

	/* A toleration opens the first flavor. */
	c = wl_new("ns", "c", 0, 3, "main:1:cpu=2");
	add_toleration(c, "spot", "true");
	wl_add(&w, c, "cq");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "c", 0, "cpu", NULL), "tainted=2");
	world_free(&w);
}
END_TEST

START_TEST(flavor_changes_invalidate_cache)
{
	struct world w;
	struct workload *a;
	struct resource_flavor *rf2;

	world_init(&w, NULL);
	flavor(&w, "f", "zone=a", NULL);
	clusterqueue(&w, "cq", NULL, "cpu: f=10");
	a = wl_new("ns", "a", 0, 1, "main:1:cpu=1");
	set_selector(a, "zone", "b");
	wl_add(&w, a, "cq");
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "a",
		       "couldn't assign flavors to pod set main: flavor f "
		       "doesn't match node affinity");
	/* The flavor's labels change: the cached mismatch must go, and the
	 * flavor event requeues the parked workload. */
	rf2 = xcalloc(1, sizeof(*rf2));
	rf2->meta.name = xstrdup("f");
	smap_set(&rf2->node_labels, "zone", "b");
	w.rf[w.nrf++] = rf2;
	sched_flavor_set(w.s, rf2);
	CHECK(&w);
	ck_assert(sched_has_work(w.s));
	ck_assert_uint_eq(cycle(&w), 1);
	expect_admit(&w, "a");
	world_free(&w);
}
END_TEST

/* ---- fungibility ------------------------------------------------------- */

/* cq "a" in cohort "co": flavor one=2 (borrowable from lender's 10),
 * two=10; "lender" lends one=10. */
static void fung_world(struct world *w, enum fungibility borrow,
		       enum fungibility preempt)
{
	struct cluster_queue *cq;

	world_init(w, NULL);
	flavor(w, "one", NULL, NULL);
	flavor(w, "two", NULL, NULL);
	clusterqueue(w, "lender", "co", "cpu: one=10");
	cq = cq_new("a", "co", "cpu: one=2 two=10");
	cq->when_can_borrow = borrow;
	cq->when_can_preempt = preempt;
	cq_add(w, cq);
}

START_TEST(fung_borrow)
{
	struct world w;

	fung_world(&w, FUNG_MAY_STOP_SEARCH, FUNG_TRY_NEXT_FLAVOR);
	workload(&w, "x", 0, 1, "a", "main:4:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "x", 0, "cpu", NULL), "one=4");
	ck_assert_int_eq(dec_of(&w, "x")->borrowing, 1);
	world_free(&w);

	fung_world(&w, FUNG_TRY_NEXT_FLAVOR, FUNG_TRY_NEXT_FLAVOR);
	workload(&w, "x", 0, 1, "a", "main:4:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "x", 0, "cpu", NULL), "two=4");
	ck_assert_int_eq(dec_of(&w, "x")->borrowing, 0);
	world_free(&w);
}
END_TEST

START_TEST(fung_borrow_all_borrow)
{
	struct world w;

	/* TryNextFlavor, but no flavor avoids borrowing: the best one (the
	 * lowest level) is still taken. */
	fung_world(&w, FUNG_TRY_NEXT_FLAVOR, FUNG_TRY_NEXT_FLAVOR);
	workload(&w, "x", 0, 1, "a", "main:12:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "x", 0, "cpu", NULL), "one=12");
	world_free(&w);
}
END_TEST

START_TEST(fung_preempt_next_flavor)
{
	struct world w;
	struct cluster_queue *cq;

	world_init(&w, NULL);
	flavor(&w, "one", NULL, NULL);
	flavor(&w, "two", NULL, NULL);
	cq = cq_new("a", NULL, "cpu: one=4 two=10");
	cq->when_can_preempt = FUNG_MAY_STOP_SEARCH;
	cq_add(&w, cq);
	workload(&w, "x", 0, 1, "a", "main:3:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "x", 0, "cpu", NULL), "one=3");
	/* one would need preemption; with no candidates it is not viable,
	 * so even MayStopSearch moves on to two. */
	workload(&w, "y", 0, 2, "a", "main:2:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "y", 0, "cpu", NULL), "two=2");
	world_free(&w);
}
END_TEST

/* ---- multiple groups, partial admission, pods ------------------------- */

START_TEST(multi_groups)
{
	struct world w;

	world_init(&w, NULL);
	flavor(&w, "a", NULL, NULL);
	flavor(&w, "b", NULL, NULL);
	flavor(&w, "g1", NULL, NULL);
	flavor(&w, "g2", NULL, NULL);
	clusterqueue(&w, "cq", NULL,
		     "cpu,memory: a=10,1Gi b=10,10Gi | nvidia.com/gpu: g1=1 "
		     "g2=8");
	workload(&w, "x", 0, 1, "cq",
		 "main:2:cpu=1,memory=2Gi,nvidia.com/gpu=2");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "x", 0, "cpu", NULL), "b=2");
	ck_assert_str_eq(adm_of(&w, "x", 0, "memory", NULL), "b=4Gi");
	ck_assert_str_eq(adm_of(&w, "x", 0, "nvidia.com/gpu", NULL), "g2=4");
	/* A failing group replaces the pod set's reasons with its own. */
	workload(&w, "y", 0, 2, "cq", "main:1:cpu=1,nvidia.com/gpu=9");
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "y",
		       "couldn't assign flavors to pod set main: insufficient "
		       "quota for nvidia.com/gpu in flavor g1, previously "
		       "considered podsets requests (0) + current podset "
		       "request (9) > maximum capacity (1), insufficient quota "
		       "for nvidia.com/gpu in flavor g2, previously considered "
		       "podsets requests (0) + current podset request (9) > "
		       "maximum capacity (8)");
	world_free(&w);
}
END_TEST

START_TEST(partial_admission)
{
	struct world w;
	struct sched_opts o;
	int32_t count;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default=10");
	workload(&w, "x", 0, 1, "cq", "main:20/5:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "x", 0, "cpu", &count), "default=10");
	ck_assert_int_eq(count, 10);
	world_free(&w);

	/* Two pod sets reduced proportionally (§2.4). */
	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default=10");
	workload(&w, "x", 0, 1, "cq", "a:8/2:cpu=1;b:8/4:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	/* D = 6 + 4; k = 7 is the first step that fits: 8 - 42/10 = 4 and
	 * 8 - 28/10 = 6. */
	adm_of(&w, "x", 0, "cpu", &count);
	ck_assert_int_eq(count, 4);
	adm_of(&w, "x", 1, "cpu", &count);
	ck_assert_int_eq(count, 6);
	world_free(&w);

	sched_opts_default(&o);
	o.partial_admission = false;
	world_init(&w, &o);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default=10");
	workload(&w, "x", 0, 1, "cq", "main:20/5:cpu=1");
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "x",
		       "couldn't assign flavors to pod set main: insufficient "
		       "quota for cpu in flavor default, previously considered "
		       "podsets requests (0) + current podset request (20) > "
		       "maximum capacity (10)");
	world_free(&w);
}
END_TEST

START_TEST(pods_resource)
{
	struct world w;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu,pods: default=10,3");
	workload(&w, "x", 0, 1, "cq", "main:2:cpu=1");
	workload(&w, "y", 0, 2, "cq", "main:2:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_str_eq(adm_of(&w, "x", 0, "pods", NULL), "default=2");
	expect_pending(&w, "y",
		       "couldn't assign flavors to pod set main: insufficient "
		       "unused quota for pods in flavor default, 1 more "
		       "needed");
	world_free(&w);
}
END_TEST

/* ---- the cycle --------------------------------------------------------- */

START_TEST(in_cycle_reservation)
{
	struct world w;
	struct sched_opts o;

	for (int rounds = 0; rounds <= 1; rounds++) {
		sched_opts_default(&o);
		o.max_rounds = (unsigned)rounds;
		world_init(&w, &o);
		flavor(&w, "default", NULL, NULL);
		clusterqueue(&w, "lender", "co", "cpu: default=4");
		clusterqueue(&w, "a", "co", "cpu: default=0");
		clusterqueue(&w, "b", "co", "cpu: default=0");
		workload(&w, "wa", 10, 5, "a", "main:3:cpu=1");
		workload(&w, "wb", 0, 1, "b", "main:3:cpu=1");
		ck_assert_uint_eq(cycle(&w), 1);
		expect_admit(&w, "wa");
		ck_assert_int_eq(dec_of(&w, "wa")->borrowing, 1);
		if (rounds == 1)
			expect_pending(&w, "wb",
				       "Workload no longer fits after "
				       "processing another workload");
		else
			expect_pending(&w, "wb",
				       "couldn't assign flavors to pod set "
				       "main: insufficient unused quota for "
				       "cpu in flavor default, 2 more needed");
		ck_assert_uint_eq(w.d.n, 2);
		world_free(&w);
	}
}
END_TEST

START_TEST(fifo_strict_vs_best_effort)
{
	struct world w;
	struct cluster_queue *cq;
	struct sched_cq_status st;

	/* BestEffortFIFO: the big head is parked, the small one admitted. */
	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default=4");
	workload(&w, "big", 5, 1, "cq", "main:3:cpu=2");
	workload(&w, "small", 0, 2, "cq", "main:1:cpu=2");
	/* One call: big parks, which uncovers small in the next round. */
	ck_assert_uint_eq(cycle(&w), 1);
	expect_pending(&w, "big", "couldn't assign flavors to pod set main: "
		       "insufficient quota for cpu in flavor default, "
		       "previously considered podsets requests (0) + current "
		       "podset request (6) > maximum capacity (4)");
	expect_admit(&w, "small");
	sched_cq_status(w.s, "cq", &st);
	ck_assert_int_eq(st.pending_inadmissible, 1);
	ck_assert_int_eq(st.reserving, 1);
	ck_assert(!sched_has_work(w.s)); /* only a parked one left */
	world_free(&w);

	/* StrictFIFO: the head blocks; reported once. */
	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	cq = cq_new("cq", NULL, "cpu: default=4");
	cq->strategy = QS_STRICT_FIFO;
	cq_add(&w, cq);
	workload(&w, "big", 5, 1, "cq", "main:3:cpu=2");
	workload(&w, "small", 0, 2, "cq", "main:1:cpu=2");
	ck_assert_uint_eq(cycle(&w), 0);
	ck_assert_uint_eq(w.d.n, 1);
	ck_assert_uint_eq(cycle(&w), 0);
	ck_assert_uint_eq(w.d.n, 0); /* same message: not repeated */
	ck_assert(sched_has_work(w.s)); /* the head is retried */
	sched_cq_status(w.s, "cq", &st);
	ck_assert_int_eq(st.pending_active, 2);
	world_free(&w);
}
END_TEST

START_TEST(assume_forget_confirm)
{
	struct world w;
	struct sched_lq_status lst;
	int64_t borrowed = -1;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", "co", "cpu: default=2");
	clusterqueue(&w, "other", "co", "cpu: default=2");
	workload(&w, "a", 0, 1, "cq", "main:3:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_int_eq(usage_of(&w, "cq", false, "default", "cpu",
				  &borrowed), 3000);
	ck_assert_int_eq(borrowed, 1000);
	ck_assert_int_eq(usage_of(&w, "cq", true, "default", "cpu", NULL), 0);
	/* The write failed: usage released, workload back in the queue. */
	sched_wl_forget(w.s, "ns", "a");
	CHECK(&w);
	ck_assert(!sched_wl_holds_quota(w.s, "ns", "a"));
	ck_assert_int_eq(usage_of(&w, "cq", false, "default", "cpu", NULL),
			 0);
	sched_lq_status(w.s, "ns/lq", &lst);
	ck_assert_int_eq(lst.pending, 1);
	ck_assert_uint_eq(cycle(&w), 1);
	/* The write came back: confirmed, and admitted. */
	confirm(&w, "a", true);
	ck_assert(sched_wl_holds_quota(w.s, "ns", "a"));
	ck_assert_int_eq(usage_of(&w, "cq", true, "default", "cpu", NULL),
			 3000);
	sched_lq_status(w.s, "ns/lq", &lst);
	ck_assert_int_eq(lst.pending, 0);
	ck_assert_int_eq(lst.reserving, 1);
	ck_assert_int_eq(lst.admitted, 1);
	/* Finishing frees the quota. */
	finish(&w, "a");
	ck_assert(!sched_wl_holds_quota(w.s, "ns", "a"));
	ck_assert_int_eq(usage_of(&w, "cq", false, "default", "cpu", NULL),
			 0);
	world_free(&w);
}
END_TEST

START_TEST(quota_freed_requeues)
{
	struct world w;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", "co", "cpu: default=4");
	clusterqueue(&w, "sib", "co", "cpu: default=0");
	workload(&w, "a", 0, 1, "cq", "main:4:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	confirm(&w, "a", true);
	workload(&w, "b", 0, 2, "sib", "main:2:cpu=1");
	ck_assert_uint_eq(cycle(&w), 0);
	ck_assert(!sched_has_work(w.s)); /* b is parked */
	/* a finishes in cq: the event covers the whole cohort tree. */
	finish(&w, "a");
	ck_assert(sched_has_work(w.s));
	ck_assert_uint_eq(cycle(&w), 1);
	expect_admit(&w, "b");
	ck_assert_int_eq(dec_of(&w, "b")->borrowing, 1);
	world_free(&w);
}
END_TEST

START_TEST(usage_before_cq_exists)
{
	struct world w;
	struct workload *h = wl_new("ns", "held", 0, 1, "main:2:cpu=1");
	struct pod_set_assignment *p;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	h->has_admission = true;
	h->admission.cluster_queue = xstrdup("late");
	h->admission.psa = xcalloc(1, sizeof(*p));
	h->admission.npsa = 1;
	p = &h->admission.psa[0];
	p->name = xstrdup("main");
	smap_set(&p->flavors, "cpu", "default");
	reslist_set(&p->usage, "cpu", 2000);
	p->has_count = true;
	p->count = 2;
	conditions_set(&h->conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       "ok", 1, 1);
	wl_add(&w, h, "late");
	clusterqueue(&w, "late", NULL, "cpu: default=3");
	ck_assert_int_eq(usage_of(&w, "late", false, "default", "cpu", NULL),
			 2000);
	workload(&w, "x", 0, 2, "late", "main:2:cpu=1");
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "x",
		       "couldn't assign flavors to pod set main: insufficient "
		       "unused quota for cpu in flavor default, 1 more needed");
	world_free(&w);
}
END_TEST

START_TEST(namespace_mismatch)
{
	struct world w;
	struct cluster_queue *cq;
	struct smap labels = SMAP_INIT;
	const char *v = "a";

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	cq = cq_new("cq", NULL, "cpu: default=4");
	label_selector_add(&cq->ns_selector, "team", SEL_IN, &v, 1);
	cq_add(&w, cq);
	smap_set(&labels, "team", "b");
	sched_namespace_set(w.s, "ns", &labels);
	workload(&w, "x", 0, 1, "cq", "main:1:cpu=1");
	ck_assert_uint_eq(cycle(&w), 0);
	expect_pending(&w, "x",
		       "Workload namespace doesn't match ClusterQueue selector");
	/* Labels now match: the namespace event requeues it. */
	smap_set(&labels, "team", "a");
	sched_namespace_set(w.s, "ns", &labels);
	smap_release(&labels);
	ck_assert_uint_eq(cycle(&w), 1);
	world_free(&w);
}
END_TEST

START_TEST(active_condition)
{
	struct world w;
	struct cluster_queue *cq;
	struct sched_cq_status st;

	world_init(&w, NULL);
	cq = cq_new("cq", NULL, "cpu: a=4 b=4");
	cq->stop = STOP_HOLD;
	cq_add(&w, cq);
	sched_cq_status(w.s, "cq", &st);
	ck_assert(st.exists && !st.active);
	ck_assert_str_eq(st.reason, "Stopped");
	ck_assert_str_eq(st.message,
			 "Can't admit new workloads: is stopped, references "
			 "missing ResourceFlavor(s): a,b.");
	workload(&w, "x", 0, 1, "cq", "main:1:cpu=1");
	ck_assert(!sched_has_work(w.s));
	ck_assert_uint_eq(cycle(&w), 0);
	ck_assert_uint_eq(w.d.n, 0);

	cq = cq_new("cq", NULL, "cpu: a=4 b=4");
	cq_add(&w, cq);
	flavor(&w, "a", NULL, NULL);
	sched_cq_status(w.s, "cq", &st);
	ck_assert_str_eq(st.reason, "FlavorNotFound");
	ck_assert_str_eq(st.message, "Can't admit new workloads: references "
				     "missing ResourceFlavor(s): b.");
	flavor(&w, "b", NULL, NULL);
	sched_cq_status(w.s, "cq", &st);
	ck_assert(st.active);
	ck_assert_str_eq(st.reason, "Ready");
	ck_assert_str_eq(st.message, "Can admit new workloads");
	ck_assert(sched_has_work(w.s));
	ck_assert_uint_eq(cycle(&w), 1);

	cq = cq_new("cq", NULL, "cpu: a=4 b=4");
	cq->meta.deletion_ms = 5;
	cq_add(&w, cq);
	sched_cq_status(w.s, "cq", &st);
	ck_assert_str_eq(st.reason, "Terminating");
	ck_assert_str_eq(st.message, "Can't admit new workloads; clusterQueue "
				     "is terminating");
	world_free(&w);
}
END_TEST

static struct cohort *cohort_obj(struct world *w, const char *name,
				 const char *parent, const char *spec)
{
	struct cohort *co = xcalloc(1, sizeof(*co));

	co->meta.name = xstrdup(name);
	co->parent = xstrdup_or_null(parent);
	if (spec)
		groups(&co->groups, &co->ngroups, spec);
	w->co[w->nco++] = co;
	sched_cohort_set(w->s, co);
	CHECK(w);
	return co;
}

START_TEST(hierarchy_cycle_invalid)
{
	struct world w;
	struct sched_cq_status st;
	struct cluster_queue *bad;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	/* root (own quota 6) > mid > cq: borrowing from two levels up. */
	cohort_obj(&w, "root", NULL, "cpu: default=6");
	cohort_obj(&w, "mid", "root", NULL);
	clusterqueue(&w, "cq", "mid", "cpu: default=2");
	workload(&w, "x", 0, 1, "cq", "main:5:cpu=1");
	ck_assert_uint_eq(cycle(&w), 1);
	ck_assert_int_eq(dec_of(&w, "x")->borrowing, 2);

	/* A parent cycle disables the queues below it. */
	cohort_obj(&w, "root", "mid", "cpu: default=6");
	sched_cq_status(w.s, "cq", &st);
	ck_assert(!st.active);
	ck_assert_str_eq(st.reason, "CohortCycle");
	ck_assert_str_eq(st.message, "Can't admit new workloads: references "
				     "cohort mid, which is part of a cycle.");
	cohort_obj(&w, "root", NULL, "cpu: default=6");
	sched_cq_status(w.s, "cq", &st);
	ck_assert(st.active);

	/* An object that failed validation: kept, inactive, explained. */
	bad = xcalloc(1, sizeof(*bad));
	bad->meta.name = xstrdup("bad");
	w.cq[w.ncq++] = bad;
	sched_cq_set(w.s, bad, "spec.resourceGroups[0].flavors: Required "
			       "value");
	CHECK(&w);
	sched_cq_status(w.s, "bad", &st);
	ck_assert(st.exists && !st.active);
	ck_assert_str_eq(st.reason, "Invalid");
	ck_assert_str_eq(st.message, "Can't admit new workloads: "
				     "spec.resourceGroups[0].flavors: Required "
				     "value.");
	world_free(&w);
}
END_TEST

static void count_dirty(void *ud, const char *name)
{
	(void)name;
	(*(int *)ud)++;
}

START_TEST(dirty_sets)
{
	struct world w;
	int n = 0;

	world_init(&w, NULL);
	flavor(&w, "default", NULL, NULL);
	clusterqueue(&w, "cq", NULL, "cpu: default=4");
	workload(&w, "x", 0, 1, "cq", "main:1:cpu=1");
	sched_take_dirty(w.s, count_dirty, count_dirty, &n);
	ck_assert_int_eq(n, 2); /* cq and ns/lq, once each */
	n = 0;
	sched_take_dirty(w.s, count_dirty, count_dirty, &n);
	ck_assert_int_eq(n, 0);
	cycle(&w);
	sched_take_dirty(w.s, count_dirty, count_dirty, &n);
	ck_assert_int_eq(n, 2);
	world_free(&w);
}
END_TEST

/* ---- randomized: invariants under a random mix of inputs ------------- */

static uint64_t rng_state;

static unsigned rnd(unsigned n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)(rng_state >> 33) % n;
}

/* The total cpu reserved in a CQ (all flavors). */
static int64_t cq_cpu(struct world *w, const char *cq)
{
	struct flavor_usage *u;
	size_t n;
	int64_t v = 0;

	sched_cq_usage(w->s, cq, false, &u, &n);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < u[i].nres; k++)
			if (!strcmp(u[i].res[k].name, "cpu"))
				v += u[i].res[k].total;
	flavor_usages_release(u, n);
	return v;
}

START_TEST(random_invariants)
{
	static const char *const cqs[4] = { "solo", "strict", "c1", "c2" };
	struct world w;
	struct cluster_queue *cq;
	char name[32];
	int serial = 0;

	rng_state = 42 + (uint64_t)_i;
	world_init(&w, NULL);
	flavor(&w, "f1", NULL, NULL);
	flavor(&w, "f2", NULL, "spot=true:NoSchedule");
	clusterqueue(&w, "solo", NULL, "cpu: f1=6 f2=4");
	cq = cq_new("strict", NULL, "cpu: f1=5");
	cq->strategy = QS_STRICT_FIFO;
	cq_add(&w, cq);
	clusterqueue(&w, "c1", "co", "cpu: f1=4~b3");
	clusterqueue(&w, "c2", "co", "cpu: f1=4~l2 f2=2");
	for (int op = 0; op < 400; op++) {
		unsigned k = rnd(10);

		if (k < 4) {
			char spec[64];
			struct workload *x;

			snprintf(name, sizeof(name), "w%03d", serial++);
			snprintf(spec, sizeof(spec), "main:%u/%u:cpu=%u",
				 1 + rnd(4), 1 + rnd(2), 1 + rnd(3));
			x = wl_new("ns", name, (int)rnd(3), op, spec);
			if (rnd(3) == 0)
				add_toleration(x, "spot", "true");
			wl_add(&w, x, cqs[rnd(4)]);
		} else if (k < 7) {
			cycle(&w);
			/* Confirm some admissions, forget others. */
			for (size_t i = 0; i < w.d.n; i++) {
				const struct sched_decision *d = &w.d.v[i];

				if (d->kind != DEC_ADMIT)
					continue;
				if (rnd(4) == 0)
					sched_wl_forget(w.s, "ns",
							d->wl->meta.name);
				else
					confirm(&w, d->wl->meta.name,
						rnd(2) == 0);
				CHECK(&w);
			}
		} else if (k < 9 && w.nwl) {
			struct workload *x = w.wl[rnd((unsigned)w.nwl)];

			if (rnd(2))
				sched_wl_remove(w.s, "ns", x->meta.name);
			else if (sched_wl_holds_quota(w.s, "ns", x->meta.name))
				finish(&w, x->meta.name);
			CHECK(&w);
		} else {
			cq = cq_new("solo", NULL, rnd(2) ? "cpu: f1=6 f2=4"
							: "cpu: f1=3");
			cq->stop = rnd(3) == 0 ? STOP_HOLD : STOP_NONE;
			cq_add(&w, cq);
		}
		/* Never more than the quota: solo <= 10, strict <= 5, the
		 * cohort <= 4 + 4 + 2. */
		ck_assert_int_le(cq_cpu(&w, "solo"), 10000);
		ck_assert_int_le(cq_cpu(&w, "strict"), 5000);
		ck_assert_int_le(cq_cpu(&w, "c1") + cq_cpu(&w, "c2"), 10000);
		ck_assert_int_le(cq_cpu(&w, "c1"), 7000);
	}
	world_free(&w);
}
END_TEST

Suite *assign_suite(void)
{
	Suite *s = suite_create("assign");
	TCase *tc;

	tc = tcase_create("messages");
	tcase_add_test(tc, fit_and_admission);
	tcase_add_test(tc, msg_unused_quota);
	tcase_add_test(tc, msg_max_capacity);
	tcase_add_test(tc, msg_previous_podsets);
	tcase_add_test(tc, msg_undeclared);
	suite_add_tcase(s, tc);

	tc = tcase_create("flavor-matching");
	tcase_add_test(tc, flavor_taints_labels);
	tcase_add_test(tc, flavor_changes_invalidate_cache);
	suite_add_tcase(s, tc);

	tc = tcase_create("fungibility");
	tcase_add_test(tc, fung_borrow);
	tcase_add_test(tc, fung_borrow_all_borrow);
	tcase_add_test(tc, fung_preempt_next_flavor);
	suite_add_tcase(s, tc);

	tc = tcase_create("groups-partial-pods");
	tcase_add_test(tc, multi_groups);
	tcase_add_test(tc, partial_admission);
	tcase_add_test(tc, pods_resource);
	suite_add_tcase(s, tc);

	tc = tcase_create("cycle");
	tcase_add_test(tc, in_cycle_reservation);
	tcase_add_test(tc, fifo_strict_vs_best_effort);
	tcase_add_test(tc, assume_forget_confirm);
	tcase_add_test(tc, quota_freed_requeues);
	tcase_add_test(tc, usage_before_cq_exists);
	tcase_add_test(tc, namespace_mismatch);
	tcase_add_test(tc, active_condition);
	tcase_add_test(tc, dirty_sets);
	tcase_add_test(tc, hierarchy_cycle_invalid);
	suite_add_tcase(s, tc);

	tc = tcase_create("randomized");
	tcase_add_loop_test(tc, random_invariants, 0, 8);
	suite_add_tcase(s, tc);
	return s;
}
