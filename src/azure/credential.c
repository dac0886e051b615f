/* pipe2() for close-on-exec pipes to the CLI child. */
#define _GNU_SOURCE

#include "azure/credential.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/crypto.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "core/timestamp.h"

extern char **environ;

#define REFRESH_OFFSET_S 300      /* refresh this long before expiry */
#define REFRESH_RETRY_MS 30000    /* at most one eager refresh per 30 s */
#define FEDERATED_TOKEN_MAX (64u * 1024u)
#define CLI_OUTPUT_MAX (1024u * 1024u)
#define DESCRIPTION_MAX 300

void aj_token_release(struct aj_token *t)
{
	if (t->value) {
		OPENSSL_cleanse(t->value, strlen(t->value));
		aj_free(t->value);
	}
	memset(t, 0, sizeof(*t));
}

/* Wipe a buffer that held a secret (form bodies, CLI output) and free it. */
static void buf_wipe(struct aj_buf *b)
{
	if (b->buf)
		OPENSSL_cleanse(b->buf, b->alloc);
	aj_buf_release(b);
}

int aj_credential_get_token(struct aj_credential *c, const char *scope,
			    struct aj_token *out, struct aj_errors *err)
{
	memset(out, 0, sizeof(*out));
	return c->get_token(c, scope, out, err);
}

void aj_credential_free(struct aj_credential *c)
{
	if (c)
		c->free(c);
}

int aj_imds_retryable(long status)
{
	return status == 404 || status == 410 || status == 429 ||
		(status >= 500 && status <= 599);
}

void aj_identity_config_default(struct aj_identity_config *c)
{
	memset(c, 0, sizeof(*c));
	c->http.timeout_ms = 30000;
	c->http.connect_timeout_ms = 5000;
	c->imds_retry.max_retries = 5;
	c->imds_retry.base_delay_ms = 1000;
	c->imds_retry.max_delay_ms = 60000;
	c->imds_retry.max_retry_after_ms = 60000;
	c->imds_retry.max_total_ms = 90000;
	c->imds_retry.retryable = aj_imds_retryable;
	c->imds_endpoint = "http://169.254.169.254";
	c->imds_api_version = "2018-02-01";
	c->authority_host = "https://login.microsoftonline.com/";
	c->az_path = "az";
	c->cli_timeout_ms = 30000;
}

static const char *env_or(const char *name, const char *dflt)
{
	const char *v = getenv(name);

	return v && *v ? v : dflt;
}

void aj_identity_config_from_env(struct aj_identity_config *c)
{
	aj_identity_config_default(c);
	c->imds_endpoint = env_or("AZURE_POD_IDENTITY_AUTHORITY_HOST", c->imds_endpoint);
	c->authority_host = env_or("AZURE_AUTHORITY_HOST", c->authority_host);
	c->tenant_id = env_or("AZURE_TENANT_ID", NULL);
	c->client_id = env_or("AZURE_CLIENT_ID", NULL);
	c->client_secret = env_or("AZURE_CLIENT_SECRET", NULL);
	c->federated_token_file = env_or("AZURE_FEDERATED_TOKEN_FILE", NULL);
	/* A user-assigned identity is selected by the same client id. */
	c->mi_client_id = c->client_id;
}

int aj_scope_to_resource(const char *scope, struct aj_buf *out)
{
	static const char suffix[] = ".default";
	size_t n = strlen(scope), s = sizeof(suffix) - 1;

	if (n > s && !strcmp(scope + n - s, suffix))
		n -= s;
	return aj_buf_add(out, scope, n);
}

int64_t aj_token_parse_time(const char *s)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (!errno && !*end && v > 0)
		return (int64_t)v;
	return aj_timestamp_parse(s, 1);
}

/* The end of year 9999: later expiries are junk, and converting them would overflow. */
#define TIME_MAX_S 253402300799.0

/* A JSON member that may be a number or a string; NULL-safe; -1 when unusable. */
static int64_t json_time_or_number(const cJSON *v)
{
	if (cJSON_IsNumber(v))
		return aj_json_whole(v, TIME_MAX_S, -1);
	if (cJSON_IsString(v))
		return aj_token_parse_time(v->valuestring);
	return -1;
}

