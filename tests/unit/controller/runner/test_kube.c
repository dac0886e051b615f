/*
 * The kube runner (controller/runner/kube.c): what the cache keeps of a
 * batch/v1 Job (summarize, on Job objects written by hand as the Job
 * controller writes them) and decide(): every phase the Job's conditions
 * and counts give, Kueue's suspension, the failure's reason, deletion and
 * cancellation, one row each, the expected plan written out by hand; and
 * what Kueue says of a queued Job (its Workload, written as Kueue v0.17
 * writes it) as the AjJob's status.
 */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cache.h"
#include "runner/kube.h"

#define S AJ_STATUS_FLAG(AJ_COND_SUSPENDED)
#define U AJ_STATUS_FLAG(AJ_COND_UNSCHEDULABLE)
#define FAIL AJ_NEED_RUNNER
#define KUEUE AJ_KUBE_NEED_KUEUE
#define PODS AJ_NEED_PODS

static void summary_of(const char *json, struct aj_owned_facts *f)
{
	cJSON *job = cJSON_Parse(json);

	assert_non_null(job);
	memset(f, 0, sizeof(*f));
	aj_runner_kube.summarize(job, f);
	/* the phase is one of the runner's words, never a pointer into the object */
	cJSON_Delete(job);
}

static void summarize_reads_conditions_and_counts(void **state)
{
	struct aj_owned_facts f;

	(void)state;
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"spec\": {}}", &f);
	assert_string_equal(f.phase, "Pending");
	assert_int_equal(f.n[0], 0);
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"status\": {\"active\": 3, \"ready\": 0}}", &f);
	assert_string_equal(f.phase, "Pending");
	assert_int_equal(f.n[0], 3);
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"status\": {\"active\": 3, \"ready\": 1}}", &f);
	assert_string_equal(f.phase, "Running");
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"status\": {\"active\": 2, \"ready\": 0, "
		   "\"succeeded\": 1}}", &f);
	assert_string_equal(f.phase, "Running");
	assert_int_equal(f.n[1], 1);
	summary_of("{\"metadata\": {\"name\": \"t\", \"labels\": {\"kueue.x-k8s.io/queue-name\": \"q\"}},"
		   " \"status\": {\"conditions\": [{\"type\": \"Suspended\", \"status\": \"True\"}]}}", &f);
	assert_string_equal(f.phase, "Suspended");
	assert_int_equal(f.flags & 2u, 2u);
	/* spec.suspend with no pod and no condition (yet, or ever: MultiKueue's Job on the manager) */
	summary_of("{\"metadata\": {\"name\": \"t\", \"labels\": {\"kueue.x-k8s.io/queue-name\": \"q\"}},"
		   " \"spec\": {\"suspend\": true, \"managedBy\": \"kueue.x-k8s.io/multikueue\"}}", &f);
	assert_string_equal(f.phase, "Suspended");
	/* ...but while its pods still run, it is what they are */
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"suspend\": true},"
		   " \"status\": {\"active\": 2, \"ready\": 2}}", &f);
	assert_string_equal(f.phase, "Running");
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"suspend\": false}}", &f);
	assert_string_equal(f.phase, "Pending");
	/* a condition that is not True does not count */
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"status\": {\"active\": 1, \"ready\": 1, "
		   "\"conditions\": [{\"type\": \"Suspended\", \"status\": \"False\"}]}}", &f);
	assert_string_equal(f.phase, "Running");
	assert_int_equal(f.flags, 0);
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"status\": {\"succeeded\": 2, \"conditions\": ["
		   "{\"type\": \"SuccessCriteriaMet\", \"status\": \"True\"},"
		   "{\"type\": \"Complete\", \"status\": \"True\"}]}}", &f);
	assert_string_equal(f.phase, "Complete");
	assert_int_equal(f.n[1], 2);
	/* FailureTarget comes first, while the pods stop: the end is the Failed condition */
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"status\": {\"active\": 2, \"ready\": 2, \"conditions\": ["
		   "{\"type\": \"FailureTarget\", \"status\": \"True\"}]}}", &f);
	assert_string_equal(f.phase, "Failing");
	summary_of("{\"metadata\": {\"name\": \"t\"}, \"status\": {\"failed\": 3, \"conditions\": ["
		   "{\"type\": \"FailureTarget\", \"status\": \"True\"},"
		   "{\"type\": \"Failed\", \"status\": \"True\", \"reason\": \"PodFailurePolicy\"}]}}", &f);
	assert_string_equal(f.phase, "Failed");
}

