/*
 * reconcile.c - one reconcile of one AjJob (reconcile.h): choose its runner,
 * observe, decide and act in rounds (runner/runner.h), return one action.
 * It names no runner: the table (runner/runner.c) does.
 */
#include "reconcile.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "backend/storage_secret.h"
#include "cache.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/ajjob.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/json.h"
#include "core/node.h"
#include "core/placement.h"
#include "core/source.h"
#include "core/timestamp.h"
#include "jobmetrics.h"
#include "kube/client.h"
#include "pipeline/candidates.h"
#include "pipeline/pipeline.h"
#include "place/failover.h"
#include "placer.h"
#include "log.h"
#include "report.h"
#include "resources.h"
#include "runner/run.h"
#include "runner/runner.h"
#include "storage.h"

/* Is runner rn on in this controller (configured when it must be)? */
static int runner_on(const struct aj_reconciler *r, const struct aj_runner *rn)
{
	return rn && (!rn->configure || r->runner_config[aj_runner_slot(rn)]);
}

/* --- observe --- */

/*
 * Seconds since the epoch of the Submitted condition's transition into
 * *submitted and of the latest transition of any into *latest; 0 when unknown.
 */
static void transitions(const cJSON *status, long long *submitted, long long *latest)
{
	const cJSON *c;

	*submitted = *latest = 0;
	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions")) {
		const char *type = aj_json_str(c, "type");
		long long t = aj_timestamp_parse(aj_json_str(c, "lastTransitionTime"), 0);

		if (t <= 0)
			continue;
		if (type && !strcmp(type, aj_status_conditions[0]))
			*submitted = t;
		if (t > *latest)
			*latest = t;
	}
}

/* The owned object into s from ov. */
static void seen_object(struct aj_run *run, int found)
{
	struct aj_seen *s = &run->s;

	s->exists = found;
	s->uid = run->ov.uid;
	s->deleting = run->ov.deleting;
	s->ours = found && run->ov.owner_uid && run->v.uid &&
		  !strcmp(run->ov.owner_uid, run->v.uid);
	s->o.phase = run->ov.phase;
	s->o.flags = run->ov.flags;
	memcpy(s->o.n, run->ov.n, sizeof(s->o.n));
	s->o.nr_tasks = run->ov.nr_tasks;
	if (s->o.nr_tasks)
		memcpy(s->o.tasks, run->ov.tasks, s->o.nr_tasks * sizeof(s->o.tasks[0]));
}

/* What the cache says of the runner's object. 0 / -1 (OOM). */
static int observe_object(struct aj_run *run, struct aj_errors *err)
{
	const struct aj_runner *rn = run->runner;
	char okey[384];
	int found;

	if (!rn)
		return 0;
	if (!rn->owns) {
		/* its job is not in the cluster: the status names it, else its observe finds it */
		run->s.job = aj_json_str(aj_json_get(run->v.status, rn->status_member), "jobName");
		seen_object(run, 0);
		return 0;
	}
	if (run->v.job)
		snprintf(run->job, sizeof(run->job), "%s", run->v.job);
	else
		rn->object_name(run->v.name, run->job, sizeof(run->job));
	run->s.job = run->job;
	snprintf(okey, sizeof(okey), "%s/%s", run->v.ns, run->job);
	found = aj_cache_owned_get(run->cache, aj_runner_slot(rn), okey, &run->ov);
	if (found < 0)
		return aj_errors_oom(err);
	seen_object(run, found);
	return 0;
}

static void observe_ajjob(struct aj_run *run)
{
	struct aj_seen *s = &run->s;
	const struct aj_ajjob_view *v = &run->v;
	const cJSON *member = aj_json_get(v->status, run->runner ? run->runner->status_member : NULL);

	s->now = (long long)time(NULL);
	s->ajjob = v->name;
	s->prev = v->has_phase ? v->phase : AJ_PHASE_PENDING;
	s->prev_flags = v->conditions;
	s->prev_reason = v->unschedulable;
	s->cancel = v->cancel;
	s->removing = v->deleting;
	s->submitted = v->job != NULL || aj_json_str(member, "jobName") != NULL;
	transitions(v->status, &s->submitted_at, &s->changed_at);
	s->reason_due = v->reason_due;
	s->storage_due = v->storage_due;
	s->storage_renew = aj_timestamp_parse(aj_json_str(member, AJ_STATUS_RENEW), 0);
	s->storage_on = run->r->storage != NULL;
	s->ttl = v->ttl;
	s->ttl_default = run->r->ttl_after_finished;
	if (v->has_phase && aj_phase_terminal(v->phase))
		s->finished_at = aj_status_true_since(v->status, v->phase == AJ_PHASE_SUCCEEDED
								 ? "Succeeded" : "Failed");
}

/* "created volcano job", ajjob, job */
static void log_object(const struct aj_run *run, const char *what)
{
	char msg[96];

	snprintf(msg, sizeof(msg), "%s %s job", what, run->runner->name);
	aj_log(AJ_LOG_INFO, msg, "ajjob", run->rep.key, "job", run->job, AJ_LOG_END);
}

/* The owned object from the server: the watch may lag behind a create. */
static int get_object(struct aj_run *run, struct aj_errors *err)
{
	const struct aj_runner *rn = run->runner;
	struct aj_kube_ref ref = { rn->owns, run->v.ns, run->job, NULL };
	struct aj_kube_status ks;
	struct aj_errors gerr = AJ_ERRORS_INIT;
	cJSON *obj = NULL;
	int ret;

	aj_kube_status_init(&ks);
	ret = aj_kube_get(run->k, &ref, &obj, &ks, &gerr);
	if (!ret) {
		struct aj_owned_facts f;
		char okey[384];
		int found;

		memset(&f, 0, sizeof(f));
		rn->summarize(obj, &f);
		snprintf(okey, sizeof(okey), "%s/%s", run->v.ns, run->job);
		aj_owned_view_release(&run->ov);
		found = !aj_cache_owned_put(run->cache, aj_runner_slot(rn), obj, &f) &&
			aj_cache_owned_get(run->cache, aj_runner_slot(rn), okey, &run->ov) == 1;
		if (!found)
			ret = aj_errors_oom(err);
		else
			seen_object(run, 1);
		if (found && run->s.ours && run->s.create == AJ_CREATE_EXISTS)
			log_object(run, "adopted existing");
	} else if (ks.reason == AJ_KUBE_NOT_FOUND) {
		ret = 0;
		seen_object(run, 0);
	} else {
		aj_errors_splice(err, &gerr);
	}
	run->s.have |= AJ_NEED_OBJECT;
	aj_errors_release(&gerr);
	aj_kube_status_release(&ks);
	return ret;
}

