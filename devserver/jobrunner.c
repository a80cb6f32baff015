/*
 * jobrunner: the devserver's stand-in for kubelet and the Job controller
 * (see jobrunner.h for the behaviour). It owns its thread, a uid -> Job
 * table and a timer heap; it reads Jobs from the store and writes only
 * their status, through api_internal_patch. It never creates Pods and
 * never touches a finished Job.
 *
 * DESIGN. Level-triggered, like a controller-runtime reconciler: store
 * events and due timers only mark a Job dirty; each turn then re-reads
 * every dirty Job from the store and plans it from scratch
 * (jobrunner_plan_job, a pure function of the object and `now`), so
 * several events of one Job cost one plan and a lost race costs one
 * retry. A running Job has one heap entry, keyed by its next ready
 * transition or its finish time, whichever comes first (an unready Job
 * past its ready window has none), all of them fixed offsets from
 * startTime (see jobrunner.h); startTime has second precision, so the
 * table keeps the exact start the runner wrote and uses it while
 * startTime still names that second (after a restart the second is all
 * there is). Each turn of the thread:
 *   1. wait for the first Job event, at most until the earliest timer
 *      (and 1 s, so a stop is seen), then drain up to BATCH more; on
 *      STORE_GONE re-list every Job (resync);
 *   2. move due timers to the dirty list;
 *   3. plan every dirty Job and write the status the plan asks for.
 */
#include "devserver/jobrunner.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "base/jx.h"
#include "devserver/api.h"
#include "devserver/store.h"
#include "model/timestamp.h"

#define JOBS_KEY "batch/jobs"
#define BATCH 4096          /* events drained before the dirty Jobs run */
#define EV_CHUNK 64           /* events taken per store lock hold */
#define MAX_WAIT_MS 1000    /* longest sleep, so a stop is noticed */
#define RETRY_MS 1000       /* after a write that failed for good */
#define CONFLICT_RETRIES 5  /* re-plans after a 409 in one turn */
#define NO_HEAP ((size_t)-1)

static const char runner_user[] =
	"system:serviceaccount:kube-system:job-controller";

/* One Job the runner follows: not finished, seen in an event or a list. */
struct job {
	char *uid;          /* owned; the key in r->jobs */
	char *ns;           /* owned */
	char *name;         /* owned */
	int64_t start_ms;   /* exact start of the last plan; 0: none */
	int64_t due_ms;     /* wake time; valid while hidx != NO_HEAP */
	size_t hidx;        /* index in the heap, or NO_HEAP */
	bool dirty;         /* in r->dirty */
	bool warned;        /* its malformed annotation has been logged */
	bool seen;          /* listed in the current resync */
};

struct jobrunner {
	struct api *api;          /* borrowed */
	struct store *store;      /* borrowed from api */
	int64_t runtime_ms;       /* default runtime; > 0 */
	pthread_t thread;
	atomic_bool stop;         /* set by jobrunner_stop */
	atomic_bool exited;       /* set by the thread on its way out */
	/* Everything below belongs to the runner's thread. */
	uint64_t cursor;          /* last store RV looked at */
	struct hmap jobs;         /* uid -> struct job (owned) */
	struct job **heap;        /* min-heap on due_ms */
	size_t nheap, capheap;
	struct job **dirty;       /* Jobs to plan this turn; each once */
	size_t ndirty, capdirty;
};

/* ---- JSON helpers ---- */

static const char *annotation(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(json_object_get(
		json_object_get(obj, "metadata"), "annotations"), key));
}

static json_int_t int_at(const json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

static json_t *cond_find(const json_t *conds, const char *type)
{
	size_t i;
	json_t *c;

	json_array_foreach(conds, i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

static bool cond_is_true(const json_t *conds, const char *type)
{
	const char *s = json_string_value(json_object_get(
		cond_find(conds, type), "status"));

	return s && !strcmp(s, "True");
}

static bool finished(const json_t *job)
{
	const json_t *conds = json_object_get(json_object_get(job, "status"),
					      "conditions");

	return cond_is_true(conds, "Complete") || cond_is_true(conds, "Failed");
}

/* A batch/v1 JobCondition, fields in the Go struct's order. */
static json_t *cond_new(const char *type, const char *status,
			const char *reason, const char *msg, const char *ts)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s, s:s}", "type", type,
			 "status", status, "lastProbeTime", ts,
			 "lastTransitionTime", ts, "reason", reason,
			 "message", msg);
}

