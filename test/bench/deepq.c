/*
 * deepq-bench: how fast freed quota is reused when one ClusterQueue holds
 * a deep queue (our answer to kueue#14477, where a queue 536 deep waited
 * a p50 of 64 minutes while shallow ones waited 12 s), against a running
 * devcluster (test/e2e/devcluster: cueue-devserver plus cueue-manager),
 * as rows for test/bench/run.sh (BENCHMARKS.md).
 *
 *   deepq-bench --cluster DIR [--depths 100,1000,10000] [--samples N]
 *
 * Per depth D, in order (QUICK=1: 100 and 1,000, 25 samples or 6 s of
 * sampling each; else 100, 1,000 and 10,000, 300 samples or 90 s):
 *  1. A ClusterQueue deep-D of its own (cpu nominal 64, no cohort,
 *     BestEffortFIFO, withinClusterQueue LowerPriority), a namespace and
 *     LocalQueue of the same name. Workloads of 1, 2, 4 or 8 cpu and
 *     priority 0, 100 or 200 (uniform, a fixed seed), created directly
 *     (no Job). It fills the queue: D pending once the quota is full, then
 *     waits until the watch is quiet (the manager's pending status writes
 *     of D workloads are done).
 *  2. Samples, one at a time: a running workload (admitted, not finished,
 *     at least as large as the smallest pending one, so something can
 *     take its place) is finished: a JSON patch appending Finished=True
 *     that tests the resourceVersion last seen. Quota freed = just before
 *     that PATCH is sent. Next admission = the first watch event, read
 *     after that moment, that shows a workload of deep-D Admitted=True
 *     after not being so (the manager's admission write seen: a
 *     preemption on the way, when the head takes the quota from
 *     lower-priority workloads, is part of the latency). Then the queue is
 *     topped up to D pending again and the watch must be quiet for 30 ms
 *     before the next sample, so admissions of the refill are never
 *     taken for the next sample's. A sample with no admission within 2 s
 *     counts as 2 s (and is reported); three in a row end the phase as
 *     stalled, with the manager's ClusterQueue counts beside the
 *     watch's in the note.
 *  3. Rows: p50 and p99 of quota freed -> next admission per depth (aim:
 *     p99 <= 100 ms, flat from 100 to 10,000), the manager's part (the
 *     Finished watch event -> the admission's), preemptions seen, and the
 *     p99 ratio deepest / shallowest.
 *
 * DIR/kubeconfig gives the server, CA and token; DIR/manager.pid the
 * manager whose CPU time and peak RSS the note gives.
 *
 * Threads: the main thread (setup, samples, report), one watch thread,
 * and during a fill NFILL creation threads. They share struct run under
 * one mutex.
 *
 * Exit 0 when every phase ran (single timeouts of samples are figures),
 * 1 on a failed request or watch or a stalled phase (its rows are still
 * printed), 2 on bad usage.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
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
#define ID_LABEL "bench.cueue.dev/id"
#define NOMINAL_STR "64"
#define SAMPLE_WAIT_US 2000000 /* a sample gives up after 2 s */
#define MAX_STALLS 3           /* timeouts in a row end the phase */
#define BUDGET_US 90000000     /* sampling time per depth (QUICK=1: 6 s) */
#define QUICK_BUDGET_US 6000000
#define QUIET_US 30000         /* watch quiet before a sample */
#define FILL_QUIET_US 300000   /* watch quiet after a fill */
#define FILL_WAIT_US 120000000 /* at most this long for a fill */
#define NFILL 4                /* creation threads of a fill */
#define MAX_TRIES 12           /* per request, on retryable answers */
#define MAX_DEPTHS 8

static const int sizes[] = { 1, 2, 4, 8 };
static const int prios[] = { 0, 100, 200 };

struct dwl {
	int depth_ix;  /* the phase (ClusterQueue) it belongs to */
	int cpu;
	int prio;
	bool seen;     /* on the watch at least once */
	bool admitted; /* Admitted=True on the last event seen */
	bool finished;
	bool evicted;  /* Evicted=True on the last event seen */
	int64_t t_fin; /* us: its Finished watch event */
	char rv[24];   /* the last resourceVersion seen */
};

