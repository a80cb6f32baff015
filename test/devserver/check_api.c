/*
 * Suite "api": the devserver's REST API end to end. Each test starts the
 * server in-process on 127.0.0.1 port 0 (plain HTTP, or TLS with a
 * token) and drives it with libcurl, checking bodies, codes and headers
 * against k8s-api.md: discovery and OpenAPI, CRD install from
 * test/fixtures/crds, create/get/list/update/patch/delete, the Status
 * bodies of 400/404/405/409/413/415/422, status subresource, finalizers,
 * watches (resume, bookmarks, 410, selector transitions, Tables) and
 * Table lists.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devserver/api.h"
#include "devserver/http.h"
#include "devserver/tls.h"
#include "model/alloc.h"
#include "suites.h"
#include "test/support/support.h"

#define AGG_ACCEPT \
	"application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," \
	"application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," \
	"application/json"
#define TABLE_ACCEPT \
	"application/json;as=Table;v=v1;g=meta.k8s.io," \
	"application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
#define WL "/apis/kueue.x-k8s.io/v1beta2/namespaces/default/workloads"
#define CQ "/apis/kueue.x-k8s.io/v1beta2/clusterqueues"
#define JOBS "/apis/batch/v1/namespaces/default/jobs"

/* ---- the server under test ---- */

static struct {
	struct api *api;
	struct http_server *http;
	struct tls_material tm;
	const char *token;     /* sent as Bearer when set */
} S;

static const char *g_data_dir; /* --data-dir of the next start() */

static void start(bool tls, const char *token, size_t history)
{
	struct err err = { "" };
	struct api_opts ao = { .watch_history = history ? history : 1000,
			       .bookmark_ms = 300, .data_dir = g_data_dir };
	struct http_opts ho = { .addr = "127.0.0.1", .token = token,
				.max_body = (size_t)3 << 20 };
	static const char *const dns[] = { "localhost", NULL };
	static const char *const ips[] = { "127.0.0.1", NULL };

	memset(&S, 0, sizeof(S));
	S.api = api_new(&ao, &err);
	ck_assert_msg(S.api != NULL, "api_new: %s", err.msg);
	if (tls) {
		ck_assert_int_eq(tls_generate(dns, ips, &S.tm, &err), 0);
		ho.cert_pem = S.tm.cert_pem;
		ho.key_pem = S.tm.key_pem;
	}
	S.http = http_server_start(&ho, api_serve, S.api, &err);
	ck_assert_msg(S.http != NULL, "http: %s", err.msg);
}

static void start_plain(void)
{
	start(false, NULL, 0);
}

static void start_small_history(void)
{
	start(false, NULL, 4);
}

static void stop(void)
{
	api_shutdown(S.api);
	http_server_stop(S.http);
	api_free(S.api);
	tls_material_release(&S.tm);
	memset(&S, 0, sizeof(S));
}

/* ---- HTTP client ---- */

