/*
 * check_respolicy: Kueue's excludeResourcePrefixes and transformations
 * (model/respolicy.h) on per-pod requests, and through the scheduler: a
 * MIG profile counted against the quota it maps to.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "flavors/sched.h"
#include "model/objects.h"
#include "model/respolicy.h"
#include "model/resources.h"
#include "suites.h"
#include "test/unit/quota_spec.h"

#define GI(n) ((int64_t)(n) * INT64_C(1073741824) * 1000)
#define T0 INT64_C(1767225600000)

/* The requests "spec" after policy p, as "name=milli,..." (new). */
static char *applied(const struct res_policy *p, const char *spec)
{
	struct reslist rl = RESLIST_INIT;
	char *out = xstrdup(""), *n;

	spec_res(spec, &rl);
	res_policy_apply(p, &rl);
	for (size_t i = 0; i < rl.n; i++) {
		n = xasprintf("%s%s%s=%lld", out, i ? "," : "", rl.v[i].name,
			      (long long)rl.v[i].milli);
		free(out);
		out = n;
	}
	reslist_release(&rl);
	return out;
}

static void transform(struct res_policy *p, const char *input, bool replace,
		      const char *mul, const char *outputs)
{
	struct reslist o = RESLIST_INIT;

	if (outputs)
		spec_res(outputs, &o);
	res_policy_add_transform(p, input, replace, mul, &o);
	reslist_release(&o);
}

#define CHECK_APPLIED(p, spec, want)                          \
	do {                                                  \
		char *got_ = applied(p, spec);                \
		ck_assert_str_eq(got_, want);                 \
		free(got_);                                   \
	} while (0)

START_TEST(exclude_prefixes)
{
	struct res_policy p = RES_POLICY_INIT;

	ck_assert(res_policy_empty(&p));
	CHECK_APPLIED(&p, "cpu=1,example.com/x=2", "cpu=1000,example.com/x=2000");
	res_policy_add_exclude(&p, "example.com/");
	ck_assert(!res_policy_empty(&p));
	CHECK_APPLIED(&p, "cpu=1,example.com/x=2,example.org/y=3",
		      "cpu=1000,example.org/y=3000");
	res_policy_release(&p);
}
END_TEST

/* nvidia.com/mig-1g.10gb -> 10Gi of accelerator memory and 1 credit per
 * profile; Retain keeps the profile, Replace drops it. */
START_TEST(retain_and_replace)
{
	struct res_policy p = RES_POLICY_INIT;

	transform(&p, "nvidia.com/mig-1g.10gb", false, NULL,
		  "example.com/accelerator-memory=10Gi,example.com/credits=1");
	CHECK_APPLIED(&p, "cpu=1,nvidia.com/mig-1g.10gb=2",
		      "cpu=1000,example.com/accelerator-memory=21474836480000,"
		      "example.com/credits=2000,nvidia.com/mig-1g.10gb=2000");
	transform(&p, "nvidia.com/mig-1g.10gb", true, NULL,
		  "example.com/accelerator-memory=10Gi");
	ck_assert_uint_eq(p.ntr, 1); /* the same input: replaced */
	CHECK_APPLIED(&p, "nvidia.com/mig-1g.10gb=2",
		      "example.com/accelerator-memory=21474836480000");
	/* Replace with no outputs: the input is ignored */
	transform(&p, "example.com/ignored", true, NULL, NULL);
	CHECK_APPLIED(&p, "cpu=500m,example.com/ignored=7", "cpu=500");
	res_policy_release(&p);
}
END_TEST

/* Outputs add to what the pod asks under the same name; multiplyBy
 * scales the outputs by another request (not the retained input). */
START_TEST(sum_and_multiply)
{
	struct res_policy p = RES_POLICY_INIT, q = RES_POLICY_INIT;

	transform(&p, "example.com/vgpu-memory", false, "nvidia.com/vgpu",
		  "memory=1");
	transform(&p, "example.com/bundle", true, NULL, "memory=1Gi,cpu=2");
	CHECK_APPLIED(&p, "example.com/vgpu-memory=4,nvidia.com/vgpu=3",
		      "example.com/vgpu-memory=4000,memory=12000,"
		      "nvidia.com/vgpu=3000");
	/* no multiplyBy request: the input alone */
	CHECK_APPLIED(&p, "example.com/vgpu-memory=4", "example.com/vgpu-memory=4000,"
		      "memory=4000");
	CHECK_APPLIED(&p, "cpu=1,memory=1Gi,example.com/bundle=2",
		      "cpu=5000,memory=3221225472000");
	/* an excluded multiplyBy does not multiply */
	res_policy_add_exclude(&p, "nvidia.com/");
	CHECK_APPLIED(&p, "example.com/vgpu-memory=4,nvidia.com/vgpu=3",
		      "example.com/vgpu-memory=4000,memory=4000");
	/* saturation, and the copy behaves the same */
	res_policy_copy(&q, &p);
	CHECK_APPLIED(&q, "example.com/bundle=9000000000000000",
		      "cpu=9223372036854775807,memory=9223372036854775807");
	res_policy_release(&p);
	res_policy_release(&q);
}
END_TEST

