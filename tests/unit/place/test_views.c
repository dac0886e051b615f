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

#include "place/views.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(nodes_less_their_pods),
		cmocka_unit_test(never_fits),
		cmocka_unit_test(volcano_candidate),
		cmocka_unit_test(kueue_candidate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