struct run {
	struct bench_kube kube;
	pthread_mutex_t mu;
	pthread_cond_t cv; /* CLOCK_MONOTONIC: any watch event */
	struct dwl *w;     /* owned; index = the ID label */
	size_t nw, capw;
	int cur;           /* the phase whose counters run */
	int pending;       /* of the current phase: seen, not admitted, not
			      finished */
	int running;       /* of the current phase: admitted, not finished */
	int nevicted;      /* of the current phase: Evicted transitions */
	uint64_t nadm;     /* admissions of the current phase seen */
	int64_t *adm_t;    /* owned: their times (us), nadm of them */
	size_t capadm;
	int64_t last_ev;   /* us: the last event of the current phase */
	bool stop;
	bool failed;       /* a request or the watch failed for good */
	char *last_rv;     /* owned; the watch's resourceVersion */
	uint32_t rnd;      /* xorshift32 state (main thread only) */
	/* the fill in progress (creation threads) */
	size_t fill_next, fill_end;
};

struct phase_res {
	int depth;
	size_t n;           /* samples */
	int64_t *lat;       /* owned, n: quota freed -> next admission (us) */
	int64_t *mgr;       /* owned, nmgr: Finished seen -> admission (us) */
	size_t nmgr;
	int timeouts;
	bool stalled;       /* MAX_STALLS timeouts in a row ended it */
	bool over_budget;   /* the time budget ended it */
	char *cq_state;     /* owned or NULL: at a stall, the manager's
			       ClusterQueue counts against the watch's */
	int evicted;
	double fill_s;      /* creating D (plus the quota's worth) */
	double settle_s;    /* then waiting for the watch to be quiet */
};

static uint32_t rnd(struct run *r)
{
	uint32_t x = r->rnd;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	r->rnd = x;
	return x;
}

/* 100 ms, 200 ms, ... capped at 1 s (the devserver's Retry-After). */
static void backoff(int tries)
{
	long ms = 100L << (tries < 4 ? tries : 4);

	usleep((useconds_t)(ms > 1000 ? 1000 : ms) * 1000);
}

static void fail(struct run *r)
{
	pthread_mutex_lock(&r->mu);
	r->failed = true;
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* ---- setup ---- */

static void setup_queue(struct run *r, int depth)
{
	struct bench_conn c;
	char n[32], *path;

	snprintf(n, sizeof(n), "deep-%d", depth);
	bench_conn_init(&c, &r->kube);
	bench_create_take(&c, "/api/v1/namespaces",
			  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
				    "kind", "Namespace", "metadata", "name", n),
			  true);
	bench_create_take(&c, KAPI "/clusterqueues",
			  json_pack("{s:s, s:s, s:{s:s}, "
				    "s:{s:{}, s:s, s:{s:s, s:s}, "
				    "s:[{s:[s], s:[{s:s, s:[{s:s, s:s}]}]}]}}",
				    "apiVersion", "kueue.x-k8s.io/v1beta2",
				    "kind", "ClusterQueue", "metadata", "name",
				    n, "spec", "namespaceSelector",
				    "queueingStrategy", "BestEffortFIFO",
				    "preemption", "reclaimWithinCohort", "Any",
				    "withinClusterQueue", "LowerPriority",
				    "resourceGroups", "coveredResources", "cpu",
				    "flavors", "name", "rf", "resources", "name",
				    "cpu", "nominalQuota", NOMINAL_STR),
			  true);
	path = xasprintf(KAPI "/namespaces/%s/localqueues", n);
	bench_create_take(&c, path,
			  json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}",
				    "apiVersion", "kueue.x-k8s.io/v1beta2",
				    "kind", "LocalQueue", "metadata", "name", n,
				    "namespace", n, "spec", "clusterQueue", n),
			  true);
	free(path);
	bench_conn_release(&c);
}

/* ---- creations ---- */

