/*
 * Identity providers and the token cache against the loopback peer
 * (tests/peers/azure_peer.py) and a stand-in Azure CLI (tests/peers/fake-az).
 */
#include "support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../peers/azure_test.h"
#include "azure/credential.h"
#include "core/alloc.h"
#include "core/error.h"

#define ARM_SCOPE "https://management.azure.com/.default"

static struct aj_peer peer;
static struct aj_fake_clock fclock;

/*
 * The provider under test: reset points its settings at the peer, done
 * releases the provider, its last token and the errors.
 */
static struct {
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e;
	struct aj_token t;
} fx;

typedef int (*provider_new_fn)(const struct aj_identity_config *c,
			       struct aj_credential **out, struct aj_errors *err);

static int group_setup(void **state)
{
	(void)state;
	return aj_peer_start(&peer);
}

static int group_teardown(void **state)
{
	(void)state;
	aj_peer_stop(&peer);
	return 0;
}

static int64_t start_ms(void)
{
	return (int64_t)time(NULL) * 1000;
}

/* Settings pointing every provider at the peer, on the fake clock. */
static void peer_config(struct aj_identity_config *c)
{
	aj_identity_config_default(c);
	c->hooks = aj_fake_hooks(&fclock, start_ms());
	c->imds_endpoint = peer.base;
	c->authority_host = peer.base;
	c->tenant_id = "tenant-x";
	c->client_id = "client-1";
	c->az_path = AJ_SOURCE_DIR "/tests/peers/fake-az";
}

static int reset(void **state)
{
	(void)state;
	unsetenv("AJ_FAKE_AZ_MODE");
	unsetenv("AJ_FAKE_AZ_EXPIRES_ON");
	unsetenv("AJ_FAKE_AZ_ARGS");
	memset(&fx, 0, sizeof(fx));
	peer_config(&fx.c);
	return aj_peer_control(&peer, "reset", NULL);
}

static int done(void **state)
{
	(void)state;
	aj_token_release(&fx.t);
	aj_credential_free(fx.cred);
	fx.cred = NULL;
	aj_errors_release(&fx.e);
	return 0;
}

static void peer_set(const char *what, const char *json)
{
	assert_int_equal(aj_peer_control(&peer, what, json), 0);
}

/* Replace the provider under test with a new one built from fx.c. */
static int provider_new(provider_new_fn ctor)
{
	aj_credential_free(fx.cred);
	return ctor(&fx.c, &fx.cred, &fx.e);
}

/* A token for ARM_SCOPE into fx.t, dropping the previous one. */
static int get_token(void)
{
	aj_token_release(&fx.t);
	return aj_credential_get_token(fx.cred, ARM_SCOPE, &fx.t, &fx.e);
}

/* The n-th recorded request (0-based; negative counts from the end). */
static cJSON *recorded(int n)
{
	cJSON *all = aj_peer_requests(&peer);
	int size = cJSON_GetArraySize(all);
	cJSON *r = cJSON_DetachItemFromArray(all, n < 0 ? size + n : n);

	cJSON_Delete(all);
	assert_non_null(r);
	return r;
}

