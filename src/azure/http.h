/*
 * http.h - the HTTP exchange, retry policy and clock shared by the Azure
 * clients (identity, ARM, blob).
 *
 * A struct aj_http wraps one libcurl easy handle, so connections are reused
 * between requests; use one per thread. A response keeps the status, the body
 * and the few headers the Azure clients act on. Retry decisions are made here
 * so every client backs off the same way; time and sleep go through
 * struct aj_azure_hooks so tests never wait.
 *
 * Secrets: a URL may carry a SAS and a header a bearer token. Neither is ever
 * copied into errors or log lines: URLs are reported without their query, and
 * request headers are wiped when released. Call curl_global_init() once at
 * program start, before any thread uses this module.
 *
 * Ownership: requests own their header strings (aj_http_request_release);
 * responses own their body and header copies (aj_http_response_release).
 */
#ifndef AJ_AZURE_HTTP_H
#define AJ_AZURE_HTTP_H

#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/strlist.h"

struct aj_errors;

/* Time, sleep, randomness and debug logging; NULL members use the real ones. */
struct aj_azure_hooks {
	int64_t (*now_ms)(void *ctx);           /* Unix time in milliseconds */
	void (*sleep_ms)(void *ctx, int64_t ms);
	uint32_t (*random)(void *ctx);          /* backoff jitter */
	void (*log)(void *ctx, const char *line); /* debug lines, never secrets */
	void *ctx;
};

int64_t aj_azure_now_ms(const struct aj_azure_hooks *h);
void aj_azure_sleep_ms(const struct aj_azure_hooks *h, int64_t ms);
void aj_azure_logf(const struct aj_azure_hooks *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * When and how often to try again. A retryable status or a transport error
 * is retried up to max_retries times; the wait is the server's Retry-After
 * (capped at max_retry_after_ms) or base_delay_ms * 2^n with +-20 % jitter,
 * capped at max_delay_ms. No retry starts once max_total_ms would pass.
 */
struct aj_retry_policy {
	int max_retries;
	int64_t base_delay_ms;
	int64_t max_delay_ms;
	int64_t max_retry_after_ms;
	int64_t max_total_ms;
	int (*retryable)(long status);
};

/* 408, 429, 500, 502, 503, 504: what ARM and storage document as transient. */
int aj_http_retryable_transient(long status);
/* The ARM defaults: 4 retries, 0.8 s base, 60 s cap, 2 min in total. */
void aj_retry_policy_default(struct aj_retry_policy *p);
/* Wait before retry number `retry` (0-based) when the server gave none. */
int64_t aj_retry_backoff_ms(const struct aj_retry_policy *p, int retry,
			    const struct aj_azure_hooks *h);
/*
 * Parse a Retry-After value (delay seconds or an HTTP date) into a wait from
 * now_ms. Returns -1 when the value is neither.
 */
int64_t aj_retry_after_parse(const char *value, int64_t now_ms);

struct aj_http_options {
	const char *ca_file;       /* CA bundle (CURLOPT_CAINFO); NULL: system */
	long timeout_ms;           /* per attempt; 0: 60 s */
	long connect_timeout_ms;   /* 0: 10 s */
};

struct aj_http {
	void *curl;
	char *ca_file;
	long timeout_ms;
	long connect_timeout_ms;
	struct aj_azure_hooks hooks;
};

int aj_http_init(struct aj_http *h, const struct aj_http_options *opt,
		 const struct aj_azure_hooks *hooks, struct aj_errors *err);
void aj_http_release(struct aj_http *h);

struct aj_http_request {
	const char *method;        /* GET, HEAD, PUT, POST, DELETE */
	const char *url;
	struct aj_strlist headers; /* "Name: value" */
	const char *body;          /* NULL: none (PUT/POST send an empty one) */
	size_t body_len;
	long timeout_ms;           /* 0: the handle's */
	long connect_timeout_ms;   /* 0: the handle's */
};

void aj_http_request_init(struct aj_http_request *r, const char *method,
			  const char *url);
/* Wipes and frees the header strings. */
void aj_http_request_release(struct aj_http_request *r);
int aj_http_request_header(struct aj_http_request *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Response headers the clients read; matched case-insensitively. */
enum aj_http_header {
	AJ_HDR_RETRY_AFTER,
	AJ_HDR_RETRY_AFTER_MS,
	AJ_HDR_X_MS_RETRY_AFTER_MS,
	AJ_HDR_REQUEST_ID,
	AJ_HDR_LOCATION,
	AJ_HDR_ASYNC_OPERATION,
	AJ_HDR_ERROR_CODE,
	AJ_HDR_ETAG,
	AJ_HDR_CONTENT_MD5,
	AJ_HDR_CONTENT_LENGTH,
	AJ_HDR__COUNT
};

struct aj_http_response {
	long status;               /* 0 when no response arrived */
	struct aj_buf body;
	char *headers[AJ_HDR__COUNT];
	int attempts;
};

void aj_http_response_init(struct aj_http_response *r);
void aj_http_response_release(struct aj_http_response *r);
const char *aj_http_header(const struct aj_http_response *r,
			   enum aj_http_header which);

/*
 * Send the request, retrying under `policy` (NULL: once). Returns 0 when a
 * response arrived, whatever its status (the caller judges it), or -1 when
 * none did (transport failure after the retries, response too large, out of
 * memory); the error names the method and the URL without its query.
 */
int aj_http_send(struct aj_http *h, const struct aj_retry_policy *policy,
		 const struct aj_http_request *req, struct aj_http_response *resp,
		 struct aj_errors *err);

/* Append url up to its query: the form used in errors and logs. */
int aj_http_url_redacted(struct aj_buf *out, const char *url);
/* Percent-encode everything but RFC 3986 unreserved characters. */
int aj_http_urlencode(struct aj_buf *out, const char *s);
/* A random version-4 UUID, lower-case, no braces (37 bytes with the NUL). */
int aj_http_uuid(char out[37]);

#endif