/* Creates workload id (its entry already in r->w). */
static void create_one(struct run *r, struct bench_conn *c, size_t id,
		       int depth)
{
	char ns[32], name[48], idl[24], cpu[8], *path, *body;
	int cpu_v, prio;
	json_t *o;
	long code = 0;

	pthread_mutex_lock(&r->mu);
	cpu_v = r->w[id].cpu;
	prio = r->w[id].prio;
	pthread_mutex_unlock(&r->mu);
	snprintf(ns, sizeof(ns), "deep-%d", depth);
	snprintf(name, sizeof(name), "w-%zu", id);
	snprintf(idl, sizeof(idl), "%zu", id);
	snprintf(cpu, sizeof(cpu), "%d", cpu_v);
	o = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s}}, "
		      "s:{s:s, s:i, s:[{s:s, s:i, s:{s:{s:s, s:[{s:s, s:s, "
		      "s:{s:{s:s}}}]}}}]}}",
		      "apiVersion", "kueue.x-k8s.io/v1beta2", "kind", "Workload",
		      "metadata", "name", name, "namespace", ns, "labels",
		      ID_LABEL, idl,
		      "spec", "queueName", ns, "priority", prio,
		      "podSets", "name", "main", "count", 1, "template", "spec",
		      "restartPolicy", "Never", "containers", "name", "c",
		      "image", "pause", "resources", "requests", "cpu", cpu);
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	path = xasprintf(KAPI "/namespaces/%s/workloads", ns);
	for (int tries = 0;; tries++) {
		code = bench_request(c, "POST", path, "application/json",
				     body);
		if (code == 201 || (code == 409 && tries > 0) ||
		    !bench_is_retryable(code) || tries + 1 >= MAX_TRIES)
			break;
		backoff(tries);
	}
	if (code != 201 && code != 409) {
		bench_note("create %s/%s: HTTP %ld: %.200s", ns, name, code,
			   c->buf ? c->buf : "");
		fail(r);
	}
	free(path);
	free(body);
}

/* New entries for n workloads of phase ix (random size and priority);
 * returns the first id. */
static size_t plan_more(struct run *r, int ix, size_t n)
{
	size_t first;

	pthread_mutex_lock(&r->mu);
	first = r->nw;
	XGROW(r->w, r->capw, r->nw + n);
	for (size_t i = 0; i < n; i++) {
		struct dwl *x = &r->w[r->nw++];

		memset(x, 0, sizeof(*x));
		x->depth_ix = ix;
		x->cpu = sizes[rnd(r) % (sizeof(sizes) / sizeof(sizes[0]))];
		x->prio = prios[rnd(r) % (sizeof(prios) / sizeof(prios[0]))];
	}
	pthread_mutex_unlock(&r->mu);
	return first;
}

struct filler {
	struct run *r;
	int depth;
	pthread_t th;
};

static void *fill_main(void *arg)
{
	struct filler *f = arg;
	struct run *r = f->r;
	struct bench_conn c;

	bench_conn_init(&c, &r->kube);
	for (;;) {
		size_t id;

		pthread_mutex_lock(&r->mu);
		if (r->failed || r->fill_next >= r->fill_end) {
			pthread_mutex_unlock(&r->mu);
			break;
		}
		id = r->fill_next++;
		pthread_mutex_unlock(&r->mu);
		create_one(r, &c, id, f->depth);
	}
	bench_conn_release(&c);
	return NULL;
}

/* Creates n more workloads of phase ix: inline when few, else with NFILL
 * threads. */
static void create_more(struct run *r, struct bench_conn *c, int ix,
			int depth, size_t n)
{
	size_t first = plan_more(r, ix, n);
	struct filler f[NFILL];

	if (n < 50) {
		for (size_t i = 0; i < n; i++)
			create_one(r, c, first + i, depth);
		return;
	}
	pthread_mutex_lock(&r->mu);
	r->fill_next = first;
	r->fill_end = first + n;
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < NFILL; i++) {
		f[i].r = r;
		f[i].depth = depth;
		if (pthread_create(&f[i].th, NULL, fill_main, &f[i]))
			bench_die("pthread_create failed");
	}
	for (int i = 0; i < NFILL; i++)
		pthread_join(f[i].th, NULL);
}

/* ---- the watch ---- */

