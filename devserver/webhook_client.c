/*
 * webhook_client: libcurl calls to admission and conversion webhooks
 * with kube-apiserver's URL, headers, TLS checks and Go error texts.
 *
 * DESIGN. See the header: a mutex-guarded stack of idle easy handles
 * (connection reuse without sharing a connection between threads, which
 * libcurl does not support), one CURLSH for the TLS session cache with a
 * pthread mutex per lock-data class, no lock held during a transfer.
 * libcurl's own global init runs once with the x* allocators.
 */
#include "devserver/webhook_client.h"

#include <ctype.h>
#include <curl/curl.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/b64.h"
#include "base/sbuf.h"
#include "devserver/api.h"
#include "devserver/jsonw.h"

/* Idle handles kept, each with its own connection cache: enough for the
 * devserver's request threads, so a burst of admission calls does not
 * close (and later re-handshake) TLS connections. libcurl cannot share
 * one connection cache between threads safely, so the pool is it. */
#define POOL_MAX 64
#define TEXT_MAX 2048 /* client-go's maxUnstructuredResponseTextBytes */

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static CURL *pool[POOL_MAX];        /* idle handles; under pool_lock */
static size_t npool;                /* under pool_lock */
static CURLSH *share;               /* lazily made; under pool_lock */
static pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];

/* ---- process-wide state ---- */

static void global_init(void)
{
	for (size_t i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&share_locks[i], NULL);
	/* A no-op (but counted) when the program initialised curl first. */
	if (curl_global_init_mem(CURL_GLOBAL_DEFAULT, xmalloc, free, xrealloc,
				 xstrdup, xcalloc) != CURLE_OK)
		BUG("curl_global_init failed");
}

static void share_lock(CURL *h, curl_lock_data data,
		       curl_lock_access access, void *ud)
{
	(void)h;
	(void)access;
	(void)ud;
	pthread_mutex_lock(&share_locks[data]);
}

static void share_unlock(CURL *h, curl_lock_data data, void *ud)
{
	(void)h;
	(void)ud;
	pthread_mutex_unlock(&share_locks[data]);
}

/* An idle handle (reset) or a new one, and the share to attach. */
static CURL *handle_take(CURLSH **sh)
{
	CURL *h = NULL;

	pthread_once(&global_once, global_init);
	pthread_mutex_lock(&pool_lock);
	if (!share) {
		share = curl_share_init();
		if (!share)
			BUG("curl_share_init failed");
		curl_share_setopt(share, CURLSHOPT_LOCKFUNC, share_lock);
		curl_share_setopt(share, CURLSHOPT_UNLOCKFUNC, share_unlock);
		curl_share_setopt(share, CURLSHOPT_SHARE,
				  CURL_LOCK_DATA_SSL_SESSION);
	}
	*sh = share;
	if (npool)
		h = pool[--npool];
	pthread_mutex_unlock(&pool_lock);
	if (!h)
		h = curl_easy_init();
	if (!h)
		BUG("curl_easy_init failed");
	return h;
}

static void handle_give(CURL *h)
{
	/* Options go; the connection and DNS caches stay for reuse. */
	curl_easy_reset(h);
	pthread_mutex_lock(&pool_lock);
	if (npool < POOL_MAX) {
		pool[npool++] = h;
		h = NULL;
	}
	pthread_mutex_unlock(&pool_lock);
	curl_easy_cleanup(h);
}

void webhook_client_cleanup(void)
{
	pthread_mutex_lock(&pool_lock);
	while (npool)
		curl_easy_cleanup(pool[--npool]);
	if (share)
		curl_share_cleanup(share);
	share = NULL;
	pthread_mutex_unlock(&pool_lock);
}

/* ---- small helpers ---- */

void webhook_client_uuid(char out[37])
{
	unsigned char b[16];

	if (RAND_bytes(b, sizeof(b)) != 1)
		BUG("RAND_bytes failed");
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2], b[3], b[4],
		 b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

unsigned char *webhook_client_base64_decode(const char *s, size_t *n,
					    struct err *err)
{
	size_t bad = 0;
	unsigned char *out = b64_decode(s, strlen(s), B64_SKIP_NL, n, &bad);

	if (!out)
		err_set(err, "illegal base64 data at input byte %zu", bad);
	return out;
}

/* ---- the target ---- */

/* Endpoints of one Service tried by one call, at most. */
#define MAX_TRIES 32

