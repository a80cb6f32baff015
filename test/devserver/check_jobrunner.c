/*
 * Suite "jobrunner": the devserver's Job simulator (devserver/jobrunner.h).
 * The planner is checked as a pure function with a fixed clock; the
 * runner is driven through the internal API of an in-memory devserver
 * (and of one with a data dir for the restart case): start -> active ->
 * Complete, parallelism and completions, suspend / resume (the clock
 * restarts), a Job created suspended, the failure annotation, finished
 * Jobs left alone, 500 concurrent Jobs, a restart resuming a running
 * Job from its startTime, and the ready annotations (ready-after, never,
 * unready-after, their clocks restarting with each run, bad values);
 * those runner cases read the Job's states from the store's event log,
 * so the order is checked without racing the poll.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "devserver/api.h"
#include "devserver/jobrunner.h"
#include "devserver/store.h"
#include "model/timestamp.h"
#include "suites.h"
#include "test/support/support.h"

#define DEADLINE_MS 5000

static struct {
	struct api *api;
	struct jobrunner *jr;
	char dir[64];      /* data dir, or "" */
} S;

static void open_api(void)
{
	struct err err = { "" };
	struct api_opts ao = { .watch_history = 10000,
			       .job_runtime_ms = 200,
			       .data_dir = S.dir[0] ? S.dir : NULL };

	S.api = api_new(&ao, &err);
	ck_assert_msg(S.api != NULL, "api_new: %s", err.msg);
}

static void start_runner(void)
{
	struct err err = { "" };

	S.jr = jobrunner_start(S.api, &err);
	ck_assert_msg(S.jr != NULL, "jobrunner_start: %s", err.msg);
}

static void close_all(void)
{
	jobrunner_stop(S.jr);
	S.jr = NULL;
	if (S.api) {
		api_shutdown(S.api);
		api_free(S.api);
	}
	S.api = NULL;
}

static void setup(void)
{
	memset(&S, 0, sizeof(S));
	open_api();
	start_runner();
}

static void setup_dir(void)
{
	memset(&S, 0, sizeof(S));
	snprintf(S.dir, sizeof(S.dir), "/tmp/cueue-jobrunner-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(S.dir));
	open_api();
	start_runner();
}

static void teardown(void)
{
	close_all();
	if (S.dir[0]) {
		DIR *d = opendir(S.dir);
		struct dirent *e;

		while (d && (e = readdir(d))) {
			char *p;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
				continue;
			p = xasprintf("%s/%s", S.dir, e->d_name);
			unlink(p);
			free(p);
		}
		if (d)
			closedir(d);
		rmdir(S.dir);
	}
	memset(&S, 0, sizeof(S));
}

/* ---- Jobs ---- */

/* Creates a Job; annotations is JSON object text or NULL. */
static void make_job(const char *name, bool suspend, int parallelism,
		     int completions, const char *annotations)
{
	struct api_ref r = { .group = "batch", .resource = "jobs",
			     .ns = "default" };
	struct api_status st = API_STATUS_INIT;
	json_t *o = json_pack(
		"{s:s, s:s, s:{s:s}, s:{s:b, s:i, s:{s:{s:s, s:[{s:s, s:s}]}}}}",
		"apiVersion", "batch/v1", "kind", "Job", "metadata", "name",
		name, "spec", "suspend", suspend, "parallelism", parallelism,
		"template", "spec", "restartPolicy", "Never", "containers",
		"name", "c", "image", "busybox");
	int rc;

	if (completions >= 0)
		json_object_set_new(json_object_get(o, "spec"), "completions",
				    json_integer(completions));
	if (annotations)
		json_object_set_new(json_object_get(o, "metadata"),
				    "annotations", t_json(annotations));
	rc = api_internal_create(S.api, &r, o, NULL, &st);
	ck_assert_msg(rc == 0, "create job %s: %d %s", name, st.code,
		      st.message ? st.message : "");
	json_decref(o);
}

static json_t *get_job(const char *name)
{
	struct api_ref r = { .group = "batch", .resource = "jobs",
			     .ns = "default", .name = name };
	struct api_status st = API_STATUS_INIT;
	json_t *o = api_internal_get(S.api, &r, &st);

	status_release(&st);
	ck_assert_msg(o != NULL, "job %s not found", name);
	return o;
}

static void patch_job(const char *name, const char *sub, const char *text)
{
	struct api_ref r = { .group = "batch", .resource = "jobs",
			     .ns = "default", .name = name };
	struct api_status st = API_STATUS_INIT;
	json_t *p = t_json(text);
	int rc = api_internal_patch(S.api, &r, sub, API_PATCH_MERGE, p, NULL,
				    &st);

	ck_assert_msg(rc == 0, "patch %s: %d %s", name, st.code,
		      st.message ? st.message : "");
	json_decref(p);
}

static const json_t *status_of(const json_t *job)
{
	return json_object_get(job, "status");
}

static json_int_t st_int(const json_t *job, const char *key)
{
	return json_integer_value(json_object_get(status_of(job), key));
}

/* The condition of type in status.conditions (status borrowed). */
static const json_t *cond_find_in(const json_t *status, const char *type)
{
	size_t i;
	json_t *c;

	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		const char *t = json_string_value(json_object_get(c, "type"));

		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

static const json_t *cond(const json_t *job, const char *type)
{
	return cond_find_in(status_of(job), type);
}

static bool cond_is(const json_t *job, const char *type, const char *status)
{
	const char *s = json_string_value(json_object_get(cond(job, type),
							  "status"));

	return s && !strcmp(s, status);
}

/* Field checks on a fresh read of the Job. */
static bool job_active(const char *name, json_int_t n)
{
	json_t *j = get_job(name);
	bool ok = st_int(j, "active") == n && st_int(j, "ready") == n &&
		  json_object_get(status_of(j), "startTime");

	json_decref(j);
	return ok;
}

static bool job_has(const char *name, const char *type, const char *status)
{
	json_t *j = get_job(name);
	bool ok = cond_is(j, type, status);

	json_decref(j);
	return ok;
}

static void ck_cond(const json_t *c, const char *type, const char *status,
		    const char *reason, const char *message)
{
	ck_assert_ptr_nonnull(c);
	ck_assert_str_eq(json_string_value(json_object_get(c, "type")), type);
	ck_assert_str_eq(json_string_value(json_object_get(c, "status")),
			 status);
	ck_assert_str_eq(json_string_value(json_object_get(c, "reason")),
			 reason);
	ck_assert_str_eq(json_string_value(json_object_get(c, "message")),
			 message);
	ck_assert_ptr_nonnull(json_string_value(json_object_get(c,
		"lastProbeTime")));
	ck_assert_ptr_nonnull(json_string_value(json_object_get(c,
		"lastTransitionTime")));
}

/* ---- the planner, with a fixed clock ---- */

#define NOW 1767225600000LL /* 2026-01-01T00:00:00Z */

START_TEST(plan_suspended)
{
	json_t *j = t_json("{\"metadata\":{\"name\":\"j\"},\"spec\":"
			   "{\"suspend\":true,\"parallelism\":2},"
			   "\"status\":{}}");
	struct jobrunner_plan p;

	jobrunner_plan_job(j, NOW, 1000, 0, &p);
	ck_assert(!p.done);
	ck_assert_int_eq(p.wake_ms, 0);
	ck_assert_ptr_nonnull(p.status);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status,
							    "ready")), 0);
	ck_assert_ptr_null(json_object_get(p.status, "active"));
	ck_assert_ptr_null(json_object_get(p.status, "startTime"));
	ck_cond(json_array_get(json_object_get(p.status, "conditions"), 0),
		"Suspended", "True", "JobSuspended", "Job suspended");
	json_decref(p.status);
	json_decref(j);
	/* A Job that ran keeps its startTime when suspended: the 1.32 Job
	 * controller leaves it (Kueue clears it through /status itself). */
	j = t_json("{\"metadata\":{\"name\":\"j\"},\"spec\":"
		   "{\"suspend\":true,\"parallelism\":2},\"status\":{"
		   "\"startTime\":\"2025-12-31T23:59:00Z\",\"active\":2}}");
	jobrunner_plan_job(j, NOW, 1000, 0, &p);
	ck_assert_ptr_nonnull(p.status);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status,
							    "active")), 0);
	ck_assert_ptr_null(json_object_get(p.status, "startTime"));
	json_decref(p.status);
	json_decref(j);
}
END_TEST

