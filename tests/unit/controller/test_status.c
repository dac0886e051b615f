#include "support.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "status.h"

static const cJSON *cond(const cJSON *s, const char *type)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItem(s, "conditions"))
		if (!strcmp(cJSON_GetObjectItem(c, "type")->valuestring, type))
			return c;
	fail_msg("no condition %s", type);
	return NULL;
}

static const char *field(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItem(o, k)->valuestring;
}

static void phases_are_ranked_so_none_goes_back(void **state)
{
	(void)state;
	assert_int_equal(aj_phase_rank(AJ_PHASE_PENDING), 0);
	assert_int_equal(aj_phase_rank(AJ_PHASE_SUBMITTED), 1);
	assert_int_equal(aj_phase_rank(AJ_PHASE_RUNNING), 2);
	assert_int_equal(aj_phase_rank(AJ_PHASE_CANCELLING), 3);
	assert_int_equal(aj_phase_rank(AJ_PHASE_SUCCEEDED), 4);
	assert_int_equal(aj_phase_rank(AJ_PHASE_FAILED), 4);
	assert_int_equal(aj_phase_rank(AJ_PHASE_CANCELLED), 4);
	assert_true(aj_phase_terminal(AJ_PHASE_CANCELLED));
	assert_false(aj_phase_terminal(AJ_PHASE_CANCELLING));
	assert_false(aj_phase_terminal(AJ_PHASE_RUNNING));
}

/* Restarting, Suspended, Unschedulable and status.retryCount. */
static void the_lifecycle_conditions_and_the_retry_count(void **state)
{
	struct aj_status st = { AJ_PHASE_RUNNING, 1, "VolcanoJobRestarting",
				"Volcano Job t is Restarting: restart 2 of at most 3", "volcano", 1,
				"volcano", "t", 0, 2, AJ_STATUS_FLAG(AJ_COND_RESTARTING), NULL,
				NULL, 0, NULL, 0 };
	cJSON *s1, *s2, *s3;
	int changed;

	(void)state;
	s1 = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(s1, "conditions")), 7);
	assert_int_equal(cJSON_GetObjectItem(s1, "retryCount")->valueint, 2);
	assert_string_equal(field(cond(s1, "Restarting"), "status"), "True");
	assert_string_equal(field(cond(s1, "Restarting"), "message"),
			    "Volcano Job t is Restarting: restart 2 of at most 3");
	assert_string_equal(field(cond(s1, "Running"), "status"), "True");
	assert_string_equal(field(cond(s1, "Suspended"), "status"), "False");
	assert_string_equal(field(cond(s1, "Suspended"), "message"), "");
	assert_string_equal(field(cond(s1, "Unschedulable"), "status"), "False");

	/* retry count 0 keeps the one written; Unschedulable carries the scheduler's words */
	st.phase = AJ_PHASE_SUBMITTED;
	st.retry_count = 0;
	st.flags = AJ_STATUS_FLAG(AJ_COND_UNSCHEDULABLE);
	st.unschedulable = "0/0 tasks in gang unschedulable";
	st.message = "Volcano Job t is Pending: 0/0 tasks in gang unschedulable";
	s2 = aj_status_next(s1, &st, "2026-01-01T00:01:00Z", &changed);
	assert_true(changed);
	assert_int_equal(cJSON_GetObjectItem(s2, "retryCount")->valueint, 2);
	assert_string_equal(field(cond(s2, "Unschedulable"), "status"), "True");
	assert_string_equal(field(cond(s2, "Unschedulable"), "message"),
			    "0/0 tasks in gang unschedulable");
	assert_string_equal(field(cond(s2, "Unschedulable"), "lastTransitionTime"),
			    "2026-01-01T00:01:00Z");
	assert_string_equal(field(cond(s2, "Restarting"), "status"), "False");

	/* Suspended; a job never restarted has no retryCount */
	st.flags = AJ_STATUS_FLAG(AJ_COND_SUSPENDED);
	st.unschedulable = NULL;
	s3 = aj_status_next(NULL, &st, "2026-01-01T00:02:00Z", &changed);
	assert_null(cJSON_GetObjectItem(s3, "retryCount"));
	assert_string_equal(field(cond(s3, "Suspended"), "status"), "True");
	assert_string_equal(field(cond(s3, "Unschedulable"), "status"), "False");
	cJSON_Delete(s1);
	cJSON_Delete(s2);
	cJSON_Delete(s3);
}

