#include "status.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"

static const struct {
	enum aj_kube_reason reason;
	const char *name;
} reason_names[] = {
	{ AJ_KUBE_OK, "OK" },
	{ AJ_KUBE_TRANSPORT, "Transport" },
	{ AJ_KUBE_UNKNOWN, "Unknown" },
	{ AJ_KUBE_BAD_REQUEST, "BadRequest" },
	{ AJ_KUBE_UNAUTHORIZED, "Unauthorized" },
	{ AJ_KUBE_FORBIDDEN, "Forbidden" },
	{ AJ_KUBE_NOT_FOUND, "NotFound" },
	{ AJ_KUBE_METHOD_NOT_ALLOWED, "MethodNotAllowed" },
	{ AJ_KUBE_NOT_ACCEPTABLE, "NotAcceptable" },
	{ AJ_KUBE_ALREADY_EXISTS, "AlreadyExists" },
	{ AJ_KUBE_CONFLICT, "Conflict" },
	{ AJ_KUBE_GONE, "Gone" },
	{ AJ_KUBE_EXPIRED, "Expired" },
	{ AJ_KUBE_REQUEST_ENTITY_TOO_LARGE, "RequestEntityTooLarge" },
	{ AJ_KUBE_UNSUPPORTED_MEDIA_TYPE, "UnsupportedMediaType" },
	{ AJ_KUBE_INVALID, "Invalid" },
	{ AJ_KUBE_TOO_MANY_REQUESTS, "TooManyRequests" },
	{ AJ_KUBE_INTERNAL_ERROR, "InternalError" },
	{ AJ_KUBE_SERVICE_UNAVAILABLE, "ServiceUnavailable" },
	{ AJ_KUBE_SERVER_TIMEOUT, "ServerTimeout" },
	{ AJ_KUBE_TIMEOUT, "Timeout" },
	{ AJ_KUBE_STORE_READ_ERROR, "StorageReadError" },
};

#define NR_REASONS (sizeof(reason_names) / sizeof(reason_names[0]))

const char *aj_kube_reason_name(enum aj_kube_reason r)
{
	size_t i;

	for (i = 0; i < NR_REASONS; i++)
		if (reason_names[i].reason == r)
			return reason_names[i].name;
	return "Unknown";
}

static enum aj_kube_reason reason_from_text(const char *s)
{
	size_t i;

	/* Transport and OK are ours, never sent by a server. */
	for (i = 3; i < NR_REASONS; i++)
		if (!strcmp(reason_names[i].name, s))
			return reason_names[i].reason;
	return AJ_KUBE_UNKNOWN;
}

enum aj_kube_reason aj_kube_reason_for_code(long code)
{
	switch (code) {
	case 400: return AJ_KUBE_BAD_REQUEST;
	case 401: return AJ_KUBE_UNAUTHORIZED;
	case 403: return AJ_KUBE_FORBIDDEN;
	case 404: return AJ_KUBE_NOT_FOUND;
	case 405: return AJ_KUBE_METHOD_NOT_ALLOWED;
	case 406: return AJ_KUBE_NOT_ACCEPTABLE;
	case 409: return AJ_KUBE_CONFLICT;
	case 410: return AJ_KUBE_GONE;
	case 413: return AJ_KUBE_REQUEST_ENTITY_TOO_LARGE;
	case 415: return AJ_KUBE_UNSUPPORTED_MEDIA_TYPE;
	case 422: return AJ_KUBE_INVALID;
	case 429: return AJ_KUBE_TOO_MANY_REQUESTS;
	case 500: return AJ_KUBE_INTERNAL_ERROR;
	case 503: return AJ_KUBE_SERVICE_UNAVAILABLE;
	case 504: return AJ_KUBE_SERVER_TIMEOUT;
	default:
		return code >= 200 && code < 300 ? AJ_KUBE_OK : AJ_KUBE_UNKNOWN;
	}
}

void aj_kube_status_init(struct aj_kube_status *st)
{
	memset(st, 0, sizeof(*st));
	st->retry_after = -1;
}

void aj_kube_status_release(struct aj_kube_status *st)
{
	size_t i;

	for (i = 0; i < st->nr_causes; i++) {
		aj_free(st->causes[i].reason);
		aj_free(st->causes[i].field);
		aj_free(st->causes[i].message);
	}
	aj_free(st->causes);
	aj_free(st->reason_text);
	aj_free(st->message);
	aj_free(st->name);
	aj_free(st->group);
	aj_free(st->kind);
	aj_kube_status_init(st);
}

int aj_kube_status_expired(const struct aj_kube_status *st)
{
	return st->reason == AJ_KUBE_GONE || st->reason == AJ_KUBE_EXPIRED ||
	       st->code == 410;
}

/* Copy obj[key] when it is a non-empty string; 0, or -1 on OOM. */
static int dup_field(char **dst, const cJSON *obj, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);

	if (!cJSON_IsString(v) || !v->valuestring || !*v->valuestring)
		return 0;
	*dst = aj_strdup(v->valuestring);
	return *dst ? 0 : -1;
}

