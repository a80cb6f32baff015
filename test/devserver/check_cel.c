/*
 * Suite "cel": devserver/cel.c (the CEL subset) and the
 * x-kubernetes-validations it serves through devserver/schema.c.
 *
 * 1. eval, compile: the evaluator's semantics (error absorption in
 *    && || all exists, heterogeneous equality, int overflow, missing
 *    keys, code points) and the compile-time refusals, exact texts.
 * 2. upstream: every rule of Kueue's published CRDs
 *    (test/fixtures/upstream-crds, read at run time) at every place it
 *    appears, with one value that passes and one that fails with the
 *    exact field error. The table is keyed by the rule's text, so a rule
 *    added upstream without a case here fails the test, and so does a
 *    case whose rule is gone.
 * 3. rules: message, messageExpression, reason, fieldPath, the root's
 *    "<nil>" path, evaluation errors, the blocking-error notice, the
 *    cost limit and budget; transition: oldSelf on update only,
 *    correlation by name and by list-map keys, ratcheting; crd: the
 *    CRD-time refusals.
 * 4. http: the devserver with Kueue's upstream CRDs, answering 422.
 *
 * JSON in tables uses ' for " (t_jq); CEL sources are plain C strings.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/sbuf.h"
#include "config/yamljson.h"
#include "devserver/cel.h"
#include "devserver/schema.h"
#include "suites.h"
#include "test/devserver/dsclient.h"
#include "test/support/support.h"

#define UPSTREAM_CRDS "test/fixtures/upstream-crds"

/* ------------------------------------------------------------------ */
/* 1. The evaluator.                                                   */

struct eval_case {
	const char *expr;
	const char *self;  /* ' for "; NULL: null */
	const char *old;   /* ' for "; NULL: no oldSelf */
	const char *want;  /* the result, ' for "; NULL when err is set */
	const char *err;   /* the evaluation error */
};

static const struct eval_case eval_cases[] = {
	/* literals and quoting */
	{ "1 + 2 == 3", NULL, NULL, "true", NULL },
	{ "'a' + \"b\" == 'ab'", NULL, NULL, "true", NULL },
	{ "'\\x41\\101\\u00e9\\n' == \"AA\\u00e9\\n\"", NULL, NULL, "true", NULL },
	{ "r'\\d' == '\\\\d'", NULL, NULL, "true", NULL },
	{ "'''it's''' == \"it's\"", NULL, NULL, "true", NULL },
	{ "[1, 'a', null, true, 2.5]", NULL, NULL, "[1,'a',null,true,2.5]", NULL },
	{ "0x10 == 16 && -9223372036854775808 < 0", NULL, NULL, "true", NULL },
	{ "1e3 == 1000.0 && .5 == 0.5", NULL, NULL, "true", NULL },
	/* size counts code points */
	{ "size('h\\u00e9llo')", NULL, NULL, "5", NULL },
	{ "self.size()", "'\\u65e5\\u672c'", NULL, "2", NULL },
	{ "size(self) == 2 && size([1]) == 1", "{'a':1,'b':2}", NULL, "true", NULL },
	{ "size(self)", "1", NULL, NULL, "no such overload" },
	/* equality: heterogeneous is false, deep, numeric across types */
	{ "1 == 'a'", NULL, NULL, "false", NULL },
	{ "1 != 'a'", NULL, NULL, "true", NULL },
	{ "null == null && self.a == null", "{'a':null}", NULL, "true", NULL },
	{ "1 == 1.0 && 2.0 == 2 && 1 != 1.5", NULL, NULL, "true", NULL },
	{ "self.a == self.b", "{'a':{'x':[1,{'y':'z'}]},'b':{'x':[1,{'y':'z'}]}}",
	  NULL, "true", NULL },
	{ "self.a == self.b", "{'a':{'x':[1,2]},'b':{'x':[2,1]}}", NULL, "false",
	  NULL },
	{ "[1, 'a'] == [1, 'a'] && [1] != [1, 1]", NULL, NULL, "true", NULL },
	/* ordering */
	{ "'a' < 'b' && 1 < 1.5 && 2.0 > 1 && false < true", NULL, NULL, "true",
	  NULL },
	{ "1 < 'a'", NULL, NULL, NULL, "no such overload" },
	/* && || absorb an error when the other side decides */
	{ "self.missing == 1 || true", "{}", NULL, "true", NULL },
	{ "true || self.missing == 1", "{}", NULL, "true", NULL },
	{ "self.missing == 1 && false", "{}", NULL, "false", NULL },
	{ "false && self.missing == 1", "{}", NULL, "false", NULL },
	{ "self.missing == 1 || false", "{}", NULL, NULL, "no such key: missing" },
	{ "false || self.missing == 1", "{}", NULL, NULL, "no such key: missing" },
	{ "self.missing == 1 && true", "{}", NULL, NULL, "no such key: missing" },
	{ "1 || true", NULL, NULL, "true", NULL },
	{ "1 && true", NULL, NULL, NULL, "no such overload" },
	{ "!has(self.a) || self.a > 1", "{}", NULL, "true", NULL },
	{ "!1", NULL, NULL, NULL, "no such overload" },
	/* int arithmetic: overflow and zero divisors are errors */
	{ "9223372036854775807 + 1", NULL, NULL, NULL, "integer overflow" },
	{ "-9223372036854775808 - 1", NULL, NULL, NULL, "integer overflow" },
	{ "-(-9223372036854775808)", NULL, NULL, NULL, "integer overflow" },
	{ "9223372036854775807 * 2", NULL, NULL, NULL, "integer overflow" },
	{ "-9223372036854775808 / -1", NULL, NULL, NULL, "integer overflow" },
	{ "self / 0", "1", NULL, NULL, "division by zero" },
	{ "self % 0", "1", NULL, NULL, "modulus by zero" },
	{ "7 % 3 == 1 && -7 / 2 == -3 && 2 * 3 - 1 == 5", NULL, NULL, "true", NULL },
	{ "1.5 + 2.5 == 4.0 && 1.0 / 4.0 == 0.25", NULL, NULL, "true", NULL },
	{ "1 + 1.0", NULL, NULL, NULL, "no such overload" },
	{ "[1] + [2, 3] == [1, 2, 3]", NULL, NULL, "true", NULL },
	/* selection and indexing */
	{ "self.x", "{}", NULL, NULL, "no such key: x" },
	{ "self['x']", "{}", NULL, NULL, "no such key: x" },
	{ "self.a.b", "{'a':{'b':'c'}}", NULL, "'c'", NULL },
	{ "self[1]", "[1,2]", NULL, "2", NULL },
	{ "self[3]", "[1]", NULL, NULL, "index '3' out of range in list size '1'" },
	{ "self.x", "[1]", NULL, NULL, "no such overload" },
	{ "has(self.a) && !has(self.b)", "{'a':null}", NULL, "true", NULL },
	/* Kubernetes' escaped property names */
	{ "self.__namespace__ + self.a__dash__b + self.a__dot__b + "
	  "self.x__slash__y + self.u__underscores__v + self.__36__z",
	  "{'namespace':'1','a-b':'2','a.b':'3','x/y':'4','u__v':'5','$z':'6'}",
	  NULL, "'123456'", NULL },
	{ "has(self.__if__) && !has(self.__in__)", "{'if':1}", NULL, "true", NULL },
	/* in */
	{ "'a' in ['a', 'b'] && !('c' in ['a'])", NULL, NULL, "true", NULL },
	{ "'k' in self && !('j' in self)", "{'k':1}", NULL, "true", NULL },
	{ "2 in [1, 2.0]", NULL, NULL, "true", NULL },
	/* macros over lists and map keys */
	{ "[1, 2, 3].all(x, x > 0)", NULL, NULL, "true", NULL },
	{ "[1, 2, 3].exists(x, x > 2)", NULL, NULL, "true", NULL },
	{ "[1, 2, 3].exists_one(x, x > 1)", NULL, NULL, "false", NULL },
	{ "[1, 2, 3].exists_one(x, x > 2)", NULL, NULL, "true", NULL },
	{ "[1, 2, 3].filter(x, x > 1)", NULL, NULL, "[2,3]", NULL },
	{ "[1, 2, 3].map(x, x * 2)", NULL, NULL, "[2,4,6]", NULL },
	{ "[1, 2, 3].map(x, x > 1, x * 10)", NULL, NULL, "[20,30]", NULL },
	{ "self.all(k, k.startsWith('a'))", "{'ab':1,'ac':2}", NULL, "true", NULL },
	{ "self.map(k, self[k])", "{'ab':1,'ac':2}", NULL, "[1,2]", NULL },
	{ "[[1, 2], [3]].all(l, l.all(x, x > 0))", NULL, NULL, "true", NULL },
	{ "[1].all(x, [2].all(x, x == 2)) && [1].all(x, x == 1)", NULL, NULL,
	  "true", NULL },
	/* all/exists absorb errors too; exists_one and filter do not */
	{ "[0, 1].all(x, 1 / x > 0)", NULL, NULL, NULL, "division by zero" },
	{ "[0, -1].all(x, 1 / x > 0)", NULL, NULL, "false", NULL },
	{ "[0, 1].exists(x, 1 / x > 0)", NULL, NULL, "true", NULL },
	{ "[0, 1].exists_one(x, 1 / x > 0)", NULL, NULL, NULL, "division by zero" },
	{ "[1].all(x, x)", NULL, NULL, NULL, "no such overload" },
	{ "self.all(x, true)", "1", NULL, NULL, "no such overload" },
	/* strings */
	{ "'hello'.startsWith('he') && 'hello'.endsWith('lo') && "
	  "'hello'.contains('ll') && !'hello'.contains('x')", NULL, NULL, "true",
	  NULL },
	{ "'abc123'.matches('^[a-z]+[0-9]+$') && !'abc'.matches('x')", NULL, NULL,
	  "true", NULL },
	{ "self.matches('^a')", "'ab'", NULL, "true", NULL },
	{ "self.matches('^\\\\d+(?:\\\\.\\\\w+)?\\\\s*$')", "'12.ab '", NULL,
	  "true", NULL },
	{ "self.matches('^\\\\d+$')", "'12a'", NULL, "false", NULL },
	{ "self.matches('^[a-z]+?[[:digit:]]$')", "'ab1'", NULL, "true", NULL },
	{ "'x'.matches(self)", "'\\\\q'", NULL, NULL,
	  "invalid regular expression: this escape" },
	{ "self.startsWith(1)", "'a'", NULL, NULL, "no such overload" },
	/* ternary, oldSelf */
	{ "self.a > 1 ? 'big' : 'small'", "{'a':2}", NULL, "'big'", NULL },
	{ "self ? 1 : 2", "'x'", NULL, NULL, "no such overload" },
	{ "self == oldSelf", "{'a':[1]}", "{'a':[1]}", "true", NULL },
	{ "self == oldSelf", "{'a':[1]}", "{'a':[2]}", "false", NULL },
};

