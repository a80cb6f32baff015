/*
 * Leader election against the in-process devserver: controller/lease.h
 * (two candidates, renewals, release and hand-over, expiry, a stolen
 * lease), controller/election.h (standalone, shutdown releasing the
 * lease) and the manager's standby (manager_lead, manager_drain).
 * Timing is shortened (lease 3 s, renew deadline 2 s, retry 400 ms);
 * the checks are orderings and safety bounds (nobody takes a lease
 * before it can have expired), never an upper bound on a delay.
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "config/config.h"
#include "controller/election.h"
#include "controller/kube.h"
#include "controller/kubeconfig.h"
#include "controller/lease.h"
#include "controller/manager.h"
#include "inproc.h"
#include "suites.h"
#include "test/support/support.h"

#define NS "kube-system"
#define NAME "test-lease"
#define DUR_MS 3000
#define RENEW_MS 2000
#define RETRY_MS 400

struct cand {
	struct lease *le;
	int leads, losts;
	int64_t lead_ms;    /* t_mono_ms of on_lead */
};

static void on_lead(void *ud)
{
	struct cand *c = ud;

	c->leads++;
	c->lead_ms = t_mono_ms();
}

static void on_lost(void *ud)
{
	struct cand *c = ud;

	c->losts++;
}

static struct kube *second_client(void)
{
	struct kubeconfig kc = KUBECONFIG_INIT;
	struct kube_opts ko = { .qps = -1 };
	struct err err = { "" };
	struct kube *k;

	kc.server = xstrdup(inp_url());
	k = kube_new(inp_loop(), &kc, &ko, &err);
	kubeconfig_release(&kc);
	ck_assert_msg(k != NULL, "kube_new: %s", err.msg);
	return k;
}

static void cand_start(struct cand *c, struct kube *k, const char *id,
		       uint64_t seed)
{
	struct lease_opts o = {
		.ns = NS, .name = NAME, .identity = id,
		.lease_duration_ms = DUR_MS, .renew_deadline_ms = RENEW_MS,
		.retry_period_ms = RETRY_MS, .on_lead = on_lead,
		.on_lost = on_lost, .ud = c, .seed = seed,
	};

	memset(c, 0, sizeof(*c));
	c->le = lease_new(k, &o);
}

static const char *holder(void)
{
	return inp_val("leases", NS, NAME, "spec.holderIdentity");
}

static void setup(void)
{
	inp_start(NULL);
}

static void teardown(void)
{
	inp_stop();
}

static bool released;

static void on_released(void *ud)
{
	(void)ud;
	released = true;
}

START_TEST(one_leader_of_two)
{
	struct kube *k2 = second_client();
	struct cand a, b;
	uint64_t renewals;

	cand_start(&a, inp_kube(), "a", 1);
	cand_start(&b, k2, "b", 2);
	WAIT_FOR(a.leads + b.leads == 1, 10000);
	{
		struct cand *l = a.leads ? &a : &b, *f = a.leads ? &b : &a;
		const char *lid = a.leads ? "a" : "b";

		ck_assert_str_eq(holder(), lid);
		ck_assert(lease_leading(l->le));
		ck_assert(!lease_leading(f->le));
		ck_assert_str_eq(inp_val("leases", NS, NAME,
					 "spec.leaseDurationSeconds"), "3");
		ck_assert_str_eq(inp_val("leases", NS, NAME,
					 "spec.leaseTransitions"), "0");
		/* the leader keeps it; the other never takes it */
		renewals = lease_stats(l->le)->renewals;
		inp_spin(3 * DUR_MS);
		ck_assert_uint_gt(lease_stats(l->le)->renewals, renewals);
		ck_assert_int_eq(l->leads, 1);
		ck_assert_int_eq(l->losts, 0);
		ck_assert_int_eq(f->leads, 0);
		ck_assert_str_eq(lease_holder(f->le), lid);
		ck_assert_str_eq(holder(), lid);

		/* release: holder "" and a 1 s duration, then the other
		 * takes over with one transition more */
		released = false;
		lease_release(l->le, on_released, NULL);
		WAIT_FOR(released, 5000);
		ck_assert(!lease_leading(l->le));
		WAIT_FOR(f->leads == 1, 5000);
		ck_assert_str_eq(holder(), lid[0] == 'a' ? "b" : "a");
		ck_assert_str_eq(inp_val("leases", NS, NAME,
					 "spec.leaseTransitions"), "1");
		ck_assert_int_eq(l->losts, 0); /* a release is no loss */
	}
	lease_free(a.le);
	lease_free(b.le);
	kube_free(k2);
}
END_TEST

/* A leader that stops without releasing (SIGKILL): the other takes over
 * only once the record can have expired: not before the dead one's last
 * possible renewal plus the lease duration. */