/*
 * The Job's one task, from Indexed Jobs as kube-controller-manager's Job
 * controller writes their status (zero counts left out, ready and
 * terminating always there), named by the pods' aj.dev/task label.
 */
static void summarize_counts_the_pods_of_the_one_task(void **state)
{
	static const struct {
		const char *status;
		struct aj_task_pods want;
	} rows[] = {
		/* pods created, not running yet */
		{ "{\"startTime\": \"2026-12-01T10:00:00Z\", \"active\": 2, \"ready\": 0, \"terminating\": 0,"
		  " \"uncountedTerminatedPods\": {}}", { "worker", 2, 2, 0, 0, 0 } },
		{ "{\"startTime\": \"2026-12-01T10:00:00Z\", \"active\": 2, \"ready\": 2, \"terminating\": 0,"
		  " \"uncountedTerminatedPods\": {}}", { "worker", 2, 0, 2, 0, 0 } },
		/* index 0 done, index 1 running */
		{ "{\"active\": 1, \"ready\": 1, \"succeeded\": 1, \"completedIndexes\": \"0\","
		  " \"terminating\": 0}", { "worker", 2, 0, 1, 1, 0 } },
		/* suspended (Kueue): no pod at all, both pending */
		{ "{\"ready\": 0, \"terminating\": 0, \"conditions\": [{\"type\": \"Suspended\","
		  " \"status\": \"True\", \"reason\": \"JobSuspended\"}]}", { "worker", 2, 2, 0, 0, 0 } },
		{ "{\"succeeded\": 2, \"ready\": 0, \"terminating\": 0, \"completedIndexes\": \"0,1\","
		  " \"conditions\": [{\"type\": \"SuccessCriteriaMet\", \"status\": \"True\"},"
		  " {\"type\": \"Complete\", \"status\": \"True\"}]}", { "worker", 2, 0, 0, 2, 0 } },
		/* ended: what is not counted is not pending */
		{ "{\"failed\": 1, \"ready\": 0, \"terminating\": 0, \"conditions\": ["
		  " {\"type\": \"FailureTarget\", \"status\": \"True\"},"
		  " {\"type\": \"Failed\", \"status\": \"True\", \"reason\": \"PodFailurePolicy\"}]}",
		  { "worker", 2, 0, 0, 0, 1 } },
	};
	char json[1024], name[16];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct aj_owned_facts f;
		cJSON *job;

		snprintf(json, sizeof(json),
			 "{\"metadata\": {\"name\": \"t\"}, \"spec\": {\"completions\": 2, \"parallelism\": 2,"
			 " \"completionMode\": \"Indexed\", \"template\": {\"metadata\": {\"labels\":"
			 " {\"aj.dev/ajjob\": \"t\", \"aj.dev/task\": \"worker\"}}}}, \"status\": %s}",
			 rows[i].status);
		job = aj_test_summarize(&aj_runner_kube, json, &f);
		assert_int_equal(f.nr_tasks, 1);
		snprintf(name, sizeof(name), "row %zu", i);
		aj_test_task_is(name, &f.tasks[0], &rows[i].want);
		cJSON_Delete(job);
	}
}

