/*
 * Suite "manager": the manager (controller/manager.h) in-process against
 * the devserver in-process (plain HTTP on a free loopback port, the
 * v1beta2 CRDs of manifests/crds preloaded), driven through the one
 * event loop until a condition holds:
 *  - admission: a ClusterQueue, flavor, LocalQueue and workloads created
 *    through the API -> the first admitted with Kueue's admission and
 *    conditions, the second pending with Kueue's message; ClusterQueue
 *    and LocalQueue status counts and usage; finishing the first admits
 *    the second;
 *  - a missing flavor -> Active=False/FlavorNotFound, then recovery;
 *    a missing LocalQueue -> Inadmissible, then recovery; stopped
 *    LocalQueue and ClusterQueue -> Inadmissible and Active=False, then
 *    admission once both run again; borrowing within a cohort;
 *  - finalizers on ClusterQueue and ResourceFlavor and their removal on
 *    delete once nothing uses them;
 *  - a restart (free, recreate on the same server) rewrites nothing and
 *    admits nothing twice;
 *  - a 409 on an admission write (the workload changed between the
 *    decision and the write) is retried on the fresh object;
 *  - an invalid ClusterQueue shows inactive with the validation message;
 *  - Workload events (kueue-api.md §7.5): QuotaReserved and Admitted
 *    on admission, Pending (Warning) once per pending message written;
 *    a second message change within pending_msg_ms waits; the event
 *    recorder cuts messages at 1024 bytes and drops past its bound;
 *  - waitForPodsReady on an ownerless workload: timeout, eviction with
 *    the reservation cleared, backoff, BackoffFinished, deactivation past
 *    backoffLimitCount, reactivation with a fresh count; PodsReady=True
 *    holds; maximumExecutionTimeSeconds deactivates with its event;
 *  - the hash table and the logfmt logger.
 * Objects are written with the devserver's internal API (same semantics
 * as HTTP), so only the manager talks HTTP.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "controller/events.h"
#include "controller/kube.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/manager.h"
#include "devserver/http.h"
#include "devserver/tls.h"
#include "inproc.h"
#include "suites.h"
#include "test/support/support.h"

static char *rv_of(const char *resource, const char *ns, const char *name)
{
	return xstrdup(inp_val(resource, ns, name, "metadata.resourceVersion"));
}

/* ---- the manager under test ---- */

static struct manager *M;
static struct manager_opts MO;

static void mgr_start(void)
{
	M = manager_new(inp_kube(), &MO);
}

static void mgr_stop(void)
{
	manager_free(M);
	M = NULL;
}

static void setup(void)
{
	memset(&MO, 0, sizeof(MO));
	MO.status_interval_ms = 20;
	inp_start(NULL);
}

static void teardown(void)
{
	mgr_stop();
	inp_stop();
}

/* Runs until the manager is synced and has nothing queued or in flight
 * for a while (informer events included). */
static void settle(void)
{
	WAIT_FOR(manager_synced(M), 10000);
	for (int quiet = 0; quiet < 10;) {
		inp_spin(30);
		quiet = manager_idle(M) ? quiet + 1 : 0;
	}
	ck_assert(manager_check(M));
}

/* ---- fixtures ---- */

static void mk_flavor(const char *name)
{
	inp_create_take("resourceflavors", NULL, t_flavor_json(name));
}

static void mk_cq(const char *name, const char *flavor, const char *cpu)
{
	inp_create_take("clusterqueues", NULL, t_cq_json(name, flavor, cpu));
}

static void mk_lq(const char *ns, const char *name, const char *cq)
{
	inp_create_take("localqueues", ns, t_lq_json(ns, name, cq));
}

static void mk_wl(const char *ns, const char *name, const char *lq,
		  const char *cpu, int prio)
{
	inp_create_take("workloads", ns, t_wl_json(ns, name, lq, cpu, prio));
}

/* The standard setup: flavor "default", ClusterQueue "cq" with cpu
 * quota, LocalQueue default/lq. */
static void mk_queues(const char *cpu)
{
	mk_flavor("default");
	mk_cq("cq", "default", cpu);
	mk_lq("default", "lq", "cq");
}

static bool admitted(const char *ns, const char *name)
{
	return inp_has_cond("workloads", ns, name, "QuotaReserved", "True",
			    "QuotaReserved", NULL) &&
	       inp_has_cond("workloads", ns, name, "Admitted", "True",
			    "Admitted", NULL);
}

/* Holds quota: QuotaReserved=True and not Finished (as the invariant
 * checker counts it). */
static int holds(const char *ns, const char *name)
{
	return inp_has_cond("workloads", ns, name, "QuotaReserved", "True",
			    NULL, NULL) &&
	       !inp_has_cond("workloads", ns, name, "Finished", "True", NULL,
			     NULL);
}

/* Adds Finished=True to a workload's conditions (the job controller's
 * job, done by hand). */
static void finish(const char *ns, const char *name)
{
	json_t *obj = inp_get("workloads", ns, name);
	json_t *conds = json_deep_copy(inp_jpath(obj, "status.conditions"));
	json_t *p;

	json_array_append_new(conds, json_pack(
		"{s:s, s:s, s:s, s:s, s:s}", "type", "Finished", "status",
		"True", "reason", "Succeeded", "message", "Job finished",
		"lastTransitionTime", "2026-01-01T00:00:00Z"));
	p = json_pack("{s:{s:o}}", "status", "conditions", conds);
	inp_patch("workloads", ns, name, "status", p);
	json_decref(p);
	json_decref(obj);
}

/* ---- tests ---- */

