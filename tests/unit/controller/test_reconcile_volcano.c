/*
 * aj_reconcile (controller/reconcile.c) with the volcano runner, end to end
 * against a fake API server (tests/peers/ajjob_peer.py): each turn feeds the
 * cache as the watches would, reconciles once, and checks what was written
 * to the server (the Volcano Job, the AjJob's status, the Events) and the
 * one action the worker would queue. Expected values are written by hand
 * from docs/controller.md.
 */
#include "support.h"

#include <string.h>

#include "api.h"
#include "core/json.h"
#include "placer.h"
#include "podfail.h"
#include "runner/volcano.h"

#define AJJOB "/apis/aj.dev/v1alpha1/namespaces/ml/ajjobs/train"
#define VCJOB "/apis/batch.volcano.sh/v1alpha1/namespaces/ml/jobs/train"

static void a_volcano_ajjob_from_creation_to_expiry(void **state)
{
	struct aj_test_api a;
	cJSON *job, *ajjob;

	(void)state;
	aj_test_api_start(&a, aj_test_api_train("volcano"));
	aj_test_api_watch_ajjob(&a, AJJOB);

	/* new: resolved, built and created; its status waits behind other creates */
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 0, AJ_ACTION_LOW);
	job = aj_test_api_get(&a, VCJOB);
	assert_non_null(job);
	assert_string_equal(aj_json_str(cJSON_GetArrayItem(aj_json_get(aj_json_get(job, "metadata"),
					 "ownerReferences"), 0), "uid"), "u-1");
	assert_string_equal(aj_json_str(aj_json_get(job, "spec"), "schedulerName"), "volcano");
	cJSON_Delete(job);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_null(aj_json_get(ajjob, "status"));
	cJSON_Delete(ajjob);

	/* the watch brings the Volcano Job: recorded, and looked at again after the grace */
	aj_test_api_watch_owned(&a, &aj_runner_volcano, VCJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_GRACE + 1, AJ_ACTION_IDLE);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Submitted");
	assert_string_equal(aj_test_status_of(ajjob, "backend"), "volcano");
	assert_string_equal(aj_json_str(aj_json_get(aj_json_get(ajjob, "status"), "volcano"),
					"jobName"), "train");
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "VolcanoJobCreated");

	/* Running */
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_patch(&a, VCJOB, "{\"status\": {\"state\": {\"phase\": \"Running\"}}}");
	aj_test_api_watch_owned(&a, &aj_runner_volcano, VCJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Running");
	assert_string_equal(aj_test_status_of(ajjob, "message"), "Volcano Job train is Running");
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "VolcanoJobCreated VolcanoJobRunning");

	/* Completed: Succeeded, told once */
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_patch(&a, VCJOB, "{\"status\": {\"state\": {\"phase\": \"Completed\"}}}");
	aj_test_api_watch_owned(&a, &aj_runner_volcano, VCJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Succeeded");
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "VolcanoJobCompleted VolcanoJobCreated VolcanoJobRunning");

	/* finished: kept (no time to live), then kept for one, then deleted once it is up */
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	a.rec.ttl_after_finished = 600;
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 600, AJ_ACTION_NORMAL);
	a.rec.ttl_after_finished = 0;
	aj_test_api_patch(&a, AJJOB, "{\"spec\": {\"ttlSecondsAfterFinished\": 1}}");
	aj_test_api_patch(&a, AJJOB, "{\"status\": {\"conditions\": [{\"type\": \"Succeeded\", "
			  "\"status\": \"True\", \"lastTransitionTime\": \"2020-01-01T00:00:00Z\"}]}}");
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	assert_null(aj_test_api_get(&a, AJJOB));
	aj_test_api_events_are(&a, "ml", "Expired VolcanoJobCompleted VolcanoJobCreated VolcanoJobRunning");
	aj_test_api_stop(&a);
}

/*
 * A pod fails with exit code 3 and Volcano deletes it before the look: the
 * pod watch's record still names the task, the pod and the exit code.
 */
static void a_failed_pod_deleted_before_the_look_is_still_named(void **state)
{
	struct aj_test_api a;
	struct aj_podfail failures;
	struct aj_pod_failure f;
	cJSON *pod, *ajjob;

	(void)state;
	aj_test_api_start(&a, aj_test_api_train("volcano"));
	assert_int_equal(aj_podfail_init(&failures, 0), 0);
	a.rec.podfail = &failures;
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 0, AJ_ACTION_LOW);
	aj_test_api_watch_owned(&a, &aj_runner_volcano, VCJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_GRACE + 1, AJ_ACTION_IDLE);
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_patch(&a, VCJOB, "{\"status\": {\"state\": {\"phase\": \"Running\"}}}");
	aj_test_api_watch_owned(&a, &aj_runner_volcano, VCJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);

	/* the pod watch's event: the worker's pod, of the Volcano Job the peer made (uid-train) */
	pod = cJSON_Parse("{\"metadata\": {\"name\": \"train-worker-0\", \"namespace\": \"ml\","
			  " \"labels\": {\"aj.dev/ajjob\": \"train\", \"aj.dev/task\": \"worker\"},"
			  " \"ownerReferences\": [{\"kind\": \"Job\", \"uid\": \"uid-train\","
			  " \"controller\": true}]},"
			  " \"status\": {\"phase\": \"Failed\", \"containerStatuses\": [{\"name\": \"main\","
			  " \"state\": {\"terminated\": {\"exitCode\": 3, \"reason\": \"Error\"}}}]}}");
	assert_int_equal(aj_pod_failure_read(pod, &f), 1);
	cJSON_Delete(pod);
	assert_int_equal(aj_podfail_put(&failures, &f), 1);

	/* Volcano failed the job and deleted its pods: the list finds none */
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_patch(&a, VCJOB, "{\"status\": {\"state\": {\"phase\": \"Failed\"},"
			  " \"retryCount\": 1}}");
	aj_test_api_watch_owned(&a, &aj_runner_volcano, VCJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Failed");
	assert_string_equal(aj_test_status_of(ajjob, "message"),
			    "Volcano Job train is Failed after 1 restart: "
			    "task worker, pod train-worker-0: exit code 3 (Error)");
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "VolcanoJobCreated VolcanoJobFailed VolcanoJobRunning");
	aj_test_api_stop(&a);
	aj_podfail_release(&failures);
}

