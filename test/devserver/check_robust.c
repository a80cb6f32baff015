/*
 * Suite "robust": the devserver against hostile and broken clients.
 * Every bad request must get a Kubernetes-shaped Status (or a closed
 * connection where HTTP leaves no other answer) and the server must keep
 * serving: malformed JSON and YAML, wrong Content-Types, unknown paths,
 * bodies over the 3 MiB cap (answered before they are read), duplicate
 * keys, deep nesting, NUL bytes, huge numbers, invalid UTF-8; slow
 * clients (slowloris, silent sockets), the connection cap; and clients
 * that hang up mid-body, mid-answer and mid-watch (their connection
 * threads must end promptly; ASan/LSan runs of this suite catch leaks).
 *
 * Raw sockets (dsclient.h ds_connect) stand in for clients libcurl will
 * not imitate. The kill -9 persistence test is in check_crash.c.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"
#include "devserver/http.h"
#include "suites.h"
#include "test/devserver/dsclient.h"
#include "test/support/support.h"

#define NOT_FOUND "the server could not find the requested resource"
#define CAP 3145728u
#define READ_TIMEOUT_MS 1500u
#define MAX_CONNS 8u

static const char cm_a[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"name\":\"a\"},\"data\":{\"k\":\"v\"}}";

static void start_with_crds(void)
{
	ds_start(NULL);
	ds_install_crds("workloads");
}

static void start_slow(void)
{
	struct ds_opts o = { .read_timeout_ms = READ_TIMEOUT_MS,
			     .max_connections = MAX_CONNS };

	ds_start(&o);
}

/* The cap alone: idle connections are not reaped during the test. */
static void start_capped(void)
{
	struct ds_opts o = { .max_connections = MAX_CONNS };

	ds_start(&o);
}

/* The server still answers. */
static void ck_serving(void)
{
	struct ds_resp r = GET("/version");

	ds_code(r, 200);
	ds_resp_free(&r);
}

/* Asserts a 400 BadRequest whose message starts with prefix. */
static void ck_bad_request(const struct ds_resp *r, const char *prefix)
{
	const char *m;

	ds_status(r, 400, "BadRequest", NULL);
	m = ds_sget(r->json, "message");
	ck_assert_msg(m && !strncmp(m, prefix, strlen(prefix)),
		      "message %s does not start with %s", m, prefix);
}

static struct ds_resp post_cm(const char *ctype, const char *body,
			      size_t len)
{
	return ds_call_len("POST", CMS, ctype, body, len, NULL);
}

/* ---- malformed bodies ---- */

START_TEST(malformed_json)
{
	static const char *const bad[] = {
		"{not json", "{\"apiVersion\":\"v1\",", "[1,2", "\"unterminated",
		"{\"a\":1}}", "{\"a\":tru}", "{'a':1}", "{\"a\":01}",
	};
	struct ds_resp r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = post_cm("application/json", bad[i], strlen(bad[i]));
		ck_bad_request(&r, "error decoding JSON: ");
		ds_resp_free(&r);
	}
	r = post_cm("application/json", "", 0);
	ck_bad_request(&r, "the body of the request was empty");
	ds_resp_free(&r);
	r = POST(CMS, cm_a);
	ds_code(r, 201);
	ds_resp_free(&r);
	r = PUT(CMS "/a", "{\"apiVersion\":\"v1\",\"kind\":\"Conf");
	ck_bad_request(&r, "error decoding JSON: ");
	ds_resp_free(&r);
	r = PATCH(CMS "/a", MERGE, "{\"data\":");
	ck_bad_request(&r, "error decoding JSON: ");
	ds_resp_free(&r);
	r = PATCH(CMS "/a", JSONP, "[{\"op\":\"add\"");
	ck_bad_request(&r, "error decoding JSON: ");
	ds_resp_free(&r);
	ck_serving();
}
END_TEST

