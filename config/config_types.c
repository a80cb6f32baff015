/*
 * config_types: the generic setters that turn YAML values into struct
 * config members, one per field type of the table in config.c (STYLE
 * P11), with the defaults and frees of each type.
 *
 * A value means what it means to Kueue, whose loader is sigs.k8s.io/yaml
 * feeding encoding/json in strict mode:
 *  1. null is "not given" for every field (a null list item or map value
 *     is the type's zero value, as in Go).
 *  2. A value of the wrong JSON type is refused with Kubernetes' words
 *     ("must be of type integer"); `timeout: 300` is such a mistake, as a
 *     metav1.Duration is a string, while controller.cacheSyncTimeout is a
 *     time.Duration and so an integer of nanoseconds.
 *  3. Whole numbers written as floats (`2.0`, `1e3`) fit integer fields;
 *     integers out of their Go type's range are refused, never wrapped.
 *  4. Keys appear once per mapping (strict decoding), merged ones too.
 * Label selectors get metav1validation's syntax checks here, where the
 * positions of their keys and values are known.
 */
#include "config/config_int.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/names.h"
#include "model/quantity.h"
#include "model/selector.h"

/* ------------------------------------------------------------------ */
/* Problems shared by the setters and the walk */

void config_add(struct cfg_ctx *x, const struct cfg_node *n,
		enum fe_kind kind, const char *path, const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	utf8_trim_tail(msg);
	XGROW(x->fe.v, x->fe.cap, x->fe.n + 1);
	x->fe.v[x->fe.n].kind = kind;
	x->fe.v[x->fe.n].path = xstrdup(path);
	x->fe.v[x->fe.n].text = xasprintf("%s: %s", path, msg);
	x->fe.n++;
	config_mark(x, n, 0, 0);
}

struct keyidx {
	const char *k;
	size_t i;
};

static int keyidx_cmp(const void *a, const void *b)
{
	const struct keyidx *x = a, *y = b;
	int c = strcmp(x->k, y->k);

	if (c)
		return c;
	return x->i < y->i ? -1 : x->i > y->i;
}

bool *config_find_dups(char *const *keys, size_t n)
{
	bool *dup = xcalloc(n ? n : 1, sizeof(*dup));
	struct keyidx *s = xmalloc((n ? n : 1) * sizeof(*s));
	size_t m = 0;

	for (size_t i = 0; i < n; i++)
		if (keys[i])
			s[m++] = (struct keyidx){ keys[i], i };
	qsort(s, m, sizeof(*s), keyidx_cmp);
	for (size_t i = 1; i < m; i++)
		if (!strcmp(s[i].k, s[i - 1].k))
			dup[s[i].i] = true;
	free(s);
	return dup;
}

void config_type_error(struct cfg_ctx *x, size_t vi, const char *path,
		       const char *want)
{
	const struct cfg_node *n = &x->doc.v[vi];
	struct cfg_scalar sc;
	char buf[64];
	const char *val = buf;
	bool quote = false;

	if (n->kind != CFG_N_SCALAR) {
		val = n->kind == CFG_N_MAP ? "object" : "array";
		quote = true;
	} else if (config_resolve(NULL, n, path, &sc) < 0) {
		val = n->text;
		quote = true;
	} else {
		switch (sc.type) {
		case CFG_SC_STR:
			val = n->text;
			quote = true;
			break;
		case CFG_SC_BOOL:
			val = sc.b ? "true" : "false";
			break;
		case CFG_SC_NULL:
			val = "null";
			break;
		case CFG_SC_INT:
		case CFG_SC_UINT:
		case CFG_SC_FLOAT:
			val = n->text;
			break;
		}
	}
	fe_add(&x->fe, FE_TYPE, path, val, quote, "%s", want);
	config_mark(x, n, 0, 0);
}

/* ------------------------------------------------------------------ */
/* Scalar setters */

/* The scalar at vi, resolved. False when it is null (nothing to store)
 * or was reported (not a scalar: a type error naming want). */
