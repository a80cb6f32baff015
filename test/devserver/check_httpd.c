/*
 * Suite "httpd": the manager's metrics and health server
 * (controller/httpd.h) on a free loopback port, driven with libcurl and
 * raw sockets: Go-style listen addresses, the exposition's headers and
 * body, liveness, controller-runtime's readiness answers as flags flip,
 * HTTPS with the devserver's certificates, hostile requests (the server
 * must keep serving), and scrapes from several threads while another
 * updates and removes series.
 *
 * Case "dump" also writes one realistic scrape (every Kueue family
 * populated, process_* included) to $CUEUE_METRICS_DUMP when set: the
 * e2e suite test/e2e/promtool.sh runs it and lints the file with
 * `promtool check metrics`.
 */
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"
#include "controller/httpd.h"
#include "controller/kueue_metrics.h"
#include "controller/metrics.h"
#include "controller/procstat.h"
#include "devserver/tls.h"
#include "suites.h"

/* ---- clients ---- */

struct hresp {
	long code;
	char *body;      /* NUL-terminated; owned */
	size_t len;
	char ctype[128];
};

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
	struct hresp *r = ud;

	r->body = xrealloc(r->body, r->len + sz * n + 1);
	memcpy(r->body + r->len, p, sz * n);
	r->len += sz * n;
	r->body[r->len] = '\0';
	return sz * n;
}

/* One request; returns the curl code (0 ok) and fills *r. */
static int try_req(const char *method, const char *url, const char *ca,
		   struct hresp *r)
{
	CURL *c = curl_easy_init();
	char *ct = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	r->body = xstrdup("");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (!strcmp(method, "HEAD"))
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "GET"))
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (ca) {
		struct curl_blob blob = { (void *)ca, strlen(ca),
					  CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	}
	rc = (int)curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
	if (curl_easy_getinfo(c, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
		snprintf(r->ctype, sizeof(r->ctype), "%s", ct);
	curl_easy_cleanup(c);
	return rc;
}

static struct hresp req(const char *method, const char *base,
			const char *path)
{
	struct hresp r;
	char url[512];
	int rc;

	snprintf(url, sizeof(url), "%s%s", base, path);
	rc = try_req(method, url, NULL, &r);
	ck_assert_msg(rc == 0, "%s %s: %s", method, url,
		      curl_easy_strerror((CURLcode)rc));
	return r;
}

static void hresp_free(struct hresp *r)
{
	FREE_AND_NULL(r->body);
}

#define ck_resp(r, c, text) do { \
	ck_assert_msg((r).code == (c), "status %ld, want %d: %s", \
		      (r).code, (c), (r).body); \
	ck_assert_str_eq((r).body, (text)); \
} while (0)

static int connect_to(unsigned port)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	a.sin_port = htons((uint16_t)port);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

static void send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n <= 0)
			return; /* the server may close early: fine */
		p += n;
		len -= (size_t)n;
	}
}

/* Reads until EOF or ms of silence; new string. */
static char *recv_all(int fd, int ms)
{
	char *out = xstrdup(""), buf[4096];
	size_t len = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (poll(&p, 1, ms) > 0) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n <= 0)
			break;
		out = xrealloc(out, len + (size_t)n + 1);
		memcpy(out + len, buf, (size_t)n);
		len += (size_t)n;
		out[len] = '\0';
	}
	return out;
}

/* Sends raw bytes on a fresh connection; returns what came back. */
static char *raw(unsigned port, const char *bytes, size_t len)
{
	int fd = connect_to(port);
	char *out;

	send_all(fd, bytes, len);
	shutdown(fd, SHUT_WR);
	out = recv_all(fd, 3000);
	close(fd);
	return out;
}

/* ---- fixtures ---- */

static struct metrics *M;
static struct kueue_metrics *KM;
static struct httpd *H;
static struct procstat *P; /* registered by the tests that scrape it */

static const struct httpd_check flag_checks[] = {
	{ "informers-synced", NULL, NULL },
	{ "certs", NULL, NULL },
	{ "webhook", NULL, NULL },
};

