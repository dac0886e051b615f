/*
 * strlist.h - a growable list of owned C strings.
 *
 * Ownership: the list owns its strings; aj_strlist_release frees them all.
 */
#ifndef AJ_STRLIST_H
#define AJ_STRLIST_H

#include <stddef.h>

struct aj_strlist {
	char **items;
	size_t nr;
	size_t alloc;
};

#define AJ_STRLIST_INIT { NULL, 0, 0 }

void aj_strlist_init(struct aj_strlist *l);
void aj_strlist_release(struct aj_strlist *l);
/* Append a copy of s. 0 / -1 (OOM). */
int aj_strlist_add(struct aj_strlist *l, const char *s);
/* Append s itself, taking ownership (freed on failure). 0 / -1. */
int aj_strlist_add_owned(struct aj_strlist *l, char *s);
/* Index of s, or -1. */
long aj_strlist_find(const struct aj_strlist *l, const char *s);
/* Sort in byte order. */
void aj_strlist_sort(struct aj_strlist *l);

#endif
