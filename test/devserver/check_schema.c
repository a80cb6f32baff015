/*
 * Suite "schema": devserver/schema.c against apiextensions-apiserver.
 *
 * Table-driven: pruning (paths and what stays), structural defaulting,
 * and validation with the exact field error texts kube-openapi +
 * apiextensions produce (every error, in their order). A trimmed Kueue
 * ClusterQueue schema (test/fixtures/schema/clusterqueue-schema.json)
 * checks Kueue's defaults for an empty spec, pruning and a multi-error
 * object. Deep documents check the 128-level guard.
 *
 * Table JSON uses ' for " to stay readable; t_jq() swaps them back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devserver/schema.h"
#include "suites.h"
#include "test/support/support.h"

/* Parses table JSON written with ' instead of "; new ref. */
static char *dump(const json_t *j)
{
	char *s = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS |
				 JSON_ENCODE_ANY) : NULL;

	return s ? s : xstrdup("(NULL)");
}

static void assert_json(const char *name, const json_t *got, const json_t *want)
{
	char *g, *w;

	if (got && want && json_equal(got, want))
		return;
	g = dump(got);
	w = dump(want);
	ck_abort_msg("%s:\n  got  %s\n  want %s", name, g, w);
}

/* Asserts fe holds exactly want[] (NULL-terminated), in order. */
static void assert_errors(const char *name, const struct field_errors *fe,
			  const char *const *want)
{
	size_t n = 0;

	while (want[n])
		n++;
	ck_assert_msg(fe->n == n, "%s: %zu errors, want %zu: %s", name, fe->n,
		      n, t_fe_text(fe));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(!strcmp(fe->v[i].text, want[i]),
			      "%s: error %zu\n  got  %s\n  want %s", name, i,
			      fe->v[i].text, want[i]);
}

/* ---------------------------------------------------------------- */

struct prune_case {
	const char *name;
	const char *schema;
	const char *obj;
	const char *want;    /* the object after pruning */
	const char *unknown; /* the reported paths, a JSON array */
};

static const struct prune_case prune_cases[] = {
	{ "root keeps apiVersion/kind/metadata, drops the rest",
	  "{'type':'object','properties':{'spec':{'type':'object','properties':{'a':{'type':'string'}}}}}",
	  "{'apiVersion':'v1','kind':'K','metadata':{'name':'x'},'spec':{'a':'1','b':2},'extra':true}",
	  "{'apiVersion':'v1','kind':'K','metadata':{'name':'x'},'spec':{'a':'1'}}",
	  "['extra','spec.b']" },
	{ "array items",
	  "{'type':'object','properties':{'spec':{'type':'object','properties':{'list':{'type':'array','items':{'type':'object','properties':{'k':{'type':'integer'}}}}}}}}",
	  "{'spec':{'list':[{'k':1},{'k':2,'x':3}]}}",
	  "{'spec':{'list':[{'k':1},{'k':2}]}}",
	  "['spec.list[1].x']" },
	{ "preserve-unknown-fields keeps unknown, prunes inside declared",
	  "{'type':'object','properties':{'spec':{'type':'object','x-kubernetes-preserve-unknown-fields':true,'properties':{'known':{'type':'object','properties':{'a':{}}}}}}}",
	  "{'spec':{'free':{'deep':1},'known':{'a':1,'bad':2}}}",
	  "{'spec':{'free':{'deep':1},'known':{'a':1}}}",
	  "['spec.known.bad']" },
	{ "additionalProperties schema",
	  "{'type':'object','properties':{'m':{'type':'object','additionalProperties':{'type':'object','properties':{'a':{}}}}}}",
	  "{'m':{'x':{'a':1,'b':2}}}",
	  "{'m':{'x':{'a':1}}}",
	  "['m.x.b']" },
	{ "additionalProperties true prunes objects below",
	  "{'type':'object','properties':{'m':{'type':'object','additionalProperties':true}}}",
	  "{'m':{'s':'x','o':{'deep':1}}}",
	  "{'m':{'s':'x','o':{}}}",
	  "['m.o.deep']" },
	{ "embedded resource keeps its type and object meta",
	  "{'type':'object','properties':{'tpl':{'type':'object','x-kubernetes-embedded-resource':true,'properties':{'spec':{'type':'object'}}}}}",
	  "{'tpl':{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p','bogus':1},'spec':{'x':1},'other':1}}",
	  "{'tpl':{'apiVersion':'v1','kind':'Pod','metadata':{'name':'p'},'spec':{}}}",
	  "['tpl.other','tpl.spec.x']" },
	{ "root metadata reduced to ObjectMeta, reported after the rest",
	  "{'type':'object','properties':{}}",
	  "{'metadata':{'name':'a','foo':1,'labels':{'k':'v'},'ownerReferences':[{'name':'o','uid':'u','x':1}]},'zz':1,'aa':1}",
	  "{'metadata':{'name':'a','labels':{'k':'v'},'ownerReferences':[{'name':'o','uid':'u'}]}}",
	  "['aa','zz','metadata.foo','metadata.ownerReferences[0].x']" },
	{ "non-nullable nulls without default dropped",
	  "{'type':'object','properties':{'a':{'type':'string'},'b':{'type':'string','nullable':true},'c':{'type':'string','default':'d'}}}",
	  "{'a':null,'b':null,'c':null}",
	  "{'b':null,'c':null}",
	  "[]" },
	{ "no items schema: objects in arrays emptied",
	  "{'type':'object','properties':{'l':{'type':'array'}}}",
	  "{'l':[{'x':1},[{'y':2}],3]}",
	  "{'l':[{},[{}],3]}",
	  "['l[0].x','l[1][0].y']" },
	{ "preserve-unknown-fields at the root keeps object meta",
	  "{'type':'object','x-kubernetes-preserve-unknown-fields':true,'properties':{'metadata':{'type':'object'},'spec':{'type':'object','properties':{'a':{}}}}}",
	  "{'metadata':{'name':'n','labels':{'a':'b'}},'free':{'x':1},'spec':{'a':1,'b':2}}",
	  "{'metadata':{'name':'n','labels':{'a':'b'}},'free':{'x':1},'spec':{'a':1}}",
	  "['spec.b']" },
	{ "embedded and preserved: object meta still coerced",
	  "{'type':'object','properties':{'raw':{'type':'object','x-kubernetes-embedded-resource':true,'x-kubernetes-preserve-unknown-fields':true}}}",
	  "{'raw':{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c','junk':1},'data':{'k':'v'}}}",
	  "{'raw':{'apiVersion':'v1','kind':'ConfigMap','metadata':{'name':'c'},'data':{'k':'v'}}}",
	  "[]" },
	{ "paths are sorted",
	  "{'type':'object','properties':{'mid':{'type':'object'}}}",
	  "{'zeta':1,'mid':{'q':1,'b':2},'alpha':2}",
	  "{'mid':{}}",
	  "['alpha','mid.b','mid.q','zeta']" },
};