/* Does the AjJob object carry finalizer fin? */
static int has_finalizer(const cJSON *obj, const char *fin)
{
	const cJSON *f;

	cJSON_ArrayForEach(f, cJSON_GetObjectItemCaseSensitive(
			cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "finalizers"))
		if (fin && cJSON_IsString(f) && !strcmp(f->valuestring, fin))
			return 1;
	return 0;
}

/* The AjJob's object, read from the server when the cache has let it go. 0 / -1. */
static int fetch_object(struct aj_run *run, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_ajjobs, run->v.ns, run->v.name, NULL };

	return !run->v.object && aj_kube_get(run->k, &ref, &run->v.object, NULL, err) ? -1 : 0;
}

/* AJ_NEED_AJJOB: the AjJob's object, and whether the runner's finalizer holds it. */
static int fetch_ajjob(struct aj_run *run, struct aj_errors *err)
{
	if (fetch_object(run, err))
		return -1;
	run->s.held = has_finalizer(run->v.object, run->runner->finalizer);
	run->s.have |= AJ_NEED_AJJOB;
	return 0;
}

/* --- resolve and build --- */

/* The AjJob's problems as the build error (s.build_error). */
static void build_failed(struct aj_run *run, const struct aj_errors *problems)
{
	aj_errors_format_line(problems, &run->build_msg);
	run->s.build_error = run->build_msg.failed ? "invalid template (message too long)"
						   : aj_buf_cstr(&run->build_msg);
}

/* --- place --- */

/* the label of a placement AjJob's objects: which attempt they are (placement.md) */
#define AJ_ATTEMPT_LABEL AJ_AJJOB_GROUP "/attempt"
/* how often an AjJob that no candidate can start now is looked at again */
#define AJ_PLACE_WAIT 10.0

/*
 * status.placement of rows (rank order) as aj_place_status_json() writes
 * it (the candidates, the choice, max_wait), with the attempts before
 * (had) and the new one.
 */
static cJSON *placement_status(const struct aj_run *run, const struct aj_place_row *rows,
			       size_t n, const char *chosen, const cJSON *had, long max_wait)
{
	cJSON *pl = aj_place_status_json(rows, n, chosen, max_wait), *list, *a;

	if (!pl)
		return NULL;
	if (!(list = had ? cJSON_Duplicate(had, 1) : cJSON_CreateArray()) ||
	    !cJSON_AddItemToObject(pl, "attempts", list)) {
		cJSON_Delete(list);
		goto oom;
	}
	if (chosen) {
		if (!(a = cJSON_CreateObject()) || !cJSON_AddItemToArray(list, a)) {
			cJSON_Delete(a);
			goto oom;
		}
		if (!cJSON_AddStringToObject(a, "candidate", chosen) ||
		    !cJSON_AddStringToObject(a, "submitted", run->rep.now) ||
		    !cJSON_AddStringToObject(a, "outcome", "Submitted") ||
		    (rows[0].gpus > 0 && !cJSON_AddNumberToObject(a, "gpus", (double)rows[0].gpus)))
			goto oom;
	}
	return pl;
oom:
	cJSON_Delete(pl);
	return NULL;
}

/* Did an attempt on candidate `name` end given up (fail-over)? */
static int gave_up(const cJSON *attempts, const char *name)
{
	const cJSON *a;

	cJSON_ArrayForEach(a, attempts) {
		const char *c = aj_json_str(a, "candidate"), *o = aj_json_str(a, "outcome");

		if (c && o && !strcmp(c, name) && !strcmp(o, "GaveUp"))
			return 1;
	}
	return 0;
}

/*
 * The candidate to run: the one status.placement chose (a restarted
 * controller keeps it), else the ranking's pick (aj_place_pick(); none:
 * run->placing_wait, it waits unplaced). 0, 1 (problems), -1.
 */
static int place(struct aj_run *run, const struct aj_pipeline_in *in, struct aj_errors *problems)
{
	const cJSON *pst = aj_json_get(run->v.status, AJ_STATUS_PLACEMENT);
	const cJSON *had = aj_json_get(pst, "attempts");
	const char *chosen = aj_json_str(pst, "chosen");
	struct aj_place_row rows[AJ_PLACEMENT_MAX_CANDIDATES];
	char where[AJ_PLACEMENT_MAX_CANDIDATES][AJ_PLACE_WHERE_MAX], why[AJ_PLACEMENT_MAX_CANDIDATES][128];
	const char *why_not[AJ_PLACEMENT_MAX_CANDIDATES];
	int served[AJ_PLACEMENT_MAX_CANDIDATES];
	struct aj_build_ctx ctx = { run->v.name, run->v.ns, run->v.uid, run->v.name, AJ_API_VERSION, 0 };
	struct aj_candidates c;
	size_t i, pick = AJ_PLACEMENT_MAX_CANDIDATES;
	int ret = 1;

	aj_candidates_init(&c);
	if (aj_candidates_load(in, &run->pl.tpl, &c, problems))
		goto out;
	if (chosen) {
		for (i = 0; i < c.nr && pick == AJ_PLACEMENT_MAX_CANDIDATES; i++)
			if (c.items[i].ok && !strcmp(c.items[i].name, chosen))
				pick = i;
		if (pick == AJ_PLACEMENT_MAX_CANDIDATES) {
			aj_errors_add(problems, NULL, "the chosen candidate %s is no longer valid", chosen);
			goto out;
		}
		run->attempt = cJSON_GetArraySize(aj_json_get(pst, "attempts"));
		run->attempt = run->attempt > 0 ? run->attempt : 1;
	} else {
		if (!run->r->placer) {
			aj_errors_add(problems, NULL, "this controller does not place AjJobs");
			goto out;
		}
		for (i = 0; i < c.nr; i++) {
			const struct aj_runner *rn = c.items[i].ok ?
				aj_runner_for(c.items[i].p.spec.target.service) : NULL;

			served[i] = !c.items[i].ok || runner_on(run->r, rn);
			snprintf(why[i], sizeof(why[i]), "this controller does not serve %s%s",
				 c.items[i].ok ? c.items[i].p.spec.target.service : "",
				 rn ? " (its runner is not configured: no Azure workspace)" : "");
			if (gave_up(had, c.items[i].name)) {
				served[i] = 0;
				snprintf(why[i], sizeof(why[i]),
					 "given up: it did not start within max_wait");
			}
			why_not[i] = why[i];
		}
		/* a pick is recorded and created right after this: charged (placer.h) */
		if (aj_placer_rank(run->r->placer, run->k, &c, &ctx, served, why_not,
				   run->s.now ? run->s.now : (long long)time(NULL), 1, rows, where,
				   problems)) {
			ret = -1;
			goto out;
		}
		if (aj_place_pick(rows, c.nr) < c.nr) {
			for (i = 0; i < c.nr && pick == AJ_PLACEMENT_MAX_CANDIDATES; i++)
				if (!strcmp(c.items[i].name, rows[0].name))
					pick = i;
		}
		run->placing_wait = pick == AJ_PLACEMENT_MAX_CANDIDATES;
		run->placement = placement_status(run, rows, c.nr,
						  run->placing_wait ? NULL : rows[0].name, had,
						  c.placement.max_wait);
		if (!run->placement) {
			ret = -1;
			goto out;
		}
		run->attempt = cJSON_GetArraySize(had) + 1;
		if (run->placing_wait) {
			ret = 0;
			goto out;
		}
	}
	/* the chosen candidate's pipeline is the AjJob's from here on */
	aj_pipeline_release(&run->pl);
	run->pl = c.items[pick].p;
	aj_pipeline_init(&c.items[pick].p);
	ret = 0;
out:
	if (problems->oom)
		ret = -1;
	aj_candidates_release(&c);
	return ret;
}

