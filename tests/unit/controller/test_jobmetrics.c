#include "support.h"

#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "jobmetrics.h"
#include "metrics.h"

static void setup_registry(struct aj_metrics *m)
{
	assert_int_equal(aj_metrics_init(m), 0);
	assert_int_equal(aj_jobmetrics_register(m), 0);
}

/* The exposition text, as a static copy for strstr checks. */
static const char *render(struct aj_metrics *m)
{
	static char text[65536];
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_SMALL);

	assert_int_equal(aj_metrics_render(m, &out), 0);
	assert_true(out.len < sizeof(text));
	memcpy(text, aj_buf_cstr(&out), out.len + 1);
	aj_buf_release(&out);
	return text;
}

/* line must appear as a whole line of text. */
static void assert_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p;

	for (p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return;
	fail_msg("no line \"%s\" in:\n%s", line, text);
}

static size_t count_prefix(const char *text, const char *prefix)
{
	size_t n = 0;
	const char *p;

	for (p = text; (p = strstr(p, prefix)); p++)
		if (p == text || p[-1] == '\n')
			n++;
	return n;
}

static void the_tally_sets_every_phase_of_every_backend_zeros_included(void **state)
{
	struct aj_metrics m;
	struct aj_jobtally t;
	const char *text;

	(void)state;
	setup_registry(&m);
	aj_jobtally_init(&t);
	aj_jobtally_count(&t, "volcano", AJ_PHASE_RUNNING);
	aj_jobtally_count(&t, "volcano", AJ_PHASE_RUNNING);
	aj_jobtally_count(&t, "aml", AJ_PHASE_FAILED);
	aj_jobtally_count(&t, NULL, AJ_PHASE_PENDING);
	aj_jobtally_count(&t, "nosuch", AJ_PHASE_PENDING);
	assert_int_equal(aj_jobmetrics_tally(&m, &t), 0);
	text = render(&m);
	assert_line(text, "# TYPE aj_ajjobs gauge");
	assert_line(text, "aj_ajjobs{phase=\"Running\",backend=\"volcano\"} 2");
	assert_line(text, "aj_ajjobs{phase=\"Failed\",backend=\"aml\"} 1");
	assert_line(text, "aj_ajjobs{phase=\"Pending\",backend=\"unknown\"} 2");
	assert_line(text, "aj_ajjobs{phase=\"Cancelling\",backend=\"sing\"} 0");
	assert_line(text, "aj_ajjobs{phase=\"Succeeded\",backend=\"kube\"} 0");
	/* 7 phases x (aml, kube, sing, volcano, unknown) */
	assert_int_equal(count_prefix(text, "aj_ajjobs{"), 7 * 5);

	/* The next scrape's tally replaces the last one: emptied phases read 0. */
	aj_jobtally_init(&t);
	aj_jobtally_count(&t, "volcano", AJ_PHASE_SUCCEEDED);
	assert_int_equal(aj_jobmetrics_tally(&m, &t), 0);
	text = render(&m);
	assert_line(text, "aj_ajjobs{phase=\"Running\",backend=\"volcano\"} 0");
	assert_line(text, "aj_ajjobs{phase=\"Succeeded\",backend=\"volcano\"} 1");
	assert_line(text, "aj_ajjobs{phase=\"Pending\",backend=\"unknown\"} 0");
	assert_int_equal(count_prefix(text, "aj_ajjobs{"), 7 * 5);
	aj_metrics_release(&m);
}

static void reaching_running_observes_the_wait_since_creation(void **state)
{
	struct aj_metrics m;
	const char *text;

	(void)state;
	setup_registry(&m);
	/* 45 s and 90 s waits; a repeated Running and a later phase observe nothing more. */
	assert_int_equal(aj_jobmetrics_transition(&m, "volcano", AJ_PHASE_SUBMITTED,
						  AJ_PHASE_RUNNING, 1000, 0, 1045), 0);
	assert_int_equal(aj_jobmetrics_transition(&m, "volcano", AJ_PHASE_PENDING,
						  AJ_PHASE_RUNNING, 2000, 0, 2090), 0);
	assert_int_equal(aj_jobmetrics_transition(&m, "volcano", AJ_PHASE_RUNNING,
						  AJ_PHASE_RUNNING, 2000, 2090, 2100), 0);
	assert_int_equal(aj_jobmetrics_transition(&m, "volcano", AJ_PHASE_RUNNING,
						  AJ_PHASE_CANCELLING, 2000, 2090, 2100), 0);
	/* A clock behind the creation time counts 0, not a negative wait. */
	assert_int_equal(aj_jobmetrics_transition(&m, "sing", AJ_PHASE_SUBMITTED,
						  AJ_PHASE_RUNNING, 5000, 0, 4990), 0);
	text = render(&m);
	assert_line(text, "aj_ajjob_time_to_running_seconds_bucket{backend=\"volcano\",le=\"30\"} 0");
	assert_line(text, "aj_ajjob_time_to_running_seconds_bucket{backend=\"volcano\",le=\"60\"} 1");
	assert_line(text, "aj_ajjob_time_to_running_seconds_bucket{backend=\"volcano\",le=\"120\"} 2");
	assert_line(text, "aj_ajjob_time_to_running_seconds_bucket{backend=\"volcano\",le=\"86400\"} 2");
	assert_line(text, "aj_ajjob_time_to_running_seconds_bucket{backend=\"volcano\",le=\"+Inf\"} 2");
	assert_line(text, "aj_ajjob_time_to_running_seconds_sum{backend=\"volcano\"} 135");
	assert_line(text, "aj_ajjob_time_to_running_seconds_count{backend=\"volcano\"} 2");
	assert_line(text, "aj_ajjob_time_to_running_seconds_bucket{backend=\"sing\",le=\"1\"} 1");
	assert_line(text, "aj_ajjob_time_to_running_seconds_sum{backend=\"sing\"} 0");
	assert_int_equal(count_prefix(text, "aj_ajjob_duration_seconds_count"), 0);
	aj_metrics_release(&m);
}

