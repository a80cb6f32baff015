/*
 * kube: the REST client (see kube.h): request records, the token-bucket
 * rate limiter, one libcurl easy handle per send, answers with ceilings,
 * Status parsing, retries and the per-verb counters.
 *
 * DESIGN. A request (struct kube_call) lives from kube_submit until its
 * done callback returns or it is cancelled, and moves through three
 * states: THROTTLED (in the FIFO waiting for a token), RUNNING (one send:
 * a struct attempt on the loop) and BACKOFF (its retry timer is armed).
 * Every send is a fresh easy handle; the multi handle's connection cache
 * keeps connections alive between them. What the easy handle points to
 * (header lists, the error buffer, the answer buffer) lives in the
 * attempt, which the loop releases after the handle, so a request can be
 * cancelled at any moment, from inside a libcurl callback too, without
 * libcurl ever reading freed memory.
 *
 * The rate limiter is golang.org/x/time/rate's token bucket as client-go
 * uses it: tokens accrue at qps up to burst; a send takes one; while
 * there is none, requests queue in order and one timer is armed for the
 * moment the head can go.
 */
#include "controller/kube.h"

#include <ctype.h>
#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/dlist.h"
#include "base/sbuf.h"
#include "controller/kube_int.h"
#include "controller/kubeconfig.h"
#include "controller/loop.h"
#include "controller/timers.h"

#define DEFAULT_QPS 20.0
#define DEFAULT_BURST 30
#define DEFAULT_MAX_OBJECT ((size_t)3 << 20)
#define DEFAULT_MAX_LIST ((size_t)64 << 20)
#define DEFAULT_RETRIES 10
#define DEFAULT_BACKOFF_BASE_MS 200
#define DEFAULT_BACKOFF_MAX_MS 30000
#define DEFAULT_TIMEOUT_MS 60000
#define DEFAULT_RETRY_AFTER_MAX_MS 600000
#define CONNECT_TIMEOUT_MS 10000
#define TOKEN_REREAD_MS 60000
#define SNIPPET_MAX 256 /* bytes of a non-Status error body quoted */
#define PROBE_EVERY_MS 1000 /* kube_probe */

enum call_state {
	CALL_THROTTLED, /* in the rate-limit queue */
	CALL_RUNNING,   /* one send on the loop (c->att) */
	CALL_BACKOFF,   /* c->retry armed */
};

struct attempt;

struct kube_call {
	struct kube *k;            /* borrowed */
	enum kube_verb verb;
	char *url;                 /* owned */
	char *body;                /* owned serialised body, or NULL */
	size_t max_bytes;          /* answer ceiling; > 0 */
	bool no_retry;
	bool discard;              /* a 2xx answer's body is not kept */
	bool control;              /* kube_req.control */
	bool write;                /* a write the fence stops */
	int64_t send_timeout_ms;   /* kube_req.timeout_ms */
	kube_done_take_fn *done;
	void *ud;                  /* borrowed */
	kube_sink_fn *sink;        /* streams: 2xx bytes go here */
	int64_t timeout_ms;        /* whole-send limit; 0: none */
	enum call_state state;
	struct attempt *att;       /* the running send; NULL otherwise */
	struct timer retry;        /* armed in CALL_BACKOFF */
	unsigned attempts;         /* sends so far */
	bool throttled;            /* waited for a token (for the stats) */
	int64_t queued_ms;         /* loop time it entered the queue */
	int64_t last_retry_after;  /* ms, from the last answer; -1: none */
	struct dlist qlink;       /* on k->queue while CALL_THROTTLED */
	struct dlist live_link;   /* on k->live until freed */
};

/* One send. Owned by the loop transfer from start to release. */
struct attempt {
	struct kube_call *c;          /* NULL once the call is cancelled */
	struct curl_slist *hdrs;      /* owned request headers */
	struct curl_slist *connect_to; /* owned; tls-server-name */
	char errbuf[CURL_ERROR_SIZE]; /* libcurl's detail text */
	CURL *easy;                   /* borrowed from the loop */
	struct loop_transfer *xfer;   /* the loop's handle; borrowed */
	long code;                    /* HTTP status once known; 0 before */
	int64_t retry_after_ms;       /* from Retry-After; -1: none */
	struct sbuf resp;             /* the answer (not streamed), capped
					 at the call's max_bytes (P5) */
	bool sink_stopped;            /* the stream consumer said stop */
};

