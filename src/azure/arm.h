/*
 * arm.h - the Azure Resource Manager client (JSON over HTTPS with a bearer
 * token) on which the Azure ML job calls are built.
 *
 * A request names a path under the ARM endpoint (or an absolute URL such as
 * a nextLink or a Location header, followed verbatim) and an api-version.
 * The client adds the bearer token from a struct aj_token_cache, a fresh
 * x-ms-client-request-id per logical request (kept across retries), retries
 * 408/429/5xx and connection failures under the policy (Retry-After
 * honoured), replays once with a new token after a 401, and turns an
 * ARM error body {"error":{"code","message","details"}} into the error
 * entry. x-ms-request-id is logged at debug for every response.
 *
 * A caller builds the body with cJSON and reads the reply from
 * struct aj_arm_response; the status stays available on failure so that,
 * for example, a 404 on GET can mean "create it".
 *
 * Threads: a struct aj_arm serves one thread at a time (it holds one HTTP
 * handle); several clients may share one token cache.
 *
 * Ownership: the client borrows the token cache; responses own their JSON
 * and header copies (aj_arm_response_release).
 */
#ifndef AJ_AZURE_ARM_H
#define AJ_AZURE_ARM_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "azure/http.h"

struct aj_errors;
struct aj_token_cache;

struct aj_arm_config {
	const char *endpoint;      /* default https://management.azure.com */
	const char *scope;         /* default https://management.azure.com/.default */
	struct aj_http_options http;
	struct aj_retry_policy retry;   /* aj_retry_policy_default() */
	struct aj_azure_hooks hooks;
	int64_t poll_default_ms;   /* LRO wait when no Retry-After; default 10 s */
	int64_t poll_max_ms;       /* cap on one LRO wait; default 60 s */
};

void aj_arm_config_default(struct aj_arm_config *c);

struct aj_arm {
	struct aj_http http;
	struct aj_token_cache *tokens;
	char *endpoint;
	char *scope;
	struct aj_retry_policy retry;
	int64_t poll_default_ms;
	int64_t poll_max_ms;
	long last_status;          /* the last request's HTTP status; 0: no answer came */
};

int aj_arm_init(struct aj_arm *a, const struct aj_arm_config *c,
		struct aj_token_cache *tokens, struct aj_errors *err);
void aj_arm_release(struct aj_arm *a);

struct aj_arm_response {
	long status;
	cJSON *json;           /* parsed body; NULL when empty */
	char *location;        /* Location header, if any */
	char *async_operation; /* Azure-AsyncOperation header, if any */
	char *request_id;      /* x-ms-request-id */
	int64_t retry_after_ms; /* -1 when absent */
};

void aj_arm_response_init(struct aj_arm_response *r);
void aj_arm_response_release(struct aj_arm_response *r);

/*
 * method: GET, PUT, POST, DELETE, PATCH. path_or_url: "/subscriptions/..."
 * (joined to the endpoint) or an absolute http(s) URL. api_version is added
 * as a query parameter unless NULL or already present. body may be NULL.
 * Returns 0 for a 2xx status, -1 otherwise (error: method, path, status,
 * ARM code and message); *out is filled in both cases when a response came.
 */
int aj_arm_request(struct aj_arm *a, const char *method, const char *path_or_url,
		   const char *api_version, const cJSON *body,
		   struct aj_arm_response *out, struct aj_errors *err);

/*
 * Follow a long-running operation started by `initial` (a 201/202 with an
 * Azure-AsyncOperation or Location header; anything else is already final)
 * until it ends or timeout_ms passes, sleeping Retry-After between polls.
 * Azure-AsyncOperation is preferred: its body's status must become
 * Succeeded (Failed/Canceled report the operation's error). With Location,
 * polls answer 202 until the final 200/204. *final gets the last response.
 */
int aj_arm_wait(struct aj_arm *a, const struct aj_arm_response *initial,
		int64_t timeout_ms, struct aj_arm_response *final,
		struct aj_errors *err);

/* Append the ARM error body's code, message and details' messages. */
int aj_arm_error_text(const cJSON *body, struct aj_buf *out);

#endif
