/*
 * blob.h - the Blob Storage calls the job forwarder needs: upload a block
 * blob (one Put Blob when small, Put Block + Put Block List streamed from a
 * file or any reader when large), check whether a blob exists and its size
 * (HEAD, so content-addressed uploads are skipped), and get a user
 * delegation key for a SAS (sas.h).
 *
 * The endpoint is a setting: https://{account}.blob.core.windows.net, or a
 * path-style emulator URL such as https://127.0.0.1:10000/devstoreaccount1.
 * Requests authenticate with an Entra token (scope storage.azure.com) or a
 * SAS query string; every request carries x-ms-version AJ_BLOB_VERSION.
 * Large uploads read the data once, in order, and send `parallel` blocks at
 * once, each over its own connection (one block is being read meanwhile, so
 * parallel + 1 blocks are in memory). Each request (so each block) is
 * retried on its own under the retry policy (408, 429, 5xx, transport
 * errors and timeouts); blocks stay invisible until Put Block List commits
 * them, so an interrupted upload never leaves a partial blob.
 *
 * Secrets: the SAS and the token never appear in errors or logs (URLs are
 * reported without their query). Storage errors are reported by status,
 * x-ms-error-code and the first line of the service's message.
 *
 * Threads: a struct aj_blob serves one thread at a time (a large upload
 * starts its own senders, which share the token cache).
 *
 * Ownership: the client copies its settings and borrows the token cache.
 */
#ifndef AJ_AZURE_BLOB_H
#define AJ_AZURE_BLOB_H

#include <stddef.h>
#include <stdint.h>

#include "azure/http.h"

struct aj_buf;
struct aj_errors;
struct aj_sas_key;
struct aj_token_cache;

#define AJ_BLOB_VERSION "2024-11-04"
#define AJ_BLOB_PARALLEL_DEFAULT 4
#define AJ_BLOB_PARALLEL_MAX 16

struct aj_blob_config {
	const char *endpoint;
	struct aj_http_options http;
	struct aj_retry_policy retry;  /* aj_retry_policy_default() */
	struct aj_azure_hooks hooks;
	struct aj_token_cache *tokens; /* bearer auth (borrowed), or NULL */
	const char *scope;             /* default https://storage.azure.com/.default */
	const char *sas;               /* SAS query (no '?'); used when tokens is NULL */
	size_t block_size;             /* default 8 MiB, at most 4000 MiB */
	size_t single_put_max;         /* files up to this go in one Put Blob; default block_size */
	/* blocks in flight in a large upload, 1 to AJ_BLOB_PARALLEL_MAX; default 4 */
	unsigned parallel;
};

void aj_blob_config_default(struct aj_blob_config *c);

/*
 * An endpoint from a template: every "{account}" becomes account, trailing
 * '/' dropped ("https://{account}.blob.core.windows.net", or path-style
 * "https://127.0.0.1:10000/{account}"). 0 / -1 (out of memory).
 */
#define AJ_BLOB_ENDPOINT_DEFAULT "https://{account}.blob.core.windows.net"
int aj_blob_endpoint(const char *tmpl, const char *account, struct aj_buf *out);

struct aj_blob {
	struct aj_http http;
	struct aj_token_cache *tokens;
	char *endpoint;
	char *scope;
	char *sas;
	struct aj_retry_policy retry;
	size_t block_size;
	size_t single_put_max;
	unsigned parallel;
};

int aj_blob_init(struct aj_blob *b, const struct aj_blob_config *c,
		 struct aj_errors *err);
void aj_blob_release(struct aj_blob *b);

struct aj_blob_put_options {
	const char *content_type;  /* stored as the blob's Content-Type */
	int md5;                   /* send Content-MD5 per request and store the blob's MD5 */
	int create_only;           /* If-None-Match: *; an existing blob counts as success */
};

/*
 * Hands out the next bytes of an upload: *len bytes placed in buf (at most
 * cap), 0 at the end. 0, or -1 after adding to err (the upload stops).
 */
typedef int (*aj_blob_read_fn)(void *data, void *buf, size_t cap, size_t *len,
			       struct aj_errors *err);

/* One Put Blob of data (up to the service's single-shot limit). */
int aj_blob_put(struct aj_blob *b, const char *container, const char *name,
		const void *data, size_t len, const struct aj_blob_put_options *o,
		struct aj_errors *err);
/*
 * Upload what read hands out: one Put Blob when it all fits in one block,
 * else blocks of block_size and a block list.
 */
int aj_blob_upload(struct aj_blob *b, const char *container, const char *name,
		   aj_blob_read_fn read, void *data, const struct aj_blob_put_options *o,
		   struct aj_errors *err);
/* Upload a file, in blocks when larger than single_put_max. */
int aj_blob_upload_file(struct aj_blob *b, const char *container, const char *name,
			const char *path, const struct aj_blob_put_options *o,
			struct aj_errors *err);
struct aj_blob_props {
	int exists;
	uint64_t size;             /* Content-Length, when it exists */
};

/* HEAD: out->exists 1 (200, with its size) or 0 (404); other statuses are errors. */
int aj_blob_head(struct aj_blob *b, const char *container, const char *name,
		 struct aj_blob_props *out, struct aj_errors *err);
/* aj_blob_head, existence only. */
int aj_blob_exists(struct aj_blob *b, const char *container, const char *name,
		   int *exists, struct aj_errors *err);
/* Get User Delegation Key for [start, expiry] (YYYY-MM-DDThh:mm:ssZ); needs a token. */
int aj_blob_user_delegation_key(struct aj_blob *b, const char *start,
				const char *expiry, struct aj_sas_key *out,
				struct aj_errors *err);

#endif
