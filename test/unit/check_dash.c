/*
 * check_dash: the demo's counting (demo/dash.h) fed the event sequences
 * of its three informers: when the stream may start, which flavor an
 * admission counts on, and the GPUs in use per Job run. The Jobs and the
 * ResourceFlavors come from two informers in no order with each other,
 * so the cases feed them in the orders a loaded machine produces. The
 * preemptions come from a fourth, the Workloads: counted once per
 * eviction, with the preemptor resolved by UID whenever its Workload
 * shows up. waitForPodsReady comes from both: a never-ready gang's
 * Workload versions, as cueue-manager writes them, told as events, the
 * summary's lines and the end of the stream.
 */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "demo/dash.h"
#include "demo/feed.h"
#include "suites.h"
#include "test/support/support.h"

static const char *const products[] = { "H100", "A100" };
static const char *const flavor_names[] = { "h100", "a100" };

/* One Job of 2 pods x 2 GPUs, the first of its plan (suffix -001). */
static struct feed_job one_job = {
	.name = "research-exp-001", .team = 2, .klass = FEED_EXPERIMENT,
	.pods = 2, .gpus_per_pod = 2, .at_ms = 0, .runtime_ms = 1000,
};
static const struct feed one_job_plan = { &one_job, 1 };

/* ClusterQueue team-<team>: h100 then a100, 8 GPUs each, Active. */
static json_t *cq(const char *team)
{
	char name[32];
	json_t *o;

	snprintf(name, sizeof(name), "team-%s", team);
	o = json_pack(
		"{s:{s:s}, s:{s:[{s:[{s:s, s:[{s:s, s:i}]},"
		"                   {s:s, s:[{s:s, s:i}]}]}]},"
		" s:{s:[{s:s, s:s}]}}",
		"metadata", "name", name,
		"spec", "resourceGroups", "flavors",
		"name", "h100", "resources", "name", "nvidia.com/gpu",
		"nominalQuota", 8,
		"name", "a100", "resources", "name", "nvidia.com/gpu",
		"nominalQuota", 8,
		"status", "conditions", "type", "Active", "status", "True");
	ck_assert_ptr_nonnull(o);
	return o;
}

static void add_queues(struct dash *d)
{
	for (int t = 0; t < FEED_NTEAM; t++) {
		json_t *o = cq(feed_team_name(t));

		dash_cluster_queue(d, o, false, 1);
		json_decref(o);
	}
}

/* ResourceFlavor flavor_names[f] with the label of products[f]. */
static void add_flavor(struct dash *d, int f, bool deleted)
{
	json_t *o = json_pack("{s:{s:s}, s:{s:{s:s, s:s}}}", "metadata",
			      "name", flavor_names[f], "spec", "nodeLabels",
			      "gpu.present", "true", "gpu.product",
			      products[f]);

	dash_flavor(d, o, deleted);
	json_decref(o);
}

/*
 * A version of the Job: suspended or not, with the nodeSelector of
 * flavor f injected (-1: none), and a Complete condition when complete.
 * Fed as the demo's informer does: the event, then a sample.
 */
static void job(struct dash *d, bool suspend, int f, bool complete,
		bool deleted, int64_t now_ms)
{
	json_t *o = json_pack("{s:{s:s, s:s}, s:{s:b, s:{s:{}}}, s:{s:[]}}",
			      "metadata", "name", one_job.name, "namespace",
			      "team-research", "spec", "suspend", suspend,
			      "template", "spec", "status", "conditions");

	if (f >= 0)
		json_object_set_new(json_object_get(json_object_get(
			json_object_get(o, "spec"), "template"), "spec"),
			"nodeSelector", json_pack("{s:s, s:s}",
			"gpu.present", "true", "gpu.product", products[f]));
	if (complete)
		json_array_append_new(json_object_get(json_object_get(o,
			"status"), "conditions"), json_pack("{s:s, s:s}",
			"type", "Complete", "status", "True"));
	dash_job(d, o, deleted, now_ms);
	dash_sample(d);
	json_decref(o);
}

/* The summary of d, or one dashboard frame; new string. */
static char *text_of(struct dash *d, bool summary)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	if (summary)
		dash_summary(d, 5000, f);
	else
		dash_render(d, 5000, f);
	fclose(f);
	return buf;
}

