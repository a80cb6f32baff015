/*
 * Suite "patch": the PATCH flavours of devserver/patch.c.
 *
 * Table-driven: RFC 7386 appendix A, RFC 6902 appendix A (error cases
 * included) plus pointer and index edge cases, strategic merge cases in
 * the shapes kubectl and client-go send for built-in kinds, reduced
 * server-side apply over a tiny schema, and patch_diff round trips on
 * pseudo-random documents (fixed seeds). Every case also checks that the
 * inputs come back untouched (json_equal against a deep copy taken
 * before the call, and refcount 1).
 *
 * Table JSON uses ' for " to stay readable; t_jq() swaps them back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devserver/patch.h"
#include "suites.h"
#include "test/support/support.h"

/* Parses table JSON written with ' instead of "; new ref, NULL for NULL. */
static char *text_of(const json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	return s ? s : xstrdup("(NULL)");
}

/* Asserts got equals want (structurally), printing both otherwise. */
static void assert_same(const char *name, const json_t *got, const json_t *want)
{
	char *g, *w;

	if (got && want && json_equal(got, want))
		return;
	g = text_of(got);
	w = text_of(want);
	ck_abort_msg("%s:\n  got  %s\n  want %s", name, g, w);
}

/* jansson's null, true and false are shared singletons without a real
 * refcount. */
static bool counted(const json_t *j)
{
	return j && !json_is_null(j) && !json_is_boolean(j);
}

/* An input and the deep copy taken before the call under test. */
struct frozen {
	json_t *j;    /* the input (new ref, or NULL) */
	json_t *copy; /* deep copy of it */
};

static struct frozen freeze(const char *text)
{
	struct frozen f = { t_jq(text), NULL };

	f.copy = f.j ? json_deep_copy(f.j) : NULL;
	return f;
}

/* Asserts the input is as before and releases both. */
static void thaw(const char *name, const char *what, struct frozen *f)
{
	if (f->j) {
		ck_assert_msg(json_equal(f->j, f->copy),
			      "%s: the %s input was modified", name, what);
		if (counted(f->j))
			ck_assert_refcount(f->j, 1);
	}
	json_decref(f->j);
	json_decref(f->copy);
}

/* Checks a result against a case's expectation: a document, or an error
 * whose message contains errsub. */
static void check_outcome(const char *name, json_t *got, const char *want,
			  const char *errsub, const struct err *err)
{
	json_t *w = t_jq(want);

	if (!want) {
		char *g = text_of(got);

		ck_assert_msg(!got, "%s: expected an error, got %s", name, g);
		free(g);
	} else {
		ck_assert_msg(got != NULL, "%s: unexpected error: %s", name,
			      err->msg);
		assert_same(name, got, w);
		if (counted(got))
			ck_assert_refcount(got, 1);
	}
	if (errsub)
		ck_assert_msg(strstr(err->msg, errsub) != NULL,
			      "%s: error \"%s\" lacks \"%s\"", name, err->msg,
			      errsub);
	json_decref(got);
	json_decref(w);
}

/* ---------------------------------------------------------------------
 * RFC 7386
 */

struct merge_case {
	const char *name;
	const char *target; /* NULL: no target */
	const char *patch;
	const char *want;
};

static const struct merge_case merge_cases[] = {
	/* RFC 7386 appendix A, in order. */
	{ "A.1", "{'a':'b'}", "{'a':'c'}", "{'a':'c'}" },
	{ "A.2", "{'a':'b'}", "{'b':'c'}", "{'a':'b','b':'c'}" },
	{ "A.3", "{'a':'b'}", "{'a':null}", "{}" },
	{ "A.4", "{'a':'b','b':'c'}", "{'a':null}", "{'b':'c'}" },
	{ "A.5", "{'a':['b']}", "{'a':'c'}", "{'a':'c'}" },
	{ "A.6", "{'a':'c'}", "{'a':['b']}", "{'a':['b']}" },
	{ "A.7", "{'a':{'b':'c'}}", "{'a':{'b':'d','c':null}}",
	  "{'a':{'b':'d'}}" },
	{ "A.8", "{'a':[{'b':'c'}]}", "{'a':[1]}", "{'a':[1]}" },
	{ "A.9", "['a','b']", "['c','d']", "['c','d']" },
	{ "A.10", "{'a':'b'}", "['c']", "['c']" },
	{ "A.11", "{'a':'foo'}", "null", "null" },
	{ "A.12", "{'a':'foo'}", "'bar'", "'bar'" },
	{ "A.13", "{'e':null}", "{'a':1}", "{'e':null,'a':1}" },
	{ "A.14", "[1,2]", "{'a':'b','c':null}", "{'a':'b'}" },
	{ "A.15", "{}", "{'a':{'bb':{'ccc':null}}}", "{'a':{'bb':{}}}" },
	/* Beyond the appendix. */
	{ "no-target", NULL, "{'a':{'b':null,'c':1}}", "{'a':{'c':1}}" },
	{ "resource-version-kept", "{'metadata':{'name':'x','resourceVersion':'7'},'spec':{'queueName':'a'}}",
	  "{'metadata':{'resourceVersion':'7'},'spec':{'queueName':'b'}}",
	  "{'metadata':{'name':'x','resourceVersion':'7'},'spec':{'queueName':'b'}}" },
	{ "empty-patch", "{'a':[1,{'b':2}]}", "{}", "{'a':[1,{'b':2}]}" },
};

START_TEST(merge_table)
{
	const struct merge_case *c = &merge_cases[_i];
	struct frozen t = freeze(c->target), p = freeze(c->patch);
	json_t *got = patch_merge(t.j, p.j), *w = t_jq(c->want);

	assert_same(c->name, got, w);
	if (counted(got))
		ck_assert_refcount(got, 1);
	json_decref(got);
	json_decref(w);
	thaw(c->name, "target", &t);
	thaw(c->name, "patch", &p);
}
END_TEST

/* ---------------------------------------------------------------------
 * RFC 6902
 */

struct jp_case {
	const char *name;
	const char *doc;
	const char *patch;
	const char *want;   /* NULL: the patch must fail */
	const char *errsub; /* NULL or a part of the error message */
};

