/*
 * goparse: Go's strconv parsing of integers and booleans, for the text that
 * Kubernetes and Kueue parse with it (selector values, Kueue's labels and
 * annotations), so cueue accepts and refuses exactly the strings they do
 * and can tell a syntax error from a range error as Go's messages do.
 * Pure functions; no I/O, no allocation.
 */
#ifndef MODEL_GOPARSE_H
#define MODEL_GOPARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* strconv's error kinds (ErrSyntax, ErrRange), named. */
enum goparse_rc {
	GOPARSE_OK = 0,
	GOPARSE_SYNTAX, /* "invalid syntax" */
	GOPARSE_RANGE,  /* "value out of range" */
};

/*
 * strconv.ParseInt(s, 10, bits), bits 1..64 (strconv.Atoi is bits 64):
 * an optional sign, then one or more decimal digits and nothing else.
 * Sets *out only on GOPARSE_OK. As in Go, scanning stops at the first
 * digit that overflows, so "99999999999999999999x" is a range error.
 */
enum goparse_rc goparse_int(const char *s, int bits, int64_t *out);

/* strconv.ParseBool: "1 t T TRUE true True" or "0 f F FALSE false False".
 * Returns true and sets *out when s is one of them. */
bool goparse_bool(const char *s, bool *out);

/*
 * Writes f as Go's fmt %v prints a float64 (strconv 'g', shortest round
 * trip; exponent form below 1e-4 and from 1e+06 up: 0.5, 1e+06, 1.5e-05;
 * NaN, +Inf, -Inf, -0) into buf (n bytes, truncated when short).
 */
void goparse_format_float(double f, char *buf, size_t n);

#endif
