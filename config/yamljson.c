/*
 * yamljson: a YAML stream -> a JSON array of its documents (see
 * yamljson.h), with the scalar rules of sigs.k8s.io/yaml so that a file
 * means to cueue what it means to kubectl.
 *
 * DESIGN
 * libyaml's event parser drives an explicit stack of frames, one per open
 * sequence or mapping, so nesting is a counted limit and never the C
 * stack. A finished node is "delivered" to the frame below it (appended,
 * or stored under the pending key), and the finished root to the document.
 * Anchors are recorded when their node starts (so `&a [*a]` is caught as
 * self-containing, as go-yaml does) and filled when it ends; an alias is a
 * deep copy, so callers get a plain tree they may mutate. Every node is
 * counted the way go-yaml's decoder counts them, which bounds alias
 * expansion before any copy is made.
 *
 * The rules, from go-yaml v2's resolve.go/decode.go and sigs.k8s.io/yaml's
 * yaml.go (YAMLToJSON), in the order they apply:
 *  1. A quoted or block scalar without a tag is a string.
 *  2. An explicit tag: !!str is a string; !!binary is base64-decoded;
 *     !!int, !!float, !!bool, !!timestamp resolve the text as a plain
 *     scalar and fail when it is something else (!!float accepts an
 *     integer); any other tag (!foo, !!null, !!set) leaves the raw text.
 *  3. A plain scalar: a fixed table (true/True/TRUE, yes, y, on and their
 *     `false` forms; null, Null, NULL, ~ and the empty scalar; .inf, .nan),
 *     then by its first byte: `.` -> decimal float; digit or sign -> with
 *     `_` removed, Go's ParseInt(s, 0, 64) (0x, 0o, 0b, leading-0 octal),
 *     then ParseUint, then a decimal float; anything else, timestamps
 *     included, is a string.
 *  4. To JSON as encoding/json writes it: floats that are integral and
 *     below 1e21 print without a point, so `2.0` and `1e3` become the
 *     integers 2 and 1000 (when they fit int64; jansson's limit); .inf and
 *     .nan are errors; integers beyond int64 become reals.
 *  5. Mapping keys become strings: integers in decimal, floats as Go's
 *     FormatFloat(f, 'g', -1, 32), booleans "true"/"false". Null keys,
 *     keys beyond int64 and collection keys are errors. The last of
 *     duplicate keys wins.
 *  6. A plain untagged `<<` key (or one tagged !!merge) merges a mapping,
 *     or a sequence of mappings (earlier ones win), into the mapping at
 *     that point; keys written after it override it, keys before it are
 *     overridden (go-yaml v2 order, unlike v3).
 * Deviations, all in corners no manifest reaches: `.5_5` (Go reads 0.55)
 * is a string here; !!timestamp accepts any text; !!binary data that is
 * not UTF-8 is an error (Go substitutes U+FFFD).
 */
#include "config/yamljson.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/alloc.h"
#include "base/b64.h"
#include "base/hmap.h"
#include "config/yamlplain.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

/* What a scalar resolved to (rule 3). */
enum sc_type {
	SC_NULL,
	SC_BOOL,
	SC_INT,
	SC_UINT,
	SC_FLOAT,
	SC_STR,
};

struct scalar {
	enum sc_type type; /* selects the field below that holds the value */
	bool b;            /* SC_BOOL */
	int64_t i;         /* SC_INT */
	uint64_t u;        /* SC_UINT; > INT64_MAX */
	double d;          /* SC_FLOAT; may be inf or nan */
	const char *text;  /* SC_STR: borrowed from the event, or == owned */
	size_t len;        /* SC_STR: bytes at text; may hold NULs */
	char *owned;       /* owned decoded !!binary bytes, else NULL */
};

/* One open sequence or mapping. */
struct frame {
	json_t *node;      /* owned; the array or object being built */
	bool is_map;       /* node is an object (mapping), else an array */
	char *key;         /* owned; map only: pending key, NULL: key next */
	size_t keylen;     /* bytes in key; keys may hold NULs */
	yaml_mark_t keymark; /* where the pending key started */
	bool merge;        /* map only: the pending key is `<<` */
	size_t anchor;     /* 1 + index into ctx.an, or 0 when not anchored */
	size_t nodes;      /* go-yaml decode count of this subtree so far */
	unsigned height;   /* collection levels in this subtree; >= 1 */
	yaml_mark_t mark;  /* where it started */
};

