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

struct aj_buf;
struct aj_errors;
struct aj_jobspec;
struct aj_kvlist;
struct aj_strlist;
struct aj_target;
struct aj_task;

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
};

/* The backend for a service name ("aml", "sing", "volcano"), or NULL. */
const struct aj_backend *aj_backend_find(const char *service);
/* The table, NULL-terminated, for listing. */
const struct aj_backend *const *aj_backend_all(void);

/*
 * Shared by the backends: the one shell quoting function, and the tail of
 * every job script. User text reaches a shell only through these.
 */

/* Append s as one single-quoted shell word (' becomes '\''). 0 / -1. */
int aj_shell_quote(struct aj_buf *b, const char *s);

/*
 * Is s a DNS-1123 label of at most max bytes (lowercase alphanumerics and
 * '-', alphanumeric at both ends)? Kubernetes object names built from a job
 * name must be.
 */
int aj_dns_label(const char *s, size_t max);

/*
 * Volcano's shared volume: the PersistentVolumeClaim named by
 * AMLT_PERSISTENT_VOLUME_NAME in the first job's submit_args.env, mounted at
 * AMLT_PERSISTENT_VOLUME_MOUNT_DIR. Code goes through it only when both are
 * set: an archive with digest D is unpacked into
 * <mount_dir>/AJ_CODE_STORE/D, which the job's pods copy into AJ_WORK_DIR.
 */
#define AJ_PVC_NAME_VAR "AMLT_PERSISTENT_VOLUME_NAME"
#define AJ_PVC_DIR_VAR "AMLT_PERSISTENT_VOLUME_MOUNT_DIR"
#define AJ_CODE_STORE ".aj-code"
#define AJ_WORK_DIR "/aj/code"

struct aj_code_volume {
	const char *pvc;          /* claim name */
	const char *mount_dir;    /* absolute path inside the pods */
};

/* Fill v (pointing into spec) and return 1 when both variables are set; else 0. */
int aj_code_volume(const struct aj_jobspec *spec, struct aj_code_volume *v);

/*
 * Does the code go through the shared volume? Both variables set and
 * _extra.code_upload.strategy absent or "kubectl-exec" (the seed's default;
 * "blob" ships it another way). Fills v like aj_code_volume. 1 / 0.
 */
int aj_code_via_volume(const struct aj_jobspec *spec, struct aj_code_volume *v);
/* Does _extra.code_upload.strategy choose "blob"? 1 / 0. */
int aj_code_via_blob(const struct aj_jobspec *spec);

/*
 * The code digest that aj render and aj run --dry-run show unless --digest
 * asks them to archive the tree. Not hex, so the Volcano builder refuses it
 * unless aj_build_ctx.preview is set: an AjJob carrying it never runs.
 */
#define AJ_CODE_DIGEST_PLACEHOLDER "<not computed: use --digest>"

/*
 * The helper pod that receives code into the shared volume: the job's
 * image with the claim at its mount point, idling until deleted (at most
 * AJ_CODE_HELPER_DEADLINE seconds), no privileges. NULL when out of memory
 * or when spec names no shared volume.
 */
#define AJ_CODE_HELPER_DEADLINE 3600
cJSON *aj_code_helper_pod(const struct aj_jobspec *spec, const char *name, const char *ns);

/*
 * Shell scripts run in the helper pod as `sh -c SCRIPT aj ARGS...`, so no
 * value is ever spliced into them. Check: args STORE DIGEST; exit 0 when
 * STORE/DIGEST exists. Receive: args STORE DIGEST SIZE; reads exactly SIZE
 * bytes of archive from stdin into a temporary directory in STORE, checks
 * their SHA-256 against DIGEST (exit 3 and nothing kept on a mismatch,
 * including a short read), unpacks them and renames the result to
 * STORE/DIGEST, the only step that makes an upload visible. Stale
 * temporaries of interrupted uploads older than a day are removed.
 */
extern const char aj_code_check_script[];
extern const char aj_code_receive_script[];

/*
 * Storage mounts and blob-shipped code on Volcano. The controller writes one
 * Secret per job, named <Volcano Job name> AJ_STORAGE_SECRET_SUFFIX and owned
 * by the AjJob: for each config.storage entry NAME the blobfuse2
 * configuration (with a SAS for that container) under key
 * NAME AJ_STORAGE_KEY_SUFFIX, and for the blob code strategy the archive's
 * read URL (with a SAS for that blob) under AJ_CODE_URL_KEY. Pods mount the
 * Secret whole at AJ_STORAGE_SECRET_DIR, never by subPath, so a renewed SAS
 * reaches running pods. Each storage entry caches in
 * AJ_STORAGE_CACHE_DIR/NAME, an emptyDir.
 */
