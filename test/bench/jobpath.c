/*
 * jobpath-bench: the batch/v1 Job path end to end, against a running
 * devcluster with its webhook on (test/e2e/devcluster: cueue-devserver +
 * cueue-manager serving its TLS webhook), as rows for test/bench/run.sh.
 * test/bench/jobpath.sh starts and stops the cluster.
 *
 *   jobpath-bench --cluster DIR [--jobs N] [--window K] [--threads T]
 *                 [--runtime MS] [--timeout S]
 *
 * DIR/kubeconfig gives the server, CA and token; DIR/manager.pid the
 * process whose CPU time (/proc/<pid>/stat utime + stime) is read before
 * the first create and after the last Job completes.
 *
 *  1. Setup: ResourceFlavor jobpath-rf, ClusterQueue jobpath-cq with
 *     K cpu of nominal quota, namespace jobpath, LocalQueue jobpath-lq
 *     (kept when a run before this one made them: Jobs are named
 *     jp-<pid>-<i> and labelled with the run, so runs can repeat on one
 *     cluster when K stays the same).
 *  2. T client threads POST N Jobs (1 pod, 1 cpu, label
 *     kueue.x-k8s.io/queue-name: jobpath-lq, annotation
 *     cueue.dev/runtime: MS so the devserver's job runner completes each
 *     MS after it is unsuspended) to /apis/batch/v1, as `kubectl create`
 *     does: every create goes through the manager's mutating and
 *     validating webhooks over TLS. A window keeps at most K Jobs
 *     unfinished, so every Job fits the quota when created and the
 *     latency below is the path's own, not time spent queueing behind
 *     quota. The answer of each create must say spec.suspend=true (the
 *     mutating webhook suspended it).
 *  3. One watch on the namespace's Jobs sees each Job unsuspended (the
 *     manager admitted its Workload and started it) and Complete.
 *  4. Figures: jobs/s = N / (first create -> last Complete seen); create
 *     -> unsuspended p50 and p99 (create = just before the POST, as
 *     kubectl's user would see it); the manager's CPU per Job.
 *
 * Clocks: CLOCK_MONOTONIC in this program; events are timed when read.
 * Output: ROW lines (run.sh's protocol) on stdout, progress on stderr.
 * QUICK=1: N 60, K 20 (under ~15 s with the cluster's start). Exit 0
 * when every Job completed and every create was suspended by the
 * webhook, 1 otherwise, 2 on bad usage.
 *
 * Threads (this program only): main (setup, wait, report), T creators
 * and one watcher, sharing struct run under one mutex.
 *
 * The client code (kubeconfig, requests, the watch's line splitting,
 * /proc, percentiles, ROW lines) is test/bench/benchlib.h's.
 */
#define _GNU_SOURCE
#include <curl/curl.h>
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

#define NS "jobpath"
#define LQ "jobpath-lq"
#define CQ "jobpath-cq"
#define RF "jobpath-rf"
#define ID_LABEL "bench.cueue.dev/id"
#define RUN_LABEL "bench.cueue.dev/run"
#define KAPI "/apis/kueue.x-k8s.io/v1beta2"
#define JOBS_PATH "/apis/batch/v1/namespaces/" NS "/jobs"
#define MAX_TRIES 12

struct job {
	bool created;      /* POST answered 201 */
	bool unsuspended;  /* seen with spec.suspend false */
	bool complete;     /* seen with Complete=True */
	int64_t t_create;  /* us */
	int64_t t_start;   /* us; unsuspended seen */
};

struct run {
	struct bench_kube kube; /* the devcluster's API server */
	int n, window, threads, runtime_ms;
	char run_id[16];    /* this run's RUN_LABEL value (Job names too) */

	pthread_mutex_t mu;
	pthread_cond_t cv;  /* a slot in the window, or progress */
	struct job *jobs;   /* owned, n */
	int next;           /* next index to create */
	int ncreated, nstarted, ncomplete, nfailed, nnot_suspended, nretries;
	bool stop;
	int64_t t_first, t_last; /* us: first create, last Complete */
};

/* The queue objects; each may exist already (409: a run before this
 * one made it). */
