/*
 * The Azure ML / Singularity calls against the loopback peer: job names,
 * environment registration (once per image), job PUT exactly once under
 * faults (429 with Retry-After, 500, a reply lost after the service
 * committed, an expired token), GET and cancel, and VC discovery with quotas
 * feeding auto-selection. Hashes are checked against values computed with
 * Python's hashlib.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../peers/azure_test.h"
#include "arm.h"
#include "azure/aml.h"
#include "azure/arm.h"
#include "azure/credential.h"
#include "azure/vcselect.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/strlist.h"

#define SUB "00000000-1111-2222-3333-444444444444"
#define WS "/subscriptions/" SUB "/resourceGroups/test-rg" \
	"/providers/Microsoft.MachineLearningServices/workspaces/my-aml-workspace"

static struct aj_peer peer;
static struct aj_fake_clock fclock;
static const struct aj_aml_workspace ws = { SUB, "test-rg", "my-aml-workspace", NULL };

static int group_setup(void **state)
{
	(void)state;
	return aj_peer_start(&peer);
}

static int group_teardown(void **state)
{
	(void)state;
	aj_peer_stop(&peer);
	return 0;
}

static int setup(void **state)
{
	struct aj_test_arm *f = calloc(1, sizeof(*f));
	struct aj_azure_hooks hooks = aj_fake_hooks(&fclock, (int64_t)time(NULL) * 1000);

	if (!f || aj_peer_control(&peer, "reset", NULL) ||
	    aj_test_arm_open(f, peer.base, &hooks, 3))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	aj_test_arm_close(*state);
	free(*state);
	return 0;
}

/* Requests the peer saw with this method whose path ends with suffix. */
static int seen(const char *method, const char *suffix)
{
	cJSON *all = aj_peer_requests(&peer), *r;
	size_t sl = strlen(suffix);
	int n = 0;

	cJSON_ArrayForEach(r, all) {
		const char *m = cJSON_GetStringValue(cJSON_GetObjectItem(r, "method"));
		const char *p = cJSON_GetStringValue(cJSON_GetObjectItem(r, "path"));
		size_t pl = p ? strlen(p) : 0;

		if (m && p && !strcmp(m, method) && pl >= sl && !strcmp(p + pl - sl, suffix))
			n++;
	}
	cJSON_Delete(all);
	return n;
}

/* No token the peer issued appears in text. */
static void no_token_in(const char *text)
{
	cJSON *all = aj_peer_requests(&peer), *r;

	cJSON_ArrayForEach(r, all) {
		const char *auth = cJSON_GetStringValue(cJSON_GetObjectItem(
			cJSON_GetObjectItem(r, "headers"), "authorization"));

		if (auth && strlen(auth) > 7)
			assert_null(strstr(text, auth + 7));
	}
	assert_null(strstr(text, "eyJ0."));
	cJSON_Delete(all);
}

static void job_names(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	char long_name[300];

	(void)state;
	assert_int_equal(aj_aml_job_name("team-a", "train", "0d6f8a4e-1111-4c2b-9a77-5f3c2b1a0e9d",
					 &b), 0);
	assert_string_equal(aj_buf_cstr(&b), "k8s-team-a-train-a0efd73b");
	aj_buf_reset(&b);
	/* dots (allowed in Kubernetes names) are not allowed in job names */
	assert_int_equal(aj_aml_job_name("ns", "run.v2", "0d6f8a4e-1111-4c2b-9a77-5f3c2b1a0e9d",
					 &b), 0);
	assert_string_equal(aj_buf_cstr(&b), "k8s-ns-run-v2-a0efd73b");
	aj_buf_reset(&b);
	memset(long_name, 'x', 253);
	long_name[253] = '\0';
	assert_int_equal(aj_aml_job_name("ns", long_name, "u", &b), 0);
	assert_int_equal(b.len, AJ_AML_JOB_NAME_MAX);
	assert_memory_equal(aj_buf_cstr(&b), "k8s-ns-xxxx", 11);
	aj_buf_release(&b);
}

