/*
 * The views read from API objects (place/views.c): nodes less their live
 * pods' requests, a Volcano Queue, Kueue's queues and flavors, a job's ask
 * from the object a backend built, and a candidate's answer. Objects and
 * expected reasons are written by hand.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/error.h"
#include "place/views.h"

#define WS "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws"

#define A100 "\"nvidia.com/gpu.product\": \"A100-SXM4-80GB\""
#define GPU_TAINT "\"taints\": [{\"key\": \"nvidia.com/gpu\", \"value\": \"present\", \"effect\": \"NoSchedule\"}]"
#define READY "\"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]"
#define ALLOC "\"allocatable\": {\"cpu\": \"128\", \"memory\": \"2Ti\", \"nvidia.com/gpu\": \"8\", \"pods\": \"110\"}"

static const char nodes_json[] =
	"{\"items\": ["
	"{\"metadata\": {\"name\": \"a0\", \"labels\": {" A100 "}}, \"spec\": {" GPU_TAINT "},"
	" \"status\": {" ALLOC ", " READY "}},"
	"{\"metadata\": {\"name\": \"a1\", \"labels\": {" A100 "}}, \"spec\": {" GPU_TAINT "},"
	" \"status\": {" ALLOC ", " READY "}},"
	"{\"metadata\": {\"name\": \"a2\", \"labels\": {" A100 "}}, \"spec\": {" GPU_TAINT "},"
	" \"status\": {" ALLOC ", \"conditions\": [{\"type\": \"Ready\", \"status\": \"False\"}]}}"
	"]}";

/* a0 full (8 GPUs as limits), a1 with a finished pod that no longer counts and a small one */
static const char pods_json[] =
	"{\"items\": ["
	"{\"spec\": {\"nodeName\": \"a0\", \"containers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": 8}}}]},"
	" \"status\": {\"phase\": \"Running\"}},"
	"{\"spec\": {\"nodeName\": \"a1\", \"containers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"8\"}}}]},"
	" \"status\": {\"phase\": \"Succeeded\"}},"
	"{\"spec\": {\"nodeName\": \"a1\", \"containers\": [{\"resources\": {\"requests\": {\"cpu\": \"500m\"},"
	" \"limits\": {\"cpu\": \"2\"}}}]}, \"status\": {\"phase\": \"Pending\"}},"
	"{\"spec\": {\"containers\": []}, \"status\": {\"phase\": \"Pending\"}}"
	"]}";

static const char queues_json[] =
	"{\"items\": [{\"metadata\": {\"name\": \"default\"},"
	" \"spec\": {\"capability\": {\"nvidia.com/gpu\": \"16\"}},"
	" \"status\": {\"state\": \"Open\", \"allocated\": {\"nvidia.com/gpu\": \"8\", \"cpu\": \"16\"}}}]}";

/* 2 pods of 8 GPUs and 16 cpu, one per node, on A100s */
static const char volcano_job[] =
	"{\"apiVersion\": \"batch.volcano.sh/v1alpha1\", \"kind\": \"Job\","
	" \"spec\": {\"queue\": \"default\", \"tasks\": [{\"name\": \"worker\", \"replicas\": 2,"
	" \"template\": {\"spec\": {\"nodeSelector\": {" A100 "},"
	" \"tolerations\": [{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\", \"effect\": \"NoSchedule\"}],"
	" \"affinity\": {\"podAntiAffinity\": {}},"
	" \"containers\": [{\"resources\": {\"requests\": {\"cpu\": \"16\"}, \"limits\": {\"nvidia.com/gpu\": \"8\", \"cpu\": \"16\"}}}]}}}]}}";

static const char kube_job[] =
	"{\"apiVersion\": \"batch/v1\", \"kind\": \"Job\","
	" \"metadata\": {\"name\": \"train\", \"labels\": {\"kueue.x-k8s.io/queue-name\": \"team-a\"}},"
	" \"spec\": {\"parallelism\": 2, \"template\": {\"spec\": {"
	" \"tolerations\": [{\"key\": \"nvidia.com/gpu\", \"operator\": \"Exists\"}],"
	" \"containers\": [{\"resources\": {\"limits\": {\"nvidia.com/gpu\": \"4\"}}}]}}}}";

