#include "support.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kube/watch.h"

/*
 * What the API server sends over the WebSocket: one event per text message,
 * each ending with a newline (the JSON encoder's).
 */
static const char *const messages[] = {
	"{\"type\":\"ADDED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"name\":\"a\",\"resourceVersion\":\"101\"},\"data\":{\"k\":\"line\\nbreak\"}}}\n",
	"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"name\":\"a\",\"resourceVersion\":\"102\"}}}\r\n",
	"{\"type\":\"BOOKMARK\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"resourceVersion\":\"150\",\"annotations\":{\"k8s.io/initial-events-end\":\"true\"}}}}\n",
	"{\"type\":\"DELETED\",\"object\":{\"kind\":\"ConfigMap\",\"metadata\":"
	"{\"name\":\"b\",\"resourceVersion\":\"151\"}}}",
	"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"apiVersion\":\"v1\","
	"\"metadata\":{},\"status\":\"Failure\",\"message\":\"too old resource version: 1 (151)\","
	"\"reason\":\"Expired\",\"code\":410}}\n",
};
#define NR_MESSAGES (sizeof(messages) / sizeof(messages[0]))

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

	assert_true(s->nr < NR_MESSAGES);
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
		cJSON_Delete(s->kept);
		s->kept = ev->object;
		ev->object = NULL;
	}
	return (int)s->nr++ == s->fail_at ? -1 : 0;
}

static void feed_ok(struct aj_watch_decoder *d, const char *p, size_t n,
		    int first, int final, struct seen *s)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	if (aj_watch_decoder_feed(d, p, n, first, final, "test", check_event, s, &err))
		fail_msg("feed failed: %s", aj_test_errors_text(&err));
	aj_errors_release(&err);
}

static void finish(struct aj_watch_decoder *d, struct seen *s)
{
	assert_int_equal(s->nr, NR_MESSAGES);
	assert_int_equal(d->events, NR_MESSAGES);
	assert_int_equal(d->message.len, 0);
	assert_false(d->in_message);
	cJSON_Delete(s->kept);
	aj_watch_decoder_release(d);
}

static void whole_messages(void **state)
{
	struct aj_watch_decoder d;
	struct seen s = { 0, -1, NULL };
	size_t m;

	(void)state;
	aj_watch_decoder_init(&d);
	for (m = 0; m < NR_MESSAGES; m++)
		feed_ok(&d, messages[m], strlen(messages[m]), 1, 1, &s);
	finish(&d, &s);
}

/* Every message cut in two at every byte, empty pieces at both ends included. */
static void every_split_point(void **state)
{
	size_t m, i;

	(void)state;
	for (m = 0; m < NR_MESSAGES; m++) {
		size_t len = strlen(messages[m]);

		for (i = 0; i <= len; i++) {
			struct aj_watch_decoder d;
			struct seen s = { 0, -1, NULL };
			size_t k;

			aj_watch_decoder_init(&d);
			for (k = 0; k < m; k++)
				feed_ok(&d, messages[k], strlen(messages[k]), 1, 1, &s);
			feed_ok(&d, messages[m], i, 1, 0, &s);
			assert_int_equal(s.nr, m);   /* nothing before the final piece */
			feed_ok(&d, messages[m] + i, len - i, 0, 1, &s);
			assert_int_equal(s.nr, m + 1);
			for (k = m + 1; k < NR_MESSAGES; k++)
				feed_ok(&d, messages[k], strlen(messages[k]), 1, 1, &s);
			finish(&d, &s);
		}
	}
}

static void every_pair_of_split_points(void **state)
{
	const char *msg = messages[0];
	size_t len = strlen(msg), i, j;

	(void)state;
	for (i = 0; i <= len; i++)
		for (j = i; j <= len; j++) {
			struct aj_watch_decoder d;
			struct seen s = { 0, -1, NULL };
			size_t k;

			aj_watch_decoder_init(&d);
			feed_ok(&d, msg, i, 1, 0, &s);
			feed_ok(&d, msg + i, j - i, 0, 0, &s);
			feed_ok(&d, msg + j, len - j, 0, 1, &s);
			for (k = 1; k < NR_MESSAGES; k++)
				feed_ok(&d, messages[k], strlen(messages[k]), 1, 1, &s);
			finish(&d, &s);
		}
}

