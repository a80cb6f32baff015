/*
 * cel: a recursive-descent compiler for CEL's grammar (cel-spec
 * syntax.md, the precedence of cel-go's CEL.g4) into a small AST, and a
 * tree-walking evaluator over jansson values with cel-go's runtime
 * semantics (cel-go interpreter/ and common/types/) for the subset cel.h
 * lists. Names are resolved and macros expanded at compile time, so
 * evaluation never meets an unknown name.
 *
 * DESIGN: values are json_t references (a CEL list is a JSON array, a
 * map a JSON object), so values taken from the object being validated are
 * shared, not copied. An evaluation error is a NULL result with the
 * message in the context; && || all exists keep the first error aside
 * and drop it when the other side decides the result, as cel-go does. A
 * cost-limit failure sets `fatal`, which nothing absorbs.
 */
#include "devserver/cel.h"

#include <jansson.h>
#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "base/text.h"

/* Parser recursion, tree depth and comprehension nesting: evaluation
 * and freeing recurse along the tree, so it may not be deeper. */
#define MAX_NEST 250
#define MSG_MAX 256
#define MAX_JSON_DEPTH 1024 /* deep equality stops (unequal) below this */

/* ------------------------------------------------------------------ */
/* The AST.                                                            */

enum nkind {
	N_LIT,      /* lit */
	N_SELF,
	N_OLDSELF,
	N_VAR,      /* comprehension variable `slot` */
	N_SELECT,   /* a.field */
	N_HAS,      /* has(a.field) */
	N_INDEX,    /* a[b] */
	N_LIST,     /* [items...] */
	N_NOT,      /* !a */
	N_NEG,      /* -a */
	N_AND,      /* a && b */
	N_OR,       /* a || b */
	N_COND,     /* a ? b : c */
	N_BIN,      /* a op b */
	N_SIZE,     /* size(a) */
	N_STRFN,    /* a.op(b): startsWith, endsWith, contains, matches */
	N_COMP,     /* a.op(var, b[, c]): the comprehension macros */
};

enum bop { B_EQ, B_NE, B_LT, B_LE, B_GT, B_GE, B_IN, B_ADD, B_SUB, B_MUL,
	   B_DIV, B_MOD };
enum sfn { F_STARTS, F_ENDS, F_CONTAINS, F_MATCHES };
enum comp { C_ALL, C_EXISTS, C_EXISTS_ONE, C_FILTER, C_MAP };

struct node {
	enum nkind k;
	size_t pos;           /* byte offset in the source, for messages */
	int op;               /* enum bop, sfn or comp */
	json_t *lit;          /* owned; N_LIT */
	char *field;          /* owned; N_SELECT, N_HAS */
	int slot;             /* N_VAR: which variable; N_COMP: its own */
	struct node *a, *b, *c; /* owned operands (N_COMP: range, predicate
				   or filter, transform) */
	struct node **items;  /* owned; N_LIST */
	size_t n;
	regex_t *re;          /* owned; F_MATCHES with a literal pattern */
	int depth;            /* levels of the tree from here; <= MAX_NEST */
};

struct cel_program {
	struct node *root;   /* owned */
	bool old_self;       /* references oldSelf */
	int nslots;          /* comprehension variables needed */
	enum cel_type type;
};

static void node_free(struct node *n)
{
	if (!n)
		return;
	json_decref(n->lit);
	free(n->field);
	node_free(n->a);
	node_free(n->b);
	node_free(n->c);
	for (size_t i = 0; i < n->n; i++)
		node_free(n->items[i]);
	free(n->items);
	if (n->re) {
		regfree(n->re);
		free(n->re);
	}
	free(n);
}

void cel_program_free(struct cel_program *p)
{
	if (!p)
		return;
	node_free(p->root);
	free(p);
}

bool cel_uses_old_self(const struct cel_program *p)
{
	return p && p->old_self;
}

enum cel_type cel_result_type(const struct cel_program *p)
{
	return p ? p->type : CEL_TYPE_DYN;
}

/* ------------------------------------------------------------------ */
/* Lexer.                                                              */

enum tok {
	T_EOF, T_INT, T_DOUBLE, T_STRING, T_IDENT, T_TRUE, T_FALSE, T_NULL,
	T_IN, T_QUESTION, T_COLON, T_OR, T_AND, T_NOT, T_EQ, T_NE, T_LT, T_LE,
	T_GT, T_GE, T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT, T_DOT,
	T_LBRACK, T_RBRACK, T_LPAREN, T_RPAREN, T_LBRACE, T_RBRACE, T_COMMA,
};

struct token {
	enum tok t;
	size_t pos;      /* byte offset of its first character */
	size_t len;      /* bytes in the source */
	uint64_t u;      /* T_INT: the magnitude */
	double d;        /* T_DOUBLE */
	char *s;         /* owned; T_STRING (decoded), T_IDENT */
	size_t slen;     /* T_STRING: bytes of s */
};

struct parser {
	const char *src;     /* borrowed; the expression */
	size_t len;          /* its bytes */
	size_t pos;          /* next byte to lex */
	struct token tk;     /* the current token */
	bool failed;         /* an error is recorded */
	size_t err_pos;      /* where (byte offset) */
	char err[MSG_MAX];   /* the first error's message */
	int depth;           /* recursion of parse_expr */
	char *scope[MAX_NEST]; /* owned; comprehension variable names */
	int nscope;          /* entries of scope in use */
	int max_slots;       /* the deepest comprehension nesting seen */
	bool old_self;       /* oldSelf was referenced */
};

static void perr(struct parser *p, size_t pos, const char *fmt, ...)
	PRINTF_LIKE(3, 4);

static void perr(struct parser *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	if (p->failed)
		return;
	p->failed = true;
	p->err_pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->err, sizeof(p->err), fmt, ap);
	va_end(ap);
}

static bool is_ident_start(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static void put_utf8(struct sbuf *b, uint32_t cp)
{
	char u[4];

	if (cp < 0x80) {
		sbuf_addch(b, (char)cp);
		return;
	}
	if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		sbuf_add(b, u, 2);
		return;
	}
	if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		sbuf_add(b, u, 3);
		return;
	}
	u[0] = (char)(0xF0 | (cp >> 18));
	u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
	u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
	u[3] = (char)(0x80 | (cp & 0x3F));
	sbuf_add(b, u, 4);
}

/* One escape after the backslash at s[*i] (s[*i] is the character after
 * '\\'); appends its bytes. Returns false when malformed. */
static bool lex_escape(struct parser *p, size_t *i, struct sbuf *b)
{
	const char *s = p->src;
	char c = s[*i];
	uint32_t cp = 0;
	int n = 0;

	switch (c) {
	case 'a': sbuf_addch(b, '\a'); (*i)++; return true;
	case 'b': sbuf_addch(b, '\b'); (*i)++; return true;
	case 'f': sbuf_addch(b, '\f'); (*i)++; return true;
	case 'n': sbuf_addch(b, '\n'); (*i)++; return true;
	case 'r': sbuf_addch(b, '\r'); (*i)++; return true;
	case 't': sbuf_addch(b, '\t'); (*i)++; return true;
	case 'v': sbuf_addch(b, '\v'); (*i)++; return true;
	case '\\': case '\'': case '"': case '`': case '?':
		sbuf_addch(b, c);
		(*i)++;
		return true;
	case 'x': case 'X': n = 2; break;
	case 'u': n = 4; break;
	case 'U': n = 8; break;
	default:
		if (c >= '0' && c <= '3' && s[*i + 1] >= '0' && s[*i + 1] <= '7' &&
		    s[*i + 2] >= '0' && s[*i + 2] <= '7') {
			cp = (uint32_t)((c - '0') * 64 + (s[*i + 1] - '0') * 8 +
					(s[*i + 2] - '0'));
			*i += 3;
			put_utf8(b, cp);
			return true;
		}
		return false;
	}
	for (int k = 1; k <= n; k++) {
		int h = text_hexval(s[*i + (size_t)k]);

		if (h < 0)
			return false;
		cp = cp * 16 + (uint32_t)h;
	}
	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return false;
	*i += (size_t)n + 1;
	put_utf8(b, cp);
	return true;
}