struct kube {
	struct loop *loop;        /* borrowed */
	char *base;               /* URL prefix of every request */
	char *connect_to;         /* "name:port:host:port", or NULL */
	bool https;
	bool insecure;
	char *ca_pem, *cert_pem, *key_pem; /* owned, or NULL */
	char *token;              /* owned bearer token, or NULL */
	char *token_file;         /* owned; re-read every minute */
	int64_t token_read_ms;    /* loop time of the last read */
	char *user_agent;         /* owned */
	double qps;               /* < 0: unlimited */
	double burst;             /* >= 1 */
	double tokens;            /* <= burst */
	int64_t bucket_ms;        /* loop time tokens was computed at */
	struct timer throttle;    /* armed while the queue waits */
	struct dlist queue;       /* the rate-limit FIFO of kube_call */
	struct dlist live;        /* every pending kube_call, newest first */
	size_t nlive;
	size_t max_object, max_list;
	int max_retries;          /* < 0: none */
	int64_t backoff_base_ms, backoff_max_ms;
	int64_t timeout_ms, retry_after_max_ms;
	uint64_t rng;             /* xorshift64* state; != 0 */
	size_t ninformers;
	bool fenced;              /* kube_fence */
	uint64_t answers;         /* HTTP answers received (kube_int.h) */
	struct kube_call *probe;  /* the kube_probe in flight, or NULL */
	int64_t probe_ms;         /* loop time the last probe was sent */
	size_t nwrites;           /* live calls with write set */
	struct kube_stats stats;
};

static const struct loop_transfer_ops transfer_ops;
static void on_throttle(void *ud, int64_t now_ms);

/* ---- small helpers ---- */

const char *kube_verb_name(enum kube_verb v)
{
	static const char *const names[KUBE_VERB_N] = {
		[KUBE_GET] = "GET",       [KUBE_LIST] = "LIST",
		[KUBE_WATCH] = "WATCH",   [KUBE_POST] = "POST",
		[KUBE_PUT] = "PUT",       [KUBE_PATCH_MERGE] = "PATCH",
		[KUBE_PATCH_JSON] = "PATCH", [KUBE_DELETE] = "DELETE",
	};

	return (unsigned)v < KUBE_VERB_N ? names[v] : "?";
}

static const char *method_of(enum kube_verb v)
{
	switch (v) {
	case KUBE_POST:
		return "POST";
	case KUBE_PUT:
		return "PUT";
	case KUBE_PATCH_MERGE:
	case KUBE_PATCH_JSON:
		return "PATCH";
	case KUBE_DELETE:
		return "DELETE";
	default:
		return "GET";
	}
}

/* The reason client-go gives a non-Status error answer, by code. */
static const char *reason_of(long code)
{
	static const struct {
		long code;
		const char *reason;
	} table[] = {
		{ 400, "BadRequest" },     { 401, "Unauthorized" },
		{ 403, "Forbidden" },      { 404, "NotFound" },
		{ 405, "MethodNotAllowed" }, { 406, "NotAcceptable" },
		{ 409, "Conflict" },       { 410, "Expired" },
		{ 413, "RequestEntityTooLarge" },
		{ 415, "UnsupportedMediaType" }, { 422, "Invalid" },
		{ 429, "TooManyRequests" }, { 500, "InternalError" },
		{ 503, "ServiceUnavailable" }, { 504, "Timeout" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (table[i].code == code)
			return table[i].reason;
	return "Unknown";
}

static uint64_t rnd(struct kube *k)
{
	uint64_t x = k->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	k->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

/* Capped exponential backoff with jitter: the n-th retry (n >= 1) waits
 * a random time in [d/2, d], d = min(max, base * 2^(n-1)). */
static int64_t backoff_ms(struct kube *k, unsigned n)
{
	int64_t d = k->backoff_base_ms;

	while (--n > 0 && d < k->backoff_max_ms)
		d *= 2;
	if (d > k->backoff_max_ms)
		d = k->backoff_max_ms;
	if (d < 2)
		return d;
	return d / 2 + (int64_t)(rnd(k) % (uint64_t)(d / 2 + 1));
}

static void count(struct kube *k, enum kube_verb v, long code)
{
	struct kube_stats *s = &k->stats;

	for (size_t i = 0; i < s->n; i++) {
		if (s->v[i].verb == v && s->v[i].code == code) {
			s->v[i].n++;
			return;
		}
	}
	if (s->n == KUBE_STATS_MAX) {
		s->dropped++;
		return;
	}
	s->v[s->n].verb = v;
	s->v[s->n].code = code;
	s->v[s->n].n = 1;
	s->n++;
}

const struct kube_stats *kube_stats(const struct kube *k)
{
	return &k->stats;
}

uint64_t kube_stats_count(const struct kube_stats *s, enum kube_verb v,
			  long code)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].verb == v && s->v[i].code == code)
			return s->v[i].n;
	return 0;
}

struct loop *kube_loop(const struct kube *k)
{
	return k->loop;
}

