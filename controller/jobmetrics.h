/*
 * jobmetrics.h - the AjJob families people chart, on the controller's
 * metrics registry (metrics.h):
 *
 *   aj_ajjobs{phase,backend}                        gauge, set from a tally at scrape
 *   aj_ajjob_time_to_running_seconds{backend}       histogram: creation -> Running
 *                                                   (like Kueue's admission wait)
 *   aj_ajjob_duration_seconds{outcome,backend}      histogram: Running (or creation,
 *                                                   when Running was never seen) ->
 *                                                   Succeeded | Failed | Cancelled
 *   aj_ajjobs_expired_total{backend}                counter: finished AjJobs deleted after
 *                                                   their ttlSecondsAfterFinished
 *
 * The gauge writes every phase of every backend in aj_backend_all() plus
 * backend="unknown" (AjJobs whose status names no backend yet), zeros
 * included, so a phase that empties drops to 0 instead of keeping its last
 * value. Histogram buckets span seconds to a day.
 *
 * Pure bookkeeping over the registry: no clock, the caller passes the times.
 * Ownership: nothing is allocated here beyond the registry's own series.
 */
#ifndef AJ_JOBMETRICS_H
#define AJ_JOBMETRICS_H

#include "status.h"

struct aj_metrics;

#define AJ_JOBMETRICS_PHASES (AJ_PHASE_CANCELLING + 1)
/* Rows of a tally: the known backends, then "unknown". */
#define AJ_JOBTALLY_ROWS 8

#define AJ_JOBMETRICS_JOBS "aj_ajjobs"
#define AJ_JOBMETRICS_TO_RUNNING "aj_ajjob_time_to_running_seconds"
#define AJ_JOBMETRICS_DURATION "aj_ajjob_duration_seconds"
#define AJ_JOBMETRICS_EXPIRED "aj_ajjobs_expired_total"

/* AjJobs counted by backend and phase; fill with aj_jobtally_count(). */
struct aj_jobtally {
	unsigned long n[AJ_JOBTALLY_ROWS][AJ_JOBMETRICS_PHASES];
};

/* The four families. 0, or -1 (out of memory, or more backends than rows). */
int aj_jobmetrics_register(struct aj_metrics *m);

/*
 * Observe one phase change of one AjJob (call it when the status written
 * moves from `from` to `to`; from = Pending for an AjJob that had none).
 * Reaching Running observes now - created; reaching a terminal phase from a
 * non-terminal one observes now - running (or now - created when running is
 * 0). Other changes observe nothing. Negative spans (clock skew) count as 0.
 * backend NULL or unknown is labelled "unknown". 0 / -1.
 */
int aj_jobmetrics_transition(struct aj_metrics *m, const char *backend,
			     enum aj_phase from, enum aj_phase to,
			     long long created_unix, long long running_unix,
			     long long now_unix);

/* Count one AjJob deleted after its ttlSecondsAfterFinished. 0 / -1. */
int aj_jobmetrics_expired(struct aj_metrics *m, const char *backend);

void aj_jobtally_init(struct aj_jobtally *t);
/* Count one AjJob; backend NULL or not in aj_backend_all() counts as "unknown". */
void aj_jobtally_count(struct aj_jobtally *t, const char *backend, enum aj_phase phase);
/* Set the gauge from t (every backend x phase). 0 / -1. */
int aj_jobmetrics_tally(struct aj_metrics *m, const struct aj_jobtally *t);

#endif