static const struct jp_case jp_cases[] = {
	/* RFC 6902 appendix A (A.13 is a parser matter: see below). */
	{ "A.1 adding an object member", "{'foo':'bar'}",
	  "[{'op':'add','path':'/baz','value':'qux'}]",
	  "{'baz':'qux','foo':'bar'}", NULL },
	{ "A.2 adding an array element", "{'foo':['bar','baz']}",
	  "[{'op':'add','path':'/foo/1','value':'qux'}]",
	  "{'foo':['bar','qux','baz']}", NULL },
	{ "A.3 removing an object member", "{'baz':'qux','foo':'bar'}",
	  "[{'op':'remove','path':'/baz'}]", "{'foo':'bar'}", NULL },
	{ "A.4 removing an array element", "{'foo':['bar','qux','baz']}",
	  "[{'op':'remove','path':'/foo/1'}]", "{'foo':['bar','baz']}", NULL },
	{ "A.5 replacing a value", "{'baz':'qux','foo':'bar'}",
	  "[{'op':'replace','path':'/baz','value':'boo'}]",
	  "{'baz':'boo','foo':'bar'}", NULL },
	{ "A.6 moving a value",
	  "{'foo':{'bar':'baz','waldo':'fred'},'qux':{'corge':'grault'}}",
	  "[{'op':'move','from':'/foo/waldo','path':'/qux/thud'}]",
	  "{'foo':{'bar':'baz'},'qux':{'corge':'grault','thud':'fred'}}", NULL },
	{ "A.7 moving an array element", "{'foo':['all','grass','cows','eat']}",
	  "[{'op':'move','from':'/foo/1','path':'/foo/3'}]",
	  "{'foo':['all','cows','eat','grass']}", NULL },
	{ "A.8 testing a value: success", "{'baz':'qux','foo':['a',2,'c']}",
	  "[{'op':'test','path':'/baz','value':'qux'},{'op':'test','path':'/foo/1','value':2}]",
	  "{'baz':'qux','foo':['a',2,'c']}", NULL },
	{ "A.9 testing a value: error", "{'baz':'qux'}",
	  "[{'op':'test','path':'/baz','value':'bar'}]", NULL,
	  "jsonpatch testing value /baz failed (operation 0)" },
	{ "A.10 adding a nested member object", "{'foo':'bar'}",
	  "[{'op':'add','path':'/child','value':{'grandchild':{}}}]",
	  "{'foo':'bar','child':{'grandchild':{}}}", NULL },
	{ "A.11 ignoring unrecognized elements", "{'foo':'bar'}",
	  "[{'op':'add','path':'/baz','value':'qux','xyz':123}]",
	  "{'foo':'bar','baz':'qux'}", NULL },
	{ "A.12 adding to a nonexistent target", "{'foo':'bar'}",
	  "[{'op':'add','path':'/baz/bat','value':'qux'}]", NULL,
	  "jsonpatch add operation does not apply: doc is missing path: '/baz/bat'" },
	{ "A.14 ~ escape ordering", "{'/':9,'~1':10}",
	  "[{'op':'test','path':'/~01','value':10}]", "{'/':9,'~1':10}", NULL },
	{ "A.15 comparing strings and numbers", "{'/':9,'~1':10}",
	  "[{'op':'test','path':'/~01','value':'10'}]", NULL,
	  "testing value /~01 failed" },
	{ "A.16 adding an array value", "{'foo':['bar']}",
	  "[{'op':'add','path':'/foo/-','value':['abc','def']}]",
	  "{'foo':['bar',['abc','def']]}", NULL },

	/* Pointers (RFC 6901) and array indexes. */
	{ "escaped slash", "{'a/b':1}",
	  "[{'op':'replace','path':'/a~1b','value':2}]", "{'a/b':2}", NULL },
	{ "escaped tilde", "{'m~n':1}",
	  "[{'op':'remove','path':'/m~0n'}]", "{}", NULL },
	{ "empty key", "{'':1}",
	  "[{'op':'replace','path':'/','value':2}]", "{'':2}", NULL },
	{ "bad escape", "{'a':1}",
	  "[{'op':'remove','path':'/~2'}]", NULL, "invalid JSON pointer" },
	{ "pointer without slash", "{'a':1}",
	  "[{'op':'remove','path':'a'}]", NULL, "invalid JSON pointer" },
	{ "index leading zero", "{'foo':[1,2]}",
	  "[{'op':'add','path':'/foo/01','value':3}]", NULL,
	  "invalid array index 01" },
	{ "index not a number", "{'foo':[1,2]}",
	  "[{'op':'replace','path':'/foo/x','value':3}]", NULL,
	  "doc is missing key: /foo/x" },
	{ "add at index == size", "{'foo':[1]}",
	  "[{'op':'add','path':'/foo/1','value':2}]", "{'foo':[1,2]}", NULL },
	{ "add past the end", "{'foo':[1]}",
	  "[{'op':'add','path':'/foo/2','value':2}]", NULL,
	  "invalid array index 2" },
	{ "remove - is an error", "{'foo':[1]}",
	  "[{'op':'remove','path':'/foo/-'}]", NULL,
	  "remove operation does not apply: doc is missing path: '/foo/-'" },
	{ "remove past the end", "{'foo':[1]}",
	  "[{'op':'remove','path':'/foo/1'}]", NULL, "doc is missing path" },
	{ "remove missing member", "{'foo':1}",
	  "[{'op':'remove','path':'/bar'}]", NULL,
	  "remove operation does not apply: doc is missing path: '/bar'" },
	{ "replace missing member", "{'foo':1}",
	  "[{'op':'replace','path':'/bar','value':2}]", NULL,
	  "jsonpatch replace operation does not apply: doc is missing key: /bar" },
	{ "traverse through a scalar", "{'foo':1}",
	  "[{'op':'add','path':'/foo/bar','value':2}]", NULL,
	  "doc is missing path" },
	{ "nested array member", "{'foo':[{'bar':1}]}",
	  "[{'op':'add','path':'/foo/0/baz','value':2}]",
	  "{'foo':[{'bar':1,'baz':2}]}", NULL },

	/* Whole document. */
	{ "add root", "{'a':1}", "[{'op':'add','path':'','value':[1]}]",
	  "[1]", NULL },
	{ "replace root", "{'a':1}",
	  "[{'op':'replace','path':'','value':{'b':2}}]", "{'b':2}", NULL },
	{ "test root", "{'a':1}",
	  "[{'op':'test','path':'','value':{'a':1}}]", "{'a':1}", NULL },
	{ "remove root", "{'a':1}", "[{'op':'remove','path':''}]", NULL,
	  "cannot remove the whole document" },
	{ "empty patch", "{'a':1}", "[]", "{'a':1}", NULL },

	/* test equality. */
	{ "test 1 equals 1.0", "{'a':1}",
	  "[{'op':'test','path':'/a','value':1.0}]", "{'a':1}", NULL },
	{ "test object member order", "{'a':{'x':1,'y':[1,{'z':null}]}}",
	  "[{'op':'test','path':'/a','value':{'y':[1,{'z':null}],'x':1}}]",
	  "{'a':{'x':1,'y':[1,{'z':null}]}}", NULL },
	{ "test null", "{'a':null}",
	  "[{'op':'test','path':'/a','value':null}]", "{'a':null}", NULL },
	{ "test missing path", "{'a':1}",
	  "[{'op':'test','path':'/b','value':1}]", NULL,
	  "jsonpatch test operation does not apply: is missing path: /b" },
	{ "test array length", "{'a':[1,2]}",
	  "[{'op':'test','path':'/a','value':[1]}]", NULL, "testing value /a" },

	/* move and copy. */
	{ "move into own child", "{'a':{'b':1}}",
	  "[{'op':'move','from':'/a','path':'/a/b/c'}]", NULL,
	  "cannot move /a into its own child /a/b/c" },
	{ "move onto itself", "{'a':{'b':1}}",
	  "[{'op':'move','from':'/a','path':'/a'}]", "{'a':{'b':1}}", NULL },
	{ "move missing from", "{'a':1}",
	  "[{'op':'move','from':'/x','path':'/y'}]", NULL,
	  "move operation does not apply: doc is missing from path: /x" },
	{ "move to missing parent", "{'a':1}",
	  "[{'op':'move','from':'/a','path':'/x/y'}]", NULL,
	  "doc is missing path: '/x/y'" },
	{ "copy is deep", "{'a':{'x':1}}",
	  "[{'op':'copy','from':'/a','path':'/b'},{'op':'replace','path':'/b/x','value':2}]",
	  "{'a':{'x':1},'b':{'x':2}}", NULL },
	{ "copy missing from", "{'a':1}",
	  "[{'op':'copy','from':'/x','path':'/y'}]", NULL,
	  "copy operation does not apply: doc is missing from path: /x" },
	{ "copy without from", "{'a':1}",
	  "[{'op':'copy','path':'/y'}]", NULL,
	  "copy operation failed to decode from" },

	/* Malformed operations and atomicity. */
	{ "value may be null", "{'a':1}",
	  "[{'op':'add','path':'/b','value':null}]", "{'a':1,'b':null}", NULL },
	{ "missing value", "{'a':1}", "[{'op':'add','path':'/b'}]", NULL,
	  "add operation is missing its value" },
	{ "missing path", "{'a':1}", "[{'op':'remove'}]", NULL,
	  "remove operation failed to decode path" },
	{ "unknown op", "{'a':1}", "[{'op':'frobnicate','path':'/a'}]", NULL,
	  "Unexpected kind: frobnicate" },
	{ "missing op", "{'a':1}", "[{'path':'/a'}]", NULL,
	  "Unexpected kind: unknown" },
	{ "operation not an object", "{'a':1}", "['add']", NULL,
	  "operation is not a JSON object" },
	{ "patch not an array", "{'a':1}", "{'op':'add'}", NULL,
	  "must be a JSON array" },
	{ "all or nothing", "{'a':1}",
	  "[{'op':'add','path':'/b','value':2},{'op':'remove','path':'/c'}]",
	  NULL, "(operation 1)" },

	/* What admission webhooks send. */
	{ "webhook label", "{'metadata':{'labels':{'app':'x'}}}",
	  "[{'op':'add','path':'/metadata/labels/kueue.x-k8s.io~1queue-name','value':'q'}]",
	  "{'metadata':{'labels':{'app':'x','kueue.x-k8s.io/queue-name':'q'}}}",
	  NULL },
	{ "webhook without labels", "{'metadata':{'name':'x'}}",
	  "[{'op':'add','path':'/metadata/labels/a','value':'q'}]", NULL,
	  "jsonpatch add operation does not apply: doc is missing path: '/metadata/labels/a' (operation 0)" },
	{ "webhook suspend", "{'spec':{'suspend':false,'template':{}}}",
	  "[{'op':'add','path':'/spec/suspend','value':true}]",
	  "{'spec':{'suspend':true,'template':{}}}", NULL },
};