int64_t kube_now_ms(const struct kube *k)
{
	return loop_now_ms(k->loop);
}

size_t kube_max_object(const struct kube *k)
{
	return k->max_object;
}

size_t kube_max_list(const struct kube *k)
{
	return k->max_list;
}

size_t kube_pending(const struct kube *k)
{
	return k->nlive;
}

bool kube_saturated(const struct kube *k)
{
	return !dlist_empty(&k->queue);
}

void kube_informer_attach(struct kube *k)
{
	k->ninformers++;
}

void kube_informer_detach(struct kube *k)
{
	if (!k->ninformers)
		BUG("informer detached twice");
	k->ninformers--;
}

char *kube_escape(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	char *out = xmalloc(strlen(s) * 3 + 1), *o = out;

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (isalnum(c) || c == '-' || c == '.' || c == '_' ||
		    c == '~') {
			*o++ = (char)c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
	return out;
}

char *kube_path(const struct kube_ref *r)
{
	char *ns = r->ns && *r->ns ? xasprintf("namespaces/%s/", r->ns)
				   : xstrdup("");
	char *p;

	if (!r->version || !r->resource)
		BUG("kube_path without version or resource");
	p = xasprintf("%s%s/%s/%s%s%s%s%s%s",
		      r->group && *r->group ? "/apis/" : "/api",
		      r->group && *r->group ? r->group : "", r->version, ns,
		      r->resource, r->name ? "/" : "", r->name ? r->name : "",
		      r->subresource ? "/" : "",
		      r->subresource ? r->subresource : "");
	free(ns);
	return p;
}

/* ---- construction ---- */

/*
 * Splits "scheme://host[:port][/prefix]" and builds base (and connect_to
 * for tls-server-name, which curl has no option for: the URL names the
 * certificate's host and CONNECT_TO sends the connection to the real one).
 */
static int parse_server(struct kube *k, const struct kubeconfig *cfg,
			struct err *err)
{
	const char *s = cfg->server, *hp, *slash, *colon;
	char *host, *port;

	if (!s)
		return err_set(err, "kubeconfig has no server");
	if (!strncmp(s, "https://", 8)) {
		k->https = true;
		hp = s + 8;
	} else if (!strncmp(s, "http://", 7)) {
		hp = s + 7;
	} else {
		return err_set(err, "server %s: want http:// or https://", s);
	}
	slash = strchr(hp, '/');
	if (!slash)
		slash = hp + strlen(hp);
	if (slash == hp)
		return err_set(err, "server %s: no host", s);
	if (!cfg->tls_server_name || !*cfg->tls_server_name || !k->https) {
		k->base = xstrdup(s);
		return 0;
	}
	/* host[:port] -> host, port; "[v6]:port" keeps its brackets */
	colon = NULL;
	for (const char *p = hp; p < slash; p++) {
		if (*p == ']')
			colon = NULL;
		else if (*p == ':')
			colon = p;
	}
	host = xstrndup(hp, (size_t)((colon ? colon : slash) - hp));
	port = colon ? xstrndup(colon + 1, (size_t)(slash - colon - 1))
		     : xstrdup("443");
	k->base = xasprintf("https://%s:%s%s", cfg->tls_server_name, port,
			    slash);
	k->connect_to = xasprintf("%s:%s:%s:%s", cfg->tls_server_name, port,
				  host, port);
	free(host);
	free(port);
	return 0;
}

struct kube *kube_new(struct loop *l, const struct kubeconfig *cfg,
		      const struct kube_opts *o, struct err *err)
{
	static const struct kube_opts defaults;
	struct kube *k = xcalloc(1, sizeof(*k));

	if (!o)
		o = &defaults;
	dlist_init(&k->queue);
	dlist_init(&k->live);
	k->loop = l;
	if (parse_server(k, cfg, err) < 0) {
		free(k);
		return NULL;
	}
	k->insecure = cfg->insecure;
	k->ca_pem = xstrdup_or_null(cfg->ca_pem);
	k->cert_pem = xstrdup_or_null(cfg->cert_pem);
	k->key_pem = xstrdup_or_null(cfg->key_pem);
	k->token = xstrdup_or_null(cfg->token);
	k->token_file = xstrdup_or_null(cfg->token_file);
	k->token_read_ms = loop_now_ms(l);
	k->user_agent = xstrdup(o->user_agent ? o->user_agent
					      : "cueue-manager");
	k->qps = o->qps == 0 ? DEFAULT_QPS : o->qps;
	k->burst = o->burst > 0 ? o->burst : DEFAULT_BURST;
	k->tokens = k->burst;
	k->bucket_ms = loop_now_ms(l);
	k->max_object = o->max_object_bytes ? o->max_object_bytes
					    : DEFAULT_MAX_OBJECT;
	k->max_list = o->max_list_bytes ? o->max_list_bytes
					: DEFAULT_MAX_LIST;
	k->max_retries = o->max_retries ? o->max_retries : DEFAULT_RETRIES;
	k->backoff_base_ms = o->backoff_base_ms > 0
			     ? o->backoff_base_ms : DEFAULT_BACKOFF_BASE_MS;
	k->backoff_max_ms = o->backoff_max_ms > 0
			    ? o->backoff_max_ms : DEFAULT_BACKOFF_MAX_MS;
	k->timeout_ms = o->request_timeout_ms > 0
			? o->request_timeout_ms : DEFAULT_TIMEOUT_MS;
	k->retry_after_max_ms = o->retry_after_max_ms > 0
				? o->retry_after_max_ms
				: DEFAULT_RETRY_AFTER_MAX_MS;
	k->rng = o->seed ? o->seed
			 : (uint64_t)loop_wall_ms(l) * 0x9E3779B97F4A7C15ULL;
	if (!k->rng)
		k->rng = 1;
	timers_setup(&k->throttle, on_throttle, k);
	return k;
}

static void wipe_free(char *s)
{
	if (s) {
		volatile char *p = s;

		while (*p)
			*p++ = '\0';
		free(s);
	}
}

static void call_free(struct kube_call *c)
{
	free(c->url);
	free(c->body);
	free(c);
}

static void live_unlink(struct kube *k, struct kube_call *c)
{
	dlist_remove(&c->live_link);
	k->nlive--;
	if (c->write)
		k->nwrites--;
}

static void queue_unlink(struct kube_call *c)
{
	dlist_remove(&c->qlink);
}

/* The oldest throttled call, or NULL. */
static struct kube_call *queue_first(const struct kube *k)
{
	struct dlist *n = dlist_first(&k->queue);

	return n ? DLIST_ENTRY(n, struct kube_call, qlink) : NULL;
}

/* Takes c out of whatever state it is in (queue, send, retry timer);
 * c stays live. */
static void call_halt(struct kube *k, struct kube_call *c)
{
	switch (c->state) {
	case CALL_THROTTLED:
		queue_unlink(c);
		if (dlist_empty(&k->queue))
			loop_timer_cancel(k->loop, &k->throttle);
		break;
	case CALL_RUNNING:
		/* The attempt outlives the call until the loop releases it. */
		c->att->c = NULL;
		loop_transfer_stop(k->loop, c->att->xfer);
		c->att = NULL;
		break;
	case CALL_BACKOFF:
		loop_timer_cancel(k->loop, &c->retry);
		break;
	}
}

void kube_cancel(struct kube *k, struct kube_call *c)
{
	call_halt(k, c);
	live_unlink(k, c);
	call_free(c);
}

void kube_free(struct kube *k)
{
	if (!k)
		return;
	if (k->ninformers)
		BUG("kube_free with %zu informers left", k->ninformers);
	while (!dlist_empty(&k->live))
		kube_cancel(k, DLIST_ENTRY(k->live.next, struct kube_call,
					   live_link));
	loop_timer_cancel(k->loop, &k->throttle);
	free(k->base);
	free(k->connect_to);
	free(k->ca_pem);
	free(k->cert_pem);
	wipe_free(k->key_pem);
	wipe_free(k->token);
	free(k->token_file);
	free(k->user_agent);
	free(k);
}

/* ---- one send ---- */

/* Re-reads a rotating token file once a minute; keeps the old token when
 * the file cannot be read (the next answer, a 401, tells the caller). */
static void refresh_token(struct kube *k)
{
	int64_t now = loop_now_ms(k->loop);
	FILE *f;
	char buf[16384];
	size_t n;

	if (!k->token_file || now - k->token_read_ms < TOKEN_REREAD_MS)
		return;
	k->token_read_ms = now;
	f = fopen(k->token_file, "rb");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	while (n && isspace((unsigned char)buf[n - 1]))
		n--;
	buf[n] = '\0';
	if (n && !strchr(buf, '\n')) {
		wipe_free(k->token);
		k->token = xstrdup(buf);
	}
	memset(buf, 0, sizeof(buf));
}

static void set_blob(CURL *e, CURLoption opt, const char *pem)
{
	struct curl_blob b = { (void *)pem, strlen(pem), CURL_BLOB_COPY };

	curl_easy_setopt(e, opt, &b);
}

static const char *ctype_of(enum kube_verb v)
{
	switch (v) {
	case KUBE_PATCH_MERGE:
		return "Content-Type: application/merge-patch+json";
	case KUBE_PATCH_JSON:
		return "Content-Type: application/json-patch+json";
	default:
		return "Content-Type: application/json";
	}
}

static void finish(struct kube_call *c, enum kube_outcome outcome, long code,
		   const char *reason, const char *message, json_t *body);

static void start_attempt(struct kube_call *c)
{
	struct kube *k = c->k;
	struct attempt *a;
	CURL *e;

	if (c->write && k->fenced) {
		/* only ever reached from a timer (kube_fence, submit) */
		char *m = xasprintf("%s %s: not sent: write fenced (this "
				    "replica stopped writing)",
				    method_of(c->verb), c->url);

		finish(c, KUBE_TRANSPORT, 0, NULL, m, NULL);
		free(m);
		return;
	}
	a = xcalloc(1, sizeof(*a));
	e = loop_easy_new(k->loop);

	if (!e)
		BUG("curl_easy_init failed");
	refresh_token(k);
	a->c = c;
	sbuf_init(&a->resp, c->max_bytes);
	a->easy = e;
	a->retry_after_ms = -1;
	curl_easy_setopt(e, CURLOPT_URL, c->url);
	curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(e, CURLOPT_ERRORBUFFER, a->errbuf);
	curl_easy_setopt(e, CURLOPT_USERAGENT, k->user_agent);
	curl_easy_setopt(e, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
			 (long)CONNECT_TIMEOUT_MS);
	if (c->sink)
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, (long)c->timeout_ms);
	else
		curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
				 (long)(c->send_timeout_ms > 0
						? c->send_timeout_ms
						: k->timeout_ms));
	if (c->send_timeout_ms > 0 && c->send_timeout_ms < CONNECT_TIMEOUT_MS)
		curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS,
				 (long)c->send_timeout_ms);
	if (c->verb != KUBE_GET && c->verb != KUBE_LIST &&
	    c->verb != KUBE_WATCH)
		curl_easy_setopt(e, CURLOPT_CUSTOMREQUEST, method_of(c->verb));
	if (c->body) {
		curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE,
				 (long)strlen(c->body));
		curl_easy_setopt(e, CURLOPT_COPYPOSTFIELDS, c->body);
		a->hdrs = curl_slist_append(a->hdrs, ctype_of(c->verb));
	}
	a->hdrs = curl_slist_append(a->hdrs, "Accept: application/json");
	a->hdrs = curl_slist_append(a->hdrs, "Expect:");
	if (k->https) {
		if (k->token) {
			char *h = xasprintf("Authorization: Bearer %s",
					    k->token);

			a->hdrs = curl_slist_append(a->hdrs, h);
			wipe_free(h);
		}
		if (k->ca_pem)
			set_blob(e, CURLOPT_CAINFO_BLOB, k->ca_pem);
		if (k->cert_pem && k->key_pem) {
			curl_easy_setopt(e, CURLOPT_SSLCERTTYPE, "PEM");
			set_blob(e, CURLOPT_SSLCERT_BLOB, k->cert_pem);
			curl_easy_setopt(e, CURLOPT_SSLKEYTYPE, "PEM");
			set_blob(e, CURLOPT_SSLKEY_BLOB, k->key_pem);
		}
		if (k->insecure) {
			curl_easy_setopt(e, CURLOPT_SSL_VERIFYPEER, 0L);
			curl_easy_setopt(e, CURLOPT_SSL_VERIFYHOST, 0L);
		}
		if (k->connect_to) {
			a->connect_to = curl_slist_append(NULL,
							  k->connect_to);
			curl_easy_setopt(e, CURLOPT_CONNECT_TO, a->connect_to);
		}
	}
	curl_easy_setopt(e, CURLOPT_HTTPHEADER, a->hdrs);
	c->attempts++;
	c->state = CALL_RUNNING;
	c->att = a;
	a->xfer = loop_transfer_start(k->loop, e, &transfer_ops, a);
}

