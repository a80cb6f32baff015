/*
 * store: every object the devserver holds, one global resourceVersion
 * counter (etcd revision semantics), the event log that watches read, and
 * the write-ahead log that makes acknowledged writes survive kill -9.
 *
 * Objects are JSON (jansson) in their storage version. A stored object is
 * immutable: writers hand over a fresh tree, readers get a new reference
 * to a snapshot they must never modify (jansson's refcounts are atomic, so
 * sharing read-only trees across threads is safe).
 *
 * Threads: any. One mutex guards the maps, the counter and the log;
 * condition variables under it wake watchers: one per resource for
 * waiters filtered on it, one for the rest, so an event wakes only the
 * waiters that want it. No call holds the lock while doing
 * I/O other than the WAL append of the write itself. Readers of the log
 * share each event by reference (no copy per reader), take them in
 * batches (store_next_events) and can share what they derive from one
 * (store_event_memo: a watch line serialised once for every watch).
 *
 * Keys: a resource is named "<group>/<plural>" ("/pods" for the core
 * group, "batch/jobs", "kueue.x-k8s.io/workloads"); ns is "" for
 * cluster-scoped objects. Objects are ordered by the bytes of "ns/name"
 * ("/name" when cluster-scoped), etcd's key order; list continuation keys
 * use the same form. Namespaces and names must not contain '/'.
 */
#ifndef DEVSERVER_STORE_H
#define DEVSERVER_STORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/errors.h"

struct store;

/* Monotonic milliseconds (store_opts.clock). Any thread; called under
 * the store lock, so it must not call back into the store. */
typedef uint64_t store_clock_fn(void *ctx);

/*
 * Retained history, per resource (kube-apiserver's watch cache keeps one
 * per resource too): a resource keeps its own last watch_history events
 * whatever other resources write, and, when watch_history_ms > 0, also
 * every event younger than that, up to watch_history_max events (the
 * hard cap; taken as watch_history when smaller). Events past the count
 * are dropped as later writes to the same resource find them old.
 */
struct store_opts {
	const char *data_dir;  /* NULL: memory only */
	size_t watch_history;  /* events kept per resource (>= 1; 0: 1) */
	uint64_t watch_history_ms; /* 0: no time window */
	size_t watch_history_max;  /* per-resource cap with the window */
	store_clock_fn *clock;     /* NULL: CLOCK_MONOTONIC */
	void *clock_ctx;           /* passed to clock */
};

enum store_rc {
	STORE_OK = 0,
	STORE_EXISTS,    /* create over an existing key */
	STORE_NOT_FOUND, /* no such object */
	STORE_CONFLICT,  /* expect_rv differs from the stored RV */
	STORE_GONE,      /* a watch cursor older than the kept history */
	STORE_TIMEOUT,   /* no event before the deadline */
	STORE_IO,        /* the write-ahead log could not be written */
};

/*
 * Opens the store. With data_dir, replays DIR/wal (and DIR/snapshot) so
 * every object and the RV counter come back; the counter never goes
 * backwards across restarts. Returns new, or NULL + err.
 */
struct store *store_new(const struct store_opts *opts, struct err *err);
void store_free(struct store *s);

/* The current global RV (the RV a list taken now reports). */
uint64_t store_rv(struct store *s);

/* New reference to the object, or NULL. */
json_t *store_get(struct store *s, const char *res, const char *ns,
		  const char *name);

/*
 * Writes. obj is taken (the caller must not touch it afterwards, even on
 * failure). The store sets metadata.resourceVersion to the new RV. On
 * STORE_OK, *out (when out is not NULL) receives a new reference to what
 * was stored. expect_rv = 0 means unconditional.
 *
 * store_update compares obj with the stored object ignoring
 * metadata.resourceVersion: when equal it stores nothing, keeps the RV,
 * emits no event and returns STORE_OK with *out = the stored object
 * (no-op updates must not wake controllers).
 */
enum store_rc store_create(struct store *s, const char *res, const char *ns,
			   const char *name, json_t *obj, json_t **out);
enum store_rc store_update(struct store *s, const char *res, const char *ns,
			   const char *name, uint64_t expect_rv, json_t *obj,
			   json_t **out);
/* Removes the object; *last (when not NULL) gets the final state with the
 * deletion's RV, as the DELETED event carries it. */
enum store_rc store_delete(struct store *s, const char *res, const char *ns,
			   const char *name, uint64_t expect_rv, json_t **last);

/* Returns true to keep obj in a list. Called under the store lock: must
 * not call back into the store. */
typedef bool store_filter_fn(void *ctx, const json_t *obj);