/* cueue.dev/stop-delay: a suspended Job's pods stay active until the
 * delay after the Suspended condition's time, then go. */
START_TEST(plan_stop_delay)
{
	json_t *j = t_json("{\"metadata\":{\"name\":\"j\",\"annotations\":"
			   "{\"cueue.dev/stop-delay\":\"3s\"}},\"spec\":"
			   "{\"suspend\":true,\"parallelism\":2},\"status\":{"
			   "\"startTime\":\"2025-12-31T23:59:00Z\",\"active\":2,"
			   "\"ready\":2}}");
	struct jobrunner_plan p;

	/* just suspended: the condition, pods still active */
	jobrunner_plan_job(j, NOW, 1000, 0, &p);
	ck_assert_ptr_nonnull(p.status);
	ck_assert_ptr_null(json_object_get(p.status, "active"));
	ck_assert_int_eq(p.wake_ms, NOW + 3000);
	ck_cond(json_array_get(json_object_get(p.status, "conditions"), 0),
		"Suspended", "True", "JobSuspended", "Job suspended");
	json_object_update(json_object_get(j, "status"), p.status);
	json_decref(p.status);
	/* still within the delay: nothing to write */
	jobrunner_plan_job(j, NOW + 2000, 1000, 0, &p);
	ck_assert_ptr_null(p.status);
	ck_assert_int_eq(p.wake_ms, NOW + 3000);
	/* the delay is over: no pod */
	jobrunner_plan_job(j, NOW + 3000, 1000, 0, &p);
	ck_assert_ptr_nonnull(p.status);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status,
							    "active")), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status,
							    "ready")), 0);
	ck_assert_int_eq(p.wake_ms, 0);
	json_decref(p.status);
	json_decref(j);
}
END_TEST