static bool scalar_of(struct cfg_ctx *x, size_t vi, const char *path,
		      const char *want, struct cfg_scalar *sc)
{
	const struct cfg_node *n = &x->doc.v[vi];

	if (n->kind != CFG_N_SCALAR) {
		config_type_error(x, vi, path, want);
		return false;
	}
	if (config_resolve(x, n, path, sc) < 0)
		return false;
	return sc->type != CFG_SC_NULL;
}

/* A string value; NULL when null or reported. */
static const char *text_of(struct cfg_ctx *x, size_t vi, const char *path)
{
	const struct cfg_node *n = &x->doc.v[vi];
	struct cfg_scalar sc;

	if (!scalar_of(x, vi, path, "string", &sc))
		return NULL;
	if (sc.type != CFG_SC_STR) {
		config_type_error(x, vi, path, "string");
		return NULL;
	}
	if (memchr(n->text, '\0', n->len)) {
		fe_invalid(&x->fe, path, n->text, "must not contain NUL "
			   "characters");
		config_mark(x, n, 0, 0);
		return NULL;
	}
	return n->text;
}

static void range_error(struct cfg_ctx *x, size_t vi, const char *path,
			int64_t lo, int64_t hi)
{
	const struct cfg_node *n = &x->doc.v[vi];

	fe_add(&x->fe, FE_INVALID, path, n->text, false,
	       "must be between %" PRId64 " and %" PRId64 ", inclusive", lo,
	       hi);
	config_mark(x, n, 0, 0);
}

/* An integer in lo..hi (a Go int or int32: JSON numbers that are whole,
 * so `2.0` and `1e3` count). */
static bool int_of(struct cfg_ctx *x, size_t vi, const char *path,
		   int64_t lo, int64_t hi, int64_t *out)
{
	struct cfg_scalar sc;

	if (!scalar_of(x, vi, path, "integer", &sc))
		return false;
	switch (sc.type) {
	case CFG_SC_INT:
		break;
	case CFG_SC_UINT:
		range_error(x, vi, path, lo, hi);
		return false;
	case CFG_SC_FLOAT:
		/* every double beyond 2^63 is whole; below, the cast tells
		 * (no libm: the unit tests link without it) */
		if (isfinite(sc.d) && (sc.d < -9223372036854775808.0 ||
				       sc.d >= 9223372036854775808.0)) {
			range_error(x, vi, path, lo, hi);
			return false;
		}
		if (!isfinite(sc.d) || (double)(int64_t)sc.d != sc.d) {
			config_type_error(x, vi, path, "integer");
			return false;
		}
		sc.i = (int64_t)sc.d;
		break;
	default:
		config_type_error(x, vi, path, "integer");
		return false;
	}
	if (sc.i < lo || sc.i > hi) {
		range_error(x, vi, path, lo, hi);
		return false;
	}
	*out = sc.i;
	return true;
}

/* A finite JSON number (a Go float64, or float32 when f32). */
static bool float_of(struct cfg_ctx *x, size_t vi, const char *path,
		     bool f32, double *out)
{
	const struct cfg_node *n = &x->doc.v[vi];
	struct cfg_scalar sc;
	double d;

	if (!scalar_of(x, vi, path, "number", &sc))
		return false;
	switch (sc.type) {
	case CFG_SC_INT: d = (double)sc.i; break;
	case CFG_SC_UINT: d = (double)sc.u; break;
	case CFG_SC_FLOAT: d = sc.d; break;
	default:
		config_type_error(x, vi, path, "number");
		return false;
	}
	if (!isfinite(d)) {
		fe_add(&x->fe, FE_INVALID, path, n->text, false,
		       "must be a finite number");
		config_mark(x, n, 0, 0);
		return false;
	}
	if (f32 && (d > FLT_MAX || d < -FLT_MAX)) {
		fe_add(&x->fe, FE_INVALID, path, n->text, false,
		       "must fit in a 32-bit float (at most %g)", FLT_MAX);
		config_mark(x, n, 0, 0);
		return false;
	}
	*out = d;
	return true;
}

