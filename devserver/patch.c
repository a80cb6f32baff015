/*
 * patch: the PATCH flavours of the Kubernetes API as pure functions (see
 * patch.h for the contract).
 *
 * DESIGN: every entry point deep-copies its inputs first and then works
 * in place on trees nobody else references, so a failure half-way through
 * simply drops the copies: nothing is ever half-applied, and the caller's
 * objects are never touched. No I/O, no logging, no global state except
 * the read-only merge key table.
 *
 * The strategic merge follows k8s.io/apimachinery/pkg/util/strategicpatch
 * (mergeMap / mergeSlice / normalizeElementOrder), including its element
 * order rules: items named by the patch come first in patch order unless
 * the live list already orders them relative to a server-only item. The
 * type information Go reads from struct tags comes from a table of field
 * paths (struct smp_key) instead.
 */
#include "devserver/patch.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

#define DIRECTIVE "$patch"
#define RETAIN_KEYS "$retainKeys"
#define SET_ORDER_PREFIX "$setElementOrder/"
#define DELETE_PRIMITIVE_PREFIX "$deleteFromPrimitiveList/"

/* jansson's iterators take a non-const object but never modify it. */
static json_t *unconst(const json_t *j)
{
	return (json_t *)(uintptr_t)j;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Compact JSON text of v for error messages; returns a new string. */
static char *dump(const json_t *v)
{
	char *s = v ? json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	return s ? s : xstrdup("null");
}

/*
 * Equality for test and for set members: RFC 6902 §4.6 compares numbers
 * by value (1 equals 1.0), which json_equal does not; everything else is
 * structural.
 */
bool patch_value_eq(const json_t *a, const json_t *b)
{
	const char *k;
	const json_t *v;
	size_t i;

	if (!a || !b)
		return a == b;
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		return json_number_value(a) == json_number_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return false;
	switch (json_typeof(a)) {
	case JSON_OBJECT:
		if (json_object_size(a) != json_object_size(b))
			return false;
		json_object_foreach(unconst(a), k, v)
			if (!patch_value_eq(v, json_object_get(b, k)))
				return false;
		return true;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (i = 0; i < json_array_size(a); i++)
			if (!patch_value_eq(json_array_get(a, i),
				      json_array_get(b, i)))
				return false;
		return true;
	default:
		return json_equal(a, b);
	}
}

/* ---------------------------------------------------------------------
 * RFC 7386 JSON merge patch
 */

/* Merges patch into target (stolen, may be NULL); returns a new ref. */
static json_t *merge_take(json_t *target, const json_t *patch)
{
	const char *k;
	json_t *v, *cur;

	if (!json_is_object(patch)) {
		json_decref(target);
		return json_deep_copy(patch);
	}
	if (!json_is_object(target)) {
		json_decref(target);
		target = json_object();
	}
	json_object_foreach(unconst(patch), k, v) {
		if (json_is_null(v)) {
			json_object_del(target, k);
			continue;
		}
		cur = json_object_get(target, k);
		json_incref(cur);
		json_object_set_new(target, k, merge_take(cur, v));
	}
	return target;
}

json_t *patch_merge(const json_t *target, const json_t *patch)
{
	return merge_take(target ? json_deep_copy(target) : NULL, patch);
}

/* ---------------------------------------------------------------------
 * RFC 6901 JSON pointers and RFC 6902 JSON patch
 */

struct ptr {
	char **tok; /* owned; n unescaped reference tokens */
	size_t n;
};

static void ptr_release(struct ptr *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->tok[i]);
	FREE_AND_NULL(p->tok);
	p->n = 0;
}

/* Splits s into unescaped tokens ("~1" -> "/", "~0" -> "~"). Returns -1
 * when s is not a JSON pointer: not "" nor starting with '/', or a '~'
 * not followed by 0 or 1. */
static int ptr_parse(const char *s, struct ptr *p)
{
	size_t cap = 0;

	p->tok = NULL;
	p->n = 0;
	if (!*s)
		return 0;
	if (*s != '/')
		return -1;
	while (*s == '/') {
		const char *end = strchr(s + 1, '/');
		size_t len = end ? (size_t)(end - s - 1) : strlen(s + 1);
		char *t = xmalloc(len + 1), *o = t;

		for (size_t i = 0; i < len; i++) {
			char c = s[1 + i];

			if (c == '~') {
				if (i + 1 < len && s[2 + i] == '0')
					c = '~';
				else if (i + 1 < len && s[2 + i] == '1')
					c = '/';
				else {
					free(t);
					ptr_release(p);
					return -1;
				}
				i++;
			}
			*o++ = c;
		}
		*o = '\0';
		XGROW(p->tok, cap, p->n + 1);
		p->tok[p->n++] = t;
		s += 1 + len;
	}
	return 0;
}

/* Parses an array index: "0" or digits without a leading zero. */
static bool parse_index(const char *t, size_t *out)
{
	size_t v = 0;

	if (!*t || (t[0] == '0' && t[1]) || strlen(t) > 18)
		return false;
	for (; *t; t++) {
		if (*t < '0' || *t > '9')
			return false;
		v = v * 10 + (size_t)(*t - '0');
	}
	*out = v;
	return true;
}

/* One step down from cur; NULL when the member or element is absent. */
static json_t *ptr_step(json_t *cur, const char *tok)
{
	size_t i;

	if (json_is_object(cur))
		return json_object_get(cur, tok);
	if (json_is_array(cur) && parse_index(tok, &i) &&
	    i < json_array_size(cur))
		return json_array_get(cur, i);
	return NULL;
}

/* The container the last token applies to, or NULL (p->n >= 1). */
static json_t *ptr_parent(json_t *root, const struct ptr *p)
{
	json_t *cur = root;

	for (size_t i = 0; cur && i + 1 < p->n; i++)
		cur = ptr_step(cur, p->tok[i]);
	return json_is_object(cur) || json_is_array(cur) ? cur : NULL;
}

static json_t *ptr_get(json_t *root, const struct ptr *p)
{
	json_t *parent;

	if (p->n == 0)
		return root;
	parent = ptr_parent(root, p);
	return parent ? ptr_step(parent, p->tok[p->n - 1]) : NULL;
}