/* ---- rate limiting ---- */

static void refill(struct kube *k)
{
	int64_t now = loop_now_ms(k->loop);

	if (now > k->bucket_ms) {
		k->tokens += (double)(now - k->bucket_ms) * k->qps / 1000.0;
		if (k->tokens > k->burst)
			k->tokens = k->burst;
		k->bucket_ms = now;
	}
}

/* Starts queued calls while tokens last; arms the timer for the rest. */
static void pump(struct kube *k)
{
	int64_t now = loop_now_ms(k->loop);

	if (k->qps > 0)
		refill(k);
	struct kube_call *c;
	struct dlist *pos;

	while ((c = queue_first(k)) &&
	       (k->qps < 0 || k->tokens >= 1.0 - 1e-9)) {
		queue_unlink(c);
		if (k->qps > 0)
			k->tokens -= 1.0;
		if (c->throttled) {
			k->stats.throttled++;
			k->stats.throttle_wait_ms +=
				(uint64_t)(now - c->queued_ms);
			c->throttled = false;
		}
		start_attempt(c);
	}
	if (!dlist_empty(&k->queue)) {
		double need = 1.0 - k->tokens;
		int64_t ms = (int64_t)(need * 1000.0 / k->qps) + 1;

		DLIST_FOREACH(pos, &k->queue)
			DLIST_ENTRY(pos, struct kube_call, qlink)->throttled =
				true;
		loop_timer_arm(k->loop, &k->throttle, ms);
	}
}

