/*
 * codec_cursor: the reading half every codec decoder stands on (see
 * codec_int.h): a cursor that knows the path of the field being read,
 * the up-front tree walk, and one reader per JSON shape Kubernetes uses
 * (string, int32/int64, bool, RFC 3339 time, Quantity, enum, map,
 * ResourceList, []string, opaque sub-object).
 *
 * Readers never abort on input: a wrong JSON type, an unsupported enum
 * value, an unparsable quantity or time, an int32 out of range each add
 * one field error naming the field and make the reader return "nothing".
 * JSON null in an object member means absent (the API server prunes such
 * nulls and merge patches use them to clear fields); a null where a value
 * is required (array items, the root) is a type error.
 *
 * DESIGN
 * The path is one growable buffer: readers push a segment ("spec",
 * "[0]", "[cpu]"), read, and pop back to the mark they got, so building
 * an error path costs nothing until an error happens. walk() visits the
 * whole tree once before any field is read: nesting deeper than
 * CODEC_MAX_DEPTH rejects the object outright (reported at the first
 * container too deep), and strings or keys longer than CODEC_MAX_STRING
 * are reported there, after which the readers treat such strings as
 * absent so each is reported once.
 */
#include "model/codec_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/quantity.h"
#include "model/timestamp.h"

/* Longest key or field name copied into a path; a 1 MiB label key must not
 * make a 1 MiB error path. */
#define SEGMENT_MAX 256

/* ------------------------------------------------------------------ */
/* JSON text of opaque sub-objects */

char *codec_dump(const json_t *j)
{
	const size_t flags = JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY;
	size_t n = json_dumpb(j, NULL, 0, flags);
	char *s;

	if (n == 0)
		return NULL;
	s = xmalloc(n + 1);
	if (json_dumpb(j, s, n, flags) != n) {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}

json_t *codec_load(const char *text)
{
	return text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
}

/* ------------------------------------------------------------------ */
/* The cursor: path bookkeeping and error reporting */

void codec_ctx_init(struct codec_ctx *c, struct field_errors *fe)
{
	c->fe = fe;
	c->nerr0 = fe->n;
	c->v = API_V1BETA1;
	sbuf_init(&c->path, 0);
	sbuf_grow(&c->path, 64);
}

/* Ends a decode: -1 when it added any error. */
int codec_ctx_finish(struct codec_ctx *c)
{
	sbuf_release(&c->path);
	return c->fe->n > c->nerr0 ? -1 : 0;
}

/* Appends a formatted segment; returns the mark to pop back to. */
size_t codec_push(struct codec_ctx *c, const char *fmt, ...)
{
	size_t mark = c->path.len;
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(&c->path, fmt, ap);
	va_end(ap);
	return mark;
}

/* Appends n bytes of s. Decoding pushes a segment per field it visits,
 * so this is a copy rather than a formatted print. */
static void push_bytes(struct codec_ctx *c, const char *s, size_t n)
{
	sbuf_add(&c->path, s, n);
}

/* Pushes pre, name cut at SEGMENT_MAX bytes back to whole UTF-8
 * characters (so error paths stay valid UTF-8, errors.h), then post. */
static size_t push_segment(struct codec_ctx *c, const char *pre,
			   const char *name, const char *post)
{
	size_t mark = c->path.len, n = strnlen(name, SEGMENT_MAX + 1);

	push_bytes(c, pre, strlen(pre));
	push_bytes(c, name, n > SEGMENT_MAX ? SEGMENT_MAX : n);
	if (n > SEGMENT_MAX)
		sbuf_setlen(&c->path,
			    mark + utf8_trim_tail(c->path.buf + mark));
	push_bytes(c, post, strlen(post));
	return mark;
}

size_t codec_push_field(struct codec_ctx *c, const char *name)
{
	return push_segment(c, c->path.len ? "." : "", name, "");
}

size_t codec_push_index(struct codec_ctx *c, size_t i)
{
	char buf[24];
	size_t mark = c->path.len, k = sizeof(buf);

	buf[--k] = ']';
	do {
		buf[--k] = (char)('0' + i % 10);
		i /= 10;
	} while (i);
	buf[--k] = '[';
	push_bytes(c, buf + k, sizeof(buf) - k);
	return mark;
}

size_t codec_push_key(struct codec_ctx *c, const char *key)
{
	return push_segment(c, "[", key, "]");
}

void codec_pop(struct codec_ctx *c, size_t mark)
{
	sbuf_setlen(&c->path, mark);
}

/* Pushes key when given, so an error lands on the child field; readers of
 * array items and map values pass NULL (their segment is already there). */
static size_t at(struct codec_ctx *c, const char *key)
{
	return key ? codec_push_field(c, key) : c->path.len;
}

const char *codec_jtype(const json_t *j)
{
	switch (j ? json_typeof(j) : JSON_NULL) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "number";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: break;
	}
	return "null";
}