static void start(bool metrics, bool health)
{
	struct err err = { "" };
	struct httpd_opts o = {
		.bind = "127.0.0.1:0",
		.metrics = metrics ? M : NULL,
		.health = health,
		.checks = flag_checks,
		.nchecks = 3,
	};

	M = metrics_new();
	KM = kueue_metrics_new(M, &(struct kueue_metrics_opts){
		.cq_resources = true, .lq_metrics = true,
		.git_version = "v0.0.0-test" });
	o.metrics = metrics ? M : NULL;
	H = httpd_start(&o, &err);
	ck_assert_msg(H != NULL, "%s", err.msg);
	ck_assert_uint_ne(httpd_port(H), 0);
}

static void start_both(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	start(true, true);
}

static void stop(void)
{
	httpd_stop(H);
	procstat_free(P); /* after the last scrape: the collector uses it */
	P = NULL;
	kueue_metrics_free(KM);
	metrics_free(M);
	H = NULL;
	KM = NULL;
	M = NULL;
	curl_global_cleanup();
}

/* ---- addresses ---- */

START_TEST(bind_addresses)
{
	char host[64];
	unsigned port = 1;
	struct err err = { "" };
	static const char *const bad[] = {
		"8080", "host:", "h:99999", "[::1]8080", "a:b:c", ":x",
		":-1", "[::1", ":80a",
	};

	ck_assert_int_eq(httpd_parse_bind(":8080", host, sizeof(host), &port,
					  &err), 0);
	ck_assert_str_eq(host, "");
	ck_assert_uint_eq(port, 8080);
	ck_assert_int_eq(httpd_parse_bind("127.0.0.1:0", host, sizeof(host),
					  &port, &err), 0);
	ck_assert_str_eq(host, "127.0.0.1");
	ck_assert_uint_eq(port, 0);
	ck_assert_int_eq(httpd_parse_bind("[::1]:8081", host, sizeof(host),
					  &port, &err), 0);
	ck_assert_str_eq(host, "::1");
	ck_assert_uint_eq(port, 8081);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(httpd_parse_bind(bad[i], host, sizeof(host),
					       &port, &err) == -1,
			      "%s accepted", bad[i]);
	ck_assert_ptr_nonnull(strstr(err.msg, "bad listen address"));
	ck_assert(httpd_bind_disabled("0"));
	ck_assert(httpd_bind_disabled(""));
	ck_assert(httpd_bind_disabled(NULL));
	ck_assert(!httpd_bind_disabled(":8080"));
	ck_assert_ptr_null(httpd_start(&(struct httpd_opts){ .bind = "0" },
				       &err));
	ck_assert_ptr_nonnull(strstr(err.msg, "disabled"));
}
END_TEST

/* Port 0 is chosen by the kernel; a second server on that port fails;
 * a wildcard bind serves loopback. */
START_TEST(ports)
{
	struct err err = { "" };
	struct httpd *a, *b;
	char bind[32];
	struct hresp r;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	a = httpd_start(&(struct httpd_opts){ .bind = ":0", .health = true },
			&err);
	ck_assert_msg(a != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(httpd_url(a), "http://127.0.0.1:"));
	r = req("GET", httpd_url(a), "/healthz");
	ck_resp(r, 200, "ok");
	hresp_free(&r);
	/* no checks: controller-runtime's lone "ping" */
	r = req("GET", httpd_url(a), "/readyz?verbose");
	ck_resp(r, 200, "[+]ping ok\nreadyz check passed\n");
	hresp_free(&r);
	snprintf(bind, sizeof(bind), "127.0.0.1:%u", httpd_port(a));
	b = httpd_start(&(struct httpd_opts){ .bind = bind, .health = true },
			&err);
	ck_assert_ptr_null(b);
	ck_assert_msg(strstr(err.msg, "in use") != NULL, "%s", err.msg);
	httpd_stop(a);
	curl_global_cleanup();
}
END_TEST

/* ---- endpoints ---- */

