/* The kube runner (kube.h): a pure decide() and the steps around it. */
#include "kube.h"

#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "backend/storage_secret.h"
#include "core/error.h"
#include "core/json.h"
#include "kube/client.h"
#include "log.h"

/* pod host names are <job>-<index>, at most 63: room for five-digit indexes */
#define KUBE_NAME_MAX 57
#define NEED_FAILURE AJ_NEED_RUNNER    /* the Failed condition's reason and message */
#define NEED_KUEUE AJ_KUBE_NEED_KUEUE   /* what Kueue says of the Job's Workload */
#define FLAG_QUEUED 2u                 /* the Job carries a Kueue queue label */
#define QUEUE_LABEL "kueue.x-k8s.io/queue-name"
#define JOB_UID_LABEL "kueue.x-k8s.io/job-uid"   /* on the Workload Kueue makes for a Job */
#define TASK_LABEL "aj.dev/task"
enum { N_ACTIVE, N_SUCCEEDED };

static const struct aj_kube_resource batch_jobs = { "batch", "v1", "jobs", 1 };
static const struct aj_kube_resource services = { "", "v1", "services", 1 };
static const struct aj_kube_resource workloads = { "kueue.x-k8s.io", "v1beta2", "workloads", 1 };

static int is(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

static int ended(const char *phase)
{
	return is(phase, "Complete") || is(phase, "Failed");
}

/* The condition of `type` whose status is `status` ("True", "False"), else NULL. */
static const cJSON *condition_is(const cJSON *obj, const char *type, const char *status)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, aj_json_get(aj_json_get(obj, "status"), "conditions"))
		if (is(aj_json_str(c, "type"), type) && is(aj_json_str(c, "status"), status))
			return c;
	return NULL;
}

static const cJSON *condition(const cJSON *obj, const char *type)
{
	return condition_is(obj, type, "True");
}

/* Does the pod template mount the job's storage Secret (<name>-storage)? */
static int mounts_storage(const cJSON *obj)
{
	const char *name = aj_json_str(aj_json_get(obj, "metadata"), "name");
	const cJSON *pod = aj_json_get(aj_json_get(aj_json_get(obj, "spec"), "template"), "spec");
	char secret[AJ_STORAGE_SECRET_SIZE];
	const cJSON *vol;

	if (!name || aj_storage_secret_name(name, secret))
		return 0;
	cJSON_ArrayForEach(vol, aj_json_get(pod, "volumes"))
		if (is(aj_json_str(aj_json_get(vol, "secret"), "secretName"), secret))
			return 1;
	return 0;
}

static void kube_name(const char *ajjob, char *out, size_t size)
{
	aj_runner_object_name(ajjob, KUBE_NAME_MAX, out, size);
}

/*
 * The Job's one task (named by its pods' aj.dev/task label): the Job
 * controller counts pods active (pending or running, not terminating),
 * ready (of those, running and ready), succeeded and failed; completions
 * is how many it asks for (1 when unset).
 */
static void task_of(const cJSON *obj, struct aj_owned_facts *out)
{
	const cJSON *st = aj_json_get(obj, "status"), *spec = aj_json_get(obj, "spec");
	const char *name = aj_json_str(aj_json_get(aj_json_get(aj_json_get(spec, "template"),
							       "metadata"), "labels"), TASK_LABEL);
	struct aj_task_pods *t = &out->tasks[0];
	long long active = aj_json_whole(aj_json_get(st, "active"), 2147483647.0, 0);

	t->name = name ? name : aj_json_str(aj_json_get(obj, "metadata"), "name");
	if (!t->name)
		return;
	out->nr_tasks = 1;
	t->replicas = aj_json_whole(aj_json_get(spec, "completions"), 2147483647.0, 1);
	t->running = aj_json_whole(aj_json_get(st, "ready"), 2147483647.0, 0);
	t->pending = active > t->running ? active - t->running : 0;
	t->succeeded = aj_json_whole(aj_json_get(st, "succeeded"), 2147483647.0, 0);
	t->failed = aj_json_whole(aj_json_get(st, "failed"), 2147483647.0, 0);
}

/*
 * Suspended: the Job controller's condition, or spec.suspend with no pod
 * left when no condition says so (yet: just created; or never: a Job that
 * spec.managedBy gives to MultiKueue, whose copy runs on a worker cluster).
 */
