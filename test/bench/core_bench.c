/*
 * core_bench: the scheduling core (flavors/sched.h) in memory, no I/O.
 * Built by the Makefile as build/<cfg>/core-bench (libcore only) and run
 * by test/bench/run.sh; prints ROW lines (see run.sh for the protocol).
 *
 *  1. Drain: 46 pending workloads over 8 ClusterQueues in 2 cohorts
 *     (flavors on-demand / spot with a taint, GPU flavors a100 / t4 with
 *     labels, mixed sizes and priorities, some borrowing), cycled until
 *     sched_has_work is false; repeated on fresh state. Figure: CPU
 *     microseconds per decision (CLOCK_PROCESS_CPUTIME_ID around the
 *     sched_cycle calls only). Checks every workload got admitted.
 *  2. Scale: Kueue's large-scale performance shape (kueue-scheduler.md
 *     §8.4): 1,000 ClusterQueues in 10 cohorts (nominal 20 cpu, borrowing
 *     limit 100), 50 workloads each (35 x 1 cpu prio 50, 11 x 5 cpu prio
 *     100, 4 x 20 cpu prio 200) = 50,000 pending. Figures: CPU time of
 *     the first sched_cycle (admits what fits), of a steady-state cycle
 *     (one admitted workload finished, a requeue event for its cohort,
 *     with every other workload pending: the manager's cost per finish),
 *     and of the cycle after a workload of each cohort finished; plus
 *     sched_wl_set cost per workload.
 *  3. Replay: Kueue's baseline (§8.2) and large-scale (§8.4) scenarios in
 *     memory with a simulated clock (creations at the generator's
 *     intervals, finishes after the runtimes, one sched_cycle per instant
 *     with an event; admissions confirmed and preemption victims put
 *     back in their queue with the reservation cleared, as the manager's
 *     informer reports them; a victim runs its full runtime again from
 *     its next admission). Figure: CPU µs of every sched call per
 *     workload.
 *     CORE_BENCH_NO_EQUIV=1 adds both replays without scheduling
 *     equivalence (minutes at full size); CORE_BENCH_BATCH_MS=N replays
 *     with opts.requeue_batch_ms = N.
 *  4. Preemption: the cost of one classical preemption decision (§4)
 *     with 10, 100 and 1,000 admitted candidates in the cohort: one
 *     high-priority pending workload, n confirmed low-priority holders
 *     of random sizes, the cohort full; one sched_cycle issues the
 *     DEC_PREEMPTs and the preemptor's pending decision. Figure: CPU µs
 *     of that cycle, and the growth from 10 to 100 to 1,000.
 *     CORE_BENCH_ONLY=preemption runs this part alone.
 *
 * QUICK=1: fewer repetitions, 100 ClusterQueues (5,000 workloads) for the
 * scale shape, and replays on 6 and 100 ClusterQueues.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "flavors/sched.h"
#include "model/objects.h"

static double cpu_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* ---- object builders ---- */

static struct resource_flavor *mk_flavor(const char *name, const char *lk,
					 const char *lv, const char *taint)
{
	struct resource_flavor *rf = xcalloc(1, sizeof(*rf));

	rf->meta.name = xstrdup(name);
	if (lk)
		smap_set(&rf->node_labels, lk, lv);
	if (taint) {
		rf->taints = xcalloc(1, sizeof(*rf->taints));
		rf->ntaints = 1;
		rf->taints[0].key = xstrdup(taint);
		rf->taints[0].value = xstrdup("true");
		rf->taints[0].effect = EFFECT_NO_SCHEDULE;
	}
	return rf;
}

struct fq {
	const char *flavor;
	int64_t nominal[3]; /* milli-units per covered resource */
	int64_t borrow;     /* < 0: nil */
};

static void add_group(struct cluster_queue *cq, const char *const *res,
		      size_t nres, const struct fq *fqs, size_t nf)
{
	struct resource_group *g;

	cq->groups = xrealloc(cq->groups, (cq->ngroups + 1) * sizeof(*g));
	g = &cq->groups[cq->ngroups++];
	memset(g, 0, sizeof(*g));
	g->covered = xcalloc(nres, sizeof(char *));
	g->ncovered = nres;
	for (size_t i = 0; i < nres; i++)
		g->covered[i] = xstrdup(res[i]);
	g->flavors = xcalloc(nf, sizeof(*g->flavors));
	g->nflavors = nf;
	for (size_t j = 0; j < nf; j++) {
		struct flavor_quotas *f = &g->flavors[j];

		f->name = xstrdup(fqs[j].flavor);
		f->res = xcalloc(nres, sizeof(*f->res));
		f->nres = nres;
		for (size_t i = 0; i < nres; i++) {
			f->res[i].name = xstrdup(res[i]);
			f->res[i].nominal = fqs[j].nominal[i];
			if (fqs[j].borrow >= 0) {
				f->res[i].has_borrowing = true;
				f->res[i].borrowing = fqs[j].borrow;
			}
		}
	}
}

static struct cluster_queue *mk_cq(const char *name, const char *cohort)
{
	struct cluster_queue *cq = xcalloc(1, sizeof(*cq));

