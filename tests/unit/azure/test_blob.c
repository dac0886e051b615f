/*
 * The blob client's requests as the loopback peer records them: headers on
 * every request, block ids and the block list, MD5s, retries and error
 * reports. Block ids and MD5s below were computed with Python's base64 and
 * hashlib. Behaviour against a real storage implementation is covered by
 * tests/integration/azure (Azurite).
 */
#include "support.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../peers/azure_test.h"
#include "azure/blob.h"
#include "azure/credential.h"
#include "azure/sas.h"
#include "core/alloc.h"
#include "core/error.h"

/* RFC 7231's example date: Sun, 06 Nov 1994 08:49:37 GMT. */
#define T0 784111777000LL

static struct aj_peer peer;
static struct aj_fake_clock fclock;
static char endpoint[128];

struct fixture {
	struct aj_token_cache *tokens;
	struct aj_blob blob;
};

static int group_setup(void **state)
{
	(void)state;
	if (aj_peer_start(&peer))
		return -1;
	snprintf(endpoint, sizeof(endpoint), "%s/blob/devstoreaccount1", peer.base);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	aj_peer_stop(&peer);
	return 0;
}

static void client_with(struct aj_blob *b, struct aj_token_cache *tokens, const char *sas,
			size_t block, unsigned parallel)
{
	struct aj_blob_config c;
	struct aj_errors e = AJ_ERRORS_INIT;

	aj_blob_config_default(&c);
	c.parallel = parallel;
	c.endpoint = endpoint;
	c.tokens = tokens;
	c.sas = sas;
	c.hooks.now_ms = aj_fake_now;
	c.hooks.sleep_ms = aj_fake_sleep;
	c.hooks.random = aj_fake_random;
	c.hooks.log = aj_fake_log;
	c.hooks.ctx = &fclock;
	if (block)
		c.block_size = c.single_put_max = block;
	/* the senders of a parallel upload share the hooks: no log to race on */
	if (parallel > 1)
		c.hooks.log = NULL;
	assert_int_equal(aj_blob_init(b, &c, &e), 0);
}

/* One block at a time, so the requests below come in a known order. */
static void client(struct aj_blob *b, struct aj_token_cache *tokens, const char *sas,
		   size_t block)
{
	client_with(b, tokens, sas, block, 1);
}

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct aj_identity_config ic;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;

	if (!f || aj_peer_control(&peer, "reset", NULL))
		return -1;
	aj_identity_config_default(&ic);
	ic.hooks = aj_fake_hooks(&fclock, T0);
	ic.authority_host = peer.base;
	ic.tenant_id = "t";
	ic.client_id = "c";
	ic.client_secret = "s";
	if (aj_credential_secret_new(&ic, &cred, &e) ||
	    aj_token_cache_new(cred, &ic.hooks, &f->tokens, &e))
		return -1;
	client(&f->blob, f->tokens, NULL, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	aj_blob_release(&f->blob);
	aj_token_cache_free(f->tokens);
	free(f);
	return 0;
}

/* Recorded requests to blob paths only (the token request is skipped). */
static cJSON *blob_requests(void)
{
	cJSON *all = aj_peer_requests(&peer), *out = cJSON_CreateArray(), *r;

	cJSON_ArrayForEach(r, all)
		if (strncmp(cJSON_GetObjectItem(r, "path")->valuestring, "/blob/", 6) == 0)
			cJSON_AddItemToArray(out, cJSON_Duplicate(r, 1));
	cJSON_Delete(all);
	return out;
}

