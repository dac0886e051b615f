/*
 * The aml backend: the Azure ML command-job body (reference
 * original-aj-behaviour §4.2, azure-rest.md §1.4/§1.7 for field names),
 * derived by hand from the seed's AML example plus storage and tags.
 */
#include "support.h"
#include "code_fs.h"

#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/jobspec.h"

static const char *const user_cmd[] = { "python", "train.py" };

static const char *aml =
	"config:\n"
	"  target: {service: aml, name: gpu-cluster, gpus_per_node: 1}\n"
	"  environment:\n"
	"    image: openmpi4.1.0-ubuntu20.04:latest\n"
	"    registry: myacr.azurecr.io/\n"
	"    setup: [python -m pip install -e .]\n"
	"  storage:\n"
	"    fast_shared: {storage_account_name: fastaml123, container_name: shared, mount_dir: /mnt/fast_shared}\n"
	"  jobs:\n"
	"    - name: train\n"
	"      sku: G1\n"
	"      instance_count: 1\n"
	"      identity: managed\n"
	"      tags: [team:research, bare, \"url:http://x\"]\n"
	"      command: [echo hi]\n"
	"      submit_args:\n"
	"        env: {NCCL_DEBUG: WARN}\n"
	"        container_args: {shm_size: 64g}\n";

static const struct aj_backend *backend(void)
{
	const struct aj_backend *b = aj_backend_find("aml");

	assert_non_null(b);
	return b;
}

