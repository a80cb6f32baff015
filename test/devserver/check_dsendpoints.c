/*
 * Suite "dsendpoints": a Service with several --service-endpoint entries
 * (one per ready pod on a cluster). Each webhook call, admission and CRD
 * conversion alike, starts at the next endpoint (round robin) and skips
 * the ones that refuse the connection, so a write right after one
 * replica died still succeeds; when every endpoint refuses, the call
 * fails with the last one's dial error.
 *
 * In-process: webhook servers on 127.0.0.1 (TLS, certificate for
 * hooks.ep.svc) that count their calls, and "dead" endpoints that are
 * bound sockets without a listen (the port stays ours and refuses every
 * connection).
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "devserver/api.h"
#include "devserver/http.h"
#include "devserver/tls.h"
#include "suites.h"
#include "test/support/support.h"

#define NHOOKS 2

struct hook {
	struct http_server *srv;
	atomic_int admissions;  /* AdmissionReviews answered */
	atomic_int conversions; /* ConversionReviews answered */
};

static struct {
	struct tls_material tm;
	char *ca;                   /* base64 of tm.ca_pem */
	struct hook hooks[NHOOKS];
	int dead[2];                /* bound, not listening */
	unsigned dead_port[2];
	struct api *api;
} E;

/* ---- the webhook servers ---- */

static json_t *admit(const json_t *rev)
{
	return json_pack("{s:s, s:s, s:{s:O, s:b}}", "apiVersion",
			 "admission.k8s.io/v1", "kind", "AdmissionReview",
			 "response", "uid", json_object_get(
				 json_object_get(rev, "request"), "uid"),
			 "allowed", 1);
}

/* cohort (v1beta1) <-> cohortName (v1beta2), as the fixture CRD's
 * versions name it. */
static json_t *convert(const json_t *rev)
{
	const json_t *req = json_object_get(rev, "request"), *o;
	const char *want = json_string_value(json_object_get(req,
		"desiredAPIVersion"));
	bool to2 = want && strstr(want, "v1beta2");
	json_t *out = json_array();
	size_t i;

	json_array_foreach(json_object_get(req, "objects"), i, o) {
		json_t *c = json_deep_copy(o);
		json_t *spec = json_object_get(c, "spec");
		const char *from = to2 ? "cohort" : "cohortName";

		json_object_set_new(c, "apiVersion", json_string(want));
		if (json_object_get(spec, from)) {
			json_object_set(spec, to2 ? "cohortName" : "cohort",
					json_object_get(spec, from));
			json_object_del(spec, from);
		}
		json_array_append_new(out, c);
	}
	return json_pack("{s:s, s:s, s:{s:O, s:o, s:{s:s}}}", "apiVersion",
			 "apiextensions.k8s.io/v1", "kind", "ConversionReview",
			 "response", "uid", json_object_get(req, "uid"),
			 "convertedObjects", out, "result", "status",
			 "Success");
}

static void hook_serve(void *ctx, const struct http_req *req,
		       struct http_resp *resp)
{
	struct hook *h = ctx;
	json_t *rev = json_loadb(req->body, req->body_len, 0, NULL);
	const char *kind = json_string_value(json_object_get(rev, "kind"));

	if (kind && !strcmp(kind, "AdmissionReview")) {
		atomic_fetch_add(&h->admissions, 1);
		http_resp_json(resp, 200, admit(rev), NULL);
	} else if (kind && !strcmp(kind, "ConversionReview")) {
		atomic_fetch_add(&h->conversions, 1);
		http_resp_json(resp, 200, convert(rev), NULL);
	} else {
		http_resp_set(resp, 400, "text/plain", xstrdup("what?"), 5);
	}
	json_decref(rev);
}

/* A socket bound to 127.0.0.1:port (0: any) that never listens. */
static int bind_dead(unsigned port, unsigned *bound)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons((uint16_t)port) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_msg(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0,
		      "bind 127.0.0.1:%u", port);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &len), 0);
	*bound = ntohs(a.sin_port);
	return fd;
}

static void setup(void)
{
	static const char *const dns[] = { "hooks.ep.svc", NULL };
	struct err err = { "" };
	struct http_opts ho = { .addr = "127.0.0.1" };

	memset(&E, 0, sizeof(E));
	ck_assert_int_eq(tls_generate(dns, NULL, &E.tm, &err), 0);
	E.ca = b64_encode(E.tm.ca_pem, strlen(E.tm.ca_pem), B64_STD);
	ho.cert_pem = E.tm.cert_pem;
	ho.key_pem = E.tm.key_pem;
	for (int i = 0; i < NHOOKS; i++) {
		atomic_init(&E.hooks[i].admissions, 0);
		atomic_init(&E.hooks[i].conversions, 0);
		E.hooks[i].srv = http_server_start(&ho, hook_serve,
						   &E.hooks[i], &err);
		ck_assert_msg(E.hooks[i].srv != NULL, "%s", err.msg);
	}
	for (int i = 0; i < 2; i++)
		E.dead[i] = bind_dead(0, &E.dead_port[i]);
}

