/* Suite "names": DNS-1123 labels/subdomains, qualified names, label values
 * (predicates at the length limits, and Kubernetes' exact messages). */
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "model/names.h"
#include "suites.h"
#include "test/support/support.h"

/* A test input: pre + fill repeated nfill times + post. */
struct gen {
	const char *pre;
	char fill;
	size_t nfill;
	const char *post;
};

static char *gen_str(const struct gen *g)
{
	size_t a = strlen(g->pre), b = strlen(g->post);
	char *s = xmalloc(a + g->nfill + b + 1);

	memcpy(s, g->pre, a);
	memset(s + a, g->fill, g->nfill);
	memcpy(s + a + g->nfill, g->post, b + 1);
	return s;
}

/* ---- predicates ---------------------------------------------------- */

static const struct {
	struct gen in;
	bool label, subdomain, qname, value;
} pred_cases[] = {
	{ { "a", 0, 0, "" }, true, true, true, true },
	{ { "0", 0, 0, "" }, true, true, true, true },
	{ { "", 0, 0, "" }, false, false, false, true },
	{ { "abc-123", 0, 0, "" }, true, true, true, true },
	{ { "a--b", 0, 0, "" }, true, true, true, true },
	{ { "-abc", 0, 0, "" }, false, false, false, false },
	{ { "abc-", 0, 0, "" }, false, false, false, false },
	{ { "ABC", 0, 0, "" }, false, false, true, true },
	{ { "a.b", 0, 0, "" }, false, true, true, true },
	{ { "1.2.3", 0, 0, "" }, false, true, true, true },
	{ { "a..b", 0, 0, "" }, false, false, true, true },
	{ { ".a", 0, 0, "" }, false, false, false, false },
	{ { "a.", 0, 0, "" }, false, false, false, false },
	{ { "a.-b", 0, 0, "" }, false, false, true, true },
	{ { "a_b", 0, 0, "" }, false, false, true, true },
	{ { "_a", 0, 0, "" }, false, false, false, false },
	{ { "a_", 0, 0, "" }, false, false, false, false },
	{ { "a b", 0, 0, "" }, false, false, false, false },
	{ { "\xc3\xbc", 0, 0, "" }, false, false, false, false },
	{ { "a/b", 0, 0, "" }, false, false, true, false },
	{ { "example.com/MyName", 0, 0, "" }, false, false, true, false },
	{ { "kubernetes.io/metadata.name", 0, 0, "" },
	  false, false, true, false },
	{ { "Example.com/a", 0, 0, "" }, false, false, false, false },
	{ { "/a", 0, 0, "" }, false, false, false, false },
	{ { "a/", 0, 0, "" }, false, false, false, false },
	{ { "a/b/c", 0, 0, "" }, false, false, false, false },
	{ { "a_b/c", 0, 0, "" }, false, false, false, false },
	/* length limits: 63 for labels, names and values, 253 for subdomains */
	{ { "", 'a', 63, "" }, true, true, true, true },
	{ { "", 'a', 64, "" }, false, true, false, false },
	{ { "", 'a', 64, ".com" }, false, true, false, false },
	{ { "", 'a', 253, "" }, false, true, false, false },
	{ { "", 'a', 254, "" }, false, false, false, false },
	{ { "", 'a', 251, ".b" }, false, true, false, false },
	{ { "", 'a', 252, ".b" }, false, false, false, false },
	{ { "", 'p', 253, "/name" }, false, false, true, false },
	{ { "", 'p', 254, "/name" }, false, false, false, false },
	{ { "example.com/", 'n', 63, "" }, false, false, true, false },
	{ { "example.com/", 'n', 64, "" }, false, false, false, false },
	{ { "A", 'b', 62, "" }, false, false, true, true },
	{ { "A", 'b', 63, "" }, false, false, false, false },
};

START_TEST(predicates)
{
	char *s = gen_str(&pred_cases[_i].in);

	ck_assert_msg(is_dns1123_label(s) == pred_cases[_i].label,
		      "label(%s)", s);
	ck_assert_msg(is_dns1123_subdomain(s) == pred_cases[_i].subdomain,
		      "subdomain(%s)", s);
	ck_assert_msg(is_qualified_name(s) == pred_cases[_i].qname,
		      "qualified name(%s)", s);
	ck_assert_msg(is_label_value(s) == pred_cases[_i].value,
		      "label value(%s)", s);
	free(s);
}
END_TEST

START_TEST(null_is_never_valid)
{
	ck_assert(!is_dns1123_label(NULL));
	ck_assert(!is_dns1123_subdomain(NULL));
	ck_assert(!is_qualified_name(NULL));
	ck_assert(!is_label_value(NULL));
}
END_TEST

/* ---- messages ------------------------------------------------------ */

#define RE_LABEL "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define RE_SUB RE_LABEL "(\\." RE_LABEL ")*"
#define RE_QNAME "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define M_LABEL "a lowercase RFC 1123 label must consist of lower case " \
	"alphanumeric characters or '-', and must start and end with an " \
	"alphanumeric character (e.g. 'my-name',  or '123-abc', regex used " \
	"for validation is '" RE_LABEL "')"