#define ck_assert_has(text, needle) \
	ck_assert_msg(strstr((text), (needle)), "no '%s' in:\n%s", \
		      (needle), (text))

START_TEST(ready_waits_for_flavors)
{
	struct dash *d = dash_new(&one_job_plan, false, 0);

	ck_assert(!dash_ready(d));
	add_queues(d);
	/* the queues are Active, but a Job admitted now could not be told
	 * apart: no flavor's nodeLabels are known */
	ck_assert(!dash_ready(d));
	add_flavor(d, 0, false);
	ck_assert(!dash_ready(d));
	add_flavor(d, 1, false);
	ck_assert(dash_ready(d));
	add_flavor(d, 1, true);
	ck_assert(!dash_ready(d));
	dash_free(d);
}
END_TEST

/*
 * The CI failure: the Job's unsuspended version arrives before the
 * ResourceFlavors' list; its later versions (running, then Complete)
 * still carry the nodeSelector, so it counts on a100 both as an
 * admission and in use.
 */
START_TEST(flavor_known_after_admission)
{
	struct dash *d = dash_new(&one_job_plan, true, 0);
	char *t;

	add_queues(d);
	dash_start(d, 1);
	dash_job_created(d, 0, 10);
	job(d, true, -1, false, false, 10);
	job(d, false, 1, false, false, 20);
	add_flavor(d, 0, false);
	add_flavor(d, 1, false);
	dash_sample(d);
	job(d, false, 1, false, false, 30);
	t = text_of(d, false);
	ck_assert_has(t, "GPUs in use: 4/48");
	free(t);
	job(d, false, 1, true, false, 40);
	t = text_of(d, true);
	ck_assert_has(t, "1 admitted, 1 finished");
	ck_assert_has(t, "h100 0/24, a100 4/24");
	ck_assert_has(t, "admitted by flavor: h100 0, a100 1\n");
	ck_assert_msg(!strstr(t, "dash:"), "%s", t);
	free(t);
	dash_free(d);
}
END_TEST

/* Evicted from h100 and admitted again on a100: the admission counts on
 * its first flavor, the GPUs on each flavor while they run there. */
START_TEST(readmission_moves_in_use)
{
	struct dash *d = dash_new(&one_job_plan, true, 0);
	char *t;

	add_queues(d);
	add_flavor(d, 0, false);
	add_flavor(d, 1, false);
	dash_start(d, 1);
	dash_job_created(d, 0, 10);
	job(d, false, 0, false, false, 20);
	job(d, true, 0, false, false, 30);  /* evicted: suspended first */
	job(d, true, -1, false, false, 31); /* then restored */
	t = text_of(d, false);
	ck_assert_has(t, "GPUs in use: 0/48");
	free(t);
	job(d, false, 1, false, false, 40);
	job(d, false, 1, true, false, 50);
	t = text_of(d, true);
	ck_assert_has(t, "peak GPU utilisation: 4/48 GPUs");
	ck_assert_has(t, "h100 4/24, a100 4/24");
	ck_assert_has(t, "admitted by flavor: h100 1, a100 0\n");
	ck_assert_msg(!strstr(t, "dash:"), "%s", t);
	free(t);
	dash_free(d);
}
END_TEST

START_TEST(deletion_releases)
{
	struct dash *d = dash_new(&one_job_plan, true, 0);
	char *t;

	add_queues(d);
	add_flavor(d, 0, false);
	add_flavor(d, 1, false);
	dash_start(d, 1);
	dash_job_created(d, 0, 10);
	job(d, false, 1, false, false, 20);
	job(d, false, 1, false, true, 30);
	t = text_of(d, false);
	ck_assert_has(t, "GPUs in use: 0/48 (0%), peak 4");
	free(t);
	dash_free(d);
}
END_TEST

/* A victim (4 GPUs) and an inference Job that preempts it. */
static struct feed_job two_jobs[] = {
	{ .name = "research-exp-001", .team = 2, .klass = FEED_EXPERIMENT,
	  .pods = 1, .gpus_per_pod = 4, .at_ms = 0, .runtime_ms = 1000 },
	{ .name = "nlp-infer-002", .team = 0, .klass = FEED_INFERENCE,
	  .pods = 1, .gpus_per_pod = 2, .at_ms = 0, .runtime_ms = 1000 },
};
static const struct feed two_job_plan = { two_jobs, 2 };

