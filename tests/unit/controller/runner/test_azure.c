/*
 * The azure runner (controller/runner/azure.c): decide() on every
 * observation of an aml or sing AjJob, one row each: deletion (finalizer,
 * cancel, let go), submission (build, permit, finalizer, adoption,
 * submit and its refusals, retry, cancel before submission), the mapping of
 * every Azure job status, the job gone, cancellation, the poll delay and
 * status.tasks.
 * The expected plans are written out by hand.
 */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cache.h"
#include "core/error.h"
#include "runner/runner.h"
#include "runner/azure.h"

#define JOB "k8s-team-t-1a2b3c4d"
#define PERMIT AJ_AZURE_NEED_PERMIT
#define GET AJ_AZURE_NEED_JOB
#define HOLD AJ_AZURE_DO_HOLD
#define SUBMIT AJ_AZURE_DO_SUBMIT
#define BUILT (AJ_NEED_BUILD | AJ_NEED_AJJOB)
#define LOOKED (BUILT | PERMIT | GET)
#define ST AJ_DO_STATUS

/* An AjJob "t" at now = 10000 whose job is JOB, polled every 30 s. */
#define BASE .now = 10000, .ajjob = "t", .job = JOB, .every = 30, .storage_due = AJ_CACHE_DUE_UNKNOWN
/* ...submitted, its job read: status, previous phase */
#define SUBMITTED(status_, prev_) BASE, .submitted = 1, .have = GET, .exists = 1, \
	.prev = prev_, .o = { status_, 0, { 0, 0 } }
/* ...not submitted, built, allowed, held, its job looked for */
#define READY BASE, .have = LOOKED, .held = 1

struct row {
	const char *name;
	struct aj_seen seen;
	unsigned need, act;
	double requeue_after;
	/* with AJ_DO_STATUS */
	enum aj_phase phase;
	int submitted;
	const char *reason;
	const char *message;
	const char *events;        /* "Reason[!] Reason..." in order; ! marks told-once */
};

