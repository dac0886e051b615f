/*
 * logline.h - cut a container log stream into lines, bounded.
 *
 * The API server sends a pod's log as bytes (timestamps=true puts an RFC
 * 3339 time and a space before each line). The CLI merges many streams line
 * by line, so each stream is cut at newlines here; a line longer than
 * AJ_LOGLINE_MAX (a 10 MB line without a newline, binary output) is handed
 * on in pieces of that size, so a stream never holds more than that. Bytes
 * are passed through as they are (NUL and invalid UTF-8 included).
 *
 * Resuming a stream that dropped: the caller asks again from the newest
 * time seen (sinceTime, which the API server reads to the second), and the
 * framer drops the lines that are not newer than the last one it handed on,
 * so no line is shown twice.
 *
 * Pure: no I/O. Ownership: the framer owns its buffer (aj_logline_release);
 * the pieces handed to the callback live only during the call.
 */
#ifndef AJ_CORE_LOGLINE_H
#define AJ_CORE_LOGLINE_H

#include <stddef.h>

#include "core/buf.h"

#define AJ_LOGLINE_MAX (64u * 1024u)
/* "2024-05-01T12:00:00.123456789+00:00" fits, with room. */
#define AJ_LOGLINE_TS_MAX 48

/*
 * One line, or one piece of a long line. ts: its timestamp (without the
 * space), NULL when the stream has none or for the pieces after the first;
 * eol: text ends its line (the '\n' itself is not in text). 0 to go on, -1
 * to stop feeding.
 */
typedef int (*aj_logline_fn)(void *ctx, const char *ts, size_t ts_len,
			     const char *text, size_t len, int eol);

struct aj_logline {
	struct aj_buf part;       /* the unfinished line, at most max bytes */
	size_t max;
	int continued;            /* part continues a line already handed on in part */
	int dropping;             /* the current line is dropped (not newer than skip) */
	int have_last, skipping;
	long long last_sec, skip_sec;   /* newest time handed on; resume point */
	long last_nsec, skip_nsec;
	char last[AJ_LOGLINE_TS_MAX];   /* newest time handed on, as sent */
};

/* max 0: AJ_LOGLINE_MAX. */
void aj_logline_init(struct aj_logline *l, size_t max);
void aj_logline_release(struct aj_logline *l);

/* Feed bytes; fn is called for every finished line or full piece. 0 / -1 (fn's -1, or OOM). */
int aj_logline_feed(struct aj_logline *l, const char *data, size_t len,
		    aj_logline_fn fn, void *ctx);
/* The stream ended: hand on an unfinished line (eol 0). 0 / -1. */
int aj_logline_flush(struct aj_logline *l, aj_logline_fn fn, void *ctx);
/*
 * The stream dropped and is asked again from aj_logline_since(): forget the
 * unfinished line and drop what comes again up to the last time handed on.
 */
void aj_logline_resume(struct aj_logline *l);
/* The newest timestamp handed on, as the server wrote it, or NULL. */
const char *aj_logline_since(const struct aj_logline *l);

/*
 * Parse an RFC 3339 time with up to nine fraction digits into seconds and
 * nanoseconds. 0, or -1 when s[0..len) is not one.
 */
int aj_logline_time(const char *s, size_t len, long long *sec, long *nsec);

#endif