static void environment_once(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	char version[17], *id = NULL, *id2 = NULL;

	assert_int_equal(aj_aml_environment_version("registry.example.com/team/train:1.2", version), 0);
	assert_string_equal(version, "f089b45914164b3e");
	assert_int_equal(aj_aml_environment_ensure(&f->arm, &ws, "k8s-team-a",
						   "registry.example.com/team/train:1.2", &id, &e), 0);
	assert_string_equal(id, WS "/environments/k8s-team-a/versions/f089b45914164b3e");
	/* Registering again only looks. */
	assert_int_equal(aj_aml_environment_ensure(&f->arm, &ws, "k8s-team-a",
						   "registry.example.com/team/train:1.2", &id2, &e), 0);
	assert_string_equal(id, id2);
	assert_int_equal(seen("PUT", "/versions/f089b45914164b3e"), 1);
	assert_int_equal(seen("GET", "/versions/f089b45914164b3e"), 2);
	aj_free(id);
	aj_free(id2);

	/* A refusal is reported with the service's message. */
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/environments/\", \"method\": \"GET\", \"status\": 403,"
		"  \"body\": {\"error\": {\"code\": \"AuthorizationFailed\", \"message\": \"no access\"}}}]"), 0);
	assert_int_equal(aj_aml_environment_ensure(&f->arm, &ws, "k8s-team-a", "img:1", &id, &e), -1);
	assert_null(id);
	assert_true(aj_test_errors_contain(&e, "AuthorizationFailed: no access"));
	aj_errors_release(&e);
}

static void datastore_once(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	cJSON *all, *r, *put = NULL;

	assert_int_equal(aj_aml_datastore_ensure(&f->arm, &ws, "aj_out", "acct1", "results", &e), 0);
	assert_int_equal(aj_aml_datastore_ensure(&f->arm, &ws, "aj_out", "acct1", "results", &e), 0);
	assert_int_equal(seen("PUT", "/datastores/aj_out"), 1);
	assert_int_equal(seen("GET", "/datastores/aj_out"), 2);
	all = aj_peer_requests(&peer);
	cJSON_ArrayForEach(r, all)
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "method")), "PUT"))
			put = cJSON_Parse(cJSON_GetStringValue(cJSON_GetObjectItem(r, "body")));
	assert_non_null(put);
	assert_string_equal(aj_test_json_str(put, "properties.datastoreType"), "AzureBlob");
	assert_string_equal(aj_test_json_str(put, "properties.accountName"), "acct1");
	assert_string_equal(aj_test_json_str(put, "properties.containerName"), "results");
	assert_string_equal(aj_test_json_str(put, "properties.credentials.credentialsType"), "None");
	cJSON_Delete(put);
	cJSON_Delete(all);
	aj_errors_release(&e);
}

#define DIGEST "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"

static void code_version_once(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	const char *uri = "https://wsstore.blob.core.windows.net/azureml-blobstore-0000/aj-code/" DIGEST;
	char *id = NULL, *id2 = NULL;
	cJSON *all, *r, *put = NULL;

	assert_int_equal(aj_aml_code_ensure(&f->arm, &ws, "aj-code", DIGEST, uri, &id, &e), 0);
	assert_string_equal(id, WS "/codes/aj-code/versions/" DIGEST);
	/* The version exists: only a GET, no second PUT (versions are immutable). */
	assert_int_equal(aj_aml_code_ensure(&f->arm, &ws, "aj-code", DIGEST, uri, &id2, &e), 0);
	assert_string_equal(id, id2);
	assert_int_equal(seen("PUT", "/codes/aj-code/versions/" DIGEST), 1);
	assert_int_equal(seen("GET", "/codes/aj-code/versions/" DIGEST), 2);
	all = aj_peer_requests(&peer);
	cJSON_ArrayForEach(r, all)
		if (!strcmp(cJSON_GetStringValue(cJSON_GetObjectItem(r, "method")), "PUT"))
			put = cJSON_Parse(cJSON_GetStringValue(cJSON_GetObjectItem(r, "body")));
	assert_non_null(put);
	assert_string_equal(aj_test_json_str(put, "properties.codeUri"), uri);
	cJSON_Delete(put);
	cJSON_Delete(all);
	aj_free(id);
	aj_free(id2);

	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/codes/\", \"method\": \"GET\", \"status\": 403,"
		"  \"body\": {\"error\": {\"code\": \"AuthorizationFailed\", \"message\": \"no access\"}}}]"), 0);
	assert_int_equal(aj_aml_code_ensure(&f->arm, &ws, "aj-code", "v2", uri, &id, &e), -1);
	assert_null(id);
	assert_true(aj_test_errors_contain(&e, "AuthorizationFailed: no access"));
	aj_errors_release(&e);
}

