/*
 * config_yaml: the YAML tree of a Configuration file, its scalars as
 * Kueue's loader reads them, and Go's time.Duration text.
 *
 * DESIGN
 * libyaml's event parser builds a flat array of nodes, each with its
 * line and column, so every message can say where its value is. Aliases
 * are indexes of the anchored node, never copies; the walk counts the
 * nodes it visits (CFG_MAX_VISITS) so aliases cannot make it quadratic.
 * Only the first document that is not empty is kept; a second one is an
 * error (Kueue would silently ignore it).
 *
 * Scalars resolve as go-yaml v2 (YAML 1.1) resolves them, since Kueue's
 * loader is sigs.k8s.io/yaml feeding encoding/json: quoted and block
 * scalars and !!str are strings; `yes`, `on`, `y` are booleans; `0x1F`
 * and `017` are integers; `1e3` is a float; `~`, `null` and the empty
 * scalar are null. Mapping keys become strings as sigs.k8s.io/yaml makes
 * them ("true", "31"). `<<` merges expand in place. A deliberate
 * deviation: !!binary values are taken as written.
 *
 * Owns nothing between calls; never logs; the only module with libyaml.
 */
#include "config/config_int.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/alloc.h"
#include "config/yamlplain.h"

#define TAG_PREFIX "tag:yaml.org,2002:"

/* ------------------------------------------------------------------ */
/* Problems and positions */

void config_mark(struct cfg_ctx *x, const struct cfg_node *n, size_t line,
		 size_t col)
{
	if (x->fe.n > x->fe_cap) {
		size_t cap = x->fe_cap;

		XGROW(x->fe_line, cap, x->fe.n);
		x->fe_col = xrealloc(x->fe_col, cap * sizeof(*x->fe_col));
		x->fe_cap = cap;
	}
	for (; x->fe_marked < x->fe.n; x->fe_marked++) {
		x->fe_line[x->fe_marked] = n ? n->line : line;
		x->fe_col[x->fe_marked] = n ? n->col : col;
	}
}

void config_note_pos(struct cfg_ctx *x, const char *path,
		     const struct cfg_node *n)
{
	struct cfg_pos *p;

	XGROW(x->pos, x->cappos, x->npos + 1);
	p = &x->pos[x->npos++];
	p->path = xstrdup(path);
	p->line = n->line;
	p->col = n->col;
}

bool config_visit(struct cfg_ctx *x, const struct cfg_node *n)
{
	if (++x->visits <= CFG_MAX_VISITS)
		return true;
	if (!x->too_many_visits) {
		x->too_many_visits = true;
		fe_add(&x->fe, FE_FORBIDDEN, "", NULL, false,
		       "more than %zu nodes to read after alias expansion",
		       CFG_MAX_VISITS);
		config_mark(x, n, 0, 0);
	}
	return false;
}

/* ------------------------------------------------------------------ */
/* The tree, from libyaml's events */

struct anchor {
	char *name; /* owned */
	size_t node;
};

struct build {
	struct cfg_ctx *x;
	const char *text;      /* borrowed input, for reader-error positions */
	size_t len;
	size_t *stack;         /* owned; open collections */
	size_t n, cap;
	struct anchor *an;     /* owned; anchors of the current document */
	size_t nan, capan;
	size_t doc_root;       /* root of the current document, 0 = none */
};

static int whole_file(struct cfg_ctx *x, size_t line, size_t col,
		      const char *fmt, ...) PRINTF_LIKE(4, 5);

/* A problem of the whole file: path "", the message as given. */
static int whole_file(struct cfg_ctx *x, size_t line, size_t col,
		      const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	utf8_trim_tail(msg);
	XGROW(x->fe.v, x->fe.cap, x->fe.n + 1);
	x->fe.v[x->fe.n].kind = FE_INVALID;
	x->fe.v[x->fe.n].path = xstrdup("");
	x->fe.v[x->fe.n].text = xstrdup(msg);
	x->fe.n++;
	config_mark(x, NULL, line, col);
	return -1;
}

