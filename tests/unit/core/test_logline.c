/*
 * Cutting pod log streams into bounded lines (core/logline.h): lines and
 * timestamps, pieces of long lines, bytes kept, and the resume after a
 * dropped stream. Every expected value is written out by hand.
 */
#include "support.h"

#include <string.h>

#include "core/logline.h"

/* What the framer handed on, one "ts|text|eol" record per call, '\n'-joined. */
struct seen {
	char out[4096];
	size_t len;
	int calls;
	int stop_at;        /* return -1 on this call (1-based); 0: never */
};

static int record(void *ctx, const char *ts, size_t ts_len, const char *text, size_t len, int eol)
{
	struct seen *s = ctx;

	s->calls++;
	if (ts) {
		memcpy(s->out + s->len, ts, ts_len);
		s->len += ts_len;
	}
	s->out[s->len++] = '|';
	memcpy(s->out + s->len, text, len);
	s->len += len;
	s->out[s->len++] = '|';
	s->out[s->len++] = eol ? '1' : '0';
	s->out[s->len++] = '\n';
	s->out[s->len] = '\0';
	return s->stop_at && s->calls == s->stop_at ? -1 : 0;
}

static void feed_str(struct aj_logline *l, struct seen *s, const char *data)
{
	assert_int_equal(aj_logline_feed(l, data, strlen(data), record, s), 0);
}

static void lines_and_timestamps(void **state)
{
	struct aj_logline l;
	struct seen s = { .len = 0 };

	(void)state;
	aj_logline_init(&l, 0);
	/* a line split across two reads, a line without a time, an empty line */
	feed_str(&l, &s, "2024-05-01T12:00:00.5Z hello wor");
	assert_int_equal(s.calls, 0);
	feed_str(&l, &s, "ld\nno time here\n\n2024-05-01T12:00:01Z x\n");
	assert_string_equal(s.out, "2024-05-01T12:00:00.5Z|hello world|1\n"
				   "|no time here|1\n"
				   "||1\n"
				   "2024-05-01T12:00:01Z|x|1\n");
	assert_string_equal(aj_logline_since(&l), "2024-05-01T12:00:01Z");
	/* an unfinished line is handed on only when the stream ends */
	feed_str(&l, &s, "2024-05-01T12:00:02Z tail");
	assert_int_equal(s.calls, 4);
	assert_int_equal(aj_logline_flush(&l, record, &s), 0);
	assert_int_equal(s.calls, 5);
	assert_non_null(strstr(s.out, "2024-05-01T12:00:02Z|tail|0\n"));
	assert_int_equal(aj_logline_flush(&l, record, &s), 0);
	assert_int_equal(s.calls, 5);
	aj_logline_release(&l);
}

static void long_lines_come_in_pieces(void **state)
{
	struct aj_logline l;
	struct seen s = { .len = 0 };

	(void)state;
	aj_logline_init(&l, 8);
	/* 8 bytes a piece: the time goes with the first piece only */
	feed_str(&l, &s, "2024-05-01T12:00:00Z ");   /* 21 bytes: cut inside the time */
	feed_str(&l, &s, "abcdefghij\n");
	assert_string_equal(s.out, "|2024-05-|0\n|01T12:00|0\n|:00Z abc|0\n|defghij|1\n");
	s.len = 0;
	s.calls = 0;
	/* a line of exactly 8 bytes is whole */
	feed_str(&l, &s, "12345678\nab\n");
	assert_string_equal(s.out, "|12345678|1\n|ab|1\n");
	s.len = 0;
	s.calls = 0;
	/* one whose newline comes after a full piece leaves no empty piece behind */
	feed_str(&l, &s, "abcdefgh");
	feed_str(&l, &s, "\nz\n");
	assert_string_equal(s.out, "|abcdefgh|0\n|z|1\n");
	assert_int_equal(s.calls, 2);
	aj_logline_release(&l);
}

static void bytes_pass_through(void **state)
{
	static const char data[] = { 'a', '\0', '\xff', '\r', 'b', '\n' };
	struct aj_logline l;
	struct seen s = { .len = 0 };

	(void)state;
	aj_logline_init(&l, 0);
	assert_int_equal(aj_logline_feed(&l, data, sizeof(data), record, &s), 0);
	assert_int_equal(s.len, 9);
	assert_memory_equal(s.out, "|a\0\xff\rb|1\n", 9);
	aj_logline_release(&l);
}

/*
 * A dropped stream is asked again from the last time seen (to the second):
 * what comes again is dropped, an unfinished line is forgotten (it comes
 * again whole), newer lines pass.
 */
static void resume_drops_what_was_shown(void **state)
{
	struct aj_logline l;
	struct seen s = { .len = 0 };

	(void)state;
	aj_logline_init(&l, 0);
	assert_null(aj_logline_since(&l));
	feed_str(&l, &s, "2024-05-01T12:00:01.100Z a\n2024-05-01T12:00:01.200Z b\n"
		 "2024-05-01T12:00:01.300Z unfinis");
	assert_int_equal(s.calls, 2);
	aj_logline_resume(&l);
	assert_string_equal(aj_logline_since(&l), "2024-05-01T12:00:01.200Z");
	s.len = 0;
	s.calls = 0;
	feed_str(&l, &s, "2024-05-01T12:00:01.100Z a\n2024-05-01T12:00:01.200000Z b\n"
		 "2024-05-01T12:00:01.300Z unfinished\n2024-05-01T12:00:02Z c\n");
	assert_string_equal(s.out, "2024-05-01T12:00:01.300Z|unfinished|1\n2024-05-01T12:00:02Z|c|1\n");
	/* once a newer line passed, older times are shown again (they are not resends) */
	feed_str(&l, &s, "2024-05-01T12:00:00Z late\n");
	assert_int_equal(s.calls, 3);
	aj_logline_release(&l);
}

static void the_callback_stops_the_feed(void **state)
{
	struct aj_logline l;
	struct seen s = { .len = 0, .stop_at = 1 };

	(void)state;
	aj_logline_init(&l, 0);
	assert_int_equal(aj_logline_feed(&l, "a\nb\n", 4, record, &s), -1);
	assert_int_equal(s.calls, 1);
	aj_logline_release(&l);
}

static void times_with_fractions(void **state)
{
	long long sec;
	long nsec;

	(void)state;
	assert_int_equal(aj_logline_time("2017-09-27T03:49:33.5Z", 22, &sec, &nsec), 0);
	assert_true(sec == 1506484173 && nsec == 500000000);
	assert_int_equal(aj_logline_time("2017-09-27T03:49:33.123456789Z", 30, &sec, &nsec), 0);
	assert_true(nsec == 123456789);
	assert_int_equal(aj_logline_time("2017-09-27T03:49:33Z", 20, &sec, &nsec), 0);
	assert_true(nsec == 0);
	assert_int_equal(aj_logline_time("2017-09-27T03:49:33Z", 19, &sec, &nsec), -1);
	assert_int_equal(aj_logline_time("hello", 5, &sec, &nsec), -1);
	assert_int_equal(aj_logline_time("", 0, &sec, &nsec), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(lines_and_timestamps),
		cmocka_unit_test(long_lines_come_in_pieces),
		cmocka_unit_test(bytes_pass_through),
		cmocka_unit_test(resume_drops_what_was_shown),
		cmocka_unit_test(the_callback_stops_the_feed),
		cmocka_unit_test(times_with_fractions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
