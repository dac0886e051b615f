/*
 * aj_reconcile (controller/reconcile.c) with the kube runner, end to end
 * against a fake API server (tests/peers/ajjob_peer.py): each turn feeds the
 * cache as the watches would, reconciles once, and checks what was written
 * to the server (the Job and its Service, the AjJob's status, the Events, the
 * read of a queued Job's Kueue Workload) and the one action the worker would queue. Expected values are written by hand
 * from docs/controller.md.
 */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "api.h"
#include "core/json.h"
#include "placer.h"
#include "runner/kube.h"

#define AJJOB "/apis/aj.dev/v1alpha1/namespaces/ml/ajjobs/train"
#define JOB "/apis/batch/v1/namespaces/ml/jobs/train"
#define SERVICE "/api/v1/namespaces/ml/services/train"
#define WORKLOADS "/apis/kueue.x-k8s.io/v1beta2/namespaces/ml/workloads"

static void a_kube_ajjob_from_creation_to_cancelled(void **state)
{
	struct aj_test_api a;
	cJSON *job, *ajjob;

	(void)state;
	aj_test_api_start(&a, aj_test_api_train("kube"));
	aj_test_api_watch_ajjob(&a, AJJOB);

	/* new: the Service, then the Job, both the AjJob's; its status waits behind other creates */
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 0, AJ_ACTION_LOW);
	job = aj_test_api_get(&a, SERVICE);
	assert_non_null(job);
	assert_string_equal(aj_json_str(cJSON_GetArrayItem(aj_json_get(aj_json_get(job, "metadata"),
					 "ownerReferences"), 0), "uid"), "u-1");
	cJSON_Delete(job);
	job = aj_test_api_get(&a, JOB);
	assert_non_null(job);
	assert_string_equal(aj_json_str(aj_json_get(job, "spec"), "completionMode"), "Indexed");
	cJSON_Delete(job);

	/* the watch has not brought the Job yet: its create meets it, a GET adopts it, recorded */
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_GRACE + 1, AJ_ACTION_IDLE);
	aj_test_api_watch_owned(&a, &aj_runner_kube, JOB);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Submitted");
	assert_string_equal(aj_test_status_of(ajjob, "backend"), "kube");
	assert_string_equal(aj_json_str(aj_json_get(aj_json_get(ajjob, "status"), "kube"),
					"jobName"), "train");
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "KubeJobCreated");

	/* a pod ready: Running */
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_patch(&a, JOB, "{\"status\": {\"active\": 1, \"ready\": 1}}");
	aj_test_api_watch_owned(&a, &aj_runner_kube, JOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Running");
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "KubeJobCreated KubeJobRunning");

	/* cancel asked: the Job is deleted, Cancelling */
	aj_test_api_patch(&a, AJJOB, "{\"metadata\": {\"annotations\": {\"aj.dev/cancel\": \"true\"}}}");
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	assert_null(aj_test_api_get(&a, JOB));
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Cancelling");
	cJSON_Delete(ajjob);

	/* the watch says the Job went; no pod is left: Cancelled */
	aj_cache_owned_delete(&a.cache, aj_runner_slot(&aj_runner_kube), "ml/train");
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Cancelled");
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "Cancelled Cancelling KubeJobCreated KubeJobRunning");
	aj_test_api_stop(&a);
}

/* The Workload Kueue made for the Job (the peer gives the Job uid-train), up to its status. */
#define WORKLOAD_HEAD                                                                          \
	"\"" WORKLOADS "/job-train-3f2a1\": {"                                                   \
	"\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Workload\","                    \
	" \"metadata\": {\"name\": \"job-train-3f2a1\", \"namespace\": \"ml\","                  \
	"  \"labels\": {\"kueue.x-k8s.io/job-uid\": \"uid-train\"}},"                            \
	" \"spec\": {\"queueName\": \"team-a\"},"

/*
 * The store of objects started, the AjJob's Job created and recorded, then
 * given Kueue's queue label and `more` (members of the Job beside its
 * metadata, as Kueue and the Job controller leave them) as the watch brings it.
 */
static void queued_job(struct aj_test_api *a, const char *objects, const char *more)
{
	char patch[512];

	aj_test_api_start(a, objects);
	aj_test_api_watch_ajjob(a, AJJOB);
	aj_test_api_reconcile(a, "ml/train", AJ_ACTION_AGAIN, 0, AJ_ACTION_LOW);
	aj_test_api_reconcile(a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_GRACE + 1, AJ_ACTION_IDLE);
	snprintf(patch, sizeof(patch), "{\"metadata\": {\"labels\": {\"kueue.x-k8s.io/queue-name\":"
		 " \"team-a\"}}, %s}", more);
	aj_test_api_patch(a, JOB, patch);
	aj_test_api_watch_owned(a, &aj_runner_kube, JOB);
}