START_TEST(admit_and_pending)
{
	json_t *wl, *cq;
	const json_t *psa;

	mk_queues("2");
	mk_wl("default", "a", "lq", "1500m", 10);
	mk_wl("default", "b", "lq", "1", 0);
	mgr_start();
	WAIT_FOR(admitted("default", "a"), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", "b", "QuotaReserved",
			      "False", "Pending", NULL), 10000);
	settle();

	wl = inp_get("workloads", "default", "a");
	ck_assert_str_eq(json_string_value(inp_jpath(wl, "status.admission."
						   "clusterQueue")), "cq");
	psa = inp_jpath(wl, "status.admission.podSetAssignments.0");
	ck_assert_str_eq(json_string_value(inp_jpath(psa, "name")), "main");
	ck_assert_str_eq(json_string_value(inp_jpath(psa, "flavors.cpu")),
			 "default");
	ck_assert_str_eq(json_string_value(inp_jpath(psa, "resourceUsage.cpu")),
			 "1500m");
	ck_assert_int_eq(json_integer_value(inp_jpath(psa, "count")), 1);
	ck_assert_str_eq(json_string_value(inp_jpath(
				 inp_cond(wl, "QuotaReserved"), "message")),
			 "Quota reserved in ClusterQueue cq");
	ck_assert_str_eq(json_string_value(inp_jpath(inp_cond(wl, "Admitted"),
						     "message")),
			 "The workload is admitted");
	json_decref(wl);

	ck_assert_str_eq(inp_val("workloads", "default", "b",
				 "status.conditions.0.message"),
			 "couldn't assign flavors to pod set main: "
			 "insufficient unused quota for cpu in flavor "
			 "default, 500m more needed");
	ck_assert_str_eq(inp_val("workloads", "default", "b",
				 "status.admission"), "");

	/* ClusterQueue status */
	WAIT_FOR(!strcmp(inp_val("clusterqueues", NULL, "cq",
				 "status.pendingWorkloads"), "1"), 5000);
	cq = inp_get("clusterqueues", NULL, "cq");
	ck_assert_int_eq(json_integer_value(inp_jpath(cq, "status."
						      "reservingWorkloads")),
			 1);
	ck_assert_int_eq(json_integer_value(inp_jpath(cq, "status."
						      "admittedWorkloads")), 1);
	ck_assert_str_eq(json_string_value(inp_jpath(cq, "status."
		"flavorsReservation.0.resources.0.total")), "1500m");
	ck_assert_str_eq(json_string_value(inp_jpath(cq, "status."
		"flavorsUsage.0.resources.0.total")), "1500m");
	ck_assert_str_eq(json_string_value(inp_jpath(cq, "status."
		"flavorsUsage.0.resources.0.borrowed")), "0");
	ck_assert_str_eq(json_string_value(inp_jpath(inp_cond(cq, "Active"),
						     "reason")), "Ready");
	ck_assert_str_eq(json_string_value(inp_jpath(inp_cond(cq, "Active"),
						     "message")),
			 "Can admit new workloads");
	json_decref(cq);

	/* LocalQueue status */
	ck_assert(inp_has_cond("localqueues", "default", "lq", "Active", "True",
			       "Ready",
			       "Can submit new workloads to localQueue"));
	ck_assert_str_eq(inp_val("localqueues", "default", "lq",
				 "status.pendingWorkloads"), "1");
	ck_assert_str_eq(inp_val("localqueues", "default", "lq",
				 "status.admittedWorkloads"), "1");
	ck_assert_str_eq(inp_val("localqueues", "default", "lq",
				 "status.flavorsUsage.0.resources.0.total"),
			 "1500m");

	/* finishing a frees its quota: b is admitted */
	finish("default", "a");
	WAIT_FOR(admitted("default", "b"), 10000);
	WAIT_FOR(!strcmp(inp_val("clusterqueues", NULL, "cq",
				 "status.flavorsUsage.0.resources.0.total"),
			 "1"), 5000);
	WAIT_FOR(!strcmp(inp_val("clusterqueues", NULL, "cq",
				 "status.pendingWorkloads"), "0"), 5000);
	settle();
	ck_assert_str_eq(inp_val("clusterqueues", NULL, "cq",
				 "status.admittedWorkloads"), "1");
	ck_assert_uint_eq(manager_stats(M)->admitted, 2);
}
END_TEST

START_TEST(missing_flavor)
{
	mk_cq("cq", "gpu", "4");
	mk_lq("default", "lq", "cq");
	mk_wl("default", "a", "lq", "1", 0);
	mgr_start();
	WAIT_FOR(inp_has_cond("clusterqueues", NULL, "cq", "Active", "False",
			      "FlavorNotFound", NULL), 10000);
	ck_assert_str_eq(inp_val("clusterqueues", NULL, "cq",
				 "status.conditions.0.message"),
			 "Can't admit new workloads: references missing "
			 "ResourceFlavor(s): gpu.");
	WAIT_FOR(inp_has_cond("workloads", "default", "a", "QuotaReserved",
			      "False", "Inadmissible",
			      "ClusterQueue cq is inactive"), 10000);
	WAIT_FOR(inp_has_cond("localqueues", "default", "lq", "Active", "False",
			      "ClusterQueueIsInactive", NULL), 10000);
	/* held in the inactive queue and counted there, as in Kueue */
	WAIT_FOR(!strcmp(inp_val("clusterqueues", NULL, "cq",
				 "status.pendingWorkloads"), "1"), 10000);
	WAIT_FOR(!strcmp(inp_val("localqueues", "default", "lq",
				 "status.pendingWorkloads"), "1"), 10000);
	mk_flavor("gpu");
	WAIT_FOR(inp_has_cond("clusterqueues", NULL, "cq", "Active", "True",
			      "Ready", NULL), 10000);
	WAIT_FOR(admitted("default", "a"), 10000);
	WAIT_FOR(inp_has_cond("localqueues", "default", "lq", "Active", "True",
			      "Ready", NULL), 10000);
	settle();
}
END_TEST