struct target {
	char *url;          /* owned; what Go prints: the service port */
	/* where to dial, in the order to try: for a service, one entry per
	 * endpoint (api_service_endpoints' rotation); for a url, one */
	char *connect_to[MAX_TRIES]; /* owned CURLOPT_CONNECT_TO entries,
					or NULL (a url: dial its host) */
	char *dial[MAX_TRIES];       /* owned "host:port" dialled (for
					messages) */
	size_t ntries;      /* >= 1 once made */
	char *host;         /* owned; the URL host (name checks) */
	unsigned char *ca;  /* owned PEM, or NULL: system roots */
	size_t nca;
};

static void target_release(struct target *t)
{
	free(t->url);
	for (size_t i = 0; i < t->ntries; i++) {
		free(t->connect_to[i]);
		free(t->dial[i]);
	}
	free(t->host);
	free(t->ca);
	memset(t, 0, sizeof(*t));
}

/* host and port of an https URL (for messages). */
static void url_host_port(const char *url, char **host, char **dial)
{
	const char *p = strstr(url, "://"), *end, *colon;
	size_t hl;

	p = p ? p + 3 : url;
	end = p + strcspn(p, "/?#");
	if (*p == '[') {
		const char *rb = memchr(p, ']', (size_t)(end - p));

		colon = rb && rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		colon = memchr(p, ':', (size_t)(end - p));
	}
	hl = (size_t)((colon ? colon : end) - p);
	*host = xstrndup(p, hl);
	if (colon)
		*dial = xstrndup(p, (size_t)(end - p));
	else
		*dial = xasprintf("%s:443", *host);
}

/*
 * Resolves clientConfig into t. Returns 0; -1 + err + *fail: a client
 * error (bad config), or a call error for a service without endpoint
 * (the real dialer fails there, after the URL is known).
 */
static int target_make(struct api *api, const json_t *cc, int timeout_s,
		       const char *raw_path, struct target *t,
		       enum webhook_fail *fail, struct err *err)
{
	const char *url = json_string_value(json_object_get(cc, "url"));
	const json_t *svc = json_object_get(cc, "service");
	const char *ca = json_string_value(json_object_get(cc, "caBundle"));

	memset(t, 0, sizeof(*t));
	*fail = WEBHOOK_FAIL_CLIENT;
	if (ca && *ca) {
		struct err e2 = { "" };

		t->ca = webhook_client_base64_decode(ca, &t->nca, &e2);
		if (!t->ca) {
			err_set(err, "unable to load root certificates: %s",
				e2.msg);
			return -1;
		}
		if (!strstr((const char *)t->ca, "-----BEGIN CERTIFICATE-----")) {
			err_set(err, "unable to load root certificates: unable "
				"to parse bytes as PEM block");
			goto fail;
		}
	}
	if (url && *url) {
		t->url = xasprintf("%s%stimeout=%ds", url,
				   strchr(url, '?') ? "&" : "?", timeout_s);
		url_host_port(url, &t->host, &t->dial[0]);
		t->ntries = 1;
		return 0;
	}
	if (json_is_object(svc)) {
		const char *ns = json_string_value(json_object_get(svc,
								   "namespace"));
		const char *name = json_string_value(json_object_get(svc,
								     "name"));
		const char *path = json_string_value(json_object_get(svc,
								     "path"));
		const json_t *jp = json_object_get(svc, "port");
		long port = json_is_integer(jp) ? (long)json_integer_value(jp)
						: 443;
		const struct api_endpoint *eps[MAX_TRIES];
		size_t n;

		if (!ns || !*ns || !name || !*name) {
			err_set(err, "service namespace and name are required");
			goto fail;
		}
		t->host = xasprintf("%s.%s.svc", name, ns);
		if (raw_path)
			t->url = xasprintf("https://%s:%ld%s", t->host, port,
					   raw_path);
		else
			t->url = xasprintf("https://%s:%ld%s%s?timeout=%ds",
					   t->host, port,
					   path && *path == '/' ? "" : "/",
					   path ? path : "", timeout_s);
		n = api ? api_service_endpoints(api, ns, name, eps, MAX_TRIES)
			: 0;
		if (n == 0) {
			*fail = WEBHOOK_FAIL_CALL;
			err_set(err, "Post \"%s\": no endpoints available for "
				"service \"%s\"", t->url, name);
			goto fail;
		}
		for (size_t i = 0; i < n; i++) {
			bool v6 = strchr(eps[i]->host, ':') != NULL;

			t->connect_to[i] = xasprintf("%s:%ld:%s%s%s:%u",
						     t->host, port,
						     v6 ? "[" : "",
						     eps[i]->host,
						     v6 ? "]" : "",
						     eps[i]->port);
			t->dial[i] = xasprintf("%s%s%s:%u", v6 ? "[" : "",
					       eps[i]->host, v6 ? "]" : "",
					       eps[i]->port);
			t->ntries++;
		}
		return 0;
	}
	err_set(err, "webhook clientConfig must specify url or service");
fail:
	target_release(t);
	return -1;
}

