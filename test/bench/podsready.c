/*
 * podsready-bench: waitForPodsReady under load, against a running
 * devcluster whose manager runs the Configuration this program prints
 * (--print-config; test/bench/podsready.sh starts that cluster), as rows
 * for test/bench/run.sh (BENCHMARKS.md).
 *
 *   podsready-bench --print-config
 *   podsready-bench --cluster DIR [--shape full|quick] [--phase both|mixed|
 *                   ideal] [--invariants BIN] [--timeout S]
 *
 * The scenario (the shape table below; QUICK=1 in the environment picks
 * "quick" unless --shape says otherwise):
 *  1. Setup per phase: ResourceFlavor "rf"; NCQ ClusterQueues pr-PHASE-i
 *     (no cohort, BestEffortFIFO, no preemption, cpu nominal NOMINAL),
 *     each with a namespace and a LocalQueue of the same name.
 *  2. PER_CQ Workloads per ClusterQueue, created directly (no Job, no
 *     owner) by NCREATE threads as fast as they go, all at the start:
 *     the k-th of a queue asks 1, 2 or 4 cpu (k mod 3) and every tenth
 *     (k mod 10 = 9) is never ready. The phase "mixed" creates them all;
 *     "ideal" creates only the ready ones (the same sizes in the same
 *     queues): the run that never admits a never-ready workload.
 *  3. This program plays the Job integration on one watch of every
 *     Workload. When a workload is seen holding quota (QuotaReserved=True,
 *     not Finished) after not holding it: for a ready one, PodsReady=True
 *     reason Started READY_DELAY_MS later, and Finished=True RUNTIME
 *     after the admission; for a never-ready one, nothing. When a
 *     workload holding quota is seen Evicted=True, it clears the
 *     reservation as batch/v1 Job's integration does once its pods are
 *     gone (QuotaReserved=False Pending, Admitted=False NoReservation,
 *     Requeued=False with the eviction's reason, status.admission
 *     removed), unless the manager's own write already did. Every write
 *     is a merge patch of status with the resourceVersion last seen as
 *     precondition (conditions rebuilt from that version), so it never
 *     lands on a version it did not decide on.
 *  4. The manager times the never-ready ones out (timeout PR_TIMEOUT_S),
 *     requeues them with backoff, and deactivates them after
 *     PR_BACKOFF_LIMIT requeues. A phase ends when every ready workload
 *     was seen Finished and every never-ready one inactive without
 *     quota, or at --timeout (exit 1).
 *  5. At the end of a phase: its Workloads read back (the final state
 *     check), and its ClusterQueues' reservation sampled until it is 0.
 *     After the last phase, the whole cluster's Kueue objects go through
 *     cueue-invariants --status (--invariants BIN; test/tools).
 *
 * Measures (each ROW's note says how): wall until every ready workload
 * finished and ready workloads finished per second, against the ideal
 * phase; quota-seconds held by never-ready workloads (this program's
 * bookkeeping: cpu x (holding seen -> not holding seen) over each of
 * their admissions), against the nominal timeouts x timeout x cpu; the
 * ClusterQueues' reserved cpu sampled from their status every SAMPLE_MS
 * and integrated; PodsReady timeouts (watch and /metrics); the final
 * state; invariants; manager CPU. Times are this program's monotonic
 * clock: condition times are whole seconds.
 *
 * Threads (this program only): the main thread (setup, sampling, waiting,
 * report), NCREATE creation threads during a phase's creation, NACT
 * integration threads (the timed writes of step 3), one watch thread.
 * They share struct run under one mutex.
 *
 * Exit 0 when every phase completed, its final state held and the
 * invariants held; 1 otherwise (rows are still printed); 2 on bad usage.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "model/errors.h"
#include "test/bench/benchlib.h"

#define KAPI "/apis/kueue.x-k8s.io/v1beta2"
#define ID_LABEL "bench.cueue.dev/id"
#define PHASE_LABEL "bench.cueue.dev/phase"

/* The manager's waitForPodsReady (--print-config writes these). */
#define PR_TIMEOUT_S 2
#define PR_BACKOFF_BASE_S 1
#define PR_BACKOFF_MAX_S 4
#define PR_BACKOFF_LIMIT 2

#define READY_DELAY_MS 100  /* admission seen -> PodsReady=True sent */
#define SAMPLE_MS 250       /* ClusterQueue status sampling period */
#define SETTLE_MAX_US 10000000 /* after a phase: sampled reservation -> 0 */
#define NCREATE 4           /* creation threads */
#define NACT 4              /* integration threads */
#define MAX_TRIES 12        /* per request, on retryable answers */
#define MAX_CONFLICTS 400   /* precondition failures, 5 ms apart */
#define BAD_EVERY 10        /* seq % BAD_EVERY == BAD_EVERY - 1: never ready */

static const int sizes[] = { 1, 2, 4 }; /* cpu by seq % 3 */

struct shape {
	const char *name;
	const char *title;  /* row prefix */
	int ncq;
	int per_cq;         /* workloads per ClusterQueue (mixed phase) */
	int nominal;        /* cpu per ClusterQueue */
	int runtime_ms;     /* a ready workload's run, from its admission */
	int timeout_s;      /* per phase */
};

static const struct shape shapes[] = {
	{ "full", "waitForPodsReady, 1,000 wl (10 % never ready)", 4, 250, 80,
	  3000, 120 },
	{ "quick", "waitForPodsReady quick, 100 wl (10 % never ready)", 2, 50,
	  40, 1000, 30 },
};

enum { MIXED, IDEAL, NPHASE };
static const char *const phase_name[NPHASE] = { "mixed", "ideal" };

struct wl {
	int phase;
	int cq;
	int seq;          /* index within its ClusterQueue */
	int cpu;
	bool bad;         /* never ready */
	bool planned;     /* created in its phase (ideal: ready ones only) */
	bool created;
	bool holding;     /* QuotaReserved=True, not Finished, last seen */
	bool evicted;     /* Evicted=True last seen */
	bool ready;       /* PodsReady=True last seen */
	bool finished;
	bool done;        /* ready: Finished; never ready: inactive and
			     not holding */
	int nadmit;       /* holds begun; the epoch of timed writes */
	int evict_epoch;  /* the hold an Evicted transition was seen in */
	int release_epoch; /* the hold whose release was queued */
	int ntimeout;     /* Evicted transitions with PodsReadyTimeout */
	int64_t t_hold;   /* us: the current hold's start seen */
	int64_t t_evict;  /* us: Evicted seen in the current hold */
	char rv[24];      /* the last resourceVersion seen */
	json_t *conds;    /* owned: status.conditions last seen, or NULL */
};

enum act_kind { ACT_READY, ACT_FINISH, ACT_RELEASE, NACTKIND };
static const char *const act_name[NACTKIND] = { "PodsReady", "Finished",
						"release" };

struct act {
	int64_t at;  /* us, monotonic */
	int idx;
	int epoch;   /* the hold it belongs to (wl.nadmit) */
	enum act_kind kind;
};

/* A growing array of int64 samples. */
struct vec {
	int64_t *v; /* owned */
	size_t n, cap;
};