START_TEST(eval)
{
	const struct eval_case *tc = &eval_cases[_i];
	struct err err = { "" };
	struct cel_program *p = cel_compile(tc->expr, &err);
	json_t *self = tc->self ? t_jq(tc->self) : json_null();
	json_t *old = tc->old ? t_jq(tc->old) : NULL, *out = NULL;
	uint64_t cost = 0;
	enum cel_outcome o;

	ck_assert_msg(p != NULL, "%s: %s", tc->expr, err.msg);
	o = cel_eval(p, self, old, CEL_PER_CALL_LIMIT, &cost, &out, &err);
	ck_assert_msg(cost > 0, "%s: no cost counted", tc->expr);
	if (tc->err) {
		ck_assert_msg(o == CEL_ERROR, "%s: want error '%s', got %d",
			      tc->expr, tc->err, (int)o);
		ck_assert_str_eq(err.msg, tc->err);
		ck_assert_ptr_null(out);
	} else {
		json_t *want = t_jq(tc->want);
		char *got = out ? json_dumps(out, JSON_ENCODE_ANY) : NULL;

		ck_assert_msg(o == CEL_OK, "%s: %s", tc->expr, err.msg);
		ck_assert_msg(json_equal(out, want) &&
			      json_typeof(out) == json_typeof(want),
			      "%s: got %s, want %s", tc->expr, got, tc->want);
		free(got);
		json_decref(want);
	}
	json_decref(out);
	json_decref(self);
	json_decref(old);
	cel_program_free(p);
}
END_TEST

struct compile_case {
	const char *expr;
	const char *err;   /* the whole message */
};

static const struct compile_case compile_cases[] = {
	{ "self.foo(1)",
	  "ERROR: <input>:1:6: undeclared reference to 'foo' (in container '')\n"
	  " | self.foo(1)\n | .....^" },
	{ "foo == 1",
	  "ERROR: <input>:1:1: undeclared reference to 'foo' (in container '')\n"
	  " | foo == 1\n | ^" },
	{ "self.name.lowerAscii() == 'a'",
	  "ERROR: <input>:1:11: function 'lowerAscii' is not supported by the "
	  "devserver's CEL subset\n | self.name.lowerAscii() == 'a'\n"
	  " | ..........^" },
	{ "quantity(self.q).isGreaterThan(quantity('1'))",
	  "ERROR: <input>:1:1: function 'quantity' is not supported by the "
	  "devserver's CEL subset\n | quantity(self.q).isGreaterThan("
	  "quantity('1'))\n | ^" },
	{ "self.a ==",
	  "ERROR: <input>:1:10: Syntax error: mismatched input '<EOF>' "
	  "expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
	  "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
	  " | self.a ==\n | .........^" },
	{ "self.a == 1 &&\n  self.b # 2",
	  "ERROR: <input>:2:10: Syntax error: token recognition error at: '#'\n"
	  " |   self.b # 2\n | .........^" },
	{ "self.a == 1 1",
	  "ERROR: <input>:1:13: Syntax error: extraneous input '1' expecting "
	  "<EOF>\n | self.a == 1 1\n | ............^" },
	{ "{'a': 1} == self",
	  "ERROR: <input>:1:1: map literals are not supported by the "
	  "devserver's CEL subset\n | {'a': 1} == self\n | ^" },
	{ "self.x == 1u",
	  "ERROR: <input>:1:11: uint literals are not supported by the "
	  "devserver's CEL subset\n | self.x == 1u\n | ..........^" },
	{ "self.x == b'a'",
	  "ERROR: <input>:1:11: bytes literals are not supported by the "
	  "devserver's CEL subset\n | self.x == b'a'\n | ..........^" },
	{ "has(self)",
	  "ERROR: <input>:1:5: invalid argument to has() macro\n"
	  " | has(self)\n | ....^" },
	{ "self.all(1, true)",
	  "ERROR: <input>:1:10: argument must be a simple name\n"
	  " | self.all(1, true)\n | .........^" },
	{ "self.size(1) == 1",
	  "ERROR: <input>:1:6: found no matching overload for 'size' applied to "
	  "2 arguments\n | self.size(1) == 1\n | .....^" },
	{ "self.?x",
	  "ERROR: <input>:1:6: optional field selection is not supported by the "
	  "devserver's CEL subset\n | self.?x\n | .....^" },
	{ "self.matches('[')",
	  "ERROR: <input>:1:14: invalid regular expression for the devserver's "
	  "CEL subset (RE2 read as POSIX ERE): a malformed pattern\n"
	  " | self.matches('[')\n | .............^" },
	{ "self.matches('\\\\bword')",
	  "ERROR: <input>:1:14: invalid regular expression for the devserver's "
	  "CEL subset (RE2 read as POSIX ERE): this escape\n"
	  " | self.matches('\\\\bword')\n | .............^" },
	{ "self.matches('(?i)a')",
	  "ERROR: <input>:1:14: invalid regular expression for the devserver's "
	  "CEL subset (RE2 read as POSIX ERE): (?...) groups and flags\n"
	  " | self.matches('(?i)a')\n | .............^" },
	{ "if == 1",
	  "ERROR: <input>:1:1: reserved identifier: if\n | if == 1\n | ^" },
	{ "'abc",
	  "ERROR: <input>:1:1: Syntax error: token recognition error at: ''abc'\n"
	  " | 'abc\n | ^" },
	{ "'\\q'",
	  "ERROR: <input>:1:2: Syntax error: invalid escape sequence in string "
	  "literal\n | '\\q'\n | .^" },
	{ "9223372036854775808 > 0",
	  "ERROR: <input>:1:1: invalid int literal\n"
	  " | 9223372036854775808 > 0\n | ^" },
	{ "  ",
	  "ERROR: <input>:1:3: Syntax error: mismatched input '<EOF>' "
	  "expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', "
	  "NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n"
	  " |   \n | ..^" },
};

START_TEST(compile)
{
	const struct compile_case *tc = &compile_cases[_i];
	struct err err = { "" };
	struct cel_program *p = cel_compile(tc->expr, &err);

	ck_assert_msg(p == NULL, "%s: compiled", tc->expr);
	ck_assert_msg(!strcmp(err.msg, tc->err), "%s:\n  got  %s\n  want %s",
		      tc->expr, err.msg, tc->err);
}
END_TEST

/* Nesting past the parser's limit is a compile error, not a crash. */
START_TEST(compile_deep)
{
	struct sbuf b = SBUF_INIT;
	struct err err = { "" };
	struct cel_program *p;

	for (int i = 0; i < 5000; i++)
		sbuf_addch(&b, '(');
	sbuf_addch(&b, '1');
	for (int i = 0; i < 5000; i++)
		sbuf_addch(&b, ')');
	p = cel_compile(sbuf_cstr(&b), &err);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err.msg, "expression recursion limit exceeded: 250"),
		      "%s", err.msg);
	sbuf_release(&b);
	/* and 240 levels are fine */
	sbuf_init(&b, 0);
	for (int i = 0; i < 240; i++)
		sbuf_addch(&b, '(');
	sbuf_addch(&b, '1');
	for (int i = 0; i < 240; i++)
		sbuf_addch(&b, ')');
	sbuf_adds(&b, " == 1");
	p = cel_compile(sbuf_cstr(&b), &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	cel_program_free(p);
	sbuf_release(&b);
	/* a long chain needs no parser recursion, but evaluation would
	 * recurse along it: refused past the same depth */
	sbuf_init(&b, 0);
	sbuf_adds(&b, "1");
	for (int i = 0; i < 20000; i++)
		sbuf_adds(&b, "+1");
	p = cel_compile(sbuf_cstr(&b), &err);
	ck_assert_ptr_null(p);
	ck_assert_msg(strstr(err.msg, "expression recursion limit exceeded: 250"),
		      "%s", err.msg);
	sbuf_reset(&b);
	sbuf_adds(&b, "self");
	for (int i = 0; i < 20000; i++)
		sbuf_adds(&b, ".a");
	p = cel_compile(sbuf_cstr(&b), &err);
	ck_assert_ptr_null(p);
	sbuf_reset(&b);
	for (int i = 0; i < 200; i++)
		sbuf_adds(&b, "1 + ");
	sbuf_adds(&b, "1 == 201");
	p = cel_compile(sbuf_cstr(&b), &err);
	ck_assert_msg(p != NULL, "%s", err.msg);
	cel_program_free(p);
	sbuf_release(&b);
}
END_TEST

