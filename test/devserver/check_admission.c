/*
 * Suite "admission": admission and conversion webhooks end to end. Each
 * test starts, in-process, an HTTPS webhook server (http.h over
 * libmicrohttpd + GnuTLS, certificate for hooks.webhooks.svc and
 * 127.0.0.1 from tls.h) whose answer depends on the request path, and the
 * devserver API with --service-endpoint webhooks/hooks mapped to it (plus
 * a plain HTTP front end for the tests that need Warning headers, dryRun
 * or kubectl's user). Webhook configurations and CRDs are written through
 * the internal API; the tests assert the AdmissionReview /
 * ConversionReview the webhook received and the exact outcome
 * (k8s-api.md §11, §12).
 */
#include <curl/curl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "devserver/api.h"
#include "devserver/http.h"
#include "devserver/tls.h"
#include "model/alloc.h"
#include "suites.h"
#include "test/support/support.h"

#define MAXREQ 64
#define ADM "admissionregistration.k8s.io"
#define MWC "mutatingwebhookconfigurations"
#define VWC "validatingwebhookconfigurations"

/* ---- the webhook server ---- */

struct seen {
	char *path;      /* request path */
	char *timeout;   /* ?timeout= */
	char *host;      /* Host header */
	char *ctype;     /* Content-Type */
	char *accept;    /* Accept */
	json_t *body;    /* the review */
};

static struct {
	pthread_mutex_t lock;
	struct seen v[MAXREQ];
	size_t n;
} W = { PTHREAD_MUTEX_INITIALIZER, { { 0 } }, 0 };

static struct {
	struct api *api;
	struct http_server *hooks;    /* the webhook server */
	struct http_server *http;     /* the devserver's HTTP front end */
	struct tls_material tm;       /* the webhook server's CA and cert */
	struct tls_material other;    /* an unrelated CA */
	char *ca;                     /* base64 of tm.ca_pem */
	char *other_ca;               /* base64 of other.ca_pem */
} S;

static char *b64(const char *s)
{
	size_t n = strlen(s);
	char *out = xmalloc(4 * ((n + 2) / 3) + 1);

	EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)s,
			(int)n);
	return out;
}

static char *dup_or_empty(const char *s)
{
	return xstrdup(s ? s : "");
}

static void record(const struct http_req *req, json_t *body)
{
	struct seen *s;

	pthread_mutex_lock(&W.lock);
	if (W.n < MAXREQ) {
		s = &W.v[W.n++];
		s->path = xstrdup(req->path);
		s->timeout = dup_or_empty(http_query(req, "timeout"));
		s->host = dup_or_empty(http_header(req, "Host"));
		s->ctype = dup_or_empty(http_header(req, "Content-Type"));
		s->accept = dup_or_empty(http_header(req, "Accept"));
		s->body = json_incref(body);
	}
	pthread_mutex_unlock(&W.lock);
}

/* How many requests path got so far. */
static size_t count(const char *path)
{
	size_t n = 0;

	pthread_mutex_lock(&W.lock);
	for (size_t i = 0; i < W.n; i++)
		if (!strcmp(W.v[i].path, path))
			n++;
	pthread_mutex_unlock(&W.lock);
	return n;
}

/* The body of the last request to path (new reference), or NULL. */
static json_t *last(const char *path, struct seen *meta)
{
	json_t *b = NULL;

	pthread_mutex_lock(&W.lock);
	for (size_t i = W.n; i-- > 0;)
		if (!strcmp(W.v[i].path, path)) {
			b = json_incref(W.v[i].body);
			if (meta)
				*meta = W.v[i];
			break;
		}
	pthread_mutex_unlock(&W.lock);
	return b;
}

/* The body of the first request to path (new reference), or NULL. */
static json_t *first(const char *path)
{
	json_t *b = NULL;

	pthread_mutex_lock(&W.lock);
	for (size_t i = 0; i < W.n && !b; i++)
		if (!strcmp(W.v[i].path, path))
			b = json_incref(W.v[i].body);
	pthread_mutex_unlock(&W.lock);
	return b;
}

static void seen_reset(void)
{
	pthread_mutex_lock(&W.lock);
	for (size_t i = 0; i < W.n; i++) {
		free(W.v[i].path);
		free(W.v[i].timeout);
		free(W.v[i].host);
		free(W.v[i].ctype);
		free(W.v[i].accept);
		json_decref(W.v[i].body);
	}
	W.n = 0;
	pthread_mutex_unlock(&W.lock);
}

static const json_t *jget(const json_t *j, const char *path)
{
	char buf[256], *save = NULL;
	const json_t *cur = j;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && cur;
	     t = strtok_r(NULL, ".", &save))
		cur = json_object_get(cur, t);
	return cur;
}

static const char *sget(const json_t *j, const char *path)
{
	return json_string_value(jget(j, path));
}

/* An AdmissionReview answer for rev with extra response fields. */
static json_t *answer(const json_t *rev, bool allowed, json_t *extra)
{
	const char *av = sget(rev, "apiVersion");
	json_t *r = json_pack("{s:s, s:b}", "uid", sget(rev, "request.uid")
			      ? sget(rev, "request.uid") : "", "allowed",
			      allowed);

	if (extra) {
		json_object_update(r, extra);
		json_decref(extra);
	}
	return json_pack("{s:s, s:s, s:o}", "apiVersion",
			 av ? av : "admission.k8s.io/v1", "kind",
			 "AdmissionReview", "response", r);
}

static json_t *with_patch(const char *ops)
{
	char *p = b64(ops);
	json_t *e = json_pack("{s:s, s:s}", "patchType", "JSONPatch", "patch",
			      p);

	free(p);
	return e;
}

/* The ConversionReview answer: cohort (v1beta1) <-> cohortName
 * (v1beta2); the converter also scribbles on metadata.generation, which
 * the server must restore. mode: 0 ok, 1 Failure, 2 renames. */
static json_t *convert(const json_t *rev, int mode)
{
	const json_t *req = json_object_get(rev, "request"), *o;
	const char *want = sget(req, "desiredAPIVersion");
	json_t *out = json_array(), *res;
	size_t i;
	bool to2 = want && strstr(want, "v1beta2") != NULL;

	json_array_foreach(json_object_get(req, "objects"), i, o) {
		json_t *c = json_deep_copy(o), *spec = json_object_get(c,
								       "spec");
		const char *from = to2 ? "cohort" : "cohortName";
		const char *to = to2 ? "cohortName" : "cohort";
		json_t *m = json_object_get(c, "metadata");

		json_object_set_new(c, "apiVersion", json_string(want));
		if (json_object_get(spec, from)) {
			json_object_set(spec, to, json_object_get(spec, from));
			json_object_del(spec, from);
		}
		json_object_set_new(m, "generation", json_integer(42));
		if (mode == 2) {
			char *n = xasprintf("%s-renamed", sget(c,
							       "metadata.name"));

			json_object_set_new(m, "name", json_string(n));
			free(n);
		}
		json_array_append_new(out, c);
	}
	res = mode == 1
		? json_pack("{s:s, s:s}", "status", "Failure", "message",
			    "conversion is broken")
		: json_pack("{s:s}", "status", "Success");
	return json_pack("{s:s, s:s, s:{s:s, s:o, s:o}}", "apiVersion",
			 "apiextensions.k8s.io/v1", "kind", "ConversionReview",
			 "response", "uid", sget(req, "uid"), "convertedObjects",
			 out, "result", res);
}