static void summarize(const cJSON *obj, struct aj_owned_facts *out)
{
	const cJSON *st = aj_json_get(obj, "status");
	long long ready = aj_json_whole(aj_json_get(st, "ready"), 2147483647.0, 0);

	out->n[N_ACTIVE] = aj_json_whole(aj_json_get(st, "active"), 2147483647.0, 0);
	out->n[N_SUCCEEDED] = aj_json_whole(aj_json_get(st, "succeeded"), 2147483647.0, 0);
	out->phase = condition(obj, "Complete") ? "Complete" :
		     condition(obj, "Failed") ? "Failed" :
		     condition(obj, "FailureTarget") ? "Failing" :
		     condition(obj, "Suspended") || (out->n[N_ACTIVE] == 0 && cJSON_IsTrue(
			aj_json_get(aj_json_get(obj, "spec"), "suspend"))) ? "Suspended" :
		     ready > 0 || out->n[N_SUCCEEDED] > 0 ? "Running" : "Pending";
	out->flags = (aj_json_str(aj_json_get(aj_json_get(obj, "metadata"), "labels"),
				  QUEUE_LABEL) ? FLAG_QUEUED : 0) |
		     (mounts_storage(obj) ? AJ_OWNED_MOUNTS_STORAGE : 0);
	task_of(obj, out);
	aj_owned_tasks_settle(out, ended(out->phase));
}

/* The Job ended: Succeeded or Failed, told once. */
static void finished(const struct aj_seen *s, struct aj_plan *p)
{
	if (is(s->o.phase, "Complete")) {
		p->phase = AJ_PHASE_SUCCEEDED;
		p->reason = "KubeJobComplete";
		snprintf(p->message, sizeof(p->message),
			 "Job %s is Complete: all %lld indexes succeeded", s->job, s->o.n[N_SUCCEEDED]);
		aj_plan_event(p, 0, p->reason, "Observe", p->message, 1);
		return;
	}
	if (!(s->have & NEED_FAILURE)) {
		p->need |= NEED_FAILURE;
		return;
	}
	p->phase = AJ_PHASE_FAILED;
	p->reason = "KubeJobFailed";
	snprintf(p->message, sizeof(p->message), "Job %s is Failed: %s", s->job,
		 s->failure ? s->failure : "(the Job gives no reason)");
	aj_plan_event(p, 1, p->reason, "Observe", p->message, 1);
}

/* "; admitted by Kueue to ClusterQueue Q" after the message, when Kueue said so. */
static void admitted(const struct aj_seen *s, struct aj_plan *p)
{
	size_t n = strlen(p->message);

	if ((s->have & NEED_KUEUE) && s->admitted_to)
		snprintf(p->message + n, sizeof(p->message) - n,
			 "; admitted by Kueue to ClusterQueue %s", s->admitted_to);
}

/* Suspended: by Kueue until it admits the Job (it says why not), or by hand. */
static void suspended(const struct aj_seen *s, struct aj_plan *p)
{
	unsigned flag = AJ_STATUS_FLAG(AJ_COND_SUSPENDED);
	int queued = !!(s->o.flags & FLAG_QUEUED);

	p->phase = AJ_PHASE_SUBMITTED;
	p->reason = "KubeJobSuspended";
	p->flags |= flag;
	snprintf(p->message, sizeof(p->message), "Job %s is suspended%s", s->job,
		 queued ? ": waiting for Kueue to admit it" : "");
	/* the note is the message as it ends up */
	if (!(s->prev_flags & flag))
		aj_plan_event(p, 0, p->reason, "Observe", p->message, 0);
	if (queued) {
		aj_decide_waiting(&aj_runner_kube, s, NEED_KUEUE,
				  "suspended, not admitted by Kueue", p);
		/* admitted: Kueue unsuspends it next */
		if (!p->need && (s->have & NEED_KUEUE) && s->admitted_to) {
			snprintf(p->message, sizeof(p->message), "Job %s is suspended", s->job);
			admitted(s, p);
		}
	}
}

