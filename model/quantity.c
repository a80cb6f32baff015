/*
 * quantity: resource.Quantity as exact int64 milli-units (see quantity.h).
 *
 * Follows k8s.io/apimachinery/pkg/api/resource (ParseQuantity, String) with
 * these deliberate differences:
 *  - Precision. Kubernetes keeps nano-units; we keep milli-units. A value
 *    finer than a milli-unit is rounded away from zero (up in magnitude), as
 *    Kubernetes rounds below nano and as MilliValue() rounds an int64-backed
 *    quantity: "1n" -> 1, "-1n" -> -1, "1.0001" -> 1001. The canonical
 *    string is produced from the rounded milli value, so "1n" prints "1m"
 *    where Kubernetes prints "1n".
 *  - Range. Kubernetes holds any decimal magnitude and silently caps a
 *    binary-SI one at 2^63-1; here anything outside int64 milli-units is an
 *    error ("8Ei", "9223372036854775807", "1E").
 *  - Strictness. Kubernetes' scanner also takes a bare sign, "." or a bare
 *    suffix ("-", ".", "Ki") as zero; its documented grammar needs a digit,
 *    and so do we.
 *  - Kubernetes' String() returns the input verbatim when its fast path
 *    judges it canonical, which leaks "+1" or "1.500"; we always print the
 *    form computed from the value, which is what Kubernetes prints after
 *    any arithmetic.
 * The digits are streamed right to left through one multiplication by 2^k
 * (binary suffixes), so the exact value, its rounding and any overflow are
 * known for inputs of any length with no big integers and no allocation.
 */
#include "model/quantity.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Magnitude of INT64_MIN, the largest a negative quantity may reach. */
#define NEG_LIMIT ((uint64_t)INT64_MAX + 1)

/* Written exponents are clamped to this: any non-zero mantissa is out of
 * range (or all fraction) long before, and sums with it cannot overflow. */
#define EXP_CLAMP ((int64_t)1 << 40)

/* Longest part of the input quoted in an error message. */
#define QUOTE_MAX 64

static const uint64_t pow10_tab[19] = {
	1ULL, 10ULL, 100ULL, 1000ULL, 10000ULL, 100000ULL, 1000000ULL,
	10000000ULL, 100000000ULL, 1000000000ULL, 10000000000ULL,
	100000000000ULL, 1000000000000ULL, 10000000000000ULL,
	100000000000000ULL, 1000000000000000ULL, 10000000000000000ULL,
	100000000000000000ULL, 1000000000000000000ULL,
};

/* The suffixes of quantitySuffixer; the decimal exponent form is separate
 * because it is not a fixed string. Read by parse and by format. */
static const struct suffix {
	const char *text;
	enum qformat format;
	int exp10; /* power of ten for decimal SI; 0 for binary */
	int exp2;  /* power of two for binary SI; 0 for decimal */
} suffixes[] = {
	{ "n", QF_DECIMAL_SI, -9, 0 },
	{ "u", QF_DECIMAL_SI, -6, 0 },
	{ "m", QF_DECIMAL_SI, -3, 0 },
	{ "", QF_DECIMAL_SI, 0, 0 },
	{ "k", QF_DECIMAL_SI, 3, 0 },
	{ "M", QF_DECIMAL_SI, 6, 0 },
	{ "G", QF_DECIMAL_SI, 9, 0 },
	{ "T", QF_DECIMAL_SI, 12, 0 },
	{ "P", QF_DECIMAL_SI, 15, 0 },
	{ "E", QF_DECIMAL_SI, 18, 0 },
	{ "Ki", QF_BINARY_SI, 0, 10 },
	{ "Mi", QF_BINARY_SI, 0, 20 },
	{ "Gi", QF_BINARY_SI, 0, 30 },
	{ "Ti", QF_BINARY_SI, 0, 40 },
	{ "Pi", QF_BINARY_SI, 0, 50 },
	{ "Ei", QF_BINARY_SI, 0, 60 },
};

#define NSUFFIXES (sizeof(suffixes) / sizeof(suffixes[0]))

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Writes s into out (size >= QUOTE_MAX * 4 + 8) as a double-quoted, escaped
 * and possibly shortened string, so a hostile input cannot flood or garble
 * the message. */
static void quote(const char *s, char *out)
{
	size_t o = 0, i;

	out[o++] = '"';
	for (i = 0; s[i] && i < QUOTE_MAX; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\') {
			out[o++] = '\\';
			out[o++] = (char)c;
		} else if (c < 0x20 || c >= 0x7f) {
			o += (size_t)sprintf(out + o, "\\x%02x", c);
		} else {
			out[o++] = (char)c;
		}
	}
	if (s[i]) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o++] = '"';
	out[o] = '\0';
}

