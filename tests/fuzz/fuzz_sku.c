/*
 * SKU strings and range mappings. The first line is a SKU string: it is
 * formatted with {nodes}/{processes}, parsed as shorthand and mapped to
 * instance types. The whole input is also loaded as YAML and resolved as a
 * jobs[0].sku value (a string or a node-range mapping) for a few node counts.
 * Nothing may crash or leak; a failure must say why; a parse that succeeds
 * must describe a SKU the shorthand can hold.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"
#include "core/sku.h"
#include "core/strlist.h"
#include "core/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one_string(const char *s)
{
	struct aj_where w = { "fuzz.yaml", 1, 1, "config.jobs[0].sku" };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_sku_spec spec;
	struct aj_strlist types = AJ_STRLIST_INIT;
	char *out = NULL;
	int r;

	if (aj_sku_format(s, 4, 8, &w, &out, &err) ? aj_errors_empty(&err) : !out)
		abort();
	(void)aj_sku_has_placeholder(s);
	aj_free(out);
	aj_errors_release(&err);

	aj_sku_spec_init(&spec);
	r = aj_sku_parse(s, &spec);
	if (r == 0 && (spec.nodes < 1 || spec.count < 0 || spec.memory_gb < 0 ||
		       (spec.cpu && (spec.nvlink || spec.accelerators.nr))))
		abort();
	if (r == 1 && (spec.accelerators.nr || spec.nvlink))
		abort();   /* not shorthand must leave the spec empty */
	aj_sku_spec_release(&spec);

	r = aj_sku_instance_types(s, &types);
	if (r == 0 && types.nr > AJ_SKU_MAX_TYPES)
		abort();
	aj_strlist_release(&types);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int counts[][2] = { { 1, 1 }, { 2, 8 }, { 9, 3 }, { 1000000, 1 } };
	const char *nl = memchr(data, '\n', size);
	size_t first = nl ? (size_t)(nl - (const char *)data) : size;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *doc = NULL;
	char *line = aj_strndup((const char *)data, first);
	size_t i;

	aj_alloc_hook_cjson();
	if (line && !memchr(data, '\0', first))
		one_string(line);
	aj_free(line);

	if (!aj_yaml_load((const char *)data, size, "fuzz.yaml", &doc, &err)) {
		for (i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
			struct aj_errors e2 = AJ_ERRORS_INIT;
			char *out = NULL;

			if (aj_sku_resolve(doc, "config.jobs[0].sku", counts[i][0],
					   counts[i][1], &out, &e2)) {
				if (aj_errors_empty(&e2))
					abort();
			} else if (!out) {
				abort();
			}
			aj_free(out);
			aj_errors_release(&e2);
		}
	}
	aj_node_free(doc);
	aj_errors_release(&err);
	return 0;
}