START_TEST(missing_localqueue)
{
	mk_flavor("default");
	mk_cq("cq", "default", "4");
	mk_wl("default", "a", "nolq", "1", 0);
	mgr_start();
	WAIT_FOR(inp_has_cond("workloads", "default", "a", "QuotaReserved",
			      "False", "Inadmissible",
			      "LocalQueue nolq doesn't exist"), 10000);
	settle();
	/* the LocalQueue names a missing ClusterQueue first */
	mk_lq("default", "nolq", "nocq");
	WAIT_FOR(inp_has_cond("workloads", "default", "a", "QuotaReserved",
			      "False", "Inadmissible",
			      "ClusterQueue nocq doesn't exist"), 10000);
	WAIT_FOR(inp_has_cond("localqueues", "default", "nolq", "Active",
			      "False", "ClusterQueueDoesNotExist",
			      "Can't submit new workloads to clusterQueue"),
		 10000);
	mk_cq("nocq", "default", "1");
	WAIT_FOR(admitted("default", "a"), 10000);
	ck_assert_str_eq(inp_val("workloads", "default", "a",
				 "status.admission.clusterQueue"), "nocq");
	settle();
}
END_TEST

START_TEST(finalizers)
{
	mk_queues("2");
	mk_wl("default", "a", "lq", "1", 0);
	mgr_start();
	WAIT_FOR(admitted("default", "a"), 10000);
	WAIT_FOR(!strcmp(inp_val("clusterqueues", NULL, "cq",
				 "metadata.finalizers.0"),
			 "kueue.x-k8s.io/resource-in-use"), 10000);
	WAIT_FOR(!strcmp(inp_val("resourceflavors", NULL, "default",
				 "metadata.finalizers.0"),
			 "kueue.x-k8s.io/resource-in-use"), 10000);
	settle();

	/* in use: both stay while deleting */
	inp_del("clusterqueues", NULL, "cq", NULL);
	inp_del("resourceflavors", NULL, "default", NULL);
	WAIT_FOR(inp_has_cond("clusterqueues", NULL, "cq", "Active", "False",
			      "Terminating", NULL), 10000);
	settle();
	ck_assert(inp_exists("clusterqueues", NULL, "cq"));
	ck_assert(inp_exists("resourceflavors", NULL, "default"));

	/* the workload ends: the ClusterQueue goes, then the flavor */
	finish("default", "a");
	WAIT_FOR(!inp_exists("clusterqueues", NULL, "cq"), 10000);
	WAIT_FOR(!inp_exists("resourceflavors", NULL, "default"), 10000);
	settle();
}
END_TEST

START_TEST(restart)
{
	char *rv_a, *rv_b, *rv_cq, *rv_lq;

	mk_queues("2");
	mk_wl("default", "a", "lq", "2", 10);
	mk_wl("default", "b", "lq", "1", 0);
	mgr_start();
	WAIT_FOR(admitted("default", "a"), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", "b", "QuotaReserved",
			      "False", "Pending", NULL), 10000);
	WAIT_FOR(!strcmp(inp_val("clusterqueues", NULL, "cq",
				 "status.pendingWorkloads"), "1"), 5000);
	settle();
	mgr_stop();
	rv_a = rv_of("workloads", "default", "a");
	rv_b = rv_of("workloads", "default", "b");
	rv_cq = rv_of("clusterqueues", NULL, "cq");
	rv_lq = rv_of("localqueues", "default", "lq");

	/* a new manager finds everything as it should be */
	mgr_start();
	settle();
	inp_spin(300);
	ck_assert_uint_eq(manager_stats(M)->admit_writes, 0);
	ck_assert_uint_eq(manager_stats(M)->pending_writes, 0);
	ck_assert_str_eq(inp_val("workloads", "default", "a",
				 "metadata.resourceVersion"), rv_a);
	ck_assert_str_eq(inp_val("workloads", "default", "b",
				 "metadata.resourceVersion"), rv_b);
	ck_assert_str_eq(inp_val("clusterqueues", NULL, "cq",
				 "metadata.resourceVersion"), rv_cq);
	ck_assert_str_eq(inp_val("localqueues", "default", "lq",
				 "metadata.resourceVersion"), rv_lq);
	ck_assert(admitted("default", "a"));
	ck_assert(!admitted("default", "b"));

	/* and still works: a new workload that fits nowhere stays pending,
	 * finishing a admits b */
	finish("default", "a");
	WAIT_FOR(admitted("default", "b"), 10000);
	settle();
	ck_assert_uint_eq(manager_stats(M)->admitted, 1);
	free(rv_a);
	free(rv_b);
	free(rv_cq);
	free(rv_lq);
}
END_TEST

/* The hook changes the workload on the server right before the first
 * admission write, so the write's precondition fails. */
static int hook_calls;

static void touch_before_write(void *ud, const char *ns, const char *name)
{
	json_t *p;

	(void)ud;
	if (hook_calls++)
		return;
	p = json_pack("{s:{s:{s:s}}}", "metadata", "labels", "touched",
		      "yes");
	inp_patch("workloads", ns, name, NULL, p);
	json_decref(p);
}

START_TEST(conflict_retry)
{
	mk_queues("1");
	mk_wl("default", "a", "lq", "1", 10);
	mk_wl("default", "b", "lq", "1", 0);
	MO.before_admit_write = touch_before_write;
	hook_calls = 0;
	mgr_start();
	WAIT_FOR(admitted("default", "a"), 10000);
	settle();
	inp_spin(300);
	ck_assert_uint_eq(manager_stats(M)->admit_conflicts, 1);
	ck_assert_uint_eq(manager_stats(M)->admitted, 1);
	ck_assert_str_eq(inp_val("workloads", "default", "a",
				 "metadata.labels.touched"), "yes");
	/* nothing admitted twice: b waits */
	ck_assert(!admitted("default", "b"));
	ck_assert(inp_has_cond("workloads", "default", "b", "QuotaReserved",
			       "False", "Pending", NULL));
	ck_assert_str_eq(inp_val("clusterqueues", NULL, "cq",
				 "status.reservingWorkloads"), "1");
}
END_TEST

