/*
 * The volcano backend: the Volcano Job built for a homogeneous template
 * (reference original-aj-behaviour §3.3, volcano.md §2/§5/§7), the
 * heterogeneous tasks of the seed's "Heterogeneous Tasks" example, name
 * limits, validation errors, shell quoting of hostile arguments (checked by
 * running bash), and clean failure when memory runs out. Expected values are
 * derived by hand from the inputs.
 */
#include "support.h"
#include "code_fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/codeship.h"
#include "backend/common.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"

static const struct aj_shape_args no_args = { 0, 0, 0 };
static const char *const user_cmd[] = { "python", "train.py", "--name", "it's" };

static const char *homogeneous =
	"config:\n"
	"  target:\n"
	"    service: volcano\n"
	"    namespace: training\n"
	"    queue: gpu-q\n"
	"    priority_class: batch-high\n"
	"    gpus_per_node: 8\n"
	"    cpus_per_node: 96\n"
	"    memory: 512Gi\n"
	"    rdma: true\n"
	"    labels: {team: research}\n"
	"  environment:\n"
	"    image: registry.example/train:1\n"
	"    registry: ignored.example\n"
	"    setup: [python -m pip install -e .]\n"
	"  jobs:\n"
	"    - name: train\n"
	"      sku: \"{nodes}xG{processes}\"\n"
	"      instance_count: 2\n"
	"      process_count_per_node: 8\n"
	"      command: [nvidia-smi]\n"
	"      submit_args:\n"
	"        env: {NCCL_DEBUG: WARN, AMLT_PERSISTENT_VOLUME_NAME: pvc1}\n"
	"        container_args: {shm_size: 64g}\n";

static const struct aj_backend *volcano(void)
{
	const struct aj_backend *b = aj_backend_find("volcano");

	assert_non_null(b);
	return b;
}