struct resp {
	long code;
	char *body;      /* NUL-terminated */
	size_t len;
	char *headers;   /* raw header block */
	json_t *json;    /* parsed body, or NULL */
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

static struct resp call(const char *method, const char *path,
			const char *ctype, const char *body,
			const char *accept)
{
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	struct resp r = { 0 };
	char *url = xasprintf("%s%s", http_server_url(S.http), path);
	char hb[512];

	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r.body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r.headers);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	if (S.tm.ca_pem) {
		struct curl_blob blob = { S.tm.ca_pem, strlen(S.tm.ca_pem),
					  CURL_BLOB_COPY };

		curl_easy_setopt(c, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (S.token) {
		snprintf(hb, sizeof(hb), "Authorization: Bearer %s", S.token);
		h = curl_slist_append(h, hb);
	}
	if (ctype) {
		snprintf(hb, sizeof(hb), "Content-Type: %s", ctype);
		h = curl_slist_append(h, hb);
	}
	snprintf(hb, sizeof(hb), "Accept: %s",
		 accept ? accept : "application/json");
	h = curl_slist_append(h, hb);
	h = curl_slist_append(h, "Expect:");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	}
	ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r.code);
	if (!r.body)
		r.body = xstrdup("");
	r.len = strlen(r.body);
	r.json = json_loads(r.body, 0, NULL);
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

#define GET(p) call("GET", (p), NULL, NULL, NULL)
#define POST(p, b) call("POST", (p), "application/json", (b), NULL)
#define PUT(p, b) call("PUT", (p), "application/json", (b), NULL)
#define DEL(p) call("DELETE", (p), NULL, NULL, NULL)
#define PATCH(p, t, b) call("PATCH", (p), (t), (b), NULL)
#define MERGE "application/merge-patch+json"
#define JSONP "application/json-patch+json"
#define SMP "application/strategic-merge-patch+json"
#define APPLY "application/apply-patch+yaml"

/* A string at a dotted path ("metadata.name") of j, or NULL. */
static const char *sget(const json_t *j, const char *path)
{
	char buf[256], *save = NULL;
	const json_t *cur = j;

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *t = strtok_r(buf, ".", &save); t && cur;
	     t = strtok_r(NULL, ".", &save))
		cur = json_object_get(cur, t);
	return json_string_value(cur);
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

#define ck_code(r, c) \
	ck_assert_msg((r).code == (c), "want %d, got %ld: %s", (c), \
		      (r).code, (r).body)

/* Asserts r is a Status with code, reason and message. */
static void ck_status(const struct resp *r, long code, const char *reason,
		      const char *message)
{
	ck_assert_msg(r->code == code, "want %ld, got %ld: %s", code, r->code,
		      r->body);
	ck_assert_ptr_nonnull(r->json);
	ck_assert_str_eq(sget(r->json, "kind"), "Status");
	ck_assert_str_eq(sget(r->json, "apiVersion"), "v1");
	ck_assert_str_eq(sget(r->json, "status"), "Failure");
	ck_assert_int_eq(json_integer_value(json_object_get(r->json, "code")),
			 code);
	if (reason)
		ck_assert_str_eq(sget(r->json, "reason"), reason);
	if (message)
		ck_assert_str_eq(sget(r->json, "message"), message);
}

static char *read_fixture(const char *rel)
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

/* Installs fixture CRDs by POSTing their YAML: all of them, or only the
 * one file when only is set. */
static void install_crds_only(const char *only)
{
	static const char *const files[] = {
		"test/fixtures/crds/clusterqueues.yaml",
		"test/fixtures/crds/workloads.yaml",
		"test/fixtures/crds/resourceflavors.yaml",
	};

	for (size_t i = 0; i < 3; i++) {
		char *y;

		if (only && !strstr(files[i], only))
			continue;
		y = read_fixture(files[i]);
		struct resp r = call("POST",
			"/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
			"application/yaml", y, NULL);

		ck_code(r, 201);
		resp_free(&r);
		free(y);
	}
}

static void install_crds(void)
{
	install_crds_only(NULL);
}

static void start_with_crds(void)
{
	start_plain();
	install_crds();
}

static void start_small_with_crds(void)
{
	start_small_history();
	install_crds();
}

static const char wl_x[] =
	"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":\"Workload\","
	"\"metadata\":{\"name\":\"x\",\"labels\":{\"team\":\"ta\"}},"
	"\"spec\":{\"queueName\":\"q\",\"podSets\":[{\"name\":\"main\","
	"\"count\":1}]}}";

static char *wl_named(const char *name, const char *team)
{
	return xasprintf("{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			 "\"kind\":\"Workload\",\"metadata\":{\"name\":\"%s\","
			 "\"labels\":{\"team\":\"%s\"}},\"spec\":{\"queueName\":"
			 "\"q\",\"podSets\":[{\"name\":\"main\",\"count\":1}]}}",
			 name, team);
}

static const char *rv_of(const struct resp *r)
{
	return sget(r->json, "metadata.resourceVersion");
}

/* ---- discovery and OpenAPI ---- */

START_TEST(version_and_health)
{
	struct resp r = GET("/version");

	ck_code(r, 200);
	ck_assert_str_eq(sget(r.json, "major"), "1");
	ck_assert_str_eq(sget(r.json, "minor"), "32");
	ck_assert_str_eq(sget(r.json, "gitVersion"), "v1.32.4");
	resp_free(&r);
	r = GET("/healthz");
	ck_code(r, 200);
	ck_assert_str_eq(r.body, "ok");
	resp_free(&r);
	r = GET("/readyz");
	ck_code(r, 200);
	resp_free(&r);
}
END_TEST

START_TEST(aggregated_discovery)
{
	struct resp r = call("GET", "/apis", NULL, NULL, AGG_ACCEPT);
	const json_t *items, *it;
	size_t i;
	bool batch = false;

	ck_code(r, 200);
	ck_assert_ptr_nonnull(strstr(r.headers, "Content-Type: application/"
		"json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"));
	ck_assert_str_eq(sget(r.json, "kind"), "APIGroupDiscoveryList");
	items = json_object_get(r.json, "items");
	json_array_foreach(items, i, it)
		if (!strcmp(sget(it, "metadata.name"), "batch"))
			batch = true;
	ck_assert(batch);
	resp_free(&r);
	r = call("GET", "/api", NULL, NULL,
		 "application/json;g=apidiscovery.k8s.io;v=v2beta1;"
		 "as=APIGroupDiscoveryList");
	ck_assert_ptr_nonnull(strstr(r.headers, "v=v2beta1;as="
				     "APIGroupDiscoveryList"));
	ck_assert_str_eq(sget(r.json, "apiVersion"),
			 "apidiscovery.k8s.io/v2beta1");
	resp_free(&r);
}
END_TEST

START_TEST(legacy_discovery)
{
	struct resp r = GET("/api");
	const json_t *res, *it;
	size_t i;
	bool jobs = false, status = false;

	ck_code(r, 200);
	ck_assert_str_eq(sget(r.json, "kind"), "APIVersions");
	resp_free(&r);
	r = GET("/apis");
	ck_assert_str_eq(sget(r.json, "kind"), "APIGroupList");
	resp_free(&r);
	r = GET("/apis/batch/v1");
	ck_assert_str_eq(sget(r.json, "kind"), "APIResourceList");
	res = json_object_get(r.json, "resources");
	json_array_foreach(res, i, it) {
		if (!strcmp(sget(it, "name"), "jobs"))
			jobs = true;
		if (!strcmp(sget(it, "name"), "jobs/status"))
			status = true;
	}
	ck_assert(jobs && status);
	resp_free(&r);
}
END_TEST

START_TEST(discovery_follows_crds)
{
	struct resp r = GET("/openapi/v3"), d;
	const char *url;
	const json_t *items, *it;
	size_t i;
	bool found = false;

	ck_code(r, 200);
	ck_assert_ptr_nonnull(jget(r.json, "paths.api/v1"));
	ck_assert_ptr_null(json_object_get(json_object_get(r.json, "paths"),
					   "apis/kueue.x-k8s.io/v1beta2"));
	url = sget(r.json, "paths.apis/batch/v1.serverRelativeURL");
	ck_assert_ptr_nonnull(url);
	d = GET(url);
	ck_code(d, 200);
	ck_assert_ptr_nonnull(strstr(d.body, "\"x-kubernetes-group-version-"
		"kind\":{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"}"));
	ck_assert_ptr_nonnull(strstr(d.body, "fieldValidation"));
	resp_free(&d);
	resp_free(&r);
	install_crds();
	r = GET("/openapi/v3");
	url = json_string_value(json_object_get(json_object_get(
		json_object_get(r.json, "paths"),
		"apis/kueue.x-k8s.io/v1beta2"), "serverRelativeURL"));
	ck_assert_ptr_nonnull(url);
	ck_assert_ptr_nonnull(strstr(url, "?hash="));
	d = GET(url);
	ck_assert_ptr_nonnull(strstr(d.body, "/apis/kueue.x-k8s.io/v1beta2/"
		"namespaces/{namespace}/workloads/{name}"));
	resp_free(&d);
	resp_free(&r);
	/* v1beta2 is preferred over the deprecated v1beta1 */
	r = call("GET", "/apis", NULL, NULL, AGG_ACCEPT);
	items = json_object_get(r.json, "items");
	json_array_foreach(items, i, it) {
		const json_t *vs = json_object_get(it, "versions");

		if (strcmp(sget(it, "metadata.name"), "kueue.x-k8s.io"))
			continue;
		found = true;
		ck_assert_uint_eq(json_array_size(vs), 2);
		ck_assert_str_eq(sget(json_array_get(vs, 0), "version"),
				 "v1beta2");
		ck_assert_str_eq(sget(json_array_get(vs, 1), "version"),
				 "v1beta1");
	}
	ck_assert(found);
	resp_free(&r);
}
END_TEST

START_TEST(crd_status_established)
{
	struct resp r = GET("/apis/apiextensions.k8s.io/v1/"
			    "customresourcedefinitions/workloads.kueue.x-k8s.io");
	const json_t *conds = jget(r.json, "status.conditions");

	ck_code(r, 200);
	ck_assert_uint_eq(json_array_size(conds), 2);
	ck_assert_str_eq(sget(json_array_get(conds, 1), "type"), "Established");
	ck_assert_str_eq(sget(json_array_get(conds, 1), "status"), "True");
	ck_assert_str_eq(sget(r.json, "status.acceptedNames.kind"), "Workload");
	ck_assert_str_eq(json_string_value(json_array_get(
		jget(r.json, "status.storedVersions"), 0)), "v1beta2");
	resp_free(&r);
}
END_TEST

/* ---- create / get / list / update / patch / delete ---- */

START_TEST(create_get_list)
{
	struct resp r = POST(WL, wl_x), g;
	const json_t *items;

	ck_code(r, 201);
	ck_assert_int_eq(json_integer_value(jget(r.json, "metadata.generation")),
			 1);
	ck_assert_uint_eq(strlen(sget(r.json, "metadata.uid")), 36);
	ck_assert_uint_eq(strlen(sget(r.json, "metadata.creationTimestamp")),
			  20);
	ck_assert(json_is_true(jget(r.json, "spec.active"))); /* default */
	g = GET(WL "/x");
	ck_code(g, 200);
	ck_assert_str_eq(rv_of(&g), rv_of(&r));
	resp_free(&g);
	g = GET(WL);
	ck_code(g, 200);
	ck_assert_str_eq(sget(g.json, "kind"), "WorkloadList");
	items = json_object_get(g.json, "items");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(sget(json_array_get(items, 0), "kind"), "Workload");
	resp_free(&g);
	g = GET("/apis/kueue.x-k8s.io/v1beta2/namespaces/other/workloads");
	ck_code(g, 200);
	ck_assert(json_is_array(json_object_get(g.json, "items")));
	ck_assert_uint_eq(json_array_size(json_object_get(g.json, "items")), 0);
	ck_assert_ptr_nonnull(strstr(g.body, "\"items\":[]"));
	resp_free(&g);
	g = POST(WL, wl_x);
	ck_status(&g, 409, "AlreadyExists",
		  "workloads.kueue.x-k8s.io \"x\" already exists");
	ck_assert_str_eq(sget(g.json, "details.kind"), "workloads");
	resp_free(&g);
	resp_free(&r);
}
END_TEST

START_TEST(update_semantics)
{
	struct resp c = POST(WL, wl_x), u, n;
	json_t *o = json_deep_copy(c.json);
	char *body, *rv1 = xstrdup(rv_of(&c));

	/* no-op PUT: RV kept */
	body = json_dumps(o, 0);
	n = PUT(WL "/x", body);
	ck_code(n, 200);
	ck_assert_str_eq(rv_of(&n), rv1);
	resp_free(&n);
	free(body);
	/* spec change: generation 2 */
	json_object_set_new(json_object_get(o, "spec"), "queueName",
			    json_string("q2"));
	body = json_dumps(o, 0);
	u = PUT(WL "/x", body);
	ck_code(u, 200);
	ck_assert_int_eq(json_integer_value(jget(u.json, "metadata.generation")),
			 2);
	ck_assert_str_ne(rv_of(&u), rv1);
	/* stale RV */
	n = PUT(WL "/x", body);
	ck_status(&n, 409, "Conflict", "Operation cannot be fulfilled on "
		  "workloads.kueue.x-k8s.io \"x\": the object has been "
		  "modified; please apply your changes to the latest version "
		  "and try again");
	resp_free(&n);
	free(body);
	/* CRs need a resourceVersion on PUT */
	json_object_del(json_object_get(o, "metadata"), "resourceVersion");
	body = json_dumps(o, 0);
	n = PUT(WL "/x", body);
	ck_status(&n, 422, "Invalid", NULL);
	ck_assert_ptr_nonnull(strstr(sget(n.json, "message"),
		"metadata.resourceVersion: Invalid value: 0x0: must be "
		"specified for an update"));
	resp_free(&n);
	free(body);
	/* labels only: generation unchanged */
	n = PATCH(WL "/x", MERGE, "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
	ck_code(n, 200);
	ck_assert_int_eq(json_integer_value(jget(n.json, "metadata.generation")),
			 2);
	resp_free(&n);
	n = PUT(WL "/nosuch", "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		"\"kind\":\"Workload\",\"metadata\":{\"name\":\"nosuch\","
		"\"resourceVersion\":\"1\"}}");
	ck_status(&n, 404, "NotFound",
		  "workloads.kueue.x-k8s.io \"nosuch\" not found");
	resp_free(&n);
	json_decref(o);
	free(rv1);
	resp_free(&u);
	resp_free(&c);
}
END_TEST

START_TEST(patch_kinds)
{
	struct resp c = POST(WL, wl_x), p;

	p = PATCH(WL "/x", MERGE, "{\"spec\":{\"queueName\":\"m\"}}");
	ck_code(p, 200);
	ck_assert_str_eq(sget(p.json, "spec.queueName"), "m");
	resp_free(&p);
	p = PATCH(WL "/x", JSONP, "[{\"op\":\"replace\",\"path\":"
		  "\"/spec/queueName\",\"value\":\"j\"}]");
	ck_code(p, 200);
	ck_assert_str_eq(sget(p.json, "spec.queueName"), "j");
	resp_free(&p);
	p = PATCH(WL "/x", SMP, "{\"spec\":{\"queueName\":\"s\"}}");
	ck_status(&p, 415, "UnsupportedMediaType", "the body of the request "
		  "was in an unknown format - accepted media types include: "
		  "application/json-patch+json, application/merge-patch+json, "
		  "application/apply-patch+yaml");
	resp_free(&p);
	/* merge patch carrying a stale resourceVersion */
	p = PATCH(WL "/x", MERGE, "{\"metadata\":{\"resourceVersion\":\"1\"},"
		  "\"spec\":{\"queueName\":\"r\"}}");
	ck_status(&p, 409, "Conflict", NULL);
	resp_free(&p);
	p = PATCH(WL "/nosuch", MERGE, "{}");
	ck_status(&p, 404, "NotFound", NULL);
	resp_free(&p);
	resp_free(&c);
}
END_TEST

START_TEST(server_side_apply)
{
	static const char cq[] =
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		"\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},\"spec\":"
		"{\"cohort\":\"a\"}}";
	struct resp r = PATCH(CQ "/cq", APPLY, cq);

	ck_status(&r, 400, "BadRequest", NULL);
	resp_free(&r);
	r = PATCH(CQ "/cq?fieldManager=kubectl&force=false", APPLY, cq);
	ck_code(r, 201);
	/* schema defaults applied on the way */
	ck_assert_str_eq(sget(r.json, "spec.queueingStrategy"),
			 "BestEffortFIFO");
	ck_assert_str_eq(sget(r.json, "spec.preemption.reclaimWithinCohort"),
			 "Never");
	resp_free(&r);
	r = PATCH(CQ "/cq?fieldManager=kubectl", APPLY,
		  "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		  "metadata:\n  name: cq\nspec:\n  cohort: b\n");
	ck_code(r, 200);
	ck_assert_str_eq(sget(r.json, "spec.cohort"), "b");
	resp_free(&r);
}
END_TEST

START_TEST(delete_and_finalizers)
{
	struct resp c = POST(WL, wl_x), d, g;

	d = DEL(WL "/x");
	ck_code(d, 200);
	ck_assert_str_eq(sget(d.json, "kind"), "Status");
	ck_assert_str_eq(sget(d.json, "status"), "Success");
	ck_assert_str_eq(sget(d.json, "details.kind"), "workloads");
	ck_assert_str_eq(sget(d.json, "details.uid"),
			 sget(c.json, "metadata.uid"));
	resp_free(&d);
	resp_free(&c);
	c = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"f\",\"finalizers\":"
		 "[\"kueue.x-k8s.io/resource-in-use\"]},\"spec\":{\"podSets\":"
		 "[{\"name\":\"main\",\"count\":1}]}}");
	ck_code(c, 201);
	d = call("DELETE", WL "/f", "application/json",
		 "{\"propagationPolicy\":\"Background\"}", NULL);
	ck_code(d, 200);
	ck_assert_str_eq(sget(d.json, "kind"), "Workload");
	ck_assert_ptr_nonnull(sget(d.json, "metadata.deletionTimestamp"));
	ck_assert_int_eq(json_integer_value(jget(d.json,
		"metadata.deletionGracePeriodSeconds")), 0);
	ck_assert_int_eq(json_integer_value(jget(d.json,
		"metadata.generation")), 2);
	resp_free(&d);
	/* no new finalizers while deleting */
	d = PATCH(WL "/f", MERGE, "{\"metadata\":{\"finalizers\":[\"a/b\","
		  "\"kueue.x-k8s.io/resource-in-use\"]}}");
	ck_status(&d, 422, "Invalid", NULL);
	resp_free(&d);
	/* removing the last finalizer deletes it */
	d = PATCH(WL "/f", JSONP, "[{\"op\":\"remove\",\"path\":"
		  "\"/metadata/finalizers\"}]");
	ck_code(d, 200);
	resp_free(&d);
	g = GET(WL "/f");
	ck_status(&g, 404, "NotFound", "workloads.kueue.x-k8s.io \"f\" not found");
	ck_assert_str_eq(sget(g.json, "details.name"), "f");
	ck_assert_str_eq(sget(g.json, "details.group"), "kueue.x-k8s.io");
	resp_free(&g);
	resp_free(&c);
	/* preconditions */
	c = POST(WL, wl_x);
	d = call("DELETE", WL "/x", "application/json",
		 "{\"preconditions\":{\"uid\":\"nope\"}}", NULL);
	ck_status(&d, 409, "Conflict", NULL);
	ck_assert_ptr_nonnull(strstr(sget(d.json, "message"),
				     "Precondition failed: UID in precondition"));
	resp_free(&d);
	resp_free(&c);
}
END_TEST

START_TEST(status_subresource)
{
	struct resp c, s, p;

	c = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"s\"},\"spec\":{"
		 "\"podSets\":[{\"name\":\"m\",\"count\":1}]},\"status\":{"
		 "\"admission\":{\"clusterQueue\":\"x\"}}}");
	ck_code(c, 201);
	ck_assert_ptr_null(jget(c.json, "status"));
	p = PATCH(WL "/s", MERGE, "{\"status\":{\"admission\":{}}}");
	ck_code(p, 200);
	ck_assert_ptr_null(jget(p.json, "status"));
	resp_free(&p);
	s = PATCH(WL "/s/status", MERGE, "{\"metadata\":{\"labels\":{\"x\":"
		  "\"y\"}},\"spec\":{\"queueName\":\"ignored\"},\"status\":{"
		  "\"admission\":{\"clusterQueue\":\"cq\"}}}");
	ck_code(s, 200);
	ck_assert_str_eq(sget(s.json, "status.admission.clusterQueue"), "cq");
	ck_assert_ptr_null(sget(s.json, "spec.queueName"));
	ck_assert_ptr_null(jget(s.json, "metadata.labels"));
	ck_assert_int_eq(json_integer_value(jget(s.json,
		"metadata.generation")), 1);
	resp_free(&s);
	s = GET(WL "/s/status");
	ck_code(s, 200);
	ck_assert_str_eq(sget(s.json, "kind"), "Workload");
	resp_free(&s);
	s = call("POST", WL "/s/status", "application/json", "{}", NULL);
	ck_status(&s, 405, "MethodNotAllowed", "the server does not allow "
		  "this method on the requested resource");
	resp_free(&s);
	resp_free(&c);
}
END_TEST

START_TEST(generate_name_and_dry_run)
{
	struct resp c = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
			     "\"kind\":\"Workload\",\"metadata\":{"
			     "\"generateName\":\"job-sample-\"},\"spec\":{"
			     "\"podSets\":[{\"name\":\"m\",\"count\":1}]}}"), l;
	const char *name;

	ck_code(c, 201);
	name = sget(c.json, "metadata.name");
	ck_assert_uint_eq(strlen(name), strlen("job-sample-") + 5);
	ck_assert(!strncmp(name, "job-sample-", 11));
	ck_assert_uint_eq(strspn(name + 11, "bcdfghjklmnpqrstvwxz2456789"), 5);
	resp_free(&c);
	c = POST(WL "?dryRun=All", wl_x);
	ck_code(c, 201);
	ck_assert_ptr_nonnull(sget(c.json, "metadata.uid"));
	l = GET(WL "/x");
	ck_code(l, 404);
	resp_free(&l);
	resp_free(&c);
}
END_TEST

/* ---- error bodies ---- */

START_TEST(error_statuses)
{
	struct resp r = GET("/apis/nosuch.io/v1/things");
	char *big;

	ck_status(&r, 404, "NotFound",
		  "the server could not find the requested resource");
	resp_free(&r);
	r = GET("/apis/batch/v1/namespaces/default/jobs/x/nosub");
	ck_status(&r, 404, "NotFound", NULL);
	resp_free(&r);
	r = GET("/apis/kueue.x-k8s.io/v1beta2/namespaces/default/clusterqueues");
	ck_status(&r, 404, "NotFound", NULL); /* cluster-scoped in a ns */
	resp_free(&r);
	r = POST(WL "/x", wl_x);
	ck_status(&r, 405, "MethodNotAllowed", NULL);
	resp_free(&r);
	r = POST("/apis/kueue.x-k8s.io/v1beta2/namespaces/nosuchns/workloads",
		 wl_x);
	ck_status(&r, 404, "NotFound", "namespaces \"nosuchns\" not found");
	ck_assert_str_eq(sget(r.json, "details.kind"), "namespaces");
	resp_free(&r);
	r = POST(JOBS, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
		 "\"metadata\":{\"name\":\"bad\"},\"spec\":{}}");
	ck_status(&r, 422, "Invalid",
		  "Job.batch \"bad\" is invalid: spec.template: Required value");
	ck_assert_str_eq(sget(r.json, "details.kind"), "Job");
	ck_assert_str_eq(sget(json_array_get(jget(r.json, "details.causes"), 0),
			      "reason"), "FieldValueRequired");
	ck_assert_str_eq(sget(json_array_get(jget(r.json, "details.causes"), 0),
			      "field"), "spec.template");
	resp_free(&r);
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"Bad_Name\"},\"spec\":"
		 "{\"podSets\":[{\"name\":\"m\",\"count\":1}]}}");
	ck_status(&r, 422, "Invalid", NULL);
	ck_assert_ptr_nonnull(strstr(sget(r.json, "message"), "metadata.name"));
	resp_free(&r);
	/* schema: every bad field is named */
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"v\"},\"spec\":{"
		 "\"priority\":\"high\",\"podSets\":[{\"name\":\"m\"}]}}");
	ck_status(&r, 422, "Invalid", NULL);
	ck_assert_uint_ge(json_array_size(jget(r.json, "details.causes")), 2);
	ck_assert_ptr_nonnull(strstr(r.body, "spec.priority"));
	ck_assert_ptr_nonnull(strstr(r.body, "spec.podSets[0].count"));
	resp_free(&r);
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"v\"}}");
	ck_status(&r, 400, "BadRequest", NULL);
	resp_free(&r);
	r = POST(WL, "{not json");
	ck_status(&r, 400, "BadRequest", NULL);
	resp_free(&r);
	big = xmalloc((3u << 20) + 100);
	memset(big, ' ', (3u << 20) + 99);
	big[0] = '{';
	big[(3u << 20) + 98] = '}';
	big[(3u << 20) + 99] = '\0';
	r = POST(WL, big);
	ck_status(&r, 413, "RequestEntityTooLarge",
		  "Request entity too large: limit is 3145728");
	resp_free(&r);
	free(big);
	r = call("POST", WL, "application/cbor", "x", NULL);
	ck_status(&r, 415, "UnsupportedMediaType", NULL);
	resp_free(&r);
	r = GET(WL "?fieldSelector=spec.queueName%3Dq");
	ck_status(&r, 400, "BadRequest",
		  "field label not supported: spec.queueName");
	resp_free(&r);
}
END_TEST

