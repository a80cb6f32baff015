/*
 * Suite "webhook": the webhook server over HTTPS (webhook/webhook.h,
 * server.h): a real TLS listener on a free loopback port with a
 * generated certificate, called with libcurl verifying against the
 * generated CA under the Service's DNS name. HTTP errors (404, 405, 415,
 * 413 declared and chunked, malformed reviews), the TLS floor (1.1
 * refused, 1.2 and 1.3 served, 1.3-only mode), certificate rotation on
 * the same port (a kept-alive connection is answered on with
 * "Connection: close", then the client reconnects to the new
 * certificate, and the retired daemon is stopped), the published
 * namespace snapshot (also swapped while requests run), and an in-process devserver whose webhook
 * configurations point at the server: Jobs are suspended and defaulted,
 * bad ones denied with Kueue's text, ClusterQueues get their finalizer
 * and are converted through /convert. The observe hook (server.h) sees
 * each routed request once, with its path, code and latency.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "base/jx.h"
#include "config/config.h"
#include "config/yamljson.h"
#include "devserver/api.h"
#include "devserver/status.h"
#include "suites.h"
#include "test/support/support.h"
#include "webhook/certs.h"
#include "webhook/webhook.h"

#define SVC "kueue-webhook-service"
#define NS "kueue-system"
#define HOST SVC "." NS ".svc"
#define QL "kueue.x-k8s.io/queue-name"

static struct {
	struct certs c;      /* the serving material */
	struct webhook *wh;
	unsigned port;
} W;

/* What the observe hook saw (server threads write, the test reads after
 * its request returned; the lock orders the two). */
static struct {
	pthread_mutex_t lock;
	unsigned n;
	char path[64];
	unsigned code;
	double seconds;
	bool bad_ud;      /* the hook got another observe_ud */
} OBS = { PTHREAD_MUTEX_INITIALIZER, 0, "", 0, 0, false };

static void on_observe(void *ud, const char *path, unsigned code,
		       double seconds)
{
	pthread_mutex_lock(&OBS.lock);
	OBS.bad_ud |= ud != &OBS;
	OBS.n++;
	snprintf(OBS.path, sizeof(OBS.path), "%s", path);
	OBS.code = code;
	OBS.seconds = seconds;
	pthread_mutex_unlock(&OBS.lock);
}

static void make_certs(struct certs *c, enum certs_key_type t)
{
	struct certs_opts o = { .service = SVC, .namespace = NS,
				.key_type = t, .now_s = (int64_t)time(NULL) };
	struct err err = { "" };

	ck_assert_msg(certs_generate(&o, c, &err) == 0, "%s", err.msg);
}

static const char *start_prio; /* priorities for the next start */

static void start_with(bool tls13)
{
	struct webhook_opts o;
	struct err err = { "" };

	memset(&W, 0, sizeof(W));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	make_certs(&W.c, CERTS_EC_P256);
	webhook_opts_init(&o);
	o.addr = "127.0.0.1";
	o.port = 0;
	o.cert_pem = W.c.cert_pem;
	o.key_pem = W.c.key_pem;
	o.min_tls13 = tls13;
	if (start_prio)
		o.priorities = xstrdup(start_prio);
	o.observe = on_observe;
	o.observe_ud = &OBS;
	pthread_mutex_lock(&OBS.lock);
	OBS.n = 0;
	pthread_mutex_unlock(&OBS.lock);
	W.wh = webhook_new(&o, &err);
	webhook_opts_release(&o);
	ck_assert_msg(W.wh != NULL, "webhook_new: %s", err.msg);
	W.port = webhook_port(W.wh);
	ck_assert_uint_gt(W.port, 0);
}

static void start(void)
{
	start_with(false);
}

static void start13(void)
{
	start_with(true);
}

/* The Configuration's tls section: one TLS 1.2 suite (ECDHE-ECDSA with
 * AES-256-GCM, the test certificate is EC) and one group (P-384). */
static void start_cfg(void)
{
	static const char yaml[] =
		"apiVersion: config.kueue.x-k8s.io/v1beta2\n"
		"kind: Configuration\n"
		"tls:\n  cipherSuites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n"
		"  curvePreferences: [24]\n";
	static char prio[512];
	struct config c;
	struct config_opts co = { .namespace_file = "" };
	struct err err = { "" };
	char *p;

	ck_assert_msg(config_load_string(yaml, strlen(yaml), &co, &c, &err) ==
		      0, "%s", err.msg);
	p = config_tls_priorities(&c);
	snprintf(prio, sizeof(prio), "%s", p);
	free(p);
	config_release(&c);
	start_prio = prio;
	start_with(false);
	start_prio = NULL;
}

static void stop(void)
{
	webhook_free(W.wh);
	certs_release(&W.c);
	memset(&W, 0, sizeof(W));
}

/* ---- the client ---- */

struct call {
	const char *method;  /* NULL: POST */
	const char *path;
	const char *ctype;   /* NULL: application/json; "" none */
	const char *body;    /* NULL: none */
	size_t len;          /* 0: strlen(body) */
	bool chunked;        /* send without Content-Length */
	long tls;            /* CURLOPT_SSLVERSION; 0: default */
	bool weak;           /* let the client offer TLS 1.0/1.1 */
	const char *ciphers; /* CURLOPT_SSL_CIPHER_LIST (OpenSSL's names) */
	const char *curves;  /* CURLOPT_SSL_EC_CURVES */
	const char *ca;      /* NULL: W.c.ca_pem */
	const char *host;    /* NULL: HOST */
};

struct resp {
	CURLcode rc;
	long code;
	char *body;
	char *headers;
	char errbuf[CURL_ERROR_SIZE];
};

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	char **buf = ud;
	size_t old = *buf ? strlen(*buf) : 0;

	*buf = xrealloc(*buf, old + sz * n + 1);
	memcpy(*buf + old, p, sz * n);
	(*buf)[old + sz * n] = '\0';
	return sz * n;
}

