#include "support.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "api.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/source.h"
#include "core/yaml.h"
#include "kube/client.h"
#include "pipeline/candidates.h"
#include "place/read/cluster.h"
#include "placer.h"
#include "runner/runner.h"

#define RBAC AJ_SOURCE_DIR "/deploy/rbac.yaml"

/* The rules of deploy/rbac.yaml's ClusterRole (the chart's default values), as JSON. */
static cJSON *cluster_role_rules(void)
{
	static char text[65536];
	FILE *f = fopen(RBAC, "r");
	size_t len;
	char *doc, *next;
	cJSON *rules = NULL;

	assert_non_null(f);
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	assert_true(len < sizeof(text) - 1);
	text[len] = '\0';
	for (doc = text; doc && !rules; doc = next) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_node *n = NULL;
		cJSON *j;

		next = strstr(doc, "\n---\n");
		if (next)
			*next++ = '\0';
		assert_int_equal(aj_yaml_load(doc, strlen(doc), RBAC, &n, &err), 0);
		j = aj_node_to_cjson(n);
		if (n)
			assert_non_null(j);
		if (!strcmp(aj_json_str(j, "kind") ? aj_json_str(j, "kind") : "", "ClusterRole"))
			rules = cJSON_DetachItemFromObjectCaseSensitive(j, "rules");
		cJSON_Delete(j);
		aj_node_free(n);
		aj_errors_release(&err);
	}
	assert_non_null(rules);
	return rules;
}

static int has(const cJSON *array, const char *s)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, array) {
		if (cJSON_IsString(e) && !strcmp(e->valuestring, s))
			return 1;
	}
	return 0;
}

static int granted(const cJSON *rules, const char *verb, const char *group, const char *resource)
{
	const cJSON *r;

	cJSON_ArrayForEach(r, rules) {
		if (has(aj_json_get(r, "apiGroups"), group) &&
		    has(aj_json_get(r, "resources"), resource) && has(aj_json_get(r, "verbs"), verb))
			return 1;
	}
	return 0;
}

/* The start-up check asks for exactly what the views are read with, each saying what is lost. */
static void test_lists_are_the_views(void **state)
{
	static const char *const want[][2] = {
		{ "", "nodes" },
		{ "", "pods" },
		{ "scheduling.volcano.sh", "queues" },
		{ "kueue.x-k8s.io", "clusterqueues" },
		{ "kueue.x-k8s.io", "localqueues" },
		{ "kueue.x-k8s.io", "resourceflavors" },
	};
	size_t i, nr = sizeof(want) / sizeof(want[0]);

	(void)state;
	for (i = 0; i < nr; i++) {
		const struct aj_views_list *l = &aj_views_cluster_lists[i];

		assert_non_null(l->res);
		assert_string_equal(l->res->group, want[i][0]);
		assert_string_equal(l->res->plural, want[i][1]);
		assert_non_null(l->without);
		assert_non_null(strstr(l->without, "ranked unknown"));
	}
	assert_null(aj_views_cluster_lists[nr].res);
	assert_string_equal(aj_views_cluster_lists[0].without, aj_views_cluster_lists[1].without);
	assert_non_null(strstr(aj_views_cluster_lists[2].without, "Volcano"));
	assert_non_null(strstr(aj_views_cluster_lists[3].without, "Kueue"));
}

/* deploy/rbac.yaml (the chart's default RBAC) grants what the start-up check asks for. */
static void test_chart_grants_the_checked_rules(void **state)
{
	cJSON *rules = cluster_role_rules();
	const struct aj_views_list *l;
	const struct aj_access *a;
	size_t i;

	(void)state;
	for (l = aj_views_cluster_lists; l->res; l++)
		if (!granted(rules, "list", l->res->group, l->res->plural))
			fail_msg("%s grants no list on %s in group \"%s\"", RBAC, l->res->plural,
				 l->res->group);
	for (i = 0; i < aj_runners_nr; i++) {
		for (a = aj_runners[i]->access; a && a->verb; a++) {
			char res[96];

			snprintf(res, sizeof(res), "%s%s%s", a->resource, a->sub ? "/" : "",
				 a->sub ? a->sub : "");
			if (!granted(rules, a->verb, a->group, res))
				fail_msg("%s grants no %s on %s in group \"%s\" (runner %s)", RBAC,
					 a->verb, res, a->group, aj_runners[i]->name);
		}
	}
	/* the check can fail: a rule the chart does not grant is seen as missing */
	assert_false(granted(rules, "list", "", "secrets"));
	assert_false(granted(rules, "delete", "", "nodes"));
	cJSON_Delete(rules);
}

/* --- AjJobs placed from one snapshot --- */

#define JOBS "  environment: {image: img:1}\n  jobs: [{name: train, sku: \"{nodes}xG{processes}\"}]\n"

/* Two nodes of 6 GPUs and a Volcano queue that holds 4 jobs of 2 GPUs. */
static const char cluster[] =
	"{\"/api/v1/nodes/n0\": {\"metadata\": {\"name\": \"n0\"}, \"status\": {\"allocatable\":"
	"  {\"cpu\": \"64\", \"memory\": \"512Gi\", \"nvidia.com/gpu\": \"6\", \"pods\": \"110\"},"
	"  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}},"
	" \"/api/v1/nodes/n1\": {\"metadata\": {\"name\": \"n1\"}, \"status\": {\"allocatable\":"
	"  {\"cpu\": \"64\", \"memory\": \"512Gi\", \"nvidia.com/gpu\": \"6\", \"pods\": \"110\"},"
	"  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}},"
	" \"/apis/scheduling.volcano.sh/v1beta1/queues/default\": {\"metadata\": {\"name\": \"default\"},"
	"  \"spec\": {\"capability\": {\"nvidia.com/gpu\": 8}}, \"status\": {\"state\": \"Open\"}}}";

