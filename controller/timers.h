/*
 * timers: the controller's timer heap, a binary min-heap of timers that
 * the owners embed in their own structs (nginx's ngx_event_t timers, Redis'
 * aeTimeEvent without the list walk).
 *
 * The heap owns nothing: it holds borrowed pointers to struct timer, and
 * each armed timer knows its slot, so cancel and re-arm are O(log n). A
 * timer must be cancelled (or have fired) before the memory holding it is
 * freed. Times are plain int64_t milliseconds on whatever clock the caller
 * uses (the loop's CLOCK_MONOTONIC); this module never reads a clock, so
 * it is pure and unit-tested without the network.
 *
 * Order: a timer fires when due_ms <= now. Timers due at the same ms fire
 * in the order they were armed (a sequence number breaks ties), so a
 * retry armed first runs first.
 */
#ifndef CONTROLLER_TIMERS_H
#define CONTROLLER_TIMERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Called when the timer is due; now_ms is the time timers_fire_due was
 * given. The timer is already disarmed, so the callback may re-arm it,
 * arm or cancel any other timer, or free the struct holding it. */
typedef void timer_fn(void *ud, int64_t now_ms);

struct timer {
	timer_fn *fn;     /* set by timers_setup; never NULL once set */
	void *ud;         /* passed to fn; borrowed */
	int64_t due_ms;   /* valid while armed */
	uint64_t seq;     /* arm order, breaks ties between equal due_ms */
	size_t slot;      /* index in the heap; TIMERS_UNARMED when not in it */
};

#define TIMERS_UNARMED ((size_t)-1)
#define TIMER_INIT(fn, ud) { (fn), (ud), 0, 0, TIMERS_UNARMED }

struct timers {
	struct timer **v; /* owned array of borrowed timers; heap-ordered */
	size_t n;         /* armed timers */
	size_t cap;
	uint64_t seq;     /* next arm sequence number */
	int64_t floor_ms; /* earliest due accepted; INT64_MIN unless firing */
};

#define TIMERS_INIT { NULL, 0, 0, 0, INT64_MIN }

/* Makes t an unarmed timer calling fn(ud). */
void timers_setup(struct timer *t, timer_fn *fn, void *ud);

/* init: an empty heap. release: frees the array; armed timers are simply
 * forgotten (left marked unarmed), never called. */
void timers_init(struct timers *h);
void timers_release(struct timers *h);

/* Arms t to fire at due_ms; an armed t is moved (re-armed) instead. */
void timers_arm(struct timers *h, struct timer *t, int64_t due_ms);
/* Disarms t; a no-op when t is not armed. */
void timers_cancel(struct timers *h, struct timer *t);
bool timers_is_armed(const struct timer *t);

/* The earliest due time, or INT64_MAX when no timer is armed. */
int64_t timers_next_due(const struct timers *h);
/* Armed timers. */
size_t timers_count(const struct timers *h);

/*
 * Fires every timer due at now_ms, earliest first (ties in arm order).
 * A timer that a callback arms during the call is due at now_ms + 1 at
 * the earliest, so it waits for a later call and a callback re-arming
 * itself with delay 0 cannot starve the loop. Returns how many fired.
 */
size_t timers_fire_due(struct timers *h, int64_t now_ms);

/* True when the heap order and every slot index hold (STYLE P15). */
bool timers_check(const struct timers *h);

#endif