static void hook_serve(void *ctx, const struct http_req *req,
		       struct http_resp *resp)
{
	json_t *rev = json_loadb(req->body, req->body_len, 0, NULL);
	const char *p = req->path;
	json_t *a = NULL;

	(void)ctx;
	record(req, rev);
	if (!strcmp(p, "/allow")) {
		a = answer(rev, true, NULL);
	} else if (!strcmp(p, "/deny")) {
		a = answer(rev, false, json_pack("{s:{s:i, s:s, s:s}}",
			"status", "code", 403, "reason", "Forbidden",
			"message", "no jobs today"));
	} else if (!strcmp(p, "/deny-bare")) {
		a = answer(rev, false, NULL);
	} else if (!strcmp(p, "/deny-422")) {
		a = answer(rev, false, json_pack("{s:{s:i, s:s, s:s, s:{s:s}}}",
			"status", "code", 422, "reason", "Invalid", "message",
			"spec.queueName: Required value", "details", "name",
			"x"));
	} else if (!strcmp(p, "/suspend")) {
		a = answer(rev, true, with_patch(
			"[{\"op\":\"add\",\"path\":\"/spec/suspend\","
			"\"value\":true}]"));
	} else if (!strcmp(p, "/label-one")) {
		a = answer(rev, true, with_patch(
			"[{\"op\":\"add\",\"path\":\"/metadata/labels/one\","
			"\"value\":\"1\"}]"));
	} else if (!strcmp(p, "/label-two")) {
		a = answer(rev, true, with_patch(
			"[{\"op\":\"add\",\"path\":\"/metadata/labels/two\","
			"\"value\":\"2\"}]"));
	} else if (!strcmp(p, "/badpatch")) {
		a = answer(rev, true, with_patch(
			"[{\"op\":\"add\",\"path\":\"/spec/no/such/parent\","
			"\"value\":1}]"));
	} else if (!strcmp(p, "/vpatch")) {
		a = answer(rev, true, with_patch(
			"[{\"op\":\"add\",\"path\":\"/metadata/labels/v\","
			"\"value\":\"1\"}]"));
	} else if (!strcmp(p, "/warn")) {
		a = answer(rev, true, json_pack("{s:[s, s]}", "warnings",
			"first warning", "second \"quoted\" warning"));
	} else if (!strcmp(p, "/wrong-uid")) {
		a = answer(rev, true, json_pack("{s:s}", "uid", "nope"));
	} else if (!strcmp(p, "/no-kind")) {
		a = answer(rev, true, NULL);
		json_object_del(a, "apiVersion");
		json_object_del(a, "kind");
	} else if (!strcmp(p, "/slow")) {
		usleep(1500 * 1000);
		a = answer(rev, true, NULL);
	} else if (!strcmp(p, "/malformed")) {
		http_resp_set(resp, 200, "application/json",
			      xstrdup("this is not json"), 16);
	} else if (!strcmp(p, "/error500")) {
		http_resp_set(resp, 500, "text/plain", xstrdup("boom\n"), 5);
	} else if (!strcmp(p, "/convert")) {
		a = convert(rev, 0);
	} else if (!strcmp(p, "/convert-fail")) {
		a = convert(rev, 1);
	} else if (!strcmp(p, "/convert-rename")) {
		a = convert(rev, 2);
	} else {
		http_resp_set(resp, 404, "text/plain", xstrdup("404"), 3);
	}
	if (a)
		http_resp_json(resp, 200, a, NULL);
	json_decref(rev);
}

/* ---- the servers ---- */

static void start(void)
{
	static const char *const dns[] = { "hooks.webhooks.svc",
					   "nohooks.webhooks.svc", NULL };
	static const char *const ips[] = { "127.0.0.1", NULL };
	struct err err = { "" };
	struct http_opts ho = { .addr = "127.0.0.1",
				.max_body = (size_t)3 << 20 };
	struct api_endpoint ep = { "webhooks", "hooks", "127.0.0.1", 0 };
	struct api_opts ao = { .watch_history = 100, .endpoints = &ep,
			       .nendpoints = 1 };

	memset(&S, 0, sizeof(S));
	seen_reset();
	ck_assert_int_eq(tls_generate(dns, ips, &S.tm, &err), 0);
	ck_assert_int_eq(tls_generate(dns, ips, &S.other, &err), 0);
	S.ca = b64(S.tm.ca_pem);
	S.other_ca = b64(S.other.ca_pem);
	ho.cert_pem = S.tm.cert_pem;
	ho.key_pem = S.tm.key_pem;
	S.hooks = http_server_start(&ho, hook_serve, NULL, &err);
	ck_assert_msg(S.hooks != NULL, "webhook server: %s", err.msg);
	ep.port = http_server_port(S.hooks);
	S.api = api_new(&ao, &err);
	ck_assert_msg(S.api != NULL, "api_new: %s", err.msg);
	ho.cert_pem = ho.key_pem = NULL;
	S.http = http_server_start(&ho, api_serve, S.api, &err);
	ck_assert_msg(S.http != NULL, "http: %s", err.msg);
}

static void stop(void)
{
	api_shutdown(S.api);
	http_server_stop(S.http);
	http_server_stop(S.hooks);
	api_free(S.api);
	tls_material_release(&S.tm);
	tls_material_release(&S.other);
	free(S.ca);
	free(S.other_ca);
	seen_reset();
	memset(&S, 0, sizeof(S));
}

/* ---- building webhook configurations ---- */

/* A clientConfig for the service path (or url when path has "://"). */
static json_t *client_config(const char *svc, const char *path,
			     const char *ca)
{
	if (strstr(path, "://"))
		return json_pack("{s:s, s:s}", "url", path, "caBundle", ca);
	return json_pack("{s:{s:s, s:s, s:s, s:i}, s:s}", "service",
			 "namespace", "webhooks", "name", svc, "path", path,
			 "port", 443, "caBundle", ca);
}

/* A webhook: rules is JSON text; extra (JSON text or NULL) is merged. */
static json_t *hook(const char *name, const char *path, const char *rules,
		    const char *extra)
{
	json_t *h = json_pack("{s:s, s:[s], s:s, s:o, s:o}", "name", name,
			      "admissionReviewVersions", "v1", "sideEffects",
			      "None", "clientConfig",
			      client_config("hooks", path, S.ca), "rules",
			      t_json(rules));

	if (extra) {
		json_t *e = t_json(extra);

		json_object_update(h, e);
		json_decref(e);
	}
	return h;
}

