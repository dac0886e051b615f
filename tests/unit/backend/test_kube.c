/*
 * The kube backend: the headless Service and the Indexed Job built for a
 * homogeneous template (docs/backends.md, Kubernetes Job), the Kueue queue,
 * ownership, the rank contract (checked by running the pod's script with
 * bash as the kubelet would), refusals (heterogeneous, names, queue) and
 * clean failure when memory runs out. Expected values are written by hand
 * from the inputs.
 */
#include "support.h"
#include "code_fs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/jobspec.h"

static const struct aj_shape_args no_args = { 0, 0, 0 }, one = { 1, 0, 0 };
static const char *const user_cmd[] = { "python", "train.py" };

static const char *gpu_job =
	"config:\n"
	"  target:\n"
	"    service: kube\n"
	"    namespace: training\n"
	"    queue: team-a\n"
	"    priority_class: batch-high\n"
	"    gpus_per_node: 8\n"
	"    cpus_per_node: 96\n"
	"    memory: 512Gi\n"
	"    labels: {team: research}\n"
	"  environment:\n"
	"    image: registry.example/train:1\n"
	"    setup: [python -m pip install -e .]\n"
	"  jobs:\n"
	"    - name: train\n"
	"      sku: \"{nodes}xG{processes}\"\n"
	"      instance_count: 3\n"
	"      process_count_per_node: 8\n"
	"      submit_args:\n"
	"        env: {NCCL_DEBUG: WARN}\n"
	"        container_args: {shm_size: 64g}\n";

static const char *cpu_job =
	"config:\n"
	"  target: {service: kube, gpus_per_node: 0, cpus_per_node: 2}\n"
	"  environment: {image: busybox}\n"
	"  jobs: [{sku: C1, instance_count: 2}]\n";

static const struct aj_backend *kube(void)
{
	const struct aj_backend *b = aj_backend_find("kube");

	assert_non_null(b);
	return b;
}