/* A string literal starting at p->pos (after any r prefix). */
static void lex_string(struct parser *p, size_t start, bool raw)
{
	const char *s = p->src;
	size_t i = p->pos;
	char q = s[i];
	bool triple = s[i + 1] == q && s[i + 2] == q;
	struct sbuf b = SBUF_INIT;

	i += triple ? 3 : 1;
	for (;;) {
		if (i >= p->len) {
			perr(p, start, "Syntax error: token recognition error at: '%.*s'",
			     (int)(i - start > 20 ? 20 : i - start), s + start);
			sbuf_release(&b);
			return;
		}
		if (triple ? (s[i] == q && s[i + 1] == q && s[i + 2] == q)
			   : s[i] == q) {
			i += triple ? 3 : 1;
			break;
		}
		if (!triple && (s[i] == '\n' || s[i] == '\r')) {
			perr(p, start, "Syntax error: token recognition error at: '%.*s'",
			     (int)(i - start), s + start);
			sbuf_release(&b);
			return;
		}
		if (s[i] == '\\' && !raw) {
			size_t at = i;

			i++;
			if (!lex_escape(p, &i, &b)) {
				perr(p, at, "Syntax error: invalid escape sequence in string literal");
				sbuf_release(&b);
				return;
			}
			continue;
		}
		sbuf_addch(&b, s[i++]);
	}
	p->tk.t = T_STRING;
	p->tk.slen = b.len;
	p->tk.s = sbuf_detach(&b, NULL);
	p->pos = i;
}

static void lex_number(struct parser *p)
{
	const char *s = p->src;
	size_t i = p->pos, start = p->pos;
	bool dbl = false;

	if (s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		uint64_t u = 0;

		i += 2;
		if (text_hexval(s[i]) < 0) {
			perr(p, start, "Syntax error: token recognition error at: '0x'");
			return;
		}
		for (; text_hexval(s[i]) >= 0; i++) {
			if (u > UINT64_MAX / 16) {
				perr(p, start, "invalid int literal");
				return;
			}
			u = u * 16 + (uint64_t)text_hexval(s[i]);
		}
		p->tk.t = T_INT;
		p->tk.u = u;
	} else {
		while (is_digit(s[i]))
			i++;
		if (s[i] == '.' && is_digit(s[i + 1])) {
			dbl = true;
			i++;
			while (is_digit(s[i]))
				i++;
		}
		if ((s[i] == 'e' || s[i] == 'E') &&
		    (is_digit(s[i + 1]) ||
		     ((s[i + 1] == '+' || s[i + 1] == '-') && is_digit(s[i + 2])))) {
			dbl = true;
			i += 2;
			while (is_digit(s[i]))
				i++;
		}
		if (dbl) {
			char *tmp = xstrndup(s + start, i - start);

			p->tk.t = T_DOUBLE;
			p->tk.d = strtod(tmp, NULL);
			free(tmp);
		} else {
			uint64_t u = 0;

			for (size_t k = start; k < i; k++) {
				unsigned d = (unsigned)(s[k] - '0');

				if (u > (UINT64_MAX - d) / 10) {
					perr(p, start, "invalid int literal");
					return;
				}
				u = u * 10 + d;
			}
			p->tk.t = T_INT;
			p->tk.u = u;
		}
	}
	if (s[i] == 'u' || s[i] == 'U') {
		perr(p, start, "uint literals are not supported by the "
		     "devserver's CEL subset");
		return;
	}
	p->pos = i;
}

static const char *const reserved[] = {
	"as", "break", "const", "continue", "else", "for", "function", "if",
	"import", "let", "loop", "package", "namespace", "return", "var",
	"void", "while", NULL,
};

static bool is_reserved(const char *s)
{
	for (size_t i = 0; reserved[i]; i++)
		if (!strcmp(reserved[i], s))
			return true;
	return false;
}

/* Reads the next token into p->tk (the previous one's string freed). */
static void next(struct parser *p)
{
	const char *s = p->src;
	size_t i;
	char c;

	free(p->tk.s);
	memset(&p->tk, 0, sizeof(p->tk));
	if (p->failed) {
		p->tk.t = T_EOF;
		return;
	}
	for (;;) {
		while (p->pos < p->len && strchr(" \t\r\n\f", s[p->pos]))
			p->pos++;
		if (p->pos + 1 < p->len && s[p->pos] == '/' && s[p->pos + 1] == '/') {
			while (p->pos < p->len && s[p->pos] != '\n')
				p->pos++;
			continue;
		}
		break;
	}
	i = p->pos;
	p->tk.pos = i;
	if (i >= p->len) {
		p->tk.t = T_EOF;
		return;
	}
	c = s[i];
	if (is_digit(c) || (c == '.' && is_digit(s[i + 1]))) {
		lex_number(p);
		goto out;
	}
	if (c == '"' || c == '\'') {
		lex_string(p, i, false);
		goto out;
	}
	if ((c == 'r' || c == 'R') && (s[i + 1] == '"' || s[i + 1] == '\'')) {
		p->pos++;
		lex_string(p, i, true);
		goto out;
	}
	if ((c == 'b' || c == 'B') &&
	    (s[i + 1] == '"' || s[i + 1] == '\'' ||
	     ((s[i + 1] == 'r' || s[i + 1] == 'R') &&
	      (s[i + 2] == '"' || s[i + 2] == '\'')))) {
		perr(p, i, "bytes literals are not supported by the devserver's "
		     "CEL subset");
		goto out;
	}
	if (is_ident_start(c)) {
		size_t j = i;

		while (is_ident_start(s[j]) || is_digit(s[j]))
			j++;
		p->tk.s = xstrndup(s + i, j - i);
		p->pos = j;
		if (!strcmp(p->tk.s, "true"))
			p->tk.t = T_TRUE;
		else if (!strcmp(p->tk.s, "false"))
			p->tk.t = T_FALSE;
		else if (!strcmp(p->tk.s, "null"))
			p->tk.t = T_NULL;
		else if (!strcmp(p->tk.s, "in"))
			p->tk.t = T_IN;
		else
			p->tk.t = T_IDENT;
		goto out;
	}
	{
		static const struct {
			const char *text;
			enum tok t;
		} ops[] = {
			{ "||", T_OR }, { "&&", T_AND }, { "==", T_EQ },
			{ "!=", T_NE }, { "<=", T_LE }, { ">=", T_GE },
			{ "<", T_LT }, { ">", T_GT }, { "!", T_NOT },
			{ "?", T_QUESTION }, { ":", T_COLON }, { "+", T_PLUS },
			{ "-", T_MINUS }, { "*", T_STAR }, { "/", T_SLASH },
			{ "%", T_PERCENT }, { ".", T_DOT }, { "[", T_LBRACK },
			{ "]", T_RBRACK }, { "(", T_LPAREN }, { ")", T_RPAREN },
			{ "{", T_LBRACE }, { "}", T_RBRACE }, { ",", T_COMMA },
		};

		for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
			size_t n = strlen(ops[k].text);

			if (!strncmp(s + i, ops[k].text, n)) {
				p->tk.t = ops[k].t;
				p->pos = i + n;
				goto out;
			}
		}
	}
	perr(p, i, "Syntax error: token recognition error at: '%c'", c);
out:
	if (p->failed)
		p->tk.t = T_EOF;
	p->tk.len = p->pos > p->tk.pos ? p->pos - p->tk.pos : 0;
}

/* The current token as the source shows it, for syntax errors. */
static void tok_text(const struct parser *p, char *buf, size_t size)
{
	if (p->tk.t == T_EOF) {
		snprintf(buf, size, "<EOF>");
		return;
	}
	snprintf(buf, size, "%.*s", (int)(p->tk.len > 40 ? 40 : p->tk.len),
		 p->src + p->tk.pos);
}

static bool expect(struct parser *p, enum tok t, const char *what)
{
	char b[48];

	if (p->tk.t == t) {
		next(p);
		return true;
	}
	tok_text(p, b, sizeof(b));
	perr(p, p->tk.pos, "Syntax error: mismatched input '%s' expecting %s",
	     b, what);
	return false;
}