START_TEST(plan_start_then_finish)
{
	json_t *j = t_json("{\"metadata\":{\"name\":\"j\"},\"spec\":"
			   "{\"suspend\":false,\"parallelism\":4,"
			   "\"completions\":3},\"status\":{}}");
	struct jobrunner_plan p;
	json_t *conds;

	/* start: effective parallelism min(4, 3 - 0) */
	jobrunner_plan_job(j, NOW + 250, 1000, 0, &p);
	ck_assert_int_eq(p.start_ms, NOW + 250);
	ck_assert_int_eq(p.wake_ms, NOW + 1250);
	ck_assert_str_eq(json_string_value(json_object_get(p.status,
		"startTime")), "2026-01-01T00:00:00Z");
	ck_assert_int_eq(json_integer_value(json_object_get(p.status,
							    "active")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status,
							    "ready")), 3);
	ck_assert_ptr_null(json_object_get(p.status, "conditions"));
	json_object_update(json_object_get(j, "status"), p.status);
	json_decref(p.status);
	/* steady: nothing to write; the hint keeps the exact start */
	jobrunner_plan_job(j, NOW + 900, 1000, NOW + 250, &p);
	ck_assert_ptr_null(p.status);
	ck_assert_int_eq(p.wake_ms, NOW + 1250);
	/* without the hint only the second is known */
	jobrunner_plan_job(j, NOW + 900, 1000, 0, &p);
	ck_assert_int_eq(p.wake_ms, NOW + 1000);
	/* finish */
	jobrunner_plan_job(j, NOW + 1250, 1000, NOW + 250, &p);
	ck_assert_ptr_nonnull(p.status);
	ck_assert_int_eq(p.wake_ms, 0);
	ck_assert(json_is_null(json_object_get(p.status, "active")));
	ck_assert_int_eq(json_integer_value(json_object_get(p.status,
							    "succeeded")), 3);
	ck_assert_int_eq(json_integer_value(json_object_get(p.status,
							    "ready")), 0);
	ck_assert_str_eq(json_string_value(json_object_get(p.status,
		"completionTime")), "2026-01-01T00:00:01Z");
	conds = json_object_get(p.status, "conditions");
	ck_assert_uint_eq(json_array_size(conds), 2);
	ck_cond(json_array_get(conds, 0), "SuccessCriteriaMet", "True",
		"CompletionsReached",
		"Reached expected number of succeeded pods");
	ck_cond(json_array_get(conds, 1), "Complete", "True",
		"CompletionsReached",
		"Reached expected number of succeeded pods");
	json_object_update(json_object_get(j, "status"), p.status);
	json_decref(p.status);
	/* finished Jobs are done */
	jobrunner_plan_job(j, NOW + 5000, 1000, 0, &p);
	ck_assert(p.done);
	ck_assert_ptr_null(p.status);
	json_decref(j);
}
END_TEST

START_TEST(plan_runtime_annotation_and_deletion)
{
	json_t *j = t_json("{\"metadata\":{\"name\":\"j\",\"annotations\":"
			   "{\"cueue.dev/runtime\":\"1m30s\"}},\"spec\":"
			   "{\"parallelism\":1},\"status\":{}}");
	struct jobrunner_plan p;

	jobrunner_plan_job(j, NOW, 1000, 0, &p);
	ck_assert_int_eq(p.wake_ms, NOW + 90000);
	json_decref(p.status);
	json_object_set_new(json_object_get(j, "metadata"),
			    "deletionTimestamp",
			    json_string("2026-01-01T00:00:00Z"));
	jobrunner_plan_job(j, NOW, 1000, 0, &p);
	ck_assert(p.done);
	json_decref(j);
}
END_TEST

/* ---- the plan with cueue.dev/ready-after and unready-after ---- */

/* A running Job (parallelism 2) with the annotations (JSON object text). */
static json_t *ready_job(const char *annotations)
{
	json_t *j = t_json("{\"metadata\":{\"name\":\"j\"},\"spec\":"
			   "{\"suspend\":false,\"parallelism\":2},"
			   "\"status\":{}}");

	json_object_set_new(json_object_get(j, "metadata"), "annotations",
			    t_json(annotations));
	return j;
}

/* status.key of a plan's patch; -1 when the patch leaves it alone. */
static json_int_t plan_int(const struct jobrunner_plan *p, const char *key)
{
	const json_t *v = json_object_get(p->status, key);

	return v ? json_integer_value(v) : -1;
}

/* Applies a plan's patch to j's status, as the store would. */
static void plan_apply(json_t *j, struct jobrunner_plan *p)
{
	const char *k;
	json_t *v;

	json_object_foreach(p->status, k, v)
		if (json_is_null(v))
			json_object_del(json_object_get(j, "status"), k);
		else
			json_object_set(json_object_get(j, "status"), k, v);
	json_decref(p->status);
	p->status = NULL;
}

/* ready-after 3s, runtime 5s: ready at 3 s, complete at 8 s. */
START_TEST(plan_ready_after)
{
	json_t *j = ready_job("{\"cueue.dev/ready-after\":\"3s\"}");
	struct jobrunner_plan p;

	jobrunner_plan_job(j, NOW, 5000, 0, &p);
	ck_assert_ptr_null(p.bad);
	ck_assert_int_eq(p.start_ms, NOW);
	ck_assert_int_eq(plan_int(&p, "active"), 2);
	ck_assert_int_eq(plan_int(&p, "ready"), 0);
	ck_assert_int_eq(p.wake_ms, NOW + 3000);
	plan_apply(j, &p);
	jobrunner_plan_job(j, NOW + 2999, 5000, NOW, &p);
	ck_assert_ptr_null(p.status);
	ck_assert_int_eq(p.wake_ms, NOW + 3000);
	jobrunner_plan_job(j, NOW + 3000, 5000, NOW, &p);
	ck_assert_int_eq(plan_int(&p, "ready"), 2);
	ck_assert_int_eq(plan_int(&p, "active"), -1);
	ck_assert_int_eq(p.wake_ms, NOW + 8000);
	plan_apply(j, &p);
	/* 5 s of ready time are spent at 8 s, not at 5 s */
	jobrunner_plan_job(j, NOW + 7999, 5000, NOW, &p);
	ck_assert_ptr_null(p.status);
	ck_assert_int_eq(p.wake_ms, NOW + 8000);
	jobrunner_plan_job(j, NOW + 8000, 5000, NOW, &p);
	ck_assert_int_eq(plan_int(&p, "succeeded"), 2);
	ck_assert_int_eq(plan_int(&p, "ready"), 0);
	ck_assert_int_eq(p.wake_ms, 0);
	json_decref(p.status);
	json_decref(j);
}
END_TEST

