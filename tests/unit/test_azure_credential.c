/*
 * Identity providers and the token cache against the loopback peer
 * (tests/peers/azure_peer.py) and a stand-in Azure CLI (tests/peers/fake-az).
 */
#include "support.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../peers/azure_test.h"
#include "azure/credential.h"
#include "core/alloc.h"
#include "core/error.h"

#define ARM_SCOPE "https://management.azure.com/.default"

static struct aj_peer peer;
static struct aj_fake_clock fclock;

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

static int reset(void **state)
{
	(void)state;
	unsetenv("AJ_FAKE_AZ_MODE");
	unsetenv("AJ_FAKE_AZ_EXPIRES_ON");
	unsetenv("AJ_FAKE_AZ_ARGS");
	return aj_peer_control(&peer, "reset", NULL);
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

static void imds_token_and_request_shape(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;
	cJSON *r;

	(void)state;
	peer_config(&c);
	c.mi_client_id = "11111111-aaaa-4bbb-8ccc-222222222222";
	assert_int_equal(aj_peer_control(&peer, "config", "{\"imds_expires_on\": 2000000000}"), 0);
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_non_null(strstr(t.value, "eyJ0.imds."));
	assert_int_equal(t.expires_on, 2000000000);

	r = recorded(-1);
	assert_string_equal(field(r, "headers", "metadata"), "true");
	assert_string_equal(field(r, "query", "api-version"), "2018-02-01");
	assert_string_equal(field(r, "query", "resource"), "https://management.azure.com/");
	assert_string_equal(field(r, "query", "client_id"), "11111111-aaaa-4bbb-8ccc-222222222222");
	cJSON_Delete(r);
	aj_token_release(&t);
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void imds_selects_by_object_or_resource_id(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;
	cJSON *r;

	(void)state;
	peer_config(&c);
	c.mi_resource_id = "/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/userAssignedIdentities/u";
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	r = recorded(-1);
	assert_string_equal(field(r, "query", "msi_res_id"), c.mi_resource_id);
	assert_null(field(r, "query", "client_id"));
	cJSON_Delete(r);
	aj_token_release(&t);
	aj_credential_free(cred);

	c.mi_resource_id = NULL;
	c.mi_object_id = "33333333-aaaa-4bbb-8ccc-444444444444";
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	r = recorded(-1);
	assert_string_equal(field(r, "query", "object_id"), c.mi_object_id);
	cJSON_Delete(r);
	aj_token_release(&t);
	aj_credential_free(cred);

	c.mi_client_id = "x";
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), -1);
	assert_null(cred);
	assert_true(aj_test_errors_contain(&e, "managed-identity: choose one of client id, object id and resource id"));
	aj_errors_release(&e);
}

static void imds_retries_transient_statuses(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;

	(void)state;
	peer_config(&c);
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"oauth2/token\", \"status\": 410},"
		" {\"path\": \"oauth2/token\", \"status\": 500},"
		" {\"path\": \"oauth2/token\", \"status\": 404},"
		" {\"path\": \"oauth2/token\", \"status\": 429, \"headers\": {\"Retry-After\": \"3\"}}]"), 0);
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_non_null(t.value);
	/* Exponential from 1 s at the lowest jitter (-20 %), then Retry-After. */
	assert_int_equal(fclock.nr_sleeps, 4);
	assert_int_equal(fclock.sleeps[0], 800);
	assert_int_equal(fclock.sleeps[1], 1600);
	assert_int_equal(fclock.sleeps[2], 3200);
	assert_int_equal(fclock.sleeps[3], 3000);
	assert_int_equal(aj_peer_count(&peer, "oauth2/token"), 5);
	aj_token_release(&t);
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void imds_gives_up_after_bounded_retries(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;

	(void)state;
	peer_config(&c);
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"oauth2/token\", \"status\": 503, \"times\": 50,"
		"  \"body\": {\"error\": \"temporarily_unavailable\", \"error_description\": \"IMDS is busy\"}}]"), 0);
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_null(t.value);
	/* 1 + 5 retries. */
	assert_int_equal(aj_peer_count(&peer, "oauth2/token"), 6);
	assert_true(aj_test_errors_contain(&e,
		"managed-identity: HTTP 503: temporarily_unavailable: IMDS is busy (after 6 attempts)"));
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void imds_unknown_identity_is_unavailable(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;

	(void)state;
	peer_config(&c);
	c.mi_client_id = "not-assigned";
	assert_int_equal(aj_peer_control(&peer, "config", "{\"imds_client_ids\": [\"other\"]}"), 0);
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), AJ_CREDENTIAL_UNAVAILABLE);
	assert_true(aj_test_errors_contain(&e, "managed-identity: HTTP 400: invalid_request: Identity not found"));
	/* 400 is not retried. */
	assert_int_equal(aj_peer_count(&peer, "oauth2/token"), 1);
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void token_never_in_errors(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;

	(void)state;
	peer_config(&c);
	/* A 200 carrying a token but no expiry must fail without quoting it. */
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"oauth2/token\", \"status\": 200,"
		"  \"body\": {\"access_token\": \"eyJ0.leaked-secret-value\", \"token_type\": \"Bearer\"}},"
		" {\"path\": \"oauth2/token\", \"status\": 200, \"body\": \"eyJ0.leaked-secret-value\"}]"), 0);
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "managed-identity: token response has no usable expiry"));
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "managed-identity: token response is not valid JSON"));
	assert_null(strstr(aj_test_errors_text(&e), "leaked-secret"));
	assert_null(strstr(fclock.log, "leaked-secret"));
	aj_credential_free(cred);
	aj_errors_release(&e);
}

