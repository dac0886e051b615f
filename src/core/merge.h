/*
 * merge.h - the template merge table.
 *
 *   values at one key              result
 *   dictionaries                   merge recursively (keys in first-seen order)
 *   lists containing dictionaries  merge by index; unmatched items kept
 *   scalar-only lists              concatenate
 *   scalars or mixed kinds         last value wins
 *
 * A YAML null never overrides an existing value, and every value in the result
 * is a deep copy: the result never shares nodes with the inputs.
 *
 * Ownership: *out is the caller's; inputs are not modified.
 */
#ifndef AJ_MERGE_H
#define AJ_MERGE_H

#include <stddef.h>

struct aj_node;

/*
 * Merge n values left to right (NULL pointers and null nodes are skipped).
 * *out is NULL when every input was null/absent. Returns 0, or -1 on out of
 * memory (*out untouched).
 */
int aj_merge(const struct aj_node *const *values, size_t n, struct aj_node **out);

#endif
