#include "exec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <libwebsockets.h>

#include "client.h"
#include "core/alloc.h"
#include "core/error.h"
#include "kube/ratelimit.h"
#include "kube/ws.h"

#define OUT_MAX_DEFAULT (64u * 1024u)
#define IDLE_DEFAULT 60
#define CHUNK (64u * 1024u)
#define STATUS_MAX (64u * 1024u)

/* --- framing --- */

int aj_exec_frame(struct aj_buf *out, int stream, const void *data, size_t len)
{
	if (aj_buf_addch(out, (char)(unsigned char)stream))
		return -1;
	return len ? aj_buf_add(out, data, len) : 0;
}

void aj_exec_decoder_init(struct aj_exec_decoder *d, int v5, aj_exec_sink sink,
			  void *sink_data)
{
	memset(d, 0, sizeof(*d));
	d->v5 = v5;
	d->stream = -1;
	d->sink = sink;
	d->sink_data = sink_data;
}

static int known_stream(const struct aj_exec_decoder *d, int s)
{
	return (s >= AJ_EXEC_STDIN && s <= AJ_EXEC_RESIZE) || (d->v5 && s == AJ_EXEC_CLOSE);
}

int aj_exec_decode(struct aj_exec_decoder *d, const void *buf, size_t len,
		   int first, int final, struct aj_errors *err)
{
	const unsigned char *p = buf;

	if (first) {
		if (d->in_message)
			return aj_errors_add(err, NULL, "exec stream: a message began inside another");
		d->in_message = 1;
		d->stream = -1;
	} else if (!d->in_message) {
		return aj_errors_add(err, NULL, "exec stream: a message piece outside any message");
	}
	if (d->stream < 0 && len) {
		if (!known_stream(d, p[0]))
			return aj_errors_add(err, NULL, "exec stream: unknown stream %u", p[0]);
		d->stream = p[0];
		p++;
		len--;
	}
	if (final) {
		d->in_message = 0;
		if (d->stream < 0)
			return aj_errors_add(err, NULL, "exec stream: an empty message");
	}
	if (d->stream < 0 || (!len && !final))
		return 0;
	return d->sink(d->sink_data, d->stream, p, len, final, err);
}

int aj_exec_status_parse(const char *json, size_t len, int *exit_code,
			 struct aj_errors *err)
{
	cJSON *st = cJSON_ParseWithLength(json, len);
	const cJSON *status, *reason, *message, *cause;
	int ret = -1;

	*exit_code = -1;
	if (!st)
		return aj_errors_add(err, NULL, "exec: the command's status is not JSON");
	status = cJSON_GetObjectItemCaseSensitive(st, "status");
	reason = cJSON_GetObjectItemCaseSensitive(st, "reason");
	message = cJSON_GetObjectItemCaseSensitive(st, "message");
	if (cJSON_IsString(status) && !strcmp(status->valuestring, "Success")) {
		*exit_code = 0;
		ret = 0;
	} else if (cJSON_IsString(reason) && !strcmp(reason->valuestring, "NonZeroExitCode")) {
		cJSON_ArrayForEach(cause, cJSON_GetObjectItemCaseSensitive(
					   cJSON_GetObjectItemCaseSensitive(st, "details"), "causes")) {
			const cJSON *r = cJSON_GetObjectItemCaseSensitive(cause, "reason");
			const cJSON *m = cJSON_GetObjectItemCaseSensitive(cause, "message");
			char *end;
			long v;

			if (!cJSON_IsString(r) || strcmp(r->valuestring, "ExitCode") || !cJSON_IsString(m))
				continue;
			errno = 0;
			v = strtol(m->valuestring, &end, 10);
			if (!errno && end != m->valuestring && !*end && v > 0 && v < 256) {
				*exit_code = (int)v;
				ret = 0;
			}
		}
		if (ret)
			aj_errors_add(err, NULL, "exec: non-zero exit without a valid exit code");
	} else {
		aj_errors_add(err, NULL, "exec failed: %s",
			      cJSON_IsString(message) ? message->valuestring : "no message");
	}
	cJSON_Delete(st);
	return ret;
}

void aj_exec_result_init(struct aj_exec_result *r)
{
	memset(r, 0, sizeof(*r));
	aj_buf_init(&r->out, OUT_MAX_DEFAULT);
	aj_buf_init(&r->err, OUT_MAX_DEFAULT);
}

