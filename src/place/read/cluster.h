/*
 * place/read/cluster.h - the views (place/views.h) read from the API
 * server: the I/O edge of placement that the controller's placer and
 * `aj place` share.
 *
 * One list each, all namespaces, of the nodes, the pods not finished,
 * Volcano's Queues and Kueue's ClusterQueues, LocalQueues and
 * ResourceFlavors: six requests for a whole snapshot, whatever the number
 * of jobs judged against it. A part whose list fails keeps why in the
 * views (its CRD not installed, the list refused, the server's words) and
 * the candidates that need it are UNKNOWN with that reason.
 *
 * Ownership: the views are the caller's (initialised by it; filled here).
 */
#ifndef AJ_PLACE_READ_CLUSTER_H
#define AJ_PLACE_READ_CLUSTER_H

struct aj_kube;
struct aj_kube_resource;
struct aj_views;

/*
 * The lists the views are read with, each in all namespaces whatever a
 * controller watches, and what placement loses when that list is refused
 * (the controller's start-up permission check warns with it). Ends with a
 * NULL res.
 */
struct aj_views_list {
	const struct aj_kube_resource *res;
	const char *without;
};
extern const struct aj_views_list aj_views_cluster_lists[];

/* Read every cluster part of the views into v. 0 / -1 (out of memory). */
int aj_views_read_cluster(struct aj_kube *k, struct aj_views *v);
/*
 * The nodes alone into v (one list, no pods: each node's free room is its
 * allocatable), for aj_fit_nodes_empty. 0 / -1 (out of memory).
 */
int aj_views_read_nodes(struct aj_kube *k, struct aj_views *v);

#endif