static void on_throttle(void *ud, int64_t now_ms)
{
	(void)now_ms;
	pump(ud);
}

static void enqueue(struct kube_call *c)
{
	struct kube *k = c->k;

	c->state = CALL_THROTTLED;
	c->queued_ms = loop_now_ms(k->loop);
	dlist_insert_before(&k->queue, &c->qlink);
	pump(k);
}

static void on_retry(void *ud, int64_t now_ms)
{
	struct kube_call *c = ud;

	(void)now_ms;
	if (c->control || (c->write && c->k->fenced))
		start_attempt(c); /* past the queue; a fenced write ends */
	else
		enqueue(c);
}

/* ---- answers ---- */

static size_t on_header(void *ud, const char *data, size_t len)
{
	struct attempt *a = ud;

	if (len > 5 && !strncmp(data, "HTTP/", 5)) {
		/* a new answer (after a 100 Continue, say) */
		a->retry_after_ms = -1;
		a->code = 0;
	} else if (len > 12 && !strncasecmp(data, "Retry-After:", 12)) {
		char tmp[32];
		size_t n = len - 12 < sizeof(tmp) - 1 ? len - 12
						       : sizeof(tmp) - 1;
		char *end;
		long v;

		memcpy(tmp, data + 12, n);
		tmp[n] = '\0';
		v = strtol(tmp, &end, 10);
		while (isspace((unsigned char)*end))
			end++;
		/* seconds only; an HTTP-date falls back to backoff */
		if (end != tmp && !*end && v >= 0)
			a->retry_after_ms = (int64_t)v * 1000;
	} else if ((len == 2 && data[0] == '\r') ||
		   (len == 1 && data[0] == '\n')) {
		/* the end of an answer's headers: a 2xx stream is up */
		long code = 0;

		curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &code);
		if (a->c && a->c->sink && code >= 200 && code < 300)
			a->c->sink(a->c->ud, "", 0);
	}
	return len;
}