/* One event line (bench_line_fn, ud: the run). */
static void watch_event(void *ud, const char *p, size_t n)
{
	struct run *r = ud;
	json_error_t jerr;
	json_t *ev = json_loadb(p, n, 0, &jerr), *obj, *meta;
	const char *type, *rv, *id;
	int64_t now = bench_now_us();
	bool adm, fin, evi;
	long idx;

	if (!ev) {
		bench_note("watch: bad event line: %s", jerr.text);
		return;
	}
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	meta = json_object_get(obj, "metadata");
	if (type && !strcmp(type, "ERROR")) {
		bench_note("watch: ERROR event");
		json_decref(ev);
		fail(r);
		return;
	}
	rv = json_string_value(json_object_get(meta, "resourceVersion"));
	id = json_string_value(json_object_get(json_object_get(meta, "labels"),
					       ID_LABEL));
	idx = id ? strtol(id, NULL, 10) : -1;
	adm = bench_has_condition(obj, "Admitted");
	fin = bench_has_condition(obj, "Finished");
	evi = bench_has_condition(obj, "Evicted");
	pthread_mutex_lock(&r->mu);
	if (rv) {
		free(r->last_rv);
		r->last_rv = xstrdup(rv);
	}
	if (idx >= 0 && (size_t)idx < r->nw && type &&
	    strcmp(type, "DELETED")) {
		struct dwl *x = &r->w[idx];
		bool cur = x->depth_ix == r->cur;

		if (rv)
			snprintf(x->rv, sizeof(x->rv), "%s", rv);
		if (cur)
			r->last_ev = now;
		if (!x->seen) {
			x->seen = true;
			if (cur && !adm && !fin)
				r->pending++;
		}
		if (evi && !x->evicted && cur)
			r->nevicted++;
		x->evicted = evi;
		if (adm && !x->admitted && !x->finished) {
			x->admitted = true;
			if (cur) {
				r->pending--;
				r->running++;
				XGROW(r->adm_t, r->capadm, r->nadm + 1);
				r->adm_t[r->nadm++] = now;
			}
		} else if (!adm && x->admitted && !fin && !x->finished) {
			x->admitted = false; /* preempted: pending again */
			if (cur) {
				r->running--;
				r->pending++;
			}
		}
		if (fin && !x->finished) {
			x->finished = true;
			x->t_fin = now;
			if (cur && x->admitted)
				r->running--;
			else if (cur)
				r->pending--;
		}
	}
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	json_decref(ev);
}

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
		stop = r->stop || r->failed;
		url = xasprintf("%s" KAPI "/workloads?watch=1&resourceVersion=%s",
				r->kube.server, r->last_rv ? r->last_rv : "0");
		pthread_mutex_unlock(&r->mu);
		if (stop) {
			free(url);
			break;
		}
		rc = bench_watch_run(&w, url, &err);
		free(url);
		if (watch_stopped(r))
			break;
		if (rc) {
			bench_note("watch: %s; reconnecting", err.msg);
			usleep(200000);
		}
	}
	bench_watch_release(&w);
	return NULL;
}

