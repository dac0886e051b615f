/*
 * logline.c - see logline.h.
 */
#include <string.h>

#include "core/logline.h"
#include "core/timestamp.h"

void aj_logline_init(struct aj_logline *l, size_t max)
{
	memset(l, 0, sizeof(*l));
	l->max = max ? max : AJ_LOGLINE_MAX;
	aj_buf_init(&l->part, l->max + 1);
}

void aj_logline_release(struct aj_logline *l)
{
	aj_buf_release(&l->part);
}

int aj_logline_time(const char *s, size_t len, long long *sec, long *nsec)
{
	char copy[AJ_LOGLINE_TS_MAX];
	const char *dot;
	long ns = 0;
	int digits = 0;

	if (!len || len >= sizeof(copy) || memchr(s, ' ', len))
		return -1;
	memcpy(copy, s, len);
	copy[len] = '\0';
	*sec = aj_timestamp_parse(copy, 0);
	if (*sec < 0)
		return -1;
	dot = strchr(copy, '.');
	if (dot)
		for (dot++; *dot >= '0' && *dot <= '9'; dot++)
			if (digits++ < 9)
				ns = ns * 10 + (*dot - '0');
	while (digits++ < 9)
		ns *= 10;
	*nsec = ns;
	return 0;
}

static int newer(long long sec, long nsec, long long than_sec, long than_nsec)
{
	return sec > than_sec || (sec == than_sec && nsec > than_nsec);
}

/* Hand on part (a line when eol, else a piece) and empty it. */
static int emit(struct aj_logline *l, int eol, aj_logline_fn fn, void *ctx)
{
	const char *text = l->part.buf ? l->part.buf : "", *ts = NULL, *sp;
	size_t len = l->part.len, ts_len = 0;
	long long sec;
	long nsec;
	int rc = 0;

	if (!l->continued) {
		l->dropping = 0;
		sp = memchr(text, ' ', len < AJ_LOGLINE_TS_MAX ? len : AJ_LOGLINE_TS_MAX);
		if (sp && !aj_logline_time(text, (size_t)(sp - text), &sec, &nsec)) {
			ts = text;
			ts_len = (size_t)(sp - text);
			text = sp + 1;
			len -= ts_len + 1;
			if (l->skipping && !newer(sec, nsec, l->skip_sec, l->skip_nsec)) {
				l->dropping = 1;
			} else {
				l->skipping = 0;
				l->have_last = 1;
				l->last_sec = sec;
				l->last_nsec = nsec;
				memcpy(l->last, ts, ts_len);
				l->last[ts_len] = '\0';
			}
		}
	}
	/* a line that ended right at a piece boundary: nothing is left of it */
	if (!l->dropping && !(l->continued && eol && !len))
		rc = fn(ctx, ts, ts_len, text, len, eol);
	l->continued = !eol;
	aj_buf_reset(&l->part);
	return rc;
}

int aj_logline_feed(struct aj_logline *l, const char *data, size_t len,
		    aj_logline_fn fn, void *ctx)
{
	while (len) {
		const char *nl = memchr(data, '\n', len);
		size_t room = l->max - l->part.len;
		size_t n = nl ? (size_t)(nl - data) : len;

		if (n > room)
			n = room;
		if (aj_buf_add(&l->part, data, n))
			return -1;
		data += n;
		len -= n;
		if (len && *data == '\n') {
			data++;
			len--;
			if (emit(l, 1, fn, ctx))
				return -1;
		} else if (l->part.len == l->max && emit(l, 0, fn, ctx)) {
			return -1;
		}
	}
	return 0;
}

int aj_logline_flush(struct aj_logline *l, aj_logline_fn fn, void *ctx)
{
	if (!l->part.len)
		return 0;
	return emit(l, 0, fn, ctx);
}

void aj_logline_resume(struct aj_logline *l)
{
	aj_buf_reset(&l->part);
	l->continued = 0;
	l->dropping = 0;
	if (l->have_last) {
		l->skipping = 1;
		l->skip_sec = l->last_sec;
		l->skip_nsec = l->last_nsec;
	}
}

const char *aj_logline_since(const struct aj_logline *l)
{
	return l->have_last ? l->last : NULL;
}
