#include "support.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kube/status.h"

/* Decode body with code; fail the test on OOM. */
static void decode(struct aj_kube_status *st, long code, const char *body,
		   const char *retry_after)
{
	aj_kube_status_init(st);
	assert_int_equal(aj_kube_status_decode(st, code, body,
					       body ? strlen(body) : 0,
					       retry_after), 0);
}

static void every_reason_from_its_body(void **state)
{
	/* Reason strings as metav1.StatusReason spells them. */
	static const struct {
		const char *text;
		long code;
		enum aj_kube_reason want;
	} cases[] = {
		{ "Unauthorized", 401, AJ_KUBE_UNAUTHORIZED },
		{ "Forbidden", 403, AJ_KUBE_FORBIDDEN },
		{ "NotFound", 404, AJ_KUBE_NOT_FOUND },
		{ "AlreadyExists", 409, AJ_KUBE_ALREADY_EXISTS },
		{ "Conflict", 409, AJ_KUBE_CONFLICT },
		{ "Gone", 410, AJ_KUBE_GONE },
		{ "Expired", 410, AJ_KUBE_EXPIRED },
		{ "Invalid", 422, AJ_KUBE_INVALID },
		{ "ServerTimeout", 500, AJ_KUBE_SERVER_TIMEOUT },
		{ "StorageReadError", 500, AJ_KUBE_STORE_READ_ERROR },
		{ "Timeout", 504, AJ_KUBE_TIMEOUT },
		{ "TooManyRequests", 429, AJ_KUBE_TOO_MANY_REQUESTS },
		{ "BadRequest", 400, AJ_KUBE_BAD_REQUEST },
		{ "MethodNotAllowed", 405, AJ_KUBE_METHOD_NOT_ALLOWED },
		{ "NotAcceptable", 406, AJ_KUBE_NOT_ACCEPTABLE },
		{ "RequestEntityTooLarge", 413, AJ_KUBE_REQUEST_ENTITY_TOO_LARGE },
		{ "UnsupportedMediaType", 415, AJ_KUBE_UNSUPPORTED_MEDIA_TYPE },
		{ "InternalError", 500, AJ_KUBE_INTERNAL_ERROR },
		{ "ServiceUnavailable", 503, AJ_KUBE_SERVICE_UNAVAILABLE },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aj_kube_status st;
		char body[512];

		snprintf(body, sizeof(body),
			 "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
			 "\"status\":\"Failure\",\"message\":\"m%zu\",\"reason\":\"%s\","
			 "\"code\":%ld}", i, cases[i].text, cases[i].code);
		decode(&st, cases[i].code, body, NULL);
		assert_int_equal(st.reason, cases[i].want);
		assert_int_equal(st.code, cases[i].code);
		assert_string_equal(st.reason_text, cases[i].text);
		assert_string_equal(aj_kube_reason_name(st.reason), cases[i].text);
		assert_non_null(st.message);
		assert_int_equal(st.message[0], 'm');
		aj_kube_status_release(&st);
	}
}

static void already_exists_and_conflict_differ(void **state)
{
	struct aj_kube_status a, c;

	(void)state;
	decode(&a, 409, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		  "\"status\":\"Failure\",\"message\":\"configmaps \\\"cm\\\" already exists\","
		  "\"reason\":\"AlreadyExists\",\"details\":{\"name\":\"cm\",\"kind\":\"configmaps\"},"
		  "\"code\":409}", NULL);
	decode(&c, 409, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		  "\"status\":\"Failure\",\"message\":\"Operation cannot be fulfilled on "
		  "configmaps \\\"cm\\\": the object has been modified; please apply your "
		  "changes to the latest version and try again\",\"reason\":\"Conflict\","
		  "\"details\":{\"name\":\"cm\",\"kind\":\"configmaps\"},\"code\":409}", NULL);
	assert_int_equal(a.reason, AJ_KUBE_ALREADY_EXISTS);
	assert_int_equal(c.reason, AJ_KUBE_CONFLICT);
	assert_string_equal(a.name, "cm");
	assert_string_equal(a.kind, "configmaps");
	assert_null(a.group);
	assert_string_equal(a.message, "configmaps \"cm\" already exists");
	aj_kube_status_release(&a);
	aj_kube_status_release(&c);
}

