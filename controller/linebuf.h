/*
 * linebuf: the watch stream's line assembler. A watch answer is a chunked
 * body of newline-delimited JSON events whose chunk boundaries fall
 * anywhere; this module turns the byte pieces libcurl hands over into
 * whole lines, with a ceiling on one line (STYLE P5) so a peer cannot make
 * the controller buffer without bound.
 *
 * It owns only its buffer of the incomplete tail. Lines that arrive whole
 * inside one piece are passed without a copy. No JSON, no I/O, no clock:
 * pure and unit-tested. When a line would pass the ceiling the buffer is
 * released at once and the assembler refuses further input, so there is
 * never a half-valid line.
 */
#ifndef CONTROLLER_LINEBUF_H
#define CONTROLLER_LINEBUF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/alloc.h"

struct linebuf {
	char *buf;     /* owned; the incomplete last line, len bytes */
	size_t len;    /* <= max */
	size_t cap;
	size_t max;    /* longest accepted line in bytes, '\r' included and
			  '\n' not; > 0 */
	bool failed;   /* a line passed max; every feed fails from now on */
};

/* Called for each complete line, without its '\n' (a '\r' before it is
 * dropped too); empty lines are skipped. line is borrowed for the call
 * and not NUL-terminated. Returns true to go on, false to stop. */
typedef bool linebuf_line_fn(void *ud, const char *line, size_t len);

enum linebuf_rc {
	LINEBUF_OK,       /* every byte consumed */
	LINEBUF_STOPPED,  /* the callback returned false; the rest is dropped */
	LINEBUF_TOO_LONG, /* a line passed max (now, or in an earlier feed) */
};

/* init: empty, with a ceiling of max bytes per line. release: frees. */
void linebuf_init(struct linebuf *b, size_t max);
void linebuf_release(struct linebuf *b);
/* Forgets any incomplete line and a past failure (a new stream). */
void linebuf_reset(struct linebuf *b);

/*
 * Feeds len bytes of data (borrowed), calling fn for every line it
 * completes. After LINEBUF_STOPPED the assembler holds no partial line;
 * after LINEBUF_TOO_LONG it holds nothing and fails until reset.
 */
enum linebuf_rc linebuf_feed(struct linebuf *b, const char *data, size_t len,
			     linebuf_line_fn *fn, void *ud) MUST_CHECK;

/* Bytes of the incomplete line held. */
size_t linebuf_pending(const struct linebuf *b);

#endif