static size_t new_node(struct build *b, enum cfg_kind kind, yaml_mark_t m)
{
	struct cfg_doc *d = &b->x->doc;
	struct cfg_node *n;

	if (d->n == 0)
		d->n = 1; /* index 0 means "no node" */
	XGROW(d->v, d->cap, d->n + 1);
	n = &d->v[d->n];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->line = m.line + 1;
	n->col = m.column + 1;
	return d->n++;
}

/* Hangs node idx under the open collection, or makes it the root. */
static void attach(struct build *b, size_t idx)
{
	struct cfg_node *p;

	if (!b->n) {
		b->doc_root = idx;
		return;
	}
	p = &b->x->doc.v[b->stack[b->n - 1]];
	XGROW(p->kids, p->capkids, p->nkids + 1);
	p->kids[p->nkids++] = idx;
}

/* True when the next node attached is a mapping key. */
static bool next_is_key(const struct build *b)
{
	const struct cfg_node *p;

	if (!b->n)
		return false;
	p = &b->x->doc.v[b->stack[b->n - 1]];
	return p->kind == CFG_N_MAP && p->nkids % 2 == 0;
}

static void add_anchor(struct build *b, const yaml_char_t *name, size_t idx)
{
	if (!name)
		return;
	XGROW(b->an, b->capan, b->nan + 1);
	b->an[b->nan].name = xstrdup((const char *)name);
	b->an[b->nan].node = idx;
	b->nan++;
}

static void clear_anchors(struct build *b)
{
	for (size_t i = 0; i < b->nan; i++)
		free(b->an[i].name);
	b->nan = 0;
}

static int on_scalar(struct build *b, const yaml_event_t *ev)
{
	const char *tag = (const char *)ev->data.scalar.tag;
	bool key = next_is_key(b);
	size_t idx = new_node(b, CFG_N_SCALAR, ev->start_mark);
	struct cfg_node *n = &b->x->doc.v[idx];
	char shrt[64];

	n->text = xmalloc(ev->data.scalar.length + 1);
	memcpy(n->text, ev->data.scalar.value, ev->data.scalar.length);
	n->text[ev->data.scalar.length] = '\0';
	n->len = ev->data.scalar.length;
	if (tag && !strncmp(tag, TAG_PREFIX, strlen(TAG_PREFIX))) {
		snprintf(shrt, sizeof(shrt), "!!%s", tag + strlen(TAG_PREFIX));
		tag = shrt;
	}
	if (!tag) {
		n->style = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE
				   ? CFG_S_PLAIN : CFG_S_QUOTED;
		n->merge = key && n->style == CFG_S_PLAIN &&
			   !strcmp(n->text, "<<");
	} else {
		bool typed = !strcmp(tag, "!!int") || !strcmp(tag, "!!float") ||
			     !strcmp(tag, "!!bool") || !strcmp(tag, "!!null");

		n->tag = xstrdup(tag);
		n->style = typed ? CFG_S_TAGGED : CFG_S_QUOTED;
		n->merge = key && !strcmp(tag, "!!merge");
	}
	n->done = true;
	add_anchor(b, ev->data.scalar.anchor, idx);
	attach(b, idx);
	return 0;
}

static int on_alias(struct build *b, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;

	for (size_t i = b->nan; i-- > 0;) {
		if (strcmp(b->an[i].name, name))
			continue;
		if (!b->x->doc.v[b->an[i].node].done)
			return whole_file(b->x, ev->start_mark.line + 1,
					  ev->start_mark.column + 1,
					  "anchor '%s' value contains itself",
					  name);
		attach(b, b->an[i].node);
		return 0;
	}
	return whole_file(b->x, ev->start_mark.line + 1,
			  ev->start_mark.column + 1,
			  "unknown anchor '%s' referenced", name);
}

static int on_start(struct build *b, const yaml_event_t *ev, bool is_map)
{
	size_t idx = new_node(b, is_map ? CFG_N_MAP : CFG_N_SEQ,
			      ev->start_mark);
	const yaml_char_t *anchor = is_map ? ev->data.mapping_start.anchor
					   : ev->data.sequence_start.anchor;

	add_anchor(b, anchor, idx);
	attach(b, idx);
	XGROW(b->stack, b->cap, b->n + 1);
	b->stack[b->n++] = idx;
	return 0;
}

