/*
 * soak_bench: the scheduling core (flavors/sched.h) over a long run, in
 * memory: does memory stay flat when workloads keep coming and going, as
 * in a cluster that runs CronJobs for months? Built by mk/soak.mk as
 * build/<cfg>/soak-bench (libcore only).
 *
 * 1,000,000 workloads (unique names, as CronJob runs have) are created,
 * admitted, confirmed, finished and deleted through the core, with 1,000
 * pending at every cycle (new ones keep coming until the millionth is
 * deleted, so the last checkpoint is a steady state too): 10
 * ClusterQueues of 100 cpu each, 1-cpu workloads, so 1,000 run at once;
 * each runs 1 to 3 simulated seconds after its admission, its Finished
 * status arrives, and it is deleted one second later (the Job's TTL).
 * A new namespace and LocalQueue take over every 10,000 workloads, and
 * the old ones are deleted once empty (a CI system's namespace per
 * pipeline). One sched_cycle and one sched_take_dirty per simulated
 * second, as the manager runs them.
 *
 * Figures, at 10k and 100k workloads deleted and then every 100k: the
 * process's RSS (VmRSS of /proc/self/status: the bench reads it, the core
 * never does), the core's record counts (sched_stats) and CPU time. The
 * run fails (exit 1) when sched_check fails, when a workload is lost, or
 * when the workload records exceed what exists at once.
 *
 * Usage: soak-bench [--short] [-n TOTAL]. --short (or QUICK=1 in the
 * environment): 100,000 workloads. Prints ROW lines (test/bench/run.sh's
 * protocol) with the RSS at each checkpoint.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "flavors/sched.h"
#include "model/objects.h"

#define NCQ 10
#define CQ_CPU 100          /* cores per ClusterQueue */
#define PENDING 1000        /* kept pending */
#define PER_NS 10000        /* workloads per namespace */
#define RING (1u << 13)     /* live jobs by number; > the live span */
#define STEP_MS INT64_C(1000)

enum job_state { J_FREE = 0, J_PENDING, J_RUNNING, J_FINISHED };

struct sjob {
	struct workload *w;  /* owned; what sched borrows now */
	enum job_state state;
	int64_t due;         /* running: finishes at; finished: deleted at */
};

struct soak {
	struct sched *s;
	struct sched_decisions out;
	struct resource_flavor rf;
	struct cluster_queue cq[NCQ];
	char cqname[NCQ][16];
	struct sjob *ring;    /* owned; job n at ring[n % RING] */
	uint64_t made, deleted, admitted;
	uint64_t oldest;     /* no live job below this number */
	uint64_t pending;
	int64_t now;
	int64_t ns_live[64]; /* live jobs per namespace k % 64 */
	uint64_t ns_cur;     /* namespace of new jobs */
	uint64_t max_live;   /* peak of sched_stats workloads */
};

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* VmRSS in KiB, or -1. */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* ---- objects ---- */

static void soak_setup(struct soak *k)
{
	memset(k, 0, sizeof(*k));
	k->s = sched_new(NULL);
	k->ring = xcalloc(RING, sizeof(*k->ring));
	k->rf.meta.name = xstrdup("default");
	sched_flavor_set(k->s, &k->rf);
	for (int i = 0; i < NCQ; i++) {
		struct cluster_queue *cq = &k->cq[i];
		struct resource_group *g;

		snprintf(k->cqname[i], sizeof(k->cqname[i]), "cq-%d", i);
		cq->meta.name = xstrdup(k->cqname[i]);
		cq->strategy = QS_BEST_EFFORT_FIFO;
		cq->has_ns_selector = true;
		cq->when_can_borrow = FUNG_MAY_STOP_SEARCH;
		cq->when_can_preempt = FUNG_TRY_NEXT_FLAVOR;
		cq->groups = xcalloc(1, sizeof(*cq->groups));
		cq->ngroups = 1;
		g = &cq->groups[0];
		g->covered = xcalloc(1, sizeof(char *));
		g->covered[0] = xstrdup("cpu");
		g->ncovered = 1;
		g->flavors = xcalloc(1, sizeof(*g->flavors));
		g->nflavors = 1;
		g->flavors[0].name = xstrdup("default");
		g->flavors[0].res = xcalloc(1, sizeof(*g->flavors[0].res));
		g->flavors[0].nres = 1;
		g->flavors[0].res[0].name = xstrdup("cpu");
		g->flavors[0].res[0].nominal = CQ_CPU * 1000;
		sched_cq_set(k->s, cq, NULL);
	}
}

