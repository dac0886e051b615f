/*
 * azure_forward.h - the Azure ML side of forwarding aml and sing AjJobs:
 * the forwarder's configuration (default workspace, namespace rules,
 * endpoint, identity, poll interval) and the calls one reconcile makes for
 * one AjJob. What is decided from their answers, and when, is the azure
 * runner's (azure.h).
 *
 * The calls (struct aj_azure_call, one per AjJob and reconcile, with its
 * own ARM client; all share one token cache):
 *   - the workspace: the target's workspace_name in the default workspace
 *     while submitting; afterwards status.azure.workspace, else the
 *     annotation aj.dev/azure-workspace written before submission, else
 *     the default;
 *   - the job name: status.azure.jobName, else derived from namespace, name
 *     and uid (aml.h), so a job already there under it is adopted;
 *   - GET and cancel of the job;
 *   - the submission: the image registered as an environment version, the
 *     code `aj run` uploaded registered as a code version, each storage
 *     mount's datastore created when missing, the compute (the AML
 *     target.name, or the Singularity VC named or chosen by vcselect.h
 *     among the allowed VCs from their quotas), tags naming the AjJob, and
 *     the body the backend built PUT.
 *
 * Permissions: the namespace rules (`allow`) read
 *   NS=ENTRY[,ENTRY...][;NS=...]   ENTRY: workspace:SUB/RG/NAME | vc:SUB/RG/NAME
 * where any part may be "*" (NS "*" applies to namespaces without their own
 * rule). A namespace without a rule forwards nothing.
 *
 * Identity: the credential chain of credential.h from the standard
 * environment (AZURE_CLIENT_ID, AZURE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE
 * for workload identity; AZURE_POD_IDENTITY_AUTHORITY_HOST to point IMDS
 * elsewhere); identity_client_id selects a user-assigned managed identity.
 *
 * Threads: the forwarder is read only once made, shared by the workers; a
 * call belongs to one worker.
 *
 * Ownership: a call points at the forwarder and the AjJob view it was made
 * for (both outlive it) and owns everything else; strings and JSON it
 * returns are its own, valid until its next call of the same kind or its
 * free.
 */
#ifndef AJ_AZURE_FORWARD_H
#define AJ_AZURE_FORWARD_H

#include <cjson/cJSON.h>

struct aj_ajjob_view;
struct aj_aml_job;
struct aj_errors;
struct aj_jobspec;
struct aj_token_cache;

/* The annotation naming the workspace of a job about to be submitted. */
#define AJ_AZURE_WS_ANNOTATION "aj.dev/azure-workspace"

struct aj_azure_opts {
	const char *workspace;          /* SUB/RG/NAME; NULL: forwarding off */
	const char *allow;              /* namespace rules, see above */
	const char *arm_endpoint;       /* NULL: https://management.azure.com */
	const char *ca_file;            /* NULL: the system's */
	const char *identity_client_id; /* user-assigned managed identity */
	double poll_seconds;            /* 30 */
};

struct aj_azure_forwarder;

/* tokens: the controller's identity (identity.h), shared, not owned. */
int aj_azure_forwarder_new(const struct aj_azure_opts *o, struct aj_token_cache *tokens,
			   struct aj_azure_forwarder **out, struct aj_errors *err);
void aj_azure_forwarder_free(struct aj_azure_forwarder *f);

/*
 * May namespace ns use this workspace (vc 0) or virtual cluster (vc 1)?
 * The rules naming ns win over the "*" rules; parts compare case-insensitively.
 */
int aj_azure_allowed(const struct aj_azure_forwarder *f, const char *ns, int vc,
		     const char *sub, const char *rg, const char *name);
/* Seconds between polls of a job. */
double aj_azure_poll(const struct aj_azure_forwarder *f);

struct aj_place_workspace;
struct aj_views_azure;

/*
 * Placement's Azure view (place/read/azure.h) with the controller's
 * identity: the computes of each of the nr workspaces ws into parts, and
 * the VCs some namespace may use into parts[0], each judged only for the
 * namespaces the rules allow. Takes the forwarder (a runner
 * configuration). 0 / -1 (OOM).
 */
int aj_azure_read_views(const void *forwarder, const struct aj_place_workspace *ws, size_t nr,
			struct aj_views_azure *parts);
/* The default workspace (--azure-workspace) into out. */
void aj_azure_views_workspace(const void *forwarder, struct aj_place_workspace *out);

struct aj_azure_call;

/*
 * The calls for AjJob v (key: "ns/name", for logs); spec is its JobSpec
 * while submitting, else NULL. 0 / -1 (OOM).
 */
int aj_azure_call_new(const struct aj_azure_forwarder *f, const struct aj_ajjob_view *v,
		      const struct aj_jobspec *spec, const char *key,
		      struct aj_azure_call **out, struct aj_errors *err);
/* Takes a struct aj_azure_call (a scratch state's free, runner.h). */
void aj_azure_call_free(void *call);

/* The job's name, and its workspace's ARM id. */
const char *aj_azure_call_job(const struct aj_azure_call *c);
const char *aj_azure_call_workspace(const struct aj_azure_call *c);
/* Why the namespace may not use the workspace (a message), or NULL when it may. */
const char *aj_azure_call_forbidden(struct aj_azure_call *c);

/* GET the job: 0 found, 1 not there, -1 with err. */
int aj_azure_call_get(struct aj_azure_call *c, struct aj_errors *err);
/* The job as last read or PUT. */
const struct aj_aml_job *aj_azure_call_read(const struct aj_azure_call *c);
/* status.azure {jobName, portalUrl, virtualCluster, tier, instanceType, workspace}; NULL: OOM. */
const cJSON *aj_azure_call_detail(struct aj_azure_call *c);
/* POST cancel: 0 accepted, 1 not there, -1 with err. */
int aj_azure_call_cancel(struct aj_azure_call *c, struct aj_errors *err);

/*
 * Complete body (the backend's object; changed) and PUT it as the job. 0
 * submitted (the job read as from a GET; *created 1 when Azure made it
 * now); 1 when the AjJob cannot run, with *reason (CamelCase) and the
 * problems; -1 with err when trying again may help (or out of memory:
 * err->oom).
 */
int aj_azure_call_submit(struct aj_azure_call *c, const struct aj_jobspec *spec, cJSON *body,
			 int *created, const char **reason, struct aj_errors *problems,
			 struct aj_errors *err);

#endif
