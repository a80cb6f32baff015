/*
 * Suite "yamljson": YAML -> JSON as sigs.k8s.io/yaml reads it. Tables of
 * {yaml, expected JSON} for scalar resolution, keys, merges and anchors;
 * {yaml, expected error} for malformed input with its line and column;
 * the limits (depth, alias expansion, input size); file loading.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"
#include "config/yamljson.h"
#include "suites.h"
#include "test/support/support.h"

/* Parses yaml, which must hold exactly one document; returns it (new). */
static json_t *one_doc(const char *yaml)
{
	struct err err = { "" };
	json_t *docs = NULL, *doc;

	ck_assert_msg(yamljson_load_string(yaml, strlen(yaml), &docs, &err) == 0,
		      "yaml %s: %s", yaml, err.msg);
	ck_assert_refcount(docs, 1);
	ck_assert_uint_eq(json_array_size(docs), 1);
	doc = json_incref(json_array_get(docs, 0));
	json_decref(docs);
	ck_assert_refcount(doc, 1);
	return doc;
}

/* Asserts got equals the JSON text want, printing both when not. */
static void assert_json(const json_t *got, const char *want)
{
	json_t *exp = t_json(want);
	char *s = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);

	ck_assert_msg(json_equal(got, exp), "got %s, want %s", s, want);
	free(s);
	json_decref(exp);
}

/* Asserts yaml converts to the JSON text want (compared as trees, so the
 * integer 2 and the real 2.0 differ). */
static void assert_converts(const char *name, const char *yaml,
			    const char *want)
{
	json_t *got = one_doc(yaml), *exp = t_json(want);
	char *s = json_dumps(got, JSON_COMPACT | JSON_ENCODE_ANY);

	ck_assert_msg(json_equal(got, exp), "%s: yaml %s\n got  %s\n want %s",
		      name, yaml, s, want);
	free(s);
	json_decref(got);
	json_decref(exp);
}

/* Asserts yaml fails with exactly the message want. */
static void assert_fails(const char *name, const char *yaml, size_t len,
			 const char *want)
{
	struct err err = { "" };
	json_t *docs = (json_t *)1;

	ck_assert_msg(yamljson_load_string(yaml, len, &docs, &err) == -1,
		      "%s: yaml %s was accepted", name, yaml);
	ck_assert_ptr_null(docs);
	ck_assert_msg(!strcmp(err.msg, want), "%s:\n got  %s\n want %s", name,
		      err.msg, want);
}

/* ------------------------------------------------------------------ */
/* Scalars: go-yaml v2's YAML 1.1 resolution, then encoding/json. */

