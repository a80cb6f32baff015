/*
 * selector: label selectors (see selector.h): matching, the string form's
 * parser and printer, and metav1 LabelSelector validation.
 *
 * The parser follows k8s.io/apimachinery/pkg/labels/selector.go token for
 * token (lexer, contexts in which "in"/"notin" are plain identifiers, the
 * "(,)" empty-value rules, error texts), so that a ?labelSelector= accepted
 * or refused by a real API server is accepted or refused here with the same
 * words. Like Kubernetes it turns each value list into a sorted set and
 * sorts the requirements by key. "=" and "==" are stored as In with one
 * value and "!=" as NotIn with one value; the printer writes such
 * single-valued requirements back as "k=v" / "k!=v".
 *
 * Owns only what its structs say; no I/O.
 */
#include "model/selector.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/sbuf.h"
#include "model/goparse.h"
#include "model/names.h"
#include "model/svec.h"

void label_selector_init(struct label_selector *s)
{
	s->reqs = NULL;
	s->n = 0;
	s->cap = 0;
}

static void req_release(struct sel_req *r)
{
	free(r->key);
	svec_free(r->values, r->nvalues);
	r->key = NULL;
	r->values = NULL;
	r->nvalues = 0;
}

void label_selector_release(struct label_selector *s)
{
	for (size_t i = 0; i < s->n; i++)
		req_release(&s->reqs[i]);
	free(s->reqs);
	label_selector_init(s);
}

/* Appends a requirement that takes key and values (an owned array of
 * owned strings, NULL when nvalues is 0). */
static void add_take(struct label_selector *s, char *key, enum sel_op op,
		     char **values, size_t nvalues)
{
	struct sel_req *r;

	XGROW(s->reqs, s->cap, s->n + 1);
	r = &s->reqs[s->n++];
	r->key = key;
	r->op = op;
	r->values = values;
	r->nvalues = nvalues;
}

void label_selector_add(struct label_selector *s, const char *key,
			enum sel_op op, const char *const *values,
			size_t nvalues)
{
	add_take(s, xstrdup(key), op, svec_copy(values, nvalues), nvalues);
}

void label_selector_copy(struct label_selector *dst,
			 const struct label_selector *src)
{
	if (dst == src)
		return; /* releasing dst first would free src */
	label_selector_release(dst);
	for (size_t i = 0; i < src->n; i++) {
		const struct sel_req *r = &src->reqs[i];

		label_selector_add(dst, r->key, r->op,
				   (const char *const *)r->values, r->nvalues);
	}
}

/* Go's strconv.ParseInt(s, 10, 64), as Kubernetes reads Gt/Lt values. */
static bool parse_int64(const char *s, int64_t *out)
{
	return goparse_int(s, 64, out) == GOPARSE_OK;
}

static bool has_value(const struct sel_req *r, const char *v)
{
	for (size_t i = 0; i < r->nvalues; i++)
		if (!strcmp(r->values[i], v))
			return true;
	return false;
}

bool sel_req_matches(const struct sel_req *req, const struct smap *labels)
{
	const char *v = labels ? smap_get(labels, req->key) : NULL;
	int64_t have, want;

	switch (req->op) {
	case SEL_IN:
		return v && has_value(req, v);
	case SEL_NOT_IN:
		return !v || !has_value(req, v);
	case SEL_EXISTS:
		return v != NULL;
	case SEL_DOES_NOT_EXIST:
		return !v;
	case SEL_GT:
	case SEL_LT:
		/* Kubernetes: the label must exist and both sides must be
		 * integers, else no match. */
		if (!v || req->nvalues != 1 || !parse_int64(v, &have) ||
		    !parse_int64(req->values[0], &want))
			return false;
		return req->op == SEL_GT ? have > want : have < want;
	}
	return false;
}

bool label_selector_matches(const struct label_selector *s,
			    const struct smap *labels)
{
	for (size_t i = 0; i < s->n; i++)
		if (!sel_req_matches(&s->reqs[i], labels))
			return false;
	return true;
}

/* ---- the string form: lexer ---------------------------------------- */

enum tok {
	T_EOS,   /* end of string; literal "" */
	T_ID,    /* identifier: key or value */
	T_IN,    /* "in" */
	T_NOTIN, /* "notin" */
	T_NOT,   /* "!" */
	T_EQ,    /* "=" */
	T_DEQ,   /* "==" */
	T_NEQ,   /* "!=" */
	T_GT,    /* ">" */
	T_LT,    /* "<" */
	T_OPAR,  /* "(" */
	T_CPAR,  /* ")" */
	T_COMMA, /* "," */
};