/* Validate and build; returns the Job object (the array is in *arr). */
static const cJSON *build(struct aj_jobspec *s, const struct aj_build_ctx *ctx, cJSON **arr)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	if (aj_backend_check(volcano(), s, &err) || volcano()->build(s, ctx, arr, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	aj_errors_release(&err);
	assert_int_equal(cJSON_GetArraySize(*arr), 1);
	return cJSON_GetArrayItem(*arr, 0);
}

/* The pod script at path below root as the shell gets it; valid until the next call. */
static const char *script_of(const cJSON *root, const char *path)
{
	static char *last;

	free(last);
	last = aj_test_kubelet_view(aj_test_json_str(root, path));
	return last;
}

static void homogeneous_job(void **state)
{
	struct aj_build_ctx ctx = { "train-abc", NULL, NULL, NULL, NULL, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *job, *pod, *c, *w;
	int k;

	(void)state;
	aj_test_spec(homogeneous, &no_args, user_cmd, 4, &s);
	job = build(&s, &ctx, &arr);
	assert_string_equal(aj_test_json_str(job, "apiVersion"), "batch.volcano.sh/v1alpha1");
	assert_string_equal(aj_test_json_str(job, "kind"), "Job");
	assert_string_equal(aj_test_json_str(job, "metadata.name"), "train-abc");
	assert_string_equal(aj_test_json_str(job, "metadata.namespace"), "training");
	assert_int_equal(aj_test_json_size(job, "metadata.labels"), 2);
	assert_string_equal(aj_test_json_str(job, "metadata.labels.team"), "research");
	assert_string_equal(aj_test_json_str(job, "metadata.labels.app"), "train-abc");
	assert_null(aj_test_json_at(job, "metadata.ownerReferences"));
	assert_string_equal(aj_test_json_str(job, "spec.schedulerName"), "volcano");
	assert_string_equal(aj_test_json_str(job, "spec.queue"), "gpu-q");
	assert_string_equal(aj_test_json_str(job, "spec.priorityClassName"), "batch-high");
	assert_int_equal(aj_test_json_int(job, "spec.minAvailable"), 2);
	assert_int_equal(aj_test_json_size(job, "spec.plugins"), 3);
	assert_int_equal(aj_test_json_size(job, "spec.plugins.ssh"), 0);
	assert_int_equal(aj_test_json_size(job, "spec.plugins.svc"), 0);
	assert_int_equal(aj_test_json_size(job, "spec.plugins.env"), 0);
	assert_int_equal(aj_test_json_size(job, "spec.tasks"), 2);
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].name"), "master");
	assert_int_equal(aj_test_json_int(job, "spec.tasks[0].replicas"), 1);
	assert_int_equal(aj_test_json_int(job, "spec.tasks[0].minAvailable"), 1);
	assert_string_equal(aj_test_json_str(job, "spec.tasks[1].name"), "worker");
	assert_int_equal(aj_test_json_int(job, "spec.tasks[1].replicas"), 1);
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].template.metadata.labels.role"), "master");
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].template.metadata.labels.app"), "train-abc");
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].template.metadata.labels.team"), "research");
	/* aj logs and aj status find the pods by these, and the rank by the annotation */
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].template.metadata.labels.\"aj.dev/ajjob\""),
			    "train-abc");
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].template.metadata.labels.\"aj.dev/task\""),
			    "master");
	assert_string_equal(aj_backend_find("volcano")->rank_annotation, "volcano.sh/task-index");
	assert_null(aj_backend_find("aml")->rank_annotation);

	pod = aj_test_json_at(job, "spec.tasks[0].template.spec");
	assert_string_equal(aj_test_json_str(pod, "schedulerName"), "volcano");
	assert_string_equal(aj_test_json_str(pod, "restartPolicy"), "Never");
	assert_null(aj_test_json_at(pod, "nodeSelector"));
	w = aj_test_json_at(pod, "affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]");
	assert_non_null(w);
	assert_string_equal(aj_test_json_str(w, "labelSelector.matchLabels.\"volcano.sh/job-name\""), "train-abc");
	assert_string_equal(aj_test_json_str(w, "topologyKey"), "kubernetes.io/hostname");
	assert_int_equal(aj_test_json_size(pod, "tolerations"), 2);
	assert_string_equal(aj_test_json_str(pod, "tolerations[0].key"), "nvidia.com/gpu");
	assert_string_equal(aj_test_json_str(pod, "tolerations[0].operator"), "Exists");
	assert_string_equal(aj_test_json_str(pod, "tolerations[0].effect"), "NoSchedule");
	assert_string_equal(aj_test_json_str(pod, "tolerations[1].key"), "rdma");
	assert_int_equal(aj_test_json_size(pod, "volumes"), 1);
	assert_string_equal(aj_test_json_str(pod, "volumes[0].name"), "dshm");
	assert_string_equal(aj_test_json_str(pod, "volumes[0].emptyDir.medium"), "Memory");
	/* 64g is Docker's 64 GiB */
	assert_string_equal(aj_test_json_str(pod, "volumes[0].emptyDir.sizeLimit"), "64Gi");

	assert_int_equal(aj_test_json_size(pod, "containers"), 1);
	c = aj_test_json_at(pod, "containers[0]");
	assert_string_equal(aj_test_json_str(c, "name"), "master");
	assert_string_equal(aj_test_json_str(c, "image"), "registry.example/train:1");
	assert_int_equal(aj_test_json_size(c, "command"), 8);
	assert_string_equal(aj_test_json_str(c, "command[0]"), "/bin/bash");
	assert_string_equal(aj_test_json_str(c, "command[1]"), "-lc");
	assert_string_equal(script_of(c, "command[2]"),
			    "set -eo pipefail\n"
			    "export NODE_RANK=$((0 + ${VK_TASK_INDEX:-0}))\n"
			    "python -m pip install -e .\n"
			    "nvidia-smi\n"
			    "\"$@\"\n");
	assert_string_equal(aj_test_json_str(c, "command[3]"), "aj");
	assert_string_equal(aj_test_json_str(c, "command[4]"), "python");
	assert_string_equal(aj_test_json_str(c, "command[7]"), "it's");
	assert_null(aj_test_json_at(c, "args"));
	assert_int_equal(aj_test_json_size(c, "env"), 8);
	aj_test_env_is(c, 0, "NCCL_DEBUG", "WARN");
	aj_test_env_is(c, 1, "AMLT_PERSISTENT_VOLUME_NAME", "pvc1");
	aj_test_env_is(c, 2, "MASTER_ADDR", "train-abc-master-0.train-abc");
	aj_test_env_is(c, 3, "MASTER_PORT", "6105");
	aj_test_env_is(c, 4, "WORLD_SIZE", "16");
	aj_test_env_is(c, 5, "AJ_NODES", "2");
	aj_test_env_is(c, 6, "AJ_PROCESSES_PER_NODE", "8");
	aj_test_env_is(c, 7, "AJ_TASK", "master");
	for (k = 0; k < 2; k++) {
		const cJSON *r = aj_test_json_at(c, k ? "resources.limits" : "resources.requests");

		assert_int_equal(cJSON_GetArraySize(r), 4);
		assert_string_equal(aj_test_json_str(r, "cpu"), "96");
		assert_string_equal(aj_test_json_str(r, "memory"), "512Gi");
		assert_string_equal(aj_test_json_str(r, "\"nvidia.com/gpu\""), "8");
		assert_string_equal(aj_test_json_str(r, "\"rdma/rdma_shared_device_a\""), "1");
	}
	assert_string_equal(aj_test_json_str(c, "volumeMounts[0].name"), "dshm");
	assert_string_equal(aj_test_json_str(c, "volumeMounts[0].mountPath"), "/dev/shm");
	assert_string_equal(aj_test_json_str(c, "ports[0].name"), "rdma");
	assert_int_equal(aj_test_json_int(c, "ports[0].containerPort"), 18515);
	assert_null(aj_test_json_at(c, "securityContext"));

	/* the worker differs in name, role, rank offset and AJ_TASK */
	c = aj_test_json_at(job, "spec.tasks[1].template.spec.containers[0]");
	assert_string_equal(aj_test_json_str(c, "name"), "worker");
	assert_string_equal(aj_test_json_str(job, "spec.tasks[1].template.metadata.labels.role"), "worker");
	assert_non_null(strstr(script_of(c, "command[2]"),
			       "\nexport NODE_RANK=$((1 + ${VK_TASK_INDEX:-0}))\n"));
	aj_test_env_is(c, 7, "AJ_TASK", "worker");
	aj_test_env_is(c, 4, "WORLD_SIZE", "16");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void single_cpu_node(void **state)
{
	struct aj_build_ctx ctx = { "cpu-job", "team-a", "uid-1", "cpu-job", "aj.example.com/v1alpha1", 0 };
	struct aj_shape_args args = { 1, 0, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *job, *pod, *c;

	(void)state;
	aj_test_spec("config:\n  target: {service: volcano, namespace: ignored, gpus_per_node: 0}\n"
		     "  environment: {image: busybox}\n"
		     "  jobs: [{sku: C1, submit_args: {env: {MASTER_PORT: 7000}, container_args: {cpus: 4, memory: 8Gi}}}]\n",
		     &args, user_cmd, 1, &s);
	job = build(&s, &ctx, &arr);
	/* the AjJob's namespace wins */
	assert_string_equal(aj_test_json_str(job, "metadata.namespace"), "team-a");
	assert_string_equal(aj_test_json_str(job, "spec.queue"), "default");
	assert_null(aj_test_json_at(job, "spec.priorityClassName"));
	assert_int_equal(aj_test_json_int(job, "spec.minAvailable"), 1);
	assert_int_equal(aj_test_json_size(job, "spec.tasks"), 1);
	assert_string_equal(aj_test_json_str(job, "metadata.ownerReferences[0].apiVersion"), "aj.example.com/v1alpha1");
	assert_string_equal(aj_test_json_str(job, "metadata.ownerReferences[0].kind"), "AjJob");
	assert_string_equal(aj_test_json_str(job, "metadata.ownerReferences[0].name"), "cpu-job");
	assert_string_equal(aj_test_json_str(job, "metadata.ownerReferences[0].uid"), "uid-1");
	assert_true(cJSON_IsTrue(aj_test_json_at(job, "metadata.ownerReferences[0].controller")));
	assert_true(cJSON_IsTrue(aj_test_json_at(job, "metadata.ownerReferences[0].blockOwnerDeletion")));
	pod = aj_test_json_at(job, "spec.tasks[0].template.spec");
	assert_null(aj_test_json_at(pod, "affinity"));
	assert_int_equal(aj_test_json_size(pod, "tolerations"), 0);
	assert_null(aj_test_json_at(pod, "volumes[0].emptyDir.sizeLimit"));
	c = aj_test_json_at(pod, "containers[0]");
	/* CPU and memory from container_args when target has none; no GPU, RDMA off */
	assert_int_equal(aj_test_json_size(c, "resources.limits"), 2);
	assert_string_equal(aj_test_json_str(c, "resources.limits.cpu"), "4");
	assert_string_equal(aj_test_json_str(c, "resources.requests.memory"), "8Gi");
	assert_null(aj_test_json_at(c, "ports"));
	/* the template's MASTER_PORT wins and is not repeated */
	aj_test_env_is(c, 0, "MASTER_PORT", "7000");
	aj_test_env_is(c, 1, "MASTER_ADDR", "cpu-job-master-0.cpu-job");
	aj_test_env_is(c, 2, "WORLD_SIZE", "1");
	assert_int_equal(aj_test_json_size(c, "env"), 6);
	assert_string_equal(script_of(c, "command[2]"),
			    "set -eo pipefail\nexport NODE_RANK=$((0 + ${VK_TASK_INDEX:-0}))\n\"$@\"\n");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* GPUs from a G shorthand when target.gpus_per_node is absent; RDMA then defaults on */
/* app and role are only defaults: a label the template sets is kept, once (not twice, keys repeated). */
static void template_names_app_and_role(void **state)
{
	struct aj_build_ctx ctx = { "cpu-job", "team-a", NULL, NULL, NULL, 0 };
	struct aj_shape_args args = { 1, 0, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *job;

	(void)state;
	aj_test_spec("config:\n  target: {service: volcano, gpus_per_node: 0, labels: {app: trainer, role: lead}}\n"
		     "  environment: {image: busybox}\n  jobs: [{sku: C1}]\n", &args, user_cmd, 1, &s);
	job = build(&s, &ctx, &arr);
	assert_int_equal(aj_test_json_size(job, "metadata.labels"), 2);
	assert_string_equal(aj_test_json_str(job, "metadata.labels.app"), "trainer");
	assert_string_equal(aj_test_json_str(job, "metadata.labels.role"), "lead");
	/* the pods: the two, then aj.dev/ajjob and aj.dev/task */
	assert_int_equal(aj_test_json_size(job, "spec.tasks[0].template.metadata.labels"), 4);
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].template.metadata.labels.app"), "trainer");
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].template.metadata.labels.role"), "lead");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void gpus_from_sku(void **state)
{
	struct aj_build_ctx ctx = { "g", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args args = { 3, 4, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *job;

	(void)state;
	aj_test_spec("config: {target: {service: volcano}, environment: {image: x}, "
		     "jobs: [{sku: \"{nodes}xG{processes}\"}]}", &args, NULL, 0, &s);
	job = build(&s, &ctx, &arr);
	assert_string_equal(aj_test_json_str(job,
		"spec.tasks[1].template.spec.containers[0].resources.limits.\"nvidia.com/gpu\""), "4");
	assert_string_equal(aj_test_json_str(job,
		"spec.tasks[1].template.spec.containers[0].resources.limits.\"rdma/rdma_shared_device_a\""), "1");
	assert_int_equal(aj_test_json_int(job, "spec.tasks[1].replicas"), 2);
	assert_null(aj_test_json_at(job, "metadata.namespace"));
	/* no user command: the script ends with the rank line */
	assert_string_equal(script_of(job, "spec.tasks[0].template.spec.containers[0].command[2]"),
			    "set -eo pipefail\nexport NODE_RANK=$((0 + ${VK_TASK_INDEX:-0}))\n");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void scratch_and_capabilities(void **state)
{
	struct aj_build_ctx ctx = { "nested", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args args = { 1, 0, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *pod, *c;

	(void)state;
	aj_test_spec("config:\n  target: {service: volcano, gpus_per_node: 0}\n  environment: {image: x}\n"
		     "  jobs:\n    - sku: C1\n      submit_args:\n        container_args:\n"
		     "          capabilities: [SYS_ADMIN, cap_sys_admin, net_admin]\n"
		     "          scratch_mount_path: /var/lib/containers\n"
		     "          scratch_size: 200Gi\n          shm_size: 1Gi\n", &args, NULL, 0, &s);
	pod = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[0].template.spec");
	assert_int_equal(aj_test_json_size(pod, "volumes"), 2);
	assert_string_equal(aj_test_json_str(pod, "volumes[0].emptyDir.sizeLimit"), "1Gi");
	assert_string_equal(aj_test_json_str(pod, "volumes[1].name"), "scratch");
	assert_string_equal(aj_test_json_str(pod, "volumes[1].emptyDir.sizeLimit"), "200Gi");
	assert_null(aj_test_json_at(pod, "volumes[1].emptyDir.medium"));
	c = aj_test_json_at(pod, "containers[0]");
	assert_string_equal(aj_test_json_str(c, "volumeMounts[1].name"), "scratch");
	assert_string_equal(aj_test_json_str(c, "volumeMounts[1].mountPath"), "/var/lib/containers");
	assert_string_equal(aj_test_json_str(c, "resources.requests.\"ephemeral-storage\""), "200Gi");
	assert_string_equal(aj_test_json_str(c, "resources.limits.\"ephemeral-storage\""), "200Gi");
	assert_int_equal(aj_test_json_size(c, "securityContext.capabilities.add"), 2);
	assert_string_equal(aj_test_json_str(c, "securityContext.capabilities.add[0]"), "SYS_ADMIN");
	assert_string_equal(aj_test_json_str(c, "securityContext.capabilities.add[1]"), "NET_ADMIN");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* seed "Heterogeneous Tasks" example, master written last to check it moves first */
static const char *hetero =
	"config:\n"
	"  target: {service: volcano, namespace: training, queue: default}\n"
	"  environment: {image: common-runtime:latest, setup: [python -m pip install -e .]}\n"
	"  jobs: [{name: train, sku: heterogeneous}]\n"
	"  _extra:\n"
	"    volcano:\n"
	"      tasks:\n"
	"        a100-worker:\n"
	"          replicas: 2\n"
	"          cpus_per_node: 96\n"
	"          memory: 512Gi\n"
	"          gpus_per_node: 8\n"
	"          rdma: true\n"
	"          processes_per_node: 8\n"
	"          node_selector: {nvidia.com/gpu.product: A100-SXM4-80GB}\n"
	"        h100-worker:\n"
	"          replicas: 4\n"
	"          cpus_per_node: 96\n"
	"          memory: 1Ti\n"
	"          gpus_per_node: 8\n"
	"          rdma: true\n"
	"          processes_per_node: 8\n"
	"          node_selector: {nvidia.com/gpu.product: H100-80GB-HBM3}\n"
	"          command: [python h100_train.py]\n"
	"        master:\n"
	"          replicas: 1\n"
	"          cpus_per_node: 16\n"
	"          memory: 64Gi\n"
	"          gpus_per_node: 0\n"
	"          rdma: false\n"
	"          processes_per_node: 1\n"
	"          command: [python coordinator.py]\n";

static void heterogeneous_tasks(void **state)
{
	static const char *const argv[] = { "python", "train.py" };
	struct aj_build_ctx ctx = { "hetero-1", NULL, NULL, NULL, NULL, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *job, *m, *a, *h;

	(void)state;
	aj_test_spec(hetero, &no_args, argv, 2, &s);
	job = build(&s, &ctx, &arr);
	assert_int_equal(s.tasks_nr, 3);
	assert_int_equal(aj_test_json_int(job, "spec.minAvailable"), 7);
	assert_int_equal(aj_test_json_size(job, "spec.tasks"), 3);
	assert_string_equal(aj_test_json_str(job, "spec.tasks[0].name"), "master");
	assert_string_equal(aj_test_json_str(job, "spec.tasks[1].name"), "a100-worker");
	assert_string_equal(aj_test_json_str(job, "spec.tasks[2].name"), "h100-worker");
	assert_int_equal(aj_test_json_int(job, "spec.tasks[1].replicas"), 2);
	assert_int_equal(aj_test_json_int(job, "spec.tasks[2].replicas"), 4);
	assert_int_equal(aj_test_json_int(job, "spec.tasks[2].minAvailable"), 4);

	m = aj_test_json_at(job, "spec.tasks[0].template.spec");
	a = aj_test_json_at(job, "spec.tasks[1].template.spec");
	h = aj_test_json_at(job, "spec.tasks[2].template.spec");
	assert_null(aj_test_json_at(m, "nodeSelector"));
	assert_string_equal(aj_test_json_str(a, "nodeSelector.\"nvidia.com/gpu.product\""), "A100-SXM4-80GB");
	assert_string_equal(aj_test_json_str(h, "nodeSelector.\"nvidia.com/gpu.product\""), "H100-80GB-HBM3");
	assert_non_null(aj_test_json_at(m, "affinity"));
	assert_int_equal(aj_test_json_size(m, "tolerations"), 0);
	/* GPU, RDMA, and the node label's taint of the same name (the dedicated-nodes convention) */
	assert_int_equal(aj_test_json_size(a, "tolerations"), 3);
	assert_string_equal(aj_test_json_str(a, "tolerations[2].key"), "nvidia.com/gpu.product");
	assert_string_equal(aj_test_json_str(a, "tolerations[2].operator"), "Equal");
	assert_string_equal(aj_test_json_str(a, "tolerations[2].value"), "A100-SXM4-80GB");
	assert_string_equal(aj_test_json_str(a, "tolerations[2].effect"), "NoSchedule");
	assert_int_equal(aj_test_json_size(m, "containers[0].resources.limits"), 2);
	assert_string_equal(aj_test_json_str(m, "containers[0].resources.limits.cpu"), "16");
	assert_string_equal(aj_test_json_str(m, "containers[0].resources.limits.memory"), "64Gi");
	assert_string_equal(aj_test_json_str(h, "containers[0].resources.limits.memory"), "1Ti");
	assert_string_equal(aj_test_json_str(a, "containers[0].resources.requests.\"nvidia.com/gpu\""), "8");

	assert_string_equal(script_of(m, "containers[0].command[2]"),
			    "set -eo pipefail\nexport NODE_RANK=$((0 + ${VK_TASK_INDEX:-0}))\n"
			    "python -m pip install -e .\npython coordinator.py\n");
	assert_string_equal(script_of(a, "containers[0].command[2]"),
			    "set -eo pipefail\nexport NODE_RANK=$((1 + ${VK_TASK_INDEX:-0}))\n"
			    "python -m pip install -e .\n\"$@\"\n");
	assert_string_equal(script_of(h, "containers[0].command[2]"),
			    "set -eo pipefail\nexport NODE_RANK=$((3 + ${VK_TASK_INDEX:-0}))\n"
			    "python -m pip install -e .\npython h100_train.py\n");
	/* WORLD_SIZE = 1x1 + 2x8 + 4x8 = 49; 7 pods */
	aj_test_env_is(aj_test_json_at(m, "containers[0]"), 2, "WORLD_SIZE", "49");
	aj_test_env_is(aj_test_json_at(m, "containers[0]"), 3, "AJ_NODES", "7");
	aj_test_env_is(aj_test_json_at(m, "containers[0]"), 4, "AJ_PROCESSES_PER_NODE", "1");
	aj_test_env_is(aj_test_json_at(h, "containers[0]"), 4, "AJ_PROCESSES_PER_NODE", "8");
	aj_test_env_is(aj_test_json_at(h, "containers[0]"), 5, "AJ_TASK", "h100-worker");
	aj_test_env_is(aj_test_json_at(h, "containers[0]"), 0, "MASTER_ADDR", "hetero-1-master-0.hetero-1");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void validate_fails(const char *yaml, const struct aj_shape_args *args, const char *fragment)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;

	aj_test_spec(yaml, args, NULL, 0, &s);
	assert_int_equal(aj_backend_check(volcano(), &s, &err), -1);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got:\n%s", fragment, aj_test_errors_text(&err));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

#define NAMES(target) \
	"config:\n  target: {service: volcano, " target "}\n  environment: {image: x}\n" \
	"  jobs: [{sku: C1, instance_count: 1}]\n"

/* Names the API server would refuse are caught by validate, with their key. */
/*
 * target.node_selector reaches every pod of a homogeneous job (master and
 * workers) and every task of a heterogeneous one, where a task's own
 * node_selector wins per key; each selected label also tolerates the
 * NoSchedule taint of the same key and value.
 */
static void target_node_selector(void **state)
{
	static const char *const argv[] = { "python", "train.py" };
	struct aj_build_ctx ctx = { "sel", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args three = { 3, 0, 0 };
	struct aj_jobspec s;
	struct aj_buf y = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *arr = NULL;
	const cJSON *job, *pod;
	size_t i;

	(void)state;
	aj_test_spec("config:\n  target: {service: volcano, gpus_per_node: 0, cpus_per_node: 1,"
		     " node_selector: {aj.dev/node: real, zone: a}}\n"
		     "  environment: {image: busybox}\n  jobs: [{sku: C1}]\n", &three, argv, 2, &s);
	job = build(&s, &ctx, &arr);
	assert_int_equal(aj_test_json_size(job, "spec.tasks"), 2);
	for (i = 0; i < 2; i++) {
		char at[64];

		snprintf(at, sizeof(at), "spec.tasks[%zu].template.spec", i);
		pod = aj_test_json_at(job, at);
		assert_int_equal(aj_test_json_size(pod, "nodeSelector"), 2);
		assert_string_equal(aj_test_json_str(pod, "nodeSelector.\"aj.dev/node\""), "real");
		assert_string_equal(aj_test_json_str(pod, "nodeSelector.zone"), "a");
		assert_int_equal(aj_test_json_size(pod, "tolerations"), 2);
		assert_string_equal(aj_test_json_str(pod, "tolerations[0].key"), "aj.dev/node");
		assert_string_equal(aj_test_json_str(pod, "tolerations[0].value"), "real");
		assert_string_equal(aj_test_json_str(pod, "tolerations[0].operator"), "Equal");
		assert_string_equal(aj_test_json_str(pod, "tolerations[1].key"), "zone");
	}
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	/* heterogeneous: the target's selector joins each task's, the task's value wins */
	/* hetero with its target line replaced */
	assert_int_equal(aj_buf_addf(&y, "config:\n  target: {service: volcano, namespace: training, "
				     "queue: default, node_selector: {nvidia.com/gpu.product: X, "
				     "aj.dev/node: real}}\n%s", strstr(hetero, "  environment:")), 0);
	aj_test_spec(aj_buf_cstr(&y), &no_args, argv, 2, &s);
	job = build(&s, &ctx, &arr);
	pod = aj_test_json_at(job, "spec.tasks[0].template.spec");  /* master: none of its own */
	assert_string_equal(aj_test_json_str(pod, "nodeSelector.\"nvidia.com/gpu.product\""), "X");
	assert_string_equal(aj_test_json_str(pod, "nodeSelector.\"aj.dev/node\""), "real");
	pod = aj_test_json_at(job, "spec.tasks[1].template.spec");  /* a100-worker */
	assert_int_equal(aj_test_json_size(pod, "nodeSelector"), 2);
	assert_string_equal(aj_test_json_str(pod, "nodeSelector.\"nvidia.com/gpu.product\""), "A100-SXM4-80GB");
	assert_string_equal(aj_test_json_str(pod, "nodeSelector.\"aj.dev/node\""), "real");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
	aj_buf_release(&y);
}

static void kubernetes_names_are_checked(void **state)
{
	static const char *const good[] = {
		NAMES("namespace: team-a, queue: gpu.q-1, priority_class: high"),
		NAMES("labels: {example.com/team: a_b.c-d, app: \"\"}"),
		/* aj.dev/ keys outside the pods' contract stay the user's (the kwok stages) */
		NAMES("labels: {aj.dev/kwok-hold: \"true\", aj.dev/ajjobs: x, my.volcano.sh/x: y}"),
	};
	struct aj_shape_args one = { 1, 1, 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_jobspec s;

		aj_test_spec(good[i], &one, NULL, 0, &s);
		if (aj_backend_check(volcano(), &s, &err))
			fail_msg("%s: %s", good[i], aj_test_errors_text(&err));
		aj_jobspec_release(&s);
	}
	/* 64 characters: one over the DNS label limit. */
	validate_fails(NAMES("namespace: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"),
		       &one, "config.target.namespace: \"aaaa");
	validate_fails(NAMES("namespace: Team"), &one, "is not a valid namespace");
	validate_fails(NAMES("queue: Q_1"), &one, "config.target.queue: \"Q_1\" is not a valid queue name");
	validate_fails(NAMES("queue: a..b"), &one, "is not a valid queue name");
	validate_fails(NAMES("priority_class: \"high prio\""), &one,
		       "config.target.priority_class: \"high prio\" is not a valid priority class");
	validate_fails(NAMES("labels: {\"bad key!\": x}"), &one,
		       "config.target.labels: \"bad key!\" is not a valid label key");
	validate_fails(NAMES("labels: {/x: y}"), &one, "\"/x\" is not a valid label key");
	validate_fails(NAMES("node_selector: {\"bad key\": real}"), &one,
		       "config.target.node_selector: \"bad key: real\" is not a node label");
	validate_fails(NAMES("node_selector: {aj.dev/node: \"re al\"}"), &one,
		       "\"aj.dev/node: re al\" is not a node label");
	validate_fails(NAMES("labels: {Bad_Prefix/x: y}"), &one, "is not a valid label key");
	validate_fails(NAMES("labels: {team: vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv}"),
		       &one, "config.target.labels: team: \"vvvv");
	validate_fails(NAMES("labels: {team: -x}"), &one, "team: \"-x\" is not a valid label value");
	/* what the builders set themselves is refused at the label's own key path */
	validate_fails(NAMES("labels: {aj.dev/ajjob: other}"), &one,
		       "config.target.labels.aj.dev/ajjob: reserved: aj sets this label on the pods "
		       "itself (choose a key of your own)");
	validate_fails(NAMES("labels: {aj.dev/task: worker}"), &one,
		       "config.target.labels.aj.dev/task: reserved: aj sets");
	validate_fails(NAMES("labels: {volcano.sh/job-name: x}"), &one,
		       "config.target.labels.volcano.sh/job-name: reserved: Volcano sets");
	validate_fails(NAMES("labels: {batch.kubernetes.io/job-name: x}"), &one,
		       "config.target.labels.batch.kubernetes.io/job-name: reserved: the Job controller sets");
}

#define TASK(name, extra) \
	"        " name ": {replicas: 1, cpus_per_node: 1, memory: 1Gi, gpus_per_node: 0, rdma: false, processes_per_node: 1" extra "}\n"
#define HETERO(tasks) \
	"config:\n  target: {service: volcano}\n  environment: {image: x}\n" \
	"  jobs: [{sku: heterogeneous}]\n  _extra:\n    volcano:\n      tasks:\n" tasks

static void heterogeneous_errors(void **state)
{
	(void)state;
	validate_fails(HETERO(TASK("worker", "")), &no_args,
		       "config._extra.volcano.tasks: exactly one task named master is required");
	validate_fails(HETERO("        master: {replicas: 2, cpus_per_node: 1, memory: 1Gi, gpus_per_node: 0, "
			      "rdma: false, processes_per_node: 1}\n"), &no_args,
		       "task master must have replicas: 1, not 2");
	validate_fails(HETERO("        master: {replicas: 1, memory: 1Gi}\n"), &no_args,
		       "test.yaml:8:17: config._extra.volcano.tasks.master.cpus_per_node: required");
	validate_fails(HETERO("        master: {replicas: 1, memory: 1Gi}\n"), &no_args,
		       "config._extra.volcano.tasks.master.processes_per_node: required");
	validate_fails(HETERO(TASK("master", ", gpus: 8")), &no_args,
		       "config._extra.volcano.tasks.master.gpus: unknown key (known here: replicas, "
		       "cpus_per_node, memory, gpus_per_node, rdma, processes_per_node, node_selector, command)");
	validate_fails(HETERO(TASK("master", "") TASK("A100_Worker", "")), &no_args,
		       "task name \"A100_Worker\" must be a lowercase DNS label");
	validate_fails(HETERO(TASK("master", ", command: python x.py")), &no_args,
		       "config._extra.volcano.tasks.master.command: expected list of strings");
	validate_fails(HETERO(TASK("master", ", command: []")), &no_args,
		       "task master: command must not be empty");
	validate_fails(HETERO("        master: {replicas: 1, cpus_per_node: 1, memory: 1Gi, gpus_per_node: 0, "
			      "rdma: on, processes_per_node: 1}\n"), &no_args,
		       "config._extra.volcano.tasks.master.rdma: expected boolean");
	validate_fails(HETERO("        master: 3\n"), &no_args,
		       "config._extra.volcano.tasks.master: expected mapping, got integer 3");
	validate_fails("config: {target: {service: volcano}, environment: {image: x}, jobs: [{sku: heterogeneous}]}",
		       &no_args, "config._extra.volcano.tasks: required");
	validate_fails("config: {environment: {image: x}, jobs: [{sku: heterogeneous}], _extra: {volcano: {tasks: []}}}",
		       &no_args, "config._extra.volcano.tasks: expected mapping of task names to task declarations, got list");
	validate_fails("config: {environment: {image: x}, jobs: [{sku: heterogeneous}], _extra: {volcano: {tasks: {}}}}",
		       &no_args, "config._extra.volcano.tasks: must declare at least one task");
}

static void homogeneous_errors(void **state)
{
	struct aj_shape_args one = { 1, 0, 0 };

	(void)state;
	validate_fails("config: {target: {gpus_per_node: 0}, jobs: [{sku: C1}]}", &one,
		       "config.environment.image: required for service volcano");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		       "jobs: [{sku: C1, submit_args: {container_args: {capabilities: [all]}}}]}",
		       &one, "container_args.capabilities[0]: ALL is not allowed");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		       "jobs: [{sku: C1, submit_args: {container_args: {capabilities: [\"SYS ADMIN\"]}}}]}",
		       &one, "\"SYS ADMIN\" is not a capability name");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		       "jobs: [{sku: C1, submit_args: {container_args: {scratch_mount_path: /dev}}}]}",
		       &one, "scratch_mount_path: /dev overlaps the shared-memory mount /dev/shm");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		       "storage: {data: {storage_account_name: a, container_name: c, mount_dir: /mnt/data}}, "
		       "jobs: [{sku: C1, submit_args: {container_args: {scratch_mount_path: /mnt/data/tmp/}}}]}",
		       &one, "scratch_mount_path: /mnt/data/tmp/ overlaps storage mount data (/mnt/data)");
}

/*
 * volcano.md, Lifecycle: the job completes when every pod has succeeded (no
 * task policy ends it early); a lost pod restarts the gang, bounded
 */
static void lifecycle_policies(void **state)
{
	struct aj_build_ctx ctx = { "train-abc", NULL, NULL, NULL, NULL, 0 };
	static const char *const argv[] = { "python", "train.py" };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *job;

	(void)state;
	aj_test_spec(homogeneous, &no_args, user_cmd, 4, &s);
	job = build(&s, &ctx, &arr);
	assert_int_equal(aj_test_json_int(job, "spec.maxRetry"), 3);
	assert_int_equal(aj_test_json_size(job, "spec.policies"), 2);
	assert_string_equal(aj_test_json_str(job, "spec.policies[0].event"), "PodEvicted");
	assert_string_equal(aj_test_json_str(job, "spec.policies[0].action"), "RestartJob");
	assert_string_equal(aj_test_json_str(job, "spec.policies[1].event"), "PodFailed");
	assert_string_equal(aj_test_json_str(job, "spec.policies[1].action"), "RestartJob");
	/* every pod must succeed: the job's and each task's gang is all of its pods */
	assert_int_equal(aj_test_json_int(job, "spec.minAvailable"), 2);
	assert_null(aj_test_json_at(job, "spec.tasks[0].policies"));
	assert_null(aj_test_json_at(job, "spec.tasks[1].policies"));
	assert_int_equal(aj_test_json_int(job, "spec.tasks[0].minAvailable"), 1);
	assert_int_equal(aj_test_json_int(job, "spec.tasks[1].minAvailable"), 1);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	/* heterogeneous: the same, the master included */
	aj_test_spec(hetero, &no_args, argv, 2, &s);
	job = build(&s, &ctx, &arr);
	assert_int_equal(aj_test_json_size(job, "spec.policies"), 2);
	assert_null(aj_test_json_at(job, "spec.tasks[0].policies"));
	assert_null(aj_test_json_at(job, "spec.tasks[1].policies"));
	assert_null(aj_test_json_at(job, "spec.tasks[2].policies"));
	assert_int_equal(aj_test_json_int(job, "spec.maxRetry"), 3);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}], "
		     "_extra: {volcano: {max_retry: 0}}}", &(struct aj_shape_args){ 1, 0, 0 }, NULL, 0, &s);
	job = build(&s, &ctx, &arr);
	assert_int_equal(aj_test_json_int(job, "spec.maxRetry"), 0);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void max_retry_errors(void **state)
{
	struct aj_shape_args one = { 1, 0, 0 };

	(void)state;
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}], "
		       "_extra: {volcano: {max_retry: -1}}}", &one,
		       "config._extra.volcano.max_retry: expected an integer from 0 to 100");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}], "
		       "_extra: {volcano: {max_retry: 101}}}", &one,
		       "config._extra.volcano.max_retry: expected an integer from 0 to 100");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}], "
		       "_extra: {volcano: {max_retry: often}}}", &one,
		       "test.yaml:1:112: config._extra.volcano.max_retry: expected an integer");
}

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define SHARED(extra) \
	"config: {target: {gpus_per_node: 0}, environment: {image: x, setup: [make]}, " \
	"jobs: [{sku: C1, submit_args: {env: {AMLT_PERSISTENT_VOLUME_NAME: team-pvc, " \
	"AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/shared}" extra "}}]}"