/* The status of every turn that sees our Job says its task; one that does not, none. */
static void the_plan_carries_the_task(void **state)
{
	struct aj_seen s = { .now = 1000, .ajjob = "t", .prev = AJ_PHASE_SUBMITTED, .submitted = 1,
			     .submitted_at = 990, .storage_due = AJ_CACHE_DUE_UNKNOWN, .job = "t",
			     .uid = "u1", .exists = 1, .ours = 1,
			     .o = { "Running", 0, { 2, 0 }, 1, { { "worker", 2, 0, 2, 0, 0 } } } };
	struct aj_plan p;

	(void)state;
	aj_runner_kube.decide(&s, &p);
	assert_int_equal(p.nr_tasks, 1);
	assert_ptr_equal(p.tasks, s.o.tasks);
	/* not ours: a name conflict, no tasks of someone else's Job */
	s.submitted = 0;
	s.ours = 0;
	aj_runner_kube.decide(&s, &p);
	assert_string_equal(p.reason, "NameConflict");
	assert_int_equal(p.nr_tasks, 0);
	/* gone: none */
	s.submitted = 1;
	s.exists = 0;
	aj_runner_kube.decide(&s, &p);
	assert_string_equal(p.reason, "KubeJobDeleted");
	assert_int_equal(p.nr_tasks, 0);
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
};

/* A submitted AjJob "t" whose Job "t" is ours: prev phase, its flags, cancel, exists, Job facts. */
#define SEEN(prev_, pflags, cancel_, exists_, deleting_, phase_, flags_, active, succeeded)      \
	{ .now = 1000, .ajjob = "t", .prev = prev_, .prev_flags = pflags, .cancel = cancel_,     \
	  .submitted = 1, .submitted_at = 990, .storage_due = AJ_CACHE_DUE_UNKNOWN, .job = "t",  \
	  .uid = "u1", .exists = exists_, .deleting = deleting_, .ours = exists_,                \
	  .o = { phase_, flags_, { active, succeeded } } }

