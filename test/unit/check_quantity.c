/*
 * Suite "quantity": resource.Quantity parsing, canonical strings and the
 * milli-unit helpers. Most cases come from the documented behaviour of
 * k8s.io/apimachinery's ParseQuantity/String (quantity_test.go), rewritten
 * for milli precision: a value finer than 1m rounds away from zero and is
 * printed from the rounded value ("5n" -> "1m").
 */
#include <stdint.h>
#include <string.h>

#include "model/quantity.h"
#include "suites.h"
#include "test/support/support.h"

#define DSI QF_DECIMAL_SI
#define BSI QF_BINARY_SI
#define DEX QF_DECIMAL_EXPONENT

static const struct good {
	const char *in;
	int64_t milli;
	enum qformat format;
	const char *canon; /* quantity_string of the parsed value */
} good[] = {
	/* zero, in every spelling, prints "0" */
	{ "0", 0, DSI, "0" },
	{ "0n", 0, DSI, "0" },
	{ "0u", 0, DSI, "0" },
	{ "0m", 0, DSI, "0" },
	{ "0k", 0, DSI, "0" },
	{ "0T", 0, DSI, "0" },
	{ "0Ki", 0, BSI, "0" },
	{ "0Mi", 0, BSI, "0" },
	{ "0Gi", 0, BSI, "0" },
	{ "0Ti", 0, BSI, "0" },
	{ "0.000Ei", 0, BSI, "0" },
	{ "-0", 0, DSI, "0" },
	{ "+0", 0, DSI, "0" },
	{ "-0.0", 0, DSI, "0" },
	{ "000", 0, DSI, "0" },
	{ "0e5", 0, DEX, "0" },
	{ "0e-99", 0, DEX, "0" },

	/* plain integers, as a JSON number would be written */
	{ "1", 1000, DSI, "1" },
	{ "9", 9000, DSI, "9" },
	{ "10", 10000, DSI, "10" },
	{ "100", 100000, DSI, "100" },
	{ "999", 999000, DSI, "999" },
	{ "1000", 1000000, DSI, "1k" },
	{ "1024", 1024000, DSI, "1024" },
	{ "2000", 2000000, DSI, "2k" },
	{ "1500000", 1500000000, DSI, "1500k" },
	{ "1000000", 1000000000, DSI, "1M" },
	{ "1234567", 1234567000, DSI, "1234567" },
	{ "123456789", 123456789000, DSI, "123456789" },
	{ "007", 7000, DSI, "7" },
	{ "-1", -1000, DSI, "-1" },
	{ "+1", 1000, DSI, "1" },
	{ "-5", -5000, DSI, "-5" },
	{ "-1000", -1000000, DSI, "-1k" },
	{ "1.0", 1000, DSI, "1" },
	{ "2.50", 2500, DSI, "2500m" },

	/* binary SI */
	{ "1Ki", 1024000, BSI, "1Ki" },
	{ "8Ki", 8192000, BSI, "8Ki" },
	{ "7Mi", 7340032000, BSI, "7Mi" },
	{ "6Gi", 6442450944000, BSI, "6Gi" },
	{ "5Ti", 5497558138880000, BSI, "5Ti" },
	{ "4Pi", 4503599627370496000, BSI, "4Pi" },
	{ "10Ti", 10995116277760000, BSI, "10Ti" },
	{ "100Gi", 107374182400000, BSI, "100Gi" },
	{ "1024Mi", 1073741824000, BSI, "1Gi" },
	{ "1536Mi", 1610612736000, BSI, "1536Mi" },
	{ "1.5Gi", 1610612736000, BSI, "1536Mi" },
	{ "-1.5Gi", -1610612736000, BSI, "-1536Mi" },
	{ "-1Ki", -1024000, BSI, "-1Ki" },
	{ "2048Ki", 2097152000, BSI, "2Mi" },
	{ "1025Ki", 1049600000, BSI, "1025Ki" },
	{ "0.5Mi", 524288000, BSI, "512Ki" },
	{ "0.5Ki", 512000, BSI, "512" },          /* < 1024: decimal */
	{ "0.999Ki", 1022976, BSI, "1022976m" },
	{ ".001Ki", 1024, BSI, "1024m" },
	{ "1.1Ki", 1126400, BSI, "1126400m" },    /* not whole: decimal */
	{ "100.035Ki", 102435840, BSI, "102435840m" },
	{ "0.05Gi", 53687091200, BSI, "53687091200m" },
	{ ".000001Ki", 2, DSI, "2m" },            /* |v| < 1 turns DecimalSI */
	{ "0.000000000001Ki", 1, DSI, "1m" },
	{ "1.000000000000000000000000000000000000000000000000001Ki", 1024001,
	  BSI, "1024001m" },
	{ "8191Ti", 9006099743113216000, BSI, "8191Ti" },
	{ "8192Ti", 9007199254740992000, BSI, "8Pi" },
	{ "8Pi", 9007199254740992000, BSI, "8Pi" },

	/* decimal SI */
	{ "1n", 1, DSI, "1m" },                   /* rounds up to 1m */
	{ "-1n", -1, DSI, "-1m" },                /* away from zero */
	{ "5n", 1, DSI, "1m" },
	{ "4u", 1, DSI, "1m" },
	{ "999999n", 1, DSI, "1m" },
	{ "1000000n", 1, DSI, "1m" },
	{ "1000001n", 2, DSI, "2m" },
	{ "3.001n", 1, DSI, "1m" },
	{ "3m", 3, DSI, "3m" },
	{ "100m", 100, DSI, "100m" },
	{ "1500m", 1500, DSI, "1500m" },
	{ "1000m", 1000, DSI, "1" },
	{ "2000m", 2000, DSI, "2" },
	{ "-1500m", -1500, DSI, "-1500m" },
	{ "8k", 8000000, DSI, "8k" },
	{ "50k", 50000000, DSI, "50k" },
	{ "7M", 7000000000, DSI, "7M" },
	{ "100M", 100000000000, DSI, "100M" },
	{ "1000M", 1000000000000, DSI, "1G" },
	{ "6G", 6000000000000, DSI, "6G" },
	{ "5T", 5000000000000000, DSI, "5T" },
	{ "40T", 40000000000000000, DSI, "40T" },
	{ "300T", 300000000000000000, DSI, "300T" },
	{ "2P", 2000000000000000000, DSI, "2P" },
	{ "9P", 9000000000000000000, DSI, "9P" },
	{ "9.2P", 9200000000000000000, DSI, "9200T" },

	/* fractions */
	{ "0.5", 500, DSI, "500m" },
	{ ".5", 500, DSI, "500m" },
	{ "5.", 5000, DSI, "5" },
	{ "1.", 1000, DSI, "1" },
	{ "1.5", 1500, DSI, "1500m" },
	{ "-.5", -500, DSI, "-500m" },
	{ "+.5", 500, DSI, "500m" },
	{ "1.G", 1000000000000, DSI, "1G" },
	{ "0.001", 1, DSI, "1m" },
	{ ".001", 1, DSI, "1m" },
	{ "0.005", 5, DSI, "5m" },
	{ "0.05", 50, DSI, "50m" },
	{ "0.50000", 500, DSI, "500m" },
	{ "0.00500", 5, DSI, "5m" },
	{ "0.0005k", 500, DSI, "500m" },
	{ ".0001k", 100, DSI, "100m" },
	{ "9.01", 9010, DSI, "9010m" },
	{ "8.1k", 8100000, DSI, "8100" },
	{ "7.123456M", 7123456000, DSI, "7123456" },
	{ "6.987654321G", 6987654321000, DSI, "6987654321" },
	{ "5.444T", 5444000000000000, DSI, "5444G" },
	{ "2.5P", 2500000000000000000, DSI, "2500T" },
	{ "100.035k", 100035000, DSI, "100035" },
	{ "10.035M", 10035000000, DSI, "10035k" },
	{ "1.0001", 1001, DSI, "1001m" },
	{ "0.1234567", 124, DSI, "124m" },
	{ "-0.1234567", -124, DSI, "-124m" },
	{ "0.0000000000000000000000000001", 1, DSI, "1m" },
	{ "1.0000000000000000000000000000000001", 1001, DSI, "1001m" },
	{ "0.0000000001", 1, DSI, "1m" },

	/* decimal exponents */
	{ "1e3", 1000000, DEX, "1e3" },
	{ "1E3", 1000000, DEX, "1e3" },
	{ "1E6", 1000000000, DEX, "1e6" },
	{ "1e9", 1000000000000, DEX, "1e9" },
	{ "1E12", 1000000000000000, DEX, "1e12" },
	{ "1e15", 1000000000000000000, DEX, "1e15" },
	{ "1e14", 100000000000000000, DEX, "100e12" },
	{ "1E-3", 1, DEX, "1e-3" },
	{ "12e-3", 12, DEX, "12e-3" },
	{ "80e-3", 80, DEX, "80e-3" },
	{ "1500e-3", 1500, DEX, "1500e-3" },
	{ "1000e-3", 1000, DEX, "1" },
	{ "5e+2", 500000, DEX, "500" },
	{ "1e0", 1000, DEX, "1" },
	{ "1e-0", 1000, DEX, "1" },
	{ "1e03", 1000000, DEX, "1e3" },
	{ "-1e3", -1000000, DEX, "-1e3" },
	{ "1.2e3", 1200000, DEX, "1200" },
	{ "1.5e3", 1500000, DEX, "1500" },
	{ "1.3E+6", 1300000000, DEX, "1300e3" },
	{ "1.40e9", 1400000000000, DEX, "1400e6" },
	{ "300e6", 300000000000, DEX, "300e6" },
	{ "0.5e0", 500, DEX, "500e-3" },
	{ "0.5e-1", 50, DEX, "50e-3" },
	{ "0.5e-2", 5, DEX, "5e-3" },
	{ "1.1E-9", 1, DEX, "1e-3" },
	{ "1e-9", 1, DEX, "1e-3" },
	{ "1e-1000", 1, DEX, "1e-3" },
	{ "0.000001e9", 1000000, DEX, "1e3" },

	/* int64 milli-unit boundaries */
	{ "9223372036854775807m", INT64_MAX, DSI, "9223372036854775807m" },
	{ "-9223372036854775808m", INT64_MIN, DSI, "-9223372036854775808m" },
	{ "9223372036854775.807", INT64_MAX, DSI, "9223372036854775807m" },
	{ "9223372036854775807000000n", INT64_MAX, DSI,
	  "9223372036854775807m" },
	{ "9223372036854775807e-3", INT64_MAX, DEX,
	  "9223372036854775807e-3" },
	{ "9223372036854775", 9223372036854775000, DSI, "9223372036854775" },
	{ "-9223372036854775", -9223372036854775000, DSI,
	  "-9223372036854775" },
	{ "00000000000000000000000000000000000001", 1000, DSI, "1" },
};