	cq->meta.name = xstrdup(name);
	cq->cohort = xstrdup_or_null(cohort);
	cq->has_ns_selector = true;
	cq->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
	return cq;
}

static struct workload *mk_wl(const char *name, int prio, int64_t ts,
			      int32_t count, int64_t cpu_m, int64_t mem,
			      int64_t gpu, const char *gpu_label, bool spot)
{
	struct workload *w = xcalloc(1, sizeof(*w));
	struct pod_set *ps;
	struct container_res *c;
	char uid[64];

	w->meta.namespace = xstrdup("bench");
	w->meta.name = xstrdup(name);
	snprintf(uid, sizeof(uid), "uid-%s", name);
	w->meta.uid = xstrdup(uid);
	w->meta.creation_ms = ts;
	w->meta.generation = 1;
	w->has_priority = true;
	w->priority = prio;
	w->active = true;
	w->pod_sets = xcalloc(1, sizeof(*ps));
	w->npod_sets = 1;
	ps = &w->pod_sets[0];
	ps->name = xstrdup("main");
	ps->count = count;
	node_affinity_init(&ps->tmpl.affinity);
	ps->tmpl.containers = xcalloc(1, sizeof(*c));
	ps->tmpl.ncontainers = 1;
	c = &ps->tmpl.containers[0];
	c->name = xstrdup("c");
	reslist_set(&c->requests, "cpu", cpu_m);
	if (mem)
		reslist_set(&c->requests, "memory", mem);
	if (gpu)
		reslist_set(&c->requests, "nvidia.com/gpu", gpu);
	if (gpu_label)
		smap_set(&ps->tmpl.node_selector, "gpu", gpu_label);
	if (spot) {
		ps->tmpl.tols = xcalloc(1, sizeof(*ps->tmpl.tols));
		ps->tmpl.ntols = 1;
		ps->tmpl.tols[0].key = xstrdup("spot");
		ps->tmpl.tols[0].value = xstrdup("true");
		ps->tmpl.tols[0].effect = EFFECT_NO_SCHEDULE;
	}
	return w;
}

/* ---- 1. drain ---- */

#define GI (1024LL * 1024 * 1024 * 1000) /* 1Gi in milli-units */

struct drain {
	struct resource_flavor *rf[4];
	struct cluster_queue *cq[8];
	struct workload *wl[46];
	char cqname[8][24];
};

static void drain_build(struct drain *d)
{
	static const char *const cm[2] = { "cpu", "memory" };
	static const char *const gp[1] = { "nvidia.com/gpu" };

	d->rf[0] = mk_flavor("on-demand", NULL, NULL, NULL);
	d->rf[1] = mk_flavor("spot", NULL, NULL, "spot");
	d->rf[2] = mk_flavor("a100", "gpu", "a100", NULL);
	d->rf[3] = mk_flavor("t4", "gpu", "t4", NULL);
	for (int i = 0; i < 8; i++) {
		struct fq cpu[2] = {
			{ "on-demand", { 40000, 160 * GI }, -1 },
			{ "spot", { 16000, 64 * GI }, -1 },
		};
		struct fq gpu[2] = {
			{ "a100", { 4000 }, -1 },
			{ "t4", { 8000 }, -1 },
		};

		snprintf(d->cqname[i], sizeof(d->cqname[i]), "team-%d", i);
		d->cq[i] = mk_cq(d->cqname[i], i < 4 ? "research" : "prod");
		/* Two queues per cohort lend most of their on-demand. */
		if (i % 4 >= 2)
			cpu[0].nominal[0] = 10000;
		add_group(d->cq[i], cm, 2, cpu, 2);
		if (i % 2 == 0)
			add_group(d->cq[i], gp, 1, gpu, 2);
	}
	for (int k = 0; k < 46; k++) {
		int cq = k % 8;
		bool gpu = cq % 2 == 0 && k % 3 == 0;
		char name[32];

		snprintf(name, sizeof(name), "wl-%02d", k);
		d->wl[k] = mk_wl(name, (k * 7) % 3 * 100, 1000 + k,
				 1 + k % 4, 500 + (k % 5) * 500,
				 (1 + k % 3) * GI / 2, gpu ? 1000 : 0,
				 gpu ? (k % 2 ? "t4" : "a100") : NULL,
				 k % 5 == 0);
	}
}

static void drain_free(struct drain *d)
{
	for (int i = 0; i < 4; i++) {
		resource_flavor_release(d->rf[i]);
		free(d->rf[i]);
	}
	for (int i = 0; i < 8; i++) {
		cluster_queue_release(d->cq[i]);
		free(d->cq[i]);
	}
	for (int i = 0; i < 46; i++) {
		workload_release(d->wl[i]);
		free(d->wl[i]);
	}
}

