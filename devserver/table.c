/*
 * table: meta.k8s.io/v1 Table responses, as kube-apiserver builds them.
 * Custom resources follow apiextensions' tableconvertor.go (column 0 is
 * the name, then the served version's additionalPrinterColumns evaluated
 * with client-go's JSONPath, or a lone Age column). Built-in kinds follow
 * k8s.io/kubernetes pkg/printers/internalversion/printers.go, run with
 * Wide set as the server does, so priority-1 columns always carry cells;
 * kinds without a printer get apiserver's default convertor (Name,
 * Created At). Ages are duration.HumanDuration of now - then.
 *
 * Pure: `now` comes in, objects are borrowed, every result is new.
 */
#include "devserver/table.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/jx.h"
#include "base/sbuf.h"
#include "model/goparse.h"
#include "model/svec.h"
#include "model/timestamp.h"

/* ------------------------------------------------------------------ */
/* JSONPath: the dialect printer columns use.                          */

enum step_kind {
	ST_FIELD,  /* .name or ['name'] */
	ST_INDEX,  /* [n], negative from the end */
	ST_WILD,   /* [*] or .* */
	ST_FILTER, /* [?(@.path op literal)] or [?(@.path)] */
};

enum filter_op { OP_EXISTS, OP_EQ, OP_NE, OP_LT, OP_GT, OP_LE, OP_GE };

struct jpath;

struct step {
	enum step_kind kind;
	char *name;        /* ST_FIELD: the key; owned */
	long long index;   /* ST_INDEX */
	struct jpath *sub; /* ST_FILTER: path relative to @; owned */
	enum filter_op op; /* ST_FILTER */
	json_t *lit;       /* ST_FILTER: right-hand literal; owned, NULL for EXISTS */
};

struct jpath {
	struct step *v; /* owned array of n steps */
	size_t n;
	size_t cap;
};

static void jpath_free(struct jpath *jp)
{
	if (!jp)
		return;
	for (size_t i = 0; i < jp->n; i++) {
		free(jp->v[i].name);
		jpath_free(jp->v[i].sub);
		json_decref(jp->v[i].lit);
	}
	free(jp->v);
	free(jp);
}

static struct step *jpath_push(struct jpath *jp, enum step_kind kind)
{
	struct step *s;

	XGROW(jp->v, jp->cap, jp->n + 1);
	s = &jp->v[jp->n++];
	memset(s, 0, sizeof(*s));
	s->kind = kind;
	return s;
}

static void skip_spaces(const char **p)
{
	while (**p == ' ' || **p == '\t')
		(*p)++;
}

/* A quoted string at *p ('x' or "x", backslash escapes the next byte).
 * Returns a new string, or NULL + err. */
static char *parse_quoted(const char **p, struct err *err)
{
	char q = **p;
	const char *s = *p + 1;
	char *out = xmalloc(strlen(s) + 1);
	size_t o = 0;

	while (*s && *s != q) {
		if (*s == '\\' && s[1])
			s++;
		out[o++] = *s++;
	}
	if (*s != q) {
		free(out);
		err_set(err, "unterminated quoted string");
		return NULL;
	}
	out[o] = '\0';
	*p = s + 1;
	return out;
}

/* A filter literal: quoted string, number or true/false. */
static json_t *parse_literal(const char **p, struct err *err)
{
	const char *s = *p;

	if (*s == '\'' || *s == '"') {
		char *str = parse_quoted(p, err);
		json_t *j;

		if (!str)
			return NULL;
		j = json_string(str);
		free(str);
		if (!j)
			err_set(err, "filter literal is not valid UTF-8");
		return j;
	}
	if (!strncmp(s, "true", 4) || !strncmp(s, "false", 5)) {
		*p += s[0] == 't' ? 4 : 5;
		return json_boolean(s[0] == 't');
	}
	if (*s == '-' || isdigit((unsigned char)*s)) {
		const char *e = s + (*s == '-');
		bool real = false;
		char buf[64];
		size_t n;

		while (isdigit((unsigned char)*e) || *e == '.') {
			real |= *e == '.';
			e++;
		}
		n = (size_t)(e - s);
		if (n == 0 || n >= sizeof(buf) || (n == 1 && *s == '-')) {
			err_set(err, "bad number in filter");
			return NULL;
		}
		memcpy(buf, s, n);
		buf[n] = '\0';
		*p = e;
		if (real)
			return json_real(strtod(buf, NULL));
		return json_integer(strtoll(buf, NULL, 10));
	}
	err_set(err, "unrecognized filter literal at '%.20s'", s);
	return NULL;
}

static struct jpath *parse_steps(const char **p, bool in_filter,
				 struct err *err);

/* [...] after the '[' */
static int parse_bracket(struct jpath *jp, const char **pp, struct err *err)
{
	const char *p = *pp;
	struct step *st;

	skip_spaces(&p);
	if (*p == '\'' || *p == '"') {
		char *name = parse_quoted(&p, err);

		if (!name)
			return -1;
		st = jpath_push(jp, ST_FIELD);
		st->name = name;
	} else if (*p == '*') {
		p++;
		jpath_push(jp, ST_WILD);
	} else if (*p == '?') {
		struct jpath *sub;
		json_t *lit = NULL;
		enum filter_op op = OP_EXISTS;

		p++;
		skip_spaces(&p);
		if (*p != '(')
			return err_set(err, "expected ( after ? in filter");
		p++;
		skip_spaces(&p);
		if (*p != '@')
			return err_set(err, "filter must start with @");
		p++;
		sub = parse_steps(&p, true, err);
		if (!sub)
			return -1;
		skip_spaces(&p);
		if (*p != ')') {
			static const struct {
				const char *text;
				enum filter_op op;
			} ops[] = {
				{ "==", OP_EQ }, { "!=", OP_NE }, { "<=", OP_LE },
				{ ">=", OP_GE }, { "<", OP_LT }, { ">", OP_GT },
			};
			size_t i;

			for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
				if (!strncmp(p, ops[i].text, strlen(ops[i].text)))
					break;
			if (i == sizeof(ops) / sizeof(ops[0])) {
				jpath_free(sub);
				return err_set(err, "unrecognized filter operator at '%.20s'", p);
			}
			op = ops[i].op;
			p += strlen(ops[i].text);
			skip_spaces(&p);
			lit = parse_literal(&p, err);
			if (!lit) {
				jpath_free(sub);
				return -1;
			}
			skip_spaces(&p);
		}
		if (*p != ')') {
			jpath_free(sub);
			json_decref(lit);
			return err_set(err, "unclosed filter");
		}
		p++;
		st = jpath_push(jp, ST_FILTER);
		st->sub = sub;
		st->op = op;
		st->lit = lit;
	} else if (*p == '-' || isdigit((unsigned char)*p)) {
		char *end;
		long long v = strtoll(p, &end, 10);

		if (end == p || (end == p + 1 && *p == '-'))
			return err_set(err, "bad array index");
		p = end;
		skip_spaces(&p);
		if (*p == ':')
			return err_set(err, "array slices are not supported");
		if (*p == ',')
			return err_set(err, "unions are not supported");
		st = jpath_push(jp, ST_INDEX);
		st->index = v;
	} else {
		return err_set(err, "unrecognized bracket expression at '%.20s'", p);
	}
	skip_spaces(&p);
	if (*p != ']')
		return err_set(err, "expected ] at '%.20s'", p);
	*pp = p + 1;
	return 0;
}