/* never: active, never ready, never finishes (nor fails); no timer. */
START_TEST(plan_ready_never)
{
	json_t *j = ready_job("{\"cueue.dev/ready-after\":\"never\","
			      "\"cueue.dev/fail\":\"true\"}");
	struct jobrunner_plan p;

	jobrunner_plan_job(j, NOW, 1000, 0, &p);
	ck_assert_ptr_null(p.bad);
	ck_assert_int_eq(plan_int(&p, "active"), 2);
	ck_assert_int_eq(plan_int(&p, "ready"), 0);
	ck_assert_int_eq(p.wake_ms, 0);
	plan_apply(j, &p);
	jobrunner_plan_job(j, NOW + 86400000, 1000, NOW, &p);
	ck_assert(!p.done);
	ck_assert_ptr_null(p.status);
	ck_assert_int_eq(p.wake_ms, 0);
	json_decref(j);
}
END_TEST

/* unready-after: ready for that long, then 0 for the rest of the run;
 * a suspend and resume starts a new run with fresh clocks. */
START_TEST(plan_unready_after)
{
	json_t *j = ready_job("{\"cueue.dev/ready-after\":\"1s\","
			      "\"cueue.dev/unready-after\":\"2s\"}");
	struct jobrunner_plan p;
	const int64_t later = NOW + 86400000;

	jobrunner_plan_job(j, NOW, 5000, 0, &p);
	ck_assert_int_eq(plan_int(&p, "ready"), 0);
	ck_assert_int_eq(p.wake_ms, NOW + 1000);
	plan_apply(j, &p);
	jobrunner_plan_job(j, NOW + 1000, 5000, NOW, &p);
	ck_assert_int_eq(plan_int(&p, "ready"), 2);
	ck_assert_int_eq(p.wake_ms, NOW + 3000);
	plan_apply(j, &p);
	jobrunner_plan_job(j, NOW + 3000, 5000, NOW, &p);
	ck_assert_int_eq(plan_int(&p, "ready"), 0);
	ck_assert_int_eq(plan_int(&p, "active"), -1);
	ck_assert_int_eq(p.wake_ms, 0);
	plan_apply(j, &p);
	/* 2 s of the 5 s were ready: it never finishes */
	jobrunner_plan_job(j, later, 5000, NOW, &p);
	ck_assert_ptr_null(p.status);
	ck_assert_int_eq(p.wake_ms, 0);
	/* suspended: no pods */
	json_object_set_new(json_object_get(j, "spec"), "suspend",
			    json_true());
	jobrunner_plan_job(j, later, 5000, NOW, &p);
	ck_assert(json_is_null(json_object_get(p.status, "active")));
	plan_apply(j, &p);
	ck_assert_int_eq(st_int(j, "ready"), 0);
	/* resumed: a new start, ready 0 again for 1 s */
	json_object_set_new(json_object_get(j, "spec"), "suspend",
			    json_false());
	jobrunner_plan_job(j, later + 500, 5000, NOW, &p);
	ck_assert_int_eq(p.start_ms, later + 500);
	ck_assert_int_eq(plan_int(&p, "active"), 2);
	ck_assert_int_eq(p.wake_ms, later + 1500);
	plan_apply(j, &p);
	ck_assert_int_eq(st_int(j, "ready"), 0);
	jobrunner_plan_job(j, later + 1500, 5000, later + 500, &p);
	ck_assert_int_eq(plan_int(&p, "ready"), 2);
	ck_assert_int_eq(p.wake_ms, later + 3500);
	json_decref(p.status);
	json_decref(j);
}
END_TEST

/* A ready window exactly as long as the runtime is enough (the finish
 * wins the tie); cueue.dev/fail fails at that moment instead. */
START_TEST(plan_unready_after_runtime_fits)
{
	json_t *j = ready_job("{\"cueue.dev/unready-after\":\"2s\","
			      "\"cueue.dev/runtime\":\"2s\","
			      "\"cueue.dev/fail\":\"true\"}");
	struct jobrunner_plan p;

	jobrunner_plan_job(j, NOW, 1000, 0, &p);
	ck_assert_int_eq(plan_int(&p, "ready"), 2);
	ck_assert_int_eq(p.wake_ms, NOW + 2000);
	plan_apply(j, &p);
	jobrunner_plan_job(j, NOW + 2000, 1000, NOW, &p);
	ck_assert_int_eq(plan_int(&p, "failed"), 2);
	ck_assert_int_eq(plan_int(&p, "ready"), 0);
	ck_assert_ptr_nonnull(cond_find_in(p.status, "Failed"));
	json_decref(p.status);
	json_decref(j);
}
END_TEST

/* Malformed values count as absent (ready = active from the start, the
 * default runtime), and the plan names the annotation for the log. */
