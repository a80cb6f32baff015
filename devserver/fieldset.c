/*
 * fieldset: structured-merge-diff field sets and FieldsV1 (see
 * fieldset.h).
 *
 * DESIGN: a node keeps its children in a sorted array of nodes (by value),
 * so union, difference and intersection are merges of sorted arrays and
 * lookups are binary searches; managed field sets are small (one entry per
 * field an object has), so the arrays stay short. The FieldsV1 parser is a
 * small recursive descent over objects only (the only shape FieldsV1
 * has), so decoding a stored entry needs no JSON tree.
 */
#include "devserver/fieldset.h"

#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "base/text.h"

#define MAX_DEPTH 256

struct fset *fset_new(void)
{
	return xcalloc(1, sizeof(struct fset));
}

static void node_release(struct fset *s)
{
	for (size_t i = 0; i < s->n; i++)
		node_release(&s->kids[i]);
	free(s->kids);
	free(s->pe);
	memset(s, 0, sizeof(*s));
}

void fset_free(struct fset *s)
{
	if (!s)
		return;
	node_release(s);
	free(s);
}

static void node_copy(struct fset *dst, const struct fset *src)
{
	dst->pe = src->pe ? xstrdup(src->pe) : NULL;
	dst->member = src->member;
	dst->n = dst->cap = src->n;
	dst->kids = src->n ? xcalloc(src->n, sizeof(*dst->kids)) : NULL;
	for (size_t i = 0; i < src->n; i++)
		node_copy(&dst->kids[i], &src->kids[i]);
}

struct fset *fset_copy(const struct fset *s)
{
	struct fset *c = fset_new();

	node_copy(c, s);
	return c;
}

/* Field names, then keys, then values, then indexes (PathElement.Compare);
 * within a kind by text, indexes by number. */
static int pe_rank(const char *pe)
{
	switch (pe[0]) {
	case 'f':
		return 0;
	case 'k':
		return 1;
	case 'v':
		return 2;
	default:
		return 3;
	}
}

int fset_pe_cmp(const char *a, const char *b)
{
	int ra = pe_rank(a), rb = pe_rank(b);

	if (ra != rb)
		return ra < rb ? -1 : 1;
	if (ra == 3) {
		size_t la = strlen(a), lb = strlen(b);

		if (la != lb)
			return la < lb ? -1 : 1;
	}
	return strcmp(a, b);
}

/* Index of pe in s's children, or where it would go (*found false). */
static size_t find(const struct fset *s, const char *pe, bool *found)
{
	size_t lo = 0, hi = s->n;

	*found = false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = fset_pe_cmp(s->kids[mid].pe, pe);

		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct fset *fset_child(struct fset *s, const char *pe, size_t n, bool make)
{
	char buf[128], *key = n < sizeof(buf) ? buf : xmalloc(n + 1);
	struct fset *kid = NULL;
	bool found;
	size_t at;

	memcpy(key, pe, n);
	key[n] = '\0';
	at = find(s, key, &found);
	if (found) {
		kid = &s->kids[at];
	} else if (make) {
		XGROW(s->kids, s->cap, s->n + 1);
		memmove(&s->kids[at + 1], &s->kids[at],
			(s->n - at) * sizeof(*s->kids));
		s->n++;
		kid = &s->kids[at];
		memset(kid, 0, sizeof(*kid));
		kid->pe = xstrndup(pe, n);
	}
	if (key != buf)
		free(key);
	return kid;
}

const struct fset *fset_get(const struct fset *s, const char *pe)
{
	bool found;
	size_t at = find(s, pe, &found);

	return found ? &s->kids[at] : NULL;
}

bool fset_is_empty(const struct fset *s)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->kids[i].member || !fset_is_empty(&s->kids[i]))
			return false;
	return true;
}

void fset_union(struct fset *dst, const struct fset *src)
{
	for (size_t i = 0; i < src->n; i++) {
		const struct fset *k = &src->kids[i];
		struct fset *d = fset_child(dst, k->pe, strlen(k->pe), true);

		d->member |= k->member;
		fset_union(d, k);
	}
}

/* True when s has nothing: not a member, no children. */
static bool node_empty(const struct fset *s)
{
	return !s->member && !s->n;
}

static void drop_kid(struct fset *s, size_t i)
{
	node_release(&s->kids[i]);
	memmove(&s->kids[i], &s->kids[i + 1],
		(s->n - i - 1) * sizeof(*s->kids));
	s->n--;
}

bool fset_subtract(struct fset *dst, const struct fset *src)
{
	size_t i = 0, j = 0;
	bool gone = false;

	while (i < dst->n && j < src->n) {
		int c = fset_pe_cmp(dst->kids[i].pe, src->kids[j].pe);

		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			struct fset *d = &dst->kids[i];

			if (src->kids[j].member && d->member) {
				d->member = false;
				gone = true;
			}
			gone |= fset_subtract(d, &src->kids[j]);
			j++;
			if (node_empty(d))
				drop_kid(dst, i);
			else
				i++;
		}
	}
	return gone;
}

