/*
 * Suite "jobs": the batch/v1 Job integration (controller/jobs.h) with
 * the manager in-process against the devserver in-process (v1beta2 CRDs
 * preloaded, garbage collector and job runner running, a short
 * --job-runtime), driven through the one event loop:
 *  - a suspended labelled Job -> its Workload (name, owner, pod set,
 *    priority from a WorkloadPriorityClass, labels, finalizer) ->
 *    admitted -> the Job unsuspended with the flavor's nodeSelector,
 *    tolerations and the podset label -> the runner completes it ->
 *    Workload Finished/Succeeded, finalizer gone, quota released -> the
 *    next pending Job admitted and run;
 *  - a Job over the quota stays suspended with its Workload pending;
 *  - partial admission (job-min-parallelism) sets parallelism;
 *  - deleting a Job removes its Workload;
 *  - a failing Job -> Finished/Failed;
 *  - a running Job without a Workload is stopped first (Kueue's rule);
 *  - a restart of manager + jobs creates no duplicate Workload and does
 *    not unsuspend twice;
 *  - Evicted=True (written by hand until preemption lands): the Job is
 *    suspended, its template and parallelism restored, the reservation
 *    cleared with Requeued;
 *  - a missing WorkloadPriorityClass holds the Workload back until it
 *    exists; a pod priorityClassName takes its PriorityClass's value;
 *    manageJobsWithoutQueueName takes unlabelled Jobs;
 *  - managedJobsNamespaceSelector: without a queue name only Jobs of
 *    matching namespaces are managed; with ns_selector_always (HEAD)
 *    labelled ones of other namespaces are ignored too.
 * Objects are written with the devserver's internal API.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "controller/jobs.h"
#include "controller/kube.h"
#include "controller/loop.h"
#include "controller/manager.h"
#include "controller/metrics.h"
#include "inproc.h"
#include "model/jobwl.h"
#include "model/selector.h"
#include "suites.h"
#include "test/support/support.h"

static const char *val_or(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

/* Whether an Event with this reason was recorded for object name. */
static bool has_event(const char *ns, const char *name, const char *reason)
{
	json_t *list = inp_list("events", ns);
	const json_t *ev;
	size_t i;
	bool ok = false;

	json_array_foreach(list, i, ev)
		ok |= !strcmp(val_or(inp_jpath(ev, "involvedObject.name")),
			      name) &&
		      !strcmp(val_or(inp_jpath(ev, "reason")), reason);
	json_decref(list);
	return ok;
}

/*
 * Checks the one Event with this reason on Job name: posted by the jobs
 * recorder (events.h) as Kueue's job controller does, Normal, about the
 * Job (its uid), with exactly this message.
 */
static void check_event(const char *ns, const char *name, const char *reason,
			const char *message)
{
	json_t *list = inp_list("events", ns);
	const json_t *ev;
	char *uid = xstrdup(inp_val("jobs", ns, name, "metadata.uid"));
	size_t i;
	int n = 0;

	json_array_foreach(list, i, ev) {
		if (strcmp(val_or(inp_jpath(ev, "involvedObject.name")),
			   name) ||
		    strcmp(val_or(inp_jpath(ev, "reason")), reason))
			continue;
		n++;
		ck_assert_str_eq(val_or(inp_jpath(ev, "message")), message);
		ck_assert_str_eq(val_or(inp_jpath(ev, "type")), "Normal");
		ck_assert_str_eq(val_or(inp_jpath(ev,
						  "involvedObject.apiVersion")),
				 "batch/v1");
		ck_assert_str_eq(val_or(inp_jpath(ev, "involvedObject.kind")),
				 "Job");
		ck_assert_str_eq(val_or(inp_jpath(ev, "involvedObject.uid")),
				 uid);
		ck_assert_str_eq(val_or(inp_jpath(ev, "source.component")),
				 "batch/job-kueue-controller");
		ck_assert_str_eq(val_or(inp_jpath(ev, "reportingComponent")),
				 "batch/job-kueue-controller");
	}
	ck_assert_msg(n == 1, "%d %s events on %s", n, reason, name);
	free(uid);
	json_decref(list);
}