START_TEST(strict_field_validation)
{
	static const char body[] =
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		"\"Workload\",\"metadata\":{\"name\":\"u\"},\"spec\":{"
		"\"foo\":1,\"podSets\":[{\"name\":\"m\",\"count\":1}]}}";
	struct resp r = POST(WL "?fieldValidation=Strict", body);

	ck_status(&r, 400, "BadRequest", NULL);
	ck_assert_ptr_nonnull(strstr(sget(r.json, "message"),
				     "strict decoding error: unknown field "
				     "\"spec.foo\""));
	resp_free(&r);
	r = POST(WL "?fieldValidation=Warn", body);
	ck_code(r, 201);
	ck_assert_ptr_nonnull(strstr(r.headers, "Warning: 299 - \"unknown "
				     "field \\\"spec.foo\\\"\""));
	ck_assert_ptr_null(jget(r.json, "spec.foo"));
	resp_free(&r);
}
END_TEST

/* ---- built-ins ---- */

START_TEST(job_defaults)
{
	struct resp r = POST(JOBS, "{\"apiVersion\":\"batch/v1\",\"kind\":"
		"\"Job\",\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":"
		"{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}],"
		"\"restartPolicy\":\"Never\"}}}}");
	const char *uid;

	ck_code(r, 201);
	uid = sget(r.json, "metadata.uid");
	ck_assert_int_eq(json_integer_value(jget(r.json, "spec.backoffLimit")),
			 6);
	ck_assert_int_eq(json_integer_value(jget(r.json, "spec.parallelism")),
			 1);
	ck_assert_str_eq(sget(r.json, "spec.completionMode"), "NonIndexed");
	ck_assert(json_is_false(jget(r.json, "spec.suspend")));
	ck_assert_str_eq(json_string_value(json_object_get(jget(r.json,
		"spec.selector.matchLabels"),
		"batch.kubernetes.io/controller-uid")), uid);
	ck_assert_str_eq(json_string_value(json_object_get(jget(r.json,
		"spec.template.metadata.labels"), "job-name")), "j");
	ck_assert_str_eq(json_string_value(json_object_get(jget(r.json,
		"metadata.labels"), "controller-uid")), uid);
	ck_assert(json_is_object(jget(r.json, "status")));
	resp_free(&r);
	/* strategic merge patch on a built-in */
	r = PATCH(JOBS "/j", SMP, "{\"spec\":{\"suspend\":true,\"template\":"
		  "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
		  "\"busybox:2\"}]}}}}");
	ck_code(r, 200);
	ck_assert(json_is_true(jget(r.json, "spec.suspend")));
	ck_assert_int_eq(json_integer_value(jget(r.json,
		"metadata.generation")), 2);
	resp_free(&r);
	r = DEL(JOBS "/j");
	ck_code(r, 200);
	ck_assert_ptr_nonnull(strstr(r.headers, "child pods are preserved"));
	resp_free(&r);
}
END_TEST