static const struct row rows[] = {
	{ "created, no pod yet", SEEN(AJ_PHASE_SUBMITTED, 0, 0, 1, 0, "Pending", 0, 0, 0),
	  0, 0, AJ_PHASE_SUBMITTED, "KubeJobPending", 0, "Job t is pending: 0 pods active, none ready", "" },
	{ "pods placed, none ready", SEEN(AJ_PHASE_SUBMITTED, 0, 0, 1, 0, "Pending", 0, 3, 0),
	  0, 0, AJ_PHASE_SUBMITTED, "KubeJobPending", 0, "Job t is pending: 3 pods active, none ready", "" },
	{ "a pod ready: Running, told", SEEN(AJ_PHASE_SUBMITTED, 0, 0, 1, 0, "Running", 0, 3, 0),
	  0, 0, AJ_PHASE_RUNNING, "KubeJobRunning", 0, "Job t is running: 3 pods active, 0 succeeded",
	  "KubeJobRunning" },
	{ "running again: no second event", SEEN(AJ_PHASE_RUNNING, 0, 0, 1, 0, "Running", 0, 2, 1),
	  0, 0, AJ_PHASE_RUNNING, "KubeJobRunning", 0, "Job t is running: 2 pods active, 1 succeeded", "" },
	{ "a disrupted pod is replaced: never back to Submitted",
	  SEEN(AJ_PHASE_RUNNING, 0, 0, 1, 0, "Pending", 0, 3, 0),
	  0, 0, AJ_PHASE_RUNNING, "KubeJobPending", 0, "Job t is pending: 3 pods active, none ready", "" },
	{ "failing: the pods stop first", SEEN(AJ_PHASE_RUNNING, 0, 0, 1, 0, "Failing", 0, 2, 0),
	  0, 0, AJ_PHASE_RUNNING, "KubeJobFailing", 0, "Job t is failing: 2 pods are being stopped", "" },
	{ "failing before it ran", SEEN(AJ_PHASE_SUBMITTED, 0, 0, 1, 0, "Failing", 0, 1, 0),
	  0, 0, AJ_PHASE_SUBMITTED, "KubeJobFailing", 0, "Job t is failing: 1 pods are being stopped", "" },
	{ "complete", SEEN(AJ_PHASE_RUNNING, 0, 0, 1, 0, "Complete", 0, 0, 4),
	  0, 0, AJ_PHASE_SUCCEEDED, "KubeJobComplete", 0, "Job t is Complete: all 4 indexes succeeded",
	  "KubeJobComplete!" },
	{ "failed: the Job's reason is read first", SEEN(AJ_PHASE_RUNNING, 0, 0, 1, 0, "Failed", 0, 0, 0),
	  FAIL, 0, AJ_PHASE_FAILED, NULL, 0, "", "" },
	{ "suspended for Kueue", SEEN(AJ_PHASE_SUBMITTED, 0, 0, 1, 0, "Suspended", 2u, 0, 0),
	  0, 0, AJ_PHASE_SUBMITTED, "KubeJobSuspended", S,
	  "Job t is suspended: waiting for Kueue to admit it", "KubeJobSuspended" },
	{ "still suspended: no second event", SEEN(AJ_PHASE_SUBMITTED, S, 0, 1, 0, "Suspended", 2u, 0, 0),
	  0, 0, AJ_PHASE_SUBMITTED, "KubeJobSuspended", S,
	  "Job t is suspended: waiting for Kueue to admit it", "" },
	{ "suspended by hand", SEEN(AJ_PHASE_SUBMITTED, 0, 0, 1, 0, "Suspended", 0, 0, 0),
	  0, 0, AJ_PHASE_SUBMITTED, "KubeJobSuspended", S, "Job t is suspended", "KubeJobSuspended" },
	{ "unsuspended by Kueue: where was it admitted?",
	  SEEN(AJ_PHASE_SUBMITTED, S, 0, 1, 0, "Running", 2u, 2, 0),
	  KUEUE, 0, AJ_PHASE_SUBMITTED, NULL, 0, "", "" },
	{ "admitted before we saw it suspended: where?",
	  SEEN(AJ_PHASE_SUBMITTED, 0, 0, 1, 0, "Pending", 2u, 2, 0),
	  KUEUE, 0, AJ_PHASE_SUBMITTED, NULL, 0, "", "" },
	{ "queued and running: not asked again", SEEN(AJ_PHASE_RUNNING, 0, 0, 1, 0, "Running", 2u, 2, 1),
	  0, 0, AJ_PHASE_RUNNING, "KubeJobRunning", 0, "Job t is running: 2 pods active, 1 succeeded", "" },
	{ "resumed by hand: nothing to ask", SEEN(AJ_PHASE_SUBMITTED, S, 0, 1, 0, "Running", 0, 2, 0),
	  0, 0, AJ_PHASE_RUNNING, "KubeJobRunning", 0, "Job t is running: 2 pods active, 0 succeeded",
	  "KubeJobResumed KubeJobRunning" },
	{ "suspended for Kueue past the grace: what does Kueue say?",
	  { .now = 1000, .ajjob = "t", .prev = AJ_PHASE_SUBMITTED, .prev_flags = S, .submitted = 1,
	    .submitted_at = 990, .reason_due = 1000, .storage_due = AJ_CACHE_DUE_UNKNOWN, .job = "t",
	    .uid = "u1", .exists = 1, .ours = 1, .o = { "Suspended", 2u, { 0, 0 } } },
	  KUEUE, 0, AJ_PHASE_SUBMITTED, NULL, 0, "", "" },
	{ "suspended again while running (Kueue preempted it)",
	  SEEN(AJ_PHASE_RUNNING, 0, 0, 1, 0, "Suspended", 2u, 0, 0),
	  0, 0, AJ_PHASE_RUNNING, "KubeJobSuspended", S,
	  "Job t is suspended: waiting for Kueue to admit it", "KubeJobSuspended" },
	{ "deleted behind our back", SEEN(AJ_PHASE_RUNNING, 0, 0, 0, 0, NULL, 0, 0, 0),
	  0, 0, AJ_PHASE_FAILED, "KubeJobDeleted", 0, "Job t was deleted before it finished",
	  "KubeJobDeleted!" },
	{ "cancel: delete the Job", SEEN(AJ_PHASE_RUNNING, 0, 1, 1, 0, "Running", 0, 2, 0),
	  0, 1, AJ_PHASE_CANCELLING, "Cancelling", 0,
	  "cancelling (aj.dev/cancel): Job t is being deleted with its pods", "Cancelling" },
	{ "cancel under way: no second delete", SEEN(AJ_PHASE_CANCELLING, 0, 1, 1, 1, "Running", 0, 2, 0),
	  0, 0, AJ_PHASE_CANCELLING, "Cancelling", 0,
	  "cancelling (aj.dev/cancel): Job t is being deleted with its pods", "" },
	{ "Job gone: are its pods?", SEEN(AJ_PHASE_CANCELLING, 0, 1, 0, 0, NULL, 0, 0, 0),
	  PODS, 0, AJ_PHASE_CANCELLING, NULL, 0, "", "" },
	{ "cancel after the end keeps the outcome", SEEN(AJ_PHASE_RUNNING, 0, 1, 1, 0, "Complete", 0, 0, 2),
	  0, 0, AJ_PHASE_SUCCEEDED, "KubeJobComplete", 0, "Job t is Complete: all 2 indexes succeeded",
	  "KubeJobComplete!" },
};