static const char *hdr(const cJSON *r, const char *group, const char *name)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(r, group), name);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void put_blob_headers(void **state)
{
	struct fixture *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_blob_put_options o = { .content_type = "application/gzip", .md5 = 1 };
	cJSON *reqs, *r;

	assert_int_equal(aj_blob_put(&f->blob, "code", "jobs/abc/hello.txt", "hello world", 11, &o, &e), 0);
	reqs = blob_requests();
	assert_int_equal(cJSON_GetArraySize(reqs), 1);
	r = cJSON_GetArrayItem(reqs, 0);
	assert_string_equal(cJSON_GetObjectItem(r, "path")->valuestring,
			    "/blob/devstoreaccount1/code/jobs/abc/hello.txt");
	assert_string_equal(cJSON_GetObjectItem(r, "method")->valuestring, "PUT");
	assert_string_equal(hdr(r, "headers", "x-ms-version"), "2024-11-04");
	assert_string_equal(hdr(r, "headers", "x-ms-date"), "Sun, 06 Nov 1994 08:49:37 GMT");
	assert_string_equal(hdr(r, "headers", "x-ms-blob-type"), "BlockBlob");
	assert_string_equal(hdr(r, "headers", "x-ms-blob-content-type"), "application/gzip");
	assert_string_equal(hdr(r, "headers", "content-md5"), "XrY7u+Ae7tCTyyK7j1rNww==");
	assert_string_equal(hdr(r, "headers", "content-length"), "11");
	assert_non_null(strstr(hdr(r, "headers", "authorization"), "Bearer eyJ0.entra."));
	assert_null(hdr(r, "headers", "if-none-match"));
	assert_null(strstr(fclock.log, "eyJ0"));
	cJSON_Delete(reqs);
	aj_errors_release(&e);
}

static void blocks_and_block_list(void **state)
{
	struct fixture *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_blob_put_options o = { .md5 = 1, .content_type = "text/plain" };
	struct aj_blob small;
	char file[] = "/tmp/aj-blob-unit-XXXXXX", *got = NULL;
	static const char *const ids[] = {
		"YWotYmxvY2stMDAwMDAwMDA=", "YWotYmxvY2stMDAwMDAwMDE=", "YWotYmxvY2stMDAwMDAwMDI=",
	};
	cJSON *reqs, *r;
	int fd = mkstemp(file);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789", 10), 10);
	close(fd);
	client(&small, f->tokens, NULL, 4);
	assert_int_equal(aj_blob_upload_file(&small, "code", "big.bin", file, &o, &e), 0);

	reqs = blob_requests();
	assert_int_equal(cJSON_GetArraySize(reqs), 4);
	for (int i = 0; i < 3; i++) {
		r = cJSON_GetArrayItem(reqs, i);
		assert_string_equal(hdr(r, "query", "comp"), "block");
		assert_string_equal(hdr(r, "query", "blockid"), ids[i]);
		assert_string_equal(hdr(r, "headers", "x-ms-version"), "2024-11-04");
		assert_string_equal(cJSON_GetObjectItem(r, "body")->valuestring,
				    i == 0 ? "0123" : i == 1 ? "4567" : "89");
	}
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, 0), "headers", "content-md5"),
			    "62L2uTBttXXC1ZaxJ5YnpA==");
	r = cJSON_GetArrayItem(reqs, 3);
	assert_string_equal(hdr(r, "query", "comp"), "blocklist");
	assert_string_equal(cJSON_GetObjectItem(r, "body")->valuestring,
		"<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>"
		"<Latest>YWotYmxvY2stMDAwMDAwMDA=</Latest>"
		"<Latest>YWotYmxvY2stMDAwMDAwMDE=</Latest>"
		"<Latest>YWotYmxvY2stMDAwMDAwMDI=</Latest></BlockList>");
	/* MD5("0123456789"): the whole blob's, stored as its property. */
	assert_string_equal(hdr(r, "headers", "x-ms-blob-content-md5"), "eB5eJF1ptWaXm4bijSPyxw==");
	assert_string_equal(hdr(r, "headers", "x-ms-blob-content-type"), "text/plain");
	assert_string_equal(hdr(r, "headers", "x-ms-version"), "2024-11-04");
	cJSON_Delete(reqs);

	assert_int_equal(aj_peer_call(&peer, "GET", "/_peer/blob/devstoreaccount1/code/big.bin", NULL, &got), 200);
	assert_string_equal(got, "0123456789");
	free(got);

	/* A file of exactly one block goes in one Put Blob. */
	assert_int_equal(aj_peer_control(&peer, "reset", NULL), 0);
	fd = open(file, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "abcd", 4), 4);
	close(fd);
	assert_int_equal(aj_blob_upload_file(&small, "code", "four.bin", file, &o, &e), 0);
	reqs = blob_requests();
	assert_int_equal(cJSON_GetArraySize(reqs), 1);
	assert_null(hdr(cJSON_GetArrayItem(reqs, 0), "query", "comp"));
	cJSON_Delete(reqs);

	unlink(file);
	assert_int_equal(aj_blob_upload_file(&small, "code", "x", file, &o, &e), -1);
	assert_true(aj_test_errors_contain(&e, "blob: cannot open /tmp/aj-blob-unit-"));
	assert_true(aj_test_errors_contain(&e, "No such file or directory"));
	aj_blob_release(&small);
	aj_errors_release(&e);
}

