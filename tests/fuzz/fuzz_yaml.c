/*
 * YAML load → cJSON → YAML emit → load again. Besides crashes and leaks,
 * checks the round trip: whatever loads must re-load equal after emitting,
 * except for NaN and infinities (cJSON_Compare finds neither equal to
 * itself; tests/unit/test_yaml.c checks how they are emitted).
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int has_nonfinite(const struct aj_node *n)
{
	size_t i;

	if (!n)
		return 0;
	if (n->type == AJ_NODE_FLOAT && !isfinite(n->v.number))
		return 1;
	for (i = 0; i < n->nr; i++)
		if (has_nonfinite(n->type == AJ_NODE_MAP ? n->pairs[i].value : n->items[i]))
			return 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_node *tree = NULL, *again = NULL;
	cJSON *json = NULL;

	aj_alloc_hook_cjson();
	if (aj_yaml_load((const char *)data, size, "fuzz.yaml", &tree, &err))
		goto out;
	json = aj_node_to_cjson(tree);
	if (!json || aj_yaml_emit(json, &text, &err))
		goto out;
	if (aj_yaml_load(aj_buf_cstr(&text), text.len, "emitted.yaml", &again, &err))
		abort();   /* we emitted YAML we cannot read */
	/* cJSON turns whole floats into ints; compare through JSON. */
	if (!has_nonfinite(tree)) {
		cJSON *json2 = aj_node_to_cjson(again);

		if (json2 && !cJSON_Compare(json, json2, 1))
			abort();
		cJSON_Delete(json2);
	}
out:
	cJSON_Delete(json);
	aj_node_free(tree);
	aj_node_free(again);
	aj_buf_release(&text);
	aj_errors_release(&err);
	return 0;
}