static const char *field(const cJSON *r, const char *group, const char *key)
{
	const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(r, group), key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* The request the peer saw for a token from a new IMDS provider. */
static cJSON *imds_request(void)
{
	assert_int_equal(provider_new(aj_credential_imds_new), 0);
	assert_int_equal(get_token(), 0);
	return recorded(-1);
}

static void imds_token_and_request_shape(void **state)
{
	cJSON *r;

	(void)state;
	fx.c.mi_client_id = "11111111-aaaa-4bbb-8ccc-222222222222";
	peer_set("config", "{\"imds_expires_on\": 2000000000}");
	r = imds_request();
	assert_non_null(strstr(fx.t.value, "eyJ0.imds."));
	assert_int_equal(fx.t.expires_on, 2000000000);
	assert_string_equal(field(r, "headers", "metadata"), "true");
	assert_string_equal(field(r, "query", "api-version"), "2018-02-01");
	assert_string_equal(field(r, "query", "resource"), "https://management.azure.com/");
	assert_string_equal(field(r, "query", "client_id"), "11111111-aaaa-4bbb-8ccc-222222222222");
	cJSON_Delete(r);
}

static void imds_selects_by_object_or_resource_id(void **state)
{
	cJSON *r;

	(void)state;
	fx.c.mi_resource_id = "/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u";
	r = imds_request();
	assert_string_equal(field(r, "query", "msi_res_id"), fx.c.mi_resource_id);
	assert_null(field(r, "query", "client_id"));
	cJSON_Delete(r);

	fx.c.mi_resource_id = NULL;
	fx.c.mi_object_id = "33333333-aaaa-4bbb-8ccc-444444444444";
	r = imds_request();
	assert_string_equal(field(r, "query", "object_id"), fx.c.mi_object_id);
	cJSON_Delete(r);

	fx.c.mi_client_id = "x";
	assert_int_equal(provider_new(aj_credential_imds_new), -1);
	assert_null(fx.cred);
	assert_true(aj_test_errors_contain(&fx.e, "managed-identity: choose one of client id, object id and resource id"));
}

static void imds_retries_transient_statuses(void **state)
{
	(void)state;
	peer_set("faults",
		"[{\"path\": \"oauth2/token\", \"status\": 410},"
		" {\"path\": \"oauth2/token\", \"status\": 500},"
		" {\"path\": \"oauth2/token\", \"status\": 404},"
		" {\"path\": \"oauth2/token\", \"status\": 429, \"headers\": {\"Retry-After\": \"3\"}}]");
	assert_int_equal(provider_new(aj_credential_imds_new), 0);
	assert_int_equal(get_token(), 0);
	assert_non_null(fx.t.value);
	/* Exponential from 1 s at the lowest jitter (-20 %), then Retry-After. */
	assert_int_equal(fclock.nr_sleeps, 4);
	assert_int_equal(fclock.sleeps[0], 800);
	assert_int_equal(fclock.sleeps[1], 1600);
	assert_int_equal(fclock.sleeps[2], 3200);
	assert_int_equal(fclock.sleeps[3], 3000);
	assert_int_equal(aj_peer_count(&peer, "oauth2/token"), 5);
}

static void imds_gives_up_after_bounded_retries(void **state)
{
	(void)state;
	peer_set("faults",
		"[{\"path\": \"oauth2/token\", \"status\": 503, \"times\": 50,"
		"  \"body\": {\"error\": \"temporarily_unavailable\", \"error_description\": \"IMDS is busy\"}}]");
	assert_int_equal(provider_new(aj_credential_imds_new), 0);
	assert_int_equal(get_token(), -1);
	assert_null(fx.t.value);
	/* 1 + 5 retries. */
	assert_int_equal(aj_peer_count(&peer, "oauth2/token"), 6);
	assert_true(aj_test_errors_contain(&fx.e,
		"managed-identity: HTTP 503: temporarily_unavailable: IMDS is busy (after 6 attempts)"));
}

static void imds_unknown_identity_is_unavailable(void **state)
{
	(void)state;
	fx.c.mi_client_id = "not-assigned";
	peer_set("config", "{\"imds_client_ids\": [\"other\"]}");
	assert_int_equal(provider_new(aj_credential_imds_new), 0);
	assert_int_equal(get_token(), AJ_CREDENTIAL_UNAVAILABLE);
	assert_true(aj_test_errors_contain(&fx.e, "managed-identity: HTTP 400: invalid_request: Identity not found"));
	/* 400 is not retried. */
	assert_int_equal(aj_peer_count(&peer, "oauth2/token"), 1);
}

static void token_never_in_errors(void **state)
{
	(void)state;
	/* A 200 carrying a token but no expiry must fail without quoting it. */
	peer_set("faults",
		"[{\"path\": \"oauth2/token\", \"status\": 200,"
		"  \"body\": {\"access_token\": \"eyJ0.leaked-secret-value\", \"token_type\": \"Bearer\"}},"
		" {\"path\": \"oauth2/token\", \"status\": 200, \"body\": \"eyJ0.leaked-secret-value\"}]");
	assert_int_equal(provider_new(aj_credential_imds_new), 0);
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e, "managed-identity: token response has no usable expiry"));
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e, "managed-identity: token response is not valid JSON"));
	assert_null(strstr(aj_test_errors_text(&fx.e), "leaked-secret"));
	assert_null(strstr(fclock.log, "leaked-secret"));
}

