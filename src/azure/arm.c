#include "azure/arm.h"

#include <string.h>

#include "azure/access.h"
#include "azure/credential.h"
#include "core/alloc.h"
#include "core/error.h"

#define ARM_MESSAGE_MAX 1000

void aj_arm_config_default(struct aj_arm_config *c)
{
	memset(c, 0, sizeof(*c));
	c->endpoint = "https://management.azure.com";
	c->scope = "https://management.azure.com/.default";
	aj_retry_policy_default(&c->retry);
	c->poll_default_ms = 10000;
	c->poll_max_ms = 60000;
}

int aj_arm_init(struct aj_arm *a, const struct aj_arm_config *c,
		struct aj_token_cache *tokens, struct aj_errors *err)
{
	size_t n = strlen(c->endpoint);

	memset(a, 0, sizeof(*a));
	while (n && c->endpoint[n - 1] == '/')
		n--;
	a->endpoint = aj_strndup(c->endpoint, n);
	a->scope = aj_strdup(c->scope);
	if (!a->endpoint || !a->scope) {
		aj_arm_release(a);
		return aj_errors_oom(err);
	}
	if (aj_http_init(&a->http, &c->http, &c->hooks, err)) {
		aj_arm_release(a);
		return -1;
	}
	a->tokens = tokens;
	a->retry = c->retry;
	a->poll_default_ms = c->poll_default_ms > 0 ? c->poll_default_ms : 10000;
	a->poll_max_ms = c->poll_max_ms > 0 ? c->poll_max_ms : 60000;
	return 0;
}

void aj_arm_release(struct aj_arm *a)
{
	aj_http_release(&a->http);
	aj_free(a->endpoint);
	aj_free(a->scope);
	a->endpoint = a->scope = NULL;
}

void aj_arm_response_init(struct aj_arm_response *r)
{
	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
}

void aj_arm_response_release(struct aj_arm_response *r)
{
	cJSON_Delete(r->json);
	aj_free(r->location);
	aj_free(r->async_operation);
	aj_free(r->request_id);
	aj_arm_response_init(r);
}

static const char *json_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

int aj_arm_error_text(const cJSON *body, struct aj_buf *out)
{
	const cJSON *e = cJSON_GetObjectItemCaseSensitive(body, "error");
	const cJSON *d;
	const char *code = json_str(e, "code"), *msg = json_str(e, "message");
	size_t start = out->len;
	int rc = 0;

	if (!code && !msg)
		return 0;
	if (code)
		rc |= aj_buf_addstr(out, code);
	if (msg)
		rc |= aj_buf_addf(out, "%s%s", code ? ": " : "", msg);
	cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(e, "details")) {
		const char *dm = json_str(d, "message");

		if (dm)
			rc |= aj_buf_addf(out, "; %s", dm);
	}
	/* A service that echoes a whole document must not flood the log. */
	if (!rc && out->len - start > ARM_MESSAGE_MAX) {
		out->len = start + ARM_MESSAGE_MAX;
		out->buf[out->len] = '\0';
		rc = aj_buf_addstr(out, "...");
	}
	return rc;
}

/* ": code: message" when body carries an ARM error. */
static void append_error_text(struct aj_buf *msg, const cJSON *body)
{
	struct aj_buf t = AJ_BUF_INIT(AJ_BUF_SMALL);

	if (body && !aj_arm_error_text(body, &t) && t.len)
		aj_buf_addf(msg, ": %s", aj_buf_cstr(&t));
	aj_buf_release(&t);
}

static int build_url(struct aj_arm *a, const char *path_or_url,
		     const char *api_version, struct aj_buf *url)
{
	int rc = 0;

	if (!strncmp(path_or_url, "https://", 8) || !strncmp(path_or_url, "http://", 7))
		rc |= aj_buf_addstr(url, path_or_url);
	else
		rc |= aj_buf_addf(url, "%s%s%s", a->endpoint,
				  path_or_url[0] == '/' ? "" : "/", path_or_url);
	if (api_version && !strstr(aj_buf_cstr(url), "api-version=")) {
		rc |= aj_buf_addstr(url, strchr(aj_buf_cstr(url), '?') ? "&api-version=" : "?api-version=");
		rc |= aj_http_urlencode(url, api_version);
	}
	return rc;
}