START_TEST(prune)
{
	const struct prune_case *c = &prune_cases[_i];
	json_t *schema = t_jq(c->schema), *obj = t_jq(c->obj);
	json_t *want = t_jq(c->want), *wantu = t_jq(c->unknown);
	json_t *unknown = json_array();
	json_t *copy = json_deep_copy(schema);

	schema_prune(obj, schema, unknown);
	assert_json(c->name, obj, want);
	assert_json(c->name, unknown, wantu);
	ck_assert_msg(json_equal(schema, copy), "%s: schema modified", c->name);
	ck_assert_refcount(obj, 1);
	ck_assert_refcount(schema, 1);
	json_decref(schema);
	json_decref(copy);
	json_decref(obj);
	json_decref(want);
	json_decref(wantu);
	json_decref(unknown);
}
END_TEST

START_TEST(prune_without_report)
{
	json_t *schema = t_jq("{'type':'object','properties':{'a':{}}}");
	json_t *obj = t_jq("{'a':1,'b':2,'metadata':{'x':1}}");
	json_t *want = t_jq("{'a':1,'metadata':{}}");

	schema_prune(obj, schema, NULL);
	assert_json("no report", obj, want);
	/* no schema known: nothing is pruned */
	schema_prune(obj, NULL, NULL);
	assert_json("null schema", obj, want);
	json_decref(schema);
	json_decref(obj);
	json_decref(want);
}
END_TEST

/* ---------------------------------------------------------------- */

struct default_case {
	const char *name;
	const char *schema;
	const char *obj;
	const char *want;
};