/* ------------------------------------------------------------------ */
/* Parser.                                                             */

static struct node *mk(enum nkind k, size_t pos)
{
	struct node *n = xcalloc(1, sizeof(*n));

	n->k = k;
	n->pos = pos;
	return n;
}

static struct node *mk2(enum nkind k, size_t pos, int op, struct node *a,
			struct node *b)
{
	struct node *n = mk(k, pos);

	n->op = op;
	n->a = a;
	n->b = b;
	return n;
}

/* Sets n's depth from its operands; a tree deeper than MAX_NEST (a
 * long chain like 1+1+...+1 needs no parser recursion to get there) is
 * refused and freed. */
static struct node *checked(struct parser *p, struct node *n)
{
	int d = 0;
	const struct node *kids[3];

	if (!n)
		return NULL;
	kids[0] = n->a;
	kids[1] = n->b;
	kids[2] = n->c;
	for (size_t i = 0; i < 3; i++)
		if (kids[i] && kids[i]->depth > d)
			d = kids[i]->depth;
	for (size_t i = 0; i < n->n; i++)
		if (n->items[i]->depth > d)
			d = n->items[i]->depth;
	n->depth = d + 1;
	if (n->depth > MAX_NEST) {
		perr(p, n->pos, "expression recursion limit exceeded: %d",
		     MAX_NEST);
		node_free(n);
		return NULL;
	}
	return n;
}

static struct node *parse_expr(struct parser *p);

/* Known names outside the subset: refused with a message that says the
 * devserver, not the rule, is the limit. */
static const char *const unsupported_fns[] = {
	"int", "uint", "double", "string", "bytes", "bool", "dyn", "type",
	"duration", "timestamp", "getDate", "getDayOfMonth", "getDayOfWeek",
	"getDayOfYear", "getFullYear", "getHours", "getMilliseconds",
	"getMinutes", "getMonth", "getSeconds", "url", "isURL", "getScheme",
	"getHost", "getHostname", "getPort", "getEscapedPath", "getQuery",
	"quantity", "isQuantity", "isGreaterThan", "isLessThan", "compareTo",
	"asInteger", "asApproximateFloat", "sign", "add", "sub", "isInteger",
	"ip", "isIP", "cidr", "isCIDR", "containsIP", "containsCIDR",
	"prefixLength", "masked", "family", "isUnspecified", "isLoopback",
	"isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast",
	"semver", "isSemver", "major", "minor", "patch", "charAt", "indexOf",
	"lastIndexOf", "lowerAscii", "upperAscii", "replace", "split",
	"substring", "trim", "join", "format", "quote", "reverse", "isSorted",
	"sum", "min", "max", "indexOf", "lastIndexOf", "find", "findAll",
	"optional", "hasValue", "value", "orValue", "or", "of", "none",
	"ofNonZeroValue", "sets", "contains_all", "equivalent", "intersects",
	"base64", "encode", "decode", "exists_one", "authorizer", "path",
	"group", "resource", "namespace", "name", "check", "allowed",
	"reason", "errored", "error", "serviceAccount", "subresource",
	"transformMap", "transformList", "transformMapEntry", "sort", "slice",
	"flatten", "range", "distinct", "first", "last", "lists", "strings",
	"math", "greatest", "least", "ceil", "floor", "round", "trunc", "abs",
	"isInf", "isNaN", "isFinite", "bitAnd", "bitOr", "bitXor", "bitNot",
	"bitShiftLeft", "bitShiftRight", "sqrt", "getField", NULL,
};

static void unknown_fn(struct parser *p, size_t pos, const char *name)
{
	for (size_t i = 0; unsupported_fns[i]; i++) {
		if (!strcmp(unsupported_fns[i], name)) {
			perr(p, pos, "function '%s' is not supported by the "
			     "devserver's CEL subset", name);
			return;
		}
	}
	perr(p, pos, "undeclared reference to '%s' (in container '')", name);
}

/* Arguments after '(' up to ')', at most max (more is an error). */
static size_t parse_args(struct parser *p, struct node **args, size_t max,
			 const char *fn, size_t pos)
{
	size_t n = 0;

	if (p->tk.t == T_RPAREN) {
		next(p);
		return 0;
	}
	for (;;) {
		struct node *a = parse_expr(p);

		if (!a)
			goto fail;
		if (n == max) {
			node_free(a);
			perr(p, pos, "found no matching overload for '%s' applied "
			     "to %zu or more arguments", fn, max + 1);
			goto fail;
		}
		args[n++] = a;
		if (p->tk.t == T_COMMA) {
			next(p);
			continue;
		}
		if (!expect(p, T_RPAREN, "{')', ','}"))
			goto fail;
		return n;
	}
fail:
	for (size_t i = 0; i < n; i++)
		node_free(args[i]);
	return SIZE_MAX;
}

/* Frees args[0..nargs) and reports the call as cel-go does, counting a
 * member call's target as an argument (shown). */
static void wrong_arity(struct parser *p, size_t pos, const char *fn,
			size_t shown, struct node **args, size_t nargs)
{
	for (size_t i = 0; i < nargs; i++)
		node_free(args[i]);
	perr(p, pos, "found no matching overload for '%s' applied to %zu "
	     "argument%s", fn, shown, shown == 1 ? "" : "s");
}

/*
 * matches() takes RE2 syntax; regcomp takes POSIX ERE. The common part
 * passes as is; \d \w \s (and negations) and (?:...) are rewritten; lazy
 * quantifiers lose their '?' (the same strings match); anything else
 * that ERE would read differently (other escapes of letters or digits,
 * (?flags), escapes inside [...]) is refused rather than misread.
 * Returns a new pattern, or NULL with *why set.
 */
static char *re2_to_posix(const char *pat, const char **why)
{
	struct sbuf b = SBUF_INIT;
	bool in_class = false;

	for (const char *q = pat; *q; q++) {
		if (in_class) {
			if (*q == '\\') {
				*why = "escapes inside [...]";
				goto fail;
			}
			if (*q == '[' && q[1] == ':') {
				const char *e = strstr(q + 2, ":]");

				if (!e) {
					*why = "an unterminated [:class:]";
					goto fail;
				}
				sbuf_add(&b, q, (size_t)(e + 2 - q));
				q = e + 1;
				continue;
			}
			if (*q == ']')
				in_class = false;
			sbuf_addch(&b, *q);
			continue;
		}
		if (*q == '[') {
			in_class = true;
			sbuf_addch(&b, '[');
			if (q[1] == '^')
				sbuf_addch(&b, *++q);
			if (q[1] == ']')
				sbuf_addch(&b, *++q);
			continue;
		}
		if (*q == '(' && q[1] == '?') {
			if (q[2] != ':') {
				*why = "(?...) groups and flags";
				goto fail;
			}
			sbuf_addch(&b, '(');
			q += 2;
			continue;
		}
		if ((*q == '*' || *q == '+' || *q == '?' || *q == '}') &&
		    q[1] == '?') {
			sbuf_addch(&b, *q++);
			continue;
		}
		if (*q != '\\') {
			sbuf_addch(&b, *q);
			continue;
		}
		switch (*++q) {
		case 'd': sbuf_adds(&b, "[0-9]"); break;
		case 'D': sbuf_adds(&b, "[^0-9]"); break;
		case 'w': sbuf_adds(&b, "[A-Za-z0-9_]"); break;
		case 'W': sbuf_adds(&b, "[^A-Za-z0-9_]"); break;
		case 's': sbuf_adds(&b, "[[:space:]]"); break;
		case 'S': sbuf_adds(&b, "[^[:space:]]"); break;
		case 'n': sbuf_addch(&b, '\n'); break;
		case 't': sbuf_addch(&b, '\t'); break;
		case '\0':
			*why = "a trailing backslash";
			goto fail;
		default:
			if ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') ||
			    is_digit(*q)) {
				*why = "this escape";
				goto fail;
			}
			sbuf_addch(&b, '\\');
			sbuf_addch(&b, *q);
		}
	}
	return sbuf_detach(&b, NULL);
