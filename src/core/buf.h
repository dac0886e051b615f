/*
 * buf.h - bounded, growable byte buffer (the project's string builder).
 *
 * Every buffer has a maximum size fixed at init; an append that would pass it
 * fails. On any failed append the buffer releases its memory and stays failed
 * (later appends fail too), so a caller can chain appends and check once.
 *
 * Ownership: the buffer owns b->buf until aj_buf_release() or aj_buf_detach().
 * b->buf is always NUL-terminated when b->len > 0 (NULL while empty: use
 * aj_buf_cstr() for a string that is never NULL).
 */
#ifndef AJ_BUF_H
#define AJ_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct aj_buf {
	char *buf;
	size_t len;
	size_t alloc;
	size_t max;
	int failed;
};

#define AJ_BUF_INIT(maxsize) { NULL, 0, 0, (maxsize), 0 }

/* Common limits. */
#define AJ_BUF_SMALL (64u * 1024u)
#define AJ_BUF_LARGE (64u * 1024u * 1024u)

void aj_buf_init(struct aj_buf *b, size_t max);
void aj_buf_release(struct aj_buf *b);
/* Empty the buffer but keep its memory and limit; clears a failure. */
void aj_buf_reset(struct aj_buf *b);

/* Appends return 0, or -1 (limit passed or out of memory; buffer released). */
int aj_buf_add(struct aj_buf *b, const void *data, size_t len);
int aj_buf_addstr(struct aj_buf *b, const char *s);
int aj_buf_addch(struct aj_buf *b, char c);
int aj_buf_addf(struct aj_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int aj_buf_vaddf(struct aj_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* The contents as a C string ("" when empty or failed). Owned by b. */
const char *aj_buf_cstr(const struct aj_buf *b);

/*
 * Hand the contents to the caller (who frees with aj_free) and reset b.
 * Returns an allocated "" for an empty buffer, NULL if b failed or on OOM.
 */
char *aj_buf_detach(struct aj_buf *b, size_t *len);

#endif
