/*
 * managed: managedFields bookkeeping for updates and server-side apply
 * (see managed.h for the contract).
 *
 * The walks over objects follow structured-merge-diff's typed package:
 *
 *   to_set   ToFieldSet: every scalar, atomic list or map, null or empty
 *            map is a member; so is every item of a list-type set or map
 *            and every key of a map that is not a declared field.
 *   compare  Compare: leaves (scalars, atomic values, empty containers)
 *            are Added, Removed or Modified; a container present on one
 *            side only is Added or Removed as well.
 *   merge    Merge (ruleKeepRHS): the applied value wins at every leaf,
 *            maps merge key by key, list-type maps by their keys and sets
 *            by value, other lists are replaced.
 *   prune    Updater.prune: what the applier owned last time, owns no
 *            more, and nobody else owns, is removed (a named field that
 *            held something of its is removed whole once nobody owns
 *            anything under it: EnsureNamedFieldsAreMembers).
 *
 * and the managers' sets change as merge.Updater's update() changes them:
 * what a write changes is taken from everyone else (an apply must be
 * forced to do that, else it is a conflict), what it removes leaves every
 * set. Fields kube-apiserver strips (apiVersion, kind, metadata's name,
 * namespace, uid, resourceVersion, generation, creationTimestamp,
 * managedFields...) and the fields the other half of a status
 * subresource resets are never owned.
 *
 * Known simplifications, documented in the README: every manager's paths
 * are compared in the request's version (kube converts the objects to
 * each manager's version first); built-in containers are Go structs or
 * maps alike (kube's typed empty object makes a struct never "Added"); a
 * list-type map item lacking its keys' defaults is keyed by the keys it
 * has; the last-applied-configuration annotation of client-side apply is
 * neither read nor updated.
 */
#include "devserver/managed.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "devserver/fieldset.h"
#include "devserver/patch.h"
#include "model/timestamp.h"

#define ANCIENT "ancient-changes"
#define MANAGER_MAX 128

/* jansson's iterators take a non-const object but never modify it. */
static json_t *unconst(const json_t *j)
{
	return (json_t *)(uintptr_t)j;
}

/* ---------------------------------------------------------------------
 * Types
 */

enum mode {
	M_ROOT,     /* the object: apiVersion, kind, metadata + the kind's */
	M_CRD,      /* a node of the CRD schema (schema may be NULL) */
	M_BUILTIN,  /* a node of a built-in kind, at ctx->bpath */
	M_META,     /* ObjectMeta */
	M_STRMAP,   /* labels, annotations: map[string]string */
	M_FIN,      /* metadata.finalizers: a set */
	M_OWNERS,   /* metadata.ownerReferences: a map by uid */
	M_DEDUCED,  /* no type known: maps granular, lists atomic */
	M_SKIP,     /* metadata.managedFields: never walked */
};

struct ty {
	enum mode mode;
	const json_t *schema; /* M_CRD: the schema node, or NULL */
};

enum lkind { LK_ATOMIC, LK_SET, LK_MAP };

#define MAX_KEYS 8

struct lkeys {
	const char *k[MAX_KEYS]; /* borrowed names, sorted */
	size_t n;
};

struct ctx {
	const struct managed_req *r;
	struct sbuf bpath;   /* built-ins: "spec.template.spec.containers.*" */
	struct sbuf err;     /* the first error of a walk ("" none) */
	struct sbuf dpath;   /* the display path of the walk, for errors */
};