static void transitions_move_only_the_conditions_that_flip(void **state)
{
	struct aj_status st = { AJ_PHASE_SUBMITTED, 1, "VolcanoJobCreated",
				"created Volcano Job train-x", "volcano", 1, "volcano", "train-x", 0, 0, 0,
				NULL, NULL, 0, NULL, 0 };
	cJSON *s1, *s2, *s3;
	int changed;

	(void)state;
	s1 = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_non_null(s1);
	assert_true(changed);
	assert_string_equal(field(s1, "phase"), "Submitted");
	assert_string_equal(field(s1, "backend"), "volcano");
	assert_int_equal(cJSON_GetObjectItem(s1, "observedGeneration")->valueint, 1);
	assert_string_equal(field(cJSON_GetObjectItem(s1, "volcano"), "jobName"), "train-x");
	assert_string_equal(field(cond(s1, "Submitted"), "status"), "True");
	assert_string_equal(field(cond(s1, "Running"), "status"), "False");
	assert_string_equal(field(cond(s1, "Failed"), "status"), "False");

	/* Same observation later: nothing to write. */
	s2 = aj_status_next(s1, &st, "2026-01-01T00:05:00Z", &changed);
	assert_false(changed);
	cJSON_Delete(s2);

	/* Running: only Running flips; Submitted keeps its time. job NULL keeps it. */
	st.phase = AJ_PHASE_RUNNING;
	st.reason = "VolcanoJobRunning";
	st.job = NULL;
	s3 = aj_status_next(s1, &st, "2026-01-01T00:10:00Z", &changed);
	assert_true(changed);
	assert_string_equal(field(s3, "phase"), "Running");
	assert_string_equal(field(cond(s3, "Running"), "status"), "True");
	assert_string_equal(field(cond(s3, "Running"), "lastTransitionTime"), "2026-01-01T00:10:00Z");
	assert_string_equal(field(cond(s3, "Submitted"), "lastTransitionTime"), "2026-01-01T00:00:00Z");
	assert_string_equal(field(cJSON_GetObjectItem(s3, "volcano"), "jobName"), "train-x");
	cJSON_Delete(s1);
	cJSON_Delete(s3);
}

/* 1506484173 is 2017-09-27T03:49:33Z; the renewal time is kept until a new one is written. */
static void the_storage_renewal_time_is_written_and_kept(void **state)
{
	struct aj_status st = { AJ_PHASE_SUBMITTED, 1, "VolcanoJobCreated",
				"Volcano Job train-x submitted", "volcano", 1, "volcano", "train-x",
				1506484173, 0, 0, NULL, NULL, 0, NULL, 0 };
	cJSON *s1, *s2, *s3, *plain;
	int changed;

	(void)state;
	s1 = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_non_null(s1);
	assert_string_equal(field(cJSON_GetObjectItem(s1, "volcano"), "storageRenewAfter"),
			    "2017-09-27T03:49:33Z");
	/* mirroring a phase later writes none: the one written stays */
	st.storage_renew_after = 0;
	st.job = NULL;
	st.phase = AJ_PHASE_RUNNING;
	s2 = aj_status_next(s1, &st, "2026-01-01T00:05:00Z", &changed);
	assert_string_equal(field(cJSON_GetObjectItem(s2, "volcano"), "storageRenewAfter"),
			    "2017-09-27T03:49:33Z");
	/* a renewal replaces it, and that is a change to write */
	st.storage_renew_after = 1506484173 + 3600;
	s3 = aj_status_next(s2, &st, "2026-01-01T00:05:00Z", &changed);
	assert_true(changed);
	assert_string_equal(field(cJSON_GetObjectItem(s3, "volcano"), "storageRenewAfter"),
			    "2017-09-27T04:49:33Z");
	/* a job without storage has none */
	st.storage_renew_after = 0;
	st.job = "train-y";
	plain = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(plain, "volcano"), "storageRenewAfter"));
	cJSON_Delete(s1);
	cJSON_Delete(s2);
	cJSON_Delete(s3);
	cJSON_Delete(plain);
}

