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

#include <cjson/cJSON.h>

struct aj_errors;
struct aj_jobspec;

/* What the caller knows about the job being built. */
struct aj_build_ctx {
	const char *job_name;     /* stable object name (AjJob name) */
	const char *namespace_;   /* Kubernetes namespace of the AjJob, or NULL */
	const char *owner_uid;    /* AjJob uid for ownerReferences, or NULL */
	const char *owner_name;   /* AjJob name for ownerReferences, or NULL */
};

struct aj_backend {
	const char *name;
	/*
	 * Check the backend's typed options and everything it will read from
	 * spec->extra; fill backend-owned parts of the spec (tasks). Collects
	 * every problem; -1 if any.
	 */
	int (*validate)(struct aj_jobspec *spec, struct aj_errors *err);
	/* Build the objects into a new cJSON array *out. */
	int (*build)(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
		     cJSON **out, struct aj_errors *err);
};

/* The backend for a service name ("aml", "sing", "volcano"), or NULL. */
const struct aj_backend *aj_backend_find(const char *service);
/* The table, NULL-terminated, for listing. */
const struct aj_backend *const *aj_backend_all(void);

#endif
