/*
 * reconcile_azure.h - forwarding aml and sing AjJobs to Azure ML.
 *
 * Submission (the AjJob has no status yet; reconcile.c resolves and hands
 * over the JobSpec):
 *   1. the namespace must be allowed the workspace (and, for sing, the VC);
 *      otherwise the AjJob fails with reason Forbidden;
 *   2. the finalizer aj.dev/azure-job and the annotation
 *      aj.dev/azure-workspace are added before anything exists in Azure;
 *   3. the job name is derived from namespace, name and uid (aml.h); a job
 *      already there under that name is adopted, never submitted again;
 *   4. the image is registered as an environment version, each storage
 *      mount's datastore is created when missing, the compute is
 *      the AML compute target.name or the Singularity VC (named, or chosen
 *      by vcselect.h among the allowed VCs from their quotas), and the body
 *      the backend built is PUT with tags naming the AjJob;
 *   5. status: Submitted with status.azure {jobName, portalUrl,
 *      virtualCluster, tier, instanceType, workspace}.
 * Mirroring: the job is polled with GET; the AjJob phase follows it
 * (queued: Submitted, running: Running, Completed/Failed/Canceled: the
 * terminal phases). Polls come every poll_seconds, stretched to a tenth of
 * the time since the last change (at most 20 x poll_seconds), through the
 * work queue's delayed adds.
 * Cancel (aj.dev/cancel: "true") and deletion POST cancel; on deletion the
 * finalizer goes once Azure reports the job terminal or gone.
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
 * Threads: the forwarder is shared by the workers; each call uses its own
 * ARM client, all share one token cache.
 */
#ifndef AJ_RECONCILE_AZURE_H
#define AJ_RECONCILE_AZURE_H

struct aj_ajjob_view;
struct aj_errors;
struct aj_pipeline;
struct aj_kube;
struct aj_report;
struct aj_token_cache;
struct aj_workqueue;

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
int aj_azure_forwarder_new(const struct aj_azure_opts *o, struct aj_workqueue *queue,
			   struct aj_token_cache *tokens, struct aj_azure_forwarder **out,
			   struct aj_errors *err);
void aj_azure_forwarder_free(struct aj_azure_forwarder *f);

/*
 * May namespace ns use this workspace (vc 0) or virtual cluster (vc 1)?
 * The rules naming ns win over the "*" rules; parts compare case-insensitively.
 */
int aj_azure_allowed(const struct aj_azure_forwarder *f, const char *ns, int vc,
		     const char *sub, const char *rg, const char *name);

/* Services the forwarder serves: "aml", "sing". */
int aj_azure_serves(const char *service);
/* Is this AjJob the forwarder's (status from it, or its finalizer while deleting)? */
int aj_azure_claims(const struct aj_ajjob_view *v);

/*
 * Reconcile the AjJob of rep (its status and Events go through it): submit
 * it when pl (the AjJob loaded by the pipeline) is given, else mirror,
 * cancel or finalize. 0 when done (later polls are queued), -1 to retry with
 * backoff (err says why). Problems with the AjJob itself end in status.
 */
int aj_reconcile_azure(struct aj_azure_forwarder *f, struct aj_kube *k, struct aj_report *rep,
		       const struct aj_pipeline *pl, struct aj_errors *err);

#endif