START_TEST(malformed_yaml)
{
	static const char *const bad[] = {
		"a: [b\n",
		"apiVersion: v1\nkind: ConfigMap\n metadata: x\n",
		"a: &x [*x]\n",
		"key: \"unterminated\n",
		"- a\nb: c\n",
	};
	struct ds_resp r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = post_cm("application/yaml", bad[i], strlen(bad[i]));
		ck_bad_request(&r, "error converting YAML to JSON: ");
		ds_resp_free(&r);
	}
	r = post_cm("application/yaml", "a: 1\n---\nb: 2\n", 14);
	ck_bad_request(&r, "the body must hold exactly one object");
	ds_resp_free(&r);
	r = post_cm("application/yaml", "# only a comment\n", 17);
	ck_bad_request(&r, "the body must hold exactly one object");
	ds_resp_free(&r);
	r = PATCH(CQ "/c?fieldManager=t", APPLY, "kind: [\n");
	ds_status(&r, 404, "NotFound", NULL); /* no such type here */
	ds_resp_free(&r);
	r = PATCH(WL "/w?fieldManager=t", APPLY, "kind: [\n");
	ck_bad_request(&r, "error converting YAML to JSON: ");
	ds_resp_free(&r);
	/* a YAML document that is valid but not an object */
	r = post_cm("application/yaml", "- 1\n- 2\n", 8);
	ck_bad_request(&r, "the body must be a JSON object");
	ds_resp_free(&r);
	ck_serving();
}
END_TEST

/* ---- media types ---- */

START_TEST(wrong_content_type)
{
	static const char accepted[] =
		"the body of the request was in an unknown format - accepted "
		"media types include: application/json, application/yaml, "
		"application/vnd.kubernetes.protobuf";
	static const char patch_types[] =
		"the body of the request was in an unknown format - accepted "
		"media types include: application/json-patch+json, "
		"application/merge-patch+json, application/apply-patch+yaml, "
		"application/strategic-merge-patch+json";
	static const char *const bad[] = {
		"text/plain", "application/jsonx", "application/x-www-form-"
		"urlencoded", "multipart/form-data; boundary=x",
		"application/cbor",
	};
	struct ds_resp r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		r = post_cm(bad[i], cm_a, strlen(cm_a));
		ds_status(&r, 415, "UnsupportedMediaType", accepted);
		ds_resp_free(&r);
	}
	/* parameters and case do not matter; no Content-Type means JSON */
	r = post_cm("Application/JSON; charset=utf-8", cm_a, strlen(cm_a));
	ds_code(r, 201);
	ds_resp_free(&r);
	r = ds_call("PUT", CMS "/a", "text/plain", "whatever", NULL);
	ds_status(&r, 415, "UnsupportedMediaType", accepted);
	ds_resp_free(&r);
	/* the patch type is judged before the body is decoded */
	r = PATCH(CMS "/a", "text/plain", "not even json");
	ds_status(&r, 415, "UnsupportedMediaType", patch_types);
	ds_resp_free(&r);
	r = PATCH(CMS "/a", NULL, "{}");
	ds_status(&r, 415, "UnsupportedMediaType", patch_types);
	ds_resp_free(&r);
	r = PATCH(CMS "/a", "application/json", "{}");
	ds_status(&r, 415, "UnsupportedMediaType", patch_types);
	ds_resp_free(&r);
	r = PATCH(WL "/w", SMP, "not even json");
	ds_status(&r, 415, "UnsupportedMediaType", NULL);
	ds_resp_free(&r);
	ck_serving();
}
END_TEST

