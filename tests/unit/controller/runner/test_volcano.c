/*
 * The volcano runner (controller/runner/volcano.c): decide() on every
 * observation, its submission and storage steps, and its pure readings of
 * pods, PodGroups, Events and Volcano Jobs.
 */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cache.h"
#include "runner/volcano.h"

/*
 * The volcano runner's decide(): every phase transition, submission,
 * adoption, conflicts, cancellation and storage renewal, one row each,
 * with the expected plan written out by hand.
 */

#define R AJ_STATUS_FLAG(AJ_COND_RESTARTING)
#define S AJ_STATUS_FLAG(AJ_COND_SUSPENDED)
#define U AJ_STATUS_FLAG(AJ_COND_UNSCHEDULABLE)
#define FAIL AJ_VOLCANO_NEED_FAILURE
#define WHY AJ_VOLCANO_NEED_REASON
#define PODS AJ_NEED_PODS
#define BUILD AJ_NEED_BUILD
#define OBJECT AJ_NEED_OBJECT

static void decide(const struct aj_seen *s, struct aj_plan *p)
{
	aj_runner_volcano.decide(s, p);
}

/* One observation of a submitted AjJob and the plan expected for it. */
struct row {
	const char *name;
	struct aj_seen seen;
	unsigned need;
	int delete_job;
	enum aj_phase phase;
	const char *reason;
	unsigned flags;
	const char *message;
	const char *events;        /* "Reason[!] Reason..." in order; ! marks told-once */
	long long requeue_after, reason_due;
};

/* A submitted AjJob whose Volcano Job is always "t", ours; no storage Secrets. */
#define SEEN_AT(now_, at_, due_, prev_, pflags, preason, cancel_, exists_, deleting_, phase_,   \
		retries, max)                                                                   \
	{ .now = now_, .ajjob = "t", .prev = prev_, .prev_flags = pflags,                     \
	  .prev_reason = preason, .cancel = cancel_, .submitted = 1, .submitted_at = at_,       \
	  .reason_due = due_, .storage_due = AJ_CACHE_DUE_UNKNOWN, .job = "t", .uid = "v1",     \
	  .exists = exists_, .deleting = deleting_, .ours = exists_,                            \
	  .o = { phase_, 0, { retries, max } } }
#define SEEN(...) SEEN_AT(1000, 990, 0, __VA_ARGS__)