static const cJSON *build(struct aj_jobspec *s, const char *name, cJSON **arr)
{
	struct aj_build_ctx ctx = { name, NULL, NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;

	if (aj_backend_check(backend(), s, &err) || backend()->build(s, &ctx, arr, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	aj_errors_release(&err);
	assert_int_equal(cJSON_GetArraySize(*arr), 1);
	return aj_test_json_at(cJSON_GetArrayItem(*arr, 0), "properties");
}

static void single_node_body(void **state)
{
	struct aj_shape_args none = { 0, 0, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *p;

	(void)state;
	aj_test_spec(aml, &none, user_cmd, 2, &s);
	p = build(&s, "train-abc", &arr);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetArrayItem(arr, 0)), 1);
	assert_string_equal(aj_test_json_str(p, "jobType"), "Command");
	assert_string_equal(aj_test_json_str(p, "displayName"), "train-abc");
	assert_string_equal(aj_test_json_str(p, "command"),
			    "set -eo pipefail\npython -m pip install -e .\necho hi\n'python' 'train.py'\n");
	assert_string_equal(aj_test_json_str(p, "computeId"), "gpu-cluster");
	assert_string_equal(aj_test_json_str(p, "environmentId"),
			    "myacr.azurecr.io/openmpi4.1.0-ubuntu20.04:latest");
	assert_string_equal(aj_test_json_str(p, "identity.identityType"), "Managed");
	assert_int_equal(aj_test_json_size(p, "identity"), 1);
	assert_null(aj_test_json_at(p, "distribution"));
	assert_null(aj_test_json_at(p, "codeId"));
	assert_int_equal(aj_test_json_size(p, "resources"), 2);
	assert_int_equal(aj_test_json_int(p, "resources.instanceCount"), 1);
	assert_string_equal(aj_test_json_str(p, "resources.shmSize"), "64g");
	assert_int_equal(aj_test_json_size(p, "environmentVariables"), 5);
	assert_string_equal(aj_test_json_str(p, "environmentVariables.NCCL_DEBUG"), "WARN");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AJ_NODES"), "1");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AJ_PROCESSES_PER_NODE"), "1");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.SHM_SIZE"), "64g");
	/* §4.2 storage vector: mount fast_shared */
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AZUREML_DATAREFERENCE_fast_shared"),
			    "/mnt/fast_shared");
	assert_int_equal(aj_test_json_size(p, "outputs"), 1);
	assert_string_equal(aj_test_json_str(p, "outputs.fast_shared.jobOutputType"), "uri_folder");
	assert_string_equal(aj_test_json_str(p, "outputs.fast_shared.uri"),
			    "azureml://datastores/aj_fast_shared/paths/train-abc/");
	assert_string_equal(aj_test_json_str(p, "outputs.fast_shared.mode"), "ReadWriteMount");
	assert_int_equal(aj_test_json_size(p, "properties"), 1);
	assert_string_equal(aj_test_json_str(p, "properties.AZURE_ML_OUTPUT_PathOnCompute_fast_shared"),
			    "/mnt/fast_shared/");
	assert_int_equal(aj_test_json_size(p, "tags"), 3);
	assert_string_equal(aj_test_json_str(p, "tags.team"), "research");
	assert_string_equal(aj_test_json_str(p, "tags.bare"), "");
	assert_string_equal(aj_test_json_str(p, "tags.url"), "http://x");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void code_reference(void **state)
{
	struct aj_shape_args none = { 0, 0, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *p;

	(void)state;
	aj_test_spec(aml, &none, user_cmd, 2, &s);
	s.code.digest = aj_strdup("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
	assert_non_null(s.code.digest);
	p = build(&s, "train-abc", &arr);
	/* the forwarder turns this into the registered version's ARM id */
	assert_string_equal(aj_test_json_str(p, "codeId"),
			    "codes/aj-code/versions/9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void distributed_body(void **state)
{
	struct aj_shape_args args = { 2, 0, 8 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *p;

	(void)state;
	aj_test_spec("config:\n  target: {name: c, gpus_per_node: 8}\n"
		     "  environment: {image: img, setup: [pip install -e ., echo ok]}\n"
		     "  storage: {my-data: {storage_account_name: a, container_name: c, mount_dir: /mnt/d//}}\n"
		     "  jobs: [{sku: G8, identity: user, submit_args: {env: {AZUREML_DATAREFERENCE_my-data: x, SHM_SIZE: 1g}, "
		     "container_args: {shm_size: 2Ti}}}]\n", &args, user_cmd, 2, &s);
	p = build(&s, "d", &arr);
	assert_string_equal(aj_test_json_str(p, "distribution.distributionType"), "PyTorch");
	assert_int_equal(aj_test_json_int(p, "distribution.processCountPerInstance"), 8);
	assert_int_equal(aj_test_json_int(p, "resources.instanceCount"), 2);
	assert_string_equal(aj_test_json_str(p, "resources.shmSize"), "2048g");
	assert_string_equal(aj_test_json_str(p, "identity.identityType"), "UserIdentity");
	assert_string_equal(aj_test_json_str(p, "environmentId"), "img");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.SHM_SIZE"), "1g");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AJ_NODES"), "2");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AJ_PROCESSES_PER_NODE"), "8");
	/*
	 * '-' becomes '_' in the datastore, the output and its variable (Azure ML
	 * refuses "my-data" as an output, a shell cannot read the variable); the
	 * template's own variable of the old name stays as written
	 */
	assert_string_equal(aj_test_json_str(p, "environmentVariables.AZUREML_DATAREFERENCE_my_data"),
			    "/mnt/d//");
	assert_string_equal(aj_test_json_str(p, "environmentVariables.\"AZUREML_DATAREFERENCE_my-data\""), "x");
	assert_null(aj_test_json_at(p, "outputs.my-data"));
	assert_string_equal(aj_test_json_str(p, "outputs.my_data.uri"), "azureml://datastores/aj_my_data/paths/d/");
	assert_string_equal(aj_test_json_str(p, "properties.AZURE_ML_OUTPUT_PathOnCompute_my_data"), "/mnt/d/");
	assert_null(aj_test_json_at(p, "tags"));
	assert_string_equal(aj_test_json_str(p, "command"),
			    "set -eo pipefail\n"
			    "if [ \"${LOCAL_RANK:-0}\" = 0 ]; then\n"
			    "pip install -e .\n"
			    "echo ok\n"
			    "touch /tmp/.aj_setup_done\n"
			    "else\n"
			    "aj_waited=0\n"
			    "while [ ! -e /tmp/.aj_setup_done ]; do\n"
			    "if [ \"$aj_waited\" -ge 600 ]; then echo 'aj: setup did not finish on this node' >&2; exit 1; fi\n"
			    "sleep 1; aj_waited=$((aj_waited + 1))\n"
			    "done\n"
			    "fi\n"
			    "'python' 'train.py'\n");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* The command string is a shell script: hostile arguments come back unchanged. */
static void hostile_arguments_survive_bash(void **state)
{
	static const char *const argv[] = {
		"printf", "[%s]", "$(rm -rf /)", "`x`", "it's", "a\nb", "", "\"q\"", "$HOME"
	};
	static const char want[] = "[$(rm -rf /)][`x`][it's][a\nb][][\"q\"][$HOME]";
	struct aj_shape_args args = { 1, 1, 0 };
	char *bash[4] = { "/bin/bash", "-c", NULL, NULL };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	size_t len;
	char *out;

	(void)state;
	aj_test_spec("config: {target: {name: c}, environment: {image: i}, jobs: [{sku: G1}]}",
		     &args, argv, sizeof(argv) / sizeof(argv[0]), &s);
	bash[2] = strdup(aj_test_json_str(build(&s, "h", &arr), "command"));
	assert_int_equal(aj_test_spawn(bash, NULL, NULL, &out, &len), 0);
	free(bash[2]);
	assert_int_equal(len, strlen(want));
	assert_memory_equal(out, want, len);
	free(out);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void fails_with(const char *yaml, const char *fragment)
{
	struct aj_shape_args args = { 1, 1, 0 };

	aj_test_backend_rejects("aml", yaml, &args, fragment);
}

static void errors(void **state)
{
	(void)state;
	fails_with("config: {environment: {image: i}, jobs: [{sku: G1}]}",
		   "config.target.name: required for service aml");
	fails_with("config: {target: {name: c}, jobs: [{sku: G1}]}",
		   "config.environment.image: required for service aml");
	fails_with("config: {target: {name: c}, environment: {image: i}, jobs: [{sku: G1}], storage: {"
		   "data-in: {storage_account_name: a, container_name: c, mount_dir: /a}, "
		   "data_in: {storage_account_name: a, container_name: d, mount_dir: /b}}}",
		   "config.storage: mounts \"data-in\" and \"data_in\" would both be the Azure ML "
		   "output data_in: rename one");
	fails_with("config: {target: {name: c}, environment: {image: i}, jobs: [{sku: G1, tags: [\":x\"]}]}",
		   "config.jobs[0].tags: tag \":x\" has no key");
	fails_with("config: {target: {name: c}, environment: {image: i}, jobs: [{sku: G1}], "
		   "storage: {\"a.b\": {storage_account_name: a, container_name: c, mount_dir: /m}}}",
		   "config.storage: mount name \"a.b\" may hold only letters, digits");
}

static void heterogeneous_refused(void **state)
{
	struct aj_shape_args none = { 0, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;

	(void)state;
	aj_test_spec("config: {target: {name: c}, environment: {image: i}, jobs: [{sku: heterogeneous}]}",
		     &none, NULL, 0, &s);
	assert_int_equal(aj_backend_check(backend(), &s, &err), -1);
	assert_true(aj_test_errors_contain(&err, "config.jobs[0].sku: heterogeneous jobs need service volcano, not aml"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

static void build_needs_name_and_shape(void **state)
{
	struct aj_build_ctx noname = { NULL, NULL, NULL, NULL, NULL, 0 };
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;

	(void)state;
	aj_test_spec("config: {target: {name: c}, environment: {image: i}, jobs: [{sku: G1}]}",
		     NULL, NULL, 0, &s);
	assert_int_equal(aj_backend_check(backend(), &s, &err), 0);
	assert_int_equal(backend()->build(&s, &ctx, &arr, &err), -1);
	assert_true(aj_test_errors_contain(&err, "cannot build an Azure ML job: the job shape is not resolved"));
	aj_jobspec_release(&s);
	aj_test_spec(aml, &(struct aj_shape_args){ 0, 0, 0 }, NULL, 0, &s);
	assert_int_equal(backend()->build(&s, &noname, &arr, &err), -1);
	assert_true(aj_test_errors_contain(&err, "cannot build an Azure ML job: no job name"));
	assert_null(arr);
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

static void survives_allocation_failures(void **state)
{
	struct aj_shape_args args = { 2, 0, 4 };
	struct aj_build_ctx ctx = { "train-abc", NULL, NULL, NULL, NULL, 0 };

	(void)state;
	assert_true(aj_test_backend_oom("aml", aml, &args, user_cmd, 2, &ctx) > 50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(single_node_body),
		cmocka_unit_test(code_reference),
		cmocka_unit_test(distributed_body),
		cmocka_unit_test(hostile_arguments_survive_bash),
		cmocka_unit_test(errors),
		cmocka_unit_test(heterogeneous_refused),
		cmocka_unit_test(build_needs_name_and_shape),
		cmocka_unit_test(survives_allocation_failures),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