fail:
	sbuf_release(&b);
	return NULL;
}

/* Compiles an RE2 pattern as ERE; false with *why set. */
static bool re_compile(regex_t *re, const char *pat, const char **why)
{
	char *posix = re2_to_posix(pat, why);
	bool ok;

	if (!posix)
		return false;
	ok = regcomp(re, posix, REG_EXTENDED | REG_NOSUB) == 0;
	if (!ok)
		*why = "a malformed pattern";
	free(posix);
	return ok;
}

/* target.name(args...) with target parsed; p->tk is just past '('. */
static struct node *parse_method(struct parser *p, struct node *target,
				 const char *name, size_t pos)
{
	static const struct {
		const char *name;
		enum comp op;
	} macros[] = {
		{ "all", C_ALL }, { "exists", C_EXISTS },
		{ "exists_one", C_EXISTS_ONE }, { "existsOne", C_EXISTS_ONE },
		{ "filter", C_FILTER }, { "map", C_MAP },
	};
	static const struct {
		const char *name;
		enum sfn op;
	} strfns[] = {
		{ "startsWith", F_STARTS }, { "endsWith", F_ENDS },
		{ "contains", F_CONTAINS }, { "matches", F_MATCHES },
	};
	struct node *args[3];
	struct node *n;
	size_t nargs;

	for (size_t m = 0; m < sizeof(macros) / sizeof(macros[0]); m++) {
		size_t vpos;

		if (strcmp(macros[m].name, name))
			continue;
		/* 1. the variable: a simple name */
		if (p->tk.t != T_IDENT) {
			perr(p, p->tk.pos, "argument must be a simple name");
			node_free(target);
			return NULL;
		}
		if (p->nscope >= MAX_NEST) {
			perr(p, p->tk.pos, "expression recursion limit exceeded: %d",
			     MAX_NEST);
			node_free(target);
			return NULL;
		}
		vpos = p->tk.pos;
		n = mk(N_COMP, pos);
		n->op = (int)macros[m].op;
		n->a = target;
		n->slot = p->nscope;
		p->scope[p->nscope++] = xstrdup(p->tk.s);
		if (p->nscope > p->max_slots)
			p->max_slots = p->nscope;
		next(p);
		/* 2. the predicate (map: the filter, then the transform) */
		nargs = 0;
		if (expect(p, T_COMMA, "','"))
			nargs = parse_args(p, args, 2, name, pos);
		free(p->scope[--p->nscope]);
		if (p->failed || nargs == SIZE_MAX) {
			node_free(n);
			return NULL;
		}
		if (nargs == 2 && macros[m].op == C_MAP) {
			n->b = args[0];
			n->c = args[1];
		} else if (nargs == 1) {
			if (macros[m].op == C_MAP)
				n->c = args[0];
			else
				n->b = args[0];
		} else {
			node_free(n);
			wrong_arity(p, vpos, name, nargs + 1, args, nargs);
			return NULL;
		}
		return checked(p, n);
	}
	nargs = parse_args(p, args, 3, name, pos);
	if (nargs == SIZE_MAX) {
		node_free(target);
		return NULL;
	}
	if (!strcmp(name, "size")) {
		if (nargs != 0) {
			node_free(target);
			wrong_arity(p, pos, name, nargs + 1, args, nargs);
			return NULL;
		}
		n = mk(N_SIZE, pos);
		n->a = target;
		return checked(p, n);
	}
	for (size_t f = 0; f < sizeof(strfns) / sizeof(strfns[0]); f++) {
		if (strcmp(strfns[f].name, name))
			continue;
		if (nargs != 1) {
			node_free(target);
			wrong_arity(p, pos, name, nargs + 1, args, nargs);
			return NULL;
		}
		n = mk2(N_STRFN, pos, (int)strfns[f].op, target, args[0]);
		if (strfns[f].op == F_MATCHES && args[0]->k == N_LIT &&
		    json_is_string(args[0]->lit)) {
			const char *why = NULL;

			n->re = xmalloc(sizeof(*n->re));
			if (!re_compile(n->re, json_string_value(args[0]->lit),
					&why)) {
				free(n->re);
				n->re = NULL;
				perr(p, args[0]->pos, "invalid regular expression for "
				     "the devserver's CEL subset (RE2 read as POSIX "
				     "ERE): %s", why);
				node_free(n);
				return NULL;
			}
		}
		return checked(p, n);
	}
	node_free(target);
	for (size_t i = 0; i < nargs; i++)
		node_free(args[i]);
	unknown_fn(p, pos, name);
	return NULL;
}

/* name(args...) at the start of a primary; p->tk is just past '('. */
static struct node *parse_global_call(struct parser *p, const char *name,
				      size_t pos)
{
	struct node *args[3];
	size_t nargs;
	struct node *n;

	if (!strcmp(name, "has")) {
		struct node *a = parse_expr(p);

		if (!a)
			return NULL;
		if (!expect(p, T_RPAREN, "')'")) {
			node_free(a);
			return NULL;
		}
		if (a->k != N_SELECT) {
			perr(p, a->pos, "invalid argument to has() macro");
			node_free(a);
			return NULL;
		}
		a->k = N_HAS;
		a->pos = pos;
		return a;
	}
	nargs = parse_args(p, args, 3, name, pos);
	if (nargs == SIZE_MAX)
		return NULL;
	if (!strcmp(name, "size")) {
		if (nargs != 1) {
			wrong_arity(p, pos, name, nargs, args, nargs);
			return NULL;
		}
		n = mk(N_SIZE, pos);
		n->a = args[0];
		return checked(p, n);
	}
	if (!strcmp(name, "matches") || !strcmp(name, "startsWith") ||
	    !strcmp(name, "endsWith") || !strcmp(name, "contains")) {
		/* only the member forms exist in CEL, save matches(s, re),
		 * which we do not offer either: say what to write */
		for (size_t i = 0; i < nargs; i++)
			node_free(args[i]);
		perr(p, pos, "function '%s' is supported in member form only "
		     "(s.%s(x)) by the devserver's CEL subset", name, name);
		return NULL;
	}
	for (size_t i = 0; i < nargs; i++)
		node_free(args[i]);
	unknown_fn(p, pos, name);
	return NULL;
}

static struct node *parse_ident(struct parser *p)
{
	char *name = p->tk.s;
	size_t pos = p->tk.pos;
	struct node *n;

	p->tk.s = NULL;
	next(p);
	if (is_reserved(name)) {
		perr(p, pos, "reserved identifier: %s", name);
		free(name);
		return NULL;
	}
	if (p->tk.t == T_LPAREN) {
		next(p);
		n = parse_global_call(p, name, pos);
		free(name);
		return n;
	}
	for (int i = p->nscope - 1; i >= 0; i--) {
		if (!strcmp(p->scope[i], name)) {
			n = mk(N_VAR, pos);
			n->slot = i;
			free(name);
			return n;
		}
	}
	if (!strcmp(name, "self")) {
		free(name);
		return mk(N_SELF, pos);
	}
	if (!strcmp(name, "oldSelf")) {
		free(name);
		p->old_self = true;
		return mk(N_OLDSELF, pos);
	}
	perr(p, pos, "undeclared reference to '%s' (in container '')", name);
	free(name);
	return NULL;
}

static struct node *parse_primary(struct parser *p)
{
	struct node *n;
	size_t pos = p->tk.pos, cap;
	char b[48];

