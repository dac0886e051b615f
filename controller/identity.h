/*
 * identity.h - the controller's one Azure identity: a credential chain
 * (azure/credential.h: AZURE_* variables, workload identity, the managed
 * identity) behind one token cache, shared by everything that calls Azure
 * for the controller (the Azure ML forwarder, the storage minter), so one
 * identity has one set of tokens.
 *
 * Threads: the token cache is thread-safe.
 * Ownership: the caller frees the cache (aj_token_cache_free); the strings
 * passed must outlive it.
 */
#ifndef AJ_IDENTITY_H
#define AJ_IDENTITY_H

struct aj_errors;
struct aj_token_cache;

/* ca_file: NULL for the system's; client_id: a user-assigned managed identity, or NULL. 0 / -1. */
int aj_identity_tokens_new(const char *ca_file, const char *client_id,
			   struct aj_token_cache **out, struct aj_errors *err);

#endif