static const char invalid_body[] =
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
	"\"message\":\"ConfigMap \\\"Bad_Name\\\" is invalid: metadata.name: Invalid value: "
	"\\\"Bad_Name\\\": a lowercase RFC 1123 subdomain must consist of lower case "
	"alphanumeric characters\",\"reason\":\"Invalid\",\"details\":{\"name\":\"Bad_Name\","
	"\"kind\":\"ConfigMap\",\"causes\":[{\"reason\":\"FieldValueInvalid\",\"message\":"
	"\"Invalid value: \\\"Bad_Name\\\": a lowercase RFC 1123 subdomain\",\"field\":"
	"\"metadata.name\"},{\"reason\":\"FieldValueRequired\",\"message\":\"Required value\","
	"\"field\":\"data.x\"},{\"message\":\"no field\"}]},\"code\":422}";

static void invalid_decodes_every_cause(void **state)
{
	struct aj_kube_status st;
	struct aj_errors err = AJ_ERRORS_INIT;

	(void)state;
	decode(&st, 422, invalid_body, NULL);
	assert_int_equal(st.reason, AJ_KUBE_INVALID);
	assert_int_equal(st.nr_causes, 3);
	assert_string_equal(st.causes[0].reason, "FieldValueInvalid");
	assert_string_equal(st.causes[0].field, "metadata.name");
	assert_string_equal(st.causes[0].message,
			    "Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain");
	assert_string_equal(st.causes[1].reason, "FieldValueRequired");
	assert_string_equal(st.causes[1].field, "data.x");
	assert_null(st.causes[2].reason);
	assert_null(st.causes[2].field);
	assert_string_equal(st.causes[2].message, "no field");

	assert_int_equal(aj_kube_status_to_errors(&st, "create Bad_Name", &err), -1);
	assert_int_equal(aj_errors_count(&err), 4);
	assert_true(aj_test_errors_contain(&err, "create Bad_Name: Invalid (HTTP 422): ConfigMap"));
	assert_true(aj_test_errors_contain(&err, "metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain (FieldValueInvalid)"));
	assert_true(aj_test_errors_contain(&err, "data.x: Required value (FieldValueRequired)"));
	assert_true(aj_test_errors_contain(&err, "no field"));
	aj_errors_release(&err);
	aj_kube_status_release(&st);
}

static void too_many_requests_retry_after(void **state)
{
	static const char body[] =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
		"\"status\":\"Failure\",\"message\":\"Too many requests, please try again later.\","
		"\"reason\":\"TooManyRequests\",\"details\":{\"retryAfterSeconds\":7},\"code\":429}";
	struct aj_kube_status st;

	(void)state;
	decode(&st, 429, body, NULL);
	assert_int_equal(st.reason, AJ_KUBE_TOO_MANY_REQUESTS);
	assert_int_equal(st.retry_after, 7);
	aj_kube_status_release(&st);
	/* The header wins over the body. */
	decode(&st, 429, body, " 3\r\n");
	assert_int_equal(st.retry_after, 3);
	aj_kube_status_release(&st);
	/* A date (not delta-seconds) is ignored; the body's value stays. */
	decode(&st, 429, body, "Wed, 21 Oct 2015 07:28:00 GMT");
	assert_int_equal(st.retry_after, 7);
	aj_kube_status_release(&st);
	decode(&st, 429, "", "12");
	assert_int_equal(st.retry_after, 12);
	assert_int_equal(st.reason, AJ_KUBE_TOO_MANY_REQUESTS);
	aj_kube_status_release(&st);
}