	switch (p->tk.t) {
	case T_IDENT:
		return parse_ident(p);
	case T_DOT:
		perr(p, pos, "leading '.' names are not supported by the "
		     "devserver's CEL subset");
		return NULL;
	case T_LPAREN:
		next(p);
		n = parse_expr(p);
		if (n && !expect(p, T_RPAREN, "')'")) {
			node_free(n);
			return NULL;
		}
		return n;
	case T_LBRACK:
		next(p);
		n = mk(N_LIST, pos);
		cap = 0;
		while (p->tk.t != T_RBRACK) {
			struct node *it;

			if (p->tk.t == T_QUESTION) {
				perr(p, p->tk.pos, "optional list elements are not "
				     "supported by the devserver's CEL subset");
				node_free(n);
				return NULL;
			}
			it = parse_expr(p);
			if (!it) {
				node_free(n);
				return NULL;
			}
			XGROW(n->items, cap, n->n + 1);
			n->items[n->n++] = it;
			if (p->tk.t == T_COMMA) {
				next(p);
				continue;
			}
			if (p->tk.t != T_RBRACK) {
				expect(p, T_RBRACK, "{']', ','}");
				node_free(n);
				return NULL;
			}
		}
		next(p);
		return checked(p, n);
	case T_LBRACE:
		perr(p, pos, "map literals are not supported by the devserver's "
		     "CEL subset");
		return NULL;
	case T_INT:
		if (p->tk.u > INT64_MAX) {
			perr(p, pos, "invalid int literal");
			return NULL;
		}
		n = mk(N_LIT, pos);
		n->lit = json_integer((json_int_t)p->tk.u);
		next(p);
		return n;
	case T_DOUBLE:
		n = mk(N_LIT, pos);
		n->lit = json_real(p->tk.d);
		next(p);
		return n;
	case T_STRING:
		n = mk(N_LIT, pos);
		n->lit = json_stringn(p->tk.s, p->tk.slen);
		if (!n->lit) {
			perr(p, pos, "Syntax error: string literal is not valid UTF-8");
			node_free(n);
			return NULL;
		}
		next(p);
		return n;
	case T_TRUE:
	case T_FALSE:
	case T_NULL:
		n = mk(N_LIT, pos);
		n->lit = p->tk.t == T_TRUE ? json_true() :
			 p->tk.t == T_FALSE ? json_false() : json_null();
		next(p);
		return n;
	default:
		tok_text(p, b, sizeof(b));
		perr(p, pos, "Syntax error: mismatched input '%s' expecting "
		     "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
		     "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}",
		     b);
		return NULL;
	}
}

/*
 * Kubernetes' escaping of property names that are not CEL identifiers
 * (apiserver/pkg/cel escaping.go), undone: "__namespace__" names the
 * property "namespace" (a reserved word), and inside a name
 * "__underscores__" is "__", "__dot__" ".", "__dash__" "-", "__slash__"
 * "/" and "__{N}__" the code point N. New string.
 */
static char *unescape_field(const char *in)
{
	static const char *const words[] = { "true", "false", "null", "in", NULL };
	static const struct {
		const char *esc;
		const char *raw;
	} seqs[] = {
		{ "__underscores__", "__" }, { "__dot__", "." },
		{ "__dash__", "-" }, { "__slash__", "/" },
	};
	size_t n = strlen(in);
	struct sbuf b = SBUF_INIT;

	if (n > 4 && !strncmp(in, "__", 2) && !strcmp(in + n - 2, "__")) {
		char *mid = xstrndup(in + 2, n - 4);
		bool kw = is_reserved(mid);

		for (size_t i = 0; words[i]; i++)
			kw = kw || !strcmp(words[i], mid);
		if (kw)
			return mid;
		free(mid);
	}
	for (const char *p = in; *p;) {
		bool done = false;

		for (size_t i = 0; i < sizeof(seqs) / sizeof(seqs[0]); i++) {
			size_t l = strlen(seqs[i].esc);

			if (!strncmp(p, seqs[i].esc, l)) {
				sbuf_adds(&b, seqs[i].raw);
				p += l;
				done = true;
				break;
			}
		}
		if (!done && !strncmp(p, "__", 2) && is_digit(p[2])) {
			const char *q = p + 2;
			uint32_t cp = 0;

			while (is_digit(*q) && cp <= 0x10FFFF)
				cp = cp * 10 + (uint32_t)(*q++ - '0');
			if (!strncmp(q, "__", 2) && cp <= 0x10FFFF &&
			    !(cp >= 0xD800 && cp <= 0xDFFF)) {
				put_utf8(&b, cp);
				p = q + 2;
				done = true;
			}
		}
		if (!done)
			sbuf_addch(&b, *p++);
	}
	return sbuf_detach(&b, NULL);
}

static struct node *parse_member(struct parser *p)
{
	struct node *n = parse_primary(p);

	while (n && !p->failed) {
		size_t pos = p->tk.pos;

		if (p->tk.t == T_DOT) {
			char *name;
			struct node *s;

			next(p);
			if (p->tk.t == T_QUESTION) {
				perr(p, p->tk.pos, "optional field selection is not "
				     "supported by the devserver's CEL subset");
				break;
			}
			if (p->tk.t != T_IDENT) {
				expect(p, T_IDENT, "IDENTIFIER");
				break;
			}
			name = p->tk.s;
			p->tk.s = NULL;
			pos = p->tk.pos;
			next(p);
			if (p->tk.t == T_LPAREN) {
				next(p);
				n = parse_method(p, n, name, pos);
				free(name);
				continue;
			}
			s = mk(N_SELECT, pos);
			s->a = n;
			s->field = strstr(name, "__") ? unescape_field(name)
						      : xstrdup(name);
			free(name);
			n = checked(p, s);
		} else if (p->tk.t == T_LBRACK) {
			struct node *idx;

			next(p);
			if (p->tk.t == T_QUESTION) {
				perr(p, p->tk.pos, "optional indexing is not supported "
				     "by the devserver's CEL subset");
				break;
			}
			idx = parse_expr(p);
			if (!idx || !expect(p, T_RBRACK, "']'")) {
				node_free(idx);
				break;
			}
			n = checked(p, mk2(N_INDEX, pos, 0, n, idx));
		} else if (p->tk.t == T_LBRACE) {
			perr(p, pos, "message construction is not supported by the "
			     "devserver's CEL subset");
			break;
		} else {
			return n;
		}
	}
	if (p->failed) {
		node_free(n);
		return NULL;
	}
	return n;
}

static struct node *parse_unary(struct parser *p)
{
	size_t pos = p->tk.pos;
	struct node *n;

	if (p->tk.t == T_NOT) {
		next(p);
		n = parse_unary(p);
		return n ? checked(p, mk2(N_NOT, pos, 0, n, NULL)) : NULL;
	}
	if (p->tk.t == T_MINUS) {
		next(p);
		/* -9223372036854775808 is a literal, not a negation */
		if (p->tk.t == T_INT && p->tk.u == (uint64_t)INT64_MAX + 1) {
			n = mk(N_LIT, pos);
			n->lit = json_integer(INT64_MIN);
			next(p);
			return n;
		}
		n = parse_unary(p);
		return n ? checked(p, mk2(N_NEG, pos, 0, n, NULL)) : NULL;
	}
	return parse_member(p);
}

static int relop(enum tok t)
{
	switch (t) {
	case T_EQ: return B_EQ;
	case T_NE: return B_NE;
	case T_LT: return B_LT;
	case T_LE: return B_LE;
	case T_GT: return B_GT;
	case T_GE: return B_GE;
	case T_IN: return B_IN;
	default: return -1;
	}
}

/* The binary operators, loosest level first (||, &&, relations,
 * additive, multiplicative): whether t is one at level, and the node it
 * makes. */
#define NLEVELS 5
static bool binop(int level, enum tok t, enum nkind *kind, int *op)
{
	*kind = N_BIN;
	*op = 0;
	switch (level) {
	case 0:
		*kind = N_OR;
		return t == T_OR;
	case 1:
		*kind = N_AND;
		return t == T_AND;
	case 2:
		*op = relop(t);
		return *op >= 0;
	case 3:
		*op = t == T_PLUS ? B_ADD : B_SUB;
		return t == T_PLUS || t == T_MINUS;
	default:
		*op = t == T_STAR ? B_MUL : t == T_SLASH ? B_DIV : B_MOD;
		return t == T_STAR || t == T_SLASH || t == T_PERCENT;
	}
}

/* Left-associative operators of level and tighter; unary below them. */
static struct node *parse_binary(struct parser *p, int level)
{
	struct node *n, *r;
	enum nkind kind;
	int op;

