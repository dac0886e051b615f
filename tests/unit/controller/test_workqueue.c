#include "support.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "workqueue.h"

static double fake_time;

static double fake_now(void *ctx)
{
	(void)ctx;
	return fake_time;
}

static void init_fake(struct aj_workqueue *q)
{
	struct aj_workqueue_opts o = { 0.005, 1000.0, 10.0, 100.0, fake_now, NULL };

	fake_time = 100.0;
	assert_int_equal(aj_workqueue_init(q, &o), 0);
}

static void expect_key(struct aj_workqueue *q, const char *want)
{
	char *k = NULL;

	assert_int_equal(aj_workqueue_try_get(q, &k), 1);
	assert_string_equal(k, want);
	aj_workqueue_done(q, k);
}

static void expect_empty(struct aj_workqueue *q)
{
	char *k = NULL;

	assert_int_equal(aj_workqueue_try_get(q, &k), 0);
}

static void a_waiting_key_is_held_once_in_fifo_order(void **state)
{
	struct aj_workqueue q;

	(void)state;
	init_fake(&q);
	aj_workqueue_add(&q, "ns/a");
	aj_workqueue_add(&q, "ns/b");
	aj_workqueue_add(&q, "ns/a");
	assert_int_equal(aj_workqueue_len(&q), 2);
	expect_key(&q, "ns/a");
	expect_key(&q, "ns/b");
	expect_empty(&q);
	aj_workqueue_release(&q);
}

static void a_key_being_processed_is_requeued_only_after_done(void **state)
{
	struct aj_workqueue q;
	char *k = NULL, *other = NULL;

	(void)state;
	init_fake(&q);
	aj_workqueue_add(&q, "ns/a");
	assert_int_equal(aj_workqueue_try_get(&q, &k), 1);
	/* Added again while held: no second worker may get it. */
	aj_workqueue_add(&q, "ns/a");
	aj_workqueue_add(&q, "ns/a");
	assert_int_equal(aj_workqueue_try_get(&q, &other), 0);
	aj_workqueue_done(&q, k);
	expect_key(&q, "ns/a");
	expect_empty(&q);
	aj_workqueue_release(&q);
}

static void failures_back_off_exponentially_up_to_the_cap(void **state)
{
	struct aj_workqueue q;
	double expect = 0.005;
	int i;

	(void)state;
	init_fake(&q);
	for (i = 0; i < 25; i++) {
		aj_workqueue_add_rate_limited(&q, "ns/a");
		/* Not before the backoff has passed... */
		fake_time += expect * 0.999;
		expect_empty(&q);
		/* ...and right after it. */
		fake_time += expect * 0.002;
		expect_key(&q, "ns/a");
		assert_int_equal(aj_workqueue_failures(&q, "ns/a"), (unsigned long)i + 1);
		/* 5 ms, 10 ms, 20 ms ... capped at 1000 s. */
		expect = expect * 2 > 1000.0 ? 1000.0 : expect * 2;
		/* Let the shared bucket refill so only the backoff counts. */
		fake_time += 20.0;
	}
	assert_true(expect == 1000.0);
	aj_workqueue_forget(&q, "ns/a");
	assert_int_equal(aj_workqueue_failures(&q, "ns/a"), 0);
	aj_workqueue_add_rate_limited(&q, "ns/a");
	fake_time += 0.0051;
	expect_key(&q, "ns/a");
	aj_workqueue_release(&q);
}

static void the_shared_bucket_limits_retries_across_keys(void **state)
{
	struct aj_workqueue q;
	char key[32];
	int i, got = 0;
	char *k;

	(void)state;
	init_fake(&q);
	/* 100 tokens of burst, then 10 per second. */
	for (i = 0; i < 120; i++) {
		snprintf(key, sizeof(key), "ns/k%d", i);
		aj_workqueue_add_rate_limited(&q, key);
	}
	fake_time += 0.0051;
	while (aj_workqueue_try_get(&q, &k)) {
		aj_workqueue_done(&q, k);
		got++;
	}
	assert_int_equal(got, 100);
	fake_time += 1.0;
	while (aj_workqueue_try_get(&q, &k)) {
		aj_workqueue_done(&q, k);
		got++;
	}
	assert_int_equal(got, 110);
	fake_time += 1.0;
	while (aj_workqueue_try_get(&q, &k)) {
		aj_workqueue_done(&q, k);
		got++;
	}
	assert_int_equal(got, 120);
	aj_workqueue_release(&q);
}

