/*
 * sing.c - Singularity virtual clusters: the shared command-job body
 * (azureml.h) plus the AISuperComputer resources, whose instance types come
 * from the resolved SKU (sku.h).
 *
 * computeId is the VC's ARM id when target names the VC with its
 * subscription and resource group; otherwise it is left out for the
 * forwarder, which picks the VC (auto-selection) or takes the workspace's
 * subscription and resource group. Curated images (amlt-sing/<alias>) run
 * through imageVersion on a stock base environment. Identity travels in the
 * environment (_AZUREML_SINGULARITY_JOB_UAI), never in the body.
 */
#include <stdlib.h>
#include <string.h>

#include "azureml.h"
#include "backend.h"
#include "common.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/sku.h"
#include "core/strlist.h"

#define CURATED_PREFIX "amlt-sing/"
#define CURATED_BASE_IMAGE "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04:latest"
#define INSTANCE_PREFIX "Singularity."

static int sku_error(const char *sku, const char *why, struct aj_errors *err)
{
	struct aj_where w = { NULL, 0, 0, "config.jobs[0].sku" };

	return aj_errors_add(err, &w, "\"%s\": %s", sku, why);
}

/* The instance types for the job's SKU, checked. 0 / -1. */
static int instance_types(const struct aj_jobspec *spec, struct aj_strlist *types,
			  struct aj_errors *err)
{
	const char *sku = spec->sku;
	char *end;
	long n;
	int ret;

	/* No SKU without a shape (template validate): nothing to match yet. */
	if (!sku)
		return 0;
	n = strtol(sku, &end, 10);
	if (end != sku && *end == 'x' && n != spec->nodes) {
		struct aj_where w = { NULL, 0, 0, "config.jobs[0].sku" };

		return aj_errors_add(err, &w, "\"%s\" is for %ld node%s but the job has %d",
				     sku, n, n == 1 ? "" : "s", spec->nodes);
	}
	ret = aj_sku_instance_types(sku, types);
	if (ret < 0)
		return aj_errors_oom(err);
	if (ret > 0)
		return sku_error(sku, "neither a Singularity instance type nor SKU shorthand "
				 "such as 2x80G8-A100-NvLink or C4", err);
	if (!types->nr)
		return sku_error(sku, "no Singularity instance type matches", err);
	return 0;
}

static int sing_validate(const struct aj_jobspec *spec, struct aj_errors *err)
{
	struct aj_strlist types = AJ_STRLIST_INIT;
	int ret = aj_azureml_validate(spec, "sing", err);

	if (!spec->heterogeneous && instance_types(spec, &types, err))
		ret = -1;
	aj_strlist_release(&types);
	return ret;
}


static int vc_known(const struct aj_target *t)
{
	return t->name && *t->name && t->subscription_id && t->resource_group;
}

/* The VC's ARM id, or NULL when target does not name it fully (or on OOM). */
static char *vc_arm_id(const struct aj_target *t)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	if (!vc_known(t))
		return NULL;
	aj_buf_addf(&b, "/subscriptions/%s/resourceGroups/%s/providers/"
		    "Microsoft.MachineLearningServices/virtualclusters/%s",
		    t->subscription_id, t->resource_group, t->name);
	return aj_buf_detach(&b, NULL);
}

static void add_supercomputer(struct aj_azureml_body *b, const struct aj_jobspec *spec,
			      const struct aj_strlist *types, const char *image_version,
			      const char *vc)
{
	const struct aj_job *j = &spec->jobs[0];
	struct aj_buf joined = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *props = aj_body_add_object(b->resources, "properties", &b->oom);
	cJSON *sc = aj_body_add_object(props, "AISuperComputer", &b->oom);
	cJSON *list;
	size_t i;

	for (i = 0; i < types->nr; i++)
		aj_buf_addf(&joined, "%s" INSTANCE_PREFIX "%s", i ? "," : "", types->items[i]);
	aj_body_add_string(sc, "instanceType", joined.failed ? NULL : aj_buf_cstr(&joined), &b->oom);
	aj_buf_release(&joined);
	list = aj_body_add_array(sc, "instanceTypes", &b->oom);
	for (i = 0; i < types->nr; i++) {
		struct aj_buf one = AJ_BUF_INIT(AJ_BUF_SMALL);

		aj_buf_addf(&one, INSTANCE_PREFIX "%s", types->items[i]);
		aj_body_add_string(list, NULL, one.failed ? NULL : aj_buf_cstr(&one), &b->oom);
		if (i == 0)
			aj_body_add_string(b->resources, "instanceType",
					   one.failed ? NULL : aj_buf_cstr(&one), &b->oom);
		aj_buf_release(&one);
	}
	aj_body_add_int(sc, "instanceCount", spec->nodes, &b->oom);
	aj_body_add_bool(sc, "interactive", 0, &b->oom);
	aj_body_add_string(sc, "imageVersion", image_version, &b->oom);
	aj_body_add_string(sc, "slaTier", j->sla_tier ? j->sla_tier : "Premium", &b->oom);
	aj_body_add_string(sc, "priority", j->priority ? j->priority : "High", &b->oom);
	aj_body_add_bool(sc, "EnableAzmlInt", 0, &b->oom);
	aj_body_add_string(sc, "tensorboardLogDirectory", "/scratch/outputs", &b->oom);
	if (vc)
		aj_body_add_string(sc, "VirtualClusterArmId", vc, &b->oom);
	if (spec->target.group_policy_name)
		aj_body_add_string(sc, "groupPolicyName", spec->target.group_policy_name, &b->oom);
}

static int sing_build(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
		      cJSON **out, struct aj_errors *err)
{
	struct aj_strlist types = AJ_STRLIST_INIT;
	struct aj_azureml_body b;
	const char *image = spec->environment.image;
	int curated;
	char *vc;

	*out = NULL;
	if (instance_types(spec, &types, err)) {
		aj_strlist_release(&types);
		return -1;
	}
	curated = !strncmp(image, CURATED_PREFIX, strlen(CURATED_PREFIX));
	if (aj_azureml_body_start(&b, spec, ctx, curated ? CURATED_BASE_IMAGE : NULL, err)) {
		aj_strlist_release(&types);
		return -1;
	}
	vc = vc_arm_id(&spec->target);
	if (vc)
		aj_body_add_string(b.properties, "computeId", vc, &b.oom);
	else if (vc_known(&spec->target))
		b.oom = 1;      /* the id could not be allocated */
	aj_azureml_env_default(&b, "SUDO", "sudo");
	aj_azureml_env_default(&b, "AZCOPY_AUTO_LOGIN_TYPE", "MSI");
	aj_azureml_env_default(&b, "JOB_EXECUTION_MODE", "Basic");
	aj_azureml_env_default(&b, "AZUREML_COMPUTE_USE_COMMON_RUNTIME", "false");
	if (spec->target.group_policy_name)
		aj_azureml_env_default(&b, "AML_JOB_GROUP_POLICY", spec->target.group_policy_name);
	add_supercomputer(&b, spec, &types, curated ? image + strlen(CURATED_PREFIX) : "", vc);
	aj_free(vc);
	aj_strlist_release(&types);
	return aj_azureml_body_finish(&b, spec, out, err);
}

const struct aj_backend aj_backend_sing = {
	.name = "sing",
	.target = AJ_TARGET_AZURE,
	.code_route = aj_azureml_code_route,
	.validate = sing_validate,
	.build = sing_build,
};
