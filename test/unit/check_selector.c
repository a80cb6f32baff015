/* Suite "selector": the string form (parse, print, errors), matching for
 * every operator, metav1 LabelSelector validation, operator names. */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/selector.h"
#include "suites.h"
#include "test/support/support.h"

/* Builds a label map from "k=v,k2=v2" ("" is the empty map; "k=" gives k
 * the empty value). */
static void t_labels(struct smap *m, const char *text)
{
	char *copy = xstrdup(text), *save = NULL;

	for (char *kv = strtok_r(copy, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');

		ck_assert_msg(eq != NULL, "bad labels '%s'", text);
		*eq = '\0';
		smap_set(m, kv, eq + 1);
	}
	free(copy);
}

/* ---- parse and print ----------------------------------------------- */

#define UP "unable to parse requirement: "
#define M_QNAME "must consist of alphanumeric characters, '-', '_' or '.', " \
	"and must start and end with an alphanumeric character (e.g. " \
	"'MyName',  or 'my.name',  or '123-abc', regex used for validation " \
	"is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
#define M_VALUE "a valid label must be an empty string or consist of " \
	"alphanumeric characters, '-', '_' or '.', and must start and end " \
	"with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or " \
	"'12345', regex used for validation is " \
	"'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
#define M_INT "for 'Gt', 'Lt' operators, the value must be an integer"
#define M_OPS "expected: in, notin, =, ==, !=, gt, lt"

static const struct {
	const char *in;
	const char *out;   /* canonical form; NULL when parsing fails */
	const char *error; /* the whole message when parsing fails */
	size_t nreqs;
} parse_cases[] = {
	{ "", "", NULL, 0 },
	{ "  \t ", "", NULL, 0 },
	{ "a=b", "a=b", NULL, 1 },
	{ "a==b", "a=b", NULL, 1 },
	{ "a!=b", "a!=b", NULL, 1 },
	{ "a", "a", NULL, 1 },
	{ "!a", "!a", NULL, 1 },
	{ "! a", "!a", NULL, 1 },
	{ "a in (b,c)", "a in (b,c)", NULL, 1 },
	{ "a in (c, b)", "a in (b,c)", NULL, 1 },
	{ "a in (b)", "a=b", NULL, 1 },
	{ "a in (b,b)", "a=b", NULL, 1 },
	{ "a notin (b, c)", "a notin (b,c)", NULL, 1 },
	{ "a notin (b)", "a!=b", NULL, 1 },
	{ " a = b , c ", "a=b,c", NULL, 2 },
	{ "z=1,a=2", "a=2,z=1", NULL, 2 },
	{ "a=b,!c,d notin (e)", "a=b,!c,d!=e", NULL, 3 },
	{ "a!=c,a=b", "a=b,a!=c", NULL, 2 },
	{ "a=", "a=", NULL, 1 },
	{ "a=,b", "a=,b", NULL, 2 },
	{ "a in ()", "a=", NULL, 1 },
	{ "a in (,b)", "a in (,b)", NULL, 1 },
	{ "a in (b,)", "a in (,b)", NULL, 1 },
	{ "a in (,)", "a=", NULL, 1 },
	{ "x in (foo,,baz),y,z notin ()", "x in (,baz,foo),y,z!=", NULL, 3 },
	{ "in=notin", "in=notin", NULL, 1 },
	{ "a in (in,notin)", "a in (in,notin)", NULL, 1 },
	{ "example.com/a=b.c-d_e", "example.com/a=b.c-d_e", NULL, 1 },
	{ "a>5", "a>5", NULL, 1 },
	{ "a<10", "a<10", NULL, 1 },
	{ "a>+5", "a>+5", NULL, 0 /* "+5" is no label value */ },
	/* errors */
	{ "a b", NULL, UP "found 'b', " M_OPS, 0 },
	{ "a in b", NULL, UP "found 'b' expected: '('", 0 },
	{ "a notin", NULL, UP "found '' expected: '('", 0 },
	{ "a in (b", NULL, UP "found '', expected: ',' or ')'", 0 },
	{ "a in (b c)", NULL, UP "found 'c', expected: ',' or ')'", 0 },
	{ "a in (b,c", NULL, UP "found '', expected: ',' or ')'", 0 },
	{ "a in (=)", NULL,
	  UP "found '=', expected: ',', ')' or identifier", 0 },
	{ "a in (b,=)", NULL, UP "found '=', expected: ',', or identifier", 0 },
	/* Kubernetes consumes the second of ",," before reading on. */
	{ "a in (b,,)", NULL, UP "found ')', expected: ',', or identifier", 0 },
	{ "a in (,,)", NULL, UP "found ')', expected: ',', or identifier", 0 },
	{ "a in (,,b)", "a in (,b)", NULL, 1 },
	{ "a in (b))", NULL, "found ')', expected: ',' or 'end of string'", 0 },
	{ "a=b c", NULL, "found 'c', expected: ',' or 'end of string'", 0 },
	{ "a=b=c", NULL, "found '=', expected: ',' or 'end of string'", 0 },
	{ "!a=b", NULL, "found '=', expected: ',' or 'end of string'", 0 },
	{ "a,", NULL, "found '', expected: identifier after ','", 0 },
	{ "a,,b", NULL, "found ',', expected: identifier after ','", 0 },
	{ ",a", NULL,
	  "found ',', expected: !, identifier, or 'end of string'", 0 },
	{ "(a)", NULL,
	  "found '(', expected: !, identifier, or 'end of string'", 0 },
	{ "!", NULL, UP "found '', expected: identifier", 0 },
	{ "!!a", NULL, UP "found '!', expected: identifier", 0 },
	{ "a=(b)", NULL, UP "found '(', expected: identifier", 0 },
	{ "a<=5", NULL, UP "found '=', expected: identifier", 0 },
	{ "app:monolith", NULL,
	  UP "<nil>: Invalid value: \"app:monolith\": name part " M_QNAME, 0 },
	{ "a=b_", NULL,
	  UP "values[0][a]: Invalid value: \"b_\": " M_VALUE, 0 },
	{ "a in (ok,-x)", NULL,
	  UP "values[0][a]: Invalid value: \"-x\": " M_VALUE, 0 },
	{ "a>x", NULL, UP "values[0]: Invalid value: \"x\": " M_INT, 0 },
	{ "a>-1", NULL, UP "values[0][a]: Invalid value: \"-1\": " M_VALUE, 0 },
	{ "a>_", NULL,
	  UP "[values[0]: Invalid value: \"_\": " M_INT
	  ", values[0][a]: Invalid value: \"_\": " M_VALUE "]", 0 },
};

START_TEST(parse_round_trip)
{
	struct label_selector sel = LABEL_SELECTOR_INIT;
	struct err err = { "" };
	int rc;

	/* Whatever sel held before is replaced on success, kept on error. */
	label_selector_add(&sel, "old", SEL_EXISTS, NULL, 0);
	rc = label_selector_parse(parse_cases[_i].in, &sel, &err);
	if (parse_cases[_i].out && parse_cases[_i].nreqs) {
		char *s, *s2;
		struct label_selector again = LABEL_SELECTOR_INIT;

		ck_assert_msg(rc == 0, "'%s': %s", parse_cases[_i].in, err.msg);
		ck_assert_uint_eq(sel.n, parse_cases[_i].nreqs);
		s = label_selector_string(&sel);
		ck_assert_str_eq(s, parse_cases[_i].out);
		/* the canonical form parses to the same canonical form */
		ck_assert_int_eq(label_selector_parse(s, &again, &err), 0);
		s2 = label_selector_string(&again);
		ck_assert_str_eq(s2, s);
		free(s);
		free(s2);
		label_selector_release(&again);
	} else if (parse_cases[_i].out && !strcmp(parse_cases[_i].out, "")) {
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(sel.n, 0);
	} else if (parse_cases[_i].out) {
		/* accepted by the grammar, refused by value checks */
		ck_assert_int_eq(rc, -1);
	} else {
		ck_assert_msg(rc == -1, "'%s' parsed", parse_cases[_i].in);
		ck_assert_str_eq(err.msg, parse_cases[_i].error);
		ck_assert_uint_eq(sel.n, 1);
		ck_assert_str_eq(sel.reqs[0].key, "old");
	}
	label_selector_release(&sel);
}
END_TEST

START_TEST(parse_sorts_values_and_keys)
{
	struct label_selector sel = LABEL_SELECTOR_INIT;
	struct err err = { "" };

	ck_assert_int_eq(label_selector_parse("b in (z,y,y,x),a", &sel, &err),
			 0);
	ck_assert_uint_eq(sel.n, 2);
	ck_assert_str_eq(sel.reqs[0].key, "a");
	ck_assert_int_eq(sel.reqs[0].op, SEL_EXISTS);
	ck_assert_uint_eq(sel.reqs[0].nvalues, 0);
	ck_assert_str_eq(sel.reqs[1].key, "b");
	ck_assert_int_eq(sel.reqs[1].op, SEL_IN);
	ck_assert_uint_eq(sel.reqs[1].nvalues, 3);
	ck_assert_str_eq(sel.reqs[1].values[0], "x");
	ck_assert_str_eq(sel.reqs[1].values[2], "z");
	label_selector_release(&sel);
	ck_assert_ptr_null(sel.reqs);
	label_selector_release(&sel); /* twice is harmless */
}
END_TEST

START_TEST(selector_text_keeps_order)
{
	struct label_selector sel = LABEL_SELECTOR_INIT;
	static const char *const vals[] = { "c", "a", "b" };
	char *s;

	label_selector_add(&sel, "z", SEL_NOT_IN, vals, 3);
	label_selector_add(&sel, "y", SEL_GT, vals + 1, 1);
	label_selector_add(&sel, "m", SEL_IN, NULL, 0);
	label_selector_add(&sel, "m", SEL_DOES_NOT_EXIST, NULL, 0);
	s = label_selector_string(&sel);
	ck_assert_str_eq(s, "m in (),!m,y>a,z notin (a,b,c)");
	ck_assert_str_eq(sel.reqs[0].key, "z");
	ck_assert_str_eq(sel.reqs[0].values[0], "c");
	free(s);
	label_selector_release(&sel);
	s = label_selector_string(&sel);
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(copy_is_deep)
{
	struct label_selector a = LABEL_SELECTOR_INIT, b = LABEL_SELECTOR_INIT;
	struct err err = { "" };
	char *sa, *sb;

	ck_assert_int_eq(label_selector_parse("x in (1,2),!y", &a, &err), 0);
	label_selector_add(&b, "stale", SEL_EXISTS, NULL, 0);
	label_selector_copy(&b, &a);
	label_selector_copy(&b, &b); /* onto itself: a no-op, not a free */
	sa = label_selector_string(&a);
	label_selector_release(&a);
	sb = label_selector_string(&b);
	ck_assert_str_eq(sb, sa);
	ck_assert_str_eq(sb, "x in (1,2),!y");
	free(sa);
	free(sb);
	label_selector_release(&b);
}
END_TEST

/* ---- matching ------------------------------------------------------ */

static const struct {
	const char *sel;
	const char *labels;
	bool want;
} match_cases[] = {
	{ "", "", true },
	{ "", "a=b", true },
	{ "a=b", "a=b", true },
	{ "a=b", "a=c", false },
	{ "a=b", "", false },
	{ "a=b", "x=b", false },
	{ "a==b", "a=b,c=d", true },
	{ "a!=b", "", true },
	{ "a!=b", "a=b", false },
	{ "a!=b", "a=c", true },
	{ "a in (b,c)", "a=c", true },
	{ "a in (b,c)", "a=d", false },
	{ "a in (b,c)", "", false },
	{ "a notin (b,c)", "", true },
	{ "a notin (b,c)", "a=b", false },
	{ "a notin (b,c)", "a=d", true },
	{ "a", "a=", true },
	{ "a", "", false },
	{ "!a", "", true },
	{ "!a", "a=x", false },
	{ "a=", "a=", true },
	{ "a=", "", false },
	{ "a in (,b)", "a=", true },
	{ "a>5", "a=6", true },
	{ "a>5", "a=5", false },
	{ "a>5", "a=x", false },
	{ "a>5", "", false },
	{ "a>5", "a=+7", true },
	{ "a>5", "a=99999999999999999999", false },
	{ "a>5", "a=5.5", false },
	{ "a>5", "a= 6", false },
	{ "a<5", "a=4", true },
	{ "a<5", "a=-3", true },
	{ "a<5", "a=5", false },
	{ "a<0", "a=-9223372036854775808", true },
	{ "a=b,c", "a=b,c=", true },
	{ "a=b,c", "a=b", false },
	{ "a=b,!c,d notin (e)", "a=b,d=f", true },
	{ "a=b,!c,d notin (e)", "a=b,d=e", false },
};

START_TEST(matching)
{
	struct label_selector sel = LABEL_SELECTOR_INIT;
	struct smap labels = SMAP_INIT;
	struct err err = { "" };

	ck_assert_msg(label_selector_parse(match_cases[_i].sel, &sel,
					   &err) == 0,
		      "%s: %s", match_cases[_i].sel, err.msg);
	t_labels(&labels, match_cases[_i].labels);
	ck_assert_msg(label_selector_matches(&sel, &labels) ==
		      match_cases[_i].want, "'%s' on {%s}",
		      match_cases[_i].sel, match_cases[_i].labels);
	label_selector_release(&sel);
	smap_release(&labels);
}
END_TEST

/* Requirements the parser cannot produce but a decoder can. */
START_TEST(odd_requirements)
{
	struct sel_req r = { (char *)"a", SEL_GT, NULL, 0 };
	struct smap labels = SMAP_INIT;
	char *two[] = { (char *)"1", (char *)"2" };
	char *word[] = { (char *)"x" };

	smap_set(&labels, "a", "10");
	ck_assert(!sel_req_matches(&r, &labels));    /* Gt without a value */
	r.values = two;
	r.nvalues = 2;
	ck_assert(!sel_req_matches(&r, &labels));    /* Gt with two values */
	r.values = word;
	r.nvalues = 1;
	ck_assert(!sel_req_matches(&r, &labels));    /* Gt non-integer */
	r.op = SEL_IN;
	r.nvalues = 0;
	ck_assert(!sel_req_matches(&r, &labels));    /* In () */
	r.op = SEL_NOT_IN;
	ck_assert(sel_req_matches(&r, &labels));     /* NotIn () */
	ck_assert(sel_req_matches(&r, NULL));
	smap_release(&labels);
}
END_TEST

/* ---- validation ---------------------------------------------------- */

#define P "spec.namespaceSelector.matchExpressions[0]"
#define E_REQ P ".values: Required value: must be specified when " \
	"`operator` is 'In' or 'NotIn'"
#define E_FORB P ".values: Forbidden: may not be specified when " \
	"`operator` is 'Exists' or 'DoesNotExist'"
#define E_OP(op) P ".operator: Invalid value: \"" op "\": " \
	"not a valid selector operator"
#define M_EMPTY_NAME "name part must be non-empty; name part " M_QNAME

static const struct {
	const char *key;
	enum sel_op op;
	const char *values[3]; /* NULL-terminated */
	const char *want[3];   /* NULL-terminated error texts */
} valid_cases[] = {
	{ "kubernetes.io/metadata.name", SEL_NOT_IN,
	  { "kube-system", "kueue-system", NULL }, { NULL } },
	{ "a", SEL_IN, { "", NULL }, { NULL } },
	{ "a", SEL_EXISTS, { NULL }, { NULL } },
	{ "a", SEL_DOES_NOT_EXIST, { NULL }, { NULL } },
	{ "a", SEL_IN, { NULL },
	  { E_REQ, NULL } },
	{ "a", SEL_NOT_IN, { NULL },
	  { E_REQ, NULL } },
	{ "a", SEL_EXISTS, { "x", NULL },
	  { E_FORB, NULL } },
	{ "a", SEL_DOES_NOT_EXIST, { "x", NULL },
	  { E_FORB, NULL } },
	{ "a", SEL_GT, { "1", NULL },
	  { E_OP("Gt"), NULL } },
	{ "a", SEL_LT, { "1", NULL },
	  { E_OP("Lt"), NULL } },
	{ "-a", SEL_IN, { "b", NULL },
	  { P ".key: Invalid value: \"-a\": name part " M_QNAME, NULL } },
	{ "", SEL_EXISTS, { NULL },
	  { P ".key: Invalid value: \"\": " M_EMPTY_NAME, NULL } },
	{ "a", SEL_IN, { "ok", "b_", NULL },
	  { P ".values[1]: Invalid value: \"b_\": " M_VALUE, NULL } },
	{ "a/", SEL_NOT_IN, { NULL },
	  { E_REQ, P ".key: Invalid value: \"a/\": " M_EMPTY_NAME, NULL } },
};

START_TEST(validation)
{
	struct label_selector sel = LABEL_SELECTOR_INIT;
	struct field_errors fe = FIELD_ERRORS_INIT;
	size_t nv = 0, nw = 0;

	while (valid_cases[_i].values[nv])
		nv++;
	label_selector_add(&sel, valid_cases[_i].key, valid_cases[_i].op,
			   valid_cases[_i].values, nv);
	label_selector_validate(&sel, "spec.namespaceSelector", &fe);
	while (nw < 3 && valid_cases[_i].want[nw])
		nw++;
	ck_assert_msg(fe.n == nw, "want %zu errors, got: %s", nw,
		      t_fe_text(&fe));
	for (size_t i = 0; i < nw; i++)
		ck_assert_str_eq(fe.v[i].text, valid_cases[_i].want[i]);
	field_errors_release(&fe);
	label_selector_release(&sel);
}
END_TEST

START_TEST(validation_paths)
{
	struct label_selector sel = LABEL_SELECTOR_INIT;
	struct field_errors fe = FIELD_ERRORS_INIT;
	static const char *const v[] = { "x" };

	label_selector_add(&sel, "good", SEL_IN, v, 1);
	label_selector_add(&sel, "good", SEL_EXISTS, v, 1);
	label_selector_validate(&sel, "spec.sel", &fe);
	ck_assert_uint_eq(fe.n, 1);
	ck_assert_str_eq(fe.v[0].path, "spec.sel.matchExpressions[1].values");
	field_errors_release(&fe);
	label_selector_validate(&sel, "", &fe);
	ck_assert_uint_eq(fe.n, 1);
	ck_assert_str_eq(fe.v[0].path, "matchExpressions[1].values");
	field_errors_release(&fe);
	label_selector_release(&sel);
}
END_TEST

/* ---- operator names ------------------------------------------------ */

static const struct {
	const char *name;
	bool allow_gt_lt;
	int rc;
	enum sel_op op;
} op_cases[] = {
	{ "In", false, 0, SEL_IN },
	{ "NotIn", false, 0, SEL_NOT_IN },
	{ "Exists", false, 0, SEL_EXISTS },
	{ "DoesNotExist", false, 0, SEL_DOES_NOT_EXIST },
	{ "Gt", true, 0, SEL_GT },
	{ "Lt", true, 0, SEL_LT },
	{ "Gt", false, -1, SEL_IN },
	{ "Lt", false, -1, SEL_IN },
	{ "in", true, -1, SEL_IN },
	{ "Equals", true, -1, SEL_IN },
	{ "", true, -1, SEL_IN },
};

START_TEST(operator_names)
{
	enum sel_op op = SEL_IN;
	int rc = sel_op_parse(op_cases[_i].name, op_cases[_i].allow_gt_lt, &op);

	ck_assert_int_eq(rc, op_cases[_i].rc);
	if (rc == 0) {
		ck_assert_int_eq(op, op_cases[_i].op);
		ck_assert_str_eq(sel_op_name(op), op_cases[_i].name);
	}
}
END_TEST

Suite *selector_suite(void)
{
	Suite *s = suite_create("selector");
	TCase *tc = tcase_create("parse");

	tcase_add_loop_test(tc, parse_round_trip, 0,
			    sizeof(parse_cases) / sizeof(parse_cases[0]));
	tcase_add_test(tc, parse_sorts_values_and_keys);
	tcase_add_test(tc, selector_text_keeps_order);
	tcase_add_test(tc, copy_is_deep);
	suite_add_tcase(s, tc);
	tc = tcase_create("matching");
	tcase_add_loop_test(tc, matching, 0,
			    sizeof(match_cases) / sizeof(match_cases[0]));
	tcase_add_test(tc, odd_requirements);
	suite_add_tcase(s, tc);
	tc = tcase_create("validation");
	tcase_add_loop_test(tc, validation, 0,
			    sizeof(valid_cases) / sizeof(valid_cases[0]));
	tcase_add_test(tc, validation_paths);
	suite_add_tcase(s, tc);
	tc = tcase_create("operators");
	tcase_add_loop_test(tc, operator_names, 0,
			    sizeof(op_cases) / sizeof(op_cases[0]));
	suite_add_tcase(s, tc);
	return s;
}
