#include "strmap.h"

#include <stdint.h>
#include <string.h>

#include "alloc.h"

/* A deleted slot keeps probing chains intact until the next resize. */
static char tombstone;
#define AJ_STRMAP_TOMBSTONE (&tombstone)

void aj_strmap_init(struct aj_strmap *m)
{
	m->slots = NULL;
	m->cap = 0;
	m->nr = 0;
	m->used = 0;
}

void aj_strmap_release(struct aj_strmap *m)
{
	size_t i;

	for (i = 0; i < m->cap; i++)
		if (m->slots[i].key && m->slots[i].key != AJ_STRMAP_TOMBSTONE)
			aj_free(m->slots[i].key);
	aj_free(m->slots);
	aj_strmap_init(m);
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h;
}

/* Slot holding key, or SIZE_MAX. */
static size_t find(const struct aj_strmap *m, const char *key)
{
	size_t i, mask;

	if (!m->cap)
		return SIZE_MAX;
	mask = m->cap - 1;
	for (i = hash(key) & mask;; i = (i + 1) & mask) {
		const char *k = m->slots[i].key;

		if (!k)
			return SIZE_MAX;
		if (k != AJ_STRMAP_TOMBSTONE && !strcmp(k, key))
			return i;
	}
}

static int resize(struct aj_strmap *m, size_t cap)
{
	struct aj_strmap_slot *slots = aj_calloc(cap, sizeof(*slots));
	size_t i;

	if (!slots)
		return -1;
	for (i = 0; i < m->cap; i++) {
		char *k = m->slots[i].key;
		size_t j;

		if (!k || k == AJ_STRMAP_TOMBSTONE)
			continue;
		for (j = hash(k) & (cap - 1); slots[j].key; j = (j + 1) & (cap - 1))
			;
		slots[j] = m->slots[i];
	}
	aj_free(m->slots);
	m->slots = slots;
	m->cap = cap;
	m->used = m->nr;
	return 0;
}

void *aj_strmap_get(const struct aj_strmap *m, const char *key, int *found)
{
	size_t i = find(m, key);

	if (found)
		*found = i != SIZE_MAX;
	return i == SIZE_MAX ? NULL : m->slots[i].value;
}

const char *aj_strmap_key(const struct aj_strmap *m, const char *key)
{
	size_t i = find(m, key);

	return i == SIZE_MAX ? NULL : m->slots[i].key;
}

int aj_strmap_put(struct aj_strmap *m, const char *key, void *value, void **old)
{
	size_t i = find(m, key), mask;
	char *copy;

	if (old)
		*old = NULL;
	if (i != SIZE_MAX) {
		if (old)
			*old = m->slots[i].value;
		m->slots[i].value = value;
		return 0;
	}
	/* Keep the load (tombstones included) under 3/4. */
	if ((m->used + 1) * 4 > m->cap * 3) {
		size_t cap = m->cap ? m->cap : 16;

		while ((m->nr + 1) * 2 > cap)
			cap *= 2;
		if (cap > SIZE_MAX / sizeof(struct aj_strmap_slot) || resize(m, cap))
			return -1;
	}
	copy = aj_strdup(key);
	if (!copy)
		return -1;
	mask = m->cap - 1;
	for (i = hash(key) & mask; m->slots[i].key && m->slots[i].key != AJ_STRMAP_TOMBSTONE;
	     i = (i + 1) & mask)
		;
	if (!m->slots[i].key)
		m->used++;
	m->slots[i].key = copy;
	m->slots[i].value = value;
	m->nr++;
	return 0;
}

void *aj_strmap_remove(struct aj_strmap *m, const char *key, int *found)
{
	size_t i = find(m, key);
	void *v;

	if (found)
		*found = i != SIZE_MAX;
	if (i == SIZE_MAX)
		return NULL;
	v = m->slots[i].value;
	aj_free(m->slots[i].key);
	m->slots[i].key = AJ_STRMAP_TOMBSTONE;
	m->slots[i].value = NULL;
	m->nr--;
	return v;
}

int aj_strmap_next(const struct aj_strmap *m, size_t *pos, const char **key,
		   void **value)
{
	while (*pos < m->cap) {
		const struct aj_strmap_slot *s = &m->slots[(*pos)++];

		if (s->key && s->key != AJ_STRMAP_TOMBSTONE) {
			*key = s->key;
			if (value)
				*value = s->value;
			return 1;
		}
	}
	return 0;
}
