/*
 * visibility: the visibility API server (see visibility.h). Owns the
 * HTTPS server and the queue of requests waiting for the loop; borrows
 * the loop and the manager.
 */
#include "controller/visibility.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/loop.h"
#include "controller/manager.h"
#include "webhook/server.h"

#define GROUP "visibility.kueue.x-k8s.io"
#define PREFIX "/apis/" GROUP
#define DEFAULT_WAIT_MS 10000

enum vstate { VS_QUEUED, VS_TAKEN, VS_DONE };

/* One query waiting for the loop; lives on the server thread's stack. */
struct vreq {
	struct manager_vis_query q; /* strings borrowed from the thread */
	char *answer;               /* owned once VS_DONE */
	unsigned code;
	enum vstate state;
	struct vreq *next;
};

struct visibility {
	struct loop *l;         /* borrowed */
	struct manager *m;      /* borrowed */
	struct server *srv;     /* owned */
	pthread_mutex_t mu;     /* guards head, tail, closing, vreq state */
	pthread_cond_t cv;      /* CLOCK_MONOTONIC; signalled on VS_DONE */
	struct vreq *head, **tail;
	bool closing;
	int64_t wait_ms;
};

static const char *const versions[] = { "v1beta1", "v1beta2" };
#define NVERSIONS (sizeof(versions) / sizeof(versions[0]))

/* ---- answers made on the server thread ---- */

static void answer(struct server_resp *r, unsigned code, char *json)
{
	r->code = code;
	r->ctype = "application/json";
	r->body = json;
	r->len = strlen(json);
}

static char *status_text(unsigned code, const char *reason, const char *msg)
{
	/* msg holds no quote or backslash: every caller's text is ours or
	 * a value checked to be an integer or a path segment */
	return xasprintf("{\"kind\":\"Status\",\"apiVersion\":\"v1\","
			 "\"metadata\":{},\"status\":\"Failure\","
			 "\"message\":\"%s\",\"reason\":\"%s\",\"code\":%u}",
			 msg, reason, code);
}

static void answer_status(struct server_resp *r, unsigned code,
			  const char *reason, const char *msg)
{
	answer(r, code, status_text(code, reason, msg));
}

static char *group_json(void)
{
	return xasprintf(
		"{\"name\":\"" GROUP "\",\"versions\":["
		"{\"groupVersion\":\"" GROUP "/v1beta2\",\"version\":"
		"\"v1beta2\"},{\"groupVersion\":\"" GROUP "/v1beta1\","
		"\"version\":\"v1beta1\"}],\"preferredVersion\":"
		"{\"groupVersion\":\"" GROUP "/v1beta2\",\"version\":"
		"\"v1beta2\"}}");
}

static void discovery(const char *rest, struct server_resp *r)
{
	char *g;

	if (!*rest) {
		g = group_json();
		answer(r, 200, xasprintf("{\"kind\":\"APIGroup\","
					 "\"apiVersion\":\"v1\",%s", g + 1));
		free(g);
		return;
	}
	for (size_t i = 0; i < NVERSIONS; i++)
		if (!strcmp(rest + 1, versions[i])) {
			answer(r, 200, xasprintf(
				"{\"kind\":\"APIResourceList\",\"apiVersion\":"
				"\"v1\",\"groupVersion\":\"" GROUP "/%s\","
				"\"resources\":["
				"{\"name\":\"clusterqueues\",\"singularName\":"
				"\"clusterqueue\",\"namespaced\":false,"
				"\"kind\":\"ClusterQueue\",\"verbs\":[]},"
				"{\"name\":\"clusterqueues/pendingworkloads\","
				"\"singularName\":\"\",\"namespaced\":false,"
				"\"kind\":\"PendingWorkloadsSummary\","
				"\"verbs\":[\"get\"]},"
				"{\"name\":\"localqueues\",\"singularName\":"
				"\"localqueue\",\"namespaced\":true,\"kind\":"
				"\"LocalQueue\",\"verbs\":[]},"
				"{\"name\":\"localqueues/pendingworkloads\","
				"\"singularName\":\"\",\"namespaced\":true,"
				"\"kind\":\"PendingWorkloadsSummary\","
				"\"verbs\":[\"get\"]}]}", versions[i]));
			return;
		}
	answer_status(r, 404, "NotFound", "the server could not find the "
					  "requested resource");
}

