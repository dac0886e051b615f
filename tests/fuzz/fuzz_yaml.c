/*
 * YAML load → cJSON → YAML emit → load again. Besides crashes and leaks,
 * checks the round trip: whatever loads must re-load to the same document.
 * Numbers are compared by value: emitting through cJSON turns a whole float
 * into an integer (kept as a raw cJSON number above 15 digits), and -0.0
 * into 0; NaN matches NaN.
 */
#include <math.h>
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

static int is_number(const cJSON *v, double *out)
{
	if (cJSON_IsNumber(v))
		*out = v->valuedouble;
	else if (cJSON_IsRaw(v))
		*out = strtod(v->valuestring, NULL);
	else
		return 0;
	return 1;
}

static int same(const cJSON *a, const cJSON *b)
{
	const cJSON *x, *y;
	double da, db;

	if (is_number(a, &da) && is_number(b, &db))
		return da == db || (isnan(da) && isnan(db));
	if ((a->type & 0xff) != (b->type & 0xff))
		return 0;
	if (cJSON_IsString(a))
		return !strcmp(a->valuestring, b->valuestring);
	if (!cJSON_IsArray(a) && !cJSON_IsObject(a))
		return 1;   /* null, true, false */
	for (x = a->child, y = b->child; x && y; x = x->next, y = y->next)
		if ((cJSON_IsObject(a) && strcmp(x->string, y->string)) || !same(x, y))
			return 0;
	return !x && !y;
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
	if (json2 && !same(json, json2))
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