static void every_observation_gives_its_plan(void **state)
{
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct aj_plan p;
		int del;

		aj_runner_kube.decide(&r->seen, &p);
		if (p.need != r->need)
			fail_msg("%s: need %u, expected %u", r->name, p.need, r->need);
		if (p.need)
			continue;
		del = !!(p.act & AJ_DO_DELETE);
		if (!(p.act & AJ_DO_STATUS) || !p.submitted || del != r->delete_job ||
		    p.phase != r->phase || p.flags != r->flags || strcmp(p.reason, r->reason) ||
		    strcmp(p.message, r->message))
			fail_msg("%s: got delete %d phase %s reason %s flags %u message \"%s\"", r->name,
				 del, aj_phase_name(p.phase), p.reason, p.flags, p.message);
		aj_test_plan_events(r->name, r->events, &p);
	}
}

/* The second decision, once the Job's Failed condition was read. */
static void the_failure_is_named(void **state)
{
	struct aj_seen s = SEEN(AJ_PHASE_RUNNING, 0, 0, 1, 0, "Failed", 0, 0, 0);
	struct aj_plan p;

	(void)state;
	s.have = FAIL;
	s.failure = "PodFailurePolicy: Container worker for pod ns/t-1-abcde failed with exit code 3 "
		    "matching FailJob rule at index 1";
	aj_runner_kube.decide(&s, &p);
	assert_int_equal(p.need, 0);
	assert_int_equal(p.phase, AJ_PHASE_FAILED);
	assert_string_equal(p.reason, "KubeJobFailed");
	assert_string_equal(p.message, "Job t is Failed: PodFailurePolicy: Container worker for pod "
				       "ns/t-1-abcde failed with exit code 3 matching FailJob rule at index 1");
	assert_int_equal(p.nr_events, 1);
	assert_true(p.events[0].warning);
	assert_true(p.events[0].once);
	s.failure = NULL;
	aj_runner_kube.decide(&s, &p);
	assert_string_equal(p.message, "Job t is Failed: (the Job gives no reason)");
}

/* A WorkloadList holding the one Workload Kueue made for Job t (uid u1). */
#define WL(spec, status)                                                                         \
	"{\"apiVersion\": \"kueue.x-k8s.io/v1beta2\", \"kind\": \"WorkloadList\", \"items\": [{"      \
	"\"metadata\": {\"name\": \"job-t-5d7c1\", \"namespace\": \"training\", \"labels\": "         \
	"{\"kueue.x-k8s.io/job-uid\": \"u1\"}}, \"spec\": {\"queueName\": \"team-a\", \"podSets\": "  \
	"[{\"name\": \"main\", \"count\": 2}]" spec "}, \"status\": {" status "}}]}"
#define COND(type, status, reason, message)                                                      \
	"{\"type\": \"" type "\", \"status\": \"" status "\", \"lastTransitionTime\": "              \
	"\"2026-12-01T10:00:00Z\", \"observedGeneration\": 1, \"reason\": \"" reason "\", "          \
	"\"message\": \"" message "\"}"