/* The helper pod goes where the job's pods go: target.node_selector, with its tolerations. */
static void helper_pod_follows_node_selector(void **state)
{
	struct aj_shape_args args = { 1, 0, 0 };
	struct aj_jobspec s;
	cJSON *pod;

	(void)state;
	aj_test_spec(SHARED(""), &args, NULL, 0, &s);
	pod = aj_code_helper_pod(&s, "aj-code-x", "ns");
	assert_non_null(pod);
	assert_null(aj_test_json_at(pod, "spec.nodeSelector"));
	assert_null(aj_test_json_at(pod, "spec.tolerations"));
	cJSON_Delete(pod);
	aj_jobspec_release(&s);

	aj_test_spec("config: {target: {gpus_per_node: 0, node_selector: {aj.dev/node: real}}, "
		     "environment: {image: x}, jobs: [{sku: C1, submit_args: {env: "
		     "{AMLT_PERSISTENT_VOLUME_NAME: team-pvc, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/shared}}}]}",
		     &args, NULL, 0, &s);
	pod = aj_code_helper_pod(&s, "aj-code-x", "ns");
	assert_non_null(pod);
	assert_int_equal(aj_test_json_size(pod, "spec.nodeSelector"), 1);
	assert_string_equal(aj_test_json_str(pod, "spec.nodeSelector.\"aj.dev/node\""), "real");
	assert_int_equal(aj_test_json_size(pod, "spec.tolerations"), 1);
	assert_string_equal(aj_test_json_str(pod, "spec.tolerations[0].key"), "aj.dev/node");
	assert_string_equal(aj_test_json_str(pod, "spec.tolerations[0].operator"), "Equal");
	assert_string_equal(aj_test_json_str(pod, "spec.tolerations[0].value"), "real");
	assert_string_equal(aj_test_json_str(pod, "spec.tolerations[0].effect"), "NoSchedule");
	cJSON_Delete(pod);
	aj_jobspec_release(&s);
}

