/*
 * Suite "codec": JSON -> structs for every kind in both kueue.x-k8s.io
 * versions, CRD defaults, version-specific field names, and hostile input
 * (wrong types, bad quantities, 10 MB strings, 10,000-deep nesting), which
 * must always end in a field error naming the field, never in a crash.
 * Encoders are in check_encode.c, conversion in check_convert.c.
 * Fixtures live in test/fixtures/codec/.
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
/* decode: every kind, both versions */

static const struct fixture_case {
	const char *file;
	enum kind kind;
	enum api_version version; /* API_UNKNOWN for batch/v1 */
} fixtures[] = {
	{ "rf-v1beta1.json", KIND_RESOURCE_FLAVOR, API_V1BETA1 },
	{ "rf-v1beta2.json", KIND_RESOURCE_FLAVOR, API_V1BETA2 },
	{ "cq-v1beta1.json", KIND_CLUSTER_QUEUE, API_V1BETA1 },
	{ "cq-v1beta2.json", KIND_CLUSTER_QUEUE, API_V1BETA2 },
	{ "lq-v1beta1.json", KIND_LOCAL_QUEUE, API_V1BETA1 },
	{ "lq-v1beta2.json", KIND_LOCAL_QUEUE, API_V1BETA2 },
	{ "cohort-v1beta1.json", KIND_COHORT, API_V1BETA1 },
	{ "cohort-v1beta2.json", KIND_COHORT, API_V1BETA2 },
	{ "wpc-v1beta1.json", KIND_WORKLOAD_PRIORITY_CLASS, API_V1BETA1 },
	{ "wpc-v1beta2.json", KIND_WORKLOAD_PRIORITY_CLASS, API_V1BETA2 },
	{ "wl-v1beta1.json", KIND_WORKLOAD, API_V1BETA1 },
	{ "wl-v1beta2.json", KIND_WORKLOAD, API_V1BETA2 },
	{ "job.json", KIND_JOB, API_UNKNOWN },
};

START_TEST(decode_fixture)
{
	const struct fixture_case *fc = &fixtures[_i];
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = fixture(fc->file);

	ck_assert_int_eq(codec_kind_of(j), fc->kind);
	ck_assert_int_eq(decode_any(fc->kind, j, &fe), 0);
	ck_assert_msg(fe.n == 0, "%s: %s", fc->file, t_fe_text(&fe));
	ck_assert_refcount(j, 1);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(cluster_queue_v1beta1)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cluster_queue cq;
	json_t *j = fixture("cq-v1beta1.json");
	const struct resource_group *g;

	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), 0);
	ck_assert_int_eq(cq.version, API_V1BETA1);
	ck_assert_str_eq(cq.meta.name, "team-a-cq");
	ck_assert_str_eq(cq.meta.uid, "0b5f7a4e-1111-4e5c-9a3b-000000000001");
	ck_assert_str_eq(cq.meta.resource_version, "4242");
	ck_assert_int_eq(cq.meta.generation, 3);
	ck_assert_int_eq(cq.meta.creation_ms, 1796018400000LL);
	ck_assert_str_eq(smap_get(&cq.meta.labels, "team"), "a");
	ck_assert(object_meta_has_finalizer(&cq.meta,
					    FINALIZER_RESOURCE_IN_USE));
	ck_assert_str_eq(cq.cohort, "all-teams");
	ck_assert_int_eq(cq.strategy, QS_STRICT_FIFO);
	ck_assert(cq.has_ns_selector);
	ck_assert_uint_eq(cq.ns_selector.n, 2);
	ck_assert_uint_eq(cq.ngroups, 2);
	g = &cq.groups[0];
	ck_assert_uint_eq(g->ncovered, 2);
	ck_assert_str_eq(g->covered[1], "memory");
	ck_assert_uint_eq(g->nflavors, 2);
	ck_assert_str_eq(g->flavors[0].name, "on-demand");
	ck_assert_int_eq(g->flavors[0].res[0].nominal, 9000);
	ck_assert(g->flavors[0].res[0].has_borrowing);
	ck_assert_int_eq(g->flavors[0].res[0].borrowing, 1500);
	ck_assert(!g->flavors[0].res[0].has_lending);
	ck_assert_int_eq(g->flavors[0].res[1].nominal, 36 * GI);
	ck_assert_int_eq(g->flavors[0].res[1].lending, 4 * GI);
	ck_assert_int_eq(g->flavors[1].res[0].nominal, 500);     /* 0.5 */
	ck_assert_int_eq(g->flavors[1].res[1].nominal, 1000000); /* "1e3" */
	ck_assert_str_eq(cq.groups[1].flavors[0].res[0].name, "nvidia.com/gpu");
	ck_assert_int_eq(cq.when_can_borrow, FUNG_MAY_STOP_SEARCH);
	ck_assert_int_eq(cq.when_can_preempt, FUNG_MAY_STOP_SEARCH);
	ck_assert_int_eq(cq.within_cq, WCQ_LOWER_PRIORITY);
	ck_assert_int_eq(cq.reclaim, RWC_ANY);
	ck_assert_int_eq(cq.borrow_policy, BWC_LOWER_PRIORITY);
	ck_assert(cq.has_borrow_threshold);
	ck_assert_int_eq(cq.borrow_threshold, 100);
	ck_assert_uint_eq(cq.nadmission_checks, 1);
	ck_assert_str_eq(cq.admission_checks[0], "prov-check");
	ck_assert(!cq.has_ac_strategy);
	ck_assert_int_eq(cq.stop, STOP_HOLD);
	ck_assert(cq.has_fs_weight);
	ck_assert_int_eq(cq.fs_weight, 2000);
	ck_assert_int_eq(cq.admission_mode, AM_USAGE_BASED_FAIR_SHARING);
	/* status */
	ck_assert_uint_eq(cq.conds.n, 1);
	ck_assert_str_eq(cq.conds.v[0].type, "Active");
	ck_assert_int_eq(cq.conds.v[0].status, COND_TRUE);
	ck_assert_int_eq(cq.conds.v[0].observed_generation, 3);
	ck_assert_int_eq(cq.conds.v[0].last_transition_ms, 1796018460000LL);
	ck_assert_uint_eq(cq.nreservation, 1);
	ck_assert_uint_eq(cq.reservation[0].nres, 2);
	/* sorted by resource name whatever the input order */
	ck_assert_str_eq(cq.reservation[0].res[0].name, "cpu");
	ck_assert_int_eq(cq.reservation[0].res[0].total, 1500);
	ck_assert_int_eq(cq.reservation[0].res[1].total, 2 * GI);
	ck_assert_uint_eq(cq.nusage, 1);
	ck_assert_int_eq(cq.pending, 2);
	ck_assert_int_eq(cq.reserving, 1);
	ck_assert_int_eq(cq.admitted, 1);
	cluster_queue_release(&cq);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(cluster_queue_v1beta2)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cluster_queue cq;
	json_t *j = fixture("cq-v1beta2.json");

	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), 0);
	ck_assert_int_eq(cq.version, API_V1BETA2);
	ck_assert_str_eq(cq.cohort, "all-teams");
	ck_assert_int_eq(cq.strategy, QS_BEST_EFFORT_FIFO);
	ck_assert(cq.has_ns_selector); /* {} = every namespace */
	ck_assert_uint_eq(cq.ns_selector.n, 0);
	ck_assert_int_eq(cq.when_can_borrow, FUNG_TRY_NEXT_FLAVOR);
	ck_assert_int_eq(cq.when_can_preempt, FUNG_TRY_NEXT_FLAVOR);
	ck_assert_int_eq(cq.fung_preference, FPREF_PREEMPTION_OVER_BORROWING);
	ck_assert_int_eq(cq.within_cq, WCQ_LOWER_OR_NEWER_EQUAL_PRIORITY);
	ck_assert_int_eq(cq.reclaim, RWC_LOWER_PRIORITY);
	ck_assert(cq.has_ac_strategy);
	ck_assert_uint_eq(cq.nac_rules, 1);
	ck_assert_str_eq(cq.ac_rules[0].name, "prov");
	ck_assert_uint_eq(cq.ac_rules[0].non_flavors, 1);
	ck_assert_str_eq(cq.ac_rules[0].on_flavors[0], "spot");
	ck_assert_int_eq(cq.migration, MIG_TRY_PREFERRED_FLAVORS);
	ck_assert_str_eq(cq.last_acceptable_flavor, "spot");
	ck_assert(!cq.has_fs_weight);
	ck_assert_uint_eq(cq.nusage, 1);
	ck_assert_int_eq(cq.usage[0].res[0].total, 3000);
	cluster_queue_release(&cq);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(local_queue_both_versions)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct local_queue lq;
	json_t *j = fixture("lq-v1beta1.json");

	ck_assert_int_eq(codec_decode_local_queue(j, &lq, &fe), 0);
	ck_assert_str_eq(lq.meta.namespace, "team-a");
	ck_assert_str_eq(lq.cluster_queue, "team-a-cq");
	ck_assert_int_eq(lq.stop, STOP_HOLD_AND_DRAIN);
	ck_assert(lq.has_fs_weight);
	ck_assert_int_eq(lq.fs_weight, 1000); /* fairSharing {} -> weight 1 */
	ck_assert_int_eq(lq.conds.v[0].status, COND_FALSE);
	ck_assert_int_eq(lq.pending, 3);
	ck_assert_int_eq(lq.reserving, 2);
	ck_assert_int_eq(lq.admitted, 1);
	ck_assert_uint_eq(lq.nreservation, 1);
	ck_assert_uint_eq(lq.nusage, 1); /* v1beta1 "flavorUsage" */
	ck_assert_str_eq(lq.usage[0].res[0].name, "cpu");
	ck_assert_int_eq(lq.usage[0].res[0].total, 500);
	ck_assert_int_eq(lq.usage[0].res[1].total, GI);
	local_queue_release(&lq);
	json_decref(j);

	j = fixture("lq-v1beta2.json");
	ck_assert_int_eq(codec_decode_local_queue(j, &lq, &fe), 0);
	ck_assert_int_eq(lq.version, API_V1BETA2);
	ck_assert_uint_eq(lq.nusage, 1); /* v1beta2 "flavorsUsage" */
	ck_assert_str_eq(lq.usage[0].name, "spot");
	ck_assert(!lq.has_fs_weight);
	local_queue_release(&lq);
	json_decref(j);
	ck_assert_uint_eq(fe.n, 0);
	field_errors_release(&fe);
}
END_TEST