/*
 * Turn a token response into *out. `token_key`/`expiry_keys` name the
 * members (the CLI spells them differently). The body is never quoted in
 * an error: it holds the token.
 */
static int token_from_json(const struct aj_buf *body, const char *kind,
			   int64_t now_s, const char *token_key,
			   struct aj_token *out, struct aj_errors *err)
{
	cJSON *j = cJSON_ParseWithLength(aj_buf_cstr(body), body->len);
	const cJSON *tok, *v;
	int64_t exp = -1, in;

	if (!j)
		return aj_errors_add(err, NULL, "%s: token response is not valid JSON", kind);
	tok = cJSON_GetObjectItemCaseSensitive(j, token_key);
	if (!cJSON_IsString(tok) || !*tok->valuestring) {
		cJSON_Delete(j);
		return aj_errors_add(err, NULL, "%s: token response has no %s", kind, token_key);
	}
	v = cJSON_GetObjectItemCaseSensitive(j, "expires_on");
	exp = json_time_or_number(v);
	if (exp < 0) {
		v = cJSON_GetObjectItemCaseSensitive(j, "expiresOn");
		exp = json_time_or_number(v);
	}
	if (exp < 0) {
		in = json_time_or_number(cJSON_GetObjectItemCaseSensitive(j, "expires_in"));
		if (in > 0)
			exp = now_s + in;
	}
	if (exp <= 0) {
		cJSON_Delete(j);
		return aj_errors_add(err, NULL, "%s: token response has no usable expiry", kind);
	}
	in = json_time_or_number(cJSON_GetObjectItemCaseSensitive(j, "refresh_in"));
	out->value = aj_strdup(tok->valuestring);
	out->expires_on = exp;
	out->refresh_on = in > 0 ? now_s + in : 0;
	OPENSSL_cleanse(tok->valuestring, strlen(tok->valuestring));
	cJSON_Delete(j);
	if (!out->value)
		return aj_errors_oom(err);
	return 0;
}

/*
 * Identity endpoints answer errors as {"error": "...", "error_description":
 * "..."}; some wrap an ARM-style {"error": {"code", "message"}}.
 */
static int identity_error(const struct aj_http_response *resp, const char *kind,
			  struct aj_errors *err)
{
	cJSON *j = cJSON_ParseWithLength(aj_buf_cstr(&resp->body), resp->body.len);
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(j, "error");
	const char *code = NULL, *desc = NULL;
	char attempts[32] = "";

	if (cJSON_IsString(e)) {
		const cJSON *d = cJSON_GetObjectItemCaseSensitive(j, "error_description");

		code = e->valuestring;
		desc = cJSON_IsString(d) ? d->valuestring : NULL;
	} else if (cJSON_IsObject(e)) {
		const cJSON *c = cJSON_GetObjectItemCaseSensitive(e, "code");
		const cJSON *m = cJSON_GetObjectItemCaseSensitive(e, "message");

		code = cJSON_IsString(c) ? c->valuestring : NULL;
		desc = cJSON_IsString(m) ? m->valuestring : NULL;
	}
	if (resp->attempts > 1)
		snprintf(attempts, sizeof(attempts), " (after %d attempts)", resp->attempts);
	if (code && desc)
		aj_errors_add(err, NULL, "%s: HTTP %ld: %s: %.*s%s", kind, resp->status,
			      code, DESCRIPTION_MAX, desc, attempts);
	else if (code)
		aj_errors_add(err, NULL, "%s: HTTP %ld: %s%s", kind, resp->status, code, attempts);
	else
		aj_errors_add(err, NULL, "%s: HTTP %ld%s", kind, resp->status, attempts);
	cJSON_Delete(j);
	return -1;
}

/* ---- HTTP-based providers ---------------------------------------------- */

enum http_kind { KIND_IMDS, KIND_SECRET, KIND_WORKLOAD };

struct http_credential {
	struct aj_credential base;
	enum http_kind kind;
	struct aj_http http;
	struct aj_retry_policy retry;
	char *endpoint;      /* IMDS base or the Entra token URL */
	char *api_version;
	char *selector_key;  /* IMDS: client_id / object_id / msi_res_id */
	char *selector;
	char *client_id;
	char *secret;        /* client secret */
	char *token_file;    /* federated token file, re-read on every request */
	int probe;           /* IMDS in a chain: first failure to connect = absent */
};