static const struct {
	const char *name, *yaml, *json;
} scalar_cases[] = {
	{ "bool-true-forms", "[true, True, TRUE, yes, Yes, YES, y, Y, on, On, ON]",
	  "[true,true,true,true,true,true,true,true,true,true,true]" },
	{ "bool-false-forms", "[false, False, FALSE, no, No, NO, n, N, off, Off, OFF]",
	  "[false,false,false,false,false,false,false,false,false,false,false]" },
	{ "not-bools", "[tRUE, yEs, oN, nO, t, f, ofF]",
	  "[\"tRUE\",\"yEs\",\"oN\",\"nO\",\"t\",\"f\",\"ofF\"]" },
	{ "null-forms", "a: null\nb: Null\nc: NULL\nd: ~\ne:\nf: \"\"\n",
	  "{\"a\":null,\"b\":null,\"c\":null,\"d\":null,\"e\":null,\"f\":\"\"}" },
	{ "decimal-ints", "[0, 7, -7, +7, -0, 9223372036854775807, -9223372036854775808]",
	  "[0,7,-7,7,0,9223372036854775807,-9223372036854775808]" },
	{ "go-int-syntax", "[0x1F, 0X1f, 0o17, 017, 0b101, -0b11, 1_000, +0x10]",
	  "[31,31,15,15,5,-3,1000,16]" },
	{ "bad-octal-is-a-float", "[09, 08.5]", "[9,8.5]" },
	{ "floats", "[1.5, -0.25, .5, -.5, +.5, 1e-7, 3.14159]",
	  "[1.5,-0.25,0.5,-0.5,0.5,1e-7,3.14159]" },
	/* encoding/json prints integral floats below 1e21 with no point. */
	{ "integral-floats-are-ints", "[2.0, 1e3, 1., 1.e2, -3.0e0, 0.0]",
	  "[2,1000,1,100,-3,0]" },
	{ "huge-numbers-are-reals", "[9223372036854775808, 1e20, 1e21]",
	  "[9223372036854775808.0,1e20,1e21]" },
	{ "not-numbers", "[0x, 1e400, 12abc, 1.2.3, 2001-12-14, a1, '-']",
	  "[\"0x\",\"1e400\",\"12abc\",\"1.2.3\",\"2001-12-14\",\"a1\",\"-\"]" },
	{ "quoted-stay-strings",
	  "[\"true\", 'yes', \"1\", '1.5', \"null\", '~', \"0x10\", '']",
	  "[\"true\",\"yes\",\"1\",\"1.5\",\"null\",\"~\",\"0x10\",\"\"]" },
	{ "kubernetes-quantities", "cpu: 500m\nmemory: 2Gi\ngpu: \"2\"\ncount: 2\nf: 1.5",
	  "{\"cpu\":\"500m\",\"memory\":\"2Gi\",\"gpu\":\"2\",\"count\":2,\"f\":1.5}" },
	{ "plain-strings", "a: hello world\nb: 'x: y'\nc: http://h:80/p\nd: 1:30\n",
	  "{\"a\":\"hello world\",\"b\":\"x: y\",\"c\":\"http://h:80/p\",\"d\":\"1:30\"}" },
	{ "multiline-plain", "a: one\n  two\n  three\n", "{\"a\":\"one two three\"}" },
	{ "escapes", "a: \"tab\\there\\n\\u00e9\\x41\"\nb: 'it''s'\n",
	  "{\"a\":\"tab\\there\\n\\u00e9A\",\"b\":\"it's\"}" },
	{ "block-literal", "a: |\n  line1\n  line2\nb: |-\n  strip\nc: |+\n  keep\n\nd: x\n",
	  "{\"a\":\"line1\\nline2\\n\",\"b\":\"strip\",\"c\":\"keep\\n\\n\",\"d\":\"x\"}" },
	{ "block-folded", "a: >\n  folded\n  text\n\n  para\nb: >-\n  x\n  y\n",
	  "{\"a\":\"folded text\\npara\\n\",\"b\":\"x y\"}" },
	{ "explicit-tags",
	  "a: !!str 12\nb: !!int \"12\"\nc: !!float 3\nd: !!bool \"yes\"\ne: !foo 12\nf: !!binary aGVsbG8=\ng: !!str true\n",
	  "{\"a\":\"12\",\"b\":12,\"c\":3,\"d\":true,\"e\":\"12\",\"f\":\"hello\",\"g\":\"true\"}" },
	{ "flow-and-block", "a: [1, {b: [c, d]}, []]\ne: {}\nf:\n- g\n- - h\n  - i\n",
	  "{\"a\":[1,{\"b\":[\"c\",\"d\"]},[]],\"e\":{},\"f\":[\"g\",[\"h\",\"i\"]]}" },
	{ "comments", "# head\na: 1 # trailing\n# between\nb: \"# not a comment\"\n",
	  "{\"a\":1,\"b\":\"# not a comment\"}" },
	{ "scalar-document", "just text", "\"just text\"" },
	{ "json-is-yaml", "{\"a\": [1, 2.5, true, null, \"x\"]}",
	  "{\"a\":[1,2.5,true,null,\"x\"]}" },
	{ "complex-null-key-value", "? a\n", "{\"a\":null}" },
};

