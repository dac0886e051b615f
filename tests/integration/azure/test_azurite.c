/*
 * The blob client and SAS signing against Azurite (started by run.sh).
 *
 * Azurite's "basic" OAuth checks a token's issuer, audience and lifetime but
 * not its signature, so a test credential hands out unsigned JWTs. Reads
 * that check what was stored go through plain libcurl, not the client.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "azure/blob.h"
#include "azure/credential.h"
#include "azure/sas.h"
#include "backend/backend.h"
#include "backend/codeship.h"
#include "core/alloc.h"
#include "core/base64.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "storage.h"

#define OID "5e5f1b1a-0000-4000-8000-00000000a11d"
#define TID "72f988bf-86f1-41af-91ab-2d7cd011db47"
#define ACCOUNT_KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

static const char *endpoint;
static const char *ca;
static char container[64];

/* ---- a credential issuing unsigned JWTs -------------------------------- */

static void b64url(struct aj_buf *out, const char *s)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	assert_int_equal(aj_base64_encode(&b, s, strlen(s)), 0);
	for (size_t i = 0; i < b.len; i++) {
		char c = b.buf[i];

		if (c == '=')
			break;
		aj_buf_addch(out, c == '+' ? '-' : c == '/' ? '_' : c);
	}
	aj_buf_release(&b);
}

static int jwt_get_token(struct aj_credential *c, const char *scope,
			 struct aj_token *out, struct aj_errors *err)
{
	struct aj_buf tok = AJ_BUF_INIT(AJ_BUF_SMALL), claims = AJ_BUF_INIT(AJ_BUF_SMALL);
	long now = (long)time(NULL);

	(void)c;
	(void)err;
	assert_string_equal(scope, "https://storage.azure.com/.default");
	aj_buf_addf(&claims, "{\"aud\":\"https://storage.azure.com\",\"iss\":\"https://sts.windows.net/" TID "/\","
		    "\"iat\":%ld,\"nbf\":%ld,\"exp\":%ld,\"oid\":\"" OID "\",\"tid\":\"" TID "\"}",
		    now - 60, now - 60, now + 3600);
	b64url(&tok, "{\"alg\":\"RS256\",\"typ\":\"JWT\"}");
	aj_buf_addch(&tok, '.');
	b64url(&tok, aj_buf_cstr(&claims));
	aj_buf_addstr(&tok, ".unsigned");
	out->value = aj_buf_detach(&tok, NULL);
	out->expires_on = now + 3600;
	aj_buf_release(&claims);
	return 0;
}

static void jwt_free(struct aj_credential *c)
{
	aj_free(c);
}

static struct aj_token_cache *jwt_cache(void)
{
	struct aj_credential *c = aj_calloc(1, sizeof(*c));
	struct aj_token_cache *cache;
	struct aj_errors e = AJ_ERRORS_INIT;

	c->kind = "test-jwt";
	c->get_token = jwt_get_token;
	c->free = jwt_free;
	assert_int_equal(aj_token_cache_new(c, NULL, &cache, &e), 0);
	return cache;
}

/* ---- raw HTTP for checking the service's view ---------------------------- */

struct raw {
	long status;
	struct aj_buf body;
	char md5[64];
};

static size_t raw_body(char *d, size_t s, size_t n, void *ctx)
{
	return aj_buf_add(&((struct raw *)ctx)->body, d, s * n) ? 0 : s * n;
}

static size_t raw_header(char *d, size_t s, size_t n, void *ctx)
{
	struct raw *r = ctx;

	if (s * n > 13 && !strncasecmp(d, "Content-MD5: ", 13))
		snprintf(r->md5, sizeof(r->md5), "%.*s", (int)strcspn(d + 13, "\r\n"), d + 13);
	return s * n;
}

