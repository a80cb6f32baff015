/*
 * loop: the controller's one event loop (STYLE P7). It owns the process's
 * libcurl multi handle, the timer heap (timers.h), the signal self-pipe
 * and the cached clocks; everything the controller does runs in one of its
 * callbacks, on the thread that calls loop_run. The iteration order and
 * the threading rule are written once, at the top of loop.c.
 *
 * Transfers: an owner (controller/kube.c) configures a CURL easy handle
 * and gives it to loop_transfer_start; the loop adds it to the multi
 * handle, passes body and header bytes to the owner's callbacks while the
 * transfer streams, and calls done once when it ends, then frees the
 * handle. libcurl forbids multi calls from inside its callbacks, so the
 * loop defers starts and stops made there (from a watch event, say) to
 * the end of the drain step; owners never see the difference.
 *
 * Lifetimes: free every owner of transfers and timers (informers, then the
 * kube client) before loop_free.
 */
#ifndef CONTROLLER_LOOP_H
#define CONTROLLER_LOOP_H

/* Connections per host the loop's transfers share (see loop.c). */
#define LOOP_MAX_HOST_CONNS 64
/* Easy handles of ended transfers kept for reuse (loop_easy_new). */
#define LOOP_EASY_POOL 64

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/timers.h"
#include "model/errors.h"

struct loop;
struct loop_transfer;

struct loop_opts {
	bool handle_signals; /* SIGINT/SIGTERM stop the loop (one loop per
				process may ask; the old handlers come back
				at loop_free) */
	int64_t max_wait_ms; /* longest single wait; 0: 10 s */
};

/*
 * Returns a new loop (and takes one libcurl global-init reference, made
 * with the x* allocators of base/alloc.h), or NULL + err when the multi
 * handle, the pipe or the signal handlers cannot be set up.
 */
struct loop *loop_new(const struct loop_opts *o, struct err *err);
/* Stops every transfer still running (their done callbacks are not
 * called), forgets armed timers, restores signal handlers. NULL-safe. */
void loop_free(struct loop *l);

/*
 * Runs iterations until loop_stop is called or a handled signal arrives.
 * Returns 0 then, or -1 + err when libcurl's multi interface fails.
 */
int loop_run(struct loop *l, struct err *err) MUST_CHECK;
/*
 * Runs one iteration, waiting at most max_wait_ms (0: do not wait) for
 * sockets, the nearest timer or a signal. For tests and for a caller
 * that wants to interleave its own checks. Returns 0, or -1 + err.
 */
int loop_run_once(struct loop *l, int64_t max_wait_ms,
		  struct err *err) MUST_CHECK;
/* Makes loop_run return after the current iteration. Any loop callback. */
void loop_stop(struct loop *l);
/* Clears a stop and the signal that made it, so the loop can run again
 * (a graceful shutdown finishing its writes); a new signal stops it
 * again. Not from a loop callback. */
void loop_resume(struct loop *l);
bool loop_is_stopping(const struct loop *l);
/* The signal that stopped the loop (SIGINT, SIGTERM), or 0. */
int loop_signal(const struct loop *l);
/* Completed iterations, for tests and metrics. */
uint64_t loop_iterations(const struct loop *l);

/* CLOCK_MONOTONIC in ms, read once per iteration (after the wait). Timers
 * use this clock. */
int64_t loop_now_ms(const struct loop *l);
/* CLOCK_REALTIME in ms since the epoch, read at the same moment, for
 * timestamps written into objects. */
int64_t loop_wall_ms(const struct loop *l);

/*
 * The before-sleep step (3 of every iteration): every hook added runs,
 * in the order added, after the timers and before the wait. A process
 * has one manager per loop, but tests run two replicas on one loop, and
 * each must keep its step. At most LOOP_HOOKS_MAX hooks (BUG beyond);
 * adding the same (fn, ud) twice is a BUG. Remove takes the pair back
 * (absent: nothing); not from inside a hook. ud is borrowed.
 */
#define LOOP_HOOKS_MAX 4
typedef void loop_hook_fn(void *ud);
void loop_before_sleep_add(struct loop *l, loop_hook_fn *fn, void *ud);
void loop_before_sleep_remove(struct loop *l, loop_hook_fn *fn, void *ud);

/* Timers on the loop's heap (see timers.h for the callback rules). The
 * delay counts from loop_now_ms; a negative delay is 0. t is borrowed and
 * must stay valid while armed. */
