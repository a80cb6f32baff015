/*
 * Suite "queue": the pending queues of a ClusterQueue (flavors/queue.h,
 * kueue-scheduler.md §1): heap order, StrictFIFO and BestEffortFIFO
 * requeue rules, requeue events, backoff, the sticky preemptor, and a
 * randomized comparison against a naive reference model.
 *
 * Every operation is followed by queue_check (STYLE P15). No test looks
 * at a clock: `now` is a plain number.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "flavors/queue.h"
#include "suites.h"
#include "test/support/support.h"

/* A workload record as the controller would keep it: the qitem inside. */
struct rec {
	int id;
	char uid[24];
	struct qitem q;
};

#define REC_OF(it) ((struct rec *)(void *)((char *)(it) - \
					   offsetof(struct rec, q)))
/* T_ASSERT_MSG (support.h): the randomized case checks a million times */
#define CHECK(qq) T_ASSERT_MSG(queue_check(qq), "queue_check failed")

static void rec_init(struct rec *r, int id, int32_t prio, int64_t ts)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	snprintf(r->uid, sizeof(r->uid), "uid-%04d", id);
	r->q.uid = r->uid;
	r->q.priority = prio;
	r->q.ts_ms = ts;
}

static void push(struct cq_queue *q, struct rec *r, int64_t now)
{
	queue_push(q, &r->q, true, now);
	CHECK(q);
}

/* Pops for cycle and returns the record's id, or -1 when empty. */
static int pop_id(struct cq_queue *q, uint64_t cycle)
{
	struct qitem *it = queue_pop(q, cycle);

	CHECK(q);
	return it ? REC_OF(it)->id : -1;
}

static int peek_id(const struct cq_queue *q)
{
	struct qitem *it = queue_peek(q);

	return it ? REC_OF(it)->id : -1;
}

static void requeue(struct cq_queue *q, struct rec *r,
		    enum requeue_reason why, int64_t now)
{
	queue_requeue(q, &r->q, why, now);
	CHECK(q);
}

/* ---- order ------------------------------------------------------------- */

START_TEST(order_priority_ts_uid)
{
	struct cq_queue q;
	struct rec r[6];
	/* id, priority, ts: pushed in this order. */
	static const int spec[6][3] = {
		{ 0, 0, 100 }, { 1, 5, 300 }, { 2, 5, 200 },
		{ 3, 0, 100 }, { 4, -3, 0 }, { 5, 5, 200 },
	};
	static const int want[6] = { 2, 5, 1, 0, 3, 4 };

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	CHECK(&q);
	ck_assert_int_eq(peek_id(&q), -1);
	ck_assert_int_eq(pop_id(&q, 1), -1);
	for (int i = 0; i < 6; i++) {
		rec_init(&r[i], spec[i][0], spec[i][1], spec[i][2]);
		push(&q, &r[i], 0);
	}
	ck_assert_uint_eq(queue_len_active(&q), 6);
	ck_assert_int_lt(queue_compare(&q, &r[2].q, &r[5].q), 0);
	ck_assert_int_gt(queue_compare(&q, &r[4].q, &r[0].q), 0);
	ck_assert_int_eq(queue_compare(&q, &r[3].q, &r[3].q), 0);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(peek_id(&q), want[i]);
		ck_assert_int_eq(pop_id(&q, 1), want[i]);
	}
	ck_assert_int_eq(pop_id(&q, 2), -1);
	ck_assert_uint_eq(q.ninflight, 6);
	for (int i = 0; i < 6; i++) {
		queue_remove(&q, &r[i].q);
		CHECK(&q);
	}
	ck_assert_uint_eq(queue_len_pending(&q), 0);
	queue_release(&q);
}
END_TEST

START_TEST(push_update_resorts)
{
	struct cq_queue q;
	struct rec r[5];

	queue_init(&q, QS_STRICT_FIFO);
	for (int i = 0; i < 5; i++) {
		rec_init(&r[i], i, 10, 100 * i);
		push(&q, &r[i], 0);
	}
	ck_assert_int_eq(peek_id(&q), 0);
	r[4].q.priority = 20; /* raised: jumps to the head */
	push(&q, &r[4], 0);
	ck_assert_int_eq(peek_id(&q), 4);
	r[4].q.priority = 0; /* lowered: sinks to the back */
	queue_push(&q, &r[4].q, false, 0);
	CHECK(&q);
	ck_assert_int_eq(peek_id(&q), 0);
	r[0].q.ts_ms = 250; /* requeued by timestamp: between 2 and 3 */
	push(&q, &r[0], 0);
	push(&q, &r[0], 0); /* idempotent */
	ck_assert_uint_eq(queue_len_active(&q), 5);
	{
		static const int want[5] = { 1, 2, 0, 3, 4 };

		for (int i = 0; i < 5; i++)
			ck_assert_int_eq(pop_id(&q, 1), want[i]);
	}
	queue_release(&q);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(r[i].q.place, QPLACE_INFLIGHT);
}
END_TEST