static int create(const char *group, const char *version,
		  const char *resource, const char *ns, const json_t *obj,
		  json_t **out, struct api_status *st)
{
	struct api_ref r = { .group = group, .version = version,
			     .resource = resource, .ns = ns };

	return api_internal_create(S.api, &r, obj, out, st);
}

/* Installs a configuration holding one webhook (taken). */
static void install(bool mutating, const char *name, json_t *h)
{
	struct api_status st = API_STATUS_INIT;
	json_t *cfg = json_pack("{s:s, s:s, s:{s:s}, s:[o]}", "apiVersion",
				ADM "/v1", "kind", mutating
				? "MutatingWebhookConfiguration"
				: "ValidatingWebhookConfiguration", "metadata",
				"name", name, "webhooks", h);
	int rc = create(ADM, "v1", mutating ? MWC : VWC, NULL, cfg, NULL,
			&st);

	ck_assert_msg(rc == 0, "install %s: %s", name, st.message);
	json_decref(cfg);
}

#define JOB_RULE(ops) \
	"[{\"operations\":[" ops "],\"apiGroups\":[\"batch\"]," \
	"\"apiVersions\":[\"v1\"],\"resources\":[\"jobs\"]}]"
#define CM_RULE(ops) \
	"[{\"operations\":[" ops "],\"apiGroups\":[\"\"]," \
	"\"apiVersions\":[\"v1\"],\"resources\":[\"configmaps\"]}]"

static json_t *job(const char *name)
{
	json_t *j = t_fixture_json("admission/job.json");

	json_object_set_new(json_object_get(j, "metadata"), "name",
			    json_string(name));
	return j;
}

static json_t *cm(const char *name, const char *labels)
{
	return json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:s}}", "apiVersion",
			 "v1", "kind", "ConfigMap", "metadata", "name", name,
			 "labels", t_json(labels ? labels : "{}"), "data", "a",
			 "b");
}

static int create_job(const char *name, json_t **out, struct api_status *st)
{
	json_t *j = job(name);
	int rc = create("batch", "v1", "jobs", "default", j, out, st);

	json_decref(j);
	return rc;
}

static int create_cm(const char *ns, const char *name, const char *labels,
		     struct api_status *st)
{
	json_t *c = cm(name, labels);
	int rc = create("", "v1", "configmaps", ns, c, NULL, st);

	json_decref(c);
	return rc;
}

/* j equals the JSON text want. */
static bool json_is(const json_t *j, const char *want)
{
	json_t *w = t_json(want);
	bool eq = json_equal(j, w);

	json_decref(w);
	return eq;
}

static void ck_status(const struct api_status *st, int code,
		      const char *reason, const char *message)
{
	ck_assert_msg(st->code == code, "want %d, got %d: %s", code, st->code,
		      st->message ? st->message : "");
	ck_assert_str_eq(st->reason, reason);
	ck_assert_str_eq(st->message, message);
}

/* ---- mutating ---- */

START_TEST(mutating_patch_and_review_shape)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "batch", .version = "v1",
			     .resource = "jobs", .ns = "default",
			     .name = "sample" };
	struct seen meta;
	json_t *out = NULL, *rev, *got;
	const json_t *req;
	const char *uid;

	install(true, "mjob", hook("mjob.kb.io", "/suspend",
				   JOB_RULE("\"CREATE\""), NULL));
	ck_assert_int_eq(create_job("sample", &out, &st), 0);
	ck_assert(json_is_true(jget(out, "spec.suspend")));
	json_decref(out);
	got = api_internal_get(S.api, &r, &st);
	ck_assert(json_is_true(jget(got, "spec.suspend")));
	json_decref(got);

	ck_assert_uint_eq(count("/suspend"), 1);
	rev = last("/suspend", &meta);
	ck_assert_str_eq(meta.timeout, "10s");
	ck_assert_str_eq(meta.host, "hooks.webhooks.svc");
	ck_assert_str_eq(meta.ctype, "application/json");
	ck_assert_str_eq(meta.accept, "application/json, */*");
	ck_assert_str_eq(sget(rev, "kind"), "AdmissionReview");
	ck_assert_str_eq(sget(rev, "apiVersion"), "admission.k8s.io/v1");
	req = json_object_get(rev, "request");
	uid = sget(req, "uid");
	ck_assert_uint_eq(strlen(uid), 36);
	ck_assert_int_eq(uid[14], '4');
	ck_assert(json_is(json_object_get(req, "kind"),
		"{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"}"));
	ck_assert(json_is(json_object_get(req, "resource"),
		"{\"group\":\"batch\",\"version\":\"v1\","
		"\"resource\":\"jobs\"}"));
	ck_assert(json_equal(json_object_get(req, "requestKind"),
			     json_object_get(req, "kind")));
	ck_assert(json_equal(json_object_get(req, "requestResource"),
			     json_object_get(req, "resource")));
	ck_assert_ptr_null(json_object_get(req, "subResource"));
	ck_assert_ptr_null(json_object_get(req, "requestSubResource"));
	ck_assert_str_eq(sget(req, "name"), "sample");
	ck_assert_str_eq(sget(req, "namespace"), "default");
	ck_assert_str_eq(sget(req, "operation"), "CREATE");
	ck_assert_str_eq(sget(req, "userInfo.username"), "cueue-devserver");
	ck_assert_str_eq(sget(req, "object.metadata.name"), "sample");
	ck_assert_str_eq(sget(req, "object.kind"), "Job");
	/* mutating webhooks run before uid and creationTimestamp */
	ck_assert_ptr_null(jget(req, "object.metadata.uid"));
	ck_assert(json_is_null(json_object_get(req, "oldObject")));
	ck_assert(json_is_false(json_object_get(req, "dryRun")));
	ck_assert_str_eq(sget(req, "options.kind"), "CreateOptions");
	ck_assert_str_eq(sget(req, "options.apiVersion"), "meta.k8s.io/v1");
	json_decref(rev);
}
END_TEST