START_TEST(unknown_paths)
{
	static const char *const paths[] = {
		"/apis/nosuch.io/v1/things",
		"/apis/nosuch.io/v1",
		"/apis/nosuch.io",
		"/apis/batch/v9/jobs",
		"/apis/batch/v9",
		"/apis/batch/v1/nosuch",
		"/apis/batch/v1/namespaces/default/nosuch/x",
		"/api/v2/pods",
		"/api/v1/nosuch",
		"/api/v1/namespaces/default/configmaps/a/b/c/d",
		"/apis/kueue.x-k8s.io/v1alpha9/workloads",
		"/apis/kueue.x-k8s.io/v1beta2/namespaces/default/nosuch",
		"/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads/x/"
			"nosub",
		"/nonsense",
		"/api/v1/namespaces/default/configmaps/x/status",
		"/openapi/v3/apis/nosuch.io/v1",
		"/a/b/c/d/e/f/g/h/i/j/k/l/m/n/o/p/q/r/s/t/u/v/w/x/y/z",
	};
	static const char *const methods[] = { "GET", "POST", "PUT", "PATCH",
					       "DELETE" };
	struct ds_resp r;

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		for (size_t m = 0; m < 5; m++) {
			if (m && !strncmp(paths[i], "/openapi", 8))
				continue;
			r = ds_call(methods[m], paths[i], MERGE, "{}", NULL);
			ds_status(&r, 404, "NotFound", NOT_FOUND);
			ds_resp_free(&r);
		}
	/* a NUL in a name is not the end of the name */
	r = POST(CMS, cm_a);
	ds_code(r, 201);
	ds_resp_free(&r);
	r = GET(CMS "/a%00b");
	ds_status(&r, 404, "NotFound", NULL);
	ds_resp_free(&r);
	ck_serving();
}
END_TEST

/* ---- bodies over the cap ---- */

/* Sends the headers of a request announcing len body bytes (or chunked
 * when len is NULL) and returns the socket. */
static int send_head(const char *method, const char *path, const char *len)
{
	int fd = ds_connect();
	char *h;

	if (len)
		h = xasprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: "
			      "application/json\r\nContent-Length: %s\r\n\r\n",
			      method, path, len);
	else
		h = xasprintf("%s %s HTTP/1.1\r\nHost: x\r\nContent-Type: "
			      "application/json\r\nTransfer-Encoding: "
			      "chunked\r\n\r\n", method, path);
	ck_assert(ds_send(fd, h, strlen(h)));
	free(h);
	return fd;
}

static void ck_413_text(const char *answer)
{
	ck_assert_msg(!strncmp(answer, "HTTP/1.1 413 ", 13), "%s", answer);
	ck_assert_ptr_nonnull(strstr(answer, "\"reason\":\"RequestEntity"
					     "TooLarge\""));
	ck_assert_ptr_nonnull(strstr(answer, "\"message\":\"Request entity "
					     "too large: limit is 3145728\""));
}

START_TEST(body_too_large)
{
	size_t n = 4u << 20;
	char *big = xmalloc(n + 1), *answer;
	struct ds_resp r;
	long long t0;
	int fd;

	/* 1. libcurl sends all 4 MiB with a Content-Length */
	memset(big, ' ', n);
	big[0] = '{';
	big[n - 1] = '}';
	big[n] = '\0';
	r = post_cm("application/json", big, n);
	ds_status(&r, 413, "RequestEntityTooLarge",
		  "Request entity too large: limit is 3145728");
	ds_resp_free(&r);
	/* 2. the headers alone get the answer: nothing of the body is read,
	 * and the connection is closed after it */
	t0 = t_mono_ms();
	fd = send_head("POST", CMS, "4194304");
	answer = ds_recv_all(fd, 3000);
	ck_413_text(answer);
	ck_assert_ptr_nonnull(strstr(answer, "Connection: close"));
	ck_assert_int_lt(t_mono_ms() - t0, 2000);
	free(answer);
	close(fd);
	/* huge lengths, on PUT and PATCH too */
	fd = send_head("PUT", CMS "/a", "9000000000000000000");
	answer = ds_recv_all(fd, 3000);
	ck_413_text(answer);
	free(answer);
	close(fd);
	/* past 2^64 libmicrohttpd answers by itself (413, an HTML body)
	 * before the request reaches the devserver */
	fd = send_head("PUT", CMS "/a", "999999999999999999999999999");
	answer = ds_recv_all(fd, 3000);
	ck_assert_msg(!strncmp(answer, "HTTP/1.1 413 ", 13), "%s", answer);
	free(answer);
	close(fd);
	fd = send_head("PATCH", CMS "/a", "3145729");
	answer = ds_recv_all(fd, 3000);
	ck_413_text(answer);
	free(answer);
	close(fd);
	/* exactly the cap is allowed (and then fails as JSON, not 413) */
	r = post_cm("application/json", big, CAP);
	ck_bad_request(&r, "error decoding JSON: ");
	ds_resp_free(&r);
	/* 3. chunked, no length: answered at the cap (the rest is read and
	 * dropped until the client closes; suite "dswire" has more) */
	fd = send_head("POST", CMS, NULL);
	for (size_t sent = 0; sent < n; sent += 65536) {
		static const char hdr[] = "10000\r\n";

		ck_assert(ds_send(fd, hdr, strlen(hdr)));
		ck_assert(ds_send(fd, big, 65536));
		ck_assert(ds_send(fd, "\r\n", 2));
	}
	ck_assert(ds_send(fd, "0\r\n\r\n", 5));
	answer = ds_recv_all(fd, 3000);
	ck_413_text(answer);
	free(answer);
	close(fd);
	free(big);
	ck_assert(ds_wait_connections(0, 3000));
	ck_serving();
}
END_TEST