/* Expiries past year 9999 or negative are refused, not converted (found by fuzz_azure) */
static void absurd_expiries_are_refused(void **state)
{
	(void)state;
	peer_set("faults",
		"[{\"path\": \"oauth2/token\", \"status\": 200,"
		"  \"body\": {\"access_token\": \"eyJ0.a\", \"expires_on\": 1e77}},"
		" {\"path\": \"oauth2/token\", \"status\": 200,"
		"  \"body\": {\"access_token\": \"eyJ0.b\", \"expires_in\": -5e30}},"
		" {\"path\": \"oauth2/token\", \"status\": 200,"
		"  \"body\": {\"access_token\": \"eyJ0.c\", \"expires_on\": 253402300799}}]");
	assert_int_equal(provider_new(aj_credential_imds_new), 0);
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e, "managed-identity: token response has no usable expiry"));
	aj_errors_release(&fx.e);
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e, "managed-identity: token response has no usable expiry"));
	/* the last second of year 9999 is still a time */
	assert_int_equal(get_token(), 0);
	assert_true(fx.t.expires_on == 253402300799LL);
}

static void workload_identity_rereads_the_token_file(void **state)
{
	char path[128];
	cJSON *r;

	(void)state;
	snprintf(path, sizeof(path), "%s/azure-identity-token", peer.dir);
	write_file(path, "assertion-one\n");
	fx.c.federated_token_file = path;
	peer_set("config", "{\"client_assertion\": \"assertion-one\"}");
	assert_int_equal(provider_new(aj_credential_workload_new), 0);
	assert_int_equal(get_token(), 0);
	assert_non_null(strstr(fx.t.value, "eyJ0.entra."));
	/* expires_in arrives as a number, relative to the (fake) clock. */
	assert_int_equal(fx.t.expires_on, fclock.now_ms / 1000 + 3599);

	r = recorded(-1);
	assert_string_equal(cJSON_GetObjectItem(r, "path")->valuestring, "/tenant-x/oauth2/v2.0/token");
	assert_string_equal(field(r, "headers", "content-type"), "application/x-www-form-urlencoded");
	assert_string_equal(cJSON_GetObjectItem(r, "body")->valuestring,
		"grant_type=client_credentials&client_id=client-1"
		"&scope=https%3A%2F%2Fmanagement.azure.com%2F.default"
		"&client_assertion_type=urn%3Aietf%3Aparams%3Aoauth%3Aclient-assertion-type%3Ajwt-bearer"
		"&client_assertion=assertion-one");
	cJSON_Delete(r);

	/* kubelet rotated the file: the next request must carry the new one. */
	write_file(path, "assertion-two");
	peer_set("config", "{\"client_assertion\": \"assertion-two\"}");
	assert_int_equal(get_token(), 0);

	/* A stale assertion is refused; the error names the code, not the secret. */
	write_file(path, "assertion-stale");
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e, "workload-identity: HTTP 401: invalid_client: AADSTS700024"));
	assert_null(strstr(aj_test_errors_text(&fx.e), "assertion-stale"));

	unlink(path);
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e, "workload-identity: cannot read the federated token file"));
}

