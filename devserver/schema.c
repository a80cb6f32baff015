/*
 * schema: what apiextensions-apiserver does with a structural schema
 * (pruning, defaulting, OpenAPI validation, list-type invariants), on
 * borrowed jansson trees. The upstream code it follows, step by step:
 *   pruning   apiextensions pkg/apiserver/schema/pruning/algorithm.go and
 *             defaulting/prunenulls.go, objectmeta coercion at the root;
 *   defaults  apiextensions pkg/apiserver/schema/defaulting/algorithm.go;
 *   validate  k8s.io/kube-openapi pkg/validation/validate (schema.go,
 *             type.go, validator.go, values.go, object_validator.go,
 *             slice_validator.go) and its messages (errors/schema.go),
 *             converted to field errors as apiextensions' validation.go
 *             kubeOpenAPIResultToFieldErrors does, followed by
 *             schema/listtype/validation.go.
 * Pure: no I/O, no clock, no globals. Every walk stops 128 levels down so
 * hostile input cannot exhaust the stack; validation says so as an error.
 */
#include "devserver/schema.h"

#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/hmap.h"
#include "base/jx.h"
#include "base/sbuf.h"
#include "base/text.h"
#include "devserver/cel.h"
#include "model/goparse.h"
#include "model/svec.h"
#include "model/timestamp.h"

#define MAX_DEPTH 128

/* ------------------------------------------------------------------ */
/* Paths: one growing buffer, pushed and popped as the walks descend.  */

/* A path is an sbuf (never NULL once path_init ran), pushed and popped
 * as the walks descend. */
static void path_init(struct sbuf *p)
{
	sbuf_init(p, 0);
	sbuf_grow(p, 64);
}

/* Appends ".key" (or "key" at the root); returns the length to pop to. */
static size_t path_key(struct sbuf *p, const char *key)
{
	size_t old = p->len;

	if (p->len)
		sbuf_add(p, ".", 1);
	sbuf_adds(p, key);
	return old;
}

/* Appends "[i]". */
static size_t path_index(struct sbuf *p, size_t i)
{
	char b[32];
	size_t old = p->len;
	int n = snprintf(b, sizeof(b), "[%zu]", i);

	sbuf_add(p, b, (size_t)n);
	return old;
}

/* Appends "[key]" (field.Path.Key, used by the list-type checks). */
static size_t path_bracket(struct sbuf *p, const char *key)
{
	size_t old = p->len;

	sbuf_add(p, "[", 1);
	sbuf_adds(p, key);
	sbuf_add(p, "]", 1);
	return old;
}

static void path_pop(struct sbuf *p, size_t len)
{
	sbuf_setlen(p, len);
}

/* ------------------------------------------------------------------ */
/* Schema accessors. A schema node is a JSON object; anything else is   */
/* treated as "no schema".                                            */

static bool sflag(const json_t *s, const char *k)
{
	return json_is_true(json_object_get(s, k));
}

static const json_t *sprop(const json_t *s, const char *k)
{
	const json_t *v = json_object_get(json_object_get(s, "properties"), k);

	return json_is_object(v) ? v : NULL;
}

static const json_t *sitems(const json_t *s)
{
	const json_t *v = json_object_get(s, "items");

	return json_is_object(v) ? v : NULL;
}

/* additionalProperties: returns its schema (NULL for `true`) and says
 * whether unknown keys are allowed at all. `false` counts as absent. */
static const json_t *sadditional(const json_t *s, bool *present)
{
	const json_t *v = json_object_get(s, "additionalProperties");

	*present = json_is_object(v) || json_is_true(v);
	return json_is_object(v) ? v : NULL;
}

static bool snullable(const json_t *s)
{
	return sflag(s, "nullable");
}

/* A number keyword (maxLength, minimum, ...); false when absent. */
static bool snum(const json_t *s, const char *k, double *out)
{
	const json_t *v = json_object_get(s, k);

	if (!json_is_number(v))
		return false;
	*out = json_number_value(v);
	return true;
}

static int64_t to_int64(double d)
{
	if (isnan(d))
		return 0;
	if (d >= 9.2233720368547758e18)
		return INT64_MAX;
	if (d <= -9.2233720368547758e18)
		return INT64_MIN;
	return (int64_t)d; /* truncates toward zero, as Go's int64() */
}

static bool is_meta_field(const char *k)
{
	return !strcmp(k, "apiVersion") || !strcmp(k, "kind") ||
	       !strcmp(k, "metadata");
}

/* ------------------------------------------------------------------ */
/* Go value rendering, so messages read as field.Error prints them.     */


/* The text field.Error prints for a bad value: strings quoted (quote set),
 * numbers and booleans bare, null as NULL (printed "null"). Objects and
 * arrays come out as compact JSON where Go would print %#v. New string. */
static char *go_value(const json_t *v, bool *quote)
{
	char b[64];

	*quote = false;
	switch (json_typeof(v)) {
	case JSON_STRING:
		*quote = true;
		return xstrdup(json_string_value(v));
	case JSON_INTEGER:
		snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(v));
		return xstrdup(b);
	case JSON_REAL:
		goparse_format_float(json_real_value(v), b, sizeof(b));
		return xstrdup(b);
	case JSON_TRUE:
		return xstrdup("true");
	case JSON_FALSE:
		return xstrdup("false");
	case JSON_NULL:
		return NULL;
	default: {
		char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS |
					JSON_ENCODE_ANY);
		char *r = xstrdup(s ? s : "");

		free(s);
		return r;
	}
	}
}

/* Go's %#v of one scalar inside a map[string]interface{}. New string. */
static char *go_sharp_v(const json_t *v)
{
	bool quote;
	char *t, *q;

	if (json_is_null(v))
		return xstrdup("interface {}(nil)");
	t = go_value(v, &quote);
	if (!quote)
		return t;
	q = go_quote(t);
	free(t);
	return q;
}

/* ------------------------------------------------------------------ */
/* Pruning.                                                            */

struct pathvec {
	char **v;   /* owned strings */
	size_t n;
	size_t cap;
};

static void pathvec_push(struct pathvec *sv, char *s)
{
	XGROW(sv->v, sv->cap, sv->n + 1);
	sv->v[sv->n++] = s;
}

static void pathvec_release(struct pathvec *sv)
{
	for (size_t i = 0; i < sv->n; i++)
		free(sv->v[i]);
	free(sv->v);
	sv->v = NULL;
	sv->n = sv->cap = 0;
}

struct prune_ctx {
	struct sbuf path;          /* the field path, never NULL */
	struct pathvec pruned; /* paths of removed fields */
	bool record;          /* collect pruned paths at all */
};

static void prune_record(struct prune_ctx *c, const char *key)
{
	size_t old;

	if (!c->record)
		return;
	old = path_key(&c->path, key);
	pathvec_push(&c->pruned, xstrdup(c->path.buf));
	path_pop(&c->path, old);
}

/* ObjectMeta's JSON fields (k8s.io/apimachinery meta/v1 types.go), and
 * those of the two list members whose unknown fields the typed round
 * trip also drops. */
static const char *const objectmeta_fields[] = {
	"name", "generateName", "namespace", "selfLink", "uid",
	"resourceVersion", "generation", "creationTimestamp",
	"deletionTimestamp", "deletionGracePeriodSeconds", "labels",
	"annotations", "ownerReferences", "finalizers", "managedFields", NULL,
};
static const char *const ownerref_fields[] = {
	"apiVersion", "kind", "name", "uid", "controller",
	"blockOwnerDeletion", NULL,
};
static const char *const managedfield_fields[] = {
	"manager", "operation", "apiVersion", "time", "fieldsType",
	"fieldsV1", "subresource", NULL,
};

static bool in_list(const char *const *list, const char *k)
{
	for (size_t i = 0; list[i]; i++)
		if (!strcmp(list[i], k))
			return true;
	return false;
}

/* Drops the keys of obj not in allowed; records "<prefix>.<key>". */
static void drop_unknown(json_t *obj, const char *const *allowed,
			 const char *prefix, struct pathvec *out)
{
	const char *k;
	json_t *v;
	void *tmp;

	if (!json_is_object(obj))
		return;
	json_object_foreach_safe(obj, tmp, k, v) {
		(void)v;
		if (in_list(allowed, k))
			continue;
		if (out)
			pathvec_push(out, xasprintf("%s.%s", prefix, k));
		json_object_del(obj, k);
	}
}

/* Reduces a metadata object to ObjectMeta, as the typed round trip in
 * objectmeta.Coerce / GetObjectMetaWithOptions does. */
static void reduce_objectmeta(json_t *meta, struct pathvec *out)
{
	static const struct {
		const char *field;
		const char *const *allowed;
	} lists[] = {
		{ "ownerReferences", ownerref_fields },
		{ "managedFields", managedfield_fields },
	};

	if (!json_is_object(meta))
		return;
	drop_unknown(meta, objectmeta_fields, "metadata", out);
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++) {
		json_t *arr = json_object_get(meta, lists[l].field);
		size_t i;
		json_t *it;

		if (!json_is_array(arr))
			continue;
		json_array_foreach(arr, i, it) {
			char *pre = xasprintf("metadata.%s[%zu]",
					      lists[l].field, i);

			drop_unknown(it, lists[l].allowed, pre, out);
			free(pre);
		}
	}
}

static void prune_value(json_t *x, const json_t *s, struct prune_ctx *c,
			int depth, bool root);

/* skipPrune: x-kubernetes-preserve-unknown-fields keeps unknown keys but
 * still prunes inside the declared ones. */