START_TEST(scalar_table)
{
	assert_converts(scalar_cases[_i].name, scalar_cases[_i].yaml,
			scalar_cases[_i].json);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Keys: sigs.k8s.io/yaml turns non-string keys into strings. */

static const struct {
	const char *name, *yaml, *json;
} key_cases[] = {
	{ "bool-keys", "yes: 1\nn: 2\non: 3\n\"on\": 4\n",
	  "{\"true\":3,\"false\":2,\"on\":4}" },
	/* The YAML 1.1 pitfall kubectl shares: a key named y or n. */
	{ "y-and-n-keys", "x: 1\ny: 2\nn: 3\n", "{\"x\":1,\"true\":2,\"false\":3}" },
	{ "int-keys", "1: a\n0x10: b\n017: c\n-5: d\n",
	  "{\"1\":\"a\",\"16\":\"b\",\"15\":\"c\",\"-5\":\"d\"}" },
	/* strconv.FormatFloat(f, 'g', -1, 32) */
	{ "float-keys", "1.5: a\n1.0: b\n1e7: c\n0.1: d\n123456789.0: e\n0.00001: f\n",
	  "{\"1.5\":\"a\",\"1\":\"b\",\"1e+07\":\"c\",\"0.1\":\"d\",\"1.2345679e+08\":\"e\",\"1e-05\":\"f\"}" },
	{ "special-float-keys", ".inf: a\n-.Inf: b\n.nan: c\n",
	  "{\".inf\":\"a\",\"-.inf\":\"b\",\".nan\":\"c\"}" },
	{ "quoted-keys", "\"1\": a\n'true': b\n\"\": c\n",
	  "{\"1\":\"a\",\"true\":\"b\",\"\":\"c\"}" },
	{ "last-duplicate-wins", "a: 1\nb: 2\na: 3\n", "{\"a\":3,\"b\":2}" },
	{ "labels-stay-strings",
	  "labels:\n  kueue.x-k8s.io/queue-name: user-queue\n  app: web\n",
	  "{\"labels\":{\"kueue.x-k8s.io/queue-name\":\"user-queue\",\"app\":\"web\"}}" },
};

START_TEST(key_table)
{
	assert_converts(key_cases[_i].name, key_cases[_i].yaml,
			key_cases[_i].json);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Anchors, aliases and merges. */

static const struct {
	const char *name, *yaml, *json;
} anchor_cases[] = {
	{ "scalar-alias", "a: &x 5\nb: *x\n", "{\"a\":5,\"b\":5}" },
	{ "collection-alias", "a: &r {cpu: 1, mem: [2Gi]}\nb: *r\n",
	  "{\"a\":{\"cpu\":1,\"mem\":[\"2Gi\"]},\"b\":{\"cpu\":1,\"mem\":[\"2Gi\"]}}" },
	{ "redefined-anchor", "a: &x 1\nb: *x\nc: &x 2\nd: *x\n",
	  "{\"a\":1,\"b\":1,\"c\":2,\"d\":2}" },
	{ "inner-redefinition", "a: &o [&o x, *o]\n", "{\"a\":[\"x\",\"x\"]}" },
	{ "alias-as-key", "a: &k name\n*k : v\n", "{\"a\":\"name\",\"name\":\"v\"}" },
	{ "aliased-bool-key", "a: &k yes\n*k : v\n", "{\"a\":true,\"true\":\"v\"}" },
	{ "anchored-key", "&k key: v\nother: *k\n", "{\"key\":\"v\",\"other\":\"key\"}" },
	{ "merge", "base: &b {x: 1, z: 1}\nd:\n  <<: *b\n  z: 2\n",
	  "{\"base\":{\"x\":1,\"z\":1},\"d\":{\"x\":1,\"z\":2}}" },
	/* go-yaml v2: a merge overrides the keys written before it. */
	{ "merge-after-key", "base: &b {x: 1}\nd:\n  x: 0\n  <<: *b\n",
	  "{\"base\":{\"x\":1},\"d\":{\"x\":1}}" },
	{ "merge-list-earlier-wins",
	  "a: &a {x: 1}\nb: &b {x: 2, z: 2}\nc:\n  <<: [*a, *b]\n",
	  "{\"a\":{\"x\":1},\"b\":{\"x\":2,\"z\":2},\"c\":{\"x\":1,\"z\":2}}" },
	{ "merge-inline", "c: {<<: {x: 1}, z: 2}\n", "{\"c\":{\"x\":1,\"z\":2}}" },
	{ "quoted-merge-key-is-a-key", "\"<<\": {a: 1}\n", "{\"<<\":{\"a\":1}}" },
	{ "tagged-merge-key", "!!merge <<: {a: 1}\n", "{\"a\":1}" },
	{ "merge-value-is-a-string", "a: <<\n", "{\"a\":\"<<\"}" },
	{ "merge-tag-needs-the-text", "!!merge m: 1\n", "{\"m\":1}" },
};

START_TEST(anchor_table)
{
	assert_converts(anchor_cases[_i].name, anchor_cases[_i].yaml,
			anchor_cases[_i].json);
}
END_TEST

START_TEST(aliases_are_copies)
{
	json_t *doc = one_doc("a: &x {list: [1]}\nb: *x\nc: *x\n");
	json_t *a = json_object_get(doc, "a"), *b = json_object_get(doc, "b");

	ck_assert_ptr_ne(a, b);
	ck_assert_refcount(a, 1);
	ck_assert_refcount(b, 1);
	ck_assert_refcount(json_object_get(b, "list"), 1);
	json_array_append_new(json_object_get(b, "list"), json_integer(2));
	ck_assert_uint_eq(json_array_size(json_object_get(a, "list")), 1);
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(doc, "c"), "list")), 1);
	json_decref(doc);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Multi-document streams. */

