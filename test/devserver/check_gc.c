/*
 * Suite "gc": the devserver's garbage collector and namespace lifecycle
 * (devserver/gc.h) driven through the internal API of an in-memory
 * devserver: Background deletion of dependents (with and without
 * finalizers, with a second live owner), Foreground with
 * blockOwnerDeletion, Orphan (explicit and the Job default), absent
 * owners and their grace, a collector started after the owner is gone
 * (resync), a tiny watch history (STORE_GONE), namespace deletion, and
 * CRD deletion with a leftover object.
 *
 * Waits poll with deadlines; nothing sleeps blindly except the checks
 * that something has *not* happened yet.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "devserver/api.h"
#include "devserver/gc.h"
#include "devserver/store.h"
#include "suites.h"
#include "test/support/support.h"

#define DEADLINE_MS 5000

static struct {
	struct api *api;
	struct gc *gc;
} S;

static void start_api(size_t history)
{
	struct err err = { "" };
	struct api_opts ao = { .watch_history = history,
			       .propagation_finalizers = true };

	memset(&S, 0, sizeof(S));
	S.api = api_new(&ao, &err);
	ck_assert_msg(S.api != NULL, "api_new: %s", err.msg);
}

static void start_gc(void)
{
	struct err err = { "" };

	S.gc = gc_start(S.api, &err);
	ck_assert_msg(S.gc != NULL, "gc_start: %s", err.msg);
}

static void setup(void)
{
	start_api(10000);
	start_gc();
}

static void setup_tiny_history(void)
{
	start_api(1);
	start_gc();
}

static void setup_no_gc(void)
{
	start_api(10000);
}

static void teardown(void)
{
	gc_stop(S.gc);
	api_shutdown(S.api);
	api_free(S.api);
	memset(&S, 0, sizeof(S));
}

/* ---- objects ---- */

static struct api_ref ref_of(const char *group, const char *resource,
			     const char *ns, const char *name)
{
	struct api_ref r = { .group = group, .resource = resource, .ns = ns,
			     .name = name };

	return r;
}

/* Creates obj (taken) and returns the stored object (new). */
static json_t *create(const char *group, const char *resource,
		      const char *ns, json_t *obj)
{
	struct api_ref r = ref_of(group, resource, ns, NULL);
	struct api_status st = API_STATUS_INIT;
	json_t *out = NULL;
	int rc = api_internal_create(S.api, &r, obj, &out, &st);

	ck_assert_msg(rc == 0, "create %s: %d %s", resource, st.code,
		      st.message ? st.message : "");
	json_decref(obj);
	return out;
}

static json_t *get(const char *group, const char *resource, const char *ns,
		   const char *name)
{
	struct api_ref r = ref_of(group, resource, ns, name);
	struct api_status st = API_STATUS_INIT;
	json_t *o = api_internal_get(S.api, &r, &st);

	status_release(&st);
	return o;
}

static bool exists(const char *group, const char *resource, const char *ns,
		   const char *name)
{
	json_t *o = get(group, resource, ns, name);

	json_decref(o);
	return o != NULL;
}

static bool cm_exists(const char *ns, const char *name)
{
	return exists("", "configmaps", ns, name);
}

/* True when the object exists and has a deletionTimestamp. */
static bool deleting(const char *group, const char *resource,
		     const char *ns, const char *name)
{
	json_t *o = get(group, resource, ns, name);
	bool d = o && json_object_get(json_object_get(o, "metadata"),
				      "deletionTimestamp");

	json_decref(o);
	return d;
}

static void del(const char *group, const char *resource, const char *ns,
		const char *name, const char *propagation)
{
	struct api_ref r = ref_of(group, resource, ns, name);
	struct api_status st = API_STATUS_INIT;
	int rc = api_internal_delete(S.api, &r, propagation, NULL, &st);

	ck_assert_msg(rc == 0, "delete %s/%s: %d %s", resource, name, st.code,
		      st.message ? st.message : "");
}

/* Merge-patches the main resource with the JSON text. */
static void patch(const char *group, const char *resource, const char *ns,
		  const char *name, const char *text)
{
	struct api_ref r = ref_of(group, resource, ns, name);
	struct api_status st = API_STATUS_INIT;
	json_t *p = t_json(text);
	int rc = api_internal_patch(S.api, &r, "", API_PATCH_MERGE, p, NULL,
				    &st);

	ck_assert_msg(rc == 0, "patch %s/%s: %d %s", resource, name, st.code,
		      st.message ? st.message : "");
	json_decref(p);
}

