#include "watch.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <libwebsockets.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kube/ws.h"

/* The longest the loop sleeps before it looks at stop flags and due watches. */
#define TICK_MS 500
/* Each connection's receive buffer; larger messages come in pieces. */
#define RX_BUFFER (16u * 1024u)
/* A stream silent for its timeoutSeconds plus this is dead. */
#define DEAD_GRACE 30

/* What to do when a stream has ended. */
enum restart {
	RESTART_RESUME,        /* watch again from the last resourceVersion */
	RESTART_RESUME_LATER,  /* the same, after a backoff */
	RESTART_RELIST,        /* the version is too old: list again now */
	RESTART_RELIST_LATER   /* list again after a backoff */
};

struct aj_watch_io {
	/*
	 * First member: the timer callback finds the rest from it. It is
	 * always pending, so lws never sleeps past TICK_MS.
	 */
	lws_sorted_usec_list_t tick;
	struct lws_context *ctx;
	struct aj_ws_server server;
};

struct aj_watch {
	struct aj_watch_loop *loop;
	struct aj_kube_resource res;
	char *group, *version, *plural, *ns;
	char *label_selector, *field_selector;
	char *origin;                 /* "watch configmaps in namespace x" */
	aj_watch_fn fn;
	void *ctx;

	struct lws *wsi;              /* the stream's connection; NULL when none */
	struct aj_watch_decoder dec;
	struct aj_backoff backoff;

	char *rv;                     /* resume point; "" before the first list */
	int listed;                   /* a list succeeded at least once */
	int streaming;                /* started, its end not handled yet */
	int established;              /* the upgrade succeeded */
	int peer_closed;              /* the server closed the stream in order */
	int dead;                     /* silent too long: the loop closes it */
	int ended;                    /* the stream must end; restart says how */
	enum restart restart;
	long timeout;                 /* this stream's timeoutSeconds */
	double due;                   /* monotonic time of the next start */
	double started;               /* when the stream began */
	double last_rx;               /* when it last received anything */
	unsigned long stream_events;
	unsigned long lists, streams;
};

static void wlog(struct aj_watch *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void wlog(struct aj_watch *w, const char *fmt, ...)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	va_list ap;

	if (!w->loop->log)
		return;
	aj_buf_addf(&b, "%s: ", w->origin);
	va_start(ap, fmt);
	aj_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	w->loop->log(w->loop->log_ctx, w->ctx, aj_buf_cstr(&b));
	aj_buf_release(&b);
}

/* Log every entry of e, then empty it. */
static void wlog_errors(struct aj_watch *w, struct aj_errors *e)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i;

	for (i = 0; i < aj_errors_count(e); i++) {
		aj_buf_reset(&b);
		aj_errors_format(e, i, &b);
		wlog(w, "%s", aj_buf_cstr(&b));
	}
	aj_buf_release(&b);
	aj_errors_release(e);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason,
		    void *user, void *in, size_t len);

