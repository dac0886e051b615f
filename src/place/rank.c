#include "rank.h"

#include <stdlib.h>

const char *aj_place_state_name(enum aj_place_state s)
{
	switch (s) {
	case AJ_PLACE_FITS:
		return "CanStartNow";
	case AJ_PLACE_FULL:
		return "Waits";
	case AJ_PLACE_UNKNOWN:
		return "Unknown";
	case AJ_PLACE_EXCLUDED:
		break;
	}
	return "Excluded";
}

static int cmp_long(long a, long b)
{
	return (a > b) - (a < b);
}

static int by_rank(const void *pa, const void *pb)
{
	const struct aj_place_row *a = pa, *b = pb;
	int c = cmp_long(a->state, b->state);

	if (c)
		return c;
	/* a known wait first: no history says nothing good or bad */
	c = cmp_long(a->expected_wait < 0, b->expected_wait < 0);
	if (c)
		return c;
	c = cmp_long(a->expected_wait, b->expected_wait);
	if (c)
		return c;
	return cmp_long((long)a->order, (long)b->order);
}

void aj_place_rank(struct aj_place_row *rows, size_t n)
{
	size_t i;

	if (n)
		qsort(rows, n, sizeof(*rows), by_rank);
	for (i = 0; i < n; i++)
		rows[i].rank = rows[i].state == AJ_PLACE_EXCLUDED ? 0 : i + 1;
}

size_t aj_place_pick(const struct aj_place_row *rows, size_t n)
{
	/* rank order puts unknown after full: a first unknown means none is full */
	if (n && (rows[0].state == AJ_PLACE_FITS || rows[0].state == AJ_PLACE_UNKNOWN))
		return 0;
	return n;
}