static json_t *oref(const char *api_version, const char *kind,
		    const char *name, const char *uid, bool block)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:b}", "apiVersion",
			 api_version, "kind", kind, "name", name, "uid", uid,
			 "blockOwnerDeletion", block);
}

/* A ConfigMap with owners (taken, may be NULL) and finalizers (taken,
 * may be NULL); returns the stored object. */
static json_t *cm(const char *ns, const char *name, json_t *owners,
		  json_t *finalizers)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:{s:s}}", "apiVersion",
			      "v1", "kind", "ConfigMap", "metadata", "name",
			      name, "data", "k", "v");
	json_t *m = json_object_get(o, "metadata");

	if (owners)
		json_object_set_new(m, "ownerReferences", owners);
	if (finalizers)
		json_object_set_new(m, "finalizers", finalizers);
	return create("", "configmaps", ns, o);
}

static json_t *job(const char *ns, const char *name)
{
	return create("batch", "jobs", ns, json_pack(
		"{s:s, s:s, s:{s:s}, s:{s:b, s:{s:{s:s, s:[{s:s, s:s}]}}}}",
		"apiVersion", "batch/v1", "kind", "Job", "metadata", "name",
		name, "spec", "suspend", 1, "template", "spec",
		"restartPolicy", "Never", "containers", "name", "c", "image",
		"busybox"));
}

static json_t *owners1(json_t *r)
{
	json_t *a = json_array();

	json_array_append_new(a, r);
	return a;
}

static const char widget_crd[] =
	"{\"apiVersion\":\"apiextensions.k8s.io/v1\","
	"\"kind\":\"CustomResourceDefinition\","
	"\"metadata\":{\"name\":\"widgets.example.com\"},"
	"\"spec\":{\"group\":\"example.com\",\"scope\":\"Namespaced\","
	"\"names\":{\"plural\":\"widgets\",\"singular\":\"widget\","
	"\"kind\":\"Widget\",\"listKind\":\"WidgetList\"},"
	"\"versions\":[{\"name\":\"v1\",\"served\":true,\"storage\":true,"
	"\"schema\":{\"openAPIV3Schema\":{\"type\":\"object\","
	"\"x-kubernetes-preserve-unknown-fields\":true}}}]}}";

static void install_widgets(void)
{
	json_decref(create("apiextensions.k8s.io",
			   "customresourcedefinitions", NULL,
			   t_json(widget_crd)));
}

/* A Widget (a Workload stand-in) with owners (taken, may be NULL). */
static json_t *widget(const char *ns, const char *name, json_t *owners)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s}, s:{s:i}}", "apiVersion",
			      "example.com/v1", "kind", "Widget", "metadata",
			      "name", name, "spec", "size", 1);

	if (owners)
		json_object_set_new(json_object_get(o, "metadata"),
				    "ownerReferences", owners);
	return create("example.com", "widgets", ns, o);
}

static size_t owner_count(const char *ns, const char *name)
{
	json_t *o = get("", "configmaps", ns, name);
	size_t n = json_array_size(json_object_get(json_object_get(o,
		"metadata"), "ownerReferences"));

	json_decref(o);
	return n;
}

/* ---- background ---- */

START_TEST(background_deletes_dependents)
{
	json_t *j = job("default", "owner-job"), *w;

	install_widgets();
	json_decref(cm("default", "dep-a", owners1(oref("batch/v1", "Job",
		"owner-job", jx_meta_str(j, "uid"), true)), NULL));
	json_decref(cm("default", "dep-b", owners1(oref("batch/v1", "Job",
		"owner-job", jx_meta_str(j, "uid"), false)), NULL));
	w = widget("default", "wl", owners1(oref("batch/v1", "Job",
		"owner-job", jx_meta_str(j, "uid"), true)));
	json_decref(cm("default", "bystander", NULL, NULL));
	del("batch", "jobs", "default", "owner-job", "Background");
	ck_assert(!exists("batch", "jobs", "default", "owner-job"));
	T_POLL_UNTIL(!cm_exists("default", "dep-a") &&
		     !cm_exists("default", "dep-b") &&
		     !exists("example.com", "widgets", "default", "wl"),
		     DEADLINE_MS);
	ck_assert(cm_exists("default", "bystander"));
	json_decref(w);
	json_decref(j);
}
END_TEST

