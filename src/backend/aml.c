/*
 * aml.c - Azure ML compute clusters: the shared command-job body
 * (azureml.h) on the compute named by target.name, with the job's identity.
 */
#include <string.h>

#include "azureml.h"
#include "backend.h"
#include "common.h"
#include "core/error.h"
#include "core/jobspec.h"

static int aml_validate(const struct aj_jobspec *spec, struct aj_errors *err)
{
	int ret = aj_azureml_validate(spec, "aml", err);

	if (!spec->target.name || !*spec->target.name) {
		struct aj_where w = { NULL, 0, 0, "config.target.name" };

		ret = aj_errors_add(err, &w, "required for service aml (the AML compute)");
	}
	return ret;
}

static int aml_build(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
		     cJSON **out, struct aj_errors *err)
{
	struct aj_azureml_body b;
	const char *identity;
	cJSON *id;

	*out = NULL;
	if (aj_azureml_body_start(&b, spec, ctx, NULL, err))
		return -1;
	identity = spec->jobs[0].identity;
	aj_body_add_string(b.properties, "computeId", spec->target.name, &b.oom);
	id = aj_body_add_object(b.properties, "identity", &b.oom);
	aj_body_add_string(id, "identityType",
			   identity && !strcmp(identity, "user") ? "UserIdentity" : "Managed",
			   &b.oom);
	return aj_azureml_body_finish(&b, spec, out, err);
}

const struct aj_backend aj_backend_aml = {
	.name = "aml",
	.target = AJ_TARGET_AZURE,
	.code_route = aj_azureml_code_route,
	.validate = aml_validate,
	.build = aml_build,
};
