/*
 * base64: standard base64 (RFC 4648 §4, with padding), the encoding of an
 * AdmissionReview's patch, of a webhook's caBundle and of a Secret's data.
 *
 * Pure functions over OpenSSL's EVP block coder; no state, any thread.
 */
#ifndef WEBHOOK_BASE64_H
#define WEBHOOK_BASE64_H

#include <stddef.h>

#include "model/alloc.h"

/* Returns the new NUL-terminated base64 text of the n bytes at p. */
char *base64_encode(const void *p, size_t n);

/*
 * Decodes s (whitespace and newlines are skipped, as Go's decoder for a
 * Secret's data would refuse them but PEM-in-YAML users paste them) into
 * new memory, NUL-terminated for convenience, and sets *n to the decoded
 * length. Returns NULL when s is not valid padded base64.
 */
unsigned char *base64_decode(const char *s, size_t *n) MUST_CHECK;

#endif
