/*
 * Suite "encode": the codec's encoders (model/codec_encode.c): full
 * Workloads and their round trip through the decoder, status objects as
 * merge patches carry them, pod templates with and without the raw JSON,
 * object metadata; and workload_copy, checked through the encoder.
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
/* encoders */

/* The fields of two workloads that a round trip must keep. */
static void assert_same_workload(const struct workload *a,
				 const struct workload *b)
{
	ck_assert_pstr_eq(a->meta.name, b->meta.name);
	ck_assert_pstr_eq(a->meta.namespace, b->meta.namespace);
	ck_assert_pstr_eq(a->meta.uid, b->meta.uid);
	ck_assert_int_eq(a->meta.generation, b->meta.generation);
	ck_assert_int_eq(a->meta.creation_ms, b->meta.creation_ms);
	ck_assert(smap_equal(&a->meta.labels, &b->meta.labels));
	ck_assert_uint_eq(a->meta.nfinalizers, b->meta.nfinalizers);
	ck_assert_uint_eq(a->meta.nowners, b->meta.nowners);
	ck_assert_uint_eq(a->npod_sets, b->npod_sets);
	for (size_t i = 0; i < a->npod_sets; i++) {
		const struct pod_set *x = &a->pod_sets[i], *y = &b->pod_sets[i];

		ck_assert_str_eq(x->name, y->name);
		ck_assert_int_eq(x->count, y->count);
		ck_assert_int_eq(x->has_min_count, y->has_min_count);
		ck_assert_int_eq(x->min_count, y->min_count);
		ck_assert_pstr_eq(x->tmpl.raw, y->tmpl.raw);
		ck_assert_pstr_eq(x->topology_request, y->topology_request);
		ck_assert(smap_equal(&x->tmpl.labels, &y->tmpl.labels));
		ck_assert_uint_eq(x->tmpl.ncontainers, y->tmpl.ncontainers);
	}
	ck_assert_pstr_eq(a->queue_name, b->queue_name);
	ck_assert_pstr_eq(a->priority_class_name, b->priority_class_name);
	ck_assert_int_eq(a->priority_source, b->priority_source);
	ck_assert_int_eq(a->has_priority, b->has_priority);
	ck_assert_int_eq(a->priority, b->priority);
	ck_assert_int_eq(a->active, b->active);
	ck_assert_int_eq(a->has_max_exec, b->has_max_exec);
	ck_assert_int_eq(a->max_exec_seconds, b->max_exec_seconds);
	ck_assert_uint_eq(a->conds.n, b->conds.n);
	for (size_t i = 0; i < a->conds.n; i++) {
		ck_assert_str_eq(a->conds.v[i].type, b->conds.v[i].type);
		ck_assert_int_eq(a->conds.v[i].status, b->conds.v[i].status);
		ck_assert_str_eq(a->conds.v[i].reason, b->conds.v[i].reason);
		ck_assert_str_eq(a->conds.v[i].message, b->conds.v[i].message);
		ck_assert_int_eq(a->conds.v[i].last_transition_ms,
				 b->conds.v[i].last_transition_ms);
		ck_assert_int_eq(a->conds.v[i].observed_generation,
				 b->conds.v[i].observed_generation);
	}
	ck_assert_int_eq(a->has_admission, b->has_admission);
	ck_assert_pstr_eq(a->admission.cluster_queue,
			  b->admission.cluster_queue);
	ck_assert_uint_eq(a->admission.npsa, b->admission.npsa);
	for (size_t i = 0; i < a->admission.npsa; i++) {
		const struct pod_set_assignment *x = &a->admission.psa[i];
		const struct pod_set_assignment *y = &b->admission.psa[i];

		ck_assert_str_eq(x->name, y->name);
		ck_assert(smap_equal(&x->flavors, &y->flavors));
		ck_assert(reslist_equal(&x->usage, &y->usage));
		ck_assert_int_eq(x->has_count, y->has_count);
		ck_assert_int_eq(x->count, y->count);
	}
	ck_assert_int_eq(a->has_requeue_count, b->has_requeue_count);
	ck_assert_int_eq(a->requeue_count, b->requeue_count);
	ck_assert_int_eq(a->requeue_at_ms, b->requeue_at_ms);
	ck_assert_uint_eq(a->nreclaimable, b->nreclaimable);
	ck_assert_uint_eq(a->nchecks, b->nchecks);
	for (size_t i = 0; i < a->nchecks; i++) {
		ck_assert_str_eq(a->checks[i].name, b->checks[i].name);
		ck_assert_int_eq(a->checks[i].state, b->checks[i].state);
		ck_assert_int_eq(a->checks[i].last_transition_ms,
				 b->checks[i].last_transition_ms);
		ck_assert_pstr_eq(a->checks[i].pod_set_updates,
				  b->checks[i].pod_set_updates);
	}
	ck_assert_int_eq(a->has_accumulated, b->has_accumulated);
	ck_assert_int_eq(a->accumulated_seconds, b->accumulated_seconds);
}

