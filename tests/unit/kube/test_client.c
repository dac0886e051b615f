#include "support.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "kube/client.h"

static const struct aj_kube_resource ajjobs = { "aj.example.com", "v1alpha1", "ajjobs", 1 };

static void check_path(const struct aj_kube_ref *ref, const char *want)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	assert_int_equal(aj_kube_path(&b, ref), 0);
	assert_string_equal(aj_buf_cstr(&b), want);
	aj_buf_release(&b);
}

static void paths_core_group_scope(void **state)
{
	struct aj_kube_ref r = { &aj_kube_configmaps, "team-a", "settings", NULL };

	(void)state;
	check_path(&r, "/api/v1/namespaces/team-a/configmaps/settings");
	r.name = NULL;
	check_path(&r, "/api/v1/namespaces/team-a/configmaps");
	/* All namespaces. */
	r.ns = NULL;
	check_path(&r, "/api/v1/configmaps");
	/* Cluster-scoped: a namespace given by mistake is not used. */
	r.res = &aj_kube_namespaces;
	r.ns = "ignored";
	r.name = "team-a";
	check_path(&r, "/api/v1/namespaces/team-a");
	r.res = &aj_kube_crds;
	r.ns = NULL;
	r.name = "ajjobs.aj.example.com";
	check_path(&r, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/ajjobs.aj.example.com");
	r.res = &ajjobs;
	r.ns = "ml";
	r.name = "train-1";
	r.subresource = "status";
	check_path(&r, "/apis/aj.example.com/v1alpha1/namespaces/ml/ajjobs/train-1/status");
}

static void names_are_percent_encoded(void **state)
{
	struct aj_kube_ref r = { &aj_kube_configmaps, "a b", "x/../y?z#w%", NULL };

	(void)state;
	check_path(&r, "/api/v1/namespaces/a%20b/configmaps/x%2F..%2Fy%3Fz%23w%25");
}

static void escape_keeps_only_unreserved(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	(void)state;
	assert_int_equal(aj_kube_escape(&b, "aZ09-._~ !\"&+,/:;=?@[]\xc3\xa9"), 0);
	assert_string_equal(aj_buf_cstr(&b),
			    "aZ09-._~%20%21%22%26%2B%2C%2F%3A%3B%3D%3F%40%5B%5D%C3%A9");
	aj_buf_release(&b);
}

static void list_query_parameters(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_kube_list_opts o = { 0 };

	(void)state;
	o.label_selector = "app=web,tier in (a,b),!legacy";
	o.field_selector = "metadata.name=x";
	o.limit = 50;
	o.continue_token = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ==";
	o.resource_version = "0";
	o.timeout_seconds = 345;
	aj_buf_addstr(&b, "/api/v1/configmaps");
	assert_int_equal(aj_kube_list_query(&b, &o), 0);
	assert_int_equal(aj_kube_query(&b, "watch", "1"), 0);
	assert_string_equal(aj_buf_cstr(&b),
			    "/api/v1/configmaps"
			    "?labelSelector=app%3Dweb%2Ctier%20in%20%28a%2Cb%29%2C%21legacy"
			    "&fieldSelector=metadata.name%3Dx"
			    "&limit=50"
			    "&continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ%3D%3D"
			    "&resourceVersion=0"
			    "&timeoutSeconds=345"
			    "&watch=1");
	aj_buf_release(&b);
}

static void empty_options_add_nothing(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_kube_list_opts o = { 0 };

	(void)state;
	aj_buf_addstr(&b, "/api/v1/configmaps");
	assert_int_equal(aj_kube_list_query(&b, &o), 0);
	assert_int_equal(aj_kube_list_query(&b, NULL), 0);
	assert_string_equal(aj_buf_cstr(&b), "/api/v1/configmaps");
	/* resourceVersion "" is meaningful (a quorum read) and is sent. */
	o.resource_version = "";
	assert_int_equal(aj_kube_list_query(&b, &o), 0);
	assert_string_equal(aj_buf_cstr(&b), "/api/v1/configmaps?resourceVersion=");
	aj_buf_release(&b);
}

static void authorization_is_redacted(void **state)
{
	static const char secret[] = "eyJhbGciOiJSUzI1NiJ9.c2VjcmV0.sig";
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	char line[128];

	(void)state;
	snprintf(line, sizeof(line), "Authorization: Bearer %s\r\n", secret);
	assert_int_equal(aj_kube_redact_header(&b, line, strlen(line)), 0);
	snprintf(line, sizeof(line), "authorization:Basic %s", secret);
	assert_int_equal(aj_kube_redact_header(&b, line, strlen(line)), 0);
	/* No scheme word: everything after the colon goes. */
	snprintf(line, sizeof(line), "AUTHORIZATION: %s", secret);
	assert_int_equal(aj_kube_redact_header(&b, line, strlen(line)), 0);
	assert_int_equal(aj_kube_redact_header(&b, "Accept: application/json\r\n", 26), 0);
	assert_string_equal(aj_buf_cstr(&b),
			    "Authorization: Bearer <redacted>\n"
			    "authorization:Basic <redacted>\n"
			    "AUTHORIZATION: <redacted>\n"
			    "Accept: application/json\n");
	assert_null(strstr(aj_buf_cstr(&b), "c2VjcmV0"));
	aj_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(paths_core_group_scope),
		cmocka_unit_test(names_are_percent_encoded),
		cmocka_unit_test(escape_keeps_only_unreserved),
		cmocka_unit_test(list_query_parameters),
		cmocka_unit_test(empty_options_add_nothing),
		cmocka_unit_test(authorization_is_redacted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