static const struct {
	const char *key;
	const char *value;
} bad_ready[] = {
	{ JOBRUNNER_READY_AFTER_ANNOTATION, "soon" },
	{ JOBRUNNER_READY_AFTER_ANNOTATION, "-1s" },
	{ JOBRUNNER_READY_AFTER_ANNOTATION, "" },
	{ JOBRUNNER_READY_AFTER_ANNOTATION, "3" },
	{ JOBRUNNER_READY_AFTER_ANNOTATION, "Never" },
	{ JOBRUNNER_UNREADY_AFTER_ANNOTATION, "never" },
	{ JOBRUNNER_UNREADY_AFTER_ANNOTATION, "1x" },
	{ JOBRUNNER_UNREADY_AFTER_ANNOTATION, "99999999999h" },
};

START_TEST(plan_bad_ready_annotation)
{
	json_t *j = ready_job("{}");
	struct jobrunner_plan p;

	json_object_set_new(json_object_get(json_object_get(j, "metadata"),
					    "annotations"),
			    bad_ready[_i].key,
			    json_string(bad_ready[_i].value));
	jobrunner_plan_job(j, NOW, 1000, 0, &p);
	ck_assert_ptr_nonnull(p.bad);
	ck_assert_str_eq(p.bad, bad_ready[_i].key);
	ck_assert_int_eq(plan_int(&p, "active"), 2);
	ck_assert_int_eq(plan_int(&p, "ready"), 2);
	ck_assert_int_eq(p.wake_ms, NOW + 1000);
	plan_apply(j, &p);
	jobrunner_plan_job(j, NOW + 1000, 1000, NOW, &p);
	ck_assert_int_eq(plan_int(&p, "succeeded"), 2);
	json_decref(p.status);
	json_decref(j);
}
END_TEST

static const struct {
	const char *in;
	int rc;
	int64_t ms;
} durations[] = {
	{ "0", 0, 0 },
	{ "2s", 0, 2000 },
	{ "150ms", 0, 150 },
	{ "1m30s", 0, 90000 },
	{ "1.5s", 0, 1500 },
	{ "1h", 0, 3600000 },
	{ "2500us", 0, 2 },
	{ "", -1, 0 },
	{ "5", -1, 0 },
	{ "s", -1, 0 },
	{ "1x", -1, 0 },
	{ "-1s", -1, 0 },
};

START_TEST(parse_duration)
{
	int64_t ms = -7;
	int rc = jobrunner_parse_duration(durations[_i].in, &ms);

	ck_assert_msg(rc == durations[_i].rc, "%s: rc %d", durations[_i].in,
		      rc);
	if (rc == 0)
		ck_assert_int_eq(ms, durations[_i].ms);
}
END_TEST

/* ---- the runner ---- */

START_TEST(runs_to_complete)
{
	json_t *j;
	int64_t t0 = t_mono_ms(), t_active, t_done;

	make_job("quick", false, 1, 1, NULL);
	T_POLL_UNTIL(job_active("quick", 1), DEADLINE_MS);
	t_active = t_mono_ms();
	T_POLL_UNTIL(job_has("quick", "Complete", "True"), DEADLINE_MS);
	t_done = t_mono_ms();
	ck_assert_int_ge(t_done - t0, 150);
	ck_assert_int_lt(t_active - t0, t_done - t0);
	j = get_job("quick");
	ck_assert_int_eq(st_int(j, "succeeded"), 1);
	ck_assert_ptr_null(json_object_get(status_of(j), "active"));
	ck_assert_int_eq(st_int(j, "ready"), 0);
	ck_assert_ptr_nonnull(json_object_get(status_of(j), "startTime"));
	ck_assert_ptr_nonnull(json_object_get(status_of(j), "completionTime"));
	ck_cond(json_array_get(json_object_get(status_of(j), "conditions"), 0),
		"SuccessCriteriaMet", "True", "CompletionsReached",
		"Reached expected number of succeeded pods");
	ck_cond(json_array_get(json_object_get(status_of(j), "conditions"), 1),
		"Complete", "True", "CompletionsReached",
		"Reached expected number of succeeded pods");
	ck_assert_ptr_null(cond(j, "Suspended"));
	json_decref(j);
}
END_TEST

START_TEST(parallelism_and_completions)
{
	json_t *j;

	make_job("wide", false, 3, 5, "{\"cueue.dev/runtime\":\"300ms\"}");
	make_job("open", false, 2, -1, "{\"cueue.dev/runtime\":\"300ms\"}");
	make_job("narrow", false, 4, 2, "{\"cueue.dev/runtime\":\"300ms\"}");
	T_POLL_UNTIL(job_active("wide", 3) || job_has("wide", "Complete", "True"),
		     DEADLINE_MS);
	T_POLL_UNTIL(job_has("wide", "Complete", "True") &&
		     job_has("open", "Complete", "True") &&
		     job_has("narrow", "Complete", "True"), DEADLINE_MS);
	j = get_job("wide");
	ck_assert_int_eq(st_int(j, "succeeded"), 5);
	json_decref(j);
	j = get_job("open");
	ck_assert_int_eq(st_int(j, "succeeded"), 2);
	json_decref(j);
	j = get_job("narrow");
	ck_assert_int_eq(st_int(j, "succeeded"), 2);
	json_decref(j);
}
END_TEST