START_TEST(flavor_cohort_wpc)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct resource_flavor rf;
	struct cohort co;
	struct workload_priority_class wpc;
	json_t *j = fixture("rf-v1beta1.json");

	ck_assert_int_eq(codec_decode_resource_flavor(j, &rf, &fe), 0);
	ck_assert_str_eq(smap_get(&rf.node_labels, "instance-type"), "spot");
	ck_assert_uint_eq(rf.ntaints, 1);
	ck_assert_str_eq(rf.taints[0].key, "spot");
	ck_assert_str_eq(rf.taints[0].value, "true");
	ck_assert_int_eq(rf.taints[0].effect, EFFECT_NO_SCHEDULE);
	ck_assert_str_eq(rf.taints[0].time_added, "2026-11-30T06:00:00Z");
	ck_assert_uint_eq(rf.ntols, 2);
	ck_assert_int_eq(rf.tols[0].op, TOL_EXISTS);
	ck_assert_str_eq(rf.tols[1].value, "ml");
	ck_assert_int_eq(rf.tols[1].op, TOL_EQUAL);
	ck_assert_int_eq(rf.tols[1].effect, EFFECT_NO_EXECUTE);
	ck_assert(rf.tols[1].has_seconds);
	ck_assert_int_eq(rf.tols[1].seconds, 30);
	ck_assert_str_eq(rf.topology_name, "default");
	resource_flavor_release(&rf);
	json_decref(j);

	j = fixture("cohort-v1beta1.json");
	ck_assert_int_eq(codec_decode_cohort(j, &co, &fe), 0);
	ck_assert_str_eq(co.parent, "root");
	ck_assert_uint_eq(co.ngroups, 1);
	ck_assert_int_eq(co.groups[0].flavors[0].res[0].borrowing, 2000);
	ck_assert_int_eq(co.fs_weight, 500);
	cohort_release(&co);
	json_decref(j);

	j = fixture("wpc-v1beta1.json");
	ck_assert_int_eq(codec_decode_workload_priority_class(j, &wpc, &fe), 0);
	ck_assert(wpc.has_value);
	ck_assert_int_eq(wpc.value, 10000);
	ck_assert_str_eq(wpc.description, "urgent jobs");
	workload_priority_class_release(&wpc);
	json_decref(j);

	j = fixture("wpc-v1beta2.json");
	ck_assert_int_eq(codec_decode_workload_priority_class(j, &wpc, &fe), 0);
	ck_assert_int_eq(wpc.value, -5);
	ck_assert_ptr_null(wpc.description);
	workload_priority_class_release(&wpc);
	json_decref(j);
	ck_assert_uint_eq(fe.n, 0);
	field_errors_release(&fe);
}
END_TEST