static void one_byte_at_a_time(void **state)
{
	struct aj_watch_decoder d;
	struct seen s = { 0, -1, NULL };
	size_t m, i;

	(void)state;
	aj_watch_decoder_init(&d);
	for (m = 0; m < NR_MESSAGES; m++) {
		size_t len = strlen(messages[m]);

		for (i = 0; i < len; i++)
			feed_ok(&d, messages[m] + i, 1, i == 0, i == len - 1, &s);
	}
	finish(&d, &s);
}

static void empty_message_is_skipped(void **state)
{
	struct aj_watch_decoder d;
	struct seen s = { 0, -1, NULL };

	(void)state;
	aj_watch_decoder_init(&d);
	feed_ok(&d, "", 0, 1, 1, &s);
	feed_ok(&d, " \r\n", 3, 1, 0, &s);
	feed_ok(&d, "", 0, 0, 1, &s);
	assert_int_equal(s.nr, 0);
	assert_int_equal(d.events, 0);
	aj_watch_decoder_release(&d);
}

static void expect_error(const char *const *pieces, const int *flags, size_t n,
			 const char *msg)
{
	struct aj_watch_decoder d;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct seen s = { 0, -1, NULL };
	size_t i;
	int ret = 0;

	aj_watch_decoder_init(&d);
	for (i = 0; i < n && !ret; i++)
		ret = aj_watch_decoder_feed(&d, pieces[i], strlen(pieces[i]), flags[i] & 1,
					    (flags[i] & 2) != 0, "watch configmaps",
					    check_event, &s, &err);
	assert_int_equal(ret, -1);
	assert_int_equal(i, n);   /* the last piece is the bad one */
	assert_true(aj_test_errors_contain(&err, "watch configmaps: "));
	if (!aj_test_errors_contain(&err, msg))
		fail_msg("expected \"%s\" in: %s", msg, aj_test_errors_text(&err));
	assert_int_equal(s.nr, 0);
	aj_errors_release(&err);
	aj_watch_decoder_release(&d);
}

static void malformed_messages_are_errors(void **state)
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
		/* Two events in one message: the server never packs them. */
		{ "{\"type\":\"ADDED\",\"object\":{}}\n{\"type\":\"ADDED\",\"object\":{}}\n",
		  "event 1: more than one JSON value in a message" },
		{ "{\"type\":\"ADDED\",\"object\":{}} x", "more than one JSON value" },
	};
	static const int whole[] = { 3 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_error(&bad[i].text, whole, 1, bad[i].msg);
}

static void framing_errors(void **state)
{
	static const char *const cont[] = { "{\"type\"" };
	static const int cont_flags[] = { 2 };
	static const char *const nested[] = { "{\"type\"", "{\"type\"" };
	static const int nested_flags[] = { 1, 1 };
	static const char *const after[] = { " \n", "x" };
	static const int after_flags[] = { 3, 0 };

	(void)state;
	expect_error(cont, cont_flags, 1, "a message piece outside any message");
	expect_error(nested, nested_flags, 2, "a message began inside another");
	expect_error(after, after_flags, 2, "a message piece outside any message");
}

static void oversized_message_is_an_error(void **state)
{
	struct aj_watch_decoder d;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct seen s = { 0, -1, NULL };
	size_t chunk = 1024u * 1024u, sent = 0;
	char *block = aj_malloc(chunk);
	int ret = 0;

	(void)state;
	assert_non_null(block);
	memset(block, ' ', chunk);
	aj_watch_decoder_init(&d);
	while (!ret && sent <= AJ_WATCH_MAX_EVENT) {
		ret = aj_watch_decoder_feed(&d, block, chunk, sent == 0, 0, "w",
					    check_event, &s, &err);
		sent += chunk;
	}
	assert_int_equal(ret, -1);
	/* Cut at the limit, not before it. */
	assert_true(sent >= AJ_WATCH_MAX_EVENT);
	assert_true(aj_test_errors_contain(&err, "w: an event is larger than 67108864 bytes"));
	aj_errors_release(&err);
	/* The decoder is ready for the next message (of a new connection). */
	aj_watch_decoder_reset(&d);
	feed_ok(&d, messages[0], strlen(messages[0]), 1, 1, &s);
	assert_int_equal(s.nr, 1);
	cJSON_Delete(s.kept);
	aj_watch_decoder_release(&d);
	aj_free(block);
}