struct store_list_opts {
	const char *ns;        /* NULL or "": every namespace */
	const char *after;     /* resume after this "ns/name" key, or NULL */
	size_t limit;          /* 0: no limit */
	store_filter_fn *filter; /* NULL: keep all */
	void *ctx;
};

struct store_list_result {
	json_t *items;      /* new JSON array of references, in key order */
	uint64_t rv;        /* store RV when the list was taken */
	char *next;         /* new "ns/name" to continue after, or NULL */
	size_t remaining;   /* matching items after this page (exact) */
};

void store_list(struct store *s, const char *res,
		const struct store_list_opts *o, struct store_list_result *out);
void store_list_result_release(struct store_list_result *r);

enum store_event_type {
	STORE_ADDED,
	STORE_MODIFIED,
	STORE_DELETED,
};

/*
 * An event as a reader sees it. Everything in it is borrowed from the
 * store's shared, immutable copy of the event, which the reader holds one
 * reference to until store_event_release: nothing is copied per reader.
 * Take a json_incref of obj or prev to keep them longer.
 */
struct store_event {
	enum store_event_type type;
	uint64_t rv;
	const char *res;  /* "<group>/<plural>" */
	const char *ns;   /* "" for cluster-scoped */
	const char *name;
	json_t *obj;      /* the object at rv (last state for DELETED);
			   * read-only */
	json_t *prev;     /* the state before, or NULL for ADDED; read-only */
	struct store_rec *rec; /* the shared event (store.c) */
};

void store_event_release(struct store_event *ev);

/*
 * Per-event memo: byte strings that readers derive from an event and can
 * share, so N watches serialise an event once, not N times. What a slot
 * holds is the readers' convention (api_watch.c defines its slots); the
 * store only keeps the bytes for as long as the event lives. A slot is
 * set at most once: store_event_memo_set copies bytes and returns the
 * slot's bytes, which are the caller's when it was first and another
 * reader's (equal, by the convention) otherwise. store_event_memo returns
 * the bytes, or NULL when the slot is unset. The returned pointers stay
 * valid until ev is released. slot < STORE_MEMO_SLOTS. Threads: any.
 */
#define STORE_MEMO_SLOTS 4
const char *store_event_memo(const struct store_event *ev, unsigned slot,
			     size_t *len);
const char *store_event_memo_set(const struct store_event *ev,
				 unsigned slot, const char *bytes,
				 size_t len, size_t *out_len);

/*
 * Waits for the first event of res (NULL: any resource) with RV greater
 * than *cursor, up to timeout_ms (< 0: no deadline; 0: only look). On
 * STORE_OK fills ev and advances *cursor to ev->rv. STORE_TIMEOUT when
 * nothing came, or store_wake_all was called. Events of other resources
 * advance *cursor too, so a later call does not rescan them.
 *
 * STORE_GONE (the watch must end with 410) when the history after
 * *cursor is incomplete for what the reader asked:
 *  - res given: an event of res with RV > *cursor was dropped. Writes to
 *    other resources never make it GONE.
 *  - res NULL (every resource): an event of any resource with RV >
 *    *cursor was dropped, so what an unfiltered reader gets is always
 *    every event after its cursor, in RV order, or GONE. Its history is
 *    at least the last watch_history events of all resources together.
 *  - either: *cursor is below the RV found on open (the previous
 *    process's history is gone).
 */
enum store_rc store_next_event(struct store *s, uint64_t *cursor,
			       const char *res, int timeout_ms,
			       struct store_event *ev);

/*
 * store_next_event for up to max events in one lock hold: waits as it
 * does for the first one, then takes the matching events already there
 * after it, in order. *n gets how many evs were filled (>= 1 on STORE_OK,
 * 0 otherwise); release each.
 */
enum store_rc store_next_events(struct store *s, uint64_t *cursor,
				const char *res, int timeout_ms,
				struct store_event *evs, size_t max,
				size_t *n);

/* Wakes every current waiter (STORE_TIMEOUT). Not sticky: a thread about
 * to wait may still sleep once for its timeout, so stop paths call it
 * until their thread is gone. */
void store_wake_all(struct store *s);

/* Visits every object of res (any namespace) under the lock, in key
 * order; fn must not call back into the store. */
typedef void store_visit_fn(void *ctx, const char *ns, const char *name,
			    const json_t *obj);
void store_visit(struct store *s, const char *res, store_visit_fn *fn,
		 void *ctx);

/*
 * The RV of the last write (create, update that changed something,
 * delete) to res since the store was opened; 0 when none. Equal values
 * mean res did not change in between: a cheap key for caches of a
 * resource's objects (admission.c's webhook configurations).
 */
uint64_t store_resource_rv(struct store *s, const char *res);

/* Figures for tests and benchmarks. */
size_t store_count(struct store *s, const char *res);

#endif
