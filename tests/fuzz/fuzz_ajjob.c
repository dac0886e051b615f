/*
 * AjJob objects as the controller receives them from the API server: JSON
 * through the controller's cache (put, then a view), the next status computed
 * from the status it carries, then its bundle through bundle read, resolve,
 * JobSpec, validate and build. Nothing may crash or leak; any failure must
 * come with an error message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "backend/backend.h"
#include "cache.h"
#include "core/alloc.h"
#include "core/bundle.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/json.h"
#include "core/node.h"
#include "core/resolve.h"
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
				0, 0, 0, NULL };
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
	struct aj_template tpl;
	struct aj_jobspec spec;
	struct aj_build_ctx ctx = { "fuzz-job", "team", "uid-1", "fuzz-job", "aj.dev/v1alpha1", 0 };
	const struct aj_backend *be;
	cJSON *out = NULL;
	int r;

	aj_bundle_init(&bundle);
	aj_template_init(&tpl);
	aj_jobspec_init(&spec);
	r = aj_node_from_cjson(job, "AjJob team/fuzz-job", &tree, &err);
	if (!r)
		r = aj_bundle_read(&bundle, aj_node_get(tree, "spec"), "AjJob team/fuzz-job", &err);
	if (!r)
		r = aj_template_resolve(&bundle.source, bundle.leaf, &tpl, &err);
	if (!r)
		r = aj_jobspec_from_config(tpl.config, tpl.name, &bundle.args,
					   (const char *const *)bundle.command.items,
					   bundle.command.nr, &spec, &err);
	if (!r) {
		be = aj_backend_find(spec.target.service);
		if (!be)
			abort();
		r = be->validate(&spec, &err);
		if (!r)
			r = be->build(&spec, &ctx, &out, &err);
	}
	if (r && aj_errors_empty(&err))
		abort();
	cJSON_Delete(out);
	aj_jobspec_release(&spec);
	aj_template_release(&tpl);
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