void aj_exec_result_release(struct aj_exec_result *r)
{
	aj_buf_release(&r->out);
	aj_buf_release(&r->err);
}

/* --- one connection --- */

struct session {
	const struct aj_exec_request *req;
	struct aj_exec_result *res;
	struct aj_errors *err;
	struct aj_exec_decoder dec;
	struct aj_buf status;
	const char *bearer;
	unsigned char *tx;        /* LWS_PRE + stream byte + CHUNK */
	char what[320];           /* "exec in pod NS/POD", for messages */
	double last;              /* time of the last traffic */
	int stdin_done;
	int done;                 /* the Status arrived */
	int failed;
};

/* Keep what fits; an overlong output is cut, never an error. */
static void keep(struct aj_buf *b, size_t max, const void *p, size_t len)
{
	if (b->failed || b->len >= max)
		return;
	if (len > max - b->len)
		len = max - b->len;
	aj_buf_add(b, p, len);
}

static int on_message(void *data, int stream, const void *buf, size_t len, int end,
		      struct aj_errors *err)
{
	struct session *s = data;
	size_t max = s->req->out_max ? s->req->out_max : OUT_MAX_DEFAULT;

	switch (stream) {
	case AJ_EXEC_STDOUT:
		keep(&s->res->out, max, buf, len);
		return 0;
	case AJ_EXEC_STDERR:
		keep(&s->res->err, max, buf, len);
		return 0;
	case AJ_EXEC_ERROR:
		if (aj_buf_add(&s->status, buf, len))
			return aj_errors_add(err, NULL, "%s: status over %u bytes", s->what, STATUS_MAX);
		if (end) {
			s->done = 1;
			if (aj_exec_status_parse(aj_buf_cstr(&s->status), s->status.len,
						 &s->res->exit_code, err))
				return -1;
		}
		return 0;
	default:                  /* resize echoes, stream closes: nothing to do */
		return 0;
	}
}

/* The first failure is the one reported; a close after the Status is none. */
static void fail(struct session *s, const char *msg)
{
	if (s->failed || s->done)
		return;
	s->failed = 1;
	aj_errors_add(s->err, NULL, "%s: %s", s->what, msg);
}

static int send_stdin(struct lws *wsi, struct session *s)
{
	unsigned char *p = s->tx + LWS_PRE;
	size_t n = 0;

	if (s->req->read(s->req->read_data, p + 1, CHUNK, &n, s->err)) {
		s->failed = 1;
		return -1;
	}
	if (!n) {
		s->stdin_done = 1;
		if (s->res->protocol != 5)
			return 0;
		p[0] = AJ_EXEC_CLOSE;
		p[1] = AJ_EXEC_STDIN;
		return lws_write(wsi, p, 2, LWS_WRITE_BINARY) < 2 ? -1 : 0;
	}
	p[0] = AJ_EXEC_STDIN;
	if (lws_write(wsi, p, n + 1, LWS_WRITE_BINARY) < (int)(n + 1))
		return -1;
	s->res->sent += n;
	lws_callback_on_writable(wsi);
	return 0;
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason, void *user,
		    void *in, size_t len)
{
	struct session *s = lws_get_opaque_user_data(wsi);
	char proto[64], msg[320];
	unsigned char **p = in;

	(void)user;
	if (!s)
		return 0;
	switch (reason) {
	case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
		return aj_ws_add_bearer(wsi, s->bearer, p, *p + len);
	case LWS_CALLBACK_CLIENT_FILTER_PRE_ESTABLISH:
		/* the response headers are still there: which protocol did the server pick? */
		if (lws_hdr_copy(wsi, proto, sizeof(proto), WSI_TOKEN_PROTOCOL) < 0)
			proto[0] = '\0';
		if (!strcmp(proto, AJ_EXEC_PROTOCOL_V5))
			s->res->protocol = 5;
		else if (!strcmp(proto, AJ_EXEC_PROTOCOL_V4))
			s->res->protocol = 4;
		else {
			snprintf(msg, sizeof(msg), "the server chose no channel protocol (\"%s\")", proto);
			fail(s, msg);
			return -1;
		}
		return 0;
	case LWS_CALLBACK_CLIENT_ESTABLISHED:
		s->last = aj_monotonic_now(NULL);
		aj_exec_decoder_init(&s->dec, s->res->protocol == 5, on_message, s);
		if (s->req->read)
			lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_CLIENT_WRITEABLE:
		s->last = aj_monotonic_now(NULL);
		if (s->stdin_done || s->done || s->failed || !s->req->read)
			return 0;
		if (send_stdin(wsi, s)) {
			fail(s, "the connection closed before the command finished (sending stdin)");
			return -1;
		}
		return 0;
	case LWS_CALLBACK_CLIENT_RECEIVE:
		s->last = aj_monotonic_now(NULL);
		if (aj_exec_decode(&s->dec, in, len, lws_is_first_fragment(wsi),
				   lws_is_final_fragment(wsi), s->err)) {
			s->failed = 1;
			return -1;
		}
		return s->done ? -1 : 0;   /* the Status is the last word: hang up */
	case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
		if (lws_http_client_http_response(wsi) >= 300)
			snprintf(msg, sizeof(msg), "the server refused the exec upgrade (HTTP %u)",
				 lws_http_client_http_response(wsi));
		else
			snprintf(msg, sizeof(msg), "cannot connect: %s",
				 in ? (const char *)in : "unknown error");
		fail(s, msg);
		return 0;
	case LWS_CALLBACK_CLIENT_CLOSED:
	case LWS_CALLBACK_WSI_DESTROY:
		fail(s, "the connection closed before the command finished");
		lws_set_opaque_user_data(wsi, NULL);
		return 0;
	default:
		return 0;
	}
}

