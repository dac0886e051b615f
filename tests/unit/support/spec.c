#include "support.h"

#include "backend/backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/node.h"

void aj_test_spec(const char *yaml, const struct aj_shape_args *args,
		  const char *const *argv, size_t argc, struct aj_jobspec *s)
{
	struct aj_node *doc = aj_test_yaml(yaml);
	struct aj_errors err = AJ_ERRORS_INIT;

	aj_jobspec_init(s);
	if (aj_jobspec_from_config(aj_node_get(doc, "config"), "template/t", args, argv, argc,
				   s, &err))
		fail_msg("conversion failed: %s", aj_test_errors_text(&err));
	aj_errors_release(&err);
	aj_node_free(doc);
}

long aj_test_backend_oom(const char *service, const char *yaml, const struct aj_shape_args *args,
			 const char *const *argv, size_t argc, const struct aj_build_ctx *ctx)
{
	const struct aj_backend *b = aj_backend_find(service);
	long n;

	assert_non_null(b);
	for (n = 0;; n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_jobspec s;
		cJSON *arr = NULL;
		int ret;

		aj_test_spec(yaml, args, argv, argc, &s);
		aj_alloc_fail_after(n);
		ret = aj_backend_check(b, &s, &err);
		if (!ret)
			ret = b->build(&s, ctx, &arr, &err);
		aj_alloc_fail_after(-1);
		if (ret) {
			assert_null(arr);
			if (!aj_test_errors_contain(&err, "out of memory"))
				fail_msg("allocation %ld: %s", n, aj_test_errors_text(&err));
		}
		cJSON_Delete(arr);
		aj_errors_release(&err);
		aj_jobspec_release(&s);
		if (!ret)
			return n;
	}
}

void aj_test_backend_rejects(const char *service, const char *yaml,
			     const struct aj_shape_args *args, const char *fragment)
{
	const struct aj_backend *b = aj_backend_find(service);
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;

	assert_non_null(b);
	aj_test_spec(yaml, args, NULL, 0, &s);
	assert_int_equal(aj_backend_check(b, &s, &err), -1);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got:\n%s", fragment, aj_test_errors_text(&err));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}
