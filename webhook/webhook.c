/*
 * webhook: the route table (STYLE P11), the review plumbing around the
 * admit.h handlers, and the published-snapshot slot. See webhook.h for
 * the threads.
 */
#include "webhook/webhook.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "config/config.h"
#include "webhook/review.h"
#include "webhook/server.h"

/* The published view and the requests reading it. */
struct snap {
	struct nsview *view; /* owned; frozen */
	unsigned refs;       /* the slot's own + one per request; under
			      * snap_lock */
};

struct webhook {
	struct server *srv;
	struct admit_policy pol;  /* immutable after webhook_new */
	pthread_mutex_t snap_lock; /* leaf lock: cur and every refs */
	struct snap *cur;         /* NULL until the first publish */
	struct route_ctx *rctx;   /* owned; one per route */
};

/* What a route function gets as its ctx. */
struct route_ctx {
	struct webhook *wh;
	admit_fn *fn;    /* NULL for /convert */
	enum kind want;
};

#define KUEUE_PATHS(op, v, res) "/" op "-kueue-x-k8s-io-" v "-" res

static const struct {
	struct webhook_path info;
	admit_fn *fn;
	enum kind want;
} routes[] = {
	/* batch/v1 Job (kueue-api.md §12.2, §12.3) */
	{ { "/mutate-batch-v1-job", "mjob.kb.io", true, true },
	  admit_mutate_job, KIND_JOB },
	{ { "/validate-batch-v1-job", "vjob.kb.io", false, true },
	  admit_validate_job, KIND_JOB },
	/* Kueue objects, v0.14 paths then HEAD's */
#define KUEUE_ROUTES(v)                                                     \
	{ { KUEUE_PATHS("mutate", v, "clusterqueue"), "mclusterqueue.kb.io", \
	    true, true }, admit_mutate_finalizer, KIND_CLUSTER_QUEUE },     \
	{ { KUEUE_PATHS("mutate", v, "resourceflavor"),                     \
	    "mresourceflavor.kb.io", true, true }, admit_mutate_finalizer,  \
	  KIND_RESOURCE_FLAVOR },                                           \
	{ { KUEUE_PATHS("mutate", v, "workload"), "mworkload.kb.io", true,  \
	    true }, admit_mutate_workload, KIND_WORKLOAD },                 \
	{ { KUEUE_PATHS("validate", v, "clusterqueue"),                     \
	    "vclusterqueue.kb.io", false, true }, admit_validate_kueue,     \
	  KIND_CLUSTER_QUEUE },                                             \
	{ { KUEUE_PATHS("validate", v, "cohort"), "vcohort.kb.io", false,   \
	    true }, admit_validate_kueue, KIND_COHORT },                    \
	{ { KUEUE_PATHS("validate", v, "resourceflavor"),                   \
	    "vresourceflavor.kb.io", false, true }, admit_validate_kueue,   \
	  KIND_RESOURCE_FLAVOR },                                           \
	{ { KUEUE_PATHS("validate", v, "workload"), "vworkload.kb.io",      \
	    false, true }, admit_validate_kueue, KIND_WORKLOAD },           \
	{ { KUEUE_PATHS("validate", v, "localqueue"), "vlocalqueue.kb.io",  \
	    false, false }, admit_validate_kueue, KIND_LOCAL_QUEUE },       \
	{ { KUEUE_PATHS("validate", v, "workloadpriorityclass"),            \
	    "vworkloadpriorityclass.kb.io", false, false },                 \
	  admit_validate_kueue, KIND_WORKLOAD_PRIORITY_CLASS }
	KUEUE_ROUTES("v1beta1"),
	KUEUE_ROUTES("v1beta2"),
#undef KUEUE_ROUTES
	/* CRD conversion (HEAD: ClusterQueue, LocalQueue, Workload, Cohort) */
	{ { "/convert", NULL, false, true }, NULL, KIND_UNKNOWN },
};
#define NROUTES (sizeof(routes) / sizeof(routes[0]))

static struct webhook_path paths[NROUTES];

static void fill_paths(void)
{
	for (size_t i = 0; i < NROUTES; i++)
		paths[i] = routes[i].info;
}

const struct webhook_path *webhook_paths(size_t *n)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	/* the info column of the table, copied once */
	pthread_once(&once, fill_paths);
	*n = NROUTES;
	return paths;
}

/* ---- options ---- */

void webhook_opts_init(struct webhook_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = WEBHOOK_DEFAULT_PORT;
	admit_policy_defaults(&o->policy);
}

void webhook_opts_from_config(struct webhook_opts *o, const struct config *c)
{
	memset(o, 0, sizeof(*o));
	o->addr = c->webhook_host;
	o->port = (unsigned)c->webhook_port;
	o->min_tls13 = c->tls_min_version == CONFIG_TLS_13;
	o->priorities = config_tls_priorities(c);
	admit_policy_from_config(&o->policy, c);
}

void webhook_opts_release(struct webhook_opts *o)
{
	if (!o)
		return;
	admit_policy_release(&o->policy);
	free(o->priorities);
	memset(o, 0, sizeof(*o));
}

/* ---- the snapshot slot ---- */

static struct snap *snap_get(struct webhook *wh)
{
	struct snap *s;

	pthread_mutex_lock(&wh->snap_lock);
	s = wh->cur;
	if (s)
		s->refs++;
	pthread_mutex_unlock(&wh->snap_lock);
	return s;
}

static void snap_put(struct webhook *wh, struct snap *s)
{
	bool last;

	if (!s)
		return;
	pthread_mutex_lock(&wh->snap_lock);
	last = --s->refs == 0;
	pthread_mutex_unlock(&wh->snap_lock);
	if (last) {
		nsview_free(s->view);
		free(s);
	}
}