static const struct lws_protocols protocols[] = {
	{ "aj-watch", callback, 0, RX_BUFFER, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void tick(lws_sorted_usec_list_t *sul)
{
	struct aj_watch_io *io = (struct aj_watch_io *)(void *)sul;

	lws_sul_schedule(io->ctx, 0, &io->tick, tick, TICK_MS * LWS_US_PER_MS);
}

int aj_watch_loop_init(struct aj_watch_loop *l, struct aj_kube *k,
		       struct aj_errors *err)
{
	struct aj_watch_io *io;

	memset(l, 0, sizeof(*l));
	l->k = k;
	l->min_timeout = AJ_WATCH_MIN_TIMEOUT;
	l->max_timeout = AJ_WATCH_MAX_TIMEOUT;
	l->seed = aj_random_seed();
	io = aj_calloc(1, sizeof(*io));
	if (!io)
		return aj_errors_oom(err);
	if (aj_ws_server_parse(&k->cfg, "watch", &io->server, err) ||
	    !(io->ctx = aj_ws_context_new(&k->cfg, &io->server, protocols, "watch", err))) {
		aj_free(io);
		return -1;
	}
	tick(&io->tick);
	l->io = io;
	return 0;
}

static void watch_free(struct aj_watch *w)
{
	aj_watch_decoder_release(&w->dec);
	aj_free(w->group);
	aj_free(w->version);
	aj_free(w->plural);
	aj_free(w->ns);
	aj_free(w->label_selector);
	aj_free(w->field_selector);
	aj_free(w->origin);
	aj_free(w->rv);
	aj_free(w);
}

void aj_watch_loop_release(struct aj_watch_loop *l)
{
	size_t i;

	if (l->io) {
		/* Closing now is ours: the callbacks must not see the watches. */
		for (i = 0; i < l->nr; i++)
			if (l->watches[i]->wsi)
				lws_set_opaque_user_data(l->watches[i]->wsi, NULL);
		lws_sul_cancel(&l->io->tick);
		lws_context_destroy(l->io->ctx);
		aj_free(l->io);
	}
	for (i = 0; i < l->nr; i++)
		watch_free(l->watches[i]);
	aj_free(l->watches);
	memset(l, 0, sizeof(*l));
}

void aj_watch_loop_stop(struct aj_watch_loop *l)
{
	l->stop = 1;
}

static int dup_opt(char **dst, const char *s)
{
	*dst = NULL;
	if (!s)
		return 0;
	*dst = aj_strdup(s);
	return *dst ? 0 : -1;
}

int aj_watch_add(struct aj_watch_loop *l, const struct aj_kube_ref *ref,
		 const struct aj_kube_list_opts *o, aj_watch_fn fn, void *ctx,
		 struct aj_errors *err)
{
	struct aj_watch *w = aj_calloc(1, sizeof(*w));
	struct aj_buf origin = AJ_BUF_INIT(AJ_BUF_SMALL);

	if (!w)
		return aj_errors_oom(err);
	w->loop = l;
	w->fn = fn;
	w->ctx = ctx;
	aj_watch_decoder_init(&w->dec);
	aj_backoff_init(&w->backoff, NULL, NULL, NULL, NULL);
	aj_kube_describe(&origin, "watch", ref);
	w->origin = aj_buf_detach(&origin, NULL);
	if (!w->origin || dup_opt(&w->group, ref->res->group) ||
	    dup_opt(&w->version, ref->res->version) ||
	    dup_opt(&w->plural, ref->res->plural) || dup_opt(&w->ns, ref->ns) ||
	    dup_opt(&w->label_selector, o ? o->label_selector : NULL) ||
	    dup_opt(&w->field_selector, o ? o->field_selector : NULL) ||
	    dup_opt(&w->rv, "") || AJ_GROW(l->watches, l->nr + 1, l->alloc)) {
		watch_free(w);
		return aj_errors_oom(err);
	}
	w->res.group = w->group;
	w->res.version = w->version;
	w->res.plural = w->plural;
	w->res.namespaced = ref->res->namespaced;
	w->due = aj_monotonic_now(NULL);
	l->watches[l->nr++] = w;
	return 0;
}

const char *aj_watch_resource_version(const struct aj_watch_loop *l, size_t i)
{
	return i < l->nr ? l->watches[i]->rv : NULL;
}

unsigned long aj_watch_lists(const struct aj_watch_loop *l, size_t i)
{
	return i < l->nr ? l->watches[i]->lists : 0;
}

unsigned long aj_watch_streams(const struct aj_watch_loop *l, size_t i)
{
	return i < l->nr ? l->watches[i]->streams : 0;
}

static int set_rv(struct aj_watch *w, const cJSON *obj)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	char *copy;

	if (!cJSON_IsString(rv) || !*rv->valuestring)
		return 0;
	copy = aj_strdup(rv->valuestring);
	if (!copy)
		return -1;
	aj_free(w->rv);
	w->rv = copy;
	return 0;
}

static void schedule(struct aj_watch *w, enum restart r, long retry_after)
{
	double now = aj_monotonic_now(NULL), delay = 0;

	if (r == RESTART_RESUME_LATER || r == RESTART_RELIST_LATER) {
		delay = aj_backoff_next(&w->backoff);
		if (retry_after > 0 && (double)retry_after > delay)
			delay = (double)retry_after;
	}
	if (r == RESTART_RELIST || r == RESTART_RELIST_LATER)
		w->listed = 0;
	w->due = now + delay;
}

/* A List's continue token, or NULL on its last page. */
static const char *page_continue(const cJSON *list)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(list, "metadata"), "continue");

	return cJSON_IsString(c) && *c->valuestring ? c->valuestring : NULL;
}