struct token {
	enum tok t;
	const char *lit; /* borrowed from the input text */
	size_t len;
};

static bool is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static bool is_special(char c)
{
	return c && strchr("=!(),><", c) != NULL;
}

static enum tok special1(char c)
{
	switch (c) {
	case '=': return T_EQ;
	case '!': return T_NOT;
	case '(': return T_OPAR;
	case ')': return T_CPAR;
	case ',': return T_COMMA;
	case '>': return T_GT;
	default: return T_LT;
	}
}

/*
 * Splits text into tokens, always ending with T_EOS. Special symbols are
 * taken greedily as Kubernetes' scanSpecialSymbol does: "==" and "!=" are
 * the only two-character ones; anything else that is not whitespace runs
 * up to the next special symbol or blank and is an identifier (or the
 * keyword "in"/"notin"). Returns a new array of *n tokens.
 */
static struct token *lex(const char *text, size_t *n)
{
	struct token *v = NULL;
	size_t cap = 0, len = 0;
	const char *p = text;

	for (;;) {
		struct token t;

		while (is_ws(*p))
			p++;
		t.lit = p;
		if (!*p) {
			t.t = T_EOS;
			t.len = 0;
		} else if (is_special(*p)) {
			if ((p[0] == '=' || p[0] == '!') && p[1] == '=') {
				t.t = p[0] == '=' ? T_DEQ : T_NEQ;
				t.len = 2;
			} else {
				t.t = special1(*p);
				t.len = 1;
			}
		} else {
			const char *q = p;

			while (*q && !is_special(*q) && !is_ws(*q))
				q++;
			t.len = (size_t)(q - p);
			if (t.len == 2 && !strncmp(p, "in", 2))
				t.t = T_IN;
			else if (t.len == 5 && !strncmp(p, "notin", 5))
				t.t = T_NOTIN;
			else
				t.t = T_ID;
		}
		p += t.len;
		XGROW(v, cap, len + 1);
		v[len++] = t;
		if (t.t == T_EOS)
			break;
	}
	*n = len;
	return v;
}

/* ---- the string form: parser --------------------------------------- */

/* Where "in" and "notin" are keywords (after a key) or identifiers (as
 * keys and values), as Kubernetes' ParserContext. */
enum ctx { CTX_KEY_AND_OP, CTX_VALUES };

struct parser {
	struct token *toks; /* owned; ends with T_EOS */
	size_t n;
	size_t pos;         /* < n */
	char msg[ERR_MAX];  /* the current error, without the prefix */
};

static struct token lookahead(const struct parser *p, enum ctx c)
{
	struct token t = p->toks[p->pos];

	if (c == CTX_VALUES && (t.t == T_IN || t.t == T_NOTIN))
		t.t = T_ID;
	return t;
}

static struct token consume(struct parser *p, enum ctx c)
{
	struct token t = lookahead(p, c);

	if (p->pos + 1 < p->n) /* T_EOS is sticky */
		p->pos++;
	return t;
}

static int fail(struct parser *p, const char *fmt, const struct token *t)
{
	snprintf(p->msg, sizeof(p->msg), fmt, (int)t->len, t->lit);
	return -1;
}

/* A sorted set of owned strings, as Go's sets.String. */
struct valset {
	char **v; /* owned array of owned strings; sorted, unique */
	size_t n;
	size_t cap;
};

static void valset_release(struct valset *s)
{
	svec_free(s->v, s->n);
	s->v = NULL;
	s->n = s->cap = 0;
}

static void valset_insert(struct valset *s, const char *str, size_t len)
{
	char *v = xstrndup(str, len);
	size_t i = 0;

	for (; i < s->n; i++) {
		int c = strcmp(s->v[i], v);

		if (c == 0) {
			free(v);
			return;
		}
		if (c > 0)
			break;
	}
	XGROW(s->v, s->cap, s->n + 1);
	memmove(s->v + i + 1, s->v + i, (s->n - i) * sizeof(*s->v));
	s->v[i] = v;
	s->n++;
}

/* parseIdentifiersList: "(a,b)", "(a,)", "(,a)", "(a,,b)"; an empty slot
 * is the value "". */