START_TEST(workload_v1beta1)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct workload w;
	json_t *j = fixture("wl-v1beta1.json");
	const struct pod_set *ps;

	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	ck_assert_uint_eq(w.meta.nowners, 1);
	ck_assert_str_eq(w.meta.owners[0].kind, "Job");
	ck_assert(w.meta.owners[0].controller);
	ck_assert(w.meta.owners[0].block_owner_deletion);
	ck_assert_str_eq(w.queue_name, "user-queue");
	ck_assert_str_eq(w.priority_class_name, "high");
	ck_assert_int_eq(w.priority_source, PSRC_WPC);
	ck_assert(w.has_priority);
	ck_assert_int_eq(w.priority, 10000);
	ck_assert(w.active);
	ck_assert_int_eq(w.max_exec_seconds, 600);
	ck_assert_uint_eq(w.npod_sets, 1);
	ps = &w.pod_sets[0];
	ck_assert_str_eq(ps->name, "main");
	ck_assert_int_eq(ps->count, 3);
	ck_assert(ps->has_min_count);
	ck_assert_int_eq(ps->min_count, 2);
	ck_assert_str_eq(ps->topology_request,
			 "{\"podIndexLabel\":\"batch.kubernetes.io/job-completion-index\"}");
	ck_assert(!ps->tas_requested); /* podIndexLabel alone asks nothing */
	ck_assert_str_eq(smap_get(&ps->tmpl.labels, "app"), "sample");
	ck_assert_int_eq(reslist_get(&ps->tmpl.containers[0].requests,
				     "memory"), 128 * MI);
	ck_assert_int_eq(reslist_get(&ps->tmpl.containers[0].limits, "cpu"),
			 1000);
	ck_assert_uint_eq(w.conds.n, 2);
	ck_assert(workload_is_admitted(&w));
	ck_assert(w.has_admission);
	ck_assert_str_eq(w.admission.cluster_queue, "team-a-cq");
	ck_assert_str_eq(smap_get(&w.admission.psa[0].flavors, "cpu"),
			 "on-demand");
	ck_assert_int_eq(reslist_get(&w.admission.psa[0].usage, "memory"),
			 384 * MI);
	ck_assert(w.admission.psa[0].has_count);
	ck_assert_int_eq(w.admission.psa[0].count, 3);
	ck_assert(w.has_requeue_count);
	ck_assert_int_eq(w.requeue_count, 1);
	ck_assert_int_eq(w.requeue_at_ms, 1796019000000LL);
	ck_assert_uint_eq(w.nreclaimable, 1);
	ck_assert_int_eq(w.reclaimable[0].count, 1);
	ck_assert_uint_eq(w.nchecks, 1);
	ck_assert_int_eq(w.checks[0].state, CHECK_READY);
	ck_assert_str_eq(w.checks[0].message, "");
	ck_assert_str_eq(w.checks[0].pod_set_updates,
			 "[{\"labels\":{\"a\":\"b\"},\"name\":\"main\"}]");
	ck_assert(w.has_accumulated);
	ck_assert_int_eq(w.accumulated_seconds, 42);
	workload_release(&w);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(workload_v1beta2)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct workload w;
	json_t *j = fixture("wl-v1beta2.json");

	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	ck_assert_int_eq(w.version, API_V1BETA2);
	ck_assert_str_eq(w.priority_class_name, "system-high");
	ck_assert_int_eq(w.priority_source, PSRC_POD);
	ck_assert(!w.active);
	ck_assert_uint_eq(w.npod_sets, 2);
	ck_assert_str_eq(w.pod_sets[1].name, "workers");
	ck_assert_int_eq(w.pod_sets[1].count, 4);
	ck_assert_int_eq(reslist_get(&w.pod_sets[1].tmpl.containers[0].requests,
				     "nvidia.com/gpu"), 1000);
	ck_assert(!w.has_admission);
	ck_assert(w.has_accumulated);
	ck_assert_int_eq(w.accumulated_seconds, 7);
	workload_release(&w);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(job_and_pod_template)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct job job;
	json_t *j = fixture("job.json");
	const struct pod_template *t = &job.tmpl;
	const struct node_term *term;
	char *raw;

	ck_assert_int_eq(codec_decode_job(j, &job, &fe), 0);
	ck_assert(job.suspend);
	ck_assert(job.has_parallelism);
	ck_assert_int_eq(job.parallelism, 3);
	ck_assert_int_eq(job.completions, 6);
	ck_assert(job.indexed);
	ck_assert_int_eq(job.active, 3);
	ck_assert_int_eq(job.ready, 2);
	ck_assert_int_eq(job.succeeded, 1);
	ck_assert_int_eq(job.uncounted_succeeded, 2);
	ck_assert_int_eq(job.start_ms, 1796018400000LL);
	ck_assert_int_eq(job.completion_ms, 0);
	ck_assert_str_eq(job.conds.v[0].reason, "JobResumed");
	/* the template */
	ck_assert_str_eq(smap_get(&t->labels, "app"), "sample");
	ck_assert_uint_eq(t->ncontainers, 1);
	ck_assert_int_eq(reslist_get(&t->containers[0].requests, "cpu"), 500);
	ck_assert_uint_eq(t->ninit_containers, 2);
	ck_assert(!t->init_containers[0].sidecar);
	ck_assert(t->init_containers[1].sidecar);
	ck_assert_int_eq(reslist_get(&t->overhead, "cpu"), 100);
	ck_assert(t->has_pod_resources);
	ck_assert_int_eq(reslist_get(&t->pod_requests, "cpu"), 2000);
	ck_assert_int_eq(reslist_get(&t->pod_limits, "memory"), 2 * GI);
	ck_assert_str_eq(smap_get(&t->node_selector, "tier"), "spot");
	ck_assert(t->affinity.present);
	ck_assert_uint_eq(t->affinity.n, 2);
	term = &t->affinity.terms[0];
	ck_assert_uint_eq(term->exprs.n, 2);
	ck_assert_int_eq(term->exprs.reqs[1].op, SEL_GT);
	ck_assert_uint_eq(term->nfields, 0);
	ck_assert_uint_eq(t->affinity.terms[1].exprs.n, 0);
	ck_assert_uint_eq(t->affinity.terms[1].nfields, 1);
	ck_assert_uint_eq(t->ntols, 2);
	ck_assert_str_eq(t->tols[1].key, "");
	ck_assert_int_eq(t->tols[1].op, TOL_EXISTS);
	ck_assert_int_eq(t->tols[1].effect, EFFECT_ALL);
	ck_assert_str_eq(t->priority_class_name, "high");
	ck_assert_str_eq(t->runtime_class_name, "gvisor");
	raw = json_dumps(json_object_get(json_object_get(j, "spec"),
					 "template"),
			 JSON_COMPACT | JSON_SORT_KEYS);
	ck_assert_str_eq(t->raw, raw);
	free(raw);
	job_release(&job);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(pod_template_direct)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct pod_template t;
	json_t *j = t_json("{\"spec\": {\"containers\": [{\"name\": \"a\","
			   " \"resources\": {\"requests\": {\"cpu\": \"x\"}}}]}}");

	ck_assert_int_eq(codec_decode_pod_template(j, "spec.template", &t, &fe),
			 -1);
	ck_assert(field_errors_has_path(&fe, "spec.template.spec.containers[0]"
					".resources.requests[cpu]"));
	pod_template_release(&t);
	json_decref(j);
	field_errors_release(&fe);

	j = t_json("[]");
	ck_assert_int_eq(codec_decode_pod_template(j, "spec.template", &t, &fe),
			 -1);
	ck_assert_fe(&fe, "spec.template: Invalid value: \"array\"");
	pod_template_release(&t);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

