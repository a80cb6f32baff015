/*
 * Suite "dswire": the devserver's HTTP front end (devserver/http.c) as
 * clients see it on the wire.
 *
 *  - A chunked upload (no Content-Length) that crosses the 3 MiB body
 *    limit is answered 413 RequestEntityTooLarge while the client is
 *    still sending (kube-apiserver answers once it read limit + 1 bytes),
 *    with "Connection: close", and the client reads that answer: a raw
 *    socket that sends until the answer is readable, and libcurl (which
 *    stops its upload on an early error answer), over HTTP and over TLS.
 *  - TLS versions, with the real openssl client: TLS 1.0 and 1.1
 *    handshakes fail, TLS 1.2 and 1.3 succeed (kube-apiserver's minimum
 *    is TLS 1.2). OpenSSL 3's client itself refuses TLS 1.0/1.1 at its
 *    default security level, so the client runs with @SECLEVEL=0: the
 *    refusal seen is the server's.
 */
#include <curl/curl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "devserver/http.h"
#include "suites.h"
#include "test/devserver/dsclient.h"

#define CAP 3145728u
#define SEND_MAX ((size_t)64 << 20) /* the client gives up past this */

static void ck_413(const char *answer)
{
	ck_assert_msg(!strncmp(answer, "HTTP/1.1 413 ", 13), "%s", answer);
	ck_assert_ptr_nonnull(strstr(answer, "Connection: close"));
	ck_assert_ptr_nonnull(strstr(answer, "Content-Type: application/json"));
	ck_assert_ptr_nonnull(strstr(answer, "\"kind\":\"Status\""));
	ck_assert_ptr_nonnull(strstr(answer, "\"reason\":\"RequestEntity"
					     "TooLarge\""));
	ck_assert_ptr_nonnull(strstr(answer, "\"message\":\"Request entity "
					     "too large: limit is 3145728\""));
	ck_assert_ptr_nonnull(strstr(answer, "\"code\":413"));
}

/* ---- a raw chunked upload ---- */

START_TEST(chunked_over_limit_raw)
{
	static const char head[] =
		"POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\n"
		"Host: x\r\nContent-Type: application/json\r\n"
		"Transfer-Encoding: chunked\r\n\r\n";
	char *chunk = xmalloc(65536 + 16), *answer;
	size_t sent = 0, clen;
	int fd = ds_connect();

	/* one chunk of 64 KiB: "10000\r\n" + data + "\r\n" */
	memcpy(chunk, "10000\r\n", 7);
	memset(chunk + 7, ' ', 65536);
	chunk[7] = '{';
	memcpy(chunk + 7 + 65536, "\r\n", 2);
	clen = 7 + 65536 + 2;
	ck_assert(ds_send(fd, head, strlen(head)));
	/* 1. send until the answer is readable (a client that stops at
	 * the answer, as libcurl and Go's client do); never the final
	 * chunk */
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN | POLLOUT };

		ck_assert_int_eq(poll(&p, 1, 30000), 1);
		if (p.revents & (POLLIN | POLLHUP | POLLERR))
			break;
		ck_assert_msg(sent < SEND_MAX, "no answer after %zu bytes",
			      sent);
		ck_assert(ds_send(fd, chunk, clen));
		sent += clen;
	}
	/* 2. the answer came mid-body: before the whole upload, after the
	 * cap */
	ck_assert_uint_gt(sent, CAP);
	ck_assert_uint_lt(sent, SEND_MAX);
	answer = ds_recv_all(fd, 5000);
	ck_413(answer);
	free(answer);
	close(fd);
	free(chunk);
	/* 3. the server goes on serving */
	{
		struct ds_resp r = GET("/api/v1/namespaces/default");

		ds_code(r, 200);
		ds_resp_free(&r);
	}
	ck_assert(ds_wait_connections(0, 5000));
}
END_TEST

/* ---- libcurl's chunked upload ---- */

struct feed {
	size_t sent;     /* body bytes handed to libcurl */
};

static size_t feed_read(char *buf, size_t size, size_t n, void *ud)
{
	struct feed *f = ud;
	size_t want = size * n;

	if (f->sent >= SEND_MAX)
		return 0;
	if (want > SEND_MAX - f->sent)
		want = SEND_MAX - f->sent;
	memset(buf, ' ', want);
	if (f->sent == 0 && want)
		buf[0] = '{';
	f->sent += want;
	return want;
}

static size_t keep(char *p, size_t sz, size_t n, void *ud)
{
	char **buf = ud;
	size_t old = *buf ? strlen(*buf) : 0;

	*buf = xrealloc(*buf, old + sz * n + 1);
	memcpy(*buf + old, p, sz * n);
	(*buf)[old + sz * n] = '\0';
	return sz * n;
}