START_TEST(documents)
{
	static const char yaml[] =
		"# leading comment\n"
		"a: 1\n"
		"---\n"
		"---\n"
		"# only a comment\n"
		"---\n"
		"null\n"
		"--- ~\n"
		"---\n"
		"kind: B\n"
		"...\n"
		"---\n"
		"- x\n"
		"--- plain\n";
	struct err err = { "" };
	json_t *docs = NULL;
	size_t *lines = NULL;

	ck_assert_int_eq(yamljson_load_string_lines(yaml, strlen(yaml), &docs,
						    &lines, &err), 0);
	ck_assert_uint_eq(json_array_size(docs), 4);
	assert_json(json_array_get(docs, 0), "{\"a\":1}");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(docs, 1),
							   "kind")), "B");
	ck_assert(json_is_array(json_array_get(docs, 2)));
	ck_assert_str_eq(json_string_value(json_array_get(docs, 3)), "plain");
	ck_assert_uint_eq(lines[0], 2);
	ck_assert_uint_eq(lines[1], 9);
	ck_assert_uint_eq(lines[2], 12);
	ck_assert_uint_eq(lines[3], 14);
	free(lines);
	json_decref(docs);
}
END_TEST

START_TEST(empty_streams)
{
	static const char *const inputs[] = { "", "\n\n", "# nothing\n", "---\n",
					      "--- \n...\n", "~", "---\nnull\n---\n" };
	struct err err = { "" };

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		json_t *docs = NULL;
		size_t *lines = (size_t *)1;

		ck_assert_int_eq(yamljson_load_string_lines(inputs[i],
							    strlen(inputs[i]),
							    &docs, &lines, &err), 0);
		ck_assert_msg(json_is_array(docs) && json_array_size(docs) == 0,
			      "input %zu", i);
		free(lines);
		json_decref(docs);
	}
}
END_TEST

START_TEST(anchors_do_not_cross_documents)
{
	static const char yaml[] = "a: &x 1\n---\nb: *x\n";

	assert_fails("cross-doc", yaml, strlen(yaml),
		     "line 3, column 4: unknown anchor 'x' referenced");
}
END_TEST