START_TEST(remove_from_each_place)
{
	struct cq_queue q;
	struct rec r[6];

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	for (int i = 0; i < 6; i++) {
		rec_init(&r[i], i, 6 - i, 0);
		push(&q, &r[i], 0);
	}
	/* inflight: 0; parked: 1; heap: 2..5 */
	ck_assert_int_eq(pop_id(&q, 1), 0);
	ck_assert_int_eq(pop_id(&q, 1), 1);
	requeue(&q, &r[1], RQ_NO_FIT, 0);
	ck_assert_int_eq(r[1].q.place, QPLACE_PARKED);
	ck_assert_uint_eq(queue_len_pending(&q), 6);

	queue_remove(&q, &r[3].q); /* middle of the heap */
	CHECK(&q);
	ck_assert_int_eq(r[3].q.place, QPLACE_NONE);
	queue_remove(&q, &r[5].q); /* last heap slot */
	CHECK(&q);
	queue_remove(&q, &r[1].q); /* parked */
	CHECK(&q);
	ck_assert_int_eq(r[1].q.place, QPLACE_NONE);
	ck_assert_uint_eq(queue_len_parked(&q), 0);
	queue_remove(&q, &r[0].q); /* inflight */
	CHECK(&q);
	ck_assert_uint_eq(q.ninflight, 0);
	/* The cycle gives it back after all: it was deleted, so no-op. */
	requeue(&q, &r[0], RQ_FAILED_AFTER_NOMINATION, 0);
	ck_assert_int_eq(r[0].q.place, QPLACE_NONE);
	queue_remove(&q, &r[0].q); /* not queued: no-op */
	CHECK(&q);
	ck_assert_uint_eq(queue_len_active(&q), 2);
	ck_assert_uint_eq(queue_len_pending(&q), 2);
	ck_assert_int_eq(pop_id(&q, 2), 2);
	ck_assert_int_eq(pop_id(&q, 2), 4);
	ck_assert_int_eq(pop_id(&q, 2), -1);
	queue_release(&q);
}
END_TEST

/* ---- StrictFIFO -------------------------------------------------------- */

START_TEST(head_of_line_blocking_strict)
{
	static const enum requeue_reason blocking[] = {
		RQ_GENERIC, RQ_NO_FIT, RQ_PREEMPTION_NO_CANDIDATES,
		RQ_FAILED_AFTER_NOMINATION, RQ_PREEMPTION_FAILED,
		RQ_PENDING_PREEMPTION,
	};
	struct cq_queue q;
	struct rec a, b;

	queue_init(&q, QS_STRICT_FIFO);
	rec_init(&a, 1, 10, 0);
	rec_init(&b, 2, 1, 0);
	push(&q, &a, 0);
	push(&q, &b, 0);
	for (size_t i = 0; i < sizeof(blocking) / sizeof(blocking[0]); i++) {
		ck_assert_int_eq(pop_id(&q, i + 1), 1);
		requeue(&q, &a, blocking[i], 0);
		ck_assert_int_eq(a.q.place, QPLACE_HEAP);
		/* PendingPreemption never makes a StrictFIFO head sticky. */
		ck_assert_ptr_null(q.sticky);
	}
	ck_assert_int_eq(b.q.place, QPLACE_HEAP);
	/* Only a namespace mismatch parks it, and then B gets its turn. */
	ck_assert_int_eq(pop_id(&q, 10), 1);
	requeue(&q, &a, RQ_NAMESPACE_MISMATCH, 0);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	ck_assert_int_eq(pop_id(&q, 11), 2);
	requeue(&q, &b, RQ_NO_FIT, 0);
	ck_assert_int_eq(pop_id(&q, 12), 2);
	ck_assert_uint_eq(queue_len_parked(&q), 1);
	ck_assert_uint_eq(queue_len_pending(&q), 2);
	queue_release(&q);
	ck_assert_int_eq(a.q.place, QPLACE_NONE);
}
END_TEST

/* ---- BestEffortFIFO ---------------------------------------------------- */

START_TEST(besteffort_nofit_parks)
{
	static const enum requeue_reason parking[] = {
		RQ_NO_FIT, RQ_GENERIC, RQ_PREEMPTION_NO_CANDIDATES,
		RQ_NAMESPACE_MISMATCH,
	};
	struct cq_queue q;
	struct rec r[5];

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	for (int i = 0; i < 5; i++) {
		rec_init(&r[i], i, 0, i);
		push(&q, &r[i], 0);
	}
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(pop_id(&q, i + 1), i);
		requeue(&q, &r[i], parking[i], 0);
		ck_assert_int_eq(r[i].q.place, QPLACE_PARKED);
		/* the next head pops in the next cycle */
		ck_assert_int_eq(peek_id(&q), i + 1);
	}
	ck_assert_uint_eq(queue_len_parked(&q), 4);
	ck_assert_uint_eq(queue_len_active(&q), 1);
	ck_assert_uint_eq(queue_len_pending(&q), 5);
	queue_release(&q);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(r[i].q.place, QPLACE_NONE);
}
END_TEST

