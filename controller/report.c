#include "report.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cache.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/timestamp.h"
#include "events.h"
#include "jobmetrics.h"
#include "kube/client.h"
#include "log.h"
#include "resources.h"

/*
 * Event names need only be unique, across restarts too: a counter that
 * starts from the wall clock in nanoseconds, set once before any thread
 * takes a number.
 */
static atomic_ullong event_seq;
static pthread_once_t event_seq_once = PTHREAD_ONCE_INIT;

static void event_seq_start(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	atomic_store(&event_seq, (unsigned long long)ts.tv_sec * 1000000000ull +
					 (unsigned long long)ts.tv_nsec);
}

static unsigned long long next_seq(void)
{
	pthread_once(&event_seq_once, event_seq_start);
	return atomic_fetch_add_explicit(&event_seq, 1, memory_order_relaxed);
}

int aj_report_init(struct aj_report *rep, struct aj_kube *k, const struct aj_ajjob_view *v,
		   const char *instance)
{
	memset(rep, 0, sizeof(*rep));
	rep->k = k;
	rep->v = v;
	rep->instance = instance;
	snprintf(rep->key, sizeof(rep->key), "%s/%s", v->ns, v->name);
	aj_time_now(rep->now, sizeof(rep->now), rep->now_micro, sizeof(rep->now_micro));
	rep->rv = aj_strdup(v->resource_version ? v->resource_version : "");
	return rep->rv ? 0 : -1;
}

void aj_report_release(struct aj_report *rep)
{
	aj_free(rep->rv);
	rep->rv = NULL;
}

/* next with extra's members instead of its own. 0 / -1. */
static int replace_members(cJSON *next, const cJSON *extra)
{
	const cJSON *m;

	cJSON_ArrayForEach(m, extra) {
		cJSON *copy = cJSON_Duplicate(m, 1);

		cJSON_DeleteItemFromObjectCaseSensitive(next, m->string);
		if (!copy || !cJSON_AddItemToObject(next, m->string, copy)) {
			cJSON_Delete(copy);
			return -1;
		}
	}
	return 0;
}

/* Members a status may drop (a job's tasks once its object is gone). */
static const char *const droppable[] = { "tasks", "tasksSummary" };

/* null for each droppable member next does not have. 0 / -1. */
static int drop_absent(cJSON *next)
{
	size_t i;

	for (i = 0; i < sizeof(droppable) / sizeof(droppable[0]); i++)
		if (!cJSON_GetObjectItemCaseSensitive(next, droppable[i]) &&
		    !cJSON_AddNullToObject(next, droppable[i]))
			return -1;
	return 0;
}

/* Count a written phase change in the job metrics. */
static void count_transition(const struct aj_report *rep, const struct aj_status *st)
{
	const struct aj_ajjob_view *v = rep->v;
	enum aj_phase from = v->has_phase ? v->phase : AJ_PHASE_PENDING;
	long long now = aj_timestamp_parse(rep->now, 0);

	if (!rep->metrics || from == st->phase || now < 0)
		return;
	aj_jobmetrics_transition(rep->metrics, st->backend, from, st->phase, v->created,
				 aj_status_true_since(v->status, "Running"), now);
}

int aj_report_status(struct aj_report *rep, const struct aj_status *st, const cJSON *extra,
		     struct aj_errors *err)
{
	const struct aj_ajjob_view *v = rep->v;
	struct aj_kube_ref ref = { &aj_res_ajjobs, v->ns, v->name, "status" };
	cJSON *patch = NULL, *meta, *next, *out = NULL;
	const char *rv;
	int changed = 0, r;

	next = aj_status_next(v->status, st, rep->now, &changed);
	if (!next || replace_members(next, extra)) {
		cJSON_Delete(next);
		return aj_errors_oom(err);
	}
	/* The cache keeps a hash of the status, not all of it. */
	if (v->status && aj_cache_json_hash(next) == v->status_hash) {
		cJSON_Delete(next);
		return 0;
	}
	/*
	 * A merge patch keeps what it does not name: members the status no
	 * longer has go as null (the server stores none, so the hash above
	 * compares what it will hold).
	 */
	if (drop_absent(next)) {
		cJSON_Delete(next);
		return aj_errors_oom(err);
	}
	patch = cJSON_CreateObject();
	if (!patch || !(meta = cJSON_AddObjectToObject(patch, "metadata")) ||
	    !cJSON_AddStringToObject(meta, "resourceVersion", rep->rv) ||
	    !cJSON_AddItemToObject(patch, "status", next)) {
		if (!patch || !cJSON_GetObjectItem(patch, "status"))
			cJSON_Delete(next);
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	r = aj_kube_patch(rep->k, &ref, AJ_KUBE_MERGE_PATCH, patch, &out, NULL, err);
	cJSON_Delete(patch);
	/* later writes of this reconcile carry the version the server answered with */
	rv = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(out, "metadata"), "resourceVersion"));
	if (!r && rv) {
		char *copy = aj_strdup(rv);

		if (!copy)
			r = aj_errors_oom(err);
		else {
			aj_free(rep->rv);
			rep->rv = copy;
		}
	}
	if (!r && rep->cache && cJSON_IsObject(out)) {
		aj_cache_ajjob_put(rep->cache, out);   /* takes it; dropped on OOM, refetched */
		out = NULL;
	}
	cJSON_Delete(out);
	if (!r)
		count_transition(rep, st);
	return r;
}

void aj_report_event(struct aj_report *rep, int warning, const char *reason,
		     const char *action, const char *note, int once)
{
	const struct aj_ajjob_view *v = rep->v;
	struct aj_event e = {
		v->ns, v->name, v->uid, rep->rv, warning, reason, action, note, rep->instance,
		rep->now_micro, next_seq(), once
	};

	aj_event_post(rep->k, &e);
}

int aj_report_fail(struct aj_report *rep, const char *backend, const char *reason,
		   const char *action, const char *message, struct aj_errors *err)
{
	struct aj_status st;

	memset(&st, 0, sizeof(st));
	st.phase = AJ_PHASE_FAILED;
	st.reason = reason;
	st.message = message;
	st.backend = backend;
	st.generation = rep->v->generation;
	if (aj_report_status(rep, &st, NULL, err))
		return -1;
	aj_report_event(rep, 1, reason, action, message, 0);
	aj_log(AJ_LOG_WARN, "ajjob failed", "ajjob", rep->key, "reason", reason,
	       "message", message, AJ_LOG_END);
	return 0;
}
