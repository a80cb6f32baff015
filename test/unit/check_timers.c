/*
 * Suite "timers": the controller's timer heap (controller/timers.h), pure
 * and clock-free: order by due time then arm order, cancel and re-arm from
 * anywhere (callbacks included), no starvation by self re-arming, and the
 * heap invariants after every step (STYLE P15). A randomised run checks
 * the heap against a plain array model.
 */
#include <stdlib.h>
#include <string.h>

#include "controller/timers.h"
#include "suites.h"
#include "test/support/support.h"

#define NT 64

struct rec {
	struct timers *h;
	int fired[256];    /* ids in firing order */
	size_t n;
	int64_t at[256];   /* now_ms each firing saw */
};

struct tt {
	struct timer t;
	struct rec *r;
	int id;
	int rearm;         /* re-arm itself this many more times */
	struct tt *cancel; /* cancels this one when firing */
	struct tt *arm;    /* arms this one (due 0) when firing */
};

static void on_fire(void *ud, int64_t now_ms)
{
	struct tt *x = ud;

	/* plain ifs: every ck_assert is a message to Check's parent */
	if (timers_is_armed(&x->t))
		ck_abort_msg("timer %d armed in its own callback", x->id);
	x->r->at[x->r->n] = now_ms;
	x->r->fired[x->r->n++] = x->id;
	if (x->rearm > 0) {
		x->rearm--;
		timers_arm(x->r->h, &x->t, now_ms);
	}
	if (x->cancel)
		timers_cancel(x->r->h, &x->cancel->t);
	if (x->arm)
		timers_arm(x->r->h, &x->arm->t, 0);
	if (!timers_check(x->r->h))
		ck_abort_msg("heap broken after timer %d", x->id);
}

static void mk(struct tt *x, struct rec *r, int id)
{
	memset(x, 0, sizeof(*x));
	timers_setup(&x->t, on_fire, x);
	x->r = r;
	x->id = id;
}

START_TEST(order_and_ties)
{
	struct timers h = TIMERS_INIT;
	struct rec r = { .h = &h };
	struct tt x[5];
	static const int64_t due[5] = { 30, 10, 20, 10, 5 };

	for (int i = 0; i < 5; i++) {
		mk(&x[i], &r, i);
		timers_arm(&h, &x[i].t, due[i]);
		ck_assert(timers_check(&h));
	}
	ck_assert_uint_eq(timers_count(&h), 5);
	ck_assert_int_eq(timers_next_due(&h), 5);
	ck_assert_uint_eq(timers_fire_due(&h, 4), 0);
	ck_assert_uint_eq(timers_fire_due(&h, 20), 4);
	/* 5, then the two 10s in arm order, then 20 */
	ck_assert_int_eq(r.fired[0], 4);
	ck_assert_int_eq(r.fired[1], 1);
	ck_assert_int_eq(r.fired[2], 3);
	ck_assert_int_eq(r.fired[3], 2);
	ck_assert_int_eq(r.at[0], 20);
	ck_assert_int_eq(timers_next_due(&h), 30);
	ck_assert_uint_eq(timers_fire_due(&h, 100), 1);
	ck_assert_int_eq(timers_next_due(&h), INT64_MAX);
	timers_release(&h);
}
END_TEST

START_TEST(cancel_and_rearm)
{
	struct timers h = TIMERS_INIT;
	struct rec r = { .h = &h };
	struct tt a, b, c;

	mk(&a, &r, 1);
	mk(&b, &r, 2);
	mk(&c, &r, 3);
	timers_cancel(&h, &a.t); /* not armed: no-op */
	timers_arm(&h, &a.t, 10);
	timers_arm(&h, &b.t, 20);
	timers_arm(&h, &c.t, 30);
	timers_arm(&h, &a.t, 40); /* re-arm moves it */
	ck_assert_uint_eq(timers_count(&h), 3);
	timers_cancel(&h, &b.t);
	ck_assert(!timers_is_armed(&b.t));
	ck_assert(timers_check(&h));
	ck_assert_uint_eq(timers_fire_due(&h, 100), 2);
	ck_assert_int_eq(r.fired[0], 3);
	ck_assert_int_eq(r.fired[1], 1);
	/* release forgets armed timers without calling them */
	timers_arm(&h, &b.t, 1);
	timers_release(&h);
	ck_assert(!timers_is_armed(&b.t));
	ck_assert_uint_eq(r.n, 2);
}
END_TEST

