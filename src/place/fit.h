/*
 * fit.h - can the whole job start on a candidate now, and if not, why not.
 *
 * The controller keeps views of what limits a start, read from the API
 * objects: a Volcano Queue (state, capability,
 * allocated), a Kueue ClusterQueue (nominal quota and borrowing limit per
 * flavor and resource, minus what is reserved), and the schedulable
 * nodes' free allocatable (allocatable minus the requests of the
 * non-terminal pods bound there), labels and taints. A job's ask is its
 * tasks (pods and per-pod requests), its node selector (the GPU product
 * label among it), its tolerations and whether its pods keep one per node
 * (the cluster builders' anti-affinity for jobs of several pods).
 *
 * The gang fits when the queue or ClusterQueue admits the sum of its
 * requests and every pod packs onto the nodes at once. Packing is first-fit
 * decreasing: tasks by decreasing per-pod size (GPUs, then CPU, then
 * memory), each task's pods into the nodes in the view's order. That is a
 * heuristic: a packing it misses may exist (bin packing is NP-hard), so
 * FULL from packing means "not by first fit", which is what a scheduler
 * that binds pods one by one finds too.
 *
 * An Azure ML compute (AmlCompute) is read as ARM returns it: it may
 * grow to scaleSettings.maxNodeCount nodes, has currentNodeCount now, and
 * nodeStateCounts says what those do. A node is free when it is idle or
 * not yet allocated: free = max - current + idle (running, preparing,
 * unusable, leaving and preempted nodes are not). A job takes one node per
 * instance.
 *
 * A view is charged with a placement made from it (the _charge functions,
 * views.h aj_views_charge): what the job takes is counted as taken until
 * the view is read again, and a reason says when placements since the
 * read took room ("16 of 64 nvidia.com/gpu free after 3 placements since
 * the last read").
 *
 * Units: cpu in millicores, memory and other byte sizes in bytes, GPUs and
 * pods as counts. -1 is "not limited" in a capability or quota, "not
 * asked" in a request.
 *
 * Ownership: every view and ask borrows its strings and arrays from the
 * caller; the result's reason is its own. Pure: no I/O, no clock; the
 * packing allocates a scratch copy of the nodes' free resources.
 */
#ifndef AJ_PLACE_FIT_H
#define AJ_PLACE_FIT_H

#include <stddef.h>

#include "place/rank.h"

enum aj_fit_res {
	AJ_FIT_CPU,       /* "cpu", millicores */
	AJ_FIT_MEMORY,    /* "memory", bytes */
	AJ_FIT_GPU,       /* "nvidia.com/gpu" */
	AJ_FIT_PODS,      /* "pods": a node's pod slots; each pod takes one */
	AJ_FIT_RES_NR
};

/* The resource's Kubernetes name. */
const char *aj_fit_res_name(enum aj_fit_res r);
/* The resource of a Kubernetes name; -1 for one the views do not follow. */
int aj_fit_res_of(const char *name);

struct aj_fit_res_v {
	long long v[AJ_FIT_RES_NR];
};

/* Every resource -1 (nothing asked, nothing limited). */
void aj_fit_res_unset(struct aj_fit_res_v *r);

/*
 * A Kubernetes quantity ("500m", "8", "512Gi", "1.5", "2e3") in the unit of
 * r (millicores for cpu, rounded up; else whole units, rounded up). 0 / -1
 * when it is no quantity or does not fit in 2^62.
 */
int aj_fit_quantity(enum aj_fit_res r, const char *text, long long *out);

struct aj_fit_label {
	const char *key;
	const char *value;
};

struct aj_fit_taint {
	const char *key;
	const char *value;        /* NULL: none */
	const char *effect;       /* NoSchedule, PreferNoSchedule, NoExecute */
};

struct aj_fit_toleration {
	const char *key;          /* NULL or "": every key (with Exists) */
	int exists;               /* operator Exists (else Equal) */
	const char *value;        /* Equal's value */
	const char *effect;       /* NULL or "": every effect */
};

struct aj_fit_node {
	const char *name;
	int unschedulable;        /* spec.unschedulable, or not Ready */
	const struct aj_fit_label *labels;
	size_t labels_nr;
	const struct aj_fit_taint *taints;
	size_t taints_nr;
	struct aj_fit_res_v free; /* allocatable minus the requests of its live pods; -1 not offered */
	struct aj_fit_res_v alloc; /* status.allocatable (the room of the node empty); -1 not offered */
	int charged;              /* placements whose pods were charged to it since it was read */
};

struct aj_fit_task {
	const char *name;
	long pods;
	struct aj_fit_res_v req;  /* per pod; -1 or 0: not asked */
};

struct aj_fit_ask {
	const struct aj_fit_task *tasks;
	size_t tasks_nr;
	const struct aj_fit_label *selector;
	size_t selector_nr;
	const struct aj_fit_toleration *tolerations;
	size_t tolerations_nr;
	int one_per_node;         /* no two of its pods on one node */
};

/* A Volcano Queue: spec.capability, status.allocated, status.state. */
struct aj_fit_queue {
	const char *name;
	const char *state;        /* "Open", "Closed", ...; NULL: Open */
	struct aj_fit_res_v capability;
	struct aj_fit_res_v allocated;
	int charged;              /* placements charged to it since it was read */
};