#define MSG_RECLAIM "Preempted to accommodate a workload (UID: wl-p, " \
	"JobUID: job-p) due to reclamation within the cohort; preemptor " \
	"path: /ai-org/team-nlp; preemptee path: /ai-org/team-research"
#define MSG_WHILE_BORROWING "Previously: Preempted to accommodate a " \
	"workload (UID: wl-p, JobUID: job-p) due to reclamation within the " \
	"cohort while borrowing; preemptor path: /ai-org/team-nlp; " \
	"preemptee path: /ai-org/team-research"

/*
 * The Workload of planned Job job (uid wl_uid), owned by it: admitted
 * with gpus GPUs (-1: no admission), preempted npre times so far, with
 * a Preempted condition (status, reason, message) when msg is set.
 */
static void workload(struct dash *d, size_t job, const char *wl_uid,
		     int gpus, int npre, const char *status,
		     const char *reason, const char *msg, int64_t now_ms)
{
	json_t *o = json_pack(
		"{s:{s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}, s:{s:[]}}",
		"metadata", "name", "wl", "namespace", "team-x", "uid", wl_uid,
		"ownerReferences", "kind", "Job", "name",
		two_jobs[job].name, "uid", "", "status", "conditions");
	json_t *st = json_object_get(o, "status");

	if (gpus >= 0)
		json_object_set_new(st, "admission", json_pack(
			"{s:s, s:[{s:s, s:{s:i}}]}", "clusterQueue", "cq",
			"podSetAssignments", "name", "main", "resourceUsage",
			"nvidia.com/gpu", gpus));
	if (npre)
		json_object_set_new(st, "schedulingStats", json_pack(
			"{s:[{s:s, s:s, s:i}]}", "evictions", "reason",
			"Preempted", "underlyingCause", "", "count", npre));
	if (msg)
		json_array_append_new(json_object_get(st, "conditions"),
				      json_pack("{s:s, s:s, s:s, s:s}", "type",
						"Preempted", "status", status,
						"reason", reason, "message",
						msg));
	dash_workload(d, o, false, now_ms);
	json_decref(o);
}

/* A version of planned Job job: running or not, Complete or not. */
static void job2(struct dash *d, size_t job, bool running, bool complete,
		 int64_t now_ms)
{
	json_t *o = json_pack("{s:{s:s, s:s}, s:{s:b, s:{s:{}}}, s:{s:[]}}",
			      "metadata", "name", two_jobs[job].name, "uid",
			      "", "spec", "suspend", !running && !complete,
			      "template", "spec", "status", "conditions");

	if (running || complete)
		json_object_set_new(json_object_get(json_object_get(
			json_object_get(o, "spec"), "template"), "spec"),
			"nodeSelector", json_pack("{s:s, s:s}",
			"gpu.present", "true", "gpu.product", products[1]));
	if (complete)
		json_array_append_new(json_object_get(json_object_get(o,
			"status"), "conditions"), json_pack("{s:s, s:s}",
			"type", "Complete", "status", "True"));
	dash_job(d, o, false, now_ms);
	dash_sample(d);
	json_decref(o);
}

/* The next plain frame (preemption lines first); new string. */
static char *plain_of(struct dash *d)
{
	return text_of(d, false);
}

/*
 * One preemption seen on the victim's Workload, its preemptor's
 * Workload arriving only later: the row names the UID until then, then
 * the Job. Versions that repeat the count add nothing; a second
 * eviction, seen only after the new reservation flipped Preempted to
 * False, is counted with the reason its message gives and the GPUs of
 * the plan (no admission left to read).
 */
