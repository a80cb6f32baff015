/*
 * jsonpatch: the RFC 6902 JSON Patch between two JSON documents, what a
 * mutating webhook answers (controller-runtime's PatchResponseFromRaw
 * does the same diff with gomodules' jsonpatch).
 *
 * Handlers mutate a deep copy of the request's object and diff it with
 * the original, so a patch touches exactly what changed and fields cueue
 * does not model pass through. Pure; any thread.
 */
#ifndef WEBHOOK_JSONPATCH_H
#define WEBHOOK_JSONPATCH_H

struct json_t;

/*
 * Returns a new JSON array of operations that turn from into to (both
 * borrowed): object members are added, removed or recursed into; arrays
 * of equal length are compared element by element; anything else that
 * differs is replaced whole. Equal documents give [].
 */
struct json_t *jsonpatch_diff(const struct json_t *from,
			      const struct json_t *to);

/* Returns the JSON Pointer escape of one path token ("a/b~c" ->
 * "a~1b~0c") as a new string. */
char *jsonpatch_escape(const char *token);

#endif