/* Expiries past year 9999 or negative are refused, not converted (found by fuzz_azure) */
static void absurd_expiries_are_refused(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;

	(void)state;
	peer_config(&c);
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"oauth2/token\", \"status\": 200,"
		"  \"body\": {\"access_token\": \"eyJ0.a\", \"expires_on\": 1e77}},"
		" {\"path\": \"oauth2/token\", \"status\": 200,"
		"  \"body\": {\"access_token\": \"eyJ0.b\", \"expires_in\": -5e30}},"
		" {\"path\": \"oauth2/token\", \"status\": 200,"
		"  \"body\": {\"access_token\": \"eyJ0.c\", \"expires_on\": 253402300799}}]"), 0);
	assert_int_equal(aj_credential_imds_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "managed-identity: token response has no usable expiry"));
	aj_errors_release(&e);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "managed-identity: token response has no usable expiry"));
	/* the last second of year 9999 is still a time */
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_true(t.expires_on == 253402300799LL);
	aj_token_release(&t);
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void workload_identity_rereads_the_token_file(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;
	char path[128];
	cJSON *r;

	(void)state;
	snprintf(path, sizeof(path), "%s/azure-identity-token", peer.dir);
	write_file(path, "assertion-one\n");
	peer_config(&c);
	c.federated_token_file = path;
	assert_int_equal(aj_peer_control(&peer, "config", "{\"client_assertion\": \"assertion-one\"}"), 0);
	assert_int_equal(aj_credential_workload_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_non_null(strstr(t.value, "eyJ0.entra."));
	/* expires_in arrives as a number, relative to the (fake) clock. */
	assert_int_equal(t.expires_on, fclock.now_ms / 1000 + 3599);
	aj_token_release(&t);

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
	assert_int_equal(aj_peer_control(&peer, "config", "{\"client_assertion\": \"assertion-two\"}"), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	aj_token_release(&t);

	/* A stale assertion is refused; the error names the code, not the secret. */
	write_file(path, "assertion-stale");
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "workload-identity: HTTP 401: invalid_client: AADSTS700024"));
	assert_null(strstr(aj_test_errors_text(&e), "assertion-stale"));

	unlink(path);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "workload-identity: cannot read the federated token file"));
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void workload_identity_needs_its_settings(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;

	(void)state;
	peer_config(&c);
	c.tenant_id = NULL;
	assert_int_equal(aj_credential_workload_new(&c, &cred, &e), -1);
	assert_true(aj_test_errors_contain(&e, "workload-identity: AZURE_TENANT_ID is not set"));
	assert_true(aj_test_errors_contain(&e, "workload-identity: AZURE_FEDERATED_TOKEN_FILE is not set"));
	assert_int_equal(aj_credential_secret_new(&c, &cred, &e), -1);
	assert_true(aj_test_errors_contain(&e, "client-secret: AZURE_CLIENT_SECRET is not set"));
	aj_errors_release(&e);
}