START_TEST(dependent_with_finalizer_two_phase)
{
	json_t *o = cm("default", "owner", NULL, NULL);
	json_t *fins = json_pack("[s]", "example.com/keep");

	json_decref(cm("default", "dep", owners1(oref("v1", "ConfigMap",
		"owner", jx_meta_str(o, "uid"), true)), fins));
	del("", "configmaps", "default", "owner", "Background");
	T_POLL_UNTIL(deleting("", "configmaps", "default", "dep"), DEADLINE_MS);
	t_sleep_ms(100);
	ck_assert(cm_exists("default", "dep"));
	patch("", "configmaps", "default", "dep",
	      "{\"metadata\":{\"finalizers\":null}}");
	ck_assert(!cm_exists("default", "dep"));
	json_decref(o);
}
END_TEST

START_TEST(second_live_owner_keeps_dependent)
{
	json_t *a = cm("default", "owner-a", NULL, NULL);
	json_t *b = cm("default", "owner-b", NULL, NULL);
	json_t *refs = json_array();

	json_array_append_new(refs, oref("v1", "ConfigMap", "owner-a",
					 jx_meta_str(a, "uid"), true));
	json_array_append_new(refs, oref("v1", "ConfigMap", "owner-b",
					 jx_meta_str(b, "uid"), false));
	json_decref(cm("default", "dep", refs, NULL));
	del("", "configmaps", "default", "owner-a", "Background");
	/* The dangling reference goes, the dependent stays. */
	T_POLL_UNTIL(owner_count("default", "dep") == 1, DEADLINE_MS);
	ck_assert(cm_exists("default", "dep"));
	del("", "configmaps", "default", "owner-b", "Background");
	T_POLL_UNTIL(!cm_exists("default", "dep"), DEADLINE_MS);
	json_decref(a);
	json_decref(b);
}
END_TEST

/* ---- foreground ---- */

START_TEST(foreground_waits_for_blocking_dependents)
{
	json_t *o = cm("default", "owner", NULL, NULL), *got;
	json_t *fins = json_pack("[s]", "example.com/keep");

	json_decref(cm("default", "blocker", owners1(oref("v1", "ConfigMap",
		"owner", jx_meta_str(o, "uid"), true)), fins));
	json_decref(cm("default", "free", owners1(oref("v1", "ConfigMap",
		"owner", jx_meta_str(o, "uid"), false)), NULL));
	del("", "configmaps", "default", "owner", "Foreground");
	got = get("", "configmaps", "default", "owner");
	ck_assert_ptr_nonnull(got);
	ck_assert_ptr_nonnull(json_object_get(json_object_get(got, "metadata"),
					      "deletionTimestamp"));
	json_decref(got);
	T_POLL_UNTIL(!cm_exists("default", "free") &&
		     deleting("", "configmaps", "default", "blocker"),
		     DEADLINE_MS);
	t_sleep_ms(150);
	/* The blocking dependent still exists: the owner waits. */
	ck_assert(deleting("", "configmaps", "default", "owner"));
	patch("", "configmaps", "default", "blocker",
	      "{\"metadata\":{\"finalizers\":null}}");
	T_POLL_UNTIL(!cm_exists("default", "owner"), DEADLINE_MS);
	json_decref(o);
}
END_TEST

START_TEST(foreground_without_dependents)
{
	json_t *o = cm("default", "lonely", NULL, NULL);

	del("", "configmaps", "default", "lonely", "Foreground");
	T_POLL_UNTIL(!cm_exists("default", "lonely"), DEADLINE_MS);
	json_decref(o);
}
END_TEST

/* ---- orphan ---- */

