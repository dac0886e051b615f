#include "status.h"

#include <stdio.h>
#include <string.h>

#include "core/timestamp.h"
#include "core/json.h"

static int add_condition(cJSON *list, const cJSON *prev, const char *type, int on,
			 const char *message, const struct aj_status *st, const char *now)
{
	const cJSON *old = aj_status_condition(prev, type);
	const char *status = on ? "True" : "False";
	const char *since = now;
	cJSON *c = cJSON_CreateObject();

	/* Keep the transition time unless the status flips. */
	if (old && aj_json_str(old, "status") && !strcmp(aj_json_str(old, "status"), status) &&
	    aj_json_str(old, "lastTransitionTime"))
		since = aj_json_str(old, "lastTransitionTime");
	if (!c || !cJSON_AddItemToArray(list, c))
		return cJSON_Delete(c), -1;
	if (!cJSON_AddStringToObject(c, "type", type) ||
	    !cJSON_AddStringToObject(c, "status", status) ||
	    !cJSON_AddNumberToObject(c, "observedGeneration", (double)st->generation) ||
	    !cJSON_AddStringToObject(c, "lastTransitionTime", since) ||
	    !cJSON_AddStringToObject(c, "reason", st->reason) ||
	    !cJSON_AddStringToObject(c, "message", message))
		return -1;
	return 0;
}

/* Whether each condition is True for st, in aj_status_conditions order. */
static void conditions_on(const struct aj_status *st, int on[AJ_STATUS_CONDITIONS])
{
	int i;

	on[0] = st->submitted;
	on[1] = st->phase == AJ_PHASE_RUNNING;
	on[2] = st->phase == AJ_PHASE_SUCCEEDED;
	on[3] = st->phase == AJ_PHASE_FAILED || st->phase == AJ_PHASE_CANCELLED;
	for (i = AJ_COND_RESTARTING; i < AJ_STATUS_CONDITIONS; i++)
		on[i] = !!(st->flags & AJ_STATUS_FLAG(i));
}

void aj_status_tasks_summary(const struct aj_task_pods *tasks, size_t n, char *out, size_t size)
{
	static const char *const words[] = { "running", "pending", "succeeded", "failed" };
	long long count[4] = { 0, 0, 0, 0 }, total = 0;
	size_t i, lead, len;
	int w;

	for (i = 0; i < n; i++) {
		total += tasks[i].replicas;
		count[0] += tasks[i].running;
		count[1] += tasks[i].pending;
		count[2] += tasks[i].succeeded;
		count[3] += tasks[i].failed;
	}
	/* all done, or ended in failure with nothing running, else running */
	lead = total > 0 && count[2] == total ? 2 : !count[0] && count[3] ? 3 : 0;
	w = snprintf(out, size, "%lld/%lld %s", count[lead], total, words[lead]);
	for (i = 0; w >= 0 && i < 4; i++) {
		len = strlen(out);
		if (i != lead && count[i] > 0 && len < size)
			w = snprintf(out + len, size - len, ", %lld %s", count[i], words[i]);
	}
}

/* status.tasks and status.tasksSummary. 0 / -1. */
static int add_tasks(cJSON *s, const struct aj_status *st)
{
	char line[256];
	cJSON *list = cJSON_AddArrayToObject(s, "tasks"), *t;
	size_t i;

	if (!list)
		return -1;
	for (i = 0; i < st->nr_tasks; i++) {
		const struct aj_task_pods *k = &st->tasks[i];

		if (!(t = cJSON_CreateObject()) || !cJSON_AddItemToArray(list, t))
			return cJSON_Delete(t), -1;
		if (!cJSON_AddStringToObject(t, "name", k->name) ||
		    !cJSON_AddNumberToObject(t, "replicas", (double)k->replicas) ||
		    !cJSON_AddNumberToObject(t, "pending", (double)k->pending) ||
		    !cJSON_AddNumberToObject(t, "running", (double)k->running) ||
		    !cJSON_AddNumberToObject(t, "succeeded", (double)k->succeeded) ||
		    !cJSON_AddNumberToObject(t, "failed", (double)k->failed))
			return -1;
	}
	aj_status_tasks_summary(st->tasks, st->nr_tasks, line, sizeof(line));
	return cJSON_AddStringToObject(s, "tasksSummary", line) ? 0 : -1;
}

/*
 * A placement's last attempt follows the job it made: Running (and when:
 * `started`) once it runs, its outcome and end once it ends. An attempt a fail-over is moving
 * (Cancelling, GaveUp) is the fail-over's to write. 0 / -1.
 */
