/*
 * The ARM client against the loopback peer: bearer auth, request ids,
 * retries and Retry-After (observed through the fake clock's sleeps), error
 * bodies, 401 replay, paging and long-running operations.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../peers/azure_test.h"
#include "azure/arm.h"
#include "azure/credential.h"
#include "core/alloc.h"
#include "core/error.h"

#define WS "/subscriptions/00000000-1111-2222-3333-444444444444/resourceGroups/test-rg" \
	"/providers/Microsoft.MachineLearningServices/workspaces/my-aml-workspace"
#define API "2024-04-01"

static struct aj_peer peer;
static struct aj_fake_clock fclock;

/* A client with the response, final response and errors its calls fill. */
struct fixture {
	struct aj_token_cache *tokens;
	struct aj_arm arm;
	struct aj_arm_response r, fin;
	struct aj_errors e;
};

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

/* A client on the fake clock starting at `start_ms` (0: now). */
static struct fixture *fixture_new(int64_t start)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct aj_identity_config ic;
	struct aj_arm_config ac;
	struct aj_credential *cred;

	assert_non_null(f);
	aj_arm_response_init(&f->r);
	aj_arm_response_init(&f->fin);
	aj_identity_config_default(&ic);
	ic.hooks = aj_fake_hooks(&fclock, start ? start : (int64_t)time(NULL) * 1000);
	ic.authority_host = peer.base;
	ic.tenant_id = "tenant-x";
	ic.client_id = "client-1";
	ic.client_secret = "secret";
	assert_int_equal(aj_credential_secret_new(&ic, &cred, &f->e), 0);
	assert_int_equal(aj_token_cache_new(cred, &ic.hooks, &f->tokens, &f->e), 0);
	aj_arm_config_default(&ac);
	ac.endpoint = peer.base;
	ac.hooks = ic.hooks;
	ac.retry.max_retries = 3;
	ac.retry.max_retry_after_ms = 30000;
	ac.http.timeout_ms = 2000;
	assert_int_equal(aj_arm_init(&f->arm, &ac, f->tokens, &f->e), 0);
	return f;
}

static int setup(void **state)
{
	if (aj_peer_control(&peer, "reset", NULL))
		return -1;
	*state = fixture_new(0);
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	aj_arm_release(&f->arm);
	aj_token_cache_free(f->tokens);
	aj_arm_response_release(&f->r);
	aj_arm_response_release(&f->fin);
	aj_errors_release(&f->e);
	free(f);
	return 0;
}

static void peer_set(const char *what, const char *json)
{
	assert_int_equal(aj_peer_control(&peer, what, json), 0);
}

/* One call into f->r, errors appended to f->e. */
static int call(struct fixture *f, const char *method, const char *path, const char *api,
		const cJSON *body)
{
	return aj_arm_request(&f->arm, method, path, api, body, &f->r, &f->e);
}

static cJSON *command_job(const char *command)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *props = cJSON_AddObjectToObject(body, "properties");

	cJSON_AddStringToObject(props, "jobType", "Command");
	cJSON_AddStringToObject(props, "displayName", "train");
	if (command)
		cJSON_AddStringToObject(props, "command", command);
	cJSON_AddStringToObject(props, "environmentId", WS "/environments/k8s-env/versions/1");
	cJSON_AddStringToObject(props, "computeId", WS "/computes/gpu-cluster");
	return body;
}

/* PUT a job running `run` at job_path. */
static void put_job(struct fixture *f, const char *job_path)
{
	cJSON *body = command_job("run");

	assert_int_equal(call(f, "PUT", job_path, API, body), 0);
	cJSON_Delete(body);
}

/* Create a job, then start an operation (method on op_path), accepted in f->r. */
static void start_operation(struct fixture *f, const char *job_path, const char *method,
			    const char *op_path)
{
	put_job(f, job_path);
	assert_int_equal(call(f, method, op_path, API, NULL), 0);
	assert_int_equal(f->r.status, 202);
}

/* Poll the operation started in f->r until it ends, into f->fin. */
static int wait_operation(struct fixture *f, int64_t timeout_ms)
{
	return aj_arm_wait(&f->arm, &f->r, timeout_ms, &f->fin, &f->e);
}