START_TEST(orphan_removes_references)
{
	json_t *o = cm("default", "owner", NULL, NULL);

	json_decref(cm("default", "dep-1", owners1(oref("v1", "ConfigMap",
		"owner", jx_meta_str(o, "uid"), true)), NULL));
	json_decref(cm("default", "dep-2", owners1(oref("v1", "ConfigMap",
		"owner", jx_meta_str(o, "uid"), false)), NULL));
	del("", "configmaps", "default", "owner", "Orphan");
	T_POLL_UNTIL(!cm_exists("default", "owner"), DEADLINE_MS);
	ck_assert(cm_exists("default", "dep-1"));
	ck_assert(cm_exists("default", "dep-2"));
	ck_assert_uint_eq(owner_count("default", "dep-1"), 0);
	ck_assert_uint_eq(owner_count("default", "dep-2"), 0);
	/* Still there once the collector has seen the owner go. */
	t_sleep_ms(200);
	ck_assert(cm_exists("default", "dep-1"));
	json_decref(o);
}
END_TEST

START_TEST(job_default_is_orphan)
{
	json_t *j = job("default", "j"), *w;

	install_widgets();
	w = widget("default", "wl", owners1(oref("batch/v1", "Job", "j",
		jx_meta_str(j, "uid"), true)));
	del("batch", "jobs", "default", "j", NULL);
	T_POLL_UNTIL(!exists("batch", "jobs", "default", "j"), DEADLINE_MS);
	t_sleep_ms(200);
	json_decref(w);
	w = get("example.com", "widgets", "default", "wl");
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_null(json_object_get(json_object_get(w, "metadata"),
					   "ownerReferences"));
	json_decref(w);
	json_decref(j);
}
END_TEST

/* ---- absent owners ---- */

START_TEST(absent_owner_after_grace)
{
	int64_t t0 = t_mono_ms();

	json_decref(cm("default", "stray", owners1(oref("v1", "ConfigMap",
		"never", "00000000-0000-4000-8000-00000000dead", true)), NULL));
	t_sleep_ms(400);
	ck_assert_msg(cm_exists("default", "stray"),
		      "deleted before the grace period");
	T_POLL_UNTIL(!cm_exists("default", "stray"), DEADLINE_MS);
	ck_assert_int_ge(t_mono_ms() - t0, 900);
}
END_TEST

START_TEST(owner_in_other_namespace_is_absent)
{
	json_t *ns = create("", "namespaces", NULL, t_json(
		"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
		"\"metadata\":{\"name\":\"other\"}}"));
	json_t *o = cm("other", "owner", NULL, NULL);

	json_decref(cm("default", "dep", owners1(oref("v1", "ConfigMap",
		"owner", jx_meta_str(o, "uid"), true)), NULL));
	T_POLL_UNTIL(!cm_exists("default", "dep"), DEADLINE_MS);
	ck_assert(cm_exists("other", "owner"));
	json_decref(o);
	json_decref(ns);
}
END_TEST

/* The collector starts after the owner is gone: its first list finds
 * the dependent and an owner it never saw. */
START_TEST(resync_finds_orphaned_dependents)
{
	json_t *o = cm("default", "owner", NULL, NULL);

	json_decref(cm("default", "dep", owners1(oref("v1", "ConfigMap",
		"owner", jx_meta_str(o, "uid"), true)), NULL));
	json_decref(cm("default", "kept", NULL, NULL));
	del("", "configmaps", "default", "owner", "Background");
	t_sleep_ms(50);
	ck_assert(cm_exists("default", "dep"));
	start_gc();
	T_POLL_UNTIL(!cm_exists("default", "dep"), DEADLINE_MS);
	ck_assert(cm_exists("default", "kept"));
	json_decref(o);
}
END_TEST

/* With one event of history the collector mostly resyncs (STORE_GONE)
 * and must reach the same end state. */
START_TEST(tiny_history_still_collects)
{
	json_t *o = cm("default", "owner", NULL, NULL);
	char name[32];

	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "dep-%d", i);
		json_decref(cm("default", name, owners1(oref("v1",
			"ConfigMap", "owner", jx_meta_str(o, "uid"), i % 2 == 0)), NULL));
	}
	del("", "configmaps", "default", "owner", "Background");
	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "dep-%d", i);
		T_POLL_UNTIL(!cm_exists("default", name), DEADLINE_MS);
	}
	json_decref(o);
}
END_TEST

/* ---- namespaces ---- */

