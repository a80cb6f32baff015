/*
 * queue: the pending workloads of one ClusterQueue (kueue-scheduler.md §1,
 * Kueue's pkg/cache/queue/cluster_queue.go and inadmissible_workloads.go).
 *
 * Owns only the heap array; every struct qitem is borrowed from the
 * caller's workload record. Never allocates per item, never reads a clock,
 * never logs.
 *
 * DESIGN
 * The active set is a binary min-heap (smallest per queue_compare at the
 * root) of item pointers; each item records its own index, so remove and
 * re-key are O(log n) without a lookup table. The parked ("inadmissible")
 * set is an unordered doubly-linked list threaded through the items:
 * parking, unparking and removal are O(1), and a requeue event walks it
 * once. Inflight items are only counted: the cycle that popped them holds
 * them and must give each one back (queue_requeue) or take it out
 * (queue_remove) before the next cycle.
 *
 * "A requeue event happened while the item was inflight" is decided with
 * cycle numbers, as Kueue does with popCycle/queueInadmissibleCycle: pop
 * stamps the item with the caller's cycle (>= 1) and remembers it as
 * q->cycle; an event records q->requeue_cycle = q->cycle; at requeue time
 * requeue_cycle >= pop_cycle means an event came after the pop. Because
 * cycles start at 1 and requeue_cycle starts at 0, an event that precedes
 * every pop never counts.
 */
#include "flavors/queue.h"

#include <stdlib.h>
#include <string.h>

#include "model/alloc.h"

/* ---- ordering ---------------------------------------------------------- */