START_TEST(preemption_rows)
{
	struct dash *d = dash_new(&two_job_plan, true, 0);
	char *t;

	add_queues(d);
	add_flavor(d, 0, false);
	add_flavor(d, 1, false);
	dash_start(d, 1000);
	workload(d, 0, "wl-v", -1, 0, NULL, NULL, NULL, 1100);
	workload(d, 0, "wl-v", 4, 0, NULL, NULL, NULL, 1200);
	workload(d, 0, "wl-v", 4, 1, "True", "InCohortReclamation",
		 MSG_RECLAIM, 3500);
	t = text_of(d, false);
	ck_assert_has(t, "PREEMPTIONS: 1 (InClusterQueue 0, "
		      "InCohortReclamation 1, InCohortReclaimWhileBorrowing "
		      "0)");
	ck_assert_has(t, "   2.5s research-exp-001   workload wl-p      "
		      "InCohortReclamation           4");
	free(t);
	/* the preemptor's Workload; the same victim version again */
	workload(d, 1, "wl-p", -1, 0, NULL, NULL, NULL, 3600);
	workload(d, 0, "wl-v", 4, 1, "True", "InCohortReclamation",
		 MSG_RECLAIM, 3700);
	t = text_of(d, false);
	ck_assert_has(t, "PREEMPTIONS: 1 (");
	ck_assert_has(t, "   2.5s research-exp-001   nlp-infer-002      "
		      "InCohortReclamation           4");
	free(t);
	workload(d, 0, "wl-v", 2, 2, "False", "QuotaReserved",
		 MSG_WHILE_BORROWING, 6000);
	t = text_of(d, false);
	ck_assert_has(t, "PREEMPTIONS: 2 (InClusterQueue 0, "
		      "InCohortReclamation 1, InCohortReclaimWhileBorrowing "
		      "1)");
	ck_assert_has(t, "   5.0s research-exp-001   nlp-infer-002      "
		      "InCohortReclaimWhileBorrowing 2");
	free(t);
	dash_free(d);
}
END_TEST

/* Without a terminal each preemption is one line, printed once. */
START_TEST(preemption_plain_lines)
{
	struct dash *d = dash_new(&two_job_plan, false, 0);
	char *t;

	add_queues(d);
	dash_start(d, 1000);
	workload(d, 1, "wl-p", -1, 0, NULL, NULL, NULL, 1100);
	workload(d, 0, "wl-v", 4, 1, "True", "InClusterQueue",
		 "Preempted to accommodate a workload (UID: wl-p, JobUID: "
		 "job-p) due to prioritization in the ClusterQueue", 2000);
	t = plain_of(d);
	ck_assert_has(t, "[t+  1.0s] preempted research-exp-001 (4 GPUs "
		      "freed) for nlp-infer-002: InClusterQueue\n[t+");
	free(t);
	t = plain_of(d);
	ck_assert_msg(!strstr(t, "preempted"), "%s", t);
	free(t);
	dash_free(d);
}
END_TEST

/*
 * The summary: preemptions by reason and GPUs freed, the victim re-run
 * to completion, and the inference wait of the Job that got in by
 * preempting.
 */
START_TEST(preemption_summary)
{
	struct dash *d = dash_new(&two_job_plan, true, 0);
	char *t;

	add_queues(d);
	add_flavor(d, 0, false);
	add_flavor(d, 1, false);
	dash_start(d, 1);
	dash_job_created(d, 0, 10);
	dash_job_created(d, 1, 1000);
	job2(d, 0, true, false, 20);
	workload(d, 1, "wl-p", -1, 0, NULL, NULL, NULL, 1100);
	workload(d, 0, "wl-v", 4, 1, "True", "InCohortReclamation",
		 MSG_RECLAIM, 1200);
	t = text_of(d, true);
	ck_assert_has(t, "preempted jobs: 1, 0 re-admitted and finished\n");
	free(t);
	job2(d, 0, false, false, 1300);  /* suspended */
	job2(d, 1, true, false, 2500);   /* the preemptor, 1.5 s later */
	job2(d, 0, true, false, 3000);   /* re-admitted */
	job2(d, 0, false, true, 4000);
	job2(d, 1, false, true, 4000);
	t = text_of(d, true);
	ck_assert_has(t, "preemptions: 1 (InClusterQueue 0, "
		      "InCohortReclamation 1, InCohortReclaimWhileBorrowing "
		      "0), 4 GPUs freed\n");
	ck_assert_has(t, "preempted jobs: 1, 1 re-admitted and finished\n");
	ck_assert_has(t, "prod-inference admitted by preempting: 1 jobs, "
		      "wait mean 1.50s, max 1.50s (without preempting: 0 "
		      "jobs, mean 0.00s)\n");
	free(t);
	dash_free(d);
}
END_TEST

