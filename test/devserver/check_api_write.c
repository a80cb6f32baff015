/*
 * Suite "api_write": the devserver's write verbs end to end over HTTP
 * (dsclient.h): create, get-after-write, update (no-op, conflicts,
 * generation), the patch types, server-side apply, delete with
 * finalizers and preconditions, the status subresource, generateName
 * and dryRun, the Status bodies of 400/404/405/409/413/415/422,
 * fieldValidation, built-in defaults (Jobs, namespaces, events),
 * protobuf bodies and deletecollection.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "devserver/api.h"
#include "devserver/http.h"
#include "suites.h"
#include "test/devserver/dsclient.h"
#include "test/support/support.h"

static void start_with_crds(void)
{
	ds_start(NULL);
	ds_install_crds(NULL);
}



START_TEST(crd_status_established)
{
	struct ds_resp r = GET("/apis/apiextensions.k8s.io/v1/"
		"customresourcedefinitions/workloads.kueue.x-k8s.io");
	const json_t *conds = ds_jget(r.json, "status.conditions");

	ds_code(r, 200);
	ck_assert_uint_eq(json_array_size(conds), 2);
	ck_assert_str_eq(ds_sget(json_array_get(conds, 1), "type"),
			 "Established");
	ck_assert_str_eq(ds_sget(json_array_get(conds, 1), "status"), "True");
	ck_assert_str_eq(ds_sget(r.json, "status.acceptedNames.kind"),
			 "Workload");
	ck_assert_str_eq(json_string_value(json_array_get(
		ds_jget(r.json, "status.storedVersions"), 0)), "v1beta2");
	ds_resp_free(&r);
}
END_TEST

/* ---- create / get / list / update / patch / delete ---- */

START_TEST(create_get_list)
{
	struct ds_resp r = POST(WL, ds_wl_x), g;
	const json_t *items;

	ds_code(r, 201);
	ck_assert_int_eq(json_integer_value(ds_jget(r.json,
						    "metadata.generation")),
			 1);
	ck_assert_uint_eq(strlen(ds_sget(r.json, "metadata.uid")), 36);
	ck_assert_uint_eq(strlen(ds_sget(r.json, "metadata.creationTimestamp")),
			  20);
	ck_assert(json_is_true(ds_jget(r.json, "spec.active"))); /* default */
	g = GET(WL "/x");
	ds_code(g, 200);
	ck_assert_str_eq(ds_rv(&g), ds_rv(&r));
	ds_resp_free(&g);
	g = GET(WL);
	ds_code(g, 200);
	ck_assert_str_eq(ds_sget(g.json, "kind"), "WorkloadList");
	items = json_object_get(g.json, "items");
	ck_assert_uint_eq(json_array_size(items), 1);
	ck_assert_str_eq(ds_sget(json_array_get(items, 0), "kind"), "Workload");
	ds_resp_free(&g);
	g = GET("/apis/kueue.x-k8s.io/v1beta2/namespaces/other/workloads");
	ds_code(g, 200);
	ck_assert(json_is_array(json_object_get(g.json, "items")));
	ck_assert_uint_eq(json_array_size(json_object_get(g.json, "items")), 0);
	ck_assert_ptr_nonnull(strstr(g.body, "\"items\":[]"));
	ds_resp_free(&g);
	g = POST(WL, ds_wl_x);
	ds_status(&g, 409, "AlreadyExists",
		  "workloads.kueue.x-k8s.io \"x\" already exists");
	ck_assert_str_eq(ds_sget(g.json, "details.kind"), "workloads");
	ds_resp_free(&g);
	ds_resp_free(&r);
}
END_TEST

