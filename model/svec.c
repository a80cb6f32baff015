/*
 * svec: string vectors (see svec.h). Shared by objects.c, selector.c and the
 * codec, which used to carry a copy each.
 */
#include "model/svec.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

void svec_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

char **svec_copy(const char *const *v, size_t n)
{
	char **c;

	if (!n)
		return NULL;
	c = xcalloc(n, sizeof(*c));
	for (size_t i = 0; i < n; i++)
		c[i] = xstrdup(v[i]);
	return c;
}

int svec_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}