/* ---- duplicate keys ---- */

START_TEST(duplicate_keys)
{
	struct ds_resp r;

	r = POST(CMS, cm_a);
	ds_code(r, 201);
	ds_resp_free(&r);
	/* RFC 6902: one "op" and one "path" per operation */
	r = PATCH(CMS "/a", JSONP, "[{\"op\":\"add\",\"op\":\"remove\","
		  "\"path\":\"/data/k\"}]");
	ds_status(&r, 400, "BadRequest", "error decoding patch: json patch "
		  "duplicate field \"op\"");
	ds_resp_free(&r);
	r = PATCH(CMS "/a?fieldValidation=Ignore", JSONP,
		  "[{\"op\":\"add\",\"path\":\"/data/x\",\"path\":\"/data/y\","
		  "\"value\":\"1\"}]");
	ds_status(&r, 400, "BadRequest", NULL);
	ds_resp_free(&r);
	r = GET(CMS "/a");
	ck_assert_ptr_null(ds_jget(r.json, "data.x"));
	ck_assert_ptr_null(ds_jget(r.json, "data.y"));
	ds_resp_free(&r);
	/* other bodies: fieldValidation decides */
	r = PATCH(CMS "/a?fieldValidation=Strict", MERGE,
		  "{\"data\":{\"k\":\"1\",\"k\":\"2\"}}");
	ds_status(&r, 400, "BadRequest", "ConfigMap in version \"v1\" cannot "
		  "be handled as a ConfigMap: strict decoding error: duplicate "
		  "field \"k\"");
	ds_resp_free(&r);
	r = PATCH(CMS "/a", MERGE, "{\"data\":{\"k\":\"1\",\"k\":\"2\"}}");
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "data.k"), "2"); /* the last wins */
	ck_assert_ptr_nonnull(strstr(r.headers, "Warning: 299 - \"duplicate "
				     "field \\\"k\\\"\""));
	ds_resp_free(&r);
	r = PATCH(CMS "/a?fieldValidation=Ignore", MERGE,
		  "{\"data\":{\"k\":\"3\",\"k\":\"4\"}}");
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "data.k"), "4");
	ck_assert_ptr_null(strstr(r.headers, "Warning:"));
	ds_resp_free(&r);
	r = POST(CMS "?fieldValidation=Strict", "{\"apiVersion\":\"v1\","
		 "\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"b\","
		 "\"name\":\"c\"}}");
	ds_status(&r, 400, "BadRequest", NULL);
	ck_assert_ptr_nonnull(strstr(ds_sget(r.json, "message"),
				     "duplicate field \"name\""));
	ds_resp_free(&r);
	ck_serving();
}
END_TEST