static void http_credential_free(struct aj_credential *c)
{
	struct http_credential *h = (struct http_credential *)c;

	aj_http_release(&h->http);
	aj_free(h->endpoint);
	aj_free(h->api_version);
	aj_free(h->selector_key);
	aj_free(h->selector);
	aj_free(h->client_id);
	if (h->secret) {
		OPENSSL_cleanse(h->secret, strlen(h->secret));
		aj_free(h->secret);
	}
	aj_free(h->token_file);
	aj_free(h);
}

static int dup_opt(char **dst, const char *src)
{
	if (!src)
		return 0;
	*dst = aj_strdup(src);
	return *dst ? 0 : -1;
}

static int read_token_file(const char *path, struct aj_buf *out,
			   struct aj_errors *err)
{
	char chunk[4096];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return aj_errors_add(err, NULL, "workload-identity: cannot read the federated token file %s: %s",
				     path, strerror(errno));
	while ((n = read(fd, chunk, sizeof(chunk))) > 0) {
		if (aj_buf_add(out, chunk, (size_t)n)) {
			close(fd);
			OPENSSL_cleanse(chunk, sizeof(chunk));
			return aj_errors_add(err, NULL, "workload-identity: federated token file %s is too large",
					     path);
		}
	}
	OPENSSL_cleanse(chunk, sizeof(chunk));
	close(fd);
	if (n < 0)
		return aj_errors_add(err, NULL, "workload-identity: cannot read the federated token file %s: %s",
				     path, strerror(errno));
	while (out->len && strchr(" \t\r\n", out->buf[out->len - 1]))
		out->buf[--out->len] = '\0';
	if (!out->len)
		return aj_errors_add(err, NULL, "workload-identity: the federated token file %s is empty", path);
	return 0;
}

static int imds_request(struct http_credential *h, const char *scope,
			struct aj_http_request *req, struct aj_buf *url)
{
	struct aj_buf res = AJ_BUF_INIT(AJ_BUF_SMALL);
	int rc;

	rc = aj_buf_addf(url, "%s/metadata/identity/oauth2/token?api-version=",
			 h->endpoint);
	rc |= aj_http_urlencode(url, h->api_version);
	rc |= aj_buf_addstr(url, "&resource=");
	rc |= aj_scope_to_resource(scope, &res);
	rc |= aj_http_urlencode(url, aj_buf_cstr(&res));
	if (h->selector) {
		rc |= aj_buf_addf(url, "&%s=", h->selector_key);
		rc |= aj_http_urlencode(url, h->selector);
	}
	aj_buf_release(&res);
	if (rc)
		return -1;
	aj_http_request_init(req, "GET", aj_buf_cstr(url));
	return aj_http_request_header(req, "Metadata: true");
}

static int entra_request(struct http_credential *h, const char *scope,
			 struct aj_http_request *req, struct aj_buf *form,
			 struct aj_errors *err)
{
	struct aj_buf assertion = AJ_BUF_INIT(FEDERATED_TOKEN_MAX);
	int rc;

	if (h->kind == KIND_WORKLOAD && read_token_file(h->token_file, &assertion, err)) {
		buf_wipe(&assertion);
		return -1;
	}
	rc = aj_buf_addstr(form, "grant_type=client_credentials&client_id=");
	rc |= aj_http_urlencode(form, h->client_id);
	rc |= aj_buf_addstr(form, "&scope=");
	rc |= aj_http_urlencode(form, scope);
	if (h->kind == KIND_WORKLOAD) {
		rc |= aj_buf_addstr(form, "&client_assertion_type=");
		rc |= aj_http_urlencode(form, "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
		rc |= aj_buf_addstr(form, "&client_assertion=");
		rc |= aj_http_urlencode(form, aj_buf_cstr(&assertion));
	} else {
		rc |= aj_buf_addstr(form, "&client_secret=");
		rc |= aj_http_urlencode(form, h->secret);
	}
	buf_wipe(&assertion);
	if (rc)
		return aj_errors_oom(err);
	aj_http_request_init(req, "POST", h->endpoint);
	req->body = aj_buf_cstr(form);
	req->body_len = form->len;
	if (aj_http_request_header(req, "Content-Type: application/x-www-form-urlencoded"))
		return aj_errors_oom(err);
	return 0;
}

static int http_get_token(struct aj_credential *c, const char *scope,
			  struct aj_token *out, struct aj_errors *err)
{
	struct http_credential *h = (struct http_credential *)c;
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf form = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_http_request req;
	struct aj_http_response resp;
	struct aj_errors sub = AJ_ERRORS_INIT;
	const struct aj_retry_policy *policy = &h->retry;
	int rc = -1;