/* The Job controller's ensureJobConditionStatus: replace a condition whose
 * status, reason or message differ; add a missing one unless it would be
 * False. Returns true when conds changed. */
static bool ensure_cond(json_t *conds, const char *type, const char *status,
			const char *reason, const char *msg, const char *ts)
{
	json_t *c = cond_find(conds, type);
	size_t i;
	json_t *v;

	if (!c) {
		if (!strcmp(status, "False"))
			return false;
		json_array_append_new(conds, cond_new(type, status, reason, msg,
						      ts));
		return true;
	}
	if (!strcmp(json_string_value(json_object_get(c, "status")) ?
		    json_string_value(json_object_get(c, "status")) : "",
		    status) &&
	    !strcmp(json_string_value(json_object_get(c, "reason")) ?
		    json_string_value(json_object_get(c, "reason")) : "",
		    reason) &&
	    !strcmp(json_string_value(json_object_get(c, "message")) ?
		    json_string_value(json_object_get(c, "message")) : "", msg))
		return false;
	json_array_foreach(conds, i, v)
		if (v == c) {
			json_array_set_new(conds, i, cond_new(type, status,
							      reason, msg, ts));
			break;
		}
	return true;
}

/* patch[key] = v unless status already holds the integer v. */
static void want_int(json_t *patch, const json_t *status, const char *key,
		     json_int_t v)
{
	const json_t *cur = json_object_get(status, key);

	if (!json_is_integer(cur) || json_integer_value(cur) != v)
		json_object_set_new(patch, key, json_integer(v));
}

/* An int32 counter the real controller omits when 0 (active, failed). */
static void want_count(json_t *patch, const json_t *status, const char *key,
		       json_int_t v)
{
	if (v > 0)
		want_int(patch, status, key, v);
	else if (int_at(status, key) != 0)
		json_object_set_new(patch, key, json_null());
}

/* ---- durations ---- */

int jobrunner_parse_duration(const char *s, int64_t *ms)
{
	static const struct {
		const char *unit;
		double ms;
	} units[] = {
		{ "ns", 1e-6 }, { "us", 1e-3 }, { "\xc2\xb5s", 1e-3 },
		{ "ms", 1 }, { "s", 1e3 }, { "m", 6e4 }, { "h", 3.6e6 },
	};
	double total = 0;

	if (!s || !*s)
		return -1;
	if (*s == '+')
		s++;
	if (!strcmp(s, "0")) {
		*ms = 0;
		return 0;
	}
	if (!*s)
		return -1;
	while (*s) {
		double v = 0, scale = 1;
		bool digits = false;
		size_t best = 0, bi = 0;

		for (; *s >= '0' && *s <= '9'; s++, digits = true)
			v = v * 10 + (*s - '0');
		if (*s == '.')
			for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
				v += (*s - '0') * (scale /= 10);
		if (!digits)
			return -1;
		/* Longest unit that matches: "ms" before "m". */
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t n = strlen(units[i].unit);

			if (n > best && !strncmp(s, units[i].unit, n)) {
				best = n;
				bi = i;
			}
		}
		if (!best)
			return -1;
		total += v * units[bi].ms;
		s += best;
	}
	if (total > 9.2e15)
		return -1;
	*ms = (int64_t)total;
	return 0;
}

/* ---- planning ---- */

static int64_t job_runtime(const json_t *job, int64_t dflt)
{
	const char *a = annotation(job, JOBRUNNER_RUNTIME_ANNOTATION);
	int64_t ms;

	if (a && jobrunner_parse_duration(a, &ms) == 0)
		return ms;
	return dflt;
}

/* The annotation cueue.dev/stop-delay (a Go duration), else 0. */
static int64_t job_stop_delay(const json_t *job)
{
	const char *a = annotation(job, JOBRUNNER_STOP_DELAY_ANNOTATION);
	int64_t ms;

	if (a && jobrunner_parse_duration(a, &ms) == 0)
		return ms;
	return 0;
}

/* The window [*from, *to) in which a run that started at start has
 * ready pods; INT64_MAX stands for never (from) and forever (to). A
 * malformed annotation counts as absent; its key goes to *bad. */
