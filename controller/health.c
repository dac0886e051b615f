#include "health.h"

#include <string.h>

#include <libwebsockets.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

#define AJ_HEALTH_MAX_BODY (8u * 1024u * 1024u)

struct session {
	char *body;               /* LWS_PRE bytes of headroom, then the body */
	size_t len;
	size_t sent;
	unsigned status;
	const char *type;
};

static void respond(struct session *ps, struct aj_health_server *s, const char *path)
{
	struct aj_buf body = AJ_BUF_INIT(AJ_HEALTH_MAX_BODY);

	ps->status = HTTP_STATUS_OK;
	ps->type = "text/plain; charset=utf-8";
	if (!strcmp(path, "/healthz")) {
		aj_buf_addstr(&body, "ok\n");
	} else if (!strcmp(path, "/readyz")) {
		struct aj_buf why = AJ_BUF_INIT(AJ_BUF_SMALL);

		if (s->ops.ready && !s->ops.ready(s->ops.ctx, &why)) {
			ps->status = HTTP_STATUS_SERVICE_UNAVAILABLE;
			aj_buf_addf(&body, "not ready: %s\n", aj_buf_cstr(&why));
		} else {
			aj_buf_addstr(&body, "ok\n");
		}
		aj_buf_release(&why);
	} else if (!strcmp(path, "/metrics") && s->ops.metrics) {
		ps->type = "text/plain; version=0.0.4; charset=utf-8";
		if (s->ops.metrics(s->ops.ctx, &body))
			ps->status = HTTP_STATUS_INTERNAL_SERVER_ERROR;
	} else {
		ps->status = HTTP_STATUS_NOT_FOUND;
		aj_buf_addstr(&body, "not found\n");
	}
	ps->body = aj_malloc(LWS_PRE + body.len + 1);
	if (!ps->body || body.failed) {
		aj_free(ps->body);
		ps->body = NULL;
		ps->len = 0;
		ps->status = HTTP_STATUS_INTERNAL_SERVER_ERROR;
	} else {
		memcpy(ps->body + LWS_PRE, aj_buf_cstr(&body), body.len);
		ps->len = body.len;
	}
	ps->sent = 0;
	aj_buf_release(&body);
}

static int callback(struct lws *wsi, enum lws_callback_reasons reason,
		    void *user, void *in, size_t len)
{
	struct session *ps = user;
	struct aj_health_server *s = lws_context_user(lws_get_context(wsi));
	unsigned char head[LWS_PRE + 512], *p, *end;
	size_t chunk;   /* later chunks overwrite already-sent bytes as headroom */

	switch (reason) {
	case LWS_CALLBACK_HTTP:
		(void)len;
		respond(ps, s, in ? (const char *)in : "");
		p = head + LWS_PRE;
		end = head + sizeof(head) - 1;
		if (lws_add_http_common_headers(wsi, ps->status, ps->type,
						(lws_filepos_t)ps->len, &p, end) ||
		    lws_finalize_write_http_header(wsi, head + LWS_PRE, &p, end))
			return 1;
		lws_callback_on_writable(wsi);
		return 0;
	case LWS_CALLBACK_HTTP_WRITEABLE:
		if (!ps->body)
			return lws_http_transaction_completed(wsi) ? -1 : 0;
		chunk = ps->len - ps->sent;
		if (chunk > 16384)
			chunk = 16384;
		if (lws_write(wsi, (unsigned char *)ps->body + LWS_PRE + ps->sent, chunk,
			      ps->sent + chunk == ps->len ? LWS_WRITE_HTTP_FINAL
							  : LWS_WRITE_HTTP) != (int)chunk)
			return 1;
		ps->sent += chunk;
		if (ps->sent < ps->len) {
			lws_callback_on_writable(wsi);
			return 0;
		}
		aj_free(ps->body);
		ps->body = NULL;
		return lws_http_transaction_completed(wsi) ? -1 : 0;
	case LWS_CALLBACK_CLOSED_HTTP:
		aj_free(ps->body);
		ps->body = NULL;
		return 0;
	default:
		return lws_callback_http_dummy(wsi, reason, user, in, len);
	}
}

static const struct lws_protocols protocols[] = {
	{ "http", callback, sizeof(struct session), 0, 0, NULL, 0 },
	{ NULL, NULL, 0, 0, 0, NULL, 0 }
};

static void *serve(void *arg)
{
	struct aj_health_server *s = arg;

	while (!atomic_load(&s->stop))
		if (lws_service(s->lws, 0) < 0)
			break;
	return NULL;
}

int aj_health_start(struct aj_health_server *s, const char *addr, int port,
		    const struct aj_health_ops *ops, struct aj_errors *err)
{
	struct lws_context_creation_info info;

	memset(s, 0, sizeof(*s));
	s->ops = *ops;
	memset(&info, 0, sizeof(info));
	info.port = port;   /* 0: the kernel picks a free port */
	info.iface = addr;
	info.protocols = protocols;
	info.user = s;
	info.options = LWS_SERVER_OPTION_DISABLE_IPV6;
	lws_set_log_level(LLL_ERR, NULL);
	s->lws = lws_create_context(&info);
	if (!s->lws)
		return aj_errors_add(err, NULL, "cannot listen on %s:%d for health and metrics",
				     addr, port);
	s->port = lws_get_vhost_listen_port(lws_get_vhost_by_name(s->lws, "default"));
	if (pthread_create(&s->thread, NULL, serve, s)) {
		lws_context_destroy(s->lws);
		s->lws = NULL;
		return aj_errors_add(err, NULL, "cannot start the health server thread");
	}
	s->running = 1;
	return 0;
}

void aj_health_stop(struct aj_health_server *s)
{
	if (!s->running)
		return;
	atomic_store(&s->stop, 1);
	lws_cancel_service(s->lws);
	pthread_join(s->thread, NULL);
	lws_context_destroy(s->lws);
	s->lws = NULL;
	s->running = 0;
}
