/*
 * Suite "jobval": the Job updates kube-apiserver 1.32 refuses
 * (devserver/jobval.h), through the real HTTP API (PUT, merge, JSON,
 * strategic and apply patches, the status subresource):
 *  - template: refused on a running Job; on a suspended Job that never
 *    started only the scheduling directives may change (nodeSelector,
 *    tolerations, schedulingGates, labels, annotations, nodeAffinity);
 *    once status.startTime is set they are frozen again, and clearing it
 *    through /status thaws them;
 *  - completions: immutable on a NonIndexed Job; an Indexed Job may
 *    change it together with parallelism;
 *  - selector, completionMode: immutable; several errors come out in
 *    kube's order;
 *  - a client that sends back what it read (null, {} and [] where the
 *    stored object has nothing, quantities respelled) changes nothing;
 *  - the comparator and the value renderer on their own.
 * No job runner runs: startTime is written by hand through /status.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "devserver/jobval.h"
#include "model/errors.h"
#include "suites.h"
#include "test/devserver/dsclient.h"

/* What kube prints for a template, as far as the devserver's 256-byte
 * value cut keeps it. */
#define TEMPLATE_VALUE \
	"core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{Name:\"\", " \
	"GenerateName:\"\", Namespace:\"\", SelfLink:\"\", UID:\"\", " \
	"ResourceVersion:\"\", Generation:0, CreationTimestamp:time.Date(1, " \
	"time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, " \
	"DeletionGracePeriod..."
#define TEMPLATE_MSG(name) \
	"Job.batch \"" name "\" is invalid: spec.template: Invalid value: " \
	TEMPLATE_VALUE ": field is immutable"

/* Creates Job name (suspended or not) with extra spec members (JSON
 * text after the template, may be ""); returns the created object. */
static json_t *make_job(const char *name, bool suspend, const char *extra)
{
	char *b = xasprintf(
		"{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"metadata\":"
		"{\"name\":\"%s\"},\"spec\":{\"suspend\":%s,\"template\":"
		"{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
		"\"busybox\",\"resources\":{\"requests\":{\"cpu\":\"1\"}}}],"
		"\"restartPolicy\":\"Never\"}}%s}}", name,
		suspend ? "true" : "false", extra);
	struct ds_resp r = POST(JOBS, b);
	json_t *j;

	ds_code(r, 201);
	j = json_incref(r.json);
	ds_resp_free(&r);
	free(b);
	return j;
}

static char *job_path(const char *name, const char *sub)
{
	return xasprintf(JOBS "/%s%s%s", name, sub ? "/" : "", sub ? sub : "");
}

/* One PATCH of Job name; returns the HTTP code and frees the answer
 * unless out is set (then the caller frees *out). */
static long patch_job(const char *name, const char *sub, const char *type,
		      const char *body, struct ds_resp *out)
{
	char *p = job_path(name, sub);
	struct ds_resp r = PATCH(p, type, body);
	long code = r.code;

	free(p);
	if (out)
		*out = r;
	else
		ds_resp_free(&r);
	return code;
}

/* GETs Job name, lets edit change it, PUTs it back; returns the code. */
static long put_job(const char *name, void (*edit)(json_t *),
		    struct ds_resp *out)
{
	char *p = job_path(name, NULL), *b;
	struct ds_resp g = GET(p), r;
	long code;

	ds_code(g, 200);
	edit(g.json);
	b = json_dumps(g.json, JSON_COMPACT);
	r = PUT(p, b);
	code = r.code;
	free(b);
	free(p);
	ds_resp_free(&g);
	if (out)
		*out = r;
	else
		ds_resp_free(&r);
	return code;
}

static json_t *tspec_of(json_t *job)
{
	return json_object_get(json_object_get(json_object_get(job, "spec"),
					       "template"), "spec");
}

static void edit_image(json_t *job)
{
	json_object_set_new(json_array_get(json_object_get(tspec_of(job),
							   "containers"), 0),
			    "image", json_string("busybox:2"));
}