static const char *jstr(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItem(o, a);

	if (b)
		v = cJSON_GetObjectItem(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static void put_and_get_job(void **state)
{
	struct fixture *f = *state;
	cJSON *body = command_job("python train.py"), *all, *req;
	const char *id1, *id2;

	assert_int_equal(call(f, "PUT", WS "/jobs/k8s-ns1-train-1a2b", API, body), 0);
	assert_int_equal(f->r.status, 201);
	assert_string_equal(jstr(f->r.json, "name", NULL), "k8s-ns1-train-1a2b");
	assert_string_equal(jstr(f->r.json, "properties", "status"), "NotStarted");
	assert_non_null(f->r.request_id);
	/* A repeated PUT of the same name updates. */
	assert_int_equal(call(f, "PUT", WS "/jobs/k8s-ns1-train-1a2b", API, body), 0);
	assert_int_equal(f->r.status, 200);
	assert_int_equal(call(f, "GET", WS "/jobs/k8s-ns1-train-1a2b", API, NULL), 0);
	assert_string_equal(jstr(f->r.json, "properties", "status"), "Queued");

	all = aj_peer_requests(&peer);
	req = cJSON_GetArrayItem(all, 1);  /* [0] is the token request */
	assert_string_equal(jstr(req, "method", NULL), "PUT");
	assert_string_equal(jstr(req, "query", "api-version"), API);
	assert_string_equal(jstr(req, "headers", "content-type"), "application/json");
	assert_non_null(strstr(jstr(req, "headers", "authorization"), "Bearer eyJ0.entra."));
	id1 = jstr(req, "headers", "x-ms-client-request-id");
	id2 = jstr(cJSON_GetArrayItem(all, 2), "headers", "x-ms-client-request-id");
	assert_non_null(id1);
	assert_int_equal(strlen(id1), 36);
	assert_int_equal(id1[14], '4');
	assert_string_not_equal(id1, id2);
	/* One token served all three calls. */
	assert_int_equal(aj_peer_count(&peer, "oauth2"), 1);
	assert_non_null(strstr(fclock.log, "x-ms-request-id "));
	assert_null(strstr(fclock.log, "eyJ0"));
	cJSON_Delete(all);
	cJSON_Delete(body);
}

static void error_body_is_decoded(void **state)
{
	struct fixture *f = *state;
	cJSON *body = command_job(NULL);

	assert_int_equal(call(f, "PUT", WS "/jobs/bad", API, body), -1);
	assert_int_equal(f->r.status, 400);
	assert_true(aj_test_errors_contain(&f->e,
		"ARM PUT http://127.0.0.1:"));
	assert_true(aj_test_errors_contain(&f->e,
		"/workspaces/my-aml-workspace/jobs/bad: HTTP 400: UserError: One or more fields are invalid.; The field command is required."));

	/* 404: the status is kept so a caller can create what is missing. */
	assert_int_equal(call(f, "GET", WS "/jobs/absent", API, NULL), -1);
	assert_int_equal(f->r.status, 404);
	assert_true(aj_test_errors_contain(&f->e, "jobs/absent: HTTP 404: UserError: Could not find job 'absent'."));

	/* No api-version: the service's own complaint surfaces. */
	assert_int_equal(call(f, "GET", WS "/jobs/absent", NULL, NULL), -1);
	assert_true(aj_test_errors_contain(&f->e, "HTTP 400: MissingApiVersionParameter"));
	/* Only one attempt each: 400 and 404 are not transient. */
	assert_int_equal(aj_peer_count(&peer, "/jobs/"), 3);
	cJSON_Delete(body);
}

/* A 403 says who was refused and the role it needs, and holds no token. */
static void forbidden_names_identity_and_role(void **state)
{
	struct fixture *f = *state;

	peer_set("faults", "[{\"path\": \"/jobs/denied$\", \"status\": 403, \"body\": {\"error\": "
		 "{\"code\": \"AuthorizationFailed\", \"message\": \"The client does not have "
		 "authorization to perform action.\"}}}]");
	assert_int_equal(call(f, "GET", WS "/jobs/denied", API, NULL), -1);
	assert_int_equal(f->r.status, 403);
	assert_true(aj_test_errors_contain(&f->e, "/jobs/denied: HTTP 403: AuthorizationFailed: The "
		"client does not have authorization to perform action.; aj acted as an identity whose "
		"token aj cannot read, which needs a role such as \"AzureML Data Scientist\" or "
		"Contributor on the workspace " WS));
	assert_null(strstr(aj_test_errors_text(&f->e), "eyJ0"));
}

static void retry_after_seconds_is_honoured(void **state)
{
	struct fixture *f = *state;
	cJSON *all;

	peer_set("faults",
		"[{\"path\": \"/jobs\", \"status\": 429, \"headers\": {\"Retry-After\": \"7\"},"
		"  \"body\": {\"error\": {\"code\": \"TooManyRequests\", \"message\": \"slow down\"}}}]");
	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), 0);
	assert_int_equal(f->r.status, 200);
	assert_int_equal(fclock.nr_sleeps, 1);
	assert_int_equal(fclock.sleeps[0], 7000);
	/* Both attempts carry the same client request id. */
	all = aj_peer_requests(&peer);
	assert_string_equal(jstr(cJSON_GetArrayItem(all, 1), "headers", "x-ms-client-request-id"),
			    jstr(cJSON_GetArrayItem(all, 2), "headers", "x-ms-client-request-id"));
	cJSON_Delete(all);
}

