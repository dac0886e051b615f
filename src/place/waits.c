#include "waits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ajjob.h"
#include "core/alloc.h"
#include "core/json.h"
#include "core/timestamp.h"

struct aj_waits_ring {
	size_t nr;
	long wait[AJ_WAITS_SAMPLES];
	long started[AJ_WAITS_SAMPLES];
};

/* Candidate names are canonical template names: bounded, no newline. */
#define KEY_MAX 300

void aj_waits_init(struct aj_waits *w)
{
	aj_strmap_init(&w->by_key);
}

void aj_waits_release(struct aj_waits *w)
{
	const char *key;
	void *ring;
	size_t pos = 0;

	while (aj_strmap_next(&w->by_key, &pos, &key, &ring))
		aj_free(ring);
	aj_strmap_release(&w->by_key);
}

enum aj_waits_band aj_waits_band(long gpus_per_pod, long pods)
{
	long gpus;

	if (gpus_per_pod <= 0 || pods <= 0)
		return AJ_BAND_CPU;
	gpus = pods > 1000000L / gpus_per_pod ? 1000000L : gpus_per_pod * pods;
	return gpus <= 8 ? AJ_BAND_GPU_8 : gpus <= 64 ? AJ_BAND_GPU_64 :
	       gpus <= 512 ? AJ_BAND_GPU_512 : AJ_BAND_GPU_MORE;
}

static int key_of(const char *candidate, enum aj_waits_band band, char *key)
{
	int n = snprintf(key, KEY_MAX, "%s\n%d", candidate, (int)band);

	return n > 0 && n < KEY_MAX ? 0 : -1;
}

int aj_waits_add(struct aj_waits *w, const char *candidate, enum aj_waits_band band,
		 long wait, long started)
{
	char key[KEY_MAX];
	struct aj_waits_ring *r;
	size_t i, oldest = 0;

	if (key_of(candidate, band, key))
		return 0;   /* no canonical name is this long: nothing to learn */
	r = aj_strmap_get(&w->by_key, key, NULL);
	if (!r) {
		r = aj_calloc(1, sizeof(*r));
		if (!r || aj_strmap_put(&w->by_key, key, r, NULL)) {
			aj_free(r);
			return -1;
		}
	}
	/* a job seen again (each write of its status brings it back) counts once */
	for (i = 0; i < r->nr; i++)
		if (r->started[i] == started && r->wait[i] == (wait < 0 ? 0 : wait))
			return 0;
	if (r->nr < AJ_WAITS_SAMPLES) {
		i = r->nr++;
	} else {
		for (i = 1; i < AJ_WAITS_SAMPLES; i++)
			if (r->started[i] < r->started[oldest])
				oldest = i;
		if (started <= r->started[oldest])
			return 0;   /* older than everything kept */
		i = oldest;
	}
	r->wait[i] = wait < 0 ? 0 : wait;
	r->started[i] = started;
	return 0;
}

int aj_waits_learn(struct aj_waits *w, const cJSON *ajjob)
{
	const cJSON *status = aj_json_get(ajjob, "status");
	const cJSON *atts = aj_json_get(aj_json_get(status, AJ_STATUS_PLACEMENT), "attempts");
	const cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
	const char *cand = aj_json_str(last, "candidate");
	long long sub = aj_timestamp_parse(aj_json_str(last, "submitted"), 0);
	long long run = aj_timestamp_parse(aj_json_str(last, "started"), 0);
	long gpus = (long)aj_json_whole(aj_json_get(last, "gpus"), 1e9, 0);

	/* written by an older controller: the Running condition, while it holds */
	if (run <= 0)
		run = aj_status_true_since(status, "Running");
	/* a short job may end before its Running is written: its end bounds its start */
	if (run <= 0)
		run = aj_status_true_since(status, "Succeeded");
	if (!cand || sub <= 0 || run <= 0 || run < sub)
		return 0;
	return aj_waits_add(w, cand, aj_waits_band(gpus, 1), (long)(run - sub), (long)run);
}

static int by_value(const void *pa, const void *pb)
{
	long a = *(const long *)pa, b = *(const long *)pb;

	return (a > b) - (a < b);
}

long aj_waits_expected(const struct aj_waits *w, const char *candidate, enum aj_waits_band band)
{
	char key[KEY_MAX];
	const struct aj_waits_ring *r;
	long v[AJ_WAITS_SAMPLES];

	if (key_of(candidate, band, key))
		return -1;
	r = aj_strmap_get(&w->by_key, key, NULL);
	if (!r || !r->nr)
		return -1;
	memcpy(v, r->wait, r->nr * sizeof(v[0]));
	qsort(v, r->nr, sizeof(v[0]), by_value);
	/* the lower median of an even count: a single slow job does not tip it */
	return v[(r->nr - 1) / 2];
}
