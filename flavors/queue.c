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
 *
 * Equivalence classes (queue.h): a chained hash table of struct qclass by
 * eq_hash. A class holds its waiting members in its own min-heap (the
 * same order, indexes in heap_index: an item is in one heap at a time);
 * while the class is active its best waiting member is moved out of that
 * heap into the queue heap as the representative, so the queue heap
 * holds one entry per active class. Parking a class moves the
 * representative back (O(log n)) and links the class into a list of
 * parked classes; a requeue event walks that list. Members never read
 * their class's state through their own place field (it stays
 * QPLACE_CLASS), which is what keeps parking and unparking O(log n)
 * whatever the class size. Members not yet evaluated are also linked on
 * the class's fresh list (through park_prev/park_next, unused while an
 * item is in a class). A class is freed when it has no member left.
 *
 * The parked, fresh and parked-class lists are NULL-terminated by hand
 * rather than base/dlist.h: their heads live in struct cq_queue, which
 * sched keeps inside a growable array of ClusterQueue records, and a
 * circular list's neighbours would point at a head that realloc moved.
 */
#include "flavors/queue.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* ---- ordering ---------------------------------------------------------- */

static int cmp_uid(const char *a, const char *b)
{
	/* A missing uid sorts first; records normally always have one. */
	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

uint64_t queue_uid_prefix(const char *s)
{
	uint64_t v = 0;
	int i = 0;

	if (s)
		for (; i < 8 && s[i]; i++)
			v = v << 8 | (unsigned char)s[i];
	for (; i < 8; i++)
		v <<= 8;
	return v;
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
	/* 1b. Admission fair sharing: the lower LocalQueue usage first. */
	if (q->by_usage && a->afs != b->afs)
		return a->afs < b->afs ? -1 : 1;
	/* 2. Higher priority first. */
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	/* 3. Earlier queue-order timestamp first. */
	if (a->ts_ms != b->ts_ms)
		return a->ts_ms < b->ts_ms ? -1 : 1;
	/* 4. UID ascending: a total order over distinct workloads. The
	 *    prefixes (set at push) decide most ties without strcmp. */
	if (a->uid_pre != b->uid_pre)
		return a->uid_pre < b->uid_pre ? -1 : 1;
	c = cmp_uid(a->uid, b->uid);
	return c < 0 ? -1 : c > 0;
}

/* ---- heap ------------------------------------------------------------ */

/* A heap of items: the queue's own, or one class's waiting members. */
struct qheap {
	struct qitem **v;
	size_t n, cap;
};

struct qclass {
	uint64_t hash;
	struct qclass *bnext;          /* bucket chain */
	struct qheap h;                /* waiting members (not the rep) */
	struct qitem *rep;             /* in the queue heap, or NULL */
	bool parked;
	struct qclass *pprev, *pnext;  /* parked-class list */
	struct qitem *fresh;           /* never-evaluated members */
};

static void heap_set(struct qheap *h, size_t i, struct qitem *it)
{
	h->v[i] = it;
	it->heap_index = i;
}

/* Moves the item at i towards the root while it beats its parent. */
static void sift_up(const struct cq_queue *q, struct qheap *h, size_t i)
{
	struct qitem *it = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (queue_compare(q, it, h->v[parent]) >= 0)
			break;
		heap_set(h, i, h->v[parent]);
		i = parent;
	}
	heap_set(h, i, it);
}

/* Moves the item at i towards the leaves while a child beats it. */
static void sift_down(const struct cq_queue *q, struct qheap *h, size_t i)
{
	struct qitem *it = h->v[i];

	for (;;) {
		size_t l = 2 * i + 1, best;

		if (l >= h->n)
			break;
		best = l;
		if (l + 1 < h->n &&
		    queue_compare(q, h->v[l + 1], h->v[l]) < 0)
			best = l + 1;
		if (queue_compare(q, h->v[best], it) >= 0)
			break;
		heap_set(h, i, h->v[best]);
		i = best;
	}
	heap_set(h, i, it);
}

/* Restores order around an item whose key changed in place. */
static void qh_fix(const struct cq_queue *q, struct qheap *h,
		   struct qitem *it)
{
	size_t i = it->heap_index;

	if (i > 0 && queue_compare(q, it, h->v[(i - 1) / 2]) < 0)
		sift_up(q, h, i);
	else
		sift_down(q, h, i);
}