static void delayed_keys_come_out_in_due_order(void **state)
{
	struct aj_workqueue q;

	(void)state;
	init_fake(&q);
	aj_workqueue_add_after(&q, "ns/late", 3.0);
	aj_workqueue_add_after(&q, "ns/early", 1.0);
	aj_workqueue_add_after(&q, "ns/mid", 2.0);
	expect_empty(&q);
	fake_time += 2.5;
	expect_key(&q, "ns/early");
	expect_key(&q, "ns/mid");
	expect_empty(&q);
	fake_time += 1.0;
	expect_key(&q, "ns/late");
	aj_workqueue_release(&q);
}

/* A delayed key waits once, for the earliest time asked; a superseded time never fires. */
static void a_delayed_key_waits_once_for_the_earliest_time(void **state)
{
	struct aj_workqueue q;

	(void)state;
	init_fake(&q);
	aj_workqueue_add_after(&q, "ns/renew", 3.0);
	aj_workqueue_add_idle_after(&q, "ns/renew", 1.0);   /* sooner: supersedes */
	aj_workqueue_add_after(&q, "ns/renew", 5.0);        /* later: the sooner one stands */
	assert_int_equal(q.delayed.nr, 1);
	assert_int_equal(q.heap_nr, 1);   /* the superseded time is gone, not left to expire */
	fake_time += 1.5;
	expect_key(&q, "ns/renew");
	expect_empty(&q);
	fake_time += 10.0;
	expect_empty(&q);
	assert_int_equal(q.heap_nr, 0);
	assert_int_equal(q.delayed.nr, 0);
	/* once handed out, a later time may be asked for again */
	aj_workqueue_add_after(&q, "ns/renew", 2.0);
	fake_time += 2.5;
	expect_key(&q, "ns/renew");
	aj_workqueue_release(&q);
}

/*
 * Many keys, each asked for twice: they come out at the earlier of their
 * two times, in that order. Key i first waits 10 + (37 i mod 101) s; every
 * third key is then asked for 1 + i / 3 s, sooner for most, later for some.
 */
static void moved_keys_keep_the_due_order(void **state)
{
	struct aj_workqueue q;
	char key[32], *k;
	double t, when[101];
	int i, got = 0;

	(void)state;
	init_fake(&q);
	for (i = 0; i < 101; i++) {
		when[i] = 10 + (37 * i) % 101;
		snprintf(key, sizeof(key), "ns/%d", i);
		assert_int_equal(aj_workqueue_add_idle_after(&q, key, when[i]), 0);
	}
	for (i = 0; i < 101; i += 3) {
		snprintf(key, sizeof(key), "ns/%d", i);
		assert_int_equal(aj_workqueue_add_after(&q, key, 1 + i / 3), 0);
		if (1 + i / 3 < when[i])
			when[i] = 1 + i / 3;
	}
	assert_int_equal(q.heap_nr, 101);
	/* step one second at a time: each second hands out the keys due then, none early */
	for (t = 1; t <= 111; t++) {
		fake_time = 100.0 + t;
		while (aj_workqueue_try_get(&q, &k)) {
			i = (int)strtol(k + 3, NULL, 10);
			assert_true(when[i] == t);
			got++;
			aj_workqueue_done(&q, k);
		}
	}
	assert_int_equal(got, 101);
	assert_int_equal(q.heap_nr, 0);
	assert_int_equal(q.delayed.nr, 0);
	aj_workqueue_release(&q);
}