static void intersect_into(struct fset *out, const struct fset *a,
			   const struct fset *b)
{
	size_t i = 0, j = 0;

	while (i < a->n && j < b->n) {
		int c = fset_pe_cmp(a->kids[i].pe, b->kids[j].pe);

		if (c < 0) {
			i++;
		} else if (c > 0) {
			j++;
		} else {
			const struct fset *x = &a->kids[i], *y = &b->kids[j];
			struct fset *o = fset_child(out, x->pe, strlen(x->pe),
						    true);

			o->member = x->member && y->member;
			intersect_into(o, x, y);
			if (node_empty(o))
				drop_kid(out, out->n - 1);
			i++;
			j++;
		}
	}
}

struct fset *fset_intersect(const struct fset *a, const struct fset *b)
{
	struct fset *out = fset_new();

	intersect_into(out, a, b);
	return out;
}

void fset_drop(struct fset *s, const char *pe)
{
	bool found;
	size_t at = find(s, pe, &found);

	if (found)
		drop_kid(s, at);
}

void fset_prune(struct fset *s)
{
	for (size_t i = 0; i < s->n;) {
		fset_prune(&s->kids[i]);
		if (node_empty(&s->kids[i]))
			drop_kid(s, i);
		else
			i++;
	}
}

/* ---- FieldsV1 text ---- */

/* fieldpath.DeserializePathElement accepts these prefixes only. */
static bool pe_valid(const char *pe, size_t n)
{
	return n >= 2 && pe[1] == ':' &&
	       (pe[0] == 'f' || pe[0] == 'k' || pe[0] == 'v' || pe[0] == 'i');
}

struct rd {
	const char *p, *end;
	struct sbuf key; /* the key being read, unescaped */
};

static void skip_ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' ||
				 *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static void put_utf8(struct sbuf *b, uint32_t cp)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	(void)sbuf_add(b, u, n);
}

static int read_hex4(struct rd *r, uint32_t *out)
{
	uint32_t v = 0;

	if (r->end - r->p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		int h = text_hexval(r->p[i]);

		if (h < 0)
			return -1;
		v = v << 4 | (uint32_t)h;
	}
	r->p += 4;
	*out = v;
	return 0;
}

/* A JSON string into r->key. */
static int read_string(struct rd *r)
{
	sbuf_reset(&r->key);
	if (r->p >= r->end || *r->p != '"')
		return -1;
	r->p++;
	while (r->p < r->end) {
		const char *run = r->p;

		while (r->p < r->end && *r->p != '"' && *r->p != '\\' &&
		       (unsigned char)*r->p >= 0x20)
			r->p++;
		(void)sbuf_add(&r->key, run, (size_t)(r->p - run));
		if (r->p >= r->end || (unsigned char)*r->p < 0x20)
			return -1;
		if (*r->p == '"') {
			r->p++;
			return 0;
		}
		r->p++; /* backslash */
		if (r->p >= r->end)
			return -1;
		switch (*r->p++) {
		case '"':
			(void)sbuf_addch(&r->key, '"');
			break;
		case '\\':
			(void)sbuf_addch(&r->key, '\\');
			break;
		case '/':
			(void)sbuf_addch(&r->key, '/');
			break;
		case 'b':
			(void)sbuf_addch(&r->key, '\b');
			break;
		case 'f':
			(void)sbuf_addch(&r->key, '\f');
			break;
		case 'n':
			(void)sbuf_addch(&r->key, '\n');
			break;
		case 'r':
			(void)sbuf_addch(&r->key, '\r');
			break;
		case 't':
			(void)sbuf_addch(&r->key, '\t');
			break;
		case 'u': {
			uint32_t cp, lo;

			if (read_hex4(r, &cp) < 0)
				return -1;
			if (cp >= 0xD800 && cp < 0xDC00 && r->end - r->p >= 6 &&
			    r->p[0] == '\\' && r->p[1] == 'u') {
				r->p += 2;
				if (read_hex4(r, &lo) < 0)
					return -1;
				if (lo >= 0xDC00 && lo < 0xE000)
					cp = 0x10000 + ((cp - 0xD800) << 10) +
					     (lo - 0xDC00);
				else
					cp = 0xFFFD;
			} else if (cp >= 0xD800 && cp < 0xE000) {
				cp = 0xFFFD;
			}
			put_utf8(&r->key, cp);
			break;
		}
		default:
			return -1;
		}
	}
	return -1;
}