/* Field names end where client-go's isTerminator says (blanks, . , [ ]
 * $ @ { }); inside a filter also at operators and ')'. */
static bool name_end(char c, bool in_filter)
{
	if (!c || strchr(".[], \t\n$@{}", c))
		return true;
	return in_filter && strchr("=!<>)", c);
}

static struct jpath *parse_steps(const char **pp, bool in_filter,
				 struct err *err)
{
	struct jpath *jp = xcalloc(1, sizeof(*jp));
	const char *p = *pp;

	for (;;) {
		if (*p == '.') {
			const char *s = ++p;
			struct step *st;

			if (*p == '.') {
				err_set(err, "recursive descent (..) is not supported");
				goto fail;
			}
			if (*p == '[')
				continue;
			while (!name_end(*p, in_filter))
				p++;
			if (p == s) {
				if (!*p && !in_filter && jp->n == 0)
					break; /* "." alone: the object */
				err_set(err, "empty field name");
				goto fail;
			}
			if (p - s == 1 && *s == '*') {
				jpath_push(jp, ST_WILD);
				continue;
			}
			st = jpath_push(jp, ST_FIELD);
			st->name = xstrndup(s, (size_t)(p - s));
		} else if (*p == '[') {
			p++;
			if (parse_bracket(jp, &p, err))
				goto fail;
		} else if (!*p || (in_filter && name_end(*p, true))) {
			break;
		} else {
			err_set(err, "unexpected character at '%.20s'", p);
			goto fail;
		}
	}
	*pp = p;
	return jp;
fail:
	jpath_free(jp);
	return NULL;
}

/* Parses a whole column path; an outer {...} (kubectl style) is
 * accepted. Returns new or NULL + err. */
static struct jpath *jpath_parse(const char *path, struct err *err)
{
	char *copy = NULL;
	const char *p = path;
	struct jpath *jp;
	size_t n;

	if (!path) {
		err_set(err, "no path");
		return NULL;
	}
	n = strlen(path);
	if (n >= 2 && path[0] == '{' && path[n - 1] == '}') {
		copy = xstrndup(path + 1, n - 2);
		p = copy;
	}
	if (*p != '.' && *p != '[') {
		err_set(err, "must be a simple json path starting with .");
		free(copy);
		return NULL;
	}
	jp = parse_steps(&p, false, err);
	if (jp && *p) {
		err_set(err, "unexpected character at '%.20s'", p);
		jpath_free(jp);
		jp = NULL;
	}
	free(copy);
	return jp;
}

int jsonpath_check(const char *path, struct err *err)
{
	struct jpath *jp;

	if (!path || path[0] != '.')
		return err_set(err, "must be a simple json path starting with .");
	jp = jpath_parse(path, err);
	if (!jp)
		return -1;
	jpath_free(jp);
	return 0;
}

struct vals {
	const json_t **v; /* borrowed values */
	size_t n;
	size_t cap;
};

static void vals_push(struct vals *vs, const json_t *v)
{
	XGROW(vs->v, vs->cap, vs->n + 1);
	vs->v[vs->n++] = v;
}

/* text/template's comparison (the fork inside client-go's jsonpath):
 * the same basic kind is required, bool only for equality. Returns
 * -1/0/1, or 2 for "cannot compare", which fails the whole path. */
static int compare(const json_t *a, const json_t *b, bool order)
{
	if (json_is_string(a) && json_is_string(b)) {
		int r = strcmp(json_string_value(a), json_string_value(b));

		return r < 0 ? -1 : r > 0;
	}
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);

		return x < y ? -1 : x > y;
	}
	if (json_is_real(a) && json_is_real(b)) {
		double x = json_real_value(a), y = json_real_value(b);

		return x < y ? -1 : x > y;
	}
	if (json_is_boolean(a) && json_is_boolean(b) && !order)
		return json_is_true(a) == json_is_true(b) ? 0 : 1;
	return 2;
}

static int jpath_run(const struct jpath *jp, const json_t *root,
		     struct vals *out);

/* One filter over the arrays in cur; -1 when the path fails. */
static int run_filter(const struct step *st, const json_t *arr,
		      struct vals *next)
{
	size_t i;
	const json_t *it;

	if (!json_is_array(arr))
		return -1; /* "is not array or slice and cannot be filtered" */
	json_array_foreach(arr, i, it) {
		struct vals lefts = { NULL, 0, 0 };
		int r, c;
		bool pass = false;

		r = jpath_run(st->sub, it, &lefts);
		if (r) {
			free(lefts.v);
			return -1;
		}
		if (st->op == OP_EXISTS) {
			if (lefts.n)
				vals_push(next, it);
			free(lefts.v);
			continue;
		}
		if (lefts.n == 0) {
			free(lefts.v);
			continue;
		}
		if (lefts.n > 1) {
			free(lefts.v);
			return -1; /* "can only compare one element at a time" */
		}
		c = compare(lefts.v[0], st->lit,
			    st->op != OP_EQ && st->op != OP_NE);
		free(lefts.v);
		if (c == 2)
			return -1;
		switch (st->op) {
		case OP_EQ: pass = c == 0; break;
		case OP_NE: pass = c != 0; break;
		case OP_LT: pass = c < 0; break;
		case OP_GT: pass = c > 0; break;
		case OP_LE: pass = c <= 0; break;
		case OP_GE: pass = c >= 0; break;
		case OP_EXISTS: break;
		}
		if (pass)
			vals_push(next, it);
	}
	return 0;
}

/* Evaluates jp on root into out (borrowed values); -1 on a failing path
 * (client-go returns an error, which a column shows as null). Missing
 * keys are not failures (AllowMissingKeys). */
static int jpath_run(const struct jpath *jp, const json_t *root,
		     struct vals *out)
{
	struct vals cur = { NULL, 0, 0 };

	vals_push(&cur, root);
	for (size_t s = 0; s < jp->n; s++) {
		const struct step *st = &jp->v[s];
		struct vals next = { NULL, 0, 0 };

		for (size_t i = 0; i < cur.n; i++) {
			const json_t *v = cur.v[i];
			const json_t *x;
			const char *k;
			size_t j;

			switch (st->kind) {
			case ST_FIELD:
				x = json_is_object(v) ? json_object_get(v, st->name) : NULL;
				if (x)
					vals_push(&next, x);
				break;
			case ST_INDEX: {
				long long n = (long long)json_array_size(v);
				long long idx = st->index < 0 ? st->index + n : st->index;

				if (json_is_null(v))
					break;
				if (!json_is_array(v) || idx < 0 || idx >= n)
					goto fail;
				vals_push(&next, json_array_get(v, (size_t)idx));
				break;
			}
			case ST_WILD:
				if (json_is_array(v)) {
					json_array_foreach(v, j, x)
						vals_push(&next, x);
				} else if (json_is_object(v)) {
					json_object_foreach((json_t *)v, k, x)
						vals_push(&next, x);
				}
				break;
			case ST_FILTER:
				if (run_filter(st, v, &next))
					goto fail;
				break;
			}
			continue;
fail:
			free(next.v);
			free(cur.v);
			return -1;
		}
		free(cur.v);
		cur = next;
	}
	*out = cur;
	return 0;
}