/* A delayed add that runs out of memory leaves nothing behind; one that succeeds comes when due. */
static void out_of_memory_in_a_delayed_add_loses_no_key(void **state)
{
	struct aj_workqueue q;
	long n;

	(void)state;
	for (n = 0;; n++) {
		int r;

		init_fake(&q);
		aj_workqueue_add_after(&q, "ns/other", 2.0);
		aj_alloc_fail_after(n);
		r = aj_workqueue_add_after(&q, "ns/a", 1.0);
		aj_alloc_fail_after(-1);
		fake_time += 1.5;
		if (r == 0) {
			expect_key(&q, "ns/a");
			aj_workqueue_release(&q);
			break;
		}
		expect_empty(&q);
		assert_int_equal(q.heap_nr, 1);
		assert_int_equal(q.delayed.nr, 1);
		fake_time += 1.0;
		expect_key(&q, "ns/other");
		aj_workqueue_release(&q);
	}
	assert_true(n > 0);
}

struct worker_arg {
	struct aj_workqueue *q;
	int got;
};

static void *worker(void *p)
{
	struct worker_arg *a = p;
	char *k;

	while (aj_workqueue_get(a->q, &k)) {
		a->got++;
		aj_workqueue_done(a->q, k);
	}
	return NULL;
}

static void shutdown_wakes_blocked_workers(void **state)
{
	struct aj_workqueue q;
	struct worker_arg a[3];
	pthread_t t[3];
	int i;

	(void)state;
	assert_int_equal(aj_workqueue_init(&q, NULL), 0);
	for (i = 0; i < 3; i++) {
		a[i].q = &q;
		a[i].got = 0;
		assert_int_equal(pthread_create(&t[i], NULL, worker, &a[i]), 0);
	}
	aj_workqueue_add(&q, "ns/one");
	while (aj_workqueue_len(&q))
		sched_yield();
	aj_workqueue_shutdown(&q);
	for (i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(a[0].got + a[1].got + a[2].got, 1);
	aj_workqueue_release(&q);
}

static void out_of_memory_loses_no_key(void **state)
{
	struct aj_workqueue q;
	long n;

	(void)state;
	for (n = 0;; n++) {
		int r;

		init_fake(&q);
		aj_alloc_fail_after(n);
		r = aj_workqueue_add(&q, "ns/a");
		aj_alloc_fail_after(-1);
		if (r == 0) {
			expect_key(&q, "ns/a");
			aj_workqueue_release(&q);
			break;
		}
		/* A failed add leaves nothing behind and can be retried. */
		expect_empty(&q);
		assert_int_equal(aj_workqueue_add(&q, "ns/a"), 0);
		expect_key(&q, "ns/a");
		aj_workqueue_release(&q);
	}
	assert_true(n > 0);
}

static void low_keys_wait_for_every_normal_key(void **state)
{
	struct aj_workqueue q;

	(void)state;
	init_fake(&q);
	aj_workqueue_add_low(&q, "ns/status-1");
	aj_workqueue_add(&q, "ns/create-1");
	aj_workqueue_add_low(&q, "ns/status-2");
	aj_workqueue_add(&q, "ns/create-2");
	assert_int_equal(aj_workqueue_len(&q), 4);
	expect_key(&q, "ns/create-1");
	expect_key(&q, "ns/create-2");
	expect_key(&q, "ns/status-1");
	expect_key(&q, "ns/status-2");
	expect_empty(&q);
	aj_workqueue_release(&q);
}

static void a_normal_add_moves_a_waiting_low_key_up_once(void **state)
{
	struct aj_workqueue q;

	(void)state;
	init_fake(&q);
	aj_workqueue_add_low(&q, "ns/a");
	aj_workqueue_add(&q, "ns/b");
	aj_workqueue_add(&q, "ns/a");
	expect_key(&q, "ns/b");
	expect_key(&q, "ns/a");
	/* Its old low place is gone with it. */
	expect_empty(&q);
	aj_workqueue_release(&q);
}

static void a_low_requeue_of_a_held_key_keeps_its_level(void **state)
{
	struct aj_workqueue q;
	char *k = NULL, *k2 = NULL, *other = NULL;

	(void)state;
	init_fake(&q);
	aj_workqueue_add(&q, "ns/a");
	assert_int_equal(aj_workqueue_try_get(&q, &k), 1);
	aj_workqueue_add_low(&q, "ns/a");
	aj_workqueue_add(&q, "ns/b");
	aj_workqueue_done(&q, k);
	expect_key(&q, "ns/b");
	/* c moves up past a; its stale low copy is dropped, never handed out twice. */
	aj_workqueue_add_low(&q, "ns/c");
	aj_workqueue_add(&q, "ns/c");
	assert_int_equal(aj_workqueue_try_get(&q, &other), 1);
	assert_string_equal(other, "ns/c");
	assert_int_equal(aj_workqueue_try_get(&q, &k), 1);
	assert_string_equal(k, "ns/a");
	aj_workqueue_add_low(&q, "ns/c");
	assert_int_equal(aj_workqueue_try_get(&q, &k2), 0);
	aj_workqueue_done(&q, other);
	aj_workqueue_done(&q, k);
	expect_key(&q, "ns/c");
	expect_empty(&q);
	aj_workqueue_release(&q);
}

static void idle_keys_come_when_due_behind_every_other_level(void **state)
{
	struct aj_workqueue q;

	(void)state;
	init_fake(&q);
	aj_workqueue_add_idle_after(&q, "ns/look-1", 5);
	aj_workqueue_add_idle_after(&q, "ns/look-2", 1);
	aj_workqueue_add_idle_after(&q, "ns/moved-up", 1);
	/* a plain delayed add (a storage renewal) still comes back at the normal level */
	aj_workqueue_add_after(&q, "ns/renew", 2);
	expect_empty(&q);
	fake_time += 5;
	aj_workqueue_add_low(&q, "ns/status-1");
	aj_workqueue_add(&q, "ns/create-1");
	aj_workqueue_add_low(&q, "ns/moved-up");
	assert_int_equal(aj_workqueue_len(&q), 3);
	/* due now: queued behind the low level, in due order */
	expect_key(&q, "ns/create-1");
	expect_key(&q, "ns/renew");
	assert_int_equal(aj_workqueue_len(&q), 4);
	aj_workqueue_add_low(&q, "ns/status-2");
	expect_key(&q, "ns/status-1");
	expect_key(&q, "ns/moved-up");
	expect_key(&q, "ns/status-2");
	expect_key(&q, "ns/look-2");
	expect_key(&q, "ns/look-1");
	expect_empty(&q);
	aj_workqueue_release(&q);
}

static void an_add_moves_a_waiting_idle_key_up(void **state)
{
	struct aj_workqueue q;

	(void)state;
	init_fake(&q);
	aj_workqueue_add_idle_after(&q, "ns/a", 0);
	aj_workqueue_add_idle_after(&q, "ns/b", 0);
	aj_workqueue_add_low(&q, "ns/c");
	aj_workqueue_add_low(&q, "ns/b");
	aj_workqueue_add(&q, "ns/a");
	/* an idle add of a key waiting higher leaves it there */
	aj_workqueue_add_idle_after(&q, "ns/c", 0);
	expect_key(&q, "ns/a");
	expect_key(&q, "ns/c");
	expect_key(&q, "ns/b");
	/* the idle copies of a and b are gone with them */
	expect_empty(&q);
	aj_workqueue_release(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_waiting_key_is_held_once_in_fifo_order),
		cmocka_unit_test(a_key_being_processed_is_requeued_only_after_done),
		cmocka_unit_test(failures_back_off_exponentially_up_to_the_cap),
		cmocka_unit_test(the_shared_bucket_limits_retries_across_keys),
		cmocka_unit_test(delayed_keys_come_out_in_due_order),
		cmocka_unit_test(a_delayed_key_waits_once_for_the_earliest_time),
		cmocka_unit_test(moved_keys_keep_the_due_order),
		cmocka_unit_test(out_of_memory_in_a_delayed_add_loses_no_key),
		cmocka_unit_test(shutdown_wakes_blocked_workers),
		cmocka_unit_test(out_of_memory_loses_no_key),
		cmocka_unit_test(low_keys_wait_for_every_normal_key),
		cmocka_unit_test(a_normal_add_moves_a_waiting_low_key_up_once),
		cmocka_unit_test(a_low_requeue_of_a_held_key_keeps_its_level),
		cmocka_unit_test(idle_keys_come_when_due_behind_every_other_level),
		cmocka_unit_test(an_add_moves_a_waiting_idle_key_up),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