static char *list_rv(const struct run *r)
{
	struct bench_conn c;
	json_t *o;
	char *rv = NULL;

	bench_conn_init(&c, &r->kube);
	if (bench_request(&c, "GET", KAPI "/workloads?limit=1", NULL, NULL) !=
	    200)
		bench_die("list workloads failed");
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

/* ---- the phases (main thread) ---- */

/* Waits (under mu) until the current phase's watch has been quiet for
 * quiet_us, at most max_us; false on a failure. */
static bool wait_quiet(struct run *r, int64_t quiet_us, int64_t max_us)
{
	int64_t end = bench_now_us() + max_us;

	for (;;) {
		int64_t now = bench_now_us(), wake;
		struct timespec ts;

		if (r->failed)
			return false;
		if (now - r->last_ev >= quiet_us || now >= end)
			return true;
		wake = r->last_ev + quiet_us;
		if (wake > end)
			wake = end;
		ts.tv_sec = wake / 1000000;
		ts.tv_nsec = (wake % 1000000) * 1000;
		pthread_cond_timedwait(&r->cv, &r->mu, &ts);
	}
}

static const char finish_patch[] =
	"[{\"op\":\"test\",\"path\":\"/metadata/resourceVersion\","
	"\"value\":\"%s\"},"
	"{\"op\":\"add\",\"path\":\"/status/conditions/-\",\"value\":"
	"{\"type\":\"Finished\",\"status\":\"True\",\"reason\":\"Succeeded\","
	"\"message\":\"finished by deepq-bench\","
	"\"lastTransitionTime\":\"%s\"}}]";

/*
 * Picks (under mu) a running workload of the current phase at least as
 * large as the smallest pending one (random among them), or -1.
 */
static long pick_victim(struct run *r)
{
	int minp = 1 << 30;
	size_t n = 0;
	long pick = -1;

	for (size_t i = 0; i < r->nw; i++) {
		const struct dwl *x = &r->w[i];

		if (x->depth_ix == r->cur && x->seen && !x->admitted &&
		    !x->finished && x->cpu < minp)
			minp = x->cpu;
	}
	for (size_t i = 0; i < r->nw; i++) {
		const struct dwl *x = &r->w[i];

		if (x->depth_ix != r->cur || !x->admitted || x->finished ||
		    x->cpu < minp)
			continue;
		/* reservoir sampling: uniform over the eligible ones */
		if (rnd(r) % ++n == 0)
			pick = (long)i;
	}
	return pick;
}

/*
 * One sample: finish a running workload, wait for the next admission.
 * Returns the latency in us (SAMPLE_WAIT_US on a timeout), or -1 when no
 * workload could be finished. *mgr: Finished event -> admission, or -1.
 */
static int64_t sample(struct run *r, struct bench_conn *c, int depth,
		      int64_t *mgr)
{
	char path[128], body[640], ts[32], rv[24];
	uint64_t seq0;
	int64_t t_free = 0, lat = -1;
	long victim = -1;
	long code = 0;

	*mgr = -1;
	for (int attempt = 0; attempt < 20; attempt++) {
		time_t now = time(NULL);
		struct tm tm;

		pthread_mutex_lock(&r->mu);
		victim = pick_victim(r);
		if (victim >= 0)
			memcpy(rv, r->w[victim].rv, sizeof(rv));
		seq0 = r->nadm;
		pthread_mutex_unlock(&r->mu);
		if (victim < 0)
			return -1;
		gmtime_r(&now, &tm);
		strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", &tm);
		snprintf(body, sizeof(body), finish_patch, rv, ts);
		snprintf(path, sizeof(path),
			 KAPI "/namespaces/deep-%d/workloads/w-%ld/status",
			 depth, victim);
		t_free = bench_now_us();
		code = bench_request(c, "PATCH", path,
				     "application/json-patch+json", body);
		if (code == 200)
			break;
		if (code != 409 && code != 422 && !bench_is_retryable(code)) {
			bench_note("finish w-%ld: HTTP %ld: %.200s", victim,
				   code, c->buf ? c->buf : "");
			fail(r);
			return -1;
		}
		usleep(5000); /* it moved on: wait for the watch, pick again */
	}
	if (code != 200)
		return -1;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		int64_t now = bench_now_us(), end = t_free + SAMPLE_WAIT_US;
		struct timespec tsp;
		uint64_t i;

		for (i = seq0; i < r->nadm && r->adm_t[i] < t_free; i++)
			;
		if (i < r->nadm) {
			const struct dwl *x = &r->w[victim];

			lat = r->adm_t[i] - t_free;
			if (x->finished && x->t_fin <= r->adm_t[i])
				*mgr = r->adm_t[i] - x->t_fin;
			break;
		}
		if (r->failed || now >= end) {
			lat = SAMPLE_WAIT_US;
			break;
		}
		tsp.tv_sec = end / 1000000;
		tsp.tv_nsec = (end % 1000000) * 1000;
		pthread_cond_timedwait(&r->cv, &r->mu, &tsp);
	}
	pthread_mutex_unlock(&r->mu);
	return lat;
}

/* What the manager's ClusterQueue status says against what the watch
 * shows (new string): a stall with free quota on the watch's side and
 * none on the manager's is a reservation the manager still counts. */
