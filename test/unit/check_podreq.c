/*
 * Suite "podreq": per-pod requests of a template, as Kubernetes'
 * PodRequests computes them after Kueue's limits-as-requests step. Each
 * case is a plain struct pod_template built from a small table (no JSON).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/objects.h"
#include "model/podreq.h"
#include "suites.h"
#include "test/support/support.h"

#define GI (1073741824LL * 1000) /* 1Gi in milli-units */
#define MI (1048576LL * 1000)    /* 1Mi in milli-units */
#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

struct rq {
	const char *name; /* NULL ends a list */
	int64_t milli;
};

struct ctr {
	struct rq req[4];
	struct rq lim[4];
	bool sidecar;
};

struct podreq_case {
	const char *name;
	struct ctr containers[4];
	size_t ncontainers;
	struct ctr inits[4];
	size_t ninits;
	struct rq overhead[3];
	bool has_pod;
	struct rq pod_req[3];
	struct rq pod_lim[3];
	struct rq want[6]; /* exactly these entries, nothing else */
};

static void fill(struct reslist *r, const struct rq *v)
{
	for (; v->name; v++)
		reslist_set(r, v->name, v->milli);
}

static struct container_res *containers(const struct ctr *c, size_t n)
{
	struct container_res *v = n ? xcalloc(n, sizeof(*v)) : NULL;

	for (size_t i = 0; i < n; i++) {
		v[i].name = xasprintf("c%zu", i);
		fill(&v[i].requests, c[i].req);
		fill(&v[i].limits, c[i].lim);
		v[i].sidecar = c[i].sidecar;
	}
	return v;
}

static void build(struct pod_template *t, const struct podreq_case *c)
{
	memset(t, 0, sizeof(*t));
	t->containers = containers(c->containers, c->ncontainers);
	t->ncontainers = c->ncontainers;
	t->init_containers = containers(c->inits, c->ninits);
	t->ninit_containers = c->ninits;
	fill(&t->overhead, c->overhead);
	t->has_pod_resources = c->has_pod;
	fill(&t->pod_requests, c->pod_req);
	fill(&t->pod_limits, c->pod_lim);
}