static const enum requeue_reason immediate_be[] = {
	RQ_FAILED_AFTER_NOMINATION, RQ_PENDING_PREEMPTION, RQ_PREEMPTION_FAILED,
};

START_TEST(besteffort_immediate)
{
	struct cq_queue q;
	struct rec a, b;

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	rec_init(&a, 1, 10, 0);
	rec_init(&b, 2, 1, 0);
	push(&q, &a, 0);
	push(&q, &b, 0);
	ck_assert_int_eq(pop_id(&q, 1), 1);
	requeue(&q, &a, immediate_be[_i], 0);
	ck_assert_int_eq(a.q.place, QPLACE_HEAP);
	ck_assert_int_eq(pop_id(&q, 2), 1);
	ck_assert_uint_eq(queue_len_pending(&q), 2);
	queue_release(&q);
}
END_TEST

/* ---- sticky preemptor -------------------------------------------------- */

START_TEST(sticky_preemptor)
{
	struct cq_queue q;
	struct rec low, high, mid;

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	rec_init(&low, 1, 1, 0);
	rec_init(&high, 2, 100, 0);
	rec_init(&mid, 3, 50, 0);
	push(&q, &low, 0);
	ck_assert_int_eq(pop_id(&q, 1), 1);
	push(&q, &high, 0); /* arrives while low issues preemptions */
	requeue(&q, &low, RQ_PENDING_PREEMPTION, 0);
	ck_assert_ptr_eq(q.sticky, &low.q);
	ck_assert_int_lt(queue_compare(&q, &low.q, &high.q), 0);
	/* it pops first against a higher priority, cycle after cycle */
	for (uint64_t c = 2; c < 5; c++) {
		ck_assert_int_eq(pop_id(&q, c), 1);
		requeue(&q, &low, RQ_PENDING_PREEMPTION, 0);
	}
	push(&q, &mid, 0);
	ck_assert_int_eq(peek_id(&q), 1);
	/* cleared: it sinks back to its priority */
	queue_clear_sticky(&q);
	CHECK(&q);
	ck_assert_ptr_null(q.sticky);
	ck_assert_int_eq(pop_id(&q, 5), 2);
	ck_assert_int_eq(pop_id(&q, 5), 3);
	ck_assert_int_eq(pop_id(&q, 5), 1);
	queue_release(&q);
}
END_TEST

START_TEST(sticky_forgotten)
{
	struct cq_queue q;
	struct rec a, b, c;

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	rec_init(&a, 1, 1, 0);
	rec_init(&b, 2, 2, 0);
	rec_init(&c, 3, 100, 0);
	push(&q, &a, 0);
	/* removed while sticky (admitted or deleted) */
	ck_assert_int_eq(pop_id(&q, 1), 1);
	requeue(&q, &a, RQ_PENDING_PREEMPTION, 0);
	ck_assert_ptr_eq(q.sticky, &a.q);
	queue_remove(&q, &a.q);
	CHECK(&q);
	ck_assert_ptr_null(q.sticky);
	/* removed while inflight */
	push(&q, &a, 0);
	ck_assert_int_eq(pop_id(&q, 2), 1);
	requeue(&q, &a, RQ_PENDING_PREEMPTION, 0);
	ck_assert_int_eq(pop_id(&q, 3), 1);
	queue_remove(&q, &a.q);
	CHECK(&q);
	ck_assert_ptr_null(q.sticky);
	/* unschedulable on its next try: no longer the preemptor */
	push(&q, &a, 0);
	ck_assert_int_eq(pop_id(&q, 4), 1);
	requeue(&q, &a, RQ_PENDING_PREEMPTION, 0);
	push(&q, &c, 0);
	ck_assert_int_eq(pop_id(&q, 5), 1);
	requeue(&q, &a, RQ_NO_FIT, 0);
	ck_assert_ptr_null(q.sticky);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	/* a new preemptor replaces the old one, which re-sorts in the heap */
	queue_remove(&q, &a.q);
	push(&q, &a, 0);
	push(&q, &b, 0);
	ck_assert_int_eq(pop_id(&q, 6), 3);
	requeue(&q, &c, RQ_FAILED_AFTER_NOMINATION, 0);
	ck_assert_int_eq(pop_id(&q, 7), 3);
	ck_assert_int_eq(pop_id(&q, 7), 2);
	requeue(&q, &b, RQ_PENDING_PREEMPTION, 0);
	requeue(&q, &c, RQ_PENDING_PREEMPTION, 0);
	ck_assert_ptr_eq(q.sticky, &c.q);
	ck_assert_int_eq(peek_id(&q), 3);
	/* StrictFIFO forgets a former sticky preemptor on its next requeue */
	queue_set_strategy(&q, QS_STRICT_FIFO);
	CHECK(&q);
	ck_assert_int_eq(pop_id(&q, 8), 3);
	requeue(&q, &c, RQ_PENDING_PREEMPTION, 0);
	ck_assert_ptr_null(q.sticky);
	ck_assert_int_eq(pop_id(&q, 9), 3);
	ck_assert_int_eq(pop_id(&q, 9), 2);
	ck_assert_int_eq(pop_id(&q, 9), 1);
	queue_release(&q);
}
END_TEST

