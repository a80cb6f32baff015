/*
 * admhook: the admission test harness the two admission suites share
 * (check_admission.c, check_admission_http.c). It starts, in-process, an
 * HTTPS webhook server (http.h over libmicrohttpd + GnuTLS, certificate
 * for hooks.webhooks.svc and 127.0.0.1 from tls.h) whose answer depends
 * on the request path and which records every review it gets, and the
 * devserver API with --service-endpoint webhooks/hooks mapped to it (plus
 * a plain HTTP front end for the tests that need Warning headers, dryRun
 * or kubectl's user). See admhook.h.
 */
#include "test/devserver/admhook.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "devserver/api.h"
#include "devserver/http.h"
#include "test/support/support.h"

#define MAXREQ 64

/* ---- the webhook server ---- */


static struct {
	pthread_mutex_t lock;
	struct ah_seen v[MAXREQ];
	size_t n;
} W = { PTHREAD_MUTEX_INITIALIZER, { { 0 } }, 0 };

struct ah_server AH;

static char *dup_or_empty(const char *s)
{
	return xstrdup(s ? s : "");
}

static void record(const struct http_req *req, json_t *body)
{
	struct ah_seen *s;

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
size_t ah_count(const char *path)
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
json_t *ah_last(const char *path, struct ah_seen *meta)
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
json_t *ah_first(const char *path)
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

const json_t *ah_jget(const json_t *j, const char *path)
{
	char buf[256], *save = NULL;
	const json_t *cur = j;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && cur;
	     t = strtok_r(NULL, ".", &save))
		cur = json_object_get(cur, t);
	return cur;
}

const char *ah_sget(const json_t *j, const char *path)
{
	return json_string_value(ah_jget(j, path));
}

