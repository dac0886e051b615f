/*
 * lifecycle.h - the AjJob state machine for volcano AjJobs once their
 * Volcano Job exists (docs/api.md draws it), as pure functions of what the
 * controller observed: no I/O, no clock, so every transition is unit-tested
 * table-driven.
 *
 * reconcile.c gathers a struct aj_life_seen from the cache, asks
 * aj_life_decide() for a plan, fetches what the plan says it still needs
 * (the pods of a failed or cancelled job, the scheduler's reason for a
 * waiting one) into the same aj_life_seen, decides again, then carries the
 * plan out: delete, post events, write the status, requeue.
 *
 * Ownership: a plan points into the aj_life_seen it was decided from and
 * into its own buffers; it owns nothing on the heap.
 */
#ifndef AJ_LIFECYCLE_H
#define AJ_LIFECYCLE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"

/* A submitted job waits this long before the scheduler is asked why (seconds). */
#define AJ_LIFE_REASON_GRACE 5
/* ...and then at most this often. */
#define AJ_LIFE_REASON_EVERY 15
/* Pods of a cancelled job still there: look again after this many seconds. */
#define AJ_LIFE_PODS_RECHECK 2

/* Facts a plan may need that the cache does not hold. */
enum {
	AJ_LIFE_NEED_FAILURE = 1,   /* the failed pod: aj_life_failure_from_pods() */
	AJ_LIFE_NEED_REASON = 2,    /* the scheduler's reason: PodGroup, then its Events */
	AJ_LIFE_NEED_PODS = 4       /* whether the job's pods are gone */
};

struct aj_life_seen {
	const char *job;            /* the Volcano Job's name */
	enum aj_phase prev;         /* the AjJob's phase now (Pending when it has none) */
	/* conditions True now (AJ_STATUS_FLAG of AJ_COND_*) */
	unsigned prev_flags;
	const char *prev_reason;    /* the Unschedulable condition's message, or NULL */
	int cancel;                 /* annotation aj.dev/cancel: "true" */
	int exists;                 /* the Volcano Job exists */
	int deleting;               /* ...and has a deletionTimestamp */
	const char *phase;          /* its status.state.phase; NULL when not set */
	long long retry_count;      /* its status.retryCount */
	long long max_retry;        /* its spec.maxRetry */
	/* Unix seconds: now, when the AjJob became Submitted (0: unknown), next reason look-up (0: any time) */
	long long now, submitted_at, reason_due;
	/* fetched on demand (have says which of AJ_LIFE_NEED_* were) */
	unsigned have;
	const char *failure;        /* "task worker, pod P: exit code 3 (Error)"; NULL: none found */
	const char *reason;         /* the scheduler's reason; NULL: none found */
	long long pods_left;        /* pods still carrying the job's name */
};

#define AJ_LIFE_EVENTS 3

struct aj_life_event {
	int warning;
	const char *reason;
	const char *note;
	/*
	 * Posted under a name made of the AjJob's uid and the reason, so a
	 * controller that dies between posting and writing the status and posts
	 * again creates no second Event: the end of a job is told exactly once.
	 */
	int once;
};

struct aj_life_plan {
	unsigned need;              /* AJ_LIFE_NEED_* still to fetch before acting */
	int delete_job;             /* delete the Volcano Job, propagation Foreground */
	enum aj_phase phase;
	const char *reason;         /* CamelCase, for the conditions */
	unsigned flags;             /* AJ_STATUS_FLAG(AJ_COND_*) */
	const char *unschedulable;  /* the Unschedulable condition's message */
	long long retry_count;
	struct aj_life_event events[AJ_LIFE_EVENTS];
	size_t nr_events;
	long long reason_due;       /* next reason look-up (Unix seconds) to remember; 0: no change */
	long long requeue_after;    /* seconds; 0: none (a watch event brings the job back) */
	char message[1024];
	char note[1024];            /* an event note that differs from the message */
};

void aj_life_decide(const struct aj_life_seen *s, struct aj_life_plan *p);

/*
 * The create of a Volcano Job answered HTTP code: is the AjJob at fault
 * (admission or validation said no), so retrying cannot help? 4xx except
 * 401 (the controller's own credentials), 404 (Volcano's CRD not served),
 * 409 and 429 (conflict, throttling). Transport failures (0) and 5xx are
 * retried.
 */
int aj_life_create_rejected(long code);

/*
 * From a PodList of the job's pods: the pod that failed it, as
 * "task T, pod P: exit code N (Reason)" or "task T, pod P: Evicted: message",
 * the earliest to finish when several did. 1 with out filled, 0 when none
 * failed (out empty).
 */
int aj_life_failure_from_pods(const cJSON *pods, char *out, size_t size);

/* A PodGroup's Unschedulable condition message when it is True, else NULL. */
const char *aj_life_podgroup_reason(const cJSON *podgroup);

/* The message of the newest Event in an EventList (lastTimestamp, then eventTime), or NULL. */
const char *aj_life_latest_event(const cJSON *events);

#endif