/* ---- manager + jobs under test ---- */

static struct manager *M;
static struct jobs *J;
static struct jobs_opts JO;
static struct metrics *REG; /* JO.registry */

/* cueue_events_total{component="batch/job-kueue-controller",result} */
static double events_total(const char *result)
{
	struct metric_family *f = metrics_find(REG, "cueue_events_total");
	struct metric *c = f ? metric_family_find(
		f, METRIC_VALUES("batch/job-kueue-controller", result)) : NULL;

	return c ? metric_value(c) : -1;
}

static void mgr_start(void)
{
	struct manager_opts mo = { .status_interval_ms = 20 };

	M = manager_new(inp_kube(), &mo);
	J = jobs_new(inp_kube(), M, &JO);
}

static void mgr_stop(void)
{
	jobs_free(J);
	J = NULL;
	manager_free(M);
	M = NULL;
}

static void setup(void)
{
	memset(&JO, 0, sizeof(JO));
	JO.retry_ms = 100;
	REG = metrics_new();
	JO.registry = REG;
	inp_start(&(struct inp_opts){ .jobs = true });
}

static void teardown(void)
{
	mgr_stop();
	metrics_free(REG);
	REG = NULL;
	inp_stop();
}

/* ---- fixtures ---- */

static void mk_queues(const char *cpu)
{
	inp_create("resourceflavors", NULL,
		   "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		   "\"kind\":\"ResourceFlavor\",\"metadata\":{\"name\":\"rf\"},"
		   "\"spec\":{\"nodeLabels\":{\"pool\":\"a\"},"
		   "\"tolerations\":[{\"key\":\"dedicated\",\"operator\":"
		   "\"Equal\",\"value\":\"a\",\"effect\":\"NoSchedule\"}]}}");
	{
		char *t = xasprintf(
			"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			"\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":"
			"\"cq\"},\"spec\":{\"namespaceSelector\":{},"
			"\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],"
			"\"flavors\":[{\"name\":\"rf\",\"resources\":[{"
			"\"name\":\"cpu\",\"nominalQuota\":\"%s\"}]}]}]}}",
			cpu);

		inp_create("clusterqueues", NULL, t);
		free(t);
	}
	inp_create("localqueues", "default",
		   "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		   "\"kind\":\"LocalQueue\",\"metadata\":{\"name\":\"lq\","
		   "\"namespace\":\"default\"},\"spec\":{\"clusterQueue\":"
		   "\"cq\"}}");
}

/* A Job asking cpu per pod, parallelism n; extra is spliced into
 * metadata (labels/annotations beyond the queue label). */
static void mk_job(const char *name, const char *cpu, int n, bool suspend,
		   const char *annotations, const char *labels)
{
	char *t = xasprintf(
		"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
		"\"name\":\"%s\",\"namespace\":\"default\",\"labels\":{"
		"\"kueue.x-k8s.io/queue-name\":\"lq\"%s%s},"
		"\"annotations\":{%s}},\"spec\":{\"suspend\":%s,"
		"\"parallelism\":%d,\"completions\":%d,\"template\":{"
		"\"spec\":{\"restartPolicy\":\"Never\",\"nodeSelector\":{"
		"\"disk\":\"ssd\"},\"containers\":[{\"name\":\"c\","
		"\"image\":\"busybox\",\"resources\":{\"requests\":{"
		"\"cpu\":\"%s\"}}}]}}}}",
		name, labels ? "," : "", labels ? labels : "",
		annotations ? annotations : "", suspend ? "true" : "false", n,
		n, cpu);

	inp_create("jobs", "default", t);
	free(t);
}

