/*
 * azureml.h - the Azure ML command-job request body, shared by the aml and
 * sing backends (aml.c, sing.c add only what differs: compute, identity,
 * Singularity resources, default variables).
 *
 * The body is what `PUT .../workspaces/{ws}/jobs/{name}` takes:
 * {"properties": {"jobType": "Command", ...}}. Two of its values are
 * placeholders the forwarder replaces before sending, because they need
 * live calls: `environmentId` holds the image (registry-prefixed) until the
 * environment version is registered, and `codeId` holds
 * "codes/AJ_AZUREML_CODE_NAME/versions/<digest>" until the code version is.
 * Storage mounts become outputs (aj_azureml_output_name()) on the datastore
 * named by aj_azureml_datastore_name(), which the forwarder creates or reuses.
 *
 * The command is one shell script: setup (run by local rank 0 only when the
 * job is distributed, the other ranks on the node wait for it), the job
 * commands, then the user command with every argument quoted.
 *
 * Ownership: struct aj_azureml_body owns its tree until finish() hands it to
 * the caller (or releases it on failure).
 */
#ifndef AJ_AZUREML_H
#define AJ_AZUREML_H

#include <cjson/cJSON.h>

#include "backend.h"

struct aj_buf;
struct aj_build_ctx;
struct aj_errors;
struct aj_jobspec;

/*
 * Code: `aj run` uploads the files of the archive with SHA-256 D under
 * AJ_AZUREML_CODE_DIR/D/ of the workspace's default datastore; the
 * forwarder registers that folder as version D of code AJ_AZUREML_CODE_NAME.
 */
#define AJ_AZUREML_CODE_NAME "aj-code"
#define AJ_AZUREML_CODE_DIR "aj-code"

/* Both services take the files through the datastore: AJ_CODE_DATASTORE. */
enum aj_code_route aj_azureml_code_route(const struct aj_jobspec *spec);

struct aj_azureml_body {
	cJSON *root;              /* {"properties": {...}} */
	cJSON *properties;
	cJSON *env;               /* properties.environmentVariables */
	cJSON *resources;         /* properties.resources */
	int oom;
};

/* Checks every Azure ML service shares; `service` names it in messages. */
int aj_azureml_validate(const struct aj_jobspec *spec, const char *service,
			struct aj_errors *err);

/*
 * Start the body: everything but compute, identity and service defaults.
 * environment_image overrides the registry-prefixed image placeholder
 * (NULL: keep it). 0 / -1.
 */
int aj_azureml_body_start(struct aj_azureml_body *b, const struct aj_jobspec *spec,
			  const struct aj_build_ctx *ctx, const char *environment_image,
			  struct aj_errors *err);

/* Set environment variable key unless the template set it. */
void aj_azureml_env_default(struct aj_azureml_body *b, const char *key, const char *value);

/*
 * Add what must win over everything else (storage references), and hand the
 * body over as a one-element array in *out. Releases the body on failure.
 */
int aj_azureml_body_finish(struct aj_azureml_body *b, const struct aj_jobspec *spec,
			   cJSON **out, struct aj_errors *err);

/* The datastore a storage mount uses: "aj_" + the name with '-' as '_'. */
int aj_azureml_datastore_name(struct aj_buf *b, const char *mount);
/*
 * Its job output (and AZUREML_DATAREFERENCE_<output>): the name with '-' as
 * '_' and a leading digit behind '_', since Azure ML takes output names of
 * [A-Za-z_][A-Za-z0-9_]* only and a shell cannot read "data-in". 0 / -1.
 */
int aj_azureml_output_name(struct aj_buf *b, const char *mount);

#endif