/*
 * Record status.placement (and status.backend, which chooses the runner
 * from now on) before anything is created: a controller killed after this
 * creates the chosen candidate's object, never another's. The AjJob the
 * server answers goes into the cache and the reconcile goes on from it.
 * 0 / -1.
 */
static int record_placement(struct aj_run *run, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_ajjobs, run->v.ns, run->v.name, "status" };
	cJSON *patch = cJSON_CreateObject(), *meta, *st, *out = NULL;
	const char *rv;
	char *copy;
	int r;

	if (!patch || !(meta = cJSON_AddObjectToObject(patch, "metadata")) ||
	    !cJSON_AddStringToObject(meta, "resourceVersion", run->rep.rv ? run->rep.rv : "") ||
	    !(st = cJSON_AddObjectToObject(patch, "status")) ||
	    (run->service && !cJSON_AddStringToObject(st, "backend", run->service)) ||
	    !cJSON_AddItemToObject(st, AJ_STATUS_PLACEMENT, run->placement)) {
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	run->placement = NULL;
	r = aj_kube_patch(run->k, &ref, AJ_KUBE_MERGE_PATCH, patch, &out, NULL, err);
	cJSON_Delete(patch);
	rv = aj_json_str(aj_json_get(out, "metadata"), "resourceVersion");
	if (!r && rv) {
		if (!(copy = aj_strdup(rv))) {
			cJSON_Delete(out);
			return aj_errors_oom(err);
		}
		aj_free(run->rep.rv);
		run->rep.rv = copy;
	}
	if (!r && cJSON_IsObject(out)) {
		aj_cache_ajjob_put(run->cache, out);   /* takes it */
		aj_ajjob_view_release(&run->v);
		if (aj_cache_ajjob_get(run->cache, run->rep.key, &run->v) != 1)
			return aj_errors_add(err, NULL, "the AjJob left the cache while it was placed");
		return 0;
	}
	cJSON_Delete(out);
	return r;
}

/* The Placed Event: the first candidate of the ranking, where and why. */
static void tell_placed(struct aj_run *run, const cJSON *placement)
{
	const cJSON *first = cJSON_GetArrayItem(aj_json_get(placement, "candidates"), 0);
	char note[512];

	snprintf(note, sizeof(note), "%s (%s, %s), rank 1 of %d: %s", aj_json_str(first, "name"),
		 aj_json_str(first, "backend"), aj_json_str(first, "where"),
		 cJSON_GetArraySize(aj_json_get(placement, "candidates")), aj_json_str(first, "reason"));
	aj_report_event(&run->rep, 0, "Placed", "Place", note, 1);
	aj_log(AJ_LOG_INFO, "placed", "ajjob", run->rep.key, "candidate",
	       aj_json_str(first, "name"), AJ_LOG_END);
}

/*
 * No candidate can start the AjJob now: its status says every reason
 * (written when they change) and it is looked at again shortly.
 */
static struct aj_action wait_unplaced(struct aj_run *run, struct aj_errors *err)
{
	static const struct aj_action retry = { AJ_ACTION_RETRY, 0, AJ_ACTION_NORMAL };
	struct aj_action again = { AJ_ACTION_AGAIN, AJ_PLACE_WAIT, AJ_ACTION_IDLE };
	const cJSON *had = aj_json_get(run->v.status, AJ_STATUS_PLACEMENT);

	if (!cJSON_Compare(had, run->placement, 1) && record_placement(run, err))
		return retry;
	return again;
}

/* --- fail over (place/failover.h) --- */

static const char *backend_of(const struct aj_run *run);
static int release(struct aj_run *run, struct aj_errors *err);

/* The placement status with the last attempt's fields set (a copy; NULL: out of memory). */
static cJSON *with_last_attempt(const cJSON *pst, const char *outcome, const char *reason,
				const char *ended)
{
	cJSON *copy = cJSON_Duplicate(pst, 1);
	cJSON *atts = cJSON_GetObjectItemCaseSensitive(copy, "attempts");
	cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);

	if (!copy || !last)
		return copy;
	/* given up: nothing is chosen until the next placement (null: the merge patch removes it) */
	if (!strcmp(outcome, "GaveUp")) {
		cJSON_DeleteItemFromObjectCaseSensitive(copy, "chosen");
		if (!cJSON_AddNullToObject(copy, "chosen")) {
			cJSON_Delete(copy);
			return NULL;
		}
	}
	cJSON_DeleteItemFromObjectCaseSensitive(last, "outcome");
	cJSON_DeleteItemFromObjectCaseSensitive(last, "reason");
	if (!cJSON_AddStringToObject(last, "outcome", outcome) ||
	    (reason && !cJSON_AddStringToObject(last, "reason", reason)) ||
	    (ended && !cJSON_AddStringToObject(last, "ended", ended))) {
		cJSON_Delete(copy);
		return NULL;
	}
	return copy;
}