void loop_timer_arm(struct loop *l, struct timer *t, int64_t delay_ms);
void loop_timer_arm_at(struct loop *l, struct timer *t, int64_t due_ms);
void loop_timer_cancel(struct loop *l, struct timer *t);

/*
 * Background work, the loop's one way to run CPU-heavy code (an RSA key
 * generation takes from 50 ms to seconds on a loaded machine) without
 * stalling every timer, watch and Lease renewal behind it. work(arg)
 * runs on a thread of its own and may touch nothing but arg (no loop,
 * no log of controller state, no JSON shared with the loop); afterwards
 * done(arg, false) runs on the loop thread, in step 1 of an iteration.
 * arg is owned by the work until done has run: done frees it.
 */
/* Wakes the loop from any thread: the current or next wait returns at
 * once and the iteration runs its before-sleep hooks (where the caller's
 * hook finds what the thread left for it, under its own lock).
 * Async-signal-safe; never blocks (a full pipe already holds a wake-up). */
void loop_wake(struct loop *l);

typedef void loop_work_fn(void *arg);
typedef void loop_work_done_fn(void *arg, bool cancelled);
struct loop_work;
/* Starts work; returns its handle (valid until done has been called or
 * loop_work_cancel), or NULL + err when no thread can be made (then
 * nothing runs and arg stays the caller's). Any loop callback. */
struct loop_work *loop_work_start(struct loop *l, loop_work_fn *work,
				  loop_work_done_fn *done, void *arg,
				  struct err *err);
/* The owner no longer wants the result: done(arg, true) runs instead,
 * once the thread has finished (the work cannot be interrupted), so done
 * must not reach the owner when cancelled. NULL-safe; any loop
 * callback. loop_free waits for every running work and cancels it. */
void loop_work_cancel(struct loop *l, struct loop_work *w);
/* Works started and not yet done, for tests. */
size_t loop_work_running(const struct loop *l);

/*
 * Byte sink of a transfer: body bytes, or one header line (with its
 * CRLF). Returns len to go on; anything else aborts the transfer, which
 * then ends with CURLE_WRITE_ERROR. data is borrowed for the call.
 */
typedef size_t loop_write_fn(void *ud, const char *data, size_t len);
/* The end of a transfer: rc is libcurl's result (CURLE_OK when an answer
 * arrived, whatever its HTTP status). easy is borrowed for the call (read
 * CURLINFO_* from it); the loop frees it afterwards. */
typedef void loop_done_fn(void *ud, CURL *easy, CURLcode rc);

/* Called once the easy handle is freed, whether the transfer ended or
 * was stopped, so ud may own what the handle points to (header lists, an
 * error buffer) and free it here. */
typedef void loop_release_fn(void *ud);

struct loop_transfer_ops {
	loop_write_fn *body;       /* required */
	loop_write_fn *header;     /* optional */
	loop_done_fn *done;        /* required; called exactly once unless
				      the transfer is stopped */
	loop_release_fn *release;  /* optional; always called, last */
};

/*
 * An easy handle for loop_transfer_start (new; the transfer takes it):
 * the handle of an ended transfer, reset (curl_easy_reset: no option
 * left, its TLS session and DNS caches kept), or a fresh one, so a busy
 * client does not allocate and tear down a handle and its buffers per
 * request. NULL only when libcurl cannot allocate.
 */
CURL *loop_easy_new(struct loop *l);

/*
 * Starts a transfer. Takes easy (do not set WRITEFUNCTION, WRITEDATA,
 * HEADERFUNCTION, HEADERDATA or PRIVATE: the loop owns them); ops and ud
 * are borrowed for the transfer's life. Returns a handle valid until done
 * has returned or loop_transfer_stop is called. Callable from any loop
 * callback, including a transfer's own byte callbacks.
 */
struct loop_transfer *loop_transfer_start(struct loop *l, CURL *easy,
					  const struct loop_transfer_ops *ops,
					  void *ud);
/*
 * Stops a transfer that has not ended: from then on none of its callbacks
 * run but release, and the loop frees the handle (inside a curl callback
 * only once curl_multi_perform has returned, which is why release
 * exists). Callable from any loop callback; stopping from inside done (of
 * this transfer) is a BUG.
 */
void loop_transfer_stop(struct loop *l, struct loop_transfer *t);
/* Transfers started and not yet ended or stopped. */
size_t loop_transfer_count(const struct loop *l);

#endif