/* One anchor definition of the current document. */
struct anchor {
	char *name;        /* owned */
	bool done;         /* false while its node is still being built */
	bool is_scalar;    /* the fields below tag describe it, value is NULL */
	json_t *value;     /* owned reference; collections, once done */
	char *tag;         /* owned or NULL; scalars: the raw event, so an */
	char *text;        /* owned;         alias can be resolved as a key */
	size_t len;        /*                or as a value */
	bool plain;        /*                (plain_implicit) */
	size_t nodes;      /* go-yaml decode count of the node */
	unsigned height;   /* collection levels; 0 for a scalar */
};

struct ctx {
	const char *text;      /* borrowed input, for reader-error positions */
	size_t len;            /* bytes at text */
	struct frame *st;      /* owned stack of open collections */
	size_t n, cap;         /* open (<= YAMLJSON_MAX_DEPTH), allocated */
	struct anchor *an;     /* owned; anchors of the current document in */
	size_t nan, capan;     /* the order their nodes started */
	struct hmap anchors;   /* name -> the latest definition in an;
				* rebuilt when an moves */
	json_t *docs;          /* owned; the result array */
	size_t *lines;         /* owned; start line of each entry of docs */
	size_t caplines;       /* allocated entries of lines */
	json_t *root;          /* owned; the current document's root or NULL */
	size_t doc_line;       /* 1-based start line of the current document */
	size_t decode_count;   /* go-yaml counters, per document */
	size_t alias_count;    /* (all nodes, nodes from aliases) */
	size_t alias_total;    /* nodes added by aliases, whole stream */
	struct err *err;       /* borrowed; the caller's */
};

static int fail_at(struct ctx *c, yaml_mark_t m, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

static int fail_at(struct ctx *c, yaml_mark_t m, const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(c->err, "line %zu, column %zu: %s", m.line + 1,
		       m.column + 1, msg);
}

/* ------------------------------------------------------------------ */
/* Scalars (rules 1-3) */

/* Rule 3: go-yaml's resolve() for an untagged plain scalar (yamlplain.h). */
static void resolve_plain(const char *in, size_t n, struct scalar *out)
{
	static const enum sc_type of[] = {
		[YAMLPLAIN_NULL] = SC_NULL,   [YAMLPLAIN_BOOL] = SC_BOOL,
		[YAMLPLAIN_INT] = SC_INT,     [YAMLPLAIN_UINT] = SC_UINT,
		[YAMLPLAIN_FLOAT] = SC_FLOAT, [YAMLPLAIN_STR] = SC_STR,
	};
	struct yamlplain p;

	yamlplain_resolve(in, n, &p);
	out->type = of[p.type];
	out->b = p.b;
	out->i = p.i;
	out->u = p.u;
	out->d = p.d;
	out->text = in;
	out->len = n;
}

static const char *type_tag(enum sc_type t)
{
	switch (t) {
	case SC_NULL: return "!!null";
	case SC_BOOL: return "!!bool";
	case SC_INT: case SC_UINT: return "!!int";
	case SC_FLOAT: return "!!float";
	case SC_STR: return "!!str";
	}
	return "?";
}

/*
 * Rules 1-2: resolves one scalar event (tag may be NULL; plain is libyaml's
 * plain_implicit). Fills out (release out->owned after use). Returns -1
 * with err set when the text contradicts its tag.
 */
static int resolve(struct ctx *c, yaml_mark_t m, const char *tag,
		   const char *in, size_t n, bool plain, struct scalar *out)
{
	const char *shrt = tag;
	char want[64];

	memset(out, 0, sizeof(*out));
	out->type = SC_STR;
	out->text = in;
	out->len = n;
	if (!tag) {
		if (plain)
			resolve_plain(in, n, out);
		return 0;
	}
	if (!strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX))) {
		snprintf(want, sizeof(want), "!!%s", tag + strlen(TAG_PREFIX));
		shrt = want;
	}
	if (!strcmp(shrt, "!!str") || !strcmp(shrt, "!!timestamp"))
		return 0;
	if (!strcmp(shrt, "!!binary")) {
		/* Go's base64.StdEncoding.DecodeString: padded, CR and LF
		 * ignored */
		out->owned = (char *)b64_decode(in, n, B64_SKIP_NL, &out->len,
						NULL);
		if (!out->owned)
			return fail_at(c, m, "!!binary value contains invalid "
				       "base64 data");
		out->text = out->owned;
		return 0;
	}
	if (strcmp(shrt, "!!int") && strcmp(shrt, "!!float") &&
	    strcmp(shrt, "!!bool"))
		return 0; /* unknown tags keep the raw text, as go-yaml does */
	resolve_plain(in, n, out);
	if (!strcmp(shrt, type_tag(out->type)))
		return 0;
	if (!strcmp(shrt, "!!float") && out->type == SC_INT) {
		out->type = SC_FLOAT;
		out->d = (double)out->i;
		return 0;
	}
	return fail_at(c, m, "cannot decode %s `%.*s` as a %s",
		       type_tag(out->type), (int)(n > 64 ? 64 : n), in, shrt);
}

