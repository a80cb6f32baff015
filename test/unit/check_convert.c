/*
 * Suite "convert": kueue.x-k8s.io v1beta1 <-> v1beta2 conversion
 * (model/codec_convert.c): lossless round trips of every fixture and of
 * inline corner cases, the per-kind renames and the conversion-data
 * annotation, and refused inputs.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec_util.h"
#include "model/codec.h"
#include "suites.h"
#include "test/support/support.h"

/* ------------------------------------------------------------------ */
/* conversion */

static const char *const convert_files[] = {
	"rf-v1beta1.json", "rf-v1beta2.json", "cq-v1beta1.json",
	"cq-v1beta2.json", "lq-v1beta1.json", "lq-v1beta2.json",
	"cohort-v1beta1.json", "cohort-v1beta2.json", "wpc-v1beta1.json",
	"wpc-v1beta2.json", "wl-v1beta1.json", "wl-v1beta2.json",
};

/* Converts to the other version and back: the result is the input, the
 * input is untouched, and the middle form decodes cleanly. */
static void check_round_trip(const json_t *in)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct err err = { "" };
	json_t *copy = json_deep_copy(in), *mid, *back;
	enum api_version v = api_version_parse(json_string_value(
		json_object_get(in, "apiVersion")));
	enum api_version other = v == API_V1BETA1 ? API_V1BETA2 : API_V1BETA1;

	ck_assert_int_eq(codec_convert(in, api_version_name(other), &mid, &err),
			 0);
	ck_assert_refcount(mid, 1);
	ck_assert(json_equal(in, copy));
	ck_assert_str_eq(json_string_value(json_object_get(mid, "apiVersion")),
			 api_version_name(other));
	ck_assert_msg(decode_any(codec_kind_of(mid), mid, &fe) == 0, "%s",
		      t_fe_text(&fe));
	ck_assert_int_eq(codec_convert(mid, api_version_name(v), &back, &err),
			 0);
	ck_assert_refcount(back, 1);
	if (!json_equal(in, back)) {
		char *a = json_dumps(in, JSON_COMPACT | JSON_SORT_KEYS);
		char *b = json_dumps(back, JSON_COMPACT | JSON_SORT_KEYS);
		char *m = json_dumps(mid, JSON_COMPACT | JSON_SORT_KEYS);

		ck_abort_msg("round trip differs:\nin   %s\nmid  %s\nback %s",
			     a, m, b);
	}
	json_decref(back);
	json_decref(mid);
	json_decref(copy);
	field_errors_release(&fe);
}

START_TEST(convert_round_trip)
{
	json_t *j = fixture(convert_files[_i]);

	check_round_trip(j);
	json_decref(j);
}
END_TEST

static const char *const convert_inline[] = {
	/* a plain strategy collapses into v1beta1's list and comes back */
	"{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\","
	" \"spec\": {\"admissionChecksStrategy\": {\"admissionChecks\":"
	" [{\"name\": \"a\"}, {\"name\": \"b\"}]}}}",
	/* ... and a v1beta1 that chose the strategy form keeps it */
	"{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"kind\": \"ClusterQueue\","
	" \"metadata\": {\"annotations\": {}},"
	" \"spec\": {\"admissionChecksStrategy\": {\"admissionChecks\": [{\"name\": \"a\"}]}}}",
	/* both forms at once (invalid, but must survive) */
	"{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"kind\": \"ClusterQueue\","
	" \"spec\": {\"admissionChecks\": [\"x\"], \"admissionChecksStrategy\":"
	" {\"admissionChecks\": [{\"name\": \"a\", \"onFlavors\": [\"f\"]}]}}}",
	"{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"kind\": \"ClusterQueue\","
	" \"spec\": {\"admissionChecks\": [], \"flavorFungibility\":"
	" {\"whenCanBorrow\": \"MayStopSearch\", \"whenCanPreempt\": \"TryNextFlavor\"}}}",
	"{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"ClusterQueue\","
	" \"metadata\": {\"name\": \"m\", \"annotations\": {\"keep\": \"me\"}},"
	" \"spec\": {\"flavorFungibility\": {\"preference\": \"BorrowingOverPreemption\"}}}",
	/* priority class name without a source: no v1beta2 spelling */
	"{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"kind\": \"Workload\","
	" \"spec\": {\"priorityClassName\": \"p\", \"priority\": 3}}",
	/* an unmappable priorityClassRef */
	"{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Workload\","
	" \"spec\": {\"priorityClassRef\": {\"group\": \"x\", \"kind\": \"Y\", \"name\": \"z\"}},"
	" \"status\": {\"preemptionGates\": [{\"name\": \"g\"}]}}",
};

START_TEST(convert_round_trip_inline)
{
	json_t *j = t_json(convert_inline[_i]);

	check_round_trip(j);
	json_decref(j);
}
END_TEST

/* The conversion annotation of j, parsed (new reference) or NULL. */
static json_t *stash_of(const json_t *j)
{
	const char *s = json_string_value(json_object_get(json_object_get(
		json_object_get(j, "metadata"), "annotations"),
		"kueue.x-k8s.io/conversion-data"));

	return s ? t_json(s) : NULL;
}