static void workload_identity_needs_its_settings(void **state)
{
	(void)state;
	fx.c.tenant_id = NULL;
	assert_int_equal(provider_new(aj_credential_workload_new), -1);
	assert_true(aj_test_errors_contain(&fx.e, "workload-identity: AZURE_TENANT_ID is not set"));
	assert_true(aj_test_errors_contain(&fx.e, "workload-identity: AZURE_FEDERATED_TOKEN_FILE is not set"));
	assert_int_equal(provider_new(aj_credential_secret_new), -1);
	assert_true(aj_test_errors_contain(&fx.e, "client-secret: AZURE_CLIENT_SECRET is not set"));
}

static void client_secret_and_redaction(void **state)
{
	(void)state;
	fx.c.client_secret = "wrong-s3cret-value";
	peer_set("config", "{\"client_secret\": \"right-s3cret\"}");
	assert_int_equal(provider_new(aj_credential_secret_new), 0);
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e,
		"client-secret: HTTP 401: invalid_client: AADSTS7000215: Invalid client secret provided."));
	assert_null(strstr(aj_test_errors_text(&fx.e), "s3cret"));

	fx.c.client_secret = "right-s3cret";
	assert_int_equal(provider_new(aj_credential_secret_new), 0);
	assert_int_equal(get_token(), 0);
	assert_non_null(strstr(fx.t.value, "eyJ0.entra."));
	aj_token_release(&fx.t);

	/* A scope without /.default is refused by the service; its message surfaces. */
	assert_int_equal(aj_credential_get_token(fx.cred, "https://management.azure.com/", &fx.t, &fx.e), -1);
	assert_true(aj_test_errors_contain(&fx.e, "client-secret: HTTP 400: invalid_scope: AADSTS70011"));
}

static void azure_cli_token(void **state)
{
	char args[128], text[512] = "";
	FILE *f;

	(void)state;
	snprintf(args, sizeof(args), "%s/az-args.json", peer.dir);
	setenv("AJ_FAKE_AZ_ARGS", args, 1);
	setenv("AJ_FAKE_AZ_EXPIRES_ON", "1900000000", 1);
	assert_int_equal(provider_new(aj_credential_cli_new), 0);
	assert_int_equal(get_token(), 0);
	assert_string_equal(fx.t.value, "eyJ0.cli.secret-token-value");
	assert_int_equal(fx.t.expires_on, 1900000000);
	f = fopen(args, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	/* One argument per element: the resource is never split or quoted. */
	assert_string_equal(text,
		"[\"account\", \"get-access-token\", \"--resource\", \"https://management.azure.com/\", \"-o\", \"json\"]");

	/* Older CLIs print only expiresOn, in local time. */
	setenv("AJ_FAKE_AZ_MODE", "legacy", 1);
	assert_int_equal(get_token(), 0);
	assert_int_equal(fx.t.expires_on, 1900000000);
}

static void azure_cli_failures(void **state)
{
	(void)state;
	assert_int_equal(provider_new(aj_credential_cli_new), 0);
	setenv("AJ_FAKE_AZ_MODE", "login", 1);
	assert_int_equal(get_token(), AJ_CREDENTIAL_UNAVAILABLE);
	assert_true(aj_test_errors_contain(&fx.e, "azure-cli: az account get-access-token exited with status 1: ERROR: Please run 'az login'"));
	setenv("AJ_FAKE_AZ_MODE", "fail", 1);
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e, "exited with status 2: ERROR: AADSTS70043"));
	assert_null(strstr(aj_test_errors_text(&fx.e), "more detail"));

	setenv("AJ_FAKE_AZ_MODE", "hang", 1);
	fx.c.cli_timeout_ms = 1500;
	assert_int_equal(provider_new(aj_credential_cli_new), 0);
	assert_int_equal(get_token(), -1);
	assert_true(aj_test_errors_contain(&fx.e, "azure-cli: az account get-access-token did not finish within 1500 ms"));

	fx.c.az_path = "/nonexistent/az";
	assert_int_equal(provider_new(aj_credential_cli_new), 0);
	assert_int_equal(get_token(), AJ_CREDENTIAL_UNAVAILABLE);
	assert_true(aj_test_errors_contain(&fx.e, "azure-cli: cannot run /nonexistent/az"));
}