/* The placement status with the last attempt kept: Running, startedDuringFailover (a copy; NULL: OOM). */
static cJSON *kept_attempt(const cJSON *pst)
{
	cJSON *copy = with_last_attempt(pst, "Running", NULL, NULL);
	cJSON *atts = cJSON_GetObjectItemCaseSensitive(copy, "attempts");
	cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);

	if (last && !cJSON_AddTrueToObject(last, "startedDuringFailover")) {
		cJSON_Delete(copy);
		return NULL;
	}
	return copy;
}

/*
 * Write status.placement (taken) and, when it gives up on its candidate,
 * clear what named that candidate's object (status.backend, its member,
 * its tasks): the next reconcile places the AjJob again. 0 / -1.
 */
static int record_failover(struct aj_run *run, cJSON *placement, int let_go, struct aj_errors *err)
{
	cJSON *keep = run->placement;
	char *service = run->service;
	int r;

	run->placement = placement;
	run->service = NULL;
	if (!placement)
		r = aj_errors_oom(err);
	else
		r = record_placement(run, err);
	cJSON_Delete(run->placement);
	run->placement = keep;
	run->service = service;
	if (r || !let_go)
		return r;
	/* a runner's hold on the AjJob goes with its attempt: the next may be another's */
	if (!run->runner->owns && run->runner->finalizer &&
	    (fetch_ajjob(run, err) || (run->s.held && release(run, err))))
		return -1;
	{
		struct aj_kube_ref ref = { &aj_res_ajjobs, run->v.ns, run->v.name, "status" };
		cJSON *patch = cJSON_CreateObject(), *st, *out = NULL;

		if (!patch || !(st = cJSON_AddObjectToObject(patch, "status")) ||
		    !cJSON_AddNullToObject(st, "backend") ||
		    !cJSON_AddNullToObject(st, run->runner->status_member) ||
		    !cJSON_AddNullToObject(st, "tasks") || !cJSON_AddNullToObject(st, "tasksSummary")) {
			cJSON_Delete(patch);
			return aj_errors_oom(err);
		}
		r = aj_kube_patch(run->k, &ref, AJ_KUBE_MERGE_PATCH, patch, &out, NULL, err);
		cJSON_Delete(patch);
		if (!r && cJSON_IsObject(out)) {
			aj_cache_ajjob_put(run->cache, out);
			out = NULL;
		}
		cJSON_Delete(out);
		return r;
	}
}

/* Valid candidates of status.placement not given up on, `current` excluded. */
static size_t candidates_left(const cJSON *pst, const char *current)
{
	const cJSON *c, *atts = aj_json_get(pst, "attempts");
	size_t n = 0;

	cJSON_ArrayForEach(c, aj_json_get(pst, "candidates")) {
		const char *name = aj_json_str(c, "name"), *state = aj_json_str(c, "state");

		if (name && strcmp(name, current) && state && strcmp(state, "Excluded") &&
		    !gave_up(atts, name))
			n++;
	}
	return n;
}

/* Every attempt's candidate and reason, for the AjJob that fails. */
static void attempts_text(const cJSON *pst, struct aj_buf *out)
{
	const cJSON *a;
	const char *sep = "";

	aj_buf_addstr(out, "no candidate started the job within max_wait: ");
	cJSON_ArrayForEach(a, aj_json_get(pst, "attempts")) {
		const char *who = aj_json_str(a, "candidate"), *why = aj_json_str(a, "reason");

		if (!why)
			why = aj_json_str(a, "outcome");
		aj_buf_addf(out, "%s%s: %s", sep, who ? who : "?", why ? why : "?");
		sep = "; ";
	}
}

/*
 * A placed AjJob with max_wait: has its attempt waited too long? One step
 * of aj_failover_decide(). 1 when the step is the reconcile's (*a set),
 * 0 when the runner goes on (*after: when to look again, 0 never).
 * A cluster runner's cancel is a delete, which a start does not undo, so
 * an attempt being deleted counts as not started; a runner whose job lives
 * elsewhere (Azure) says how its attempt stands (runner->attempt) from a
 * fresh look, and one that ended on its own while being cancelled is kept
 * (startedDuringFailover).
 */
static int failover(struct aj_run *run, struct aj_action *a, double *after, struct aj_errors *err)
{
	static const struct aj_action retry = { AJ_ACTION_RETRY, 0, AJ_ACTION_NORMAL };
	const cJSON *pst = aj_json_get(run->v.status, AJ_STATUS_PLACEMENT);
	const cJSON *atts = aj_json_get(pst, "attempts");
	const cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
	const char *chosen = aj_json_str(pst, "chosen"), *outcome = aj_json_str(last, "outcome");
	struct aj_failover_in in;
	struct aj_failover_out out;
	struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
	char why[128];
	int cancelling = outcome && !strcmp(outcome, "Cancelling");

	*after = 0;
	memset(&in, 0, sizeof(in));
	in.max_wait = (long)aj_json_whole(aj_json_get(pst, "maxWaitSeconds"), 1e9, 0);
	if (!chosen || !last || !in.max_wait || (!run->runner->owns && !run->runner->attempt))
		return 0;
	in.now = (double)run->s.now;
	in.submitted = (double)aj_timestamp_parse(aj_json_str(last, "submitted"), 0);
	in.cancelling = cancelling;
	if (run->runner->owns) {
		in.started = !cancelling && run->v.has_phase && aj_phase_rank(run->v.phase) >= 2;
		in.gone = !run->s.exists;
	} else if (!cancelling && !run->s.submitted) {
		return 0;   /* still being submitted: the runner's */
	} else if (run->runner->observe(run, run->runner->attempt_needs, &run->s, err)) {
		*a = retry;
		return 1;
	} else {
		/* read now: an attempt that started since the last poll is not cancelled */
		run->runner->attempt(&run->s, cancelling, &in.started, &in.gone);
	}
	in.left = candidates_left(pst, chosen);
	aj_failover_decide(&in, &out);
	snprintf(why, sizeof(why), "it did not start within max_wait (%ld s)", in.max_wait);
	switch (out.step) {
	case AJ_FAILOVER_KEEP:
		/* once: kept, no longer being cancelled; its outcome follows its job again (status.c) */
		if (cancelling && record_failover(run, kept_attempt(pst), 0, err)) {
			*a = retry;
			return 1;
		}
		return 0;
	case AJ_FAILOVER_NONE:
		*after = out.again_after;
		return 0;
	case AJ_FAILOVER_CANCEL:
		if (record_failover(run, with_last_attempt(pst, "Cancelling", why, NULL), 0, err) ||
		    run->runner->cancel(run, err)) {
			*a = retry;
			return 1;
		}
		aj_report_event(&run->rep, 0, "FailingOver", "Cancel", why, 0);
		*a = (struct aj_action){ AJ_ACTION_AGAIN, AJ_FAILOVER_RECHECK, AJ_ACTION_IDLE };
		return 1;
	case AJ_FAILOVER_WAIT_GONE:
		*a = (struct aj_action){ AJ_ACTION_AGAIN, out.again_after, AJ_ACTION_IDLE };
		return 1;
	case AJ_FAILOVER_PLACE:
		/* confirmed gone: place again among the rest, from the top */
		if (record_failover(run, with_last_attempt(pst, "GaveUp", why, run->rep.now), 1, err)) {
			*a = retry;
			return 1;
		}
		aj_report_event(&run->rep, 0, "FailingOver", "Place", "its object is gone; placing among the rest", 0);
		*a = (struct aj_action){ AJ_ACTION_AGAIN, 0, AJ_ACTION_NORMAL };
		return 1;
	case AJ_FAILOVER_GIVE_UP:
		break;
	}
	{
		cJSON *done = with_last_attempt(pst, "GaveUp", why, run->rep.now);

		if (record_failover(run, done, 0, err)) {
			*a = retry;
			return 1;
		}
		attempts_text(aj_json_get(run->v.status, AJ_STATUS_PLACEMENT), &msg);
		*a = aj_report_fail(&run->rep, run->service ? run->service : backend_of(run),
				    "PlacementFailed", "Place", msg.failed ? why : aj_buf_cstr(&msg),
				    err) ? retry : (struct aj_action){ AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL };
		aj_buf_release(&msg);
		return 1;
	}
}