static size_t on_body(void *ud, const char *data, size_t len)
{
	struct attempt *a = ud;
	struct kube_call *c = a->c;

	if (!len)
		return 0;
	if (!a->code)
		curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &a->code);
	if (c->sink && a->code >= 200 && a->code < 300) {
		if (c->sink(c->ud, data, len))
			return len;
		/* the consumer may have cancelled the call: touch only a */
		a->sink_stopped = true;
		return 0;
	}
	if (c->discard && a->code >= 200 && a->code < 300)
		return len; /* nobody reads it: neither kept nor parsed */
	/* P5: past the ceiling the buffer drops what it had; never parse
	 * half an answer */
	return sbuf_add(&a->resp, data, len) == 0 ? len : 0;
}

static bool is_retriable(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_PROXY:
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return true;
	default:
		return false;
	}
}

static bool may_retry(const struct kube_call *c)
{
	const struct kube *k = c->k;

	return !c->no_retry && k->max_retries > 0 &&
	       c->attempts <= (unsigned)k->max_retries;
}

static void schedule_retry(struct kube_call *c, int64_t retry_after_ms)
{
	struct kube *k = c->k;
	int64_t d;

	if (retry_after_ms >= 0)
		d = retry_after_ms < k->retry_after_max_ms
		    ? retry_after_ms : k->retry_after_max_ms;
	else
		d = backoff_ms(k, c->attempts);
	k->stats.retries++;
	c->state = CALL_BACKOFF;
	loop_timer_arm(k->loop, &c->retry, d);
}

/* Hands the result to the caller and frees the call. body is taken. */
static void finish(struct kube_call *c, enum kube_outcome outcome, long code,
		   const char *reason, const char *message, json_t *body)
{
	struct kube_reply r = {
		.outcome = outcome, .code = code,
		.reason = reason ? reason : "",
		.message = message ? message : "",
		.retry_after_ms = c->last_retry_after,
		.attempts = c->attempts,
	};

	live_unlink(c->k, c);
	c->done(c->ud, &r, body);
	call_free(c);
}