START_TEST(metrics_endpoint)
{
	struct hresp r;
	char *want;

	kueue_metrics_pending(KM, "team-a", 2, 1);
	r = req("GET", httpd_url(H), "/metrics");
	ck_assert_int_eq(r.code, 200);
	ck_assert_str_eq(r.ctype, "text/plain; version=0.0.4; charset=utf-8");
	want = metrics_render(M, NULL);
	ck_assert_str_eq(r.body, want);
	free(want);
	ck_assert_ptr_nonnull(strstr(r.body, "kueue_pending_workloads{"
		"cluster_queue=\"team-a\",status=\"active\"} 2\n"));
	hresp_free(&r);
	r = req("HEAD", httpd_url(H), "/metrics");
	ck_assert_int_eq(r.code, 200);
	ck_assert_uint_eq(r.len, 0);
	hresp_free(&r);
	r = req("POST", httpd_url(H), "/metrics");
	ck_assert_int_eq(r.code, 405);
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/metrics/x");
	ck_assert_int_eq(r.code, 404);
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/");
	ck_assert_int_eq(r.code, 404);
	hresp_free(&r);
}
END_TEST

START_TEST(liveness)
{
	struct hresp r = req("GET", httpd_url(H), "/healthz");

	ck_resp(r, 200, "ok");
	ck_assert_str_eq(r.ctype, "text/plain; charset=utf-8");
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/healthz/ping");
	ck_resp(r, 200, "ok");
	hresp_free(&r);
}
END_TEST

START_TEST(readiness_flips)
{
	struct hresp r = req("GET", httpd_url(H), "/readyz");

	/* checks are listed by name, as controller-runtime sorts them */
	ck_resp(r, 500, "[-]certs failed: reason withheld\n"
		"[-]informers-synced failed: reason withheld\n"
		"[-]webhook failed: reason withheld\n"
		"readyz check failed\n");
	hresp_free(&r);
	httpd_set_check(H, "certs", true);
	httpd_set_check(H, "informers-synced", true);
	r = req("GET", httpd_url(H), "/readyz");
	ck_resp(r, 500, "[+]certs ok\n[+]informers-synced ok\n"
		"[-]webhook failed: reason withheld\nreadyz check failed\n");
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/readyz/webhook");
	ck_resp(r, 500, "internal server error: webhook is not ready yet\n");
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/readyz/certs");
	ck_resp(r, 200, "ok");
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/readyz?exclude=webhook");
	ck_resp(r, 200, "ok");
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/readyz?verbose&exclude=webhook"
		"&exclude=nope");
	ck_resp(r, 200, "[+]certs ok\n[+]informers-synced ok\n"
		"[+]webhook excluded: ok\nwarn: some health checks cannot be "
		"excluded: no matches for \"nope\"\nreadyz check passed\n");
	hresp_free(&r);
	httpd_set_check(H, "webhook", true);
	r = req("GET", httpd_url(H), "/readyz");
	ck_resp(r, 200, "ok");
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/readyz?verbose=1");
	ck_resp(r, 200, "[+]certs ok\n[+]informers-synced ok\n"
		"[+]webhook ok\nreadyz check passed\n");
	hresp_free(&r);
	/* and back: certificates rotated away */
	httpd_set_check(H, "certs", false);
	r = req("GET", httpd_url(H), "/readyz");
	ck_assert_int_eq(r.code, 500);
	ck_assert_ptr_nonnull(strstr(r.body, "[-]certs failed"));
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/readyz/nope");
	ck_assert_int_eq(r.code, 404);
	hresp_free(&r);
	/* liveness does not care */
	r = req("GET", httpd_url(H), "/healthz");
	ck_resp(r, 200, "ok");
	hresp_free(&r);
}
END_TEST

static bool webhook_listening(void *ud, char *why, size_t n)
{
	atomic_bool *up = ud;

	if (atomic_load(up))
		return true;
	snprintf(why, n, "webhook server not started");
	return false;
}

/* Function checks, custom endpoint names, a metrics-only and a
 * health-only server. */
