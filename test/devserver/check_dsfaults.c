/*
 * Suite "dsfaults": the devserver's fault injection (devserver/fault.h,
 * --fault-*). Each fault is observable at rate 1 and never happens at
 * rate 0; watches get only watch-drop and gone; health probes and
 * /debug/ get none; GET /debug/faults counts what was decided and
 * injected; and the same seed gives the same sequence of faults for the
 * same sequence of requests (a different seed, another one).
 *
 * The servers run in-process (dsclient.h) with api_opts.faults; the
 * flags' parsing is main.c's (see the suite "dsrestart" for the program).
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "devserver/api.h"
#include "devserver/fault.h"
#include "devserver/http.h"
#include "suites.h"
#include "test/devserver/dsclient.h"
#include "test/support/support.h"

static struct fault_opts fo;

static void start(double rate, enum fault_kind k)
{
	struct ds_opts o = { .faults = &fo };

	memset(&fo, 0, sizeof(fo));
	fo.seed = 1;
	fo.rate[k] = rate;
	ds_start(&o);
}

/* "injected" (or "checked") of kind name in GET /debug/faults. */
static long long faults_count(const char *name, const char *what)
{
	struct ds_resp r = GET("/debug/faults");
	char path[64];
	const json_t *v;
	long long n;

	ds_code(r, 200);
	snprintf(path, sizeof(path), "faults.%s.%s", name, what);
	v = ds_jget(r.json, path);
	ck_assert_msg(json_is_integer(v), "%s in %s", path, r.body);
	n = (long long)json_integer_value(v);
	ds_resp_free(&r);
	return n;
}

static char *cm(const char *name)
{
	return xasprintf("{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
			 "\"metadata\":{\"name\":\"%s\"},\"data\":{\"k\":"
			 "\"v\"}}", name);
}

/* Creates ConfigMap name through the internal API (no faults there:
 * they are the HTTP front's), so set-ups work at any rate. */
static void make_cm(const char *name)
{
	struct api_ref r = { .group = "", .resource = "configmaps",
			     .ns = "default" };
	struct api_status st = API_STATUS_INIT;
	char *text = cm(name);
	json_t *o = t_json(text);

	ck_assert_msg(api_internal_create(DS.api, &r, o, NULL, &st) == 0,
		      "%s", st.message);
	json_decref(o);
	free(text);
}

static bool cm_exists(const char *name)
{
	struct api_ref r = { .group = "", .resource = "configmaps",
			     .ns = "default", .name = name };
	struct api_status st = API_STATUS_INIT;
	json_t *o = api_internal_get(DS.api, &r, &st);

	status_release(&st);
	json_decref(o);
	return o != NULL;
}

/* ---- 429 and 500 ---- */

START_TEST(too_many_requests)
{
	struct ds_resp r;
	char *body = cm("a");

	start(1, FAULT_429);
	for (int i = 0; i < 3; i++) {
		r = GET(CMS);
		ds_status(&r, 429, "TooManyRequests",
			  "Too many requests, please try again later.");
		ck_assert_ptr_nonnull(strstr(r.headers, "Retry-After: 1\r\n"));
		ck_assert_int_eq(json_integer_value(ds_jget(r.json,
			"details.retryAfterSeconds")), 1);
		ds_resp_free(&r);
	}
	/* a write is refused before it is served */
	r = POST(CMS, body);
	ds_code(r, 429);
	ds_resp_free(&r);
	ck_assert(!cm_exists("a"));
	/* discovery too; health probes and /debug/ never */
	r = GET("/apis");
	ds_code(r, 429);
	ds_resp_free(&r);
	r = GET("/healthz");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = GET("/readyz");
	ds_code(r, 200);
	ds_resp_free(&r);
	ck_assert_int_eq(faults_count("429", "injected"), 5);
	ck_assert_int_eq(faults_count("429", "checked"), 5);
	ck_assert_int_eq(faults_count("500", "checked"), 0);
	free(body);
}
END_TEST

START_TEST(internal_error)
{
	struct ds_resp r;
	char *body = cm("a");

	start(1, FAULT_500);
	r = POST(CMS, body);
	ds_status(&r, 500, "InternalError", "Internal error occurred: "
		  "injected fault (cueue-devserver --fault-500)");
	ds_resp_free(&r);
	ck_assert(!cm_exists("a"));
	r = GET(CMS "/a");
	ds_code(r, 500);
	ds_resp_free(&r);
	ck_assert_int_eq(faults_count("500", "injected"), 2);
	free(body);
}
END_TEST