static const struct default_case default_cases[] = {
	{ "absent field gets default",
	  "{'type':'object','properties':{'a':{'type':'string','default':'x'}}}",
	  "{}", "{'a':'x'}" },
	{ "present field kept",
	  "{'type':'object','properties':{'a':{'type':'string','default':'x'}}}",
	  "{'a':'y'}", "{'a':'y'}" },
	{ "non-nullable null defaulted",
	  "{'type':'object','properties':{'a':{'type':'string','default':'x'}}}",
	  "{'a':null}", "{'a':'x'}" },
	{ "nullable null kept",
	  "{'type':'object','properties':{'a':{'type':'string','nullable':true,'default':'x'}}}",
	  "{'a':null}", "{'a':null}" },
	{ "defaulted object gets its own defaults",
	  "{'type':'object','properties':{'p':{'type':'object','default':{},'properties':{'q':{'type':'string','default':'Never'},'r':{'type':'object','default':{},'properties':{'s':{'default':1}}}}}}}",
	  "{}", "{'p':{'q':'Never','r':{'s':1}}}" },
	{ "absent parent without default: nothing below",
	  "{'type':'object','properties':{'p':{'type':'object','properties':{'q':{'default':'n'}}}}}",
	  "{}", "{}" },
	{ "existing parent gets child defaults",
	  "{'type':'object','properties':{'p':{'type':'object','properties':{'q':{'default':'n'}}}}}",
	  "{'p':{}}", "{'p':{'q':'n'}}" },
	{ "array items",
	  "{'type':'object','properties':{'l':{'type':'array','items':{'type':'object','properties':{'k':{'type':'integer','default':3}}}}}}",
	  "{'l':[{},{'k':1}]}", "{'l':[{'k':3},{'k':1}]}" },
	{ "null array item defaulted",
	  "{'type':'object','properties':{'l':{'type':'array','items':{'type':'string','default':'z'}}}}",
	  "{'l':[null,'a']}", "{'l':['z','a']}" },
	{ "additionalProperties values",
	  "{'type':'object','properties':{'m':{'type':'object','additionalProperties':{'type':'object','properties':{'w':{'default':1}}}}}}",
	  "{'m':{'a':{},'b':{'w':2}}}", "{'m':{'a':{'w':1},'b':{'w':2}}}" },
	{ "defaults inside preserve-unknown-fields",
	  "{'type':'object','x-kubernetes-preserve-unknown-fields':true,'properties':{'a':{'default':[1,2]}}}",
	  "{'free':1}", "{'free':1,'a':[1,2]}" },
	{ "scalar where an object is declared is left alone",
	  "{'type':'object','properties':{'p':{'type':'object','properties':{'q':{'default':'n'}}}}}",
	  "{'p':'text'}", "{'p':'text'}" },
};

START_TEST(defaults)
{
	const struct default_case *c = &default_cases[_i];
	json_t *schema = t_jq(c->schema), *obj = t_jq(c->obj), *want = t_jq(c->want);
	json_t *copy = json_deep_copy(schema);

	schema_default(obj, schema);
	assert_json(c->name, obj, want);
	ck_assert_msg(json_equal(schema, copy), "%s: schema modified", c->name);
	ck_assert_refcount(obj, 1);
	json_decref(schema);
	json_decref(copy);
	json_decref(obj);
	json_decref(want);
}
END_TEST

START_TEST(defaults_are_copies)
{
	json_t *schema = t_jq("{'type':'object','properties':{'a':{'type':'object','default':{'k':[1]}},'b':{'type':'object','default':{'k':[1]}}}}");
	json_t *o1 = t_jq("{}"), *o2 = t_jq("{}");
	json_t *k;

	schema_default(o1, schema);
	schema_default(o2, schema);
	k = json_object_get(json_object_get(o1, "a"), "k");
	json_array_append_new(k, json_integer(2));
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(o2, "a"), "k")), 1);
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(
		json_object_get(json_object_get(schema, "properties"), "a"),
		"default"), "k")), 1);
	json_decref(schema);
	json_decref(o1);
	json_decref(o2);
}
END_TEST

/* ---------------------------------------------------------------- */

struct validate_case {
	const char *name;
	const char *schema; /* the schema of "spec" */
	const char *spec;   /* the value of "spec" */
	const char *want[6];
};

#define QTY "^(\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\\\+|-)?(([0-9]+(\\\\.[0-9]*)?)|(\\\\.[0-9]+))))?$"