static void default_datastore(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_aml_datastore d;
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);

	assert_int_equal(aj_aml_datastore_get(&f->arm, &ws, NULL, &d, &e), 0);
	assert_string_equal(d.name, "workspaceblobstore");
	assert_string_equal(d.account, "wsstore");
	assert_string_equal(d.container, "azureml-blobstore-0000");
	assert_int_equal(aj_aml_datastore_url(&d, "aj-code/x", &url), 0);
	assert_string_equal(aj_buf_cstr(&url),
			    "https://wsstore.blob.core.windows.net/azureml-blobstore-0000/aj-code/x");
	aj_aml_datastore_release(&d);
	assert_int_equal(seen("GET", "/datastores"), 1);

	/* A sovereign cloud's suffix is kept. */
	assert_int_equal(aj_peer_control(&peer, "config",
		"{\"default_datastore\": {\"datastoreType\": \"AzureBlob\", \"accountName\": \"cn\","
		" \"containerName\": \"c\", \"endpoint\": \"core.chinacloudapi.cn\","
		" \"credentials\": {\"credentialsType\": \"None\"}}}"), 0);
	aj_buf_reset(&url);
	assert_int_equal(aj_aml_datastore_get(&f->arm, &ws, "workspaceblobstore", &d, &e), 0);
	assert_int_equal(aj_aml_datastore_url(&d, NULL, &url), 0);
	assert_string_equal(aj_buf_cstr(&url), "https://cn.blob.core.chinacloudapi.cn/c");
	aj_aml_datastore_release(&d);

	/* None marked default and no workspaceblobstore: said so, by workspace. */
	assert_int_equal(aj_peer_control(&peer, "config", "{\"default_datastore\": null}"), 0);
	assert_int_equal(aj_aml_datastore_get(&f->arm, &ws, NULL, &d, &e), 1);
	assert_true(aj_test_errors_contain(&e, "workspace my-aml-workspace has no blob datastore workspaceblobstore"));
	assert_null(d.account);
	aj_buf_release(&url);
	aj_errors_release(&e);
}

static cJSON *job_body(void)
{
	cJSON *body = cJSON_CreateObject();
	cJSON *props = cJSON_AddObjectToObject(body, "properties");

	cJSON_AddStringToObject(props, "jobType", "Command");
	cJSON_AddStringToObject(props, "command", "python train.py");
	cJSON_AddStringToObject(props, "environmentId", WS "/environments/e/versions/1");
	return body;
}

/* One PUT after the given faults; returns how many jobs the peer holds. */
static int put_after_faults(struct aj_test_arm *f, const char *faults, int *created)
{
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_aml_job job;
	cJSON *body = job_body();
	struct aj_arm_response r;
	long status = 0;
	int n;

	if (faults)
		assert_int_equal(aj_peer_control(&peer, "faults", faults), 0);
	if (aj_aml_job_put(&f->arm, &ws, "k8s-ns-train-a0efd73b", body, &job, created, &status, &e))
		fail_msg("%s", aj_test_errors_text(&e));
	assert_string_equal(job.name, "k8s-ns-train-a0efd73b");
	assert_string_equal(job.status, "NotStarted");
	assert_string_equal(job.portal_url, "https://ml.azure.com/runs/k8s-ns-train-a0efd73b?wsid=" WS);
	aj_aml_job_release(&job);
	cJSON_Delete(body);
	aj_errors_release(&e);
	aj_arm_response_init(&r);
	assert_int_equal(aj_arm_request(&f->arm, "GET", WS "/jobs", AJ_AML_API_VERSION, NULL,
					&r, &e), 0);
	n = cJSON_GetArraySize(cJSON_GetObjectItem(r.json, "value"));
	aj_arm_response_release(&r);
	return n;
}