START_TEST(jsonpatch_table)
{
	const struct jp_case *c = &jp_cases[_i];
	struct frozen d = freeze(c->doc), p = freeze(c->patch);
	struct err err = { "" };
	json_t *got = patch_json(d.j, p.j, &err);
	char *errsub = c->errsub ? xstrdup(c->errsub) : NULL;

	/* Expected messages are written with ' too. */
	for (char *q = errsub; q && *q; q++)
		if (*q == '\'')
			*q = '"';
	check_outcome(c->name, got, c->want, errsub, &err);
	free(errsub);
	thaw(c->name, "document", &d);
	thaw(c->name, "patch", &p);
}
END_TEST

/* A.13: a patch with two "op" members is invalid. patch_json sees parsed
 * JSON, where the duplicate is gone, so the devserver must decode patch
 * bodies with JSON_REJECT_DUPLICATES; this pins that the flag does it. */
START_TEST(jsonpatch_a13_duplicates)
{
	const char *body = "[{\"op\":\"add\",\"path\":\"/baz\",\"value\":\"qux\",\"op\":\"remove\"}]";
	json_error_t e;
	json_t *j = json_loads(body, JSON_REJECT_DUPLICATES, &e);

	ck_assert_ptr_null(j);
	ck_assert_ptr_nonnull(strstr(e.text, "duplicate"));
}
END_TEST

/* ---------------------------------------------------------------------
 * Strategic merge patch
 */

struct smp_case {
	const char *name;
	const char *target;
	const char *patch;
	const char *want;   /* NULL: the patch must fail */
	const char *errsub;
};

#define JOB(spec) "{'apiVersion':'batch/v1','kind':'Job','spec':{'template':{'spec':" spec "}}}"
#define CTRS(list) JOB("{'containers':" list "}")