/* A gang whose pods are never ready, and a Job ready half a second
 * after its admission. */
static struct feed_job gang_jobs[] = {
	{ .name = "research-gang-001", .team = 2, .klass = FEED_TRAINING,
	  .pods = 2, .gpus_per_pod = 1, .at_ms = 0, .runtime_ms = 1000,
	  .never_ready = true },
	{ .name = "nlp-infer-002", .team = 0, .klass = FEED_INFERENCE,
	  .pods = 1, .gpus_per_pod = 2, .at_ms = 0, .runtime_ms = 1000 },
};
static const struct feed gang_plan = { gang_jobs, 2 };

/* A version of planned Job job of gang_jobs: running or not, with ready
 * pods (status.ready), Complete or not. */
static void gjob(struct dash *d, size_t job, bool running, int ready,
		 bool complete, int64_t now_ms)
{
	json_t *o = json_pack("{s:{s:s, s:s}, s:{s:b, s:{s:{}}},"
			      " s:{s:i, s:i, s:[]}}",
			      "metadata", "name", gang_jobs[job].name, "uid",
			      "", "spec", "suspend", !running && !complete,
			      "template", "spec", "status", "ready", ready,
			      "succeeded", complete ? gang_jobs[job].pods : 0,
			      "conditions");

	if (running || complete)
		json_object_set_new(json_object_get(json_object_get(
			json_object_get(o, "spec"), "template"), "spec"),
			"nodeSelector", json_pack("{s:s, s:s}",
			"gpu.present", "true", "gpu.product", products[0]));
	if (complete)
		json_array_append_new(json_object_get(json_object_get(o,
			"status"), "conditions"), json_pack("{s:s, s:s}",
			"type", "Complete", "status", "True"));
	dash_job(d, o, false, now_ms);
	dash_sample(d);
	json_decref(o);
}

/*
 * A version of the gang's Workload: spec.active; conds, a string of
 * "Type=Status/Reason@HH:MM:SS" separated by spaces (the times on one
 * day); requeueState.count (-1: no requeueState) and requeueAt (NULL:
 * none); the evictions PodsReadyTimeout and Deactivated
 * (RequeuingLimitExceeded) counted so far.
 */
static void gwl(struct dash *d, bool active, const char *conds, int count,
		const char *requeue_at, int timeouts, int deact,
		int64_t now_ms)
{
	json_t *o = json_pack(
		"{s:{s:s, s:s, s:s, s:[{s:s, s:s, s:s}]}, s:{s:b},"
		" s:{s:[], s:{s:[]}}}",
		"metadata", "name", "job-research-gang-001-1a2b3",
		"namespace", "team-research", "uid", "wl-g",
		"ownerReferences", "kind", "Job", "name", gang_jobs[0].name,
		"uid", "", "spec", "active", active, "status", "conditions",
		"schedulingStats", "evictions");
	json_t *st = json_object_get(o, "status");
	json_t *ev = json_object_get(json_object_get(st, "schedulingStats"),
				     "evictions");
	char *list = xstrdup(conds), *save = NULL;

	for (char *c = strtok_r(list, " ", &save); c;
	     c = strtok_r(NULL, " ", &save)) {
		char type[40], status[8], reason[64], at[16], ltt[32];

		ck_assert_int_eq(sscanf(c, "%39[^=]=%7[^/]/%63[^@]@%15s",
					type, status, reason, at), 4);
		snprintf(ltt, sizeof(ltt), "2026-12-02T%sZ", at);
		json_array_append_new(json_object_get(st, "conditions"),
			json_pack("{s:s, s:s, s:s, s:s}", "type", type,
				  "status", status, "reason", reason,
				  "lastTransitionTime", ltt));
	}
	free(list);
	if (count >= 0) {
		json_t *rq = json_pack("{s:i}", "count", count);

		if (requeue_at)
			json_object_set_new(rq, "requeueAt",
					    json_sprintf("2026-12-02T%sZ",
							 requeue_at));
		json_object_set_new(st, "requeueState", rq);
	}
	if (timeouts)
		json_array_append_new(ev, json_pack("{s:s, s:s, s:i}",
			"reason", "PodsReadyTimeout", "underlyingCause",
			"WaitForStart", "count", timeouts));
	if (deact)
		json_array_append_new(ev, json_pack("{s:s, s:s, s:i}",
			"reason", "Deactivated", "underlyingCause",
			"RequeuingLimitExceeded", "count", deact));
	dash_workload(d, o, false, now_ms);
	json_decref(o);
}

