/*
 * aj_reconcile (controller/reconcile.c) with the azure runner, end to end:
 * the AjJobs on a fake API server (tests/peers/ajjob_peer.py), Azure ML and
 * the identity's IMDS on tests/peers/azure_peer.py, the runner configured
 * through its own configure hook from its option values. An aml AjJob is
 * held by the finalizer, submitted, mirrored, and once deleted cancelled
 * and let go. A placement AjJob of two aml candidates fails over: its
 * first attempt's job, still queued past max_wait, is cancelled, given up
 * once Azure says Canceled (the finalizer let go), and the job placed on
 * the second under a name of its own; that one, ending on its own while
 * being cancelled, is kept. The computes of every workspace the
 * candidates name are read together, at most four workspaces. Expected
 * values written by hand
 * from controller/runner/azure.h and docs/placement.md.
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
#include "placer.h"
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

/*
 * The azure runner configured through its own hook, on workspace
 * ml-rg/ws-main of the peer, namespace ml allowed what allow says, with the
 * managed identity through the IMDS the peer plays (*tokens: the caller's
 * to free).
 */
static void *azure_runner(const struct aj_peer *azure, const char *allow,
			  struct aj_token_cache **tokens)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	const char *values[AJ_RUNNER_OPTIONS_MAX] = { NULL };
	struct aj_runner_env env = { NULL, NULL, NULL };
	void *config = NULL;

	unsetenv("AZURE_CLIENT_ID");
	unsetenv("AZURE_TENANT_ID");
	unsetenv("AZURE_CLIENT_SECRET");
	unsetenv("AZURE_FEDERATED_TOKEN_FILE");
	setenv("AZURE_POD_IDENTITY_AUTHORITY_HOST", azure->base, 1);
	if (aj_identity_tokens_new(NULL, NULL, tokens, &err))
		fail_msg("identity: %s", aj_test_errors_text(&err));
	env.tokens = *tokens;
	values[0] = SUB "/ml-rg/ws-main";           /* --azure-workspace */
	values[1] = allow;                           /* --azure-allow */
	values[2] = azure->base;                     /* --azure-arm-endpoint */
	values[3] = "1";                             /* --azure-poll */
	if (aj_runner_azure.configure(values, &env, &config, &err))
		fail_msg("configure: %s", aj_test_errors_text(&err));
	assert_non_null(config);
	aj_errors_release(&err);
	return config;
}

static void an_aml_ajjob_is_held_submitted_mirrored_cancelled_and_let_go(void **state)
{
	struct aj_test_api a;
	struct aj_peer azure;
	struct aj_token_cache *tokens = NULL;
	void *config;
	size_t slot = aj_runner_slot(&aj_runner_azure);
	cJSON *ajjob;
	const char *job;
	char path[256];

	(void)state;
	(void)aj_fake_hooks;   /* azure_test.h's clock: the reconciler keeps its own */
	assert_int_equal(aj_peer_start(&azure), 0);
	assert_int_equal(aj_peer_control(&azure, "config", "{\"status_sequence\": [\"NotStarted\", \"Running\"]}"), 0);
	aj_test_api_start(&a, objects);
	config = azure_runner(&azure, "ml=workspace:*/ml-rg/ws-main", &tokens);
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
	aj_test_api_stop(&a);
	aj_peer_stop(&azure);
}

#define CANDIDATE(name, compute) \
	"\"template/" name "\": {\"base\": [], \"config\": {\"target\": {\"service\": \"aml\"," \
	" \"name\": \"" compute "\", \"gpus_per_node\": 1}, \"environment\": {\"image\": \"train:1.0\"}," \
	" \"jobs\": [{\"name\": \"train\", \"sku\": \"G1\"}]}}"

/* The azure runner's config and a placer reading Azure with it, the AjJob watched. */
static void placer_on(struct aj_test_api *a, struct aj_placer *placer, void *config)
{
	a->rec.runner_config[aj_runner_slot(&aj_runner_azure)] = config;
	aj_placer_init(placer);
	aj_placer_set_azure(placer, aj_runner_azure.read_views, aj_runner_azure.views_workspace, config,
			    aj_runner_azure.views_every);
	a->rec.placer = placer;
	aj_test_api_watch_ajjob(a, AJJOB);
}