START_TEST(function_checks_and_split_servers)
{
	static atomic_bool up;
	struct httpd_check ck = { "readyz", webhook_listening, &up };
	struct err err = { "" };
	struct metrics *m = metrics_new();
	struct httpd *hm, *hh;
	struct hresp r;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	atomic_init(&up, false);
	hm = httpd_start(&(struct httpd_opts){ .bind = "127.0.0.1:0",
					       .metrics = m }, &err);
	hh = httpd_start(&(struct httpd_opts){ .bind = "127.0.0.1:0",
		.health = true, .liveness_path = "livez",
		.readiness_path = "ready", .checks = &ck, .nchecks = 1 },
		&err);
	ck_assert_msg(hm && hh, "%s", err.msg);
	r = req("GET", httpd_url(hm), "/healthz");
	ck_assert_int_eq(r.code, 404);
	hresp_free(&r);
	r = req("GET", httpd_url(hm), "/metrics");
	ck_resp(r, 200, "");  /* an empty registry prints nothing */
	hresp_free(&r);
	r = req("GET", httpd_url(hh), "/metrics");
	ck_assert_int_eq(r.code, 404);
	hresp_free(&r);
	r = req("GET", httpd_url(hh), "/livez");
	ck_resp(r, 200, "ok");
	hresp_free(&r);
	r = req("GET", httpd_url(hh), "/ready");
	ck_resp(r, 500, "[-]readyz failed: reason withheld\n"
		"ready check failed\n");
	hresp_free(&r);
	r = req("GET", httpd_url(hh), "/ready/readyz");
	ck_resp(r, 500, "internal server error: webhook server not started\n");
	hresp_free(&r);
	atomic_store(&up, true);
	r = req("GET", httpd_url(hh), "/ready");
	ck_resp(r, 200, "ok");
	hresp_free(&r);
	httpd_stop(hm);
	httpd_stop(hh);
	metrics_free(m);
	curl_global_cleanup();
}
END_TEST

START_TEST(https)
{
	struct tls_material tm = TLS_MATERIAL_INIT;
	struct err err = { "" };
	struct metrics *m = metrics_new();
	struct httpd *h;
	struct hresp r;
	char url[128];

	curl_global_init(CURL_GLOBAL_DEFAULT);
	ck_assert_msg(tls_generate(METRIC_VALUES("localhost"),
				   METRIC_VALUES("127.0.0.1"), &tm, &err) == 0,
		      "%s", err.msg);
	h = httpd_start(&(struct httpd_opts){ .bind = "127.0.0.1:0",
		.metrics = m, .health = true, .cert_pem = tm.cert_pem,
		.key_pem = tm.key_pem }, &err);
	ck_assert_msg(h != NULL, "%s", err.msg);
	ck_assert_ptr_nonnull(strstr(httpd_url(h), "https://"));
	snprintf(url, sizeof(url), "%s/healthz", httpd_url(h));
	ck_assert_int_eq(try_req("GET", url, tm.ca_pem, &r), 0);
	ck_resp(r, 200, "ok");
	hresp_free(&r);
	/* plain HTTP to the TLS port gets no answer, and the server lives */
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/healthz",
		 httpd_port(h));
	try_req("GET", url, NULL, &r);
	ck_assert_int_ne(r.code, 200);
	hresp_free(&r);
	snprintf(url, sizeof(url), "%s/healthz", httpd_url(h));
	ck_assert_int_eq(try_req("GET", url, tm.ca_pem, &r), 0);
	ck_resp(r, 200, "ok");
	hresp_free(&r);
	httpd_stop(h);
	metrics_free(m);
	tls_material_release(&tm);
	curl_global_cleanup();
}
END_TEST

/* ---- hostile clients ---- */

static void ck_still_serving(void)
{
	struct hresp r = req("GET", httpd_url(H), "/healthz");

	ck_resp(r, 200, "ok");
	hresp_free(&r);
	r = req("GET", httpd_url(H), "/metrics");
	ck_assert_int_eq(r.code, 200);
	hresp_free(&r);
}