#define NGOOD (sizeof(good) / sizeof(good[0]))

START_TEST(parse_good)
{
	const struct good *c = &good[_i];
	struct err err = { "" };
	struct quantity q = { -7, QF_DECIMAL_EXPONENT };
	char buf[QUANTITY_BUF];

	ck_assert_msg(quantity_parse(c->in, &q, &err) == 0, "%s: %s", c->in,
		      err.msg);
	ck_assert_str_eq(err.msg, "");
	ck_assert_msg(q.milli == c->milli, "%s: milli %lld, want %lld", c->in,
		      (long long)q.milli, (long long)c->milli);
	ck_assert_msg(q.format == c->format, "%s: format %d, want %d", c->in,
		      (int)q.format, (int)c->format);
	ck_assert_str_eq(quantity_string(&q, buf, sizeof(buf)), c->canon);
}
END_TEST

/* The canonical string is exact: it parses back to the same value and
 * prints unchanged. */
START_TEST(canonical_round_trip)
{
	const struct good *c = &good[_i];
	struct err err = { "" };
	struct quantity q;
	char buf[QUANTITY_BUF];

	ck_assert_msg(quantity_parse(c->canon, &q, &err) == 0, "%s: %s",
		      c->canon, err.msg);
	ck_assert_msg(q.milli == c->milli, "%s: milli %lld, want %lld",
		      c->canon, (long long)q.milli, (long long)c->milli);
	ck_assert_str_eq(quantity_string(&q, buf, sizeof(buf)), c->canon);
}
END_TEST

