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

static void volcano_phases_map_to_ajjob_phases(void **state)
{
	(void)state;
	assert_int_equal(aj_phase_from_volcano("Pending"), AJ_PHASE_SUBMITTED);
	assert_int_equal(aj_phase_from_volcano(NULL), AJ_PHASE_SUBMITTED);
	assert_int_equal(aj_phase_from_volcano("Running"), AJ_PHASE_RUNNING);
	assert_int_equal(aj_phase_from_volcano("Restarting"), AJ_PHASE_RUNNING);
	assert_int_equal(aj_phase_from_volcano("Completed"), AJ_PHASE_SUCCEEDED);
	assert_int_equal(aj_phase_from_volcano("Failed"), AJ_PHASE_FAILED);
	assert_int_equal(aj_phase_from_volcano("Terminated"), AJ_PHASE_FAILED);
	assert_int_equal(aj_phase_from_volcano("Aborted"), AJ_PHASE_CANCELLED);
	assert_true(aj_phase_terminal(AJ_PHASE_CANCELLED));
	assert_false(aj_phase_terminal(AJ_PHASE_RUNNING));
}

static void transitions_move_only_the_conditions_that_flip(void **state)
{
	struct aj_status st = { AJ_PHASE_SUBMITTED, 1, "VolcanoJobCreated",
				"created Volcano Job train-x", "volcano", 1, "train-x", 0 };
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

	/* Running: only Running flips; Submitted keeps its time. volcano_job NULL keeps it. */
	st.phase = AJ_PHASE_RUNNING;
	st.reason = "VolcanoJobRunning";
	st.volcano_job = NULL;
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
				"Volcano Job train-x submitted", "volcano", 1, "train-x", 1506484173 };
	cJSON *s1, *s2, *s3, *plain;
	int changed;

	(void)state;
	s1 = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_non_null(s1);
	assert_string_equal(field(cJSON_GetObjectItem(s1, "volcano"), "storageRenewAfter"),
			    "2017-09-27T03:49:33Z");
	/* mirroring a phase later writes none: the one written stays */
	st.storage_renew_after = 0;
	st.volcano_job = NULL;
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
	st.volcano_job = "train-y";
	plain = aj_status_next(NULL, &st, "2026-01-01T00:00:00Z", &changed);
	assert_null(cJSON_GetObjectItem(cJSON_GetObjectItem(plain, "volcano"), "storageRenewAfter"));
	cJSON_Delete(s1);
	cJSON_Delete(s2);
	cJSON_Delete(s3);
	cJSON_Delete(plain);
}

static void an_invalid_template_fails_without_submitting(void **state)
{
	struct aj_status st = { AJ_PHASE_FAILED, 0, "InvalidTemplate",
				"template/gpu.yaml:3:5: config.jobs[0].sku: required",
				"volcano", 2, NULL, 0 };
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

static void phase_names_round_trip(void **state)
{
	enum aj_phase p;

	(void)state;
	assert_int_equal(aj_phase_parse("Cancelled", &p), 0);
	assert_int_equal(p, AJ_PHASE_CANCELLED);
	assert_int_equal(aj_phase_parse("Done", &p), -1);
	assert_int_equal(aj_phase_parse(NULL, &p), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(volcano_phases_map_to_ajjob_phases),
		cmocka_unit_test(transitions_move_only_the_conditions_that_flip),
		cmocka_unit_test(the_storage_renewal_time_is_written_and_kept),
		cmocka_unit_test(an_invalid_template_fails_without_submitting),
		cmocka_unit_test(phase_names_round_trip),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
