/*
 * api_watch: WATCH (§6.3) as a chunked stream of newline-delimited JSON
 * events on the client's connection thread.
 *
 * DESIGN. The stream reader (an http_stream_fn) serialises events into a
 * buffer and hands it out. Once the buffer has drained it refills it with
 * every event already pending (store_next_events, EVENT_BATCH per lock
 * hold, with timeout 0), up to FILL_MAX bytes, so a burst of events goes
 * out as one chunk; only when nothing is pending does it check the client
 * socket for hang-up (at most every HUP_CHECK_MS) and block in
 * store_next_events for at most POLL_MS, so a client that hangs up ends
 * the thread within 250 ms. api_shutdown, the timeoutSeconds deadline
 * and the bookmark timer are checked between batches. It never returns 0
 * (libmicrohttpd would spin).
 *
 * Cost under load (measured, README "Performance"): the line of an event
 * that needs no conversion and goes out as plain JSON is the same for
 * every watch, so the first watch to serialise it stores it in the
 * event's memo (the MEMO_* slots) and the others copy it. A watch whose
 * last chunk carried several events waits up to COALESCE_US after it
 * before waiting again, so under a stream of writes each watch wakes,
 * sends and polls a few hundred times a second rather than once per
 * event; single events after a quiet spell go out at once.
 * A watch keeps its own registry snapshot reference for its whole life.
 *
 * Start points: no resourceVersion (or "0") lists the matching objects
 * and sends them as synthetic ADDED events, then follows changes after
 * the list's RV; "N" follows every change after N, or ends with an ERROR
 * 410 Expired event when N is older than the store's history. Events are
 * filtered by namespace and selectors, with the cacher's transitions: an
 * object that starts matching is ADDED, one that stops matching is
 * DELETED (previous content, the event's RV). With a Table Accept every
 * event object is a one-row Table and only the first carries
 * columnDefinitions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/sbuf.h"
#include "devserver/api_int.h"
#include "devserver/builtin.h"
#include "devserver/fault.h"
#include "devserver/jsonw.h"
#include "devserver/store.h"

#define POLL_MS 200
#define HUP_CHECK_MS 50      /* client hang-up checks at most this often */
#define COALESCE_US 2000     /* under load, events wait up to this long
				to share a chunk */
#define FILL_MAX (32 * 1024) /* libmicrohttpd's block size (http.c) */
#define FINAL_BOOKMARK_MS 2000
#define EVENT_BATCH 64       /* store events taken per lock hold */

/*
 * Memo slots (store_event_memo) of a store event: the whole line
 * `{"type":T,"object":OBJ}\n` where OBJ is the event's stored object
 * itself, unconverted (the watch's apiVersion is the stored one) and as
 * JSON (not a Table or PartialObjectMetadata), for T = ADDED, MODIFIED,
 * DELETED. Such a line depends on nothing but the event, so every watch
 * that needs it serialises it once between them.
 */
enum { MEMO_ADDED, MEMO_MODIFIED, MEMO_DELETED };

struct watch {
	struct op op;               /* op.req is NULL: the request is gone */
	struct registry_snap *snap; /* own reference; op's types live here */
	struct selectors sel;
	struct media media;
	enum table_object include;
	bool bookmarks;             /* allowWatchBookmarks */
	bool table_first;           /* columnDefinitions not yet sent */
	bool final_bookmark_sent;
	bool initial_end;           /* owe the initial-events-end bookmark */
	bool ended;
	bool cut;                   /* --fault-watch-drop: drop the
				       connection once the pending bytes
				       are out */
	char api_version[300];      /* of the watched version */
	uint64_t cursor;            /* RV delivered up to */
	int64_t deadline;           /* monotonic ms */
	int64_t next_bookmark;      /* monotonic ms */
	int64_t next_hup_check;     /* monotonic ms */
	int64_t last_flush_us;      /* monotonic µs of the last chunk made */
	bool last_full;             /* that chunk stopped at FILL_MAX */
	bool last_busy;             /* that chunk carried several events */
	unsigned lines;             /* event lines in the chunk being made */
	json_t *initial;            /* stored objects for synthetic ADDED */
	size_t next_initial;
	struct sbuf out;            /* pending bytes [off, out.len) */
	size_t off;
	struct MHD_Connection *conn;
};

static int64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int64_t mono_ms(void)
{
	return mono_us() / 1000;
}

/* Appends n bytes to the pending buffer. */
static void append(const char *p, size_t n, struct watch *w)
{
	(void)sbuf_add(&w->out, p, n);
}