START_TEST(takeover_after_expiry)
{
	struct kube *k2 = second_client();
	struct cand a, b;
	int64_t gone;

	cand_start(&a, inp_kube(), "a", 3);
	WAIT_FOR(a.leads == 1, 10000);
	cand_start(&b, k2, "b", 4);
	inp_spin(3 * RETRY_MS);
	ck_assert_int_eq(b.leads, 0);
	ck_assert(lease_leading(a.le));
	lease_free(a.le); /* no release */
	a.le = NULL;
	gone = t_mono_ms();
	WAIT_FOR(b.leads == 1, 10000);
	/* a renewed at most RENEW_MS before it went (it still led) */
	ck_assert_msg(b.lead_ms >= gone - RENEW_MS + DUR_MS,
		      "b led %lld ms after a stopped",
		      (long long)(b.lead_ms - gone));
	ck_assert_str_eq(holder(), "b");
	ck_assert_str_eq(inp_val("leases", NS, NAME, "spec.leaseTransitions"),
			 "1");
	lease_free(b.le);
	kube_free(k2);
}
END_TEST

/* Somebody else writes the record (another process took it): the
 * leader's next renewal conflicts, it reads the record and has lost. */
START_TEST(stolen_lease_is_lost)
{
	struct cand a;
	json_t *p;

	cand_start(&a, inp_kube(), "a", 5);
	WAIT_FOR(a.leads == 1, 10000);
	p = json_pack("{s:{s:s}}", "spec", "holderIdentity", "intruder");
	inp_patch("leases", NS, NAME, NULL, p);
	json_decref(p);
	WAIT_FOR(a.losts == 1, 10000);
	ck_assert(!lease_leading(a.le));
	ck_assert_str_eq(holder(), "intruder");
	/* nothing more from it */
	inp_spin(3 * RETRY_MS);
	ck_assert_int_eq(a.leads, 1);
	ck_assert_int_eq(a.losts, 1);
	ck_assert_str_eq(holder(), "intruder");
	lease_free(a.le);
}
END_TEST

/* ---- the manager on standby ---- */

static bool admitted(const char *ns, const char *name)
{
	return inp_has_cond("workloads", ns, name, "QuotaReserved", "True",
			    "QuotaReserved", NULL);
}

static void mk_queues(void)
{
	inp_create_take("resourceflavors", NULL, t_flavor_json("default"));
	inp_create_take("clusterqueues", NULL,
			t_cq_json("cq", "default", "4"));
	inp_create_take("localqueues", "default",
			t_lq_json("default", "lq", "cq"));
}

START_TEST(standby_manager_writes_nothing_until_it_leads)
{
	struct manager_opts mo = { .status_interval_ms = 20,
				   .standby = true };
	struct manager_vis_query q = {
		.api_version = "visibility.kueue.x-k8s.io/v1beta1",
		.cq = "cq" };
	struct manager *m;
	const struct manager_stats *st;
	unsigned code = 0;
	char *body;

	mk_queues();
	inp_create_take("workloads", "default",
			t_wl_json("default", "a", "lq", "1", 0));
	m = manager_new(inp_kube(), &mo);
	WAIT_FOR(manager_synced(m), 10000);
	ck_assert(!manager_active(m));
	inp_spin(500);
	/* the follower's passive state answers the visibility API (Kueue
	 * serves it from every replica) */
	body = manager_visibility(m, &q, &code);
	ck_assert_uint_eq(code, 200);
	ck_assert_msg(strstr(body, "\"name\":\"a\"") &&
		      strstr(body, "\"positionInClusterQueue\":0"), "%s",
		      body);
	free(body);
	st = manager_stats(m);
	ck_assert_uint_eq(st->admit_writes, 0);
	ck_assert_uint_eq(st->pending_writes, 0);
	ck_assert_uint_eq(st->status_writes, 0);
	ck_assert_uint_eq(st->finalizer_writes, 0);
	ck_assert_uint_eq(kube_writes_pending(inp_kube()), 0);
	ck_assert(!admitted("default", "a"));
	ck_assert_str_eq(inp_val("clusterqueues", NULL, "cq", "status"), "");
	/* leads: admits what waited, writes queue status */
	manager_lead(m);
	ck_assert(manager_active(m));
	WAIT_FOR(admitted("default", "a"), 10000);
	ck_assert(manager_check(m));
	body = manager_visibility(m, &q, &code);
	ck_assert_uint_eq(code, 200);
	ck_assert_msg(!strstr(body, "\"name\":\"a\""), "%s", body);
	free(body);
	WAIT_FOR(!strcmp(inp_val("clusterqueues", NULL, "cq",
				 "status.admittedWorkloads"), "1"), 5000);
	/* drained: no more decisions */
	manager_drain(m);
	ck_assert(!manager_active(m));
	inp_create_take("workloads", "default",
			t_wl_json("default", "b", "lq", "1", 0));
	inp_spin(500);
	ck_assert(!admitted("default", "b"));
	ck_assert(manager_idle(m));
	manager_free(m);
}
END_TEST