static void finishing_observes_the_duration_by_outcome(void **state)
{
	struct aj_metrics m;
	const char *text;

	(void)state;
	setup_registry(&m);
	/* Ran 2 h: measured from Running, not from creation. */
	assert_int_equal(aj_jobmetrics_transition(&m, "volcano", AJ_PHASE_RUNNING,
						  AJ_PHASE_SUCCEEDED, 0, 100, 7300), 0);
	/* Never seen Running: measured from creation. */
	assert_int_equal(aj_jobmetrics_transition(&m, "aml", AJ_PHASE_SUBMITTED,
						  AJ_PHASE_FAILED, 50, 0, 70), 0);
	assert_int_equal(aj_jobmetrics_transition(&m, NULL, AJ_PHASE_CANCELLING,
						  AJ_PHASE_CANCELLED, 0, 10, 20), 0);
	/* Terminal to terminal (a rewrite of a finished job) observes nothing. */
	assert_int_equal(aj_jobmetrics_transition(&m, "volcano", AJ_PHASE_SUCCEEDED,
						  AJ_PHASE_FAILED, 0, 100, 9000), 0);
	text = render(&m);
	assert_line(text, "# TYPE aj_ajjob_duration_seconds histogram");
	assert_line(text, "aj_ajjob_duration_seconds_bucket{outcome=\"Succeeded\",backend=\"volcano\",le=\"3600\"} 0");
	assert_line(text, "aj_ajjob_duration_seconds_bucket{outcome=\"Succeeded\",backend=\"volcano\",le=\"7200\"} 1");
	assert_line(text, "aj_ajjob_duration_seconds_sum{outcome=\"Succeeded\",backend=\"volcano\"} 7200");
	assert_line(text, "aj_ajjob_duration_seconds_sum{outcome=\"Failed\",backend=\"aml\"} 20");
	assert_line(text, "aj_ajjob_duration_seconds_bucket{outcome=\"Failed\",backend=\"aml\",le=\"10\"} 0");
	assert_line(text, "aj_ajjob_duration_seconds_bucket{outcome=\"Failed\",backend=\"aml\",le=\"30\"} 1");
	assert_line(text, "aj_ajjob_duration_seconds_count{outcome=\"Cancelled\",backend=\"unknown\"} 1");
	assert_int_equal(count_prefix(text, "aj_ajjob_duration_seconds_count"), 3);
	assert_int_equal(count_prefix(text, "aj_ajjob_time_to_running_seconds_count"), 0);
	aj_metrics_release(&m);
}

static void expired_ajjobs_are_counted_by_backend(void **state)
{
	struct aj_metrics m;
	const char *text;

	(void)state;
	setup_registry(&m);
	assert_int_equal(aj_jobmetrics_expired(&m, "kube"), 0);
	assert_int_equal(aj_jobmetrics_expired(&m, "kube"), 0);
	assert_int_equal(aj_jobmetrics_expired(&m, NULL), 0);
	text = render(&m);
	assert_line(text, "# TYPE aj_ajjobs_expired_total counter");
	assert_line(text, "aj_ajjobs_expired_total{backend=\"kube\"} 2");
	assert_line(text, "aj_ajjobs_expired_total{backend=\"unknown\"} 1");
	assert_int_equal(count_prefix(text, "aj_ajjobs_expired_total{"), 2);
	aj_metrics_release(&m);
}

static void updates_before_register_fail(void **state)
{
	struct aj_metrics m;
	struct aj_jobtally t;

	(void)state;
	assert_int_equal(aj_metrics_init(&m), 0);
	aj_jobtally_init(&t);
	assert_int_equal(aj_jobmetrics_tally(&m, &t), -1);
	assert_int_equal(aj_jobmetrics_transition(&m, "volcano", AJ_PHASE_SUBMITTED,
						  AJ_PHASE_RUNNING, 0, 0, 1), -1);
	aj_metrics_release(&m);
}

static void out_of_memory_in_register_fails_cleanly(void **state)
{
	struct aj_metrics m;
	long n;

	(void)state;
	for (n = 0;; n++) {
		int r;

		assert_int_equal(aj_metrics_init(&m), 0);
		aj_alloc_fail_after(n);
		r = aj_jobmetrics_register(&m);
		aj_alloc_fail_after(-1);
		aj_metrics_release(&m);
		if (!r)
			break;
	}
	assert_true(n > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(the_tally_sets_every_phase_of_every_backend_zeros_included),
		cmocka_unit_test(reaching_running_observes_the_wait_since_creation),
		cmocka_unit_test(finishing_observes_the_duration_by_outcome),
		cmocka_unit_test(expired_ajjobs_are_counted_by_backend),
		cmocka_unit_test(updates_before_register_fail),
		cmocka_unit_test(out_of_memory_in_register_fails_cleanly),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