/* ------------------------------------------------------------------ */
/* defaults and version-specific field names */

START_TEST(crd_defaults)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cluster_queue cq;
	struct workload w;
	json_t *j = t_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\","
			   " \"kind\": \"ClusterQueue\", \"metadata\": {\"name\": \"x\"},"
			   " \"spec\": {\"flavorFungibility\": {}, \"preemption\":"
			   " {\"borrowWithinCohort\": {}}}}");

	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), 0);
	ck_assert_int_eq(cq.strategy, QS_BEST_EFFORT_FIFO);
	ck_assert_int_eq(cq.when_can_borrow, FUNG_MAY_STOP_SEARCH);
	ck_assert_int_eq(cq.when_can_preempt, FUNG_TRY_NEXT_FLAVOR);
	ck_assert_int_eq(cq.fung_preference, FPREF_NONE);
	ck_assert_int_eq(cq.within_cq, WCQ_NEVER);
	ck_assert_int_eq(cq.reclaim, RWC_NEVER);
	ck_assert_int_eq(cq.borrow_policy, BWC_NEVER);
	ck_assert(!cq.has_borrow_threshold);
	ck_assert_int_eq(cq.stop, STOP_NONE);
	ck_assert(!cq.has_ns_selector); /* nil: matches nothing */
	ck_assert_ptr_null(cq.cohort);
	cluster_queue_release(&cq);
	json_decref(j);

	/* Also: no spec at all, and no apiVersion (read as v1beta1). */
	j = t_json("{\"metadata\": {\"name\": \"bare\"}}");
	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), 0);
	ck_assert_int_eq(cq.version, API_V1BETA1);
	ck_assert_int_eq(cq.when_can_preempt, FUNG_TRY_NEXT_FLAVOR);
	cluster_queue_release(&cq);
	json_decref(j);

	j = t_json("{\"apiVersion\": \"" V2 "\", \"kind\": \"Workload\","
		   " \"spec\": {\"podSets\": [{\"template\": {}}]}}");
	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	ck_assert(w.active);
	ck_assert_uint_eq(w.npod_sets, 1);
	ck_assert_str_eq(w.pod_sets[0].name, DEFAULT_PODSET_NAME);
	ck_assert_int_eq(w.pod_sets[0].count, 1);
	ck_assert(!w.pod_sets[0].has_min_count);
	ck_assert_int_eq(w.priority_source, PSRC_NONE);
	ck_assert(!w.has_priority);
	ck_assert(!w.pod_sets[0].tas_requested);
	workload_release(&w);
	json_decref(j);
	/* Kueue's IsExplicitlyRequestingTAS, field by field */
	{
		static const char *const trs[][2] = {
			{ "{\"required\": \"r\"}", "1" },
			{ "{\"preferred\": \"p\"}", "1" },
			{ "{\"unconstrained\": false}", "1" },
			{ "{\"podSetSliceSize\": 2}", "1" },
			{ "{\"podSetSliceRequiredTopology\": \"r\"}", "1" },
			{ "{\"podsetSliceRequiredTopologyConstraints\": [{}]}",
			  "1" },
			{ "{\"podsetSliceRequiredTopologyConstraints\": []}",
			  "0" },
			{ "{\"podIndexLabel\": \"x\"}", "0" },
		};

		for (size_t i = 0; i < sizeof(trs) / sizeof(trs[0]); i++) {
			char *text = xasprintf(
				"{\"apiVersion\": \"" V2 "\", \"kind\": "
				"\"Workload\", \"spec\": {\"podSets\": "
				"[{\"template\": {}, \"topologyRequest\": "
				"%s}]}}", trs[i][0]);

			j = t_json(text);
			free(text);
			ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
			ck_assert_msg(w.pod_sets[0].tas_requested ==
					      (trs[i][1][0] == '1'),
				      "%s", trs[i][0]);
			workload_release(&w);
			json_decref(j);
		}
	}
	ck_assert_uint_eq(fe.n, 0);
	field_errors_release(&fe);
}
END_TEST

START_TEST(version_field_names)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cluster_queue cq;
	struct local_queue lq;
	struct workload w;
	json_t *j;

	/* Each version reads only its own spelling; the other is an unknown
	 * field, which the API server would have pruned. (preference is in
	 * both versions, as in Kueue's HEAD.) */
	j = t_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"spec\": {"
		   "\"cohortName\": \"b\", \"admissionChecks\": [\"c\"],"
		   " \"flavorFungibility\": {\"preference\": \"PreemptionOverBorrowing\"},"
		   " \"concurrentAdmissionPolicy\": {\"migration\": {\"mode\": \"Bogus\"}}}}");
	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), 0);
	ck_assert_ptr_null(cq.cohort);
	ck_assert_uint_eq(cq.nadmission_checks, 1);
	ck_assert_int_eq(cq.fung_preference, FPREF_PREEMPTION_OVER_BORROWING);
	ck_assert_int_eq(cq.migration, MIG_UNSET);
	cluster_queue_release(&cq);
	json_decref(j);

	j = t_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"spec\": {"
		   "\"cohort\": \"a\", \"admissionChecks\": [\"c\"]}}");
	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), 0);
	ck_assert_ptr_null(cq.cohort);
	ck_assert_uint_eq(cq.nadmission_checks, 0);
	cluster_queue_release(&cq);
	json_decref(j);

	j = t_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"status\": {"
		   "\"flavorUsage\": [{\"name\": \"a\"}],"
		   " \"flavorsUsage\": [{\"name\": \"b\"}, {\"name\": \"c\"}]}}");
	ck_assert_int_eq(codec_decode_local_queue(j, &lq, &fe), 0);
	ck_assert_uint_eq(lq.nusage, 2);
	local_queue_release(&lq);
	json_decref(j);

	j = t_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"spec\": {"
		   "\"priorityClassRef\": {\"group\": \"x\"}},"
		   " \"status\": {\"accumulatedPastExecutionTimeSeconds\": 5}}");
	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	ck_assert(!w.has_accumulated);
	ck_assert_ptr_null(w.priority_class_name);
	workload_release(&w);
	json_decref(j);

	j = t_json("{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"spec\": {"
		   "\"priorityClassName\": \"x\", \"priorityClassSource\": \"bogus\"},"
		   " \"status\": {\"accumulatedPastExexcutionTimeSeconds\": 5}}");
	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), 0);
	ck_assert(!w.has_accumulated);
	ck_assert_ptr_null(w.priority_class_name);
	workload_release(&w);
	json_decref(j);
	ck_assert_msg(fe.n == 0, "%s", t_fe_text(&fe));
	field_errors_release(&fe);
}
END_TEST

/* ------------------------------------------------------------------ */
/* malformed input: one field error naming the field, never a crash */