/* Rule 4: the JSON value of a resolved scalar; NULL + err when JSON has
 * none. */
static json_t *scalar_json(struct ctx *c, yaml_mark_t m, const struct scalar *s)
{
	json_t *j = NULL;

	switch (s->type) {
	case SC_NULL:
		return json_null();
	case SC_BOOL:
		return json_boolean(s->b);
	case SC_INT:
		return json_integer((json_int_t)s->i);
	case SC_UINT:
		return json_real((double)s->u);
	case SC_FLOAT:
		if (isnan(s->d) || isinf(s->d)) {
			fail_at(c, m, "%s cannot be represented in JSON",
				isnan(s->d) ? ".nan" :
				s->d > 0 ? ".inf" : "-.inf");
			return NULL;
		}
		/* encoding/json prints integral values below 1e21 with no
		 * point or exponent, so the JSON reader sees an integer. */
		if (s->d == trunc(s->d) && fabs(s->d) < 1e21 &&
		    s->d >= -0x1p63 && s->d < 0x1p63)
			return json_integer((json_int_t)s->d);
		return json_real(s->d);
	case SC_STR:
		j = json_stringn(s->text, s->len);
		if (!j)
			fail_at(c, m, "string is not valid UTF-8");
		return j;
	}
	return NULL;
}

/* Go's strconv.FormatFloat(f, 'g', -1, 32), as sigs.k8s.io/yaml renders
 * float keys. */
static void go_float32_text(double d, char *buf, size_t size)
{
	float f = (float)d;
	char e[48];
	int p, exp;

	if (isnan(f)) {
		snprintf(buf, size, ".nan");
		return;
	}
	if (isinf(f)) {
		snprintf(buf, size, f > 0 ? ".inf" : "-.inf");
		return;
	}
	if (f == 0) {
		snprintf(buf, size, signbit(f) ? "-0" : "0");
		return;
	}
	/* Fewest significant digits that read back as the same float32;
	 * nine always do. */
	for (p = 1; p < 9; p++) {
		snprintf(e, sizeof(e), "%.*e", p - 1, (double)f);
		if (strtof(e, NULL) == f)
			break;
	}
	snprintf(e, sizeof(e), "%.*e", p - 1, (double)f);
	exp = atoi(strchr(e, 'e') + 1);
	if (exp < -4 || exp >= 6)
		snprintf(buf, size, "%s", e);
	else
		snprintf(buf, size, "%.*f", p - 1 - exp > 0 ? p - 1 - exp : 0,
			 (double)f);
}

/* Rule 5: a new key string (length in *len) for a resolved scalar, or
 * NULL + err. */