START_TEST(invalid_clusterqueue)
{
	/* the webhook rule "must match the name in coveredResources" is not
	 * in the schema, so the server stores it */
	mk_flavor("default");
	inp_create("clusterqueues", NULL,
		   "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		   "\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"bad\"},"
		   "\"spec\":{\"namespaceSelector\":{},\"resourceGroups\":[{"
		   "\"coveredResources\":[\"cpu\"],\"flavors\":[{\"name\":"
		   "\"default\",\"resources\":[{\"name\":\"memory\","
		   "\"nominalQuota\":\"1\"}]}]}]}}");
	mk_lq("default", "lq", "bad");
	mk_wl("default", "a", "lq", "1", 0);
	mgr_start();
	WAIT_FOR(inp_has_cond("clusterqueues", NULL, "bad", "Active", "False",
			      NULL, NULL), 10000);
	ck_assert_msg(strstr(inp_val("clusterqueues", NULL, "bad",
				     "status.conditions.0.message"),
			     "coveredResources") != NULL, "%s",
		      inp_val("clusterqueues", NULL, "bad",
			      "status.conditions.0.message"));
	WAIT_FOR(inp_has_cond("workloads", "default", "a", "QuotaReserved",
			      "False", "Inadmissible",
			      "ClusterQueue bad is inactive"), 10000);
	settle();
	ck_assert_uint_ge(manager_stats(M)->invalid, 1);
}
END_TEST

/* ---- the manager's small pure helpers ---- */

START_TEST(log_logfmt)
{
	FILE *f = tmpfile();
	char line[512] = "";

	ck_assert_int_eq(log_set_level_name("nope"), -1);
	ck_assert_int_eq(log_set_level_name("warn"), 0);
	log_set_stream(f);
	log_msg(LOG_INFO, "scheduler", "ns", "a", "hidden");
	log_msg(LOG_WARN, "scheduler", "ns", "a", "said \"%s\"", "x y");
	log_set_stream(NULL);
	rewind(f);
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	ck_assert_ptr_nonnull(strstr(line, " level=warn component=scheduler "
				     "object=ns/a msg=\"said \\\"x y\\\"\"\n"));
	ck_assert_int_eq(strncmp(line, "time=", 5), 0);
	ck_assert_ptr_null(fgets(line, sizeof(line), f));
	fclose(f);
	log_set_level(LOG_INFO);
}
END_TEST

START_TEST(cohort_borrowing)
{
	static const char cq_fmt[] =
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		"\"kind\":\"ClusterQueue\",\"metadata\":{\"name\":\"%s\"},"
		"\"spec\":{\"cohortName\":\"shared\",\"namespaceSelector\":{},"
		"\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],"
		"\"flavors\":[{\"name\":\"default\",\"resources\":[{"
		"\"name\":\"cpu\",\"nominalQuota\":\"%s\"}]}]}]}}";
	char *t;

	mk_flavor("default");
	t = xasprintf(cq_fmt, "cq-a", "2");
	inp_create("clusterqueues", NULL, t);
	free(t);
	t = xasprintf(cq_fmt, "cq-b", "4");
	inp_create("clusterqueues", NULL, t);
	free(t);
	mk_lq("default", "lq-a", "cq-a");
	mk_lq("default", "lq-b", "cq-b");
	mk_wl("default", "a1", "lq-a", "5", 0);
	mgr_start();
	WAIT_FOR(admitted("default", "a1"), 10000);
	WAIT_FOR(!strcmp(inp_val("clusterqueues", NULL, "cq-a",
			"status.flavorsReservation.0.resources.0.borrowed"),
			 "3"), 10000);
	ck_assert_str_eq(inp_val("clusterqueues", NULL, "cq-a",
			"status.flavorsReservation.0.resources.0.total"),
			 "5");
	/* one cpu is left in the cohort */
	mk_wl("default", "b1", "lq-b", "2", 0);
	mk_wl("default", "b2", "lq-b", "1", 0);
	WAIT_FOR(admitted("default", "b2"), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", "b1", "QuotaReserved",
			      "False", "Pending",
			      "couldn't assign flavors to pod set main: "),
		 10000);
	settle();
	ck_assert_str_eq(inp_val("clusterqueues", NULL, "cq-b",
			"status.flavorsReservation.0.resources.0.borrowed"),
			 "0");
	/* a1 ends: b1 fits */
	finish("default", "a1");
	WAIT_FOR(admitted("default", "b1"), 10000);
	settle();
}
END_TEST

START_TEST(stopped_queues)
{
	json_t *p;

	mk_flavor("default");
	mk_cq("cq", "default", "4");
	inp_create("localqueues", "default",
		   "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		   "\"kind\":\"LocalQueue\",\"metadata\":{\"name\":\"lq\","
		   "\"namespace\":\"default\"},\"spec\":{\"clusterQueue\":"
		   "\"cq\",\"stopPolicy\":\"Hold\"}}");
	mk_wl("default", "a", "lq", "1", 0);
	mgr_start();
	WAIT_FOR(inp_has_cond("workloads", "default", "a", "QuotaReserved",
			      "False", "Inadmissible",
			      "LocalQueue lq is inactive"), 10000);
	WAIT_FOR(inp_has_cond("localqueues", "default", "lq", "Active", "False",
			      "Stopped", "LocalQueue is stopped"), 10000);
	settle();

	/* the ClusterQueue stops too, then the LocalQueue resumes */
	p = json_pack("{s:{s:s}}", "spec", "stopPolicy", "Hold");
	inp_patch("clusterqueues", NULL, "cq", NULL, p);
	json_decref(p);
	WAIT_FOR(inp_has_cond("clusterqueues", NULL, "cq", "Active", "False",
			      "Stopped", NULL), 10000);
	p = json_pack("{s:{s:s}}", "spec", "stopPolicy", "None");
	inp_patch("localqueues", "default", "lq", NULL, p);
	WAIT_FOR(inp_has_cond("workloads", "default", "a", "QuotaReserved",
			      "False", "Inadmissible",
			      "ClusterQueue cq is inactive"), 10000);
	WAIT_FOR(inp_has_cond("localqueues", "default", "lq", "Active", "False",
			      "ClusterQueueIsInactive", NULL), 10000);
	/* and the ClusterQueue resumes: admitted */
	inp_patch("clusterqueues", NULL, "cq", NULL, p);
	json_decref(p);
	WAIT_FOR(admitted("default", "a"), 10000);
	WAIT_FOR(inp_has_cond("localqueues", "default", "lq", "Active", "True",
			      "Ready", NULL), 10000);
	settle();
}
END_TEST

