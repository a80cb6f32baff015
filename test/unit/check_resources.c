/*
 * Suite "resources": sorted resource lists, (flavor, resource) usage,
 * overflow reporting and Kueue's rendering of resource amounts.
 */
#include <stdint.h>
#include <string.h>

#include "model/quantity.h"
#include "model/resources.h"
#include "suites.h"
#include "test/support/support.h"

#define GI 1073741824000LL /* 1Gi in milli-units */

static void assert_sorted(const struct reslist *r)
{
	for (size_t i = 1; i < r->n; i++)
		ck_assert_msg(strcmp(r->v[i - 1].name, r->v[i].name) < 0,
			      "reslist not sorted at %zu: %s, %s", i,
			      r->v[i - 1].name, r->v[i].name);
}

static void assert_fr_sorted(const struct frlist *u)
{
	for (size_t i = 1; i < u->n; i++) {
		int c = strcmp(u->v[i - 1].flavor, u->v[i].flavor);

		if (c == 0)
			c = strcmp(u->v[i - 1].resource, u->v[i].resource);
		ck_assert_msg(c < 0, "frlist not sorted at %zu", i);
	}
}

START_TEST(reslist_basics)
{
	struct reslist r = RESLIST_INIT, c = RESLIST_INIT;

	reslist_set(&r, "nvidia.com/gpu", 2000);
	reslist_set(&r, "memory", GI);
	reslist_set(&r, "cpu", 1500);
	reslist_set(&r, "memory", 2 * GI);
	assert_sorted(&r);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_str_eq(r.v[0].name, "cpu");
	ck_assert_str_eq(r.v[1].name, "memory");
	ck_assert_str_eq(r.v[2].name, "nvidia.com/gpu");
	ck_assert_int_eq(reslist_get(&r, "memory"), 2 * GI);
	ck_assert_int_eq(reslist_get(&r, "pods"), 0);
	ck_assert(reslist_has(&r, "cpu"));
	ck_assert(!reslist_has(&r, "pods"));

	reslist_copy(&c, &r);
	ck_assert(reslist_equal(&c, &r));
	ck_assert_ptr_ne(c.v[0].name, r.v[0].name);
	reslist_copy(&c, &c);
	ck_assert(reslist_equal(&c, &r));

	ck_assert(reslist_del(&c, "memory"));
	ck_assert(!reslist_del(&c, "memory"));
	ck_assert_uint_eq(c.n, 2);
	assert_sorted(&c);
	ck_assert(!reslist_equal(&c, &r));
	/* copy replaces what dst held */
	reslist_copy(&c, &r);
	ck_assert_uint_eq(c.n, 3);
	reslist_release(&r);
	reslist_copy(&c, &r);
	ck_assert_uint_eq(c.n, 0);
	reslist_release(&c);
	reslist_release(&c);
}
END_TEST

START_TEST(reslist_equal_zero_is_absent)
{
	struct reslist a = RESLIST_INIT, b = RESLIST_INIT;

	ck_assert(reslist_equal(&a, &b));
	reslist_set(&a, "cpu", 1000);
	reslist_set(&a, "pods", 0);
	reslist_set(&b, "cpu", 1000);
	reslist_set(&b, "aaa", 0);
	reslist_set(&b, "zzz", 0);
	ck_assert(reslist_equal(&a, &b));
	ck_assert(reslist_equal(&b, &a));
	reslist_set(&b, "zzz", 1);
	ck_assert(!reslist_equal(&a, &b));
	ck_assert(!reslist_equal(&b, &a));
	reslist_set(&b, "zzz", 0);
	reslist_set(&b, "cpu", 999);
	ck_assert(!reslist_equal(&a, &b));
	reslist_release(&a);
	reslist_release(&b);
}
END_TEST

