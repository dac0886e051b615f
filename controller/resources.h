/*
 * resources.h - the Kubernetes resource types the controller reads and
 * writes, in one place so RBAC (charts/) and code can be checked together.
 */
#ifndef AJ_RESOURCES_H
#define AJ_RESOURCES_H

#include "core/ajjob.h"
#include "kube/client.h"

/* the AjJob contract's names (core/ajjob.h) */
#define AJ_GROUP AJ_AJJOB_GROUP
#define AJ_VERSION AJ_AJJOB_VERSION
#define AJ_API_VERSION AJ_AJJOB_API_VERSION
#define AJ_CONTROLLER_NAME "aj.dev/aj-controller"

extern const struct aj_kube_resource aj_res_ajjobs;
extern const struct aj_kube_resource aj_res_ajtemplates;
extern const struct aj_kube_resource aj_res_events;
/* read only: the pods of a job (a runner's own resources are in its file) */
extern const struct aj_kube_resource aj_res_pods;
extern const struct aj_kube_resource aj_res_leases;
extern const struct aj_kube_resource aj_res_access_reviews;

#endif
