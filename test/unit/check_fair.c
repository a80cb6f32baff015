/*
 * Suite "fair": a randomized property test of fair sharing in the
 * scheduling core (kueue-scheduler.md §2.5, §4.5, §4.6; issue 18),
 * through flavors/sched.h only.
 *
 * One flat cohort, one flavor, 3-5 ClusterQueues with random nominal
 * quotas and weights (0.5, 1, 2, 4), reclaimWithinCohort Any. Workloads
 * of 1-2 cpu arrive and finish at random; the decisions are applied as
 * the manager would (an admission is confirmed with QuotaReserved, a
 * preemption victim is removed), and cycles run until nothing changes,
 * every pending workload having been tried on the final state (the
 * ClusterQueue is set again, which requeues the tree). Then, with share
 * arithmetic of this file (exact fractions; fair.c is not used):
 *
 *  P0 no pending workload fits;
 *  P1 none would stay within its queue's nominal quota (it reclaims);
 *  P2 no pending p of A and first candidate v (§4.2 order) of the
 *     unique highest-share queue B with p fitting once v is gone and
 *     share(A with p) < share(B without v): S2-a takes v first;
 *  P3 the same with share(A with p) < share(B) when S2-a can take
 *     nothing anywhere (share(A with p) > share(T without w) for every
 *     workload w of every borrowing queue T): S2-b takes v first;
 *  P4 with all workloads of 1 cpu (odd seeds), for any workload v of B:
 *     p fits once v is gone and share(A with p) < share(B) never holds,
 *     i.e. no single fair preemption could lower the highest share.
 *
 * With mixed sizes P4 is not implied by Kueue's strategies (a first
 * candidate too small to make room can pass S2-a and leave shares
 * equal, so S2-b stops), hence P2/P3 there. After every cycle:
 * sched_check, and the reserved cpu per queue equals this file's sums
 * and never exceeds the cohort's quota. Seeds are fixed and printed,
 * with the state, on failure.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "flavors/fair.h"
#include "flavors/sched.h"
#include "model/objects.h"
#include "model/resources.h"
#include "model/selector.h"
#include "suites.h"
#include "test/support/support.h"

#define T0 INT64_C(1767225600000) /* 2026-01-01T00:00Z */
#define SEC INT64_C(1000)
#define MAXCQ 5
#define MAXWL 512

enum fstate { F_PENDING, F_HOLDS, F_GONE };

struct fwl {
	char name[16];
	int cq;               /* index in F.cq */
	int64_t cpu;          /* milli */
	int32_t prio;
	enum fstate st;
	int64_t admitted_ms;  /* QuotaReserved time while F_HOLDS */
	struct workload *w;   /* owned: the object last set */
};

struct ffx {
	struct sched *s;
	struct sched_decisions d;
	struct resource_flavor rf;
	struct cluster_queue cq[MAXCQ];
	size_t ncq;
	struct fwl wl[MAXWL];
	size_t nwl;
	int64_t now;
	uint64_t rng;
	unsigned seed, step;
	bool unit; /* every workload 1 cpu */
};

static struct ffx F;

static uint32_t rnd(uint32_t n)
{
	F.rng ^= F.rng << 13;
	F.rng ^= F.rng >> 7;
	F.rng ^= F.rng << 17;
	return (uint32_t)(F.rng % n);
}

/* ------------------------------------------------------------------ */
/* The model's arithmetic */

static int64_t nominal(int q)
{
	return F.cq[q].groups[0].flavors[0].res[0].nominal;
}

static int64_t weight(int q)
{
	return F.cq[q].fs_weight;
}

static int64_t usage(int q)
{
	int64_t u = 0;

	for (size_t i = 0; i < F.nwl; i++)
		if (F.wl[i].st == F_HOLDS && F.wl[i].cq == q)
			u += F.wl[i].cpu;
	return u;
}

static int64_t quota_sum(void)
{
	int64_t n = 0;

	for (size_t q = 0; q < F.ncq; q++)
		n += nominal((int)q);
	return n;
}

static int64_t free_cpu(void)
{
	int64_t u = 0;

	for (size_t q = 0; q < F.ncq; q++)
		u += usage((int)q);
	return quota_sum() - u;
}

/*
 * A share as the fraction num / den: max(0, u - nominal) / weight. The
 * common factor 1000 * 1000 / lendable (the same for every queue of a
 * flat cohort) is left out; no weight is 0.
 */