/* seed "Volcano example": code goes helper pod -> PVC -> each pod's work directory */
static void code_from_shared_volume(void **state)
{
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args args = { 2, 0, 0 };
	static const char *const argv[] = { "python", "train.py" };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *pod, *c;

	(void)state;
	aj_test_spec(SHARED(""), &args, argv, 2, &s);
	s.code.digest = aj_strdup(SHA_EMPTY);
	pod = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[1].template.spec");
	assert_int_equal(aj_test_json_size(pod, "volumes"), 3);
	assert_string_equal(aj_test_json_str(pod, "volumes[1].name"), "shared");
	assert_string_equal(aj_test_json_str(pod, "volumes[1].persistentVolumeClaim.claimName"), "team-pvc");
	assert_string_equal(aj_test_json_str(pod, "volumes[2].name"), "code");
	assert_int_equal(aj_test_json_size(pod, "volumes[2].emptyDir"), 0);
	c = aj_test_json_at(pod, "containers[0]");
	assert_string_equal(aj_test_json_str(c, "workingDir"), "/aj/code");
	assert_int_equal(aj_test_json_size(c, "volumeMounts"), 3);
	assert_string_equal(aj_test_json_str(c, "volumeMounts[1].name"), "shared");
	assert_string_equal(aj_test_json_str(c, "volumeMounts[1].mountPath"), "/mnt/shared");
	assert_string_equal(aj_test_json_str(c, "volumeMounts[2].name"), "code");
	assert_string_equal(aj_test_json_str(c, "volumeMounts[2].mountPath"), "/aj/code");
	/* the copy comes after the rank and before setup */
	assert_string_equal(script_of(c, "command[2]"),
			    "set -eo pipefail\nexport NODE_RANK=$((1 + ${VK_TASK_INDEX:-0}))\n"
			    "test -d '/mnt/shared/.aj-code/" SHA_EMPTY "' || { echo 'aj: code " SHA_EMPTY
			    " is not in volume team-pvc at /mnt/shared/.aj-code/" SHA_EMPTY
			    ": upload it with aj code upload' >&2; exit 1; }\n"
			    "cp -a '/mnt/shared/.aj-code/" SHA_EMPTY "/.' /aj/code/\n"
			    "cd /aj/code\n"
			    "make\n\"$@\"\n");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	/* the volume without code: mounted, nothing copied, the image's own work directory */
	aj_test_spec(SHARED(""), &args, argv, 2, &s);
	pod = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[0].template.spec");
	assert_int_equal(aj_test_json_size(pod, "volumes"), 2);
	assert_string_equal(aj_test_json_str(pod, "volumes[1].persistentVolumeClaim.claimName"), "team-pvc");
	c = aj_test_json_at(pod, "containers[0]");
	assert_null(aj_test_json_at(c, "workingDir"));
	assert_int_equal(aj_test_json_size(c, "volumeMounts"), 2);
	assert_string_equal(script_of(c, "command[2]"),
			    "set -eo pipefail\nexport NODE_RANK=$((0 + ${VK_TASK_INDEX:-0}))\n"
			    "make\n\"$@\"\n");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	/* one variable alone is not a shared volume */
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		     "jobs: [{sku: C1, submit_args: {env: {AMLT_PERSISTENT_VOLUME_NAME: team-pvc}}}]}",
		     &args, argv, 2, &s);
	pod = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[0].template.spec");
	assert_int_equal(aj_test_json_size(pod, "volumes"), 1);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* seed "Storage": blobfuse2 in the pods, its configuration from the job's Secret */