/* method on endpoint + path (+ "?" query); bearer when token != NULL. */
static void raw_call(const char *method, const char *path, const char *query,
		     const char *token, struct raw *r)
{
	char url[2048], auth[4096];
	CURL *c = curl_easy_init();
	struct curl_slist *h = curl_slist_append(NULL, "x-ms-version: 2024-11-04");

	memset(r, 0, sizeof(*r));
	aj_buf_init(&r->body, AJ_BUF_LARGE);
	snprintf(url, sizeof(url), "%s/%s%s%s", endpoint, path, query ? "?" : "", query ? query : "");
	if (token) {
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
		h = curl_slist_append(h, auth);
	}
	if (!strcmp(method, "PUT"))
		h = curl_slist_append(h, "x-ms-blob-type: BlockBlob");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CAINFO, ca);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, raw_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, raw_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	if (!strcmp(method, "PUT")) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, "x");
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 1L);
	}
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
}

static char *token_for_storage(struct aj_token_cache *cache)
{
	struct aj_token t;
	struct aj_errors e = AJ_ERRORS_INIT;

	assert_int_equal(aj_token_cache_get(cache, "https://storage.azure.com/.default", &t, &e), 0);
	return t.value;
}

static void md5_of(const void *data, size_t len, char out[32])
{
	unsigned char d[16];
	struct aj_buf b = AJ_BUF_INIT(64);

	EVP_Digest(data, len, d, NULL, EVP_md5(), NULL);
	aj_base64_encode(&b, d, 16);
	snprintf(out, 32, "%s", aj_buf_cstr(&b));
	aj_buf_release(&b);
}

static void iso_time(time_t t, char out[32])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---- fixture --------------------------------------------------------------- */

struct fx {
	struct aj_token_cache *cache;
	struct aj_blob blob;
};

static void blob_client(struct aj_blob *b, struct aj_token_cache *cache, const char *sas,
			size_t block_size)
{
	struct aj_blob_config c;
	struct aj_errors e = AJ_ERRORS_INIT;

	aj_blob_config_default(&c);
	c.endpoint = endpoint;
	c.http.ca_file = ca;
	c.tokens = cache;
	c.sas = sas;
	c.retry.max_retries = 1;
	if (block_size)
		c.block_size = c.single_put_max = block_size;
	assert_int_equal(aj_blob_init(b, &c, &e), 0);
}

static int group_setup(void **state)
{
	struct aj_token_cache *cache;
	struct raw r;
	char *tok;

	(void)state;
	endpoint = getenv("AJ_AZURITE_ENDPOINT");
	ca = getenv("AJ_AZURITE_CA");
	if (!endpoint || !ca)
		return -1;
	snprintf(container, sizeof(container), "code-%ld", (long)getpid());
	cache = jwt_cache();
	tok = token_for_storage(cache);
	raw_call("PUT", container, "restype=container", tok, &r);
	aj_free(tok);
	aj_buf_release(&r.body);
	aj_token_cache_free(cache);
	return r.status == 201 ? 0 : -1;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));

	f->cache = jwt_cache();
	blob_client(&f->blob, f->cache, NULL, 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;

	aj_blob_release(&f->blob);
	aj_token_cache_free(f->cache);
	free(f);
	return 0;
}

/* ---- tests ------------------------------------------------------------------ */

static void put_small_blob_and_head(void **state)
{
	struct fx *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_blob_put_options o = { .content_type = "text/plain", .md5 = 1 };
	char path[256], *tok;
	struct raw r;
	int exists = -1;

	assert_int_equal(aj_blob_exists(&f->blob, container, "jobs/abc/hello.txt", &exists, &e), 0);
	assert_int_equal(exists, 0);
	assert_int_equal(aj_blob_put(&f->blob, container, "jobs/abc/hello.txt", "hello world", 11, &o, &e), 0);
	assert_int_equal(aj_blob_exists(&f->blob, container, "jobs/abc/hello.txt", &exists, &e), 0);
	assert_int_equal(exists, 1);

	tok = token_for_storage(f->cache);
	snprintf(path, sizeof(path), "%s/jobs/abc/hello.txt", container);
	raw_call("GET", path, NULL, tok, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 11);
	assert_memory_equal(r.body.buf, "hello world", 11);
	/* MD5("hello world"), from the storage documentation. */
	assert_string_equal(r.md5, "XrY7u+Ae7tCTyyK7j1rNww==");
	aj_buf_release(&r.body);
	aj_free(tok);
	aj_errors_release(&e);
}