static bool duration_of(struct cfg_ctx *x, size_t vi, const char *path,
			int64_t *ms)
{
	const char *s = text_of(x, vi, path);
	char msg[256];
	int64_t ns;

	if (!s)
		return false;
	if (config_parse_go_duration(s, &ns, msg, sizeof(msg)) < 0) {
		fe_add(&x->fe, FE_INVALID, path, s, true, "%s", msg);
		config_mark(x, &x->doc.v[vi], 0, 0);
		return false;
	}
	*ms = config_ns_to_ms(ns);
	return true;
}

static int enum_index(const struct cfg_enum *e, const char *s)
{
	if (!*s && e->empty_ok)
		return 0;
	for (int i = 0; e->names[i]; i++)
		if (!strcmp(e->names[i], s))
			return e->values[i];
	return -1;
}

/* A quantity: a string, or a JSON number read as its text. */
static bool quantity_of(struct cfg_ctx *x, size_t vi, const char *path,
			struct quantity *q)
{
	const struct cfg_node *n = &x->doc.v[vi];
	struct cfg_scalar sc;
	struct err e = { "" };
	char buf[64], *text = buf;
	size_t o = 0;
	int rc;

	if (!scalar_of(x, vi, path, "string", &sc))
		return false;
	switch (sc.type) {
	case CFG_SC_STR:
		text = n->text;
		break;
	case CFG_SC_INT:
		snprintf(buf, sizeof(buf), "%" PRId64, sc.i);
		break;
	case CFG_SC_UINT:
		snprintf(buf, sizeof(buf), "%" PRIu64, sc.u);
		break;
	case CFG_SC_FLOAT:
		if (!isfinite(sc.d)) {
			fe_add(&x->fe, FE_INVALID, path, n->text, false,
			       "must be a finite number");
			config_mark(x, n, 0, 0);
			return false;
		}
		text = xmalloc(n->len + 1);
		for (size_t k = 0; k < n->len; k++)
			if (n->text[k] != '_')
				text[o++] = n->text[k];
		text[o] = '\0';
		break;
	default:
		config_type_error(x, vi, path, "string");
		return false;
	}
	rc = quantity_parse(text, q, &e);
	if (rc < 0) {
		fe_add(&x->fe, FE_INVALID, path, n->text, true, "%s", e.msg);
		config_mark(x, n, 0, 0);
	}
	if (text != buf && text != n->text)
		free(text);
	return rc == 0;
}

/* ------------------------------------------------------------------ */
/* Collection setters */

static char *index_path(const char *path, size_t i)
{
	return xasprintf("%s[%zu]", path, i);
}

static void list_push(struct config_strlist *l, const char *s)
{
	XGROW(l->v, l->cap, l->n + 1);
	l->v[l->n++] = xstrdup(s);
}

/* A sequence node, or NULL (type error) when vi is something else. */
static const struct cfg_node *seq_of(struct cfg_ctx *x, size_t vi,
				     const char *path)
{
	const struct cfg_node *n = &x->doc.v[vi];

	if (n->kind == CFG_N_SEQ)
		return n;
	config_type_error(x, vi, path, "array");
	return NULL;
}

static void set_strlist(struct cfg_ctx *x, size_t vi, const char *path,
			struct config_strlist *l)
{
	const struct cfg_node *n = seq_of(x, vi, path);

	for (size_t i = 0; n && i < n->nkids; i++) {
		const struct cfg_node *it = &x->doc.v[n->kids[i]];
		char *p = index_path(path, i);
		struct cfg_scalar sc;
		const char *s;

		if (!config_visit(x, it)) {
			free(p);
			break;
		}
		config_note_pos(x, p, it);
		/* a null item is Go's zero string */
		if (it->kind == CFG_N_SCALAR && it->style != CFG_S_QUOTED &&
		    config_resolve(NULL, it, p, &sc) == 0 &&
		    sc.type == CFG_SC_NULL)
			s = "";
		else
			s = text_of(x, n->kids[i], p);
		if (s)
			list_push(l, s);
		free(p);
	}
}

/* A sequence of Go int32s; a bad item is reported at its own index. */
static void set_intlist(struct cfg_ctx *x, size_t vi, const char *path,
			struct config_int_list *l)
{
	const struct cfg_node *n = seq_of(x, vi, path);