/* Hands out `text` in pieces of at most `piece` bytes; fails after `fail_after` bytes. */
struct pieces {
	const char *text;
	size_t off, piece, fail_after;
};

static int read_pieces(void *data, void *buf, size_t cap, size_t *len, struct aj_errors *err)
{
	struct pieces *p = data;
	size_t left = strlen(p->text) - p->off;

	if (p->off >= p->fail_after)
		return aj_errors_add(err, NULL, "test reader: gone");
	*len = left < cap ? left : cap;
	if (*len > p->piece)
		*len = p->piece;
	memcpy(buf, p->text + p->off, *len);
	p->off += *len;
	return 0;
}

static void stream_upload_in_blocks(void **state)
{
	struct fixture *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_blob_put_options o = { .md5 = 1 };
	struct pieces p = { "0123456789", 0, 3, (size_t)-1 };
	struct aj_blob small;
	struct aj_blob_props props;
	char *got = NULL;
	cJSON *reqs;

	client(&small, f->tokens, NULL, 4);
	/* The first block fails once with 503: only that block is sent again. */
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"method\": \"PUT\", \"status\": 503}]"), 0);
	assert_int_equal(aj_blob_upload(&small, "code", "s.bin", read_pieces, &p, &o, &e), 0);
	reqs = blob_requests();
	assert_int_equal(cJSON_GetArraySize(reqs), 5);
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, 0), "query", "blockid"), "YWotYmxvY2stMDAwMDAwMDA=");
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, 1), "query", "blockid"), "YWotYmxvY2stMDAwMDAwMDA=");
	/* pieces of 3 bytes were gathered into blocks of 4 */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(reqs, 1), "body")->valuestring, "0123");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(reqs, 2), "body")->valuestring, "4567");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(reqs, 3), "body")->valuestring, "89");
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, 4), "query", "comp"), "blocklist");
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, 4), "headers", "x-ms-blob-content-md5"),
			    "eB5eJF1ptWaXm4bijSPyxw==");
	cJSON_Delete(reqs);
	assert_int_equal(fclock.nr_sleeps, 1);
	assert_int_equal(aj_peer_call(&peer, "GET", "/_peer/blob/devstoreaccount1/code/s.bin", NULL, &got), 200);
	assert_string_equal(got, "0123456789");
	free(got);
	assert_int_equal(aj_blob_head(&small, "code", "s.bin", &props, &e), 0);
	assert_int_equal(props.exists, 1);
	assert_int_equal(props.size, 10);

	/* Shorter than a block: one Put Blob. */
	assert_int_equal(aj_peer_control(&peer, "reset", NULL), 0);
	p = (struct pieces){ "abc", 0, 1, (size_t)-1 };
	assert_int_equal(aj_blob_upload(&small, "code", "t.bin", read_pieces, &p, &o, &e), 0);
	reqs = blob_requests();
	assert_int_equal(cJSON_GetArraySize(reqs), 1);
	assert_null(hdr(cJSON_GetArrayItem(reqs, 0), "query", "comp"));
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(reqs, 0), "body")->valuestring, "abc");
	cJSON_Delete(reqs);
	assert_int_equal(aj_blob_head(&small, "code", "none", &props, &e), 0);
	assert_int_equal(props.exists, 0);
	aj_blob_release(&small);
	aj_errors_release(&e);
}

