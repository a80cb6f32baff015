/*
 * scenario-bench: Kueue's scheduler performance scenarios
 * (test/performance/scheduler: spec kueue-scheduler.md §8) against a
 * running devcluster (test/e2e/devcluster: cueue-devserver plus
 * cueue-manager), as rows for test/bench/run.sh (BENCHMARKS.md).
 *
 *   scenario-bench --cluster DIR --scenario baseline|large|quick
 *                  [--timeout S] [--workers N] [--dump FILE]
 *
 * DIR is the devcluster's directory: DIR/kubeconfig gives the server URL,
 * the CA (certificate-authority-data) and the bearer token; DIR/manager.pid
 * and DIR/devserver.pid the processes whose CPU time and peak RSS are
 * read from /proc; DIR/manager.log the QPS and burst the manager runs with
 * (its "starting: ..., qps Q, burst B" line). Use a fresh devcluster per
 * scenario: object names repeat across scenarios, and the peak RSS is the
 * process's lifetime peak.
 *
 * What it does, as Kueue's runner does:
 *  1. Setup from the generator: ResourceFlavor "rf"; per cohort c and
 *     queue i a ClusterQueue cq-0-i-cohort-c (cohort-c, cpu nominal 20,
 *     borrowingLimit 100, reclaimWithinCohort Any, withinClusterQueue
 *     LowerPriority, BestEffortFIFO), a namespace of the same name and a
 *     LocalQueue of the same name in it.
 *  2. Generation: per ClusterQueue the three workload sets (small, medium,
 *     large) run concurrently; the k-th workload of a set is due at
 *     t0 + k x creationInterval (k = 1..count, Kueue waits the interval
 *     before every creation). Workloads carry spec.priority (Kueue's
 *     generator sets .Priority(p) on the Workload, no
 *     WorkloadPriorityClass), the runtime label
 *     kueue.x-k8s.io/performance-scheduler-running-ms, the class label and
 *     our index label. Creation threads take the due creations in time
 *     order; when they fall behind, creations start late (as Kueue's
 *     sequential per-set loops do).
 *  3. The fake job controller: one watch on every Workload. Each time a
 *     workload is seen Admitted=True after not being admitted (its first
 *     admission, or a new one after a preemption), a JSON patch appending
 *     Finished=True to status.conditions is due runtimeMs later (runtime
 *     from the label's class), as Kueue's runner restarts its clock at
 *     every admission; finish threads send it. A workload seen
 *     Admitted=False again before that (preempted: the manager's eviction
 *     write of a Workload with no owner also clears its reservation, the
 *     step Kueue's runner does itself for minimalkueue) drops its pending
 *     finish. The patch tests the workload's last resourceVersion seen on
 *     the watch, so a finish never lands on a workload evicted meanwhile.
 *  4. It stops when every workload has been created and seen Finished
 *     (nothing pending or reserving), or at --timeout (exit 1 with a
 *     count of pending / admitted-not-finished workloads per state).
 *
 * Clocks: condition timestamps are whole seconds, so every time is this
 * program's CLOCK_MONOTONIC at ms resolution: a workload's creation is
 * the moment before its POST is sent, admission and finish the moment the
 * watch event carrying Admitted=True / Finished=True is read.
 * TimeToAdmit = last admission - creation (Kueue's recorder overwrites it
 * at every admission). The cpu usage integral per ClusterQueue is our own
 * bookkeeping: each workload contributes its cpu over every admission,
 * to its eviction or its finish as observed; usage % is Kueue's formula
 * (§8.1): sum of integrals x 100 / (sum of nominal cpu x (first creation
 * due -> last finish)).
 *
 * --dump FILE writes one CSV line per workload (like Kueue's wlStates.csv):
 * cq,class,created_ms,admitted_ms,finished_ms,evictions, times from the
 * generation start (admitted: the last admission), -1 when it did not
 * happen.
 *
 * Output: ROW lines (run.sh's format) on stdout, progress on stderr.
 * Exit 0 when the scenario completed without a failed request, 1
 * otherwise, 2 on bad usage.
 *
 * Threads (this program only; the project's thread rules are about the
 * controller): the main thread (setup, waiting, report), W creation
 * threads and W finish threads (--workers W; default 8 for baseline, 12
 * for large, 4 for quick, as Kueue's generator and fake job controller
 * run concurrently: on a loaded machine 4 finish threads of synchronous
 * PATCHes capped the large scenario at ~60 finishes/s; 12 keep the
 * harness's own lag (finish due -> patch sent) at p99 ~30 ms, as 32 did,
 * with less of the 2 CPUs taken from the system measured: 52 s against
 * 61 s; each thread has its own curl handle), one watch thread. They
 * share struct run under one mutex; idle workers wait in turn
 * (worker_main).
 *
 * The client code (kubeconfig, requests, the watch's line splitting,
 * /proc, ROW lines) is test/bench/benchlib.h's.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "model/errors.h"
#include "test/bench/benchlib.h"

#define KAPI "/apis/kueue.x-k8s.io/v1beta2"
#define RUNTIME_LABEL "kueue.x-k8s.io/performance-scheduler-running-ms"
#define CLASS_LABEL "kueue.x-k8s.io/performance-scheduler-class"
#define ID_LABEL "bench.cueue.dev/id"
#define NOMINAL_CPU 20
#define NOMINAL_STR "20"
#define BORROW_STR "100"
#define MAX_TRIES 12 /* per request, on retryable answers */

enum { SMALL, MEDIUM, LARGE, NCLASS };
static const char *const class_name[NCLASS] = { "small", "medium", "large" };

struct wclass {
	int count;       /* per ClusterQueue */
	int interval_ms; /* creationIntervalMs */
	int runtime_ms;
	int priority;
	int cpu;         /* whole cpus */
};

/* One scenario: the generator's shape and Kueue's figures for it. */
struct scenario {
	const char *name;
	const char *title; /* row prefix */
	int cohorts;
	int cqs_per_cohort;
	struct wclass cls[NCLASS];
	int timeout_s;
	int workers;      /* default --workers: creation and finish threads
			     each (Kueue's generator and fake job
			     controller run one goroutine per set) */
	/* anchors; 0 = none */
	double a_wall_s, a_usage, a_tta_s[NCLASS], a_cpu_s, a_rss_mib;
	double aim_wall_s; /* 0: none beyond 1.15 x floor */
};

static const struct scenario scenarios[] = {
	{ "baseline", "Kueue baseline (5x6 CQs, 15,000 wl)", 5, 6,
	  { { 350, 100, 200, 50, 1 }, { 100, 500, 500, 100, 5 },
	    { 50, 1200, 1000, 200, 20 } },
	  600, 8, 351.1, 55.9, { 215.5, 76.8, 16.5 }, 139.4, 434.6, 0 },
	{ "large", "Kueue large scale (10x100 CQs, 50,000 wl)", 10, 100,
	  { { 35, 60, 150, 50, 1 }, { 11, 300, 350, 100, 5 },
	    { 4, 700, 700, 200, 20 } },
	  1200, 12, 1179.4, 38.64, { 700.4, 256.4, 105.6 }, 0, 0, 60 },
	{ "quick", "scenario quick (1x3 CQs, 60 wl)", 1, 3,
	  { { 12, 100, 200, 50, 1 }, { 5, 300, 500, 100, 5 },
	    { 3, 600, 1000, 200, 20 } },
	  40, 4, 0, 0, { 0, 0, 0 }, 0, 0, 0 },
};