/*
 * The pipeline, on the AjJob's bundle chained with the namespace's
 * AjTemplates: resolve, JobSpec, the backend's prepare, validate and permit,
 * the code digest. 0, 1 (problems), -1 (OOM).
 */
static int load(struct aj_run *run, struct aj_errors *problems)
{
	struct aj_bundle b;
	struct aj_source templates, chain;
	struct aj_node *specnode = NULL;
	struct aj_buf origin = AJ_BUF_INIT(AJ_BUF_SMALL);
	int ret = 1, have_chain = 0;

	aj_bundle_init(&b);
	if (aj_buf_addf(&origin, "AjJob %s", run->rep.key))
		goto oom;
	if (aj_node_from_cjson(cJSON_GetObjectItemCaseSensitive(run->v.object, "spec"),
			       aj_buf_cstr(&origin), &specnode, problems) ||
	    aj_bundle_read(&b, specnode, aj_buf_cstr(&origin), problems))
		goto out;
	if (aj_cache_template_source(run->cache, run->v.ns, &templates, problems))
		goto oom;
	/* The chain owns both sources from here on. */
	if (aj_source_chain_init(&chain, &b.source, &templates))
		goto oom;
	b.has_source = 0;
	have_chain = 1;
	{
		/* every AjJob is checked: no privileged namespaces set permits none ("") */
		const char *permitted = run->r->privileged_namespaces ? run->r->privileged_namespaces : "";
		struct aj_pipeline_in in = { &chain, b.leaf, &b.args,
					     (const char *const *)b.command.items, b.command.nr,
					     b.code_digest, run->v.ns, permitted };

		int p = 0;

		if (aj_pipeline_resolve(&in, &run->pl, problems))
			goto out;
		if (aj_placement_declared(run->pl.tpl.config)) {
			if ((p = place(run, &in, problems)) < 0)
				goto oom;
		} else if (aj_pipeline_load(&in, &run->pl, problems)) {
			goto out;
		}
		if (p || run->placing_wait) {
			ret = p;
			goto out;
		}
	}
	if (!(run->service = aj_strdup(run->pl.spec.target.service)))
		goto oom;
	ret = 0;
	goto out;
oom:
	ret = -1;
out:
	if (problems->oom)
		ret = -1;
	if (have_chain)
		aj_source_release(&chain);
	aj_bundle_release(&b);
	aj_node_free(specnode);
	aj_buf_release(&origin);
	return ret;
}

/* The AjJob resolved once per reconcile (its object read first). 0, 1 (problems: build_error), -1. */
static int resolve(struct aj_run *run, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	int b;

	if (run->loaded)
		return run->s.build_error ? 1 : 0;
	if (fetch_object(run, err))
		return -1;
	b = load(run, &problems);
	run->loaded = b >= 0;
	if (b > 0)
		build_failed(run, &problems);
	aj_errors_release(&problems);
	return b < 0 ? aj_errors_oom(err) : b;
}

/* The runner's objects, beside the AjJob. 0, 1 (problems), -1. */
static int build_objects(struct aj_run *run, struct aj_errors *problems)
{
	const struct aj_jobspec *spec = &run->pl.spec;
	/* what a runner builds outside the cluster is named after the AjJob */
	struct aj_build_ctx ctx = { run->runner->owns ? run->job : run->v.name, run->v.ns,
				    run->v.uid, run->v.name, AJ_API_VERSION, 0 };

	if (run->runner->owns && spec->target.namespace_ && strcmp(spec->target.namespace_, run->v.ns)) {
		struct aj_where w = { NULL, 0, 0, "config.target.namespace" };

		aj_errors_add(problems, &w, "\"%s\" differs from the AjJob's namespace \"%s\": "
			      "the %s is created beside its AjJob", spec->target.namespace_,
			      run->v.ns, run->runner->kind);
		return 1;
	}
	if (aj_pipeline_build(&run->pl, &ctx, &run->objects, problems))
		return problems->oom ? -1 : 1;
	/* an Azure job body has no metadata: its attempt is in the job's name (azure.h) */
	if (run->attempt > 0 && run->runner->owns) {
		/* which attempt the object is: a restarted controller adopts it, never a second */
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(run->objects, 0),
							       "metadata");
		cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
		char n[16];

		snprintf(n, sizeof(n), "%d", run->attempt);
		if (!labels)
			labels = cJSON_AddObjectToObject(meta, "labels");
		cJSON_DeleteItemFromObjectCaseSensitive(labels, AJ_ATTEMPT_LABEL);
		if (!labels || !cJSON_AddStringToObject(labels, AJ_ATTEMPT_LABEL, n))
			return aj_errors_oom(problems), -1;
	}
	return 0;
}

