/*
 * SAS signing against vectors computed outside this code: each expected
 * signature was produced with Python's hmac/hashlib over the field list the
 * storage documentation gives for signed version 2024-11-04 (24 lines for a
 * user delegation SAS, 16 for a service SAS).
 */
#include "support.h"

#include <string.h>

#include "azure/http.h"
#include "azure/sas.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

static struct aj_sas_key vector_key(void)
{
	struct aj_sas_key k = {
		.signed_oid = (char *)"11111111-1111-1111-1111-111111111111",
		.signed_tid = (char *)"22222222-2222-2222-2222-222222222222",
		.signed_start = (char *)"2026-01-01T00:00:00Z",
		.signed_expiry = (char *)"2026-01-08T00:00:00Z",
		.signed_service = (char *)"b",
		.signed_version = (char *)"2024-11-04",
		/* bytes 0..31 */
		.value = (char *)"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
	};
	return k;
}

static void user_delegation_blob_vector(void **state)
{
	struct aj_sas_key k = vector_key();
	struct aj_sas_params p = {
		.account = "devstoreaccount1", .container = "code",
		.blob = "jobs/abc/code.tar.gz", .permissions = "rcw",
		.expiry = "2026-01-02T00:00:00Z",
	};
	struct aj_buf q = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors e = AJ_ERRORS_INIT;

	(void)state;
	assert_int_equal(aj_sas_user_delegation(&p, &k, &q, &e), 0);
	assert_string_equal(aj_buf_cstr(&q),
		"sv=2024-11-04&sr=b&sp=rcw&se=2026-01-02T00%3A00%3A00Z&spr=https"
		"&skoid=11111111-1111-1111-1111-111111111111"
		"&sktid=22222222-2222-2222-2222-222222222222"
		"&skt=2026-01-01T00%3A00%3A00Z&ske=2026-01-08T00%3A00%3A00Z"
		"&sks=b&skv=2024-11-04"
		"&sig=Z4%2FhXwXg5s1Zq5dfcTx%2BxI1IY4jnFL0TrFzt5Cl15qI%3D");
	aj_buf_release(&q);
	aj_errors_release(&e);
}

static void user_delegation_string_has_24_lines(void **state)
{
	struct aj_sas_key k = vector_key();
	struct aj_sas_params p = {
		.account = "devstoreaccount1", .container = "code",
		.blob = "jobs\\abc/code.tar.gz", .permissions = "wcr",
		.expiry = "2026-01-02T00:00:00Z",
	};
	struct aj_buf s = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors e = AJ_ERRORS_INIT;

	(void)state;
	assert_int_equal(aj_sas_user_delegation_string(&p, &k, &s, &e), 0);
	/* Permissions reordered, '\' in the name signed as '/'. */
	assert_string_equal(aj_buf_cstr(&s),
		"rcw\n\n2026-01-02T00:00:00Z\n/blob/devstoreaccount1/code/jobs/abc/code.tar.gz\n"
		"11111111-1111-1111-1111-111111111111\n22222222-2222-2222-2222-222222222222\n"
		"2026-01-01T00:00:00Z\n2026-01-08T00:00:00Z\nb\n2024-11-04\n\n\n\n\nhttps\n"
		"2024-11-04\nb\n\n\n\n\n\n\n");
	aj_buf_release(&s);
	aj_errors_release(&e);
}

static void user_delegation_container_vector(void **state)
{
	struct aj_sas_key k = {
		.signed_oid = (char *)"aaaaaaaa-0000-4000-8000-000000000001",
		.signed_tid = (char *)"bbbbbbbb-0000-4000-8000-000000000002",
		.signed_start = (char *)"2026-03-01T00:00:00Z",
		.signed_expiry = (char *)"2026-03-02T00:00:00Z",
		.signed_service = (char *)"b",
		.signed_version = (char *)"2024-11-04",
		/* SHA-256("aj-test-key") */
		.value = (char *)"Jhe+5iQZXLBIy/VDfXw9bNsEndmf9RjWj+d8M7ZE4kU=",
	};
	struct aj_sas_params p = {
		.account = "acct1", .container = "models", .permissions = "wlr",
		.start = "2026-03-01T08:00:00Z", .expiry = "2026-03-01T09:30:00Z",
		.ip = "10.0.0.1-10.0.0.9", .protocol = "https,http",
	};
	struct aj_buf q = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors e = AJ_ERRORS_INIT;

	(void)state;
	assert_int_equal(aj_sas_user_delegation(&p, &k, &q, &e), 0);
	assert_non_null(strstr(aj_buf_cstr(&q), "&sr=c&sp=rwl&"));
	assert_non_null(strstr(aj_buf_cstr(&q), "&sip=10.0.0.1-10.0.0.9&spr=https%2Chttp&"));
	assert_non_null(strstr(aj_buf_cstr(&q),
			       "&sig=%2FfpAeUjlsKZ7oyE1KOXchh708P%2B2Y62yt%2FK9Bc3Z9eg%3D"));
	aj_buf_release(&q);
	aj_errors_release(&e);
}

