/* Suite "errors": field error wording, aggregation, smap, timestamps. */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "model/errors.h"
#include "model/smap.h"
#include "model/timestamp.h"
#include "suites.h"
#include "test/support/support.h"

START_TEST(wording)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	static const char *const sup[] = { "Preempt", "TryNextFlavor", NULL };
	static const char *const want[] = {
		"spec.flavorFungibility.whenCanPreempt: Unsupported value: \"Borrow\": supported values: \"Preempt\", \"TryNextFlavor\"",
		"spec.resourceGroups: Required value",
		"spec.x: Invalid value: \"a\\\"b\": must be good",
		"spec.n: Invalid value: -1: must be greater than or equal to 0",
		"metadata.name: Too long: may not be more than 253 bytes",
		"spec.podSets: Too many: 9: must have at most 8 items",
		"spec.podSets[1].name: Duplicate value: \"main\"",
		"spec.f: Forbidden: not allowed",
	};

	fe_unsupported(&fe, "spec.flavorFungibility.whenCanPreempt", "Borrow", sup);
	fe_required(&fe, "spec.resourceGroups", NULL);
	fe_invalid(&fe, "spec.x", "a\"b", "must be good");
	fe_invalid_num(&fe, "spec.n", -1, "must be greater than or equal to 0");
	fe_too_long(&fe, "metadata.name", 253);
	fe_too_many(&fe, "spec.podSets", 9, 8);
	fe_duplicate(&fe, "spec.podSets[1].name", "main");
	fe_forbidden(&fe, "spec.f", "not allowed");
	ck_assert_uint_eq(fe.n, sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < fe.n; i++)
		ck_assert_str_eq(fe.v[i].text, want[i]);
	ck_assert(field_errors_has_path(&fe, "spec.n"));
	field_errors_release(&fe);
}
END_TEST

/* Supported values are %q-quoted like the offending one: they may be user
 * text (a Workload's pod set names), and were printed raw. */
START_TEST(unsupported_values_are_quoted)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	static const char *const sup[] = { "main", "a\"b", NULL };

	fe_unsupported(&fe, "status.reclaimablePods[x].name", "x", sup);
	ck_assert_str_eq(fe.v[0].text,
			 "status.reclaimablePods[x].name: Unsupported value: "
			 "\"x\": supported values: \"main\", \"a\\\"b\"");
	field_errors_release(&fe);
}
END_TEST

START_TEST(aggregate)
{
	struct field_errors fe = FIELD_ERRORS_INIT, more = FIELD_ERRORS_INIT;
	char *s = field_errors_aggregate(&fe);

	ck_assert_str_eq(s, "");
	free(s);
	fe_required(&fe, "a", NULL);
	s = field_errors_aggregate(&fe);
	ck_assert_str_eq(s, "a: Required value");
	free(s);
	fe_required(&more, "b", "needed");
	field_errors_take_all(&fe, &more);
	ck_assert_uint_eq(more.n, 0);
	s = field_errors_aggregate(&fe);
	ck_assert_str_eq(s, "[a: Required value, b: Required value: needed]");
	free(s);
	field_errors_release(&fe);
}
END_TEST

START_TEST(long_values_are_cut)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	size_t n = 10 * 1024 * 1024;
	char *big = xmalloc(n + 1);

	memset(big, 'x', n);
	big[n] = '\0';
	fe_invalid(&fe, "spec.queueName", big, "bad");
	ck_assert_uint_lt(strlen(fe.v[0].text), 400);
	free(big);
	field_errors_release(&fe);
}
END_TEST

/* True when jansson (and so the webhook's JSON) accepts s as a string. */
static bool is_utf8(const char *s)
{
	json_t *j = json_string(s);

	json_decref(j);
	return j != NULL;
}

/* A 2-byte character; an odd number of leading bytes puts it across
 * every cut below. */
#define E_ACUTE "\xc3\xa9"

static char *repeat(const char *head, const char *unit, size_t n)
{
	size_t h = strlen(head), u = strlen(unit);
	char *s = xmalloc(h + u * n + 1);

	memcpy(s, head, h);
	for (size_t i = 0; i < n; i++)
		memcpy(s + h + i * u, unit, u);
	s[h + u * n] = '\0';
	return s;
}

START_TEST(utf8_trim)
{
	char a[] = "ab" E_ACUTE, b[] = "ab\xc3", c[] = "x\xe2\x82",
	     d[] = "x\xe2\x82\xac", e[] = "x\xf0\x9f\x98", f[] = "";

	ck_assert_uint_eq(utf8_trim_tail(a), 4);
	ck_assert_uint_eq(utf8_trim_tail(b), 2);
	ck_assert_str_eq(b, "ab");
	ck_assert_uint_eq(utf8_trim_tail(c), 1);
	ck_assert_uint_eq(utf8_trim_tail(d), 4);
	ck_assert_uint_eq(utf8_trim_tail(e), 1);
	ck_assert_uint_eq(utf8_trim_tail(f), 0);
}
END_TEST

/* Cut values, details and err messages used to end inside a character,
 * which no JSON string can carry: the denial lost its message. */
START_TEST(cuts_keep_utf8)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct err err = { "" };
	char *v = repeat("a", E_ACUTE, 400);

	fe_invalid(&fe, "spec.queueName", v, NULL);
	fe_invalid(&fe, "spec.queueName", "x", v);
	fe_required(&fe, "spec.x", v);
	for (size_t i = 0; i < fe.n; i++)
		ck_assert_msg(is_utf8(fe.v[i].text), "error %zu", i);
	err_set(&err, "bad: %s", v);
	ck_assert_uint_lt(strlen(err.msg), ERR_MAX);
	ck_assert(is_utf8(err.msg));
	err_set(&err, "b%s", v);
	ck_assert(is_utf8(err.msg));
	free(v);
	field_errors_release(&fe);
}
END_TEST