START_TEST(namespaces)
{
	struct resp r = GET("/api/v1/namespaces/kube-system"), d;

	ck_code(r, 200);
	ck_assert_str_eq(json_string_value(json_object_get(jget(r.json,
		"metadata.labels"), "kubernetes.io/metadata.name")),
		"kube-system");
	ck_assert_str_eq(sget(r.json, "status.phase"), "Active");
	resp_free(&r);
	r = POST("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":"
		 "\"Namespace\",\"metadata\":{\"name\":\"team-a\"}}");
	ck_code(r, 201);
	ck_assert_str_eq(json_string_value(json_array_get(jget(r.json,
		"spec.finalizers"), 0)), "kubernetes");
	resp_free(&r);
	d = DEL("/api/v1/namespaces/team-a");
	ck_code(d, 200);
	ck_assert_str_eq(sget(d.json, "status.phase"), "Terminating");
	resp_free(&d);
	r = POST("/api/v1/namespaces/team-a/configmaps", "{\"apiVersion\":"
		 "\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}");
	ck_status(&r, 403, "Forbidden", NULL);
	resp_free(&r);
	r = PUT("/api/v1/namespaces/team-a/finalize", "{\"apiVersion\":\"v1\","
		"\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\"},"
		"\"spec\":{\"finalizers\":[]}}");
	ck_code(r, 200);
	resp_free(&r);
	r = GET("/api/v1/namespaces/team-a");
	ck_code(r, 404);
	resp_free(&r);
	r = POST("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":"
		 "\"Namespace\",\"metadata\":{\"name\":\"a.b\"}}");
	ck_status(&r, 422, "Invalid", NULL);
	resp_free(&r);
}
END_TEST

