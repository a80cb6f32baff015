/* Suite "goparse": Go's strconv.ParseInt (base 10, by bit size) and
 * ParseBool, as table tests against what Go returns. */
#include <stdint.h>
#include <stdlib.h>

#include "model/goparse.h"
#include "suites.h"
#include "test/support/support.h"

static const struct {
	const char *in;
	int bits;
	enum goparse_rc rc;
	int64_t want; /* when GOPARSE_OK */
} int_cases[] = {
	{ "0", 64, GOPARSE_OK, 0 },
	{ "42", 64, GOPARSE_OK, 42 },
	{ "+42", 64, GOPARSE_OK, 42 },
	{ "-42", 64, GOPARSE_OK, -42 },
	{ "007", 64, GOPARSE_OK, 7 },
	{ "9223372036854775807", 64, GOPARSE_OK, INT64_MAX },
	{ "-9223372036854775808", 64, GOPARSE_OK, INT64_MIN },
	{ "9223372036854775808", 64, GOPARSE_RANGE, 0 },
	{ "-9223372036854775809", 64, GOPARSE_RANGE, 0 },
	{ "99999999999999999999", 64, GOPARSE_RANGE, 0 },
	{ "99999999999999999999x", 64, GOPARSE_RANGE, 0 }, /* Go stops there */
	{ "2147483647", 32, GOPARSE_OK, INT32_MAX },
	{ "-2147483648", 32, GOPARSE_OK, INT32_MIN },
	{ "2147483648", 32, GOPARSE_RANGE, 0 },
	{ "-2147483649", 32, GOPARSE_RANGE, 0 },
	{ "3000000000x", 32, GOPARSE_SYNTAX, 0 }, /* below uint32 max: syntax */
	{ "", 64, GOPARSE_SYNTAX, 0 },
	{ "+", 64, GOPARSE_SYNTAX, 0 },
	{ "-", 64, GOPARSE_SYNTAX, 0 },
	{ " 1", 64, GOPARSE_SYNTAX, 0 },
	{ "1 ", 64, GOPARSE_SYNTAX, 0 },
	{ "1.0", 64, GOPARSE_SYNTAX, 0 },
	{ "0x10", 64, GOPARSE_SYNTAX, 0 },
	{ "1_000", 64, GOPARSE_SYNTAX, 0 },
	{ "--1", 64, GOPARSE_SYNTAX, 0 },
};

START_TEST(parse_int)
{
	int64_t v = 12345;
	enum goparse_rc rc = goparse_int(int_cases[_i].in, int_cases[_i].bits,
					 &v);

	ck_assert_msg(rc == int_cases[_i].rc, "\"%s\"/%d: rc %d",
		      int_cases[_i].in, int_cases[_i].bits, (int)rc);
	if (rc == GOPARSE_OK)
		ck_assert_int_eq(v, int_cases[_i].want);
	else
		ck_assert_int_eq(v, 12345); /* untouched on error */
}
END_TEST

START_TEST(parse_bool)
{
	static const char *const yes[] = { "1", "t", "T", "TRUE", "true",
					   "True" };
	static const char *const no[] = { "0", "f", "F", "FALSE", "false",
					  "False" };
	static const char *const bad[] = { "", "yes", "tRUE", "on", " true",
					   "2", "y" };
	bool b;

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		b = false;
		ck_assert(goparse_bool(yes[i], &b));
		ck_assert(b);
		ck_assert(goparse_bool(no[i], &b));
		ck_assert(!b);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!goparse_bool(bad[i], &b), "\"%s\"", bad[i]);
}
END_TEST

Suite *goparse_suite(void)
{
	Suite *s = suite_create("goparse");
	TCase *tc = tcase_create("strconv");

	tcase_add_loop_test(tc, parse_int, 0,
			    (int)(sizeof(int_cases) / sizeof(int_cases[0])));
	tcase_add_test(tc, parse_bool);
	suite_add_tcase(s, tc);
	return s;
}
