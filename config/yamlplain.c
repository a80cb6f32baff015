/*
 * yamlplain: go-yaml v2's resolve() for an untagged plain scalar (see
 * yamlplain.h). The one copy both YAML readers use.
 */
#include "config/yamlplain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

/* Go's strconv.ParseUint(s, 0, 64) on a string without underscores. */
static bool go_parse_uint(const char *s, size_t n, uint64_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;

	if (n == 0)
		return false;
	if (s[0] == '0') {
		char p = n >= 3 ? (char)(s[1] | 0x20) : 0;

		base = p == 'b' ? 2 : p == 'o' ? 8 : p == 'x' ? 16 : 8;
		s += base == 8 && p != 'o' ? 1 : 2;
		n -= base == 8 && p != 'o' ? 1 : 2;
	}
	for (size_t k = 0; k < n; k++) {
		char ch = s[k];
		unsigned dig;

		if (ch >= '0' && ch <= '9')
			dig = (unsigned)(ch - '0');
		else if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'f')
			dig = (unsigned)((ch | 0x20) - 'a' + 10);
		else
			return false;
		if (dig >= base)
			return false;
		if (v > (UINT64_MAX - dig) / base)
			return false;
		v = v * base + dig;
	}
	*out = v;
	return true;
}

/* Go's strconv.ParseInt(s, 0, 64) on a string without underscores. */
static bool go_parse_int(const char *s, size_t n, int64_t *out)
{
	bool neg = false;
	uint64_t u;

	if (n && (s[0] == '+' || s[0] == '-')) {
		neg = s[0] == '-';
		s++;
		n--;
	}
	if (!go_parse_uint(s, n, &u))
		return false;
	if (!neg && u > (uint64_t)INT64_MAX)
		return false;
	if (neg && u > (uint64_t)INT64_MAX + 1)
		return false;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return true;
}

static size_t skip_digits(const char *s, size_t n, size_t k)
{
	while (k < n && s[k] >= '0' && s[k] <= '9')
		k++;
	return k;
}

/* go-yaml's yamlStyleFloat:
 * ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool is_yaml_float(const char *s, size_t n)
{
	size_t k = 0, d;

	if (k < n && (s[k] == '+' || s[k] == '-'))
		k++;
	if (k < n && s[k] == '.') {
		d = skip_digits(s, n, k + 1);
		if (d == k + 1)
			return false;
		k = d;
	} else {
		d = skip_digits(s, n, k);
		if (d == k)
			return false;
		k = d;
		if (k < n && s[k] == '.')
			k = skip_digits(s, n, k + 1);
	}
	if (k < n && (s[k] == 'e' || s[k] == 'E')) {
		k++;
		if (k < n && (s[k] == '+' || s[k] == '-'))
			k++;
		d = skip_digits(s, n, k);
		if (d == k)
			return false;
		k = d;
	}
	return k == n;
}

/* strtod on a NUL-terminated copy; false when out of double's range, as
 * Go's ParseFloat reports ErrRange. */
static bool parse_double(const char *s, size_t n, double *out)
{
	char *z = xstrndup(s, n);
	double d = strtod(z, NULL);

	free(z);
	if (isinf(d))
		return false;
	*out = d;
	return true;
}

static const struct {
	const char *text;
	enum yamlplain_type type;
	bool b;
	double d;
} plain_table[] = {
#define T(t) { t, YAMLPLAIN_BOOL, true, 0 }
#define F(t) { t, YAMLPLAIN_BOOL, false, 0 }
#define NUL(t) { t, YAMLPLAIN_NULL, false, 0 }
#define FL(t, v) { t, YAMLPLAIN_FLOAT, false, v }
	T("y"), T("Y"), T("yes"), T("Yes"), T("YES"), T("true"), T("True"),
	T("TRUE"), T("on"), T("On"), T("ON"),
	F("n"), F("N"), F("no"), F("No"), F("NO"), F("false"), F("False"),
	F("FALSE"), F("off"), F("Off"), F("OFF"),
	NUL(""), NUL("~"), NUL("null"), NUL("Null"), NUL("NULL"),
	FL(".nan", NAN), FL(".NaN", NAN), FL(".NAN", NAN),
	FL(".inf", INFINITY), FL(".Inf", INFINITY), FL(".INF", INFINITY),
	FL("+.inf", INFINITY), FL("+.Inf", INFINITY), FL("+.INF", INFINITY),
	FL("-.inf", -INFINITY), FL("-.Inf", -INFINITY), FL("-.INF", -INFINITY),
#undef T
#undef F
#undef NUL
#undef FL
};

#define NPLAIN (sizeof(plain_table) / sizeof(plain_table[0]))

void yamlplain_resolve(const char *in, size_t n, struct yamlplain *out)
{
	char *plain;
	size_t pn = 0;
	char hint;

	memset(out, 0, sizeof(*out));
	out->type = YAMLPLAIN_STR;
	if (memchr(in, '\0', n))
		return;
	for (size_t k = 0; k < NPLAIN; k++) {
		if (strlen(plain_table[k].text) == n &&
		    !memcmp(plain_table[k].text, in, n)) {
			out->type = plain_table[k].type;
			out->b = plain_table[k].b;
			out->d = plain_table[k].d;
			return;
		}
	}
	hint = in[0];
	if (hint == '.') {
		if (is_yaml_float(in, n) && parse_double(in, n, &out->d))
			out->type = YAMLPLAIN_FLOAT;
		return;
	}
	if (!(hint == '+' || hint == '-' || (hint >= '0' && hint <= '9')))
		return;
	plain = xmalloc(n + 1);
	for (size_t k = 0; k < n; k++)
		if (in[k] != '_')
			plain[pn++] = in[k];
	plain[pn] = '\0';
	if (go_parse_int(plain, pn, &out->i))
		out->type = YAMLPLAIN_INT;
	else if (go_parse_uint(plain, pn, &out->u))
		out->type = YAMLPLAIN_UINT;
	else if (is_yaml_float(plain, pn) && parse_double(plain, pn, &out->d))
		out->type = YAMLPLAIN_FLOAT;
	free(plain);
}
