/*
 * jsonw: jansson's JSON_COMPACT encoding, written faster (see jsonw.h).
 *
 * It owns nothing between calls. Every byte it writes by itself must be
 * the byte jansson's dump.c writes: objects and arrays without spaces,
 * keys in iteration (insertion) order, integers as "%lld", strings with
 * \" \\ \b \f \n \r \t and \u00XX (upper-case hex) for the other control
 * characters, everything else, '/' and DEL included, as is. Whatever it
 * cannot match cheaply (reals, strings with bytes >= 0x80) it hands to
 * jansson.
 */
#include "devserver/jsonw.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"

/* The sbuf appends, under short names for the encoder's many calls;
 * the buffer has no ceiling, so they cannot fail. */
static inline void put(struct sbuf *o, const char *s, size_t n)
{
	(void)sbuf_add(o, s, n);
}

static inline void put1(struct sbuf *o, char c)
{
	(void)sbuf_addch(o, c);
}

static int put_cb(const char *s, size_t n, void *data)
{
	put(data, s, n);
	return 0;
}

/* jansson's own encoding of one scalar (JSON_ENCODE_ANY). */
static int by_jansson(struct sbuf *o, const json_t *v)
{
	return json_dump_callback(v, put_cb, o, JSON_COMPACT |
				  JSON_ENCODE_ANY) == 0 ? 0 : -1;
}

/* Byte classes for strings: 0 as is, 1 escaped, 2 not ASCII. */
static const unsigned char cls[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* '"' */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, /* '\\' */
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
	2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
};

/* A string of n bytes in one pass; one with a byte >= 0x80 is redone by
 * jansson (its UTF-8 check and its escapes). */
static int put_string(struct sbuf *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *u = (const unsigned char *)s;
	size_t start = o->len, run = 0;

	put1(o, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = u[i];
		char esc[6];
		size_t el = 2;

		if (!cls[c])
			continue;
		if (cls[c] == 2) {
			json_t *tmp = json_stringn_nocheck(s, n);
			int rc;

			sbuf_setlen(o, start);
			if (!tmp)
				return -1;
			rc = by_jansson(o, tmp);
			json_decref(tmp);
			return rc;
		}
		put(o, s + run, i - run);
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"':
			esc[1] = '"';
			break;
		case '\\':
			esc[1] = '\\';
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			esc[1] = 'u';
			esc[2] = '0';
			esc[3] = '0';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			el = 6;
			break;
		}
		put(o, esc, el);
	}
	put(o, s + run, n - run);
	put1(o, '"');
	return 0;
}

static void put_integer(struct sbuf *o, json_int_t v)
{
	char buf[24];
	size_t i = sizeof(buf);
	/* two's complement magnitude, so INT64_MIN works too */
	uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;

	do {
		buf[--i] = (char)('0' + m % 10);
		m /= 10;
	} while (m);
	if (v < 0)
		buf[--i] = '-';
	put(o, buf + i, sizeof(buf) - i);
}

/* Where a value sits, for the one raw member (see jsonw.h). */
enum where {
	W_ANY,
	W_META,     /* the value of a "metadata" member */
	W_MF,       /* its "managedFields" */
	W_MF_ENTRY, /* an element of that */
};

/* A JSON string's body at s (after the opening quote) up to its closing
 * quote; returns the position after it, or NULL. */
static const char *skip_string(const char *s, const char *end)
{
	while (s < end) {
		unsigned char c = (unsigned char)*s++;

		if (c == '"')
			return s;
		if (c < 0x20)
			return NULL;
		if (c != '\\')
			continue;
		if (s >= end)
			return NULL;
		c = (unsigned char)*s++;
		if (c == 'u') {
			for (int i = 0; i < 4; i++, s++)
				if (s >= end || !strchr("0123456789abcdefABCDEF",
							*s) || !*s)
					return NULL;
		} else if (!strchr("\"\\/bfnrt", c) || !c) {
			return NULL;
		}
	}
	return NULL;
}

