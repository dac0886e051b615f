/*
 * Placement's Azure view read against the loopback peer
 * (place/read/azure.c): the workspace's computes in one paged list, the
 * VCs and their quotas, a compute judged from it; a workspace not found, a
 * refusal with the role it needs, and Azure unreachable, each kept as the
 * part's reason. Counts and reasons are worked out by hand from the
 * peer's settings.
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../../../peers/azure_test.h"
#include "arm.h"
#include "azure/aml.h"
#include "azure/arm.h"
#include "core/error.h"
#include "place/read/azure.h"
#include "place/views.h"

#define SUB "00000000-1111-2222-3333-444444444444"

static struct aj_peer peer;
static struct aj_fake_clock fclock;

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

/* One retry: the reads fail fast, as the controller's do. */
static int setup(void **state)
{
	struct aj_test_arm *f = calloc(1, sizeof(*f));
	struct aj_azure_hooks hooks = aj_fake_hooks(&fclock, (int64_t)time(NULL) * 1000);

	if (!f || aj_peer_control(&peer, "reset", NULL) || aj_test_arm_open(f, peer.base, &hooks, 1))
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

static int no_vc_b(const void *ctx, const struct aj_vc *vc)
{
	(void)ctx;
	return strcmp(vc->name, "vc-b") != 0;
}

/* Three computes over two pages, two of three VCs kept, one compute judged. */
static void read_computes_and_vcs(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_views_azure_scope s = { { SUB, "ml-rg", "ws-main", NULL }, NULL, no_vc_b, NULL, 0 };
	struct aj_views v;
	struct aj_views_ask a;
	struct aj_fit_result out;
	int graph;
	cJSON *job = cJSON_Parse("{\"properties\": {\"jobType\": \"Command\", \"computeId\":"
				 " \"gpu-cluster\", \"resources\": {\"instanceCount\": 2}}}");

	assert_int_equal(aj_peer_control(&peer, "config",
		"{\"computes\": {\"gpu-cluster\": {\"max\": 8, \"current\": 5, \"idle\": 1, \"running\": 4},"
		"  \"cpu-cluster\": {\"max\": 2, \"current\": 2, \"running\": 1, \"unusable\": 1},"
		"  \"k8s\": {\"type\": \"Kubernetes\"}},"
		" \"subscriptions\": [{\"subscriptionId\": \"" SUB "\", \"state\": \"Enabled\"}],"
		" \"vcs\": [{\"subscriptionId\": \"" SUB "\", \"resourceGroup\": \"sing-rg\", \"name\": \"vc-a\","
		"  \"resource\": {\"properties\": {\"managed\": {\"quotas\": {\"westus2\": {\"limits\":"
		"  [{\"id\": \"ND_A100_v4\", \"slaTier\": \"Premium\", \"limit\": 32, \"used\": 16}]}}}}}},"
		" {\"subscriptionId\": \"" SUB "\", \"resourceGroup\": \"sing-rg\", \"name\": \"vc-b\", \"resource\": {}},"
		" {\"subscriptionId\": \"" SUB "\", \"resourceGroup\": \"sing-rg\", \"name\": \"vc-c\", \"resource\": {}}]}"),
		0);
	aj_views_init(&v);
	assert_int_equal(aj_views_read_azure(&f->arm, &s, &v.azure), 0);
	assert_true(v.azure.read);
	assert_string_equal(v.azure.computes_why, "");
	assert_string_equal(v.azure.vcs_why, "");
	assert_string_equal(v.azure.workspace, "/subscriptions/" SUB "/resourceGroups/ml-rg/providers/"
			    "Microsoft.MachineLearningServices/workspaces/ws-main");
	/* two pages of two, one list: never a GET per compute */
	assert_int_equal(aj_peer_count(&peer, "/workspaces/ws-main/computes"), 2);
	assert_int_equal(v.azure.computes_nr, 3);
	assert_int_equal(v.azure.vcs_nr, 2);
	assert_string_equal(v.azure.vcs[0].name, "vc-a");
	assert_string_equal(v.azure.vcs[1].name, "vc-c");
	assert_int_equal(aj_peer_count(&peer, "/virtualclusters/vc-b"), 0);
	assert_int_equal(aj_vc_quota_free(&v.azure.vcs[0].quotas[0], AJ_TIER_PREMIUM), 16);
	assert_int_equal(aj_views_ask_read(job, &a), 1);
	assert_int_equal(aj_views_fit(&v, &a, "ns", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FITS, "compute gpu-cluster: 4 of 8 nodes free", "free");
	a.compute = "cpu-cluster";
	assert_int_equal(aj_views_fit(&v, &a, "ns", &out), 0);
	aj_test_fit_check(&out, AJ_PLACE_FULL, "compute cpu-cluster: 0 of 2 nodes free (1 running, "
			  "1 unusable), the job needs 2", "full");
	aj_views_ask_release(&a);
	aj_views_release(&v);
	/* computes only (another workspace's read has the VCs): one list more, no VC asked for */
	graph = aj_peer_count(&peer, "ResourceGraph");
	assert_true(graph > 0);
	s.computes_only = 1;
	aj_views_init(&v);
	assert_int_equal(aj_views_read_azure(&f->arm, &s, &v.azure), 0);
	assert_int_equal(v.azure.computes_nr, 3);
	assert_int_equal(v.azure.vcs_nr, 0);
	assert_string_equal(v.azure.vcs_why, "");
	assert_int_equal(aj_peer_count(&peer, "/workspaces/ws-main/computes"), 4);
	assert_int_equal(aj_peer_count(&peer, "ResourceGraph"), graph);
	aj_views_release(&v);
	cJSON_Delete(job);
}

/* A workspace not found, a refusal, no answer: each part says why. */
static void unreadable(void **state)
{
	struct aj_test_arm *f = *state;
	struct aj_views_azure_scope s = { { SUB, "ml-rg", "ws-main", NULL }, NULL, NULL, NULL, 0 };
	struct aj_views_azure a;
	struct aj_arm_config ac;
	struct aj_arm dead;
	struct aj_errors e = AJ_ERRORS_INIT;

	memset(&a, 0, sizeof(a));
	/* the workspace not found; the VCs' Resource Graph query refused */
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/computes$\", \"status\": 404, \"body\": {\"error\": {\"code\":"
		" \"ResourceNotFound\", \"message\": \"workspace ws-main not found\"}}},"
		" {\"path\": \"ResourceGraph\", \"status\": 403, \"body\": {\"error\": {\"code\":"
		" \"AuthorizationFailed\", \"message\": \"no read\"}}}]"), 0);
	assert_int_equal(aj_peer_control(&peer, "config",
		"{\"subscriptions\": [{\"subscriptionId\": \"" SUB "\", \"state\": \"Enabled\"}]}"), 0);
	assert_int_equal(aj_views_read_azure(&f->arm, &s, &a), 0);
	assert_string_equal(a.computes_why, "workspace ws-main: not found");
	/* who was refused and the role it lacks, before the request's words */
	assert_non_null(strstr(a.vcs_why, "virtual clusters: refused (HTTP 403): aj acted as "));
	assert_non_null(strstr(a.vcs_why, "which needs Reader on the subscriptions that hold the "
			       "virtual clusters"));
	assert_int_equal(a.vcs_nr, 0);
	aj_views_azure_release(&a);
	/* the computes refused: the role on the workspace */
	assert_int_equal(aj_peer_control(&peer, "faults",
		"[{\"path\": \"/computes$\", \"status\": 403, \"body\": {\"error\": {\"code\":"
		" \"AuthorizationFailed\", \"message\": \"no read\"}}}]"), 0);
	assert_int_equal(aj_views_read_azure(&f->arm, &s, &a), 0);
	assert_non_null(strstr(a.computes_why, "workspace ws-main: refused (HTTP 403): aj acted as "));
	assert_non_null(strstr(a.computes_why, "which needs a role such as \"AzureML Data Scientist\""));
	assert_string_equal(a.vcs_why, "");
	aj_views_azure_release(&a);

	/* nothing listens there: both parts unreachable, the endpoint tried once for both */
	aj_arm_config_default(&ac);
	ac.endpoint = "http://127.0.0.1:1";
	ac.retry.max_retries = 0;
	ac.http.connect_timeout_ms = 1000;
	assert_int_equal(aj_arm_init(&dead, &ac, f->tokens, &e), 0);
	assert_int_equal(aj_views_read_azure(&dead, &s, &a), 0);
	assert_non_null(strstr(a.computes_why, "Azure is unreachable: "));
	assert_string_equal(a.vcs_why, a.computes_why);
	aj_views_azure_release(&a);
	aj_arm_release(&dead);
	aj_errors_release(&e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(read_computes_and_vcs, setup, teardown),
		cmocka_unit_test_setup_teardown(unreadable, setup, teardown),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
