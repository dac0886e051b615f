#include "strlist.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

void aj_strlist_init(struct aj_strlist *l)
{
	l->items = NULL;
	l->nr = 0;
	l->alloc = 0;
}

void aj_strlist_release(struct aj_strlist *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		aj_free(l->items[i]);
	aj_free(l->items);
	aj_strlist_init(l);
}

int aj_strlist_add_owned(struct aj_strlist *l, char *s)
{
	if (!s)
		return -1;
	if (AJ_GROW(l->items, l->nr + 1, l->alloc)) {
		aj_free(s);
		return -1;
	}
	l->items[l->nr++] = s;
	return 0;
}

int aj_strlist_add(struct aj_strlist *l, const char *s)
{
	return aj_strlist_add_owned(l, aj_strdup(s));
}

long aj_strlist_find(const struct aj_strlist *l, const char *s)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->items[i], s))
			return (long)i;
	return -1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void aj_strlist_sort(struct aj_strlist *l)
{
	if (l->nr > 1)
		qsort(l->items, l->nr, sizeof(*l->items), cmp_str);
}