static const char cqs_json[] =
	"{\"items\": [{\"metadata\": {\"name\": \"team-a\"}, \"spec\": {\"resourceGroups\": [{"
	" \"coveredResources\": [\"cpu\", \"nvidia.com/gpu\"], \"flavors\": ["
	" {\"name\": \"a100\", \"resources\": [{\"name\": \"cpu\", \"nominalQuota\": 512},"
	" {\"name\": \"nvidia.com/gpu\", \"nominalQuota\": 32, \"borrowingLimit\": 8}]}]}]},"
	" \"status\": {\"conditions\": [{\"type\": \"Active\", \"status\": \"True\"}],"
	" \"flavorsReservation\": [{\"name\": \"a100\", \"resources\": [{\"name\": \"nvidia.com/gpu\", \"total\": \"28\"}]}]}}]}";

static const char lqs_json[] =
	"{\"items\": [{\"metadata\": {\"namespace\": \"training\", \"name\": \"team-a\"},"
	" \"spec\": {\"clusterQueue\": \"team-a\"}}]}";

static const char flavors_json[] =
	"{\"items\": [{\"metadata\": {\"name\": \"a100\"}, \"spec\": {\"nodeLabels\": {" A100 "}}}]}";

static cJSON *parse(const char *text)
{
	cJSON *j = cJSON_Parse(text);

	if (!j)
		fail_msg("bad JSON near: %.60s", cJSON_GetErrorPtr());
	return j;
}


static void nodes_less_their_pods(void **state)
{
	cJSON *nodes = parse(nodes_json), *pods = parse(pods_json);
	struct aj_views v;

	(void)state;
	aj_views_init(&v);
	assert_int_equal(aj_views_set_nodes(&v, nodes, pods), 0);
	assert_int_equal(v.nodes_nr, 3);
	assert_string_equal(v.nodes[0].name, "a0");
	assert_int_equal(v.nodes[0].free.v[AJ_FIT_GPU], 0);
	assert_int_equal(v.nodes[0].free.v[AJ_FIT_PODS], 109);
	assert_int_equal(v.nodes[1].free.v[AJ_FIT_GPU], 8);
	/* requests before limits; the finished pod's GPUs are free again */
	assert_int_equal(v.nodes[1].free.v[AJ_FIT_CPU], 127500);
	assert_int_equal(v.nodes[1].free.v[AJ_FIT_MEMORY], 2LL << 40);
	assert_int_equal(v.nodes[0].unschedulable, 0);
	assert_int_equal(v.nodes[2].unschedulable, 1);
	assert_int_equal(v.nodes[0].taints_nr, 1);
	assert_string_equal(v.nodes[0].taints[0].effect, "NoSchedule");
	assert_string_equal(v.nodes[0].labels[0].value, "A100-SXM4-80GB");
	/* the allocatable is kept beside the free room: a0's 8 GPUs, a1's 128 cpu */
	assert_int_equal(v.nodes[0].alloc.v[AJ_FIT_GPU], 8);
	assert_int_equal(v.nodes[0].alloc.v[AJ_FIT_PODS], 110);
	assert_int_equal(v.nodes[1].alloc.v[AJ_FIT_CPU], 128000);
	aj_views_release(&v);
	/* no pods: every node's free room is its allocatable */
	aj_views_init(&v);
	assert_int_equal(aj_views_set_nodes(&v, nodes, NULL), 0);
	assert_int_equal(v.nodes_nr, 3);
	assert_int_equal(v.nodes[0].free.v[AJ_FIT_GPU], 8);
	assert_int_equal(v.nodes[0].alloc.v[AJ_FIT_GPU], 8);
	aj_views_release(&v);
	cJSON_Delete(nodes);
	cJSON_Delete(pods);
}