static int bench_drain(int reps)
{
	struct drain d;
	struct sched_decisions out = { 0 };
	double total_us = 0;
	size_t decisions = 0, admitted = 0, pending = 0;
	int ok = 0;

	drain_build(&d);
	for (int r = 0; r < reps; r++) {
		struct sched *s = sched_new(NULL);
		size_t adm = 0;
		double t0;
		int64_t now = 5000;

		for (int i = 0; i < 4; i++)
			sched_flavor_set(s, d.rf[i]);
		for (int i = 0; i < 8; i++)
			sched_cq_set(s, d.cq[i], NULL);
		for (int k = 0; k < 46; k++)
			sched_wl_set(s, d.wl[k], d.cqname[k % 8], "bench/lq");
		t0 = cpu_us();
		while (sched_has_work(s)) {
			adm += sched_cycle(s, now++, &out);
			decisions += out.n;
			for (size_t i = 0; i < out.n; i++)
				if (out.v[i].kind == DEC_PENDING) {
					pending++;
					if (getenv("CORE_BENCH_DEBUG") && !r)
						fprintf(stderr, "%s: %s\n",
							out.v[i].wl->meta.name,
							out.v[i].message);
				}
			sched_decisions_clear(&out);
		}
		total_us += cpu_us() - t0;
		admitted += adm;
		if (adm != 46) {
			fprintf(stderr, "core-bench: drain admitted %zu of 46\n",
				adm);
			ok = 1;
		}
		if (!sched_check(s)) {
			fprintf(stderr, "core-bench: sched_check failed\n");
			ok = 1;
		}
		sched_free(s);
	}
	sched_decisions_release(&out);
	drain_free(&d);
	{
		double per = total_us / (double)decisions;

		printf("ROW\tcore: drain 46 workloads over 8 ClusterQueues, 2 "
		       "cohorts\t%.2f\tCPU µs per decision\tKueue: 48–61 "
		       "µs\t%.3f\tsched_cycle until sched_has_work is false, "
		       "%d repetitions on fresh state; %zu decisions (%zu "
		       "admit, %zu pending); CPU time of the cycles only\n",
		       per, per / 48.0, reps, decisions, admitted, pending);
	}
	return ok;
}

/* ---- 2. scale ---- */

static int bench_scale(int ncq, int ncohort)
{
	static const char *const c1[1] = { "cpu" };
	struct resource_flavor *rf = mk_flavor("rf", NULL, NULL, NULL);
	struct cluster_queue **cqs = xcalloc((size_t)ncq, sizeof(*cqs));
	size_t nwl = (size_t)ncq * 50;
	struct workload **wls = xcalloc(nwl, sizeof(*wls));
	char (*names)[24] = xcalloc((size_t)ncq, sizeof(*names));
	struct sched *s = sched_new(NULL);
	struct sched_decisions out = { 0 };
	double t0, set_us, first_us, steady_us = 0, after_us;
	size_t first_adm, first_dec, steady_dec = 0, after_adm, after_dec;
	int nsteady = 0, ok = 0;
	size_t k = 0;

	sched_flavor_set(s, rf);
	for (int i = 0; i < ncq; i++) {
		struct fq q = { "rf", { 20000 }, 100000 };
		char cohort[16];

		snprintf(names[i], sizeof(names[i]), "cq-%04d", i);
		snprintf(cohort, sizeof(cohort), "cohort-%d", i % ncohort);
		cqs[i] = mk_cq(names[i], cohort);
		cqs[i]->reclaim = RWC_ANY;
		cqs[i]->within_cq = WCQ_LOWER_PRIORITY;
		add_group(cqs[i], c1, 1, &q, 1);
		sched_cq_set(s, cqs[i], NULL);
	}
	for (int i = 0; i < ncq; i++) {
		for (int j = 0; j < 50; j++, k++) {
			char name[32];
			int prio = j < 35 ? 50 : j < 46 ? 100 : 200;
			int64_t cpu = j < 35 ? 1000 : j < 46 ? 5000 : 20000;

			snprintf(name, sizeof(name), "w-%04d-%02d", i, j);
			wls[k] = mk_wl(name, prio, 1000 + j, 1, cpu, 0, 0,
				       NULL, false);
		}
	}
	t0 = cpu_us();
	for (size_t w = 0; w < nwl; w++)
		sched_wl_set(s, wls[w], names[w / 50], "bench/lq");
	set_us = cpu_us() - t0;

	/* The first cycle: admits what fits. */
	t0 = cpu_us();
	first_adm = sched_cycle(s, 10000, &out);
	first_us = cpu_us() - t0;
	first_dec = out.n;
	sched_decisions_clear(&out);
	if (!sched_check(s)) {
		fprintf(stderr, "core-bench: sched_check failed\n");
		ok = 1;
	}
	/* Steady state: one admitted workload finishes (a requeue event for
	 * its cohort tree, 1/ncohort of the queues), then one cycle: what
	 * the manager pays per finish with every workload pending. */
	for (nsteady = 0; nsteady < 20; nsteady++) {
		size_t victim = (size_t)nsteady * 50 + 46;

		sched_wl_remove(s, "bench", wls[victim]->meta.name);
		t0 = cpu_us();
		sched_cycle(s, 10001 + nsteady, &out);
		steady_us += cpu_us() - t0;
		steady_dec += out.n;
		sched_decisions_clear(&out);
	}
	/* Quota freed: one admitted workload per cohort finishes; the
	 * events requeue every parked workload of its cohort tree. */
	for (int c = 0; c < ncohort; c++)
		sched_wl_remove(s, "bench",
				wls[(size_t)(c + 20) * 50 + 46]->meta.name);
	t0 = cpu_us();
	after_adm = sched_cycle(s, 20000, &out);
	after_us = cpu_us() - t0;
	after_dec = out.n;
	sched_decisions_clear(&out);
	if (!sched_check(s)) {
		fprintf(stderr, "core-bench: sched_check failed\n");
		ok = 1;
	}

	printf("ROW\tcore: %d ClusterQueues / %d cohorts / %zu workloads: "
	       "first cycle\t%.1f\tCPU ms\t—\t—\tone sched_cycle on %zu pending "
	       "workloads (Kueue large-scale shape, §8.4): %zu admitted, %zu "
	       "decisions, %.2f µs per decision\n",
	       ncq, ncohort, nwl, first_us / 1e3, nwl, first_adm, first_dec,
	       first_us / (double)first_dec);
	printf("ROW\tcore: %d ClusterQueues / %d cohorts / %zu workloads: "
	       "steady-state cycle\t%.2f\tCPU ms\t—\t—\tmean of %d cycles, "
	       "each after one admitted workload finished (a requeue event "
	       "for one cohort) with the rest pending (%.2f µs per "
	       "decision)\n",
	       ncq, ncohort, nwl, nsteady ? steady_us / nsteady / 1e3 : 0.0,
	       nsteady,
	       steady_dec ? steady_us / (double)steady_dec : 0.0);
	printf("ROW\tcore: %d ClusterQueues / %d cohorts / %zu workloads: "
	       "cycle after quota freed\t%.2f\tCPU ms\t—\t—\tone admitted "
	       "workload per cohort removed, then one sched_cycle: %zu "
	       "admitted, %zu decisions\n",
	       ncq, ncohort, nwl, after_us / 1e3, after_adm, after_dec);
	printf("ROW\tcore: sched_wl_set of a pending workload\t%.2f\tCPU "
	       "µs\t—\t—\t%zu workloads queued into %d ClusterQueues "
	       "(compiles per-pod requests)\n",
	       set_us / (double)nwl, nwl, ncq);

	sched_decisions_release(&out);
	sched_free(s);
	for (size_t w = 0; w < nwl; w++) {
		workload_release(wls[w]);
		free(wls[w]);
	}
	for (int i = 0; i < ncq; i++) {
		cluster_queue_release(cqs[i]);
		free(cqs[i]);
	}
	resource_flavor_release(rf);
	free(rf);
	free(wls);
	free(cqs);
	free(names);
	return ok;
}