START_TEST(convert_cluster_queue)
{
	struct err err = { "" };
	json_t *j = fixture("cq-v1beta1.json"), *out, *spec, *st;

	ck_assert_int_eq(codec_convert(j, V2, &out, &err), 0);
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
	st = stash_of(out);
	ck_assert_ptr_nonnull(json_object_get(json_object_get(st, "fields"),
					      "status.pendingWorkloadsStatus"));
	json_decref(st);
	json_decref(out);
	json_decref(j);

	j = fixture("cq-v1beta2.json");
	ck_assert_int_eq(codec_convert(j, V1, &out, &err), 0);
	spec = json_object_get(out, "spec");
	ck_assert_str_eq(json_string_value(json_object_get(spec, "cohort")),
			 "all-teams");
	ck_assert_ptr_null(json_object_get(spec, "concurrentAdmissionPolicy"));
	assert_json(json_object_get(spec, "flavorFungibility"),
		    "{\"whenCanBorrow\": \"TryNextFlavor\", \"whenCanPreempt\": \"TryNextFlavor\"}");
	/* onFlavors has no v1beta1 list form: the strategy stays */
	ck_assert_ptr_nonnull(json_object_get(spec, "admissionChecksStrategy"));
	st = stash_of(out);
	ck_assert_str_eq(json_string_value(json_object_get(st, "apiVersion")),
			 "kueue.x-k8s.io/v1beta2");
	ck_assert_ptr_nonnull(json_object_get(json_object_get(st, "fields"),
					      "spec.concurrentAdmissionPolicy"));
	json_decref(st);
	json_decref(out);
	json_decref(j);

	/* MayStopSearch becomes Borrow / Preempt; nothing to stash. */
	j = t_json("{\"apiVersion\": \"" V2 "\", \"kind\": \"ClusterQueue\","
		   " \"spec\": {\"flavorFungibility\": {\"whenCanBorrow\": \"MayStopSearch\","
		   " \"whenCanPreempt\": \"MayStopSearch\"}, \"admissionChecksStrategy\":"
		   " {\"admissionChecks\": [{\"name\": \"a\"}]}}}");
	ck_assert_int_eq(codec_convert(j, V1, &out, &err), 0);
	assert_json(out, "{\"apiVersion\": \"" V1 "\","
			 " \"kind\": \"ClusterQueue\","
			 " \"spec\": {\"flavorFungibility\": {\"whenCanBorrow\": \"Borrow\","
			 " \"whenCanPreempt\": \"Preempt\"}, \"admissionChecks\": [\"a\"]}}");
	json_decref(out);
	json_decref(j);
}
END_TEST

START_TEST(convert_local_queue_and_workload)
{
	struct err err = { "" };
	json_t *j = fixture("lq-v1beta1.json"), *out, *st;

	ck_assert_int_eq(codec_convert(j, V2, &out, &err), 0);
	st = json_object_get(out, "status");
	ck_assert_ptr_nonnull(json_object_get(st, "flavorsUsage"));
	ck_assert_ptr_null(json_object_get(st, "flavorUsage"));
	ck_assert_ptr_null(json_object_get(st, "flavors"));
	json_decref(out);
	json_decref(j);

	j = fixture("wl-v1beta1.json");
	ck_assert_int_eq(codec_convert(j, V2, &out, &err), 0);
	assert_json(json_object_get(json_object_get(out, "spec"),
				    "priorityClassRef"),
		    "{\"group\": \"kueue.x-k8s.io\", \"kind\": \"WorkloadPriorityClass\","
		    " \"name\": \"high\"}");
	ck_assert_ptr_null(json_object_get(json_object_get(out, "spec"),
					   "priorityClassSource"));
	st = json_object_get(out, "status");
	ck_assert_int_eq(int_at(st, "accumulatedPastExecutionTimeSeconds"), 42);
	ck_assert_ptr_null(json_object_get(
		st, "accumulatedPastExexcutionTimeSeconds"));
	/* nothing was lossy: no annotation, no annotations map */
	ck_assert_ptr_null(json_object_get(json_object_get(out, "metadata"),
					   "annotations"));
	json_decref(out);
	json_decref(j);

	j = fixture("wl-v1beta2.json");
	ck_assert_int_eq(codec_convert(j, V1, &out, &err), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
				 out, "spec"), "priorityClassSource")),
			 "scheduling.k8s.io/priorityclass");
	ck_assert_ptr_null(json_object_get(json_object_get(out, "spec"),
					   "preemptionGates"));
	json_decref(out);
	json_decref(j);

	/* The CRD default priorityClassSource "" is simply dropped. */
	j = t_json("{\"apiVersion\": \"" V1 "\", \"kind\": \"Workload\","
		   " \"spec\": {\"priorityClassSource\": \"\"}}");
	ck_assert_int_eq(codec_convert(j, V2, &out, &err), 0);
	assert_json(out, "{\"apiVersion\": \"" V2 "\", \"kind\": \"Workload\","
			 " \"spec\": {}}");
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
	ck_assert_int_eq(codec_convert(j, V1, &out, &err), 0);
	ck_assert_ptr_ne(out, j);
	ck_assert(json_equal(out, j));
	ck_assert_refcount(out, 1);
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

	tcase_add_loop_test(tc, convert_round_trip, 0, (int)N(convert_files));
	tcase_add_loop_test(tc, convert_round_trip_inline, 0,
			    (int)N(convert_inline));
	tcase_add_test(tc, convert_cluster_queue);
	tcase_add_test(tc, convert_local_queue_and_workload);
	tcase_add_test(tc, convert_errors);
	suite_add_tcase(s, tc);
	return s;
}