static void client_secret_and_redaction(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;

	(void)state;
	peer_config(&c);
	c.client_secret = "wrong-s3cret-value";
	assert_int_equal(aj_peer_control(&peer, "config", "{\"client_secret\": \"right-s3cret\"}"), 0);
	assert_int_equal(aj_credential_secret_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e,
		"client-secret: HTTP 401: invalid_client: AADSTS7000215: Invalid client secret provided."));
	assert_null(strstr(aj_test_errors_text(&e), "s3cret"));
	aj_credential_free(cred);

	c.client_secret = "right-s3cret";
	assert_int_equal(aj_credential_secret_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_non_null(strstr(t.value, "eyJ0.entra."));
	aj_token_release(&t);

	/* A scope without /.default is refused by the service; its message surfaces. */
	assert_int_equal(aj_credential_get_token(cred, "https://management.azure.com/", &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "client-secret: HTTP 400: invalid_scope: AADSTS70011"));
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void azure_cli_token(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;
	char args[128], text[512] = "";
	FILE *f;

	(void)state;
	snprintf(args, sizeof(args), "%s/az-args.json", peer.dir);
	setenv("AJ_FAKE_AZ_ARGS", args, 1);
	setenv("AJ_FAKE_AZ_EXPIRES_ON", "1900000000", 1);
	peer_config(&c);
	assert_int_equal(aj_credential_cli_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_string_equal(t.value, "eyJ0.cli.secret-token-value");
	assert_int_equal(t.expires_on, 1900000000);
	aj_token_release(&t);
	f = fopen(args, "r");
	assert_non_null(f);
	assert_non_null(fgets(text, sizeof(text), f));
	fclose(f);
	/* One argument per element: the resource is never split or quoted. */
	assert_string_equal(text,
		"[\"account\", \"get-access-token\", \"--resource\", \"https://management.azure.com/\", \"-o\", \"json\"]");

	/* Older CLIs print only expiresOn, in local time. */
	setenv("AJ_FAKE_AZ_MODE", "legacy", 1);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_int_equal(t.expires_on, 1900000000);
	aj_token_release(&t);
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void azure_cli_failures(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;

	(void)state;
	peer_config(&c);
	assert_int_equal(aj_credential_cli_new(&c, &cred, &e), 0);
	setenv("AJ_FAKE_AZ_MODE", "login", 1);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), AJ_CREDENTIAL_UNAVAILABLE);
	assert_true(aj_test_errors_contain(&e, "azure-cli: az account get-access-token exited with status 1: ERROR: Please run 'az login'"));
	setenv("AJ_FAKE_AZ_MODE", "fail", 1);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "exited with status 2: ERROR: AADSTS70043"));
	assert_null(strstr(aj_test_errors_text(&e), "more detail"));
	aj_credential_free(cred);

	setenv("AJ_FAKE_AZ_MODE", "hang", 1);
	c.cli_timeout_ms = 1500;
	assert_int_equal(aj_credential_cli_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), -1);
	assert_true(aj_test_errors_contain(&e, "azure-cli: az account get-access-token did not finish within 1500 ms"));
	aj_credential_free(cred);

	c.az_path = "/nonexistent/az";
	assert_int_equal(aj_credential_cli_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), AJ_CREDENTIAL_UNAVAILABLE);
	assert_true(aj_test_errors_contain(&e, "azure-cli: cannot run /nonexistent/az"));
	aj_credential_free(cred);
	aj_errors_release(&e);
}