static void put_exactly_once(void **state)
{
	struct aj_test_arm *f = *state;
	int created;

	assert_int_equal(put_after_faults(f, NULL, &created), 1);
	assert_true(created);
	/* the same name again: the service updates, nothing new */
	assert_int_equal(put_after_faults(f, NULL, &created), 1);
	assert_false(created);
}

static void put_throttled(void **state)
{
	struct aj_test_arm *f = *state;
	int created;

	assert_int_equal(put_after_faults(f, "[{\"path\": \"/jobs/\", \"method\": \"PUT\", \"status\": 429,"
					  " \"headers\": {\"Retry-After\": \"7\"},"
					  " \"body\": {\"error\": {\"code\": \"TooManyRequests\", \"message\": \"slow down\"}}}]",
					  &created), 1);
	assert_true(created);
	assert_int_equal(fclock.sleeps[0], 7000);
	assert_int_equal(seen("PUT", "/jobs/k8s-ns-train-a0efd73b"), 2);
}

static void put_server_error(void **state)
{
	struct aj_test_arm *f = *state;
	int created;

	assert_int_equal(put_after_faults(f, "[{\"path\": \"/jobs/\", \"method\": \"PUT\", \"status\": 500, \"times\": 2}]",
					  &created), 1);
	assert_true(created);
	assert_int_equal(seen("PUT", "/jobs/k8s-ns-train-a0efd73b"), 3);
}

/* The service created the job but the reply never came: the retry finds it. */
static void put_reply_lost(void **state)
{
	struct aj_test_arm *f = *state;
	int created;

	assert_int_equal(put_after_faults(f, "[{\"path\": \"/jobs/\", \"method\": \"PUT\", \"lose_reply\": true}]",
					  &created), 1);
	assert_false(created);    /* the second PUT updated the job the first made */
	assert_int_equal(seen("PUT", "/jobs/k8s-ns-train-a0efd73b"), 2);
}

/* A token that expired on the service side is replaced, and the PUT lands once. */
static void put_token_expired(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_aml_job job;
	int created;

	assert_int_equal(aj_aml_job_get(&f->arm, &ws, "absent", &job, &e), 1);
	assert_int_equal(aj_peer_control(&peer, "revoke", NULL), 0);
	assert_int_equal(put_after_faults(f, NULL, &created), 1);
	assert_true(created);
	assert_int_equal(aj_peer_count(&peer, "oauth2"), 2);
	no_token_in(fclock.log);
	aj_errors_release(&e);
}

/* A refusal keeps its HTTP status and the service's messages. */
static void put_refused(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_aml_job job;
	cJSON *body = job_body();
	long status = 0;
	int created;

	cJSON_DeleteItemFromObject(cJSON_GetObjectItem(body, "properties"), "command");
	assert_int_equal(aj_aml_job_put(&f->arm, &ws, "k8s-x", body, &job, &created, &status, &e), -1);
	assert_int_equal(status, 400);
	assert_true(aj_test_errors_contain(&e, "UserError: One or more fields are invalid.; "
					   "The field command is required."));
	no_token_in(aj_test_errors_text(&e));
	cJSON_Delete(body);
	aj_errors_release(&e);
}