/* ---- the transfer ---- */

/* The answer goes to a capped sbuf (STYLE P5): past the cap it is
 * released and the transfer aborted, never kept half-valid. */
static size_t on_body(char *data, size_t sz, size_t nmemb, void *ud)
{
	size_t n = sz * nmemb;

	return sbuf_add(ud, data, n) == 0 ? n : 0;
}

/* Go's wording for a failed transfer (the part after `Post "URL": `). */
static void transfer_error(CURLcode rc, const char *ebuf,
			   const struct target *t, size_t tried,
			   const struct sbuf *b, char *out, size_t n)
{
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT:
		snprintf(out, n, "context deadline exceeded");
		break;
	case CURLE_COULDNT_CONNECT:
		snprintf(out, n, "dial tcp %s: connect: connection refused",
			 t->dial[tried]);
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
		snprintf(out, n, "dial tcp: lookup %s: no such host", t->host);
		break;
	case CURLE_PEER_FAILED_VERIFICATION:
		if (strstr(ebuf, "subject name") || strstr(ebuf, "host name") ||
		    strstr(ebuf, "hostname"))
			snprintf(out, n, "tls: failed to verify certificate: "
				 "x509: certificate is not valid for %s",
				 t->host);
		else if (strstr(ebuf, "expired"))
			snprintf(out, n, "tls: failed to verify certificate: "
				 "x509: certificate has expired or is not yet "
				 "valid");
		else
			snprintf(out, n, "tls: failed to verify certificate: "
				 "x509: certificate signed by unknown "
				 "authority");
		break;
	case CURLE_SSL_CONNECT_ERROR:
		if (strstr(ebuf, "wrong version number") ||
		    strstr(ebuf, "packet length too long"))
			snprintf(out, n, "http: server gave HTTP response to "
				 "HTTPS client");
		else
			snprintf(out, n, "remote error: tls: handshake failure");
		break;
	case CURLE_GOT_NOTHING:
	case CURLE_RECV_ERROR:
	case CURLE_SEND_ERROR:
	case CURLE_PARTIAL_FILE:
		snprintf(out, n, "EOF");
		break;
	case CURLE_WRITE_ERROR:
		if (b->failed) {
			snprintf(out, n, "response body larger than %zu bytes",
				 b->max);
			break;
		}
		/* fall through */
	default:
		snprintf(out, n, "%s", *ebuf ? ebuf : curl_easy_strerror(rc));
		break;
	}
}

/*
 * client-go's NewGenericServerResponse message for a non-2xx answer whose
 * body is not a Status; msg is the text/plain body or "unknown".
 */
static void generic_response_error(long code, const char *msg,
				   struct err *err)
{
	switch (code) {
	case 409:
		err_set(err, "the server reported a conflict");
		break;
	case 404:
		err_set(err, "the server could not find the requested "
			"resource");
		break;
	case 400:
		err_set(err, "the server rejected our request for an unknown "
			"reason");
		break;
	case 401:
		err_set(err, "the server has asked for the client to provide "
			"credentials");
		break;
	case 403:
	case 415:
		err_set(err, "%s", msg);
		break;
	case 406:
		err_set(err, "%s", !*msg || !strcmp(msg, "unknown")
			? "the server was unable to respond with a content "
			  "type that the client supports" : msg);
		break;
	case 405:
		err_set(err, "the server does not allow this method on the "
			"requested resource");
		break;
	case 422:
		err_set(err, "the server rejected our request due to an error "
			"in our request");
		break;
	case 503:
		err_set(err, "the server is currently unable to handle the "
			"request");
		break;
	case 504:
		err_set(err, "the server was unable to return a response in "
			"the time allotted, but may still be processing the "
			"request");
		break;
	case 429:
		err_set(err, "the server has received too many requests and "
			"has asked us to try again later");
		break;
	default:
		if (code >= 500)
			err_set(err, "an error on the server (\"%s\") has "
				"prevented the request from succeeding", msg);
		else
			err_set(err, "the server responded with the status "
				"code %ld but did not return more information",
				code);
		break;
	}
}