/* "<path>: Invalid value: "integer": <path> in body must be of type string" */
void codec_bad_type(struct codec_ctx *c, const char *key, const json_t *j,
		    const char *want)
{
	size_t m = at(c, key);

	fe_add(c->fe, FE_TYPE, c->path.buf, codec_jtype(j), true, "%s", want);
	codec_pop(c, m);
}

/*
 * Visits the whole tree once (DESIGN). Stops at the first container nested
 * deeper than CODEC_MAX_DEPTH, setting *deep; strings and keys longer than
 * CODEC_MAX_STRING are reported and the walk goes on.
 */
static void walk(struct codec_ctx *c, const json_t *j, int depth, bool *deep)
{
	const char *k;
	json_t *v;
	size_t i, m;

	if (json_is_string(j)) {
		if (json_string_length(j) > CODEC_MAX_STRING)
			fe_too_long(c->fe, c->path.buf, CODEC_MAX_STRING);
		return;
	}
	if (!json_is_object(j) && !json_is_array(j))
		return;
	if (depth > CODEC_MAX_DEPTH) {
		fe_add(c->fe, FE_FORBIDDEN,
		       c->path.len ? c->path.buf : "<root>", NULL, false,
		       "nesting deeper than %d levels is not allowed",
		       CODEC_MAX_DEPTH);
		*deep = true;
		return;
	}
	if (json_is_array(j)) {
		json_array_foreach((json_t *)j, i, v) {
			m = codec_push_index(c, i);
			walk(c, v, depth + 1, deep);
			codec_pop(c, m);
			if (*deep)
				return;
		}
		return;
	}
	json_object_foreach((json_t *)j, k, v) {
		m = codec_push_field(c, k);
		if (strlen(k) > CODEC_MAX_STRING)
			fe_too_long(c->fe, c->path.buf, CODEC_MAX_STRING);
		walk(c, v, depth + 1, deep);
		codec_pop(c, m);
		if (*deep)
			return;
	}
}

/* Member key of o, or NULL when o is not an object, key is absent, or its
 * value is JSON null (see DESIGN). Borrowed. */
const json_t *codec_member(const json_t *o, const char *key)
{
	const json_t *j = o ? json_object_get(o, key) : NULL;

	return j && !json_is_null(j) ? j : NULL;
}

/* ------------------------------------------------------------------ */
/* Field readers (conventions in codec_int.h). The static v_ helpers take
 * the value itself; NULL means absent and returns "nothing" silently. */

const char *codec_v_str(struct codec_ctx *c, const char *key, const json_t *j)
{
	if (!j)
		return NULL;
	if (!json_is_string(j)) {
		codec_bad_type(c, key, j, "string");
		return NULL;
	}
	if (json_string_length(j) > CODEC_MAX_STRING)
		return NULL; /* reported by walk() */
	return json_string_value(j);
}