/* ---- requeue events ---------------------------------------------------- */

static bool keep_odd(void *ctx, const struct qitem *it)
{
	int *calls = ctx;

	(*calls)++;
	return REC_OF(it)->id % 2 == 1;
}

START_TEST(requeue_event_moves_parked)
{
	struct cq_queue q;
	struct rec r[6];
	int calls = 0;

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	for (int i = 0; i < 6; i++) {
		rec_init(&r[i], i, 0, i);
		push(&q, &r[i], 0);
	}
	for (uint64_t c = 1; c <= 6; c++) {
		struct qitem *it = queue_pop(&q, c);

		CHECK(&q);
		requeue(&q, REC_OF(it), RQ_NO_FIT, 0);
	}
	ck_assert_uint_eq(queue_len_parked(&q), 6);
	ck_assert_int_eq(pop_id(&q, 7), -1);
	/* a filter (the namespace selector) keeps the evens parked */
	ck_assert_uint_eq(queue_requeue_parked(&q, 0, keep_odd, &calls), 3);
	CHECK(&q);
	ck_assert_int_eq(calls, 6);
	ck_assert_uint_eq(queue_len_active(&q), 3);
	ck_assert_uint_eq(queue_len_parked(&q), 3);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(r[i].q.place,
				 i % 2 ? QPLACE_HEAP : QPLACE_PARKED);
	ck_assert_int_eq(pop_id(&q, 8), 1);
	/* NULL accepts all */
	ck_assert_uint_eq(queue_requeue_parked(&q, 0, NULL, NULL), 3);
	CHECK(&q);
	ck_assert_uint_eq(queue_requeue_parked(&q, 0, NULL, NULL), 0);
	CHECK(&q);
	{
		static const int want[] = { 0, 2, 3, 4, 5 };

		for (size_t i = 0; i < 5; i++)
			ck_assert_int_eq(pop_id(&q, 9), want[i]);
	}
	queue_release(&q);
}
END_TEST

START_TEST(requeue_event_while_inflight)
{
	struct cq_queue q;
	struct rec a, b;

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	rec_init(&a, 1, 5, 0);
	rec_init(&b, 2, 1, 0);
	push(&q, &a, 0);
	push(&q, &b, 0);
	/* 1. An event while A is being scheduled: NoFit still returns it. */
	ck_assert_int_eq(pop_id(&q, 1), 1);
	ck_assert_uint_eq(queue_requeue_parked(&q, 0, NULL, NULL), 0);
	CHECK(&q);
	requeue(&q, &a, RQ_NO_FIT, 0);
	ck_assert_int_eq(a.q.place, QPLACE_HEAP);
	/* 2. No event this time: parked. */
	ck_assert_int_eq(pop_id(&q, 2), 1);
	requeue(&q, &a, RQ_NO_FIT, 0);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	/* 3. An event before the pop does not count for it. */
	ck_assert_uint_eq(queue_requeue_parked(&q, 0, NULL, NULL), 1);
	CHECK(&q);
	ck_assert_int_eq(pop_id(&q, 3), 1);
	requeue(&q, &a, RQ_NO_FIT, 0);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	/* 4. Several heads in one cycle all see that cycle's event, also
	 *    under StrictFIFO's namespace mismatch. */
	queue_set_strategy(&q, QS_STRICT_FIFO);
	queue_remove(&q, &a.q);
	push(&q, &a, 0);
	ck_assert_int_eq(pop_id(&q, 4), 1);
	ck_assert_int_eq(pop_id(&q, 4), 2);
	ck_assert_uint_eq(q.ninflight, 2);
	queue_requeue_parked(&q, 0, NULL, NULL);
	CHECK(&q);
	requeue(&q, &a, RQ_NAMESPACE_MISMATCH, 0);
	requeue(&q, &b, RQ_NAMESPACE_MISMATCH, 0);
	ck_assert_int_eq(a.q.place, QPLACE_HEAP);
	ck_assert_int_eq(b.q.place, QPLACE_HEAP);
	ck_assert_uint_eq(q.ninflight, 0);
	queue_release(&q);
}
END_TEST

/* ---- backoff ----------------------------------------------------------- */