#define M_SUB "a lowercase RFC 1123 subdomain must consist of lower case " \
	"alphanumeric characters, '-' or '.', and must start and end with an " \
	"alphanumeric character (e.g. 'example.com', regex used for " \
	"validation is '" RE_SUB "')"
#define M_QNAME "must consist of alphanumeric characters, '-', '_' or '.', " \
	"and must start and end with an alphanumeric character (e.g. " \
	"'MyName',  or 'my.name',  or '123-abc', regex used for validation " \
	"is '" RE_QNAME "')"
#define M_VALUE "a valid label must be an empty string or consist of " \
	"alphanumeric characters, '-', '_' or '.', and must start and end " \
	"with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or " \
	"'12345', regex used for validation is '(" RE_QNAME ")?')"

enum checker { C_LABEL, C_SUBDOMAIN, C_QNAME, C_VALUE };

#define REQUIRED "\001" /* expect "path: Required value" */

static const struct {
	enum checker fn;
	struct gen in;
	const char *detail; /* NULL: no error; REQUIRED; else Invalid detail */
} msg_cases[] = {
	{ C_SUBDOMAIN, { "Foo_bar", 0, 0, "" }, M_SUB },
	{ C_SUBDOMAIN, { "foo.bar", 0, 0, "" }, NULL },
	{ C_SUBDOMAIN, { "", 0, 0, "" }, REQUIRED },
	{ C_SUBDOMAIN, { "", 'a', 253, "" }, NULL },
	{ C_SUBDOMAIN, { "", 'a', 254, "" },
	  "must be no more than 253 bytes" },
	{ C_SUBDOMAIN, { "-", 'a', 253, "" },
	  "must be no more than 253 bytes; " M_SUB },
	{ C_LABEL, { "abc", 0, 0, "" }, NULL },
	{ C_LABEL, { "", 0, 0, "" }, REQUIRED },
	{ C_LABEL, { "Abc", 0, 0, "" }, M_LABEL },
	{ C_LABEL, { "-a", 0, 0, "" }, M_LABEL },
	{ C_LABEL, { "a.b", 0, 0, "" }, "must not contain dots" },
	{ C_LABEL, { "", 'a', 63, "" }, NULL },
	{ C_LABEL, { "", 'a', 64, "" }, "must be no more than 63 bytes" },
	{ C_LABEL, { "", 'a', 63, ".b" },
	  "must be no more than 63 bytes; must not contain dots" },
	{ C_LABEL, { "", 'a', 63, "_" },
	  "must be no more than 63 bytes; " M_LABEL },
	{ C_QNAME, { "example.com/MyName", 0, 0, "" }, NULL },
	{ C_QNAME, { "app:monolith", 0, 0, "" }, "name part " M_QNAME },
	{ C_QNAME, { "", 0, 0, "" },
	  "name part must be non-empty; name part " M_QNAME },
	{ C_QNAME, { "/a", 0, 0, "" }, "prefix part must be non-empty" },
	{ C_QNAME, { "Foo/a", 0, 0, "" }, "prefix part " M_SUB },
	{ C_QNAME, { "a_/", 0, 0, "" },
	  "prefix part " M_SUB "; name part must be non-empty; name part "
	  M_QNAME },
	{ C_QNAME, { "a/b/c", 0, 0, "" },
	  "a valid label key " M_QNAME " with an optional DNS subdomain "
	  "prefix and '/' (e.g. 'example.com/MyName')" },
	{ C_QNAME, { "", 'a', 63, "" }, NULL },
	{ C_QNAME, { "", 'a', 64, "" },
	  "name part must be no more than 63 bytes" },
	{ C_QNAME, { "x/", 'a', 64, "-" },
	  "name part must be no more than 63 bytes; name part " M_QNAME },
	{ C_QNAME, { "", 'p', 253, "/a" }, NULL },
	{ C_QNAME, { "", 'p', 254, "/a" },
	  "prefix part must be no more than 253 bytes" },
	{ C_VALUE, { "", 0, 0, "" }, NULL },
	{ C_VALUE, { "My_Value.1", 0, 0, "" }, NULL },
	{ C_VALUE, { "a_", 0, 0, "" }, M_VALUE },
	{ C_VALUE, { "a/b", 0, 0, "" }, M_VALUE },
	{ C_VALUE, { "", 'v', 63, "" }, NULL },
	{ C_VALUE, { "", 'v', 64, "" }, "must be no more than 63 bytes" },
	{ C_VALUE, { "-", 'v', 63, "" },
	  "must be no more than 63 bytes; " M_VALUE },
};