/* The Job's conditions and counts as the AjJob's phase (aj_decide_owned adds the shared lines). */
static void mirror(const struct aj_seen *s, struct aj_plan *p)
{
	int resumed = !!(s->prev_flags & AJ_STATUS_FLAG(AJ_COND_SUSPENDED));
	int ran = aj_phase_rank(s->prev) >= aj_phase_rank(AJ_PHASE_RUNNING);

	/*
	 * Kueue let the Job go: say where it was admitted until it runs (and on
	 * a resume), also when it was admitted before we saw it suspended.
	 */
	if ((s->o.flags & FLAG_QUEUED) && !is(s->o.phase, "Suspended") && (resumed || !ran) &&
	    !(s->have & NEED_KUEUE)) {
		p->need |= NEED_KUEUE;
		return;
	}
	if (is(s->o.phase, "Running")) {
		p->phase = AJ_PHASE_RUNNING;
		p->reason = "KubeJobRunning";
		snprintf(p->message, sizeof(p->message), "Job %s is running: %lld pods active, "
			 "%lld succeeded", s->job, s->o.n[N_ACTIVE], s->o.n[N_SUCCEEDED]);
	} else if (is(s->o.phase, "Failing")) {
		/* failed, its pods are stopping: the Failed condition follows (Running if it ran) */
		p->phase = AJ_PHASE_SUBMITTED;
		p->reason = "KubeJobFailing";
		snprintf(p->message, sizeof(p->message), "Job %s is failing: %lld pods are being "
			 "stopped", s->job, s->o.n[N_ACTIVE]);
	} else if (is(s->o.phase, "Suspended")) {
		suspended(s, p);
		return;
	} else {
		p->phase = AJ_PHASE_SUBMITTED;
		p->reason = "KubeJobPending";
		snprintf(p->message, sizeof(p->message), "Job %s is pending: %lld pods active, "
			 "none ready", s->job, s->o.n[N_ACTIVE]);
	}
	admitted(s, p);
}

static void decide(const struct aj_seen *s, struct aj_plan *p)
{
	aj_decide_owned(&aj_runner_kube, s, s->exists && ended(s->o.phase), finished, mirror, p);
}

/* --- what the cache does not hold --- */

/* "Reason: message" of the Job's Failed condition into out; 1 when there is one. */
static int job_failure(const cJSON *job, char *out, size_t size)
{
	const cJSON *c = condition(job, "Failed");
	const char *r = aj_json_str(c, "reason"), *m = aj_json_str(c, "message");

	out[0] = '\0';
	if (!c)
		return 0;
	snprintf(out, size, "%s%s%s", r ? r : "Failed", m ? ": " : "", m ? m : "");
	return 1;
}

/*
 * What Kueue says of the Job: its Workload, found by the label Kueue puts on
 * it (the Job's uid) and read from the API server's watch cache
 * (resourceVersion 0), so a look costs the server no etcd read. No Kueue
 * (the CRD is not served) or no Workload yet: nothing to say. A failed read
 * is logged, not retried: the reason is a courtesy, the next look comes anyway.
 */
static void kueue_says(struct aj_run *run, struct aj_seen *s)
{
	struct aj_run_scratch *sc = aj_run_scratch(run);
	struct aj_kube_ref ref = { &workloads, aj_run_ns(run), NULL, NULL };
	struct aj_kube_list_opts o;
	struct aj_kube_status ks;
	struct aj_errors lerr = AJ_ERRORS_INIT;
	char sel[160];

	memset(&o, 0, sizeof(o));
	snprintf(sel, sizeof(sel), "%s=%s", JOB_UID_LABEL, s->uid ? s->uid : "");
	o.label_selector = sel;
	o.resource_version = "0";
	aj_kube_status_init(&ks);
	cJSON_Delete(sc->keep);
	sc->keep = NULL;
	if (s->uid && aj_kube_list(aj_run_kube(run), &ref, &o, &sc->keep, &ks, &lerr) &&
	    ks.reason != AJ_KUBE_NOT_FOUND && lerr.nr)
		aj_log(AJ_LOG_WARN, "could not read what Kueue says of the job", "job", s->job,
		       "error", lerr.items[0].message, AJ_LOG_END);
	aj_kube_workload_seen(sc->keep, s, sc->text, sizeof(sc->text));
	aj_kube_status_release(&ks);
	aj_errors_release(&lerr);
}