static void prune_skip(json_t *x, const json_t *s, struct prune_ctx *c,
		       int depth, bool root)
{
	const char *k;
	json_t *v;
	size_t i, old;
	bool embedded = root || sflag(s, "x-kubernetes-embedded-resource");

	if (json_is_object(x)) {
		json_object_foreach(x, k, v) {
			const json_t *ps;
			const json_t *as;
			bool ap;

			if (embedded && is_meta_field(k))
				continue;
			ps = sprop(s, k);
			as = sadditional(s, &ap);
			if (!ps && !ap)
				continue;
			old = path_key(&c->path, k);
			prune_value(v, ps ? ps : as, c, depth + 1, false);
			path_pop(&c->path, old);
		}
		if (embedded && !root)
			reduce_objectmeta(json_object_get(x, "metadata"), NULL);
	} else if (json_is_array(x)) {
		json_array_foreach(x, i, v) {
			old = path_index(&c->path, i);
			prune_value(v, sitems(s), c, depth + 1, false);
			path_pop(&c->path, old);
		}
	}
}

static void prune_value(json_t *x, const json_t *s, struct prune_ctx *c,
			int depth, bool root)
{
	const char *k;
	json_t *v;
	void *tmp;
	size_t i, old;

	if (depth > MAX_DEPTH)
		return;
	if (s && sflag(s, "x-kubernetes-preserve-unknown-fields")) {
		prune_skip(x, s, c, depth, root);
		return;
	}
	if (json_is_object(x)) {
		bool embedded = root || sflag(s, "x-kubernetes-embedded-resource");

		if (!s) {
			json_object_foreach_safe(x, tmp, k, v) {
				prune_record(c, k);
				json_object_del(x, k);
			}
			return;
		}
		json_object_foreach_safe(x, tmp, k, v) {
			const json_t *ps, *as;
			bool ap;

			if (embedded && is_meta_field(k))
				continue;
			ps = sprop(s, k);
			as = sadditional(s, &ap);
			if (ps || ap) {
				old = path_key(&c->path, k);
				prune_value(v, ps ? ps : as, c, depth + 1, false);
				path_pop(&c->path, old);
				continue;
			}
			if (!is_meta_field(k) || c->path.len > 0)
				prune_record(c, k);
			json_object_del(x, k);
		}
		/* Embedded resources get their metadata coerced to ObjectMeta
		 * (not reported); the root's is done by schema_prune. */
		if (embedded && !root)
			reduce_objectmeta(json_object_get(x, "metadata"), NULL);
	} else if (json_is_array(x)) {
		json_array_foreach(x, i, v) {
			old = path_index(&c->path, i);
			prune_value(v, s ? sitems(s) : NULL, c, depth + 1, false);
			path_pop(&c->path, old);
		}
	}
}

/* The schema for key k of an object described by s (a property, else the
 * additionalProperties schema). */
static const json_t *field_schema(const json_t *s, const char *k)
{
	const json_t *ps = sprop(s, k);
	bool ap;

	return ps ? ps : sadditional(s, &ap);
}

/* PruneNonNullableNullsWithoutDefaults: nulls the schema neither allows
 * nor can default are dropped silently. */
static void drop_nulls(json_t *x, const json_t *s, int depth)
{
	const char *k;
	json_t *v;
	void *tmp;
	size_t i;

	if (depth > MAX_DEPTH)
		return;
	if (json_is_object(x)) {
		json_object_foreach_safe(x, tmp, k, v) {
			const json_t *fs = field_schema(s, k);

			if (json_is_null(v) && fs && !snullable(fs) &&
			    !json_object_get(fs, "default"))
				json_object_del(x, k);
			else
				drop_nulls(v, fs, depth + 1);
		}
	} else if (json_is_array(x)) {
		json_array_foreach(x, i, v)
			drop_nulls(v, sitems(s), depth + 1);
	}
}

/*
 * Order as unstructuredSchemaCoercer.apply: 1. prune (paths sorted),
 * 2. drop non-nullable nulls, 3. reduce the root metadata to ObjectMeta
 * (its unknown fields reported after the pruned ones). A NULL schema
 * means "no schema known" and prunes nothing.
 */
void schema_prune(json_t *obj, const json_t *schema, json_t *unknown)
{
	struct prune_ctx c;
	struct pathvec meta = { NULL, 0, 0 };

	if (!json_is_object(obj) || !json_is_object(schema))
		return;
	path_init(&c.path);
	c.pruned.v = NULL;
	c.pruned.n = c.pruned.cap = 0;
	c.record = unknown != NULL;
	prune_value(obj, schema, &c, 0, true);
	drop_nulls(obj, schema, 0);
	reduce_objectmeta(json_object_get(obj, "metadata"),
			  unknown ? &meta : NULL);
	if (unknown && json_is_array(unknown)) {
		if (c.pruned.n)
			qsort(c.pruned.v, c.pruned.n, sizeof(char *), svec_cmp);
		for (size_t i = 0; i < c.pruned.n; i++)
			json_array_append_new(unknown, json_string(c.pruned.v[i]));
		for (size_t i = 0; i < meta.n; i++)
			json_array_append_new(unknown, json_string(meta.v[i]));
	}
	pathvec_release(&meta);
	pathvec_release(&c.pruned);
	sbuf_release(&c.path);
}

/* ------------------------------------------------------------------ */
/* Defaulting.                                                         */

static bool is_nonnullable_null(const json_t *v, const json_t *s)
{
	return json_is_null(v) && s && !snullable(s);
}

static void default_value(json_t *x, const json_t *s, int depth)
{
	const char *k;
	json_t *v;
	void *tmp;
	size_t i;

	if (!s || depth > MAX_DEPTH)
		return;
	if (json_is_object(x)) {
		const json_t *props = json_object_get(s, "properties");
		const json_t *as;
		const json_t *ps;
		bool ap;

		/* 1. absent (or null and non-nullable) properties with a
		 *    default get a copy of it */
		if (json_is_object(props)) {
			json_object_foreach((json_t *)props, k, v) {
				const json_t *d = json_object_get(v, "default");
				json_t *have;

				if (!d)
					continue;
				have = json_object_get(x, k);
				if (!have || is_nonnullable_null(have, v))
					json_object_set_new(x, k, json_deep_copy(d));
			}
		}
		/* 2. recurse into every value, the new ones included, so
		 *    defaults inside defaulted objects apply too */
		as = sadditional(s, &ap);
		json_object_foreach_safe(x, tmp, k, v) {
			const json_t *dflt = json_object_get(as, "default");

			ps = sprop(s, k);
			if (ps) {
				default_value(v, ps, depth + 1);
				continue;
			}
			if (!as)
				continue;
			if (is_nonnullable_null(v, as) && dflt) {
				json_object_set_new(x, k, json_deep_copy(dflt));
				v = json_object_get(x, k);
			}
			default_value(v, as, depth + 1);
		}
	} else if (json_is_array(x)) {
		const json_t *is = sitems(s);

		json_array_foreach(x, i, v) {
			const json_t *dflt = json_object_get(is, "default");

			if (is_nonnullable_null(v, is) && dflt) {
				json_array_set_new(x, i, json_deep_copy(dflt));
				v = json_array_get(x, i);
			}
			default_value(v, is, depth + 1);
		}
	}
}

void schema_default(json_t *obj, const json_t *schema)
{
	if (!json_is_object(schema))
		return;
	default_value(obj, schema, 0);
}

/* ------------------------------------------------------------------ */
/* ECMA-262 pattern -> POSIX ERE.                                      */

