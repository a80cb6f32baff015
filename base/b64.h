/*
 * b64: base64 (RFC 4648) in the variants cueue meets: the standard
 * alphabet with padding (an AdmissionReview's patch, a caBundle, a
 * Secret's data, a kubeconfig's certificate-authority-data, YAML's
 * !!binary, protobuf bytes in JSON) and the URL alphabet without padding
 * (list continue tokens, like Kubernetes' RawURLEncoding).
 *
 * The decoder is Go's encoding/base64 decoder, so that the devserver and
 * the manager accept and refuse what Kubernetes does, down to the input
 * offset Go names in "illegal base64 data at input byte N". Flags add
 * what some callers need on top (whitespace, optional padding, canonical
 * encodings only). Pure functions; no state; any thread.
 */
#ifndef BASE_B64_H
#define BASE_B64_H

#include <stddef.h>

#include "base/alloc.h"

enum b64_flags {
	B64_STD = 0,           /* '+' '/' and '=' padding (RFC 4648 §4) */
	B64_URL = 1 << 0,      /* '-' '_' instead of '+' '/' (RFC 4648 §5) */
	B64_NOPAD = 1 << 1,    /* encode: no '='; decode: '=' is an error
				  and a short last quantum is complete */
	B64_PAD_OPTIONAL = 1 << 2, /* decode: the padding may be left off */
	B64_STRICT = 1 << 3,   /* decode: the unused bits of a short last
				  quantum must be zero (RFC 4648 §3.5; Go's
				  Strict()), so one text per byte string */
	B64_SKIP_NL = 1 << 4,  /* decode: CR and LF anywhere are skipped, as
				  Go's decoder always does */
	B64_SKIP_SPACE = 1 << 5, /* decode: every isspace() byte is skipped
				    (PEM pasted into YAML) */
};

/* The length of the encoding of n bytes, without the NUL. */
size_t b64_encoded_len(size_t n, unsigned flags);

/* Returns the new NUL-terminated encoding of the n bytes at p (B64_URL,
 * B64_NOPAD apply). */
char *b64_encode(const void *p, size_t n, unsigned flags);

/*
 * Decodes the len bytes of text at s. Returns the bytes as new memory,
 * NUL-terminated for the convenience of text payloads, with their length
 * in *n; or NULL when s is not valid under flags, with *bad (when bad is
 * not NULL) set to the offset of the offending input byte as Go counts it
 * (len for a text that ends too early).
 */
unsigned char *b64_decode(const char *s, size_t len, unsigned flags,
			  size_t *n, size_t *bad) MUST_CHECK;

#endif
