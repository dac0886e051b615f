#include "support.h"

#include "kube/ratelimit.h"

/* A clock the test moves by hand. */
static double fake_now(void *ctx)
{
	return *(double *)ctx;
}

/* A "random" source replaying fixed values. */
struct seq {
	const double *v;
	size_t i;
};

static double fake_random(void *ctx)
{
	struct seq *s = ctx;

	return s->v[s->i++];
}

static void burst_then_paced(void **state)
{
	struct aj_ratelimit rl;
	double t = 100.0;
	int i;

	(void)state;
	aj_ratelimit_init(&rl, 5.0, 10, fake_now, &t);
	/* A full bucket: ten requests go at once. */
	for (i = 0; i < 10; i++)
		assert_float_equal(aj_ratelimit_reserve(&rl), 0.0, 1e-9);
	/* The 11th waits 1/5 s, the 12th 2/5 s: reservations queue up. */
	assert_float_equal(aj_ratelimit_reserve(&rl), 0.2, 1e-9);
	assert_float_equal(aj_ratelimit_reserve(&rl), 0.4, 1e-9);
	/* After one second 5 tokens came back, 2 of them already promised. */
	t += 1.0;
	for (i = 0; i < 3; i++)
		assert_float_equal(aj_ratelimit_reserve(&rl), 0.0, 1e-9);
	assert_float_equal(aj_ratelimit_reserve(&rl), 0.2, 1e-9);
}

static void refill_caps_at_burst(void **state)
{
	struct aj_ratelimit rl;
	double t = 0.0;
	int i;

	(void)state;
	aj_ratelimit_init(&rl, 2.0, 3, fake_now, &t);
	for (i = 0; i < 3; i++)
		assert_float_equal(aj_ratelimit_reserve(&rl), 0.0, 1e-9);
	/* An hour idle refills to 3, not to 7200. */
	t += 3600.0;
	for (i = 0; i < 3; i++)
		assert_float_equal(aj_ratelimit_reserve(&rl), 0.0, 1e-9);
	assert_float_equal(aj_ratelimit_reserve(&rl), 0.5, 1e-9);
	/* Half a token after 0.25 s: the next one still waits. */
	t += 0.25;
	assert_float_equal(aj_ratelimit_reserve(&rl), 0.75, 1e-9);
}

static void disabled_and_tiny_burst(void **state)
{
	struct aj_ratelimit rl;
	double t = 0.0;
	int i;

	(void)state;
	aj_ratelimit_init(&rl, 0.0, 0, fake_now, &t);
	for (i = 0; i < 1000; i++)
		assert_float_equal(aj_ratelimit_reserve(&rl), 0.0, 1e-9);
	/* burst 0 behaves as burst 1. */
	aj_ratelimit_init(&rl, 10.0, 0, fake_now, &t);
	assert_float_equal(aj_ratelimit_reserve(&rl), 0.0, 1e-9);
	assert_float_equal(aj_ratelimit_reserve(&rl), 0.1, 1e-9);
}

static void backoff_doubles_with_jitter_up_to_max(void **state)
{
	static const double r[] = { 0.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.99, 0.0 };
	struct seq s = { r, 0 };
	struct aj_backoff b;
	double t = 10.0;

	(void)state;
	aj_backoff_init(&b, fake_now, &t, fake_random, &s);
	assert_float_equal(aj_backoff_next(&b), 0.8, 1e-9);     /* 0.8 * 1.0 */
	assert_float_equal(aj_backoff_next(&b), 2.4, 1e-9);     /* 1.6 * 1.5 */
	assert_float_equal(aj_backoff_next(&b), 3.2, 1e-9);     /* 3.2 */
	assert_float_equal(aj_backoff_next(&b), 6.4, 1e-9);
	assert_float_equal(aj_backoff_next(&b), 12.8, 1e-9);
	assert_float_equal(aj_backoff_next(&b), 25.6, 1e-9);
	/* 51.2 base is capped to 30; with jitter still at most 30. */
	assert_float_equal(aj_backoff_next(&b), 30.0, 1e-9);
	assert_float_equal(aj_backoff_next(&b), 30.0, 1e-9);
}

static void backoff_resets_after_quiet_period(void **state)
{
	static const double r[] = { 0.0, 0.0, 0.0, 0.0, 0.0 };
	struct seq s = { r, 0 };
	struct aj_backoff b;
	double t = 0.0;

	(void)state;
	aj_backoff_init(&b, fake_now, &t, fake_random, &s);
	assert_float_equal(aj_backoff_next(&b), 0.8, 1e-9);
	t += 60;
	assert_float_equal(aj_backoff_next(&b), 1.6, 1e-9);
	/* More than two minutes without a failure: start over. */
	t += 121;
	assert_float_equal(aj_backoff_next(&b), 0.8, 1e-9);
	assert_float_equal(aj_backoff_next(&b), 1.6, 1e-9);
	aj_backoff_reset(&b);
	assert_float_equal(aj_backoff_next(&b), 0.8, 1e-9);
}

static void backoff_internal_jitter_in_range(void **state)
{
	struct aj_backoff b;
	double t = 0.0, d;
	int i, differ = 0;

	(void)state;
	aj_backoff_init(&b, fake_now, &t, NULL, NULL);
	for (i = 0; i < 200; i++) {
		aj_backoff_reset(&b);
		d = aj_backoff_next(&b);
		assert_true(d >= 0.8 && d < 1.6);
		differ |= d != 0.8;
	}
	assert_true(differ);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(burst_then_paced),
		cmocka_unit_test(refill_caps_at_burst),
		cmocka_unit_test(disabled_and_tiny_burst),
		cmocka_unit_test(backoff_doubles_with_jitter_up_to_max),
		cmocka_unit_test(backoff_resets_after_quiet_period),
		cmocka_unit_test(backoff_internal_jitter_in_range),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