/*
 * A Job with Kueue's queue label that Kueue has let go: the reconcile asks
 * what Kueue says of it (its Workload by the job-uid label, from the API
 * server's cache) and the status names the ClusterQueue that admitted it.
 */
static void a_queued_job_names_its_cluster_queue(void **state)
{
	static char objects[4096];
	const char *train = aj_test_api_train("kube");
	struct aj_test_api a;
	cJSON *ajjob, *q;

	(void)state;
	/* the store: the AjJob, and the Workload Kueue made for its Job (the peer gives it uid-train) */
	snprintf(objects, sizeof(objects), "%.*s, " WORKLOAD_HEAD
		 " \"status\": {\"admission\": {\"clusterQueue\": \"team-a\"}, \"conditions\": ["
		 "  {\"type\": \"QuotaReserved\", \"status\": \"True\", \"reason\": \"QuotaReserved\","
		 "   \"message\": \"Quota reserved in ClusterQueue team-a\"},"
		 "  {\"type\": \"Admitted\", \"status\": \"True\", \"reason\": \"Admitted\","
		 "   \"message\": \"The workload is admitted\"}]}}}",
		 (int)strlen(train) - 1, train);
	/* Kueue admitted and unsuspended the Job: one pod, not ready yet */
	queued_job(&a, objects, "\"status\": {\"active\": 1, \"ready\": 0}");
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Submitted");
	assert_string_equal(aj_test_status_of(ajjob, "message"), "Job train is pending: 1 pods active, "
			    "none ready; admitted by Kueue to ClusterQueue team-a");
	cJSON_Delete(ajjob);
	/* one Workload asked for, by its label, from the API server's cache */
	assert_int_equal(aj_test_api_gets(&a, WORKLOADS, &q), 1);
	assert_non_null(q);
	assert_string_equal(cJSON_GetArrayItem(aj_json_get(q, "labelSelector"), 0)->valuestring,
			    "kueue.x-k8s.io/job-uid=uid-train");
	assert_string_equal(cJSON_GetArrayItem(aj_json_get(q, "resourceVersion"), 0)->valuestring,
			    "0");
	cJSON_Delete(q);
	aj_test_api_stop(&a);
}

/*
 * A Job Kueue does not admit and that could never fit the nodes: aj's fact
 * follows Kueue's words (one node of 1 cpu; the Job asks one pod of 2).
 */
static void a_queued_job_that_can_never_fit_says_so(void **state)
{
#define KUEUE_WORDS "Pending: couldn't assign flavors to pod set main: insufficient quota for cpu"
#define FACT "; aj: can never fit: asks 1 pod × 2 cpu = 2; the schedulable nodes hold 1"
	static char objects[4096];
	const char *train = aj_test_api_train("kube");
	struct aj_placer placer;
	struct aj_test_api a;
	cJSON *ajjob;

	(void)state;
	snprintf(objects, sizeof(objects), "%.*s, " WORKLOAD_HEAD
		 " \"status\": {\"conditions\": [{\"type\": \"QuotaReserved\", \"status\": \"False\","
		 "  \"reason\": \"Pending\", \"message\": \"couldn't assign flavors to pod set main:"
		 " insufficient quota for cpu\"}]}},"
		 " \"/api/v1/nodes/n0\": {\"metadata\": {\"name\": \"n0\"},"
		 " \"status\": {\"allocatable\": {\"cpu\": \"1\", \"memory\": \"8Gi\", \"pods\": \"110\"},"
		 "  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}}",
		 (int)strlen(train) - 1, train);
	/* Kueue keeps the Job suspended; submitted long ago, its look due */
	queued_job(&a, objects, "\"spec\": {\"suspend\": true}");
	aj_placer_init(&placer);
	a.rec.placer = &placer;
	aj_test_api_look_due(&a, AJJOB, "ml/train", 1);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_MAX, AJ_ACTION_IDLE);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "message"),
			    "Job train is suspended, not admitted by Kueue: " KUEUE_WORDS FACT);
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "KubeJobCreated KubeJobSuspended Unschedulable");
	aj_test_api_stop(&a);
	aj_placer_release(&placer);
#undef KUEUE_WORDS
#undef FACT
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_kube_ajjob_from_creation_to_cancelled),
		cmocka_unit_test(a_queued_job_names_its_cluster_queue),
		cmocka_unit_test(a_queued_job_that_can_never_fit_says_so),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