static const struct row rows[] = {
	/* --- mirrored phases --- */
	{ "running", SEEN(AJ_PHASE_SUBMITTED, 0, NULL, 0, 1, 0, "Running", 0, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobRunning", 0, "Volcano Job t is Running",
	  "VolcanoJobRunning", 0, 0 },
	{ "running again: no second event", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Running", 0, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobRunning", 0, "Volcano Job t is Running", "", 0, 0 },
	{ "completing is still running", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Completing", 0, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobCompleting", 0, "Volcano Job t is Completing", "", 0, 0 },
	{ "completed", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Completed", 0, 3),
	  0, 0, AJ_PHASE_SUCCEEDED, "VolcanoJobCompleted", 0,
	  "Volcano Job t is Completed: every pod succeeded", "VolcanoJobCompleted!", 0, 0 },
	{ "completed after a restart", SEEN(AJ_PHASE_RUNNING, R, NULL, 0, 1, 0, "Completed", 1, 3),
	  0, 0, AJ_PHASE_SUCCEEDED, "VolcanoJobCompleted", 0,
	  "Volcano Job t is Completed: every pod succeeded after 1 restart", "VolcanoJobCompleted!",
	  0, 0 },
	{ "failed: the pods are read first", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Failed", 3, 3),
	  FAIL, 0, AJ_PHASE_FAILED, NULL, 0, "", "", 0, 0 },
	{ "terminated by a command", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Terminated", 0, 3),
	  0, 0, AJ_PHASE_FAILED, "VolcanoJobTerminated", 0,
	  "Volcano Job t was terminated (a TerminateJob Command)", "VolcanoJobTerminated!", 0, 0 },
	{ "terminating is not the end yet", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Terminating", 0, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobTerminating", 0,
	  "Volcano Job t is Terminating (a TerminateJob Command)", "", 0, 0 },
	{ "deleted behind our back", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 0, 0, NULL, 0, 0),
	  0, 0, AJ_PHASE_FAILED, "VolcanoJobDeleted", 0,
	  "Volcano Job t was deleted before it finished", "VolcanoJobDeleted!", 0, 0 },

	/* --- restarts never send the phase back --- */
	{ "restarting", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Restarting", 1, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobRestarting", R,
	  "Volcano Job t is Restarting: restart 1 of at most 3", "VolcanoJobRestarting", 0, 0 },
	{ "pending after running", SEEN(AJ_PHASE_RUNNING, R, NULL, 0, 1, 0, "Pending", 1, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobRestarting", R,
	  "Volcano Job t is Pending: restart 1 of at most 3", "", 0, 0 },
	{ "running again after the restart", SEEN(AJ_PHASE_RUNNING, R, NULL, 0, 1, 0, "Running", 1, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobRunning", 0, "Volcano Job t is Running", "", 0, 0 },

	/* --- abort and resume: parked, never cancelled --- */
	{ "aborting a running job", SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Aborting", 0, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobAborted", S,
	  "Volcano Job t is Aborting (an AbortJob Command): a ResumeJob Command runs it again",
	  "VolcanoJobAborted", 0, 0 },
	{ "aborted", SEEN(AJ_PHASE_RUNNING, S, NULL, 0, 1, 0, "Aborted", 0, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobAborted", S,
	  "Volcano Job t is Aborted (an AbortJob Command): a ResumeJob Command runs it again", "",
	  0, 0 },
	{ "aborted before it ran", SEEN(AJ_PHASE_SUBMITTED, 0, NULL, 0, 1, 0, "Aborted", 0, 3),
	  0, 0, AJ_PHASE_SUBMITTED, "VolcanoJobAborted", S,
	  "Volcano Job t is Aborted (an AbortJob Command): a ResumeJob Command runs it again",
	  "VolcanoJobAborted", 0, 0 },
	{ "resumed (Volcano restarts it)", SEEN(AJ_PHASE_RUNNING, S, NULL, 0, 1, 0, "Restarting", 1, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobRestarting", R,
	  "Volcano Job t is Restarting: restart 1 of at most 3",
	  "VolcanoJobRestarting VolcanoJobResumed", 0, 0 },
	{ "resumed before it ever ran", SEEN(AJ_PHASE_SUBMITTED, S, NULL, 0, 1, 0, "Restarting", 1, 3),
	  0, 0, AJ_PHASE_RUNNING, "VolcanoJobRestarting", R,
	  "Volcano Job t is Restarting: restart 1 of at most 3",
	  "VolcanoJobRestarting VolcanoJobResumed VolcanoJobRunning", 0, 0 },

	/* --- cancel: Cancelling until the Job and its pods are gone --- */
	{ "cancel: delete the job", SEEN(AJ_PHASE_RUNNING, 0, NULL, 1, 1, 0, "Running", 0, 3),
	  0, 1, AJ_PHASE_CANCELLING, "Cancelling", 0,
	  "cancelling (aj.dev/cancel): Volcano Job t is being deleted with its pods", "Cancelling",
	  0, 0 },
	{ "cancel: deletion under way", SEEN(AJ_PHASE_CANCELLING, 0, NULL, 1, 1, 1, "Running", 0, 3),
	  0, 0, AJ_PHASE_CANCELLING, "Cancelling", 0,
	  "cancelling (aj.dev/cancel): Volcano Job t is being deleted with its pods", "", 0, 0 },
	{ "cancel: the job is gone, the pods are counted",
	  SEEN(AJ_PHASE_CANCELLING, 0, NULL, 1, 0, 0, NULL, 0, 0),
	  PODS, 0, AJ_PHASE_CANCELLING, "Cancelling", 0, "", "", 0, 0 },
	{ "cancel of an ended job keeps its outcome", SEEN(AJ_PHASE_RUNNING, 0, NULL, 1, 1, 0, "Completed", 0, 3),
	  0, 0, AJ_PHASE_SUCCEEDED, "VolcanoJobCompleted", 0,
	  "Volcano Job t is Completed: every pod succeeded", "VolcanoJobCompleted!", 0, 0 },
	{ "cancelling goes on without the annotation", SEEN(AJ_PHASE_CANCELLING, 0, NULL, 0, 1, 1, "Completed", 0, 3),
	  0, 0, AJ_PHASE_CANCELLING, "Cancelling", 0,
	  "cancelling (aj.dev/cancel): Volcano Job t is being deleted with its pods", "", 0, 0 },
	{ "cancel of a suspended job", SEEN(AJ_PHASE_RUNNING, S, NULL, 1, 1, 0, "Aborted", 0, 3),
	  0, 1, AJ_PHASE_CANCELLING, "Cancelling", 0,
	  "cancelling (aj.dev/cancel): Volcano Job t is being deleted with its pods", "Cancelling",
	  0, 0 },

	/* --- waiting: the reason after a grace, then now and then --- */
	{ "pending, too early to ask", SEEN_AT(1000, 998, 0, AJ_PHASE_SUBMITTED, 0, NULL, 0, 1, 0, "Pending", 0, 3),
	  0, 0, AJ_PHASE_SUBMITTED, "VolcanoJobPending", 0, "Volcano Job t is Pending", "", 3, 0 },
	{ "pending, time to ask", SEEN_AT(1000, 990, 995, AJ_PHASE_SUBMITTED, 0, NULL, 0, 1, 0, "Pending", 0, 3),
	  WHY, 0, AJ_PHASE_SUBMITTED, "VolcanoJobPending", 0, "", "", 0, 0 },
	{ "no phase yet is pending", SEEN_AT(1000, 990, 995, AJ_PHASE_SUBMITTED, 0, NULL, 0, 1, 0, NULL, 0, 3),
	  WHY, 0, AJ_PHASE_SUBMITTED, "VolcanoJobPending", 0, "", "", 0, 0 },
	{ "submitted before the controller started: asked on a timed turn",
	  SEEN(AJ_PHASE_SUBMITTED, 0, NULL, 0, 1, 0, "Pending", 0, 3),
	  0, 0, AJ_PHASE_SUBMITTED, "VolcanoJobPending", 0, "Volcano Job t is Pending", "", 1, 1001 },
	{ "...and the reason it had stays until then",
	  SEEN(AJ_PHASE_SUBMITTED, U, "queue resource quota insufficient", 0, 1, 0, "Pending", 0, 3),
	  0, 0, AJ_PHASE_SUBMITTED, "Unschedulable", U,
	  "Volcano Job t is Pending: queue resource quota insufficient", "", 1, 1001 },
	{ "an empty message is no reason", SEEN_AT(1000, 900, 1010, AJ_PHASE_SUBMITTED, 0, "", 0, 1, 0, "Pending", 0, 3),
	  0, 0, AJ_PHASE_SUBMITTED, "VolcanoJobPending", 0, "Volcano Job t is Pending", "", 10, 0 },
	{ "asked lately: the reason known stays", SEEN_AT(1000, 900, 1010, AJ_PHASE_SUBMITTED, U,
						   "queue resource quota insufficient", 0, 1, 0, "Pending", 0, 3),
	  0, 0, AJ_PHASE_SUBMITTED, "Unschedulable", U,
	  "Volcano Job t is Pending: queue resource quota insufficient", "", 10, 0 },
};

static void every_observation_gives_its_plan(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct aj_plan p;
		int del;

		decide(&r->seen, &p);
		if (p.need != r->need)
			fail_msg("%s: need %u, expected %u", r->name, p.need, r->need);
		if (p.need)
			continue;
		del = !!(p.act & AJ_DO_DELETE);
		if (!(p.act & AJ_DO_STATUS) || !p.submitted || del != r->delete_job || p.phase != r->phase || p.flags != r->flags ||
		    strcmp(p.reason, r->reason) || strcmp(p.message, r->message) ||
		    p.requeue_after != r->requeue_after || p.reason_due != r->reason_due)
			fail_msg("%s: got delete %d phase %s reason %s flags %u requeue %g due %lld "
				 "message \"%s\"", r->name, del, aj_phase_name(p.phase),
				 p.reason, p.flags, p.requeue_after, p.reason_due, p.message);
		/* a look-up of the scheduler's reason is a courtesy: it waits at the idle level */
		if (p.requeue_after > 0 && !p.requeue_idle)
			fail_msg("%s: requeue at a level above idle", r->name);
		aj_test_plan_events(r->name, r->events, &p);
	}
}

/*
 * A failed job's message: the failed pod the list shows, else the failure the
 * pod watch recorded (Volcano deleted the pod before the list), else none.
 */
static void a_recorded_pod_failure_names_the_pod_gone(void **state)
{
	static const struct {
		const char *name, *listed, *recorded, *message;
	} failed[] = {
		{ "listed only", "task worker, pod t-worker-1: exit code 3 (Error)", NULL,
		  "Volcano Job t is Failed after 2 restarts: task worker, pod t-worker-1: exit code 3 (Error)" },
		{ "recorded only: the pod is gone", NULL, "task worker, pod t-worker-0: exit code 3 (Error)",
		  "Volcano Job t is Failed after 2 restarts: task worker, pod t-worker-0: exit code 3 (Error)" },
		{ "the list wins", "task master, pod t-master-0: exit code 1 (Error)",
		  "task worker, pod t-worker-0: exit code 3 (Error)",
		  "Volcano Job t is Failed after 2 restarts: task master, pod t-master-0: exit code 1 (Error)" },
		{ "neither", NULL, NULL,
		  "Volcano Job t is Failed after 2 restarts (no failed pod is left to name)" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(failed) / sizeof(failed[0]); i++) {
		struct aj_seen s = SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Failed", 2, 3);
		struct aj_plan p;

		s.have = FAIL | PODS;
		s.failure = failed[i].listed;
		s.pod_failure = failed[i].recorded;
		decide(&s, &p);
		if (p.need || p.phase != AJ_PHASE_FAILED || strcmp(p.reason, "VolcanoJobFailed") ||
		    strcmp(p.message, failed[i].message) || p.nr_events != 1 ||
		    strcmp(p.events[0].note, failed[i].message))
			fail_msg("%s: need %u phase %s reason %s message \"%s\"", failed[i].name, p.need,
				 aj_phase_name(p.phase), p.reason, p.message);
	}
}

/* The second decision, once the plan's needs were fetched. */
static void fetched_facts_finish_the_plan(void **state)
{
	struct aj_seen s = SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Failed", 3, 3);
	struct aj_plan p;

	(void)state;
	s.have = FAIL | PODS;
	s.failure = "task worker, pod t-worker-1: exit code 3 (Error)";
	decide(&s, &p);
	assert_int_equal(p.need, 0);
	assert_int_equal(p.phase, AJ_PHASE_FAILED);
	assert_string_equal(p.reason, "VolcanoJobFailed");
	assert_string_equal(p.message, "Volcano Job t is Failed after 3 restarts: "
				       "task worker, pod t-worker-1: exit code 3 (Error)");
	assert_int_equal(p.nr_events, 1);
	assert_true(p.events[0].once);
	assert_true(p.events[0].warning);

	s.failure = NULL;
	s.o.n[AJ_VOLCANO_RETRIES] = 0;
	decide(&s, &p);
	assert_string_equal(p.message, "Volcano Job t is Failed (no failed pod is left to name)");

	/* cancel: pods left come back later; none left is Cancelled, told once */
	s = (struct aj_seen)SEEN(AJ_PHASE_CANCELLING, 0, NULL, 1, 0, 0, NULL, 0, 0);
	s.have = PODS | FAIL;
	s.pods_left = 2;
	decide(&s, &p);
	assert_int_equal(p.phase, AJ_PHASE_CANCELLING);
	assert_string_equal(p.message, "cancelling (aj.dev/cancel): 2 pods of Volcano Job t still there");
	assert_int_equal(p.requeue_after, 2);
	assert_true(p.requeue_idle);   /* a recheck waits behind every create and status write */
	assert_int_equal(p.nr_events, 0);
	s.pods_left = 0;
	decide(&s, &p);
	assert_int_equal(p.phase, AJ_PHASE_CANCELLED);
	assert_string_equal(p.reason, "Cancelled");
	assert_string_equal(p.message, "cancelled by request (aj.dev/cancel)");
	assert_int_equal(p.nr_events, 1);
	assert_string_equal(p.events[0].reason, "Cancelled");
	assert_string_equal(p.events[0].note, "cancelled: Volcano Job t and its pods are gone");
	assert_true(p.events[0].once);

	/* the scheduler's reason: Unschedulable, one Warning, asked again later */
	s = (struct aj_seen)SEEN(AJ_PHASE_SUBMITTED, 0, NULL, 0, 1, 0, "Pending", 0, 3);
	s.have = WHY;
	s.reason = "resource in cluster is overused: overused cpu, overused nvidia.com/gpu";
	decide(&s, &p);
	assert_int_equal(p.phase, AJ_PHASE_SUBMITTED);
	assert_string_equal(p.reason, "Unschedulable");
	assert_int_equal(p.flags, U);
	assert_string_equal(p.unschedulable, s.reason);
	assert_string_equal(p.message, "Volcano Job t is Pending: resource in cluster is overused: "
				       "overused cpu, overused nvidia.com/gpu");
	assert_int_equal(p.reason_due, 1000 + AJ_REASON_EVERY);
	assert_int_equal(p.requeue_after, AJ_REASON_EVERY);
	assert_int_equal(p.nr_events, 1);
	assert_string_equal(p.events[0].reason, "Unschedulable");
	assert_true(p.events[0].warning);
	assert_false(p.events[0].once);
	/* the reason known before gives no second Warning */
	s.prev_flags = U;
	s.prev_reason = "resource in cluster is overused: overused cpu, overused nvidia.com/gpu";
	decide(&s, &p);
	assert_int_equal(p.nr_events, 0);
	/* a new reason is told again */
	s.reason = "queue resource quota insufficient";
	decide(&s, &p);
	assert_string_equal(p.message, "Volcano Job t is Pending: queue resource quota insufficient");
	assert_int_equal(p.nr_events, 1);
	assert_string_equal(p.events[0].reason, "Unschedulable");
	assert_string_equal(p.events[0].note, "queue resource quota insufficient");
	/* no reason found this time: the condition clears */
	s.reason = NULL;
	decide(&s, &p);
	assert_int_equal(p.flags, 0);
	assert_string_equal(p.reason, "VolcanoJobPending");
	assert_string_equal(p.message, "Volcano Job t is Pending");
	/* asked again after as long as it has waited: 100 s */
	s.submitted_at = 900;
	decide(&s, &p);
	assert_int_equal(p.reason_due, 1100);
	assert_int_equal(p.requeue_after, 100);
	/* and after 5 minutes at most, however long it waits */
	s.submitted_at = -9000;
	decide(&s, &p);
	assert_int_equal(p.reason_due, 1000 + AJ_REASON_MAX);
	assert_int_equal(p.requeue_after, AJ_REASON_MAX);
	assert_int_equal(AJ_REASON_MAX, 300);
}

/* aj's own fact after the scheduler's words: when it is added, and when it is told. */
static void ajs_fact_after_the_scheduler_reason(void **state)
{
#define VW "0/0 tasks in gang unschedulable: pod group is not ready, 40 minAvailable"
#define FACT "asks 40 pods × 8 nvidia.com/gpu = 320; the schedulable nodes hold 64"
#define BOTH VW "; aj: can never fit: " FACT
	static const struct {
		const char *name;
		int asked;                 /* the scheduler was asked this turn */
		const char *reason, *never;
		unsigned prev_flags;
		const char *prev_reason;
		const char *unschedulable; /* NULL: no Unschedulable condition */
		const char *event;         /* the Warning's note; NULL: none */
	} facts[] = {
		{ "the fact follows Volcano's words", 1, VW, FACT, 0, NULL, BOTH, BOTH },
		{ "the same again: no second Warning", 1, VW, FACT, U, BOTH, BOTH, NULL },
		{ "a fact where there was none is told", 1, VW, FACT, U, VW, BOTH, BOTH },
		{ "the job could fit an empty cluster: no words", 1, VW, NULL, 0, NULL, VW, VW },
		{ "...nor with an empty fact", 1, VW, "", 0, NULL, VW, VW },
		{ "the cluster grew: the fact goes, told", 1, VW, NULL, U, BOTH, VW, VW },
		{ "no scheduler reason: no fact alone", 1, NULL, FACT, 0, NULL, NULL, NULL },
		{ "not asked this turn: the status' reason stays whole", 0, NULL, FACT, U, BOTH, BOTH,
		  NULL },
	};
	char msg[512];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(facts) / sizeof(facts[0]); i++) {
		struct aj_seen s = (struct aj_seen)SEEN_AT(1000, 900, facts[i].asked ? 995 : 1010,
							   AJ_PHASE_SUBMITTED, facts[i].prev_flags,
							   facts[i].prev_reason, 0, 1, 0, "Pending", 0, 3);
		struct aj_plan p;

		s.have = facts[i].asked ? WHY : 0;
		s.reason = facts[i].reason;
		s.never = facts[i].never;
		decide(&s, &p);
		if (!facts[i].unschedulable) {
			if (p.flags & U)
				fail_msg("%s: Unschedulable set", facts[i].name);
			assert_string_equal(p.message, "Volcano Job t is Pending");
		} else {
			snprintf(msg, sizeof(msg), "Volcano Job t is Pending: %s", facts[i].unschedulable);
			if (!(p.flags & U) || strcmp(p.unschedulable, facts[i].unschedulable) ||
			    strcmp(p.message, msg))
				fail_msg("%s: got condition \"%s\", message \"%s\"", facts[i].name,
					 (p.flags & U) ? p.unschedulable : "(none)", p.message);
			assert_string_equal(p.reason, "Unschedulable");
		}
		if (!facts[i].event) {
			if (p.nr_events)
				fail_msg("%s: an Event %s", facts[i].name, p.events[0].note);
		} else {
			if (p.nr_events != 1 || strcmp(p.events[0].reason, "Unschedulable") ||
			    !p.events[0].warning || strcmp(p.events[0].note, facts[i].event))
				fail_msg("%s: %zu events, the first \"%s\"", facts[i].name, p.nr_events,
					 p.nr_events ? p.events[0].note : "");
		}
	}
#undef VW
#undef FACT
#undef BOTH
}

/* An AjJob not yet submitted, at its steps; its object "t" as the cache or a GET saw it. */
#define NEW(cancel_, exists_, ours_, have_, done_)                                            \
	.now = 1000, .ajjob = "t", .prev = AJ_PHASE_PENDING, .cancel = cancel_,                \
	.storage_due = 5000, .job = "t", .exists = exists_, .ours = ours_,                    \
	.have = have_, .done = done_

struct step_row {
	const char *name;
	struct aj_seen seen;
	unsigned need, act;
	enum aj_phase phase;       /* with AJ_DO_STATUS */
	int submitted;
	const char *reason, *message, *events;
	long long requeue_after;
	int requeue_low;
};

#define ST AJ_DO_STATUS
#define STORAGE AJ_DO_STORAGE
#define CREATE AJ_DO_CREATE
#define RETRY AJ_DO_RETRY
#define NOTE AJ_DO_STORAGE_NOTE

#define FAILED(reason_, message_)                                                            \
	.act = ST, .phase = AJ_PHASE_FAILED, .reason = reason_, .message = message_,           \
	.events = reason_

static const struct step_row submission[] = {
	{ "first look: build", { NEW(0, 0, 0, 0, 0) }, .need = BUILD },
	{ "invalid template: Failed, nothing created",
	  { NEW(0, 0, 0, BUILD, 0), .build_error = "gpu.yaml:3:5: config.jobs[0].sku: required" },
	  FAILED("InvalidTemplate", "gpu.yaml:3:5: config.jobs[0].sku: required") },
	{ "built, no Secrets: create", { NEW(0, 0, 0, BUILD, 0) }, .act = CREATE },
	{ "built with Secrets: the Secret first", { NEW(0, 0, 0, BUILD, 0), .storage_on = 1 },
	  .act = STORAGE },
	{ "Secret written: create, its renewal noted",
	  { NEW(0, 0, 0, BUILD, STORAGE), .storage_on = 1, .storage_written = 5000 },
	  .act = CREATE | NOTE },
	{ "Secret refused for good: Failed",
	  { NEW(0, 0, 0, BUILD, STORAGE), .storage_on = 1,
	    .storage_error = "storage data: account acct1 refused the key" },
	  FAILED("InvalidTemplate", "storage data: account acct1 refused the key") },
	{ "Secret not written, may work later: Warning and retry",
	  { NEW(0, 0, 0, BUILD, STORAGE), .storage_on = 1, .storage_error = "Azure said 503",
	    .storage_retry = 1 },
	  .act = RETRY, .events = "StorageSecretFailed" },
	{ "created: the status waits until no create does",
	  { NEW(0, 0, 0, BUILD, CREATE), .create = AJ_CREATE_OK }, .events = "", .requeue_low = 1 },
	{ "already there but not cached: ask the server",
	  { NEW(0, 0, 0, BUILD, CREATE), .create = AJ_CREATE_EXISTS }, .need = OBJECT },
	{ "already there, gone by the GET: start over",
	  { NEW(0, 0, 0, BUILD | OBJECT, CREATE), .create = AJ_CREATE_EXISTS }, .act = RETRY },
	{ "rejected by admission: Failed with its message",
	  { NEW(0, 0, 0, BUILD, CREATE), .create = AJ_CREATE_REJECTED,
	    .create_error = "spec.tasks[0].replicas: must be positive" },
	  FAILED("VolcanoJobRejected",
		 "Volcano Job t was rejected: spec.tasks[0].replicas: must be positive") },
	{ "ours (created, or adopted after a crash): Submitted, told once",
	  { NEW(0, 1, 1, 0, 0), .storage_on = 1 },
	  .act = ST, .phase = AJ_PHASE_SUBMITTED, .submitted = 1, .reason = "VolcanoJobCreated",
	  .message = "Volcano Job t submitted", .events = "VolcanoJobCreated!",
	  .requeue_after = AJ_REASON_GRACE + 1 },
	{ "someone else's: NameConflict", { NEW(0, 1, 0, 0, 0) },
	  FAILED("NameConflict", "a Volcano Job named t already exists and does not belong to this AjJob") },
	{ "cancelled before submission: nothing built", { NEW(1, 0, 0, 0, 0) },
	  .act = ST, .phase = AJ_PHASE_CANCELLED, .reason = "Cancelled",
	  .message = "cancelled by request (aj.dev/cancel) before submission", .events = "Cancelled" },
	{ "cancelled, the name taken by another: still just Cancelled", { NEW(1, 1, 0, 0, 0) },
	  .act = ST, .phase = AJ_PHASE_CANCELLED, .reason = "Cancelled",
	  .message = "cancelled by request (aj.dev/cancel) before submission", .events = "Cancelled" },
};

/* A submitted, running AjJob whose storage Secret may be due. */
#define RUNNING_AT(due_, renew_, mounts, have_, done_)                                       \
	.now = 1000, .ajjob = "t", .prev = AJ_PHASE_RUNNING, .submitted = 1, .job = "t",       \
	.exists = 1, .ours = 1, .storage_on = 1, .storage_due = due_, .storage_renew = renew_,  \
	.o = { "Running", mounts, { 0, 3 } }, .have = have_, .done = done_

struct storage_row {
	const char *name;
	struct aj_seen seen;
	unsigned need, act;
	long long storage_due, storage_requeue, renew_after;
	const char *events;
};

#define M AJ_OWNED_MOUNTS_STORAGE

static const struct storage_row renewals[] = {
	{ "not due yet: mirror, and come back when it is", { RUNNING_AT(2000, 0, M, 0, 0) }, .act = ST,
	  .storage_requeue = 1000, .events = "" },
	{ "due: build again", { RUNNING_AT(900, 0, M, 0, 0) }, .need = BUILD, .events = "" },
	{ "due and built: write", { RUNNING_AT(900, 0, M, BUILD, 0) }, .act = STORAGE, .events = "" },
	{ "written: the new renewal noted and in the status",
	  { RUNNING_AT(900, 0, M, BUILD, STORAGE), .storage_written = 1600 },
	  .act = ST | NOTE, .storage_due = 1600, .storage_requeue = 600, .renew_after = 1600,
	  .events = "" },
	{ "writing failed: Warning, a minute later again, mirroring goes on",
	  { RUNNING_AT(900, 0, M, BUILD, STORAGE), .storage_error = "Azure said 503" },
	  .act = ST | NOTE, .storage_due = 1060, .storage_requeue = 60,
	  .events = "StorageRenewalFailed" },
	{ "the template no longer builds: the same",
	  { RUNNING_AT(900, 0, M, BUILD, 0), .build_error = "AjTemplate storage.default is gone" },
	  .act = ST | NOTE, .storage_due = 1060, .storage_requeue = 60,
	  .events = "StorageRenewalFailed" },
	{ "after a restart: the status says when", { RUNNING_AT(AJ_CACHE_DUE_UNKNOWN, 1500, M, 0, 0) },
	  .act = ST | NOTE, .storage_due = 1500, .storage_requeue = 500, .events = "" },
	{ "after a restart, overdue: build", { RUNNING_AT(AJ_CACHE_DUE_UNKNOWN, 1000, M, 0, 0) },
	  .need = BUILD, .events = "" },
	{ "after a restart, no Secret mounted: none due",
	  { RUNNING_AT(AJ_CACHE_DUE_UNKNOWN, 1500, 0, 0, 0) }, .act = ST | NOTE, .events = "" },
	{ "cancelling: no renewal", { RUNNING_AT(900, 0, M, 0, 0), .cancel = 1 },
	  .act = ST | AJ_DO_DELETE, .events = "Cancelling" },
};

static void submission_steps_in_order(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(submission) / sizeof(submission[0]); i++) {
		const struct step_row *r = &submission[i];
		struct aj_plan p;

		decide(&r->seen, &p);
		if (p.need != r->need || p.act != r->act || p.requeue_low != r->requeue_low ||
		    p.requeue_after != r->requeue_after)
			fail_msg("%s: need %u act %u low %d requeue %g", r->name, p.need, p.act,
				 p.requeue_low, p.requeue_after);
		if (r->events)
			aj_test_plan_events(r->name, r->events, &p);
		if (!(p.act & AJ_DO_STATUS))
			continue;
		if (p.phase != r->phase || p.submitted != r->submitted ||
		    strcmp(p.reason, r->reason) || strcmp(p.message, r->message))
			fail_msg("%s: phase %s submitted %d reason %s message \"%s\"", r->name,
				 aj_phase_name(p.phase), p.submitted, p.reason, p.message);
		/*
		 * A Submitted status names the object and carries the Secret's
		 * renewal; the scheduler is asked why after the grace.
		 */
		if (p.submitted && (!p.job || strcmp(p.job, "t") || p.storage_renew_after != 5000 ||
				    p.reason_due != 1005))
			fail_msg("%s: job %s renew %lld due %lld", r->name, p.job ? p.job : "(null)",
				 p.storage_renew_after, p.reason_due);
	}
}

static void storage_secrets_are_renewed_when_due(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(renewals) / sizeof(renewals[0]); i++) {
		const struct storage_row *r = &renewals[i];
		struct aj_plan p;

		decide(&r->seen, &p);
		if (p.need != r->need || p.act != r->act ||
		    ((p.act & AJ_DO_STORAGE_NOTE) && p.storage_due != r->storage_due) ||
		    p.storage_requeue != r->storage_requeue || p.storage_renew_after != r->renew_after)
			fail_msg("%s: need %u act %u due %lld requeue %lld renew %lld", r->name, p.need,
				 p.act, p.storage_due, p.storage_requeue, p.storage_renew_after);
		aj_test_plan_events(r->name, r->events, &p);
		if ((p.act & AJ_DO_STATUS) && !r->seen.cancel &&
		    strcmp(p.message, "Volcano Job t is Running"))
			fail_msg("%s: mirrored \"%s\"", r->name, p.message);
	}
}

/* Events say which step they are about. */
static void events_name_their_action(void **state)
{
	struct aj_seen s = { NEW(0, 1, 1, 0, 0) };
	struct aj_plan p;

	(void)state;
	decide(&s, &p);
	assert_string_equal(p.events[0].action, "Create");
	assert_string_equal(p.events[0].note, "created Volcano Job t");
	s = (struct aj_seen){ NEW(0, 0, 0, BUILD, 0), .build_error = "bad" };
	decide(&s, &p);
	assert_string_equal(p.events[0].action, "Resolve");
	assert_true(p.events[0].warning);
	s = (struct aj_seen){ NEW(1, 0, 0, 0, 0) };
	decide(&s, &p);
	assert_string_equal(p.events[0].action, "Cancel");
	assert_false(p.events[0].warning);
	s = (struct aj_seen)SEEN(AJ_PHASE_RUNNING, 0, NULL, 1, 1, 0, "Running", 0, 3);
	decide(&s, &p);
	assert_string_equal(p.events[0].action, "Delete");
	s = (struct aj_seen)SEEN(AJ_PHASE_SUBMITTED, 0, NULL, 0, 1, 0, "Running", 0, 3);
	decide(&s, &p);
	assert_string_equal(p.events[0].action, "Observe");
}

static void the_failed_pod_is_the_first_to_fail(void **state)
{
	cJSON *pods = cJSON_Parse(
		"{\"items\":["
		"{\"metadata\":{\"name\":\"t-master-0\",\"labels\":{\"volcano.sh/task-spec\":\"master\"}},"
		" \"status\":{\"phase\":\"Succeeded\"}},"
		"{\"metadata\":{\"name\":\"t-worker-1\",\"labels\":{\"volcano.sh/task-spec\":\"worker\"}},"
		" \"status\":{\"phase\":\"Failed\",\"containerStatuses\":[{\"state\":{\"terminated\":"
		"  {\"exitCode\":137,\"reason\":\"OOMKilled\",\"finishedAt\":\"2026-01-01T00:00:09Z\"}}}]}},"
		"{\"metadata\":{\"name\":\"t-worker-0\",\"labels\":{\"volcano.sh/task-spec\":\"worker\"}},"
		" \"status\":{\"phase\":\"Failed\",\"containerStatuses\":["
		"  {\"state\":{\"terminated\":{\"exitCode\":0,\"finishedAt\":\"2026-01-01T00:00:01Z\"}}},"
		"  {\"state\":{\"terminated\":{\"exitCode\":3,\"reason\":\"Error\",\"finishedAt\":\"2026-01-01T00:00:05Z\"}}}]}}"
		"]}");
	cJSON *evicted = cJSON_Parse(
		"{\"items\":[{\"metadata\":{\"name\":\"t-a100-worker-0\",\"labels\":"
		"{\"volcano.sh/task-spec\":\"a100-worker\"}},\"status\":{\"phase\":\"Failed\","
		"\"reason\":\"Evicted\",\"message\":\"ephemeral local storage usage exceeds the limit\"}}]}");
	cJSON *none = cJSON_Parse("{\"items\":[{\"status\":{\"phase\":\"Running\"}}]}");
	char out[256];

	(void)state;
	assert_int_equal(aj_volcano_failure_from_pods(pods, out, sizeof(out)), 1);
	assert_string_equal(out, "task worker, pod t-worker-0: exit code 3 (Error)");
	assert_int_equal(aj_volcano_failure_from_pods(evicted, out, sizeof(out)), 1);
	assert_string_equal(out, "task a100-worker, pod t-a100-worker-0: Evicted: "
				 "ephemeral local storage usage exceeds the limit");
	assert_int_equal(aj_volcano_failure_from_pods(none, out, sizeof(out)), 0);
	assert_string_equal(out, "");
	/* a short buffer is cut, never overrun */
	assert_int_equal(aj_volcano_failure_from_pods(pods, out, 12), 1);
	assert_string_equal(out, "task worker");
	cJSON_Delete(pods);
	cJSON_Delete(evicted);
	cJSON_Delete(none);
}

static void the_scheduler_reason_from_podgroup_or_events(void **state)
{
	cJSON *pg = cJSON_Parse(
		"{\"status\":{\"conditions\":["
		"{\"type\":\"Scheduled\",\"status\":\"False\",\"message\":\"no\"},"
		"{\"type\":\"Unschedulable\",\"status\":\"True\",\"message\":"
		"\"1 node(s) didn't match pod anti-affinity rules\"}]}}");
	cJSON *pg_ok = cJSON_Parse(
		"{\"status\":{\"conditions\":[{\"type\":\"Unschedulable\",\"status\":\"False\","
		"\"message\":\"old\"}]}}");
	cJSON *events = cJSON_Parse(
		"{\"items\":["
		"{\"message\":\"0/0 tasks in gang unschedulable\",\"lastTimestamp\":\"2026-01-01T00:00:04Z\"},"
		"{\"message\":\"resource in cluster is overused: overused cpu\","
		" \"lastTimestamp\":\"2026-01-01T00:00:07Z\"},"
		"{\"message\":\"older\",\"eventTime\":\"2026-01-01T00:00:02.000001Z\"}]}");
	cJSON *empty = cJSON_Parse("{\"items\":[]}");

	(void)state;
	assert_string_equal(aj_volcano_podgroup_reason(pg), "1 node(s) didn't match pod anti-affinity rules");
	assert_null(aj_volcano_podgroup_reason(pg_ok));
	assert_null(aj_volcano_podgroup_reason(NULL));
	assert_string_equal(aj_volcano_latest_event(events), "resource in cluster is overused: overused cpu");
	assert_null(aj_volcano_latest_event(empty));
	cJSON_Delete(pg);
	cJSON_Delete(pg_ok);
	cJSON_Delete(events);
	cJSON_Delete(empty);
}

/*
 * The tasks of Volcano Jobs as its job controller writes their status: the
 * pods it has per task and phase in taskStatusCount (phases without pods
 * left out), the replicas from spec.tasks.
 */
static void the_tasks_of_a_volcano_job(void **state)
{
	static const struct {
		const char *status;
		struct aj_task_pods master, worker;
	} jobs[] = {
		/* the PodGroup waits in the queue: no pods yet, all pending */
		{ "{\"state\": {\"phase\": \"Pending\", \"lastTransitionTime\": \"2026-12-01T10:00:00Z\"},"
		  " \"minAvailable\": 3, \"conditions\": [{\"status\": \"Pending\","
		  " \"lastTransitionTime\": \"2026-12-01T10:00:00Z\"}]}",
		  { "master", 1, 1, 0, 0, 0 }, { "worker", 2, 2, 0, 0, 0 } },
		{ "{\"state\": {\"phase\": \"Running\"}, \"minAvailable\": 3, \"pending\": 1, \"running\": 2,"
		  " \"taskStatusCount\": {\"master\": {\"phase\": {\"Running\": 1}},"
		  " \"worker\": {\"phase\": {\"Pending\": 1, \"Running\": 1}}}, \"version\": 2}",
		  { "master", 1, 0, 1, 0, 0 }, { "worker", 2, 1, 1, 0, 0 } },
		{ "{\"state\": {\"phase\": \"Completed\"}, \"minAvailable\": 3, \"succeeded\": 3,"
		  " \"taskStatusCount\": {\"master\": {\"phase\": {\"Succeeded\": 1}},"
		  " \"worker\": {\"phase\": {\"Succeeded\": 2}}}}",
		  { "master", 1, 0, 0, 1, 0 }, { "worker", 2, 0, 0, 2, 0 } },
		/* Terminated: a pod that failed is kept, the others were deleted */
		{ "{\"state\": {\"phase\": \"Terminated\"}, \"failed\": 1, \"terminating\": 2,"
		  " \"taskStatusCount\": {\"worker\": {\"phase\": {\"Failed\": 1}}}}",
		  { "master", 1, 0, 0, 0, 0 }, { "worker", 2, 0, 0, 0, 1 } },
	};
	/* Failed after its restarts: Volcano deleted every pod, nothing is left to count */
	static const char failed[] =
		"{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"tasks\": [{\"name\": \"worker\","
		" \"replicas\": 2}]}, \"status\": {\"state\": {\"phase\": \"Failed\"}, \"retryCount\": 2,"
		" \"minAvailable\": 2, \"terminating\": 2}}";
	struct aj_owned_facts f;
	char json[2048], name[32];
	cJSON *job;
	size_t i, j;

	(void)state;
	for (i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		const struct aj_task_pods *want[2] = { &jobs[i].master, &jobs[i].worker };

		snprintf(json, sizeof(json),
			 "{\"metadata\": {\"name\": \"t\", \"namespace\": \"ml\", \"uid\": \"v1\"},"
			 " \"spec\": {\"minAvailable\": 3, \"schedulerName\": \"volcano\", \"maxRetry\": 3,"
			 " \"tasks\": [{\"name\": \"master\", \"replicas\": 1, \"template\": {}},"
			 " {\"name\": \"worker\", \"replicas\": 2, \"template\": {}}]}, \"status\": %s}",
			 jobs[i].status);
		job = aj_test_summarize(&aj_runner_volcano, json, &f);
		assert_int_equal(f.nr_tasks, 2);
		for (j = 0; j < 2; j++) {
			snprintf(name, sizeof(name), "job %zu, task %zu", i, j);
			aj_test_task_is(name, &f.tasks[j], want[j]);
		}
		cJSON_Delete(job);
	}
	job = aj_test_summarize(&aj_runner_volcano, failed, &f);
	assert_int_equal(f.nr_tasks, 0);
	cJSON_Delete(job);
}

/* Every status about our Volcano Job says its tasks: mirrored, finished, cancelling. */
static void the_plan_carries_the_tasks(void **state)
{
	static const char *const phases[] = { "Running", "Completed", "Pending" };
	struct aj_seen s = SEEN(AJ_PHASE_RUNNING, 0, NULL, 0, 1, 0, "Running", 0, 3);
	struct aj_plan p;
	size_t i;

	(void)state;
	s.o.nr_tasks = 2;
	s.o.tasks[0] = (struct aj_task_pods){ "master", 1, 0, 1, 0, 0 };
	s.o.tasks[1] = (struct aj_task_pods){ "worker", 2, 0, 2, 0, 0 };
	for (i = 0; i < sizeof(phases) / sizeof(phases[0]); i++) {
		s.o.phase = phases[i];
		decide(&s, &p);
		assert_int_equal(p.nr_tasks, 2);
		assert_ptr_equal(p.tasks, s.o.tasks);
	}
	s.cancel = 1;
	decide(&s, &p);
	assert_int_equal(p.phase, AJ_PHASE_CANCELLING);
	assert_int_equal(p.nr_tasks, 2);
	/* the Volcano Job gone: no tasks to tell */
	s.exists = 0;
	s.have = PODS;
	decide(&s, &p);
	assert_int_equal(p.nr_tasks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_observation_gives_its_plan),
		cmocka_unit_test(fetched_facts_finish_the_plan),
		cmocka_unit_test(a_recorded_pod_failure_names_the_pod_gone),
		cmocka_unit_test(ajs_fact_after_the_scheduler_reason),
		cmocka_unit_test(submission_steps_in_order),
		cmocka_unit_test(storage_secrets_are_renewed_when_due),
		cmocka_unit_test(events_name_their_action),
		cmocka_unit_test(the_failed_pod_is_the_first_to_fail),
		cmocka_unit_test(the_scheduler_reason_from_podgroup_or_events),
		cmocka_unit_test(the_tasks_of_a_volcano_job),
		cmocka_unit_test(the_plan_carries_the_tasks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
