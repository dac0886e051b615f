/*
 * Which workspace each candidate is judged in (place/workspaces.c): the
 * default's form, the workspace a target goes to, the candidates grouped,
 * and each judged against its own workspace's computes with the VCs read
 * once. Expected rows are written by hand from the computes and quotas
 * given.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "support.h"

#include "azure/vcselect.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"
#include "core/source.h"
#include "pipeline/candidates.h"
#include "place/workspaces.h"

#define WS_ID(name) "/subscriptions/s/resourceGroups/rg/providers/" \
		    "Microsoft.MachineLearningServices/workspaces/" name
#define JOBS "  environment: {image: img:1}\n  jobs: [{name: train, sku: G8}]\n"

static const char *const command[] = { "python", "train.py" };

static void parse(void **state)
{
	static const char *const bad[] = {
		"", "s", "s/rg", "s//ws", "/rg/ws", "s/rg/", "s/rg/ws/x", "//",
		"s/rg/xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
	};
	struct aj_place_workspace w;
	size_t i;

	(void)state;
	assert_int_equal(aj_place_workspace_parse("sub-1/ml-rg/ws-main", &w), 0);
	assert_string_equal(w.subscription, "sub-1");
	assert_string_equal(w.resource_group, "ml-rg");
	assert_string_equal(w.name, "ws-main");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!aj_place_workspace_parse(bad[i], &w))
			fail_msg("'%s' taken as a workspace", bad[i]);
}

static void workspace_of(void **state)
{
	struct aj_place_workspace dflt = { "s", "rg", "ws" }, w;
	struct aj_target t;

	(void)state;
	memset(&t, 0, sizeof(t));
	/* the default as it is; the target's workspace_name in it; the target's sub and rg ignored */
	assert_int_equal(aj_place_workspace_of(&t, &dflt, &w), 0);
	assert_string_equal(w.name, "ws");
	t.workspace_name = "other";
	t.subscription_id = "s2";
	t.resource_group = "rg2";
	assert_int_equal(aj_place_workspace_of(&t, &dflt, &w), 0);
	assert_string_equal(w.subscription, "s");
	assert_string_equal(w.resource_group, "rg");
	assert_string_equal(w.name, "other");
	/* no default: the target's three, else none */
	assert_int_equal(aj_place_workspace_of(&t, NULL, &w), 0);
	assert_string_equal(w.subscription, "s2");
	assert_string_equal(w.resource_group, "rg2");
	assert_string_equal(w.name, "other");
	t.resource_group = "";
	assert_int_equal(aj_place_workspace_of(&t, NULL, &w), -1);
	t.resource_group = "rg2";
	t.workspace_name = NULL;
	assert_int_equal(aj_place_workspace_of(&t, NULL, &w), -1);
}

struct files {
	struct aj_source src;
	struct aj_node *docs[8];
	size_t nr;
};

static void files_add(struct files *f, const char *name, const char *yaml)
{
	f->docs[f->nr] = aj_test_yaml(yaml);
	assert_int_equal(aj_source_memory_add(&f->src, name, f->docs[f->nr]), 0);
	f->nr++;
}

/*
 * template/any: aml in the default workspace, aml in workspace other, sing
 * naming all three of s/rg/ws, volcano. 2 nodes each.
 */
