/*
 * Suite "admission_http": the admission harness of admhook.h over the
 * rest of the write path: matchPolicy Equivalent and conversion webhooks
 * (requests in one version, storage in another), what reaches the client
 * over HTTP (kubectl's user, Warning headers, Status bodies, dryRun), and
 * request.options and request.name as kube-apiserver fills them:
 * CreateOptions / UpdateOptions / DeleteOptions from the query and the
 * DeleteOptions body, and the generated name on validation
 * (k8s-api.md §11.3, §12).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "devserver/api.h"
#include "suites.h"
#include "test/devserver/admhook.h"
#include "test/support/support.h"

#define CMS "/api/v1/namespaces/default/configmaps"

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
				  "clientConfig",
				  ah_client_config(svc, conv_path, AH.ca)));
	ck_assert_msg(ah_create("apiextensions.k8s.io", "v1",
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
	int rc = ah_create("kueue.x-k8s.io", version, "clusterqueues", NULL, o,
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

	return api_internal_get(AH.api, &r, st);
}

#define CQ_RULE(v) \
	"[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"kueue.x-k8s.io\"]," \
	"\"apiVersions\":[\"" v "\"],\"resources\":[\"clusterqueues\"]}]"

START_TEST(match_policy_equivalent)
{
	struct api_status st = API_STATUS_INIT;
	json_t *rev, *got;

	install_crd(NULL, NULL);
	ah_install(true, "eq", ah_hook("eq.example.com", "/label-one",
				       CQ_RULE("v1beta2"), NULL));
	ah_install(false, "exact", ah_hook("exact.example.com", "/deny",
					   CQ_RULE("v1beta2"),
					   "{\"matchPolicy\":\"Exact\"}"));
	ck_assert_int_eq(create_cq("v1beta1", "eq", "{\"cohort\":\"c\"}",
				   &st), 0);
	ck_assert_uint_eq(ah_count("/deny"), 0);
	rev = ah_last("/label-one", NULL);
	ck_assert_str_eq(ah_sget(rev, "request.kind.version"), "v1beta2");
	ck_assert_str_eq(ah_sget(rev, "request.resource.version"), "v1beta2");
	ck_assert_str_eq(ah_sget(rev, "request.requestKind.version"),
			 "v1beta1");
	ck_assert_str_eq(ah_sget(rev, "request.requestResource.version"),
			 "v1beta1");
	ck_assert_str_eq(ah_sget(rev, "request.object.apiVersion"),
			 "kueue.x-k8s.io/v1beta2");
	ck_assert_ptr_null(ah_jget(rev, "request.namespace"));
	json_decref(rev);
	got = get_cq("v1beta1", "eq", &st);
	ck_assert_str_eq(ah_sget(got, "metadata.labels.one"), "1");
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
	ck_assert_uint_eq(ah_count("/convert"), 2);
	rev = ah_first("/convert");
	ck_assert_str_eq(ah_sget(rev, "kind"), "ConversionReview");
	ck_assert_str_eq(ah_sget(rev, "apiVersion"), "apiextensions.k8s.io/v1");
	ck_assert_str_eq(ah_sget(rev, "request.desiredAPIVersion"),
			 "kueue.x-k8s.io/v1beta2");
	ck_assert_uint_eq(strlen(ah_sget(rev, "request.uid")), 36);
	json_decref(rev);
	got = get_cq("v1beta2", "a", &st);
	ck_assert_str_eq(ah_sget(got, "spec.cohortName"), "team");
	ck_assert_ptr_null(ah_jget(got, "spec.cohort"));
	/* metadata other than labels and annotations is the original's */
	ck_assert_int_eq(json_integer_value(ah_jget(got,
						    "metadata.generation")),
			 1);
	json_decref(got);
	got = get_cq("v1beta1", "a", &st);
	ck_assert_str_eq(ah_sget(got, "apiVersion"), "kueue.x-k8s.io/v1beta1");
	ck_assert_str_eq(ah_sget(got, "spec.cohort"), "team");
	ck_assert_int_eq(json_integer_value(ah_jget(got,
						    "metadata.generation")),
			 1);
	json_decref(got);
	/* objects already in the desired version are not sent */
	before = ah_count("/convert");
	got = get_cq("v1beta2", "a", &st);
	json_decref(got);
	ck_assert_uint_eq(ah_count("/convert"), before);
	/* a list is one review */
	ck_assert_int_eq(create_cq("v1beta2", "b", "{\"cohortName\":\"x\"}",
				   &st), 0);
	before = ah_count("/convert");
	ck_assert_int_eq(api_internal_list(AH.api, &r, NULL, NULL, &items,
					   NULL, &st), 0);
	ck_assert_uint_eq(ah_count("/convert"), before + 1);
	ck_assert_uint_eq(json_array_size(items), 2);
	ck_assert_str_eq(ah_sget(json_array_get(items, 1), "spec.cohort"), "x");
	rev = ah_last("/convert", NULL);
	objs = ah_jget(rev, "request.objects");
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
	ah_status(&st, 500, "", c->get);
	ck_assert_ptr_null(st.details);
	status_release(&st);
	ck_assert_int_eq(api_internal_list(AH.api, &r, NULL, NULL, &items,
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

static const char cm_body[] =
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
	"\"metadata\":{\"name\":\"web\"},\"data\":{\"a\":\"b\"}}";

START_TEST(http_user_and_warnings)
{
	struct ah_resp r;
	json_t *rev;

	ah_install(true, "warn", ah_hook("warn.example.com", "/warn",
					 CM_RULE("\"CREATE\""), NULL));
	ah_install(false, "warn2", ah_hook("warn2.example.com", "/warn",
					   CM_RULE("\"CREATE\""), NULL));
	r = ah_post("/api/v1/namespaces/default/configmaps", cm_body);
	ck_assert_msg(r.code == 201, "%ld: %s", r.code, r.body);
	ck_assert_ptr_nonnull(strstr(r.headers,
				     "Warning: 299 - \"first warning\"\r\n"));
	ck_assert_ptr_nonnull(strstr(r.headers, "Warning: 299 - \"second "
				     "\\\"quoted\\\" warning\"\r\n"));
	/* the same text twice is one header */
	ck_assert_ptr_null(strstr(strstr(r.headers, "first warning") + 1,
				  "first warning"));
	rev = ah_last("/warn", NULL);
	ck_assert_str_eq(ah_sget(rev, "request.userInfo.username"),
			 "kubernetes-admin");
	ck_assert(ah_json_is(ah_jget(rev, "request.userInfo.groups"),
			     "[\"system:masters\",\"system:authenticated\"]"));
	json_decref(rev);
	ah_resp_free(&r);
}
END_TEST

START_TEST(http_deny_status)
{
	struct ah_resp r;

	ah_install(false, "vcm", ah_hook("vcm.example.com", "/deny",
					 CM_RULE("\"CREATE\""), NULL));
	r = ah_post("/api/v1/namespaces/default/configmaps", cm_body);
	ck_assert_int_eq(r.code, 403);
	ck_assert_str_eq(ah_sget(r.json, "kind"), "Status");
	ck_assert_str_eq(ah_sget(r.json, "status"), "Failure");
	ck_assert_str_eq(ah_sget(r.json, "reason"), "Forbidden");
	ck_assert_str_eq(ah_sget(r.json, "message"), "admission webhook "
			 "\"vcm.example.com\" denied the request: no jobs "
			 "today");
	ck_assert_int_eq(json_integer_value(json_object_get(r.json, "code")),
			 403);
	ah_resp_free(&r);
}
END_TEST

START_TEST(http_dry_run)
{
	struct ah_resp r;
	json_t *rev;

	ah_install(true, "effects",
		   ah_hook("effects.example.com", "/allow",
			   CM_RULE("\"CREATE\""),
			   "{\"sideEffects\":\"Some\","
			   "\"objectSelector\":{\"matchLabels\":"
			   "{\"fx\":\"yes\"}}}"));
	ah_install(true, "clean",
		   ah_hook("clean.example.com", "/label-one",
			   CM_RULE("\"CREATE\""),
			   "{\"sideEffects\":\"NoneOnDryRun\"}"));
	r = ah_post(CMS "?dryRun=All",
		    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		    "\"metadata\":"
		    "{\"name\":\"fx\",\"labels\":{\"fx\":\"yes\"}}}");
	ck_assert_int_eq(r.code, 400);
	ck_assert_str_eq(ah_sget(r.json, "reason"), "BadRequest");
	ck_assert_str_eq(ah_sget(r.json, "message"), "admission webhook "
			 "\"effects.example.com\" does not support dry run");
	ah_resp_free(&r);
	ck_assert_uint_eq(ah_count("/allow"), 0);
	r = ah_post(CMS "?dryRun=All",
		    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		    "\"metadata\":"
		    "{\"name\":\"dry\",\"labels\":{}}}");
	ck_assert_msg(r.code == 201, "%ld: %s", r.code, r.body);
	ck_assert_str_eq(ah_sget(r.json, "metadata.labels.one"), "1");
	rev = ah_last("/label-one", NULL);
	ck_assert(json_is_true(ah_jget(rev, "request.dryRun")));
	ck_assert_str_eq(ah_sget(rev, "request.options.kind"), "CreateOptions");
	json_decref(rev);
	ah_resp_free(&r);
}
END_TEST

/* ---- request.options and request.name ---- */

/* The request.options the webhook at path got last equal want (JSON). */
static void ck_options(const char *path, const char *op, const char *want)
{
	json_t *rev = ah_last(path, NULL);
	char *got;

	ck_assert_ptr_nonnull(rev);
	ck_assert_str_eq(ah_sget(rev, "request.operation"), op);
	got = json_dumps(ah_jget(rev, "request.options"), JSON_COMPACT);
	ck_assert_msg(ah_json_is(ah_jget(rev, "request.options"), want),
		      "%s options: %s, want %s", path, got, want);
	free(got);
	json_decref(rev);
}

static void install_cm_hooks(void)
{
	ah_install(true, "m", ah_hook("m.example.com", "/allow",
				      CM_RULE("\"*\""), NULL));
	ah_install(false, "v", ah_hook("v.example.com", "/warn",
				       CM_RULE("\"*\""), NULL));
}

START_TEST(options_of_each_verb)
{
	struct ah_resp r;
	const char *body;
	char *uid, *del;

	install_cm_hooks();
	/* create: CreateOptions from the query, on both webhooks */
	r = ah_post(CMS "?fieldManager=kubectl-create&fieldValidation=Strict",
		    "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\","
		    "\"metadata\":{\"name\":\"o\"},\"data\":{\"a\":\"b\"}}");
	ck_assert_msg(r.code == 201, "%ld: %s", r.code, r.body);
	ah_resp_free(&r);
	ck_options("/allow", "CREATE", "{\"kind\":\"CreateOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":"
		   "\"kubectl-create\",\"fieldValidation\":\"Strict\"}");
	ck_options("/warn", "CREATE", "{\"kind\":\"CreateOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":"
		   "\"kubectl-create\",\"fieldValidation\":\"Strict\"}");
	/* update: UpdateOptions */
	r = ah_call("PUT", CMS "/o?fieldManager=kubectl-replace",
		    "application/json", "{\"apiVersion\":\"v1\",\"kind\":"
		    "\"ConfigMap\",\"metadata\":{\"name\":\"o\"},\"data\":"
		    "{\"a\":\"c\"}}");
	ck_assert_msg(r.code == 200, "%ld: %s", r.code, r.body);
	ah_resp_free(&r);
	ck_options("/allow", "UPDATE", "{\"kind\":\"UpdateOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":"
		   "\"kubectl-replace\"}");
	ck_options("/warn", "UPDATE", "{\"kind\":\"UpdateOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":"
		   "\"kubectl-replace\"}");
	/* patch: UpdateOptions (patchToUpdateOptions), dryRun carried */
	r = ah_call("PATCH", CMS "/o?fieldManager=kubectl-patch&dryRun=All",
		    "application/merge-patch+json", "{\"data\":{\"a\":\"d\"}}");
	ck_assert_msg(r.code == 200, "%ld: %s", r.code, r.body);
	ah_resp_free(&r);
	ck_options("/warn", "UPDATE", "{\"kind\":\"UpdateOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"dryRun\":[\"All\"],"
		   "\"fieldManager\":\"kubectl-patch\"}");
	/* server-side apply: CreateOptions when it creates */
	body = "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":"
	       "{\"name\":\"ssa\"},\"data\":{\"a\":\"b\"}}";
	r = ah_call("PATCH", CMS "/ssa?fieldManager=kubectl&force=true",
		    "application/apply-patch+yaml", body);
	ck_assert_msg(r.code == 201, "%ld: %s", r.code, r.body);
	ah_resp_free(&r);
	ck_options("/allow", "CREATE", "{\"kind\":\"CreateOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":"
		   "\"kubectl\"}");
	r = ah_call("PATCH", CMS "/ssa?fieldManager=kubectl",
		    "application/apply-patch+yaml", body);
	ck_assert_msg(r.code == 200, "%ld: %s", r.code, r.body);
	ah_resp_free(&r);
	ck_options("/allow", "UPDATE", "{\"kind\":\"UpdateOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":"
		   "\"kubectl\"}");
	/* delete: from the query ... */
	r = ah_call("DELETE", CMS "/o?propagationPolicy=Background&dryRun=All",
		    NULL, NULL);
	ck_assert_msg(r.code == 200, "%ld: %s", r.code, r.body);
	uid = xstrdup(ah_sget(r.json, "details.uid"));
	ah_resp_free(&r);
	ck_options("/warn", "DELETE", "{\"kind\":\"DeleteOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"propagationPolicy\":"
		   "\"Background\",\"dryRun\":[\"All\"]}");
	/* ... or the body, as sent (the v1 group becomes meta.k8s.io) */
	del = xasprintf("{\"kind\":\"DeleteOptions\",\"apiVersion\":\"v1\","
			"\"gracePeriodSeconds\":0,\"propagationPolicy\":"
			"\"Foreground\",\"preconditions\":{\"uid\":\"%s\"}}",
			uid);
	r = ah_call("DELETE", CMS "/o", "application/json", del);
	ck_assert_msg(r.code == 200, "%ld: %s", r.code, r.body);
	ah_resp_free(&r);
	free(del);
	del = xasprintf("{\"kind\":\"DeleteOptions\",\"apiVersion\":"
			"\"meta.k8s.io/v1\",\"gracePeriodSeconds\":0,"
			"\"preconditions\":{\"uid\":\"%s\"},"
			"\"propagationPolicy\":\"Foreground\"}", uid);
	ck_options("/warn", "DELETE", del);
	free(del);
	free(uid);
	r = ah_call("DELETE", CMS "/ssa", NULL, NULL);
	ck_assert_msg(r.code == 200, "%ld: %s", r.code, r.body);
	ah_resp_free(&r);
	ck_options("/warn", "DELETE", "{\"kind\":\"DeleteOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\"}");
	/* mutating webhooks see DELETE too (object null), same options */
	ck_options("/allow", "DELETE", "{\"kind\":\"DeleteOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\"}");
}
END_TEST

START_TEST(internal_writers_options)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "", .version = "v1",
			     .resource = "configmaps", .ns = "default",
			     .name = "i", .user = "system:gc" };
	json_t *c = ah_cm("i", NULL), *out = NULL;

	install_cm_hooks();
	ck_assert_int_eq(api_internal_create(AH.api, &r, c, &out, &st), 0);
	ck_options("/warn", "CREATE", "{\"kind\":\"CreateOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"fieldManager\":"
		   "\"system:gc\"}");
	ck_assert_int_eq(api_internal_delete(AH.api, &r, "Orphan", NULL, &st),
			 0);
	ck_options("/warn", "DELETE", "{\"kind\":\"DeleteOptions\","
		   "\"apiVersion\":\"meta.k8s.io/v1\",\"propagationPolicy\":"
		   "\"Orphan\"}");
	json_decref(out);
	json_decref(c);
}
END_TEST

