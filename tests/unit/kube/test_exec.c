/*
 * The exec channel framing (kube/exec.c, pure part): message encoding, the
 * decoder fed messages cut at every possible place (including empty
 * pieces and the stream byte alone), v5 close messages, protocol errors,
 * and the final Status. Expected bytes are written out by hand from the
 * protocol (stream byte, then payload).
 */
#include "support.h"

#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/exec.h"

struct collected {
	struct aj_buf stream[6];  /* 0-4, and [5] for closes */
	int messages;
	int fail_on;              /* stream whose data makes the sink fail, or -1 */
};

static int collect(void *data, int stream, const void *buf, size_t len, int end,
		   struct aj_errors *err)
{
	struct collected *c = data;

	if (stream == c->fail_on)
		return aj_errors_add(err, NULL, "sink refused stream %d", stream);
	aj_buf_add(&c->stream[stream == AJ_EXEC_CLOSE ? 5 : stream], buf, len);
	if (end)
		c->messages++;
	return 0;
}

static void collected_init(struct collected *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < 6; i++)
		aj_buf_init(&c->stream[i], AJ_BUF_SMALL);
	c->fail_on = -1;
}

static void collected_release(struct collected *c)
{
	size_t i;

	for (i = 0; i < 6; i++)
		aj_buf_release(&c->stream[i]);
}

static void frames(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	(void)state;
	assert_int_equal(aj_exec_frame(&b, AJ_EXEC_STDIN, "abc", 3), 0);
	assert_int_equal(b.len, 4);
	assert_memory_equal(b.buf, "\0abc", 4);
	aj_buf_reset(&b);
	assert_int_equal(aj_exec_frame(&b, AJ_EXEC_CLOSE, "\0", 1), 0);
	assert_int_equal(b.len, 2);
	assert_memory_equal(b.buf, "\xff\0", 2);
	aj_buf_reset(&b);
	assert_int_equal(aj_exec_frame(&b, AJ_EXEC_RESIZE, NULL, 0), 0);
	assert_int_equal(b.len, 1);
	assert_int_equal((unsigned char)b.buf[0], 4);
	aj_buf_release(&b);
}

/* Feed msg as pieces [0,i) [i,j) [j,len): every i <= j, so empty pieces too. */
static void every_split(const char *msg, size_t len, int v5, int stream, const char *payload,
			size_t plen)
{
	size_t i, j;

	for (i = 0; i <= len; i++) {
		for (j = i; j <= len; j++) {
			struct aj_errors err = AJ_ERRORS_INIT;
			struct aj_exec_decoder d;
			struct collected c;
			int slot = stream == AJ_EXEC_CLOSE ? 5 : stream;

			collected_init(&c);
			aj_exec_decoder_init(&d, v5, collect, &c);
			assert_int_equal(aj_exec_decode(&d, msg, i, 1, 0, &err), 0);
			assert_int_equal(aj_exec_decode(&d, msg + i, j - i, 0, 0, &err), 0);
			assert_int_equal(aj_exec_decode(&d, msg + j, len - j, 0, 1, &err), 0);
			assert_int_equal(c.messages, 1);
			assert_int_equal(c.stream[slot].len, plen);
			if (plen)
				assert_memory_equal(c.stream[slot].buf, payload, plen);
			assert_int_equal(aj_errors_count(&err), 0);
			collected_release(&c);
		}
	}
}

static void decode_split_anywhere(void **state)
{
	(void)state;
	every_split("\x01hello, world", 13, 1, AJ_EXEC_STDOUT, "hello, world", 12);
	every_split("\x02" "oops\n", 6, 0, AJ_EXEC_STDERR, "oops\n", 5);
	every_split("\x03{\"status\":\"Success\"}", 21, 1, AJ_EXEC_ERROR, "{\"status\":\"Success\"}", 20);
	every_split("\x01", 1, 1, AJ_EXEC_STDOUT, "", 0);
	every_split("\xff\x00", 2, 1, AJ_EXEC_CLOSE, "\0", 1);
	every_split("\x01\xff\x00\x01", 4, 0, AJ_EXEC_STDOUT, "\xff\x00\x01", 3);
}

