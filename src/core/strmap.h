/*
 * strmap.h - a hash map from C strings to pointers (open addressing, linear
 * probing, FNV-1a). Used for the controller's cache and work-queue sets.
 *
 * Ownership: the map owns copies of its keys; values are the caller's (the
 * map never frees them). aj_strmap_release() frees the keys and the table.
 */
#ifndef AJ_STRMAP_H
#define AJ_STRMAP_H

#include <stddef.h>

struct aj_strmap_slot {
	char *key;        /* NULL: empty; AJ_STRMAP_TOMBSTONE: deleted */
	void *value;
};

struct aj_strmap {
	struct aj_strmap_slot *slots;
	size_t cap;       /* power of two, or 0 */
	size_t nr;        /* live entries */
	size_t used;      /* live entries + tombstones */
};

#define AJ_STRMAP_INIT { NULL, 0, 0, 0 }

void aj_strmap_init(struct aj_strmap *m);
void aj_strmap_release(struct aj_strmap *m);

/* The value for key, or NULL; *found (may be NULL) tells NULL values apart. */
void *aj_strmap_get(const struct aj_strmap *m, const char *key, int *found);
/* The map's own copy of key (valid until key is removed), or NULL when absent. */
const char *aj_strmap_key(const struct aj_strmap *m, const char *key);
/* Insert or replace; *old (may be NULL) receives a replaced value. 0 / -1. */
int aj_strmap_put(struct aj_strmap *m, const char *key, void *value, void **old);
/* Remove key; returns its value (NULL if absent; *found says which). */
void *aj_strmap_remove(struct aj_strmap *m, const char *key, int *found);

/*
 * Iterate: start with *pos = 0; returns 0 at the end. The map must not be
 * modified during iteration except by removing the current key.
 */
int aj_strmap_next(const struct aj_strmap *m, size_t *pos, const char **key,
		   void **value);

#endif