/* The Workload name of Job name (its uid read back). */
static char *wl_of(const char *name)
{
	char *uid = xstrdup(inp_val("jobs", "default", name, "metadata.uid"));
	char *res = jobwl_workload_name("Job", "batch", name, uid);

	free(uid);
	return res;
}

static bool admitted(const char *wl)
{
	return inp_has_cond("workloads", "default", wl, "Admitted", "True",
			    NULL, NULL);
}

static bool job_suspended(const char *name)
{
	return !strcmp(inp_val("jobs", "default", name, "spec.suspend"),
		       "true");
}

static bool job_complete(const char *name)
{
	return inp_has_cond("jobs", "default", name, "Complete", "True", NULL,
			    NULL);
}

/* ---- tests ---- */

START_TEST(lifecycle)
{
	char *wa, *wb;
	json_t *wl, *job;
	const json_t *o, *t;

	inp_create("workloadpriorityclasses", NULL,
		   "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		   "\"kind\":\"WorkloadPriorityClass\",\"metadata\":{\"name\":"
		   "\"high\"},\"value\":1000}");
	mk_queues("1");
	mk_job("a", "1", 1, true, "\"cueue.dev/runtime\":\"1500ms\"",
	       "\"kueue.x-k8s.io/priority-class\":\"high\"");
	wa = wl_of("a");
	mgr_start();

	/* the Workload of a, admitted; the Job unsuspended */
	WAIT_FOR(inp_exists("workloads", "default", wa), 10000);
	WAIT_FOR(!job_suspended("a"), 10000);
	wl = inp_get("workloads", "default", wa);
	ck_assert_ptr_nonnull(wl);
	o = inp_jpath(wl, "metadata.ownerReferences.0");
	ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "Job");
	ck_assert_str_eq(json_string_value(json_object_get(o, "name")), "a");
	ck_assert(json_is_true(json_object_get(o, "controller")));
	ck_assert(json_is_true(json_object_get(o, "blockOwnerDeletion")));
	ck_assert_str_eq(json_string_value(inp_jpath(wl,
						     "metadata.finalizers.0")),
			 "kueue.x-k8s.io/resource-in-use");
	ck_assert_str_eq(json_string_value(json_object_get(
		inp_jpath(wl, "metadata.labels"), "kueue.x-k8s.io/job-uid")),
		inp_val("jobs", "default", "a", "metadata.uid"));
	ck_assert_str_eq(json_string_value(inp_jpath(wl, "spec.queueName")),
			 "lq");
	ck_assert_int_eq(json_integer_value(inp_jpath(wl, "spec.priority")),
			 1000);
	ck_assert_str_eq(json_string_value(inp_jpath(wl,
						     "spec.podSets.0.name")),
			 "main");
	ck_assert_int_eq(json_integer_value(inp_jpath(wl,
						      "spec.podSets.0.count")),
			 1);
	json_decref(wl);
	ck_assert(admitted(wa));
	job = inp_get("jobs", "default", "a");
	t = inp_jpath(job, "spec.template");
	ck_assert_str_eq(json_string_value(inp_jpath(t,
						     "spec.nodeSelector.pool")),
			 "a");
	ck_assert_str_eq(json_string_value(inp_jpath(t,
						     "spec.nodeSelector.disk")),
			 "ssd");
	ck_assert_str_eq(json_string_value(inp_jpath(t,
						     "spec.tolerations.0.key")),
			 "dedicated");
	ck_assert_str_eq(json_string_value(json_object_get(
		inp_jpath(t, "metadata.labels"), "kueue.x-k8s.io/podset")),
		"main");
	json_decref(job);

	/* b, created while a runs, waits: its Workload pending, the Job
	 * suspended */
	mk_job("b", "1", 1, true, "\"cueue.dev/runtime\":\"200ms\"", NULL);
	wb = wl_of("b");
	WAIT_FOR(inp_exists("workloads", "default", wb), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", wb, "QuotaReserved",
			      "False", NULL, NULL), 10000);
	ck_assert(job_suspended("b"));

	/* a completes -> Finished, finalizer gone -> b admitted and run */
	WAIT_FOR(inp_has_cond("workloads", "default", wa, "Finished", "True",
			      "Succeeded", NULL), 10000);
	WAIT_FOR(!strcmp(inp_val("workloads", "default", wa,
				 "metadata.finalizers.0"), ""), 10000);
	WAIT_FOR(!job_suspended("b"), 10000);
	WAIT_FOR(job_complete("b"), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", wb, "Finished", "True",
			      "Succeeded", NULL), 10000);
	WAIT_FOR(has_event("default", "a", "CreatedWorkload") &&
		 has_event("default", "a", "Started") &&
		 has_event("default", "a", "FinishedWorkload"), 5000);
	{
		char *msg = xasprintf("Created Workload: default/%s", wa);

		check_event("default", "a", "CreatedWorkload", msg);
		free(msg);
		check_event("default", "a", "Started",
			    "Admitted by clusterQueue cq");
		msg = xasprintf("Workload 'default/%s' is declared finished",
				wa);
		check_event("default", "a", "FinishedWorkload", msg);
		free(msg);
	}
	/* a's and b's three each, counted by the recorder */
	WAIT_FOR(events_total("posted") >= 6, 5000);
	ck_assert_uint_ge(jobs_stats(J)->events, 6);
	ck_assert(events_total("failed") == 0);
	ck_assert(events_total("dropped") == 0);
	ck_assert_int_eq((int)inp_count("workloads", "default"), 2);
	ck_assert(manager_check(M));
	free(wa);
	free(wb);
}
END_TEST