static const struct bad_case {
	const char *name;
	enum kind kind;
	const char *json;
	const char *path; /* an error must name exactly this path */
	const char *text; /* ... and some error must contain this */
} bad_cases[] = {
	{ "root is an array", KIND_CLUSTER_QUEUE, "[]", "ClusterQueue",
	  "ClusterQueue: Invalid value: \"array\": ClusterQueue in body must be of type object" },
	{ "root is null", KIND_WORKLOAD, "null", "Workload",
	  "Workload: Invalid value: \"null\"" },
	{ "kind mismatch", KIND_CLUSTER_QUEUE, "{\"kind\": \"LocalQueue\"}",
	  "kind", "kind: Unsupported value: \"LocalQueue\": supported values: \"ClusterQueue\"" },
	{ "unknown apiVersion", KIND_COHORT,
	  "{\"apiVersion\": \"kueue.x-k8s.io/v1\"}", "apiVersion",
	  "supported values: \"kueue.x-k8s.io/v1beta1\", \"kueue.x-k8s.io/v1beta2\"" },
	{ "metadata not an object", KIND_COHORT, "{\"metadata\": []}",
	  "metadata", "metadata in body must be of type object" },
	{ "generation as string", KIND_COHORT,
	  "{\"metadata\": {\"generation\": \"1\"}}", "metadata.generation",
	  "metadata.generation: Invalid value: \"string\": metadata.generation in body must be of type integer" },
	{ "bad creationTimestamp", KIND_COHORT,
	  "{\"metadata\": {\"creationTimestamp\": \"yesterday\"}}",
	  "metadata.creationTimestamp", "Invalid value: \"yesterday\"" },
	{ "label value not a string", KIND_LOCAL_QUEUE,
	  "{\"metadata\": {\"labels\": {\"a\": 1}}}", "metadata.labels[a]",
	  "must be of type string" },
	{ "finalizer not a string", KIND_CLUSTER_QUEUE,
	  "{\"metadata\": {\"finalizers\": [\"a\", {}]}}",
	  "metadata.finalizers[1]", "must be of type string" },
	{ "ownerReferences item", KIND_WORKLOAD,
	  "{\"metadata\": {\"ownerReferences\": [{\"controller\": \"yes\"}]}}",
	  "metadata.ownerReferences[0].controller", "must be of type boolean" },
	{ "cohort as integer", KIND_CLUSTER_QUEUE, "{\"spec\": {\"cohort\": 5}}",
	  "spec.cohort",
	  "spec.cohort: Invalid value: \"integer\": spec.cohort in body must be of type string" },
	{ "resourceGroups as object", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"resourceGroups\": {}}}", "spec.resourceGroups",
	  "must be of type array" },
	{ "null resource group", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"resourceGroups\": [null]}}", "spec.resourceGroups[0]",
	  "spec.resourceGroups[0]: Invalid value: \"null\": spec.resourceGroups[0] in body must be of type object" },
	{ "covered resource not a string", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"resourceGroups\": [{\"coveredResources\": [1]}]}}",
	  "spec.resourceGroups[0].coveredResources[0]", "must be of type string" },
	{ "quantity 1.5.5", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"resourceGroups\": [{\"flavors\": [{\"name\": \"a\", \"resources\": [{\"name\": \"cpu\", \"nominalQuota\": 1}]},"
	  " {\"name\": \"b\", \"resources\": [{\"name\": \"cpu\", \"nominalQuota\": \"1.5.5\"}]}]}]}}",
	  "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota",
	  "spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: Invalid value: \"1.5.5\"" },
	{ "quantity --1", KIND_COHORT,
	  "{\"spec\": {\"resourceGroups\": [{\"flavors\": [{\"resources\": [{\"nominalQuota\": \"--1\"}]}]}]}}",
	  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
	  "Invalid value: \"--1\"" },
	{ "quantity 9999999999999999999Ei", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"resourceGroups\": [{\"flavors\": [{\"resources\": [{\"nominalQuota\": 1, \"borrowingLimit\": \"9999999999999999999Ei\"}]}]}]}}",
	  "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit",
	  "Invalid value: \"9999999999999999999Ei\"" },
	{ "quantity 1e300 as a JSON number", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"resourceGroups\": [{\"flavors\": [{\"resources\": [{\"nominalQuota\": 1e300}]}]}]}}",
	  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
	  "nominalQuota: Invalid value: 1e300" },
	{ "quantity as boolean", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"resourceGroups\": [{\"flavors\": [{\"resources\": [{\"nominalQuota\": true}]}]}]}}",
	  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
	  "must be of type string" },
	{ "nominalQuota missing", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"resourceGroups\": [{\"flavors\": [{\"resources\": [{\"name\": \"cpu\"}]}]}]}}",
	  "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
	  "nominalQuota: Required value" },
	{ "v1beta1 whenCanPreempt Borrow", KIND_CLUSTER_QUEUE,
	  "{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"spec\": {\"flavorFungibility\": {\"whenCanPreempt\": \"Borrow\"}}}",
	  "spec.flavorFungibility.whenCanPreempt",
	  "spec.flavorFungibility.whenCanPreempt: Unsupported value: \"Borrow\": supported values: \"MayStopSearch\", \"TryNextFlavor\", \"Preempt\"" },
	{ "v1beta1 whenCanBorrow Preempt", KIND_CLUSTER_QUEUE,
	  "{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"spec\": {\"flavorFungibility\": {\"whenCanBorrow\": \"Preempt\"}}}",
	  "spec.flavorFungibility.whenCanBorrow",
	  "Unsupported value: \"Preempt\": supported values: \"MayStopSearch\", \"TryNextFlavor\", \"Borrow\"" },
	{ "v1beta2 whenCanBorrow Borrow", KIND_CLUSTER_QUEUE,
	  "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"spec\": {\"flavorFungibility\": {\"whenCanBorrow\": \"Borrow\"}}}",
	  "spec.flavorFungibility.whenCanBorrow",
	  "Unsupported value: \"Borrow\": supported values: \"MayStopSearch\", \"TryNextFlavor\"" },
	{ "v1beta2 bad preference", KIND_CLUSTER_QUEUE,
	  "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"spec\": {\"flavorFungibility\": {\"preference\": \"Both\"}}}",
	  "spec.flavorFungibility.preference",
	  "supported values: \"BorrowingOverPreemption\", \"PreemptionOverBorrowing\"" },
	{ "bad queueingStrategy", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"queueingStrategy\": \"LIFO\"}}", "spec.queueingStrategy",
	  "supported values: \"StrictFIFO\", \"BestEffortFIFO\"" },
	{ "bad selector operator", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"namespaceSelector\": {\"matchExpressions\": [{\"key\": \"a\", \"operator\": \"Gt\"}]}}}",
	  "spec.namespaceSelector.matchExpressions[0].operator",
	  "supported values: \"In\", \"NotIn\", \"Exists\", \"DoesNotExist\"" },
	{ "threshold beyond int32", KIND_CLUSTER_QUEUE,
	  "{\"spec\": {\"preemption\": {\"borrowWithinCohort\": {\"maxPriorityThreshold\": 3000000000}}}}",
	  "spec.preemption.borrowWithinCohort.maxPriorityThreshold",
	  "Invalid value: 3000000000: must be between -2147483648 and 2147483647, inclusive" },
	{ "v1beta2 bad migration mode", KIND_CLUSTER_QUEUE,
	  "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"spec\": {\"concurrentAdmissionPolicy\": {\"migration\": {\"mode\": \"Never\"}}}}",
	  "spec.concurrentAdmissionPolicy.migration.mode",
	  "supported values: \"TryPreferredFlavors\", \"RetainFirstAdmission\"" },
	{ "status counter as string", KIND_CLUSTER_QUEUE,
	  "{\"status\": {\"pendingWorkloads\": \"2\"}}", "status.pendingWorkloads",
	  "must be of type integer" },
	{ "condition status Yes", KIND_CLUSTER_QUEUE,
	  "{\"status\": {\"conditions\": [{\"type\": \"Active\", \"status\": \"Yes\"}]}}",
	  "status.conditions[0].status",
	  "supported values: \"True\", \"False\", \"Unknown\"" },
	{ "usage total not a quantity", KIND_CLUSTER_QUEUE,
	  "{\"status\": {\"flavorsUsage\": [{\"name\": \"a\", \"resources\": [{\"name\": \"cpu\", \"total\": \"lots\"}]}]}}",
	  "status.flavorsUsage[0].resources[0].total", "Invalid value: \"lots\"" },
	{ "LocalQueue stopPolicy", KIND_LOCAL_QUEUE,
	  "{\"spec\": {\"stopPolicy\": \"Pause\"}}", "spec.stopPolicy",
	  "supported values: \"None\", \"Hold\", \"HoldAndDrain\"" },
	{ "LocalQueue fairSharing weight", KIND_LOCAL_QUEUE,
	  "{\"spec\": {\"fairSharing\": {\"weight\": \"1x\"}}}",
	  "spec.fairSharing.weight", "Invalid value: \"1x\"" },
	{ "taint effect", KIND_RESOURCE_FLAVOR,
	  "{\"spec\": {\"nodeTaints\": [{\"key\": \"a\", \"effect\": \"Sometimes\"}]}}",
	  "spec.nodeTaints[0].effect",
	  "supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"" },
	{ "taint without effect", KIND_RESOURCE_FLAVOR,
	  "{\"spec\": {\"nodeTaints\": [{\"key\": \"a\"}]}}",
	  "spec.nodeTaints[0].effect", "Required value" },
	{ "taint timeAdded", KIND_RESOURCE_FLAVOR,
	  "{\"spec\": {\"nodeTaints\": [{\"key\": \"a\", \"effect\": \"NoSchedule\", \"timeAdded\": \"noon\"}]}}",
	  "spec.nodeTaints[0].timeAdded", "must be of type date-time" },
	{ "toleration operator", KIND_RESOURCE_FLAVOR,
	  "{\"spec\": {\"tolerations\": [{\"key\": \"a\", \"operator\": \"Maybe\"}]}}",
	  "spec.tolerations[0].operator",
	  "Unsupported value: \"Maybe\": supported values: \"Equal\", \"Exists\"" },
	{ "toleration seconds", KIND_RESOURCE_FLAVOR,
	  "{\"spec\": {\"tolerations\": [{\"tolerationSeconds\": \"30\"}]}}",
	  "spec.tolerations[0].tolerationSeconds", "must be of type integer" },
	{ "nodeLabels not a map", KIND_RESOURCE_FLAVOR,
	  "{\"spec\": {\"nodeLabels\": \"a=b\"}}", "spec.nodeLabels",
	  "must be of type object" },
	{ "WPC value as string", KIND_WORKLOAD_PRIORITY_CLASS,
	  "{\"value\": \"high\"}", "value", "must be of type integer" },
	{ "WPC value beyond int32", KIND_WORKLOAD_PRIORITY_CLASS,
	  "{\"value\": 2147483648}", "value", "Invalid value: 2147483648" },
	{ "podSets not an array", KIND_WORKLOAD,
	  "{\"spec\": {\"podSets\": {\"name\": \"main\"}}}", "spec.podSets",
	  "must be of type array" },
	{ "template null", KIND_WORKLOAD,
	  "{\"spec\": {\"podSets\": [{\"name\": \"main\", \"template\": null}]}}",
	  "spec.podSets[0].template",
	  "spec.podSets[0].template: Invalid value: \"null\": spec.podSets[0].template in body must be of type object" },
	{ "template missing", KIND_WORKLOAD,
	  "{\"spec\": {\"podSets\": [{\"name\": \"main\"}]}}",
	  "spec.podSets[0].template", "spec.podSets[0].template: Required value" },
	{ "count as real", KIND_WORKLOAD,
	  "{\"spec\": {\"podSets\": [{\"count\": 1.5, \"template\": {}}]}}",
	  "spec.podSets[0].count", "Invalid value: \"number\"" },
	{ "active as string", KIND_WORKLOAD, "{\"spec\": {\"active\": \"yes\"}}",
	  "spec.active", "must be of type boolean" },
	{ "priorityClassSource", KIND_WORKLOAD,
	  "{\"spec\": {\"priorityClassSource\": \"mine\"}}",
	  "spec.priorityClassSource",
	  "supported values: \"kueue.x-k8s.io/workloadpriorityclass\", \"scheduling.k8s.io/priorityclass\", \"\"" },
	{ "priorityClassRef group/kind mismatch", KIND_WORKLOAD,
	  "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"spec\": {\"priorityClassRef\": {\"group\": \"scheduling.k8s.io\", \"kind\": \"WorkloadPriorityClass\", \"name\": \"a\"}}}",
	  "spec.priorityClassRef",
	  "only the PriorityClass kind is allowed for the scheduling.k8s.io group" },
	{ "priorityClassRef group", KIND_WORKLOAD,
	  "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"spec\": {\"priorityClassRef\": {\"group\": \"x\"}}}",
	  "spec.priorityClassRef.group",
	  "supported values: \"kueue.x-k8s.io\", \"scheduling.k8s.io\"" },
	{ "container request", KIND_WORKLOAD,
	  "{\"spec\": {\"podSets\": [{\"template\": {\"spec\": {\"containers\": [{\"name\": \"c\", \"resources\": {\"requests\": {\"cpu\": \"lots\"}}}]}}}]}}",
	  "spec.podSets[0].template.spec.containers[0].resources.requests[cpu]",
	  "Invalid value: \"lots\"" },
	{ "sidecar restartPolicy", KIND_WORKLOAD,
	  "{\"spec\": {\"podSets\": [{\"template\": {\"spec\": {\"initContainers\": [{\"restartPolicy\": \"Never\"}]}}}]}}",
	  "spec.podSets[0].template.spec.initContainers[0].restartPolicy",
	  "Unsupported value: \"Never\": supported values: \"Always\"" },
	{ "node affinity operator", KIND_WORKLOAD,
	  "{\"spec\": {\"podSets\": [{\"template\": {\"spec\": {\"affinity\": {\"nodeAffinity\": {\"requiredDuringSchedulingIgnoredDuringExecution\": {\"nodeSelectorTerms\": [{\"matchExpressions\": [{\"key\": \"a\", \"operator\": \"Near\"}]}]}}}}}}]}}",
	  "spec.podSets[0].template.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator",
	  "\"In\", \"NotIn\", \"Exists\", \"DoesNotExist\", \"Gt\", \"Lt\"" },
	{ "topologyRequest not an object", KIND_WORKLOAD,
	  "{\"spec\": {\"podSets\": [{\"template\": {}, \"topologyRequest\": []}]}}",
	  "spec.podSets[0].topologyRequest", "must be of type object" },
	{ "admission check state", KIND_WORKLOAD,
	  "{\"status\": {\"admissionChecks\": [{\"name\": \"a\", \"state\": \"Done\"}]}}",
	  "status.admissionChecks[0].state",
	  "supported values: \"Pending\", \"Ready\", \"Retry\", \"Rejected\"" },
	{ "requeueAt", KIND_WORKLOAD,
	  "{\"status\": {\"requeueState\": {\"requeueAt\": \"2026-13-01T00:00:00Z\"}}}",
	  "status.requeueState.requeueAt", "must be of type date-time" },
	{ "resourceUsage", KIND_WORKLOAD,
	  "{\"status\": {\"admission\": {\"clusterQueue\": \"q\", \"podSetAssignments\": [{\"resourceUsage\": {\"cpu\": []}}]}}}",
	  "status.admission.podSetAssignments[0].resourceUsage[cpu]",
	  "must be of type string" },
	{ "accumulated (sic) as string", KIND_WORKLOAD,
	  "{\"status\": {\"accumulatedPastExexcutionTimeSeconds\": \"5\"}}",
	  "status.accumulatedPastExexcutionTimeSeconds", "must be of type integer" },
	{ "Job apiVersion", KIND_JOB, "{\"apiVersion\": \"batch/v2\"}", "apiVersion",
	  "supported values: \"batch/v1\"" },
	{ "Job completionMode", KIND_JOB,
	  "{\"spec\": {\"completionMode\": \"Sparse\", \"template\": {}}}",
	  "spec.completionMode", "supported values: \"NonIndexed\", \"Indexed\"" },
	{ "Job parallelism", KIND_JOB,
	  "{\"spec\": {\"parallelism\": -3000000000, \"template\": {}}}",
	  "spec.parallelism", "Invalid value: -3000000000" },
	{ "Job status time", KIND_JOB,
	  "{\"status\": {\"startTime\": 17}}", "status.startTime",
	  "must be of type string" },
};

START_TEST(malformed)
{
	const struct bad_case *bc = &bad_cases[_i];
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *j = t_json(bc->json);

	ck_assert_msg(decode_any(bc->kind, j, &fe) == -1, "%s: accepted",
		      bc->name);
	ck_assert_msg(field_errors_has_path(&fe, bc->path),
		      "%s: no error at %s in: %s", bc->name, bc->path,
		      t_fe_text(&fe));
	ck_assert_fe(&fe, bc->text);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(every_error_is_collected)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct cluster_queue cq;
	json_t *j = t_json("{\"metadata\": {\"name\": 1},"
			   " \"spec\": {\"cohort\": [], \"stopPolicy\": \"Off\", \"resourceGroups\": [{\"flavors\":"
			   " [{\"name\": \"a\", \"resources\": [{\"name\": \"cpu\","
			   " \"nominalQuota\": \"x\"}]}]}]}}");

	fe_required(&fe, "earlier", NULL); /* errors already there stay */
	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), -1);
	ck_assert_uint_eq(fe.n, 5);
	ck_assert(field_errors_has_path(&fe, "metadata.name"));
	ck_assert(field_errors_has_path(&fe, "spec.cohort"));
	ck_assert(field_errors_has_path(&fe, "spec.stopPolicy"));
	ck_assert(field_errors_has_path(&fe, "spec.resourceGroups[0].flavors[0]"
					".resources[0].nominalQuota"));
	/* what could be read was read */
	ck_assert_str_eq(cq.groups[0].flavors[0].res[0].name, "cpu");
	cluster_queue_release(&cq);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(ten_megabyte_string)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct workload w;
	size_t n = 10 * 1024 * 1024;
	char *big = xmalloc(n);
	json_t *j = t_json("{\"spec\": {\"podSets\": [{\"template\": {\"spec\":"
			   " {\"containers\": [{\"name\": \"c\"}]}}}]}}");
	json_t *ps = json_array_get(json_object_get(json_object_get(j, "spec"),
						    "podSets"), 0);
	json_t *c = json_object_get(json_object_get(json_object_get(
		ps, "template"), "spec"), "containers");

	memset(big, 'x', n);
	json_object_set_new(json_object_get(j, "spec"), "queueName",
			    json_stringn(big, n));
	json_object_set_new(json_array_get(c, 0), "image",
			    json_stringn(big, n));
	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), -1);
	ck_assert_fe(&fe, "spec.queueName: Too long: may not be more than"
			  " 1048576 bytes");
	ck_assert(field_errors_has_path(
		&fe, "spec.podSets[0].template.spec.containers[0].image"));
	ck_assert_uint_eq(fe.n, 2); /* each reported once */
	ck_assert_ptr_null(w.queue_name);
	ck_assert_uint_lt(strlen(fe.v[0].text), 400);
	workload_release(&w);
	json_decref(j);
	free(big);
	field_errors_release(&fe);
}
END_TEST