static void retry_after_date_and_cap(void **state)
{
	struct fixture *f;

	/* Sun, 06 Nov 1994 08:49:37 GMT is 784111777; the clock stands 7 s before. */
	teardown(state);
	f = fixture_new(784111770000LL);
	*state = f;
	peer_set("faults",
		"[{\"path\": \"/jobs\", \"status\": 503, \"headers\": {\"Retry-After\": \"Sun, 06 Nov 1994 08:49:37 GMT\"}},"
		" {\"path\": \"/jobs\", \"status\": 429, \"headers\": {\"Retry-After\": \"3600\"}}]");
	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), 0);
	assert_int_equal(fclock.nr_sleeps, 2);
	assert_int_equal(fclock.sleeps[0], 7000);
	/* An hour is capped at the configured 30 s. */
	assert_int_equal(fclock.sleeps[1], 30000);
}

static void server_errors_retried_then_success(void **state)
{
	struct fixture *f = *state;

	peer_set("faults",
		"[{\"path\": \"/jobs\", \"drop\": true}, {\"path\": \"/jobs\", \"status\": 500},"
		" {\"path\": \"/jobs\", \"status\": 502}]");
	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), 0);
	assert_int_equal(f->r.status, 200);
	/* A dropped connection, then two 5xx; the handle is fresh, so curl
	 * itself does not reconnect silently. 0.8 s doubling at -20 % jitter. */
	assert_int_equal(fclock.nr_sleeps, 3);
	assert_int_equal(fclock.sleeps[0], 640);
	assert_int_equal(fclock.sleeps[1], 1280);
	assert_int_equal(fclock.sleeps[2], 2560);
	assert_true(aj_errors_empty(&f->e));
}

static void timeout_is_retried(void **state)
{
	struct fixture *f = *state;

	/* Longer than the 2 s per-attempt timeout. */
	peer_set("faults", "[{\"path\": \"/jobs\", \"delay\": 3, \"status\": 200}]");
	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), 0);
	assert_int_equal(f->r.status, 200);
	assert_int_equal(fclock.nr_sleeps, 1);
}

static void bounded_retries_then_failure(void **state)
{
	struct fixture *f = *state;

	peer_set("faults",
		"[{\"path\": \"/jobs\", \"status\": 503, \"times\": 20,"
		"  \"body\": {\"error\": {\"code\": \"ServiceUnavailable\", \"message\": \"The service is unavailable.\"}}}]");
	assert_int_equal(call(f, "GET", WS "/jobs/x", API, NULL), -1);
	assert_int_equal(f->r.status, 503);
	assert_int_equal(aj_peer_count(&peer, "/jobs/x"), 4);
	assert_true(aj_test_errors_contain(&f->e,
		"jobs/x: HTTP 503: ServiceUnavailable: The service is unavailable. (after 4 attempts)"));
}

static void total_time_bounds_retries(void **state)
{
	struct fixture *f = *state;

	f->arm.retry.max_total_ms = 5000;
	peer_set("faults",
		"[{\"path\": \"/jobs\", \"status\": 429, \"times\": 20, \"headers\": {\"Retry-After\": \"2\"}}]");
	assert_int_equal(call(f, "GET", WS "/jobs/x", API, NULL), -1);
	/* 2 s + 2 s fit in 5 s, a third wait would not. */
	assert_int_equal(fclock.nr_sleeps, 2);
	assert_int_equal(aj_peer_count(&peer, "/jobs/x"), 3);
	assert_true(aj_test_errors_contain(&f->e, "HTTP 429 (after 3 attempts)"));
}