struct reader {
	const char *p;
	size_t left;
};

static size_t on_read(char *buf, size_t sz, size_t n, void *ud)
{
	struct reader *r = ud;
	size_t k = sz * n < r->left ? sz * n : r->left;

	memcpy(buf, r->p, k);
	r->p += k;
	r->left -= k;
	return k;
}

static struct resp do_call(const struct call *c)
{
	CURL *h = curl_easy_init();
	struct curl_slist *hdrs = NULL, *res = NULL;
	struct curl_blob ca;
	struct resp r;
	struct reader rd;
	const char *host = c->host ? c->host : HOST;
	char *url = xasprintf("https://%s:%u%s", host, W.port, c->path);
	char *map = xasprintf("%s:%u:127.0.0.1", host, W.port);
	char *ct = NULL;

	memset(&r, 0, sizeof(r));
	ca.data = (void *)(c->ca ? c->ca : W.c.ca_pem);
	ca.len = strlen(ca.data);
	ca.flags = CURL_BLOB_COPY;
	res = curl_slist_append(res, map);
	if (!c->ctype || *c->ctype) {
		ct = xasprintf("Content-Type: %s",
			       c->ctype ? c->ctype : "application/json");
		hdrs = curl_slist_append(hdrs, ct);
	}
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_RESOLVE, res);
	curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
	curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
			 c->method ? c->method : "POST");
	if (c->body && c->chunked) {
		rd.p = c->body;
		rd.left = c->len ? c->len : strlen(c->body);
		hdrs = curl_slist_append(hdrs, "Transfer-Encoding: chunked");
		curl_easy_setopt(h, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(h, CURLOPT_READFUNCTION, on_read);
		curl_easy_setopt(h, CURLOPT_READDATA, &rd);
	} else if (c->body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, c->body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(c->len ? c->len
						     : strlen(c->body)));
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	if (c->tls)
		curl_easy_setopt(h, CURLOPT_SSLVERSION, c->tls);
	if (c->weak)
		curl_easy_setopt(h, CURLOPT_SSL_CIPHER_LIST,
				 "DEFAULT:@SECLEVEL=0");
	if (c->ciphers)
		curl_easy_setopt(h, CURLOPT_SSL_CIPHER_LIST, c->ciphers);
	if (c->curves)
		curl_easy_setopt(h, CURLOPT_SSL_EC_CURVES, c->curves);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &r.body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_data);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, &r.headers);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, r.errbuf);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);
	r.rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &r.code);
	curl_slist_free_all(hdrs);
	curl_slist_free_all(res);
	curl_easy_cleanup(h);
	free(ct);
	free(map);
	free(url);
	return r;
}

static void resp_free(struct resp *r)
{
	free(r->body);
	free(r->headers);
}

/* POSTs body to path and returns the parsed answer (new) after checking
 * the transfer worked and was answered 200. */
static json_t *post_json(const char *path, const char *body)
{
	struct call c = { .path = path, .body = body };
	struct resp r = do_call(&c);
	json_t *j;

	ck_assert_msg(r.rc == CURLE_OK, "%s: %s", path, r.errbuf);
	ck_assert_msg(r.code == 200, "%s: HTTP %ld: %s", path, r.code,
		      r.body ? r.body : "");
	j = json_loads(r.body, 0, NULL);
	ck_assert_ptr_nonnull(j);
	resp_free(&r);
	return j;
}

/* An AdmissionReview of op on obj (JSON text) with old (or NULL). */
static char *review(const char *op, const char *ns, const char *obj,
		    const char *old)
{
	json_t *r = json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:s, "
			      "s:s, s:s}}", "apiVersion", "admission.k8s.io/v1",
			      "kind", "AdmissionReview", "request", "uid",
			      "0d1e2f", "kind", "group", "batch", "version",
			      "v1", "kind", "Job", "operation", op, "namespace",
			      ns, "name", "j");
	json_t *req = json_object_get(r, "request");
	char *s;

	if (obj)
		json_object_set_new(req, "object", t_json(obj));
	if (old)
		json_object_set_new(req, "oldObject", t_json(old));
	s = json_dumps(r, JSON_COMPACT);
	json_decref(r);
	return s;
}

