#include "support.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "cache.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"
#include "core/resolve.h"
#include "core/source.h"

static cJSON *parse(const char *json)
{
	cJSON *o = cJSON_Parse(json);

	assert_non_null(o);
	return o;
}

static void a_submitted_ajjob_keeps_only_its_summary(void **state)
{
	struct aj_cache c;
	struct aj_ajjob_view v;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\",\"uid\":\"u1\","
		"\"resourceVersion\":\"10\",\"generation\":1},"
		"\"spec\":{\"command\":[\"python\"]}}")), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_string_equal(v.ns, "ml");
	assert_string_equal(v.name, "bert");
	assert_string_equal(v.uid, "u1");
	assert_string_equal(v.resource_version, "10");
	assert_false(v.has_phase);
	assert_int_equal(v.observed_generation, -1);
	/* Not yet submitted: the whole object is there to build from. */
	assert_non_null(v.object);
	assert_non_null(cJSON_GetObjectItem(v.object, "spec"));
	aj_ajjob_view_release(&v);

	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\",\"uid\":\"u1\","
		"\"resourceVersion\":\"11\",\"generation\":1,"
		"\"annotations\":{\"aj.dev/cancel\":\"true\"}},"
		"\"spec\":{\"command\":[\"python\"]},"
		"\"status\":{\"phase\":\"Submitted\",\"observedGeneration\":1,"
		"\"volcano\":{\"jobName\":\"bert\"}}}")), 0);
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 1);
	assert_true(v.has_phase);
	assert_int_equal(v.phase, AJ_PHASE_SUBMITTED);
	assert_int_equal(v.observed_generation, 1);
	assert_string_equal(v.volcano_job, "bert");
	assert_true(v.cancel);
	assert_null(v.object);
	assert_non_null(v.status);
	aj_ajjob_view_release(&v);

	assert_int_equal(aj_cache_ajjob_count(&c), 1);
	aj_cache_ajjob_delete(&c, "ml/bert");
	assert_int_equal(aj_cache_ajjob_get(&c, "ml/bert", &v), 0);
	aj_cache_release(&c);
}

static void volcano_jobs_remember_their_controlling_ajjob(void **state)
{
	struct aj_cache c;
	struct aj_volcano_view v;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(aj_cache_volcano_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"bert\",\"ownerReferences\":["
		"{\"kind\":\"ConfigMap\",\"name\":\"x\",\"uid\":\"c\",\"controller\":false},"
		"{\"kind\":\"AjJob\",\"name\":\"bert\",\"uid\":\"u1\",\"controller\":true}]},"
		"\"status\":{\"state\":{\"phase\":\"Running\"}}}")), 0);
	assert_int_equal(aj_cache_volcano_get(&c, "ml/bert", &v), 1);
	assert_string_equal(v.owner_uid, "u1");
	assert_string_equal(v.owner_name, "bert");
	assert_string_equal(v.phase, "Running");
	aj_volcano_view_release(&v);

	assert_int_equal(aj_cache_volcano_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"stray\"}}")), 0);
	assert_int_equal(aj_cache_volcano_get(&c, "ml/stray", &v), 1);
	assert_null(v.owner_uid);
	assert_null(v.phase);
	aj_volcano_view_release(&v);
	aj_cache_release(&c);
}

static void ajtemplates_of_one_namespace_form_a_source(void **state)
{
	struct aj_cache c;
	struct aj_source src;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	assert_int_equal(aj_cache_template_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"template.gpu\"},"
		"\"spec\":{\"base\":[\"storage.default\"],\"config\":{\"target\":{\"service\":\"volcano\"}}}}")), 0);
	assert_int_equal(aj_cache_template_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"storage.default\"},"
		"\"spec\":{\"config\":{\"storage\":{\"s\":{\"mount_dir\":\"/mnt/s\"}}}}}")), 0);
	/* Same name in another namespace must not be visible. */
	assert_int_equal(aj_cache_template_put(&c, parse(
		"{\"metadata\":{\"namespace\":\"other\",\"name\":\"storage.default\"},"
		"\"spec\":{\"config\":{\"storage\":{\"s\":{\"mount_dir\":\"/wrong\"}}}}}")), 0);

	assert_int_equal(aj_cache_template_source(&c, "ml", &src, &err), 0);
	aj_template_init(&t);
	assert_int_equal(aj_template_resolve(&src, "template/gpu", &t, &err), 0);
	assert_string_equal(aj_node_at(t.config, "storage.s.mount_dir")->str, "/mnt/s");
	assert_string_equal(aj_node_at(t.config, "target.service")->str, "volcano");
	aj_template_release(&t);
	aj_source_release(&src);

	aj_cache_template_delete(&c, "ml/storage.default");
	assert_int_equal(aj_cache_template_source(&c, "ml", &src, &err), 0);
	aj_template_init(&t);
	assert_int_equal(aj_template_resolve(&src, "template/gpu", &t, &err), -1);
	assert_true(aj_test_errors_contain(&err, "template/gpu -> storage/default"));
	aj_template_release(&t);
	aj_source_release(&src);
	aj_errors_release(&err);
	aj_cache_release(&c);
}

static void out_of_memory_drops_the_entry_instead_of_keeping_a_stale_one(void **state)
{
	struct aj_cache c;
	struct aj_ajjob_view v;
	long n;

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	for (n = 0;; n++) {
		int r;

		assert_int_equal(aj_cache_ajjob_put(&c, parse(
			"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"a\",\"uid\":\"old\"}}")), 0);
		aj_alloc_fail_after(n);
		r = aj_cache_ajjob_put(&c, parse(
			"{\"metadata\":{\"namespace\":\"ml\",\"name\":\"a\",\"uid\":\"new\"},"
			"\"status\":{\"phase\":\"Running\"}}"));
		aj_alloc_fail_after(-1);
		if (!r) {
			assert_int_equal(aj_cache_ajjob_get(&c, "ml/a", &v), 1);
			assert_string_equal(v.uid, "new");
			aj_ajjob_view_release(&v);
			break;
		}
		assert_int_equal(aj_cache_ajjob_get(&c, "ml/a", &v), 0);
	}
	assert_true(n > 0);
	aj_cache_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_submitted_ajjob_keeps_only_its_summary),
		cmocka_unit_test(volcano_jobs_remember_their_controlling_ajjob),
		cmocka_unit_test(ajtemplates_of_one_namespace_form_a_source),
		cmocka_unit_test(out_of_memory_drops_the_entry_instead_of_keeping_a_stale_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
