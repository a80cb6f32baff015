/*
 * Test support shared by both Check runners (test/unit and
 * test/devserver): fixture loading, JSON helpers, asserts that Check
 * lacks, a monotonic clock with the waits built on it, and builders of
 * Kueue objects (JSON text for the servers, structs for the core). One
 * copy of each; a suite that needs another helper adds it here. Test-only
 * code; never linked into a program.
 */
#ifndef TEST_SUPPORT_SUPPORT_H
#define TEST_SUPPORT_SUPPORT_H

#include <check.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "model/errors.h"

struct workload;

/* Path of a file under the source tree (TOP_SRCDIR); returns a new string. */
char *t_src_path(const char *rel);
/* Loads test/fixtures/<name> as JSON (aborts the test on error); new ref. */
json_t *t_fixture_json(const char *name);
/* Parses inline JSON text (aborts the test on error); new ref. */
json_t *t_json(const char *text);
/* The same for JSON written with ' for " (tables of cases read better);
 * NULL for NULL. New ref. */
json_t *t_jq(const char *text);
/* True when fe holds an entry whose text contains needle. */
bool t_fe_contains(const struct field_errors *fe, const char *needle);
/* The aggregate of fe for failure messages; returns a static buffer. */
const char *t_fe_text(const struct field_errors *fe);

/* ---- time ---- */

/* CLOCK_MONOTONIC in milliseconds. */
int64_t t_mono_ms(void);
/* Sleeps ms milliseconds. */
void t_sleep_ms(int64_t ms);
/* ms stretched by CK_TIMEOUT_MULTIPLIER (at least 1), as Check stretches
 * its per-test timeouts: `make asan` sets 10, so the waits below grow
 * with the sanitizer's slowdown, as the tests' own timeouts do. */
int64_t t_wait_ms(int64_t ms);

/* Polls expr every 10 ms until it holds, failing the test after ms
 * milliseconds: for work done by other threads. */
#define T_POLL_UNTIL(expr, ms) do { \
	int64_t t_end_ = t_mono_ms() + t_wait_ms(ms); \
	while (!(expr) && t_mono_ms() < t_end_) \
		t_sleep_ms(10); \
	ck_assert_msg((expr), "timed out waiting for: %s", #expr); \
} while (0)

/* Runs the event loop l (controller/loop.h, which the caller includes)
 * in 20 ms turns until cond holds, failing the test after ms
 * milliseconds or on a loop error: for work done on the loop. */
#define T_LOOP_UNTIL(l, cond, ms) do { \
	int64_t t_end_ = t_mono_ms() + t_wait_ms(ms); \
	struct err t_e_ = { "" }; \
	while (!(cond)) { \
		ck_assert_msg(t_mono_ms() < t_end_, "timed out: " #cond); \
		ck_assert_msg(loop_run_once((l), 20, &t_e_) == 0, "%s", \
			      t_e_.msg); \
	} \
} while (0)

/* ---- asserts for hot loops ---- */

/*
 * T_ASSERT(expr), T_ASSERT_MSG(expr, fmt, ...), T_ASSERT_INT(X, OP, Y),
 * T_ASSERT_UINT(X, OP, Y), T_ASSERT_PTR(X, OP, Y): ck_assert,
 * ck_assert_msg and ck_assert_{int,uint,ptr}_<op> (OP is ==, !=, <, <=,
 * > or >=; ptr only == and !=), failing with Check's own message, for
 * the checks a randomized or model-comparing loop makes hundreds of
 * thousands of times. Each ck_assert* that holds records its place
 * (ck's _mark_point: in fork mode one write(2) to the runner, so that a
 * crash later in the test is reported "after" it); in such loops that
 * cost more than the test, about half of the unit runner's time. These
 * record nothing when they hold. Operands are evaluated once; fmt must
 * be a string literal.
 */
#define T_ASSERT(expr) do { \
	if (!(expr)) \
		ck_abort_msg("Assertion '%s' failed", #expr); \
} while (0)
#define T_ASSERT_MSG(expr, ...) do { \
	if (!(expr)) \
		ck_abort_msg(__VA_ARGS__); \
} while (0)
#define T_ASSERT_INT(X, OP, Y) do { \
	intmax_t t_x_ = (X), t_y_ = (Y); \
	if (!(t_x_ OP t_y_)) \
		ck_abort_msg("Assertion '%s' failed: %s == %jd, %s == %jd", \
			     #X " " #OP " " #Y, #X, t_x_, #Y, t_y_); \
} while (0)
#define T_ASSERT_UINT(X, OP, Y) do { \
	uintmax_t t_x_ = (X), t_y_ = (Y); \
	if (!(t_x_ OP t_y_)) \
		ck_abort_msg("Assertion '%s' failed: %s == %ju, %s == %ju", \
			     #X " " #OP " " #Y, #X, t_x_, #Y, t_y_); \
} while (0)
#define T_ASSERT_PTR(X, OP, Y) do { \
	const void *t_x_ = (X), *t_y_ = (Y); \
	if (!(t_x_ OP t_y_)) \
		ck_abort_msg("Assertion '%s' failed: %s == %#lx, %s == %#lx", \
			     #X " " #OP " " #Y, #X, \
			     (unsigned long)(uintptr_t)t_x_, #Y, \
			     (unsigned long)(uintptr_t)t_y_); \
} while (0)

/* ---- Kueue objects ---- */

/*
 * JSON text (new strings) of the v1beta2 objects most suites create: a
 * ResourceFlavor; a ClusterQueue selecting every namespace with one
 * resource group covering cpu, nominalQuota cpu on flavor; a LocalQueue
 * ns/name of cq; a Workload ns/name in LocalQueue lq with one pod set
 * "main" of one pod requesting cpu, at priority prio.
 */
char *t_flavor_json(const char *name);
char *t_cq_json(const char *name, const char *flavor, const char *cpu);
char *t_lq_json(const char *ns, const char *name, const char *cq);
char *t_wl_json(const char *ns, const char *name, const char *lq,
		const char *cpu, int prio);

/*
 * A new pending workload ns/name for the core (new: workload_release,
 * then free): uid "uid-<name>", generation 1, created at created_ms,
 * priority prio, active, and one pod set "main" of count pods, each one
 * container "c" requesting cpu_m millicores.
 */
struct workload *t_workload(const char *ns, const char *name, int32_t prio,
			    int64_t created_ms, int32_t count, int64_t cpu_m);

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