/* ---- events ---- */

/* The Events of namespace ns about the Workload name with reason (new
 * array). */
static json_t *events_of(const char *ns, const char *kind, const char *name,
			 const char *reason)
{
	json_t *items = inp_list("events", ns), *out = json_array(), *ev;
	size_t i;

	json_array_foreach(items, i, ev) {
		const json_t *io = json_object_get(ev, "involvedObject");

		if (!strcmp(json_string_value(json_object_get(io, "kind")),
			    kind) &&
		    !strcmp(json_string_value(json_object_get(io, "name")),
			    name) &&
		    (!reason || !strcmp(json_string_value(json_object_get(
						ev, "reason")), reason)))
			json_array_append(out, ev);
	}
	json_decref(items);
	return out;
}

static size_t nevents(const char *ns, const char *name, const char *reason)
{
	json_t *v = events_of(ns, "Workload", name, reason);
	size_t n = json_array_size(v);

	json_decref(v);
	return n;
}

/* The one event of that reason: its type, message and involvedObject
 * (the workload's uid). */
static void check_event(const char *ns, const char *name, const char *reason,
			const char *type, const char *msg_prefix,
			const char *msg_suffix)
{
	json_t *v = events_of(ns, "Workload", name, reason);
	const json_t *ev = json_array_get(v, 0);
	const char *msg;
	char *uid = xstrdup(inp_val("workloads", ns, name, "metadata.uid"));

	ck_assert_msg(json_array_size(v) == 1, "%s/%s %s: %zu events", ns,
		      name, reason, json_array_size(v));
	ck_assert_str_eq(json_string_value(inp_jpath(ev, "type")), type);
	msg = json_string_value(inp_jpath(ev, "message"));
	ck_assert_msg(!strncmp(msg, msg_prefix, strlen(msg_prefix)), "%s",
		      msg);
	if (msg_suffix)
		ck_assert_str_eq(msg + strlen(msg_prefix), msg_suffix);
	ck_assert_str_eq(json_string_value(inp_jpath(ev, "involvedObject."
						     "apiVersion")),
			 "kueue.x-k8s.io/v1beta2");
	ck_assert_str_eq(json_string_value(inp_jpath(ev, "involvedObject."
						     "namespace")), ns);
	ck_assert_str_eq(json_string_value(inp_jpath(ev, "involvedObject.uid")),
			 uid);
	ck_assert_str_eq(json_string_value(inp_jpath(ev, "source.component")),
			 "kueue-admission");
	ck_assert_str_eq(json_string_value(inp_jpath(ev, "reportingComponent")),
			 "kueue-admission");
	ck_assert_int_eq(json_integer_value(inp_jpath(ev, "count")), 1);
	free(uid);
	json_decref(v);
}

START_TEST(workload_events)
{
	const char *pend = "couldn't assign flavors to pod set main: "
			   "insufficient unused quota for cpu in flavor "
			   "default, ";
	json_t *p;
	uint64_t writes;

	MO.pending_msg_ms = 3000;
	mk_flavor("default");
	mk_cq("cq", "default", "4");
	mk_lq("default", "lq", "cq");
	mk_wl("default", "a", "lq", "3", 10);
	mgr_start();
	WAIT_FOR(admitted("default", "a"), 10000);
	mk_wl("default", "b", "lq", "2", 0);
	WAIT_FOR(inp_has_cond("workloads", "default", "b", "QuotaReserved",
			      "False", "Pending", NULL), 10000);
	settle();
	check_event("default", "a", "QuotaReserved", "Normal",
		    "Quota reserved in ClusterQueue cq, wait time since "
		    "queued was ", NULL);
	check_event("default", "a", "Admitted", "Normal",
		    "Admitted by ClusterQueue cq, wait time since "
		    "reservation was ", NULL);
	check_event("default", "b", "Pending", "Warning", pend,
		    "1 more needed");
	ck_assert_uint_eq(nevents("default", "a", "Pending"), 0);
	ck_assert_uint_eq(nevents("default", "b", "QuotaReserved"), 0);
	/* b's pending write came back as a status-only version: taken in
	 * place, sched not told */
	ck_assert_uint_ge(manager_stats(M)->status_only, 1);

	/* Less quota: only b's message text changes. The first such
	 * change is written (and its event posted) at once; a second one
	 * within pending_msg_ms of the first write waits for that window. */
	writes = manager_stats(M)->pending_writes;
	p = json_pack("{s:{s:[{s:[s], s:[{s:s, s:[{s:s, s:s}]}]}]}}",
		      "spec", "resourceGroups", "coveredResources", "cpu",
		      "flavors", "name", "default", "resources", "name", "cpu",
		      "nominalQuota", "3500m");
	inp_patch("clusterqueues", NULL, "cq", NULL, p);
	json_decref(p);
	WAIT_FOR(!strcmp(inp_val("workloads", "default", "b",
				 "status.conditions.0.message"),
			 "couldn't assign flavors to pod set main: "
			 "insufficient unused quota for cpu in flavor "
			 "default, 1500m more needed"), 10000);
	settle();
	ck_assert_uint_eq(manager_stats(M)->pending_writes, writes + 1);
	ck_assert_uint_eq(nevents("default", "b", "Pending"), 2);

	p = json_pack("{s:{s:[{s:[s], s:[{s:s, s:[{s:s, s:s}]}]}]}}",
		      "spec", "resourceGroups", "coveredResources", "cpu",
		      "flavors", "name", "default", "resources", "name", "cpu",
		      "nominalQuota", "3");
	inp_patch("clusterqueues", NULL, "cq", NULL, p);
	json_decref(p);
	inp_spin(300);
	ck_assert_str_eq(inp_val("workloads", "default", "b",
				 "status.conditions.0.message"),
			 "couldn't assign flavors to pod set main: "
			 "insufficient unused quota for cpu in flavor "
			 "default, 1500m more needed");
	ck_assert(!manager_idle(M)); /* the deferred write counts */
	WAIT_FOR(!strcmp(inp_val("workloads", "default", "b",
				 "status.conditions.0.message"),
			 "couldn't assign flavors to pod set main: "
			 "insufficient unused quota for cpu in flavor "
			 "default, 2 more needed"), 10000);
	settle();
	ck_assert_uint_eq(manager_stats(M)->pending_writes, writes + 2);
	ck_assert_uint_eq(nevents("default", "b", "Pending"), 3);

	/* admitted once a finishes: its own events, no more Pending */
	finish("default", "a");
	WAIT_FOR(admitted("default", "b"), 10000);
	settle();
	check_event("default", "b", "QuotaReserved", "Normal",
		    "Quota reserved in ClusterQueue cq, wait time since "
		    "queued was ", NULL);
	ck_assert_uint_eq(nevents("default", "b", "Pending"), 3);
	ck_assert_uint_eq(manager_stats(M)->events_dropped, 0);
	ck_assert_uint_eq(manager_stats(M)->events_posted,
			  manager_stats(M)->events_recorded);
}
END_TEST

