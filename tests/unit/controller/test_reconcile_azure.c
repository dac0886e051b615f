/*
 * aj_reconcile (controller/reconcile.c) with the azure runner, end to end:
 * the AjJobs on a fake API server (tests/peers/ajjob_peer.py), Azure ML and
 * the identity's IMDS on tests/peers/azure_peer.py, the runner configured
 * through its own configure hook from its option values. An aml AjJob is
 * held by the finalizer, submitted, mirrored, and once deleted cancelled
 * and let go. Expected values written by hand from controller/runner/azure.h.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "../../peers/azure_test.h"
#include "api.h"
#include "azure/credential.h"
#include "core/error.h"
#include "core/json.h"
#include "identity.h"
#include "runner/azure.h"

#define AJJOB "/apis/aj.dev/v1alpha1/namespaces/ml/ajjobs/train"
#define SUB "00000000-0000-0000-0000-000000000001"

static const char objects[] =
	"{\"" AJJOB "\": {\"apiVersion\": \"aj.dev/v1alpha1\", \"kind\": \"AjJob\","
	" \"metadata\": {\"name\": \"train\", \"namespace\": \"ml\", \"uid\": \"u-1\","
	"  \"resourceVersion\": \"1\", \"generation\": 1},"
	" \"spec\": {\"name\": \"template/train\", \"template\": {\"base\": [], \"config\": {"
	"  \"target\": {\"service\": \"aml\", \"name\": \"gpu-cluster\", \"gpus_per_node\": 1},"
	"  \"environment\": {\"image\": \"train:1.0\"},"
	"  \"jobs\": [{\"name\": \"train\", \"sku\": \"G1\", \"instance_count\": 2}]}},"
	" \"command\": [\"python\", \"train.py\"]}}}";

/* Requests of method to a path holding fragment. */
static int requests(const struct aj_peer *p, const char *method, const char *fragment)
{
	cJSON *all = aj_peer_requests(p), *r;
	int n = 0;

	cJSON_ArrayForEach(r, all) {
		const char *m = aj_json_str(r, "method"), *path = aj_json_str(r, "path");

		if (m && path && !strcmp(m, method) && strstr(path, fragment))
			n++;
	}
	cJSON_Delete(all);
	return n;
}

static void an_aml_ajjob_is_held_submitted_mirrored_cancelled_and_let_go(void **state)
{
	struct aj_test_api a;
	struct aj_peer azure;
	struct aj_token_cache *tokens = NULL;
	struct aj_errors err = AJ_ERRORS_INIT;
	const char *values[AJ_RUNNER_OPTIONS_MAX] = { NULL };
	void *config = NULL;
	size_t slot = aj_runner_slot(&aj_runner_azure);
	cJSON *ajjob;
	const char *job;
	char path[256];

	(void)state;
	(void)aj_fake_hooks;   /* azure_test.h's clock: the reconciler keeps its own */
	assert_int_equal(aj_peer_start(&azure), 0);
	assert_int_equal(aj_peer_control(&azure, "config", "{\"status_sequence\": [\"NotStarted\", \"Running\"]}"), 0);
	aj_test_api_start(&a, objects);
	/* the managed identity through IMDS, which the peer plays */
	unsetenv("AZURE_CLIENT_ID");
	unsetenv("AZURE_TENANT_ID");
	unsetenv("AZURE_CLIENT_SECRET");
	unsetenv("AZURE_FEDERATED_TOKEN_FILE");
	setenv("AZURE_POD_IDENTITY_AUTHORITY_HOST", azure.base, 1);
	if (aj_identity_tokens_new(NULL, NULL, &tokens, &err))
		fail_msg("identity: %s", aj_test_errors_text(&err));
	{
		struct aj_runner_env env = { tokens, NULL, NULL };

		values[0] = SUB "/ml-rg/ws-main";           /* --azure-workspace */
		values[1] = "ml=workspace:*/ml-rg/ws-main";  /* --azure-allow */
		values[2] = azure.base;                      /* --azure-arm-endpoint */
		values[3] = "1";                             /* --azure-poll */
		if (aj_runner_azure.configure(values, &env, &config, &err))
			fail_msg("configure: %s", aj_test_errors_text(&err));
	}
	assert_non_null(config);
	a.rec.runner_config[slot] = config;
	aj_test_api_watch_ajjob(&a, AJJOB);

	/* new: held (finalizer and workspace), submitted, mirrored; polled again after a second */
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 1, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(cJSON_GetArrayItem(aj_json_get(aj_json_get(ajjob, "metadata"), "finalizers"),
					       0)->valuestring, AJ_AZURE_FINALIZER);
	assert_string_equal(aj_test_status_of(ajjob, "backend"), "aml");
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Submitted");
	job = aj_json_str(aj_json_get(aj_json_get(ajjob, "status"), "azure"), "jobName");
	assert_non_null(job);
	assert_int_equal(strncmp(job, "k8s-ml-train-", 13), 0);
	snprintf(path, sizeof(path), "/jobs/%s", job);
	assert_int_equal(requests(&azure, "PUT", path), 1);
	cJSON_Delete(ajjob);
	aj_test_api_events_are(&a, "ml", "AzureJobNotStarted");

	/* the next poll: Running */
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 1, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Running");
	cJSON_Delete(ajjob);

	/* deleted: the job is cancelled, then the AjJob let go */
	aj_test_api_patch(&a, AJJOB, "{\"metadata\": {\"deletionTimestamp\": \"2026-01-01T00:00:00Z\"}}");
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 1, AJ_ACTION_NORMAL);
	assert_int_equal(aj_peer_count(&azure, "/cancel"), 1);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 1, AJ_ACTION_NORMAL);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = aj_test_api_get(&a, AJJOB);
	assert_int_equal(cJSON_GetArraySize(aj_json_get(aj_json_get(ajjob, "metadata"), "finalizers")),
			 0);
	cJSON_Delete(ajjob);

	aj_runner_azure.config_free(config);
	aj_token_cache_free(tokens);
	aj_errors_release(&err);
	aj_test_api_stop(&a);
	aj_peer_stop(&azure);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(an_aml_ajjob_is_held_submitted_mirrored_cancelled_and_let_go),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