#define STORAGE(entries) \
	"config: {target: {gpus_per_node: 0}, environment: {image: x, setup: [make]}, " \
	"jobs: [{sku: C1}], storage: {" entries "}}"
#define DATA "data: {storage_account_name: acct1, container_name: results, mount_dir: /mnt/data}"

static void storage_mounts_blobfuse(void **state)
{
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args args = { 2, 0, 0 };
	static const char *const argv[] = { "python", "train.py" };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *pod, *c;
	int t;

	(void)state;
	aj_test_spec(STORAGE(DATA ", logs: {storage_account_name: acct2, container_name: l-1, "
			     "mount_dir: /mnt/logs/}"), &args, argv, 2, &s);
	build(&s, &ctx, &arr);
	for (t = 0; t < 2; t++) {   /* master and worker alike */
		char path[64];

		snprintf(path, sizeof(path), "spec.tasks[%d].template.spec", t);
		pod = aj_test_json_at(cJSON_GetArrayItem(arr, 0), path);
		assert_int_equal(aj_test_json_size(pod, "volumes"), 3);
		assert_string_equal(aj_test_json_str(pod, "volumes[1].name"), "storage-secret");
		assert_string_equal(aj_test_json_str(pod, "volumes[1].secret.secretName"), "j-storage");
		assert_int_equal(aj_test_json_int(pod, "volumes[1].secret.defaultMode"), 256);
		assert_null(aj_test_json_at(pod, "volumes[1].secret.items"));
		assert_string_equal(aj_test_json_str(pod, "volumes[2].name"), "storage-cache");
		assert_int_equal(aj_test_json_size(pod, "volumes[2].emptyDir"), 0);
		c = aj_test_json_at(pod, "containers[0]");
		assert_true(cJSON_IsTrue(aj_test_json_at(c, "securityContext.privileged")));
		assert_null(aj_test_json_at(c, "securityContext.capabilities"));
		assert_int_equal(aj_test_json_size(c, "volumeMounts"), 3);
		assert_string_equal(aj_test_json_str(c, "volumeMounts[1].name"), "storage-secret");
		assert_string_equal(aj_test_json_str(c, "volumeMounts[1].mountPath"), "/aj/secret");
		assert_true(cJSON_IsTrue(aj_test_json_at(c, "volumeMounts[1].readOnly")));
		/* the whole Secret, so a renewed SAS reaches the running pod */
		assert_null(aj_test_json_at(c, "volumeMounts[1].subPath"));
		assert_string_equal(aj_test_json_str(c, "volumeMounts[2].name"), "storage-cache");
		assert_string_equal(aj_test_json_str(c, "volumeMounts[2].mountPath"), "/aj/blobfuse");
		assert_null(aj_test_json_at(c, "workingDir"));
	}
	/* mounts come after the rank and before setup */
	assert_string_equal(script_of(c, "command[2]"),
			    "set -eo pipefail\nexport NODE_RANK=$((1 + ${VK_TASK_INDEX:-0}))\n"
			    "aj_mounted() {\n"
			    "  for _ in $(seq 60); do mountpoint -q \"$1\" && return 0; sleep 1; done\n"
			    "  echo \"aj: storage $2 is not mounted at $1 after 60 s\" >&2\n"
			    "  return 1\n"
			    "}\n"
			    "mkdir -p '/mnt/data' '/aj/blobfuse/data'\n"
			    "blobfuse2 mount '/mnt/data' '--config-file=/aj/secret/data.yaml' "
			    "'--tmp-path=/aj/blobfuse/data'\n"
			    "aj_mounted '/mnt/data' 'data'\n"
			    "mkdir -p '/mnt/logs/' '/aj/blobfuse/logs'\n"
			    "blobfuse2 mount '/mnt/logs/' '--config-file=/aj/secret/logs.yaml' "
			    "'--tmp-path=/aj/blobfuse/logs'\n"
			    "aj_mounted '/mnt/logs/' 'logs'\n"
			    "make\n\"$@\"\n");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* Privilege only with storage: capabilities alone, or nothing, never privileged */
static void no_privilege_without_storage(void **state)
{
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args one = { 1, 0, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *c;

	(void)state;
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}",
		     &one, NULL, 0, &s);
	c = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[0].template.spec.containers[0]");
	assert_null(aj_test_json_at(c, "securityContext"));
	assert_int_equal(aj_test_json_size(c, "volumeMounts"), 1);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, "
		     "submit_args: {container_args: {capabilities: [SYS_ADMIN]}}}]}", &one, NULL, 0, &s);
	c = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[0].template.spec.containers[0]");
	assert_null(aj_test_json_at(c, "securityContext.privileged"));
	assert_string_equal(aj_test_json_str(c, "securityContext.capabilities.add[0]"), "SYS_ADMIN");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	/* both: privileged, and the capabilities still listed */
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, "
		     "submit_args: {container_args: {capabilities: [net_admin]}}}], storage: {" DATA "}}",
		     &one, NULL, 0, &s);
	c = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[0].template.spec.containers[0]");
	assert_true(cJSON_IsTrue(aj_test_json_at(c, "securityContext.privileged")));
	assert_string_equal(aj_test_json_str(c, "securityContext.capabilities.add[0]"), "NET_ADMIN");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* A hostile mount directory reaches blobfuse2 as one argument (bash is the judge) */
static void storage_paths_survive_bash(void **state)
{
	static const char *const user[] = { "true" };
	static const char dir[] = "/mnt/it's $(touch /tmp/aj-pwned) \"q\" `id` a\nb";
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args one = { 1, 0, 0 };
	struct aj_buf yaml = AJ_BUF_INIT(AJ_BUF_SMALL), script = AJ_BUF_INIT(AJ_BUF_LARGE);
	char *bash[4] = { "/bin/bash", "-c", NULL, NULL };
	struct aj_jobspec s;
	cJSON *arr = NULL, *str;
	char *out, *quoted, want[512];
	size_t len, n = 0;
	const char *parts[] = {
		"mkdir", "-p", dir, "/aj/blobfuse/my_data-1",
		"blobfuse2", "mount", dir, "--config-file=/aj/secret/my_data-1.yaml",
		"--tmp-path=/aj/blobfuse/my_data-1", "mountpoint", "-q", dir,
	};
	size_t i;

	(void)state;
	/* the YAML double-quoted form of dir, built by hand */
	str = cJSON_CreateString(dir);
	assert_non_null(str);
	quoted = cJSON_PrintUnformatted(str);
	assert_non_null(quoted);
	aj_buf_addf(&yaml, "config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		    "jobs: [{sku: C1}], storage: {my_data-1: {storage_account_name: acct1, "
		    "container_name: results, mount_dir: %s}}}", quoted);
	cJSON_free(quoted);
	cJSON_Delete(str);
	aj_test_spec(aj_buf_cstr(&yaml), &one, user, 1, &s);
	aj_buf_addstr(&script, "exec 2>&1\n"
		      "mkdir() { printf '%s\\0' mkdir \"$@\"; }\n"
		      "blobfuse2() { printf '%s\\0' blobfuse2 \"$@\"; }\n"
		      "mountpoint() { printf '%s\\0' mountpoint \"$@\"; }\n");
	aj_buf_addstr(&script, script_of(build(&s, &ctx, &arr), "spec.tasks[0].template.spec.containers[0].command[2]"));
	bash[2] = strdup(aj_buf_cstr(&script));
	assert_int_equal(aj_test_spawn(bash, NULL, NULL, &out, &len), 0);
	free(bash[2]);
	for (i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		memcpy(want + n, parts[i], strlen(parts[i]) + 1);
		n += strlen(parts[i]) + 1;
	}
	assert_int_equal(len, n);
	assert_memory_equal(out, want, n);
	free(out);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
	aj_buf_release(&yaml);
	aj_buf_release(&script);
}

static void storage_errors(void **state)
{
	struct aj_shape_args one = { 1, 0, 0 };

	(void)state;
	validate_fails(STORAGE("\"x'y\": {storage_account_name: acct1, container_name: results, "
			       "mount_dir: /mnt/x}"), &one,
		       "config.storage.x'y: storage name \"x'y\" must be at most 63 letters, digits, "
		       "'-' and '_', starting with a letter or digit");
	validate_fails(STORAGE("d: {storage_account_name: Acct, container_name: results, mount_dir: /mnt/x}"),
		       &one, "config.storage.d.storage_account_name: \"Acct\" is not a storage account name");
	validate_fails(STORAGE("d: {storage_account_name: ab, container_name: results, mount_dir: /mnt/x}"),
		       &one, "config.storage.d.storage_account_name: \"ab\" is not a storage account name");
	validate_fails(STORAGE("d: {storage_account_name: acct1, container_name: a--b, mount_dir: /mnt/x}"),
		       &one, "config.storage.d.container_name: \"a--b\" is not a container name");
	validate_fails(STORAGE("d: {storage_account_name: acct1, container_name: -ab, mount_dir: /mnt/x}"),
		       &one, "config.storage.d.container_name: \"-ab\" is not a container name");
	validate_fails(STORAGE("d: {storage_account_name: acct1, container_name: results, "
			       "mount_dir: /mnt/../dev/shm}"),
		       &one, "\"/mnt/../dev/shm\" must be an absolute path other than / without empty, "
		       ". or .. components");
	validate_fails(STORAGE("d: {storage_account_name: acct1, container_name: results, mount_dir: /mnt//x}"),
		       &one, "\"/mnt//x\" must be an absolute path");
	validate_fails(STORAGE("d: {storage_account_name: acct1, container_name: results, mount_dir: /dev}"),
		       &one, "config.storage.d.mount_dir: /dev overlaps the shared-memory mount /dev/shm");
	validate_fails(STORAGE("d: {storage_account_name: acct1, container_name: results, mount_dir: /aj/data}"),
		       &one, "config.storage.d.mount_dir: /aj/data overlaps /aj, which holds the work "
		       "directory /aj/code");
	validate_fails(STORAGE(DATA ", e: {storage_account_name: acct1, container_name: other, "
			       "mount_dir: /mnt/data/e}"),
		       &one, "config.storage.e.mount_dir: /mnt/data/e overlaps storage mount data (/mnt/data)");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, "
		       "submit_args: {env: {AMLT_PERSISTENT_VOLUME_NAME: p, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt}}}], "
		       "storage: {" DATA "}}", &one,
		       "config.storage.data.mount_dir: /mnt/data overlaps the shared volume p (/mnt)");
}

#define BLOB(settings) \
	"config: {target: {gpus_per_node: 0}, environment: {image: x, setup: [make]}, " \
	"jobs: [{sku: C1}], _extra: {code_upload: {strategy: blob" settings "}}}"

static void blob_code_settings(void **state)
{
	struct aj_shape_args one = { 1, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_code_blob b;
	struct aj_buf name = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_jobspec s;

	(void)state;
	aj_test_spec(BLOB(", blob: {storage_account: acct1, container: code}"), &one, NULL, 0, &s);
	assert_int_equal(aj_code_blob(&s, &b, &err), 1);
	assert_string_equal(b.account, "acct1");
	assert_string_equal(b.container, "code");
	assert_string_equal(b.upload_dir, "aj-code");
	assert_int_equal(b.sas_expiry_days, 1);
	assert_int_equal(b.pod_download_retries, 5);
	assert_int_equal(aj_code_blob_name(&b, SHA_EMPTY, &name), 0);
	assert_string_equal(aj_buf_cstr(&name), "aj-code/" SHA_EMPTY ".tar.gz");
	aj_jobspec_release(&s);

	aj_test_spec(BLOB(", blob: {storage_account: acct1, container: code, upload_dir: team/a.b_c-1, "
			  "sas_expiry_days: 7, pod_download_retries: 0}"), &one, NULL, 0, &s);
	assert_int_equal(aj_code_blob(&s, &b, &err), 1);
	assert_string_equal(b.upload_dir, "team/a.b_c-1");
	assert_int_equal(b.sas_expiry_days, 7);
	assert_int_equal(b.pod_download_retries, 0);
	aj_jobspec_release(&s);

	/* another strategy: not a blob */
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}",
		     &one, NULL, 0, &s);
	assert_int_equal(aj_code_blob(&s, &b, &err), 0);
	aj_jobspec_release(&s);
	assert_int_equal(aj_errors_count(&err), 0);
	aj_buf_release(&name);

	validate_fails(BLOB(""), &one, "config._extra.code_upload.blob.storage_account: required with "
		       "strategy blob");
	validate_fails(BLOB(""), &one, "config._extra.code_upload.blob.container: required with "
		       "strategy blob");
	validate_fails(BLOB(", blob: [acct1]"), &one, "config._extra.code_upload.blob: expected a mapping");
	validate_fails(BLOB(", blob: {storage_account: ACCT, container: code}"), &one,
		       "config._extra.code_upload.blob.storage_account: \"ACCT\" is not a storage account name");
	validate_fails(BLOB(", blob: {storage_account: acct1, container: c}"), &one,
		       "config._extra.code_upload.blob.container: \"c\" is not a container name");
	validate_fails(BLOB(", blob: {storage_account: acct1, container: code, upload_dir: ../x}"), &one,
		       "config._extra.code_upload.blob.upload_dir: \"../x\" is not a relative blob path");
	validate_fails(BLOB(", blob: {storage_account: acct1, container: code, upload_dir: /x}"), &one,
		       "upload_dir: \"/x\" is not a relative blob path");
	validate_fails(BLOB(", blob: {storage_account: acct1, container: code, upload_dir: \"a b\"}"), &one,
		       "upload_dir: \"a b\" is not a relative blob path");
	validate_fails(BLOB(", blob: {storage_account: acct1, container: code, upload_dir: 3}"), &one,
		       "upload_dir: expected a string");
	validate_fails(BLOB(", blob: {storage_account: acct1, container: code, sas_expiry_days: 8}"), &one,
		       "config._extra.code_upload.blob.sas_expiry_days: expected an integer from 1 to 7");
	validate_fails(BLOB(", blob: {storage_account: acct1, container: code, pod_download_retries: -1}"),
		       &one, "config._extra.code_upload.blob.pod_download_retries: expected an integer "
		       "from 0 to 100");
}