struct frac {
	int64_t num, den;
};

static struct frac share_at(int q, int64_t u)
{
	struct frac f = { u > nominal(q) ? u - nominal(q) : 0, weight(q) };

	return f;
}

static int frac_cmp(struct frac a, struct frac b)
{
	int64_t l = a.num * b.den, r = b.num * a.den;

	return l < r ? -1 : l > r;
}

/* §4.2 between two workloads of one other queue: lower priority, then
 * newer admission, then uid (the names sort as the uids do). */
static bool cand_before(const struct fwl *a, const struct fwl *b)
{
	if (a->prio != b->prio)
		return a->prio < b->prio;
	if (a->admitted_ms != b->admitted_ms)
		return a->admitted_ms > b->admitted_ms;
	return strcmp(a->name, b->name) < 0;
}

static const char *dump(void)
{
	static char buf[8192];
	size_t off = 0;

	off += (size_t)snprintf(buf + off, sizeof(buf) - off,
				"\n  seed %u step %u%s, free %" PRId64 "m",
				F.seed, F.step, F.unit ? " (unit)" : "",
				free_cpu());
	for (size_t q = 0; q < F.ncq; q++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					"\n  %s nominal %" PRId64 "m weight %"
					PRId64 "m usage %" PRId64 "m",
					F.cq[q].meta.name, nominal((int)q),
					weight((int)q), usage((int)q));
	for (size_t i = 0; i < F.nwl && off < sizeof(buf) - 100; i++) {
		const struct fwl *w = &F.wl[i];

		if (w->st == F_GONE)
			continue;
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					"\n    %s %s %s %" PRId64 "m prio %d"
					" at %" PRId64, w->name,
					F.cq[w->cq].meta.name,
					w->st == F_HOLDS ? "holds" : "pending",
					w->cpu, (int)w->prio,
					w->st == F_HOLDS ?
					(w->admitted_ms - T0) / SEC : 0);
	}
	return buf;
}

/* ------------------------------------------------------------------ */
/* The fixture */

static void cq_init(struct cluster_queue *cq, const char *name,
		    int64_t nominal_m, int64_t weight_m)
{
	struct resource_group *g;

	memset(cq, 0, sizeof(*cq));
	cq->meta.name = xstrdup(name);
	cq->meta.uid = xasprintf("uid-cq-%s", name);
	cq->meta.generation = 1;
	cq->meta.creation_ms = T0 - 3600 * SEC;
	cq->version = API_V1BETA1;
	cq->cohort = xstrdup("all");
	cq->strategy = QS_BEST_EFFORT_FIFO;
	cq->has_ns_selector = true;
	label_selector_init(&cq->ns_selector);
	cq->when_can_borrow = FUNG_MAY_STOP_SEARCH;
	cq->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
	cq->reclaim = RWC_ANY;
	cq->has_fs_weight = true;
	cq->fs_weight = weight_m;
	g = xcalloc(1, sizeof(*g));
	g->covered = xcalloc(1, sizeof(*g->covered));
	g->covered[0] = xstrdup("cpu");
	g->ncovered = 1;
	g->flavors = xcalloc(1, sizeof(*g->flavors));
	g->nflavors = 1;
	g->flavors[0].name = xstrdup("default");
	g->flavors[0].res = xcalloc(1, sizeof(*g->flavors[0].res));
	g->flavors[0].nres = 1;
	g->flavors[0].res[0].name = xstrdup("cpu");
	g->flavors[0].res[0].nominal = nominal_m;
	cq->groups = g;
	cq->ngroups = 1;
}

static void fx_begin(unsigned seed)
{
	static const int64_t weights[] = { 500, 1000, 2000, 4000 };
	struct sched_opts o;

	memset(&F, 0, sizeof(F));
	F.seed = seed;
	F.rng = (uint64_t)seed * UINT64_C(0x9E3779B97F4A7C15) + 1;
	F.unit = seed % 2 == 1;
	F.now = T0;
	sched_opts_default(&o);
	o.fair_sharing = true;
	F.s = sched_new(&o);
	F.rf.meta.name = xstrdup("default");
	F.rf.meta.uid = xstrdup("uid-rf-default");
	F.rf.meta.generation = 1;
	F.rf.version = API_V1BETA1;
	sched_flavor_set(F.s, &F.rf);
	F.ncq = 3 + rnd(3);
	for (size_t q = 0; q < F.ncq; q++) {
		char name[24];

		snprintf(name, sizeof(name), "q%zu", q);
		cq_init(&F.cq[q], name, (int64_t)rnd(5) * 1000,
			weights[rnd(4)]);
		sched_cq_set(F.s, &F.cq[q], NULL);
	}
	ck_assert(sched_check(F.s));
}