static void get_and_cancel(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_aml_job job;
	int created;

	assert_int_equal(put_after_faults(f, NULL, &created), 1);
	assert_int_equal(aj_aml_job_get(&f->arm, &ws, "k8s-ns-train-a0efd73b", &job, &e), 0);
	assert_string_equal(job.status, "Queued");
	assert_int_equal(aj_aml_state_of(job.status), AJ_AML_QUEUED);
	aj_aml_job_release(&job);
	assert_int_equal(aj_aml_job_get(&f->arm, &ws, "k8s-ns-train-a0efd73b", &job, &e), 0);
	assert_string_equal(job.status, "Running");
	aj_aml_job_release(&job);

	assert_int_equal(aj_aml_job_cancel(&f->arm, &ws, "k8s-ns-train-a0efd73b", &e), 0);
	assert_int_equal(aj_aml_job_get(&f->arm, &ws, "k8s-ns-train-a0efd73b", &job, &e), 0);
	assert_string_equal(job.status, "CancelRequested");
	assert_false(aj_aml_state_terminal(aj_aml_state_of(job.status)));
	aj_aml_job_release(&job);
	assert_int_equal(aj_aml_job_get(&f->arm, &ws, "k8s-ns-train-a0efd73b", &job, &e), 0);
	assert_string_equal(job.status, "Canceled");
	assert_int_equal(aj_aml_state_of(job.status), AJ_AML_CANCELED);
	aj_aml_job_release(&job);

	assert_int_equal(aj_aml_job_cancel(&f->arm, &ws, "never-made", &e), 1);
	assert_int_equal(aj_aml_job_get(&f->arm, &ws, "never-made", &job, &e), 1);
	assert_true(aj_errors_empty(&e));

	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/cancel\", \"status\": 403, \"times\": 1}]"), 0);
	assert_int_equal(aj_aml_job_cancel(&f->arm, &ws, "k8s-ns-train-a0efd73b", &e), -1);
	assert_true(aj_test_errors_contain(&e, "403"));
	aj_errors_release(&e);
}

static void states(void **state)
{
	(void)state;
	assert_int_equal(aj_aml_state_of("NotStarted"), AJ_AML_QUEUED);
	assert_int_equal(aj_aml_state_of("Provisioning"), AJ_AML_QUEUED);
	assert_int_equal(aj_aml_state_of("SomethingNew"), AJ_AML_QUEUED);
	assert_int_equal(aj_aml_state_of(NULL), AJ_AML_QUEUED);
	assert_int_equal(aj_aml_state_of("Finalizing"), AJ_AML_RUNNING);
	assert_int_equal(aj_aml_state_of("NotResponding"), AJ_AML_RUNNING);
	assert_int_equal(aj_aml_state_of("Completed"), AJ_AML_COMPLETED);
	assert_int_equal(aj_aml_state_of("Failed"), AJ_AML_FAILED);
	assert_true(aj_aml_state_terminal(AJ_AML_FAILED));
	assert_false(aj_aml_state_terminal(AJ_AML_RUNNING));
}

#define VC(sub, rg, name, series, tier, limit, used) \
	"{\"subscriptionId\": \"" sub "\", \"resourceGroup\": \"" rg "\", \"name\": \"" name "\"," \
	" \"resource\": {\"location\": \"westus2\", \"properties\": {\"managed\": {\"quotas\": " \
	"{\"westus2\": {\"limits\": [{\"id\": \"" series "\", \"slaTier\": \"" tier "\"," \
	" \"limit\": " #limit ", \"used\": " #used "}]}}}}}}"