/*
 * The pod side of the blob strategy, run by bash with the outside world
 * replaced: azcopy fails twice, then copies a real archive; the script must
 * retry, check the SHA-256, unpack, and run the command in the work directory.
 */
static int run_download(const char *tmp, const char *digest, int retries, char **out)
{
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args one = { 1, 0, 0 };
	static const char *const user[] = { "cat", "hello.txt" };
	struct aj_buf yaml = AJ_BUF_INIT(AJ_BUF_SMALL), script = AJ_BUF_INIT(AJ_BUF_LARGE);
	/* the user command follows the script as its arguments, as in the pod */
	char *bash[] = { "/bin/bash", "-c", NULL, "aj", "cat", "hello.txt", NULL };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	size_t len;
	int rc;

	aj_buf_addf(&yaml, BLOB(", blob: {storage_account: acct1, container: code, "
				"pod_download_retries: %d}"), retries);
	aj_test_spec(aj_buf_cstr(&yaml), &one, user, 2, &s);
	s.code.digest = aj_strdup(digest);
	aj_buf_addf(&script, "exec 2>&1\nT='%s'\n", tmp);
	aj_buf_addstr(&script,
		      "mktemp() { echo \"$T/dl\"; }\n"
		      "sleep() { :; }\n"
		      "rm() { :; }\n"
		      "make() { echo setup ran; }\n"
		      "curl() { echo \"curl $*\" >>\"$T/calls\"; : >\"$3\"; }\n"
		      "cat() { if [ \"$1\" = /aj/secret/code-url ]; then echo 'https://acct1.example/code/x?sig=s'; "
		      "else command cat \"$@\"; fi; }\n"
		      "tar() { case \"$2\" in *azcopy.tgz) cp \"$T/azcopy\" \"$T/dl/azcopy\" ;; "
		      "*) command tar \"${@/#\\/aj\\/code/$T/code}\" ;; esac; }\n"
		      "cd() { builtin cd \"${1/#\\/aj\\/code/$T/code}\"; }\n");
	aj_buf_addstr(&script, script_of(build(&s, &ctx, &arr), "spec.tasks[0].template.spec.containers[0].command[2]"));
	bash[2] = strdup(aj_buf_cstr(&script));
	rc = aj_test_spawn(bash, NULL, NULL, out, &len);
	free(bash[2]);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
	aj_buf_release(&yaml);
	aj_buf_release(&script);
	return rc;
}

static void blob_code_download(void **state)
{
	static const char azcopy[] =
		"#!/bin/bash\n"
		"n=$(($(command cat \"$T/count\" 2>/dev/null || echo 0) + 1))\n"
		"echo $n >\"$T/count\"\n"
		"echo \"$@\" >\"$T/args\"\n"
		"[ $n -gt 2 ] || exit 1\n"
		"command cp \"$T/archive.tar.gz\" \"$3\"\n";
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args one = { 1, 0, 0 };
	char *tmp = aj_test_mkdtemp(), *out, *path, *sum, *args;
	char *sh[4] = { "/bin/sh", "-c", NULL, NULL };
	char cmd[1024], digest[65];
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *pod, *c;
	size_t len;

	(void)state;
	/* the structure: the Secret for the URL, an emptyDir work directory, no privilege */
	aj_test_spec(BLOB(", blob: {storage_account: acct1, container: code}"), &one, NULL, 0, &s);
	s.code.digest = aj_strdup(SHA_EMPTY);
	pod = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[0].template.spec");
	assert_int_equal(aj_test_json_size(pod, "volumes"), 3);
	assert_string_equal(aj_test_json_str(pod, "volumes[1].name"), "code");
	assert_string_equal(aj_test_json_str(pod, "volumes[2].secret.secretName"), "j-storage");
	c = aj_test_json_at(pod, "containers[0]");
	assert_string_equal(aj_test_json_str(c, "workingDir"), "/aj/code");
	assert_null(aj_test_json_at(c, "securityContext"));
	assert_string_equal(aj_test_json_str(c, "volumeMounts[2].mountPath"), "/aj/secret");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	/* a real archive and its digest from sha256sum */
	aj_test_write(tmp, "src/hello.txt", "hello from blob\n", 16, 0644);
	aj_test_write(tmp, "azcopy", azcopy, sizeof(azcopy) - 1, 0755);
	aj_test_mkdir(tmp, "dl");
	aj_test_mkdir(tmp, "code");
	snprintf(cmd, sizeof(cmd), "cd '%s' && tar -czf archive.tar.gz -C src . && "
		 "sha256sum archive.tar.gz | cut -c1-64", tmp);
	sh[2] = cmd;
	assert_int_equal(aj_test_spawn(sh, NULL, NULL, &sum, &len), 0);
	assert_int_equal(len, 65);
	memcpy(digest, sum, 64);
	digest[64] = '\0';
	free(sum);

	/* two failures, three attempts allowed: the code runs */
	setenv("T", tmp, 1);
	assert_int_equal(run_download(tmp, digest, 2, &out), 0);
	assert_string_equal(out, "setup ran\nhello from blob\n");
	free(out);
	path = aj_test_join(tmp, "count");
	out = aj_test_read(path, &len);
	assert_string_equal(out, "3\n");
	free(out);
	free(path);
	path = aj_test_join(tmp, "args");
	args = aj_test_read(path, &len);
	assert_non_null(strstr(args, "copy https://acct1.example/code/x?sig=s "));
	free(args);
	free(path);
	path = aj_test_join(tmp, "calls");
	out = aj_test_read(path, &len);
	assert_non_null(strstr(out, "https://aka.ms/downloadazcopy-v10-linux"));
	free(out);
	free(path);

	/* one retry is not enough for two failures */
	path = aj_test_join(tmp, "count");
	unlink(path);
	free(path);
	assert_int_not_equal(run_download(tmp, digest, 1, &out), 0);
	assert_non_null(strstr(out, "aj: downloading the code failed after 2 attempts"));
	assert_null(strstr(out, "hello from blob"));
	free(out);

	/* a different archive than the AjJob names: stop before running anything */
	path = aj_test_join(tmp, "count");
	unlink(path);
	free(path);
	assert_int_not_equal(run_download(tmp, SHA_EMPTY, 5, &out), 0);
	snprintf(cmd, sizeof(cmd), "aj: the code archive has SHA-256 %s, expected %s", digest, SHA_EMPTY);
	assert_non_null(strstr(out, cmd));
	assert_null(strstr(out, "setup ran"));
	free(out);
	unsetenv("T");
	aj_test_rm_rf(tmp);
	free(tmp);
}