const char *codec_str(struct codec_ctx *c, const json_t *o, const char *key)
{
	return codec_v_str(c, key, codec_member(o, key));
}

char *codec_strdup(struct codec_ctx *c, const json_t *o, const char *key)
{
	return xstrdup_or_null(codec_str(c, o, key));
}

/* Like codec_strdup, but "" when absent (fields documented never NULL). */
char *codec_strdup_empty(struct codec_ctx *c, const json_t *o, const char *key)
{
	const char *s = codec_str(c, o, key);

	return xstrdup(s ? s : "");
}

static bool v_int(struct codec_ctx *c, const char *key, const json_t *j,
		  int64_t min, int64_t max, int64_t *out)
{
	json_int_t v;

	if (!j)
		return false;
	if (!json_is_integer(j)) {
		codec_bad_type(c, key, j, "integer");
		return false;
	}
	v = json_integer_value(j);
	if (v < min || v > max) {
		size_t m = at(c, key);
		char detail[96];

		snprintf(detail, sizeof(detail),
			 "must be between %lld and %lld, inclusive",
			 (long long)min, (long long)max);
		fe_invalid_num(c->fe, c->path.buf, v, detail);
		codec_pop(c, m);
		return false;
	}
	*out = v;
	return true;
}

bool codec_i64(struct codec_ctx *c, const json_t *o, const char *key,
	       int64_t *out)
{
	return v_int(c, key, codec_member(o, key), INT64_MIN, INT64_MAX, out);
}

static bool v_i32(struct codec_ctx *c, const char *key, const json_t *j,
		  int32_t *out)
{
	int64_t v;

	if (!v_int(c, key, j, INT32_MIN, INT32_MAX, &v))
		return false;
	*out = (int32_t)v;
	return true;
}

bool codec_i32(struct codec_ctx *c, const json_t *o, const char *key,
	       int32_t *out)
{
	return v_i32(c, key, codec_member(o, key), out);
}

bool codec_bool(struct codec_ctx *c, const json_t *o, const char *key,
		bool *out)
{
	const json_t *j = codec_member(o, key);

	if (!j)
		return false;
	if (!json_is_boolean(j)) {
		codec_bad_type(c, key, j, "boolean");
		return false;
	}
	*out = json_is_true(j);
	return true;
}

/* metav1.Time: an RFC 3339 string. */
bool codec_time(struct codec_ctx *c, const json_t *o, const char *key,
		int64_t *ms)
{
	const char *s = codec_str(c, o, key);
	int64_t v;

	if (!s)
		return false;
	if (timestamp_parse(s, &v) != 0) {
		size_t m = at(c, key);

		fe_add(c->fe, FE_TYPE, c->path.buf, s, true, "date-time");
		codec_pop(c, m);
		return false;
	}
	*ms = v;
	return true;
}

/*
 * resource.Quantity is int-or-string: a string is parsed as written; a
 * JSON integer counts whole units; a real is printed with %.15g (the
 * precision a double carries) and parsed as if it had been written so.
 */
static bool v_qty(struct codec_ctx *c, const char *key, const json_t *j,
		  int64_t *milli)
{
	struct quantity q;
	struct err err = { "" };
	char buf[64];
	const char *text = buf;
	int rc;

	if (!j)
		return false;
	if (json_is_string(j)) {
		text = codec_v_str(c, key, j);
		if (!text)
			return false;
		rc = quantity_parse(text, &q, &err);
	} else if (json_is_integer(j)) {
		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT,
			 json_integer_value(j));
		rc = quantity_from_int(json_integer_value(j), &q, &err);
	} else if (json_is_real(j)) {
		char *plus;

		snprintf(buf, sizeof(buf), "%.15g", json_real_value(j));
		plus = strstr(buf, "e+");
		if (plus)
			memmove(plus + 1, plus + 2, strlen(plus + 2) + 1);
		rc = quantity_parse(buf, &q, &err);
	} else {
		codec_bad_type(c, key, j, "string");
		return false;
	}
	if (rc != 0) {
		size_t m = at(c, key);

		fe_add(c->fe, FE_INVALID, c->path.buf, text, json_is_string(j),
		       "%s", err.msg[0] ? err.msg : "invalid quantity");
		codec_pop(c, m);
		return false;
	}
	*milli = q.milli;
	return true;
}