/* An object of objects with string keys, compact, at s; returns the
 * position after it, or NULL. */
static const char *skip_fields(const char *s, const char *end, int depth)
{
	if (depth > JSONW_MAX_DEPTH || s >= end || *s++ != '{')
		return NULL;
	if (s < end && *s == '}')
		return s + 1;
	for (;;) {
		if (s >= end || *s++ != '"')
			return NULL;
		s = skip_string(s, end);
		if (!s || s >= end || *s++ != ':')
			return NULL;
		s = skip_fields(s, end, depth + 1);
		if (!s || s >= end)
			return NULL;
		if (*s == '}')
			return s + 1;
		if (*s++ != ',')
			return NULL;
	}
}

/* True when the string j holds FieldsV1 text to write as it is. */
static bool is_fields_text(const json_t *j)
{
	const char *s = json_string_value(j);
	const char *end = s + json_string_length(j);

	return skip_fields(s, end, 0) == end;
}

static int put_value(struct sbuf *o, const json_t *j, int depth,
		     enum where w)
{
	if (!j || depth > JSONW_MAX_DEPTH)
		return -1;
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		void *it = json_object_iter((json_t *)j);
		bool first = true;

		put1(o, '{');
		for (; it; it = json_object_iter_next((json_t *)j, it)) {
			const char *k = json_object_iter_key(it);
			size_t kn = json_object_iter_key_len(it);
			json_t *v = json_object_iter_value(it);
			enum where kw = W_ANY;

			if (!first)
				put1(o, ',');
			first = false;
			if (put_string(o, k, kn) != 0)
				return -1;
			put1(o, ':');
			if (kn == 8 && !memcmp(k, "metadata", 8)) {
				kw = W_META;
			} else if (w == W_META && kn == 13 &&
				   !memcmp(k, "managedFields", 13)) {
				kw = W_MF;
			} else if (w == W_MF_ENTRY && kn == 8 &&
				   !memcmp(k, "fieldsV1", 8) &&
				   json_is_string(v) && is_fields_text(v)) {
				put(o, json_string_value(v),
				    json_string_length(v));
				continue;
			}
			if (put_value(o, v, depth + 1, kw) != 0)
				return -1;
		}
		put1(o, '}');
		return 0;
	}
	case JSON_ARRAY: {
		size_t n = json_array_size(j);
		enum where ew = w == W_MF ? W_MF_ENTRY : W_ANY;

		put1(o, '[');
		for (size_t i = 0; i < n; i++) {
			if (i)
				put1(o, ',');
			if (put_value(o, json_array_get(j, i), depth + 1,
				      ew) != 0)
				return -1;
		}
		put1(o, ']');
		return 0;
	}
	case JSON_STRING:
		return put_string(o, json_string_value(j),
				  json_string_length(j));
	case JSON_INTEGER:
		put_integer(o, json_integer_value(j));
		return 0;
	case JSON_REAL:
		return by_jansson(o, j);
	case JSON_TRUE:
		put(o, "true", 4);
		return 0;
	case JSON_FALSE:
		put(o, "false", 5);
		return 0;
	case JSON_NULL:
		put(o, "null", 4);
		return 0;
	}
	return -1;
}

int jsonw_append(const json_t *j, struct sbuf *b)
{
	size_t start = b->len;
	int rc = -1;

	if (b->max)
		BUG("jsonw_append: a capped buffer (%zu)", b->max);
	if (json_is_object(j) || json_is_array(j))
		rc = put_value(b, j, 0, W_ANY);
	if (rc != 0)
		sbuf_setlen(b, start);
	return rc;
}

char *jsonw_dumps(const json_t *j, size_t *len)
{
	struct sbuf b = SBUF_INIT;

	if (jsonw_append(j, &b) != 0) {
		sbuf_release(&b);
		return NULL;
	}
	return sbuf_detach(&b, len);
}
