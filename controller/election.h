/*
 * election: the replica's role, around the manager (issue: several
 * replicas, one leader). With the Configuration's leaderElection
 * .leaderElect, the replica takes part in leader election on the Lease
 * resourceNamespace/resourceName (lease.h, client-go's timing from
 * leaseDuration, renewDeadline and retryPeriod); otherwise it is
 * "standalone" and leads at once.
 *
 * Every replica serves the webhooks, /metrics, /healthz and /readyz and
 * keeps its informers warm (wiring.h, a manager made with
 * opts.standby). Only the leader decides and writes:
 *  - acquired: manager_lead (the caches go to sched; the Job
 *    integration starts with them, manager_active);
 *  - lost (renew deadline passed, or the Lease names another holder):
 *    kube_fence at once (no write of this process is sent any more; one
 *    being sent is aborted), then the loop stops and the process exits
 *    1, as a controller-runtime manager does; its supervisor restarts
 *    it as a follower;
 *  - election_shutdown (SIGTERM, SIGINT): no more decisions
 *    (manager_drain), the writes in flight finish (at most drain_ms),
 *    the fence, then the Lease is released (holderIdentity "") so the
 *    next replica takes over at its next try, within a retry period.
 *    The certificate manager keeps running on every replica, as
 *    Kueue's cert rotator does (it does not need the lease).
 *
 * Who leads: cueue_replica_role{role="leader"|"follower"|"standalone"}
 * (1 for the current role, 0 for the others; cueue's equivalent of
 * Kueue's replica_role label) and client-go's
 * leader_election_master_status{name=<lease name>} (1 while leading),
 * one log line at each change, and the Lease's holderIdentity,
 * "<hostname>_<pid>_<8 hex digits>" (the pid lets devcluster match a
 * holder to a process).
 *
 * Threads: the loop thread only.
 */
#ifndef CONTROLLER_ELECTION_H
#define CONTROLLER_ELECTION_H

#include <stdbool.h>
#include <stdint.h>

#include "model/errors.h"

struct config;
struct kube;
struct manager;
struct metrics;
struct election;

struct election_opts {
	const struct config *cfg; /* borrowed: leaderElection, namespace */
	struct manager *m;        /* borrowed; made with opts.standby iff
				     cfg->le_leader_elect */
	struct metrics *registry; /* borrowed; NULL: no metrics */
	const char *identity;     /* NULL: <hostname>_<pid>_<random> */
	int64_t drain_ms;         /* shutdown: wait for writes in flight
				     at most this long; 0: 5 s */
};

struct election *election_new(struct kube *k, const struct election_opts *o);
void election_free(struct election *e);
/* "leader", "follower" or "standalone". */
const char *election_role(const struct election *e);
/* The lease was lost: the loop was stopped, the writes fenced; exit 1. */
bool election_lost(const struct election *e);
const char *election_identity(const struct election *e);
/*
 * After loop_run returned on a signal: drains, fences and releases as
 * above, running the loop itself (a second signal cuts it short).
 * Returns 0, or -1 + err when the loop fails.
 */
int election_shutdown(struct election *e, struct err *err);

#endif
