#include "support.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/node.h"
#include "core/yaml.h"

struct aj_node *aj_test_yaml(const char *text)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *n = NULL;

	if (aj_yaml_load(text, strlen(text), "test.yaml", &n, &err)) {
		fprintf(stderr, "%s", aj_test_errors_text(&err));
		aj_errors_release(&err);
		fail_msg("test YAML did not parse");
	}
	aj_errors_release(&err);
	return n;
}