static int parse_ident_list(struct parser *p, struct valset *vals)
{
	for (;;) {
		struct token t = consume(p, CTX_VALUES), t2;

		switch (t.t) {
		case T_ID:
			valset_insert(vals, t.lit, t.len);
			t2 = lookahead(p, CTX_VALUES);
			if (t2.t == T_COMMA)
				continue;
			if (t2.t == T_CPAR)
				return 0;
			return fail(p, "found '%.*s', expected: ',' or ')'",
				    &t2);
		case T_COMMA:
			if (vals->n == 0)
				valset_insert(vals, "", 0);
			t2 = lookahead(p, CTX_VALUES);
			if (t2.t == T_CPAR) {
				valset_insert(vals, "", 0);
				return 0;
			}
			if (t2.t == T_COMMA) {
				/* Kubernetes consumes the second comma here,
				 * so "(a,,)" then fails on the ")". */
				consume(p, CTX_VALUES);
				valset_insert(vals, "", 0);
			}
			continue;
		default:
			return fail(p, "found '%.*s', expected: ',', "
				    "or identifier", &t);
		}
	}
}

/* parseValues: "(" list ")"; "()" is the one value "". */
static int parse_values(struct parser *p, struct valset *vals)
{
	struct token t = consume(p, CTX_VALUES);

	if (t.t != T_OPAR)
		return fail(p, "found '%.*s' expected: '('", &t);
	t = lookahead(p, CTX_VALUES);
	switch (t.t) {
	case T_ID:
	case T_COMMA:
		if (parse_ident_list(p, vals) < 0)
			return -1;
		consume(p, CTX_VALUES); /* the ")" the list stopped at */
		return 0;
	case T_CPAR:
		consume(p, CTX_VALUES);
		valset_insert(vals, "", 0);
		return 0;
	default:
		return fail(p, "found '%.*s', expected: ',', ')' or identifier",
			    &t);
	}
}

/* parseExactValue: the value after =, ==, !=, >, <; may be empty. */
static int parse_exact_value(struct parser *p, struct valset *vals)
{
	struct token t = lookahead(p, CTX_VALUES);

	if (t.t == T_EOS || t.t == T_COMMA) {
		valset_insert(vals, "", 0);
		return 0;
	}
	t = consume(p, CTX_VALUES);
	if (t.t != T_ID)
		return fail(p, "found '%.*s', expected: identifier", &t);
	valset_insert(vals, t.lit, t.len);
	return 0;
}

/*
 * NewRequirement's checks on what the grammar accepted: Gt/Lt values must
 * be integers and every value a label value. Errors are rendered as a
 * field.ErrorList aggregate, paths and all.
 */
static int check_requirement(struct parser *p, const char *key,
			     enum sel_op op, const struct valset *vals)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	char path[64];
	char *agg;
	int64_t ignored;

	if (op == SEL_GT || op == SEL_LT) {
		for (size_t i = 0; i < vals->n; i++) {
			if (parse_int64(vals->v[i], &ignored))
				continue;
			snprintf(path, sizeof(path), "values[%zu]", i);
			fe_invalid(&fe, path, vals->v[i],
				   "for 'Gt', 'Lt' operators, "
				   "the value must be an integer");
		}
	}
	for (size_t i = 0; i < vals->n; i++) {
		char *vpath = xasprintf("values[%zu][%s]", i, key);

		check_label_value(&fe, vpath, vals->v[i]);
		free(vpath);
	}
	if (!fe.n)
		return 0;
	agg = field_errors_aggregate(&fe);
	snprintf(p->msg, sizeof(p->msg), "%s", agg);
	free(agg);
	field_errors_release(&fe);
	return -1;
}