/* Encodes code point cp as UTF-8 into out (>= 4 bytes); returns length. */
static size_t utf8_put(unsigned cp, char *out)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xC0 | (cp >> 6));
		out[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	out[0] = (char)(0xE0 | (cp >> 12));
	out[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
	out[2] = (char)(0x80 | (cp & 0x3F));
	return 3;
}

/* Reads \uXXXX or \xXX at p (after the backslash); returns bytes used or
 * 0 when malformed. */
static size_t read_hex_escape(const char *p, unsigned *cp)
{
	size_t n = *p == 'u' ? 4 : 2;

	*cp = 0;
	for (size_t i = 1; i <= n; i++) {
		int h = text_hexval(p[i]);

		if (h < 0)
			return 0;
		*cp = *cp * 16 + (unsigned)h;
	}
	return n + 1;
}

/* A literal character outside brackets, escaped when ERE-special. */
static void put_literal(struct sbuf *b, const char *lit, size_t n)
{
	if (n == 1 && strchr(".[]()*+?{}|^$\\", lit[0]))
		sbuf_addch(b, '\\');
	sbuf_add(b, lit, n);
}

/*
 * Translates the ECMA subset CRD patterns use: \d \w \s and negations,
 * escaped punctuation, \n \t \r \uXXXX \xXX, (?:...), lazy quantifiers
 * (same match set), and bracket expressions with escapes inside.
 * Returns a new string, or NULL for what POSIX cannot express (look-
 * around, back references, \b, negated classes inside brackets); the
 * caller then skips the pattern.
 */
static char *ecma_to_posix(const char *pat)
{
	struct sbuf b = SBUF_INIT;
	const char *p = pat;

	while (*p) {
		if (*p == '\\') {
			char c = p[1];
			char u[4];
			unsigned cp;
			size_t used;

			switch (c) {
			case 'd': sbuf_adds(&b, "[0-9]"); p += 2; continue;
			case 'D': sbuf_adds(&b, "[^0-9]"); p += 2; continue;
			case 'w': sbuf_adds(&b, "[A-Za-z0-9_]"); p += 2; continue;
			case 'W': sbuf_adds(&b, "[^A-Za-z0-9_]"); p += 2; continue;
			case 's': sbuf_adds(&b, "[[:space:]]"); p += 2; continue;
			case 'S': sbuf_adds(&b, "[^[:space:]]"); p += 2; continue;
			case 'n': sbuf_addch(&b, '\n'); p += 2; continue;
			case 't': sbuf_addch(&b, '\t'); p += 2; continue;
			case 'r': sbuf_addch(&b, '\r'); p += 2; continue;
			case 'u':
			case 'x':
				used = read_hex_escape(p + 1, &cp);
				if (!used || cp > 0xFFFF)
					goto fail;
				put_literal(&b, u, utf8_put(cp, u));
				p += 1 + used;
				continue;
			case '\0':
				goto fail;
			default:
				if ((c >= '0' && c <= '9') || c == 'b' || c == 'B' ||
				    c == 'p' || c == 'P' || c == 'k' || c == 'c')
					goto fail;
				put_literal(&b, &c, 1);
				p += 2;
				continue;
			}
		}
		if (*p == '(' && p[1] == '?') {
			if (p[2] != ':')
				goto fail; /* look-around, named groups, flags */
			sbuf_addch(&b, '(');
			p += 3;
			continue;
		}
		if ((*p == '*' || *p == '+' || *p == '?' || *p == '}') &&
		    p[1] == '?') {
			sbuf_addch(&b, *p); /* lazy: same strings match */
			p += 2;
			continue;
		}
		if (*p == '[') {
			/* Collect members, then emit them in an order POSIX
			 * reads literally: ']' first, '-' last, '^' not first. */
			struct sbuf m = SBUF_INIT;
			bool neg = false, rbr = false, hyph = false, caret = false;

			p++;
			if (*p == '^') {
				neg = true;
				p++;
			}
			while (*p && *p != ']') {
				if (*p == '\\') {
					char c = p[1];
					char u[4];
					unsigned cp;
					size_t used;

					p += 2;
					switch (c) {
					case 'd': sbuf_adds(&m, "0-9"); continue;
					case 'w': sbuf_adds(&m, "A-Za-z0-9_"); continue;
					case 's': sbuf_adds(&m, "[:space:]"); continue;
					case 'n': sbuf_addch(&m, '\n'); continue;
					case 't': sbuf_addch(&m, '\t'); continue;
					case 'r': sbuf_addch(&m, '\r'); continue;
					case ']': rbr = true; continue;
					case '-': hyph = true; continue;
					case '^': caret = true; continue;
					case 'u':
					case 'x':
						used = read_hex_escape(p - 1, &cp);
						if (!used || cp > 0xFFFF) {
							sbuf_release(&m);
							goto fail;
						}
						sbuf_add(&m, u, utf8_put(cp, u));
						p += used - 1;
						continue;
					case '\0':
					case 'D':
					case 'W':
					case 'S':
					case 'b':
						sbuf_release(&m);
						goto fail;
					default:
						sbuf_addch(&m, c);
						continue;
					}
				}
				if (*p == '[' && p[1] == ':') {
					sbuf_adds(&m, "[:"); /* keep POSIX classes */
					p += 2;
					continue;
				}
				sbuf_addch(&m, *p++);
			}
			if (*p != ']') {
				sbuf_release(&m);
				goto fail;
			}
			p++;
			if (!m.len && !rbr && !hyph && caret && !neg) {
				sbuf_adds(&b, "\\^");
			} else if (!m.len && !rbr && !hyph && !caret) {
				/* ECMA [^] matches anything; [] nothing, which
				 * ERE cannot say */
				sbuf_release(&m);
				if (!neg)
					goto fail;
				sbuf_adds(&b, "(.|\n)");
				continue;
			} else {
				sbuf_addch(&b, '[');
				if (neg)
					sbuf_addch(&b, '^');
				if (rbr)
					sbuf_addch(&b, ']');
				if (caret && !m.len && !rbr) {
					/* "^" alone must not come first */
					if (hyph) {
						sbuf_adds(&b, "-^");
						hyph = false;
						caret = false;
					}
				}
				sbuf_adds(&b, sbuf_cstr(&m));
				if (caret)
					sbuf_addch(&b, '^');
				if (hyph)
					sbuf_addch(&b, '-');
				sbuf_addch(&b, ']');
			}
			sbuf_release(&m);
			continue;
		}
		sbuf_addch(&b, *p++);
	}
	return sbuf_detach(&b, NULL);
fail:
	sbuf_release(&b);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Validation.                                                         */

/*
 * Compiled patterns shared by every validation in the process. A CRD has
 * a few dozen patterns and its objects are validated on every write:
 * compiling them per validation was about a tenth of the devserver's CPU
 * under a stream of writes. Keyed by the pattern text (schemas are
 * replaced when a CRD changes, their texts repeat), in a hash map that
 * only grows; entries live until exit. Past RX_MAX entries a new pattern
 * is compiled for its validation alone, as before. regcomp
 * runs under rx_lock (once per distinct pattern); regexec on a shared
 * regex_t is thread-safe (POSIX; glibc locks inside).
 */
#define RX_MAX 512 /* shared patterns at most */

struct rx_shared {
	char *pat;     /* owned; the ECMA pattern, its key in rx_map */
	bool ok;       /* compiled; false: pattern ignored */
	regex_t re;    /* valid when ok */
};

static pthread_mutex_t rx_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hmap rx_map = HMAP_INIT; /* pattern -> rx_shared; under
					 rx_lock */

static bool rx_compile(regex_t *re, const char *pat)
{
	char *posix = ecma_to_posix(pat);
	bool ok = posix &&
		  regcomp(re, posix, REG_EXTENDED | REG_NOSUB) == 0;

	free(posix);
	return ok;
}

/* The shared entry for pat, made if missing; NULL when RX_MAX patterns
 * are shared and pat is not one of them. */
static const struct rx_shared *rx_lookup(const char *pat)
{
	struct rx_shared *e;

	pthread_mutex_lock(&rx_lock);
	e = hmap_get(&rx_map, pat);
	if (e || hmap_count(&rx_map) >= RX_MAX)
		goto out; /* found; or full, and e is NULL */
	e = xcalloc(1, sizeof(*e));
	e->pat = xstrdup(pat);
	e->ok = rx_compile(&e->re, pat);
	hmap_put(&rx_map, e->pat, e);
out:
	pthread_mutex_unlock(&rx_lock);
	return e;
}

struct rx_entry {
	const json_t *node; /* the schema node whose pattern this is */
	const regex_t *shared; /* the shared compiled pattern, or NULL */
	bool own;           /* compiled for this call alone, in mine */
	regex_t mine;
};

struct vctx {
	struct field_errors *fe;
	struct sbuf path;          /* the field path, never NULL */
	struct rx_entry *rx; /* the patterns this call met */
	size_t nrx;
	size_t caprx;
};

static void vctx_release(struct vctx *c)
{
	for (size_t i = 0; i < c->nrx; i++)
		if (c->rx[i].own)
			regfree(&c->rx[i].mine);
	free(c->rx);
	sbuf_release(&c->path);
}

/* The compiled pattern of schema node s, or NULL if it cannot be used. */
static const regex_t *pattern_of(struct vctx *c, const json_t *s,
				 const char *pat)
{
	const struct rx_shared *sh;
	struct rx_entry *e;

	for (size_t i = 0; i < c->nrx; i++)
		if (c->rx[i].node == s)
			return c->rx[i].own ? &c->rx[i].mine
					    : c->rx[i].shared;
	XGROW(c->rx, c->caprx, c->nrx + 1);
	e = &c->rx[c->nrx++];
	e->node = s;
	e->shared = NULL;
	e->own = false;
	sh = rx_lookup(pat);
	if (sh)
		e->shared = sh->ok ? &sh->re : NULL;
	else
		e->own = rx_compile(&e->mine, pat);
	return e->own ? &e->mine : e->shared;
}

/* Appends an Invalid error whose value is the JSON value v. */
static void add_invalid(struct vctx *c, const json_t *v, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

static void add_invalid(struct vctx *c, const json_t *v, const char *fmt, ...)
{
	char detail[1024];
	va_list ap;
	bool quote;
	char *val = go_value(v, &quote);

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	fe_add(c->fe, FE_INVALID, c->path.buf, val, quote, "%s", detail);
	free(val);
}

/* InvalidType -> field.TypeInvalid: value is the Go type (or format)
 * name found, message "<path> in body must be of type <want>: <%q>". */
static void add_type(struct vctx *c, const char *want, const char *got)
{
	char *q = go_quote(got);

	fe_add(c->fe, FE_TYPE, c->path.buf, got, true, "%s: %s", want, q);
	free(q);
}

static const char *type_name_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	default: return "null";
	}
}

/* swag.IsFloat64AJSONInteger: finite, integral, within +-2^53. */
static bool is_json_integer(double f)
{
	if (!isfinite(f) || f < -9007199254740992.0 || f > 9007199254740992.0)
		return false;
	return f == trunc(f);
}

/* The schema's type list: x-kubernetes-int-or-string is integer,string. */
static size_t schema_types(const json_t *s, const char *types[2])
{
	const char *t = jx_str(s, "type");

	if (sflag(s, "x-kubernetes-int-or-string")) {
		types[0] = "integer";
		types[1] = "string";
		return 2;
	}
	if (t && *t) {
		types[0] = t;
		return 1;
	}
	return 0;
}

static bool types_have(const char *const *types, size_t n, const char *t)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(types[i], t))
			return true;
	return false;
}