static const struct validate_case validate_cases[] = {
	{ "enum",
	  "{'type':'object','properties':{'queueingStrategy':{'type':'string','enum':['BestEffortFIFO','StrictFIFO']}}}",
	  "{'queueingStrategy':'X'}",
	  { "spec.queueingStrategy: Unsupported value: \"X\": supported values: \"BestEffortFIFO\", \"StrictFIFO\"" } },
	{ "enum ok", "{'type':'object','properties':{'e':{'type':'string','enum':['a','b']}}}",
	  "{'e':'b'}", { NULL } },
	{ "maxItems",
	  "{'type':'object','properties':{'resourceGroups':{'type':'array','maxItems':16,'items':{'type':'integer'}}}}",
	  "{'resourceGroups':[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}",
	  { "spec.resourceGroups: Too many: 17: must have at most 16 items" } },
	{ "required",
	  "{'type':'object','required':['name','other'],'properties':{'name':{'type':'string'}}}",
	  "{'other':1}",
	  { "spec.name: Required value" } },
	{ "pattern",
	  "{'type':'object','properties':{'x':{'type':'string','pattern':'^[a-z]$'}}}",
	  "{'x':'abc'}",
	  { "spec.x: Invalid value: \"abc\": spec.x in body should match '^[a-z]$'" } },
	{ "minimum",
	  "{'type':'object','properties':{'n':{'type':'integer','minimum':0}}}",
	  "{'n':-1}",
	  { "spec.n: Invalid value: -1: spec.n in body should be greater than or equal to 0" } },
	{ "exclusiveMinimum",
	  "{'type':'object','properties':{'n':{'type':'integer','minimum':0,'exclusiveMinimum':true}}}",
	  "{'n':0}",
	  { "spec.n: Invalid value: 0: spec.n in body should be greater than 0" } },
	{ "maximum on a number",
	  "{'type':'object','properties':{'f':{'type':'number','maximum':10}}}",
	  "{'f':10.5}",
	  { "spec.f: Invalid value: 10.5: spec.f in body should be less than or equal to 10" } },
	{ "exclusiveMaximum, float bound",
	  "{'type':'object','properties':{'f':{'type':'number','maximum':0.5,'exclusiveMaximum':true}}}",
	  "{'f':0.5}",
	  { "spec.f: Invalid value: 0.5: spec.f in body should be less than 0.5" } },
	{ "multipleOf",
	  "{'type':'object','properties':{'n':{'type':'integer','multipleOf':5}}}",
	  "{'n':12}",
	  { "spec.n: Invalid value: 12: spec.n in body should be a multiple of 5" } },
	{ "maxLength",
	  "{'type':'object','properties':{'s':{'type':'string','maxLength':10}}}",
	  "{'s':'abcdefghijk'}",
	  { "spec.s: Too long: may not be more than 10 bytes" } },
	{ "maxLength counts runes",
	  "{'type':'object','properties':{'s':{'type':'string','maxLength':2}}}",
	  "{'s':'\xc3\xa9\xe2\x82\xac'}", { NULL } },
	{ "minLength",
	  "{'type':'object','properties':{'s':{'type':'string','minLength':3}}}",
	  "{'s':'ab'}",
	  { "spec.s: Invalid value: \"ab\": spec.s in body should be at least 3 chars long" } },
	{ "maxLength stops the string checks",
	  "{'type':'object','properties':{'s':{'type':'string','maxLength':2,'pattern':'^z$'}}}",
	  "{'s':'abc'}",
	  { "spec.s: Too long: may not be more than 2 bytes" } },
	{ "type string for integer",
	  "{'type':'object','properties':{'x':{'type':'integer'}}}",
	  "{'x':'string'}",
	  { "spec.x: Invalid value: \"string\": spec.x in body must be of type integer: \"string\"" } },
	{ "integral float is an integer",
	  "{'type':'object','properties':{'i':{'type':'integer'}}}",
	  "{'i':3.0}", { NULL } },
	{ "fractional float is not",
	  "{'type':'object','properties':{'i':{'type':'integer'}}}",
	  "{'i':3.5}",
	  { "spec.i: Invalid value: \"number\": spec.i in body must be of type integer: \"number\"" } },
	{ "null not nullable",
	  "{'type':'object','properties':{'o':{'type':'object'}}}",
	  "{'o':null}",
	  { "spec.o: Invalid value: \"null\": spec.o in body must be of type object: \"null\"" } },
	{ "null nullable",
	  "{'type':'object','properties':{'o':{'type':'object','nullable':true}}}",
	  "{'o':null}", { NULL } },
	{ "nullable null still checked against enum",
	  "{'type':'object','properties':{'e':{'type':'string','nullable':true,'enum':['a']}}}",
	  "{'e':null}",
	  { "spec.e: Unsupported value: null: supported values: \"a\"" } },
	{ "int-or-string takes both",
	  "{'type':'object','properties':{'q':{'x-kubernetes-int-or-string':true,'pattern':'" QTY "'},'r':{'x-kubernetes-int-or-string':true}}}",
	  "{'q':9,'r':'500m'}", { NULL } },
	{ "int-or-string rejects bool; pattern only on strings",
	  "{'type':'object','properties':{'q':{'x-kubernetes-int-or-string':true},'p':{'x-kubernetes-int-or-string':true,'pattern':'" QTY "'}}}",
	  "{'q':true,'p':'12x'}",
	  { "spec.q: Invalid value: \"boolean\": spec.q in body must be of type integer,string: \"boolean\"",
	    "spec.p: Invalid value: \"12x\": spec.p in body should match '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'" } },
	{ "minItems",
	  "{'type':'object','properties':{'l':{'type':'array','minItems':1}}}",
	  "{'l':[]}",
	  { "spec.l: Invalid value: 0: spec.l in body should have at least 1 items" } },
	{ "array items, then the size",
	  "{'type':'object','properties':{'l':{'type':'array','maxItems':1,'items':{'type':'integer'}}}}",
	  "{'l':['x',2]}",
	  { "spec.l[0]: Invalid value: \"string\": spec.l[0] in body must be of type integer: \"string\"",
	    "spec.l: Too many: 2: must have at most 1 items" } },
	{ "format int32 range",
	  "{'type':'object','properties':{'n':{'type':'integer','format':'int32'},'m':{'type':'integer','format':'int32'}}}",
	  "{'n':2147483648,'m':2147483647}",
	  { "spec.n: Invalid value: 2147483648: Checked value must be of type integer with format int32 in spec.n" } },
	{ "format int32 low end",
	  "{'type':'object','properties':{'n':{'type':'integer','format':'int32'}}}",
	  "{'n':-2147483649}",
	  { "spec.n: Invalid value: -2147483649: Checked value must be of type integer with format int32 in spec.n" } },
	{ "format date-time",
	  "{'type':'object','properties':{'t':{'type':'string','format':'date-time'},'u':{'type':'string','format':'date-time'}}}",
	  "{'t':'yesterday','u':'2025-01-02T15:04:05Z'}",
	  { "spec.t: Invalid value: \"yesterday\": spec.t in body must be of type date-time: \"yesterday\"" } },
	{ "format on a non-string value",
	  "{'type':'object','properties':{'t':{'type':'string','format':'date-time'}}}",
	  "{'t':5}",
	  { "spec.t: Invalid value: \"int64\": spec.t in body must be of type date-time: \"int64\"" } },
	{ "type error does not hide enum",
	  "{'type':'object','properties':{'e':{'type':'string','enum':['a']}}}",
	  "{'e':5}",
	  { "spec.e: Invalid value: \"integer\": spec.e in body must be of type string: \"integer\"",
	    "spec.e: Unsupported value: 5: supported values: \"a\"" } },
	{ "numeric enum",
	  "{'type':'object','properties':{'n':{'type':'integer','enum':[1,2]}}}",
	  "{'n':3}",
	  { "spec.n: Unsupported value: 3: supported values: \"1\", \"2\"" } },
	{ "numeric enum across int and float",
	  "{'type':'object','properties':{'n':{'type':'number','enum':[1.0,2.5]}}}",
	  "{'n':1}", { NULL } },
	{ "additionalProperties values",
	  "{'type':'object','properties':{'labels':{'type':'object','additionalProperties':{'type':'string'}}}}",
	  "{'labels':{'ok':'v','k':1}}",
	  { "spec.labels.k: Invalid value: \"integer\": spec.labels.k in body must be of type string: \"integer\"" } },
	{ "additionalProperties false",
	  "{'type':'object','properties':{'a':{}},'additionalProperties':false}",
	  "{'a':1,'b':1}",
	  { "spec: Invalid value: \"b\": spec.b in body is a forbidden property" } },
	{ "minProperties stops the object checks",
	  "{'type':'object','minProperties':2,'required':['b'],'properties':{'a':{'type':'string'}}}",
	  "{'a':1}",
	  { "spec: Invalid value: 1: spec in body should have at least 2 properties" } },
	{ "maxProperties",
	  "{'type':'object','maxProperties':1}",
	  "{'a':1,'b':2}",
	  { "spec: Too many: 2: must have at most 1 items" } },
	{ "every error, in schema order",
	  "{'type':'object','required':['z'],'properties':{'a':{'type':'integer'},'b':{'type':'string','enum':['x']},'c':{'type':'object','required':['d']}}}",
	  "{'c':{},'b':'y','a':'1'}",
	  { "spec.a: Invalid value: \"string\": spec.a in body must be of type integer: \"string\"",
	    "spec.b: Unsupported value: \"y\": supported values: \"x\"",
	    "spec.c.d: Required value",
	    "spec.z: Required value" } },
	{ "list-type set",
	  "{'type':'object','properties':{'set':{'type':'array','items':{'type':'string'},'x-kubernetes-list-type':'set'}}}",
	  "{'set':['a','b','a','a','b']}",
	  { "spec.set[2]: Duplicate value: \"a\"",
	    "spec.set[4]: Duplicate value: \"b\"" } },
	{ "list-type set keeps 1 and 1.5 apart",
	  "{'type':'object','properties':{'set':{'type':'array','x-kubernetes-list-type':'set'}}}",
	  "{'set':[1,1.5,'1',2]}", { NULL } },
	{ "list-type map",
	  "{'type':'object','properties':{'m':{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name'],'items':{'type':'object','properties':{'name':{'type':'string'}}}}}}",
	  "{'m':[{'name':'a'},{'name':'b'},{'name':'a'}]}",
	  { "spec.m[2]: Duplicate value: map[string]interface {}{\"name\":\"a\"}" } },
	{ "list-type map, missing keys collide",
	  "{'type':'object','properties':{'m':{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name']}}}",
	  "{'m':[{'x':1},{'y':2}]}",
	  { "spec.m[1]: Duplicate value: map[string]interface {}{}" } },
	{ "list-type map, two keys",
	  "{'type':'object','properties':{'mm':{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['b','a']}}}",
	  "{'mm':[{'a':'x','b':1},{'a':'x','b':2},{'a':'x','b':1}]}",
	  { "spec.mm[2]: Duplicate value: map[string]interface {}{\"a\":\"x\", \"b\":1}" } },
	{ "list-type map item not an object",
	  "{'type':'object','properties':{'m':{'type':'array','x-kubernetes-list-type':'map','x-kubernetes-list-map-keys':['name'],'items':{'type':'object'}}}}",
	  "{'m':[{'name':'a'},'x']}",
	  { "spec.m[1]: Invalid value: \"string\": spec.m[1] in body must be of type object: \"string\"",
	    "spec.m[1]: Invalid value: \"x\": must be an object for an array of list-type map" } },
	{ "list types inside maps use [key]",
	  "{'type':'object','properties':{'by':{'type':'object','additionalProperties':{'type':'array','x-kubernetes-list-type':'set'}}}}",
	  "{'by':{'k':[1,1]}}",
	  { "spec.by[k][1]: Duplicate value: 1" } },
	{ "ECMA escapes: \\d",
	  "{'type':'object','properties':{'x':{'type':'string','pattern':'^\\\\d+$'}}}",
	  "{'x':'12a'}",
	  { "spec.x: Invalid value: \"12a\": spec.x in body should match '^\\d+$'" } },
	{ "ECMA escapes match",
	  "{'type':'object','properties':{'a':{'pattern':'^\\\\d{2}\\\\s\\\\w+$'},'b':{'pattern':'^[\\\\d\\\\-]+$'},'c':{'pattern':'^(?:ab)+?c\\\\.$'},'d':{'pattern':'^[^\\\\]x]$'},'e':{'pattern':'^\\\\u0041\\\\/$'}}}",
	  "{'a':'12 ab_9','b':'1-2','c':'ababc.','d':'y','e':'A/'}", { NULL } },
	{ "ECMA escapes reject",
	  "{'type':'object','properties':{'b':{'pattern':'^[\\\\d\\\\-]+$'},'d':{'pattern':'^[^\\\\]x]$'}}}",
	  "{'b':'1+2','d':']'}",
	  { "spec.b: Invalid value: \"1+2\": spec.b in body should match '^[\\d\\-]+$'",
	    "spec.d: Invalid value: \"]\": spec.d in body should match '^[^\\]x]$'" } },
	{ "uncompilable pattern ignored",
	  "{'type':'object','properties':{'x':{'type':'string','pattern':'^(?=a)b'},'y':{'type':'string','pattern':'(('}}}",
	  "{'x':'zzz','y':'q'}", { NULL } },
};