	if (level == NLEVELS)
		return parse_unary(p);
	n = parse_binary(p, level + 1);
	while (n && binop(level, p->tk.t, &kind, &op)) {
		size_t pos = p->tk.pos;

		next(p);
		r = parse_binary(p, level + 1);
		if (!r) {
			node_free(n);
			return NULL;
		}
		n = checked(p, mk2(kind, pos, op, n, r));
	}
	return n;
}

static struct node *parse_expr(struct parser *p)
{
	struct node *n, *t, *e;
	size_t pos;

	if (++p->depth > MAX_NEST) {
		perr(p, p->tk.pos, "expression recursion limit exceeded: %d",
		     MAX_NEST);
		p->depth--;
		return NULL;
	}
	n = parse_binary(p, 0);
	if (n && p->tk.t == T_QUESTION) {
		pos = p->tk.pos;
		next(p);
		t = parse_binary(p, 0);
		if (!t || !expect(p, T_COLON, "':'")) {
			node_free(t);
			node_free(n);
			n = NULL;
			goto out;
		}
		e = parse_expr(p);
		if (!e) {
			node_free(t);
			node_free(n);
			n = NULL;
			goto out;
		}
		n = mk2(N_COND, pos, 0, n, t);
		n->c = e;
		n = checked(p, n);
	}
out:
	p->depth--;
	return n;
}

/* The static result type, as far as it is known without a schema. */
static enum cel_type type_of(const struct node *n)
{
	enum cel_type a, b;

	switch (n->k) {
	case N_LIT:
		return json_is_boolean(n->lit) ? CEL_TYPE_BOOL :
		       json_is_string(n->lit) ? CEL_TYPE_STRING : CEL_TYPE_OTHER;
	case N_HAS:
	case N_NOT:
	case N_AND:
	case N_OR:
	case N_STRFN:
		return CEL_TYPE_BOOL;
	case N_LIST:
	case N_NEG:
	case N_SIZE:
		return CEL_TYPE_OTHER;
	case N_COMP:
		return n->op == C_FILTER || n->op == C_MAP ? CEL_TYPE_OTHER
							    : CEL_TYPE_BOOL;
	case N_COND:
		a = type_of(n->b);
		b = type_of(n->c);
		return a == b ? a : CEL_TYPE_DYN;
	case N_BIN:
		if (n->op <= B_IN)
			return CEL_TYPE_BOOL;
		if (n->op != B_ADD)
			return CEL_TYPE_OTHER;
		a = type_of(n->a);
		b = type_of(n->b);
		if (a == CEL_TYPE_STRING || b == CEL_TYPE_STRING)
			return CEL_TYPE_STRING;
		return a == CEL_TYPE_OTHER || b == CEL_TYPE_OTHER ?
		       CEL_TYPE_OTHER : CEL_TYPE_DYN;
	default:
		return CEL_TYPE_DYN;
	}
}

/* cel-go's common.Errors.ToDisplayString for one error at byte pos. */
static void format_issue(struct err *err, const char *src, size_t pos,
			 const char *msg)
{
	size_t line = 1, col = 0, bol = 0, eol;
	struct sbuf b = SBUF_INIT;

	for (size_t i = 0; i < pos && src[i]; i++) {
		if (src[i] == '\n') {
			line++;
			col = 0;
			bol = i + 1;
		} else if (((unsigned char)src[i] & 0xC0) != 0x80) {
			col++;
		}
	}
	eol = bol;
	while (src[eol] && src[eol] != '\n')
		eol++;
	sbuf_addf(&b, "ERROR: <input>:%zu:%zu: %s\n | ", line, col + 1, msg);
	sbuf_add(&b, src + bol, eol - bol);
	sbuf_adds(&b, "\n | ");
	for (size_t i = 0; i < col; i++)
		sbuf_addch(&b, '.');
	sbuf_addch(&b, '^');
	err_set(err, "%s", sbuf_cstr(&b));
	sbuf_release(&b);
}

struct cel_program *cel_compile(const char *src, struct err *err)
{
	struct parser p;
	struct node *root = NULL;
	struct cel_program *prog;

	memset(&p, 0, sizeof(p));
	p.src = src ? src : "";
	p.len = strlen(p.src);
	if (p.len > CEL_MAX_SOURCE) {
		err_set(err, "ERROR: <input>:-1:0: expression code point size "
			"exceeds limit: size: %zu, limit %d", p.len,
			CEL_MAX_SOURCE);
		return NULL;
	}
	next(&p);
	if (!p.failed)
		root = parse_expr(&p);
	if (root && !p.failed && p.tk.t != T_EOF) {
		char b[48];

		tok_text(&p, b, sizeof(b));
		perr(&p, p.tk.pos, "Syntax error: extraneous input '%s' "
		     "expecting <EOF>", b);
	}
	free(p.tk.s);
	for (int i = 0; i < p.nscope; i++)
		free(p.scope[i]);
	if (p.failed || !root) {
		node_free(root);
		if (!p.failed)
			perr(&p, 0, "Syntax error: empty expression");
		format_issue(err, p.src, p.err_pos, p.err);
		return NULL;
	}
	prog = xcalloc(1, sizeof(*prog));
	prog->root = root;
	prog->old_self = p.old_self;
	prog->nslots = p.max_slots;
	prog->type = type_of(root);
	return prog;
}

/* ------------------------------------------------------------------ */
/* Evaluation.                                                         */

struct ectx {
	const json_t *self;   /* borrowed; the value at the rule's node */
	const json_t *old;    /* borrowed; its old value, or NULL */
	const json_t *vars[MAX_NEST]; /* borrowed; comprehension variables */
	uint64_t cost;        /* spent so far */
	uint64_t limit;       /* the call's limit */
	bool fatal;           /* cost limit: no absorption, no recovery */
	char msg[MSG_MAX];    /* the error of the last NULL result */
};

static json_t *fail(struct ectx *c, const char *fmt, ...) PRINTF_LIKE(2, 3);

static json_t *fail(struct ectx *c, const char *fmt, ...)
{
	va_list ap;

	if (c->fatal)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(c->msg), fmt, ap);
	va_end(ap);
	return NULL;
}

static json_t *no_overload(struct ectx *c)
{
	return fail(c, "no such overload");
}

/* Adds n to the cost; false (and fatal) past the limit. */
static bool charge(struct ectx *c, uint64_t n)
{
	if (c->fatal)
		return false;
	c->cost += n;
	if (c->cost > c->limit) {
		c->fatal = true;
		snprintf(c->msg, sizeof(c->msg),
			 "operation cancelled: actual cost limit exceeded");
		return false;
	}
	return true;
}

static json_t *jbool(bool b)
{
	return b ? json_true() : json_false();
}

/* Numeric equality across int and double, as cel-go's heterogeneous
 * equality has it. */
static bool num_equal(const json_t *a, const json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b))
		return json_integer_value(a) == json_integer_value(b);
	if (json_is_real(a) && json_is_real(b))
		return json_real_value(a) == json_real_value(b);
	{
		json_int_t i = json_is_integer(a) ? json_integer_value(a)
						  : json_integer_value(b);
		double d = json_is_real(a) ? json_real_value(a)
					   : json_real_value(b);

		if (!(d >= -9223372036854775808.0 && d < 9223372036854775808.0))
			return false;
		return d == trunc(d) && (json_int_t)d == i;
	}
}

/* Deep equality; -1 when the cost limit stopped it. */
static int equal(struct ectx *c, const json_t *a, const json_t *b, int depth)
{
	size_t i;
	const char *k;
	json_t *v;

	if (!charge(c, 1) || depth > MAX_JSON_DEPTH)
		return c->fatal ? -1 : 0;
	if (json_is_number(a) && json_is_number(b))
		return num_equal(a, b);
	if (json_typeof(a) != json_typeof(b))
		return 0; /* heterogeneous equality is false */
	switch (json_typeof(a)) {
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       !memcmp(json_string_value(a), json_string_value(b),
			       json_string_length(a));
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return 0;
		for (i = 0; i < json_array_size(a); i++) {
			int r = equal(c, json_array_get(a, i),
				      json_array_get(b, i), depth + 1);

			if (r != 1)
				return r;
		}
		return 1;
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)a, k, v) {
			const json_t *w = json_object_get(b, k);
			int r;

			if (!w)
				return 0;
			r = equal(c, v, w, depth + 1);
			if (r != 1)
				return r;
		}
		return 1;
	default:
		return 1; /* true, false, null: the type is the value */
	}
}

