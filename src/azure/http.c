#include "azure/http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "core/alloc.h"
#include "core/error.h"

#define HTTP_BODY_MAX (16u * 1024u * 1024u)

int64_t aj_azure_now_ms(const struct aj_azure_hooks *h)
{
	struct timespec ts;

	if (h && h->now_ms)
		return h->now_ms(h->ctx);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void aj_azure_sleep_ms(const struct aj_azure_hooks *h, int64_t ms)
{
	struct timespec ts;

	if (ms <= 0)
		return;
	if (h && h->sleep_ms) {
		h->sleep_ms(h->ctx, ms);
		return;
	}
	ts.tv_sec = (time_t)(ms / 1000);
	ts.tv_nsec = (long)(ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static uint32_t hooks_random(const struct aj_azure_hooks *h)
{
	uint32_t r = 0;

	if (h && h->random)
		return h->random(h->ctx);
	if (RAND_bytes((unsigned char *)&r, sizeof(r)) != 1)
		r = (uint32_t)aj_azure_now_ms(h);
	return r;
}

void aj_azure_logf(const struct aj_azure_hooks *h, const char *fmt, ...)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	va_list ap;

	if (!h || !h->log)
		return;
	va_start(ap, fmt);
	if (aj_buf_vaddf(&b, fmt, ap) == 0)
		h->log(h->ctx, aj_buf_cstr(&b));
	va_end(ap);
	aj_buf_release(&b);
}

int aj_http_retryable_transient(long status)
{
	switch (status) {
	case 408: case 429: case 500: case 502: case 503: case 504:
		return 1;
	default:
		return 0;
	}
}

void aj_retry_policy_default(struct aj_retry_policy *p)
{
	p->max_retries = 4;
	p->base_delay_ms = 800;
	p->max_delay_ms = 60000;
	p->max_retry_after_ms = 60000;
	p->max_total_ms = 120000;
	p->retryable = aj_http_retryable_transient;
}

int64_t aj_retry_backoff_ms(const struct aj_retry_policy *p, int retry,
			    const struct aj_azure_hooks *h)
{
	int64_t d = p->base_delay_ms;
	int64_t jitter;

	for (int i = 0; i < retry && d < p->max_delay_ms; i++)
		d *= 2;
	if (d > p->max_delay_ms)
		d = p->max_delay_ms;
	/* +-20 % so that many clients throttled together spread out. */
	jitter = d / 5;
	if (jitter > 0)
		d += (int64_t)(hooks_random(h) % (uint32_t)(2 * jitter + 1)) - jitter;
	return d < 0 ? 0 : d;
}

int64_t aj_retry_after_parse(const char *value, int64_t now_ms)
{
	const char *p = value;
	char *end;
	long long secs;
	time_t when;

	while (*p == ' ' || *p == '\t')
		p++;
	if (*p >= '0' && *p <= '9') {
		errno = 0;
		secs = strtoll(p, &end, 10);
		while (*end == ' ' || *end == '\t')
			end++;
		if (errno || *end || secs > 86400LL * 365)
			return -1;
		return (int64_t)secs * 1000;
	}
	when = curl_getdate(p, NULL);
	if (when == (time_t)-1)
		return -1;
	if ((int64_t)when * 1000 <= now_ms)
		return 0;
	return (int64_t)when * 1000 - now_ms;
}

int aj_http_init(struct aj_http *h, const struct aj_http_options *opt,
		 const struct aj_azure_hooks *hooks, struct aj_errors *err)
{
	memset(h, 0, sizeof(*h));
	if (hooks)
		h->hooks = *hooks;
	h->timeout_ms = opt && opt->timeout_ms ? opt->timeout_ms : 60000;
	h->connect_timeout_ms = opt && opt->connect_timeout_ms ?
		opt->connect_timeout_ms : 10000;
	if (opt && opt->ca_file) {
		h->ca_file = aj_strdup(opt->ca_file);
		if (!h->ca_file)
			return aj_errors_oom(err);
	}
	h->curl = curl_easy_init();
	if (!h->curl) {
		aj_free(h->ca_file);
		h->ca_file = NULL;
		return aj_errors_add(err, NULL, "cannot start an HTTP client (libcurl)");
	}
	return 0;
}

void aj_http_release(struct aj_http *h)
{
	if (h->curl)
		curl_easy_cleanup(h->curl);
	aj_free(h->ca_file);
	h->curl = NULL;
	h->ca_file = NULL;
}

void aj_http_request_init(struct aj_http_request *r, const char *method,
			  const char *url)
{
	memset(r, 0, sizeof(*r));
	r->method = method;
	r->url = url;
	aj_strlist_init(&r->headers);
}

void aj_http_request_release(struct aj_http_request *r)
{
	for (size_t i = 0; i < r->headers.nr; i++)
		OPENSSL_cleanse(r->headers.items[i], strlen(r->headers.items[i]));
	aj_strlist_release(&r->headers);
}

int aj_http_request_header(struct aj_http_request *r, const char *fmt, ...)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	va_list ap;
	char *s;
	int rc;

	va_start(ap, fmt);
	rc = aj_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (rc)
		return -1;
	s = aj_buf_detach(&b, NULL);
	if (!s)
		return -1;
	return aj_strlist_add_owned(&r->headers, s);
}

static const char *const header_names[AJ_HDR__COUNT] = {
	[AJ_HDR_RETRY_AFTER] = "retry-after",
	[AJ_HDR_RETRY_AFTER_MS] = "retry-after-ms",
	[AJ_HDR_X_MS_RETRY_AFTER_MS] = "x-ms-retry-after-ms",
	[AJ_HDR_REQUEST_ID] = "x-ms-request-id",
	[AJ_HDR_LOCATION] = "location",
	[AJ_HDR_ASYNC_OPERATION] = "azure-asyncoperation",
	[AJ_HDR_ERROR_CODE] = "x-ms-error-code",
	[AJ_HDR_ETAG] = "etag",
	[AJ_HDR_CONTENT_MD5] = "content-md5",
	[AJ_HDR_CONTENT_LENGTH] = "content-length",
};

void aj_http_response_init(struct aj_http_response *r)
{
	memset(r, 0, sizeof(*r));
	aj_buf_init(&r->body, HTTP_BODY_MAX);
}

static void response_clear(struct aj_http_response *r)
{
	r->status = 0;
	aj_buf_reset(&r->body);
	for (int i = 0; i < AJ_HDR__COUNT; i++) {
		aj_free(r->headers[i]);
		r->headers[i] = NULL;
	}
}

void aj_http_response_release(struct aj_http_response *r)
{
	response_clear(r);
	aj_buf_release(&r->body);
}

const char *aj_http_header(const struct aj_http_response *r,
			   enum aj_http_header which)
{
	return r->headers[which];
}

struct exchange {
	struct aj_http_response *resp;
	int oom;
};

static size_t on_body(char *data, size_t size, size_t n, void *ctx)
{
	struct exchange *x = ctx;

	if (aj_buf_add(&x->resp->body, data, size * n))
		return 0;
	return size * n;
}

static size_t on_header(char *data, size_t size, size_t n, void *ctx)
{
	struct exchange *x = ctx;
	size_t len = size * n, name_len;
	const char *colon = memchr(data, ':', len);
	const char *v, *end = data + len;

	/* A status line starts a new header block (interim 100, proxies). */
	if (len > 5 && !memcmp(data, "HTTP/", 5)) {
		for (int i = 0; i < AJ_HDR__COUNT; i++) {
			aj_free(x->resp->headers[i]);
			x->resp->headers[i] = NULL;
		}
		return len;
	}
	if (!colon)
		return len;
	name_len = (size_t)(colon - data);
	v = colon + 1;
	while (v < end && (*v == ' ' || *v == '\t'))
		v++;
	while (end > v && (end[-1] == '\r' || end[-1] == '\n' ||
			   end[-1] == ' ' || end[-1] == '\t'))
		end--;
	for (int i = 0; i < AJ_HDR__COUNT; i++) {
		if (strlen(header_names[i]) != name_len ||
		    strncasecmp(header_names[i], data, name_len))
			continue;
		aj_free(x->resp->headers[i]);
		x->resp->headers[i] = aj_strndup(v, (size_t)(end - v));
		if (!x->resp->headers[i])
			x->oom = 1;
		break;
	}
	return len;
}

int aj_http_url_redacted(struct aj_buf *out, const char *url)
{
	return aj_buf_add(out, url, strcspn(url, "?#"));
}

int aj_http_urlencode(struct aj_buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	int rc = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' ||
		    *p == '_' || *p == '~') {
			rc |= aj_buf_addch(out, (char)*p);
		} else {
			rc |= aj_buf_addch(out, '%');
			rc |= aj_buf_addch(out, hex[*p >> 4]);
			rc |= aj_buf_addch(out, hex[*p & 15]);
		}
	}
	return rc ? -1 : 0;
}