START_TEST(validate)
{
	const struct validate_case *c = &validate_cases[_i];
	json_t *sspec = t_jq(c->schema);
	json_t *schema = json_pack("{s:s, s:{s:O}}", "type", "object",
				   "properties", "spec", sspec);
	json_t *spec = t_jq(c->spec);
	json_t *obj = json_pack("{s:O}", "spec", spec);
	json_t *copy = json_deep_copy(obj);
	struct field_errors fe = FIELD_ERRORS_INIT;

	schema_validate(obj, schema, &fe);
	assert_errors(c->name, &fe, c->want);
	ck_assert_msg(json_equal(obj, copy), "%s: object modified", c->name);
	ck_assert_refcount(obj, 1);
	ck_assert_refcount(schema, 1);
	field_errors_release(&fe);
	json_decref(sspec);
	json_decref(schema);
	json_decref(spec);
	json_decref(obj);
	json_decref(copy);
}
END_TEST

/* ---------------------------------------------------------------- */
/* Kueue's ClusterQueue: what the real API server stores and rejects. */

/* Prune + default as the server decodes a write, then validate. */
static void admit(json_t *obj, const json_t *schema, json_t *unknown,
		  struct field_errors *fe)
{
	schema_prune(obj, schema, unknown);
	schema_default(obj, schema);
	schema_validate(obj, schema, fe);
}