struct wl {
	int cq;
	int cls;
	int seq;          /* index within its set */
	bool created;     /* POST answered 201 */
	bool failed;      /* POST or finish patch failed for good */
	bool admitted;    /* Admitted=True on the last event seen */
	bool evicted;     /* Evicted=True on the last event seen */
	bool finished;
	int nadmit;       /* admissions seen; the finish patch's epoch */
	int nevict;       /* Evicted False -> True transitions seen */
	int64_t t_create; /* us, monotonic */
	int64_t t_admit;  /* the last admission; valid when nadmit > 0 */
	int64_t t_finish;
	double cpu_s;     /* cpu-seconds of the admissions that ended in an
			     eviction */
	char rv[24];      /* the last resourceVersion seen on the watch */
};

struct due {
	int64_t at; /* us, monotonic */
	int idx;
	int epoch;  /* finish patches: the admission it belongs to */
};

/* An admission or an eviction seen on the watch, for the latency rows. */
struct stamp {
	int64_t t; /* us, monotonic */
	int cq;
};

struct run {
	const struct scenario *sc;
	struct bench_kube kube; /* the devcluster's API server */
	int nworkers;      /* creation threads, and as many finish threads */
	int ncq;
	char **cq_name; /* owned array of owned names */

	pthread_mutex_t mu;
	pthread_cond_t cv; /* CLOCK_MONOTONIC; the main thread: progress */
	/* Per role (0 creation, 1 finish): one idle thread (the timer
	 * holder) sleeps until the next due time on timer_cv; the other
	 * idle ones wait on work_cv and are woken one at a time, by a
	 * thread that took an item (see worker_main). A broadcast per event
	 * woke all 2W threads for every admission and finish: at W = 32 that
	 * was 20 s of the harness's system time on a 70 s run, CPU taken
	 * from the system it measures. */
	pthread_cond_t timer_cv[2], work_cv[2];
	bool timer_held[2];
	struct wl *wls;    /* owned, nwl */
	int nwl;
	struct due *creates; /* owned, nwl, sorted by at */
	int next_create;
	struct due *heap;    /* owned min-heap of finish patches */
	size_t nheap, capheap;
	int ncreated, nadmitted, nfinished, nfailed;
	int nevicted;        /* Evicted False -> True transitions seen */
	int nlost;           /* admissions ended without a finish */
	int nstale;          /* finish patches dropped: admission gone */
	struct stamp *adm_log, *lost_log; /* owned; nadmitted, nlost */
	size_t capadm, caplost;
	int64_t *flag;       /* owned, nwl: finish patch sent - due (us) */
	int nflag;
	int nretries;        /* requests retried (429, transport error) */
	bool stop;
	bool watch_failed;
	char *last_rv;       /* owned; the watch's last resourceVersion */
	int64_t t0;          /* us: generation start */
	int64_t t_last_finish;
};

/* ---- the devcluster's files ---- */


/* The manager's effective QPS and burst from its last start line. */
static char *manager_limits(const char *dir)
{
	char *path = xasprintf("%s/manager.log", dir);
	char *text = bench_read_file(path);
	char *res = NULL;
	const char *p = text, *hit = NULL;

	while (p && (p = strstr(p, ", qps "))) {
		hit = p;
		p++;
	}
	if (hit) {
		double qps = 0;
		long burst = 0;

		if (sscanf(hit, ", qps %lf, burst %ld", &qps, &burst) == 2)
			res = xasprintf("QPS %g / burst %ld", qps, burst);
	}
	free(text);
	free(path);
	return res ? res : xstrdup("QPS/burst unknown");
}

/* ---- setup ---- */

static void setup(struct run *r)
{
	const struct scenario *sc = r->sc;
	struct bench_conn c;
	int i;

	bench_conn_init(&c, &r->kube);
	bench_create_take(&c, KAPI "/resourceflavors",
			  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
				    "kueue.x-k8s.io/v1beta2", "kind",
				    "ResourceFlavor", "metadata", "name", "rf"),
			  false);
	for (i = 0; i < r->ncq; i++) {
		const char *n = r->cq_name[i];
		char *cohort = xasprintf("cohort-%d", i / sc->cqs_per_cohort);
		char *path;

		bench_create_take(&c, "/api/v1/namespaces",
				  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
					    "v1", "kind", "Namespace",
					    "metadata", "name", n),
				  false);
		bench_create_take(&c, KAPI "/clusterqueues",
				  json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, "
					    "s:{s:s, s:{}, s:s, s:{s:s, s:s}, "
					    "s:[{s:[s], s:[{s:s, s:[{s:s, "
					    "s:s, s:s}]}]}]}}",
					    "apiVersion",
					    "kueue.x-k8s.io/v1beta2",
					    "kind", "ClusterQueue",
					    "metadata", "name", n, "labels",
					    CLASS_LABEL, "cq",
					    "spec", "cohortName", cohort,
					    "namespaceSelector",
					    "queueingStrategy",
					    "BestEffortFIFO",
					    "preemption", "reclaimWithinCohort",
					    "Any", "withinClusterQueue",
					    "LowerPriority", "resourceGroups",
					    "coveredResources", "cpu",
					    "flavors", "name", "rf",
					    "resources", "name",
					    "cpu", "nominalQuota", NOMINAL_STR,
					    "borrowingLimit", BORROW_STR),
				  false);
		path = xasprintf(KAPI "/namespaces/%s/localqueues", n);
		bench_create_take(&c, path,
				  json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}",
					    "apiVersion",
					    "kueue.x-k8s.io/v1beta2",
					    "kind", "LocalQueue", "metadata",
					    "name", n, "namespace", n, "spec",
					    "clusterQueue", n),
				  false);
		free(path);
		free(cohort);
	}
	bench_conn_release(&c);
}

/* The Workload objects and the creation schedule. */
static int due_cmp(const void *a, const void *b)
{
	const struct due *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static void plan(struct run *r)
{
	const struct scenario *sc = r->sc;
	int per_cq = 0, q, k, i, n = 0;

	for (k = 0; k < NCLASS; k++)
		per_cq += sc->cls[k].count;
	r->nwl = per_cq * r->ncq;
	r->wls = xcalloc((size_t)r->nwl, sizeof(*r->wls));
	r->creates = xcalloc((size_t)r->nwl, sizeof(*r->creates));
	for (q = 0; q < r->ncq; q++)
		for (k = 0; k < NCLASS; k++)
			for (i = 0; i < sc->cls[k].count; i++, n++) {
				r->wls[n].cq = q;
				r->wls[n].cls = k;
				r->wls[n].seq = i;
				r->creates[n].idx = n;
				r->creates[n].at = (int64_t)(i + 1) *
						   sc->cls[k].interval_ms * 1000;
			}
	qsort(r->creates, (size_t)r->nwl, sizeof(*r->creates), due_cmp);
}

/* ---- finish heap (under mu) ---- */

static void heap_push(struct run *r, int64_t at, int idx, int epoch)
{
	size_t i;

	XGROW(r->heap, r->capheap, r->nheap + 1);
	i = r->nheap++;
	while (i > 0 && r->heap[(i - 1) / 2].at > at) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = (struct due){ at, idx, epoch };
}

static struct due heap_pop(struct run *r)
{
	struct due top = r->heap[0], last = r->heap[--r->nheap];
	size_t i = 0, n = r->nheap;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && r->heap[c + 1].at < r->heap[c].at)
			c++;
		if (r->heap[c].at >= last.at)
			break;
		r->heap[i] = r->heap[c];
		i = c;
	}
	if (n > 0)
		r->heap[i] = last;
	return top;
}

/* ---- workers ---- */

static void wl_name(const struct run *r, int idx, char *buf, size_t cap)
{
	const struct wl *w = &r->wls[idx];

	/* Kueue: <class>-<setIdx>-<seq>-<templateIdx> */
	snprintf(buf, cap, "%s-%d-%d-0", class_name[w->cls], w->cls, w->seq);
}

