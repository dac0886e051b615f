/*
 * The whole pure pipeline on hostile templates: the input is split on
 * "\n---\n" into up to five files (a leaf and the components it may name),
 * which go through the pipeline (pipeline.h) to their backend's objects.
 * Nothing may crash or leak; any failure must come with an error message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ajjob.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"
#include "core/source.h"
#include "core/yaml.h"
#include "pipeline/pipeline.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
	"template/leaf", "template/common", "storage/default",
	"environment/base", "account/default"
};

static void add_files(struct aj_source *src, const char *p, size_t size)
{
	const char *end = p + size;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]) && p <= end; i++) {
		const char *sep = NULL, *q;
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_node *doc = NULL;

		for (q = p; q + 5 <= end; q++)
			if (!memcmp(q, "\n---\n", 5)) {
				sep = q;
				break;
			}
		if (!aj_yaml_load(p, (size_t)((sep ? sep : end) - p), names[i], &doc, &err))
			aj_source_memory_add(src, names[i], doc);
		aj_node_free(doc);
		aj_errors_release(&err);
		if (!sep)
			break;
		p = sep + 5;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const argv[] = { "python", "train.py", "--lr", "$(id)'\n" };
	struct aj_shape_args args = { 2, 8, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_source src;
	struct aj_pipeline pl;
	struct aj_pipeline_in in = { &src, names[0], &args, argv, 4, NULL, NULL, NULL };
	struct aj_build_ctx ctx = { "fuzz-job", "default", "uid-1", "fuzz-job", AJ_AJJOB_API_VERSION, 0 };
	cJSON *out = NULL;
	int r;

	aj_alloc_hook_cjson();
	if (aj_source_memory_init(&src, "fuzz"))
		return 0;
	add_files(&src, (const char *)data, size);
	aj_pipeline_init(&pl);
	r = aj_pipeline_load(&in, &pl, &err);
	if (!r)
		r = aj_pipeline_build(&pl, &ctx, &out, &err);
	if (r && aj_errors_empty(&err))
		abort();   /* a failure must say why */
	cJSON_Delete(out);
	aj_pipeline_release(&pl);
	aj_source_release(&src);
	aj_errors_release(&err);
	return 0;
}