static void edit_directives(json_t *job)
{
	json_t *ts = tspec_of(job);
	json_t *tm = json_object_get(json_object_get(json_object_get(job,
		"spec"), "template"), "metadata");

	json_object_set_new(ts, "nodeSelector",
			    json_pack("{s:s}", "flavor", "spot"));
	json_object_set_new(ts, "tolerations", json_pack("[{s:s, s:s}]",
		"key", "spot", "operator", "Exists"));
	json_object_set_new(ts, "schedulingGates",
			    json_pack("[{s:s}]", "name", "example.com/gate"));
	json_object_set_new(ts, "affinity", json_pack(
		"{s:{s:{s:[{s:[{s:s, s:s, s:[s]}]}]}}}", "nodeAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution",
		"nodeSelectorTerms", "matchExpressions", "key", "zone",
		"operator", "In", "values", "a"));
	json_object_set_new(json_object_get(tm, "labels"), "podset",
			    json_string("main"));
	json_object_set_new(tm, "annotations",
			    json_pack("{s:s}", "note", "x"));
}

/* What typed clients send back: zero values spelled out. */
static void edit_round_trip(json_t *job)
{
	json_t *ts = tspec_of(job);
	json_t *c = json_array_get(json_object_get(ts, "containers"), 0);

	json_object_set_new(json_object_get(json_object_get(json_object_get(
		job, "spec"), "template"), "metadata"), "creationTimestamp",
		json_null());
	json_object_set_new(ts, "nodeSelector", json_object());
	json_object_set_new(ts, "volumes", json_array());
	json_object_set_new(ts, "hostname", json_string(""));
	json_object_set_new(c, "stdin", json_false());
	json_object_set_new(c, "env", json_null());
	json_object_set_new(json_object_get(c, "resources"), "requests",
			    json_pack("{s:s}", "cpu", "1000m"));
	json_object_set_new(json_object_get(c, "resources"), "limits",
			    json_object());
}

static void edit_add_pod_affinity(json_t *job)
{
	json_object_set_new(tspec_of(job), "affinity", json_pack(
		"{s:{s:[{s:{s:{s:s}}, s:s}]}}", "podAffinity",
		"requiredDuringSchedulingIgnoredDuringExecution",
		"labelSelector", "matchLabels", "app", "x", "topologyKey",
		"zone"));
}

static void start_plain(void)
{
	ds_start(NULL);
}

/* ---- spec.template ---- */

START_TEST(template_running)
{
	json_t *j = make_job("run", false, "");
	struct ds_resp r;

	/* PUT: the message and its cause as kube words them */
	ck_assert_int_eq(put_job("run", edit_image, &r), 422);
	ds_status(&r, 422, "Invalid", TEMPLATE_MSG("run"));
	ck_assert_uint_eq(json_array_size(ds_jget(r.json, "details.causes")),
			  1);
	ck_assert_str_eq(ds_sget(json_array_get(ds_jget(r.json,
		"details.causes"), 0), "field"), "spec.template");
	ck_assert_str_eq(ds_sget(json_array_get(ds_jget(r.json,
		"details.causes"), 0), "reason"), "FieldValueInvalid");
	ck_assert_str_eq(ds_sget(r.json, "details.kind"), "Job");
	ck_assert_str_eq(ds_sget(r.json, "details.group"), "batch");
	ds_resp_free(&r);
	/* the scheduling directives are frozen too, by every patch type */
	ck_assert_int_eq(put_job("run", edit_directives, NULL), 422);
	ck_assert_int_eq(patch_job("run", NULL, MERGE, "{\"spec\":{"
		"\"template\":{\"spec\":{\"nodeSelector\":{\"a\":\"b\"}}}}}",
		&r), 422);
	ds_status(&r, 422, "Invalid", TEMPLATE_MSG("run"));
	ds_resp_free(&r);
	ck_assert_int_eq(patch_job("run", NULL, JSONP, "[{\"op\":\"add\","
		"\"path\":\"/spec/template/metadata/annotations\",\"value\":"
		"{\"a\":\"b\"}}]", NULL), 422);
	ck_assert_int_eq(patch_job("run", NULL, SMP, "{\"spec\":{\"template\":"
		"{\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":"
		"\"busybox:2\"}]}}}}", NULL), 422);
	ck_assert_int_eq(patch_job("run?fieldManager=t", NULL, APPLY,
		"apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: run\n"
		"spec:\n  template:\n    spec:\n      tolerations:\n"
		"      - key: a\n        operator: Exists\n", NULL), 422);
	/* suspending together with a template change is still a change of
	 * a running Job's template */
	ck_assert_int_eq(patch_job("run", NULL, MERGE, "{\"spec\":{\"suspend\":"
		"true,\"template\":{\"spec\":{\"nodeSelector\":{\"a\":\"b\"}}}}}",
		NULL), 422);
	/* what stays mutable: parallelism, suspend, metadata */
	ck_assert_int_eq(patch_job("run", NULL, MERGE, "{\"metadata\":{"
		"\"labels\":{\"x\":\"y\"}},\"spec\":{\"parallelism\":3}}",
		NULL), 200);
	ck_assert_int_eq(patch_job("run", NULL, MERGE,
				   "{\"spec\":{\"suspend\":true}}", NULL), 200);
	/* a client that sends back what it read changes nothing */
	ck_assert_int_eq(patch_job("run", NULL, MERGE,
				   "{\"spec\":{\"suspend\":false}}", NULL), 200);
	ck_assert_int_eq(put_job("run", edit_round_trip, &r), 200);
	ck_assert_str_eq(ds_sget(json_array_get(ds_jget(r.json,
		"spec.template.spec.containers"), 0), "image"), "busybox");
	ds_resp_free(&r);
	json_decref(j);
}
END_TEST