static void ready_window(const json_t *job, int64_t start, int64_t *from,
			 int64_t *to, const char **bad)
{
	const char *ra = annotation(job, JOBRUNNER_READY_AFTER_ANNOTATION);
	const char *ua = annotation(job, JOBRUNNER_UNREADY_AFTER_ANNOTATION);
	int64_t ms;

	*from = start;
	*to = INT64_MAX;
	if (ra && !strcmp(ra, "never"))
		*from = INT64_MAX;
	else if (ra && jobrunner_parse_duration(ra, &ms) == 0)
		*from = start + ms;
	else if (ra)
		*bad = JOBRUNNER_READY_AFTER_ANNOTATION;
	if (ua && jobrunner_parse_duration(ua, &ms) == 0) {
		if (*from != INT64_MAX)
			*to = *from + ms;
	} else if (ua) {
		*bad = JOBRUNNER_UNREADY_AFTER_ANNOTATION;
	}
}

/* The earliest of the times after now among a, b, c (INT64_MAX: none);
 * 0 when there is none. */
static int64_t next_after(int64_t now, int64_t a, int64_t b, int64_t c)
{
	int64_t t[] = { a, b, c }, best = INT64_MAX;

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i] > now && t[i] < best)
			best = t[i];
	return best == INT64_MAX ? 0 : best;
}

/* min(parallelism, completions - succeeded), as the Job controller's
 * wantActive for NonIndexed Jobs. */
static json_int_t effective_parallelism(const json_t *spec,
					const json_t *status)
{
	const json_t *pj = json_object_get(spec, "parallelism");
	const json_t *cj = json_object_get(spec, "completions");
	json_int_t p = json_is_integer(pj) ? json_integer_value(pj) : 1;

	if (json_is_integer(cj)) {
		json_int_t left = json_integer_value(cj) -
				  int_at(status, "succeeded");

		if (left < p)
			p = left;
	}
	return p > 0 ? p : 0;
}

/* The runtime is over: Complete, or Failed with the fail annotation. */
static void plan_finish(const json_t *job, json_int_t p, json_t *patch,
			json_t *conds, const char *ts)
{
	const json_t *spec = json_object_get(job, "spec");
	const json_t *status = json_object_get(job, "status");
	const char *fail = annotation(job, JOBRUNNER_FAIL_ANNOTATION);

	want_count(patch, status, "active", 0);
	want_int(patch, status, "ready", 0);
	if (fail && !strcmp(fail, "true")) {
		static const char r[] = "BackoffLimitExceeded";
		static const char m[] =
			"Job has reached the specified backoff limit";

		want_count(patch, status, "failed",
			   int_at(status, "failed") + p);
		ensure_cond(conds, "FailureTarget", "True", r, m, ts);
		ensure_cond(conds, "Failed", "True", r, m, ts);
	} else {
		static const char r[] = "CompletionsReached";
		static const char m[] =
			"Reached expected number of succeeded pods";
		const json_t *cj = json_object_get(spec, "completions");
		const json_t *pj = json_object_get(spec, "parallelism");

		want_count(patch, status, "succeeded", json_is_integer(cj)
			   ? json_integer_value(cj)
			   : json_is_integer(pj) ? json_integer_value(pj) : 1);
		json_object_set_new(patch, "completionTime", json_string(ts));
		ensure_cond(conds, "SuccessCriteriaMet", "True", r, m, ts);
		ensure_cond(conds, "Complete", "True", r, m, ts);
	}
}