/* One flavor of a ClusterQueue's resource group. */
struct aj_fit_flavor {
	const char *name;
	const struct aj_fit_label *node_labels;  /* the ResourceFlavor's spec.nodeLabels */
	size_t node_labels_nr;
	struct aj_fit_res_v nominal;    /* -1: the flavor does not cover it */
	struct aj_fit_res_v borrow;     /* beyond nominal: borrowingLimit in a cohort, else 0 */
	struct aj_fit_res_v reserved;   /* status.flavorsReservation (admitted and reserved) */
};

/* A Kueue ClusterQueue (the one behind the job's LocalQueue). */
struct aj_fit_cluster_queue {
	const char *name;
	int active;               /* condition Active is True */
	const char *inactive_why; /* its message when not active, or NULL */
	struct aj_fit_flavor *flavors;   /* in the resource group's order */
	size_t flavors_nr;
	int charged;              /* placements charged to it since it was read */
};

/* An Azure ML compute's node counts (properties.properties of its resource). */
struct aj_fit_compute {
	const char *name;
	const char *type;         /* properties.computeType: "AmlCompute", "Kubernetes", ... */
	const char *state;        /* properties.provisioningState; NULL: Succeeded */
	long max;                 /* scaleSettings.maxNodeCount */
	long current;             /* currentNodeCount */
	long idle, running, preparing, unusable, leaving, preempted;   /* nodeStateCounts */
	int charged;              /* placements charged to it since it was read */
};

struct aj_fit_result {
	enum aj_place_state state;     /* AJ_PLACE_FITS or AJ_PLACE_FULL (a compute: UNKNOWN too) */
	char reason[AJ_PLACE_REASON_MAX];
};

/*
 * Does the queue admit the job's total? FITS with what is left of the
 * tightest resource the job asks for, or FULL with the one it overflows
 * ("queue default: capability nvidia.com/gpu 32, allocated 32") or the
 * queue's state.
 */
void aj_fit_queue(const struct aj_fit_queue *q, const struct aj_fit_ask *ask,
		  struct aj_fit_result *out);

/*
 * Does the ClusterQueue admit it in one flavor (the first, in order, whose
 * node labels the job's selector allows and whose quota holds the job's
 * total)? "ClusterQueue team-a: 48 of 64 nvidia.com/gpu free" counts the
 * flavors the job may use.
 */
void aj_fit_cluster_queue(const struct aj_fit_cluster_queue *cq, const struct aj_fit_ask *ask,
			  struct aj_fit_result *out);

/*
 * Do all the pods pack onto the nodes now (first-fit decreasing)? FULL
 * says the first thing that stops it: no schedulable node with a selected
 * label ("no schedulable node has nvidia.com/gpu.product=X"), none whose
 * taints the job tolerates, or how many of a task's pods the free nodes
 * hold. 0, or -1 out of memory (out untouched).
 */
int aj_fit_nodes(const struct aj_fit_node *nodes, size_t nodes_nr, const struct aj_fit_ask *ask,
		 struct aj_fit_result *out);

/*
 * Do `instances` nodes of the compute start the job now? FITS "compute
 * gpu-cluster: 6 of 8 nodes free", FULL "compute gpu-cluster: 2 of 8
 * nodes free, the job needs 4" (or its provisioning state when not
 * Succeeded), UNKNOWN for a compute that is no AmlCompute (its free nodes
 * are not counted).
 */
void aj_fit_compute(const struct aj_fit_compute *c, long instances, struct aj_fit_result *out);

/*
 * Could the gang ever fit: do its pods pack onto the nodes were they
 * empty (aj_fit_nodes with each node's alloc as its free room)? FITS, or
 * FULL with aj's fact in one line, the first of:
 *   no schedulable node it may use, as aj_fit_nodes says it
 *     ("no schedulable node has nvidia.com/gpu.product=X");
 *   the scarcest resource's total (the most asked against what those nodes
 *     hold) beyond them ("asks 64 pods × 8 nvidia.com/gpu = 512; the
 *     schedulable nodes hold 64"; "...nodes it may use hold" when its
 *     selector or the taints leave some out);
 *   one pod bigger than the largest of them ("one pod asks 16
 *     nvidia.com/gpu; the largest schedulable node has 8");
 *   else the packing's reason (totals suffice, the pods do not pack).
 * 0, or -1 out of memory (out untouched).
 */
int aj_fit_nodes_empty(const struct aj_fit_node *nodes, size_t nodes_nr,
		       const struct aj_fit_ask *ask, struct aj_fit_result *out);

/*
 * Charge a placement made from the views (the job judged FITS there):
 * the queue's allocated grows by the job's total; the ClusterQueue's
 * reservation of the flavor aj_fit_cluster_queue chose grows by it (of
 * the resources that flavor covers); the nodes' free room loses each pod
 * where aj_fit_nodes' packing put it (-1 out of memory, nothing charged);
 * the compute's idle nodes, then its unallocated ones, run `instances`
 * more. Each counts one placement more in `charged`.
 */
void aj_fit_queue_charge(struct aj_fit_queue *q, const struct aj_fit_ask *ask);
void aj_fit_cluster_queue_charge(struct aj_fit_cluster_queue *cq, const struct aj_fit_ask *ask);
int aj_fit_nodes_charge(struct aj_fit_node *nodes, size_t nodes_nr, const struct aj_fit_ask *ask);
void aj_fit_compute_charge(struct aj_fit_compute *c, long instances);

/* " after 3 placements since the last read" for charged > 0, else "" (into buf, returned). */
const char *aj_fit_since(int charged, char *buf, size_t size);

/* The job's total request of r over all its pods (0 when not asked). */
long long aj_fit_ask_total(const struct aj_fit_ask *ask, enum aj_fit_res r);

#endif