/* ---- election ---- */

static void cfg_with(struct config *c, bool elect)
{
	config_defaults(c, CONFIG_API_V1BETA2, NULL);
	c->le_leader_elect = elect;
	c->le_lease_duration_ms = DUR_MS;
	c->le_renew_deadline_ms = RENEW_MS;
	c->le_retry_period_ms = RETRY_MS;
	free(c->le_resource_name);
	c->le_resource_name = xstrdup(NAME);
	free(c->le_resource_namespace);
	c->le_resource_namespace = xstrdup(NS);
}

START_TEST(election_standalone_leads_at_once)
{
	struct config c;
	struct manager_opts mo = { .status_interval_ms = 20 };
	struct election_opts eo = { .cfg = &c, .identity = "solo" };
	struct election *e;
	struct manager *m;
	struct err err = { "" };

	cfg_with(&c, false);
	mk_queues();
	inp_create_take("workloads", "default",
			t_wl_json("default", "a", "lq", "1", 0));
	m = manager_new(inp_kube(), &mo);
	eo.m = m;
	e = election_new(inp_kube(), &eo);
	ck_assert_str_eq(election_role(e), "standalone");
	WAIT_FOR(admitted("default", "a"), 10000);
	ck_assert(!inp_exists("leases", NS, NAME)); /* no Lease taken */
	ck_assert_int_eq(election_shutdown(e, &err), 0);
	ck_assert(kube_fenced(inp_kube()));
	election_free(e);
	manager_free(m);
	config_release(&c);
}
END_TEST

/* Two replicas in one process (one client each): the follower's manager
 * is synced and inactive; the leader's shutdown releases the Lease, and
 * the follower takes over and admits. */
START_TEST(election_shutdown_hands_over)
{
	struct config c;
	struct kube *k2 = second_client();
	struct manager_opts mo = { .status_interval_ms = 20,
				   .standby = true };
	struct election_opts eo1 = { .cfg = &c, .identity = "one" };
	struct election_opts eo2 = { .cfg = &c, .identity = "two" };
	struct election *e1, *e2;
	struct manager *m1, *m2;
	struct err err = { "" };

	cfg_with(&c, true);
	mk_queues();
	inp_create_take("workloads", "default",
			t_wl_json("default", "a", "lq", "1", 0));
	m1 = manager_new(inp_kube(), &mo);
	eo1.m = m1;
	e1 = election_new(inp_kube(), &eo1);
	WAIT_FOR(!strcmp(election_role(e1), "leader"), 10000);
	m2 = manager_new(k2, &mo);
	eo2.m = m2;
	e2 = election_new(k2, &eo2);
	WAIT_FOR(manager_synced(m2), 10000);
	ck_assert_str_eq(election_role(e2), "follower");
	ck_assert(!manager_active(m2));
	WAIT_FOR(admitted("default", "a"), 10000);
	ck_assert_str_eq(holder(), "one");

	/* the leader shuts down (its loop is shared here, so the follower
	 * runs during it too) */
	ck_assert_int_eq(election_shutdown(e1, &err), 0);
	ck_assert(kube_fenced(inp_kube()));
	ck_assert(!manager_active(m1));
	WAIT_FOR(!strcmp(election_role(e2), "leader"), 5000);
	ck_assert(manager_active(m2));
	ck_assert_str_eq(holder(), "two");
	inp_create_take("workloads", "default",
			t_wl_json("default", "b", "lq", "1", 0));
	WAIT_FOR(admitted("default", "b"), 10000);
	/* the stored admission can be seen before m2 read its answer */
	WAIT_FOR(manager_stats(m2)->admitted == 1, 10000);
	ck_assert_uint_eq(manager_stats(m1)->admitted, 1);

	election_free(e1);
	manager_free(m1);
	election_free(e2);
	manager_free(m2);
	kube_free(k2);
	config_release(&c);
}
END_TEST

Suite *lease_suite(void)
{
	Suite *s = suite_create("lease");
	TCase *tc = tcase_create("lease");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, one_leader_of_two);
	tcase_add_test(tc, takeover_after_expiry);
	tcase_add_test(tc, stolen_lease_is_lost);
	tcase_add_test(tc, standby_manager_writes_nothing_until_it_leads);
	tcase_add_test(tc, election_standalone_leads_at_once);
	tcase_add_test(tc, election_shutdown_hands_over);
	suite_add_tcase(s, tc);
	return s;
}
