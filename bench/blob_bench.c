/*
 * Upload one file with the blob client (Put Block + Put Block List, PARALLEL
 * blocks in flight), for bench/blob.sh. The bearer token comes from
 * AJ_BENCH_TOKEN and is never printed.
 *
 *   blob_bench ENDPOINT CA_FILE CONTAINER NAME FILE BLOCK_MIB PARALLEL
 * prints "seconds S" and "bytes N".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <curl/curl.h>

#include "azure/blob.h"
#include "azure/credential.h"
#include "core/alloc.h"
#include "core/error.h"

static int env_token(struct aj_credential *c, const char *scope, struct aj_token *out,
		     struct aj_errors *err)
{
	const char *t = getenv("AJ_BENCH_TOKEN");

	(void)c;
	(void)scope;
	if (!t || !*t)
		return aj_errors_add(err, NULL, "AJ_BENCH_TOKEN is not set");
	out->value = aj_strdup(t);
	out->expires_on = (int64_t)time(NULL) + 3600;
	out->refresh_on = 0;
	return out->value ? 0 : aj_errors_oom(err);
}

static void env_free(struct aj_credential *c)
{
	aj_free(c);
}

int main(int argc, char **argv)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_credential *cred;
	struct aj_token_cache *tokens = NULL;
	struct aj_blob_config c;
	struct aj_blob b;
	struct timespec t0, t1;
	struct stat st;
	int rc = 1;

	if (argc != 8 || stat(argv[5], &st)) {
		fprintf(stderr, "usage: blob_bench ENDPOINT CA_FILE CONTAINER NAME FILE BLOCK_MIB PARALLEL\n");
		return 2;
	}
	curl_global_init(CURL_GLOBAL_DEFAULT);
	cred = aj_calloc(1, sizeof(*cred));
	if (!cred)
		return 1;
	cred->kind = "bench";
	cred->get_token = env_token;
	cred->free = env_free;
	aj_blob_config_default(&c);
	c.endpoint = argv[1];
	c.http.ca_file = argv[2];
	c.http.timeout_ms = 600000;
	c.block_size = c.single_put_max = (size_t)strtoul(argv[6], NULL, 10) * 1024 * 1024;
	c.parallel = (unsigned)strtoul(argv[7], NULL, 10);
	if (!aj_token_cache_new(cred, NULL, &tokens, &err)) {
		c.tokens = tokens;
		if (!aj_blob_init(&b, &c, &err)) {
			clock_gettime(CLOCK_MONOTONIC, &t0);
			rc = aj_blob_upload_file(&b, argv[3], argv[4], argv[5], NULL, &err) ? 1 : 0;
			clock_gettime(CLOCK_MONOTONIC, &t1);
			aj_blob_release(&b);
		}
	}
	if (rc) {
		for (size_t i = 0; i < aj_errors_count(&err); i++) {
			struct aj_buf m = AJ_BUF_INIT(AJ_BUF_SMALL);

			aj_errors_format(&err, i, &m);
			fprintf(stderr, "%s\n", aj_buf_cstr(&m));
			aj_buf_release(&m);
		}
	} else {
		printf("seconds %.3f\nbytes %lld\n", (double)(t1.tv_sec - t0.tv_sec) +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e9, (long long)st.st_size);
	}
	aj_token_cache_free(tokens);
	aj_errors_release(&err);
	curl_global_cleanup();
	return rc;
}