/* Through the scheduler: a MIG profile is counted as the credits it maps
 * to, so a queue with 3 credits admits three 1-profile pods and not the
 * fourth. */
START_TEST(sched_counts_transformed)
{
	struct res_policy p = RES_POLICY_INIT;
	struct sched_opts o;
	struct sched *s;
	struct resource_flavor rf;
	struct cluster_queue cq;
	struct workload w[4];
	struct sched_decisions d = { 0 };
	size_t nadm;

	transform(&p, "nvidia.com/mig-1g.10gb", true, NULL,
		  "example.com/credits=1");
	sched_opts_default(&o);
	o.res_policy = &p;
	s = sched_new(&o);
	memset(&rf, 0, sizeof(rf));
	rf.meta.name = xstrdup("mig");
	sched_flavor_set(s, &rf);
	memset(&cq, 0, sizeof(cq));
	cq.meta.name = xstrdup("q");
	cq.meta.uid = xstrdup("uid-q");
	cq.has_ns_selector = true;
	label_selector_init(&cq.ns_selector);
	spec_groups("mig:example.com/credits=3", &cq.groups, &cq.ngroups);
	sched_cq_set(s, &cq, NULL);
	for (int i = 0; i < 4; i++) {
		struct pod_set *ps;

		memset(&w[i], 0, sizeof(w[i]));
		w[i].meta.name = xasprintf("w%d", i);
		w[i].meta.namespace = xstrdup("ns");
		w[i].meta.uid = xasprintf("uid-w%d", i);
		w[i].meta.creation_ms = T0 + i;
		w[i].queue_name = xstrdup("lq");
		w[i].active = true;
		w[i].pod_sets = xcalloc(1, sizeof(*w[i].pod_sets));
		w[i].npod_sets = 1;
		ps = &w[i].pod_sets[0];
		ps->name = xstrdup("main");
		ps->count = 1;
		ps->tmpl.containers = xcalloc(1, sizeof(*ps->tmpl.containers));
		ps->tmpl.ncontainers = 1;
		ps->tmpl.containers[0].name = xstrdup("c");
		spec_res("nvidia.com/mig-1g.10gb=1",
			 &ps->tmpl.containers[0].requests);
		node_affinity_init(&ps->tmpl.affinity);
		sched_wl_set(s, &w[i], "q", "ns/lq");
	}
	nadm = sched_cycle(s, T0 + 1000, &d);
	ck_assert_uint_eq(nadm, 3);
	for (size_t i = 0; i < d.n; i++) {
		if (d.v[i].kind == DEC_ADMIT) {
			struct admission a = { 0 };

			sched_decision_admission(s, &d.v[i], &a);
			ck_assert_str_eq(smap_get(&a.psa[0].flavors,
						  "example.com/credits"),
					 "mig");
			ck_assert_ptr_null(smap_get(&a.psa[0].flavors,
						    "nvidia.com/mig-1g.10gb"));
			admission_release(&a);
		} else {
			ck_assert_int_eq(d.v[i].kind, DEC_PENDING);
			ck_assert_str_eq(d.v[i].wl->meta.name, "w3");
			ck_assert_str_eq(d.v[i].message,
					 "couldn't assign flavors to pod set "
					 "main: insufficient unused quota for "
					 "example.com/credits in flavor mig, 1 "
					 "more needed");
		}
	}
	ck_assert(sched_check(s));
	sched_decisions_release(&d);
	sched_free(s);
	for (int i = 0; i < 4; i++)
		workload_release(&w[i]);
	cluster_queue_release(&cq);
	resource_flavor_release(&rf);
	res_policy_release(&p);
}
END_TEST

Suite *respolicy_suite(void)
{
	Suite *s = suite_create("respolicy");
	TCase *tc = tcase_create("policy");

	tcase_add_test(tc, exclude_prefixes);
	tcase_add_test(tc, retain_and_replace);
	tcase_add_test(tc, sum_and_multiply);
	tcase_add_test(tc, sched_counts_transformed);
	suite_add_tcase(s, tc);
	return s;
}