static const struct row rows[] = {
	/* deleted: cancel the job, then let the AjJob go */
	{ "deleted: its finalizers are read first", { BASE, .submitted = 1, .removing = 1 },
	  AJ_NEED_AJJOB, 0, 0, 0, 0, NULL, NULL, "" },
	{ "deleted, not held: nothing to do", { BASE, .removing = 1, .have = AJ_NEED_AJJOB },
	  0, 0, 0, 0, 0, NULL, NULL, "" },
	{ "deleted and held: permit and job", { BASE, .removing = 1, .have = AJ_NEED_AJJOB, .held = 1 },
	  PERMIT | GET, 0, 0, 0, 0, NULL, NULL, "" },
	{ "deleted, job running: cancel, look again in one interval",
	  { BASE, .submitted = 1, .removing = 1, .held = 1, .have = AJ_NEED_AJJOB | PERMIT | GET,
	    .exists = 1, .o = { "Running", 0, { 0, 0 } }, .changed_at = 1000 },
	  0, AJ_DO_DELETE, 30, 0, 0, NULL, NULL, "" },
	{ "deleted, cancel asked already: no second POST",
	  { BASE, .submitted = 1, .removing = 1, .held = 1, .have = AJ_NEED_AJJOB | PERMIT | GET,
	    .exists = 1, .o = { "CancelRequested", 0, { 0, 0 } } },
	  0, 0, 30, 0, 0, NULL, NULL, "" },
	{ "deleted, job Canceled: let go",
	  { BASE, .submitted = 1, .removing = 1, .held = 1, .have = AJ_NEED_AJJOB | PERMIT | GET,
	    .exists = 1, .o = { "Canceled", 0, { 0, 0 } } },
	  0, AJ_DO_RELEASE, 0, 0, 0, NULL, NULL, "" },
	{ "deleted, job Completed: let go",
	  { BASE, .submitted = 1, .removing = 1, .held = 1, .have = AJ_NEED_AJJOB | PERMIT | GET,
	    .exists = 1, .o = { "Completed", 0, { 0, 0 } } },
	  0, AJ_DO_RELEASE, 0, 0, 0, NULL, NULL, "" },
	{ "deleted, job gone: let go",
	  { BASE, .submitted = 1, .removing = 1, .held = 1, .have = AJ_NEED_AJJOB | PERMIT | GET },
	  0, AJ_DO_RELEASE, 0, 0, 0, NULL, NULL, "" },
	{ "deleted before its status was written, workspace not allowed: let go",
	  { BASE, .removing = 1, .held = 1, .have = AJ_NEED_AJJOB | PERMIT | GET,
	    .forbidden = "namespace team may not use workspace s/rg/ws" },
	  0, AJ_DO_RELEASE, 0, 0, 0, NULL, NULL, "" },

	/* submission */
	{ "new: resolve and build", { BASE }, AJ_NEED_BUILD, 0, 0, 0, 0, NULL, NULL, "" },
	{ "invalid template", { BASE, .have = BUILT, .build_error = "config.nodes: must be at least 1" },
	  0, ST, 0, AJ_PHASE_FAILED, 0, "InvalidTemplate", "config.nodes: must be at least 1",
	  "InvalidTemplate" },
	{ "built: the permit, and the job of the derived name", { BASE, .have = BUILT },
	  PERMIT | GET, 0, 0, 0, 0, NULL, NULL, "" },
	{ "workspace not allowed", { BASE, .have = BUILT | PERMIT | GET,
	    .forbidden = "namespace team may not use workspace s/rg/other (the controller's "
			 "--azure-allow rules)" },
	  0, ST, 0, AJ_PHASE_FAILED, 0, "Forbidden",
	  "namespace team may not use workspace s/rg/other (the controller's --azure-allow rules)",
	  "Forbidden" },
	{ "allowed: the finalizer before anything exists in Azure", { BASE, .have = LOOKED },
	  0, HOLD, 0, 0, 0, NULL, NULL, "" },
	{ "held, no job: submit", { READY }, 0, SUBMIT, 0, 0, 0, NULL, NULL, "" },
	{ "a job of the derived name is there: adopted",
	  { READY, .exists = 1, .o = { "Running", 0, { 0, 0 } } },
	  0, ST, 30, AJ_PHASE_RUNNING, 1, "AzureJobRunning", "Azure ML job " JOB " is Running",
	  "AzureJobRunning" },
	{ "submitted now", { READY, .done = SUBMIT, .create = AJ_CREATE_OK, .exists = 1,
	    .o = { "NotStarted", 0, { 0, 0 } } },
	  0, ST, 30, AJ_PHASE_SUBMITTED, 1, "AzureJobNotStarted", "Azure ML job " JOB " is NotStarted",
	  "AzureJobNotStarted" },
	{ "no compute the namespace may use",
	  { READY, .done = SUBMIT, .create = AJ_CREATE_REJECTED, .create_reason = "NoCompute",
	    .create_error = "namespace team may not use virtual cluster s/sing/vc-x" },
	  0, ST, 0, AJ_PHASE_FAILED, 0, "NoCompute",
	  "namespace team may not use virtual cluster s/sing/vc-x", "NoCompute" },
	{ "code not where the AjJob says",
	  { READY, .done = SUBMIT, .create = AJ_CREATE_REJECTED, .create_reason = "CodeUnavailable",
	    .create_error = "spec.code.uri: \"x\" is not azureml://datastores/..." },
	  0, ST, 0, AJ_PHASE_FAILED, 0, "CodeUnavailable",
	  "spec.code.uri: \"x\" is not azureml://datastores/...", "CodeUnavailable" },
	{ "Azure refuses the body",
	  { READY, .done = SUBMIT, .create = AJ_CREATE_REJECTED, .create_reason = "AzureRejected",
	    .create_error = "Azure ML refused the job: HTTP 400 UserError: bad distribution" },
	  0, ST, 0, AJ_PHASE_FAILED, 0, "AzureRejected",
	  "Azure ML refused the job: HTTP 400 UserError: bad distribution", "AzureRejected" },
	{ "throttled or down: back off and come again",
	  { READY, .done = SUBMIT, .create = AJ_CREATE_RETRY, .create_error = "HTTP 503" },
	  0, AJ_DO_RETRY, 0, 0, 0, NULL, NULL, "" },
	{ "cancelled before submission", { READY, .cancel = 1 },
	  0, ST, 0, AJ_PHASE_CANCELLED, 0, "Cancelled",
	  "cancelled by request (aj.dev/cancel) before submission", "Cancelled" },
	{ "cancelled, but a job is there: adopted first (cancelled once submitted)",
	  { READY, .cancel = 1, .exists = 1, .o = { "Queued", 0, { 0, 0 } } },
	  0, ST, 30, AJ_PHASE_SUBMITTED, 1, "AzureJobQueued", "Azure ML job " JOB " is Queued",
	  "AzureJobQueued" },

	/* submitted: every status */
	{ "submitted: the job is read", { BASE, .submitted = 1 }, GET, 0, 0, 0, 0, NULL, NULL, "" },
	{ "queued", { SUBMITTED("Queued", AJ_PHASE_SUBMITTED) },
	  0, ST, 30, AJ_PHASE_SUBMITTED, 1, "AzureJobQueued", "Azure ML job " JOB " is Queued", "" },
	{ "preparing is still queued", { SUBMITTED("Preparing", AJ_PHASE_SUBMITTED) },
	  0, ST, 30, AJ_PHASE_SUBMITTED, 1, "AzureJobPreparing", "Azure ML job " JOB " is Preparing", "" },
	{ "no status yet: NotStarted", { SUBMITTED(NULL, AJ_PHASE_SUBMITTED) },
	  0, ST, 30, AJ_PHASE_SUBMITTED, 1, "AzureJobNotStarted", "Azure ML job " JOB " is NotStarted", "" },
	{ "running: told once", { SUBMITTED("Running", AJ_PHASE_SUBMITTED) },
	  0, ST, 30, AJ_PHASE_RUNNING, 1, "AzureJobRunning", "Azure ML job " JOB " is Running",
	  "AzureJobRunning" },
	{ "still running: nothing told", { SUBMITTED("Running", AJ_PHASE_RUNNING) },
	  0, ST, 30, AJ_PHASE_RUNNING, 1, "AzureJobRunning", "Azure ML job " JOB " is Running", "" },
	{ "finalizing is running", { SUBMITTED("Finalizing", AJ_PHASE_RUNNING) },
	  0, ST, 30, AJ_PHASE_RUNNING, 1, "AzureJobFinalizing", "Azure ML job " JOB " is Finalizing", "" },
	{ "completed", { SUBMITTED("Completed", AJ_PHASE_RUNNING) },
	  0, ST, 0, AJ_PHASE_SUCCEEDED, 1, "AzureJobCompleted", "Azure ML job " JOB " is Completed",
	  "AzureJobCompleted" },
	{ "failed", { SUBMITTED("Failed", AJ_PHASE_RUNNING) },
	  0, ST, 0, AJ_PHASE_FAILED, 1, "AzureJobFailed", "Azure ML job " JOB " is Failed",
	  "AzureJobFailed" },
	{ "canceled", { SUBMITTED("Canceled", AJ_PHASE_RUNNING) },
	  0, ST, 0, AJ_PHASE_CANCELLED, 1, "AzureJobCanceled", "Azure ML job " JOB " is Canceled",
	  "AzureJobCanceled" },
	{ "a status unknown here: queued, its odd characters '_' in the reason",
	  { SUBMITTED("Weird-State 2", AJ_PHASE_SUBMITTED) },
	  0, ST, 30, AJ_PHASE_SUBMITTED, 1, "AzureJobWeird_State_2",
	  "Azure ML job " JOB " is Weird-State 2", "" },
	{ "the job went: Failed", { BASE, .submitted = 1, .have = GET, .prev = AJ_PHASE_RUNNING },
	  0, ST, 0, AJ_PHASE_FAILED, 0, "AzureJobGone", "Azure ML job " JOB " no longer exists",
	  "AzureJobGone" },

	/* cancel (aj.dev/cancel) */
	{ "cancel asked: POST cancel, mirror on",
	  { SUBMITTED("Running", AJ_PHASE_RUNNING), .cancel = 1 },
	  0, ST | AJ_DO_DELETE, 30, AJ_PHASE_RUNNING, 1, "AzureJobRunning",
	  "Azure ML job " JOB " is Running", "" },
	{ "cancel asked, queued: POST cancel",
	  { SUBMITTED("Queued", AJ_PHASE_SUBMITTED), .cancel = 1 },
	  0, ST | AJ_DO_DELETE, 30, AJ_PHASE_SUBMITTED, 1, "AzureJobQueued",
	  "Azure ML job " JOB " is Queued", "" },
	{ "cancel requested: no second POST",
	  { SUBMITTED("CancelRequested", AJ_PHASE_RUNNING), .cancel = 1 },
	  0, ST, 30, AJ_PHASE_RUNNING, 1, "AzureJobCancelRequested",
	  "Azure ML job " JOB " is CancelRequested", "" },
	{ "cancel done: Cancelled", { SUBMITTED("Canceled", AJ_PHASE_RUNNING), .cancel = 1 },
	  0, ST, 0, AJ_PHASE_CANCELLED, 1, "AzureJobCanceled", "Azure ML job " JOB " is Canceled",
	  "AzureJobCanceled" },
	{ "cancel after the end keeps the outcome", { SUBMITTED("Completed", AJ_PHASE_RUNNING), .cancel = 1 },
	  0, ST, 0, AJ_PHASE_SUCCEEDED, 1, "AzureJobCompleted", "Azure ML job " JOB " is Completed",
	  "AzureJobCompleted" },
};

