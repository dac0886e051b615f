/*
 * ratelimit.h - client-side request pacing: a token bucket (QPS and burst,
 * as client-go's) and the jittered exponential backoff used between failed
 * list/watch attempts.
 *
 * Both take their clock (seconds, monotonic) and, for the backoff, their
 * random source from the caller, so tests drive time by hand and never
 * sleep. NULL selects CLOCK_MONOTONIC and an internal generator.
 *
 * Neither allocates; they are plain values owned by whoever embeds them.
 */
#ifndef AJ_KUBE_RATELIMIT_H
#define AJ_KUBE_RATELIMIT_H

typedef double (*aj_clock_fn)(void *ctx);

/* Seconds on CLOCK_MONOTONIC. */
double aj_monotonic_now(void *ctx);

/* client-go defaults for a command-line client. */
#define AJ_KUBE_DEFAULT_QPS 5.0
#define AJ_KUBE_DEFAULT_BURST 10

struct aj_ratelimit {
	double qps;        /* <= 0: no limit */
	double burst;      /* bucket size, at least 1 */
	double tokens;     /* may go negative: reservations already handed out */
	double last;       /* clock time tokens was computed at */
	aj_clock_fn now;
	void *clock_ctx;
};

/* Start with a full bucket. qps <= 0 disables limiting. */
void aj_ratelimit_init(struct aj_ratelimit *rl, double qps, int burst,
		       aj_clock_fn now, void *clock_ctx);

/*
 * Take one token and return how long (seconds) the caller must wait before
 * sending; 0 when a token was available. Waits queue up: each reservation
 * is 1/qps after the previous one once the burst is spent.
 */
double aj_ratelimit_reserve(struct aj_ratelimit *rl);

/* Backoff defaults (client-go reflector, kube-rs watcher). */
#define AJ_BACKOFF_INITIAL 0.8
#define AJ_BACKOFF_MAX 30.0
#define AJ_BACKOFF_RESET 120.0

typedef double (*aj_random_fn)(void *ctx); /* uniform in [0, 1) */

/* splitmix64 step: small and well mixed; enough for jitter, not for keys. */
unsigned long long aj_random_next(unsigned long long *state);
/* A seed that differs between processes and calls. */
unsigned long long aj_random_seed(void);

struct aj_backoff {
	double initial, max, reset_after;
	double step;          /* base delay of the next failure; 0 = initial */
	double last_failure;  /* clock time of the last failure; < 0 = none */
	aj_clock_fn now;
	void *clock_ctx;
	aj_random_fn random;  /* NULL: internal generator */
	void *random_ctx;
	unsigned long long seed; /* state of the internal generator */
};

void aj_backoff_init(struct aj_backoff *b, aj_clock_fn now, void *clock_ctx,
		     aj_random_fn random, void *random_ctx);

/*
 * Record a failure and return the delay before the next attempt: the base
 * doubles from `initial` up to `max`, and the delay is the base times a
 * random factor in [1, 2), never above `max`. A failure more than
 * `reset_after` seconds after the previous one starts over at `initial`.
 */
double aj_backoff_next(struct aj_backoff *b);

/* Forget past failures (after a success that proves the peer healthy). */
void aj_backoff_reset(struct aj_backoff *b);

#endif
