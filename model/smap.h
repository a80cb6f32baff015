/*
 * smap: a small sorted string -> string map.
 *
 * Used for labels, annotations, node selectors, flavor node labels and the
 * resource -> flavor map of a pod set assignment. Kept sorted by key so
 * lookups are binary searches and two maps compare with one walk. Owns
 * copies of every key and value.
 */
#ifndef MODEL_SMAP_H
#define MODEL_SMAP_H

#include <stdbool.h>
#include <stddef.h>

struct smap_kv {
	char *key;   /* owned; unique within the map */
	char *value; /* owned; never NULL ("" allowed) */
};

struct smap {
	struct smap_kv *v; /* owned; sorted by key (strcmp) */
	size_t n;
	size_t cap;
};

#define SMAP_INIT { NULL, 0, 0 }

void smap_init(struct smap *m);
void smap_release(struct smap *m);
/* Sets key to a copy of value, replacing an old value. */
void smap_set(struct smap *m, const char *key, const char *value);
/* Removes key; returns true when it was present. */
bool smap_del(struct smap *m, const char *key);
/* Returns the value (borrowed, valid until the map changes) or NULL. */
const char *smap_get(const struct smap *m, const char *key);
bool smap_has(const struct smap *m, const char *key);
/* Replaces dst's contents with a deep copy of src (no-op when dst == src). */
void smap_copy(struct smap *dst, const struct smap *src);
bool smap_equal(const struct smap *a, const struct smap *b);

#endif