static void qh_push(const struct cq_queue *q, struct qheap *h,
		    struct qitem *it)
{
	XGROW(h->v, h->cap, h->n + 1);
	heap_set(h, h->n, it);
	h->n++;
	sift_up(q, h, it->heap_index);
}

static void qh_remove(const struct cq_queue *q, struct qheap *h,
		      struct qitem *it)
{
	size_t i = it->heap_index;
	struct qitem *last = h->v[--h->n];

	h->v[h->n] = NULL;
	if (last != it) {
		heap_set(h, i, last);
		qh_fix(q, h, last);
	}
	it->heap_index = 0;
}

/* The queue heap as a struct qheap view (cq_queue keeps the fields flat
 * for its public readers). */
#define QH_BEGIN(q) struct qheap qh_ = { (q)->heap, (q)->nheap, (q)->cap }
#define QH_END(q) ((q)->heap = qh_.v, (q)->nheap = qh_.n, (q)->cap = qh_.cap)

static void heap_fix(struct cq_queue *q, struct qitem *it)
{
	QH_BEGIN(q);
	qh_fix(q, &qh_, it);
	QH_END(q);
}

static void heap_push(struct cq_queue *q, struct qitem *it)
{
	QH_BEGIN(q);
	it->place = QPLACE_HEAP;
	qh_push(q, &qh_, it);
	QH_END(q);
}

