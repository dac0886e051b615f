/*
 * storage_secret.h - config.storage on cluster backends: blobfuse2 mounts
 * configured from one Secret per job, which also carries the blob code's
 * read URL (codeship.h). The controller writes the Secret
 * (controller/storage.c), the builder mounts it and runs the mounts. Pure.
 */
#ifndef AJ_STORAGE_SECRET_H
#define AJ_STORAGE_SECRET_H

struct aj_buf;
struct aj_errors;
struct aj_jobspec;

/*
 * Storage mounts and blob-shipped code on cluster backends. The controller writes one
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

/* Azure's rules: account 3-24 lowercase letters and digits. */
int aj_storage_account_name(const char *s);
/* Container 3-63 lowercase letters, digits and single '-', alphanumeric ends. */
int aj_storage_container_name(const char *s);

/*
 * Check each storage entry: its name (a Secret key and a directory), the
 * Azure account and container names, and a clean absolute mount_dir that
 * overlaps neither /dev/shm, aj's own /aj, the shared volume nor another
 * entry. Collects every problem; 0 / -1.
 */
int aj_storage_secret_check(const struct aj_jobspec *spec, struct aj_errors *err);

/*
 * Append the job script's mounts: each entry with blobfuse2 (configuration
 * from the Secret, cache in AJ_STORAGE_CACHE_DIR), waiting until the kernel
 * shows it; a failed mount stops the pod. 0 / -1 (out of memory).
 */
int aj_storage_secret_script(struct aj_buf *b, const struct aj_jobspec *spec);

#endif