static void teardown(void)
{
	if (E.api)
		api_shutdown(E.api);
	for (int i = 0; i < NHOOKS; i++)
		http_server_stop(E.hooks[i].srv);
	api_free(E.api);
	for (int i = 0; i < 2; i++)
		close(E.dead[i]);
	tls_material_release(&E.tm);
	free(E.ca);
	memset(&E, 0, sizeof(E));
}

/* The devserver, with ep/hooks at the endpoints spec names in order:
 * 'a', 'b' (the webhook servers), 'x', 'y' (dead). */
static void start_api(const char *spec)
{
	struct api_endpoint eps[8];
	struct api_opts ao = { .watch_history = 100, .endpoints = eps };
	struct err err = { "" };

	for (const char *p = spec; *p; p++) {
		struct api_endpoint *e = &eps[ao.nendpoints++];

		*e = (struct api_endpoint){ "ep", "hooks", "127.0.0.1", 0 };
		if (*p == 'a' || *p == 'b')
			e->port = http_server_port(E.hooks[*p - 'a'].srv);
		else
			e->port = E.dead_port[*p - 'x'];
	}
	/* another Service's endpoints are not this one's */
	eps[ao.nendpoints++] = (struct api_endpoint){ "ep", "other",
						      "127.0.0.1", 1 };
	E.api = api_new(&ao, &err);
	ck_assert_msg(E.api != NULL, "%s", err.msg);
}

static json_t *client_config(const char *path)
{
	return json_pack("{s:{s:s, s:s, s:s, s:i}, s:s}", "service",
			 "namespace", "ep", "name", "hooks", "path", path,
			 "port", 443, "caBundle", E.ca);
}

/* A validating webhook (failurePolicy Fail) on ConfigMap creates. */
static void install_hook(void)
{
	struct api_ref r = { .group = "admissionregistration.k8s.io",
			     .resource = "validatingwebhookconfigurations" };
	struct api_status st = API_STATUS_INIT;
	json_t *o = json_pack(
		"{s:s, s:s, s:{s:s}, s:[{s:s, s:o, s:s, s:s, s:[s],"
		" s:[{s:[s], s:[s], s:[s], s:[s]}]}]}",
		"apiVersion", "admissionregistration.k8s.io/v1", "kind",
		"ValidatingWebhookConfiguration", "metadata", "name", "cms",
		"webhooks", "name", "cms.example.com", "clientConfig",
		client_config("/validate"), "failurePolicy", "Fail",
		"sideEffects", "None", "admissionReviewVersions", "v1",
		"rules", "operations", "CREATE", "apiGroups", "",
		"apiVersions", "v1", "resources", "configmaps");

	ck_assert_msg(api_internal_create(E.api, &r, o, NULL, &st) == 0,
		      "%s", st.message);
	json_decref(o);
}

static int create_cm(int i, struct api_status *st)
{
	struct api_ref r = { .group = "", .resource = "configmaps",
			     .ns = "default" };
	char *name = xasprintf("cm-%d", i);
	json_t *o = json_pack("{s:s, s:s, s:{s:s}}", "apiVersion", "v1",
			      "kind", "ConfigMap", "metadata", "name", name);
	int rc = api_internal_create(E.api, &r, o, NULL, st);

	json_decref(o);
	free(name);
	return rc;
}

static void create_ok(int from, int to)
{
	for (int i = from; i < to; i++) {
		struct api_status st = API_STATUS_INIT;

		ck_assert_msg(create_cm(i, &st) == 0, "cm-%d: %s", i,
			      st.message);
	}
}

static int calls(int h)
{
	return atomic_load(&E.hooks[h].admissions);
}

/* ---- admission ---- */

START_TEST(dead_endpoint_skipped)
{
	start_api("xa");
	install_hook();
	create_ok(0, 6);
	ck_assert_int_eq(calls(0), 6);
}
END_TEST

START_TEST(dead_endpoint_last)
{
	start_api("axy");
	install_hook();
	create_ok(0, 6);
	ck_assert_int_eq(calls(0), 6);
}
END_TEST

