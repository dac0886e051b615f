/*
 * aml.h - the Azure ML and Singularity calls the job forwarder makes, on
 * top of the ARM client (arm.h): environment and code versions, datastores,
 * command jobs (PUT, GET, cancel), a workspace's computes, and for
 * Singularity the subscriptions, virtual clusters (Resource Graph) and
 * their quotas (vcselect.h reads them).
 *
 * Job names are derived from the Kubernetes object (namespace, name and a
 * hash of its uid) so that a PUT repeated after a lost reply, a crash or a
 * restart addresses the same job and never creates a second one.
 * Environment versions are derived from the image the same way, and code
 * versions are the code archive's SHA-256, so registering either twice is a
 * no-op.
 *
 * Ownership: struct aj_aml_job owns its strings (aj_aml_job_release); ids
 * handed out are the caller's (aj_free). The ARM client is borrowed.
 */
#ifndef AJ_AZURE_AML_H
#define AJ_AZURE_AML_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "core/buf.h"

struct aj_arm;
struct aj_errors;
struct aj_strlist;
struct aj_vc;

#define AJ_AML_API_VERSION "2024-04-01"
#define AJ_AML_VC_API_VERSION "2021-03-01-preview"
#define AJ_AML_GRAPH_API_VERSION "2021-03-01"
#define AJ_AML_SUBSCRIPTIONS_API_VERSION "2022-12-01"
#define AJ_AML_IMAGES_API_VERSION "2020-12-01-preview"

struct aj_aml_workspace {
	const char *subscription;
	const char *resource_group;
	const char *name;
	const char *api_version;     /* NULL: AJ_AML_API_VERSION */
};

/* /subscriptions/S/resourceGroups/R/providers/Microsoft.MachineLearningServices/workspaces/W */
int aj_aml_workspace_id(const struct aj_aml_workspace *ws, struct aj_buf *out);
/* The ARM id of a virtual cluster. */
int aj_aml_vc_id(const char *subscription, const char *resource_group, const char *name,
		 struct aj_buf *out);

/*
 * The job name for a Kubernetes object: "k8s-<ns>-<name>-<8 hex of
 * sha256(uid)>", characters outside [A-Za-z0-9_-] as '-', the readable part
 * cut so the whole stays within AJ_AML_JOB_NAME_MAX.
 */
#define AJ_AML_JOB_NAME_MAX 120
int aj_aml_job_name(const char *ns, const char *name, const char *uid, struct aj_buf *out);

/* The environment version for an image: the first 16 hex digits of its SHA-256. */
int aj_aml_environment_version(const char *image, char out[17]);

/*
 * Make sure environment `name` has the version for `image` (GET, and PUT
 * {"image", "osType": "Linux"} when it is absent); *id gets its ARM id.
 */
int aj_aml_environment_ensure(struct aj_arm *a, const struct aj_aml_workspace *ws,
			      const char *name, const char *image, char **id,
			      struct aj_errors *err);

/*
 * Make sure datastore `name` exists (GET, and PUT an AzureBlob datastore on
 * account/container without stored credentials when it is absent: the job's
 * identity reaches the storage).
 */
int aj_aml_datastore_ensure(struct aj_arm *a, const struct aj_aml_workspace *ws,
			    const char *name, const char *account, const char *container,
			    struct aj_errors *err);

/*
 * A blob datastore: where its files live. The default one of a workspace
 * (workspaceblobstore) holds uploaded code.
 */
struct aj_aml_datastore {
	char *name;
	char *account;
	char *container;
	char *endpoint;       /* storage suffix: "core.windows.net" when absent */
};

void aj_aml_datastore_release(struct aj_aml_datastore *d);

/*
 * Read datastore `name` (NULL: the workspace's default, from the list with
 * isDefault=true, else workspaceblobstore). Only AzureBlob datastores
 * qualify. 0, 1 when there is none (err says so), -1.
 */
int aj_aml_datastore_get(struct aj_arm *a, const struct aj_aml_workspace *ws,
			 const char *name, struct aj_aml_datastore *out, struct aj_errors *err);

/* https://{account}.blob.{endpoint}/{container}[/{path}] */
int aj_aml_datastore_url(const struct aj_aml_datastore *d, const char *path,
			 struct aj_buf *out);