static int follow_attempt(cJSON *s, enum aj_phase phase, const char *now)
{
	cJSON *atts = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(s, AJ_STATUS_PLACEMENT), "attempts");
	cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
	const char *was = aj_json_str(last, "outcome"), *to = aj_phase_name(phase);

	if (!was || (strcmp(was, "Submitted") && strcmp(was, "Running")) || !strcmp(was, to) ||
	    (phase != AJ_PHASE_RUNNING && !aj_phase_terminal(phase)))
		return 0;
	cJSON_DeleteItemFromObjectCaseSensitive(last, "outcome");
	if (!cJSON_AddStringToObject(last, "outcome", to))
		return -1;
	/* when it started: the wait history's sample, which the Running condition loses at the end */
	if (!aj_phase_terminal(phase))
		return cJSON_AddStringToObject(last, "started", now) ? 0 : -1;
	cJSON_DeleteItemFromObjectCaseSensitive(last, "ended");
	return cJSON_AddStringToObject(last, "ended", now) ? 0 : -1;
}

cJSON *aj_status_next(const cJSON *prev, const struct aj_status *st,
		      const char *now, int *changed)
{
	cJSON *s = cJSON_CreateObject(), *conds = NULL, *member;
	const cJSON *kept_retries, *prev_member = NULL;
	const char *job = st->job;
	int on[AJ_STATUS_CONDITIONS], i;
	char renew[AJ_TIMESTAMP_SIZE] = "";
	const char *kept;
	long long retries = st->retry_count;

	if (!cJSON_IsObject(prev))
		prev = NULL;
	if (prev && st->member)
		prev_member = cJSON_GetObjectItemCaseSensitive(prev, st->member);
	if (!job)
		job = aj_json_str(prev_member, "jobName");
	kept_retries = prev ? cJSON_GetObjectItemCaseSensitive(prev, "retryCount") : NULL;
	if (retries <= 0 && cJSON_IsNumber(kept_retries))
		retries = (long long)kept_retries->valuedouble;
	conditions_on(st, on);
	if (!s || !cJSON_AddStringToObject(s, "phase", aj_phase_name(st->phase)) ||
	    !cJSON_AddStringToObject(s, "backend", st->backend) ||
	    !cJSON_AddNumberToObject(s, "observedGeneration", (double)st->generation) ||
	    !cJSON_AddStringToObject(s, "message", st->message) ||
	    (retries > 0 && !cJSON_AddNumberToObject(s, "retryCount", (double)retries)) ||
	    (st->nr_tasks && add_tasks(s, st)) ||
	    !(conds = cJSON_AddArrayToObject(s, "conditions")))
		goto fail;
	for (i = 0; i < AJ_STATUS_CONDITIONS; i++) {
		/* True conditions say why; Submitted always carries the message */
		const char *msg = !on[i] && i ? "" :
				  i == AJ_COND_UNSCHEDULABLE && st->unschedulable ? st->unschedulable :
				  st->message;

		if (add_condition(conds, prev, aj_status_conditions[i], on[i], msg, st, now))
			goto fail;
	}
	if (st->storage_renew_after > 0)
		aj_timestamp_format((time_t)st->storage_renew_after, renew);
	else if ((kept = aj_json_str(prev_member, AJ_STATUS_RENEW)))
		snprintf(renew, sizeof(renew), "%s", kept);
	if (job && st->member &&
	    (!(member = cJSON_AddObjectToObject(s, st->member)) ||
	     !cJSON_AddStringToObject(member, "jobName", job) ||
	     (renew[0] && !cJSON_AddStringToObject(member, AJ_STATUS_RENEW, renew))))
		goto fail;
	/* members a runner writes whole are its own to change: carry them over */
	for (i = 0; prev && i < (int)st->nr_kept && st->kept[i]; i++) {
		const cJSON *had = cJSON_GetObjectItemCaseSensitive(prev, st->kept[i]);
		cJSON *copy;

		if (!had)
			continue;
		cJSON_DeleteItemFromObjectCaseSensitive(s, st->kept[i]);
		if (!(copy = cJSON_Duplicate(had, 1)) || !cJSON_AddItemToObject(s, st->kept[i], copy)) {
			cJSON_Delete(copy);
			goto fail;
		}
	}
	if (follow_attempt(s, st->phase, now))
		goto fail;
	*changed = !prev || !cJSON_Compare(prev, s, 1);
	return s;
fail:
	cJSON_Delete(s);
	return NULL;
}