/* kubectl create namespace foo: the protobuf body kubectl sends. */
START_TEST(protobuf_bodies)
{
	static const unsigned char ns_pb[] = {
		0x6b, 0x38, 0x73, 0x00, 0x0a, 0x0f, 0x0a, 0x02, 0x76, 0x31,
		0x12, 0x09, 'N', 'a', 'm', 'e', 's', 'p', 'a', 'c', 'e', 0x12,
		0x1b, 0x0a, 0x13, 0x0a, 0x03, 'f', 'o', 'o', 0x12, 0x00, 0x1a,
		0x00, 0x22, 0x00, 0x2a, 0x00, 0x32, 0x00, 0x38, 0x00, 0x42,
		0x00, 0x12, 0x00, 0x1a, 0x02, 0x0a, 0x00, 0x1a, 0x00, 0x22,
		0x00,
	};
	CURL *c = curl_easy_init();
	struct curl_slist *h = NULL;
	char *url = xasprintf("%s/api/v1/namespaces", http_server_url(S.http));
	char *body = NULL;
	long code = 0;
	json_t *j;

	h = curl_slist_append(h, "Content-Type: "
			      "application/vnd.kubernetes.protobuf");
	h = curl_slist_append(h, "Accept: application/vnd.kubernetes."
			      "protobuf,application/json");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, (const char *)ns_pb);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)sizeof(ns_pb));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
	ck_assert_int_eq(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	ck_assert_msg(code == 201, "got %ld: %s", code, body);
	j = json_loads(body, 0, NULL);
	ck_assert_str_eq(sget(j, "metadata.name"), "foo");
	ck_assert_str_eq(sget(j, "kind"), "Namespace");
	ck_assert_ptr_null(jget(j, "metadata.generateName"));
	json_decref(j);
	free(body);
	free(url);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
}
END_TEST