static void names_with_spaces_and_unicode(void **state)
{
	struct fx *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	int exists = 0;

	assert_int_equal(aj_blob_put(&f->blob, container, "dir one/caf\xc3\xa9 #1?.txt", "x", 1, NULL, &e), 0);
	assert_int_equal(aj_blob_exists(&f->blob, container, "dir one/caf\xc3\xa9 #1?.txt", &exists, &e), 0);
	assert_int_equal(exists, 1);
	aj_errors_release(&e);
}

static void large_file_goes_in_blocks(void **state)
{
	struct fx *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_blob_put_options o = { .md5 = 1 };
	struct aj_blob small;
	size_t len = 3 * 1024 * 1024 + 12345;
	unsigned char *data = malloc(len);
	char file[] = "/tmp/aj-blob-XXXXXX", path[256], want[32], got[32], *tok;
	struct raw r;
	uint32_t x = 12345;
	FILE *fp;
	int fd;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		data[i] = (unsigned char)(x >> 16);
	}
	fd = mkstemp(file);
	assert_true(fd >= 0);
	fp = fdopen(fd, "w");
	assert_int_equal(fwrite(data, 1, len, fp), len);
	fclose(fp);

	blob_client(&small, f->cache, NULL, 1024 * 1024);
	assert_int_equal(aj_blob_upload_file(&small, container, "big.bin", file, &o, &e), 0);

	tok = token_for_storage(f->cache);
	snprintf(path, sizeof(path), "%s/big.bin", container);
	raw_call("GET", path, "comp=blocklist&blocklisttype=committed", tok, &r);
	assert_int_equal(r.status, 200);
	/* Four blocks: three full, one of 12345 bytes. */
	assert_non_null(strstr(aj_buf_cstr(&r.body), "<Size>12345</Size>"));
	assert_int_equal(strstr(aj_buf_cstr(&r.body), "<Size>1048576</Size>") != NULL, 1);
	aj_buf_release(&r.body);

	raw_call("GET", path, NULL, tok, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, len);
	assert_memory_equal(r.body.buf, data, len);
	md5_of(data, len, want);
	md5_of(r.body.buf, r.body.len, got);
	assert_string_equal(got, want);
	/* The whole-blob MD5 was stored by Put Block List. */
	assert_string_equal(r.md5, want);
	aj_buf_release(&r.body);

	/* Create-only over an existing name is success and changes nothing. */
	o.create_only = 1;
	assert_int_equal(aj_blob_upload_file(&small, container, "big.bin", file, &o, &e), 0);
	assert_int_equal(aj_blob_put(&f->blob, container, "big.bin", "other", 5, &o, &e), 0);
	raw_call("GET", path, NULL, tok, &r);
	assert_int_equal(r.body.len, len);
	aj_buf_release(&r.body);

	unlink(file);
	free(data);
	aj_free(tok);
	aj_blob_release(&small);
	aj_errors_release(&e);
}

/* Hands out `len` pseudo-random bytes; fails once `fail_after` bytes are out. */
struct gen {
	uint32_t x;
	size_t off, len, fail_after;
};

static int read_gen(void *data, void *buf, size_t cap, size_t *n, struct aj_errors *err)
{
	struct gen *g = data;
	unsigned char *p = buf;

	if (g->off >= g->fail_after)
		return aj_errors_add(err, NULL, "test reader: interrupted");
	*n = g->len - g->off < cap ? g->len - g->off : cap;
	for (size_t i = 0; i < *n; i++) {
		g->x = g->x * 1103515245u + 12345u;
		p[i] = (unsigned char)(g->x >> 16);
	}
	g->off += *n;
	return 0;
}