#define AJ_STORAGE_SECRET_SUFFIX "-storage"
/* The longest Secret name aj writes, and its NUL. */
#define AJ_STORAGE_SECRET_SIZE 96
/* The storage Secret of Volcano Job `job` into out: 0, or -1 when too long. */
int aj_storage_secret_name(const char *job, char out[AJ_STORAGE_SECRET_SIZE]);
#define AJ_STORAGE_SECRET_DIR "/aj/secret"
#define AJ_STORAGE_CACHE_DIR "/aj/blobfuse"
#define AJ_STORAGE_KEY_SUFFIX ".yaml"
#define AJ_CODE_URL_KEY "code-url"

/* _extra.code_upload.blob as read by aj_code_blob(); strings point into the spec. */
struct aj_code_blob {
	const char *account;          /* storage_account (required) */
	const char *container;        /* container (required) */
	const char *upload_dir;       /* upload_dir, default "aj-code" */
	int sas_expiry_days;          /* 1..7 (a user delegation key's limit), default 1 */
	int pod_download_retries;     /* retries after the first attempt, 0..100, default 5 */
};

/*
 * Does the code travel as a blob (_extra.code_upload.strategy: blob)? 1 with
 * *b filled and checked; 0 for the other strategies; -1 with every problem
 * in err, keys named config._extra.code_upload.blob.<key>.
 */
int aj_code_blob(const struct aj_jobspec *spec, struct aj_code_blob *b, struct aj_errors *err);

/* The archive's blob name in its container: <upload_dir>/<digest>.tar.gz. 0 / -1. */
int aj_code_blob_name(const struct aj_code_blob *b, const char *digest, struct aj_buf *out);

/* Azure's rules: account 3-24 lowercase letters and digits. */
int aj_storage_account_name(const char *s);
/* Container 3-63 lowercase letters, digits and single '-', alphanumeric ends. */
int aj_storage_container_name(const char *s);

/* Is s 64 lowercase hexadecimal digits (a SHA-256 as aj writes it)? */
int aj_sha256_hex(const char *s);

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

/* Append each line followed by a newline. 0 / -1. */
int aj_shell_add_lines(struct aj_buf *b, const struct aj_strlist *lines);

/*
 * Append what a task runs after setup: jobs[0].command lines, then the task's
 * own command lines, or the user command: with by_argv, `"$@"` (the
 * arguments travel as separate argv items after the script, never through
 * the shell's parser), otherwise every argument quoted. 0 / -1.
 */
int aj_shell_add_command(struct aj_buf *b, const struct aj_jobspec *spec,
			 const struct aj_task *task, int by_argv);

/*
 * Kubernetes expands $(VAR) and turns $$ into $ in a container's command,
 * args and env values before anything runs: append s with every $ doubled,
 * so what runs is s byte for byte. 0 / -1.
 */
int aj_kubelet_escape(struct aj_buf *b, const char *s);

/*
 * The kernel's limits on what exec() takes: one argument or environment
 * string (MAX_ARG_STRLEN, with its NUL) and all of them together with their
 * pointers (ARG_MAX with the usual 8 MiB stack).
 */
#define AJ_ARG_STRLEN_MAX (128u * 1024u)
#define AJ_ARG_TOTAL_MAX (2u * 1024u * 1024u)

/* The largest object the API server stores (etcd's default request limit). */
#define AJ_REQUEST_MAX (1536u * 1024u)

/*
 * The API server refuses an object over AJ_REQUEST_MAX whatever is retried:
 * say so before the create, naming the object (`what`, "Volcano Job"). 1 when
 * over (reported), 0 when it fits; out of memory counts as fitting (the
 * caller reports it).
 */
int aj_request_over_limit(const cJSON *obj, const char *what, struct aj_errors *err);

/*
 * cJSON builders that remember running out of memory in *oom, so a backend
 * can build a whole body and check once. A NULL parent (an earlier failure)
 * is a no-op; with an array parent the key is ignored. The new container is
 * returned (NULL on failure).
 */
cJSON *aj_body_add_object(cJSON *parent, const char *key, int *oom);
cJSON *aj_body_add_array(cJSON *parent, const char *key, int *oom);
void aj_body_add_string(cJSON *parent, const char *key, const char *value, int *oom);
void aj_body_add_int(cJSON *parent, const char *key, long long value, int *oom);
void aj_body_add_bool(cJSON *parent, const char *key, int value, int *oom);
/* Each label of kv into the labels object. */
void aj_body_add_labels(cJSON *labels, const struct aj_kvlist *kv, int *oom);
/* metadata.ownerReferences: the AjJob (apiVersion, name, uid) as the controlling owner. */
void aj_body_add_owner(cJSON *meta, const char *api_version, const char *name, const char *uid,
		       int *oom);
/*
 * The metadata of an object aj creates for ctx's job: name, the namespace
 * (ctx's, else target.namespace), target.labels and app: <name>, and the
 * AjJob as its controlling owner when ctx names one. Returns the labels
 * object, for more.
 */
cJSON *aj_body_add_metadata(cJSON *obj, const char *name, const struct aj_target *t,
			    const struct aj_build_ctx *ctx, int *oom);

#endif
