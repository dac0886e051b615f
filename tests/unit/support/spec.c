#include "support.h"

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