/* A placement's last attempt follows its job: Running, then its end; a fail-over's stay. */
static void the_last_attempt_follows_the_job(void **state)
{
	static const char *const kept[] = { AJ_STATUS_PLACEMENT, NULL };
	struct aj_status st = { AJ_PHASE_SUBMITTED, 1, "KubeJobCreated", "Job t submitted", "kube", 1,
				"kube", "t", 0, 0, 0, NULL, NULL, 0, kept, 2 };
	cJSON *prev = cJSON_Parse("{\"placement\": {\"chosen\": \"template/kube\", \"attempts\": ["
				  "{\"candidate\": \"template/volcano\", \"outcome\": \"GaveUp\"},"
				  "{\"candidate\": \"template/kube\", \"outcome\": \"Submitted\","
				  " \"submitted\": \"2026-01-01T00:00:00Z\"}]}}");
	cJSON *s1, *s2, *s3, *s4, *last;
	int changed;

	(void)state;
	assert_non_null(prev);
	s1 = aj_status_next(prev, &st, "2026-01-01T00:01:00Z", &changed);
	last = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(s1, "placement"), "attempts"), 1);
	assert_string_equal(field(last, "outcome"), "Submitted");
	st.phase = AJ_PHASE_RUNNING;
	s2 = aj_status_next(s1, &st, "2026-01-01T00:02:00Z", &changed);
	last = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(s2, "placement"), "attempts"), 1);
	assert_string_equal(field(last, "outcome"), "Running");
	assert_string_equal(field(last, "started"), "2026-01-01T00:02:00Z");
	assert_null(cJSON_GetObjectItem(last, "ended"));
	st.phase = AJ_PHASE_SUCCEEDED;
	s3 = aj_status_next(s2, &st, "2026-01-01T00:09:00Z", &changed);
	last = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(s3, "placement"), "attempts"), 1);
	assert_string_equal(field(last, "outcome"), "Succeeded");
	assert_string_equal(field(last, "started"), "2026-01-01T00:02:00Z");
	assert_string_equal(field(last, "ended"), "2026-01-01T00:09:00Z");
	/* the earlier attempt is untouched; one being cancelled by a fail-over is the fail-over's */
	assert_string_equal(field(cJSON_GetArrayItem(cJSON_GetObjectItem(
		cJSON_GetObjectItem(s3, "placement"), "attempts"), 0), "outcome"), "GaveUp");
	cJSON_SetValuestring(cJSON_GetObjectItem(last, "outcome"), "Cancelling");
	st.phase = AJ_PHASE_FAILED;
	s4 = aj_status_next(s3, &st, "2026-01-01T00:10:00Z", &changed);
	last = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(s4, "placement"), "attempts"), 1);
	assert_string_equal(field(last, "outcome"), "Cancelling");
	assert_string_equal(field(last, "ended"), "2026-01-01T00:09:00Z");
	cJSON_Delete(prev);
	cJSON_Delete(s1);
	cJSON_Delete(s2);
	cJSON_Delete(s3);
	cJSON_Delete(s4);
}

static void an_invalid_template_fails_without_submitting(void **state)
{
	struct aj_status st = { AJ_PHASE_FAILED, 0, "InvalidTemplate",
				"template/gpu.yaml:3:5: config.jobs[0].sku: required",
				"volcano", 2, "volcano", NULL, 0, 0, 0, NULL, NULL, 0, NULL, 0 };
	cJSON *s;
	int changed;

	(void)state;
	s = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_string_equal(field(s, "phase"), "Failed");
	assert_string_equal(field(cond(s, "Submitted"), "status"), "False");
	assert_string_equal(field(cond(s, "Submitted"), "reason"), "InvalidTemplate");
	assert_string_equal(field(cond(s, "Failed"), "status"), "True");
	assert_string_equal(field(cond(s, "Failed"), "message"),
			    "template/gpu.yaml:3:5: config.jobs[0].sku: required");
	assert_null(cJSON_GetObjectItem(s, "volcano"));
	cJSON_Delete(s);
}