/*
 * List page by page, handing each page to the callback as it arrives (the
 * continue token pins one consistent snapshot), so memory holds one page.
 */
static int do_list(struct aj_watch *w)
{
	struct aj_kube_ref ref = { &w->res, w->ns, NULL, NULL };
	struct aj_kube_list_opts o = { 0 };
	struct aj_kube_status st;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_watch_event ev = { AJ_WATCH_LIST, NULL, 1, 0 };
	char *cont = NULL;
	int ret = 0;

	o.label_selector = w->label_selector;
	o.field_selector = w->field_selector;
	o.limit = 500;
	/*
	 * Never resourceVersion=0: the watch cache answers that with every
	 * object at once, ignoring the limit (136 MB for 10,000 Volcano Jobs).
	 */
	o.resource_version = "";
	w->lists++;
	do {
		aj_kube_status_init(&st);
		if (aj_kube_list(w->loop->k, &ref, &o, &ev.object, &st, &err)) {
			wlog_errors(w, &err);
			schedule(w, RESTART_RELIST_LATER, st.retry_after);
			aj_kube_status_release(&st);
			aj_free(cont);
			return -1;
		}
		aj_kube_status_release(&st);
		aj_free(cont);
		cont = page_continue(ev.object) ? aj_strdup(page_continue(ev.object)) : NULL;
		ev.last = !page_continue(ev.object);
		if ((!ev.last && !cont) || (ev.last && set_rv(w, ev.object))) {
			cJSON_Delete(ev.object);
			aj_free(cont);
			wlog(w, "out of memory; listing again");
			schedule(w, RESTART_RELIST_LATER, -1);
			return -1;
		}
		ret = w->fn(w->ctx, &ev);
		cJSON_Delete(ev.object);
		ev.object = NULL;
		ev.first = 0;
		/* Later pages must not repeat the version: the token pins it. */
		o.resource_version = NULL;
		o.continue_token = cont;
	} while (!ret && cont);
	aj_free(cont);
	if (ret) {
		wlog(w, "the list was not accepted; listing again");
		schedule(w, RESTART_RELIST_LATER, -1);
		return -1;
	}
	w->listed = 1;
	return 0;
}

/*
 * The stream is over: forget its state and plan the next one (a refused
 * upgrade has no Retry-After to honour: lws keeps no headers of it).
 */
static void stream_end(struct aj_watch *w, enum restart r)
{
	w->streaming = 0;
	aj_watch_decoder_reset(&w->dec);
	schedule(w, r, -1);
}

