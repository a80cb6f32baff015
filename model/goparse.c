/*
 * goparse: strconv.ParseInt (base 10) and ParseBool (see goparse.h),
 * following Go's ParseUint/ParseInt step for step. jobwl.c, selector.c and
 * validate_job.c each used to carry their own version.
 */
#include "model/goparse.h"

#include <string.h>

#include "model/alloc.h"

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