static bool is_null_node(const struct cfg_node *n)
{
	struct cfg_scalar sc;

	if (n->kind != CFG_N_SCALAR || n->style == CFG_S_QUOTED)
		return false;
	return config_resolve(NULL, n, "", &sc) == 0 && sc.type == CFG_SC_NULL;
}

/* A document ended: keep its root when it is the first that is not
 * null, as kubectl skips empty documents; refuse a second one. */
static int on_doc_end(struct build *b)
{
	struct cfg_doc *d = &b->x->doc;
	size_t r = b->doc_root;

	clear_anchors(b);
	b->doc_root = 0;
	if (!r || is_null_node(&d->v[r]))
		return 0;
	if (d->root)
		return whole_file(b->x, d->v[r].line, d->v[r].col,
				  "more than one YAML document: a "
				  "configuration file holds one");
	d->root = r;
	return 0;
}

static int parser_fail(struct build *b, const yaml_parser_t *p)
{
	const char *problem = p->problem ? p->problem : "unknown problem";

	if (p->error == YAML_MEMORY_ERROR) {
		fputs("cueue: out of memory in libyaml\n", stderr);
		abort();
	}
	if (p->error == YAML_READER_ERROR) {
		size_t line = 1, col = 1;
		size_t off = p->problem_offset < b->len ? p->problem_offset
							: b->len;

		for (size_t k = 0; k < off; k++) {
			if (b->text[k] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		return whole_file(b->x, line, col, "invalid YAML: %s", problem);
	}
	if (p->context)
		return whole_file(b->x, p->problem_mark.line + 1,
				  p->problem_mark.column + 1,
				  "invalid YAML: %s (%s at line %zu, "
				  "column %zu)",
				  problem, p->context,
				  p->context_mark.line + 1,
				  p->context_mark.column + 1);
	return whole_file(b->x, p->problem_mark.line + 1,
			  p->problem_mark.column + 1, "invalid YAML: %s",
			  problem);
}

int config_yaml_parse(struct cfg_ctx *x, const char *text, size_t len)
{
	struct build b = { x, text, len, NULL, 0, 0, NULL, 0, 0, 0 };
	yaml_parser_t p;
	bool end = false;
	int rc = 0;

	if (!yaml_parser_initialize(&p)) {
		fputs("cueue: out of memory in libyaml\n", stderr);
		abort();
	}
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	while (!end && rc == 0) {
		yaml_event_t ev;

		if (!yaml_parser_parse(&p, &ev)) {
			rc = parser_fail(&b, &p);
			break;
		}
		switch (ev.type) {
		case YAML_SCALAR_EVENT:
			rc = on_scalar(&b, &ev);
			break;
		case YAML_ALIAS_EVENT:
			rc = on_alias(&b, &ev);
			break;
		case YAML_SEQUENCE_START_EVENT:
			rc = on_start(&b, &ev, false);
			break;
		case YAML_MAPPING_START_EVENT:
			rc = on_start(&b, &ev, true);
			break;
		case YAML_SEQUENCE_END_EVENT:
		case YAML_MAPPING_END_EVENT:
			x->doc.v[b.stack[--b.n]].done = true;
			break;
		case YAML_DOCUMENT_END_EVENT:
			rc = on_doc_end(&b);
			break;
		case YAML_STREAM_END_EVENT:
			end = true;
			break;
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	clear_anchors(&b);
	free(b.an);
	free(b.stack);
	return rc;
}

void config_doc_release(struct cfg_doc *d)
{
	for (size_t i = 1; i < d->n; i++) {
		free(d->v[i].tag);
		free(d->v[i].text);
		free(d->v[i].kids);
	}
	free(d->v);
	memset(d, 0, sizeof(*d));
}

/* ------------------------------------------------------------------ */
/* Scalars: go-yaml v2's resolve() */

static void resolve_plain(const char *in, size_t n, struct cfg_scalar *out)
{
	static const enum cfg_sc of[] = {
		[YAMLPLAIN_NULL] = CFG_SC_NULL,   [YAMLPLAIN_BOOL] = CFG_SC_BOOL,
		[YAMLPLAIN_INT] = CFG_SC_INT,     [YAMLPLAIN_UINT] = CFG_SC_UINT,
		[YAMLPLAIN_FLOAT] = CFG_SC_FLOAT, [YAMLPLAIN_STR] = CFG_SC_STR,
	};
	struct yamlplain p;

	yamlplain_resolve(in, n, &p);
	memset(out, 0, sizeof(*out));
	out->type = of[p.type];
	out->b = p.b;
	out->i = p.i;
	out->u = p.u;
	out->d = p.d;
}

static const char *sc_tag(enum cfg_sc t)
{
	switch (t) {
	case CFG_SC_NULL: return "!!null";
	case CFG_SC_BOOL: return "!!bool";
	case CFG_SC_INT: case CFG_SC_UINT: return "!!int";
	case CFG_SC_FLOAT: return "!!float";
	case CFG_SC_STR: return "!!str";
	}
	return "?";
}

int config_resolve(struct cfg_ctx *x, const struct cfg_node *n,
		   const char *path, struct cfg_scalar *out)
{
	memset(out, 0, sizeof(*out));
	out->type = CFG_SC_STR;
	if (n->style == CFG_S_QUOTED)
		return 0;
	resolve_plain(n->text, n->len, out);
	if (n->style == CFG_S_PLAIN || !strcmp(n->tag, sc_tag(out->type)))
		return 0;
	if (!strcmp(n->tag, "!!float") && out->type == CFG_SC_INT) {
		out->type = CFG_SC_FLOAT;
		out->d = (double)out->i;
		return 0;
	}
	if (x) {
		fe_add(&x->fe, FE_INVALID, path, n->text, true,
		       "cannot decode %s as a %s", sc_tag(out->type), n->tag);
		config_mark(x, n, 0, 0);
	}
	return -1;
}

char *config_key_text(struct cfg_ctx *x, const struct cfg_node *k,
		      const char *path)
{
	struct cfg_scalar sc;
	char buf[64];

	if (k->kind != CFG_N_SCALAR) {
		fe_add(&x->fe, FE_INVALID, path, k->kind == CFG_N_MAP ? "object"
		       : "array", true, "a mapping key must be a string");
		config_mark(x, k, 0, 0);
		return NULL;
	}
	if (config_resolve(x, k, path, &sc) < 0)
		return NULL;
	switch (sc.type) {
	case CFG_SC_STR:
		if (memchr(k->text, '\0', k->len))
			break;
		return xstrdup(k->text);
	case CFG_SC_BOOL:
		return xstrdup(sc.b ? "true" : "false");
	case CFG_SC_INT:
		snprintf(buf, sizeof(buf), "%" PRId64, sc.i);
		return xstrdup(buf);
	case CFG_SC_FLOAT:
		if (isnan(sc.d))
			return xstrdup(".nan");
		if (isinf(sc.d))
			return xstrdup(sc.d > 0 ? ".inf" : "-.inf");
		snprintf(buf, sizeof(buf), "%g", (double)(float)sc.d);
		return xstrdup(buf);
	case CFG_SC_NULL:
	case CFG_SC_UINT:
		break;
	}
	fe_add(&x->fe, FE_INVALID, path, k->text, true,
	       "a mapping key must be a string");
	config_mark(x, k, 0, 0);
	return NULL;
}

struct pairs {
	size_t *v; /* key, value, key, value, ... */
	size_t n, cap;
};

static void merge_error(struct cfg_ctx *x, const struct cfg_node *n,
			const char *path)
{
	fe_add(&x->fe, FE_INVALID, path, "<<", true,
	       "map merge requires map or sequence of maps as the value");
	config_mark(x, n, 0, 0);
}

/* Appends m's pairs to out, expanding `<<` merges in place (merges of
 * merged maps too, to a small depth; a cycle needs an anchor that
 * contains itself, which the parser refuses). */
static void collect_pairs(struct cfg_ctx *x, const struct cfg_node *m,
			  const char *path, struct pairs *out, int depth)
{
	const struct cfg_node *v = x->doc.v;

	for (size_t i = 0; i + 1 < m->nkids; i += 2) {
		const struct cfg_node *val = &v[m->kids[i + 1]];

		if (!v[m->kids[i]].merge) {
			XGROW(out->v, out->cap, out->n + 2);
			out->v[out->n++] = m->kids[i];
			out->v[out->n++] = m->kids[i + 1];
			continue;
		}
		if (depth >= 16 || !config_visit(x, val))
			continue;
		if (val->kind == CFG_N_MAP) {
			collect_pairs(x, val, path, out, depth + 1);
			continue;
		}
		if (val->kind != CFG_N_SEQ) {
			merge_error(x, val, path);
			continue;
		}
		for (size_t s = 0; s < val->nkids; s++) {
			const struct cfg_node *mm = &v[val->kids[s]];

			if (mm->kind != CFG_N_MAP)
				merge_error(x, mm, path);
			else if (config_visit(x, mm))
				collect_pairs(x, mm, path, out, depth + 1);
		}
	}
}

size_t *config_map_pairs(struct cfg_ctx *x, const struct cfg_node *m,
			 const char *path, size_t *n_out)
{
	struct pairs p = { NULL, 0, 0 };

	collect_pairs(x, m, path, &p, 0);
	*n_out = p.n / 2;
	return p.v;
}

/* ------------------------------------------------------------------ */
/* Go's time.Duration */

/* time's quote(): ASCII as is (with \" and \\), every other byte \xNN. */
static void go_time_quote(const char *s, char *out, size_t n)
{
	size_t o = 0;

	if (n < 8)
		return;
	out[o++] = '"';
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (o + 6 >= n)
			break;
		if (*p >= 0x80 || *p < 0x20) {
			o += (size_t)snprintf(out + o, n - o, "\\x%02x", *p);
		} else {
			if (*p == '"' || *p == '\\')
				out[o++] = '\\';
			out[o++] = (char)*p;
		}
	}
	out[o++] = '"';
	out[o] = '\0';
}

static int dur_fail(const char *orig, char *msg, size_t msgsz)
{
	char q[96];

	go_time_quote(orig, q, sizeof(q));
	snprintf(msg, msgsz, "time: invalid duration %s", q);
	return -1;
}

static const struct {
	const char *name;
	uint64_t ns;
} dur_units[] = {
	{ "ns", 1 }, { "us", 1000 }, { "\xc2\xb5s", 1000 },
	{ "\xce\xbcs", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	{ "m", 60ull * 1000000000 }, { "h", 3600ull * 1000000000 },
};

int config_parse_go_duration(const char *orig, int64_t *ns, char *msg,
			     size_t msgsz)
{
	const char *s = orig;
	uint64_t d = 0;
	bool neg = false;

	if (*s == '-' || *s == '+') {
		neg = *s == '-';
		s++;
	}
	if (!strcmp(s, "0")) {
		*ns = 0;
		return 0;
	}
	if (!*s)
		return dur_fail(orig, msg, msgsz);
	while (*s) {
		uint64_t v = 0, f = 0, unit = 0;
		double scale = 1;
		const char *start = s, *u;
		bool pre, post = false, overflow = false;
		size_t ulen;

		if (!(*s == '.' || (*s >= '0' && *s <= '9')))
			return dur_fail(orig, msg, msgsz);
		for (; *s >= '0' && *s <= '9'; s++) {   /* leadingInt */
			if (v > (1ull << 63) / 10)
				return dur_fail(orig, msg, msgsz);
			v = v * 10 + (uint64_t)(*s - '0');
			if (v > 1ull << 63)
				return dur_fail(orig, msg, msgsz);
		}
		pre = s != start;
		if (*s == '.') {                         /* leadingFraction */
			const char *fs = ++s;

			for (; *s >= '0' && *s <= '9'; s++) {
				uint64_t y;

				if (overflow)
					continue;
				if (f > (uint64_t)INT64_MAX / 10) {
					overflow = true;
					continue;
				}
				y = f * 10 + (uint64_t)(*s - '0');
				if (y > 1ull << 63) {
					overflow = true;
					continue;
				}
				f = y;
				scale *= 10;
			}
			post = s != fs;
		}
		if (!pre && !post)
			return dur_fail(orig, msg, msgsz);
		for (u = s; *s && *s != '.' && !(*s >= '0' && *s <= '9'); s++)
			;
		ulen = (size_t)(s - u);
		if (!ulen) {
			char q[96];

			go_time_quote(orig, q, sizeof(q));
			snprintf(msg, msgsz,
				 "time: missing unit in duration %s", q);
			return -1;
		}
		for (size_t k = 0; k < sizeof(dur_units) / sizeof(dur_units[0]);
		     k++)
			if (strlen(dur_units[k].name) == ulen &&
			    !memcmp(dur_units[k].name, u, ulen))
				unit = dur_units[k].ns;
		if (!unit) {
			char *un = xstrndup(u, ulen);
			char q1[64], q2[96];

			go_time_quote(un, q1, sizeof(q1));
			go_time_quote(orig, q2, sizeof(q2));
			snprintf(msg, msgsz, "time: unknown unit %s in "
				 "duration %s", q1, q2);
			free(un);
			return -1;
		}
		if (v > (1ull << 63) / unit)
			return dur_fail(orig, msg, msgsz);
		v *= unit;
		if (f > 0) {
			v += (uint64_t)((double)f * ((double)unit / scale));
			if (v > 1ull << 63)
				return dur_fail(orig, msg, msgsz);
		}
		d += v;
		if (d > 1ull << 63)
			return dur_fail(orig, msg, msgsz);
	}
	if (neg) {
		*ns = d == 1ull << 63 ? INT64_MIN : -(int64_t)d;
		return 0;
	}
	if (d > (uint64_t)INT64_MAX)
		return dur_fail(orig, msg, msgsz);
	*ns = (int64_t)d;
	return 0;
}

int64_t config_ns_to_ms(int64_t ns)
{
	int64_t ms = ns / 1000000, rem = ns % 1000000;

	if (rem > 0)
		ms++;
	else if (rem < 0)
		ms--;
	return ms;
}

/* fmtFrac: the fraction of v / 10^prec, trailing zeros and a bare point
 * left out, written backwards ending at buf[w]. */
static size_t fmt_frac(char *buf, size_t w, uint64_t *v, int prec)
{
	bool print = false;

	for (int i = 0; i < prec; i++) {
		unsigned digit = (unsigned)(*v % 10);

		print = print || digit != 0;
		if (print)
			buf[--w] = (char)('0' + digit);
		*v /= 10;
	}
	if (print)
		buf[--w] = '.';
	return w;
}

static size_t fmt_int(char *buf, size_t w, uint64_t v)
{
	if (v == 0) {
		buf[--w] = '0';
		return w;
	}
	for (; v > 0; v /= 10)
		buf[--w] = (char)('0' + v % 10);
	return w;
}

char *config_ms_string(int64_t ms, char *out, size_t n)
{
	char buf[48];
	size_t w = sizeof(buf) - 1;
	bool neg = ms < 0;
	uint64_t u = (neg ? 0 - (uint64_t)ms : (uint64_t)ms) * 1000000u;

	buf[w] = '\0';
	if (u < 1000000000u) {
		buf[--w] = 's';
		if (u == 0) {
			buf[--w] = '0';
		} else {
			/* ms and up only: a millisecond count has no finer
			 * part to show */
			buf[--w] = 'm';
			w = fmt_frac(buf, w, &u, 6);
			w = fmt_int(buf, w, u);
		}
	} else {
		buf[--w] = 's';
		w = fmt_frac(buf, w, &u, 9);
		w = fmt_int(buf, w, u % 60);
		u /= 60;
		if (u > 0) {
			buf[--w] = 'm';
			w = fmt_int(buf, w, u % 60);
			u /= 60;
			if (u > 0) {
				buf[--w] = 'h';
				w = fmt_int(buf, w, u);
			}
		}
	}
	if (neg)
		buf[--w] = '-';
	snprintf(out, n, "%s", buf + w);
	return out;
}