/* How many Put Block List requests the peer saw. */
static int block_lists(void)
{
	cJSON *reqs = blob_requests(), *r;
	int n = 0;

	cJSON_ArrayForEach(r, reqs) {
		const char *comp = hdr(r, "query", "comp");

		n += comp && !strcmp(comp, "blocklist");
	}
	cJSON_Delete(reqs);
	return n;
}

/* The id a block request names, as its index; -1 if none. */
static int block_index(const cJSON *r)
{
	static const char *const ids[] = {
		"YWotYmxvY2stMDAwMDAwMDA=", "YWotYmxvY2stMDAwMDAwMDE=", "YWotYmxvY2stMDAwMDAwMDI=",
		"YWotYmxvY2stMDAwMDAwMDM=", "YWotYmxvY2stMDAwMDAwMDQ=", "YWotYmxvY2stMDAwMDAwMDU=",
		"YWotYmxvY2stMDAwMDAwMDY=",
	};
	const char *id = hdr(r, "query", "blockid");

	for (int i = 0; id && i < 7; i++)
		if (!strcmp(id, ids[i]))
			return i;
	return -1;
}

static void parallel_blocks(void **state)
{
	struct fixture *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_blob_put_options o = { .md5 = 1 };
	struct pieces p = { "abcdefghijklmnopqrstuvwxyz", 0, 5, (size_t)-1 };
	static const char *const bodies[] = { "abcd", "efgh", "ijkl", "mnop", "qrst", "uvwx", "yz" };
	int seen[7] = { 0 }, retried = 0, n;
	struct aj_blob par;
	char *got = NULL;
	cJSON *reqs, *r;

	client_with(&par, f->tokens, NULL, 4, 3);
	/* one block fails once with 503: that block alone is sent again */
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"method\": \"PUT\", \"status\": 503}]"), 0);
	assert_int_equal(aj_blob_upload(&par, "code", "p.bin", read_pieces, &p, &o, &e), 0);
	reqs = blob_requests();
	n = cJSON_GetArraySize(reqs);
	assert_int_equal(n, 7 + 1 + 1);
	for (int i = 0; i < n - 1; i++) {
		int k = block_index(r = cJSON_GetArrayItem(reqs, i));

		assert_true(k >= 0);
		assert_string_equal(cJSON_GetObjectItem(r, "body")->valuestring, bodies[k]);
		if (seen[k]++)
			retried++;
	}
	for (int k = 0; k < 7; k++)
		assert_true(seen[k] >= 1);
	assert_int_equal(retried, 1);
	/* the list comes last, in the data's order, with the whole blob's MD5 */
	r = cJSON_GetArrayItem(reqs, n - 1);
	assert_string_equal(hdr(r, "query", "comp"), "blocklist");
	assert_string_equal(cJSON_GetObjectItem(r, "body")->valuestring,
		"<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>"
		"<Latest>YWotYmxvY2stMDAwMDAwMDA=</Latest><Latest>YWotYmxvY2stMDAwMDAwMDE=</Latest>"
		"<Latest>YWotYmxvY2stMDAwMDAwMDI=</Latest><Latest>YWotYmxvY2stMDAwMDAwMDM=</Latest>"
		"<Latest>YWotYmxvY2stMDAwMDAwMDQ=</Latest><Latest>YWotYmxvY2stMDAwMDAwMDU=</Latest>"
		"<Latest>YWotYmxvY2stMDAwMDAwMDY=</Latest></BlockList>");
	assert_string_equal(hdr(r, "headers", "x-ms-blob-content-md5"), "w/zT12GS5AB9+0lsymfhOw==");
	cJSON_Delete(reqs);
	assert_int_equal(aj_peer_call(&peer, "GET", "/_peer/blob/devstoreaccount1/code/p.bin", NULL, &got), 200);
	assert_string_equal(got, "abcdefghijklmnopqrstuvwxyz");
	free(got);

	/* a block the service keeps refusing: no list, no blob, the reason named */
	assert_int_equal(aj_peer_control(&peer, "reset", NULL), 0);
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"method\": \"PUT\", \"status\": 500, \"times\": 1000,"
		"  \"headers\": {\"x-ms-error-code\": \"OperationTimedOut\"}}]"), 0);
	p = (struct pieces){ "abcdefghijklmnopqrstuvwxyz", 0, 5, (size_t)-1 };
	assert_int_equal(aj_blob_upload(&par, "code", "q.bin", read_pieces, &p, &o, &e), -1);
	assert_true(aj_test_errors_contain(&e, "/code/q.bin: HTTP 500 OperationTimedOut (after 5 attempts)"));
	assert_int_equal(block_lists(), 0);
	assert_int_equal(aj_peer_call(&peer, "GET", "/_peer/blob/devstoreaccount1/code/q.bin", NULL, &got), 404);
	free(got);
	aj_blob_release(&par);
	aj_errors_release(&e);
}