static void stream_upload_and_interruption(void **state)
{
	struct fx *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_blob_put_options o = { .md5 = 1, .create_only = 1 };
	struct aj_blob small;
	struct aj_blob_props props;
	struct gen g = { 7, 0, 2 * 1024 * 1024 + 99, (size_t)-1 };
	char path[256], *tok;
	struct raw r;

	blob_client(&small, f->cache, NULL, 1024 * 1024);
	assert_int_equal(aj_blob_upload(&small, container, "code/s.tar.gz", read_gen, &g, &o, &e), 0);
	assert_int_equal(aj_blob_head(&small, container, "code/s.tar.gz", &props, &e), 0);
	assert_int_equal(props.exists, 1);
	assert_int_equal(props.size, 2 * 1024 * 1024 + 99);

	/* Cut after two of three blocks: the blocks stay uncommitted, no blob appears. */
	g = (struct gen){ 7, 0, 2 * 1024 * 1024 + 99, 2 * 1024 * 1024 };
	assert_int_equal(aj_blob_upload(&small, container, "code/cut.tar.gz", read_gen, &g, &o, &e), -1);
	assert_true(aj_test_errors_contain(&e, "test reader: interrupted"));
	assert_int_equal(aj_blob_head(&small, container, "code/cut.tar.gz", &props, &e), 0);
	assert_int_equal(props.exists, 0);
	tok = token_for_storage(f->cache);
	snprintf(path, sizeof(path), "%s/code/cut.tar.gz", container);
	raw_call("GET", path, NULL, tok, &r);
	assert_int_equal(r.status, 404);
	aj_buf_release(&r.body);
	raw_call("GET", path, "comp=blocklist&blocklisttype=uncommitted", tok, &r);
	assert_non_null(strstr(aj_buf_cstr(&r.body), "<Size>1048576</Size>"));
	aj_buf_release(&r.body);

	/* Starting again commits the whole content under the same block ids. */
	g = (struct gen){ 7, 0, 2 * 1024 * 1024 + 99, (size_t)-1 };
	assert_int_equal(aj_blob_upload(&small, container, "code/cut.tar.gz", read_gen, &g, &o, &e), 0);
	raw_call("GET", path, NULL, tok, &r);
	assert_int_equal(r.status, 200);
	assert_int_equal(r.body.len, 2 * 1024 * 1024 + 99);
	aj_buf_release(&r.body);
	aj_free(tok);
	aj_blob_release(&small);
	aj_errors_release(&e);
}

static void missing_container_is_reported(void **state)
{
	struct fx *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	char want[512];

	assert_int_equal(aj_blob_put(&f->blob, "no-such-container", "x", "x", 1, NULL, &e), -1);
	snprintf(want, sizeof(want), "blob PUT %s/no-such-container/x: HTTP 404 ContainerNotFound: The specified container does not exist.",
		 endpoint);
	assert_true(aj_test_errors_contain(&e, want));
	assert_null(strstr(aj_test_errors_text(&e), "eyJ"));
	aj_errors_release(&e);
}

static void untrusted_certificate_fails_without_retry(void **state)
{
	struct fx *f = *state;
	struct aj_blob_config c;
	struct aj_blob b;
	struct aj_errors e = AJ_ERRORS_INIT;
	int exists;

	aj_blob_config_default(&c);
	c.endpoint = endpoint;
	c.tokens = f->cache;
	assert_int_equal(aj_blob_init(&b, &c, &e), 0);
	assert_int_equal(aj_blob_exists(&b, container, "x", &exists, &e), -1);
	assert_true(aj_test_errors_contain(&e, "HEAD https://127.0.0.1:"));
	assert_true(aj_test_errors_contain(&e, "certificate"));
	assert_false(aj_test_errors_contain(&e, "attempts"));
	aj_blob_release(&b);
	aj_errors_release(&e);
}