#define JOB(LABELS, SUSPEND)                                               \
	"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":{"     \
	"\"name\":\"j\",\"namespace\":\"team\"" LABELS "},\"spec\":{"      \
	"\"template\":{\"spec\":{\"containers\":[{\"name\":\"c\","         \
	"\"image\":\"i\"}],\"restartPolicy\":\"Never\"}}" SUSPEND "}}"

/* The decoded patch of an AdmissionReview answer, or NULL. */
static json_t *patch_of(const json_t *ans)
{
	const char *b = JX_STR(ans, "response", "patch");
	unsigned char *p;
	size_t n;
	json_t *j;

	if (!b)
		return NULL;
	ck_assert_str_eq(JX_STR(ans, "response", "patchType"), "JSONPatch");
	p = b64_decode(b, strlen(b), B64_STD, &n, NULL);
	ck_assert_ptr_nonnull(p);
	j = json_loadb((char *)p, n, 0, NULL);
	free(p);
	return j;
}

/* ---- HTTP ---- */

START_TEST(http_errors)
{
	struct resp r;
	json_t *j;

	r = do_call(&(struct call){ .path = "/nope", .body = "{}" });
	ck_assert_int_eq(r.rc, CURLE_OK);
	ck_assert_int_eq(r.code, 404);
	resp_free(&r);

	r = do_call(&(struct call){ .method = "GET",
				    .path = "/validate-batch-v1-job" });
	ck_assert_int_eq(r.code, 405);
	ck_assert_ptr_nonnull(strstr(r.headers, "Allow: POST"));
	resp_free(&r);

	r = do_call(&(struct call){ .path = "/mutate-batch-v1-job",
				    .ctype = "text/plain", .body = "{}" });
	ck_assert_int_eq(r.code, 415);
	ck_assert_str_eq(r.body, "contentType=text/plain, expected "
			 "application/json\n");
	resp_free(&r);

	/* parameters on the type are fine */
	r = do_call(&(struct call){ .path = "/mutate-batch-v1-job",
				    .ctype = "application/json; charset=utf-8",
				    .body = "{}" });
	ck_assert_int_eq(r.code, 200);
	resp_free(&r);

	/* malformed reviews: an AdmissionReview that denies, code 400 */
	j = post_json("/validate-batch-v1-job", "{this is not json");
	ck_assert(json_is_false(json_object_get(json_object_get(j,
		"response"), "allowed")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		json_object_get(j, "response"), "status"), "code")), 400);
	ck_assert_str_eq(JX_STR(j, "kind"), "AdmissionReview");
	json_decref(j);
	j = post_json("/validate-batch-v1-job", "");
	ck_assert_str_eq(JX_STR(j, "response", "status", "message"),
			 "request body is empty");
	json_decref(j);
	/* a review of the wrong kind of object */
	{
		char *body = review("CREATE", "team",
				    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}",
				    NULL);

		j = post_json("/mutate-batch-v1-job", body);
		ck_assert_str_eq(JX_STR(j, "response", "uid"), "0d1e2f");
		ck_assert_str_eq(JX_STR(j, "response", "status", "message"),
				 "expected a batch/v1 Job object, got "
				 "apiVersion \"v1\", kind \"Pod\"");
		json_decref(j);
		free(body);
	}
	/* a ConversionReview that is not one: plain 400 */
	r = do_call(&(struct call){ .path = "/convert", .body = "[]" });
	ck_assert_int_eq(r.code, 400);
	ck_assert_str_eq(r.body, "couldn't decode the ConversionReview: not a "
			 "JSON object\n");
	resp_free(&r);
}
END_TEST

START_TEST(body_limits)
{
	size_t big = (size_t)4 << 20;
	char *body = xmalloc(big + 1);
	struct resp r;
	json_t *obj, *rev;
	char *text, *pad;

	memset(body, ' ', big);
	body[big] = '\0';
	/* declared: answered from the headers */
	r = do_call(&(struct call){ .path = "/validate-batch-v1-job",
				    .body = body, .len = big });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	ck_assert_int_eq(r.code, 413);
	ck_assert_str_eq(r.body, "request body too large: limit is 3145728 "
			 "bytes\n");
	resp_free(&r);
	/* chunked: dropped as it arrives, answered at its end */
	r = do_call(&(struct call){ .path = "/validate-batch-v1-job",
				    .body = body, .len = big,
				    .chunked = true });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	ck_assert_int_eq(r.code, 413);
	resp_free(&r);
	/* just under the cap is served (four annotations, as the codec
	 * refuses strings over 1 MiB) */
	pad = xmalloc((size_t)1 << 20);
	memset(pad, 'a', (((size_t)3 << 20) - 4096) / 4);
	pad[(((size_t)3 << 20) - 4096) / 4] = '\0';
	obj = t_json(JOB(",\"labels\":{\"" QL "\":\"q\"}", ""));
	json_object_set_new(json_object_get(obj, "metadata"), "annotations",
			    json_pack("{s:s, s:s, s:s, s:s}", "a", pad, "b",
				      pad, "c", pad, "d", pad));
	text = json_dumps(obj, JSON_COMPACT);
	free(body);
	body = review("CREATE", "team", text, NULL);
	ck_assert_uint_lt(strlen(body), (size_t)3 << 20);
	ck_assert_uint_gt(strlen(body), ((size_t)3 << 20) - 8192);
	rev = post_json("/validate-batch-v1-job", body);
	ck_assert(json_is_true(json_object_get(json_object_get(rev,
		"response"), "allowed")));
	json_decref(rev);
	json_decref(obj);
	free(text);
	free(pad);
	free(body);
}
END_TEST

/* ---- admission over HTTPS ---- */

START_TEST(job_reviews)
{
	char *body = review("CREATE", "team",
			    JOB(",\"labels\":{\"" QL "\":\"q\"}", ""), NULL);
	json_t *ans = post_json("/mutate-batch-v1-job", body), *p, *want;
	const json_t *resp = json_object_get(ans, "response");

	ck_assert_str_eq(JX_STR(ans, "apiVersion"), "admission.k8s.io/v1");
	ck_assert_str_eq(JX_STR(resp, "uid"), "0d1e2f");
	ck_assert(json_is_true(json_object_get(resp, "allowed")));
	p = patch_of(ans);
	want = t_json("[{\"op\":\"add\",\"path\":\"/spec/suspend\","
		      "\"value\":true}]");
	ck_assert(json_equal(p, want));
	json_decref(p);
	json_decref(want);
	json_decref(ans);
	free(body);

	body = review("UPDATE", "team",
		      JOB(",\"labels\":{\"" QL "\":\"b\"}", ",\"suspend\":false"),
		      JOB(",\"labels\":{\"" QL "\":\"a\"}",
			  ",\"suspend\":false"));
	ans = post_json("/validate-batch-v1-job", body);
	resp = json_object_get(ans, "response");
	ck_assert(json_is_false(json_object_get(resp, "allowed")));
	ck_assert_str_eq(JX_STR(resp, "status", "reason"), "Forbidden");
	ck_assert_int_eq(json_integer_value(json_object_get(
		json_object_get(resp, "status"), "code")), 403);
	ck_assert_str_eq(JX_STR(resp, "status", "message"),
			 "metadata.labels[" QL "]: Invalid value: \"b\": field "
			 "is immutable");
	ck_assert_ptr_null(json_object_get(resp, "patch"));
	json_decref(ans);
	free(body);
}
END_TEST

