/*
 * explain: why a workload waits, with the arithmetic (issue 20's
 * `kubectl cueue explain` and `simulate`). It asks the scheduling state
 * the very question the next cycle asks (the flavor assignment, then the
 * preemption search, with the cycle's oracle), on the tree as it is, and
 * keeps every step of the answer as data:
 *
 *  - per pod set the count and the per-pod requests;
 *  - per flavor tried the reasons it was rejected (taint, node labels,
 *    missing flavor, quota), each with the sentence Kueue's message
 *    uses, so the explanation agrees with QuotaReserved's message and
 *    adds to it;
 *  - per flavor x resource of the ClusterQueue that the workload asks
 *    for: the request, nominal quota, borrowing and lending limits, what
 *    the queue uses, what it could take now and at most (the cohort
 *    empty), and the workloads holding most of it (queue and cohort);
 *  - the victims the preemption policy would take, if any;
 *  - whether it can never fit as the queues are set up (every flavor of
 *    some pod set rejected for a reason no release of quota can lift);
 *  - an estimated start: when enough of the running workloads that carry
 *    a maximum execution time have reached it for the workload to fit
 *    (nothing else assumed to change), or 0 when that never suffices.
 *
 * Nothing of the state changes: the tree is restored, the workload stays
 * where it is in its queue, and no decision is recorded. Pure, like
 * sched: no I/O, no clock (now_ms is passed in).
 */
#ifndef FLAVORS_EXPLAIN_H
#define FLAVORS_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flavors/assign.h"
#include "flavors/sched.h"

enum sched_xstate {
	SX_UNKNOWN = 0, /* no such workload */
	SX_NOT_QUEUED,  /* known but in no ClusterQueue's queue (its
			   LocalQueue or ClusterQueue is missing or
			   stopped; the controller says which) */
	SX_PENDING,     /* in its ClusterQueue's queue (active heap) */
	SX_PARKED,      /* in its ClusterQueue's inadmissible set */
	SX_HOLDING,     /* holds quota (admitted or reserving) */
	SX_FINISHED,    /* finished or inactive without a reservation */
};

/* What rejected a flavor for a pod set (the kinds of Kueue's reasons). */
enum sched_xkind {
	SXK_QUOTA = 0,      /* not enough unused quota now */
	SXK_MAX_CAPACITY,   /* more than the queue could ever reach */
	SXK_TAINT,          /* a taint the pod set does not tolerate */
	SXK_LABEL,          /* node selector / affinity vs flavor labels */
	SXK_NOT_FOUND,      /* the ResourceFlavor does not exist */
	SXK_UNAVAILABLE,    /* the ClusterQueue does not cover the resource */
	SXK_TOPOLOGY,       /* a topology asked or offered where the other
			       side has none, or one cueue cannot place */
};

struct sched_xreason {
	int32_t ps;           /* pod set index */
	enum sched_xkind kind;
	const char *flavor;   /* borrowed; "" when none */
	const char *resource; /* borrowed; "" when none */
	int64_t needed;       /* SXK_QUOTA: milli-units more needed;
				 SXK_MAX_CAPACITY: the request (earlier
				 pod sets included) */
	int64_t max;          /* SXK_MAX_CAPACITY: the maximum capacity */
	char *text;           /* owned: Kueue's sentence */
};

struct sched_xholder {
	const struct workload *w; /* borrowed */
	const char *cq;           /* borrowed: where its usage is */
	int64_t v;                /* milli-units of this flavor x resource */
};

#define SCHED_XHOLDERS 3

struct sched_xquota {
	const char *flavor;    /* borrowed */
	const char *resource;  /* borrowed */
	int64_t request;       /* the workload's total of the resource
				  (per pod x count, every pod set asking
				  for it), milli-units */
	int64_t nominal;
	bool has_borrowing_limit, has_lending_limit;
	int64_t borrowing_limit, lending_limit;
	int64_t used;          /* by this ClusterQueue's holders */
	int64_t cohort_used;   /* by every queue of its cohort tree */
	int64_t available;     /* what it could take now (borrowing
				  included) */
	int64_t max;           /* what it could take at most: the cohort
				  empty (Kueue's maximum capacity) */
	struct sched_xholder top[SCHED_XHOLDERS]; /* largest first */
	size_t ntop;           /* in this ClusterQueue */
	struct sched_xholder ctop[SCHED_XHOLDERS];
	size_t nctop;          /* in the rest of the cohort tree */
};

struct sched_xpodset {
	const char *name;      /* borrowed */
	int32_t count;         /* effective count */
	int32_t min_count;     /* == count without minCount */
	const char **res;      /* owned array of borrowed names */
	int64_t *per_pod;      /* owned; milli-units, by res index */
	size_t nres;
	const char **flavor;   /* owned array: the flavor chosen for each
				  res (NULL: none); only when the
				  assignment reached this pod set */
	int32_t assigned_count; /* the count assigned (partial admission) */
};

struct sched_xvictim {
	const struct workload *w; /* borrowed */
	const char *cq;           /* borrowed */
	const char *reason;       /* static: the Preempted reason */
};

struct sched_explain {
	enum sched_xstate state;
	const struct workload *w;  /* borrowed; NULL when unknown */
	const char *cq;            /* borrowed; queue (or holder) CQ */
	const char *lq;            /* borrowed; "ns/name" or NULL */
	bool cq_active;
	const char *cq_reason;     /* borrowed: the Active condition's */
	const char *cq_message;
	bool strict_fifo;          /* the queue is StrictFIFO */
	int32_t position;          /* 0-based in the ClusterQueue; -1 */
	int32_t priority;          /* effective */
	/* The assignment (SX_PENDING / SX_PARKED with a ClusterQueue): */
	bool assessed;
	bool ns_mismatch;          /* the namespace is not selected */
	enum assign_mode mode;
	int borrowing;             /* borrowing level of the assignment */
	char *message;             /* owned: the QuotaReserved message the
				      cycle would write ("" on a fit) */
	struct sched_xpodset *ps;  /* owned */
	size_t nps;
	struct sched_xreason *reasons; /* owned */
	size_t nreasons;
	struct sched_xquota *quota;    /* owned */
	size_t nquota;
	struct sched_xvictim *victims; /* owned */
	size_t nvictims;
	bool never_fits;
	/* Estimated start (ms since the epoch) when holders with a
	 * maximum execution time end; 0: unknown. est_after: how many of
	 * them must end first. */
	int64_t est_start_ms;
	size_t est_after;
};

/*
 * Explains workload ns/name at now_ms into out (released first). Returns
 * out->state. Not const: the assessment uses sched's scratch (the state
 * is as it was on return).
 */
enum sched_xstate sched_explain(struct sched *s, const char *ns,
				const char *name, int64_t now_ms,
				struct sched_explain *out);
/* As sched_explain without the position, the quota rows and the
 * estimated start: the verdict and its reasons only (doctor's never-fits
 * check over every pending workload). */
enum sched_xstate sched_explain_fit(struct sched *s, const char *ns,
				    const char *name, int64_t now_ms,
				    struct sched_explain *out);
void sched_explain_release(struct sched_explain *x);

/* "quota", "maxCapacity", "taint", "label", "notFound", "unavailable",
 * "topology". */
const char *sched_xkind_name(enum sched_xkind k);
/* "unknown", "notQueued", "pending", "inadmissible", "admitted",
 * "finished". */
const char *sched_xstate_name(enum sched_xstate st);

#endif