/* 100 ms, 200 ms, ... capped at 1 s (the devserver's Retry-After). */
static void backoff(int tries)
{
	long ms = 100L << (tries < 4 ? tries : 4);

	usleep((useconds_t)(ms > 1000 ? 1000 : ms) * 1000);
}

static void do_create(struct run *r, struct bench_conn *c, int idx)
{
	const struct wl *w = &r->wls[idx];
	const struct wclass *k = &r->sc->cls[w->cls];
	const char *ns = r->cq_name[w->cq];
	char name[64], rt[16], id[16], cpu[16], *path, *body;
	json_t *o;
	long code;
	int64_t t;
	int tries;

	wl_name(r, idx, name, sizeof(name));
	snprintf(rt, sizeof(rt), "%d", k->runtime_ms);
	snprintf(id, sizeof(id), "%d", idx);
	snprintf(cpu, sizeof(cpu), "%d", k->cpu);
	o = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}}, "
		      "s:{s:s, s:i, s:[{s:s, s:i, s:{s:{s:s, s:[{s:s, s:s, "
		      "s:{s:{s:s}}}]}}}]}}",
		      "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
		      "metadata", "name", name, "namespace", ns, "labels",
		      RUNTIME_LABEL, rt, CLASS_LABEL, class_name[w->cls],
		      ID_LABEL, id,
		      "spec", "queueName", ns, "priority", k->priority,
		      "podSets", "name", "main", "count", 1, "template", "spec",
		      "restartPolicy", "Never", "containers", "name", "c",
		      "image", "pause", "resources", "requests", "cpu", cpu);
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	path = xasprintf(KAPI "/namespaces/%s/workloads", ns);
	for (tries = 0;; tries++) {
		t = bench_now_us();
		pthread_mutex_lock(&r->mu);
		r->wls[idx].t_create = t;
		pthread_mutex_unlock(&r->mu);
		code = bench_request(c, "POST", path, "application/json",
				     body);
		/* 409 after a lost answer: an earlier attempt created it. */
		if (code == 201 || (code == 409 && tries > 0) ||
		    !bench_is_retryable(code) || tries + 1 >= MAX_TRIES)
			break;
		pthread_mutex_lock(&r->mu);
		r->nretries++;
		pthread_mutex_unlock(&r->mu);
		backoff(tries);
	}
	pthread_mutex_lock(&r->mu);
	if (code == 201 || code == 409) {
		r->wls[idx].created = true;
		r->ncreated++;
	} else {
		bench_note("create %s/%s: HTTP %ld: %.200s", ns, name, code,
			   c->buf ? c->buf : "");
		r->wls[idx].failed = true;
		r->nfailed++;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	free(path);
	free(body);
}

/* The finish: a test of the resourceVersion last seen on the watch (so
 * it never lands on a workload preempted since), then the condition. */
static const char finish_patch[] =
	"[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\","
	"\"value\":\"%s\"},"
	"{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":"
	"{\"type\":\"Finished\",\"status\":\"True\",\"reason\":\"Succeeded\","
	"\"message\":\"finished by scenario-bench\","
	"\"lastTransitionTime\":\"%s\"}}]";

/* Failed resourceVersion tests before a finish gives up: the object moved
 * on and the watch has not shown it yet; 5 ms apart. */
#define MAX_CONFLICTS 400

/*
 * Sends the finish of admission epoch of workload idx, unless that
 * admission is gone (preempted meanwhile: the patch is dropped, as Kueue's
 * runner forgets the admission time of a workload no longer admitted) or
 * the watch already saw it Finished (an earlier attempt's answer lost).
 */