START_TEST(mutating_order_and_chaining)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "", .version = "v1",
			     .resource = "configmaps", .ns = "default",
			     .name = "chain" };
	json_t *rev, *got;

	/* Created first but sorted second: configurations run by name. */
	install(true, "b-second", hook("two.example.com", "/label-two",
				       CM_RULE("\"*\""), NULL));
	install(true, "a-first", hook("one.example.com", "/label-one",
				      CM_RULE("\"*\""), NULL));
	install(false, "check", hook("v.example.com", "/allow",
				     CM_RULE("\"CREATE\""), NULL));
	ck_assert_int_eq(create_cm("default", "chain", NULL, &st), 0);
	got = api_internal_get(S.api, &r, &st);
	ck_assert_str_eq(sget(got, "metadata.labels.one"), "1");
	ck_assert_str_eq(sget(got, "metadata.labels.two"), "2");
	json_decref(got);
	rev = last("/label-one", NULL);
	ck_assert_ptr_null(jget(rev, "request.object.metadata.labels.two"));
	json_decref(rev);
	rev = last("/label-two", NULL);
	ck_assert_str_eq(sget(rev, "request.object.metadata.labels.one"), "1");
	json_decref(rev);
	/* validating webhooks see the final object, uid and all */
	rev = last("/allow", NULL);
	ck_assert_str_eq(sget(rev, "request.object.metadata.labels.two"), "2");
	ck_assert_ptr_nonnull(sget(rev, "request.object.metadata.uid"));
	json_decref(rev);
}
END_TEST

START_TEST(patch_errors_ignore_failure_policy)
{
	struct api_status st = API_STATUS_INIT;

	install(true, "bad", hook("bad.example.com", "/badpatch",
				  CM_RULE("\"CREATE\""),
				  "{\"failurePolicy\":\"Ignore\"}"));
	ck_assert_int_eq(create_cm("default", "p", NULL, &st), -1);
	ck_assert_int_eq(st.code, 500);
	ck_assert_str_eq(st.reason, "InternalError");
	ck_assert_msg(!strncmp(st.message, "Internal error occurred: ", 25),
		      "%s", st.message);
	status_release(&st);
}
END_TEST

START_TEST(generate_name_is_empty_for_mutation)
{
	struct api_status st = API_STATUS_INIT;
	json_t *c = cm("", NULL), *out = NULL, *rev;

	json_object_del(json_object_get(c, "metadata"), "name");
	json_object_set_new(json_object_get(c, "metadata"), "generateName",
			    json_string("gen-"));
	install(true, "m", hook("m.example.com", "/allow",
				CM_RULE("\"CREATE\""), NULL));
	ck_assert_int_eq(create("", "v1", "configmaps", "default", c, &out,
				&st), 0);
	ck_assert(!strncmp(sget(out, "metadata.name"), "gen-", 4));
	rev = last("/allow", NULL);
	ck_assert_ptr_null(jget(rev, "request.name"));
	ck_assert_ptr_null(jget(rev, "request.object.metadata.name"));
	json_decref(rev);
	json_decref(out);
	json_decref(c);
}
END_TEST

/* ---- denial ---- */

START_TEST(deny_with_message)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "batch", .version = "v1",
			     .resource = "jobs", .ns = "default",
			     .name = "sample" };

	install(false, "vjob", hook("vjob.kb.io", "/deny",
				    JOB_RULE("\"CREATE\", \"UPDATE\""), NULL));
	ck_assert_int_eq(create_job("sample", NULL, &st), -1);
	ck_status(&st, 403, "Forbidden", "admission webhook \"vjob.kb.io\" "
		  "denied the request: no jobs today");
	status_release(&st);
	ck_assert_ptr_null(api_internal_get(S.api, &r, &st));
	ck_assert_int_eq(st.code, 404);
	status_release(&st);
}
END_TEST

START_TEST(deny_codes)
{
	struct api_status st = API_STATUS_INIT;

	install(false, "bare", hook("bare.example.com", "/deny-bare",
				    CM_RULE("\"CREATE\""),
				    "{\"objectSelector\":{\"matchLabels\":"
				    "{\"which\":\"bare\"}}}"));
	install(false, "inv", hook("inv.example.com", "/deny-422",
				   CM_RULE("\"CREATE\""),
				   "{\"objectSelector\":{\"matchLabels\":"
				   "{\"which\":\"inv\"}}}"));
	ck_assert_int_eq(create_cm("default", "a", "{\"which\":\"bare\"}",
				   &st), -1);
	ck_status(&st, 400, "", "admission webhook \"bare.example.com\" "
		  "denied the request without explanation");
	status_release(&st);
	ck_assert_int_eq(create_cm("default", "b", "{\"which\":\"inv\"}",
				   &st), -1);
	ck_status(&st, 422, "Invalid", "admission webhook \"inv.example.com\""
		  " denied the request: spec.queueName: Required value");
	ck_assert_str_eq(sget(st.details, "name"), "x");
	status_release(&st);
}
END_TEST

START_TEST(delete_operation)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "", .version = "v1",
			     .resource = "configmaps", .ns = "default",
			     .name = "gone" };
	json_t *rev;

	ck_assert_int_eq(create_cm("default", "gone", NULL, &st), 0);
	install(false, "vdel", hook("vdel.example.com", "/deny",
				    CM_RULE("\"DELETE\""), NULL));
	ck_assert_int_eq(api_internal_delete(S.api, &r, NULL, NULL, &st), -1);
	ck_status(&st, 403, "Forbidden", "admission webhook "
		  "\"vdel.example.com\" denied the request: no jobs today");
	status_release(&st);
	rev = last("/deny", NULL);
	ck_assert_str_eq(sget(rev, "request.operation"), "DELETE");
	ck_assert(json_is_null(jget(rev, "request.object")));
	ck_assert_str_eq(sget(rev, "request.oldObject.metadata.name"), "gone");
	ck_assert_str_eq(sget(rev, "request.options.kind"), "DeleteOptions");
	json_decref(rev);
}
END_TEST

START_TEST(delete_mutation_is_refused)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "", .version = "v1",
			     .resource = "configmaps", .ns = "default",
			     .name = "gone" };

	ck_assert_int_eq(create_cm("default", "gone", NULL, &st), 0);
	install(true, "mdel", hook("mdel.example.com", "/label-one",
				   CM_RULE("\"DELETE\""), NULL));
	ck_assert_int_eq(api_internal_delete(S.api, &r, NULL, NULL, &st), -1);
	ck_status(&st, 500, "InternalError", "Internal error occurred: "
		  "admission webhook \"mdel.example.com\" attempted to modify "
		  "the object, which is not supported for this operation");
	status_release(&st);
	ck_assert_uint_eq(count("/label-one"), 1);
}
END_TEST

/* ---- call failures: failurePolicy Fail and Ignore ---- */

struct failure_case {
	const char *name;
	bool mutating;
	const char *svc;      /* service name (or NULL for path as url) */
	const char *path;     /* path, or a full url */
	const char *extra;    /* webhook fields */
	bool other_ca;        /* caBundle of an unrelated CA */
	const char *message;  /* after "failed calling webhook \"<n>\": ";
				 %UID% is the request uid */
};