/*
 * A job the scheduler cannot place and that could never fit the nodes: aj's
 * fact follows Volcano's words, the nodes listed by the placer once for
 * both looks (one node of 1 cpu; the job asks one pod of 2).
 */
static void a_job_that_can_never_fit_says_so(void **state)
{
#define PG_WORDS "0/0 tasks in gang unschedulable: pod group is not ready, 1 minAvailable"
#define FACT "; aj: can never fit: asks 1 pod × 2 cpu = 2; the schedulable nodes hold 1"
	static const char more[] =
		", \"/api/v1/nodes/n0\": {\"metadata\": {\"name\": \"n0\"},"
		" \"status\": {\"allocatable\": {\"cpu\": \"1\", \"memory\": \"8Gi\", \"pods\": \"110\"},"
		"  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}},"
		" \"/apis/scheduling.volcano.sh/v1beta1/namespaces/ml/podgroups/train-uid-train\": {"
		"  \"metadata\": {\"name\": \"train-uid-train\", \"namespace\": \"ml\"},"
		"  \"status\": {\"conditions\": [{\"type\": \"Unschedulable\", \"status\": \"True\","
		"   \"message\": \"" PG_WORDS "\"}]}}}";
	const char *train = aj_test_api_train("volcano");
	char objects[4096];
	struct aj_test_api a;
	struct aj_placer placer;
	cJSON *ajjob, *events, *e;
	const char *cond = NULL;
	int told = 0;

	(void)state;
	/* the store of the tests, its closing brace replaced by the node and the PodGroup */
	snprintf(objects, sizeof(objects), "%.*s%s", (int)strlen(train) - 1, train, more);
	aj_placer_init(&placer);
	aj_test_api_start(&a, objects);
	a.rec.placer = &placer;
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 0, AJ_ACTION_LOW);
	aj_test_api_watch_owned(&a, &aj_runner_volcano, VCJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_GRACE + 1, AJ_ACTION_IDLE);
	/* submitted long ago, its look due: the scheduler is asked why */
	aj_test_api_look_due(&a, AJJOB, "ml/train", 1);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_MAX, AJ_ACTION_IDLE);

	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "message"),
			    "Volcano Job train is Pending: " PG_WORDS FACT);
	cJSON_ArrayForEach(e, aj_json_get(aj_json_get(ajjob, "status"), "conditions")) {
		if (!strcmp(aj_json_str(e, "type"), "Unschedulable"))
			cond = aj_json_str(e, "message");
	}
	assert_non_null(cond);
	assert_string_equal(cond, PG_WORDS FACT);
	cJSON_Delete(ajjob);
	/* looked at again: the same words, told once; the nodes come from the kept view */
	aj_test_api_look_due(&a, AJJOB, "ml/train", 0);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, AJ_REASON_MAX, AJ_ACTION_IDLE);
	assert_int_equal(aj_test_api_gets(&a, "/api/v1/nodes", NULL), 1);
	events = aj_test_api_list(&a, "/apis/events.k8s.io/v1/namespaces/ml/events");
	cJSON_ArrayForEach(e, events) {
		if (!strcmp(aj_json_str(e, "reason"), "Unschedulable")) {
			assert_string_equal(aj_json_str(e, "type"), "Warning");
			assert_string_equal(aj_json_str(e, "note"), PG_WORDS FACT);
			told++;
		}
	}
	assert_int_equal(told, 1);
	cJSON_Delete(events);
	aj_test_api_stop(&a);
	aj_placer_release(&placer);
#undef PG_WORDS
#undef FACT
}

/* An AjJob that resolves to no runner is failed, under the table's first service. */
static void an_unresolvable_ajjob_fails_without_a_runner(void **state)
{
	struct aj_test_api a;
	cJSON *ajjob;

	(void)state;
	aj_test_api_start(&a, aj_test_api_train("volcano"));
	aj_test_api_patch(&a, AJJOB, "{\"spec\": {\"template\": {\"base\": [], \"config\": "
			  "{\"target\": {\"service\": \"nowhere\"}}}}}");
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Failed");
	assert_string_equal(aj_test_status_of(ajjob, "backend"), aj_runner_default_service());
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "InvalidTemplate");
	assert_null(aj_test_api_get(&a, VCJOB));
	aj_test_api_stop(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_volcano_ajjob_from_creation_to_expiry),
		cmocka_unit_test(a_failed_pod_deleted_before_the_look_is_still_named),
		cmocka_unit_test(a_job_that_can_never_fit_says_so),
		cmocka_unit_test(an_unresolvable_ajjob_fails_without_a_runner),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