START_TEST(reslist_add_overflow)
{
	struct reslist r = RESLIST_INIT, s = RESLIST_INIT;
	struct err err = { "" };

	ck_assert_int_eq(reslist_add(&r, "memory", GI, &err), 0);
	ck_assert_int_eq(reslist_add(&r, "memory", GI, &err), 0);
	ck_assert_int_eq(reslist_add(&r, "cpu", -500, &err), 0);
	ck_assert_int_eq(reslist_get(&r, "memory"), 2 * GI);
	ck_assert_int_eq(reslist_get(&r, "cpu"), -500);
	ck_assert_str_eq(err.msg, "");

	reslist_set(&r, "cpu", INT64_MAX - 1);
	ck_assert_int_eq(reslist_add(&r, "cpu", 1, &err), 0);
	ck_assert_int_eq(reslist_get(&r, "cpu"), INT64_MAX);
	ck_assert_int_eq(reslist_add(&r, "cpu", 1, &err), -1);
	ck_assert_str_eq(err.msg, "resource cpu: 9223372036854775807 + 1 "
			 "overflows int64 milli-units");
	ck_assert_int_eq(reslist_get(&r, "cpu"), INT64_MAX);
	reslist_set(&r, "cpu", INT64_MIN);
	ck_assert_int_eq(reslist_add(&r, "cpu", -1, &err), -1);
	ck_assert_int_eq(reslist_get(&r, "cpu"), INT64_MIN);

	/* add_all checks everything first: dst is untouched on failure */
	reslist_set(&r, "cpu", 1000);
	reslist_set(&r, "zz", INT64_MAX);
	reslist_set(&s, "cpu", 500);
	reslist_set(&s, "pods", 3000);
	reslist_set(&s, "zz", 1);
	err.msg[0] = '\0';
	ck_assert_int_eq(reslist_add_all(&r, &s, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "resource zz:"));
	ck_assert_int_eq(reslist_get(&r, "cpu"), 1000);
	ck_assert(!reslist_has(&r, "pods"));
	reslist_del(&s, "zz");
	ck_assert_int_eq(reslist_add_all(&r, &s, &err), 0);
	ck_assert_int_eq(reslist_get(&r, "cpu"), 1500);
	ck_assert_int_eq(reslist_get(&r, "pods"), 3000);
	assert_sorted(&r);
	/* adding a list to itself doubles it */
	ck_assert_int_eq(reslist_add_all(&s, &s, &err), 0);
	ck_assert_int_eq(reslist_get(&s, "cpu"), 1000);
	ck_assert_int_eq(reslist_get(&s, "pods"), 6000);
	reslist_release(&r);
	reslist_release(&s);
}
END_TEST

START_TEST(reslist_max)
{
	struct reslist a = RESLIST_INIT, b = RESLIST_INIT;

	reslist_set(&a, "cpu", 1000);
	reslist_set(&a, "memory", 4 * GI);
	reslist_set(&b, "cpu", 2000);
	reslist_set(&b, "memory", GI);
	reslist_set(&b, "example.com/x", -5);
	reslist_max_all(&a, &b);
	assert_sorted(&a);
	ck_assert_uint_eq(a.n, 3);
	ck_assert_int_eq(reslist_get(&a, "cpu"), 2000);
	ck_assert_int_eq(reslist_get(&a, "memory"), 4 * GI);
	ck_assert_int_eq(reslist_get(&a, "example.com/x"), -5);
	reslist_release(&a);
	reslist_release(&b);
}
END_TEST

START_TEST(reslist_scale_overflow)
{
	struct reslist r = RESLIST_INIT;
	struct err err = { "" };

	reslist_set(&r, "cpu", 1500);
	reslist_set(&r, "memory", GI);
	ck_assert_int_eq(reslist_scale(&r, 4, &err), 0);
	ck_assert_int_eq(reslist_get(&r, "cpu"), 6000);
	ck_assert_int_eq(reslist_get(&r, "memory"), 4 * GI);
	ck_assert_int_eq(reslist_scale(&r, 1, &err), 0);
	ck_assert_int_eq(reslist_get(&r, "cpu"), 6000);

	/* 4Gi x 3 000 000 overflows; cpu would not: neither changes */
	ck_assert_int_eq(reslist_scale(&r, 3000000, &err), -1);
	ck_assert_str_eq(err.msg, "resource memory: 4294967296000 x 3000000 "
			 "overflows int64 milli-units");
	ck_assert_int_eq(reslist_get(&r, "cpu"), 6000);
	ck_assert_int_eq(reslist_get(&r, "memory"), 4 * GI);

	ck_assert_int_eq(reslist_scale(&r, 0, &err), 0);
	ck_assert_int_eq(reslist_get(&r, "cpu"), 0);
	ck_assert_int_eq(reslist_get(&r, "memory"), 0);
	ck_assert_uint_eq(r.n, 2);
	reslist_release(&r);
}
END_TEST

