/*
 * lease: client-go's leader election on a coordination.k8s.io/v1 Lease
 * (lease.h). Owns one timer (the next try), one deadline timer (the
 * leader's renew deadline) and at most one request in flight. Holds
 * json_t for the Lease bodies it reads and writes (beyond STYLE P3(c)'s
 * list, as certmgr.c does; controller/README.md).
 *
 * One try: without a usable cached record, GET the Lease (404: POST
 * one); then, unless another holder's record is still fresh, PUT the
 * record with this identity and the read resourceVersion. A leader
 * skips the GET and PUTs over its own last write. Every answer that
 * is not a success counts as a failed try: a candidate tries again
 * later; a leader too, until its deadline timer says it has lost.
 */
#include "controller/lease.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "controller/kube.h"
#include "controller/log.h"
#include "controller/loop.h"
#include "controller/timers.h"
#include "model/timestamp.h"

/* What the record says, as compared between reads (client-go compares
 * the whole record; a change of any field restarts the expiry clock). */
struct record {
	char *holder;         /* owned; "" when free */
	int64_t duration_s;
	char *acquire;        /* owned MicroTime text, or NULL */
	char *renew;          /* owned MicroTime text, or NULL */
	int64_t transitions;
};

struct lease {
	struct kube *k;       /* borrowed */
	struct loop *l;       /* borrowed */
	struct lease_opts o;  /* strings owned */
	struct timer try_t;   /* the next try */
	struct timer dead_t;  /* leader: renew deadline */
	struct kube_call *call; /* the request in flight, or NULL */
	struct record rec;    /* the last record read or written */
	bool have_rec;
	char *rv;             /* owned; its resourceVersion */
	int64_t observed_ms;  /* loop time rec was first seen as it is */
	bool leading;
	bool lost;            /* on_lost ran: nothing more */
	bool releasing;
	lease_fn *rel_done;
	void *rel_ud;
	uint64_t rng;
	struct lease_stats stats;
};

static void try_now(struct lease *le);

static void record_release(struct record *r)
{
	free(r->holder);
	free(r->acquire);
	free(r->renew);
	memset(r, 0, sizeof(*r));
}

