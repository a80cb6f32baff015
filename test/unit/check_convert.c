/*
 * Suite "convert": kueue.x-k8s.io v1beta1 <-> v1beta2 conversion
 * (model/codec_convert.c), checked against Kueue's own conversion tests:
 * every case of test/fixtures/convert/ (README.md there) converted each
 * way and compared exactly, then converted back and forth again; the
 * codec fixtures; the scenario of issue 21 (a v1beta1 apply over a queue
 * created in v1beta2); malformed topology assignments; refused inputs.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "codec_util.h"
#include "model/codec.h"
#include "model/objects.h"
#include "model/validate.h"
#include "suites.h"
#include "test/support/support.h"

#define CONVERT_DIR TOP_SRCDIR "/test/fixtures/convert"

/* ------------------------------------------------------------------ */
/* Helpers */

static void assert_same(const json_t *got, const json_t *want,
			const char *what)
{
	char *g, *w;

	if (json_equal(got, want))
		return;
	g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
	w = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
	ck_abort_msg("%s:\ngot  %s\nwant %s", what, g, w);
}

/* in converted to the apiVersion of like (or to), new reference; the
 * input is untouched and the result is a fresh tree. */
static json_t *convert_ok(const json_t *in, const char *to)
{
	struct err err = { "" };
	json_t *copy = json_deep_copy(in), *out = NULL;

	ck_assert_msg(codec_convert(in, to, &out, &err) == 0, "%s", err.msg);
	ck_assert_refcount(out, 1);
	ck_assert(out != in);
	ck_assert(json_equal(in, copy));
	json_decref(copy);
	return out;
}

static const char *version_of(const json_t *o)
{
	return json_string_value(json_object_get(o, "apiVersion"));
}

/* ------------------------------------------------------------------ */
/* The fixtures of test/fixtures/convert: {case, source, from, to, back?} */

static char **cases;
static size_t ncases, capcases;

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void find_cases(void)
{
	DIR *d = opendir(CONVERT_DIR);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		size_t n = strlen(e->d_name);

		if (n < 6 || strcmp(e->d_name + n - 5, ".json"))
			continue;
		XGROW(cases, capcases, ncases + 1);
		cases[ncases++] = xstrdup(e->d_name);
	}
	closedir(d);
	qsort(cases, ncases, sizeof(*cases), cmp_names);
}

/* from -> to exactly; to -> back (default: from) exactly; back -> to
 * again (a second round trip changes nothing). */
START_TEST(convert_cases)
{
	char *rel = xasprintf("convert/%s", cases[_i]);
	json_t *c = t_fixture_json(rel);
	const json_t *from = json_object_get(c, "from");
	const json_t *to = json_object_get(c, "to");
	const json_t *back = json_object_get(c, "back");
	json_t *got, *got_back, *again;
	char *what;

	ck_assert_msg(from && to && json_is_string(json_object_get(c, "case")),
		      "%s: needs case, from and to", rel);
	ck_assert_str_ne(version_of(from), version_of(to));
	if (!back)
		back = from;
	got = convert_ok(from, version_of(to));
	what = xasprintf("%s (%s): converted", cases[_i],
			 json_string_value(json_object_get(c, "case")));
	assert_same(got, to, what);
	free(what);
	got_back = convert_ok(got, version_of(from));
	what = xasprintf("%s: converted back", cases[_i]);
	assert_same(got_back, back, what);
	free(what);
	again = convert_ok(got_back, version_of(to));
	what = xasprintf("%s: converted back and forth again", cases[_i]);
	assert_same(again, to, what);
	free(what);
	json_decref(again);
	json_decref(got_back);
	json_decref(got);
	json_decref(c);
	free(rel);
}
END_TEST

/* Every Kueue test case is here, both directions (a guard against a
 * fixture silently going missing). */
