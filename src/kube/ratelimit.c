#include "ratelimit.h"

#include <time.h>
#include <unistd.h>

double aj_monotonic_now(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void aj_ratelimit_init(struct aj_ratelimit *rl, double qps, int burst,
		       aj_clock_fn now, void *clock_ctx)
{
	rl->qps = qps;
	rl->burst = burst < 1 ? 1.0 : (double)burst;
	rl->tokens = rl->burst;
	rl->now = now ? now : aj_monotonic_now;
	rl->clock_ctx = clock_ctx;
	rl->last = rl->now(rl->clock_ctx);
}

double aj_ratelimit_reserve(struct aj_ratelimit *rl)
{
	double t, elapsed;

	if (rl->qps <= 0)
		return 0;
	t = rl->now(rl->clock_ctx);
	elapsed = t - rl->last;
	if (elapsed > 0) {
		rl->tokens += elapsed * rl->qps;
		if (rl->tokens > rl->burst)
			rl->tokens = rl->burst;
		rl->last = t;
	}
	rl->tokens -= 1;
	return rl->tokens >= 0 ? 0 : -rl->tokens / rl->qps;
}

unsigned long long aj_random_next(unsigned long long *state)
{
	unsigned long long z = (*state += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

unsigned long long aj_random_seed(void)
{
	static unsigned long long calls;
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (unsigned long long)ts.tv_nsec ^
	       ((unsigned long long)ts.tv_sec << 20) ^
	       ((unsigned long long)getpid() << 40) ^ (++calls * 0x2545F4914F6CDD1Dull);
}

void aj_backoff_init(struct aj_backoff *b, aj_clock_fn now, void *clock_ctx,
		     aj_random_fn random, void *random_ctx)
{
	b->initial = AJ_BACKOFF_INITIAL;
	b->max = AJ_BACKOFF_MAX;
	b->reset_after = AJ_BACKOFF_RESET;
	b->step = 0;
	b->last_failure = -1;
	b->now = now ? now : aj_monotonic_now;
	b->clock_ctx = clock_ctx;
	b->random = random;
	b->random_ctx = random_ctx;
	b->seed = aj_random_seed();
}

void aj_backoff_reset(struct aj_backoff *b)
{
	b->step = 0;
	b->last_failure = -1;
}

double aj_backoff_next(struct aj_backoff *b)
{
	double t = b->now(b->clock_ctx);
	double base, delay;

	if (b->last_failure >= 0 && t - b->last_failure > b->reset_after)
		b->step = 0;
	b->last_failure = t;
	base = b->step > 0 ? b->step : b->initial;
	if (base > b->max)
		base = b->max;
	b->step = base * 2;
	delay = base * (1 + (b->random ? b->random(b->random_ctx)
				      : (double)(aj_random_next(&b->seed) >> 11) /
					9007199254740992.0));
	return delay > b->max ? b->max : delay;
}
