/* The pod watch's failures: what a pod event says, and the bounded map (podfail.h). */
#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/json.h"
#include "cache.h"
#include "podfail.h"

static cJSON *parse(const char *text)
{
	cJSON *v = cJSON_Parse(text);

	assert_non_null(v);
	return v;
}

/* A pod of AjJob "j" in namespace "ns", with status (JSON) and extra metadata. */
static cJSON *pod(const char *name, const char *more_meta, const char *status)
{
	char text[2048];

	snprintf(text, sizeof(text),
		 "{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",%s"
		 "\"labels\":{\"aj.dev/ajjob\":\"j\",\"aj.dev/task\":\"worker\"},"
		 "\"ownerReferences\":[{\"kind\":\"PodGroup\",\"uid\":\"pg\"},"
		 "{\"kind\":\"Job\",\"uid\":\"v1\",\"controller\":true}]},"
		 "\"status\":%s}", name, more_meta, status);
	return parse(text);
}

#define EXITED(name, code, reason, at)                                                        \
	"{\"name\":\"" name "\",\"state\":{\"terminated\":{\"exitCode\":" #code                \
	",\"reason\":\"" reason "\",\"finishedAt\":\"" at "\"}}}"

static void a_pod_event_says_which_failure(void **state)
{
	static const struct {
		const char *name, *meta, *status;
		int failed;
		const char *text;      /* aj_pod_failure_format */
		const char *container;
		int collateral;
	} rows[] = {
		{ "exit code 3", "", "{\"phase\":\"Failed\",\"containerStatuses\":["
		  EXITED("main", 3, "Error", "2026-01-01T00:00:10Z") "]}",
		  1, "task worker, pod p: exit code 3 (Error)", "main", 0 },
		{ "a container that ended non-zero while the pod still runs", "",
		  "{\"phase\":\"Running\",\"containerStatuses\":["
		  EXITED("side", 137, "OOMKilled", "2026-01-01T00:00:10Z") "]}",
		  1, "task worker, pod p: exit code 137 (OOMKilled)", "side", 0 },
		{ "the earliest container to end", "", "{\"phase\":\"Failed\",\"containerStatuses\":["
		  EXITED("b", 143, "Error", "2026-01-01T00:00:20Z") ","
		  EXITED("a", 3, "Error", "2026-01-01T00:00:10Z") "]}",
		  1, "task worker, pod p: exit code 3 (Error)", "a", 0 },
		{ "an init container", "", "{\"phase\":\"Failed\",\"initContainerStatuses\":["
		  EXITED("fetch", 2, "Error", "2026-01-01T00:00:10Z") "]}",
		  1, "task worker, pod p: exit code 2 (Error)", "fetch", 0 },
		{ "evicted: no container code", "",
		  "{\"phase\":\"Failed\",\"reason\":\"Evicted\",\"message\":\"low on memory\"}",
		  1, "task worker, pod p: Evicted: low on memory", "", 0 },
		{ "killed while its job was deleted",
		  "\"deletionTimestamp\":\"2026-01-01T00:00:05Z\",",
		  "{\"phase\":\"Failed\",\"containerStatuses\":["
		  EXITED("main", 143, "Error", "2026-01-01T00:00:10Z") "]}",
		  1, "task worker, pod p: exit code 143 (Error)", "main", 1 },
		{ "succeeded", "", "{\"phase\":\"Succeeded\",\"containerStatuses\":["
		  EXITED("main", 0, "Completed", "2026-01-01T00:00:10Z") "]}", 0, NULL, NULL, 0 },
		{ "running", "", "{\"phase\":\"Running\"}", 0, NULL, NULL, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		cJSON *p = pod("p", rows[i].meta, rows[i].status);
		struct aj_pod_failure f;
		char text[256];
		int r = aj_pod_failure_read(p, &f);

		cJSON_Delete(p);
		if (r != rows[i].failed)
			fail_msg("%s: read %d", rows[i].name, r);
		if (!r)
			continue;
		aj_pod_failure_format(&f, text, sizeof(text));
		if (strcmp(text, rows[i].text) || strcmp(f.container, rows[i].container) ||
		    f.collateral != rows[i].collateral || strcmp(f.ajjob, "ns/j") ||
		    strcmp(f.owner_uid, "v1"))
			fail_msg("%s: \"%s\" container %s collateral %d ajjob %s owner %s",
				 rows[i].name, text, f.container, f.collateral, f.ajjob, f.owner_uid);
	}
}

static void a_pod_without_the_label_is_not_aj_s(void **state)
{
	cJSON *p = parse("{\"metadata\":{\"name\":\"x\",\"namespace\":\"ns\"},"
			 "\"status\":{\"phase\":\"Failed\"}}");
	struct aj_pod_failure f;

	(void)state;
	assert_int_equal(aj_pod_failure_read(p, &f), 0);
	cJSON_Delete(p);
}

/* A failure with an exit code, of AjJob ns/<job>, pod <name>, owned by uid. */
static struct aj_pod_failure failure(const char *job, const char *name, const char *uid,
				     int code, long long at, int collateral)
{
	struct aj_pod_failure f;

	memset(&f, 0, sizeof(f));
	snprintf(f.ajjob, sizeof(f.ajjob), "ns/%s", job);
	snprintf(f.owner_uid, sizeof(f.owner_uid), "%s", uid);
	snprintf(f.task, sizeof(f.task), "worker");
	snprintf(f.pod, sizeof(f.pod), "%s", name);
	snprintf(f.reason, sizeof(f.reason), "Error");
	f.has_code = 1;
	f.exit_code = code;
	f.at = at;
	f.collateral = collateral;
	return f;
}

static void the_failure_that_ended_the_job_is_kept(void **state)
{
	struct aj_podfail m;
	struct aj_pod_failure a = failure("j", "j-worker-0", "v1", 3, 100, 0), got;
	struct aj_pod_failure killed = failure("j", "j-worker-1", "v1", 143, 110, 1);
	struct aj_pod_failure later = failure("j", "j-worker-1", "v1", 4, 200, 0);
	struct aj_pod_failure older = failure("j", "j-worker-2", "v1", 5, 50, 0);

	(void)state;
	assert_int_equal(aj_podfail_init(&m, 4), 0);
	assert_int_equal(aj_podfail_put(&m, &a), 1);
	/* the same failure again (the pod's next event): nothing new to queue */
	assert_int_equal(aj_podfail_put(&m, &a), 0);
	/* a pod killed as its job was torn down does not hide the cause */
	assert_int_equal(aj_podfail_put(&m, &killed), 0);
	assert_int_equal(aj_podfail_put(&m, &older), 0);
	assert_int_equal(aj_podfail_get(&m, "ns/j", "v1", &got), 1);
	assert_string_equal(got.pod, "j-worker-0");
	/* a later failure of its own (after a restart) replaces it */
	assert_int_equal(aj_podfail_put(&m, &later), 1);
	assert_int_equal(aj_podfail_get(&m, "ns/j", NULL, &got), 1);
	assert_string_equal(got.pod, "j-worker-1");
	assert_int_equal(got.exit_code, 4);
	/* only the object that owned the pod gets it: a new job of the same name does not */
	assert_int_equal(aj_podfail_get(&m, "ns/j", "v2", &got), 0);
	assert_int_equal(aj_podfail_count(&m), 1);
	aj_podfail_forget(&m, "ns/j");
	assert_int_equal(aj_podfail_get(&m, "ns/j", NULL, &got), 0);
	assert_int_equal(aj_podfail_count(&m), 0);
	aj_podfail_release(&m);
}

static void the_map_is_bounded_the_oldest_gives_way(void **state)
{
	struct aj_podfail m;
	struct aj_pod_failure got;
	char job[16];
	int i;

	(void)state;
	assert_int_equal(aj_podfail_init(&m, 3), 0);
	for (i = 0; i < 5; i++) {
		struct aj_pod_failure f;

		snprintf(job, sizeof(job), "j%d", i);
		f = failure(job, "p", "u", 3, 100, 0);
		assert_int_equal(aj_podfail_put(&m, &f), 1);
		assert_true(aj_podfail_count(&m) <= 3);
	}
	assert_int_equal(aj_podfail_count(&m), 3);
	assert_int_equal(aj_podfail_get(&m, "ns/j0", NULL, &got), 0);
	assert_int_equal(aj_podfail_get(&m, "ns/j1", NULL, &got), 0);
	for (i = 2; i < 5; i++) {
		snprintf(job, sizeof(job), "ns/j%d", i);
		assert_int_equal(aj_podfail_get(&m, job, "u", &got), 1);
		assert_string_equal(got.ajjob, job);
	}
	/* forgetting one that is not there changes nothing */
	aj_podfail_forget(&m, "ns/none");
	assert_int_equal(aj_podfail_count(&m), 3);
	aj_podfail_release(&m);
}

/*
 * The label names the object the AjJob owns, which is not the AjJob's name
 * when that is no DNS label: the cache's record of the object says whose it is.
 */
static void the_failure_goes_to_the_ajjob_owning_the_object(void **state)
{
	struct aj_cache c;
	struct aj_owned_facts facts;
	struct aj_pod_failure f = failure("train-v1-2", "train-v1-2-worker-0", "v1", 3, 100, 0);
	struct aj_pod_failure other = failure("unknown", "unknown-worker-0", "v9", 3, 100, 0);

	(void)state;
	assert_int_equal(aj_cache_init(&c), 0);
	memset(&facts, 0, sizeof(facts));
	assert_int_equal(aj_cache_owned_put(&c, 1, parse(
		"{\"metadata\": {\"name\": \"train-v1-2\", \"namespace\": \"ns\", \"uid\": \"v1\","
		" \"ownerReferences\": [{\"kind\": \"AjJob\", \"name\": \"train.v1.2\","
		" \"uid\": \"a1\", \"controller\": true}]}}"), &facts), 0);
	aj_podfail_owner(&c, &f);
	assert_string_equal(f.ajjob, "ns/train.v1.2");
	/* an object the cache does not have: the label is taken as the AjJob's name */
	aj_podfail_owner(&c, &other);
	assert_string_equal(other.ajjob, "ns/unknown");
	/* a finished AjJob's pods are not recorded: the cache says which AjJobs ended */
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\": {\"name\": \"done\", \"namespace\": \"ns\", \"uid\": \"a2\"},"
		" \"status\": {\"phase\": \"Failed\"}}")), 0);
	assert_int_equal(aj_cache_ajjob_put(&c, parse(
		"{\"metadata\": {\"name\": \"runs\", \"namespace\": \"ns\", \"uid\": \"a3\"},"
		" \"status\": {\"phase\": \"Running\"}}")), 0);
	assert_int_equal(aj_cache_ajjob_ended(&c, "ns/done"), 1);
	assert_int_equal(aj_cache_ajjob_ended(&c, "ns/runs"), 0);
	assert_int_equal(aj_cache_ajjob_ended(&c, "ns/none"), 0);
	aj_cache_release(&c);
}