/* status.tasks item by item, and the line of the Tasks column. */
static void the_tasks_and_their_summary(void **state)
{
	struct aj_task_pods tasks[] = {
		{ "master", 1, 0, 1, 0, 0 },
		{ "worker", 3, 1, 2, 0, 0 },
	};
	struct aj_status st = { AJ_PHASE_RUNNING, 1, "VolcanoJobRunning", "Volcano Job t is Running",
				"volcano", 1, "volcano", "t", 0, 0, 0, NULL, tasks, 2, NULL, 0 };
	const cJSON *t;
	cJSON *s1, *s2, *s3;
	int changed;

	(void)state;
	s1 = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(s1, "tasks")), 2);
	t = cJSON_GetArrayItem(cJSON_GetObjectItem(s1, "tasks"), 1);
	assert_string_equal(field(t, "name"), "worker");
	assert_int_equal(cJSON_GetObjectItem(t, "replicas")->valueint, 3);
	assert_int_equal(cJSON_GetObjectItem(t, "pending")->valueint, 1);
	assert_int_equal(cJSON_GetObjectItem(t, "running")->valueint, 2);
	assert_int_equal(cJSON_GetObjectItem(t, "succeeded")->valueint, 0);
	assert_int_equal(cJSON_GetObjectItem(t, "failed")->valueint, 0);
	assert_null(cJSON_GetObjectItem(t, "restarts"));
	assert_string_equal(field(s1, "tasksSummary"), "3/4 running, 1 pending");
	/* the same counts again: nothing to write; one pod more running: a change */
	s2 = aj_status_next(s1, &st, "2026-01-01T00:01:00Z", &changed);
	assert_false(changed);
	tasks[1].pending = 0;
	tasks[1].running = 3;
	s3 = aj_status_next(s2, &st, "2026-01-01T00:02:00Z", &changed);
	assert_true(changed);
	assert_string_equal(field(s3, "tasksSummary"), "4/4 running");
	cJSON_Delete(s1);
	cJSON_Delete(s2);
	cJSON_Delete(s3);
	/* no tasks known: neither member */
	st.nr_tasks = 0;
	s1 = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_null(cJSON_GetObjectItem(s1, "tasks"));
	assert_null(cJSON_GetObjectItem(s1, "tasksSummary"));
	cJSON_Delete(s1);
}

static void task_summaries_lead_with_where_the_pods_are_headed(void **state)
{
	static const struct {
		struct aj_task_pods t[2];
		size_t n;
		const char *line;
	} rows[] = {
		{ { { "worker", 2, 0, 2, 0, 0 } }, 1, "2/2 running" },
		{ { { "worker", 4, 4, 0, 0, 0 } }, 1, "0/4 running, 4 pending" },
		{ { { "worker", 2, 0, 0, 2, 0 } }, 1, "2/2 succeeded" },
		{ { { "worker", 2, 0, 0, 0, 1 } }, 1, "1/2 failed" },
		{ { { "master", 1, 0, 0, 1, 0 }, { "worker", 1, 0, 0, 0, 1 } }, 2, "1/2 failed, 1 succeeded" },
		{ { { "worker", 3, 0, 1, 1, 1 } }, 1, "1/3 running, 1 succeeded, 1 failed" },
		{ { { "worker", 2, 0, 1, 1, 0 } }, 1, "1/2 running, 1 succeeded" },
		{ { { "worker", 0, 0, 0, 0, 0 } }, 1, "0/0 running" },
	};
	char line[64], tiny[8];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		aj_status_tasks_summary(rows[i].t, rows[i].n, line, sizeof(line));
		if (strcmp(line, rows[i].line))
			fail_msg("row %zu: \"%s\", expected \"%s\"", i, line, rows[i].line);
	}
	/* cut, never overrun */
	aj_status_tasks_summary(rows[1].t, 1, tiny, sizeof(tiny));
	assert_string_equal(tiny, "0/4 run");
}

static void phase_names_round_trip(void **state)
{
	enum aj_phase p;

	(void)state;
	assert_int_equal(aj_phase_parse("Cancelled", &p), 0);
	assert_int_equal(p, AJ_PHASE_CANCELLED);
	assert_int_equal(aj_phase_parse("Cancelling", &p), 0);
	assert_int_equal(p, AJ_PHASE_CANCELLING);
	assert_int_equal(aj_phase_parse("Done", &p), -1);
	assert_int_equal(aj_phase_parse(NULL, &p), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(phases_are_ranked_so_none_goes_back),
		cmocka_unit_test(the_lifecycle_conditions_and_the_retry_count),
		cmocka_unit_test(transitions_move_only_the_conditions_that_flip),
		cmocka_unit_test(the_storage_renewal_time_is_written_and_kept),
		cmocka_unit_test(the_last_attempt_follows_the_job),
		cmocka_unit_test(an_invalid_template_fails_without_submitting),
		cmocka_unit_test(the_tasks_and_their_summary),
		cmocka_unit_test(task_summaries_lead_with_where_the_pods_are_headed),
		cmocka_unit_test(phase_names_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