static char *dup_header(const struct aj_http_response *r, enum aj_http_header h,
			int *oom)
{
	const char *v = aj_http_header(r, h);
	char *s;

	if (!v)
		return NULL;
	s = aj_strdup(v);
	if (!s)
		*oom = 1;
	return s;
}

static int fill_response(const struct aj_http_response *hr, int64_t now,
			 struct aj_arm_response *out)
{
	const char *ra = aj_http_header(hr, AJ_HDR_RETRY_AFTER);
	int oom = 0;

	out->status = hr->status;
	out->location = dup_header(hr, AJ_HDR_LOCATION, &oom);
	out->async_operation = dup_header(hr, AJ_HDR_ASYNC_OPERATION, &oom);
	out->request_id = dup_header(hr, AJ_HDR_REQUEST_ID, &oom);
	out->retry_after_ms = ra ? aj_retry_after_parse(ra, now) : -1;
	if (hr->body.len)
		out->json = cJSON_ParseWithLength(hr->body.buf, hr->body.len);
	return oom ? -1 : 0;
}

/*
 * One logical request: token, send with retries, one replay after a 401.
 * *sent keeps the token of the last attempt (aj_token_release), whose
 * claims name the identity when the service refused it.
 */
static int arm_exchange(struct aj_arm *a, const char *method, const char *url,
			const char *body, const char *client_id,
			struct aj_http_response *resp, struct aj_token *sent,
			struct aj_errors *err)
{
	int rc = -1;

	for (int auth_try = 0; auth_try < 2; auth_try++) {
		struct aj_http_request req;

		aj_token_release(sent);
		if (aj_token_cache_get(a->tokens, a->scope, sent, err))
			return -1;
		aj_http_request_init(&req, method, url);
		rc = aj_http_request_header(&req, "Authorization: Bearer %s", sent->value);
		rc |= aj_http_request_header(&req, "x-ms-client-request-id: %s", client_id);
		rc |= aj_http_request_header(&req, "Accept: application/json");
		if (body) {
			req.body = body;
			req.body_len = strlen(body);
			rc |= aj_http_request_header(&req, "Content-Type: application/json");
		}
		if (rc) {
			aj_http_request_release(&req);
			return aj_errors_oom(err);
		}
		rc = aj_http_send(&a->http, &a->retry, &req, resp, err);
		aj_http_request_release(&req);
		if (rc || resp->status != 401)
			break;
		/* Revoked or expired early: drop the cached token and try once more. */
		aj_token_cache_expire(a->tokens, a->scope);
	}
	return rc;
}

int aj_arm_request(struct aj_arm *a, const char *method, const char *path_or_url,
		   const char *api_version, const cJSON *body,
		   struct aj_arm_response *out, struct aj_errors *err)
{
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL), where = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_http_response resp;
	struct aj_token sent = { NULL, 0, 0 };
	char client_id[37];
	char *text = NULL;
	int rc = -1;

	aj_arm_response_release(out);
	aj_http_response_init(&resp);
	a->last_status = 0;
	if (build_url(a, path_or_url, api_version, &url) ||
	    aj_http_url_redacted(&where, aj_buf_cstr(&url)) ||
	    aj_http_uuid(client_id)) {
		aj_errors_oom(err);
		goto done;
	}
	if (body && !(text = cJSON_PrintUnformatted(body))) {
		aj_errors_oom(err);
		goto done;
	}
	if (arm_exchange(a, method, aj_buf_cstr(&url), text, client_id, &resp, &sent, err))
		goto done;
	a->last_status = resp.status;
	aj_azure_logf(&a->http.hooks, "ARM %s %s: %ld (x-ms-request-id %s, x-ms-client-request-id %s, %d attempt%s)",
		      method, aj_buf_cstr(&where), resp.status,
		      aj_http_header(&resp, AJ_HDR_REQUEST_ID) ?
		      aj_http_header(&resp, AJ_HDR_REQUEST_ID) : "-",
		      client_id, resp.attempts, resp.attempts == 1 ? "" : "s");
	if (fill_response(&resp, aj_azure_now_ms(&a->http.hooks), out)) {
		aj_errors_oom(err);
		goto done;
	}
	if (resp.status >= 200 && resp.status < 300) {
		if (resp.body.len && !out->json) {
			aj_errors_add(err, NULL, "ARM %s %s: HTTP %ld: the response is not valid JSON",
				      method, aj_buf_cstr(&where), resp.status);
			goto done;
		}
		rc = 0;
		goto done;
	}
	aj_buf_addf(&msg, "ARM %s %s: HTTP %ld", method, aj_buf_cstr(&where), resp.status);
	append_error_text(&msg, out->json);
	if (resp.attempts > 1)
		aj_buf_addf(&msg, " (after %d attempts)", resp.attempts);
	/* who was refused and what it needs: the token's claims, never the token */
	if (resp.status == 401 || resp.status == 403)
		aj_azure_access_hint(sent.value, method, path_or_url, resp.status, &msg);
	aj_errors_add(err, NULL, "%s", msg.failed ? "ARM request failed" : aj_buf_cstr(&msg));