bool codec_qty(struct codec_ctx *c, const json_t *o, const char *key,
	       int64_t *milli)
{
	return v_qty(c, key, codec_member(o, key), milli);
}

#define ENUM_MAX 16 /* longest "supported values" list */

bool codec_enum(struct codec_ctx *c, const json_t *o, const char *key,
		const struct codec_enum *tab, int *out)
{
	const char *s = codec_str(c, o, key);
	const char *names[ENUM_MAX + 1];
	size_t n = 0, m;

	if (!s)
		return false;
	for (const struct codec_enum *e = tab; e->name; e++) {
		if (!strcmp(e->name, s)) {
			*out = e->value;
			return true;
		}
		if (!e->hidden && n < ENUM_MAX)
			names[n++] = e->name;
	}
	names[n] = NULL;
	m = at(c, key);
	fe_unsupported(c->fe, c->path.buf, s, names);
	codec_pop(c, m);
	return false;
}

static const json_t *v_obj(struct codec_ctx *c, const char *key,
			   const json_t *j)
{
	if (j && !json_is_object(j)) {
		codec_bad_type(c, key, j, "object");
		return NULL;
	}
	return j;
}

const json_t *codec_obj(struct codec_ctx *c, const json_t *o, const char *key)
{
	return v_obj(c, key, codec_member(o, key));
}

/* Object member key with the path pushed (pop with *mark), or NULL (path
 * unchanged) when absent or not an object (reported). */
const json_t *codec_enter(struct codec_ctx *c, const json_t *o, const char *key,
			  size_t *mark)
{
	const json_t *j = codec_obj(c, o, key);

	if (j)
		*mark = codec_push_field(c, key);
	return j;
}

/* The array at key and its size, with key pushed onto the path; the caller
 * always pops *mark. 0 when absent or not an array (reported). */
size_t codec_arr_begin(struct codec_ctx *c, const json_t *o, const char *key,
		       const json_t **arr, size_t *mark)
{
	const json_t *j = codec_member(o, key);

	*arr = NULL;
	*mark = codec_push_field(c, key);
	if (!j)
		return 0;
	if (!json_is_array(j)) {
		codec_bad_type(c, NULL, j, "array");
		return 0;
	}
	*arr = j;
	return json_array_size(j);
}

/* Item i of arr as an object with "[i]" pushed (pop with *mark), or NULL
 * (reported, path unchanged) when it is anything else. */
const json_t *codec_elem_obj(struct codec_ctx *c, const json_t *arr, size_t i,
			     size_t *mark)
{
	const json_t *e = json_array_get(arr, i);

	*mark = codec_push_index(c, i);
	if (json_is_object(e))
		return e;
	codec_bad_type(c, NULL, e, "object");
	codec_pop(c, *mark);
	return NULL;
}

/* []string; items that are not strings are reported and skipped. */
size_t codec_strv(struct codec_ctx *c, const json_t *o, const char *key,
		  char ***out)
{
	const json_t *a;
	size_t m, n = codec_arr_begin(c, o, key, &a, &m), k = 0;
	char **v = n ? xcalloc(n, sizeof(*v)) : NULL;

	for (size_t i = 0; i < n; i++) {
		size_t mi = codec_push_index(c, i);
		const char *s = codec_v_str(c, NULL, json_array_get(a, i));

		if (s)
			v[k++] = xstrdup(s);
		codec_pop(c, mi);
	}
	codec_pop(c, m);
	if (!k) {
		free(v);
		v = NULL;
	}
	*out = v;
	return k;
}