void webhook_publish_snapshot(struct webhook *wh, struct nsview *v)
{
	struct snap *s = xmalloc(sizeof(*s)), *old;

	nsview_freeze(v);
	s->view = v;
	s->refs = 1;
	pthread_mutex_lock(&wh->snap_lock);
	old = wh->cur;
	wh->cur = s;
	pthread_mutex_unlock(&wh->snap_lock);
	snap_put(wh, old);
}

bool webhook_has_snapshot(struct webhook *wh)
{
	bool has;

	pthread_mutex_lock(&wh->snap_lock);
	has = wh->cur != NULL;
	pthread_mutex_unlock(&wh->snap_lock);
	return has;
}

/* ---- the route functions (server threads) ---- */

static void answer_json(struct server_resp *resp, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT);

	json_decref(j);
	if (!text)
		BUG("json_dumps of an answer failed");
	resp->code = 200;
	resp->ctype = "application/json";
	resp->body = text;
	resp->len = strlen(text);
}

/* The answer of one admission route to a body, with the policy and the
 * view the request reads (view NULL: nothing published yet). */
static void answer_admission(const struct admit_policy *pol,
			     const struct nsview *view, admit_fn *fn,
			     enum kind want, const char *body, size_t len,
			     struct server_resp *resp)
{
	struct review_request rr;
	struct review_response out;
	struct err err = { "" };

	memset(&out, 0, sizeof(out));
	if (review_decode_admission(body, len, &rr, &err) != 0) {
		/* controller-runtime answers a review it cannot read with
		 * an AdmissionReview denying it, code 400 */
		review_deny(&out, 400, NULL, err.msg);
	} else {
		struct admit_ctx ac = { pol, view };

		fn(&ac, want, &rr, &out);
	}
	answer_json(resp, review_encode_admission(rr.api_version, rr.uid,
						  &out));
	review_response_release(&out);
	review_request_release(&rr);
}

static void answer_conversion(const char *body, size_t len,
			      struct server_resp *resp)
{
	struct review_conversion c;
	struct err err = { "" };

	if (review_decode_conversion(body, len, &c, &err) != 0)
		server_resp_text(resp, 400, err.msg);
	else
		answer_json(resp, admit_convert(&c));
	review_conversion_release(&c);
}

static void serve_admission(void *ctx, const struct server_req *req,
			    struct server_resp *resp)
{
	struct route_ctx *rc = ctx;
	struct snap *s = snap_get(rc->wh);

	answer_admission(&rc->wh->pol, s ? s->view : NULL, rc->fn, rc->want,
			 req->body, req->len, resp);
	snap_put(rc->wh, s);
}

static void serve_conversion(void *ctx, const struct server_req *req,
			     struct server_resp *resp)
{
	(void)ctx;
	answer_conversion(req->body, req->len, resp);
}

bool webhook_answer(const struct admit_policy *pol,
		    const struct nsview *view, const char *path,
		    const char *body, size_t len, struct server_resp *resp)
{
	for (size_t i = 0; i < NROUTES; i++) {
		if (strcmp(routes[i].info.path, path))
			continue;
		if (routes[i].fn)
			answer_admission(pol, view, routes[i].fn,
					 routes[i].want, body, len, resp);
		else
			answer_conversion(body, len, resp);
		return true;
	}
	return false;
}

/* ---- lifecycle ---- */

struct webhook *webhook_new(const struct webhook_opts *o, struct err *err)
{
	struct webhook *wh = xcalloc(1, sizeof(*wh));
	struct server_route sr[NROUTES] = { 0 };
	struct server_opts so = {
		.addr = o->addr, .port = o->port, .cert_pem = o->cert_pem,
		.key_pem = o->key_pem, .min_tls13 = o->min_tls13,
		.priorities = o->priorities,
		.max_body = o->max_body, .threads = o->threads,
		.observe = o->observe, .observe_ud = o->observe_ud,
	};

	pthread_mutex_init(&wh->snap_lock, NULL);
	admit_policy_copy(&wh->pol, &o->policy);
	wh->rctx = xcalloc(NROUTES, sizeof(*wh->rctx));
	for (size_t i = 0; i < NROUTES; i++) {
		wh->rctx[i].wh = wh;
		wh->rctx[i].fn = routes[i].fn;
		wh->rctx[i].want = routes[i].want;
		sr[i].path = routes[i].info.path;
		sr[i].fn = routes[i].fn ? serve_admission : serve_conversion;
		sr[i].ctx = &wh->rctx[i];
	}
	wh->srv = server_start(&so, sr, NROUTES, err);
	if (!wh->srv) {
		webhook_free(wh);
		return NULL;
	}
	return wh;
}

int webhook_set_certificate(struct webhook *wh, const char *cert_pem,
			    const char *key_pem, struct err *err)
{
	return server_set_certificate(wh->srv, cert_pem, key_pem, err);
}

size_t webhook_retired(struct webhook *wh)
{
	return server_retired(wh->srv);
}

unsigned webhook_port(const struct webhook *wh)
{
	return server_port(wh->srv);
}

void webhook_free(struct webhook *wh)
{
	if (!wh)
		return;
	server_stop(wh->srv); /* no request runs after this */
	if (wh->cur) {
		nsview_free(wh->cur->view);
		free(wh->cur);
	}
	pthread_mutex_destroy(&wh->snap_lock);
	admit_policy_release(&wh->pol);
	free(wh->rctx);
	free(wh);
}
