/*
 * timers: a binary min-heap over (due_ms, seq) with the slot of every
 * armed timer kept in the timer itself (see timers.h). No allocation but
 * the growth of the pointer array; no clock, no I/O.
 */
#include "controller/timers.h"

#include <stdlib.h>

#include "base/alloc.h"

static bool before(const struct timer *a, const struct timer *b)
{
	if (a->due_ms != b->due_ms)
		return a->due_ms < b->due_ms;
	return a->seq < b->seq;
}

static void place(struct timers *h, size_t i, struct timer *t)
{
	h->v[i] = t;
	t->slot = i;
}

static void sift_up(struct timers *h, size_t i)
{
	struct timer *t = h->v[i];

	while (i > 0) {
		size_t parent = (i - 1) / 2;

		if (!before(t, h->v[parent]))
			break;
		place(h, i, h->v[parent]);
		i = parent;
	}
	place(h, i, t);
}

static void sift_down(struct timers *h, size_t i)
{
	struct timer *t = h->v[i];

	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		const struct timer *best = t;

		if (l < h->n && before(h->v[l], best)) {
			m = l;
			best = h->v[l];
		}
		if (r < h->n && before(h->v[r], best))
			m = r;
		if (m == i)
			break;
		place(h, i, h->v[m]);
		i = m;
	}
	place(h, i, t);
}

void timers_setup(struct timer *t, timer_fn *fn, void *ud)
{
	t->fn = fn;
	t->ud = ud;
	t->due_ms = 0;
	t->seq = 0;
	t->slot = TIMERS_UNARMED;
}

void timers_init(struct timers *h)
{
	h->v = NULL;
	h->n = 0;
	h->cap = 0;
	h->seq = 0;
	h->floor_ms = INT64_MIN;
}

void timers_release(struct timers *h)
{
	for (size_t i = 0; i < h->n; i++)
		h->v[i]->slot = TIMERS_UNARMED;
	free(h->v);
	timers_init(h);
}

bool timers_is_armed(const struct timer *t)
{
	return t->slot != TIMERS_UNARMED;
}

/* Takes the timer at slot i out of the heap. */
static void remove_at(struct timers *h, size_t i)
{
	struct timer *t = h->v[i], *last;

	t->slot = TIMERS_UNARMED;
	h->n--;
	if (i == h->n)
		return;
	last = h->v[h->n];
	place(h, i, last);
	if (i > 0 && before(last, h->v[(i - 1) / 2]))
		sift_up(h, i);
	else
		sift_down(h, i);
}

void timers_arm(struct timers *h, struct timer *t, int64_t due_ms)
{
	if (!t->fn)
		BUG("timer armed before timers_setup");
	if (timers_is_armed(t)) {
		if (t->slot >= h->n || h->v[t->slot] != t)
			BUG("timer armed on another heap");
		remove_at(h, t->slot);
	}
	t->due_ms = due_ms < h->floor_ms ? h->floor_ms : due_ms;
	t->seq = h->seq++;
	XGROW(h->v, h->cap, h->n + 1);
	place(h, h->n, t);
	h->n++;
	sift_up(h, h->n - 1);
}

void timers_cancel(struct timers *h, struct timer *t)
{
	if (!timers_is_armed(t))
		return;
	if (t->slot >= h->n || h->v[t->slot] != t)
		BUG("timer cancelled on another heap");
	remove_at(h, t->slot);
}

int64_t timers_next_due(const struct timers *h)
{
	return h->n ? h->v[0]->due_ms : INT64_MAX;
}

size_t timers_count(const struct timers *h)
{
	return h->n;
}

size_t timers_fire_due(struct timers *h, int64_t now_ms)
{
	size_t fired = 0;
	int64_t saved = h->floor_ms;

	/* Timers armed by the callbacks land after now_ms (timers_arm clamps
	 * them), so the root being due means it was armed before this call. */
	h->floor_ms = now_ms == INT64_MAX ? INT64_MAX : now_ms + 1;
	while (h->n && h->v[0]->due_ms <= now_ms) {
		struct timer *t = h->v[0];

		remove_at(h, 0);
		fired++;
		t->fn(t->ud, now_ms);
	}
	h->floor_ms = saved;
	return fired;
}

bool timers_check(const struct timers *h)
{
	for (size_t i = 0; i < h->n; i++) {
		if (!h->v[i] || h->v[i]->slot != i)
			return false;
		if (i > 0 && before(h->v[i], h->v[(i - 1) / 2]))
			return false;
	}
	return true;
}
