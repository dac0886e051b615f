/*
 * RFC 3339 times as Kubernetes and Azure write them. 1506484173 is
 * 2017-09-27T03:49:33Z (date -u -d @1506484173).
 */
#include "support.h"

#include <stdlib.h>
#include <time.h>

#include "core/timestamp.h"

static void utc_times_parse(void **state)
{
	(void)state;
	assert_true(aj_timestamp_parse("2017-09-27T03:49:33Z", 0) == 1506484173);
	assert_true(aj_timestamp_parse("2017-09-27T03:49:33.123456Z", 0) == 1506484173);
	assert_true(aj_timestamp_parse("2017-09-27 03:49:33+00:00", 0) == 1506484173);
	assert_true(aj_timestamp_parse("1970-01-01T00:00:00Z", 0) == 0);
	assert_true(aj_timestamp_parse("2000-02-29T23:59:59Z", 0) == 951868799);
}

static void other_text_is_refused(void **state)
{
	static const char *const bad[] = {
		NULL, "", "soon", "2017-09-27", "2017-09-27T03:49:3Z", "2017-9-27T03:49:33Z",
		" 2017-09-27T03:49:33Z", "2017-09-27T+3:49:33Z", "2017-09-27X03:49:33Z",
		"2017-09-27T03:49:33+02:00", "2017-09-27T03:49:33Zjunk", "2017-09-27T03:49:33z",
		"2017-09-27T03:49:33", "2017-09-27T03:49:33.Z5",
	};

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (aj_timestamp_parse(bad[i], 0) != -1)
			fail_msg("accepted \"%s\"", bad[i] ? bad[i] : "(null)");
}

/* The Azure CLI's expiresOn has no zone: local time, only when asked for. */
static void local_time_when_allowed(void **state)
{
	(void)state;
	assert_int_equal(setenv("TZ", "UTC+2", 1), 0);   /* two hours behind UTC */
	tzset();
	assert_true(aj_timestamp_parse("2017-09-27 01:49:33.000000", 1) == 1506484173);
	assert_true(aj_timestamp_parse("2017-09-27 01:49:33.000000", 0) == -1);
	assert_true(aj_timestamp_parse("2017-09-27T03:49:33Z", 1) == 1506484173);
}

static void times_format_as_utc(void **state)
{
	char out[AJ_TIMESTAMP_SIZE];

	(void)state;
	aj_timestamp_format(1506484173, out);
	assert_string_equal(out, "2017-09-27T03:49:33Z");
	aj_timestamp_format(0, out);
	assert_string_equal(out, "1970-01-01T00:00:00Z");
	aj_timestamp_format(253402300799, out);
	assert_string_equal(out, "9999-12-31T23:59:59Z");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(utc_times_parse),
		cmocka_unit_test(other_text_is_refused),
		cmocka_unit_test(local_time_when_allowed),
		cmocka_unit_test(times_format_as_utc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