static void heap_remove(struct cq_queue *q, struct qitem *it)
{
	QH_BEGIN(q);
	qh_remove(q, &qh_, it);
	QH_END(q);
	it->place = QPLACE_NONE;
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

/* ---- equivalence classes ---------------------------------------------- */

/* Whether it may wait in a class: the queue is BestEffortFIFO, it has a
 * hash, no backoff and is not the sticky preemptor. */
static bool classable(const struct cq_queue *q, const struct qitem *it)
{
	return q->strategy == QS_BEST_EFFORT_FIFO && !q->by_usage &&
	       it->eq_hash != 0 &&
	       it->requeue_at_ms == 0 && !it->requeued_false &&
	       q->sticky != it;
}

static struct qclass **class_slot(const struct cq_queue *q, uint64_t hash)
{
	uint64_t h = hash ^ (hash >> 29);

	return &q->cbucket[(size_t)(h * 0x9e3779b97f4a7c15ULL) &
			   (q->ncbucket - 1)];
}

static struct qclass *class_find(const struct cq_queue *q, uint64_t hash)
{
	if (!q->ncbucket)
		return NULL;
	for (struct qclass *c = *class_slot(q, hash); c; c = c->bnext)
		if (c->hash == hash)
			return c;
	return NULL;
}

static struct qclass *class_get(struct cq_queue *q, uint64_t hash)
{
	struct qclass *c = class_find(q, hash), **slot;

	if (c)
		return c;
	if (q->nclass + 1 > q->ncbucket) {
		size_t n = q->ncbucket ? q->ncbucket * 2 : 8, old = q->ncbucket;
		struct qclass **ob = q->cbucket;

		q->cbucket = xcalloc(n, sizeof(*q->cbucket));
		q->ncbucket = n;
		for (size_t i = 0; i < old; i++) {
			struct qclass *x, *next;

			for (x = ob[i]; x; x = next) {
				next = x->bnext;
				slot = class_slot(q, x->hash);
				x->bnext = *slot;
				*slot = x;
			}
		}
		free(ob);
	}
	if (q->cfree) {
		struct qheap h;

		c = q->cfree;
		q->cfree = c->bnext;
		h = c->h; /* keeps its array */
		memset(c, 0, sizeof(*c));
		c->h.v = h.v;
		c->h.cap = h.cap;
	} else {
		c = xcalloc(1, sizeof(*c));
	}
	c->hash = hash;
	slot = class_slot(q, hash);
	c->bnext = *slot;
	*slot = c;
	q->nclass++;
	return c;
}

static void fresh_unlink(struct qclass *c, struct qitem *it)
{
	if (!it->fresh)
		return;
	if (it->park_prev)
		it->park_prev->park_next = it->park_next;
	else
		c->fresh = it->park_next;
	if (it->park_next)
		it->park_next->park_prev = it->park_prev;
	it->park_prev = it->park_next = NULL;
	it->fresh = false;
}

static void fresh_link(struct qclass *c, struct qitem *it)
{
	it->fresh = true;
	it->park_prev = NULL;
	it->park_next = c->fresh;
	if (c->fresh)
		c->fresh->park_prev = it;
	c->fresh = it;
}

/* Frees c when it has no member left. */
static void class_gc(struct cq_queue *q, struct qclass *c)
{
	struct qclass **p;

	if (c->h.n || c->rep)
		return;
	if (c->parked) {
		if (c->pprev)
			c->pprev->pnext = c->pnext;
		else
			q->cparked = c->pnext;
		if (c->pnext)
			c->pnext->pprev = c->pprev;
	}
	for (p = class_slot(q, c->hash); *p != c; p = &(*p)->bnext)
		;
	*p = c->bnext;
	q->nclass--;
	/* Kept for the next class: a class per pending workload is common
	 * (all shapes differ), and they come and go with every pop. */
	c->bnext = q->cfree;
	q->cfree = c;
}

static void classes_free_list(struct cq_queue *q)
{
	while (q->cfree) {
		struct qclass *c = q->cfree;

		q->cfree = c->bnext;
		free(c->h.v);
		free(c);
	}
}

/* Active class: its best waiting member becomes the representative. */
static void class_promote(struct cq_queue *q, struct qclass *c)
{
	struct qitem *it;

	if (c->parked || c->rep || !c->h.n)
		return;
	it = c->h.v[0];
	qh_remove(q, &c->h, it);
	q->nclass_active--;
	c->rep = it;
	heap_push(q, it);
}

/* Adds it (not queued) to c; fresh: not evaluated since queued. */
static void class_insert(struct cq_queue *q, struct qclass *c,
			 struct qitem *it, bool fresh)
{
	it->cls = c;
	it->park_prev = it->park_next = NULL;
	it->fresh = false;
	if (fresh)
		fresh_link(c, it);
	if (!c->parked && (!c->rep || queue_compare(q, it, c->rep) < 0)) {
		struct qitem *old = c->rep;

		if (old) {
			heap_remove(q, old);
			old->place = QPLACE_CLASS;
			qh_push(q, &c->h, old);
			q->nclass_active++;
		}
		c->rep = it;
		heap_push(q, it);
		return;
	}
	it->place = QPLACE_CLASS;
	qh_push(q, &c->h, it);
	if (c->parked)
		q->nclass_parked++;
	else
		q->nclass_active++;
}

/* Takes it out of its class (it is the representative or waiting). */
static void class_detach(struct cq_queue *q, struct qitem *it)
{
	struct qclass *c = it->cls;

	fresh_unlink(c, it);
	if (c->rep == it) {
		heap_remove(q, it);
		c->rep = NULL;
		class_promote(q, c);
	} else {
		qh_remove(q, &c->h, it);
		if (c->parked)
			q->nclass_parked--;
		else
			q->nclass_active--;
	}
	it->cls = NULL;
	it->place = QPLACE_NONE;
	class_gc(q, c);
}

static void class_park(struct cq_queue *q, struct qclass *c)
{
	if (c->parked)
		return;
	if (c->rep) {
		struct qitem *r = c->rep;

		heap_remove(q, r);
		r->place = QPLACE_CLASS;
		qh_push(q, &c->h, r);
		q->nclass_active++;
		c->rep = NULL;
	}
	q->nclass_active -= c->h.n;
	q->nclass_parked += c->h.n;
	c->parked = true;
	c->pprev = NULL;
	c->pnext = q->cparked;
	if (q->cparked)
		q->cparked->pprev = c;
	q->cparked = c;
}

static void class_unpark(struct cq_queue *q, struct qclass *c)
{
	if (!c->parked)
		return;
	if (c->pprev)
		c->pprev->pnext = c->pnext;
	else
		q->cparked = c->pnext;
	if (c->pnext)
		c->pnext->pprev = c->pprev;
	c->pprev = c->pnext = NULL;
	c->parked = false;
	q->nclass_parked -= c->h.n;
	q->nclass_active += c->h.n;
	class_promote(q, c);
}

/* Dissolves every class: members go to the heap or the parked set as
 * their class was (a strategy change away from BestEffortFIFO). */
static void classes_flatten(struct cq_queue *q)
{
	for (size_t b = 0; b < q->ncbucket; b++) {
		struct qclass *c, *next;

		for (c = q->cbucket[b]; c; c = next) {
			next = c->bnext;
			if (c->rep) {
				c->rep->cls = NULL;
				c->rep->fresh = false;
			}
			for (size_t i = 0; i < c->h.n; i++) {
				struct qitem *it = c->h.v[i];

				it->cls = NULL;
				it->fresh = false;
				it->park_prev = it->park_next = NULL;
				it->place = QPLACE_NONE;
				if (c->parked)
					park(q, it);
				else
					heap_push(q, it);
			}
			free(c->h.v);
			free(c);
		}
	}
	free(q->cbucket);
	classes_free_list(q);
	q->cbucket = NULL;
	q->ncbucket = q->nclass = 0;
	q->cparked = NULL;
	q->nclass_active = q->nclass_parked = 0;
}

/* Queues it (not queued) as active: into its class when it has one. A
 * class that is parked does not take it: it is tried once on its own
 * (see queue.h). */
static void enqueue_active(struct cq_queue *q, struct qitem *it, bool fresh)
{
	if (classable(q, it)) {
		struct qclass *c = class_get(q, it->eq_hash);

		if (!c->parked) {
			class_insert(q, c, it, fresh);
			return;
		}
		class_gc(q, c);
	}
	heap_push(q, it);
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

	for (size_t b = 0; b < q->ncbucket; b++) {
		struct qclass *c, *next;

		for (c = q->cbucket[b]; c; c = next) {
			next = c->bnext;
			for (size_t i = 0; i < c->h.n; i++) {
				c->h.v[i]->place = QPLACE_NONE;
				c->h.v[i]->cls = NULL;
				c->h.v[i]->fresh = false;
				c->h.v[i]->park_prev = NULL;
				c->h.v[i]->park_next = NULL;
				c->h.v[i]->heap_index = 0;
			}
			if (c->rep) {
				c->rep->cls = NULL;
				c->rep->fresh = false;
				c->rep->park_prev = c->rep->park_next = NULL;
			}
			free(c->h.v);
			free(c);
		}
	}
	free(q->cbucket);
	classes_free_list(q);
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
	if (s != QS_BEST_EFFORT_FIFO && q->nclass)
		classes_flatten(q);
}

void queue_set_by_usage(struct cq_queue *q, bool on)
{
	if (q->by_usage == on)
		return;
	q->by_usage = on;
	if (on && q->nclass)
		classes_flatten(q);
	queue_reheap(q);
}

void queue_reheap(struct cq_queue *q)
{
	struct qheap h = { q->heap, q->nheap, q->cap };

	for (size_t i = q->nheap / 2; i-- > 0;)
		sift_down(q, &h, i);
}

/* ---- operations -------------------------------------------------------- */

void queue_push(struct cq_queue *q, struct qitem *it, bool changed,
		int64_t now_ms)
{
	bool fresh = true;
	uint64_t pre = queue_uid_prefix(it->uid);

	if (pre != it->uid_pre) {
		/* Its key changed: re-sort it wherever it is (below). */
		if (it->place == QPLACE_PARKED || it->place == QPLACE_NONE ||
		    it->place == QPLACE_INFLIGHT) {
			it->uid_pre = pre;
		} else if (it->cls) {
			class_detach(q, it);
			it->uid_pre = pre;
		} else {
			heap_remove(q, it);
			it->uid_pre = pre;
		}
	}

	if (it->cls) {
		/* In a class (waiting, or its representative). Unchanged in
		 * a parked class: stays, as a parked item does. Otherwise
		 * it is re-sorted by leaving and joining again. */
		if (it->cls->parked && !changed &&
		    it->place == QPLACE_CLASS &&
		    it->eq_hash == it->cls->hash && classable(q, it))
			return;
		fresh = changed || it->fresh;
		class_detach(q, it);
	}
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
		} else if (classable(q, it)) {
			heap_remove(q, it);
			enqueue_active(q, it, changed);
		} else {
			heap_fix(q, it);
		}
		return;
	case QPLACE_NONE:
	case QPLACE_CLASS:
		break;
	}
	if (!backoff_expired(it, now_ms))
		park(q, it);
	else
		enqueue_active(q, it, fresh);
}