static void fx_end(void)
{
	sched_decisions_release(&F.d);
	sched_free(F.s);
	for (size_t i = 0; i < F.nwl; i++) {
		workload_release(F.wl[i].w);
		free(F.wl[i].w);
	}
	for (size_t q = 0; q < F.ncq; q++)
		cluster_queue_release(&F.cq[q]);
	resource_flavor_release(&F.rf);
	memset(&F, 0, sizeof(F));
}

static void wl_put(struct fwl *w, struct workload *obj)
{
	sched_wl_set(F.s, obj, F.cq[w->cq].meta.name, "ns/lq");
	if (w->w) {
		workload_release(w->w);
		free(w->w);
	}
	w->w = obj;
}

static void arrive(void)
{
	struct fwl *w;
	struct workload *obj;

	ck_assert_uint_lt(F.nwl, MAXWL);
	w = &F.wl[F.nwl];
	memset(w, 0, sizeof(*w));
	snprintf(w->name, sizeof(w->name), "w%04zu", F.nwl);
	F.nwl++;
	w->cq = (int)rnd((uint32_t)F.ncq);
	w->cpu = F.unit ? 1000 : 1000 * (1 + (int64_t)rnd(2));
	w->prio = (int32_t)rnd(3);
	w->st = F_PENDING;
	obj = t_workload("ns", w->name, w->prio, F.now, 1, w->cpu);
	obj->queue_name = xstrdup("lq");
	wl_put(w, obj);
}

static struct fwl *find(const char *name)
{
	for (size_t i = 0; i < F.nwl; i++)
		if (!strcmp(F.wl[i].name, name))
			return &F.wl[i];
	ck_abort_msg("unknown workload %s", name);
	return NULL;
}

static void gone(struct fwl *w)
{
	sched_wl_remove(F.s, "ns", w->name);
	w->st = F_GONE;
}

/* The admission written back: QuotaReserved and Admitted. */
static void confirm(struct fwl *w, const struct sched_decision *d)
{
	struct workload *obj = xcalloc(1, sizeof(*obj));

	workload_copy(obj, w->w);
	sched_decision_admission(F.s, d, &obj->admission);
	obj->has_admission = true;
	conditions_set(&obj->conds, "QuotaReserved", COND_TRUE,
		       "QuotaReserved", "Quota reserved", 1, F.now);
	conditions_set(&obj->conds, "Admitted", COND_TRUE, "Admitted",
		       "The workload is admitted", 1, F.now);
	w->st = F_HOLDS;
	w->admitted_ms = F.now;
	wl_put(w, obj);
}

/* sched_check, the reservation per queue and the cohort's quota. */
static void check_usage(void)
{
	ck_assert_msg(sched_check(F.s), "sched_check failed:%s", dump());
	ck_assert_msg(free_cpu() >= 0, "over-admitted:%s", dump());
	for (size_t q = 0; q < F.ncq; q++) {
		struct flavor_usage *u = NULL;
		size_t n = 0;
		int64_t got = 0;

		sched_cq_usage(F.s, F.cq[q].meta.name, false, &u, &n);
		for (size_t i = 0; i < n; i++)
			for (size_t r = 0; r < u[i].nres; r++)
				got += u[i].res[r].total;
		flavor_usages_release(u, n);
		ck_assert_msg(got == usage((int)q), "%s reserves %" PRId64
			      "m, expected %" PRId64 "m:%s",
			      F.cq[q].meta.name, got, usage((int)q), dump());
	}
}

/* One sched_cycle, its decisions applied; true when one admitted or
 * preempted. */