/* parseRequirement: [!]KEY [op values]; appends to out. */
static int parse_requirement(struct parser *p, struct label_selector *out)
{
	struct valset vals = { NULL, 0, 0 };
	struct token t = consume(p, CTX_VALUES);
	bool negated = false, unary = false;
	enum sel_op op = SEL_EXISTS;
	char *key = NULL;
	int rc = -1;

	/* 1. the key, with "!" or no operator meaning DoesNotExist/Exists */
	if (t.t == T_NOT) {
		negated = true;
		t = consume(p, CTX_VALUES);
	}
	if (t.t != T_ID)
		return fail(p, "found '%.*s', expected: identifier", &t);
	key = xstrndup(t.lit, t.len);
	if (!is_qualified_name(key)) {
		struct field_errors fe = FIELD_ERRORS_INIT;

		/* Kubernetes passes a nil field.Path here, printed "<nil>". */
		check_qualified_name(&fe, "<nil>", key);
		snprintf(p->msg, sizeof(p->msg), "%s", fe.v[0].text);
		field_errors_release(&fe);
		goto out;
	}
	t = lookahead(p, CTX_VALUES);
	if (negated) {
		op = SEL_DOES_NOT_EXIST;
		unary = true;
	} else if (t.t == T_EOS || t.t == T_COMMA) {
		op = SEL_EXISTS;
		unary = true;
	}

	/* 2. the operator and its values */
	if (!unary) {
		t = consume(p, CTX_KEY_AND_OP);
		switch (t.t) {
		case T_IN: op = SEL_IN; break;
		case T_NOTIN: op = SEL_NOT_IN; break;
		case T_EQ: case T_DEQ: op = SEL_IN; break;
		case T_NEQ: op = SEL_NOT_IN; break;
		case T_GT: op = SEL_GT; break;
		case T_LT: op = SEL_LT; break;
		default:
			fail(p, "found '%.*s', expected: "
			     "in, notin, =, ==, !=, gt, lt", &t);
			goto out;
		}
		if (t.t == T_IN || t.t == T_NOTIN)
			rc = parse_values(p, &vals);
		else
			rc = parse_exact_value(p, &vals);
		if (rc < 0)
			goto out;
		rc = check_requirement(p, key, op, &vals);
		if (rc < 0)
			goto out;
	}

	/* 3. the requirement takes key and the sorted value set */
	add_take(out, key, op, vals.n ? vals.v : NULL, vals.n);
	if (!vals.n)
		free(vals.v);
	return 0;
out:
	free(key);
	valset_release(&vals);
	return -1;
}

/* Requirement order of the canonical form: key, then operator. */
static int req_cmp(const struct sel_req *a, const struct sel_req *b)
{
	int c = strcmp(a->key, b->key);

	if (c)
		return c;
	return (int)a->op - (int)b->op;
}

/* Stable insertion sort; selectors hold a handful of requirements. */
static void sort_reqs(struct sel_req *v, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct sel_req r = v[i];
		size_t j = i;

		for (; j > 0 && req_cmp(&v[j - 1], &r) > 0; j--)
			v[j] = v[j - 1];
		v[j] = r;
	}
}

int label_selector_parse(const char *text, struct label_selector *out,
			 struct err *err)
{
	struct label_selector tmp = LABEL_SELECTOR_INIT;
	struct parser p = { NULL, 0, 0, "" };
	int rc = -1;

	p.toks = lex(text ? text : "", &p.n);
	for (;;) {
		struct token t = lookahead(&p, CTX_VALUES);

		if (t.t == T_EOS)
			break;
		if (t.t != T_ID && t.t != T_NOT) {
			err_set(err, "found '%.*s', expected: !, identifier, "
				"or 'end of string'", (int)t.len, t.lit);
			goto out;
		}
		if (parse_requirement(&p, &tmp) < 0) {
			err_set(err, "unable to parse requirement: %s", p.msg);
			goto out;
		}
		t = consume(&p, CTX_VALUES);
		if (t.t == T_EOS)
			break;
		if (t.t != T_COMMA) {
			err_set(err, "found '%.*s', expected: ',' "
				"or 'end of string'", (int)t.len, t.lit);
			goto out;
		}
		t = lookahead(&p, CTX_VALUES);
		if (t.t != T_ID && t.t != T_NOT) {
			err_set(err, "found '%.*s', expected: "
				"identifier after ','", (int)t.len, t.lit);
			goto out;
		}
	}
	sort_reqs(tmp.reqs, tmp.n);
	label_selector_release(out);
	*out = tmp;
	label_selector_init(&tmp);
	rc = 0;
out:
	label_selector_release(&tmp);
	free(p.toks);
	return rc;
}

/* ---- printing ------------------------------------------------------ */