static void code_volume_errors(void **state)
{
	struct aj_shape_args one = { 1, 0, 0 };
	static const char *bad_pvc =
		"config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, submit_args: "
		"{env: {AMLT_PERSISTENT_VOLUME_NAME: Team_PVC, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/s}}}]}";

	(void)state;
	validate_fails(bad_pvc, &one, "config.jobs[0].submit_args.env.AMLT_PERSISTENT_VOLUME_NAME: "
		       "\"Team_PVC\" is not a PersistentVolumeClaim name");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, submit_args: "
		       "{env: {AMLT_PERSISTENT_VOLUME_NAME: a..b, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/s}}}]}",
		       &one, "\"a..b\" is not a PersistentVolumeClaim name");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, submit_args: "
		       "{env: {AMLT_PERSISTENT_VOLUME_NAME: p, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: mnt/s}}}]}",
		       &one, "config.jobs[0].submit_args.env.AMLT_PERSISTENT_VOLUME_MOUNT_DIR: \"mnt/s\" "
		       "must be an absolute path other than /");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, submit_args: "
		       "{env: {AMLT_PERSISTENT_VOLUME_NAME: p, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: //}}}]}",
		       &one, "\"//\" must be an absolute path other than /");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, submit_args: "
		       "{env: {AMLT_PERSISTENT_VOLUME_NAME: p, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /dev}}}]}",
		       &one, "AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /dev overlaps the shared-memory mount /dev/shm");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, submit_args: "
		       "{env: {AMLT_PERSISTENT_VOLUME_NAME: p, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /aj/code/pvc}}}]}",
		       &one, "AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /aj/code/pvc overlaps the work directory /aj/code");
	validate_fails(SHARED(", container_args: {scratch_mount_path: /mnt}"), &one,
		       "scratch_mount_path: /mnt overlaps the shared volume team-pvc (/mnt/shared)");
	validate_fails(SHARED(", container_args: {scratch_mount_path: /aj}"), &one,
		       "scratch_mount_path: /aj overlaps the work directory /aj/code");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}], "
		       "_extra: {code_upload: {strategy: rsync}}}", &one,
		       "config._extra.code_upload.strategy: expected kubectl-exec or blob");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}], "
		       "_extra: {code_upload: {strategy: [blob]}}}", &one,
		       "config._extra.code_upload.strategy: expected kubectl-exec or blob");
}

/* A digest needs a volume to come from, and must be a digest */
static void code_digest_errors(void **state)
{
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args one = { 1, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;

	(void)state;
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}",
		     &one, NULL, 0, &s);
	s.code.digest = aj_strdup(SHA_EMPTY);
	assert_int_equal(aj_backend_check(volcano(), &s, &err), 0);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), -1);
	assert_null(arr);
	assert_true(aj_test_errors_contain(&err, "config.jobs[0].submit_args.env: the job carries code ("
					   SHA_EMPTY ") but its code does not go through a shared volume: "
					   "set both AMLT_PERSISTENT_VOLUME_NAME and "
					   "AMLT_PERSISTENT_VOLUME_MOUNT_DIR"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);

	/* the seed's blob alternative: the volume is mounted, the code goes another way */
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1, "
		     "submit_args: {env: {AMLT_PERSISTENT_VOLUME_NAME: p, AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /m}}}], "
		     "_extra: {code_upload: {strategy: blob, blob: {storage_account: acct, container: code}}}}",
		     &one, NULL, 0, &s);
	assert_int_equal(aj_backend_check(volcano(), &s, &err), 0);
	assert_false(aj_code_via_volume(&s, &(struct aj_code_volume){ NULL, NULL }));
	s.code.digest = aj_strdup(SHA_EMPTY);
	assert_non_null(build(&s, &ctx, &arr));
	cJSON_Delete(arr);
	arr = NULL;
	aj_jobspec_release(&s);

	aj_test_spec(SHARED(""), &one, NULL, 0, &s);
	s.code.digest = aj_strdup("E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855");
	assert_int_equal(aj_backend_check(volcano(), &s, &err), 0);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), -1);
	assert_true(aj_test_errors_contain(&err, "is not a SHA-256 in hex"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);

	assert_true(aj_sha256_hex(SHA_EMPTY));
	assert_false(aj_sha256_hex(SHA_EMPTY "0"));
	assert_false(aj_sha256_hex("e3b0"));
	assert_false(aj_sha256_hex("g3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
}

/* build fails with a message naming the fragment; nothing is returned */
static void build_refuses(const char *job_name, const char *yaml, const struct aj_shape_args *args,
			  const char *const *argv, size_t argc, const char *fragment)
{
	struct aj_build_ctx ctx = { job_name, NULL, NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;

	aj_test_spec(yaml, args, argv, argc, &s);
	assert_int_equal(aj_backend_check(volcano(), &s, &err), 0);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), -1);
	assert_null(arr);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got:\n%s", fragment, aj_test_errors_text(&err));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

static void build_fails(const char *job_name, int nodes, const char *fragment)
{
	struct aj_shape_args args = { nodes, 0, 0 };

	build_refuses(job_name, "config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		      "jobs: [{sku: C1}]}", &args, NULL, 0, fragment);
}

/* volcano.md §7: job name <= 59, DNS-1035; <job>-<task>-<index> <= 63 */
static void name_limits(void **state)
{
	char name[80];

	(void)state;
	memset(name, 'a', 60);
	name[60] = '\0';
	build_fails(name, 1, "metadata.name: job name \"aaaa");
	build_fails("Train", 1, "must be at most 59 lowercase letters");
	build_fails("1train", 1, "starting with a letter");
	build_fails("train-", 1, "job name \"train-\"");
	build_fails("tr_ain", 1, "job name \"tr_ain\"");
	/* 55 + "-master-0" = 64 */
	name[55] = '\0';
	build_fails(name, 1, "pod name aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa-master-0 is 64 characters, over 63");
	/* 50 + "-worker-" + "10" = 60 fits; 54 + "-worker-10" = 64 does not */
	name[54] = '\0';
	build_fails(name, 12, "-worker-10 is 64 characters");
	build_fails(NULL, 1, "no job name");
}

static void name_limits_edge_fits(void **state)
{
	struct aj_build_ctx ctx = { NULL, NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args args = { 11, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	char name[64];
	cJSON *arr = NULL;

	(void)state;
	/* 53 + "-worker-9" = 62 and 53 + "-master-0" = 62 */
	memset(name, 'b', 53);
	name[53] = '\0';
	ctx.job_name = name;
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}",
		     &args, NULL, 0, &s);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), 0);
	cJSON_Delete(arr);
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

/* build() refuses a spec whose shape was never resolved, instead of guessing */
static void build_needs_a_resolved_shape(void **state)
{
	struct aj_build_ctx ctx = { "j", NULL, NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;

	(void)state;
	aj_test_spec(hetero, &no_args, NULL, 0, &s);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), -1);
	assert_true(aj_test_errors_contain(&err, "cannot build a Volcano job: the job shape is not resolved"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);

	aj_test_spec("config: {jobs: [{sku: G1, instance_count: 1}], target: {gpus_per_node: 1}}",
		     &no_args, NULL, 0, &s);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), -1);
	assert_true(aj_test_errors_contain(&err, "cannot build a Volcano job: config.environment.image is not set"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

/*
 * Tasks that cannot be read are not kept, so the spec never looks prepared;
 * validate leaves the spec as it was, so checking twice says the same.
 */
static void failed_tasks_are_dropped(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;

	(void)state;
	aj_test_spec(HETERO("        master: {replicas: 1, memory: 1Gi}\n"), &no_args, NULL, 0, &s);
	assert_int_equal(volcano()->prepare(&s, &err), -1);
	assert_int_equal(s.tasks_nr, 0);
	assert_int_equal(volcano()->prepare(&s, &err), -1);
	aj_errors_release(&err);
	aj_jobspec_release(&s);

	aj_test_spec(HETERO(TASK("worker", "")), &no_args, NULL, 0, &s);
	assert_int_equal(aj_backend_check(volcano(), &s, &err), -1);
	assert_int_equal(s.tasks_nr, 1);
	assert_int_equal(volcano()->validate(&s, &err), -1);
	assert_int_equal(s.tasks_nr, 1);
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

static void owner_needs_api_version(void **state)
{
	struct aj_build_ctx ctx = { "j", NULL, "uid", "j", NULL, 0 };
	struct aj_shape_args args = { 1, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;

	(void)state;
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}",
		     &args, NULL, 0, &s);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), -1);
	assert_true(aj_test_errors_contain(&err, "owner uid needs the owner's name and apiVersion"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

/* Hostile arguments reach the program byte for byte: run the script with bash. */
/* Every argument reaches the program byte for byte, as its own argv item. */
static void hostile_arguments_survive_bash(void **state)
{
	static const char *const hostile[] = {
		"/usr/bin/printf", "%s\\0",
		"$(rm -rf /)", "`touch /tmp/aj-pwned`", "a\nb", "'", "\"", "'\"'\"'", "",
		" spaced  out ", "\\", "\\'", "$HOME", "${IFS}", "*", "~", "!x", "-e", "a;b|c&d>e",
		"\t", "\xc3\xa9\xe2\x9c\x93", "'$(id)'", "\n", "--", "%s", "#", "'''",
		"price$$5", "$(AJ_TASK)", "$$(AJ_TASK)", "$", "$$",
	};
	struct aj_build_ctx ctx = { "q", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args args = { 1, 0, 0 };
	size_t n = sizeof(hostile) / sizeof(hostile[0]), i, len, want_len = 0;
	char *argv[64] = { NULL }, want[512], *out;
	const cJSON *cmd;
	struct aj_jobspec s;
	cJSON *arr = NULL;
	int argc;

	(void)state;
	for (i = 2; i < n; i++) {
		memcpy(want + want_len, hostile[i], strlen(hostile[i]) + 1);
		want_len += strlen(hostile[i]) + 1;
	}
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}",
		     &args, hostile, n, &s);
	cmd = aj_test_json_at(build(&s, &ctx, &arr), "spec.tasks[0].template.spec.containers[0].command");
	argc = cJSON_GetArraySize(cmd);
	assert_int_equal(argc, 4 + (int)n);     /* bash -lc SCRIPT aj ARG... */
	for (i = 0; i < (size_t)argc; i++)
		argv[i] = aj_test_kubelet_view(cJSON_GetArrayItem(cmd, (int)i)->valuestring);
	assert_string_equal(argv[3], "aj");
	assert_int_equal(aj_test_spawn(argv, NULL, NULL, &out, &len), 0);
	for (i = 0; i < (size_t)argc; i++)
		free(argv[i]);
	assert_int_equal(len, want_len);
	assert_memory_equal(out, want, len);
	free(out);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void quote_function(void **state)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "", "''" }, { "abc", "'abc'" }, { "it's", "'it'\\''s'" }, { "''", "''\\'''\\'''" },
		{ "$(x)", "'$(x)'" }, { "a\nb", "'a\nb'" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

		assert_int_equal(aj_shell_quote(&b, cases[i].in), 0);
		assert_string_equal(aj_buf_cstr(&b), cases[i].out);
		aj_buf_release(&b);
	}
}

static void table_lists_backends(void **state)
{
	const struct aj_backend *const *all = aj_backend_all();

	(void)state;
	assert_string_equal(all[0]->name, "aml");
	assert_string_equal(all[1]->name, "kube");
	assert_string_equal(all[2]->name, "sing");
	assert_string_equal(all[3]->name, "volcano");
	assert_null(all[4]);
	assert_ptr_equal(aj_backend_find("sing"), all[2]);
	assert_null(aj_backend_find("k8s"));
	assert_null(aj_backend_find(NULL));
}

static void survives_allocation_failures(void **state)
{
	static const char *const argv[] = { "python", "train.py" };
	struct aj_build_ctx ctx = { "train-abc", "ns", "uid", "train-abc", "aj.example.com/v1alpha1", 0 };

	(void)state;
	assert_true(aj_test_backend_oom("volcano", homogeneous, &no_args, argv, 2, &ctx) > 100);
	assert_true(aj_test_backend_oom("volcano", hetero, &no_args, argv, 2, &ctx) > 100);
	assert_true(aj_test_backend_oom("volcano", STORAGE(DATA), &(struct aj_shape_args){ 2, 0, 0 },
					argv, 2, &ctx) > 100);
}

/* Issue: -p 4 resolved the SKU to 1xG4 and still asked for target.gpus_per_node: 8. */
static void processes_set_gpus_of_g_skus(void **state)
{
	struct aj_build_ctx ctx = { "g", NULL, NULL, NULL, NULL, 0 };
	struct aj_shape_args p4 = { 1, 4, 0 }, n1 = { 1, 0, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *job;
	const char *limit = "spec.tasks[0].template.spec.containers[0].resources.limits.\"nvidia.com/gpu\"";

	(void)state;
	aj_test_spec("config: {target: {service: volcano, gpus_per_node: 8}, environment: {image: x}, "
		     "jobs: [{sku: \"{nodes}xG{processes}\"}]}", &p4, NULL, 0, &s);
	job = build(&s, &ctx, &arr);
	assert_string_equal(s.sku, "1xG4");
	assert_string_equal(aj_test_json_str(job, limit), "4");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
	/* without -p the compatibility field gives the SKU processes, so both say 8 */
	aj_test_spec("config: {target: {service: volcano, gpus_per_node: 8}, environment: {image: x}, "
		     "jobs: [{sku: \"{nodes}xG{processes}\"}]}", &n1, NULL, 0, &s);
	job = build(&s, &ctx, &arr);
	assert_string_equal(aj_test_json_str(job, limit), "8");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
	/* a C SKU asks for no GPUs from the SKU: target.gpus_per_node stays */
	aj_test_spec("config: {target: {service: volcano, gpus_per_node: 0}, environment: {image: x}, "
		     "jobs: [{sku: \"C{processes}\"}]}", &p4, NULL, 0, &s);
	job = build(&s, &ctx, &arr);
	assert_null(aj_test_json_at(job, limit));
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* Seed: scratch_mount_path must not overlap the Blob Secret mount (or the storage cache). */
static void scratch_and_secret_mounts(void **state)
{
	struct aj_shape_args one = { 1, 0, 0 };
	struct aj_jobspec s;
	struct aj_errors err = AJ_ERRORS_INIT;

	(void)state;
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		       "storage: {d: {storage_account_name: acct, container_name: box, mount_dir: /mnt/d}}, "
		       "jobs: [{sku: C1, submit_args: {container_args: {scratch_mount_path: /aj/secret}}}]}",
		       &one, "config.jobs[0].submit_args.container_args.scratch_mount_path: /aj/secret "
		       "overlaps the Blob Secret mount /aj/secret");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		       "storage: {d: {storage_account_name: acct, container_name: box, mount_dir: /mnt/d}}, "
		       "jobs: [{sku: C1, submit_args: {container_args: {scratch_mount_path: /aj}}}]}",
		       &one, "scratch_mount_path: /aj overlaps the storage cache /aj/blobfuse");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		       "_extra: {code_upload: {strategy: blob, blob: {storage_account: acct, container: box}}}, "
		       "jobs: [{sku: C1, submit_args: {container_args: {scratch_mount_path: /aj/secret/x}}}]}",
		       &one, "scratch_mount_path: /aj/secret/x overlaps the Blob Secret mount /aj/secret");
	/* without storage or blob code nothing is mounted there */
	aj_test_spec("config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		     "jobs: [{sku: C1, submit_args: {container_args: {scratch_mount_path: /aj/secret}}}]}",
		     &one, NULL, 0, &s);
	assert_int_equal(aj_backend_check(volcano(), &s, &err), 0);
	aj_jobspec_release(&s);
	aj_errors_release(&err);
}