/*
 * Make sure code `name` has `version` (GET, and PUT {"codeUri"} when it is
 * absent; an existing version is kept as it is: versions are immutable and
 * content-addressed). *id gets its ARM id, the job body's codeId.
 */
int aj_aml_code_ensure(struct aj_arm *a, const struct aj_aml_workspace *ws,
		       const char *name, const char *version, const char *code_uri,
		       char **id, struct aj_errors *err);

/* What the forwarder reads from a job resource. */
struct aj_aml_job {
	char *name;
	char *status;         /* properties.status; NULL when absent */
	char *portal_url;     /* properties.services.Studio.endpoint */
	char *compute_id;
	char *instance_type;  /* properties.resources.instanceType */
	char *tier;           /* ...resources.properties.AISuperComputer.slaTier */
	char *task;           /* properties.tags.k8s-task: the JobSpec task it runs */
	long long instances;  /* properties.resources.instanceCount; 0: not said */
};

void aj_aml_job_release(struct aj_aml_job *j);
int aj_aml_job_read(const cJSON *resource, struct aj_aml_job *out);

/* Where a job status stands. */
enum aj_aml_state {
	AJ_AML_QUEUED,       /* NotStarted .. Queued, and unknown values */
	AJ_AML_RUNNING,      /* Running, Finalizing, CancelRequested, NotResponding, Paused */
	AJ_AML_COMPLETED,
	AJ_AML_FAILED,
	AJ_AML_CANCELED
};

enum aj_aml_state aj_aml_state_of(const char *status);
int aj_aml_state_terminal(enum aj_aml_state s);

/*
 * PUT the job. 0 with *out filled (*created: 1 for 201, 0 for 200);
 * -1 otherwise, *http_status telling a refusal (4xx) from a failure.
 */
int aj_aml_job_put(struct aj_arm *a, const struct aj_aml_workspace *ws, const char *name,
		   const cJSON *body, struct aj_aml_job *out, int *created,
		   long *http_status, struct aj_errors *err);
/* GET the job: 0 found, 1 not found, -1 failed. */
int aj_aml_job_get(struct aj_arm *a, const struct aj_aml_workspace *ws, const char *name,
		   struct aj_aml_job *out, struct aj_errors *err);
/* POST cancel (without waiting for it to finish): 0 accepted, 1 not found, -1 failed. */
int aj_aml_job_cancel(struct aj_arm *a, const struct aj_aml_workspace *ws, const char *name,
		      struct aj_errors *err);

/*
 * Every compute of the workspace (GET .../computes, its nextLink pages
 * followed) into *value, an array of the resources as ARM returns them
 * (the caller's to free). 0, -1 with err and *http_status (0: no answer
 * came: the endpoint unreachable).
 */
int aj_aml_computes(struct aj_arm *a, const struct aj_aml_workspace *ws, cJSON **value,
		    long *http_status, struct aj_errors *err);

/* Enabled subscriptions the credential sees, appended to out. */
int aj_aml_subscriptions(struct aj_arm *a, struct aj_strlist *out, struct aj_errors *err);

/*
 * Virtual clusters in subscriptions (Resource Graph), appended to
 * *vcs / *nr with their coordinates only (quotas empty).
 */
int aj_aml_vc_discover(struct aj_arm *a, const struct aj_strlist *subscriptions,
		       struct aj_vc **vcs, size_t *nr, struct aj_errors *err);
/* Fill vc's quotas from its resource: 0, 1 when the VC does not exist, -1. */
int aj_aml_vc_quotas(struct aj_arm *a, struct aj_vc *vc, struct aj_errors *err);
/*
 * The VCs in subscription sub (NULL: every one the credential sees) that
 * keep() accepts (NULL: all), with their quotas, appended to *vcs / *nr.
 * A VC whose quotas cannot be read is kept with none and told to
 * unread() (may be NULL). 0, -1 with err and *http_status (0: no answer).
 */
int aj_aml_vcs_read(struct aj_arm *a, const char *sub,
		    int (*keep)(const void *ctx, const struct aj_vc *vc),
		    void (*unread)(const void *ctx, const struct aj_vc *vc, const struct aj_errors *why),
		    const void *ctx, struct aj_vc **vcs, size_t *nr, long *http_status,
		    struct aj_errors *err);
/* Release and free an array of VCs. */
void aj_aml_vcs_free(struct aj_vc *vcs, size_t nr);

#endif
