#include "ws.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/kubeconfig.h"

#define WS_FD_LIMIT 1024

int aj_ws_server_parse(const struct aj_kube_config *cfg, const char *what,
		       struct aj_ws_server *sv, struct aj_errors *err)
{
	const char *url = cfg->server, *p, *h, *hend, *port;
	char *end;
	long v;

	memset(sv, 0, sizeof(*sv));
	sv->insecure = cfg->insecure;
	if (!strncmp(url, "https://", 8)) {
		sv->tls = 1;
		p = url + 8;
	} else if (!strncmp(url, "http://", 7)) {
		p = url + 7;
	} else {
		return aj_errors_add(err, NULL, "%s: server %s is not an http(s) URL", what, url);
	}
	h = p;
	if (*p == '[') {
		h = ++p;
		hend = strchr(p, ']');
		if (!hend)
			return aj_errors_add(err, NULL, "%s: bad server address %s", what, url);
		port = hend + 1;
	} else {
		hend = p + strcspn(p, ":/");
		port = hend;
	}
	if ((size_t)(hend - h) >= sizeof(sv->host) || hend == h)
		return aj_errors_add(err, NULL, "%s: bad server address %s", what, url);
	memcpy(sv->host, h, (size_t)(hend - h));
	sv->port = sv->tls ? 443 : 80;
	if (*port == ':') {
		errno = 0;
		v = strtol(port + 1, &end, 10);
		if (errno || end == port + 1 || v < 1 || v > 65535 || (*end && *end != '/'))
			return aj_errors_add(err, NULL, "%s: bad server port in %s", what, url);
		sv->port = (int)v;
		port = end;
	}
	sv->prefix = port;
	return 0;
}

struct lws_context *aj_ws_context_new(const struct aj_kube_config *cfg,
				      const struct aj_ws_server *sv,
				      const struct lws_protocols *protocols,
				      const char *what, struct aj_errors *err)
{
	struct lws_context_creation_info info;
	struct lws_context *ctx;

	lws_set_log_level(0, NULL);
	memset(&info, 0, sizeof(info));
	info.port = CONTEXT_PORT_NO_LISTEN;
	info.protocols = protocols;
	info.gid = -1;
	info.uid = -1;
	/*
	 * lws sizes (and zeroes) its fd tables from RLIMIT_NOFILE, which is a
	 * million in many containers: megabytes for a handful of sockets. Socket
	 * numbers stay low (the lowest free one is reused), so 1024 is plenty.
	 */
	info.fd_limit_per_thread = WS_FD_LIMIT;
	if (sv->tls) {
		info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
		info.client_ssl_ca_filepath = cfg->ca_file;
		if (cfg->ca.data) {
			info.client_ssl_ca_mem = cfg->ca.data;
			info.client_ssl_ca_mem_len = (unsigned)cfg->ca.len;
		}
		info.client_ssl_cert_filepath = cfg->cert_file;
		if (cfg->cert.data) {
			info.client_ssl_cert_mem = cfg->cert.data;
			info.client_ssl_cert_mem_len = (unsigned)cfg->cert.len;
		}
		info.client_ssl_private_key_filepath = cfg->key_file;
		if (cfg->key.data) {
			info.client_ssl_key_mem = cfg->key.data;
			info.client_ssl_key_mem_len = (unsigned)cfg->key.len;
		}
	}
	ctx = lws_create_context(&info);
	if (!ctx)
		aj_errors_add(err, NULL, "%s: cannot set up the WebSocket client "
			      "(CA, client certificate or key of %s unreadable?)", what,
			      cfg->origin ? cfg->origin : "the configuration");
	return ctx;
}

struct lws *aj_ws_connect(struct lws_context *ctx, const struct aj_ws_server *sv,
			  const char *path, const char *subprotocol,
			  const char *local_protocol, void *user, struct lws **pwsi)
{
	struct lws_client_connect_info ci;
	struct aj_buf full = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct lws *wsi;

	aj_buf_addstr(&full, sv->prefix);
	aj_buf_addstr(&full, path);
	if (full.failed) {
		aj_buf_release(&full);
		return NULL;
	}
	memset(&ci, 0, sizeof(ci));
	ci.context = ctx;
	ci.address = sv->host;
	ci.port = sv->port;
	ci.path = aj_buf_cstr(&full);
	ci.host = sv->host;
	ci.origin = sv->host;
	/* A WebSocket upgrade is an HTTP/1.1 request: never negotiate h2. */
	ci.alpn = "http/1.1";
	ci.ssl_connection = sv->tls ? LCCSCF_USE_SSL : 0;
	if (sv->tls && sv->insecure)
		ci.ssl_connection |= LCCSCF_ALLOW_SELFSIGNED | LCCSCF_ALLOW_EXPIRED |
				     LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK | LCCSCF_ALLOW_INSECURE;
	ci.protocol = subprotocol;
	ci.local_protocol_name = local_protocol;
	ci.opaque_user_data = user;
	ci.pwsi = pwsi;
	/* lws copies what it keeps of ci before returning. */
	wsi = lws_client_connect_via_info(&ci);
	aj_buf_release(&full);
	return wsi;
}

int aj_ws_add_bearer(struct lws *wsi, const char *token, unsigned char **p,
		     unsigned char *end)
{
	struct aj_buf h = AJ_BUF_INIT(AJ_BUF_SMALL);
	int r;

	if (!token)
		return 0;
	aj_buf_addf(&h, "Bearer %s", token);
	r = h.failed || lws_add_http_header_by_token(
		wsi, WSI_TOKEN_HTTP_AUTHORIZATION, (const unsigned char *)h.buf,
		(int)h.len, p, end);
	if (h.buf)
		explicit_bzero(h.buf, h.len);
	aj_buf_release(&h);
	return r ? -1 : 0;
}