static const struct smp_case smp_cases[] = {
	/* Lists of containers merge by name. */
	{ "containers by name",
	  CTRS("[{'name':'a','image':'a:1'},{'name':'b','image':'b:1'}]"),
	  CTRS("[{'name':'b','image':'b:2'}]"),
	  CTRS("[{'name':'a','image':'a:1'},{'name':'b','image':'b:2'}]"), NULL },
	/* kubernetes.io "Update API Objects in Place Using kubectl patch":
	 * the added container comes first. */
	{ "new container goes first",
	  CTRS("[{'name':'patch-demo-ctr','image':'nginx'}]"),
	  CTRS("[{'name':'patch-demo-ctr-2','image':'redis'}]"),
	  CTRS("[{'name':'patch-demo-ctr-2','image':'redis'},{'name':'patch-demo-ctr','image':'nginx'}]"),
	  NULL },
	{ "new and changed keep patch order",
	  CTRS("[{'name':'a'},{'name':'b'}]"),
	  CTRS("[{'name':'b','image':'x'},{'name':'c'}]"),
	  CTRS("[{'name':'a'},{'name':'b','image':'x'},{'name':'c'}]"), NULL },
	{ "env by name",
	  CTRS("[{'name':'a','env':[{'name':'X','value':'1'},{'name':'Y','value':'2'}]}]"),
	  CTRS("[{'name':'a','env':[{'name':'Y','value':'3'}]}]"),
	  CTRS("[{'name':'a','env':[{'name':'X','value':'1'},{'name':'Y','value':'3'}]}]"),
	  NULL },
	{ "env $patch delete",
	  CTRS("[{'name':'a','env':[{'name':'X','value':'1'},{'name':'Y','value':'2'}]}]"),
	  CTRS("[{'name':'a','env':[{'name':'X','$patch':'delete'}]}]"),
	  CTRS("[{'name':'a','env':[{'name':'Y','value':'2'}]}]"), NULL },
	{ "container $patch delete",
	  CTRS("[{'name':'a'},{'name':'b'}]"),
	  CTRS("[{'name':'a','$patch':'delete'}]"),
	  CTRS("[{'name':'b'}]"), NULL },
	{ "containers $patch replace",
	  CTRS("[{'name':'a','image':'a'},{'name':'b'}]"),
	  CTRS("[{'$patch':'replace'},{'name':'c','image':'c'}]"),
	  CTRS("[{'name':'c','image':'c'}]"), NULL },
	{ "ports by containerPort",
	  CTRS("[{'name':'a','ports':[{'containerPort':80,'name':'http'},{'containerPort':81}]}]"),
	  CTRS("[{'name':'a','ports':[{'containerPort':80,'protocol':'TCP'}]}]"),
	  CTRS("[{'name':'a','ports':[{'containerPort':80,'name':'http','protocol':'TCP'},{'containerPort':81}]}]"),
	  NULL },
	{ "volumeMounts by mountPath",
	  CTRS("[{'name':'a','volumeMounts':[{'mountPath':'/d','name':'v'}]}]"),
	  CTRS("[{'name':'a','volumeMounts':[{'mountPath':'/d','readOnly':true}]}]"),
	  CTRS("[{'name':'a','volumeMounts':[{'mountPath':'/d','name':'v','readOnly':true}]}]"),
	  NULL },
	{ "initContainers and imagePullSecrets",
	  JOB("{'initContainers':[{'name':'i','image':'1'}],'imagePullSecrets':[{'name':'s1'}]}"),
	  JOB("{'initContainers':[{'name':'i','image':'2'}],'imagePullSecrets':[{'name':'s2'}]}"),
	  JOB("{'initContainers':[{'name':'i','image':'2'}],'imagePullSecrets':[{'name':'s2'},{'name':'s1'}]}"),
	  NULL },
	{ "args replace",
	  CTRS("[{'name':'a','args':['x','y']}]"),
	  CTRS("[{'name':'a','args':['z']}]"),
	  CTRS("[{'name':'a','args':['z']}]"), NULL },
	{ "replace marker in a list without merge key",
	  JOB("{'tolerations':[{'key':'a'}]}"),
	  JOB("{'tolerations':[{'$patch':'replace'},{'key':'b'}]}"),
	  JOB("{'tolerations':[{'key':'b'}]}"), NULL },
	{ "$patch replace on a list the object lacks",
	  JOB("{}"),
	  CTRS("[{'$patch':'replace'},{'name':'c'}]"),
	  CTRS("[{'name':'c'}]"), NULL },
	{ "tolerations replace (no merge key)",
	  JOB("{'tolerations':[{'key':'a','effect':'NoSchedule'}]}"),
	  JOB("{'tolerations':[{'key':'b'}]}"),
	  JOB("{'tolerations':[{'key':'b'}]}"), NULL },
	{ "pod spec paths",
	  "{'kind':'Pod','spec':{'containers':[{'name':'a','image':'1'},{'name':'b'}]}}",
	  "{'spec':{'containers':[{'name':'a','image':'2'}]}}",
	  "{'kind':'Pod','spec':{'containers':[{'name':'a','image':'2'},{'name':'b'}]}}",
	  NULL },
	{ "cronjob paths",
	  "{'spec':{'jobTemplate':{'spec':{'template':{'spec':{'containers':[{'name':'a','image':'1'},{'name':'b'}]}}}}}}",
	  "{'spec':{'jobTemplate':{'spec':{'template':{'spec':{'containers':[{'name':'b','image':'2'}]}}}}}}",
	  "{'spec':{'jobTemplate':{'spec':{'template':{'spec':{'containers':[{'name':'a','image':'1'},{'name':'b','image':'2'}]}}}}}}",
	  NULL },

	/* Maps. */
	{ "null deletes, maps merge",
	  "{'metadata':{'labels':{'a':'1','b':'2'},'annotations':{'x':'y'}}}",
	  "{'metadata':{'labels':{'a':null,'c':'3'},'annotations':null,'name':null}}",
	  "{'metadata':{'labels':{'b':'2','c':'3'}}}", NULL },
	{ "map $patch replace",
	  "{'metadata':{'labels':{'a':'1','b':'2'},'name':'x'}}",
	  "{'metadata':{'labels':{'$patch':'replace','c':'3'}}}",
	  "{'metadata':{'labels':{'c':'3'},'name':'x'}}", NULL },
	{ "map $patch delete",
	  JOB("{'containers':[]}"),
	  "{'spec':{'template':{'$patch':'delete'}}}",
	  "{'apiVersion':'batch/v1','kind':'Job','spec':{'template':{}}}", NULL },
	{ "map $patch merge is the default",
	  "{'metadata':{'labels':{'a':'1'}}}",
	  "{'metadata':{'labels':{'$patch':'merge','b':'2'}}}",
	  "{'metadata':{'labels':{'a':'1','b':'2'}}}", NULL },
	{ "configmap data",
	  "{'kind':'ConfigMap','data':{'a':'1','b':'2'}}",
	  "{'data':{'b':null,'c':'3'}}",
	  "{'kind':'ConfigMap','data':{'a':'1','c':'3'}}", NULL },
	{ "event count bump (client-go recorder)",
	  "{'kind':'Event','count':1,'message':'m','lastTimestamp':'2026-01-01T00:00:00Z'}",
	  "{'count':2,'lastTimestamp':'2026-01-01T00:00:05Z','message':'m'}",
	  "{'kind':'Event','count':2,'message':'m','lastTimestamp':'2026-01-01T00:00:05Z'}",
	  NULL },
	{ "new value loses directives and nulls",
	  "{'spec':{}}",
	  "{'spec':{'template':{'spec':{'containers':[{'name':'a','image':'i','env':null,'$setElementOrder/env':[]}],'volumes':[{'name':'gone','$patch':'delete'}]}}}}",
	  "{'spec':{'template':{'spec':{'containers':[{'name':'a','image':'i'}],'volumes':[]}}}}",
	  NULL },

	/* Primitive lists with the merge strategy. */
	{ "finalizers set merge",
	  "{'metadata':{'finalizers':['a','b']}}",
	  "{'metadata':{'finalizers':['b','c']}}",
	  "{'metadata':{'finalizers':['a','b','c']}}", NULL },
	{ "finalizers new first",
	  "{'metadata':{'finalizers':['a','b']}}",
	  "{'metadata':{'finalizers':['c']}}",
	  "{'metadata':{'finalizers':['c','a','b']}}", NULL },
	{ "finalizers deduplicated",
	  "{'metadata':{'finalizers':['a','a','b']}}",
	  "{'metadata':{'finalizers':['b','b']}}",
	  "{'metadata':{'finalizers':['a','b']}}", NULL },
	{ "finalizers empty list changes nothing",
	  "{'metadata':{'finalizers':['a']}}",
	  "{'metadata':{'finalizers':[]}}",
	  "{'metadata':{'finalizers':['a']}}", NULL },
	{ "finalizers null removes",
	  "{'metadata':{'finalizers':['a'],'name':'x'}}",
	  "{'metadata':{'finalizers':null}}",
	  "{'metadata':{'name':'x'}}", NULL },
	{ "$deleteFromPrimitiveList",
	  "{'metadata':{'finalizers':['a','b','c']}}",
	  "{'metadata':{'$deleteFromPrimitiveList/finalizers':['b','zz']}}",
	  "{'metadata':{'finalizers':['a','c']}}", NULL },
	{ "$deleteFromPrimitiveList with additions",
	  "{'metadata':{'finalizers':['a','b']}}",
	  "{'metadata':{'$deleteFromPrimitiveList/finalizers':['a'],'finalizers':['c']}}",
	  "{'metadata':{'finalizers':['c','b']}}", NULL },
	{ "$deleteFromPrimitiveList on a missing list",
	  "{'metadata':{'name':'x'}}",
	  "{'metadata':{'$deleteFromPrimitiveList/finalizers':['a']}}",
	  "{'metadata':{'name':'x'}}", NULL },
	{ "$deleteFromPrimitiveList without a field",
	  "{'metadata':{'name':'x'}}",
	  "{'metadata':{'$deleteFromPrimitiveList/':['a']}}",
	  NULL, "invalid patch format of primitive list" },

	/* $setElementOrder. */
	{ "$setElementOrder reorders",
	  CTRS("[{'name':'a'},{'name':'b'},{'name':'c'}]"),
	  JOB("{'$setElementOrder/containers':[{'name':'c'},{'name':'a'},{'name':'b'}]}"),
	  CTRS("[{'name':'c'},{'name':'a'},{'name':'b'}]"), NULL },
	{ "$setElementOrder with a change and an unknown entry",
	  CTRS("[{'name':'a'},{'name':'b'}]"),
	  JOB("{'$setElementOrder/containers':[{'name':'zz'},{'name':'b'},{'name':'a'}],'containers':[{'name':'a','image':'new'}]}"),
	  CTRS("[{'name':'b'},{'name':'a','image':'new'}]"), NULL },
	{ "$setElementOrder out of step with the patch",
	  CTRS("[{'name':'a'},{'name':'b'}]"),
	  JOB("{'$setElementOrder/containers':[{'name':'b'},{'name':'a'}],'containers':[{'name':'a','image':'1'},{'name':'b','image':'2'}]}"),
	  NULL, "doesn't match $setElementOrder/ list" },
	{ "$setElementOrder on finalizers",
	  "{'metadata':{'finalizers':['a','b']}}",
	  "{'metadata':{'$setElementOrder/finalizers':['b','a','c'],'finalizers':['c']}}",
	  "{'metadata':{'finalizers':['b','a','c']}}", NULL },
	{ "$setElementOrder keeps server-only items",
	  CTRS("[{'name':'a'},{'name':'s'},{'name':'b'}]"),
	  JOB("{'$setElementOrder/containers':[{'name':'b'},{'name':'a'}]}"),
	  CTRS("[{'name':'s'},{'name':'b'},{'name':'a'}]"), NULL },
	{ "$setElementOrder for a new list",
	  "{'spec':{}}",
	  "{'spec':{'$setElementOrder/ports':[{'port':2},{'port':1}],'ports':[{'port':1},{'port':2}]}}",
	  NULL, "doesn't match" },
	{ "kubectl apply on a Job (client-side apply)",
	  "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'sample-job','annotations':{'kubectl.kubernetes.io/last-applied-configuration':'v1'},'labels':{'kueue.x-k8s.io/queue-name':'user-queue'}},"
	  "'spec':{'parallelism':3,'suspend':true,'template':{'spec':{'containers':[{'name':'dummy-job','image':'busybox:1','args':['sleep','30'],'resources':{'requests':{'cpu':'1'}}}],'restartPolicy':'Never'}}}}",
	  "{'metadata':{'annotations':{'kubectl.kubernetes.io/last-applied-configuration':'v2'}},"
	  "'spec':{'parallelism':2,'template':{'spec':{'$setElementOrder/containers':[{'name':'dummy-job'}],'containers':[{'args':['sleep','60'],'name':'dummy-job'}]}}}}",
	  "{'apiVersion':'batch/v1','kind':'Job','metadata':{'name':'sample-job','annotations':{'kubectl.kubernetes.io/last-applied-configuration':'v2'},'labels':{'kueue.x-k8s.io/queue-name':'user-queue'}},"
	  "'spec':{'parallelism':2,'suspend':true,'template':{'spec':{'containers':[{'name':'dummy-job','image':'busybox:1','args':['sleep','60'],'resources':{'requests':{'cpu':'1'}}}],'restartPolicy':'Never'}}}}",
	  NULL },

	/* ownerReferences, conditions. */
	{ "ownerReferences by uid",
	  "{'metadata':{'ownerReferences':[{'uid':'1','name':'x','controller':true}]}}",
	  "{'metadata':{'ownerReferences':[{'uid':'1','name':'y'},{'uid':'2','name':'z'}]}}",
	  "{'metadata':{'ownerReferences':[{'uid':'1','name':'y','controller':true},{'uid':'2','name':'z'}]}}",
	  NULL },
	{ "ownerReferences $patch delete",
	  "{'metadata':{'ownerReferences':[{'uid':'1'},{'uid':'2'}]}}",
	  "{'metadata':{'ownerReferences':[{'uid':'1','$patch':'delete'}]}}",
	  "{'metadata':{'ownerReferences':[{'uid':'2'}]}}", NULL },
	{ "conditions by type",
	  "{'status':{'conditions':[{'type':'A','status':'False'},{'type':'B','status':'True'}]}}",
	  "{'status':{'conditions':[{'type':'A','status':'True','reason':'R'}]}}",
	  "{'status':{'conditions':[{'type':'A','status':'True','reason':'R'},{'type':'B','status':'True'}]}}",
	  NULL },
	{ "conditions added",
	  "{'status':{'conditions':[{'type':'A','status':'False'}],'active':1}}",
	  "{'status':{'conditions':[{'type':'Complete','status':'True'}],'active':null,'succeeded':1}}",
	  "{'status':{'conditions':[{'type':'Complete','status':'True'},{'type':'A','status':'False'}],'succeeded':1}}",
	  NULL },

	/* $retainKeys. */
	{ "$retainKeys on a volume",
	  JOB("{'volumes':[{'name':'v','emptyDir':{}},{'name':'w','emptyDir':{}}]}"),
	  JOB("{'volumes':[{'name':'v','$retainKeys':['configMap','name'],'configMap':{'name':'cm'}}]}"),
	  JOB("{'volumes':[{'name':'v','configMap':{'name':'cm'}},{'name':'w','emptyDir':{}}]}"),
	  NULL },
	{ "$retainKeys must list the patch's keys",
	  JOB("{'volumes':[{'name':'v','emptyDir':{}}]}"),
	  JOB("{'volumes':[{'name':'v','$retainKeys':['name'],'configMap':{'name':'cm'}}]}"),
	  NULL, "invalid patch format of retainKeys" },

	/* Errors. */
	{ "merge key missing in the patch",
	  CTRS("[{'name':'a'}]"), CTRS("[{'image':'x'}]"),
	  NULL, "does not contain declared merge key: name" },
	{ "$patch delete without merge key",
	  CTRS("[{'name':'a'}]"), CTRS("[{'$patch':'delete'}]"),
	  NULL, "does not contain declared merge key: name" },
	{ "$patch merge in a list",
	  CTRS("[{'name':'a'}]"), CTRS("[{'$patch':'merge'}]"),
	  NULL, "merging lists cannot yet be specified in the patch" },
	{ "unknown $patch in a map",
	  "{'metadata':{}}", "{'metadata':{'$patch':'frob'}}",
	  NULL, "unknown patch type: frob in map: {\"$patch\":\"frob\"}" },
	{ "mixed element types",
	  "{'metadata':{'finalizers':['a']}}", "{'metadata':{'finalizers':[1]}}",
	  NULL, "list element types are not identical" },
	{ "patch not an object", "{}", "[1]", NULL, "invalid JSON document" },
	{ "whole object $patch delete", "{'a':1}", "{'$patch':'delete'}", "{}",
	  NULL },
};