/* The observe hook: once per routed request answered after its body,
 * with the route's path, the status and a sane latency; never for the
 * early 404/405/415 answers. */
START_TEST(observe_hook)
{
	char *body = review("CREATE", "team",
			    JOB(",\"labels\":{\"" QL "\":\"q\"}", ""), NULL);
	json_t *ans = post_json("/validate-batch-v1-job", body);
	struct resp r;
	unsigned n;

	json_decref(ans);
	free(body);
	/* the hook runs after the response is queued: wait for it */
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&OBS.lock);
		n = OBS.n;
		pthread_mutex_unlock(&OBS.lock);
		if (n)
			break;
		usleep(10000);
	}
	pthread_mutex_lock(&OBS.lock);
	ck_assert_uint_eq(OBS.n, 1);
	ck_assert(!OBS.bad_ud);
	ck_assert_str_eq(OBS.path, "/validate-batch-v1-job");
	ck_assert_uint_eq(OBS.code, 200);
	ck_assert(OBS.seconds >= 0 && OBS.seconds < 5);
	pthread_mutex_unlock(&OBS.lock);

	r = do_call(&(struct call){ .path = "/nope", .body = "{}" });
	ck_assert_int_eq(r.code, 404);
	resp_free(&r);
	r = do_call(&(struct call){ .method = "GET",
				    .path = "/validate-batch-v1-job" });
	ck_assert_int_eq(r.code, 405);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/convert", .body = "{" });
	ck_assert_int_eq(r.code, 400);
	resp_free(&r);
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&OBS.lock);
		n = OBS.n;
		pthread_mutex_unlock(&OBS.lock);
		if (n >= 2)
			break;
		usleep(10000);
	}
	pthread_mutex_lock(&OBS.lock);
	ck_assert_uint_eq(OBS.n, 2);
	ck_assert_str_eq(OBS.path, "/convert");
	ck_assert_uint_eq(OBS.code, 400);
	pthread_mutex_unlock(&OBS.lock);
}
END_TEST

START_TEST(paths_table)
{
	size_t n;
	const struct webhook_path *p = webhook_paths(&n);
	size_t kueue = 0;

	ck_assert_uint_eq(n, 21);
	for (size_t i = 0; i < n; i++) {
		/* every path is served: a GET gets 405, not 404 */
		struct resp r = do_call(&(struct call){ .method = "GET",
							.path = p[i].path });

		ck_assert_msg(r.code == 405, "%s: %ld", p[i].path, r.code);
		resp_free(&r);
		kueue += p[i].kueue_has_it;
	}
	ck_assert_str_eq(p[0].path, "/mutate-batch-v1-job");
	ck_assert_str_eq(p[0].name, "mjob.kb.io");
	ck_assert_str_eq(p[n - 1].path, "/convert");
	ck_assert_uint_eq(kueue, 17);
}
END_TEST


/* Plain HTTP and a half-open handshake on the TLS port: refused, and the
 * server goes on serving. */
START_TEST(not_tls)
{
	CURL *h = curl_easy_init();
	char *url = xasprintf("http://127.0.0.1:%u/convert", W.port);
	struct resp r;
	int fd;
	struct sockaddr_in a;

	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{}");
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 10L);
	ck_assert_int_ne(curl_easy_perform(h), CURLE_OK);
	curl_easy_cleanup(h);
	free(url);
	/* a client that connects, says half a hello and stalls: it holds a
	 * socket, not a thread, so others are served meanwhile */
	fd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_port = htons((uint16_t)W.port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(write(fd, "\x16\x03\x01\x02\x00\x01", 6), 6);
	for (int i = 0; i < 3; i++) {
		r = do_call(&(struct call){ .path = "/nope", .body = "{}" });
		ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
		ck_assert_int_eq(r.code, 404);
		resp_free(&r);
	}
	close(fd);
}
END_TEST

START_TEST(opts_from_config)
{
	static const char yaml[] =
		"apiVersion: config.kueue.x-k8s.io/v1beta2\n"
		"kind: Configuration\n"
		"webhook:\n  port: 9555\n  host: 127.0.0.1\n"
		"tls:\n  minVersion: VersionTLS13\n";
	struct config c;
	struct config_opts co = { .namespace_file = "" };
	struct webhook_opts o;
	struct err err = { "" };

	ck_assert_msg(config_load_string(yaml, strlen(yaml), &co, &c, &err) ==
		      0, "%s", err.msg);
	webhook_opts_from_config(&o, &c);
	ck_assert_uint_eq(o.port, 9555);
	ck_assert_str_eq(o.addr, "127.0.0.1");
	ck_assert(o.min_tls13);
	/* v1beta2: defaulting only in managed namespaces, as at HEAD */
	ck_assert(o.policy.lq_defaulting_needs_managed_ns);
	ck_assert(o.policy.wpc_defaulting);
	ck_assert(o.policy.has_ns_selector);
	webhook_opts_release(&o);
	config_release(&c);
	webhook_opts_init(&o);
	ck_assert_uint_eq(o.port, 9443);
	ck_assert_ptr_null(o.addr);
	ck_assert(!o.min_tls13);
	ck_assert(!o.policy.lq_defaulting_needs_managed_ns);
	webhook_opts_release(&o);
}
END_TEST

/* ---- TLS ---- */

START_TEST(tls_versions)
{
	struct resp r;

	/* a client that offers TLS 1.1 and up gets 1.2 or 1.3 ... */
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_1,
				    .weak = true });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	resp_free(&r);
	/* ... and one that offers nothing newer is refused by the server
	 * (GnuTLS ends the handshake; the client did send its hello) */
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_1 |
					   CURL_SSLVERSION_MAX_TLSv1_1,
				    .weak = true });
	ck_assert_int_eq(r.rc, CURLE_SSL_CONNECT_ERROR);
	ck_assert_msg(!strstr(r.errbuf, "no protocols available"), "%s",
		      r.errbuf);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_0 |
					   CURL_SSLVERSION_MAX_TLSv1_0,
				    .weak = true });
	ck_assert_int_ne(r.rc, CURLE_OK);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_2 |
					   CURL_SSLVERSION_MAX_TLSv1_2 });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	ck_assert_int_eq(r.code, 404);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_3 });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	resp_free(&r);
}
END_TEST