/* AJ_NEED_BUILD: read the AjJob (the cache drops it once submitted), resolve it and build. 0 / -1. */
static int build(struct aj_run *run, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	int b;

	if (fetch_ajjob(run, err))
		return -1;
	run->s.have |= AJ_NEED_BUILD;
	b = resolve(run, err);
	if (b)
		return b < 0 ? -1 : 0;
	if (aj_runner_for(run->service) != run->runner) {
		/* its status named another runner than its spec does: edited by hand */
		aj_errors_add(&problems, NULL, "backend %s is not the one its status names (%s)",
			      run->service, run->runner->name);
		b = 1;
	} else {
		b = build_objects(run, &problems);
	}
	if (b > 0)
		build_failed(run, &problems);
	aj_errors_release(&problems);
	return b < 0 ? aj_errors_oom(err) : 0;
}

/* --- choose --- */

/*
 * The runner whose object the cache shows this AjJob owning (created in an
 * earlier turn, its status not written yet): 1 with run->runner set, 0
 * none, -1 (OOM).
 */
static int owner_in_cache(struct aj_run *run)
{
	struct aj_owned_view ov;
	char name[64], key[384];
	size_t i;
	int found, ours;

	for (i = 0; i < aj_runners_nr; i++) {
		const struct aj_runner *rn = aj_runners[i];

		if (!rn->owns || !runner_on(run->r, rn))
			continue;
		rn->object_name(run->v.name, name, sizeof(name));
		snprintf(key, sizeof(key), "%s/%s", run->v.ns, name);
		if ((found = aj_cache_owned_get(run->cache, i, key, &ov)) < 0)
			return -1;
		ours = found && ov.owner_uid && run->v.uid && !strcmp(ov.owner_uid, run->v.uid);
		if (found)
			aj_owned_view_release(&ov);
		if (ours) {
			run->runner = rn;
			return 1;
		}
	}
	return 0;
}

/*
 * The runner of the AjJob, before anything is decided: the one of its
 * status.backend, else one whose finalizer it carries (deleted before its
 * status was written), else one whose object the cache shows it owning,
 * else the one serving the service it resolves to.
 * NULL: none of ours (run->s.build_error says why, unless it is being
 * deleted: then nothing is left to do). 0 / -1.
 */
static int choose(struct aj_run *run, struct aj_errors *err)
{
	const struct aj_runner *rn = aj_runner_for(aj_json_str(run->v.status, "backend"));
	size_t i;
	int b;

	if (runner_on(run->r, rn)) {
		run->runner = rn;
		return 0;
	}
	for (i = 0; i < aj_runners_nr; i++)
		if (runner_on(run->r, aj_runners[i]) &&
		    has_finalizer(run->v.object, aj_runners[i]->finalizer)) {
			run->runner = aj_runners[i];
			return 0;
		}
	if (run->v.deleting)
		return 0;
	if ((b = owner_in_cache(run)) != 0)
		return b < 0 ? aj_errors_oom(err) : 0;
	if ((b = resolve(run, err)))
		return b < 0 ? -1 : 0;
	if (run->placing_wait)
		return 0;
	rn = aj_runner_for(run->service);
	if (runner_on(run->r, rn)) {
		run->runner = rn;
		/* a placement just made is recorded before anything is created */
		if (run->placement) {
			cJSON *told = cJSON_Duplicate(run->placement, 1);

			if (!told || record_placement(run, err)) {
				cJSON_Delete(told);
				return told ? -1 : aj_errors_oom(err);
			}
			tell_placed(run, told);
			cJSON_Delete(told);
		}
	} else {
		aj_buf_reset(&run->build_msg);
		if (aj_buf_addf(&run->build_msg, "backend %s is not served by this controller",
				run->service))
			return aj_errors_oom(err);
		run->s.build_error = aj_buf_cstr(&run->build_msg);
	}
	return 0;
}

/* --- act --- */

/* AJ_DO_STORAGE: the Secret, before anything refers to it. 0 / -1 (OOM). */
static int write_storage(struct aj_run *run, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	char secret[AJ_STORAGE_SECRET_SIZE];
	struct aj_storage_target t = { run->rep.key, run->v.ns, secret, run->job, run->v.name,
				       run->v.uid, AJ_API_VERSION };
	time_t renew = 0;
	int s;

	run->s.done |= AJ_DO_STORAGE;
	if (aj_storage_secret_name(run->job, secret)) {
		aj_errors_add(&problems, NULL, "no storage Secret name fits %s", run->job);
		s = AJ_STORAGE_REJECTED;
	} else {
		s = aj_storage_ensure(run->r->storage, run->k, &run->pl.spec, &t, &renew, &problems);
	}
	if (s < 0) {
		aj_errors_release(&problems);
		return aj_errors_oom(err);
	}
	run->s.storage_written = (long long)renew;
	if (s != AJ_STORAGE_OK) {
		aj_errors_format_line(&problems, &run->storage_msg);
		run->s.storage_error = run->storage_msg.failed ? "the storage Secret could not be written"
							       : aj_buf_cstr(&run->storage_msg);
		run->s.storage_retry = s == AJ_STORAGE_RETRY;
		aj_log(AJ_LOG_WARN, "storage secret not written", "ajjob", run->rep.key,
		       "error", run->s.storage_error, AJ_LOG_END);
	}
	aj_errors_release(&problems);
	return 0;
}

/* The create of one object: 0 done (or there already when may_exist), -1 with ks. */
static int create_one(struct aj_run *run, const struct aj_kube_resource *res, const cJSON *obj,
		      int may_exist, struct aj_kube_status *ks, struct aj_errors *cerr)
{
	struct aj_kube_ref ref = { res, run->v.ns, NULL, NULL };

	aj_kube_status_release(ks);
	aj_kube_status_init(ks);
	if (!aj_kube_create(run->k, &ref, obj, NULL, ks, cerr))
		return 0;
	if (may_exist && ks->reason == AJ_KUBE_ALREADY_EXISTS) {
		aj_errors_release(cerr);
		return 0;
	}
	return -1;
}