	aj_http_request_init(&req, "GET", "");
	aj_http_response_init(&resp);
	if (h->kind == KIND_IMDS) {
		if (imds_request(h, scope, &req, &url)) {
			aj_errors_oom(err);
			goto done;
		}
		if (h->probe) {
			/* Off Azure nothing listens: find out fast, once. */
			req.connect_timeout_ms = 1000;
			policy = NULL;
		}
	} else if (entra_request(h, scope, &req, &form, err)) {
		goto done;
	}

	if (aj_http_send(&h->http, policy, &req, &resp, &sub)) {
		if (h->probe) {
			aj_errors_release(&sub);
			aj_errors_add(err, NULL, "%s: no identity endpoint at %s", c->kind, h->endpoint);
			rc = AJ_CREDENTIAL_UNAVAILABLE;
		} else {
			aj_errors_add(err, NULL, "%s: token request failed", c->kind);
			aj_errors_splice(err, &sub);
		}
		goto done;
	}
	h->probe = 0;
	if (resp.status == 200) {
		rc = token_from_json(&resp.body, c->kind,
				     aj_azure_now_ms(&h->http.hooks) / 1000,
				     "access_token", out, err);
	} else {
		identity_error(&resp, c->kind, err);
		/* IMDS says 400 when no such identity is assigned here. */
		if (h->kind == KIND_IMDS && resp.status == 400)
			rc = AJ_CREDENTIAL_UNAVAILABLE;
	}
done:
	if (resp.body.buf)
		OPENSSL_cleanse(resp.body.buf, resp.body.alloc);
	aj_http_response_release(&resp);
	aj_http_request_release(&req);
	aj_buf_release(&url);
	buf_wipe(&form);
	return rc;
}

static int http_credential_new(const struct aj_identity_config *c,
			       enum http_kind kind, struct aj_credential **out,
			       struct aj_errors *err)
{
	static const char *const kinds[] = {
		[KIND_IMDS] = "managed-identity",
		[KIND_SECRET] = "client-secret",
		[KIND_WORKLOAD] = "workload-identity",
	};
	struct http_credential *h = aj_calloc(1, sizeof(*h));
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);
	int rc = 0;

	*out = NULL;
	if (!h)
		return aj_errors_oom(err);
	h->base.kind = kinds[kind];
	h->base.get_token = http_get_token;
	h->base.free = http_credential_free;
	h->kind = kind;
	if (aj_http_init(&h->http, &c->http, &c->hooks, err)) {
		aj_free(h);
		return -1;
	}
	if (kind == KIND_IMDS) {
		h->retry = c->imds_retry;
		rc |= aj_buf_add(&url, c->imds_endpoint, strlen(c->imds_endpoint));
		while (url.len && url.buf[url.len - 1] == '/')
			url.buf[--url.len] = '\0';
		rc |= dup_opt(&h->api_version, c->imds_api_version);
		if (c->mi_client_id)
			rc |= dup_opt(&h->selector_key, "client_id") | dup_opt(&h->selector, c->mi_client_id);
		else if (c->mi_object_id)
			rc |= dup_opt(&h->selector_key, "object_id") | dup_opt(&h->selector, c->mi_object_id);
		else if (c->mi_resource_id)
			rc |= dup_opt(&h->selector_key, "msi_res_id") | dup_opt(&h->selector, c->mi_resource_id);
	} else {
		aj_retry_policy_default(&h->retry);
		/* The authority host carries a trailing slash by convention; accept both. */
		rc |= aj_buf_addf(&url, "%s%s%s/oauth2/v2.0/token", c->authority_host,
				  c->authority_host[0] && c->authority_host[strlen(c->authority_host) - 1] == '/' ? "" : "/",
				  c->tenant_id);
		rc |= dup_opt(&h->client_id, c->client_id);
		if (kind == KIND_SECRET)
			rc |= dup_opt(&h->secret, c->client_secret);
		else
			rc |= dup_opt(&h->token_file, c->federated_token_file);
	}
	if (!rc)
		h->endpoint = aj_buf_detach(&url, NULL);
	aj_buf_release(&url);
	if (rc || !h->endpoint) {
		http_credential_free(&h->base);
		return aj_errors_oom(err);
	}
	*out = &h->base;
	return 0;
}