json_t *jsonpath_eval(const json_t *obj, const char *path)
{
	struct jpath *jp;
	struct vals res = { NULL, 0, 0 };
	json_t *first = NULL;

	if (!obj)
		return NULL;
	jp = jpath_parse(path, NULL);
	if (!jp)
		return NULL;
	if (jpath_run(jp, obj, &res) == 0 && res.n)
		first = json_incref((json_t *)res.v[0]);
	free(res.v);
	jpath_free(jp);
	return first;
}

/* ------------------------------------------------------------------ */
/* Ages.                                                               */

char *table_age(int64_t now_ms, int64_t then_ms, char *buf, size_t n)
{
	int64_t d, sec, min, hours;

	if (!buf || !n)
		return buf;
	if (__builtin_sub_overflow(now_ms, then_ms, &d))
		d = now_ms < then_ms ? INT64_MIN : INT64_MAX;
	sec = d / 1000; /* int(d.Seconds()) truncates toward zero */
	if (sec < -1) {
		snprintf(buf, n, "<invalid>");
		return buf;
	}
	if (sec < 0) {
		snprintf(buf, n, "0s");
		return buf;
	}
	if (sec < 60 * 2) {
		snprintf(buf, n, "%llds", (long long)sec);
		return buf;
	}
	min = d / 60000;
	if (min < 10) {
		if (sec % 60 == 0)
			snprintf(buf, n, "%lldm", (long long)min);
		else
			snprintf(buf, n, "%lldm%llds", (long long)min,
				 (long long)(sec % 60));
		return buf;
	}
	if (min < 60 * 3) {
		snprintf(buf, n, "%lldm", (long long)min);
		return buf;
	}
	hours = d / 3600000;
	if (hours < 8) {
		if (min % 60 == 0)
			snprintf(buf, n, "%lldh", (long long)hours);
		else
			snprintf(buf, n, "%lldh%lldm", (long long)hours,
				 (long long)(min % 60));
	} else if (hours < 48) {
		snprintf(buf, n, "%lldh", (long long)hours);
	} else if (hours < 24 * 8) {
		if (hours % 24 == 0)
			snprintf(buf, n, "%lldd", (long long)(hours / 24));
		else
			snprintf(buf, n, "%lldd%lldh", (long long)(hours / 24),
				 (long long)(hours % 24));
	} else if (hours < 24 * 365 * 2) {
		snprintf(buf, n, "%lldd", (long long)(hours / 24));
	} else if (hours < 24 * 365 * 8) {
		long long dy = (hours / 24) % 365;

		if (dy == 0)
			snprintf(buf, n, "%lldy", (long long)(hours / 24 / 365));
		else
			snprintf(buf, n, "%lldy%lldd", (long long)(hours / 24 / 365),
				 dy);
	} else {
		snprintf(buf, n, "%lldy", (long long)(hours / 24 / 365));
	}
	return buf;
}

/* 0001-01-01T00:00:00Z, Go's zero time.Time, in epoch milliseconds. */
#define ZERO_TIME_MS (-62135596800000LL)

/* Parses a metav1.Time / MicroTime value; false for absent, empty,
 * unparsable or the zero time. */
static bool get_time(const json_t *ts, int64_t *ms)
{
	if (!json_is_string(ts) || !*json_string_value(ts))
		return false;
	if (timestamp_parse(json_string_value(ts), ms))
		return false;
	return *ms != ZERO_TIME_MS;
}

/* translateTimestampSince: "<unknown>" for a zero time. */
static void since(const json_t *ts, int64_t now_ms, char *buf, size_t n)
{
	int64_t t;

	if (!get_time(ts, &t))
		snprintf(buf, n, "<unknown>");
	else
		table_age(now_ms, t, buf, n);
}

/* ------------------------------------------------------------------ */
/* Small JSON readers for the printers.                                */

static const char *text_of(const json_t *v)
{
	return json_is_string(v) ? json_string_value(v) : "";
}

static long long jint(const json_t *v)
{
	if (json_is_integer(v))
		return (long long)json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	return 0;
}

static size_t jsize(const json_t *v)
{
	if (json_is_array(v))
		return json_array_size(v);
	if (json_is_object(v))
		return json_object_size(v);
	return 0;
}

static void add_str(json_t *cells, const char *s)
{
	json_array_append_new(cells, json_string(s ? s : ""));
}

static void add_int(json_t *cells, long long v)
{
	json_array_append_new(cells, json_integer((json_int_t)v));
}

static void add_since(json_t *cells, const json_t *ts, int64_t now_ms)
{
	char b[32];

	since(ts, now_ms, b, sizeof(b));
	add_str(cells, b);
}

/* labels.FormatLabels: "k=v" sorted, comma-joined, "<none>" if empty. */
static char *format_labels(const json_t *m)
{
	struct sbuf b = SBUF_INIT;
	char **parts = NULL;
	size_t n = 0, cap = 0;
	const char *k;
	const json_t *v;

	json_object_foreach((json_t *)m, k, v) {
		XGROW(parts, cap, n + 1);
		parts[n++] = xasprintf("%s=%s", k, text_of(v));
	}
	if (!n)
		return xstrdup("<none>");
	qsort(parts, n, sizeof(*parts), svec_cmp);
	for (size_t i = 0; i < n; i++) {
		if (i)
			sbuf_adds(&b, ",");
		sbuf_adds(&b, parts[i]);
		free(parts[i]);
	}
	free(parts);
	return sbuf_detach(&b, NULL);
}

struct req {
	const char *key; /* borrowed from the selector */
	char *text; /* owned rendering */
};

static int req_cmp(const void *a, const void *b)
{
	const struct req *x = a, *y = b;

	return strcmp(x->key, y->key);
}

/* metav1.FormatLabelSelector: requirements sorted by key, "<none>" for
 * a nil or empty selector, "<error>" for an invalid one. */