static bool cycle(void)
{
	bool moved = false;

	sched_decisions_clear(&F.d);
	sched_cycle(F.s, F.now, &F.d);
	for (size_t i = 0; i < F.d.n; i++) {
		const struct sched_decision *d = &F.d.v[i];
		struct fwl *w = find(d->wl->meta.name);

		if (d->kind == DEC_ADMIT) {
			ck_assert_msg(w->st == F_PENDING,
				      "%s admitted twice:%s", w->name, dump());
			confirm(w, d);
			moved = true;
		} else if (d->kind == DEC_PREEMPT) {
			ck_assert_msg(w->st == F_HOLDS, "%s preempted without"
				      " quota:%s", w->name, dump());
			ck_assert_str_ne(d->preempt_reason, "InClusterQueue");
			moved = true;
		}
	}
	/* victims gone only after every decision was read */
	for (size_t i = 0; i < F.d.n; i++)
		if (F.d.v[i].kind == DEC_PREEMPT)
			gone(find(F.d.v[i].wl->meta.name));
	check_usage();
	return moved;
}

/* Cycles until nothing moves on a freshly requeued tree. */
static void settle(void)
{
	bool requeued = false;

	for (int k = 0; k < 60; k++) {
		F.now += SEC;
		if (cycle()) {
			requeued = false;
			continue;
		}
		if (requeued)
			return;
		/* a ClusterQueue update requeues the whole tree (§1.4) */
		sched_cq_set(F.s, &F.cq[0], NULL);
		requeued = true;
	}
	ck_abort_msg("no fixpoint after 60 cycles:%s", dump());
}

/* ------------------------------------------------------------------ */
/* The properties at a fixpoint */

static void check_pending(const struct fwl *p)
{
	int a = p->cq, b = -1;
	int64_t fr = free_cpu();
	struct frac pnew = share_at(a, usage(a) + p->cpu), best = { 0, 1 };
	bool unique = false, s2a_none = true;
	const struct fwl *v = NULL;

	ck_assert_msg(fr < p->cpu, "P0: %s fits but is pending:%s", p->name,
		      dump());
	ck_assert_msg(usage(a) + p->cpu > nominal(a), "P1: %s within %s's "
		      "nominal is pending:%s", p->name, F.cq[a].meta.name,
		      dump());
	for (int q = 0; q < (int)F.ncq; q++) {
		struct frac s = share_at(q, usage(q));
		int c;

		if (q == a || !s.num)
			continue;
		c = b < 0 ? 1 : frac_cmp(s, best);
		if (c > 0) {
			b = q;
			best = s;
			unique = true;
		} else if (c == 0) {
			unique = false;
		}
		for (size_t i = 0; i < F.nwl; i++)
			if (F.wl[i].st == F_HOLDS && F.wl[i].cq == q &&
			    frac_cmp(pnew, share_at(q, usage(q) -
						    F.wl[i].cpu)) <= 0)
				s2a_none = false;
	}
	if (b < 0 || !unique)
		return;
	for (size_t i = 0; i < F.nwl; i++) {
		const struct fwl *w = &F.wl[i];

		if (w->st != F_HOLDS || w->cq != b)
			continue;
		if (!v || cand_before(w, v))
			v = w;
		/* P4 */
		ck_assert_msg(!F.unit || fr + w->cpu < p->cpu ||
			      frac_cmp(pnew, best) >= 0, "P4: preempting %s "
			      "for %s lowers the highest share:%s", w->name,
			      p->name, dump());
	}
	ck_assert_ptr_nonnull(v);
	if (fr + v->cpu < p->cpu)
		return;
	ck_assert_msg(frac_cmp(pnew, share_at(b, usage(b) - v->cpu)) >= 0,
		      "P2: S2-a would preempt %s for %s:%s", v->name, p->name,
		      dump());
	ck_assert_msg(!s2a_none || frac_cmp(pnew, best) >= 0, "P3: S2-b "
		      "would preempt %s for %s:%s", v->name, p->name, dump());
}

/* ------------------------------------------------------------------ */

START_TEST(random_fixpoints)
{
	size_t pending_checked = 0, admits = 0;

	for (unsigned k = 0; k < 8; k++) {
		fx_begin((unsigned)_i * 8 + k);
		for (F.step = 0; F.step < 40; F.step++) {
			unsigned n = rnd(4);

			for (size_t i = 0; i < F.nwl; i++)
				if (F.wl[i].st == F_HOLDS && !rnd(8))
					gone(&F.wl[i]);
			for (unsigned i = 0; i < n && F.nwl < MAXWL; i++)
				arrive();
			check_usage();
			settle();
			for (size_t i = 0; i < F.nwl; i++) {
				if (F.wl[i].st == F_HOLDS)
					admits++;
				if (F.wl[i].st != F_PENDING)
					continue;
				check_pending(&F.wl[i]);
				pending_checked++;
			}
		}
		fx_end();
	}
	/* the runs are not trivial: queues fill up and workloads wait */
	ck_assert_uint_gt(pending_checked, 200);
	ck_assert_uint_gt(admits, 200);
}
END_TEST

