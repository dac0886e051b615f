/*
 * AjJob objects as the controller receives them from the API server: JSON
 * through the controller's cache (put, then a view), the next status computed
 * from the status it carries, then its bundle read and run through the
 * pipeline (resolve, JobSpec, prepare, validate, permit, build). Nothing may
 * crash or leak; any failure must come with an error message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cache.h"
#include "core/ajjob.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "pipeline/pipeline.h"
#include "status.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void through_cache(const cJSON *job)
{
	struct aj_ajjob_view v = { 0 };
	struct aj_cache c;
	char key[512];
	cJSON *copy;

	if (aj_cache_init(&c))
		abort();
	copy = cJSON_Duplicate(job, 1);
	if (copy && !aj_cache_ajjob_put(&c, copy) &&
	    !aj_cache_key(job, key, sizeof(key)) &&
	    aj_cache_ajjob_get(&c, key, &v) == 1 && !v.name)
		abort();   /* a cached AjJob always has its name */
	aj_ajjob_view_release(&v);
	aj_cache_release(&c);
}

static void next_status(const cJSON *job)
{
	struct aj_status st = { AJ_PHASE_FAILED, 0, "InvalidTemplate", "bad", "volcano", 3, "volcano", NULL,
				0, 0, 0, NULL, NULL, 0, NULL, 0 };
	cJSON *next;
	int changed = -1;

	next = aj_status_next(cJSON_GetObjectItemCaseSensitive(job, "status"), &st,
			      "2026-01-01T00:00:00Z", &changed);
	if (!next || (changed != 0 && changed != 1))
		abort();
	cJSON_Delete(next);
}

static void through_pipeline(const cJSON *job)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *tree = NULL;
	struct aj_bundle bundle;
	struct aj_pipeline pl;
	struct aj_build_ctx ctx = { "fuzz-job", "team", "uid-1", "fuzz-job", AJ_AJJOB_API_VERSION, 0 };
	cJSON *out = NULL;
	int r;

	aj_bundle_init(&bundle);
	aj_pipeline_init(&pl);
	r = aj_node_from_cjson(job, "AjJob team/fuzz-job", &tree, &err);
	if (!r)
		r = aj_bundle_read(&bundle, aj_node_get(tree, "spec"), "AjJob team/fuzz-job", &err);
	if (!r) {
		struct aj_pipeline_in in = { &bundle.source, bundle.leaf, &bundle.args,
					     (const char *const *)bundle.command.items,
					     bundle.command.nr, bundle.code_digest, "team", "*" };

		r = aj_pipeline_load(&in, &pl, &err);
		if (!r)
			r = aj_pipeline_build(&pl, &ctx, &out, &err);
	}
	if (r && aj_errors_empty(&err))
		abort();
	cJSON_Delete(out);
	aj_pipeline_release(&pl);
	aj_bundle_release(&bundle);
	aj_node_free(tree);
	aj_errors_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cJSON *job;

	aj_alloc_hook_cjson();
	job = cJSON_ParseWithLength((const char *)data, size);
	if (!job)
		return 0;
	through_cache(job);
	next_status(job);
	through_pipeline(job);
	cJSON_Delete(job);
	return 0;
}
