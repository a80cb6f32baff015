/*
 * election: the replica's role (election.h). Owns the lease (lease.h)
 * when leader election is on, the role gauges, and the shutdown
 * sequence; borrows the kube client, the loop and the manager.
 */
#include "controller/election.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base/alloc.h"
#include "config/config.h"
#include "controller/kube.h"
#include "controller/lease.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/manager.h"
#include "controller/metrics.h"

#define DEFAULT_DRAIN_MS 5000
#define WAIT_STEP_MS 100

enum role { ROLE_STANDALONE, ROLE_FOLLOWER, ROLE_LEADER };

static const char *const role_names[] = {
	[ROLE_STANDALONE] = "standalone",
	[ROLE_FOLLOWER] = "follower",
	[ROLE_LEADER] = "leader",
};

struct election {
	struct kube *k;           /* borrowed */
	struct loop *l;           /* borrowed */
	struct manager *m;        /* borrowed */
	struct lease *le;         /* owned; NULL when standalone */
	char *identity;           /* owned */
	char *lease_name;         /* owned */
	enum role role;
	bool lost;
	bool released;
	int64_t drain_ms, retry_ms;
	struct metric *role_g[3]; /* cueue_replica_role children, or NULL */
	struct metric *master_g;  /* leader_election_master_status, or
				     NULL */
};

static void publish(struct election *e)
{
	for (int i = 0; i < 3; i++)
		if (e->role_g[i])
			metric_set(e->role_g[i], (int)e->role == i ? 1 : 0);
	if (e->master_g)
		metric_set(e->master_g, e->role == ROLE_LEADER ? 1 : 0);
}

static void on_lead(void *ud)
{
	struct election *e = ud;

	e->role = ROLE_LEADER;
	publish(e);
	manager_lead(e->m);
}

static void on_lost(void *ud)
{
	struct election *e = ud;

	/* Stop writing before anything else runs: the fence aborts what
	 * is being sent and refuses the rest. */
	kube_fence(e->k);
	manager_drain(e->m);
	e->lost = true;
	e->role = ROLE_FOLLOWER;
	publish(e);
	loop_stop(e->l);
}

static char *make_identity(void)
{
	char host[256] = "";
	unsigned char rb[4] = { 0 };

	if (gethostname(host, sizeof(host) - 1) < 0 || !host[0])
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	if (getrandom(rb, sizeof(rb), 0) != (ssize_t)sizeof(rb)) {
		unsigned long x = (unsigned long)getpid() * 2654435761u;

		memcpy(rb, &x, sizeof(rb));
	}
	return xasprintf("%s_%ld_%02x%02x%02x%02x", host, (long)getpid(),
			 rb[0], rb[1], rb[2], rb[3]);
}

struct election *election_new(struct kube *k, const struct election_opts *o)
{
	struct election *e = xcalloc(1, sizeof(*e));
	const struct config *c = o->cfg;

	e->k = k;
	e->l = kube_loop(k);
	e->m = o->m;
	e->identity = o->identity ? xstrdup(o->identity) : make_identity();
	e->drain_ms = o->drain_ms > 0 ? o->drain_ms : DEFAULT_DRAIN_MS;
	e->lease_name = xstrdup(c->le_resource_name && c->le_resource_name[0]
					? c->le_resource_name
					: "c1f6bfd2.kueue.x-k8s.io");
	if (o->registry) {
		static const char *const role_l[] = { "role", NULL };
		static const char *const name_l[] = { "name", NULL };
		struct metric_family *f = metrics_gauge(
			o->registry, "cueue_replica_role",
			"This replica's role: leader, follower or standalone "
			"(1 for the current role).", role_l);

		for (int i = 0; i < 3; i++) {
			const char *v[] = { role_names[i], NULL };

			e->role_g[i] = metric_family_get(f, v);
		}
		if (c->le_leader_elect) {
			const char *v[] = { e->lease_name, NULL };

			f = metrics_gauge(o->registry,
					  "leader_election_master_status",
					  "1 while this replica holds the "
					  "lease named by 'name', else 0.",
					  name_l);
			e->master_g = metric_family_get(f, v);
		}
	}
	if (!c->le_leader_elect) {
		e->role = ROLE_STANDALONE;
		publish(e);
		log_msg(LOG_INFO, "leader", NULL, NULL,
			"leader election off: this replica leads alone");
		manager_lead(e->m);
		return e;
	}
	e->role = ROLE_FOLLOWER;
	e->retry_ms = c->le_retry_period_ms;
	publish(e);
	{
		const char *ns = c->le_resource_namespace &&
					 c->le_resource_namespace[0]
				 ? c->le_resource_namespace
				 : c->namespace;
		struct lease_opts lo = {
			.ns = ns && ns[0] ? ns : "cueue-system",
			.name = e->lease_name,
			.identity = e->identity,
			.lease_duration_ms = c->le_lease_duration_ms,
			.renew_deadline_ms = c->le_renew_deadline_ms,
			.retry_period_ms = c->le_retry_period_ms,
			.on_lead = on_lead, .on_lost = on_lost, .ud = e,
		};

		log_msg(LOG_INFO, "leader", lo.ns, lo.name,
			"leader election on: identity %s, leaseDuration %lld "
			"ms, renewDeadline %lld ms, retryPeriod %lld ms",
			e->identity, (long long)lo.lease_duration_ms,
			(long long)lo.renew_deadline_ms,
			(long long)lo.retry_period_ms);
		e->le = lease_new(k, &lo);
	}
	return e;
}

void election_free(struct election *e)
{
	if (!e)
		return;
	lease_free(e->le);
	free(e->identity);
	free(e->lease_name);
	free(e);
}

const char *election_role(const struct election *e)
{
	return role_names[e->role];
}

bool election_lost(const struct election *e)
{
	return e->lost;
}

const char *election_identity(const struct election *e)
{
	return e->identity;
}

static void on_released(void *ud)
{
	struct election *e = ud;

	e->released = true;
}

/* Runs the loop until done(e) or until ms have passed or a signal. */
static int run_until(struct election *e, bool (*done)(struct election *),
		     int64_t ms, struct err *err)
{
	int64_t end = loop_now_ms(e->l) + ms;

	while (!done(e) && loop_now_ms(e->l) < end &&
	       !loop_is_stopping(e->l))
		if (loop_run_once(e->l, WAIT_STEP_MS, err) < 0)
			return -1;
	return 0;
}

static bool writes_done(struct election *e)
{
	return kube_writes_pending(e->k) == 0;
}

static bool release_done(struct election *e)
{
	return e->released;
}

int election_shutdown(struct election *e, struct err *err)
{
	int64_t t0;
	size_t left;

	loop_resume(e->l);
	manager_drain(e->m);
	t0 = loop_now_ms(e->l);
	if (run_until(e, writes_done, e->drain_ms, err) < 0)
		return -1;
	left = kube_writes_pending(e->k);
	log_msg(left ? LOG_WARN : LOG_INFO, "leader", NULL, NULL,
		"shutdown: writes in flight %s after %lld ms%s",
		left ? "still pending" : "finished",
		(long long)(loop_now_ms(e->l) - t0),
		left ? ", the rest are dropped" : "");
	kube_fence(e->k);
	if (!e->le)
		return 0;
	lease_release(e->le, on_released, e);
	if (run_until(e, release_done, e->retry_ms + WAIT_STEP_MS, err) < 0)
		return -1;
	e->role = ROLE_FOLLOWER;
	publish(e);
	return 0;
}