START_TEST(backoff_parks_until_expired)
{
	struct cq_queue q;
	struct rec a, b;

	queue_init(&q, QS_STRICT_FIFO);
	rec_init(&a, 1, 100, 0);
	rec_init(&b, 2, 1, 0);
	a.q.requeue_at_ms = 1000;
	push(&q, &a, 500);
	push(&q, &b, 500);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	ck_assert_int_eq(peek_id(&q), 2);
	ck_assert_int_eq(queue_next_backoff(&q), 1000);
	/* events before requeue_at do not release it */
	ck_assert_uint_eq(queue_requeue_parked(&q, 900, NULL, NULL), 0);
	CHECK(&q);
	ck_assert_uint_eq(queue_requeue_parked(&q, 999, NULL, NULL), 0);
	CHECK(&q);
	/* an unchanged update does not either, even once expired */
	queue_push(&q, &a.q, false, 2000);
	CHECK(&q);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	/* now >= requeue_at: released by the next event */
	ck_assert_uint_eq(queue_requeue_parked(&q, 1000, NULL, NULL), 1);
	CHECK(&q);
	ck_assert_int_eq(peek_id(&q), 1);
	ck_assert_int_eq(queue_next_backoff(&q), 0);

	/* a backoff set while inflight is honoured even when immediate */
	ck_assert_int_eq(pop_id(&q, 1), 1);
	a.q.requeue_at_ms = 3000;
	requeue(&q, &a, RQ_FAILED_AFTER_NOMINATION, 2000);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	/* ... and even when an event happened while it was inflight */
	queue_remove(&q, &a.q);
	a.q.requeue_at_ms = 0;
	push(&q, &a, 2000);
	ck_assert_int_eq(pop_id(&q, 2), 1);
	queue_requeue_parked(&q, 2000, NULL, NULL);
	a.q.requeue_at_ms = 3000;
	requeue(&q, &a, RQ_NO_FIT, 2000);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	/* a changed update before expiry parks it again */
	push(&q, &a, 2999);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	/* the workload controller clears requeueAt at expiry and re-adds */
	a.q.requeue_at_ms = 0;
	push(&q, &a, 3000);
	ck_assert_int_eq(a.q.place, QPLACE_HEAP);
	/* a heap item that gets a backoff leaves the heap */
	b.q.requeue_at_ms = 5000;
	push(&q, &b, 3000);
	ck_assert_int_eq(b.q.place, QPLACE_PARKED);
	ck_assert_int_eq(queue_next_backoff(&q), 5000);
	queue_release(&q);
}
END_TEST

START_TEST(requeued_false_keeps_parked)
{
	struct cq_queue q;
	struct rec a;

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	rec_init(&a, 1, 0, 0);
	a.q.requeued_false = true;
	push(&q, &a, 0);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	ck_assert_int_eq(queue_next_backoff(&q), 0); /* no time to wait for */
	ck_assert_uint_eq(queue_requeue_parked(&q, INT64_MAX, NULL, NULL), 0);
	CHECK(&q);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	/* Requeued=True arrives as an update of the condition */
	a.q.requeued_false = false;
	queue_push(&q, &a.q, false, 0);
	CHECK(&q);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	push(&q, &a, 0);
	ck_assert_int_eq(a.q.place, QPLACE_HEAP);
	/* Requeued=False while inflight: parked whatever the reason */
	ck_assert_int_eq(pop_id(&q, 1), 1);
	a.q.requeued_false = true;
	requeue(&q, &a, RQ_PENDING_PREEMPTION, 0);
	ck_assert_int_eq(a.q.place, QPLACE_PARKED);
	ck_assert_ptr_eq(q.sticky, &a.q); /* still the preemptor */
	a.q.requeued_false = false;
	ck_assert_uint_eq(queue_requeue_parked(&q, 0, NULL, NULL), 1);
	CHECK(&q);
	ck_assert_int_eq(peek_id(&q), 1);
	queue_release(&q);
}
END_TEST

START_TEST(next_backoff)
{
	struct cq_queue q;
	struct rec r[4];
	static const int64_t at[4] = { 700, 0, 300, 500 };

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	ck_assert_int_eq(queue_next_backoff(&q), 0);
	for (int i = 0; i < 4; i++) {
		rec_init(&r[i], i, 0, 0);
		r[i].q.requeue_at_ms = at[i];
		push(&q, &r[i], 100);
	}
	ck_assert_uint_eq(queue_len_parked(&q), 3);
	ck_assert_int_eq(queue_next_backoff(&q), 300);
	ck_assert_uint_eq(queue_requeue_parked(&q, 300, NULL, NULL), 1);
	CHECK(&q);
	ck_assert_int_eq(queue_next_backoff(&q), 500);
	queue_remove(&q, &r[3].q);
	CHECK(&q);
	ck_assert_int_eq(queue_next_backoff(&q), 700);
	/* an expired one that a filter kept parked still reports its time */
	ck_assert_uint_eq(queue_requeue_parked(&q, 800, keep_odd,
					       &(int){ 0 }), 0);
	CHECK(&q);
	ck_assert_int_eq(queue_next_backoff(&q), 700);
	queue_release(&q);
}
END_TEST

/* ---- counts, visit, inflight updates ----------------------------------- */

static void count_visit(void *ctx, struct qitem *it)
{
	int *seen = ctx;

	seen[REC_OF(it)->id]++;
}