/* AJ_DO_CREATE: the runner's other objects, then the owned one (objects[0]). 0 / -1 to retry. */
static int create(struct aj_run *run, struct aj_errors *err)
{
	struct aj_kube_status ks;
	struct aj_errors cerr = AJ_ERRORS_INIT;
	size_t i;
	int ret = 0, r = 0;

	run->s.done |= AJ_DO_CREATE;
	aj_kube_status_init(&ks);
	for (i = 0; !r && i < run->runner->also_nr; i++)
		r = create_one(run, run->runner->also[i], cJSON_GetArrayItem(run->objects, (int)i + 1),
			       1, &ks, &cerr);
	if (!r)
		r = create_one(run, run->runner->owns, cJSON_GetArrayItem(run->objects, 0), 0, &ks,
			       &cerr);
	if (!r) {
		run->s.create = AJ_CREATE_OK;
		log_object(run, "created");
	} else if (ks.reason == AJ_KUBE_ALREADY_EXISTS) {
		run->s.create = AJ_CREATE_EXISTS;
	} else if (aj_create_rejected(ks.code)) {
		run->s.create = AJ_CREATE_REJECTED;
		if (ks.message)
			aj_buf_addstr(&run->create_msg, ks.message);
		else
			aj_errors_format_line(&cerr, &run->create_msg);
		run->s.create_error = run->create_msg.failed ? "(message too long)"
							     : aj_buf_cstr(&run->create_msg);
	} else {
		aj_errors_splice(err, &cerr);
		ret = -1;
	}
	aj_errors_release(&cerr);
	aj_kube_status_release(&ks);
	return ret;
}

/* AJ_DO_RELEASE: the AjJob's finalizers but the runner's (read by AJ_NEED_AJJOB). 0 / -1. */
static int release(struct aj_run *run, struct aj_errors *err)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(run->v.object, "metadata"), *fin;
	cJSON *patch = cJSON_CreateObject(), *fins;
	char msg[96];

	fins = cJSON_AddArrayToObject(cJSON_AddObjectToObject(patch, "metadata"), "finalizers");
	if (!fins) {
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	cJSON_ArrayForEach(fin, cJSON_GetObjectItemCaseSensitive(meta, "finalizers")) {
		cJSON *copy;

		if (cJSON_IsString(fin) && !strcmp(fin->valuestring, run->runner->finalizer))
			continue;
		if (!(copy = cJSON_Duplicate(fin, 1)) || !cJSON_AddItemToArray(fins, copy)) {
			cJSON_Delete(copy);
			cJSON_Delete(patch);
			return aj_errors_oom(err);
		}
	}
	/* against the version read with the finalizers: another's change in between conflicts */
	aj_free(run->rep.rv);
	run->rep.rv = aj_strdup(aj_json_str(meta, "resourceVersion"));
	if (aj_run_patch_ajjob(run, patch, err))
		return -1;
	snprintf(msg, sizeof(msg), "%s job finished; finalizer removed", run->runner->name);
	aj_log(AJ_LOG_INFO, msg, "ajjob", run->rep.key, AJ_LOG_END);
	return 0;
}

/* status.backend: the service resolved, else the one the status names (its runner's), else the runner's first. */
static const char *backend_of(const struct aj_run *run)
{
	const char *b = aj_json_str(run->v.status, "backend");

	if (run->service)
		return run->service;
	if (!run->runner)
		return aj_runner_default_service();
	return aj_runner_for(b) == run->runner ? b : run->runner->services[0];
}

static void post_events(struct aj_run *run, const struct aj_plan *p, int once)
{
	size_t i;

	for (i = 0; i < p->nr_events; i++)
		if (p->events[i].once == once)
			aj_report_event(&run->rep, p->events[i].warning, p->events[i].reason,
					p->events[i].action, p->events[i].note, once);
}

/* AJ_DO_STATUS: the status, with status.<member> whole when the plan has it. 0 / -1. */
static int write_status(struct aj_run *run, const struct aj_plan *p, struct aj_errors *err)
{
	const char *name = run->runner ? run->runner->status_member : NULL;
	struct aj_status st = { p->phase, p->submitted, p->reason, p->message, backend_of(run),
				run->v.generation, name, p->job, p->storage_renew_after,
				p->retry_count, p->flags, p->unschedulable, p->tasks, p->nr_tasks,
				run->cache->whole, AJ_RUNNERS_MAX };
	cJSON *extra = NULL, *member = NULL;
	int ret;

	if (p->detail && (!(extra = cJSON_CreateObject()) || !(member = cJSON_Duplicate(p->detail, 1)) ||
			  !cJSON_AddItemToObject(extra, name, member))) {
		if (!cJSON_GetObjectItemCaseSensitive(extra, name))
			cJSON_Delete(member);
		cJSON_Delete(extra);
		return aj_errors_oom(err);
	}
	ret = aj_report_status(&run->rep, &st, extra, err);
	cJSON_Delete(extra);
	return ret;
}

/*
 * AJ_DO_EXPIRE: delete the finished AjJob (Background: the garbage
 * collector takes what it owns). Only the AjJob the cache saw goes (a
 * precondition on its uid). 1 deleted now, 0 gone already, -1 with err.
 */
static int expire(struct aj_run *run, struct aj_errors *err)
{
	const struct aj_ajjob_view *v = &run->v;
	struct aj_kube_ref ref = { &aj_res_ajjobs, v->ns, v->name, NULL };
	struct aj_kube_delete_opts o = { AJ_KUBE_PROPAGATION_BACKGROUND, v->uid, NULL };
	struct aj_kube_status ks;
	struct aj_errors derr = AJ_ERRORS_INIT;
	int ret;

	aj_kube_status_init(&ks);
	ret = aj_kube_delete(run->k, &ref, &o, NULL, &ks, &derr) ? -1 : 1;
	if (ret < 0 && (ks.reason == AJ_KUBE_NOT_FOUND || ks.reason == AJ_KUBE_CONFLICT))
		ret = 0;   /* gone already, or another AjJob took the name: nothing of ours left */
	else if (ret < 0)
		aj_errors_splice(err, &derr);
	aj_errors_release(&derr);
	aj_kube_status_release(&ks);
	if (ret > 0) {
		aj_log(AJ_LOG_INFO, "deleted after ttlSecondsAfterFinished", "ajjob", run->rep.key,
		       AJ_LOG_END);
		if (run->r->metrics)
			aj_jobmetrics_expired(run->r->metrics, aj_json_str(v->status, "backend"));
	}
	return ret;
}

/*
 * Carry out the final plan: expire, or delete, tell once-only Events, write
 * the status, tell the rest, let the AjJob go, note. 0 / -1 with err.
 */