#define ADM1 "QuotaReserved=True/QuotaReserved@04:30:40 " \
	"Admitted=True/Admitted@04:30:40 PodsReady=False/WaitForStart@04:30:40"
#define OUT1 "QuotaReserved=False/Pending@04:30:45 " \
	"Admitted=False/NoReservation@04:30:45 " \
	"PodsReady=False/WaitForStart@04:30:40 " \
	"Evicted=True/PodsReadyTimeout@04:30:45"
#define ADM2 "QuotaReserved=True/QuotaReserved@04:30:47 " \
	"Admitted=True/Admitted@04:30:47 " \
	"PodsReady=False/WaitForStart@04:30:40 " \
	"Requeued=True/BackoffFinished@04:30:47"
#define ADM3 "QuotaReserved=True/QuotaReserved@04:30:56 " \
	"Admitted=True/Admitted@04:30:56 " \
	"PodsReady=False/WaitForStart@04:30:40 " \
	"Evicted=False/QuotaReserved@04:30:56 " \
	"Requeued=True/BackoffFinished@04:30:56"

/*
 * The gang's story as cueue-manager writes it (timeout 5s, backoff base
 * 2s, backoffLimitCount 2): admitted, timed out (requeueState 1, at
 * +2s), backoff over, admitted, timed out (2, +4s) while Requeued still
 * says BackoffFinished from the first backoff (not a second end of
 * backoff), backoff over, admitted, DeactivationTarget with count 2,
 * spec.active=false, Evicted DeactivatedDueToRequeuingLimitExceeded
 * with the requeueState cleared; the stream has drained only once its
 * Job is seen suspended, and not any more once it is reactivated.
 */
