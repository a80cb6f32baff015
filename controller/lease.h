/*
 * lease: leader election on a coordination.k8s.io/v1 Lease, with
 * client-go's timing, on the loop (loop.h) and the kube client (kube.h).
 *
 * One record, spec {holderIdentity, leaseDurationSeconds, acquireTime,
 * renewTime, leaseTransitions}, in namespace/name. A candidate reads it
 * and takes it when it is absent (create), free (holderIdentity "": a
 * leader released it) or expired: the record has not changed for the
 * holder's leaseDurationSeconds, measured on this process's own clock
 * from the moment it first saw that version of the record (never from
 * the record's timestamps: clocks of replicas may differ). A take is an
 * update with the read resourceVersion as precondition, so two
 * candidates never both win. A leader renews every retry period (an
 * update with the resourceVersion of its own last write); when it has
 * not renewed for renew_deadline (failed answers, a conflict, a
 * request that hangs: a timer, not an answer, decides), or the record
 * names another holder, it has lost: on_lost runs once and the lease
 * does nothing more. renew_deadline < lease_duration is what makes
 * this safe: the old leader gives up before any candidate may take
 * over.
 *
 * Candidates read the Lease every retry period x [0.25, 0.5) and once
 * more the moment a holder's record expires (client-go waits
 * retryPeriod x [1, 2.2) between tries): a released lease is taken
 * within half a retry period, an expired one within half a retry
 * period of its expiry as this process measures it. lease_release
 * (SIGTERM) writes
 * holderIdentity "" with leaseDurationSeconds 1, as client-go's
 * ReleaseOnCancel does, so the next candidate takes over at its next
 * try instead of after leaseDuration.
 *
 * Requests are sent once each (no_retry) with a timeout of the renew
 * deadline (a slow answer is no failure; the deadline timer alone
 * decides a loss); the lease's own timing is the retry. Lease requests are
 * exempt from the kube client's write fence (kube_fence), so a
 * fenced process can still release.
 *
 * Threads: the loop thread only.
 */
#ifndef CONTROLLER_LEASE_H
#define CONTROLLER_LEASE_H

#include <stdbool.h>
#include <stdint.h>

struct kube;
struct lease;

/* Runs on the loop thread; the lease may not be freed from inside. */
typedef void lease_fn(void *ud);

struct lease_opts {
	const char *ns;            /* copied */
	const char *name;          /* copied */
	const char *identity;      /* copied; unique per process */
	int64_t lease_duration_ms; /* > renew_deadline_ms */
	int64_t renew_deadline_ms; /* > retry_period_ms */
	int64_t retry_period_ms;   /* > 0 */
	lease_fn *on_lead;         /* became leader (once) */
	lease_fn *on_lost;         /* was leader, is no more (once) */
	void *ud;
	uint64_t seed;             /* jitter; 0: from the clock */
};

/* Starts trying at once. k and o's callbacks are borrowed. */
struct lease *lease_new(struct kube *k, const struct lease_opts *o);
void lease_free(struct lease *le);
bool lease_leading(const struct lease *le);
/* The holder last seen in the record ("" when free or unknown). */
const char *lease_holder(const struct lease *le);

/*
 * Gives the lease up: stops renewing and trying, and when leading
 * writes the released record; done(ud) runs once that write answered,
 * failed or timed out (the renew deadline), or at once when not
 * leading.
 * on_lost does not run for a release.
 */
void lease_release(struct lease *le, lease_fn *done, void *ud);

/* For tests and metrics. */
struct lease_stats {
	uint64_t tries;        /* reads and writes sent */
	uint64_t acquired;     /* 0 or 1 */
	uint64_t renewals;     /* successful renew writes */
	uint64_t failures;     /* failed or refused requests */
};
const struct lease_stats *lease_stats(const struct lease *le);

#endif