static const struct lws_protocols protocols[] = {
	{ "aj-exec", callback, 0, CHUNK + 16, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static int build_path(struct aj_buf *b, const struct aj_exec_request *r)
{
	size_t i;

	aj_buf_addstr(b, "/api/v1/namespaces/");
	aj_kube_escape(b, r->ns);
	aj_buf_addstr(b, "/pods/");
	aj_kube_escape(b, r->pod);
	aj_buf_addstr(b, "/exec");
	for (i = 0; i < r->argc; i++)
		aj_kube_query(b, "command", r->argv[i]);
	if (r->container)
		aj_kube_query(b, "container", r->container);
	aj_kube_query(b, "stdin", r->read ? "true" : "false");
	aj_kube_query(b, "stdout", "true");
	aj_kube_query(b, "stderr", "true");
	return b->failed ? -1 : 0;
}

int aj_exec_run(struct aj_kube *k, const struct aj_exec_request *r,
		struct aj_exec_result *res, struct aj_errors *err)
{
	struct lws_context *ctx = NULL;
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct session s;
	struct aj_ws_server sv;
	int idle = r->idle_timeout > 0 ? r->idle_timeout : IDLE_DEFAULT, changed, ret = -1;

	memset(&s, 0, sizeof(s));
	s.req = r;
	s.res = res;
	s.err = err;
	aj_buf_init(&s.status, STATUS_MAX);
	snprintf(s.what, sizeof(s.what), "exec in pod %s/%s", r->ns, r->pod);
	if (r->out_max) {
		res->out.max = r->out_max;
		res->err.max = r->out_max;
	}
	if (aj_ws_server_parse(&k->cfg, "exec", &sv, err) || build_path(&path, r) ||
	    aj_kube_token_refresh(k, 0, &changed, err))
		goto out;
	s.bearer = k->cfg.token;
	s.tx = aj_malloc(LWS_PRE + 1 + CHUNK);
	if (!s.tx) {
		aj_errors_oom(err);
		goto out;
	}
	ctx = aj_ws_context_new(&k->cfg, &sv, protocols, s.what, err);
	if (!ctx)
		goto out;
	s.last = aj_monotonic_now(NULL);
	if (!aj_ws_connect(ctx, &sv, aj_buf_cstr(&path),
			   AJ_EXEC_PROTOCOL_V5 "," AJ_EXEC_PROTOCOL_V4,
			   protocols[0].name, &s, NULL))
		fail(&s, "cannot connect");
	while (!s.done && !s.failed) {
		lws_service(ctx, 100);
		if (aj_monotonic_now(NULL) - s.last > idle) {
			char msg[64];

			snprintf(msg, sizeof(msg), "nothing moved for %d seconds", idle);
			fail(&s, msg);
		}
	}
	ret = s.done && !s.failed ? 0 : -1;
out:
	if (ctx) {
		s.done = 1;       /* closing now is ours, not a failure */
		lws_context_destroy(ctx);
	}
	aj_free(s.tx);
	aj_buf_release(&s.status);
	aj_buf_release(&path);
	return ret;
}