static char *scalar_key(struct ctx *c, yaml_mark_t m, const struct scalar *s,
			size_t *len)
{
	char buf[64];

	switch (s->type) {
	case SC_STR:
		*len = s->len;
		return xstrndup(s->text, s->len);
	case SC_INT:
		snprintf(buf, sizeof(buf), "%lld", (long long)s->i);
		break;
	case SC_BOOL:
		snprintf(buf, sizeof(buf), "%s", s->b ? "true" : "false");
		break;
	case SC_FLOAT:
		go_float32_text(s->d, buf, sizeof(buf));
		break;
	case SC_NULL:
		fail_at(c, m, "null is not a valid mapping key");
		return NULL;
	case SC_UINT:
		fail_at(c, m, "mapping key %llu is out of range",
			(unsigned long long)s->u);
		return NULL;
	}
	*len = strlen(buf);
	return xstrdup(buf);
}

/* go-yaml's isMerge: the text `<<`, plain and untagged or tagged !!merge. */
static bool is_merge_key(const char *tag, const char *text, size_t n,
			 bool plain)
{
	if (n != 2 || memcmp(text, "<<", 2))
		return false;
	return tag ? !strcmp(tag, TAG_PREFIX "merge") : plain;
}

/* ------------------------------------------------------------------ */
/* Counting, anchors, delivery */

/* go-yaml v2's allowedAliasRatio: 99% for documents up to 400k nodes,
 * sliding to 10% at 4M. */
static double allowed_alias_ratio(size_t decode)
{
	if (decode <= 400000)
		return 0.99;
	if (decode >= 4000000)
		return 0.10;
	return 0.99 - 0.89 * ((double)(decode - 400000) / 3600000.0);
}

/* Counts plain + aliased decoded nodes; fails on excessive aliasing. */
static int count(struct ctx *c, yaml_mark_t m, size_t plain, size_t aliased)
{
	c->decode_count += plain + aliased;
	c->alias_count += aliased;
	c->alias_total += aliased;
	if (c->alias_total > YAMLJSON_MAX_ALIAS_NODES)
		return fail_at(c, m, "aliases expand to more than %zu nodes",
			       YAMLJSON_MAX_ALIAS_NODES);
	if (c->alias_count > 100 && c->decode_count > 1000 &&
	    (double)c->alias_count / (double)c->decode_count >
	    allowed_alias_ratio(c->decode_count))
		return fail_at(c, m, "document contains excessive aliasing");
	return 0;
}

/* The index is dropped with the document's anchors, so a stream of many
 * small documents never pays for one large document's table. */
static void anchors_clear(struct ctx *c)
{
	for (size_t k = 0; k < c->nan; k++) {
		free(c->an[k].name);
		json_decref(c->an[k].value);
		free(c->an[k].tag);
		free(c->an[k].text);
	}
	c->nan = 0;
	hmap_release(&c->anchors);
}

/*
 * Starts an anchor definition; returns its 1-based index. A name defined
 * again takes over its map entry, as a later anchor shadows an earlier
 * one. A hash index keeps anchor-heavy input linear: a linear scan made
 * 40k anchors and aliases take seconds, 64 MiB of them hours.
 */
static size_t anchor_begin(struct ctx *c, const char *name)
{
	size_t cap = c->capan;
	struct anchor *a;

	XGROW(c->an, c->capan, c->nan + 1);
	if (c->capan != cap) /* an may have moved: point the map at it */
		for (size_t k = 0; k < c->nan; k++)
			hmap_put(&c->anchors, c->an[k].name, &c->an[k]);
	a = &c->an[c->nan++];
	memset(a, 0, sizeof(*a));
	a->name = xstrdup(name);
	hmap_put(&c->anchors, a->name, a);
	return c->nan;
}

/* The latest definition of name started so far, or NULL. */
static struct anchor *anchor_find(struct ctx *c, const char *name)
{
	return hmap_get(&c->anchors, name);
}

static struct frame *top(struct ctx *c)
{
	return c->n ? &c->st[c->n - 1] : NULL;
}

static bool wants_key(const struct frame *f)
{
	return f && f->is_map && !f->key && !f->merge;
}