/* ------------------------------------------------------------------ */
/* flavors/fair.h on a tree, from kueue-scheduler.md §4.6 */

/* The spec's example: cohort capacity 8 cpu, a CQ of nominal 3 using 8
 * borrows 5: 5 * 1000 / 8 = 625. Weights divide it; a zero weight that
 * borrows is infinite and compares above everything; a root, and a node
 * within its quota, have share 0. */
START_TEST(drs_values)
{
	struct tree *t = tree_new();
	struct fair *f = fair_new();
	int co = tree_node(t, NODE_COHORT, "co");
	int a = tree_node(t, NODE_CQ, "a"), b = tree_node(t, NODE_CQ, "b");
	int cpu = tree_fr(t, "default", "cpu");
	int gpu = tree_fr(t, "default", "gpu");
	struct fair_drs da, db, dc, neg;

	tree_set_parent(t, a, co);
	tree_set_parent(t, b, co);
	tree_set_quota(t, a, cpu, 3000, TREE_UNLIMITED, TREE_UNLIMITED);
	tree_set_quota(t, b, cpu, 5000, TREE_UNLIMITED, TREE_UNLIMITED);
	tree_set_quota(t, a, gpu, 2000, TREE_UNLIMITED, TREE_UNLIMITED);
	tree_set_quota(t, b, gpu, 2000, TREE_UNLIMITED, TREE_UNLIMITED);
	tree_add_usage(t, a, cpu, 8000);
	fair_drs(f, t, a, &da);
	ck_assert(da.borrowing);
	ck_assert(fabs(da.ratio - 625) < 1e-9);
	ck_assert_str_eq(tree_fr_resource(t, da.dominant), "cpu");
	ck_assert_int_eq(fair_share_rounded(&da), 625);
	fair_drs(f, t, b, &db);
	ck_assert(!db.borrowing);
	ck_assert(fair_share(&db) == 0);
	fair_drs(f, t, co, &dc);
	ck_assert(!dc.borrowing && fair_share(&dc) == 0);
	ck_assert_int_lt(fair_cmp(&db, &da), 0);
	/* gpu: 1 borrowed of 4 lendable = 250 < 625: cpu stays dominant */
	tree_add_usage(t, a, gpu, 3000);
	fair_drs(f, t, a, &da);
	ck_assert(fabs(da.ratio - 625) < 1e-9);
	/* a tie between resources (gpu 2.5 of 4 = cpu 5 of 8): the
	 * alphabetically first one */
	tree_add_usage(t, a, gpu, 4500 - 3000);
	fair_drs(f, t, a, &da);
	ck_assert(fabs(da.ratio - 625) < 1e-9);
	ck_assert_str_eq(tree_fr_resource(t, da.dominant), "cpu");
	/* weight 2 halves the share, weight 0 makes it infinite */
	tree_set_weight(t, a, 2000);
	fair_drs(f, t, a, &da);
	ck_assert(fabs(fair_share(&da) - da.ratio / 2) < 1e-9);
	tree_set_weight(t, a, 0);
	fair_drs(f, t, a, &da);
	ck_assert(isinf(fair_share(&da)));
	ck_assert_int_eq(fair_share_rounded(&da), INT64_MAX);
	ck_assert_int_gt(fair_cmp(&da, &db), 0);
	fair_drs_negative(&neg);
	ck_assert_int_lt(fair_cmp(&neg, &db), 0);
	/* borrowing on: only the flavor-resources asked for count */
	{
		struct fr_val gpu1 = { gpu, 1000 }, none = { gpu, 0 };

		ck_assert(fair_borrowing_on(t, a, &gpu1, 1));
		ck_assert(!fair_borrowing_on(t, a, &none, 1));
		ck_assert(!fair_borrowing_on(t, b, &gpu1, 1));
	}
	fair_free(f);
	tree_free(t);
}
END_TEST

Suite *fair_suite(void)
{
	Suite *s = suite_create("fair");
	TCase *tc = tcase_create("property");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, random_fixpoints, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("drs");
	tcase_add_test(tc, drs_values);
	suite_add_tcase(s, tc);
	return s;
}
