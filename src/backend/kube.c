/*
 * kube.c - one batch/v1 Indexed Job and its headless Service, for clusters
 * without Volcano.
 *
 * The Job runs nodes pods of one template, the task `worker`
 * (completionMode Indexed, completions = parallelism = nodes). The Job
 * controller gives pod i the host name <job>-<i> in the subdomain <job>, the
 * headless Service of the same name, and its index in JOB_COMPLETION_INDEX,
 * which the script makes NODE_RANK. MASTER_ADDR is <job>-0.<job>; the rest of
 * the rank contract, the script, code, storage, capabilities, scratch and
 * /dev/shm are the Volcano pods' (pod.h).
 *
 * Lifecycle: one failed rank fails the Job. A distributed job cannot go on
 * with one rank replaced, so backoffLimit is 0 and the podFailurePolicy fails
 * the Job on any non-zero exit; a disruption (preemption, eviction, a drained
 * node) is ignored, so that pod is replaced without counting as a failure.
 * The Job completes when every index has succeeded.
 *
 * Kueue: with target.queue the Job carries kueue.x-k8s.io/queue-name and is
 * created suspended, as Kueue expects; Kueue admits all its pods at once and
 * unsuspends it. Without a queue the default scheduler places the pods as
 * they come (no gang).
 *
 * Heterogeneous templates are refused: one Indexed Job has one pod template.
 */
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "codeship.h"
#include "common.h"
#include "pod.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/node.h"

#define TASK "worker"
#define INDEX_VAR "JOB_COMPLETION_INDEX"
/* set by the Job controller on every pod of the Job, and not user-editable */
#define JOB_NAME_LABEL "batch.kubernetes.io/job-name"
#define QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define LABEL_MAX 63

/* One Indexed Job has one pod template: no tasks of different shapes. */
static int check_homogeneous(const struct aj_jobspec *spec, struct aj_errors *err)
{
	const struct aj_node *tasks = spec->extra && spec->extra->type == AJ_NODE_MAP ?
		aj_node_at(spec->extra, "volcano.tasks") : NULL;
	struct aj_where w = { NULL, 0, 0, "config.jobs[0].sku" };

	if (!spec->heterogeneous)
		return 0;
	if (tasks)
		aj_node_where(tasks, "config._extra.volcano.tasks", &w);
	return aj_errors_add(err, &w, "service kube builds one Indexed Job, which has one pod "
			     "template: heterogeneous tasks need service volcano");
}

static int kube_validate(const struct aj_jobspec *spec, struct aj_errors *err)
{
	int ret = aj_pod_validate(spec, "kube", err);

	if (check_homogeneous(spec, err))
		ret = -1;
	/* the queue name is a label value */
	if (spec->target.queue && strlen(spec->target.queue) > LABEL_MAX) {
		struct aj_where w = { NULL, 0, 0, "config.target.queue" };

		ret = aj_errors_add(err, &w, "\"%s\" is over %d characters: service kube writes it "
				    "into the label " QUEUE_LABEL, spec->target.queue, LABEL_MAX);
	}
	return ret;
}

/* The Service and the pods' host names <job>-<index> are DNS labels. */
static int check_name(const char *job, int nodes, struct aj_errors *err)
{
	struct aj_where w = { NULL, 0, 0, "metadata.name" };
	char last[16];
	size_t host;

	if (!aj_dns_label(job, LABEL_MAX) || !(job[0] >= 'a' && job[0] <= 'z'))
		return aj_errors_add(err, &w, "job name \"%s\" must be at most %d lowercase letters, "
				     "digits and '-', starting with a letter and ending with a "
				     "letter or digit", job, LABEL_MAX);
	snprintf(last, sizeof(last), "%d", nodes - 1);
	host = strlen(job) + 1 + strlen(last);
	if (host > LABEL_MAX)
		return aj_errors_add(err, &w, "pod host name %s-%s is %zu characters, over %d: "
				     "shorten the job name", job, last, host, LABEL_MAX);
	return 0;
}

/* Set labels[key] = value, replacing what the shared pod template may have put there. */
static void set_label(cJSON *labels, const char *key, const char *value, int *oom)
{
	cJSON_DeleteItemFromObjectCaseSensitive(labels, key);
	aj_body_add_string(labels, key, value, oom);
}

static void add_rule(cJSON *rules, const char *action, int *oom)
{
	cJSON *r = aj_body_add_object(rules, NULL, oom);

	aj_body_add_string(r, "action", action, oom);
	if (!strcmp(action, "Ignore")) {
		cJSON *c = aj_body_add_object(aj_body_add_array(r, "onPodConditions", oom), NULL, oom);

		aj_body_add_string(c, "type", "DisruptionTarget", oom);
	} else {
		cJSON *codes = aj_body_add_object(r, "onExitCodes", oom);

		aj_body_add_string(codes, "operator", "NotIn", oom);
		aj_body_add_int(aj_body_add_array(codes, "values", oom), NULL, 0, oom);
	}
}