/* The recorder alone: the 1024-byte cut on a UTF-8 boundary, the bound
 * of its queue, and nothing left behind. */
START_TEST(event_recorder_bounds)
{
	struct event_recorder_opts eo = { .component = "test-component",
					  .max_queued = 2,
					  .max_inflight = 1 };
	struct event_recorder *r;
	struct event_object o = { .api_version = "v1", .kind = "ConfigMap",
				  .ns = "default", .name = "x" };
	char big[1500];
	json_t *v;
	const char *msg;
	size_t i;

	mgr_start(); /* the loop and the client */
	r = event_recorder_new(inp_kube(), &eo);
	/* 1023 ASCII bytes, then a 2-byte character straddling the cut */
	memset(big, 'a', 1023);
	memcpy(big + 1023, "\xc3\xa9", 2);
	memset(big + 1025, 'b', sizeof(big) - 1026);
	big[sizeof(big) - 1] = '\0';
	event_record(r, &o, EVENT_WARNING, "Big", big);
	for (i = 0; i < 4; i++)
		event_recordf(r, &o, EVENT_NORMAL, "Small", "n=%zu", i);
	/* one in flight, two queued, two dropped */
	ck_assert_uint_eq(event_recorder_stats(r)->dropped, 2);
	ck_assert_uint_eq(event_recorder_pending(r), 3);
	WAIT_FOR(event_recorder_pending(r) == 0, 10000);
	ck_assert_uint_eq(event_recorder_stats(r)->posted, 3);
	ck_assert_uint_eq(event_recorder_stats(r)->failed, 0);
	ck_assert_uint_eq(event_recorder_stats(r)->recorded, 5);
	v = events_of("default", "ConfigMap", "x", "Big");
	ck_assert_uint_eq(json_array_size(v), 1);
	msg = json_string_value(inp_jpath(json_array_get(v, 0), "message"));
	ck_assert_uint_eq(strlen(msg), 1023);
	ck_assert_str_eq(json_string_value(inp_jpath(json_array_get(v, 0),
						     "type")), "Warning");
	ck_assert_str_eq(json_string_value(inp_jpath(json_array_get(v, 0),
						     "reportingComponent")),
			 "test-component");
	json_decref(v);
	v = events_of("default", "ConfigMap", "x", "Small");
	ck_assert_uint_eq(json_array_size(v), 2);
	json_decref(v);
	/* freeing with work queued cancels it cleanly */
	event_record(r, &o, EVENT_NORMAL, "Late", "late");
	event_record(r, &o, EVENT_NORMAL, "Late", "later");
	event_recorder_free(r);
}
END_TEST

/* ---- waitForPodsReady and maximumExecutionTimeSeconds ---- */

static void wfpr_policy(int32_t limit)
{
	MO.ready.enabled = true;
	MO.ready.timeout_ms = 300;
	MO.ready.recovery_timeout_ms = -1;
	MO.ready.has_limit = true;
	MO.ready.backoff_limit = limit;
	MO.ready.backoff_base_s = 1;
	MO.ready.backoff_max_s = 10;
}

/* An ownerless workload never PodsReady: timed out (its reservation
 * cleared in the same write, no Job to stop), requeued after its
 * backoff, deactivated after the limit; active again, it starts over. */
START_TEST(pods_ready_timeout)
{
	wfpr_policy(1);
	mk_queues("2");
	mgr_start();
	mk_wl("default", "w", "lq", "1", 0);
	WAIT_FOR(admitted("default", "w"), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", "w", "Evicted", "True",
			      "PodsReadyTimeout",
			      "Exceeded the PodsReady timeout default/w"),
		 10000);
	ck_assert(inp_has_cond("workloads", "default", "w", "QuotaReserved",
			       "False", "Pending", NULL));
	ck_assert(inp_has_cond("workloads", "default", "w", "Requeued",
			       "False", "PodsReadyTimeout", NULL));
	ck_assert_str_eq(inp_val("workloads", "default", "w",
				 "status.requeueState.count"), "1");
	ck_assert_str_ne(inp_val("workloads", "default", "w",
				 "status.requeueState.requeueAt"), "");
	ck_assert_str_eq(inp_val("workloads", "default", "w",
				 "status.admission"), "");
	ck_assert_str_eq(inp_val("workloads", "default", "w",
		"status.schedulingStats.evictions.0.underlyingCause"),
		"WaitForStart");
	/* after its backoff: BackoffFinished, admitted again */
	WAIT_FOR(inp_has_cond("workloads", "default", "w", "Requeued",
			      "True", "BackoffFinished",
			      "The workload backoff was finished"),
		 10000);
	/* the second timeout is past the limit: deactivated */
	WAIT_FOR(inp_has_cond("workloads", "default", "w", "Evicted", "True",
			      "DeactivatedDueToRequeuingLimitExceeded",
			      "The workload is deactivated due to exceeding "
			      "the maximum number of re-queuing retries"),
		 10000);
	settle();
	ck_assert_str_eq(inp_val("workloads", "default", "w", "spec.active"),
			 "false");
	ck_assert_str_eq(inp_val("workloads", "default", "w",
				 "status.requeueState"), "");
	ck_assert(inp_has_cond("workloads", "default", "w", "QuotaReserved",
			       "False", NULL, NULL));
	{
		json_t *o = inp_get("workloads", "default", "w");

		ck_assert_ptr_null(inp_cond(o, "DeactivationTarget"));
		json_decref(o);
	}
	/* reactivated: Requeued=True Reactivated, a fresh count */
	{
		json_t *p = json_pack("{s:{s:b}}", "spec", "active", 1);

		inp_patch("workloads", "default", "w", NULL, p);
		json_decref(p);
	}
	WAIT_FOR(inp_has_cond("workloads", "default", "w", "Requeued",
			      "True", "Reactivated", NULL),
		 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", "w", "Evicted", "True",
			      "PodsReadyTimeout", NULL) &&
			 !strcmp(inp_val("workloads", "default", "w",
					 "status.requeueState.count"), "1"),
		 10000);
	ck_assert(manager_check(M));
}
END_TEST