START_TEST(suspend_and_resume)
{
	json_t *j;
	char start1[TIMESTAMP_BUF];
	int64_t t_resume;

	make_job("pausable", false, 2, 2, "{\"cueue.dev/runtime\":\"900ms\"}");
	T_POLL_UNTIL(job_active("pausable", 2), DEADLINE_MS);
	j = get_job("pausable");
	snprintf(start1, sizeof(start1), "%s", json_string_value(
		json_object_get(status_of(j), "startTime")));
	json_decref(j);
	t_sleep_ms(300);
	patch_job("pausable", "", "{\"spec\":{\"suspend\":true}}");
	T_POLL_UNTIL(job_has("pausable", "Suspended", "True"), DEADLINE_MS);
	j = get_job("pausable");
	ck_assert_ptr_null(json_object_get(status_of(j), "active"));
	ck_assert_int_eq(st_int(j, "ready"), 0);
	ck_cond(cond(j, "Suspended"), "Suspended", "True", "JobSuspended",
		"Job suspended");
	ck_assert_str_eq(json_string_value(json_object_get(status_of(j),
		"startTime")), start1);
	json_decref(j);
	/* Suspended past the original finish time: still not complete. */
	t_sleep_ms(900);
	ck_assert(!job_has("pausable", "Complete", "True"));
	patch_job("pausable", "", "{\"spec\":{\"suspend\":false}}");
	t_resume = t_mono_ms();
	T_POLL_UNTIL(job_has("pausable", "Suspended", "False"), DEADLINE_MS);
	j = get_job("pausable");
	ck_cond(cond(j, "Suspended"), "Suspended", "False", "JobResumed",
		"Job resumed");
	ck_assert_int_eq(st_int(j, "active"), 2);
	ck_assert_str_ne(json_string_value(json_object_get(status_of(j),
		"startTime")), start1);
	json_decref(j);
	/* The clock restarted: not done 400 ms after the resume. */
	t_sleep_ms(400 - (int)(t_mono_ms() - t_resume) > 0
		 ? 400 - (int)(t_mono_ms() - t_resume) : 0);
	ck_assert(!job_has("pausable", "Complete", "True"));
	T_POLL_UNTIL(job_has("pausable", "Complete", "True"), DEADLINE_MS);
	ck_assert_int_ge(t_mono_ms() - t_resume, 800);
}
END_TEST

START_TEST(created_suspended)
{
	json_t *j;

	make_job("held", true, 1, 1, NULL);
	T_POLL_UNTIL(job_has("held", "Suspended", "True"), DEADLINE_MS);
	j = get_job("held");
	ck_assert_ptr_null(json_object_get(status_of(j), "startTime"));
	ck_assert_ptr_null(json_object_get(status_of(j), "active"));
	json_decref(j);
	t_sleep_ms(400);
	ck_assert(!job_has("held", "Complete", "True"));
	patch_job("held", "", "{\"spec\":{\"suspend\":false}}");
	T_POLL_UNTIL(job_has("held", "Complete", "True"), DEADLINE_MS);
	ck_assert(job_has("held", "Suspended", "False"));
}
END_TEST

START_TEST(failure_annotation)
{
	json_t *j, *conds;

	make_job("doomed", false, 2, 4, "{\"cueue.dev/fail\":\"true\","
		 "\"cueue.dev/runtime\":\"100ms\"}");
	T_POLL_UNTIL(job_has("doomed", "Failed", "True"), DEADLINE_MS);
	j = get_job("doomed");
	ck_assert_int_eq(st_int(j, "failed"), 2);
	ck_assert_ptr_null(json_object_get(status_of(j), "succeeded"));
	ck_assert_ptr_null(json_object_get(status_of(j), "active"));
	ck_assert_ptr_null(json_object_get(status_of(j), "completionTime"));
	conds = json_object_get(status_of(j), "conditions");
	ck_assert_uint_eq(json_array_size(conds), 2);
	ck_cond(json_array_get(conds, 0), "FailureTarget", "True",
		"BackoffLimitExceeded",
		"Job has reached the specified backoff limit");
	ck_cond(json_array_get(conds, 1), "Failed", "True",
		"BackoffLimitExceeded",
		"Job has reached the specified backoff limit");
	json_decref(j);
}
END_TEST

START_TEST(finished_jobs_left_alone)
{
	json_t *j;
	char rv[32];

	make_job("done", true, 1, 1, NULL);
	T_POLL_UNTIL(job_has("done", "Suspended", "True"), DEADLINE_MS);
	patch_job("done", "status", "{\"status\":{\"conditions\":[{\"type\":"
		  "\"Complete\",\"status\":\"True\",\"reason\":\"Manual\","
		  "\"message\":\"set by the test\"}]}}");
	patch_job("done", "", "{\"spec\":{\"suspend\":false}}");
	j = get_job("done");
	snprintf(rv, sizeof(rv), "%s", json_string_value(json_object_get(
		json_object_get(j, "metadata"), "resourceVersion")));
	json_decref(j);
	t_sleep_ms(500);
	j = get_job("done");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
		j, "metadata"), "resourceVersion")), rv);
	ck_assert_ptr_null(json_object_get(status_of(j), "startTime"));
	json_decref(j);
}
END_TEST

/* ---- the runner with cueue.dev/ready-after and unready-after ---- */

/* status.active and status.ready of a fresh read of the Job. */
static json_int_t job_count(const char *name, const char *key)
{
	json_t *j = get_job(name);
	json_int_t n = st_int(j, key);

	json_decref(j);
	return n;
}

/* The Job's states since the store RV rv0, from the store's event log
 * (so no state is missed between two polls): "active/ready" pairs, one
 * per change, space-separated, into buf. Returns buf. */
