/*
 * codeship.h - how the code of `aj run` reaches the pods of a cluster
 * backend (volcano, and any backend whose pods run a job script alike):
 * through the shared volume, unpacked there by a helper pod the CLI starts,
 * or as one blob the pods download. The CLI sends (cli_code_upload.c,
 * cli_code_blob.c), the controller writes the blob's read URL into the
 * storage Secret (storage_secret.h), the builder mounts and runs what is
 * here. Pure.
 *
 * Ownership: strings in struct aj_code_volume and struct aj_code_blob point
 * into the spec; aj_code_helper_pod() returns a new object (cJSON_Delete).
 */
#ifndef AJ_CODESHIP_H
#define AJ_CODESHIP_H

#include <cjson/cJSON.h>

#include "backend.h"

struct aj_buf;
struct aj_errors;
struct aj_jobspec;
struct aj_schema;

/*
 * The shared volume: the PersistentVolumeClaim named by
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

/* The keys of _extra.code_upload (schema.h), named in the rows of the backends that ship code. */
extern const struct aj_schema aj_codeship_schema;

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

/* Is s 64 lowercase hexadecimal digits (a SHA-256 as aj writes it)? */
int aj_sha256_hex(const char *s);

/* The route of the code for a cluster backend: volume, blob or none. */
enum aj_code_route aj_codeship_route(const struct aj_jobspec *spec);

/*
 * Check _extra.code_upload.strategy and the shared volume's variables (a
 * claim name, an absolute mount that overlaps neither /dev/shm nor
 * AJ_WORK_DIR). Collects every problem; 0 / -1.
 */
int aj_codeship_check(const struct aj_jobspec *spec, struct aj_errors *err);

/*
 * Append the job script's code step for `digest`: download and check the
 * blob (blob non-NULL, from aj_code_blob()) or copy it from the shared
 * volume, then cd into AJ_WORK_DIR; nothing without a shared volume or
 * blob. 0 / -1 (out of memory).
 */
int aj_codeship_script(struct aj_buf *b, const struct aj_jobspec *spec, const char *digest,
		       const struct aj_code_blob *blob);

#endif