/* PodsReady=True (written by hand, as an integration would): never
 * timed out. */
START_TEST(pods_ready_holds)
{
	wfpr_policy(0);
	MO.ready.timeout_ms = 1500;
	mk_queues("2");
	mgr_start();
	mk_wl("default", "w", "lq", "1", 0);
	WAIT_FOR(admitted("default", "w"), 10000);
	{
		json_t *obj = inp_get("workloads", "default", "w");
		json_t *conds = json_deep_copy(
			inp_jpath(obj, "status.conditions"));
		json_t *p;

		json_array_append_new(conds, json_pack(
			"{s:s, s:s, s:s, s:s, s:s}", "type", "PodsReady",
			"status", "True", "reason", "Started", "message",
			"All pods reached readiness and the workload is "
			"running", "lastTransitionTime",
			"2026-01-01T00:00:00Z"));
		p = json_pack("{s:{s:o}}", "status", "conditions", conds);
		inp_patch("workloads", "default", "w", "status", p);
		json_decref(p);
		json_decref(obj);
	}
	inp_spin(2500);
	settle();
	ck_assert(admitted("default", "w"));
	ck_assert(!inp_has_cond("workloads", "default", "w", "Evicted",
				"True", NULL, NULL));
}
END_TEST

/* maximumExecutionTimeSeconds: deactivated once used up, with the
 * cause, the event, and the accumulated time cleared. */
START_TEST(max_exec_time)
{
	char *text = t_wl_json("default", "m", "lq", "1", 0);
	json_t *w = json_loads(text, 0, NULL);

	free(text);
	ck_assert_ptr_nonnull(w);
	json_object_set_new(json_object_get(w, "spec"),
			    "maximumExecutionTimeSeconds", json_integer(1));
	mk_queues("2");
	mgr_start();
	text = json_dumps(w, JSON_COMPACT);
	json_decref(w);
	inp_create_take("workloads", "default", text);
	WAIT_FOR(admitted("default", "m"), 10000);
	WAIT_FOR(inp_has_cond("workloads", "default", "m", "Evicted", "True",
			      "DeactivatedDueToMaximumExecutionTimeExceeded",
			      "The workload is deactivated due to exceeding "
			      "the maximum execution time"),
		 10000);
	settle();
	ck_assert_str_eq(inp_val("workloads", "default", "m", "spec.active"),
			 "false");
	ck_assert_uint_ge(nevents("default", "m",
				  "MaximumExecutionTimeExceeded"), 1);
	/* the admitted second went into the accumulated time at the
	 * clear, after the deactivation target cleared it */
	ck_assert(manager_check(M));
}
END_TEST

/* ---- preemption writes: a slow victim ---- */

/* A validating webhook on workloads/status for objects labelled
 * slow=yes that answers "allowed" after 1.5 s: that victim's eviction
 * write stays unanswered for that long. */
static struct {
	struct tls_material tm;
	struct http_server *hooks;
	char *ca;
} SLOW;

static void slow_serve(void *ctx, const struct http_req *req,
		       struct http_resp *resp)
{
	json_t *rev = json_loads(req->body, 0, NULL);
	const char *uid = json_string_value(json_object_get(
		json_object_get(rev, "request"), "uid"));
	json_t *a = json_pack("{s:s, s:s, s:{s:s, s:b}}", "apiVersion",
			      "admission.k8s.io/v1", "kind",
			      "AdmissionReview", "response", "uid",
			      uid ? uid : "", "allowed", 1);
	char *text = json_dumps(a, JSON_COMPACT);

	(void)ctx;
	usleep(1500 * 1000);
	http_resp_set(resp, 200, "application/json", text, strlen(text));
	json_decref(a);
	json_decref(rev);
}

static void slow_setup(void)
{
	static const char *const ips[] = { "127.0.0.1", NULL };
	static const char *const dns[] = { "slow.webhooks.svc", NULL };
	struct http_opts ho = { .addr = "127.0.0.1" };
	struct api_endpoint ep = { "webhooks", "slow", "127.0.0.1", 0 };
	struct err err = { "" };

	memset(&MO, 0, sizeof(MO));
	MO.status_interval_ms = 20;
	memset(&SLOW, 0, sizeof(SLOW));
	ck_assert_int_eq(tls_generate(dns, ips, &SLOW.tm, &err), 0);
	SLOW.ca = b64_encode(SLOW.tm.ca_pem, strlen(SLOW.tm.ca_pem),
			     B64_STD);
	ho.cert_pem = SLOW.tm.cert_pem;
	ho.key_pem = SLOW.tm.key_pem;
	SLOW.hooks = http_server_start(&ho, slow_serve, NULL, &err);
	ck_assert_msg(SLOW.hooks != NULL, "webhook server: %s", err.msg);
	ep.port = http_server_port(SLOW.hooks);
	inp_start(&(struct inp_opts){ .endpoint = &ep });
}