/* Opens a watch on a raw socket and reads until its first event. */
static int open_watch(const char *path)
{
	char *req = xasprintf("GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
	int fd = ds_connect();
	char buf[4096];
	ssize_t n;

	ck_assert(ds_send(fd, req, strlen(req)));
	free(req);
	n = recv(fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_gt(n, 0);
	buf[n] = '\0';
	ck_assert_msg(!strncmp(buf, "HTTP/1.1 200 ", 13), "%s", buf);
	return fd;
}

/* ---- nesting, NULs, numbers, UTF-8 ---- */

/* n levels of {"a": ... 1 ... } as a new string */
static char *nested(size_t n)
{
	size_t len = n * 6 + n + 2;
	char *s = xmalloc(len), *p = s;

	for (size_t i = 0; i < n; i++) {
		memcpy(p, "{\"a\":", 5);
		p += 5;
	}
	*p++ = '1';
	memset(p, '}', n);
	p[n] = '\0';
	return s;
}

START_TEST(deep_nesting)
{
	size_t n = 100000;
	char *deep = xmalloc(n + 1), *obj, *body;
	struct ds_resp r;

	/* past jansson's 2048 levels: refused at decode */
	memset(deep, '[', n);
	deep[n] = '\0';
	r = post_cm("application/json", deep, n);
	ck_bad_request(&r, "error decoding JSON: maximum parsing depth");
	ds_resp_free(&r);
	r = PATCH(CMS "/a", MERGE, deep);
	ck_bad_request(&r, "error decoding JSON: maximum parsing depth");
	ds_resp_free(&r);
	free(deep);
	/* 2000 levels decode and go through every recursive step */
	obj = nested(2000);
	body = xasprintf("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			 "\"kind\":\"Workload\",\"metadata\":{\"name\":\"d\","
			 "\"annotations\":{\"x\":\"y\"}},\"spec\":{\"podSets\":"
			 "[{\"name\":\"m\",\"count\":1}],\"deep\":%s}}", obj);
	r = POST(WL, body);
	ds_code(r, 201); /* pruned: an unknown field */
	ck_assert_ptr_null(ds_jget(r.json, "spec.deep"));
	ds_resp_free(&r);
	free(body);
	body = xasprintf("{\"metadata\":{\"labels\":{\"l\":\"v\"}},"
			 "\"spec\":{\"deep\":%s}}", obj);
	r = PATCH(WL "/d", MERGE, body);
	ds_code(r, 200);
	ds_resp_free(&r);
	free(body);
	body = xasprintf("[{\"op\":\"add\",\"path\":\"/spec/deep\",\"value\":"
			 "%s}]", obj);
	r = PATCH(WL "/d", JSONP, body);
	ds_code(r, 200);
	ds_resp_free(&r);
	free(body);
	free(obj);
	/* YAML stops at 256 levels */
	{
		size_t levels = 300, o = 0;
		char *y = xmalloc(levels * 4 + 16);

		for (size_t i = 0; i < levels; i++)
			o += (size_t)sprintf(y + o, "- ");
		sprintf(y + o, "1\n");
		r = post_cm("application/yaml", y, strlen(y));
		ck_bad_request(&r, "error converting YAML to JSON: ");
		ck_assert_ptr_nonnull(strstr(ds_sget(r.json, "message"),
					     "deeper than 256 levels"));
		ds_resp_free(&r);
		free(y);
	}
	ck_serving();
}
END_TEST

START_TEST(nul_bytes)
{
	static const char raw[] = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap"
				  "\",\"metadata\":{\"name\":\"n\0x\"}}";
	static const char trailing[] = "{\"apiVersion\":\"v1\"}\0garbage";
	static const char yaml[] = "apiVersion: v1\nkind: ConfigMap\n"
				   "metadata:\n  name: n\0x\n";
	struct ds_resp r;

	r = post_cm("application/json", raw, sizeof(raw) - 1);
	ck_bad_request(&r, "error decoding JSON: ");
	ds_resp_free(&r);
	r = post_cm("application/json", trailing, sizeof(trailing) - 1);
	ck_bad_request(&r, "error decoding JSON: ");
	ds_resp_free(&r);
	r = POST(CMS, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		 "\"metadata\":{\"name\":\"n\"},\"data\":{\"k\":\"a\\u0000b\"}}");
	ck_bad_request(&r, "error decoding JSON: \\u0000 is not allowed");
	ds_resp_free(&r);
	r = post_cm("application/yaml", yaml, sizeof(yaml) - 1);
	ck_bad_request(&r, "error converting YAML to JSON: ");
	ds_resp_free(&r);
	r = GET(CMS "/n");
	ds_status(&r, 404, "NotFound", NULL);
	ds_resp_free(&r);
	ck_serving();
}
END_TEST

START_TEST(huge_numbers)
{
	static const char *const bad[] = {
		"1e999", "-1e999", "123456789012345678901234567890",
		"-99999999999999999999",
	};
	struct ds_resp r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *b = xasprintf("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
				    "\"kind\":\"Workload\",\"metadata\":{"
				    "\"name\":\"h\"},\"spec\":{\"podSets\":[{"
				    "\"name\":\"m\",\"count\":%s}]}}", bad[i]);

		r = POST(WL, b);
		ck_bad_request(&r, "error decoding JSON: ");
		ds_resp_free(&r);
		free(b);
	}
	/* the largest int64 decodes, and the schema judges it */
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"h\"},\"spec\":{"
		 "\"podSets\":[{\"name\":\"m\",\"count\":9223372036854775807}]}}");
	ck_assert_msg(r.code == 201 || r.code == 422, "%ld %s", r.code,
		      r.body);
	ds_resp_free(&r);
	/* numbers in query parameters */
	r = GET(CMS "?limit=99999999999999999999999999");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = GET(CMS "?limit=-5");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = GET(CMS "?resourceVersion=99999999999999999999999&limit=1"
		"&resourceVersionMatch=Exact");
	ck_assert_msg(r.code == 400 || r.code == 504, "%ld %s", r.code,
		      r.body);
	ds_resp_free(&r);
	r = GET(CMS "?watch=1&resourceVersion=-5");
	ds_status(&r, 400, "BadRequest", "invalid resource version: -5");
	ds_resp_free(&r);
	r = GET(CMS "?watch=1&resourceVersion=99999999999999999999999");
	ds_status(&r, 400, "BadRequest", NULL);
	ds_resp_free(&r);
	/* a huge timeout is clamped, not overflowed (UBSan would tell) */
	r = POST(CMS, cm_a);
	ds_code(r, 201);
	ds_resp_free(&r);
	close(open_watch(CMS "?watch=1&timeoutSeconds=9223372036854775807"
			 "&resourceVersion=0"));
	ck_assert(ds_wait_connections(0, 1500));
	ck_serving();
}
END_TEST