START_TEST(over_quota_and_partial)
{
	char *wbig, *wpart;

	mk_queues("2");
	mk_job("big", "1", 3, true, NULL, NULL);
	mk_job("part", "1", 4, true,
	       "\"kueue.x-k8s.io/job-min-parallelism\":\"1\","
	       "\"cueue.dev/runtime\":\"1h\"", NULL);
	wbig = wl_of("big");
	wpart = wl_of("part");
	mgr_start();
	WAIT_FOR(inp_exists("workloads", "default", wpart) &&
		 !job_suspended("part"), 10000);
	ck_assert_str_eq(inp_val("jobs", "default", "part", "spec.parallelism"),
			 "2");
	ck_assert_str_eq(inp_val("workloads", "default", wpart,
				 "spec.podSets.0.minCount"), "1");
	WAIT_FOR(inp_exists("workloads", "default", wbig), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", wbig, "QuotaReserved",
			      "False", NULL, NULL), 10000);
	inp_spin(300);
	ck_assert(job_suspended("big"));
	ck_assert(!admitted(wbig));
	free(wbig);
	free(wpart);
}
END_TEST

START_TEST(delete_and_fail)
{
	char *wd, *wf;

	mk_queues("4");
	mk_job("d", "1", 1, true, "\"cueue.dev/runtime\":\"1h\"", NULL);
	mk_job("f", "1", 1, true, "\"cueue.dev/fail\":\"true\","
	       "\"cueue.dev/runtime\":\"100ms\"", NULL);
	wd = wl_of("d");
	wf = wl_of("f");
	mgr_start();
	WAIT_FOR(inp_exists("workloads", "default", wd) && !job_suspended("d"),
		 10000);
	/* kubectl's default: the garbage collector takes the Workload */
	inp_del("jobs", "default", "d", "Background");
	WAIT_FOR(!inp_exists("workloads", "default", wd), 10000);
	/* the API's default for Jobs orphans dependents: deleted anyway */
	mk_job("d2", "1", 1, true, "\"cueue.dev/runtime\":\"1h\"", NULL);
	free(wd);
	wd = wl_of("d2");
	WAIT_FOR(inp_exists("workloads", "default", wd) && !job_suspended("d2"),
		 10000);
	inp_del("jobs", "default", "d2", NULL);
	WAIT_FOR(!inp_exists("workloads", "default", wd), 10000);
	WAIT_FOR(!inp_exists("jobs", "default", "d2"), 10000);

	WAIT_FOR(inp_has_cond("workloads", "default", wf, "Finished", "True",
			      "Failed", NULL), 10000);
	free(wd);
	free(wf);
}
END_TEST

