/*
 * kube_watch: the informer state machine (see kube_watch.h for the
 * cycle). Three states: LISTING (a page request is out), WATCHING (a
 * stream is out), WAITING (the backoff timer is armed); exactly one of
 * call and timer is live at any moment. Watch bytes go through the line
 * assembler (linebuf.h), each line is decoded with jansson, and objects
 * are handed on as new references.
 *
 * DESIGN. Everything a failure needs to know travels in `why`: the byte
 * sink runs inside a libcurl callback and may only stop the stream, so it
 * records why (410, an ERROR event, an oversized or malformed line) and
 * returns false; the done callback, outside libcurl, decides between
 * re-watch, re-list and backoff. The informer never retries inside the
 * client (no_retry): its own backoff covers every failure, so a dead
 * server costs one request per backoff step and no more.
 */
#include "controller/kube_watch.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "controller/kube.h"
#include "controller/kube_int.h"
#include "controller/linebuf.h"
#include "controller/loop.h"
#include "controller/timers.h"

#define DEFAULT_PAGE 500
#define DEFAULT_TIMEOUT_MIN_S 300
#define DEFAULT_TIMEOUT_MAX_S 600
#define DEFAULT_BACKOFF_MIN_MS 100
#define DEFAULT_BACKOFF_MAX_MS 30000
#define DEFAULT_MIN_WATCH_MS 1000
#define PROBE_MS 1000 /* a wait without answers looks this often */
#define DEFAULT_MAX_EVENT ((size_t)16 << 20)
#define STREAM_GRACE_S 30 /* client deadline past timeoutSeconds */

enum wstate {
	W_LISTING,  /* w->call is a page request */
	W_WATCHING, /* w->call is the stream */
	W_WAITING,  /* w->timer is armed */
};

/* Why the sink stopped a stream. */
enum why {
	WHY_NONE,
	WHY_EXPIRED,   /* ERROR event with code 410 */
	WHY_ERROR,     /* another ERROR event */
	WHY_BAD_LINE,  /* a line that is no watch event */
	WHY_TOO_LARGE, /* a line over max_event */
};

struct kube_watch {
	struct kube *k;           /* borrowed */
	char *path;               /* owned collection path */
	char *sel;                /* owned "&labelSelector=..." or "" */
	unsigned page_size;
	unsigned tmin, tmax;      /* timeoutSeconds range; tmin <= tmax */
	int64_t bmin, bmax;       /* backoff range, ms */
	int64_t min_watch_ms;
	const struct kube_watch_ops *ops; /* borrowed */
	void *ud;                 /* borrowed */
	enum wstate state;
	char *rv;                 /* owned; "" before the first list */
	bool synced;
	json_t *items;            /* pages of the list in progress, or NULL */
	char *cont;               /* owned continue token, or NULL */
	struct kube_call *call;   /* the request out, or NULL */
	struct timer timer;       /* armed in W_WAITING */
	bool wait_relists;        /* the timer lists (else it watches) */
	int64_t backoff_ms;       /* the last backoff step; 0: reset */
	int64_t fail_since;       /* loop time of the first failure since
				     the last good list or watch; 0: none */
	bool no_answer;           /* the failure being waited out got no
				     answer at all (transport) */
	uint64_t wait_answers;    /* kube_answers when the wait began */
	int64_t wait_until;       /* loop time the backoff ends */
	int64_t started_ms;       /* loop time the watch was sent */
	bool progress;            /* the watch delivered an event/bookmark */
	struct linebuf lines;     /* the stream's assembler */
	enum why why;
	char *why_msg;            /* owned detail for why, or NULL */
	int delivering;           /* nesting of consumer callbacks */
	uint64_t rng;             /* xorshift64* state; != 0 */
	struct kube_watch_stats stats;
};

static void start_list(struct kube_watch *w);
static void start_watch(struct kube_watch *w);

