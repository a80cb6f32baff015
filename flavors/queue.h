/*
 * queue: the pending workloads of one ClusterQueue (kueue-scheduler.md §1):
 * a binary heap in admission order, the inadmissible ("parked") set, the
 * StrictFIFO / BestEffortFIFO requeue rules, eviction backoff and the
 * sticky preemptor.
 *
 * Intrusive, like the Linux kernel's lists: a struct qitem lives inside
 * the caller's workload record and the queue only links items, so it
 * allocates nothing per workload and never owns or frees them. An item is
 * in exactly one place: nowhere, the heap, the parked set, or inflight
 * (popped for the current cycle).
 *
 * Order (smaller pops first): the sticky preemptor (BestEffortFIFO only),
 * then higher priority, then earlier queue-order timestamp, then smaller
 * uid: a total order, so the same inputs always admit in the same order
 * (Kueue v0.14 has no uid tie-break; cueue wants predictability).
 *
 * Scheduling equivalence (kueue-scheduler.md §1.3, Kueue's
 * SchedulingEquivalenceHashing): under BestEffortFIFO, items with the same
 * non-zero eq_hash and no backoff form a class. Only the class's
 * best-ordered waiting item (its representative) sits in the heap; the
 * others wait behind it (QPLACE_CLASS). When a popped item is given back
 * with NoFit or PreemptionNoCandidates and parks, its whole class parks
 * with it in O(log n), without touching the members; a requeue event
 * unparks each class in O(log n), so only one representative per class
 * is tried again. An item pushed while its class is parked is tried once
 * on its own (a probe) and joins the class if it fails too. StrictFIFO
 * queues have no classes (Kueue: a blocked head must not hide others).
 *
 * Pure: no I/O; `now` is passed in. Not thread-safe.
 */
#ifndef FLAVORS_QUEUE_H
#define FLAVORS_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/objects.h" /* enum queueing_strategy */

enum qplace {
	QPLACE_NONE = 0,   /* not queued */
	QPLACE_HEAP,       /* active: a candidate for the next cycles */
	QPLACE_PARKED,     /* inadmissible until a requeue event */
	QPLACE_INFLIGHT,   /* popped for the current cycle */
	QPLACE_CLASS,      /* waiting in its equivalence class: behind the
			      class's representative, or parked with the
			      whole class (queue_item_parked tells which) */
};

struct qclass; /* queue-private: one equivalence class of a queue */

/* Embed in the caller's workload record; zero it before first use. */
struct qitem {
	int32_t priority;      /* effective priority (nil -> 0) */
	int64_t ts_ms;         /* queue-order timestamp (§1.2) */
	const char *uid;       /* borrowed: lives as long as the record */
	int64_t requeue_at_ms; /* backoff: not before this; 0 = none */
	bool requeued_false;   /* condition Requeued=False: stays parked */
	/* Scheduling equivalence hash (kueue-scheduler.md §1.3): items of a
	 * BestEffortFIFO queue with the same non-zero hash must get the same
	 * verdict from the scheduler at the same quota state. 0 = none. */
	uint64_t eq_hash;
	/* Admission fair sharing: its LocalQueue's weighted usage, ordered
	 * before priority when the queue is by_usage (smaller first). The
	 * caller keeps it current and calls queue_reheap after changing
	 * it for queued items. */
	double afs;
	/* queue-private: */
	uint64_t uid_pre;      /* first 8 bytes of uid, big-endian: most
				  uid ties resolve without strcmp */
	struct qclass *cls;    /* its class while QPLACE_CLASS or the class
				  representative in the heap */
	bool fresh;            /* in a class, not evaluated since queued */
	enum qplace place;
	size_t heap_index;     /* position in the heap when QPLACE_HEAP */
	struct qitem *park_prev, *park_next; /* parked list links */
	uint64_t pop_cycle;    /* cycle it was popped in */
};

/* Why the scheduler gives a popped item back (Kueue's RequeueReason). */
enum requeue_reason {
	RQ_GENERIC = 0,          /* nothing nominated */
	RQ_NO_FIT,               /* does not fit now */
	RQ_NAMESPACE_MISMATCH,   /* namespace not selected by the CQ */
	RQ_PREEMPTION_NO_CANDIDATES,
	RQ_FAILED_AFTER_NOMINATION, /* lost a race inside the cycle */
	RQ_PENDING_PREEMPTION,   /* issued preemptions; wait for victims */
	RQ_PREEMPTION_FAILED,    /* eviction writes failed */
};

struct cq_queue {
	enum queueing_strategy strategy;
	struct qitem **heap;     /* owned array of borrowed items */
	size_t nheap;
	size_t cap;
	struct qitem *parked;    /* head of the parked list (borrowed) */
	/* equivalence classes (queue-private) */
	struct qclass **cbucket; /* owned hash table, chained */
	size_t ncbucket, nclass;
	struct qclass *cparked;  /* list of parked classes */
	struct qclass *cfree;    /* freed classes kept for reuse */
	size_t nclass_active;    /* items waiting behind a representative */
	size_t nclass_parked;    /* items of parked classes */
	size_t nparked;
	size_t ninflight;
	struct qitem *sticky;    /* preemptor kept at the head, or NULL */
	uint64_t cycle;          /* bumped by queue_pop's caller per cycle */
	uint64_t requeue_cycle;  /* cycle of the last requeue event */
	bool by_usage;           /* admission fair sharing order */
};

void queue_init(struct cq_queue *q, enum queueing_strategy strategy);
/* Frees the heap array; items are left linked nowhere (QPLACE_NONE). */
void queue_release(struct cq_queue *q);
/* Changes the strategy (a spec update); order is unchanged. */
void queue_set_strategy(struct cq_queue *q, enum queueing_strategy s);
/*
 * Admission fair sharing (UsageBasedAdmissionFairSharing): items are
 * ordered by their afs key (lower first) after the sticky preemptor and
 * before priority. Such a queue has no equivalence classes (items of
 * one class may belong to different LocalQueues). queue_reheap restores
 * the heap order after the caller changed afs keys of queued items.
 */