/* The job's ask read from its object against the nodes' allocatable (a0 is full now). */
static void never_fits(void **state)
{
	cJSON *nodes = parse(nodes_json), *pods = parse(pods_json), *job = parse(volcano_job);
	struct aj_views_ask a;
	struct aj_fit_result out;
	struct aj_views v;

	(void)state;
	aj_views_init(&v);
	assert_int_equal(aj_views_set_nodes(&v, nodes, pods), 0);
	assert_int_equal(aj_views_ask_read(job, &a), 1);
	assert_int_equal(aj_fit_nodes_empty(v.nodes, v.nodes_nr, &a.ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "all 2 pods fit on 2 of 2 matching nodes", "empty");
	a.tasks[0].pods = 3;
	assert_int_equal(aj_fit_nodes_empty(v.nodes, v.nodes_nr, &a.ask, &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
	      "asks 3 pods × 8 nvidia.com/gpu = 24; the schedulable nodes hold 16", "3 pods");
	aj_views_ask_release(&a);
	aj_views_release(&v);
	cJSON_Delete(nodes);
	cJSON_Delete(pods);
	cJSON_Delete(job);
}

static void volcano_candidate(void **state)
{
	cJSON *nodes = parse(nodes_json), *pods = parse(pods_json), *queues = parse(queues_json);
	cJSON *job = parse(volcano_job), *cap;
	struct aj_views v;
	struct aj_views_ask a;
	struct aj_fit_result out;

	(void)state;
	aj_views_init(&v);
	assert_int_equal(aj_views_set_nodes(&v, nodes, pods), 0);
	assert_int_equal(aj_views_set_queues(&v, queues), 0);
	assert_int_equal(aj_views_ask_read(job, &a), 1);
	assert_string_equal(a.volcano_queue, "default");
	assert_null(a.local_queue);
	assert_int_equal(a.ask.tasks_nr, 1);
	assert_int_equal(a.ask.tasks[0].pods, 2);
	assert_int_equal(a.ask.tasks[0].req.v[AJ_FIT_GPU], 8);
	assert_int_equal(a.ask.tasks[0].req.v[AJ_FIT_CPU], 16000);
	assert_true(a.ask.one_per_node);
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
	      "queue default: capability nvidia.com/gpu 16, allocated 8, the job asks 16", "queue");
	aj_views_release(&v);

	/* a larger queue: now the nodes stop it (a0 full, a2 not Ready) */
	cap = cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(
		cJSON_GetObjectItem(queues, "items"), 0), "spec"), "capability"), "nvidia.com/gpu");
	cJSON_SetValuestring(cap, "64");
	aj_views_init(&v);
	assert_int_equal(aj_views_set_nodes(&v, nodes, pods), 0);
	assert_int_equal(aj_views_set_queues(&v, queues), 0);
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
	      "2 matching nodes have room for 1 of the 2 pods of task worker "
	      "(8 nvidia.com/gpu, 16 cpu each, one per node)", "nodes");
	/* one pod: the queue and the nodes each say why it fits */
	a.tasks[0].pods = 1;
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS,
	      "queue default: 56 of 64 nvidia.com/gpu free; 1 pod fits on 1 of 2 matching nodes",
	      "fits");
	/* a queue that is not there, and queues that could not be read */
	a.volcano_queue = "research";
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "queue research does not exist", "no queue");
	snprintf(v.queues_why, sizeof(v.queues_why), "the CRD queues.scheduling.volcano.sh is not installed");
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_UNKNOWN,
	      "Volcano queues unknown: the CRD queues.scheduling.volcano.sh is not installed", "crd");
	aj_views_ask_release(&a);
	aj_views_release(&v);
	cJSON_Delete(nodes);
	cJSON_Delete(pods);
	cJSON_Delete(queues);
	cJSON_Delete(job);
}

static void kueue_candidate(void **state)
{
	cJSON *nodes = parse(nodes_json), *pods = parse(pods_json), *cqs = parse(cqs_json);
	cJSON *lqs = parse(lqs_json), *flavors = parse(flavors_json), *job = parse(kube_job);
	cJSON *other = parse("{\"apiVersion\": \"v1\", \"kind\": \"Pod\"}");
	struct aj_views v;
	struct aj_views_ask a;
	struct aj_fit_result out;

	(void)state;
	aj_views_init(&v);
	assert_int_equal(aj_views_set_nodes(&v, nodes, pods), 0);
	assert_int_equal(aj_views_set_kueue(&v, cqs, lqs, flavors), 0);
	assert_int_equal(v.cqs_nr, 1);
	assert_int_equal(v.cqs[0].flavors_nr, 1);
	assert_int_equal(v.cqs[0].flavors[0].nominal.v[AJ_FIT_GPU], 32);
	/* no cohort: the borrowing limit lends nothing */
	assert_int_equal(v.cqs[0].flavors[0].borrow.v[AJ_FIT_GPU], 0);
	assert_int_equal(v.cqs[0].flavors[0].reserved.v[AJ_FIT_GPU], 28);
	assert_string_equal(v.cqs[0].flavors[0].node_labels[0].key, "nvidia.com/gpu.product");
	assert_int_equal(aj_views_ask_read(job, &a), 1);
	assert_string_equal(a.local_queue, "team-a");
	assert_false(a.ask.one_per_node);
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "ClusterQueue team-a: 4 of 32 nvidia.com/gpu free, the job asks 8",
	      "quota");
	a.tasks[0].pods = 1;
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "ClusterQueue team-a: 4 of 32 nvidia.com/gpu free (flavor a100); "
	      "1 pod fits on 1 of 2 matching nodes", "quota fits");
	assert_int_equal(aj_views_fit(&v, &a, "research", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "LocalQueue research/team-a does not exist", "no local queue");
	snprintf(v.kueue_why, sizeof(v.kueue_why), "the CRD clusterqueues.kueue.x-k8s.io is not installed");
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_UNKNOWN,
	      "Kueue queues unknown: the CRD clusterqueues.kueue.x-k8s.io is not installed", "crd");
	aj_views_ask_release(&a);
	/* an object the views do not know */
	assert_int_equal(aj_views_ask_read(other, &a), 0);
	aj_views_ask_release(&a);
	aj_views_release(&v);
	cJSON_Delete(nodes);
	cJSON_Delete(pods);
	cJSON_Delete(cqs);
	cJSON_Delete(lqs);
	cJSON_Delete(flavors);
	cJSON_Delete(job);
	cJSON_Delete(other);
}

