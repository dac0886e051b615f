/*
 * stream.h - GETs whose body is handed over as it arrives (pod logs), many
 * at once on one thread.
 *
 * Every stream is one easy handle of one libcurl multi handle, set up as
 * the REST client's requests are (aj_kube_setup_handle: CA, client
 * certificate, bearer token) and with no overall timeout, so a followed log
 * stays open as long as the server keeps it. The body of a 2xx answer goes
 * to the stream's data callback piece by piece (libcurl's receive buffer,
 * 16 KiB, is the largest piece): nothing is collected here. Any other answer
 * keeps at most AJ_KUBE_STREAM_ERROR_BODY bytes, decoded as a Status for the
 * end callback. Memory per stream: the easy handle, its receive buffer and
 * what the callbacks keep.
 *
 * Ownership: the set owns its streams; a stream ends (its end callback is
 * called once) when the transfer finishes, and is freed after that call.
 * aj_kube_stream_close() ends one early without its end callback. The
 * paths given are copied. Not thread-safe; the client k must outlive the set.
 */
#ifndef AJ_KUBE_STREAM_H
#define AJ_KUBE_STREAM_H

#include <signal.h>
#include <stddef.h>

#include "kube/client.h"
#include "kube/status.h"

struct aj_errors;

#define AJ_KUBE_STREAM_ERROR_BODY (64u * 1024u)

/* A piece of a 2xx body. 0 to go on, -1 to end the stream (the end callback says so). */
typedef int (*aj_kube_stream_data_fn)(void *ctx, const char *data, size_t len);
/*
 * The stream ended: st->code is the HTTP code (0 for a transport failure,
 * with st->message), st->reason the decoded Status of an error answer;
 * `stopped` is set when the data callback ended it.
 */
typedef void (*aj_kube_stream_end_fn)(void *ctx, const struct aj_kube_status *st, int stopped);

struct aj_kube_stream;

struct aj_kube_streams {
	struct aj_kube *k;
	void *multi;                    /* CURLM * */
	struct aj_kube_stream *head;    /* open streams */
	size_t nr;
	volatile sig_atomic_t stop;
};

int aj_kube_streams_init(struct aj_kube_streams *s, struct aj_kube *k, struct aj_errors *err);
/* Ends every open stream without calling its end callback. */
void aj_kube_streams_release(struct aj_kube_streams *s);

/*
 * Start a GET of path (with its query, e.g. from aj_kube_path and
 * aj_kube_query) on the API server. *out (may be NULL) receives the stream
 * for aj_kube_stream_close(). 0 / -1.
 */
int aj_kube_stream_open(struct aj_kube_streams *s, const char *path,
			aj_kube_stream_data_fn data, aj_kube_stream_end_fn end, void *ctx,
			struct aj_kube_stream **out, struct aj_errors *err);
void aj_kube_stream_close(struct aj_kube_streams *s, struct aj_kube_stream *st);

/*
 * Move the streams on for up to max_ms milliseconds, calling their
 * callbacks. Returns early when no stream is open or aj_kube_streams_stop()
 * was called (checked at least every 200 ms). 0, or -1 when libcurl fails.
 */
int aj_kube_streams_run(struct aj_kube_streams *s, long max_ms, struct aj_errors *err);
/* Ask a running aj_kube_streams_run() to return; safe from a signal handler. */
void aj_kube_streams_stop(struct aj_kube_streams *s);

#endif
