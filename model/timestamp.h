/*
 * timestamp: RFC 3339 times as Kubernetes writes them (metav1.Time:
 * "2026-11-30T06:00:00Z", second precision; MicroTime with fraction).
 * Held as int64 milliseconds since the Unix epoch. Pure conversion; this
 * module never reads the clock (callers pass `now`).
 */
#ifndef MODEL_TIMESTAMP_H
#define MODEL_TIMESTAMP_H

#include <stddef.h>
#include <stdint.h>

#include "base/alloc.h"

#define TIMESTAMP_BUF 40

/* Parses "YYYY-MM-DDTHH:MM:SS[.frac](Z|+hh:mm|-hh:mm)". Returns 0 or -1. */
int timestamp_parse(const char *s, int64_t *ms) MUST_CHECK;
/* Writes ms as "YYYY-MM-DDTHH:MM:SSZ" (seconds truncated) into buf. */
char *timestamp_format(int64_t ms, char *buf, size_t n);
/* Writes ms as MicroTime "YYYY-MM-DDTHH:MM:SS.ffffffZ". */
char *timestamp_format_micro(int64_t ms, char *buf, size_t n);

#endif