/* A long multi-byte key is cut at 256 bytes in an error path; the cut
 * used to fall inside a character, leaving a path no JSON can carry. */
START_TEST(long_keys_cut_on_characters)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct resource_flavor rf;
	size_t n = 301;
	char *key = xmalloc(2 * n + 2);
	json_t *j = t_json("{\"spec\": {\"nodeLabels\": {}}}"), *s;

	key[0] = 'k'; /* odd: 256 falls inside a character */
	for (size_t i = 0; i < n; i++)
		memcpy(key + 1 + 2 * i, "\xc3\xa9", 2);
	key[1 + 2 * n] = '\0';
	json_object_set_new(json_object_get(json_object_get(j, "spec"),
					    "nodeLabels"), key, json_integer(1));
	json_object_set_new(json_object_get(j, "spec"), key, json_integer(1));
	ck_assert_int_eq(codec_decode_resource_flavor(j, &rf, &fe), -1);
	ck_assert_uint_eq(fe.n, 1);
	s = json_string(fe.v[0].text);
	ck_assert_msg(s != NULL, "not UTF-8: %s", fe.v[0].text);
	ck_assert(strstr(fe.v[0].text, "spec.nodeLabels[k\xc3\xa9") != NULL);
	json_decref(s);
	resource_flavor_release(&rf);
	json_decref(j);
	free(key);
	field_errors_release(&fe);
}
END_TEST