/* What the compiler knows: oldSelf use and the result type. */
START_TEST(compile_facts)
{
	static const struct {
		const char *expr;
		bool old;
		enum cel_type type;
	} cases[] = {
		{ "self == oldSelf", true, CEL_TYPE_BOOL },
		{ "self.all(x, x.a == oldSelf)", true, CEL_TYPE_BOOL },
		{ "[oldSelf].all(oldSelf, oldSelf)", true, CEL_TYPE_BOOL },
		{ "self.a", false, CEL_TYPE_DYN },
		{ "self.a + 1", false, CEL_TYPE_OTHER },
		{ "'x: ' + self.a", false, CEL_TYPE_STRING },
		{ "size(self)", false, CEL_TYPE_OTHER },
		{ "self.a ? 'a' : 'b'", false, CEL_TYPE_STRING },
		{ "self.a ? 'a' : self.b", false, CEL_TYPE_DYN },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct err err = { "" };
		struct cel_program *p = cel_compile(cases[i].expr, &err);

		ck_assert_msg(p != NULL, "%s", err.msg);
		ck_assert_msg(cel_uses_old_self(p) == cases[i].old, "%s",
			      cases[i].expr);
		ck_assert_msg(cel_result_type(p) == cases[i].type, "%s: type %d",
			      cases[i].expr, (int)cel_result_type(p));
		cel_program_free(p);
	}
}
END_TEST