done:
	if (text)
		cJSON_free(text);
	aj_token_release(&sent);
	aj_http_response_release(&resp);
	aj_buf_release(&url);
	aj_buf_release(&where);
	aj_buf_release(&msg);
	return rc;
}

static int64_t poll_delay(const struct aj_arm *a, const struct aj_arm_response *r)
{
	int64_t d = r->retry_after_ms >= 0 ? r->retry_after_ms : a->poll_default_ms;

	return d > a->poll_max_ms ? a->poll_max_ms : d;
}

int aj_arm_wait(struct aj_arm *a, const struct aj_arm_response *initial,
		int64_t timeout_ms, struct aj_arm_response *final,
		struct aj_errors *err)
{
	const char *url = initial->async_operation ? initial->async_operation : initial->location;
	int async = initial->async_operation != NULL;
	int64_t deadline = aj_azure_now_ms(&a->http.hooks) + timeout_ms;
	int64_t delay = poll_delay(a, initial);
	char *poll_url;
	int rc = -1;

	aj_arm_response_release(final);
	if ((initial->status != 201 && initial->status != 202) || !url) {
		final->status = initial->status;
		if (initial->json && !(final->json = cJSON_Duplicate(initial->json, 1)))
			return aj_errors_oom(err);
		return 0;
	}
	/* The response we poll with is replaced each round; keep the URL. */
	poll_url = aj_strdup(url);
	if (!poll_url)
		return aj_errors_oom(err);
	for (;;) {
		const char *status;

		if (aj_azure_now_ms(&a->http.hooks) + delay > deadline) {
			struct aj_buf w = AJ_BUF_INIT(AJ_BUF_SMALL);

			aj_http_url_redacted(&w, poll_url);
			aj_errors_add(err, NULL, "ARM operation %s did not finish within %lld ms",
				      aj_buf_cstr(&w), (long long)timeout_ms);
			aj_buf_release(&w);
			break;
		}
		aj_azure_sleep_ms(&a->http.hooks, delay);
		if (aj_arm_request(a, "GET", poll_url, NULL, NULL, final, err)) {
			if (async)
				aj_errors_add(err, NULL, "reading the status of the ARM operation failed");
			break;
		}
		delay = poll_delay(a, final);
		if (!async) {
			if (final->status != 202) {
				rc = 0;
				break;
			}
			continue;
		}
		status = json_str(final->json, "status");
		if (status && !strcmp(status, "Succeeded")) {
			rc = 0;
			break;
		}
		if (status && (!strcmp(status, "Failed") || !strcmp(status, "Canceled"))) {
			struct aj_buf m = AJ_BUF_INIT(AJ_BUF_SMALL);

			aj_buf_addf(&m, "ARM operation %s", status);
			append_error_text(&m, final->json);
			aj_errors_add(err, NULL, "%s", m.failed ? "ARM operation failed" : aj_buf_cstr(&m));
			aj_buf_release(&m);
			break;
		}
	}
	aj_free(poll_url);
	return rc;
}
