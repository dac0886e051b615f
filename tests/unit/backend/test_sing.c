/*
 * The sing backend: the Azure ML body plus Singularity resources (reference
 * original-aj-behaviour §4.2 steps 5, 6 and 11, with their vectors for the
 * VC ARM id and imageVersion; instance types from the §2.3 family table).
 */
#include "support.h"

#include <string.h>

#include "backend/backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/jobspec.h"

static const char *const user_cmd[] = { "python", "train.py" };

static const char *sing =
	"config:\n"
	"  target:\n"
	"    service: sing\n"
	"    name: msrresrchvc\n"
	"    subscription_id: sub-123\n"
	"    resource_group: rg-1\n"
	"    workspace_name: ws\n"
	"    group_policy_name: gp\n"
	"    gpus_per_node: 8\n"
	"  environment:\n"
	"    image: amlt-sing/acpt-torch2.7.1-py3.10-cuda12.6-ubuntu22.04\n"
	"    registry: ignored-for-curated.example\n"
	"  jobs:\n"
	"    - name: train\n"
	"      sku: \"{nodes}x80G{processes}-A100-NvLink\"\n"
	"      instance_count: 2\n"
	"      sla_tier: Standard\n"
	"      priority: low\n"
	"      identity: user\n"
	"      submit_args:\n"
	"        env: {_AZUREML_SINGULARITY_JOB_UAI: /subscriptions/s/uai, SUDO: nosudo}\n";

#define VC "/subscriptions/sub-123/resourceGroups/rg-1/providers/Microsoft.MachineLearningServices/virtualclusters/msrresrchvc"

static const struct aj_backend *backend(void)
{
	const struct aj_backend *b = aj_backend_find("sing");

	assert_non_null(b);
	return b;
}