static int require(struct aj_errors *err, const char *kind, const char *what,
		   const char *value)
{
	if (value && *value)
		return 0;
	return aj_errors_add(err, NULL, "%s: %s is not set", kind, what);
}

int aj_credential_imds_new(const struct aj_identity_config *c,
			   struct aj_credential **out, struct aj_errors *err)
{
	if (!!c->mi_client_id + !!c->mi_object_id + !!c->mi_resource_id > 1) {
		*out = NULL;
		return aj_errors_add(err, NULL, "managed-identity: choose one of client id, object id and resource id");
	}
	return http_credential_new(c, KIND_IMDS, out, err);
}

int aj_credential_workload_new(const struct aj_identity_config *c,
			       struct aj_credential **out, struct aj_errors *err)
{
	*out = NULL;
	if (require(err, "workload-identity", "AZURE_TENANT_ID", c->tenant_id) |
	    require(err, "workload-identity", "AZURE_CLIENT_ID", c->client_id) |
	    require(err, "workload-identity", "AZURE_FEDERATED_TOKEN_FILE", c->federated_token_file))
		return -1;
	return http_credential_new(c, KIND_WORKLOAD, out, err);
}

int aj_credential_secret_new(const struct aj_identity_config *c,
			     struct aj_credential **out, struct aj_errors *err)
{
	*out = NULL;
	if (require(err, "client-secret", "AZURE_TENANT_ID", c->tenant_id) |
	    require(err, "client-secret", "AZURE_CLIENT_ID", c->client_id) |
	    require(err, "client-secret", "AZURE_CLIENT_SECRET", c->client_secret))
		return -1;
	return http_credential_new(c, KIND_SECRET, out, err);
}

/* ---- Azure CLI ----------------------------------------------------------- */

struct cli_credential {
	struct aj_credential base;
	char *az_path;
	long timeout_ms;
	struct aj_azure_hooks hooks;
};

static void cli_free(struct aj_credential *c)
{
	struct cli_credential *cc = (struct cli_credential *)c;

	aj_free(cc->az_path);
	aj_free(cc);
}

/*
 * Read the child's stdout and stderr until both close or the deadline
 * passes. Returns 0, or -1 on timeout / overflow (the child is then killed).
 */
static int cli_collect(int fds[2], struct aj_buf *outs[2], long timeout_ms)
{
	struct timespec start, now;
	char chunk[4096];

	clock_gettime(CLOCK_MONOTONIC, &start);
	while (fds[0] >= 0 || fds[1] >= 0) {
		struct pollfd p[2];
		long left;
		int n;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = timeout_ms - ((now.tv_sec - start.tv_sec) * 1000 +
				     (now.tv_nsec - start.tv_nsec) / 1000000);
		if (left <= 0)
			return -1;
		for (int i = 0; i < 2; i++) {
			p[i].fd = fds[i];
			p[i].events = POLLIN;
			p[i].revents = 0;
		}
		n = poll(p, 2, (int)left);
		if (n < 0 && errno != EINTR)
			return -1;
		for (int i = 0; n > 0 && i < 2; i++) {
			ssize_t r;

			if (fds[i] < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			r = read(fds[i], chunk, sizeof(chunk));
			if (r > 0 && aj_buf_add(outs[i], chunk, (size_t)r))
				return -1;
			if (r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN)) {
				close(fds[i]);
				fds[i] = -1;
			}
		}
	}
	OPENSSL_cleanse(chunk, sizeof(chunk));
	return 0;
}