START_TEST(counts_and_visit)
{
	struct cq_queue q;
	struct rec r[8];
	int seen[8] = { 0 };

	queue_init(&q, QS_BEST_EFFORT_FIFO);
	for (int i = 0; i < 8; i++) {
		rec_init(&r[i], i, 8 - i, 0);
		push(&q, &r[i], 0);
	}
	ck_assert_int_eq(pop_id(&q, 1), 0);
	ck_assert_int_eq(pop_id(&q, 1), 1);
	requeue(&q, &r[1], RQ_NO_FIT, 0);
	ck_assert_uint_eq(queue_len_active(&q), 6);
	ck_assert_uint_eq(queue_len_parked(&q), 1);
	ck_assert_uint_eq(queue_len_pending(&q), 8);
	/* an update of an inflight item leaves it to its cycle */
	r[0].q.priority = -100;
	queue_push(&q, &r[0].q, true, 0);
	CHECK(&q);
	ck_assert_int_eq(r[0].q.place, QPLACE_INFLIGHT);
	ck_assert_uint_eq(queue_len_pending(&q), 8);
	queue_visit(&q, count_visit, seen);
	ck_assert_int_eq(seen[0], 0); /* inflight: held by the cycle */
	for (int i = 1; i < 8; i++)
		ck_assert_int_eq(seen[i], 1);
	requeue(&q, &r[0], RQ_FAILED_AFTER_NOMINATION, 0);
	ck_assert_int_eq(REC_OF(q.heap[q.nheap - 1])->id, 0);
	ck_assert_uint_eq(queue_len_active(&q), 7);
	ck_assert_uint_eq(q.ninflight, 0);
	queue_release(&q);
	ck_assert_uint_eq(queue_len_pending(&q), 0);
	ck_assert_ptr_null(q.heap);
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(r[i].q.place, QPLACE_NONE);
}
END_TEST

/* ---- randomized comparison against a reference model ------------------- */

#define RN 48       /* records */
#define ROPS 20000  /* operations */

struct model {
	enum qplace place[RN];
	uint64_t pop_cycle[RN];
	int sticky;            /* id, or -1 */
	uint64_t cycle, requeue_cycle;
	enum queueing_strategy strategy;
};

static uint64_t rng_state;

static uint32_t rnd(uint32_t n)
{
	/* xorshift64*: fixed seed, same sequence on every platform */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (uint32_t)((rng_state * 0x2545F4914F6CDD1DULL) >> 33) % n;
}

static struct rec *g_recs;
static const struct model *g_model;

/* The order written out naively, independent of queue_compare. */
static int ref_less(const struct model *m, const struct rec *a,
		    const struct rec *b)
{
	if ((m->sticky == a->id) != (m->sticky == b->id))
		return m->sticky == a->id;
	if (a->q.priority != b->q.priority)
		return a->q.priority > b->q.priority;
	if (a->q.ts_ms != b->q.ts_ms)
		return a->q.ts_ms < b->q.ts_ms;
	return strcmp(a->uid, b->uid) < 0;
}

static int ref_cmp_ids(const void *pa, const void *pb)
{
	const struct rec *a = &g_recs[*(const int *)pa];
	const struct rec *b = &g_recs[*(const int *)pb];

	if (ref_less(g_model, a, b))
		return -1;
	return ref_less(g_model, b, a) ? 1 : 0;
}

static bool ref_ready(const struct rec *r, int64_t now)
{
	return !r->q.requeued_false &&
	       !(r->q.requeue_at_ms > 0 && now < r->q.requeue_at_ms);
}

static int ref_head(const struct model *m, struct rec *recs)
{
	int best = -1;

	for (int i = 0; i < RN; i++)
		if (m->place[i] == QPLACE_HEAP &&
		    (best < 0 || ref_less(m, &recs[i], &recs[best])))
			best = i;
	return best;
}

static void ref_push(struct model *m, struct rec *r, bool changed,
		     int64_t now)
{
	enum qplace *p = &m->place[r->id];

	if (*p == QPLACE_INFLIGHT || (*p == QPLACE_PARKED && !changed))
		return;
	*p = ref_ready(r, now) ? QPLACE_HEAP : QPLACE_PARKED;
}

static void ref_requeue(struct model *m, struct rec *r,
			enum requeue_reason why, int64_t now)
{
	bool imm;

	if (m->place[r->id] != QPLACE_INFLIGHT)
		return;
	if (why == RQ_PENDING_PREEMPTION &&
	    m->strategy == QS_BEST_EFFORT_FIFO)
		m->sticky = r->id;
	else if (m->sticky == r->id)
		m->sticky = -1;
	if (m->strategy == QS_STRICT_FIFO)
		imm = why != RQ_NAMESPACE_MISMATCH;
	else
		imm = why == RQ_FAILED_AFTER_NOMINATION ||
		      why == RQ_PENDING_PREEMPTION ||
		      why == RQ_PREEMPTION_FAILED;
	if (ref_ready(r, now) &&
	    (imm || m->requeue_cycle >= m->pop_cycle[r->id]))
		m->place[r->id] = QPLACE_HEAP;
	else
		m->place[r->id] = QPLACE_PARKED;
}

