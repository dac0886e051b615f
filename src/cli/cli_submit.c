/*
 * cli_submit.c - `aj run` when it submits (aj-net): the pipeline of
 * cli_run.c, then the code and the AjJob go to their services.
 *
 * The code is archived once, by the upload that sends it (cli_code_upload.c
 * for the shared volume, cli_code_blob.c for Blob Storage), and the digest
 * of exactly those bytes is what the AjJob carries and the pods check.
 */
#include <string.h>

#include "backend/backend.h"
#include "cli.h"
#include "core/error.h"
#include "core/node.h"
#include "kube/client.h"

/* Create the AjJob, say when no code went with it, then follow it with --wait. */
static int submit_ajjob(struct aj_kube *k, const cJSON *doc, const struct aj_cli_pipeline *p,
			const struct aj_cli_opts *o, struct aj_errors *err)
{
	const struct aj_pipeline *pl = &p->pl;

	if (aj_cli_kube_submit(k, doc, o, err))
		return -1;
	if (pl->backend->code_route(&pl->spec) == AJ_CODE_NONE)
		aj_cli_code_say_none(&pl->spec);
	return o->wait ? aj_cli_kube_wait(k, doc, err) : 0;
}

int aj_cli_run_submit(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube kube;
	struct aj_cli_pipeline p;
	char *canonical = aj_cli_template_canonical(aj_cli_run.name, o->template_name);
	cJSON *doc = NULL;
	int rc;

	if (!canonical)
		return AJ_EXIT_USAGE;
	memset(&kube, 0, sizeof(kube));
	aj_cli_pipeline_init(&p);
	rc = aj_cli_pipeline_load(o, canonical, AJ_CLI_DIGEST_NONE, &p, &err);
	if (!rc) {
		rc = aj_cli_kube_open(&kube, o, p.pl.spec.target.context,
				      aj_node_at(p.pl.tpl.config, "target.context"), &err);
		/* Neither --namespace nor target.namespace: the context's. */
		if (!rc && !o->namespace_ && !p.pl.spec.target.namespace_)
			p.namespace_ = kube.cfg.namespace;
	}
	/* what the controller will build from the AjJob must build here first */
	if (!rc) {
		rc = aj_cli_pipeline_build(&p, 0, &doc, &err);
		cJSON_Delete(doc);
	}
	/* only a valid job ships code, by the route its backend names */
	if (!rc)
		rc = aj_cli_code_upload(&kube, p.namespace_, &p.pl, &err);
	if (!rc)
		rc = aj_cli_code_blob_upload(&p.pl, &p.code_uri, &err);
	if (!rc) {
		doc = aj_cli_pipeline_ajjob(&p, &err);
		rc = doc ? submit_ajjob(&kube, doc, &p, o, &err) : -1;
		cJSON_Delete(doc);
	}
	rc = aj_cli_pipeline_finish(rc, &err, &p, canonical);
	aj_kube_release(&kube);
	return rc;
}