static const char *job_states(const char *name, uint64_t rv0, char *buf,
			      size_t size)
{
	json_int_t la = -1, lr = -1;
	uint64_t cur = rv0;
	struct store_event ev;
	size_t len = 0;

	buf[0] = '\0';
	while (store_next_event(api_store(S.api), &cur, "batch/jobs", 0,
				&ev) == STORE_OK) {
		json_int_t a = st_int(ev.obj, "active");
		json_int_t r = st_int(ev.obj, "ready");

		if (!strcmp(ev.name, name) && (a != la || r != lr)) {
			len += (size_t)snprintf(buf + len, size - len, "%s%d/%d",
						len ? " " : "", (int)a, (int)r);
			ck_assert_uint_lt(len, size);
			la = a;
			lr = r;
		}
		store_event_release(&ev);
	}
	return buf;
}

/* job_states into the caller's char states[]. */
#define T_STATES(name, rv0) job_states(name, rv0, states, sizeof(states))

START_TEST(plain_job_ready_is_active)
{
	uint64_t rv0 = store_rv(api_store(S.api));
	char states[256];

	make_job("plain", false, 3, 6, "{\"cueue.dev/runtime\":\"1h\"}");
	T_POLL_UNTIL(job_count("plain", "active") == 3, DEADLINE_MS);
	ck_assert_int_eq(job_count("plain", "ready"), 3);
	ck_assert_str_eq(T_STATES("plain", rv0), "0/0 3/3");
}
END_TEST

/* ready-after 600ms, runtime 300ms: active but not ready first, ready
 * no earlier than 600 ms after the create, complete no earlier than
 * 900 ms after it (ready time only). */
START_TEST(ready_after_delays_ready_and_runtime)
{
	uint64_t rv0 = store_rv(api_store(S.api));
	int64_t t0 = t_mono_ms();
	char states[256];

	make_job("late", false, 2, 2, "{\"cueue.dev/ready-after\":\"600ms\","
		 "\"cueue.dev/runtime\":\"300ms\"}");
	T_POLL_UNTIL(job_count("late", "ready") == 2 ||
		     job_has("late", "Complete", "True"), DEADLINE_MS);
	ck_assert_int_ge(t_mono_ms() - t0, 550);
	T_POLL_UNTIL(job_has("late", "Complete", "True"), DEADLINE_MS);
	ck_assert_int_ge(t_mono_ms() - t0, 850);
	ck_assert_str_eq(T_STATES("late", rv0), "0/0 2/0 2/2 0/0");
}
END_TEST

/* never: active, ready 0, and neither complete nor failed after many
 * runtimes. */
START_TEST(ready_never)
{
	uint64_t rv0 = store_rv(api_store(S.api));
	char states[256];

	make_job("stuck", false, 2, 2, "{\"cueue.dev/ready-after\":\"never\","
		 "\"cueue.dev/runtime\":\"100ms\"}");
	make_job("stuck-fail", false, 1, 1, "{\"cueue.dev/ready-after\":"
		 "\"never\",\"cueue.dev/runtime\":\"100ms\","
		 "\"cueue.dev/fail\":\"true\"}");
	T_POLL_UNTIL(job_count("stuck", "active") == 2 &&
		     job_count("stuck-fail", "active") == 1, DEADLINE_MS);
	t_sleep_ms(800);
	ck_assert(!job_has("stuck", "Complete", "True"));
	ck_assert(!job_has("stuck-fail", "Failed", "True"));
	ck_assert_str_eq(T_STATES("stuck", rv0), "0/0 2/0");
	ck_assert_str_eq(T_STATES("stuck-fail", rv0), "0/0 1/0");
}
END_TEST

/* unready-after: ready 0 -> active -> 0 again, then the Job stays
 * active and unready (no completion past the time the runtime would have
 * ended) until it is suspended. */
START_TEST(unready_after_drops_ready)
{
	uint64_t rv0 = store_rv(api_store(S.api));
	int64_t t0 = t_mono_ms();
	char states[256];

	make_job("lost", false, 2, 2, "{\"cueue.dev/ready-after\":\"200ms\","
		 "\"cueue.dev/unready-after\":\"300ms\","
		 "\"cueue.dev/runtime\":\"500ms\"}");
	T_POLL_UNTIL(!strcmp(T_STATES("lost", rv0), "0/0 2/0 2/2 2/0"),
		     DEADLINE_MS);
	ck_assert_int_ge(t_mono_ms() - t0, 450);
	/* Had it stayed ready, it would have completed at 700 ms. */
	t_sleep_ms(1000 - (t_mono_ms() - t0) > 0
		   ? 1000 - (t_mono_ms() - t0) : 0);
	ck_assert(!job_has("lost", "Complete", "True"));
	ck_assert_int_eq(job_count("lost", "active"), 2);
	ck_assert_int_eq(job_count("lost", "ready"), 0);
	patch_job("lost", "", "{\"spec\":{\"suspend\":true}}");
	T_POLL_UNTIL(job_has("lost", "Suspended", "True"), DEADLINE_MS);
	ck_assert_str_eq(T_STATES("lost", rv0), "0/0 2/0 2/2 2/0 0/0");
}
END_TEST

/* A suspend and an unsuspend start a new run: not ready again for
 * ready-after from the resume. */