static int decode_causes(struct aj_kube_status *st, const cJSON *details)
{
	const cJSON *causes = cJSON_GetObjectItemCaseSensitive(details, "causes");
	const cJSON *c;

	cJSON_ArrayForEach(c, causes) {
		struct aj_kube_cause *it;

		if (!cJSON_IsObject(c))
			continue;
		if (AJ_GROW(st->causes, st->nr_causes + 1, st->alloc_causes))
			return -1;
		it = &st->causes[st->nr_causes++];
		memset(it, 0, sizeof(*it));
		if (dup_field(&it->reason, c, "reason") ||
		    dup_field(&it->field, c, "field") ||
		    dup_field(&it->message, c, "message"))
			return -1;
	}
	return 0;
}

/* Seconds from a Retry-After header; -1 when absent or not delta-seconds. */
static long parse_retry_after(const char *s)
{
	char *end;
	long v;

	if (!s)
		return -1;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
		end++;
	if (errno || *end)
		return -1;
	return v;
}

int aj_kube_status_from_json(struct aj_kube_status *st, long code,
			     const cJSON *obj)
{
	const cJSON *kind = cJSON_GetObjectItemCaseSensitive(obj, "kind");
	const cJSON *details, *v;

	aj_kube_status_release(st);
	st->code = code;
	st->reason = aj_kube_reason_for_code(code);
	if (!cJSON_IsObject(obj) || !cJSON_IsString(kind) ||
	    strcmp(kind->valuestring, "Status"))
		return 0;
	v = cJSON_GetObjectItemCaseSensitive(obj, "code");
	if (cJSON_IsNumber(v) && v->valuedouble >= 100 && v->valuedouble < 600) {
		if (!code)
			st->code = (long)v->valuedouble;
		st->reason = aj_kube_reason_for_code(st->code);
	}
	if (dup_field(&st->reason_text, obj, "reason") ||
	    dup_field(&st->message, obj, "message"))
		goto oom;
	if (st->reason_text)
		st->reason = reason_from_text(st->reason_text);
	details = cJSON_GetObjectItemCaseSensitive(obj, "details");
	if (cJSON_IsObject(details)) {
		if (dup_field(&st->name, details, "name") ||
		    dup_field(&st->group, details, "group") ||
		    dup_field(&st->kind, details, "kind") ||
		    decode_causes(st, details))
			goto oom;
		v = cJSON_GetObjectItemCaseSensitive(details, "retryAfterSeconds");
		if (cJSON_IsNumber(v) && v->valuedouble >= 0 &&
		    v->valuedouble < (double)LONG_MAX)
			st->retry_after = (long)v->valuedouble;
	}
	return 0;
oom:
	aj_kube_status_release(st);
	return -1;
}

int aj_kube_status_decode(struct aj_kube_status *st, long code,
			  const char *body, size_t len, const char *retry_after)
{
	cJSON *obj = NULL;
	long header = parse_retry_after(retry_after);
	int ret;

	if (body && len) {
		obj = cJSON_ParseWithLength(body, len);
		/*
		 * cJSON does not say why it failed. If memory is out, the
		 * reason (AlreadyExists vs Conflict) must not be guessed.
		 */
		if (!obj) {
			void *probe = aj_malloc(256);

			if (!probe) {
				aj_kube_status_release(st);
				return -1;
			}
			aj_free(probe);
		}
	}
	ret = aj_kube_status_from_json(st, code, obj);
	cJSON_Delete(obj);
	if (!ret && header >= 0)
		st->retry_after = header;
	return ret;
}

int aj_kube_status_transport(struct aj_kube_status *st, const char *message)
{
	aj_kube_status_release(st);
	st->reason = AJ_KUBE_TRANSPORT;
	if (message) {
		st->message = aj_strdup(message);
		if (!st->message)
			return -1;
	}
	return 0;
}

int aj_kube_status_to_errors(const struct aj_kube_status *st, const char *what,
			     struct aj_errors *err)
{
	size_t i;

	if (st->reason == AJ_KUBE_TRANSPORT)
		aj_errors_add(err, NULL, "%s: cannot reach the API server: %s",
			      what, st->message ? st->message : "transport error");
	else
		aj_errors_add(err, NULL, "%s: %s (HTTP %ld): %s", what,
			      st->reason_text ? st->reason_text
					      : aj_kube_reason_name(st->reason),
			      st->code,
			      st->message ? st->message : "no message from the server");
	for (i = 0; i < st->nr_causes; i++) {
		const struct aj_kube_cause *c = &st->causes[i];
		struct aj_where w = { NULL, 0, 0, c->field };

		if (c->reason)
			aj_errors_add(err, &w, "%s (%s)",
				      c->message ? c->message : "invalid", c->reason);
		else
			aj_errors_add(err, &w, "%s",
				      c->message ? c->message : "invalid");
	}
	return -1;
}
