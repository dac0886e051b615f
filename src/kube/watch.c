#include "watch.h"

#include <stdarg.h>
#include <string.h>

#include <curl/curl.h>

#include "core/alloc.h"
#include "core/error.h"

/* What to do when a stream has ended. */
enum restart {
	RESTART_RESUME,        /* watch again from the last resourceVersion */
	RESTART_RESUME_LATER,  /* the same, after a backoff */
	RESTART_RELIST,        /* the version is too old: list again now */
	RESTART_RELIST_LATER   /* list again after a backoff */
};

/* Receive buffers larger than this are freed once drained. */
#define AJ_WATCH_KEEP_BUFFER (256u * 1024u)

struct aj_watch {
	struct aj_watch_loop *loop;
	struct aj_kube_resource res;
	char *group, *version, *plural, *ns;
	char *label_selector, *field_selector;
	char *origin;                 /* "watch configmaps in namespace x" */
	aj_watch_fn fn;
	void *ctx;

	CURL *easy;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
	struct aj_buf pending;        /* received, not yet decoded */
	struct aj_buf errbody;        /* body of a non-200 answer */
	long http_code;
	struct aj_watch_decoder dec;
	struct aj_backoff backoff;

	char *rv;                     /* resume point; "" before the first list */
	int listed;                   /* a list succeeded at least once */
	int quorum;                   /* next list must be a quorum read */
	int streaming;
	int ended;                    /* drain decided the stream is over */
	enum restart restart;
	double due;                   /* monotonic time of the next start */
	double started;               /* when the stream began */
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

int aj_watch_loop_init(struct aj_watch_loop *l, struct aj_kube *k,
		       struct aj_errors *err)
{
	memset(l, 0, sizeof(*l));
	l->k = k;
	l->min_timeout = AJ_WATCH_MIN_TIMEOUT;
	l->max_timeout = AJ_WATCH_MAX_TIMEOUT;
	l->seed = aj_random_seed();
	l->multi = curl_multi_init();
	if (!l->multi)
		return aj_errors_add(err, NULL, "cannot create a libcurl multi handle");
	return 0;
}

static void stream_stop(struct aj_watch *w)
{
	struct curl_slist *p;

	if (w->streaming)
		curl_multi_remove_handle(w->loop->multi, w->easy);
	w->streaming = 0;
	for (p = w->headers; p; p = p->next)
		explicit_bzero(p->data, strlen(p->data));
	curl_slist_free_all(w->headers);
	w->headers = NULL;
}

static void watch_free(struct aj_watch *w)
{
	stream_stop(w);
	if (w->easy)
		curl_easy_cleanup(w->easy);
	aj_buf_release(&w->pending);
	aj_buf_release(&w->errbody);
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

	for (i = 0; i < l->nr; i++)
		watch_free(l->watches[i]);
	aj_free(l->watches);
	if (l->multi)
		curl_multi_cleanup(l->multi);
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
	aj_buf_init(&w->pending, AJ_KUBE_MAX_BODY);
	aj_buf_init(&w->errbody, AJ_BUF_SMALL);
	aj_watch_decoder_init(&w->dec);
	aj_backoff_init(&w->backoff, NULL, NULL, NULL, NULL);
	aj_kube_describe(&origin, "watch", ref);
	w->origin = aj_buf_detach(&origin, NULL);
	if (!w->origin || dup_opt(&w->group, ref->res->group) ||
	    dup_opt(&w->version, ref->res->version) ||
	    dup_opt(&w->plural, ref->res->plural) || dup_opt(&w->ns, ref->ns) ||
	    dup_opt(&w->label_selector, o ? o->label_selector : NULL) ||
	    dup_opt(&w->field_selector, o ? o->field_selector : NULL) ||
	    dup_opt(&w->rv, "") || !(w->easy = curl_easy_init()) ||
	    AJ_GROW(l->watches, l->nr + 1, l->alloc)) {
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
	/* The first list may come from the watch cache; after "too old", not. */
	o.resource_version = w->quorum || w->lists ? "" : "0";
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
	w->quorum = 0;
	return 0;
}

static size_t stream_write(char *data, size_t size, size_t nmemb, void *userp)
{
	struct aj_watch *w = userp;
	size_t len = size * nmemb;

	if (!w->http_code)
		curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &w->http_code);
	if (w->http_code != 200) {
		/* An error body: keep what fits, it is only for the message. */
		aj_buf_add(&w->errbody, data, len);
		return len;
	}
	return aj_buf_add(&w->pending, data, len) ? 0 : len;
}

static int start_stream(struct aj_watch *w, struct aj_errors *err)
{
	struct aj_watch_loop *l = w->loop;
	struct aj_kube_ref ref = { &w->res, w->ns, NULL, NULL };
	struct aj_kube_list_opts o = { 0 };
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors tok = AJ_ERRORS_INIT;
	long span = l->max_timeout - l->min_timeout;
	int changed;
	CURLMcode mc;

	o.label_selector = w->label_selector;
	o.field_selector = w->field_selector;
	o.resource_version = w->rv;
	o.timeout_seconds = l->min_timeout +
		(span > 0 ? (long)(aj_random_next(&l->seed) % (unsigned long long)span) : 0);
	if (aj_kube_token_refresh(l->k, 0, &changed, &tok))
		wlog_errors(w, &tok);
	aj_errors_release(&tok);
	aj_buf_addstr(&url, l->k->cfg.server);
	if (aj_kube_path(&url, &ref) || aj_kube_list_query(&url, &o) ||
	    aj_kube_query(&url, "watch", "1") ||
	    aj_kube_query(&url, "allowWatchBookmarks", "true"))
		return aj_errors_oom(err);
	curl_easy_reset(w->easy);
	if (aj_kube_setup_handle(l->k, w->easy, &w->headers, NULL, err)) {
		aj_buf_release(&url);
		return -1;
	}
	w->errbuf[0] = '\0';
	curl_easy_setopt(w->easy, CURLOPT_ERRORBUFFER, w->errbuf);
	curl_easy_setopt(w->easy, CURLOPT_URL, aj_buf_cstr(&url));
	curl_easy_setopt(w->easy, CURLOPT_WRITEFUNCTION, stream_write);
	curl_easy_setopt(w->easy, CURLOPT_WRITEDATA, w);
	curl_easy_setopt(w->easy, CURLOPT_PRIVATE, w);
	/* Idle watchdog: a silent stream past its timeout is a dead one. */
	curl_easy_setopt(w->easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(w->easy, CURLOPT_LOW_SPEED_TIME, o.timeout_seconds + 30);
	curl_easy_setopt(w->easy, CURLOPT_TIMEOUT, o.timeout_seconds + 60);
	aj_buf_release(&url);
	aj_buf_reset(&w->pending);
	aj_buf_reset(&w->errbody);
	aj_watch_decoder_reset(&w->dec);
	w->http_code = 0;
	w->ended = 0;
	w->stream_events = 0;
	mc = curl_multi_add_handle(l->multi, w->easy);
	if (mc != CURLM_OK) {
		stream_stop(w);
		return aj_errors_add(err, NULL, "%s: cannot start: %s", w->origin,
				     curl_multi_strerror(mc));
	}
	w->streaming = 1;
	w->streams++;
	w->started = aj_monotonic_now(NULL);
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
		if (w->restart == RESTART_RELIST)
			w->quorum = 1;
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

/* Decode what arrived. Returns 1 when the stream must end now. */
static int drain(struct aj_watch *w)
{
	struct aj_errors e = AJ_ERRORS_INIT;
	int ret;

	if (!w->pending.len || w->ended)
		return w->ended;
	ret = aj_watch_decoder_feed(&w->dec, w->pending.buf, w->pending.len,
				    w->origin, on_event, w, &e);
	/* A burst can grow the buffer a lot; do not keep that memory for good. */
	if (w->pending.alloc > AJ_WATCH_KEEP_BUFFER)
		aj_buf_release(&w->pending);
	aj_buf_reset(&w->pending);
	if (ret && !w->ended) {
		/* Malformed stream or OOM: start over from a fresh list. */
		wlog_errors(w, &e);
		w->restart = RESTART_RELIST_LATER;
		w->ended = 1;
	}
	aj_errors_release(&e);
	return w->ended;
}

/* The transfer finished (result) or drain ended it (result ignored). */
static void stream_done(struct aj_watch *w, CURLcode result)
{
	struct aj_kube_status st;
	struct aj_errors e = AJ_ERRORS_INIT;
	enum restart r;
	long retry_after = -1;
	int changed;

	stream_stop(w);
	if (w->ended) {
		schedule(w, w->restart, -1);
		return;
	}
	aj_kube_status_init(&st);
	/* A stream that ended before any byte of body has no code yet. */
	if (!w->http_code)
		curl_easy_getinfo(w->easy, CURLINFO_RESPONSE_CODE, &w->http_code);
	if (result != CURLE_OK) {
		wlog(w, "stream failed: %s",
		     w->errbuf[0] ? w->errbuf : curl_easy_strerror(result));
		r = RESTART_RESUME_LATER;
	} else if (w->http_code == 200) {
		/* A normal end (timeoutSeconds). Very short and empty: suspicious. */
		r = aj_monotonic_now(NULL) - w->started < 1.0 && !w->stream_events
			? RESTART_RESUME_LATER : RESTART_RESUME;
	} else {
		aj_kube_status_decode(&st, w->http_code, w->errbody.buf,
				      w->errbody.len, NULL);
		aj_kube_status_to_errors(&st, "the stream", &e);
		wlog_errors(w, &e);
		retry_after = st.retry_after;
		if (aj_kube_status_expired(&st)) {
			w->quorum = 1;
			r = RESTART_RELIST;
		} else if (st.code == 401) {
			aj_kube_token_refresh(w->loop->k, 1, &changed, &e);
			aj_errors_release(&e);
			r = RESTART_RESUME_LATER;
		} else if (st.code == 429 || st.code >= 500) {
			r = RESTART_RESUME_LATER;
		} else {
			r = RESTART_RELIST_LATER;
		}
	}
	aj_kube_status_release(&st);
	schedule(w, r, retry_after);
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

static int pump(struct aj_watch_loop *l, struct aj_errors *err)
{
	CURLMsg *msg;
	CURLMcode mc;
	int running, left;
	size_t i;

	mc = curl_multi_perform(l->multi, &running);
	if (mc != CURLM_OK)
		return aj_errors_add(err, NULL, "watch: libcurl: %s",
				     curl_multi_strerror(mc));
	for (i = 0; i < l->nr; i++) {
		struct aj_watch *w = l->watches[i];

		if (w->streaming && drain(w))
			stream_done(w, CURLE_OK);
	}
	while ((msg = curl_multi_info_read(l->multi, &left))) {
		struct aj_watch *w;
		char *priv = NULL;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
		w = (struct aj_watch *)(void *)priv;
		if (!w || !w->streaming)
			continue;
		drain(w);
		stream_done(w, msg->data.result);
	}
	return 0;
}

int aj_watch_loop_run(struct aj_watch_loop *l, long max_ms,
		      struct aj_errors *err)
{
	double start = aj_monotonic_now(NULL);
	double end = max_ms >= 0 ? start + (double)max_ms / 1000.0 : -1;

	l->stop = 0;
	while (!l->stop) {
		double now = aj_monotonic_now(NULL), delay = 0.5;
		size_t i;
		CURLMcode mc;

		if (end >= 0 && now >= end)
			break;
		if (start_due(l, now, err))
			return -1;
		now = aj_monotonic_now(NULL);
		for (i = 0; i < l->nr; i++)
			if (!l->watches[i]->streaming && l->watches[i]->due - now < delay)
				delay = l->watches[i]->due - now;
		if (end >= 0 && end - now < delay)
			delay = end - now;
		if (delay < 0)
			delay = 0;
		mc = curl_multi_poll(l->multi, NULL, 0, (int)(delay * 1000), NULL);
		if (mc != CURLM_OK)
			return aj_errors_add(err, NULL, "watch: libcurl: %s",
					     curl_multi_strerror(mc));
		if (pump(l, err))
			return -1;
	}
	return 0;
}