static void print_req(struct sbuf *b, const struct sel_req *r)
{
	const char **vals = NULL;
	bool set_form = (r->op == SEL_IN || r->op == SEL_NOT_IN) &&
			r->nvalues != 1;

	if (r->op == SEL_DOES_NOT_EXIST)
		sbuf_adds(b, "!");
	sbuf_adds(b, r->key);
	switch (r->op) {
	case SEL_EXISTS:
	case SEL_DOES_NOT_EXIST:
		return;
	case SEL_IN:
		sbuf_adds(b, set_form ? " in (" : "=");
		break;
	case SEL_NOT_IN:
		sbuf_adds(b, set_form ? " notin (" : "!=");
		break;
	case SEL_GT:
		sbuf_adds(b, ">");
		break;
	case SEL_LT:
		sbuf_adds(b, "<");
		break;
	}
	/* Values sorted on output without touching the selector. */
	if (r->nvalues) {
		vals = xcalloc(r->nvalues, sizeof(*vals));
		memcpy(vals, r->values, r->nvalues * sizeof(*vals));
		qsort(vals, r->nvalues, sizeof(*vals), svec_cmp);
	}
	for (size_t i = 0; i < r->nvalues; i++) {
		if (i)
			sbuf_adds(b, ",");
		sbuf_adds(b, vals[i]);
	}
	free(vals);
	if (set_form)
		sbuf_adds(b, ")");
}

char *label_selector_string(const struct label_selector *s)
{
	const struct sel_req **order = NULL;
	struct sbuf b = SBUF_INIT;

	if (s->n)
		order = xcalloc(s->n, sizeof(*order));
	for (size_t i = 0; i < s->n; i++) {
		/* insertion sort of pointers: stable, key then operator */
		size_t j = i;

		for (; j > 0 && req_cmp(order[j - 1], &s->reqs[i]) > 0; j--)
			order[j] = order[j - 1];
		order[j] = &s->reqs[i];
	}
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			sbuf_adds(&b, ",");
		print_req(&b, order[i]);
	}
	free(order);
	return sbuf_detach(&b, NULL);
}

/* ---- validation ---------------------------------------------------- */

void label_selector_validate(const struct label_selector *s, const char *path,
			     struct field_errors *fe)
{
	/*
	 * matchLabels entries arrive here as single-valued In requirements,
	 * indistinguishable from matchExpressions, so every requirement is
	 * reported at <path>.matchExpressions[i] (Kubernetes would say
	 * <path>.matchLabels for the former).
	 */
	for (size_t i = 0; i < s->n; i++) {
		const struct sel_req *r = &s->reqs[i];
		char *base = xasprintf("%s%smatchExpressions[%zu]", path,
				       *path ? "." : "", i);
		char *p = xasprintf("%s.values", base);

		switch (r->op) {
		case SEL_IN:
		case SEL_NOT_IN:
			if (!r->nvalues)
				fe_required(fe, p, "must be specified when "
					    "`operator` is 'In' or 'NotIn'");
			break;
		case SEL_EXISTS:
		case SEL_DOES_NOT_EXIST:
			if (r->nvalues)
				fe_forbidden(fe, p, "may not be specified when "
					     "`operator` is 'Exists' or "
					     "'DoesNotExist'");
			break;
		case SEL_GT:
		case SEL_LT:
			free(p);
			p = xasprintf("%s.operator", base);
			fe_invalid(fe, p, sel_op_name(r->op),
				   "not a valid selector operator");
			break;
		}
		free(p);
		p = xasprintf("%s.key", base);
		check_qualified_name(fe, p, r->key);
		free(p);
		for (size_t j = 0; j < r->nvalues; j++) {
			p = xasprintf("%s.values[%zu]", base, j);
			check_label_value(fe, p, r->values[j]);
			free(p);
		}
		free(base);
	}
}

/* ---- operator names ------------------------------------------------ */

static const char *const op_names[] = {
	[SEL_IN] = "In",
	[SEL_NOT_IN] = "NotIn",
	[SEL_EXISTS] = "Exists",
	[SEL_DOES_NOT_EXIST] = "DoesNotExist",
	[SEL_GT] = "Gt",
	[SEL_LT] = "Lt",
};

const char *sel_op_name(enum sel_op op)
{
	if ((size_t)op >= sizeof(op_names) / sizeof(op_names[0]))
		BUG("bad sel_op %d", (int)op);
	return op_names[op];
}

int sel_op_parse(const char *name, bool allow_gt_lt, enum sel_op *out)
{
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++) {
		if (!name || strcmp(name, op_names[i]))
			continue;
		if (!allow_gt_lt && (i == SEL_GT || i == SEL_LT))
			return -1;
		*out = (enum sel_op)i;
		return 0;
	}
	return -1;
}