START_TEST(invalid_utf8)
{
	static const char *const bad[] = {
		"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf8\x88\x80\x80",
	};
	struct ds_resp r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *j = xasprintf("{\"apiVersion\":\"v1\",\"kind\":"
				    "\"ConfigMap\",\"metadata\":{\"name\":"
				    "\"u\"},\"data\":{\"k\":\"%s\"}}", bad[i]);
		char *y = xasprintf("apiVersion: v1\nkind: ConfigMap\n"
				    "metadata:\n  name: u\ndata:\n  k: \"%s\"\n",
				    bad[i]);

		r = post_cm("application/json", j, strlen(j));
		ck_bad_request(&r, "error decoding JSON: ");
		ds_resp_free(&r);
		r = post_cm("application/yaml", y, strlen(y));
		ck_bad_request(&r, "error converting YAML to JSON: ");
		ds_resp_free(&r);
		free(j);
		free(y);
	}
	/* valid multi-byte text is fine */
	r = POST(CMS, "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		 "\"metadata\":{\"name\":\"u\"},\"data\":{\"k\":"
		 "\"gr\xc3\xbc\xc3\x9f \xe2\x82\xac \xf0\x9f\x99\x82\"}}");
	ds_code(r, 201);
	ds_resp_free(&r);
	ck_serving();
}
END_TEST

/* ---- slow and idle clients, the connection cap ---- */

START_TEST(slowloris)
{
	static const char head[] = "GET /version HTTP/1.1\r\nHost: slow\r\n"
				   "X-Padding: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
				   "aaaaaaaaaaaaaaaaaaaaaaa\r\n\r\n";
	int fd = ds_connect();
	long long t0 = t_mono_ms(), closed_at = -1;

	/* a byte every 100 ms: never silent, never done */
	for (size_t i = 0; i < sizeof(head) - 1; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (!ds_send(fd, head + i, 1) ||
		    (poll(&p, 1, 100) > 0 && ds_wait_closed(fd, 10))) {
			closed_at = t_mono_ms() - t0;
			break;
		}
		if (i == 3) {
			/* others are served meanwhile, at once */
			long long t = t_mono_ms();

			ck_serving();
			ck_assert_int_lt(t_mono_ms() - t, 500);
		}
	}
	if (closed_at < 0 && ds_wait_closed(fd, 2000))
		closed_at = t_mono_ms() - t0;
	ck_assert_msg(closed_at >= 0, "the slow client was never cut off");
	ck_assert_int_ge(closed_at, READ_TIMEOUT_MS - 100);
	ck_assert_int_lt(closed_at, READ_TIMEOUT_MS + 1500);
	close(fd);
	ck_assert(ds_wait_connections(0, 2000));
	ck_serving();
}
END_TEST

