/*
 * suggest.h - "did you mean": the nearest of a few known words to a word
 * that was not recognised (a template key, a flag, a template name).
 *
 * Distance is the optimal string alignment distance (insertions, deletions,
 * substitutions and swaps of neighbours each count one), compared
 * case-insensitively. Only words within AJ_SUGGEST_MAX_DISTANCE qualify; the
 * nearest wins, the earliest listed on a tie.
 *
 * Ownership: the result points into `words`; nothing is allocated.
 */
#ifndef AJ_SUGGEST_H
#define AJ_SUGGEST_H

#include <stddef.h>

#define AJ_SUGGEST_MAX_DISTANCE 2

/* Distance between a and b, or a value above max once it must exceed max. */
size_t aj_edit_distance(const char *a, const char *b, size_t max);

/* The nearest of words[0..nr) to word, or NULL when none is close enough. */
const char *aj_suggest(const char *word, const char *const *words, size_t nr);

#endif