START_TEST(update_semantics)
{
	struct ds_resp c = POST(WL, ds_wl_x), u, n;
	json_t *o = json_deep_copy(c.json);
	char *body, *rv1 = xstrdup(ds_rv(&c));

	/* no-op PUT: RV kept */
	body = json_dumps(o, 0);
	n = PUT(WL "/x", body);
	ds_code(n, 200);
	ck_assert_str_eq(ds_rv(&n), rv1);
	ds_resp_free(&n);
	free(body);
	/* spec change: generation 2 */
	json_object_set_new(json_object_get(o, "spec"), "queueName",
			    json_string("q2"));
	body = json_dumps(o, 0);
	u = PUT(WL "/x", body);
	ds_code(u, 200);
	ck_assert_int_eq(json_integer_value(ds_jget(u.json,
						    "metadata.generation")),
			 2);
	ck_assert_str_ne(ds_rv(&u), rv1);
	/* stale RV */
	n = PUT(WL "/x", body);
	ds_status(&n, 409, "Conflict", "Operation cannot be fulfilled on "
		  "workloads.kueue.x-k8s.io \"x\": the object has been "
		  "modified; please apply your changes to the latest version "
		  "and try again");
	ds_resp_free(&n);
	free(body);
	/* CRs need a resourceVersion on PUT */
	json_object_del(json_object_get(o, "metadata"), "resourceVersion");
	body = json_dumps(o, 0);
	n = PUT(WL "/x", body);
	ds_status(&n, 422, "Invalid", NULL);
	ck_assert_ptr_nonnull(strstr(ds_sget(n.json, "message"),
		"metadata.resourceVersion: Invalid value: 0x0: must be "
		"specified for an update"));
	ds_resp_free(&n);
	free(body);
	/* labels only: generation unchanged */
	n = PATCH(WL "/x", MERGE, "{\"metadata\":{\"labels\":{\"a\":\"b\"}}}");
	ds_code(n, 200);
	ck_assert_int_eq(json_integer_value(ds_jget(n.json,
						    "metadata.generation")),
			 2);
	ds_resp_free(&n);
	n = PUT(WL "/nosuch", "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		"\"kind\":\"Workload\",\"metadata\":{\"name\":\"nosuch\","
		"\"resourceVersion\":\"1\"}}");
	ds_status(&n, 404, "NotFound",
		  "workloads.kueue.x-k8s.io \"nosuch\" not found");
	ds_resp_free(&n);
	json_decref(o);
	free(rv1);
	ds_resp_free(&u);
	ds_resp_free(&c);
}
END_TEST

START_TEST(patch_kinds)
{
	struct ds_resp c = POST(WL, ds_wl_x), p;

	p = PATCH(WL "/x", MERGE, "{\"spec\":{\"queueName\":\"m\"}}");
	ds_code(p, 200);
	ck_assert_str_eq(ds_sget(p.json, "spec.queueName"), "m");
	ds_resp_free(&p);
	p = PATCH(WL "/x", JSONP, "[{\"op\":\"replace\",\"path\":"
		  "\"/spec/queueName\",\"value\":\"j\"}]");
	ds_code(p, 200);
	ck_assert_str_eq(ds_sget(p.json, "spec.queueName"), "j");
	ds_resp_free(&p);
	p = PATCH(WL "/x", SMP, "{\"spec\":{\"queueName\":\"s\"}}");
	ds_status(&p, 415, "UnsupportedMediaType", "the body of the request "
		  "was in an unknown format - accepted media types include: "
		  "application/json-patch+json, application/merge-patch+json, "
		  "application/apply-patch+yaml");
	ds_resp_free(&p);
	/* merge patch carrying a stale resourceVersion */
	p = PATCH(WL "/x", MERGE, "{\"metadata\":{\"resourceVersion\":\"1\"},"
		  "\"spec\":{\"queueName\":\"r\"}}");
	ds_status(&p, 409, "Conflict", NULL);
	ds_resp_free(&p);
	p = PATCH(WL "/nosuch", MERGE, "{}");
	ds_status(&p, 404, "NotFound", NULL);
	ds_resp_free(&p);
	ds_resp_free(&c);
}
END_TEST

