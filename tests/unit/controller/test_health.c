#include "support.h"

#include <stdio.h>
#include <string.h>

#include <curl/curl.h>

#include "core/buf.h"
#include "core/error.h"
#include "health.h"

static int is_ready;

static int ready(void *ctx, struct aj_buf *why)
{
	(void)ctx;
	if (!is_ready)
		aj_buf_addstr(why, "CRD ajjobs.aj.dev is not installed");
	return is_ready;
}

static int metrics(void *ctx, struct aj_buf *out)
{
	int i;

	(void)ctx;
	/* Larger than one write chunk, to exercise the writeable loop. */
	for (i = 0; i < 5000; i++)
		aj_buf_addf(out, "m_%d 1\n", i);
	return out->failed ? -1 : 0;
}

static size_t collect(char *p, size_t size, size_t n, void *userdata)
{
	aj_buf_add(userdata, p, size * n);
	return size * n;
}

static long get(int port, const char *path, struct aj_buf *body)
{
	char url[128];
	long code = 0;
	CURL *c = curl_easy_init();

	assert_non_null(c);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, body);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 10L);
	assert_int_equal(curl_easy_perform(c), CURLE_OK);
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_cleanup(c);
	return code;
}

static void endpoints_answer_liveness_readiness_and_metrics(void **state)
{
	struct aj_health_server s;
	struct aj_health_ops ops = { ready, metrics, NULL };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);

	(void)state;
	assert_int_equal(aj_health_start(&s, "127.0.0.1", 0, &ops, &err), 0);
	assert_true(s.port > 0);

	assert_int_equal(get(s.port, "/healthz", &b), 200);
	assert_string_equal(aj_buf_cstr(&b), "ok\n");

	aj_buf_reset(&b);
	is_ready = 0;
	assert_int_equal(get(s.port, "/readyz", &b), 503);
	assert_string_equal(aj_buf_cstr(&b), "not ready: CRD ajjobs.aj.dev is not installed\n");
	aj_buf_reset(&b);
	is_ready = 1;
	assert_int_equal(get(s.port, "/readyz", &b), 200);

	aj_buf_reset(&b);
	assert_int_equal(get(s.port, "/metrics", &b), 200);
	assert_non_null(strstr(aj_buf_cstr(&b), "m_0 1\nm_1 1\n"));
	assert_non_null(strstr(aj_buf_cstr(&b), "\nm_4999 1\n"));

	aj_buf_reset(&b);
	assert_int_equal(get(s.port, "/secret", &b), 404);

	aj_health_stop(&s);
	aj_buf_release(&b);
	aj_errors_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(endpoints_answer_liveness_readiness_and_metrics),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