static void user_delegation_sas(void **state)
{
	struct fx *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_sas_key key;
	struct aj_buf q = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_sas_params p = { .account = "devstoreaccount1", .container = container,
				   .blob = "ud/read-me.txt", .permissions = "r" };
	struct aj_blob via_sas;
	char start[32], expiry[32], past[32], path[256];
	time_t now = time(NULL);
	struct raw r;
	char *sig;

	iso_time(now - 300, start);
	iso_time(now + 3600, expiry);
	iso_time(now - 60, past);
	assert_int_equal(aj_blob_user_delegation_key(&f->blob, start, expiry, &key, &e), 0);
	assert_string_equal(key.signed_oid, OID);
	assert_string_equal(key.signed_tid, TID);
	assert_string_equal(key.signed_service, "b");
	assert_int_equal(aj_blob_put(&f->blob, container, "ud/read-me.txt", "delegated", 9, NULL, &e), 0);

	/* A read SAS reads. */
	p.expiry = expiry;
	assert_int_equal(aj_sas_user_delegation(&p, &key, &q, &e), 0);
	snprintf(path, sizeof(path), "%s/ud/read-me.txt", container);
	raw_call("GET", path, aj_buf_cstr(&q), NULL, &r);
	assert_int_equal(r.status, 200);
	assert_memory_equal(r.body.buf, "delegated", 9);
	aj_buf_release(&r.body);

	/* ... but cannot write. */
	raw_call("PUT", path, aj_buf_cstr(&q), NULL, &r);
	assert_int_equal(r.status, 403);
	assert_non_null(strstr(aj_buf_cstr(&r.body), "AuthorizationPermissionMismatch"));
	aj_buf_release(&r.body);

	/* A tampered signature is refused. */
	sig = strstr(q.buf, "&sig=");
	assert_non_null(sig);
	sig[5] = sig[5] == 'A' ? 'B' : 'A';
	raw_call("GET", path, aj_buf_cstr(&q), NULL, &r);
	assert_int_equal(r.status, 403);
	/* Azure says AuthenticationFailed; Azurite says AuthorizationFailure. */
	assert_true(strstr(aj_buf_cstr(&r.body), "AuthenticationFailed") ||
		    strstr(aj_buf_cstr(&r.body), "AuthorizationFailure"));
	aj_buf_release(&r.body);

	/* An expired SAS is refused. */
	aj_buf_reset(&q);
	p.start = start;
	p.expiry = past;
	assert_int_equal(aj_sas_user_delegation(&p, &key, &q, &e), 0);
	raw_call("GET", path, aj_buf_cstr(&q), NULL, &r);
	assert_int_equal(r.status, 403);
	aj_buf_release(&r.body);

	/* A container SAS with create+write drives the client's uploads. */
	aj_buf_reset(&q);
	p.blob = NULL;
	p.start = NULL;
	p.expiry = expiry;
	p.permissions = "wcr";
	assert_int_equal(aj_sas_user_delegation(&p, &key, &q, &e), 0);
	blob_client(&via_sas, NULL, aj_buf_cstr(&q), 0);
	assert_int_equal(aj_blob_put(&via_sas, container, "ud/written.txt", "abc", 3, NULL, &e), 0);
	{
		int exists = 0;

		assert_int_equal(aj_blob_exists(&via_sas, container, "ud/written.txt", &exists, &e), 0);
		assert_int_equal(exists, 1);
	}
	aj_blob_release(&via_sas);
	aj_sas_key_release(&key);
	aj_buf_release(&q);
	aj_errors_release(&e);
}

/*
 * The controller's storage Secret (controller/storage.c) against a real
 * verifier: the mount's container SAS does what a read-write blobfuse2 mount
 * needs (create, write, list, read, delete), the code URL reads its one
 * archive and cannot write it.
 */
