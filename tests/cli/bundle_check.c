/*
 * bundle_check.c - the controller's side of an AjJob, for the CLI tests.
 *
 * Reads an AjJob as `aj run --dry-run -o json` prints it, resolves the
 * template bundle it carries the way the controller does (the AjJob reader
 * of core/ajjob.h, then the pipeline with the AjJob's shape, command and
 * code, built with its name and namespace) and prints the objects as JSON,
 * one document like `aj render -o json`. The CLI test compares the two.
 *
 *   aj_bundle_check AJJOB.json
 */
#include <stdio.h>
#include <string.h>

#include "core/ajjob.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "pipeline/pipeline.h"

static int read_file(const char *path, struct aj_buf *out)
{
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "rb");

	if (!f)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		aj_buf_add(out, chunk, n);
	fclose(f);
	return out->failed ? -1 : 0;
}

static const char *string_at(const cJSON *job, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(job, a), b);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int check(const cJSON *job, struct aj_errors *err)
{
	struct aj_node *tree = NULL;
	struct aj_bundle bundle;
	struct aj_pipeline pl;
	struct aj_pipeline_in in;
	struct aj_build_ctx ctx;
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_LARGE);
	cJSON *objects = NULL, *doc;
	int rc;

	aj_bundle_init(&bundle);
	aj_pipeline_init(&pl);
	memset(&ctx, 0, sizeof(ctx));
	ctx.job_name = string_at(job, "metadata", "name");
	ctx.namespace_ = string_at(job, "metadata", "namespace");
	rc = aj_node_from_cjson(job, "AjJob", &tree, err) ||
	     aj_bundle_read(&bundle, aj_node_get(tree, "spec"), "AjJob", err);
	if (!rc) {
		in = (struct aj_pipeline_in){ &bundle.source, bundle.leaf, &bundle.args,
					      (const char *const *)bundle.command.items,
					      bundle.command.nr, bundle.code_digest, NULL, NULL };
		rc = aj_pipeline_load(&in, &pl, err) ||
		     aj_pipeline_build(&pl, &ctx, &objects, err);
	}
	if (!rc) {
		doc = cJSON_GetArraySize(objects) == 1 ? cJSON_GetArrayItem(objects, 0) : objects;
		rc = aj_json_print(doc, &out);
		if (!rc)
			fputs(aj_buf_cstr(&out), stdout);
	}
	cJSON_Delete(objects);
	aj_buf_release(&out);
	aj_pipeline_release(&pl);
	aj_bundle_release(&bundle);
	aj_node_free(tree);
	return rc ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_LARGE), msg = AJ_BUF_INIT(AJ_BUF_LARGE);
	cJSON *job = NULL;
	int rc;

	aj_alloc_hook_cjson();
	if (argc != 2) {
		fputs("usage: aj_bundle_check AJJOB.json\n", stderr);
		return 2;
	}
	rc = read_file(argv[1], &text) ||
	     aj_json_parse(aj_buf_cstr(&text), text.len, argv[1], &job, &err) ||
	     check(job, &err);
	if (rc) {
		aj_errors_format_all(&err, &msg);
		fprintf(stderr, "%s: cannot resolve the AjJob\n%s", argv[1], aj_buf_cstr(&msg));
	}
	cJSON_Delete(job);
	aj_buf_release(&msg);
	aj_buf_release(&text);
	aj_errors_release(&err);
	return rc ? 1 : 0;
}