/* The first line of the CLI's complaint, bounded. */
static void cli_error(struct aj_errors *err, const struct aj_buf *stderr_text, int status)
{
	const char *s = aj_buf_cstr(stderr_text);
	size_t n;

	while (*s == '\n' || *s == ' ')
		s++;
	n = strcspn(s, "\n");
	if (n > DESCRIPTION_MAX)
		n = DESCRIPTION_MAX;
	aj_errors_add(err, NULL, "azure-cli: az account get-access-token exited with status %d%s%.*s",
		      status, n ? ": " : "", (int)n, s);
}

static int cli_get_token(struct aj_credential *c, const char *scope,
			 struct aj_token *out, struct aj_errors *err)
{
	struct cli_credential *cc = (struct cli_credential *)c;
	struct aj_buf res = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf sout = AJ_BUF_INIT(CLI_OUTPUT_MAX), serr = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf *outs[2] = { &sout, &serr };
	posix_spawn_file_actions_t fa;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, fds[2];
	char *argv[8];
	pid_t pid;
	int status = 0, rc = -1, spawn_rc, collected;

	if (aj_scope_to_resource(scope, &res)) {
		aj_buf_release(&res);
		return aj_errors_oom(err);
	}
	argv[0] = cc->az_path;
	argv[1] = (char *)"account";
	argv[2] = (char *)"get-access-token";
	argv[3] = (char *)"--resource";
	argv[4] = res.buf;
	argv[5] = (char *)"-o";
	argv[6] = (char *)"json";
	argv[7] = NULL;

