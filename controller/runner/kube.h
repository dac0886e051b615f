/*
 * kube.h - the kube runner (runner.h): an AjJob becomes a batch/v1 Indexed Job and its headless
 * Service (src/backend/kube.c), both owned by the AjJob. The controller
 * watches the Job and follows its conditions and counts through the AjJob
 * state machine:
 *
 *   no condition, no pod ready   Submitted (KubeJobPending)
 *   Suspended                    Submitted + Suspended (waiting for Kueue)
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

#include "runner.h"

extern const struct aj_runner aj_runner_kube;

#endif