static void chain_picks_first_available(void **state)
{
	char path[128];

	(void)state;
	/* Nothing but the CLI: IMDS points at a closed port and is skipped. */
	fx.c.imds_endpoint = "http://127.0.0.1:9";
	assert_int_equal(provider_new(aj_credential_chain_new), 0);
	assert_int_equal(get_token(), 0);
	assert_string_equal(fx.t.value, "eyJ0.cli.secret-token-value");
	assert_int_equal(fclock.nr_sleeps, 0);

	/* IMDS answers: it comes before the CLI. */
	peer_config(&fx.c);
	assert_int_equal(provider_new(aj_credential_chain_new), 0);
	assert_int_equal(get_token(), 0);
	assert_non_null(strstr(fx.t.value, "eyJ0.imds."));

	/* Workload identity settings present: used first. */
	snprintf(path, sizeof(path), "%s/wi-token", peer.dir);
	write_file(path, "assertion");
	peer_config(&fx.c);
	fx.c.federated_token_file = path;
	assert_int_equal(provider_new(aj_credential_chain_new), 0);
	assert_int_equal(get_token(), 0);
	assert_non_null(strstr(fx.t.value, "eyJ0.entra."));
	unlink(path);

	/* Nothing at all. */
	peer_config(&fx.c);
	fx.c.imds_endpoint = "http://127.0.0.1:9";
	fx.c.az_path = "/nonexistent/az";
	assert_int_equal(provider_new(aj_credential_chain_new), 0);
	assert_int_equal(get_token(), AJ_CREDENTIAL_UNAVAILABLE);
	assert_true(aj_test_errors_contain(&fx.e, "no Azure credential is available; tried:"));
	assert_true(aj_test_errors_contain(&fx.e, "managed-identity: no identity endpoint at http://127.0.0.1:9"));
	assert_true(aj_test_errors_contain(&fx.e, "azure-cli: cannot run /nonexistent/az"));
}

/* A cache over the client-secret provider at the peer, on the fake clock. */
static struct aj_token_cache *secret_cache(void)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_token_cache *cache;
	struct aj_errors e = AJ_ERRORS_INIT;

	peer_config(&c);
	c.client_secret = "s";
	assert_int_equal(aj_credential_secret_new(&c, &cred, &e), 0);
	assert_int_equal(aj_token_cache_new(cred, &c.hooks, &cache, &e), 0);
	aj_errors_release(&e);
	return cache;
}

static void cached(struct aj_token_cache *cache, struct aj_token *t)
{
	struct aj_errors e = AJ_ERRORS_INIT;

	assert_int_equal(aj_token_cache_get(cache, ARM_SCOPE, t, &e), 0);
	aj_errors_release(&e);
}

/* A secret_cache(), the first token it served and the clock at that moment. */
struct cache_run {
	struct aj_token_cache *cache;
	struct aj_token first, later;
	int64_t t0;
};

/* peer_json (unless NULL) configures the peer before the first token. */
static void cache_start(struct cache_run *r, const char *peer_json)
{
	if (peer_json)
		peer_set("config", peer_json);
	memset(r, 0, sizeof(*r));
	r->cache = secret_cache();
	r->t0 = fclock.now_ms;
	cached(r->cache, &r->first);
}

/* The token served at_s seconds after the first one, into r->later. */
static void cache_at(struct cache_run *r, int64_t at_s)
{
	aj_token_release(&r->later);
	fclock.now_ms = r->t0 + at_s * 1000;
	cached(r->cache, &r->later);
}

static void cache_same_at(struct cache_run *r, int64_t at_s)
{
	cache_at(r, at_s);
	assert_string_equal(r->first.value, r->later.value);
}