static uint64_t rnd(struct kube_watch *w)
{
	uint64_t x = w->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	w->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static void set_rv(struct kube_watch *w, const char *rv)
{
	if (rv && *rv && strcmp(rv, w->rv)) {
		free(w->rv);
		w->rv = xstrdup(rv);
	}
}

static void report(struct kube_watch *w, const char *fmt, const char *a)
{
	char *m;

	if (!w->ops->error)
		return;
	m = xasprintf(fmt, a ? a : "");
	w->delivering++;
	w->ops->error(w->ud, m);
	w->delivering--;
	free(m);
}

static void drop_list(struct kube_watch *w)
{
	json_decref(w->items);
	w->items = NULL;
	FREE_AND_NULL(w->cont);
}

static void on_timer(void *ud, int64_t now_ms)
{
	struct kube_watch *w = ud;

	(void)now_ms;
	if (w->no_answer && kube_now_ms(w->k) < w->wait_until &&
	    kube_answers(w->k) == w->wait_answers) {
		/* the server still says nothing: ask it, look again */
		int64_t left = w->wait_until - kube_now_ms(w->k);

		kube_probe(w->k);
		loop_timer_arm(kube_loop(w->k), &w->timer,
			       left < PROBE_MS ? left : PROBE_MS);
		return;
	}
	if (w->wait_relists)
		start_list(w);
	else
		start_watch(w);
}

/*
 * Step 5: waits before the next list (relist) or watch. Retry-After wins
 * when the server sent one; otherwise the backoff doubles from bmin to
 * bmax, each delay drawn in [d/2, d].
 */
static void wait_then(struct kube_watch *w, bool relist,
		      int64_t retry_after_ms)
{
	int64_t d;

	w->stats.failures++;
	w->backoff_ms = w->backoff_ms ? w->backoff_ms * 2 : w->bmin;
	if (w->backoff_ms > w->bmax)
		w->backoff_ms = w->bmax;
	d = w->backoff_ms / 2 +
	    (int64_t)(rnd(w) % (uint64_t)(w->backoff_ms / 2 + 1));
	if (retry_after_ms >= 0)
		d = retry_after_ms < w->bmax ? retry_after_ms : w->bmax;
	w->state = W_WAITING;
	w->wait_relists = relist;
	if (!w->fail_since)
		w->fail_since = kube_now_ms(w->k);
	w->wait_answers = kube_answers(w->k);
	w->wait_until = kube_now_ms(w->k) + d;
	if (w->no_answer && d > PROBE_MS)
		d = PROBE_MS; /* on_timer: back at once when it answers */
	loop_timer_arm(kube_loop(w->k), &w->timer, d);
}

/* A failure of the request in flight, before wait_then. */
static void failed_with(struct kube_watch *w, const struct kube_reply *r)
{
	w->no_answer = r->outcome == KUBE_TRANSPORT && r->code == 0;
}

/* A good list, or a watch that ran: the informer is healthy. */
static void healthy(struct kube_watch *w)
{
	w->backoff_ms = 0;
	w->fail_since = 0;
	w->no_answer = false;
}

/* ---- 1. list ---- */

static void deliver_list(struct kube_watch *w)
{
	json_t *items = w->items;
	bool initial = !w->synced;

	w->items = NULL;
	w->stats.lists++;
	w->delivering++;
	w->ops->replace(w->ud, items, initial);
	if (initial) {
		w->synced = true;
		if (w->ops->synced)
			w->ops->synced(w->ud);
	}
	w->delivering--;
}

static void on_list(void *ud, const struct kube_reply *r, json_t *body)
{
	struct kube_watch *w = ud;
	const json_t *items, *meta;
	const char *cont, *rv;

	w->call = NULL;
	failed_with(w, r);
	if (r->outcome != KUBE_OK) {
		bool paging = w->cont != NULL;

		drop_list(w);
		if (r->outcome == KUBE_HTTP && r->code == 410 && paging) {
			/* the continue token expired: list again now */
			w->stats.expired++;
			start_list(w);
		} else {
			report(w, "list failed: %s", r->message);
			wait_then(w, true, r->code == 429 || r->code >= 500
					   ? r->retry_after_ms : -1);
		}
		goto out;
	}
	items = json_object_get(body, "items");
	meta = json_object_get(body, "metadata");
	if (items && !json_is_array(items) && !json_is_null(items)) {
		drop_list(w);
		report(w, "list failed: %s", "items is not an array");
		wait_then(w, true, -1);
		goto out;
	}
	w->stats.pages++;
	if (!w->items)
		w->items = json_array();
	if (w->ops->page) {
		/* hand the page over now: a big list never piles up */
		json_t *page = json_is_array(items) ?
			json_incref((json_t *)items) : json_array();

		w->delivering++;
		w->ops->page(w->ud, page, !w->cont);
		w->delivering--;
	} else if (json_is_array(items)) {
		json_array_extend(w->items, (json_t *)items);
	}
	cont = json_string_value(json_object_get(meta, "continue"));
	free(w->cont);
	w->cont = NULL;
	if (cont && *cont) {
		w->cont = xstrdup(cont);
		start_list(w);
		goto out;
	}
	rv = json_string_value(json_object_get(meta, "resourceVersion"));
	if (!rv || !*rv) {
		drop_list(w);
		report(w, "list failed: %s", "no metadata.resourceVersion");
		wait_then(w, true, -1);
		goto out;
	}
	set_rv(w, rv);
	healthy(w);
	deliver_list(w);
	start_watch(w);
out:
	json_decref(body);
}

static void start_list(struct kube_watch *w)
{
	char *q, *path;
	struct kube_req r = {
		.verb = KUBE_LIST, .no_retry = true, .done = on_list,
		.ud = w,
	};

	if (w->cont) {
		q = kube_escape(w->cont);
		path = xasprintf("%s?limit=%u&continue=%s%s", w->path,
				 w->page_size, q, w->sel);
		free(q);
	} else {
		path = xasprintf("%s?limit=%u%s", w->path, w->page_size,
				 w->sel);
	}
	r.path = path;
	w->state = W_LISTING;
	w->call = kube_submit(w->k, &r);
	free(path);
}

/* ---- 2. watch ---- */

static bool stop_with(struct kube_watch *w, enum why why, const char *msg)
{
	w->why = why;
	free(w->why_msg);
	w->why_msg = msg ? xstrdup(msg) : NULL;
	return false;
}

static bool on_line(void *ud, const char *line, size_t len)
{
	struct kube_watch *w = ud;
	json_error_t je;
	json_t *ev = json_loadb(line, len, 0, &je), *obj;
	const char *type;
	enum kube_event_type t;
	bool go = true;

	if (!ev)
		return stop_with(w, WHY_BAD_LINE, je.text);
	type = json_string_value(json_object_get(ev, "type"));
	obj = json_object_get(ev, "object");
	if (!type || !json_is_object(obj)) {
		go = stop_with(w, WHY_BAD_LINE, "no type or object");
		goto out;
	}
	if (!strcmp(type, "ADDED")) {
		t = KUBE_ADDED;
	} else if (!strcmp(type, "MODIFIED")) {
		t = KUBE_MODIFIED;
	} else if (!strcmp(type, "DELETED")) {
		t = KUBE_DELETED;
	} else if (!strcmp(type, "BOOKMARK")) {
		set_rv(w, jx_rv(obj));
		w->stats.bookmarks++;
		w->progress = true;
		goto out;
	} else if (!strcmp(type, "ERROR")) {
		json_int_t code = json_integer_value(json_object_get(obj,
								     "code"));
		const char *m = json_string_value(json_object_get(obj,
								  "message"));

		go = stop_with(w, code == 410 ? WHY_EXPIRED : WHY_ERROR, m);
		goto out;
	} else {
		goto out; /* an event type from the future: skip it */
	}
	set_rv(w, jx_rv(obj));
	w->stats.events++;
	w->progress = true;
	w->delivering++;
	w->ops->event(w->ud, t, json_incref(obj));
	w->delivering--;
out:
	json_decref(ev);
	return go;
}

static bool on_bytes(void *ud, const char *data, size_t len)
{
	struct kube_watch *w = ud;

	if (!len) {
		/* the watch is established: the server is there and takes
		 * it (the backoff stays until the watch has run) */
		w->fail_since = 0;
		w->no_answer = false;
		return true;
	}
	switch (linebuf_feed(&w->lines, data, len, on_line, w)) {
	case LINEBUF_OK:
		return true;
	case LINEBUF_STOPPED:
		return false;
	case LINEBUF_TOO_LONG:
		break;
	}
	{
		char m[64];

		snprintf(m, sizeof(m), "over %zu bytes", w->lines.max);
		return stop_with(w, WHY_TOO_LARGE, m);
	}
}

static void on_watch_done(void *ud, const struct kube_reply *r, json_t *body)
{
	struct kube_watch *w = ud;
	int64_t ran = kube_now_ms(w->k) - w->started_ms;

	w->call = NULL;
	json_decref(body);
	failed_with(w, r);
	if (w->progress)
		healthy(w);
	switch (r->outcome) {
	case KUBE_STOPPED:
		switch (w->why) {
		case WHY_EXPIRED: /* 4. */
			w->stats.expired++;
			start_list(w);
			break;
		case WHY_BAD_LINE:
			report(w, "watch: malformed event: %s", w->why_msg);
			wait_then(w, false, -1);
			break;
		case WHY_TOO_LARGE:
			/* The same event would come again: re-list, whose
			 * ceiling is the larger list one. */
			report(w, "watch: event %s", w->why_msg);
			wait_then(w, true, -1);
			break;
		case WHY_ERROR:
		case WHY_NONE:
			report(w, "watch: error event: %s", w->why_msg);
			wait_then(w, true, -1);
			break;
		}
		break;
	case KUBE_OK: /* 3. the server ended it (timeoutSeconds) */
		if (ran >= w->min_watch_ms || w->progress) {
			healthy(w);
			start_watch(w);
		} else {
			wait_then(w, false, -1);
		}
		break;
	case KUBE_HTTP:
		if (r->code == 410) {
			w->stats.expired++;
			start_list(w);
		} else if (r->code == 429 || r->code >= 500) {
			report(w, "watch: %s", r->message);
			wait_then(w, false, r->retry_after_ms);
		} else {
			report(w, "watch: %s", r->message);
			wait_then(w, true, -1);
		}
		break;
	case KUBE_TOO_LARGE:
	case KUBE_BAD_BODY:
	case KUBE_TRANSPORT:
		report(w, "watch: %s", r->message);
		wait_then(w, false, -1);
		break;
	}
}

static void start_watch(struct kube_watch *w)
{
	unsigned t = w->tmin + (unsigned)(rnd(w) % (w->tmax - w->tmin + 1));
	char *rv = kube_escape(w->rv);
	char *path = xasprintf("%s?watch=true&allowWatchBookmarks=true&"
			       "resourceVersion=%s&timeoutSeconds=%u%s",
			       w->path, rv, t, w->sel);
	struct kube_req r = {
		.verb = KUBE_WATCH, .path = path, .no_retry = true,
		.done = on_watch_done, .ud = w,
	};

	linebuf_reset(&w->lines);
	w->why = WHY_NONE;
	FREE_AND_NULL(w->why_msg);
	w->progress = false;
	w->started_ms = kube_now_ms(w->k);
	w->state = W_WATCHING;
	w->stats.watches++;
	w->call = kube_stream(w->k, &r, on_bytes,
			      ((int64_t)t + STREAM_GRACE_S) * 1000);
	free(path);
	free(rv);
}

/* ---- lifecycle ---- */

static char *selector_query(const struct kube_watch_opts *o)
{
	char *l = o->label_selector && *o->label_selector
		  ? kube_escape(o->label_selector) : NULL;
	char *f = o->field_selector && *o->field_selector
		  ? kube_escape(o->field_selector) : NULL;
	char *q = xasprintf("%s%s%s%s", l ? "&labelSelector=" : "",
			    l ? l : "", f ? "&fieldSelector=" : "",
			    f ? f : "");

	free(l);
	free(f);
	return q;
}

struct kube_watch *kube_watch_new(struct kube *k,
				  const struct kube_watch_opts *o)
{
	struct kube_watch *w = xcalloc(1, sizeof(*w));

	if (!o->path || o->path[0] != '/' || strchr(o->path, '?'))
		BUG("kube_watch_new: path must be a collection path");
	if (!o->ops || !o->ops->event || !o->ops->replace)
		BUG("kube_watch_new: event and replace are required");
	w->k = k;
	w->path = xstrdup(o->path);
	w->sel = selector_query(o);
	w->page_size = o->page_size ? o->page_size : DEFAULT_PAGE;
	w->tmin = o->timeout_min_s ? o->timeout_min_s : DEFAULT_TIMEOUT_MIN_S;
	w->tmax = o->timeout_max_s ? o->timeout_max_s : DEFAULT_TIMEOUT_MAX_S;
	if (w->tmax < w->tmin)
		w->tmax = w->tmin;
	w->bmin = o->backoff_min_ms > 0 ? o->backoff_min_ms
					: DEFAULT_BACKOFF_MIN_MS;
	w->bmax = o->backoff_max_ms > 0 ? o->backoff_max_ms
					: DEFAULT_BACKOFF_MAX_MS;
	if (w->bmax < w->bmin)
		w->bmax = w->bmin;
	w->min_watch_ms = o->min_watch_ms > 0 ? o->min_watch_ms
					      : DEFAULT_MIN_WATCH_MS;
	w->ops = o->ops;
	w->ud = o->ud;
	w->rv = xstrdup("");
	w->rng = (uint64_t)(uintptr_t)w ^
		 ((uint64_t)kube_now_ms(k) * 0x9E3779B97F4A7C15ULL);
	if (!w->rng)
		w->rng = 1;
	linebuf_init(&w->lines, o->max_event_bytes ? o->max_event_bytes
						   : DEFAULT_MAX_EVENT);
	timers_setup(&w->timer, on_timer, w);
	kube_informer_attach(k);
	start_list(w);
	return w;
}

void kube_watch_free(struct kube_watch *w)
{
	if (!w)
		return;
	if (w->delivering)
		BUG("kube_watch_free from the informer's own callback");
	if (w->call)
		kube_cancel(w->k, w->call);
	loop_timer_cancel(kube_loop(w->k), &w->timer);
	kube_informer_detach(w->k);
	linebuf_release(&w->lines);
	json_decref(w->items);
	free(w->cont);
	free(w->why_msg);
	free(w->rv);
	free(w->sel);
	free(w->path);
	free(w);
}

bool kube_watch_has_synced(const struct kube_watch *w)
{
	return w->synced;
}

int64_t kube_watch_failing_since(const struct kube_watch *w)
{
	return w->fail_since;
}

const char *kube_watch_rv(const struct kube_watch *w)
{
	return w->rv;
}

const struct kube_watch_stats *kube_watch_stats(const struct kube_watch *w)
{
	return &w->stats;
}