/* The parts of _extra Volcano reads are checked for unknown keys like the rest. */
static void extra_keys_checked(void **state)
{
	struct aj_shape_args one = { 1, 0, 0 };

	(void)state;
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}],\n"
		       "  _extra: {volcano: {max_retyr: 3}}}", &one,
		       "test.yaml:2:22: config._extra.volcano.max_retyr: unknown key (did you mean \"max_retry\"?)");
	validate_fails("config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}],\n"
		       "  _extra: {code_upload: {strategy: blob, blob: {storage_account: acct, container: box, "
		       "sas_expiry_day: 1}}}}", &one,
		       "config._extra.code_upload.blob.sas_expiry_day: unknown key (did you mean \"sas_expiry_days\"?)");
}

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	assert_non_null(s);
	memset(s, c, n);
	s[n] = '\0';
	return s;
}

/*
 * Issue: three 60,000-character arguments made one 180 kB bash -lc string the
 * kernel refuses. Arguments are argv items now; what still cannot fit
 * exec() (MAX_ARG_STRLEN = 131072 with the NUL, ARG_MAX = 2 MiB) is refused
 * with the limit, and so is a Volcano Job over etcd's 1.5 MiB.
 */
static void exec_and_request_limits(void **state)
{
	static const char *cpu = "config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}]}";
	struct aj_shape_args one = { 1, 0, 0 }, two = { 2, 0, 0 };
	char *fits = repeat('a', 131071), *over = repeat('a', 131072), *big = repeat('x', 100000);
	const char *three[] = { "python", big, big, big };
	const char *argv_over[] = { "python", over };
	const char *many[24];
	struct aj_build_ctx ctx = { "big", NULL, NULL, NULL, NULL, 0 };
	struct aj_buf yaml = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;
	size_t i;

	(void)state;
	/* three long arguments fit: each is its own string */
	aj_test_spec(cpu, &one, three, 4, &s);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), 0);
	assert_int_equal(cJSON_GetArraySize(aj_test_json_at(cJSON_GetArrayItem(arr, 0),
		"spec.tasks[0].template.spec.containers[0].command")), 8);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
	three[1] = fits;
	aj_test_spec(cpu, &one, three, 2, &s);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), 0);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	build_refuses("big", cpu, &one, argv_over, 2, "command[1]: an argument of 131072 bytes is over the "
		    "kernel's limit of 131072 bytes for one argument (MAX_ARG_STRLEN)");
	for (i = 0; i < 24; i++)
		many[i] = big;
	build_refuses("big", cpu, &one, many, 24, "task master: the command, its arguments and the environment "
		    "come to 24");
	build_refuses("big", cpu, &one, many, 24, "over the kernel's limit of 2097152 for all of them (ARG_MAX)");

	/* 17 + 46 bytes of preamble, the line and its newline: 131135 */
	aj_buf_addf(&yaml, "config: {target: {gpus_per_node: 0}, environment: {image: x, setup: [%s]}, "
		    "jobs: [{sku: C1}]}", fits);
	build_refuses("big", aj_buf_cstr(&yaml), &one, NULL, 0, "task master: the pod's script is 131135 bytes, "
		    "over the kernel's limit of 131072 bytes for one argument (MAX_ARG_STRLEN)");
	aj_buf_reset(&yaml);
	aj_buf_addf(&yaml, "config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		    "jobs: [{sku: C1, submit_args: {env: {BIG: %s}}}]}", fits);
	build_refuses("big", aj_buf_cstr(&yaml), &one, NULL, 0, "config.jobs[0].submit_args.env: BIG: the "
		    "variable is 131075 bytes, over the kernel's limit of 131072 bytes");

	/* 9 x 100 kB of environment fits one pod; two tasks carry it twice: 1.8 MB */
	aj_buf_reset(&yaml);
	aj_buf_addstr(&yaml, "config: {target: {gpus_per_node: 0}, environment: {image: x}, "
		      "jobs: [{sku: C1, submit_args: {env: {");
	for (i = 0; i < 9; i++)
		aj_buf_addf(&yaml, "%sV%zu: %s", i ? ", " : "", i, big);
	aj_buf_addstr(&yaml, "}}}]}");
	build_refuses("big", aj_buf_cstr(&yaml), &two, NULL, 0, "the Volcano Job would be 18");
	build_refuses("big", aj_buf_cstr(&yaml), &two, NULL, 0, "bytes, over the API server's limit of "
		    "1572864 bytes for one object (etcd's default)");
	aj_test_spec(aj_buf_cstr(&yaml), &one, NULL, 0, &s);
	assert_int_equal(volcano()->build(&s, &ctx, &arr, &err), 0);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	assert_true(aj_errors_empty(&err));
	aj_buf_release(&yaml);
	free(fits);
	free(over);
	free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(homogeneous_job),
		cmocka_unit_test(single_cpu_node),
		cmocka_unit_test(template_names_app_and_role),
		cmocka_unit_test(gpus_from_sku),
		cmocka_unit_test(processes_set_gpus_of_g_skus),
		cmocka_unit_test(scratch_and_secret_mounts),
		cmocka_unit_test(extra_keys_checked),
		cmocka_unit_test(exec_and_request_limits),
		cmocka_unit_test(scratch_and_capabilities),
		cmocka_unit_test(heterogeneous_tasks),
		cmocka_unit_test(heterogeneous_errors),
		cmocka_unit_test(homogeneous_errors),
		cmocka_unit_test(name_limits),
		cmocka_unit_test(name_limits_edge_fits),
		cmocka_unit_test(build_needs_a_resolved_shape),
		cmocka_unit_test(failed_tasks_are_dropped),
		cmocka_unit_test(owner_needs_api_version),
		cmocka_unit_test(hostile_arguments_survive_bash),
		cmocka_unit_test(quote_function),
		cmocka_unit_test(table_lists_backends),
		cmocka_unit_test(survives_allocation_failures),
		cmocka_unit_test(target_node_selector),
		cmocka_unit_test(kubernetes_names_are_checked),
		cmocka_unit_test(lifecycle_policies),
		cmocka_unit_test(max_retry_errors),
		cmocka_unit_test(helper_pod_follows_node_selector),
		cmocka_unit_test(code_from_shared_volume),
		cmocka_unit_test(code_volume_errors),
		cmocka_unit_test(code_digest_errors),
		cmocka_unit_test(storage_mounts_blobfuse),
		cmocka_unit_test(no_privilege_without_storage),
		cmocka_unit_test(storage_paths_survive_bash),
		cmocka_unit_test(storage_errors),
		cmocka_unit_test(blob_code_settings),
		cmocka_unit_test(blob_code_download),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