/* A large message needs a large buffer; it is not kept afterwards. */
static void large_buffer_is_freed(void **state)
{
	struct aj_watch_decoder d;
	struct aj_buf big = AJ_BUF_INIT(AJ_BUF_LARGE);
	size_t i, n = AJ_WATCH_KEEP_BUFFER + 1000;
	struct seen s = { 0, -1, NULL };

	(void)state;
	aj_buf_addstr(&big, "{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\","
		      "\"resourceVersion\":\"101\"},\"data\":{\"k\":\"line\\nbreak\",\"big\":\"");
	for (i = 0; i < n; i++)
		aj_buf_addch(&big, 'x');
	aj_buf_addstr(&big, "\"}}}\n");
	assert_false(big.failed);
	aj_watch_decoder_init(&d);
	feed_ok(&d, big.buf, 100, 1, 0, &s);
	feed_ok(&d, big.buf + 100, big.len - 100, 0, 1, &s);
	assert_int_equal(s.nr, 1);
	assert_int_equal(strlen(str_at(s.kept, "data", "big")), n);
	assert_null(d.message.buf);
	assert_int_equal(d.message.alloc, 0);
	/* A small message keeps its buffer for the next one. */
	feed_ok(&d, messages[1], 10, 1, 0, &s);
	feed_ok(&d, messages[1] + 10, strlen(messages[1]) - 10, 0, 1, &s);
	assert_int_equal(s.nr, 2);
	assert_non_null(d.message.buf);
	cJSON_Delete(s.kept);
	aj_watch_decoder_release(&d);
	aj_buf_release(&big);
}

static void callback_refusal_stops(void **state)
{
	struct aj_watch_decoder d;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct seen s = { 0, 1, NULL };

	(void)state;
	aj_watch_decoder_init(&d);
	feed_ok(&d, messages[0], strlen(messages[0]), 1, 1, &s);
	assert_int_equal(aj_watch_decoder_feed(&d, messages[1], strlen(messages[1]), 1, 1,
					       "w", check_event, &s, &err), -1);
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
	assert_string_equal(aj_watch_type_name(AJ_WATCH_LIST), "LIST");
}

static void decoder_survives_allocation_failures(void **state)
{
	long n;

	(void)state;
	aj_alloc_hook_cjson();
	for (n = 0;; n++) {
		struct aj_watch_decoder d;
		struct aj_errors err = AJ_ERRORS_INIT;
		struct seen s = { 0, -1, NULL };
		size_t m;
		int ret = 0;

		aj_watch_decoder_init(&d);
		aj_alloc_fail_after(n);
		/* In two pieces each, so the reassembly buffer is used. */
		for (m = 0; m < NR_MESSAGES && !ret; m++) {
			size_t len = strlen(messages[m]);

			ret = aj_watch_decoder_feed(&d, messages[m], len / 2, 1, 0, "w",
						    check_event, &s, &err);
			if (!ret)
				ret = aj_watch_decoder_feed(&d, messages[m] + len / 2,
							    len - len / 2, 0, 1, "w",
							    check_event, &s, &err);
		}
		aj_alloc_fail_after(-1);
		cJSON_Delete(s.kept);
		aj_watch_decoder_release(&d);
		if (!ret) {
			assert_int_equal(s.nr, NR_MESSAGES);
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
		cmocka_unit_test(whole_messages),
		cmocka_unit_test(every_split_point),
		cmocka_unit_test(every_pair_of_split_points),
		cmocka_unit_test(one_byte_at_a_time),
		cmocka_unit_test(empty_message_is_skipped),
		cmocka_unit_test(malformed_messages_are_errors),
		cmocka_unit_test(framing_errors),
		cmocka_unit_test(oversized_message_is_an_error),
		cmocka_unit_test(large_buffer_is_freed),
		cmocka_unit_test(callback_refusal_stops),
		cmocka_unit_test(type_names),
		cmocka_unit_test(decoder_survives_allocation_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
