/*
 * status: the coalescing writer of status.h. One record per object key
 * (a hash map entry) holds the dirty flag, the write in flight, the last
 * body written and the rate-limit timer; records live until forgotten.
 * It keeps json_t (the last body) outside STYLE P3(c)'s list: comparing
 * against what was last written is the point of the module.
 */
#include "controller/status.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/dlist.h"
#include "base/hmap.h"
#include "controller/kube.h"
#include "controller/loop.h"

struct record {
	char *key;               /* owned; the map's key */
	struct status_writer *w; /* borrowed */
	bool dirty;              /* a write was asked for since the last */
	struct kube_call *call;  /* the write in flight, or NULL */
	json_t *sent;            /* body of the write in flight; owned */
	json_t *last;            /* last body written successfully; owned */
	int64_t last_ms;         /* monotonic time of the last send */
	struct timer timer;      /* interval or retry wait */
	struct dlist wlink;      /* on the writer's FIFO while due but
				    max_inflight writes are running; on
				    no list otherwise */
};

struct status_writer {
	struct kube *k;   /* borrowed */
	struct loop *l;   /* borrowed */
	struct status_writer_opts o;
	struct hmap recs; /* key -> struct record */
	size_t inflight;
	struct dlist waiting; /* due records waiting for a slot, oldest
				 first */
	struct status_writer_stats stats;
};

static void try_send(struct record *r);

static void wait_push(struct status_writer *w, struct record *r)
{
	if (dlist_empty(&r->wlink))
		dlist_insert_before(&w->waiting, &r->wlink);
}

/* Slots freed: the records that waited for one go, oldest first. */
static void wait_drain(struct status_writer *w)
{
	while (!dlist_empty(&w->waiting) && w->inflight < w->o.max_inflight) {
		struct record *r = DLIST_ENTRY(w->waiting.next, struct record,
					       wlink);

		dlist_remove(&r->wlink);
		try_send(r);
	}
}

static void on_timer(void *ud, int64_t now_ms)
{
	(void)now_ms;
	try_send(ud);
}

static void on_done(void *ud, const struct kube_reply *rep, json_t *body)
{
	struct record *r = ud;
	struct status_writer *w = r->w;

	json_decref(body);
	r->call = NULL;
	w->inflight--;
	if (rep->outcome == KUBE_OK) {
		json_decref(r->last);
		r->last = r->sent;
	} else {
		w->stats.failures++;
		json_decref(r->sent);
		json_decref(r->last);
		r->last = NULL;
		if (rep->code != 404) {
			/* a conflict means someone else wrote meanwhile:
			 * rebuild soon; anything else waits longer */
			r->dirty = true;
			loop_timer_arm(w->l, &r->timer,
				       rep->code == 409 ? w->o.min_interval_ms
							: w->o.retry_ms);
		}
	}
	r->sent = NULL;
	if (r->dirty && !timers_is_armed(&r->timer))
		try_send(r);
	wait_drain(w);
	/* Last: the callback may forget (free) r. */
	if (w->o.result)
		w->o.result(w->o.ud, r->key, rep);
}

static void try_send(struct record *r)
{
	struct status_writer *w = r->w;
	int64_t now = loop_now_ms(w->l);
	struct kube_req req = { .verb = KUBE_PATCH_MERGE, .done = on_done,
				.discard_answer = true, .ud = r };
	char *path = NULL;
	json_t *body;

	if (r->call || !r->dirty)
		return;
	if (r->last_ms && now < r->last_ms + w->o.min_interval_ms) {
		loop_timer_arm_at(w->l, &r->timer,
				  r->last_ms + w->o.min_interval_ms);
		return;
	}
	loop_timer_cancel(w->l, &r->timer);
	if (w->inflight >= w->o.max_inflight) {
		wait_push(w, r); /* stays dirty; built when a slot frees */
		return;
	}
	r->dirty = false;
	body = w->o.build(w->o.ud, r->key, &path);
	if (!body) {
		free(path);
		return;
	}
	if (r->last && json_equal(body, r->last)) {
		w->stats.skipped++;
		json_decref(body);
		free(path);
		return;
	}
	req.path = path;
	req.body = body;
	r->sent = body;
	r->last_ms = now;
	w->inflight++;
	w->stats.writes++;
	r->call = kube_submit(w->k, &req);
	free(path);
}

struct status_writer *status_writer_new(struct kube *k,
					const struct status_writer_opts *o)
{
	struct status_writer *w = xcalloc(1, sizeof(*w));

	if (!o->build)
		BUG("status_writer_new: no build callback");
	w->k = k;
	dlist_init(&w->waiting);
	w->l = kube_loop(k);
	w->o = *o;
	if (!w->o.min_interval_ms)
		w->o.min_interval_ms = 100;
	if (!w->o.retry_ms)
		w->o.retry_ms = 1000;
	if (!w->o.max_inflight)
		w->o.max_inflight = 8;
	hmap_init(&w->recs);
	return w;
}

static void record_free(struct status_writer *w, struct record *r)
{
	if (r->call) {
		kube_cancel(w->k, r->call);
		w->inflight--;
	}
	loop_timer_cancel(w->l, &r->timer);
	dlist_remove(&r->wlink);
	json_decref(r->sent);
	json_decref(r->last);
	free(r->key);
	free(r);
}

void status_writer_free(struct status_writer *w)
{
	struct record *r;
	size_t pos = 0;

	if (!w)
		return;
	while ((r = hmap_next(&w->recs, &pos, NULL)))
		record_free(w, r);
	hmap_release(&w->recs);
	free(w);
}

void status_writer_mark(struct status_writer *w, const char *key)
{
	struct record *r = hmap_get(&w->recs, key);

	if (!r) {
		r = xcalloc(1, sizeof(*r));
		r->key = xstrdup(key);
		r->w = w;
		dlist_init(&r->wlink);
		timers_setup(&r->timer, on_timer, r);
		hmap_put(&w->recs, r->key, r);
	}
	r->dirty = true;
	if (!timers_is_armed(&r->timer))
		try_send(r);
}

void status_writer_forget(struct status_writer *w, const char *key)
{
	struct record *r = hmap_del(&w->recs, key);

	if (r)
		record_free(w, r);
}

bool status_writer_busy(const struct status_writer *w, const char *key)
{
	const struct record *r = hmap_get(&w->recs, key);

	return r && r->call;
}

bool status_writer_idle(const struct status_writer *w)
{
	const struct record *r;
	size_t pos = 0;

	if (w->inflight)
		return false;
	while ((r = hmap_next(&w->recs, &pos, NULL)))
		if (r->dirty || timers_is_armed(&r->timer))
			return false;
	return true;
}

const struct status_writer_stats *
status_writer_stats(const struct status_writer *w)
{
	return &w->stats;
}
