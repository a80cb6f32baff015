/*
 * Suite "api": the devserver's REST API end to end, read side and
 * plumbing. Each test starts the server in-process (dsclient.h) and
 * drives it with libcurl, checking bodies, codes and headers against
 * k8s-api.md: discovery and OpenAPI, lists (selectors, pages, Tables,
 * versions), watches (resume, bookmarks, 410, selector transitions,
 * Tables), TLS and tokens, the internal API, --preload and --data-dir.
 * The write verbs and their error bodies are suite "api_write"
 * (check_api_write.c); hostile input is suite "robust".
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "devserver/api.h"
#include "devserver/http.h"
#include "suites.h"
#include "test/devserver/dsclient.h"
#include "test/support/support.h"

static void start_plain(void)
{
	ds_start(NULL);
}

static void start_with_crds(void)
{
	ds_start(NULL);
	ds_install_crds(NULL);
}

static void start_small_with_crds(void)
{
	struct ds_opts o = { .history = 4 };

	ds_start(&o);
	ds_install_crds(NULL);
}

/* ---- discovery and OpenAPI ---- */

START_TEST(version_and_health)
{
	struct ds_resp r = GET("/version");

	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "major"), "1");
	ck_assert_str_eq(ds_sget(r.json, "minor"), "32");
	ck_assert_str_eq(ds_sget(r.json, "gitVersion"), "v1.32.4");
	ds_resp_free(&r);
	r = GET("/healthz");
	ds_code(r, 200);
	ck_assert_str_eq(r.body, "ok");
	ds_resp_free(&r);
	r = GET("/readyz");
	ds_code(r, 200);
	ds_resp_free(&r);
}
END_TEST

START_TEST(aggregated_discovery)
{
	struct ds_resp r = ds_call("GET", "/apis", NULL, NULL, AGG_ACCEPT);
	const json_t *items, *it;
	size_t i;
	bool batch = false;

	ds_code(r, 200);
	ck_assert_ptr_nonnull(strstr(r.headers, "Content-Type: application/"
		"json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"));
	ck_assert_str_eq(ds_sget(r.json, "kind"), "APIGroupDiscoveryList");
	items = json_object_get(r.json, "items");
	json_array_foreach(items, i, it)
		if (!strcmp(ds_sget(it, "metadata.name"), "batch"))
			batch = true;
	ck_assert(batch);
	ds_resp_free(&r);
	r = ds_call("GET", "/api", NULL, NULL,
		    "application/json;g=apidiscovery.k8s.io;v=v2beta1;"
		    "as=APIGroupDiscoveryList");
	ck_assert_ptr_nonnull(strstr(r.headers, "v=v2beta1;as="
				     "APIGroupDiscoveryList"));
	ck_assert_str_eq(ds_sget(r.json, "apiVersion"),
			 "apidiscovery.k8s.io/v2beta1");
	ds_resp_free(&r);
}
END_TEST

START_TEST(legacy_discovery)
{
	struct ds_resp r = GET("/api");
	const json_t *res, *it;
	size_t i;
	bool jobs = false, status = false;

	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "kind"), "APIVersions");
	ds_resp_free(&r);
	r = GET("/apis");
	ck_assert_str_eq(ds_sget(r.json, "kind"), "APIGroupList");
	ds_resp_free(&r);
	r = GET("/apis/batch/v1");
	ck_assert_str_eq(ds_sget(r.json, "kind"), "APIResourceList");
	res = json_object_get(r.json, "resources");
	json_array_foreach(res, i, it) {
		if (!strcmp(ds_sget(it, "name"), "jobs"))
			jobs = true;
		if (!strcmp(ds_sget(it, "name"), "jobs/status"))
			status = true;
	}
	ck_assert(jobs && status);
	ds_resp_free(&r);
}
END_TEST