START_TEST(never_ready_gang)
{
	struct dash *d = dash_new(&gang_plan, false, 0);
	char *t;

	add_queues(d);
	add_flavor(d, 0, false);
	add_flavor(d, 1, false);
	dash_start(d, 1000);
	dash_job_created(d, 0, 1000);
	dash_job_created(d, 1, 1000);
	gjob(d, 1, true, 0, false, 1100);
	gjob(d, 1, true, 1, false, 1600);
	gjob(d, 0, true, 0, false, 1100);
	gwl(d, true, ADM1, -1, NULL, 0, 0, 1100);
	gwl(d, true, ADM1 " Evicted=True/PodsReadyTimeout@04:30:45", 1,
	    "04:30:47", 1, 0, 6000);
	gjob(d, 0, false, 0, false, 6100);
	gwl(d, true, OUT1 " Requeued=False/PodsReadyTimeout@04:30:45", 1,
	    "04:30:47", 1, 0, 6200);
	gwl(d, true, OUT1 " Requeued=True/BackoffFinished@04:30:47", 1, NULL,
	    1, 0, 8000);
	gjob(d, 0, true, 0, false, 8100);
	gwl(d, true, ADM2 " Evicted=False/QuotaReserved@04:30:47", 1, NULL,
	    1, 0, 8100);
	t = plain_of(d);
	ck_assert_has(t, "[t+  0.1s] research-gang-001 admitted (admission "
		      "1), holds 2 GPUs of h100, 0/2 pods ready\n"
		      "[t+  5.0s] research-gang-001 PodsReady timeout: 0/2 "
		      "pods ready 5s after admission: evicted "
		      "(PodsReadyTimeout), requeueState.count 1, requeueAt "
		      "04:30:47Z (backoff 2s)\n"
		      "[t+  7.0s] research-gang-001 backoff over (Requeued "
		      "BackoffFinished): queued again\n"
		      "[t+  7.1s] research-gang-001 admitted (admission 2), "
		      "holds 2 GPUs of h100, 0/2 pods ready\n[t+");
	free(t);
	/* timed out again: Requeued still True from the last backoff */
	gwl(d, true, ADM2 " Evicted=True/PodsReadyTimeout@04:30:52", 2,
	    "04:30:56", 2, 0, 13000);
	t = plain_of(d);
	ck_assert_has(t, "[t+ 12.0s] research-gang-001 PodsReady timeout: "
		      "0/2 pods ready 5s after admission: evicted "
		      "(PodsReadyTimeout), requeueState.count 2, requeueAt "
		      "04:30:56Z (backoff 4s)\n");
	ck_assert_msg(!strstr(t, "backoff over"), "%s", t);
	free(t);
	gjob(d, 0, false, 0, false, 13100);
	gwl(d, true, OUT1 " Requeued=True/BackoffFinished@04:30:56", 2, NULL,
	    2, 0, 17000);
	gjob(d, 0, true, 0, false, 17100);
	gwl(d, true, ADM3, 2, NULL, 2, 0, 17100);
	gjob(d, 1, true, 0, true, 18000);
	gwl(d, true, ADM3 " DeactivationTarget=True/RequeuingLimitExceeded"
	    "@04:31:01", 2, NULL, 2, 0, 22000);
	gwl(d, false, ADM3 " DeactivationTarget=True/RequeuingLimitExceeded"
	    "@04:31:01", 2, NULL, 2, 0, 22010);
	ck_assert(!dash_drained(d));
	gwl(d, false, "QuotaReserved=True/QuotaReserved@04:30:56 "
	    "Admitted=True/Admitted@04:30:56 "
	    "Evicted=True/DeactivatedDueToRequeuingLimitExceeded@04:31:01",
	    -1, NULL, 2, 1, 22020);
	/* its Job still runs: not over yet */
	ck_assert(!dash_drained(d));
	gjob(d, 0, false, 0, false, 22100);
	ck_assert(dash_drained(d));
	t = plain_of(d);
	ck_assert_has(t, "[t+ 21.0s] research-gang-001 deactivated: "
		      "requeueState.count 2 reached backoffLimitCount, "
		      "spec.active=false, Evicted "
		      "DeactivatedDueToRequeuingLimitExceeded\n");
	free(t);
	t = text_of(d, true);
	ck_assert_has(t, "jobs: 2 planned, 2 created, 2 admitted, 1 "
		      "finished, 0 failed, 1 deactivated, in 4.0s\n");
	ck_assert_has(t, "pods ready after admission: 1 jobs, mean 0.50s, "
		      "max 0.50s; PodsReady timeouts: research-gang-001 "
		      "(3)\n");
	ck_assert_has(t, "\ngang research-gang-001: never ready, timed out 3 "
		      "times, deactivated after backoffLimitCount=2\n"
		      "  0 of 2 pods ready in 3 admissions, 2 GPUs held "
		      "15.0s in all; evicted PodsReadyTimeout 2 times, "
		      "requeued after backoffs of 2s, 4s; spec.active=false, "
		      "Evicted DeactivatedDueToRequeuingLimitExceeded at "
		      "t+21.0s\n");
	free(t);
	/* reactivated by hand: it may run again */
	gwl(d, true, "Evicted=True/DeactivatedDueToRequeuingLimitExceeded"
	    "@04:31:01", -1, NULL, 2, 1, 30000);
	ck_assert(!dash_drained(d));
	dash_free(d);
}
END_TEST

/* The dashboard's block: the latest events, briefly, newest first. */
START_TEST(never_ready_gang_rows)
{
	struct dash *d = dash_new(&gang_plan, true, 0);
	char *t;

	add_queues(d);
	add_flavor(d, 0, false);
	add_flavor(d, 1, false);
	dash_start(d, 1000);
	dash_job_created(d, 0, 1000);
	gjob(d, 0, true, 0, false, 1100);
	gwl(d, true, ADM1, -1, NULL, 0, 0, 1100);
	gwl(d, true, ADM1 " Evicted=True/PodsReadyTimeout@04:30:45", 1,
	    "04:30:47", 1, 0, 6000);
	t = text_of(d, false);
	ck_assert_has(t, "PODS READY: 0 jobs, mean 0.00s after admission; "
		      "timed out: research-gang-001 (1)");
	ck_assert_has(t, "   5.0s research-gang-001  timed out (5s): "
		      "evicted; requeueState.count 1, requeueAt 04:30:47Z\033");
	ck_assert_has(t, "   0.1s research-gang-001  admitted (admission 1), "
		      "holds 2 GPUs of h100, 0/2 pods ready\033");
	ck_assert_has(t, " training       2 (2x1) h100    0.10s    0/2\033");
	free(t);
	dash_free(d);
}
END_TEST