/* Ordering: sets *out to <0, 0, >0; false when no overload applies. For
 * doubles NaN compares unordered: *nan is set. */
static bool compare(const json_t *a, const json_t *b, int *out, bool *nan)
{
	*nan = false;
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);

		*out = x < y ? -1 : x > y;
		return true;
	}
	if (json_is_number(a) && json_is_number(b)) {
		double x = json_number_value(a), y = json_number_value(b);

		if (isnan(x) || isnan(y)) {
			*nan = true;
			*out = 0;
			return true;
		}
		*out = x < y ? -1 : x > y;
		return true;
	}
	if (json_is_string(a) && json_is_string(b)) {
		size_t la = json_string_length(a), lb = json_string_length(b);
		int r = memcmp(json_string_value(a), json_string_value(b),
			       la < lb ? la : lb);

		*out = r ? r : (la < lb ? -1 : la > lb);
		return true;
	}
	if (json_is_boolean(a) && json_is_boolean(b)) {
		*out = (int)json_is_true(a) - (int)json_is_true(b);
		return true;
	}
	return false;
}

static size_t code_points(const char *s, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xC0) != 0x80)
			k++;
	return k;
}

static json_t *eval(struct ectx *c, const struct node *n);

static json_t *eval_arith(struct ectx *c, int op, json_t *a, json_t *b)
{
	if (json_is_integer(a) && json_is_integer(b)) {
		json_int_t x = json_integer_value(a), y = json_integer_value(b);
		long long r;
		bool ovf = false;

		switch (op) {
		case B_ADD: ovf = __builtin_add_overflow(x, y, &r); break;
		case B_SUB: ovf = __builtin_sub_overflow(x, y, &r); break;
		case B_MUL: ovf = __builtin_mul_overflow(x, y, &r); break;
		case B_DIV:
			if (y == 0)
				return fail(c, "division by zero");
			ovf = x == INT64_MIN && y == -1;
			r = ovf ? 0 : x / y;
			break;
		default:
			if (y == 0)
				return fail(c, "modulus by zero");
			ovf = x == INT64_MIN && y == -1;
			r = ovf ? 0 : x % y;
			break;
		}
		if (ovf)
			return fail(c, "integer overflow");
		return json_integer((json_int_t)r);
	}
	if (json_is_real(a) && json_is_real(b) && op != B_MOD) {
		double x = json_real_value(a), y = json_real_value(b);
		double r = op == B_ADD ? x + y : op == B_SUB ? x - y :
			   op == B_MUL ? x * y : x / y;

		/* jansson refuses inf and nan; CEL keeps them as doubles,
		 * which no JSON value can hold: report it as an error */
		if (!isfinite(r))
			return fail(c, "double result is not finite");
		return json_real(r);
	}
	if (op == B_ADD && json_is_string(a) && json_is_string(b)) {
		size_t la = json_string_length(a), lb = json_string_length(b);
		char *s;
		json_t *r;

		if (!charge(c, (la + lb) / 64))
			return NULL;
		s = xmalloc(la + lb + 1);
		memcpy(s, json_string_value(a), la);
		memcpy(s + la, json_string_value(b), lb);
		s[la + lb] = '\0';
		r = json_stringn_nocheck(s, la + lb);
		free(s);
		return r;
	}
	if (op == B_ADD && json_is_array(a) && json_is_array(b)) {
		json_t *r;

		if (!charge(c, json_array_size(a) + json_array_size(b)))
			return NULL;
		r = json_array();
		json_array_extend(r, a);
		json_array_extend(r, b);
		return r;
	}
	return no_overload(c);
}

static json_t *eval_bin(struct ectx *c, const struct node *n)
{
	json_t *a = eval(c, n->a), *b, *r = NULL;
	int cmp, e;
	bool nan;

	if (!a)
		return NULL;
	b = eval(c, n->b);
	if (!b) {
		json_decref(a);
		return NULL;
	}
	switch (n->op) {
	case B_EQ:
	case B_NE:
		e = equal(c, a, b, 0);
		if (e >= 0)
			r = jbool((e == 1) == (n->op == B_EQ));
		break;
	case B_LT:
	case B_LE:
	case B_GT:
	case B_GE:
		if (!compare(a, b, &cmp, &nan)) {
			no_overload(c);
			break;
		}
		if (nan)
			r = json_false();
		else
			r = jbool(n->op == B_LT ? cmp < 0 : n->op == B_LE ? cmp <= 0 :
				  n->op == B_GT ? cmp > 0 : cmp >= 0);
		break;
	case B_IN:
		if (json_is_array(b)) {
			size_t i;
			json_t *v;
			bool found = false;

			json_array_foreach(b, i, v) {
				e = equal(c, a, v, 0);
				if (e < 0)
					break;
				if (e == 1) {
					found = true;
					break;
				}
			}
			if (!c->fatal)
				r = jbool(found);
		} else if (json_is_object(b)) {
			r = jbool(json_is_string(a) &&
				  json_object_get(b, json_string_value(a)));
		} else {
			no_overload(c);
		}
		break;
	default:
		r = eval_arith(c, n->op, a, b);
		break;
	}
	json_decref(a);
	json_decref(b);
	return r;
}

/* && and ||: the side that decides wins over an error on the other
 * (cel-go's logical operators are commutative with errors). */
static json_t *eval_logic(struct ectx *c, const struct node *n)
{
	bool is_and = n->k == N_AND;
	json_t *l = eval(c, n->a), *r;
	char saved[MSG_MAX] = "";
	bool lerr;

	if (c->fatal) {
		json_decref(l);
		return NULL;
	}
	if (l && json_is_boolean(l)) {
		if (json_is_true(l) != is_and)
			return l; /* false && _, true || _ */
		json_decref(l);
		lerr = false;
	} else {
		if (l)
			no_overload(c);
		json_decref(l);
		memcpy(saved, c->msg, sizeof(saved));
		lerr = true;
	}
	r = eval(c, n->b);
	if (c->fatal) {
		json_decref(r);
		return NULL;
	}
	if (r && json_is_boolean(r)) {
		if (json_is_true(r) != is_and || !lerr)
			return r;
		json_decref(r);
		memcpy(c->msg, saved, sizeof(saved));
		return NULL;
	}
	if (r) {
		json_decref(r);
		no_overload(c);
	}
	if (lerr)
		memcpy(c->msg, saved, sizeof(saved));
	return NULL;
}

/* The elements a comprehension ranges over: a list's items or a map's
 * keys; a new array, or NULL after an error. */
static json_t *range_of(struct ectx *c, json_t *v)
{
	const char *k;
	json_t *x, *keys;

	if (json_is_array(v))
		return json_incref(v);
	if (!json_is_object(v))
		return no_overload(c);
	keys = json_array();
	json_object_foreach(v, k, x) {
		(void)x;
		json_array_append_new(keys, json_string(k));
	}
	return keys;
}