void jobrunner_plan_job(const json_t *job, int64_t now_ms, int64_t runtime_ms,
			int64_t start_hint_ms, struct jobrunner_plan *out)
{
	const json_t *spec = json_object_get(job, "spec");
	const json_t *status = json_object_get(job, "status");
	const json_t *oconds = json_object_get(status, "conditions");
	json_t *conds, *patch;
	char ts[TIMESTAMP_BUF];
	bool cchanged;

	memset(out, 0, sizeof(*out));
	if (jx_meta_str(job, "deletionTimestamp") || finished(job)) {
		out->done = true;
		return;
	}
	timestamp_format(now_ms, ts, sizeof(ts));
	conds = json_is_array(oconds) ? json_deep_copy(oconds) : json_array();
	patch = json_object();
	if (json_is_true(json_object_get(spec, "suspend"))) {
		/* 1. suspended: Suspended=True; no pods, or with a stop
		 *    delay the running ones still active until it ends */
		int64_t delay = job_stop_delay(job), since = now_ms;
		const json_t *sc;

		cchanged = ensure_cond(conds, "Suspended", "True",
				       "JobSuspended", "Job suspended", ts);
		sc = cond_find(conds, "Suspended");
		if (!cchanged && sc &&
		    timestamp_parse(json_string_value(json_object_get(
					    sc, "lastTransitionTime")),
				    &since) < 0)
			since = now_ms;
		if (delay > 0 && int_at(status, "active") > 0 &&
		    now_ms < since + delay) {
			out->wake_ms = since + delay;
		} else {
			want_count(patch, status, "active", 0);
			want_int(patch, status, "ready", 0);
		}
	} else {
		/* 2. running: a resume restarts startTime and the clock */
		const char *sts = json_string_value(json_object_get(status,
							    "startTime"));
		json_int_t p = effective_parallelism(spec, status);
		int64_t start, rt = job_runtime(job, runtime_ms);
		int64_t rfrom, rto, fin;

		cchanged = ensure_cond(conds, "Suspended", "False",
				       "JobResumed", "Job resumed", ts);
		if (cchanged || !sts || timestamp_parse(sts, &start) < 0) {
			start = now_ms;
			json_object_set_new(patch, "startTime", json_string(ts));
		} else if (start_hint_ms > 0 &&
			   start_hint_ms / 1000 == start / 1000) {
			start = start_hint_ms;
		}
		out->start_ms = start;
		/* The runtime counts ready time only: the run finishes rt
		 * into its ready window, if the window lasts that long. */
		ready_window(job, start, &rfrom, &rto, &out->bad);
		fin = rfrom == INT64_MAX || rt > rto - rfrom ? INT64_MAX
							     : rfrom + rt;
		if (p > 0 && now_ms >= fin) {
			/* 3. the runtime is over */
			plan_finish(job, p, patch, conds, ts);
			cchanged = true;
		} else {
			bool ready = now_ms >= rfrom && now_ms < rto;

			want_count(patch, status, "active", p);
			want_int(patch, status, "ready", ready ? p : 0);
			/* Wake at the next ready transition or the finish;
			 * an unready run past its window sleeps until the
			 * Job changes. */
			out->wake_ms = p > 0 ? next_after(now_ms, rfrom, rto,
							  fin) : 0;
		}
	}
	if (cchanged)
		json_object_set(patch, "conditions", conds);
	json_decref(conds);
	if (!json_object_size(patch)) {
		json_decref(patch);
		return;
	}
	/* Fields the 1.32 controller always writes along. */
	if (!json_object_get(status, "terminating"))
		json_object_set_new(patch, "terminating", json_integer(0));
	if (!json_object_get(status, "uncountedTerminatedPods"))
		json_object_set_new(patch, "uncountedTerminatedPods",
				    json_object());
	out->status = patch;
}

/* ---- the Job table (uid -> struct job) ---- */

static struct job *job_find(struct jobrunner *r, const char *uid)
{
	return hmap_get(&r->jobs, uid);
}

static struct job *job_add(struct jobrunner *r, const char *uid,
			   const char *ns, const char *name)
{
	struct job *j = xcalloc(1, sizeof(*j));

	j->uid = xstrdup(uid);
	j->ns = xstrdup(ns);
	j->name = xstrdup(name);
	j->hidx = NO_HEAP;
	hmap_put(&r->jobs, j->uid, j);
	return j;
}

/* ---- the timer heap (min on due_ms) ---- */

static void heap_put(struct jobrunner *r, size_t i, struct job *j)
{
	r->heap[i] = j;
	j->hidx = i;
}

static void sift_up(struct jobrunner *r, size_t i)
{
	struct job *j = r->heap[i];

	while (i > 0) {
		size_t up = (i - 1) / 2;

		if (r->heap[up]->due_ms <= j->due_ms)
			break;
		heap_put(r, i, r->heap[up]);
		i = up;
	}
	heap_put(r, i, j);
}

static void sift_down(struct jobrunner *r, size_t i)
{
	struct job *j = r->heap[i];

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= r->nheap)
			break;
		if (c + 1 < r->nheap &&
		    r->heap[c + 1]->due_ms < r->heap[c]->due_ms)
			c++;
		if (j->due_ms <= r->heap[c]->due_ms)
			break;
		heap_put(r, i, r->heap[c]);
		i = c;
	}
	heap_put(r, i, j);
}

static void heap_remove(struct jobrunner *r, struct job *j)
{
	size_t i = j->hidx;
	struct job *last;

	if (i == NO_HEAP)
		return;
	j->hidx = NO_HEAP;
	last = r->heap[--r->nheap];
	if (last == j)
		return;
	heap_put(r, i, last);
	sift_up(r, i);
	sift_down(r, last->hidx);
}