static char *format_label_selector(const json_t *sel)
{
	const json_t *ml = json_object_get(sel, "matchLabels");
	const json_t *me = json_object_get(sel, "matchExpressions");
	struct req *reqs = NULL;
	size_t n = 0, cap = 0, i;
	struct sbuf b = SBUF_INIT;
	const char *k;
	const json_t *v;
	char *out = NULL;

	if (!json_is_object(sel) || (!jsize(ml) && !jsize(me)))
		return xstrdup("<none>");
	json_object_foreach((json_t *)ml, k, v) {
		XGROW(reqs, cap, n + 1);
		reqs[n].key = k;
		reqs[n++].text = xasprintf("%s=%s", k, text_of(v));
	}
	json_array_foreach(me, i, v) {
		const char *key = jx_text(v, "key");
		const char *op = jx_text(v, "operator");
		const json_t *vals = json_object_get(v, "values");
		size_t nv = jsize(vals);
		bool in = !strcmp(op, "In"), notin = !strcmp(op, "NotIn");

		if (in || notin) {
			char **sv;
			const json_t *x;
			size_t j;
			struct sbuf t = SBUF_INIT;

			if (!nv)
				goto error;
			sv = xcalloc(nv, sizeof(*sv));
			json_array_foreach(vals, j, x)
				sv[j] = (char *)text_of(x);
			qsort(sv, nv, sizeof(*sv), svec_cmp);
			sbuf_adds(&t, key);
			sbuf_adds(&t, in ? " in (" : " notin (");
			for (j = 0; j < nv; j++) {
				if (j)
					sbuf_adds(&t, ",");
				sbuf_adds(&t, sv[j]);
			}
			sbuf_adds(&t, ")");
			free(sv);
			XGROW(reqs, cap, n + 1);
			reqs[n].key = key;
			reqs[n++].text = sbuf_detach(&t, NULL);
		} else if (!strcmp(op, "Exists") || !strcmp(op, "DoesNotExist")) {
			if (nv)
				goto error;
			XGROW(reqs, cap, n + 1);
			reqs[n].key = key;
			reqs[n++].text = xasprintf("%s%s", op[0] == 'D' ? "!" : "",
						   key);
		} else {
			goto error;
		}
	}
	/* insertion sort: stable, like the requirements' key order */
	for (i = 1; i < n; i++)
		for (size_t j = i; j > 0 && req_cmp(&reqs[j - 1], &reqs[j]) > 0; j--) {
			struct req t = reqs[j];

			reqs[j] = reqs[j - 1];
			reqs[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (i)
			sbuf_adds(&b, ",");
		sbuf_adds(&b, reqs[i].text);
	}
	out = sbuf_detach(&b, NULL);
	goto done;
error:
	out = xstrdup("<error>");
done:
	for (i = 0; i < n; i++)
		free(reqs[i].text);
	free(reqs);
	return out;
}

/* layoutContainerCells: names and images of the containers, joined. */
static void add_containers(json_t *cells, const json_t *containers)
{
	struct sbuf names = SBUF_INIT, images = SBUF_INIT;
	size_t i;
	const json_t *c;

	json_array_foreach(containers, i, c) {
		if (i) {
			sbuf_adds(&names, ",");
			sbuf_adds(&images, ",");
		}
		sbuf_adds(&names, jx_text(c, "name"));
		sbuf_adds(&images, jx_text(c, "image"));
	}
	add_str(cells, sbuf_cstr(&names));
	add_str(cells, sbuf_cstr(&images));
	sbuf_release(&names);
	sbuf_release(&images);
}

/* ------------------------------------------------------------------ */
/* Built-in printers.                                                  */

struct coldef {
	const char *name;
	const char *type;
	const char *format;
	const char *desc;
	int priority;
};

typedef void cells_fn(const json_t *obj, int64_t now_ms, json_t *cells,
		      json_t **conditions);

struct printer {
	const char *kind;
	const struct coldef *cols; /* static array of ncols */
	size_t ncols;
	cells_fn *cells;
};

#define D_NAME "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
#define D_AGE "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
#define D_CONTAINERS "Names of each container in the template."
#define D_IMAGES "Images referenced by each container in the template."

#define NAME_COL { "Name", "string", "name", D_NAME, 0 }
#define AGE_COL { "Age", "string", "", D_AGE, 0 }

static const struct coldef job_cols[] = {
	NAME_COL,
	{ "Status", "string", "", "Status of the job.", 0 },
	{ "Completions", "string", "", "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.", 0 },
	{ "Duration", "string", "", "Time required to complete the job.", 0 },
	AGE_COL,
	{ "Containers", "string", "", D_CONTAINERS, 1 },
	{ "Images", "string", "", D_IMAGES, 1 },
	{ "Selector", "string", "", "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors", 1 },
};

static const struct coldef pod_cols[] = {
	NAME_COL,
	{ "Ready", "string", "", "The aggregate readiness state of this pod for accepting traffic.", 0 },
	{ "Status", "string", "", "The aggregate status of the containers in this pod.", 0 },
	{ "Restarts", "string", "", "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.", 0 },
	AGE_COL,
	{ "IP", "string", "", "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.", 1 },
	{ "Node", "string", "", "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.", 1 },
	{ "Nominated Node", "string", "", "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.", 1 },
	{ "Readiness Gates", "string", "", "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates", 1 },
};

static const struct coldef namespace_cols[] = {
	NAME_COL,
	{ "Status", "string", "", "The status of the namespace", 0 },
	AGE_COL,
};

static const struct coldef event_cols[] = {
	{ "Last Seen", "string", "", "The time at which the most recent occurrence of this event was recorded.", 0 },
	{ "Type", "string", "", "Type of this event (Normal, Warning), new types could be added in the future", 0 },
	{ "Reason", "string", "", "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.", 0 },
	{ "Object", "string", "", "The object that this event is about.", 0 },
	{ "Subobject", "string", "", "If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: \"spec.containers{name}\" (where \"name\" refers to the name of the container that triggered the event) or if no container name is specified \"spec.containers[2]\" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.", 1 },
	{ "Source", "string", "", "The component reporting this event. Should be a short machine understandable string.", 1 },
	{ "Message", "string", "", "A human-readable description of the status of this operation.", 0 },
	{ "First Seen", "string", "", "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)", 1 },
	{ "Count", "string", "", "The number of times this event has occurred.", 1 },
	{ "Name", "string", "name", D_NAME, 1 },
};

static const struct coldef default_cols[] = {
	NAME_COL,
	{ "Created At", "date", "", D_AGE, 0 },
};

static const struct coldef configmap_cols[] = {
	NAME_COL,
	{ "Data", "string", "", "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.", 0 },
	AGE_COL,
};

static const struct coldef secret_cols[] = {
	NAME_COL,
	{ "Type", "string", "", "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types", 0 },
	{ "Data", "string", "", "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4", 0 },
	AGE_COL,
};

static const struct coldef service_cols[] = {
	NAME_COL,
	{ "Type", "string", "", "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. \"ClusterIP\" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is \"None\", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. \"NodePort\" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. \"LoadBalancer\" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. \"ExternalName\" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types", 0 },
	{ "Cluster-IP", "string", "", "clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are \"None\", empty string (\"\"), or a valid IP address. Setting this to \"None\" makes a \"headless service\" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies", 0 },
	{ "External-IP", "string", "", "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.", 0 },
	{ "Port(s)", "string", "", "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies", 0 },
	AGE_COL,
	{ "Selector", "string", "", "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/", 1 },
};

static const struct coldef priorityclass_cols[] = {
	NAME_COL,
	{ "Value", "integer", "", "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.", 0 },
	{ "Global-Default", "boolean", "", "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.", 0 },
	AGE_COL,
	{ "PreemptionPolicy", "string", "", "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.", 0 },
};

static const struct coldef lease_cols[] = {
	NAME_COL,
	{ "Holder", "string", "", "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.", 0 },
	AGE_COL,
};

static const struct coldef webhookcfg_cols[] = {
	NAME_COL,
	{ "Webhooks", "integer", "", "Webhooks indicates the number of webhooks registered in this configuration", 0 },
	AGE_COL,
};

static const char *obj_name(const json_t *obj)
{
	return text_of(JX_DIG(obj, "metadata", "name"));
}

static const json_t *obj_created(const json_t *obj)
{
	return JX_DIG(obj, "metadata", "creationTimestamp");
}

/* hasJobCondition: the first condition of that type decides. */
static bool has_condition(const json_t *conds, const char *type)
{
	size_t i;
	const json_t *c;

	json_array_foreach(conds, i, c)
		if (!strcmp(jx_text(c, "type"), type))
			return !strcmp(jx_text(c, "status"), "True");
	return false;
}

static void cells_job(const json_t *job, int64_t now_ms, json_t *cells,
		      json_t **conditions)
{
	const json_t *spec = json_object_get(job, "spec");
	const json_t *st = json_object_get(job, "status");
	const json_t *conds = json_object_get(st, "conditions");
	const json_t *completions = json_object_get(spec, "completions");
	long long succeeded = jint(json_object_get(st, "succeeded"));
	long long parallelism = jint(json_object_get(spec, "parallelism"));
	int64_t start, end;
	char buf[64];
	const char *status;
	char *sel;

	(void)conditions;
	add_str(cells, obj_name(job));
	/* 1. status, in printJob's order */
	if (has_condition(conds, "Complete"))
		status = "Complete";
	else if (has_condition(conds, "Failed"))
		status = "Failed";
	else if (JX_DIG(job, "metadata", "deletionTimestamp") &&
		 !json_is_null(JX_DIG(job, "metadata", "deletionTimestamp")))
		status = "Terminating";
	else if (has_condition(conds, "Suspended"))
		status = "Suspended";
	else if (has_condition(conds, "FailureTarget"))
		status = "FailureTarget";
	else
		status = "Running";
	add_str(cells, status);
	/* 2. completions */
	if (json_is_number(completions))
		snprintf(buf, sizeof(buf), "%lld/%lld", succeeded, jint(completions));
	else if (parallelism > 1)
		snprintf(buf, sizeof(buf), "%lld/1 of %lld", succeeded, parallelism);
	else
		snprintf(buf, sizeof(buf), "%lld/1", succeeded);
	add_str(cells, buf);
	/* 3. duration: completion (or now) - start; blank before start */
	buf[0] = '\0';
	if (get_time(json_object_get(st, "startTime"), &start)) {
		if (!get_time(json_object_get(st, "completionTime"), &end))
			end = now_ms;
		table_age(end, start, buf, sizeof(buf));
	}
	add_str(cells, buf);
	add_since(cells, obj_created(job), now_ms);
	add_containers(cells, JX_DIG(spec, "template", "spec", "containers"));
	sel = format_label_selector(json_object_get(spec, "selector"));
	add_str(cells, sel);
	free(sel);
}

static bool restartable_init(const json_t *spec, const char *name)
{
	size_t i;
	const json_t *c;

	json_array_foreach(json_object_get(spec, "initContainers"), i, c)
		if (!strcmp(jx_text(c, "name"), name))
			return !strcmp(jx_text(c, "restartPolicy"), "Always");
	return false;
}

/* lastTerminationState bookkeeping: keeps the latest finishedAt. */
static void note_finished(const json_t *cs, int64_t *last, bool *have)
{
	const json_t *term = JX_DIG(cs, "lastState", "terminated");
	int64_t t;

	if (!json_is_object(term) ||
	    !get_time(json_object_get(term, "finishedAt"), &t))
		return;
	if (!*have || *last < t) {
		*last = t;
		*have = true;
	}
}

static json_t *pod_row_condition(const char *reason, const char *message)
{
	json_t *c = json_object();

	json_object_set_new(c, "type", json_string("Completed"));
	json_object_set_new(c, "status", json_string("True"));
	json_object_set_new(c, "reason", json_string(reason));
	json_object_set_new(c, "message", json_string(message));
	return c;
}

/* printPod, step for step. */
static void cells_pod(const json_t *pod, int64_t now_ms, json_t *cells,
		      json_t **conditions)
{
	const json_t *spec = json_object_get(pod, "spec");
	const json_t *st = json_object_get(pod, "status");
	const json_t *conds = json_object_get(st, "conditions");
	const json_t *ics = json_object_get(st, "initContainerStatuses");
	const json_t *cs = json_object_get(st, "containerStatuses");
	const json_t *c, *gates, *ips;
	const char *phase = jx_text(st, "phase");
	long long restarts = 0, rinit_restarts = 0, ready = 0;
	long long total = (long long)jsize(json_object_get(spec, "containers"));
	int64_t last = 0, last_rinit = 0;
	bool have_last = false, have_rinit = false, initializing = false;
	bool deleting;
	char *reason = xstrdup(phase);
	char buf[96];
	size_t i;

	if (*jx_text(st, "reason")) {
		free(reason);
		reason = xstrdup(jx_text(st, "reason"));
	}
	json_array_foreach(conds, i, c)
		if (!strcmp(jx_text(c, "type"), "PodScheduled") &&
		    !strcmp(jx_text(c, "reason"), "SchedulingGated")) {
			free(reason);
			reason = xstrdup("SchedulingGated");
		}
	if (!strcmp(phase, "Succeeded")) {
		*conditions = json_array();
		json_array_append_new(*conditions, pod_row_condition(
			"Succeeded", "The pod has completed successfully."));
	} else if (!strcmp(phase, "Failed")) {
		*conditions = json_array();
		json_array_append_new(*conditions,
				      pod_row_condition("Failed", "The pod failed."));
	}
	json_array_foreach(json_object_get(spec, "initContainers"), i, c)
		if (!strcmp(jx_text(c, "restartPolicy"), "Always"))
			total++;

	/* 1. init containers: stop at the first one not done */
	json_array_foreach(ics, i, c) {
		const json_t *term = JX_DIG(c, "state", "terminated");
		const json_t *wait = JX_DIG(c, "state", "waiting");
		bool restartable = restartable_init(spec, jx_text(c, "name"));
		long long rc = jint(json_object_get(c, "restartCount"));

		restarts += rc;
		note_finished(c, &last, &have_last);
		if (restartable) {
			rinit_restarts += rc;
			note_finished(c, &last_rinit, &have_rinit);
		}
		if (json_is_object(term) &&
		    jint(json_object_get(term, "exitCode")) == 0)
			continue;
		if (restartable && json_is_true(json_object_get(c, "started"))) {
			if (json_is_true(json_object_get(c, "ready")))
				ready++;
			continue;
		}
		free(reason);
		if (json_is_object(term)) {
			const char *r = jx_text(term, "reason");

			if (!*r && jint(json_object_get(term, "signal")))
				reason = xasprintf("Init:Signal:%lld",
						   jint(json_object_get(term, "signal")));
			else if (!*r)
				reason = xasprintf("Init:ExitCode:%lld",
						   jint(json_object_get(term, "exitCode")));
			else
				reason = xasprintf("Init:%s", r);
		} else if (json_is_object(wait) && *jx_text(wait, "reason") &&
			   strcmp(jx_text(wait, "reason"), "PodInitializing")) {
			reason = xasprintf("Init:%s", jx_text(wait, "reason"));
		} else {
			reason = xasprintf("Init:%zu/%zu", i,
					   jsize(json_object_get(spec, "initContainers")));
		}
		initializing = true;
		break;
	}

	/* 2. regular containers, last to first */
	if (!initializing || has_condition(conds, "Initialized")) {
		bool has_running = false;

		restarts = rinit_restarts;
		last = last_rinit;
		have_last = have_rinit;
		for (i = jsize(cs); i-- > 0;) {
			const json_t *x = json_array_get(cs, i);
			const json_t *term = JX_DIG(x, "state", "terminated");
			const json_t *wait = JX_DIG(x, "state", "waiting");

			restarts += jint(json_object_get(x, "restartCount"));
			note_finished(x, &last, &have_last);
			if (json_is_object(wait) && *jx_text(wait, "reason")) {
				free(reason);
				reason = xstrdup(jx_text(wait, "reason"));
			} else if (json_is_object(term) && *jx_text(term, "reason")) {
				free(reason);
				reason = xstrdup(jx_text(term, "reason"));
			} else if (json_is_object(term)) {
				free(reason);
				if (jint(json_object_get(term, "signal")))
					reason = xasprintf("Signal:%lld",
							   jint(json_object_get(term, "signal")));
				else
					reason = xasprintf("ExitCode:%lld",
							   jint(json_object_get(term, "exitCode")));
			} else if (json_is_true(json_object_get(x, "ready")) &&
				   json_is_object(JX_DIG(x, "state", "running"))) {
				has_running = true;
				ready++;
			}
		}
		if (!strcmp(reason, "Completed") && has_running) {
			bool pod_ready = has_condition(conds, "Ready");

			free(reason);
			reason = xstrdup(pod_ready ? "Running" : "NotReady");
		}
	}

	/* 3. deletion */
	deleting = JX_DIG(pod, "metadata", "deletionTimestamp") &&
		   !json_is_null(JX_DIG(pod, "metadata", "deletionTimestamp"));
	if (deleting && !strcmp(jx_text(st, "reason"), "NodeLost")) {
		free(reason);
		reason = xstrdup("Unknown");
	} else if (deleting && strcmp(phase, "Succeeded") &&
		   strcmp(phase, "Failed")) {
		free(reason);
		reason = xstrdup("Terminating");
	}

	add_str(cells, obj_name(pod));
	snprintf(buf, sizeof(buf), "%lld/%lld", ready, total);
	add_str(cells, buf);
	add_str(cells, reason);
	if (restarts != 0 && have_last) {
		char age[32];

		table_age(now_ms, last, age, sizeof(age));
		snprintf(buf, sizeof(buf), "%lld (%s ago)", restarts, age);
	} else {
		snprintf(buf, sizeof(buf), "%lld", restarts);
	}
	add_str(cells, buf);
	add_since(cells, obj_created(pod), now_ms);

	/* 4. wide columns */
	ips = json_object_get(st, "podIPs");
	{
		const char *ip = jsize(ips) ? jx_text(json_array_get(ips, 0), "ip") :
					      jx_text(st, "podIP");
		const char *node = jx_text(spec, "nodeName");
		const char *nom = jx_text(st, "nominatedNodeName");

		add_str(cells, *ip ? ip : "<none>");
		add_str(cells, *node ? node : "<none>");
		add_str(cells, *nom ? nom : "<none>");
	}
	gates = json_object_get(spec, "readinessGates");
	if (jsize(gates)) {
		long long ok = 0;
		const json_t *g;

		json_array_foreach(gates, i, g)
			if (has_condition(conds, jx_text(g, "conditionType")))
				ok++;
		snprintf(buf, sizeof(buf), "%lld/%zu", ok, jsize(gates));
		add_str(cells, buf);
	} else {
		add_str(cells, "<none>");
	}
	free(reason);
}

static void cells_namespace(const json_t *ns, int64_t now_ms, json_t *cells,
			    json_t **conditions)
{
	(void)conditions;
	add_str(cells, obj_name(ns));
	add_str(cells, text_of(JX_DIG(ns, "status", "phase")));
	add_since(cells, obj_created(ns), now_ms);
}

/* translateMicroTimestampSince / translateTimestampSince of one field. */
static void event_time(const json_t *ts, int64_t now_ms, char *buf, size_t n)
{
	since(ts, now_ms, buf, n);
}

static void trim_space(char *s)
{
	size_t n = strlen(s), b = 0;

	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[b]))
		b++;
	memmove(s, s + b, n - b + 1);
}