START_TEST(template_suspended_never_started)
{
	json_t *j = make_job("sus", true, "");
	struct ds_resp r;

	/* every scheduling directive at once, by PUT */
	ck_assert_int_eq(put_job("sus", edit_directives, &r), 200);
	ck_assert_str_eq(json_string_value(json_object_get(ds_jget(r.json,
		"spec.template.spec.nodeSelector"), "flavor")), "spot");
	ck_assert_ptr_nonnull(ds_jget(r.json,
		"spec.template.spec.affinity.nodeAffinity"));
	ck_assert_int_eq(json_integer_value(ds_jget(r.json,
		"metadata.generation")), 2);
	ds_resp_free(&r);
	/* and back, by merge patch (the Kueue restore step) */
	ck_assert_int_eq(patch_job("sus", NULL, MERGE, "{\"spec\":{\"template\":"
		"{\"metadata\":{\"annotations\":null},\"spec\":{\"nodeSelector\":"
		"null,\"tolerations\":null,\"schedulingGates\":null,"
		"\"affinity\":null}}}}", &r), 200);
	ck_assert_ptr_null(ds_jget(r.json, "spec.template.spec.nodeSelector"));
	ck_assert_ptr_null(ds_jget(r.json, "spec.template.spec.affinity"));
	ds_resp_free(&r);
	/* the rest of the template stays frozen */
	ck_assert_int_eq(put_job("sus", edit_image, &r), 422);
	ds_status(&r, 422, "Invalid", TEMPLATE_MSG("sus"));
	ds_resp_free(&r);
	ck_assert_int_eq(patch_job("sus", NULL, MERGE, "{\"spec\":{\"template\":"
		"{\"spec\":{\"activeDeadlineSeconds\":60}}}}", NULL), 422);
	/* an affinity may come only with nodeAffinity in it */
	ck_assert_int_eq(put_job("sus", edit_add_pod_affinity, NULL), 422);
	/* unsuspending with the directives in the same write (Kueue's
	 * start) is judged on the stored, suspended Job */
	ck_assert_int_eq(patch_job("sus", NULL, MERGE, "{\"spec\":{\"suspend\":"
		"false,\"template\":{\"spec\":{\"nodeSelector\":{\"f\":\"g\"}}}}}",
		NULL), 200);
	/* now it runs (suspend false): frozen */
	ck_assert_int_eq(patch_job("sus", NULL, MERGE, "{\"spec\":{\"template\":"
		"{\"spec\":{\"nodeSelector\":null}}}}", NULL), 422);
	json_decref(j);
}
END_TEST