static void chain_picks_first_available(void **state)
{
	struct aj_identity_config c;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_token t;
	char path[128];

	(void)state;
	/* Nothing but the CLI: IMDS points at a closed port and is skipped. */
	peer_config(&c);
	c.imds_endpoint = "http://127.0.0.1:9";
	assert_int_equal(aj_credential_chain_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_string_equal(t.value, "eyJ0.cli.secret-token-value");
	assert_int_equal(fclock.nr_sleeps, 0);
	aj_token_release(&t);
	aj_credential_free(cred);

	/* IMDS answers: it comes before the CLI. */
	peer_config(&c);
	assert_int_equal(aj_credential_chain_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_non_null(strstr(t.value, "eyJ0.imds."));
	aj_token_release(&t);
	aj_credential_free(cred);

	/* Workload identity settings present: used first. */
	snprintf(path, sizeof(path), "%s/wi-token", peer.dir);
	write_file(path, "assertion");
	peer_config(&c);
	c.federated_token_file = path;
	assert_int_equal(aj_credential_chain_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), 0);
	assert_non_null(strstr(t.value, "eyJ0.entra."));
	aj_token_release(&t);
	aj_credential_free(cred);
	unlink(path);

	/* Nothing at all. */
	peer_config(&c);
	c.imds_endpoint = "http://127.0.0.1:9";
	c.az_path = "/nonexistent/az";
	assert_int_equal(aj_credential_chain_new(&c, &cred, &e), 0);
	assert_int_equal(aj_credential_get_token(cred, ARM_SCOPE, &t, &e), AJ_CREDENTIAL_UNAVAILABLE);
	assert_true(aj_test_errors_contain(&e, "no Azure credential is available; tried:"));
	assert_true(aj_test_errors_contain(&e, "managed-identity: no identity endpoint at http://127.0.0.1:9"));
	assert_true(aj_test_errors_contain(&e, "azure-cli: cannot run /nonexistent/az"));
	aj_credential_free(cred);
	aj_errors_release(&e);
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

static char *cached(struct aj_token_cache *cache, struct aj_token *t)
{
	struct aj_errors e = AJ_ERRORS_INIT;

	assert_int_equal(aj_token_cache_get(cache, ARM_SCOPE, t, &e), 0);
	aj_errors_release(&e);
	return t->value;
}

static void cache_refreshes_five_minutes_before_expiry(void **state)
{
	struct aj_token_cache *cache;
	struct aj_token t1, t2;
	int64_t t0;

	(void)state;
	assert_int_equal(aj_peer_control(&peer, "config", "{\"token_lifetime\": 3600}"), 0);
	cache = secret_cache();
	t0 = fclock.now_ms;
	cached(cache, &t1);
	assert_int_equal(t1.expires_on, t0 / 1000 + 3600);

	/* 301 s before expiry: still served from the cache. */
	fclock.now_ms = t0 + (3600 - 301) * 1000;
	cached(cache, &t2);
	assert_string_equal(t1.value, t2.value);
	aj_token_release(&t2);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 1);

	/* 300 s before: refreshed. */
	fclock.now_ms = t0 + (3600 - 300) * 1000;
	cached(cache, &t2);
	assert_string_not_equal(t1.value, t2.value);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 2);

	/* Scopes are cached separately. */
	{
		struct aj_token t3;
		struct aj_errors e = AJ_ERRORS_INIT;

		assert_int_equal(aj_token_cache_get(cache, "https://storage.azure.com/.default", &t3, &e), 0);
		assert_string_not_equal(t3.value, t2.value);
		assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 3);
		aj_token_release(&t3);
		aj_errors_release(&e);
	}
	aj_token_release(&t1);
	aj_token_release(&t2);
	assert_null(strstr(fclock.log, "eyJ0"));
	aj_token_cache_free(cache);
}

static void cache_keeps_old_token_when_refresh_fails(void **state)
{
	struct aj_token_cache *cache;
	struct aj_token t1, t2;
	struct aj_errors e = AJ_ERRORS_INIT;
	int64_t t0;
	int before;

	(void)state;
	assert_int_equal(aj_peer_control(&peer, "config", "{\"token_lifetime\": 3600}"), 0);
	cache = secret_cache();
	t0 = fclock.now_ms;
	cached(cache, &t1);
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"oauth2/v2.0/token\", \"status\": 400, \"times\": 100,"
		"  \"body\": {\"error\": \"invalid_request\", \"error_description\": \"AADSTS90002: Tenant not found.\"}}]"), 0);

	fclock.now_ms = t0 + 3400 * 1000;
	cached(cache, &t2);
	assert_string_equal(t1.value, t2.value);
	aj_token_release(&t2);
	before = aj_peer_count(&peer, "oauth2/v2.0/token");
	assert_int_equal(before, 2);
	assert_non_null(strstr(fclock.log, "keeping the current token"));

	/* Within 30 s of the failed attempt: no new request. */
	fclock.now_ms += 29 * 1000;
	cached(cache, &t2);
	aj_token_release(&t2);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), before);
	/* After 30 s: tried again, still failing, still the old token. */
	fclock.now_ms += 1000;
	cached(cache, &t2);
	assert_string_equal(t1.value, t2.value);
	aj_token_release(&t2);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), before + 1);

	/* Expired: the failure reaches the caller. */
	fclock.now_ms = t0 + 3600 * 1000;
	assert_int_equal(aj_token_cache_get(cache, ARM_SCOPE, &t2, &e), -1);
	assert_null(t2.value);
	assert_true(aj_test_errors_contain(&e, "client-secret: HTTP 400: invalid_request: AADSTS90002: Tenant not found."));
	assert_null(strstr(aj_test_errors_text(&e), t1.value));
	aj_token_release(&t1);
	aj_errors_release(&e);
	aj_token_cache_free(cache);
}