START_TEST(server_side_apply)
{
	static const char cq[] =
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		"\"ClusterQueue\",\"metadata\":{\"name\":\"cq\"},\"spec\":"
		"{\"cohort\":\"a\"}}";
	struct ds_resp r = PATCH(CQ "/cq", APPLY, cq);

	ds_status(&r, 400, "BadRequest", NULL);
	ds_resp_free(&r);
	r = PATCH(CQ "/cq?fieldManager=kubectl&force=false", APPLY, cq);
	ds_code(r, 201);
	/* schema defaults applied on the way */
	ck_assert_str_eq(ds_sget(r.json, "spec.queueingStrategy"),
			 "BestEffortFIFO");
	ck_assert_str_eq(ds_sget(r.json, "spec.preemption.reclaimWithinCohort"),
			 "Never");
	ds_resp_free(&r);
	r = PATCH(CQ "/cq?fieldManager=kubectl", APPLY,
		  "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ClusterQueue\n"
		  "metadata:\n  name: cq\nspec:\n  cohort: b\n");
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "spec.cohort"), "b");
	ds_resp_free(&r);
}
END_TEST

START_TEST(delete_and_finalizers)
{
	struct ds_resp c = POST(WL, ds_wl_x), d, g;

	d = DEL(WL "/x");
	ds_code(d, 200);
	ck_assert_str_eq(ds_sget(d.json, "kind"), "Status");
	ck_assert_str_eq(ds_sget(d.json, "status"), "Success");
	ck_assert_str_eq(ds_sget(d.json, "details.kind"), "workloads");
	ck_assert_str_eq(ds_sget(d.json, "details.uid"),
			 ds_sget(c.json, "metadata.uid"));
	ds_resp_free(&d);
	ds_resp_free(&c);
	c = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"f\",\"finalizers\":"
		 "[\"kueue.x-k8s.io/resource-in-use\"]},\"spec\":{\"podSets\":"
		 "[{\"name\":\"main\",\"count\":1}]}}");
	ds_code(c, 201);
	d = ds_call("DELETE", WL "/f", "application/json",
		    "{\"propagationPolicy\":\"Background\"}", NULL);
	ds_code(d, 200);
	ck_assert_str_eq(ds_sget(d.json, "kind"), "Workload");
	ck_assert_ptr_nonnull(ds_sget(d.json, "metadata.deletionTimestamp"));
	ck_assert_int_eq(json_integer_value(ds_jget(d.json,
		"metadata.deletionGracePeriodSeconds")), 0);
	ck_assert_int_eq(json_integer_value(ds_jget(d.json,
		"metadata.generation")), 2);
	ds_resp_free(&d);
	/* no new finalizers while deleting */
	d = PATCH(WL "/f", MERGE, "{\"metadata\":{\"finalizers\":[\"a/b\","
		  "\"kueue.x-k8s.io/resource-in-use\"]}}");
	ds_status(&d, 422, "Invalid", NULL);
	ds_resp_free(&d);
	/* removing the last finalizer deletes it */
	d = PATCH(WL "/f", JSONP, "[{\"op\":\"remove\",\"path\":"
		  "\"/metadata/finalizers\"}]");
	ds_code(d, 200);
	ds_resp_free(&d);
	g = GET(WL "/f");
	ds_status(&g, 404, "NotFound",
		  "workloads.kueue.x-k8s.io \"f\" not found");
	ck_assert_str_eq(ds_sget(g.json, "details.name"), "f");
	ck_assert_str_eq(ds_sget(g.json, "details.group"), "kueue.x-k8s.io");
	ds_resp_free(&g);
	ds_resp_free(&c);
	/* preconditions */
	c = POST(WL, ds_wl_x);
	d = ds_call("DELETE", WL "/x", "application/json",
		    "{\"preconditions\":{\"uid\":\"nope\"}}", NULL);
	ds_status(&d, 409, "Conflict", NULL);
	ck_assert_ptr_nonnull(strstr(ds_sget(d.json, "message"),
				     "Precondition failed: UID in precondition"));
	ds_resp_free(&d);
	ds_resp_free(&c);
}
END_TEST

