/* Suite "b64": base64 against the RFC 4648 §10 vectors in both
 * alphabets, with and without padding; round trips of every byte; and the
 * texts a strict decoder refuses, each at the input offset Go's
 * encoding/base64 names. */
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "suites.h"
#include "test/support/support.h"

static const struct {
	const char *raw, *std;
} rfc[] = {
	{ "", "" },
	{ "f", "Zg==" },
	{ "fo", "Zm8=" },
	{ "foo", "Zm9v" },
	{ "foob", "Zm9vYg==" },
	{ "fooba", "Zm9vYmE=" },
	{ "foobar", "Zm9vYmFy" },
};

START_TEST(rfc4648_vectors)
{
	const char *raw = rfc[_i].raw, *want = rfc[_i].std;
	size_t len = strlen(raw), n = 99, bad = 99;
	char *e = b64_encode(raw, len, B64_STD), *unpadded;
	unsigned char *d;

	ck_assert_str_eq(e, want);
	ck_assert_uint_eq(b64_encoded_len(len, B64_STD), strlen(want));
	d = b64_decode(e, strlen(e), B64_STRICT, &n, &bad);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(n, len);
	ck_assert_str_eq((char *)d, raw);
	free(d);
	/* unpadded: the same text less its '=' */
	unpadded = b64_encode(raw, len, B64_URL | B64_NOPAD);
	ck_assert_uint_eq(strlen(unpadded), strcspn(want, "="));
	ck_assert(!strncmp(unpadded, want, strlen(unpadded)));
	ck_assert_uint_eq(b64_encoded_len(len, B64_NOPAD), strlen(unpadded));
	d = b64_decode(unpadded, strlen(unpadded), B64_URL | B64_NOPAD |
		       B64_STRICT, &n, NULL);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq((char *)d, raw);
	free(d);
	/* padding optional accepts both forms */
	d = b64_decode(unpadded, strlen(unpadded), B64_PAD_OPTIONAL, &n,
		       NULL);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(n, len);
	free(d);
	d = b64_decode(e, strlen(e), B64_PAD_OPTIONAL, &n, NULL);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(n, len);
	free(d);
	free(unpadded);
	free(e);
}
END_TEST

/* Every byte value in every position of a short quantum, both
 * alphabets, padded and not. */
START_TEST(round_trips)
{
	static const unsigned modes[] = { B64_STD, B64_URL, B64_NOPAD,
					  B64_URL | B64_NOPAD };
	unsigned char src[258];

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 7 + 3);
	for (size_t m = 0; m < 4; m++)
		for (size_t len = 0; len <= sizeof(src); len++) {
			char *e = b64_encode(src, len, modes[m]);
			unsigned char *d;
			size_t n;

			ck_assert_uint_eq(strlen(e),
					  b64_encoded_len(len, modes[m]));
			ck_assert(!strpbrk(e, modes[m] & B64_URL ? "+/" :
					   "-_"));
			d = b64_decode(e, strlen(e), modes[m] | B64_STRICT,
				       &n, NULL);
			ck_assert_ptr_nonnull(d);
			ck_assert_uint_eq(n, len);
			ck_assert(!memcmp(d, src, len));
			free(d);
			free(e);
		}
}
END_TEST

/* What a decoder must refuse, and where Go's says the error is. */
static const struct {
	const char *text;
	unsigned flags;
	size_t bad;
} refused[] = {
	{ "Z", B64_STD, 0 },              /* one character cannot decode */
	{ "Zg", B64_STD, 0 },             /* padding required */
	{ "Zm9", B64_STD, 0 },
	{ "Zm9vZ", B64_STD, 4 },
	{ "Zg=", B64_STD, 3 },            /* "==" cut short */
	{ "Zg=x", B64_STD, 2 },
	{ "Z===", B64_STD, 1 },           /* padding too early */
	{ "=Zg=", B64_STD, 0 },
	{ "Zg==Zg==", B64_STD, 4 },       /* text after the padding */
	{ "Zm8=\nx", B64_SKIP_NL, 5 },
	{ "Zm9v!", B64_STD, 4 },          /* outside the alphabet */
	{ "Zm9v YmFy", B64_STD, 4 },      /* space only with SKIP_SPACE */
	{ "Zm9v\nYmFy", B64_STD, 4 },     /* newline only with SKIP_NL */
	{ "Zm-_", B64_STD, 2 },           /* URL characters, std alphabet */
	{ "Zm+/", B64_URL, 2 },           /* and the other way round */
	{ "Zm8=", B64_NOPAD, 3 },         /* '=' without padding */
	{ "Zh==", B64_STRICT, 2 },        /* pad bits not zero */
	{ "Zm9=", B64_STRICT, 3 },
	{ "Zh", B64_NOPAD | B64_STRICT, 0 },
};

START_TEST(refused_texts)
{
	const char *t = refused[_i].text;
	size_t n = 0, bad = 999;
	unsigned char *d = b64_decode(t, strlen(t), refused[_i].flags, &n,
				      &bad);

	ck_assert_msg(!d, "%s decoded", t);
	ck_assert_msg(bad == refused[_i].bad, "%s: error at %zu, want %zu",
		      t, bad, refused[_i].bad);
}
END_TEST

START_TEST(lenient_modes)
{
	unsigned char *d;
	size_t n, bad;

	/* Go's decoder skips CR and LF anywhere, even inside padding */
	d = b64_decode("Zm9v\r\nYmE=\n", 11, B64_SKIP_NL, &n, &bad);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq((char *)d, "fooba");
	free(d);
	d = b64_decode("Zg=\n=", 5, B64_SKIP_NL, &n, &bad);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq((char *)d, "f");
	free(d);
	/* PEM pasted with spaces and tabs */
	d = b64_decode(" Zm9v\tYmFy \n", 12, B64_SKIP_SPACE, &n, &bad);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq((char *)d, "foobar");
	free(d);
	/* non-zero pad bits pass unless B64_STRICT (Go's default) */
	d = b64_decode("Zh==", 4, B64_STD, &n, &bad);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(n, 1);
	ck_assert_int_eq(d[0], 'f');
	free(d);
	/* the length bounds the text: a NUL inside is data, not the end */
	d = b64_decode("Zm8=garbage", 4, B64_STD, &n, &bad);
	ck_assert_ptr_nonnull(d);
	ck_assert_str_eq((char *)d, "fo");
	free(d);
	/* binary output keeps its NULs and is NUL-terminated past them */
	d = b64_decode("AAEA", 4, B64_STD, &n, &bad);
	ck_assert_ptr_nonnull(d);
	ck_assert_uint_eq(n, 3);
	ck_assert(!memcmp(d, "\0\1\0", 4));
	free(d);
}
END_TEST

Suite *b64_suite(void)
{
	Suite *s = suite_create("b64");
	TCase *tc = tcase_create("codec");

	tcase_add_loop_test(tc, rfc4648_vectors, 0,
			    (int)(sizeof(rfc) / sizeof(rfc[0])));
	tcase_add_test(tc, round_trips);
	tcase_add_loop_test(tc, refused_texts, 0,
			    (int)(sizeof(refused) / sizeof(refused[0])));
	tcase_add_test(tc, lenient_modes);
	suite_add_tcase(s, tc);
	return s;
}