static int act(struct aj_run *run, const struct aj_plan *p, struct aj_errors *err)
{
	struct aj_reconciler *r = run->r;
	int e;

	if (p->act & AJ_DO_EXPIRE) {
		if ((e = expire(run, err)) > 0)
			post_events(run, p, 0);
		return e < 0 ? -1 : 0;
	}
	if ((p->act & AJ_DO_DELETE) && run->runner->cancel(run, err))
		return -1;
	post_events(run, p, 1);
	if ((p->act & AJ_DO_STATUS) && write_status(run, p, err))
		return -1;
	if ((p->act & AJ_DO_STATUS) && p->job)
		log_object(run, "recorded");
	if ((p->act & AJ_DO_STATUS) && p->phase == AJ_PHASE_FAILED && !p->submitted)
		aj_log(AJ_LOG_WARN, "ajjob failed", "ajjob", run->rep.key, "reason", p->reason,
		       "message", p->message, AJ_LOG_END);
	post_events(run, p, 0);
	if ((p->act & AJ_DO_RELEASE) && release(run, err))
		return -1;
	if (p->act & AJ_DO_STORAGE_NOTE)
		aj_cache_ajjob_set_storage_due(r->cache, run->rep.key, p->storage_due);
	if (p->reason_due)
		aj_cache_ajjob_set_reason_due(r->cache, run->rep.key, p->reason_due);
	if (p->act & AJ_DO_RETRY) {
		if (run->s.storage_error)
			aj_errors_add(err, NULL, "%s", run->s.storage_error);
		else if (run->s.create == AJ_CREATE_RETRY)
			aj_errors_add(err, NULL, "%s", run->s.create_error ? run->s.create_error : "");
		else
			aj_errors_add(err, NULL, "%s %s changed while it was created; trying again",
				      run->runner->kind, run->job);
		return -1;
	}
	return 0;
}

/* Fetch one need or take one step of a plan that is not final. 0 / -1. */
static int step(struct aj_run *run, const struct aj_plan *p, struct aj_errors *err)
{
	if (p->need & AJ_NEED_BUILD)
		return build(run, err);
	if (p->need & AJ_NEED_OBJECT)
		return get_object(run, err);
	if (p->need & AJ_NEED_AJJOB)
		return fetch_ajjob(run, err);
	if (p->need)
		return run->runner->observe(run, p->need, &run->s, err);
	if (p->act & AJ_DO_STORAGE)
		return write_storage(run, err);
	if (p->act & AJ_DO_CREATE)
		return create(run, err);
	return run->runner->act(run, p->act, &run->s, err);
}

/* Decide, fetch or step, decide again, until the plan is final; act on it. */
static struct aj_action rounds(struct aj_run *run,
			       void (*decide)(const struct aj_seen *s, struct aj_plan *p),
			       struct aj_errors *err)
{
	static const struct aj_action retry = { AJ_ACTION_RETRY, 0, AJ_ACTION_NORMAL };
	struct aj_plan plan;
	int round;

	for (round = 0; round < AJ_DECIDE_ROUNDS; round++) {
		decide(&run->s, &plan);
		if (!plan.need && !(plan.act & AJ_DO_STEPS))
			return act(run, &plan, err) ? retry : aj_plan_action(&plan);
		if (step(run, &plan, err))
			return retry;
	}
	aj_errors_add(err, NULL, "no decision after %d rounds", round);
	return retry;
}

struct aj_action aj_reconcile(struct aj_reconciler *r, struct aj_kube *k, const char *key,
			      struct aj_errors *err)
{
	static const struct aj_action done = { AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL };
	static const struct aj_action retry = { AJ_ACTION_RETRY, 0, AJ_ACTION_NORMAL };
	struct aj_action a = done;
	struct aj_run run;
	int found;

	memset(&run, 0, sizeof(run));
	run.r = r;
	run.cache = r->cache;
	run.k = k;
	run.build_msg = (struct aj_buf)AJ_BUF_INIT(AJ_BUF_SMALL);
	run.storage_msg = (struct aj_buf)AJ_BUF_INIT(AJ_BUF_SMALL);
	run.create_msg = (struct aj_buf)AJ_BUF_INIT(AJ_BUF_SMALL);
	aj_pipeline_init(&run.pl);
	found = aj_cache_ajjob_get(r->cache, key, &run.v);
	if (found < 0) {
		aj_errors_oom(err);
		return retry;
	}
	/*
	 * Gone: kube-controller-manager's garbage collector follows our owner
	 * references to what the AjJob owns, and on from there.
	 */
	if (!found)
		goto out;
	if (aj_report_init(&run.rep, k, &run.v, r->instance)) {
		aj_errors_oom(err);
		a = retry;
		goto out;
	}
	run.rep.metrics = r->metrics;
	run.rep.cache = r->cache;
	/* finished, of any backend: only its time to live is left */
	if (!run.v.deleting && run.v.has_phase && aj_phase_terminal(run.v.phase) &&
	    run.v.observed_generation == run.v.generation) {
		observe_ajjob(&run);
		a = rounds(&run, aj_decide_finished, err);
		goto out;
	}
	if (choose(&run, err)) {
		a = retry;
		goto out;
	}
	if (run.placing_wait) {
		a = wait_unplaced(&run, err);
		goto out;
	}
	/* a deleted AjJob is its runner's while its finalizer holds it */
	if (run.v.deleting && (!run.runner || !run.runner->finalizer))
		goto out;
	run.config = run.runner ? r->runner_config[aj_runner_slot(run.runner)] : NULL;
	observe_ajjob(&run);
	if (observe_object(&run, err)) {
		a = retry;
		goto out;
	}
	if (run.runner && !run.v.deleting && !run.v.cancel) {
		double after;

		if (failover(&run, &a, &after, err))
			goto out;
		a = rounds(&run, run.runner->decide, err);
		/* back when max_wait is due, whatever the runner asked */
		if (after > 0 && (a.kind == AJ_ACTION_DONE ||
				  (a.kind == AJ_ACTION_AGAIN && a.after > after)))
			a = (struct aj_action){ AJ_ACTION_AGAIN, after, AJ_ACTION_IDLE };
		goto out;
	}
	a = rounds(&run, run.runner ? run.runner->decide : aj_decide_unresolved, err);
out:
	aj_report_release(&run.rep);
	if (run.scratch.state_free)
		run.scratch.state_free(run.scratch.state);
	cJSON_Delete(run.scratch.keep);
	cJSON_Delete(run.objects);
	cJSON_Delete(run.placement);
	aj_free(run.service);
	aj_pipeline_release(&run.pl);
	aj_owned_view_release(&run.ov);
	aj_buf_release(&run.build_msg);
	aj_buf_release(&run.storage_msg);
	aj_buf_release(&run.create_msg);
	aj_ajjob_view_release(&run.v);
	return a;
}

void aj_reconciler_init(struct aj_reconciler *r, struct aj_cache *cache, const char *instance)
{
	memset(r, 0, sizeof(*r));
	r->cache = cache;
	r->instance = instance;
}
