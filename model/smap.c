/*
 * smap: sorted string map (see smap.h). Insertion is O(n) by memmove;
 * maps here hold tens of entries (labels, selectors), where a sorted array
 * beats a hash table on both memory and speed.
 */
#include "model/smap.h"

#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"

void smap_init(struct smap *m)
{
	m->v = NULL;
	m->n = 0;
	m->cap = 0;
}

void smap_release(struct smap *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].key);
		free(m->v[i].value);
	}
	free(m->v);
	smap_init(m);
}

/* Index of key, or of where it would be inserted (with *found false). */
static size_t find(const struct smap *m, const char *key, bool *found)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(m->v[mid].key, key);

		if (c == 0) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = false;
	return lo;
}

void smap_set(struct smap *m, const char *key, const char *value)
{
	bool found;
	size_t i = find(m, key, &found);

	if (found) {
		char *v = xstrdup(value);

		free(m->v[i].value);
		m->v[i].value = v;
		return;
	}
	XGROW(m->v, m->cap, m->n + 1);
	memmove(m->v + i + 1, m->v + i, (m->n - i) * sizeof(*m->v));
	m->v[i].key = xstrdup(key);
	m->v[i].value = xstrdup(value);
	m->n++;
}

bool smap_del(struct smap *m, const char *key)
{
	bool found;
	size_t i = find(m, key, &found);

	if (!found)
		return false;
	free(m->v[i].key);
	free(m->v[i].value);
	memmove(m->v + i, m->v + i + 1, (m->n - i - 1) * sizeof(*m->v));
	m->n--;
	return true;
}

const char *smap_get(const struct smap *m, const char *key)
{
	bool found;
	size_t i = find(m, key, &found);

	return found ? m->v[i].value : NULL;
}

bool smap_has(const struct smap *m, const char *key)
{
	return smap_get(m, key) != NULL;
}

void smap_copy(struct smap *dst, const struct smap *src)
{
	if (dst == src)
		return; /* releasing dst first would free src */
	smap_release(dst);
	if (!src->n)
		return;
	dst->v = xcalloc(src->n, sizeof(*dst->v));
	dst->cap = src->n;
	for (size_t i = 0; i < src->n; i++) {
		dst->v[i].key = xstrdup(src->v[i].key);
		dst->v[i].value = xstrdup(src->v[i].value);
	}
	dst->n = src->n;
}

bool smap_equal(const struct smap *a, const struct smap *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i].key, b->v[i].key) ||
		    strcmp(a->v[i].value, b->v[i].value))
			return false;
	return true;
}