static void do_finish(struct run *r, struct bench_conn *c, int idx,
		      int epoch)
{
	const struct wl *w = &r->wls[idx];
	char name[64], ts[32], rv[24], body[640], *path;
	long code = 0;
	int tries = 0, conflicts = 0;

	wl_name(r, idx, name, sizeof(name));
	path = xasprintf(KAPI "/namespaces/%s/workloads/%s/status",
			 r->cq_name[w->cq], name);
	for (;;) {
		time_t now = time(NULL);
		struct tm tm;
		bool live, done;

		pthread_mutex_lock(&r->mu);
		live = w->admitted && w->nadmit == epoch && !w->finished;
		done = w->finished;
		if (!live && !done)
			r->nstale++;
		memcpy(rv, w->rv, sizeof(rv));
		pthread_mutex_unlock(&r->mu);
		if (!live) {
			code = 200;
			break;
		}
		gmtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(body, sizeof(body), finish_patch, rv, ts);
		code = bench_request(c, "PATCH", path,
				     "application/json-patch+json", body);
		if (code == 200)
			break;
		/* the test failed: a write the watch has not shown yet */
		if (code == 409 || code == 422) {
			if (++conflicts >= MAX_CONFLICTS)
				break;
			usleep(5000);
			continue;
		}
		if (!bench_is_retryable(code) || ++tries >= MAX_TRIES)
			break;
		pthread_mutex_lock(&r->mu);
		r->nretries++;
		pthread_mutex_unlock(&r->mu);
		backoff(tries - 1);
	}
	if (code != 200) {
		bench_note("finish %s/%s: HTTP %ld: %.200s",
			   r->cq_name[w->cq], name, code,
			   c->buf ? c->buf : "");
		pthread_mutex_lock(&r->mu);
		r->wls[idx].failed = true;
		r->nfailed++;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	free(path);
}

struct worker {
	struct run *r;
	bool finisher; /* finish patches only; else creations only */
	pthread_t th;
};

/*
 * Creations and finish patches have threads of their own, as Kueue's
 * generator and fake job controller are independent: a generator behind
 * schedule does not delay the finishes, which release quota.
 */
static void *worker_main(void *arg)
{
	struct worker *wk = arg;
	struct run *r = wk->r;
	int role = wk->finisher ? 1 : 0;
	struct bench_conn c;

	bench_conn_init(&c, &r->kube);
	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		int64_t now = bench_now_us(), next;
		int64_t tc = r->next_create < r->nwl
				     ? r->t0 + r->creates[r->next_create].at
				     : INT64_MAX;
		int64_t tf = r->nheap > 0 ? r->heap[0].at : INT64_MAX;
		struct timespec ts;
		int idx, epoch = 0;

		if (wk->finisher && tf <= now) {
			struct due d = heap_pop(r);

			if (r->nflag < r->nwl)
				r->flag[r->nflag++] = now - d.at;
			idx = d.idx;
			epoch = d.epoch;
			next = r->nheap > 0 ? r->heap[0].at : INT64_MAX;
		} else if (!wk->finisher && tc <= now) {
			idx = r->creates[r->next_create++].idx;
			next = r->next_create < r->nwl
				       ? r->t0 + r->creates[r->next_create].at
				       : INT64_MAX;
		} else {
			next = wk->finisher ? tf : tc;
			if (next == INT64_MAX || next > now + 1000000)
				next = now + 1000000;
			if (r->timer_held[role]) {
				pthread_cond_wait(&r->work_cv[role], &r->mu);
				continue;
			}
			r->timer_held[role] = true;
			ts.tv_sec = next / 1000000;
			ts.tv_nsec = (next % 1000000) * 1000;
			pthread_cond_timedwait(&r->timer_cv[role], &r->mu, &ts);
			r->timer_held[role] = false;
			continue;
		}
		/* One more thread when more is due now, or when nobody is
		 * left watching the clock. */
		if (next <= now || !r->timer_held[role])
			pthread_cond_signal(&r->work_cv[role]);
		pthread_mutex_unlock(&r->mu);
		if (wk->finisher)
			do_finish(r, &c, idx, epoch);
		else
			do_create(r, &c, idx);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	bench_conn_release(&c);
	return NULL;
}

/* ---- the watch (fake job controller's eyes) ---- */

/* One event line (bench_line_fn, ud: the run); taken under no lock. */
static void watch_event(void *ud, const char *p, size_t n)
{
	struct run *r = ud;
	json_error_t jerr;
	json_t *ev = json_loadb(p, n, 0, &jerr), *obj, *meta;
	const char *type, *rv, *id;
	int64_t now = bench_now_us();
	bool adm, fin, evicted;
	long idx;

	if (!ev) {
		bench_note("watch: bad event line: %s", jerr.text);
		return;
	}
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	meta = json_object_get(obj, "metadata");
	if (type && !strcmp(type, "ERROR")) {
		char *s = json_dumps(obj, JSON_COMPACT);

		bench_note("watch: ERROR event: %.300s", s ? s : "");
		free(s);
		pthread_mutex_lock(&r->mu);
		r->watch_failed = true;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
		json_decref(ev);
		return;
	}
	rv = json_string_value(json_object_get(meta, "resourceVersion"));
	id = json_string_value(json_object_get(json_object_get(meta, "labels"),
					       ID_LABEL));
	idx = id ? strtol(id, NULL, 10) : -1;
	adm = bench_has_condition(obj, "Admitted");
	fin = bench_has_condition(obj, "Finished");
	evicted = bench_has_condition(obj, "Evicted");
	pthread_mutex_lock(&r->mu);
	if (rv) {
		free(r->last_rv);
		r->last_rv = xstrdup(rv);
	}
	if (idx >= 0 && idx < r->nwl && type && strcmp(type, "DELETED")) {
		struct wl *x = &r->wls[idx];
		const struct wclass *k = &r->sc->cls[x->cls];

		if (rv)
			snprintf(x->rv, sizeof(x->rv), "%s", rv);
		if (evicted && !x->evicted) {
			x->nevict++;
			r->nevicted++;
		}
		x->evicted = evicted;
		if (adm && !x->admitted && !x->finished) {
			/* an admission (the first, or one after an
			 * eviction): its runtime starts now */
			x->admitted = true;
			x->nadmit++;
			x->t_admit = now;
			XGROW(r->adm_log, r->capadm, (size_t)r->nadmitted + 1);
			r->adm_log[r->nadmitted++] = (struct stamp){ now, x->cq };
			heap_push(r, now + (int64_t)k->runtime_ms * 1000,
				  (int)idx, x->nadmit);
			/* a new earliest finish: the timer holder (or, when
			 * every finish thread is busy, nobody) looks again */
			if (r->heap[0].idx == (int)idx)
				pthread_cond_signal(&r->timer_cv[1]);
		} else if (!adm && x->admitted && !fin && !x->finished) {
			/* the admission ended without a finish (preempted):
			 * its pending finish patch is now stale */
			x->admitted = false;
			x->cpu_s += (double)k->cpu * (double)(now - x->t_admit) /
				    1e6;
			XGROW(r->lost_log, r->caplost, (size_t)r->nlost + 1);
			r->lost_log[r->nlost++] = (struct stamp){ now, x->cq };
		}
		if (fin && !x->finished) {
			x->finished = true;
			x->t_finish = now;
			if (!x->admitted) /* Finished while not admitted: flag it */
				bench_note("watch: workload %ld finished, "
					   "never seen admitted", idx);
			r->nfinished++;
			r->t_last_finish = now;
			if (r->nfinished + r->nfailed >= r->nwl)
				pthread_cond_broadcast(&r->cv);
		}
	}
	pthread_mutex_unlock(&r->mu);
	json_decref(ev);
}

/* bench_stop_fn: the run is over (ud: the run). */
static bool watch_stopped(void *ud)
{
	struct run *r = ud;
	bool stop;

	pthread_mutex_lock(&r->mu);
	stop = r->stop;
	pthread_mutex_unlock(&r->mu);
	return stop;
}

static void *watch_main(void *arg)
{
	struct run *r = arg;
	struct bench_watch w;

	bench_watch_init(&w, &r->kube, watch_event, watch_stopped, r);
	for (;;) {
		struct err err = { "" };
		char *url;
		bool stop;
		int rc;

		pthread_mutex_lock(&r->mu);
		stop = r->stop || r->watch_failed;
		url = xasprintf("%s" KAPI "/workloads?watch=1&resourceVersion=%s",
				r->kube.server,
				r->last_rv ? r->last_rv : "0");
		pthread_mutex_unlock(&r->mu);
		if (stop) {
			free(url);
			break;
		}
		rc = bench_watch_run(&w, url, &err);
		free(url);
		if (watch_stopped(r))
			break;
		/* The server ended the stream (its timeout): resume. */
		if (rc) {
			bench_note("watch: %s; reconnecting", err.msg);
			usleep(200000);
		}
	}
	bench_watch_release(&w);
	return NULL;
}

/* The list's resourceVersion, to watch from. */
static char *list_rv(const struct run *r)
{
	struct bench_conn c;
	json_t *o;
	char *rv = NULL;
	long code;

	bench_conn_init(&c, &r->kube);
	code = bench_request(&c, "GET", KAPI "/workloads?limit=1", NULL, NULL);
	if (code != 200)
		bench_die("list workloads: HTTP %ld", code);
	o = json_loads(c.buf, 0, NULL);
	if (o) {
		const char *s = json_string_value(json_object_get(
			json_object_get(o, "metadata"), "resourceVersion"));
		if (s)
			rv = xstrdup(s);
	}
	json_decref(o);
	bench_conn_release(&c);
	if (!rv)
		bench_die("list workloads: no resourceVersion");
	return rv;
}

/* ---- the manager's own metrics (its /metrics endpoint) ---- */

/* The manager's metrics URL from its log ("metrics server listening on
 * URL"), new, or NULL. */
static char *metrics_url(const char *dir)
{
	char *path = xasprintf("%s/manager.log", dir);
	char *text = bench_read_file(path);
	const char *p = text, *hit = NULL;
	static const char key[] = "metrics server listening on ";
	char *url = NULL;

	while (p && (p = strstr(p, key))) {
		hit = p + strlen(key);
		p++;
	}
	if (hit) {
		size_t n = strcspn(hit, "\" \n");

		url = xasprintf("%.*s/metrics", (int)n, hit);
	}
	free(text);
	free(path);
	return url;
}

#define MAX_SERIES 64

/* Request counts by verb (and events by result) from one scrape. */
struct scrape {
	bool ok;
	int n;
	char key[MAX_SERIES][48]; /* "PATCH 200", "events posted" */
	double v[MAX_SERIES];
};

static void scrape_add(struct scrape *sc, const char *key, double v)
{
	for (int i = 0; i < sc->n; i++) {
		if (!strcmp(sc->key[i], key)) {
			sc->v[i] += v;
			return;
		}
	}
	if (sc->n == MAX_SERIES)
		return;
	snprintf(sc->key[sc->n], sizeof(sc->key[0]), "%s", key);
	sc->v[sc->n++] = v;
}

/* The value of label name in a series line's {...}, into buf. */
static bool label_of(const char *line, const char *name, char *buf,
		     size_t cap)
{
	char pat[64];
	const char *p, *q;

	snprintf(pat, sizeof(pat), "%s=\"", name);
	p = strstr(line, pat);
	if (!p)
		return false;
	p += strlen(pat);
	q = strchr(p, '"');
	if (!q || (size_t)(q - p) >= cap)
		return false;
	memcpy(buf, p, (size_t)(q - p));
	buf[q - p] = '\0';
	return true;
}

static void scrape_metrics(const char *url, struct scrape *sc)
{
	struct bench_conn c;
	const char *line;

	memset(sc, 0, sizeof(*sc));
	if (!url)
		return;
	bench_conn_init(&c, NULL); /* a plain http URL */
	curl_easy_setopt(c.h, CURLOPT_URL, url);
	curl_easy_setopt(c.h, CURLOPT_TIMEOUT_MS, 10000L);
	if (curl_easy_perform(c.h) != CURLE_OK || !c.buf) {
		bench_conn_release(&c);
		return;
	}
	sc->ok = true;
	for (line = c.buf; line && *line;) {
		const char *eol = strchr(line, '\n');
		char l[512], a[20], b[20], reason[36], key[48];
		size_t n = eol ? (size_t)(eol - line) : strlen(line);
		const char *sp;

		snprintf(l, sizeof(l), "%.*s", (int)(n < 511 ? n : 511), line);
		sp = strrchr(l, ' ');
		if (sp && !strncmp(l, "cueue_api_requests_total{", 25) &&
		    label_of(l, "verb", a, sizeof(a)) &&
		    label_of(l, "code", b, sizeof(b))) {
			snprintf(key, sizeof(key), "%s %s", a, b);
			scrape_add(sc, key, strtod(sp + 1, NULL));
		} else if (sp && !strncmp(l, "cueue_events_total{", 19) &&
			   label_of(l, "result", a, sizeof(a))) {
			snprintf(key, sizeof(key), "events %s", a);
			scrape_add(sc, key, strtod(sp + 1, NULL));
		} else if (sp && !strncmp(l, "kueue_preempted_workloads_total{",
					  32) &&
			   label_of(l, "reason", reason, sizeof(reason))) {
			snprintf(key, sizeof(key), "preempted %s", reason);
			scrape_add(sc, key, strtod(sp + 1, NULL));
		}
		line = eol ? eol + 1 : NULL;
	}
	bench_conn_release(&c);
}

static double scrape_get(const struct scrape *sc, const char *key)
{
	for (int i = 0; i < sc->n; i++)
		if (!strcmp(sc->key[i], key))
			return sc->v[i];
	return 0;
}

/* ---- analysis ---- */

/* How many of v[0..n) (sorted) are <= t. */
static size_t count_le(const int64_t *v, size_t n, int64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static double pct(const int64_t *v, size_t n, double p)
{
	size_t i;

	if (!n)
		return -1;
	i = (size_t)(p / 100.0 * (double)n);
	if (i >= n)
		i = n - 1;
	return (double)v[i];
}

/*
 * Finish -> next admission, per cohort: for every Finished seen while
 * the cohort had a workload waiting (created, not admitted; or preempted,
 * not admitted again), the time to the next Admitted seen in that cohort
 * (every admission counts, re-admissions too; both on the scenario's watch, so
 * the whole loop: the finish patch's watch event, the manager freeing
 * quota and deciding, its admission write, that write's watch event).
 * Writes the sorted latencies (us) into *out (new); returns how many.
 */
static size_t finish_to_admit(const struct run *r, int64_t **out)
{
	int ncoh = r->sc->cohorts, per = r->sc->cqs_per_cohort;
	int64_t *cr = xcalloc((size_t)r->nwl, sizeof(*cr));
	int64_t *ad = xcalloc((size_t)r->nadmitted + 1, sizeof(*ad));
	int64_t *lo = xcalloc((size_t)r->nlost + 1, sizeof(*lo));
	int64_t *lat = xcalloc((size_t)r->nwl, sizeof(*lat));
	size_t nlat = 0;

	for (int k = 0; k < ncoh; k++) {
		size_t ncr = 0, nad = 0, nlo = 0;

		for (int i = 0; i < r->nwl; i++) {
			const struct wl *w = &r->wls[i];

			if (w->cq / per == k && w->created)
				cr[ncr++] = w->t_create;
		}
		for (int i = 0; i < r->nadmitted; i++)
			if (r->adm_log[i].cq / per == k)
				ad[nad++] = r->adm_log[i].t;
		for (int i = 0; i < r->nlost; i++)
			if (r->lost_log[i].cq / per == k)
				lo[nlo++] = r->lost_log[i].t;
		qsort(cr, ncr, sizeof(*cr), bench_cmp_i64);
		qsort(ad, nad, sizeof(*ad), bench_cmp_i64);
		qsort(lo, nlo, sizeof(*lo), bench_cmp_i64);
		for (int i = 0; i < r->nwl; i++) {
			const struct wl *w = &r->wls[i];
			size_t a;

			if (w->cq / per != k || !w->finished)
				continue;
			a = count_le(ad, nad, w->t_finish);
			/* someone waiting, and a later admission */
			if (count_le(cr, ncr, w->t_finish) +
					    count_le(lo, nlo, w->t_finish) > a &&
			    a < nad)
				lat[nlat++] = ad[a] - w->t_finish;
		}
	}
	qsort(lat, nlat, sizeof(*lat), bench_cmp_i64);
	free(cr);
	free(ad);
	free(lo);
	*out = lat;
	return nlat;
}

/*
 * The same arrivals under an ideal scheduler without preemption: zero
 * latency everywhere (an admission at the moment quota frees or a
 * workload arrives), Kueue's order (priority, then creation), each
 * cohort one pool (its ClusterQueues' nominal quota; borrowingLimit 100
 * lets any of them use all of it), every pending workload that fits
 * admitted (BestEffortFIFO: a head that does not fit lets the next one
 * try). What it leaves between the quota floor and its wall is the cost
 * of that order without preemption (small workloads fill the holes a
 * large one waits for); what the real run adds on top is latency.
 */
struct sim_res {
	double wall_s;
	double usage;
	double tta_s[NCLASS];
};

struct sim_wl {
	int64_t arrive, fin; /* ms */
	int cls, prio, cpu, run_ms;
	bool admitted, done;
};

static int sim_order(const void *a, const void *b)
{
	const struct sim_wl *x = *(const struct sim_wl *const *)a;
	const struct sim_wl *y = *(const struct sim_wl *const *)b;

	if (x->prio != y->prio)
		return y->prio - x->prio;
	return (x->arrive > y->arrive) - (x->arrive < y->arrive);
}

static void simulate(const struct scenario *sc, struct sim_res *res)
{
	int per = sc->cqs_per_cohort, n = 0, pool_cap = per * NOMINAL_CPU;
	double tta[NCLASS] = { 0 }, used = 0, end = 0;
	int ntta[NCLASS] = { 0 };

	for (int k = 0; k < NCLASS; k++)
		n += sc->cls[k].count * per;
	for (int coh = 0; coh < sc->cohorts; coh++) {
		struct sim_wl *w = xcalloc((size_t)n, sizeof(*w));
		struct sim_wl **ord = xcalloc((size_t)n, sizeof(*ord));
		int m = 0, free_cpu = pool_cap, left;

		for (int q = 0; q < per; q++)
			for (int k = 0; k < NCLASS; k++)
				for (int i = 0; i < sc->cls[k].count; i++) {
					struct sim_wl *x = &w[m];

					x->arrive = (int64_t)(i + 1) *
						    sc->cls[k].interval_ms;
					x->cls = k;
					x->prio = sc->cls[k].priority;
					x->cpu = sc->cls[k].cpu;
					x->run_ms = sc->cls[k].runtime_ms;
					x->fin = -1;
					ord[m] = x;
					m++;
				}
		qsort(ord, (size_t)m, sizeof(*ord), sim_order);
		left = m;
		for (int64_t t = 0; left > 0;) { /* from event to event */
			int64_t next = INT64_MAX;

			for (int i = 0; i < m; i++) {
				struct sim_wl *x = ord[i];

				if (x->admitted && !x->done && x->fin <= t) {
					x->done = true;
					free_cpu += x->cpu;
				}
			}
			for (int i = 0; i < m && free_cpu > 0; i++) {
				struct sim_wl *x = ord[i];

				if (x->admitted || x->arrive > t ||
				    x->cpu > free_cpu)
					continue;
				x->admitted = true;
				x->fin = t + x->run_ms;
				free_cpu -= x->cpu;
				tta[x->cls] += (double)(t - x->arrive) / 1e3;
				ntta[x->cls]++;
				used += (double)x->cpu * x->run_ms / 1e3;
				if ((double)x->fin / 1e3 > end)
					end = (double)x->fin / 1e3;
				left--;
			}
			for (int i = 0; i < m; i++) {
				const struct sim_wl *x = ord[i];

				if (!x->admitted && x->arrive > t &&
				    x->arrive < next)
					next = x->arrive;
				if (x->admitted && !x->done && x->fin < next)
					next = x->fin;
			}
			if (next == INT64_MAX)
				break; /* nothing can ever fit */
			t = next;
		}
		free(ord);
		free(w);
	}
	/* Kueue's formula, from the first creation due (t = 0) */
	res->wall_s = end;
	res->usage = end > 0 ? used * 100.0 /
			       ((double)sc->cohorts * pool_cap * end) : -1;
	for (int k = 0; k < NCLASS; k++)
		res->tta_s[k] = ntta[k] ? tta[k] / ntta[k] : -1;
}

/* ---- the report ---- */

static void row(const struct scenario *sc, const char *metric, double fig,
		int prec, const char *unit, double anchor, const char *aunit,
		const char *note_text)
{
	char what[256], f[32], a[64], ra[32];

	bench_fmt(f, sizeof(f), fig, prec);
	if (anchor > 0) {
		snprintf(a, sizeof(a), "%g %s", anchor, aunit);
		if (fig >= 0)
			snprintf(ra, sizeof(ra), "%.3g", fig / anchor);
		else
			snprintf(ra, sizeof(ra), "—");
	} else {
		snprintf(a, sizeof(a), "—");
		snprintf(ra, sizeof(ra), "—");
	}
	snprintf(what, sizeof(what), "%s: %s", sc->title, metric);
	bench_row(what, f, unit, a, ra, note_text);
}

/* The rows that explain the figures above: API traffic, the latency of
 * reusing freed quota, and what an ideal scheduler without preemption
 * would reach on the same arrivals. */
static void report_analysis(struct run *r, double wall_s, double floor_s,
			    double usage, const struct scrape *m0,
			    const struct scrape *m1)
{
	const struct scenario *sc = r->sc;
	static const char *const verbs[] = { "PATCH", "POST", "GET", "LIST",
					     "WATCH", "PUT", "DELETE" };
	struct sim_res sim;
	int64_t *lat;
	size_t nlat = finish_to_admit(r, &lat);
	char buf[1024], *n;

	qsort(r->flag, (size_t)r->nflag, sizeof(*r->flag), bench_cmp_i64);
	size_t len = 0;
	double total = 0;

	n = xasprintf("Finished seen by scenario-bench's watch while its "
		      "cohort had a workload waiting -> the next Admitted "
		      "seen in that cohort, over %zu finishes: watch "
		      "delivery, the manager's cycle and admission write, "
		      "its watch event; p50 %.0f, p90 %.0f, p99 %.0f ms; "
		      "the harness's own lag (finish due -> patch sent, %d "
		      "finish threads): p50 %.0f, p99 %.0f ms",
		      nlat, pct(lat, nlat, 50) / 1e3, pct(lat, nlat, 90) / 1e3,
		      pct(lat, nlat, 99) / 1e3, r->nworkers,
		      pct(r->flag, (size_t)r->nflag, 50) / 1e3,
		      pct(r->flag, (size_t)r->nflag, 99) / 1e3);
	row(sc, "finish -> next admission, p50", nlat ? pct(lat, nlat, 50) / 1e3
						     : -1,
	    1, "ms", 0, "", n);
	free(n);
	free(lat);

	simulate(sc, &sim);
	n = xasprintf("reference only, not the same work as the run above: "
		      "the same arrivals under an ideal scheduler without "
		      "preemption (zero latency, Kueue's order, each cohort "
		      "one pool, every pending workload that fits admitted): "
		      "usage %.1f %%, avg time to admission large / medium / "
		      "small %.2f / %.2f / %.2f s; measured wall - this = "
		      "%.1f s, this - floor = %.1f s",
		      sim.usage, sim.tta_s[LARGE], sim.tta_s[MEDIUM],
		      sim.tta_s[SMALL], wall_s - sim.wall_s,
		      sim.wall_s - floor_s);
	row(sc, "reference: ideal wall without preemption (simulated)",
	    sim.wall_s, 1, "s", 0, "", n);
	free(n);
	(void)usage;

	if (!m0->ok || !m1->ok) {
		row(sc, "manager API requests per workload", -1, 2, "requests",
		    0, "", "the manager's /metrics could not be read");
		return;
	}
	for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
		double sum = 0;
		char codes[256];
		size_t cl = 0;

		codes[0] = '\0';
		for (int i = 0; i < m1->n; i++) {
			size_t vl = strlen(verbs[v]);
			double d;

			if (strncmp(m1->key[i], verbs[v], vl) ||
			    m1->key[i][vl] != ' ')
				continue;
			d = m1->v[i] - scrape_get(m0, m1->key[i]);
			if (d <= 0)
				continue;
			sum += d;
			if (cl < sizeof(codes))
				cl += (size_t)snprintf(codes + cl,
						       sizeof(codes) - cl,
						       "%s%s: %.0f",
						       cl ? ", " : "",
						       m1->key[i] + vl + 1, d);
		}
		if (sum <= 0)
			continue;
		total += sum;
		if (len < sizeof(buf))
			len += (size_t)snprintf(buf + len, sizeof(buf) - len,
						"%s%s %.0f (%s)", len ? "; " : "",
						verbs[v], sum, codes);
	}
	if (!len)
		snprintf(buf, sizeof(buf), "none");
	n = xasprintf("cueue_api_requests_total from the manager's /metrics "
		      "(mirrored every 5 s), setup to the end, by verb (HTTP "
		      "code: count): %s; events posted %.0f, failed %.0f, "
		      "dropped %.0f", buf,
		      scrape_get(m1, "events posted") -
			      scrape_get(m0, "events posted"),
		      scrape_get(m1, "events failed") -
			      scrape_get(m0, "events failed"),
		      scrape_get(m1, "events dropped") -
			      scrape_get(m0, "events dropped"));
	row(sc, "manager API requests per workload", total / r->nwl, 2,
	    "requests", 0, "", n);
	free(n);
}

static void report(struct run *r, double wall_s, double mcpu, double mhwm,
		   double dcpu, const char *limits, const char *load,
		   const char *caveat, const struct scrape *m0,
		   const struct scrape *m1)
{
	const struct scenario *sc = r->sc;
	double demand = 0, gen_s = 0, cap = (double)r->ncq * NOMINAL_CPU;
	double used = 0, tta[NCLASS] = { 0 }, floor_s, usage, preempted;
	int ntta[NCLASS] = { 0 }, nevict[NCLASS] = { 0 }, npreempted = 0;
	int k, i;
	char *n, reasons[256];
	size_t rl = 0;

	for (k = 0; k < NCLASS; k++) {
		const struct wclass *c = &sc->cls[k];
		double g = (double)c->count * c->interval_ms / 1000.0;

		demand += (double)r->ncq * c->count * c->cpu * c->runtime_ms / 1000.0;
		if (g > gen_s)
			gen_s = g;
	}
	floor_s = demand / cap > gen_s ? demand / cap : gen_s;
	for (i = 0; i < r->nwl; i++) {
		const struct wl *w = &r->wls[i];

		if (w->nadmit == 0)
			continue;
		if (w->nevict > 0) {
			npreempted++;
			nevict[w->cls] += w->nevict;
		}
		tta[w->cls] += (double)(w->t_admit - w->t_create) / 1e6;
		ntta[w->cls]++;
		used += w->cpu_s;
		if (w->finished)
			used += (double)sc->cls[w->cls].cpu *
				(double)(w->t_finish - w->t_admit) / 1e6;
	}
	usage = used * 100.0 / (cap * wall_s);

	n = xasprintf("%sfirst creation due -> last Finished seen by "
		      "scenario-bench's watch (Kueue: minimalkueue's process "
		      "wall); manager at %s (Kueue's runner: 50/100); the CQs "
		      "ask for reclaimWithinCohort Any / withinClusterQueue "
		      "LowerPriority, as Kueue's generator makes them, and "
		      "cueue preempts as Kueue does; %d requests retried (429 "
		      "or transport error); load at the end %s",
		      caveat ? caveat : "", limits, r->nretries, load);
	row(sc, "wall time", wall_s, 1, "s", sc->a_wall_s, "s", n);
	free(n);
	if (caveat)
		row(sc, "TIMED OUT: workloads never seen finished",
		    r->nwl - r->nfinished, 0, "workloads", 0, "", caveat);
	n = xasprintf("max(total cpu-seconds demanded %.0f / total nominal "
		      "%.0f cpu = %.1f s, generation bound %.1f s: the "
		      "slowest set's count x interval); aim: wall <= 1.15 x floor",
		      demand, cap, demand / cap, gen_s);
	row(sc, "quota floor", floor_s, 1, "s", 0, "", n);
	free(n);
	row(sc, "wall / floor", wall_s / floor_s, 2, "x", 1.15, "(aim)",
	    "wall time / quota floor; anchor: the aim 1.15");
	if (sc->aim_wall_s > 0)
		row(sc, "wall time vs aim", wall_s, 1, "s", sc->aim_wall_s,
		    "s (aim)", "wall time against the issue's aim for this scale");
	row(sc, "CQ usage", usage, 1, "%", sc->a_usage, "%",
	    "Kueue's formula (spec §8.1): sum over CQs of the cpu integral "
	    "x 100 / (sum of nominal cpu x wall); the integral is our "
	    "bookkeeping (each workload's cpu over each of its admissions, "
	    "from the Admitted watch event to its Finished one, or to the "
	    "event that shows it preempted: work lost to a preemption "
	    "counts, as in Kueue's reservation integral); aim >= 85 %");
	for (k = NCLASS - 1; k >= 0; k--) {
		char m[64];

		snprintf(m, sizeof(m), "avg time to admission, %s", class_name[k]);
		row(sc, m, ntta[k] ? tta[k] / ntta[k] : -1, 2, "s",
		    sc->a_tta_s[k], "s",
		    "scenario-bench's monotonic clock (ms): before the create "
		    "POST -> the watch event with Admitted=True of the "
		    "workload's last admission (a preempted workload's "
		    "re-admission, as Kueue's recorder overwrites it); "
		    "condition times are whole seconds; mean over the class");
	}
	preempted = 0;
	for (i = 0; i < m1->n; i++)
		if (!strncmp(m1->key[i], "preempted ", 10)) {
			double d = m1->v[i] - scrape_get(m0, m1->key[i]);

			preempted += d;
			if (rl < sizeof(reasons) && d > 0)
				rl += (size_t)snprintf(reasons + rl,
						       sizeof(reasons) - rl,
						       "%s%s %.0f", rl ? ", " : "",
						       m1->key[i] + 10, d);
		}
	if (!rl)
		snprintf(reasons, sizeof(reasons), "none");
	n = xasprintf("kueue_preempted_workloads_total from the manager's "
		      "/metrics, setup to the end, by reason: %s; on "
		      "scenario-bench's watch: %d Evicted transitions on %d "
		      "workloads (large / medium / small: %d / %d / %d), %d "
		      "admissions ended without a finish, %d pending finish "
		      "patches dropped as stale; Kueue publishes no count "
		      "(its wlStates.csv has one per workload)",
		      reasons, r->nevicted, npreempted, nevict[LARGE],
		      nevict[MEDIUM], nevict[SMALL], r->nlost, r->nstale);
	row(sc, "preemptions", m0->ok && m1->ok ? preempted : -1, 0,
	    "workloads", 0, "", n);
	free(n);
	row(sc, "manager CPU", mcpu, 2, "s", sc->a_cpu_s, "s",
	    "utime+stime of the manager pid (/proc/PID/stat) over the scenario "
	    "(setup to the end); Kueue: minimalkueue user+sys, whole process");
	row(sc, "manager CPU per workload", mcpu >= 0 ? mcpu * 1000 / r->nwl : -1,
	    3, "ms", 0.5, "ms (aim)", "manager CPU / workloads; anchor: the aim");
	n = xasprintf("VmHWM of the manager pid (/proc/PID/status; a fresh "
		      "manager per scenario); aim <= 64 MiB; the devserver used "
		      "%.1f s CPU", dcpu);
	row(sc, "manager max RSS", mhwm, 1, "MiB", sc->a_rss_mib, "MiB", n);
	free(n);
	report_analysis(r, wall_s, floor_s, usage, m0, m1);
}

static void dump(const struct run *r, const char *path)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f) {
		bench_note("%s: %s", path, strerror(errno));
		return;
	}
	fprintf(f, "cq,class,created_ms,admitted_ms,finished_ms,evictions\n");
	for (i = 0; i < r->nwl; i++) {
		const struct wl *w = &r->wls[i];

		fprintf(f, "%s,%s,%.1f,%.1f,%.1f,%d\n", r->cq_name[w->cq],
			class_name[w->cls],
			w->created ? (double)(w->t_create - r->t0) / 1e3 : -1.0,
			w->nadmit ? (double)(w->t_admit - r->t0) / 1e3 : -1.0,
			w->finished ? (double)(w->t_finish - r->t0) / 1e3 : -1.0,
			w->nevict);
	}
	fclose(f);
}

