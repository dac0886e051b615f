#include "support.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kube/watch.h"

/* What the API server sends: one JSON event per line (CRLF tolerated). */
static const char stream[] =
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"name\":\"a\",\"resourceVersion\":\"101\"},\"data\":{\"k\":\"line\\nbreak\"}}}\n"
	"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"name\":\"a\",\"resourceVersion\":\"102\"}}}\r\n"
	"\n"
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"resourceVersion\":\"150\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n"
	"{\"type\":\"DELETED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"name\":\"b\",\"resourceVersion\":\"151\"}}}\n"
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
	"\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: 1 (151)\","
	"\"reason\":\"Expired\",\"code\":410}}\n";

static const struct {
	enum aj_watch_type type;
	const char *id;   /* metadata.name, or the Status reason for ERROR */
	const char *rv;
} expected[] = {
	{ AJ_WATCH_ADDED, "a", "101" },
	{ AJ_WATCH_MODIFIED, "a", "102" },
	{ AJ_WATCH_BOOKMARK, NULL, "150" },
	{ AJ_WATCH_DELETED, "b", "151" },
	{ AJ_WATCH_ERROR, "Expired", NULL },
};
#define NR_EXPECTED (sizeof(expected) / sizeof(expected[0]))

struct seen {
	size_t nr;
	int fail_at;    /* return -1 on this event (-1: never) */
	cJSON *kept;    /* an object taken over from the decoder */
};

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);

	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int check_event(void *ctx, struct aj_watch_event *ev)
{
	struct seen *s = ctx;
	const char *id;

	assert_true(s->nr < NR_EXPECTED);
	assert_int_equal(ev->type, expected[s->nr].type);
	id = ev->type == AJ_WATCH_ERROR ? str_at(ev->object, "reason", NULL)
					: str_at(ev->object, "metadata", "name");
	if (expected[s->nr].id)
		assert_string_equal(id, expected[s->nr].id);
	else
		assert_null(id);
	if (expected[s->nr].rv)
		assert_string_equal(str_at(ev->object, "metadata", "resourceVersion"),
				    expected[s->nr].rv);
	if (s->nr == 0) {
		assert_string_equal(str_at(ev->object, "data", "k"), "line\nbreak");
		/* Take the first object over; the decoder must not free it. */
		s->kept = ev->object;
		ev->object = NULL;
	}
	return (int)s->nr++ == s->fail_at ? -1 : 0;
}

static void feed_ok(struct aj_watch_decoder *d, const char *p, size_t n,
		    struct seen *s)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	if (aj_watch_decoder_feed(d, p, n, "test", check_event, s, &err))
		fail_msg("feed failed: %s", aj_test_errors_text(&err));
	aj_errors_release(&err);
}

static void finish(struct aj_watch_decoder *d, struct seen *s)
{
	assert_int_equal(s->nr, NR_EXPECTED);
	assert_int_equal(d->events, NR_EXPECTED);
	assert_int_equal(d->line.len, 0);
	cJSON_Delete(s->kept);
	aj_watch_decoder_release(d);
}

static void whole_stream(void **state)
{
	struct aj_watch_decoder d;
	struct seen s = { 0, -1, NULL };

	(void)state;
	aj_watch_decoder_init(&d);
	feed_ok(&d, stream, strlen(stream), &s);
	finish(&d, &s);
}

static void every_split_point(void **state)
{
	size_t len = strlen(stream), i;

	(void)state;
	for (i = 0; i <= len; i++) {
		struct aj_watch_decoder d;
		struct seen s = { 0, -1, NULL };

		aj_watch_decoder_init(&d);
		feed_ok(&d, stream, i, &s);
		feed_ok(&d, stream + i, len - i, &s);
		finish(&d, &s);
	}
}

static void every_pair_of_split_points(void **state)
{
	size_t len = strlen(stream), i, j;

	(void)state;
	for (i = 0; i <= len; i += 3)
		for (j = i; j <= len; j += 5) {
			struct aj_watch_decoder d;
			struct seen s = { 0, -1, NULL };

			aj_watch_decoder_init(&d);
			feed_ok(&d, stream, i, &s);
			feed_ok(&d, stream + i, j - i, &s);
			feed_ok(&d, stream + j, len - j, &s);
			finish(&d, &s);
		}
}

static void one_byte_at_a_time(void **state)
{
	struct aj_watch_decoder d;
	struct seen s = { 0, -1, NULL };
	size_t i;

	(void)state;
	aj_watch_decoder_init(&d);
	for (i = 0; stream[i]; i++)
		feed_ok(&d, stream + i, 1, &s);
	finish(&d, &s);
}

