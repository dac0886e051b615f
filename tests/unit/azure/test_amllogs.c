/*
 * The pure parts of aj logs for Azure ML jobs (azure/amllogs.h): which
 * logFiles are shown, their order and prefixes, the judgement of ranged
 * reads and the polling curve. Expected values written by hand from the
 * file names the Azure ML runtime writes and the SDK's stream helper.
 */
#include "support.h"

#include <string.h>

#include "azure/amllogs.h"
#include "core/buf.h"
#include "core/error.h"

static void label_is(const char *name, const char *want)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	assert_int_equal(aj_amllogs_label(name, &b), 0);
	assert_string_equal(aj_buf_cstr(&b), want);
	aj_buf_release(&b);
}

static void labels_and_ranks(void **state)
{
	(void)state;
	label_is("user_logs/std_log.txt", "0");
	label_is("user_logs/std_log_process_0.txt", "0");
	label_is("user_logs/std_log_process_12.txt", "12");
	label_is("user_logs/std_log_process_03.txt", "3");
	label_is("user_logs/std_log_rank_2.txt", "2");
	label_is("user_logs/std_log_worker_1.txt", "worker-1");
	label_is("user_logs/std_log_node_1_process_3.txt", "node-1-process-3");
	label_is("azureml-logs/70_driver_log.txt", "70_driver_log");
	assert_int_equal(aj_amllogs_rank("user_logs/std_log.txt"), 0);
	assert_int_equal(aj_amllogs_rank("user_logs/std_log_process_7.txt"), 7);
	assert_int_equal(aj_amllogs_rank("user_logs/std_log_worker_1.txt"), -1);
	assert_int_equal(aj_amllogs_rank("azureml-logs/70_driver_log.txt"), -1);
	/* too many digits for a rank: a role */
	assert_int_equal(aj_amllogs_rank("user_logs/std_log_process_12345678901.txt"), -1);
}

static void which_files(void **state)
{
	(void)state;
	assert_true(aj_amllogs_is_user_log("user_logs/std_log.txt"));
	assert_true(aj_amllogs_is_user_log("user_logs/std_log_process_1.txt"));
	assert_false(aj_amllogs_is_user_log("user_logs/other.txt"));
	assert_false(aj_amllogs_is_user_log("user_logs/std_log.txt.bak"));
	assert_false(aj_amllogs_is_user_log("user_logs/sub/std_log.txt"));
	assert_false(aj_amllogs_is_user_log("system_logs/lifecycler/execution-wrapper.log"));
	assert_true(aj_amllogs_is_runtime_log("azureml-logs/70_driver_log.txt"));
	assert_false(aj_amllogs_is_runtime_log("azureml-logs/driver.txt"));
	assert_false(aj_amllogs_is_runtime_log("azureml-logs/70.txt"));
	assert_false(aj_amllogs_is_runtime_log("logs/azureml/70_driver_log.txt"));
}

static cJSON *log_files(const char *json)
{
	cJSON *o = cJSON_Parse(json);

	assert_non_null(o);
	return o;
}

static void names_are(const struct aj_amllogs *s, const char *const *want, size_t n)
{
	size_t i;

	assert_int_equal(s->nr, n);
	for (i = 0; i < n; i++)
		assert_string_equal(s->files[i].name, want[i]);
}

static void update_orders_ranks_and_keeps_offsets(void **state)
{
	static const char *const first[] = {
		"user_logs/std_log_process_2.txt", "user_logs/std_log_process_10.txt",
		"user_logs/std_log_worker_1.txt",
	};
	static const char *const second[] = {
		"user_logs/std_log_process_0.txt", "user_logs/std_log_process_2.txt",
		"user_logs/std_log_process_10.txt", "user_logs/std_log_worker_1.txt",
	};
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_amllogs s;
	cJSON *a = log_files("{\"user_logs/std_log_process_10.txt\": \"u1\","
			     " \"system_logs/cs-capability/cs.log\": \"u2\","
			     " \"user_logs/std_log_worker_1.txt\": \"u3\","
			     " \"user_logs/std_log_process_2.txt\": \"u4\"}");
	cJSON *b = log_files("{\"user_logs/std_log_process_10.txt\": \"u1\","
			     " \"user_logs/std_log_process_0.txt\": \"u5\","
			     " \"user_logs/std_log_worker_1.txt\": \"u3\","
			     " \"user_logs/std_log_process_2.txt\": \"u4\"}");

	(void)state;
	aj_amllogs_init(&s, -1);
	assert_int_equal(aj_amllogs_update(&s, a, &e), 0);
	names_are(&s, first, 3);
	assert_string_equal(s.files[0].prefix, "[2] ");
	assert_string_equal(s.files[2].prefix, "[worker-1] ");
	s.files[0].offset = 42;
	assert_int_equal(aj_amllogs_update(&s, b, &e), 0);
	names_are(&s, second, 4);
	assert_int_equal(aj_amllogs_find(&s, "user_logs/std_log_process_2.txt")->offset, 42);
	assert_int_equal(aj_amllogs_find(&s, "user_logs/std_log_process_0.txt")->offset, 0);
	aj_amllogs_release(&s);
	cJSON_Delete(a);
	cJSON_Delete(b);
	assert_true(aj_errors_empty(&e));
}