START_TEST(malformed_requests)
{
#define J(s) { s, sizeof(s) - 1 }
	static const struct { const char *s; size_t n; } junk[] = {
		J("GARBAGE\r\n\r\n"),
		J("GET\r\n\r\n"),
		J("GET /metrics\r\n\r\n"),
		J("GET /metrics HTTP/9.9\r\n\r\n"),
		J("GET /metrics HTTP/1.1\r\n\r\n"),            /* no Host */
		J("GET /metrics HTTP/1.1\r\nHost: x\r\nBad Header\r\n\r\n"),
		J("GET /me\0trics HTTP/1.1\r\nHost: x\r\n\r\n"),
		J("GET /%zz HTTP/1.1\r\nHost: x\r\n\r\n"),
		/* a TLS ClientHello's start */
		J("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03"),
		J("GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: "
		  "99999999999\r\n\r\nabc"),
		J("POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
		  "chunked\r\n\r\nzz\r\n"),
		J("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: -5"
		  "\r\n\r\n"),
		J("GET /readyz?exclude&exclude=&verbose=%ff HTTP/1.1\r\nHost: x"
		  "\r\n\r\n"),
	};
	char *out, *big;
	size_t n;
	int fd;

#undef J
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		out = raw(httpd_port(H), junk[i].s, junk[i].n);
		free(out);
		ck_still_serving();
	}
	/* a plain request over the raw socket is answered */
	out = raw(httpd_port(H), "GET /healthz HTTP/1.0\r\n\r\n", 25);
	ck_assert_msg(!strncmp(out, "HTTP/1.0 200", 12) ||
		      !strncmp(out, "HTTP/1.1 200", 12), "%s", out);
	free(out);
	/* headers past the per-connection memory limit */
	n = 256 * 1024;
	big = xmalloc(n + 64);
	memcpy(big, "GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: ", 40);
	memset(big + 40, 'a', n);
	memcpy(big + 40 + n, "\r\n\r\n", 4);
	out = raw(httpd_port(H), big, n + 44);
	ck_assert_msg(strstr(out, " 200 ") == NULL, "%.80s", out);
	free(out);
	free(big);
	ck_still_serving();
	/* a body the server never reads: answered, connection dropped */
	big = xstrdup("POST /healthz HTTP/1.1\r\nHost: x\r\n"
		      "Content-Length: 1000000\r\n\r\nabc");
	out = raw(httpd_port(H), big, strlen(big));
	free(big);
	ck_assert_ptr_nonnull(strstr(out, "405"));
	free(out);
	ck_still_serving();
	/* a client that sends half a request and stays: others proceed */
	fd = connect_to(httpd_port(H));
	send_all(fd, "GET /metr", 9);
	ck_still_serving();
	close(fd);
	/* many connections opened and dropped at once */
	for (int i = 0; i < 200; i++)
		close(connect_to(httpd_port(H)));
	ck_still_serving();
}
END_TEST

/* ---- concurrency ---- */

#define SCRAPERS 3
#define SCRAPES 40

struct scraper {
	const char *url;
	int ok;           /* read after join */
	int bad;
	atomic_int done;  /* scrapes finished; polled while running */
	char why[256];
};

/* A well-formed exposition: ends with a newline, every line a comment
 * or "name[{...}] value". */
static bool well_formed(const char *t, char *why, size_t n)
{
	const char *line = t;

	if (*t && t[strlen(t) - 1] != '\n') {
		snprintf(why, n, "no final newline");
		return false;
	}
	while (*line) {
		const char *end = strchr(line, '\n');
		const char *sp;

		if (line[0] != '#') {
			sp = memchr(line, ' ', (size_t)(end - line));
			if (!sp || sp == line || sp + 1 == end ||
			    (line[0] != 'k' && line[0] != 'c' &&
			     line[0] != 'p')) {
				snprintf(why, n, "bad line: %.*s",
					 (int)(end - line), line);
				return false;
			}
		}
		line = end + 1;
	}
	return true;
}

static void *scrape_loop(void *ud)
{
	struct scraper *s = ud;

	for (int i = 0; i < SCRAPES; i++) {
		struct hresp r;

		if (try_req("GET", s->url, NULL, &r) == 0 && r.code == 200 &&
		    well_formed(r.body, s->why, sizeof(s->why)))
			s->ok++;
		else
			s->bad++;
		free(r.body);
		atomic_fetch_add(&s->done, 1);
	}
	return NULL;
}