static void every_observation_gives_its_plan(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct aj_plan p;

		aj_runner_azure.decide(&r->seen, &p);
		if (p.need != r->need || p.act != r->act || p.requeue_after != r->requeue_after)
			fail_msg("%s: need %u act %u requeue %g, expected need %u act %u requeue %g",
				 r->name, p.need, p.act, p.requeue_after, r->need, r->act,
				 r->requeue_after);
		/* a poll writes the status it finds: it may not wait behind other writes */
		if (p.requeue_idle)
			fail_msg("%s: a poll at the idle level", r->name);
		aj_test_plan_events(r->name, r->events, &p);
		if (!(p.act & AJ_DO_STATUS))
			continue;
		if (p.phase != r->phase || p.submitted != r->submitted || strcmp(p.reason, r->reason) ||
		    strcmp(p.message, r->message))
			fail_msg("%s: got phase %s submitted %d reason %s message \"%s\"", r->name,
				 aj_phase_name(p.phase), p.submitted, p.reason, p.message);
	}
}

/* Failures are Warnings of the Forward action; a job failing in Azure is a Warning too. */
static void events_say_what_and_how(void **state)
{
	struct aj_seen s = { READY, .done = SUBMIT, .create = AJ_CREATE_REJECTED,
			     .create_reason = "NoCompute", .create_error = "no VC" };
	struct aj_seen failed = { SUBMITTED("Failed", AJ_PHASE_RUNNING) };
	struct aj_seen running = { SUBMITTED("Running", AJ_PHASE_SUBMITTED) };
	struct aj_plan p;

	(void)state;
	aj_runner_azure.decide(&s, &p);
	assert_int_equal(p.nr_events, 1);
	assert_true(p.events[0].warning);
	assert_string_equal(p.events[0].action, "Forward");
	assert_string_equal(p.events[0].note, "no VC");
	aj_runner_azure.decide(&failed, &p);
	assert_true(p.events[0].warning);
	assert_string_equal(p.events[0].action, "Observe");
	aj_runner_azure.decide(&running, &p);
	assert_false(p.events[0].warning);
	assert_string_equal(p.events[0].note, "Azure ML job " JOB " is Running");
}