static json_t *eval_comp(struct ectx *c, const struct node *n)
{
	json_t *v = eval(c, n->a), *items, *out = NULL, *r, *x;
	char saved[MSG_MAX] = "";
	bool have_err = false, decided = false;
	size_t i, count = 0;

	if (!v)
		return NULL;
	items = range_of(c, v);
	json_decref(v);
	if (!items)
		return NULL;
	if (n->op == C_FILTER || n->op == C_MAP)
		out = json_array();
	json_array_foreach(items, i, x) {
		if (!charge(c, 1))
			goto fail;
		c->vars[n->slot] = x;
		if (n->op == C_MAP && !n->b) {
			r = eval(c, n->c);
			if (!r)
				goto fail;
			json_array_append_new(out, r);
			continue;
		}
		r = eval(c, n->b);
		if (c->fatal)
			goto fail;
		if (r && !json_is_boolean(r)) {
			json_decref(r);
			r = no_overload(c);
		}
		if (!r) {
			/* all/exists: a later decisive element absorbs it */
			if (n->op != C_ALL && n->op != C_EXISTS)
				goto fail;
			if (!have_err)
				memcpy(saved, c->msg, sizeof(saved));
			have_err = true;
			continue;
		}
		switch (n->op) {
		case C_ALL:
			decided = json_is_false(r);
			break;
		case C_EXISTS:
			decided = json_is_true(r);
			break;
		case C_EXISTS_ONE:
			count += json_is_true(r);
			break;
		case C_FILTER:
			if (json_is_true(r))
				json_array_append(out, x);
			break;
		default: /* C_MAP with a filter */
			if (json_is_true(r)) {
				json_t *t = eval(c, n->c);

				if (!t) {
					json_decref(r);
					goto fail;
				}
				json_array_append_new(out, t);
			}
			break;
		}
		json_decref(r);
		if (decided)
			break;
	}
	json_decref(items);
	switch (n->op) {
	case C_ALL:
	case C_EXISTS:
		if (decided)
			return jbool(n->op == C_EXISTS);
		if (have_err) {
			memcpy(c->msg, saved, sizeof(saved));
			return NULL;
		}
		return jbool(n->op == C_ALL);
	case C_EXISTS_ONE:
		return jbool(count == 1);
	default:
		return out;
	}
fail:
	json_decref(items);
	json_decref(out);
	return NULL;
}

static bool has_substring(const char *s, size_t ls, const char *t,
			  size_t lt)
{
	for (size_t i = 0; i + lt <= ls; i++)
		if (!memcmp(s + i, t, lt))
			return true;
	return false;
}

static json_t *eval_strfn(struct ectx *c, const struct node *n)
{
	json_t *a = eval(c, n->a), *b, *r = NULL;
	const char *s, *t;
	size_t ls, lt;

	if (!a)
		return NULL;
	b = eval(c, n->b);
	if (!b) {
		json_decref(a);
		return NULL;
	}
	if (!json_is_string(a) || !json_is_string(b)) {
		no_overload(c);
		goto out;
	}
	s = json_string_value(a);
	t = json_string_value(b);
	ls = json_string_length(a);
	lt = json_string_length(b);
	/* the naive substring search costs up to ls * lt */
	if (!charge(c, ls / 64 + 1 +
		    (n->op == F_CONTAINS ? (ls / 64) * (lt / 64 + 1) : 0)))
		goto out;
	switch (n->op) {
	case F_STARTS:
		r = jbool(lt <= ls && !memcmp(s, t, lt));
		break;
	case F_ENDS:
		r = jbool(lt <= ls && !memcmp(s + ls - lt, t, lt));
		break;
	case F_CONTAINS:
		r = jbool(has_substring(s, ls, t, lt));
		break;
	default: {
		regex_t re;

		if (n->re) {
			r = jbool(regexec(n->re, s, 0, NULL, 0) == 0);
			break;
		}
		const char *why = NULL;

		if (!re_compile(&re, t, &why)) {
			fail(c, "invalid regular expression: %s", why);
			break;
		}
		r = jbool(regexec(&re, s, 0, NULL, 0) == 0);
		regfree(&re);
		break;
	}
	}
out:
	json_decref(a);
	json_decref(b);
	return r;
}

static json_t *eval_select(struct ectx *c, const struct node *n)
{
	json_t *a = eval(c, n->a), *v;

	if (!a)
		return NULL;
	if (!json_is_object(a)) {
		json_decref(a);
		return no_overload(c);
	}
	v = json_object_get(a, n->field);
	if (n->k == N_HAS) {
		json_decref(a);
		return jbool(v != NULL);
	}
	if (!v) {
		json_decref(a);
		return fail(c, "no such key: %s", n->field);
	}
	json_incref(v);
	json_decref(a);
	return v;
}

static json_t *eval_index(struct ectx *c, const struct node *n)
{
	json_t *a = eval(c, n->a), *i, *v = NULL;

	if (!a)
		return NULL;
	i = eval(c, n->b);
	if (!i) {
		json_decref(a);
		return NULL;
	}
	if (json_is_array(a) && json_is_number(i)) {
		double d = json_number_value(i);
		long long k = json_is_integer(i) ? (long long)json_integer_value(i)
						 : (long long)d;

		if (json_is_real(i) && d != trunc(d))
			no_overload(c);
		else if (k < 0 || (size_t)k >= json_array_size(a))
			fail(c, "index '%lld' out of range in list size '%zu'",
			     k, json_array_size(a));
		else
			v = json_incref(json_array_get(a, (size_t)k));
	} else if (json_is_object(a) && json_is_string(i)) {
		v = json_object_get(a, json_string_value(i));
		if (v)
			json_incref(v);
		else
			fail(c, "no such key: %s", json_string_value(i));
	} else {
		no_overload(c);
	}
	json_decref(a);
	json_decref(i);
	return v;
}

static json_t *eval(struct ectx *c, const struct node *n)
{
	json_t *a, *r;

	if (!charge(c, 1))
		return NULL;
	switch (n->k) {
	case N_LIT:
		return json_incref(n->lit);
	case N_SELF:
		return json_incref((json_t *)c->self);
	case N_OLDSELF:
		if (!c->old)
			return fail(c, "no such attribute: oldSelf");
		return json_incref((json_t *)c->old);
	case N_VAR:
		return json_incref((json_t *)c->vars[n->slot]);
	case N_SELECT:
	case N_HAS:
		return eval_select(c, n);
	case N_INDEX:
		return eval_index(c, n);
	case N_LIST:
		r = json_array();
		for (size_t i = 0; i < n->n; i++) {
			a = eval(c, n->items[i]);
			if (!a) {
				json_decref(r);
				return NULL;
			}
			json_array_append_new(r, a);
		}
		return r;
	case N_NOT:
		a = eval(c, n->a);
		if (!a)
			return NULL;
		r = json_is_boolean(a) ? jbool(json_is_false(a)) : no_overload(c);
		json_decref(a);
		return r;
	case N_NEG:
		a = eval(c, n->a);
		if (!a)
			return NULL;
		if (json_is_integer(a))
			r = json_integer_value(a) == INT64_MIN ?
			    fail(c, "integer overflow") :
			    json_integer(-json_integer_value(a));
		else if (json_is_real(a))
			r = json_real(-json_real_value(a));
		else
			r = no_overload(c);
		json_decref(a);
		return r;
	case N_AND:
	case N_OR:
		return eval_logic(c, n);
	case N_COND:
		a = eval(c, n->a);
		if (!a)
			return NULL;
		if (!json_is_boolean(a)) {
			json_decref(a);
			return no_overload(c);
		}
		r = eval(c, json_is_true(a) ? n->b : n->c);
		json_decref(a);
		return r;
	case N_BIN:
		return eval_bin(c, n);
	case N_SIZE:
		a = eval(c, n->a);
		if (!a)
			return NULL;
		if (json_is_string(a))
			r = json_integer((json_int_t)code_points(
				json_string_value(a), json_string_length(a)));
		else if (json_is_array(a))
			r = json_integer((json_int_t)json_array_size(a));
		else if (json_is_object(a))
			r = json_integer((json_int_t)json_object_size(a));
		else
			r = no_overload(c);
		json_decref(a);
		return r;
	case N_STRFN:
		return eval_strfn(c, n);
	case N_COMP:
		return eval_comp(c, n);
	}
	BUG("cel: node kind %d", (int)n->k);
	return NULL;
}

enum cel_outcome cel_eval(const struct cel_program *p, const json_t *self,
			  const json_t *old_self, uint64_t limit,
			  uint64_t *cost, json_t **out, struct err *err)
{
	struct ectx c;
	json_t *r;

	memset(&c, 0, sizeof(c));
	c.self = self;
	c.old = old_self;
	c.limit = limit;
	r = eval(&c, p->root);
	*cost = c.cost;
	*out = r;
	if (r)
		return CEL_OK;
	err_set(err, "%s", c.msg);
	return c.fatal ? CEL_COST_LIMIT : CEL_ERROR;
}