void queue_remove(struct cq_queue *q, struct qitem *it)
{
	/* A preemptor that leaves stops being one (Kueue's delete). Clear it
	 * first, so the heap removal below re-sorts with the final keys. */
	if (q->sticky == it)
		q->sticky = NULL;
	if (it->cls) {
		class_detach(q, it);
		return;
	}
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
	case QPLACE_CLASS:
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
	if (it->cls) {
		/* A representative: the next member of its class takes its
		 * place in the heap. */
		class_detach(q, it);
	} else {
		heap_remove(q, it);
	}
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
	    (is_immediate(q->strategy, reason) || event_since_pop)) {
		enqueue_active(q, it, false);
		return;
	}
	/* 4. Parked. A verdict that holds for its whole equivalence class
	 *    (Kueue: NoFit, PreemptionNoCandidates) parks the class. */
	if (classable(q, it) &&
	    (reason == RQ_NO_FIT || reason == RQ_PREEMPTION_NO_CANDIDATES)) {
		struct qclass *c = class_get(q, it->eq_hash);

		class_park(q, c);
		class_insert(q, c, it, false);
		return;
	}
	park(q, it);
}

bool queue_item_parked(const struct cq_queue *q, const struct qitem *it)
{
	(void)q;
	return it->place == QPLACE_PARKED ||
	       (it->place == QPLACE_CLASS && it->cls && it->cls->parked);
}

