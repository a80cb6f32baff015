/*
 * b64: the coder (see b64.h). The decoder follows Go's
 * encoding/base64 decodeQuantum step for step, one 4-character quantum at
 * a time, so that its error offsets are Go's; B64_SKIP_NL is the newline
 * skipping Go always does and B64_SKIP_SPACE widens it.
 */
#include "base/b64.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

static const char std_abc[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char url_abc[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t b64_encoded_len(size_t n, unsigned flags)
{
	if (n > (SIZE_MAX - 3) / 4 * 3)
		BUG("b64: %zu bytes", n);
	if (flags & B64_NOPAD)
		return n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0);
	return (n + 2) / 3 * 4;
}

char *b64_encode(const void *p, size_t n, unsigned flags)
{
	const char *abc = flags & B64_URL ? url_abc : std_abc;
	const unsigned char *in = p;
	char *out = xmalloc(b64_encoded_len(n, flags) + 1), *w = out;
	bool pad = !(flags & B64_NOPAD);

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < n)
			v |= in[i + 2];
		*w++ = abc[v >> 18 & 63];
		*w++ = abc[v >> 12 & 63];
		if (i + 1 < n)
			*w++ = abc[v >> 6 & 63];
		else if (pad)
			*w++ = '=';
		if (i + 2 < n)
			*w++ = abc[v & 63];
		else if (pad)
			*w++ = '=';
	}
	*w = '\0';
	return out;
}

/* The 6-bit value of c in the alphabet of flags, or -1. */
static int value_of(unsigned char c, unsigned flags)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == (flags & B64_URL ? '-' : '+'))
		return 62;
	if (c == (flags & B64_URL ? '_' : '/'))
		return 63;
	return -1;
}

static bool is_skipped(unsigned char c, unsigned flags)
{
	if ((flags & B64_SKIP_NL) && (c == '\r' || c == '\n'))
		return true;
	return (flags & B64_SKIP_SPACE) && isspace(c);
}

struct dec {
	const unsigned char *s;
	size_t len;
	size_t si;      /* next input byte */
	unsigned flags;
	size_t bad;     /* offset of the error (Go's CorruptInputError) */
};

static int fail_at(struct dec *d, size_t at)
{
	d->bad = at;
	return -1;
}

static void skip(struct dec *d)
{
	while (d->si < d->len && is_skipped(d->s[d->si], d->flags))
		d->si++;
}

/*
 * Decodes one quantum into out (3 bytes of room). Returns the bytes
 * written, with *last set when the text is over (padding or its end), or
 * -1 with d->bad set.
 */
static int quantum(struct dec *d, unsigned char *out, bool *last)
{
	bool pad_ok = !(d->flags & B64_NOPAD);
	bool pad_needed = !(d->flags & (B64_NOPAD | B64_PAD_OPTIONAL));
	unsigned q[4] = { 0, 0, 0, 0 };
	int j, dlen = 4;
	uint32_t v;

	for (j = 0; j < 4; j++) {
		unsigned char c;
		int x;

		if (d->si == d->len) {
			*last = true;
			if (j == 0)
				return 0;
			if (j == 1 || pad_needed)
				return fail_at(d, d->si - (size_t)j);
			dlen = j;
			break;
		}
		c = d->s[d->si++];
		x = value_of(c, d->flags);
		if (x >= 0) {
			q[j] = (unsigned)x;
			continue;
		}
		if (is_skipped(c, d->flags)) {
			j--;
			continue;
		}
		if (c != '=' || !pad_ok || j < 2)
			return fail_at(d, d->si - 1);
		if (j == 2) {
			/* "==" expected; the first one is consumed */
			skip(d);
			if (d->si == d->len)
				return fail_at(d, d->len);
			if (d->s[d->si] != '=')
				return fail_at(d, d->si - 1);
			d->si++;
		}
		skip(d);
		if (d->si < d->len)
			return fail_at(d, d->si); /* something after padding */
		*last = true;
		dlen = j;
		break;
	}
	v = q[0] << 18 | q[1] << 12 | q[2] << 6 | q[3];
	out[0] = (unsigned char)(v >> 16);
	out[1] = (unsigned char)(v >> 8);
	out[2] = (unsigned char)v;
	if (dlen == 3 && (d->flags & B64_STRICT) && out[2])
		return fail_at(d, d->si - 1);
	if (dlen == 2 && (d->flags & B64_STRICT) && (out[1] || out[2]))
		return fail_at(d, d->si - 2);
	return dlen - 1;
}

unsigned char *b64_decode(const char *s, size_t len, unsigned flags,
			  size_t *n, size_t *bad)
{
	struct dec d = { (const unsigned char *)s, len, 0, flags, 0 };
	unsigned char *out = xmalloc(len / 4 * 3 + 4);
	size_t o = 0;
	bool last = false;

	while (!last) {
		int k = quantum(&d, out + o, &last);

		if (k < 0) {
			free(out);
			if (bad)
				*bad = d.bad;
			return NULL;
		}
		o += (size_t)k;
	}
	out[o] = '\0';
	*n = o;
	return out;
}