static const struct bad {
	const char *in;
	const char *why; /* part of the message after the quoted input */
} bad[] = {
	{ "", "empty" },
	{ ".", "no digits" },
	{ "+", "no digits" },
	{ "-", "no digits" },
	{ "-.", "no digits" },
	{ "Ki", "no digits" },
	{ "Mi", "no digits" },
	{ "e3", "no digits" },
	{ "aoeu", "no digits" },
	{ "Infinity", "no digits" },
	{ "--1", "no digits" },
	{ "+-1", "no digits" },
	{ "-+1", "no digits" },
	{ " 1", "no digits" },
	{ "1 ", "invalid suffix" },
	{ "1 Ki", "invalid suffix" },
	{ "1\t", "invalid suffix" },
	{ "1KiB", "invalid suffix" },
	{ "1K", "invalid suffix" },
	{ "1ki", "invalid suffix" },
	{ "0.1mi", "invalid suffix" },
	{ "0.1am", "invalid suffix" },
	{ "1i", "invalid suffix" },
	{ ".5i", "invalid suffix" },
	{ "-3.01i", "invalid suffix" },
	{ "1Mi5", "invalid suffix" },
	{ "1x", "invalid suffix" },
	{ "0x10", "invalid suffix" },
	{ "1_000", "invalid suffix" },
	{ "1,5", "invalid suffix" },
	{ "1.5.5", "invalid suffix" },
	{ "1.1.M", "invalid suffix" },
	{ "1+1.0M", "invalid suffix" },
	{ "1..5", "invalid suffix" },
	{ "1e", "invalid suffix" },
	{ "\xd9\xa1", "no digits" },
	{ "1E+", "invalid exponent" },
	{ "1e-", "invalid exponent" },
	{ "-3.01e-", "invalid exponent" },
	{ "1e3e3", "invalid exponent" },
	{ "1e1.5", "invalid exponent" },
	{ "1Ee3", "invalid exponent" },
	{ "1e+-3", "invalid exponent" },
	{ "1e99999999999999999999", "invalid exponent" },
	{ "0e99999999999999999999", "invalid exponent" },
	/* out of int64 milli-units */
	{ "9223372036854775808m", "out of range" },
	{ "-9223372036854775809m", "out of range" },
	{ "9223372036854775807", "out of range" },
	{ "9223372036854776", "out of range" },
	{ "-9223372036854776", "out of range" },
	{ "9223372036854775807999999n", "out of range" },
	{ "9223372036854775.8071", "out of range" },
	{ "9999999999999999999Ei", "out of range" },
	{ "8Ei", "out of range" },
	{ "1Ei", "out of range" },
	{ "9Pi", "out of range" },
	{ "10P", "out of range" },
	{ "1E", "out of range" },
	{ "12E", "out of range" },
	{ "1e16", "out of range" },
	{ "1e1000", "out of range" },
	{ "100000000000000000000000000000000000", "out of range" },
};