START_TEST(frlist_ordering)
{
	struct frlist u = FRLIST_INIT, c = FRLIST_INIT;
	struct err err = { "" };
	static const char *const want[][2] = {
		{ "on-demand", "cpu" },
		{ "on-demand", "memory" },
		{ "spot", "cpu" },
		{ "spot", "memory" },
		{ "spot", "nvidia.com/gpu" },
	};

	ck_assert_int_eq(frlist_add(&u, "spot", "memory", GI, &err), 0);
	ck_assert_int_eq(frlist_add(&u, "on-demand", "memory", GI, &err), 0);
	ck_assert_int_eq(frlist_add(&u, "spot", "nvidia.com/gpu", 1000, &err),
			 0);
	ck_assert_int_eq(frlist_add(&u, "spot", "cpu", 500, &err), 0);
	ck_assert_int_eq(frlist_add(&u, "on-demand", "cpu", 250, &err), 0);
	ck_assert_int_eq(frlist_add(&u, "spot", "cpu", 500, &err), 0);
	ck_assert_uint_eq(u.n, 5);
	assert_fr_sorted(&u);
	for (size_t i = 0; i < u.n; i++) {
		ck_assert_str_eq(u.v[i].flavor, want[i][0]);
		ck_assert_str_eq(u.v[i].resource, want[i][1]);
	}
	ck_assert_int_eq(frlist_get(&u, "spot", "cpu"), 1000);
	ck_assert_int_eq(frlist_get(&u, "spot", "pods"), 0);
	ck_assert_int_eq(frlist_get(&u, "reserved", "cpu"), 0);
	frlist_set(&u, "spot", "cpu", 7);
	ck_assert_int_eq(frlist_get(&u, "spot", "cpu"), 7);
	frlist_set(&u, "a", "z", 1);
	ck_assert_str_eq(u.v[0].flavor, "a");
	assert_fr_sorted(&u);

	frlist_copy(&c, &u);
	ck_assert_uint_eq(c.n, u.n);
	ck_assert_ptr_ne(c.v[0].flavor, u.v[0].flavor);
	for (size_t i = 0; i < u.n; i++)
		ck_assert_int_eq(c.v[i].milli, u.v[i].milli);
	frlist_copy(&c, &c);
	ck_assert_uint_eq(c.n, u.n);
	frlist_release(&u);
	frlist_release(&c);
	frlist_release(&c);
}
END_TEST

START_TEST(frlist_sub_clamps)
{
	struct frlist u = FRLIST_INIT, d = FRLIST_INIT;
	struct err err = { "" };

	frlist_set(&u, "f", "cpu", 1000);
	frlist_sub(&u, "f", "cpu", 400);
	ck_assert_int_eq(frlist_get(&u, "f", "cpu"), 600);
	frlist_sub(&u, "f", "cpu", 1000);
	ck_assert_int_eq(frlist_get(&u, "f", "cpu"), 0);
	frlist_sub(&u, "f", "cpu", INT64_MAX);
	ck_assert_int_eq(frlist_get(&u, "f", "cpu"), 0);
	/* releasing what was never used creates nothing */
	frlist_sub(&u, "g", "cpu", 5);
	ck_assert_uint_eq(u.n, 1);
	/* a negative release saturates instead of wrapping */
	frlist_set(&u, "f", "cpu", INT64_MAX - 1);
	frlist_sub(&u, "f", "cpu", -10);
	ck_assert_int_eq(frlist_get(&u, "f", "cpu"), INT64_MAX);

	frlist_set(&u, "f", "cpu", 3000);
	frlist_set(&u, "f", "memory", GI);
	frlist_set(&d, "f", "cpu", 1000);
	frlist_set(&d, "f", "memory", 2 * GI);
	frlist_set(&d, "g", "cpu", 1);
	frlist_sub_all(&u, &d);
	ck_assert_int_eq(frlist_get(&u, "f", "cpu"), 2000);
	ck_assert_int_eq(frlist_get(&u, "f", "memory"), 0);
	ck_assert_uint_eq(u.n, 2);
	ck_assert_int_eq(frlist_add_all(&u, &d, &err), 0);
	ck_assert_int_eq(frlist_get(&u, "f", "cpu"), 3000);
	ck_assert_int_eq(frlist_get(&u, "f", "memory"), 2 * GI);
	ck_assert_int_eq(frlist_get(&u, "g", "cpu"), 1);
	assert_fr_sorted(&u);
	frlist_release(&u);
	frlist_release(&d);
}
END_TEST

START_TEST(frlist_add_overflow)
{
	struct frlist u = FRLIST_INIT, d = FRLIST_INIT;
	struct err err = { "" };

	frlist_set(&u, "on-demand", "cpu", INT64_MAX);
	ck_assert_int_eq(frlist_add(&u, "on-demand", "cpu", 1, &err), -1);
	ck_assert_str_eq(err.msg, "flavor on-demand resource cpu: "
			 "9223372036854775807 + 1 overflows int64 milli-units");
	ck_assert_int_eq(frlist_get(&u, "on-demand", "cpu"), INT64_MAX);

	/* add_all is all or nothing */
	frlist_set(&d, "a", "cpu", 5);
	frlist_set(&d, "on-demand", "cpu", 1);
	err.msg[0] = '\0';
	ck_assert_int_eq(frlist_add_all(&u, &d, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "flavor on-demand resource cpu"));
	ck_assert_uint_eq(u.n, 1);
	ck_assert_int_eq(frlist_get(&u, "on-demand", "cpu"), INT64_MAX);
	frlist_release(&u);
	frlist_release(&d);
}
END_TEST

