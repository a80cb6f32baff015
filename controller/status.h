/*
 * status: coalescing status writers for objects the manager owns the
 * status of (ClusterQueues, LocalQueues).
 *
 * A writer keeps, per object key, at most one write in flight. Marking a
 * key dirty asks for a write; the body is built only when the write can
 * go (the build callback reads the manager's current state), so later
 * changes merge into one write. At most max_inflight writes of a writer
 * run at once; a due object beyond that waits in a FIFO (its changes
 * still merge), so a thousand queues changing together never flood the
 * client. A write is skipped when its body equals
 * the last one written successfully, and a busy object is written at
 * most once per min_interval_ms. A failed write is retried with a
 * freshly built body: after min_interval_ms on a 409, after retry_ms on
 * anything else (a 404 is not retried: the object is gone).
 *
 * Writes are merge patches of the /status subresource without a
 * resourceVersion: the manager is the only writer of these statuses, and
 * a patch carries every field it owns (conditions as a whole list).
 *
 * JSON (STYLE P3): build returns a new reference the writer takes.
 * Threads: the loop thread only.
 */
#ifndef CONTROLLER_STATUS_H
#define CONTROLLER_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;
struct kube;
struct kube_reply;
struct status_writer;

/*
 * Builds the write for key: returns a new merge-patch body and sets
 * *path to the object's /status path (new string), or returns NULL when
 * there is nothing to write (the object is gone, or it already shows
 * what the body would say).
 */
typedef struct json_t *status_build_take_fn(void *ud, const char *key,
					   char **path);
/* A finished write (r borrowed), for logging. */
typedef void status_result_fn(void *ud, const char *key,
			      const struct kube_reply *r);

struct status_writer_opts {
	int64_t min_interval_ms;     /* per object; 0: 100 ms */
	int64_t retry_ms;            /* after a failure; 0: 1000 ms */
	size_t max_inflight;         /* writes at once; 0: 8 */
	status_build_take_fn *build; /* required */
	status_result_fn *result;    /* optional */
	void *ud;                    /* borrowed */
};

struct status_writer_stats {
	uint64_t writes;   /* patches sent */
	uint64_t skipped;  /* builds equal to the last write */
	uint64_t failures; /* writes that failed */
};

/* Returns a new writer on k (borrowed; must outlive it). */
struct status_writer *status_writer_new(struct kube *k,
					const struct status_writer_opts *o);
/* Cancels writes in flight and timers; NULL-safe. */
void status_writer_free(struct status_writer *w);
/* Asks for a write of key (copied): now, or when the object's interval
 * has passed or its write in flight has ended. */
void status_writer_mark(struct status_writer *w, const char *key);
/* The object is gone: cancels its write and forgets its state. */
void status_writer_forget(struct status_writer *w, const char *key);
/* True while a write of key is in flight (so the owner can keep its own
 * writes of the same object from overlapping). */
bool status_writer_busy(const struct status_writer *w, const char *key);
/* True when nothing is in flight, dirty or waiting for a timer (an
 * O(objects) walk, for tests and shutdown checks). */
bool status_writer_idle(const struct status_writer *w);
/* Borrowed; valid until status_writer_free. */
const struct status_writer_stats *
status_writer_stats(const struct status_writer *w);

#endif