static cJSON *build_service(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
			    int *oom)
{
	cJSON *svc = cJSON_CreateObject(), *s;

	if (!svc)
		*oom = 1;
	aj_body_add_string(svc, "apiVersion", "v1", oom);
	aj_body_add_string(svc, "kind", "Service", oom);
	aj_body_add_metadata(svc, ctx->job_name, &spec->target, ctx, oom);
	s = aj_body_add_object(svc, "spec", oom);
	aj_body_add_string(s, "clusterIP", "None", oom);
	/* peers resolve each other while they start, before any is ready */
	aj_body_add_bool(s, "publishNotReadyAddresses", 1, oom);
	aj_body_add_string(aj_body_add_object(s, "selector", oom), JOB_NAME_LABEL, ctx->job_name,
			   oom);
	return svc;
}

static cJSON *build_job(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
			cJSON *tmpl, int *oom)
{
	const struct aj_target *t = &spec->target;
	cJSON *job = cJSON_CreateObject(), *labels, *s, *rules, *pod;

	if (!job) {
		cJSON_Delete(tmpl);
		*oom = 1;
		return NULL;
	}
	aj_body_add_string(job, "apiVersion", "batch/v1", oom);
	aj_body_add_string(job, "kind", "Job", oom);
	labels = aj_body_add_metadata(job, ctx->job_name, t, ctx, oom);
	set_label(labels, "aj.dev/ajjob", ctx->job_name, oom);
	if (t->queue)
		set_label(labels, QUEUE_LABEL, t->queue, oom);
	s = aj_body_add_object(job, "spec", oom);
	aj_body_add_string(s, "completionMode", "Indexed", oom);
	aj_body_add_int(s, "completions", spec->nodes, oom);
	aj_body_add_int(s, "parallelism", spec->nodes, oom);
	aj_body_add_int(s, "backoffLimit", 0, oom);
	rules = aj_body_add_array(aj_body_add_object(s, "podFailurePolicy", oom), "rules", oom);
	add_rule(rules, "Ignore", oom);
	add_rule(rules, "FailJob", oom);
	if (t->queue)
		aj_body_add_bool(s, "suspend", 1, oom);
	labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(tmpl, "metadata"),
						  "labels");
	set_label(labels, "aj.dev/ajjob", ctx->job_name, oom);
	set_label(labels, "aj.dev/task", TASK, oom);
	pod = cJSON_GetObjectItemCaseSensitive(tmpl, "spec");
	aj_body_add_string(pod, "subdomain", ctx->job_name, oom);
	if (t->priority_class)
		aj_body_add_string(pod, "priorityClassName", t->priority_class, oom);
	if (!s || !labels || !pod || !cJSON_AddItemToObject(s, "template", tmpl)) {
		cJSON_Delete(tmpl);
		*oom = 1;
	}
	return job;
}

static int kube_build(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
		      cJSON **out, struct aj_errors *err)
{
	struct aj_buf addr = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_pod_shape shape = { "Kubernetes", NULL, INDEX_VAR, JOB_NAME_LABEL, NULL };
	cJSON *tmpl, *arr = NULL, *svc = NULL, *job = NULL;
	int oom = 0, ret = -1;

	*out = NULL;
	if (check_homogeneous(spec, err) ||
	    (ctx->job_name && check_name(ctx->job_name, spec->nodes, err)))
		return -1;
	/* the Job controller names pod i <job>-<i> in the Service's subdomain */
	if (ctx->job_name && aj_buf_addf(&addr, "%s-0.%s", ctx->job_name, ctx->job_name))
		return aj_errors_oom(err);
	shape.master_addr = aj_buf_cstr(&addr);
	if (aj_pod_template(spec, ctx, &shape, TASK, &tmpl, err))
		goto out;
	/* the Job first: it is the object the controller creates, watches and owns */
	arr = cJSON_CreateArray();
	job = build_job(spec, ctx, tmpl, &oom);
	svc = build_service(spec, ctx, &oom);
	if (!oom && aj_request_over_limit(job, "Kubernetes Job", err))
		goto out;
	if (oom || !arr || !cJSON_AddItemToArray(arr, job)) {
		ret = aj_errors_oom(err);
		goto out;
	}
	job = NULL;
	if (!cJSON_AddItemToArray(arr, svc)) {
		ret = aj_errors_oom(err);
		goto out;
	}
	*out = arr;
	arr = svc = NULL;
	ret = 0;
out:
	cJSON_Delete(job);
	cJSON_Delete(svc);
	cJSON_Delete(arr);
	aj_buf_release(&addr);
	return ret;
}

static const struct aj_schema *const kube_extra[] = { &aj_codeship_schema, NULL };

const struct aj_backend aj_backend_kube = {
	.name = "kube",
	.target = AJ_TARGET_CLUSTER,
	.code_route = aj_codeship_route,
	.extra = kube_extra,
	.rank_annotation = "batch.kubernetes.io/job-completion-index",
	.validate = kube_validate,
	.build = kube_build,
};