/* Wakes j at due_ms (0: never). */
static void schedule(struct jobrunner *r, struct job *j, int64_t due_ms)
{
	if (!due_ms) {
		heap_remove(r, j);
		return;
	}
	if (j->hidx != NO_HEAP) {
		if (j->due_ms == due_ms)
			return;
		j->due_ms = due_ms;
		sift_up(r, j->hidx);
		sift_down(r, j->hidx);
		return;
	}
	XGROW(r->heap, r->capheap, r->nheap + 1);
	j->due_ms = due_ms;
	r->heap[r->nheap] = j;
	j->hidx = r->nheap++;
	sift_up(r, j->hidx);
}

static void job_drop(struct jobrunner *r, struct job *j)
{
	heap_remove(r, j);
	hmap_del(&r->jobs, j->uid);
	free(j->uid);
	free(j->ns);
	free(j->name);
	free(j);
}

static void mark_dirty(struct jobrunner *r, struct job *j)
{
	if (j->dirty)
		return;
	j->dirty = true;
	XGROW(r->dirty, r->capdirty, r->ndirty + 1);
	r->dirty[r->ndirty++] = j;
}

/* ---- the thread ---- */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An event only marks the Job; DELETED and finished ones are forgotten
 * when they are planned. */
static void on_event(struct jobrunner *r, const struct store_event *ev)
{
	const char *uid = jx_meta_str(ev->obj, "uid");
	struct job *j;

	if (!uid)
		return;
	j = job_find(r, uid);
	if (!j) {
		if (ev->type == STORE_DELETED || finished(ev->obj) ||
		    jx_meta_str(ev->obj, "deletionTimestamp"))
			return;
		j = job_add(r, uid, ev->ns, ev->name);
	}
	mark_dirty(r, j);
}

/* Re-lists every Job: after start and after STORE_GONE. */
static void resync(struct jobrunner *r)
{
	struct store_list_opts o = { 0 };
	struct store_list_result lr;
	size_t i, pos = 0;
	json_t *obj;
	struct job *j;

	r->cursor = store_rv(r->store);
	while ((j = hmap_next(&r->jobs, &pos, NULL)))
		j->seen = false;
	store_list(r->store, JOBS_KEY, &o, &lr);
	json_array_foreach(lr.items, i, obj) {
		const char *uid = jx_meta_str(obj, "uid");
		const char *ns = jx_meta_str(obj, "namespace");

		if (!uid || finished(obj))
			continue;
		j = job_find(r, uid);
		if (!j)
			j = job_add(r, uid, ns ? ns : "", jx_name(obj));
		j->seen = true;
		mark_dirty(r, j);
	}
	store_list_result_release(&lr);
	/* Jobs gone meanwhile are found missing when planned. */
	pos = 0;
	while ((j = hmap_next(&r->jobs, &pos, NULL)))
		if (!j->seen)
			mark_dirty(r, j);
}

/* Plans j against its stored state and writes what the plan asks for. */
static void reconcile(struct jobrunner *r, struct job *j)
{
	struct api_ref ref = { .group = "batch", .version = "v1",
			       .resource = "jobs", .ns = j->ns,
			       .name = j->name, .user = runner_user };

	for (int attempt = 0; attempt <= CONFLICT_RETRIES; attempt++) {
		json_t *obj = store_get(r->store, JOBS_KEY, j->ns, j->name);
		const char *uid = obj ? jx_meta_str(obj, "uid") : NULL;
		struct api_status st = API_STATUS_INIT;
		struct jobrunner_plan p;
		json_t *patch;
		int rc;

		if (!uid || strcmp(uid, j->uid)) {
			json_decref(obj);
			job_drop(r, j);
			return;
		}
		jobrunner_plan_job(obj, now_ms(), r->runtime_ms, j->start_ms,
				   &p);
		if (p.done) {
			json_decref(obj);
			job_drop(r, j);
			return;
		}
		j->start_ms = p.start_ms;
		if (p.bad && !j->warned)
			fprintf(stderr, "cueue-devserver: jobrunner: job %s/%s: "
				"annotation %s: bad value \"%.100s\"; ignored\n",
				j->ns, j->name, p.bad, annotation(obj, p.bad));
		j->warned = p.bad != NULL;
		if (!p.status) {
			json_decref(obj);
			schedule(r, j, p.wake_ms);
			return;
		}
		patch = json_pack("{s:{s:s}, s:o}", "metadata",
				  "resourceVersion",
				  jx_meta_str(obj, "resourceVersion") ?
				  jx_meta_str(obj, "resourceVersion") : "",
				  "status", p.status);
		json_decref(obj);
		rc = api_internal_patch(r->api, &ref, "status",
					API_PATCH_MERGE, patch, NULL, &st);
		json_decref(patch);
		if (rc == 0) {
			schedule(r, j, p.wake_ms);
			return;
		}
		if (st.code == 404) {
			status_release(&st);
			job_drop(r, j);
			return;
		}
		if (st.code != 409 || attempt == CONFLICT_RETRIES) {
			fprintf(stderr, "cueue-devserver: jobrunner: job %s/%s: "
				"status write failed (%d %s); retrying\n",
				j->ns, j->name, st.code,
				st.message ? st.message : "");
			status_release(&st);
			schedule(r, j, now_ms() + RETRY_MS);
			return;
		}
		status_release(&st);
	}
}