START_TEST(tls13_only)
{
	struct resp r;

	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_2 |
					   CURL_SSLVERSION_MAX_TLSv1_2 });
	ck_assert_int_eq(r.rc, CURLE_SSL_CONNECT_ERROR);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_3 });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	resp_free(&r);
}
END_TEST

/* tls.cipherSuites and tls.curvePreferences (config_tls.c): a TLS 1.2
 * client gets the listed suite and not an unlisted one; TLS 1.3 keeps its
 * own suites; only the listed group is offered, at both versions (a
 * TLS 1.2 client also names P-256, the certificate's curve). */
START_TEST(tls_config)
{
	static const long v12 = CURL_SSLVERSION_TLSv1_2 |
				CURL_SSLVERSION_MAX_TLSv1_2;
	struct resp r;

	r = do_call(&(struct call){ .path = "/nope", .body = "{}", .tls = v12,
				    .ciphers = "ECDHE-ECDSA-AES256-GCM-SHA384",
				    .curves = "P-384:P-256" });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	ck_assert_int_eq(r.code, 404);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}", .tls = v12,
				    .ciphers = "ECDHE-ECDSA-AES128-SHA",
				    .curves = "P-384:P-256" });
	ck_assert_int_eq(r.rc, CURLE_SSL_CONNECT_ERROR);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}", .tls = v12,
				    .ciphers = "ECDHE-ECDSA-AES256-GCM-SHA384",
				    .curves = "X25519:P-256" });
	ck_assert_int_eq(r.rc, CURLE_SSL_CONNECT_ERROR);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_3,
				    .curves = "P-384" });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .tls = CURL_SSLVERSION_TLSv1_3,
				    .curves = "X25519" });
	ck_assert_int_eq(r.rc, CURLE_SSL_CONNECT_ERROR);
	resp_free(&r);
}
END_TEST

START_TEST(tls_verification)
{
	struct certs other = CERTS_INIT;
	struct resp r;

	make_certs(&other, CERTS_EC_P256);
	/* another CA */
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .ca = other.ca_pem });
	ck_assert_int_eq(r.rc, CURLE_PEER_FAILED_VERIFICATION);
	resp_free(&r);
	/* a name the certificate does not hold */
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .host = "elsewhere.example.com" });
	ck_assert_int_eq(r.rc, CURLE_PEER_FAILED_VERIFICATION);
	resp_free(&r);
	/* the short Service names are in it */
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .host = SVC "." NS });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	resp_free(&r);
	certs_release(&other);
}
END_TEST

START_TEST(rotation)
{
	struct certs neu = CERTS_INIT;
	struct err err = { "" };
	struct resp r;
	unsigned port = W.port;

	make_certs(&neu, CERTS_RSA_2048);
	ck_assert_int_eq(webhook_set_certificate(W.wh, "junk", neu.key_pem,
						 &err), -1);
	ck_assert_str_eq(err.msg, "webhook: the new certificate or key is "
			 "unusable (not PEM, or they do not match)");
	ck_assert_int_eq(webhook_set_certificate(W.wh, neu.cert_pem,
						 W.c.key_pem, &err), -1);
	/* still serving the old one */
	r = do_call(&(struct call){ .path = "/nope", .body = "{}" });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	resp_free(&r);
	ck_assert_msg(webhook_set_certificate(W.wh, neu.cert_pem, neu.key_pem,
					      &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(webhook_port(W.wh), port);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}",
				    .ca = neu.ca_pem });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	ck_assert_int_eq(r.code, 404);
	resp_free(&r);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}" });
	ck_assert_int_eq(r.rc, CURLE_PEER_FAILED_VERIFICATION);
	resp_free(&r);
	/* and again, back to an EC certificate */
	ck_assert_int_eq(webhook_set_certificate(W.wh, W.c.cert_pem,
						 W.c.key_pem, &err), 0);
	r = do_call(&(struct call){ .path = "/nope", .body = "{}" });
	ck_assert_msg(r.rc == CURLE_OK, "%s", r.errbuf);
	resp_free(&r);
	certs_release(&neu);
}
END_TEST

/* One request on a kept handle: its code, whether it opened a
 * connection, whether the answer said Connection: close. */
struct kept {
	long code;
	long connects;
	bool close;
};

static size_t kept_header(char *p, size_t sz, size_t n, void *ud)
{
	static const char want[] = "connection: close";
	bool *close = ud;

	if (sz * n >= sizeof(want) - 1 &&
	    !strncasecmp(p, want, sizeof(want) - 1))
		*close = true;
	return sz * n;
}

static size_t kept_body(char *p, size_t sz, size_t n, void *ud)
{
	(void)p;
	(void)ud;
	return sz * n;
}

static struct kept kept_call(CURL *h)
{
	struct kept k = { 0, 0, false };

	curl_easy_setopt(h, CURLOPT_HEADERDATA, &k.close);
	ck_assert_int_eq(curl_easy_perform(h), CURLE_OK);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &k.code);
	curl_easy_getinfo(h, CURLINFO_NUM_CONNECTS, &k.connects);
	return k;
}

/* A rotation with a client holding a kept-alive connection (to a route
 * that reads the body: an early answer such as a 404 closes the
 * connection anyway): its next
 * request is answered (by the old daemon, on the old connection) and
 * told to close; the one after it connects again and meets the new
 * certificate; the old daemon, its connection gone, is stopped. */
