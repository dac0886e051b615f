#include "workqueue.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"

static const struct aj_workqueue_opts defaults = {
	0.005, 1000.0, 10.0, 100.0, NULL, NULL
};

static double monotonic_now(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now(const struct aj_workqueue *q)
{
	return q->opts.now(q->opts.clock_ctx);
}

int aj_workqueue_init(struct aj_workqueue *q, const struct aj_workqueue_opts *opts)
{
	pthread_condattr_t attr;

	memset(q, 0, sizeof(*q));
	q->opts = opts ? *opts : defaults;
	if (!q->opts.now)
		q->opts.now = monotonic_now;
	aj_strmap_init(&q->dirty);
	aj_strmap_init(&q->processing);
	aj_strmap_init(&q->failures);
	aj_strmap_init(&q->delayed);
	q->tokens = q->opts.burst;
	q->refilled_at = now(q);
	if (pthread_condattr_init(&attr))
		return -1;
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (pthread_cond_init(&q->cond, &attr)) {
		pthread_condattr_destroy(&attr);
		return -1;
	}
	pthread_condattr_destroy(&attr);
	if (pthread_mutex_init(&q->lock, NULL)) {
		pthread_cond_destroy(&q->cond);
		return -1;
	}
	return 0;
}

static void ring_release(struct aj_workqueue_ring *r)
{
	size_t i;

	for (i = 0; i < r->nr; i++)
		aj_free(r->keys[(r->head + i) % r->alloc]);
	aj_free(r->keys);
}

void aj_workqueue_release(struct aj_workqueue *q)
{
	size_t i;

	for (i = 0; i < AJ_WQ_LEVELS; i++)
		ring_release(&q->ring[i]);
	aj_free(q->heap);   /* its keys are the delayed map's */
	aj_strmap_release(&q->dirty);
	aj_strmap_release(&q->processing);
	aj_strmap_release(&q->failures);
	aj_strmap_release(&q->delayed);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
}

/* Append to a ring, growing it in order. Takes key (freed on failure). */
static int ring_push(struct aj_workqueue_ring *r, char *key)
{
	if (r->nr == r->alloc) {
		size_t n = r->alloc ? r->alloc * 2 : 16, i;
		char **keys;

		if (n > SIZE_MAX / sizeof(*keys) || !(keys = aj_malloc(n * sizeof(*keys)))) {
			aj_free(key);
			return -1;
		}
		for (i = 0; i < r->nr; i++)
			keys[i] = r->keys[(r->head + i) % r->alloc];
		aj_free(r->keys);
		r->keys = keys;
		r->alloc = n;
		r->head = 0;
	}
	r->keys[(r->head + r->nr) % r->alloc] = key;
	r->nr++;
	return 0;
}

static char *ring_pop(struct aj_workqueue_ring *r)
{
	char *k = r->keys[r->head];

	r->head = (r->head + 1) % r->alloc;
	r->nr--;
	return k;
}

/* The dirty map holds each key's level as its value. */
#define LEVEL(v) ((enum aj_workqueue_level)(uintptr_t)(v))
#define AS_VALUE(level) ((void *)(uintptr_t)(level))

/* Queue a copy of key at the given level (the key is already marked dirty). */
static int push_copy(struct aj_workqueue *q, const char *key, enum aj_workqueue_level level)
{
	char *copy = aj_strdup(key);

	if (!copy || ring_push(&q->ring[level], copy))
		return -1;
	pthread_cond_signal(&q->cond);
	return 0;
}

/*
 * Mark key dirty and queue it unless it is waiting already or held. An add
 * of a key waiting at a lower level queues it again at the higher one; the
 * old copy is skipped when its turn comes.
 */
static int add_locked(struct aj_workqueue *q, const char *key, enum aj_workqueue_level level)
{
	void *was;
	int found, held;

	if (q->shutting_down)
		return 0;
	was = aj_strmap_get(&q->dirty, key, &found);
	aj_strmap_get(&q->processing, key, &held);
	if (found) {
		if (level >= LEVEL(was))
			return 0;
		if (aj_strmap_put(&q->dirty, key, AS_VALUE(level), NULL))
			return -1;
		return held ? 0 : push_copy(q, key, level);
	}
	if (aj_strmap_put(&q->dirty, key, AS_VALUE(level), NULL))
		return -1;
	q->adds++;
	if (held)
		return 0;   /* done() queues it again */
	if (push_copy(q, key, level)) {
		aj_strmap_remove(&q->dirty, key, NULL);
		return -1;
	}
	return 0;
}

int aj_workqueue_add(struct aj_workqueue *q, const char *key)
{
	int r;

	pthread_mutex_lock(&q->lock);
	r = add_locked(q, key, AJ_WQ_NORMAL);
	pthread_mutex_unlock(&q->lock);
	return r;
}

int aj_workqueue_add_low(struct aj_workqueue *q, const char *key)
{
	int r;

	pthread_mutex_lock(&q->lock);
	r = add_locked(q, key, AJ_WQ_LOW);
	pthread_mutex_unlock(&q->lock);
	return r;
}

/*
 * Put e at heap index i and tell the delayed map where it is: a key already
 * in the map, so the put allocates nothing and cannot fail.
 */
static void heap_set(struct aj_workqueue *q, size_t i, struct aj_workqueue_delayed e)
{
	q->heap[i] = e;
	(void)aj_strmap_put(&q->delayed, e.key, (void *)(uintptr_t)i, NULL);
}

/* Move the entry at i towards the root while it is due sooner than its parent. */
static void heap_up(struct aj_workqueue *q, size_t i)
{
	struct aj_workqueue_delayed e = q->heap[i];

	while (i > 0 && q->heap[(i - 1) / 2].due > e.due) {
		heap_set(q, i, q->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	heap_set(q, i, e);
}

/* Drop the first entry and its key (the delayed map's). */
static void heap_pop(struct aj_workqueue *q)
{
	struct aj_workqueue_delayed e = q->heap[--q->heap_nr];
	const char *key = q->heap[0].key;
	size_t i = 0, m;

	if (q->heap_nr) {
		/* the last entry into the hole at the root, sifted down */
		while ((m = 2 * i + 1) < q->heap_nr) {
			if (m + 1 < q->heap_nr && q->heap[m + 1].due < q->heap[m].due)
				m++;
			if (q->heap[m].due >= e.due)
				break;
			heap_set(q, i, q->heap[m]);
			i = m;
		}
		heap_set(q, i, e);
	}
	aj_strmap_remove(&q->delayed, key, NULL);
}

static int add_after_locked(struct aj_workqueue *q, const char *key, double delay,
			    enum aj_workqueue_level level)
{
	struct aj_workqueue_delayed e;
	double due;
	void *at;
	int found;

	if (q->shutting_down)
		return 0;
	if (delay <= 0)
		return add_locked(q, key, level);
	due = now(q) + delay;
	at = aj_strmap_get(&q->delayed, key, &found);
	if (found) {
		size_t i = (size_t)(uintptr_t)at;

		/* waiting already, as soon or sooner: that add stands */
		if (q->heap[i].due <= due)
			return 0;
		/* sooner: its one entry moves up (a min-heap entry only rises when its due drops) */
		q->heap[i].due = due;
		q->heap[i].level = level;
		heap_up(q, i);
	} else {
		/* room first: once the map holds the key, nothing may fail */
		if (AJ_GROW(q->heap, q->heap_nr + 1, q->heap_alloc) ||
		    aj_strmap_put(&q->delayed, key, (void *)(uintptr_t)q->heap_nr, NULL))
			return -1;
		e.due = due;
		e.key = aj_strmap_key(&q->delayed, key);
		e.level = level;
		q->heap[q->heap_nr++] = e;
		heap_up(q, q->heap_nr - 1);
	}
	pthread_cond_signal(&q->cond);
	return 0;
}

static int add_after(struct aj_workqueue *q, const char *key, double delay,
		     enum aj_workqueue_level level)
{
	int r;

	pthread_mutex_lock(&q->lock);
	r = add_after_locked(q, key, delay, level);
	pthread_mutex_unlock(&q->lock);
	return r;
}

int aj_workqueue_add_after(struct aj_workqueue *q, const char *key, double delay)
{
	return add_after(q, key, delay, AJ_WQ_NORMAL);
}

int aj_workqueue_add_idle_after(struct aj_workqueue *q, const char *key, double delay)
{
	return add_after(q, key, delay, AJ_WQ_IDLE);
}

/* Reserve one token from the shared bucket; the wait until it is ours. */
static double bucket_delay(struct aj_workqueue *q)
{
	double t = now(q);

	q->tokens += (t - q->refilled_at) * q->opts.qps;
	if (q->tokens > q->opts.burst)
		q->tokens = q->opts.burst;
	q->refilled_at = t;
	q->tokens -= 1.0;
	return q->tokens >= 0 ? 0.0 : -q->tokens / q->opts.qps;
}

int aj_workqueue_add_rate_limited(struct aj_workqueue *q, const char *key)
{
	uintptr_t n;
	double backoff, bucket;
	int r;

	pthread_mutex_lock(&q->lock);
	n = (uintptr_t)aj_strmap_get(&q->failures, key, NULL);
	backoff = q->opts.base_delay * pow(2.0, (double)(n < 64 ? n : 64));
	if (backoff > q->opts.max_delay)
		backoff = q->opts.max_delay;
	if (aj_strmap_put(&q->failures, key, (void *)(n + 1), NULL)) {
		pthread_mutex_unlock(&q->lock);
		return -1;
	}
	q->retries++;
	bucket = bucket_delay(q);
	r = add_after_locked(q, key, backoff > bucket ? backoff : bucket, AJ_WQ_NORMAL);
	pthread_mutex_unlock(&q->lock);
	return r;
}

void aj_workqueue_forget(struct aj_workqueue *q, const char *key)
{
	pthread_mutex_lock(&q->lock);
	aj_strmap_remove(&q->failures, key, NULL);
	pthread_mutex_unlock(&q->lock);
}

unsigned long aj_workqueue_failures(struct aj_workqueue *q, const char *key)
{
	uintptr_t n;

	pthread_mutex_lock(&q->lock);
	n = (uintptr_t)aj_strmap_get(&q->failures, key, NULL);
	pthread_mutex_unlock(&q->lock);
	return (unsigned long)n;
}

/*
 * Move due delayed keys into the queue. A key whose add fails for lack of
 * memory stays in the heap and is tried again on the next call.
 */
static void promote_due(struct aj_workqueue *q)
{
	double t = now(q);

	while (q->heap_nr && q->heap[0].due <= t) {
		if (add_locked(q, q->heap[0].key, q->heap[0].level))
			return;
		heap_pop(q);
	}
}

/* Hand out the next key: 1, or 0 when none is waiting. */
static int take_locked(struct aj_workqueue *q, char **key)
{
	promote_due(q);
	for (;;) {
		struct aj_workqueue_ring *r = q->ring;
		int dirty, held;
		char *k;

		while (!r->nr && r < q->ring + AJ_WQ_LEVELS - 1)
			r++;
		if (!r->nr)
			return 0;
		k = r->keys[r->head];
		/*
		 * A stale copy of a key that moved up: handled since, or held
		 * by a worker now (done() queues it again if it is dirty).
		 */
		aj_strmap_get(&q->dirty, k, &dirty);
		aj_strmap_get(&q->processing, k, &held);
		if (!dirty || held) {
			aj_free(ring_pop(r));
			continue;
		}
		if (aj_strmap_put(&q->processing, k, NULL, NULL))
			return 0;   /* out of memory: leave it queued, try later */
		ring_pop(r);
		aj_strmap_remove(&q->dirty, k, NULL);
		*key = k;
		return 1;
	}
}

int aj_workqueue_try_get(struct aj_workqueue *q, char **key)
{
	int r;

	pthread_mutex_lock(&q->lock);
	r = !q->shutting_down && take_locked(q, key);
	pthread_mutex_unlock(&q->lock);
	return r;
}

int aj_workqueue_get(struct aj_workqueue *q, char **key)
{
	int r = 0;

	pthread_mutex_lock(&q->lock);
	while (!q->shutting_down && !(r = take_locked(q, key))) {
		struct timespec ts;
		/* Sleep until the next delayed key is due, or 1 s at most. */
		double wait = q->heap_nr ? q->heap[0].due - now(q) : 1.0;

		if (wait > 1.0)
			wait = 1.0;
		if (wait < 0.001)
			wait = 0.001;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)wait;
		ts.tv_nsec += (long)((wait - floor(wait)) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&q->cond, &q->lock, &ts);
	}
	pthread_mutex_unlock(&q->lock);
	return r;
}

void aj_workqueue_done(struct aj_workqueue *q, char *key)
{
	void *level;
	int dirty;

	pthread_mutex_lock(&q->lock);
	aj_strmap_remove(&q->processing, key, NULL);
	level = aj_strmap_get(&q->dirty, key, &dirty);
	if (dirty && !q->shutting_down) {
		if (ring_push(&q->ring[LEVEL(level)], key))
			aj_strmap_remove(&q->dirty, key, NULL);
		else
			pthread_cond_signal(&q->cond);
		key = NULL;
	}
	pthread_mutex_unlock(&q->lock);
	aj_free(key);
}

void aj_workqueue_shutdown(struct aj_workqueue *q)
{
	pthread_mutex_lock(&q->lock);
	q->shutting_down = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

size_t aj_workqueue_len(struct aj_workqueue *q)
{
	size_t n = 0, i;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < AJ_WQ_LEVELS; i++)
		n += q->ring[i].nr;
	pthread_mutex_unlock(&q->lock);
	return n;
}
