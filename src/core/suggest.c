#include "suggest.h"

#include <ctype.h>
#include <string.h>

/* Words longer than this are never close to anything aj knows. */
#define WORD_MAX 64

static int fold(char c)
{
	return tolower((unsigned char)c);
}

size_t aj_edit_distance(const char *a, const char *b, size_t max)
{
	size_t row[3][WORD_MAX + 1];
	size_t la = strlen(a), lb = strlen(b), i, j;

	if (la > WORD_MAX || lb > WORD_MAX || (la > lb ? la - lb : lb - la) > max)
		return max + 1;
	for (j = 0; j <= lb; j++)
		row[0][j] = j;
	for (i = 1; i <= la; i++) {
		size_t *cur = row[i % 3], *prev = row[(i - 1) % 3], *prev2 = row[(i + 1) % 3];
		size_t best = cur[0] = i;

		for (j = 1; j <= lb; j++) {
			size_t cost = fold(a[i - 1]) != fold(b[j - 1]);
			size_t d = prev[j - 1] + cost;

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
			    fold(a[i - 2]) == fold(b[j - 1]) && prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
			if (d < best)
				best = d;
		}
		if (best > max)
			return max + 1;
	}
	return row[la % 3][lb];
}

const char *aj_suggest(const char *word, const char *const *words, size_t nr)
{
	const char *best = NULL;
	size_t best_d = AJ_SUGGEST_MAX_DISTANCE + 1, i;

	for (i = 0; i < nr; i++) {
		size_t d = aj_edit_distance(word, words[i], AJ_SUGGEST_MAX_DISTANCE);

		if (d < best_d) {
			best = words[i];
			best_d = d;
		}
	}
	return best;
}