static void stop(struct aj_test_api *a, struct aj_peer *azure, void *config,
		 struct aj_token_cache *tokens)
{
	aj_runner_azure.config_free(config);
	aj_token_cache_free(tokens);
	aj_test_api_stop(a);
	aj_peer_stop(azure);
}

/* What `aj run -t anywhere -n 1` writes for [pa, pb] with max_wait 30s. */
static const char placement_objects[] =
	"{\"" AJJOB "\": {\"apiVersion\": \"aj.dev/v1alpha1\", \"kind\": \"AjJob\","
	" \"metadata\": {\"name\": \"train\", \"namespace\": \"ml\", \"uid\": \"u-2\","
	"  \"resourceVersion\": \"1\", \"generation\": 1},"
	" \"spec\": {\"name\": \"template/anywhere\", \"template\": {\"base\": [], \"config\":"
	"  {\"placement\": {\"candidates\": [\"pa\", \"pb\"], \"max_wait\": \"30s\"}}},"
	"  \"components\": {" CANDIDATE("pa", "gpu-a") ", " CANDIDATE("pb", "gpu-b") "},"
	"  \"command\": [\"python\", \"train.py\"], \"nodes\": 1}}}";

/* status.placement.<key> of the AjJob on the server, and its attempt i's fields (cJSON_Delete). */
static cJSON *placement_of(const struct aj_test_api *a, const char *key, int i, const cJSON **att,
			   const char **value)
{
	cJSON *ajjob = aj_test_api_get(a, AJJOB);
	const cJSON *pst = aj_json_get(aj_json_get(ajjob, "status"), "placement");

	*att = cJSON_GetArrayItem(aj_json_get(pst, "attempts"), i);
	*value = aj_json_str(pst, key);
	return ajjob;
}

/* The AjJob's last attempt made older than max_wait. */
static void attempt_submitted_long_ago(struct aj_test_api *a)
{
	cJSON *ajjob = aj_test_api_get(a, AJJOB), *patch = cJSON_CreateObject(), *st, *pst, *att;
	char *text;

	pst = cJSON_Duplicate(aj_json_get(aj_json_get(ajjob, "status"), "placement"), 1);
	att = cJSON_GetArrayItem(cJSON_GetObjectItem(pst, "attempts"),
				 cJSON_GetArraySize(cJSON_GetObjectItem(pst, "attempts")) - 1);
	assert_non_null(att);
	cJSON_ReplaceItemInObject(att, "submitted", cJSON_CreateString("2020-01-01T00:00:00Z"));
	st = cJSON_AddObjectToObject(patch, "status");
	cJSON_AddItemToObject(st, "placement", pst);
	text = cJSON_PrintUnformatted(patch);
	aj_test_api_patch(a, AJJOB, text);
	cJSON_free(text);
	cJSON_Delete(patch);
	cJSON_Delete(ajjob);
	aj_test_api_watch_ajjob(a, AJJOB);
}