static int start_stream(struct aj_watch *w, struct aj_errors *err)
{
	struct aj_watch_loop *l = w->loop;
	struct aj_kube_ref ref = { &w->res, w->ns, NULL, NULL };
	struct aj_kube_list_opts o = { 0 };
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_errors tok = AJ_ERRORS_INIT;
	long span = l->max_timeout - l->min_timeout;
	int changed;

	o.label_selector = w->label_selector;
	o.field_selector = w->field_selector;
	o.resource_version = w->rv;
	o.timeout_seconds = l->min_timeout +
		(span > 0 ? (long)(aj_random_next(&l->seed) % (unsigned long long)span) : 0);
	if (aj_kube_path(&path, &ref) || aj_kube_list_query(&path, &o) ||
	    aj_kube_query(&path, "watch", "1") ||
	    aj_kube_query(&path, "allowWatchBookmarks", "true")) {
		aj_buf_release(&path);
		return aj_errors_oom(err);
	}
	/* A rotated token (in-cluster) is picked up by the next handshake. */
	if (aj_kube_token_refresh(l->k, 0, &changed, &tok))
		wlog_errors(w, &tok);
	aj_errors_release(&tok);
	aj_watch_decoder_reset(&w->dec);
	w->established = w->peer_closed = w->dead = w->ended = 0;
	w->stream_events = 0;
	w->timeout = o.timeout_seconds;
	w->streaming = 1;
	w->streams++;
	w->started = w->last_rx = aj_monotonic_now(NULL);
	/* A failure lws reports at once has already ended the stream. */
	if (!aj_ws_connect(l->io->ctx, &l->io->server, aj_buf_cstr(&path), NULL,
			   protocols[0].name, w, &w->wsi) && w->streaming) {
		wlog(w, "cannot start the stream");
		stream_end(w, RESTART_RESUME_LATER);
	}
	aj_buf_release(&path);
	return 0;
}

/* Decoder callback: track the version, handle ERROR, pass the rest on. */
static int on_event(void *ctx, struct aj_watch_event *ev)
{
	struct aj_watch *w = ctx;
	struct aj_kube_status st;
	struct aj_errors e = AJ_ERRORS_INIT;

	w->stream_events++;
	if (ev->type == AJ_WATCH_ERROR) {
		aj_kube_status_init(&st);
		if (aj_kube_status_from_json(&st, 0, ev->object))
			return -1;
		w->restart = aj_kube_status_expired(&st) ? RESTART_RELIST
							  : RESTART_RESUME_LATER;
		aj_kube_status_to_errors(&st, "watch ERROR event", &e);
		wlog_errors(w, &e);
		aj_kube_status_release(&st);
		w->ended = 1;
		return -1;
	}
	if (set_rv(w, ev->object))
		return -1;
	if (w->fn(w->ctx, ev)) {
		w->restart = RESTART_RELIST_LATER;
		w->ended = 1;
		return -1;
	}
	return 0;
}

/* A piece of a message arrived. Returns -1 when the stream must end now. */
static int receive(struct aj_watch *w, const char *data, size_t len, int first,
		   int final)
{
	struct aj_errors e = AJ_ERRORS_INIT;

	w->last_rx = aj_monotonic_now(NULL);
	if (w->ended)
		return -1;
	/* wlog() names the watch; the decoder's messages name the stream. */
	if (!aj_watch_decoder_feed(&w->dec, data, len, first, final, "the stream",
				   on_event, w, &e))
		return 0;
	if (!w->ended) {
		/* Malformed stream or OOM: start over from a fresh list. */
		wlog_errors(w, &e);
		w->restart = RESTART_RELIST_LATER;
		w->ended = 1;
	}
	aj_errors_release(&e);
	return -1;
}

/* The upgrade did not happen: refused with an HTTP code, or no connection. */
static void connect_failed(struct aj_watch *w, unsigned code, const char *why)
{
	struct aj_kube_status st;
	struct aj_errors e = AJ_ERRORS_INIT;
	enum restart r = RESTART_RESUME_LATER;
	int changed;

	if (!w->streaming)
		return;
	if (code < 300) {
		wlog(w, "stream failed: %s", why);
		stream_end(w, r);
		return;
	}
	/* lws keeps no body of a refused upgrade: the code is all there is. */
	aj_kube_status_init(&st);
	aj_kube_status_decode(&st, (long)code, NULL, 0, NULL);
	aj_kube_status_to_errors(&st, "the stream", &e);
	wlog_errors(w, &e);
	if (aj_kube_status_expired(&st)) {
		r = RESTART_RELIST;
	} else if (code == 401) {
		aj_kube_token_refresh(w->loop->k, 1, &changed, &e);
		aj_errors_release(&e);
	} else if (code != 429 && code < 500) {
		r = RESTART_RELIST_LATER;
	}
	aj_kube_status_release(&st);
	stream_end(w, r);
}