int aj_http_uuid(char out[37])
{
	unsigned char b[16];

	if (RAND_bytes(b, sizeof(b)) != 1)
		return -1;
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40);
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80);
	snprintf(out, 37,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
		 b[10], b[11], b[12], b[13], b[14], b[15]);
	return 0;
}

/* Report method and URL without the query (it may hold a SAS). */
static int http_fail(struct aj_errors *err, const struct aj_http_request *req,
		     const char *what)
{
	struct aj_buf u = AJ_BUF_INIT(AJ_BUF_SMALL);

	aj_http_url_redacted(&u, req->url);
	aj_errors_add(err, NULL, "%s %s: %s", req->method, aj_buf_cstr(&u), what);
	aj_buf_release(&u);
	return -1;
}

/* One attempt. Returns CURLE_OK or the transport error; sets *oom. */
static CURLcode exchange_once(struct aj_http *h, const struct aj_http_request *req,
			      struct aj_http_response *resp, int *oom,
			      char errbuf[CURL_ERROR_SIZE])
{
	CURL *c = h->curl;
	struct curl_slist *hdrs = NULL, *tmp;
	struct exchange x = { resp, 0 };
	const char *body = req->body;
	CURLcode rc;

	*oom = 0;
	response_clear(resp);
	curl_easy_reset(c);
	errbuf[0] = '\0';
	for (size_t i = 0; i < req->headers.nr; i++) {
		tmp = curl_slist_append(hdrs, req->headers.items[i]);
		if (!tmp) {
			curl_slist_free_all(hdrs);
			*oom = 1;
			return CURLE_OUT_OF_MEMORY;
		}
		hdrs = tmp;
	}
	/* No 100-continue round trip before block uploads. */
	tmp = curl_slist_append(hdrs, "Expect:");
	if (!tmp) {
		curl_slist_free_all(hdrs);
		*oom = 1;
		return CURLE_OUT_OF_MEMORY;
	}
	hdrs = tmp;

	curl_easy_setopt(c, CURLOPT_URL, req->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
			 req->timeout_ms ? req->timeout_ms : h->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 req->connect_timeout_ms ? req->connect_timeout_ms :
			 h->connect_timeout_ms);
	if (h->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, h->ca_file);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &x);

	if (!strcmp(req->method, "HEAD")) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (!strcmp(req->method, "GET") && !body) {
		curl_easy_setopt(c, CURLOPT_HTTPGET, 1L);
	} else {
		if (!body && (!strcmp(req->method, "PUT") || !strcmp(req->method, "POST")))
			body = "";
		if (body) {
			curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
					 (curl_off_t)req->body_len);
			curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		}
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, req->method);
	}

	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &resp->status);
	else
		resp->status = 0;
	curl_slist_free_all(hdrs);
	if (x.oom || resp->body.failed)
		*oom = 1;
	return rc;
}