/* typeValidator.Validate for a non-null value; false when it failed. */
static bool check_type(struct vctx *c, const json_t *v, const json_t *s)
{
	const char *types[2];
	size_t nt = schema_types(s, types);
	const char *format = jx_str(s, "format");
	const char *got = type_name_of(v);
	const char *gotfmt = json_is_integer(v) ? "int64" :
			     json_is_real(v) ? "float64" : "";
	bool str_or_arr = json_is_string(v) || json_is_array(v);
	bool float_int, int_float, ok;
	char want[32];

	if (!format)
		format = "";
	if (!nt && !*format)
		return true;
	float_int = json_is_real(v) && is_json_integer(json_real_value(v)) &&
		    types_have(types, nt, "integer");
	int_float = json_is_integer(v) && types_have(types, nt, "number");
	ok = types_have(types, nt, got) || float_int || int_float;
	if (!str_or_arr && *format && !(ok || !strcmp(gotfmt, format))) {
		add_type(c, format, gotfmt);
		return false;
	}
	if (!types_have(types, nt, "number") && !types_have(types, nt, "integer") &&
	    *format && str_or_arr)
		return true;
	if (!ok) {
		snprintf(want, sizeof(want), "%s%s%s", nt ? types[0] : "",
			 nt > 1 ? "," : "", nt > 1 ? types[1] : "");
		add_type(c, want, got);
		return false;
	}
	return true;
}

/* An extension of ours: kube-openapi does not range-check format int32
 * (its numberValidator gets no type/format from a schema); we do, with
 * the words of its IsValueValidAgainstRange. */
static void check_int32(struct vctx *c, const json_t *v, const json_t *s)
{
	const char *format = jx_str(s, "format");
	double d;

	if (!format || strcmp(format, "int32") || !json_is_number(v))
		return;
	d = json_number_value(v);
	if (json_is_real(v) && !is_json_integer(d))
		return;
	if (json_is_integer(v) ? (json_integer_value(v) >= INT32_MIN &&
				  json_integer_value(v) <= INT32_MAX)
			       : (d >= INT32_MIN && d <= INT32_MAX))
		return;
	add_invalid(c, v, "Checked value must be of type integer with format int32 in %s",
		    c->path.buf);
}

static size_t rune_count(const char *s)
{
	size_t n = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p & 0xC0) != 0x80)
			n++;
	return n;
}

/* stringValidator: maxLength, minLength, pattern; the first failure only. */
static void check_string(struct vctx *c, const json_t *v, const json_t *s)
{
	const char *str = json_string_value(v);
	const char *pat = jx_str(s, "pattern");
	size_t runes = rune_count(str);
	double lim;

	if (snum(s, "maxLength", &lim) && (double)runes > lim) {
		fe_too_long(c->fe, c->path.buf, (size_t)to_int64(lim));
		return;
	}
	if (snum(s, "minLength", &lim) && (double)runes < lim) {
		add_invalid(c, v, "%s in body should be at least %lld chars long",
			    c->path.buf, (long long)to_int64(lim));
		return;
	}
	if (pat && *pat) {
		const regex_t *re = pattern_of(c, s, pat);

		if (re && regexec(re, str, 0, NULL, 0) != 0)
			add_invalid(c, v, "%s in body should match '%s'",
				    c->path.buf, pat);
	}
}

/* formatValidator for the formats we check: date-time. */
static void check_format(struct vctx *c, const json_t *v, const json_t *s)
{
	const char *format = jx_str(s, "format");
	const char *str = json_string_value(v);
	int64_t ms;

	if (!format || (strcmp(format, "date-time") && strcmp(format, "datetime")))
		return;
	if (timestamp_parse(str, &ms) == 0)
		return;
	{
		char *q = go_quote(str);

		fe_add(c->fe, FE_TYPE, c->path.buf, str, true, "%s: %s", format, q);
		free(q);
	}
}

/* numberValidator: multipleOf, minimum, maximum, in that order. Integers
 * compare against the bound truncated to int64 (MinimumNativeType). */
static void check_number(struct vctx *c, const json_t *v, const json_t *s)
{
	bool isint = json_is_integer(v);
	long long iv = isint ? (long long)json_integer_value(v) : 0;
	double fv = json_number_value(v), b;
	char bs[64];

	if (snum(s, "multipleOf", &b) && b > 0) {
		bool bad;

		if (isint && to_int64(b) > 0) {
			bad = iv % (long long)to_int64(b) != 0;
			snprintf(bs, sizeof(bs), "%lld", (long long)to_int64(b));
		} else {
			double mult = b < 1 ? 1 / b * fv : fv / b;

			bad = !is_json_integer(mult);
			goparse_format_float(b, bs, sizeof(bs));
		}
		if (bad)
			add_invalid(c, v, "%s in body should be a multiple of %s",
				    c->path.buf, bs);
	}
	if (snum(s, "minimum", &b)) {
		bool excl = sflag(s, "exclusiveMinimum");
		bool bad;

		if (isint) {
			long long m = (long long)to_int64(b);

			bad = excl ? iv <= m : iv < m;
			snprintf(bs, sizeof(bs), "%lld", m);
		} else {
			bad = excl ? fv <= b : fv < b;
			goparse_format_float(b, bs, sizeof(bs));
		}
		if (bad)
			add_invalid(c, v, "%s in body should be greater than %s%s",
				    c->path.buf, excl ? "" : "or equal to ", bs);
	}
	if (snum(s, "maximum", &b)) {
		bool excl = sflag(s, "exclusiveMaximum");
		bool bad;

		if (isint) {
			long long m = (long long)to_int64(b);

			bad = excl ? iv >= m : iv > m;
			snprintf(bs, sizeof(bs), "%lld", m);
		} else {
			bad = excl ? fv >= b : fv > b;
			goparse_format_float(b, bs, sizeof(bs));
		}
		if (bad)
			add_invalid(c, v, "%s in body should be less than %s%s",
				    c->path.buf, excl ? "" : "or equal to ", bs);
	}
}

/* Enum membership with reflect's conversions between numbers. */
static bool enum_match(const json_t *v, const json_t *e)
{
	if (json_is_number(v) && json_is_number(e)) {
		if (json_is_integer(e) && json_is_real(v))
			return to_int64(json_real_value(v)) == json_integer_value(e);
		return json_number_value(v) == json_number_value(e);
	}
	return json_equal((json_t *)v, (json_t *)e);
}

/* basicCommonValidator -> field.NotSupported: strings listed as they
 * are, other values as JSON, each quoted like strconv.Quote. */
static void check_enum(struct vctx *c, const json_t *v, const json_t *s)
{
	const json_t *en = json_object_get(s, "enum");
	const json_t *e;
	struct sbuf list = SBUF_INIT;
	size_t i;
	bool quote;
	char *val;

	if (!json_is_array(en) || !json_array_size(en))
		return;
	json_array_foreach(en, i, e)
		if (enum_match(v, e))
			return;
	json_array_foreach(en, i, e) {
		char *raw = json_is_string(e) ? xstrdup(json_string_value(e)) :
			    json_dumps(e, JSON_COMPACT | JSON_ENCODE_ANY);
		char *q = go_quote(raw ? raw : "");

		if (i)
			sbuf_adds(&list, ", ");
		sbuf_adds(&list, q);
		free(q);
		free(raw);
	}
	val = go_value(v, &quote);
	fe_add(c->fe, FE_UNSUPPORTED, c->path.buf, val, quote, "%s", sbuf_cstr(&list));
	free(val);
	sbuf_release(&list);
}

static void validate_value(struct vctx *c, const json_t *v, const json_t *s,
			   int depth);

/* schemaSliceValidator: items first, then minItems, maxItems. */
static void check_array(struct vctx *c, const json_t *v, const json_t *s,
			int depth)
{
	const json_t *is = sitems(s);
	size_t n = json_array_size(v), i, old;
	const json_t *it;
	double lim;

	if (is) {
		json_array_foreach(v, i, it) {
			old = path_index(&c->path, i);
			validate_value(c, it, is, depth + 1);
			path_pop(&c->path, old);
		}
	}
	if (snum(s, "minItems", &lim) && (double)n < lim) {
		json_t *size = json_integer((json_int_t)n);

		add_invalid(c, size, "%s in body should have at least %lld items",
			    c->path.buf, (long long)to_int64(lim));
		json_decref(size);
	}
	if (snum(s, "maxItems", &lim) && (double)n > lim)
		fe_too_many(c->fe, c->path.buf, n, (size_t)to_int64(lim));
}

/* objectValidator: min/maxProperties (and stop), unknown keys against
 * additionalProperties, declared properties, then required. */
