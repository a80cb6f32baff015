/*
 * hmap: a string-keyed hash table of borrowed pointers: the manager's
 * object caches (name or namespace/name -> entry, tens of thousands of
 * workloads), the devserver's garbage-collector graph and Job table (uid
 * -> node), pattern and anchor caches. Open addressing with linear
 * probing, FNV-1a, grown at 3/4 load, tombstones swept on growth.
 *
 * Owns only its slot array: keys and values are borrowed, and a key must
 * stay valid (and unchanged) while its entry is in the table; the usual
 * arrangement is that the value owns the key string. Pure; not
 * thread-safe (a caller shared between threads holds its own lock).
 */
#ifndef BASE_HMAP_H
#define BASE_HMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hmap_slot {
	const char *key; /* borrowed; NULL: empty or tombstone */
	void *val;       /* borrowed; a tombstone is key NULL, val non-NULL */
	uint64_t hash;
};

struct hmap {
	struct hmap_slot *v; /* owned; cap slots, cap a power of 2 or 0 */
	size_t cap;
	size_t n;     /* live entries */
	size_t used;  /* live + tombstones */
};

#define HMAP_INIT { NULL, 0, 0, 0 }

void hmap_init(struct hmap *m);
/* Frees the slot array (not the keys or values); leaves m empty. */
void hmap_release(struct hmap *m);
/* The value stored under key (borrowed), or NULL. */
void *hmap_get(const struct hmap *m, const char *key);
/* Stores val (non-NULL) under key, replacing an old value; returns the
 * old value or NULL. key is borrowed as described above. */
void *hmap_put(struct hmap *m, const char *key, void *val);
/* Removes key; returns its value or NULL. */
void *hmap_del(struct hmap *m, const char *key);
/*
 * Iteration: start with *pos = 0; returns the next value (and its key in
 * *key when key is not NULL), or NULL at the end. Removing the entry just
 * returned is allowed; inserting during iteration is not.
 */
void *hmap_next(const struct hmap *m, size_t *pos, const char **key);
/* P15: n and used match the slots, and every live key is found where a
 * lookup would probe for it. For tests and asserts; O(cap). */
bool hmap_check(const struct hmap *m);
static inline size_t hmap_count(const struct hmap *m)
{
	return m->n;
}

#endif