struct phase_res {
	bool ran;
	bool completed;     /* every planned workload done */
	int nplanned, ngood, nbad, ndone, ngood_done;
	int64_t t0;         /* us: creation start */
	int64_t t_good_fin; /* us: the last ready workload's Finished seen */
	int64_t t_good_adm; /* us: the last admission of a ready one seen */
	int64_t t_done;     /* us: the last workload done */
	double good_cpu_s;  /* ready holds that ended Finished */
	double lost_cpu_s;  /* ready holds that ended without a finish */
	double bad_cpu_s;   /* never-ready holds */
	double nominal_bad_cpu_s; /* sum over their holds of cpu x timeout */
	int nholds_bad;
	int ntimeout_good, ntimeout_bad; /* Evicted PodsReadyTimeout seen */
	int nevict_deact;   /* Evicted DeactivatedDueTo... transitions seen */
	int nevict_other;   /* other Evicted transitions seen */
	int nrel_bench;     /* reservations this program cleared */
	int nrel_mgr;       /* holds ended by the manager's own write */
	int nwrites[NACTKIND];
	struct vec hold, detect, release; /* us, never-ready holds */
	struct vec ready_lat; /* us: a ready one's hold seen -> its
				 PodsReady=True seen */
	double sampled_cpu_s; /* the ClusterQueues' reserved cpu, integrated */
	double sample_peak;   /* cpu */
	int nsamples, nsample_fail;
	double settle_s;      /* done -> sampled reservation 0 */
	double mcpu_s;        /* manager CPU over the phase */
	char *final_check;    /* owned: the read-back's summary */
	bool final_ok;
	char *metrics;        /* owned: eviction counters, or NULL */
	double m_timeout, m_deact; /* the same, as numbers; -1: unknown */
};

struct run {
	struct bench_kube kube;
	const struct shape *sh;
	pthread_mutex_t mu;
	pthread_cond_t cv;       /* CLOCK_MONOTONIC: progress for main */
	pthread_cond_t act_cv;   /* CLOCK_MONOTONIC: a new earliest action */
	struct wl *wls;          /* owned; index = the ID label */
	int nwl, per_phase;
	int phase;               /* the phase running */
	int next_create;         /* id of the phase's next creation */
	struct act *heap;        /* owned: timed writes, a min-heap on at */
	size_t nheap, capheap;
	struct phase_res res[NPHASE];
	char *last_rv;           /* owned: the watch's resourceVersion */
	bool stop, watch_failed;
	int nfailed;             /* requests that failed for good */
	int nretries, nconflicts, nstale;
};

/* ---- small helpers ---- */

static void vec_push(struct vec *v, int64_t x)
{
	XGROW(v->v, v->cap, v->n + 1);
	v->v[v->n++] = x;
}

/* The p-th percentile (nearest rank) of v in ms; -1 when empty. Sorts. */
static double vec_pct_ms(struct vec *v, unsigned p)
{
	if (!v->n)
		return -1;
	qsort(v->v, v->n, sizeof(*v->v), bench_cmp_i64);
	return (double)v->v[bench_rank(v->n, p)] / 1000.0;
}

static double vec_mean_ms(const struct vec *v)
{
	double s = 0;

	if (!v->n)
		return -1;
	for (size_t i = 0; i < v->n; i++)
		s += (double)v->v[i];
	return s / (double)v->n / 1000.0;
}

static void backoff(int tries)
{
	long ms = 100L << (tries < 4 ? tries : 4);

	usleep((useconds_t)(ms > 1000 ? 1000 : ms) * 1000);
}

static void now_rfc3339(char *buf, size_t cap)
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, cap, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void cq_name(char *buf, size_t cap, int phase, int cq)
{
	snprintf(buf, cap, "pr-%s-%d", phase_name[phase], cq);
}

static void wl_name(const struct wl *w, char *buf, size_t cap)
{
	snprintf(buf, cap, "wl-%d%s", w->seq, w->bad ? "-never" : "");
}