/* A Job created running without a Workload is stopped, then queued. */
START_TEST(running_without_workload)
{
	char *w;

	mk_queues("4");
	mk_job("r", "1", 1, false, "\"cueue.dev/runtime\":\"1h\"", NULL);
	w = wl_of("r");
	mgr_start();
	WAIT_FOR(has_event("default", "r", "Stopped"), 10000);
	WAIT_FOR(inp_exists("workloads", "default", w), 10000);
	WAIT_FOR(admitted(w) && !job_suspended("r"), 10000);
	free(w);
}
END_TEST

START_TEST(restart)
{
	char *w1, *w2, *rv;
	uint64_t started;

	mk_queues("1");
	mk_job("x", "1", 1, true, "\"cueue.dev/runtime\":\"1h\"", NULL);
	mk_job("y", "1", 1, true, "\"cueue.dev/runtime\":\"1h\"", NULL);
	w1 = wl_of("x");
	w2 = wl_of("y");
	mgr_start();
	/* one of them runs (the scheduler picks), the other waits */
	WAIT_FOR(inp_exists("workloads", "default", w1) &&
		 inp_exists("workloads", "default", w2), 10000);
	WAIT_FOR(job_suspended("x") != job_suspended("y"), 10000);
	inp_spin(300);
	rv = xasprintf("%s,", inp_val("jobs", "default", "x",
				      "metadata.resourceVersion"));
	{
		char *t = xasprintf("%s%s", rv, inp_val("jobs", "default", "y",
						   "metadata.resourceVersion"));

		free(rv);
		rv = t;
	}
	mgr_stop();
	mgr_start();
	WAIT_FOR(jobs_synced(J) && manager_synced(M), 10000);
	inp_spin(800);
	started = jobs_stats(J)->started + jobs_stats(J)->created +
		  jobs_stats(J)->stopped;
	ck_assert_int_eq((int)started, 0);
	ck_assert_int_eq((int)inp_count("workloads", "default"), 2);
	{
		char *now = xasprintf("%s,", inp_val("jobs", "default", "x",
					"metadata.resourceVersion"));
		char *t = xasprintf("%s%s", now, inp_val("jobs", "default", "y",
					"metadata.resourceVersion"));

		ck_assert_str_eq(t, rv);
		free(t);
		free(now);
	}
	ck_assert(job_suspended("x") != job_suspended("y"));
	free(rv);
	free(w1);
	free(w2);
}
END_TEST

/* Evicted=True on an admitted Workload (what preemption will write):
 * the Job is stopped, its template restored, the reservation cleared. */