static void interrupted_upload_commits_nothing(void **state)
{
	struct fixture *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct pieces p = { "0123456789", 0, 4, 8 };
	struct aj_blob small;
	char *got = NULL;

	client(&small, f->tokens, NULL, 4);
	/*
	 * The data stops after two blocks: no block list, no blob. The reader
	 * runs a block ahead of the sender, so the second block may or may not
	 * have gone out when the failure stops it.
	 */
	assert_int_equal(aj_blob_upload(&small, "code", "cut.bin", read_pieces, &p, NULL, &e), -1);
	assert_true(aj_test_errors_contain(&e, "test reader: gone"));
	assert_true(aj_peer_count(&peer, "/blob/") >= 1 && aj_peer_count(&peer, "/blob/") <= 2);
	assert_int_equal(block_lists(), 0);
	assert_int_equal(aj_peer_call(&peer, "GET", "/_peer/blob/devstoreaccount1/code/cut.bin", NULL, &got), 404);
	free(got);
	got = NULL;

	/* A block the service keeps refusing: retried, then given up. */
	aj_errors_release(&e);
	assert_int_equal(aj_peer_control(&peer, "reset", NULL), 0);
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"method\": \"PUT\", \"status\": 500, \"times\": 50,"
		"  \"headers\": {\"x-ms-error-code\": \"OperationTimedOut\"}}]"), 0);
	p = (struct pieces){ "0123456789", 0, 4, (size_t)-1 };
	fclock.nr_sleeps = 0;
	assert_int_equal(aj_blob_upload(&small, "code", "cut.bin", read_pieces, &p, NULL, &e), -1);
	assert_true(aj_test_errors_contain(&e, "/code/cut.bin: HTTP 500 OperationTimedOut (after 5 attempts)"));
	assert_int_equal(aj_peer_count(&peer, "/blob/"), 5);
	assert_int_equal(fclock.nr_sleeps, 4);
	assert_int_equal(aj_peer_call(&peer, "GET", "/_peer/blob/devstoreaccount1/code/cut.bin", NULL, &got), 404);
	free(got);
	aj_blob_release(&small);
	aj_errors_release(&e);
}

static void exists_and_create_only(void **state)
{
	struct fixture *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_blob_put_options o = { .create_only = 1 };
	cJSON *reqs;
	int exists = -1;

	assert_int_equal(aj_blob_exists(&f->blob, "code", "sha256/ab12", &exists, &e), 0);
	assert_int_equal(exists, 0);
	assert_int_equal(aj_blob_put(&f->blob, "code", "sha256/ab12", "v1", 2, &o, &e), 0);
	assert_int_equal(aj_blob_exists(&f->blob, "code", "sha256/ab12", &exists, &e), 0);
	assert_int_equal(exists, 1);
	/* The service answers 409 BlobAlreadyExists: success, content kept. */
	assert_int_equal(aj_blob_put(&f->blob, "code", "sha256/ab12", "v2", 2, &o, &e), 0);
	reqs = blob_requests();
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(reqs, 0), "method")->valuestring, "HEAD");
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, 1), "headers", "if-none-match"), "*");
	cJSON_Delete(reqs);
	aj_errors_release(&e);
}

