/*
 * base64: EVP_EncodeBlock / EVP_DecodeBlock with the two things they do
 * not do: strip whitespace before decoding, and take the padding off the
 * decoded length (EVP_DecodeBlock counts it as zero bytes).
 */
#include "webhook/base64.h"

#include <ctype.h>
#include <limits.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

char *base64_encode(const void *p, size_t n)
{
	char *out;

	if (n > (size_t)INT_MAX / 2)
		BUG("base64_encode: %zu bytes", n);
	out = xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock((unsigned char *)out, p, (int)n);
	return out;
}

unsigned char *base64_decode(const char *s, size_t *n)
{
	size_t len = strlen(s), k = 0, pad = 0;
	char *clean;
	unsigned char *out;
	int got;

	if (len > (size_t)INT_MAX / 2)
		return NULL;
	clean = xmalloc(len + 1);
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			clean[k++] = s[i];
	clean[k] = '\0';
	if (k % 4 != 0) {
		free(clean);
		return NULL;
	}
	/* '=' may only end the text, at most twice */
	for (size_t i = 0; i < k; i++)
		if (clean[i] == '=' && i + 2 < k) {
			free(clean);
			return NULL;
		}
	if (k && clean[k - 1] == '=')
		pad++;
	if (k > 1 && clean[k - 2] == '=')
		pad++;
	if (pad == 1 && k > 1 && clean[k - 2] == '=') {
		free(clean);
		return NULL;
	}
	out = xmalloc(k / 4 * 3 + 1);
	got = k ? EVP_DecodeBlock(out, (unsigned char *)clean, (int)k) : 0;
	free(clean);
	if (got < 0) {
		free(out);
		return NULL;
	}
	*n = (size_t)got - pad;
	out[*n] = '\0';
	return out;
}
