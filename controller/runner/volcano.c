/*
 * The volcano runner: an AjJob becomes a Volcano Job (batch.volcano.sh/v1alpha1)
 * beside it, which the controller follows through the AjJob state machine
 * (docs/api.md draws it).
 */
#include "volcano.h"

#include <stdio.h>
#include <string.h>

#include "backend/storage_secret.h"
#include "cache.h"
#include "core/error.h"
#include "core/json.h"
#include "core/timestamp.h"
#include "kube/client.h"
#include "log.h"
#include "resources.h"
#include "runner.h"

/*
 * Longest Volcano Job name we derive: pods are named <job>-<task>-<index>
 * (at most 63), so this leaves room for the master/worker tasks with
 * four-digit indexes and for short heterogeneous task names.
 */
#define VOLCANO_NAME_MAX 45

#define NEED_FAILURE AJ_VOLCANO_NEED_FAILURE
#define NEED_REASON AJ_VOLCANO_NEED_REASON
#define N_RETRIES AJ_VOLCANO_RETRIES
#define N_MAX_RETRY AJ_VOLCANO_MAX_RETRY

static const struct aj_kube_resource volcano_jobs = { "batch.volcano.sh", "v1alpha1", "jobs", 1 };
static const struct aj_kube_resource podgroups = { "scheduling.volcano.sh", "v1beta1", "podgroups", 1 };
static const struct aj_kube_resource core_events = { "", "v1", "events", 1 };