START_TEST(discovery_follows_crds)
{
	struct ds_resp r = GET("/openapi/v3"), d;
	const char *url;
	const json_t *items, *it;
	size_t i;
	bool found = false;

	ds_code(r, 200);
	ck_assert_ptr_nonnull(ds_jget(r.json, "paths.api/v1"));
	ck_assert_ptr_null(json_object_get(json_object_get(r.json, "paths"),
					   "apis/kueue.x-k8s.io/v1beta2"));
	url = ds_sget(r.json, "paths.apis/batch/v1.serverRelativeURL");
	ck_assert_ptr_nonnull(url);
	d = GET(url);
	ds_code(d, 200);
	ck_assert_ptr_nonnull(strstr(d.body, "\"x-kubernetes-group-version-"
		"kind\":{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"}"));
	ck_assert_ptr_nonnull(strstr(d.body, "fieldValidation"));
	ds_resp_free(&d);
	ds_resp_free(&r);
	ds_install_crds(NULL);
	r = GET("/openapi/v3");
	url = json_string_value(json_object_get(json_object_get(
		json_object_get(r.json, "paths"),
		"apis/kueue.x-k8s.io/v1beta2"), "serverRelativeURL"));
	ck_assert_ptr_nonnull(url);
	ck_assert_ptr_nonnull(strstr(url, "?hash="));
	d = GET(url);
	ck_assert_ptr_nonnull(strstr(d.body, "/apis/kueue.x-k8s.io/v1beta2/"
		"namespaces/{namespace}/workloads/{name}"));
	ds_resp_free(&d);
	ds_resp_free(&r);
	/* v1beta2 is preferred over the deprecated v1beta1 */
	r = ds_call("GET", "/apis", NULL, NULL, AGG_ACCEPT);
	items = json_object_get(r.json, "items");
	json_array_foreach(items, i, it) {
		const json_t *vs = json_object_get(it, "versions");

		if (strcmp(ds_sget(it, "metadata.name"), "kueue.x-k8s.io"))
			continue;
		found = true;
		ck_assert_uint_eq(json_array_size(vs), 2);
		ck_assert_str_eq(ds_sget(json_array_get(vs, 0), "version"),
				 "v1beta2");
		ck_assert_str_eq(ds_sget(json_array_get(vs, 1), "version"),
				 "v1beta1");
	}
	ck_assert(found);
	ds_resp_free(&r);
}
END_TEST

/* ---- lists: selectors, pages, Tables ---- */

/*
 * Every page of a list comes from the first page's snapshot and reports
 * its resourceVersion (the real server's behaviour): writes between the
 * pages do not show in the list, and a watch from that version delivers
 * each of them once. (Run on the five workloads a..e.)
 */
static void paged_list_is_a_snapshot(void)
{
	struct ds_resp r = GET(WL "?limit=2");
	char *rv, *tok, *path;
	size_t seen = 0;
	json_t *evs;

	ds_code(r, 200);
	rv = xstrdup(ds_sget(r.json, "metadata.resourceVersion"));
	tok = xstrdup(ds_sget(r.json, "metadata.continue"));
	seen += json_array_size(json_object_get(r.json, "items"));
	ds_resp_free(&r);
	/* e (on a later page) changes; c (on the next page) goes */
	r = PATCH(WL "/e", "application/merge-patch+json",
		  "{\"metadata\":{\"labels\":{\"moved\":\"yes\"}}}");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = DEL(WL "/c");
	ds_code(r, 200);
	ds_resp_free(&r);
	while (tok) {
		path = xasprintf(WL "?limit=2&continue=%s", tok);
		free(tok);
		r = GET(path);
		free(path);
		ds_code(r, 200);
		ck_assert_str_eq(ds_sget(r.json, "metadata.resourceVersion"),
				 rv);
		for (size_t i = 0;
		     i < json_array_size(json_object_get(r.json, "items"));
		     i++) {
			const json_t *it = json_array_get(
				json_object_get(r.json, "items"), i);

			ck_assert_ptr_null(ds_sget(it, "metadata.labels.moved"));
		}
		seen += json_array_size(json_object_get(r.json, "items"));
		tok = ds_sget(r.json, "metadata.continue") ?
			xstrdup(ds_sget(r.json, "metadata.continue")) : NULL;
		ds_resp_free(&r);
	}
	ck_assert_uint_eq(seen, 5);
	path = xasprintf(WL "?watch=1&resourceVersion=%s&timeoutSeconds=1",
			 rv);
	evs = ds_watch_events(path, NULL);
	ck_assert_uint_eq(json_array_size(evs), 2);
	ck_assert_str_eq(ds_sget(json_array_get(evs, 0), "type"), "MODIFIED");
	ck_assert_str_eq(ds_sget(json_array_get(evs, 1), "type"), "DELETED");
	json_decref(evs);
	free(path);
	free(rv);
}

START_TEST(list_pages_and_selectors)
{
	static const char *const names[] = { "a", "b", "c", "d", "e" };
	static const char *const teams[] = { "ta", "tb", "tc", "ta", "tb" };
	struct ds_resp r;
	char *tok, *path;
	size_t seen = 0;

	for (size_t i = 0; i < 5; i++) {
		char *b = ds_wl(names[i], teams[i]);

		r = POST(WL, b);
		ds_code(r, 201);
		ds_resp_free(&r);
		free(b);
	}
	r = GET(WL "?limit=2");
	ds_code(r, 200);
	while (1) {
		seen += json_array_size(json_object_get(r.json, "items"));
		if (!ds_sget(r.json, "metadata.continue"))
			break;
		tok = xstrdup(ds_sget(r.json, "metadata.continue"));
		ds_resp_free(&r);
		path = xasprintf(WL "?limit=2&continue=%s", tok);
		r = GET(path);
		ds_code(r, 200);
		free(path);
		free(tok);
	}
	ds_resp_free(&r);
	ck_assert_uint_eq(seen, 5);
	paged_list_is_a_snapshot();
	r = GET(WL "?labelSelector=team+in+%28ta%2Ctc%29&fieldSelector="
		"metadata.name%21%3Dc");
	ds_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 2);
	ds_resp_free(&r);
	r = GET("/apis/kueue.x-k8s.io/v1beta2/workloads?fieldSelector="
		"metadata.namespace%3Ddefault,metadata.name%3De");
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 1);
	ds_resp_free(&r);
	r = GET(WL "?limit=2&continue=garbage!");
	ds_status(&r, 400, "BadRequest", NULL);
	ds_resp_free(&r);
	r = GET(WL "?resourceVersionMatch=Exact");
	ds_status(&r, 400, "BadRequest", NULL);
	ds_resp_free(&r);
	r = GET(WL "?resourceVersion=999999");
	ds_status(&r, 504, "Timeout", NULL);
	ds_resp_free(&r);
}
END_TEST

