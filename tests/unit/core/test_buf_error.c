#include "support.h"

#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

static void buf_appends_and_formats(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(64);

	(void)state;
	assert_int_equal(aj_buf_addstr(&b, "nodes="), 0);
	assert_int_equal(aj_buf_addf(&b, "%d", 42), 0);
	assert_string_equal(aj_buf_cstr(&b), "nodes=42");
	assert_int_equal(b.len, 8);
	aj_buf_release(&b);
}

static void buf_limit_fails_and_stays_failed(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(8);

	(void)state;
	assert_int_equal(aj_buf_addstr(&b, "12345678"), 0);
	assert_int_equal(aj_buf_addch(&b, '9'), -1);
	assert_null(b.buf);
	assert_int_equal(aj_buf_addstr(&b, "x"), -1);
	assert_null(aj_buf_detach(&b, NULL));
	aj_buf_release(&b);
}

static void buf_fails_cleanly_without_memory(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	(void)state;
	aj_alloc_fail_after(0);
	assert_int_equal(aj_buf_addstr(&b, "x"), -1);
	aj_alloc_fail_after(-1);
	assert_string_equal(aj_buf_cstr(&b), "");
	aj_buf_release(&b);
}

static void errors_format_file_line_path(void **state)
{
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_where w = { "template/a.yaml", 3, 7, "config.jobs[0].sku" };
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	(void)state;
	assert_int_equal(aj_errors_add(&e, &w, "required"), -1);
	assert_int_equal(aj_errors_add(&e, NULL, "plain %s", "message"), -1);
	assert_int_equal(aj_errors_count(&e), 2);
	aj_errors_format_all(&e, &b);
	assert_string_equal(aj_buf_cstr(&b),
			    "template/a.yaml:3:7: config.jobs[0].sku: required\n"
			    "plain message\n");
	aj_buf_release(&b);
	assert_int_equal(aj_errors_format_line(&e, &b), 0);
	assert_string_equal(aj_buf_cstr(&b),
			    "template/a.yaml:3:7: config.jobs[0].sku: required; plain message");
	aj_buf_release(&b);
	aj_errors_release(&e);
}

static void errors_remember_out_of_memory(void **state)
{
	struct aj_errors e = AJ_ERRORS_INIT;

	(void)state;
	aj_alloc_fail_after(0);
	aj_errors_add(&e, NULL, "lost");
	aj_alloc_fail_after(-1);
	assert_false(aj_errors_empty(&e));
	assert_true(aj_test_errors_contain(&e, "out of memory"));
	aj_errors_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(buf_appends_and_formats),
		cmocka_unit_test(buf_limit_fails_and_stays_failed),
		cmocka_unit_test(buf_fails_cleanly_without_memory),
		cmocka_unit_test(errors_format_file_line_path),
		cmocka_unit_test(errors_remember_out_of_memory),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
