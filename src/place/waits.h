/*
 * waits.h - how long jobs waited on each candidate lately: the expected
 * wait of the ranking (rank.h).
 *
 * A sample is one AjJob's time from submission to Running on a candidate,
 * filed under the candidate and the job's shape band (GPUs per pod times
 * pods, in bands, so a 512-GPU job does not learn from 1-GPU jobs). Each
 * (candidate, band) keeps its AJ_WAITS_SAMPLES newest samples by the time
 * the job started, whatever the order they arrive in: the controller
 * rebuilds the history at start-up from the AjJobs' own status times, as
 * the list returns them, and adds each job that starts afterwards. A
 * sample equal to one kept (the same job seen again) is kept once. The
 * expected wait is the median of what is kept.
 *
 * Ownership: struct aj_waits owns its keys and samples;
 * aj_waits_release() frees them. Not locked: one thread owns it. Pure.
 */
#ifndef AJ_PLACE_WAITS_H
#define AJ_PLACE_WAITS_H

#include <cjson/cJSON.h>

#include "core/strmap.h"

#define AJ_WAITS_SAMPLES 16

enum aj_waits_band {
	AJ_BAND_CPU,        /* no GPU */
	AJ_BAND_GPU_8,      /* 1 to 8 GPUs in all */
	AJ_BAND_GPU_64,     /* 9 to 64 */
	AJ_BAND_GPU_512,    /* 65 to 512 */
	AJ_BAND_GPU_MORE,   /* more */
	AJ_BAND_COUNT
};

struct aj_waits {
	struct aj_strmap by_key;   /* "<candidate>\n<band>" -> struct aj_waits_ring */
};

void aj_waits_init(struct aj_waits *w);
void aj_waits_release(struct aj_waits *w);

/* The band of a job of `pods` pods with `gpus_per_pod` GPUs each. */
enum aj_waits_band aj_waits_band(long gpus_per_pod, long pods);

/*
 * File one job's wait (seconds from submission to Running, clamped at 0)
 * that started at `started` (Unix seconds). 0 / -1 (out of memory).
 */
int aj_waits_add(struct aj_waits *w, const char *candidate, enum aj_waits_band band,
		 long wait, long started);

/*
 * Learn from one AjJob (as the API server returns it): a placed one running
 * on its last attempt (status.placement.attempts[-1]) gives one sample of
 * that candidate's wait: Running's transition minus the attempt's
 * submission (for one that succeeded before its Running was written, its
 * end), in the band of the attempt's GPUs. Anything else teaches nothing.
 * The controller learns from every AjJob it watches, `aj place` from those
 * it can list: both through this. 0 / -1 (out of memory: one sample fewer).
 */
int aj_waits_learn(struct aj_waits *w, const cJSON *ajjob);

/* The median of the kept samples, or -1 when there is none. */
long aj_waits_expected(const struct aj_waits *w, const char *candidate, enum aj_waits_band band);

#endif