static void cells_event(const json_t *ev, int64_t now_ms, json_t *cells,
			json_t **conditions)
{
	const json_t *io = json_object_get(ev, "involvedObject");
	const json_t *series = json_object_get(ev, "series");
	char first[32], last[32];
	const char *comp, *host;
	long long count = jint(json_object_get(ev, "count"));
	char *target, *src, *msg, *p;
	int64_t t;

	(void)conditions;
	if (get_time(json_object_get(ev, "firstTimestamp"), &t))
		event_time(json_object_get(ev, "firstTimestamp"), now_ms, first,
			   sizeof(first));
	else
		event_time(json_object_get(ev, "eventTime"), now_ms, first,
			   sizeof(first));
	if (get_time(json_object_get(ev, "lastTimestamp"), &t))
		event_time(json_object_get(ev, "lastTimestamp"), now_ms, last,
			   sizeof(last));
	else
		snprintf(last, sizeof(last), "%s", first);
	if (json_is_object(series)) {
		event_time(json_object_get(series, "lastObservedTime"), now_ms, last,
			   sizeof(last));
		count = jint(json_object_get(series, "count"));
	} else if (count == 0) {
		count = 1; /* singleton events of the new API carry none */
	}
	target = *jx_text(io, "name") ?
		xasprintf("%s/%s", jx_text(io, "kind"), jx_text(io, "name")) :
		xstrdup(jx_text(io, "kind"));
	for (p = target; *p && *p != '/'; p++)
		*p = (char)tolower((unsigned char)*p);
	comp = text_of(JX_DIG(ev, "source", "component"));
	if (!*comp)
		comp = jx_text(ev, "reportingComponent");
	host = text_of(JX_DIG(ev, "source", "host"));
	if (!*host)
		host = jx_text(ev, "reportingInstance");
	src = *host ? xasprintf("%s, %s", comp, host) : xstrdup(comp);
	msg = xstrdup(jx_text(ev, "message"));
	trim_space(msg);

	add_str(cells, last);
	add_str(cells, jx_text(ev, "type"));
	add_str(cells, jx_text(ev, "reason"));
	add_str(cells, target);
	add_str(cells, jx_text(io, "fieldPath"));
	add_str(cells, src);
	add_str(cells, msg);
	add_str(cells, first);
	add_int(cells, count);
	add_str(cells, obj_name(ev));
	free(target);
	free(src);
	free(msg);
}