START_TEST(event_field_selectors)
{
	static const char ev[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{"
		"\"name\":\"x.1\"},\"involvedObject\":{\"kind\":\"Workload\","
		"\"name\":\"x\",\"namespace\":\"default\",\"uid\":\"u1\"},"
		"\"reason\":\"Admitted\",\"type\":\"Normal\"}";
	struct resp r = POST("/api/v1/namespaces/default/events", ev);

	ck_code(r, 201);
	resp_free(&r);
	r = GET("/api/v1/namespaces/default/events?fieldSelector="
		"involvedObject.name%3Dx%2CinvolvedObject.namespace%3Ddefault"
		"%2CinvolvedObject.kind%3DWorkload%2CinvolvedObject.uid%3Du1"
		"&limit=500");
	ck_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 1);
	resp_free(&r);
	r = GET("/api/v1/events?fieldSelector=involvedObject.uid%3Du2");
	ck_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 0);
	resp_free(&r);
}
END_TEST

/* ---- lists: selectors, pages, Tables ---- */

START_TEST(list_pages_and_selectors)
{
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	static const char *const teams[] = { "ta", "tb", "tc", "ta", "tb" };
	struct resp r;
	char *tok, *path;
	size_t seen = 0;

	for (size_t i = 0; i < 5; i++) {
		char *b = wl_named(names[i], teams[i]);

		r = POST(WL, b);
		ck_code(r, 201);
		resp_free(&r);
		free(b);
	}
	r = GET(WL "?limit=2");
	ck_code(r, 200);
	while (1) {
		seen += json_array_size(json_object_get(r.json, "items"));
		if (!sget(r.json, "metadata.continue"))
			break;
		tok = xstrdup(sget(r.json, "metadata.continue"));
		resp_free(&r);
		path = xasprintf(WL "?limit=2&continue=%s", tok);
		r = GET(path);
		ck_code(r, 200);
		free(path);
		free(tok);
	}
	resp_free(&r);
	ck_assert_uint_eq(seen, 5);
	r = GET(WL "?labelSelector=team+in+%28ta%2Ctc%29&fieldSelector="
		"metadata.name%21%3Dc");
	ck_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 2);
	resp_free(&r);
	r = GET("/apis/kueue.x-k8s.io/v1beta2/workloads?fieldSelector="
		"metadata.namespace%3Ddefault,metadata.name%3De");
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 1);
	resp_free(&r);
	r = GET(WL "?limit=2&continue=garbage!");
	ck_status(&r, 400, "BadRequest", NULL);
	resp_free(&r);
	r = GET(WL "?resourceVersionMatch=Exact");
	ck_status(&r, 400, "BadRequest", NULL);
	resp_free(&r);
	r = GET(WL "?resourceVersion=999999");
	ck_status(&r, 504, "Timeout", NULL);
	resp_free(&r);
}
END_TEST

START_TEST(delete_collection)
{
	static const char *const names[] = { "a", "b", "c" };
	static const char *const teams[] = { "ta", "tb", "ta" };
	struct resp r;

	for (size_t i = 0; i < 3; i++) {
		char *b = wl_named(names[i], teams[i]);

		r = POST(WL, b);
		ck_code(r, 201);
		resp_free(&r);
		free(b);
	}
	r = DEL(WL "?labelSelector=team%3Dta");
	ck_code(r, 200);
	ck_assert_str_eq(sget(r.json, "kind"), "WorkloadList");
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 2);
	resp_free(&r);
	r = GET(WL);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 1);
	ck_assert_str_eq(sget(json_array_get(json_object_get(r.json, "items"),
					     0), "metadata.name"), "b");
	resp_free(&r);
}
END_TEST

START_TEST(table_lists)
{
	struct resp r = POST(WL, wl_x);
	const json_t *cols, *cells;

	resp_free(&r);
	r = call("GET", WL "?limit=500", NULL, NULL, TABLE_ACCEPT);
	ck_code(r, 200);
	ck_assert_ptr_nonnull(strstr(r.headers, "Content-Type: application/"
				     "json;as=Table;v=v1;g=meta.k8s.io"));
	ck_assert_str_eq(sget(r.json, "kind"), "Table");
	cols = json_object_get(r.json, "columnDefinitions");
	ck_assert_str_eq(sget(json_array_get(cols, 0), "name"), "Name");
	ck_assert_str_eq(sget(json_array_get(cols, 1), "name"), "Queue");
	cells = json_object_get(json_array_get(json_object_get(r.json, "rows"),
					       0), "cells");
	ck_assert_str_eq(json_string_value(json_array_get(cells, 0)), "x");
	ck_assert_str_eq(json_string_value(json_array_get(cells, 1)), "q");
	ck_assert(json_is_null(json_array_get(cells, 2)));
	ck_assert_str_eq(sget(json_object_get(json_array_get(json_object_get(
		r.json, "rows"), 0), "object"), "kind"),
		"PartialObjectMetadata");
	resp_free(&r);
	r = call("GET", JOBS, NULL, NULL, TABLE_ACCEPT);
	ck_code(r, 200);
	ck_assert_str_eq(sget(r.json, "kind"), "Table");
	resp_free(&r);
	r = call("GET", WL "/x", NULL, NULL, TABLE_ACCEPT);
	ck_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "rows")), 1);
	resp_free(&r);
}
END_TEST