/* The watch thread records while workers read and forget (run under TSan). */
struct racer {
	struct aj_podfail *m;
	int id;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct aj_pod_failure got;
	char job[16];
	int i;

	for (i = 0; i < 2000; i++) {
		snprintf(job, sizeof(job), "j%d", i % 16);
		if (r->id == 0) {
			struct aj_pod_failure f = failure(job, "p", "u", 3, i, 0);

			if (aj_podfail_put(r->m, &f) < 0)
				return (void *)1;
		} else {
			char key[20];

			snprintf(key, sizeof(key), "ns/%s", job);
			if (aj_podfail_get(r->m, key, "u", &got) && strcmp(got.ajjob, key))
				return (void *)1;
			if (i % 7 == 0)
				aj_podfail_forget(r->m, key);
		}
	}
	return NULL;
}

static void threads_share_the_map(void **state)
{
	struct aj_podfail m;
	struct racer r[3];
	pthread_t t[3];
	void *ret;
	int i;

	(void)state;
	assert_int_equal(aj_podfail_init(&m, 8), 0);
	for (i = 0; i < 3; i++) {
		r[i].m = &m;
		r[i].id = i;
		assert_int_equal(pthread_create(&t[i], NULL, race, &r[i]), 0);
	}
	for (i = 0; i < 3; i++) {
		assert_int_equal(pthread_join(t[i], &ret), 0);
		assert_null(ret);
	}
	assert_true(aj_podfail_count(&m) <= 8);
	aj_podfail_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_pod_event_says_which_failure),
		cmocka_unit_test(a_pod_without_the_label_is_not_aj_s),
		cmocka_unit_test(the_failure_that_ended_the_job_is_kept),
		cmocka_unit_test(the_map_is_bounded_the_oldest_gives_way),
		cmocka_unit_test(the_failure_goes_to_the_ajjob_owning_the_object),
		cmocka_unit_test(threads_share_the_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