static int is(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

static void volcano_name(const char *ajjob, char *out, size_t size)
{
	aj_runner_object_name(ajjob, VOLCANO_NAME_MAX, out, size);
}

/* Does a task's pod mount the job's storage Secret (<name>-storage)? */
static int mounts_storage(const cJSON *obj)
{
	const char *name = aj_json_str(aj_json_get(obj, "metadata"), "name");
	char secret[AJ_STORAGE_SECRET_SIZE];
	const cJSON *task, *vol;

	if (!name || aj_storage_secret_name(name, secret))
		return 0;
	cJSON_ArrayForEach(task, aj_json_get(aj_json_get(obj, "spec"), "tasks")) {
		cJSON_ArrayForEach(vol, aj_json_get(aj_json_get(aj_json_get(task, "template"),
								"spec"), "volumes")) {
			const char *s = aj_json_str(aj_json_get(vol, "secret"), "secretName");

			if (s && !strcmp(s, secret))
				return 1;
		}
	}
	return 0;
}

static int ended_phase(const char *v)
{
	return is(v, "Completed") || is(v, "Failed") || is(v, "Terminated");
}

/*
 * Each task of spec.tasks with its pods by phase: the Volcano job controller
 * counts the pods it has in status.taskStatusCount.<task>.phase (a phase
 * with no pod is left out; a task with none at all too).
 */
static void tasks_of(const cJSON *obj, struct aj_owned_facts *out)
{
	const cJSON *count = aj_json_get(aj_json_get(obj, "status"), "taskStatusCount"), *task;

	cJSON_ArrayForEach(task, aj_json_get(aj_json_get(obj, "spec"), "tasks")) {
		const char *name = aj_json_str(task, "name");
		const cJSON *ph;
		struct aj_task_pods *t;

		if (!name || out->nr_tasks >= AJ_TASKS_MAX)
			continue;
		ph = aj_json_get(aj_json_get(count, name), "phase");
		t = &out->tasks[out->nr_tasks++];
		t->name = name;
		t->replicas = aj_json_whole(aj_json_get(task, "replicas"), 2147483647.0, 0);
		t->pending = aj_json_whole(aj_json_get(ph, "Pending"), 2147483647.0, 0);
		t->running = aj_json_whole(aj_json_get(ph, "Running"), 2147483647.0, 0);
		t->succeeded = aj_json_whole(aj_json_get(ph, "Succeeded"), 2147483647.0, 0);
		t->failed = aj_json_whole(aj_json_get(ph, "Failed"), 2147483647.0, 0);
	}
}

static void summarize(const cJSON *obj, struct aj_owned_facts *out)
{
	out->phase = aj_json_str(aj_json_get(aj_json_get(obj, "status"), "state"), "phase");
	out->flags = mounts_storage(obj) ? AJ_OWNED_MOUNTS_STORAGE : 0;
	out->n[N_RETRIES] = aj_json_whole(aj_json_get(aj_json_get(obj, "status"), "retryCount"),
					  2147483647.0, 0);
	out->n[N_MAX_RETRY] = aj_json_whole(aj_json_get(aj_json_get(obj, "spec"), "maxRetry"),
					    2147483647.0, 0);
	tasks_of(obj, out);
	aj_owned_tasks_settle(out, ended_phase(out->phase));
}

/* "" or " after N restarts" */
static void restarts(long long n, char *out, size_t size)
{
	if (n > 0)
		snprintf(out, size, " after %lld restart%s", n, n == 1 ? "" : "s");
	else
		out[0] = '\0';
}

/* The Volcano Job ended: Succeeded or Failed, told once. */
static void finished(const struct aj_seen *s, struct aj_plan *p)
{
	char after[64];

	restarts(s->o.n[N_RETRIES], after, sizeof(after));
	if (is(s->o.phase, "Completed")) {
		p->phase = AJ_PHASE_SUCCEEDED;
		p->reason = "VolcanoJobCompleted";
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s is Completed: every pod succeeded%s", s->job, after);
		aj_plan_event(p, 0, p->reason, "Observe", p->message, 1);
		return;
	}
	p->phase = AJ_PHASE_FAILED;
	if (is(s->o.phase, "Terminated")) {
		p->reason = "VolcanoJobTerminated";
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s was terminated (a TerminateJob Command)", s->job);
	} else if (!(s->have & NEED_FAILURE)) {
		p->need |= NEED_FAILURE;
		return;
	} else {
		/* the pods listed, else the watch's record: Volcano may have deleted the pod */
		const char *failure = s->failure ? s->failure : s->pod_failure;

		p->reason = "VolcanoJobFailed";
		if (failure)
			snprintf(p->message, sizeof(p->message), "Volcano Job %s is Failed%s: %s",
				 s->job, after, failure);
		else
			snprintf(p->message, sizeof(p->message),
				 "Volcano Job %s is Failed%s (no failed pod is left to name)",
				 s->job, after);
	}
	aj_plan_event(p, 1, p->reason, "Observe", p->message, 1);
}

/* Submitted and waiting: ask the scheduler why, now and then. */
static void waiting(const struct aj_seen *s, struct aj_plan *p)
{
	p->phase = AJ_PHASE_SUBMITTED;
	p->reason = "VolcanoJobPending";
	snprintf(p->message, sizeof(p->message), "Volcano Job %s is Pending", s->job);
	aj_decide_waiting(&aj_runner_volcano, s, NEED_REASON, "Pending", p);
}

/* The Volcano Job's phase as the AjJob's (aj_decide_owned adds the shared lines). */
static void mirror(const struct aj_seen *s, struct aj_plan *p)
{
	const char *v = s->o.phase ? s->o.phase : "Pending";
	unsigned restarting = AJ_STATUS_FLAG(AJ_COND_RESTARTING);
	unsigned suspended = AJ_STATUS_FLAG(AJ_COND_SUSPENDED);
	int ran = aj_phase_rank(s->prev) >= aj_phase_rank(AJ_PHASE_RUNNING);

	if (is(v, "Running") || is(v, "Completing")) {
		p->phase = AJ_PHASE_RUNNING;
		p->reason = is(v, "Running") ? "VolcanoJobRunning" : "VolcanoJobCompleting";
		snprintf(p->message, sizeof(p->message), "Volcano Job %s is %s", s->job, v);
	} else if (is(v, "Restarting") || (is(v, "Pending") && ran)) {
		/* Volcano replaces the pods; from the AjJob's side the job runs on. */
		p->phase = AJ_PHASE_RUNNING;
		p->reason = "VolcanoJobRestarting";
		p->flags |= restarting;
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s is %s: restart %lld of at most %lld", s->job, v,
			 s->o.n[N_RETRIES], s->o.n[N_MAX_RETRY]);
		if (!(s->prev_flags & restarting))
			aj_plan_event(p, 1, p->reason, "Observe", p->message, 0);
	} else if (is(v, "Aborting") || is(v, "Aborted")) {
		p->phase = AJ_PHASE_SUBMITTED;
		p->reason = "VolcanoJobAborted";
		p->flags |= suspended;
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s is %s (an AbortJob Command): a ResumeJob Command runs it again",
			 s->job, v);
		if (!(s->prev_flags & suspended))
			aj_plan_event(p, 0, p->reason, "Observe", p->message, 0);
	} else if (is(v, "Terminating")) {
		p->phase = AJ_PHASE_SUBMITTED;
		p->reason = "VolcanoJobTerminating";
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s is Terminating (a TerminateJob Command)", s->job);
	} else {
		waiting(s, p);
	}
}