static bool is_json_ctype(const char *ct)
{
	size_t n = strcspn(ct, ";");

	while (n && isspace((unsigned char)ct[n - 1]))
		n--;
	return (n == 16 && !strncasecmp(ct, "application/json", n));
}

/* The answer of a finished transfer: the decoded body, or NULL + err. */
static json_t *decode_answer(long code, const char *ctype, struct sbuf *b,
			     struct webhook_call *c, struct err *err)
{
	json_error_t je;
	json_t *j;

	c->fail = WEBHOOK_FAIL_CALL;
	if (code < 200 || code > 206) {
		char text[TEXT_MAX + 1];
		const char *msg = "unknown";

		if (b->buf && is_json_ctype(ctype)) {
			j = json_loadb(b->buf, b->len, 0, NULL);
			if (json_is_object(j) &&
			    !strcmp(json_string_value(json_object_get(j,
				"kind")) ? json_string_value(json_object_get(
				j, "kind")) : "", "Status") &&
			    !strcmp(json_string_value(json_object_get(j,
				"status")) ? json_string_value(json_object_get(
				j, "status")) : "", "Failure")) {
				const char *m = json_string_value(
					json_object_get(j, "message"));

				err_set(err, "%s", m ? m : "");
				json_decref(j);
				return NULL;
			}
			json_decref(j);
		}
		if (!strncasecmp(ctype, "text/plain", 10)) {
			size_t n = b->len < TEXT_MAX ? b->len : TEXT_MAX;
			size_t s = 0;

			while (s < n && isspace((unsigned char)b->buf[s]))
				s++;
			while (n > s && isspace((unsigned char)b->buf[n - 1]))
				n--;
			memcpy(text, b->buf ? b->buf + s : "", n - s);
			text[n - s] = '\0';
			msg = text;
		}
		generic_response_error(code, msg, err);
		return NULL;
	}
	if (!b->len) {
		err_set(err, "0-length response with status code: %ld and "
			"content type: %s", code, ctype);
		return NULL;
	}
	j = json_loadb(b->buf, b->len, JSON_DECODE_ANY, &je);
	if (!j) {
		err_set(err, "couldn't get version/kind; json parse error: %s",
			je.text);
		return NULL;
	}
	if (!json_is_object(j)) {
		err_set(err, "couldn't get version/kind; json parse error: "
			"json: cannot unmarshal %s into Go value of type "
			"struct { APIVersion string \"json:\\\"apiVersion,"
			"omitempty\\\"\"; Kind string \"json:\\\"kind,"
			"omitempty\\\"\" }", json_is_array(j) ? "array"
			: json_is_string(j) ? "string" : json_is_number(j)
			? "number" : json_is_boolean(j) ? "bool" : "null");
		json_decref(j);
		return NULL;
	}
	c->fail = WEBHOOK_OK;
	return j;
}

/* What both calls set on a handle: the target, TLS 1.2+ verified
 * against t's CA (system roots without one) unless insecure, the time
 * limit, the headers, the capped body and the error buffer. */
static void handle_setup(CURL *h, CURLSH *sh, const struct target *t,
			 bool insecure, int timeout_s,
			 struct curl_slist *hdrs, struct sbuf *b, char *ebuf)
{
	curl_easy_setopt(h, CURLOPT_SHARE, sh);
	curl_easy_setopt(h, CURLOPT_URL, t->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, insecure ? 0L : 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, insecure ? 0L : 2L);
	if (t->ca && !insecure) {
		struct curl_blob blob = { t->ca, t->nca, CURL_BLOB_COPY };

		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)timeout_s * 1000L);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, b);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, ebuf);
}

/*
 * Performs the request at the endpoints of a service in
 * api_service_endpoints' order; one that refuses the connection (a
 * replica that died) is skipped, as a Service stops routing to a pod
 * that is not ready. Nothing was sent to it, so the next one gets the
 * same request. Any other failure ends the call: the server may have
 * seen the request. *tried: the index of the last endpoint tried.
 */
static CURLcode perform_at_endpoints(CURL *h, const struct target *t,
				     char *ebuf, size_t *tried)
{
	struct curl_slist *cto = NULL;
	CURLcode rc;

	for (size_t i = 0;; i++) {
		curl_slist_free_all(cto);
		cto = NULL;
		if (t->connect_to[i])
			cto = curl_slist_append(NULL, t->connect_to[i]);
		curl_easy_setopt(h, CURLOPT_CONNECT_TO, cto);
		ebuf[0] = '\0';
		rc = curl_easy_perform(h);
		if (rc != CURLE_COULDNT_CONNECT || i + 1 >= t->ntries) {
			*tried = i;
			break;
		}
	}
	curl_easy_setopt(h, CURLOPT_CONNECT_TO, NULL);
	curl_slist_free_all(cto);
	return rc;
}