static const struct failure_case failures[] = {
	{ "malformed", true, "hooks", "/malformed", NULL, false,
	  "failed to call webhook: couldn't get version/kind; json parse "
	  "error: " },
	{ "wrong-uid", true, "hooks", "/wrong-uid", NULL, false,
	  "received invalid webhook response: expected response.uid="
	  "\"%UID%\", got \"nope\"" },
	{ "no-kind", false, "hooks", "/no-kind", NULL, false,
	  "received invalid webhook response: expected webhook response of "
	  "admission.k8s.io/v1, Kind=AdmissionReview, got /, Kind=" },
	{ "error500", false, "hooks", "/error500", NULL, false,
	  "failed to call webhook: an error on the server (\"boom\") has "
	  "prevented the request from succeeding" },
	{ "not-found", false, "hooks", "/nowhere", NULL, false,
	  "failed to call webhook: the server could not find the requested "
	  "resource" },
	{ "timeout", false, "hooks", "/slow", "{\"timeoutSeconds\":1}", false,
	  "failed to call webhook: Post \"https://hooks.webhooks.svc:443/slow"
	  "?timeout=1s\": context deadline exceeded" },
	{ "validating-patch", false, "hooks", "/vpatch", NULL, false,
	  "received invalid webhook response: validating webhook may not "
	  "return response.patch" },
	{ "ca-mismatch", true, "hooks", "/allow", NULL, true,
	  "failed to call webhook: Post \"https://hooks.webhooks.svc:443/allow"
	  "?timeout=10s\": tls: failed to verify certificate: x509: "
	  "certificate signed by unknown authority" },
	{ "no-endpoint", false, "nohooks", "/allow", NULL, false,
	  "failed to call webhook: Post \"https://nohooks.webhooks.svc:443/"
	  "allow?timeout=10s\": no endpoints available for service "
	  "\"nohooks\"" },
	{ "refused", false, NULL, "https://127.0.0.1:1/allow", NULL, false,
	  "failed to call webhook: Post \"https://127.0.0.1:1/allow?timeout="
	  "10s\": dial tcp 127.0.0.1:1: connect: connection refused" },
	{ "review-versions", false, "hooks", "/allow",
	  "{\"admissionReviewVersions\":[\"v2\"]}", false,
	  "could not create admission objects: webhook does not accept known "
	  "AdmissionReview versions (v1, v1beta1)" },
};

static json_t *failure_hook(const struct failure_case *c, const char *name,
			    const char *policy)
{
	char extra[256];
	json_t *h;

	snprintf(extra, sizeof(extra), "{\"failurePolicy\":\"%s\"}", policy);
	h = hook(name, c->path, CM_RULE("\"CREATE\""), extra);
	json_object_set_new(h, "clientConfig", client_config(c->svc ? c->svc
		: "hooks", c->path, c->other_ca ? S.other_ca : S.ca));
	if (c->extra) {
		json_t *e = t_json(c->extra);

		json_object_update(h, e);
		json_decref(e);
	}
	return h;
}

START_TEST(call_failures)
{
	const struct failure_case *c = &failures[_i];
	struct api_status st = API_STATUS_INIT;
	char want[1024], *uidp;
	const char *name = "hook.example.com";
	json_t *rev;

	install(c->mutating, "fail", failure_hook(c, name, "Fail"));
	ck_assert_int_eq(create_cm("default", "x", NULL, &st), -1);
	ck_assert_int_eq(st.code, 500);
	ck_assert_str_eq(st.reason, "InternalError");
	snprintf(want, sizeof(want), "Internal error occurred: failed calling "
		 "webhook \"%s\": %s", name, c->message);
	uidp = strstr(want, "%UID%");
	if (uidp) {
		char tail[512];

		rev = last(c->path, NULL);
		snprintf(tail, sizeof(tail), "%s", uidp + 5);
		snprintf(uidp, sizeof(want) - (size_t)(uidp - want), "%s%s",
			 sget(rev, "request.uid"), tail);
		json_decref(rev);
	}
	if (!strcmp(c->name, "malformed"))
		ck_assert_msg(!strncmp(st.message, want, strlen(want)),
			      "%s\nwant prefix %s", st.message, want);
	else
		ck_assert_str_eq(st.message, want);
	/* details.causes[0].message: the error without the prefix */
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(
		json_object_get(st.details, "causes"), 0), "message")),
		st.message + strlen("Internal error occurred: "));
	status_release(&st);
}
END_TEST

START_TEST(call_failures_ignored)
{
	const struct failure_case *c = &failures[_i];
	struct api_status st = API_STATUS_INIT;

	install(c->mutating, "fail", failure_hook(c, "hook.example.com",
						  "Ignore"));
	ck_assert_msg(create_cm("default", "x", NULL, &st) == 0, "%s",
		      st.message);
}
END_TEST

START_TEST(url_client_config)
{
	struct api_status st = API_STATUS_INIT;
	char *url = xasprintf("https://127.0.0.1:%u/deny",
			      http_server_port(S.hooks));
	struct seen meta;
	json_t *rev;

	install(false, "byurl", hook("url.example.com", url,
				     CM_RULE("\"CREATE\""), NULL));
	ck_assert_int_eq(create_cm("default", "x", NULL, &st), -1);
	ck_status(&st, 403, "Forbidden", "admission webhook "
		  "\"url.example.com\" denied the request: no jobs today");
	status_release(&st);
	rev = last("/deny", &meta);
	ck_assert_ptr_nonnull(rev);
	ck_assert(!strncmp(meta.host, "127.0.0.1", 9));
	json_decref(rev);
	free(url);
}
END_TEST

START_TEST(review_version_v1beta1)
{
	struct api_status st = API_STATUS_INIT;
	json_t *rev;

	install(true, "old", hook("old.example.com", "/label-one",
				  CM_RULE("\"CREATE\""),
				  "{\"admissionReviewVersions\":[\"v1beta1\","
				  "\"v1\"]}"));
	ck_assert_int_eq(create_cm("default", "x", NULL, &st), 0);
	rev = last("/label-one", NULL);
	ck_assert_str_eq(sget(rev, "apiVersion"), "admission.k8s.io/v1beta1");
	json_decref(rev);
}
END_TEST

/* ---- matching ---- */