static void decide(const struct aj_seen *s, struct aj_plan *p)
{
	const char *v = s->o.phase;
	int ended = s->exists && ended_phase(v);

	if (!aj_decide_owned(&aj_runner_volcano, s, ended, finished, mirror, p))
		p->retry_count = s->o.n[N_RETRIES];
}

/* --- what the cache does not hold --- */

/*
 * Why the scheduler keeps the job waiting: its PodGroup's Unschedulable
 * condition, else the newest Unschedulable Event about the PodGroup (a job
 * refused at enqueue has no pods, and the reason only in Events). No
 * PodGroup yet: Volcano has not taken the job up, so no Event names it, and
 * the namespace's Events (which the API server filters one by one) are not
 * read. A failed look-up is logged, not retried: the reason is a courtesy,
 * and the next look-up comes anyway.
 */
static const char *scheduler_reason(struct aj_run *run, const struct aj_seen *s, const char *uid,
				    cJSON **keep)
{
	struct aj_kube_ref ref = { &podgroups, aj_run_ns(run), NULL, NULL };
	struct aj_kube_list_opts o;
	struct aj_kube_status ks;
	struct aj_errors gerr = AJ_ERRORS_INIT;
	const char *why = NULL;
	char pg[320], sel[400];

	snprintf(pg, sizeof(pg), "%s-%s", s->job, uid ? uid : "");
	ref.name = pg;
	aj_kube_status_init(&ks);
	if (aj_kube_get(aj_run_kube(run), &ref, keep, &ks, &gerr)) {
		if (ks.reason == AJ_KUBE_NOT_FOUND)
			aj_errors_release(&gerr);   /* nothing to say yet */
	} else if (!(why = aj_volcano_podgroup_reason(*keep))) {
		cJSON_Delete(*keep);
		*keep = NULL;
		memset(&o, 0, sizeof(o));
		snprintf(sel, sizeof(sel), "involvedObject.kind=PodGroup,involvedObject.name=%s,"
			 "reason=Unschedulable", pg);
		o.field_selector = sel;
		ref.res = &core_events;
		ref.name = NULL;
		if (!aj_kube_list_all(aj_run_kube(run), &ref, &o, keep, NULL, &gerr))
			why = aj_volcano_latest_event(*keep);
	}
	if (gerr.nr)
		aj_log(AJ_LOG_WARN, "could not read why the job waits", "volcanoJob", s->job,
		       "error", gerr.items[0].message, AJ_LOG_END);
	aj_kube_status_release(&ks);
	aj_errors_release(&gerr);
	return why;
}

static int observe(struct aj_run *run, unsigned need, struct aj_seen *s, struct aj_errors *err)
{
	struct aj_run_scratch *sc = aj_run_scratch(run);

	if (need & (NEED_FAILURE | AJ_NEED_PODS)) {
		cJSON *pods = NULL;
		char sel[320];

		snprintf(sel, sizeof(sel), "volcano.sh/job-name=%s", s->job);
		if (aj_run_pods(run, sel, &pods, err))
			return -1;
		s->pods_left = cJSON_GetArraySize(aj_json_get(pods, "items"));
		s->failure = aj_volcano_failure_from_pods(pods, sc->text, sizeof(sc->text))
			     ? sc->text : NULL;
		s->pod_failure = aj_run_pod_failure(run, sc->pod_failure, sizeof(sc->pod_failure));
		cJSON_Delete(pods);
		s->have |= NEED_FAILURE | AJ_NEED_PODS;
	}
	if (need & NEED_REASON) {
		s->reason = scheduler_reason(run, s, s->uid, &sc->keep);
		/* aj's own fact, asked only of a job the scheduler says it cannot place */
		if (s->reason && aj_run_never_fits(run, &s->never, err))
			return -1;
		s->have |= NEED_REASON;
	}
	return 0;
}

static const char *const services[] = { "volcano", NULL };

static const struct aj_access access[] = {
	{ "create", "batch.volcano.sh", "jobs", NULL },
	{ "delete", "batch.volcano.sh", "jobs", NULL },
	{ "create", "", "secrets", NULL },
	{ "patch", "", "secrets", NULL },
	/* reads no watch shows: the pods of a failed or cancelled job, why one waits */
	{ "list", "", "pods", NULL },
	{ "get", "scheduling.volcano.sh", "podgroups", NULL },
	{ "list", "", "events", NULL },
	{ NULL, NULL, NULL, NULL }
};