/* A chain of n nested objects {"a": {"a": ...}} (or arrays). */
static json_t *nest(size_t n, bool arrays)
{
	json_t *j = arrays ? json_array() : json_object();

	for (size_t i = 1; i < n; i++) {
		json_t *outer = arrays ? json_array() : json_object();

		if (arrays)
			json_array_append_new(outer, j);
		else
			json_object_set_new(outer, "a", j);
		j = outer;
	}
	return j;
}

START_TEST(deep_nesting)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct workload w;
	struct cluster_queue cq;
	json_t *j = t_json("{\"spec\": {}}");

	/* root = level 1, spec = 2, the chain starts at 3: 62 links end
	 * exactly at the limit of 64. */
	json_object_set_new(json_object_get(j, "spec"), "x", nest(62, false));
	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), 0);
	cluster_queue_release(&cq);
	json_object_set_new(json_object_get(j, "spec"), "x", nest(63, false));
	ck_assert_int_eq(codec_decode_cluster_queue(j, &cq, &fe), -1);
	cluster_queue_release(&cq);
	ck_assert_uint_eq(fe.n, 1);
	ck_assert_int_eq(fe.v[0].kind, FE_FORBIDDEN);
	ck_assert_fe(&fe, "Forbidden: nesting deeper than 64 levels is not"
			  " allowed");
	ck_assert_uint_eq(strlen(fe.v[0].path), strlen("spec.x") + 62 * 2);
	field_errors_release(&fe);
	json_decref(j);

	/* 10,000 levels of arrays in a pod template: rejected, no crash. */
	j = t_json("{\"spec\": {\"podSets\": [{\"template\": {}}]}}");
	json_object_set_new(json_array_get(json_object_get(
		json_object_get(j, "spec"), "podSets"), 0), "template",
		nest(10000, true));
	ck_assert_int_eq(codec_decode_workload(j, &w, &fe), -1);
	ck_assert_uint_eq(fe.n, 1);
	ck_assert(!strncmp(fe.v[0].path, "spec.podSets[0].template[0][0]", 30));
	workload_release(&w);
	json_decref(j);
	field_errors_release(&fe);
}
END_TEST

