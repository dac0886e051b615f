/*
 * watch.h - Kubernetes watches: the event decoder and a loop that keeps
 * several list-then-watch streams alive on one libwebsockets event loop.
 *
 * Transport: each watch stream is a WebSocket (GET ...?watch=1 upgraded),
 * on which kube-apiserver sends every event as one text message
 * {"type": ..., "object": ...}. A message may arrive in several pieces
 * (WebSocket fragments, or a frame larger than the receive buffer); the
 * decoder reassembles the pieces and parses each message once.
 *
 * Loop: each watch lists first (through the REST client, all pages) and
 * hands each page to its callback, then watches from the list's
 * resourceVersion with bookmarks on and a timeoutSeconds drawn from
 * [min_timeout, max_timeout) (5-10 minutes by default, as client-go). The
 * resourceVersion follows every event and bookmark, so a stream that ends is
 * resumed where it stopped. "Too old" (HTTP 410, or an ERROR event with
 * code 410 / reason Expired) relists. Failures wait a jittered exponential
 * backoff (ratelimit.h). A stream that stays silent past its timeout plus
 * 30 s is treated as dead. All streams are connections of one lws context
 * (ws.h: TLS material and token shared with exec), so the one thread that
 * calls aj_watch_loop_run() drives every watch. Callbacks run on that
 * thread and may use the REST client (a separate libcurl handle) freely.
 *
 * Ownership: callbacks get events whose object they may keep by setting
 * ev->object to NULL (it is then theirs to cJSON_Delete). The loop copies
 * every string of the refs and options given to aj_watch_add().
 */
#ifndef AJ_KUBE_WATCH_H
#define AJ_KUBE_WATCH_H

#include <signal.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "kube/client.h"
#include "kube/ratelimit.h"

struct aj_errors;

enum aj_watch_type {
	AJ_WATCH_ADDED,
	AJ_WATCH_MODIFIED,
	AJ_WATCH_DELETED,
	AJ_WATCH_BOOKMARK,
	AJ_WATCH_ERROR,     /* object is a Status */
	AJ_WATCH_LIST       /* loop only: one page of a fresh list (object = the List page) */
};

struct aj_watch_event {
	enum aj_watch_type type;
	cJSON *object;
	/*
	 * AJ_WATCH_LIST comes one page at a time, so a large collection is
	 * never held whole: `first` marks the first page of a list, `last` its
	 * final one (both set for a one-page list).
	 */
	int first;
	int last;
};

const char *aj_watch_type_name(enum aj_watch_type t);

/* 0 to go on; -1 to stop (the decoder fails, the loop relists). */
typedef int (*aj_watch_fn)(void *ctx, struct aj_watch_event *ev);

/* --- decoder --- */

#define AJ_WATCH_MAX_EVENT AJ_BUF_LARGE
/* A reassembly buffer grown past this is freed once its message is decoded. */
#define AJ_WATCH_KEEP_BUFFER (256u * 1024u)

struct aj_watch_decoder {
	struct aj_buf message;   /* pieces of the unfinished message */
	int in_message;          /* a message began and has not ended */
	unsigned long events;    /* events decoded so far */
};

void aj_watch_decoder_init(struct aj_watch_decoder *d);
void aj_watch_decoder_release(struct aj_watch_decoder *d);
/* Forget an unfinished message (a new connection starts). */
void aj_watch_decoder_reset(struct aj_watch_decoder *d);

/*
 * Feed one piece of a message: `first` marks the piece that starts a
 * message, `final` the one that ends it (a message may come in any number
 * of pieces, empty ones included). When a message is complete it is decoded
 * (one JSON object, trailing whitespace allowed; an empty message is
 * skipped) and fn is called. -1 on a piece that continues no message or
 * starts one inside another, invalid JSON, more than one value, an unknown
 * type, a message over AJ_WATCH_MAX_EVENT, OOM, or when fn returns -1 (err
 * says which; origin names the stream in messages).
 */
int aj_watch_decoder_feed(struct aj_watch_decoder *d, const char *data,
			  size_t len, int first, int final, const char *origin,
			  aj_watch_fn fn, void *ctx, struct aj_errors *err);

/* --- loop --- */

#define AJ_WATCH_MIN_TIMEOUT 300
#define AJ_WATCH_MAX_TIMEOUT 600

struct aj_watch;
struct aj_watch_io;

struct aj_watch_loop {
	struct aj_kube *k;          /* config, token, REST client for lists */
	struct aj_watch_io *io;     /* the lws context and its timer (watch.c) */
	struct aj_watch **watches;
	size_t nr, alloc;
	long min_timeout, max_timeout;  /* seconds; tests shorten them */
	volatile sig_atomic_t stop;
	unsigned long long seed;        /* random source for timeouts */
	/*
	 * Failures the loop retries by itself are reported here (NULL: not),
	 * with the ctx given to aj_watch_add() for the watch concerned.
	 */
	void (*log)(void *log_ctx, void *watch_ctx, const char *message);
	void *log_ctx;
};

/*
 * k must outlive the loop. Sets up the lws context with k's TLS material:
 * unreadable CA, certificate or key files fail here. 0 / -1.
 */
int aj_watch_loop_init(struct aj_watch_loop *l, struct aj_kube *k,
		       struct aj_errors *err);
void aj_watch_loop_release(struct aj_watch_loop *l);

/*
 * Add a watch on ref's collection (ref->name must be NULL), filtered by
 * o's selectors (other fields of o are ignored). It starts on the next
 * aj_watch_loop_run(). 0 / -1.
 */
int aj_watch_add(struct aj_watch_loop *l, const struct aj_kube_ref *ref,
		 const struct aj_kube_list_opts *o, aj_watch_fn fn, void *ctx,
		 struct aj_errors *err);

/*
 * Run until aj_watch_loop_stop() or until max_ms milliseconds have passed
 * (max_ms < 0: no limit). Returns 0 when stopped or out of time, -1 on an
 * error the loop cannot retry (OOM, the event loop failing).
 */
int aj_watch_loop_run(struct aj_watch_loop *l, long max_ms,
		      struct aj_errors *err);

/*
 * Ask a running loop to return; safe from a signal handler or thread. The
 * loop looks at the flag at least every 500 ms.
 */
void aj_watch_loop_stop(struct aj_watch_loop *l);

/* The resourceVersion watch i resumes from ("" before its first list). */
const char *aj_watch_resource_version(const struct aj_watch_loop *l, size_t i);
/* How many times watch i listed and (re)started its stream. */
unsigned long aj_watch_lists(const struct aj_watch_loop *l, size_t i);
unsigned long aj_watch_streams(const struct aj_watch_loop *l, size_t i);

#endif