START_TEST(concurrent_scrapes_while_updating)
{
	struct scraper sc[SCRAPERS];
	pthread_t th[SCRAPERS];
	char url[160], cq[32];
	struct hresp r;
	int i = 0;
	bool running = true;

	P = procstat_register(M);
	snprintf(url, sizeof(url), "%s/metrics", httpd_url(H));
	for (int k = 0; k < SCRAPERS; k++) {
		sc[k] = (struct scraper){ .url = url };
		atomic_init(&sc[k].done, 0);
		ck_assert_int_eq(pthread_create(&th[k], NULL, scrape_loop,
						&sc[k]), 0);
	}
	/* The loop thread's part: decisions, status, queues coming and
	 * going, until the scrapers are done. */
	while (running) {
		snprintf(cq, sizeof(cq), "cq-%d", i % 40);
		kueue_metrics_admitted(KM, cq, "high", (double)(i % 300));
		kueue_metrics_quota_reserved(KM, cq, "", 0.5);
		kueue_metrics_pending(KM, cq, i % 7, i % 3);
		kueue_metrics_cq_status(KM, cq, KUEUE_CQ_ACTIVE);
		kueue_metrics_admission_attempt(KM, i % 2, 0.001);
		kueue_metrics_cycle(KM, 0.0002);
		kueue_metrics_cq_resources(KM, "org", cq, "a100",
			"nvidia.com/gpu", &(struct kueue_resource_values){
			8000, KUEUE_METRICS_NO_LIMIT, 0, 4000, 2000 });
		if (i % 53 == 0)
			kueue_metrics_cq_delete(KM, cq);
		i++;
		if (i % 256 == 0) {
			running = false;
			for (int k = 0; k < SCRAPERS; k++)
				if (atomic_load(&sc[k].done) < SCRAPES)
					running = true;
		}
	}
	for (int k = 0; k < SCRAPERS; k++) {
		pthread_join(th[k], NULL);
		ck_assert_msg(sc[k].bad == 0, "scraper %d: %d bad (%s)", k,
			      sc[k].bad, sc[k].why);
	}
	/* quiet now: the scrape shows exactly the counters' totals */
	r = req("GET", httpd_url(H), "/metrics");
	{
		double succ = metric_value(metric_family_find(
			metrics_find(M, "kueue_admission_attempts_total"),
			METRIC_VALUES("success")));
		char line[128];

		snprintf(line, sizeof(line),
			 "kueue_admission_attempts_total{result=\"success\"} "
			 "%.0f\n", succ);
		ck_assert(succ == (double)(i / 2));
		ck_assert_ptr_nonnull(strstr(r.body, line));
	}
	ck_assert(metrics_check(M));
	hresp_free(&r);
}
END_TEST

/* ---- the sample exposition for promtool ---- */