static void run_turn(struct jobrunner *r)
{
	int64_t now = now_ms();
	int timeout = 0;
	struct job **todo;
	size_t n;

	/* 1. events */
	if (!r->ndirty) {
		int64_t w = MAX_WAIT_MS;

		if (r->nheap && r->heap[0]->due_ms - now < w)
			w = r->heap[0]->due_ms - now;
		timeout = w > 0 ? (int)w : 0;
	}
	for (size_t done = 0; done < BATCH;) {
		struct store_event evs[EV_CHUNK];
		size_t got = 0;
		int wait = done ? 0 : timeout;
		enum store_rc rc = store_next_events(r->store, &r->cursor,
						     JOBS_KEY, wait, evs,
						     EV_CHUNK, &got);

		if (rc == STORE_GONE) {
			resync(r);
			break;
		}
		if (rc != STORE_OK)
			break;
		for (size_t i = 0; i < got; i++) {
			on_event(r, &evs[i]);
			store_event_release(&evs[i]);
		}
		done += got;
	}
	if (atomic_load(&r->stop))
		return;
	/* 2. due timers */
	now = now_ms();
	while (r->nheap && r->heap[0]->due_ms <= now) {
		struct job *j = r->heap[0];

		heap_remove(r, j);
		mark_dirty(r, j);
	}
	/* 3. plans; a Job marked while planning waits for the next turn */
	todo = r->dirty;
	n = r->ndirty;
	r->dirty = NULL;
	r->ndirty = r->capdirty = 0;
	for (size_t i = 0; i < n && !atomic_load(&r->stop); i++) {
		todo[i]->dirty = false;
		reconcile(r, todo[i]);
	}
	free(todo);
}

static void *runner_main(void *arg)
{
	struct jobrunner *r = arg;

	while (!atomic_load(&r->stop))
		run_turn(r);
	atomic_store(&r->exited, true);
	return NULL;
}

struct jobrunner *jobrunner_start(struct api *a, struct err *err)
{
	struct jobrunner *r = xcalloc(1, sizeof(*r));
	int64_t rt = api_job_runtime_ms(a);

	r->api = a;
	r->store = api_store(a);
	r->runtime_ms = rt > 0 ? rt : JOBRUNNER_DEFAULT_RUNTIME_MS;
	hmap_init(&r->jobs);
	atomic_init(&r->stop, false);
	atomic_init(&r->exited, false);
	/* The first list happens here, so every Job written after
	 * jobrunner_start returns is seen as an event. */
	resync(r);
	if (pthread_create(&r->thread, NULL, runner_main, r) != 0) {
		struct job *j;
		size_t pos = 0;

		while ((j = hmap_next(&r->jobs, &pos, NULL)))
			job_drop(r, j); /* removing the current entry */
		hmap_release(&r->jobs);
		free(r->heap);
		free(r->dirty);
		free(r);
		err_set(err, "jobrunner: cannot start its thread");
		return NULL;
	}
	return r;
}

void jobrunner_stop(struct jobrunner *r)
{
	struct job *j;
	size_t pos = 0;

	if (!r)
		return;
	atomic_store(&r->stop, true);
	/* The thread may be about to sleep in store_next_event: keep waking
	 * it until it has left its loop. */
	while (!atomic_load(&r->exited)) {
		struct timespec d = { 0, 2000000 };

		store_wake_all(r->store);
		nanosleep(&d, NULL);
	}
	pthread_join(r->thread, NULL);
	while ((j = hmap_next(&r->jobs, &pos, NULL))) {
		free(j->uid); /* the map is released below, unread */
		free(j->ns);
		free(j->name);
		free(j);
	}
	hmap_release(&r->jobs);
	free(r->heap);
	free(r->dirty);
	free(r);
}