struct keep_mod {
	int mod, rem;
};

static bool keep_by_mod(void *ctx, const struct qitem *it)
{
	const struct keep_mod *k = ctx;

	return REC_OF(it)->id % k->mod != k->rem;
}

/* queue_snapshot lists the model's HEAP items in order, then its PARKED
 * ones in order (the visibility API's positions). */
static void snapshot_matches_model(const struct cq_queue *q,
				   struct model *m, struct rec *recs)
{
	int want[RN];
	size_t nw = 0, na, n;
	struct qitem **v;

	g_recs = recs;
	g_model = m;
	for (int pass = 0; pass < 2; pass++) {
		size_t from = nw;

		for (int i = 0; i < RN; i++)
			if (m->place[i] == (pass ? QPLACE_PARKED : QPLACE_HEAP))
				want[nw++] = i;
		qsort(want + from, nw - from, sizeof(want[0]), ref_cmp_ids);
		if (!pass)
			na = nw;
	}
	{
		size_t got_na;

		n = queue_snapshot(q, &v, &got_na);
		T_ASSERT_MSG(n == nw && got_na == na,
			     "snapshot has %zu (%zu active), model %zu (%zu)",
			     n, got_na, nw, na);
		for (size_t i = 0; i < n; i++)
			T_ASSERT_MSG(REC_OF(v[i])->id == want[i],
				     "snapshot[%zu] is %d, model %d", i,
				     REC_OF(v[i])->id, want[i]);
	}
	free(v);
}

static void compare_with_model(const struct cq_queue *q,
			       const struct model *m, struct rec *recs)
{
	size_t nh = 0, np = 0, ni = 0;
	int64_t nb = 0;

	CHECK(q);
	for (int i = 0; i < RN; i++) {
		T_ASSERT_MSG(recs[i].q.place == m->place[i],
			     "rec %d: place %d, model %d", i,
			     (int)recs[i].q.place, (int)m->place[i]);
		nh += m->place[i] == QPLACE_HEAP;
		ni += m->place[i] == QPLACE_INFLIGHT;
		if (m->place[i] == QPLACE_PARKED) {
			np++;
			if (recs[i].q.requeue_at_ms &&
			    (!nb || recs[i].q.requeue_at_ms < nb))
				nb = recs[i].q.requeue_at_ms;
		}
	}
	T_ASSERT_PTR(q->sticky, ==, m->sticky < 0 ? NULL :
		     &recs[m->sticky].q);
	T_ASSERT_UINT(queue_len_active(q), ==, nh);
	T_ASSERT_UINT(queue_len_parked(q), ==, np);
	T_ASSERT_UINT(queue_len_pending(q), ==, nh + np + ni);
	T_ASSERT_INT(queue_next_backoff(q), ==, nb);
	{
		int h = ref_head(m, recs);

		T_ASSERT_PTR(queue_peek(q), ==, h < 0 ? NULL : &recs[h].q);
	}
}

static void mutate_keys(struct rec *r, int64_t now)
{
	switch (rnd(6)) {
	case 0:
		r->q.priority = (int32_t)rnd(5) - 2; /* few values: many ties */
		break;
	case 1:
		r->q.ts_ms = rnd(8);
		break;
	case 2:
		r->q.requeue_at_ms = rnd(3) ? 0 : now + rnd(60);
		break;
	case 3:
		r->q.requeued_false = rnd(4) == 0;
		break;
	default:
		break;
	}
}