static bool str_same(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

static bool record_same(const struct record *a, const struct record *b)
{
	return str_same(a->holder, b->holder) &&
	       a->duration_s == b->duration_s &&
	       str_same(a->acquire, b->acquire) &&
	       str_same(a->renew, b->renew) &&
	       a->transitions == b->transitions;
}

static const char *jstring(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Reads a Lease object's spec and resourceVersion into r and *rv. */
static void record_read(const json_t *obj, struct record *r, char **rv)
{
	const json_t *spec = json_object_get(obj, "spec");
	const json_t *v;

	memset(r, 0, sizeof(*r));
	r->holder = xstrdup(jstring(spec, "holderIdentity") ?
			    jstring(spec, "holderIdentity") : "");
	v = json_object_get(spec, "leaseDurationSeconds");
	r->duration_s = json_is_integer(v) ? json_integer_value(v) : 0;
	r->acquire = xstrdup_or_null(jstring(spec, "acquireTime"));
	r->renew = xstrdup_or_null(jstring(spec, "renewTime"));
	v = json_object_get(spec, "leaseTransitions");
	r->transitions = json_is_integer(v) ? json_integer_value(v) : 0;
	free(*rv);
	*rv = xstrdup_or_null(
		jstring(json_object_get(obj, "metadata"), "resourceVersion"));
}

static uint64_t rnd(struct lease *le)
{
	uint64_t x = le->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	le->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* The next try: a leader every retry period, a candidate every
 * retry period x [0.25, 0.5), and at the moment the holder's record
 * expires when that comes first (the expiry is measured from when this
 * process first saw the record, so reading often keeps that late by
 * half a retry period at most). */
static void schedule(struct lease *le)
{
	int64_t d = le->o.retry_period_ms;

	if (!le->leading) {
		d = d / 4 + (int64_t)(rnd(le) % (uint64_t)(d / 4 + 1));
		if (le->have_rec && le->rec.holder[0]) {
			int64_t left = le->observed_ms +
				       le->rec.duration_s * 1000 + 1 -
				       loop_now_ms(le->l);

			if (left > 0 && left < d)
				d = left;
		}
	}
	loop_timer_arm(le->l, &le->try_t, d);
}

static char *lease_path(const struct lease *le, bool collection)
{
	char *ns = kube_escape(le->o.ns), *name = kube_escape(le->o.name);
	char *p = collection
		? xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/"
			    "leases", ns)
		: xasprintf("/apis/coordination.k8s.io/v1/namespaces/%s/"
			    "leases/%s", ns, name);

	free(ns);
	free(name);
	return p;
}

/* The Lease object for r (new reference). */
static json_t *lease_body(const struct lease *le, const struct record *r,
			  const char *rv)
{
	json_t *meta = json_pack("{s:s, s:s}", "name", le->o.name,
				 "namespace", le->o.ns);
	json_t *spec = json_pack("{s:s, s:I, s:I}", "holderIdentity",
				 r->holder, "leaseDurationSeconds",
				 (json_int_t)r->duration_s, "leaseTransitions",
				 (json_int_t)r->transitions);

	if (rv)
		json_object_set_new(meta, "resourceVersion", json_string(rv));
	if (r->acquire)
		json_object_set_new(spec, "acquireTime",
				    json_string(r->acquire));
	if (r->renew)
		json_object_set_new(spec, "renewTime", json_string(r->renew));
	return json_pack("{s:s, s:s, s:o, s:o}", "apiVersion",
			 "coordination.k8s.io/v1", "kind", "Lease",
			 "metadata", meta, "spec", spec);
}

static void lease_send(struct lease *le, enum kube_verb verb, bool collection,
		 const json_t *body, kube_done_take_fn *done)
{
	char *path = lease_path(le, collection);
	struct kube_req r = {
		.verb = verb, .path = path, .body = body, .no_retry = true,
		.control = true, .timeout_ms = le->o.renew_deadline_ms,
		.done = done, .ud = le,
	};

	le->stats.tries++;
	le->call = kube_submit(le->k, &r);
	free(path);
}

/* ---- outcomes ---- */

static void became_leader(struct lease *le)
{
	int64_t now = loop_now_ms(le->l);

	loop_timer_arm(le->l, &le->dead_t, le->o.renew_deadline_ms);
	le->observed_ms = now;
	if (le->leading) {
		le->stats.renewals++;
		return;
	}
	le->leading = true;
	le->stats.acquired = 1;
	log_msg(LOG_INFO, "leader", le->o.ns, le->o.name,
		"became leader (identity %s)", le->o.identity);
	if (le->o.on_lead)
		le->o.on_lead(le->o.ud);
}

static void lose(struct lease *le, const char *why)
{
	if (le->lost)
		return;
	le->lost = true;
	le->leading = false;
	loop_timer_cancel(le->l, &le->try_t);
	loop_timer_cancel(le->l, &le->dead_t);
	if (le->call) {
		kube_cancel(le->k, le->call);
		le->call = NULL;
	}
	log_msg(LOG_ERROR, "leader", le->o.ns, le->o.name,
		"leader election lost: %s", why);
	if (le->o.on_lost)
		le->o.on_lost(le->o.ud);
}

static void on_deadline(void *ud, int64_t now_ms)
{
	struct lease *le = ud;

	(void)now_ms;
	lose(le, "no renewal within the renew deadline");
}

static void failed(struct lease *le, const struct kube_reply *r,
		   const char *what)
{
	le->stats.failures++;
	if (r->code == 409)
		le->have_rec = false; /* read again at the next try */
	log_msg(le->leading ? LOG_WARN : LOG_DEBUG, "leader", le->o.ns,
		le->o.name, "%s failed: %s%s%s", what,
		r->reason[0] ? r->reason : "", r->reason[0] ? ": " : "",
		r->message);
}

static void on_written(void *ud, const struct kube_reply *r, json_t *body)
{
	struct lease *le = ud;

	le->call = NULL;
	if (r->outcome == KUBE_OK && json_is_object(body)) {
		record_release(&le->rec);
		record_read(body, &le->rec, &le->rv);
		le->have_rec = true;
		became_leader(le);
	} else {
		failed(le, r, le->leading ? "renew" : "acquire");
	}
	json_decref(body);
	schedule(le);
}

/* The record says what it says: take it, or wait. */
static void decide(struct lease *le)
{
	int64_t now = loop_now_ms(le->l);
	char ts[TIMESTAMP_BUF];
	struct record n = { 0 };
	json_t *body;
	bool mine = !strcmp(le->rec.holder, le->o.identity);

	if (le->leading && !mine) {
		lose(le, "the lease names another holder");
		return;
	}
	if (!mine && le->rec.holder[0] &&
	    now < le->observed_ms + le->rec.duration_s * 1000) {
		schedule(le); /* held, not expired */
		return;
	}
	timestamp_format_micro(loop_wall_ms(le->l), ts, sizeof(ts));
	n.holder = (char *)le->o.identity;
	n.duration_s = (le->o.lease_duration_ms + 999) / 1000;
	n.renew = ts;
	if (mine) {
		n.acquire = le->rec.acquire ? le->rec.acquire : ts;
		n.transitions = le->rec.transitions;
	} else {
		n.acquire = ts;
		n.transitions = le->rec.transitions + 1;
	}
	body = lease_body(le, &n, le->rv);
	lease_send(le, KUBE_PUT, false, body, on_written);
	json_decref(body);
}

static void on_read(void *ud, const struct kube_reply *r, json_t *body)
{
	struct lease *le = ud;

	le->call = NULL;
	if (r->outcome == KUBE_HTTP && r->code == 404) {
		char ts[TIMESTAMP_BUF];
		struct record n = { 0 };
		json_t *b;

		json_decref(body);
		if (le->leading) {
			lose(le, "the lease is gone");
			return;
		}
		timestamp_format_micro(loop_wall_ms(le->l), ts, sizeof(ts));
		n.holder = (char *)le->o.identity;
		n.duration_s = (le->o.lease_duration_ms + 999) / 1000;
		n.acquire = n.renew = ts;
		b = lease_body(le, &n, NULL);
		lease_send(le, KUBE_POST, true, b, on_written);
		json_decref(b);
		return;
	}
	if (r->outcome != KUBE_OK || !json_is_object(body)) {
		json_decref(body);
		failed(le, r, "read");
		schedule(le);
		return;
	}
	{
		struct record seen;

		record_read(body, &seen, &le->rv);
		if (!le->have_rec || !record_same(&seen, &le->rec)) {
			record_release(&le->rec);
			le->rec = seen;
			le->observed_ms = loop_now_ms(le->l);
		} else {
			record_release(&seen);
		}
		le->have_rec = true;
	}
	json_decref(body);
	decide(le);
}

static void try_now(struct lease *le)
{
	if (le->call || le->lost || le->releasing)
		return;
	if (le->leading && le->have_rec)
		decide(le); /* renew over the last write */
	else
		lease_send(le, KUBE_GET, false, NULL, on_read);
}

static void on_try(void *ud, int64_t now_ms)
{
	(void)now_ms;
	try_now(ud);
}

/* ---- the interface ---- */

struct lease *lease_new(struct kube *k, const struct lease_opts *o)
{
	struct lease *le = xcalloc(1, sizeof(*le));

	if (o->lease_duration_ms <= o->renew_deadline_ms ||
	    o->renew_deadline_ms <= o->retry_period_ms ||
	    o->retry_period_ms <= 0)
		BUG("lease timing %lld > %lld > %lld > 0 does not hold",
		    (long long)o->lease_duration_ms,
		    (long long)o->renew_deadline_ms,
		    (long long)o->retry_period_ms);
	le->k = k;
	le->l = kube_loop(k);
	le->o = *o;
	le->o.ns = xstrdup(o->ns);
	le->o.name = xstrdup(o->name);
	le->o.identity = xstrdup(o->identity);
	le->rng = o->seed ? o->seed
			  : (uint64_t)loop_wall_ms(le->l) * 2654435761u + 1;
	timers_setup(&le->try_t, on_try, le);
	timers_setup(&le->dead_t, on_deadline, le);
	try_now(le);
	return le;
}

void lease_free(struct lease *le)
{
	if (!le)
		return;
	loop_timer_cancel(le->l, &le->try_t);
	loop_timer_cancel(le->l, &le->dead_t);
	if (le->call)
		kube_cancel(le->k, le->call);
	record_release(&le->rec);
	free(le->rv);
	free((char *)le->o.ns);
	free((char *)le->o.name);
	free((char *)le->o.identity);
	free(le);
}

bool lease_leading(const struct lease *le)
{
	return le->leading;
}

const char *lease_holder(const struct lease *le)
{
	return le->have_rec && le->rec.holder ? le->rec.holder : "";
}

const struct lease_stats *lease_stats(const struct lease *le)
{
	return &le->stats;
}

static void on_released(void *ud, const struct kube_reply *r, json_t *body)
{
	struct lease *le = ud;

	le->call = NULL;
	json_decref(body);
	if (r->outcome == KUBE_OK)
		log_msg(LOG_INFO, "leader", le->o.ns, le->o.name,
			"lease released");
	else
		log_msg(LOG_WARN, "leader", le->o.ns, le->o.name,
			"release failed (the lease expires by itself): "
			"%s", r->message);
	le->leading = false;
	if (le->rel_done)
		le->rel_done(le->rel_ud);
}

void lease_release(struct lease *le, lease_fn *done, void *ud)
{
	char ts[TIMESTAMP_BUF];
	struct record n = { 0 };
	json_t *body;
	bool leading = le->leading && !le->lost && le->have_rec;

	le->releasing = true;
	le->rel_done = done;
	le->rel_ud = ud;
	loop_timer_cancel(le->l, &le->try_t);
	loop_timer_cancel(le->l, &le->dead_t);
	if (le->call) {
		kube_cancel(le->k, le->call);
		le->call = NULL;
	}
	if (!leading) {
		le->leading = false;
		if (done)
			done(ud);
		return;
	}
	timestamp_format_micro(loop_wall_ms(le->l), ts, sizeof(ts));
	n.holder = (char *)"";
	n.duration_s = 1;
	n.acquire = n.renew = ts;
	n.transitions = le->rec.transitions;
	body = lease_body(le, &n, le->rv);
	lease_send(le, KUBE_PUT, false, body, on_released);
	json_decref(body);
}