/* Rate 0: nothing is drawn, nothing injected, whatever the kind. */
START_TEST(rate_zero_never)
{
	struct ds_opts o = { .faults = &fo };
	char *names[40];

	memset(&fo, 0, sizeof(fo));
	fo.seed = 99;
	fo.slow_ms = 100000; /* would hang the test if it ever applied */
	ds_start(&o);
	for (int i = 0; i < 40; i++) {
		char *body;
		struct ds_resp r;

		names[i] = xasprintf("c%d", i);
		body = cm(names[i]);
		r = POST(CMS, body);
		ds_code(r, 201);
		ds_resp_free(&r);
		free(body);
	}
	{
		char *path = xasprintf(CMS "?watch=true&resourceVersion=1&"
				       "timeoutSeconds=1");
		json_t *evs = ds_watch_events(path, NULL);

		/* resumed from RV 1: every create, then a clean end */
		ck_assert_uint_eq(json_array_size(evs), 40);
		json_decref(evs);
		free(path);
	}
	for (int k = 0; k < FAULT_KINDS; k++) {
		ck_assert_int_eq(faults_count(fault_name(k), "checked"), 0);
		ck_assert_int_eq(faults_count(fault_name(k), "injected"), 0);
	}
	for (int i = 0; i < 40; i++)
		free(names[i]);
}
END_TEST

/* ---- slow ---- */

START_TEST(slow_answers)
{
	struct ds_opts o = { .faults = &fo };
	struct ds_resp r;
	char *body = cm("a");
	int64_t t0;

	memset(&fo, 0, sizeof(fo));
	fo.seed = 1;
	fo.rate[FAULT_SLOW] = 1;
	fo.slow_ms = 300;
	ds_start(&o);
	/* the write is done, its answer comes at least 300 ms later */
	t0 = t_mono_ms();
	r = POST(CMS, body);
	ds_code(r, 201);
	ds_resp_free(&r);
	ck_assert_int_ge(t_mono_ms() - t0, 300);
	ck_assert(cm_exists("a"));
	ck_assert_int_eq(faults_count("slow", "injected"), 1);
	{
		struct ds_resp d = GET("/debug/faults");

		ck_assert_int_eq(json_integer_value(ds_jget(d.json,
			"faults.slow.delayMs")), 300);
		ck_assert_int_eq(json_integer_value(ds_jget(d.json, "seed")),
				 1);
		ds_resp_free(&d);
	}
	free(body);
}
END_TEST

/* ---- watches ---- */

/* A raw watch request; returns everything read until the server closes
 * (or 10 s of silence). */
static char *raw_watch(const char *query)
{
	int fd = ds_connect();
	char *req = xasprintf("GET " CMS "?%s HTTP/1.1\r\nHost: x\r\n"
			      "Accept: application/json\r\n"
			      "Connection: close\r\n\r\n", query);
	char *all;

	ck_assert(ds_send(fd, req, strlen(req)));
	all = ds_recv_all(fd, 10000);
	close(fd);
	free(req);
	return all;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;

	for (const char *p = strstr(hay, needle); p;
	     p = strstr(p + 1, needle))
		n++;
	return n;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = strlen(s), b = strlen(tail);

	return a >= b && !strcmp(s + a - b, tail);
}

START_TEST(watch_drop)
{
	struct ds_resp r;
	char *all;

	start(1, FAULT_WATCH_DROP);
	make_cm("a");
	make_cm("b");
	make_cm("c");
	/* 1. a list-first watch: one ADDED, then the connection is cut
	 * without the final chunk */
	all = raw_watch("watch=true&timeoutSeconds=30");
	ck_assert_msg(!strncmp(all, "HTTP/1.1 200 ", 13), "%s", all);
	ck_assert_uint_eq(count(all, "\"type\":\"ADDED\""), 1);
	ck_assert_msg(!ends_with(all, "\r\n0\r\n\r\n"), "%s", all);
	free(all);
	/* 2. resumed from an RV: one event, cut */
	all = raw_watch("watch=true&resourceVersion=1&timeoutSeconds=30");
	ck_assert_uint_eq(count(all, "\"type\":"), 1);
	ck_assert_msg(!ends_with(all, "\r\n0\r\n\r\n"), "%s", all);
	free(all);
	ck_assert_int_eq(faults_count("watch-drop", "injected"), 2);
	ck_assert_int_eq(faults_count("watch-drop", "checked"), 2);
	/* watches get no 429/500/slow, and plain requests no watch-drop */
	r = GET(CMS);
	ds_code(r, 200);
	ds_resp_free(&r);
	ck_assert_int_eq(faults_count("watch-drop", "checked"), 2);
}
END_TEST