START_TEST(status_subresource)
{
	struct ds_resp c, s, p;

	c = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"s\"},\"spec\":{"
		 "\"podSets\":[{\"name\":\"m\",\"count\":1}]},\"status\":{"
		 "\"admission\":{\"clusterQueue\":\"x\"}}}");
	ds_code(c, 201);
	ck_assert_ptr_null(ds_jget(c.json, "status"));
	p = PATCH(WL "/s", MERGE, "{\"status\":{\"admission\":{}}}");
	ds_code(p, 200);
	ck_assert_ptr_null(ds_jget(p.json, "status"));
	ds_resp_free(&p);
	s = PATCH(WL "/s/status", MERGE, "{\"metadata\":{\"labels\":{\"x\":"
		  "\"y\"}},\"spec\":{\"queueName\":\"ignored\"},\"status\":{"
		  "\"admission\":{\"clusterQueue\":\"cq\"}}}");
	ds_code(s, 200);
	ck_assert_str_eq(ds_sget(s.json, "status.admission.clusterQueue"),
			 "cq");
	ck_assert_ptr_null(ds_sget(s.json, "spec.queueName"));
	ck_assert_ptr_null(ds_jget(s.json, "metadata.labels"));
	ck_assert_int_eq(json_integer_value(ds_jget(s.json,
		"metadata.generation")), 1);
	ds_resp_free(&s);
	s = GET(WL "/s/status");
	ds_code(s, 200);
	ck_assert_str_eq(ds_sget(s.json, "kind"), "Workload");
	ds_resp_free(&s);
	s = ds_call("POST", WL "/s/status", "application/json", "{}", NULL);
	ds_status(&s, 405, "MethodNotAllowed", "the server does not allow "
		  "this method on the requested resource");
	ds_resp_free(&s);
	ds_resp_free(&c);
}
END_TEST

START_TEST(generate_name_and_dry_run)
{
	struct ds_resp c = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\","
		"\"kind\":\"Workload\",\"metadata\":{\"generateName\":"
		"\"job-sample-\"},\"spec\":{\"podSets\":[{\"name\":\"m\","
		"\"count\":1}]}}"), l;
	const char *name;

	ds_code(c, 201);
	name = ds_sget(c.json, "metadata.name");
	ck_assert_uint_eq(strlen(name), strlen("job-sample-") + 5);
	ck_assert(!strncmp(name, "job-sample-", 11));
	ck_assert_uint_eq(strspn(name + 11, "bcdfghjklmnpqrstvwxz2456789"), 5);
	ds_resp_free(&c);
	c = POST(WL "?dryRun=All", ds_wl_x);
	ds_code(c, 201);
	ck_assert_ptr_nonnull(ds_sget(c.json, "metadata.uid"));
	l = GET(WL "/x");
	ds_code(l, 404);
	ds_resp_free(&l);
	ds_resp_free(&c);
	/* a dry run over an existing name: AlreadyExists, as the real
	 * create (kube-apiserver's dry-run storage checks the key) */
	c = POST(WL, ds_wl_x);
	ds_code(c, 201);
	ds_resp_free(&c);
	c = POST(WL "?dryRun=All", ds_wl_x);
	ds_status(&c, 409, "AlreadyExists",
		  "workloads.kueue.x-k8s.io \"x\" already exists");
	ds_resp_free(&c);
}
END_TEST

/* ---- error bodies ---- */