START_TEST(generated_name_on_validation)
{
	struct api_status st = API_STATUS_INIT;
	json_t *c = ah_cm("", NULL), *out = NULL, *rev;
	const char *name;

	json_object_del(json_object_get(c, "metadata"), "name");
	json_object_set_new(json_object_get(c, "metadata"), "generateName",
			    json_string("gen-"));
	install_cm_hooks();
	ck_assert_int_eq(ah_create("", "v1", "configmaps", "default", c, &out,
				   &st), 0);
	name = ah_sget(out, "metadata.name");
	ck_assert(!strncmp(name, "gen-", 4));
	/* mutation: no name yet (BeforeCreate generates it afterwards) */
	rev = ah_last("/allow", NULL);
	ck_assert_ptr_null(ah_jget(rev, "request.name"));
	ck_assert_ptr_null(ah_jget(rev, "request.object.metadata.name"));
	ck_assert_str_eq(ah_sget(rev, "request.object.metadata.generateName"),
			 "gen-");
	json_decref(rev);
	/* validation: the generated name, in the object and the request */
	rev = ah_last("/warn", NULL);
	ck_assert_str_eq(ah_sget(rev, "request.name"), name);
	ck_assert_str_eq(ah_sget(rev, "request.object.metadata.name"), name);
	json_decref(rev);
	json_decref(out);
	json_decref(c);
}
END_TEST

Suite *admission_http_suite(void)
{
	Suite *s = suite_create("admission_http");
	TCase *tc;

	tc = tcase_create("versions");
	tcase_add_checked_fixture(tc, ah_start, ah_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, match_policy_equivalent);
	tcase_add_test(tc, conversion_webhook);
	tcase_add_loop_test(tc, conversion_failures, 0,
			    (int)(sizeof(conv_failures) /
				  sizeof(conv_failures[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("http");
	tcase_add_checked_fixture(tc, ah_start, ah_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, http_user_and_warnings);
	tcase_add_test(tc, http_deny_status);
	tcase_add_test(tc, http_dry_run);
	suite_add_tcase(s, tc);

	tc = tcase_create("options");
	tcase_add_checked_fixture(tc, ah_start, ah_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, options_of_each_verb);
	tcase_add_test(tc, internal_writers_options);
	tcase_add_test(tc, generated_name_on_validation);
	suite_add_tcase(s, tc);
	return s;
}