static const struct podreq_case cases[] = {
	{
		.name = "empty template",
	},
	{
		.name = "one container",
		.containers = {
			{ .req = { { "cpu", 500 }, { "memory", GI } } },
		},
		.ncontainers = 1,
		.want = { { "cpu", 500 }, { "memory", GI } },
	},
	{
		.name = "containers are summed",
		.containers = {
			{ .req = { { "cpu", 500 }, { "memory", GI } } },
			{ .req = { { "cpu", 1500 },
				   { "nvidia.com/gpu", 1000 } } },
		},
		.ncontainers = 2,
		.want = { { "cpu", 2000 }, { "memory", GI },
			  { "nvidia.com/gpu", 1000 } },
	},
	{
		.name = "init container larger than the sum wins per resource",
		.containers = {
			{ .req = { { "cpu", 1000 }, { "memory", GI } } },
			{ .req = { { "cpu", 1000 } } },
		},
		.ncontainers = 2,
		.inits = {
			{ .req = { { "cpu", 3000 }, { "memory", 512 * MI } } },
			{ .req = { { "cpu", 500 },
				   { "example.com/dev", 2000 } } },
		},
		.ninits = 2,
		.want = { { "cpu", 3000 }, { "example.com/dev", 2000 },
			  { "memory", GI } },
	},
	{
		.name = "sidecars add to the sum and to later init containers",
		.containers = { { .req = { { "cpu", 1000 } } } },
		.ncontainers = 1,
		.inits = {
			{ .req = { { "cpu", 500 } }, .sidecar = true },
			{ .req = { { "cpu", 2000 } } },
			{ .req = { { "cpu", 250 } }, .sidecar = true },
		},
		.ninits = 3,
		/* sum 1 + 0.5 + 0.25 = 1.75; init #1 needs 2 + 0.5 = 2.5 */
		.want = { { "cpu", 2500 } },
	},
	{
		.name = "a later sidecar does not add to an init container",
		.containers = { { .req = { { "cpu", 1000 } } } },
		.ncontainers = 1,
		.inits = {
			{ .req = { { "cpu", 2000 } } },
			{ .req = { { "cpu", 1000 } }, .sidecar = true },
		},
		.ninits = 2,
		.want = { { "cpu", 2000 } },
	},
	{
		.name = "sidecars alone exceed the regular containers",
		.containers = { { .req = { { "memory", 100 * MI } } } },
		.ncontainers = 1,
		.inits = {
			{ .req = { { "memory", 200 * MI } }, .sidecar = true },
			{ .req = { { "memory", 300 * MI } }, .sidecar = true },
		},
		.ninits = 2,
		.want = { { "memory", 600 * MI } },
	},
	{
		.name = "overhead is added last",
		.containers = { { .req = { { "cpu", 1000 } } } },
		.ncontainers = 1,
		.inits = { { .req = { { "cpu", 4000 } } } },
		.ninits = 1,
		.overhead = { { "cpu", 250 }, { "memory", 100 * MI } },
		.want = { { "cpu", 4250 }, { "memory", 100 * MI } },
	},
	{
		.name = "limits stand in for missing requests",
		.containers = {
			{ .lim = { { "cpu", 2000 }, { "memory", GI } } },
			{ .req = { { "cpu", 1000 } },
			  .lim = { { "cpu", 3000 }, { "memory", 2 * GI } } },
		},
		.ncontainers = 2,
		.want = { { "cpu", 3000 }, { "memory", 3 * GI } },
	},
	{
		.name = "limits stand in for init containers too",
		.containers = { { .req = { { "cpu", 1000 } } } },
		.ncontainers = 1,
		.inits = {
			{ .lim = { { "cpu", 5000 } } },
			{ .lim = { { "cpu", 500 } }, .sidecar = true },
		},
		.ninits = 2,
		.want = { { "cpu", 5000 } },
	},
	{
		.name = "an explicit zero request is kept over the limit",
		.containers = { { .req = { { "cpu", 0 } },
				  .lim = { { "cpu", 2000 } } } },
		.ncontainers = 1,
		.want = { { "cpu", 0 } },
	},
	{
		.name = "pod-level requests override, overhead still added",
		.containers = {
			{ .req = { { "cpu", 1000 }, { "memory", GI } } },
		},
		.ncontainers = 1,
		.overhead = { { "cpu", 100 } },
		.has_pod = true,
		.pod_req = { { "cpu", 4000 } },
		.want = { { "cpu", 4100 }, { "memory", GI } },
	},
	{
		.name = "pod-level requests add resources",
		.containers = { { .req = { { "cpu", 1000 } } } },
		.ncontainers = 1,
		.has_pod = true,
		.pod_req = { { "hugepages-2Mi", 4 * MI },
			     { "memory", 2 * GI } },
		.want = { { "cpu", 1000 }, { "hugepages-2Mi", 4 * MI },
			  { "memory", 2 * GI } },
	},
	{
		.name = "pod-level gpu is ignored",
		.containers = { { .req = { { "nvidia.com/gpu", 1000 } } } },
		.ncontainers = 1,
		.has_pod = true,
		.pod_req = { { "nvidia.com/gpu", 8000 } },
		.want = { { "nvidia.com/gpu", 1000 } },
	},
	{
		.name = "pod-level requests need spec.resources",
		.containers = { { .req = { { "cpu", 1000 } } } },
		.ncontainers = 1,
		.pod_req = { { "cpu", 9000 } },
		.want = { { "cpu", 1000 } },
	},
	{
		/* Kubernetes defaults pod-level requests from limits only on
		 * Pods, never on templates, and Kueue reads the template. */
		.name = "pod-level limits do not stand in",
		.containers = { { .req = { { "cpu", 1000 } } } },
		.ncontainers = 1,
		.has_pod = true,
		.pod_lim = { { "cpu", 4000 }, { "memory", GI } },
		.want = { { "cpu", 1000 } },
	},
};

