#include "resources.h"

const struct aj_kube_resource aj_res_ajjobs = { AJ_GROUP, AJ_VERSION, "ajjobs", 1 };
const struct aj_kube_resource aj_res_ajtemplates = { AJ_GROUP, AJ_VERSION, "ajtemplates", 1 };
const struct aj_kube_resource aj_res_events = { "events.k8s.io", "v1", "events", 1 };
const struct aj_kube_resource aj_res_pods = { "", "v1", "pods", 1 };
const struct aj_kube_resource aj_res_leases = { "coordination.k8s.io", "v1", "leases", 1 };
const struct aj_kube_resource aj_res_access_reviews = { "authorization.k8s.io", "v1", "selfsubjectaccessreviews", 0 };
