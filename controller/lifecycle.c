#include "lifecycle.h"

#include <stdio.h>
#include <string.h>

#include "core/timestamp.h"

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int is(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

static void add_event(struct aj_life_plan *p, int warning, const char *reason,
		      const char *note, int once)
{
	struct aj_life_event *e;

	if (p->nr_events >= AJ_LIFE_EVENTS)
		return;
	e = &p->events[p->nr_events++];
	e->warning = warning;
	e->reason = reason;
	e->note = note;
	e->once = once;
}

/* "" or " after N restarts" */
static void restarts(long long n, char *out, size_t size)
{
	if (n > 0)
		snprintf(out, size, " after %lld restart%s", n, n == 1 ? "" : "s");
	else
		out[0] = '\0';
}

/* Cancel requested (or under way): Cancelling until the Job and its pods are gone. */
static void cancelling(const struct aj_life_seen *s, struct aj_life_plan *p)
{
	p->phase = AJ_PHASE_CANCELLING;
	p->reason = "Cancelling";
	if (s->exists) {
		p->delete_job = !s->deleting;
		snprintf(p->message, sizeof(p->message),
			 "cancelling (aj.dev/cancel): Volcano Job %s is being deleted with its pods",
			 s->job);
	} else if (!(s->have & AJ_LIFE_NEED_PODS)) {
		p->need |= AJ_LIFE_NEED_PODS;
		return;
	} else if (s->pods_left > 0) {
		snprintf(p->message, sizeof(p->message),
			 "cancelling (aj.dev/cancel): %lld pod%s of Volcano Job %s still there",
			 s->pods_left, s->pods_left == 1 ? "" : "s", s->job);
		p->requeue_after = AJ_LIFE_PODS_RECHECK;
	} else {
		p->phase = AJ_PHASE_CANCELLED;
		p->reason = "Cancelled";
		snprintf(p->message, sizeof(p->message), "cancelled by request (aj.dev/cancel)");
		snprintf(p->note, sizeof(p->note),
			 "cancelled: Volcano Job %s and its pods are gone", s->job);
		add_event(p, 0, "Cancelled", p->note, 1);
		return;
	}
	if (s->prev != AJ_PHASE_CANCELLING)
		add_event(p, 0, "Cancelling", p->message, 0);
}

/* The Volcano Job ended: Succeeded or Failed, told once. */
static void finished(const struct aj_life_seen *s, struct aj_life_plan *p)
{
	char after[64];

	restarts(s->retry_count, after, sizeof(after));
	if (is(s->phase, "Completed")) {
		p->phase = AJ_PHASE_SUCCEEDED;
		p->reason = "VolcanoJobCompleted";
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s is Completed: every pod succeeded%s", s->job, after);
		add_event(p, 0, p->reason, p->message, 1);
		return;
	}
	p->phase = AJ_PHASE_FAILED;
	if (is(s->phase, "Terminated")) {
		p->reason = "VolcanoJobTerminated";
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s was terminated (a TerminateJob Command)", s->job);
	} else if (!(s->have & AJ_LIFE_NEED_FAILURE)) {
		p->need |= AJ_LIFE_NEED_FAILURE;
		return;
	} else {
		p->reason = "VolcanoJobFailed";
		if (s->failure)
			snprintf(p->message, sizeof(p->message), "Volcano Job %s is Failed%s: %s",
				 s->job, after, s->failure);
		else
			snprintf(p->message, sizeof(p->message),
				 "Volcano Job %s is Failed%s (no failed pod is left to name)",
				 s->job, after);
	}
	add_event(p, 1, p->reason, p->message, 1);
}

/* Submitted and waiting: ask the scheduler why, now and then. */
static void waiting(const struct aj_life_seen *s, struct aj_life_plan *p)
{
	long long from = s->submitted_at + AJ_LIFE_REASON_GRACE, next;
	const char *why = s->have & AJ_LIFE_NEED_REASON ? s->reason : s->prev_reason;

	if (why && !*why)
		why = NULL;   /* a False condition's empty message is no reason */

	p->phase = AJ_PHASE_SUBMITTED;
	p->reason = "VolcanoJobPending";
	if (!(s->have & AJ_LIFE_NEED_REASON) && s->now >= from && s->now >= s->reason_due) {
		p->need |= AJ_LIFE_NEED_REASON;
		return;
	}
	if (s->have & AJ_LIFE_NEED_REASON)
		p->reason_due = s->now + AJ_LIFE_REASON_EVERY;
	next = s->have & AJ_LIFE_NEED_REASON ? p->reason_due
					      : (s->reason_due > from ? s->reason_due : from);
	p->requeue_after = next > s->now ? next - s->now : 1;
	if (!why) {
		snprintf(p->message, sizeof(p->message), "Volcano Job %s is Pending", s->job);
		return;
	}
	p->reason = "Unschedulable";
	p->flags |= AJ_STATUS_FLAG(AJ_COND_UNSCHEDULABLE);
	p->unschedulable = why;
	snprintf(p->message, sizeof(p->message), "Volcano Job %s is Pending: %s", s->job, why);
	if (!(s->prev_flags & AJ_STATUS_FLAG(AJ_COND_UNSCHEDULABLE)))
		add_event(p, 1, "Unschedulable", why, 0);
}

void aj_life_decide(const struct aj_life_seen *s, struct aj_life_plan *p)
{
	const char *v = s->phase ? s->phase : "Pending";
	int ended = s->exists && (is(v, "Completed") || is(v, "Failed") || is(v, "Terminated"));
	unsigned restarting = AJ_STATUS_FLAG(AJ_COND_RESTARTING);
	unsigned suspended = AJ_STATUS_FLAG(AJ_COND_SUSPENDED);
	int ran = aj_phase_rank(s->prev) >= aj_phase_rank(AJ_PHASE_RUNNING);

	memset(p, 0, sizeof(*p));
	p->retry_count = s->retry_count;
	/* A job that ended before the cancel was acted on keeps its outcome. */
	if ((s->cancel && !ended) || s->prev == AJ_PHASE_CANCELLING) {
		cancelling(s, p);
		return;
	}
	if (!s->exists) {
		p->phase = AJ_PHASE_FAILED;
		p->reason = "VolcanoJobDeleted";
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s was deleted before it finished", s->job);
		add_event(p, 1, p->reason, p->message, 1);
		return;
	}
	if (ended) {
		finished(s, p);
		return;
	}
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
			 s->retry_count, s->max_retry);
		if (!(s->prev_flags & restarting))
			add_event(p, 1, p->reason, p->message, 0);
	} else if (is(v, "Aborting") || is(v, "Aborted")) {
		p->phase = AJ_PHASE_SUBMITTED;
		p->reason = "VolcanoJobAborted";
		p->flags |= suspended;
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s is %s (an AbortJob Command): a ResumeJob Command runs it again",
			 s->job, v);
		if (!(s->prev_flags & suspended))
			add_event(p, 0, p->reason, p->message, 0);
	} else if (is(v, "Terminating")) {
		p->phase = AJ_PHASE_SUBMITTED;
		p->reason = "VolcanoJobTerminating";
		snprintf(p->message, sizeof(p->message),
			 "Volcano Job %s is Terminating (a TerminateJob Command)", s->job);
	} else {
		waiting(s, p);
		if (p->need)
			return;
	}
	if ((s->prev_flags & suspended) && !(p->flags & suspended))
		add_event(p, 0, "VolcanoJobResumed", p->message, 0);
	/* Never back: a restarted or aborted job that ran is still Running. */
	if (aj_phase_rank(p->phase) < aj_phase_rank(s->prev))
		p->phase = s->prev;
	if (p->phase == AJ_PHASE_RUNNING && s->prev != AJ_PHASE_RUNNING)
		add_event(p, 0, "VolcanoJobRunning", p->message, 0);
}