static void check_object(struct vctx *c, const json_t *v, const json_t *s,
			 int depth)
{
	size_t n = json_object_size(v), old, i;
	const json_t *props = json_object_get(s, "properties");
	const json_t *apv = json_object_get(s, "additionalProperties");
	const json_t *req = json_object_get(s, "required");
	const json_t *pv;
	const char *k;
	json_t *val;
	double lim;

	if (snum(s, "minProperties", &lim) && (double)n < lim) {
		json_t *size = json_integer((json_int_t)n);

		add_invalid(c, size, "%s in body should have at least %lld properties",
			    c->path.buf, (long long)to_int64(lim));
		json_decref(size);
		return;
	}
	if (snum(s, "maxProperties", &lim) && (double)n > lim) {
		fe_too_many(c->fe, c->path.buf, n, (size_t)to_int64(lim));
		return;
	}
	if (json_is_false(apv) || json_is_object(apv)) {
		json_object_foreach((json_t *)v, k, val) {
			if (sprop(s, k))
				continue;
			if (json_is_false(apv)) {
				json_t *key = json_string(k);

				add_invalid(c, key, "%s.%s in body is a forbidden property",
					    c->path.buf, k);
				json_decref(key);
				continue;
			}
			old = path_key(&c->path, k);
			validate_value(c, val, apv, depth + 1);
			path_pop(&c->path, old);
		}
	}
	if (json_is_object(props)) {
		json_object_foreach((json_t *)props, k, pv) {
			val = json_object_get(v, k);
			if (!val || !json_is_object(pv))
				continue;
			old = path_key(&c->path, k);
			validate_value(c, val, pv, depth + 1);
			path_pop(&c->path, old);
		}
	}
	if (json_is_array(req)) {
		json_array_foreach(req, i, pv) {
			if (!json_is_string(pv) ||
			    json_object_get(v, json_string_value(pv)))
				continue;
			old = path_key(&c->path, json_string_value(pv));
			fe_required(c->fe, c->path.buf, NULL);
			path_pop(&c->path, old);
		}
	}
}

/* SchemaValidator.Validate: every validator that applies to the value's
 * kind runs (type, string, format, number, slice, enum, object), so a
 * type error does not hide the others. */
static void validate_value(struct vctx *c, const json_t *v, const json_t *s,
			   int depth)
{
	if (!json_is_object(s))
		return;
	if (depth > MAX_DEPTH) {
		fe_forbidden(c->fe, c->path.buf,
			     "nesting deeper than 128 levels is not supported");
		return;
	}
	if (json_is_null(v)) {
		const char *types[2];
		size_t nt = schema_types(s, types);

		if (nt && !snullable(s)) {
			char want[32];

			snprintf(want, sizeof(want), "%s%s%s", types[0],
				 nt > 1 ? "," : "", nt > 1 ? types[1] : "");
			add_type(c, want, "null");
		}
		check_enum(c, v, s);
		return;
	}
	if (check_type(c, v, s))
		check_int32(c, v, s);
	if (json_is_string(v)) {
		check_string(c, v, s);
		check_format(c, v, s);
	}
	if (json_is_number(v))
		check_number(c, v, s);
	if (json_is_array(v))
		check_array(c, v, s, depth);
	check_enum(c, v, s);
	if (json_is_object(v))
		check_object(c, v, s, depth);
}

/* ---- list-type invariants (listtype/validation.go) ---- */

struct keyed {
	char *key;  /* owned canonical form */
	size_t idx; /* position in the list */
};

static int keyed_cmp(const void *a, const void *b)
{
	const struct keyed *x = a, *y = b;
	int r = strcmp(x->key, y->key);

	if (r)
		return r;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;

	return x < y ? -1 : x > y;
}

/* A type-tagged canonical string; v NULL means "key not specified".
 * Go keeps scalars by value (int64 1 and float64 1 differ) and compounds
 * by their JSON, which is what the tags reproduce. */
static char *canon(const json_t *v)
{
	char b[64];
	char *j, *r;

	if (!v)
		return xstrdup("u");
	switch (json_typeof(v)) {
	case JSON_STRING:
		return xasprintf("s%s", json_string_value(v));
	case JSON_INTEGER:
		snprintf(b, sizeof(b), "i%lld", (long long)json_integer_value(v));
		return xstrdup(b);
	case JSON_REAL:
		snprintf(b, sizeof(b), "f%.17g", json_real_value(v));
		return xstrdup(b);
	case JSON_TRUE:
		return xstrdup("b1");
	case JSON_FALSE:
		return xstrdup("b0");
	case JSON_NULL:
		return xstrdup("n");
	default:
		j = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		r = xasprintf("j%s", j ? j : "");
		free(j);
		return r;
	}
}

/* validateListSet over keys[0..n): the index of the second appearance
 * of every repeated key, ascending. Returns the count; *out is new. */
static size_t find_duplicates(struct keyed *keys, size_t n, size_t **out)
{
	size_t *dup = NULL, nd = 0, cap = 0;

	*out = NULL;
	if (n < 2)
		return 0;
	qsort(keys, n, sizeof(*keys), keyed_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && !strcmp(keys[j].key, keys[i].key))
			j++;
		if (j - i >= 2) {
			XGROW(dup, cap, nd + 1);
			dup[nd++] = keys[i + 1].idx;
		}
		i = j;
	}
	if (nd)
		qsort(dup, nd, sizeof(*dup), size_cmp);
	*out = dup;
	return nd;
}

static void free_keys(struct keyed *keys, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(keys[i].key);
	free(keys);
}

/* The key of a list-map entry: the map-keys present, as Go's %#v of a
 * map[string]interface{} prints them (keys sorted). New string. */
static char *map_key_text(const json_t *item, const json_t *mapkeys,
			  bool single)
{
	struct sbuf b = SBUF_INIT;
	const char **names = NULL;
	size_t n = 0, cap = 0, i;
	const json_t *k;

	sbuf_adds(&b, "map[string]interface {}{");
	json_array_foreach(mapkeys, i, k) {
		if (!json_is_string(k) || !json_is_object(item) ||
		    !json_object_get(item, json_string_value(k)))
			continue;
		XGROW(names, cap, n + 1);
		names[n++] = json_string_value(k);
		if (single)
			break;
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), svec_cmp);
	for (i = 0; i < n; i++) {
		char *kq = go_quote(names[i]);
		char *vq = go_sharp_v(json_object_get(item, names[i]));

		if (i)
			sbuf_adds(&b, ", ");
		sbuf_adds(&b, kq);
		sbuf_addch(&b, ':');
		sbuf_adds(&b, vq);
		free(kq);
		free(vq);
	}
	sbuf_addch(&b, '}');
	free(names);
	return sbuf_detach(&b, NULL);
}

static void check_list_set(struct vctx *c, const json_t *arr)
{
	size_t n = json_array_size(arr), nd, *dup;
	struct keyed *keys = xcalloc(n ? n : 1, sizeof(*keys));

	for (size_t i = 0; i < n; i++) {
		keys[i].key = canon(json_array_get(arr, i));
		keys[i].idx = i;
	}
	nd = find_duplicates(keys, n, &dup);
	for (size_t d = 0; d < nd; d++) {
		const json_t *it = json_array_get(arr, dup[d]);
		size_t old = path_index(&c->path, dup[d]);
		bool quote;
		char *val = go_value(it, &quote);

		fe_add(c->fe, FE_DUPLICATE, c->path.buf, val, quote, NULL);
		free(val);
		path_pop(&c->path, old);
	}
	free(dup);
	free_keys(keys, n);
}

static void check_list_map(struct vctx *c, const json_t *arr, const json_t *s)
{
	const json_t *mapkeys =
		json_object_get(s, "x-kubernetes-list-map-keys");
	size_t n = json_array_size(arr), nd, *dup, i, j;
	const json_t *it, *k;
	struct keyed *keys;
	bool single;

	json_array_foreach(arr, i, it) {
		if (!json_is_null(it) && !json_is_object(it)) {
			size_t old = path_index(&c->path, i);

			add_invalid(c, it, "must be an object for an array of list-type map");
			path_pop(&c->path, old);
			return;
		}
	}
	if (n < 2 || !json_is_array(mapkeys))
		return;
	single = json_array_size(mapkeys) == 1;
	keys = xcalloc(n, sizeof(*keys));
	json_array_foreach(arr, i, it) {
		struct sbuf b = SBUF_INIT;

		json_array_foreach(mapkeys, j, k) {
			const json_t *kv = json_is_object(it) && json_is_string(k) ?
				json_object_get(it, json_string_value(k)) : NULL;
			char *cv;

			if (!single && !kv)
				continue; /* absent keys leave the map */
			cv = canon(kv);
			sbuf_adds(&b, json_is_string(k) ? json_string_value(k) : "");
			sbuf_addch(&b, '\x1f');
			sbuf_adds(&b, cv);
			sbuf_addch(&b, '\x1e');
			free(cv);
		}
		keys[i].key = sbuf_detach(&b, NULL);
		keys[i].idx = i;
	}
	nd = find_duplicates(keys, n, &dup);
	for (size_t d = 0; d < nd; d++) {
		size_t old = path_index(&c->path, dup[d]);
		char *text = map_key_text(json_array_get(arr, dup[d]), mapkeys,
					  single);

		fe_add(c->fe, FE_DUPLICATE, c->path.buf, text, false, NULL);
		free(text);
		path_pop(&c->path, old);
	}
	free(dup);
	free_keys(keys, n);
}