/* Rule 6: merges v (borrowed) into the object obj. */
static int merge_into(struct ctx *c, yaml_mark_t m, json_t *obj, json_t *v)
{
	if (json_is_object(v))
		return json_object_update(obj, v);
	if (!json_is_array(v))
		goto bad;
	for (size_t k = 0; k < json_array_size(v); k++)
		if (!json_is_object(json_array_get(v, k)))
			goto bad;
	/* Backwards: earlier mappings in the list take precedence. */
	for (size_t k = json_array_size(v); k > 0; k--)
		json_object_update(obj, json_array_get(v, k - 1));
	return 0;
bad:
	return fail_at(c, m, "map merge requires map or sequence of maps as "
		       "the value");
}

/*
 * Hands a finished node v (stolen) of the given decode count and height
 * to the open collection, or makes it the document's root.
 */
static int deliver(struct ctx *c, yaml_mark_t m, json_t *v, size_t nodes,
		   unsigned height)
{
	struct frame *f = top(c);
	int rc = 0;

	if (!f) {
		json_decref(c->root);
		c->root = v;
		return 0;
	}
	f->nodes += nodes;
	if (height + 1 > f->height)
		f->height = height + 1;
	if (!f->is_map) {
		json_array_append_new(f->node, v);
	} else if (f->merge) {
		rc = merge_into(c, m, f->node, v);
		json_decref(v);
		f->merge = false;
	} else {
		/* jansson refuses keys that are not UTF-8 (a !!binary key);
		 * say so rather than drop the member. */
		if (json_object_setn_new(f->node, f->key, f->keylen, v) != 0)
			rc = fail_at(c, f->keymark,
				     "mapping key is not valid UTF-8");
		FREE_AND_NULL(f->key);
	}
	return rc;
}

/* ------------------------------------------------------------------ */
/* Events */

/* A scalar (or an aliased scalar's raw event) in key position. */
static int take_key(struct ctx *c, yaml_mark_t m, struct frame *f,
		    const char *tag, const char *text, size_t n, bool plain)
{
	struct scalar s;

	if (is_merge_key(tag, text, n, plain)) {
		f->merge = true;
		return 0;
	}
	if (resolve(c, m, tag, text, n, plain, &s))
		return -1;
	f->key = scalar_key(c, m, &s, &f->keylen);
	f->keymark = m;
	free(s.owned);
	return f->key ? 0 : -1;
}

static json_t *raw_scalar_json(struct ctx *c, yaml_mark_t m, const char *tag,
			       const char *text, size_t n, bool plain)
{
	struct scalar s;
	json_t *v;

	if (resolve(c, m, tag, text, n, plain, &s))
		return NULL;
	v = scalar_json(c, m, &s);
	free(s.owned);
	return v;
}

static int on_scalar(struct ctx *c, const yaml_event_t *ev)
{
	yaml_mark_t m = ev->start_mark;
	const char *tag = (const char *)ev->data.scalar.tag;
	const char *text = (const char *)ev->data.scalar.value;
	size_t n = ev->data.scalar.length;
	bool plain = ev->data.scalar.plain_implicit;
	struct frame *f = top(c);
	json_t *v;

	if (count(c, m, 1, 0))
		return -1;
	if (ev->data.scalar.anchor) {
		const char *name = (const char *)ev->data.scalar.anchor;
		size_t k = anchor_begin(c, name);
		struct anchor *a = &c->an[k - 1];

		a->done = true;
		a->is_scalar = true;
		a->tag = xstrdup_or_null(tag);
		a->text = xstrndup(text, n);
		a->len = n;
		a->plain = plain;
		a->nodes = 1;
	}
	if (wants_key(f)) {
		f->nodes++;
		return take_key(c, m, f, tag, text, n, plain);
	}
	v = raw_scalar_json(c, m, tag, text, n, plain);
	if (!v)
		return -1;
	return deliver(c, m, v, 1, 0);
}