static void rank_filter_and_fallback(void **state)
{
	static const char *const rank2[] = { "user_logs/std_log_process_2.txt" };
	static const char *const runtime[] = { "azureml-logs/55_azureml-execution.txt",
					       "azureml-logs/70_driver_log.txt" };
	static const char *const user[] = { "user_logs/std_log.txt" };
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_amllogs s;
	cJSON *a = log_files("{\"user_logs/std_log_process_0.txt\": \"u\","
			     " \"user_logs/std_log_process_2.txt\": \"u\"}");
	cJSON *old = log_files("{\"azureml-logs/70_driver_log.txt\": \"u\","
			       " \"azureml-logs/55_azureml-execution.txt\": \"u\","
			       " \"logs/azureml/job_prep.log\": \"u\"}");
	cJSON *now = log_files("{\"azureml-logs/70_driver_log.txt\": \"u\","
			       " \"user_logs/std_log.txt\": \"u\"}");

	(void)state;
	aj_amllogs_init(&s, 2);
	assert_int_equal(aj_amllogs_update(&s, a, &e), 0);
	names_are(&s, rank2, 1);
	aj_amllogs_release(&s);

	aj_amllogs_init(&s, -1);
	assert_int_equal(aj_amllogs_update(&s, old, &e), 0);
	names_are(&s, runtime, 2);
	/* once the user's files appear they replace the fallback */
	assert_int_equal(aj_amllogs_update(&s, now, &e), 0);
	names_are(&s, user, 1);
	aj_amllogs_release(&s);
	cJSON_Delete(a);
	cJSON_Delete(old);
	cJSON_Delete(now);
}

static void judges_ranged_reads(void **state)
{
	size_t skip;
	int64_t next;
	int more;

	(void)state;
	assert_int_equal(aj_amllogs_judge(206, 10, 100, 1024, &skip, &next, &more), AJ_AMLLOGS_DATA);
	assert_int_equal(skip, 0);
	assert_int_equal(next, 110);
	assert_false(more);
	assert_int_equal(aj_amllogs_judge(206, 1024, 0, 1024, &skip, &next, &more), AJ_AMLLOGS_DATA);
	assert_int_equal(next, 1024);
	assert_true(more);
	/* a server that ignores Range sends the whole file: what was shown is skipped */
	assert_int_equal(aj_amllogs_judge(200, 30, 12, 1024, &skip, &next, &more), AJ_AMLLOGS_DATA);
	assert_int_equal(skip, 12);
	assert_int_equal(next, 30);
	assert_false(more);
	assert_int_equal(aj_amllogs_judge(200, 12, 12, 1024, &skip, &next, &more), AJ_AMLLOGS_NOTHING);
	assert_int_equal(aj_amllogs_judge(416, 200, 12, 1024, &skip, &next, &more), AJ_AMLLOGS_NOTHING);
	assert_int_equal(next, 12);
	assert_int_equal(aj_amllogs_judge(404, 200, 0, 1024, &skip, &next, &more), AJ_AMLLOGS_MISSING);
	assert_int_equal(aj_amllogs_judge(403, 200, 0, 1024, &skip, &next, &more), AJ_AMLLOGS_REFUSED);
}

static void polls_on_the_sdk_curve(void **state)
{
	(void)state;
	assert_int_equal(aj_amllogs_poll_ms(0), 2000);
	assert_int_equal(aj_amllogs_poll_ms(10000), 2000);
	/* 60 s / (1 + 100 e^-1.5) = 2.58 s at half a minute */
	assert_in_range(aj_amllogs_poll_ms(30000), 2550, 2600);
	/* 60 s / (1 + 100 e^-3) = 10.04 s at one minute */
	assert_in_range(aj_amllogs_poll_ms(60000), 10000, 10100);
	assert_in_range(aj_amllogs_poll_ms(600000), 59990, 60000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(labels_and_ranks),
		cmocka_unit_test(which_files),
		cmocka_unit_test(update_orders_ranks_and_keeps_offsets),
		cmocka_unit_test(rank_filter_and_fallback),
		cmocka_unit_test(judges_ranged_reads),
		cmocka_unit_test(polls_on_the_sdk_curve),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