/* True when a is a proper prefix of b. */
static bool ptr_is_proper_prefix(const struct ptr *a, const struct ptr *b)
{
	if (a->n >= b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->tok[i], b->tok[i]) != 0)
			return false;
	return true;
}

static bool ptr_equal(const struct ptr *a, const struct ptr *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->tok[i], b->tok[i]) != 0)
			return false;
	return true;
}

/* The state of one patch_json run; messages name the operation. */
struct jp {
	json_t *doc;     /* owned: the working copy */
	size_t i;        /* index of the operation being applied */
	const char *op;  /* its "op" */
	struct err *err;
};

static int jp_fail(struct jp *j, const char *fmt, ...) PRINTF_LIKE(2, 3);

static int jp_fail(struct jp *j, const char *fmt, ...)
{
	char msg[ERR_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(j->err, "jsonpatch %s (operation %zu)", msg, j->i);
}

/* Adds value (stolen) at p: RFC 6902 §4.1. */
static int jp_add(struct jp *j, const struct ptr *p, const char *path,
		  json_t *value)
{
	json_t *parent;
	const char *last;
	size_t idx;

	if (p->n == 0) {
		json_decref(j->doc);
		j->doc = value;
		return 0;
	}
	parent = ptr_parent(j->doc, p);
	if (!parent) {
		json_decref(value);
		return jp_fail(j, "%s operation does not apply: doc is missing path: \"%s\"",
			       j->op, path);
	}
	last = p->tok[p->n - 1];
	if (json_is_object(parent)) {
		json_object_set_new(parent, last, value);
		return 0;
	}
	if (!strcmp(last, "-")) {
		json_array_append_new(parent, value);
		return 0;
	}
	if (!parse_index(last, &idx) || idx > json_array_size(parent)) {
		json_decref(value);
		return jp_fail(j, "%s operation does not apply: invalid array index %s in path: \"%s\"",
			       j->op, last, path);
	}
	json_array_insert_new(parent, idx, value);
	return 0;
}

/* Removes the value at p (RFC 6902 §4.2); *out (when not NULL) receives
 * the removed value as a new reference. */
static int jp_remove(struct jp *j, const struct ptr *p, const char *path,
		     json_t **out)
{
	json_t *parent, *v;
	const char *last;
	size_t idx;

	if (p->n == 0)
		return jp_fail(j, "%s operation does not apply: cannot remove the whole document",
			       j->op);
	parent = ptr_parent(j->doc, p);
	last = p->tok[p->n - 1];
	v = parent ? ptr_step(parent, last) : NULL;
	if (!v)
		return jp_fail(j, "%s operation does not apply: doc is missing path: \"%s\"",
			       j->op, path);
	if (out)
		*out = json_incref(v);
	if (json_is_object(parent)) {
		json_object_del(parent, last);
	} else {
		(void)parse_index(last, &idx); /* ptr_step validated it */
		json_array_remove(parent, idx);
	}
	return 0;
}

/* Replaces the value at p with value (stolen): RFC 6902 §4.3. */
static int jp_replace(struct jp *j, const struct ptr *p, const char *path,
		      json_t *value)
{
	json_t *parent;
	const char *last;
	size_t idx;

	if (p->n == 0) {
		json_decref(j->doc);
		j->doc = value;
		return 0;
	}
	parent = ptr_parent(j->doc, p);
	last = p->tok[p->n - 1];
	if (!parent || !ptr_step(parent, last)) {
		json_decref(value);
		return jp_fail(j, "%s operation does not apply: doc is missing key: %s",
			       j->op, path);
	}
	if (json_is_object(parent)) {
		json_object_set_new(parent, last, value);
	} else {
		(void)parse_index(last, &idx);
		json_array_set_new(parent, idx, value);
	}
	return 0;
}

/* Applies one operation object to j->doc. */
static int jp_apply_one(struct jp *j, const json_t *op)
{
	const json_t *jpath = json_object_get(op, "path");
	const json_t *jfrom = json_object_get(op, "from");
	const json_t *value = json_object_get(op, "value");
	const char *path, *from = NULL;
	struct ptr p = { NULL, 0 }, f = { NULL, 0 };
	json_t *v = NULL;
	int rc = -1;

	if (!json_is_string(jpath)) {
		jp_fail(j, "%s operation failed to decode path", j->op);
		goto out;
	}
	path = json_string_value(jpath);
	if (ptr_parse(path, &p) < 0) {
		jp_fail(j, "%s operation does not apply: invalid JSON pointer: \"%s\"",
			j->op, path);
		goto out;
	}
	if (!strcmp(j->op, "move") || !strcmp(j->op, "copy")) {
		if (!json_is_string(jfrom)) {
			jp_fail(j, "%s operation failed to decode from", j->op);
			goto out;
		}
		from = json_string_value(jfrom);
		if (ptr_parse(from, &f) < 0) {
			jp_fail(j, "%s operation does not apply: invalid JSON pointer: \"%s\"",
				j->op, from);
			goto out;
		}
	} else if (strcmp(j->op, "remove") != 0 && !value) {
		/* RFC 6902 §4.1, §4.3, §4.6: "value" MUST be present
		 * (it may be null). */
		jp_fail(j, "%s operation is missing its value", j->op);
		goto out;
	}

	if (!strcmp(j->op, "add")) {
		rc = jp_add(j, &p, path, json_deep_copy(value));
	} else if (!strcmp(j->op, "remove")) {
		rc = jp_remove(j, &p, path, NULL);
	} else if (!strcmp(j->op, "replace")) {
		rc = jp_replace(j, &p, path, json_deep_copy(value));
	} else if (!strcmp(j->op, "move")) {
		if (!ptr_get(j->doc, &f)) {
			jp_fail(j, "move operation does not apply: doc is missing from path: %s",
				from);
		} else if (ptr_is_proper_prefix(&f, &p)) {
			jp_fail(j, "move operation does not apply: cannot move %s into its own child %s",
				from, path);
		} else if (ptr_equal(&f, &p)) {
			rc = 0;
		} else if (jp_remove(j, &f, from, &v) == 0) {
			rc = jp_add(j, &p, path, v);
			v = NULL;
		}
	} else if (!strcmp(j->op, "copy")) {
		json_t *src = ptr_get(j->doc, &f);

		if (!src)
			jp_fail(j, "copy operation does not apply: doc is missing from path: %s",
				from);
		else
			rc = jp_add(j, &p, path, json_deep_copy(src));
	} else { /* test */
		json_t *cur = ptr_get(j->doc, &p);

		if (!cur)
			jp_fail(j, "test operation does not apply: is missing path: %s",
				path);
		else if (!patch_value_eq(cur, value))
			jp_fail(j, "testing value %s failed", path);
		else
			rc = 0;
	}
out:
	ptr_release(&p);
	ptr_release(&f);
	return rc;
}

json_t *patch_json(const json_t *target, const json_t *patch, struct err *err)
{
	static const char *const ops[] = {
		"add", "remove", "replace", "move", "copy", "test", NULL,
	};
	struct jp j = { NULL, 0, "", err };

	if (!json_is_array(patch)) {
		err_set(err, "jsonpatch: the patch must be a JSON array of operations");
		return NULL;
	}
	j.doc = target ? json_deep_copy(target) : json_null();
	for (j.i = 0; j.i < json_array_size(patch); j.i++) {
		const json_t *op = json_array_get(patch, j.i);
		const json_t *jop = json_object_get(op, "op");
		size_t k;

		j.op = "unknown";
		if (!json_is_object(op)) {
			jp_fail(&j, "operation is not a JSON object");
			goto fail;
		}
		if (json_is_string(jop))
			j.op = json_string_value(jop);
		for (k = 0; ops[k] && strcmp(ops[k], j.op) != 0; k++)
			;
		if (!ops[k]) {
			err_set(err, "jsonpatch: Unexpected kind: %s (operation %zu)",
				j.op, j.i);
			goto fail;
		}
		if (jp_apply_one(&j, op) < 0)
			goto fail;
	}
	return j.doc;
fail:
	json_decref(j.doc);
	return NULL;
}

/* ---------------------------------------------------------------------
 * Strategic merge patch
 */

/* Lists whose patchStrategy is merge, by field path. Built from the
 * patchMergeKey/patchStrategy tags of k8s.io/api core/v1, batch/v1 and
 * meta/v1. Lists not named here (tolerations, args, readinessGates,
 * podFailurePolicy.rules, ...) are replaced by a patch. */
#define SMP_META_KEYS(M)                        \
	{ M ".finalizers", NULL },              \
	{ M ".ownerReferences", "uid" }

#define SMP_CONTAINER_KEYS(C)                   \
	{ C, "name" },                          \
	{ C ".*.ports", "containerPort" },      \
	{ C ".*.env", "name" },                 \
	{ C ".*.volumeMounts", "mountPath" },   \
	{ C ".*.volumeDevices", "devicePath" }

#define SMP_POD_SPEC_KEYS(S)                            \
	SMP_CONTAINER_KEYS(S ".containers"),            \
	SMP_CONTAINER_KEYS(S ".initContainers"),        \
	SMP_CONTAINER_KEYS(S ".ephemeralContainers"),   \
	{ S ".volumes", "name" },                       \
	{ S ".imagePullSecrets", "name" },              \
	{ S ".hostAliases", "ip" },                     \
	{ S ".topologySpreadConstraints", "topologyKey" }, \
	{ S ".schedulingGates", "name" },               \
	{ S ".resourceClaims", "name" }

const struct smp_key smp_builtin_keys[] = {
	/* Every kind: ObjectMeta. */
	SMP_META_KEYS("metadata"),
	/* Pod; status.conditions is also Job's, Namespace's, Node's and
	 * Deployment's (merge key type everywhere). */
	SMP_POD_SPEC_KEYS("spec"),
	{ "status.conditions", "type" },
	{ "status.podIPs", "ip" },
	{ "status.hostIPs", "ip" },
	{ "status.resourceClaimStatuses", "name" },
	/* Job, Deployment, ReplicaSet, StatefulSet, DaemonSet: a
	 * PodTemplateSpec under spec.template. */
	SMP_META_KEYS("spec.template.metadata"),
	SMP_POD_SPEC_KEYS("spec.template.spec"),
	/* PodTemplate. */
	SMP_META_KEYS("template.metadata"),
	SMP_POD_SPEC_KEYS("template.spec"),
	/* CronJob. */
	SMP_META_KEYS("spec.jobTemplate.metadata"),
	SMP_META_KEYS("spec.jobTemplate.spec.template.metadata"),
	SMP_POD_SPEC_KEYS("spec.jobTemplate.spec.template.spec"),
	/* Service and Node, for completeness. */
	{ "spec.ports", "port" },
	{ "status.addresses", "type" },
	/* Event, ConfigMap, Namespace spec: nothing special. */
	{ NULL, NULL },
};

/* A growable dotted field path ("spec.template.spec.containers.*"). */
struct path {
	char *s;    /* owned; NUL-terminated */
	size_t len; /* strlen(s) */
	size_t cap; /* bytes allocated */
};

/* Appends ".seg" (or "seg" at the root); returns the length to restore. */
static size_t path_push(struct path *p, const char *seg)
{
	size_t old = p->len, n = strlen(seg);

	XGROW(p->s, p->cap, p->len + n + 2);
	if (p->len)
		p->s[p->len++] = '.';
	memcpy(p->s + p->len, seg, n + 1);
	p->len += n;
	return old;
}

static void path_pop(struct path *p, size_t old)
{
	p->len = old;
	p->s[old] = '\0';
}

struct smp {
	const struct smp_key *keys; /* borrowed; NULL-path terminated */
	struct path path;           /* of the value being merged */
	struct err *err;
};

/* The table entry of the list at s->path + "." + field, or NULL. */
static const struct smp_key *smp_lookup(struct smp *s, const char *field)
{
	const struct smp_key *hit = NULL;
	size_t old = path_push(&s->path, field);

	for (const struct smp_key *k = s->keys; k && k->path; k++) {
		if (!strcmp(k->path, s->path.s)) {
			hit = k;
			break;
		}
	}
	path_pop(&s->path, old);
	return hit;
}

/*
 * A copy of a patch value fit to be stored, for values that have nothing
 * to merge with (strategicpatch's removeDirectives and
 * discardNullValuesFromPatch): list elements carrying "$patch" and maps
 * carrying "$patch": "delete" vanish (NULL), other directive keys and
 * null members are dropped. Unlike Kubernetes, a map marked "$patch":
 * "replace" keeps its content: that is what replacing nothing means.
 */
static json_t *copy_stripped(const json_t *v)
{
	const char *k;
	json_t *m, *out, *c;
	size_t i;

	if (json_is_object(v)) {
		const json_t *d = json_object_get(v, DIRECTIVE);

		if (json_is_string(d) && !strcmp(json_string_value(d), "delete"))
			return NULL;
		out = json_object();
		json_object_foreach(unconst(v), k, m) {
			if (json_is_null(m) || !strcmp(k, DIRECTIVE) ||
			    !strcmp(k, RETAIN_KEYS) ||
			    has_prefix(k, SET_ORDER_PREFIX) ||
			    has_prefix(k, DELETE_PRIMITIVE_PREFIX))
				continue;
			c = copy_stripped(m);
			if (c)
				json_object_set_new(out, k, c);
		}
		return out;
	}
	if (json_is_array(v)) {
		out = json_array();
		json_array_foreach(v, i, m) {
			/* A list element with a directive is a marker
			 * ({"$patch": "replace"}), never content. */
			if (json_is_object(m) && json_object_get(m, DIRECTIVE))
				continue;
			c = copy_stripped(m);
			if (c)
				json_array_append_new(out, c);
		}
		return out;
	}
	return json_deep_copy(v);
}

static int smp_fail(struct smp *s, const char *fmt, ...) PRINTF_LIKE(2, 3);

static int smp_fail(struct smp *s, const char *fmt, ...)
{
	va_list ap;
	char msg[ERR_MAX];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(s->err, "%s", msg);
}

static int fail_no_merge_key(struct smp *s, const json_t *m, const char *key)
{
	char *t = dump(m);

	smp_fail(s, "map: %s does not contain declared merge key: %s", t, key);
	free(t);
	return -1;
}

/* mergepatch.ErrBadPatchType: strings print bare, as Go's %s does. */
static int fail_bad_patch_type(struct smp *s, const json_t *d, const json_t *m)
{
	char *td = json_is_string(d) ? xstrdup(json_string_value(d)) : dump(d);
	char *t = dump(m);

	smp_fail(s, "unknown patch type: %s in map: %s", td, t);
	free(td);
	free(t);
	return -1;
}

/* Position of item in order: by merge key value when key is set (a
 * missing key matches a missing key, as Go's nil == nil), else by value.
 * SIZE_MAX when absent. */
static size_t order_index(const json_t *order, const json_t *item,
			  const char *key)
{
	size_t i;

	for (i = 0; order && i < json_array_size(order); i++) {
		const json_t *o = json_array_get(order, i);

		if (key ? patch_value_eq(json_object_get(o, key),
				   json_object_get(item, key))
			: patch_value_eq(o, item))
			return i;
	}
	return SIZE_MAX;
}

/* A borrowed list of values being partitioned and sorted. */
struct vec {
	json_t **v; /* borrowed pointers */
	size_t n, cap;
};

static void vec_push(struct vec *x, json_t *j)
{
	XGROW(x->v, x->cap, x->n + 1);
	x->v[x->n++] = j;
}

/* Stable sort of x by position in order (normalizeSliceOrder). Items
 * absent from order keep their relative place after the others. */
static void vec_sort_by(struct vec *x, const json_t *order, const char *key)
{
	size_t *idx = xcalloc(x->n ? x->n : 1, sizeof(*idx));

	for (size_t i = 0; i < x->n; i++)
		idx[i] = order_index(order, x->v[i], key);
	for (size_t i = 1; i < x->n; i++) {
		json_t *v = x->v[i];
		size_t k = idx[i], j = i;

		for (; j > 0 && idx[j - 1] > k; j--) {
			x->v[j] = x->v[j - 1];
			idx[j] = idx[j - 1];
		}
		x->v[j] = v;
		idx[j] = k;
	}
	free(idx);
}

/*
 * mergeSortedSlice: interleaves the server-only items (left) into the
 * patch items (right), both already sorted. A server-only item goes first
 * only when the live list orders it before the patch item at hand, so
 * items new to the list come ahead of the remaining server-only ones.
 * Returns a new array.
 */
static json_t *merge_sorted(const struct vec *left, const struct vec *right,
			    const json_t *server_order, const char *key)
{
	json_t *out = json_array();
	size_t i = 0, j = 0;

	while (i < left->n || j < right->n) {
		bool take_left;

		if (i >= left->n) {
			take_left = false;
		} else if (j >= right->n) {
			take_left = true;
		} else {
			size_t li = order_index(server_order, left->v[i], key);
			size_t ri = order_index(server_order, right->v[j], key);

			take_left = li != SIZE_MAX && ri != SIZE_MAX && li < ri;
		}
		if (take_left)
			json_array_append(out, left->v[i++]);
		else
			json_array_append(out, right->v[j++]);
	}
	return out;
}

/* partition + normalizeElementOrder: the items of merged named by
 * patch_order (by key or value) sorted by it, the others by
 * server_order, then interleaved. Returns a new array. */
static json_t *normalize_order(const json_t *merged, const json_t *patch_order,
			       const json_t *server_order, const char *key)
{
	struct vec in = { NULL, 0, 0 }, rest = { NULL, 0, 0 };
	json_t *v, *out;
	size_t i;

	json_array_foreach(merged, i, v) {
		if (order_index(patch_order, v, key) != SIZE_MAX)
			vec_push(&in, v);
		else
			vec_push(&rest, v);
	}
	vec_sort_by(&in, patch_order, key);
	vec_sort_by(&rest, server_order, key);
	out = merge_sorted(&rest, &in, server_order, key);
	free(in.v);
	free(rest.v);
	return out;
}

enum elem_kind { EK_NONE, EK_OBJECT, EK_SCALAR };

/* sliceElementType over two lists: all elements must share a kind
 * (numbers are one kind, as in Go's float64), and lists of lists are
 * refused. */
static int slice_kind(struct smp *s, const json_t *a, const json_t *b,
		      enum elem_kind *out)
{
	const json_t *lists[2] = { a, b };
	json_type first = JSON_NULL;
	bool seen = false;

	*out = EK_NONE;
	for (int l = 0; l < 2; l++) {
		const json_t *v;
		size_t i;

		json_array_foreach(lists[l], i, v) {
			json_type t = json_typeof(v);

			if (t == JSON_ARRAY)
				return smp_fail(s, "lists of lists are not supported");
			if (t == JSON_REAL)
				t = JSON_INTEGER;
			if (t == JSON_FALSE)
				t = JSON_TRUE;
			if (seen && t != first) {
				char *ta = dump(a), *tb = dump(b);

				smp_fail(s, "list element types are not identical: [%s %s]",
					 ta, tb);
				free(ta);
				free(tb);
				return -1;
			}
			first = t;
			seen = true;
		}
	}
	if (seen)
		*out = first == JSON_OBJECT ? EK_OBJECT : EK_SCALAR;
	return 0;
}

static json_t *smp_map(struct smp *s, json_t *orig, json_t *patch);

/* Union of two primitive lists in strategicpatch's order. New array. */
static json_t *merge_scalars(const json_t *olist, const json_t *plist)
{
	json_t *merged = json_array(), *v, *out;
	size_t i;

	json_array_foreach(olist, i, v)
		if (order_index(merged, v, NULL) == SIZE_MAX)
			json_array_append(merged, v);
	json_array_foreach(plist, i, v)
		if (order_index(merged, v, NULL) == SIZE_MAX)
			json_array_append(merged, v);
	out = normalize_order(merged, plist, olist, NULL);
	json_decref(merged);
	return out;
}

/*
 * mergeSlice for lists of maps with merge key key: "$patch" elements
 * first (delete removes every live element with that key, replace makes
 * the rest of the patch the whole list), then each patch element merges
 * into the live element with the same key or is added. olist and plist
 * are borrowed (plist's elements may be modified). Returns a new array.
 */
static json_t *merge_maps(struct smp *s, const json_t *olist, json_t *plist,
			  const char *key)
{
	json_t *live = json_array(), *rest = json_array(), *out = NULL, *v;
	json_t *server = NULL;
	bool replace = false;
	size_t i;

	json_array_extend(live, unconst(olist));
	json_array_foreach(plist, i, v) {
		const json_t *d = json_object_get(v, DIRECTIVE);
		const char *dv = json_string_value(d);
		const json_t *kv;
		size_t k;

		if (!d) {
			json_array_append(rest, v);
		} else if (dv && !strcmp(dv, "delete")) {
			kv = json_object_get(v, key);
			if (!kv) {
				fail_no_merge_key(s, v, key);
				goto out;
			}
			for (k = 0; k < json_array_size(live);) {
				json_t *e = json_array_get(live, k);

				if (patch_value_eq(json_object_get(e, key), kv))
					json_array_remove(live, k);
				else
					k++;
			}
		} else if (dv && !strcmp(dv, "replace")) {
			replace = true;
		} else if (dv && !strcmp(dv, "merge")) {
			smp_fail(s, "merging lists cannot yet be specified in the patch");
			goto out;
		} else {
			fail_bad_patch_type(s, d, v);
			goto out;
		}
	}
	if (replace) {
		json_array_clear(live);
		json_array_foreach(rest, i, v) {
			json_t *c = copy_stripped(v);

			if (c)
				json_array_append_new(live, c);
		}
		json_array_clear(rest);
	}

	/* Every element on both sides must carry the merge key. */
	json_array_foreach(live, i, v) {
		if (!json_is_object(v) || !json_object_get(v, key)) {
			fail_no_merge_key(s, v, key);
			goto out;
		}
	}
	/* The server order: the live list after deletions, before the
	 * patch's additions (what Kubernetes' original slice holds). */
	server = json_array();
	json_array_extend(server, live);
	json_array_foreach(rest, i, v) {
		const json_t *kv = json_object_get(v, key);
		size_t at;

		if (!kv) {
			fail_no_merge_key(s, v, key);
			goto out;
		}
		at = order_index(live, v, key);
		if (at != SIZE_MAX) {
			json_t *m = json_array_get(live, at), *r;
			size_t old = path_push(&s->path, "*");

			json_incref(m);
			r = smp_map(s, m, v);
			path_pop(&s->path, old);
			if (!r)
				goto out;
			json_array_set_new(live, at, r);
		} else {
			json_t *c = copy_stripped(v);

			if (c)
				json_array_append_new(live, c);
		}
	}
	out = normalize_order(live, rest, server, key);
out:
	json_decref(server);
	json_decref(live);
	json_decref(rest);
	return out;
}

/* mergeSliceHandler for a list with merge strategy. New array or NULL. */
static json_t *merge_slice(struct smp *s, const json_t *olist, json_t *plist,
			   const struct smp_key *entry)
{
	enum elem_kind kind;

	if (slice_kind(s, olist, plist, &kind) < 0)
		return NULL;
	if (kind == EK_NONE)
		return json_array();
	if (kind == EK_SCALAR)
		return merge_scalars(olist, plist);
	if (!entry->key) {
		smp_fail(s, "cannot merge lists without merge key for type map");
		return NULL;
	}
	return merge_maps(s, olist, plist, entry->key);
}

/* $retainKeys: the patch may only name listed keys; the live map loses
 * every key not listed. */
static int retain_keys(struct smp *s, json_t *orig, json_t *patch)
{
	json_t *list = json_object_get(patch, RETAIN_KEYS), *v;
	const char *k;
	void *tmp;

	if (!list)
		return 0;
	if (!json_is_array(list))
		return smp_fail(s, "invalid patch format of retainKeys");
	json_object_foreach(patch, k, v) {
		json_t *name = json_string(k);
		bool listed;

		if (json_is_null(v) || !strcmp(k, RETAIN_KEYS) ||
		    has_prefix(k, SET_ORDER_PREFIX) ||
		    has_prefix(k, DELETE_PRIMITIVE_PREFIX)) {
			json_decref(name);
			continue;
		}
		listed = order_index(list, name, NULL) != SIZE_MAX;
		json_decref(name);
		if (!listed)
			return smp_fail(s, "invalid patch format of retainKeys");
	}
	json_object_foreach_safe(orig, tmp, k, v) {
		json_t *name = json_string(k);

		if (order_index(list, name, NULL) == SIZE_MAX)
			json_object_del(orig, k);
		json_decref(name);
	}
	json_object_del(patch, RETAIN_KEYS);
	return 0;
}

/* validatePatchWithSetOrderList: the patch list's items (deletions
 * aside) must appear in the $setElementOrder list in the same relative
 * order. */
static int check_set_order(struct smp *s, const json_t *plist,
			   const json_t *order, const char *key)
{
	size_t pi = 0, oi = 0, np = json_array_size(plist);
	size_t no = json_array_size(order);

	if (!np || !no)
		return 0;
	while (pi < np && oi < no) {
		const json_t *pv = json_array_get(plist, pi);
		const json_t *ov = json_array_get(order, oi);
		bool eq;

		if (json_is_object(pv) && json_object_get(pv, DIRECTIVE)) {
			pi++;
			continue;
		}
		if (key) {
			if (!json_object_get(pv, key))
				return fail_no_merge_key(s, pv, key);
			if (!json_object_get(ov, key))
				return fail_no_merge_key(s, ov, key);
			eq = patch_value_eq(json_object_get(pv, key),
				      json_object_get(ov, key));
		} else {
			eq = patch_value_eq(pv, ov);
		}
		if (eq)
			pi++;
		oi++;
	}
	while (pi < np && json_is_object(json_array_get(plist, pi)) &&
	       json_object_get(json_array_get(plist, pi), DIRECTIVE))
		pi++;
	if (pi < np) {
		char *tp = dump(plist), *to = dump(order);

		smp_fail(s, "The order in patch list:\n%s\n doesn't match %s list:\n%s\n",
			 tp, SET_ORDER_PREFIX, to);
		free(tp);
		free(to);
		return -1;
	}
	return 0;
}

/* One $setElementOrder/<field> directive (mergePatchIntoOriginal): merge
 * the list if the patch has it, then order it by the directive. */
static int set_order_one(struct smp *s, json_t *orig, json_t *patch,
			 const char *dkey)
{
	const char *field = dkey + strlen(SET_ORDER_PREFIX);
	json_t *order = json_object_get(patch, dkey);
	json_t *olist = json_object_get(orig, field);
	json_t *plist = json_object_get(patch, field);
	const struct smp_key *entry;
	json_t *merged, *out;
	const char *key;
	enum elem_kind kind;
	size_t old;

	if (!*field || !json_is_array(order))
		return smp_fail(s, "invalid patch format of setElementOrder list");
	if ((olist && !json_is_array(olist)) ||
	    (plist && !json_is_array(plist)))
		return smp_fail(s, "%s: expected a list", field);
	entry = smp_lookup(s, field);
	key = entry ? entry->key : NULL;
	if (slice_kind(s, olist, plist, &kind) < 0)
		return -1;
	if (kind == EK_SCALAR)
		key = NULL;
	if (check_set_order(s, plist, order, key) < 0)
		return -1;
	if (!olist && !plist)
		return 0;
	if (!plist) {
		merged = json_incref(olist);
	} else if (!olist || !entry) {
		merged = copy_stripped(plist);
	} else {
		old = path_push(&s->path, field);
		merged = merge_slice(s, olist, plist, entry);
		path_pop(&s->path, old);
		if (!merged)
			return -1;
	}
	/* Order maps only by a merge key; without one (an unknown list of
	 * maps) Kubernetes fails, we keep the merged order. */
	if (kind == EK_OBJECT && !key) {
		out = json_incref(merged);
	} else {
		out = normalize_order(merged, order, olist, key);
	}
	json_decref(merged);
	json_object_set_new(orig, field, out);
	json_object_del(patch, field);
	return 0;
}

static int set_element_order(struct smp *s, json_t *orig, json_t *patch)
{
	json_t *names = json_array(), *v;
	const char *k;
	size_t i;
	int rc = 0;

	json_object_foreach(patch, k, v)
		if (has_prefix(k, SET_ORDER_PREFIX))
			json_array_append_new(names, json_string(k));
	json_array_foreach(names, i, v) {
		rc = set_order_one(s, orig, patch, json_string_value(v));
		if (rc < 0)
			break;
		json_object_del(patch, json_string_value(v));
	}
	json_decref(names);
	return rc;
}

/* $deleteFromPrimitiveList/<field>: drops the listed values. */
static int delete_from_list(struct smp *s, json_t *orig, const char *field,
			    const json_t *values)
{
	json_t *list = json_object_get(orig, field);
	size_t i;

	if (!*field)
		return smp_fail(s, "invalid patch format of primitive list");
	if (json_is_null(values)) {
		json_object_del(orig, field);
		return 0;
	}
	if (!json_is_array(list) || !json_is_array(values))
		return 0;
	for (i = 0; i < json_array_size(list);) {
		const json_t *v = json_array_get(list, i);

		if (order_index(values, v, NULL) != SIZE_MAX)
			json_array_remove(list, i);
		else
			i++;
	}
	return 0;
}

/* Merges one patch member k: pv into orig (mergeMap's loop body). */
static int smp_field(struct smp *s, json_t *orig, const char *k, json_t *pv)
{
	json_t *ov, *r;
	const struct smp_key *entry;
	size_t old;

	if (has_prefix(k, DELETE_PRIMITIVE_PREFIX)) {
		k += strlen(DELETE_PRIMITIVE_PREFIX);
		return delete_from_list(s, orig, k, pv);
	}
	if (json_is_null(pv)) {
		json_object_del(orig, k);
		return 0;
	}
	ov = json_object_get(orig, k);
	if (json_is_object(ov) && json_is_object(pv)) {
		old = path_push(&s->path, k);
		r = smp_map(s, json_incref(ov), pv);
		path_pop(&s->path, old);
		if (!r)
			return -1;
		json_object_set_new(orig, k, r);
		return 0;
	}
	if (json_is_array(ov) && json_is_array(pv) &&
	    (entry = smp_lookup(s, k)) != NULL) {
		old = path_push(&s->path, k);
		r = merge_slice(s, ov, pv, entry);
		path_pop(&s->path, old);
		if (!r)
			return -1;
		json_object_set_new(orig, k, r);
		return 0;
	}
	/* Absent, of another type, a scalar, or a list that replaces. */
	r = copy_stripped(pv);
	if (r)
		json_object_set_new(orig, k, r);
	else
		json_object_del(orig, k);
	return 0;
}

/*
 * mergeMap: orig is stolen (may be NULL or a non-object: then {}), patch
 * is borrowed and consumed (its directives are deleted as they are
 * applied). Returns a new reference, or NULL with s->err set.
 */
static json_t *smp_map(struct smp *s, json_t *orig, json_t *patch)
{
	json_t *d = json_object_get(patch, DIRECTIVE), *pv;
	const char *k;

	if (d) {
		const char *dv = json_string_value(d);

		if (dv && !strcmp(dv, "replace")) {
			json_decref(orig);
			json_object_del(patch, DIRECTIVE);
			return copy_stripped(patch);
		}
		if (dv && !strcmp(dv, "delete")) {
			json_decref(orig);
			return json_object();
		}
		if (!dv || strcmp(dv, "merge") != 0) {
			fail_bad_patch_type(s, d, patch);
			json_decref(orig);
			return NULL;
		}
		/* "merge" is the default; Kubernetes refuses it in a map. */
		json_object_del(patch, DIRECTIVE);
	}
	if (!json_is_object(orig)) {
		json_decref(orig);
		orig = json_object();
	}
	if (retain_keys(s, orig, patch) < 0 ||
	    set_element_order(s, orig, patch) < 0)
		goto fail;
	json_object_foreach(patch, k, pv)
		if (smp_field(s, orig, k, pv) < 0)
			goto fail;
	return orig;
fail:
	json_decref(orig);
	return NULL;
}

json_t *patch_strategic(const json_t *target, const json_t *patch,
			const struct smp_key *keys, struct err *err)
{
	struct smp s = { keys, { NULL, 0, 0 }, err };
	json_t *p, *out;

	if (!json_is_object(patch)) {
		err_set(err, "invalid JSON document: a strategic merge patch must be a JSON object");
		return NULL;
	}
	if (target && !json_is_object(target)) {
		err_set(err, "invalid JSON document: the object to patch is not a JSON object");
		return NULL;
	}
	XGROW(s.path.s, s.path.cap, 64);
	s.path.s[0] = '\0';
	p = json_deep_copy(patch);
	out = smp_map(&s, target ? json_deep_copy(target) : NULL, p);
	json_decref(p);
	free(s.path.s);
	return out;
}

/* ---------------------------------------------------------------------
 * Server-side apply, reduced
 */

struct ssa {
	struct path path;   /* ".spec.podSets", structured-merge-diff style */
	json_t *owner_keys; /* owned: ["uid"] */
	struct err *err;
};

/* The schema of member k of an object schema (properties, then
 * additionalProperties), or NULL. */
static const json_t *schema_member(const json_t *schema, const char *k)
{
	const json_t *props = json_object_get(schema, "properties");
	const json_t *sub = json_object_get(props, k);

	if (sub)
		return sub;
	sub = json_object_get(schema, "additionalProperties");
	return json_is_object(sub) ? sub : NULL;
}

/* The map keys of a list (x-kubernetes-list-type: map), or NULL. Root
 * metadata.ownerReferences is a map list by uid even when the CRD schema
 * does not describe metadata (ObjectMeta is built in). */
static const json_t *ssa_list_keys(const struct ssa *a, const json_t *schema)
{
	const json_t *type = json_object_get(schema, "x-kubernetes-list-type");

	if (json_is_string(type) && !strcmp(json_string_value(type), "map"))
		return json_object_get(schema, "x-kubernetes-list-map-keys");
	if (!schema && !strcmp(a->path.s, ".metadata.ownerReferences"))
		return a->owner_keys;
	return NULL;
}

static void ssa_push(struct ssa *a, const char *seg, size_t *old)
{
	size_t n = strlen(seg);

	*old = a->path.len;
	XGROW(a->path.s, a->path.cap, a->path.len + n + 2);
	a->path.s[a->path.len++] = '.';
	memcpy(a->path.s + a->path.len, seg, n + 1);
	a->path.len += n;
}

/* True when elements a and b agree on every map key (absent == absent). */
static bool same_keys(const json_t *keys, const json_t *a, const json_t *b)
{
	const json_t *k;
	size_t i;

	json_array_foreach(keys, i, k) {
		const char *name = json_string_value(k);

		if (!name || !patch_value_eq(json_object_get(a, name),
				       json_object_get(b, name)))
			return false;
	}
	return true;
}

/* "[name=\"main\",role=1]" for messages; a new string. */
static char *key_text(const json_t *keys, const json_t *elem)
{
	char *out = xstrdup("["), *t, *n;
	const json_t *k;
	size_t i;

	json_array_foreach(keys, i, k) {
		const char *name = json_string_value(k);

		t = dump(name ? json_object_get(elem, name) : NULL);
		n = xasprintf("%s%s%s=%s", out, i ? "," : "", name ? name : "?", t);
		free(out);
		free(t);
		out = n;
	}
	n = xasprintf("%s]", out);
	free(out);
	return n;
}

static json_t *ssa_value(struct ssa *a, json_t *target, const json_t *applied,
			 const json_t *schema);

/* Merges a list-type map: applied elements merge into the target element
 * with the same keys, unmatched ones are appended. target is stolen. */
static json_t *ssa_map_list(struct ssa *a, json_t *target,
			    const json_t *applied, const json_t *schema,
			    const json_t *keys)
{
	const json_t *items = json_object_get(schema, "items");
	const json_t *v;
	size_t i, j;

	json_array_foreach(applied, i, v) {
		if (!json_is_object(v)) {
			err_set(a->err, "%s: element %zu of a list-type map is not an object",
				a->path.s, i);
			goto fail;
		}
		for (j = 0; j < i; j++) {
			if (same_keys(keys, json_array_get(applied, j), v)) {
				char *t = key_text(keys, v);

				err_set(a->err, "%s: duplicate entries for key %s",
					a->path.s, t);
				free(t);
				goto fail;
			}
		}
	}
	json_array_foreach(applied, i, v) {
		json_t *m;

		for (j = 0; j < json_array_size(target); j++)
			if (json_is_object(json_array_get(target, j)) &&
			    same_keys(keys, json_array_get(target, j), v))
				break;
		if (j == json_array_size(target)) {
			json_array_append_new(target, json_deep_copy(v));
			continue;
		}
		m = json_incref(json_array_get(target, j));
		m = ssa_value(a, m, v, items);
		if (!m)
			goto fail;
		json_array_set_new(target, j, m);
	}
	return target;
fail:
	json_decref(target);
	return NULL;
}

/* Deep merge of applied into target (stolen, may be NULL) along schema.
 * Returns a new reference, or NULL with a->err set. */
static json_t *ssa_value(struct ssa *a, json_t *target, const json_t *applied,
			 const json_t *schema)
{
	const json_t *keys;
	const char *k;
	json_t *v;

	if (json_is_object(applied) && json_is_object(target)) {
		json_object_foreach(unconst(applied), k, v) {
			json_t *m;
			size_t old;

			/* Without ownership tracking, a null in the applied
			 * configuration can only mean "remove it". */
			if (json_is_null(v)) {
				json_object_del(target, k);
				continue;
			}
			ssa_push(a, k, &old);
			m = json_incref(json_object_get(target, k));
			m = ssa_value(a, m, v, schema_member(schema, k));
			path_pop(&a->path, old);
			if (!m) {
				json_decref(target);
				return NULL;
			}
			json_object_set_new(target, k, m);
		}
		return target;
	}
	if (json_is_array(applied) && json_is_array(target)) {
		keys = ssa_list_keys(a, schema);
		if (json_is_array(keys) && json_array_size(keys))
			return ssa_map_list(a, target, applied, schema, keys);
	}
	json_decref(target);
	return json_deep_copy(applied);
}

json_t *patch_apply(const json_t *target, const json_t *applied,
		    const json_t *schema, struct err *err)
{
	struct ssa a = { { NULL, 0, 0 }, NULL, err };
	json_t *out;

	if (!json_is_object(applied)) {
		err_set(err, "the applied configuration must be a JSON object");
		return NULL;
	}
	if (!target)
		return json_deep_copy(applied);
	if (!json_is_object(target)) {
		err_set(err, "the object to apply to is not a JSON object");
		return NULL;
	}
	XGROW(a.path.s, a.path.cap, 64);
	a.path.s[0] = '\0';
	a.owner_keys = json_pack("[s]", "uid");
	out = ssa_value(&a, json_deep_copy(target), applied, schema);
	json_decref(a.owner_keys);
	free(a.path.s);
	return out;
}

/* ---------------------------------------------------------------------
 * Diff
 */

/* Appends "/" + the RFC 6901 escape of seg to ptr; returns the length to
 * restore. */
static size_t ptr_push(struct path *p, const char *seg)
{
	size_t old = p->len;

	XGROW(p->s, p->cap, p->len + 2 * strlen(seg) + 2);
	p->s[p->len++] = '/';
	for (; *seg; seg++) {
		if (*seg == '~' || *seg == '/') {
			p->s[p->len++] = '~';
			p->s[p->len++] = *seg == '~' ? '0' : '1';
		} else {
			p->s[p->len++] = *seg;
		}
	}
	p->s[p->len] = '\0';
	return old;
}

static void diff_op(json_t *ops, const char *op, const char *path,
		    const json_t *value)
{
	json_t *o = json_object();

	json_object_set_new(o, "op", json_string(op));
	json_object_set_new(o, "path", json_string(path));
	if (value)
		json_object_set_new(o, "value", json_deep_copy(value));
	json_array_append_new(ops, o);
}

static void diff_rec(json_t *ops, struct path *p, const json_t *a,
		     const json_t *b)
{
	const char *k;
	json_t *v;
	size_t i, old, na, nb;
	char idx[32];

	if (json_equal(a, b))
		return;
	if (json_is_object(a) && json_is_object(b)) {
		json_object_foreach(unconst(a), k, v) {
			if (json_object_get(b, k))
				continue;
			old = ptr_push(p, k);
			diff_op(ops, "remove", p->s, NULL);
			path_pop(p, old);
		}
		json_object_foreach(unconst(b), k, v) {
			const json_t *av = json_object_get(a, k);

			old = ptr_push(p, k);
			if (av)
				diff_rec(ops, p, av, v);
			else
				diff_op(ops, "add", p->s, v);
			path_pop(p, old);
		}
		return;
	}
	if (json_is_array(a) && json_is_array(b)) {
		na = json_array_size(a);
		nb = json_array_size(b);
		for (i = 0; i < na || i < nb; i++) {
			/* Removals run from the end so indexes stay valid. */
			size_t at = i < nb ? i : na - 1 - (i - nb);

			snprintf(idx, sizeof(idx), "%zu", at);
			old = ptr_push(p, idx);
			if (i < na && i < nb)
				diff_rec(ops, p, json_array_get(a, i),
					 json_array_get(b, i));
			else if (i < nb)
				diff_op(ops, "add", p->s, json_array_get(b, i));
			else
				diff_op(ops, "remove", p->s, NULL);
			path_pop(p, old);
		}
		return;
	}
	diff_op(ops, "replace", p->s, b);
}

json_t *patch_diff(const json_t *from, const json_t *to)
{
	struct path p = { NULL, 0, 0 };
	json_t *ops = json_array();

	XGROW(p.s, p.cap, 64);
	p.s[0] = '\0';
	diff_rec(ops, &p, from, to);
	free(p.s);
	return ops;
}