START_TEST(kueue_defaults)
{
	json_t *schema = t_fixture_json("schema/clusterqueue-schema.json");
	json_t *obj = t_jq("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'cq'},'spec':{}}");
	json_t *want = t_jq("{'flavorFungibility':{'whenCanBorrow':'MayStopSearch','whenCanPreempt':'TryNextFlavor'},"
			    "'preemption':{'borrowWithinCohort':{'policy':'Never'},'reclaimWithinCohort':'Never','withinClusterQueue':'Never'},"
			    "'queueingStrategy':'BestEffortFIFO','stopPolicy':'None'}");
	json_t *unknown = json_array();
	struct field_errors fe = FIELD_ERRORS_INIT;

	admit(obj, schema, unknown, &fe);
	assert_json("empty spec", json_object_get(obj, "spec"), want);
	ck_assert_uint_eq(json_array_size(unknown), 0);
	ck_assert_msg(fe.n == 0, "%s", t_fe_text(&fe));
	/* fairSharing present: its weight defaults to 1 */
	json_object_set_new(json_object_get(obj, "spec"), "fairSharing", json_object());
	schema_default(obj, schema);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(
		json_object_get(obj, "spec"), "fairSharing"), "weight")), 1);
	field_errors_release(&fe);
	json_decref(schema);
	json_decref(obj);
	json_decref(want);
	json_decref(unknown);
}
END_TEST