/* A workspace's computes as ARM lists them (value[]). */
static const char computes_json[] =
	"[{\"id\": \"" WS "/computes/gpu-cluster\", \"name\": \"gpu-cluster\","
	" \"properties\": {\"computeType\": \"AmlCompute\", \"provisioningState\": \"Succeeded\","
	" \"properties\": {\"vmSize\": \"STANDARD_ND96AMSR_A100_V4\","
	" \"scaleSettings\": {\"maxNodeCount\": 8, \"minNodeCount\": 0},"
	" \"currentNodeCount\": 3, \"nodeStateCounts\": {\"idleNodeCount\": 1, \"runningNodeCount\": 2,"
	" \"preparingNodeCount\": 0, \"unusableNodeCount\": 0, \"leavingNodeCount\": 0,"
	" \"preemptedNodeCount\": 0}}}},"
	"{\"name\": \"cpu-cluster\", \"properties\": {\"computeType\": \"AmlCompute\","
	" \"properties\": {\"scaleSettings\": {\"maxNodeCount\": 2}, \"currentNodeCount\": 2,"
	" \"nodeStateCounts\": {\"runningNodeCount\": 2}}}},"
	"{\"properties\": {\"computeType\": \"AmlCompute\"}}]";

/* what the aml builder makes: computeId the compute's name, instanceCount the nodes */
static const char aml_job[] =
	"{\"properties\": {\"jobType\": \"Command\", \"computeId\": \"gpu-cluster\","
	" \"resources\": {\"instanceCount\": 4}}}";

/* what the sing builder makes, its VC left to choose */
static const char sing_job[] =
	"{\"properties\": {\"jobType\": \"Command\", \"resources\": {\"instanceCount\": 2,"
	" \"instanceType\": \"Singularity.ND96amrs_A100_v4\", \"properties\": {\"AISuperComputer\":"
	" {\"instanceType\": \"Singularity.ND96amrs_A100_v4\", \"instanceTypes\":"
	" [\"Singularity.ND96amrs_A100_v4\"], \"instanceCount\": 2, \"slaTier\": \"Premium\"}}}}}";

static struct aj_vc *add_vc(struct aj_vc *vcs, size_t *nr, const char *name, const char *quotas)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *res = parse(quotas);
	struct aj_vc *vc = &vcs[(*nr)++];

	aj_vc_init(vc);
	assert_int_equal(aj_vc_set(vc, "s1", "rg", name), 0);
	assert_int_equal(aj_vc_read_quotas(vc, res, &err), 0);
	cJSON_Delete(res);
	aj_errors_release(&err);
	return vc;
}

static int only_vc_b(const void *ctx, const char *ns, const struct aj_vc *vc)
{
	(void)ctx;
	return strcmp(ns, "research") || !strcmp(vc->name, "vc-b");
}

#define QUOTA(tier, limit, used) \
	"{\"properties\": {\"managed\": {\"quotas\": {\"eastus\": {\"limits\": [{\"id\": " \
	"\"ND_A100_v4\", \"slaTier\": \"" tier "\", \"limit\": " limit ", \"used\": " used "}]}}}}}"