START_TEST(smpatch_table)
{
	const struct smp_case *c = &smp_cases[_i];
	struct frozen t = freeze(c->target), p = freeze(c->patch);
	struct err err = { "" };
	json_t *got = patch_strategic(t.j, p.j, smp_builtin_keys, &err);

	check_outcome(c->name, got, c->want, c->errsub, &err);
	thaw(c->name, "target", &t);
	thaw(c->name, "patch", &p);
}
END_TEST

/* Custom tables: a nested "*" path and a primitive set of their own. */
START_TEST(smpatch_custom_keys)
{
	static const struct smp_key keys[] = {
		{ "items", "id" },
		{ "items.*.tags", NULL },
		{ NULL, NULL },
	};
	json_t *t = t_jq("{'items':[{'id':1,'tags':['x']},{'id':2}]}");
	json_t *p = t_jq("{'items':[{'id':1,'tags':['y']},{'id':2,'n':1}]}");
	/* New set members come first, as in Kubernetes. */
	json_t *w = t_jq("{'items':[{'id':1,'tags':['y','x']},{'id':2,'n':1}]}");
	struct err err = { "" };
	json_t *got = patch_strategic(t, p, keys, &err);

	assert_same("custom keys", got, w);
	json_decref(got);
	/* With no table every list replaces. */
	got = patch_strategic(t, p, NULL, &err);
	assert_same("no keys", got, p);
	json_decref(got);
	json_decref(t);
	json_decref(p);
	json_decref(w);
}
END_TEST