/* The condition of this type in conds (borrowed), or NULL. */
static json_t *cond_get(json_t *conds, const char *type)
{
	json_t *c;
	size_t i;

	json_array_foreach(conds, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

static bool cond_is_true(json_t *conds, const char *type)
{
	const char *s = json_string_value(
		json_object_get(cond_get(conds, type), "status"));

	return s && !strcmp(s, "True");
}

static const char *cond_str(json_t *conds, const char *type,
			    const char *field)
{
	return json_string_value(json_object_get(cond_get(conds, type),
						 field));
}

/* Sets condition type in conds (an array it edits) as a controller does:
 * lastTransitionTime moves only when the status changes. */
static void cond_put(json_t *conds, const char *type, const char *status,
		     const char *reason, const char *msg, const char *ts)
{
	json_t *c = cond_get(conds, type);
	const char *old = json_string_value(json_object_get(c, "status"));

	if (!c) {
		c = json_object();
		json_array_append_new(conds, c);
		json_object_set_new(c, "type", json_string(type));
	}
	if (!old || strcmp(old, status))
		json_object_set_new(c, "lastTransitionTime", json_string(ts));
	json_object_set_new(c, "status", json_string(status));
	json_object_set_new(c, "reason", json_string(reason));
	json_object_set_new(c, "message", json_string(msg));
}

/* A cpu quantity ("3", "1500m") in cpu; 0 when absent or unparsable. */
static double cpu_of(const char *q)
{
	char *end;
	double v;

	if (!q)
		return 0;
	v = strtod(q, &end);
	if (*end == 'm')
		v /= 1000.0;
	return v;
}

/* ---- setup ---- */

static void print_config(void)
{
	printf("# podsready-bench's manager Configuration (test/bench/"
	       "podsready.sh)\n"
	       "apiVersion: config.kueue.x-k8s.io/v1beta2\n"
	       "kind: Configuration\n"
	       "namespace: cueue-system\n"
	       "health:\n"
	       "  healthProbeBindAddress: :8081\n"
	       "metrics:\n"
	       "  bindAddress: :8080\n"
	       "waitForPodsReady:\n"
	       "  timeout: %ds\n"
	       "  blockAdmission: false\n"
	       "  requeuingStrategy:\n"
	       "    timestamp: Eviction\n"
	       "    backoffLimitCount: %d\n"
	       "    backoffBaseSeconds: %d\n"
	       "    backoffMaxSeconds: %d\n"
	       "integrations:\n"
	       "  frameworks:\n"
	       "  - batch/job\n",
	       PR_TIMEOUT_S, PR_BACKOFF_LIMIT, PR_BACKOFF_BASE_S,
	       PR_BACKOFF_MAX_S);
}

static void setup(struct run *r, int phase)
{
	struct bench_conn c;
	char nominal[16];

	snprintf(nominal, sizeof(nominal), "%d", r->sh->nominal);
	bench_conn_init(&c, &r->kube);
	bench_create_take(&c, KAPI "/resourceflavors",
			  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
				    "kueue.x-k8s.io/v1beta2", "kind",
				    "ResourceFlavor", "metadata", "name", "rf"),
			  true);
	for (int i = 0; i < r->sh->ncq; i++) {
		char n[64], *path;

		cq_name(n, sizeof(n), phase, i);
		bench_create_take(&c, "/api/v1/namespaces",
				  json_pack("{s:s, s:s, s:{s:s}}", "apiVersion",
					    "v1", "kind", "Namespace",
					    "metadata", "name", n),
				  false);
		bench_create_take(&c, KAPI "/clusterqueues",
				  json_pack("{s:s, s:s, s:{s:s, s:{s:s}}, "
					    "s:{s:{}, s:s, s:[{s:[s], s:[{s:s, "
					    "s:[{s:s, s:s}]}]}]}}",
					    "apiVersion",
					    "kueue.x-k8s.io/v1beta2",
					    "kind", "ClusterQueue",
					    "metadata", "name", n, "labels",
					    PHASE_LABEL, phase_name[phase],
					    "spec", "namespaceSelector",
					    "queueingStrategy",
					    "BestEffortFIFO", "resourceGroups",
					    "coveredResources", "cpu",
					    "flavors", "name", "rf",
					    "resources", "name",
					    "cpu", "nominalQuota", nominal),
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
	}
	bench_conn_release(&c);
}

static void plan(struct run *r)
{
	const struct shape *sh = r->sh;

	r->per_phase = sh->ncq * sh->per_cq;
	r->nwl = NPHASE * r->per_phase;
	r->wls = xcalloc((size_t)r->nwl, sizeof(*r->wls));
	for (int i = 0; i < r->nwl; i++) {
		struct wl *w = &r->wls[i];
		int k = i % r->per_phase;

		w->phase = i / r->per_phase;
		w->cq = k / sh->per_cq;
		w->seq = k % sh->per_cq;
		w->cpu = sizes[w->seq % 3];
		w->bad = w->seq % BAD_EVERY == BAD_EVERY - 1;
		w->planned = w->phase == MIXED || !w->bad;
	}
}

/* ---- creation ---- */

static void create_one(struct run *r, struct bench_conn *c, int idx)
{
	const struct wl *w = &r->wls[idx];
	char ns[64], name[64], id[16], cpu[16], *path, *body;
	json_t *o;
	long code;
	int tries;

	cq_name(ns, sizeof(ns), w->phase, w->cq);
	wl_name(w, name, sizeof(name));
	snprintf(id, sizeof(id), "%d", idx);
	snprintf(cpu, sizeof(cpu), "%d", w->cpu);
	o = json_pack("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}, "
		      "s:{s:s, s:[{s:s, s:i, s:{s:{s:s, s:[{s:s, s:s, "
		      "s:{s:{s:s}}}]}}}]}}",
		      "apiVersion", "kueue.x-k8s.io/v1beta2", "kind",
		      "Workload", "metadata", "name", name, "namespace", ns,
		      "labels", ID_LABEL, id, PHASE_LABEL, phase_name[w->phase],
		      "spec", "queueName", ns,
		      "podSets", "name", "main", "count", 1, "template", "spec",
		      "restartPolicy", "Never", "containers", "name", "c",
		      "image", "pause", "resources", "requests", "cpu", cpu);
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	path = xasprintf(KAPI "/namespaces/%s/workloads", ns);
	for (tries = 0;; tries++) {
		code = bench_request(c, "POST", path, "application/json",
				     body);
		/* 409 after a lost answer: an earlier attempt created it */
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
	} else {
		bench_note("create %s/%s: HTTP %ld: %.200s", ns, name, code,
			   c->buf ? c->buf : "");
		r->nfailed++;
		pthread_cond_broadcast(&r->cv);
	}
	pthread_mutex_unlock(&r->mu);
	free(path);
	free(body);
}

static void *create_main(void *arg)
{
	struct run *r = arg;
	struct bench_conn c;

	bench_conn_init(&c, &r->kube);
	pthread_mutex_lock(&r->mu);
	for (;;) {
		int end = (r->phase + 1) * r->per_phase, idx;

		while (r->next_create < end &&
		       !r->wls[r->next_create].planned)
			r->next_create++;
		if (r->next_create >= end || r->stop)
			break;
		idx = r->next_create++;
		pthread_mutex_unlock(&r->mu);
		create_one(r, &c, idx);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	bench_conn_release(&c);
	return NULL;
}

/* ---- the timed writes (under mu) ---- */

static void heap_push(struct run *r, int64_t at, int idx, int epoch,
		      enum act_kind kind)
{
	size_t i;

	XGROW(r->heap, r->capheap, r->nheap + 1);
	i = r->nheap++;
	while (i > 0 && r->heap[(i - 1) / 2].at > at) {
		r->heap[i] = r->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	r->heap[i] = (struct act){ at, idx, epoch, kind };
	if (i == 0)
		pthread_cond_broadcast(&r->act_cv);
}

static struct act heap_pop(struct run *r)
{
	struct act top = r->heap[0], last = r->heap[--r->nheap];
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

/* Whether action a still applies to the workload as last seen. */
static bool act_live(const struct wl *w, const struct act *a)
{
	if (!w->holding || w->nadmit != a->epoch || w->finished)
		return false;
	switch (a->kind) {
	case ACT_READY:
		return !w->evicted && !w->ready;
	case ACT_FINISH:
		return !w->evicted;
	case ACT_RELEASE:
		return w->evicted;
	case NACTKIND:
	default:
		break;
	}
	return false;
}

/*
 * The merge patch of action a on w as last seen (under mu): the whole
 * conditions list of that version with a's change, that version as
 * precondition. New string.
 */
static char *act_body(const struct wl *w, const struct act *a)
{
	json_t *conds = w->conds ? json_deep_copy(w->conds) : json_array();
	json_t *st, *body;
	char ts[32], *s;

	now_rfc3339(ts, sizeof(ts));
	st = json_object();
	switch (a->kind) {
	case ACT_READY:
		cond_put(conds, "PodsReady", "True", "Started",
			 "All pods reached readiness and the workload is "
			 "running", ts);
		break;
	case ACT_FINISH:
		cond_put(conds, "Finished", "True", "Succeeded",
			 "finished by podsready-bench", ts);
		break;
	case ACT_RELEASE: {
		/* what batch/v1 Job's integration writes once the Job's pods
		 * are gone (controller/jobs.c clear_reservation) */
		const char *reason = cond_str(w->conds, "Evicted", "reason");
		const char *msg = cond_str(w->conds, "Evicted", "message");
		bool requeue = reason && (!strcmp(reason, "Preempted") ||
					  !strcmp(reason, "NodeFailures"));

		reason = reason ? reason : "Evicted";
		msg = msg ? msg : "";
		cond_put(conds, "Requeued", requeue ? "True" : "False",
			 reason, msg, ts);
		cond_put(conds, "QuotaReserved", "False", "Pending", msg, ts);
		if (cond_get(conds, "Admitted"))
			cond_put(conds, "Admitted", "False", "NoReservation",
				 "The workload has no reservation", ts);
		if (cond_get(conds, "PodsReady"))
			cond_put(conds, "PodsReady", "False", "WaitForStart",
				 "Not all pods are ready or succeeded", ts);
		json_object_set_new(st, "admission", json_null());
		break;
	}
	case NACTKIND:
	default:
		BUG("action kind %d", (int)a->kind);
	}
	json_object_set_new(st, "conditions", conds);
	body = json_pack("{s:{s:s}, s:o}", "metadata", "resourceVersion",
			 w->rv, "status", st);
	s = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	return s;
}

/* Sends action a until it lands, stops applying, or fails for good. */
static void do_act(struct run *r, struct bench_conn *c, const struct act *a)
{
	const struct wl *w = &r->wls[a->idx];
	char ns[64], name[64], *path, *body;
	long code = 0;
	int tries = 0, conflicts = 0;

	cq_name(ns, sizeof(ns), w->phase, w->cq);
	wl_name(w, name, sizeof(name));
	path = xasprintf(KAPI "/namespaces/%s/workloads/%s/status", ns, name);
	for (;;) {
		pthread_mutex_lock(&r->mu);
		if (!act_live(w, a)) {
			r->nstale++;
			pthread_mutex_unlock(&r->mu);
			code = 200;
			break;
		}
		body = act_body(w, a);
		pthread_mutex_unlock(&r->mu);
		code = bench_request(c, "PATCH", path,
				     "application/merge-patch+json", body);
		free(body);
		if (code == 200) {
			pthread_mutex_lock(&r->mu);
			r->res[w->phase].nwrites[a->kind]++;
			if (a->kind == ACT_RELEASE)
				r->res[w->phase].nrel_bench++;
			pthread_mutex_unlock(&r->mu);
			break;
		}
		/* a newer version the watch has not shown yet */
		if (code == 409) {
			pthread_mutex_lock(&r->mu);
			r->nconflicts++;
			pthread_mutex_unlock(&r->mu);
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
		bench_note("%s %s/%s: HTTP %ld: %.200s", act_name[a->kind], ns,
			   name, code, c->buf ? c->buf : "");
		pthread_mutex_lock(&r->mu);
		r->nfailed++;
		pthread_cond_broadcast(&r->cv);
		pthread_mutex_unlock(&r->mu);
	}
	free(path);
}

static void *act_main(void *arg)
{
	struct run *r = arg;
	struct bench_conn c;

	bench_conn_init(&c, &r->kube);
	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		int64_t now = bench_now_us();
		struct timespec ts;
		struct act a;
		int64_t next;

		if (r->nheap > 0 && r->heap[0].at <= now) {
			a = heap_pop(r);
			pthread_mutex_unlock(&r->mu);
			do_act(r, &c, &a);
			pthread_mutex_lock(&r->mu);
			continue;
		}
		next = r->nheap > 0 ? r->heap[0].at : now + 1000000;
		if (next > now + 1000000)
			next = now + 1000000;
		ts.tv_sec = next / 1000000;
		ts.tv_nsec = (next % 1000000) * 1000;
		pthread_cond_timedwait(&r->act_cv, &r->mu, &ts);
	}
	pthread_mutex_unlock(&r->mu);
	bench_conn_release(&c);
	return NULL;
}

/* ---- the watch: the integration's eyes ---- */

/* A hold of w ended at now (under mu): its quota-seconds and, for a
 * never-ready one, its parts. */
static void hold_end(struct run *r, struct wl *w, int64_t now, bool fin)
{
	struct phase_res *ph = &r->res[w->phase];
	double s = (double)w->cpu * (double)(now - w->t_hold) / 1e6;

	w->holding = false;
	if (!w->bad) {
		if (fin)
			ph->good_cpu_s += s;
		else
			ph->lost_cpu_s += s;
		return;
	}
	ph->bad_cpu_s += s;
	ph->nominal_bad_cpu_s += (double)w->cpu * PR_TIMEOUT_S;
	ph->nholds_bad++;
	vec_push(&ph->hold, now - w->t_hold);
	if (w->evict_epoch == w->nadmit) {
		vec_push(&ph->detect, w->t_evict - w->t_hold);
		vec_push(&ph->release, now - w->t_evict);
	}
}

static void done_one(struct run *r, struct wl *w, int64_t now)
{
	struct phase_res *ph = &r->res[w->phase];

	w->done = true;
	ph->ndone++;
	ph->t_done = now;
	if (!w->bad) {
		ph->ngood_done++;
		ph->t_good_fin = now;
	}
	if (ph->ndone >= ph->nplanned)
		pthread_cond_broadcast(&r->cv);
}

/* One event line (bench_line_fn, ud: the run). */
static void watch_event(void *ud, const char *p, size_t n)
{
	struct run *r = ud;
	json_error_t jerr;
	json_t *ev = json_loadb(p, n, 0, &jerr), *obj, *meta, *conds, *act;
	const char *type, *rv, *id, *reason;
	int64_t now = bench_now_us();
	bool qr, fin, evicted, ready, active, hold;
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
	conds = json_object_get(json_object_get(obj, "status"), "conditions");
	qr = cond_is_true(conds, "QuotaReserved");
	fin = cond_is_true(conds, "Finished");
	evicted = cond_is_true(conds, "Evicted");
	ready = cond_is_true(conds, "PodsReady");
	reason = evicted ? cond_str(conds, "Evicted", "reason") : NULL;
	act = json_object_get(json_object_get(obj, "spec"), "active");
	active = !json_is_false(act);
	hold = qr && !fin;

	pthread_mutex_lock(&r->mu);
	if (rv) {
		free(r->last_rv);
		r->last_rv = xstrdup(rv);
	}
	if (idx >= 0 && idx < r->nwl && type && strcmp(type, "DELETED")) {
		struct wl *w = &r->wls[idx];
		struct phase_res *ph = &r->res[w->phase];

		if (rv)
			snprintf(w->rv, sizeof(w->rv), "%s", rv);
		json_decref(w->conds);
		w->conds = json_is_array(conds) ? json_deep_copy(conds) : NULL;
		/* 1. an eviction (a new hold starts with Evicted False: the
		 *    admission write flips it) */
		if (evicted && !w->evicted && !(hold && !w->holding)) {
			if (reason && !strcmp(reason, "PodsReadyTimeout")) {
				w->ntimeout++;
				if (w->bad)
					ph->ntimeout_bad++;
				else
					ph->ntimeout_good++;
			} else if (reason && !strncmp(reason,
						      "DeactivatedDueTo", 16)) {
				ph->nevict_deact++;
			} else {
				ph->nevict_other++;
			}
			if (w->holding) {
				w->evict_epoch = w->nadmit;
				w->t_evict = now;
			}
		}
		/* 2. a hold begins or ends */
		if (hold && !w->holding) {
			w->holding = true;
			w->nadmit++;
			w->t_hold = now;
			if (!w->bad) {
				ph->t_good_adm = now;
				int64_t run = (int64_t)r->sh->runtime_ms;
				int64_t rdy = now + READY_DELAY_MS * 1000;
				int64_t fin_at = now + run * 1000;

				if (!ready)
					heap_push(r, rdy, (int)idx, w->nadmit,
						  ACT_READY);
				heap_push(r, fin_at, (int)idx, w->nadmit,
					  ACT_FINISH);
			}
		} else if (!hold && w->holding) {
			/* ended by the manager's own write: no finish, and
			 * no eviction seen before this event */
			if (!fin && (w->evict_epoch != w->nadmit ||
				     w->t_evict == now))
				ph->nrel_mgr++;
			hold_end(r, w, now, fin);
		}
		if (ready && !w->ready && w->holding)
			vec_push(&ph->ready_lat, now - w->t_hold);
		w->evicted = evicted;
		w->ready = ready;
		/* 3. evicted while holding: the integration releases */
		if (w->holding && evicted && w->release_epoch != w->nadmit) {
			w->release_epoch = w->nadmit;
			heap_push(r, now, (int)idx, w->nadmit, ACT_RELEASE);
		}
		if (fin && !w->finished) {
			w->finished = true;
			if (!w->bad && !w->done)
				done_one(r, w, now);
		}
		if (w->bad && !active && !w->holding && !w->done)
			done_one(r, w, now);
	}
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
		stop = r->stop || r->watch_failed;
		url = xasprintf("%s" KAPI "/workloads?watch=1&"
				"resourceVersion=%s", r->kube.server,
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
		if (rc) {
			bench_note("watch: %s; reconnecting", err.msg);
			usleep(200000);
		}
	}
	bench_watch_release(&w);
	return NULL;
}

/* A list's resourceVersion (the watch starts there), new. */
static char *list_rv(const struct run *r)
{
	struct bench_conn c;
	json_t *o;
	char *rv = NULL;

	bench_conn_init(&c, &r->kube);
	if (bench_request(&c, "GET", KAPI "/workloads?limit=1", NULL, NULL) !=
	    200)
		bench_die("list workloads failed: %.200s", c.buf ? c.buf : "");
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

/* ---- sampling, read-back, metrics ---- */

/* The phase's ClusterQueues' reserved cpu (status.flavorsReservation),
 * or -1 when the GET failed. */
static double sample_reserved(struct bench_conn *c, int phase)
{
	char *path = xasprintf(KAPI "/clusterqueues?labelSelector=%s%%3D%s",
			       PHASE_LABEL, phase_name[phase]);
	json_t *o, *items, *it;
	double cpu = -1;
	size_t i;

	if (bench_request(c, "GET", path, NULL, NULL) != 200 || !c->buf)
		goto out;
	o = json_loads(c->buf, 0, NULL);
	items = json_object_get(o, "items");
	if (json_is_array(items))
		cpu = 0;
	json_array_foreach(items, i, it) {
		json_t *fl = json_object_get(json_object_get(it, "status"),
					     "flavorsReservation"), *f;
		size_t j;

		json_array_foreach(fl, j, f) {
			json_t *res = json_object_get(f, "resources"), *x;
			size_t k;

			json_array_foreach(res, k, x) {
				const char *nm = json_string_value(
					json_object_get(x, "name"));

				if (nm && !strcmp(nm, "cpu"))
					cpu += cpu_of(json_string_value(
						json_object_get(x, "total")));
			}
		}
	}
	json_decref(o);
out:
	free(path);
	return cpu;
}

/*
 * Reads the phase's Workloads back: every never-ready one inactive,
 * Evicted=True DeactivatedDueToRequeuingLimitExceeded, no reservation
 * and no requeueState; every ready one Finished and PodsReady. Fills
 * final_check and final_ok.
 */
static void final_check(struct run *r, struct bench_conn *c, int phase)
{
	struct phase_res *ph = &r->res[phase];
	char *path = xasprintf(KAPI "/workloads?labelSelector=%s%%3D%s",
			       PHASE_LABEL, phase_name[phase]);
	json_t *o, *items, *it;
	int n = 0, deact = 0, fin = 0, bad = 0, good = 0, evs_timeout = 0;
	int evs_deact = 0;
	char first[256] = "";
	size_t i;

	if (bench_request(c, "GET", path, NULL, NULL) != 200 || !c->buf) {
		ph->final_check = xstrdup("read-back failed");
		ph->final_ok = false;
		free(path);
		return;
	}
	o = json_loads(c->buf, 0, NULL);
	items = json_object_get(o, "items");
	json_array_foreach(items, i, it) {
		json_t *st = json_object_get(it, "status");
		json_t *conds = json_object_get(st, "conditions");
		json_t *evs = json_object_get(json_object_get(st,
					"schedulingStats"), "evictions"), *e;
		const char *name = json_string_value(json_object_get(
			json_object_get(it, "metadata"), "name"));
		const char *why = NULL;
		bool is_bad = name && strstr(name, "-never");
		size_t k;

		n++;
		json_array_foreach(evs, k, e) {
			const char *rs = json_string_value(
				json_object_get(e, "reason"));
			json_int_t cnt = json_integer_value(
				json_object_get(e, "count"));

			if (rs && !strcmp(rs, "PodsReadyTimeout"))
				evs_timeout += (int)cnt;
			else if (rs && !strcmp(rs, "Deactivated"))
				evs_deact += (int)cnt;
		}
		if (is_bad) {
			const char *rs = cond_str(conds, "Evicted", "reason");

			bad++;
			if (!json_is_false(json_object_get(
				    json_object_get(it, "spec"), "active")))
				why = "still active";
			else if (!cond_is_true(conds, "Evicted") || !rs ||
				 strcmp(rs, "DeactivatedDueToRequeuingLimit"
					    "Exceeded"))
				why = "not Evicted DeactivatedDueToRequeuing"
				      "LimitExceeded";
			else if (cond_is_true(conds, "QuotaReserved") ||
				 json_object_get(st, "admission"))
				why = "still holds a reservation";
			else if (json_object_get(st, "requeueState"))
				why = "requeueState left";
			else
				deact++;
		} else {
			good++;
			if (!cond_is_true(conds, "Finished"))
				why = "not Finished";
			else if (!cond_is_true(conds, "PodsReady"))
				why = "not PodsReady";
			else
				fin++;
		}
		if (why && !first[0])
			snprintf(first, sizeof(first),
				 "; first problem: %s: %s",
				 name ? name : "?", why);
	}
	ph->final_ok = n == ph->nplanned && deact == ph->nbad &&
		       fin == ph->ngood;
	ph->final_check = xasprintf("%s: %d/%d never-ready deactivated "
				    "(DeactivatedDueToRequeuingLimitExceeded, "
				    "no reservation, no requeueState), %d/%d "
				    "ready Finished and PodsReady; "
				    "schedulingStats.evictions: "
				    "PodsReadyTimeout %d, Deactivated %d%s",
				    ph->final_ok ? "ok" : "FAILED", deact,
				    ph->nbad, fin, ph->ngood, evs_timeout,
				    evs_deact, first);
	json_decref(o);
	free(path);
}

/* The label's value in a series line's {...} into buf. */
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
	snprintf(buf, cap, "%.*s", (int)(q - p), p);
	return true;
}

/* kueue_evicted_workloads_total of the phase's ClusterQueues (and of
 * cluster_queue "", counted apart), summed by reason and underlying
 * cause, from the manager's /metrics. */
static void read_metrics(struct phase_res *ph, const char *url, int phase)
{
	static const char series[] = "kueue_evicted_workloads_total{";
	struct bench_conn c;
	char prefix[64], key[8][160], text[640];
	double val[8];
	int nkey = 0;
	size_t len = 0;

	ph->m_timeout = ph->m_deact = -1;
	if (!url)
		return;
	snprintf(prefix, sizeof(prefix), "pr-%s-", phase_name[phase]);
	bench_conn_init(&c, NULL);
	curl_easy_setopt(c.h, CURLOPT_URL, url);
	curl_easy_setopt(c.h, CURLOPT_TIMEOUT_MS, 10000L);
	if (curl_easy_perform(c.h) != CURLE_OK || !c.buf) {
		bench_conn_release(&c);
		return;
	}
	ph->m_timeout = ph->m_deact = 0;
	for (const char *l = c.buf; l && *l;) {
		const char *eol = strchr(l, '\n');
		char line[512], cq[64], rs[64], cause[64], k[160];
		const char *sp;
		double v;
		int i;

		snprintf(line, sizeof(line), "%.*s",
			 (int)(eol ? eol - l : (long)strlen(l)), l);
		l = eol ? eol + 1 : NULL;
		sp = strrchr(line, ' ');
		/* cluster_queue="" too: the manager sometimes labels an
		 * eviction so (the report to the lead says when) */
		if (!sp || strncmp(line, series, sizeof(series) - 1) ||
		    !label_of(line, "cluster_queue", cq, sizeof(cq)) ||
		    (cq[0] && strncmp(cq, prefix, strlen(prefix))) ||
		    !label_of(line, "reason", rs, sizeof(rs)))
			continue;
		if (!label_of(line, "underlying_cause", cause, sizeof(cause)))
			cause[0] = '\0';
		v = strtod(sp + 1, NULL);
		if (!strcmp(rs, "PodsReadyTimeout"))
			ph->m_timeout += v;
		else if (!strcmp(rs, "Deactivated"))
			ph->m_deact += v;
		snprintf(k, sizeof(k), "%s/%s%s", rs, cause[0] ? cause : "-",
			 cq[0] ? "" : " with cluster_queue=\"\"");
		for (i = 0; i < nkey && strcmp(key[i], k); i++)
			;
		if (i == nkey) {
			if (nkey == 8)
				continue;
			snprintf(key[nkey], sizeof(key[0]), "%s", k);
			val[nkey++] = 0;
		}
		val[i] += v;
	}
	text[0] = '\0';
	for (int i = 0; i < nkey && len < sizeof(text); i++)
		if (val[i] > 0)
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						"%s%s %.0f", len ? ", " : "",
						key[i], val[i]);
	ph->metrics = xstrdup(len ? text : "none");
	bench_conn_release(&c);
}

/* ---- invariants ---- */

/* The cluster's Kueue objects as one List (kind set on every item, as
 * kubectl prints it), into path. Returns 0, or -1 with err set. */
static int dump_state(struct run *r, const char *path, struct err *err)
{
	static const struct {
		const char *res, *kind;
	} kinds[] = {
		{ "clusterqueues", "ClusterQueue" },
		{ "cohorts", "Cohort" },
		{ "workloads", "Workload" },
		{ "resourceflavors", "ResourceFlavor" },
		{ "localqueues", "LocalQueue" },
	};
	struct bench_conn c;
	json_t *all = json_array(), *list;
	int rc = 0;

	bench_conn_init(&c, &r->kube);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]) && !rc; k++) {
		char *p = xasprintf(KAPI "/%s", kinds[k].res);
		json_t *o, *it;
		size_t i;

		if (bench_request(&c, "GET", p, NULL, NULL) != 200 || !c.buf) {
			rc = err_set(err, "GET %s failed", p);
			free(p);
			break;
		}
		free(p);
		o = json_loads(c.buf, 0, NULL);
		json_array_foreach(json_object_get(o, "items"), i, it) {
			json_object_set_new(it, "kind",
					    json_string(kinds[k].kind));
			json_object_set_new(it, "apiVersion",
					    json_string("kueue.x-k8s.io/"
							"v1beta2"));
			json_array_append(all, it);
		}
		json_decref(o);
	}
	bench_conn_release(&c);
	list = json_pack("{s:s, s:s, s:o}", "apiVersion", "v1", "kind", "List",
			 "items", all);
	if (!rc && json_dump_file(list, path, JSON_COMPACT))
		rc = err_set(err, "cannot write %s", path);
	json_decref(list);
	return rc;
}

/* Runs BIN --status FILE; its last output line into *out (new). Returns
 * its exit status (-1: could not run). */
static int run_invariants(const char *bin, const char *file, char **out)
{
	int fd[2], st = 0;
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	pid_t pid;
	char *last, *nl;

	*out = NULL;
	if (pipe(fd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (pid == 0) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		close(fd[1]);
		execl(bin, bin, "--status", file, (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	while ((n = read(fd[0], buf + len, sizeof(buf) - 1 - len)) > 0) {
		len += (size_t)n;
		if (len == sizeof(buf) - 1) {
			/* keep the tail: the verdict is the last line */
			memmove(buf, buf + len / 2, len - len / 2);
			len -= len / 2;
		}
	}
	close(fd[0]);
	buf[len] = '\0';
	while (len > 0 && buf[len - 1] == '\n')
		buf[--len] = '\0';
	nl = strrchr(buf, '\n');
	last = nl ? nl + 1 : buf;
	*out = xstrdup(last);
	/* with violations, the first line names one: keep it too */
	if (nl && strncmp(buf, "invariants: ok", 14)) {
		char *first = xstrndup(buf, strcspn(buf, "\n"));

		free(*out);
		*out = xasprintf("%s (first: %s)", last, first);
		free(first);
	}
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* ---- a phase ---- */

/* Runs phase p to its end. Returns 0 when it completed. */
static int run_phase(struct run *r, int p, long mpid, int timeout_s,
		     const char *murl)
{
	struct phase_res *ph = &r->res[p];
	pthread_t cr[NCREATE];
	struct bench_conn c;
	int64_t deadline, last_print, last_sample, t_end = 0;
	double prev_cpu = 0, mcpu0;
	bool completed = false;
	int rc = 0;

	ph->ran = true;
	for (int i = p * r->per_phase; i < (p + 1) * r->per_phase; i++) {
		const struct wl *w = &r->wls[i];

		if (!w->planned)
			continue;
		ph->nplanned++;
		if (w->bad)
			ph->nbad++;
		else
			ph->ngood++;
	}
	setup(r, p);
	bench_conn_init(&c, &r->kube);
	bench_note("phase %s: %d ClusterQueues of %d cpu, %d workloads "
		   "(%d never ready)", phase_name[p], r->sh->ncq,
		   r->sh->nominal, ph->nplanned, ph->nbad);
	mcpu0 = bench_proc_cpu_s(mpid);
	pthread_mutex_lock(&r->mu);
	r->phase = p;
	r->next_create = p * r->per_phase;
	ph->t0 = bench_now_us();
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < NCREATE; i++)
		if (pthread_create(&cr[i], NULL, create_main, r))
			bench_die("pthread_create failed");

	deadline = ph->t0 + (int64_t)timeout_s * 1000000;
	last_print = last_sample = ph->t0;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		int64_t now = bench_now_us(), wake;
		struct timespec ts;

		if (now - last_sample >= SAMPLE_MS * 1000) {
			double cpu;

			pthread_mutex_unlock(&r->mu);
			cpu = sample_reserved(&c, p);
			pthread_mutex_lock(&r->mu);
			now = bench_now_us();
			/* a step function: the last sample holds until
			 * this one */
			ph->sampled_cpu_s += prev_cpu *
					     (double)(now - last_sample) / 1e6;
			last_sample = now;
			if (cpu >= 0) {
				prev_cpu = cpu;
				ph->nsamples++;
				if (cpu > ph->sample_peak)
					ph->sample_peak = cpu;
			} else {
				ph->nsample_fail++;
			}
			if (completed && prev_cpu == 0)
				break;
			if (completed && now - t_end > SETTLE_MAX_US) {
				bench_note("phase %s: the ClusterQueues still "
					   "report %.0f cpu reserved %.0f s "
					   "after the end", phase_name[p],
					   prev_cpu, SETTLE_MAX_US / 1e6);
				break;
			}
		}
		if (!completed && ph->ndone >= ph->nplanned) {
			completed = true;
			t_end = now;
			bench_note("phase %s: done in %.1f s", phase_name[p],
				   (double)(ph->t_done - ph->t0) / 1e6);
		}
		if (r->watch_failed || r->nfailed > 0) {
			rc = 1;
			break;
		}
		if (!completed && now >= deadline) {
			bench_note("phase %s: TIMED OUT after %d s: %d of %d "
				   "done", phase_name[p], timeout_s, ph->ndone,
				   ph->nplanned);
			rc = 1;
			break;
		}
		if (now - last_print >= 5000000) {
			bench_note("%.0f s: %d/%d done (%d/%d ready finished), "
				   "%d PodsReady timeouts, %.0f cpu reserved",
				   (double)(now - ph->t0) / 1e6, ph->ndone,
				   ph->nplanned, ph->ngood_done, ph->ngood,
				   ph->ntimeout_bad + ph->ntimeout_good,
				   prev_cpu);
			last_print = now;
		}
		wake = last_sample + SAMPLE_MS * 1000;
		if (wake < now + 1000)
			wake = now + 1000;
		ts.tv_sec = wake / 1000000;
		ts.tv_nsec = (wake % 1000000) * 1000;
		pthread_cond_timedwait(&r->cv, &r->mu, &ts);
	}
	ph->completed = completed;
	if (completed)
		ph->settle_s = (double)(last_sample - t_end) / 1e6;
	/* timed out or failed: the holds still open count to now */
	for (int i = p * r->per_phase; !completed &&
					i < (p + 1) * r->per_phase; i++) {
		const struct wl *w = &r->wls[i];
		double held = w->holding ? (double)w->cpu *
				(double)(bench_now_us() - w->t_hold) / 1e6 : 0;

		if (w->bad)
			ph->bad_cpu_s += held;
		else
			ph->lost_cpu_s += held;
	}
	pthread_mutex_unlock(&r->mu);
	for (int i = 0; i < NCREATE; i++)
		pthread_join(cr[i], NULL);
	ph->mcpu_s = mcpu0 >= 0 ? bench_proc_cpu_s(mpid) - mcpu0 : -1;
	final_check(r, &c, p);
	read_metrics(ph, murl, p);
	bench_note("phase %s: %s", phase_name[p], ph->final_check);
	bench_conn_release(&c);
	return rc || !completed;
}

/* ---- report ---- */

static void row(const struct run *r, const char *what, const char *fig,
		const char *unit, const char *anchor, const char *ratio,
		const char *note)
{
	char *w = xasprintf("%s: %s", r->sh->title, what);

	bench_row(w, fig, unit, anchor, ratio, note);
	free(w);
}

static void report(struct run *r, const char *load, double hwm,
		   const char *inv, bool inv_ok)
{
	const struct shape *sh = r->sh;
	struct phase_res *m = &r->res[MIXED], *id = &r->res[IDEAL];
	double cap = (double)sh->ncq * sh->nominal, demand = 0;
	double mwall = -1, iwall = -1, mtp = -1, itp = -1, all = -1;
	double mus = -1, ius = -1, waste_pct = -1;
	char fig[128], anc[128], rat[32], *n;

	for (int i = 0; i < r->per_phase; i++)
		if (!r->wls[i].bad)
			demand += r->wls[i].cpu * sh->runtime_ms / 1000.0;
	if (m->ran && m->ngood_done == m->ngood && m->ngood > 0) {
		mwall = (double)(m->t_good_fin - m->t0) / 1e6;
		mtp = m->ngood / mwall;
	}
	if (id->ran && id->ngood_done == id->ngood && id->ngood > 0) {
		iwall = (double)(id->t_good_fin - id->t0) / 1e6;
		itp = id->ngood / iwall;
	}
	if (m->completed)
		all = (double)(m->t_done - m->t0) / 1e6;
	if (m->completed && all > 0)
		mus = m->sampled_cpu_s * 100.0 / (cap * all);
	if (id->completed)
		ius = id->sampled_cpu_s * 100.0 /
		      (cap * (double)(id->t_done - id->t0) / 1e6);

	/* 1. wall until every ready workload finished */
	bench_fmt(fig, sizeof(fig), mwall, 1);
	if (iwall > 0)
		snprintf(anc, sizeof(anc), "ideal run: %.1f s", iwall);
	else
		snprintf(anc, sizeof(anc), "—");
	bench_fmt(rat, sizeof(rat), mwall > 0 && iwall > 0 ? mwall / iwall : -1,
		  2);
	n = xasprintf("%d ClusterQueues x %d cpu (no cohort, BestEffortFIFO), "
		      "%d Workloads of 1/2/4 cpu created at once without a "
		      "Job, every tenth never ready; ready ones PodsReady %d "
		      "ms and Finished %.1f s after their admission is seen; "
		      "waitForPodsReady timeout %d s, backoff %d s base / %d s "
		      "max, backoffLimitCount %d, blockAdmission false; "
		      "creation start -> the last ready workload's Finished "
		      "seen; ideal run = the same without the never-ready "
		      "tenth, on the same devcluster after this one; quota "
		      "floor of the ready work %.1f s (%.0f cpu-s / %.0f cpu); "
		      "load at the end %s",
		      sh->ncq, sh->nominal, m->nplanned, READY_DELAY_MS,
		      sh->runtime_ms / 1000.0, PR_TIMEOUT_S, PR_BACKOFF_BASE_S,
		      PR_BACKOFF_MAX_S, PR_BACKOFF_LIMIT, demand / cap, demand,
		      cap, load);
	row(r, "wall until every ready workload finished", fig, "s", anc, rat,
	    n);
	free(n);

	/* 2. ready workloads per second */
	bench_fmt(fig, sizeof(fig), mtp, 1);
	if (itp > 0)
		snprintf(anc, sizeof(anc), "ideal run: %.1f wl/s", itp);
	else
		snprintf(anc, sizeof(anc), "—");
	bench_fmt(rat, sizeof(rat), mtp > 0 && itp > 0 ? mtp / itp : -1, 2);
	n = xasprintf("ready workloads / the wall above; the last ready "
		      "admission seen at %.1f s (ideal run %.1f s)",
		      m->ran ? (double)(m->t_good_adm - m->t0) / 1e6 : -1.0,
		      id->ran ? (double)(id->t_good_adm - id->t0) / 1e6 : -1.0);
	row(r, "ready workloads finished per second", fig, "wl/s", anc, rat,
	    n);
	free(n);

	/* 3. until every never-ready one is deactivated */
	bench_fmt(fig, sizeof(fig), all, 1);
	n = xasprintf("creation start -> the last never-ready workload seen "
		      "inactive (spec.active false) without quota; each is "
		      "admitted %d times, timed out twice (requeued after "
		      "%d s, then %d s) and deactivated at its third timeout",
		      PR_BACKOFF_LIMIT + 1, PR_BACKOFF_BASE_S,
		      PR_BACKOFF_BASE_S * 2);
	row(r, "wall until every never-ready workload deactivated", fig, "s",
	    "—", "—", n);
	free(n);

	/* 4. wasted quota-seconds */
	bench_fmt(fig, sizeof(fig), m->ran ? m->bad_cpu_s : -1, 0);
	snprintf(anc, sizeof(anc), "nominal: %.0f cpu-s", m->nominal_bad_cpu_s);
	bench_fmt(rat, sizeof(rat),
		  m->nominal_bad_cpu_s > 0
			  ? m->bad_cpu_s / m->nominal_bad_cpu_s : -1, 2);
	{
		double hm = vec_mean_ms(&m->hold), dm = vec_mean_ms(&m->detect);
		double h50 = vec_pct_ms(&m->hold, 50);
		double h99 = vec_pct_ms(&m->hold, 99);
		double d50 = vec_pct_ms(&m->detect, 50);
		double d99 = vec_pct_ms(&m->detect, 99);
		double r50 = vec_pct_ms(&m->release, 50);
		double r99 = vec_pct_ms(&m->release, 99);

		n = xasprintf("this program's bookkeeping: cpu x (holding "
			      "seen -> not holding seen) over the %d holds of "
			      "never-ready workloads; nominal = holds x %d s x "
			      "cpu; per hold mean %.0f ms, p50 %.0f, p99 %.0f; "
			      "of which admission -> Evicted seen (the "
			      "timeout; condition times are whole seconds, so "
			      "it fires 1-2 s after the admission) mean %.0f, "
			      "p50 %.0f, p99 %.0f ms, and Evicted -> "
			      "reservation cleared seen p50 %.0f, p99 %.0f ms; "
			      "reservations cleared by this program as the Job "
			      "integration: %d, by the manager's own write: %d",
			      m->nholds_bad, PR_TIMEOUT_S, hm, h50, h99, dm,
			      d50, d99, r50, r99, m->nrel_bench, m->nrel_mgr);
	}
	row(r, "quota held by never-ready workloads", fig, "cpu-s", anc, rat,
	    n);
	free(n);

	/* 5. wasted share */
	if (m->ran && m->good_cpu_s + m->lost_cpu_s + m->bad_cpu_s > 0)
		waste_pct = m->bad_cpu_s * 100.0 /
			    (m->good_cpu_s + m->lost_cpu_s + m->bad_cpu_s);
	bench_fmt(fig, sizeof(fig), waste_pct, 1);
	n = xasprintf("never-ready quota-seconds / all reserved quota-seconds "
		      "(bookkeeping: ready %.0f, ready without a finish %.0f, "
		      "never ready %.0f cpu-s); the never-ready are %.1f %% "
		      "of the demand's workloads",
		      m->good_cpu_s, m->lost_cpu_s, m->bad_cpu_s,
		      m->nplanned ? m->nbad * 100.0 / m->nplanned : 0.0);
	row(r, "share of reserved quota wasted", fig, "%", "—", "—", n);
	free(n);

	/* 6. reserved quota-seconds, sampled from the ClusterQueues */
	bench_fmt(fig, sizeof(fig), m->ran && m->nsamples ? m->sampled_cpu_s
							 : -1, 0);
	if (id->ran && id->nsamples)
		snprintf(anc, sizeof(anc), "ideal run: %.0f cpu-s",
			 id->sampled_cpu_s);
	else
		snprintf(anc, sizeof(anc), "—");
	bench_fmt(rat, sizeof(rat), m->sampled_cpu_s > 0 &&
				    id->sampled_cpu_s > 0
				    ? m->sampled_cpu_s / id->sampled_cpu_s : -1,
		  2);
	n = xasprintf("the ClusterQueues' status.flavorsReservation cpu, "
		      "sampled every %d ms (%d samples, %d failed; the manager "
		      "writes a queue's status at most once a second) and "
		      "integrated as a step function from the creation start "
		      "until it reads 0 again (%.1f s after the last workload "
		      "done); this program's bookkeeping gives %.0f (ideal run "
		      "%.0f); peak %.0f of %.0f cpu; usage (Kueue's formula: "
		      "integral x 100 / (nominal x creation start -> the last "
		      "workload done)) %.1f %%, ideal run %.1f %%",
		      SAMPLE_MS, m->nsamples, m->nsample_fail, m->settle_s,
		      m->good_cpu_s + m->lost_cpu_s + m->bad_cpu_s,
		      id->good_cpu_s + id->lost_cpu_s + id->bad_cpu_s,
		      m->sample_peak, cap, mus, ius);
	row(r, "reserved quota, sampled from the ClusterQueues", fig, "cpu-s",
	    anc, rat, n);
	free(n);

	/* 7. timeouts */
	snprintf(fig, sizeof(fig), "%d / %d", m->ntimeout_bad,
		 m->ntimeout_good + id->ntimeout_good);
	n = xasprintf("Evicted=True PodsReadyTimeout transitions on this "
		      "program's watch, never-ready / ready (both phases; "
		      "expected %d / 0); kueue_evicted_workloads_total of the "
		      "phase's queues from /metrics: PodsReadyTimeout %.0f, "
		      "Deactivated %.0f (%s); deactivation evictions seen "
		      "%d, other evictions %d; "
		      "timed writes sent: PodsReady %d, Finished %d, release "
		      "%d; %d dropped as stale, %d precondition conflicts, "
		      "%d retries; a ready one's admission seen -> its "
		      "PodsReady=True seen p50 %.0f, p99 %.0f, max %.0f ms "
		      "(the margin against the timeout, which can fire 1 s "
		      "after an admission)",
		      m->nbad * PR_BACKOFF_LIMIT, m->m_timeout, m->m_deact,
		      m->metrics ? m->metrics : "unread",
		      m->nevict_deact, m->nevict_other + id->nevict_other,
		      m->nwrites[ACT_READY] + id->nwrites[ACT_READY],
		      m->nwrites[ACT_FINISH] + id->nwrites[ACT_FINISH],
		      m->nwrites[ACT_RELEASE] + id->nwrites[ACT_RELEASE],
		      r->nstale, r->nconflicts, r->nretries,
		      vec_pct_ms(&m->ready_lat, 50),
		      vec_pct_ms(&m->ready_lat, 99),
		      vec_pct_ms(&m->ready_lat, 100));
	row(r, "PodsReady timeouts, never-ready / ready", fig, "evictions",
	    "—", "—", n);
	free(n);

	/* 8. final state */
	snprintf(fig, sizeof(fig), "%s",
		 m->ran ? (m->final_ok ? "ok" : "FAILED") : "not run");
	n = xasprintf("the phase's Workloads read back at its end: %s; ideal "
		      "run: %s", m->final_check ? m->final_check : "—",
		      id->final_check ? id->final_check : "not run");
	row(r, "final state", fig, "check", "—", "—", n);
	free(n);

	/* 9. invariants */
	snprintf(fig, sizeof(fig), "%s", !inv ? "not run" :
					 inv_ok ? "ok" : "FAILED");
	n = xasprintf("cueue-invariants --status (test/tools/invariants.c) on "
		      "every ClusterQueue, Cohort, Workload, ResourceFlavor "
		      "and LocalQueue after the last phase: %s",
		      inv ? inv : "—");
	row(r, "invariants", fig, "check", "—", "—", n);
	free(n);

	/* 10. manager CPU */
	bench_fmt(fig, sizeof(fig), m->mcpu_s >= 0 && m->nplanned
				    ? m->mcpu_s * 1000 / m->nplanned : -1, 3);
	n = xasprintf("utime+stime of the manager pid over the phase / its "
		      "workloads: %.2f s over %d (ideal run %.2f s over %d); "
		      "manager VmHWM %.1f MiB",
		      m->mcpu_s, m->nplanned, id->mcpu_s, id->nplanned, hwm);
	row(r, "manager CPU per workload", fig, "ms", "—", "—", n);
	free(n);
}

/* ---- main ---- */

static void usage_exit(void)
{
	fprintf(stderr, "usage: podsready-bench --print-config\n"
			"       podsready-bench --cluster DIR [--shape "
			"full|quick] [--phase both|mixed|ideal] "
			"[--invariants BIN] [--timeout S]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *shape = NULL, *phase = "both", *inv_bin = NULL;
	struct run r = { 0 };
	pthread_condattr_t ca;
	pthread_t watcher, acts[NACT];
	int timeout_s = 0, rc = 0, inv_rc = -1;
	char *murl, *load, *inv = NULL;
	long mpid;
	struct err err = { "" };

	bench_init("podsready-bench");
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--print-config")) {
			print_config();
			return 0;
		} else if (!strcmp(argv[i], "--cluster") && i + 1 < argc) {
			dir = argv[++i];
		} else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
			shape = argv[++i];
		} else if (!strcmp(argv[i], "--phase") && i + 1 < argc) {
			phase = argv[++i];
		} else if (!strcmp(argv[i], "--invariants") && i + 1 < argc) {
			inv_bin = argv[++i];
		} else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) {
			timeout_s = atoi(argv[++i]);
		} else {
			usage_exit();
		}
	}
	if (!shape)
		shape = getenv("QUICK") && !strcmp(getenv("QUICK"), "1")
				? "quick" : "full";
	for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++)
		if (!strcmp(shapes[i].name, shape))
			r.sh = &shapes[i];
	if (!dir || !r.sh || (strcmp(phase, "both") && strcmp(phase, "mixed") &&
			      strcmp(phase, "ideal")))
		usage_exit();
	if (timeout_s <= 0)
		timeout_s = r.sh->timeout_s;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (bench_kube_load(&r.kube, dir, &err) < 0)
		bench_die("%s", err.msg);
	mpid = bench_read_pid(dir, "manager");
	murl = bench_metrics_url(dir);
	pthread_mutex_init(&r.mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r.cv, &ca);
	pthread_cond_init(&r.act_cv, &ca);
	pthread_condattr_destroy(&ca);
	plan(&r);

	r.last_rv = list_rv(&r);
	if (pthread_create(&watcher, NULL, watch_main, &r))
		bench_die("pthread_create failed");
	for (int i = 0; i < NACT; i++)
		if (pthread_create(&acts[i], NULL, act_main, &r))
			bench_die("pthread_create failed");

	for (int p = 0; p < NPHASE && !rc; p++) {
		if (strcmp(phase, "both") && strcmp(phase, phase_name[p]))
			continue;
		rc = run_phase(&r, p, mpid, timeout_s, murl);
		if (!r.res[p].final_ok)
			rc = 1;
	}

	pthread_mutex_lock(&r.mu);
	r.stop = true;
	pthread_cond_broadcast(&r.act_cv);
	pthread_cond_broadcast(&r.cv);
	pthread_mutex_unlock(&r.mu);
	for (int i = 0; i < NACT; i++)
		pthread_join(acts[i], NULL);
	pthread_join(watcher, NULL);

	if (inv_bin) {
		char *file = xasprintf("%s/podsready-state.json", dir);

		if (dump_state(&r, file, &err) < 0) {
			inv = xasprintf("could not read the state: %s",
					err.msg);
		} else {
			inv_rc = run_invariants(inv_bin, file, &inv);
			if (!inv)
				inv = xstrdup("could not run it");
		}
		bench_note("%s", inv);
		if (inv_rc != 0)
			rc = 1;
		free(file);
	}
	load = bench_loadavg();
	report(&r, load, bench_proc_hwm_mib(mpid), inv, inv_rc == 0);
	if (r.nretries > 0)
		bench_note("%d requests retried (429 or transport error)",
			   r.nretries);

	free(load);
	free(inv);
	free(murl);
	for (int i = 0; i < r.nwl; i++)
		json_decref(r.wls[i].conds);
	free(r.wls);
	free(r.heap);
	free(r.last_rv);
	for (int p = 0; p < NPHASE; p++) {
		free(r.res[p].hold.v);
		free(r.res[p].detect.v);
		free(r.res[p].release.v);
		free(r.res[p].ready_lat.v);
		free(r.res[p].final_check);
		free(r.res[p].metrics);
	}
	bench_kube_release(&r.kube);
	pthread_cond_destroy(&r.cv);
	pthread_cond_destroy(&r.act_cv);
	pthread_mutex_destroy(&r.mu);
	curl_global_cleanup();
	return rc;
}