START_TEST(table)
{
	const struct podreq_case *c = &cases[_i];
	struct pod_template t;
	struct reslist got = RESLIST_INIT, want = RESLIST_INIT;
	struct err err = { "" };
	size_t nwant = 0;

	build(&t, c);
	fill(&want, c->want);
	for (const struct rq *w = c->want; w->name; w++)
		nwant++;
	reslist_set(&got, "stale", 1); /* out is released first */
	ck_assert_msg(pod_requests(&t, &got, &err) == 0, "%s: %s", c->name,
		      err.msg);
	ck_assert_msg(got.n == nwant, "%s: %zu resources, want %zu", c->name,
		      got.n, nwant);
	for (const struct rq *w = c->want; w->name; w++) {
		ck_assert_msg(reslist_has(&got, w->name), "%s: no %s", c->name,
			      w->name);
		ck_assert_msg(reslist_get(&got, w->name) == w->milli,
			      "%s: %s = %lld, want %lld", c->name, w->name,
			      (long long)reslist_get(&got, w->name),
			      (long long)w->milli);
	}
	ck_assert_str_eq(err.msg, "");
	reslist_release(&got);
	reslist_release(&want);
	pod_template_release(&t);
}
END_TEST

/* Each of these overflows int64 somewhere in the computation. */
static const struct podreq_case overflows[] = {
	{
		.name = "regular containers",
		.containers = {
			{ .req = { { "cpu", INT64_MAX } } },
			{ .req = { { "cpu", 1 } } },
		},
		.ncontainers = 2,
	},
	{
		.name = "limit standing in for a request",
		.containers = {
			{ .req = { { "cpu", INT64_MAX } } },
			{ .lim = { { "cpu", 1 } } },
		},
		.ncontainers = 2,
	},
	{
		.name = "sidecar added to the sum",
		.containers = { { .req = { { "memory", INT64_MAX - 5 } } } },
		.ncontainers = 1,
		.inits = { { .req = { { "memory", 10 } }, .sidecar = true } },
		.ninits = 1,
	},
	{
		.name = "init container plus earlier sidecars",
		.inits = {
			{ .req = { { "cpu", INT64_MAX / 2 + 1 } },
			  .sidecar = true },
			{ .req = { { "cpu", INT64_MAX / 2 + 1 } } },
		},
		.ninits = 2,
	},
	{
		.name = "overhead",
		.containers = { { .req = { { "cpu", INT64_MAX } } } },
		.ncontainers = 1,
		.overhead = { { "cpu", 1 } },
	},
	{
		.name = "overhead on top of pod-level requests",
		.containers = { { .req = { { "cpu", 1 } } } },
		.ncontainers = 1,
		.has_pod = true,
		.pod_req = { { "cpu", INT64_MAX } },
		.overhead = { { "cpu", 1 } },
	},
};

START_TEST(overflow)
{
	const struct podreq_case *c = &overflows[_i];
	struct pod_template t;
	struct reslist got = RESLIST_INIT;
	struct err err = { "" };

	build(&t, c);
	reslist_set(&got, "stale", 1);
	ck_assert_msg(pod_requests(&t, &got, &err) == -1, "%s: no error",
		      c->name);
	ck_assert_msg(err.msg[0] != '\0', "%s: empty message", c->name);
	ck_assert_uint_eq(got.n, 0);
	pod_template_release(&t);
	reslist_release(&got);
}
END_TEST

/* The input template is read, never changed (limits fill a copy). */
START_TEST(template_untouched)
{
	const struct podreq_case *c = &cases[8]; /* limits stand in */
	struct pod_template t;
	struct reslist got = RESLIST_INIT;
	struct err err = { "" };

	ck_assert_str_eq(c->name, "limits stand in for missing requests");
	build(&t, c);
	ck_assert_int_eq(pod_requests(&t, &got, &err), 0);
	ck_assert_uint_eq(t.containers[0].requests.n, 0);
	ck_assert_uint_eq(t.containers[1].requests.n, 1);
	reslist_release(&got);
	pod_template_release(&t);
}
END_TEST

Suite *podreq_suite(void)
{
	Suite *s = suite_create("podreq");
	TCase *tc = tcase_create("requests");

	tcase_add_loop_test(tc, table, 0, N(cases));
	tcase_add_test(tc, template_untouched);
	suite_add_tcase(s, tc);
	tc = tcase_create("overflow");
	tcase_add_loop_test(tc, overflow, 0, N(overflows));
	suite_add_tcase(s, tc);
	return s;
}