/* map[string]string; reports values that are not strings. */
void codec_map(struct codec_ctx *c, const json_t *o, const char *key,
	       struct smap *out)
{
	const json_t *mo = codec_obj(c, o, key);
	const char *k;
	json_t *v;
	size_t m;

	if (!mo)
		return;
	m = codec_push_field(c, key);
	json_object_foreach((json_t *)mo, k, v) {
		size_t mk = codec_push_key(c, k);
		const char *s = codec_v_str(c, NULL, v);

		if (s)
			smap_set(out, k, s);
		codec_pop(c, mk);
	}
	codec_pop(c, m);
}

/* corev1.ResourceList: resource name -> quantity. Returns true when the
 * map was present. */
bool codec_reslist(struct codec_ctx *c, const json_t *o, const char *key,
		   struct reslist *out)
{
	const json_t *mo = codec_obj(c, o, key);
	const char *k;
	json_t *v;
	size_t m;

	if (!mo)
		return false;
	m = codec_push_field(c, key);
	json_object_foreach((json_t *)mo, k, v) {
		size_t mk = codec_push_key(c, k);
		int64_t milli;

		if (json_is_null(v))
			codec_bad_type(c, NULL, v, "string");
		else if (v_qty(c, NULL, v, &milli))
			reslist_set(out, k, resource_units_milli(k, milli));
		codec_pop(c, mk);
	}
	codec_pop(c, m);
	return true;
}

/* An opaque sub-object (TAS requests, topology assignments, pod set
 * updates) kept as compact JSON; want is "object" or "array". */
char *codec_opaque(struct codec_ctx *c, const json_t *o, const char *key,
		   const char *want)
{
	const json_t *j = codec_member(o, key);
	bool ok = j && (!strcmp(want, "array") ? json_is_array(j) :
						 json_is_object(j));

	if (!j)
		return NULL;
	if (!ok) {
		codec_bad_type(c, key, j, want);
		return NULL;
	}
	return codec_dump(j);
}

/* ------------------------------------------------------------------ */
/* Starting a decode */

/*
 * Starts a decode (see codec_int.h): the cursor begins at path (NULL or
 * "" for the root); obj must be an object, shallow enough, and when kind
 * is given and obj says its kind, of that kind.
 */
int codec_begin(struct codec_ctx *c, const json_t *obj,
		struct field_errors *fe, const char *path, const char *kind)
{
	const char *k;
	bool deep = false;

	codec_ctx_init(c, fe);
	if (path && *path)
		codec_push(c, "%s", path);
	if (!json_is_object(obj)) {
		fe_add(fe, FE_TYPE,
		       c->path.len ? c->path.buf : kind ? kind : "template",
		       codec_jtype(obj), true, "object");
		return -1;
	}
	walk(c, obj, 1, &deep);
	if (deep)
		return -1;
	k = kind ? codec_str(c, obj, "kind") : NULL;
	if (k && strcmp(k, kind)) {
		const char *want[] = { kind, NULL };

		fe_unsupported(fe, "kind", k, want);
	}
	return 0;
}

/*
 * The version whose field names obj uses. An object without apiVersion
 * (list items, hand-written tests) is read as v1beta1, the primary
 * contract (kueue-api.md §0); any other apiVersion is an error and the
 * fields are still read as v1beta1 so every other problem shows too.
 */
enum api_version codec_kueue_version(struct codec_ctx *c, const json_t *obj)
{
	static const char *const supported[] = {
		KUEUE_GROUP "/v1beta1", KUEUE_GROUP "/v1beta2", NULL
	};
	const char *s = codec_str(c, obj, "apiVersion");
	enum api_version v;

	if (!s)
		return API_V1BETA1;
	v = api_version_parse(s);
	if (v == API_UNKNOWN) {
		fe_unsupported(c->fe, "apiVersion", s, supported);
		v = API_V1BETA1;
	}
	c->v = v;
	return v;
}