static int observe(struct aj_run *run, unsigned need, struct aj_seen *s, struct aj_errors *err)
{
	struct aj_run_scratch *sc = aj_run_scratch(run);

	if (need & NEED_FAILURE) {
		struct aj_kube_ref ref = { &batch_jobs, aj_run_ns(run), s->job, NULL };
		cJSON *job = NULL;

		if (aj_kube_get(aj_run_kube(run), &ref, &job, NULL, err))
			return -1;
		s->failure = job_failure(job, sc->text, sizeof(sc->text)) ? sc->text : NULL;
		cJSON_Delete(job);
		s->have |= NEED_FAILURE;
	}
	if (need & AJ_NEED_PODS) {
		cJSON *pods = NULL;
		char sel[320];

		snprintf(sel, sizeof(sel), "batch.kubernetes.io/job-name=%s", s->job);
		if (aj_run_pods(run, sel, &pods, err))
			return -1;
		s->pods_left = cJSON_GetArraySize(aj_json_get(pods, "items"));
		cJSON_Delete(pods);
		s->have |= AJ_NEED_PODS;
	}
	if (need & NEED_KUEUE) {
		kueue_says(run, s);
		/* aj's own fact, asked only of a Job Kueue does not admit */
		if (s->reason && aj_run_never_fits(run, &s->never, err))
			return -1;
	}
	return 0;
}

static const char *const service_names[] = { "kube", NULL };
static const struct aj_kube_resource *const also[] = { &services };

static const struct aj_access access[] = {
	{ "create", "batch", "jobs", NULL },
	{ "delete", "batch", "jobs", NULL },
	{ "get", "batch", "jobs", NULL },
	{ "create", "", "services", NULL },
	{ "create", "", "secrets", NULL },
	{ "patch", "", "secrets", NULL },
	{ "list", "", "pods", NULL },
	/* what Kueue says of a queued Job (where Kueue is not installed the look finds nothing) */
	{ "list", "kueue.x-k8s.io", "workloads", NULL },
	{ NULL, NULL, NULL, NULL }
};

const struct aj_runner aj_runner_kube = {
	.name = "kube",
	.services = service_names,
	.kind = "Job",
	.reason_prefix = "KubeJob",
	.status_member = "kube",
	.owns = &batch_jobs,
	.owns_crd = "jobs.batch",
	.also = also,
	.also_nr = 1,
	.access = access,
	.summarize = summarize,
	.object_name = kube_name,
	.decide = decide,
	.observe = observe,
	.cancel = aj_run_delete_owned,
};

/* --- pure helpers --- */

/* "Reason: message" of a condition into out (either alone when the other is empty). */
static const char *said(const cJSON *c, char *out, size_t size)
{
	const char *r = aj_json_str(c, "reason"), *m = aj_json_str(c, "message");

	if (r && !*r)
		r = NULL;
	if (m && !*m)
		m = NULL;
	snprintf(out, size, "%s%s%s", r ? r : "", r && m ? ": " : "", m ? m : "");
	return *out ? out : NULL;
}

void aj_kube_workload_seen(const cJSON *workloads_list, struct aj_seen *s, char *text,
			   size_t size)
{
	const cJSON *wl = cJSON_GetArrayItem(aj_json_get(workloads_list, "items"), 0), *c;

	s->have |= NEED_KUEUE;
	s->reason = NULL;
	s->admitted_to = NULL;
	text[0] = '\0';
	if (!wl)
		return;
	if (condition(wl, "QuotaReserved") && condition(wl, "Admitted")) {
		s->admitted_to = aj_json_str(aj_json_get(aj_json_get(wl, "status"), "admission"),
					     "clusterQueue");
		return;
	}
	/*
	 * Why not: deactivated (spec.active false), which its Evicted condition
	 * says; else no quota reserved (Kueue's latest try); else not admitted
	 * (admission checks); else evicted.
	 */
	if ((cJSON_IsFalse(aj_json_get(aj_json_get(wl, "spec"), "active")) &&
	     (c = condition(wl, "Evicted"))) ||
	    (c = condition_is(wl, "QuotaReserved", "False")) ||
	    (c = condition_is(wl, "Admitted", "False")) || (c = condition(wl, "Evicted")))
		s->reason = said(c, text, size);
}
