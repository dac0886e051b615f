/*
 * kube.h - the kube runner (runner.h): an AjJob becomes a batch/v1 Indexed Job and its headless
 * Service (src/backend/kube.c), both owned by the AjJob. The controller
 * watches the Job and follows its conditions and counts through the AjJob
 * state machine:
 *
 *   no condition, no pod ready   Submitted (KubeJobPending)
 *   Suspended                    Submitted + Suspended; with Kueue's queue label
 *                                also Unschedulable with Kueue's reason (its
 *                                Workload's QuotaReserved or Admitted condition)
 *   unsuspended by Kueue         as below, the message naming the ClusterQueue
 *                                that admitted it, up to the first Running
 *   a pod ready or succeeded     Running
 *   FailureTarget                as before (KubeJobFailing: its pods are stopping)
 *   Complete                     Succeeded
 *   Failed                       Failed, with the Job's reason and message
 *                                (PodFailurePolicy names the pod, index and exit code)
 *
 * Cancel deletes the Job with Foreground propagation (its pods first); the
 * Service stays until the AjJob goes (garbage collector).
 */
#ifndef AJ_RUNNER_KUBE_H
#define AJ_RUNNER_KUBE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "runner.h"

extern const struct aj_runner aj_runner_kube;

/* Its need besides the Failed condition's (AJ_NEED_RUNNER): what Kueue says of the Job. */
#define AJ_KUBE_NEED_KUEUE (AJ_NEED_RUNNER << 1)

/*
 * What Kueue says of a Job, from the WorkloadList of its Workload (NULL or
 * empty: no Kueue, or no Workload yet) into s, with AJ_KUBE_NEED_KUEUE in
 * s->have: admitted (QuotaReserved and Admitted True): s->admitted_to, the
 * ClusterQueue; else s->reason, "Reason: message" of the condition that
 * says why not (Evicted of a deactivated Workload, else QuotaReserved
 * False, else Admitted False, else Evicted True) in text, cut to size;
 * else both NULL. Pure.
 *
 * Ownership: s->admitted_to points into the list, s->reason into text.
 */
void aj_kube_workload_seen(const cJSON *workloads_list, struct aj_seen *s, char *text,
			   size_t size);

#endif