START_TEST(table_lists)
{
	struct ds_resp r = POST(WL, ds_wl_x);
	const json_t *cols, *cells;

	ds_resp_free(&r);
	r = ds_call("GET", WL "?limit=500", NULL, NULL, TABLE_ACCEPT);
	ds_code(r, 200);
	ck_assert_ptr_nonnull(strstr(r.headers, "Content-Type: application/"
				     "json;as=Table;v=v1;g=meta.k8s.io"));
	ck_assert_str_eq(ds_sget(r.json, "kind"), "Table");
	cols = json_object_get(r.json, "columnDefinitions");
	ck_assert_str_eq(ds_sget(json_array_get(cols, 0), "name"), "Name");
	ck_assert_str_eq(ds_sget(json_array_get(cols, 1), "name"), "Queue");
	cells = json_object_get(json_array_get(json_object_get(r.json, "rows"),
					       0), "cells");
	ck_assert_str_eq(json_string_value(json_array_get(cells, 0)), "x");
	ck_assert_str_eq(json_string_value(json_array_get(cells, 1)), "q");
	ck_assert(json_is_null(json_array_get(cells, 2)));
	ck_assert_str_eq(ds_sget(json_object_get(json_array_get(json_object_get(
		r.json, "rows"), 0), "object"), "kind"),
		"PartialObjectMetadata");
	ds_resp_free(&r);
	r = ds_call("GET", JOBS, NULL, NULL, TABLE_ACCEPT);
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "kind"), "Table");
	ds_resp_free(&r);
	r = ds_call("GET", WL "/x", NULL, NULL, TABLE_ACCEPT);
	ds_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "rows")), 1);
	ds_resp_free(&r);
}
END_TEST