static void storage_secret_sas(void **state)
{
	static const struct aj_shape_args one = { 1, 0, 0 };
	struct fx *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_sas_key key;
	const struct aj_sas_key *keys[] = { &key };
	const char *accounts[] = { "devstoreaccount1" };
	struct aj_storage_target t = { "ns/j", "ns", "j-storage", "j", "j", "u", "aj.dev/v1alpha1" };
	struct aj_storage_secret_in in;
	struct aj_code_blob blob;
	struct aj_jobspec s;
	struct aj_buf yaml = AJ_BUF_INIT(AJ_BUF_SMALL), tmpl = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf sas = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_blob via_sas;
	unsigned char d[32];
	char digest[65], start[32], expiry[32], path[512];
	const char *cfg, *url, *a, *z;
	cJSON *secret = NULL;
	time_t now = time(NULL), renew;
	struct raw r;
	int exists = 0, i;

	(void)state;
	iso_time(now - 300, start);
	iso_time(now + 3600, expiry);
	assert_int_equal(aj_blob_user_delegation_key(&f->blob, start, expiry, &key, &e), 0);
	EVP_Digest("archive", 7, d, NULL, EVP_sha256(), NULL);
	for (i = 0; i < 32; i++)
		snprintf(digest + 2 * i, 3, "%02x", d[i]);
	snprintf(path, sizeof(path), "aj-code/%s.tar.gz", digest);
	assert_int_equal(aj_blob_put(&f->blob, container, path, "archive", 7, NULL, &e), 0);

	aj_buf_addf(&yaml, "config: {target: {service: volcano, gpus_per_node: 0}, environment: {image: x}, "
		    "jobs: [{sku: C1}], storage: {data: {storage_account_name: devstoreaccount1, "
		    "container_name: %s, mount_dir: /mnt/data}}, _extra: {code_upload: {strategy: blob, "
		    "blob: {storage_account: devstoreaccount1, container: %s}}}}", container, container);
	aj_test_spec(aj_buf_cstr(&yaml), &one, NULL, 0, &s);
	s.code.digest = aj_strdup(digest);
	assert_int_equal(aj_code_blob(&s, &blob, &e), 1);
	/* path-style: https://127.0.0.1:PORT/{account} */
	aj_buf_add(&tmpl, endpoint, (size_t)(strrchr(endpoint, '/') - endpoint));
	aj_buf_addstr(&tmpl, "/{account}");
	memset(&in, 0, sizeof(in));
	in.spec = &s;
	in.blob = &blob;
	in.endpoint = aj_buf_cstr(&tmpl);
	in.lifetime = 3600;
	in.now = now;
	in.accounts = accounts;
	in.keys = keys;
	in.accounts_nr = 1;
	in.target = &t;
	assert_int_equal(aj_storage_secret(&in, &secret, &renew, &e), 0);

	/* the mount's SAS, as blobfuse2 reads it from its configuration */
	cfg = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(secret, "stringData"), "data.yaml"));
	assert_non_null(cfg);
	a = strstr(cfg, "\n  sas: '");
	assert_non_null(a);
	a += 9;
	z = strchr(a, '\'');
	aj_buf_add(&sas, a, (size_t)(z - a));
	blob_client(&via_sas, NULL, aj_buf_cstr(&sas), 0);
	assert_int_equal(aj_blob_put(&via_sas, container, "mnt/written.txt", "mounted", 7, NULL, &e), 0);
	assert_int_equal(aj_blob_exists(&via_sas, container, "mnt/written.txt", &exists, &e), 0);
	assert_int_equal(exists, 1);
	aj_blob_release(&via_sas);
	snprintf(path, sizeof(path), "restype=container&comp=list&%s", aj_buf_cstr(&sas));
	raw_call("GET", container, path, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_non_null(strstr(aj_buf_cstr(&r.body), "<Name>mnt/written.txt</Name>"));
	aj_buf_release(&r.body);
	snprintf(path, sizeof(path), "%s/mnt/written.txt", container);
	raw_call("GET", path, aj_buf_cstr(&sas), NULL, &r);
	assert_int_equal(r.status, 200);
	assert_memory_equal(r.body.buf, "mounted", 7);
	aj_buf_release(&r.body);
	raw_call("DELETE", path, aj_buf_cstr(&sas), NULL, &r);
	assert_int_equal(r.status, 202);
	aj_buf_release(&r.body);

	/* the code URL: endpoint/container/aj-code/<digest>.tar.gz?SAS, read only */
	url = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(secret, "stringData"), "code-url"));
	assert_non_null(url);
	assert_int_equal(strncmp(url, endpoint, strlen(endpoint)), 0);
	a = url + strlen(endpoint) + 1;
	z = strchr(a, '?');
	assert_non_null(z);
	snprintf(path, sizeof(path), "%.*s", (int)(z - a), a);
	raw_call("GET", path, z + 1, NULL, &r);
	assert_int_equal(r.status, 200);
	assert_memory_equal(r.body.buf, "archive", 7);
	aj_buf_release(&r.body);
	raw_call("PUT", path, z + 1, NULL, &r);
	assert_int_equal(r.status, 403);
	aj_buf_release(&r.body);

	cJSON_Delete(secret);
	aj_jobspec_release(&s);
	aj_sas_key_release(&key);
	aj_buf_release(&yaml);
	aj_buf_release(&tmpl);
	aj_buf_release(&sas);
	aj_errors_release(&e);
}