/* Appends ev (taken) as one line to the pending bytes. */
static void push_line(struct watch *w, json_t *ev)
{
	if (jsonw_append(ev, &w->out) < 0)
		BUG("json_dump_callback failed");
	json_decref(ev);
	append("\n", 1, w);
	w->lines++;
}

static void emit_status(struct watch *w, struct api_status *st)
{
	push_line(w, json_pack("{s:s, s:o}", "type", "ERROR", "object",
			       status_to_json(st)));
	status_release(st);
	w->ended = true;
}

static void emit_bookmark(struct watch *w, bool initial_end)
{
	char av[300], rv[32];
	json_t *m;

	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)w->cursor);
	m = json_pack("{s:s}", "resourceVersion", rv);
	if (initial_end)
		json_object_set_new(m, "annotations", json_pack("{s:s}",
			"k8s.io/initial-events-end", "true"));
	push_line(w, json_pack("{s:s, s:{s:s, s:s, s:o}}", "type", "BOOKMARK",
			       "object", "kind", w->op.type->kind,
			       "apiVersion", api_op_version(&w->op, av,
							    sizeof(av)),
			       "metadata", m));
}

static int line_slot(const char *type)
{
	return !strcmp(type, "ADDED") ? MEMO_ADDED :
	       !strcmp(type, "MODIFIED") ? MEMO_MODIFIED : MEMO_DELETED;
}

/*
 * The memoised path of emit_object: ev's own object, in JSON, with no
 * conversion needed (what convert_object would return unchanged).
 * Returns false when the event does not qualify.
 */
static bool emit_memo(struct watch *w, const char *type,
		      const struct store_event *ev)
{
	const char *av = json_string_value(json_object_get(ev->obj,
							   "apiVersion"));
	const char *line;
	size_t start = w->out.len, n;
	int slot;

	if (w->media.kind != MEDIA_JSON || !av || strcmp(av, w->api_version))
		return false;
	slot = line_slot(type);
	w->lines++;
	line = store_event_memo(ev, (unsigned)slot, &n);
	if (line) {
		append(line, n, w);
		return true;
	}
	/* exactly what push_line prints for {"type":T,"object":OBJ} */
	append("{\"type\":\"", 9, w);
	append(type, strlen(type), w);
	append("\",\"object\":", 11, w);
	if (jsonw_append(ev->obj, &w->out) < 0)
		BUG("json_dump_callback failed");
	append("}\n", 2, w);
	/* publish a copy; the bytes in w->out stay as they are */
	(void)store_event_memo_set(ev, (unsigned)slot, w->out.buf + start,
				   w->out.len - start, &n);
	return true;
}

/* Emits type with stored (borrowed), converted to the client's form. */
static void emit_object(struct watch *w, const char *type,
			const json_t *stored)
{
	struct api_status st = API_STATUS_INIT;
	json_t *obj = api_read_render_object(&w->op, stored, &st);

	if (!obj) {
		emit_status(w, &st);
		return;
	}
	if (w->media.kind == MEDIA_TABLE) {
		json_t *items = json_pack("[o]", obj), *meta;
		const char *rv = json_string_value(json_object_get(
			json_object_get(obj, "metadata"), "resourceVersion"));

		meta = json_pack("{s:s}", "resourceVersion", rv ? rv : "");
		w->op.now_ms = api_now_ms();
		obj = table_build(items, w->op.ver->columns,
				  w->op.type->bi ? w->op.type->bi->printer
						 : NULL,
				  w->include, w->table_first, meta,
				  w->op.now_ms);
		w->table_first = false;
		json_decref(items);
		json_decref(meta);
	} else if (w->media.kind == MEDIA_PARTIAL) {
		json_t *p = json_pack("{s:s, s:s, s:O}", "kind",
				      "PartialObjectMetadata", "apiVersion",
				      "meta.k8s.io/v1", "metadata",
				      json_object_get(obj, "metadata"));

		json_decref(obj);
		obj = p;
	}
	push_line(w, json_pack("{s:s, s:o}", "type", type, "object", obj));
}

/* The previous content of an object with the event's RV (for a DELETED
 * sent because it stopped matching). New reference. */
static json_t *with_rv(const json_t *prev, uint64_t rv)
{
	json_t *c = json_copy((json_t *)prev);
	json_t *m = json_copy(json_object_get(c, "metadata"));
	char b[32];

	if (!m)
		m = json_object();
	snprintf(b, sizeof(b), "%llu", (unsigned long long)rv);
	json_object_set_new(m, "resourceVersion", json_string(b));
	json_object_set_new(c, "metadata", m);
	return c;
}