static char *cq_state(struct run *r, struct bench_conn *c, int depth)
{
	char path[96];
	json_t *o = NULL, *st;
	int running, pending;
	long code;

	snprintf(path, sizeof(path), KAPI "/clusterqueues/deep-%d", depth);
	code = bench_request(c, "GET", path, NULL, NULL);
	if (code == 200 && c->buf)
		o = json_loads(c->buf, 0, NULL);
	pthread_mutex_lock(&r->mu);
	running = r->running;
	pending = r->pending;
	pthread_mutex_unlock(&r->mu);
	st = json_object_get(o, "status");
	{
		char *s = xasprintf("the manager's ClusterQueue status: "
				    "reservingWorkloads %lld, "
				    "pendingWorkloads %lld; the watch: %d "
				    "admitted, %d pending",
				    json_integer_value(json_object_get(
					    st, "reservingWorkloads")),
				    json_integer_value(json_object_get(
					    st, "pendingWorkloads")),
				    running, pending);

		json_decref(o);
		return s;
	}
}

static int run_phase(struct run *r, int ix, int depth, int nsamples,
		     int64_t budget_us, struct phase_res *res)
{
	struct bench_conn c;
	int64_t t0, t_end;
	int top, stalls = 0;

	memset(res, 0, sizeof(*res));
	res->depth = depth;
	res->lat = xcalloc((size_t)nsamples, sizeof(*res->lat));
	res->mgr = xcalloc((size_t)nsamples, sizeof(*res->mgr));
	setup_queue(r, depth);
	pthread_mutex_lock(&r->mu);
	r->cur = ix;
	r->pending = r->running = r->nevicted = 0;
	r->nadm = 0;
	r->last_ev = bench_now_us();
	pthread_mutex_unlock(&r->mu);
	bench_conn_init(&c, &r->kube);

	/* 1. fill: D pending once the quota is full (the quota's worth is
	 * admitted from the first ones: top up until D wait) */
	t0 = bench_now_us();
	create_more(r, &c, ix, depth, (size_t)depth);
	for (int round = 0; round < 10; round++) {
		bool failed;

		pthread_mutex_lock(&r->mu);
		failed = !wait_quiet(r, QUIET_US, 2000000);
		top = depth - r->pending;
		pthread_mutex_unlock(&r->mu);
		if (top <= 0 || failed)
			break;
		create_more(r, &c, ix, depth, (size_t)top);
	}
	res->fill_s = (double)(bench_now_us() - t0) / 1e6;
	t0 = bench_now_us();
	pthread_mutex_lock(&r->mu);
	wait_quiet(r, FILL_QUIET_US, FILL_WAIT_US);
	bench_note("depth %d: %d pending, %d running after the fill "
		   "(%.1f s) and %.1f s of settling", depth, r->pending,
		   r->running, res->fill_s,
		   (double)(bench_now_us() - t0) / 1e6);
	r->nevicted = 0;
	pthread_mutex_unlock(&r->mu);
	res->settle_s = (double)(bench_now_us() - t0) / 1e6;

	/* 2. samples, within the time budget */
	t_end = bench_now_us() + budget_us;
	for (int s = 0; s < nsamples; s++) {
		int64_t mgr, lat;
		bool failed;

		pthread_mutex_lock(&r->mu);
		failed = r->failed;
		pthread_mutex_unlock(&r->mu);
		if (failed)
			break;
		if (bench_now_us() >= t_end) {
			res->over_budget = true;
			bench_note("depth %d: time budget spent after %zu "
				   "samples", depth, res->n);
			break;
		}
		lat = sample(r, &c, depth, &mgr);

		if (lat < 0) {
			bench_note("depth %d: nothing running to finish",
				   depth);
			break;
		}
		if (lat >= SAMPLE_WAIT_US) {
			res->timeouts++;
			stalls++;
		} else {
			stalls = 0;
		}
		res->lat[res->n++] = lat;
		if (mgr >= 0)
			res->mgr[res->nmgr++] = mgr;
		/* top up to D pending, then let the manager settle */
		pthread_mutex_lock(&r->mu);
		wait_quiet(r, QUIET_US, 2000000);
		top = depth - r->pending;
		pthread_mutex_unlock(&r->mu);
		if (top > 0)
			create_more(r, &c, ix, depth, (size_t)top);
		pthread_mutex_lock(&r->mu);
		wait_quiet(r, QUIET_US, 2000000);
		pthread_mutex_unlock(&r->mu);
		if (stalls >= MAX_STALLS) {
			res->stalled = true;
			res->cq_state = cq_state(r, &c, depth);
			bench_note("depth %d: STALLED: %d samples in a row "
				   "without an admission; %s", depth, stalls,
				   res->cq_state);
			break;
		}
	}
	pthread_mutex_lock(&r->mu);
	res->evicted = r->nevicted;
	top = r->failed;
	pthread_mutex_unlock(&r->mu);
	bench_conn_release(&c);
	qsort(res->lat, res->n, sizeof(*res->lat), bench_cmp_i64);
	qsort(res->mgr, res->nmgr, sizeof(*res->mgr), bench_cmp_i64);
	return top ? 1 : 0;
}