static int on_alias(struct ctx *c, const yaml_event_t *ev)
{
	yaml_mark_t m = ev->start_mark;
	const char *name = (const char *)ev->data.alias.anchor;
	struct anchor *a = anchor_find(c, name);
	struct frame *f = top(c);
	json_t *v;

	if (!a)
		return fail_at(c, m, "unknown anchor '%s' referenced", name);
	if (!a->done)
		return fail_at(c, m, "anchor '%s' value contains itself", name);
	if (count(c, m, 1, a->nodes))
		return -1;
	if (wants_key(f)) {
		if (!a->is_scalar)
			return fail_at(c, m, "invalid map key: a %s",
				       json_is_object(a->value) ? "mapping"
								: "sequence");
		f->nodes += 1 + a->nodes;
		return take_key(c, m, f, a->tag, a->text, a->len, a->plain);
	}
	if (c->n + a->height > YAMLJSON_MAX_DEPTH)
		return fail_at(c, m, "nesting is deeper than %d levels",
			       YAMLJSON_MAX_DEPTH);
	if (a->is_scalar)
		v = raw_scalar_json(c, m, a->tag, a->text, a->len, a->plain);
	else
		v = json_deep_copy(a->value);
	if (!v)
		return -1;
	return deliver(c, m, v, 1 + a->nodes, a->height);
}

static int on_start(struct ctx *c, const yaml_event_t *ev, bool is_map)
{
	yaml_mark_t m = ev->start_mark;
	const yaml_char_t *anchor = is_map ? ev->data.mapping_start.anchor
					   : ev->data.sequence_start.anchor;
	struct frame *f;

	if (wants_key(top(c)))
		return fail_at(c, m, "invalid map key: a %s",
			       is_map ? "mapping" : "sequence");
	if (c->n + 1 > YAMLJSON_MAX_DEPTH)
		return fail_at(c, m, "nesting is deeper than %d levels",
			       YAMLJSON_MAX_DEPTH);
	if (count(c, m, 1, 0))
		return -1;
	XGROW(c->st, c->cap, c->n + 1);
	f = &c->st[c->n++];
	memset(f, 0, sizeof(*f));
	f->node = is_map ? json_object() : json_array();
	f->is_map = is_map;
	f->nodes = 1;
	f->height = 1;
	f->mark = m;
	if (anchor)
		f->anchor = anchor_begin(c, (const char *)anchor);
	return 0;
}

static int on_end(struct ctx *c)
{
	struct frame f = c->st[--c->n];

	if (f.anchor) {
		struct anchor *a = &c->an[f.anchor - 1];

		a->done = true;
		a->value = json_incref(f.node);
		a->nodes = f.nodes;
		a->height = f.height;
	}
	free(f.key); /* only set when the mapping ended early: never */
	return deliver(c, f.mark, f.node, f.nodes, f.height);
}

static void doc_end(struct ctx *c)
{
	if (c->root && !json_is_null(c->root)) {
		size_t i = json_array_size(c->docs);

		XGROW(c->lines, c->caplines, i + 1);
		c->lines[i] = c->doc_line;
		json_array_append_new(c->docs, c->root);
	} else {
		json_decref(c->root);
	}
	c->root = NULL;
	anchors_clear(c);
}

/* Formats libyaml's error into c->err. */
static int parser_fail(struct ctx *c, const yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "unknown problem";

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		/* The process-wide policy (alloc.h): OOM aborts. */
		fputs("cueue: out of memory in libyaml\n", stderr);
		abort();
	case YAML_READER_ERROR: {
		yaml_mark_t m = { 0, 0, 0 };
		size_t off = p->problem_offset < c->len ? p->problem_offset
							  : c->len;

		for (size_t k = 0; k < off; k++) {
			if (c->text[k] == '\n') {
				m.line++;
				m.column = 0;
			} else {
				m.column++;
			}
		}
		if (p->problem_value != -1)
			return fail_at(c, m, "%s (#%X)", problem,
				       (unsigned)p->problem_value);
		return fail_at(c, m, "%s", problem);
	}
	default:
		if (p->context)
			return fail_at(c, p->problem_mark,
				       "%s (%s at line %zu, column %zu)",
				       problem, p->context,
				       p->context_mark.line + 1,
				       p->context_mark.column + 1);
		return fail_at(c, p->problem_mark, "%s", problem);
	}
}

