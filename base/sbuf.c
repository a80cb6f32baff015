/*
 * sbuf: the growable buffer (see sbuf.h). Growth doubles, as git's
 * ALLOC_GROW does, but never allocates past the ceiling (max + 1 bytes
 * with the NUL), which is what lets the inline appends in sbuf.h test only
 * the allocation.
 */
#include "base/sbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

void sbuf_init(struct sbuf *b, size_t max)
{
	memset(b, 0, sizeof(*b));
	b->max = max;
}

void sbuf_release(struct sbuf *b)
{
	free(b->buf);
	sbuf_init(b, b->max);
}

void sbuf_reset(struct sbuf *b)
{
	b->len = 0;
	if (b->buf)
		b->buf[0] = '\0';
	b->failed = false;
}

/* P5: drop everything held; the buffer refuses input from now on. */
static int overflow(struct sbuf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = b->alloc = 0;
	b->failed = true;
	return -1;
}

int sbuf_grow(struct sbuf *b, size_t n)
{
	size_t need, cap;

	if (b->failed)
		return -1;
	if (b->max && n > b->max - b->len)
		return overflow(b);
	if (n > SIZE_MAX - 1 - b->len)
		BUG("sbuf: size overflow (%zu + %zu)", b->len, n);
	need = b->len + n + 1;
	if (need <= b->alloc)
		return 0;
	cap = b->alloc ? b->alloc : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	if (b->max && cap > b->max + 1)
		cap = b->max + 1;
	b->buf = xrealloc(b->buf, cap);
	if (!b->alloc)
		b->buf[0] = '\0';
	b->alloc = cap;
	return 0;
}

int sbuf_vaddf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("sbuf: bad format %s", fmt);
	if (sbuf_grow(b, (size_t)n) != 0)
		return -1;
	vsnprintf(b->buf + b->len, b->alloc - b->len, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = sbuf_vaddf(b, fmt, ap);
	va_end(ap);
	return rc;
}

int sbuf_addu64(struct sbuf *b, unsigned long long u)
{
	char tmp[24];
	size_t n = sizeof(tmp);

	do {
		tmp[--n] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	return sbuf_add(b, tmp + n, sizeof(tmp) - n);
}

void sbuf_setlen(struct sbuf *b, size_t n)
{
	if (n > b->len)
		BUG("sbuf_setlen: %zu past the length %zu", n, b->len);
	b->len = n;
	if (b->buf)
		b->buf[n] = '\0';
}

char *sbuf_detach(struct sbuf *b, size_t *len)
{
	char *s = b->buf ? b->buf : xstrdup("");

	if (len)
		*len = b->len;
	sbuf_init(b, b->max);
	return s;
}