const struct aj_runner aj_runner_volcano = {
	.name = "volcano",
	.services = services,
	.kind = "Volcano Job",
	.reason_prefix = "VolcanoJob",
	.status_member = "volcano",
	.owns = &volcano_jobs,
	.owns_crd = "jobs.batch.volcano.sh",
	.access = access,
	.summarize = summarize,
	.object_name = volcano_name,
	.decide = decide,
	.observe = observe,
	.cancel = aj_run_delete_owned,
};

/* --- pure helpers --- */

/* When a failed pod finished: its earliest terminated container, else its start. */
static long long finished_at(const cJSON *pod, const cJSON **term)
{
	const cJSON *cs;
	long long best = -1;

	*term = NULL;
	cJSON_ArrayForEach(cs, aj_json_get(aj_json_get(pod, "status"), "containerStatuses")) {
		const cJSON *t = aj_json_get(aj_json_get(cs, "state"), "terminated");
		const cJSON *code = aj_json_get(t, "exitCode");
		long long at;

		if (!t || !cJSON_IsNumber(code) || code->valuedouble == 0)
			continue;
		at = aj_timestamp_parse(aj_json_str(t, "finishedAt"), 0);
		if (!*term || (at >= 0 && (best < 0 || at < best))) {
			*term = t;
			best = at;
		}
	}
	if (best < 0)
		best = aj_timestamp_parse(aj_json_str(aj_json_get(pod, "status"), "startTime"), 0);
	return best;
}

int aj_volcano_failure_from_pods(const cJSON *pods, char *out, size_t size)
{
	const cJSON *pod, *first = NULL, *first_term = NULL;
	long long first_at = -1;

	out[0] = '\0';
	cJSON_ArrayForEach(pod, aj_json_get(pods, "items")) {
		const cJSON *term;
		long long at;

		if (!is(aj_json_str(aj_json_get(pod, "status"), "phase"), "Failed"))
			continue;
		at = finished_at(pod, &term);
		if (!first || (at >= 0 && (first_at < 0 || at < first_at))) {
			first = pod;
			first_term = term;
			first_at = at;
		}
	}
	if (!first)
		return 0;
	{
		const cJSON *meta = aj_json_get(first, "metadata"), *st = aj_json_get(first,
										      "status");
		const char *task = aj_json_str(aj_json_get(meta, "labels"), "volcano.sh/task-spec");
		const char *name = aj_json_str(meta, "name");
		const char *why = aj_json_str(st, "reason");
		int n = snprintf(out, size, "task %s, pod %s: ", task ? task : "?", name ? name : "?");

		if (n < 0 || (size_t)n >= size)
			return 1;
		if (first_term) {
			const char *r = aj_json_str(first_term, "reason");

			snprintf(out + n, size - (size_t)n, "exit code %d%s%s%s",
				 aj_json_get(first_term,
					     "exitCode")->valueint, r ? " (" : "", r ? r : "",
				 r ? ")" : "");
		} else {
			const char *m = aj_json_str(st, "message");

			snprintf(out + n, size - (size_t)n, "%s%s%s", why ? why : "failed",
				 m ? ": " : "", m ? m : "");
		}
	}
	return 1;
}

const char *aj_volcano_podgroup_reason(const cJSON *podgroup)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, aj_json_get(aj_json_get(podgroup, "status"), "conditions"))
		if (is(aj_json_str(c, "type"), "Unschedulable") && is(aj_json_str(c, "status"),
								      "True"))
			return aj_json_str(c, "message");
	return NULL;
}

const char *aj_volcano_latest_event(const cJSON *events)
{
	const cJSON *ev;
	const char *best = NULL;
	long long best_at = -1;

	cJSON_ArrayForEach(ev, aj_json_get(events, "items")) {
		const char *when = aj_json_str(ev, "lastTimestamp");
		long long at = aj_timestamp_parse(when ? when : aj_json_str(ev, "eventTime"), 0);

		if (!aj_json_str(ev, "message"))
			continue;
		/* the later of equal times: the list is in creation order */
		if (!best || at >= best_at) {
			best = aj_json_str(ev, "message");
			best_at = at;
		}
	}
	return best;
}