START_TEST(deprecated_version_and_conversion)
{
	struct resp r = POST("/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
		"\"ClusterQueue\",\"metadata\":{\"name\":\"old\"},\"spec\":{}}");

	ck_code(r, 201);
	ck_assert_ptr_nonnull(strstr(r.headers, "Warning: 299 - \"This version "
				     "is deprecated. Use v1beta2 instead.\""));
	ck_assert_str_eq(sget(r.json, "apiVersion"), "kueue.x-k8s.io/v1beta1");
	resp_free(&r);
	r = GET(CQ "/old");
	ck_code(r, 200);
	ck_assert_str_eq(sget(r.json, "apiVersion"), "kueue.x-k8s.io/v1beta2");
	ck_assert_ptr_null(strstr(r.headers, "Warning"));
	resp_free(&r);
}
END_TEST

START_TEST(crd_delete_removes_objects)
{
	struct resp r = POST(WL, wl_x);

	resp_free(&r);
	r = DEL("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
		"workloads.kueue.x-k8s.io");
	ck_code(r, 200);
	resp_free(&r);
	r = GET(WL);
	ck_status(&r, 404, "NotFound", NULL);
	resp_free(&r);
	install_crds_only("workloads");
	r = GET(WL);
	ck_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 0);
	resp_free(&r);
}
END_TEST

/* ---- watch ---- */

/* Runs a watch to its end (use timeoutSeconds) and returns its events
 * (new array). */
static json_t *watch_events(const char *path, const char *accept)
{
	struct resp r = call("GET", path, NULL, NULL, accept);
	json_t *evs = json_array();
	char *save = NULL;

	ck_code(r, 200);
	for (char *l = strtok_r(r.body, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		json_t *e = json_loads(l, 0, NULL);

		ck_assert_msg(e != NULL, "bad event line: %s", l);
		json_array_append_new(evs, e);
	}
	resp_free(&r);
	return evs;
}

static const char *ev_type(const json_t *evs, size_t i)
{
	return sget(json_array_get(evs, i), "type");
}

START_TEST(watch_synthetic_and_resume)
{
	struct resp c = POST(WL, wl_x), p;
	json_t *evs;
	char *path;

	evs = watch_events(WL "?watch=true&timeoutSeconds=1", NULL);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(ev_type(evs, 0), "ADDED");
	json_decref(evs);
	p = PATCH(WL "/x", MERGE, "{\"spec\":{\"queueName\":\"z\"}}");
	resp_free(&p);
	p = DEL(WL "/x");
	resp_free(&p);
	path = xasprintf(WL "?watch=True&resourceVersion=%s&timeoutSeconds=1",
			 rv_of(&c));
	evs = watch_events(path, NULL);
	free(path);
	ck_assert_uint_eq(json_array_size(evs), 2);
	ck_assert_str_eq(ev_type(evs, 0), "MODIFIED");
	ck_assert_str_eq(sget(json_array_get(evs, 0), "object.spec.queueName"),
			 "z");
	ck_assert_str_eq(ev_type(evs, 1), "DELETED");
	json_decref(evs);
	resp_free(&c);
}
END_TEST

START_TEST(watch_bookmarks)
{
	json_t *evs = watch_events(WL "?watch=1&allowWatchBookmarks=true&"
				   "timeoutSeconds=1", NULL);
	size_t i;
	bool bm = false;

	for (i = 0; i < json_array_size(evs); i++)
		if (!strcmp(ev_type(evs, i), "BOOKMARK")) {
			bm = true;
			ck_assert_str_eq(sget(json_array_get(evs, i),
					      "object.kind"), "Workload");
			ck_assert_ptr_nonnull(sget(json_array_get(evs, i),
				"object.metadata.resourceVersion"));
		}
	ck_assert(bm);
	json_decref(evs);
	evs = watch_events(WL "?watch=1&timeoutSeconds=1", NULL);
	ck_assert_uint_eq(json_array_size(evs), 0);
	json_decref(evs);
}
END_TEST

START_TEST(watch_expired)
{
	json_t *evs;

	for (int i = 0; i < 6; i++) {
		char *b = xasprintf("{\"apiVersion\":\"v1\",\"kind\":"
				    "\"ConfigMap\",\"metadata\":{\"name\":"
				    "\"c%d\"}}", i);
		struct resp r = POST("/api/v1/namespaces/default/configmaps", b);

		ck_code(r, 201);
		resp_free(&r);
		free(b);
	}
	evs = watch_events(WL "?watch=true&resourceVersion=2&"
			   "timeoutSeconds=5", NULL);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(ev_type(evs, 0), "ERROR");
	ck_assert_int_eq(json_integer_value(jget(json_array_get(evs, 0),
						 "object.code")), 410);
	ck_assert_str_eq(sget(json_array_get(evs, 0), "object.reason"),
			 "Expired");
	ck_assert(!strncmp(sget(json_array_get(evs, 0), "object.message"),
			   "too old resource version: 2", 27));
	json_decref(evs);
}
END_TEST

START_TEST(watch_selector_transitions)
{
	struct resp c = POST(WL, wl_x), p;
	json_t *evs;
	char *path;

	p = PATCH(WL "/x", MERGE, "{\"metadata\":{\"labels\":{\"team\":"
		  "\"tb\"}}}");
	resp_free(&p);
	p = PATCH(WL "/x", MERGE, "{\"metadata\":{\"labels\":{\"team\":"
		  "\"ta\"}}}");
	resp_free(&p);
	path = xasprintf(WL "?watch=1&labelSelector=team%%3Dta&"
			 "resourceVersion=%s&timeoutSeconds=1", rv_of(&c));
	evs = watch_events(path, NULL);
	free(path);
	ck_assert_uint_eq(json_array_size(evs), 2);
	ck_assert_str_eq(ev_type(evs, 0), "DELETED");
	ck_assert_str_eq(json_string_value(json_object_get(jget(
		json_array_get(evs, 0), "object.metadata.labels"), "team")),
		"ta");
	ck_assert_str_eq(ev_type(evs, 1), "ADDED");
	json_decref(evs);
	resp_free(&c);
}
END_TEST

START_TEST(watch_table)
{
	struct resp c = POST(WL, wl_x), p;
	json_t *evs;
	char *path;

	p = PATCH(WL "/x", MERGE, "{\"spec\":{\"queueName\":\"t2\"}}");
	resp_free(&p);
	path = xasprintf(WL "?watch=true&timeoutSeconds=1&resourceVersion=0");
	evs = watch_events(path, TABLE_ACCEPT);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(sget(json_array_get(evs, 0), "object.kind"), "Table");
	ck_assert(json_is_array(jget(json_array_get(evs, 0),
				     "object.columnDefinitions")));
	json_decref(evs);
	free(path);
	path = xasprintf(WL "?watch=true&timeoutSeconds=1&resourceVersion=%s",
			 rv_of(&c));
	p = PATCH(WL "/x", MERGE, "{\"spec\":{\"queueName\":\"t3\"}}");
	resp_free(&p);
	evs = watch_events(path, TABLE_ACCEPT);
	ck_assert_uint_eq(json_array_size(evs), 2);
	ck_assert(json_is_array(jget(json_array_get(evs, 0),
				     "object.columnDefinitions")));
	ck_assert(json_is_null(jget(json_array_get(evs, 1),
				    "object.columnDefinitions")) ||
		  !jget(json_array_get(evs, 1), "object.columnDefinitions"));
	json_decref(evs);
	free(path);
	resp_free(&c);
}
END_TEST

/* ---- TLS and tokens ---- */

START_TEST(tls_token)
{
	struct resp r;

	start(true, "s3cret", 0);
	ck_assert(!strncmp(http_server_url(S.http), "https://", 8));
	r = GET("/version");
	ck_code(r, 200); /* public */
	resp_free(&r);
	r = GET("/api/v1/namespaces");
	ck_status(&r, 401, "Unauthorized", "Unauthorized");
	resp_free(&r);
	S.token = "s3cret";
	r = GET("/api/v1/namespaces");
	ck_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 4);
	resp_free(&r);
	S.token = "wrong";
	r = GET("/api/v1/namespaces");
	ck_code(r, 401);
	resp_free(&r);
	stop();
}
END_TEST

