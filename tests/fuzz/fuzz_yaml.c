/*
 * YAML load → cJSON → YAML emit → load again. Besides crashes and leaks,
 * checks the round trip: whatever loads must re-load to the same JSON text.
 * Text, not cJSON_Compare: emitting through cJSON turns a whole float into
 * an integer, which above 15 digits becomes a raw cJSON number, and
 * cJSON_Compare finds neither that nor an infinity equal to itself.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Same unformatted JSON text (true when memory ran out: nothing to say). */
static int same_text(const cJSON *a, const cJSON *b)
{
	char *ta = cJSON_PrintUnformatted(a);
	char *tb = b ? cJSON_PrintUnformatted(b) : NULL;
	int same = !ta || !tb || !strcmp(ta, tb);

	cJSON_free(ta);
	cJSON_free(tb);
	return same;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_node *tree = NULL, *again = NULL;
	cJSON *json = NULL, *json2 = NULL;

	aj_alloc_hook_cjson();
	if (aj_yaml_load((const char *)data, size, "fuzz.yaml", &tree, &err))
		goto out;
	json = aj_node_to_cjson(tree);
	if (!json || aj_yaml_emit(json, &text, &err))
		goto out;
	if (aj_yaml_load(aj_buf_cstr(&text), text.len, "emitted.yaml", &again, &err))
		abort();   /* we emitted YAML we cannot read */
	json2 = aj_node_to_cjson(again);
	if (!same_text(json, json2))
		abort();   /* the emitted YAML means something else */
out:
	cJSON_Delete(json);
	cJSON_Delete(json2);
	aj_node_free(tree);
	aj_node_free(again);
	aj_buf_release(&text);
	aj_errors_release(&err);
	return 0;
}