START_TEST(not_nul_terminated)
{
	static const char buf[] = "a: 1\nb: 2XXXX";
	struct err err = { "" };
	json_t *docs = NULL;

	ck_assert_int_eq(yamljson_load_string(buf, 9, &docs, &err), 0);
	assert_json(json_array_get(docs, 0), "{\"a\":1,\"b\":2}");
	json_decref(docs);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Errors carry line and column (1-based). */

static const struct {
	const char *name, *yaml, *msg;
} error_cases[] = {
	{ "mapping-value-in-scalar", "a: b: c",
	  "line 1, column 5: mapping values are not allowed in this context" },
	{ "bad-indent-in-manifest",
	  "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n   labels: {}\n",
	  "line 5, column 10: mapping values are not allowed in this context" },
	{ "unclosed-flow-sequence", "a: [1, 2\nb: 3\n",
	  "line 2, column 2: did not find expected ',' or ']' (while parsing a flow sequence at line 1, column 4)" },
	{ "unterminated-quote", "key: \"abc\n",
	  "line 2, column 1: found unexpected end of stream (while scanning a quoted scalar at line 1, column 6)" },
	{ "tab-indent", "a:\n\t- b\n",
	  "line 2, column 1: found character that cannot start any token (while scanning for the next token at line 2, column 1)" },
	{ "sequence-then-mapping", "- a\nb: c\n",
	  "line 2, column 1: did not find expected '-' indicator (while parsing a block collection at line 1, column 1)" },
	{ "unknown-anchor", "a: 1\nb: *nope\n",
	  "line 2, column 4: unknown anchor 'nope' referenced" },
	{ "self-containing-anchor", "a: &a\n  b: *a\n",
	  "line 2, column 6: anchor 'a' value contains itself" },
	{ "tag-mismatch-int", "a: 1\nb: !!int 1.5\n",
	  "line 2, column 4: cannot decode !!float `1.5` as a !!int" },
	{ "tag-mismatch-bool", "a: !!bool 1",
	  "line 1, column 4: cannot decode !!int `1` as a !!bool" },
	{ "bad-binary", "a: !!binary \"@@\"",
	  "line 1, column 4: !!binary value contains invalid base64 data" },
	{ "null-key", "a: 1\n~: b\n", "line 2, column 1: null is not a valid mapping key" },
	{ "empty-key", "? \n: b\n", "line 1, column 2: null is not a valid mapping key" },
	{ "uint-key", "18446744073709551615: 1",
	  "line 1, column 1: mapping key 18446744073709551615 is out of range" },
	{ "sequence-key", "x: {? [1]: 2}", "line 1, column 7: invalid map key: a sequence" },
	{ "aliased-mapping-key", "a: &m {p: 1}\n*m : x\n",
	  "line 2, column 1: invalid map key: a mapping" },
	{ "infinity-value", "a: .inf", "line 1, column 4: .inf cannot be represented in JSON" },
	{ "nan-value", "- .NaN", "line 1, column 3: .nan cannot be represented in JSON" },
	/* jansson refuses such keys; the member used to vanish silently. */
	{ "binary-key-not-utf8", "a: 1\n!!binary /w==: 2\n",
	  "line 2, column 1: mapping key is not valid UTF-8" },
	{ "merge-scalar", "a: &a 1\nb: {<<: *a}",
	  "line 2, column 9: map merge requires map or sequence of maps as the value" },
	{ "merge-list-of-lists", "a: &a [1]\nb: {<<: [*a]}",
	  "line 2, column 9: map merge requires map or sequence of maps as the value" },
	{ "control-character", "a: 1\n\x01", "line 2, column 1: control characters are not allowed (#1)" },
	{ "bad-utf8", "a: \xff\n", "line 1, column 4: invalid leading UTF-8 octet (#FF)" },
	{ "error-in-later-document", "a: 1\n---\nb: 2\n---\nc: [\n",
	  "line 6, column 1: did not find expected node content (while parsing a flow node at line 6, column 1)" },
};

START_TEST(error_table)
{
	assert_fails(error_cases[_i].name, error_cases[_i].yaml,
		     strlen(error_cases[_i].yaml), error_cases[_i].msg);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Limits. */

static char *nested(size_t depth, const char *inner)
{
	size_t n = strlen(inner);
	char *s = xmalloc(2 * depth + n + 1);

	memset(s, '[', depth);
	memcpy(s + depth, inner, n);
	memset(s + depth + n, ']', depth);
	s[2 * depth + n] = '\0';
	return s;
}

START_TEST(depth_limit)
{
	char *ok = nested(YAMLJSON_MAX_DEPTH, "1");
	char *deep = nested(YAMLJSON_MAX_DEPTH + 1, "1");
	json_t *doc = one_doc(ok);

	json_decref(doc);
	assert_fails("257", deep, strlen(deep),
		     "line 1, column 257: nesting is deeper than 256 levels");
	free(ok);
	free(deep);
}
END_TEST

/* Alias expansion counts toward depth: 1 (root mapping) + 55 + 200 = 256
 * fits, one more level does not. */
START_TEST(depth_limit_through_aliases)
{
	char *anchor = nested(200, "1"), *fits = nested(55, "*a"),
	     *over = nested(56, "*a");
	char *y1 = xasprintf("a: &a %s\nb: %s\n", anchor, fits);
	char *y2 = xasprintf("a: &a %s\nb: %s\n", anchor, over);
	json_t *doc = one_doc(y1);

	json_decref(doc);
	assert_fails("alias-depth", y2, strlen(y2),
		     "line 2, column 60: nesting is deeper than 256 levels");
	free(anchor);
	free(fits);
	free(over);
	free(y1);
	free(y2);
}
END_TEST

/* The classic billion laughs: 9 levels of 9 aliases (~4e8 nodes). */
START_TEST(billion_laughs)
{
	char *y = xstrdup("a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");

	for (char l = 'b'; l <= 'i'; l++) {
		char *next = xasprintf("%s%c: &%c [*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c,*%c]\n",
				       y, l, l, l - 1, l - 1, l - 1, l - 1,
				       l - 1, l - 1, l - 1, l - 1, l - 1);

		free(y);
		y = next;
	}
	assert_fails("billion-laughs", y, strlen(y),
		     "line 4, column 17: document contains excessive aliasing");
	free(y);
}
END_TEST

/* Anchor lookup is indexed: 60k anchors and 60k aliases used to take
 * 17 s (a linear scan per alias), so 64 MiB of them took hours. */
START_TEST(many_anchors_are_linear)
{
	size_t n = 60000, o = 0;
	char *y = xmalloc(n * 32 + 64);
	json_t *docs = NULL;
	struct err err = { "" };

	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(y + o, "- &a%zu x%zu\n", i, i);
	for (size_t i = 0; i < n; i++)
		o += (size_t)sprintf(y + o, "- *a%zu\n", i % 7);
	o += (size_t)sprintf(y + o, "- &a3 new\n- *a3\n");
	ck_assert_msg(yamljson_load_string(y, o, &docs, &err) == 0, "%s",
		      err.msg);
	ck_assert_uint_eq(json_array_size(json_array_get(docs, 0)), 2 * n + 2);
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_array_get(docs, 0), n + 6)), "x6");
	/* A redefined anchor shadows the earlier one from there on. */
	ck_assert_str_eq(json_string_value(json_array_get(
				 json_array_get(docs, 0), 2 * n + 1)), "new");
	json_decref(docs);
	free(y);
}
END_TEST