START_TEST(namespace_deletion)
{
	json_t *ns = create("", "namespaces", NULL, t_json(
		"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
		"\"metadata\":{\"name\":\"doomed\"}}")), *got;

	install_widgets();
	json_decref(cm("doomed", "plain", NULL, NULL));
	json_decref(cm("doomed", "held", NULL,
		       json_pack("[s]", "example.com/keep")));
	json_decref(job("doomed", "j"));
	json_decref(widget("doomed", "w", NULL));
	json_decref(cm("default", "elsewhere", NULL, NULL));
	del("", "namespaces", NULL, "doomed", NULL);
	got = get("", "namespaces", NULL, "doomed");
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
		got, "status"), "phase")), "Terminating");
	json_decref(got);
	T_POLL_UNTIL(!cm_exists("doomed", "plain") &&
		     !exists("batch", "jobs", "doomed", "j") &&
		     !exists("example.com", "widgets", "doomed", "w") &&
		     deleting("", "configmaps", "doomed", "held"), DEADLINE_MS);
	t_sleep_ms(100);
	ck_assert(exists("", "namespaces", NULL, "doomed"));
	patch("", "configmaps", "doomed", "held",
	      "{\"metadata\":{\"finalizers\":null}}");
	T_POLL_UNTIL(!exists("", "namespaces", NULL, "doomed"), DEADLINE_MS);
	ck_assert(cm_exists("default", "elsewhere"));
	json_decref(ns);
}
END_TEST

START_TEST(empty_namespace_goes_at_once)
{
	json_decref(create("", "namespaces", NULL, t_json(
		"{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
		"\"metadata\":{\"name\":\"empty\"}}")));
	del("", "namespaces", NULL, "empty", NULL);
	T_POLL_UNTIL(!exists("", "namespaces", NULL, "empty"), DEADLINE_MS);
}
END_TEST

/* ---- CRDs ---- */

START_TEST(crd_deletion_removes_objects)
{
	struct store *st = api_store(S.api);
	json_t *late;

	install_widgets();
	json_decref(widget("default", "w1", NULL));
	json_decref(widget("kube-system", "w2", NULL));
	ck_assert_uint_eq(store_count(st, "example.com/widgets"), 2);
	del("apiextensions.k8s.io", "customresourcedefinitions", NULL,
	    "widgets.example.com", NULL);
	T_POLL_UNTIL(store_count(st, "example.com/widgets") == 0, DEADLINE_MS);
	/* What a create racing with the deletion could leave behind. */
	late = t_json("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\","
		      "\"metadata\":{\"name\":\"late\",\"namespace\":"
		      "\"default\",\"uid\":\"u-late\"}}");
	ck_assert_int_eq(store_create(st, "example.com/widgets", "default",
				      "late", late, NULL), STORE_OK);
	T_POLL_UNTIL(store_count(st, "example.com/widgets") == 0, DEADLINE_MS);
}
END_TEST

Suite *gc_suite(void)
{
	Suite *s = suite_create("gc");
	TCase *tc;

	tc = tcase_create("background");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, background_deletes_dependents);
	tcase_add_test(tc, dependent_with_finalizer_two_phase);
	tcase_add_test(tc, second_live_owner_keeps_dependent);
	suite_add_tcase(s, tc);

	tc = tcase_create("foreground");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, foreground_waits_for_blocking_dependents);
	tcase_add_test(tc, foreground_without_dependents);
	suite_add_tcase(s, tc);

	tc = tcase_create("orphan");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, orphan_removes_references);
	tcase_add_test(tc, job_default_is_orphan);
	suite_add_tcase(s, tc);

	tc = tcase_create("absent-owner");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, absent_owner_after_grace);
	tcase_add_test(tc, owner_in_other_namespace_is_absent);
	suite_add_tcase(s, tc);

	tc = tcase_create("resync");
	tcase_add_checked_fixture(tc, setup_no_gc, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, resync_finds_orphaned_dependents);
	suite_add_tcase(s, tc);

	tc = tcase_create("store-gone");
	tcase_add_checked_fixture(tc, setup_tiny_history, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, tiny_history_still_collects);
	suite_add_tcase(s, tc);

	tc = tcase_create("namespace");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, namespace_deletion);
	tcase_add_test(tc, empty_namespace_goes_at_once);
	suite_add_tcase(s, tc);

	tc = tcase_create("crd");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 20);
	tcase_add_test(tc, crd_deletion_removes_objects);
	suite_add_tcase(s, tc);
	return s;
}
