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
 * The Azure part (place/read/azure.h fills it) holds one workspace's
 * computes (their node counts, fit.h) and the virtual clusters the
 * identity sees with their quotas (azure/vcselect.h). An Azure ML command
 * job body (what the aml and sing builders make) asks either for
 * resources.instanceCount nodes of the compute its computeId names, or,
 * with resources.properties.AISuperComputer, for instanceCount instances
 * of one of its instanceTypes in a VC (its VirtualClusterArmId, else any)
 * at its slaTier or a lower one: the VC is chosen as the forwarder
 * chooses it, among the VCs the job's namespace may use. The Azure part is
 * owned apart from the rest, so that it can be kept across reads of the
 * cluster (it is read less often).
 *
 * Ownership: struct aj_views owns every string and array it points to
 * (aj_views_release), its Azure part included; struct aj_views_ask owns
 * its arrays and borrows its strings from the object it was read from.
 * Pure: no I/O, no clock.
 */
#ifndef AJ_PLACE_VIEWS_H
#define AJ_PLACE_VIEWS_H

#include <cjson/cJSON.h>

#include <stddef.h>

#include "azure/vcselect.h"
#include "place/fit.h"

#define AJ_VIEWS_WHY_MAX AJ_PLACE_REASON_MAX

struct aj_views_local_queue {
	char *ns;
	char *name;
	char *cluster_queue;
};

/* Allocations freed together. */
struct aj_views_owned {
	void **items;
	size_t nr, alloc;
};

struct aj_views_azure {
	int read;                    /* 0: not read (an Azure candidate is UNKNOWN) */
	const char *workspace;       /* the ARM id of the workspace whose computes these are */
	struct aj_fit_compute *computes;
	size_t computes_nr;
	struct aj_vc *vcs;
	size_t vcs_nr;
	int *vcs_charged;            /* placements charged to vcs[i] since the read */
	/* why a part is unknown ("" when it was read) */
	char computes_why[AJ_VIEWS_WHY_MAX];
	char vcs_why[AJ_VIEWS_WHY_MAX];
	/* may namespace ns use vc? NULL: every namespace every VC */
	int (*vc_allowed)(const void *ctx, const char *ns, const struct aj_vc *vc);
	const void *vc_allowed_ctx;
	struct aj_views_owned owned;   /* computes, their strings and vcs_charged (vcs apart) */
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
	struct aj_views_azure azure;
	/* every allocation above but the Azure part's, freed by aj_views_release */
	struct aj_views_owned owned;
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

/* Release the Azure part only (to read it again). */
void aj_views_azure_release(struct aj_views_azure *a);
/* a, not read: its computes and VCs unknown with why (the candidates judged against it UNKNOWN). */
void aj_views_azure_unknown(struct aj_views_azure *a, const char *why);

/*
 * The computes of workspace (its ARM id) from the resources of its
 * computes list (an array, as ARM's value). 0 / -1 (OOM).
 */
int aj_views_set_computes(struct aj_views_azure *a, const char *workspace, const cJSON *computes);
/*
 * The VCs with their quotas: taken (released with the views), with their
 * charge counts, made now so that a charge writes only into what the part
 * already holds (a shallow copy of it can be charged). 0 / -1 (OOM); the
 * VCs are the part's either way.
 */
int aj_views_set_vcs(struct aj_views_azure *a, struct aj_vc *vcs, size_t nr);

/* A job's ask, read from its built object. */
struct aj_views_ask {
	struct aj_fit_ask ask;
	struct aj_fit_task *tasks;
	struct aj_fit_label *selector;
	struct aj_fit_toleration *tolerations;
	const char *volcano_queue;   /* a Volcano Job's spec.queue, or NULL */
	const char *local_queue;     /* a batch/v1 Job's Kueue LocalQueue, or NULL */
	/* an Azure ML command job */
	int azure;
	const char *compute;         /* computeId: a compute's name or ARM id; NULL: none */
	long instances;              /* resources.instanceCount (1 when not said) */
	int supercomputer;           /* AISuperComputer: a VC's quota decides */
	const char **instance_types; /* its instanceTypes */
	size_t instance_types_nr;
	const char *tier;            /* its slaTier; NULL: Premium */
	const char *vc;              /* its VirtualClusterArmId; NULL: any VC */
	/*
	 * Without one, the template's target as the forwarder reads it (the
	 * body does not carry it; set by the caller): the VC named (in the
	 * workspace's subscription and resource group unless given), or the
	 * subscription and resource group the VCs are chosen in. NULL: any.
	 */
	const char *vc_subscription, *vc_resource_group, *vc_name;
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
 * the part that could not be read. An Azure ask: its compute's free nodes
 * (UNKNOWN when the compute is not in the workspace read), or a VC with
 * the quota ("virtual cluster S/RG/V: Premium quota for 2 x
 * ND96amrs_A100_v4, 16 units, 48 left") else FULL with each VC's
 * shortfall. 0 / -1 (OOM).
 */
int aj_views_fit(const struct aj_views *v, const struct aj_views_ask *a, const char *ns,
		 struct aj_fit_result *out);

/*
 * Charge the views with a placement of the job (asked as a, in namespace
 * ns) that aj_views_fit judged FITS, so that the next job judged from
 * them sees the room this one takes: the Volcano queue's allocated, or
 * the ClusterQueue's reservation in the flavor Kueue would assign, grows
 * by the job's total; the nodes lose each pod's request where the
 * judge's packing put it; an Azure compute runs `instances` more nodes,
 * or the chosen VC's tier (and user) quota is used by the job's units.
 * A job that does not fit there now charges nothing. 0 / -1 (OOM).
 *
 * Why charging is right, and for how long: a placement's objects are
 * created right after it, but the pods are bound, the queue's allocated
 * and the ClusterQueue's reservation grow, an Azure job takes nodes or
 * quota only later, and the views do not see it until they are read
 * again. The charge stands for that until the part is read again, which
 * replaces it (the cluster's every few seconds, the Azure part at its
 * own pace): it is never counted twice beyond one snapshot's life. A read
 * made before the scheduler or Kueue has caught up with a job sees less
 * taken than there is, as any read does.
 */
int aj_views_charge(struct aj_views *v, const struct aj_views_ask *a, const char *ns);

#endif