/* A readable quote of a non-JSON error body (new string). */
static char *snippet(const char *s, size_t len)
{
	size_t n = len < SNIPPET_MAX ? len : SNIPPET_MAX;
	char *out = xstrndup(s ? s : "", s ? n : 0);

	for (char *p = out; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = ' ';
	utf8_trim_tail(out);
	return out;
}

static void answer_error(struct kube_call *c, struct attempt *a)
{
	json_t *body = a->resp.len ? json_loadb(a->resp.buf, a->resp.len, 0,
						NULL) : NULL;
	const char *reason = NULL, *message = NULL;
	char *msg = NULL;

	if (json_is_object(body)) {
		reason = json_string_value(json_object_get(body, "reason"));
		message = json_string_value(json_object_get(body, "message"));
	}
	if (!reason || !*reason)
		reason = reason_of(a->code);
	if (!message || !*message) {
		char *q = snippet(sbuf_cstr(&a->resp), a->resp.len);

		msg = *q ? xasprintf("the server responded with status %ld: "
				     "%s", a->code, q)
			 : xasprintf("the server responded with status %ld",
				     a->code);
		free(q);
		message = msg;
	}
	if ((a->code == 429 || a->code >= 500) && may_retry(c)) {
		json_decref(body);
		free(msg);
		schedule_retry(c, a->retry_after_ms);
		return;
	}
	/* reason and message point into body: copy before it is handed on */
	{
		char *rs = xstrdup(reason), *ms = msg ? msg : xstrdup(message);

		finish(c, KUBE_HTTP, a->code, rs, ms, body);
		free(rs);
		free(ms);
	}
}

static void on_done(void *ud, CURL *easy, CURLcode rc)
{
	struct attempt *a = ud;
	struct kube_call *c = a->c;
	struct kube *k = c->k;

	c->att = NULL;
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &a->code);
	if (a->code > 0)
		k->answers++;
	c->last_retry_after = a->retry_after_ms;
	if (rc == CURLE_WRITE_ERROR && a->resp.failed) {
		char *m = xasprintf("%s %s: the answer is larger than %zu "
				    "bytes", method_of(c->verb), c->url,
				    c->max_bytes);

		count(k, c->verb, a->code);
		k->stats.too_large++;
		finish(c, KUBE_TOO_LARGE, a->code, NULL, m, NULL);
		free(m);
		return;
	}
	if (rc == CURLE_WRITE_ERROR && a->sink_stopped) {
		count(k, c->verb, a->code);
		finish(c, KUBE_STOPPED, a->code, NULL, "stopped", NULL);
		return;
	}
	if (rc != CURLE_OK) {
		char *m;

		count(k, c->verb, 0);
		if (is_retriable(rc) && may_retry(c)) {
			schedule_retry(c, -1);
			return;
		}
		m = xasprintf("%s %s: %s%s%s", method_of(c->verb), c->url,
			      curl_easy_strerror(rc), a->errbuf[0] ? ": " : "",
			      a->errbuf);
		finish(c, KUBE_TRANSPORT, a->code, NULL, m, NULL);
		free(m);
		return;
	}
	count(k, c->verb, a->code);
	if (a->code < 200 || a->code >= 300) {
		answer_error(c, a);
		return;
	}
	if (c->sink || !a->resp.len) {
		finish(c, KUBE_OK, a->code, NULL, NULL, NULL);
	} else {
		json_error_t je;
		json_t *body = json_loadb(a->resp.buf, a->resp.len, 0, &je);

		if (!body) {
			char *m = xasprintf("%s %s: the answer is not JSON: "
					    "%s", method_of(c->verb), c->url,
					    je.text);

			finish(c, KUBE_BAD_BODY, a->code, NULL, m, NULL);
			free(m);
			return;
		}
		finish(c, KUBE_OK, a->code, NULL, NULL, body);
	}
}

static void on_release(void *ud)
{
	struct attempt *a = ud;

	curl_slist_free_all(a->hdrs);
	curl_slist_free_all(a->connect_to);
	sbuf_release(&a->resp);
	free(a);
}

static const struct loop_transfer_ops transfer_ops = {
	.body = on_body,
	.header = on_header,
	.done = on_done,
	.release = on_release,
};

/* ---- submission ---- */

static char *delete_options(const struct kube_req *r)
{
	json_t *o;
	char *s;

	json_t *pre;

	if (!r->propagation && !r->precondition_rv && !r->precondition_uid)
		return NULL;
	o = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion",
		      "v1");
	if (r->propagation)
		json_object_set_new(o, "propagationPolicy",
				    json_string(r->propagation));
	pre = json_object();
	if (r->precondition_rv)
		json_object_set_new(pre, "resourceVersion",
				    json_string(r->precondition_rv));
	if (r->precondition_uid)
		json_object_set_new(pre, "uid",
				    json_string(r->precondition_uid));
	if (json_object_size(pre))
		json_object_set_new(o, "preconditions", pre);
	else
		json_decref(pre);
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return s;
}

