/*
 * dsclient: the in-process devserver and its HTTP clients for the test
 * suites (see dsclient.h).
 */
#include "test/devserver/dsclient.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "devserver/api.h"
#include "devserver/http.h"
#include "test/support/support.h"

struct ds_server DS;

/* ---- the server under test ---- */

void ds_start(const struct ds_opts *o)
{
	static const struct ds_opts plain = { 0 };
	struct err err = { "" };
	struct api_opts ao = { .bookmark_ms = 300 };
	struct http_opts ho = { .addr = "127.0.0.1",
				.max_body = (size_t)3 << 20 };
	static const char *const dns[] = { "localhost", NULL };
	static const char *const ips[] = { "127.0.0.1", NULL };

	if (!o)
		o = &plain;
	ao.watch_history = o->history ? o->history : 1000;
	ao.data_dir = o->data_dir;
	ao.faults = o->faults;
	ho.token = o->token;
	ho.read_timeout_ms = o->read_timeout_ms;
	ho.max_connections = o->max_connections;
	memset(&DS, 0, sizeof(DS));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	DS.api = api_new(&ao, &err);
	ck_assert_msg(DS.api != NULL, "api_new: %s", err.msg);
	if (o->tls) {
		ck_assert_int_eq(tls_generate(dns, ips, &DS.tm, &err), 0);
		ho.cert_pem = DS.tm.cert_pem;
		ho.key_pem = DS.tm.key_pem;
	}
	DS.http = http_server_start(&ho, api_serve, DS.api, &err);
	ck_assert_msg(DS.http != NULL, "http: %s", err.msg);
}

void ds_stop(void)
{
	api_shutdown(DS.api);
	http_server_stop(DS.http);
	api_free(DS.api);
	tls_material_release(&DS.tm);
	memset(&DS, 0, sizeof(DS));
}

/* ---- HTTP over libcurl ---- */

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	char **buf = ud;
	size_t old = *buf ? strlen(*buf) : 0;

	*buf = xrealloc(*buf, old + sz * n + 1);
	memcpy(*buf + old, p, sz * n);
	(*buf)[old + sz * n] = '\0';
	return sz * n;
}

static int perform(const char *method, const char *path, const char *ctype,
		   const char *body, size_t len, const char *accept,
		   struct ds_resp *r)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char *url = xasprintf("%s%s", DS.url ? DS.url
					     : http_server_url(DS.http), path);
	char hb[512];
	CURLcode rc;

	memset(r, 0, sizeof(*r));
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (DS.tm.ca_pem) {
		struct curl_blob blob = { DS.tm.ca_pem, strlen(DS.tm.ca_pem),
					  CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (DS.token) {
		snprintf(hb, sizeof(hb), "Authorization: Bearer %s", DS.token);
		h = curl_slist_append(h, hb);
	}
	if (ctype) {
		snprintf(hb, sizeof(hb), "Content-Type: %s", ctype);
		h = curl_slist_append(h, hb);
	}
	snprintf(hb, sizeof(hb), "Accept: %s",
		 accept ? accept : "application/json");
	h = curl_slist_append(h, hb);
	/* Bodies over 1 MiB go with libcurl's "Expect: 100-continue": a
	 * body over the server's ceiling is answered 413 from its headers,
	 * and without the handshake libcurl could still be sending when the
	 * connection closed, and report a send error instead of the 413
	 * (seen under ASan). */
	if (!body || len <= (1u << 20))
		h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)len);
	}
	rc = curl_easy_perform(c);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->code);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
	if (rc != CURLE_OK) {
		ds_resp_free(r);
		memset(r, 0, sizeof(*r));
		return (int)rc;
	}
	if (!r->body)
		r->body = xstrdup("");
	r->len = strlen(r->body);
	r->json = json_loads(r->body, 0, NULL);
	return 0;
}

struct ds_resp ds_call_len(const char *method, const char *path,
			   const char *ctype, const char *body, size_t len,
			   const char *accept)
{
	struct ds_resp r;
	int rc = perform(method, path, ctype, body, len, accept, &r);

	ck_assert_msg(rc == CURLE_OK, "%s %s: %s", method, path,
		      curl_easy_strerror((CURLcode)rc));
	return r;
}

int ds_try_call(const char *method, const char *path, const char *ctype,
		const char *body, struct ds_resp *out)
{
	return perform(method, path, ctype, body, body ? strlen(body) : 0,
		       NULL, out);
}

struct ds_resp ds_call(const char *method, const char *path,
		       const char *ctype, const char *body,
		       const char *accept)
{
	return ds_call_len(method, path, ctype, body,
			   body ? strlen(body) : 0, accept);
}

void ds_resp_free(struct ds_resp *r)
{
	free(r->body);
	free(r->headers);
	json_decref(r->json);
}

