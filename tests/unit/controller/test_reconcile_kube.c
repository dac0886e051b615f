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

/* The query of the peer's first GET of path (a JSON object of lists), or NULL. */
static cJSON *query_of_get(const struct aj_test_api *a, const char *path)
{
	FILE *f = fopen(a->p.log, "r");
	char line[8192];
	cJSON *found = NULL;

	assert_non_null(f);
	while (!found && fgets(line, sizeof(line), f)) {
		cJSON *req = cJSON_Parse(line);

		if (req && !strcmp(aj_json_str(req, "method"), "GET") &&
		    !strcmp(aj_json_str(req, "path"), path))
			found = cJSON_DetachItemFromObjectCaseSensitive(req, "query");
		cJSON_Delete(req);
	}
	fclose(f);
	return found;
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
	snprintf(objects, sizeof(objects), "%.*s, \"" WORKLOADS "/job-train-3f2a1\": {"
		 "\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"Workload\","
		 " \"metadata\": {\"name\": \"job-train-3f2a1\", \"namespace\": \"ml\","
		 "  \"labels\": {\"kueue.x-k8s.io/job-uid\": \"uid-train\"}},"
		 " \"spec\": {\"queueName\": \"team-a\"},"
		 " \"status\": {\"admission\": {\"clusterQueue\": \"team-a\"}, \"conditions\": ["
		 "  {\"type\": \"QuotaReserved\", \"status\": \"True\", \"reason\": \"QuotaReserved\","
		 "   \"message\": \"Quota reserved in ClusterQueue team-a\"},"
		 "  {\"type\": \"Admitted\", \"status\": \"True\", \"reason\": \"Admitted\","
		 "   \"message\": \"The workload is admitted\"}]}}}",
		 (int)strlen(train) - 1, train);
	aj_test_api_start(&a, objects);
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 0, AJ_ACTION_LOW);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_GRACE + 1, AJ_ACTION_IDLE);

	/* Kueue admitted and unsuspended the Job: one pod, not ready yet */
	aj_test_api_patch(&a, JOB, "{\"metadata\": {\"labels\": {\"kueue.x-k8s.io/queue-name\":"
			  " \"team-a\"}}, \"status\": {\"active\": 1, \"ready\": 0}}");
	aj_test_api_watch_owned(&a, &aj_runner_kube, JOB);
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Submitted");
	assert_string_equal(aj_test_status_of(ajjob, "message"), "Job train is pending: 1 pods active, "
			    "none ready; admitted by Kueue to ClusterQueue team-a");
	cJSON_Delete(ajjob);
	/* one Workload asked for, by its label, from the API server's cache */
	q = query_of_get(&a, WORKLOADS);
	assert_non_null(q);
	assert_string_equal(cJSON_GetArrayItem(aj_json_get(q, "labelSelector"), 0)->valuestring,
			    "kueue.x-k8s.io/job-uid=uid-train");
	assert_string_equal(cJSON_GetArrayItem(aj_json_get(q, "resourceVersion"), 0)->valuestring,
			    "0");
	cJSON_Delete(q);
	aj_test_api_stop(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_kube_ajjob_from_creation_to_cancelled),
		cmocka_unit_test(a_queued_job_names_its_cluster_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