/* ---------------------------------------------------------------------
 * Server-side apply (reduced)
 */

static const char ssa_schema[] =
	"{'type':'object','properties':{"
	" 'apiVersion':{'type':'string'},'kind':{'type':'string'},"
	" 'metadata':{'type':'object'},"
	" 'spec':{'type':'object','properties':{"
	"  'queueName':{'type':'string'},"
	"  'podSets':{'type':'array','x-kubernetes-list-type':'map',"
	"   'x-kubernetes-list-map-keys':['name'],"
	"   'items':{'type':'object','properties':{"
	"    'name':{'type':'string'},'count':{'type':'integer'},"
	"    'template':{'type':'object','properties':{"
	"     'containers':{'type':'array','items':{'type':'object'}}}}}}},"
	"  'ports':{'type':'array','x-kubernetes-list-type':'map',"
	"   'x-kubernetes-list-map-keys':['port','protocol'],"
	"   'items':{'type':'object'}},"
	"  'tags':{'type':'array','x-kubernetes-list-type':'set',"
	"   'items':{'type':'string'}},"
	"  'selector':{'type':'object','additionalProperties':{'type':'string'}}}},"
	" 'status':{'type':'object','properties':{"
	"  'conditions':{'type':'array','x-kubernetes-list-type':'map',"
	"   'x-kubernetes-list-map-keys':['type'],'items':{'type':'object'}}}}}}";