START_TEST(rotation_keepalive)
{
	struct certs neu = CERTS_INIT;
	struct certs_opts co = { .service = SVC, .namespace = NS,
				 .key_type = CERTS_EC_P256,
				 .now_s = (int64_t)time(NULL) };
	struct err err = { "" };
	CURL *h = curl_easy_init();
	struct curl_slist *hdrs = curl_slist_append(
		NULL, "Content-Type: application/json");
	char *url = xasprintf("https://%s:%u/validate-batch-v1-job", HOST,
			      W.port);
	char *map = xasprintf("%s:%u:127.0.0.1", HOST, W.port);
	struct curl_slist *res = curl_slist_append(NULL, map);
	struct curl_blob ca = { W.c.ca_pem, strlen(W.c.ca_pem),
				CURL_BLOB_COPY };
	struct curl_certinfo *ci = NULL;
	struct kept k;
	bool saw_new = false;

	/* the same CA, a new serving certificate */
	neu.ca_pem = xstrdup(W.c.ca_pem);
	neu.ca_key_pem = xstrdup(W.c.ca_key_pem);
	ck_assert_int_eq(certs_renew_serving(&co, &neu, &err), 0);
	curl_easy_setopt(h, CURLOPT_URL, url);
	curl_easy_setopt(h, CURLOPT_RESOLVE, res);
	curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(h, CURLOPT_POSTFIELDS, "{}");
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, kept_header);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, kept_body);
	curl_easy_setopt(h, CURLOPT_CERTINFO, 1L);
	curl_easy_setopt(h, CURLOPT_TIMEOUT, 20L);

	k = kept_call(h);
	ck_assert_int_eq(k.code, 200);
	ck_assert_int_eq(k.connects, 1);
	ck_assert(!k.close);
	k = kept_call(h);
	ck_assert_int_eq(k.connects, 0); /* kept alive */

	ck_assert_msg(webhook_set_certificate(W.wh, neu.cert_pem, neu.key_pem,
					      &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(webhook_retired(W.wh), 1);
	/* answered on the old connection, told to close it */
	k = kept_call(h);
	ck_assert_int_eq(k.code, 200);
	ck_assert_int_eq(k.connects, 0);
	ck_assert(k.close);
	/* a new connection, the new certificate */
	k = kept_call(h);
	ck_assert_int_eq(k.code, 200);
	ck_assert_int_eq(k.connects, 1);
	ck_assert(!k.close);
	ck_assert_int_eq(curl_easy_getinfo(h, CURLINFO_CERTINFO, &ci),
			 CURLE_OK);
	ck_assert_int_ge(ci->num_of_certs, 1);
	for (struct curl_slist *l = ci->certinfo[0]; l; l = l->next)
		if (!strncmp(l->data, "Cert:", 5))
			saw_new = !strcmp(l->data + 5, neu.cert_pem);
	ck_assert(saw_new);
	/* the old daemon has no connection left: it is stopped */
	T_POLL_UNTIL(webhook_retired(W.wh) == 0, 10000);
	curl_slist_free_all(hdrs);
	curl_slist_free_all(res);
	curl_easy_cleanup(h);
	free(url);
	free(map);
	certs_release(&neu);
}
END_TEST

/* ---- the snapshot ---- */

static struct nsview *team_view(bool with_default)
{
	struct nsview *v = nsview_new();
	struct smap l = SMAP_INIT;

	smap_set(&l, "kubernetes.io/metadata.name", "team");
	nsview_set_labels(v, "team", &l);
	if (with_default)
		nsview_set_default_lq(v, "team");
	smap_release(&l);
	return v;
}

/* Does a mutation of an unlabelled Job in team add the queue label? */
static bool defaults_queue(void)
{
	char *body = review("CREATE", "team", JOB("", ""), NULL);
	json_t *ans = post_json("/mutate-batch-v1-job", body);
	json_t *p = patch_of(ans);
	bool labelled = p && json_array_size(p) == 2;

	json_decref(p);
	json_decref(ans);
	free(body);
	return labelled;
}

START_TEST(snapshot_publish)
{
	ck_assert(!webhook_has_snapshot(W.wh));
	ck_assert(!defaults_queue());
	webhook_publish_snapshot(W.wh, team_view(true));
	ck_assert(webhook_has_snapshot(W.wh));
	ck_assert(defaults_queue());
	webhook_publish_snapshot(W.wh, team_view(false));
	ck_assert(!defaults_queue());
}
END_TEST

struct hammer {
	int n;
	int errors;
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;
	char *body = review("CREATE", "team", JOB("", ""), NULL);

	for (int i = 0; i < h->n; i++) {
		struct resp r = do_call(&(struct call){
			.path = "/mutate-batch-v1-job", .body = body });

		if (r.rc != CURLE_OK || r.code != 200 ||
		    !strstr(r.body, "\"allowed\":true"))
			h->errors++;
		resp_free(&r);
	}
	free(body);
	return NULL;
}

/* Requests on 3 client threads while the snapshot is swapped 200 times
 * (run under ASan/TSan to see the slot's discipline). */
START_TEST(snapshot_swaps_under_load)
{
	pthread_t t[3];
	struct hammer h[3];

	for (int i = 0; i < 3; i++) {
		h[i].n = 15;
		h[i].errors = 0;
		ck_assert_int_eq(pthread_create(&t[i], NULL, hammer_main,
						&h[i]), 0);
	}
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 1000000 };

		webhook_publish_snapshot(W.wh, team_view(i % 2 == 0));
		nanosleep(&ts, NULL);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(h[i].errors, 0);
	}
}
END_TEST

/* ---- an in-process devserver calling the webhooks ---- */

static struct api *g_api;

static void ds_start(void)
{
	struct api_endpoint ep = { NS, SVC, "127.0.0.1", 0 };
	struct api_opts ao = { .watch_history = 100, .endpoints = &ep,
			       .nendpoints = 1 };
	struct err err = { "" };

	start();
	ep.port = W.port;
	g_api = api_new(&ao, &err);
	ck_assert_msg(g_api != NULL, "api_new: %s", err.msg);
}

