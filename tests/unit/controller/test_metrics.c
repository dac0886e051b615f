#include "support.h"

#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "metrics.h"

static void counters_gauges_and_histograms_render_as_prometheus_text(void **state)
{
	struct aj_metrics m;
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_SMALL);
	const double bounds[] = { 0.1, 1 };
	char ok[128], err[128];

	(void)state;
	assert_int_equal(aj_metrics_init(&m), 0);
	assert_int_equal(aj_metrics_register(&m, "controller_runtime_reconcile_total",
					     AJ_METRIC_COUNTER, "Total reconciliations.", NULL, 0), 0);
	assert_int_equal(aj_metrics_register(&m, "workqueue_depth", AJ_METRIC_GAUGE,
					     "Current depth of the work queue.", NULL, 0), 0);
	assert_int_equal(aj_metrics_register(&m, "controller_runtime_reconcile_time_seconds",
					     AJ_METRIC_HISTOGRAM, "Reconcile time.", bounds, 2), 0);
	assert_int_equal(aj_metrics_labels(ok, sizeof(ok), "controller", "ajjob",
					   "result", "success", (const char *)NULL), 0);
	assert_int_equal(aj_metrics_labels(err, sizeof(err), "controller", "ajjob",
					   "result", "error", (const char *)NULL), 0);
	aj_metrics_add(&m, "controller_runtime_reconcile_total", ok, 1);
	aj_metrics_add(&m, "controller_runtime_reconcile_total", ok, 2);
	aj_metrics_add(&m, "controller_runtime_reconcile_total", err, 1);
	aj_metrics_set(&m, "workqueue_depth", "name=\"ajjob\"", 7);
	aj_metrics_set(&m, "workqueue_depth", "name=\"ajjob\"", 4);
	aj_metrics_observe(&m, "controller_runtime_reconcile_time_seconds", "", 0.05);
	aj_metrics_observe(&m, "controller_runtime_reconcile_time_seconds", "", 0.5);
	aj_metrics_observe(&m, "controller_runtime_reconcile_time_seconds", "", 5);
	assert_int_equal(aj_metrics_render(&m, &out), 0);
	assert_string_equal(aj_buf_cstr(&out),
		"# HELP controller_runtime_reconcile_total Total reconciliations.\n"
		"# TYPE controller_runtime_reconcile_total counter\n"
		"controller_runtime_reconcile_total{controller=\"ajjob\",result=\"success\"} 3\n"
		"controller_runtime_reconcile_total{controller=\"ajjob\",result=\"error\"} 1\n"
		"# HELP workqueue_depth Current depth of the work queue.\n"
		"# TYPE workqueue_depth gauge\n"
		"workqueue_depth{name=\"ajjob\"} 4\n"
		"# HELP controller_runtime_reconcile_time_seconds Reconcile time.\n"
		"# TYPE controller_runtime_reconcile_time_seconds histogram\n"
		"controller_runtime_reconcile_time_seconds_bucket{le=\"0.1\"} 1\n"
		"controller_runtime_reconcile_time_seconds_bucket{le=\"1\"} 2\n"
		"controller_runtime_reconcile_time_seconds_bucket{le=\"+Inf\"} 3\n"
		"controller_runtime_reconcile_time_seconds_sum 5.55\n"
		"controller_runtime_reconcile_time_seconds_count 3\n");
	aj_buf_release(&out);
	aj_metrics_release(&m);
}

static void label_values_are_escaped(void **state)
{
	char out[64];

	(void)state;
	assert_int_equal(aj_metrics_labels(out, sizeof(out), "a", "x\"y\\z\nw", (const char *)NULL), 0);
	assert_string_equal(out, "a=\"x\\\"y\\\\z\\nw\"");
	assert_int_equal(aj_metrics_labels(out, 8, "name", "much too long", (const char *)NULL), -1);
}

static void updates_to_unknown_or_mistyped_families_fail(void **state)
{
	struct aj_metrics m;

	(void)state;
	assert_int_equal(aj_metrics_init(&m), 0);
	assert_int_equal(aj_metrics_register(&m, "c", AJ_METRIC_COUNTER, "c", NULL, 0), 0);
	assert_int_equal(aj_metrics_add(&m, "missing", "", 1), -1);
	assert_int_equal(aj_metrics_register(&m, "g", AJ_METRIC_GAUGE, "g", NULL, 0), 0);
	assert_int_equal(aj_metrics_add(&m, "g", "", 1), -1);
	assert_int_equal(aj_metrics_observe(&m, "c", "", 1), -1);
	assert_int_equal(aj_metrics_add(&m, "c", "", 1), 0);
	aj_metrics_release(&m);
}

static void out_of_memory_changes_nothing(void **state)
{
	struct aj_metrics m;
	long n;

	(void)state;
	for (n = 0;; n++) {
		int r;

		assert_int_equal(aj_metrics_init(&m), 0);
		aj_alloc_fail_after(n);
		r = aj_metrics_register(&m, "c", AJ_METRIC_COUNTER, "c", NULL, 0);
		if (!r)
			r = aj_metrics_add(&m, "c", "x=\"1\"", 1);
		aj_alloc_fail_after(-1);
		if (!r) {
			aj_metrics_release(&m);
			break;
		}
		/* Nothing half-registered: a family is there with its series or not. */
		assert_true(m.nr == 0 || m.families[0].nr == 0);
		aj_metrics_release(&m);
	}
	assert_true(n > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counters_gauges_and_histograms_render_as_prometheus_text),
		cmocka_unit_test(label_values_are_escaped),
		cmocka_unit_test(updates_to_unknown_or_mistyped_families_fail),
		cmocka_unit_test(out_of_memory_changes_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