json_t *webhook_client_post(struct api *api, struct webhook_call *c,
			    const json_t *body, struct err *err)
{
	struct target t;
	struct sbuf b = { .max = WEBHOOK_MAX_RESPONSE };
	struct curl_slist *hdrs = NULL;
	char ebuf[CURL_ERROR_SIZE] = "", why[600];
	char *payload = NULL, *ct = NULL;
	json_t *res = NULL;
	CURLSH *sh;
	CURLcode rc;
	CURL *h;
	long code = 0;
	size_t tried = 0;

	c->fail = WEBHOOK_OK;
	if (target_make(api, c->client_config, c->timeout_s, NULL, &t,
			&c->fail, err) < 0)
		return NULL;
	if (c->inject_timeout) {
		/* --fault-webhook-timeout: what the caller would see once
		 * timeoutSeconds elapsed, without the wait */
		c->fail = WEBHOOK_FAIL_CALL;
		err_set(err, "Post \"%s\": context deadline exceeded", t.url);
		target_release(&t);
		return NULL;
	}
	if (strncmp(t.url, "https://", 8)) {
		const char *colon = strstr(t.url, "://");

		c->fail = WEBHOOK_FAIL_CALL;
		err_set(err, "Post \"%s\": unsupported protocol scheme \"%.*s\"",
			t.url, colon ? (int)(colon - t.url) : 0, t.url);
		target_release(&t);
		return NULL;
	}
	/* jsonw: managedFields reach webhooks as the objects they are */
	payload = jsonw_dumps(body, NULL);
	h = handle_take(&sh);
	hdrs = curl_slist_append(hdrs, "Content-Type: application/json");
	hdrs = curl_slist_append(hdrs, "Accept: application/json, */*");
	hdrs = curl_slist_append(hdrs, "User-Agent: kube-apiserver-admission");
	hdrs = curl_slist_append(hdrs, "Expect:");
	handle_setup(h, sh, &t, false, c->timeout_s, hdrs, &b, ebuf);
	curl_easy_setopt(h, CURLOPT_POST, 1L);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, payload);
	curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
			 (curl_off_t)strlen(payload));
	rc = perform_at_endpoints(h, &t, ebuf, &tried);
	if (rc != CURLE_OK) {
		transfer_error(rc, ebuf, &t, tried, &b, why, sizeof(why));
		c->fail = WEBHOOK_FAIL_CALL;
		err_set(err, "Post \"%s\": %s", t.url, why);
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	res = decode_answer(code, ct && *ct ? ct : "application/json", &b, c,
			    err);
out:
	handle_give(h);
	curl_slist_free_all(hdrs);
	free(payload);
	sbuf_release(&b);
	target_release(&t);
	return res;
}

int webhook_client_proxy_get(struct api *api, const json_t *client_config,
			     bool insecure, const char *path_query,
			     int timeout_s, struct webhook_proxy_answer *out,
			     struct err *err)
{
	struct target t;
	struct curl_slist *hdrs = NULL;
	char ebuf[CURL_ERROR_SIZE] = "", why[600];
	enum webhook_fail fail = WEBHOOK_OK;
	char *ct = NULL;
	CURLSH *sh;
	CURLcode rc;
	CURL *h;
	size_t tried = 0;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	out->body.max = WEBHOOK_MAX_RESPONSE;
	if (target_make(api, client_config, timeout_s, path_query, &t, &fail,
			err) < 0)
		return -1;
	h = handle_take(&sh);
	hdrs = curl_slist_append(hdrs, "Accept: application/json, */*");
	hdrs = curl_slist_append(hdrs, "User-Agent: kube-apiserver-proxy");
	handle_setup(h, sh, &t, insecure, timeout_s, hdrs, &out->body, ebuf);
	curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
	rc = perform_at_endpoints(h, &t, ebuf, &tried);
	if (rc != CURLE_OK) {
		transfer_error(rc, ebuf, &t, tried, &out->body, why,
			       sizeof(why));
		err_set(err, "Get \"%s\": %s", t.url, why);
		sbuf_release(&out->body);
		goto out;
	}
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &out->code);
	curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct);
	out->ctype = xstrdup(ct && *ct ? ct : "application/json");
	ret = 0;
out:
	handle_give(h);
	curl_slist_free_all(hdrs);
	target_release(&t);
	return ret;
}