/* Validate and build; the array of [Job, Service] is in *arr. */
static void build(struct aj_jobspec *s, const struct aj_build_ctx *ctx, cJSON **arr)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	if (kube()->validate(s, &err) || kube()->build(s, ctx, arr, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	aj_errors_release(&err);
	assert_int_equal(cJSON_GetArraySize(*arr), 2);
}

/* Validate (or build, when validate passes) and expect a message holding want. */
static void refused(const char *yaml, const char *name, const char *want)
{
	struct aj_build_ctx ctx = { name, NULL, NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;

	aj_test_spec(yaml, &one, NULL, 0, &s);
	assert_int_equal(kube()->validate(&s, &err) || kube()->build(&s, &ctx, &arr, &err), 1);
	assert_null(arr);
	if (!aj_test_errors_contain(&err, want))
		fail_msg("want \"%s\", got:\n%s", want, aj_test_errors_text(&err));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

static void service_and_indexed_job(void **state)
{
	struct aj_build_ctx ctx = { "train-abc", NULL, NULL, NULL, NULL, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *svc, *job, *pod, *c;

	(void)state;
	aj_test_spec(gpu_job, &no_args, user_cmd, 2, &s);
	build(&s, &ctx, &arr);
	svc = cJSON_GetArrayItem(arr, 1);
	assert_string_equal(aj_test_json_str(svc, "apiVersion"), "v1");
	assert_string_equal(aj_test_json_str(svc, "kind"), "Service");
	assert_string_equal(aj_test_json_str(svc, "metadata.name"), "train-abc");
	assert_string_equal(aj_test_json_str(svc, "metadata.namespace"), "training");
	assert_string_equal(aj_test_json_str(svc, "spec.clusterIP"), "None");
	assert_true(cJSON_IsTrue(aj_test_json_at(svc, "spec.publishNotReadyAddresses")));
	assert_int_equal(aj_test_json_size(svc, "spec.selector"), 1);
	assert_string_equal(aj_test_json_str(svc, "spec.selector.\"batch.kubernetes.io/job-name\""),
			    "train-abc");
	assert_null(aj_test_json_at(svc, "metadata.ownerReferences"));

	job = cJSON_GetArrayItem(arr, 0);
	assert_string_equal(aj_test_json_str(job, "apiVersion"), "batch/v1");
	assert_string_equal(aj_test_json_str(job, "kind"), "Job");
	assert_string_equal(aj_test_json_str(job, "metadata.name"), "train-abc");
	assert_string_equal(aj_test_json_str(job, "metadata.namespace"), "training");
	assert_string_equal(aj_test_json_str(job, "metadata.labels.team"), "research");
	assert_string_equal(aj_test_json_str(job, "metadata.labels.\"aj.dev/ajjob\""), "train-abc");
	assert_string_equal(aj_test_json_str(job, "metadata.labels.\"kueue.x-k8s.io/queue-name\""),
			    "team-a");
	assert_true(cJSON_IsTrue(aj_test_json_at(job, "spec.suspend")));
	assert_string_equal(aj_test_json_str(job, "spec.completionMode"), "Indexed");
	assert_int_equal(aj_test_json_int(job, "spec.completions"), 3);
	assert_int_equal(aj_test_json_int(job, "spec.parallelism"), 3);
	assert_int_equal(aj_test_json_int(job, "spec.backoffLimit"), 0);
	assert_int_equal(aj_test_json_size(job, "spec.podFailurePolicy.rules"), 2);
	assert_string_equal(aj_test_json_str(job, "spec.podFailurePolicy.rules[0].action"), "Ignore");
	assert_string_equal(aj_test_json_str(job, "spec.podFailurePolicy.rules[0].onPodConditions[0].type"),
			    "DisruptionTarget");
	assert_string_equal(aj_test_json_str(job, "spec.podFailurePolicy.rules[1].action"), "FailJob");
	assert_string_equal(aj_test_json_str(job, "spec.podFailurePolicy.rules[1].onExitCodes.operator"),
			    "NotIn");
	assert_int_equal(aj_test_json_size(job, "spec.podFailurePolicy.rules[1].onExitCodes.values"), 1);
	assert_int_equal(aj_test_json_int(job, "spec.podFailurePolicy.rules[1].onExitCodes.values[0]"), 0);

	assert_string_equal(aj_test_json_str(job, "spec.template.metadata.labels.\"aj.dev/ajjob\""),
			    "train-abc");
	assert_string_equal(aj_test_json_str(job, "spec.template.metadata.labels.\"aj.dev/task\""),
			    "worker");
	assert_string_equal(aj_test_json_str(job, "spec.template.metadata.labels.team"), "research");
	pod = aj_test_json_at(job, "spec.template.spec");
	assert_non_null(pod);
	assert_null(aj_test_json_at(pod, "schedulerName"));
	assert_string_equal(aj_test_json_str(pod, "restartPolicy"), "Never");
	assert_string_equal(aj_test_json_str(pod, "subdomain"), "train-abc");
	assert_string_equal(aj_test_json_str(pod, "priorityClassName"), "batch-high");
	/* one pod per node: spread by the label the Job controller sets */
	assert_string_equal(aj_test_json_str(pod, "affinity.podAntiAffinity."
					     "requiredDuringSchedulingIgnoredDuringExecution[0]."
					     "labelSelector.matchLabels.\"batch.kubernetes.io/job-name\""),
			    "train-abc");
	assert_string_equal(aj_test_json_str(pod, "tolerations[0].key"), "nvidia.com/gpu");
	assert_string_equal(aj_test_json_str(pod, "volumes[0].emptyDir.sizeLimit"), "64Gi");

	assert_int_equal(aj_test_json_size(pod, "containers"), 1);
	c = aj_test_json_at(pod, "containers[0]");
	assert_string_equal(aj_test_json_str(c, "name"), "worker");
	assert_string_equal(aj_test_json_str(c, "image"), "registry.example/train:1");
	assert_string_equal(aj_test_json_str(c, "resources.limits.\"nvidia.com/gpu\""), "8");
	assert_string_equal(aj_test_json_str(c, "resources.requests.cpu"), "96");
	assert_string_equal(aj_test_json_str(c, "resources.requests.memory"), "512Gi");
	assert_int_equal(aj_test_json_size(c, "env"), 7);
	aj_test_env_is(c, 0, "NCCL_DEBUG", "WARN");
	aj_test_env_is(c, 1, "MASTER_ADDR", "train-abc-0.train-abc");
	aj_test_env_is(c, 2, "MASTER_PORT", "6105");
	aj_test_env_is(c, 3, "WORLD_SIZE", "24");
	aj_test_env_is(c, 4, "AJ_NODES", "3");
	aj_test_env_is(c, 5, "AJ_PROCESSES_PER_NODE", "8");
	aj_test_env_is(c, 6, "AJ_TASK", "worker");
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* Without target.queue: no Kueue label and not suspended; the AjJob owns both objects. */
static void no_queue_and_owner(void **state)
{
	struct aj_build_ctx ctx = { "j1", "research", "uid-1", "j1", "aj.dev/v1alpha1", 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *obj;
	int i;

	(void)state;
	aj_test_spec(cpu_job, &no_args, user_cmd, 2, &s);
	build(&s, &ctx, &arr);
	obj = cJSON_GetArrayItem(arr, 0);
	assert_null(aj_test_json_at(obj, "spec.suspend"));
	assert_null(aj_test_json_at(obj, "metadata.labels.\"kueue.x-k8s.io/queue-name\""));
	assert_int_equal(aj_test_json_int(obj, "spec.completions"), 2);
	assert_null(aj_test_json_at(obj, "spec.template.spec.priorityClassName"));
	for (i = 0; i < 2; i++) {
		obj = cJSON_GetArrayItem(arr, i);
		assert_string_equal(aj_test_json_str(obj, "metadata.namespace"), "research");
		assert_int_equal(aj_test_json_size(obj, "metadata.ownerReferences"), 1);
		assert_string_equal(aj_test_json_str(obj, "metadata.ownerReferences[0].kind"), "AjJob");
		assert_string_equal(aj_test_json_str(obj, "metadata.ownerReferences[0].uid"), "uid-1");
		assert_string_equal(aj_test_json_str(obj, "metadata.ownerReferences[0].apiVersion"),
				    "aj.dev/v1alpha1");
		assert_true(cJSON_IsTrue(aj_test_json_at(obj, "metadata.ownerReferences[0].controller")));
	}
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/*
 * The pod of index 1 as the kubelet starts it (the Job controller's
 * JOB_COMPLETION_INDEX beside the container's env): the user command sees
 * the rank contract.
 */
static void rank_contract_in_the_pod(void **state)
{
	static const char *const cmd[] = { "/bin/sh", "-c",
					   "echo $NODE_RANK $MASTER_ADDR $WORLD_SIZE $AJ_TASK" };
	struct aj_build_ctx ctx = { "r", NULL, NULL, NULL, NULL, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *c, *e;
	char *argv[16] = { NULL }, *envp[16] = { NULL }, *out;
	size_t len;
	int i, n = 0, argc;

	(void)state;
	aj_test_spec(cpu_job, &no_args, cmd, 3, &s);
	build(&s, &ctx, &arr);
	c = aj_test_json_at(cJSON_GetArrayItem(arr, 0), "spec.template.spec.containers[0]");
	argc = aj_test_json_size(c, "command");
	assert_true(argc < 16);
	for (i = 0; i < argc; i++)
		argv[i] = aj_test_kubelet_view(cJSON_GetArrayItem(cJSON_GetObjectItem(c, "command"), i)->valuestring);
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(c, "env")) {
		char *v = aj_test_kubelet_view(cJSON_GetObjectItem(e, "value")->valuestring);
		size_t sz = strlen(cJSON_GetObjectItem(e, "name")->valuestring) + strlen(v) + 2;

		assert_true(n < 13);
		envp[n] = malloc(sz);
		assert_non_null(envp[n]);
		snprintf(envp[n++], sz, "%s=%s", cJSON_GetObjectItem(e, "name")->valuestring, v);
		free(v);
	}
	envp[n++] = strdup("JOB_COMPLETION_INDEX=1");
	envp[n++] = strdup("PATH=/usr/bin:/bin");
	envp[n] = strdup("HOME=/nonexistent");
	assert_int_equal(aj_test_spawn(argv, NULL, envp, &out, &len), 0);
	assert_int_equal(len, strlen("1 r-0.r 2 worker\n"));
	assert_memory_equal(out, "1 r-0.r 2 worker\n", len);
	free(out);
	for (i = 0; argv[i]; i++)
		free(argv[i]);
	for (i = 0; envp[i]; i++)
		free(envp[i]);
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

/* A variable the template sets wins over aj's, as on Volcano. */
static void template_env_wins(void **state)
{
	struct aj_build_ctx ctx = { "e", NULL, NULL, NULL, NULL, 0 };
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *c;

	(void)state;
	aj_test_spec("config:\n"
		     "  target: {service: kube, gpus_per_node: 0}\n"
		     "  environment: {image: busybox}\n"
		     "  jobs: [{sku: C1, submit_args: {env: {MASTER_ADDR: head.example}}}]\n",
		     &one, user_cmd, 2, &s);
	build(&s, &ctx, &arr);
	c = aj_test_json_at(cJSON_GetArrayItem(arr, 0), "spec.template.spec.containers[0]");
	aj_test_env_is(c, 0, "MASTER_ADDR", "head.example");
	aj_test_env_is(c, 1, "MASTER_PORT", "6105");
	/* one node: no anti-affinity to satisfy */
	assert_null(aj_test_json_at(cJSON_GetArrayItem(arr, 0), "spec.template.spec.affinity"));
	cJSON_Delete(arr);
	aj_jobspec_release(&s);
}

static void refusals(void **state)
{
	char long_queue[300], long_name[80];

	(void)state;
	/* one Indexed Job has one pod template */
	aj_test_backend_rejects("kube",
				"config:\n"
				"  target: {service: kube}\n"
				"  environment: {image: x}\n"
				"  jobs: [{sku: heterogeneous}]\n"
				"  _extra: {volcano: {tasks: {master: {replicas: 1}}}}\n",
				&no_args, "config._extra.volcano.tasks: service kube builds one Indexed "
				"Job, which has one pod template: heterogeneous tasks need service volcano");
	aj_test_backend_rejects("kube",
				"config: {target: {service: kube}, environment: {image: x}, "
				"jobs: [{sku: heterogeneous}]}",
				&no_args, "config.jobs[0].sku: service kube builds one Indexed Job");
	refused("config: {target: {service: kube, gpus_per_node: 0}, jobs: [{sku: C1}]}", "j",
		"config.environment.image: required for service kube");
	/* the Service and the pods' host names */
	refused(cpu_job, "Bad_Name", "job name \"Bad_Name\" must be at most 63 lowercase letters");
	refused(cpu_job, "9lives", "starting with a letter");
	memset(long_name, 'a', 62);
	long_name[62] = '\0';
	refused(cpu_job, long_name, "pod host name");
	/* the queue is a label value */
	snprintf(long_queue, sizeof(long_queue),
		 "config: {target: {service: kube, gpus_per_node: 0, queue: q%0100d}, environment: {image: x}, "
		 "jobs: [{sku: C1}]}", 0);
	refused(long_queue, "j", "config.target.queue: \"");
	refused(long_queue, "j", "is over 63 characters: service kube writes it into the label "
		"kueue.x-k8s.io/queue-name");
	/* the Volcano pods' rules hold: capabilities, scratch */
	refused("config: {target: {service: kube, gpus_per_node: 0}, environment: {image: x}, "
		"jobs: [{sku: C1, "
		"submit_args: {container_args: {capabilities: [ALL]}}}]}", "j",
		"ALL is not allowed");
	refused("config: {target: {service: kube, gpus_per_node: 0}, environment: {image: x}, "
		"jobs: [{sku: C1, "
		"submit_args: {container_args: {scratch_mount_path: /dev/shm/x}}}]}", "j",
		"overlaps the shared-memory mount");
	/* the labels the Job's pods are found by are the builder's */
	refused("config: {target: {service: kube, gpus_per_node: 0, labels: {aj.dev/ajjob: x}}, "
		"environment: {image: x}, jobs: [{sku: C1}]}", "j",
		"config.target.labels.aj.dev/ajjob: reserved: aj sets this label");
	refused("config: {target: {service: kube, gpus_per_node: 0, "
		"labels: {batch.kubernetes.io/job-completion-index: \"0\"}}, "
		"environment: {image: x}, jobs: [{sku: C1}]}", "j",
		"config.target.labels.batch.kubernetes.io/job-completion-index: reserved: the Job "
		"controller sets");
}

/* The code digest: copied from the shared volume, or refused without a way in. */
static void code_digest(void **state)
{
	static const char *digest = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	struct aj_build_ctx ctx = { "c", NULL, NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	cJSON *arr = NULL;
	const cJSON *pod;

	(void)state;
	aj_test_spec("config:\n"
		     "  target: {service: kube, gpus_per_node: 0}\n"
		     "  environment: {image: busybox}\n"
		     "  jobs: [{sku: C1, submit_args: {env: {AMLT_PERSISTENT_VOLUME_NAME: pvc1, "
		     "AMLT_PERSISTENT_VOLUME_MOUNT_DIR: /mnt/shared}}}]\n",
		     &one, user_cmd, 2, &s);
	s.code.digest = aj_strdup(digest);
	build(&s, &ctx, &arr);
	pod = aj_test_json_at(cJSON_GetArrayItem(arr, 0), "spec.template.spec");
	assert_string_equal(aj_test_json_str(pod, "containers[0].workingDir"), "/aj/code");
	assert_string_equal(aj_test_json_str(pod, "volumes[1].persistentVolumeClaim.claimName"), "pvc1");
	assert_non_null(strstr(aj_test_json_str(pod, "containers[0].command[2]"),
			       "cp -a '/mnt/shared/.aj-code/0123456789abcdef0123456789abcdef"
			       "0123456789abcdef0123456789abcdef/.' /aj/code/\n"));
	cJSON_Delete(arr);
	aj_jobspec_release(&s);

	aj_test_spec(cpu_job, &no_args, user_cmd, 2, &s);
	s.code.digest = aj_strdup(digest);
	arr = NULL;
	assert_int_equal(kube()->build(&s, &ctx, &arr, &err), -1);
	assert_null(arr);
	assert_true(aj_test_errors_contain(&err, "its code does not go through a shared volume"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

static void out_of_memory(void **state)
{
	static const char *const argv[] = { "python", "train.py" };
	struct aj_build_ctx ctx = { "o", "ns", "u", "o", "aj.dev/v1alpha1", 0 };

	(void)state;
	assert_true(aj_test_backend_oom("kube", gpu_job, &no_args, argv, 2, &ctx) > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(service_and_indexed_job),
		cmocka_unit_test(no_queue_and_owner),
		cmocka_unit_test(rank_contract_in_the_pod),
		cmocka_unit_test(template_env_wins),
		cmocka_unit_test(refusals),
		cmocka_unit_test(code_digest),
		cmocka_unit_test(out_of_memory),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