START_TEST(template_suspended_after_start)
{
	json_t *j = make_job("st", false, "");
	struct ds_resp r;

	/* the Job ran: startTime set, then suspended */
	ck_assert_int_eq(patch_job("st", "status", MERGE, "{\"status\":{"
		"\"startTime\":\"2025-01-02T15:04:05Z\",\"active\":1}}", &r),
		200);
	ck_assert_str_eq(ds_sget(r.json, "status.startTime"),
			 "2025-01-02T15:04:05Z");
	ds_resp_free(&r);
	ck_assert_int_eq(patch_job("st", NULL, MERGE,
				   "{\"spec\":{\"suspend\":true}}", NULL), 200);
	ck_assert_int_eq(patch_job("st", NULL, MERGE, "{\"spec\":{\"template\":"
		"{\"spec\":{\"nodeSelector\":{\"a\":\"b\"}}}}}", &r), 422);
	ds_status(&r, 422, "Invalid", TEMPLATE_MSG("st"));
	ds_resp_free(&r);
	ck_assert_int_eq(put_job("st", edit_directives, NULL), 422);
	/* a /status write never touches the spec, so it passes, and a
	 * spec sent to /status is ignored */
	ck_assert_int_eq(patch_job("st", "status", MERGE, "{\"spec\":{"
		"\"completions\":9},\"status\":{\"active\":0}}", &r), 200);
	ck_assert_int_eq(json_integer_value(ds_jget(r.json,
		"spec.completions")), 1);
	ds_resp_free(&r);
	/* Kueue's stop step 2: clear startTime; then they thaw */
	ck_assert_int_eq(patch_job("st", "status", MERGE,
		"{\"status\":{\"startTime\":null}}", NULL), 200);
	ck_assert_int_eq(patch_job("st", NULL, MERGE, "{\"spec\":{\"template\":"
		"{\"spec\":{\"nodeSelector\":{\"a\":\"b\"}}}}}", NULL), 200);
	json_decref(j);
}
END_TEST

/* ---- completions, selector, completionMode ---- */

START_TEST(completions_nonindexed)
{
	json_t *j = make_job("ni", true, ",\"completions\":3,\"parallelism\":3");
	struct ds_resp r;

	ck_assert_int_eq(patch_job("ni", NULL, MERGE,
		"{\"spec\":{\"completions\":5}}", &r), 422);
	ds_status(&r, 422, "Invalid", "Job.batch \"ni\" is invalid: "
		  "spec.completions: Invalid value: 5: field is immutable");
	ds_resp_free(&r);
	/* in tandem with parallelism does not help a NonIndexed Job */
	ck_assert_int_eq(patch_job("ni", NULL, MERGE,
		"{\"spec\":{\"completions\":2,\"parallelism\":2}}", NULL), 422);
	ck_assert_int_eq(patch_job("ni", NULL, MERGE,
		"{\"spec\":{\"completions\":null}}", &r), 422);
	ds_status(&r, 422, "Invalid", "Job.batch \"ni\" is invalid: "
		  "spec.completions: Invalid value: \"null\": field is "
		  "immutable");
	ds_resp_free(&r);
	/* parallelism alone is mutable */
	ck_assert_int_eq(patch_job("ni", NULL, MERGE,
		"{\"spec\":{\"parallelism\":1}}", NULL), 200);
	json_decref(j);
}
END_TEST

