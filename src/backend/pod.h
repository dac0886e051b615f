/*
 * pod.h - the pod template that the cluster backends share.
 *
 * Volcano (volcano.c) and the plain Kubernetes Job (kube.c) run the same
 * pods: the script (rank, storage mounts, code copy or download, setup,
 * command), the rank variables of docs/rank-contract.md, resources,
 * tolerations, /dev/shm, scratch, capabilities and the shared volume. What
 * differs between them is the shape below. The builder lives in volcano.c
 * beside the Volcano Job that uses it per task.
 *
 * Pure, like every backend. Ownership: *out is the caller's (cJSON_Delete).
 */
#ifndef AJ_BACKEND_POD_H
#define AJ_BACKEND_POD_H

#include <cjson/cJSON.h>

#include "backend.h"


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

#endif