/* emit_object for ev's own object, from the memo when it can. */
static void emit_event(struct watch *w, const char *type,
		       const struct store_event *ev)
{
	if (!emit_memo(w, type, ev))
		emit_object(w, type, ev->obj);
}

/* Turns a store event into at most one watch event. */
static void handle_event(struct watch *w, const struct store_event *ev)
{
	const char *ns = w->op.ns;
	bool cur, prev;

	if (*ns && strcmp(ev->ns, ns))
		return;
	cur = api_read_selectors_match(&w->sel, ev->obj);
	prev = ev->prev ? api_read_selectors_match(&w->sel, ev->prev) : false;
	switch (ev->type) {
	case STORE_ADDED:
		if (cur)
			emit_event(w, "ADDED", ev);
		break;
	case STORE_MODIFIED:
		if (cur && prev) {
			emit_event(w, "MODIFIED", ev);
		} else if (cur) {
			emit_event(w, "ADDED", ev);
		} else if (prev) {
			json_t *p = with_rv(ev->prev, ev->rv);

			emit_object(w, "DELETED", p);
			json_decref(p);
		}
		break;
	case STORE_DELETED:
		if (cur)
			emit_event(w, "DELETED", ev);
		break;
	}
}

/* An event went into the pending bytes: --fault-watch-drop decides
 * whether the stream is cut after it. */
static void sent_event(struct watch *w)
{
	if (!w->cut && fault_hit(w->op.api->faults, FAULT_WATCH_DROP))
		w->cut = true;
}

/*
 * Produces the next bytes; false when the stream must end. With bytes
 * already buffered it only takes what is pending (timeout 0) and stops
 * at FILL_MAX; with none it blocks, after a hang-up check.
 */
static bool produce(struct watch *w)
{
	struct store *s = w->op.api->store;

	if (w->off < w->out.len)
		return true;
	w->off = 0;
	sbuf_reset(&w->out);
	w->lines = 0;
	while (w->out.len < FILL_MAX) {
		struct store_event evs[EVENT_BATCH];
		size_t nev = 0;
		enum store_rc rc;
		int64_t now, wait;
		bool idle = w->out.len == 0;

		if (w->ended || w->cut || atomic_load(&w->op.api->stopping))
			break;
		if (w->initial) {
			if (w->next_initial < json_array_size(w->initial)) {
				emit_object(w, "ADDED", json_array_get(
					w->initial, w->next_initial++));
				sent_event(w);
				continue;
			}
			json_decref(w->initial);
			w->initial = NULL;
		}
		if (w->initial_end) {
			w->initial_end = false;
			emit_bookmark(w, true);
			sent_event(w);
			continue;
		}
		now = mono_ms();
		if (now >= w->deadline) {
			w->ended = true;
			break;
		}
		if (w->bookmarks && (now >= w->next_bookmark ||
				     (!w->final_bookmark_sent &&
				      w->deadline - now <= FINAL_BOOKMARK_MS))) {
			if (w->deadline - now <= FINAL_BOOKMARK_MS)
				w->final_bookmark_sent = true;
			w->next_bookmark = now + w->op.api->bookmark_ms;
			emit_bookmark(w, false);
			sent_event(w);
			continue;
		}
		wait = w->deadline - now;
		if (w->bookmarks && w->next_bookmark - now < wait)
			wait = w->next_bookmark - now;
		if (w->bookmarks && !w->final_bookmark_sent &&
		    w->deadline - FINAL_BOOKMARK_MS - now < wait)
			wait = w->deadline - FINAL_BOOKMARK_MS - now;
		if (wait > POLL_MS)
			wait = POLL_MS;
		if (wait < 1)
			wait = 1;
		if (!idle) {
			wait = 0;
		} else {
			int64_t quiet = w->last_flush_us + COALESCE_US -
					mono_us();

			if (now >= w->next_hup_check) {
				if (http_conn_closed(w->conn))
					return false;
				w->next_hup_check = now + HUP_CHECK_MS;
			}
			/* Under load (the last chunk carried several events
			 * and went out less than COALESCE_US ago), let the
			 * next burst grow for the rest of that time instead
			 * of waking for every event: one chunk, one send and
			 * one wake-up then carry many events. An event after
			 * a quiet spell, or a chain of single events (a
			 * client that waits for its own write), goes out at
			 * once; a backlog (full chunks) is not held up. */
			if (quiet > 0 && w->last_busy && !w->last_full) {
				struct timespec d = { 0, (long)quiet * 1000 };

				nanosleep(&d, NULL);
				w->last_flush_us = 0;
				continue;
			}
		}
		{
			uint64_t before = w->cursor;

			rc = store_next_events(s, &w->cursor, w->op.type->key,
					       (int)wait, evs, EVENT_BATCH,
					       &nev);
			if (rc == STORE_GONE) {
				struct api_status st = API_STATUS_INIT;

				status_expired(&st, (unsigned long long)before,
					       (unsigned long long)store_rv(s));
				emit_status(w, &st);
				continue;
			}
		}
		if (rc != STORE_OK) {
			if (!idle)
				break;
			continue;
		}
		for (size_t i = 0; i < nev; i++) {
			if (!w->ended && !w->cut) {
				unsigned before = w->lines;

				handle_event(w, &evs[i]);
				if (w->lines != before && !w->ended)
					sent_event(w);
			}
			store_event_release(&evs[i]);
		}
	}
	if (w->out.len > 0) {
		w->last_flush_us = mono_us();
		w->last_full = w->out.len >= FILL_MAX;
		w->last_busy = w->lines > 1;
	}
	return w->out.len > 0;
}

