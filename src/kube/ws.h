/*
 * ws.h - WebSocket connections to the API server (libwebsockets), the one
 * place that turns a client configuration into lws settings. exec.c opens
 * one connection per command; watch.c keeps every watch of a loop on one
 * context.
 *
 * A context carries the TLS material of the configuration: the CA (file or
 * inline data) that verifies the server (unless the configuration has
 * insecure-skip-tls-verify, which only the CLI allows), and the
 * client certificate and key (files or inline data, handed to lws from
 * memory, never written out). The bearer token is not part of the context:
 * it is added to each handshake, so a rotated token is used by the next
 * connection. Connections send an Origin header (the API server refuses a
 * WebSocket upgrade without one).
 *
 * Ownership: the server parts point into the URL they were split from, which
 * must outlive them. The context is the caller's (lws_context_destroy).
 */
#ifndef AJ_KUBE_WS_H
#define AJ_KUBE_WS_H

#include <libwebsockets.h>

struct aj_errors;
struct aj_kube_config;

/* The server URL split for lws: "https://[::1]:6443/prefix". */
struct aj_ws_server {
	int tls;
	int insecure;         /* the configuration's insecure-skip-tls-verify */
	char host[256];       /* without IPv6 brackets */
	int port;
	const char *prefix;   /* path before the API paths ("" when none) */
};

/*
 * Split cfg's http(s) server URL and take its TLS verification setting;
 * errors name what (e.g. "exec") and the URL. 0 / -1.
 */
int aj_ws_server_parse(const struct aj_kube_config *cfg, const char *what,
		       struct aj_ws_server *sv, struct aj_errors *err);

/*
 * A client context for sv with cfg's TLS material and the given protocols
 * (static, NULL-terminated). lws logging is silenced: its debug output
 * would show request headers. NULL on failure, with an error naming what.
 */
struct lws_context *aj_ws_context_new(const struct aj_kube_config *cfg,
				      const struct aj_ws_server *sv,
				      const struct lws_protocols *protocols,
				      const char *what, struct aj_errors *err);

/*
 * Start a connection to sv's prefix followed by path (with its query),
 * offering subprotocol (NULL: none) and bound to local_protocol of the
 * context. user becomes the connection's opaque user data; *pwsi follows
 * the connection (lws clears it when the connection fails early). lws may
 * already have reported a failure through the callback when this returns
 * NULL.
 */
struct lws *aj_ws_connect(struct lws_context *ctx, const struct aj_ws_server *sv,
			  const char *path, const char *subprotocol,
			  const char *local_protocol, void *user, struct lws **pwsi);

/*
 * In LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER: add "Authorization:
 * Bearer TOKEN" (nothing when token is NULL). The copy made for it is
 * wiped. 0 / -1 (no room).
 */
int aj_ws_add_bearer(struct lws *wsi, const char *token, unsigned char **p,
		     unsigned char *end);

#endif
