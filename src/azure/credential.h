/*
 * credential.h - Microsoft Entra access tokens: the providers and the cache.
 *
 * Every provider sits behind struct aj_credential: managed identity through
 * IMDS, AKS workload identity (federated token file), a service principal
 * secret, and the Azure CLI. aj_credential_chain_new() tries them in that
 * order (secret, workload, IMDS, CLI) and sticks with the first that answers.
 * struct aj_token_cache sits in front of a credential: one token per scope,
 * refreshed 5 minutes before expiry, and the old token kept while it is still
 * valid if a refresh fails.
 *
 * Secrets: token values, client secrets and assertions never reach an error,
 * a log line or a test's output. Errors carry the provider, the HTTP status
 * and the service's error code and description only.
 *
 * Threads: a credential serves one caller at a time; a token cache may be
 * shared by any number of threads (it serialises calls to its credential).
 *
 * Ownership: a token's value is the holder's (aj_token_release wipes it); a
 * cache owns the credential it was given; the chain owns its members.
 */
#ifndef AJ_AZURE_CREDENTIAL_H
#define AJ_AZURE_CREDENTIAL_H

#include <stdint.h>

#include "azure/http.h"

struct aj_errors;

struct aj_token {
	char *value;
	int64_t expires_on;    /* Unix seconds */
	int64_t refresh_on;    /* Unix seconds; 0: 5 minutes before expires_on */
};

void aj_token_release(struct aj_token *t);

/* Returned by get_token when the provider does not apply here (a chain goes on). */
#define AJ_CREDENTIAL_UNAVAILABLE (-2)

struct aj_credential {
	const char *kind;  /* "managed-identity", "workload-identity", ... */
	/* 0, -1 (failed), or AJ_CREDENTIAL_UNAVAILABLE; errors appended either way. */
	int (*get_token)(struct aj_credential *c, const char *scope,
			 struct aj_token *out, struct aj_errors *err);
	void (*free)(struct aj_credential *c);
};

int aj_credential_get_token(struct aj_credential *c, const char *scope,
			    struct aj_token *out, struct aj_errors *err);
void aj_credential_free(struct aj_credential *c);

/*
 * Settings for every provider. Strings are borrowed while a constructor runs
 * (constructors copy them). aj_identity_config_from_env() fills the defaults
 * and the standard environment variables; pointers then refer to the
 * environment.
 */
struct aj_identity_config {
	struct aj_http_options http;
	struct aj_azure_hooks hooks;
	struct aj_retry_policy imds_retry;  /* 404/410/429/5xx, 5 retries */

	const char *imds_endpoint;    /* AZURE_POD_IDENTITY_AUTHORITY_HOST or 169.254.169.254 */
	const char *imds_api_version; /* 2018-02-01 */
	const char *mi_client_id;     /* user-assigned identity selectors; at most one */
	const char *mi_object_id;
	const char *mi_resource_id;

	const char *authority_host;   /* AZURE_AUTHORITY_HOST, default login.microsoftonline.com */
	const char *tenant_id;        /* AZURE_TENANT_ID */
	const char *client_id;        /* AZURE_CLIENT_ID */
	const char *client_secret;    /* AZURE_CLIENT_SECRET */
	const char *federated_token_file; /* AZURE_FEDERATED_TOKEN_FILE */

	const char *az_path;          /* the Azure CLI program, "az" via PATH */
	long cli_timeout_ms;
};

void aj_identity_config_default(struct aj_identity_config *c);
void aj_identity_config_from_env(struct aj_identity_config *c);
/* The retry set for IMDS: 404, 410, 429 and 5xx. */
int aj_imds_retryable(long status);

int aj_credential_imds_new(const struct aj_identity_config *c,
			   struct aj_credential **out, struct aj_errors *err);
int aj_credential_workload_new(const struct aj_identity_config *c,
			       struct aj_credential **out, struct aj_errors *err);
int aj_credential_secret_new(const struct aj_identity_config *c,
			     struct aj_credential **out, struct aj_errors *err);
int aj_credential_cli_new(const struct aj_identity_config *c,
			  struct aj_credential **out, struct aj_errors *err);
/*
 * The chain holds each provider whose settings are present: secret (tenant,
 * client id, secret), workload (tenant, client id, token file), IMDS (always;
 * a first connection failure makes it unavailable instead of retrying), CLI.
 */
int aj_credential_chain_new(const struct aj_identity_config *c,
			    struct aj_credential **out, struct aj_errors *err);

/* For IMDS and the CLI: "https://x/.default" becomes "https://x/". */
int aj_scope_to_resource(const char *scope, struct aj_buf *out);

/*
 * Parse an expiry as providers send it: Unix seconds as a number or digit
 * string, or a date "YYYY-MM-DD hh:mm:ss[.ffffff]" / RFC 3339 (local time
 * when no zone is given, as the CLI prints expiresOn). -1 if unreadable.
 */
int64_t aj_token_parse_time(const char *s);

struct aj_token_cache;

/* Takes ownership of cred (freed on failure too). */
int aj_token_cache_new(struct aj_credential *cred,
		       const struct aj_azure_hooks *hooks,
		       struct aj_token_cache **out, struct aj_errors *err);
void aj_token_cache_free(struct aj_token_cache *c);
/* A copy of a valid token for scope, acquiring or refreshing as needed. */
int aj_token_cache_get(struct aj_token_cache *c, const char *scope,
		       struct aj_token *out, struct aj_errors *err);
/* Forget the token for scope (after the service rejected it with 401). */
void aj_token_cache_expire(struct aj_token_cache *c, const char *scope);

#endif
