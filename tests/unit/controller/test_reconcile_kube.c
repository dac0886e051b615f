/*
 * aj_reconcile (controller/reconcile.c) with the kube runner, end to end
 * against a fake API server (tests/peers/ajjob_peer.py): each turn feeds the
 * cache as the watches would, reconciles once, and checks what was written
 * to the server (the Job and its Service, the AjJob's status, the Events) and the
 * one action the worker would queue. Expected values are written by hand
 * from docs/controller.md.
 */
#include "support.h"

#include <string.h>

#include "api.h"
#include "core/json.h"
#include "runner/kube.h"

#define AJJOB "/apis/aj.dev/v1alpha1/namespaces/ml/ajjobs/train"
#define JOB "/apis/batch/v1/namespaces/ml/jobs/train"
#define SERVICE "/api/v1/namespaces/ml/services/train"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_kube_ajjob_from_creation_to_cancelled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
