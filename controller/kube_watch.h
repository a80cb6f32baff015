/*
 * kube_watch: informers (client-go's reflector) on the kube client: keep
 * a consumer's view of one resource in step with the API server through
 * list + watch, and nothing else a real API server would not offer.
 *
 * The cycle, per informer:
 *  1. LIST the collection in pages (limit, continue), most recent state;
 *     the whole set goes to the consumer in one replace call, after which
 *     the first time the synced callback runs;
 *  2. WATCH from the list's resourceVersion with allowWatchBookmarks=true
 *     and a random timeoutSeconds (300..600 s by default): ADDED, MODIFIED
 *     and DELETED events go to the consumer in order; BOOKMARKs only move
 *     the resourceVersion on;
 *  3. when the server ends the watch normally, watch again from the last
 *     resourceVersion seen (no re-list);
 *  4. on 410 Gone/Expired (an ERROR event or the HTTP status) the history
 *     is lost: LIST again and replace (a "resync"), so the consumer drops
 *     objects that vanished meanwhile;
 *  5. on connection failures, 429 and 5xx, wait a capped exponential
 *     backoff with jitter (100 ms doubling to 30 s; Retry-After when the
 *     server sends one) and watch again; on other failures (a list that
 *     fails, a 403, a malformed or oversized event) wait likewise and
 *     re-list. The backoff resets after a good list or a watch that ran.
 *     A wait after a failure that got no answer at all (the server is
 *     gone) is cut short once the server answers again: the informer
 *     looks every second, with kube_probe (kube_int.h), so it comes
 *     back within about a second of the server; failures with an answer
 *     keep their backoff.
 * A restart of the process thus rebuilds everything from step 1.
 *
 * Ceilings (STYLE P5): one watch event at most max_event_bytes (16 MiB),
 * one list page at most the client's list ceiling.
 *
 * JSON ownership: objects handed to the callbacks are new references the
 * callback owns. Threads: the loop thread only.
 */
#ifndef CONTROLLER_KUBE_WATCH_H
#define CONTROLLER_KUBE_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct json_t;
struct kube;
struct kube_watch;

enum kube_event_type {
	KUBE_ADDED,
	KUBE_MODIFIED,
	KUBE_DELETED, /* obj: the last state, with the deletion's RV */
};

/* One watch event; obj is a new reference the callback owns. */
typedef void kube_event_take_fn(void *ud, enum kube_event_type type,
				struct json_t *obj);
/*
 * A complete list: items is a new JSON array (owned by the callback) of
 * every object that exists now. initial is true for the first list and
 * false for a resync, after which objects the consumer holds that are
 * not in items are gone.
 */
typedef void kube_replace_take_fn(void *ud, struct json_t *items,
				  bool initial);
/*
 * Optional, for large collections: one page of a list as it arrives;
 * items is a new JSON array the callback owns; first is true for the
 * first page of a list (the consumer starts marking what it sees). With
 * page set, the informer keeps no page: replace then follows the last
 * page with an empty items array, meaning "the list is complete: what
 * was not seen since the first page is gone" (on a resync). A list that
 * fails half way starts again with first set.
 */
typedef void kube_page_take_fn(void *ud, struct json_t *items, bool first);
/* Runs once, right after the first replace. */
typedef void kube_synced_fn(void *ud);
/* A failure the informer recovers from by itself (message borrowed), so
 * the caller can log it: the informer never logs (STYLE P6). */
typedef void kube_watch_error_fn(void *ud, const char *message);

struct kube_watch_ops {
	kube_event_take_fn *event;     /* required */
	kube_replace_take_fn *replace; /* required */
	kube_synced_fn *synced;        /* optional */
	kube_watch_error_fn *error;    /* optional */
	kube_page_take_fn *page;       /* optional; see above */
};

struct kube_watch_opts {
	const char *path;            /* the collection, e.g.
					"/apis/kueue.x-k8s.io/v1beta2/workloads"
					(kube_path); no query; copied */
	const char *label_selector;  /* or NULL; copied */
	const char *field_selector;  /* or NULL; copied */
	unsigned page_size;          /* list limit; 0: 500 */
	unsigned timeout_min_s;      /* watch timeoutSeconds drawn from */
	unsigned timeout_max_s;      /* [min, max]; 0: 300 and 600 */
	int64_t backoff_min_ms;      /* 0: 100 ms */
	int64_t backoff_max_ms;      /* 0: 30 s */
	int64_t min_watch_ms;        /* a watch ending normally sooner than
					this counts as a failure (guards
					against a hot reconnect loop);
					0: 1000 ms */
	size_t max_event_bytes;      /* 0: 16 MiB */
	const struct kube_watch_ops *ops; /* borrowed; must outlive w */
	void *ud;                    /* borrowed */
};

/* Figures for tests and metrics; never reset. */
struct kube_watch_stats {
	uint64_t lists;     /* complete lists delivered (1 + resyncs) */
	uint64_t pages;     /* list pages received */
	uint64_t watches;   /* watch requests sent */
	uint64_t events;    /* ADDED/MODIFIED/DELETED delivered */
	uint64_t bookmarks; /* BOOKMARK events */
	uint64_t expired;   /* 410s that forced a re-list */
	uint64_t failures;  /* failed lists/watches followed by a backoff */
};

/*
 * Creates an informer on k (borrowed; must outlive it) and starts step 1
 * at once (the first request is queued on the client). Returns new.
 */
struct kube_watch *kube_watch_new(struct kube *k,
				  const struct kube_watch_opts *o);
/*
 * Stops the informer (its pending request is cancelled; no callback runs
 * afterwards) and frees it. Must not be called from inside one of this
 * informer's own callbacks (BUG). NULL-safe.
 */
void kube_watch_free(struct kube_watch *w);

/* True once the first list has been delivered. */
bool kube_watch_has_synced(const struct kube_watch *w);
/* The loop time of the first failure since the informer last listed
 * or watched successfully, or 0 when it is healthy (readiness). */
int64_t kube_watch_failing_since(const struct kube_watch *w);
/* The last resourceVersion seen (list, event or bookmark); "" before the
 * first list. Borrowed; valid until the next loop iteration. */
const char *kube_watch_rv(const struct kube_watch *w);
/* Borrowed; valid until kube_watch_free. */
const struct kube_watch_stats *kube_watch_stats(const struct kube_watch *w);

#endif
