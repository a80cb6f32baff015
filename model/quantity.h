/*
 * quantity: Kubernetes resource.Quantity, parsed once at the boundary.
 *
 * A quantity is held as an exact int64 count of milli-units ("500m" -> 500,
 * "2" -> 2000, "1Ki" -> 1024000), plus the format it was written in, which
 * decides its canonical string ("1536Mi", "2k", "1500m"). Values finer than
 * a milli-unit round up, as Kubernetes' MilliValue() does ("1n" -> 1).
 * Anything that does not fit in int64 milli-units is an error, never a
 * wrapped value. No I/O, no allocation.
 */
#ifndef MODEL_QUANTITY_H
#define MODEL_QUANTITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"
#include "model/errors.h"

/* The suffix family a quantity was written in (resource.Format). */
enum qformat {
	QF_DECIMAL_SI,       /* m, k, M, G, ... or no suffix */
	QF_BINARY_SI,        /* Ki, Mi, Gi, Ti, Pi, Ei */
	QF_DECIMAL_EXPONENT, /* 1e3, 1E-3 */
};

struct quantity {
	int64_t milli;       /* value x 1000, rounded up; any sign */
	enum qformat format; /* how the canonical string is written */
};

/* Big enough for any canonical quantity string plus NUL. */
#define QUANTITY_BUF 48

/*
 * Parses s with resource.ParseQuantity's grammar: optional sign, digits with
 * an optional fraction (".5", "0.5", "5."), then nothing, a decimal SI
 * suffix (n u m k M G T P E), a binary SI suffix (Ki..Ei) or an exponent
 * (e3, E-3). Returns 0 and fills out, or -1 with err naming what is wrong
 * (bad syntax or out of range).
 */
int quantity_parse(const char *s, struct quantity *out, struct err *err)
	MUST_CHECK;

/* A JSON integer given in whole units. -1 + err on overflow. */
int quantity_from_int(int64_t units, struct quantity *out, struct err *err)
	MUST_CHECK;

/*
 * Writes the canonical form Kubernetes prints for milli in format into buf
 * (n >= QUANTITY_BUF) and returns buf. Rules as resource.Quantity.String():
 * DecimalSI picks the largest exact SI suffix ("2000" -> "2k",
 * "1500m" stays, "0.5" -> "500m"); BinarySI uses the largest exact binary
 * suffix and falls back to DecimalSI when the value is not a whole number
 * of units or is below 1024 ("1536Mi", "1.5Gi" -> "1536Mi", "100" stays);
 * DecimalExponent writes e3/e6/... ("1e3", "1500e-3").
 */
char *quantity_format(int64_t milli, enum qformat format, char *buf, size_t n);

/* Convenience: quantity_format(q->milli, q->format, ...). */
char *quantity_string(const struct quantity *q, char *buf, size_t n);

/* Whole units, rounded up as Quantity.Value() does. */
int64_t quantity_value(int64_t milli);

/* Saturating helpers for quota arithmetic; INT64_MAX means unlimited. */
int64_t milli_add_sat(int64_t a, int64_t b);
int64_t milli_sub_sat(int64_t a, int64_t b);
/* a * b in milli-units when b is a plain count; -1 + err on overflow. */
int milli_mul_count(int64_t a, int64_t count, int64_t *out, struct err *err)
	MUST_CHECK;

#endif