/* Failures a new attempt can cure; certificate or URL errors it cannot. */
static int transport_retryable(CURLcode rc)
{
	switch (rc) {
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_OPERATION_TIMEDOUT:
	case CURLE_GOT_NOTHING:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_PARTIAL_FILE:
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		return 1;
	default:
		return 0;
	}
}

static int64_t server_wait_ms(const struct aj_http_response *resp, int64_t now)
{
	const char *v;
	char *end;
	long long ms;

	/* The millisecond forms are more precise than Retry-After; prefer them. */
	for (int i = AJ_HDR_RETRY_AFTER_MS; i <= AJ_HDR_X_MS_RETRY_AFTER_MS; i++) {
		v = resp->headers[i];
		if (!v)
			continue;
		errno = 0;
		ms = strtoll(v, &end, 10);
		if (!errno && end != v && !*end && ms >= 0)
			return (int64_t)ms;
	}
	v = resp->headers[AJ_HDR_RETRY_AFTER];
	return v ? aj_retry_after_parse(v, now) : -1;
}

int aj_http_send(struct aj_http *h, const struct aj_retry_policy *policy,
		 const struct aj_http_request *req, struct aj_http_response *resp,
		 struct aj_errors *err)
{
	char errbuf[CURL_ERROR_SIZE];
	int64_t start = aj_azure_now_ms(&h->hooks);
	int max_retries = policy ? policy->max_retries : 0;
	CURLcode rc;
	int oom;

	resp->attempts = 0;
	for (int retry = 0;; retry++) {
		int64_t wait, now;
		int retryable;

		rc = exchange_once(h, req, resp, &oom, errbuf);
		resp->attempts++;
		if (oom) {
			int too_large = resp->body.failed || rc == CURLE_WRITE_ERROR;

			response_clear(resp);
			if (too_large)
				return http_fail(err, req, "response too large or out of memory");
			return aj_errors_oom(err);
		}
		if (rc == CURLE_OK) {
			retryable = policy && (policy->retryable ?
				policy->retryable(resp->status) :
				aj_http_retryable_transient(resp->status));
		} else {
			retryable = policy && transport_retryable(rc);
		}
		if (!retryable || retry >= max_retries)
			break;
		now = aj_azure_now_ms(&h->hooks);
		wait = rc == CURLE_OK ? server_wait_ms(resp, now) : -1;
		if (wait < 0)
			wait = aj_retry_backoff_ms(policy, retry, &h->hooks);
		else if (wait > policy->max_retry_after_ms)
			wait = policy->max_retry_after_ms;
		if (now - start + wait > policy->max_total_ms)
			break;
		aj_azure_logf(&h->hooks, "%s: attempt %d got %ld (%s), retrying in %lld ms",
			      req->method, resp->attempts, resp->status,
			      rc == CURLE_OK ? "status" : curl_easy_strerror(rc),
			      (long long)wait);
		aj_azure_sleep_ms(&h->hooks, wait);
	}
	if (rc != CURLE_OK) {
		struct aj_buf m = AJ_BUF_INIT(AJ_BUF_SMALL);
		int r;

		aj_buf_addf(&m, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
		if (resp->attempts > 1)
			aj_buf_addf(&m, " (after %d attempts)", resp->attempts);
		r = http_fail(err, req, aj_buf_cstr(&m));
		aj_buf_release(&m);
		return r;
	}
	return 0;
}