START_TEST(unparseable_numbers)
{
	json_error_t e;

	/* jansson refuses numbers beyond a double before the codec sees them:
	 * the webhook answers those with a parse error. */
	ck_assert_ptr_null(json_loads("{\"nominalQuota\": 1e400}", 0, &e));
	ck_assert_ptr_null(json_loads("{\"count\": 99999999999999999999}", 0,
				      &e));
	ck_assert_ptr_null(json_real(1e308 * 10));
}
END_TEST

/* ------------------------------------------------------------------ */

START_TEST(kinds)
{
	static const struct {
		const char *json;
		enum kind want;
	} cases[] = {
		{ "{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"kind\": \"ClusterQueue\"}",
		  KIND_CLUSTER_QUEUE },
		{ "{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Workload\"}",
		  KIND_WORKLOAD },
		{ "{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\"}", KIND_JOB },
		{ "{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"kind\": \"Job\"}",
		  KIND_UNKNOWN },
		{ "{\"apiVersion\": \"batch/v1\", \"kind\": \"Workload\"}", KIND_UNKNOWN },
		{ "{\"apiVersion\": \"kueue.x-k8s.io/v1beta1\", \"kind\": \"AdmissionCheck\"}",
		  KIND_UNKNOWN },
		{ "{\"kind\": \"Cohort\"}", KIND_UNKNOWN },
		{ "[]", KIND_UNKNOWN },
	};

	for (size_t i = 0; i < N(cases); i++) {
		json_t *j = t_json(cases[i].json);

		ck_assert_int_eq(codec_kind_of(j), cases[i].want);
		json_decref(j);
	}
	ck_assert_int_eq(codec_kind_of(NULL), KIND_UNKNOWN);
	ck_assert_str_eq(kind_name(KIND_WORKLOAD_PRIORITY_CLASS),
			 "WorkloadPriorityClass");
	ck_assert_str_eq(kind_name(KIND_UNKNOWN), "");
}
END_TEST

/* The object helpers the scheduler and the manager share. */
START_TEST(object_helpers)
{
	char buf[8], *k, longname[64];
	struct workload w = { 0 };

	k = object_key_buf(buf, sizeof(buf), "ns", "a");
	ck_assert_ptr_eq(k, buf);
	ck_assert_str_eq(k, "ns/a");
	k = object_key_buf(buf, sizeof(buf), NULL, NULL);
	ck_assert_str_eq(k, "/");
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	k = object_key_buf(buf, sizeof(buf), "ns", longname);
	ck_assert_ptr_ne(k, buf);
	ck_assert_uint_eq(strlen(k), 3 + strlen(longname));
	free(k);
	/* exactly fitting: "ns/abcd" is 7 bytes and its NUL */
	ck_assert_ptr_eq(object_key_buf(buf, sizeof(buf), "ns", "abcd"), buf);

	w.active = true;
	ck_assert(!workload_holds_quota(&w));
	conditions_set(&w.conds, "QuotaReserved", COND_TRUE, "QuotaReserved",
		       "", 1, 1000);
	ck_assert(!workload_holds_quota(&w)); /* no admission */
	w.has_admission = true;
	ck_assert(workload_holds_quota(&w));
	/* inactive: the quota stays until the reservation is cleared */
	w.active = false;
	ck_assert(workload_holds_quota(&w));
	w.active = true;
	conditions_set(&w.conds, "Finished", COND_TRUE, "Succeeded", "", 1,
		       2000);
	ck_assert(!workload_holds_quota(&w));
	w.has_admission = false;
	workload_release(&w);
}
END_TEST

Suite *codec_suite(void)
{
	Suite *s = suite_create("codec");
	TCase *tc = tcase_create("decode");

	tcase_add_loop_test(tc, decode_fixture, 0, (int)N(fixtures));
	tcase_add_test(tc, cluster_queue_v1beta1);
	tcase_add_test(tc, cluster_queue_v1beta2);
	tcase_add_test(tc, local_queue_both_versions);
	tcase_add_test(tc, flavor_cohort_wpc);
	tcase_add_test(tc, workload_v1beta1);
	tcase_add_test(tc, object_helpers);
	tcase_add_test(tc, workload_v1beta2);
	tcase_add_test(tc, job_and_pod_template);
	tcase_add_test(tc, pod_template_direct);
	tcase_add_test(tc, kinds);
	suite_add_tcase(s, tc);

	tc = tcase_create("defaults-and-versions");
	tcase_add_test(tc, crd_defaults);
	tcase_add_test(tc, version_field_names);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_loop_test(tc, malformed, 0, (int)N(bad_cases));
	tcase_add_test(tc, every_error_is_collected);
	tcase_add_test(tc, ten_megabyte_string);
	tcase_add_test(tc, long_keys_cut_on_characters);
	tcase_add_test(tc, deep_nesting);
	tcase_add_test(tc, unparseable_numbers);
	tcase_set_timeout(tc, 30);
	suite_add_tcase(s, tc);
	return s;
}
