/*
 * backend.h - the one small interface every backend implements.
 *
 * A backend turns a JobSpec into the objects its target accepts: Kubernetes
 * objects for volcano, Azure ML REST bodies for aml and sing. Backends are
 * rows in one table (backend.c), so adding one is one file plus one row.
 * Everything here is pure: no I/O, no clock, no randomness.
 *
 * Ownership: build() hands the caller a cJSON array (cJSON_Delete).
 */
#ifndef AJ_BACKEND_H
#define AJ_BACKEND_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct aj_errors;
struct aj_jobspec;
struct aj_kvlist;
struct aj_node;
struct aj_schema;
struct aj_target;

/* What the caller knows about the job being built. */
struct aj_build_ctx {
	const char *job_name;     /* stable object name (AjJob name) */
	const char *namespace_;   /* Kubernetes namespace of the AjJob, or NULL */
	const char *owner_uid;    /* AjJob uid for ownerReferences, or NULL */
	const char *owner_name;   /* AjJob name for ownerReferences, or NULL */
	/* AjJob apiVersion ("<group>/<version>"); required with owner_uid */
	const char *owner_api_version;
	/* only shown, never created: the code digest may be the placeholder */
	int preview;
};

/* Where a backend's objects go once the controller has the AjJob. */
enum aj_backend_target {
	AJ_TARGET_CLUSTER,        /* created beside the AjJob, in its namespace */
	AJ_TARGET_AZURE           /* forwarded to Azure ML (the controller's Azure identity) */
};

/* How a job's code reaches it; the CLI sends it before the AjJob exists. */
enum aj_code_route {
	AJ_CODE_NONE,             /* the job takes no code */
	AJ_CODE_VOLUME,           /* unpacked into the shared volume by a helper pod (codeship.h) */
	AJ_CODE_BLOB,             /* the archive as one blob the pods download (codeship.h) */
	AJ_CODE_DATASTORE         /* the files in the workspace's datastore, an Azure ML code version */
};

/*
 * One backend. The pipeline (src/pipeline/pipeline.h) calls prepare, then
 * validate, then build; the CLI asks target and code_route what it must do
 * before the AjJob exists instead of comparing names.
 */
struct aj_backend {
	const char *name;         /* target.service */
	enum aj_backend_target target;
	enum aj_code_route (*code_route)(const struct aj_jobspec *spec);
	/*
	 * Where under _extra the backend reads heterogeneous task declarations
	 * ("volcano.tasks"), or NULL: declaring them makes a job heterogeneous.
	 */
	const char *tasks_key;
	/*
	 * The parts of _extra the backend reads, each a key table (schema.h)
	 * rooted at "_extra.<part>"; NULL-terminated, or NULL for none. Their
	 * unknown keys are errors (aj_backend_check); the other parts
	 * of _extra are not this backend's business.
	 */
	const struct aj_schema *const *extra;
	/*
	 * Read what the backend owns of spec->extra into the spec (volcano:
	 * the heterogeneous tasks). NULL when there is nothing. Collects every
	 * problem; -1 if any (spec stays releasable).
	 */
	int (*prepare)(struct aj_jobspec *spec, struct aj_errors *err);
	/*
	 * Check the backend's typed options and everything it reads from
	 * spec->extra. Collects every problem; -1 if any. Error paths name
	 * config keys ("config.target.queue"): the pipeline adds the position.
	 */
	int (*validate)(const struct aj_jobspec *spec, struct aj_errors *err);
	/*
	 * Build the objects of a validated spec into a new cJSON array *out;
	 * fails only for what validate cannot know (ctx: object names).
	 */
	int (*build)(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
		     cJSON **out, struct aj_errors *err);
	/*
	 * The pod annotation that holds a pod's rank within its task (aj logs,
	 * aj status); NULL for a backend whose jobs run outside the cluster.
	 * Every cluster backend's pods carry the labels aj.dev/ajjob (the
	 * AjJob's name) and aj.dev/task.
	 */
	const char *rank_annotation;
};

/* The backend for a service name ("aml", "sing", "volcano"; any case), or NULL. */
const struct aj_backend *aj_backend_find(const char *service);
/* The table, NULL-terminated, for listing. */
const struct aj_backend *const *aj_backend_all(void);

/*
 * The parts of _extra that any row lists, each once, in the table's order,
 * into out[0..max). Returns how many there are (more than max: some left
 * out).
 */
size_t aj_backend_extra_parts(const struct aj_schema **out, size_t max);

/*
 * Report every unknown key in the parts of `extra` (a config's _extra) that
 * parts[0..nr) list (NULL-terminated when shorter), at its position, with
 * "did you mean" when a key is near. 0 / -1.
 */
int aj_backend_check_parts(const struct aj_schema *const *parts, size_t nr,
			   const struct aj_node *extra, struct aj_errors *err);

/*
 * Everything b checks of a converted spec, as the pipeline runs it: prepare
 * (when b has one), the unknown keys of the parts of spec->extra that the
 * row lists (b->extra, aj_backend_check_parts), and validate. All run, so every problem is reported. 0 / -1.
 */
int aj_backend_check(const struct aj_backend *b, struct aj_jobspec *spec, struct aj_errors *err);

/*
 * The code digest that aj render and aj run --dry-run show unless --digest
 * asks them to archive the tree. Not hex, so the Volcano builder refuses it
 * unless aj_build_ctx.preview is set: an AjJob carrying it never runs.
 */
#define AJ_CODE_DIGEST_PLACEHOLDER "<not computed: use --digest>"

/*
 * Security rule of the controller: a job may add Linux capabilities or
 * mount storage (blobfuse2 pods run privileged for /dev/fuse) only in a
 * namespace the controller permits, so creating an AjJob never grants more
 * than creating the pods directly. `permitted` is a comma-separated list of
 * namespaces, "*" for all; NULL or empty permits none. Pure; every
 * refusal names the template key, the namespace and the controller
 * setting. 0 / -1.
 */
int aj_backend_permit(const struct aj_jobspec *spec, const char *ns,
		      const char *permitted, struct aj_errors *err);

/*
 * Check a permitted-namespace list as written in the controller's
 * configuration: entries are namespace names or "*". 0 / -1.
 */
int aj_backend_permit_list_check(const char *permitted, struct aj_errors *err);

#endif
