/*
 * sbuf: a growable byte buffer with an optional ceiling, for building
 * text (messages, exposition formats, JSON) and for accumulating what a
 * peer sends (request and answer bodies).
 *
 * The ceiling is STYLE P5's: an sbuf made with a max never holds more than
 * max bytes. An append that would pass it releases the buffer at once and
 * reports failure, and every later append fails too until sbuf_reset(), so
 * there is never a half-valid buffer to parse by mistake. Without a max
 * (0), appends always succeed (allocation aborts on OOM, base/alloc.h).
 *
 * The contents are NUL-terminated whenever buf is not NULL (the NUL is not
 * counted in len and not charged against max), so a text buffer can be
 * handed on as a C string. Owns buf only. Pure; not thread-safe.
 */
#ifndef BASE_SBUF_H
#define BASE_SBUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/alloc.h"

/*
 * A zeroed struct sbuf (or SBUF_INIT) is a valid empty buffer without a
 * ceiling. Invariants: len <= alloc - 1 when buf != NULL; buf == NULL iff
 * alloc == 0; len <= max when max > 0; failed implies buf == NULL.
 */
struct sbuf {
	char *buf;    /* owned; NUL-terminated; NULL while nothing was added */
	size_t len;   /* bytes held, the NUL not counted */
	size_t alloc; /* bytes allocated at buf */
	size_t max;   /* ceiling on len; 0: none */
	bool failed;  /* an append passed max: released, appends fail */
};

#define SBUF_INIT { NULL, 0, 0, 0, false }

/* init: empty, with a ceiling of max bytes (0: none). release: frees buf
 * and leaves b empty with the same ceiling and no failure. */
void sbuf_init(struct sbuf *b, size_t max);
void sbuf_release(struct sbuf *b);
/* Empties b but keeps its memory (and ceiling); clears a failure. */
void sbuf_reset(struct sbuf *b);

/*
 * Makes room for n more bytes (and the NUL). Returns 0, or -1 when len + n
 * would pass the ceiling: then b is released and failed (see above). Every
 * append below is built on it and returns the same.
 */
int sbuf_grow(struct sbuf *b, size_t n);

/* Appends n bytes at p (borrowed). */
static inline int sbuf_add(struct sbuf *b, const void *p, size_t n)
{
	/* alloc <= max + 1 (sbuf_grow), so fitting in alloc is fitting
	 * under the ceiling; a NULL buf has alloc 0 and always grows. */
	if (n >= b->alloc - b->len && sbuf_grow(b, n) != 0)
		return -1;
	memcpy(b->buf + b->len, p, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return 0;
}

/* Appends the NUL-terminated s (borrowed), without its NUL. */
static inline int sbuf_adds(struct sbuf *b, const char *s)
{
	return sbuf_add(b, s, strlen(s));
}

/* Appends one byte. */
static inline int sbuf_addch(struct sbuf *b, char c)
{
	return sbuf_add(b, &c, 1);
}

/* Appends printf-formatted text. */
int sbuf_addf(struct sbuf *b, const char *fmt, ...) PRINTF_LIKE(2, 3);
int sbuf_vaddf(struct sbuf *b, const char *fmt, va_list ap);

/* Appends the decimal digits of u (no sign, no padding). */
int sbuf_addu64(struct sbuf *b, unsigned long long u);

/* Shortens b to n bytes (n <= len). */
void sbuf_setlen(struct sbuf *b, size_t n);

/* The contents as a C string (borrowed, valid until b changes); "" when
 * nothing is held. */
static inline const char *sbuf_cstr(const struct sbuf *b)
{
	return b->buf ? b->buf : "";
}

/*
 * Hands the contents over: returns them as a new NUL-terminated string
 * (an empty one when nothing is held) and sets *len to their length when
 * len is not NULL; b is left empty (the ceiling kept, no failure).
 */
char *sbuf_detach(struct sbuf *b, size_t *len);

#endif