int aj_life_create_rejected(long code)
{
	return code >= 400 && code < 500 && code != 401 && code != 404 && code != 409 &&
	       code != 429;
}

/* When a failed pod finished: its earliest terminated container, else its start. */
static long long finished_at(const cJSON *pod, const cJSON **term)
{
	const cJSON *cs;
	long long best = -1;

	*term = NULL;
	cJSON_ArrayForEach(cs, get(get(pod, "status"), "containerStatuses")) {
		const cJSON *t = get(get(cs, "state"), "terminated");
		const cJSON *code = get(t, "exitCode");
		long long at;

		if (!t || !cJSON_IsNumber(code) || code->valuedouble == 0)
			continue;
		at = aj_timestamp_parse(str(t, "finishedAt"), 0);
		if (!*term || (at >= 0 && (best < 0 || at < best))) {
			*term = t;
			best = at;
		}
	}
	if (best < 0)
		best = aj_timestamp_parse(str(get(pod, "status"), "startTime"), 0);
	return best;
}

int aj_life_failure_from_pods(const cJSON *pods, char *out, size_t size)
{
	const cJSON *pod, *first = NULL, *first_term = NULL;
	long long first_at = -1;

	out[0] = '\0';
	cJSON_ArrayForEach(pod, get(pods, "items")) {
		const cJSON *term;
		long long at;

		if (!is(str(get(pod, "status"), "phase"), "Failed"))
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
		const cJSON *meta = get(first, "metadata"), *st = get(first, "status");
		const char *task = str(get(meta, "labels"), "volcano.sh/task-spec");
		const char *name = str(meta, "name");
		const char *why = str(st, "reason");
		int n = snprintf(out, size, "task %s, pod %s: ", task ? task : "?", name ? name : "?");

		if (n < 0 || (size_t)n >= size)
			return 1;
		if (first_term) {
			const char *r = str(first_term, "reason");

			snprintf(out + n, size - (size_t)n, "exit code %d%s%s%s",
				 get(first_term, "exitCode")->valueint, r ? " (" : "", r ? r : "",
				 r ? ")" : "");
		} else {
			const char *m = str(st, "message");

			snprintf(out + n, size - (size_t)n, "%s%s%s", why ? why : "failed",
				 m ? ": " : "", m ? m : "");
		}
	}
	return 1;
}

const char *aj_life_podgroup_reason(const cJSON *podgroup)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, get(get(podgroup, "status"), "conditions"))
		if (is(str(c, "type"), "Unschedulable") && is(str(c, "status"), "True"))
			return str(c, "message");
	return NULL;
}

const char *aj_life_latest_event(const cJSON *events)
{
	const cJSON *ev;
	const char *best = NULL;
	long long best_at = -1;

	cJSON_ArrayForEach(ev, get(events, "items")) {
		const char *when = str(ev, "lastTimestamp");
		long long at = aj_timestamp_parse(when ? when : str(ev, "eventTime"), 0);

		if (!str(ev, "message"))
			continue;
		/* the later of equal times: the list is in creation order */
		if (!best || at >= best_at) {
			best = str(ev, "message");
			best_at = at;
		}
	}
	return best;
}