/* The control: at rate 0 the same watch ends cleanly at its timeout. */
START_TEST(watch_no_drop)
{
	char *all;

	start(0, FAULT_WATCH_DROP);
	make_cm("a");
	make_cm("b");
	all = raw_watch("watch=true&timeoutSeconds=1");
	ck_assert_uint_eq(count(all, "\"type\":\"ADDED\""), 2);
	ck_assert_msg(ends_with(all, "\r\n0\r\n\r\n"), "%s", all);
	free(all);
}
END_TEST

START_TEST(watch_gone)
{
	struct ds_resp r;
	json_t *evs;
	char *path, rv[32], *want;

	start(1, FAULT_GONE);
	make_cm("a");
	r = GET(CMS "/a");
	ds_code(r, 200);
	snprintf(rv, sizeof(rv), "%s", ds_rv(&r));
	ds_resp_free(&r);
	/* 1. resumed from an RV: the only event is ERROR 410 Expired */
	path = xasprintf(CMS "?watch=true&resourceVersion=%s&"
			 "timeoutSeconds=5", rv);
	evs = ds_watch_events(path, NULL);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(ds_ev_type(evs, 0), "ERROR");
	want = xasprintf("too old resource version: %s (%s)", rv, rv);
	ck_assert_str_eq(ds_sget(json_array_get(evs, 0), "object.message"),
			 want);
	ck_assert_str_eq(ds_sget(json_array_get(evs, 0), "object.reason"),
			 "Expired");
	ck_assert_int_eq(json_integer_value(ds_jget(json_array_get(evs, 0),
						    "object.code")), 410);
	json_decref(evs);
	free(path);
	free(want);
	/* 2. a watch that starts with a list is not resumed: no fault */
	evs = ds_watch_events(CMS "?watch=true&timeoutSeconds=1", NULL);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(ds_ev_type(evs, 0), "ADDED");
	json_decref(evs);
	ck_assert_int_eq(faults_count("gone", "injected"), 1);
	ck_assert_int_eq(faults_count("gone", "checked"), 1);
}
END_TEST

/* ---- admission webhook timeouts ---- */

/* A validating webhook for ConfigMaps at a url nothing listens on. */
static void install_hook(const char *policy)
{
	struct api_ref r = { .group = "admissionregistration.k8s.io",
			     .resource = "validatingwebhookconfigurations" };
	struct api_status st = API_STATUS_INIT;
	json_t *o = json_pack(
		"{s:s, s:s, s:{s:s}, s:[{s:s, s:{s:s}, s:s, s:s, s:[s],"
		" s:[{s:[s], s:[s], s:[s], s:[s]}]}]}",
		"apiVersion", "admissionregistration.k8s.io/v1", "kind",
		"ValidatingWebhookConfiguration", "metadata", "name", "cms",
		"webhooks", "name", "cms.example.com", "clientConfig", "url",
		"https://127.0.0.1:1/validate", "failurePolicy", policy,
		"sideEffects", "None", "admissionReviewVersions", "v1",
		"rules", "operations", "CREATE", "apiGroups", "",
		"apiVersions", "v1", "resources", "configmaps");

	ck_assert_msg(api_internal_create(DS.api, &r, o, NULL, &st) == 0,
		      "%s", st.message);
	json_decref(o);
}

START_TEST(webhook_timeout)
{
	struct ds_resp r;
	char *body = cm("a");

	start(1, FAULT_WEBHOOK_TIMEOUT);
	install_hook("Fail");
	r = POST(CMS, body);
	ds_status(&r, 500, "InternalError", "Internal error occurred: "
		  "failed calling webhook \"cms.example.com\": failed to call "
		  "webhook: Post \"https://127.0.0.1:1/validate?timeout=10s\": "
		  "context deadline exceeded");
	ds_resp_free(&r);
	ck_assert(!cm_exists("a"));
	ck_assert_int_eq(faults_count("webhook-timeout", "injected"), 1);
	free(body);
}
END_TEST

START_TEST(webhook_timeout_ignored)
{
	struct ds_resp r;
	char *body = cm("a");

	start(1, FAULT_WEBHOOK_TIMEOUT);
	install_hook("Ignore");
	r = POST(CMS, body);
	ds_code(r, 201);
	ds_resp_free(&r);
	ck_assert_int_eq(faults_count("webhook-timeout", "injected"), 1);
	free(body);
}
END_TEST