/* POSTs an endless chunked body with libcurl; returns what it read. */
static void curl_chunked(long *code, char **headers, char **body,
			 size_t *sent)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct feed f = { 0 };
	char *url = xasprintf("%s/api/v1/namespaces/default/configmaps",
			      http_server_url(DS.http));
	CURLcode rc;

	*headers = *body = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Transfer-Encoding: chunked");
	if (DS.token) {
		char *auth = xasprintf("Authorization: Bearer %s", DS.token);

		h = curl_slist_append(h, auth);
		free(auth);
	}
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_READFUNCTION, feed_read);
	curl_easy_setopt(c, CURLOPT_READDATA, &f);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, keep);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, keep);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, headers);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	if (DS.tm.ca_pem) {
		struct curl_blob blob = { DS.tm.ca_pem, strlen(DS.tm.ca_pem),
					  CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	}
	rc = curl_easy_perform(c);
	ck_assert_msg(rc == CURLE_OK, "curl: %s", curl_easy_strerror(rc));
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, code);
	*sent = f.sent;
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
}

static void ck_curl_413(void)
{
	long code = 0;
	char *headers, *body;
	size_t sent;
	json_t *j;

	curl_chunked(&code, &headers, &body, &sent);
	ck_assert_int_eq(code, 413);
	ck_assert_uint_lt(sent, SEND_MAX);
	ck_assert_ptr_nonnull(headers);
	ck_assert_ptr_nonnull(strstr(headers, "Connection: close"));
	j = json_loads(body ? body : "", 0, NULL);
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(ds_sget(j, "kind"), "Status");
	ck_assert_str_eq(ds_sget(j, "reason"), "RequestEntityTooLarge");
	ck_assert_str_eq(ds_sget(j, "message"),
			 "Request entity too large: limit is 3145728");
	json_decref(j);
	free(headers);
	free(body);
}

START_TEST(chunked_over_limit_curl)
{
	struct ds_resp r;

	ck_curl_413();
	/* a second one on a fresh connection, and the server serves on */
	ck_curl_413();
	r = GET("/api/v1/namespaces/default");
	ds_code(r, 200);
	ds_resp_free(&r);
	ck_assert(ds_wait_connections(0, 5000));
}
END_TEST

static void start_plain(void)
{
	ds_start(NULL);
}

static void start_tls(void)
{
	struct ds_opts o = { .tls = true, .token = "wire-token" };

	ds_start(&o);
	DS.token = "wire-token";
}

/* ---- TLS versions ---- */

/* Runs openssl s_client with flag against DS; returns its exit status
 * and, in out, the line naming the negotiated protocol ("" if none). */
static int s_client(const char *flag, char *out, size_t n)
{
	char *cmd = xasprintf("openssl s_client -connect 127.0.0.1:%u %s "
			      "-cipher 'DEFAULT:@SECLEVEL=0' </dev/null 2>&1",
			      http_server_port(DS.http), flag);
	FILE *p = popen(cmd, "r");
	char line[512];
	int st;

	ck_assert_ptr_nonnull(p);
	out[0] = '\0';
	while (fgets(line, sizeof(line), p))
		if (!strncmp(line, "New, ", 5))
			snprintf(out, n, "%s", line);
	st = pclose(p);
	free(cmd);
	ck_assert_msg(WIFEXITED(st), "openssl s_client: status %d", st);
	return WEXITSTATUS(st);
}

START_TEST(tls_versions)
{
	char got[512];

	/* refused: the handshake fails, nothing is negotiated */
	ck_assert_int_ne(s_client("-tls1", got, sizeof(got)), 0);
	ck_assert_msg(!strncmp(got, "New, (NONE)", 11), "TLS 1.0: %s", got);
	ck_assert_int_ne(s_client("-tls1_1", got, sizeof(got)), 0);
	ck_assert_msg(!strncmp(got, "New, (NONE)", 11), "TLS 1.1: %s", got);
	/* accepted */
	ck_assert_int_eq(s_client("-tls1_2", got, sizeof(got)), 0);
	ck_assert_msg(!strncmp(got, "New, TLSv1.2,", 13), "TLS 1.2: %s", got);
	ck_assert_int_eq(s_client("-tls1_3", got, sizeof(got)), 0);
	ck_assert_msg(!strncmp(got, "New, TLSv1.3,", 13), "TLS 1.3: %s", got);
}
END_TEST

Suite *dswire_suite(void)
{
	Suite *s = suite_create("dswire");
	TCase *tc = tcase_create("chunked-over-limit");

	tcase_add_checked_fixture(tc, start_plain, ds_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, chunked_over_limit_raw);
	tcase_add_test(tc, chunked_over_limit_curl);
	suite_add_tcase(s, tc);
	tc = tcase_create("chunked-over-limit-tls");
	tcase_add_checked_fixture(tc, start_tls, ds_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, chunked_over_limit_curl);
	suite_add_tcase(s, tc);
	tc = tcase_create("tls-versions");
	tcase_add_checked_fixture(tc, start_tls, ds_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, tls_versions);
	suite_add_tcase(s, tc);
	return s;
}
