/*
 * linebuf: newline framing with a per-line ceiling (see linebuf.h).
 * The fast path hands lines found whole in the input straight to the
 * callback; only a tail without its '\n' is copied, and only up to max.
 */
#include "controller/linebuf.h"

#include <stdlib.h>
#include <string.h>

void linebuf_init(struct linebuf *b, size_t max)
{
	if (!max)
		BUG("linebuf with a zero ceiling");
	b->buf = NULL;
	b->len = 0;
	b->cap = 0;
	b->max = max;
	b->failed = false;
}

void linebuf_release(struct linebuf *b)
{
	free(b->buf);
	b->buf = NULL;
	b->len = 0;
	b->cap = 0;
}

void linebuf_reset(struct linebuf *b)
{
	b->len = 0;
	b->failed = false;
}

size_t linebuf_pending(const struct linebuf *b)
{
	return b->len;
}

static enum linebuf_rc too_long(struct linebuf *b)
{
	linebuf_release(b);
	b->failed = true;
	return LINEBUF_TOO_LONG;
}

/* Hands one line (without '\n') to fn, trimming a '\r'. */
static bool emit(const char *line, size_t n, linebuf_line_fn *fn, void *ud)
{
	if (n && line[n - 1] == '\r')
		n--;
	if (!n)
		return true;
	return fn(ud, line, n);
}

enum linebuf_rc linebuf_feed(struct linebuf *b, const char *data, size_t len,
			     linebuf_line_fn *fn, void *ud)
{
	const char *p = data, *end = data + len;

	if (b->failed)
		return LINEBUF_TOO_LONG;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((nl ? nl : end) - p);

		/* The ceiling counts the held tail plus this piece. */
		if (b->len + n > b->max)
			return too_long(b);
		if (!nl) {
			XGROW(b->buf, b->cap, b->len + n);
			memcpy(b->buf + b->len, p, n);
			b->len += n;
			return LINEBUF_OK;
		}
		if (b->len) {
			bool go;

			XGROW(b->buf, b->cap, b->len + n);
			memcpy(b->buf + b->len, p, n);
			n += b->len;
			b->len = 0;
			go = emit(b->buf, n, fn, ud);
			if (!go)
				return LINEBUF_STOPPED;
		} else if (!emit(p, n, fn, ud)) {
			return LINEBUF_STOPPED;
		}
		p = nl + 1;
	}
	return LINEBUF_OK;
}
