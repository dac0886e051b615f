/*
 * volcano.c - one gang-scheduled Volcano Job (batch.volcano.sh/v1alpha1).
 *
 * Homogeneous jobs become a `master` task of one pod and, with more than one
 * node, a `worker` task of nodes-1 pods, all alike. Heterogeneous jobs take
 * their tasks from config._extra.volcano.tasks (exactly one `master` with one
 * replica, listed first), each with its own resources and node selector.
 *
 * Ranks: the svc plugin gives every pod the host name <job>-<task>-<i>.<job>
 * and the env plugin its index VK_TASK_INDEX. Each container gets
 * MASTER_ADDR (the master's host), MASTER_PORT, WORLD_SIZE (all launcher
 * processes), AJ_NODES, AJ_PROCESSES_PER_NODE and AJ_TASK; its script sets
 * NODE_RANK to the task's offset (pods in earlier tasks) plus VK_TASK_INDEX.
 * A variable the template sets in submit_args.env wins over these.
 *
 * Pods run ["/bin/bash", "-lc", script]: set -eo pipefail, NODE_RANK, the
 * code copy, environment.setup, jobs[0].command, then the task command (the
 * user command quoted word by word). The image is used exactly as written.
 *
 * Lifecycle: the master task finishing completes the job (workers that never
 * exit are stopped); a pod evicted or failed restarts the whole gang, at most
 * _extra.volcano.max_retry times (default 3), then the job fails.
 *
 * Code: with both shared-volume variables set (codeship.h) the claim is
 * mounted in every pod; with a code digest in the spec each pod
 * first copies <mount>/.aj-code/<digest> into the emptyDir at AJ_WORK_DIR and
 * runs there (spec->code.digest). The CLI put it there (cli_code_upload.c).
 *
 * The pods themselves (script, variables, mounts, checks) are pod.c's,
 * shared with kube.c; what is Volcano's is the gang around them.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "codeship.h"
#include "common.h"
#include "pod.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/node.h"
#include "core/schema.h"

#define TASKS_PATH "config._extra.volcano.tasks"
#define MAX_RETRY_PATH "config._extra.volcano.max_retry"
#define MAX_RETRY_DEFAULT 3
#define MAX_RETRY_LIMIT 100

/* Name limits: the job name feeds <job>-svc / <job>-ssh (63) and a DNS-1035 Service. */
#define JOB_NAME_MAX 59


/* _extra.volcano.max_retry: how often the gang restarts before failing. */
static int max_retry(const struct aj_jobspec *spec, int *out, struct aj_errors *err)
{
	const struct aj_node *n = spec->extra && spec->extra->type == AJ_NODE_MAP ?
		aj_node_at(spec->extra, "volcano.max_retry") : NULL;
	struct aj_where w;

	*out = MAX_RETRY_DEFAULT;
	if (!n || n->type == AJ_NODE_NULL)
		return 0;
	if (n->type == AJ_NODE_INT && n->v.integer >= 0 && n->v.integer <= MAX_RETRY_LIMIT) {
		*out = (int)n->v.integer;
		return 0;
	}
	aj_node_where(n, MAX_RETRY_PATH, &w);
	return aj_errors_add(err, &w, "expected an integer from 0 to %d", MAX_RETRY_LIMIT);
}

/* Drop tasks that failed validation, so a failed spec never looks validated. */
static void clear_tasks(struct aj_jobspec *spec)
{
	size_t i;

	for (i = 0; i < spec->tasks_nr; i++)
		aj_task_release(&spec->tasks[i]);
	spec->tasks_nr = 0;
}

/*
 * Heterogeneous: read config._extra.volcano.tasks into spec->tasks, master
 * first (it holds node rank 0). A failed read leaves no tasks.
 */
static int volcano_prepare(struct aj_jobspec *spec, struct aj_errors *err)
{
	const struct aj_node *volcano = spec->extra && spec->extra->type == AJ_NODE_MAP ?
		aj_node_get(spec->extra, "volcano") : NULL;
	const struct aj_node *tasks = volcano && volcano->type == AJ_NODE_MAP ?
		aj_node_get(volcano, "tasks") : NULL;
	size_t i;

	if (!spec->heterogeneous || spec->tasks_nr)
		return 0;
	if (aj_jobspec_read_tasks(tasks, TASKS_PATH, spec, err)) {
		clear_tasks(spec);
		return -1;
	}
	for (i = 1; i < spec->tasks_nr; i++) {
		if (!strcmp(spec->tasks[i].name, "master")) {
			struct aj_task m = spec->tasks[i];

			memmove(&spec->tasks[1], &spec->tasks[0], i * sizeof(m));
			spec->tasks[0] = m;
			break;
		}
	}
	return 0;
}