static void slow_teardown(void)
{
	mgr_stop();
	inp_stop();
	http_server_stop(SLOW.hooks);
	tls_material_release(&SLOW.tm);
	free(SLOW.ca);
	memset(&SLOW, 0, sizeof(SLOW));
}

/*
 * The race the chaos suite found: a cycle decides to evict V for P; V's
 * eviction write is slow; meanwhile X finishes, and a later cycle finds
 * room for P beside V. P's admission must not reach the server before
 * V's eviction (Kueue writes a cycle's preemptions before any later
 * cycle runs): the manager holds P's write until V's is answered.
 */
START_TEST(preemptor_written_after_its_victims)
{
	json_t *cq, *hook, *v;
	char *text;

	mk_flavor("default");
	text = t_cq_json("cq", "default", "4");
	cq = json_loads(text, 0, NULL);
	free(text);
	ck_assert_ptr_nonnull(cq);
	json_object_set_new(json_object_get(cq, "spec"), "preemption",
			    json_pack("{s:s}", "withinClusterQueue",
				      "LowerPriority"));
	text = json_dumps(cq, JSON_COMPACT);
	inp_create_take("clusterqueues", NULL, text);
	json_decref(cq);
	mk_lq("default", "lq", "cq");
	hook = json_pack(
		"{s:s, s:s, s:{s:s}, s:[{s:s, s:[s], s:s, s:s, s:i,"
		" s:{s:{s:s}}, s:[{s:[s], s:[s], s:[s], s:[s]}],"
		" s:{s:{s:s, s:s, s:s, s:i}, s:s}}]}",
		"apiVersion", "admissionregistration.k8s.io/v1",
		"kind", "ValidatingWebhookConfiguration",
		"metadata", "name", "slow-victims",
		"webhooks", "name", "slow.cueue.dev",
		"admissionReviewVersions", "v1", "sideEffects", "None",
		"failurePolicy", "Fail", "timeoutSeconds", 10,
		"objectSelector", "matchLabels", "slow", "yes",
		"rules", "operations", "UPDATE", "apiGroups",
		"kueue.x-k8s.io", "apiVersions", "*", "resources",
		"workloads/status",
		"clientConfig", "service", "namespace", "webhooks", "name",
		"slow", "path", "/slow", "port", 443, "caBundle", SLOW.ca);
	inp_create_take("validatingwebhookconfigurations", NULL,
			json_dumps(hook, JSON_COMPACT));
	json_decref(hook);
	/* V (priority 0, the victim, slow) and X (priority 5) fill cq */
	text = t_wl_json("default", "v", "lq", "2", 0);
	v = json_loads(text, 0, NULL);
	free(text);
	ck_assert_ptr_nonnull(v);
	json_object_set_new(json_object_get(v, "metadata"), "labels",
			    json_pack("{s:s}", "slow", "yes"));
	inp_create_take("workloads", "default", json_dumps(v, JSON_COMPACT));
	json_decref(v);
	mk_wl("default", "x", "lq", "2", 5);
	mgr_start();
	settle();
	ck_assert(admitted("default", "v"));
	ck_assert(admitted("default", "x"));
	/* P (priority 10) needs V's place */
	mk_wl("default", "p", "lq", "2", 10);
	WAIT_FOR(manager_stats(M)->check_writes == 1, 10000);
	/* V's eviction is in the webhook for 1.5 s: X ends, and there
	 * is room for P without V */
	finish("default", "x");
	/* quota safety on every state seen meanwhile: cq's 4 cpu hold at
	 * most two of the three 2-cpu Workloads */
	{
		struct err err = { "" };
		int64_t t0 = t_mono_ms();

		while (!admitted("default", "p")) {
			ck_assert_int_lt(t_mono_ms() - t0, 20000);
			ck_assert_int_le(holds("default", "v") +
					 holds("default", "x") +
					 holds("default", "p"), 2);
			ck_assert_int_eq(loop_run_once(inp_loop(), 5, &err),
					 0);
		}
		ck_assert_int_le(holds("default", "v") +
				 holds("default", "x") +
				 holds("default", "p"), 2);
	}
	ck_assert_msg(inp_has_cond("workloads", "default", "v", "Evicted",
				   "True", "Preempted", NULL),
		      "P was admitted before V's eviction was written");
	ck_assert_uint_ge(manager_stats(M)->admits_held, 1);
	settle();
	ck_assert(manager_check(M));
}
END_TEST

Suite *manager_suite(void)
{
	Suite *s = suite_create("manager");
	TCase *tc = tcase_create("admission");

	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, admit_and_pending);
	tcase_add_test(tc, missing_flavor);
	tcase_add_test(tc, missing_localqueue);
	tcase_add_test(tc, stopped_queues);
	tcase_add_test(tc, cohort_borrowing);
	tcase_add_test(tc, workload_events);
	tcase_add_test(tc, event_recorder_bounds);
	suite_add_tcase(s, tc);

	tc = tcase_create("lifecycle");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, finalizers);
	tcase_add_test(tc, restart);
	tcase_add_test(tc, conflict_retry);
	tcase_add_test(tc, invalid_clusterqueue);
	suite_add_tcase(s, tc);

	tc = tcase_create("deadlines");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, pods_ready_timeout);
	tcase_add_test(tc, pods_ready_holds);
	tcase_add_test(tc, max_exec_time);
	suite_add_tcase(s, tc);

	tc = tcase_create("preemption_writes");
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, slow_setup, slow_teardown);
	tcase_add_test(tc, preemptor_written_after_its_victims);
	suite_add_tcase(s, tc);

	tc = tcase_create("helpers");
	tcase_add_test(tc, log_logfmt);
	suite_add_tcase(s, tc);
	return s;
}