/* status.azure as observed is written whole; a failure before submission writes none. */
static void the_job_detail_is_written(void **state)
{
	cJSON *detail = cJSON_Parse("{\"jobName\": \"" JOB "\", \"workspace\": \"/subscriptions/s\"}");
	struct aj_seen s = { SUBMITTED("Running", AJ_PHASE_RUNNING) };
	struct aj_seen forbidden = { BASE, .have = BUILT | PERMIT | GET, .forbidden = "no" };
	struct aj_plan p;

	(void)state;
	assert_non_null(detail);
	s.detail = detail;
	aj_runner_azure.decide(&s, &p);
	assert_ptr_equal(p.detail, detail);
	aj_runner_azure.decide(&forbidden, &p);
	assert_null(p.detail);
	cJSON_Delete(detail);
}

/* Polls come every interval plus a tenth of the time since the last change, at most 20 intervals. */
static void polls_stretch(void **state)
{
	static const struct {
		double every;
		long long since;       /* seconds since the last change; 0: unknown */
		double want;
	} cases[] = {
		{ 30, 0, 30 },         /* no condition time known */
		{ 30, 5, 30.5 },
		{ 30, 100, 40 },
		{ 30, 3000, 330 },
		{ 30, 5700, 600 },     /* exactly the cap */
		{ 30, 9000, 600 },     /* capped at 20 intervals */
		{ 1, 50, 6 },
		{ 1, 1000, 20 },
		{ 0.5, 3, 0.8 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aj_seen s = { SUBMITTED("Queued", AJ_PHASE_SUBMITTED) };
		struct aj_plan p;

		s.every = cases[i].every;
		s.changed_at = cases[i].since ? s.now - cases[i].since : 0;
		aj_runner_azure.decide(&s, &p);
		if (p.requeue_after < cases[i].want - 1e-9 || p.requeue_after > cases[i].want + 1e-9)
			fail_msg("every %g, %lld s since: requeue %g, expected %g", cases[i].every,
				 cases[i].since, p.requeue_after, cases[i].want);
	}
}

/* status.tasks: the job's one task, all its instances in the state the job is in. */
static void tasks_follow_the_job(void **state)
{
	static const struct {
		const char *status;
		const char *name;
		long long replicas;
		size_t nr;
		const char *want_name;
		long long pending, running, succeeded, failed;
	} cases[] = {
		{ "Queued", "train", 2, 1, "train", 2, 0, 0, 0 },
		{ NULL, "train", 2, 1, "train", 2, 0, 0, 0 },               /* NotStarted */
		{ "Preparing", NULL, 4, 1, "main", 4, 0, 0, 0 },           /* no tag: "main" */
		{ "Running", "train", 2, 1, "train", 0, 2, 0, 0 },
		{ "CancelRequested", "train", 2, 1, "train", 0, 2, 0, 0 },
		{ "Completed", "train", 3, 1, "train", 0, 0, 3, 0 },
		{ "Failed", "train", 3, 1, "train", 0, 0, 0, 3 },
		{ "Canceled", "train", 3, 0, NULL, 0, 0, 0, 0 },
		{ "Running", "train", 0, 0, NULL, 0, 0, 0, 0 },            /* instances unknown */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aj_owned_facts f;
		const struct aj_task_pods *t = &f.tasks[0];

		memset(&f, 0, sizeof(f));
		f.nr_tasks = 5;
		aj_azure_tasks(cases[i].status, cases[i].name, cases[i].replicas, &f);
		if (f.nr_tasks != cases[i].nr)
			fail_msg("%s x%lld: %zu tasks, expected %zu", cases[i].status ? cases[i].status : "-",
				 cases[i].replicas, f.nr_tasks, cases[i].nr);
		if (!f.nr_tasks)
			continue;
		assert_string_equal(t->name, cases[i].want_name);
		if (t->replicas != cases[i].replicas || t->pending != cases[i].pending ||
		    t->running != cases[i].running || t->succeeded != cases[i].succeeded ||
		    t->failed != cases[i].failed)
			fail_msg("%s x%lld: %lld/%lld/%lld/%lld/%lld", cases[i].status ? cases[i].status : "-",
				 cases[i].replicas, t->replicas, t->pending, t->running, t->succeeded,
				 t->failed);
	}
}

/* The mirrored status carries the tasks observed; a failure before submission none. */
static void the_status_has_the_tasks(void **state)
{
	struct aj_seen s = { SUBMITTED("Running", AJ_PHASE_RUNNING) };
	struct aj_seen gone = { BASE, .submitted = 1, .have = GET, .prev = AJ_PHASE_RUNNING };
	struct aj_plan p;

	(void)state;
	aj_azure_tasks("Running", "train", 2, &s.o);
	aj_runner_azure.decide(&s, &p);
	assert_int_equal(p.nr_tasks, 1);
	assert_ptr_equal(p.tasks, s.o.tasks);
	assert_int_equal(p.tasks[0].running, 2);
	aj_runner_azure.decide(&gone, &p);
	assert_int_equal(p.nr_tasks, 0);
}

/* The row: aml and sing, no cluster object, its finalizer, off unless configured with a workspace. */
static void the_row(void **state)
{
	const char *values[AJ_RUNNER_OPTIONS_MAX] = { NULL };
	struct aj_runner_env env = { NULL, NULL, NULL };
	struct aj_errors err = AJ_ERRORS_INIT;
	void *config = &env;
	const struct aj_runner_option *op;

	(void)state;
	assert_ptr_equal(aj_runner_for("aml"), &aj_runner_azure);
	assert_ptr_equal(aj_runner_for("sing"), &aj_runner_azure);
	assert_ptr_not_equal(aj_runner_for("volcano"), &aj_runner_azure);
	assert_null(aj_runner_for(NULL));
	assert_null(aj_runner_azure.owns);
	assert_string_equal(aj_runner_azure.finalizer, "aj.dev/azure-job");
	assert_string_equal(aj_runner_azure.status_member, "azure");
	assert_true(aj_runner_azure.member_whole);
	/* no workspace: no forwarder, so aml and sing are not served */
	assert_int_equal(aj_runner_azure.configure(values, &env, &config, &err), 0);
	assert_null(config);
	/* its options, each with its variable; the poll interval is checked */
	for (op = aj_runner_azure.options; op->flag; op++)
		assert_non_null(op->env);
	assert_string_equal(aj_runner_azure.options[0].flag, "azure-workspace");
	for (op = aj_runner_azure.options; op->flag && strcmp(op->flag, "azure-poll"); op++)
		;
	assert_non_null(op->check);
	assert_int_equal(op->check("2.5"), 0);
	assert_int_not_equal(op->check("0.01"), 0);
	assert_int_not_equal(op->check("soon"), 0);
	aj_errors_release(&err);
}

/* Fail-over's view of an attempt: started and gone, from the job read now. */
static void attempts_for_failover(void **state)
{
	static const struct {
		const char *status;   /* NULL: the job is not there */
		int cancelling, started, gone;
	} looks[] = {
		{ "NotStarted", 0, 0, 0 },
		{ "Queued", 0, 0, 0 },
		{ "Running", 0, 1, 0 },       /* started since the last poll: not cancelled */
		{ "Completed", 0, 1, 0 },
		{ "Failed", 0, 1, 0 },
		{ "Canceled", 0, 0, 1 },      /* cancelled by someone else: the runner's to mirror */
		{ NULL, 0, 0, 1 },
		/* a cancel was issued: wait until Azure says Canceled */
		{ "Queued", 1, 0, 0 },
		{ "CancelRequested", 1, 0, 0 },
		{ "Running", 1, 0, 0 },       /* not yet stopped: Azure will cancel it */
		{ "Canceled", 1, 0, 1 },
		{ NULL, 1, 0, 1 },
		/* ended on its own before the cancel took: kept */
		{ "Completed", 1, 1, 0 },
		{ "Failed", 1, 1, 0 },
	};
	size_t i;

	(void)state;
	assert_non_null(aj_runner_azure.attempt);
	assert_int_equal(aj_runner_azure.attempt_needs, PERMIT | GET);
	for (i = 0; i < sizeof(looks) / sizeof(looks[0]); i++) {
		struct aj_seen s = { BASE, .submitted = 1, .have = PERMIT | GET,
				     .exists = looks[i].status != NULL, .o = { looks[i].status, 0, { 0, 0 } } };
		int started = -1, gone = -1;

		aj_runner_azure.attempt(&s, looks[i].cancelling, &started, &gone);
		if (started != looks[i].started || gone != looks[i].gone)
			fail_msg("%s%s: started %d gone %d, want %d %d",
				 looks[i].status ? looks[i].status : "(none)",
				 looks[i].cancelling ? " (cancelling)" : "", started, gone,
				 looks[i].started, looks[i].gone);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_observation_gives_its_plan),
		cmocka_unit_test(events_say_what_and_how),
		cmocka_unit_test(the_job_detail_is_written),
		cmocka_unit_test(polls_stretch),
		cmocka_unit_test(tasks_follow_the_job),
		cmocka_unit_test(the_status_has_the_tasks),
		cmocka_unit_test(the_row),
		cmocka_unit_test(attempts_for_failover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