/* A path segment: non-empty, no '/', '"' or '\\' (the Status texts
 * quote none of these). */
static bool segment_ok(const char *s)
{
	return *s && !strpbrk(s, "/\"\\");
}

/* Query argument key as an integer (absent: 0); false when it is not
 * one. */
static bool int_arg(const struct server_req *req, const char *key,
		    int64_t *out)
{
	const char *v = server_req_arg(req, key);
	char *end;
	long long x;

	*out = 0;
	if (!v || !*v)
		return true;
	errno = 0;
	x = strtoll(v, &end, 10);
	if (errno || *end)
		return false;
	*out = x;
	return true;
}

/* ---- the hand-off to the loop ---- */

static int64_t mono_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void unlink_req(struct visibility *v, struct vreq *q)
{
	struct vreq **pp = &v->head;

	while (*pp && *pp != q)
		pp = &(*pp)->next;
	if (!*pp)
		return;
	*pp = q->next;
	if (v->tail == &q->next)
		v->tail = pp;
}

/* Queues q, wakes the loop and waits for its answer. */
static void ask_loop(struct visibility *v, struct vreq *q)
{
	int64_t end = mono_ms() + v->wait_ms;
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(v->wait_ms / 1000);
	ts.tv_nsec += (long)(v->wait_ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&v->mu);
	if (v->closing) {
		pthread_mutex_unlock(&v->mu);
		q->code = 503;
		q->answer = status_text(503, "ServiceUnavailable",
					"the manager is stopping");
		return;
	}
	q->state = VS_QUEUED;
	q->next = NULL;
	*v->tail = q;
	v->tail = &q->next;
	pthread_mutex_unlock(&v->mu);
	loop_wake(v->l);
	pthread_mutex_lock(&v->mu);
	while (q->state != VS_DONE) {
		if (q->state == VS_QUEUED && mono_ms() >= end) {
			unlink_req(v, q);
			q->state = VS_DONE;
			q->code = 503;
			q->answer = status_text(503, "ServiceUnavailable",
						"the manager's loop did not "
						"answer in time; retry");
			break;
		}
		if (q->state == VS_QUEUED)
			pthread_cond_timedwait(&v->cv, &v->mu, &ts);
		else
			pthread_cond_wait(&v->cv, &v->mu);
	}
	pthread_mutex_unlock(&v->mu);
}

/* The loop's side: answers every queued request (before-sleep hook). */
static void on_loop(void *ud)
{
	struct visibility *v = ud;

	pthread_mutex_lock(&v->mu);
	while (v->head) {
		struct vreq *q = v->head;
		char *a;
		unsigned code = 500;

		v->head = q->next;
		if (!v->head)
			v->tail = &v->head;
		q->state = VS_TAKEN;
		pthread_mutex_unlock(&v->mu);
		a = manager_visibility(v->m, &q->q, &code);
		pthread_mutex_lock(&v->mu);
		q->answer = a;
		q->code = code;
		q->state = VS_DONE;
		pthread_cond_broadcast(&v->cv);
	}
	pthread_mutex_unlock(&v->mu);
}

/* ---- the route ---- */

static void on_request(void *ctx, const struct server_req *req,
		       struct server_resp *resp)
{
	struct visibility *v = ctx;
	const char *p = req->path;
	char *copy, *seg[8], *save = NULL, *tok;
	size_t n = 0;
	struct vreq q;
	char api[64];

