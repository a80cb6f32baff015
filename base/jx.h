/*
 * jx: the JSON accessors of the layers outside the core (controller/,
 * webhook/, devserver/, config/, demo/, tests), one meaning per name, so
 * that no file grows its own jstr() again:
 *
 *   jx_str(o, key)        the string at key, or NULL
 *   jx_text(o, key)       the string at key, or ""
 *   jx_obj_peek(o, key)   the object at key, or NULL
 *   JX_DIG(o, k1, k2...)  the value along a path of keys, or NULL
 *   JX_STR(o, k1, k2...)  the string along a path of keys, or NULL
 *   jx_name(obj) ...      metadata.name / namespace / resourceVersion
 *
 * Every accessor takes anything (NULL, a non-object, a missing key) and
 * answers NULL (or the stated default) rather than failing: it reads
 * untrusted objects. Results are borrowed from o and valid while o lives
 * unchanged (STYLE P3: the json_t returners end in _peek).
 *
 * The one module of base/ that sees jansson: it is built into its own
 * archive (libjx.a) and linked only into programs of the non-core
 * libraries; model/ and flavors/ never include it (make check-deps).
 */
#ifndef BASE_JX_H
#define BASE_JX_H

#include <stdint.h>

struct json_t;

/* The string at key of object o (borrowed), or NULL when o is not an
 * object, key is absent or its value is not a string. */
const char *jx_str(const struct json_t *o, const char *key);
/* The same, but "" in place of NULL (for printing and comparing). */
const char *jx_text(const struct json_t *o, const char *key);
/* The object at key of o (borrowed), or NULL when absent or not one. */
struct json_t *jx_obj_peek(const struct json_t *o, const char *key);
/* The array at key of o (borrowed), or NULL when absent or not one. */
struct json_t *jx_arr_peek(const struct json_t *o, const char *key);

/* The value at the end of the NULL-terminated key path keys, walking
 * objects from o (borrowed), or NULL where the path breaks. */
struct json_t *jx_dig_peek(const struct json_t *o, const char *const *keys);
#define JX_DIG(o, ...) \
	jx_dig_peek((o), (const char *const[]){ __VA_ARGS__, NULL })
/* The string at the end of such a path (borrowed), or NULL. */
const char *jx_dig_str(const struct json_t *o, const char *const *keys);
#define JX_STR(o, ...) \
	jx_dig_str((o), (const char *const[]){ __VA_ARGS__, NULL })

/* metadata.<key> of a Kubernetes object as a string (borrowed), or NULL. */
const char *jx_meta_str(const struct json_t *obj, const char *key);
/* metadata.name, metadata.namespace, metadata.resourceVersion (borrowed),
 * or NULL. */
const char *jx_name(const struct json_t *obj);
const char *jx_namespace(const struct json_t *obj);
const char *jx_rv(const struct json_t *obj);
/* metadata.resourceVersion as the number the devserver issues (its
 * leading decimal digits, as strtoull reads them); 0 when absent. */
uint64_t jx_rv_u64(const struct json_t *obj);

#endif