START_TEST(rerun_restarts_ready_clock)
{
	uint64_t rv0 = store_rv(api_store(S.api)), rv1;
	int64_t t1;
	char states[256];

	make_job("again", false, 1, 1, "{\"cueue.dev/ready-after\":\"400ms\","
		 "\"cueue.dev/runtime\":\"1h\"}");
	T_POLL_UNTIL(job_count("again", "ready") == 1, DEADLINE_MS);
	patch_job("again", "", "{\"spec\":{\"suspend\":true}}");
	T_POLL_UNTIL(job_has("again", "Suspended", "True"), DEADLINE_MS);
	ck_assert_str_eq(T_STATES("again", rv0), "0/0 1/0 1/1 0/0");
	rv1 = store_rv(api_store(S.api));
	t1 = t_mono_ms();
	patch_job("again", "", "{\"spec\":{\"suspend\":false}}");
	T_POLL_UNTIL(job_count("again", "ready") == 1, DEADLINE_MS);
	ck_assert_int_ge(t_mono_ms() - t1, 350);
	ck_assert_str_eq(T_STATES("again", rv1), "0/0 1/0 1/1");
}
END_TEST

/* Malformed values: the devserver keeps going and the Job runs as a
 * plain one. */
START_TEST(bad_ready_annotations_ignored)
{
	uint64_t rv0 = store_rv(api_store(S.api));
	char states[256];

	make_job("odd", false, 1, 1, "{\"cueue.dev/ready-after\":\"soon\","
		 "\"cueue.dev/unready-after\":\"-1s\"}");
	T_POLL_UNTIL(job_has("odd", "Complete", "True"), DEADLINE_MS);
	ck_assert_str_eq(T_STATES("odd", rv0), "0/0 1/1 0/0");
}
END_TEST

/* Counts Jobs with Complete=True (store_visit callback). */
static void count_complete(void *ctx, const char *ns, const char *name,
			   const json_t *obj)
{
	size_t *n = ctx;

	(void)ns;
	(void)name;
	if (cond_is(obj, "Complete", "True"))
		(*n)++;
}

static size_t completed_jobs(void)
{
	size_t n = 0;

	store_visit(api_store(S.api), "batch/jobs", count_complete, &n);
	return n;
}

START_TEST(five_hundred_jobs)
{
	char name[32];
	int64_t t0 = t_mono_ms();

	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "bulk-%03d", i);
		make_job(name, false, 1, 1, "{\"cueue.dev/runtime\":\"100ms\"}");
	}
	T_POLL_UNTIL(completed_jobs() == 500, 15000);
	fprintf(stderr, "jobrunner: 500 jobs created and completed in "
		"%lld ms\n", (long long)(t_mono_ms() - t0));
}
END_TEST

START_TEST(restart_resumes_running_jobs)
{
	json_t *j;
	char start[TIMESTAMP_BUF];

	make_job("survivor", false, 1, 1, "{\"cueue.dev/runtime\":\"3s\"}");
	make_job("overdue", false, 1, 1, "{\"cueue.dev/runtime\":\"1s\"}");
	T_POLL_UNTIL(job_active("survivor", 1) && job_active("overdue", 1),
		     DEADLINE_MS);
	j = get_job("survivor");
	snprintf(start, sizeof(start), "%s", json_string_value(json_object_get(
		status_of(j), "startTime")));
	json_decref(j);
	close_all();
	/* Down long enough for "overdue" to pass its finish time. */
	t_sleep_ms(1100);
	open_api();
	ck_assert(job_active("survivor", 1));
	start_runner();
	T_POLL_UNTIL(job_has("overdue", "Complete", "True"), 1000);
	ck_assert(!job_has("survivor", "Complete", "True"));
	T_POLL_UNTIL(job_has("survivor", "Complete", "True"), DEADLINE_MS);
	j = get_job("survivor");
	ck_assert_str_eq(json_string_value(json_object_get(status_of(j),
		"startTime")), start);
	json_decref(j);
}
END_TEST

Suite *jobrunner_suite(void)
{
	Suite *s = suite_create("jobrunner");
	TCase *tc;

	tc = tcase_create("plan");
	tcase_add_test(tc, plan_suspended);
	tcase_add_test(tc, plan_stop_delay);
	tcase_add_test(tc, plan_start_then_finish);
	tcase_add_test(tc, plan_runtime_annotation_and_deletion);
	tcase_add_test(tc, plan_ready_after);
	tcase_add_test(tc, plan_ready_never);
	tcase_add_test(tc, plan_unready_after);
	tcase_add_test(tc, plan_unready_after_runtime_fits);
	tcase_add_loop_test(tc, plan_bad_ready_annotation, 0,
			    sizeof(bad_ready) / sizeof(bad_ready[0]));
	tcase_add_loop_test(tc, parse_duration, 0,
			    sizeof(durations) / sizeof(durations[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("lifecycle");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, runs_to_complete);
	tcase_add_test(tc, parallelism_and_completions);
	tcase_add_test(tc, suspend_and_resume);
	tcase_add_test(tc, created_suspended);
	tcase_add_test(tc, failure_annotation);
	tcase_add_test(tc, finished_jobs_left_alone);
	suite_add_tcase(s, tc);

	tc = tcase_create("ready");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, plain_job_ready_is_active);
	tcase_add_test(tc, ready_after_delays_ready_and_runtime);
	tcase_add_test(tc, ready_never);
	tcase_add_test(tc, unready_after_drops_ready);
	tcase_add_test(tc, rerun_restarts_ready_clock);
	tcase_add_test(tc, bad_ready_annotations_ignored);
	suite_add_tcase(s, tc);

	tc = tcase_create("scale");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, five_hundred_jobs);
	suite_add_tcase(s, tc);

	tc = tcase_create("restart");
	tcase_add_checked_fixture(tc, setup_dir, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, restart_resumes_running_jobs);
	suite_add_tcase(s, tc);
	return s;
}