START_TEST(messages)
{
	struct field_errors fe = FIELD_ERRORS_INIT;
	const char *detail = msg_cases[_i].detail;
	char *s = gen_str(&msg_cases[_i].in);
	const char *path = "spec.x";

	switch (msg_cases[_i].fn) {
	case C_LABEL: check_dns1123_label(&fe, path, s); break;
	case C_SUBDOMAIN: check_dns1123_subdomain(&fe, path, s); break;
	case C_QNAME: check_qualified_name(&fe, path, s); break;
	case C_VALUE: check_label_value(&fe, path, s); break;
	}
	if (!detail) {
		ck_assert_msg(fe.n == 0, "unexpected: %s", t_fe_text(&fe));
	} else {
		char *q = go_quote(s);
		char *want = strcmp(detail, REQUIRED)
			? xasprintf("%s: Invalid value: %s: %s", path, q,
				    detail)
			: xasprintf("%s: Required value", path);

		ck_assert_msg(fe.n == 1, "want one error, got: %s",
			      t_fe_text(&fe));
		ck_assert_str_eq(fe.v[0].text, want);
		ck_assert_str_eq(fe.v[0].path, path);
		free(q);
		free(want);
	}
	field_errors_release(&fe);
	free(s);
}
END_TEST

START_TEST(example_from_brief)
{
	struct field_errors fe = FIELD_ERRORS_INIT;

	check_dns1123_subdomain(&fe, "metadata.name", "Foo_bar");
	ck_assert_uint_eq(fe.n, 1);
	ck_assert_str_eq(fe.v[0].text,
		"metadata.name: Invalid value: \"Foo_bar\": a lowercase RFC "
		"1123 "
		"subdomain must consist of lower case alphanumeric characters, "
		"'-' or '.', and must start and end with an alphanumeric "
		"character (e.g. 'example.com', regex used for validation is "
		"'[a-z0-9]([-a-z0-9]*[a-z0-9])?"
		"(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
	ck_assert_int_eq(fe.v[0].kind, FE_INVALID);
	/* errors accumulate; a good value adds none */
	check_qualified_name(&fe, "metadata.labels", "ok/key");
	check_label_value(&fe, "metadata.labels", "bad value");
	ck_assert_uint_eq(fe.n, 2);
	ck_assert_str_eq(fe.v[1].path, "metadata.labels");
	field_errors_release(&fe);
}
END_TEST

/* The bare patterns (CRD Pattern markers) ignore length; the Is*
 * predicates do not. */
START_TEST(patterns_ignore_length)
{
	struct gen long_label = { "a", 'b', 70, "" };
	struct gen long_sub = { "a", 'b', 300, ".c" };
	char *l = gen_str(&long_label), *sub = gen_str(&long_sub);

	ck_assert(is_dns1123_label_pattern(l));
	ck_assert(!is_dns1123_label(l));
	ck_assert(is_dns1123_subdomain_pattern(sub));
	ck_assert(!is_dns1123_subdomain(sub));
	ck_assert(!is_dns1123_label_pattern("a.b"));
	ck_assert(is_dns1123_subdomain_pattern("a.b"));
	ck_assert(!is_dns1123_subdomain_pattern("a..b"));
	ck_assert(!is_dns1123_label_pattern(""));
	ck_assert(!is_dns1123_subdomain_pattern(""));
	ck_assert(!is_dns1123_subdomain_pattern(NULL));
	free(l);
	free(sub);
}
END_TEST

/* IsDNS1123Subdomain on any text: "" is a pattern failure, not Required;
 * otherwise the same words as check_dns1123_subdomain. */
START_TEST(subdomain_value)
{
	struct field_errors fe = FIELD_ERRORS_INIT, want = FIELD_ERRORS_INIT;

	check_dns1123_subdomain_value(&fe, "p", "");
	ck_assert_uint_eq(fe.n, 1);
	ck_assert_str_eq(fe.v[0].text,
			 "p: Invalid value: \"\": a lowercase RFC 1123 subdomain "
			 "must consist of lower case alphanumeric characters, "
			 "'-' or '.', and must start and end with an "
			 "alphanumeric character (e.g. 'example.com', regex "
			 "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?"
			 "(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
	check_dns1123_subdomain_value(&fe, "p", "ok.name");
	ck_assert_uint_eq(fe.n, 1);
	check_dns1123_subdomain_value(&fe, "p", "Bad_Name");
	check_dns1123_subdomain(&want, "p", "Bad_Name");
	ck_assert_uint_eq(fe.n, 2);
	ck_assert_str_eq(fe.v[1].text, want.v[0].text);
	field_errors_release(&fe);
	field_errors_release(&want);
}
END_TEST

Suite *names_suite(void)
{
	Suite *s = suite_create("names");
	TCase *tc = tcase_create("predicates");

	tcase_add_loop_test(tc, predicates, 0,
			    sizeof(pred_cases) / sizeof(pred_cases[0]));
	tcase_add_test(tc, null_is_never_valid);
	tcase_add_test(tc, patterns_ignore_length);
	suite_add_tcase(s, tc);
	tc = tcase_create("messages");
	tcase_add_loop_test(tc, messages, 0,
			    sizeof(msg_cases) / sizeof(msg_cases[0]));
	tcase_add_test(tc, example_from_brief);
	tcase_add_test(tc, subdomain_value);
	suite_add_tcase(s, tc);
	return s;
}