void queue_set_by_usage(struct cq_queue *q, bool on);
void queue_reheap(struct cq_queue *q);

/*
 * A pending workload was added or changed (PushOrUpdate). A parked item
 * stays parked, updated in place, unless changed says something relevant
 * moved (spec, generation, reclaimable pods, Evicted/Requeued
 * conditions). Otherwise: when its backoff has not expired (now <
 * requeue_at_ms) or requeued_false is set it is parked; else it joins
 * (or is re-sorted in) the heap. An inflight item only has its keys
 * updated (the cycle decides where it goes).
 */
void queue_push(struct cq_queue *q, struct qitem *it, bool changed,
		int64_t now_ms);
/* Takes it out of wherever it is (deleted, admitted, moved queue). */
void queue_remove(struct cq_queue *q, struct qitem *it);

/* The head without popping, or NULL. */
struct qitem *queue_peek(const struct cq_queue *q);
/* Pops the head into inflight for cycle (stamps pop_cycle), or NULL.
 * Cycles start at 1 and never decrease (BUG otherwise). */
struct qitem *queue_pop(struct cq_queue *q, uint64_t cycle);

/*
 * Gives back an inflight item the cycle did not admit (§1.3
 * RequeueIfNotPresent): back to the heap when the reason is immediate
 * for this strategy (StrictFIFO: anything but a namespace mismatch;
 * BestEffortFIFO: FailedAfterNomination, PendingPreemption,
 * PreemptionFailed), or a requeue event happened since it was popped;
 * parked otherwise. PendingPreemption makes it the sticky preemptor under
 * BestEffortFIFO; any other reason forgets it if it was (Kueue: a
 * preemptor until admitted, unschedulable or deleted). Backoff is
 * honoured (an unexpired item is parked). No-op unless it is inflight.
 */
void queue_requeue(struct cq_queue *q, struct qitem *it,
		   enum requeue_reason reason, int64_t now_ms);

/* Whether it waits parked: in the parked set or in a parked class. */
bool queue_item_parked(const struct cq_queue *q, const struct qitem *it);

/*
 * Right after queue_requeue parked it into its class: visits (and marks
 * evaluated) every member of that class that was never evaluated since
 * it was queued, so the caller can give each the verdict it just gave it
 * (they are equivalent). Each item is visited at most once per push.
 * Returns how many were visited.
 */
typedef void queue_fresh_fn(void *ctx, struct qitem *it);
size_t queue_take_fresh(struct cq_queue *q, const struct qitem *it,
			queue_fresh_fn *fn, void *ctx);

/* Decides whether a parked item may return (its namespace still matches
 * the CQ's selector, say); NULL accepts all. */
typedef bool queue_filter_fn(void *ctx, const struct qitem *it);

/*
 * A requeue event (§1.4: quota freed, CQ/cohort/flavor changed, ...):
 * every parked item whose backoff expired and that keep accepts moves to
 * the heap; the event is remembered so items now inflight come back too.
 * A parked class returns whole (its representative to the heap) when keep
 * accepts its best-ordered item: keep must answer alike for items of one
 * class. Returns how many moved.
 */
size_t queue_requeue_parked(struct cq_queue *q, int64_t now_ms,
			    queue_filter_fn *keep, void *ctx);

/* Earliest requeue_at_ms among parked items with a backoff, or 0: the
 * controller's timer for the next backoff expiry. Expired ones count
 * too until the caller clears requeue_at_ms. O(parked). */
int64_t queue_next_backoff(const struct cq_queue *q);

size_t queue_len_active(const struct cq_queue *q);   /* heap */
size_t queue_len_parked(const struct cq_queue *q);
size_t queue_len_pending(const struct cq_queue *q);  /* heap+parked+inflight */

/* Forgets the sticky preemptor (it was admitted or left). */
void queue_clear_sticky(struct cq_queue *q);

/* Visits every heap and parked item in no particular order (status,
 * metrics); inflight items are held by their cycle, not visited. */
typedef void queue_visit_fn(void *ctx, struct qitem *it);
void queue_visit(const struct cq_queue *q, queue_visit_fn *fn, void *ctx);
/* Visits only the parked items (queue_item_parked): the parked list and
 * the members of parked classes. O(parked). */
void queue_visit_parked(const struct cq_queue *q, queue_visit_fn *fn,
			void *ctx);

/*
 * The pending items in the order the next cycles would try them, as the
 * visibility API lists them (Kueue's PendingWorkloadsInfo): the active
 * ones (heap and the members waiting behind their class's
 * representative) in queue order, then the parked ones (inadmissible,
 * in backoff, or in a parked class) in queue order. Inflight items are
 * not listed (a cycle holds them; between cycles there are none).
 * *out is a new array of borrowed items (the caller frees the array);
 * returns its length, and the number of active ones in *nactive.
 * O(n log n).
 */
size_t queue_snapshot(const struct cq_queue *q, struct qitem ***out,
		      size_t *nactive);

/* The first 8 bytes of s packed big-endian (0-padded): comparing two
 * prefixes orders like strcmp, equal prefixes need strcmp. */
uint64_t queue_uid_prefix(const char *s);

/* Order of two items as the heap sees it: < 0 when a pops first. */
int queue_compare(const struct cq_queue *q, const struct qitem *a,
		  const struct qitem *b);

/* STYLE P15: heap order, counts and place fields agree. */
bool queue_check(const struct cq_queue *q);

#endif