static void non_status_bodies_map_from_code(void **state)
{
	struct aj_kube_status st;

	(void)state;
	decode(&st, 503, "<html>upstream down</html>", NULL);
	assert_int_equal(st.reason, AJ_KUBE_SERVICE_UNAVAILABLE);
	assert_null(st.message);
	assert_int_equal(st.retry_after, -1);
	aj_kube_status_release(&st);
	decode(&st, 404, "{\"kind\":\"ConfigMap\"}", NULL);
	assert_int_equal(st.reason, AJ_KUBE_NOT_FOUND);
	aj_kube_status_release(&st);
	decode(&st, 418, NULL, NULL);
	assert_int_equal(st.reason, AJ_KUBE_UNKNOWN);
	aj_kube_status_release(&st);
	decode(&st, 200, "{\"kind\":\"ConfigMap\"}", NULL);
	assert_int_equal(st.reason, AJ_KUBE_OK);
	aj_kube_status_release(&st);
	/* A reason this client does not know keeps the text, reason Unknown. */
	decode(&st, 400, "{\"kind\":\"Status\",\"reason\":\"SomethingNew\",\"code\":400}", NULL);
	assert_int_equal(st.reason, AJ_KUBE_UNKNOWN);
	assert_string_equal(st.reason_text, "SomethingNew");
	aj_kube_status_release(&st);
}

static void watch_error_event_expired(void **state)
{
	/* The object of {"type":"ERROR"} when a watch starts from an old version. */
	cJSON *obj = cJSON_Parse("{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},"
				 "\"status\":\"Failure\",\"message\":\"too old resource version: 1 (523)\","
				 "\"reason\":\"Expired\",\"code\":410}");
	struct aj_kube_status st;

	(void)state;
	aj_kube_status_init(&st);
	assert_int_equal(aj_kube_status_from_json(&st, 0, obj), 0);
	assert_int_equal(st.code, 410);
	assert_int_equal(st.reason, AJ_KUBE_EXPIRED);
	assert_true(aj_kube_status_expired(&st));
	aj_kube_status_release(&st);
	/* Gone without a body is expired too. */
	decode(&st, 410, NULL, NULL);
	assert_true(aj_kube_status_expired(&st));
	aj_kube_status_release(&st);
	decode(&st, 409, NULL, NULL);
	assert_false(aj_kube_status_expired(&st));
	aj_kube_status_release(&st);
	cJSON_Delete(obj);
}

static void transport_error_is_distinct(void **state)
{
	struct aj_kube_status st;
	struct aj_errors err = AJ_ERRORS_INIT;

	(void)state;
	aj_kube_status_init(&st);
	assert_int_equal(aj_kube_status_transport(&st, "Failed to connect to 127.0.0.1 port 1: Connection refused"), 0);
	assert_int_equal(st.reason, AJ_KUBE_TRANSPORT);
	assert_int_equal(st.code, 0);
	aj_kube_status_to_errors(&st, "get configmaps/x", &err);
	assert_true(aj_test_errors_contain(&err, "get configmaps/x: cannot reach the API server: Failed to connect"));
	aj_errors_release(&err);
	aj_kube_status_release(&st);
}

static void decode_survives_allocation_failures(void **state)
{
	long n;

	(void)state;
	aj_alloc_hook_cjson();
	for (n = 0;; n++) {
		struct aj_kube_status st;
		int ret;

		aj_kube_status_init(&st);
		aj_alloc_fail_after(n);
		ret = aj_kube_status_decode(&st, 422, invalid_body,
					    strlen(invalid_body), NULL);
		aj_alloc_fail_after(-1);
		aj_kube_status_release(&st);
		if (!ret)
			break;
		assert_int_equal(ret, -1);
	}
	assert_true(n > 5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_reason_from_its_body),
		cmocka_unit_test(already_exists_and_conflict_differ),
		cmocka_unit_test(invalid_decodes_every_cause),
		cmocka_unit_test(too_many_requests_retry_after),
		cmocka_unit_test(non_status_bodies_map_from_code),
		cmocka_unit_test(watch_error_event_expired),
		cmocka_unit_test(transport_error_is_distinct),
		cmocka_unit_test(decode_survives_allocation_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
