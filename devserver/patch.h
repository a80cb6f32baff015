/*
 * patch: the four PATCH flavours of the Kubernetes API, as pure functions
 * from (current object, patch) to a new object. No I/O, no locks.
 *
 *  - JSON merge patch (RFC 7386): null deletes, objects merge, the rest
 *    (arrays included) replaces.
 *  - JSON patch (RFC 6902): add, remove, replace, move, copy, test, with
 *    JSON pointers (RFC 6901, ~0 ~1, "-" for append).
 *  - Strategic merge patch for built-in types: lists of objects merge by
 *    their patchMergeKey (a table per field path), primitive lists with
 *    the merge strategy merge as sets, directives $patch (replace, delete,
 *    merge), $setElementOrder/<field>, $retainKeys,
 *    $deleteFromPrimitiveList/<field>.
 *  - Server-side apply, reduced: deep merge where lists declared
 *    x-kubernetes-list-type: map merge by their keys and other lists are
 *    replaced; no managedFields ownership. The write path uses it only for
 *    --preload, whose writes own no fields; every other apply goes
 *    through managed.h (merge, ownership, conflicts).
 *
 * Every function returns a new object and never modifies its inputs.
 * Failures return NULL and fill err with the reason the API server would
 * give ("the server rejected our request due to an error in our
 * request", a JSON pointer that does not exist, a failed test, ...).
 */
#ifndef DEVSERVER_PATCH_H
#define DEVSERVER_PATCH_H

#include <jansson.h>

#include "model/errors.h"

/* RFC 7386. patch may be any JSON value (a non-object replaces all). */
json_t *patch_merge(const json_t *target, const json_t *patch);

/* RFC 6902. patch must be an array of operations. */
json_t *patch_json(const json_t *target, const json_t *patch, struct err *err);

/*
 * A merge key table for strategic merge: each entry names a list field by
 * its path of object keys from the root, with "*" for "inside any element
 * of the list above" (e.g. "spec.template.spec.containers" -> "name",
 * "spec.template.spec.containers.*.env" -> "name"), and the key that
 * identifies elements; key NULL marks a primitive list merged as a set
 * (finalizers).
 */
struct smp_key {
	const char *path;
	const char *key; /* NULL: primitive list with strategy merge */
};

/* The merge keys of the built-in kinds the devserver serves (Job, Pod,
 * Namespace, Event, ConfigMap, ...), NULL-path terminated. */
extern const struct smp_key smp_builtin_keys[];

json_t *patch_strategic(const json_t *target, const json_t *patch,
			const struct smp_key *keys, struct err *err);

/*
 * Server-side apply for custom resources: deep merge of the applied
 * configuration into target (target may be NULL: create). schema is the
 * openAPIV3Schema of the served version (or NULL), read for
 * x-kubernetes-list-type / x-kubernetes-list-map-keys.
 */
json_t *patch_apply(const json_t *target, const json_t *applied,
		    const json_t *schema, struct err *err);

/*
 * Builds the JSON patch (RFC 6902) that turns from into to; used to check
 * patches round-trip and by the devserver's tests. Returns a new array.
 */
json_t *patch_diff(const json_t *from, const json_t *to);

/* JSON equality as kube's merge and apply compare values: numbers by
 * value (1 equals 1.0, which json_equal does not), the rest structurally.
 * NULL equals only NULL. */
bool patch_value_eq(const json_t *a, const json_t *b);

#endif