static void cache_honours_refresh_in_and_long_lifetimes(void **state)
{
	struct aj_token_cache *cache;
	struct aj_token t1, t2;
	int64_t t0;

	(void)state;
	assert_int_equal(aj_peer_control(&peer, "config", "{\"token_lifetime\": 3600, \"refresh_in\": 600}"), 0);
	cache = secret_cache();
	t0 = fclock.now_ms;
	cached(cache, &t1);
	fclock.now_ms = t0 + 599 * 1000;
	cached(cache, &t2);
	assert_string_equal(t1.value, t2.value);
	aj_token_release(&t2);
	fclock.now_ms = t0 + 600 * 1000;
	cached(cache, &t2);
	assert_string_not_equal(t1.value, t2.value);
	aj_token_release(&t1);
	aj_token_release(&t2);
	aj_token_cache_free(cache);

	/* A day-long token without refresh_in: refreshed at half its life. */
	assert_int_equal(aj_peer_control(&peer, "config", "{\"token_lifetime\": 86400, \"refresh_in\": null}"), 0);
	cache = secret_cache();
	t0 = fclock.now_ms;
	cached(cache, &t1);
	fclock.now_ms = t0 + 43199 * 1000;
	cached(cache, &t2);
	assert_string_equal(t1.value, t2.value);
	aj_token_release(&t2);
	fclock.now_ms = t0 + 43200 * 1000;
	cached(cache, &t2);
	assert_string_not_equal(t1.value, t2.value);
	aj_token_release(&t1);
	aj_token_release(&t2);
	aj_token_cache_free(cache);
}

static void cache_expire_forces_a_new_token(void **state)
{
	struct aj_token_cache *cache;
	struct aj_token t1, t2;

	(void)state;
	cache = secret_cache();
	cached(cache, &t1);
	aj_token_cache_expire(cache, ARM_SCOPE);
	cached(cache, &t2);
	assert_string_not_equal(t1.value, t2.value);
	assert_int_equal(aj_peer_count(&peer, "oauth2/v2.0/token"), 2);
	aj_token_release(&t1);
	aj_token_release(&t2);
	aj_token_cache_free(cache);
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
		cmocka_unit_test_setup(imds_token_and_request_shape, reset),
		cmocka_unit_test_setup(imds_selects_by_object_or_resource_id, reset),
		cmocka_unit_test_setup(imds_retries_transient_statuses, reset),
		cmocka_unit_test_setup(imds_gives_up_after_bounded_retries, reset),
		cmocka_unit_test_setup(imds_unknown_identity_is_unavailable, reset),
		cmocka_unit_test_setup(token_never_in_errors, reset),
		cmocka_unit_test_setup(absurd_expiries_are_refused, reset),
		cmocka_unit_test_setup(workload_identity_rereads_the_token_file, reset),
		cmocka_unit_test_setup(workload_identity_needs_its_settings, reset),
		cmocka_unit_test_setup(client_secret_and_redaction, reset),
		cmocka_unit_test_setup(azure_cli_token, reset),
		cmocka_unit_test_setup(azure_cli_failures, reset),
		cmocka_unit_test_setup(chain_picks_first_available, reset),
		cmocka_unit_test_setup(cache_refreshes_five_minutes_before_expiry, reset),
		cmocka_unit_test_setup(cache_keeps_old_token_when_refresh_fails, reset),
		cmocka_unit_test_setup(cache_honours_refresh_in_and_long_lifetimes, reset),
		cmocka_unit_test_setup(cache_expire_forces_a_new_token, reset),
		cmocka_unit_test_setup(cache_acquires_once_for_concurrent_callers, reset),
		cmocka_unit_test(parses_expiry_forms),
		cmocka_unit_test(scope_becomes_resource),
	};

	aj_alloc_hook_cjson();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