static void listtype_value(struct vctx *c, const json_t *x, const json_t *s,
			   int depth)
{
	const char *k;
	const json_t *v;
	size_t i, old;

	if (!json_is_object(s) || depth > MAX_DEPTH)
		return;
	if (json_is_object(x)) {
		bool ap;
		const json_t *as = sadditional(s, &ap);

		json_object_foreach((json_t *)x, k, v) {
			const json_t *ps = sprop(s, k);

			if (ps) {
				old = path_key(&c->path, k);
				listtype_value(c, v, ps, depth + 1);
				path_pop(&c->path, old);
			} else if (as) {
				old = path_bracket(&c->path, k);
				listtype_value(c, v, as, depth + 1);
				path_pop(&c->path, old);
			}
		}
	} else if (json_is_array(x)) {
		const char *lt = jx_str(s, "x-kubernetes-list-type");
		const json_t *is = sitems(s);

		if (lt && !strcmp(lt, "set"))
			check_list_set(c, x);
		else if (lt && !strcmp(lt, "map"))
			check_list_map(c, x, s);
		if (is) {
			json_array_foreach(x, i, v) {
				old = path_index(&c->path, i);
				listtype_value(c, v, is, depth + 1);
				path_pop(&c->path, old);
			}
		}
	}
}

/* ---- x-kubernetes-validations (apiextensions schema/cel) ---- */

/*
 * Compiled rules shared by every validation in the process, keyed by the
 * expression text, as the patterns are (same reasons, same bounds): a
 * CRD's rules are compiled once, when the CRD is written (its check
 * fills the map) or at the first object, and evaluated at every write.
 * Entries live until exit; past CEL_CACHE_MAX a new text is compiled for
 * the call alone. A cel_program is immutable, so the webhook threads
 * share it without a lock; the map itself is under cel_lock.
 */
#define CEL_CACHE_MAX 2048

struct cel_entry {
	char *src;                /* owned; the key */
	struct cel_program *prog; /* owned; NULL when it did not compile */
	char *error;              /* owned; the compile error, else NULL */
};

static pthread_mutex_t cel_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hmap cel_map = HMAP_INIT; /* src -> cel_entry; cel_lock */

static void cel_entry_fill(struct cel_entry *e, const char *src)
{
	struct err err = { "" };

	e->src = xstrdup(src);
	e->prog = cel_compile(src, &err);
	e->error = e->prog ? NULL : xstrdup(err.msg);
}

/* tmp: an entry the caller releases with cel_entry_release when the
 * shared map is full. Never NULL. */
static const struct cel_entry *cel_lookup(const char *src,
					  struct cel_entry *tmp)
{
	struct cel_entry *e;

	pthread_mutex_lock(&cel_lock);
	e = hmap_get(&cel_map, src);
	if (!e && hmap_count(&cel_map) < CEL_CACHE_MAX) {
		e = xcalloc(1, sizeof(*e));
		cel_entry_fill(e, src);
		hmap_put(&cel_map, e->src, e);
	}
	pthread_mutex_unlock(&cel_lock);
	if (e)
		return e;
	cel_entry_fill(tmp, src);
	return tmp;
}

static void cel_entry_release(struct cel_entry *e)
{
	free(e->src);
	cel_program_free(e->prog);
	free(e->error);
	memset(e, 0, sizeof(*e));
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
	       c == '\f';
}

/* strings.TrimSpace into a new string. */
static char *trim_dup(const char *s)
{
	size_t n;

	while (*s && is_space(*s))
		s++;
	n = strlen(s);
	while (n && is_space(s[n - 1]))
		n--;
	return xstrndup(s, n);
}

static bool is_blank(const char *s)
{
	while (*s && is_space(*s))
		s++;
	return !*s;
}

/* ruleErrorString: the trimmed message, else the trimmed rule. New. */
static char *rule_error_string(const json_t *rule)
{
	const char *msg = jx_str(rule, "message");

	return trim_dup(msg && *msg ? msg : jx_str(rule, "rule"));
}

/* ruleMessageOrDefault. New. */
static char *rule_message(const json_t *rule)
{
	const char *msg = jx_str(rule, "message");
	char *t, *r;

	if (msg && *msg)
		return trim_dup(msg);
	t = trim_dup(jx_str(rule, "rule"));
	r = xasprintf("failed rule: %s", t);
	free(t);
	return r;
}

/* unescapeSingleQuote of a fieldPath's ['...'] part; false when bad. */
static bool unescape_single(const char *s, size_t n, struct sbuf *out)
{
	for (size_t i = 0; i < n; i++) {
		const char *rep;

		if (s[i] != '\\' || i + 1 >= n) {
			sbuf_addch(out, s[i]);
			continue;
		}
		switch (s[++i]) {
		case 'a': rep = "\a"; break;
		case 'b': rep = "\b"; break;
		case 'f': rep = "\f"; break;
		case 'n': rep = "\n"; break;
		case 'r': rep = "\r"; break;
		case 't': rep = "\t"; break;
		case 'v': rep = "\v"; break;
		case '\'': rep = "'"; break;
		case '\\': rep = "\\"; break;
		default: return false;
		}
		sbuf_adds(out, rep);
	}
	return true;
}

/*
 * ValidFieldPath: a rule's fieldPath (".a.b", ".m['k.x']") walked over
 * the schema s of the rule's node, into the field.Path text it names
 * ("a.b", "m[k.x]": properties by name, additionalProperties by key).
 * False when it does not name a field of s.
 */
static bool field_path_norm(const json_t *s, const char *fp, struct sbuf *out)
{
	const char *p = fp;
	struct sbuf name = SBUF_INIT;
	bool ok = false;

	while (*p) {
		const json_t *props, *as;
		bool ap;

		sbuf_reset(&name);
		if (*p == '.') {
			size_t n = strcspn(++p, ".[]");

			sbuf_add(&name, p, n);
			p += n;
		} else if (*p == '[') {
			const char *q;

			if (*++p != '\'')
				goto out;
			for (q = p + 1; *q && !(*q == '\'' && q[-1] != '\\'); q++)
				;
			if (*q != '\'' || q[1] != ']' ||
			    !unescape_single(p + 1, (size_t)(q - p - 1), &name))
				goto out;
			p = q + 2;
		} else {
			goto out;
		}
		props = json_object_get(s, "properties");
		as = sadditional(s, &ap);
		if (json_is_object(props)) {
			s = sprop(s, sbuf_cstr(&name));
			if (!s)
				goto out;
			if (out->len)
				sbuf_addch(out, '.');
			sbuf_adds(out, sbuf_cstr(&name));
		} else if (as) {
			sbuf_addf(out, "[%s]", sbuf_cstr(&name));
			s = as;
		} else {
			goto out;
		}
	}
	ok = out->len > 0;
out:
	sbuf_release(&name);
	return ok;
}

/* The walk's state: one object's rules share one cost budget. */
struct celv {
	struct field_errors *fe;
	struct sbuf path;   /* the node's field path; "" at the root */
	int64_t budget;     /* cost left, kube's RuntimeCELCostBudget */
	bool stop;          /* the budget ran out: no further rules */
	bool update;        /* an old object was given (ratcheting) */
};

/* field.Path's text: the root (a nil *field.Path) prints "<nil>". */
static const char *celv_path(const struct celv *c)
{
	return c->path.len ? c->path.buf : "<nil>";
}

/* field.Invalid(path, schema type, detail). */
static void cel_invalid(struct celv *c, const char *path, const json_t *s,
			const char *fmt, ...) PRINTF_LIKE(4, 5);

static void cel_invalid(struct celv *c, const char *path, const json_t *s,
			const char *fmt, ...)
{
	char detail[1024];
	va_list ap;
	const char *type = jx_str(s, "type");

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	fe_add(c->fe, FE_INVALID, path, type ? type : "", true, "%s", detail);
}

/* fieldErrorForReason. */
static void cel_fail(struct celv *c, const char *path, const json_t *s,
		     const char *detail, const char *reason)
{
	const char *type = jx_str(s, "type");

	if (!type)
		type = "";
	if (reason && !strcmp(reason, "FieldValueForbidden"))
		fe_forbidden(c->fe, path, detail);
	else if (reason && !strcmp(reason, "FieldValueRequired"))
		fe_required(c->fe, path, detail);
	else if (reason && !strcmp(reason, "FieldValueDuplicate"))
		fe_add(c->fe, FE_DUPLICATE, path, type, true, NULL);
	else
		fe_add(c->fe, FE_INVALID, path, type, true, "%s", detail);
}

#define MAX_MESSAGE_EXPRESSION 5120 /* MaxEvaluatedMessageExpressionSizeBytes */

/*
 * evalMessageExpression: the failure message a rule's messageExpression
 * gives, as a new string; NULL to fall back to the message (an error, a
 * non-string, an empty or multi-line or too long result). Running out of
 * budget or the call limit is an error of its own and stops the rules.
 */
static char *message_expression(struct celv *c, const char *path,
				const json_t *s, const char *src,
				const json_t *v, const json_t *old)
{
	struct cel_entry tmp = { NULL, NULL, NULL };
	const struct cel_entry *e = cel_lookup(src, &tmp);
	struct err err = { "" };
	enum cel_outcome o;
	uint64_t cost = 0;
	json_t *r = NULL;
	char *msg = NULL;

	if (!e->prog)
		goto out;
	o = cel_eval(e->prog, v, old, CEL_PER_CALL_LIMIT, &cost, &r, &err);
	if (cost > (uint64_t)c->budget) {
		cel_invalid(c, path, s, "messageExpression evaluation failed due "
			    "to running out of cost budget, no further "
			    "validation rules will be run");
		c->stop = true;
		goto out;
	}
	c->budget -= (int64_t)cost;
	if (o == CEL_COST_LIMIT) {
		char *q = go_quote(src);

		cel_invalid(c, path, s, "no further validation rules will be run "
			    "due to call cost exceeds limit for messageExpression: %s",
			    q);
		free(q);
		c->stop = true;
		goto out;
	}
	if (o != CEL_OK || !json_is_string(r))
		goto out;
	msg = trim_dup(json_string_value(r));
	if (!*msg || strlen(msg) > MAX_MESSAGE_EXPRESSION || strchr(msg, '\n'))
		FREE_AND_NULL(msg);
out:
	json_decref(r);
	cel_entry_release(&tmp);
	return msg;
}