static struct kube_call *submit(struct kube *k, const struct kube_req *r,
				kube_sink_fn *sink, int64_t timeout_ms)
{
	struct kube_call *c;
	bool needs_body = r->verb == KUBE_POST || r->verb == KUBE_PUT ||
			  r->verb == KUBE_PATCH_MERGE ||
			  r->verb == KUBE_PATCH_JSON;

	if (!r->done || !r->path || r->path[0] != '/')
		BUG("kube request without done callback or absolute path");
	if ((unsigned)r->verb >= KUBE_VERB_N)
		BUG("kube request with verb %d", (int)r->verb);
	if (needs_body && !r->body)
		BUG("%s %s without a body", kube_verb_name(r->verb), r->path);
	c = xcalloc(1, sizeof(*c));
	c->k = k;
	c->verb = r->verb;
	c->url = xasprintf("%s%s", k->base, r->path);
	if (r->body) {
		c->body = json_dumps((json_t *)r->body, JSON_COMPACT);
		if (!c->body)
			BUG("json_dumps of a request body failed");
	} else if (r->verb == KUBE_DELETE) {
		c->body = delete_options(r);
	}
	c->max_bytes = r->max_bytes ? r->max_bytes
		       : r->verb == KUBE_LIST ? k->max_list : k->max_object;
	c->no_retry = r->no_retry;
	c->discard = r->discard_answer;
	c->control = r->control;
	c->write = !r->control && r->verb != KUBE_GET &&
		   r->verb != KUBE_LIST && r->verb != KUBE_WATCH;
	c->send_timeout_ms = r->timeout_ms;
	c->done = r->done;
	c->ud = r->ud;
	c->sink = sink;
	c->timeout_ms = timeout_ms;
	c->last_retry_after = -1;
	timers_setup(&c->retry, on_retry, c);
	dlist_insert_after(&k->live, &c->live_link);
	k->nlive++;
	if (c->write)
		k->nwrites++;
	if (c->write && k->fenced) {
		/* ends from a timer, never before the caller has c */
		c->state = CALL_BACKOFF;
		loop_timer_arm(k->loop, &c->retry, 0);
	} else if (c->control) {
		start_attempt(c);
	} else {
		enqueue(c);
	}
	return c;
}

uint64_t kube_answers(const struct kube *k)
{
	return k->answers;
}

static void on_probe(void *ud, const struct kube_reply *r, json_t *body)
{
	struct kube *k = ud;

	(void)r;
	k->probe = NULL;
	json_decref(body);
}

void kube_probe(struct kube *k)
{
	int64_t now = loop_now_ms(k->loop);
	struct kube_req r = {
		.verb = KUBE_GET, .path = "/readyz", .no_retry = true,
		.control = true, .timeout_ms = PROBE_EVERY_MS,
		.discard_answer = true, .done = on_probe, .ud = k,
	};

	if (k->probe || (k->probe_ms && now - k->probe_ms < PROBE_EVERY_MS))
		return;
	k->probe_ms = now;
	k->probe = submit(k, &r, NULL, 0);
}

void kube_fence(struct kube *k)
{
	struct dlist *pos, *next;

	if (k->fenced)
		return;
	k->fenced = true;
	for (pos = k->live.next, next = pos->next; pos != &k->live;
	     pos = next, next = pos->next) {
		struct kube_call *c =
			DLIST_ENTRY(pos, struct kube_call, live_link);

		if (!c->write)
			continue;
		call_halt(k, c);
		c->state = CALL_BACKOFF;
		loop_timer_arm(k->loop, &c->retry, 0);
	}
}

bool kube_fenced(const struct kube *k)
{
	return k->fenced;
}

size_t kube_writes_pending(const struct kube *k)
{
	return k->nwrites;
}

struct kube_call *kube_submit(struct kube *k, const struct kube_req *r)
{
	if (r->verb == KUBE_WATCH)
		BUG("KUBE_WATCH goes through kube_stream");
	return submit(k, r, NULL, 0);
}

struct kube_call *kube_stream(struct kube *k, const struct kube_req *r,
			      kube_sink_fn *sink, int64_t timeout_ms)
{
	if (r->verb != KUBE_WATCH || !sink)
		BUG("kube_stream wants KUBE_WATCH and a sink");
	return submit(k, r, sink, timeout_ms);
}