/* ---- report ---- */

static double pct_ms(const int64_t *v, size_t n, unsigned p)
{
	return n ? (double)v[bench_rank(n, p)] / 1e3 : -1;
}

static void report(const struct phase_res *res, int nres, double mcpu,
		   double mhwm)
{
	for (int i = 0; i < nres; i++) {
		const struct phase_res *x = &res[i];
		char what[128], f[32], ra[32], *note;
		double p50 = pct_ms(x->lat, x->n, 50);
		double p99 = pct_ms(x->lat, x->n, 99);

		note = xasprintf(
			"one ClusterQueue (cpu nominal 64, BestEffortFIFO, "
			"withinClusterQueue LowerPriority) holding %d pending "
			"Workloads of 1/2/4/8 cpu, priority 0/100/200; %zu "
			"samples one at a time: before the Finished PATCH of "
			"a running workload -> the next Admitted=True watch "
			"event of that queue (the queue topped up to %d and "
			"the watch quiet 30 ms between samples); p50 %.1f, p90 "
			"%.1f, p99 %.1f, max %.1f ms; %d samples without an "
			"admission within 2 s (counted as 2 s)%s%s%s; the "
			"manager's "
			"part (Finished watch event -> Admitted watch event) "
			"p50 %.1f, p99 %.1f ms; %d preemptions seen; fill %.1f "
			"s + settle %.1f s; kueue#14477: a queue 536 deep "
			"waited p50 64 min",
			x->depth, x->n, x->depth, p50, pct_ms(x->lat, x->n, 90),
			p99, x->n ? (double)x->lat[x->n - 1] / 1e3 : -1,
			x->timeouts,
			x->over_budget ? "; the time budget ended the "
					 "samples early" : "",
			x->stalled ? "; STALLED (3 in a row, phase ended): "
				   : "",
			x->cq_state ? x->cq_state : "",
			pct_ms(x->mgr, x->nmgr, 50),
			pct_ms(x->mgr, x->nmgr, 99), x->evicted, x->fill_s,
			x->settle_s);
		snprintf(what, sizeof(what), "deep queue, depth %d: quota "
			 "freed -> next admission, p50", x->depth);
		bench_fmt(f, sizeof(f), p50, 1);
		bench_row(what, f, "ms", "—", "—", note);
		snprintf(what, sizeof(what), "deep queue, depth %d: quota "
			 "freed -> next admission, p99", x->depth);
		bench_fmt(f, sizeof(f), p99, 1);
		if (p99 >= 0)
			snprintf(ra, sizeof(ra), "%.2f", p99 / 100.0);
		else
			snprintf(ra, sizeof(ra), "—");
		bench_row(what, f, "ms", "100 ms (aim)", ra, note);
		free(note);
	}
	if (nres >= 2) {
		const struct phase_res *a = &res[0], *b = &res[nres - 1];
		double pa = pct_ms(a->lat, a->n, 99), pb = pct_ms(b->lat, b->n, 99);
		char what[128], f[32], ra[32], *note;

		note = xasprintf("p99 of quota freed -> next admission at "
				 "depth %d / at depth %d; anchor: flat (1); "
				 "manager over all depths: %.2f s CPU, peak "
				 "RSS %.1f MiB", b->depth, a->depth, mcpu,
				 mhwm);
		snprintf(what, sizeof(what), "deep queue: p99 at depth %d / "
			 "at depth %d", b->depth, a->depth);
		bench_fmt(f, sizeof(f), pa > 0 && pb >= 0 ? pb / pa : -1, 2);
		snprintf(ra, sizeof(ra), "%s", f);
		bench_row(what, f, "x", "1 (flat)", ra, note);
		free(note);
	}
}