/* One rule at the node v (old: its correlated old value or NULL; rn/ro:
 * the nearest correlated pair, for ratcheting). */
static void cel_rule(struct celv *c, const json_t *rule, const json_t *v,
		     const json_t *old, const json_t *s, const json_t *rn,
		     const json_t *ro)
{
	const char *src = jx_str(rule, "rule");
	const char *fp = jx_str(rule, "fieldPath");
	const char *mexpr = jx_str(rule, "messageExpression");
	struct cel_entry tmp = { NULL, NULL, NULL };
	const struct cel_entry *e;
	struct err err = { "" };
	struct sbuf at = SBUF_INIT, rel = SBUF_INIT;
	enum cel_outcome o;
	uint64_t cost = 0;
	json_t *r = NULL;
	char *res = NULL, *detail = NULL;

	if (!src || is_blank(src))
		return;
	e = cel_lookup(src, &tmp);
	if (!e->prog) {
		cel_invalid(c, celv_path(c), s, "rule compile error: "
			    "compilation failed: %s", e->error);
		goto out;
	}
	if (cel_uses_old_self(e->prog) && !old)
		goto out; /* transition rules need a correlated old value */
	if (c->budget <= 0) {
		cel_invalid(c, celv_path(c), s, "validation failed due to running "
			    "out of cost budget, no further validation rules "
			    "will be run");
		c->stop = true;
		goto out;
	}
	o = cel_eval(e->prog, v, old, CEL_PER_CALL_LIMIT, &cost, &r, &err);
	if (cost > (uint64_t)c->budget) {
		cel_invalid(c, celv_path(c), s, "validation failed due to running "
			    "out of cost budget, no further validation rules "
			    "will be run");
		c->stop = true;
		goto out;
	}
	c->budget -= (int64_t)cost;
	res = rule_error_string(rule);
	if (o == CEL_COST_LIMIT) {
		cel_invalid(c, celv_path(c), s, "'%s': no further validation rules "
			    "will be run due to call cost exceeds limit for rule: %s",
			    err.msg, res);
		c->stop = true;
		goto out;
	}
	if (o == CEL_ERROR) {
		if (!strncmp(err.msg, "no such overload", 16))
			cel_invalid(c, celv_path(c), s, "'%s': call arguments did not "
				    "match a supported operator, function or macro "
				    "signature for rule: %s", err.msg, res);
		else
			cel_invalid(c, celv_path(c), s, "%s evaluating rule: %s",
				    err.msg, res);
		goto out;
	}
	if (json_is_true(r))
		goto out;
	/* 1. ratcheting: a rule without oldSelf does not fail an update
	 *    that left its value (or the nearest correlated one) as it was */
	if (c->update && !cel_uses_old_self(e->prog) && rn && ro &&
	    json_equal((json_t *)rn, (json_t *)ro))
		goto out;
	/* 2. the path: the node's, then the rule's fieldPath under it */
	sbuf_adds(&at, c->path.len ? c->path.buf : "");
	if (fp && *fp && field_path_norm(s, fp, &rel)) {
		if (at.len)
			sbuf_addch(&at, '.');
		sbuf_adds(&at, sbuf_cstr(&rel));
	}
	/* 3. the message: messageExpression's, else message or the rule */
	if (mexpr && !is_blank(mexpr)) {
		detail = message_expression(c, at.len ? at.buf : "<nil>", s,
					    mexpr, v, old);
		if (c->stop)
			goto out;
	}
	if (!detail)
		detail = rule_message(rule);
	cel_fail(c, at.len ? at.buf : "<nil>", s, detail,
		 jx_str(rule, "reason"));
out:
	free(detail);
	free(res);
	json_decref(r);
	sbuf_release(&at);
	sbuf_release(&rel);
	cel_entry_release(&tmp);
}

/* The item of old (an x-kubernetes-list-type=map list) with item's map
 * keys, or NULL. */
static const json_t *old_map_item(const json_t *item, const json_t *old,
				  const json_t *keys)
{
	size_t i, j;
	const json_t *o, *k;

	if (!json_is_object(item) || !json_is_array(old) || !json_is_array(keys))
		return NULL;
	json_array_foreach(old, i, o) {
		bool same = json_is_object(o);

		json_array_foreach(keys, j, k) {
			const json_t *a, *b;

			if (!same || !json_is_string(k))
				break;
			a = json_object_get(item, json_string_value(k));
			b = json_object_get(o, json_string_value(k));
			same = (!a && !b) ||
			       (a && b && json_equal((json_t *)a, (json_t *)b));
		}
		if (same)
			return o;
	}
	return NULL;
}

/*
 * The Validator walk of apiextensions' schema/cel/validation.go: the
 * rules of a node, then its children, only where the value is present
 * and not null. oldSelf correlates object fields by name (unless the
 * object is x-kubernetes-map-type: atomic) and the items of a
 * list-type=map list by their keys; other list items have no old value.
 */
static void cel_walk(struct celv *c, const json_t *v, const json_t *old,
		     const json_t *s, const json_t *rn, const json_t *ro,
		     int depth)
{
	const json_t *rules = json_object_get(s, "x-kubernetes-validations");
	const json_t *rule, *val;
	const char *k;
	size_t i, mark;

	if (!v || json_is_null(v) || !json_is_object(s) || c->stop ||
	    depth > MAX_DEPTH)
		return;
	if (old && json_is_null(old))
		old = NULL;
	if (old) {
		rn = v;
		ro = old;
	}
	json_array_foreach(rules, i, rule) {
		cel_rule(c, rule, v, old, s, rn, ro);
		if (c->stop)
			return;
	}
	if (json_is_object(v)) {
		const char *mt = jx_str(s, "x-kubernetes-map-type");
		bool corr = json_is_object(old) && !(mt && !strcmp(mt, "atomic"));
		bool ap;
		const json_t *as = sadditional(s, &ap);

		json_object_foreach((json_t *)v, k, val) {
			const json_t *ps = sprop(s, k);

			if (ps)
				mark = path_key(&c->path, k);
			else if (as)
				mark = path_bracket(&c->path, k);
			else
				continue;
			cel_walk(c, val, corr ? json_object_get(old, k) : NULL,
				 ps ? ps : as, rn, ro, depth + 1);
			path_pop(&c->path, mark);
			if (c->stop)
				return;
		}
	} else if (json_is_array(v)) {
		const json_t *is = sitems(s);
		const char *lt = jx_str(s, "x-kubernetes-list-type");
		bool maplist = lt && !strcmp(lt, "map");

		if (!is)
			return;
		json_array_foreach(v, i, val) {
			const json_t *o = maplist ? old_map_item(val, old,
				json_object_get(s, "x-kubernetes-list-map-keys")) : NULL;

			mark = path_index(&c->path, i);
			cel_walk(c, val, o, is, rn, ro, depth + 1);
			path_pop(&c->path, mark);
			if (c->stop)
				return;
		}
	}
}

/* True when s or a schema below it has x-kubernetes-validations. */
static bool has_rules(const json_t *s, int depth)
{
	const json_t *props, *ps, *as;
	const char *k;
	bool ap;

	if (!json_is_object(s) || depth > MAX_DEPTH)
		return false;
	if (json_array_size(json_object_get(s, "x-kubernetes-validations")))
		return true;
	props = json_object_get(s, "properties");
	if (json_is_object(props))
		json_object_foreach((json_t *)props, k, ps)
			if (has_rules(ps, depth + 1))
				return true;
	as = sadditional(s, &ap);
	return has_rules(sitems(s), depth + 1) || has_rules(as, depth + 1);
}

/* hasBlockingErr: type, required, enum and size failures keep the CEL
 * rules from running (they could not make sense of the value). */
static bool has_blocking(const struct field_errors *fe)
{
	for (size_t i = 0; i < fe->n; i++) {
		switch (fe->v[i].kind) {
		case FE_UNSUPPORTED:
		case FE_REQUIRED:
		case FE_TOO_LONG:
		case FE_TOO_MANY:
		case FE_TYPE:
			return true;
		default:
			break;
		}
	}
	return false;
}

static void validate_rules(const json_t *obj, const json_t *old,
			   const json_t *schema, struct field_errors *fe)
{
	struct celv c;

	if (has_blocking(fe)) {
		if (has_rules(schema, 0))
			fe_add(fe, FE_INVALID, "<nil>", "null", true,
			       "some validation rules were not checked because "
			       "the object was invalid; correct the existing "
			       "errors to complete validation");
		return;
	}
	c.fe = fe;
	c.budget = CEL_RUNTIME_BUDGET;
	c.stop = false;
	c.update = old != NULL;
	path_init(&c.path);
	cel_walk(&c, obj, old, schema, NULL, NULL, 0);
	sbuf_release(&c.path);
}

/* ---- CRD time: every rule must compile (apiextensions validation) ---- */

/* Go's %#v of the internal apiextensions.ValidationRule the errors carry
 * as their value. A set reason or optionalOldSelf is a pointer there,
 * printed as an address no one can reproduce: we print a fixed one. */