START_TEST(silent_and_stalled_clients)
{
	static const char partial[] =
		"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
		"Host: x\r\nContent-Type: application/json\r\n"
		"Content-Length: 100\r\n\r\n{\"apiVersion\"";
	static const char two[] = "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
				  "GET /version HTTP/1.1\r\nHost: x\r\n\r\n";
	int quiet = ds_connect(), stalled = ds_connect(), keep = ds_connect();
	char *answer;

	/* a keep-alive connection serves two requests, then idles */
	ck_assert(ds_send(keep, two, strlen(two)));
	answer = ds_recv_all(keep, 500);
	ck_assert_ptr_nonnull(strstr(answer, "\r\n\r\nok"));
	ck_assert_ptr_nonnull(strstr(answer, "\"gitVersion\":\"v1.32.4\""));
	free(answer);
	ck_assert(ds_send(stalled, partial, strlen(partial)));
	/* all three are cut off once the read deadline passes */
	ck_assert(ds_wait_closed(quiet, READ_TIMEOUT_MS + 1500));
	ck_assert(ds_wait_closed(stalled, 1500));
	ck_assert(ds_wait_closed(keep, 1500));
	close(quiet);
	close(stalled);
	close(keep);
	ck_assert(ds_wait_connections(0, 2000));
	ck_serving();
}
END_TEST

START_TEST(connection_cap)
{
	static const char get_version[] =
		"GET /version HTTP/1.1\r\nHost: x\r\n\r\n";
	int idle[MAX_CONNS], extra;
	char *answer;

	for (size_t i = 0; i < MAX_CONNS; i++)
		idle[i] = ds_connect();
	ck_assert(ds_wait_connections(MAX_CONNS, 1000));
	/* one more: answered 429 (client-go retries it) and closed */
	extra = ds_connect();
	ck_assert(ds_send(extra, get_version, strlen(get_version)));
	answer = ds_recv_all(extra, 1000);
	ck_assert_msg(!strncmp(answer, "HTTP/1.1 429 ", 13), "%s", answer);
	ck_assert_ptr_nonnull(strstr(answer, "Retry-After: 1\r\n"));
	ck_assert_ptr_nonnull(strstr(answer, "Connection: close\r\n"));
	ck_assert_ptr_nonnull(strstr(answer, "\"reason\":\"TooManyRequests\""));
	ck_assert_ptr_nonnull(strstr(answer, "\"message\":\"Too many requests, "
				     "please try again later.\""));
	ck_assert_ptr_nonnull(strstr(answer, "\"retryAfterSeconds\":1"));
	free(answer);
	close(extra);
	for (size_t i = 0; i < MAX_CONNS; i++)
		close(idle[i]);
	ck_assert(ds_wait_connections(0, 2000));
	ck_serving();
}
END_TEST

/* ---- clients that hang up ---- */

START_TEST(drop_mid_body)
{
	for (int i = 0; i < 20; i++) {
		int fd = send_head(i % 2 ? "PUT" : "POST",
				   i % 2 ? CMS "/a" : CMS,
				   i % 3 ? "100000" : NULL);

		if (i % 3)
			ck_assert(ds_send(fd, cm_a, 20));
		else
			ck_assert(ds_send(fd, "ffff\r\n{\"a", 10));
		close(fd);
	}
	ck_assert(ds_wait_connections(0, 2000));
	ck_serving();
}
END_TEST