START_TEST(callbacks_change_the_heap)
{
	struct timers h = TIMERS_INIT;
	struct rec r = { .h = &h };
	struct tt a, b, c, d;

	mk(&a, &r, 1);
	mk(&b, &r, 2);
	mk(&c, &r, 3);
	mk(&d, &r, 4);
	a.cancel = &b;   /* a cancels b, due at the same time */
	a.arm = &d;      /* and arms d in the past */
	c.rearm = 3;     /* c re-arms itself with delay 0 */
	timers_arm(&h, &a.t, 10);
	timers_arm(&h, &b.t, 10);
	timers_arm(&h, &c.t, 10);
	/* one call: a, c; b is cancelled; d and c's re-arm wait (due 11) */
	ck_assert_uint_eq(timers_fire_due(&h, 10), 2);
	ck_assert_int_eq(r.fired[0], 1);
	ck_assert_int_eq(r.fired[1], 3);
	ck_assert(timers_is_armed(&d.t));
	ck_assert_int_eq(timers_next_due(&h), 11);
	ck_assert_uint_eq(timers_fire_due(&h, 10), 0);
	ck_assert_uint_eq(timers_fire_due(&h, 11), 2);
	/* d was armed before c re-armed itself */
	ck_assert_int_eq(r.fired[2], 4);
	ck_assert_int_eq(r.fired[3], 3);
	ck_assert_uint_eq(timers_fire_due(&h, 12), 1);
	ck_assert_uint_eq(timers_fire_due(&h, 13), 1);
	ck_assert_uint_eq(timers_fire_due(&h, 14), 0);
	ck_assert_uint_eq(timers_count(&h), 0);
	timers_release(&h);
}
END_TEST

/* Random arms, cancels and fires against an array model. */
START_TEST(random_against_model)
{
	struct timers h = TIMERS_INIT;
	struct rec r = { .h = &h };
	struct tt x[NT];
	bool armed[NT] = { false };
	int64_t due[NT] = { 0 };
	int64_t now = 0;
	unsigned seed = 12345;
	bool ok;

	for (int i = 0; i < NT; i++)
		mk(&x[i], &r, i);
	for (int step = 0; step < 5000; step++) {
		int i = (int)(rand_r(&seed) % NT);
		unsigned op = (unsigned)rand_r(&seed) % 10;

		if (op < 5) {
			due[i] = now + rand_r(&seed) % 50;
			armed[i] = true;
			timers_arm(&h, &x[i].t, due[i]);
		} else if (op < 8) {
			armed[i] = false;
			timers_cancel(&h, &x[i].t);
		} else {
			int64_t prev = INT64_MIN;
			size_t want = 0;

			now += rand_r(&seed) % 20;
			for (int j = 0; j < NT; j++)
				if (armed[j] && due[j] <= now)
					want++;
			r.n = 0;
			if (timers_fire_due(&h, now) != want)
				ck_abort_msg("step %d: fired %zu, want %zu", step,
					     r.n, want);
			for (size_t k = 0; k < r.n; k++) {
				int id = r.fired[k];

				if (!armed[id] || prev > due[id])
					ck_abort_msg("step %d: timer %d out of "
						     "order", step, id);
				prev = due[id];
				armed[id] = false;
			}
		}
		/* one assert per step: Check reports each one to its parent */
		ok = timers_check(&h);
		for (int j = 0; j < NT; j++)
			ok = ok && timers_is_armed(&x[j].t) == armed[j];
		if (!ok)
			ck_abort_msg("heap and model differ at step %d", step);
	}
	timers_release(&h);
}
END_TEST

Suite *timers_suite(void)
{
	Suite *s = suite_create("timers");
	TCase *tc = tcase_create("heap");

	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, order_and_ties);
	tcase_add_test(tc, cancel_and_rearm);
	tcase_add_test(tc, callbacks_change_the_heap);
	tcase_add_test(tc, random_against_model);
	suite_add_tcase(s, tc);
	return s;
}
