/*
 * check_yamlplain: go-yaml v2's plain-scalar resolution (config/yamlplain.h),
 * one table of texts and what Go's yaml.v2 makes of them: the fixed table,
 * Go's ParseInt/ParseUint with base 0, ParseFloat's range, and the texts
 * that stay strings.
 */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "config/yamlplain.h"
#include "suites.h"
#include "test/support/support.h"

struct plain_case {
	const char *in;
	size_t n; /* 0: strlen(in) */
	enum yamlplain_type type;
	int64_t i;
	uint64_t u;
	double d;
	bool b;
};

static const struct plain_case cases[] = {
	{ "", 0, YAMLPLAIN_NULL, 0, 0, 0, false },
	{ "~", 0, YAMLPLAIN_NULL, 0, 0, 0, false },
	{ "Null", 0, YAMLPLAIN_NULL, 0, 0, 0, false },
	{ "nULL", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "yes", 0, YAMLPLAIN_BOOL, 0, 0, 0, true },
	{ "Off", 0, YAMLPLAIN_BOOL, 0, 0, 0, false },
	{ "TRUE", 0, YAMLPLAIN_BOOL, 0, 0, 0, true },
	{ "tRUE", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "0", 0, YAMLPLAIN_INT, 0, 0, 0, false },
	{ "-0b1", 0, YAMLPLAIN_INT, -1, 0, 0, false },
	{ "0x1F", 0, YAMLPLAIN_INT, 31, 0, 0, false },
	{ "0o17", 0, YAMLPLAIN_INT, 15, 0, 0, false },
	{ "017", 0, YAMLPLAIN_INT, 15, 0, 0, false },
	{ "1_000", 0, YAMLPLAIN_INT, 1000, 0, 0, false },
	{ "+12", 0, YAMLPLAIN_INT, 12, 0, 0, false },
	{ "-9223372036854775808", 0, YAMLPLAIN_INT, INT64_MIN, 0, 0, false },
	{ "9223372036854775808", 0, YAMLPLAIN_UINT, 0,
	  UINT64_C(9223372036854775808), 0, false },
	{ "18446744073709551616", 0, YAMLPLAIN_FLOAT, 0, 0,
	  18446744073709551616.0, false },
	{ "08", 0, YAMLPLAIN_FLOAT, 0, 0, 8, false }, /* not octal: a float */
	{ ".5", 0, YAMLPLAIN_FLOAT, 0, 0, 0.5, false },
	{ "-.5e3", 0, YAMLPLAIN_FLOAT, 0, 0, -500, false },
	{ "1e-400", 0, YAMLPLAIN_FLOAT, 0, 0, 0, false },
	{ "1e400", 0, YAMLPLAIN_STR, 0, 0, 0, false }, /* ParseFloat range */
	{ "-1e400", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "0x", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "0b", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "0x1p3", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "_1", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "1.2.3", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "2001-12-14", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "12abc", 0, YAMLPLAIN_STR, 0, 0, 0, false },
	{ "1\0002", 3, YAMLPLAIN_STR, 0, 0, 0, false }, /* a NUL inside */
	{ "123", 2, YAMLPLAIN_INT, 12, 0, 0, false },  /* not NUL-ended */
};

START_TEST(plain_table)
{
	const struct plain_case *c = &cases[_i];
	struct yamlplain p;

	yamlplain_resolve(c->in, c->n ? c->n : strlen(c->in), &p);
	ck_assert_msg(p.type == c->type, "%s: type %d, want %d", c->in,
		      (int)p.type, (int)c->type);
	switch (c->type) {
	case YAMLPLAIN_BOOL:
		ck_assert_int_eq(p.b, c->b);
		break;
	case YAMLPLAIN_INT:
		ck_assert_int_eq(p.i, c->i);
		break;
	case YAMLPLAIN_UINT:
		ck_assert_uint_eq(p.u, c->u);
		break;
	case YAMLPLAIN_FLOAT:
		ck_assert_double_eq(p.d, c->d);
		break;
	default:
		break;
	}
}
END_TEST

START_TEST(special_floats)
{
	struct yamlplain p;

	yamlplain_resolve(".NaN", 4, &p);
	ck_assert_int_eq(p.type, YAMLPLAIN_FLOAT);
	ck_assert(isnan(p.d));
	yamlplain_resolve("-.Inf", 5, &p);
	ck_assert_int_eq(p.type, YAMLPLAIN_FLOAT);
	ck_assert(isinf(p.d) && p.d < 0);
	yamlplain_resolve("+.INF", 5, &p);
	ck_assert(isinf(p.d) && p.d > 0);
}
END_TEST

Suite *yamlplain_suite(void)
{
	Suite *s = suite_create("yamlplain");
	TCase *tc = tcase_create("resolve");

	tcase_add_loop_test(tc, plain_table, 0,
			    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, special_floats);
	suite_add_tcase(s, tc);
	return s;
}