#define NBAD (sizeof(bad) / sizeof(bad[0]))

START_TEST(parse_bad)
{
	const struct bad *c = &bad[_i];
	struct err err = { "" };
	struct quantity q = { 42, QF_BINARY_SI };

	ck_assert_msg(quantity_parse(c->in, &q, &err) == -1,
		      "\"%s\" parsed as %lld", c->in, (long long)q.milli);
	ck_assert_msg(strncmp(err.msg, "invalid quantity \"", 18) == 0,
		      "message: %s", err.msg);
	ck_assert_msg(strstr(err.msg, c->why) != NULL,
		      "\"%s\": message \"%s\" lacks \"%s\"", c->in, err.msg,
		      c->why);
	/* out is untouched on failure */
	ck_assert_int_eq(q.milli, 42);
	ck_assert_int_eq(q.format, QF_BINARY_SI);
}
END_TEST

START_TEST(error_names_input)
{
	struct err err = { "" };
	struct quantity q;
	char big[300];

	ck_assert_int_eq(quantity_parse("1KiB", &q, &err), -1);
	ck_assert_str_eq(err.msg, "invalid quantity \"1KiB\": invalid suffix");
	ck_assert_int_eq(quantity_parse("8Ei", &q, &err), -1);
	ck_assert_str_eq(err.msg, "invalid quantity \"8Ei\": out of range "
			 "(must fit in int64 milli-units)");
	/* control bytes are escaped, long inputs shortened */
	ck_assert_int_eq(quantity_parse("1\x01\"", &q, &err), -1);
	ck_assert_str_eq(err.msg,
			 "invalid quantity \"1\\x01\\\"\": invalid suffix");
	memset(big, '7', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ck_assert_int_eq(quantity_parse(big, &q, &err), -1);
	ck_assert_ptr_nonnull(strstr(err.msg, "...\": out of range"));
	ck_assert_uint_lt(strlen(err.msg), 200);
	ck_assert_int_eq(quantity_parse(NULL, &q, &err), -1);
	/* a NULL err is allowed */
	ck_assert_int_eq(quantity_parse("x", &q, NULL), -1);
}
END_TEST

/* Inputs far longer than any int64 still parse exactly, in linear time. */
START_TEST(long_inputs)
{
	static char s[200003];
	struct quantity q;
	struct err err = { "" };
	char buf[QUANTITY_BUF];

	/* "0.000...0001" with 200000 zeros rounds up to 1m */
	memset(s, '0', sizeof(s) - 1);
	s[1] = '.';
	s[sizeof(s) - 2] = '1';
	s[sizeof(s) - 1] = '\0';
	ck_assert_int_eq(quantity_parse(s, &q, &err), 0);
	ck_assert_int_eq(q.milli, 1);
	/* "1000...000e-200000" is exactly 1 */
	memset(s, '0', sizeof(s) - 1);
	s[0] = '1';
	strcpy(s + 190001, "e-190000");
	ck_assert_int_eq(quantity_parse(s, &q, &err), 0);
	ck_assert_int_eq(q.milli, 1000);
	ck_assert_str_eq(quantity_string(&q, buf, sizeof(buf)), "1");
}
END_TEST

static const struct fmt_case {
	int64_t milli;
	enum qformat format;
	const char *want;
} fmt_cases[] = {
	/* Kubernetes' TestQuantityString, TestMilliNewSet, TestNewSet */
	{ 1073741824000, BSI, "1Gi" },
	{ 314572800000, BSI, "300Mi" },
	{ 6144000, BSI, "6Ki" },
	{ 1074815565824000, BSI, "1001Gi" },
	{ 1099511627776000, BSI, "1Ti" },
	{ 5000, BSI, "5" },
	{ 500, BSI, "500m" },
	{ 1234567, BSI, "1234567m" },
	{ 1025000, BSI, "1025" },
	{ 1024, BSI, "1024m" },
	{ 1048576, BSI, "1048576m" },
	{ 1024000, BSI, "1Ki" },
	{ 1048576000, BSI, "1Mi" },
	{ -1024000, BSI, "-1Ki" },
	{ -1023000, BSI, "-1023" },
	{ 1000000, BSI, "1k" },
	{ 1000000000000, DSI, "1G" },
	{ 1, DSI, "1m" },
	{ 80, DSI, "80m" },
	{ 1080, DSI, "1080m" },
	{ 300000000000, DSI, "300M" },
	{ 1000000000000000, DSI, "1T" },
	{ 1234567000000000, DSI, "1234567M" },
	{ 3000000, DSI, "3k" },
	{ 1000, DSI, "1" },
	{ 1234000000, DSI, "1234k" },
	{ -9010, DSI, "-9010m" },
	{ 0, DSI, "0" },
	{ 0, BSI, "0" },
	{ 0, DEX, "0" },
	{ 1000000000000, DEX, "1e9" },
	{ 1, DEX, "1e-3" },
	{ 80, DEX, "80e-3" },
	{ 300000000000, DEX, "300e6" },
	{ 1000000000000000, DEX, "1e12" },
	{ 3000000, DEX, "3e3" },
	{ 1000000000, DEX, "1e6" },
	{ 1000, DEX, "1" },
	{ INT64_MAX, DSI, "9223372036854775807m" },
	{ INT64_MIN, DSI, "-9223372036854775808m" },
	{ INT64_MIN, BSI, "-9223372036854775808m" },
	{ INT64_MIN, DEX, "-9223372036854775808e-3" },
	{ 9000000000000000000, DSI, "9P" },
	{ 9007199254740992000, BSI, "8Pi" },
};

#define NFMT (sizeof(fmt_cases) / sizeof(fmt_cases[0]))

START_TEST(format_table)
{
	const struct fmt_case *c = &fmt_cases[_i];
	char buf[QUANTITY_BUF];
	struct quantity q = { c->milli, c->format };

	ck_assert_str_eq(quantity_format(c->milli, c->format, buf, sizeof(buf)),
			 c->want);
	ck_assert_str_eq(quantity_string(&q, buf, sizeof(buf)), c->want);
}
END_TEST

START_TEST(from_int)
{
	struct quantity q;
	struct err err = { "" };
	char buf[QUANTITY_BUF];

	ck_assert_int_eq(quantity_from_int(5, &q, &err), 0);
	ck_assert_int_eq(q.milli, 5000);
	ck_assert_int_eq(q.format, QF_DECIMAL_SI);
	ck_assert_str_eq(quantity_string(&q, buf, sizeof(buf)), "5");
	ck_assert_int_eq(quantity_from_int(0, &q, &err), 0);
	ck_assert_int_eq(q.milli, 0);
	ck_assert_int_eq(quantity_from_int(-3, &q, &err), 0);
	ck_assert_int_eq(q.milli, -3000);
	ck_assert_int_eq(quantity_from_int(1024, &q, &err), 0);
	ck_assert_str_eq(quantity_string(&q, buf, sizeof(buf)), "1024");
	ck_assert_int_eq(quantity_from_int(INT64_MAX / 1000, &q, &err), 0);
	ck_assert_int_eq(q.milli, 9223372036854775000);
	ck_assert_int_eq(quantity_from_int(INT64_MIN / 1000, &q, &err), 0);
	ck_assert_int_eq(q.milli, -9223372036854775000);
	ck_assert_str_eq(err.msg, "");
	ck_assert_int_eq(quantity_from_int(INT64_MAX / 1000 + 1, &q, &err), -1);
	ck_assert_str_eq(err.msg, "invalid quantity 9223372036854776: out of "
			 "range (must fit in int64 milli-units)");
	ck_assert_int_eq(quantity_from_int(INT64_MIN / 1000 - 1, &q, &err), -1);
	ck_assert_int_eq(quantity_from_int(INT64_MAX, &q, &err), -1);
	ck_assert_int_eq(q.milli, -9223372036854775000);
}
END_TEST

START_TEST(value_rounds_away_from_zero)
{
	ck_assert_int_eq(quantity_value(0), 0);
	ck_assert_int_eq(quantity_value(1), 1);
	ck_assert_int_eq(quantity_value(999), 1);
	ck_assert_int_eq(quantity_value(1000), 1);
	ck_assert_int_eq(quantity_value(1001), 2);
	ck_assert_int_eq(quantity_value(1500), 2);
	ck_assert_int_eq(quantity_value(-1), -1);
	ck_assert_int_eq(quantity_value(-1000), -1);
	ck_assert_int_eq(quantity_value(-1500), -2);
	ck_assert_int_eq(quantity_value(INT64_MAX), 9223372036854776);
	ck_assert_int_eq(quantity_value(INT64_MIN), -9223372036854776);
}
END_TEST

START_TEST(saturating)
{
	ck_assert_int_eq(milli_add_sat(1, 2), 3);
	ck_assert_int_eq(milli_add_sat(-5, 2), -3);
	ck_assert_int_eq(milli_add_sat(INT64_MAX, 1), INT64_MAX);
	ck_assert_int_eq(milli_add_sat(INT64_MAX, INT64_MAX), INT64_MAX);
	ck_assert_int_eq(milli_add_sat(INT64_MAX - 1, 1), INT64_MAX);
	ck_assert_int_eq(milli_add_sat(INT64_MAX, -1), INT64_MAX - 1);
	ck_assert_int_eq(milli_add_sat(INT64_MIN, -1), INT64_MIN);
	ck_assert_int_eq(milli_add_sat(INT64_MIN, INT64_MAX), -1);
	ck_assert_int_eq(milli_sub_sat(5, 3), 2);
	ck_assert_int_eq(milli_sub_sat(3, 5), -2);
	ck_assert_int_eq(milli_sub_sat(INT64_MIN, 1), INT64_MIN);
	ck_assert_int_eq(milli_sub_sat(INT64_MAX, -1), INT64_MAX);
	ck_assert_int_eq(milli_sub_sat(0, INT64_MIN), INT64_MAX);
	ck_assert_int_eq(milli_sub_sat(-1, INT64_MIN), INT64_MAX);
	ck_assert_int_eq(milli_sub_sat(-2, INT64_MAX), INT64_MIN);
	ck_assert_int_eq(milli_sub_sat(INT64_MAX, INT64_MAX), 0);
}
END_TEST

START_TEST(mul_count)
{
	struct err err = { "" };
	int64_t r = 0;

	ck_assert_int_eq(milli_mul_count(1500, 3, &r, &err), 0);
	ck_assert_int_eq(r, 4500);
	ck_assert_int_eq(milli_mul_count(-5, 3, &r, &err), 0);
	ck_assert_int_eq(r, -15);
	ck_assert_int_eq(milli_mul_count(INT64_MAX, 0, &r, &err), 0);
	ck_assert_int_eq(r, 0);
	ck_assert_int_eq(milli_mul_count(INT64_MAX / 2, 2, &r, &err), 0);
	ck_assert_int_eq(r, INT64_MAX - 1);
	ck_assert_int_eq(milli_mul_count(INT64_MAX, 1, &r, &err), 0);
	ck_assert_int_eq(r, INT64_MAX);
	ck_assert_str_eq(err.msg, "");
	ck_assert_int_eq(milli_mul_count(INT64_MAX, 2, &r, &err), -1);
	ck_assert_int_eq(r, INT64_MAX);
	ck_assert_str_eq(err.msg,
			 "9223372036854775807 x 2 overflows int64 milli-units");
	ck_assert_int_eq(milli_mul_count(INT64_MIN, -1, &r, &err), -1);
	ck_assert_int_eq(milli_mul_count(4611686018427387904, 2, &r, &err), -1);
}
END_TEST

Suite *quantity_suite(void)
{
	Suite *s = suite_create("quantity");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, parse_good, 0, (int)NGOOD);
	tcase_add_loop_test(tc, canonical_round_trip, 0, (int)NGOOD);
	tcase_add_test(tc, long_inputs);
	suite_add_tcase(s, tc);
	tc = tcase_create("reject");
	tcase_add_loop_test(tc, parse_bad, 0, (int)NBAD);
	tcase_add_test(tc, error_names_input);
	suite_add_tcase(s, tc);
	tc = tcase_create("canonical");
	tcase_add_loop_test(tc, format_table, 0, (int)NFMT);
	suite_add_tcase(s, tc);
	tc = tcase_create("arithmetic");
	tcase_add_test(tc, from_int);
	tcase_add_test(tc, value_rounds_away_from_zero);
	tcase_add_test(tc, saturating);
	tcase_add_test(tc, mul_count);
	suite_add_tcase(s, tc);
	return s;
}