START_TEST(error_statuses)
{
	struct ds_resp r = GET("/apis/nosuch.io/v1/things");
	char *big;

	ds_status(&r, 404, "NotFound",
		  "the server could not find the requested resource");
	ds_resp_free(&r);
	r = GET("/apis/batch/v1/namespaces/default/jobs/x/nosub");
	ds_status(&r, 404, "NotFound", NULL);
	ds_resp_free(&r);
	r = GET("/apis/kueue.x-k8s.io/v1beta2/namespaces/default/clusterqueues");
	ds_status(&r, 404, "NotFound", NULL); /* cluster-scoped in a ns */
	ds_resp_free(&r);
	r = POST(WL "/x", ds_wl_x);
	ds_status(&r, 405, "MethodNotAllowed", NULL);
	ds_resp_free(&r);
	r = POST("/apis/kueue.x-k8s.io/v1beta2/namespaces/nosuchns/workloads",
		 ds_wl_x);
	ds_status(&r, 404, "NotFound", "namespaces \"nosuchns\" not found");
	ck_assert_str_eq(ds_sget(r.json, "details.kind"), "namespaces");
	ds_resp_free(&r);
	r = POST(JOBS, "{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\","
		 "\"metadata\":{\"name\":\"bad\"},\"spec\":{}}");
	ds_status(&r, 422, "Invalid",
		  "Job.batch \"bad\" is invalid: spec.template: Required value");
	ck_assert_str_eq(ds_sget(r.json, "details.kind"), "Job");
	ck_assert_str_eq(ds_sget(json_array_get(ds_jget(r.json,
							"details.causes"), 0),
				 "reason"), "FieldValueRequired");
	ck_assert_str_eq(ds_sget(json_array_get(ds_jget(r.json,
							"details.causes"), 0),
				 "field"), "spec.template");
	ds_resp_free(&r);
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"Bad_Name\"},\"spec\":"
		 "{\"podSets\":[{\"name\":\"m\",\"count\":1}]}}");
	ds_status(&r, 422, "Invalid", NULL);
	ck_assert_ptr_nonnull(strstr(ds_sget(r.json, "message"),
				     "metadata.name"));
	ds_resp_free(&r);
	/* schema: every bad field is named */
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"v\"},\"spec\":{"
		 "\"priority\":\"high\",\"podSets\":[{\"name\":\"m\"}]}}");
	ds_status(&r, 422, "Invalid", NULL);
	ck_assert_uint_ge(json_array_size(ds_jget(r.json, "details.causes")),
			  2);
	ck_assert_ptr_nonnull(strstr(r.body, "spec.priority"));
	ck_assert_ptr_nonnull(strstr(r.body, "spec.podSets[0].count"));
	ds_resp_free(&r);
	r = POST(WL, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta1\",\"kind\":"
		 "\"Workload\",\"metadata\":{\"name\":\"v\"}}");
	ds_status(&r, 400, "BadRequest", NULL);
	ds_resp_free(&r);
	r = POST(WL, "{not json");
	ds_status(&r, 400, "BadRequest", NULL);
	ds_resp_free(&r);
	big = xmalloc((3u << 20) + 100);
	memset(big, ' ', (3u << 20) + 99);
	big[0] = '{';
	big[(3u << 20) + 98] = '}';
	big[(3u << 20) + 99] = '\0';
	r = POST(WL, big);
	ds_status(&r, 413, "RequestEntityTooLarge",
		  "Request entity too large: limit is 3145728");
	ds_resp_free(&r);
	free(big);
	r = ds_call("POST", WL, "application/cbor", "x", NULL);
	ds_status(&r, 415, "UnsupportedMediaType", NULL);
	ds_resp_free(&r);
	r = GET(WL "?fieldSelector=spec.queueName%3Dq");
	ds_status(&r, 400, "BadRequest",
		  "field label not supported: spec.queueName");
	ds_resp_free(&r);
}
END_TEST

START_TEST(field_validation_strict)
{
	static const char body[] =
		"{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		"\"Workload\",\"metadata\":{\"name\":\"u\"},\"spec\":{"
		"\"foo\":1,\"podSets\":[{\"name\":\"m\",\"count\":1}]}}";
	struct ds_resp r = POST(WL "?fieldValidation=Strict", body);

	ds_status(&r, 400, "BadRequest", NULL);
	ck_assert_ptr_nonnull(strstr(ds_sget(r.json, "message"),
				     "strict decoding error: unknown field "
				     "\"spec.foo\""));
	ds_resp_free(&r);
	r = POST(WL "?fieldValidation=Warn", body);
	ds_code(r, 201);
	ck_assert_ptr_nonnull(strstr(r.headers, "Warning: 299 - \"unknown "
				     "field \\\"spec.foo\\\"\""));
	ck_assert_ptr_null(ds_jget(r.json, "spec.foo"));
	ds_resp_free(&r);
}
END_TEST

/* ---- built-ins ---- */