	if (pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		aj_errors_add(err, NULL, "azure-cli: cannot create a pipe: %s", strerror(errno));
		goto close_pipes;
	}
	if (posix_spawn_file_actions_init(&fa)) {
		aj_errors_oom(err);
		goto close_pipes;
	}
	if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) ||
	    posix_spawn_file_actions_adddup2(&fa, po[1], 1) ||
	    posix_spawn_file_actions_adddup2(&fa, pe[1], 2)) {
		posix_spawn_file_actions_destroy(&fa);
		aj_errors_oom(err);
		goto close_pipes;
	}
	spawn_rc = posix_spawnp(&pid, cc->az_path, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (spawn_rc) {
		aj_errors_add(err, NULL, "azure-cli: cannot run %s: %s", cc->az_path, strerror(spawn_rc));
		rc = spawn_rc == ENOENT || spawn_rc == EACCES ? AJ_CREDENTIAL_UNAVAILABLE : -1;
		goto close_pipes;
	}
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	fds[0] = po[0];
	fds[1] = pe[0];
	collected = cli_collect(fds, outs, cc->timeout_ms);
	po[0] = fds[0];
	pe[0] = fds[1];
	if (collected)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (collected) {
		aj_errors_add(err, NULL, "azure-cli: az account get-access-token did not finish within %ld ms",
			      cc->timeout_ms);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		cli_error(err, &serr, WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		/* Not logged in: the CLI is there but has nothing to offer. */
		if (strstr(aj_buf_cstr(&serr), "az login"))
			rc = AJ_CREDENTIAL_UNAVAILABLE;
	} else {
		rc = token_from_json(&sout, c->kind, aj_azure_now_ms(&cc->hooks) / 1000,
				     "accessToken", out, err);
	}
close_pipes:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	buf_wipe(&sout);
	aj_buf_release(&serr);
	aj_buf_release(&res);
	return rc;
}

int aj_credential_cli_new(const struct aj_identity_config *c,
			  struct aj_credential **out, struct aj_errors *err)
{
	struct cli_credential *cc = aj_calloc(1, sizeof(*cc));

	*out = NULL;
	if (!cc || !(cc->az_path = aj_strdup(c->az_path ? c->az_path : "az"))) {
		aj_free(cc);
		return aj_errors_oom(err);
	}
	cc->base.kind = "azure-cli";
	cc->base.get_token = cli_get_token;
	cc->base.free = cli_free;
	cc->timeout_ms = c->cli_timeout_ms > 0 ? c->cli_timeout_ms : 30000;
	cc->hooks = c->hooks;
	*out = &cc->base;
	return 0;
}

/* ---- chain --------------------------------------------------------------- */

#define CHAIN_MAX 4

struct chain_credential {
	struct aj_credential base;
	struct aj_credential *members[CHAIN_MAX];
	int nr;
	int chosen;  /* index of the member that answered first, or -1 */
};

static void chain_free(struct aj_credential *c)
{
	struct chain_credential *ch = (struct chain_credential *)c;

	for (int i = 0; i < ch->nr; i++)
		aj_credential_free(ch->members[i]);
	aj_free(ch);
}

static int chain_get_token(struct aj_credential *c, const char *scope,
			   struct aj_token *out, struct aj_errors *err)
{
	struct chain_credential *ch = (struct chain_credential *)c;
	struct aj_errors tried = AJ_ERRORS_INIT;
	int rc;

	if (ch->chosen >= 0)
		return aj_credential_get_token(ch->members[ch->chosen], scope, out, err);
	for (int i = 0; i < ch->nr; i++) {
		rc = aj_credential_get_token(ch->members[i], scope, out, &tried);
		if (rc == 0) {
			ch->chosen = i;
			aj_errors_release(&tried);
			return 0;
		}
		if (rc != AJ_CREDENTIAL_UNAVAILABLE) {
			aj_errors_splice(err, &tried);
			return -1;
		}
	}
	aj_errors_add(err, NULL, "no Azure credential is available; tried:");
	aj_errors_splice(err, &tried);
	return AJ_CREDENTIAL_UNAVAILABLE;
}

int aj_credential_chain_new(const struct aj_identity_config *c,
			    struct aj_credential **out, struct aj_errors *err)
{
	struct chain_credential *ch = aj_calloc(1, sizeof(*ch));
	struct aj_credential *m;

	*out = NULL;
	if (!ch)
		return aj_errors_oom(err);
	ch->base.kind = "chain";
	ch->base.get_token = chain_get_token;
	ch->base.free = chain_free;
	ch->chosen = -1;
	if (c->tenant_id && c->client_id && c->client_secret) {
		if (aj_credential_secret_new(c, &m, err))
			goto fail;
		ch->members[ch->nr++] = m;
	}
	if (c->tenant_id && c->client_id && c->federated_token_file) {
		if (aj_credential_workload_new(c, &m, err))
			goto fail;
		ch->members[ch->nr++] = m;
	}
	if (aj_credential_imds_new(c, &m, err))
		goto fail;
	((struct http_credential *)m)->probe = 1;
	ch->members[ch->nr++] = m;
	if (aj_credential_cli_new(c, &m, err))
		goto fail;
	ch->members[ch->nr++] = m;
	*out = &ch->base;
	return 0;
fail:
	chain_free(&ch->base);
	return -1;
}

/* ---- cache --------------------------------------------------------------- */

struct cache_entry {
	char *scope;
	struct aj_token token;
	int64_t last_try_ms;
	int acquiring;
};

struct aj_token_cache {
	struct aj_credential *cred;
	struct aj_azure_hooks hooks;
	pthread_mutex_t lock;
	pthread_cond_t done;
	/* Providers hold one HTTP handle each: one acquisition at a time. */
	pthread_mutex_t acquire;
	struct cache_entry *entries;
	size_t nr, alloc;
};

int aj_token_cache_new(struct aj_credential *cred,
		       const struct aj_azure_hooks *hooks,
		       struct aj_token_cache **out, struct aj_errors *err)
{
	struct aj_token_cache *c = aj_calloc(1, sizeof(*c));

	*out = NULL;
	if (!c) {
		aj_credential_free(cred);
		return aj_errors_oom(err);
	}
	c->cred = cred;
	if (hooks)
		c->hooks = *hooks;
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->done, NULL);
	pthread_mutex_init(&c->acquire, NULL);
	*out = c;
	return 0;
}

void aj_token_cache_free(struct aj_token_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nr; i++) {
		aj_free(c->entries[i].scope);
		aj_token_release(&c->entries[i].token);
	}
	aj_free(c->entries);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->done);
	pthread_mutex_destroy(&c->acquire);
	aj_credential_free(c->cred);
	aj_free(c);
}

