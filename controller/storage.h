/*
 * storage.h - the Secret that lets a cluster job's pods reach Blob Storage.
 *
 * For a JobSpec with config.storage entries or the blob code strategy, the
 * controller writes the Secret backend.h describes (<job>-storage): per
 * storage entry a blobfuse2 configuration carrying a container SAS with
 * racwdl (a read-write mount), and for the code the archive's URL with a
 * read-only SAS on that one blob. Every SAS is a user-delegation SAS pinned
 * to AJ_SAS_VERSION, signed with a key that Get User Delegation Key returns
 * for the controller's own identity (scope storage.azure.com; one key per
 * account and write). Storage SAS live `lifetime` seconds, the code's
 * sas_expiry_days.
 *
 * The Secret is owned by the AjJob (so it goes with it) and written
 * idempotently: create, or, when it exists, a JSON patch whose first step
 * tests that the AjJob owns it. Once two thirds of the shortest lifetime
 * have passed (the renewal time this returns, which the reconciler notes
 * and asks to be woken for), the reconciler rewrites the Secret with fresh SAS; the kubelet updates the mounted files
 * and blobfuse2 reloads its configuration file (docs/volcano.md).
 *
 * Secrets: a SAS only ever goes into the Secret's data; errors, logs,
 * Events and the AjJob status name accounts, containers and causes only.
 *
 * Threads: one minter is shared by the workers (the token cache is
 * thread-safe; each call has its own blob client).
 *
 * Ownership: the minter copies its settings; the token cache is the
 * controller's (identity.h), shared with the Azure forwarder.
 */
#ifndef AJ_STORAGE_H
#define AJ_STORAGE_H

#include <time.h>

#include <cjson/cJSON.h>

struct aj_buf;
struct aj_code_blob;
struct aj_errors;
struct aj_jobspec;
struct aj_kube;
struct aj_sas_key;
struct aj_token_cache;

#define AJ_STORAGE_LIFETIME_DEFAULT 86400
/* the longest a user delegation key may live */
#define AJ_STORAGE_LIFETIME_MAX (7 * 86400)

struct aj_storage_opts {
	/* blob endpoint, {account} replaced by the account name; NULL: the default */
	const char *blob_endpoint;
	const char *ca_file;            /* NULL: the system's */
	long lifetime;                  /* storage SAS lifetime, seconds; 0: the default */
};

struct aj_storage_minter;

/* tokens: the controller's identity (identity.h), shared, not owned. 0 / -1 (bad settings or OOM, with err). */
int aj_storage_minter_new(const struct aj_storage_opts *o, struct aj_token_cache *tokens,
			  struct aj_storage_minter **out, struct aj_errors *err);
void aj_storage_minter_free(struct aj_storage_minter *m);

/* What the Secret belongs to. */
struct aj_storage_target {
	const char *key;           /* the AjJob's queue key, "ns/name" */
	const char *ns;
	const char *secret;        /* the Secret's name */
	const char *job;           /* the owned object's name (label app) */
	const char *owner_name;    /* the AjJob */
	const char *owner_uid;
	const char *owner_api_version;
};

#define AJ_STORAGE_OK 0
#define AJ_STORAGE_REJECTED 1  /* the AjJob is at fault (problems say why) */
#define AJ_STORAGE_RETRY 2     /* Azure or the API server failed (problems say why) */

/*
 * Write (or rewrite) the Secret for spec when it uses storage or blob code
 * (spec->code.digest with strategy blob). *renew: when
 * the Secret must be written again, 0 when spec needs none. The caller
 * remembers it (the AjJob's cache record holds it, so the minter keeps no
 * state per AjJob). -1 on OOM.
 */
int aj_storage_ensure(struct aj_storage_minter *m, struct aj_kube *k,
		      const struct aj_jobspec *spec, const struct aj_storage_target *t,
		      time_t *renew, struct aj_errors *problems);

/* --- pure parts (tests) --- */

/* The blobfuse2 configuration of one container mounted with sas. 0 / -1. */
int aj_storage_blobfuse_config(const char *account, const char *container,
			       const char *endpoint, const char *sas, struct aj_buf *out);

/* The inputs of one Secret. keys[i] signs for accounts[i]. */
struct aj_storage_secret_in {
	const struct aj_jobspec *spec;
	const struct aj_code_blob *blob;   /* with spec->code.digest, or NULL */
	const char *endpoint;              /* template, as in the options */
	long lifetime;                     /* storage SAS, seconds */
	time_t now;
	const char *const *accounts;
	const struct aj_sas_key *const *keys;
	size_t accounts_nr;
	const struct aj_storage_target *target;
};

/*
 * Build the Secret (metadata with owner, labels and the renewal time in an
 * annotation; stringData). *renew_at is when to write it again. 0 / -1.
 */
int aj_storage_secret(const struct aj_storage_secret_in *in, cJSON **out, time_t *renew_at,
		      struct aj_errors *err);

#endif
