/*
 * alloc.h - the one place the project allocates memory.
 *
 * Every allocation in the product goes through these wrappers (cJSON is hooked
 * to them too), so a test build can make the Nth allocation fail and prove that
 * every out-of-memory path returns an error and leaks nothing.
 *
 * Ownership: memory from aj_malloc/aj_calloc/aj_realloc/aj_strdup/aj_strndup is
 * the caller's and is released with aj_free. NULL means out of memory; callers
 * must handle it (there is no abort-on-OOM).
 */
#ifndef AJ_ALLOC_H
#define AJ_ALLOC_H

#include <stddef.h>

void *aj_malloc(size_t size);
void *aj_calloc(size_t nmemb, size_t size);
void *aj_realloc(void *ptr, size_t size);
char *aj_strdup(const char *s);
char *aj_strndup(const char *s, size_t n);
void aj_free(void *ptr);

/*
 * Grow *arr (elements of elem_size) so that it can hold at least `need`
 * elements; *alloc is the current capacity. Returns 0, or -1 on overflow or
 * out of memory (then *arr and *alloc are unchanged).
 */
int aj_grow(void **arr, size_t *alloc, size_t need, size_t elem_size);
#define AJ_GROW(arr, nr_needed, alloc) \
	aj_grow((void **)&(arr), &(alloc), (nr_needed), sizeof(*(arr)))

/* Route cJSON's allocations through the wrappers above; call once at start. */
void aj_alloc_hook_cjson(void);

/*
 * Allocation-failure injection, built in test builds only (CMake option
 * AJ_ALLOC_FAILURES, on with BUILD_TESTING): after aj_alloc_fail_after(n), the
 * allocation numbered n (0-based, counted from this call) and every later one
 * fail until aj_alloc_fail_after(-1). aj_alloc_count() reports how many
 * allocations were attempted since the last aj_alloc_fail_after() call.
 * The counter is atomic: threads that allocate while a test counts race on
 * nothing.
 */
#ifdef AJ_ALLOC_FAILURES
void aj_alloc_fail_after(long n);
long aj_alloc_count(void);
#endif

#endif