/* rest.defaultTableConvertor: the raw creation time, RFC 3339 UTC. */
static void cells_default(const json_t *obj, int64_t now_ms, json_t *cells,
			  json_t **conditions)
{
	char buf[TIMESTAMP_BUF];
	int64_t t;

	(void)now_ms;
	(void)conditions;
	add_str(cells, obj_name(obj));
	if (get_time(obj_created(obj), &t))
		add_str(cells, timestamp_format(t, buf, sizeof(buf)));
	else
		add_str(cells, "0001-01-01T00:00:00Z");
}

static void cells_configmap(const json_t *cm, int64_t now_ms, json_t *cells,
			    json_t **conditions)
{
	(void)conditions;
	add_str(cells, obj_name(cm));
	add_int(cells, (long long)(jsize(json_object_get(cm, "data")) +
				   jsize(json_object_get(cm, "binaryData"))));
	add_since(cells, obj_created(cm), now_ms);
}

static void cells_secret(const json_t *s, int64_t now_ms, json_t *cells,
			 json_t **conditions)
{
	(void)conditions;
	add_str(cells, obj_name(s));
	add_str(cells, jx_text(s, "type"));
	add_int(cells, (long long)jsize(json_object_get(s, "data")));
	add_since(cells, obj_created(s), now_ms);
}

