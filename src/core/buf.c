#include "buf.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"

void aj_buf_init(struct aj_buf *b, size_t max)
{
	b->buf = NULL;
	b->len = 0;
	b->alloc = 0;
	b->max = max;
	b->failed = 0;
}

void aj_buf_release(struct aj_buf *b)
{
	aj_free(b->buf);
	b->buf = NULL;
	b->len = 0;
	b->alloc = 0;
}

void aj_buf_reset(struct aj_buf *b)
{
	b->len = 0;
	b->failed = 0;
	if (b->buf)
		b->buf[0] = '\0';
}

static int buf_fail(struct aj_buf *b)
{
	aj_buf_release(b);
	b->failed = 1;
	return -1;
}

static int buf_reserve(struct aj_buf *b, size_t extra)
{
	size_t need;

	if (b->failed)
		return -1;
	if (extra > b->max || b->len > b->max - extra)
		return buf_fail(b);
	need = b->len + extra + 1;
	if (need > b->alloc) {
		size_t n = b->alloc ? b->alloc : 64;
		char *p;

		while (n < need)
			n = n > b->max / 2 ? b->max + 1 : n * 2;
		p = aj_realloc(b->buf, n);
		if (!p)
			return buf_fail(b);
		b->buf = p;
		b->alloc = n;
	}
	return 0;
}

int aj_buf_add(struct aj_buf *b, const void *data, size_t len)
{
	if (buf_reserve(b, len))
		return -1;
	if (len)
		memcpy(b->buf + b->len, data, len);
	b->len += len;
	b->buf[b->len] = '\0';
	return 0;
}

int aj_buf_addstr(struct aj_buf *b, const char *s)
{
	return aj_buf_add(b, s, strlen(s));
}

int aj_buf_addch(struct aj_buf *b, char c)
{
	return aj_buf_add(b, &c, 1);
}

int aj_buf_vaddf(struct aj_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	if (b->failed)
		return -1;
	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		return buf_fail(b);
	if (buf_reserve(b, (size_t)n))
		return -1;
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int aj_buf_addf(struct aj_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = aj_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

const char *aj_buf_cstr(const struct aj_buf *b)
{
	return b->buf && !b->failed ? b->buf : "";
}

char *aj_buf_detach(struct aj_buf *b, size_t *len)
{
	char *r;

	if (b->failed) {
		b->failed = 0;
		return NULL;
	}
	r = b->buf ? b->buf : aj_strdup("");
	if (len)
		*len = b->len;
	b->buf = NULL;
	b->len = 0;
	b->alloc = 0;
	return r;
}