static void soak_free(struct soak *k)
{
	sched_decisions_release(&k->out);
	sched_free(k->s);
	for (size_t i = 0; i < RING; i++) {
		if (!k->ring[i].w)
			continue;
		workload_release(k->ring[i].w);
		free(k->ring[i].w);
	}
	free(k->ring);
	for (int i = 0; i < NCQ; i++)
		cluster_queue_release(&k->cq[i]);
	resource_flavor_release(&k->rf);
}

static struct workload *mk_job(uint64_t n, const char *ns, int64_t now)
{
	struct workload *w = xcalloc(1, sizeof(*w));
	struct pod_set *ps;
	struct container_res *c;

	w->meta.namespace = xstrdup(ns);
	w->meta.name = xasprintf("job-%" PRIu64, n);
	w->meta.uid = xasprintf("uid-%016" PRIx64, n);
	w->meta.creation_ms = now;
	w->meta.generation = 1;
	w->active = true;
	w->pod_sets = xcalloc(1, sizeof(*ps));
	w->npod_sets = 1;
	ps = &w->pod_sets[0];
	ps->name = xstrdup("main");
	ps->count = 1;
	node_affinity_init(&ps->tmpl.affinity);
	ps->tmpl.containers = xcalloc(1, sizeof(*c));
	ps->tmpl.ncontainers = 1;
	c = &ps->tmpl.containers[0];
	c->name = xstrdup("c");
	reslist_set(&c->requests, "cpu", 1000);
	return w;
}

static uint64_t job_number(const struct workload *w)
{
	return strtoull(w->meta.name + 4, NULL, 10);
}

static const char *cq_of(const struct soak *k, uint64_t n)
{
	return k->cqname[n % NCQ];
}

static void lq_of(char *buf, size_t n, const struct workload *w)
{
	snprintf(buf, n, "%s/lq", w->meta.namespace);
}

/* Hands w (taken) to sched as job n's new object; frees the old one. */
static void job_put(struct soak *k, uint64_t n, struct workload *w)
{
	struct sjob *j = &k->ring[n % RING];
	char lq[64];

	lq_of(lq, sizeof(lq), w);
	sched_wl_set(k->s, w, cq_of(k, n), lq);
	if (j->w) {
		workload_release(j->w);
		free(j->w);
	}
	j->w = w;
}

static struct workload *job_copy(const struct soak *k, uint64_t n)
{
	struct workload *w = xcalloc(1, sizeof(*w));

	workload_copy(w, k->ring[n % RING].w);
	return w;
}

/* ---- the run ---- */

static void ns_name(char *buf, size_t n, uint64_t k)
{
	snprintf(buf, n, "run-%" PRIu64, k);
}

/* A pipeline's namespace is deleted with its LocalQueue once it is no
 * longer the current one and its last workload is gone. */
static void ns_delete(struct soak *k, uint64_t nsk)
{
	char ns[32], lq[64];

	ns_name(ns, sizeof(ns), nsk);
	snprintf(lq, sizeof(lq), "%s/lq", ns);
	sched_lq_set(k->s, lq, STOP_NONE);
	sched_namespace_remove(k->s, ns);
}