	for (size_t i = 0; n && i < n->nkids; i++) {
		const struct cfg_node *it = &x->doc.v[n->kids[i]];
		char *p = index_path(path, i);
		int64_t v;

		if (!config_visit(x, it)) {
			free(p);
			break;
		}
		config_note_pos(x, p, it);
		if (int_of(x, n->kids[i], p, INT32_MIN, INT32_MAX, &v)) {
			XGROW(l->v, l->cap, l->n + 1);
			l->v[l->n++] = v;
		}
		free(p);
	}
}

/*
 * Walks the pairs of the mapping at vi for a map-typed row: calls fn for
 * each entry whose key is new, with its path "path[key]". Duplicate and
 * bad keys are reported here.
 */
typedef void map_entry_fn(struct cfg_ctx *x, const char *key, size_t ki,
			  size_t vi, const char *path, void *dst);

static void walk_entries(struct cfg_ctx *x, size_t vi, const char *path,
			 map_entry_fn *fn, void *dst)
{
	const struct cfg_node *n = &x->doc.v[vi];
	size_t np = 0, *pairs;
	char **keys;
	bool *dup;

	if (n->kind != CFG_N_MAP) {
		config_type_error(x, vi, path, "object");
		return;
	}
	pairs = config_map_pairs(x, n, path, &np);
	keys = xcalloc(np ? np : 1, sizeof(*keys));
	for (size_t i = 0; i < np; i++)
		keys[i] = config_key_text(x, &x->doc.v[pairs[2 * i]], path);
	dup = config_find_dups(keys, np);
	for (size_t i = 0; i < np; i++) {
		const struct cfg_node *k = &x->doc.v[pairs[2 * i]];
		char *p;

		if (!keys[i] || !config_visit(x, k))
			continue;
		p = xasprintf("%s[%s]", path, keys[i]);
		if (dup[i]) {
			fe_duplicate(&x->fe, p, keys[i]);
			config_mark(x, k, 0, 0);
		} else {
			config_note_pos(x, p, &x->doc.v[pairs[2 * i + 1]]);
			fn(x, keys[i], pairs[2 * i], pairs[2 * i + 1], p, dst);
		}
		free(p);
	}
	for (size_t i = 0; i < np; i++)
		free(keys[i]);
	free(keys);
	free(dup);
	free(pairs);
}

/* Go stores a null map value as the type's zero value. */
static bool is_null(struct cfg_ctx *x, size_t vi)
{
	const struct cfg_node *n = &x->doc.v[vi];
	struct cfg_scalar sc;

	return n->kind == CFG_N_SCALAR && n->style != CFG_S_QUOTED &&
	       config_resolve(NULL, n, "", &sc) == 0 && sc.type == CFG_SC_NULL;
}

static void bool_entry(struct cfg_ctx *x, const char *key, size_t ki,
			size_t vi, const char *path, void *dst)
{
	struct config_bool_map *m = dst;
	struct cfg_scalar sc = { .type = CFG_SC_BOOL };

	(void)ki;
	if (!is_null(x, vi) && !scalar_of(x, vi, path, "boolean", &sc))
		return;
	if (sc.type != CFG_SC_BOOL) {
		config_type_error(x, vi, path, "boolean");
		return;
	}
	XGROW(m->v, m->cap, m->n + 1);
	m->v[m->n].key = xstrdup(key);
	m->v[m->n++].value = sc.b;
}

static void int_entry(struct cfg_ctx *x, const char *key, size_t ki,
			size_t vi, const char *path, void *dst)
{
	struct config_int_map *m = dst;
	int64_t v = 0;

	(void)ki;
	if (!is_null(x, vi) && !int_of(x, vi, path, INT64_MIN, INT64_MAX, &v))
		return;
	XGROW(m->v, m->cap, m->n + 1);
	m->v[m->n].key = xstrdup(key);
	m->v[m->n++].value = v;
}