/* Discovery through Resource Graph (paged) and quotas, then selection. */
static void discover_and_select(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_strlist subs = AJ_STRLIST_INIT;
	struct aj_vc *vcs = NULL;
	struct aj_vc_request req = { "G8", 2, 0, "Standard", NULL, NULL, NULL, NULL, 0 };
	struct aj_vc_choice c;
	size_t nr = 0, i;

	assert_int_equal(aj_peer_control(&peer, "config",
		"{\"subscriptions\": [{\"subscriptionId\": \"s1\", \"state\": \"Enabled\"},"
		"  {\"subscriptionId\": \"s2\", \"state\": \"Enabled\"},"
		"  {\"subscriptionId\": \"off\", \"state\": \"Disabled\"}],"
		" \"vcs\": [" VC("s1", "rg", "amd-lots", "ND_MI300X_v4", "Standard", 800, 0) ","
		VC("s2", "rg", "h100-some", "ND_H100_v5", "Standard", 64, 32) ","
		VC("s1", "rg", "a100-more", "ND_A100_v4", "Standard", 64, 16) ","
		VC("s1", "rg", "premium-only", "ND_A100_v4", "Premium", 640, 0) ","
		VC("off", "rg", "hidden", "ND_A100_v4", "Standard", 640, 0) "]}"), 0);
	assert_int_equal(aj_aml_subscriptions(&f->arm, &subs, &e), 0);
	assert_int_equal(subs.nr, 2);
	assert_int_equal(aj_aml_vc_discover(&f->arm, &subs, &vcs, &nr, &e), 0);
	assert_int_equal(nr, 4);
	assert_int_equal(seen("POST", "/providers/Microsoft.ResourceGraph/resources"), 2);
	for (i = 0; i < nr; i++)
		if (aj_aml_vc_quotas(&f->arm, &vcs[i], &e))
			fail_msg("%s", aj_test_errors_text(&e));
	if (aj_vc_select(&req, vcs, nr, &c, &e))
		fail_msg("%s", aj_test_errors_text(&e));
	/* NVIDIA first, then the most left after 16 GPUs: 48 - 16 on a100-more */
	assert_string_equal(c.chosen.vc->name, "a100-more");
	assert_string_equal(c.chosen.instance_type, "ND96amrs_A100_v4");
	assert_int_equal(c.chosen.tier, AJ_TIER_STANDARD);
	assert_int_equal(c.chosen.remaining, 32);
	assert_int_equal(c.others_nr, 3);
	assert_string_equal(c.others[0].vc->name, "h100-some");
	assert_string_equal(c.others[1].vc->name, "amd-lots");
	assert_string_equal(c.others[2].vc->name, "premium-only");
	assert_non_null(strstr(c.others[2].why, "no Standard or Basic quota for ND_A100_v4"));
	aj_vc_choice_release(&c);

	/* A VC that has gone away is told apart from a failure. */
	aj_vc_release(&vcs[0]);
	aj_vc_init(&vcs[0]);
	assert_int_equal(aj_vc_set(&vcs[0], "s1", "rg", "gone"), 0);
	assert_int_equal(aj_aml_vc_quotas(&f->arm, &vcs[0], &e), 1);
	assert_true(aj_errors_empty(&e));
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/virtualclusters/\", \"status\": 403, \"body\": {\"error\":"
		" {\"code\": \"AuthorizationFailed\", \"message\": \"no read\"}}}]"), 0);
	assert_int_equal(aj_aml_vc_quotas(&f->arm, &vcs[1], &e), -1);
	assert_true(aj_test_errors_contain(&e, "AuthorizationFailed: no read"));
	no_token_in(aj_test_errors_text(&e));
	aj_aml_vcs_free(vcs, nr);
	aj_strlist_release(&subs);
	aj_errors_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(job_names),
		cmocka_unit_test(states),
		cmocka_unit_test_setup_teardown(environment_once, setup, teardown),
		cmocka_unit_test_setup_teardown(datastore_once, setup, teardown),
		cmocka_unit_test_setup_teardown(code_version_once, setup, teardown),
		cmocka_unit_test_setup_teardown(default_datastore, setup, teardown),
		cmocka_unit_test_setup_teardown(put_exactly_once, setup, teardown),
		cmocka_unit_test_setup_teardown(put_throttled, setup, teardown),
		cmocka_unit_test_setup_teardown(put_server_error, setup, teardown),
		cmocka_unit_test_setup_teardown(put_reply_lost, setup, teardown),
		cmocka_unit_test_setup_teardown(put_token_expired, setup, teardown),
		cmocka_unit_test_setup_teardown(put_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(get_and_cancel, setup, teardown),
		cmocka_unit_test_setup_teardown(discover_and_select, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
