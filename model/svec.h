/*
 * svec: the string vector, an owned array of owned strings with its count
 * kept beside it (char **v; size_t n), the shape of every []string field in
 * objects.h (finalizers, coveredResources, admission checks, selector
 * values). Only the operations every owner needs (and the sort order
 * every sorter of strings needs); no I/O.
 *
 * (Not "strv": names starting with "str" and a lowercase letter are
 * reserved by the C standard, STYLE P2.)
 */
#ifndef MODEL_SVEC_H
#define MODEL_SVEC_H

#include <stddef.h>

/* Frees the n strings of v, then v; v may be NULL when n is 0. */
void svec_free(char **v, size_t n);

/* Returns a new array of new copies of the n strings of v (none NULL), or
 * NULL when n is 0. */
char **svec_copy(const char *const *v, size_t n);

/* The qsort comparator of an array of C strings (char * or const char *
 * elements, none NULL): strcmp order. */
int svec_cmp(const void *a, const void *b);

#endif