/* Azure ML: a compute's free nodes; Singularity: a VC's quota; and either unread. */
static void azure_candidate(void **state)
{
	cJSON *computes = parse(computes_json), *aml = parse(aml_job), *sing = parse(sing_job);
	struct aj_vc *vcs = aj_calloc(3, sizeof(*vcs));
	struct aj_views v;
	struct aj_views_ask a;
	struct aj_fit_result out;
	size_t nr = 0;

	(void)state;
	assert_non_null(vcs);
	aj_views_init(&v);
	/* nothing read: the CLI before it reads Azure */
	assert_int_equal(aj_views_ask_read(aml, &a), 1);
	assert_true(a.azure);
	assert_string_equal(a.compute, "gpu-cluster");
	assert_int_equal(a.instances, 4);
	assert_false(a.supercomputer);
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_UNKNOWN, "no Azure capacity is read for placement", "unread");
	v.azure.read = 1;
	assert_int_equal(aj_views_set_computes(&v.azure, WS, computes), 0);
	assert_int_equal(v.azure.computes_nr, 2);
	/* 8 nodes at most, 3 allocated of which 1 idle: 6 free */
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "compute gpu-cluster: 6 of 8 nodes free", "free");
	a.instances = 7;
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
			  "compute gpu-cluster: 6 of 8 nodes free (2 running), the job needs 7", "full");
	a.compute = WS "/computes/cpu-cluster";
	a.instances = 1;
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL,
			  "compute cpu-cluster: 0 of 2 nodes free (2 running), the job needs 1", "by id");
	a.compute = "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.MachineLearningServices/"
		    "workspaces/other/computes/gpu-cluster";
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_UNKNOWN, "compute /subscriptions/s1/resourceGroups/rg/providers/"
			  "Microsoft.MachineLearningServices/workspaces/other/computes/gpu-cluster is not "
			  "in workspace ws, whose computes are read", "other workspace");
	a.compute = "gone";
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_UNKNOWN, "compute gone not found in workspace ws", "404");
	snprintf(v.azure.computes_why, sizeof(v.azure.computes_why),
		 "Azure is unreachable: Could not connect to server");
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_UNKNOWN,
			  "Azure ML computes unknown: Azure is unreachable: Could not connect to server",
			  "unreachable");
	aj_views_ask_release(&a);

	/* Singularity: 2 x 8 A100 GPUs of Premium quota */
	add_vc(vcs, &nr, "vc-a", QUOTA("Premium", "64", "56"));
	add_vc(vcs, &nr, "vc-b", QUOTA("Premium", "64", "16"));
	add_vc(vcs, &nr, "vc-c", QUOTA("Standard", "512", "0"));
	assert_int_equal(aj_views_set_vcs(&v.azure, vcs, nr), 0);
	assert_int_equal(aj_views_ask_read(sing, &a), 1);
	assert_true(a.supercomputer);
	assert_int_equal(a.instances, 2);
	assert_int_equal(a.instance_types_nr, 1);
	assert_string_equal(a.tier, "Premium");
	assert_null(a.vc);
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "virtual cluster s1/rg/vc-b: Premium quota for 2 x "
			  "ND96amrs_A100_v4 (16 units), 32 left", "vc quota");
	/* named VC without the quota: its shortfall */
	a.vc = "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.MachineLearningServices/"
	       "virtualclusters/vc-a";
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "no virtual cluster has Premium quota "
			  "for 2 x \"Singularity.ND96amrs_A100_v4\" (or a lower tier): s1/rg/vc-a: "
			  "ND_A100_v4 Premium: 8 free, 16 needed", "vc short");
	/* a lower tier serves one that asks for it */
	a.vc = NULL;
	a.tier = "Standard";
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "virtual cluster s1/rg/vc-c: Standard quota for 2 x "
			  "ND96amrs_A100_v4 (16 units), 496 left", "standard");
	/* the template's target: a VC named alone is the workspace's subscription's and group's */
	a.vc_name = "vc-c";
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "virtual cluster s1/rg/vc-c: Standard quota for 2 x "
			  "ND96amrs_A100_v4 (16 units), 496 left", "named vc");
	/* VCs chosen in another subscription: none there */
	a.vc_name = NULL;
	a.vc_subscription = "s2";
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "no virtual cluster has Standard quota for 2 x "
			  "\"Singularity.ND96amrs_A100_v4\" (or a lower tier): none found", "other sub");
	a.vc_subscription = NULL;
	/* only the VCs the namespace may use */
	a.tier = NULL;
	a.instances = 7;
	v.azure.vc_allowed = only_vc_b;
	assert_int_equal(aj_views_fit(&v, &a, "research", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "no virtual cluster has Premium quota "
			  "for 7 x \"Singularity.ND96amrs_A100_v4\" (or a lower tier): s1/rg/vc-b: "
			  "ND_A100_v4 Premium: 48 free, 56 needed", "allowed");
	/* vc-c's Standard quota would hold it, in a namespace that may use vc-c */
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	assert_int_equal(out.state, AJ_PLACE_FITS);
	snprintf(v.azure.vcs_why, sizeof(v.azure.vcs_why), "listing subscriptions: 403 forbidden");
	assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_UNKNOWN,
			  "virtual clusters unknown: listing subscriptions: 403 forbidden", "vcs why");
	aj_views_ask_release(&a);
	aj_views_release(&v);
	cJSON_Delete(computes);
	cJSON_Delete(aml);
	cJSON_Delete(sing);
}