/* go-yaml tolerates up to 99% aliasing in a small document: ten copies of
 * a 200-node list is fine. */
START_TEST(moderate_aliasing_is_fine)
{
	char *list = xstrdup("0"), *y;
	json_t *doc;

	for (int i = 1; i < 199; i++) {
		char *next = xasprintf("%s,%d", list, i);

		free(list);
		list = next;
	}
	y = xasprintf("a: &a [%s]\nb: [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\n", list);
	doc = one_doc(y);
	ck_assert_uint_eq(json_array_size(json_object_get(doc, "b")), 10);
	ck_assert_uint_eq(json_array_size(json_array_get(json_object_get(doc, "b"), 9)), 199);
	json_decref(doc);
	free(list);
	free(y);
}
END_TEST

/* Each document stays under go-yaml's ratio, but together they would
 * expand past YAMLJSON_MAX_ALIAS_NODES. */
START_TEST(alias_budget_spans_documents)
{
	size_t n = 3000, o = 0;
	char *list = xmalloc(2 * n + 1), *refs = xmalloc(3 * 90 + 1), *y, *all;

	for (size_t i = 0; i < n; i++) {
		list[o++] = '0';
		list[o++] = ',';
	}
	list[o - 1] = '\0';
	o = 0;
	for (int i = 0; i < 90; i++) {
		memcpy(refs + o, "*a,", 3);
		o += 3;
	}
	refs[o - 1] = '\0';
	y = xasprintf("---\na: &a [%s]\nb: [%s]\n", list, refs);
	all = xasprintf("%s%s%s%s", y, y, y, y);
	{
		struct err err = { "" };
		json_t *docs = NULL;

		/* One document alone passes. */
		ck_assert_int_eq(yamljson_load_string(y, strlen(y), &docs, &err), 0);
		json_decref(docs);
		ck_assert_int_eq(yamljson_load_string(all, strlen(all), &docs, &err), -1);
		ck_assert_ptr_null(docs);
		ck_assert_msg(strstr(err.msg, "aliases expand to more than 1000000 nodes") != NULL,
			      "%s", err.msg);
		ck_assert_msg(!strncmp(err.msg, "line 12, ", 9), "%s", err.msg);
	}
	free(list);
	free(refs);
	free(y);
	free(all);
}
END_TEST

