/*
 * views.h - what limits a start, read from the API objects into fit.h's
 * views, and one candidate's answer from them.
 *
 * A snapshot holds the schedulable nodes with their free allocatable (the
 * requests of the pods bound there and not finished taken off) beside
 * their allocatable (what aj_fit_nodes_empty asks of them), the
 * Volcano Queues, and Kueue's ClusterQueues (with their ResourceFlavors'
 * node labels) and LocalQueues. A part that could not be read (its CRD not
 * installed, the list refused) keeps why, and a candidate that needs it is
 * UNKNOWN with that reason.
 *
 * The job's ask comes from the object a cluster backend built (its first),
 * not from the backend's name: a Volcano Job (batch.volcano.sh) names its
 * queue in spec.queue and its pods in spec.tasks; a batch/v1 Job its pods
 * in spec.template (parallelism of them) and its Kueue LocalQueue in the
 * label kueue.x-k8s.io/queue-name (none: no quota gate). A container's
 * request is its requests, else its limits (extended resources such as
 * GPUs are often written as limits only). The job's node selector and
 * tolerations are those of its first task that asks for GPUs (else its
 * first): a heterogeneous job whose tasks select other nodes is judged by
 * that one.
 *
 * Ownership: struct aj_views owns every string and array it points to
 * (aj_views_release); struct aj_views_ask owns its arrays and borrows its
 * strings from the object it was read from. Pure: no I/O, no clock.
 */
#ifndef AJ_PLACE_VIEWS_H
#define AJ_PLACE_VIEWS_H

#include <cjson/cJSON.h>

#include <stddef.h>

#include "place/fit.h"

#define AJ_VIEWS_WHY_MAX 160

struct aj_views_local_queue {
	char *ns;
	char *name;
	char *cluster_queue;
};

struct aj_views {
	struct aj_fit_node *nodes;
	size_t nodes_nr;
	struct aj_fit_queue *queues;
	size_t queues_nr;
	struct aj_fit_cluster_queue *cqs;
	size_t cqs_nr;
	struct aj_views_local_queue *lqs;
	size_t lqs_nr;
	/* why a part is unknown ("" when it was read) */
	char nodes_why[AJ_VIEWS_WHY_MAX];
	char queues_why[AJ_VIEWS_WHY_MAX];
	char kueue_why[AJ_VIEWS_WHY_MAX];
	/* every allocation above, freed by aj_views_release */
	void **owned;
	size_t owned_nr, owned_alloc;
};

void aj_views_init(struct aj_views *v);
void aj_views_release(struct aj_views *v);

/*
 * The nodes from a NodeList and a PodList (pods bound to a node and not
 * Succeeded or Failed take their requests off its allocatable; pods NULL:
 * none). A node with spec.unschedulable or not Ready is unschedulable.
 * 0 / -1 (OOM).
 */
int aj_views_set_nodes(struct aj_views *v, const cJSON *nodes, const cJSON *pods);
/* The Volcano Queues of a QueueList. 0 / -1 (OOM). */
int aj_views_set_queues(struct aj_views *v, const cJSON *queues);
/* Kueue's ClusterQueues, LocalQueues and ResourceFlavors. 0 / -1 (OOM). */
int aj_views_set_kueue(struct aj_views *v, const cJSON *cqs, const cJSON *lqs,
		       const cJSON *flavors);

/* A job's ask, read from its built object. */
struct aj_views_ask {
	struct aj_fit_ask ask;
	struct aj_fit_task *tasks;
	struct aj_fit_label *selector;
	struct aj_fit_toleration *tolerations;
	const char *volcano_queue;   /* a Volcano Job's spec.queue, or NULL */
	const char *local_queue;     /* a batch/v1 Job's Kueue LocalQueue, or NULL */
};

/*
 * Read the ask from the object (borrowing its strings). 1 read, 0 the
 * object is of no kind the views know (the candidate is then UNKNOWN),
 * -1 (OOM). aj_views_ask_release either way.
 */
int aj_views_ask_read(const cJSON *obj, struct aj_views_ask *a);
void aj_views_ask_release(struct aj_views_ask *a);

/*
 * Can the job (asked as a, its object in namespace ns) start now: the
 * queue or ClusterQueue gate first, then the nodes. FITS and FULL as
 * fit.h says them (both reasons joined by "; " when it fits), UNKNOWN with
 * the part that could not be read. 0 / -1 (OOM).
 */
int aj_views_fit(const struct aj_views *v, const struct aj_views_ask *a, const char *ns,
		 struct aj_fit_result *out);

#endif
