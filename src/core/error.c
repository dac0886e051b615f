#include "error.h"

#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"

void aj_errors_init(struct aj_errors *e)
{
	e->items = NULL;
	e->nr = 0;
	e->alloc = 0;
	e->oom = 0;
}

static void error_release(struct aj_error *it)
{
	aj_free(it->file);
	aj_free(it->path);
	aj_free(it->message);
}

void aj_errors_release(struct aj_errors *e)
{
	size_t i;

	for (i = 0; i < e->nr; i++)
		error_release(&e->items[i]);
	aj_free(e->items);
	aj_errors_init(e);
}

int aj_errors_empty(const struct aj_errors *e)
{
	return e->nr == 0 && !e->oom;
}

size_t aj_errors_count(const struct aj_errors *e)
{
	return e->nr + (e->oom ? 1 : 0);
}

int aj_errors_oom(struct aj_errors *e)
{
	e->oom = 1;
	return -1;
}

int aj_errors_vadd(struct aj_errors *e, const struct aj_where *w,
		   const char *fmt, va_list ap)
{
	struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_error it = { NULL, 0, 0, NULL, NULL };

	if (aj_buf_vaddf(&msg, fmt, ap))
		return aj_errors_oom(e);
	it.message = aj_buf_detach(&msg, NULL);
	if (w) {
		it.line = w->line;
		it.column = w->column;
		if (w->file)
			it.file = aj_strdup(w->file);
		if (w->path)
			it.path = aj_strdup(w->path);
	}
	if (!it.message || (w && w->file && !it.file) ||
	    (w && w->path && !it.path) || AJ_GROW(e->items, e->nr + 1, e->alloc)) {
		error_release(&it);
		return aj_errors_oom(e);
	}
	e->items[e->nr++] = it;
	return -1;
}

int aj_errors_add(struct aj_errors *e, const struct aj_where *w,
		  const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	aj_errors_vadd(e, w, fmt, ap);
	va_end(ap);
	return -1;
}

void aj_errors_splice(struct aj_errors *dst, struct aj_errors *src)
{
	size_t i;

	if (src->oom)
		dst->oom = 1;
	for (i = 0; i < src->nr; i++) {
		if (AJ_GROW(dst->items, dst->nr + 1, dst->alloc)) {
			error_release(&src->items[i]);
			dst->oom = 1;
			continue;
		}
		dst->items[dst->nr++] = src->items[i];
	}
	aj_free(src->items);
	aj_errors_init(src);
}

int aj_errors_format(const struct aj_errors *e, size_t i, struct aj_buf *out)
{
	const struct aj_error *it;

	if (i >= e->nr)
		return aj_buf_addstr(out, "out of memory");
	it = &e->items[i];
	if (it->file) {
		aj_buf_addstr(out, it->file);
		if (it->line > 0) {
			aj_buf_addf(out, ":%d", it->line);
			if (it->column > 0)
				aj_buf_addf(out, ":%d", it->column);
		}
		aj_buf_addstr(out, ": ");
	}
	if (it->path && *it->path)
		aj_buf_addf(out, "%s: ", it->path);
	return aj_buf_addstr(out, it->message);
}

int aj_errors_format_all(const struct aj_errors *e, struct aj_buf *out)
{
	size_t i, n = aj_errors_count(e);

	for (i = 0; i < n; i++) {
		aj_errors_format(e, i, out);
		aj_buf_addch(out, '\n');
	}
	return out->failed ? -1 : 0;
}

int aj_errors_format_line(const struct aj_errors *e, struct aj_buf *out)
{
	size_t i, n = aj_errors_count(e);

	for (i = 0; i < n; i++) {
		if (i)
			aj_buf_addstr(out, "; ");
		aj_errors_format(e, i, out);
	}
	return out->failed ? -1 : 0;
}