static void setup(const struct run *r)
{
	struct bench_conn c;
	char quota[16];

	snprintf(quota, sizeof(quota), "%d", r->window);
	bench_conn_init(&c, &r->kube);
	bench_create_take(&c, "/api/v1/namespaces",
			  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
				    "kind", "Namespace", "metadata", "name",
				    NS),
			  true);
	bench_create_take(&c, KAPI "/resourceflavors",
			  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
				    "kueue.x-k8s.io/v1beta2", "kind",
				    "ResourceFlavor", "metadata", "name", RF),
			  true);
	bench_create_take(&c, KAPI "/clusterqueues",
			  json_pack("{s:s, s:s, s:{s:s}, s:{s:{}, s:[{s:[s], "
				    "s:[{s:s, s:[{s:s, s:s}]}]}]}}",
				    "apiVersion", "kueue.x-k8s.io/v1beta2",
				    "kind", "ClusterQueue", "metadata", "name",
				    CQ, "spec", "namespaceSelector",
				    "resourceGroups", "coveredResources", "cpu",
				    "flavors", "name", RF, "resources", "name",
				    "cpu", "nominalQuota", quota),
			  true);
	bench_create_take(&c, KAPI "/namespaces/" NS "/localqueues",
			  json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s}}",
				    "apiVersion", "kueue.x-k8s.io/v1beta2",
				    "kind", "LocalQueue", "metadata", "name",
				    LQ, "namespace", NS, "spec",
				    "clusterQueue", CQ),
			  true);
	bench_conn_release(&c);
}

/* ---- creators ---- */

static void create_job(struct run *r, struct bench_conn *c, int idx)
{
	char name[32], id[16], rt[32], *body;
	json_t *o, *ans;
	long code = 0;
	int64_t t = 0;
	bool suspended = false;

	snprintf(name, sizeof(name), "jp-%s-%d", r->run_id, idx);
	snprintf(id, sizeof(id), "%d", idx);
	snprintf(rt, sizeof(rt), "%dms", r->runtime_ms);
	o = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s, s:s}, s:{s:s}}, "
		      "s:{s:{s:{s:s, s:[{s:s, s:s, s:{s:{s:s}}}]}}}}",
		      "apiVersion", "batch/v1", "kind", "Job",
		      "metadata", "name", name, "namespace", NS,
		      "labels", "kueue.x-k8s.io/queue-name", LQ, ID_LABEL, id,
		      RUN_LABEL, r->run_id,
		      "annotations", "cueue.dev/runtime", rt,
		      "spec", "template", "spec", "restartPolicy", "Never",
		      "containers", "name", "c", "image", "pause",
		      "resources", "requests", "cpu", "1");
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	for (int tries = 0; tries < MAX_TRIES; tries++) {
		if (tries) {
			pthread_mutex_lock(&r->mu);
			r->nretries++;
			pthread_mutex_unlock(&r->mu);
			usleep((useconds_t)(100000 << (tries < 3 ? tries : 3)));
		}
		t = bench_now_us();
		pthread_mutex_lock(&r->mu);
		r->jobs[idx].t_create = t;
		if (!r->t_first)
			r->t_first = t;
		pthread_mutex_unlock(&r->mu);
		code = bench_request(c, "POST", JOBS_PATH, "application/json",
				     body);
		if (!bench_is_retryable(code))
			break;
	}
	free(body);
	ans = code == 201 ? json_loads(c->buf, 0, NULL) : NULL;
	suspended = json_is_true(json_object_get(json_object_get(ans, "spec"),
						 "suspend"));
	json_decref(ans);
	pthread_mutex_lock(&r->mu);
	if (code == 201) {
		r->jobs[idx].created = true;
		r->ncreated++;
		if (!suspended)
			r->nnot_suspended++;
	} else {
		bench_note("create %s: HTTP %ld: %.300s", name, code,
			   c->buf ? c->buf : "");
		r->nfailed++;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
}