static int fail(struct err *err, const char *s, const char *why)
{
	char q[QUOTE_MAX * 4 + 8];

	quote(s, q);
	return err_set(err, "invalid quantity %s: %s", q, why);
}

/* Magnitude being built from the product digits; see quantity_parse. */
struct acc {
	uint64_t mag;   /* integer milli-units so far; <= limit unless over */
	uint64_t limit; /* INT64_MAX, or NEG_LIMIT for a negative value */
	bool frac;      /* a non-zero digit fell below the milli-unit */
	bool over;      /* the magnitude exceeds limit */
};

/* Adds digit d at decimal position pos (0 = milli-units). */
static void put_digit(struct acc *a, unsigned d, int64_t pos)
{
	if (d == 0)
		return;
	if (pos < 0) {
		a->frac = true;
		return;
	}
	if (a->over || pos >= 19) {
		a->over = true;
		return;
	}
	/* mag <= 2^63 and the term <= 9e18: the sum fits in uint64. */
	a->mag += d * pow10_tab[pos];
	if (a->mag > a->limit)
		a->over = true;
}

/* Parses the exponent digits after 'e'/'E' (sign allowed). Returns 0 and
 * the clamped exponent, or -1 when malformed or beyond int64, which
 * strconv.ParseInt rejects too. */
static int parse_exponent(const char *p, int64_t *out)
{
	bool neg = false;
	int64_t v = 0;

	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	if (!*p)
		return -1;
	for (; *p; p++) {
		if (!is_digit(*p))
			return -1;
		if (v > (INT64_MAX - (*p - '0')) / 10)
			return -1;
		v = v * 10 + (*p - '0');
	}
	if (v > EXP_CLAMP)
		v = EXP_CLAMP;
	*out = neg ? -v : v;
	return 0;
}

int quantity_parse(const char *s, struct quantity *out, struct err *err)
{
	const char *p, *int_start, *int_end, *frac_start, *frac_end;
	const char *dot = NULL;
	const struct suffix *suf = NULL;
	enum qformat format;
	struct acc a = { 0, INT64_MAX, false, false };
	bool neg = false;
	int64_t e10 = 0, pos;
	uint64_t mult, carry = 0;
	int64_t milli;

	if (!s)
		return err_set(err, "invalid quantity: missing value");
	if (!*s)
		return fail(err, s, "empty string");

	/* 1. Sign, then digits[.digits] with at least one digit. */
	p = s;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	int_start = p;
	while (is_digit(*p))
		p++;
	int_end = frac_start = frac_end = p;
	if (*p == '.') {
		dot = p;
		frac_start = ++p;
		while (is_digit(*p))
			p++;
		frac_end = p;
	}
	if (int_end == int_start && frac_end == frac_start)
		return fail(err, s, "no digits");

	/* 2. The suffix is the whole rest: a fixed one or an exponent. */
	for (size_t i = 0; i < NSUFFIXES; i++) {
		if (strcmp(p, suffixes[i].text) == 0) {
			suf = &suffixes[i];
			break;
		}
	}
	if (suf) {
		format = suf->format;
		e10 = suf->exp10;
		mult = (uint64_t)1 << suf->exp2;
	} else if ((*p == 'e' || *p == 'E') && p[1]) {
		if (parse_exponent(p + 1, &e10) != 0)
			return fail(err, s, "invalid exponent");
		format = QF_DECIMAL_EXPONENT;
		mult = 1;
	} else {
		return fail(err, s, "invalid suffix");
	}

	/*
	 * 3. value x 1000 = digits x mult x 10^(e10 + 3 - nfrac). Multiply the
	 * digits by mult from the right, as on paper; each product digit lands
	 * at a known decimal position relative to the milli-unit. carry stays
	 * below mult (t < 10 x mult), and t <= 9 x 2^60 + 2^60 fits in uint64.
	 */
	if (neg)
		a.limit = NEG_LIMIT;
	pos = e10 + 3 - (int64_t)(frac_end - frac_start);
	for (const char *q = frac_end; q != int_start;) {
		uint64_t t;

		q--;
		if (q == dot)
			continue;
		t = (uint64_t)(*q - '0') * mult + carry;
		put_digit(&a, (unsigned)(t % 10), pos++);
		carry = t / 10;
	}
	for (; carry; carry /= 10)
		put_digit(&a, (unsigned)(carry % 10), pos++);

	/* 4. Round what fell below the milli-unit away from zero. */
	if (a.frac && !a.over) {
		a.mag++;
		if (a.mag > a.limit)
			a.over = true;
	}
	if (a.over)
		return fail(err, s,
			    "out of range (must fit in int64 milli-units)");

	if (!neg)
		milli = (int64_t)a.mag;
	else if (a.mag == NEG_LIMIT)
		milli = INT64_MIN;
	else
		milli = -(int64_t)a.mag;

	/* ParseQuantity turns a binary-SI value strictly between -1 and 1
	 * into DecimalSI; only the format field can tell. */
	if (format == QF_BINARY_SI && a.mag > 0 && a.mag < 1000)
		format = QF_DECIMAL_SI;
	out->milli = milli;
	out->format = format;
	return 0;
}