static void float_entry(struct cfg_ctx *x, const char *key, size_t ki,
			size_t vi, const char *path, void *dst)
{
	struct config_float_map *m = dst;
	double v = 0;

	(void)ki;
	if (!is_null(x, vi) && !float_of(x, vi, path, false, &v))
		return;
	XGROW(m->v, m->cap, m->n + 1);
	m->v[m->n].key = xstrdup(key);
	m->v[m->n++].value = v;
}

static void quantity_entry(struct cfg_ctx *x, const char *key, size_t ki,
			size_t vi, const char *path, void *dst)
{
	struct config_quantity_map *m = dst;
	struct quantity q = { 0, QF_DECIMAL_SI };

	(void)ki;
	if (!is_null(x, vi) && !quantity_of(x, vi, path, &q))
		return;
	XGROW(m->v, m->cap, m->n + 1);
	m->v[m->n].key = xstrdup(key);
	m->v[m->n++].value = q;
}

/* ------------------------------------------------------------------ */
/* Label selectors (metav1.LabelSelector) */

struct sel_build {
	struct label_selector *sel;
	size_t errors_before; /* x->fe.n when the selector started */
};

static void match_label(struct cfg_ctx *x, const char *key, size_t ki,
			size_t vi, const char *path, void *dst)
{
	struct sel_build *sb = dst;
	const char *val = is_null(x, vi) ? "" : text_of(x, vi, path);
	/* Kubernetes reports both at the matchLabels path itself */
	char *base = xstrndup(path, strlen(path) - strlen(key) - 2);
	const char *one[1];

	if (!val) {
		free(base);
		return;
	}
	check_qualified_name(&x->fe, base, key);
	config_mark(x, &x->doc.v[ki], 0, 0);
	check_label_value(&x->fe, base, val);
	config_mark(x, &x->doc.v[vi], 0, 0);
	one[0] = val;
	label_selector_add(sb->sel, key, SEL_IN, one, 1);
	free(base);
}

/* One matchExpressions entry: {key, operator, values}. */
static void match_expression(struct cfg_ctx *x, size_t vi, const char *path,
			     struct sel_build *sb)
{
	const struct cfg_node *n = &x->doc.v[vi];
	struct config_strlist values = { NULL, 0, 0 };
	const char *key = "", *op = "";
	/* where each part was written, for the messages about it */
	const struct cfg_node *kn = n, *on = n, *vn = n;
	size_t np = 0, *pairs;
	char **keys;
	bool *dup, bad_op = false;
	enum sel_op sop = SEL_IN;
	char *p;