START_TEST(job_defaults)
{
	struct ds_resp r = POST(JOBS, "{\"apiVersion\":\"batch/v1\",\"kind\":"
		"\"Job\",\"metadata\":{\"name\":\"j\"},\"spec\":{\"template\":"
		"{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"busybox\"}],"
		"\"restartPolicy\":\"Never\"}}}}");
	const char *uid;

	ds_code(r, 201);
	uid = ds_sget(r.json, "metadata.uid");
	ck_assert_int_eq(json_integer_value(ds_jget(r.json,
						    "spec.backoffLimit")),
			 6);
	ck_assert_int_eq(json_integer_value(ds_jget(r.json,
						    "spec.parallelism")),
			 1);
	ck_assert_str_eq(ds_sget(r.json, "spec.completionMode"), "NonIndexed");
	ck_assert(json_is_false(ds_jget(r.json, "spec.suspend")));
	ck_assert_str_eq(json_string_value(json_object_get(ds_jget(r.json,
		"spec.selector.matchLabels"),
		"batch.kubernetes.io/controller-uid")), uid);
	ck_assert_str_eq(json_string_value(json_object_get(ds_jget(r.json,
		"spec.template.metadata.labels"), "job-name")), "j");
	ck_assert_str_eq(json_string_value(json_object_get(ds_jget(r.json,
		"metadata.labels"), "controller-uid")), uid);
	ck_assert(json_is_object(ds_jget(r.json, "status")));
	ds_resp_free(&r);
	/* strategic merge patch on a built-in: a running Job's template is
	 * immutable (jobval.h), its suspend is not */
	r = PATCH(JOBS "/j", SMP, "{\"spec\":{\"suspend\":true,\"template\":"
		  "{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
		  "\"busybox:2\"}]}}}}");
	ds_status(&r, 422, "Invalid", NULL);
	ds_resp_free(&r);
	r = PATCH(JOBS "/j", SMP, "{\"spec\":{\"suspend\":true}}");
	ds_code(r, 200);
	ck_assert(json_is_true(ds_jget(r.json, "spec.suspend")));
	ck_assert_int_eq(json_integer_value(ds_jget(r.json,
		"metadata.generation")), 2);
	ds_resp_free(&r);
	/* suspended and never started: its nodeSelector may change, and
	 * the containers list merges by name */
	r = PATCH(JOBS "/j", SMP, "{\"spec\":{\"template\":{\"spec\":{"
		  "\"nodeSelector\":{\"disk\":\"ssd\"},\"containers\":[{"
		  "\"name\":\"c\",\"image\":\"busybox\"}]}}}}");
	ds_code(r, 200);
	ck_assert_str_eq(json_string_value(json_object_get(ds_jget(r.json,
		"spec.template.spec.nodeSelector"), "disk")), "ssd");
	ck_assert_str_eq(ds_sget(json_array_get(ds_jget(r.json,
		"spec.template.spec.containers"), 0), "imagePullPolicy"),
		"Always");
	ck_assert_int_eq(json_integer_value(ds_jget(r.json,
		"metadata.generation")), 3);
	ds_resp_free(&r);
	r = DEL(JOBS "/j");
	ds_code(r, 200);
	ck_assert_ptr_nonnull(strstr(r.headers, "child pods are preserved"));
	ds_resp_free(&r);
}
END_TEST

START_TEST(namespaces)
{
	struct ds_resp r = GET("/api/v1/namespaces/kube-system"), d;

	ds_code(r, 200);
	ck_assert_str_eq(json_string_value(json_object_get(ds_jget(r.json,
		"metadata.labels"), "kubernetes.io/metadata.name")),
		"kube-system");
	ck_assert_str_eq(ds_sget(r.json, "status.phase"), "Active");
	ds_resp_free(&r);
	r = POST("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":"
		 "\"Namespace\",\"metadata\":{\"name\":\"team-a\"}}");
	ds_code(r, 201);
	ck_assert_str_eq(json_string_value(json_array_get(ds_jget(r.json,
		"spec.finalizers"), 0)), "kubernetes");
	ds_resp_free(&r);
	d = DEL("/api/v1/namespaces/team-a");
	ds_code(d, 200);
	ck_assert_str_eq(ds_sget(d.json, "status.phase"), "Terminating");
	ds_resp_free(&d);
	r = POST("/api/v1/namespaces/team-a/configmaps", "{\"apiVersion\":"
		 "\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"c\"}}");
	ds_status(&r, 403, "Forbidden", NULL);
	ds_resp_free(&r);
	r = PUT("/api/v1/namespaces/team-a/finalize", "{\"apiVersion\":\"v1\","
		"\"kind\":\"Namespace\",\"metadata\":{\"name\":\"team-a\"},"
		"\"spec\":{\"finalizers\":[]}}");
	ds_code(r, 200);
	ds_resp_free(&r);
	r = GET("/api/v1/namespaces/team-a");
	ds_code(r, 404);
	ds_resp_free(&r);
	r = POST("/api/v1/namespaces", "{\"apiVersion\":\"v1\",\"kind\":"
		 "\"Namespace\",\"metadata\":{\"name\":\"a.b\"}}");
	ds_status(&r, 422, "Invalid", NULL);
	ds_resp_free(&r);
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
	struct ds_resp r = ds_call_len("POST", "/api/v1/namespaces",
		"application/vnd.kubernetes.protobuf", (const char *)ns_pb,
		sizeof(ns_pb),
		"application/vnd.kubernetes.protobuf,application/json");

	ds_code(r, 201);
	ck_assert_str_eq(ds_sget(r.json, "metadata.name"), "foo");
	ck_assert_str_eq(ds_sget(r.json, "kind"), "Namespace");
	ck_assert_ptr_null(ds_jget(r.json, "metadata.generateName"));
	ds_resp_free(&r);
}
END_TEST