	if (!strcmp(p, "/apis")) {
		char *g = group_json();

		answer(resp, 200, xasprintf("{\"kind\":\"APIGroupList\","
					    "\"apiVersion\":\"v1\","
					    "\"groups\":[%s]}", g));
		free(g);
		return;
	}
	p += strlen(PREFIX);
	if (!*p || !strchr(p + 1, '/')) {
		discovery(p, resp);
		return;
	}
	copy = xstrdup(p + 1);
	for (tok = strtok_r(copy, "/", &save); tok && n < 8;
	     tok = strtok_r(NULL, "/", &save))
		seg[n++] = tok;
	memset(&q, 0, sizeof(q));
	/* <v>/clusterqueues/<cq>/pendingworkloads or
	 * <v>/namespaces/<ns>/localqueues/<lq>/pendingworkloads */
	if (n == 4 && !strcmp(seg[1], "clusterqueues") &&
	    !strcmp(seg[3], "pendingworkloads") && segment_ok(seg[2])) {
		q.q.cq = seg[2];
	} else if (n == 6 && !strcmp(seg[1], "namespaces") &&
		   !strcmp(seg[3], "localqueues") &&
		   !strcmp(seg[5], "pendingworkloads") &&
		   segment_ok(seg[2]) && segment_ok(seg[4])) {
		q.q.ns = seg[2];
		q.q.lq = seg[4];
	} else {
		n = 0;
	}
	if (n && strcmp(seg[0], versions[0]) && strcmp(seg[0], versions[1]))
		n = 0;
	if (!n) {
		free(copy);
		answer_status(resp, 404, "NotFound", "the server could not "
						     "find the requested "
						     "resource");
		return;
	}
	if (!int_arg(req, "limit", &q.q.limit) ||
	    !int_arg(req, "offset", &q.q.offset)) {
		free(copy);
		answer_status(resp, 400, "BadRequest",
			      "limit and offset must be integers");
		return;
	}
	snprintf(api, sizeof(api), GROUP "/%s", seg[0]);
	q.q.api_version = api;
	ask_loop(v, &q);
	free(copy);
	answer(resp, q.code, q.answer);
}

/* ---- lifecycle ---- */

struct visibility *visibility_new(struct loop *l, struct manager *m,
				  const struct visibility_opts *o,
				  struct err *err)
{
	struct visibility *v = xcalloc(1, sizeof(*v));
	pthread_condattr_t ca;
	const struct server_route routes[] = {
		{ .path = "/apis", .fn = on_request, .ctx = v, .get = true },
		{ .path = PREFIX "/", .fn = on_request, .ctx = v,
		  .get = true },
	};
	struct server_opts so = {
		.addr = o->addr,
		.port = o->port,
		.cert_pem = o->cert_pem,
		.key_pem = o->key_pem,
		.priorities = o->priorities,
		.threads = 2,
	};

	v->l = l;
	v->m = m;
	v->wait_ms = o->wait_ms > 0 ? o->wait_ms : DEFAULT_WAIT_MS;
	v->tail = &v->head;
	pthread_mutex_init(&v->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&v->cv, &ca);
	pthread_condattr_destroy(&ca);
	loop_before_sleep_add(l, on_loop, v);
	v->srv = server_start(&so, routes, sizeof(routes) / sizeof(routes[0]),
			      err);
	if (!v->srv) {
		visibility_free(v);
		return NULL;
	}
	return v;
}

int visibility_set_certificate(struct visibility *v, const char *cert_pem,
			       const char *key_pem, struct err *err)
{
	return server_set_certificate(v->srv, cert_pem, key_pem, err);
}

unsigned visibility_port(const struct visibility *v)
{
	return server_port(v->srv);
}

void visibility_free(struct visibility *v)
{
	if (!v)
		return;
	loop_before_sleep_remove(v->l, on_loop, v);
	pthread_mutex_lock(&v->mu);
	v->closing = true;
	while (v->head) {
		struct vreq *q = v->head;

		v->head = q->next;
		q->code = 503;
		q->answer = status_text(503, "ServiceUnavailable",
					"the manager is stopping");
		q->state = VS_DONE;
	}
	v->tail = &v->head;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	server_stop(v->srv);
	pthread_cond_destroy(&v->cv);
	pthread_mutex_destroy(&v->mu);
	free(v);
}