int quantity_from_int(int64_t units, struct quantity *out, struct err *err)
{
	if (units > INT64_MAX / 1000 || units < INT64_MIN / 1000)
		return err_set(err, "invalid quantity %" PRId64
			       ": out of range (must fit in int64 milli-units)",
			       units);
	out->milli = units * 1000;
	out->format = QF_DECIMAL_SI;
	return 0;
}

static const char *suffix_for(enum qformat format, int exp10, int exp2)
{
	for (size_t i = 0; i < NSUFFIXES; i++) {
		const struct suffix *x = &suffixes[i];

		if (x->format == format && x->exp10 == exp10 &&
		    x->exp2 == exp2)
			return suffixes[i].text;
	}
	return NULL;
}

/*
 * CanonicalizeBytes: zero is "0"; binary SI needs a whole number of units
 * and |value| >= 1024, else it is printed as decimal SI; the mantissa is
 * then the value without trailing factors of 1024 (binary) or of 1000
 * (decimal, so the exponent stays a multiple of three).
 */
char *quantity_format(int64_t milli, enum qformat format, char *buf, size_t n)
{
	const char *sign = milli < 0 ? "-" : "";
	uint64_t mag = milli < 0 ? (uint64_t)0 - (uint64_t)milli
				 : (uint64_t)milli;
	const char *suf;
	int exp = -3;

	if (milli == 0) {
		snprintf(buf, n, "0");
		return buf;
	}
	if (format == QF_BINARY_SI) {
		if (mag >= 1024 * 1000 && mag % 1000 == 0) {
			uint64_t units = mag / 1000;

			exp = 0;
			while (units % 1024 == 0) {
				units /= 1024;
				exp += 10;
			}
			/* 2^0 has no binary suffix: "1025" */
			suf = exp ? suffix_for(QF_BINARY_SI, 0, exp) : "";
			if (!suf)
				BUG("no binary suffix for 2^%d", exp);
			snprintf(buf, n, "%s%" PRIu64 "%s", sign, units, suf);
			return buf;
		}
		format = QF_DECIMAL_SI;
	}
	while (mag % 1000 == 0) {
		mag /= 1000;
		exp += 3;
	}
	if (format == QF_DECIMAL_SI) {
		/* int64 milli-units never go past "P"; Kubernetes would fall
		 * back to the exponent form beyond "E". */
		suf = suffix_for(QF_DECIMAL_SI, exp, 0);
		if (suf) {
			snprintf(buf, n, "%s%" PRIu64 "%s", sign, mag, suf);
			return buf;
		}
	}
	/* DecimalExponent, and any unknown format, as Kubernetes does. */
	if (exp == 0)
		snprintf(buf, n, "%s%" PRIu64, sign, mag);
	else
		snprintf(buf, n, "%s%" PRIu64 "e%d", sign, mag, exp);
	return buf;
}

char *quantity_string(const struct quantity *q, char *buf, size_t n)
{
	return quantity_format(q->milli, q->format, buf, n);
}

/* Away from zero, as Value() rounds: 1500 -> 2, -1500 -> -2. */
int64_t quantity_value(int64_t milli)
{
	int64_t units = milli / 1000, rest = milli % 1000;

	if (rest > 0)
		return units + 1;
	if (rest < 0)
		return units - 1;
	return units;
}

int64_t milli_add_sat(int64_t a, int64_t b)
{
	if (b > 0 && a > INT64_MAX - b)
		return INT64_MAX;
	if (b < 0 && a < INT64_MIN - b)
		return INT64_MIN;
	return a + b;
}

int64_t milli_sub_sat(int64_t a, int64_t b)
{
	if (b < 0 && a > INT64_MAX + b)
		return INT64_MAX;
	if (b > 0 && a < INT64_MIN + b)
		return INT64_MIN;
	return a - b;
}

int milli_mul_count(int64_t a, int64_t count, int64_t *out, struct err *err)
{
	int64_t r;

	if (__builtin_mul_overflow(a, count, &r))
		return err_set(err, "%" PRId64 " x %" PRId64
			       " overflows int64 milli-units", a, count);
	*out = r;
	return 0;
}