/* The tasks prepare read: names, exactly one master of one replica, commands. */
static int check_tasks(const struct aj_jobspec *spec, struct aj_errors *err)
{
	char path[320] = "";
	struct aj_where w = { NULL, 0, 0, path };
	size_t i, masters = 0;
	int ret = 0;

	for (i = 0; i < spec->tasks_nr; i++) {
		const struct aj_task *t = &spec->tasks[i];

		snprintf(path, sizeof(path), TASKS_PATH ".%s", t->name);
		if (!aj_dns_label(t->name, AJ_POD_LABEL_MAX))
			ret = aj_errors_add(err, &w, "task name \"%s\" must be a lowercase DNS label "
					    "(letters, digits, '-')", t->name);
		if (!strcmp(t->name, "master")) {
			masters++;
			if (t->replicas != 1)
				ret = aj_errors_add(err, &w, "task master must have replicas: 1, not %d",
						    t->replicas);
		}
		if (t->has_command && !t->command.nr)
			ret = aj_errors_add(err, &w, "task %s: command must not be empty", t->name);
	}
	snprintf(path, sizeof(path), TASKS_PATH);
	if (masters != 1)
		ret = aj_errors_add(err, &w, "exactly one task named master is required");
	return ret;
}


static int volcano_validate(const struct aj_jobspec *spec, struct aj_errors *err)
{
	int ret = aj_pod_validate(spec, "volcano", err), retries;

	if (max_retry(spec, &retries, err))
		ret = -1;
	/* no tasks: prepare could not read them and has said why */
	if (spec->heterogeneous && spec->tasks_nr && check_tasks(spec, err))
		ret = -1;
	return ret;
}


static int check_names(const char *job, const struct aj_pod_role *r, size_t nr, struct aj_errors *err)
{
	struct aj_where w = { NULL, 0, 0, "metadata.name" };
	size_t len = strlen(job), i;
	int ret = 0;

	if (!aj_dns_label(job, JOB_NAME_MAX) || !(job[0] >= 'a' && job[0] <= 'z'))
		return aj_errors_add(err, &w, "job name \"%s\" must be at most %d lowercase letters, "
				     "digits and '-', starting with a letter and ending with a "
				     "letter or digit", job, JOB_NAME_MAX);
	for (i = 0; i < nr; i++) {
		char last[16];
		size_t pod;

		snprintf(last, sizeof(last), "%d", r[i].replicas - 1);
		pod = len + 1 + strlen(r[i].name) + 1 + strlen(last);
		if (pod > AJ_POD_LABEL_MAX)
			ret = aj_errors_add(err, &w, "pod name %s-%s-%s is %zu characters, over %d: "
					    "shorten the job or task name", job, r[i].name, last,
					    pod, AJ_POD_LABEL_MAX);
	}
	return ret;
}


static void add_policy(cJSON *policies, const char *event, const char *action, int *oom)
{
	cJSON *p = aj_body_add_object(policies, NULL, oom);

	aj_body_add_string(p, "event", event, oom);
	aj_body_add_string(p, "action", action, oom);
}