static void ds_stop(void)
{
	api_shutdown(g_api);
	api_free(g_api);
	g_api = NULL;
	stop();
}

static int ds_create(const char *group, const char *version,
		     const char *resource, const char *ns, const json_t *obj,
		     json_t **out, struct api_status *st)
{
	struct api_ref r = { .group = group, .version = version,
			     .resource = resource, .ns = ns };

	return api_internal_create(g_api, &r, obj, out, st);
}

/* A webhook configuration entry calling path on our Service. */
static json_t *hook(const char *name, const char *path, const char *group,
		    const char *version, const char *resource,
		    const char *ops)
{
	char *ca = certs_ca_bundle(&W.c);
	json_t *h = json_pack(
		"{s:s, s:[s], s:s, s:s, s:{s:{s:s, s:s, s:s, s:i}, s:s}, "
		"s:[{s:o, s:[s], s:[s], s:[s]}]}", "name", name,
		"admissionReviewVersions", "v1", "sideEffects", "None",
		"failurePolicy", "Fail", "clientConfig", "service",
		"namespace", NS, "name", SVC, "path", path, "port", 443,
		"caBundle", ca, "rules", "operations", t_json(ops),
		"apiGroups", group, "apiVersions", version, "resources",
		resource);

	free(ca);
	return h;
}

static void install(bool mutating, json_t *hooks)
{
	struct api_status st = API_STATUS_INIT;
	json_t *cfg = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion",
				"admissionregistration.k8s.io/v1", "kind",
				mutating ? "MutatingWebhookConfiguration"
					 : "ValidatingWebhookConfiguration",
				"metadata", "name", mutating
				? "kueue-mutating-webhook-configuration"
				: "kueue-validating-webhook-configuration",
				"webhooks", hooks);

	ck_assert_msg(ds_create("admissionregistration.k8s.io", "v1",
				mutating ? "mutatingwebhookconfigurations"
					 : "validatingwebhookconfigurations",
				NULL, cfg, NULL, &st) == 0, "install: %s",
		      st.message);
	json_decref(cfg);
}

static json_t *job_named(const char *name, const char *labels)
{
	json_t *j = t_json(JOB("", ""));
	json_t *m = json_object_get(j, "metadata");

	json_object_set_new(m, "name", json_string(name));
	json_object_set_new(m, "namespace", json_string("default"));
	if (labels)
		json_object_set_new(m, "labels", t_json(labels));
	return j;
}

START_TEST(devserver_jobs)
{
	struct api_status st = API_STATUS_INIT;
	json_t *j, *out = NULL;
	struct nsview *v = nsview_new();

	install(true, json_pack("[o]", hook("mjob.kb.io",
		"/mutate-batch-v1-job", "batch", "v1", "jobs",
		"[\"CREATE\"]")));
	install(false, json_pack("[o]", hook("vjob.kb.io",
		"/validate-batch-v1-job", "batch", "v1", "jobs",
		"[\"CREATE\",\"UPDATE\"]")));

	/* a Job with a queue name is created suspended */
	j = job_named("queued", "{\"" QL "\":\"user-queue\"}");
	ck_assert_msg(ds_create("batch", "v1", "jobs", "default", j, &out,
				&st) == 0, "%s", st.message);
	ck_assert(json_is_true(json_object_get(json_object_get(out, "spec"),
					       "suspend")));
	json_decref(out);
	json_decref(j);

	/* Kueue's own example, as kubectl create -f would send it */
	{
		char *path = t_src_path("test/fixtures/upstream/jobs/"
					"sample-job.yaml");
		json_t *docs = NULL;
		struct err err = { "" };

		ck_assert_msg(yamljson_load_file(path, &docs, &err) == 0, "%s",
			      err.msg);
		ck_assert_msg(ds_create("batch", "v1", "jobs", "default",
					json_array_get(docs, 0), &out,
					&st) == 0, "%s", st.message);
		ck_assert_ptr_nonnull(strstr(JX_STR(out, "metadata", "name"),
					     "sample-job-"));
		ck_assert(json_is_true(json_object_get(json_object_get(out,
			"spec"), "suspend")));
		json_decref(out);
		json_decref(docs);
		free(path);
	}

	/* without one, and without a default LocalQueue, it is left alone */
	j = job_named("free", NULL);
	ck_assert_int_eq(ds_create("batch", "v1", "jobs", "default", j, &out,
				   &st), 0);
	ck_assert(!json_is_true(json_object_get(json_object_get(out, "spec"),
						"suspend")));
	json_decref(out);
	json_decref(j);

	/* once namespace default has a LocalQueue "default" */
	nsview_set_default_lq(v, "default");
	webhook_publish_snapshot(W.wh, v);
	j = job_named("defaulted", NULL);
	ck_assert_int_eq(ds_create("batch", "v1", "jobs", "default", j, &out,
				   &st), 0);
	ck_assert_str_eq(JX_STR(out, "metadata", "labels", QL),
			 "default");
	ck_assert(json_is_true(json_object_get(json_object_get(out, "spec"),
					       "suspend")));
	json_decref(out);
	json_decref(j);

	/* a bad queue name is denied with Kueue's text */
	j = job_named("bad", "{\"" QL "\":\"Bad_Name\"}");
	ck_assert_int_eq(ds_create("batch", "v1", "jobs", "default", j, NULL,
				   &st), -1);
	ck_assert_int_eq(st.code, 403);
	ck_assert_msg(!strncmp(st.message, "admission webhook \"vjob.kb.io\" "
			       "denied the request: metadata.labels[" QL "]: "
			       "Invalid value: \"Bad_Name\": a lowercase RFC "
			       "1123 subdomain", 130), "%s", st.message);
	status_release(&st);
	json_decref(j);

	/* the queue of a running Job cannot change */
	{
		struct api_ref r = { .group = "batch", .version = "v1",
				     .resource = "jobs", .ns = "default",
				     .name = "free" };
		json_t *p = t_json("{\"metadata\":{\"labels\":{\"" QL "\":"
				   "\"other\"}}}");

		ck_assert_int_eq(api_internal_patch(g_api, &r, NULL,
						    API_PATCH_MERGE, p, NULL,
						    &st), -1);
		ck_assert_int_eq(st.code, 403);
		ck_assert_str_eq(st.message, "admission webhook \"vjob.kb.io\" "
				 "denied the request: metadata.labels[" QL "]: "
				 "Invalid value: \"other\": field is "
				 "immutable");
		status_release(&st);
		json_decref(p);
	}
}
END_TEST

