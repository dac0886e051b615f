/*
 * workqueue.h - the controller's rate-limited work queue of object keys
 * ("namespace/name"), with the guarantees client-go's workqueue gives:
 *
 *  - a key waiting in the queue is held once however often it is added;
 *  - a key is handed to at most one worker at a time: adding a key that is
 *    being processed marks it dirty, and it is queued again on done();
 *  - three levels, each handed out only while no key of a higher one waits:
 *    normal (first-time work: creates), low (follow-up work: status
 *    writes, aj_workqueue_add_low()) and idle (polls that come back on a
 *    timer, aj_workqueue_add_idle_after()), so thousands of jobs polled
 *    while they wait never delay a create or a status write; an add at a
 *    higher level moves a waiting key up;
 *  - a delayed key is held once, at the earliest time asked: a later
 *    delayed add of a key waiting for a sooner time changes nothing, and a
 *    sooner one moves its one entry up (client-go's delaying queue does the
 *    same; the reconciler asks again, every time, for each time it still
 *    needs);
 *  - failures back off per key exponentially (5 ms doubling to 1000 s) and
 *    all rate-limited adds share one token bucket (10/s, burst 100); the
 *    larger of the two delays wins;
 *  - shutdown wakes every waiting worker; get() returns 0 from then on.
 *
 * Thread-safe. Time comes from an injectable clock so tests need not sleep.
 *
 * Ownership: the queue copies keys it is given. get() hands the worker a key
 * it owns until it passes it back to done(), which frees it.
 */
#ifndef AJ_WORKQUEUE_H
#define AJ_WORKQUEUE_H

#include <pthread.h>
#include <stddef.h>

#include "core/strmap.h"

struct aj_workqueue_opts {
	double base_delay;       /* first retry delay, seconds (0.005) */
	double max_delay;        /* cap of the per-key delay, seconds (1000) */
	double qps;              /* overall rate of rate-limited adds (10) */
	double burst;            /* bucket size (100) */
	/* Seconds on a monotonic clock; NULL for CLOCK_MONOTONIC. */
	double (*now)(void *ctx);
	void *clock_ctx;
};

enum aj_workqueue_level { AJ_WQ_NORMAL, AJ_WQ_LOW, AJ_WQ_IDLE, AJ_WQ_LEVELS };

struct aj_workqueue_delayed {
	double due;
	const char *key;                 /* the delayed map's copy */
	enum aj_workqueue_level level;   /* where it is queued once due */
};

struct aj_workqueue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct aj_workqueue_opts opts;

	struct aj_workqueue_ring {
		char **keys;
		size_t head, nr, alloc;
	} ring[AJ_WQ_LEVELS];        /* keys waiting to be handed out, per level */
	struct aj_strmap dirty;      /* keys that need processing -> level */
	struct aj_strmap processing; /* keys a worker holds */
	struct aj_strmap failures;   /* key -> consecutive failures */
	struct aj_strmap delayed;    /* key -> its one entry's index in heap */
	struct aj_workqueue_delayed *heap;  /* min-heap on due, one entry per delayed key */
	size_t heap_nr, heap_alloc;

	double tokens;
	double refilled_at;
	int shutting_down;

	/* Totals for /metrics. */
	unsigned long adds;
	unsigned long retries;
};

/* opts may be NULL for the defaults above. 0 / -1. */
int aj_workqueue_init(struct aj_workqueue *q, const struct aj_workqueue_opts *opts);
void aj_workqueue_release(struct aj_workqueue *q);

/* Queue key now. 0 / -1 (out of memory). */
int aj_workqueue_add(struct aj_workqueue *q, const char *key);
/* Queue key behind every normal key. 0 / -1. */
int aj_workqueue_add_low(struct aj_workqueue *q, const char *key);
/* Queue key after `delay` seconds (<= 0: now). */
int aj_workqueue_add_after(struct aj_workqueue *q, const char *key, double delay);
/* Queue key after `delay` seconds behind every normal and low key. 0 / -1. */
int aj_workqueue_add_idle_after(struct aj_workqueue *q, const char *key, double delay);
/* Queue key after its backoff and the shared bucket allow; counts a retry. */
int aj_workqueue_add_rate_limited(struct aj_workqueue *q, const char *key);
/* The key succeeded: reset its backoff. */
void aj_workqueue_forget(struct aj_workqueue *q, const char *key);
/* Consecutive failures recorded for key. */
unsigned long aj_workqueue_failures(struct aj_workqueue *q, const char *key);

/*
 * Wait for a key. Returns 1 with *key set, or 0 once the queue is shut down.
 */
int aj_workqueue_get(struct aj_workqueue *q, char **key);
/* Like get() but never waits: 1 with a key, 0 when none is ready now. */
int aj_workqueue_try_get(struct aj_workqueue *q, char **key);
/* The worker finished key (from get); frees it. */
void aj_workqueue_done(struct aj_workqueue *q, char *key);

void aj_workqueue_shutdown(struct aj_workqueue *q);
/* Keys waiting now (not delayed, not processing; every level): the depth metric. */
size_t aj_workqueue_len(struct aj_workqueue *q);

#endif
