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
#include "backend/codeship.h"
#include "cli.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"
#include "kube/client.h"

/* Create the AjJob, say when no code went with it, then follow it with --wait or --follow. */
static int submit_ajjob(struct aj_kube *k, const cJSON *doc, const struct aj_cli_pipeline *p,
			const struct aj_cli_opts *o, struct aj_errors *err)
{
	const struct aj_pipeline *pl = p->lead;

	if (aj_cli_kube_submit(k, doc, o, err))
		return -1;
	if (pl->backend->code_route(&pl->spec) == AJ_CODE_NONE)
		aj_cli_code_say_none(&pl->spec);
	if (o->follow)
		return aj_cli_kube_follow(k, doc, err);
	return o->wait ? aj_cli_kube_wait(k, doc, err) : 0;
}

/*
 * A candidate whose code goes to a volume an earlier candidate filled: the
 * same archive is there (one tree, one digest), nothing to send again.
 */
static const struct aj_pipeline *volume_filled(const struct aj_cli_pipeline *p, size_t upto)
{
	const struct aj_pipeline *me = &p->cands.items[upto].p, *was;
	struct aj_code_volume a, b;
	size_t i;

	if (me->backend->code_route(&me->spec) != AJ_CODE_VOLUME || !aj_code_volume(&me->spec, &a))
		return NULL;
	for (i = 0; i < upto; i++) {
		was = &p->cands.items[i].p;
		if (p->cands.items[i].ok && was->spec.code.digest &&
		    was->backend->code_route(&was->spec) == AJ_CODE_VOLUME &&
		    aj_code_volume(&was->spec, &b) && !strcmp(a.pvc, b.pvc) &&
		    !strcmp(a.mount_dir, b.mount_dir))
			return was;
	}
	return NULL;
}

/*
 * The code goes by each route the job may take: a placement's candidates
 * each by theirs, a volume once; the datastore's path is kept from the
 * first candidate that uploads there.
 */
static int ship_code(struct aj_kube *k, struct aj_cli_pipeline *p, struct aj_errors *err)
{
	const struct aj_pipeline *was;
	char *uri = NULL;
	size_t i;

	if (!p->cands.nr)
		return aj_cli_code_upload(k, p->namespace_, &p->pl, err) ||
		       aj_cli_code_blob_upload(&p->pl, &p->code_uri, err) ? -1 : 0;
	for (i = 0; i < p->cands.nr; i++) {
		struct aj_pipeline *pl = &p->cands.items[i].p;

		if (!p->cands.items[i].ok)
			continue;
		was = volume_filled(p, i);
		if (was ? aj_pipeline_set_code(pl, was->spec.code.digest, err) :
		    aj_cli_code_upload(k, p->namespace_, pl, err) ||
		    aj_cli_code_blob_upload(pl, &uri, err))
			return -1;
		if (uri && !p->code_uri)
			p->code_uri = uri;
		else
			aj_free(uri);
		uri = NULL;
	}
	return aj_cli_candidates_one_code(&p->cands, err);
}

int aj_cli_pipeline_connect(struct aj_cli_pipeline *p, const struct aj_cli_opts *o,
			    struct aj_kube *k, struct aj_errors *err)
{
	int rc = aj_cli_kube_open(k, o, p->lead->spec.target.context,
				  aj_node_at(p->lead->tpl.config, "target.context"), err);

	/* Neither --namespace nor target.namespace: the context's. */
	if (!rc && !o->namespace_ && !p->lead->spec.target.namespace_)
		p->namespace_ = k->cfg.namespace;
	return rc;
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
		rc = aj_cli_pipeline_connect(&p, o, &kube, &err);
	}
	/* what the controller will build from the AjJob must build here first */
	if (!rc) {
		rc = aj_cli_pipeline_build(&p, 0, &doc, &err);
		cJSON_Delete(doc);
	}
	/* only a valid job ships code, by the route its backend names */
	if (!rc)
		rc = ship_code(&kube, &p, &err);
	if (!rc) {
		doc = aj_cli_pipeline_ajjob(&p, &err);
		rc = doc ? submit_ajjob(&kube, doc, &p, o, &err) : -1;
		cJSON_Delete(doc);
	}
	rc = aj_cli_pipeline_finish(rc, &err, &p, canonical);
	aj_kube_release(&kube);
	return rc;
}