size_t queue_take_fresh(struct cq_queue *q, const struct qitem *it,
			queue_fresh_fn *fn, void *ctx)
{
	struct qclass *c = it->cls;
	size_t n = 0;

	(void)q;
	if (!c || !c->parked)
		return 0;
	while (c->fresh) {
		struct qitem *x = c->fresh;

		fresh_unlink(c, x);
		fn(ctx, x);
		n++;
	}
	return n;
}

size_t queue_requeue_parked(struct cq_queue *q, int64_t now_ms,
			    queue_filter_fn *keep, void *ctx)
{
	struct qitem *it, *next;
	struct qclass *c, *cnext;
	size_t moved = 0;

	q->requeue_cycle = q->cycle;
	for (it = q->parked; it; it = next) {
		next = it->park_next;
		if (!backoff_expired(it, now_ms))
			continue;
		if (keep && !keep(ctx, it))
			continue;
		unpark(q, it);
		enqueue_active(q, it, false);
		moved++;
	}
	/* Parked classes: members have no backoff; keep answers alike for
	 * the whole class, so its best member decides. */
	for (c = q->cparked; c; c = cnext) {
		cnext = c->pnext;
		if (keep && !keep(ctx, c->h.v[0]))
			continue;
		moved += c->h.n;
		class_unpark(q, c);
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
	return q->nheap + q->nclass_active;
}

size_t queue_len_parked(const struct cq_queue *q)
{
	return q->nparked + q->nclass_parked;
}

size_t queue_len_pending(const struct cq_queue *q)
{
	return q->nheap + q->nclass_active + q->nparked + q->nclass_parked +
	       q->ninflight;
}

void queue_clear_sticky(struct cq_queue *q)
{
	set_sticky(q, NULL);
}

/* The parked list (not the members of parked classes). */
static void visit_parked_list(const struct cq_queue *q, queue_visit_fn *fn,
			      void *ctx)
{
	struct qitem *it, *next;

	for (it = q->parked; it; it = next) {
		next = it->park_next;
		fn(ctx, it);
	}
}

void queue_visit(const struct cq_queue *q, queue_visit_fn *fn, void *ctx)
{
	/* Inflight items are not linked anywhere: their cycle holds them. */
	for (size_t i = 0; i < q->nheap; i++)
		fn(ctx, q->heap[i]);
	visit_parked_list(q, fn, ctx);
	for (size_t b = 0; b < q->ncbucket; b++)
		for (const struct qclass *c = q->cbucket[b]; c; c = c->bnext)
			for (size_t i = 0; i < c->h.n; i++)
				fn(ctx, c->h.v[i]);
}

void queue_visit_parked(const struct cq_queue *q, queue_visit_fn *fn,
			void *ctx)
{
	visit_parked_list(q, fn, ctx);
	for (const struct qclass *c = q->cparked; c; c = c->pnext)
		for (size_t i = 0; i < c->h.n; i++)
			fn(ctx, c->h.v[i]);
}

/* ---- snapshot ------------------------------------------------------------ */

struct snap {
	struct qitem **v;
	size_t n, cap;
};

static void snap_add(void *ctx, struct qitem *it)
{
	struct snap *sn = ctx;

	if (sn->n == sn->cap) {
		sn->cap = sn->cap ? sn->cap * 2 : 64;
		sn->v = xrealloc(sn->v, sn->cap * sizeof(*sn->v));
	}
	sn->v[sn->n++] = it;
}

/* Stable merge sort of v[0..n) by queue_compare, tmp holding n. */
static void snap_sort(const struct cq_queue *q, struct qitem **v,
		      struct qitem **tmp, size_t n)
{
	size_t h = n / 2, i = 0, j = h, k = 0;

	if (n < 2)
		return;
	snap_sort(q, v, tmp, h);
	snap_sort(q, v + h, tmp, n - h);
	while (i < h && j < n)
		tmp[k++] = queue_compare(q, v[j], v[i]) < 0 ? v[j++] : v[i++];
	while (i < h)
		tmp[k++] = v[i++];
	while (j < n)
		tmp[k++] = v[j++];
	memcpy(v, tmp, n * sizeof(*v));
}

size_t queue_snapshot(const struct cq_queue *q, struct qitem ***out,
		      size_t *nactive)
{
	struct snap sn = { 0 };
	struct qitem **tmp;
	size_t na = 0;

	queue_visit(q, snap_add, &sn);
	/* active first, keeping the visit order inside each part */
	tmp = xmalloc((sn.n ? sn.n : 1) * sizeof(*tmp));
	for (size_t i = 0; i < sn.n; i++)
		if (!queue_item_parked(q, sn.v[i]))
			tmp[na++] = sn.v[i];
	for (size_t i = 0, k = na; i < sn.n; i++)
		if (queue_item_parked(q, sn.v[i]))
			tmp[k++] = sn.v[i];
	if (sn.n)
		memcpy(sn.v, tmp, sn.n * sizeof(*tmp));
	snap_sort(q, sn.v, tmp, na);
	snap_sort(q, sn.v + na, tmp, sn.n - na);
	free(tmp);
	*out = sn.v;
	*nactive = na;
	return sn.n;
}

/* ---- invariants (STYLE P15) -------------------------------------------- */

/* Classes: members' heaps, representatives, counts and lists agree. */
static bool classes_check(const struct cq_queue *q)
{
	size_t nact = 0, npark = 0, ncls = 0, nreps = 0, nlisted = 0;

	if (q->nclass && q->strategy != QS_BEST_EFFORT_FIFO)
		return false;
	for (size_t b = 0; b < q->ncbucket; b++) {
		for (const struct qclass *c = q->cbucket[b]; c; c = c->bnext) {
			size_t nf = 0, nfl = 0;

			ncls++;
			if (class_slot(q, c->hash) != &q->cbucket[b])
				return false;
			if (!c->h.n && !c->rep)
				return false; /* empty classes are freed */
			if (c->parked && c->rep)
				return false;
			if (!c->parked && c->h.n && !c->rep)
				return false;
			for (size_t i = 0; i < c->h.n; i++) {
				const struct qitem *it = c->h.v[i];

				if (it->place != QPLACE_CLASS ||
				    it->cls != c || it->heap_index != i ||
				    it->eq_hash != c->hash)
					return false;
				if (i > 0 && queue_compare(q, c->h.v[(i - 1) / 2],
							   it) > 0)
					return false;
				if (c->rep && queue_compare(q, c->rep, it) > 0)
					return false;
				nf += it->fresh;
			}
			if (c->rep) {
				const struct qitem *r = c->rep;

				if (r->place != QPLACE_HEAP || r->cls != c ||
				    r->heap_index >= q->nheap ||
				    q->heap[r->heap_index] != r ||
				    r->eq_hash != c->hash)
					return false;
				nreps++;
				nf += r->fresh;
			}
			for (const struct qitem *it = c->fresh; it;
			     it = it->park_next) {
				if (++nfl > nf || !it->fresh || it->cls != c)
					return false;
			}
			if (nfl != nf)
				return false;
			if (c->parked)
				npark += c->h.n;
			else
				nact += c->h.n;
		}
	}
	for (const struct qclass *c = q->cparked; c; c = c->pnext)
		if (++nlisted > ncls || !c->parked)
			return false;
	for (size_t i = 0; i < q->nheap; i++)
		if (q->heap[i]->cls && q->heap[i]->cls->rep != q->heap[i])
			return false;
	(void)nreps;
	return ncls == q->nclass && nact == q->nclass_active &&
	       npark == q->nclass_parked;
}

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
	return classes_check(q);
}