START_TEST(round_robin)
{
	start_api("ab");
	install_hook();
	create_ok(0, 6);
	ck_assert_int_eq(calls(0), 3);
	ck_assert_int_eq(calls(1), 3);
}
END_TEST

START_TEST(all_dead)
{
	struct api_status st = API_STATUS_INIT;
	char *a, *b;

	start_api("xy");
	install_hook();
	ck_assert_int_eq(create_cm(0, &st), -1);
	ck_assert_int_eq(st.code, 500);
	/* the last endpoint tried is named (the rotation decides which) */
	a = xasprintf("Internal error occurred: failed calling webhook "
		      "\"cms.example.com\": failed to call webhook: Post "
		      "\"https://hooks.ep.svc:443/validate?timeout=10s\": dial "
		      "tcp 127.0.0.1:%u: connect: connection refused",
		      E.dead_port[0]);
	b = xasprintf("Internal error occurred: failed calling webhook "
		      "\"cms.example.com\": failed to call webhook: Post "
		      "\"https://hooks.ep.svc:443/validate?timeout=10s\": dial "
		      "tcp 127.0.0.1:%u: connect: connection refused",
		      E.dead_port[1]);
	ck_assert_msg(!strcmp(st.message, a) || !strcmp(st.message, b), "%s",
		      st.message);
	status_release(&st);
	free(a);
	free(b);
}
END_TEST

/* Both replicas serve (the devserver keeps connections to both), then
 * one dies: every later write still succeeds, through the other. */
START_TEST(replica_dies)
{
	unsigned port = http_server_port(E.hooks[1].srv);
	int fd;

	start_api("ab");
	install_hook();
	create_ok(0, 4);
	ck_assert_int_eq(calls(0), 2);
	ck_assert_int_eq(calls(1), 2);
	http_server_stop(E.hooks[1].srv);
	E.hooks[1].srv = NULL;
	/* keep its port refusing (and ours) */
	fd = bind_dead(port, &port);
	create_ok(4, 10);
	ck_assert_int_eq(calls(0), 2 + 6);
	close(fd);
}
END_TEST

/* ---- CRD conversion ---- */

static void install_crd(void)
{
	struct api_ref r = { .group = "apiextensions.k8s.io",
			     .resource = "customresourcedefinitions" };
	struct api_status st = API_STATUS_INIT;
	json_t *crd = t_fixture_json("admission/clusterqueues-crd.json");

	json_object_set_new(json_object_get(crd, "spec"), "conversion",
			    json_pack("{s:s, s:{s:[s], s:o}}", "strategy",
				      "Webhook", "webhook",
				      "conversionReviewVersions", "v1",
				      "clientConfig",
				      client_config("/convert")));
	ck_assert_msg(api_internal_create(E.api, &r, crd, NULL, &st) == 0,
		      "crd: %s", st.message);
	json_decref(crd);
}

START_TEST(conversion_skips_dead)
{
	struct api_ref r = { .group = "kueue.x-k8s.io", .version = "v1beta1",
			     .resource = "clusterqueues" };
	int done = 0;

	start_api("xa");
	install_crd();
	for (int i = 0; i < 4; i++) {
		struct api_status st = API_STATUS_INIT;
		char *name = xasprintf("cq-%d", i);
		json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}",
				      "apiVersion", "kueue.x-k8s.io/v1beta1",
				      "kind", "ClusterQueue", "metadata",
				      "name", name, "spec", "cohort", "c");
		json_t *got = NULL;

		r.name = NULL;
		ck_assert_msg(api_internal_create(E.api, &r, o, NULL, &st) ==
			      0, "%s: %s", name, st.message);
		r.name = name;
		got = api_internal_get(E.api, &r, &st);
		ck_assert_msg(got != NULL, "%s: %s", name, st.message);
		ck_assert_str_eq(json_string_value(json_object_get(
			json_object_get(got, "spec"), "cohort")), "c");
		json_decref(got);
		json_decref(o);
		free(name);
		done++;
	}
	ck_assert_int_eq(done, 4);
	/* every create and get converted through the live endpoint */
	ck_assert_int_ge(atomic_load(&E.hooks[0].conversions), 2 * 4);
}
END_TEST

Suite *dsendpoints_suite(void)
{
	Suite *s = suite_create("dsendpoints");
	TCase *tc = tcase_create("admission");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, dead_endpoint_skipped);
	tcase_add_test(tc, dead_endpoint_last);
	tcase_add_test(tc, round_robin);
	tcase_add_test(tc, all_dead);
	tcase_add_test(tc, replica_dies);
	suite_add_tcase(s, tc);
	tc = tcase_create("conversion");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, conversion_skips_dead);
	suite_add_tcase(s, tc);
	return s;
}