static void storage_errors_and_retries(void **state)
{
	struct fixture *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	char want[256];

	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"status\": 503, \"times\": 2, \"headers\": {\"x-ms-error-code\": \"ServerBusy\"}}]"), 0);
	assert_int_equal(aj_blob_put(&f->blob, "code", "a", "x", 1, NULL, &e), 0);
	assert_int_equal(fclock.nr_sleeps, 2);
	assert_int_equal(aj_peer_count(&peer, "/blob/"), 3);

	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"status\": 404, \"headers\": {\"x-ms-error-code\": \"ContainerNotFound\"},"
		"  \"body\": \"<?xml version=\\\"1.0\\\" encoding=\\\"utf-8\\\"?><Error><Code>ContainerNotFound</Code>"
		"<Message>The specified container does not exist.\\nRequestId:1\\nTime:x</Message></Error>\"}]"), 0);
	assert_int_equal(aj_blob_put(&f->blob, "nope", "a", "x", 1, NULL, &e), -1);
	snprintf(want, sizeof(want),
		 "blob PUT %s/nope/a: HTTP 404 ContainerNotFound: The specified container does not exist.", endpoint);
	assert_true(aj_test_errors_contain(&e, want));
	assert_false(aj_test_errors_contain(&e, "RequestId"));

	/* Without the header, the code comes from the XML body. */
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"status\": 400, \"body\": \"<Error><Code>InvalidHeaderValue</Code><Message>bad</Message></Error>\"}]"), 0);
	assert_int_equal(aj_blob_put(&f->blob, "code", "a", "x", 1, NULL, &e), -1);
	assert_true(aj_test_errors_contain(&e, "HTTP 400 InvalidHeaderValue: bad"));
	assert_false(aj_test_errors_contain(&e, "acted as"));
	aj_errors_release(&e);
}

/* A refusal names who was refused (the token's claims, never the token) and the data role. */
static void refusals_name_the_identity(void **state)
{
	struct fixture *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	char want[512];
	int exists = 0;

	/* storage tokens with claims (as the peer makes them for Azurite), from the first request on */
	assert_int_equal(aj_peer_control(&peer, "config", "{\"storage_jwt\": true}"), 0);
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"status\": 403, \"times\": 1, "
		"\"headers\": {\"x-ms-error-code\": \"AuthorizationPermissionMismatch\"}}]"), 0);
	assert_int_equal(aj_blob_put(&f->blob, "code", "a", "x", 1, NULL, &e), -1);
	snprintf(want, sizeof(want), "blob PUT %s/code/a: HTTP 403 AuthorizationPermissionMismatch; "
		 "aj acted as the identity with object id 5e5f1b1a-0000-4000-8000-00000000a11d, "
		 "which needs \"Storage Blob Data Contributor\" on the container or its storage "
		 "account (a data role: Owner or Contributor on the account is not enough)", endpoint);
	assert_true(aj_test_errors_contain(&e, want));
	aj_errors_release(&e);

	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"status\": 403, \"times\": 1}]"), 0);
	assert_int_equal(aj_blob_exists(&f->blob, "code", "a", &exists, &e), -1);
	assert_true(aj_test_errors_contain(&e, "HTTP 403; aj acted as the identity with object id "
					   "5e5f1b1a-0000-4000-8000-00000000a11d, which needs \"Storage "
					   "Blob Data Reader\""));
	assert_null(strstr(aj_test_errors_text(&e), "eyJ"));
	aj_errors_release(&e);
}