/* The gang of the scenes: never ready, on research's quota, at 12 s. */
START_TEST(plan_has_never_ready_gang)
{
	struct feed s = { 0 };
	struct feed_opts o = { .jobs = 21, .span_ms = 14000,
			       .runtime_scale = 1, .seed = 1,
			       .run_id = "r" };
	json_t *j;
	size_t gangs = 0;

	feed_plan(&s, &o);
	for (size_t i = 0; i < s.n; i++)
		gangs += s.v[i].never_ready;
	ck_assert_uint_eq(gangs, 1);
	ck_assert_str_eq(s.v[17].name, "research-gang-018");
	ck_assert(s.v[17].never_ready && s.v[17].pods > 1);
	ck_assert_int_eq(s.v[17].at_ms, 12000);
	j = feed_job_json(&s.v[17], "r");
	ck_assert_str_eq(JX_STR(j, "metadata", "annotations",
				"cueue.dev/ready-after"), "never");
	ck_assert_int_eq(json_integer_value(JX_DIG(j, "spec",
						   "parallelism")), 2);
	json_decref(j);
	j = feed_job_json(&s.v[16], "r");
	ck_assert_ptr_null(JX_STR(j, "metadata", "annotations",
				  "cueue.dev/ready-after"));
	json_decref(j);
	feed_release(&s);
}
END_TEST

/*
 * A Workload preempted right after its admission, before its Job was
 * unsuspended (the never-ready gang of the scenes takes a research
 * experiment's quota so), then admitted again and finished: one run,
 * one preemption, and still re-admitted and finished.
 */
START_TEST(preempted_before_running)
{
	struct dash *d = dash_new(&two_job_plan, true, 0);
	char *t;

	add_queues(d);
	add_flavor(d, 0, false);
	add_flavor(d, 1, false);
	dash_start(d, 1);
	dash_job_created(d, 0, 10);
	job2(d, 0, false, false, 20);
	workload(d, 0, "wl-v", 4, 0, NULL, NULL, NULL, 30);
	workload(d, 0, "wl-v", 4, 1, "True", "InClusterQueue",
		 "Preempted to accommodate a workload (UID: wl-p, JobUID: "
		 "job-p) due to prioritization in the ClusterQueue", 40);
	job2(d, 0, true, false, 3000);
	job2(d, 0, false, true, 4000);
	t = text_of(d, true);
	ck_assert_has(t, "preempted jobs: 1, 1 re-admitted and finished\n");
	free(t);
	dash_free(d);
}
END_TEST

Suite *dash_suite(void)
{
	Suite *s = suite_create("dash");
	TCase *tc = tcase_create("start-gate");

	tcase_add_test(tc, ready_waits_for_flavors);
	suite_add_tcase(s, tc);
	tc = tcase_create("in-use-per-run");
	tcase_add_test(tc, flavor_known_after_admission);
	tcase_add_test(tc, readmission_moves_in_use);
	tcase_add_test(tc, deletion_releases);
	suite_add_tcase(s, tc);
	tc = tcase_create("preemptions");
	tcase_add_test(tc, preemption_rows);
	tcase_add_test(tc, preemption_plain_lines);
	tcase_add_test(tc, preemption_summary);
	tcase_add_test(tc, preempted_before_running);
	suite_add_tcase(s, tc);
	tc = tcase_create("wait-for-pods-ready");
	tcase_add_test(tc, never_ready_gang);
	tcase_add_test(tc, never_ready_gang_rows);
	tcase_add_test(tc, plan_has_never_ready_gang);
	suite_add_tcase(s, tc);
	return s;
}