START_TEST(smap_sorted)
{
	struct smap m = SMAP_INIT, c = SMAP_INIT;

	smap_set(&m, "b", "2");
	smap_set(&m, "a", "1");
	smap_set(&m, "c", "3");
	smap_set(&m, "b", "22");
	ck_assert_uint_eq(m.n, 3);
	ck_assert_str_eq(m.v[0].key, "a");
	ck_assert_str_eq(smap_get(&m, "b"), "22");
	ck_assert_ptr_null(smap_get(&m, "zz"));
	smap_copy(&c, &m);
	smap_copy(&c, &c); /* onto itself: a no-op, not a free */
	ck_assert(smap_equal(&c, &m));
	ck_assert(smap_del(&c, "a"));
	ck_assert(!smap_del(&c, "a"));
	ck_assert(!smap_equal(&c, &m));
	smap_release(&m);
	smap_release(&c);
}
END_TEST

START_TEST(timestamps)
{
	int64_t ms;
	char buf[TIMESTAMP_BUF];

	ck_assert_int_eq(timestamp_parse("1970-01-01T00:00:00Z", &ms), 0);
	ck_assert_int_eq(ms, 0);
	ck_assert_int_eq(timestamp_parse("2026-11-30T06:00:01Z", &ms), 0);
	ck_assert_str_eq(timestamp_format(ms, buf, sizeof(buf)),
			 "2026-11-30T06:00:01Z");
	ck_assert_int_eq(timestamp_parse("2026-11-30T07:00:01.250+01:00", &ms), 0);
	ck_assert_str_eq(timestamp_format_micro(ms, buf, sizeof(buf)),
			 "2026-11-30T06:00:01.250000Z");
	ck_assert_int_eq(timestamp_parse("2024-02-29T23:59:59Z", &ms), 0);
	ck_assert_str_eq(timestamp_format(ms + 1000, buf, sizeof(buf)),
			 "2024-03-01T00:00:00Z");
	ck_assert_int_eq(timestamp_parse("2026-13-01T00:00:00Z", &ms), -1);
	ck_assert_int_eq(timestamp_parse("2026-11-30 06:00:00Z", &ms), -1);
	ck_assert_int_eq(timestamp_parse("2026-11-30T06:00:00", &ms), -1);
	ck_assert_int_eq(timestamp_parse("", &ms), -1);
}
END_TEST

/* Go's time.Parse refuses days past the month's end and leap seconds;
 * they used to be normalised into the next month/minute. */
START_TEST(timestamps_out_of_range)
{
	int64_t ms = 42;

	ck_assert_int_eq(timestamp_parse("2026-02-31T00:00:00Z", &ms), -1);
	ck_assert_int_eq(timestamp_parse("2025-02-29T00:00:00Z", &ms), -1);
	ck_assert_int_eq(timestamp_parse("2100-02-29T00:00:00Z", &ms), -1);
	ck_assert_int_eq(timestamp_parse("2026-04-31T00:00:00Z", &ms), -1);
	ck_assert_int_eq(timestamp_parse("2026-11-30T06:00:60Z", &ms), -1);
	ck_assert_int_eq(ms, 42);
	ck_assert_int_eq(timestamp_parse("2000-02-29T00:00:00Z", &ms), 0);
	ck_assert_int_eq(timestamp_parse("2026-12-31T23:59:59Z", &ms), 0);
}
END_TEST

/* Formatting any int64 is defined (it negated ms, overflowing on
 * INT64_MIN; UBSan aborts on that). */
START_TEST(timestamps_extremes)
{
	char buf[TIMESTAMP_BUF];

	ck_assert_str_eq(timestamp_format(-1, buf, sizeof(buf)),
			 "1969-12-31T23:59:59Z");
	ck_assert_str_eq(timestamp_format_micro(-1, buf, sizeof(buf)),
			 "1969-12-31T23:59:59.999000Z");
	ck_assert_str_eq(timestamp_format(-86400000, buf, sizeof(buf)),
			 "1969-12-31T00:00:00Z");
	timestamp_format(INT64_MIN, buf, sizeof(buf));
	timestamp_format(INT64_MAX, buf, sizeof(buf));
	timestamp_format_micro(INT64_MIN, buf, sizeof(buf));
	ck_assert(strlen(buf) > 0);
}
END_TEST

Suite *errors_suite(void)
{
	Suite *s = suite_create("errors");
	TCase *tc = tcase_create("field-errors");

	tcase_add_test(tc, wording);
	tcase_add_test(tc, unsupported_values_are_quoted);
	tcase_add_test(tc, aggregate);
	tcase_add_test(tc, long_values_are_cut);
	tcase_add_test(tc, utf8_trim);
	tcase_add_test(tc, cuts_keep_utf8);
	suite_add_tcase(s, tc);
	tc = tcase_create("smap");
	tcase_add_test(tc, smap_sorted);
	suite_add_tcase(s, tc);
	tc = tcase_create("timestamps");
	tcase_add_test(tc, timestamps);
	tcase_add_test(tc, timestamps_out_of_range);
	tcase_add_test(tc, timestamps_extremes);
	suite_add_tcase(s, tc);
	return s;
}