static void sas_stays_out_of_errors(void **state)
{
	struct fixture *f = *state;
	struct aj_blob b;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_sas_key key;
	cJSON *reqs;

	client(&b, NULL, "?sv=2024-11-04&sr=c&sp=cw&sig=SECRETSIG%3D", 0);
	assert_int_equal(aj_blob_put(&b, "code", "dir/a b.txt", "x", 1, NULL, &e), 0);
	reqs = blob_requests();
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(reqs, 0), "path")->valuestring,
			    "/blob/devstoreaccount1/code/dir/a b.txt");
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, 0), "query", "sig"), "SECRETSIG=");
	assert_null(hdr(cJSON_GetArrayItem(reqs, 0), "headers", "authorization"));
	cJSON_Delete(reqs);

	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/blob/\", \"status\": 403, \"headers\": {\"x-ms-error-code\": \"AuthenticationFailed\"}}]"), 0);
	assert_int_equal(aj_blob_put(&b, "code", "b", "x", 1, NULL, &e), -1);
	assert_true(aj_test_errors_contain(&e, "/code/b: HTTP 403 AuthenticationFailed; the storage "
					   "service refused the SAS aj was given: it has expired, is not "
					   "valid yet, or does not allow PUT (a write needs c and w)"));
	assert_null(strstr(aj_test_errors_text(&e), "SECRETSIG"));
	assert_null(strstr(fclock.log, "SECRETSIG"));

	assert_int_equal(aj_blob_user_delegation_key(&b, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", &key, &e), -1);
	assert_true(aj_test_errors_contain(&e, "a user delegation key needs an Entra token, not a SAS"));
	aj_blob_release(&b);

	assert_int_equal(aj_blob_user_delegation_key(&f->blob, "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z", &key, &e), 0);
	assert_string_equal(key.signed_oid, "11111111-1111-1111-1111-111111111111");
	assert_string_equal(key.signed_start, "2026-01-01T00:00:00Z");
	assert_string_equal(key.signed_expiry, "2026-01-02T00:00:00Z");
	assert_string_equal(key.signed_version, "2024-11-04");
	reqs = blob_requests();
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, cJSON_GetArraySize(reqs) - 1), "query", "comp"),
			    "userdelegationkey");
	assert_string_equal(hdr(cJSON_GetArrayItem(reqs, cJSON_GetArraySize(reqs) - 1), "query", "restype"),
			    "service");
	cJSON_Delete(reqs);
	aj_sas_key_release(&key);
	aj_errors_release(&e);
}

static void settings_are_checked(void **state)
{
	struct aj_blob_config c;
	struct aj_blob b;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);

	(void)state;
	assert_int_equal(aj_blob_endpoint(AJ_BLOB_ENDPOINT_DEFAULT, "acct1", &url), 0);
	assert_string_equal(aj_buf_cstr(&url), "https://acct1.blob.core.windows.net");
	aj_buf_reset(&url);
	assert_int_equal(aj_blob_endpoint("https://127.0.0.1:10000/{account}/", "devstoreaccount1", &url), 0);
	assert_string_equal(aj_buf_cstr(&url), "https://127.0.0.1:10000/devstoreaccount1");
	aj_buf_reset(&url);
	assert_int_equal(aj_blob_endpoint("https://fixed.example/", "x", &url), 0);
	assert_string_equal(aj_buf_cstr(&url), "https://fixed.example");
	aj_buf_reset(&url);
	assert_int_equal(aj_blob_endpoint("https://{account}.x/{account}", "acct1", &url), 0);
	assert_string_equal(aj_buf_cstr(&url), "https://acct1.x/acct1");
	aj_buf_release(&url);
	aj_blob_config_default(&c);
	assert_int_equal(aj_blob_init(&b, &c, &e), -1);
	assert_true(aj_test_errors_contain(&e, "blob: no endpoint configured"));
	c.endpoint = endpoint;
	assert_int_equal(aj_blob_init(&b, &c, &e), -1);
	assert_true(aj_test_errors_contain(&e, "blob: neither a token source nor a SAS is configured"));
	c.sas = "sig=x";
	c.block_size = (size_t)5000 * 1024 * 1024;
	assert_int_equal(aj_blob_init(&b, &c, &e), -1);
	assert_true(aj_test_errors_contain(&e, "above the 4000 MiB limit"));
	aj_errors_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(put_blob_headers, setup, teardown),
		cmocka_unit_test_setup_teardown(blocks_and_block_list, setup, teardown),
		cmocka_unit_test_setup_teardown(stream_upload_in_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(parallel_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(interrupted_upload_commits_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(exists_and_create_only, setup, teardown),
		cmocka_unit_test_setup_teardown(storage_errors_and_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(sas_stays_out_of_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(refusals_name_the_identity, setup, teardown),
		cmocka_unit_test(settings_are_checked),
	};

	aj_alloc_hook_cjson();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
