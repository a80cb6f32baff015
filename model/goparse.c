/*
 * goparse: strconv.ParseInt (base 10) and ParseBool (see goparse.h),
 * following Go's ParseUint/ParseInt step for step. jobwl.c, selector.c and
 * validate_job.c each used to carry their own version.
 */
#include "model/goparse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "base/alloc.h"

enum goparse_rc goparse_int(const char *s, int bits, int64_t *out)
{
	const char *p = s;
	bool neg = false;
	uint64_t n = 0, max, cutoff;

	if (bits < 1 || bits > 64)
		BUG("goparse_int: bad bit size %d", bits);
	/* ParseUint's maxVal for bitSize, and ParseInt's 1 << (bits - 1). */
	max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
	cutoff = (uint64_t)1 << (bits - 1);
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return GOPARSE_SYNTAX;
	for (; *p; p++) {
		unsigned d;

		if (*p < '0' || *p > '9')
			return GOPARSE_SYNTAX;
		d = (unsigned)(*p - '0');
		if (n > (max - d) / 10) /* n * 10 + d > max */
			return GOPARSE_RANGE;
		n = n * 10 + d;
	}
	if (neg ? n > cutoff : n >= cutoff)
		return GOPARSE_RANGE;
	*out = neg ? (n == cutoff ? -(int64_t)(cutoff - 1) - 1 : -(int64_t)n)
		   : (int64_t)n;
	return GOPARSE_OK;
}

static const struct {
	const char *text;
	bool value;
} bools[] = {
	{ "1", true }, { "t", true }, { "T", true }, { "TRUE", true },
	{ "true", true }, { "True", true },
	{ "0", false }, { "f", false }, { "F", false }, { "FALSE", false },
	{ "false", false }, { "False", false },
};

bool goparse_bool(const char *s, bool *out)
{
	for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
		if (!strcmp(s, bools[i].text)) {
			*out = bools[i].value;
			return true;
		}
	}
	return false;
}

void goparse_format_float(double f, char *buf, size_t n)
{
	char e[64], digits[32];
	int prec, exp10 = 0;
	size_t nd = 0, o = 0;
	const char *p;
	char out[96];

	if (!isfinite(f) || f == 0) {
		snprintf(buf, n, "%s", isnan(f) ? "NaN" : isinf(f) ?
			 (f > 0 ? "+Inf" : "-Inf") : signbit(f) ? "-0" : "0");
		return;
	}
	for (prec = 1; prec <= 17; prec++) {
		snprintf(e, sizeof(e), "%.*e", prec - 1, f);
		if (strtod(e, NULL) == f)
			break;
	}
	p = e + (*e == '-');
	for (; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9' && nd < sizeof(digits) - 1)
			digits[nd++] = *p;
	if (*p == 'e')
		exp10 = atoi(p + 1);
	while (nd > 1 && digits[nd - 1] == '0')
		nd--;
	if (f < 0)
		out[o++] = '-';
	if (exp10 < -4 || exp10 >= 6) {
		out[o++] = digits[0];
		if (nd > 1) {
			out[o++] = '.';
			memcpy(out + o, digits + 1, nd - 1);
			o += nd - 1;
		}
		o += (size_t)snprintf(out + o, sizeof(out) - o, "e%c%02d",
				      exp10 < 0 ? '-' : '+',
				      exp10 < 0 ? -exp10 : exp10);
	} else if (exp10 < 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (int i = -1; i > exp10; i--)
			out[o++] = '0';
		memcpy(out + o, digits, nd);
		o += nd;
	} else {
		for (int i = 0; i <= exp10; i++)
			out[o++] = (size_t)i < nd ? digits[i] : '0';
		if (nd > (size_t)exp10 + 1) {
			out[o++] = '.';
			memcpy(out + o, digits + exp10 + 1, nd - (size_t)exp10 - 1);
			o += nd - (size_t)exp10 - 1;
		}
	}
	out[o] = '\0';
	if (n) {
		size_t len = o < n - 1 ? o : n - 1;

		memcpy(buf, out, len);
		buf[len] = '\0';
	}
}