/* ---- 3. replay ---- */

/* One workload set of a Kueue performance scenario (§8.2, §8.4). */
struct wset {
	int count;       /* per ClusterQueue */
	int64_t every;   /* creation interval, ms */
	int64_t runtime; /* ms after admission */
	int prio;
	int64_t cpu_m;
};

struct ev {
	int64_t at;
	size_t wl;
	int epoch; /* finishes: the admission it ends (stale when the
		      workload was preempted since) */
};

static void ev_push(struct ev **h, size_t *n, size_t *cap, struct ev e)
{
	size_t i;

	XGROW(*h, *cap, *n + 1);
	i = (*n)++;
	while (i > 0 && (*h)[(i - 1) / 2].at > e.at) {
		(*h)[i] = (*h)[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	(*h)[i] = e;
}

static struct ev ev_pop(struct ev *h, size_t *n)
{
	struct ev top = h[0], last = h[--*n];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, b = l;

		if (l >= *n)
			break;
		if (l + 1 < *n && h[l + 1].at < h[l].at)
			b = l + 1;
		if (h[b].at >= last.at)
			break;
		h[i] = h[b];
		i = b;
	}
	if (*n)
		h[i] = last;
	return top;
}

static int cmp_ev(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;

	if (a->at != b->at)
		return a->at < b->at ? -1 : 1;
	return a->wl < b->wl ? -1 : a->wl > b->wl;
}

/* The replay's index of workload w ("r-<cq>-<set>-<n>"). */
static size_t replay_index(const struct workload *w, size_t per,
			   const struct wset *sets)
{
	int ci, sj, n;
	size_t idx;

	if (sscanf(w->meta.name, "r-%d-%d-%d", &ci, &sj, &n) != 3)
		BUG("replay: workload %s", w->meta.name);
	idx = (size_t)ci * per;
	for (int j = 0; j < sj; j++)
		idx += (size_t)sets[j].count;
	return idx + (size_t)n;
}

/* The set of the replay's workload idx. */
static int replay_set(size_t idx, size_t per, const struct wset *sets)
{
	size_t k = idx % per;
	int j = 0;

	while (k >= (size_t)sets[j].count)
		k -= (size_t)sets[j++].count;
	return j;
}

/*
 * Replays a scenario in memory with a simulated clock: every workload is
 * created at its generator time (each set waits its interval before each
 * creation), an admitted one finishes runtime ms after its admission
 * (sched_wl_remove: a requeue event), and one sched_cycle runs at every
 * instant something happened. Figure: CPU µs of every sched call
 * (sets, removes, cycles) per workload, over the whole replay.
 */
static int bench_replay(const char *what, int ncq, int ncohort,
			const struct wset *sets, int nsets, bool equivalence)
{
	static const char *const c1[1] = { "cpu" };
	struct resource_flavor *rf = mk_flavor("rf", NULL, NULL, NULL);
	struct cluster_queue **cqs = xcalloc((size_t)ncq, sizeof(*cqs));
	char (*names)[24] = xcalloc((size_t)ncq, sizeof(*names));
	size_t per = 0, nwl, k = 0, done = 0, cycles = 0, decisions = 0;
	struct workload **wls;
	size_t *cq_of;
	struct ev *arr, *fin = NULL;
	size_t nfin = 0, capfin = 0, ai = 0;
	struct sched_opts o;
	struct sched *s;
	struct sched_decisions out = { 0 };
	double t0, cpu = 0;
	int64_t now = 0;
	int ok = 0, idle = 0, *epoch;
	size_t npreempt = 0;

	for (int j = 0; j < nsets; j++)
		per += (size_t)sets[j].count;
	nwl = per * (size_t)ncq;
	wls = xcalloc(nwl, sizeof(*wls));
	cq_of = xcalloc(nwl, sizeof(*cq_of));
	arr = xcalloc(nwl, sizeof(*arr));
	epoch = xcalloc(nwl, sizeof(*epoch));
	sched_opts_default(&o);
	o.no_equivalence = !equivalence;
	if (getenv("CORE_BENCH_BATCH_MS"))
		o.requeue_batch_ms = atoll(getenv("CORE_BENCH_BATCH_MS"));
	s = sched_new(&o);
	sched_flavor_set(s, rf);
	for (int i = 0; i < ncq; i++) {
		struct fq q = { "rf", { 20000 }, 100000 };
		char cohort[32];

		snprintf(names[i], sizeof(names[i]), "cq-%04d", i);
		snprintf(cohort, sizeof(cohort), "cohort-%d", i % ncohort);
		cqs[i] = mk_cq(names[i], cohort);
		cqs[i]->reclaim = RWC_ANY;
		cqs[i]->within_cq = WCQ_LOWER_PRIORITY;
		add_group(cqs[i], c1, 1, &q, 1);
		sched_cq_set(s, cqs[i], NULL);
	}
	for (int i = 0; i < ncq; i++) {
		for (int j = 0; j < nsets; j++) {
			for (int n = 0; n < sets[j].count; n++, k++) {
				char name[40];
				int64_t at = (int64_t)(n + 1) * sets[j].every;

				snprintf(name, sizeof(name), "r-%04d-%d-%03d",
					 i, j, n);
				wls[k] = mk_wl(name, sets[j].prio, at, 1,
					       sets[j].cpu_m, 0, 0, NULL,
					       false);
				cq_of[k] = (size_t)i;
				arr[k] = (struct ev){ at, k, 0 };
			}
		}
	}
	qsort(arr, nwl, sizeof(*arr), cmp_ev);
	while (ai < nwl || nfin || (sched_has_work(s) && idle < 3)) {
		int64_t next = ai < nwl ? arr[ai].at : INT64_MAX;
		int64_t wake = sched_next_wakeup(s);
		bool event = false;

		if (nfin && fin[0].at < next)
			next = fin[0].at;
		if (wake && wake > now && wake < next)
			next = wake;
		/* a preemptor whose victims just left: at once */
		if (sched_has_work(s) && idle < 3)
			next = now;
		idle = next == now ? idle + 1 : 0;
		now = next;
		t0 = cpu_us();
		while (ai < nwl && arr[ai].at == now) {
			size_t w = arr[ai++].wl;

			sched_wl_set(s, wls[w], names[cq_of[w]], "bench/lq");
			event = true;
		}
		while (nfin && fin[0].at == now) {
			struct ev e = ev_pop(fin, &nfin);

			if (e.epoch != epoch[e.wl])
				continue; /* preempted since */
			sched_wl_remove(s, "bench", wls[e.wl]->meta.name);
			done++;
			event = true;
		}
		if (event)
			idle = 0;
		sched_cycle(s, now, &out);
		/* What the manager's writes and its informer then tell sched
		 * (in the timed part: the manager pays for them too): each
		 * admission confirmed (QuotaReserved=True with the decided
		 * admission), each preemption victim evicted with its
		 * reservation cleared, as the eviction write of a Workload
		 * without an owner does: pending again. The admissions are
		 * built first: a set may change what a decision points at. */
		for (size_t i = 0; i < out.n; i++) {
			const struct sched_decision *d = &out.v[i];
			size_t idx;

			if (d->kind != DEC_ADMIT && d->kind != DEC_PREEMPT)
				continue;
			idx = replay_index(d->wl, per, sets);
			if (d->kind == DEC_ADMIT) {
				sched_decision_admission(s, d,
							 &wls[idx]->admission);
				wls[idx]->has_admission = true;
			}
		}
		for (size_t i = 0; i < out.n; i++) {
			const struct sched_decision *d = &out.v[i];
			struct workload *w;
			size_t idx;
			int sj;

			if (d->kind != DEC_ADMIT && d->kind != DEC_PREEMPT)
				continue;
			idx = replay_index(d->wl, per, sets);
			w = wls[idx];
			sj = replay_set(idx, per, sets);
			epoch[idx]++;
			if (d->kind == DEC_ADMIT) {
				conditions_set(&w->conds, "QuotaReserved",
					       COND_TRUE, "QuotaReserved", "", 1,
					       now);
				conditions_set(&w->conds, "Admitted",
					       COND_TRUE, "Admitted", "", 1,
					       now);
				ev_push(&fin, &nfin, &capfin,
					(struct ev){ now + sets[sj].runtime,
						     idx, epoch[idx] });
			} else {
				npreempt++;
				conditions_set(&w->conds, "Evicted", COND_TRUE,
					       "Preempted", "", 1, now);
				conditions_set(&w->conds, "Preempted",
					       COND_TRUE, d->preempt_reason, "",
					       1, now);
				conditions_set(&w->conds, "QuotaReserved",
					       COND_FALSE, "Pending", "", 1, now);
				conditions_set(&w->conds, "Admitted",
					       COND_FALSE, "NoReservation", "", 1,
					       now);
				admission_release(&w->admission);
				w->has_admission = false;
			}
			sched_wl_set(s, w, names[cq_of[idx]], "bench/lq");
		}
		cpu += cpu_us() - t0;
		cycles++;
		decisions += out.n;
		sched_decisions_clear(&out);
	}
	if (done != nwl) {
		fprintf(stderr, "core-bench: replay finished %zu of %zu\n",
			done, nwl);
		ok = 1;
	}
	if (!sched_check(s)) {
		fprintf(stderr, "core-bench: sched_check failed\n");
		ok = 1;
	}
	if (o.requeue_batch_ms)
		fprintf(stderr, "core-bench: requeue batch %lld ms\n",
			(long long)o.requeue_batch_ms);
	printf("ROW\tcore: replay of %s (%d CQs / %d cohorts, %zu "
	       "workloads)%s\t%.2f\tCPU µs per workload\t0.5 ms "
	       "(manager aim, in total)\t%.3f\tin memory, simulated clock: "
	       "creations at the generator's intervals, finishes after the "
	       "runtimes (a requeue event each), one sched_cycle per instant "
	       "with an event, admissions confirmed and preemption victims "
	       "requeued (reservation cleared) as the manager's informer "
	       "reports them; CPU of every sched call; %zu cycles, %zu "
	       "decisions, %zu preemptions, simulated makespan %.1f s\n",
	       what, ncq, ncohort, nwl,
	       equivalence ? "" : " without equivalence",
	       cpu / (double)nwl, cpu / (double)nwl / 500.0, cycles,
	       decisions, npreempt, (double)now / 1e3);
	sched_decisions_release(&out);
	sched_free(s);
	for (size_t w = 0; w < nwl; w++) {
		workload_release(wls[w]);
		free(wls[w]);
	}
	for (int i = 0; i < ncq; i++) {
		cluster_queue_release(cqs[i]);
		free(cqs[i]);
	}
	resource_flavor_release(rf);
	free(rf);
	free(wls);
	free(cq_of);
	free(arr);
	free(epoch);
	free(fin);
	free(cqs);
	free(names);
	return ok;
}

/* ---- 4. preemption ---- */

#define PCQS 4 /* ClusterQueues of the cohort; cq 0 is the preemptor's */

/* A small deterministic generator (xorshift32): the same sizes every run. */
static uint32_t rnd(uint32_t *st)
{
	uint32_t x = *st;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	*st = x;
	return x;
}

struct pre_res {
	double us;      /* CPU µs per decision (mean) */
	double min_us;  /* fastest repetition */
	size_t victims; /* DEC_PREEMPTs per decision */
	size_t same_cq; /* of those, in the preemptor's ClusterQueue */
};

/*
 * One cohort of PCQS ClusterQueues, all withinClusterQueue LowerPriority
 * and reclaimWithinCohort Any (Kueue's scenario settings), one flavor of
 * cpu. n holders of 1..8 cpu and priority 0..99: 30 % in cq 0, the rest
 * spread over the others. Nominal quotas: cq 0 gets its holders' usage
 * plus half of what the others use, the others share the rest, so the
 * cohort is exactly full, cq 0 is below its nominal quota and the others
 * borrow from it. The preemptor (priority 1000, up to 12 cpu: what cq 0
 * has left below its nominal) then fits only by reclaiming from the
 * borrowers or preempting cq 0's own lower-priority holders, and is
 * within its nominal quota afterwards (reclaim allowed).
 *
 * The holders are admitted by a first cycle and confirmed (status
 * QuotaReserved=True with the decided admission, set again), as the
 * manager does after its writes. Each repetition then sets the
 * preemptor, times one sched_cycle (CPU time), checks it issued
 * preemptions and the preemptor's "Pending the preemption" decision,
 * and puts the state back untimed: preemptor removed, each victim's
 * preemption undone (sched_wl_recheck, what a failed write does), one
 * settling cycle.
 */
static int bench_preempt(int n, int reps, struct pre_res *res)
{
	static const char *const c1[1] = { "cpu" };
	struct resource_flavor *rf = mk_flavor("rf", NULL, NULL, NULL);
	struct cluster_queue *cqs[PCQS];
	char names[PCQS][16];
	struct workload **wls = xcalloc((size_t)n, sizeof(*wls));
	int *cq_of = xcalloc((size_t)n, sizeof(*cq_of));
	int64_t used[PCQS] = { 0 }, total = 0, nom[PCQS], pcpu;
	struct sched_opts o;
	struct sched *s;
	struct sched_decisions out = { 0 };
	struct workload *pre;
	uint32_t st = 0x9e3779b9u ^ (uint32_t)n;
	size_t adm;
	double sum = 0, best = 1e30;
	int ok = 0, bad = 0;
	int64_t now = 10000;

	for (int i = 0; i < n; i++) {
		char name[32];
		int64_t cpu = 1000 * (1 + (int64_t)(rnd(&st) % 8));
		int prio = (int)(rnd(&st) % 100);

		cq_of[i] = (int)(rnd(&st) % 10) < 3 ? 0
			   : 1 + (int)(rnd(&st) % (PCQS - 1));
		snprintf(name, sizeof(name), "h-%04d", i);
		wls[i] = mk_wl(name, prio, 1000 + i, 1, cpu, 0, 0, NULL,
			       false);
		used[cq_of[i]] += cpu;
		total += cpu;
	}
	nom[0] = used[0] + (total - used[0]) / 2;
	for (int c = 1; c < PCQS; c++)
		nom[c] = (total - nom[0]) / (PCQS - 1);
	nom[1] += total - nom[0] - nom[1] * (PCQS - 1);
	pcpu = nom[0] - used[0] < 12000 ? nom[0] - used[0] : 12000;

	sched_opts_default(&o);
	s = sched_new(&o);
	sched_flavor_set(s, rf);
	for (int c = 0; c < PCQS; c++) {
		struct fq q = { "rf", { nom[c] }, -1 };

		snprintf(names[c], sizeof(names[c]), "pcq-%d", c);
		cqs[c] = mk_cq(names[c], "pcohort");
		cqs[c]->reclaim = RWC_ANY;
		cqs[c]->within_cq = WCQ_LOWER_PRIORITY;
		add_group(cqs[c], c1, 1, &q, 1);
		sched_cq_set(s, cqs[c], NULL);
	}
	for (int i = 0; i < n; i++)
		sched_wl_set(s, wls[i], names[cq_of[i]], "bench/lq");
	/* admit every holder, then confirm each admission as the
	 * manager's informer would, at distinct times (the candidates'
	 * "most recently admitted" order is then not all ties) */
	adm = 0;
	while (sched_has_work(s)) {
		adm += sched_cycle(s, now, &out);
		for (size_t i = 0; i < out.n; i++) {
			const struct sched_decision *d = &out.v[i];
			struct workload *w;
			int k;

			if (d->kind != DEC_ADMIT)
				continue;
			if (sscanf(d->wl->meta.name, "h-%d", &k) != 1)
				continue;
			w = wls[k];
			sched_decision_admission(s, d, &w->admission);
			w->has_admission = true;
			conditions_set(&w->conds, "QuotaReserved", COND_TRUE,
				       "QuotaReserved", "", 1, 1000 + k * 7 % n);
			conditions_set(&w->conds, "Admitted", COND_TRUE,
				       "Admitted", "", 1, 1000 + k * 7 % n);
		}
		sched_decisions_clear(&out);
		now++;
	}
	for (int i = 0; i < n; i++)
		sched_wl_set(s, wls[i], names[cq_of[i]], "bench/lq");
	sched_cycle(s, now++, &out);
	sched_decisions_clear(&out);
	if (adm != (size_t)n) {
		fprintf(stderr, "core-bench: preempt: admitted %zu of %d\n",
			adm, n);
		ok = 1;
	}

	pre = mk_wl("preemptor", 1000, 5000, 1, pcpu, 0, 0, NULL, false);
	res->victims = res->same_cq = 0;
	for (int r = 0; r < reps && !ok; r++) {
		size_t nv = 0, nsame = 0;
		bool waits = false;
		double t0, dt;

		sched_wl_set(s, pre, names[0], "bench/lq");
		t0 = cpu_us();
		sched_cycle(s, now, &out);
		dt = cpu_us() - t0;
		sum += dt;
		if (dt < best)
			best = dt;
		for (size_t i = 0; i < out.n; i++) {
			const struct sched_decision *d = &out.v[i];

			if (d->kind == DEC_PREEMPT) {
				nv++;
				nsame += !strcmp(d->cq, names[0]);
			} else if (d->kind == DEC_PENDING && d->wl == pre &&
				   d->message &&
				   strstr(d->message, "Pending the preemption"))
				waits = true;
			else
				bad++;
		}
		if (!nv || !waits || bad) {
			fprintf(stderr, "core-bench: preempt n=%d: %zu "
				"victims, preemptor %s, %d other decisions\n",
				n, nv, waits ? "waits" : "does not wait", bad);
			ok = 1;
		}
		res->victims = nv;
		res->same_cq = nsame;
		/* back to the state before, untimed */
		for (size_t i = 0; i < out.n; i++)
			if (out.v[i].kind == DEC_PREEMPT)
				sched_wl_recheck(s, out.v[i].wl->meta.namespace,
						 out.v[i].wl->meta.name);
		sched_decisions_clear(&out);
		sched_wl_remove(s, "bench", "preemptor");
		sched_cycle(s, now + 1, &out);
		sched_decisions_clear(&out);
		now += 2;
	}
	if (!sched_check(s)) {
		fprintf(stderr, "core-bench: sched_check failed\n");
		ok = 1;
	}
	res->us = reps ? sum / reps : 0;
	res->min_us = best;

	sched_decisions_release(&out);
	sched_free(s);
	workload_release(pre);
	free(pre);
	for (int i = 0; i < n; i++) {
		workload_release(wls[i]);
		free(wls[i]);
	}
	for (int c = 0; c < PCQS; c++) {
		cluster_queue_release(cqs[c]);
		free(cqs[c]);
	}
	resource_flavor_release(rf);
	free(rf);
	free(wls);
	free(cq_of);
	return ok;
}

static int bench_preemption(bool quick)
{
	static const int ns[3] = { 10, 100, 1000 };
	struct pre_res r[3];
	int rc = 0;

	for (int i = 0; i < 3; i++) {
		int reps = quick ? (ns[i] >= 1000 ? 30 : 200)
				 : (ns[i] >= 1000 ? 300 : 3000);

		rc |= bench_preempt(ns[i], reps, &r[i]);
		printf("ROW\tcore: one preemption decision, %d admitted "
		       "candidates in the cohort\t%.2f\tCPU µs per "
		       "decision\t20 µs (aim at 100)\t%.3f\tone sched_cycle "
		       "on a full cohort of %d ClusterQueues (withinClusterQueue "
		       "LowerPriority, reclaimWithinCohort Any), %d confirmed "
		       "holders of 1-8 cpu, priority 0-99; the preemptor "
		       "(priority 1000) gets %zu DEC_PREEMPT (%zu in its own "
		       "ClusterQueue) and its pending decision; mean of %d "
		       "repetitions (fastest %.2f µs), CPU time of the cycle "
		       "only; Kueue's per-admission cost without preemption: "
		       "48-61 µs\n",
		       ns[i], r[i].us, r[i].us / 20.0, PCQS, ns[i],
		       r[i].victims, r[i].same_cq, reps, r[i].min_us);
	}
	/* growth against n log n: 10 -> 100 is x20 (100 ln 100 / 10 ln 10),
	 * 100 -> 1,000 is x15 */
	printf("ROW\tcore: preemption decision growth, 10 -> 100 -> 1,000 "
	       "candidates\t%.1f / %.1f\tx\t%.0f / %.0f (n log n)\t%.2f / "
	       "%.2f\tthe mean decision time at 100 / at 10, and at 1,000 / "
	       "at 100; anchor: n log n's factors (the aim: no worse); "
	       "ratio: measured / n log n\n",
	       r[1].us / r[0].us, r[2].us / r[1].us, 20.0, 15.0,
	       r[1].us / r[0].us / 20.0, r[2].us / r[1].us / 15.0);
	return rc;
}

int main(void)
{
	const char *q = getenv("QUICK");
	bool quick = q && !strcmp(q, "1");
	const char *only = getenv("CORE_BENCH_ONLY");
	int rc = 0;

	/* CORE_BENCH_ONLY=preemption: that part alone (by hand) */
	if (only && !strcmp(only, "preemption"))
		return bench_preemption(quick);
	fprintf(stderr, "core-bench: drain\n");
	rc |= bench_drain(quick ? 300 : 5000);
	fprintf(stderr, "core-bench: scale\n");
	rc |= bench_scale(quick ? 100 : 1000, 10);
	{
		static const struct wset base[3] = {
			{ 350, 100, 200, 50, 1000 },
			{ 100, 500, 500, 100, 5000 },
			{ 50, 1200, 1000, 200, 20000 },
		};
		static const struct wset large[3] = {
			{ 35, 60, 150, 50, 1000 },
			{ 11, 300, 350, 100, 5000 },
			{ 4, 700, 700, 200, 20000 },
		};

		fprintf(stderr, "core-bench: replay\n");
		rc |= bench_replay("Kueue baseline", quick ? 6 : 30,
				   quick ? 1 : 5, base, 3, true);
		rc |= bench_replay("Kueue large scale", quick ? 100 : 1000, 10,
				   large, 3, true);
		/* The same without equivalence (every parked workload
		 * retried on each finish): minutes at full size. */
		if (getenv("CORE_BENCH_NO_EQUIV")) {
			rc |= bench_replay("Kueue baseline", quick ? 6 : 30,
					   quick ? 1 : 5, base, 3, false);
			rc |= bench_replay("Kueue large scale",
					   quick ? 100 : 1000, 10, large, 3,
					   false);
		}
	}
	fprintf(stderr, "core-bench: preemption\n");
	rc |= bench_preemption(quick);
	return rc;
}