static const struct rf_case {
	const char *name;
	int64_t milli;
	const char *want;
} rf_cases[] = {
	{ "cpu", 1500, "1500m" },
	{ "cpu", 3000, "3" },
	{ "cpu", 0, "0" },
	{ "cpu", 100, "100m" },
	{ "cpu", 1, "1m" },
	{ "cpu", 1000000, "1k" },
	{ "cpu", 1024000, "1024" },
	{ "cpu", -500, "-500m" },
	{ "cpu", INT64_MAX, "9223372036854775807m" },
	{ "memory", GI, "1Gi" },
	{ "memory", 1536LL * 1048576 * 1000, "1536Mi" },
	{ "memory", 1024000, "1Ki" },
	{ "memory", 1025000, "1025" },
	{ "memory", 1000000, "1k" },      /* < 1024 bytes: decimal */
	{ "memory", 100000, "100" },
	{ "memory", 1500, "1500m" },      /* not whole: decimal */
	{ "memory", 0, "0" },
	{ "memory", INT64_MAX, "9223372036854775807m" },
	{ "memory", 9007199254740992000, "8Pi" },
	{ "memory", -2 * GI, "-2Gi" },
	{ "ephemeral-storage", 2 * GI, "2Gi" },
	{ "ephemeral-storage", 10000000000000, "9765625Ki" }, /* 10^10 */
	{ "hugepages-2Mi", 8LL * 1048576 * 1000, "8Mi" },
	{ "hugepages-1Gi", GI, "1Gi" },
	{ "hugepages", 1024000, "1024" }, /* no dash: not hugepages */
	{ "memoryx", 1024000, "1024" },
	{ "nvidia.com/gpu", 2000, "2" },
	{ "nvidia.com/gpu", 500, "500m" }, /* printed as given */
	{ "nvidia.com/gpu", 1024000, "1024" },
	{ "pods", 110000, "110" },
	{ "example.com/foo", 1000000, "1k" },
	{ "example.com/foo", -1500, "-1500m" },
};

#define NRF (sizeof(rf_cases) / sizeof(rf_cases[0]))

START_TEST(format_resource)
{
	const struct rf_case *c = &rf_cases[_i];
	char buf[QUANTITY_BUF];

	ck_assert_msg(strcmp(resource_format(c->name, c->milli, buf,
					     sizeof(buf)), c->want) == 0,
		      "%s %lld: got %s, want %s", c->name, (long long)c->milli,
		      buf, c->want);
}
END_TEST

/* Kueue's units: cpu in milli, the rest whole units rounded up. */
START_TEST(units)
{
	ck_assert_int_eq(resource_units_milli("cpu", 1), 1);
	ck_assert_int_eq(resource_units_milli("cpu", 1500), 1500);
	ck_assert_int_eq(resource_units_milli("memory", 500), 1000);
	ck_assert_int_eq(resource_units_milli("memory", 1000), 1000);
	ck_assert_int_eq(resource_units_milli("memory", 1001), 2000);
	ck_assert_int_eq(resource_units_milli("nvidia.com/gpu", 0), 0);
	ck_assert_int_eq(resource_units_milli("memory", -500), -1000);
	ck_assert_int_eq(resource_units_milli("memory", INT64_MAX), INT64_MAX);
	ck_assert_int_eq(resource_units_milli("memory", INT64_MIN), INT64_MIN);
}
END_TEST

Suite *resources_suite(void)
{
	Suite *s = suite_create("resources");
	TCase *tc = tcase_create("reslist");

	tcase_add_test(tc, reslist_basics);
	tcase_add_test(tc, reslist_equal_zero_is_absent);
	tcase_add_test(tc, reslist_add_overflow);
	tcase_add_test(tc, reslist_max);
	tcase_add_test(tc, reslist_scale_overflow);
	suite_add_tcase(s, tc);
	tc = tcase_create("frlist");
	tcase_add_test(tc, frlist_ordering);
	tcase_add_test(tc, frlist_sub_clamps);
	tcase_add_test(tc, frlist_add_overflow);
	suite_add_tcase(s, tc);
	tc = tcase_create("render");
	tcase_add_loop_test(tc, format_resource, 0, (int)NRF);
	suite_add_tcase(s, tc);
	tc = tcase_create("units");
	tcase_add_test(tc, units);
	suite_add_tcase(s, tc);
	return s;
}