START_TEST(randomized_against_model)
{
	struct rec recs[RN];
	struct model m;
	struct cq_queue q;
	int64_t now = 1000;
	int order[RN], n = 0, pops = 0;

	rng_state = 0x9E3779B97F4A7C15ULL;
	memset(&m, 0, sizeof(m));
	m.sticky = -1;
	m.strategy = QS_BEST_EFFORT_FIFO;
	queue_init(&q, m.strategy);
	for (int i = 0; i < RN; i++)
		rec_init(&recs[i], i, (int32_t)rnd(5) - 2, rnd(8));

	for (int op = 0; op < ROPS; op++) {
		struct rec *r = &recs[rnd(RN)];
		uint32_t k = rnd(100);

		if (k < 35) { /* 1. add or update */
			bool changed = rnd(3) != 0;

			if (r->q.place != QPLACE_HEAP || changed)
				mutate_keys(r, now);
			queue_push(&q, &r->q, changed, now);
			ref_push(&m, r, changed, now);
		} else if (k < 42) { /* 2. delete */
			queue_remove(&q, &r->q);
			m.place[r->id] = QPLACE_NONE;
			if (m.sticky == r->id)
				m.sticky = -1;
		} else if (k < 80) { /* 3. a scheduling cycle */
			struct rec *popped[4];
			uint32_t want = 1 + rnd(3), got = 0;

			m.cycle++;
			while (got < want) {
				int h = ref_head(&m, recs);
				struct qitem *it = queue_pop(&q, m.cycle);

				ck_assert_ptr_eq(it, h < 0 ? NULL :
						 &recs[h].q);
				if (!it)
					break;
				m.place[h] = QPLACE_INFLIGHT;
				m.pop_cycle[h] = m.cycle;
				popped[got++] = &recs[h];
				pops++;
			}
			if (got && rnd(5) == 0) { /* admitted or deleted */
				struct rec *gone = popped[rnd(got)];

				queue_remove(&q, &gone->q);
				m.place[gone->id] = QPLACE_NONE;
				if (m.sticky == gone->id)
					m.sticky = -1;
			}
			if (rnd(6) == 0) { /* an event during the cycle */
				queue_requeue_parked(&q, now, NULL, NULL);
				m.requeue_cycle = m.cycle;
				for (int i = 0; i < RN; i++)
					if (m.place[i] == QPLACE_PARKED &&
					    ref_ready(&recs[i], now))
						m.place[i] = QPLACE_HEAP;
			}
			for (uint32_t i = 0; i < got; i++) {
				enum requeue_reason why =
					(enum requeue_reason)rnd(7);

				if (rnd(8) == 0)
					mutate_keys(popped[i], now);
				queue_requeue(&q, &popped[i]->q, why, now);
				ref_requeue(&m, popped[i], why, now);
				ck_assert(queue_check(&q));
			}
		} else if (k < 88) { /* 4. a requeue event with a filter */
			struct keep_mod km = { 2 + (int)rnd(4), 0 };
			size_t want = 0;

			km.rem = (int)rnd((uint32_t)km.mod);
			m.requeue_cycle = m.cycle;
			for (int i = 0; i < RN; i++)
				if (m.place[i] == QPLACE_PARKED &&
				    ref_ready(&recs[i], now) &&
				    i % km.mod != km.rem) {
					m.place[i] = QPLACE_HEAP;
					want++;
				}
			ck_assert_uint_eq(queue_requeue_parked(&q, now,
							       keep_by_mod,
							       &km), want);
		} else if (k < 96) { /* 5. time passes */
			now += rnd(40);
		} else if (k < 98) {
			queue_clear_sticky(&q);
			m.sticky = -1;
		} else { /* 6. a spec update flips the strategy */
			m.strategy = m.strategy == QS_STRICT_FIFO ?
				     QS_BEST_EFFORT_FIFO : QS_STRICT_FIFO;
			queue_set_strategy(&q, m.strategy);
		}
		compare_with_model(&q, &m, recs);
		if (op % 16 == 0)
			snapshot_matches_model(&q, &m, recs);
	}
	ck_assert_int_gt(pops, ROPS / 4);

	/* Drain: every backoff over, one event, then the full pop order must
	 * equal the reference order sorted with qsort. */
	for (int i = 0; i < RN; i++) {
		recs[i].q.requeue_at_ms = 0;
		recs[i].q.requeued_false = false;
		if (m.place[i] != QPLACE_NONE)
			order[n++] = i;
	}
	queue_requeue_parked(&q, now, NULL, NULL);
	CHECK(&q);
	ck_assert_uint_eq(queue_len_active(&q), (size_t)n);
	g_recs = recs;
	g_model = &m;
	qsort(order, (size_t)n, sizeof(order[0]), ref_cmp_ids);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pop_id(&q, m.cycle + 1), order[i]);
	ck_assert_ptr_null(queue_pop(&q, m.cycle + 1));
	queue_release(&q);
}
END_TEST

Suite *queue_suite(void)
{
	Suite *s = suite_create("queue");
	TCase *tc = tcase_create("order");

	tcase_add_test(tc, order_priority_ts_uid);
	tcase_add_test(tc, push_update_resorts);
	tcase_add_test(tc, remove_from_each_place);
	tcase_add_test(tc, counts_and_visit);
	suite_add_tcase(s, tc);
	tc = tcase_create("strict-fifo");
	tcase_add_test(tc, head_of_line_blocking_strict);
	suite_add_tcase(s, tc);
	tc = tcase_create("best-effort-fifo");
	tcase_add_test(tc, besteffort_nofit_parks);
	tcase_add_loop_test(tc, besteffort_immediate, 0,
			    (int)(sizeof(immediate_be) /
				  sizeof(immediate_be[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("sticky-preemptor");
	tcase_add_test(tc, sticky_preemptor);
	tcase_add_test(tc, sticky_forgotten);
	suite_add_tcase(s, tc);
	tc = tcase_create("requeue-events");
	tcase_add_test(tc, requeue_event_moves_parked);
	tcase_add_test(tc, requeue_event_while_inflight);
	suite_add_tcase(s, tc);
	tc = tcase_create("backoff");
	tcase_add_test(tc, backoff_parks_until_expired);
	tcase_add_test(tc, requeued_false_keeps_parked);
	tcase_add_test(tc, next_backoff);
	suite_add_tcase(s, tc);
	tc = tcase_create("randomized");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, randomized_against_model);
	suite_add_tcase(s, tc);
	return s;
}