static void cache_new_at(struct cache_run *r, int64_t at_s)
{
	cache_at(r, at_s);
	assert_string_not_equal(r->first.value, r->later.value);
}

static void cache_finish(struct cache_run *r)
{
	aj_token_release(&r->first);
	aj_token_release(&r->later);
	aj_token_cache_free(r->cache);
}

static void cache_refreshes_five_minutes_before_expiry(void **state)
{
	struct cache_run r;

	(void)state;
	cache_start(&r, "{\"token_lifetime\": 3600}");
	assert_int_equal(r.first.expires_on, r.t0 / 1000 + 3600);

	/* 301 s before expiry: still served from the cache. */
	cache_same_at(&r, 3600 - 301);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 1);

	/* 300 s before: refreshed. */
	cache_new_at(&r, 3600 - 300);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 2);

	/* Scopes are cached separately. */
	assert_int_equal(aj_token_cache_get(r.cache, "https://storage.azure.com/.default", &fx.t, &fx.e), 0);
	assert_string_not_equal(fx.t.value, r.later.value);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 3);
	assert_null(strstr(fclock.log, "eyJ0"));
	cache_finish(&r);
}

static void cache_keeps_old_token_when_refresh_fails(void **state)
{
	struct cache_run r;
	int before;

	(void)state;
	cache_start(&r, "{\"token_lifetime\": 3600}");
	peer_set("faults",
		"[{\"path\": \"oauth2/v2.0/token\", \"status\": 400, \"times\": 100,"
		"  \"body\": {\"error\": \"invalid_request\", \"error_description\": \"AADSTS90002: Tenant not found.\"}}]");

	cache_same_at(&r, 3400);
	before = aj_peer_count(&peer, "oauth2/v2.0/token");
	assert_int_equal(before, 2);
	assert_non_null(strstr(fclock.log, "keeping the current token"));

	/* Within 30 s of the failed attempt: no new request. */
	cache_at(&r, 3400 + 29);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), before);
	/* After 30 s: tried again, still failing, still the old token. */
	cache_same_at(&r, 3400 + 30);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), before + 1);

	/* Expired: the failure reaches the caller. */
	fclock.now_ms = r.t0 + 3600 * 1000;
	assert_int_equal(aj_token_cache_get(r.cache, ARM_SCOPE, &fx.t, &fx.e), -1);
	assert_null(fx.t.value);
	assert_true(aj_test_errors_contain(&fx.e, "client-secret: HTTP 400: invalid_request: AADSTS90002: Tenant not found."));
	assert_null(strstr(aj_test_errors_text(&fx.e), r.first.value));
	cache_finish(&r);
}

static void cache_honours_refresh_in_and_long_lifetimes(void **state)
{
	struct cache_run r;

	(void)state;
	cache_start(&r, "{\"token_lifetime\": 3600, \"refresh_in\": 600}");
	cache_same_at(&r, 599);
	cache_new_at(&r, 600);
	cache_finish(&r);

	/* A day-long token without refresh_in: refreshed at half its life. */
	cache_start(&r, "{\"token_lifetime\": 86400, \"refresh_in\": null}");
	cache_same_at(&r, 43199);
	cache_new_at(&r, 43200);
	cache_finish(&r);
}

static void cache_expire_forces_a_new_token(void **state)
{
	struct cache_run r;

	(void)state;
	cache_start(&r, NULL);
	aj_token_cache_expire(r.cache, ARM_SCOPE);
	cache_new_at(&r, 0);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 2);
	cache_finish(&r);
}

struct getter {
	struct aj_token_cache *cache;
	struct aj_token token;
	int rc;
};

static void *get_in_thread(void *arg)
{
	struct getter *g = arg;
	struct aj_errors e = AJ_ERRORS_INIT;

	g->rc = aj_token_cache_get(g->cache, ARM_SCOPE, &g->token, &e);
	aj_errors_release(&e);
	return NULL;
}