static int create_cq(const char *version, const char *name, const char *spec,
		     struct api_status *st)
{
	char *av = xasprintf("kueue.x-k8s.io/%s", version);
	json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:o}", "apiVersion", av,
			      "kind", "ClusterQueue", "metadata", "name", name,
			      "spec", t_json(spec));
	int rc = ds_create("kueue.x-k8s.io", version, "clusterqueues", NULL, o,
			   NULL, st);

	json_decref(o);
	free(av);
	return rc;
}

START_TEST(devserver_kueue_objects)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "kueue.x-k8s.io",
			     .resource = "clusterqueues", .name = "a" };
	json_t *crd = t_fixture_json("admission/clusterqueues-crd.json");
	char *ca = certs_ca_bundle(&W.c);
	json_t *got;

	/* the CRD converts through our /convert */
	json_object_set_new(json_object_get(crd, "spec"), "conversion",
		json_pack("{s:s, s:{s:[s], s:{s:{s:s, s:s, s:s, s:i}, s:s}}}",
			  "strategy", "Webhook", "webhook",
			  "conversionReviewVersions", "v1", "clientConfig",
			  "service", "namespace", NS, "name", SVC, "path",
			  "/convert", "port", 443, "caBundle", ca));
	ck_assert_msg(ds_create("apiextensions.k8s.io", "v1",
				"customresourcedefinitions", NULL, crd, NULL,
				&st) == 0, "crd: %s", st.message);
	json_decref(crd);
	free(ca);
	install(true, json_pack("[o]", hook("mclusterqueue.kb.io",
		"/mutate-kueue-x-k8s-io-v1beta2-clusterqueue",
		"kueue.x-k8s.io", "v1beta2", "clusterqueues", "[\"CREATE\"]")));
	install(false, json_pack("[o]", hook("vclusterqueue.kb.io",
		"/validate-kueue-x-k8s-io-v1beta2-clusterqueue",
		"kueue.x-k8s.io", "v1beta2", "clusterqueues",
		"[\"CREATE\",\"UPDATE\"]")));

	ck_assert_msg(create_cq("v1beta1", "a", "{\"cohort\":\"team\","
				"\"namespaceSelector\":{}}", &st) == 0, "%s",
		      st.message);
	r.version = "v1beta2";
	got = api_internal_get(g_api, &r, &st);
	ck_assert_str_eq(JX_STR(got, "spec", "cohortName"), "team");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(
		json_object_get(got, "metadata"), "finalizers"), 0)),
		"kueue.x-k8s.io/resource-in-use");
	json_decref(got);
	r.version = "v1beta1";
	got = api_internal_get(g_api, &r, &st);
	ck_assert_str_eq(JX_STR(got, "spec", "cohort"), "team");
	ck_assert_str_eq(JX_STR(got, "apiVersion"),
			 "kueue.x-k8s.io/v1beta1");
	json_decref(got);

	/* the webhook's rules reach v1beta1 clients too */
	ck_assert_int_eq(create_cq("v1beta1", "b",
		"{\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],"
		"\"flavors\":[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\","
		"\"nominalQuota\":\"1\",\"lendingLimit\":\"2\"}]}]}],"
		"\"cohort\":\"c\"}", &st), -1);
	ck_assert_int_eq(st.code, 403);
	ck_assert_str_eq(st.message, "admission webhook \"vclusterqueue.kb.io\""
			 " denied the request: spec.resourceGroups[0]."
			 "flavors[0].resources[0].lendingLimit: Invalid value:"
			 " \"2\": must be less than or equal to the "
			 "nominalQuota");
	status_release(&st);
}
END_TEST

Suite *webhook_suite(void)
{
	Suite *s = suite_create("webhook");
	TCase *tc;

	tc = tcase_create("http");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, http_errors);
	tcase_add_test(tc, body_limits);
	tcase_add_test(tc, job_reviews);
	tcase_add_test(tc, observe_hook);
	tcase_add_test(tc, paths_table);
	tcase_add_test(tc, not_tls);
	tcase_add_test(tc, opts_from_config);
	suite_add_tcase(s, tc);

	tc = tcase_create("tls");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tls_versions);
	tcase_add_test(tc, tls_verification);
	tcase_add_test(tc, rotation);
	tcase_add_test(tc, rotation_keepalive);
	suite_add_tcase(s, tc);

	tc = tcase_create("tls13");
	tcase_add_checked_fixture(tc, start13, stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, tls13_only);
	suite_add_tcase(s, tc);

	tc = tcase_create("tls_config");
	tcase_add_checked_fixture(tc, start_cfg, stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, tls_config);
	suite_add_tcase(s, tc);

	tc = tcase_create("snapshot");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, snapshot_publish);
	tcase_add_test(tc, snapshot_swaps_under_load);
	suite_add_tcase(s, tc);

	tc = tcase_create("devserver");
	tcase_add_checked_fixture(tc, ds_start, ds_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, devserver_jobs);
	tcase_add_test(tc, devserver_kueue_objects);
	suite_add_tcase(s, tc);

	return s;
}
