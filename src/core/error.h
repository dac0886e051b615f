/*
 * error.h - the error list every fallible function fills.
 *
 * Convention (after git's api-error-handling): a fallible function returns 0
 * on success or -1 on failure, and appends at least one entry to a
 * caller-provided struct aj_errors on failure. Parsers stop at the first
 * problem; conversions keep going and report every problem they find.
 *
 * An entry says where (file, line, column; any may be unknown), which key
 * (a path such as "config.jobs[0].sku"; may be empty) and what. Formatted:
 *   file:line:column: path: message
 *
 * Ownership: the list owns copies of every string given to it. If memory runs
 * out while recording, the list remembers that (oom) and formats a fixed
 * "out of memory" entry, so an error is never silently lost.
 */
#ifndef AJ_ERROR_H
#define AJ_ERROR_H

#include <stdarg.h>
#include <stddef.h>

struct aj_buf;

struct aj_error {
	char *file;     /* NULL when unknown */
	int line;       /* 1-based; 0 when unknown */
	int column;     /* 1-based; 0 when unknown */
	char *path;     /* NULL when unknown */
	char *message;
};

struct aj_errors {
	struct aj_error *items;
	size_t nr;
	size_t alloc;
	int oom;
};

#define AJ_ERRORS_INIT { NULL, 0, 0, 0 }

/* Where an error points; a struct so callers can pass a node's position. */
struct aj_where {
	const char *file;
	int line;
	int column;
	const char *path;
};

/*
 * aj_where.line (with no file) of an entry about a key itself rather than its
 * value, such as a reserved label key: whoever locates key paths
 * (pipeline.h) puts it at the key's position instead of the value's.
 */
#define AJ_WHERE_KEY (-1)

void aj_errors_init(struct aj_errors *e);
void aj_errors_release(struct aj_errors *e);

/* True when nothing has been recorded. */
int aj_errors_empty(const struct aj_errors *e);
/* Number of entries, counting an out-of-memory marker as one. */
size_t aj_errors_count(const struct aj_errors *e);

/* Append an entry; always returns -1 so callers can `return aj_errors_add(...)`. */
int aj_errors_add(struct aj_errors *e, const struct aj_where *w,
		  const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int aj_errors_vadd(struct aj_errors *e, const struct aj_where *w,
		   const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));
/* Record that memory ran out; returns -1. */
int aj_errors_oom(struct aj_errors *e);

/* Move every entry of src to the end of dst (src is left empty). */
void aj_errors_splice(struct aj_errors *dst, struct aj_errors *src);

/* Append entry i formatted as "file:line:column: path: message". */
int aj_errors_format(const struct aj_errors *e, size_t i, struct aj_buf *out);
/* Append all entries, one per line. */
int aj_errors_format_all(const struct aj_errors *e, struct aj_buf *out);
/* Append all entries on one line, joined by "; " (a status message, a reason). */
int aj_errors_format_line(const struct aj_errors *e, struct aj_buf *out);

#endif