static char *rule_go_value(const json_t *rule)
{
	static const char *const fields[][2] = {
		{ "Rule", "rule" }, { "Message", "message" },
		{ "MessageExpression", "messageExpression" },
	};
	struct sbuf b = SBUF_INIT;
	char *q;

	sbuf_adds(&b, "apiextensions.ValidationRule{");
	for (size_t i = 0; i < 3; i++) {
		const char *v = jx_str(rule, fields[i][1]);

		q = go_quote(v ? v : "");
		sbuf_addf(&b, "%s:%s, ", fields[i][0], q);
		free(q);
	}
	sbuf_addf(&b, "Reason:(*apiextensions.FieldValueErrorReason)(%s), ",
		  json_object_get(rule, "reason") ? "0xc000000000" : "nil");
	q = go_quote(jx_str(rule, "fieldPath") ? jx_str(rule, "fieldPath") : "");
	sbuf_addf(&b, "FieldPath:%s, ", q);
	free(q);
	sbuf_addf(&b, "OptionalOldSelf:(*bool)(%s)}",
		  json_object_get(rule, "optionalOldSelf") ? "0xc000000000"
							   : "nil");
	return sbuf_detach(&b, NULL);
}

static void check_rule(const json_t *rule, const json_t *s, const char *at,
		       const char *uncorrelatable, struct field_errors *fe)
{
	static const char *const reasons[] = {
		"FieldValueDuplicate", "FieldValueForbidden",
		"FieldValueInvalid", "FieldValueRequired", NULL,
	};
	const char *src = jx_str(rule, "rule");
	const char *msg = jx_str(rule, "message");
	const char *mexpr = jx_str(rule, "messageExpression");
	const char *reason = jx_str(rule, "reason");
	const char *fp = jx_str(rule, "fieldPath");
	char *p, *gv = rule_go_value(rule), *tm = trim_dup(msg ? msg : "");
	struct cel_entry tmp = { NULL, NULL, NULL };
	const struct cel_entry *e;
	struct sbuf norm = SBUF_INIT;

	/* 1. the shape of the rule (SchemaErrors) */
	p = xasprintf("%s.rule", at);
	if (!src || is_blank(src)) {
		fe_required(fe, p, "rule is not specified");
		free(p);
		goto out;
	} else if (msg && *msg && !*tm) {
		free(p);
		p = xasprintf("%s.message", at);
		fe_invalid(fe, p, msg, "message must be non-empty if specified");
	} else if (strpbrk(tm, "\n\r")) {
		free(p);
		p = xasprintf("%s.message", at);
		fe_invalid(fe, p, msg, "message must not contain line breaks");
	} else if (strpbrk(src, "\n\r") && !*tm) {
		free(p);
		p = xasprintf("%s.message", at);
		fe_required(fe, p, "message must be specified if rule contains "
			    "line breaks");
	}
	free(p);
	if (mexpr && *mexpr && is_blank(mexpr)) {
		p = xasprintf("%s.messageExpression", at);
		fe_required(fe, p, "messageExpression must be non-empty if "
			    "specified");
		free(p);
	}
	if (reason) {
		bool ok = false;

		for (size_t i = 0; reasons[i]; i++)
			ok = ok || !strcmp(reasons[i], reason);
		if (!ok) {
			p = xasprintf("%s.reason", at);
			fe_unsupported(fe, p, reason, reasons);
			free(p);
		}
	}
	if (fp && *fp) {
		const char *why = is_blank(fp) ?
			"fieldPath must be non-empty if specified" :
			strchr(fp, '\n') ? "fieldPath must not contain line breaks" :
			!field_path_norm(s, fp, &norm) ?
			"fieldPath must be a valid path" : NULL;

		if (why) {
			p = xasprintf("%s.fieldPath", at);
			fe_invalid(fe, p, fp, why);
			free(p);
		}
	}
	/* 2. compilation (CELErrors) */
	p = xasprintf("%s.rule", at);
	e = cel_lookup(src, &tmp);
	if (!e->prog)
		fe_add(fe, FE_INVALID, p, gv, false, "compilation failed: %s",
		       e->error);
	else if (cel_result_type(e->prog) != CEL_TYPE_BOOL &&
		 cel_result_type(e->prog) != CEL_TYPE_DYN)
		fe_add(fe, FE_INVALID, p, gv, false,
		       "cel expression must evaluate to a bool");
	else if (cel_uses_old_self(e->prog) && uncorrelatable)
		fe_add(fe, FE_INVALID, p, src, true, "oldSelf cannot be used on "
		       "the uncorrelatable portion of the schema within %s",
		       uncorrelatable);
	free(p);
	cel_entry_release(&tmp);
	if (mexpr && !is_blank(mexpr)) {
		p = xasprintf("%s.messageExpression", at);
		e = cel_lookup(mexpr, &tmp);
		if (!e->prog)
			fe_add(fe, FE_INVALID, p, gv, false, "messageExpression "
			       "compilation failed: %s", e->error);
		else if (cel_result_type(e->prog) != CEL_TYPE_STRING &&
			 cel_result_type(e->prog) != CEL_TYPE_DYN)
			fe_add(fe, FE_INVALID, p, gv, false,
			       "messageExpression must evaluate to a string");
		free(p);
		cel_entry_release(&tmp);
	}
out:
	sbuf_release(&norm);
	free(tm);
	free(gv);
}

/* validateCustomResourceDefinitionOpenAPISchema's walk, for the rules:
 * properties[name], items, additionalProperties. uncorrelatable: the
 * path of the nearest enclosing list whose items oldSelf cannot reach
 * (any list-type but map), or NULL. */
static void check_rules_node(const json_t *s, struct sbuf *path,
			     const char *uncorrelatable, int depth,
			     struct field_errors *fe)
{
	const json_t *rules, *rule, *props, *ps, *as, *is;
	const char *k;
	size_t i, mark;
	bool ap;

	if (!json_is_object(s) || depth > MAX_DEPTH)
		return;
	rules = json_object_get(s, "x-kubernetes-validations");
	json_array_foreach(rules, i, rule) {
		mark = path->len;
		sbuf_addf(path, ".x-kubernetes-validations[%zu]", i);
		check_rule(rule, s, path->buf, uncorrelatable, fe);
		path_pop(path, mark);
	}
	props = json_object_get(s, "properties");
	if (json_is_object(props)) {
		json_object_foreach((json_t *)props, k, ps) {
			mark = path->len;
			sbuf_addf(path, ".properties[%s]", k);
			check_rules_node(ps, path, uncorrelatable, depth + 1, fe);
			path_pop(path, mark);
		}
	}
	is = sitems(s);
	if (is) {
		const char *lt = jx_str(s, "x-kubernetes-list-type");
		char *mine = NULL;

		if (!uncorrelatable && !(lt && !strcmp(lt, "map")))
			uncorrelatable = mine = xstrdup(path->buf);
		mark = path->len;
		sbuf_adds(path, ".items");
		check_rules_node(is, path, uncorrelatable, depth + 1, fe);
		path_pop(path, mark);
		free(mine);
	}
	as = sadditional(s, &ap);
	if (as) {
		mark = path->len;
		sbuf_adds(path, ".additionalProperties");
		check_rules_node(as, path, uncorrelatable, depth + 1, fe);
		path_pop(path, mark);
	}
}

/*
 * Internally a v1 CRD whose versions all carry the same schema has it in
 * spec.validation (the v1 -> internal conversion hoists it), which is
 * the path kube-apiserver's errors name; otherwise each version's.
 */
void schema_validate_crd_rules(const json_t *spec, struct field_errors *fe)
{
	const json_t *versions = json_object_get(spec, "versions"), *v;
	const json_t *first = NULL;
	bool identical = true;
	struct sbuf path;
	size_t i;

	if (!json_is_array(versions))
		return;
	json_array_foreach(versions, i, v) {
		const json_t *sch = json_object_get(v, "schema");

		if (!i)
			first = sch;
		else if (!first || !sch || !json_equal((json_t *)first,
						       (json_t *)sch))
			identical = false;
	}
	path_init(&path);
	if (identical && first) {
		sbuf_adds(&path, "spec.validation.openAPIV3Schema");
		check_rules_node(json_object_get(first, "openAPIV3Schema"), &path,
				 NULL, 0, fe);
	} else {
		json_array_foreach(versions, i, v) {
			path_pop(&path, 0);
			sbuf_addf(&path, "spec.versions[%zu].schema.openAPIV3Schema",
				  i);
			check_rules_node(json_object_get(json_object_get(v,
					 "schema"), "openAPIV3Schema"), &path, NULL,
					 0, fe);
		}
	}
	sbuf_release(&path);
}

/*
 * 1. the OpenAPI schema validation of the whole object (kube-openapi),
 * 2. the list-type invariants (listtype.ValidateListSetsAndMaps),
 * 3. the x-kubernetes-validations rules, unless 1-2 (or the caller's
 *    metadata checks already in fe) found a blocking error,
 * as the custom resource strategy runs them.
 */
void schema_validate_update(const json_t *obj, const json_t *old,
			    const json_t *schema, struct field_errors *fe)
{
	struct vctx c;

	if (!obj || !json_is_object(schema) || !fe)
		return;
	c.fe = fe;
	c.rx = NULL;
	c.nrx = c.caprx = 0;
	path_init(&c.path);
	validate_value(&c, obj, schema, 0);
	path_pop(&c.path, 0);
	listtype_value(&c, obj, schema, 0);
	vctx_release(&c);
	validate_rules(obj, old, schema, fe);
}

void schema_validate(const json_t *obj, const json_t *schema,
		     struct field_errors *fe)
{
	schema_validate_update(obj, NULL, schema, fe);
}