static void connection_failure_reported_without_query(void **state)
{
	struct fixture *f = *state;

	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), 0);
	assert_int_equal(call(f, "GET", "http://127.0.0.1:9/subscriptions/s/jobs?sig=SECRETSIG", NULL, NULL), -1);
	assert_true(aj_test_errors_contain(&f->e, "GET http://127.0.0.1:9/subscriptions/s/jobs: "));
	assert_true(aj_test_errors_contain(&f->e, "(after 4 attempts)"));
	assert_null(strstr(aj_test_errors_text(&f->e), "SECRETSIG"));
	assert_null(strstr(fclock.log, "SECRETSIG"));
}

static void expired_token_is_replaced_once(void **state)
{
	struct fixture *f = *state;
	cJSON *all, *last;
	const char *tok;

	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), 0);
	/* The service now rejects every token it issued as expired. */
	peer_set("revoke", NULL);
	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), 0);
	assert_int_equal(aj_peer_count(&peer, "oauth2"), 2);

	/* A 401 that persists is reported with the ARM code and never the token. */
	peer_set("faults",
		"[{\"path\": \"/jobs\", \"status\": 401, \"times\": 2,"
		"  \"body\": {\"error\": {\"code\": \"InvalidAuthenticationToken\", \"message\": \"The access token is invalid.\"}}}]");
	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), -1);
	assert_int_equal(f->r.status, 401);
	assert_true(aj_test_errors_contain(&f->e, "HTTP 401: InvalidAuthenticationToken: The access token is invalid."));
	all = aj_peer_requests(&peer);
	last = cJSON_GetArrayItem(all, cJSON_GetArraySize(all) - 1);
	tok = jstr(last, "headers", "authorization") + strlen("Bearer ");
	assert_null(strstr(aj_test_errors_text(&f->e), tok));
	assert_null(strstr(fclock.log, tok));
	cJSON_Delete(all);
}

static void list_follows_next_link(void **state)
{
	struct fixture *f = *state;
	const char *next;
	char *link;

	put_job(f, WS "/jobs/a");
	put_job(f, WS "/jobs/b");
	put_job(f, WS "/jobs/c");
	assert_int_equal(call(f, "GET", WS "/jobs", API, NULL), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(f->r.json, "value")), 2);
	next = jstr(f->r.json, "nextLink", NULL);
	assert_non_null(next);
	link = strdup(next);
	assert_int_equal(call(f, "GET", link, NULL, NULL), 0);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(f->r.json, "value")), 1);
	assert_string_equal(jstr(cJSON_GetArrayItem(cJSON_GetObjectItem(f->r.json, "value"), 0), "name", NULL), "c");
	assert_null(cJSON_GetObjectItem(f->r.json, "nextLink"));
	free(link);
}

static void cancel_polls_location(void **state)
{
	struct fixture *f = *state;

	peer_set("config", "{\"lro_polls\": 2, \"lro_retry_after\": \"12\"}");
	start_operation(f, WS "/jobs/j1", "POST", WS "/jobs/j1/cancel");
	assert_non_null(f->r.location);
	assert_int_equal(f->r.retry_after_ms, 12000);
	assert_int_equal(wait_operation(f, 600000), 0);
	assert_int_equal(f->fin.status, 200);
	/* Two 202 polls, then the final one, each after Retry-After. */
	assert_int_equal(fclock.nr_sleeps, 3);
	assert_int_equal(fclock.sleeps[0], 12000);
	assert_int_equal(fclock.sleeps[2], 12000);
	assert_int_equal(call(f, "GET", WS "/jobs/j1", API, NULL), 0);
	assert_string_equal(jstr(f->r.json, "properties", "status"), "Canceled");

	/* A response that is already final needs no polling. */
	assert_int_equal(wait_operation(f, 1000), 0);
	assert_int_equal(f->fin.status, 200);
	assert_string_equal(jstr(f->fin.json, "name", NULL), "j1");
}

static void delete_polls_async_operation(void **state)
{
	struct fixture *f = *state;

	peer_set("config", "{\"lro_mode\": \"async\", \"lro_polls\": 1}");
	start_operation(f, WS "/jobs/d1", "DELETE", WS "/jobs/d1");
	assert_non_null(f->r.async_operation);
	assert_int_equal(wait_operation(f, 600000), 0);
	assert_string_equal(jstr(f->fin.json, "status", NULL), "Succeeded");
	assert_int_equal(call(f, "GET", WS "/jobs/d1", API, NULL), -1);
	assert_int_equal(f->r.status, 404);
	aj_errors_release(&f->e);

	/* A failed operation reports its error. */
	peer_set("config", "{\"lro_final\": \"Failed\"}");
	start_operation(f, WS "/jobs/d2", "DELETE", WS "/jobs/d2");
	assert_int_equal(wait_operation(f, 600000), -1);
	assert_true(aj_test_errors_contain(&f->e, "ARM operation Failed: JobDeletionFailed: The job could not be deleted."));

	/* One that never ends runs into the deadline. */
	peer_set("config", "{\"lro_final\": \"Succeeded\", \"lro_polls\": 1000}");
	start_operation(f, WS "/jobs/d3", "DELETE", WS "/jobs/d3");
	assert_int_equal(wait_operation(f, 5500), -1);
	assert_true(aj_test_errors_contain(&f->e, "did not finish within 5500 ms"));
}

