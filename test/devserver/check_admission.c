/*
 * Suite "admission": admission webhooks end to end through the internal
 * API, with the webhook server and devserver of admhook.h: mutating
 * patches and the AdmissionReview's shape, denials and their codes, call
 * failures under failurePolicy Fail and Ignore, and which webhooks match
 * (namespace and object selectors, subresources, exempt configurations)
 * (k8s-api.md §11). Versions, conversion webhooks and the HTTP side are
 * suite "admission_http" (check_admission_http.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "devserver/api.h"
#include "suites.h"
#include "test/devserver/admhook.h"
#include "test/support/support.h"

/* ---- mutating ---- */

START_TEST(mutating_patch_and_review_shape)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "batch", .version = "v1",
			     .resource = "jobs", .ns = "default",
			     .name = "sample" };
	struct ah_seen meta;
	json_t *out = NULL, *rev, *got;
	const json_t *req;
	const char *uid;

	ah_install(true, "mjob", ah_hook("mjob.kb.io", "/suspend",
					 JOB_RULE("\"CREATE\""), NULL));
	ck_assert_int_eq(ah_create_job("sample", &out, &st), 0);
	ck_assert(json_is_true(ah_jget(out, "spec.suspend")));
	json_decref(out);
	got = api_internal_get(AH.api, &r, &st);
	ck_assert(json_is_true(ah_jget(got, "spec.suspend")));
	json_decref(got);

	ck_assert_uint_eq(ah_count("/suspend"), 1);
	rev = ah_last("/suspend", &meta);
	ck_assert_str_eq(meta.timeout, "10s");
	ck_assert_str_eq(meta.host, "hooks.webhooks.svc");
	ck_assert_str_eq(meta.ctype, "application/json");
	ck_assert_str_eq(meta.accept, "application/json, */*");
	ck_assert_str_eq(ah_sget(rev, "kind"), "AdmissionReview");
	ck_assert_str_eq(ah_sget(rev, "apiVersion"), "admission.k8s.io/v1");
	req = json_object_get(rev, "request");
	uid = ah_sget(req, "uid");
	ck_assert_uint_eq(strlen(uid), 36);
	ck_assert_int_eq(uid[14], '4');
	ck_assert(ah_json_is(json_object_get(req, "kind"),
		"{\"group\":\"batch\",\"version\":\"v1\",\"kind\":\"Job\"}"));
	ck_assert(ah_json_is(json_object_get(req, "resource"),
		"{\"group\":\"batch\",\"version\":\"v1\","
		"\"resource\":\"jobs\"}"));
	ck_assert(json_equal(json_object_get(req, "requestKind"),
			     json_object_get(req, "kind")));
	ck_assert(json_equal(json_object_get(req, "requestResource"),
			     json_object_get(req, "resource")));
	ck_assert_ptr_null(json_object_get(req, "subResource"));
	ck_assert_ptr_null(json_object_get(req, "requestSubResource"));
	ck_assert_str_eq(ah_sget(req, "name"), "sample");
	ck_assert_str_eq(ah_sget(req, "namespace"), "default");
	ck_assert_str_eq(ah_sget(req, "operation"), "CREATE");
	ck_assert_str_eq(ah_sget(req, "userInfo.username"), "cueue-devserver");
	ck_assert_str_eq(ah_sget(req, "object.metadata.name"), "sample");
	ck_assert_str_eq(ah_sget(req, "object.kind"), "Job");
	/* mutating webhooks run before uid and creationTimestamp */
	ck_assert_ptr_null(ah_jget(req, "object.metadata.uid"));
	ck_assert(json_is_null(json_object_get(req, "oldObject")));
	ck_assert(json_is_false(json_object_get(req, "dryRun")));
	ck_assert_str_eq(ah_sget(req, "options.kind"), "CreateOptions");
	ck_assert_str_eq(ah_sget(req, "options.apiVersion"), "meta.k8s.io/v1");
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
	ah_install(true, "b-second", ah_hook("two.example.com", "/label-two",
					     CM_RULE("\"*\""), NULL));
	ah_install(true, "a-first", ah_hook("one.example.com", "/label-one",
					    CM_RULE("\"*\""), NULL));
	ah_install(false, "check", ah_hook("v.example.com", "/allow",
					   CM_RULE("\"CREATE\""), NULL));
	ck_assert_int_eq(ah_create_cm("default", "chain", NULL, &st), 0);
	got = api_internal_get(AH.api, &r, &st);
	ck_assert_str_eq(ah_sget(got, "metadata.labels.one"), "1");
	ck_assert_str_eq(ah_sget(got, "metadata.labels.two"), "2");
	json_decref(got);
	rev = ah_last("/label-one", NULL);
	ck_assert_ptr_null(ah_jget(rev, "request.object.metadata.labels.two"));
	json_decref(rev);
	rev = ah_last("/label-two", NULL);
	ck_assert_str_eq(ah_sget(rev, "request.object.metadata.labels.one"),
			 "1");
	json_decref(rev);
	/* validating webhooks see the final object, uid and all */
	rev = ah_last("/allow", NULL);
	ck_assert_str_eq(ah_sget(rev, "request.object.metadata.labels.two"),
			 "2");
	ck_assert_ptr_nonnull(ah_sget(rev, "request.object.metadata.uid"));
	json_decref(rev);
}
END_TEST