	if (n->kind != CFG_N_MAP) {
		config_type_error(x, vi, path, "object");
		return;
	}
	pairs = config_map_pairs(x, n, path, &np);
	keys = xcalloc(np ? np : 1, sizeof(*keys));
	for (size_t i = 0; i < np; i++)
		keys[i] = config_key_text(x, &x->doc.v[pairs[2 * i]], path);
	dup = config_find_dups(keys, np);
	for (size_t i = 0; i < np; i++) {
		const struct cfg_node *k = &x->doc.v[pairs[2 * i]];
		size_t v = pairs[2 * i + 1];
		const char *s;

		if (!keys[i])
			continue;
		p = xasprintf("%s.%s", path, keys[i]);
		if (dup[i]) {
			fe_duplicate(&x->fe, p, keys[i]);
			config_mark(x, k, 0, 0);
		} else if (!strcmp(keys[i], "key") ||
			   !strcmp(keys[i], "operator")) {
			s = is_null(x, v) ? "" : text_of(x, v, p);
			if (s && keys[i][0] == 'k') {
				key = s;
				kn = &x->doc.v[v];
			} else if (s) {
				op = s;
				on = &x->doc.v[v];
			}
			config_note_pos(x, p, &x->doc.v[v]);
		} else if (!strcmp(keys[i], "values")) {
			if (!is_null(x, v))
				set_strlist(x, v, p, &values);
			vn = &x->doc.v[v];
			config_note_pos(x, p, vn);
		} else {
			config_add(x, k, FE_NOT_FOUND, p,
				   "unknown field \"%s\"", p);
		}
		free(p);
	}
	/* metav1validation.ValidateLabelSelectorRequirement */
	if (sel_op_parse(op, false, &sop) < 0) {
		p = xasprintf("%s.operator", path);
		fe_invalid(&x->fe, p, op, "not a valid selector operator");
		config_mark(x, on, 0, 0);
		free(p);
		bad_op = true;
	} else if ((sop == SEL_IN || sop == SEL_NOT_IN) && !values.n) {
		p = xasprintf("%s.values", path);
		fe_required(&x->fe, p, "must be specified when `operator` is "
			    "'In' or 'NotIn'");
		config_mark(x, n, 0, 0);
		free(p);
	} else if ((sop == SEL_EXISTS || sop == SEL_DOES_NOT_EXIST) &&
		   values.n) {
		p = xasprintf("%s.values", path);
		fe_forbidden(&x->fe, p, "may not be specified when `operator` "
			     "is 'Exists' or 'DoesNotExist'");
		config_mark(x, vn, 0, 0);
		free(p);
	}
	p = xasprintf("%s.key", path);
	check_qualified_name(&x->fe, p, key);
	config_mark(x, kn, 0, 0);
	free(p);
	for (size_t i = 0; i < values.n; i++) {
		p = xasprintf("%s.values[%zu]", path, i);
		check_label_value(&x->fe, p, values.v[i]);
		config_mark(x, vn->kind == CFG_N_SEQ && vn->nkids == values.n
			    ? &x->doc.v[vn->kids[i]] : vn, 0, 0);
		free(p);
	}
	if (!bad_op)
		label_selector_add(sb->sel, key, sop,
				   (const char *const *)values.v, values.n);
	for (size_t i = 0; i < values.n; i++)
		free(values.v[i]);
	free(values.v);
	for (size_t i = 0; i < np; i++)
		free(keys[i]);
	free(keys);
	free(dup);
	free(pairs);
}

static void set_selector(struct cfg_ctx *x, size_t vi, const char *path,
			 struct config_selector *dst)
{
	const struct cfg_node *n = &x->doc.v[vi];
	struct sel_build sb = { &dst->sel, x->fe.n };
	size_t np = 0, *pairs;
	char **keys;
	bool *dup;
	int slot = !strcmp(path, "managedJobsNamespaceSelector") ? CFG_SEL_MJNS
		   : !strcmp(path, "integrations.podOptions.namespaceSelector")
		   ? CFG_SEL_POD_NS : CFG_SEL_OTHER;

	if (n->kind != CFG_N_MAP) {
		config_type_error(x, vi, path, "object");
		x->bad_selector[slot] = true;
		return;
	}
	label_selector_release(&dst->sel);
	dst->set = true;
	pairs = config_map_pairs(x, n, path, &np);
	keys = xcalloc(np ? np : 1, sizeof(*keys));
	for (size_t i = 0; i < np; i++)
		keys[i] = config_key_text(x, &x->doc.v[pairs[2 * i]], path);
	dup = config_find_dups(keys, np);
	for (size_t i = 0; i < np; i++) {
		const struct cfg_node *k = &x->doc.v[pairs[2 * i]];
		size_t v = pairs[2 * i + 1];
		char *p;

		if (!keys[i] || !config_visit(x, k))
			continue;
		p = xasprintf("%s.%s", path, keys[i]);
		if (dup[i]) {
			fe_duplicate(&x->fe, p, keys[i]);
			config_mark(x, k, 0, 0);
		} else if (!strcmp(keys[i], "matchLabels")) {
			config_note_pos(x, p, &x->doc.v[v]);
			if (!is_null(x, v))
				walk_entries(x, v, p, match_label, &sb);
		} else if (!strcmp(keys[i], "matchExpressions")) {
			const struct cfg_node *s;

			config_note_pos(x, p, &x->doc.v[v]);
			s = is_null(x, v) ? NULL : seq_of(x, v, p);
			for (size_t j = 0; s && j < s->nkids; j++) {
				char *ip = index_path(p, j);

				if (config_visit(x, &x->doc.v[s->kids[j]])) {
					config_note_pos(x, ip,
							&x->doc.v[s->kids[j]]);
					match_expression(x, s->kids[j], ip,
							 &sb);
				}
				free(ip);
			}
		} else {
			config_add(x, k, FE_NOT_FOUND, p,
				   "unknown field \"%s\"", p);
		}
		free(p);
	}
	if (x->fe.n > sb.errors_before)
		x->bad_selector[slot] = true;
	for (size_t i = 0; i < np; i++)
		free(keys[i]);
	free(keys);
	free(dup);
	free(pairs);
}