static struct cache_entry *cache_find(struct aj_token_cache *c, const char *scope)
{
	for (size_t i = 0; i < c->nr; i++)
		if (!strcmp(c->entries[i].scope, scope))
			return &c->entries[i];
	return NULL;
}

/* Index rather than pointer: the array may move while the lock is dropped. */
static long cache_slot(struct aj_token_cache *c, const char *scope)
{
	struct cache_entry *e = cache_find(c, scope);
	char *s;

	if (e)
		return (long)(e - c->entries);
	if (AJ_GROW(c->entries, c->nr + 1, c->alloc))
		return -1;
	s = aj_strdup(scope);
	if (!s)
		return -1;
	memset(&c->entries[c->nr], 0, sizeof(c->entries[c->nr]));
	c->entries[c->nr].scope = s;
	return (long)c->nr++;
}

static int64_t refresh_at(const struct aj_token *t)
{
	int64_t at = t->expires_on - REFRESH_OFFSET_S;

	return t->refresh_on > 0 && t->refresh_on < at ? t->refresh_on : at;
}

static int token_copy(const struct aj_token *src, struct aj_token *dst,
		      struct aj_errors *err)
{
	*dst = *src;
	dst->value = aj_strdup(src->value);
	return dst->value ? 0 : aj_errors_oom(err);
}

int aj_token_cache_get(struct aj_token_cache *c, const char *scope,
		       struct aj_token *out, struct aj_errors *err)
{
	struct aj_errors sub = AJ_ERRORS_INIT;
	struct aj_token fresh;
	struct cache_entry *e;
	int64_t now_ms, now;
	long slot;
	int rc, eager;

	memset(out, 0, sizeof(*out));
	pthread_mutex_lock(&c->lock);
	slot = cache_slot(c, scope);
	if (slot < 0) {
		pthread_mutex_unlock(&c->lock);
		return aj_errors_oom(err);
	}
	for (;;) {
		e = &c->entries[slot];
		now_ms = aj_azure_now_ms(&c->hooks);
		now = now_ms / 1000;
		if (e->token.value && now < refresh_at(&e->token))
			goto hit;
		eager = e->token.value && now < e->token.expires_on;
		/* Due for refresh but still valid: one caller refreshes, at most every 30 s. */
		if (eager && (e->acquiring || now_ms - e->last_try_ms < REFRESH_RETRY_MS))
			goto hit;
		if (!e->acquiring)
			break;
		pthread_cond_wait(&c->done, &c->lock);
	}
	e->acquiring = 1;
	e->last_try_ms = now_ms;
	pthread_mutex_unlock(&c->lock);

	pthread_mutex_lock(&c->acquire);
	rc = aj_credential_get_token(c->cred, scope, &fresh, &sub);
	pthread_mutex_unlock(&c->acquire);
	if (rc == 0 && fresh.refresh_on == 0 && fresh.expires_on - now > 7200)
		fresh.refresh_on = now + (fresh.expires_on - now) / 2;

	pthread_mutex_lock(&c->lock);
	e = &c->entries[slot];
	e->acquiring = 0;
	pthread_cond_broadcast(&c->done);
	if (rc == 0) {
		aj_token_release(&e->token);
		e->token = fresh;
	} else if (eager && e->token.value) {
		/* The old token still works; the next caller after 30 s tries again. */
		aj_azure_logf(&c->hooks, "token refresh for %s failed; keeping the current token until it expires",
			      scope);
		aj_errors_release(&sub);
	} else {
		pthread_mutex_unlock(&c->lock);
		aj_errors_splice(err, &sub);
		return -1;
	}
hit:
	rc = token_copy(&c->entries[slot].token, out, err);
	pthread_mutex_unlock(&c->lock);
	return rc;
}

void aj_token_cache_expire(struct aj_token_cache *c, const char *scope)
{
	struct cache_entry *e;

	pthread_mutex_lock(&c->lock);
	e = cache_find(c, scope);
	if (e && !e->acquiring)
		aj_token_release(&e->token);
	pthread_mutex_unlock(&c->lock);
}