/* Every allocation in a request, token acquisition included, may fail. */
static void survives_allocation_failures(void **state)
{
	struct fixture *f = *state;
	cJSON *body = command_job("run");
	int done = 0;

	for (long n = 0; !done && n < 5000; n++) {
		struct aj_arm_response r;
		struct aj_errors e = AJ_ERRORS_INIT;
		int rc;

		aj_arm_response_init(&r);
		aj_alloc_fail_after(n);
		rc = aj_arm_request(&f->arm, "PUT", WS "/jobs/oom", API, body, &r, &e);
		aj_alloc_fail_after(-1);
		if (rc == 0) {
			assert_true(r.status == 200 || r.status == 201);
			done = 1;
		} else {
			assert_false(aj_errors_empty(&e));
		}
		aj_arm_response_release(&r);
		aj_errors_release(&e);
	}
	assert_true(done);
	cJSON_Delete(body);
}

static void retry_after_parsing(void **state)
{
	(void)state;
	assert_int_equal(aj_retry_after_parse("120", 0), 120000);
	assert_int_equal(aj_retry_after_parse(" 0 ", 0), 0);
	assert_int_equal(aj_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", 784111777000LL - 1500), 1500);
	/* A date in the past means now. */
	assert_int_equal(aj_retry_after_parse("Sun, 06 Nov 1994 08:49:37 GMT", 784111800000LL), 0);
	assert_int_equal(aj_retry_after_parse("soon", 0), -1);
	assert_int_equal(aj_retry_after_parse("12abc", 0), -1);
}

static void backoff_is_capped_and_jittered(void **state)
{
	struct aj_retry_policy p;
	struct aj_fake_clock c;
	struct aj_azure_hooks h = aj_fake_hooks(&c, 0);

	(void)state;
	aj_retry_policy_default(&p);
	assert_int_equal(aj_retry_backoff_ms(&p, 0, &h), 640);
	assert_int_equal(aj_retry_backoff_ms(&p, 3, &h), 5120);
	/* 0.8 s * 2^10 passes the 60 s cap. */
	assert_int_equal(aj_retry_backoff_ms(&p, 10, &h), 48000);
	for (int i = 0; i < 50; i++) {
		int64_t d = aj_retry_backoff_ms(&p, 2, NULL);

		assert_true(d >= 2560 && d <= 3840);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(put_and_get_job, setup, teardown),
		cmocka_unit_test_setup_teardown(error_body_is_decoded, setup, teardown),
		cmocka_unit_test_setup_teardown(forbidden_names_identity_and_role, setup, teardown),
		cmocka_unit_test_setup_teardown(retry_after_seconds_is_honoured, setup, teardown),
		cmocka_unit_test_setup_teardown(retry_after_date_and_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(server_errors_retried_then_success, setup, teardown),
		cmocka_unit_test_setup_teardown(timeout_is_retried, setup, teardown),
		cmocka_unit_test_setup_teardown(bounded_retries_then_failure, setup, teardown),
		cmocka_unit_test_setup_teardown(total_time_bounds_retries, setup, teardown),
		cmocka_unit_test_setup_teardown(connection_failure_reported_without_query, setup, teardown),
		cmocka_unit_test_setup_teardown(expired_token_is_replaced_once, setup, teardown),
		cmocka_unit_test_setup_teardown(list_follows_next_link, setup, teardown),
		cmocka_unit_test_setup_teardown(cancel_polls_location, setup, teardown),
		cmocka_unit_test_setup_teardown(delete_polls_async_operation, setup, teardown),
		cmocka_unit_test_setup_teardown(survives_allocation_failures, setup, teardown),
		cmocka_unit_test(retry_after_parsing),
		cmocka_unit_test(backoff_is_capped_and_jittered),
	};

	aj_alloc_hook_cjson();
	curl_global_init(CURL_GLOBAL_DEFAULT);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