START_TEST(eviction)
{
	char *w;
	json_t *wl, *conds, *p, *job;
	const json_t *t;

	mk_queues("4");
	mk_job("e", "1", 2, true, "\"cueue.dev/runtime\":\"1h\","
	       "\"kueue.x-k8s.io/job-min-parallelism\":\"1\"", NULL);
	w = wl_of("e");
	mgr_start();
	WAIT_FOR(inp_exists("workloads", "default", w) && !job_suspended("e"),
		 10000);
	WAIT_FOR(strcmp(inp_val("jobs", "default", "e", "status.active"),
			"0") &&
		 strcmp(inp_val("jobs", "default", "e", "status.active"), ""),
		 10000);
	wl = inp_get("workloads", "default", w);
	conds = json_deep_copy(inp_jpath(wl, "status.conditions"));
	json_array_append_new(conds, json_pack(
		"{s:s, s:s, s:s, s:s, s:s}", "type", "Evicted", "status",
		"True", "reason", "Preempted", "message",
		"Preempted to accommodate a workload", "lastTransitionTime",
		"2026-01-01T00:00:00Z"));
	p = json_pack("{s:{s:o}}", "status", "conditions", conds);
	inp_patch("workloads", "default", w, "status", p);
	json_decref(p);
	json_decref(wl);
	WAIT_FOR(job_suspended("e"), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", w, "QuotaReserved",
			      "False", "Pending", NULL), 10000);
	WAIT_FOR(!strcmp(inp_val("jobs", "default", "e",
				 "spec.template.spec.nodeSelector.pool"), ""),
		 10000);
	ck_assert(inp_has_cond("workloads", "default", w, "Requeued", "True",
			       "Preempted", NULL));
	ck_assert_str_eq(inp_val("workloads", "default", w,
				 "status.admission.clusterQueue"), "");
	job = inp_get("jobs", "default", "e");
	t = inp_jpath(job, "spec.template");
	ck_assert_str_eq(json_string_value(inp_jpath(t,
						     "spec.nodeSelector.disk")),
			 "ssd");
	ck_assert_ptr_null(inp_jpath(t, "spec.tolerations"));
	ck_assert_ptr_null(json_object_get(inp_jpath(t, "metadata.labels"),
					   "kueue.x-k8s.io/podset"));
	ck_assert_ptr_null(json_object_get(inp_jpath(job,
						     "metadata.annotations"),
					   "kueue.x-k8s.io/stopping"));
	ck_assert_int_eq(json_integer_value(inp_jpath(job, "spec.parallelism")),
			 2);
	json_decref(job);
	WAIT_FOR(has_event("default", "e", "Stopped"), 5000);
	free(w);
}
END_TEST

/* Restart safety of an eviction: the manager writes Evicted=True for a
 * deactivated Workload and goes down before the Job is stopped (here:
 * the Job integration is not running). Until then the quota stays; after
 * the restart the eviction completes once: the Job suspended, the
 * reservation cleared, the Evicted condition not written again. */
/* The Evicted condition's lastTransitionTime (new string, "" if none). */
static char *evicted_ltt(const char *wl)
{
	json_t *o = inp_get("workloads", "default", wl);
	const json_t *c = o ? inp_cond(o, "Evicted") : NULL;
	char *r = xstrdup(c ? val_or(json_object_get(c, "lastTransitionTime"))
			    : "");

	json_decref(o);
	return r;
}

START_TEST(restart_mid_eviction)
{
	char *w, *ltt;
	json_t *p;

	mk_queues("2");
	mk_job("k", "1", 1, true, "\"cueue.dev/runtime\":\"1h\"", NULL);
	w = wl_of("k");
	mgr_start();
	WAIT_FOR(inp_exists("workloads", "default", w) && !job_suspended("k"),
		 10000);
	/* the Job integration goes: only the scheduler side runs */
	jobs_free(J);
	J = NULL;
	p = json_pack("{s:{s:b}}", "spec", "active", 0);
	inp_patch("workloads", "default", w, NULL, p);
	json_decref(p);
	WAIT_FOR(inp_has_cond("workloads", "default", w, "Evicted", "True",
			      "Deactivated", "The workload is deactivated"),
		 10000);
	WAIT_FOR(manager_stats(M)->evicted == 1, 10000);
	inp_spin(300);
	ck_assert_uint_eq(manager_stats(M)->evicted, 1);
	/* nothing stopped the Job: the quota stays reserved */
	ck_assert(!job_suspended("k"));
	ck_assert(inp_has_cond("workloads", "default", w, "QuotaReserved",
			       "True", NULL, NULL));
	ltt = evicted_ltt(w);
	ck_assert_str_ne(ltt, "");
	mgr_stop();
	mgr_start();
	WAIT_FOR(job_suspended("k"), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", w, "QuotaReserved",
			      "False", "Pending", "The workload is deactivated"),
		 10000);
	ck_assert(inp_has_cond("workloads", "default", w, "Requeued", "False",
			       "Deactivated", NULL));
	ck_assert_str_eq(inp_val("workloads", "default", w,
				 "status.admission.clusterQueue"), "");
	inp_spin(300);
	/* once: the new manager wrote no eviction */
	ck_assert_uint_eq(manager_stats(M)->evicted, 0);
	ck_assert_uint_eq(manager_stats(M)->check_writes, 0);
	{
		char *now = evicted_ltt(w);

		ck_assert_str_eq(now, ltt);
		free(now);
	}
	ck_assert_uint_eq(jobs_stats(J)->stopped, 1);
	free(ltt);
	free(w);
}
END_TEST

