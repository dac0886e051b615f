/*
 * run.c - what the runners may use of the reconcile in hand (runner.h):
 * its parts, and the API calls every runner may make about its AjJob.
 */
#include "run.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "kube/client.h"
#include "log.h"
#include "placer.h"
#include "podfail.h"
#include "reconcile.h"
#include "resources.h"

struct aj_kube *aj_run_kube(struct aj_run *run)
{
	return run->k;
}

const char *aj_run_ns(const struct aj_run *run)
{
	return run->v.ns;
}

struct aj_run_scratch *aj_run_scratch(struct aj_run *run)
{
	return &run->scratch;
}

const char *aj_run_key(const struct aj_run *run)
{
	return run->rep.key;
}

const struct aj_ajjob_view *aj_run_ajjob(const struct aj_run *run)
{
	return &run->v;
}

const struct aj_jobspec *aj_run_spec(const struct aj_run *run)
{
	return run->objects ? &run->pl.spec : NULL;
}

cJSON *aj_run_built(const struct aj_run *run)
{
	return run->objects;
}

void *aj_run_config(const struct aj_run *run)
{
	return run->config;
}

int aj_run_pods(struct aj_run *run, const char *selector, cJSON **out, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_pods, run->v.ns, NULL, NULL };
	struct aj_kube_list_opts o;

	memset(&o, 0, sizeof(o));
	o.label_selector = selector;
	return aj_kube_list_all(run->k, &ref, &o, out, NULL, err);
}

int aj_run_never_fits(struct aj_run *run, const char **fact, struct aj_errors *err)
{
	struct aj_kube_ref ref = { run->runner->owns, run->v.ns, run->job, NULL };
	struct aj_errors gerr = AJ_ERRORS_INIT;
	cJSON *obj = NULL;
	int rc = 0;

	*fact = NULL;
	if (!run->r->placer || !ref.res)
		return 0;
	if (aj_kube_get(run->k, &ref, &obj, NULL, &gerr)) {
		if (gerr.oom)
			rc = aj_errors_oom(err);
		else if (gerr.nr)
			aj_log(AJ_LOG_WARN, "could not read the job to tell whether it can ever fit",
			       "job", run->job, "error", gerr.items[0].message, AJ_LOG_END);
	} else if (aj_placer_never_fits(run->r->placer, run->k, obj, run->s.now,
					run->scratch.fact, sizeof(run->scratch.fact))) {
		rc = aj_errors_oom(err);
	} else if (run->scratch.fact[0]) {
		*fact = run->scratch.fact;
	}
	cJSON_Delete(obj);
	aj_errors_release(&gerr);
	return rc;
}

int aj_run_delete_owned(struct aj_run *run, struct aj_errors *err)
{
	struct aj_kube_ref ref = { run->runner->owns, run->v.ns, run->job, NULL };
	/* Foreground: the object goes only once the garbage collector removed its pods */
	struct aj_kube_delete_opts o = { AJ_KUBE_PROPAGATION_FOREGROUND, NULL, NULL };
	struct aj_kube_status ks;
	struct aj_errors derr = AJ_ERRORS_INIT;
	int r;

	aj_kube_status_init(&ks);
	r = aj_kube_delete(run->k, &ref, &o, NULL, &ks, &derr);
	if (r && ks.reason == AJ_KUBE_NOT_FOUND)
		r = 0;   /* already gone: the next turn sees it */
	else
		aj_errors_splice(err, &derr);
	aj_errors_release(&derr);
	aj_kube_status_release(&ks);
	return r;
}

int aj_run_patch_ajjob(struct aj_run *run, cJSON *patch, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_ajjobs, run->v.ns, run->v.name, NULL };
	cJSON *meta = cJSON_GetObjectItemCaseSensitive(patch, "metadata"), *out = NULL;
	const char *rv;
	char *copy;
	int ret;

	if (!meta)
		meta = cJSON_AddObjectToObject(patch, "metadata");
	if (!meta || !cJSON_AddStringToObject(meta, "resourceVersion", run->rep.rv)) {
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	ret = aj_kube_patch(run->k, &ref, AJ_KUBE_MERGE_PATCH, patch, &out, NULL, err);
	cJSON_Delete(patch);
	rv = aj_json_str(aj_json_get(out, "metadata"), "resourceVersion");
	if (!ret && rv) {
		if (!(copy = aj_strdup(rv))) {
			ret = aj_errors_oom(err);
		} else {
			aj_free(run->rep.rv);
			run->rep.rv = copy;
		}
	}
	cJSON_Delete(out);
	return ret;
}

const char *aj_run_pod_failure(struct aj_run *run, char *out, size_t size)
{
	struct aj_pod_failure f;

	if (!run->r->podfail || !run->s.uid || !aj_podfail_get(run->r->podfail, run->rep.key,
								run->s.uid, &f))
		return NULL;
	aj_pod_failure_format(&f, out, size);
	return out;
}