static const cJSON *build(struct aj_jobspec *s, cJSON **arr)
{
	struct aj_build_ctx ctx = { "train-abc", NULL, NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;

	if (aj_backend_check(backend(), s, &err) || backend()->build(s, &ctx, arr, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	aj_errors_release(&err);
	return aj_test_json_at(cJSON_GetArrayItem(*arr, 0), "properties");
}

static void named_vc_body(void **state)
{
	struct aj_shape_args none = { 0, 0, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *p, *sc;

	(void)state;
	aj_test_spec(sing, &none, user_cmd, 2, &s);
	p = build(&s, &arr);
	assert_string_equal(aj_test_json_str(p, "jobType"), "Command");
	assert_string_equal(aj_test_json_str(p, "displayName"), "train-abc");
	assert_string_equal(aj_test_json_str(p, "computeId"), VC);
	/* curated image: a stock base environment, the alias as imageVersion */
	assert_string_equal(aj_test_json_str(p, "environmentId"),
			    "mcr.microsoft.com/azureml/openmpi4.1.0-ubuntu20.04:latest");
	assert_null(aj_test_json_at(p, "identity"));
	/* two nodes, one launcher process each: distributed */
	assert_string_equal(aj_test_json_str(p, "distribution.distributionType"), "PyTorch");
	assert_int_equal(aj_test_json_int(p, "distribution.processCountPerInstance"), 1);
	assert_int_equal(aj_test_json_size(p, "environmentVariables"), 8);
	assert_string_equal(aj_test_json_str(p, "environmentVariables._AZUREML_SINGULARITY_JOB_UAI"),
			    "/subscriptions/s/uai");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.SUDO"), "nosudo");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AZCOPY_AUTO_LOGIN_TYPE"), "MSI");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.JOB_EXECUTION_MODE"), "Basic");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AZUREML_COMPUTE_USE_COMMON_RUNTIME"),
			    "false");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AML_JOB_GROUP_POLICY"), "gp");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AJ_NODES"), "2");
	assert_int_equal(aj_test_json_int(p, "resources.instanceCount"), 2);
	assert_string_equal(aj_test_json_str(p, "resources.instanceType"), "Singularity.ND96amrs_A100_v4");
	assert_null(aj_test_json_at(p, "resources.shmSize"));
	sc = aj_test_json_at(p, "resources.properties.AISuperComputer");
	assert_int_equal(cJSON_GetArraySize(sc), 11);
	assert_string_equal(aj_test_json_str(sc, "instanceType"), "Singularity.ND96amrs_A100_v4");
	assert_int_equal(aj_test_json_size(sc, "instanceTypes"), 1);
	assert_string_equal(aj_test_json_str(sc, "instanceTypes[0]"), "Singularity.ND96amrs_A100_v4");
	assert_int_equal(aj_test_json_int(sc, "instanceCount"), 2);
	assert_true(cJSON_IsFalse(aj_test_json_at(sc, "interactive")));
	assert_string_equal(aj_test_json_str(sc, "imageVersion"),
			    "acpt-torch2.7.1-py3.10-cuda12.6-ubuntu22.04");
	assert_string_equal(aj_test_json_str(sc, "slaTier"), "Standard");
	assert_string_equal(aj_test_json_str(sc, "priority"), "Low");
	assert_true(cJSON_IsFalse(aj_test_json_at(sc, "EnableAzmlInt")));
	assert_string_equal(aj_test_json_str(sc, "tensorboardLogDirectory"), "/scratch/outputs");
	assert_string_equal(aj_test_json_str(sc, "VirtualClusterArmId"), VC);
	assert_string_equal(aj_test_json_str(sc, "groupPolicyName"), "gp");
	assert_string_equal(aj_test_json_str(p, "command"), "set -eo pipefail\n'python' 'train.py'\n");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void auto_selected_vc(void **state)
{
	struct aj_shape_args args = { 1, 1, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *p, *sc;

	(void)state;
	/* name without subscription/resource group: the forwarder completes computeId */
	aj_test_spec("config: {target: {service: sing, name: vc}, environment: {image: pytorch:2.0, registry: r.io}, "
		     "jobs: [{sku: G1, submit_args: {container_args: {shm_size: 32g}}}]}", &args, NULL, 0, &s);
	p = build(&s, &arr);
	assert_null(aj_test_json_at(p, "computeId"));
	assert_string_equal(aj_test_json_str(p, "environmentId"), "r.io/pytorch:2.0");
	assert_null(aj_test_json_at(p, "distribution"));
	assert_null(aj_test_json_at(p, "environmentVariables.AML_JOB_GROUP_POLICY"));
	assert_string_equal(aj_test_json_str(p, "resources.shmSize"), "32g");
	sc = aj_test_json_at(p, "resources.properties.AISuperComputer");
	/* §4.2 vector: a non-curated image has an empty imageVersion */
	assert_string_equal(aj_test_json_str(sc, "imageVersion"), "");
	assert_string_equal(aj_test_json_str(sc, "slaTier"), "Premium");
	assert_string_equal(aj_test_json_str(sc, "priority"), "High");
	assert_null(aj_test_json_at(sc, "VirtualClusterArmId"));
	assert_null(aj_test_json_at(sc, "groupPolicyName"));
	/* §2.3 G1: four candidates, comma-joined */
	assert_string_equal(aj_test_json_str(sc, "instanceType"),
			    "Singularity.ND12am_A100_v4,Singularity.NC24ad_A100_v4,"
			    "Singularity.ND12_v4,Singularity.ND12_H100_v5");
	assert_int_equal(aj_test_json_size(sc, "instanceTypes"), 4);
	assert_string_equal(aj_test_json_str(sc, "instanceTypes[3]"), "Singularity.ND12_H100_v5");
	assert_string_equal(aj_test_json_str(p, "resources.instanceType"), "Singularity.ND12am_A100_v4");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void direct_instance_name(void **state)
{
	struct aj_shape_args args = { 2, 8, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;

	(void)state;
	aj_test_spec("config: {target: {service: sing}, environment: {image: i}, "
		     "jobs: [{sku: \"{nodes}xND40rs_v2\"}]}", &args, NULL, 0, &s);
	assert_string_equal(aj_test_json_str(build(&s, &arr),
					     "resources.properties.AISuperComputer.instanceType"),
			    "Singularity.ND40rs_v2");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void fails_with(const char *yaml, int nodes, const char *fragment)
{
	struct aj_shape_args args = { nodes, 1, 0 };

	aj_test_backend_rejects("sing", yaml, &args, fragment);
}

static void errors(void **state)
{
	(void)state;
	fails_with("config: {environment: {image: i}, jobs: [{sku: \"????\"}]}", 1,
		   "config.jobs[0].sku: \"????\": neither a Singularity instance type nor SKU shorthand");
	fails_with("config: {environment: {image: i}, jobs: [{sku: G3}]}", 1,
		   "config.jobs[0].sku: \"G3\": no Singularity instance type matches");
	fails_with("config: {environment: {image: i}, jobs: [{sku: 1xG8}]}", 2,
		   "config.jobs[0].sku: \"1xG8\" is for 1 node but the job has 2");
	fails_with("config: {jobs: [{sku: G1}]}", 1, "config.environment.image: required for service sing");
}

/* Without a job shape (template checked alone) validate skips the SKU; build still needs it. */
static void template_check_without_shape(void **state)
{
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;

	(void)state;
	aj_test_spec("config: {environment: {image: i}, jobs: [{sku: \"{nodes}xG{processes}\"}]}",
		     NULL, NULL, 0, &s);
	assert_int_equal(aj_backend_check(backend(), &s, &err), 0);
	assert_int_equal(backend()->build(&s, &ctx, &arr, &err), -1);
	assert_true(aj_test_errors_contain(&err, "cannot build an Azure ML job: the job shape is not resolved"));
	assert_null(arr);
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

static void survives_allocation_failures(void **state)
{
	struct aj_shape_args none = { 0, 0, 0 };
	struct aj_build_ctx ctx = { "train-abc", NULL, NULL, NULL, NULL, 0 };

	(void)state;
	assert_true(aj_test_backend_oom("sing", sing, &none, user_cmd, 2, &ctx) > 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(named_vc_body),
		cmocka_unit_test(auto_selected_vc),
		cmocka_unit_test(direct_instance_name),
		cmocka_unit_test(errors),
		cmocka_unit_test(template_check_without_shape),
		cmocka_unit_test(survives_allocation_failures),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