static void create_one(struct soak *k)
{
	uint64_t n = k->made++;
	uint64_t nsk = n / PER_NS;
	struct sjob *j = &k->ring[n % RING];
	char ns[32];

	if (j->state != J_FREE) {
		fprintf(stderr, "soak-bench: ring too small at job %" PRIu64
			"\n", n);
		exit(1);
	}
	ns_name(ns, sizeof(ns), nsk);
	if (nsk != k->ns_cur || n == 0) {
		struct smap labels;
		char v[32];

		/* A new pipeline namespace with its LocalQueue. */
		if (n && !k->ns_live[k->ns_cur % 64])
			ns_delete(k, k->ns_cur);
		k->ns_cur = nsk;
		snprintf(v, sizeof(v), "%" PRIu64, nsk);
		smap_init(&labels);
		smap_set(&labels, "pipeline", v);
		sched_namespace_set(k->s, ns, &labels);
		smap_release(&labels);
	}
	k->ns_live[nsk % 64]++;
	job_put(k, n, mk_job(n, ns, k->now));
	j->state = J_PENDING;
	k->pending++;
}


static void delete_one(struct soak *k, uint64_t n)
{
	struct sjob *j = &k->ring[n % RING];
	uint64_t nsk = n / PER_NS;

	sched_wl_remove(k->s, j->w->meta.namespace, j->w->meta.name);
	workload_release(j->w);
	FREE_AND_NULL(j->w);
	j->state = J_FREE;
	k->deleted++;
	if (--k->ns_live[nsk % 64] == 0 && nsk != k->ns_cur)
		ns_delete(k, nsk);
}

static void dirty_none(void *ud, const char *name)
{
	(void)ud;
	(void)name;
}

/* One simulated second: the finishes and deletions that are due, the
 * cycle and its confirmations, then creations up to PENDING (so every
 * cycle sees PENDING pending workloads, and so does every checkpoint). */
static void soak_step(struct soak *k)
{
	/* From the oldest live job on (jobs are admitted about in creation
	 * order, so the live span stays short). */
	for (uint64_t n = k->oldest; n < k->made; n++) {
		struct sjob *j = &k->ring[n % RING];

		if (j->state == J_RUNNING && j->due <= k->now) {
			struct workload *w = job_copy(k, n);

			conditions_set(&w->conds, "Finished", COND_TRUE,
				       "Succeeded", "Job finished successfully",
				       1, k->now);
			job_put(k, n, w);
			j->state = J_FINISHED;
			j->due = k->now + STEP_MS;
		} else if (j->state == J_FINISHED && j->due <= k->now) {
			delete_one(k, n);
		}
	}
	while (k->oldest < k->made && k->ring[k->oldest % RING].state == J_FREE)
		k->oldest++;
	sched_decisions_clear(&k->out);
	sched_cycle(k->s, k->now, &k->out);
	for (size_t i = 0; i < k->out.n; i++) {
		const struct sched_decision *d = &k->out.v[i];
		uint64_t n;
		struct workload *w;

		if (d->kind != DEC_ADMIT)
			continue;
		n = job_number(d->wl);
		w = job_copy(k, n);
		sched_decision_admission(k->s, d, &w->admission);
		w->has_admission = true;
		conditions_set(&w->conds, "QuotaReserved", COND_TRUE,
			       "QuotaReserved", "Quota reserved", 1, k->now);
		conditions_set(&w->conds, "Admitted", COND_TRUE, "Admitted",
			       "The workload is admitted", 1, k->now);
		job_put(k, n, w);
		k->ring[n % RING].state = J_RUNNING;
		k->ring[n % RING].due =
			k->now + STEP_MS * (1 + (int64_t)(n % 3));
		k->pending--;
		k->admitted++;
	}
	while (k->pending < PENDING)
		create_one(k);
	sched_take_dirty(k->s, dirty_none, dirty_none, NULL);
	k->now += STEP_MS;
}