START_TEST(kueue_prune)
{
	json_t *schema = t_fixture_json("schema/clusterqueue-schema.json");
	json_t *obj = t_jq("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue',"
			   "'metadata':{'name':'cq','bogus':true},"
			   "'spec':{'foo':1,'namespaceSelector':{},'resourceGroups':[{'coveredResources':['cpu'],"
			   "'flavors':[{'name':'default','resources':[{'name':'cpu','nominalQuota':9,'bogus':'x'}]}]}],"
			   "'preemption':{'withinClusterQueue':'LowerPriority','extra':{}}},"
			   "'status':{'pendingWorkloads':0,'extra':1}}");
	json_t *want_unknown = t_jq("['spec.foo','spec.preemption.extra',"
				    "'spec.resourceGroups[0].flavors[0].resources[0].bogus',"
				    "'status.extra','metadata.bogus']");
	json_t *unknown = json_array();
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *rg;

	admit(obj, schema, unknown, &fe);
	assert_json("unknown paths", unknown, want_unknown);
	ck_assert_msg(fe.n == 0, "%s", t_fe_text(&fe));
	/* quantities stay as sent: the integer 9 is not made "9" */
	rg = json_array_get(json_object_get(json_object_get(obj, "spec"),
					    "resourceGroups"), 0);
	ck_assert(json_is_integer(json_object_get(json_array_get(json_object_get(
		json_array_get(json_object_get(rg, "flavors"), 0), "resources"), 0),
		"nominalQuota")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(
		json_object_get(obj, "spec"), "preemption"), "withinClusterQueue")),
		"LowerPriority");
	field_errors_release(&fe);
	json_decref(schema);
	json_decref(obj);
	json_decref(want_unknown);
	json_decref(unknown);
}
END_TEST

START_TEST(kueue_errors)
{
	json_t *schema = t_fixture_json("schema/clusterqueue-schema.json");
	json_t *obj = t_jq("{'apiVersion':'kueue.x-k8s.io/v1beta1','kind':'ClusterQueue','metadata':{'name':'cq'},"
			   "'spec':{'cohort':'Bad_Cohort','queueingStrategy':'X','stopPolicy':'Paused',"
			   "'preemption':{'borrowWithinCohort':{'maxPriorityThreshold':3000000000}},"
			   "'excludeResourcePrefixes':['a','a'],"
			   "'resourceGroups':[{'coveredResources':['cpu'],'flavors':["
			   "{'name':'f1','resources':[{'name':'cpu','nominalQuota':'12x'}]},"
			   "{'name':'f1','resources':[{'name':'cpu'}]},"
			   "{'name':'f2','resources':[{'name':'cpu','nominalQuota':true}]}]}]}}");
	json_t *ok = t_jq("{'coveredResources':['cpu'],'flavors':[{'name':'ok','resources':[{'name':'cpu','nominalQuota':1}]}]}");
	json_t *rgs = json_object_get(json_object_get(obj, "spec"), "resourceGroups");
	struct field_errors fe = FIELD_ERRORS_INIT;
	static const char *const want[] = {
		"spec.cohort: Invalid value: \"Bad_Cohort\": spec.cohort in body should match '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$'",
		"spec.preemption.borrowWithinCohort.maxPriorityThreshold: Invalid value: 3000000000: Checked value must be of type integer with format int32 in spec.preemption.borrowWithinCohort.maxPriorityThreshold",
		"spec.queueingStrategy: Unsupported value: \"X\": supported values: \"StrictFIFO\", \"BestEffortFIFO\"",
		"spec.resourceGroups[0].flavors[0].resources[0].nominalQuota: Invalid value: \"12x\": spec.resourceGroups[0].flavors[0].resources[0].nominalQuota in body should match '^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$'",
		"spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: Required value",
		"spec.resourceGroups[0].flavors[2].resources[0].nominalQuota: Invalid value: \"boolean\": spec.resourceGroups[0].flavors[2].resources[0].nominalQuota in body must be of type integer,string: \"boolean\"",
		"spec.resourceGroups: Too many: 17: must have at most 16 items",
		"spec.stopPolicy: Unsupported value: \"Paused\": supported values: \"None\", \"Hold\", \"HoldAndDrain\"",
		"spec.excludeResourcePrefixes[1]: Duplicate value: \"a\"",
		"spec.resourceGroups[0].flavors[1]: Duplicate value: map[string]interface {}{\"name\":\"f1\"}",
		NULL,
	};

	for (int i = 0; i < 16; i++)
		json_array_append_new(rgs, json_deep_copy(ok));
	admit(obj, schema, NULL, &fe);
	assert_errors("kueue", &fe, want);
	ck_assert(field_errors_has_path(&fe, "spec.resourceGroups"));
	field_errors_release(&fe);
	json_decref(ok);
	json_decref(schema);
	json_decref(obj);
}
END_TEST