/* Four free A100 nodes, 8 GPUs each, and every gate the charge reaches. */
static const char charge_nodes_json[] =
	"{\"items\": ["
	"{\"metadata\": {\"name\": \"a0\", \"labels\": {" A100 "}}, \"spec\": {" GPU_TAINT "}, \"status\": {" ALLOC ", " READY "}},"
	"{\"metadata\": {\"name\": \"a1\", \"labels\": {" A100 "}}, \"spec\": {" GPU_TAINT "}, \"status\": {" ALLOC ", " READY "}},"
	"{\"metadata\": {\"name\": \"a2\", \"labels\": {" A100 "}}, \"spec\": {" GPU_TAINT "}, \"status\": {" ALLOC ", " READY "}},"
	"{\"metadata\": {\"name\": \"a3\", \"labels\": {" A100 "}}, \"spec\": {" GPU_TAINT "}, \"status\": {" ALLOC ", " READY "}}"
	"]}";

static const char charge_cqs_json[] =
	"{\"items\": [{\"metadata\": {\"name\": \"team-a\"}, \"spec\": {\"resourceGroups\": [{"
	" \"coveredResources\": [\"nvidia.com/gpu\"], \"flavors\": ["
	" {\"name\": \"a100\", \"resources\": [{\"name\": \"nvidia.com/gpu\", \"nominalQuota\": 32}]}]}]},"
	" \"status\": {\"conditions\": [{\"type\": \"Active\", \"status\": \"True\"}]}}]}";

/*
 * A snapshot charged with the placements made from it: each case charges
 * the same job `charges` times (a job that no longer fits charges
 * nothing), then judges it once more. The volcano job takes 16 GPUs on
 * two nodes, the kube job 8 on one, the aml job 4 nodes, the sing job 16
 * Premium units.
 */
