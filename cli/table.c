/*
 * table: kubectl's table layout for kubectl cueue (cli.h).
 */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_table_init(struct cli_table *t, size_t ncol, const char *const *hdr)
{
	memset(t, 0, sizeof(*t));
	t->ncol = ncol;
	for (size_t i = 0; i < ncol; i++)
		cli_table_add(t, hdr[i]);
}

void cli_table_add(struct cli_table *t, const char *cell)
{
	if (t->n == t->cap)
		XGROW(t->cells, t->cap, t->n + 1);
	t->cells[t->n++] = xstrdup(cell ? cell : "");
}

void cli_table_addf(struct cli_table *t, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	s = xmalloc((size_t)(n > 0 ? n : 0) + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
	va_end(ap);
	if (t->n == t->cap)
		XGROW(t->cells, t->cap, t->n + 1);
	t->cells[t->n++] = s;
}

void cli_table_print(const struct cli_table *t)
{
	size_t *w = xcalloc(t->ncol ? t->ncol : 1, sizeof(*w));
	size_t n = t->n > t->ncol ? t->n : 0; /* headers alone: nothing */

	for (size_t i = 0; i < t->n; i++) {
		size_t len = strlen(t->cells[i]);

		if (len > w[i % t->ncol])
			w[i % t->ncol] = len;
	}
	for (size_t i = 0; i < n; i++) {
		size_t col = i % t->ncol;

		if (col + 1 == t->ncol || i + 1 == t->n)
			printf("%s\n", t->cells[i]);
		else
			printf("%-*s   ", (int)w[col], t->cells[i]);
	}
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	free(w);
}