/* ---- main ---- */

static void usage_exit(void)
{
	fprintf(stderr, "usage: scenario-bench --cluster DIR "
			"--scenario baseline|large|quick [--timeout S] "
			"[--workers N] [--dump FILE]\n");
	exit(2);
}

static char *loadavg(void)
{
	char *t = bench_read_file("/proc/loadavg");
	char a[16], b[16], c[16];
	char *s;

	if (!t || sscanf(t, "%15s %15s %15s", a, b, c) != 3)
		s = xstrdup("?");
	else
		s = xasprintf("%s %s %s", a, b, c);
	free(t);
	return s;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *name = NULL, *dump_path = NULL;
	struct run r = { 0 };
	pthread_condattr_t ca;
	struct worker *workers;
	pthread_t watcher;
	int nworkers = 0, timeout_s = 0, i, rc = 0, lost = 0;
	bool timed_out;
	char *caveat = NULL;
	long mpid, dpid;
	double mcpu0, dcpu0, wall_s;
	char *limits, *load, *murl;
	struct scrape m0, m1;
	int64_t deadline, last_print;
	struct err err = { "" };

	bench_init("scenario-bench");
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cluster") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--scenario") && i + 1 < argc)
			name = argv[++i];
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			timeout_s = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dump") && i + 1 < argc)
			dump_path = argv[++i];
		else if (!strcmp(argv[i], "--workers") && i + 1 < argc)
			nworkers = atoi(argv[++i]);
		else
			usage_exit();
	}
	if (!dir || !name || nworkers < 0)
		usage_exit();
	for (i = 0; i < (int)(sizeof(scenarios) / sizeof(scenarios[0])); i++)
		if (!strcmp(scenarios[i].name, name))
			r.sc = &scenarios[i];
	if (!r.sc)
		usage_exit();
	if (timeout_s <= 0)
		timeout_s = r.sc->timeout_s;
	if (nworkers <= 0)
		nworkers = r.sc->workers;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (bench_kube_load(&r.kube, dir, &err) < 0)
		bench_die("%s", err.msg);
	mpid = bench_read_pid(dir, "manager");
	dpid = bench_read_pid(dir, "devserver");
	if (mpid <= 0)
		bench_note("no manager pid in %s: no CPU/RSS figures", dir);
	limits = manager_limits(dir);
	murl = metrics_url(dir);
	pthread_mutex_init(&r.mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r.cv, &ca);
	for (i = 0; i < 2; i++) {
		pthread_cond_init(&r.timer_cv[i], &ca);
		pthread_cond_init(&r.work_cv[i], &ca);
	}
	pthread_condattr_destroy(&ca);

	r.ncq = r.sc->cohorts * r.sc->cqs_per_cohort;
	r.cq_name = xcalloc((size_t)r.ncq, sizeof(*r.cq_name));
	for (i = 0; i < r.ncq; i++)
		r.cq_name[i] = xasprintf("cq-0-%d-cohort-%d",
					 i % r.sc->cqs_per_cohort,
					 i / r.sc->cqs_per_cohort);
	plan(&r);
	r.flag = xcalloc((size_t)r.nwl, sizeof(*r.flag));
	bench_note("%s: %d ClusterQueues, %d workloads, manager pid %ld (%s)",
		   r.sc->name, r.ncq, r.nwl, mpid, limits);

	scrape_metrics(murl, &m0);
	mcpu0 = bench_proc_cpu_s(mpid);
	dcpu0 = bench_proc_cpu_s(dpid);
	setup(&r);
	r.last_rv = list_rv(&r);
	bench_note("setup done; generating");
	if (pthread_create(&watcher, NULL, watch_main, &r))
		bench_die("pthread_create failed");
	r.nworkers = nworkers;
	workers = xcalloc(2 * (size_t)nworkers, sizeof(*workers));
	pthread_mutex_lock(&r.mu);
	r.t0 = bench_now_us();
	pthread_mutex_unlock(&r.mu);
	for (i = 0; i < 2 * nworkers; i++) {
		workers[i].r = &r;
		workers[i].finisher = i >= nworkers;
		if (pthread_create(&workers[i].th, NULL, worker_main, &workers[i]))
			bench_die("pthread_create failed");
	}

	deadline = r.t0 + (int64_t)timeout_s * 1000000;
	last_print = r.t0;
	pthread_mutex_lock(&r.mu);
	for (;;) {
		int64_t now = bench_now_us(), wake = now + 1000000;
		struct timespec ts;

		if (r.nfinished + r.nfailed >= r.nwl || r.watch_failed)
			break;
		if (now >= deadline) {
			rc = 1;
			break;
		}
		if (now - last_print >= 5000000) {
			bench_note("%.0f s: %d created, %d admissions, "
				   "%d preempted, %d finished, %d failed",
				   (double)(now - r.t0) / 1e6, r.ncreated,
				   r.nadmitted, r.nlost,
				   r.nfinished, r.nfailed);
			last_print = now;
		}
		ts.tv_sec = wake / 1000000;
		ts.tv_nsec = (wake % 1000000) * 1000;
		pthread_cond_timedwait(&r.cv, &r.mu, &ts);
	}
	r.stop = true;
	pthread_cond_broadcast(&r.cv);
	for (i = 0; i < 2; i++) {
		pthread_cond_broadcast(&r.timer_cv[i]);
		pthread_cond_broadcast(&r.work_cv[i]);
	}
	pthread_mutex_unlock(&r.mu);
	for (i = 0; i < 2 * nworkers; i++)
		pthread_join(workers[i].th, NULL);
	pthread_join(watcher, NULL);
	free(workers);

	load = loadavg();
	if (dump_path)
		dump(&r, dump_path);
	if (r.nretries > 0)
		bench_note("%d requests retried (429 or transport error)",
			   r.nretries);
	timed_out = rc != 0;
	if (rc || r.watch_failed || r.nfailed > 0) {
		int pend = 0, adm = 0, notcr = 0;

		for (i = 0; i < r.nwl; i++) {
			const struct wl *w = &r.wls[i];

			if (!w->created)
				notcr++;
			else if (!w->nadmit)
				pend++;
			else if (!w->admitted && !w->finished)
				lost++;
			else if (!w->finished)
				adm++;
		}
		bench_note("%s: %s: %d not created, %d pending (never seen "
			   "admitted), %d preempted and not admitted again, %d "
			   "admitted but not seen finished, %d failed for good, "
			   "%d requests retried", r.sc->name,
			   rc ? "TIMED OUT" : "FAILED", notcr, pend, lost, adm,
			   r.nfailed, r.nretries);
		if (timed_out)
			caveat = xasprintf("TIMED OUT after %d s with %d "
					   "workloads never seen admitted and "
					   "%d preempted and never admitted "
					   "again: the figures are over the "
					   "workloads that finished, wall to "
					   "the last Finished seen; ",
					   timeout_s, pend, lost);
		for (i = 0; i < r.nwl && pend > 0; i++) {
			const struct wl *w = &r.wls[i];
			char nm[64];

			if (w->created && !w->admitted) {
				wl_name(&r, i, nm, sizeof(nm));
				bench_note("first pending workload: %s/%s",
					   r.cq_name[w->cq], nm);
				break;
			}
		}
		rc = 1;
	}
	if (!r.watch_failed && r.nfailed == 0) {
		double mcpu1 = bench_proc_cpu_s(mpid);
		double dcpu1 = bench_proc_cpu_s(dpid);

		wall_s = (double)(r.t_last_finish - r.t0) / 1e6;
		bench_note("%s: done in %.1f s; %d evictions seen, %d "
			   "admissions ended without a finish",
			   r.sc->name, wall_s, r.nevicted, r.nlost);
		double hwm = bench_proc_hwm_mib(mpid);

		/* the manager mirrors its request counters every 5 s */
		bench_note("reading the manager's metrics");
		usleep(5500000);
		scrape_metrics(murl, &m1);
		report(&r, wall_s, mcpu0 >= 0 && mcpu1 >= 0 ? mcpu1 - mcpu0 : -1,
		       hwm, dcpu0 >= 0 && dcpu1 >= 0 ? dcpu1 - dcpu0 : -1,
		       limits, load, caveat, &m0, &m1);
	}
	free(caveat);

	free(load);
	free(limits);
	free(murl);
	for (i = 0; i < r.ncq; i++)
		free(r.cq_name[i]);
	free(r.cq_name);
	free(r.wls);
	free(r.creates);
	free(r.heap);
	free(r.flag);
	free(r.adm_log);
	free(r.lost_log);
	free(r.last_rv);
	bench_kube_release(&r.kube);
	pthread_cond_destroy(&r.cv);
	for (i = 0; i < 2; i++) {
		pthread_cond_destroy(&r.timer_cv[i]);
		pthread_cond_destroy(&r.work_cv[i]);
	}
	pthread_mutex_destroy(&r.mu);
	curl_global_cleanup();
	return rc;
}