START_TEST(dump)
{
	const char *path = getenv("CUEUE_METRICS_DUMP");
	struct hresp r;
	static const char *const reasons[] = {
		"InClusterQueue", "InCohortReclamation",
		"InCohortFairSharing", "InCohortReclaimWhileBorrowing",
	};

	P = procstat_register(M);
	for (int q = 0; q < 3; q++) {
		char cq[16];

		snprintf(cq, sizeof(cq), "team-%c", 'a' + q);
		kueue_metrics_pending(KM, cq, q, 1);
		kueue_metrics_cq_workloads(KM, cq, 3, 2);
		kueue_metrics_cq_status(KM, cq, q == 2 ? KUEUE_CQ_PENDING
						       : KUEUE_CQ_ACTIVE);
		kueue_metrics_quota_reserved(KM, cq, "high", 12.5);
		kueue_metrics_admitted(KM, cq, "high", 12.5);
		kueue_metrics_admitted(KM, cq, "", 4000);
		kueue_metrics_admission_checks_wait(KM, cq, "high", 0);
		kueue_metrics_ready(KM, cq, "high", 30, 17.5);
		kueue_metrics_evicted(KM, cq, "Preempted", "", "high");
		kueue_metrics_evicted(KM, cq, "PodsReadyTimeout",
				      "RequeuingLimitExceeded", "");
		kueue_metrics_evicted_once(KM, cq, "PodsReadyTimeout",
					   "WaitForStart", "");
		kueue_metrics_pods_ready_to_evicted(KM, cq, "Preempted", "",
						    900);
		kueue_metrics_preempted(KM, cq, reasons[q]);
		kueue_metrics_replaced_slice(KM, cq);
		kueue_metrics_preemption_skips(KM, cq, 0);
		kueue_metrics_cq_weighted_share(KM, cq, q * 100);
		kueue_metrics_cq_resources(KM, "org", cq, "a100",
			"nvidia.com/gpu", &(struct kueue_resource_values){
			8000, KUEUE_METRICS_NO_LIMIT, 2000, 4000, 4000 });
		kueue_metrics_cq_resources(KM, "org", cq, "default", "cpu",
			&(struct kueue_resource_values){ 64000, 0,
			KUEUE_METRICS_NO_LIMIT, 1500, 500 });
		kueue_metrics_cq_resources(KM, "org", cq, "default",
			"memory", &(struct kueue_resource_values){
			(256LL << 30) * 1000, 0, 0, (1LL << 30) * 1000, 0 });
	}
	kueue_metrics_cohort_weighted_share(KM, "org", 0);
	kueue_metrics_admission_attempt(KM, true, 0.004);
	kueue_metrics_admission_attempt(KM, false, 0.0001);
	kueue_metrics_cycle(KM, 0.0031);
	kueue_metrics_api_request(KM, "PATCH", 200);
	kueue_metrics_api_request(KM, "PUT", 409);
	kueue_metrics_api_request(KM, "WATCH", 0);
	kueue_metrics_lq_pending(KM, "team-a", "user-queue", 1, 0);
	kueue_metrics_lq_workloads(KM, "team-a", "user-queue", 2, 2);
	kueue_metrics_lq_status(KM, "team-a", "user-queue", KUEUE_LQ_TRUE);
	kueue_metrics_lq_quota_reserved(KM, "team-a", "user-queue", "high",
					12.5);
	kueue_metrics_lq_admitted(KM, "team-a", "user-queue", "high", 12.5);
	kueue_metrics_lq_admission_checks_wait(KM, "team-a", "user-queue",
					       "high", 0);
	kueue_metrics_lq_ready(KM, "team-a", "user-queue", "high", 30, 17.5);
	kueue_metrics_lq_evicted(KM, "team-a", "user-queue", "Preempted", "",
				 "high");
	kueue_metrics_lq_resources(KM, "team-a", "user-queue", "default",
				   "cpu", 1500, 500);
	kueue_metrics_webhook_observe(KM, "/mutate-batch-v1-job", 200,
				      0.0002);
	kueue_metrics_webhook_observe(KM, "/validate-batch-v1-job", 200,
				      0.0003);
	kueue_metrics_webhook_observe(KM, "/convert", 400, 0.0001);
	r = req("GET", httpd_url(H), "/metrics");
	ck_assert_int_eq(r.code, 200);
	ck_assert_ptr_nonnull(strstr(r.body, "\nprocess_cpu_seconds_total "));
	ck_assert_ptr_nonnull(strstr(r.body,
		"kueue_cluster_queue_resource_reservation{cluster_queue="
		"\"team-a\",cohort=\"org\",flavor=\"default\",resource="
		"\"memory\"} 1.073741824e+09\n"));
	if (path) {
		FILE *f = fopen(path, "w");

		ck_assert_msg(f != NULL, "cannot write %s", path);
		fprintf(f, "%s", r.body);
		ck_assert_int_eq(fclose(f), 0);
	}
	hresp_free(&r);
}
END_TEST

Suite *httpd_suite(void)
{
	Suite *s = suite_create("httpd");
	TCase *tc = tcase_create("addresses");

	tcase_add_test(tc, bind_addresses);
	tcase_add_test(tc, ports);
	suite_add_tcase(s, tc);

	tc = tcase_create("endpoints");
	tcase_add_checked_fixture(tc, start_both, stop);
	tcase_add_test(tc, metrics_endpoint);
	tcase_add_test(tc, liveness);
	tcase_add_test(tc, readiness_flips);
	suite_add_tcase(s, tc);

	tc = tcase_create("servers");
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, function_checks_and_split_servers);
	tcase_add_test(tc, https);
	suite_add_tcase(s, tc);

	tc = tcase_create("hostile");
	tcase_add_checked_fixture(tc, start_both, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, malformed_requests);
	suite_add_tcase(s, tc);

	tc = tcase_create("concurrency");
	tcase_add_checked_fixture(tc, start_both, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, concurrent_scrapes_while_updating);
	suite_add_tcase(s, tc);

	tc = tcase_create("dump");
	tcase_add_checked_fixture(tc, start_both, stop);
	tcase_add_test(tc, dump);
	suite_add_tcase(s, tc);
	return s;
}