/* Kueue v0.17's words for a Job of two 8-GPU ranks while two others hold the 64 GPUs */
#define OVER "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu in " \
	"flavor cpu, previously considered podsets requests (0) + current podset request (16) > " \
	"maximum capacity (0), insufficient unused quota for cpu in flavor a100, 64 more needed, " \
	"insufficient unused quota for cpu in flavor h100, 64 more needed, insufficient unused "   \
	"quota for nvidia.com/gpu in flavor a100, 16 more needed, insufficient unused quota for "  \
	"nvidia.com/gpu in flavor h100, 16 more needed"
/* ...and once one of them holds 8 GPUs less */
#define OVER_8 "couldn't assign flavors to pod set main: insufficient quota for nvidia.com/gpu " \
	"in flavor cpu, previously considered podsets requests (0) + current podset request (16) " \
	"> maximum capacity (0), insufficient unused quota for cpu in flavor a100, 64 more "       \
	"needed, insufficient unused quota for cpu in flavor h100, 64 more needed, insufficient "  \
	"unused quota for nvidia.com/gpu in flavor a100, 8 more needed, insufficient unused "      \
	"quota for nvidia.com/gpu in flavor h100, 16 more needed"
#define ADMISSION "\"admission\": {\"clusterQueue\": \"team-a\", \"podSetAssignments\": [{"    \
	"\"name\": \"main\", \"flavors\": {\"cpu\": \"a100\", \"memory\": \"a100\", "              \
	"\"nvidia.com/gpu\": \"a100\"}, \"count\": 2}]}, "
#define PENDING_WL WL("", "\"conditions\": [" COND("QuotaReserved", "False", "Pending", OVER) "]")
#define ADMITTED_WL                                                                              \
	WL("", ADMISSION "\"conditions\": ["                                                       \
	   COND("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue team-a") \
	   ", " COND("Admitted", "True", "Admitted", "The workload is admitted") "]")