static int cmp_uid(const char *a, const char *b)
{
	/* A missing uid sorts first; records normally always have one. */
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

int queue_compare(const struct cq_queue *q, const struct qitem *a,
		  const struct qitem *b)
{
	bool sa = q->sticky == a, sb = q->sticky == b;
	int c;

	/* 1. The sticky preemptor. It is only ever set under BestEffortFIFO
	 *    (queue_requeue), and a later strategy change leaves it in place
	 *    as Kueue's preemptorWorkload does, so the order never depends on
	 *    the strategy and queue_set_strategy need not re-sort. */
	if (sa != sb)
		return sa ? -1 : 1;
	/* 2. Higher priority first. */
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	/* 3. Earlier queue-order timestamp first. */
	if (a->ts_ms != b->ts_ms)
		return a->ts_ms < b->ts_ms ? -1 : 1;
	/* 4. UID ascending: a total order over distinct workloads. */
	c = cmp_uid(a->uid, b->uid);
	return c < 0 ? -1 : c > 0;
}

/* ---- heap -------------------------------------------------------------- */

static void heap_set(struct cq_queue *q, size_t i, struct qitem *it)
{
	q->heap[i] = it;
	it->heap_index = i;
}

/* Moves the item at i towards the root while it beats its parent. */
static void sift_up(struct cq_queue *q, size_t i)
{
	struct qitem *it = q->heap[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (queue_compare(q, it, q->heap[parent]) >= 0)
			break;
		heap_set(q, i, q->heap[parent]);
		i = parent;
	}
	heap_set(q, i, it);
}

/* Moves the item at i towards the leaves while a child beats it. */
static void sift_down(struct cq_queue *q, size_t i)
{
	struct qitem *it = q->heap[i];

	for (;;) {
		size_t l = 2 * i + 1, best;

		if (l >= q->nheap)
			break;
		best = l;
		if (l + 1 < q->nheap &&
		    queue_compare(q, q->heap[l + 1], q->heap[l]) < 0)
			best = l + 1;
		if (queue_compare(q, q->heap[best], it) >= 0)
			break;
		heap_set(q, i, q->heap[best]);
		i = best;
	}
	heap_set(q, i, it);
}

/* Restores order around an item whose key changed in place. */
static void heap_fix(struct cq_queue *q, struct qitem *it)
{
	size_t i = it->heap_index;

	if (i > 0 && queue_compare(q, it, q->heap[(i - 1) / 2]) < 0)
		sift_up(q, i);
	else
		sift_down(q, i);
}

static void heap_push(struct cq_queue *q, struct qitem *it)
{
	XGROW(q->heap, q->cap, q->nheap + 1);
	it->place = QPLACE_HEAP;
	heap_set(q, q->nheap, it);
	q->nheap++;
	sift_up(q, it->heap_index);
}

static void heap_remove(struct cq_queue *q, struct qitem *it)
{
	size_t i = it->heap_index;
	struct qitem *last = q->heap[--q->nheap];

	q->heap[q->nheap] = NULL;
	if (last != it) {
		heap_set(q, i, last);
		heap_fix(q, last);
	}
	it->place = QPLACE_NONE;
	it->heap_index = 0;
}

/* ---- parked list ------------------------------------------------------- */

static void park(struct cq_queue *q, struct qitem *it)
{
	it->place = QPLACE_PARKED;
	it->park_prev = NULL;
	it->park_next = q->parked;
	if (q->parked)
		q->parked->park_prev = it;
	q->parked = it;
	q->nparked++;
}

static void unpark(struct cq_queue *q, struct qitem *it)
{
	if (it->park_prev)
		it->park_prev->park_next = it->park_next;
	else
		q->parked = it->park_next;
	if (it->park_next)
		it->park_next->park_prev = it->park_prev;
	it->park_prev = it->park_next = NULL;
	it->place = QPLACE_NONE;
	q->nparked--;
}

/* ---- helpers ----------------------------------------------------------- */

/* Kueue's backoffWaitingTimeExpired: Requeued=False holds it whatever the
 * time; otherwise "now >= requeueAt" (0 = no backoff). */
static bool backoff_expired(const struct qitem *it, int64_t now_ms)
{
	if (it->requeued_false)
		return false;
	return it->requeue_at_ms == 0 || now_ms >= it->requeue_at_ms;
}

/* Makes it (or nobody) the sticky item, re-sorting whichever of the old
 * and new one sits in the heap, since its key just changed. */
static void set_sticky(struct cq_queue *q, struct qitem *it)
{
	struct qitem *old = q->sticky;

	if (old == it)
		return;
	q->sticky = it;
	if (old && old->place == QPLACE_HEAP)
		heap_fix(q, old);
	if (it && it->place == QPLACE_HEAP)
		heap_fix(q, it);
}

/* Kueue's RequeueIfNotPresent "immediate" table. */
static bool is_immediate(enum queueing_strategy s, enum requeue_reason r)
{
	if (s == QS_STRICT_FIFO)
		return r != RQ_NAMESPACE_MISMATCH;
	return r == RQ_FAILED_AFTER_NOMINATION ||
	       r == RQ_PENDING_PREEMPTION || r == RQ_PREEMPTION_FAILED;
}

/* ---- lifecycle --------------------------------------------------------- */

void queue_init(struct cq_queue *q, enum queueing_strategy strategy)
{
	memset(q, 0, sizeof(*q));
	q->strategy = strategy;
}

void queue_release(struct cq_queue *q)
{
	enum queueing_strategy s = q->strategy;

	for (size_t i = 0; i < q->nheap; i++) {
		q->heap[i]->place = QPLACE_NONE;
		q->heap[i]->heap_index = 0;
	}
	while (q->parked)
		unpark(q, q->parked);
	free(q->heap);
	/* Inflight items are unreachable from here; their cycle still holds
	 * them, and requeueing one into a released queue is a caller bug. */
	queue_init(q, s);
}

void queue_set_strategy(struct cq_queue *q, enum queueing_strategy s)
{
	q->strategy = s;
}

/* ---- operations -------------------------------------------------------- */

void queue_push(struct cq_queue *q, struct qitem *it, bool changed,
		int64_t now_ms)
{
	switch (it->place) {
	case QPLACE_INFLIGHT:
		/* The cycle that popped it places it (Kueue skips inflight
		 * workloads in PushOrUpdate); its new keys are already set. */
		return;
	case QPLACE_PARKED:
		if (!changed)
			return; /* updated in place, stays parked */
		unpark(q, it);
		break;
	case QPLACE_HEAP:
		/* Kueue leaves an active workload in the heap whatever its
		 * backoff; §1.5 keeps a workload in backoff out of the heap,
		 * and so does this contract, so it is parked instead. */
		if (!backoff_expired(it, now_ms)) {
			heap_remove(q, it);
			park(q, it);
		} else {
			heap_fix(q, it);
		}
		return;
	case QPLACE_NONE:
		break;
	}
	if (!backoff_expired(it, now_ms))
		park(q, it);
	else
		heap_push(q, it);
}

void queue_remove(struct cq_queue *q, struct qitem *it)
{
	/* A preemptor that leaves stops being one (Kueue's delete). Clear it
	 * first, so the heap removal below re-sorts with the final keys. */
	if (q->sticky == it)
		q->sticky = NULL;
	switch (it->place) {
	case QPLACE_HEAP:
		heap_remove(q, it);
		break;
	case QPLACE_PARKED:
		unpark(q, it);
		break;
	case QPLACE_INFLIGHT:
		q->ninflight--;
		it->place = QPLACE_NONE;
		break;
	case QPLACE_NONE:
		break;
	}
}

struct qitem *queue_peek(const struct cq_queue *q)
{
	return q->nheap ? q->heap[0] : NULL;
}

struct qitem *queue_pop(struct cq_queue *q, uint64_t cycle)
{
	struct qitem *it;

	if (cycle == 0 || cycle < q->cycle)
		BUG("queue_pop: cycle %llu after %llu (cycles start at 1 and "
		    "never go back)", (unsigned long long)cycle,
		    (unsigned long long)q->cycle);
	q->cycle = cycle;
	if (!q->nheap)
		return NULL;
	it = q->heap[0];
	heap_remove(q, it);
	it->place = QPLACE_INFLIGHT;
	it->pop_cycle = cycle;
	q->ninflight++;
	return it;
}

void queue_requeue(struct cq_queue *q, struct qitem *it,
		   enum requeue_reason reason, int64_t now_ms)
{
	bool event_since_pop;

	/* "IfNotPresent": an item removed during the cycle (deleted,
	 * admitted elsewhere) or already queued is left alone. */
	if (it->place != QPLACE_INFLIGHT)
		return;

	/* 1. The preemptor. Kueue records it for either strategy but makes
	 *    it sticky only under BestEffortFIFO; a non-sticky record does
	 *    not affect this queue, so only the sticky one is kept. Any other
	 *    outcome ends its time as the preemptor. */
	if (reason == RQ_PENDING_PREEMPTION &&
	    q->strategy == QS_BEST_EFFORT_FIFO)
		set_sticky(q, it);
	else if (q->sticky == it)
		q->sticky = NULL; /* inflight: not in the heap, no re-sort */

	/* 2. It is no longer inflight. */
	q->ninflight--;
	it->place = QPLACE_NONE;

	/* 3. Back to the heap when the backoff allows it and either the
	 *    reason is immediate for this strategy or a requeue event came
	 *    while it was being scheduled (that event could not move it). */
	event_since_pop = q->requeue_cycle >= it->pop_cycle;
	if (backoff_expired(it, now_ms) &&
	    (is_immediate(q->strategy, reason) || event_since_pop))
		heap_push(q, it);
	else
		park(q, it);
}

size_t queue_requeue_parked(struct cq_queue *q, int64_t now_ms,
			    queue_filter_fn *keep, void *ctx)
{
	struct qitem *it, *next;
	size_t moved = 0;

	q->requeue_cycle = q->cycle;
	for (it = q->parked; it; it = next) {
		next = it->park_next;
		if (!backoff_expired(it, now_ms))
			continue;
		if (keep && !keep(ctx, it))
			continue;
		unpark(q, it);
		heap_push(q, it);
		moved++;
	}
	return moved;
}

int64_t queue_next_backoff(const struct cq_queue *q)
{
	int64_t best = 0;

	/* O(parked): the caller may rewrite requeue_at_ms of a parked item
	 * at any time, so there is no index to keep current. */
	for (const struct qitem *it = q->parked; it; it = it->park_next) {
		if (it->requeue_at_ms == 0)
			continue;
		if (best == 0 || it->requeue_at_ms < best)
			best = it->requeue_at_ms;
	}
	return best;
}

size_t queue_len_active(const struct cq_queue *q)
{
	return q->nheap;
}

size_t queue_len_parked(const struct cq_queue *q)
{
	return q->nparked;
}

size_t queue_len_pending(const struct cq_queue *q)
{
	return q->nheap + q->nparked + q->ninflight;
}

void queue_clear_sticky(struct cq_queue *q)
{
	set_sticky(q, NULL);
}

void queue_visit(const struct cq_queue *q, queue_visit_fn *fn, void *ctx)
{
	struct qitem *it, *next;

	/* Inflight items are not linked anywhere: their cycle holds them. */
	for (size_t i = 0; i < q->nheap; i++)
		fn(ctx, q->heap[i]);
	for (it = q->parked; it; it = next) {
		next = it->park_next;
		fn(ctx, it);
	}
}

/* ---- invariants (STYLE P15) -------------------------------------------- */

bool queue_check(const struct cq_queue *q)
{
	const struct qitem *prev = NULL;
	size_t n = 0;

	if (q->nheap > q->cap || (q->cap && !q->heap))
		return false;
	if (q->strategy != QS_BEST_EFFORT_FIFO && q->strategy != QS_STRICT_FIFO)
		return false;
	/* 1. Every heap slot knows its index and is no smaller than its
	 *    parent. */
	for (size_t i = 0; i < q->nheap; i++) {
		const struct qitem *it = q->heap[i];

		if (!it || it->place != QPLACE_HEAP || it->heap_index != i)
			return false;
		if (i > 0 && queue_compare(q, q->heap[(i - 1) / 2], it) > 0)
			return false;
	}
	/* 2. The parked list is well linked, all parked, and as long as
	 *    counted (the bound also stops a walk round a corrupted loop). */
	for (const struct qitem *it = q->parked; it; it = it->park_next) {
		if (++n > q->nparked)
			return false;
		if (it->place != QPLACE_PARKED || it->park_prev != prev)
			return false;
		prev = it;
	}
	if (n != q->nparked)
		return false;
	/* 3. The sticky item is still queued somewhere. */
	if (q->sticky && q->sticky->place == QPLACE_NONE)
		return false;
	/* 4. Events are stamped with a cycle that has happened. */
	if (q->requeue_cycle > q->cycle)
		return false;
	return true;
}