static int run(struct ctx *c)
{
	yaml_parser_t p;
	yaml_event_t ev;
	bool done = false;
	int rc = 0;

	if (!yaml_parser_initialize(&p)) {
		fputs("cueue: out of memory in libyaml\n", stderr);
		abort();
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)c->text,
				     c->len);
	while (!done && rc == 0) {
		if (!yaml_parser_parse(&p, &ev)) {
			rc = parser_fail(c, &p);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		case YAML_DOCUMENT_START_EVENT:
			c->doc_line = ev.start_mark.line + 1;
			c->decode_count = 0;
			c->alias_count = 0;
			break;
		case YAML_DOCUMENT_END_EVENT:
			doc_end(c);
			break;
		case YAML_SCALAR_EVENT:
			rc = on_scalar(c, &ev);
			break;
		case YAML_ALIAS_EVENT:
			rc = on_alias(c, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
			rc = on_start(c, &ev,
				      ev.type == YAML_MAPPING_START_EVENT);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			rc = on_end(c);
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

static int load(const char *text, size_t len, json_t **docs_out,
		size_t **lines_out, struct err *err)
{
	struct ctx c;
	int rc;

	*docs_out = NULL;
	if (lines_out)
		*lines_out = NULL;
	if (len > YAMLJSON_MAX_BYTES)
		return err_set(err, "input is larger than %zu MiB",
			       YAMLJSON_MAX_BYTES >> 20);
	memset(&c, 0, sizeof(c));
	c.text = text;
	c.len = len;
	c.err = err;
	c.docs = json_array();
	rc = run(&c);
	while (c.n > 0) {
		struct frame *f = &c.st[--c.n];

		json_decref(f->node);
		free(f->key);
	}
	free(c.st);
	anchors_clear(&c);
	free(c.an);
	json_decref(c.root);
	if (rc) {
		json_decref(c.docs);
		free(c.lines);
		return -1;
	}
	*docs_out = c.docs;
	if (lines_out)
		*lines_out = c.lines;
	else
		free(c.lines);
	return 0;
}

/* Reads the whole file into a new buffer; -1 + err past the cap. */
static int read_file(const char *path, char **out, size_t *outlen,
		     struct err *err)
{
	FILE *fp = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0;
	int rc = -1;

	*out = NULL;
	if (!fp)
		return err_set(err, "%s: %s", path, strerror(errno));
	for (;;) {
		size_t got;

		if (cap - len < 65536) {
			cap = cap ? cap * 2 : 65536;
			buf = xrealloc(buf, cap);
		}
		got = fread(buf + len, 1, cap - len, fp);
		len += got;
		if (len > YAMLJSON_MAX_BYTES) {
			err_set(err, "%s: file is larger than %zu MiB", path,
				YAMLJSON_MAX_BYTES >> 20);
			goto out;
		}
		if (got == 0)
			break;
	}
	if (ferror(fp)) {
		err_set(err, "%s: %s", path, strerror(errno));
		goto out;
	}
	*out = buf;
	*outlen = len;
	buf = NULL;
	rc = 0;
out:
	free(buf);
	fclose(fp);
	return rc;
}

int yamljson_load_string_lines(const char *text, size_t len,
			       json_t **docs_out, size_t **lines_out,
			       struct err *err)
{
	return load(text, len, docs_out, lines_out, err);
}

int yamljson_load_string(const char *text, size_t len, json_t **docs_out,
			 struct err *err)
{
	return load(text, len, docs_out, NULL, err);
}

int yamljson_load_file_lines(const char *path, json_t **docs_out,
			     size_t **lines_out, struct err *err)
{
	struct err e = { "" };
	char *text;
	size_t len = 0;
	int rc;

	*docs_out = NULL;
	if (lines_out)
		*lines_out = NULL;
	if (read_file(path, &text, &len, err))
		return -1;
	rc = load(text, len, docs_out, lines_out, &e);
	if (rc)
		err_set(err, "%s: %s", path, e.msg);
	free(text);
	return rc;
}

int yamljson_load_file(const char *path, json_t **docs_out, struct err *err)
{
	return yamljson_load_file_lines(path, docs_out, NULL, err);
}