/* The control: at rate 0 the call is made (and refused). */
START_TEST(webhook_no_timeout)
{
	struct ds_resp r;
	char *body = cm("a");

	start(0, FAULT_WEBHOOK_TIMEOUT);
	install_hook("Fail");
	r = POST(CMS, body);
	ds_status(&r, 500, "InternalError", "Internal error occurred: "
		  "failed calling webhook \"cms.example.com\": failed to call "
		  "webhook: Post \"https://127.0.0.1:1/validate?timeout=10s\": "
		  "dial tcp 127.0.0.1:1: connect: connection refused");
	ds_resp_free(&r);
	free(body);
}
END_TEST

/* ---- reproducibility ---- */

/* The codes of n GETs against a server with --fault-429 0.5 and seed,
 * as a string of '.' (200) and 'x' (429). */
static char *pattern(uint64_t seed, int n)
{
	struct ds_opts o = { .faults = &fo };
	char *p = xmalloc((size_t)n + 1);

	memset(&fo, 0, sizeof(fo));
	fo.seed = seed;
	fo.rate[FAULT_429] = 0.5;
	ds_start(&o);
	for (int i = 0; i < n; i++) {
		struct ds_resp r = GET(CMS);

		ck_assert(r.code == 200 || r.code == 429);
		p[i] = r.code == 200 ? '.' : 'x';
		ds_resp_free(&r);
	}
	p[n] = '\0';
	ds_stop();
	return p;
}

START_TEST(seed_reproducible)
{
	char *a = pattern(7, 64), *b = pattern(7, 64), *c = pattern(8, 64);

	ck_assert_str_eq(a, b);
	ck_assert_str_ne(a, c);
	/* a rate of one half: both outcomes happen */
	ck_assert_ptr_nonnull(strchr(a, '.'));
	ck_assert_ptr_nonnull(strchr(a, 'x'));
	free(a);
	free(b);
	free(c);
}
END_TEST

/* The decisions themselves: per-kind streams, so enabling another kind
 * does not change a kind's sequence. */
START_TEST(streams_independent)
{
	struct fault_opts one = { .seed = 5 }, two = { .seed = 5 };
	struct faults *f1, *f2;
	struct err err = { "" };
	double r;

	one.rate[FAULT_500] = 0.3;
	two.rate[FAULT_500] = 0.3;
	two.rate[FAULT_429] = 0.6;
	f1 = fault_new(&one);
	f2 = fault_new(&two);
	for (int i = 0; i < 200; i++) {
		(void)fault_hit(f2, FAULT_429);
		ck_assert(fault_hit(f1, FAULT_500) == fault_hit(f2, FAULT_500));
	}
	ck_assert(!fault_hit(NULL, FAULT_500));
	ck_assert(!fault_enabled(NULL));
	ck_assert(fault_enabled(f1));
	fault_free(f1);
	fault_free(f2);
	fault_free(NULL);
	/* rates */
	ck_assert_int_eq(fault_parse_rate("0.25", &r, &err), 0);
	ck_assert(r == 0.25);
	ck_assert_int_eq(fault_parse_rate("1", &r, &err), 0);
	ck_assert_int_eq(fault_parse_rate("0", &r, &err), 0);
	ck_assert_int_eq(fault_parse_rate("1.5", &r, &err), -1);
	ck_assert_str_eq(err.msg, "1.5: want a rate in [0, 1]");
	ck_assert_int_eq(fault_parse_rate("-0.1", &r, &err), -1);
	ck_assert_int_eq(fault_parse_rate("nan", &r, &err), -1);
	ck_assert_int_eq(fault_parse_rate("", &r, &err), -1);
	ck_assert_int_eq(fault_parse_rate("0.5x", &r, &err), -1);
}
END_TEST

Suite *dsfaults_suite(void)
{
	Suite *s = suite_create("dsfaults");
	TCase *tc = tcase_create("requests");

	tcase_add_checked_fixture(tc, NULL, ds_stop);
	tcase_add_test(tc, too_many_requests);
	tcase_add_test(tc, internal_error);
	tcase_add_test(tc, rate_zero_never);
	tcase_add_test(tc, slow_answers);
	suite_add_tcase(s, tc);
	tc = tcase_create("watches");
	tcase_add_checked_fixture(tc, NULL, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, watch_drop);
	tcase_add_test(tc, watch_no_drop);
	tcase_add_test(tc, watch_gone);
	suite_add_tcase(s, tc);
	tc = tcase_create("webhooks");
	tcase_add_checked_fixture(tc, NULL, ds_stop);
	tcase_add_test(tc, webhook_timeout);
	tcase_add_test(tc, webhook_timeout_ignored);
	tcase_add_test(tc, webhook_no_timeout);
	suite_add_tcase(s, tc);
	tc = tcase_create("seed");
	tcase_add_test(tc, seed_reproducible);
	tcase_add_test(tc, streams_independent);
	suite_add_tcase(s, tc);
	return s;
}