struct burst {
	struct aj_placer *placer;
	struct aj_kube *k;
	const struct aj_candidates *c;
	int submit;
	int jobs;                 /* AjJobs this worker places */
	int volcano, kube, waits; /* where they went */
};

/* One worker placing its AjJobs, as reconciles do, all within one snapshot's life. */
static void *place_burst(void *arg)
{
	struct burst *b = arg;
	struct aj_build_ctx ctx = { "job", "ml", NULL, NULL, NULL, 0 };
	struct aj_place_row rows[2];
	char where[2][AJ_PLACE_WHERE_MAX];
	int i;

	for (i = 0; i < b->jobs; i++) {
		struct aj_errors err = AJ_ERRORS_INIT;

		if (aj_placer_rank(b->placer, b->k, b->c, &ctx, NULL, NULL, 1000, b->submit, rows,
				   where, &err))
			b->waits = -1000;
		else if (aj_place_pick(rows, 2) == 2)
			b->waits++;
		else if (!strcmp(rows[0].name, "template/volcano"))
			b->volcano++;
		else
			b->kube++;
		aj_errors_release(&err);
	}
	return NULL;
}

/*
 * Eight AjJobs placed by four workers from one snapshot: charged, four go
 * to the Volcano queue (full then), two to the kube candidate (the nodes
 * full then, the Volcano jobs' pods on them) and two wait; a look that
 * submits nothing charges nothing (all eight would choose Volcano). The
 * views are listed once for all of them.
 */
static void a_burst_splits_across_candidates(void **state)
{
	static const struct { int submit, volcano, kube, waits; } cases[] = {
		{ 1, 4, 2, 2 },
		{ 0, 8, 0, 0 },
	};
	struct aj_shape_args shape = { 2, 1, 0 };
	static const char *const command[] = { "python", "train.py" };
	struct aj_node *docs[3];
	size_t n, t;

	(void)state;
	for (n = 0; n < sizeof(cases) / sizeof(cases[0]); n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_pipeline_in in = { NULL, "template/any", &shape, command, 2, NULL, "ml", NULL };
		struct burst b[4];
		pthread_t th[4];
		struct aj_test_api a;
		struct aj_placer placer;
		struct aj_candidates c;
		struct aj_pipeline leaf;
		struct aj_source src;
		int volcano = 0, kube = 0, waits = 0;

		docs[0] = aj_test_yaml("base: []\nconfig:\n  target: {service: volcano, namespace: ml}\n" JOBS);
		docs[1] = aj_test_yaml("base: []\nconfig:\n  target: {service: kube, namespace: ml}\n" JOBS);
		docs[2] = aj_test_yaml("base: []\nconfig:\n  placement: {candidates: [volcano, kube]}\n");
		assert_int_equal(aj_source_memory_init(&src, "t"), 0);
		assert_int_equal(aj_source_memory_add(&src, "template/volcano", docs[0]), 0);
		assert_int_equal(aj_source_memory_add(&src, "template/kube", docs[1]), 0);
		assert_int_equal(aj_source_memory_add(&src, "template/any", docs[2]), 0);
		in.source = &src;
		aj_pipeline_init(&leaf);
		aj_candidates_init(&c);
		if (aj_pipeline_resolve(&in, &leaf, &err) || aj_candidates_load(&in, &leaf.tpl, &c, &err))
			fail_msg("%s", aj_test_errors_text(&err));
		assert_int_equal(c.valid, 2);
		aj_test_api_start(&a, cluster);
		aj_placer_init(&placer);
		for (t = 0; t < 4; t++) {
			memset(&b[t], 0, sizeof(b[t]));
			b[t].placer = &placer;
			b[t].k = &a.k;
			b[t].c = &c;
			b[t].submit = cases[n].submit;
			b[t].jobs = 2;
			assert_int_equal(pthread_create(&th[t], NULL, place_burst, &b[t]), 0);
		}
		for (t = 0; t < 4; t++) {
			assert_int_equal(pthread_join(th[t], NULL), 0);
			volcano += b[t].volcano;
			kube += b[t].kube;
			waits += b[t].waits;
		}
		if (volcano != cases[n].volcano || kube != cases[n].kube || waits != cases[n].waits)
			fail_msg("submit %d: volcano %d, kube %d, waiting %d; want %d, %d, %d",
				 cases[n].submit, volcano, kube, waits, cases[n].volcano, cases[n].kube,
				 cases[n].waits);
		assert_int_equal(aj_test_api_gets(&a, "/api/v1/nodes", NULL), 1);
		aj_test_api_stop(&a);
		aj_placer_release(&placer);
		aj_candidates_release(&c);
		aj_pipeline_release(&leaf);
		aj_source_release(&src);
		for (t = 0; t < 3; t++)
			aj_node_free(docs[t]);
		aj_errors_release(&err);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_are_the_views),
		cmocka_unit_test(test_chart_grants_the_checked_rules),
		cmocka_unit_test(a_burst_splits_across_candidates),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
