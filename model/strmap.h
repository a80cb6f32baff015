/*
 * strmap: a small sorted string -> string map.
 *
 * Used for labels, annotations, node selectors, flavor node labels and the
 * resource -> flavor map of a pod set assignment. Kept sorted by key so
 * lookups are binary searches and two maps compare with one walk. Owns
 * copies of every key and value.
 */
#ifndef MODEL_STRMAP_H
#define MODEL_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

struct strkv {
	char *key;   /* owned; unique within the map */
	char *value; /* owned; never NULL ("" allowed) */
};

struct strmap {
	struct strkv *v; /* owned; sorted by key (strcmp) */
	size_t n;
	size_t cap;
};

#define STRMAP_INIT { NULL, 0, 0 }

void strmap_init(struct strmap *m);
void strmap_release(struct strmap *m);
/* Sets key to a copy of value, replacing an old value. */
void strmap_set(struct strmap *m, const char *key, const char *value);
/* Removes key; returns true when it was present. */
bool strmap_del(struct strmap *m, const char *key);
/* Returns the value (borrowed, valid until the map changes) or NULL. */
const char *strmap_get(const struct strmap *m, const char *key);
bool strmap_has(const struct strmap *m, const char *key);
/* Replaces dst's contents with a deep copy of src (no-op when dst == src). */
void strmap_copy(struct strmap *dst, const struct strmap *src);
bool strmap_equal(const struct strmap *a, const struct strmap *b);

#endif