static void cache_acquires_once_for_concurrent_callers(void **state)
{
	struct aj_token_cache *cache;
	struct getter g[8];
	pthread_t th[8];

	(void)state;
	/* A slow token endpoint keeps the first acquisition in flight. */
	assert_int_equal(aj_peer_control(&peer, "config", "{\"token_delay\": 0.5}"), 0);
	cache = secret_cache();
	for (int i = 0; i < 8; i++) {
		g[i].cache = cache;
		assert_int_equal(pthread_create(&th[i], NULL, get_in_thread, &g[i]), 0);
	}
	for (int i = 0; i < 8; i++)
		assert_int_equal(pthread_join(th[i], NULL), 0);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(g[i].rc, 0);
		assert_string_equal(g[i].token.value, g[0].token.value);
	}
	for (int i = 0; i < 8; i++)
		aj_token_release(&g[i].token);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 1);
	aj_token_cache_free(cache);
}

static void parses_expiry_forms(void **state)
{
	(void)state;
	assert_int_equal(aj_token_parse_time("1506484173"), 1506484173);
	assert_int_equal(aj_token_parse_time("2017-09-27T03:49:33Z"), 1506484173);
	assert_int_equal(aj_token_parse_time("2017-09-27 03:49:33.123456+00:00"), 1506484173);
	assert_int_equal(aj_token_parse_time("soon"), -1);
	assert_int_equal(aj_token_parse_time("2017-09-27T03:49:33+02:00"), -1);
	assert_int_equal(aj_token_parse_time(""), -1);
}

static void scope_becomes_resource(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	(void)state;
	assert_int_equal(aj_scope_to_resource("https://storage.azure.com/.default", &b), 0);
	assert_string_equal(aj_buf_cstr(&b), "https://storage.azure.com/");
	aj_buf_reset(&b);
	assert_int_equal(aj_scope_to_resource("api://x", &b), 0);
	assert_string_equal(aj_buf_cstr(&b), "api://x");
	aj_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(imds_token_and_request_shape, reset, done),
		cmocka_unit_test_setup_teardown(imds_selects_by_object_or_resource_id, reset, done),
		cmocka_unit_test_setup_teardown(imds_retries_transient_statuses, reset, done),
		cmocka_unit_test_setup_teardown(imds_gives_up_after_bounded_retries, reset, done),
		cmocka_unit_test_setup_teardown(imds_unknown_identity_is_unavailable, reset, done),
		cmocka_unit_test_setup_teardown(token_never_in_errors, reset, done),
		cmocka_unit_test_setup_teardown(absurd_expiries_are_refused, reset, done),
		cmocka_unit_test_setup_teardown(workload_identity_rereads_the_token_file, reset, done),
		cmocka_unit_test_setup_teardown(workload_identity_needs_its_settings, reset, done),
		cmocka_unit_test_setup_teardown(client_secret_and_redaction, reset, done),
		cmocka_unit_test_setup_teardown(azure_cli_token, reset, done),
		cmocka_unit_test_setup_teardown(azure_cli_failures, reset, done),
		cmocka_unit_test_setup_teardown(chain_picks_first_available, reset, done),
		cmocka_unit_test_setup_teardown(cache_refreshes_five_minutes_before_expiry, reset, done),
		cmocka_unit_test_setup_teardown(cache_keeps_old_token_when_refresh_fails, reset, done),
		cmocka_unit_test_setup_teardown(cache_honours_refresh_in_and_long_lifetimes, reset, done),
		cmocka_unit_test_setup_teardown(cache_expire_forces_a_new_token, reset, done),
		cmocka_unit_test_setup_teardown(cache_acquires_once_for_concurrent_callers, reset, done),
		cmocka_unit_test(parses_expiry_forms),
		cmocka_unit_test(scope_becomes_resource),
	};

	aj_alloc_hook_cjson();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