START_TEST(namespace_selector)
{
	struct api_status st = API_STATUS_INIT;
	json_t *ns = json_pack("{s:s, s:s, s:{s:s, s:{s:s}}}", "apiVersion",
			       "v1", "kind", "Namespace", "metadata", "name",
			       "team-a", "labels", "team", "a");
	json_t *pc = json_pack("{s:s, s:s, s:{s:s}, s:i}", "apiVersion",
			       "scheduling.k8s.io/v1", "kind", "PriorityClass",
			       "metadata", "name", "high", "value", 1000);
	json_t *rev;

	ck_assert_int_eq(create("", "v1", "namespaces", NULL, ns, NULL, &st),
			 0);
	install(false, "ns", hook("ns.example.com", "/deny",
		"[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\","
		"\"scheduling.k8s.io\"],\"apiVersions\":[\"v1\"],"
		"\"resources\":[\"configmaps\",\"priorityclasses\","
		"\"namespaces\"]}]",
		"{\"namespaceSelector\":{\"matchLabels\":{\"team\":\"a\"}}}"));
	ck_assert_int_eq(create_cm("team-a", "x", NULL, &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	ck_assert_int_eq(create_cm("default", "x", NULL, &st), 0);
	/* cluster-scoped objects other than namespaces always match */
	ck_assert_int_eq(create("scheduling.k8s.io", "v1", "priorityclasses",
				NULL, pc, NULL, &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	/* a namespace is matched by its own labels */
	json_object_set_new(json_object_get(ns, "metadata"), "name",
			    json_string("team-b"));
	ck_assert_int_eq(create("", "v1", "namespaces", NULL, ns, NULL, &st),
			 -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	/* apiserver names a Namespace's own request namespace after it */
	rev = last("/deny", NULL);
	ck_assert_str_eq(sget(rev, "request.namespace"), "team-b");
	ck_assert_str_eq(sget(rev, "request.name"), "team-b");
	json_decref(rev);
	json_object_set_new(json_object_get(ns, "metadata"), "labels",
			    json_pack("{s:s}", "team", "c"));
	ck_assert_int_eq(create("", "v1", "namespaces", NULL, ns, NULL, &st),
			 0);
	json_decref(ns);
	json_decref(pc);
}
END_TEST

START_TEST(namespace_selector_expressions)
{
	struct api_status st = API_STATUS_INIT;

	install(false, "kueue-style", hook("ns.example.com", "/deny",
		CM_RULE("\"CREATE\""),
		"{\"namespaceSelector\":{\"matchExpressions\":[{\"key\":"
		"\"kubernetes.io/metadata.name\",\"operator\":\"NotIn\","
		"\"values\":[\"kube-system\",\"kueue-system\"]}]}}"));
	ck_assert_int_eq(create_cm("kube-system", "x", NULL, &st), 0);
	ck_assert_int_eq(create_cm("default", "x", NULL, &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
}
END_TEST

START_TEST(object_selector)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "", .version = "v1",
			     .resource = "configmaps", .ns = "default",
			     .name = "old-match" };
	json_t *c;

	ck_assert_int_eq(create_cm("default", "old-match",
				   "{\"check\":\"yes\"}", &st), 0);
	install(false, "obj", hook("obj.example.com", "/deny",
				   CM_RULE("\"CREATE\",\"UPDATE\""),
				   "{\"objectSelector\":{\"matchLabels\":"
				   "{\"check\":\"yes\"}}}"));
	ck_assert_int_eq(create_cm("default", "a", "{\"check\":\"yes\"}",
				   &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	ck_assert_int_eq(create_cm("default", "b", "{\"check\":\"no\"}", &st),
			 0);
	/* UPDATE: oldObject's labels are enough */
	c = cm("old-match", "{}");
	ck_assert_int_eq(api_internal_update(S.api, &r, NULL, c, NULL, &st),
			 -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	json_decref(c);
}
END_TEST

struct sub_case {
	const char *resources; /* the rule's resources */
	bool main;             /* a PUT of jobs/<name> is denied */
	bool status;           /* a PUT of jobs/<name>/status is denied */
};

static const struct sub_case subs[] = {
	{ "[\"jobs\"]", true, false },
	{ "[\"jobs/status\"]", false, true },
	/* apiserver's rules.Matcher: sub "*" also matches no subresource */
	{ "[\"jobs/*\"]", true, true },
	{ "[\"*\"]", true, false },
	{ "[\"*/*\"]", true, true },
	{ "[\"*/status\"]", false, true },
	{ "[\"workloads/status\"]", false, false },
};

START_TEST(subresource_rules)
{
	const struct sub_case *c = &subs[_i];
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "batch", .version = "v1",
			     .resource = "jobs", .ns = "default",
			     .name = "sample" };
	char rules[256];
	json_t *got;
	int rc;

	ck_assert_int_eq(create_job("sample", NULL, &st), 0);
	snprintf(rules, sizeof(rules), "[{\"operations\":[\"UPDATE\"],"
		 "\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
		 "\"resources\":%s}]", c->resources);
	install(false, "sub", hook("sub.example.com", "/deny", rules, NULL));
	got = api_internal_get(S.api, &r, &st);
	json_object_set_new(json_object_get(got, "metadata"), "labels",
			    json_pack("{s:s}", "changed", "yes"));
	rc = api_internal_update(S.api, &r, NULL, got, NULL, &st);
	ck_assert_msg((rc < 0) == c->main, "%s main: %s", c->resources,
		      st.message ? st.message : "allowed");
	status_release(&st);
	json_decref(got);
	got = api_internal_get(S.api, &r, &st);
	json_object_set_new(got, "status", json_pack("{s:i}", "active", 1));
	rc = api_internal_update(S.api, &r, "status", got, NULL, &st);
	ck_assert_msg((rc < 0) == c->status, "%s status: %s", c->resources,
		      st.message ? st.message : "allowed");
	status_release(&st);
	json_decref(got);
	if (c->status) {
		json_t *rev = last("/deny", NULL);

		ck_assert_str_eq(sget(rev, "request.subResource"), "status");
		ck_assert_str_eq(sget(rev, "request.requestSubResource"),
				 "status");
		ck_assert_str_eq(sget(rev, "request.operation"), "UPDATE");
		ck_assert_str_eq(sget(rev, "request.options.kind"),
				 "UpdateOptions");
		ck_assert_str_eq(sget(rev, "request.oldObject.metadata.name"),
				 "sample");
		json_decref(rev);
	}
}
END_TEST

START_TEST(configurations_are_exempt)
{
	struct api_status st = API_STATUS_INIT;

	install(false, "all", hook("all.example.com", "/deny",
				   "[{\"operations\":[\"*\"],\"apiGroups\":"
				   "[\"*\"],\"apiVersions\":[\"*\"],"
				   "\"resources\":[\"*/*\"]}]", NULL));
	install(true, "another", hook("m.example.com", "/allow",
				      CM_RULE("\"CREATE\""), NULL));
	ck_assert_uint_eq(count("/deny"), 0);
	ck_assert_int_eq(create_cm("default", "x", NULL, &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
}
END_TEST

/* ---- versions: matchPolicy Equivalent and conversion webhooks ---- */

static void install_crd(const char *conv_path, const char *svc)
{
	struct api_status st = API_STATUS_INIT;
	json_t *crd = t_fixture_json("admission/clusterqueues-crd.json");

	if (conv_path)
		json_object_set_new(json_object_get(crd, "spec"), "conversion",
			json_pack("{s:s, s:{s:[s], s:o}}", "strategy",
				  "Webhook", "webhook",
				  "conversionReviewVersions", "v1",
				  "clientConfig", client_config(svc, conv_path,
								S.ca)));
	ck_assert_msg(create("apiextensions.k8s.io", "v1",
			     "customresourcedefinitions", NULL, crd, NULL,
			     &st) == 0, "crd: %s", st.message);
	json_decref(crd);
}

static int create_cq(const char *version, const char *name,
		     const char *spec, struct api_status *st)
{
	char *av = xasprintf("kueue.x-k8s.io/%s", version);
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:{}}, s:o}", "apiVersion",
			      av, "kind", "ClusterQueue", "metadata", "name",
			      name, "labels", "spec", t_json(spec));
	int rc = create("kueue.x-k8s.io", version, "clusterqueues", NULL, o,
			NULL, st);

	json_decref(o);
	free(av);
	return rc;
}

static json_t *get_cq(const char *version, const char *name,
		      struct api_status *st)
{
	struct api_ref r = { .group = "kueue.x-k8s.io", .version = version,
			     .resource = "clusterqueues", .name = name };

	return api_internal_get(S.api, &r, st);
}

#define CQ_RULE(v) \
	"[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"kueue.x-k8s.io\"]," \
	"\"apiVersions\":[\"" v "\"],\"resources\":[\"clusterqueues\"]}]"

START_TEST(match_policy_equivalent)
{
	struct api_status st = API_STATUS_INIT;
	json_t *rev, *got;

	install_crd(NULL, NULL);
	install(true, "eq", hook("eq.example.com", "/label-one",
				 CQ_RULE("v1beta2"), NULL));
	install(false, "exact", hook("exact.example.com", "/deny",
				     CQ_RULE("v1beta2"),
				     "{\"matchPolicy\":\"Exact\"}"));
	ck_assert_int_eq(create_cq("v1beta1", "eq", "{\"cohort\":\"c\"}",
				   &st), 0);
	ck_assert_uint_eq(count("/deny"), 0);
	rev = last("/label-one", NULL);
	ck_assert_str_eq(sget(rev, "request.kind.version"), "v1beta2");
	ck_assert_str_eq(sget(rev, "request.resource.version"), "v1beta2");
	ck_assert_str_eq(sget(rev, "request.requestKind.version"), "v1beta1");
	ck_assert_str_eq(sget(rev, "request.requestResource.version"),
			 "v1beta1");
	ck_assert_str_eq(sget(rev, "request.object.apiVersion"),
			 "kueue.x-k8s.io/v1beta2");
	ck_assert_ptr_null(jget(rev, "request.namespace"));
	json_decref(rev);
	got = get_cq("v1beta1", "eq", &st);
	ck_assert_str_eq(sget(got, "metadata.labels.one"), "1");
	json_decref(got);
	/* the exact rule does match a v1beta2 request */
	ck_assert_int_eq(create_cq("v1beta2", "exact", "{}", &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
}
END_TEST

START_TEST(conversion_webhook)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "kueue.x-k8s.io", .version = "v1beta1",
			     .resource = "clusterqueues" };
	json_t *got, *rev, *items = NULL;
	const json_t *objs;
	size_t before;

	install_crd("/convert", "hooks");
	ck_assert_int_eq(create_cq("v1beta1", "a", "{\"cohort\":\"team\"}",
				   &st), 0);
	/* stored in v1beta2 through the webhook, answered in v1beta1 */
	ck_assert_uint_eq(count("/convert"), 2);
	rev = first("/convert");
	ck_assert_str_eq(sget(rev, "kind"), "ConversionReview");
	ck_assert_str_eq(sget(rev, "apiVersion"), "apiextensions.k8s.io/v1");
	ck_assert_str_eq(sget(rev, "request.desiredAPIVersion"),
			 "kueue.x-k8s.io/v1beta2");
	ck_assert_uint_eq(strlen(sget(rev, "request.uid")), 36);
	json_decref(rev);
	got = get_cq("v1beta2", "a", &st);
	ck_assert_str_eq(sget(got, "spec.cohortName"), "team");
	ck_assert_ptr_null(jget(got, "spec.cohort"));
	/* metadata other than labels and annotations is the original's */
	ck_assert_int_eq(json_integer_value(jget(got, "metadata.generation")),
			 1);
	json_decref(got);
	got = get_cq("v1beta1", "a", &st);
	ck_assert_str_eq(sget(got, "apiVersion"), "kueue.x-k8s.io/v1beta1");
	ck_assert_str_eq(sget(got, "spec.cohort"), "team");
	ck_assert_int_eq(json_integer_value(jget(got, "metadata.generation")),
			 1);
	json_decref(got);
	/* objects already in the desired version are not sent */
	before = count("/convert");
	got = get_cq("v1beta2", "a", &st);
	json_decref(got);
	ck_assert_uint_eq(count("/convert"), before);
	/* a list is one review */
	ck_assert_int_eq(create_cq("v1beta2", "b", "{\"cohortName\":\"x\"}",
				   &st), 0);
	before = count("/convert");
	ck_assert_int_eq(api_internal_list(S.api, &r, NULL, NULL, &items,
					   NULL, &st), 0);
	ck_assert_uint_eq(count("/convert"), before + 1);
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(sget(json_array_get(items, 1), "spec.cohort"), "x");
	rev = last("/convert", NULL);
	objs = jget(rev, "request.objects");
	ck_assert_uint_eq(json_array_size(objs), 2);
	json_decref(rev);
	json_decref(items);
}
END_TEST

struct conv_failure {
	const char *svc;
	const char *path;
	const char *get;   /* message of a GET in v1beta1 */
	const char *list;  /* message of a list in v1beta1 */
};

static const struct conv_failure conv_failures[] = {
	{ "hooks", "/convert-fail",
	  "conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueue "
	  "returned invalid response: conversion is broken",
	  "conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueueList"
	  " returned invalid response: conversion is broken" },
	{ "nohooks", "/convert",
	  "conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueue "
	  "failed: Post \"https://nohooks.webhooks.svc:443/convert?timeout=30s"
	  "\": no endpoints available for service \"nohooks\"",
	  NULL },
	{ "hooks", "/convert-rename",
	  "conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueue "
	  "returned invalid object: must have the same name: a != a-renamed",
	  "conversion webhook for kueue.x-k8s.io/v1beta2, Kind=ClusterQueueList"
	  " returned invalid converted object at index 1: must have the same "
	  "name: a != a-renamed" },
};

START_TEST(conversion_failures)
{
	const struct conv_failure *c = &conv_failures[_i];
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "kueue.x-k8s.io", .version = "v1beta1",
			     .resource = "clusterqueues" };
	json_t *items = NULL;

	install_crd(c->path, c->svc);
	/* stored without conversion: created in the storage version */
	ck_assert_int_eq(create_cq("v1beta2", "a", "{\"cohortName\":\"t\"}",
				   &st), 0);
	ck_assert_ptr_null(get_cq("v1beta1", "a", &st));
	ck_status(&st, 500, "", c->get);
	ck_assert_ptr_null(st.details);
	status_release(&st);
	ck_assert_int_eq(api_internal_list(S.api, &r, NULL, NULL, &items,
					   NULL, &st), -1);
	ck_assert_int_eq(st.code, 500);
	if (c->list)
		ck_assert_str_eq(st.message, c->list);
	status_release(&st);
	/* a write in another version fails the same way */
	ck_assert_int_eq(create_cq("v1beta1", "b", "{}", &st), -1);
	ck_assert_int_eq(st.code, 500);
	status_release(&st);
}
END_TEST

/* ---- over HTTP: kubectl's user, Warning headers, dryRun ---- */

struct resp {
	long code;
	char *body;
	char *headers;
	json_t *json;
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

static struct resp post(const char *path, const char *body)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct resp r = { 0 };
	char *url = xasprintf("%s%s", http_server_url(S.http), path);

	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.code);
	r.json = json_loads(r.body ? r.body : "", 0, NULL);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	free(url);
	return r;
}

static void resp_free(struct resp *r)
{
	free(r->body);
	free(r->headers);
	json_decref(r->json);
}

static const char cm_body[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	"\"metadata\":{\"name\":\"web\"},\"data\":{\"a\":\"b\"}}";

START_TEST(http_user_and_warnings)
{
	struct resp r;
	json_t *rev;

	install(true, "warn", hook("warn.example.com", "/warn",
				   CM_RULE("\"CREATE\""), NULL));
	install(false, "warn2", hook("warn2.example.com", "/warn",
				     CM_RULE("\"CREATE\""), NULL));
	r = post("/api/v1/namespaces/default/configmaps", cm_body);
	ck_assert_msg(r.code == 201, "%ld: %s", r.code, r.body);
	ck_assert_ptr_nonnull(strstr(r.headers,
				     "Warning: 299 - \"first warning\"\r\n"));
	ck_assert_ptr_nonnull(strstr(r.headers, "Warning: 299 - \"second "
				     "\\\"quoted\\\" warning\"\r\n"));
	/* the same text twice is one header */
	ck_assert_ptr_null(strstr(strstr(r.headers, "first warning") + 1,
				  "first warning"));
	rev = last("/warn", NULL);
	ck_assert_str_eq(sget(rev, "request.userInfo.username"),
			 "kubernetes-admin");
	ck_assert(json_is(jget(rev, "request.userInfo.groups"),
			  "[\"system:masters\",\"system:authenticated\"]"));
	json_decref(rev);
	resp_free(&r);
}
END_TEST

START_TEST(http_deny_status)
{
	struct resp r;

	install(false, "vcm", hook("vcm.example.com", "/deny",
				   CM_RULE("\"CREATE\""), NULL));
	r = post("/api/v1/namespaces/default/configmaps", cm_body);
	ck_assert_int_eq(r.code, 403);
	ck_assert_str_eq(sget(r.json, "kind"), "Status");
	ck_assert_str_eq(sget(r.json, "status"), "Failure");
	ck_assert_str_eq(sget(r.json, "reason"), "Forbidden");
	ck_assert_str_eq(sget(r.json, "message"), "admission webhook "
			 "\"vcm.example.com\" denied the request: no jobs "
			 "today");
	ck_assert_int_eq(json_integer_value(json_object_get(r.json, "code")),
			 403);
	resp_free(&r);
}
END_TEST

START_TEST(http_dry_run)
{
	struct resp r;
	json_t *rev;

	install(true, "effects", hook("effects.example.com", "/allow",
				      CM_RULE("\"CREATE\""),
				      "{\"sideEffects\":\"Some\","
				      "\"objectSelector\":{\"matchLabels\":"
				      "{\"fx\":\"yes\"}}}"));
	install(true, "clean", hook("clean.example.com", "/label-one",
				    CM_RULE("\"CREATE\""),
				    "{\"sideEffects\":\"NoneOnDryRun\"}"));
	r = post("/api/v1/namespaces/default/configmaps?dryRun=All",
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
		 "{\"name\":\"fx\",\"labels\":{\"fx\":\"yes\"}}}");
	ck_assert_int_eq(r.code, 400);
	ck_assert_str_eq(sget(r.json, "reason"), "BadRequest");
	ck_assert_str_eq(sget(r.json, "message"), "admission webhook "
			 "\"effects.example.com\" does not support dry run");
	resp_free(&r);
	ck_assert_uint_eq(count("/allow"), 0);
	r = post("/api/v1/namespaces/default/configmaps?dryRun=All",
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
		 "{\"name\":\"dry\",\"labels\":{}}}");
	ck_assert_msg(r.code == 201, "%ld: %s", r.code, r.body);
	ck_assert_str_eq(sget(r.json, "metadata.labels.one"), "1");
	rev = last("/label-one", NULL);
	ck_assert(json_is_true(jget(rev, "request.dryRun")));
	ck_assert_str_eq(sget(rev, "request.options.kind"), "CreateOptions");
	json_decref(rev);
	resp_free(&r);
}
END_TEST

Suite *admission_suite(void)
{
	Suite *s = suite_create("admission");
	TCase *tc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	tc = tcase_create("mutating");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mutating_patch_and_review_shape);
	tcase_add_test(tc, mutating_order_and_chaining);
	tcase_add_test(tc, patch_errors_ignore_failure_policy);
	tcase_add_test(tc, generate_name_is_empty_for_mutation);
	suite_add_tcase(s, tc);

	tc = tcase_create("denial");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, deny_with_message);
	tcase_add_test(tc, deny_codes);
	tcase_add_test(tc, delete_operation);
	tcase_add_test(tc, delete_mutation_is_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("failure-policy");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, call_failures, 0,
			    (int)(sizeof(failures) / sizeof(failures[0])));
	tcase_add_loop_test(tc, call_failures_ignored, 0,
			    (int)(sizeof(failures) / sizeof(failures[0])));
	tcase_add_test(tc, url_client_config);
	tcase_add_test(tc, review_version_v1beta1);
	suite_add_tcase(s, tc);

	tc = tcase_create("matching");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, namespace_selector);
	tcase_add_test(tc, namespace_selector_expressions);
	tcase_add_test(tc, object_selector);
	tcase_add_loop_test(tc, subresource_rules, 0,
			    (int)(sizeof(subs) / sizeof(subs[0])));
	tcase_add_test(tc, configurations_are_exempt);
	suite_add_tcase(s, tc);

	tc = tcase_create("versions");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, match_policy_equivalent);
	tcase_add_test(tc, conversion_webhook);
	tcase_add_loop_test(tc, conversion_failures, 0,
			    (int)(sizeof(conv_failures) /
				  sizeof(conv_failures[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("http");
	tcase_add_checked_fixture(tc, start, stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, http_user_and_warnings);
	tcase_add_test(tc, http_deny_status);
	tcase_add_test(tc, http_dry_run);
	suite_add_tcase(s, tc);
	return s;
}