const json_t *ds_jget(const json_t *j, const char *path)
{
	char buf[256], *save = NULL;
	const json_t *cur = j;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && cur;
	     t = strtok_r(NULL, ".", &save))
		cur = json_object_get(cur, t);
	return cur;
}

const char *ds_sget(const json_t *j, const char *path)
{
	return json_string_value(ds_jget(j, path));
}

void ds_status(const struct ds_resp *r, long code, const char *reason,
	       const char *message)
{
	ck_assert_msg(r->code == code, "want %ld, got %ld: %s", code, r->code,
		      r->body);
	ck_assert_msg(r->json != NULL, "not JSON: %s", r->body);
	ck_assert_str_eq(ds_sget(r->json, "kind"), "Status");
	ck_assert_str_eq(ds_sget(r->json, "apiVersion"), "v1");
	ck_assert_str_eq(ds_sget(r->json, "status"), "Failure");
	ck_assert_int_eq(json_integer_value(json_object_get(r->json, "code")),
			 code);
	if (reason)
		ck_assert_str_eq(ds_sget(r->json, "reason"), reason);
	if (message)
		ck_assert_str_eq(ds_sget(r->json, "message"), message);
}

/* ---- fixtures ---- */

char *ds_fixture(const char *rel)
{
	char *path = t_src_path(rel);
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = xmalloc((size_t)n + 1);
	ck_assert_int_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	free(path);
	return buf;
}

void ds_install_crds(const char *only)
{
	static const char *const files[] = {
		"test/fixtures/crds/clusterqueues.yaml",
		"test/fixtures/crds/workloads.yaml",
		"test/fixtures/crds/resourceflavors.yaml",
	};

	for (size_t i = 0; i < 3; i++) {
		struct ds_resp r;
		char *y;

		if (only && !strstr(files[i], only))
			continue;
		y = ds_fixture(files[i]);
		r = ds_call("POST",
			"/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
			"application/yaml", y, NULL);
		ds_code(r, 201);
		ds_resp_free(&r);
		free(y);
	}
}

const char ds_wl_x[] =
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	"\"metadata\":{\"name\":\"x\",\"labels\":{\"team\":\"ta\"}},"
	"\"spec\":{\"queueName\":\"q\",\"podSets\":[{\"name\":\"main\","
	"\"count\":1}]}}";

char *ds_wl(const char *name, const char *team)
{
	return xasprintf("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			 "\"kind\":\"Workload\",\"metadata\":{\"name\":\"%s\","
			 "\"labels\":{\"team\":\"%s\"}},\"spec\":{\"queueName\":"
			 "\"q\",\"podSets\":[{\"name\":\"main\",\"count\":1}]}}",
			 name, team);
}

const char *ds_rv(const struct ds_resp *r)
{
	return ds_sget(r->json, "metadata.resourceVersion");
}

/* ---- watches ---- */

json_t *ds_watch_events(const char *path, const char *accept)
{
	struct ds_resp r = ds_call("GET", path, NULL, NULL, accept);
	json_t *evs = json_array();
	char *save = NULL;

	ds_code(r, 200);
	for (char *l = strtok_r(r.body, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		json_t *e = json_loads(l, 0, NULL);

		ck_assert_msg(e != NULL, "bad event line: %s", l);
		json_array_append_new(evs, e);
	}
	ds_resp_free(&r);
	return evs;
}

const char *ds_ev_type(const json_t *evs, size_t i)
{
	return ds_sget(json_array_get(evs, i), "type");
}

/* ---- raw sockets ---- */

int ds_connect(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	ck_assert_int_ge(fd, 0);
	a.sin_port = htons((uint16_t)http_server_port(DS.http));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_msg(connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0,
		      "connect: %s", strerror(errno));
	return fd;
}

bool ds_send(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
	}
	return true;
}

char *ds_recv_all(int fd, int timeout_ms)
{
	char *buf = xstrdup(""), tmp[4096];
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, timeout_ms) <= 0)
			break;
		n = recv(fd, tmp, sizeof(tmp), 0);
		if (n <= 0)
			break;
		buf = xrealloc(buf, len + (size_t)n + 1);
		memcpy(buf + len, tmp, (size_t)n);
		len += (size_t)n;
		buf[len] = '\0';
	}
	return buf;
}

bool ds_wait_closed(int fd, int timeout_ms)
{
	long long until = t_mono_ms() + timeout_ms;
	char tmp[4096];

	for (;;) {
		long long left = until - t_mono_ms();
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return false;
		n = recv(fd, tmp, sizeof(tmp), 0);
		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return true;
	}
}

bool ds_wait_connections(size_t n, int timeout_ms)
{
	long long until = t_mono_ms() + timeout_ms;

	for (;;) {
		if (http_server_connections(DS.http) == n)
			return true;
		if (t_mono_ms() >= until)
			return false;
		usleep(20 * 1000);
	}
}