START_TEST(deprecated_version_and_conversion)
{
	struct ds_resp r = POST("/apis/kueue.x-k8s.io/v1beta1/clusterqueues",
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
		"\"ClusterQueue\",\"metadata\":{\"name\":\"old\"},\"spec\":{}}");

	ds_code(r, 201);
	ck_assert_ptr_nonnull(strstr(r.headers, "Warning: 299 - \"This version "
				     "is deprecated. Use v1beta2 instead.\""));
	ck_assert_str_eq(ds_sget(r.json, "apiVersion"),
			 "kueue.x-k8s.io/v1beta1");
	ds_resp_free(&r);
	r = GET(CQ "/old");
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "apiVersion"),
			 "kueue.x-k8s.io/v1beta2");
	ck_assert_ptr_null(strstr(r.headers, "Warning"));
	ds_resp_free(&r);
}
END_TEST

START_TEST(crd_delete_removes_objects)
{
	struct ds_resp r = POST(WL, ds_wl_x);

	ds_resp_free(&r);
	r = DEL("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
		"workloads.kueue.x-k8s.io");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = GET(WL);
	ds_status(&r, 404, "NotFound", NULL);
	ds_resp_free(&r);
	ds_install_crds("workloads");
	r = GET(WL);
	ds_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 0);
	ds_resp_free(&r);
}
END_TEST

/* ---- watch ---- */

START_TEST(watch_synthetic_and_resume)
{
	struct ds_resp c = POST(WL, ds_wl_x), p;
	json_t *evs;
	char *path;

	evs = ds_watch_events(WL "?watch=true&timeoutSeconds=1", NULL);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(ds_ev_type(evs, 0), "ADDED");
	json_decref(evs);
	p = PATCH(WL "/x", MERGE, "{\"spec\":{\"queueName\":\"z\"}}");
	ds_resp_free(&p);
	p = DEL(WL "/x");
	ds_resp_free(&p);
	path = xasprintf(WL "?watch=True&resourceVersion=%s&timeoutSeconds=1",
			 ds_rv(&c));
	evs = ds_watch_events(path, NULL);
	free(path);
	ck_assert_uint_eq(json_array_size(evs), 2);
	ck_assert_str_eq(ds_ev_type(evs, 0), "MODIFIED");
	ck_assert_str_eq(ds_sget(json_array_get(evs, 0),
				 "object.spec.queueName"),
			 "z");
	ck_assert_str_eq(ds_ev_type(evs, 1), "DELETED");
	json_decref(evs);
	ds_resp_free(&c);
}
END_TEST

START_TEST(watch_bookmarks)
{
	json_t *evs = ds_watch_events(WL "?watch=1&allowWatchBookmarks=true&"
				      "timeoutSeconds=1", NULL);
	size_t i;
	bool bm = false;

	for (i = 0; i < json_array_size(evs); i++)
		if (!strcmp(ds_ev_type(evs, i), "BOOKMARK")) {
			bm = true;
			ck_assert_str_eq(ds_sget(json_array_get(evs, i),
						 "object.kind"), "Workload");
			ck_assert_ptr_nonnull(ds_sget(json_array_get(evs, i),
				"object.metadata.resourceVersion"));
		}
	ck_assert(bm);
	json_decref(evs);
	evs = ds_watch_events(WL "?watch=1&timeoutSeconds=1", NULL);
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
		struct ds_resp r = POST("/api/v1/namespaces/default/configmaps",
					b);

		ds_code(r, 201);
		ds_resp_free(&r);
		free(b);
	}
	/* the history is per resource (4 events each here): six
	 * ConfigMap writes leave a Workload watch from an old RV alone */
	evs = ds_watch_events(WL "?watch=true&resourceVersion=2&"
			      "timeoutSeconds=1", NULL);
	ck_assert_uint_eq(json_array_size(evs), 0);
	json_decref(evs);
	/* while the ConfigMaps' own watch from there lost two events */
	evs = ds_watch_events("/api/v1/namespaces/default/configmaps"
			      "?watch=true&resourceVersion=2&"
			      "timeoutSeconds=5", NULL);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(ds_ev_type(evs, 0), "ERROR");
	ck_assert_int_eq(json_integer_value(ds_jget(json_array_get(evs, 0),
						    "object.code")), 410);
	ck_assert_str_eq(ds_sget(json_array_get(evs, 0), "object.reason"),
			 "Expired");
	ck_assert(!strncmp(ds_sget(json_array_get(evs, 0), "object.message"),
			   "too old resource version: 2", 27));
	json_decref(evs);
}
END_TEST

