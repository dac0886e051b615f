#include "support.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "log.h"

static cJSON *log_one(enum aj_log_level level, const char *msg, const char *k,
		      const char *v, int *lines)
{
	char line[1024] = "";
	FILE *f = tmpfile();
	cJSON *o = NULL;

	assert_non_null(f);
	aj_log_set_stream(f);
	aj_log(level, msg, k, v, AJ_LOG_END);
	aj_log_set_stream(NULL);
	rewind(f);
	*lines = 0;
	while (fgets(line, sizeof(line), f)) {
		(*lines)++;
		o = cJSON_Parse(line);
	}
	fclose(f);
	return o;
}

static void a_line_is_one_json_object_with_level_message_and_fields(void **state)
{
	int lines;
	cJSON *o;

	(void)state;
	aj_log_set_level(AJ_LOG_INFO);
	o = log_one(AJ_LOG_WARN, "retrying \"create\"\n", "ajjob", "ns/a\tb", &lines);
	assert_int_equal(lines, 1);
	assert_non_null(o);
	assert_string_equal(cJSON_GetObjectItem(o, "level")->valuestring, "warn");
	assert_string_equal(cJSON_GetObjectItem(o, "msg")->valuestring, "retrying \"create\"\n");
	assert_string_equal(cJSON_GetObjectItem(o, "ajjob")->valuestring, "ns/a\tb");
	assert_int_equal(strlen(cJSON_GetObjectItem(o, "ts")->valuestring), 24);
	cJSON_Delete(o);
}

static void lines_below_the_level_are_dropped(void **state)
{
	int lines;
	cJSON *o;

	(void)state;
	aj_log_set_level(AJ_LOG_WARN);
	o = log_one(AJ_LOG_INFO, "quiet", "k", "v", &lines);
	assert_int_equal(lines, 0);
	assert_null(o);
	aj_log_set_level(AJ_LOG_INFO);
}

static void levels_parse_by_name(void **state)
{
	(void)state;
	assert_int_equal(aj_log_level_parse("debug"), AJ_LOG_DEBUG);
	assert_int_equal(aj_log_level_parse("error"), AJ_LOG_ERROR);
	assert_int_equal(aj_log_level_parse("verbose"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_line_is_one_json_object_with_level_message_and_fields),
		cmocka_unit_test(lines_below_the_level_are_dropped),
		cmocka_unit_test(levels_parse_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