/* A missing WorkloadPriorityClass holds the Workload back until it
 * appears; an unlabelled Job is managed only with
 * manageJobsWithoutQueueName. */
START_TEST(priority_later_and_unlabelled)
{
	char *w, *wu;

	JO.manage_without_queue_name = true;
	mk_queues("4");
	mk_job("p", "1", 1, true, "\"cueue.dev/runtime\":\"1h\"",
	       "\"kueue.x-k8s.io/priority-class\":\"later\"");
	inp_create("jobs", "default",
		   "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
		   "\"metadata\":{"
		   "\"name\":\"u\",\"namespace\":\"default\"},\"spec\":{"
		   "\"suspend\":true,\"template\":{\"spec\":{\"restartPolicy\":"
		   "\"Never\",\"containers\":[{\"name\":\"c\",\"image\":"
		   "\"busybox\"}]}}}}");
	inp_create("priorityclasses", NULL,
		   "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":"
		   "\"PriorityClass\",\"metadata\":{\"name\":\"pc-high\"},"
		   "\"value\":50}");
	inp_create("jobs", "default",
		   "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
		   "\"metadata\":{"
		   "\"name\":\"q\",\"namespace\":\"default\"},\"spec\":{"
		   "\"suspend\":true,\"template\":{\"spec\":{\"restartPolicy\":"
		   "\"Never\",\"priorityClassName\":\"pc-high\",\"containers\":"
		   "[{\"name\":\"c\",\"image\":\"busybox\"}]}}}}");
	w = wl_of("p");
	wu = wl_of("u");
	mgr_start();
	{
		char *wq = wl_of("q");

		WAIT_FOR(inp_exists("workloads", "default", wq), 10000);
		ck_assert_str_eq(inp_val("workloads", "default", wq,
					 "spec.priority"), "50");
		ck_assert_str_eq(inp_val("workloads", "default", wq,
					 "spec.priorityClassRef.name"),
				 "pc-high");
		free(wq);
	}
	WAIT_FOR(inp_exists("workloads", "default", wu), 10000);
	ck_assert_str_eq(inp_val("workloads", "default", wu, "spec.queueName"),
			 "");
	inp_spin(300);
	ck_assert(!inp_exists("workloads", "default", w));
	inp_create("workloadpriorityclasses", NULL,
		   "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		   "\"kind\":\"WorkloadPriorityClass\",\"metadata\":{\"name\":"
		   "\"later\"},\"value\":7}");
	WAIT_FOR(inp_exists("workloads", "default", w), 10000);
	ck_assert_str_eq(inp_val("workloads", "default", w, "spec.priority"),
			 "7");
	WAIT_FOR(!job_suspended("p"), 10000);
	ck_assert(job_suspended("u"));
	free(w);
	free(wu);
}
END_TEST

/* ---- managedJobsNamespaceSelector ---- */

static void mk_ns(const char *name, const char *labels)
{
	char *t = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
			    "\"metadata\":{\"name\":\"%s\",\"labels\":%s}}",
			    name, labels);

	inp_create("namespaces", NULL, t);
	free(t);
}

