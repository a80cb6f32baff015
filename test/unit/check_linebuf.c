/*
 * Suite "linebuf": the watch line assembler (controller/linebuf.h):
 * lines split anywhere across feeds come out whole and in order, CRLF
 * and empty lines, the callback stopping the feed, and the per-line
 * ceiling (STYLE P5): past it the buffer is released and every later feed
 * fails until reset.
 */
#include <stdlib.h>
#include <string.h>

#include "controller/linebuf.h"
#include "suites.h"
#include "test/support/support.h"

struct got {
	char text[4096]; /* lines joined with '|' */
	size_t n;
	size_t stop_after; /* stop after this many lines; 0: never */
};

static bool on_line(void *ud, const char *line, size_t len)
{
	struct got *g = ud;
	size_t l = strlen(g->text);

	ck_assert_uint_lt(l + len + 2, sizeof(g->text));
	memcpy(g->text + l, line, len);
	g->text[l + len] = '|';
	g->text[l + len + 1] = '\0';
	g->n++;
	return !(g->stop_after && g->n >= g->stop_after);
}

START_TEST(split_anywhere)
{
	static const char in[] = "{\"a\":1}\n{\"b\":22}\r\n\n{\"c\":333}\n"
				 "tail";
	size_t n = strlen(in);

	/* every split point, fed in two pieces, then byte by byte */
	for (size_t cut = 0; cut <= n; cut++) {
		struct linebuf b;
		struct got g = { "", 0, 0 };

		linebuf_init(&b, 64);
		ck_assert_int_eq(linebuf_feed(&b, in, cut, on_line, &g),
				 LINEBUF_OK);
		ck_assert_int_eq(linebuf_feed(&b, in + cut, n - cut, on_line,
					      &g), LINEBUF_OK);
		ck_assert_str_eq(g.text, "{\"a\":1}|{\"b\":22}|{\"c\":333}|");
		ck_assert_uint_eq(linebuf_pending(&b), 4);
		linebuf_release(&b);
	}
	{
		struct linebuf b;
		struct got g = { "", 0, 0 };

		linebuf_init(&b, 64);
		for (size_t i = 0; i < n; i++)
			ck_assert_int_eq(linebuf_feed(&b, in + i, 1, on_line,
						      &g), LINEBUF_OK);
		ck_assert_uint_eq(g.n, 3);
		linebuf_release(&b);
	}
}
END_TEST

START_TEST(callback_stops)
{
	struct linebuf b;
	struct got g = { "", 0, 1 };

	linebuf_init(&b, 64);
	ck_assert_int_eq(linebuf_feed(&b, "x\ny\nz", 5, on_line, &g),
			 LINEBUF_STOPPED);
	ck_assert_str_eq(g.text, "x|");
	ck_assert_uint_eq(linebuf_pending(&b), 0);
	/* a held tail completed by the next feed, then stopped */
	g.n = 0;
	g.text[0] = '\0';
	ck_assert_int_eq(linebuf_feed(&b, "ab", 2, on_line, &g), LINEBUF_OK);
	ck_assert_int_eq(linebuf_feed(&b, "c\nd\n", 4, on_line, &g),
			 LINEBUF_STOPPED);
	ck_assert_str_eq(g.text, "abc|");
	linebuf_release(&b);
}
END_TEST

START_TEST(ceiling)
{
	struct linebuf b;
	struct got g = { "", 0, 0 };
	char big[40];

	memset(big, 'x', sizeof(big));
	linebuf_init(&b, 8);
	/* exactly at the ceiling is fine, whole or in pieces */
	ck_assert_int_eq(linebuf_feed(&b, "12345678\n", 9, on_line, &g),
			 LINEBUF_OK);
	ck_assert_int_eq(linebuf_feed(&b, "1234", 4, on_line, &g), LINEBUF_OK);
	ck_assert_int_eq(linebuf_feed(&b, "5678\n", 5, on_line, &g),
			 LINEBUF_OK);
	ck_assert_uint_eq(g.n, 2);
	/* one byte more, split across feeds: refused, buffer released */
	ck_assert_int_eq(linebuf_feed(&b, "12345", 5, on_line, &g),
			 LINEBUF_OK);
	ck_assert_int_eq(linebuf_feed(&b, "6789", 4, on_line, &g),
			 LINEBUF_TOO_LONG);
	ck_assert_ptr_null(b.buf);
	ck_assert_uint_eq(linebuf_pending(&b), 0);
	/* sticky until reset */
	ck_assert_int_eq(linebuf_feed(&b, "ok\n", 3, on_line, &g),
			 LINEBUF_TOO_LONG);
	ck_assert_uint_eq(g.n, 2);
	linebuf_reset(&b);
	ck_assert_int_eq(linebuf_feed(&b, "ok\n", 3, on_line, &g), LINEBUF_OK);
	ck_assert_uint_eq(g.n, 3);
	/* a long line inside one piece, without a newline yet */
	ck_assert_int_eq(linebuf_feed(&b, big, sizeof(big), on_line, &g),
			 LINEBUF_TOO_LONG);
	linebuf_release(&b);
}
END_TEST

Suite *linebuf_suite(void)
{
	Suite *s = suite_create("linebuf");
	TCase *tc = tcase_create("framing");

	tcase_add_test(tc, split_anywhere);
	tcase_add_test(tc, callback_stops);
	tcase_add_test(tc, ceiling);
	suite_add_tcase(s, tc);
	return s;
}