/* Several messages back to back, each in one piece, go to their streams in order. */
static void decode_sequence(void **state)
{
	static const struct { const char *m; size_t len; } seq[] = {
		{ "\x01" "a", 2 }, { "\x02" "E", 2 }, { "\x01" "bc", 3 }, { "\x01", 1 },
		{ "\xff\x01", 2 }, { "\x03{}", 3 },
	};
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_decoder d;
	struct collected c;
	size_t i;

	(void)state;
	collected_init(&c);
	aj_exec_decoder_init(&d, 1, collect, &c);
	for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
		assert_int_equal(aj_exec_decode(&d, seq[i].m, seq[i].len, 1, 1, &err), 0);
	assert_int_equal(c.messages, 6);
	assert_string_equal(aj_buf_cstr(&c.stream[1]), "abc");
	assert_string_equal(aj_buf_cstr(&c.stream[2]), "E");
	assert_string_equal(aj_buf_cstr(&c.stream[3]), "{}");
	assert_int_equal(c.stream[5].len, 1);
	assert_int_equal(c.stream[5].buf[0], 1);
	collected_release(&c);
}

static void decode_fails(int v5, const char *a, size_t alen, int afirst, int afinal,
			 const char *b, size_t blen, int bfirst, int bfinal, int fail_on,
			 const char *fragment)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_decoder d;
	struct collected c;
	int rc;

	collected_init(&c);
	c.fail_on = fail_on;
	aj_exec_decoder_init(&d, v5, collect, &c);
	rc = aj_exec_decode(&d, a, alen, afirst, afinal, &err);
	if (!rc && b)
		rc = aj_exec_decode(&d, b, blen, bfirst, bfinal, &err);
	assert_int_equal(rc, -1);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got:\n%s", fragment, aj_test_errors_text(&err));
	aj_errors_release(&err);
	collected_release(&c);
}

static void decode_errors(void **state)
{
	(void)state;
	decode_fails(1, "\x07x", 2, 1, 1, NULL, 0, 0, 0, -1, "exec stream: unknown stream 7");
	/* 255 is a stream only in v5 */
	decode_fails(0, "\xff\x00", 2, 1, 1, NULL, 0, 0, 0, -1, "unknown stream 255");
	decode_fails(1, "x", 1, 0, 1, NULL, 0, 0, 0, -1, "a message piece outside any message");
	decode_fails(1, "\x01" "a", 2, 1, 0, "\x01" "b", 2, 1, 1, -1, "a message began inside another");
	decode_fails(1, "", 0, 1, 0, "", 0, 0, 1, -1, "exec stream: an empty message");
	decode_fails(1, "\x02" "boom", 5, 1, 1, NULL, 0, 0, 0, AJ_EXEC_STDERR, "sink refused stream 2");
}

static int status_of(const char *json, int *code, struct aj_errors *err)
{
	return aj_exec_status_parse(json, strlen(json), code, err);
}

static void status(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	int code = 99;

	(void)state;
	assert_int_equal(status_of("{\"metadata\":{},\"status\":\"Success\"}", &code, &err), 0);
	assert_int_equal(code, 0);
	assert_int_equal(status_of("{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
				   "\"message\":\"command terminated with non-zero exit code\","
				   "\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":\"3\"}]}}",
				   &code, &err), 0);
	assert_int_equal(code, 3);
	assert_int_equal(status_of("{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
				   "\"details\":{\"causes\":[{\"reason\":\"Other\",\"message\":\"9\"},"
				   "{\"reason\":\"ExitCode\",\"message\":\"255\"}]}}", &code, &err), 0);
	assert_int_equal(code, 255);
	assert_int_equal(aj_errors_count(&err), 0);

	assert_int_equal(status_of("{\"status\":\"Failure\",\"reason\":\"InternalError\","
				   "\"message\":\"container not found (\\\"upload\\\")\"}", &code, &err), -1);
	assert_true(aj_test_errors_contain(&err, "exec failed: container not found (\"upload\")"));
	assert_int_equal(status_of("{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
				   "\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":\"3x\"}]}}",
				   &code, &err), -1);
	assert_true(aj_test_errors_contain(&err, "non-zero exit without a valid exit code"));
	assert_int_equal(status_of("{\"status\":\"Failure\",\"reason\":\"NonZeroExitCode\","
				   "\"details\":{\"causes\":[{\"reason\":\"ExitCode\",\"message\":\"0\"}]}}",
				   &code, &err), -1);
	assert_int_equal(status_of("{\"status\":", &code, &err), -1);
	assert_true(aj_test_errors_contain(&err, "the command's status is not JSON"));
	aj_errors_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(frames),
		cmocka_unit_test(decode_split_anywhere),
		cmocka_unit_test(decode_sequence),
		cmocka_unit_test(decode_errors),
		cmocka_unit_test(status),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