START_TEST(completions_indexed_elastic)
{
	json_t *j = make_job("ix", false, ",\"completions\":4,\"parallelism\":4,"
			     "\"completionMode\":\"Indexed\"");
	struct ds_resp r;

	/* scale down and up in tandem, running or not */
	ck_assert_int_eq(patch_job("ix", NULL, MERGE,
		"{\"spec\":{\"completions\":2,\"parallelism\":2}}", &r), 200);
	ck_assert_int_eq(json_integer_value(ds_jget(r.json,
		"spec.completions")), 2);
	ds_resp_free(&r);
	ck_assert_int_eq(patch_job("ix", NULL, JSONP,
		"[{\"op\":\"replace\",\"path\":\"/spec/completions\",\"value\":"
		"6},{\"op\":\"replace\",\"path\":\"/spec/parallelism\","
		"\"value\":6}]", NULL), 200);
	/* alone it must match parallelism */
	ck_assert_int_eq(patch_job("ix", NULL, MERGE,
		"{\"spec\":{\"completions\":3}}", &r), 422);
	ds_status(&r, 422, "Invalid", "Job.batch \"ix\" is invalid: "
		  "spec.completions: Invalid value: 3: can only be modified in "
		  "tandem with spec.parallelism");
	ds_resp_free(&r);
	ck_assert_int_eq(patch_job("ix", NULL, MERGE,
		"{\"spec\":{\"completions\":3,\"parallelism\":4}}", NULL), 422);
	/* the mode itself is immutable */
	ck_assert_int_eq(patch_job("ix", NULL, MERGE,
		"{\"spec\":{\"completionMode\":\"NonIndexed\"}}", &r), 422);
	ds_status(&r, 422, "Invalid", "Job.batch \"ix\" is invalid: "
		  "spec.completionMode: Invalid value: \"NonIndexed\": field "
		  "is immutable");
	ds_resp_free(&r);
	json_decref(j);
}
END_TEST

START_TEST(selector_and_order)
{
	json_t *j = make_job("se", true, "");
	const char *uid = ds_sget(j, "metadata.uid");
	char *want, *body;
	struct ds_resp r;

	ck_assert_int_eq(patch_job("se", NULL, MERGE, "{\"spec\":{\"selector\":"
		"{\"matchLabels\":{\"app\":\"x\"}}}}", &r), 422);
	want = xasprintf("Job.batch \"se\" is invalid: spec.selector: Invalid "
		"value: v1.LabelSelector{MatchLabels:map[string]string{"
		"\"app\":\"x\", \"batch.kubernetes.io/controller-uid\":\"%s\"}, "
		"MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field "
		"is immutable", uid);
	ds_status(&r, 422, "Invalid", want);
	free(want);
	ds_resp_free(&r);
	/* several at once: one line each, completions before template
	 * before completionMode, as ValidateJobSpecUpdate appends them */
	body = xasprintf("{\"spec\":{\"completionMode\":\"Indexed\","
		"\"completions\":7,\"template\":{\"spec\":{\"containers\":[{"
		"\"name\":\"c\",\"image\":\"other\"}]}}}}");
	ck_assert_int_eq(patch_job("se", NULL, MERGE, body, &r), 422);
	ds_status(&r, 422, "Invalid", "Job.batch \"se\" is invalid: ["
		  "spec.completions: Invalid value: 7: can only be modified in "
		  "tandem with spec.parallelism, spec.template: Invalid value: "
		  TEMPLATE_VALUE ": field is immutable, spec.completionMode: "
		  "Invalid value: \"Indexed\": field is immutable]");
	ck_assert_uint_eq(json_array_size(ds_jget(r.json, "details.causes")),
			  3);
	ds_resp_free(&r);
	free(body);
	json_decref(j);
}
END_TEST

/* ---- the comparator and the renderer ---- */

static bool eq(const char *key, const char *a, const char *b)
{
	json_t *ja = a ? json_loads(a, JSON_DECODE_ANY, NULL) : NULL;
	json_t *jb = b ? json_loads(b, JSON_DECODE_ANY, NULL) : NULL;
	bool r;

	ck_assert(!a || ja);
	ck_assert(!b || jb);
	r = jobval_equal(key, ja, jb);
	ck_assert_int_eq(r, jobval_equal(key, jb, ja));
	json_decref(ja);
	json_decref(jb);
	return r;
}