/* The connection closed after the upgrade (or was never made). */
static void closed(struct aj_watch *w)
{
	if (!w->streaming)
		return;
	if (w->ended) {
		stream_end(w, w->restart);
	} else if (w->dead) {
		wlog(w, "nothing received for %ld s; reconnecting",
		     w->timeout + DEAD_GRACE);
		stream_end(w, RESTART_RESUME_LATER);
	} else if (!w->established || !w->peer_closed) {
		wlog(w, "the connection dropped");
		stream_end(w, RESTART_RESUME_LATER);
	} else {
		/* A normal end (timeoutSeconds). Very short and empty: suspicious. */
		stream_end(w, aj_monotonic_now(NULL) - w->started < 1.0 && !w->stream_events
			   ? RESTART_RESUME_LATER : RESTART_RESUME);
	}
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason,
		    void *user, void *in, size_t len)
{
	struct aj_watch *w = lws_get_opaque_user_data(wsi);
	unsigned char **p = in;

	(void)user;
	if (!w)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
		return aj_ws_add_bearer(wsi, w->loop->k->cfg.token, p, *p + len);
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		w->established = 1;
		w->last_rx = aj_monotonic_now(NULL);
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		return receive(w, in, len, lws_is_first_fragment(wsi),
			       lws_is_final_fragment(wsi));
	case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
		w->peer_closed = 1;
		return 0;
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		connect_failed(w, lws_http_client_http_response(wsi),
			       in ? (const char *)in : "unknown error");
		return 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
		closed(w);
		return 0;
	case LWS_CALLBACK_WSI_DESTROY:
		if (w->wsi == wsi)
			w->wsi = NULL;
		closed(w);
		lws_set_opaque_user_data(wsi, NULL);
		return 0;
	default:
		return 0;
	}
}

static int start_due(struct aj_watch_loop *l, double now, struct aj_errors *err)
{
	size_t i;

	for (i = 0; i < l->nr && !l->stop; i++) {
		struct aj_watch *w = l->watches[i];

		if (w->streaming || now < w->due)
			continue;
		if (!w->listed && do_list(w))
			continue;
		if (start_stream(w, err))
			return -1;
	}
	return 0;
}

/* Close streams that went silent; their end is handled by the callback. */
static void drop_dead(struct aj_watch_loop *l, double now)
{
	size_t i;

	for (i = 0; i < l->nr; i++) {
		struct aj_watch *w = l->watches[i];

		if (w->streaming && w->wsi && !w->dead &&
		    now - w->last_rx > (double)(w->timeout + DEAD_GRACE)) {
			w->dead = 1;
			lws_set_timeout(w->wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC);
		}
	}
}

int aj_watch_loop_run(struct aj_watch_loop *l, long max_ms,
		      struct aj_errors *err)
{
	double start = aj_monotonic_now(NULL);
	double end = max_ms >= 0 ? start + (double)max_ms / 1000.0 : -1;

	l->stop = 0;
	while (!l->stop) {
		double now = aj_monotonic_now(NULL), delay = TICK_MS / 1000.0;
		size_t i;

		if (end >= 0 && now >= end)
			break;
		if (start_due(l, now, err))
			return -1;
		now = aj_monotonic_now(NULL);
		drop_dead(l, now);
		for (i = 0; i < l->nr; i++)
			if (!l->watches[i]->streaming && l->watches[i]->due - now < delay)
				delay = l->watches[i]->due - now;
		if (end >= 0 && end - now < delay)
			delay = end - now;
		if (delay < 0.001)
			delay = 0.001;
		/* Wake lws when the next watch is due; the tick re-arms itself. */
		lws_sul_schedule(l->io->ctx, 0, &l->io->tick, tick,
				 (lws_usec_t)(delay * LWS_US_PER_SEC));
		if (lws_service(l->io->ctx, 0) < 0)
			return aj_errors_add(err, NULL, "watch: the event loop failed");
	}
	return 0;
}