static void an_azure_attempt_fails_over_once_azure_says_canceled(void **state)
{
	struct aj_test_api a;
	struct aj_peer azure;
	struct aj_placer placer;
	struct aj_token_cache *tokens = NULL;
	void *config;
	cJSON *ajjob;
	char first[128], path[256];
	const char *job, *chosen;
	const cJSON *att;

	(void)state;
	assert_int_equal(aj_peer_start(&azure), 0);
	/* jobs stay queued: the first attempt never starts */
	assert_int_equal(aj_peer_control(&azure, "config", "{\"status_sequence\": [\"NotStarted\", \"Queued\"],"
		" \"computes\": {\"gpu-a\": {\"max\": 4}, \"gpu-b\": {\"max\": 4}}}"), 0);
	aj_test_api_start(&a, placement_objects);
	config = azure_runner(&azure, "ml=workspace:*/ml-rg/ws-main", &tokens);
	placer_on(&a, &placer, config);

	/* placed on pa (both computes have room: the user's order), held, submitted */
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 1, AJ_ACTION_NORMAL);
	ajjob = placement_of(&a, "chosen", 0, &att, &chosen);
	assert_string_equal(chosen, "template/pa");
	job = aj_json_str(aj_json_get(aj_json_get(ajjob, "status"), "azure"), "jobName");
	assert_non_null(job);
	snprintf(first, sizeof(first), "%s", job);
	cJSON_Delete(ajjob);
	assert_int_equal(aj_peer_count(&azure, "/computes"), 1);

	/* past max_wait, still queued: cancelled */
	attempt_submitted_long_ago(&a);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 5, AJ_ACTION_IDLE);
	snprintf(path, sizeof(path), "/jobs/%s/cancel", first);
	assert_int_equal(requests(&azure, "POST", path), 1);
	ajjob = placement_of(&a, "chosen", 0, &att, &chosen);
	assert_string_equal(aj_json_str(att, "outcome"), "Cancelling");
	cJSON_Delete(ajjob);
	/* CancelRequested: wait */
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 5, AJ_ACTION_IDLE);
	/* Canceled: given up, the finalizer let go, placed again */
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 0, AJ_ACTION_NORMAL);
	ajjob = placement_of(&a, "chosen", 0, &att, &chosen);
	assert_string_equal(aj_json_str(att, "outcome"), "GaveUp");
	assert_null(chosen);
	assert_null(aj_test_status_of(ajjob, "backend"));
	assert_int_equal(cJSON_GetArraySize(aj_json_get(aj_json_get(ajjob, "metadata"), "finalizers")), 0);
	cJSON_Delete(ajjob);
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 1, AJ_ACTION_NORMAL);
	ajjob = placement_of(&a, "chosen", 1, &att, &chosen);
	assert_string_equal(chosen, "template/pb");
	job = aj_json_str(aj_json_get(aj_json_get(ajjob, "status"), "azure"), "jobName");
	assert_non_null(job);
	/* a job of its own, on the second compute: never the Canceled one */
	assert_string_not_equal(job, first);
	snprintf(path, sizeof(path), "/jobs/%s", job);
	assert_int_equal(requests(&azure, "PUT", path), 1);
	assert_string_equal(cJSON_GetArrayItem(aj_json_get(aj_json_get(ajjob, "metadata"), "finalizers"),
					       0)->valuestring, AJ_AZURE_FINALIZER);
	snprintf(first, sizeof(first), "%s", job);
	cJSON_Delete(ajjob);

	/* the second attempt past max_wait too: cancelled, but it ends on its own first: kept */
	aj_test_api_watch_ajjob(&a, AJJOB);
	attempt_submitted_long_ago(&a);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 5, AJ_ACTION_IDLE);
	snprintf(path, sizeof(path), "{\"name\": \"%s\", \"status\": \"Completed\"}", first);
	assert_int_equal(aj_peer_control(&azure, "job-status", path), 0);
	aj_test_api_watch_ajjob(&a, AJJOB);
	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL);
	ajjob = placement_of(&a, "chosen", 1, &att, &chosen);
	assert_true(cJSON_IsTrue(aj_json_get(att, "startedDuringFailover")));
	/* its outcome follows the job again, to its end */
	assert_string_equal(aj_json_str(att, "outcome"), "Succeeded");
	assert_non_null(aj_json_str(att, "ended"));
	assert_string_equal(aj_test_status_of(ajjob, "phase"), "Succeeded");
	cJSON_Delete(ajjob);

	aj_placer_release(&placer);
	stop(&a, &azure, config, tokens);
}

#define CANDIDATE_IN(name, ws, compute) \
	"\"template/" name "\": {\"base\": [], \"config\": {\"target\": {\"service\": \"aml\"," \
	" \"name\": \"" compute "\", \"workspace_name\": \"" ws "\", \"gpus_per_node\": 1}," \
	" \"environment\": {\"image\": \"train:1.0\"}, \"jobs\": [{\"name\": \"train\", \"sku\": \"G1\"}]}}"