START_TEST(workload_round_trip)
{
	static const char *const files[] = { "wl-v1beta1.json",
					     "wl-v1beta2.json" };
	static const enum api_version vs[] = { API_V1BETA1, API_V1BETA2 };
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = fixture(files[_i]);
	struct workload w;

	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	for (size_t v = 0; v < N(vs); v++) {
		struct workload back;
		json_t *enc = codec_encode_workload(&w, vs[v]), *again;

		ck_assert_refcount(enc, 1);
		ck_assert_str_eq(json_string_value(json_object_get(enc,
								   "apiVersion")),
				 api_version_name(vs[v]));
		ck_assert_int_eq(codec_decode_workload(enc, &back, &fe), 0);
		ck_assert_msg(fe.n == 0, "%s", t_fe_text(&fe));
		assert_same_workload(&w, &back);
		again = codec_encode_workload(&back, vs[v]);
		ck_assert(json_equal(enc, again));
		json_decref(again);
		json_decref(enc);
		workload_release(&back);
	}
	workload_release(&w);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

/* workload_copy: a deep copy that encodes the same, onto a filled dst
 * (released first, no leak under ASan) and onto itself (it released dst,
 * i.e. src, before reading it, and so emptied the workload). */
START_TEST(workload_copy_deep)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = fixture(_i ? "wl-v1beta2.json" : "wl-v1beta1.json");
	json_t *want, *got;
	struct workload w, c = { 0 };

	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	want = codec_encode_workload(&w, API_V1BETA2);
	workload_copy(&c, &w);
	workload_copy(&c, &w);
	ck_assert_ptr_ne(c.meta.name, w.meta.name);
	workload_release(&w);
	got = codec_encode_workload(&c, API_V1BETA2);
	ck_assert(json_equal(want, got));
	json_decref(got);
	workload_copy(&c, &c);
	got = codec_encode_workload(&c, API_V1BETA2);
	ck_assert(json_equal(want, got));
	json_decref(got);
	json_decref(want);
	workload_release(&c);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(workload_encoding)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = fixture("wl-v1beta1.json"), *enc, *st, *tmpl, *ctr;
	struct workload w;

	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	enc = codec_encode_workload(&w, API_V1BETA2);
	assert_json(json_object_get(json_object_get(enc, "spec"),
				    "priorityClassRef"),
		    "{\"group\": \"kueue.x-k8s.io\", \"kind\": \"WorkloadPriorityClass\","
		    " \"name\": \"high\"}");
	ck_assert_ptr_null(json_object_get(json_object_get(enc, "spec"),
					   "priorityClassName"));
	st = json_object_get(enc, "status");
	ck_assert_int_eq(int_at(st, "accumulatedPastExecutionTimeSeconds"), 42);
	assert_json(json_object_get(st, "admission"),
		    "{\"clusterQueue\": \"team-a-cq\", \"podSetAssignments\": [{"
		    "\"name\": \"main\", \"flavors\": {\"cpu\": \"on-demand\","
		    " \"memory\": \"on-demand\"}, \"resourceUsage\": {\"cpu\": \"1500m\","
		    " \"memory\": \"384Mi\"}, \"count\": 3}]}");
	assert_json(json_object_get(st, "conditions"),
		    "[{\"type\": \"QuotaReserved\", \"status\": \"True\", \"reason\": \"QuotaReserved\","
		    " \"message\": \"Quota reserved in ClusterQueue team-a-cq\","
		    " \"lastTransitionTime\": \"2026-11-30T06:00:05Z\"},"
		    " {\"type\": \"Admitted\", \"status\": \"True\", \"reason\": \"Admitted\","
		    " \"message\": \"The workload is admitted\", \"observedGeneration\": 1,"
		    " \"lastTransitionTime\": \"2026-11-30T06:00:06Z\"}]");
	/* The template is the raw JSON, images and all, with the label map
	 * written back from the struct. */
	tmpl = json_object_get(json_array_get(json_object_get(
		json_object_get(enc, "spec"), "podSets"), 0), "template");
	ctr = json_array_get(json_object_get(json_object_get(tmpl, "spec"),
					     "containers"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(ctr, "image")),
			 "busybox");
	json_decref(enc);

	smap_set(&w.pod_sets[0].tmpl.labels, "kueue.x-k8s.io/podset", "main");
	smap_release(&w.pod_sets[0].tmpl.annotations);
	w.has_admission = false;
	admission_release(&w.admission);
	enc = codec_encode_workload_status(&w, API_V1BETA1);
	ck_assert_refcount(enc, 1);
	/* the /status merge-patch body clears admission with null ... */
	ck_assert(json_is_null(json_object_get(enc, "admission")));
	ck_assert(json_is_object(json_object_get(enc, "requeueState")));
	ck_assert_int_eq(int_at(enc, "accumulatedPastExexcutionTimeSeconds"),
			 42);
	json_decref(enc);
	/* ... while a whole object just omits it */
	enc = codec_encode_workload(&w, API_V1BETA1);
	ck_assert_ptr_null(json_object_get(json_object_get(enc, "status"),
					   "admission"));
	json_decref(enc);
	tmpl = codec_encode_pod_template(&w.pod_sets[0].tmpl);
	ck_assert_refcount(tmpl, 1);
	assert_json(json_object_get(tmpl, "metadata"),
		    "{\"labels\": {\"app\": \"sample\", \"kueue.x-k8s.io/podset\": \"main\"}}");
	json_decref(tmpl);
	workload_release(&w);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(pod_template_without_raw)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = fixture("job.json"), *enc;
	struct job job;
	struct pod_template back;

	ck_assert_int_eq(codec_decode_job(j, &job, &fe), 0);
	FREE_AND_NULL(job.tmpl.raw);
	enc = codec_encode_pod_template(&job.tmpl);
	ck_assert_refcount(enc, 1);
	ck_assert_int_eq(codec_decode_pod_template(enc, "", &back, &fe), 0);
	ck_assert(smap_equal(&back.labels, &job.tmpl.labels));
	ck_assert_uint_eq(back.ncontainers, 1);
	ck_assert(reslist_equal(&back.containers[0].requests,
				&job.tmpl.containers[0].requests));
	ck_assert(reslist_equal(&back.containers[0].limits,
				&job.tmpl.containers[0].limits));
	ck_assert_uint_eq(back.ninit_containers, 2);
	ck_assert(back.init_containers[1].sidecar);
	ck_assert(reslist_equal(&back.overhead, &job.tmpl.overhead));
	ck_assert(back.has_pod_resources);
	ck_assert(reslist_equal(&back.pod_limits, &job.tmpl.pod_limits));
	ck_assert(smap_equal(&back.node_selector, &job.tmpl.node_selector));
	ck_assert(back.affinity.present);
	ck_assert_uint_eq(back.affinity.n, 2);
	ck_assert_uint_eq(back.affinity.terms[0].exprs.n, 2);
	ck_assert_uint_eq(back.ntols, 2);
	ck_assert(toleration_equal(&back.tols[0], &job.tmpl.tols[0]));
	ck_assert(toleration_equal(&back.tols[1], &job.tmpl.tols[1]));
	ck_assert_str_eq(back.priority_class_name, "high");
	ck_assert_str_eq(back.runtime_class_name, "gvisor");
	pod_template_release(&back);
	json_decref(enc);
	job_release(&job);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(cluster_queue_status)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = fixture("cq-v1beta1.json"), *st;
	struct cluster_queue cq, empty = { 0 };

	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), 0);
	st = codec_encode_cluster_queue_status(&cq, API_V1BETA1);
	ck_assert_refcount(st, 1);
	assert_json(st,
		    "{\"conditions\": [{\"type\": \"Active\", \"status\": \"True\","
		    " \"reason\": \"Ready\", \"message\": \"Can admit new workloads\","
		    " \"observedGeneration\": 3, \"lastTransitionTime\": \"2026-11-30T06:01:00Z\"}],"
		    " \"flavorsReservation\": [{\"name\": \"on-demand\", \"resources\": ["
		    "  {\"name\": \"cpu\", \"total\": \"1500m\", \"borrowed\": \"0\"},"
		    "  {\"name\": \"memory\", \"total\": \"2Gi\", \"borrowed\": \"0\"}]}],"
		    " \"flavorsUsage\": [{\"name\": \"on-demand\", \"resources\": ["
		    "  {\"name\": \"cpu\", \"total\": \"1\", \"borrowed\": \"0\"}]}],"
		    " \"pendingWorkloads\": 2, \"reservingWorkloads\": 1, \"admittedWorkloads\": 1}");
	json_decref(st);
	/* v1beta1 keeps empty lists and zero counters; v1beta2 omits lists. */
	st = codec_encode_cluster_queue_status(&empty, API_V1BETA1);
	assert_json(st, "{\"flavorsReservation\": [], \"flavorsUsage\": [],"
			" \"pendingWorkloads\": 0, \"reservingWorkloads\": 0,"
			" \"admittedWorkloads\": 0}");
	json_decref(st);
	st = codec_encode_cluster_queue_status(&empty, API_V1BETA2);
	assert_json(st, "{\"pendingWorkloads\": 0, \"reservingWorkloads\": 0,"
			" \"admittedWorkloads\": 0}");
	json_decref(st);
	cluster_queue_release(&cq);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(local_queue_status)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = fixture("lq-v1beta1.json"), *st;
	struct local_queue lq;

	ck_assert_int_eq(codec_decode_local_queue(j, &lq, &fe), 0);
	st = codec_encode_local_queue_status(&lq, API_V1BETA1);
	ck_assert_refcount(st, 1);
	assert_json(json_object_get(st, "flavorUsage"),
		    "[{\"name\": \"on-demand\", \"resources\": [{\"name\": \"cpu\","
		    " \"total\": \"500m\"}, {\"name\": \"memory\", \"total\": \"1Gi\"}]}]");
	ck_assert_ptr_null(json_object_get(st, "flavorsUsage"));
	ck_assert_int_eq(int_at(st, "pendingWorkloads"), 3);
	json_decref(st);
	st = codec_encode_local_queue_status(&lq, API_V1BETA2);
	ck_assert_ptr_nonnull(json_object_get(st, "flavorsUsage"));
	ck_assert_ptr_null(json_object_get(st, "flavorUsage"));
	json_decref(st);
	local_queue_release(&lq);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(object_meta_encoding)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = fixture("wl-v1beta1.json"), *md;
	struct workload w;

	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	md = codec_encode_object_meta(&w.meta);
	ck_assert_refcount(md, 1);
	ck_assert(json_equal(md, json_object_get(j, "metadata")));
	json_decref(md);
	workload_release(&w);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

Suite *encode_suite(void)
{
	Suite *s = suite_create("encode");
	TCase *tc = tcase_create("encode");

	tcase_add_loop_test(tc, workload_round_trip, 0, 2);
	tcase_add_loop_test(tc, workload_copy_deep, 0, 2);
	tcase_add_test(tc, workload_encoding);
	tcase_add_test(tc, pod_template_without_raw);
	tcase_add_test(tc, cluster_queue_status);
	tcase_add_test(tc, local_queue_status);
	tcase_add_test(tc, object_meta_encoding);
	suite_add_tcase(s, tc);
	return s;
}