START_TEST(convert_cases_present)
{
	size_t to1 = 0, to2 = 0, rt = 0;

	for (size_t i = 0; i < ncases; i++) {
		to1 += strstr(cases[i], "-to-v1beta1-") != NULL;
		to2 += strstr(cases[i], "-to-v1beta2-") != NULL;
		rt += strstr(cases[i], "-round-trip-") != NULL;
	}
	ck_assert_uint_ge(ncases, 66);
	ck_assert_uint_ge(to1, 20);
	ck_assert_uint_ge(to2, 30);
	ck_assert_uint_ge(rt, 11);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The codec fixtures: convert, decode in the other version, and a
 * second round trip changes nothing. */

static const char *const codec_files[] = {
	"rf-v1beta1.json", "rf-v1beta2.json", "cq-v1beta1.json",
	"cq-v1beta2.json", "lq-v1beta1.json", "lq-v1beta2.json",
	"cohort-v1beta1.json", "cohort-v1beta2.json", "wpc-v1beta1.json",
	"wpc-v1beta2.json", "wl-v1beta1.json", "wl-v1beta2.json",
};

START_TEST(convert_codec_fixtures)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *in = fixture(codec_files[_i]), *mid, *back, *mid2;
	const char *v = version_of(in);
	const char *other = !strcmp(v, V1) ? V2 : V1;

	mid = convert_ok(in, other);
	ck_assert_msg(decode_any(codec_kind_of(mid), mid, &fe) == 0, "%s",
		      t_fe_text(&fe));
	back = convert_ok(mid, v);
	mid2 = convert_ok(back, other);
	assert_same(mid2, mid, codec_files[_i]);
	json_decref(mid2);
	json_decref(back);
	json_decref(mid);
	json_decref(in);
	field_errors_release(&fe);
}
END_TEST

/* Objects that only use fields both versions share come back unchanged. */
START_TEST(convert_identity)
{
	static const char *const same[] = {
		"rf-v1beta1.json", "rf-v1beta2.json", "cohort-v1beta2.json",
		"wpc-v1beta1.json", "wpc-v1beta2.json", "wl-v1beta1.json",
	};

	for (size_t i = 0; i < N(same); i++) {
		json_t *in = fixture(same[i]), *mid, *back;
		const char *v = version_of(in);

		mid = convert_ok(in, !strcmp(v, V1) ? V2 : V1);
		back = convert_ok(mid, v);
		assert_same(back, in, same[i]);
		json_decref(back);
		json_decref(mid);
		json_decref(in);
	}
}
END_TEST

/* o (a ClusterQueue) decodes and validates cleanly. */
static void assert_valid_cq(const json_t *o)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cluster_queue cq = { 0 };

	ck_assert_msg(codec_decode_cluster_queue(o, &cq, &fe) == 0, "%s",
		      t_fe_text(&fe));
	validate_cluster_queue(&cq, NULL, &fe);
	ck_assert_msg(fe.n == 0, "%s", t_fe_text(&fe));
	cluster_queue_release(&cq);
	field_errors_release(&fe);
}

/* o (a ClusterQueue) decodes and fails validation with want. */
static void assert_cq_error(const json_t *o, const char *want)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cluster_queue cq = { 0 };

	ck_assert_msg(codec_decode_cluster_queue(o, &cq, &fe) == 0, "%s",
		      t_fe_text(&fe));
	validate_cluster_queue(&cq, NULL, &fe);
	ck_assert_msg(t_fe_contains(&fe, want), "%s", t_fe_text(&fe));
	cluster_queue_release(&cq);
	field_errors_release(&fe);
}