/* An AdmissionReview answer for rev with extra response fields. */
static json_t *answer(const json_t *rev, bool allowed, json_t *extra)
{
	const char *av = ah_sget(rev, "apiVersion");
	json_t *r = json_pack("{s:s, s:b}", "uid", ah_sget(rev, "request.uid")
			      ? ah_sget(rev, "request.uid") : "", "allowed",
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
	char *p = b64_encode(ops, strlen(ops), B64_STD);
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
	const char *want = ah_sget(req, "desiredAPIVersion");
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
			char *n = xasprintf("%s-renamed",
					    ah_sget(c, "metadata.name"));

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
			 "response", "uid", ah_sget(req,
						    "uid"), "convertedObjects",
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

void ah_start(void)
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

	memset(&AH, 0, sizeof(AH));
	curl_global_init(CURL_GLOBAL_DEFAULT);
	seen_reset();
	ck_assert_int_eq(tls_generate(dns, ips, &AH.tm, &err), 0);
	ck_assert_int_eq(tls_generate(dns, ips, &AH.other, &err), 0);
	AH.ca = b64_encode(AH.tm.ca_pem, strlen(AH.tm.ca_pem), B64_STD);
	AH.other_ca = b64_encode(AH.other.ca_pem, strlen(AH.other.ca_pem),
				  B64_STD);
	ho.cert_pem = AH.tm.cert_pem;
	ho.key_pem = AH.tm.key_pem;
	AH.hooks = http_server_start(&ho, hook_serve, NULL, &err);
	ck_assert_msg(AH.hooks != NULL, "webhook server: %s", err.msg);
	ep.port = http_server_port(AH.hooks);
	AH.api = api_new(&ao, &err);
	ck_assert_msg(AH.api != NULL, "api_new: %s", err.msg);
	ho.cert_pem = ho.key_pem = NULL;
	AH.http = http_server_start(&ho, api_serve, AH.api, &err);
	ck_assert_msg(AH.http != NULL, "http: %s", err.msg);
}

void ah_stop(void)
{
	api_shutdown(AH.api);
	http_server_stop(AH.http);
	http_server_stop(AH.hooks);
	api_free(AH.api);
	tls_material_release(&AH.tm);
	tls_material_release(&AH.other);
	free(AH.ca);
	free(AH.other_ca);
	seen_reset();
	memset(&AH, 0, sizeof(AH));
}

/* ---- building webhook configurations ---- */

/* A clientConfig for the service path (or url when path has "://"). */
json_t *ah_client_config(const char *svc, const char *path, const char *ca)
{
	if (strstr(path, "://"))
		return json_pack("{s:s, s:s}", "url", path, "caBundle", ca);
	return json_pack("{s:{s:s, s:s, s:s, s:i}, s:s}", "service",
			 "namespace", "webhooks", "name", svc, "path", path,
			 "port", 443, "caBundle", ca);
}

/* A webhook: rules is JSON text; extra (JSON text or NULL) is merged. */
json_t *ah_hook(const char *name, const char *path, const char *rules,
		const char *extra)
{
	json_t *h = json_pack("{s:s, s:[s], s:s, s:o, s:o}", "name", name,
			      "admissionReviewVersions", "v1", "sideEffects",
			      "None", "clientConfig",
			      ah_client_config("hooks", path, AH.ca), "rules",
			      t_json(rules));

	if (extra) {
		json_t *e = t_json(extra);

		json_object_update(h, e);
		json_decref(e);
	}
	return h;
}

int ah_create(const char *group, const char *version, const char *resource,
	      const char *ns, const json_t *obj, json_t **out,
	      struct api_status *st)
{
	struct api_ref r = { .group = group, .version = version,
			     .resource = resource, .ns = ns };

	return api_internal_create(AH.api, &r, obj, out, st);
}

/* Installs a configuration holding one webhook (taken). */
void ah_install(bool mutating, const char *name, json_t *h)
{
	struct api_status st = API_STATUS_INIT;
	json_t *cfg = json_pack("{s:s, s:s, s:{s:s}, s:[o]}", "apiVersion",
				ADM "/v1", "kind", mutating
				? "MutatingWebhookConfiguration"
				: "ValidatingWebhookConfiguration", "metadata",
				"name", name, "webhooks", h);
	int rc = ah_create(ADM, "v1", mutating ? MWC : VWC, NULL, cfg, NULL,
			&st);

	ck_assert_msg(rc == 0, "install %s: %s", name, st.message);
	json_decref(cfg);
}

json_t *ah_job(const char *name)
{
	json_t *j = t_fixture_json("admission/job.json");

	json_object_set_new(json_object_get(j, "metadata"), "name",
			    json_string(name));
	return j;
}

json_t *ah_cm(const char *name, const char *labels)
{
	return json_pack("{s:s, s:s, s:{s:s, s:o}, s:{s:s}}", "apiVersion",
			 "v1", "kind", "ConfigMap", "metadata", "name", name,
			 "labels", t_json(labels ? labels : "{}"), "data", "a",
			 "b");
}

int ah_create_job(const char *name, json_t **out, struct api_status *st)
{
	json_t *j = ah_job(name);
	int rc = ah_create("batch", "v1", "jobs", "default", j, out, st);

	json_decref(j);
	return rc;
}

int ah_create_cm(const char *ns, const char *name, const char *labels,
		 struct api_status *st)
{
	json_t *c = ah_cm(name, labels);
	int rc = ah_create("", "v1", "configmaps", ns, c, NULL, st);

	json_decref(c);
	return rc;
}

/* j equals the JSON text want. */
bool ah_json_is(const json_t *j, const char *want)
{
	json_t *w = t_json(want);
	bool eq = json_equal(j, w);

	json_decref(w);
	return eq;
}

void ah_status(const struct api_status *st, int code, const char *reason,
	       const char *message)
{
	ck_assert_msg(st->code == code, "want %d, got %d: %s", code, st->code,
		      st->message ? st->message : "");
	ck_assert_str_eq(st->reason, reason);
	ck_assert_str_eq(st->message, message);
}

/* ---- over HTTP ---- */

static size_t on_data(char *p, size_t sz, size_t n, void *ud)
{
	char **buf = ud;
	size_t old = *buf ? strlen(*buf) : 0;

	*buf = xrealloc(*buf, old + sz * n + 1);
	memcpy(*buf + old, p, sz * n);
	(*buf)[old + sz * n] = '\0';
	return sz * n;
}

struct ah_resp ah_call(const char *method, const char *path,
		       const char *ctype, const char *body)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct ah_resp r = { 0 };
	char *url = xasprintf("%s%s", http_server_url(AH.http), path);
	char *ct = ctype ? xasprintf("Content-Type: %s", ctype) : NULL;

	if (ct)
		h = curl_slist_append(h, ct);
	h = curl_slist_append(h, "Accept: application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body)
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
	free(ct);
	free(url);
	return r;
}

struct ah_resp ah_post(const char *path, const char *body)
{
	return ah_call("POST", path, "application/json", body);
}

void ah_resp_free(struct ah_resp *r)
{
	free(r->body);
	free(r->headers);
	json_decref(r->json);
}
