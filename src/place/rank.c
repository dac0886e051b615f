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

cJSON *aj_place_status_json(const struct aj_place_row *rows, size_t n, const char *chosen,
			    long max_wait)
{
	cJSON *pl = cJSON_CreateObject(), *list, *c;
	size_t i;

	if (!pl || (chosen && !cJSON_AddStringToObject(pl, "chosen", chosen)) ||
	    (max_wait > 0 && !cJSON_AddNumberToObject(pl, "maxWaitSeconds", (double)max_wait)) ||
	    !(list = cJSON_AddArrayToObject(pl, "candidates")))
		goto oom;
	for (i = 0; i < n; i++) {
		const struct aj_place_row *r = &rows[i];

		if (!(c = cJSON_CreateObject()) || !cJSON_AddItemToArray(list, c)) {
			cJSON_Delete(c);
			goto oom;
		}
		if (!cJSON_AddStringToObject(c, "name", r->name) ||
		    !cJSON_AddStringToObject(c, "backend", r->backend) ||
		    !cJSON_AddStringToObject(c, "where", r->where) ||
		    !cJSON_AddNumberToObject(c, "rank", (double)r->rank) ||
		    !cJSON_AddBoolToObject(c, "canStartNow", r->state == AJ_PLACE_FITS) ||
		    !cJSON_AddStringToObject(c, "state", aj_place_state_name(r->state)) ||
		    (r->expected_wait >= 0 &&
		     !cJSON_AddNumberToObject(c, "expectedWaitSeconds", (double)r->expected_wait)) ||
		    !cJSON_AddStringToObject(c, "reason", r->reason))
			goto oom;
	}
	return pl;
oom:
	cJSON_Delete(pl);
	return NULL;
}
