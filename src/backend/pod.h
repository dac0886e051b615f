/*
 * pod.h - the pod template that the cluster backends share.
 *
 * Volcano (volcano.c) and the plain Kubernetes Job (kube.c) run the same
 * pods: the script (rank, storage mounts, code copy or download, setup,
 * command), the rank variables of docs/rank-contract.md, resources,
 * tolerations, /dev/shm, scratch, capabilities and the shared volume. What
 * differs between them is the shape below. pod.c holds the checks and the
 * builder; volcano.c builds one template per task of its gang
 * (aj_pod_build_init, aj_pod_roles, aj_pod_add), kube.c the one of its Job
 * (aj_pod_template).
 *
 * Pure, like every backend. Ownership: *out is the caller's (cJSON_Delete);
 * a struct aj_pod_build owns its *_store members until aj_pod_build_release.
 */
#ifndef AJ_BACKEND_POD_H
#define AJ_BACKEND_POD_H

#include <cjson/cJSON.h>

#include <stddef.h>

#include "backend.h"
#include "codeship.h"
#include "core/buf.h"
#include "core/strlist.h"
#include "storage_secret.h"

/* A label value, a DNS label, a pod's name: at most this many characters. */
#define AJ_POD_LABEL_MAX 63

/* How one backend's pods find each other and get scheduled. */
struct aj_pod_shape {
	const char *name;         /* "Volcano", "Kubernetes": for messages */
	const char *scheduler;    /* spec.schedulerName, or NULL: the cluster's default */
	/* the variable holding a pod's index in its task (the script adds the task's offset) */
	const char *index_var;
	/* a label that the workload controller sets to the job name on every pod (anti-affinity) */
	const char *peer_label;
	const char *master_addr;  /* MASTER_ADDR unless submit_args.env sets it */
};

/*
 * The checks every pod template needs: the image, container_args (scratch,
 * capabilities), the shared volume, config.storage, _extra.code_upload and
 * target names (namespace, queue, priority class, labels). Collects every
 * problem; -1 if any.
 */
int aj_pod_validate(const struct aj_jobspec *spec, const char *service, struct aj_errors *err);

/*
 * The pod template ({metadata, spec}) of a homogeneous job as one task named
 * `task` of spec->nodes pods, ranks 0 .. nodes - 1 from shape->index_var,
 * for a spec that aj_pod_validate() accepted. Checks the code digest and
 * the kernel's exec limits as the Volcano build does. 0 / -1.
 */
int aj_pod_template(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
		    const struct aj_pod_shape *shape, const char *task, cJSON **out,
		    struct aj_errors *err);

/* One task as built: a JobSpec task, or half of the homogeneous one. */
struct aj_pod_role {
	const char *name;
	int replicas;
	int offset;               /* node rank of its first pod */
	int cpus;                 /* AJ_UNSET: none requested */
	const char *memory;       /* NULL: none requested */
	int gpus;
	int rdma;
	int ppn;
	const struct aj_task *task;
};

/* One build of pod templates: what every pod of the job shares. */
struct aj_pod_build {
	const struct aj_jobspec *spec;
	const struct aj_pod_shape *shape;
	const char *job;
	const char *shm;          /* normalised shm size, or NULL */
	const struct aj_strlist *caps;
	const char *digest;       /* code to copy from the shared volume or download, or NULL */
	const struct aj_code_blob *blob;  /* the code comes from a blob, or NULL */
	int has_volume;
	char secret[AJ_STORAGE_SECRET_SIZE];  /* the storage Secret, when storage or a blob is used */
	struct aj_code_volume volume;
	int total_pods;
	long long world_size;
	struct aj_errors *err;
	int too_big;              /* an exec limit was passed (reported once) */
	int oom;
	/* owned by aj_pod_build_init, released by aj_pod_build_release */
	struct aj_strlist caps_store;
	struct aj_buf shm_store;
	struct aj_code_blob blob_store;
};

/*
 * What every pod build needs before the objects: the context, the code
 * digest and how it travels, the container, code and storage checks,
 * capabilities and the shared-memory size. bd is released by
 * aj_pod_build_release() whatever this returns. 0 / -1.
 */
int aj_pod_build_init(struct aj_pod_build *bd, const struct aj_jobspec *spec,
		      const struct aj_build_ctx *ctx, const struct aj_pod_shape *shape,
		      struct aj_errors *err);
void aj_pod_build_release(struct aj_pod_build *bd);
/* The tasks to build, in order, with node-rank offsets (r: room for tasks_nr + 1). 0 / -1. */
int aj_pod_roles(const struct aj_jobspec *spec, struct aj_pod_role *r, size_t *nr);
/* The pod template of role r into tmpl ({metadata, spec}); bd->oom, bd->too_big say how it went. */
void aj_pod_add(struct aj_pod_build *bd, cJSON *tmpl, const struct aj_pod_role *r);

#endif
