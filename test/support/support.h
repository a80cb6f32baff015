/*
 * Test support shared by the unit suites: fixture loading, JSON helpers
 * and asserts that Check lacks. Test-only code; never linked into a
 * program.
 */
#ifndef TEST_SUPPORT_SUPPORT_H
#define TEST_SUPPORT_SUPPORT_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>

#include "model/errors.h"

/* Path of a file under the source tree (TOP_SRCDIR); returns a new string. */
char *t_src_path(const char *rel);
/* Loads test/fixtures/<name> as JSON (aborts the test on error); new ref. */
json_t *t_fixture_json(const char *name);
/* Parses inline JSON text (aborts the test on error); new ref. */
json_t *t_json(const char *text);
/* True when fe holds an entry whose text contains needle. */
bool t_fe_contains(const struct field_errors *fe, const char *needle);
/* The aggregate of fe for failure messages; returns a static buffer. */
const char *t_fe_text(const struct field_errors *fe);

/* GStreamer-style refcount assert for json_t (STYLE P3f). */
#define ck_assert_refcount(j, n) \
	ck_assert_msg((j)->refcount == (size_t)(n), \
		      "refcount of " #j " is %zu, expected %zu", \
		      (size_t)(j)->refcount, (size_t)(n))

/* Asserts fe has an entry containing needle, printing all when not. */
#define ck_assert_fe(fe, needle) \
	ck_assert_msg(t_fe_contains((fe), (needle)), \
		      "no field error containing '%s' in: %s", (needle), \
		      t_fe_text(fe))

#endif
