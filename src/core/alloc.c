#include "alloc.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#ifdef AJ_ALLOC_FAILURES

/* Process-wide test hook (alloc.h). */
static atomic_long fail_at = -1;
static atomic_long counter;

static int should_fail(void)
{
	long n = atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
	long at = atomic_load_explicit(&fail_at, memory_order_relaxed);

	return at >= 0 && n >= at;
}

void aj_alloc_fail_after(long n)
{
	atomic_store(&counter, 0);
	atomic_store(&fail_at, n);
}

long aj_alloc_count(void)
{
	return atomic_load(&counter);
}
#else
#define should_fail() 0
#endif

void *aj_malloc(size_t size)
{
	if (should_fail())
		return NULL;
	return malloc(size ? size : 1);
}

void *aj_calloc(size_t nmemb, size_t size)
{
	if (should_fail())
		return NULL;
	return calloc(nmemb ? nmemb : 1, size ? size : 1);
}

void *aj_realloc(void *ptr, size_t size)
{
	if (should_fail())
		return NULL;
	return realloc(ptr, size ? size : 1);
}

char *aj_strndup(const char *s, size_t n)
{
	char *r = aj_malloc(n + 1);

	if (!r)
		return NULL;
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

char *aj_strdup(const char *s)
{
	return aj_strndup(s, strlen(s));
}

void aj_free(void *ptr)
{
	free(ptr);
}

int aj_grow(void **arr, size_t *alloc, size_t need, size_t elem_size)
{
	size_t n;
	void *p;

	if (need <= *alloc)
		return 0;
	n = *alloc < 8 ? 8 : *alloc;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return -1;
		n *= 2;
	}
	if (n > SIZE_MAX / elem_size)
		return -1;
	p = aj_realloc(*arr, n * elem_size);
	if (!p)
		return -1;
	*arr = p;
	*alloc = n;
	return 0;
}

static void *cjson_malloc(size_t size)
{
	return aj_malloc(size);
}

void aj_alloc_hook_cjson(void)
{
	cJSON_Hooks hooks = { cjson_malloc, aj_free };

	cJSON_InitHooks(&hooks);
}