static void service_sas_with_account_key(void **state)
{
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_buf q = AJ_BUF_INIT(AJ_BUF_SMALL);
	char expiry[32];
	struct aj_sas_params p = { .account = "devstoreaccount1", .container = container,
				   .permissions = "rcw", .protocol = "https" };
	struct aj_blob b;
	const char *sig;
	int exists = 0;

	(void)state;
	iso_time(time(NULL) + 3600, expiry);
	p.expiry = expiry;
	assert_int_equal(aj_sas_service(&p, ACCOUNT_KEY, &q, &e), 0);
	blob_client(&b, NULL, aj_buf_cstr(&q), 0);
	assert_int_equal(aj_blob_put(&b, container, "svc/a.txt", "svc", 3, NULL, &e), 0);
	assert_int_equal(aj_blob_exists(&b, container, "svc/a.txt", &exists, &e), 0);
	assert_int_equal(exists, 1);
	aj_blob_release(&b);

	/* Read-only: the write is refused, and the error does not carry the SAS. */
	aj_buf_reset(&q);
	p.permissions = "r";
	assert_int_equal(aj_sas_service(&p, ACCOUNT_KEY, &q, &e), 0);
	sig = strstr(aj_buf_cstr(&q), "sig=") + 4;
	blob_client(&b, NULL, aj_buf_cstr(&q), 0);
	assert_int_equal(aj_blob_put(&b, container, "svc/b.txt", "svc", 3, NULL, &e), -1);
	assert_true(aj_test_errors_contain(&e, "/svc/b.txt: HTTP 403 AuthorizationPermissionMismatch"));
	assert_true(aj_test_errors_contain(&e, "; the storage service refused the SAS aj was given: it "
					   "has expired, is not valid yet, or does not allow PUT"));
	assert_null(strstr(aj_test_errors_text(&e), sig));
	assert_null(strstr(aj_test_errors_text(&e), "sig="));
	aj_blob_release(&b);
	aj_buf_release(&q);
	aj_errors_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(put_small_blob_and_head, setup, teardown),
		cmocka_unit_test_setup_teardown(names_with_spaces_and_unicode, setup, teardown),
		cmocka_unit_test_setup_teardown(large_file_goes_in_blocks, setup, teardown),
		cmocka_unit_test_setup_teardown(stream_upload_and_interruption, setup, teardown),
		cmocka_unit_test_setup_teardown(missing_container_is_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(untrusted_certificate_fails_without_retry, setup, teardown),
		cmocka_unit_test_setup_teardown(user_delegation_sas, setup, teardown),
		cmocka_unit_test_setup_teardown(storage_secret_sas, setup, teardown),
		cmocka_unit_test(service_sas_with_account_key),
	};

	aj_alloc_hook_cjson();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