START_TEST(patch_errors_ignore_failure_policy)
{
	struct api_status st = API_STATUS_INIT;

	ah_install(true, "bad", ah_hook("bad.example.com", "/badpatch",
					CM_RULE("\"CREATE\""),
					"{\"failurePolicy\":\"Ignore\"}"));
	ck_assert_int_eq(ah_create_cm("default", "p", NULL, &st), -1);
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
	json_t *c = ah_cm("", NULL), *out = NULL, *rev;

	json_object_del(json_object_get(c, "metadata"), "name");
	json_object_set_new(json_object_get(c, "metadata"), "generateName",
			    json_string("gen-"));
	ah_install(true, "m", ah_hook("m.example.com", "/allow",
				      CM_RULE("\"CREATE\""), NULL));
	ck_assert_int_eq(ah_create("", "v1", "configmaps", "default", c, &out,
				   &st), 0);
	ck_assert(!strncmp(ah_sget(out, "metadata.name"), "gen-", 4));
	rev = ah_last("/allow", NULL);
	ck_assert_ptr_null(ah_jget(rev, "request.name"));
	ck_assert_ptr_null(ah_jget(rev, "request.object.metadata.name"));
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

	ah_install(false, "vjob",
		   ah_hook("vjob.kb.io", "/deny",
			   JOB_RULE("\"CREATE\", \"UPDATE\""), NULL));
	ck_assert_int_eq(ah_create_job("sample", NULL, &st), -1);
	ah_status(&st, 403, "Forbidden", "admission webhook \"vjob.kb.io\" "
		  "denied the request: no jobs today");
	status_release(&st);
	ck_assert_ptr_null(api_internal_get(AH.api, &r, &st));
	ck_assert_int_eq(st.code, 404);
	status_release(&st);
}
END_TEST