/* An object into s (its members and children). */
static int read_object(struct rd *r, struct fset *s, int depth)
{
	bool first = true, any = false;

	if (depth > MAX_DEPTH)
		return -1;
	skip_ws(r);
	if (r->p >= r->end || *r->p != '{')
		return -1;
	r->p++;
	for (;;) {
		struct fset *kid;

		skip_ws(r);
		if (r->p < r->end && *r->p == '}' && first) {
			r->p++;
			break;
		}
		if (read_string(r) < 0)
			return -1;
		skip_ws(r);
		if (r->p >= r->end || *r->p++ != ':')
			return -1;
		if (r->key.len == 1 && r->key.buf[0] == '.') {
			/* "." marks the node itself; its value is {} */
			struct fset dot = { 0 };
			int rc = read_object(r, &dot, depth + 1);

			node_release(&dot);
			if (rc < 0)
				return -1;
			s->member = true;
		} else {
			if (!pe_valid(r->key.buf, r->key.len))
				return -1;
			kid = fset_child(s, r->key.buf, r->key.len, true);
			if (read_object(r, kid, depth + 1) < 0)
				return -1;
			any = true;
		}
		first = false;
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == '}') {
			r->p++;
			break;
		}
		return -1;
	}
	/* readIterV1: an object without children is a member. */
	if (!any)
		s->member = true;
	return 0;
}

struct fset *fset_parse(const char *text, size_t len)
{
	struct rd r = { text, text + len, SBUF_INIT };
	struct fset *s = fset_new();
	int rc = read_object(&r, s, 0);

	skip_ws(&r);
	sbuf_release(&r.key);
	if (rc < 0 || r.p != r.end) {
		fset_free(s);
		return NULL;
	}
	s->member = false; /* the root is never a member */
	return s;
}

static int from_json(struct fset *s, const json_t *o, int depth)
{
	const char *k;
	json_t *v;
	bool any = false;

	if (!json_is_object(o) || depth > MAX_DEPTH)
		return -1;
	json_object_foreach((json_t *)(uintptr_t)o, k, v) {
		size_t n = strlen(k);
		struct fset *kid;

		if (n == 1 && k[0] == '.') {
			if (!json_is_object(v))
				return -1;
			s->member = true;
			continue;
		}
		if (!pe_valid(k, n))
			return -1;
		kid = fset_child(s, k, n, true);
		if (from_json(kid, v, depth + 1) < 0)
			return -1;
		any = true;
	}
	if (!any)
		s->member = true;
	return 0;
}

struct fset *fset_from_json(const json_t *fields)
{
	struct fset *s = fset_new();

	if (from_json(s, fields, 0) < 0) {
		fset_free(s);
		return NULL;
	}
	s->member = false;
	return s;
}

/* A JSON string for key k: the escapes of encoding/json's compact form
 * that matter here (quote, backslash, control characters). */
static void put_key(struct sbuf *b, const char *k)
{
	static const char hex[] = "0123456789abcdef";

	(void)sbuf_addch(b, '"');
	for (const char *p = k; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"' || c == '\\') {
			(void)sbuf_addch(b, '\\');
			(void)sbuf_addch(b, (char)c);
		} else if (c < 0x20) {
			char e[6] = { '\\', 'u', '0', '0', hex[c >> 4],
				      hex[c & 15] };

			(void)sbuf_add(b, e, sizeof(e));
		} else {
			(void)sbuf_addch(b, (char)c);
		}
	}
	(void)sbuf_addch(b, '"');
}

/* The children of s as object members (emitContentsV1). */
static void put_contents(struct sbuf *b, const struct fset *s, bool self)
{
	bool first = true;

	if (self && s->member && s->n) {
		(void)sbuf_adds(b, "\".\":{}");
		first = false;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct fset *k = &s->kids[i];

		if (!k->member && fset_is_empty(k))
			continue;
		if (!first)
			(void)sbuf_addch(b, ',');
		first = false;
		put_key(b, k->pe);
		(void)sbuf_adds(b, ":{");
		put_contents(b, k, true);
		(void)sbuf_addch(b, '}');
	}
}

char *fset_encode(const struct fset *s, size_t *len)
{
	struct sbuf b = SBUF_INIT;

	(void)sbuf_addch(&b, '{');
	put_contents(&b, s, false);
	(void)sbuf_addch(&b, '}');
	return sbuf_detach(&b, len);
}

/* ---- iteration ---- */

struct walk {
	const char **path; /* owned array; borrowed texts */
	size_t n, cap;
	fset_each_fn *fn;
	void *cls;
};

static void each(struct walk *w, const struct fset *s)
{
	XGROW(w->path, w->cap, w->n + 1);
	for (size_t i = 0; i < s->n; i++) {
		if (!s->kids[i].member)
			continue;
		w->path[w->n] = s->kids[i].pe;
		w->fn(w->path, w->n + 1, w->cls);
	}
	for (size_t i = 0; i < s->n; i++) {
		if (!s->kids[i].n)
			continue;
		XGROW(w->path, w->cap, w->n + 1);
		w->path[w->n++] = s->kids[i].pe;
		each(w, &s->kids[i]);
		w->n--;
	}
}

void fset_each(const struct fset *s, fset_each_fn *fn, void *cls)
{
	struct walk w = { NULL, 0, 0, fn, cls };

	each(&w, s);
	free(w.path);
}