static void charged_with_placements(void **state)
{
	static const struct {
		const char *what;
		const char *job;
		int queue_gpus;      /* the Volcano queue's capability */
		int charges;
		enum aj_place_state want;
		const char *reason;
	} cases[] = {
		{ "queue, none", volcano_job, 32, 0, AJ_PLACE_FITS,
		  "queue default: 32 of 32 nvidia.com/gpu free; all 2 pods fit on 2 of 4 matching nodes" },
		{ "queue, one", volcano_job, 32, 1, AJ_PLACE_FITS,
		  "queue default: 16 of 32 nvidia.com/gpu free after 1 placement since the last read; "
		  "all 2 pods fit on 2 of 4 matching nodes (room on 2 taken since the last read)" },
		{ "queue full", volcano_job, 32, 2, AJ_PLACE_FULL,
		  "queue default: capability nvidia.com/gpu 32, allocated 32 after 2 placements since "
		  "the last read, the job asks 16" },
		/* the third did not fit: nothing more charged */
		{ "queue full, not charged", volcano_job, 32, 3, AJ_PLACE_FULL,
		  "queue default: capability nvidia.com/gpu 32, allocated 32 after 2 placements since "
		  "the last read, the job asks 16" },
		{ "nodes full", volcano_job, 128, 2, AJ_PLACE_FULL,
		  "4 matching nodes have room for 0 of the 2 pods of task worker (8 nvidia.com/gpu, "
		  "16 cpu each, one per node) (room on 4 taken since the last read)" },
		{ "kueue", kube_job, 0, 3, AJ_PLACE_FITS,
		  "ClusterQueue team-a: 8 of 32 nvidia.com/gpu free after 3 placements since the last "
		  "read (flavor a100); all 2 pods fit on 1 of 4 matching nodes (room on 3 taken since "
		  "the last read)" },
		{ "kueue full", kube_job, 0, 4, AJ_PLACE_FULL,
		  "ClusterQueue team-a: 0 of 32 nvidia.com/gpu free after 4 placements since the last "
		  "read, the job asks 8" },
		{ "compute", aml_job, 0, 1, AJ_PLACE_FULL,
		  "compute gpu-cluster: 2 of 8 nodes free (6 running) after 1 placement since the last "
		  "read, the job needs 4" },
		{ "vc", sing_job, 0, 2, AJ_PLACE_FITS,
		  "virtual cluster s1/rg/vc-b: Premium quota for 2 x ND96amrs_A100_v4 (16 units), 0 left "
		  "after 2 placements since the last read" },
		/* vc-b's Premium quota taken: the lower tier of another VC, charged with nothing */
		{ "vc, lower tier", sing_job, 0, 3, AJ_PLACE_FITS,
		  "virtual cluster s1/rg/vc-c: Standard quota for 2 x ND96amrs_A100_v4 (16 units), "
		  "496 left" },
	};
	cJSON *nodes = parse(charge_nodes_json), *cqs = parse(charge_cqs_json);
	cJSON *lqs = parse(lqs_json), *flavors = parse(flavors_json), *computes = parse(computes_json);
	size_t i;
	int k;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aj_vc *vcs = aj_calloc(3, sizeof(*vcs));
		struct aj_fit_result out;
		struct aj_views_ask a;
		struct aj_views v;
		char queues[256];
		cJSON *job = parse(cases[i].job), *q;
		size_t nr = 0;

		assert_non_null(vcs);
		snprintf(queues, sizeof(queues), "{\"items\": [{\"metadata\": {\"name\": \"default\"},"
			 " \"spec\": {\"capability\": {\"nvidia.com/gpu\": %d}},"
			 " \"status\": {\"state\": \"Open\"}}]}", cases[i].queue_gpus);
		q = parse(queues);
		aj_views_init(&v);
		assert_int_equal(aj_views_set_nodes(&v, nodes, NULL), 0);
		assert_int_equal(aj_views_set_queues(&v, q), 0);
		assert_int_equal(aj_views_set_kueue(&v, cqs, lqs, flavors), 0);
		v.azure.read = 1;
		assert_int_equal(aj_views_set_computes(&v.azure, WS, computes), 0);
		add_vc(vcs, &nr, "vc-a", QUOTA("Premium", "64", "56"));
		add_vc(vcs, &nr, "vc-b", QUOTA("Premium", "64", "16"));
		add_vc(vcs, &nr, "vc-c", QUOTA("Standard", "512", "0"));
		assert_int_equal(aj_views_set_vcs(&v.azure, vcs, nr), 0);
		assert_int_equal(aj_views_ask_read(job, &a), 1);
		for (k = 0; k < cases[i].charges; k++)
			assert_int_equal(aj_views_charge(&v, &a, "training"), 0);
		assert_int_equal(aj_views_fit(&v, &a, "training", &out), 0);
		aj_test_fit_check(&out, cases[i].want, cases[i].reason, cases[i].what);
		aj_views_ask_release(&a);
		aj_views_release(&v);
		cJSON_Delete(job);
		cJSON_Delete(q);
	}
	cJSON_Delete(nodes);
	cJSON_Delete(cqs);
	cJSON_Delete(lqs);
	cJSON_Delete(flavors);
	cJSON_Delete(computes);
}

