#include "support.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/yaml.h"
#include "kube/client.h"
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lists_are_the_views),
		cmocka_unit_test(test_chart_grants_the_checked_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