START_TEST(drop_mid_response)
{
	char *val = xmalloc(64 * 1024 + 1);
	struct ds_resp r;

	memset(val, 'v', 64 * 1024);
	val[64 * 1024] = '\0';
	for (int i = 0; i < 40; i++) {
		char *b = xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
				    "\"metadata\":{\"name\":\"big-%d\"},\"data\":"
				    "{\"v\":\"%s\"}}", i, val);

		r = POST(CMS, b);
		ds_code(r, 201);
		ds_resp_free(&r);
		free(b);
	}
	free(val);
	/* a 2.5 MiB list; read a little of it, then reset the connection */
	for (int i = 0; i < 5; i++) {
		static const char req[] = "GET /api/v1/namespaces/default/"
					  "configmaps HTTP/1.1\r\nHost: x\r\n\r\n";
		struct linger lg = { 1, 0 };
		int fd = ds_connect();
		char buf[1024];

		ck_assert(ds_send(fd, req, strlen(req)));
		ck_assert_int_gt(recv(fd, buf, sizeof(buf), 0), 0);
		setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		close(fd);
	}
	ck_assert(ds_wait_connections(0, 3000));
	ck_serving();
}
END_TEST

START_TEST(drop_mid_watch)
{
	struct ds_resp r = POST(CMS, cm_a);
	int fds[6];
	long long t0;

	ds_resp_free(&r);
	/* with events flowing, quiet ones, Tables, bookmarks */
	fds[0] = open_watch(CMS "?watch=true");
	fds[1] = open_watch(CMS "?watch=true&fieldSelector=metadata.name%3Da");
	fds[2] = open_watch(WL "?watch=true&allowWatchBookmarks=true");
	fds[3] = open_watch("/api/v1/namespaces?watch=1&resourceVersion=1");
	fds[4] = open_watch(CMS "?watch=true&resourceVersion=0");
	fds[5] = open_watch(CMS "?watch=true");
	ck_assert(ds_wait_connections(6, 1000));
	r = PATCH(CMS "/a", MERGE, "{\"data\":{\"k\":\"w\"}}");
	ds_code(r, 200);
	ds_resp_free(&r);
	t0 = t_mono_ms();
	for (int i = 0; i < 6; i++)
		close(fds[i]);
	/* every watch's thread notices within its 250 ms poll (the bound
	 * leaves room for a loaded machine) */
	ck_assert(ds_wait_connections(0, 2000));
	ck_assert_int_lt(t_mono_ms() - t0, 2000);
	printf("robust: 6 dropped watches ended in %lld ms\n",
	       t_mono_ms() - t0);
	r = PATCH(CMS "/a", MERGE, "{\"data\":{\"k\":\"after\"}}");
	ds_code(r, 200);
	ds_resp_free(&r);
	ck_serving();
}
END_TEST

Suite *robust_suite(void)
{
	Suite *s = suite_create("robust");
	TCase *tc;

	tc = tcase_create("bad-input");
	tcase_add_checked_fixture(tc, start_with_crds, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, malformed_json);
	tcase_add_test(tc, malformed_yaml);
	tcase_add_test(tc, wrong_content_type);
	tcase_add_test(tc, unknown_paths);
	tcase_add_test(tc, body_too_large);
	tcase_add_test(tc, duplicate_keys);
	tcase_add_test(tc, deep_nesting);
	tcase_add_test(tc, nul_bytes);
	tcase_add_test(tc, huge_numbers);
	tcase_add_test(tc, invalid_utf8);
	suite_add_tcase(s, tc);

	tc = tcase_create("slow-clients");
	tcase_add_checked_fixture(tc, start_slow, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, slowloris);
	tcase_add_test(tc, silent_and_stalled_clients);
	suite_add_tcase(s, tc);

	tc = tcase_create("connection-cap");
	tcase_add_checked_fixture(tc, start_capped, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, connection_cap);
	suite_add_tcase(s, tc);

	tc = tcase_create("hang-ups");
	tcase_add_checked_fixture(tc, start_with_crds, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, drop_mid_body);
	tcase_add_test(tc, drop_mid_response);
	tcase_add_test(tc, drop_mid_watch);
	suite_add_tcase(s, tc);
	return s;
}