START_TEST(watch_selector_transitions)
{
	struct ds_resp c = POST(WL, ds_wl_x), p;
	json_t *evs;
	char *path;

	p = PATCH(WL "/x", MERGE, "{\"metadata\":{\"labels\":{\"team\":"
		  "\"tb\"}}}");
	ds_resp_free(&p);
	p = PATCH(WL "/x", MERGE, "{\"metadata\":{\"labels\":{\"team\":"
		  "\"ta\"}}}");
	ds_resp_free(&p);
	path = xasprintf(WL "?watch=1&labelSelector=team%%3Dta&"
			 "resourceVersion=%s&timeoutSeconds=1", ds_rv(&c));
	evs = ds_watch_events(path, NULL);
	free(path);
	ck_assert_uint_eq(json_array_size(evs), 2);
	ck_assert_str_eq(ds_ev_type(evs, 0), "DELETED");
	ck_assert_str_eq(json_string_value(json_object_get(ds_jget(
		json_array_get(evs, 0), "object.metadata.labels"), "team")),
		"ta");
	ck_assert_str_eq(ds_ev_type(evs, 1), "ADDED");
	json_decref(evs);
	ds_resp_free(&c);
}
END_TEST

START_TEST(watch_table)
{
	struct ds_resp c = POST(WL, ds_wl_x), p;
	json_t *evs;
	char *path;

	p = PATCH(WL "/x", MERGE, "{\"spec\":{\"queueName\":\"t2\"}}");
	ds_resp_free(&p);
	path = xasprintf(WL "?watch=true&timeoutSeconds=1&resourceVersion=0");
	evs = ds_watch_events(path, TABLE_ACCEPT);
	ck_assert_uint_eq(json_array_size(evs), 1);
	ck_assert_str_eq(ds_sget(json_array_get(evs, 0), "object.kind"),
			 "Table");
	ck_assert(json_is_array(ds_jget(json_array_get(evs, 0),
					"object.columnDefinitions")));
	json_decref(evs);
	free(path);
	path = xasprintf(WL "?watch=true&timeoutSeconds=1&resourceVersion=%s",
			 ds_rv(&c));
	p = PATCH(WL "/x", MERGE, "{\"spec\":{\"queueName\":\"t3\"}}");
	ds_resp_free(&p);
	evs = ds_watch_events(path, TABLE_ACCEPT);
	ck_assert_uint_eq(json_array_size(evs), 2);
	ck_assert(json_is_array(ds_jget(json_array_get(evs, 0),
					"object.columnDefinitions")));
	ck_assert(json_is_null(ds_jget(json_array_get(evs, 1),
				       "object.columnDefinitions")) ||
		  !ds_jget(json_array_get(evs, 1), "object.columnDefinitions"));
	json_decref(evs);
	free(path);
	ds_resp_free(&c);
}
END_TEST

/* ---- TLS and tokens ---- */