static void partial_line_waits(void **state)
{
	struct aj_watch_decoder d;
	struct seen s = { 0, -1, NULL };
	const char *nl = strchr(stream, '\n');

	(void)state;
	aj_watch_decoder_init(&d);
	/* Everything of the first event but its newline: nothing yet. */
	feed_ok(&d, stream, (size_t)(nl - stream), &s);
	assert_int_equal(s.nr, 0);
	feed_ok(&d, nl, 1, &s);
	assert_int_equal(s.nr, 1);
	cJSON_Delete(s.kept);
	aj_watch_decoder_release(&d);
}

static void malformed_lines_are_errors(void **state)
{
	static const struct {
		const char *text;
		const char *msg;
	} bad[] = {
		{ "{\"type\":\"ADDED\",\"object\":{\n", "event 1: not valid JSON" },
		{ "{\"type\":\"ADDED\"}\n", "expected {\"type\": string, \"object\": object}" },
		{ "{\"type\":7,\"object\":{}}\n", "expected {\"type\": string" },
		{ "{\"type\":\"RENAMED\",\"object\":{}}\n", "event 1: unknown type \"RENAMED\"" },
		{ "[1,2]\n", "expected {\"type\"" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct aj_watch_decoder d;
		struct aj_errors err = AJ_ERRORS_INIT;
		struct seen s = { 0, -1, NULL };

		aj_watch_decoder_init(&d);
		assert_int_equal(aj_watch_decoder_feed(&d, bad[i].text, strlen(bad[i].text),
						       "watch configmaps", check_event,
						       &s, &err), -1);
		assert_true(aj_test_errors_contain(&err, "watch configmaps: "));
		if (!aj_test_errors_contain(&err, bad[i].msg))
			fail_msg("case %zu: %s", i, aj_test_errors_text(&err));
		assert_int_equal(s.nr, 0);
		aj_errors_release(&err);
		aj_watch_decoder_release(&d);
	}
}

static void callback_refusal_stops(void **state)
{
	struct aj_watch_decoder d;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct seen s = { 0, 1, NULL };

	(void)state;
	aj_watch_decoder_init(&d);
	assert_int_equal(aj_watch_decoder_feed(&d, stream, strlen(stream), "w",
					       check_event, &s, &err), -1);
	/* The second event was refused; nothing after it was delivered. */
	assert_int_equal(s.nr, 2);
	assert_true(aj_test_errors_contain(&err, "w: event 2 (MODIFIED) was not accepted"));
	aj_errors_release(&err);
	cJSON_Delete(s.kept);
	aj_watch_decoder_release(&d);
}

static void type_names(void **state)
{
	(void)state;
	assert_string_equal(aj_watch_type_name(AJ_WATCH_ADDED), "ADDED");
	assert_string_equal(aj_watch_type_name(AJ_WATCH_BOOKMARK), "BOOKMARK");
	assert_string_equal(aj_watch_type_name(AJ_WATCH_ERROR), "ERROR");
}

static void decoder_survives_allocation_failures(void **state)
{
	long n;
	size_t len = strlen(stream);

	(void)state;
	aj_alloc_hook_cjson();
	for (n = 0;; n++) {
		struct aj_watch_decoder d;
		struct aj_errors err = AJ_ERRORS_INIT;
		struct seen s = { 0, -1, NULL };
		int ret;

		aj_watch_decoder_init(&d);
		aj_alloc_fail_after(n);
		/* Split in the middle so the partial-line buffer is used. */
		ret = aj_watch_decoder_feed(&d, stream, len / 2, "w", check_event, &s, &err);
		if (!ret)
			ret = aj_watch_decoder_feed(&d, stream + len / 2, len - len / 2,
						    "w", check_event, &s, &err);
		aj_alloc_fail_after(-1);
		cJSON_Delete(s.kept);
		aj_watch_decoder_release(&d);
		if (!ret) {
			assert_int_equal(s.nr, NR_EXPECTED);
			aj_errors_release(&err);
			break;
		}
		assert_false(aj_errors_empty(&err));
		aj_errors_release(&err);
	}
	assert_true(n > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(whole_stream),
		cmocka_unit_test(every_split_point),
		cmocka_unit_test(every_pair_of_split_points),
		cmocka_unit_test(one_byte_at_a_time),
		cmocka_unit_test(partial_line_waits),
		cmocka_unit_test(malformed_lines_are_errors),
		cmocka_unit_test(callback_refusal_stops),
		cmocka_unit_test(type_names),
		cmocka_unit_test(decoder_survives_allocation_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