/* What a charge takes, counted: the queue, the flavor, the nodes' pods, the compute, the quota. */
static void charge_amounts(void **state)
{
	cJSON *nodes = parse(charge_nodes_json), *cqs = parse(charge_cqs_json), *lqs = parse(lqs_json);
	cJSON *flavors = parse(flavors_json), *computes = parse(computes_json);
	cJSON *queues = parse("{\"items\": [{\"metadata\": {\"name\": \"default\"},"
			      " \"spec\": {\"capability\": {\"nvidia.com/gpu\": \"64\"}},"
			      " \"status\": {\"allocated\": {\"nvidia.com/gpu\": \"8\"}}}]}");
	cJSON *vj = parse(volcano_job), *kj = parse(kube_job), *aj = parse(aml_job), *sj = parse(sing_job);
	struct aj_vc *vcs = aj_calloc(1, sizeof(*vcs));
	struct aj_views_ask a;
	struct aj_views v;
	size_t nr = 0;

	(void)state;
	assert_non_null(vcs);
	aj_views_init(&v);
	assert_int_equal(aj_views_set_nodes(&v, nodes, NULL), 0);
	assert_int_equal(aj_views_set_queues(&v, queues), 0);
	assert_int_equal(aj_views_set_kueue(&v, cqs, lqs, flavors), 0);
	v.azure.read = 1;
	assert_int_equal(aj_views_set_computes(&v.azure, WS, computes), 0);
	add_vc(vcs, &nr, "vc-b", QUOTA("Premium", "64", "16"));
	assert_int_equal(aj_views_set_vcs(&v.azure, vcs, nr), 0);
	/* volcano: 8 of 64 GPUs allocated, 16 more and its 32 cpu; one pod per node */
	assert_int_equal(aj_views_ask_read(vj, &a), 1);
	assert_int_equal(aj_views_charge(&v, &a, "training"), 0);
	aj_views_ask_release(&a);
	assert_int_equal(v.queues[0].allocated.v[AJ_FIT_GPU], 24);
	assert_int_equal(v.queues[0].allocated.v[AJ_FIT_CPU], 32000);
	assert_int_equal(v.queues[0].allocated.v[AJ_FIT_PODS], 2);
	assert_int_equal(v.queues[0].charged, 1);
	assert_int_equal(v.nodes[0].free.v[AJ_FIT_GPU], 0);
	assert_int_equal(v.nodes[0].free.v[AJ_FIT_CPU], 112000);
	assert_int_equal(v.nodes[0].free.v[AJ_FIT_PODS], 109);
	assert_int_equal(v.nodes[1].free.v[AJ_FIT_GPU], 0);
	assert_int_equal(v.nodes[2].free.v[AJ_FIT_GPU], 8);
	assert_int_equal(v.nodes[2].charged, 0);
	/* the nodes' allocatable is not charged: could-it-ever-fit stays the nodes empty */
	assert_int_equal(v.nodes[0].alloc.v[AJ_FIT_GPU], 8);
	/* kube: 2 pods of 4 GPUs on the first node with room (a2), the flavor's reservation */
	assert_int_equal(aj_views_ask_read(kj, &a), 1);
	assert_int_equal(aj_views_charge(&v, &a, "training"), 0);
	aj_views_ask_release(&a);
	assert_int_equal(v.cqs[0].flavors[0].reserved.v[AJ_FIT_GPU], 8);
	assert_int_equal(v.cqs[0].charged, 1);
	assert_int_equal(v.nodes[2].free.v[AJ_FIT_GPU], 0);
	assert_int_equal(v.nodes[2].free.v[AJ_FIT_PODS], 108);
	assert_int_equal(v.nodes[3].free.v[AJ_FIT_GPU], 8);
	/* the Volcano queue is not the kube job's: untouched */
	assert_int_equal(v.queues[0].allocated.v[AJ_FIT_GPU], 24);
	/* aml: the idle node, then 3 not yet allocated */
	assert_int_equal(aj_views_ask_read(aj, &a), 1);
	assert_int_equal(aj_views_charge(&v, &a, "training"), 0);
	aj_views_ask_release(&a);
	assert_int_equal(v.azure.computes[0].idle, 0);
	assert_int_equal(v.azure.computes[0].current, 6);
	assert_int_equal(v.azure.computes[0].running, 6);
	assert_int_equal(v.azure.computes[0].charged, 1);
	assert_int_equal(v.azure.computes[1].charged, 0);
	/* sing: 16 Premium units of the VC's quota, and of the user's */
	assert_int_equal(aj_views_ask_read(sj, &a), 1);
	assert_int_equal(aj_views_charge(&v, &a, "training"), 0);
	aj_views_ask_release(&a);
	assert_int_equal(v.azure.vcs[0].quotas[0].used[AJ_TIER_PREMIUM], 32);
	assert_int_equal(v.azure.vcs[0].quotas[0].user_used, 16);
	assert_non_null(v.azure.vcs_charged);
	assert_int_equal(v.azure.vcs_charged[0], 1);
	aj_views_release(&v);
	cJSON_Delete(nodes);
	cJSON_Delete(cqs);
	cJSON_Delete(lqs);
	cJSON_Delete(flavors);
	cJSON_Delete(queues);
	cJSON_Delete(computes);
	cJSON_Delete(vj);
	cJSON_Delete(kj);
	cJSON_Delete(aj);
	cJSON_Delete(sj);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nodes_less_their_pods),
		cmocka_unit_test(never_fits),
		cmocka_unit_test(volcano_candidate),
		cmocka_unit_test(kueue_candidate),
		cmocka_unit_test(azure_candidate),
		cmocka_unit_test(charged_with_placements),
		cmocka_unit_test(charge_amounts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