/* ------------------------------------------------------------------ */
/* Lists of structs */

static void set_list(struct cfg_ctx *x, const struct cfg_list *l, size_t vi,
		     const char *path, void *dst)
{
	const struct cfg_node *n = seq_of(x, vi, path);
	struct cfg_vec vec;

	for (size_t i = 0; n && i < n->nkids; i++) {
		const struct cfg_node *it = &x->doc.v[n->kids[i]];
		char *p = index_path(path, i);
		char *elem;

		if (!config_visit(x, it)) {
			free(p);
			break;
		}
		if (it->kind != CFG_N_MAP && !is_null(x, n->kids[i])) {
			config_type_error(x, n->kids[i], p, "object");
			free(p);
			continue;
		}
		config_note_pos(x, p, it);
		memcpy(&vec, dst, sizeof(vec));
		xgrow(&vec.v, &vec.cap, vec.n + 1, l->elem_size);
		elem = (char *)vec.v + vec.n * l->elem_size;
		memset(elem, 0, l->elem_size);
		vec.n++;
		memcpy(dst, &vec, sizeof(vec));
		if (it->kind == CFG_N_MAP)
			config_walk_map(x, n->kids[i], l->rows, l->nrows, "", p,
					elem, NULL);
		free(p);
	}
}

/* ------------------------------------------------------------------ */
/* The dispatch on a row's type */

void config_set(struct cfg_ctx *x, const struct cfg_field *f, size_t vi,
		const char *path, void *dst)
{
	const char *s;
	int64_t i64;
	double d;
	int e;

	switch (f->type) {
	case CFG_SECTION:
		BUG("config_set on section %s", f->key);
	case CFG_STRING:
		s = text_of(x, vi, path);
		if (s) {
			free(*(char **)dst);
			*(char **)dst = xstrdup(s);
		}
		break;
	case CFG_BOOL: {
		struct cfg_scalar sc;

		if (!scalar_of(x, vi, path, "boolean", &sc))
			break;
		if (sc.type != CFG_SC_BOOL)
			config_type_error(x, vi, path, "boolean");
		else
			*(bool *)dst = sc.b;
		break;
	}
	case CFG_INT:
		if (int_of(x, vi, path, INT64_MIN, INT64_MAX, &i64))
			*(int64_t *)dst = i64;
		break;
	case CFG_INT32:
		if (int_of(x, vi, path, INT32_MIN, INT32_MAX, &i64))
			*(int64_t *)dst = i64;
		break;
	case CFG_FLOAT32:
		if (float_of(x, vi, path, true, &d))
			*(double *)dst = d;
		break;
	case CFG_DURATION:
		if (duration_of(x, vi, path, &i64))
			*(int64_t *)dst = i64;
		break;
	case CFG_NANOS:
		if (int_of(x, vi, path, INT64_MIN, INT64_MAX, &i64))
			*(int64_t *)dst = config_ns_to_ms(i64);
		break;
	case CFG_ENUM:
		s = text_of(x, vi, path);
		if (!s)
			break;
		e = enum_index(f->aux, s);
		if (e < 0) {
			const struct cfg_enum *en = f->aux;

			fe_unsupported(&x->fe, path, s, en->names);
			config_mark(x, &x->doc.v[vi], 0, 0);
		} else {
			*(int *)dst = e;
		}
		break;
	case CFG_STRLIST:
		set_strlist(x, vi, path, dst);
		break;
	case CFG_INT32LIST:
		set_intlist(x, vi, path, dst);
		break;
	case CFG_BOOLMAP:
		walk_entries(x, vi, path, bool_entry, dst);
		break;
	case CFG_INTMAP:
		walk_entries(x, vi, path, int_entry, dst);
		break;
	case CFG_FLOATMAP:
		walk_entries(x, vi, path, float_entry, dst);
		break;
	case CFG_QUANTITYMAP:
		walk_entries(x, vi, path, quantity_entry, dst);
		break;
	case CFG_SELECTOR:
		set_selector(x, vi, path, dst);
		break;
	case CFG_LIST:
		set_list(x, f->aux, vi, path, dst);
		break;
	case CFG_OPAQUE:
		*(bool *)dst = true;
		break;
	}
}