START_TEST(tls_token)
{
	struct ds_resp r;
	struct ds_opts o = { .tls = true, .token = "s3cret" };

	ds_start(&o);
	ck_assert(!strncmp(http_server_url(DS.http), "https://", 8));
	r = GET("/version");
	ds_code(r, 200); /* public */
	ds_resp_free(&r);
	r = GET("/api/v1/namespaces");
	ds_status(&r, 401, "Unauthorized", "Unauthorized");
	ds_resp_free(&r);
	DS.token = "s3cret";
	r = GET("/api/v1/namespaces");
	ds_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 4);
	ds_resp_free(&r);
	DS.token = "wrong";
	r = GET("/api/v1/namespaces");
	ds_code(r, 401);
	ds_resp_free(&r);
	ds_stop();
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

	ck_assert_int_eq(api_internal_create(DS.api, &ref, job, &out, &st), 0);
	ck_assert_str_eq(ds_sget(out, "spec.completionMode"), "NonIndexed");
	json_object_set_new(out, "status", t_json("{\"succeeded\":1}"));
	ck_assert_int_eq(api_internal_update(DS.api, &ref, "status", out, NULL,
					     &st), 0);
	json_decref(out);
	ck_assert_int_eq(api_internal_list(DS.api, &ref, NULL,
					   "status.successful=1", &items, &rv,
					   &st), 0);
	ck_assert_uint_eq(json_array_size(items), 1);
	json_decref(items);
	ck_assert_int_eq(api_internal_delete(DS.api, &ref, "Background", &out,
					     &st), 0);
	ck_assert_ptr_null(out);
	ck_assert_ptr_null(api_internal_get(DS.api, &ref, &st));
	ck_assert_int_eq(st.code, 404);
	status_release(&st);
	json_decref(job);
}
END_TEST

START_TEST(preload_dir)
{
	struct err err = { "" };
	char *dir = t_src_path("test/fixtures/crds");
	struct ds_resp r;

	ck_assert_msg(api_preload(DS.api, dir, &err) == 0, "%s", err.msg);
	/* a second run is a no-op merge */
	ck_assert_msg(api_preload(DS.api, dir, &err) == 0, "%s", err.msg);
	free(dir);
	r = GET(CQ);
	ds_code(r, 200);
	ds_resp_free(&r);
}
END_TEST

START_TEST(persistence)
{
	char dir[] = "/tmp/cueue-api-XXXXXX";
	struct ds_opts o = { 0 };
	struct ds_resp r;
	char *rv, *cmd;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	o.data_dir = dir;
	ds_start(&o);
	ds_install_crds(NULL);
	r = POST(WL, ds_wl_x);
	ds_code(r, 201);
	rv = xstrdup(ds_rv(&r));
	ds_resp_free(&r);
	ds_stop();
	ds_start(&o);
	r = GET(WL "/x");
	ds_code(r, 200);
	ck_assert_str_eq(ds_rv(&r), rv);
	ds_resp_free(&r);
	r = ds_call("GET", "/apis", NULL, NULL, AGG_ACCEPT);
	ck_assert_ptr_nonnull(strstr(r.body, "\"kueue.x-k8s.io\""));
	ds_resp_free(&r);
	/* the RV counter never goes backwards */
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"y\"},\"spec\":{"
		 "\"podSets\":[{\"name\":\"m\",\"count\":1}]}}");
	ds_code(r, 201);
	ck_assert_uint_gt(strtoull(ds_rv(&r), NULL, 10),
			  strtoull(rv, NULL, 10));
	ds_resp_free(&r);
	ds_stop();
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

	tc = tcase_create("discovery");
	tcase_add_checked_fixture(tc, start_plain, ds_stop);
	tcase_add_test(tc, version_and_health);
	tcase_add_test(tc, aggregated_discovery);
	tcase_add_test(tc, legacy_discovery);
	tcase_add_test(tc, discovery_follows_crds);
	tcase_add_test(tc, preload_dir);
	suite_add_tcase(s, tc);

	tc = tcase_create("lists");
	tcase_add_checked_fixture(tc, start_with_crds, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, list_pages_and_selectors);
	tcase_add_test(tc, table_lists);
	tcase_add_test(tc, deprecated_version_and_conversion);
	tcase_add_test(tc, crd_delete_removes_objects);
	tcase_add_test(tc, internal_api);
	suite_add_tcase(s, tc);

	tc = tcase_create("watch");
	tcase_add_checked_fixture(tc, start_with_crds, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, watch_synthetic_and_resume);
	tcase_add_test(tc, watch_bookmarks);
	tcase_add_test(tc, watch_selector_transitions);
	tcase_add_test(tc, watch_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("watch-history");
	tcase_add_checked_fixture(tc, start_small_with_crds, ds_stop);
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
