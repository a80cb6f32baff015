/*
 * events: the best-effort core/v1 Event recorder (see events.h).
 *
 * DESIGN. A record is a small struct of copied strings in a FIFO; the
 * JSON body is built only when its POST is submitted, so a burst of
 * records costs a few mallocs each and a full FIFO costs nothing but a
 * counter. pump() submits from the head while fewer than max_inflight
 * POSTs run and the client is not saturated; a POST's end (success or
 * failure) pumps again, and a held-back FIFO re-checks on a short timer
 * (the client's own queue drains without telling us).
 *
 * Event names are "<object>.<hex>", the hex a per-recorder sequence over
 * the wall time in ns (client-go uses the time in ns alone), so two
 * events of the same object in the same ms never collide.
 *
 * JSON: this file builds the POST bodies (json_t), beyond STYLE P3(c)'s
 * controller/kube*.c, like manager_wl.c's patch bodies; nothing is decoded.
 */
#include "controller/events.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dlist.h"
#include "controller/kube.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/metrics.h"
#include "model/errors.h"
#include "model/timestamp.h"

#define DEFAULT_MAX_QUEUED 4096
#define DEFAULT_MAX_INFLIGHT 16
#define DEFAULT_RECHECK_MS 20

struct ev {
	struct event_recorder *r; /* borrowed; for the done callback */
	char *api_version;        /* owned; the involvedObject ... */
	char *kind;
	char *ns;
	char *name;
	char *uid;                /* owned or NULL */
	char *rv;                 /* owned or NULL */
	enum event_type type;
	char *reason;             /* owned */
	char *message;            /* owned; <= EVENT_MESSAGE_MAX bytes */
	int64_t wall_ms;          /* when recorded */
	uint64_t seq;             /* for the name */
	struct kube_call *call;   /* the POST in flight, or NULL */
	struct dlist link;        /* on the FIFO or the in-flight list */
};

struct ev_list {
	struct dlist head;        /* of struct ev, oldest first */
	size_t n;
};

struct event_recorder {
	struct kube *k;           /* borrowed */
	struct loop *l;           /* borrowed; k's */
	char *component;          /* owned */
	char *instance;           /* owned */
	size_t max_queued;
	unsigned max_inflight;
	int64_t recheck_ms;
	struct ev_list queued;    /* waiting, oldest first */
	struct ev_list inflight;  /* POSTs running */
	struct timer recheck;     /* armed while the FIFO is held back */
	bool recheck_armed;
	uint64_t seq;
	struct event_recorder_stats stats;
	struct metric *m_posted, *m_failed, *m_dropped; /* NULL: none */
};

static void list_push(struct ev_list *l, struct ev *e)
{
	dlist_insert_before(&l->head, &e->link);
	l->n++;
}

static void list_unlink(struct ev_list *l, struct ev *e)
{
	dlist_remove(&e->link);
	l->n--;
}

/* The oldest event of l, or NULL. */
static struct ev *list_first(struct ev_list *l)
{
	struct dlist *n = dlist_first(&l->head);

	return n ? DLIST_ENTRY(n, struct ev, link) : NULL;
}

static void ev_free(struct ev *e)
{
	if (!e)
		return;
	free(e->api_version);
	free(e->kind);
	free(e->ns);
	free(e->name);
	free(e->uid);
	free(e->rv);
	free(e->reason);
	free(e->message);
	free(e);
}

static void count(struct metric *m)
{
	if (m)
		metric_inc(m);
}

/* The POST body (new). */
static json_t *ev_body(const struct event_recorder *r, const struct ev *e)
{
	char ts[TIMESTAMP_BUF], *name;
	json_t *obj, *io;

	timestamp_format(e->wall_ms, ts, sizeof(ts));
	name = xasprintf("%s.%llx", e->name,
			 (unsigned long long)((uint64_t)e->wall_ms * 1000000u +
					      (e->seq & 0xfffff)));
	io = json_pack("{s:s, s:s, s:s, s:s}", "apiVersion", e->api_version,
		       "kind", e->kind, "namespace", e->ns, "name", e->name);
	if (e->uid)
		json_object_set_new(io, "uid", json_string(e->uid));
	if (e->rv)
		json_object_set_new(io, "resourceVersion", json_string(e->rv));
	obj = json_pack("{s:s, s:s, s:{s:s, s:s}, s:o, s:s, s:s, s:s, "
			"s:{s:s}, s:s, s:s, s:s, s:s, s:i}",
			"apiVersion", "v1", "kind", "Event",
			"metadata", "name", name, "namespace", e->ns,
			"involvedObject", io,
			"reason", e->reason, "message", e->message,
			"type", e->type == EVENT_WARNING ? "Warning" : "Normal",
			"source", "component", r->component,
			"reportingComponent", r->component,
			"reportingInstance", r->instance,
			"firstTimestamp", ts, "lastTimestamp", ts, "count", 1);
	free(name);
	if (!obj)
		BUG("event body: a string is not UTF-8");
	return obj;
}

static void pump(struct event_recorder *r);

static void on_done(void *ud, const struct kube_reply *rep, json_t *body)
{
	struct ev *e = ud;
	struct event_recorder *r = e->r;

	json_decref(body);
	e->call = NULL;
	list_unlink(&r->inflight, e);
	if (rep->outcome == KUBE_OK) {
		r->stats.posted++;
		count(r->m_posted);
	} else {
		r->stats.failed++;
		count(r->m_failed);
		log_msg(LOG_DEBUG, "events", e->ns, e->name,
			"event %s not recorded (%ld): %s", e->reason,
			rep->code, rep->message);
	}
	ev_free(e);
	pump(r);
}