static long watch_read(void *cls, char *out, size_t max)
{
	struct watch *w = cls;
	size_t n;

	if (!produce(w))
		/* a cut stream ends without its last chunk: the client sees
		 * the connection drop, as when a server or proxy dies */
		return w->cut ? HTTP_STREAM_ERROR : HTTP_STREAM_END;
	n = w->out.len - w->off;
	if (n > max)
		n = max;
	memcpy(out, w->out.buf + w->off, n);
	w->off += n;
	return (long)n;
}

static void watch_free(void *cls)
{
	struct watch *w = cls;

	api_read_selectors_release(&w->sel);
	json_decref(w->initial);
	sbuf_release(&w->out);
	api_op_release(&w->op);
	registry_put(w->snap);
	free(w);
}

void api_watch_serve(struct op *op, const struct list_opts *lo,
		     struct http_resp *resp)
{
	struct api_status st = API_STATUS_INIT;
	struct watch *w = xcalloc(1, sizeof(*w));
	char *fsel = NULL;
	bool list_first;
	int64_t now = mono_ms();

	if (api_media_negotiate(op->req, false, &w->media, &st) < 0)
		goto fail;
	if (op->name)
		fsel = lo->fsel && *lo->fsel
			? xasprintf("%s,metadata.name=%s", lo->fsel, op->name)
			: xasprintf("metadata.name=%s", op->name);
	if (api_read_selectors_parse(op->type, lo->lsel, fsel ? fsel : lo->fsel,
				     &w->sel, &st) < 0) {
		free(fsel);
		goto fail;
	}
	free(fsel);
	w->snap = registry_ref(op->snap);
	api_op_init(&w->op, op->api, w->snap, op->type, op->ver, op->ns, NULL, "");
	json_decref(w->op.warnings);
	w->op.warnings = json_incref(op->warnings);
	api_op_version(&w->op, w->api_version, sizeof(w->api_version));
	w->include = lo->include;
	w->bookmarks = lo->bookmarks;
	w->table_first = true;
	w->conn = op->req->conn;
	w->deadline = now + (lo->timeout_s >= 0
			     ? lo->timeout_s * 1000
			     : (1800 + (api_now_ms() % 1800)) * 1000L);
	w->next_bookmark = now + op->api->bookmark_ms;
	list_first = !lo->rv || !strcmp(lo->rv, "0");
	if (lo->send_initial == 1)
		list_first = true;
	else if (lo->send_initial == 0)
		list_first = false;
	if (list_first) {
		w->initial = api_read_matching(&w->op, &w->sel, &w->cursor);
		w->initial_end = lo->send_initial == 1 && lo->bookmarks;
	} else if (lo->rv) {
		if (api_parse_rv(lo->rv, &w->cursor) < 0) {
			status_bad_request(&st, "invalid resource version: %s",
					   lo->rv);
			watch_free(w);
			api_respond_status(op, resp, &st);
			return;
		}
		/* --fault-gone: as if the history after the RV had been
		 * compacted away (the stream's only event is the ERROR) */
		if (fault_hit(op->api->faults, FAULT_GONE)) {
			status_expired(&st, (unsigned long long)w->cursor,
				       (unsigned long long)store_rv(
					       op->api->store));
			emit_status(w, &st);
		}
	} else {
		w->cursor = store_rv(op->api->store);
	}
	api_respond_stream(op, resp, w->media.ctype, watch_read, w, watch_free);
	return;
fail:
	free(w);
	api_respond_status(op, resp, &st);
}