START_TEST(deny_codes)
{
	struct api_status st = API_STATUS_INIT;

	ah_install(false, "bare",
		   ah_hook("bare.example.com", "/deny-bare",
			   CM_RULE("\"CREATE\""),
			   "{\"objectSelector\":{\"matchLabels\":"
			   "{\"which\":\"bare\"}}}"));
	ah_install(false, "inv", ah_hook("inv.example.com", "/deny-422",
					 CM_RULE("\"CREATE\""),
					 "{\"objectSelector\":{\"matchLabels\":"
					 "{\"which\":\"inv\"}}}"));
	ck_assert_int_eq(ah_create_cm("default", "a", "{\"which\":\"bare\"}",
				      &st), -1);
	ah_status(&st, 400, "", "admission webhook \"bare.example.com\" "
		  "denied the request without explanation");
	status_release(&st);
	ck_assert_int_eq(ah_create_cm("default", "b", "{\"which\":\"inv\"}",
				      &st), -1);
	ah_status(&st, 422, "Invalid", "admission webhook \"inv.example.com\""
		  " denied the request: spec.queueName: Required value");
	ck_assert_str_eq(ah_sget(st.details, "name"), "x");
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

	ck_assert_int_eq(ah_create_cm("default", "gone", NULL, &st), 0);
	ah_install(false, "vdel", ah_hook("vdel.example.com", "/deny",
					  CM_RULE("\"DELETE\""), NULL));
	ck_assert_int_eq(api_internal_delete(AH.api, &r, NULL, NULL, &st), -1);
	ah_status(&st, 403, "Forbidden", "admission webhook "
		  "\"vdel.example.com\" denied the request: no jobs today");
	status_release(&st);
	rev = ah_last("/deny", NULL);
	ck_assert_str_eq(ah_sget(rev, "request.operation"), "DELETE");
	ck_assert(json_is_null(ah_jget(rev, "request.object")));
	ck_assert_str_eq(ah_sget(rev, "request.oldObject.metadata.name"),
			 "gone");
	ck_assert_str_eq(ah_sget(rev, "request.options.kind"), "DeleteOptions");
	json_decref(rev);
}
END_TEST