struct ssa_case {
	const char *name;
	const char *target;  /* NULL: create */
	const char *applied;
	bool schema;         /* false: apply without a schema */
	const char *want;    /* NULL: must fail */
	const char *errsub;
};

#define WL(spec) "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload','metadata':{'name':'w'},'spec':" spec "}"

static const struct ssa_case ssa_cases[] = {
	{ "create", NULL, WL("{'queueName':'q','podSets':[{'name':'main','count':1}]}"),
	  true, WL("{'queueName':'q','podSets':[{'name':'main','count':1}]}"), NULL },
	{ "map list merges by key",
	  WL("{'podSets':[{'name':'main','count':1,'template':{'containers':[{'name':'c'}]}},{'name':'b','count':2}]}"),
	  WL("{'podSets':[{'name':'main','count':3},{'name':'extra','count':1}]}"),
	  true,
	  WL("{'podSets':[{'name':'main','count':3,'template':{'containers':[{'name':'c'}]}},{'name':'b','count':2},{'name':'extra','count':1}]}"),
	  NULL },
	{ "map list with two keys",
	  WL("{'ports':[{'port':80,'protocol':'TCP','name':'a'},{'port':80,'protocol':'UDP','name':'b'}]}"),
	  WL("{'ports':[{'port':80,'protocol':'UDP','name':'c'}]}"),
	  true,
	  WL("{'ports':[{'port':80,'protocol':'TCP','name':'a'},{'port':80,'protocol':'UDP','name':'c'}]}"),
	  NULL },
	{ "atomic list inside a merged element is replaced",
	  WL("{'podSets':[{'name':'main','template':{'containers':[{'name':'a'},{'name':'b'}]}}]}"),
	  WL("{'podSets':[{'name':'main','template':{'containers':[{'name':'z'}]}}]}"),
	  true, WL("{'podSets':[{'name':'main','template':{'containers':[{'name':'z'}]}}]}"),
	  NULL },
	{ "set list is replaced",
	  WL("{'tags':['a','b']}"), WL("{'tags':['c']}"), true,
	  WL("{'tags':['c']}"), NULL },
	{ "maps merge, scalars replace",
	  WL("{'queueName':'a','selector':{'x':'1'}}"),
	  WL("{'queueName':'b','selector':{'y':'2'}}"), true,
	  WL("{'queueName':'b','selector':{'x':'1','y':'2'}}"), NULL },
	{ "apiVersion and kind from applied",
	  "{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'Workload','spec':{'queueName':'a'}}",
	  "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload'}", true,
	  "{'apiVersion':'kueue.x-k8s.io/v1beta2','kind':'Workload','spec':{'queueName':'a'}}",
	  NULL },
	{ "status conditions by type",
	  "{'status':{'conditions':[{'type':'QuotaReserved','status':'False'},{'type':'Admitted','status':'False'}]}}",
	  "{'status':{'conditions':[{'type':'Admitted','status':'True','reason':'Admitted'}]}}",
	  true,
	  "{'status':{'conditions':[{'type':'QuotaReserved','status':'False'},{'type':'Admitted','status':'True','reason':'Admitted'}]}}",
	  NULL },
	{ "null removes",
	  WL("{'queueName':'a','selector':{'x':'1'}}"),
	  WL("{'selector':null}"), true, WL("{'queueName':'a'}"), NULL },
	{ "ownerReferences by uid (built in)",
	  "{'metadata':{'ownerReferences':[{'uid':'1','name':'a'}]}}",
	  "{'metadata':{'ownerReferences':[{'uid':'1','name':'b','controller':true},{'uid':'2','name':'c'}]}}",
	  true,
	  "{'metadata':{'ownerReferences':[{'uid':'1','name':'b','controller':true},{'uid':'2','name':'c'}]}}",
	  NULL },
	{ "no schema: lists replace",
	  WL("{'podSets':[{'name':'main','count':1},{'name':'b'}]}"),
	  WL("{'podSets':[{'name':'main','count':3}]}"), false,
	  WL("{'podSets':[{'name':'main','count':3}]}"), NULL },
	{ "duplicate keys",
	  WL("{'podSets':[]}"),
	  WL("{'podSets':[{'name':'a'},{'name':'a','count':2}]}"), true, NULL,
	  ".spec.podSets: duplicate entries for key [name=\"a\"]" },
	{ "element not an object",
	  WL("{'podSets':[]}"), WL("{'podSets':['a']}"), true, NULL,
	  ".spec.podSets: element 0 of a list-type map is not an object" },
	{ "applied not an object", WL("{}"), "[1]", true, NULL,
	  "must be a JSON object" },
};

START_TEST(apply_table)
{
	const struct ssa_case *c = &ssa_cases[_i];
	struct frozen t = freeze(c->target), a = freeze(c->applied);
	struct frozen s = freeze(c->schema ? ssa_schema : NULL);
	struct err err = { "" };
	json_t *got = patch_apply(t.j, a.j, s.j, &err);

	check_outcome(c->name, got, c->want, c->errsub, &err);
	thaw(c->name, "target", &t);
	thaw(c->name, "applied", &a);
	thaw(c->name, "schema", &s);
}
END_TEST

/* ---------------------------------------------------------------------
 * patch_diff round trips
 */

#define DIFF_SEEDS 300

