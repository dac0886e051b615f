/*
 * stream.c - see stream.h.
 */
#include <string.h>
#include <time.h>

#include <curl/curl.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/stream.h"

struct aj_kube_stream {
	struct aj_kube_stream *next;
	struct aj_kube_streams *set;
	CURL *h;
	struct curl_slist *headers;
	char *url;
	aj_kube_stream_data_fn data;
	aj_kube_stream_end_fn end;
	void *ctx;
	struct aj_buf error_body;   /* body of a non-2xx answer, bounded */
	int stopped;                /* the data callback ended it */
	char errbuf[CURL_ERROR_SIZE];
};

int aj_kube_streams_init(struct aj_kube_streams *s, struct aj_kube *k, struct aj_errors *err)
{
	memset(s, 0, sizeof(*s));
	s->k = k;
	s->multi = curl_multi_init();
	return s->multi ? 0 : aj_errors_oom(err);
}

/* Free the header list, wiping the bearer token it holds. */
static void free_headers(struct curl_slist *l)
{
	struct curl_slist *p;

	for (p = l; p; p = p->next)
		explicit_bzero(p->data, strlen(p->data));
	curl_slist_free_all(l);
}

static void stream_free(struct aj_kube_streams *s, struct aj_kube_stream *st)
{
	struct aj_kube_stream **p;

	for (p = &s->head; *p; p = &(*p)->next)
		if (*p == st) {
			*p = st->next;
			s->nr--;
			break;
		}
	if (st->h) {
		curl_multi_remove_handle(s->multi, st->h);
		curl_easy_cleanup(st->h);
	}
	free_headers(st->headers);
	aj_buf_release(&st->error_body);
	aj_free(st->url);
	aj_free(st);
}

void aj_kube_streams_release(struct aj_kube_streams *s)
{
	while (s->head)
		stream_free(s, s->head);
	if (s->multi)
		curl_multi_cleanup(s->multi);
	s->multi = NULL;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	struct aj_kube_stream *st = userp;
	size_t len = size * nmemb;
	long code = 0;

	curl_easy_getinfo(st->h, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300) {
		if (st->data(st->ctx, data, len)) {
			st->stopped = 1;
			return 0;
		}
		return len;
	}
	/* keep the start of an error answer: enough for its Status */
	if (st->error_body.len < AJ_KUBE_STREAM_ERROR_BODY) {
		size_t room = AJ_KUBE_STREAM_ERROR_BODY - st->error_body.len;

		aj_buf_add(&st->error_body, data, len < room ? len : room);
	}
	return len;
}

int aj_kube_stream_open(struct aj_kube_streams *s, const char *path,
			aj_kube_stream_data_fn data, aj_kube_stream_end_fn end, void *ctx,
			struct aj_kube_stream **out, struct aj_errors *err)
{
	struct aj_kube_stream *st = aj_calloc(1, sizeof(*st));
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);
	int changed;

	if (out)
		*out = NULL;
	if (!st)
		return aj_errors_oom(err);
	st->set = s;
	st->data = data;
	st->end = end;
	st->ctx = ctx;
	aj_buf_init(&st->error_body, AJ_KUBE_STREAM_ERROR_BODY + 1);
	st->next = s->head;
	s->head = st;
	s->nr++;
	if (aj_buf_addf(&url, "%s%s", s->k->cfg.server, path) ||
	    !(st->url = aj_buf_detach(&url, NULL))) {
		aj_buf_release(&url);
		stream_free(s, st);
		return aj_errors_oom(err);
	}
	if (aj_kube_token_refresh(s->k, 0, &changed, err) || !(st->h = curl_easy_init()) ||
	    aj_kube_setup_handle(s->k, st->h, &st->headers, NULL, err)) {
		if (!st->h)
			aj_errors_oom(err);
		stream_free(s, st);
		return -1;
	}
	curl_easy_setopt(st->h, CURLOPT_URL, st->url);
	curl_easy_setopt(st->h, CURLOPT_ERRORBUFFER, st->errbuf);
	curl_easy_setopt(st->h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(st->h, CURLOPT_WRITEDATA, st);
	curl_easy_setopt(st->h, CURLOPT_PRIVATE, st);
	if (s->k->debug)
		fprintf(s->k->debug, "GET %s (stream)\n", st->url);
	if (curl_multi_add_handle(s->multi, st->h) != CURLM_OK) {
		stream_free(s, st);
		return aj_errors_add(err, NULL, "cannot start a stream to the API server");
	}
	if (out)
		*out = st;
	return 0;
}

void aj_kube_stream_close(struct aj_kube_streams *s, struct aj_kube_stream *st)
{
	if (st)
		stream_free(s, st);
}

static void finish(struct aj_kube_streams *s, struct aj_kube_stream *st, CURLcode rc)
{
	struct aj_kube_status status;
	long code = 0;

	aj_kube_status_init(&status);
	if (rc == CURLE_OK || (rc == CURLE_WRITE_ERROR && st->stopped)) {
		curl_easy_getinfo(st->h, CURLINFO_RESPONSE_CODE, &code);
		aj_kube_status_decode(&status, code, st->error_body.buf, st->error_body.len, NULL);
	} else {
		aj_kube_status_transport(&status, st->errbuf[0] ? st->errbuf : curl_easy_strerror(rc));
	}
	if (s->k->observe)
		s->k->observe(s->k->observe_ctx, "GET", code);
	st->end(st->ctx, &status, st->stopped);
	aj_kube_status_release(&status);
	stream_free(s, st);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long)(ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

int aj_kube_streams_run(struct aj_kube_streams *s, long max_ms, struct aj_errors *err)
{
	long start = now_ms(), left = max_ms;
	int running, queued;
	CURLMsg *m;

	while (s->nr && !s->stop && left > 0) {
		if (curl_multi_perform(s->multi, &running) != CURLM_OK)
			return aj_errors_add(err, NULL, "the log streams failed (libcurl)");
		/* end callbacks may open new streams: take every message first */
		while ((m = curl_multi_info_read(s->multi, &queued))) {
			struct aj_kube_stream *st = NULL;

			if (m->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&st);
			finish(s, st, m->data.result);
		}
		if (!s->nr || s->stop)
			break;
		left = max_ms - (now_ms() - start);
		if (left > 0 && curl_multi_poll(s->multi, NULL, 0, left < 200 ? (int)left : 200,
						NULL) != CURLM_OK)
			return aj_errors_add(err, NULL, "the log streams failed (libcurl)");
		left = max_ms - (now_ms() - start);
	}
	return 0;
}

void aj_kube_streams_stop(struct aj_kube_streams *s)
{
	s->stop = 1;
}