START_TEST(size_limit)
{
	size_t n = YAMLJSON_MAX_BYTES + 1;
	char *big = xmalloc(n);

	memset(big, '#', n);
	assert_fails("too-big", big, n, "input is larger than 64 MiB");
	free(big);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Files. */

static char *temp_yaml(const char *content)
{
	char *path = xstrdup("/tmp/cueue-yamljson-XXXXXX");
	int fd = mkstemp(path);
	FILE *fp;

	ck_assert_int_ge(fd, 0);
	fp = fdopen(fd, "w");
	ck_assert_ptr_nonnull(fp);
	fputs(content, fp);
	fclose(fp);
	return path;
}

START_TEST(load_file)
{
	char *path = temp_yaml("kind: A\n---\nkind: B\nspec:\n  count: 1.0\n");
	struct err err = { "" };
	json_t *docs = NULL;
	size_t *lines = NULL;

	ck_assert_int_eq(yamljson_load_file_lines(path, &docs, &lines, &err), 0);
	ck_assert_uint_eq(json_array_size(docs), 2);
	ck_assert_uint_eq(lines[0], 1);
	ck_assert_uint_eq(lines[1], 2);
	assert_json(json_array_get(docs, 1), "{\"kind\":\"B\",\"spec\":{\"count\":1}}");
	free(lines);
	json_decref(docs);
	ck_assert_int_eq(yamljson_load_file(path, &docs, &err), 0);
	ck_assert_uint_eq(json_array_size(docs), 2);
	json_decref(docs);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(load_file_errors)
{
	char *path = temp_yaml("a: 1\nb: [\n");
	char *want = xasprintf("%s: line 3, column 1: did not find expected node content (while parsing a flow node at line 3, column 1)", path);
	struct err err = { "" };
	json_t *docs = (json_t *)1;
	size_t *lines = (size_t *)1;

	ck_assert_int_eq(yamljson_load_file_lines(path, &docs, &lines, &err), -1);
	ck_assert_ptr_null(docs);
	ck_assert_ptr_null(lines);
	ck_assert_str_eq(err.msg, want);
	unlink(path);
	ck_assert_int_eq(yamljson_load_file(path, &docs, &err), -1);
	free(want);
	want = xasprintf("%s: No such file or directory", path);
	ck_assert_str_eq(err.msg, want);
	free(want);
	ck_assert_int_eq(yamljson_load_file("/tmp", &docs, &err), -1);
	ck_assert_str_eq(err.msg, "/tmp: Is a directory");
	free(path);
}
END_TEST

/* A real example file parses into the shape the codec expects. */
START_TEST(load_upstream_example)
{
	char *path = t_src_path("test/fixtures/upstream/admin/single-clusterqueue-setup.yaml");
	struct err err = { "" };
	json_t *docs = NULL, *cq, *res;

	ck_assert_msg(yamljson_load_file(path, &docs, &err) == 0, "%s", err.msg);
	ck_assert_uint_eq(json_array_size(docs), 3);
	cq = json_array_get(docs, 1);
	ck_assert_str_eq(json_string_value(json_object_get(cq, "kind")), "ClusterQueue");
	assert_json(json_object_get(json_object_get(cq, "spec"),
				    "namespaceSelector"), "{}");
	res = json_array_get(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(json_object_get(cq, "spec"),
					       "resourceGroups"), 0), "flavors"), 0),
		"resources"), 0);
	assert_json(res, "{\"name\":\"cpu\",\"nominalQuota\":9}");
	json_decref(docs);
	free(path);
}
END_TEST

Suite *yamljson_suite(void)
{
	Suite *s = suite_create("yamljson");
	TCase *tc;

#define NCASES(a) ((int)(sizeof(a) / sizeof((a)[0])))
	tc = tcase_create("scalars");
	tcase_add_loop_test(tc, scalar_table, 0, NCASES(scalar_cases));
	tcase_add_loop_test(tc, key_table, 0, NCASES(key_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("anchors");
	tcase_add_loop_test(tc, anchor_table, 0, NCASES(anchor_cases));
	tcase_add_test(tc, aliases_are_copies);
	suite_add_tcase(s, tc);

	tc = tcase_create("documents");
	tcase_add_test(tc, documents);
	tcase_add_test(tc, empty_streams);
	tcase_add_test(tc, anchors_do_not_cross_documents);
	tcase_add_test(tc, not_nul_terminated);
	suite_add_tcase(s, tc);

	tc = tcase_create("malformed");
	tcase_add_loop_test(tc, error_table, 0, NCASES(error_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, depth_limit);
	tcase_add_test(tc, depth_limit_through_aliases);
	tcase_add_test(tc, billion_laughs);
	tcase_add_test(tc, moderate_aliasing_is_fine);
	tcase_add_test(tc, alias_budget_spans_documents);
	tcase_add_test(tc, size_limit);
	suite_add_tcase(s, tc);

	tc = tcase_create("anchor-index");
	tcase_set_timeout(tc, 10);
	tcase_add_test(tc, many_anchors_are_linear);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_test(tc, load_file);
	tcase_add_test(tc, load_file_errors);
	tcase_add_test(tc, load_upstream_example);
	suite_add_tcase(s, tc);
#undef NCASES
	return s;
}