static void service_sas_vector(void **state)
{
	struct aj_sas_params p = {
		.account = "devstoreaccount1", .container = "code",
		.blob = "dir/a b.txt", .permissions = "wr",
		.expiry = "2026-05-01T00:00:00Z",
	};
	struct aj_buf q = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors e = AJ_ERRORS_INIT;

	(void)state;
	assert_int_equal(aj_sas_service(&p,
		"Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==",
		&q, &e), 0);
	assert_string_equal(aj_buf_cstr(&q),
		"sv=2024-11-04&sr=b&sp=rw&se=2026-05-01T00%3A00%3A00Z&spr=https"
		"&sig=PuujFCelEts0hmSwqX3ze35Rg0O0dFHPcKo5E0wMDcw%3D");
	aj_buf_release(&q);
	aj_errors_release(&e);
}

static void rejects_bad_permissions_and_keys(void **state)
{
	struct aj_sas_key k = vector_key();
	struct aj_sas_params p = {
		.account = "a", .container = "c", .blob = "b",
		.permissions = "rq", .expiry = "2026-01-02T00:00:00Z",
	};
	struct aj_buf q = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors e = AJ_ERRORS_INIT;

	(void)state;
	assert_int_equal(aj_sas_user_delegation(&p, &k, &q, &e), -1);
	assert_true(aj_test_errors_contain(&e, "permission 'q' is not valid for a blob"));
	/* 'f' (filter) exists for containers only. */
	p.permissions = "rf";
	assert_int_equal(aj_sas_user_delegation(&p, &k, &q, &e), -1);
	assert_true(aj_test_errors_contain(&e, "permission 'f' is not valid for a blob"));
	p.permissions = "r";
	p.expiry = NULL;
	assert_int_equal(aj_sas_user_delegation(&p, &k, &q, &e), -1);
	assert_true(aj_test_errors_contain(&e, "SAS: an expiry time is required"));
	p.expiry = "2026-01-02T00:00:00Z";
	k.value = (char *)"not base64!";
	assert_int_equal(aj_sas_user_delegation(&p, &k, &q, &e), -1);
	assert_true(aj_test_errors_contain(&e, "user delegation key is not valid base64"));
	assert_null(strstr(aj_test_errors_text(&e), "not base64!"));
	assert_int_equal(aj_sas_service(&p, "QUJD=", &q, &e), -1);
	assert_true(aj_test_errors_contain(&e, "account key is not valid base64"));
	assert_int_equal(q.len, 0);
	aj_buf_release(&q);
	aj_errors_release(&e);
}

static void urlencode_keeps_only_unreserved(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	(void)state;
	assert_int_equal(aj_http_urlencode(&b, "a+b/c=d e~_.-"), 0);
	assert_string_equal(aj_buf_cstr(&b), "a%2Bb%2Fc%3Dd%20e~_.-");
	aj_buf_release(&b);
}

static void survives_allocation_failures(void **state)
{
	struct aj_sas_key k = vector_key();
	struct aj_sas_params p = {
		.account = "devstoreaccount1", .container = "code",
		.blob = "jobs/abc/code.tar.gz", .permissions = "rcw",
		.expiry = "2026-01-02T00:00:00Z",
	};
	int done = 0;

	(void)state;
	for (long n = 0; !done && n < 1000; n++) {
		struct aj_buf q = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct aj_errors e = AJ_ERRORS_INIT;
		int rc;

		aj_alloc_fail_after(n);
		rc = aj_sas_user_delegation(&p, &k, &q, &e);
		aj_alloc_fail_after(-1);
		if (rc == 0) {
			assert_non_null(strstr(aj_buf_cstr(&q), "&sig=Z4%2FhXwXg5s1Zq5dfcTx%2BxI1IY4jnFL0TrFzt5Cl15qI%3D"));
			done = 1;
		} else {
			assert_true(aj_test_errors_contain(&e, "out of memory"));
		}
		aj_buf_release(&q);
		aj_errors_release(&e);
	}
	assert_true(done);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(user_delegation_blob_vector),
		cmocka_unit_test(user_delegation_string_has_24_lines),
		cmocka_unit_test(user_delegation_container_vector),
		cmocka_unit_test(service_sas_vector),
		cmocka_unit_test(rejects_bad_permissions_and_keys),
		cmocka_unit_test(urlencode_keeps_only_unreserved),
		cmocka_unit_test(survives_allocation_failures),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