/* ---------------------------------------------------------------- */
/* Depth: no walk recurses past 128 levels.                          */

START_TEST(deep_documents)
{
	json_t *schema = json_object(), *obj = json_object();
	json_t *s = schema, *o = obj;
	json_t *deep, *arrs, *a;
	struct field_errors fe = FIELD_ERRORS_INIT;
	json_t *unknown = json_array();

	/* 200 levels of schema and data */
	for (int i = 0; i < 200; i++) {
		json_t *ns = json_object(), *no = json_object();

		json_object_set_new(s, "type", json_string("object"));
		json_object_set_new(s, "properties", json_pack("{s:o}", "a", ns));
		json_object_set_new(o, "a", no);
		s = ns;
		o = no;
	}
	json_object_set_new(s, "type", json_string("integer"));
	json_object_set_new(o, "x", json_integer(1));
	schema_validate(obj, schema, &fe);
	ck_assert_uint_eq(fe.n, 1);
	ck_assert_fe(&fe, "Forbidden: nesting deeper than 128 levels");
	schema_prune(obj, schema, unknown);
	schema_default(obj, schema);
	field_errors_release(&fe);

	/* 5000 nested arrays under a schema without items */
	deep = t_jq("{'type':'object','properties':{'l':{'type':'array'}}}");
	arrs = json_array();
	a = arrs;
	for (int i = 0; i < 5000; i++) {
		json_t *n = json_array();

		json_array_append_new(a, n);
		a = n;
	}
	json_array_append_new(a, json_pack("{s:i}", "x", 1));
	o = json_pack("{s:o}", "l", arrs);
	field_errors_init(&fe);
	schema_prune(o, deep, unknown);
	schema_default(o, deep);
	schema_validate(o, deep, &fe);
	ck_assert_uint_eq(fe.n, 0);

	field_errors_release(&fe);
	json_decref(o);
	json_decref(deep);
	json_decref(unknown);
	json_decref(schema);
	json_decref(obj);
}
END_TEST

START_TEST(bad_inputs)
{
	json_t *schema = t_jq("{'type':'object','properties':{'a':{'type':'string'}}}");
	json_t *scalar = json_integer(3);
	struct field_errors fe = FIELD_ERRORS_INIT;

	/* not an object / no schema: nothing happens, nothing crashes */
	schema_prune(scalar, schema, NULL);
	schema_default(scalar, schema);
	schema_validate(NULL, schema, &fe);
	schema_validate(scalar, NULL, &fe);
	ck_assert_uint_eq(fe.n, 0);
	/* a malformed schema node is "no schema" */
	json_decref(schema);
	schema = t_jq("{'type':'object','properties':{'a':'not a schema','b':{'items':5,'type':'array'}}}");
	{
		json_t *obj = t_jq("{'a':1,'b':[1]}");

		schema_validate(obj, schema, &fe);
		schema_default(obj, schema);
		schema_prune(obj, schema, NULL);
		ck_assert_uint_eq(fe.n, 0);
		json_decref(obj);
	}
	field_errors_release(&fe);
	json_decref(schema);
	json_decref(scalar);
}
END_TEST

Suite *schema_suite(void)
{
	Suite *s = suite_create("schema");
	TCase *tc;

	tc = tcase_create("prune");
	tcase_add_loop_test(tc, prune, 0,
			    (int)(sizeof(prune_cases) / sizeof(prune_cases[0])));
	tcase_add_test(tc, prune_without_report);
	suite_add_tcase(s, tc);

	tc = tcase_create("default");
	tcase_add_loop_test(tc, defaults, 0,
			    (int)(sizeof(default_cases) / sizeof(default_cases[0])));
	tcase_add_test(tc, defaults_are_copies);
	suite_add_tcase(s, tc);

	tc = tcase_create("validate");
	tcase_add_loop_test(tc, validate, 0,
			    (int)(sizeof(validate_cases) / sizeof(validate_cases[0])));
	suite_add_tcase(s, tc);

	tc = tcase_create("kueue-clusterqueue");
	tcase_add_test(tc, kueue_defaults);
	tcase_add_test(tc, kueue_prune);
	tcase_add_test(tc, kueue_errors);
	suite_add_tcase(s, tc);

	tc = tcase_create("limits");
	tcase_add_test(tc, deep_documents);
	tcase_add_test(tc, bad_inputs);
	suite_add_tcase(s, tc);
	return s;
}