struct point {
	uint64_t at;
	long rss;
	struct sched_stats st;
	double cpu;
};

int main(int argc, char **argv)
{
	const char *q = getenv("QUICK");
	uint64_t total = 1000000;
	struct soak k;
	struct point pts[16];
	size_t npts = 0;
	uint64_t next = 10000;
	double t0;
	int rc = 0, stalled = 0;

	if (q && !strcmp(q, "1"))
		total = 100000;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--short")) {
			total = 100000;
		} else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
			total = strtoull(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: soak-bench [--short] [-n TOTAL]"
				"\n");
			return 2;
		}
	}
	soak_setup(&k);
	k.now = INT64_C(1767225600000);
	t0 = cpu_s();
	fprintf(stderr, "soak-bench: %" PRIu64 " workloads, %d pending\n",
		total, PENDING);
	while (k.deleted < total) {
		uint64_t before = k.deleted;

		soak_step(&k);
		/* Every job is deleted at most 4 simulated s after its
		 * admission: a long stretch without one is a lost job. */
		stalled = k.deleted == before ? stalled + 1 : 0;
		if (stalled > 100) {
			fprintf(stderr, "soak-bench: stuck at %" PRIu64 "\n",
				k.deleted);
			rc = 1;
			break;
		}
		{
			struct sched_stats st;

			sched_stats(k.s, &st);
			if (st.workloads > k.max_live)
				k.max_live = st.workloads;
		}
		if (k.deleted >= next || k.deleted == total) {
			struct point *p = &pts[npts++];

			p->at = k.deleted;
			p->rss = rss_kib();
			sched_stats(k.s, &p->st);
			p->cpu = cpu_s() - t0;
			if (!sched_check(k.s)) {
				fprintf(stderr, "soak-bench: sched_check "
					"failed\n");
				rc = 1;
			}
			printf("deleted %8" PRIu64 "  RSS %7.1f MiB  "
			       "workloads %5zu  records %5zu  ids %5zu  "
			       "LocalQueues %zu (ids %zu)  namespaces %zu "
			       "(ids %zu)  CPU %6.2f s\n",
			       p->at, (double)p->rss / 1024, p->st.workloads,
			       p->st.wl_records, p->st.wl_ids,
			       p->st.local_queues, p->st.lq_ids,
			       p->st.namespaces, p->st.ns_ids, p->cpu);
			fflush(stdout);
			while (next <= k.deleted && npts < 15)
				next = next < 100000 ? 100000 : next + 100000;
		}
	}
	if (k.deleted < total || k.admitted < k.deleted ||
	    k.made != k.pending + k.admitted) {
		fprintf(stderr, "soak-bench: %" PRIu64 " made, %" PRIu64
			" admitted, %" PRIu64 " deleted\n", k.made, k.admitted,
			k.deleted);
		rc = 1;
	}
	/* Records follow what exists at once: pending, running and
	 * finished-not-deleted workloads, plus removed ones freed by the
	 * next cycle. */
	if (npts && pts[npts - 1].st.wl_ids > 2 * k.max_live + 64) {
		fprintf(stderr, "soak-bench: %zu workload ids for at most "
			"%" PRIu64 " live workloads\n",
			pts[npts - 1].st.wl_ids, k.max_live);
		rc = 1;
	}
	for (size_t i = 0; i < npts; i++)
		printf("ROW\tcore soak: RSS after %" PRIu64 " workloads\t%.1f"
		       "\tMiB\t—\t—\tcreated, admitted, finished and deleted "
		       "through flavors/sched at %d pending (10 CQs, 1,000 "
		       "running); %zu workload records, %zu ids (peak %"
		       PRIu64 " live); %.1f s CPU so far\n",
		       pts[i].at, (double)pts[i].rss / 1024, PENDING,
		       pts[i].st.wl_records, pts[i].st.wl_ids, k.max_live,
		       pts[i].cpu);
	soak_free(&k);
	return rc;
}