START_TEST(semantic_equality)
{
	/* nil, empty and absent lists, maps and plain structs */
	ck_assert(eq("template", "{\"spec\":{\"volumes\":[]}}", "{}"));
	ck_assert(eq("template", "{\"metadata\":{\"creationTimestamp\":null,"
		     "\"labels\":{}}}", "{\"metadata\":{}}"));
	ck_assert(eq("containers", "[{\"name\":\"c\",\"resources\":{},"
		     "\"stdin\":false,\"workingDir\":\"\"}]",
		     "[{\"name\":\"c\"}]"));
	ck_assert(eq("nodeSelector", "{}", NULL));
	ck_assert(eq("nodeSelector", "{\"a\":\"b\",\"c\":null}",
		     "{\"a\":\"b\"}"));
	/* a map entry holding "" is an entry */
	ck_assert(!eq("nodeSelector", "{\"a\":\"\"}", "{}"));
	/* pointers: {} / 0 / false are not nil */
	ck_assert(!eq("affinity", "{}", NULL));
	ck_assert(eq("affinity", "{}", "{}"));
	ck_assert(!eq("activeDeadlineSeconds", "0", NULL));
	ck_assert(!eq("spec", "{\"automountServiceAccountToken\":false}", "{}"));
	ck_assert(eq("spec", "{\"hostNetwork\":false}", "{}"));
	/* quantities by amount, only where they are quantities */
	ck_assert(eq("resources", "{\"requests\":{\"cpu\":\"1\"}}",
		     "{\"requests\":{\"cpu\":\"1000m\"}}"));
	ck_assert(eq("limits", "{\"memory\":1073741824}",
		     "{\"memory\":\"1Gi\"}"));
	ck_assert(!eq("limits", "{\"cpu\":\"2\"}", "{\"cpu\":\"1\"}"));
	ck_assert(!eq("labels", "{\"a\":\"1\"}", "{\"a\":\"1000m\"}"));
	/* lists are ordered; their elements are present even when zero */
	ck_assert(!eq("args", "[\"a\",\"b\"]", "[\"b\",\"a\"]"));
	ck_assert(!eq("args", "[\"\"]", "[]"));
	ck_assert(eq("completions", "3", "3"));
	ck_assert(!eq("completions", "3", "4"));
	ck_assert(eq("completions", "null", NULL));
}
END_TEST

START_TEST(template_value)
{
	json_t *t = json_loads("{\"metadata\":{\"labels\":{\"job-name\":\"j\","
		"\"app\":\"a\"}},\"spec\":{\"containers\":[{\"name\":\"c\","
		"\"image\":\"busybox\",\"command\":[\"sleep\",\"1\"]}],"
		"\"restartPolicy\":\"Never\",\"dnsPolicy\":\"ClusterFirst\","
		"\"nodeSelector\":{\"z\":\"1\",\"a\":\"2\"}}}", 0, NULL);
	char *v = jobval_template_value(t);

	ck_assert_str_eq(v, "core.PodTemplateSpec{ObjectMeta:v1.ObjectMeta{"
		"Name:\"\", GenerateName:\"\", Namespace:\"\", SelfLink:\"\", "
		"UID:\"\", ResourceVersion:\"\", Generation:0, "
		"CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, "
		"time.UTC), DeletionTimestamp:<nil>, "
		"DeletionGracePeriodSeconds:(*int64)(nil), Labels:map[string]"
		"string{\"app\":\"a\", \"job-name\":\"j\"}, Annotations:"
		"map[string]string(nil), OwnerReferences:[]v1.OwnerReference"
		"(nil), Finalizers:[]string(nil), ManagedFields:[]v1."
		"ManagedFieldsEntry(nil)}, Spec:core.PodSpec{Containers:[]core."
		"Container{core.Container{Name:\"c\", Image:\"busybox\", "
		"Command:[]string{\"sleep\", \"1\"}}}, RestartPolicy:\"Never\", "
		"DNSPolicy:\"ClusterFirst\", NodeSelector:map[string]string{"
		"\"a\":\"2\", \"z\":\"1\"}}}");
	free(v);
	json_decref(t);
}
END_TEST

Suite *jobval_suite(void)
{
	Suite *s = suite_create("jobval");
	TCase *tc;

	tc = tcase_create("template");
	tcase_add_checked_fixture(tc, start_plain, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, template_running);
	tcase_add_test(tc, template_suspended_never_started);
	tcase_add_test(tc, template_suspended_after_start);
	suite_add_tcase(s, tc);

	tc = tcase_create("immutable-fields");
	tcase_add_checked_fixture(tc, start_plain, ds_stop);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, completions_nonindexed);
	tcase_add_test(tc, completions_indexed_elastic);
	tcase_add_test(tc, selector_and_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("semantics");
	tcase_add_test(tc, semantic_equality);
	tcase_add_test(tc, template_value);
	suite_add_tcase(s, tc);
	return s;
}