static void usage_exit(void)
{
	fprintf(stderr, "usage: deepq-bench --cluster DIR "
			"[--depths D1,D2,...] [--samples N]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *q = getenv("QUICK");
	bool quick = q && !strcmp(q, "1");
	int depths[MAX_DEPTHS] = { 100, 1000, 10000 };
	int ndepths = quick ? 2 : 3, nsamples = quick ? 25 : 300, rc = 0;
	struct phase_res res[MAX_DEPTHS];
	struct run r;
	pthread_condattr_t ca;
	pthread_t watcher;
	struct bench_conn c;
	struct err err = { "" };
	double mcpu0, mcpu1;
	long mpid;
	int nres = 0;

	bench_init("deepq-bench");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cluster") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--samples") && i + 1 < argc) {
			nsamples = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--depths") && i + 1 < argc) {
			char *s = argv[++i], *end;

			for (ndepths = 0; *s && ndepths < MAX_DEPTHS;) {
				depths[ndepths++] = (int)strtol(s, &end, 10);
				if (end == s || depths[ndepths - 1] <= 0)
					usage_exit();
				s = *end == ',' ? end + 1 : end;
			}
		} else {
			usage_exit();
		}
	}
	if (!dir || nsamples <= 0 || ndepths <= 0)
		usage_exit();

	memset(&r, 0, sizeof(r));
	r.rnd = 0x2545f491u;
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (bench_kube_load(&r.kube, dir, &err) < 0)
		bench_die("%s", err.msg);
	mpid = bench_read_pid(dir, "manager");
	pthread_mutex_init(&r.mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r.cv, &ca);
	pthread_condattr_destroy(&ca);
	mcpu0 = bench_proc_cpu_s(mpid);

	bench_conn_init(&c, &r.kube);
	bench_create_take(&c, KAPI "/resourceflavors",
			  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
				    "kueue.x-k8s.io/v1beta2", "kind",
				    "ResourceFlavor", "metadata", "name", "rf"),
			  true);
	bench_conn_release(&c);
	r.last_rv = list_rv(&r);
	if (pthread_create(&watcher, NULL, watch_main, &r))
		bench_die("pthread_create failed");
	for (int i = 0; i < ndepths && !rc; i++) {
		bench_note("depth %d: filling", depths[i]);
		rc = run_phase(&r, i, depths[i], nsamples,
			       quick ? QUICK_BUDGET_US : BUDGET_US,
			       &res[nres++]);
	}
	pthread_mutex_lock(&r.mu);
	r.stop = true;
	pthread_mutex_unlock(&r.mu);
	pthread_join(watcher, NULL);
	mcpu1 = bench_proc_cpu_s(mpid);
	if (!rc)
		report(res, nres, mcpu0 >= 0 && mcpu1 >= 0 ? mcpu1 - mcpu0 : -1,
		       bench_proc_hwm_mib(mpid));
	else
		bench_note("FAILED (a request or the watch failed)");
	for (int i = 0; i < nres && !rc; i++)
		if (res[i].stalled)
			rc = 1; /* admissions stopped with work queued */

	for (int i = 0; i < nres; i++) {
		free(res[i].lat);
		free(res[i].mgr);
		free(res[i].cq_state);
	}
	free(r.w);
	free(r.adm_t);
	free(r.last_rv);
	bench_kube_release(&r.kube);
	pthread_cond_destroy(&r.cv);
	pthread_mutex_destroy(&r.mu);
	curl_global_cleanup();
	return rc;
}