static cJSON *build_job(struct aj_pod_build *bd, const struct aj_build_ctx *ctx,
			const struct aj_pod_role *r, size_t nr, int retries)
{
	const struct aj_target *t = &bd->spec->target;
	cJSON *job = cJSON_CreateObject();
	cJSON *spec, *plugins, *tasks, *policies;
	size_t i;

	if (!job)
		bd->oom = 1;
	aj_body_add_string(job, "apiVersion", "batch.volcano.sh/v1alpha1", &bd->oom);
	aj_body_add_string(job, "kind", "Job", &bd->oom);
	aj_body_add_metadata(job, bd->job, &bd->spec->target, ctx, &bd->oom);
	spec = aj_body_add_object(job, "spec", &bd->oom);
	aj_body_add_string(spec, "schedulerName", "volcano", &bd->oom);
	aj_body_add_string(spec, "queue", t->queue ? t->queue : "default", &bd->oom);
	aj_body_add_int(spec, "minAvailable", bd->total_pods, &bd->oom);
	if (t->priority_class)
		aj_body_add_string(spec, "priorityClassName", t->priority_class, &bd->oom);
	aj_body_add_int(spec, "maxRetry", retries, &bd->oom);
	/*
	 * The pods are one gang: losing any of them restarts them all. No task
	 * has policies of its own: Volcano completes the job once every pod has
	 * succeeded (minAvailable is every pod, in the job and in each task), so
	 * no exit of one task stops the others (docs/volcano.md, Lifecycle).
	 */
	policies = aj_body_add_array(spec, "policies", &bd->oom);
	add_policy(policies, "PodEvicted", "RestartJob", &bd->oom);
	add_policy(policies, "PodFailed", "RestartJob", &bd->oom);
	plugins = aj_body_add_object(spec, "plugins", &bd->oom);
	aj_body_add_array(plugins, "ssh", &bd->oom);
	aj_body_add_array(plugins, "svc", &bd->oom);
	aj_body_add_array(plugins, "env", &bd->oom);
	tasks = aj_body_add_array(spec, "tasks", &bd->oom);
	for (i = 0; i < nr; i++) {
		cJSON *task = aj_body_add_object(tasks, NULL, &bd->oom);

		aj_body_add_string(task, "name", r[i].name, &bd->oom);
		aj_body_add_int(task, "replicas", r[i].replicas, &bd->oom);
		aj_body_add_int(task, "minAvailable", r[i].replicas, &bd->oom);
		aj_pod_add(bd, aj_body_add_object(task, "template", &bd->oom), &r[i]);
	}
	return job;
}


/* The one object of a build in a new array, or NULL (out of memory) with obj freed. */
static cJSON *one_object(cJSON *obj)
{
	cJSON *arr = obj ? cJSON_CreateArray() : NULL;

	if (!arr || !cJSON_AddItemToArray(arr, obj)) {
		cJSON_Delete(obj);
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

static int volcano_build(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
			 cJSON **out, struct aj_errors *err)
{
	struct aj_buf addr = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_pod_shape shape = { "Volcano", "volcano", "VK_TASK_INDEX", "volcano.sh/job-name",
				      NULL };
	struct aj_pod_build bd;
	struct aj_pod_role *r = NULL;
	size_t nr, i;
	cJSON *job;
	int ret = -1, retries;

	*out = NULL;
	/* the svc plugin names the master pod <job>-master-0 in the subdomain <job> */
	if (ctx->job_name && aj_buf_addf(&addr, "%s-master-0.%s", ctx->job_name, ctx->job_name))
		return aj_errors_oom(err);
	shape.master_addr = aj_buf_cstr(&addr);
	if (aj_pod_build_init(&bd, spec, ctx, &shape, err))
		goto out;
	r = aj_calloc(spec->tasks_nr + 1, sizeof(*r));
	if (!r || aj_pod_roles(spec, r, &nr)) {
		ret = aj_errors_oom(err);
		goto out;
	}
	if (max_retry(spec, &retries, err) || check_names(bd.job, r, nr, err))
		goto out;
	for (i = 0; i < nr; i++) {
		bd.total_pods += r[i].replicas;
		bd.world_size += (long long)r[i].replicas * r[i].ppn;
	}
	job = build_job(&bd, ctx, r, nr, retries);
	if (!bd.oom && (bd.too_big || aj_request_over_limit(job, "Volcano Job", err))) {
		cJSON_Delete(job);
		goto out;
	}
	if (bd.oom) {
		cJSON_Delete(job);
		job = NULL;
	}
	*out = one_object(job);
	ret = *out ? 0 : aj_errors_oom(err);
out:
	aj_pod_build_release(&bd);
	aj_buf_release(&addr);
	aj_free(r);
	return ret;
}


/* _extra.volcano; each task is checked by the task reader (aj_schema_task) */
static const struct aj_schema_key volcano_keys[] = {
	{ "max_retry", AJ_SCHEMA_VALUE, "integer 0-100", "gang restarts before the job fails" },
	{ "tasks", AJ_SCHEMA_FREE, "mapping", "heterogeneous tasks, by name" },
};

static const struct aj_schema volcano_schema = {
	"_extra.volcano", "mapping", "Volcano options", volcano_keys,
	sizeof(volcano_keys) / sizeof(volcano_keys[0])
};

static const struct aj_schema *const volcano_extra[] = { &volcano_schema, &aj_codeship_schema, NULL };

const struct aj_backend aj_backend_volcano = {
	.name = "volcano",
	.target = AJ_TARGET_CLUSTER,
	.code_route = aj_codeship_route,
	.tasks_key = "volcano.tasks",
	.extra = volcano_extra,
	.prepare = volcano_prepare,
	.validate = volcano_validate,
	.build = volcano_build,
	.rank_annotation = "volcano.sh/task-index",
};