static void *creator_main(void *arg)
{
	struct run *r = arg;
	struct bench_conn c;

	bench_conn_init(&c, &r->kube);
	pthread_mutex_lock(&r->mu);
	for (;;) {
		int idx;

		/* the window: at most K created and not complete */
		while (!r->stop && r->next < r->n &&
		       r->next - r->ncomplete - r->nfailed >= r->window)
			pthread_cond_wait(&r->cv, &r->mu);
		if (r->stop || r->next >= r->n)
			break;
		idx = r->next++;
		pthread_mutex_unlock(&r->mu);
		create_job(r, &c, idx);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	bench_conn_release(&c);
	return NULL;
}

/* ---- the watch ---- */

/* The watcher thread's own state. */
struct watch {
	struct run *r;
	char *rv;          /* owned; last resourceVersion seen */
};

/* One event line (bench_line_fn); on the watcher thread. */
static void on_event(void *ud, const char *p, size_t n)
{
	struct watch *w = ud;
	struct run *r = w->r;
	json_t *ev = json_loadb(p, n, 0, NULL), *obj, *meta;
	const char *type, *id, *rv;
	int64_t now = bench_now_us();
	long idx;
	bool running, done;

	if (!ev)
		return;
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	meta = json_object_get(obj, "metadata");
	rv = json_string_value(json_object_get(meta, "resourceVersion"));
	if (rv) {
		free(w->rv);
		w->rv = xstrdup(rv);
	}
	id = json_string_value(json_object_get(json_object_get(meta, "labels"),
					       ID_LABEL));
	idx = id ? strtol(id, NULL, 10) : -1;
	running = json_is_false(json_object_get(json_object_get(obj, "spec"),
						"suspend"));
	done = bench_has_condition(obj, "Complete");
	pthread_mutex_lock(&r->mu);
	if (type && !strcmp(type, "ERROR"))
		bench_note("watch: ERROR event");
	if (idx >= 0 && idx < r->n && type && strcmp(type, "DELETED")) {
		struct job *j = &r->jobs[idx];

		if ((running || done) && !j->unsuspended) {
			j->unsuspended = true;
			j->t_start = now;
			r->nstarted++;
		}
		if (done && !j->complete) {
			j->complete = true;
			r->ncomplete++;
			r->t_last = now;
			pthread_cond_broadcast(&r->cv);
		}
	}
	pthread_mutex_unlock(&r->mu);
	json_decref(ev);
}

/* bench_stop_fn: the run is over. */
static bool stopped(void *ud)
{
	const struct watch *w = ud;
	bool stop;

	pthread_mutex_lock(&w->r->mu);
	stop = w->r->stop;
	pthread_mutex_unlock(&w->r->mu);
	return stop;
}

static void *watch_main(void *arg)
{
	struct run *r = arg;
	struct watch w = { .r = r };
	struct bench_watch bw;

	bench_watch_init(&bw, &r->kube, on_event, stopped, &w);
	for (;;) {
		/* resourceVersion 0: the Jobs already there as ADDED first */
		char *url = xasprintf("%s" JOBS_PATH "?watch=1&labelSelector="
				      RUN_LABEL "%%3D%s&resourceVersion=%s",
				      r->kube.server, r->run_id,
				      w.rv ? w.rv : "0");
		struct err err = { "" };
		int rc = bench_watch_run(&bw, url, &err);

		free(url);
		if (stopped(&w))
			break;
		if (rc)
			bench_note("watch: %s; reconnecting", err.msg);
		usleep(100000);
	}
	bench_watch_release(&bw);
	free(w.rv);
	return NULL;
}

/* ---- report ---- */

/* The pct-th percentile (nearest rank) of sorted v[n], in ms; -1 when
 * empty. */
static double quantile_ms(const int64_t *v, size_t n, unsigned pct)
{
	return n ? (double)v[bench_rank(n, pct)] / 1000.0 : -1;
}

/* A row without an anchor; fig < 0: none. */
static void row(const char *what, double fig, int prec, const char *unit,
		const char *note_text)
{
	char f[32];

	bench_fmt(f, sizeof(f), fig, prec);
	bench_row(what, f, unit, "—", "—", note_text);
}

static void usage(void)
{
	fprintf(stderr, "usage: jobpath-bench --cluster DIR [--jobs N] "
		"[--window K] [--threads T] [--runtime MS] [--timeout S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	bool quick = getenv("QUICK") && !strcmp(getenv("QUICK"), "1");
	struct run r = { .n = quick ? 60 : 2000, .window = quick ? 20 : 50,
			 .threads = 4, .runtime_ms = 200 };
	const char *dir = NULL;
	int timeout_s = quick ? 40 : 300, i;
	pthread_t *creators, watcher;
	long mpid;
	double cpu0, cpu1, wall_s, jps;
	int64_t *lat, end;
	size_t nlat = 0;
	char what[128], note_text[512];
	struct err err = { "" };
	int rc = 0, noted = 0;

	bench_init("jobpath-bench");
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!v)
			usage();
		if (!strcmp(argv[i], "--cluster"))
			dir = v;
		else if (!strcmp(argv[i], "--jobs"))
			r.n = atoi(v);
		else if (!strcmp(argv[i], "--window"))
			r.window = atoi(v);
		else if (!strcmp(argv[i], "--threads"))
			r.threads = atoi(v);
		else if (!strcmp(argv[i], "--runtime"))
			r.runtime_ms = atoi(v);
		else if (!strcmp(argv[i], "--timeout"))
			timeout_s = atoi(v);
		else
			usage();
		i++;
	}
	if (!dir || r.n <= 0 || r.window <= 0 || r.threads <= 0 ||
	    r.runtime_ms <= 0 || timeout_s <= 0)
		usage();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	snprintf(r.run_id, sizeof(r.run_id), "%ld", (long)getpid());
	if (bench_kube_load(&r.kube, dir, &err) < 0)
		bench_die("%s", err.msg);
	mpid = bench_read_pid(dir, "manager");
	pthread_mutex_init(&r.mu, NULL);
	pthread_cond_init(&r.cv, NULL);
	r.jobs = xcalloc((size_t)r.n, sizeof(*r.jobs));
	setup(&r);
	bench_note("%d Jobs, window %d, %d client threads, runtime %d ms",
		   r.n, r.window, r.threads, r.runtime_ms);
	if (pthread_create(&watcher, NULL, watch_main, &r))
		bench_die("pthread_create failed");
	usleep(200000); /* let the watch connect before the first create */
	cpu0 = bench_proc_cpu_s(mpid);
	creators = xcalloc((size_t)r.threads, sizeof(*creators));
	for (i = 0; i < r.threads; i++)
		if (pthread_create(&creators[i], NULL, creator_main, &r))
			bench_die("pthread_create failed");
	end = bench_now_us() + (int64_t)timeout_s * 1000000;
	pthread_mutex_lock(&r.mu);
	while (r.ncomplete + r.nfailed < r.n && bench_now_us() < end) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 2;
		pthread_cond_timedwait(&r.cv, &r.mu, &ts);
		if (r.ncomplete - noted >= 500) {
			noted = r.ncomplete;
			bench_note("%d of %d complete", r.ncomplete, r.n);
		}
	}
	if (r.ncomplete + r.nfailed < r.n) {
		bench_note("timeout after %d s: %d created, %d started, "
			   "%d complete", timeout_s, r.ncreated, r.nstarted,
			   r.ncomplete);
		rc = 1;
	}
	r.stop = true;
	pthread_cond_broadcast(&r.cv);
	pthread_mutex_unlock(&r.mu);
	cpu1 = bench_proc_cpu_s(mpid);
	for (i = 0; i < r.threads; i++)
		pthread_join(creators[i], NULL);
	pthread_join(watcher, NULL);
	free(creators);
	if (r.nfailed || r.nnot_suspended) {
		bench_note("%d creates failed, %d Jobs not suspended by the "
			   "webhook", r.nfailed, r.nnot_suspended);
		rc = 1;
	}
	lat = xcalloc((size_t)r.n, sizeof(*lat));
	for (i = 0; i < r.n; i++)
		if (r.jobs[i].created && r.jobs[i].unsuspended)
			lat[nlat++] = r.jobs[i].t_start - r.jobs[i].t_create;
	qsort(lat, nlat, sizeof(*lat), bench_cmp_i64);
	wall_s = r.t_last > r.t_first ? (double)(r.t_last - r.t_first) / 1e6
				      : -1;
	jps = rc == 0 && wall_s > 0 ? r.ncomplete / wall_s : -1;
	snprintf(what, sizeof(what), "Job path (%d Jobs, %d at a time)", r.n,
		 r.window);
	snprintf(note_text, sizeof(note_text),
		 "batch/v1 Jobs POSTed from %d threads through the TLS "
		 "webhooks (mutate + validate) to Complete, runtime %d ms, at "
		 "most %d unfinished (quota %d cpu); first create to last "
		 "Complete seen on a watch; %d retries",
		 r.threads, r.runtime_ms, r.window, r.window, r.nretries);
	{
		char w2[192];

		snprintf(w2, sizeof(w2), "%s: end to end", what);
		row(w2, jps, 1, "jobs/s", note_text);
		snprintf(note_text, sizeof(note_text),
			 "from just before the Job's POST to the watch event "
			 "with spec.suspend=false (webhook, Workload, "
			 "admission, Job patch); %zu Jobs", nlat);
		snprintf(w2, sizeof(w2), "%s: create → admitted p50", what);
		row(w2, quantile_ms(lat, nlat, 50), 1, "ms", note_text);
		snprintf(w2, sizeof(w2), "%s: create → admitted p99", what);
		row(w2, quantile_ms(lat, nlat, 99), 1, "ms", note_text);
		snprintf(note_text, sizeof(note_text),
			 "cueue-manager utime+stime (/proc/pid/stat) over the "
			 "run divided by the Jobs (webhook TLS serving "
			 "included); %.2f s CPU in %.1f s wall",
			 cpu1 - cpu0, wall_s);
		snprintf(w2, sizeof(w2), "%s: manager CPU per Job", what);
		row(w2, cpu0 >= 0 && cpu1 >= 0 && r.ncomplete > 0
			? (cpu1 - cpu0) * 1e6 / r.ncomplete : -1, 0,
		    "µs", note_text);
	}
	bench_note("%d created, %d started, %d complete in %.2f s",
		   r.ncreated, r.nstarted, r.ncomplete, wall_s);
	free(lat);
	free(r.jobs);
	bench_kube_release(&r.kube);
	pthread_mutex_destroy(&r.mu);
	pthread_cond_destroy(&r.cv);
	curl_global_cleanup();
	return rc;
}
