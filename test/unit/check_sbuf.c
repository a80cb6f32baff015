/* Suite "sbuf": the string buffer of base/: appends of every kind, the
 * ceiling of STYLE P5 (an append past it releases the buffer and fails
 * until reset), detach and reuse. */
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"
#include "suites.h"
#include "test/support/support.h"

/* The sbuf invariants of sbuf.h. */
static void sane(const struct sbuf *b)
{
	ck_assert((b->buf == NULL) == (b->alloc == 0));
	if (b->buf) {
		ck_assert_uint_lt(b->len, b->alloc);
		ck_assert_int_eq(b->buf[b->len], '\0');
	} else {
		ck_assert_uint_eq(b->len, 0);
	}
	if (b->max)
		ck_assert_uint_le(b->len, b->max);
	if (b->failed)
		ck_assert_ptr_null(b->buf);
}

START_TEST(appends)
{
	struct sbuf b = SBUF_INIT;
	char *s;
	size_t n;

	ck_assert_str_eq(sbuf_cstr(&b), "");
	ck_assert_int_eq(sbuf_adds(&b, "abc"), 0);
	ck_assert_int_eq(sbuf_addch(&b, '-'), 0);
	ck_assert_int_eq(sbuf_add(&b, "xyz", 2), 0);
	ck_assert_int_eq(sbuf_addf(&b, "/%d/%s", 42, "q"), 0);
	ck_assert_int_eq(sbuf_addu64(&b, 0), 0);
	ck_assert_int_eq(sbuf_addu64(&b, 18446744073709551615ULL), 0);
	sane(&b);
	ck_assert_str_eq(b.buf, "abc-xy/42/q018446744073709551615");
	sbuf_setlen(&b, 3);
	ck_assert_str_eq(sbuf_cstr(&b), "abc");
	/* growth across many doublings keeps every byte */
	for (int i = 0; i < 10000; i++)
		ck_assert_int_eq(sbuf_addch(&b, (char)('a' + i % 26)), 0);
	sane(&b);
	ck_assert_uint_eq(b.len, 10003);
	ck_assert_int_eq(b.buf[3 + 27], 'b');
	s = sbuf_detach(&b, &n);
	ck_assert_uint_eq(n, 10003);
	ck_assert_uint_eq(strlen(s), 10003);
	free(s);
	sane(&b);
	ck_assert_uint_eq(b.len, 0);
	/* detach of an empty buffer is an empty string, not NULL */
	s = sbuf_detach(&b, NULL);
	ck_assert_str_eq(s, "");
	free(s);
	sbuf_reset(&b);
	sbuf_release(&b);
	sbuf_release(&b);
	sane(&b);
}
END_TEST

START_TEST(ceiling_releases)
{
	struct sbuf b;
	char big[100];

	memset(big, 'x', sizeof(big));
	sbuf_init(&b, 10);
	ck_assert_int_eq(sbuf_add(&b, big, 10), 0); /* exactly max fits */
	sane(&b);
	ck_assert_uint_le(b.alloc, 11);
	ck_assert_int_eq(sbuf_addch(&b, 'y'), -1); /* one past */
	ck_assert(b.failed);
	ck_assert_ptr_null(b.buf);
	ck_assert_uint_eq(b.len, 0);
	sane(&b);
	/* failed sticks: even an append that would fit is refused */
	ck_assert_int_eq(sbuf_adds(&b, "a"), -1);
	ck_assert_int_eq(sbuf_addf(&b, "%s", "a"), -1);
	ck_assert_ptr_null(b.buf);
	sbuf_reset(&b);
	ck_assert(!b.failed);
	ck_assert_int_eq(sbuf_adds(&b, "hello"), 0);
	/* a formatted append past the ceiling fails the same way */
	ck_assert_int_eq(sbuf_addf(&b, "%s", "world!"), -1);
	ck_assert(b.failed);
	sane(&b);
	sbuf_release(&b);
	ck_assert(!b.failed);
	ck_assert_uint_eq(b.max, 10);
	/* one append larger than the whole ceiling */
	ck_assert_int_eq(sbuf_add(&b, big, sizeof(big)), -1);
	ck_assert(b.failed);
	sbuf_release(&b);
}
END_TEST

/* Pieces that straddle the ceiling after many small appends, as a
 * network body arrives: the total decides, not the piece. */
START_TEST(ceiling_pieces)
{
	struct sbuf b;
	size_t took = 0;

	sbuf_init(&b, 1000);
	for (;;) {
		if (sbuf_add(&b, "0123456789abc", 13) != 0)
			break;
		took += 13;
		sane(&b);
	}
	ck_assert_uint_eq(took, 1000 / 13 * 13);
	ck_assert(b.failed);
	sane(&b);
	sbuf_release(&b);
}
END_TEST

Suite *sbuf_suite(void)
{
	Suite *s = suite_create("sbuf");
	TCase *tc = tcase_create("append");
	TCase *cap = tcase_create("ceiling");

	tcase_add_test(tc, appends);
	suite_add_tcase(s, tc);
	tcase_add_test(cap, ceiling_releases);
	tcase_add_test(cap, ceiling_pieces);
	suite_add_tcase(s, cap);
	return s;
}