/* A hostile rule stops at the limit, and nothing absorbs that. */
START_TEST(cost_limit)
{
	struct err err = { "" };
	struct cel_program *p = cel_compile(
		"self.all(a, self.all(b, self.all(c, true))) || true", &err);
	json_t *self = json_array(), *out = NULL;
	uint64_t cost = 0;

	ck_assert_ptr_nonnull(p);
	for (int i = 0; i < 300; i++)
		json_array_append_new(self, json_integer(i));
	ck_assert_int_eq(cel_eval(p, self, NULL, CEL_PER_CALL_LIMIT, &cost, &out,
				  &err), CEL_COST_LIMIT);
	ck_assert_str_eq(err.msg, "operation cancelled: actual cost limit exceeded");
	ck_assert_ptr_null(out);
	ck_assert_uint_le(cost, CEL_PER_CALL_LIMIT + 1);
	/* a smaller limit stops a smaller job */
	cel_program_free(p);
	p = cel_compile("self.map(x, self.map(y, 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
			"aaaaaaaaa' + 'b')).size() > 0", &err);
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(cel_eval(p, self, NULL, 50000, &cost, &out, &err),
			 CEL_COST_LIMIT);
	cel_program_free(p);
	json_decref(self);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 2. Every rule of Kueue's published CRDs.                            */

#define QR "{'type':'QuotaReserved','status':'True'}"
#define ADM "{'type':'Admitted','status':'True'}"
#define RG(cov, extra) "{'coveredResources':" cov ",'flavors':[{'name':'f'," \
	"'resources':[{'name':'cpu','nominalQuota':1" extra "}]}]}"
#define TOL(x) "[" x "]"
#define WPC(name) "{'group':'kueue.x-k8s.io','kind':'WorkloadPriorityClass'," \
	"'name':'" name "'}"
#define PC(name) "{'group':'scheduling.k8s.io','kind':'PriorityClass'," \
	"'name':'" name "'}"

/*
 * One case per rule text (and schema type, where a rule sits on nodes of
 * different types): the value at the rule's node that passes and one
 * that fails, with the old values a transition rule needs. The values
 * satisfy the node's OpenAPI schema (the test drops `required` and every
 * other rule), so the failure is the rule's alone.
 */
struct rule_case {
	const char *rule;
	const char *type;     /* the node's schema type; NULL: any */
	const char *pass;
	const char *fail;
	const char *old_pass; /* transition rules: oldSelf; else NULL */
	const char *old_fail;
};

static const struct rule_case rule_cases[] = {
	{ "self == oldSelf", "string", "'a'", "'b'", "'a'", "'a'" },
	{ "self == oldSelf", "array", "[{'nodeLabel':'a'}]",
	  "[{'nodeLabel':'b'}]", "[{'nodeLabel':'a'}]", "[{'nodeLabel':'a'}]" },
	{ "!has(self.cohort) && has(self.resourceGroups) ? self.resourceGroups"
	  ".all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) "
	  ": true", NULL,
	  "{'resourceGroups':[" RG("['cpu']", "") "]}",
	  "{'resourceGroups':[" RG("['cpu']", ",'borrowingLimit':1") "]}",
	  NULL, NULL },
	{ "!has(self.cohortName) && has(self.resourceGroups) ? self.resourceGroups"
	  ".all(rg, rg.flavors.all(f, f.resources.all(r, !has(r.borrowingLimit)))) "
	  ": true", NULL,
	  "{'cohortName':'c','resourceGroups':["
	  RG("['cpu']", ",'borrowingLimit':1") "]}",
	  "{'resourceGroups':[" RG("['cpu']", ",'borrowingLimit':1") "]}",
	  NULL, NULL },
	{ "!has(self.preference) || (self.whenCanBorrow == 'TryNextFlavor' && "
	  "self.whenCanPreempt == 'TryNextFlavor')", NULL,
	  "{'whenCanBorrow':'TryNextFlavor','whenCanPreempt':'TryNextFlavor',"
	  "'preference':'BorrowingOverPreemption'}",
	  "{'whenCanBorrow':'MayStopSearch','whenCanPreempt':'TryNextFlavor',"
	  "'preference':'BorrowingOverPreemption'}", NULL, NULL },
	{ "!(self.reclaimWithinCohort == 'Never' && has(self.borrowWithinCohort) "
	  "&&  self.borrowWithinCohort.policy != 'Never')", NULL,
	  "{'reclaimWithinCohort':'Never','borrowWithinCohort':{'policy':'Never'}}",
	  "{'reclaimWithinCohort':'Never','borrowWithinCohort':"
	  "{'policy':'LowerPriority'}}", NULL, NULL },
	{ "self.flavors.all(x, size(x.resources) == size(self.coveredResources))",
	  NULL, RG("['cpu']", ""), RG("['cpu','memory']", ""), NULL, NULL },
	{ "!has(self.topologyName) || self.nodeLabels.size() >= 1", NULL,
	  "{'topologyName':'t','nodeLabels':{'a':'b'}}",
	  "{'topologyName':'t','nodeLabels':{}}", NULL, NULL },
	{ "!has(oldSelf.topologyName) || (has(self.topologyName) && "
	  "self.topologyName == oldSelf.topologyName)", NULL,
	  "{'topologyName':'t','nodeLabels':{'a':'b'}}",
	  "{'nodeLabels':{'a':'b'}}",
	  "{'topologyName':'t','nodeLabels':{'a':'b'}}",
	  "{'topologyName':'t','nodeLabels':{'a':'b'}}" },
	{ "self.all(x, x.effect in ['NoSchedule', 'PreferNoSchedule', "
	  "'NoExecute'])", NULL,
	  "[{'key':'k','effect':'NoSchedule'}]",
	  "[{'key':'k','effect':'NoSchedule'},{'key':'k','effect':'Sometimes'}]",
	  NULL, NULL },
	{ "self.all(x, !has(x.key) ? x.operator == 'Exists' : true)", NULL,
	  TOL("{'operator':'Exists'},{'key':'k','operator':'Equal'}"),
	  TOL("{'operator':'Equal','value':'v'}"), NULL, NULL },
	{ "self.all(x, has(x.tolerationSeconds) ? x.effect == 'NoExecute' : true)",
	  NULL, TOL("{'key':'k','effect':'NoExecute','tolerationSeconds':5}"),
	  TOL("{'key':'k','effect':'NoSchedule','tolerationSeconds':5}"),
	  NULL, NULL },
	{ "self.all(x, !has(x.operator) || x.operator in ['Equal', 'Exists'])",
	  NULL, TOL("{'key':'k','operator':'Equal','value':'v'},{'key':'j'}"),
	  TOL("{'key':'k','operator':'Maybe'}"), NULL, NULL },
	{ "self.all(x, has(x.operator) && x.operator == 'Exists' ? !has(x.value) "
	  ": true)", NULL, TOL("{'key':'k','operator':'Exists'}"),
	  TOL("{'key':'k','operator':'Exists','value':'v'}"), NULL, NULL },
	{ "self.all(x, !has(x.effect) || x.effect in ['NoSchedule', "
	  "'PreferNoSchedule', 'NoExecute'])", NULL,
	  TOL("{'key':'k','effect':'PreferNoSchedule'},{'key':'j'}"),
	  TOL("{'key':'k','effect':'Never'}"), NULL, NULL },
	{ "size(self.filter(i, size(self.filter(j, j == i)) > 1)) == 0", NULL,
	  "[{'nodeLabel':'a'},{'nodeLabel':'b'}]",
	  "[{'nodeLabel':'a'},{'nodeLabel':'b'},{'nodeLabel':'a'}]", NULL, NULL },
	{ "size(self.filter(i, i.nodeLabel == 'kubernetes.io/hostname')) == 0 || "
	  "self[size(self) - 1].nodeLabel == 'kubernetes.io/hostname'", NULL,
	  "[{'nodeLabel':'a'},{'nodeLabel':'kubernetes.io/hostname'}]",
	  "[{'nodeLabel':'kubernetes.io/hostname'},{'nodeLabel':'a'}]",
	  NULL, NULL },
	{ "self == oldSelf || (self[size(self) - 1].nodeLabel == "
	  "'kubernetes.io/hostname' && oldSelf[size(oldSelf) - 1].nodeLabel == "
	  "'kubernetes.io/hostname')", NULL,
	  "[{'nodeLabel':'a'},{'nodeLabel':'kubernetes.io/hostname'}]",
	  "[{'nodeLabel':'a'}]",
	  "[{'nodeLabel':'b'},{'nodeLabel':'kubernetes.io/hostname'}]",
	  "[{'nodeLabel':'b'}]" },
	{ "has(self.status) && has(self.status.conditions) && "
	  "self.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True') && has(self.status.admission) ? "
	  "size(self.spec.podSets) == size(self.status.admission.podSetAssignments)"
	  " : true", NULL,
	  "{'spec':{'podSets':[{'name':'a','count':1}]},'status':{'conditions':["
	  QR "],'admission':{'clusterQueue':'cq','podSetAssignments':"
	  "[{'name':'a'}]}}}",
	  "{'spec':{'podSets':[{'name':'a','count':1},{'name':'b','count':1}]},"
	  "'status':{'conditions':[" QR "],'admission':{'clusterQueue':'cq',"
	  "'podSetAssignments':[{'name':'a'}]}}}", NULL, NULL },
	{ "(has(oldSelf.status) && has(oldSelf.status.conditions) && "
	  "oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True') && has(oldSelf.spec.priorityClassSource) && "
	  "has(self.spec.priorityClassSource)) ? (oldSelf.spec.priorityClassSource "
	  "== self.spec.priorityClassSource) : true", NULL,
	  "{'spec':{'priorityClassSource':'kueue.x-k8s.io/workloadpriorityclass'}}",
	  "{'spec':{'priorityClassSource':'scheduling.k8s.io/priorityclass'}}",
	  "{'spec':{'priorityClassSource':'kueue.x-k8s.io/workloadpriorityclass'},"
	  "'status':{'conditions':[" QR "]}}",
	  "{'spec':{'priorityClassSource':'kueue.x-k8s.io/workloadpriorityclass'},"
	  "'status':{'conditions':[" QR "]}}" },
	{ "(has(oldSelf.status) && has(oldSelf.status.conditions) && "
	  "oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True') && has(oldSelf.spec.priorityClassSource) && "
	  "has(self.spec.priorityClassSource) && (self.spec.priorityClassSource != "
	  "'kueue.x-k8s.io/workloadpriorityclass') && "
	  "has(oldSelf.spec.priorityClassName) && has(self.spec.priorityClassName)) "
	  "? (oldSelf.spec.priorityClassName == self.spec.priorityClassName) : true",
	  NULL,
	  "{'spec':{'priorityClassSource':'scheduling.k8s.io/priorityclass',"
	  "'priorityClassName':'a'}}",
	  "{'spec':{'priorityClassSource':'scheduling.k8s.io/priorityclass',"
	  "'priorityClassName':'b'}}",
	  "{'spec':{'priorityClassSource':'scheduling.k8s.io/priorityclass',"
	  "'priorityClassName':'a'},'status':{'conditions':[" QR "]}}",
	  "{'spec':{'priorityClassSource':'scheduling.k8s.io/priorityclass',"
	  "'priorityClassName':'a'},'status':{'conditions':[" QR "]}}" },
	{ "((has(oldSelf.status) && has(oldSelf.status.conditions) && "
	  "oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True')) && (has(self.status) && has(self.status.conditions)"
	  " && self.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True'))) ? ((has(oldSelf.spec.queueName) == "
	  "has(self.spec.queueName)) && (!has(oldSelf.spec.queueName) || "
	  "oldSelf.spec.queueName == self.spec.queueName)) : true", NULL,
	  "{'spec':{'queueName':'q'},'status':{'conditions':[" QR "]}}",
	  "{'spec':{'queueName':'r'},'status':{'conditions':[" QR "]}}",
	  "{'spec':{'queueName':'q'},'status':{'conditions':[" QR "]}}",
	  "{'spec':{'queueName':'q'},'status':{'conditions':[" QR "]}}" },
	{ "((has(oldSelf.status) && has(oldSelf.status.conditions) && "
	  "oldSelf.status.conditions.exists(c, c.type == 'Admitted' && "
	  "c.status == 'True')) && (has(self.status) && has(self.status.conditions)"
	  " && self.status.conditions.exists(c, c.type == 'Admitted' && "
	  "c.status == 'True')))?((has(oldSelf.spec.maximumExecutionTimeSeconds)?"
	  "oldSelf.spec.maximumExecutionTimeSeconds:0) ==  "
	  "(has(self.spec.maximumExecutionTimeSeconds)?"
	  "self.spec.maximumExecutionTimeSeconds:0)):true", NULL,
	  "{'spec':{'maximumExecutionTimeSeconds':10},'status':{'conditions':["
	  ADM "]}}",
	  "{'spec':{},'status':{'conditions':[" ADM "]}}",
	  "{'spec':{'maximumExecutionTimeSeconds':10},'status':{'conditions':["
	  ADM "]}}",
	  "{'spec':{'maximumExecutionTimeSeconds':10},'status':{'conditions':["
	  ADM "]}}" },
	{ "has(self.priorityClassName) ? has(self.priority) : true", NULL,
	  "{'priorityClassName':'p','priority':1}", "{'priorityClassName':'p'}",
	  NULL, NULL },
	{ "has(self.minCount) ? self.minCount <= self.count : true", NULL,
	  "{'count':2,'minCount':2}", "{'count':1,'minCount':2}", NULL, NULL },
	{ "!has(oldSelf.clusterName) || !has(self.clusterName) || "
	  "oldSelf.clusterName == self.clusterName", NULL,
	  "{'clusterName':'a'}", "{'clusterName':'b'}",
	  "{'clusterName':'a'}", "{'clusterName':'a'}" },
	{ "!has(self.clusterName) || (!has(self.nominatedClusterNames) || "
	  "(has(self.nominatedClusterNames) && size(self.nominatedClusterNames) "
	  "== 0))", NULL,
	  "{'clusterName':'a','nominatedClusterNames':[]}",
	  "{'clusterName':'a','nominatedClusterNames':['b']}", NULL, NULL },
	{ "(has(oldSelf.status) && has(oldSelf.status.conditions) && "
	  "oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True')) ? (!has(oldSelf.spec.priorityClassRef) && "
	  "!has(self.spec.priorityClassRef)) || (has(oldSelf.spec.priorityClassRef)"
	  " && has(self.spec.priorityClassRef)) : true", NULL,
	  "{'spec':{'priorityClassRef':" WPC("p") "}}", "{'spec':{}}",
	  "{'spec':{'priorityClassRef':" WPC("p") "},'status':{'conditions':["
	  QR "]}}",
	  "{'spec':{'priorityClassRef':" WPC("p") "},'status':{'conditions':["
	  QR "]}}" },
	{ "(has(oldSelf.status) && has(oldSelf.status.conditions) && "
	  "oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True') && has(oldSelf.spec.priorityClassRef) && "
	  "has(self.spec.priorityClassRef)) ? oldSelf.spec.priorityClassRef.group "
	  "== self.spec.priorityClassRef.group : true", NULL,
	  "{'spec':{'priorityClassRef':" WPC("q") "}}",
	  "{'spec':{'priorityClassRef':" PC("p") "}}",
	  "{'spec':{'priorityClassRef':" WPC("p") "},'status':{'conditions':["
	  QR "]}}",
	  "{'spec':{'priorityClassRef':" WPC("p") "},'status':{'conditions':["
	  QR "]}}" },
	{ "(has(oldSelf.status) && has(oldSelf.status.conditions) && "
	  "oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True') && has(oldSelf.spec.priorityClassRef) && "
	  "has(self.spec.priorityClassRef)) ? oldSelf.spec.priorityClassRef.kind "
	  "== self.spec.priorityClassRef.kind : true", NULL,
	  "{'spec':{'priorityClassRef':" WPC("q") "}}",
	  "{'spec':{'priorityClassRef':{'group':'kueue.x-k8s.io',"
	  "'kind':'PriorityClass','name':'p'}}}",
	  "{'spec':{'priorityClassRef':" WPC("p") "},'status':{'conditions':["
	  QR "]}}",
	  "{'spec':{'priorityClassRef':" WPC("p") "},'status':{'conditions':["
	  QR "]}}" },
	{ "(has(oldSelf.status) && has(oldSelf.status.conditions) && "
	  "oldSelf.status.conditions.exists(c, c.type == 'QuotaReserved' && "
	  "c.status == 'True') && has(oldSelf.spec.priorityClassRef) && "
	  "has(self.spec.priorityClassRef) && self.spec.priorityClassRef.group == "
	  "'scheduling.k8s.io' && self.spec.priorityClassRef.kind == "
	  "'PriorityClass') ? oldSelf.spec.priorityClassRef.name == "
	  "self.spec.priorityClassRef.name : true", NULL,
	  "{'spec':{'priorityClassRef':" PC("a") "}}",
	  "{'spec':{'priorityClassRef':" PC("b") "}}",
	  "{'spec':{'priorityClassRef':" PC("a") "},'status':{'conditions':["
	  QR "]}}",
	  "{'spec':{'priorityClassRef':" PC("a") "},'status':{'conditions':["
	  QR "]}}" },
	{ "!has(self.priorityClassRef) || has(self.priority)", NULL,
	  "{'priorityClassRef':" WPC("p") ",'priority':1}",
	  "{'priorityClassRef':" WPC("p") "}", NULL, NULL },
	{ "(self.group == 'scheduling.k8s.io') ? self.kind == 'PriorityClass' : "
	  "true", NULL, PC("p"),
	  "{'group':'scheduling.k8s.io','kind':'WorkloadPriorityClass','name':'p'}",
	  NULL, NULL },
	{ "(self.group == 'kueue.x-k8s.io') ? self.kind == 'WorkloadPriorityClass'"
	  " : true", NULL, WPC("p"),
	  "{'group':'kueue.x-k8s.io','kind':'PriorityClass','name':'p'}",
	  NULL, NULL },
	{ "self.slices.all(x, size(x.valuesPerLevel) == size(self.levels))", NULL,
	  "{'levels':['a'],'slices':[{'domainCount':1,'podCounts':{'universal':1},"
	  "'valuesPerLevel':[{'universal':'x'}]}]}",
	  "{'levels':['a','b'],'slices':[{'domainCount':1,'podCounts':"
	  "{'universal':1},'valuesPerLevel':[{'universal':'x'}]}]}", NULL, NULL },
	{ "!has(self.podCounts.individual) || size(self.podCounts.individual) == "
	  "self.domainCount", NULL,
	  "{'domainCount':2,'podCounts':{'individual':[1,1]},'valuesPerLevel':"
	  "[{'universal':'x'}]}",
	  "{'domainCount':3,'podCounts':{'individual':[1,1]},'valuesPerLevel':"
	  "[{'universal':'x'}]}", NULL, NULL },
	{ "self.valuesPerLevel.all(x, !has(x.individual) || "
	  "size(x.individual.roots) == self.domainCount)", NULL,
	  "{'domainCount':1,'podCounts':{'universal':1},'valuesPerLevel':"
	  "[{'individual':{'roots':['a']}}]}",
	  "{'domainCount':2,'podCounts':{'universal':1},'valuesPerLevel':"
	  "[{'individual':{'roots':['a']}}]}", NULL, NULL },
	{ "[has(self.universal),has(self.individual)].filter(x,x==true).size() "
	  "== 1", NULL, "{'universal':1}", "{'universal':1,'individual':[1]}",
	  NULL, NULL },
	{ "has(self.universal) != has(self.individual)", NULL,
	  "{'universal':'x'}", "{}", NULL, NULL },
};

#define NRULE_CASES (sizeof(rule_cases) / sizeof(rule_cases[0]))

/* Drops `required` and every rule from a schema tree, in place. */
static void strip_schema(json_t *s, int depth)
{
	json_t *v;
	const char *k;

	if (!json_is_object(s) || depth > 200)
		return;
	json_object_del(s, "required");
	json_object_del(s, "x-kubernetes-validations");
	json_object_foreach(json_object_get(s, "properties"), k, v)
		strip_schema(v, depth + 1);
	strip_schema(json_object_get(s, "items"), depth + 1);
	strip_schema(json_object_get(s, "additionalProperties"), depth + 1);
}

/* The schema node at a location path (".spec.podSets[]"), borrowed. */
static json_t *node_at(json_t *s, const char *path)
{
	const char *p = path;

	while (*p && s) {
		if (!strncmp(p, "[]", 2)) {
			s = json_object_get(s, "items");
			p += 2;
		} else if (*p == '.') {
			size_t n = strcspn(++p, ".[");
			char *k = xstrndup(p, n);

			s = json_object_get(json_object_get(s, "properties"), k);
			free(k);
			p += n;
		} else {
			return NULL;
		}
	}
	return s;
}

/* The object with v (taken) at the location path, one item per list. */
static json_t *wrap_at(const char *path, json_t *v)
{
	size_t n = strlen(path);

	while (n) {
		if (n >= 2 && !strncmp(path + n - 2, "[]", 2)) {
			json_t *a = json_array();

			json_array_append_new(a, v);
			v = a;
			n -= 2;
		} else {
			size_t b = n;
			json_t *o = json_object();
			char *k;

			while (b && path[b - 1] != '.')
				b--;
			k = xstrndup(path + b, n - b);
			json_object_set_new(o, k, v);
			free(k);
			v = o;
			n = b ? b - 1 : 0;
		}
	}
	return v;
}

/* The field path the devserver prints for a location. */
static char *field_path_of(const char *loc)
{
	struct sbuf b = SBUF_INIT;

	if (!*loc)
		return xstrdup("<nil>");
	for (const char *p = loc + 1; *p; p++) {
		if (!strncmp(p, "[]", 2)) {
			sbuf_adds(&b, "[0]");
			p++;
		} else {
			sbuf_addch(&b, *p);
		}
	}
	return sbuf_detach(&b, NULL);
}

struct rule_site {
	char *where;         /* "workloads.yaml v1beta2 .spec" */
	char *loc;           /* the location path: "" (root), ".spec.x[]" */
	const json_t *root;  /* the version's schema (borrowed from docs) */
	const json_t *rule;  /* the rule object (borrowed) */
	const char *type;    /* the node's type */
};

struct sites {
	struct rule_site *v;
	size_t n;
	size_t cap;
};

static void collect(struct sites *out, const char *file, const char *ver,
		    const json_t *root, const json_t *s, struct sbuf *loc,
		    int depth)
{
	const json_t *rule, *v;
	const char *k;
	size_t i, mark;

	if (!json_is_object(s) || depth > 200)
		return;
	json_array_foreach(json_object_get(s, "x-kubernetes-validations"), i,
			   rule) {
		struct rule_site *r;

		XGROW(out->v, out->cap, out->n + 1);
		r = &out->v[out->n++];
		r->where = xasprintf("%s %s %s", file, ver,
				     loc->len ? loc->buf : "(root)");
		r->loc = xstrdup(loc->len ? loc->buf : "");
		r->root = root;
		r->rule = rule;
		r->type = json_string_value(json_object_get(s, "type"));
	}
	json_object_foreach(json_object_get(s, "properties"), k, v) {
		mark = loc->len;
		sbuf_addf(loc, ".%s", k);
		collect(out, file, ver, root, v, loc, depth + 1);
		sbuf_setlen(loc, mark);
	}
	mark = loc->len;
	sbuf_adds(loc, "[]");
	collect(out, file, ver, root, json_object_get(s, "items"), loc, depth + 1);
	sbuf_setlen(loc, mark);
}

static const struct rule_case *case_for(const struct rule_site *site)
{
	const char *text = json_string_value(json_object_get(site->rule, "rule"));

	for (size_t i = 0; i < NRULE_CASES; i++)
		if (!strcmp(rule_cases[i].rule, text) &&
		    (!rule_cases[i].type ||
		     (site->type && !strcmp(rule_cases[i].type, site->type))))
			return &rule_cases[i];
	return NULL;
}

/* Runs one value through the site's schema (only its rule kept); returns
 * the field errors' texts (new), "" when none. */
static char *run_site(const struct rule_site *site, const char *self_text,
		      const char *old_text)
{
	json_t *schema = json_deep_copy(site->root);
	json_t *node = node_at(schema, site->loc);
	json_t *rules = json_array();
	json_t *obj = wrap_at(site->loc, t_jq(self_text));
	json_t *old = old_text ? wrap_at(site->loc, t_jq(old_text)) : NULL;
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct sbuf b = SBUF_INIT;

	strip_schema(schema, 0);
	ck_assert_msg(node != NULL, "%s: no schema node", site->where);
	json_array_append(rules, (json_t *)site->rule);
	json_object_set_new(node, "x-kubernetes-validations", rules);
	schema_validate_update(obj, old, schema, &fe);
	for (size_t i = 0; i < fe.n; i++)
		sbuf_addf(&b, "%s%s", i ? "\n" : "", fe.v[i].text);
	field_errors_release(&fe);
	json_decref(obj);
	json_decref(old);
	json_decref(schema);
	return sbuf_detach(&b, NULL);
}

START_TEST(upstream_rules)
{
	static const char *const files[] = {
		"kueue.x-k8s.io_admissionchecks.yaml",
		"kueue.x-k8s.io_clusterqueues.yaml",
		"kueue.x-k8s.io_cohorts.yaml",
		"kueue.x-k8s.io_localqueues.yaml",
		"kueue.x-k8s.io_resourceflavors.yaml",
		"kueue.x-k8s.io_topologies.yaml",
		"kueue.x-k8s.io_workloadpriorityclasses.yaml",
		"kueue.x-k8s.io_workloads.yaml",
	};
	json_t *all = json_array();
	struct sites sites = { NULL, 0, 0 };
	bool used[NRULE_CASES] = { false };
	struct sbuf report = SBUF_INIT;
	size_t checked = 0;

	/* 1. every rule of every served version, where it sits */
	for (size_t f = 0; f < sizeof(files) / sizeof(files[0]); f++) {
		char *rel = xasprintf("%s/%s", UPSTREAM_CRDS, files[f]);
		char *path = t_src_path(rel);
		struct err err = { "" };
		json_t *docs = NULL, *crd, *v;
		struct field_errors fe = FIELD_ERRORS_INIT;
		size_t i;

		ck_assert_msg(yamljson_load_file(path, &docs, &err) == 0, "%s",
			      err.msg);
		json_array_append_new(all, docs);
		crd = json_array_get(docs, 0);
		/* the CRD-time check accepts all of them */
		schema_validate_crd_rules(json_object_get(crd, "spec"), &fe);
		if (fe.n)
			sbuf_addf(&report, "%s refused: %s\n", files[f],
				  t_fe_text(&fe));
		field_errors_release(&fe);
		json_array_foreach(json_object_get(json_object_get(crd, "spec"),
						   "versions"), i, v) {
			const json_t *root = json_object_get(json_object_get(v,
				"schema"), "openAPIV3Schema");
			struct sbuf loc = SBUF_INIT;

			collect(&sites, files[f] + strlen("kueue.x-k8s.io_"),
				json_string_value(json_object_get(v, "name")), root,
				root, &loc, 0);
			sbuf_release(&loc);
		}
		free(path);
		free(rel);
	}
	ck_assert_uint_ge(sites.n, 60);
	/* 2. each site: the passing value passes, the failing one fails
	 *    with exactly the rule's error; a transition rule is skipped
	 *    on create */
	for (size_t i = 0; i < sites.n; i++) {
		const struct rule_site *site = &sites.v[i];
		const struct rule_case *tc = case_for(site);
		const char *msg = json_string_value(json_object_get(site->rule,
								    "message"));
		char *fp, *want, *got;

		if (!tc) {
			sbuf_addf(&report, "%s: no case for rule %s\n", site->where,
				  json_string_value(json_object_get(site->rule,
								    "rule")));
			continue;
		}
		used[tc - rule_cases] = true;
		checked++;
		got = run_site(site, tc->pass, tc->old_pass);
		if (*got)
			sbuf_addf(&report, "%s: pass value failed:\n%s\n",
				  site->where, got);
		free(got);
		fp = field_path_of(site->loc);
		want = xasprintf("%s: Invalid value: \"%s\": %s", fp,
				 site->type ? site->type : "", msg);
		got = run_site(site, tc->fail, tc->old_fail);
		if (strcmp(got, want))
			sbuf_addf(&report, "%s: fail value:\n  got  %s\n  want %s\n",
				  site->where, got, want);
		free(got);
		if (tc->old_fail) {
			got = run_site(site, tc->fail, NULL);
			if (*got)
				sbuf_addf(&report, "%s: transition rule ran on "
					  "create: %s\n", site->where, got);
			free(got);
		}
		free(want);
		free(fp);
	}
	/* 3. no case outlives its rule */
	for (size_t i = 0; i < NRULE_CASES; i++)
		if (!used[i])
			sbuf_addf(&report, "case for a rule no CRD has: %s\n",
				  rule_cases[i].rule);
	ck_assert_msg(report.len == 0, "%zu sites, %zu checked:\n%s", sites.n,
		      checked, sbuf_cstr(&report));
	for (size_t i = 0; i < sites.n; i++) {
		free(sites.v[i].where);
		free(sites.v[i].loc);
	}
	free(sites.v);
	sbuf_release(&report);
	json_decref(all);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 3. The rules around the expression.                                 */

/* Validates obj (old: NULL on create) against schema; the errors' texts
 * joined by "\n" (new). */
static char *validate_text(const char *schema_text, const char *obj_text,
			   const char *old_text)
{
	json_t *schema = t_jq(schema_text), *obj = t_jq(obj_text);
	json_t *old = old_text ? t_jq(old_text) : NULL;
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct sbuf b = SBUF_INIT;

	schema_validate_update(obj, old, schema, &fe);
	for (size_t i = 0; i < fe.n; i++)
		sbuf_addf(&b, "%s%s", i ? "\n" : "", fe.v[i].text);
	field_errors_release(&fe);
	json_decref(schema);
	json_decref(obj);
	json_decref(old);
	return sbuf_detach(&b, NULL);
}

#define assert_validate(schema, obj, old, want) do { \
	char *got_ = validate_text((schema), (obj), (old)); \
	ck_assert_msg(!strcmp(got_, (want)), "\n  got  %s\n  want %s", got_, \
		      (want)); \
	free(got_); \
} while (0)

/* A schema with one rule (a JSON object's members, ' for ") on spec. */
#define SPEC_RULE(rule) \
	"{'type':'object','properties':{'spec':{'type':'object'," \
	"'properties':{'x':{'type':'integer'},'y':{'type':'string'}," \
	"'m':{'type':'object','additionalProperties':{'type':'string'}}}," \
	"'x-kubernetes-validations':[" rule "]}}}"

struct rules_case {
	const char *name;
	const char *schema;
	const char *obj;
	const char *want;
};

static const struct rules_case rules_cases[] = {
	{ "message", SPEC_RULE("{'rule':'self.x > 0','message':' x must be "
			       "positive '}"),
	  "{'spec':{'x':0}}",
	  "spec: Invalid value: \"object\": x must be positive" },
	{ "no message: the rule", SPEC_RULE("{'rule':'self.x > 0'}"),
	  "{'spec':{'x':0}}",
	  "spec: Invalid value: \"object\": failed rule: self.x > 0" },
	{ "passes", SPEC_RULE("{'rule':'self.x > 0'}"), "{'spec':{'x':1}}", "" },
	{ "messageExpression", SPEC_RULE("{'rule':'self.x > 0','message':'m',"
		"'messageExpression':'\\\"x is \\\" + (self.x < 0 ? "
		"\\\"negative\\\" : \\\"zero\\\")'}"),
	  "{'spec':{'x':0}}", "spec: Invalid value: \"object\": x is zero" },
	{ "messageExpression error: message", SPEC_RULE("{'rule':'self.x > 0',"
		"'message':'m','messageExpression':'self.nope'}"),
	  "{'spec':{'x':0}}", "spec: Invalid value: \"object\": m" },
	{ "messageExpression error, no message: the rule",
	  SPEC_RULE("{'rule':'self.x > 0','messageExpression':'self.nope'}"),
	  "{'spec':{'x':0}}",
	  "spec: Invalid value: \"object\": failed rule: self.x > 0" },
	{ "messageExpression empty: message", SPEC_RULE("{'rule':'self.x > 0',"
		"'message':'m','messageExpression':'\\\"  \\\"'}"),
	  "{'spec':{'x':0}}", "spec: Invalid value: \"object\": m" },
	{ "messageExpression not a string: message",
	  SPEC_RULE("{'rule':'self.x > 0','message':'m',"
		    "'messageExpression':'self.x'}"),
	  "{'spec':{'x':0}}", "spec: Invalid value: \"object\": m" },
	{ "reason Forbidden", SPEC_RULE("{'rule':'self.x > 0','message':'m',"
					"'reason':'FieldValueForbidden'}"),
	  "{'spec':{'x':0}}", "spec: Forbidden: m" },
	{ "reason Required", SPEC_RULE("{'rule':'self.x > 0','message':'m',"
				       "'reason':'FieldValueRequired'}"),
	  "{'spec':{'x':0}}", "spec: Required value: m" },
	{ "reason Duplicate", SPEC_RULE("{'rule':'self.x > 0','message':'m',"
					"'reason':'FieldValueDuplicate'}"),
	  "{'spec':{'x':0}}", "spec: Duplicate value: \"object\"" },
	{ "reason Invalid", SPEC_RULE("{'rule':'self.x > 0','message':'m',"
				      "'reason':'FieldValueInvalid'}"),
	  "{'spec':{'x':0}}", "spec: Invalid value: \"object\": m" },
	{ "fieldPath", SPEC_RULE("{'rule':'self.x > 0','message':'m',"
				 "'fieldPath':'.x'}"),
	  "{'spec':{'x':0}}", "spec.x: Invalid value: \"object\": m" },
	{ "fieldPath bracket", SPEC_RULE("{'rule':'self.x > 0','message':'m',"
					 "'fieldPath':'[\\u0027x\\u0027]'}"),
	  "{'spec':{'x':0}}", "spec.x: Invalid value: \"object\": m" },
	{ "fieldPath map key", SPEC_RULE("{'rule':'self.x > 0','message':'m',"
					 "'fieldPath':'.m[\\u0027k.1\\u0027]'}"),
	  "{'spec':{'x':0}}", "spec.m[k.1]: Invalid value: \"object\": m" },
	{ "root: <nil>", "{'type':'object','x-kubernetes-validations':"
			 "[{'rule':'has(self.spec)','message':'m'}]}",
	  "{'kind':'X'}", "<nil>: Invalid value: \"object\": m" },
	{ "root fieldPath", "{'type':'object','properties':{'spec':{'type':"
			    "'object'}},'x-kubernetes-validations':[{'rule':"
			    "'has(self.spec)','message':'m','fieldPath':'.spec'}]}",
	  "{'kind':'X'}", "spec: Invalid value: \"object\": m" },
	{ "string node", "{'type':'object','properties':{'s':{'type':'string',"
			 "'x-kubernetes-validations':[{'rule':'self.size() < 3'}]}}}",
	  "{'s':'abcd'}",
	  "s: Invalid value: \"string\": failed rule: self.size() < 3" },
	{ "list item node", "{'type':'object','properties':{'l':{'type':'array',"
			    "'items':{'type':'integer','x-kubernetes-validations':"
			    "[{'rule':'self > 0','message':'positive'}]}}}}",
	  "{'l':[1,0,2,-1]}",
	  "l[1]: Invalid value: \"integer\": positive\n"
	  "l[3]: Invalid value: \"integer\": positive" },
	{ "map value node", "{'type':'object','properties':{'m':{'type':'object',"
			    "'additionalProperties':{'type':'string',"
			    "'x-kubernetes-validations':[{'rule':'self != \\u0027\\u0027'}]}}}}",
	  "{'m':{'a':'x','b':''}}",
	  "m[b]: Invalid value: \"string\": failed rule: self != ''" },
	{ "missing key", SPEC_RULE("{'rule':'self.y == \\\"a\\\"','message':'m'}"),
	  "{'spec':{'x':0}}",
	  "spec: Invalid value: \"object\": no such key: y evaluating rule: m" },
	{ "no such overload", SPEC_RULE("{'rule':'self.x == 1 && self.m'}"),
	  "{'spec':{'x':1,'m':{}}}",
	  "spec: Invalid value: \"object\": 'no such overload': call arguments "
	  "did not match a supported operator, function or macro signature for "
	  "rule: self.x == 1 && self.m" },
	{ "null and absent values are not validated",
	  "{'type':'object','properties':{'s':{'type':'object','nullable':true,"
	  "'x-kubernetes-validations':[{'rule':'false'}]},'t':{'type':'object',"
	  "'x-kubernetes-validations':[{'rule':'false'}]}}}",
	  "{'s':null}", "" },
	{ "blocking error: the notice instead of the rules",
	  SPEC_RULE("{'rule':'self.x > 0'}"), "{'spec':{'x':'a'}}",
	  "spec.x: Invalid value: \"string\": spec.x in body must be of type "
	  "integer: \"string\"\n<nil>: Invalid value: \"null\": some validation "
	  "rules were not checked because the object was invalid; correct the "
	  "existing errors to complete validation" },
	{ "blocking error without rules: no notice",
	  "{'type':'object','properties':{'x':{'type':'integer'}}}",
	  "{'x':'a'}",
	  "x: Invalid value: \"string\": x in body must be of type integer: "
	  "\"string\"" },
	{ "a rule that does not compile", SPEC_RULE("{'rule':'self.x.foo()'}"),
	  "{'spec':{'x':0}}",
	  "spec: Invalid value: \"object\": rule compile error: compilation "
	  "failed: ERROR: <input>:1:8: undeclared reference to 'foo' (in "
	  "container '')\n | self.x.foo()\n | .......^" },
	{ "every failing rule, in order",
	  SPEC_RULE("{'rule':'self.x > 0','message':'a'},{'rule':'true'},"
		    "{'rule':'self.x > 1','message':'b'}"),
	  "{'spec':{'x':0}}",
	  "spec: Invalid value: \"object\": a\nspec: Invalid value: \"object\": b" },
};

START_TEST(rules)
{
	const struct rules_case *tc = &rules_cases[_i];
	char *got = validate_text(tc->schema, tc->obj, NULL);

	ck_assert_msg(!strcmp(got, tc->want), "%s:\n  got  %s\n  want %s",
		      tc->name, got, tc->want);
	free(got);
}
END_TEST

/* Twenty rules at about 750k each: the object's 10M budget runs out at
 * the fourteenth, which says so, and nothing after it runs. One rule
 * over the call limit stops the rules too. */
START_TEST(rules_budget)
{
	struct sbuf schema = SBUF_INIT, obj = SBUF_INIT;
	char *got;

	sbuf_adds(&schema, "{'type':'object','properties':{'l':{'type':'array',"
		  "'items':{'type':'integer'}}},'x-kubernetes-validations':[");
	for (int i = 0; i < 20; i++)
		sbuf_addf(&schema, "%s{'rule':'self.l.all(a, self.l.all(b, "
			  "true))','message':'r%d'}", i ? "," : "", i);
	sbuf_adds(&schema, ",{'rule':'false','message':'never run'}]}");
	sbuf_adds(&obj, "{'l':[");
	for (int i = 0; i < 500; i++)
		sbuf_addf(&obj, "%s%d", i ? "," : "", i);
	sbuf_adds(&obj, "]}");
	got = validate_text(schema.buf, obj.buf, NULL);
	ck_assert_str_eq(got, "<nil>: Invalid value: \"object\": validation "
			 "failed due to running out of cost budget, no further "
			 "validation rules will be run");
	free(got);
	assert_validate("{'type':'object','properties':{'l':{'type':'array'}},"
			"'x-kubernetes-validations':[{'rule':'self.l.all(a, "
			"self.l.all(b, self.l.all(c, true)))','message':'slow'},"
			"{'rule':'false','message':'never run'}]}",
			obj.buf, NULL,
			"<nil>: Invalid value: \"object\": 'operation cancelled: "
			"actual cost limit exceeded': no further validation rules "
			"will be run due to call cost exceeds limit for rule: slow");
	sbuf_release(&schema);
	sbuf_release(&obj);
}
END_TEST

/* ---- transition rules ---- */

#define TRANS_SCHEMA \
	"{'type':'object','properties':{'spec':{'type':'object','properties':{" \
	"'name':{'type':'string','x-kubernetes-validations':[{'rule':" \
	"'self == oldSelf','message':'name is immutable'}]}," \
	"'n':{'type':'integer','x-kubernetes-validations':[{'rule':'self < 10'," \
	"'message':'n < 10'}]}," \
	"'byKey':{'type':'array','x-kubernetes-list-type':'map'," \
	"'x-kubernetes-list-map-keys':['k'],'items':{'type':'object'," \
	"'properties':{'k':{'type':'string'},'v':{'type':'integer'}}," \
	"'x-kubernetes-validations':[{'rule':'self.v >= oldSelf.v'," \
	"'message':'v may only grow'}]}}," \
	"'atomic':{'type':'array','items':{'type':'object','properties':{" \
	"'v':{'type':'integer'}},'x-kubernetes-validations':[{'rule':" \
	"'self.v >= oldSelf.v','message':'never correlated'}]}," \
	"'x-kubernetes-validations':[{'rule':'size(self) >= size(oldSelf)'," \
	"'message':'atomic may only grow'}]}," \
	"'frozen':{'type':'object','x-kubernetes-map-type':'atomic'," \
	"'properties':{'v':{'type':'integer','x-kubernetes-validations':[{'rule':" \
	"'self == oldSelf','message':'not correlated under an atomic map'}]}}}" \
	"}}}}"

START_TEST(transition)
{
	const char *old = "{'spec':{'name':'a','n':1,'byKey':[{'k':'x','v':5},"
		"{'k':'y','v':5}],'atomic':[{'v':5},{'v':5}],'frozen':{'v':1}}}";

	/* 1. create: no oldSelf, the transition rules do not run */
	assert_validate(TRANS_SCHEMA, "{'spec':{'name':'b','byKey':[{'k':'x',"
			"'v':1}],'atomic':[{'v':1}]}}", NULL, "");
	/* 2. update with nothing changed */
	assert_validate(TRANS_SCHEMA, old, old, "");
	/* 3. update: by name, by map key (y is now first), the list node;
	 *    items of an atomic list and fields of an atomic map have no old
	 *    value; a new key has none either */
	assert_validate(TRANS_SCHEMA,
			"{'spec':{'name':'b','n':1,'byKey':[{'k':'y','v':4},"
			"{'k':'x','v':6},{'k':'z','v':0}],'atomic':[{'v':1}],"
			"'frozen':{'v':2}}}", old,
			"spec.name: Invalid value: \"string\": name is immutable\n"
			"spec.byKey[0]: Invalid value: \"object\": v may only grow\n"
			"spec.atomic: Invalid value: \"array\": atomic may only grow");
	/* 4. oldSelf null: no correlated value */
	assert_validate(TRANS_SCHEMA, "{'spec':{'name':'b'}}",
			"{'spec':{'name':null}}", "");
}
END_TEST

/* Ratcheting: on update, a rule without oldSelf does not fail a value
 * that was already there unchanged (its node's, or the nearest
 * correlated ancestor's); a changed value fails. */
START_TEST(ratcheting)
{
	const char *old = "{'spec':{'n':12,'atomic':[{'v':1}]}}";

	assert_validate(TRANS_SCHEMA, "{'spec':{'n':12}}", NULL,
			"spec.n: Invalid value: \"integer\": n < 10");
	assert_validate(TRANS_SCHEMA, "{'spec':{'n':12,'name':'x'}}", old, "");
	assert_validate(TRANS_SCHEMA, "{'spec':{'n':11}}", old,
			"spec.n: Invalid value: \"integer\": n < 10");
}
END_TEST

/* ---- the CRD-time check ---- */

#define CRD_SPEC(rules) \
	"{'group':'example.com','versions':[{'name':'v1','served':true," \
	"'storage':true,'schema':{'openAPIV3Schema':{'type':'object'," \
	"'properties':{'spec':{'type':'object','properties':{'x':{'type':" \
	"'integer'},'l':{'type':'array','items':{'type':'object'," \
	"'x-kubernetes-validations':[" rules "]}}}," \
	"'x-kubernetes-validations':[" rules "]}}}}}]}"

struct crd_case {
	const char *name;
	const char *spec;
	const char *want;
};

#define AT "spec.validation.openAPIV3Schema.properties[spec]."
#define ATL "spec.validation.openAPIV3Schema.properties[spec].properties[l]" \
	".items."
#define VR(rule) "apiextensions.ValidationRule{Rule:\"" rule "\", " \
	"Message:\"\", MessageExpression:\"\", Reason:(*apiextensions." \
	"FieldValueErrorReason)(nil), FieldPath:\"\", OptionalOldSelf:" \
	"(*bool)(nil)}"

static const struct crd_case crd_cases[] = {
	{ "fine", CRD_SPEC("{'rule':'self == self','message':'m',"
			   "'messageExpression':'\\\"a\\\" + \\\"b\\\"',"
			   "'reason':'FieldValueForbidden'}"), "" },
	{ "unknown function",
	  "{'versions':[{'name':'v1','schema':{'openAPIV3Schema':{'type':"
	  "'object','properties':{'spec':{'type':'object',"
	  "'x-kubernetes-validations':[{'rule':'self.foo()'}]}}}}}]}",
	  AT "x-kubernetes-validations[0].rule: Invalid value: " VR("self.foo()")
	  ": compilation failed: ERROR: <input>:1:6: undeclared reference to "
	  "'foo' (in container '')\n | self.foo()\n | .....^" },
	{ "not a bool",
	  "{'versions':[{'name':'v1','schema':{'openAPIV3Schema':{'type':"
	  "'object','properties':{'spec':{'type':'object',"
	  "'x-kubernetes-validations':[{'rule':'size(self)'}]}}}}}]}",
	  AT "x-kubernetes-validations[0].rule: Invalid value: " VR("size(self)")
	  ": cel expression must evaluate to a bool" },
	{ "shape",
	  "{'versions':[{'name':'v1','schema':{'openAPIV3Schema':{'type':"
	  "'object','properties':{'spec':{'type':'object',"
	  "'x-kubernetes-validations':[{'rule':' '},{'rule':'true','message':"
	  "'a\\nb'},{'rule':'true','reason':'Nope'},{'rule':'true',"
	  "'fieldPath':'.nope'},{'rule':'true','messageExpression':'1'}]}}}}}]}",
	  AT "x-kubernetes-validations[0].rule: Required value: rule is not "
	  "specified\n"
	  AT "x-kubernetes-validations[1].message: Invalid value: \"a\\nb\": "
	  "message must not contain line breaks\n"
	  AT "x-kubernetes-validations[2].reason: Unsupported value: \"Nope\": "
	  "supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", "
	  "\"FieldValueInvalid\", \"FieldValueRequired\"\n"
	  AT "x-kubernetes-validations[3].fieldPath: Invalid value: \".nope\": "
	  "fieldPath must be a valid path\n"
	  AT "x-kubernetes-validations[4].messageExpression: Invalid value: "
	  "apiextensions.ValidationRule{Rule:\"true\", Message:\"\", "
	  "MessageExpression:\"1\", Reason:(*apiextensions.FieldValueErrorReason)"
	  "(nil), FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: "
	  "messageExpression must evaluate to a string" },
	{ "oldSelf under an atomic list's items",
	  CRD_SPEC("{'rule':'self == oldSelf'}"),
	  ATL "x-kubernetes-validations[0].rule: Invalid value: \"self == "
	  "oldSelf\": oldSelf cannot be used on the uncorrelatable portion of "
	  "the schema within spec.validation.openAPIV3Schema.properties[spec]"
	  ".properties[l]" },
	{ "versions with different schemas: per version",
	  "{'versions':[{'name':'v1','schema':{'openAPIV3Schema':{'type':"
	  "'object'}}},{'name':'v2','schema':{'openAPIV3Schema':{'type':"
	  "'object','x-kubernetes-validations':[{'rule':'self.x ='}]}}}]}",
	  "spec.versions[1].schema.openAPIV3Schema.x-kubernetes-validations[0]"
	  ".rule: Invalid value: " VR("self.x =") ": compilation failed: ERROR: "
	  "<input>:1:8: Syntax error: token recognition error at: '='\n"
	  " | self.x =\n | .......^" },
};

START_TEST(crd)
{
	const struct crd_case *tc = &crd_cases[_i];
	json_t *spec = t_jq(tc->spec);
	struct field_errors fe = FIELD_ERRORS_INIT;
	struct sbuf b = SBUF_INIT;

	schema_validate_crd_rules(spec, &fe);
	for (size_t i = 0; i < fe.n; i++)
		sbuf_addf(&b, "%s%s", i ? "\n" : "", fe.v[i].text);
	ck_assert_msg(!strcmp(sbuf_cstr(&b), tc->want),
		      "%s:\n  got  %s\n  want %s", tc->name, sbuf_cstr(&b),
		      tc->want);
	sbuf_release(&b);
	field_errors_release(&fe);
	json_decref(spec);
}
END_TEST

/* ------------------------------------------------------------------ */
/* 4. Over HTTP, with Kueue's published CRDs.                          */

static void install_upstream(const char *file)
{
	char *rel = xasprintf("%s/%s", UPSTREAM_CRDS, file);
	char *y = ds_fixture(rel);
	struct ds_resp r = ds_call("POST",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		"application/yaml", y, NULL);

	ds_code(r, 201);
	ds_resp_free(&r);
	free(y);
	free(rel);
}

START_TEST(http_invalid)
{
	const char *cq = "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		"\"ClusterQueue\",\"metadata\":{\"name\":\"x\"},\"spec\":{"
		"\"resourceGroups\":[{\"coveredResources\":[\"cpu\"],\"flavors\":"
		"[{\"name\":\"f\",\"resources\":[{\"name\":\"cpu\",\"nominalQuota\":"
		"\"1\",\"borrowingLimit\":\"1\"}]}]}]}}";
	const json_t *cause;
	struct ds_resp r;

	ds_start(NULL);
	install_upstream("kueue.x-k8s.io_clusterqueues.yaml");
	r = POST(CQ, cq);
	ds_status(&r, 422, "Invalid", "ClusterQueue.kueue.x-k8s.io \"x\" is "
		  "invalid: spec: Invalid value: \"object\": borrowingLimit must "
		  "be nil when cohort is empty");
	/* what kubectl prints, "The ClusterQueue \"x\" is invalid: ...",
	 * comes from these details */
	ck_assert_str_eq(ds_sget(r.json, "details.kind"), "ClusterQueue");
	ck_assert_str_eq(ds_sget(r.json, "details.name"), "x");
	ck_assert_uint_eq(json_array_size(ds_jget(r.json, "details.causes")), 1);
	cause = json_array_get(ds_jget(r.json, "details.causes"), 0);
	ck_assert_str_eq(ds_sget(cause, "reason"), "FieldValueInvalid");
	ck_assert_str_eq(ds_sget(cause, "field"), "spec");
	ck_assert_str_eq(ds_sget(cause, "message"), "Invalid value: \"object\": "
			 "borrowingLimit must be nil when cohort is empty");
	ds_resp_free(&r);
	/* with a cohort it is fine */
	r = POST(CQ, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"ClusterQueue\",\"metadata\":{\"name\":\"x\"},\"spec\":{"
		 "\"cohortName\":\"c\",\"resourceGroups\":[{\"coveredResources\":"
		 "[\"cpu\"],\"flavors\":[{\"name\":\"f\",\"resources\":[{\"name\":"
		 "\"cpu\",\"nominalQuota\":\"1\",\"borrowingLimit\":\"1\"}]}]}]}}");
	ds_code(r, 201);
	ds_resp_free(&r);
	ds_stop();
}
END_TEST

/* A transition rule through PATCH: the stored object is oldSelf. */
START_TEST(http_transition)
{
	const char *rf = "/apis/kueue.x-k8s.io/v1beta2/resourceflavors";
	struct ds_resp r;

	ds_start(NULL);
	install_upstream("kueue.x-k8s.io_resourceflavors.yaml");
	r = POST(rf, "{\"apiVersion\":\"kueue.x-k8s.io/v1beta2\",\"kind\":"
		 "\"ResourceFlavor\",\"metadata\":{\"name\":\"f\"},\"spec\":{"
		 "\"topologyName\":\"t\",\"nodeLabels\":{\"a\":\"b\"}}}");
	ds_code(r, 201);
	ds_resp_free(&r);
	r = PATCH("/apis/kueue.x-k8s.io/v1beta2/resourceflavors/f", MERGE,
		  "{\"spec\":{\"topologyName\":\"u\"}}");
	ds_status(&r, 422, "Invalid", "ResourceFlavor.kueue.x-k8s.io \"f\" is "
		  "invalid: spec: Invalid value: \"object\": topologyName is "
		  "immutable when topologyName is set");
	ds_resp_free(&r);
	r = PATCH("/apis/kueue.x-k8s.io/v1beta2/resourceflavors/f", MERGE,
		  "{\"spec\":{\"nodeLabels\":{\"a\":\"c\"}}}");
	ds_code(r, 200);
	ds_resp_free(&r);
	ds_stop();
}
END_TEST

START_TEST(http_crd_refused)
{
	struct ds_resp r;

	ds_start(NULL);
	r = ds_call("POST",
		"/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
		"application/json",
		"{\"apiVersion\":\"apiextensions.k8s.io/v1\",\"kind\":"
		"\"CustomResourceDefinition\",\"metadata\":{\"name\":"
		"\"foos.example.com\"},\"spec\":{\"group\":\"example.com\","
		"\"scope\":\"Namespaced\",\"names\":{\"plural\":\"foos\",\"kind\":"
		"\"Foo\"},\"versions\":[{\"name\":\"v1\",\"served\":true,"
		"\"storage\":true,\"schema\":{\"openAPIV3Schema\":{\"type\":"
		"\"object\",\"properties\":{\"spec\":{\"type\":\"object\","
		"\"x-kubernetes-validations\":[{\"rule\":"
		"\"self.name.lowerAscii() == 'a'\"}]}}}}}]}}", NULL);
	ds_status(&r, 422, "Invalid", "CustomResourceDefinition.apiextensions"
		  ".k8s.io \"foos.example.com\" is invalid: spec.validation"
		  ".openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"
		  ".rule: Invalid value: apiextensions.ValidationRule{Rule:\"self"
		  ".name.lowerAscii() == 'a'\", Message:\"\", MessageExpression:"
		  "\"\", Reason:(*apiextensions.FieldValueErrorReason)(nil), "
		  "FieldPath:\"\", OptionalOldSelf:(*bool)(nil)}: compilation "
		  "failed: ERROR: <input>:1:11: function 'lowerAscii' is not "
		  "supported by the devserver's CEL subset\n | self.name"
		  ".lowerAscii() == 'a'\n | ..........^");
	ds_resp_free(&r);
	r = GET("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
		"foos.example.com");
	ds_code(r, 404);
	ds_resp_free(&r);
	ds_stop();
}
END_TEST

Suite *cel_suite(void)
{
	Suite *s = suite_create("cel");
	TCase *tc = tcase_create("eval");

	tcase_add_loop_test(tc, eval, 0,
			    (int)(sizeof(eval_cases) / sizeof(eval_cases[0])));
	tcase_add_loop_test(tc, compile, 0, (int)(sizeof(compile_cases) /
						  sizeof(compile_cases[0])));
	tcase_add_test(tc, compile_deep);
	tcase_add_test(tc, compile_facts);
	tcase_add_test(tc, cost_limit);
	suite_add_tcase(s, tc);
	tc = tcase_create("upstream");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, upstream_rules);
	suite_add_tcase(s, tc);
	tc = tcase_create("rules");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, rules, 0,
			    (int)(sizeof(rules_cases) / sizeof(rules_cases[0])));
	tcase_add_test(tc, rules_budget);
	tcase_add_test(tc, transition);
	tcase_add_test(tc, ratcheting);
	tcase_add_loop_test(tc, crd, 0,
			    (int)(sizeof(crd_cases) / sizeof(crd_cases[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("http");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, http_invalid);
	tcase_add_test(tc, http_transition);
	tcase_add_test(tc, http_crd_refused);
	suite_add_tcase(s, tc);
	return s;
}
