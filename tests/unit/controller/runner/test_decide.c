/*
 * The decisions every runner shares and the generic ones
 * (controller/runner/decide.c): object names, what a refused create means,
 * the time to live and the plan it makes, the unresolved AjJob, the lines
 * every cluster runner's mirror ends with, and the one action a final plan
 * ends with. Expected values written by hand from runner.h.
 */
#include "support.h"

#include <stdio.h>
#include <string.h>

#include "runner/runner.h"

/* Object names: the AjJob's when it is a short DNS label, else made one. */
static void object_names_derive_from_the_ajjob_alone(void **state)
{
	char a[64], b[64], c[64];
	const char *sixty = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

	(void)state;
	aj_runner_object_name("train-1", 45, a, sizeof(a));
	assert_string_equal(a, "train-1");
	aj_runner_object_name("Train.x", 45, a, sizeof(a));
	assert_string_equal(a, "j--rain-x");
	aj_runner_object_name("7b", 45, a, sizeof(a));
	assert_string_equal(a, "j-7b");
	/* too long: 36 characters, '-', 8 hex digits of a hash of the whole name */
	aj_runner_object_name(sixty, 45, a, sizeof(a));
	aj_runner_object_name(sixty, 45, b, sizeof(b));
	assert_int_equal(strlen(a), 45);
	assert_int_equal(strncmp(a, sixty, 36), 0);
	assert_int_equal(a[36], '-');
	assert_string_equal(a, b);
	aj_runner_object_name("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab", 45, c, sizeof(c));
	assert_string_not_equal(a, c);
	/* a shorter limit for another runner */
	aj_runner_object_name(sixty, 20, a, sizeof(a));
	assert_int_equal(strlen(a), 20);
}