START_TEST(event_field_selectors)
{
	static const char ev[] =
		"{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{"
		"\"name\":\"x.1\"},\"involvedObject\":{\"kind\":\"Workload\","
		"\"name\":\"x\",\"namespace\":\"default\",\"uid\":\"u1\"},"
		"\"reason\":\"Admitted\",\"type\":\"Normal\"}";
	struct ds_resp r = POST("/api/v1/namespaces/default/events", ev);

	ds_code(r, 201);
	ds_resp_free(&r);
	r = GET("/api/v1/namespaces/default/events?fieldSelector="
		"involvedObject.name%3Dx%2CinvolvedObject.namespace%3Ddefault"
		"%2CinvolvedObject.kind%3DWorkload%2CinvolvedObject.uid%3Du1"
		"&limit=500");
	ds_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 1);
	ds_resp_free(&r);
	r = GET("/api/v1/events?fieldSelector=involvedObject.uid%3Du2");
	ds_code(r, 200);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 0);
	ds_resp_free(&r);
}
END_TEST

START_TEST(delete_collection)
{
	static const char *const names[] = { "a", "b", "c" };
	static const char *const teams[] = { "ta", "tb", "ta" };
	struct ds_resp r;

	for (size_t i = 0; i < 3; i++) {
		char *b = ds_wl(names[i], teams[i]);

		r = POST(WL, b);
		ds_code(r, 201);
		ds_resp_free(&r);
		free(b);
	}
	r = DEL(WL "?labelSelector=team%3Dta");
	ds_code(r, 200);
	ck_assert_str_eq(ds_sget(r.json, "kind"), "WorkloadList");
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 2);
	ds_resp_free(&r);
	r = GET(WL);
	ck_assert_uint_eq(json_array_size(json_object_get(r.json, "items")), 1);
	ck_assert_str_eq(ds_sget(json_array_get(json_object_get(r.json,
								"items"),
						0), "metadata.name"), "b");
	ds_resp_free(&r);
}
END_TEST

Suite *api_write_suite(void)
{
	Suite *s = suite_create("api_write");
	TCase *tc;

	tc = tcase_create("verbs");
	tcase_add_checked_fixture(tc, start_with_crds, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, crd_status_established);
	tcase_add_test(tc, create_get_list);
	tcase_add_test(tc, update_semantics);
	tcase_add_test(tc, patch_kinds);
	tcase_add_test(tc, server_side_apply);
	tcase_add_test(tc, delete_and_finalizers);
	tcase_add_test(tc, status_subresource);
	tcase_add_test(tc, generate_name_and_dry_run);
	tcase_add_test(tc, delete_collection);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, start_with_crds, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, error_statuses);
	tcase_add_test(tc, field_validation_strict);
	suite_add_tcase(s, tc);

	tc = tcase_create("built-ins");
	tcase_add_checked_fixture(tc, start_with_crds, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, job_defaults);
	tcase_add_test(tc, namespaces);
	tcase_add_test(tc, event_field_selectors);
	tcase_add_test(tc, protobuf_bodies);
	suite_add_tcase(s, tc);
	return s;
}