/* What Kueue says of a queued Job (its Workload) and the status the AjJob gets from it. */
static void kueue_s_word_is_the_status(void **state)
{
	static const struct {
		const char *name;
		const char *workloads;   /* the list of the Job's Workload; NULL: no Kueue (404) */
		const char *phase;       /* the Job's */
		unsigned prev_flags;
		const char *prev_reason; /* the Unschedulable condition's message */
		enum aj_phase want_phase;
		const char *reason;
		unsigned flags;
		const char *message, *unschedulable, *events;
	} said[] = {
		{ "over quota: Kueue's reason and message, told", PENDING_WL, "Suspended", S, NULL,
		  AJ_PHASE_SUBMITTED, "Unschedulable", S | U,
		  "Job t is suspended, not admitted by Kueue: Pending: " OVER, "Pending: " OVER,
		  "Unschedulable" },
		{ "...first seen suspended: both told", PENDING_WL, "Suspended", 0, NULL,
		  AJ_PHASE_SUBMITTED, "Unschedulable", S | U,
		  "Job t is suspended, not admitted by Kueue: Pending: " OVER, "Pending: " OVER,
		  "KubeJobSuspended Unschedulable" },
		{ "...the same reason at the next look: no second Event", PENDING_WL, "Suspended",
		  S | U, "Pending: " OVER, AJ_PHASE_SUBMITTED, "Unschedulable", S | U,
		  "Job t is suspended, not admitted by Kueue: Pending: " OVER, "Pending: " OVER, "" },
		{ "...a changed reason: told again", PENDING_WL, "Suspended", S | U, "Pending: " OVER_8,
		  AJ_PHASE_SUBMITTED, "Unschedulable", S | U,
		  "Job t is suspended, not admitted by Kueue: Pending: " OVER, "Pending: " OVER,
		  "Unschedulable" },
		{ "no LocalQueue of that name: Inadmissible",
		  WL("", "\"conditions\": [" COND("QuotaReserved", "False", "Inadmissible",
						  "LocalQueue team-a doesn't exist") "]"),
		  "Suspended", S, NULL, AJ_PHASE_SUBMITTED, "Unschedulable", S | U,
		  "Job t is suspended, not admitted by Kueue: Inadmissible: LocalQueue team-a doesn't exist",
		  "Inadmissible: LocalQueue team-a doesn't exist", "Unschedulable" },
		{ "quota reserved, an admission check not ready",
		  WL("", "\"conditions\": ["
		     COND("QuotaReserved", "True", "QuotaReserved", "Quota reserved in ClusterQueue team-a")
		     ", " COND("Admitted", "False", "UnsatisfiedChecks", "The workload has not all checks ready") "]"),
		  "Suspended", S, NULL, AJ_PHASE_SUBMITTED, "Unschedulable", S | U,
		  "Job t is suspended, not admitted by Kueue: UnsatisfiedChecks: The workload has not all "
		  "checks ready", "UnsatisfiedChecks: The workload has not all checks ready", "Unschedulable" },
		{ "deactivated: its Evicted condition, not the last try's quota",
		  WL(", \"active\": false", "\"conditions\": [" COND("QuotaReserved", "False", "Pending", OVER)
		     ", " COND("Evicted", "True", "Deactivated", "The workload is deactivated") "]"),
		  "Suspended", S, NULL, AJ_PHASE_SUBMITTED, "Unschedulable", S | U,
		  "Job t is suspended, not admitted by Kueue: Deactivated: The workload is deactivated",
		  "Deactivated: The workload is deactivated", "Unschedulable" },
		{ "a reason without a message", WL("", "\"conditions\": [" COND("QuotaReserved", "False", "Pending", "") "]"),
		  "Suspended", S, NULL, AJ_PHASE_SUBMITTED, "Unschedulable", S | U,
		  "Job t is suspended, not admitted by Kueue: Pending", "Pending", "Unschedulable" },
		{ "no Workload yet", "{\"kind\": \"WorkloadList\", \"items\": []}", "Suspended", S, NULL,
		  AJ_PHASE_SUBMITTED, "KubeJobSuspended", S,
		  "Job t is suspended: waiting for Kueue to admit it", NULL, "" },
		{ "no Kueue at all (its CRD is not served): nothing changes", NULL, "Suspended", S, NULL,
		  AJ_PHASE_SUBMITTED, "KubeJobSuspended", S,
		  "Job t is suspended: waiting for Kueue to admit it", NULL, "" },
		{ "Kueue has not looked yet: the reason it had goes", WL("", "\"conditions\": []"),
		  "Suspended", S | U, "Pending: " OVER, AJ_PHASE_SUBMITTED, "KubeJobSuspended", S,
		  "Job t is suspended: waiting for Kueue to admit it", NULL, "" },
		{ "admitted, not unsuspended yet", ADMITTED_WL, "Suspended", S | U, "Pending: " OVER,
		  AJ_PHASE_SUBMITTED, "KubeJobSuspended", S,
		  "Job t is suspended; admitted by Kueue to ClusterQueue team-a", NULL, "" },
		{ "admitted and unsuspended, pods not ready yet", ADMITTED_WL, "Pending", S | U,
		  "Pending: " OVER, AJ_PHASE_SUBMITTED, "KubeJobPending", 0,
		  "Job t is pending: 2 pods active, none ready; admitted by Kueue to ClusterQueue team-a",
		  NULL, "KubeJobResumed" },
		{ "admitted and running", ADMITTED_WL, "Running", S | U, "Pending: " OVER,
		  AJ_PHASE_RUNNING, "KubeJobRunning", 0,
		  "Job t is running: 2 pods active, 0 succeeded; admitted by Kueue to ClusterQueue team-a",
		  NULL, "KubeJobResumed KubeJobRunning" },
		{ "unsuspended, its Workload gone: no queue to name", "{\"items\": []}", "Running", S, NULL,
		  AJ_PHASE_RUNNING, "KubeJobRunning", 0, "Job t is running: 2 pods active, 0 succeeded",
		  NULL, "KubeJobResumed KubeJobRunning" },
		{ "admitted before we saw it suspended: told as it runs", ADMITTED_WL, "Running", 0, NULL,
		  AJ_PHASE_RUNNING, "KubeJobRunning", 0,
		  "Job t is running: 2 pods active, 0 succeeded; admitted by Kueue to ClusterQueue team-a",
		  NULL, "KubeJobRunning" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(said) / sizeof(said[0]); i++) {
		struct aj_seen s = SEEN(AJ_PHASE_SUBMITTED, said[i].prev_flags, 0, 1, 0, said[i].phase,
					2u, 2, 0);
		cJSON *list = said[i].workloads ? cJSON_Parse(said[i].workloads) : NULL;
		char text[512];
		struct aj_plan p;

		if (said[i].workloads && !list)
			fail_msg("%s: the Workload is no JSON", said[i].name);
		s.prev_reason = said[i].prev_reason;
		aj_kube_workload_seen(list, &s, text, sizeof(text));
		assert_int_equal(s.have, KUEUE);
		aj_runner_kube.decide(&s, &p);
		if (p.need || !(p.act & AJ_DO_STATUS) || p.phase != said[i].want_phase ||
		    strcmp(p.reason, said[i].reason) || p.flags != said[i].flags ||
		    strcmp(p.message, said[i].message) ||
		    (said[i].unschedulable ? !p.unschedulable || strcmp(p.unschedulable,
									said[i].unschedulable)
					   : p.unschedulable != NULL))
			fail_msg("%s: got need %u phase %s reason %s flags %u message \"%s\" "
				 "unschedulable \"%s\"", said[i].name, p.need, aj_phase_name(p.phase),
				 p.reason, p.flags, p.message, p.unschedulable ? p.unschedulable : "(null)");
		aj_test_plan_events(said[i].name, said[i].events, &p);
		/* asked now: the next look after as long as it has waited (10 s: 15 s at least) */
		if ((p.flags & S) && (p.reason_due != 1015 || p.requeue_after != 15 || !p.requeue_idle))
			fail_msg("%s: next look at %lld, in %g s", said[i].name, p.reason_due,
				 p.requeue_after);
		cJSON_Delete(list);
	}
}

/* Kueue's message is cut to the room it has, never overrun. */
static void a_long_reason_is_cut(void **state)
{
	struct aj_seen s = SEEN(AJ_PHASE_SUBMITTED, S, 0, 1, 0, "Suspended", 2u, 0, 0);
	cJSON *list = cJSON_Parse(PENDING_WL);
	char text[32];

	(void)state;
	assert_non_null(list);
	aj_kube_workload_seen(list, &s, text, sizeof(text));
	assert_string_equal(s.reason, "Pending: couldn't assign flavor");   /* 31 bytes and the NUL */
	assert_null(s.admitted_to);
	cJSON_Delete(list);
	list = cJSON_Parse(ADMITTED_WL);
	assert_non_null(list);
	aj_kube_workload_seen(list, &s, text, sizeof(text));
	assert_null(s.reason);
	assert_string_equal(s.admitted_to, "team-a");
	cJSON_Delete(list);
}

/* The Job's name: the AjJob's when it fits the pods' host names, else a prefix and a hash. */
static void object_names(void **state)
{
	char out[128];

	(void)state;
	aj_runner_kube.object_name("train-1", out, sizeof(out));
	assert_string_equal(out, "train-1");
	aj_runner_kube.object_name("7up.run", out, sizeof(out));
	assert_string_equal(out, "j-7up-run");
	aj_runner_kube.object_name("a-very-long-ajjob-name-that-goes-on-and-on-past-the-limit-of-the-pods",
				   out, sizeof(out));
	/* 57 - 9 bytes of prefix, its trailing '-' dropped, then '-' and eight hex digits */
	assert_int_equal(strlen(out), 47 + 9);
	assert_memory_equal(out, "a-very-long-ajjob-name-that-goes-on-and-on-past-", 48);
	assert_int_equal(strspn(out + 48, "0123456789abcdef"), 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(summarize_reads_conditions_and_counts),
		cmocka_unit_test(summarize_counts_the_pods_of_the_one_task),
		cmocka_unit_test(the_plan_carries_the_task),
		cmocka_unit_test(every_observation_gives_its_plan),
		cmocka_unit_test(the_failure_is_named),
		cmocka_unit_test(kueue_s_word_is_the_status),
		cmocka_unit_test(a_long_reason_is_cut),
		cmocka_unit_test(object_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