static void submit(struct event_recorder *r, struct ev *e)
{
	struct kube_ref ref = { .version = "v1", .resource = "events",
				.ns = e->ns };
	char *path = kube_path(&ref);
	json_t *body = ev_body(r, e);
	struct kube_req req = { .verb = KUBE_POST, .path = path,
				.body = body, .no_retry = true,
				.discard_answer = true, .done = on_done,
				.ud = e };

	list_push(&r->inflight, e);
	e->call = kube_submit(r->k, &req);
	json_decref(body);
	free(path);
}

static void pump(struct event_recorder *r)
{
	struct ev *e;

	while ((e = list_first(&r->queued)) &&
	       r->inflight.n < r->max_inflight) {
		if (kube_saturated(r->k)) {
			if (!r->recheck_armed) {
				r->recheck_armed = true;
				loop_timer_arm(r->l, &r->recheck,
					       r->recheck_ms);
			}
			return;
		}
		list_unlink(&r->queued, e);
		submit(r, e);
	}
}

static void on_recheck(void *ud, int64_t now_ms)
{
	struct event_recorder *r = ud;

	(void)now_ms;
	r->recheck_armed = false;
	pump(r);
}

struct event_recorder *event_recorder_new(struct kube *k,
					  const struct event_recorder_opts *o)
{
	struct event_recorder *r = xcalloc(1, sizeof(*r));

	if (!o || !o->component)
		BUG("event recorder without a component");
	r->k = k;
	dlist_init(&r->queued.head);
	dlist_init(&r->inflight.head);
	r->l = kube_loop(k);
	r->component = xstrdup(o->component);
	r->instance = xstrdup(o->instance ? o->instance : "cueue-manager");
	r->max_queued = o->max_queued ? o->max_queued : DEFAULT_MAX_QUEUED;
	r->max_inflight = o->max_inflight ? o->max_inflight
					  : DEFAULT_MAX_INFLIGHT;
	r->recheck_ms = o->recheck_ms > 0 ? o->recheck_ms : DEFAULT_RECHECK_MS;
	timers_setup(&r->recheck, on_recheck, r);
	if (o->registry) {
		struct metric_family *f =
			metrics_find(o->registry, "cueue_events_total");

		if (!f)
			f = metrics_counter(o->registry, "cueue_events_total",
					    "Events the manager recorded, by "
					    "component and result (posted, "
					    "failed, dropped)",
					    METRIC_LABELS("component",
							  "result"));
		r->m_posted = metric_family_get(
			f, METRIC_VALUES(r->component, "posted"));
		r->m_failed = metric_family_get(
			f, METRIC_VALUES(r->component, "failed"));
		r->m_dropped = metric_family_get(
			f, METRIC_VALUES(r->component, "dropped"));
	}
	return r;
}

void event_recorder_free(struct event_recorder *r)
{
	struct ev *e;

	if (!r)
		return;
	if (r->recheck_armed)
		loop_timer_cancel(r->l, &r->recheck);
	while ((e = list_first(&r->inflight))) {
		list_unlink(&r->inflight, e);
		kube_cancel(r->k, e->call);
		ev_free(e);
	}
	while ((e = list_first(&r->queued))) {
		list_unlink(&r->queued, e);
		ev_free(e);
	}
	free(r->component);
	free(r->instance);
	free(r);
}

void event_record(struct event_recorder *r, const struct event_object *obj,
		  enum event_type type, const char *reason,
		  const char *message)
{
	struct ev *e;
	size_t len;

	r->stats.recorded++;
	if (r->queued.n >= r->max_queued) {
		r->stats.dropped++;
		count(r->m_dropped);
		return;
	}
	if (!obj->ns || !obj->name || !reason)
		BUG("event without namespace, name or reason");
	e = xcalloc(1, sizeof(*e));
	e->r = r;
	e->api_version = xstrdup(obj->api_version ? obj->api_version : "");
	e->kind = xstrdup(obj->kind ? obj->kind : "");
	e->ns = xstrdup(obj->ns);
	e->name = xstrdup(obj->name);
	e->uid = xstrdup_or_null(obj->uid);
	e->rv = xstrdup_or_null(obj->resource_version);
	e->type = type;
	e->reason = xstrdup(reason);
	message = message ? message : "";
	len = strlen(message);
	if (len > EVENT_MESSAGE_MAX) {
		e->message = xstrndup(message, EVENT_MESSAGE_MAX);
		utf8_trim_tail(e->message);
	} else {
		e->message = xstrdup(message);
	}
	e->wall_ms = loop_wall_ms(r->l);
	e->seq = ++r->seq;
	list_push(&r->queued, e);
	pump(r);
}

void event_recordf(struct event_recorder *r, const struct event_object *obj,
		   enum event_type type, const char *reason, const char *fmt,
		   ...)
{
	va_list ap;
	char *msg;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		BUG("event message format");
	msg = xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	va_end(ap);
	event_record(r, obj, type, reason, msg);
	free(msg);
}

size_t event_recorder_pending(const struct event_recorder *r)
{
	return r ? r->queued.n + r->inflight.n : 0;
}

const struct event_recorder_stats *
event_recorder_stats(const struct event_recorder *r)
{
	return &r->stats;
}