/* loadBalancerStatusStringer (wide: never clipped): unique ingress IPs
 * or hostnames, sorted. New string. */
static char *lb_ingress(const json_t *svc)
{
	const json_t *ing = JX_DIG(svc, "status", "loadBalancer", "ingress");
	const char **v = xcalloc(jsize(ing) + 1, sizeof(*v));
	size_t n = 0, i;
	const json_t *x;
	struct sbuf b = SBUF_INIT;

	json_array_foreach(ing, i, x) {
		const char *s = *jx_text(x, "ip") ? jx_text(x, "ip") :
							jx_text(x, "hostname");

		if (*s)
			v[n++] = s;
	}
	qsort(v, n, sizeof(*v), svec_cmp);
	for (i = 0; i < n; i++) {
		if (i && !strcmp(v[i], v[i - 1]))
			continue;
		if (b.len)
			sbuf_adds(&b, ",");
		sbuf_adds(&b, v[i]);
	}
	free(v);
	return sbuf_detach(&b, NULL);
}

static char *join_strings(const json_t *arr, const char *sep)
{
	struct sbuf b = SBUF_INIT;
	size_t i;
	const json_t *x;

	json_array_foreach(arr, i, x) {
		if (i)
			sbuf_adds(&b, sep);
		sbuf_adds(&b, text_of(x));
	}
	return sbuf_detach(&b, NULL);
}

/* getServiceExternalIP. A missing type reads as ClusterIP: the real
 * server always has it defaulted. New string. */
static char *service_external_ip(const json_t *svc, const char *type)
{
	const json_t *ext = JX_DIG(svc, "spec", "externalIPs");

	if (!strcmp(type, "ClusterIP") || !strcmp(type, "NodePort"))
		return jsize(ext) ? join_strings(ext, ",") : xstrdup("<none>");
	if (!strcmp(type, "LoadBalancer")) {
		char *lb = lb_ingress(svc);
		char *out;

		if (jsize(ext)) {
			char *e = join_strings(ext, ",");

			out = *lb ? xasprintf("%s,%s", lb, e) : xstrdup(e);
			free(e);
			free(lb);
			return out;
		}
		if (*lb)
			return lb;
		free(lb);
		return xstrdup("<pending>");
	}
	if (!strcmp(type, "ExternalName"))
		return xstrdup(text_of(JX_DIG(svc, "spec", "externalName")));
	return xstrdup("<unknown>");
}

static void cells_service(const json_t *svc, int64_t now_ms, json_t *cells,
			  json_t **conditions)
{
	const json_t *spec = json_object_get(svc, "spec");
	const char *type = *jx_text(spec, "type") ? jx_text(spec, "type") :
						     "ClusterIP";
	const json_t *ips = json_object_get(spec, "clusterIPs");
	const char *cip = jsize(ips) ? text_of(json_array_get(ips, 0)) :
				       jx_text(spec, "clusterIP");
	struct sbuf ports = SBUF_INIT;
	const json_t *pt;
	size_t i;
	char *ext, *sel;

	(void)conditions;
	json_array_foreach(json_object_get(spec, "ports"), i, pt) {
		const char *proto = *jx_text(pt, "protocol") ?
			jx_text(pt, "protocol") : "TCP";
		long long np = jint(json_object_get(pt, "nodePort"));
		char b[96];

		if (np > 0)
			snprintf(b, sizeof(b), "%lld:%lld/%s", jint(json_object_get(pt, "port")),
				 np, proto);
		else
			snprintf(b, sizeof(b), "%lld/%s",
				 jint(json_object_get(pt, "port")), proto);
		if (i)
			sbuf_adds(&ports, ",");
		sbuf_adds(&ports, b);
	}
	ext = service_external_ip(svc, type);
	add_str(cells, obj_name(svc));
	add_str(cells, type);
	add_str(cells, *cip ? cip : "<none>");
	add_str(cells, ext);
	add_str(cells, ports.len ? ports.buf : "<none>");
	add_since(cells, obj_created(svc), now_ms);
	sel = format_labels(json_object_get(spec, "selector"));
	add_str(cells, sel);
	free(sel);
	free(ext);
	sbuf_release(&ports);
}

static void cells_priorityclass(const json_t *pc, int64_t now_ms,
				json_t *cells, json_t **conditions)
{
	(void)conditions;
	add_str(cells, obj_name(pc));
	add_int(cells, jint(json_object_get(pc, "value")));
	json_array_append_new(cells,
			      json_boolean(json_is_true(json_object_get(pc, "globalDefault"))));
	add_since(cells, obj_created(pc), now_ms);
	add_str(cells, jx_text(pc, "preemptionPolicy"));
}

static void cells_lease(const json_t *l, int64_t now_ms, json_t *cells,
			json_t **conditions)
{
	(void)conditions;
	add_str(cells, obj_name(l));
	add_str(cells, text_of(JX_DIG(l, "spec", "holderIdentity")));
	add_since(cells, obj_created(l), now_ms);
}

static void cells_webhookcfg(const json_t *w, int64_t now_ms, json_t *cells,
			     json_t **conditions)
{
	(void)conditions;
	add_str(cells, obj_name(w));
	add_int(cells, (long long)jsize(json_object_get(w, "webhooks")));
	add_since(cells, obj_created(w), now_ms);
}

#define PRINTER(kind, cols, fn) { kind, cols, sizeof(cols) / sizeof(cols[0]), fn }

static const struct printer printers[] = {
	PRINTER("Job", job_cols, cells_job),
	PRINTER("Pod", pod_cols, cells_pod),
	PRINTER("Namespace", namespace_cols, cells_namespace),
	PRINTER("Event", event_cols, cells_event),
	PRINTER("CustomResourceDefinition", default_cols, cells_default),
	PRINTER("ConfigMap", configmap_cols, cells_configmap),
	PRINTER("Secret", secret_cols, cells_secret),
	PRINTER("Service", service_cols, cells_service),
	PRINTER("PriorityClass", priorityclass_cols, cells_priorityclass),
	PRINTER("Lease", lease_cols, cells_lease),
	PRINTER("MutatingWebhookConfiguration", webhookcfg_cols, cells_webhookcfg),
	PRINTER("ValidatingWebhookConfiguration", webhookcfg_cols,
		cells_webhookcfg),
};

/* Built-in kinds without a printer get apiserver's default convertor. */
static const struct printer default_printer =
	PRINTER("", default_cols, cells_default);

