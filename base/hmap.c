/*
 * hmap: open addressing with linear probing (see hmap.h). A tombstone
 * keeps probe chains intact after a removal; growth rehashes live
 * entries only, which also sweeps the tombstones.
 */
#include "base/hmap.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

static char tombstone_mark;
#define TOMBSTONE ((void *)&tombstone_mark)

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ULL;
	}
	return h;
}

void hmap_init(struct hmap *m)
{
	memset(m, 0, sizeof(*m));
}

void hmap_release(struct hmap *m)
{
	free(m->v);
	hmap_init(m);
}

/* Slot of key, or of the first free slot of its chain when absent
 * (*found false); m->cap > 0. */
static size_t probe(const struct hmap *m, const char *key, uint64_t h,
		    bool *found)
{
	size_t mask = m->cap - 1, i = (size_t)h & mask, free_at = SIZE_MAX;

	for (;;) {
		const struct hmap_slot *s = &m->v[i];

		if (!s->key) {
			if (s->val != TOMBSTONE) {
				*found = false;
				return free_at != SIZE_MAX ? free_at : i;
			}
			if (free_at == SIZE_MAX)
				free_at = i;
		} else if (s->hash == h && !strcmp(s->key, key)) {
			*found = true;
			return i;
		}
		i = (i + 1) & mask;
	}
}

static void grow(struct hmap *m)
{
	struct hmap_slot *old = m->v;
	size_t ocap = m->cap, ncap = ocap ? ocap : 16;

	while ((m->n + 1) * 2 > ncap)
		ncap *= 2;
	m->v = xcalloc(ncap, sizeof(*m->v));
	m->cap = ncap;
	m->used = m->n;
	for (size_t i = 0; i < ocap; i++) {
		bool found;
		size_t j;

		if (!old[i].key)
			continue;
		j = probe(m, old[i].key, old[i].hash, &found);
		m->v[j] = old[i];
	}
	free(old);
}

void *hmap_get(const struct hmap *m, const char *key)
{
	bool found;
	size_t i;

	if (!m->n)
		return NULL;
	i = probe(m, key, fnv1a(key), &found);
	return found ? m->v[i].val : NULL;
}

void *hmap_put(struct hmap *m, const char *key, void *val)
{
	uint64_t h = fnv1a(key);
	bool found;
	size_t i;
	void *old;

	if (!val)
		BUG("hmap_put: NULL value");
	if ((m->used + 1) * 4 > m->cap * 3)
		grow(m);
	i = probe(m, key, h, &found);
	if (found) {
		old = m->v[i].val;
		m->v[i].key = key;
		m->v[i].val = val;
		return old;
	}
	if (m->v[i].val != TOMBSTONE)
		m->used++;
	m->v[i].key = key;
	m->v[i].val = val;
	m->v[i].hash = h;
	m->n++;
	return NULL;
}

void *hmap_del(struct hmap *m, const char *key)
{
	bool found;
	size_t i;
	void *old;

	if (!m->n)
		return NULL;
	i = probe(m, key, fnv1a(key), &found);
	if (!found)
		return NULL;
	old = m->v[i].val;
	m->v[i].key = NULL;
	m->v[i].val = TOMBSTONE;
	m->n--;
	return old;
}

void *hmap_next(const struct hmap *m, size_t *pos, const char **key)
{
	for (; *pos < m->cap; (*pos)++) {
		const struct hmap_slot *s = &m->v[*pos];

		if (s->key) {
			(*pos)++;
			if (key)
				*key = s->key;
			return s->val;
		}
	}
	return NULL;
}

bool hmap_check(const struct hmap *m)
{
	size_t live = 0, dead = 0;

	if (m->cap & (m->cap - 1) || m->used > m->cap || m->n > m->used)
		return false;
	for (size_t i = 0; i < m->cap; i++) {
		const struct hmap_slot *s = &m->v[i];
		bool found;

		if (!s->key) {
			dead += s->val == TOMBSTONE;
			continue;
		}
		live++;
		if (s->hash != fnv1a(s->key) || !s->val ||
		    probe(m, s->key, s->hash, &found) != i || !found)
			return false;
	}
	return live == m->n && live + dead == m->used;
}