static void load(struct files *f, struct aj_candidates *c)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_shape_args two = { 2, 1, 0 };
	struct aj_pipeline_in in = { &f->src, "template/any", &two, command, 2, NULL, "training", NULL };
	struct aj_pipeline leaf;

	assert_int_equal(aj_source_memory_init(&f->src, "t"), 0);
	files_add(f, "template/aml", "base: []\nconfig:\n  target: {service: aml, name: gpu-cluster}\n" JOBS);
	files_add(f, "template/amlother", "base: []\nconfig:\n  target: {service: aml, name: big,"
		  " workspace_name: other}\n" JOBS);
	files_add(f, "template/sing", "base: []\nconfig:\n  target: {service: sing, subscription_id: s,"
		  " resource_group: rg, workspace_name: ws}\n"
		  "  environment: {image: img:1}\n  jobs: [{name: train, sku: \"{nodes}x80G8-A100\"}]\n");
	files_add(f, "template/volcano", "base: []\nconfig:\n  target: {service: volcano, namespace: training}\n" JOBS);
	files_add(f, "template/any", "base: []\nconfig:\n  placement:\n"
		  "    candidates: [aml, amlother, sing, volcano]\n");
	aj_pipeline_init(&leaf);
	assert_int_equal(aj_pipeline_resolve(&in, &leaf, &err), 0);
	aj_candidates_init(c);
	if (aj_candidates_load(&in, &leaf.tpl, c, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_int_equal(c->valid, 4);
	aj_pipeline_release(&leaf);
	aj_errors_release(&err);
}

static void files_release(struct files *f)
{
	aj_source_release(&f->src);
	while (f->nr)
		aj_node_free(f->docs[--f->nr]);
}

static void grouped(void **state)
{
	struct aj_place_workspace dflt = { "s", "rg", "ws" };
	struct aj_place_workspaces g;
	struct aj_candidates c;
	struct files f = { 0 };

	(void)state;
	load(&f, &c);
	/* with a default: aml and sing in s/rg/ws (sing's own sub and rg name its VCs), amlother apart */
	aj_place_workspaces_group(&c, &dflt, &g);
	assert_int_equal(g.nr, 2);
	assert_string_equal(g.items[0].name, "ws");
	assert_string_equal(g.items[1].subscription, "s");
	assert_string_equal(g.items[1].resource_group, "rg");
	assert_string_equal(g.items[1].name, "other");
	assert_int_equal(g.of[0], 0);
	assert_int_equal(g.of[1], 1);
	assert_int_equal(g.of[2], 0);
	assert_int_equal(g.of[3], AJ_PLACE_NOT_AZURE);
	/* without: only sing names all three */
	aj_place_workspaces_group(&c, NULL, &g);
	assert_int_equal(g.nr, 1);
	assert_int_equal(g.of[0], AJ_PLACE_NO_WORKSPACE);
	assert_int_equal(g.of[1], AJ_PLACE_NO_WORKSPACE);
	assert_int_equal(g.of[2], 0);
	assert_int_equal(g.of[3], AJ_PLACE_NOT_AZURE);
	aj_candidates_release(&c);
	files_release(&f);
}

static cJSON *compute(const char *name, int max, int current)
{
	char text[512];

	snprintf(text, sizeof(text), "[{\"name\": \"%s\", \"properties\": {\"computeType\": "
		 "\"AmlCompute\", \"properties\": {\"scaleSettings\": {\"maxNodeCount\": %d},"
		 " \"currentNodeCount\": %d, \"nodeStateCounts\": {\"runningNodeCount\": %d}}}}]",
		 name, max, current, current);
	return cJSON_Parse(text);
}

/*
 * Two workspaces' parts: ws's compute gpu-cluster (8 nodes, 2 running)
 * with VC vc-a (32 Premium A100 units), other's compute big (4 nodes,
 * big_running running).
 */
static void parts_make(struct aj_views_azure *parts, int big_running)
{
	struct aj_vc *vcs = aj_calloc(1, sizeof(*vcs));
	struct aj_vc_quota *q;
	cJSON *main_computes = compute("gpu-cluster", 8, 2);
	cJSON *other_computes = compute("big", 4, big_running);

	assert_non_null(vcs);
	assert_non_null(main_computes);
	assert_non_null(other_computes);
	memset(parts, 0, 2 * sizeof(*parts));
	parts[0].read = parts[1].read = 1;
	assert_int_equal(aj_views_set_computes(&parts[0], WS_ID("ws"), main_computes), 0);
	assert_int_equal(aj_views_set_computes(&parts[1], WS_ID("other"), other_computes), 0);
	aj_vc_init(vcs);
	assert_int_equal(aj_vc_set(vcs, "s", "rg", "vc-a"), 0);
	assert_non_null(q = aj_vc_quota_row(vcs, "ND_A100_v4"));
	q->limit[AJ_TIER_PREMIUM] = 32;
	assert_int_equal(aj_views_set_vcs(&parts[0], vcs, 1), 0);
	cJSON_Delete(main_computes);
	cJSON_Delete(other_computes);
}

/* Each candidate against its own workspace's computes; the VCs of the first serve all. */
static void judged_in_their_workspace(void **state)
{
	struct aj_place_workspace dflt = { "s", "rg", "ws" };
	struct aj_build_ctx ctx = { "job", "training", NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_views_azure parts[2], unread[2];
	struct aj_place_workspaces g;
	struct aj_place_row rows[4];
	char where[4][AJ_PLACE_WHERE_MAX];
	struct aj_candidates c;
	struct files f = { 0 };
	struct aj_views v;
	struct aj_waits w;

	(void)state;
	load(&f, &c);
	aj_views_init(&v);
	aj_waits_init(&w);
	snprintf(v.queues_why, sizeof(v.queues_why), "the CRD is not installed");
	parts_make(parts, 3);
	/* the second part's VCs were not read: what it says of them is not used */
	snprintf(parts[1].vcs_why, sizeof(parts[1].vcs_why), "not read");
	aj_place_workspaces_group(&c, &dflt, &g);
	assert_int_equal(aj_place_judge_workspaces(&v, parts, &parts[0], &g, "none named", &w, &c, &ctx, NULL,
						   NULL, rows, where, &err), 0);
	assert_string_equal(rows[0].name, "template/aml");
	assert_int_equal(rows[0].state, AJ_PLACE_FITS);
	assert_string_equal(rows[0].reason, "compute gpu-cluster: 6 of 8 nodes free");
	assert_string_equal(rows[1].name, "template/amlother");
	assert_int_equal(rows[1].state, AJ_PLACE_FULL);
	assert_string_equal(rows[1].reason, "compute big: 1 of 4 nodes free (3 running), the job needs 2");
	assert_string_equal(rows[1].where, "other/big");
	assert_int_equal(rows[2].state, AJ_PLACE_FITS);
	assert_string_equal(rows[2].reason, "virtual cluster s/rg/vc-a: Premium quota for 2 x "
			    "ND96amrs_A100_v4 (16 units), 16 left");
	assert_string_equal(rows[3].name, "template/volcano");
	assert_string_equal(rows[3].backend, "volcano");
	assert_int_equal(rows[3].state, AJ_PLACE_UNKNOWN);
	assert_string_equal(rows[3].reason, "Volcano queues unknown: the CRD is not installed");

	/* no workspace named: the Azure rows say why; the VCs not read: sing says so */
	snprintf(parts[0].vcs_why, sizeof(parts[0].vcs_why), "Azure is unreachable");
	aj_place_workspaces_group(&c, NULL, &g);
	assert_int_equal(aj_place_judge_workspaces(&v, parts, &parts[0], &g, "none named", &w, &c, &ctx, NULL,
						   NULL, rows, where, &err), 0);
	assert_int_equal(rows[0].state, AJ_PLACE_UNKNOWN);
	assert_string_equal(rows[0].reason, "Azure ML computes unknown: none named");
	assert_int_equal(rows[1].state, AJ_PLACE_UNKNOWN);
	assert_string_equal(rows[1].reason, "Azure ML computes unknown: none named");
	assert_int_equal(rows[2].state, AJ_PLACE_UNKNOWN);
	assert_string_equal(rows[2].reason, "virtual clusters unknown: Azure is unreachable");
	assert_int_equal(rows[3].state, AJ_PLACE_UNKNOWN);

	/* the default's part not read (a bound): its rows keep its why; other's takes the VCs given */
	aj_place_workspaces_group(&c, &dflt, &g);
	memset(&unread, 0, sizeof(unread));
	unread[0].read = 1;
	snprintf(unread[0].computes_why, sizeof(unread[0].computes_why), "bound");
	snprintf(unread[0].vcs_why, sizeof(unread[0].vcs_why), "bound");
	unread[1] = parts[1];
	snprintf(parts[0].vcs_why, sizeof(parts[0].vcs_why), "%s", "");
	assert_int_equal(aj_place_judge_workspaces(&v, unread, &parts[0], &g, "none named", &w, &c,
						   &ctx, NULL, NULL, rows, where, &err), 0);
	assert_string_equal(rows[0].reason, "Azure ML computes unknown: bound");
	assert_string_equal(rows[1].reason, "compute big: 1 of 4 nodes free (3 running), the job needs 2");
	assert_string_equal(rows[2].reason, "virtual clusters unknown: bound");
	aj_views_azure_release(&parts[0]);
	aj_views_azure_release(&parts[1]);
	aj_waits_release(&w);
	aj_views_release(&v);
	aj_candidates_release(&c);
	files_release(&f);
	aj_errors_release(&err);
}

/*
 * A pick charged to the views it was judged in, through copies of the
 * parts as the placer holds them: other's compute for amlother, the VCs
 * of the first part for sing; nothing of the other workspace's.
 */
static void charged_in_their_workspace(void **state)
{
	struct aj_place_workspace dflt = { "s", "rg", "ws" };
	struct aj_build_ctx ctx = { "job", "training", NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_views_azure parts[2], copies[2];
	struct aj_place_workspaces g;
	struct aj_place_row rows[4];
	char where[4][AJ_PLACE_WHERE_MAX];
	struct aj_candidates c;
	struct files f = { 0 };
	struct aj_views v;
	struct aj_waits w;

	(void)state;
	load(&f, &c);
	aj_views_init(&v);
	aj_waits_init(&w);
	parts_make(parts, 0);
	aj_place_workspaces_group(&c, &dflt, &g);
	memcpy(copies, parts, sizeof(copies));
	assert_int_equal(aj_place_charge_workspaces(&v, copies, &copies[0], &g, &c, 1, &ctx, &err), 0);
	assert_int_equal(aj_place_charge_workspaces(&v, copies, &copies[0], &g, &c, 2, &ctx, &err), 0);
	assert_int_equal(aj_place_judge_workspaces(&v, parts, &parts[0], &g, "none named", &w, &c, &ctx,
						   NULL, NULL, rows, where, &err), 0);
	assert_string_equal(rows[0].reason, "compute gpu-cluster: 6 of 8 nodes free");
	assert_string_equal(rows[1].reason, "compute big: 2 of 4 nodes free after 1 placement since the "
			    "last read");
	/* 32 units, 16 taken by the charge: the job's 16 leave none */
	assert_string_equal(rows[2].reason, "virtual cluster s/rg/vc-a: Premium quota for 2 x "
			    "ND96amrs_A100_v4 (16 units), 0 left after 1 placement since the last read");
	assert_int_equal(parts[0].vcs_charged[0], 1);
	assert_int_equal(parts[0].vcs[0].quotas[0].used[AJ_TIER_PREMIUM], 16);
	aj_views_azure_release(&parts[0]);
	aj_views_azure_release(&parts[1]);
	aj_waits_release(&w);
	aj_views_release(&v);
	aj_candidates_release(&c);
	files_release(&f);
	aj_errors_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parse),
		cmocka_unit_test(workspace_of),
		cmocka_unit_test(grouped),
		cmocka_unit_test(judged_in_their_workspace),
		cmocka_unit_test(charged_in_their_workspace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