/* A small LCG: deterministic across platforms. */
static uint32_t rnd(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static const char *const gen_keys[] = {
	"a", "b", "c", "a/b", "m~n", "", "~1", "spec", "0",
};
#define NKEYS (sizeof(gen_keys) / sizeof(gen_keys[0]))

static json_t *gen(uint32_t *s, int depth)
{
	json_t *v;
	unsigned n;

	switch (rnd(s) % (depth > 0 ? 9u : 6u)) {
	case 0:
		return json_null();
	case 1:
		return json_integer((json_int_t)(rnd(s) % 5));
	case 2:
		return json_string(gen_keys[rnd(s) % NKEYS]);
	case 3:
		return json_boolean(rnd(s) % 2);
	case 4:
		return json_real((double)(rnd(s) % 4) / 2.0);
	case 5:
		return json_string("x");
	case 6:
	case 7:
		v = json_object();
		for (n = rnd(s) % 5; n > 0; n--)
			json_object_set_new(v, gen_keys[rnd(s) % NKEYS],
					    gen(s, depth - 1));
		return v;
	default:
		v = json_array();
		for (n = rnd(s) % 5; n > 0; n--)
			json_array_append_new(v, gen(s, depth - 1));
		return v;
	}
}

/* A new value close to v: some members changed, added or dropped. */
static json_t *mutate(uint32_t *s, const json_t *v, int depth)
{
	json_t *out, *m;
	const char *k;
	size_t i;

	if (rnd(s) % 6 == 0)
		return gen(s, depth);
	if (json_is_object(v)) {
		out = json_object();
		json_object_foreach((json_t *)(uintptr_t)v, k, m) {
			unsigned r = rnd(s) % 4;

			if (r == 0)
				continue;
			json_object_set_new(out, k, r == 1 ? mutate(s, m, depth - 1)
							   : json_deep_copy(m));
		}
		if (rnd(s) % 3 == 0)
			json_object_set_new(out, gen_keys[rnd(s) % NKEYS],
					    gen(s, depth - 1));
		return out;
	}
	if (json_is_array(v)) {
		size_t keep = json_array_size(v);

		if (keep && rnd(s) % 3 == 0)
			keep = rnd(s) % keep;
		out = json_array();
		for (i = 0; i < keep; i++) {
			m = json_array_get(v, i);
			json_array_append_new(out, rnd(s) % 3 == 0
						   ? mutate(s, m, depth - 1)
						   : json_deep_copy(m));
		}
		for (i = rnd(s) % 3; i > 0 && rnd(s) % 2; i--)
			json_array_append_new(out, gen(s, depth - 1));
		return out;
	}
	return rnd(s) % 2 ? gen(s, depth) : json_deep_copy(v);
}

/* Applies patch_diff(a, b) to a and expects b. */
static void round_trip(const char *name, const json_t *a, const json_t *b)
{
	json_t *ac = json_deep_copy(a), *bc = json_deep_copy(b);
	json_t *d = patch_diff(a, b), *r;
	struct err err = { "" };
	char *dt;

	ck_assert(json_is_array(d));
	r = patch_json(a, d, &err);
	dt = text_of(d);
	ck_assert_msg(r != NULL, "%s: diff %s does not apply: %s", name, dt,
		      err.msg);
	assert_same(name, r, b);
	ck_assert_msg(json_equal(a, ac) && json_equal(b, bc),
		      "%s: inputs modified", name);
	free(dt);
	json_decref(r);
	json_decref(d);
	json_decref(ac);
	json_decref(bc);
}

START_TEST(diff_round_trip)
{
	uint32_t seed = 0x9e3779b9u ^ (uint32_t)_i;
	json_t *a = gen(&seed, 4), *b = mutate(&seed, a, 4), *same;
	char name[32];

	snprintf(name, sizeof(name), "seed %d", _i);
	round_trip(name, a, b);
	round_trip(name, b, a);
	same = patch_diff(a, a);
	ck_assert_uint_eq(json_array_size(same), 0);
	json_decref(same);
	json_decref(a);
	json_decref(b);
}
END_TEST

START_TEST(diff_shapes)
{
	static const char *const pairs[][2] = {
		{ "{'a':1}", "[1]" },
		{ "1", "1.0" },
		{ "{'a':[1,2,3,4]}", "{'a':[9]}" },
		{ "{'a':[]}", "{'a':[1,[2],{'b':3}]}" },
		{ "{'a/b':{'m~n':1}}", "{'a/b':{'m~n':2},'':null}" },
		{ "null", "{'x':null}" },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		json_t *a = t_jq(pairs[i][0]), *b = t_jq(pairs[i][1]);

		round_trip(pairs[i][0], a, b);
		round_trip(pairs[i][1], b, a);
		json_decref(a);
		json_decref(b);
	}
}
END_TEST

/* The ops patch_diff writes name their paths as RFC 6901 escapes. */
START_TEST(diff_output)
{
	json_t *a = t_jq("{'a/b':1,'keep':[1,2,3]}");
	json_t *b = t_jq("{'a/b':2,'keep':[1],'new':true}");
	json_t *want = t_jq("[{'op':'replace','path':'/a~1b','value':2},"
			    "{'op':'remove','path':'/keep/2'},"
			    "{'op':'remove','path':'/keep/1'},"
			    "{'op':'add','path':'/new','value':true}]");
	json_t *d = patch_diff(a, b);

	assert_same("diff output", d, want);
	json_decref(a);
	json_decref(b);
	json_decref(want);
	json_decref(d);
}
END_TEST

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))

Suite *patch_suite(void)
{
	Suite *s = suite_create("patch");
	TCase *tc = tcase_create("merge-patch");

	tcase_add_loop_test(tc, merge_table, 0, N(merge_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("json-patch");
	tcase_add_loop_test(tc, jsonpatch_table, 0, N(jp_cases));
	tcase_add_test(tc, jsonpatch_a13_duplicates);
	suite_add_tcase(s, tc);

	tc = tcase_create("strategic-merge");
	tcase_add_loop_test(tc, smpatch_table, 0, N(smp_cases));
	tcase_add_test(tc, smpatch_custom_keys);
	suite_add_tcase(s, tc);

	tc = tcase_create("server-side-apply");
	tcase_add_loop_test(tc, apply_table, 0, N(ssa_cases));
	suite_add_tcase(s, tc);

	tc = tcase_create("diff");
	tcase_add_loop_test(tc, diff_round_trip, 0, DIFF_SEEDS);
	tcase_add_test(tc, diff_shapes);
	tcase_add_test(tc, diff_output);
	suite_add_tcase(s, tc);
	return s;
}