START_TEST(delete_mutation_is_refused)
{
	struct api_status st = API_STATUS_INIT;
	struct api_ref r = { .group = "", .version = "v1",
			     .resource = "configmaps", .ns = "default",
			     .name = "gone" };

	ck_assert_int_eq(ah_create_cm("default", "gone", NULL, &st), 0);
	ah_install(true, "mdel", ah_hook("mdel.example.com", "/label-one",
					 CM_RULE("\"DELETE\""), NULL));
	ck_assert_int_eq(api_internal_delete(AH.api, &r, NULL, NULL, &st), -1);
	ah_status(&st, 500, "InternalError", "Internal error occurred: "
		  "admission webhook \"mdel.example.com\" attempted to modify "
		  "the object, which is not supported for this operation");
	status_release(&st);
	ck_assert_uint_eq(ah_count("/label-one"), 1);
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
	h = ah_hook(name, c->path, CM_RULE("\"CREATE\""), extra);
	json_object_set_new(h, "clientConfig", ah_client_config(c->svc ? c->svc
		: "hooks", c->path, c->other_ca ? AH.other_ca : AH.ca));
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

	ah_install(c->mutating, "fail", failure_hook(c, name, "Fail"));
	ck_assert_int_eq(ah_create_cm("default", "x", NULL, &st), -1);
	ck_assert_int_eq(st.code, 500);
	ck_assert_str_eq(st.reason, "InternalError");
	snprintf(want, sizeof(want), "Internal error occurred: failed calling "
		 "webhook \"%s\": %s", name, c->message);
	uidp = strstr(want, "%UID%");
	if (uidp) {
		char tail[512];

		rev = ah_last(c->path, NULL);
		snprintf(tail, sizeof(tail), "%s", uidp + 5);
		snprintf(uidp, sizeof(want) - (size_t)(uidp - want), "%s%s",
			 ah_sget(rev, "request.uid"), tail);
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

	ah_install(c->mutating, "fail", failure_hook(c, "hook.example.com",
						     "Ignore"));
	ck_assert_msg(ah_create_cm("default", "x", NULL, &st) == 0, "%s",
		      st.message);
}
END_TEST

START_TEST(url_client_config)
{
	struct api_status st = API_STATUS_INIT;
	char *url = xasprintf("https://127.0.0.1:%u/deny",
			      http_server_port(AH.hooks));
	struct ah_seen meta;
	json_t *rev;

	ah_install(false, "byurl", ah_hook("url.example.com", url,
					   CM_RULE("\"CREATE\""), NULL));
	ck_assert_int_eq(ah_create_cm("default", "x", NULL, &st), -1);
	ah_status(&st, 403, "Forbidden", "admission webhook "
		  "\"url.example.com\" denied the request: no jobs today");
	status_release(&st);
	rev = ah_last("/deny", &meta);
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

	ah_install(true, "old",
		   ah_hook("old.example.com", "/label-one",
			   CM_RULE("\"CREATE\""),
			   "{\"admissionReviewVersions\":[\"v1beta1\","
			   "\"v1\"]}"));
	ck_assert_int_eq(ah_create_cm("default", "x", NULL, &st), 0);
	rev = ah_last("/label-one", NULL);
	ck_assert_str_eq(ah_sget(rev, "apiVersion"),
			 "admission.k8s.io/v1beta1");
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

	ck_assert_int_eq(ah_create("", "v1", "namespaces", NULL, ns, NULL, &st),
			 0);
	ah_install(false, "ns", ah_hook("ns.example.com", "/deny",
		"[{\"operations\":[\"CREATE\"],\"apiGroups\":[\"\","
		"\"scheduling.k8s.io\"],\"apiVersions\":[\"v1\"],"
		"\"resources\":[\"configmaps\",\"priorityclasses\","
		"\"namespaces\"]}]",
		"{\"namespaceSelector\":{\"matchLabels\":{\"team\":\"a\"}}}"));
	ck_assert_int_eq(ah_create_cm("team-a", "x", NULL, &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	ck_assert_int_eq(ah_create_cm("default", "x", NULL, &st), 0);
	/* cluster-scoped objects other than namespaces always match */
	ck_assert_int_eq(ah_create("scheduling.k8s.io", "v1", "priorityclasses",
				   NULL, pc, NULL, &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	/* a namespace is matched by its own labels */
	json_object_set_new(json_object_get(ns, "metadata"), "name",
			    json_string("team-b"));
	ck_assert_int_eq(ah_create("", "v1", "namespaces", NULL, ns, NULL, &st),
			 -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	/* apiserver names a Namespace's own request namespace after it */
	rev = ah_last("/deny", NULL);
	ck_assert_str_eq(ah_sget(rev, "request.namespace"), "team-b");
	ck_assert_str_eq(ah_sget(rev, "request.name"), "team-b");
	json_decref(rev);
	json_object_set_new(json_object_get(ns, "metadata"), "labels",
			    json_pack("{s:s}", "team", "c"));
	ck_assert_int_eq(ah_create("", "v1", "namespaces", NULL, ns, NULL, &st),
			 0);
	json_decref(ns);
	json_decref(pc);
}
END_TEST

START_TEST(namespace_selector_expressions)
{
	struct api_status st = API_STATUS_INIT;

	ah_install(false, "kueue-style", ah_hook("ns.example.com", "/deny",
		CM_RULE("\"CREATE\""),
		"{\"namespaceSelector\":{\"matchExpressions\":[{\"key\":"
		"\"kubernetes.io/metadata.name\",\"operator\":\"NotIn\","
		"\"values\":[\"kube-system\",\"kueue-system\"]}]}}"));
	ck_assert_int_eq(ah_create_cm("kube-system", "x", NULL, &st), 0);
	ck_assert_int_eq(ah_create_cm("default", "x", NULL, &st), -1);
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

	ck_assert_int_eq(ah_create_cm("default", "old-match",
				      "{\"check\":\"yes\"}", &st), 0);
	ah_install(false, "obj", ah_hook("obj.example.com", "/deny",
					 CM_RULE("\"CREATE\",\"UPDATE\""),
					 "{\"objectSelector\":{\"matchLabels\":"
					 "{\"check\":\"yes\"}}}"));
	ck_assert_int_eq(ah_create_cm("default", "a", "{\"check\":\"yes\"}",
				      &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
	ck_assert_int_eq(ah_create_cm("default", "b", "{\"check\":\"no\"}",
				      &st),
			 0);
	/* UPDATE: oldObject's labels are enough */
	c = ah_cm("old-match", "{}");
	ck_assert_int_eq(api_internal_update(AH.api, &r, NULL, c, NULL, &st),
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

	ck_assert_int_eq(ah_create_job("sample", NULL, &st), 0);
	snprintf(rules, sizeof(rules), "[{\"operations\":[\"UPDATE\"],"
		 "\"apiGroups\":[\"*\"],\"apiVersions\":[\"*\"],"
		 "\"resources\":%s}]", c->resources);
	ah_install(false, "sub", ah_hook("sub.example.com", "/deny", rules,
					 NULL));
	got = api_internal_get(AH.api, &r, &st);
	json_object_set_new(json_object_get(got, "metadata"), "labels",
			    json_pack("{s:s}", "changed", "yes"));
	rc = api_internal_update(AH.api, &r, NULL, got, NULL, &st);
	ck_assert_msg((rc < 0) == c->main, "%s main: %s", c->resources,
		      st.message ? st.message : "allowed");
	status_release(&st);
	json_decref(got);
	got = api_internal_get(AH.api, &r, &st);
	json_object_set_new(got, "status", json_pack("{s:i}", "active", 1));
	rc = api_internal_update(AH.api, &r, "status", got, NULL, &st);
	ck_assert_msg((rc < 0) == c->status, "%s status: %s", c->resources,
		      st.message ? st.message : "allowed");
	status_release(&st);
	json_decref(got);
	if (c->status) {
		json_t *rev = ah_last("/deny", NULL);

		ck_assert_str_eq(ah_sget(rev, "request.subResource"), "status");
		ck_assert_str_eq(ah_sget(rev, "request.requestSubResource"),
				 "status");
		ck_assert_str_eq(ah_sget(rev, "request.operation"), "UPDATE");
		ck_assert_str_eq(ah_sget(rev, "request.options.kind"),
				 "UpdateOptions");
		ck_assert_str_eq(ah_sget(rev,
					 "request.oldObject.metadata.name"),
				 "sample");
		json_decref(rev);
	}
}
END_TEST

START_TEST(configurations_are_exempt)
{
	struct api_status st = API_STATUS_INIT;

	ah_install(false, "all",
		   ah_hook("all.example.com", "/deny",
			   "[{\"operations\":[\"*\"],\"apiGroups\":"
			   "[\"*\"],\"apiVersions\":[\"*\"],"
			   "\"resources\":[\"*/*\"]}]", NULL));
	ah_install(true, "another", ah_hook("m.example.com", "/allow",
					    CM_RULE("\"CREATE\""), NULL));
	ck_assert_uint_eq(ah_count("/deny"), 0);
	ck_assert_int_eq(ah_create_cm("default", "x", NULL, &st), -1);
	ck_assert_int_eq(st.code, 403);
	status_release(&st);
}
END_TEST

Suite *admission_suite(void)
{
	Suite *s = suite_create("admission");
	TCase *tc;

	tc = tcase_create("mutating");
	tcase_add_checked_fixture(tc, ah_start, ah_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, mutating_patch_and_review_shape);
	tcase_add_test(tc, mutating_order_and_chaining);
	tcase_add_test(tc, patch_errors_ignore_failure_policy);
	tcase_add_test(tc, generate_name_is_empty_for_mutation);
	suite_add_tcase(s, tc);

	tc = tcase_create("denial");
	tcase_add_checked_fixture(tc, ah_start, ah_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, deny_with_message);
	tcase_add_test(tc, deny_codes);
	tcase_add_test(tc, delete_operation);
	tcase_add_test(tc, delete_mutation_is_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("failure-policy");
	tcase_add_checked_fixture(tc, ah_start, ah_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, call_failures, 0,
			    (int)(sizeof(failures) / sizeof(failures[0])));
	tcase_add_loop_test(tc, call_failures_ignored, 0,
			    (int)(sizeof(failures) / sizeof(failures[0])));
	tcase_add_test(tc, url_client_config);
	tcase_add_test(tc, review_version_v1beta1);
	suite_add_tcase(s, tc);

	tc = tcase_create("matching");
	tcase_add_checked_fixture(tc, ah_start, ah_stop);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, namespace_selector);
	tcase_add_test(tc, namespace_selector_expressions);
	tcase_add_test(tc, object_selector);
	tcase_add_loop_test(tc, subresource_rules, 0,
			    (int)(sizeof(subs) / sizeof(subs[0])));
	tcase_add_test(tc, configurations_are_exempt);
	suite_add_tcase(s, tc);

	return s;
}