static const struct printer *printer_for(const char *kind)
{
	for (size_t i = 0; i < sizeof(printers) / sizeof(printers[0]); i++)
		if (!strcmp(printers[i].kind, kind))
			return &printers[i];
	return &default_printer;
}

/* ------------------------------------------------------------------ */
/* Columns, rows, tables.                                              */

static json_t *coldef_json(const char *name, const char *type,
			   const char *format, const char *desc,
			   long long priority)
{
	json_t *c = json_object();

	json_object_set_new(c, "name", json_string(name));
	json_object_set_new(c, "type", json_string(type));
	json_object_set_new(c, "format", json_string(format));
	json_object_set_new(c, "description", json_string(desc));
	json_object_set_new(c, "priority", json_integer((json_int_t)priority));
	return c;
}

static bool has_columns(const json_t *columns)
{
	return json_is_array(columns) && json_array_size(columns) > 0;
}

json_t *table_columns(const json_t *columns, const char *builtin_kind)
{
	json_t *out = json_array();
	size_t i;
	const json_t *col;

	if (builtin_kind) {
		const struct printer *p = printer_for(builtin_kind);

		for (i = 0; i < p->ncols; i++)
			json_array_append_new(out, coldef_json(
				p->cols[i].name, p->cols[i].type, p->cols[i].format,
				p->cols[i].desc, p->cols[i].priority));
		return out;
	}
	json_array_append_new(out, coldef_json("Name", "string", "name", D_NAME, 0));
	if (!has_columns(columns)) {
		/* serveDefaultColumnsIfEmpty */
		json_array_append_new(out, coldef_json("Age", "date", "", D_AGE, 0));
		return out;
	}
	json_array_foreach(columns, i, col) {
		const char *desc = jx_text(col, "description");
		char *dflt = NULL;

		if (!*desc)
			desc = dflt = xasprintf("Custom resource definition column (in JSONPath format): %s",
						jx_text(col, "jsonPath"));
		json_array_append_new(out, coldef_json(
			jx_text(col, "name"), jx_text(col, "type"),
			jx_text(col, "format"), desc,
			jint(json_object_get(col, "priority"))));
		free(dflt);
	}
	return out;
}


/* A "string" column: the value as JSONPath prints it (strings raw,
 * scalars with fmt.Fprint, objects and arrays as JSON). A JSON null
 * prints as text/template's "<no value>". */
static json_t *text_cell(const json_t *v)
{
	char b[64];

	switch (json_typeof(v)) {
	case JSON_STRING:
		return json_string(json_string_value(v));
	case JSON_INTEGER:
		snprintf(b, sizeof(b), "%lld", (long long)json_integer_value(v));
		return json_string(b);
	case JSON_REAL:
		goparse_format_float(json_real_value(v), b, sizeof(b));
		return json_string(b);
	case JSON_TRUE:
		return json_string("true");
	case JSON_FALSE:
		return json_string("false");
	case JSON_NULL:
		return json_string("<no value>");
	default: {
		char *s = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
		json_t *j = json_string(s ? s : "");

		free(s);
		return j;
	}
	}
}

/* cellForJSONValue (and the string branch before it). */
static json_t *crd_cell(const json_t *obj, const char *type, const char *path,
			int64_t now_ms)
{
	json_t *v = jsonpath_eval(obj, path);
	json_t *cell = NULL;

	if (!v)
		return json_null();
	if (!strcmp(type, "string")) {
		cell = text_cell(v);
	} else if (json_is_null(v)) {
		cell = NULL;
	} else if (!strcmp(type, "integer")) {
		if (json_is_integer(v))
			cell = json_integer(json_integer_value(v));
		else if (json_is_real(v))
			cell = json_integer((json_int_t)json_real_value(v));
	} else if (!strcmp(type, "number")) {
		if (json_is_number(v))
			cell = json_real(json_number_value(v));
	} else if (!strcmp(type, "boolean")) {
		if (json_is_boolean(v))
			cell = json_boolean(json_is_true(v));
	} else if (!strcmp(type, "date")) {
		if (json_is_string(v)) {
			const char *s = json_string_value(v);
			int64_t t;
			char b[32];

			if (!*s || !strcmp(s, "null"))
				cell = json_string("<unknown>");
			else if (timestamp_parse(s, &t))
				cell = json_string("<invalid>");
			else if (t == ZERO_TIME_MS)
				cell = json_string("<unknown>");
			else
				cell = json_string(table_age(now_ms, t, b, sizeof(b)));
		}
	}
	json_decref(v);
	return cell ? cell : json_null();
}

static json_t *row_object(const json_t *obj, enum table_object inc)
{
	json_t *o;
	const json_t *meta;

	switch (inc) {
	case TABLE_OBJECT_FULL:
		return json_deep_copy(obj);
	case TABLE_OBJECT_NONE:
		return json_null();
	case TABLE_OBJECT_METADATA:
	default:
		o = json_object();
		meta = json_object_get(obj, "metadata");
		json_object_set_new(o, "kind", json_string("PartialObjectMetadata"));
		json_object_set_new(o, "apiVersion", json_string("meta.k8s.io/v1"));
		json_object_set_new(o, "metadata", json_is_object(meta) ?
				    json_deep_copy(meta) : json_object());
		return o;
	}
}

json_t *table_row(const json_t *obj, const json_t *columns,
		  const char *builtin_kind, enum table_object inc,
		  int64_t now_ms)
{
	json_t *row = json_object(), *cells = json_array(), *conds = NULL;
	size_t i;
	const json_t *col;

	if (builtin_kind) {
		printer_for(builtin_kind)->cells(obj, now_ms, cells, &conds);
	} else {
		add_str(cells, obj_name(obj));
		if (!has_columns(columns)) {
			json_array_append_new(cells, crd_cell(obj, "date",
				".metadata.creationTimestamp", now_ms));
		} else {
			json_array_foreach(columns, i, col)
				json_array_append_new(cells, crd_cell(obj,
					jx_text(col, "type"),
					jx_text(col, "jsonPath"), now_ms));
		}
	}
	json_object_set_new(row, "cells", cells);
	if (conds)
		json_object_set_new(row, "conditions", conds);
	json_object_set_new(row, "object", row_object(obj, inc));
	return row;
}

json_t *table_build(const json_t *items, const json_t *columns,
		    const char *builtin_kind, enum table_object inc,
		    bool with_columns, const json_t *list_meta,
		    int64_t now_ms)
{
	json_t *t = json_object(), *rows = json_array();
	size_t i;
	const json_t *it;

	json_object_set_new(t, "kind", json_string("Table"));
	json_object_set_new(t, "apiVersion", json_string("meta.k8s.io/v1"));
	json_object_set_new(t, "metadata", json_is_object(list_meta) ?
			    json_deep_copy(list_meta) : json_object());
	json_object_set_new(t, "columnDefinitions", with_columns ?
			    table_columns(columns, builtin_kind) : json_null());
	if (json_is_object(items)) {
		json_array_append_new(rows, table_row(items, columns, builtin_kind,
						      inc, now_ms));
	} else {
		json_array_foreach(items, i, it)
			json_array_append_new(rows, table_row(it, columns,
							      builtin_kind, inc,
							      now_ms));
	}
	json_object_set_new(t, "rows", rows);
	return t;
}
