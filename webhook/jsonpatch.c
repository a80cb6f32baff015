/*
 * jsonpatch: a recursive structural diff. Paths are built in one growing
 * buffer that each level extends and truncates back, so a deep object
 * costs no allocation per level.
 */
#include "webhook/jsonpatch.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

struct pathbuf {
	char *s;    /* NUL-terminated JSON Pointer */
	size_t len;
	size_t cap;
};

char *jsonpatch_escape(const char *token)
{
	size_t n = 0;
	char *out, *w;

	for (const char *p = token; *p; p++)
		n += (*p == '~' || *p == '/') ? 2 : 1;
	out = w = xmalloc(n + 1);
	for (const char *p = token; *p; p++) {
		if (*p == '~') {
			*w++ = '~';
			*w++ = '0';
		} else if (*p == '/') {
			*w++ = '~';
			*w++ = '1';
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
	return out;
}

static void path_push(struct pathbuf *p, const char *token)
{
	char *esc = jsonpatch_escape(token);
	size_t n = strlen(esc);

	XGROW(p->s, p->cap, p->len + n + 2);
	p->s[p->len++] = '/';
	memcpy(p->s + p->len, esc, n + 1);
	p->len += n;
	free(esc);
}

static void op(json_t *ops, const char *name, const struct pathbuf *p,
	       const json_t *value)
{
	json_t *o = json_pack("{s:s, s:s}", "op", name, "path",
			      p->len ? p->s : "");

	if (value)
		json_object_set_new(o, "value", json_deep_copy(value));
	json_array_append_new(ops, o);
}

static void diff(json_t *ops, struct pathbuf *p, const json_t *a,
		 const json_t *b)
{
	size_t mark = p->len;

	if (json_equal(a, b))
		return;
	if (json_is_object(a) && json_is_object(b)) {
		const char *k;
		json_t *v;

		json_object_foreach((json_t *)a, k, v) {
			if (!json_object_get(b, k)) {
				path_push(p, k);
				op(ops, "remove", p, NULL);
				p->len = mark;
				p->s[mark] = '\0';
			}
		}
		json_object_foreach((json_t *)b, k, v) {
			const json_t *old = json_object_get(a, k);

			path_push(p, k);
			if (!old)
				op(ops, "add", p, v);
			else
				diff(ops, p, old, v);
			p->len = mark;
			p->s[mark] = '\0';
		}
		return;
	}
	if (json_is_array(a) && json_is_array(b) &&
	    json_array_size(a) == json_array_size(b)) {
		for (size_t i = 0; i < json_array_size(a); i++) {
			char idx[24];

			snprintf(idx, sizeof(idx), "%zu", i);
			path_push(p, idx);
			diff(ops, p, json_array_get(a, i), json_array_get(b, i));
			p->len = mark;
			p->s[mark] = '\0';
		}
		return;
	}
	op(ops, "replace", p, b);
}

json_t *jsonpatch_diff(const json_t *from, const json_t *to)
{
	json_t *ops = json_array();
	struct pathbuf p = { NULL, 0, 0 };

	XGROW(p.s, p.cap, 64);
	p.s[0] = '\0';
	diff(ops, &p, from, to);
	free(p.s);
	return ops;
}