/* Five candidates in five workspaces (pa in the default), gpu-a full, gpu-b free. */
static const char workspaces_objects[] =
	"{\"" AJJOB "\": {\"apiVersion\": \"aj.dev/v1alpha1\", \"kind\": \"AjJob\","
	" \"metadata\": {\"name\": \"train\", \"namespace\": \"ml\", \"uid\": \"u-3\","
	"  \"resourceVersion\": \"1\", \"generation\": 1},"
	" \"spec\": {\"name\": \"template/anywhere\", \"template\": {\"base\": [], \"config\":"
	"  {\"placement\": {\"candidates\": [\"pa\", \"pb\", \"pc\", \"pd\", \"pe\"]}}},"
	"  \"components\": {" CANDIDATE("pa", "gpu-a") ", " CANDIDATE_IN("pb", "ws-b", "gpu-a") ", "
	CANDIDATE_IN("pc", "ws-c", "gpu-a") ", " CANDIDATE_IN("pd", "ws-d", "gpu-b") ", "
	CANDIDATE_IN("pe", "ws-e", "gpu-b") "},"
	"  \"command\": [\"python\", \"train.py\"], \"nodes\": 1}}}";

/* The reason status.placement gives candidate name. */
static const char *reason_of(const cJSON *ajjob, const char *name)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, aj_json_get(aj_json_get(aj_json_get(ajjob, "status"), "placement"),
					  "candidates")) {
		if (!strcmp(aj_json_str(c, "name"), name))
			return aj_json_str(c, "reason");
	}
	return "";
}

/*
 * The computes of every workspace a candidate names, the first four, in
 * one read (one list each, the VCs once); the fifth unknown with why.
 */
static void every_workspace_named_is_read(void **state)
{
	struct aj_test_api a;
	struct aj_peer azure;
	struct aj_placer placer;
	struct aj_token_cache *tokens = NULL;
	void *config;
	const char *chosen;
	const cJSON *att;
	cJSON *ajjob;

	(void)state;
	assert_int_equal(aj_peer_start(&azure), 0);
	assert_int_equal(aj_peer_control(&azure, "config", "{\"status_sequence\": [\"Queued\"],"
		" \"subscriptions\": [{\"subscriptionId\": \"" SUB "\", \"state\": \"Enabled\"}],"
		" \"computes\": {\"gpu-a\": {\"max\": 4, \"current\": 4, \"running\": 4},"
		" \"gpu-b\": {\"max\": 4}}}"), 0);
	aj_test_api_start(&a, workspaces_objects);
	config = azure_runner(&azure, "ml=workspace:*/ml-rg/*", &tokens);
	placer_on(&a, &placer, config);

	aj_test_api_reconcile(&a, "ml/train", AJ_ACTION_AGAIN, 1, AJ_ACTION_NORMAL);
	ajjob = placement_of(&a, "chosen", 0, &att, &chosen);
	/* pa, pb, pc full in their workspaces; pd has room in ws-d */
	assert_string_equal(chosen, "template/pd");
	assert_string_equal(reason_of(ajjob, "template/pa"),
			    "compute gpu-a: 0 of 4 nodes free (4 running), the job needs 1");
	assert_string_equal(reason_of(ajjob, "template/pc"),
			    "compute gpu-a: 0 of 4 nodes free (4 running), the job needs 1");
	assert_string_equal(reason_of(ajjob, "template/pd"), "compute gpu-b: 4 of 4 nodes free");
	assert_string_equal(reason_of(ajjob, "template/pe"),
			    "Azure ML computes unknown: workspace ws-e is not read: placement reads the "
			    "computes of the first 4 workspaces named");
	cJSON_Delete(ajjob);
	assert_int_equal(requests(&azure, "GET", "/workspaces/ws-main/computes"), 1);
	assert_int_equal(requests(&azure, "GET", "/workspaces/ws-b/computes"), 1);
	assert_int_equal(requests(&azure, "GET", "/workspaces/ws-d/computes"), 1);
	assert_int_equal(requests(&azure, "GET", "/workspaces/ws-e/computes"), 0);
	assert_int_equal(requests(&azure, "POST", "Microsoft.ResourceGraph"), 1);
	/* submitted where its template says */
	assert_int_equal(requests(&azure, "PUT", "/workspaces/ws-d/jobs/"), 1);

	aj_placer_release(&placer);
	stop(&a, &azure, config, tokens);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(an_aml_ajjob_is_held_submitted_mirrored_cancelled_and_let_go),
		cmocka_unit_test(an_azure_attempt_fails_over_once_azure_says_canceled),
		cmocka_unit_test(every_workspace_named_is_read),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