static void rejections_that_fail_the_ajjob(void **state)
{
	static const struct {
		long code;
		int rejected;
	} codes[] = {
		{ 400, 1 }, { 403, 1 }, { 422, 1 }, { 413, 1 },
		{ 401, 0 }, { 404, 0 }, { 409, 0 }, { 429, 0 },
		{ 0, 0 }, { 500, 0 }, { 503, 0 }, { 504, 0 }, { 200, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (aj_create_rejected(codes[i].code) != codes[i].rejected)
			fail_msg("HTTP %ld: rejected %d, expected %d", codes[i].code,
				 !codes[i].rejected, codes[i].rejected);
}

/* A finished AjJob's time to live, like a batch/v1 Job's; the clock is 1000. */
static void finished_ajjobs_are_deleted_when_their_time_is_up(void **state)
{
	static const struct {
		const char *name;
		long long ttl, dflt, finished;
		int want;
		long long wait;
	} ttls[] = {
		{ "not due: come back for the rest", 30, 0, 990, AJ_TTL_WAIT, 20 },
		{ "due to the second: delete", 10, 0, 990, AJ_TTL_DELETE, 0 },
		{ "long overdue (a restarted controller): delete", 10, 0, 100, AJ_TTL_DELETE, 0 },
		{ "0: never", 0, 0, 100, AJ_TTL_KEEP, 0 },
		{ "not set, no default: never", -1, 0, 100, AJ_TTL_KEEP, 0 },
		{ "not set: the controller's default", -1, 60, 990, AJ_TTL_WAIT, 50 },
		{ "the field overrides the default", 5, 60, 990, AJ_TTL_DELETE, 0 },
		{ "0 in the field keeps it despite a default", 0, 60, 100, AJ_TTL_KEEP, 0 },
		{ "clock skew: finished ahead of now, the whole time from then", 10, 0, 1030,
		  AJ_TTL_WAIT, 40 },
		{ "finish time unknown: kept", 10, 0, 0, AJ_TTL_KEEP, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(ttls) / sizeof(ttls[0]); i++) {
		long long wait = -1;
		int d = aj_decide_ttl(ttls[i].ttl, ttls[i].dflt, ttls[i].finished, 1000, &wait);

		if (d != ttls[i].want || wait != ttls[i].wait)
			fail_msg("%s: %d wait %lld, expected %d wait %lld", ttls[i].name, d, wait,
				 ttls[i].want, ttls[i].wait);
	}
}

/* A finished AjJob's plan: wait, delete (told as Expired), or keep. */
static void a_finished_ajjob_waits_for_its_time_to_live(void **state)
{
	struct aj_seen s;
	struct aj_plan p;
	struct aj_action a;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.now = 1000;
	s.finished_at = 990;
	s.ttl = -1;
	s.ttl_default = 60;
	aj_decide_finished(&s, &p);
	a = aj_plan_action(&p);
	assert_int_equal(p.act, 0);
	assert_int_equal(a.kind, AJ_ACTION_AGAIN);
	assert_true(a.after == 50 && a.level == AJ_ACTION_NORMAL);
	s.ttl = 5;
	aj_decide_finished(&s, &p);
	assert_int_equal(p.act, AJ_DO_EXPIRE);
	aj_test_plan_events("expired", "Expired", &p);
	assert_string_equal(p.events[0].note, "Deleted after ttlSecondsAfterFinished: 5 s after it finished");
	assert_int_equal(aj_plan_action(&p).kind, AJ_ACTION_DONE);
	s.ttl = 0;
	aj_decide_finished(&s, &p);
	assert_int_equal(p.act, 0);
	assert_int_equal(aj_plan_action(&p).kind, AJ_ACTION_DONE);
}

/* An AjJob no runner of ours serves: Failed with the reason, or Cancelled when asked. */
static void an_unresolved_ajjob_fails_or_is_cancelled(void **state)
{
	struct aj_seen s;
	struct aj_plan p;

	(void)state;
	memset(&s, 0, sizeof(s));
	s.build_error = "backend aml is not served by this controller";
	aj_decide_unresolved(&s, &p);
	assert_int_equal(p.act, AJ_DO_STATUS);
	assert_int_equal(p.phase, AJ_PHASE_FAILED);
	assert_string_equal(p.reason, "InvalidTemplate");
	assert_string_equal(p.message, "backend aml is not served by this controller");
	aj_test_plan_events("unresolved", "InvalidTemplate", &p);
	s.cancel = 1;
	aj_decide_unresolved(&s, &p);
	assert_int_equal(p.phase, AJ_PHASE_CANCELLED);
	aj_test_plan_events("cancelled", "Cancelled", &p);
}

/* A runner whose object mirrors as the test says (its phase word is the AjJob phase). */
static void stub_mirror(const struct aj_seen *s, struct aj_plan *p)
{
	p->phase = !strcmp(s->o.phase, "Running") ? AJ_PHASE_RUNNING : AJ_PHASE_SUBMITTED;
	p->reason = "StubJobSomething";
	if (!strcmp(s->o.phase, "Suspended"))
		p->flags |= AJ_STATUS_FLAG(AJ_COND_SUSPENDED);
	snprintf(p->message, sizeof(p->message), "stub %s", s->o.phase);
}

static void stub_finished(const struct aj_seen *s, struct aj_plan *p)
{
	(void)s;
	p->phase = AJ_PHASE_SUCCEEDED;
}

/* After a mirror, every cluster runner's lines: Resumed, never back, Running once. */
static void every_cluster_runner_ends_its_mirror_alike(void **state)
{
	static const char *const services[] = { "stub", NULL };
	static const struct aj_runner stub = { .name = "stub", .services = services,
					       .kind = "Stub Job", .reason_prefix = "StubJob" };
	static const struct {
		const char *name, *phase;
		enum aj_phase prev;
		unsigned prev_flags;
		enum aj_phase want;
		const char *events;
	} rows[] = {
		{ "starts running: told once", "Running", AJ_PHASE_SUBMITTED, 0, AJ_PHASE_RUNNING,
		  "StubJobRunning" },
		{ "still running: nothing to tell", "Running", AJ_PHASE_RUNNING, 0, AJ_PHASE_RUNNING, "" },
		{ "suspended after it ran: still Running", "Suspended", AJ_PHASE_RUNNING, 0,
		  AJ_PHASE_RUNNING, "" },
		{ "resumed straight into running", "Running", AJ_PHASE_SUBMITTED,
		  AJ_STATUS_FLAG(AJ_COND_SUSPENDED), AJ_PHASE_RUNNING, "StubJobResumed StubJobRunning" },
		{ "resumed, pending", "Pending", AJ_PHASE_SUBMITTED, AJ_STATUS_FLAG(AJ_COND_SUSPENDED),
		  AJ_PHASE_SUBMITTED, "StubJobResumed" },
		{ "still suspended", "Suspended", AJ_PHASE_SUBMITTED, AJ_STATUS_FLAG(AJ_COND_SUSPENDED),
		  AJ_PHASE_SUBMITTED, "" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct aj_seen s;
		struct aj_plan p;

		memset(&s, 0, sizeof(s));
		s.now = 1000;
		s.submitted = s.exists = s.ours = 1;
		s.job = "t";
		s.o.phase = rows[i].phase;
		s.prev = rows[i].prev;
		s.prev_flags = rows[i].prev_flags;
		assert_int_equal(aj_decide_owned(&stub, &s, 0, stub_finished, stub_mirror, &p), 0);
		if (p.phase != rows[i].want)
			fail_msg("%s: phase %s", rows[i].name, aj_phase_name(p.phase));
		aj_test_plan_events(rows[i].name, rows[i].events, &p);
	}
}

/* The one action of a final plan: retry, the earliest time asked (a tie to the higher level), or done. */
static void a_final_plan_ends_with_one_action(void **state)
{
	static const struct {
		const char *name;
		unsigned act;
		int low, idle;
		double after;
		long long storage;
		enum aj_action_kind kind;
		double want_after;
		enum aj_action_level level;
	} rows[] = {
		{ "nothing asked: done", AJ_DO_STATUS, 0, 0, 0, 0, AJ_ACTION_DONE, 0, AJ_ACTION_NORMAL },
		{ "retry wins over everything", AJ_DO_RETRY, 1, 0, 5, 60, AJ_ACTION_RETRY, 0,
		  AJ_ACTION_NORMAL },
		{ "the status next, behind the creates", 0, 1, 0, 0, 0, AJ_ACTION_AGAIN, 0, AJ_ACTION_LOW },
		{ "a poll at the idle level", 0, 0, 1, 30, 0, AJ_ACTION_AGAIN, 30, AJ_ACTION_IDLE },
		{ "a look-up at the normal level", 0, 0, 0, 2, 0, AJ_ACTION_AGAIN, 2, AJ_ACTION_NORMAL },
		{ "the renewal sooner than the poll", 0, 0, 1, 30, 20, AJ_ACTION_AGAIN, 20,
		  AJ_ACTION_NORMAL },
		{ "the poll sooner than the renewal", 0, 0, 1, 6, 3600, AJ_ACTION_AGAIN, 6, AJ_ACTION_IDLE },
		{ "a tie: the higher level", 0, 0, 1, 60, 60, AJ_ACTION_AGAIN, 60, AJ_ACTION_NORMAL },
		{ "now at low beats later", 0, 1, 1, 6, 60, AJ_ACTION_AGAIN, 0, AJ_ACTION_LOW },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct aj_plan p;
		struct aj_action a;

		memset(&p, 0, sizeof(p));
		p.act = rows[i].act;
		p.requeue_low = rows[i].low;
		p.requeue_idle = rows[i].idle;
		p.requeue_after = rows[i].after;
		p.storage_requeue = rows[i].storage;
		a = aj_plan_action(&p);
		if (a.kind != rows[i].kind || (a.kind == AJ_ACTION_AGAIN &&
					       (a.after != rows[i].want_after || a.level != rows[i].level)))
			fail_msg("%s: %d after %g level %d", rows[i].name, a.kind, a.after, a.level);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(object_names_derive_from_the_ajjob_alone),
		cmocka_unit_test(rejections_that_fail_the_ajjob),
		cmocka_unit_test(finished_ajjobs_are_deleted_when_their_time_is_up),
		cmocka_unit_test(a_finished_ajjob_waits_for_its_time_to_live),
		cmocka_unit_test(an_unresolved_ajjob_fails_or_is_cancelled),
		cmocka_unit_test(every_cluster_runner_ends_its_mirror_alike),
		cmocka_unit_test(a_final_plan_ends_with_one_action),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
