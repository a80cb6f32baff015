/*
 * alloc: the process-wide allocation policy.
 *
 * Allocation never fails from the caller's point of view: on out-of-memory
 * the x* functions print the size asked for and abort(). Every free in the
 * project is NULL-safe. Also home of BUG() for programmer errors and the
 * MUST_CHECK attribute for functions whose result must be looked at.
 *
 * This module owns no state; it must never log anything but the OOM line.
 */
#ifndef BASE_ALLOC_H
#define BASE_ALLOC_H

#include <stddef.h>

#define MUST_CHECK __attribute__((warn_unused_result))
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))

/* Returns new memory; aborts on OOM. xmalloc(0) returns a unique pointer. */
void *xmalloc(size_t n);
/* Returns new zeroed memory for nmemb * size bytes; aborts on OOM or
 * overflow. */
void *xcalloc(size_t nmemb, size_t size);
/* Resizes p (may be NULL); aborts on OOM. */
void *xrealloc(void *p, size_t n);
/* Returns a new copy of s; s must not be NULL. */
char *xstrdup(const char *s);
/* Returns a new copy of s, or NULL when s is NULL. */
char *xstrdup_or_null(const char *s);
/* Returns a new NUL-terminated copy of the first n bytes of s. */
char *xstrndup(const char *s, size_t n);
/* Returns a new string built like printf. */
char *xasprintf(const char *fmt, ...) PRINTF_LIKE(1, 2);

/*
 * Grows *p (an array of *cap elements of size elem) so it holds at least
 * need elements. Amortised doubling, as git's ALLOC_GROW.
 */
void xgrow(void **p, size_t *cap, size_t need, size_t elem);
#define XGROW(p, cap, need) xgrow((void **)&(p), &(cap), (need), sizeof(*(p)))

#define FREE_AND_NULL(p) do { free(p); (p) = NULL; } while (0)

/* Programmer error: print where and abort. Never for bad input. */
#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void bug_at(const char *file, int line, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

#endif