static const char *str_of(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool is_str(const json_t *o, const char *k, const char *v)
{
	const char *s = str_of(o, k);

	return s && !strcmp(s, v);
}

/* Descends into member k of ty. *declared: k is a field of a struct (not
 * a key of a map), which decides ToFieldSet's membership of a
 * non-empty container. Pushes onto bpath for built-ins; the caller pops
 * to *mark. */
static struct ty ty_member(struct ctx *c, struct ty t, const char *k,
			   bool *declared, size_t *mark)
{
	struct ty out = { M_DEDUCED, NULL };

	*declared = true;
	*mark = c->bpath.len;
	switch (t.mode) {
	case M_ROOT:
		if (!strcmp(k, "metadata")) {
			out.mode = M_META;
		} else if (c->r->keys) {
			out.mode = M_BUILTIN;
			(void)sbuf_adds(&c->bpath, k);
		} else {
			const json_t *props = json_object_get(c->r->schema,
							      "properties");

			out.mode = M_CRD;
			out.schema = json_object_get(props, k);
			*declared = out.schema || !c->r->schema;
		}
		return out;
	case M_META:
		if (!strcmp(k, "labels") || !strcmp(k, "annotations"))
			out.mode = M_STRMAP;
		else if (!strcmp(k, "finalizers"))
			out.mode = M_FIN;
		else if (!strcmp(k, "ownerReferences"))
			out.mode = M_OWNERS;
		else if (!strcmp(k, "managedFields"))
			out.mode = M_SKIP;
		return out;
	case M_BUILTIN:
		if (!strcmp(k, "metadata")) {
			out.mode = M_META;
			return out;
		}
		out.mode = M_BUILTIN;
		(void)sbuf_addch(&c->bpath, '.');
		(void)sbuf_adds(&c->bpath, k);
		return out;
	case M_CRD: {
		const json_t *props = json_object_get(t.schema, "properties");
		const json_t *sub = json_object_get(props, k);
		const json_t *ap;

		if (sub) {
			if (!strcmp(k, "metadata") &&
			    json_is_true(json_object_get(
				    t.schema, "x-kubernetes-embedded-resource")))
				out.mode = M_META;
			else
				out = (struct ty){ M_CRD, sub };
			return out;
		}
		*declared = false;
		ap = json_object_get(t.schema, "additionalProperties");
		if (json_is_object(ap))
			out = (struct ty){ M_CRD, ap };
		return out;
	}
	default:
		*declared = false;
		return out;
	}
}

/* The element type of a list of ty. */
static struct ty ty_item(struct ctx *c, struct ty t, size_t *mark)
{
	*mark = c->bpath.len;
	if (t.mode == M_CRD)
		return (struct ty){ M_CRD,
				    json_object_get(t.schema, "items") };
	if (t.mode == M_BUILTIN) {
		(void)sbuf_adds(&c->bpath, ".*");
		return t;
	}
	return (struct ty){ M_DEDUCED, NULL };
}

static void ty_pop(struct ctx *c, size_t mark)
{
	sbuf_setlen(&c->bpath, mark);
}

static bool ty_atomic_map(struct ty t)
{
	return t.mode == M_CRD &&
	       is_str(t.schema, "x-kubernetes-map-type", "atomic");
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static enum lkind ty_list(struct ctx *c, struct ty t, struct lkeys *keys)
{
	keys->n = 0;
	switch (t.mode) {
	case M_FIN:
		return LK_SET;
	case M_OWNERS:
		keys->k[keys->n++] = "uid";
		return LK_MAP;
	case M_CRD: {
		const char *lt = str_of(t.schema, "x-kubernetes-list-type");
		const json_t *mk, *v;
		size_t i;

		if (!lt)
			return LK_ATOMIC;
		if (!strcmp(lt, "set"))
			return LK_SET;
		if (strcmp(lt, "map"))
			return LK_ATOMIC;
		mk = json_object_get(t.schema, "x-kubernetes-list-map-keys");
		json_array_foreach(mk, i, v)
			if (json_is_string(v) && keys->n < MAX_KEYS)
				keys->k[keys->n++] = json_string_value(v);
		qsort(keys->k, keys->n, sizeof(keys->k[0]), cmp_str);
		return keys->n ? LK_MAP : LK_ATOMIC;
	}
	case M_BUILTIN:
		for (const struct smp_key *k = c->r->keys; k && k->path; k++) {
			if (strcmp(k->path, sbuf_cstr(&c->bpath)))
				continue;
			if (!k->key)
				return LK_SET;
			keys->k[keys->n++] = k->key;
			return LK_MAP;
		}
		return LK_ATOMIC;
	default:
		return LK_ATOMIC;
	}
}

/* ---------------------------------------------------------------------
 * Path elements
 */

/* "f:<k>" into b (reset first). */
static const char *pe_field(struct sbuf *b, const char *k)
{
	sbuf_reset(b);
	(void)sbuf_adds(b, "f:");
	(void)sbuf_adds(b, k);
	return sbuf_cstr(b);
}

/* A JSON string for s into b: encoding/json's compact escapes of
 * quote, backslash and control characters (UTF-8 as is). */
static void put_json_str(struct sbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";

	(void)sbuf_addch(b, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

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

/* The compact JSON of v into b; scalars without a JSON library call. */
static void put_json(struct sbuf *b, const json_t *v)
{
	char *t;

	switch (json_typeof(v)) {
	case JSON_STRING:
		put_json_str(b, json_string_value(v), json_string_length(v));
		return;
	case JSON_INTEGER:
		(void)sbuf_addf(b, "%" JSON_INTEGER_FORMAT,
				json_integer_value(v));
		return;
	case JSON_TRUE:
		(void)sbuf_adds(b, "true");
		return;
	case JSON_FALSE:
		(void)sbuf_adds(b, "false");
		return;
	case JSON_NULL:
		(void)sbuf_adds(b, "null");
		return;
	default:
		t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		(void)sbuf_adds(b, t ? t : "null");
		free(t);
	}
}

/* The path element of a list item into b: "k:{...}" by the list's keys
 * (those the item has), "v:<json>" for a set. NULL when a map item is
 * not an object or has none of the keys. */
static const char *pe_item(struct sbuf *b, enum lkind lk,
			   const struct lkeys *keys, const json_t *item)
{
	sbuf_reset(b);
	if (lk == LK_SET) {
		(void)sbuf_adds(b, "v:");
		put_json(b, item);
		return sbuf_cstr(b);
	}
	if (!json_is_object(item))
		return NULL;
	(void)sbuf_adds(b, "k:{");
	for (size_t i = 0, n = 0; i < keys->n; i++) {
		const json_t *v = json_object_get(item, keys->k[i]);

		if (!v)
			continue;
		if (n++)
			(void)sbuf_addch(b, ',');
		put_json_str(b, keys->k[i], strlen(keys->k[i]));
		(void)sbuf_addch(b, ':');
		put_json(b, v);
	}
	if (b->len == 3)
		return NULL;
	(void)sbuf_addch(b, '}');
	return sbuf_cstr(b);
}

/* value.ToString: strings quoted, other scalars as JSON. New string. */
static char *value_text(const json_t *v)
{
	char *t = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

	return t ? t : xstrdup("null");
}

/* A path element as fieldpath.PathElement.String() prints it:
 * ".name", "[name=\"main\"]", "[=\"a\"]", "[3]". */
static void pe_display(struct sbuf *b, const char *pe)
{
	json_t *j;

	if (pe[0] == 'f') {
		(void)sbuf_addch(b, '.');
		(void)sbuf_adds(b, pe + 2);
		return;
	}
	if (pe[0] == 'i') {
		(void)sbuf_addf(b, "[%s]", pe + 2);
		return;
	}
	j = json_loads(pe + 2, JSON_DECODE_ANY, NULL);
	if (pe[0] == 'v') {
		char *t = value_text(j);

		(void)sbuf_addf(b, "[=%s]", t);
		free(t);
	} else {
		const char *k;
		json_t *v;
		bool first = true;

		(void)sbuf_addch(b, '[');
		json_object_foreach(j, k, v) {
			char *t = value_text(v);

			(void)sbuf_addf(b, "%s%s=%s", first ? "" : ",", k, t);
			free(t);
			first = false;
		}
		(void)sbuf_addch(b, ']');
	}
	json_decref(j);
}

/* ---------------------------------------------------------------------
 * ToFieldSet
 */

static void fail(struct ctx *c, const char *fmt, ...) PRINTF_LIKE(2, 3);

static void fail(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->err.len)
		return;
	va_start(ap, fmt);
	(void)sbuf_vaddf(&c->err, fmt, ap);
	va_end(ap);
}

static void to_set(struct ctx *c, struct ty t, const json_t *v,
		   struct fset *node);

static void to_set_list(struct ctx *c, struct ty t, const json_t *v,
			struct fset *node)
{
	struct lkeys keys;
	enum lkind lk = ty_list(c, t, &keys);
	struct sbuf pe = SBUF_INIT;
	size_t i, mark;
	const json_t *item;
	struct ty it;

	if (lk == LK_ATOMIC) {
		node->member = true;
		return;
	}
	it = ty_item(c, t, &mark);
	json_array_foreach(v, i, item) {
		struct fset *kid;

		if (!pe_item(&pe, lk, &keys, item))
			continue;
		kid = fset_child(node, pe.buf, pe.len, true);
		to_set(c, it, item, kid);
		kid = fset_child(node, pe.buf, pe.len, false);
		kid->member = true;
	}
	ty_pop(c, mark);
	sbuf_release(&pe);
}

static void to_set(struct ctx *c, struct ty t, const json_t *v,
		   struct fset *node)
{
	struct sbuf pe = SBUF_INIT;
	const char *k;
	json_t *m;

	if (t.mode == M_SKIP)
		return;
	if (json_is_array(v)) {
		to_set_list(c, t, v, node);
		return;
	}
	if (!json_is_object(v) || ty_atomic_map(t)) {
		node->member = true;
		return;
	}
	json_object_foreach(unconst(v), k, m) {
		bool declared;
		size_t mark;
		struct ty ct = ty_member(c, t, k, &declared, &mark);
		struct fset *kid;

		if (ct.mode == M_SKIP) {
			ty_pop(c, mark);
			continue;
		}
		pe_field(&pe, k);
		kid = fset_child(node, pe.buf, pe.len, true);
		to_set(c, ct, m, kid);
		kid = fset_child(node, pe.buf, pe.len, false);
		if (json_is_null(m) ||
		    (json_is_object(m) && !json_object_size(m)) || !declared)
			kid->member = true;
		ty_pop(c, mark);
	}
	sbuf_release(&pe);
}

/* ---------------------------------------------------------------------
 * Compare
 */

struct cmp {
	struct fset *added, *modified, *removed; /* owned */
	struct sbuf text; /* the path's key texts, each NUL-terminated */
	size_t *at;       /* owned; n offsets into text */
	size_t n, cap;
};

static void cmp_push(struct cmp *w, const char *pe)
{
	XGROW(w->at, w->cap, w->n + 1);
	w->at[w->n++] = w->text.len;
	(void)sbuf_add(&w->text, pe, strlen(pe) + 1);
}

static void cmp_pop(struct cmp *w)
{
	sbuf_setlen(&w->text, w->at[--w->n]);
}

/* Makes the walk's current path a member of s. */
static void insert(struct fset *s, const struct cmp *w)
{
	for (size_t i = 0; i < w->n; i++) {
		const char *pe = w->text.buf + w->at[i];

		s = fset_child(s, pe, strlen(pe), true);
	}
	if (w->n)
		s->member = true;
}

static bool is_empty_container(const json_t *v)
{
	return !v || json_is_null(v) ||
	       (json_is_object(v) && !json_object_size(v)) ||
	       (json_is_array(v) && !json_array_size(v));
}

static void compare(struct ctx *c, struct cmp *w, struct ty t,
		    const json_t *l, const json_t *r);

/* The items of a non-atomic list, by path element (first one wins); the
 * texts share one buffer. */
struct items {
	struct sbuf text;   /* the path elements, each NUL-terminated */
	size_t *at;         /* owned; n offsets into text */
	const json_t **v;   /* borrowed */
	size_t n, cap, vcap;
};

static void items_release(struct items *it)
{
	sbuf_release(&it->text);
	free(it->at);
	free(it->v);
}

static const char *items_pe(const struct items *it, size_t i)
{
	return it->text.buf + it->at[i];
}

static const json_t *items_find(const struct items *it, const char *pe)
{
	for (size_t i = 0; i < it->n; i++)
		if (!strcmp(items_pe(it, i), pe))
			return it->v[i];
	return NULL;
}

static void items_index(struct items *it, enum lkind lk,
			const struct lkeys *keys, const json_t *list)
{
	struct sbuf pe = SBUF_INIT;
	const json_t *item;
	size_t i;

	memset(it, 0, sizeof(*it));
	json_array_foreach(list, i, item) {
		if (!pe_item(&pe, lk, keys, item) || items_find(it, pe.buf))
			continue;
		XGROW(it->at, it->cap, it->n + 1);
		XGROW(it->v, it->vcap, it->n + 1);
		it->at[it->n] = it->text.len;
		(void)sbuf_add(&it->text, pe.buf, pe.len + 1);
		it->v[it->n++] = item;
	}
	sbuf_release(&pe);
}

static void compare_list(struct ctx *c, struct cmp *w, struct ty t,
			 enum lkind lk, const struct lkeys *keys,
			 const json_t *l, const json_t *r)
{
	struct items li, ri;
	size_t mark;
	struct ty it = ty_item(c, t, &mark);

	items_index(&li, lk, keys, l);
	items_index(&ri, lk, keys, r);
	for (size_t i = 0; i < li.n; i++) {
		cmp_push(w, items_pe(&li, i));
		compare(c, w, it, li.v[i], items_find(&ri, items_pe(&li, i)));
		cmp_pop(w);
	}
	for (size_t i = 0; i < ri.n; i++) {
		if (items_find(&li, items_pe(&ri, i)))
			continue;
		cmp_push(w, items_pe(&ri, i));
		compare(c, w, it, NULL, ri.v[i]);
		cmp_pop(w);
	}
	ty_pop(c, mark);
	items_release(&li);
	items_release(&ri);
}

static void compare_map(struct ctx *c, struct cmp *w, struct ty t,
			const json_t *l, const json_t *r)
{
	struct sbuf pe = SBUF_INIT;
	const char *k;
	json_t *v;

	json_object_foreach(unconst(l), k, v) {
		bool declared;
		size_t mark;
		struct ty ct = ty_member(c, t, k, &declared, &mark);

		if (ct.mode != M_SKIP) {
			cmp_push(w, pe_field(&pe, k));
			compare(c, w, ct, v, json_object_get(r, k));
			cmp_pop(w);
		}
		ty_pop(c, mark);
	}
	json_object_foreach(unconst(r), k, v) {
		bool declared;
		size_t mark;
		struct ty ct;

		if (json_object_get(l, k))
			continue;
		ct = ty_member(c, t, k, &declared, &mark);
		if (ct.mode != M_SKIP) {
			cmp_push(w, pe_field(&pe, k));
			compare(c, w, ct, NULL, v);
			cmp_pop(w);
		}
		ty_pop(c, mark);
	}
	sbuf_release(&pe);
}

/* One node: l and r (either may be NULL, not both). */
static void compare(struct ctx *c, struct cmp *w, struct ty t,
		    const json_t *l, const json_t *r)
{
	const json_t *any = r ? r : l;
	bool leaf;
	struct lkeys keys;
	enum lkind lk = LK_ATOMIC;

	if (l == r)
		return;
	if (json_is_array(any)) {
		lk = ty_list(c, t, &keys);
		leaf = lk == LK_ATOMIC;
	} else if (json_is_object(any)) {
		leaf = ty_atomic_map(t);
	} else {
		leaf = true;
	}
	if (l && r && json_typeof(l) != json_typeof(r))
		leaf = true;
	if (!leaf && is_empty_container(l) && is_empty_container(r))
		leaf = true;
	if (leaf) {
		if (!l)
			insert(w->added, w);
		else if (!r)
			insert(w->removed, w);
		else if (!patch_value_eq(l, r))
			insert(w->modified, w);
		return;
	}
	if (json_is_array(any))
		compare_list(c, w, t, lk, &keys, l, r);
	else
		compare_map(c, w, t, l, r);
	if (!l)
		insert(w->added, w);
	else if (!r)
		insert(w->removed, w);
}

/* ---------------------------------------------------------------------
 * Merge (apply)
 */

static json_t *merge(struct ctx *c, struct ty t, const json_t *l,
		     const json_t *r);

static json_t *merge_list(struct ctx *c, struct ty t, enum lkind lk,
			  const struct lkeys *keys, const json_t *l,
			  const json_t *r)
{
	struct items li, ri;
	json_t *out = json_array();
	struct sbuf pe = SBUF_INIT;
	const json_t *item;
	size_t i, mark;
	struct ty it;

	/* The applied list must name each item once (indexListPathElements
	 * without duplicates). */
	json_array_foreach(r, i, item) {
		if (pe_item(&pe, lk, keys, item))
			continue;
		fail(c, "%s: element %zu: associative list with keys has an "
		     "element that omits all key fields", sbuf_cstr(&c->dpath),
		     i);
		goto out;
	}
	items_index(&ri, lk, keys, r);
	if (ri.n != json_array_size(r)) {
		items_release(&ri);
		fail(c, "%s: duplicate entries for key", sbuf_cstr(&c->dpath));
		goto out;
	}
	items_index(&li, lk, keys, l);
	it = ty_item(c, t, &mark);
	json_array_foreach(l, i, item) {
		const json_t *rv;
		json_t *m;

		if (!pe_item(&pe, lk, keys, item)) {
			json_array_append_new(out, json_deep_copy(item));
			continue;
		}
		rv = items_find(&ri, pe.buf);
		m = rv ? merge(c, it, item, rv) : json_deep_copy(item);
		if (m)
			json_array_append_new(out, m);
	}
	for (i = 0; i < ri.n; i++)
		if (!items_find(&li, items_pe(&ri, i)))
			json_array_append_new(out, json_deep_copy(ri.v[i]));
	ty_pop(c, mark);
	items_release(&li);
	items_release(&ri);
out:
	sbuf_release(&pe);
	return out;
}

/* The merged value of l (live) and r (applied); NULL: drop the field. */
static json_t *merge(struct ctx *c, struct ty t, const json_t *l,
		     const json_t *r)
{
	const char *k;
	json_t *v, *out;

	if (!r)
		return json_deep_copy(l);
	/* an applied null removes the field, as the reduced apply did */
	if (json_is_null(r))
		return NULL;
	if (!l || json_typeof(l) != json_typeof(r))
		return json_deep_copy(r);
	if (json_is_array(r)) {
		struct lkeys keys;
		enum lkind lk = ty_list(c, t, &keys);

		if (lk == LK_ATOMIC)
			return json_deep_copy(r);
		return merge_list(c, t, lk, &keys, l, r);
	}
	if (!json_is_object(r) || ty_atomic_map(t))
		return json_deep_copy(r);
	out = json_object();
	json_object_foreach(unconst(l), k, v) {
		const json_t *rv = json_object_get(r, k);
		bool declared;
		size_t mark, dmark = c->dpath.len;
		struct ty ct = ty_member(c, t, k, &declared, &mark);
		json_t *m;

		(void)sbuf_addf(&c->dpath, ".%s", k);
		m = ct.mode == M_SKIP ? json_deep_copy(v) : merge(c, ct, v, rv);
		sbuf_setlen(&c->dpath, dmark);
		ty_pop(c, mark);
		if (m)
			json_object_set_new(out, k, m);
	}
	json_object_foreach(unconst(r), k, v)
		if (!json_object_get(l, k) && !json_is_null(v))
			json_object_set_new(out, k, json_deep_copy(v));
	return out;
}

/* ---------------------------------------------------------------------
 * Prune (apply): remove what the applier dropped
 */

/* EnsureNamedFieldsAreMembers for one node: a member, or a declared
 * field with something under it. */
static bool ensured(const struct fset *s, bool declared)
{
	return s && (s->member || (declared && s->n));
}

static void prune(struct ctx *c, struct ty t, json_t *v,
		  const struct fset *last, const struct fset *keep);

static void prune_list(struct ctx *c, struct ty t, json_t *v,
		       const struct fset *last, const struct fset *keep)
{
	struct lkeys keys;
	enum lkind lk = ty_list(c, t, &keys);
	struct sbuf pe = SBUF_INIT;
	size_t i, mark;
	struct ty it;

	if (lk == LK_ATOMIC)
		return;
	it = ty_item(c, t, &mark);
	for (i = 0; i < json_array_size(v);) {
		json_t *item = json_array_get(v, i);
		const struct fset *l, *kp;

		if (!pe_item(&pe, lk, &keys, item)) {
			i++;
			continue;
		}
		l = fset_get(last, pe.buf);
		kp = keep ? fset_get(keep, pe.buf) : NULL;
		if (l && l->member && !(kp && kp->member)) {
			json_array_remove(v, i);
			continue;
		}
		if (l)
			prune(c, it, item, l, kp);
		i++;
	}
	ty_pop(c, mark);
	sbuf_release(&pe);
}

static void prune(struct ctx *c, struct ty t, json_t *v,
		  const struct fset *last, const struct fset *keep)
{
	struct sbuf pe = SBUF_INIT;
	json_t *names;
	size_t i;

	if (json_is_array(v)) {
		prune_list(c, t, v, last, keep);
		return;
	}
	if (!json_is_object(v) || ty_atomic_map(t))
		return;
	/* a copy of the names: members are deleted on the way */
	names = json_array();
	{
		const char *k;
		json_t *m;

		json_object_foreach(v, k, m)
			json_array_append_new(names, json_string(k));
	}
	for (i = 0; i < json_array_size(names); i++) {
		const char *k = json_string_value(json_array_get(names, i));
		const struct fset *l, *kp;
		bool declared, keep_it;
		size_t mark;
		struct ty ct;

		l = fset_get(last, pe_field(&pe, k));
		if (!l)
			continue;
		kp = keep ? fset_get(keep, pe.buf) : NULL;
		ct = ty_member(c, t, k, &declared, &mark);
		/* the object's identity is never pruned, only inside it */
		keep_it = t.mode == M_ROOT && (!strcmp(k, "metadata") ||
					       !strcmp(k, "apiVersion") ||
					       !strcmp(k, "kind"));
		if (ct.mode != M_SKIP) {
			if (!keep_it && ensured(l, declared) &&
			    !ensured(kp, declared))
				json_object_del(v, k);
			else
				prune(c, ct, json_object_get(v, k), l, kp);
		}
		ty_pop(c, mark);
	}
	json_decref(names);
	sbuf_release(&pe);
}

/* ---------------------------------------------------------------------
 * Entries
 */

struct entry {
	char *manager;          /* owned */
	bool apply;             /* operation Apply (else Update) */
	char *api_version;      /* owned */
	char *subresource;      /* owned; "" for none */
	char *time;             /* owned; NULL for none */
	const json_t *fields;   /* borrowed fieldsV1 as found, or NULL */
	const json_t *orig;     /* borrowed: the entry as found, written out
				   again as it is while not dirty */
	struct fset *set;       /* owned; NULL until parsed */
	bool dirty;             /* set changed: encode it again */
};

struct entries {
	struct entry *e; /* owned */
	size_t n, cap;
};

static void entries_release(struct entries *es)
{
	for (size_t i = 0; i < es->n; i++) {
		struct entry *e = &es->e[i];

		free(e->manager);
		free(e->api_version);
		free(e->subresource);
		free(e->time);
		fset_free(e->set);
	}
	free(es->e);
	memset(es, 0, sizeof(*es));
}

static bool same_id(const struct entry *e, const char *manager, bool apply,
		    const char *api_version, const char *sub)
{
	return e->apply == apply && !strcmp(e->manager, manager) &&
	       !strcmp(e->subresource, sub) &&
	       (apply || !strcmp(e->api_version, api_version));
}

static struct entry *entries_find(struct entries *es, const char *manager,
				  bool apply, const char *api_version,
				  const char *sub)
{
	for (size_t i = 0; i < es->n; i++)
		if (same_id(&es->e[i], manager, apply, api_version, sub))
			return &es->e[i];
	return NULL;
}

static struct entry *entries_add(struct entries *es, const char *manager,
				 bool apply, const char *api_version,
				 const char *sub)
{
	struct entry *e;

	XGROW(es->e, es->cap, es->n + 1);
	e = &es->e[es->n++];
	memset(e, 0, sizeof(*e));
	e->manager = xstrdup(manager);
	e->apply = apply;
	e->api_version = xstrdup(api_version);
	e->subresource = xstrdup(sub);
	e->set = fset_new();
	e->dirty = true;
	return e;
}

/* The parsed set of e (parsed on first use; an unreadable one is empty,
 * which drops the entry). */
static struct fset *entry_set(struct entry *e)
{
	if (e->set)
		return e->set;
	if (json_is_string(e->fields))
		e->set = fset_parse(json_string_value(e->fields),
				    json_string_length(e->fields));
	else if (json_is_object(e->fields))
		e->set = fset_from_json(e->fields);
	if (!e->set) {
		e->set = fset_new();
		e->dirty = true;
	}
	return e->set;
}

/*
 * DecodeManagedFields: each entry needs operation Apply or Update, an
 * apiVersion and fieldsType FieldsV1; strict (client-sent lists) also
 * parses every set now. A later entry of the same manager identity
 * replaces an earlier one. -1 when the list does not decode.
 */
static int entries_decode(const json_t *list, bool strict,
			  struct entries *es)
{
	const json_t *o;
	size_t i;

	memset(es, 0, sizeof(*es));
	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list))
		return -1;
	json_array_foreach(list, i, o) {
		const char *op = str_of(o, "operation");
		const char *av = str_of(o, "apiVersion");
		const char *ft = str_of(o, "fieldsType");
		const char *mgr = str_of(o, "manager");
		const char *sub = str_of(o, "subresource");
		const char *tm = str_of(o, "time");
		bool apply;
		struct entry *e;

		if (!json_is_object(o) || !op || !av || !*av || !ft ||
		    strcmp(ft, "FieldsV1"))
			goto bad;
		if (!strcmp(op, "Apply"))
			apply = true;
		else if (!strcmp(op, "Update"))
			apply = false;
		else
			goto bad;
		mgr = mgr ? mgr : "";
		sub = sub ? sub : "";
		e = entries_find(es, mgr, apply, av, sub);
		if (e) {
			free(e->api_version);
			e->api_version = xstrdup(av);
			free(e->time);
			e->time = NULL;
			fset_free(e->set);
			e->set = NULL;
		} else {
			e = entries_add(es, mgr, apply, av, sub);
			fset_free(e->set);
			e->set = NULL;
		}
		e->dirty = false;
		e->time = tm && *tm ? xstrdup(tm) : NULL;
		e->fields = json_object_get(o, "fieldsV1");
		e->orig = o;
		if (e->fields && !json_is_string(e->fields) &&
		    !json_is_object(e->fields) && !json_is_null(e->fields))
			goto bad;
		if (strict && e->fields && !json_is_null(e->fields)) {
			if (json_is_string(e->fields))
				e->set = fset_parse(json_string_value(e->fields),
					json_string_length(e->fields));
			else
				e->set = fset_from_json(e->fields);
			if (!e->set)
				goto bad;
			e->dirty = true;
		}
	}
	return 0;
bad:
	entries_release(es);
	return -1;
}

static int entry_order(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c;

	/* sortEncodedManagedFields: Apply before Update, then time,
	 * manager, apiVersion, subresource */
	if (a->apply != b->apply)
		return a->apply ? -1 : 1;
	c = strcmp(a->time ? a->time : "", b->time ? b->time : "");
	if (c)
		return c;
	c = strcmp(a->manager, b->manager);
	if (c)
		return c;
	c = strcmp(a->api_version, b->api_version);
	return c ? c : strcmp(a->subresource, b->subresource);
}

/* The wire form (a new array; NULL when no entry owns anything), in
 * ManagedFieldsEntry's field order. */
static json_t *entries_encode(struct entries *es)
{
	json_t *out = json_array();

	if (es->n)
		qsort(es->e, es->n, sizeof(es->e[0]), entry_order);
	for (size_t i = 0; i < es->n; i++) {
		struct entry *e = &es->e[i];
		json_t *o;

		if (e->set && fset_is_empty(e->set))
			continue;
		if (!e->set && !e->fields)
			continue;
		if (!e->dirty && e->orig && json_is_string(e->fields)) {
			/* untouched: shared with the live object, which
			 * never changes */
			json_array_append(out, unconst(e->orig));
			continue;
		}
		o = json_object();
		if (*e->manager)
			json_object_set_new(o, "manager",
					    json_string(e->manager));
		json_object_set_new(o, "operation",
				    json_string(e->apply ? "Apply" : "Update"));
		json_object_set_new(o, "apiVersion",
				    json_string(e->api_version));
		if (e->time)
			json_object_set_new(o, "time", json_string(e->time));
		json_object_set_new(o, "fieldsType", json_string("FieldsV1"));
		if (e->dirty || !json_is_string(e->fields)) {
			size_t n;
			char *t = fset_encode(entry_set(e), &n);

			json_object_set_new(o, "fieldsV1",
					    json_stringn_nocheck(t, n));
			free(t);
		} else {
			json_object_set(o, "fieldsV1", unconst(e->fields));
		}
		if (*e->subresource)
			json_object_set_new(o, "subresource",
					    json_string(e->subresource));
		json_array_append_new(out, o);
	}
	if (!json_array_size(out)) {
		json_decref(out);
		return NULL;
	}
	return out;
}

/* capUpdateManagers: past MANAGED_MAX_UPDATERS Update entries, the oldest
 * merge into one "ancient-changes" entry per apiVersion. */
static void cap_updaters(struct entries *es)
{
	size_t nu = 0, *idx;

	/* an entry not parsed is not empty: none is ever stored empty */
	for (size_t i = 0; i < es->n; i++)
		if (!es->e[i].apply && (es->e[i].set
					? !fset_is_empty(es->e[i].set)
					: es->e[i].fields != NULL))
			nu++;
	if (nu <= MANAGED_MAX_UPDATERS)
		return;
	/* Oldest first: entry_order sorts Updates by time, then manager. */
	qsort(es->e, es->n, sizeof(es->e[0]), entry_order);
	idx = xcalloc(es->n, sizeof(*idx));
	for (size_t i = 0, len = nu; i < es->n && len > MANAGED_MAX_UPDATERS;
	     i++) {
		struct entry *e = &es->e[i], *first = NULL, *bucket;

		if (e->apply || fset_is_empty(entry_set(e)))
			continue;
		for (size_t j = 0; j < i; j++) {
			struct entry *f = &es->e[j];

			if (!f->apply && idx[j] &&
			    !strcmp(f->api_version, e->api_version))
				first = f;
		}
		if (!first) {
			idx[i] = 1;
			continue;
		}
		bucket = entries_find(es, ANCIENT, false, e->api_version, "");
		if (!bucket) {
			/* the first one of the version becomes the bucket */
			free(first->manager);
			first->manager = xstrdup(ANCIENT);
			free(first->subresource);
			first->subresource = xstrdup("");
			first->dirty = true;
			bucket = first;
		}
		fset_union(entry_set(bucket), entry_set(e));
		bucket->dirty = true;
		free(bucket->time);
		bucket->time = e->time ? xstrdup(e->time) : NULL;
		fset_free(e->set);
		e->set = fset_new(); /* empty: not encoded */
		e->dirty = true;
		len--;
	}
	free(idx);
}

/* ---------------------------------------------------------------------
 * The fields a write never owns
 */

/* The half of the object the other side of a status subresource owns
 * (the strategies' ResetFields): status on the main resource of a kind
 * with a status subresource, everything but status on the subresource. */
static void filter_ignored(const struct managed_req *r, struct fset *s)
{
	if (*r->subresource) {
		for (size_t i = 0; i < s->n;) {
			if (!strcmp(s->kids[i].pe, "f:status"))
				i++;
			else
				fset_drop(s, s->kids[i].pe);
		}
	} else if (r->has_status) {
		fset_drop(s, "f:status");
	}
}

/* What kube-apiserver's stripMetaManager removes from every set. */
static void filter_strip(struct fset *s)
{
	static const char *const meta[] = {
		"f:name", "f:namespace", "f:creationTimestamp", "f:selfLink",
		"f:uid", "f:clusterName", "f:generation", "f:managedFields",
		"f:resourceVersion", NULL,
	};
	struct fset *m;

	fset_drop(s, "f:apiVersion");
	fset_drop(s, "f:kind");
	m = fset_child(s, "f:metadata", 10, false); /* after the drops */
	if (m) {
		m->member = false;
		for (size_t i = 0; meta[i]; i++)
			fset_drop(m, meta[i]);
	}
	fset_prune(s);
}

static void filter(const struct managed_req *r, struct fset *s)
{
	filter_ignored(r, s);
	filter_strip(s);
}

/* ---------------------------------------------------------------------
 * The write
 */

static void ctx_init(struct ctx *c, const struct managed_req *r)
{
	c->r = r;
	sbuf_init(&c->bpath, 0);
	sbuf_init(&c->err, 0);
	sbuf_init(&c->dpath, 0);
}

static void ctx_release(struct ctx *c)
{
	sbuf_release(&c->bpath);
	sbuf_release(&c->err);
	sbuf_release(&c->dpath);
}

static const struct ty root = { M_ROOT, NULL };

static void cmp_release(struct cmp *w)
{
	fset_free(w->added);
	fset_free(w->modified);
	fset_free(w->removed);
	sbuf_release(&w->text);
	free(w->at);
}

/* Compares l and r (the root objects) into w (new sets). Returns whether
 * anything differs at all, before the filters. */
static bool compare_objects(struct ctx *c, struct cmp *w, const json_t *l,
			    const json_t *r)
{
	bool any;

	memset(w, 0, sizeof(*w));
	w->added = fset_new();
	w->modified = fset_new();
	w->removed = fset_new();
	compare(c, w, root, l, r);
	any = !fset_is_empty(w->added) || !fset_is_empty(w->modified) ||
	      !fset_is_empty(w->removed);
	filter(c->r, w->added);
	filter(c->r, w->modified);
	filter(c->r, w->removed);
	return any;
}

/* isResetManagedFields: [] or [{}] (an entry with nothing set). */
static bool is_reset(const json_t *mf)
{
	const json_t *e, *v;
	const char *k;

	if (!json_is_array(mf))
		return false;
	if (!json_array_size(mf))
		return true;
	if (json_array_size(mf) != 1)
		return false;
	e = json_array_get(mf, 0);
	if (!json_is_object(e))
		return false;
	json_object_foreach(unconst(e), k, v) {
		if (json_is_null(v))
			continue;
		if (json_is_string(v) && !json_string_length(v))
			continue;
		return false;
	}
	return true;
}

struct leaf_scan {
	const char *text;   /* the entry's FieldsV1 text */
	struct sbuf key;    /* scratch: a key as the text quotes it */
	bool hit;
};

static void scan_leaf(const char *const *path, size_t n, void *cls)
{
	struct leaf_scan *ls = cls;

	if (ls->hit)
		return;
	sbuf_reset(&ls->key);
	put_json_str(&ls->key, path[n - 1], strlen(path[n - 1]));
	ls->hit = strstr(ls->text, ls->key.buf) != NULL;
}

/* False when e cannot own anything of x: the text of an entry not parsed
 * yet lacks every key x ends its members with. Spares the parse of the
 * entries a write does not touch (a status writer's, say, when the spec
 * changes). */
static bool may_own(const struct entry *e, const struct fset *x)
{
	struct leaf_scan ls = { NULL, SBUF_INIT, false };

	if (e->set || !json_is_string(e->fields))
		return true;
	ls.text = json_string_value(e->fields);
	fset_each(x, scan_leaf, &ls);
	sbuf_release(&ls.key);
	return ls.hit;
}

/* Takes from e what x (in a manager's terms) names; marks e dirty when
 * it owned any of it. */
static void take_from(struct entry *e, const struct fset *x)
{
	if (fset_is_empty(x) || !may_own(e, x))
		return;
	if (fset_subtract(entry_set(e), x))
		e->dirty = true;
}

static void set_managed(json_t *obj, json_t *mf)
{
	json_t *m = json_object_get(obj, "metadata");

	if (!json_is_object(m)) {
		if (!mf)
			return;
		m = json_object();
		json_object_set_new(obj, "metadata", m);
	}
	if (mf)
		json_object_set_new(m, "managedFields", mf);
	else
		json_object_del(m, "managedFields");
}

static void stamp(struct entry *e, int64_t now_ms)
{
	char ts[TIMESTAMP_BUF];

	free(e->time);
	e->time = xstrdup(timestamp_format(now_ms, ts, sizeof(ts)));
}

void managed_update(const struct managed_req *r, const json_t *live,
		    json_t *obj)
{
	const json_t *sent = json_object_get(json_object_get(obj, "metadata"),
					     "managedFields");
	const json_t *had = json_object_get(json_object_get(live, "metadata"),
					    "managedFields");
	json_t *empty = NULL;
	struct entries es;
	struct cmp w;
	struct ctx c;
	struct fset *changed;
	bool from_live = false;

	ctx_init(&c, r);
	/* 1. the entries to start from (decodeLiveOrNew) */
	if (*r->subresource || !sent || json_is_null(sent) ||
	    (had && patch_value_eq(sent, had))) {
		from_live = true;
	} else if (is_reset(sent)) {
		memset(&es, 0, sizeof(es));
	} else if (entries_decode(sent, true, &es) < 0 || !es.n) {
		entries_release(&es);
		from_live = true;
	}
	if (from_live && entries_decode(had, false, &es) < 0)
		memset(&es, 0, sizeof(es));
	/* 2. what this write changes */
	if (!live)
		live = empty = json_object();
	json_incref(unconst(sent));
	json_object_del(json_object_get(obj, "metadata"), "managedFields");
	compare_objects(&c, &w, live, obj);
	changed = fset_copy(w.modified);
	fset_union(changed, w.added);
	if (fset_is_empty(changed) && fset_is_empty(w.removed) && from_live) {
		/* nothing changed: the live entries as they are */
		set_managed(obj, had ? json_deep_copy(had) : NULL);
		goto out;
	}
	/* 3. it takes what it changed from everyone (an update is a forced
	 * apply of its changes), and what it removed leaves every set */
	for (size_t i = 0; i < es.n; i++) {
		take_from(&es.e[i], changed);
		take_from(&es.e[i], w.removed);
	}
	/* 4. its own Update entry gains what it changed */
	if (!fset_is_empty(changed)) {
		struct entry *e = entries_find(&es, r->manager, false,
					       r->api_version, r->subresource);

		if (!e)
			e = entries_add(&es, r->manager, false, r->api_version,
					r->subresource);
		fset_union(entry_set(e), changed);
		e->dirty = true;
		stamp(e, r->now_ms);
	}
	cap_updaters(&es);
	set_managed(obj, entries_encode(&es));
out:
	json_decref(unconst(sent));
	fset_free(changed);
	cmp_release(&w);
	entries_release(&es);
	json_decref(empty);
	ctx_release(&c);
}

/* ---- conflicts ---- */

struct conflict {
	char *id;      /* owned: the manager identifier, the sort key */
	char *who;     /* owned: printManager */
	char *field;   /* owned: the path as fieldpath prints it */
	size_t seq;    /* order of discovery, for a stable sort */
};

struct conflicts {
	struct conflict *c; /* owned */
	size_t n, cap;
	const struct entry *e; /* the entry being listed */
};

/* Go's %q for the ASCII a manager name normally is. */
static void put_quoted(struct sbuf *b, const char *s)
{
	(void)sbuf_addch(b, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			(void)sbuf_addch(b, '\\');
		(void)sbuf_addch(b, *s);
	}
	(void)sbuf_addch(b, '"');
}

static void on_conflict(const char *const *path, size_t n, void *cls)
{
	struct conflicts *cs = cls;
	const struct entry *e = cs->e;
	struct sbuf b = SBUF_INIT;
	struct conflict *c;

	XGROW(cs->c, cs->cap, cs->n + 1);
	c = &cs->c[cs->n];
	c->seq = cs->n++;
	for (size_t i = 0; i < n; i++)
		pe_display(&b, path[i]);
	c->field = sbuf_detach(&b, NULL);
	/* BuildManagerIdentifier's JSON: what the messages sort by */
	(void)sbuf_adds(&b, "{\"manager\":");
	put_quoted(&b, e->manager);
	(void)sbuf_addf(&b, ",\"operation\":\"%s\"",
			e->apply ? "Apply" : "Update");
	if (!e->apply) {
		(void)sbuf_adds(&b, ",\"apiVersion\":");
		put_quoted(&b, e->api_version);
	}
	if (*e->subresource) {
		(void)sbuf_adds(&b, ",\"subresource\":");
		put_quoted(&b, e->subresource);
	}
	(void)sbuf_addch(&b, '}');
	c->id = sbuf_detach(&b, NULL);
	/* printManager */
	put_quoted(&b, e->manager);
	if (*e->subresource) {
		(void)sbuf_adds(&b, " with subresource ");
		put_quoted(&b, e->subresource);
	}
	if (!e->apply)
		(void)sbuf_addf(&b, " using %s", e->api_version);
	c->who = sbuf_detach(&b, NULL);
}

static int conflict_order(const void *pa, const void *pb)
{
	const struct conflict *a = pa, *b = pb;
	int c = strcmp(a->id, b->id);

	if (c)
		return c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* NewConflictError: 409 Conflict, the message of getConflictMessage and
 * one FieldManagerConflict cause per field. */
static int conflict_error(struct conflicts *cs, struct api_status *st)
{
	struct sbuf msg = SBUF_INIT;
	json_t *causes = json_array();
	int rc;

	qsort(cs->c, cs->n, sizeof(cs->c[0]), conflict_order);
	if (cs->n == 1) {
		(void)sbuf_addf(&msg, "Apply failed with 1 conflict: "
				"conflict with %s: %s", cs->c[0].who,
				cs->c[0].field);
	} else {
		(void)sbuf_addf(&msg, "Apply failed with %zu conflicts: ",
				cs->n);
		for (size_t i = 0; i < cs->n; i++) {
			if (!i || strcmp(cs->c[i].id, cs->c[i - 1].id))
				(void)sbuf_addf(&msg, "%sconflicts with %s:",
						i ? "\n" : "", cs->c[i].who);
			(void)sbuf_addf(&msg, "\n- %s", cs->c[i].field);
		}
	}
	for (size_t i = 0; i < cs->n; i++) {
		char *m = xasprintf("conflict with %s", cs->c[i].who);

		json_array_append_new(causes, json_pack("{s:s, s:s, s:s}",
			"reason", "FieldManagerConflict", "message", m,
			"field", cs->c[i].field));
		free(m);
	}
	rc = status_set(st, 409, "Conflict",
			json_pack("{s:o}", "causes", causes), "%s",
			sbuf_cstr(&msg));
	sbuf_release(&msg);
	return rc;
}

static void conflicts_release(struct conflicts *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		free(cs->c[i].id);
		free(cs->c[i].who);
		free(cs->c[i].field);
	}
	free(cs->c);
}

json_t *managed_apply(const struct managed_req *r, const json_t *live,
		      const json_t *config, bool force,
		      struct api_status *st)
{
	const json_t *had = json_object_get(json_object_get(live, "metadata"),
					    "managedFields");
	const json_t *sent = json_object_get(json_object_get(config,
							     "metadata"),
					     "managedFields");
	json_t *empty = NULL, *merged = NULL;
	struct fset *applied = NULL, *changed = NULL, **taken = NULL;
	size_t ntaken = 0;
	struct conflicts cs = { NULL, 0, 0, NULL };
	struct entry *self;
	struct entries es;
	struct cmp w;
	struct ctx c;
	bool any;

	memset(&w, 0, sizeof(w));
	if (sent && !json_is_null(sent)) {
		status_bad_request(st, "metadata.managedFields must be nil");
		return NULL;
	}
	ctx_init(&c, r);
	if (entries_decode(had, false, &es) < 0)
		memset(&es, 0, sizeof(es));
	if (!live)
		live = empty = json_object();
	/* 1. merge the applied configuration into the live object */
	merged = merge(&c, root, live, config);
	if (c.err.len) {
		status_set(st, 422, "Invalid", NULL, "%s", sbuf_cstr(&c.err));
		json_decref(merged);
		merged = NULL;
		goto out;
	}
	/* 2. the applied set; what the applier applied before and dropped
	 * now goes, unless someone (the applier too) still owns it */
	applied = fset_new();
	to_set(&c, root, config, applied);
	fset_prune(applied);
	filter_ignored(r, applied);
	self = entries_find(&es, r->manager, true, "", r->subresource);
	if (self && !fset_is_empty(entry_set(self))) {
		struct fset *keep = fset_copy(applied);

		for (size_t i = 0; i < es.n; i++)
			if (&es.e[i] != self)
				fset_union(keep, entry_set(&es.e[i]));
		prune(&c, root, merged, entry_set(self), keep);
		fset_free(keep);
	}
	/* 3. what changes; a field another manager owns may not change
	 * unless forced */
	any = compare_objects(&c, &w, live, merged);
	changed = fset_copy(w.modified);
	fset_union(changed, w.added);
	ntaken = es.n; /* entries_add below may grow es */
	taken = xcalloc(ntaken ? ntaken : 1, sizeof(*taken));
	for (size_t i = 0; i < es.n; i++) {
		struct fset *x;

		if (&es.e[i] == self)
			continue;
		x = fset_intersect(entry_set(&es.e[i]), changed);
		if (fset_is_empty(x)) {
			fset_free(x);
			continue;
		}
		taken[i] = x;
		cs.e = &es.e[i];
		fset_each(x, on_conflict, &cs);
	}
	if (cs.n && !force) {
		conflict_error(&cs, st);
		json_decref(merged);
		merged = NULL;
		goto out;
	}
	for (size_t i = 0; i < es.n; i++) {
		if (&es.e[i] == self)
			continue;
		if (taken[i])
			take_from(&es.e[i], taken[i]);
		take_from(&es.e[i], w.removed);
	}
	/* 4. the applier owns exactly what it applied */
	filter_strip(applied);
	if (!self)
		self = entries_add(&es, r->manager, true, r->api_version,
				   r->subresource);
	fset_free(self->set);
	self->set = applied;
	applied = NULL;
	free(self->api_version);
	self->api_version = xstrdup(r->api_version);
	self->dirty = true;
	if (any)
		stamp(self, r->now_ms);
	set_managed(merged, entries_encode(&es));
out:
	for (size_t i = 0; i < ntaken; i++)
		fset_free(taken[i]);
	free(taken);
	conflicts_release(&cs);
	fset_free(applied);
	fset_free(changed);
	if (w.added)
		cmp_release(&w);
	entries_release(&es);
	json_decref(empty);
	ctx_release(&c);
	return merged;
}

char *managed_manager_from_agent(const char *user_agent)
{
	struct sbuf b = SBUF_INIT;
	const unsigned char *p = (const unsigned char *)
		(user_agent ? user_agent : "");

	for (; *p && *p != '/'; p++) {
		if (*p < 0x20 || *p == 0x7f)
			continue;
		if (b.len + 1 > MANAGER_MAX)
			break;
		(void)sbuf_addch(&b, (char)*p);
	}
	return sbuf_detach(&b, NULL);
}