START_TEST(internal_api)
{
	struct api_ref ref = { .group = "batch", .resource = "jobs",
			       .ns = "default", .name = "ij" };
	struct api_status st = API_STATUS_INIT;
	json_t *job = t_json("{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
		"\"metadata\":{\"name\":\"ij\"},\"spec\":{\"template\":{"
		"\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}],"
		"\"restartPolicy\":\"Never\"}}}}"), *out = NULL, *items;
	uint64_t rv;

	ck_assert_int_eq(api_internal_create(S.api, &ref, job, &out, &st), 0);
	ck_assert_str_eq(sget(out, "spec.completionMode"), "NonIndexed");
	json_object_set_new(out, "status", t_json("{\"succeeded\":1}"));
	ck_assert_int_eq(api_internal_update(S.api, &ref, "status", out, NULL,
					     &st), 0);
	json_decref(out);
	ck_assert_int_eq(api_internal_list(S.api, &ref, NULL,
					   "status.successful=1", &items, &rv,
					   &st), 0);
	ck_assert_uint_eq(json_array_size(items), 1);
	json_decref(items);
	ck_assert_int_eq(api_internal_delete(S.api, &ref, "Background", &out,
					     &st), 0);
	ck_assert_ptr_null(out);
	ck_assert_ptr_null(api_internal_get(S.api, &ref, &st));
	ck_assert_int_eq(st.code, 404);
	status_release(&st);
	json_decref(job);
}
END_TEST

START_TEST(preload_dir)
{
	struct err err = { "" };
	char *dir = t_src_path("test/fixtures/crds");
	struct resp r;

	ck_assert_msg(api_preload(S.api, dir, &err) == 0, "%s", err.msg);
	/* a second run is a no-op merge */
	ck_assert_msg(api_preload(S.api, dir, &err) == 0, "%s", err.msg);
	free(dir);
	r = GET(CQ);
	ck_code(r, 200);
	resp_free(&r);
}
END_TEST

START_TEST(persistence)
{
	char dir[] = "/tmp/cueue-api-XXXXXX";
	struct resp r;
	char *rv, *cmd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	g_data_dir = dir;
	start_with_crds();
	r = POST(WL, wl_x);
	ck_code(r, 201);
	rv = xstrdup(rv_of(&r));
	resp_free(&r);
	stop();
	start_plain();
	r = GET(WL "/x");
	ck_code(r, 200);
	ck_assert_str_eq(rv_of(&r), rv);
	resp_free(&r);
	r = call("GET", "/apis", NULL, NULL, AGG_ACCEPT);
	ck_assert_ptr_nonnull(strstr(r.body, "\"kueue.x-k8s.io\""));
	resp_free(&r);
	/* the RV counter never goes backwards */
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"y\"},\"spec\":{"
		 "\"podSets\":[{\"name\":\"m\",\"count\":1}]}}");
	ck_code(r, 201);
	ck_assert_uint_gt(strtoull(rv_of(&r), NULL, 10),
			  strtoull(rv, NULL, 10));
	resp_free(&r);
	stop();
	g_data_dir = NULL;
	free(rv);
	cmd = xasprintf("rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	free(cmd);
}
END_TEST

Suite *api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc;

	curl_global_init(CURL_GLOBAL_DEFAULT);
	tc = tcase_create("discovery");
	tcase_add_checked_fixture(tc, start_plain, stop);
	tcase_add_test(tc, version_and_health);
	tcase_add_test(tc, aggregated_discovery);
	tcase_add_test(tc, legacy_discovery);
	tcase_add_test(tc, discovery_follows_crds);
	tcase_add_test(tc, preload_dir);
	suite_add_tcase(s, tc);

	tc = tcase_create("verbs");
	tcase_add_checked_fixture(tc, start_with_crds, stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, crd_status_established);
	tcase_add_test(tc, create_get_list);
	tcase_add_test(tc, update_semantics);
	tcase_add_test(tc, patch_kinds);
	tcase_add_test(tc, server_side_apply);
	tcase_add_test(tc, delete_and_finalizers);
	tcase_add_test(tc, status_subresource);
	tcase_add_test(tc, generate_name_and_dry_run);
	tcase_add_test(tc, error_statuses);
	tcase_add_test(tc, strict_field_validation);
	tcase_add_test(tc, job_defaults);
	tcase_add_test(tc, namespaces);
	tcase_add_test(tc, event_field_selectors);
	tcase_add_test(tc, protobuf_bodies);
	tcase_add_test(tc, list_pages_and_selectors);
	tcase_add_test(tc, table_lists);
	tcase_add_test(tc, delete_collection);
	tcase_add_test(tc, deprecated_version_and_conversion);
	tcase_add_test(tc, crd_delete_removes_objects);
	tcase_add_test(tc, internal_api);
	suite_add_tcase(s, tc);

	tc = tcase_create("watch");
	tcase_add_checked_fixture(tc, start_with_crds, stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, watch_synthetic_and_resume);
	tcase_add_test(tc, watch_bookmarks);
	tcase_add_test(tc, watch_selector_transitions);
	tcase_add_test(tc, watch_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("watch-history");
	tcase_add_checked_fixture(tc, start_small_with_crds, stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, watch_expired);
	suite_add_tcase(s, tc);

	tc = tcase_create("persistence");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, persistence);
	suite_add_tcase(s, tc);

	tc = tcase_create("tls");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, tls_token);
	suite_add_tcase(s, tc);
	return s;
}