void config_set_default(const struct cfg_field *f, const char *text,
			void *dst)
{
	char msg[128];
	int64_t ns;

	switch (f->type) {
	case CFG_STRING:
		free(*(char **)dst);
		*(char **)dst = xstrdup(text);
		return;
	case CFG_BOOL:
		*(bool *)dst = !strcmp(text, "true");
		return;
	case CFG_INT:
	case CFG_INT32:
		*(int64_t *)dst = strtoll(text, NULL, 10);
		return;
	case CFG_FLOAT32:
		*(double *)dst = strtod(text, NULL);
		return;
	case CFG_DURATION:
	case CFG_NANOS:
		if (config_parse_go_duration(text, &ns, msg, sizeof(msg)) < 0)
			BUG("bad default %s for %s", text, f->key);
		*(int64_t *)dst = config_ns_to_ms(ns);
		return;
	case CFG_ENUM:
		*(int *)dst = enum_index(f->aux, text);
		if (*(int *)dst < 0)
			BUG("bad default %s for %s", text, f->key);
		return;
	case CFG_STRLIST:
		list_push(dst, text);
		return;
	default:
		BUG("no text default for %s", f->key);
	}
}

void config_release_field(const struct cfg_field *f, void *dst)
{
	switch (f->type) {
	case CFG_STRING:
		FREE_AND_NULL(*(char **)dst);
		break;
	case CFG_STRLIST: {
		struct config_strlist *l = dst;

		for (size_t i = 0; i < l->n; i++)
			free(l->v[i]);
		free(l->v);
		memset(l, 0, sizeof(*l));
		break;
	}
	case CFG_INT32LIST: {
		struct config_int_list *l = dst;

		free(l->v);
		memset(l, 0, sizeof(*l));
		break;
	}
	case CFG_BOOLMAP: {
		struct config_bool_map *m = dst;

		for (size_t i = 0; i < m->n; i++)
			free(m->v[i].key);
		free(m->v);
		memset(m, 0, sizeof(*m));
		break;
	}
	case CFG_INTMAP: {
		struct config_int_map *m = dst;

		for (size_t i = 0; i < m->n; i++)
			free(m->v[i].key);
		free(m->v);
		memset(m, 0, sizeof(*m));
		break;
	}
	case CFG_FLOATMAP: {
		struct config_float_map *m = dst;

		for (size_t i = 0; i < m->n; i++)
			free(m->v[i].key);
		free(m->v);
		memset(m, 0, sizeof(*m));
		break;
	}
	case CFG_QUANTITYMAP: {
		struct config_quantity_map *m = dst;

		for (size_t i = 0; i < m->n; i++)
			free(m->v[i].key);
		free(m->v);
		memset(m, 0, sizeof(*m));
		break;
	}
	case CFG_SELECTOR: {
		struct config_selector *s = dst;

		label_selector_release(&s->sel);
		s->set = false;
		break;
	}
	case CFG_LIST: {
		const struct cfg_list *l = f->aux;
		struct cfg_vec vec;

		memcpy(&vec, dst, sizeof(vec));
		for (size_t i = 0; i < vec.n; i++)
			for (size_t r = 0; r < l->nrows; r++)
				config_release_field(&l->rows[r],
						     (char *)vec.v +
						     i * l->elem_size +
						     l->rows[r].off);
		free(vec.v);
		memset(&vec, 0, sizeof(vec));
		memcpy(dst, &vec, sizeof(vec));
		break;
	}
	default:
		break;
	}
}