START_TEST(convert_codec_cluster_queue)
{
	json_t *j = fixture("cq-v1beta1.json"), *out, *spec;

	out = convert_ok(j, V2);
	spec = json_object_get(out, "spec");
	ck_assert_str_eq(json_string_value(json_object_get(spec, "cohortName")),
			 "all-teams");
	ck_assert_ptr_null(json_object_get(spec, "cohort"));
	ck_assert_ptr_null(json_object_get(spec, "admissionChecks"));
	assert_json(json_object_get(spec, "admissionChecksStrategy"),
		    "{\"admissionChecks\": [{\"name\": \"prov-check\"}]}");
	assert_json(json_object_get(spec, "flavorFungibility"),
		    "{\"whenCanBorrow\": \"MayStopSearch\", \"whenCanPreempt\": \"MayStopSearch\"}");
	ck_assert_ptr_null(json_object_get(json_object_get(out, "status"),
					   "pendingWorkloadsStatus"));
	ck_assert_ptr_null(json_object_get(json_object_get(out, "metadata"),
					   "annotations"));
	json_decref(out);
	json_decref(j);

	j = fixture("cq-v1beta2.json");
	out = convert_ok(j, V1);
	spec = json_object_get(out, "spec");
	ck_assert_str_eq(json_string_value(json_object_get(spec, "cohort")),
			 "all-teams");
	ck_assert_ptr_null(json_object_get(spec, "cohortName"));
	ck_assert_ptr_null(json_object_get(spec, "concurrentAdmissionPolicy"));
	assert_json(json_object_get(spec, "flavorFungibility"),
		    "{\"whenCanBorrow\": \"TryNextFlavor\", \"whenCanPreempt\": \"TryNextFlavor\","
		    " \"preference\": \"PreemptionOverBorrowing\"}");
	assert_json(json_object_get(spec, "admissionChecksStrategy"),
		    "{\"admissionChecks\": [{\"name\": \"prov\", \"onFlavors\": [\"spot\"]}]}");
	ck_assert_ptr_null(json_object_get(json_object_get(out, "metadata"),
					   "annotations"));
	/* v1beta1 has preference too: decoded and validated there. */
	assert_valid_cq(out);
	json_object_set_new(json_object_get(spec, "flavorFungibility"),
			    "whenCanBorrow", json_string("MayStopSearch"));
	assert_cq_error(out, "preference can only be set when both "
			     "whenCanBorrow and whenCanPreempt are TryNextFlavor");
	json_decref(out);
	json_decref(j);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Issue 21: a queue created in v1beta2 with admissionChecksStrategy, read
 * and changed in v1beta1. */

START_TEST(convert_v1beta1_apply_over_v1beta2)
{
	json_t *stored = t_jq(
		"{'apiVersion': '" V2 "', 'kind': 'ClusterQueue',"
		" 'metadata': {'name': 'cq', 'annotations': {'team': 'a'}},"
		" 'spec': {'namespaceSelector': {},"
		"  'flavorFungibility': {'whenCanBorrow': 'MayStopSearch', 'whenCanPreempt': 'TryNextFlavor'},"
		"  'admissionChecksStrategy': {'admissionChecks': [{'name': 'a'}, {'name': 'b'}]}}}");
	json_t *v1, *spec, *v2;

	/* 1. Read in v1beta1: the strategy and MayStopSearch as they are,
	 * no admissionChecks list, no annotation added. */
	v1 = convert_ok(stored, V1);
	assert_json(v1, "{\"apiVersion\": \"" V1 "\", \"kind\": \"ClusterQueue\","
			" \"metadata\": {\"name\": \"cq\", \"annotations\": {\"team\": \"a\"}},"
			" \"spec\": {\"namespaceSelector\": {},"
			"  \"flavorFungibility\": {\"whenCanBorrow\": \"MayStopSearch\", \"whenCanPreempt\": \"TryNextFlavor\"},"
			"  \"admissionChecksStrategy\": {\"admissionChecks\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}}}");
	assert_valid_cq(v1);
	spec = json_object_get(v1, "spec");

	/* 2. A v1beta1 apply that removes the checks (the merge patch
	 * deletes admissionChecksStrategy): Kueue stores no checks. */
	json_object_del(spec, "admissionChecksStrategy");
	assert_valid_cq(v1);
	v2 = convert_ok(v1, V2);
	ck_assert_ptr_null(json_object_get(json_object_get(v2, "spec"),
					   "admissionChecksStrategy"));
	ck_assert_ptr_null(json_object_get(json_object_get(v2, "spec"),
					   "admissionChecks"));
	json_decref(v2);

	/* 3. ... and one that sets admissionChecksStrategy again: accepted
	 * (no admissionChecks list beside it) and stored as given. */
	json_object_set_new(spec, "admissionChecksStrategy", t_jq(
		"{'admissionChecks': [{'name': 'c', 'onFlavors': ['spot']}]}"));
	assert_valid_cq(v1);
	v2 = convert_ok(v1, V2);
	assert_json(v2, "{\"apiVersion\": \"" V2 "\", \"kind\": \"ClusterQueue\","
			" \"metadata\": {\"name\": \"cq\", \"annotations\": {\"team\": \"a\"}},"
			" \"spec\": {\"namespaceSelector\": {},"
			"  \"flavorFungibility\": {\"whenCanBorrow\": \"MayStopSearch\", \"whenCanPreempt\": \"TryNextFlavor\"},"
			"  \"admissionChecksStrategy\": {\"admissionChecks\": [{\"name\": \"c\", \"onFlavors\": [\"spot\"]}]}}}");
	json_decref(v2);

	/* 4. A v1beta1 writer using the list form: the list replaces the
	 * strategy, as in Kueue. */
	json_object_del(spec, "admissionChecksStrategy");
	json_object_set_new(spec, "admissionChecks", t_jq("['d']"));
	assert_valid_cq(v1);
	v2 = convert_ok(v1, V2);
	assert_json(json_object_get(v2, "spec"),
		    "{\"namespaceSelector\": {},"
		    " \"flavorFungibility\": {\"whenCanBorrow\": \"MayStopSearch\", \"whenCanPreempt\": \"TryNextFlavor\"},"
		    " \"admissionChecksStrategy\": {\"admissionChecks\": [{\"name\": \"d\"}]}}");
	json_decref(v2);
	json_decref(v1);
	json_decref(stored);
}
END_TEST

/* An old cueue's conversion-data annotation is an annotation like any
 * other: passed through, never read. */
START_TEST(convert_annotation_passes)
{
	json_t *j = t_json(
		"{\"apiVersion\": \"" V1 "\", \"kind\": \"ClusterQueue\","
		" \"metadata\": {\"annotations\": {\"kueue.x-k8s.io/conversion-data\":"
		" \"{\\\"apiVersion\\\":\\\"kueue.x-k8s.io/v1beta2\\\",\\\"fields\\\":"
		"{\\\"spec.concurrentAdmissionPolicy\\\":{}}}\"}},"
		" \"spec\": {}}");
	json_t *out = convert_ok(j, V2);

	assert_json(json_object_get(out, "metadata"),
		    "{\"annotations\": {\"kueue.x-k8s.io/conversion-data\":"
		    " \"{\\\"apiVersion\\\":\\\"kueue.x-k8s.io/v1beta2\\\",\\\"fields\\\":"
		    "{\\\"spec.concurrentAdmissionPolicy\\\":{}}}\"}}");
	assert_json(json_object_get(out, "spec"), "{}");
	json_decref(out);
	json_decref(j);
}
END_TEST

/* Fields the source version does not define (pruned by the API server in
 * real life) never become target fields: a target field only ever comes
 * from its source counterpart. */
START_TEST(convert_foreign_fields)
{
	json_t *j = t_jq("{'apiVersion': '" V2 "', 'kind': 'ClusterQueue',"
			 " 'spec': {'cohort': 'x', 'admissionChecks': ['y'], 'other': 1},"
			 " 'status': {'pendingWorkloadsStatus': {}}}");
	json_t *out = convert_ok(j, V1);

	assert_json(out, "{\"apiVersion\": \"" V1 "\", \"kind\": \"ClusterQueue\","
			 " \"spec\": {\"other\": 1}, \"status\": {}}");
	json_decref(out);
	json_decref(j);

	j = t_jq("{'apiVersion': '" V1 "', 'kind': 'Workload',"
		 " 'spec': {'priorityClassRef': {'group': 'g', 'kind': 'k', 'name': 'n'}},"
		 " 'status': {'accumulatedPastExecutionTimeSeconds': 5}}");
	out = convert_ok(j, V2);
	assert_json(out, "{\"apiVersion\": \"" V2 "\", \"kind\": \"Workload\","
			 " \"spec\": {}, \"status\": {}}");
	json_decref(out);
	json_decref(j);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Topology assignments Kueue's code cannot convert: an error naming the
 * field, nothing returned. */

static const struct {
	const char *to;
	const char *ta; /* topologyAssignment, t_jq */
	const char *msg;
} bad_topology[] = {
	{ V2, "{'levels': ['a', 'b'], 'domains': [{'values': ['x'], 'count': 1}]}",
	  "topologyAssignment.domains[0].values: 1 values for 2 levels" },
	{ V2, "{'levels': ['a'], 'domains': [{'values': ['x'], 'count': 'one'}]}",
	  "topologyAssignment.domains[0].count: must be a 32-bit integer" },
	{ V2, "{'levels': ['a'], 'domains': [{'values': ['x'], 'count': 4294967296}]}",
	  "domains[0].count" },
	{ V2, "{'levels': [1], 'domains': []}", "topologyAssignment.levels[0]" },
	{ V2, "{'levels': ['a'], 'domains': {}}", "topologyAssignment.domains" },
	{ V2, "[]", "topologyAssignment: must be an object" },
	{ V1, "{'levels': ['a', 'b'], 'slices': [{'domainCount': 1, 'valuesPerLevel': [{'universal': 'x'}],"
	      " 'podCounts': {'universal': 1}}]}",
	  "slices[0].valuesPerLevel: 1 entries for 2 levels" },
	{ V1, "{'levels': ['a'], 'slices': [{'domainCount': 2, 'valuesPerLevel':"
	      " [{'individual': {'roots': ['r']}}], 'podCounts': {'universal': 1}}]}",
	  "slices[0].valuesPerLevel[0].individual.roots[1]" },
	{ V1, "{'levels': ['a'], 'slices': [{'domainCount': 2, 'valuesPerLevel':"
	      " [{'universal': 'u'}], 'podCounts': {'individual': [1]}}]}",
	  "slices[0].podCounts: no 32-bit count for domain 1" },
	{ V1, "{'levels': ['a'], 'slices': [{'domainCount': 1, 'valuesPerLevel': [{}],"
	      " 'podCounts': {'universal': 1}}]}",
	  "valuesPerLevel[0]: one of universal and individual must be set" },
	{ V1, "{'levels': ['a'], 'slices': [{'domainCount': -1}]}",
	  "slices[0].domainCount" },
	{ V1, "{'levels': ['a'], 'slices': [{'domainCount': 2000000000, 'valuesPerLevel':"
	      " [{'universal': 'u'}], 'podCounts': {'universal': 1}}]}",
	  "topologyAssignment.slices: more than 1000000 domains" },
};

START_TEST(convert_bad_topology)
{
	const char *from = !strcmp(bad_topology[_i].to, V1) ? V2 : V1;
	char *text = xasprintf(
		"{'apiVersion': '%s', 'kind': 'Workload', 'status': {'admission':"
		" {'podSetAssignments': [{'name': 'main'}, {'topologyAssignment': %s}]}}}",
		from, bad_topology[_i].ta);
	json_t *j = t_jq(text), *out = (json_t *)j;
	struct err err = { "" };

	ck_assert_int_eq(codec_convert(j, bad_topology[_i].to, &out, &err), -1);
	ck_assert_ptr_null(out);
	ck_assert_msg(strstr(err.msg, "status.admission.podSetAssignments[1]."
				      "topologyAssignment") &&
		      strstr(err.msg, bad_topology[_i].msg),
		      "got \"%s\", want \"%s\"", err.msg, bad_topology[_i].msg);
	json_decref(j);
	free(text);
}
END_TEST

/* More than 100000 domains: slices of at most 100000, and back. */
START_TEST(convert_topology_chunks)
{
	json_t *j = t_jq("{'apiVersion': '" V1 "', 'kind': 'Workload', 'status':"
			 " {'admission': {'podSetAssignments': [{'topologyAssignment':"
			 " {'levels': ['kubernetes.io/hostname'], 'domains': []}}]}}}");
	json_t *ta = json_object_get(json_array_get(json_object_get(
		json_object_get(json_object_get(j, "status"), "admission"),
		"podSetAssignments"), 0), "topologyAssignment");
	json_t *doms = json_object_get(ta, "domains"), *out, *slices, *back;

	for (int i = 0; i < 100002; i++) {
		char host[32];

		snprintf(host, sizeof(host), "n%d", i);
		json_array_append_new(doms, json_pack("{s:[s],s:i}", "values",
						      host, "count", 1));
	}
	out = convert_ok(j, V2);
	slices = json_object_get(json_object_get(json_array_get(json_object_get(
		json_object_get(json_object_get(out, "status"), "admission"),
		"podSetAssignments"), 0), "topologyAssignment"), "slices");
	ck_assert_uint_eq(json_array_size(slices), 2);
	ck_assert_int_eq(int_at(json_array_get(slices, 0), "domainCount"),
			 100000);
	ck_assert_int_eq(int_at(json_array_get(slices, 1), "domainCount"), 2);
	back = convert_ok(out, V1);
	assert_same(back, j, "100002 domains back");
	json_decref(back);
	json_decref(out);
	json_decref(j);
}
END_TEST

START_TEST(convert_errors)
{
	struct err err = { "" };
	json_t *j = fixture("job.json"), *out = (json_t *)&err;

	ck_assert_int_eq(codec_convert(j, V2, &out, &err), -1);
	ck_assert_ptr_null(out);
	ck_assert_str_ne(err.msg, "");
	json_decref(j);

	j = fixture("rf-v1beta1.json");
	ck_assert_int_eq(codec_convert(j, "kueue.x-k8s.io/v1", &out, &err), -1);
	ck_assert(strstr(err.msg, "kueue.x-k8s.io/v1") != NULL);
	ck_assert_int_eq(codec_convert(j, NULL, &out, &err), -1);
	/* same version: a copy */
	out = convert_ok(j, V1);
	ck_assert(json_equal(out, j));
	json_decref(out);
	json_decref(j);

	j = t_json("[1]");
	ck_assert_int_eq(codec_convert(j, V1, &out, &err), -1);
	json_decref(j);
	j = t_json("{\"apiVersion\": \"kueue.x-k8s.io/v1alpha1\","
		   " \"kind\": \"Cohort\"}");
	ck_assert_int_eq(codec_convert(j, V1, &out, &err), -1);
	json_decref(j);
}
END_TEST

Suite *convert_suite(void)
{
	Suite *s = suite_create("convert");
	TCase *tc = tcase_create("convert");

	if (!cases)
		find_cases();
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, convert_cases, 0, (int)ncases);
	tcase_add_test(tc, convert_cases_present);
	tcase_add_loop_test(tc, convert_codec_fixtures, 0, (int)N(codec_files));
	tcase_add_test(tc, convert_identity);
	tcase_add_test(tc, convert_codec_cluster_queue);
	tcase_add_test(tc, convert_v1beta1_apply_over_v1beta2);
	tcase_add_test(tc, convert_annotation_passes);
	tcase_add_test(tc, convert_foreign_fields);
	tcase_add_loop_test(tc, convert_bad_topology, 0, (int)N(bad_topology));
	tcase_add_test(tc, convert_topology_chunks);
	tcase_add_test(tc, convert_errors);
	suite_add_tcase(s, tc);
	return s;
}