/* A suspended one-pod Job in ns, with queue-name queue unless NULL. */
static void mk_ns_job(const char *ns, const char *name, const char *queue)
{
	char *lbl = queue ? xasprintf("\"labels\":{\"kueue.x-k8s.io/"
				      "queue-name\":\"%s\"},", queue)
			  : xstrdup("");
	char *t = xasprintf(
		"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"
		"%s\"name\":\"%s\",\"namespace\":\"%s\"},\"spec\":{"
		"\"suspend\":true,\"template\":{\"spec\":{\"restartPolicy\":"
		"\"Never\",\"containers\":[{\"name\":\"c\",\"image\":"
		"\"busybox\"}]}}}}", lbl, name, ns);

	inp_create("jobs", ns, t);
	free(t);
	free(lbl);
}

static char *wl_in(const char *ns, const char *name)
{
	char *uid = xstrdup(inp_val("jobs", ns, name, "metadata.uid"));
	char *res = jobwl_workload_name("Job", "batch", name, uid);

	free(uid);
	return res;
}

/* Loop index 0: v0.14 (the selector only for Jobs without a queue name
 * under manageJobsWithoutQueueName); 1: always respected (HEAD). */
START_TEST(namespace_selector)
{
	static const char *const team_a[] = { "a" };
	struct label_selector sel = LABEL_SELECTOR_INIT;
	bool always = _i == 1;
	char *wu, *wv, *wq, *wp;
	json_t *pj;

	label_selector_add(&sel, "team", SEL_IN, team_a, 1);
	JO.manage_without_queue_name = true;
	JO.ns_selector = &sel;
	JO.ns_selector_always = always;
	mk_ns("na", "{\"team\":\"a\"}");
	mk_ns("nb", "{\"team\":\"b\"}");
	mk_ns_job("na", "u", NULL);   /* selected, no queue: managed */
	mk_ns_job("na", "p", "lq");   /* selected, queue: managed */
	mk_ns_job("nb", "v", NULL);   /* not selected, no queue: never */
	mk_ns_job("nb", "q", "lq");   /* not selected, queue: v0.14 only */
	wu = wl_in("na", "u");
	wp = wl_in("na", "p");
	wv = wl_in("nb", "v");
	wq = wl_in("nb", "q");
	mgr_start();
	label_selector_release(&sel); /* jobs_new copied it */
	WAIT_FOR(inp_exists("workloads", "na", wu), 10000);
	WAIT_FOR(inp_exists("workloads", "na", wp), 10000);
	if (!always)
		WAIT_FOR(inp_exists("workloads", "nb", wq), 10000);
	else
		inp_spin(500);
	ck_assert(!inp_exists("workloads", "nb", wv));
	ck_assert(inp_exists("workloads", "nb", wq) == !always);
	/* a namespace that comes to match: its new Jobs are managed (as
	 * in Kueue, a Job is judged when it is reconciled; nothing watches
	 * namespaces to revisit the Jobs already there) */
	pj = t_json("{\"metadata\":{\"labels\":{\"team\":\"a\"}}}");
	inp_patch("namespaces", NULL, "nb", NULL, pj);
	json_decref(pj);
	inp_spin(300); /* the manager's namespace cache sees it first */
	free(wv);
	mk_ns_job("nb", "v2", NULL);
	wv = wl_in("nb", "v2");
	WAIT_FOR(inp_exists("workloads", "nb", wv), 10000);
	free(wu);
	free(wv);
	free(wq);
	free(wp);
}
END_TEST

Suite *jobs_suite(void)
{
	Suite *s = suite_create("jobs");
	TCase *tc = tcase_create("jobs");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, lifecycle);
	tcase_add_test(tc, over_quota_and_partial);
	tcase_add_test(tc, delete_and_fail);
	tcase_add_test(tc, running_without_workload);
	tcase_add_test(tc, restart);
	tcase_add_test(tc, eviction);
	tcase_add_test(tc, restart_mid_eviction);
	tcase_add_test(tc, priority_later_and_unlabelled);
	tcase_add_loop_test(tc, namespace_selector, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
