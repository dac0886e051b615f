/*
 * Placement: the template key (core/placement.c), its candidates loaded
 * through the pipeline (pipeline/candidates.c), judged against the views
 * (place/judge.c), the ranking and the pick (place/rank.c),
 * the ranking as status.placement writes it, the wait history and what
 * it learns from AjJobs (place/waits.c) and the fail-over steps
 * (place/failover.c). Expected values are written by hand.
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
#include "core/buf.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/node.h"
#include "core/placement.h"
#include "core/source.h"
#include "pipeline/candidates.h"
#include "place/failover.h"
#include "place/judge.h"
#include "place/rank.h"
#include "place/waits.h"

static const char *const command[] = { "python", "train.py" };

static void durations(void **state)
{
	static const struct { const char *in; long want; } ok[] = {
		{ "90s", 90 }, { "15m", 900 }, { "1h30m", 5400 }, { "2h", 7200 }, { "1m1s", 61 },
		{ "0m30s", 30 },
	};
	static const char *const bad[] = {
		"", "15", "m", "-5m", "+5m", " 5m", "5x", "5m ", "0s", "1000001s", "1.5h", "5mm",
	};
	size_t i;
	long v;

	(void)state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = -1;
		assert_int_equal(aj_duration_parse(ok[i].in, &v), 0);
		assert_int_equal(v, ok[i].want);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = 7;
		if (aj_duration_parse(bad[i], &v) != -1)
			fail_msg("'%s' taken as a duration", bad[i]);
		assert_int_equal(v, 7);
	}
}

/* config.placement of a leaf; the expected first error, "" when it reads. */
static void placement_is_checked(void **state)
{
	static const char *const cases[][2] = {
		{ "  placement: {candidates: [volcano, template/kube], max_wait: 15m}\n", "" },
		{ "  placement: {candidates: [volcano], max_wait: 45}\n", "" },
		{ "  placement: [volcano]\n",
		  "test.yaml:3:14: config.placement: expected a mapping with candidates and max_wait" },
		{ "  placement: {max_wait: 15m}\n",
		  "config.placement: candidates: required" },
		{ "  placement: {candidates: []}\n",
		  "test.yaml:3:27: config.placement.candidates: expected a non-empty list" },
		{ "  placement: {candidates: [volcano, 3]}\n",
		  "test.yaml:3:37: config.placement.candidates[1]: expected a template name" },
		{ "  placement: {candidates: [storage/default]}\n",
		  "test.yaml:3:28: config.placement.candidates[0]: 'storage/default' is not a leaf "
		  "template name" },
		{ "  placement: {candidates: [kube, template/kube]}\n",
		  "test.yaml:3:34: config.placement.candidates[1]: template/kube is listed twice" },
		{ "  placement: {candidates: [kube], max_wait: 29s}\n",
		  "test.yaml:3:45: config.placement.max_wait: 29s is too short" },
		{ "  placement: {candidates: [kube], max_wait: soon}\n",
		  "config.placement.max_wait: expected a duration such as 90s" },
		{ "  placement: {candidates: [kube], max_wait: -60}\n",
		  "config.placement.max_wait: expected a duration" },
		{ "  target: {service: kube}\n  placement: {candidates: [kube]}\n",
		  "test.yaml:3:3: config.target: a leaf with placement holds nothing else" },
		{ "  placement: {candidates: [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p, q]}\n",
		  "config.placement.candidates: 17 candidates; at most 16" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aj_buf yaml = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_placement pl;
		struct aj_node *doc;
		int rc;

		aj_buf_addf(&yaml, "base: []\nconfig:\n%s", cases[i][0]);
		doc = aj_test_yaml(aj_buf_cstr(&yaml));
		aj_placement_init(&pl);
		rc = aj_placement_read(aj_node_get(doc, "config"), &pl, &err);
		if (!*cases[i][1]) {
			if (rc != 1)
				fail_msg("case %zu: %s", i, aj_test_errors_text(&err));
		} else {
			assert_int_equal(rc, -1);
			if (!aj_test_errors_contain(&err, cases[i][1]))
				fail_msg("case %zu: want \"%s\", got:\n%s", i, cases[i][1],
					 aj_test_errors_text(&err));
		}
		aj_placement_release(&pl);
		aj_errors_release(&err);
		aj_node_free(doc);
		aj_buf_release(&yaml);
	}
}

static void placement_reads_what_was_written(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *doc = aj_test_yaml("base: []\nconfig:\n  placement:\n"
					   "    candidates: [volcano, template/kube, sing]\n"
					   "    max_wait: 1h30m\n");
	struct aj_placement pl;

	(void)state;
	aj_placement_init(&pl);
	assert_int_equal(aj_placement_read(aj_node_get(doc, "config"), &pl, &err), 1);
	assert_int_equal(pl.nr, 3);
	assert_string_equal(pl.items[0].name, "template/volcano");
	assert_string_equal(pl.items[1].name, "template/kube");
	assert_string_equal(pl.items[2].name, "template/sing");
	assert_int_equal(pl.items[2].line, 4);
	assert_int_equal(pl.items[2].column, 42);
	assert_int_equal(pl.max_wait, 5400);
	aj_placement_release(&pl);
	/* no placement key: not a placement leaf, nothing read */
	aj_node_free(doc);
	doc = aj_test_yaml("base: []\nconfig:\n  target: {service: kube}\n");
	aj_placement_init(&pl);
	assert_int_equal(aj_placement_read(aj_node_get(doc, "config"), &pl, &err), 0);
	assert_int_equal(pl.nr, 0);
	assert_true(aj_errors_empty(&err));
	aj_node_free(doc);
}

/* ---- candidates through the pipeline ------------------------------------- */

#define JOBS "  environment: {image: img:1}\n  jobs: [{name: train, sku: \"{nodes}xG{processes}\"}]\n"
#define KUBE "base: []\nconfig:\n  target: {service: kube, namespace: training, queue: team-a}\n" JOBS
#define VOLCANO "base: []\nconfig:\n  target: {service: volcano, namespace: training}\n" JOBS

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

static void files_release(struct files *f)
{
	aj_source_release(&f->src);
	while (f->nr)
		aj_node_free(f->docs[--f->nr]);
}

/* Load template/any (given) beside the kube and volcano leaves above and f's own. */
static int load_any(struct files *f, const char *any, const char *ns,
		    struct aj_candidates *c, struct aj_errors *err)
{
	struct aj_shape_args one = { 2, 1, 0 };
	struct aj_pipeline_in in = { &f->src, "template/any", &one, command, 2, NULL, ns, NULL };
	struct aj_pipeline leaf;
	int rc;

	files_add(f, "template/kube", KUBE);
	files_add(f, "template/volcano", VOLCANO);
	files_add(f, "template/any", any);
	aj_pipeline_init(&leaf);
	assert_int_equal(aj_pipeline_resolve(&in, &leaf, err), 0);
	aj_candidates_init(c);
	rc = aj_candidates_load(&in, &leaf.tpl, c, err);
	aj_pipeline_release(&leaf);
	return rc;
}

static void candidates_load_like_run(void **state)
{
	struct files f = { 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_candidates c;
	struct aj_buf place = AJ_BUF_INIT(AJ_BUF_SMALL);

	(void)state;
	assert_int_equal(aj_source_memory_init(&f.src, "t"), 0);
	if (load_any(&f, "base: []\nconfig:\n  placement:\n"
		     "    candidates: [volcano, kube]\n", "training", &c, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_int_equal(c.nr, 2);
	assert_int_equal(c.valid, 2);
	assert_string_equal(c.items[0].name, "template/volcano");
	assert_string_equal(c.items[0].p.backend->name, "volcano");
	assert_string_equal(c.items[1].p.backend->name, "kube");
	/* each resolved with the command line's shape, as aj run -t would */
	assert_int_equal(c.items[1].p.spec.nodes, 2);
	assert_int_equal(aj_candidate_place(&c.items[1], "training", &place), 0);
	assert_string_equal(aj_buf_cstr(&place), "training/team-a");
	aj_buf_reset(&place);
	assert_int_equal(aj_candidate_place(&c.items[0], "training", &place), 0);
	assert_string_equal(aj_buf_cstr(&place), "training/");
	aj_buf_release(&place);
	aj_candidates_release(&c);
	files_release(&f);
	aj_errors_release(&err);
}

/* Left-out candidates keep their reason; the set fails only when none is valid. */
static void candidates_left_out(void **state)
{
	static const struct {
		const char *any, *ns;
		int rc;
		size_t valid;
		const char *want;
	} cases[] = {
		{ "base: []\nconfig:\n  placement: {candidates: [missing, kube]}\n", "training", 0, 1,
		  "test.yaml:3:28: config.placement.candidates[0]: template/missing is left out: it does "
		  "not resolve" },
		{ "base: []\nconfig:\n  placement: {candidates: [any, kube]}\n", "training", 0, 1,
		  "config.placement.candidates[0]: template/any is left out: it declares a placement itself" },
		{ "base: []\nconfig:\n  placement: {candidates: [kube]}\n", "other", -1, 0,
		  "config.placement.candidates[0]: template/kube is left out: its target.namespace is "
		  "training, not the AjJob's namespace other" },
		{ "base: []\nconfig:\n  placement: {candidates: [kube, volcano]}\n", "default", -1, 0,
		  "template/volcano is left out: its target.namespace is training" },
		{ "base: []\nconfig:\n  placement: {candidates: [missing]}\n", "training", -1, 0,
		  "template/missing is left out: it does not resolve" },
		{ "base: []\nconfig:\n  placement: {candidates: [kube], max_wiat: 1m}\n", "training", -1, 0,
		  "config.placement.max_wiat: unknown key" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct files f = { 0 };
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_candidates c;
		struct aj_errors *where = &err;
		size_t j;

		assert_int_equal(aj_source_memory_init(&f.src, "t"), 0);
		assert_int_equal(load_any(&f, cases[i].any, cases[i].ns, &c, &err), cases[i].rc);
		assert_int_equal(c.valid, cases[i].valid);
		/* a set that loads keeps each reason on its candidate; one that fails says them all */
		for (j = 0; !cases[i].rc && j < c.nr; j++)
			if (!c.items[j].ok)
				where = &c.items[j].why;
		if (!aj_test_errors_contain(where, cases[i].want))
			fail_msg("case %zu: want \"%s\", got:\n%s", i, cases[i].want,
				 aj_test_errors_text(where));
		aj_candidates_release(&c);
		files_release(&f);
		aj_errors_release(&err);
	}
}

/*
 * A candidate that would create the same objects as an earlier one is kept
 * once, the later one said; one in the same queue asking for other nodes is
 * kept.
 */
static void candidates_kept_once(void **state)
{
	struct files f = { 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_candidates c;

	(void)state;
	assert_int_equal(aj_source_memory_init(&f.src, "t"), 0);
	files_add(&f, "template/kube2", "base: kube\nconfig:\n  description: the same job again\n");
	files_add(&f, "template/kube-h100", "base: kube\nconfig:\n"
		  "  target: {node_selector: {nvidia.com/gpu.product: H100}}\n");
	assert_int_equal(load_any(&f, "base: []\nconfig:\n  placement: "
				  "{candidates: [kube, kube2, kube-h100]}\n", "training", &c, &err), 0);
	assert_int_equal(c.valid, 2);
	assert_true(c.items[0].ok);
	assert_false(c.items[1].ok);
	assert_true(c.items[2].ok);
	assert_true(aj_test_errors_contain(&c.items[1].why, "template/kube2 is left out: it would "
					   "create the same objects as template/kube (kept once)"));
	aj_candidates_release(&c);
	files_release(&f);
	aj_errors_release(&err);
}

/* A placement leaf loaded alone says what it is instead of aml's complaints. */
static void placement_leaf_has_no_target(void **state)
{
	struct files f = { 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_shape_args one = { 1, 1, 0 };
	struct aj_pipeline_in in = { &f.src, "template/any", &one, command, 2, NULL, NULL, NULL };
	struct aj_pipeline p;

	(void)state;
	assert_int_equal(aj_source_memory_init(&f.src, "t"), 0);
	files_add(&f, "template/any", "base: []\nconfig:\n  placement: {candidates: [kube]}\n");
	aj_pipeline_init(&p);
	assert_int_equal(aj_pipeline_load(&in, &p, &err), -1);
	assert_int_equal(aj_errors_count(&err), 1);
	assert_true(aj_test_errors_contain(&err, "config.placement: template/any chooses among "
					   "candidate templates"));
	aj_pipeline_release(&p);
	files_release(&f);
	aj_errors_release(&err);
}

/* ---- ranking ------------------------------------------------------------- */

static void ranking(void **state)
{
	/* name, state, expected wait, in the user's order; want: names in rank order */
	struct aj_place_row rows[] = {
		{ "volcano", "volcano", "", 0, AJ_PLACE_FULL, 30, "", 0, 0 },
		{ "kube", "kube", "", 1, AJ_PLACE_FITS, 40, "", 0, 0 },
		{ "sing", "sing", "", 2, AJ_PLACE_FITS, 600, "", 0, 0 },
		{ "aml", "aml", "", 3, AJ_PLACE_UNKNOWN, 5, "", 0, 0 },
		{ "kube2", "kube", "", 4, AJ_PLACE_FITS, -1, "", 0, 0 },
		{ "gone", "kube", "", 5, AJ_PLACE_EXCLUDED, 1, "", 0, 0 },
		{ "kube3", "kube", "", 6, AJ_PLACE_FITS, 40, "", 0, 0 },
		{ "volcano2", "volcano", "", 7, AJ_PLACE_FULL, -1, "", 0, 0 },
	};
	static const char *const want[] = { "kube", "kube3", "sing", "kube2", "volcano", "volcano2",
					    "aml", "gone" };
	static const size_t want_rank[] = { 1, 2, 3, 4, 5, 6, 7, 0 };
	size_t i;

	(void)state;
	aj_place_rank(rows, 8);
	for (i = 0; i < 8; i++) {
		assert_string_equal(rows[i].name, want[i]);
		assert_int_equal(rows[i].rank, want_rank[i]);
	}
	/* nothing known anywhere: the user's order decides */
	{
		struct aj_place_row same[] = {
			{ "c", "", "", 2, AJ_PLACE_FULL, -1, "", 0, 0 },
			{ "a", "", "", 0, AJ_PLACE_FULL, -1, "", 0, 0 },
			{ "b", "", "", 1, AJ_PLACE_FULL, -1, "", 0, 0 },
		};

		aj_place_rank(same, 3);
		assert_string_equal(same[0].name, "a");
		assert_string_equal(same[1].name, "b");
		assert_string_equal(same[2].name, "c");
	}
	aj_place_rank(NULL, 0);
	assert_string_equal(aj_place_state_name(AJ_PLACE_FITS), "CanStartNow");
	assert_string_equal(aj_place_state_name(AJ_PLACE_UNKNOWN), "Unknown");
}

/* The ranking's pick: the first when it can start or nothing is known; else it waits. */
static void pick(void **state)
{
	static const struct {
		enum aj_place_state first, second;
		size_t n, want;
	} cases[] = {
		{ AJ_PLACE_FITS, AJ_PLACE_FULL, 2, 0 },
		{ AJ_PLACE_FULL, AJ_PLACE_UNKNOWN, 2, 2 },
		{ AJ_PLACE_UNKNOWN, AJ_PLACE_EXCLUDED, 2, 0 },
		{ AJ_PLACE_EXCLUDED, AJ_PLACE_EXCLUDED, 2, 2 },
		{ AJ_PLACE_FITS, AJ_PLACE_FITS, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aj_place_row rows[2] = {
			{ "a", "", "", 0, cases[i].first, -1, "", 0, 0 },
			{ "b", "", "", 1, cases[i].second, -1, "", 0, 0 },
		};

		assert_int_equal(aj_place_pick(rows, cases[i].n), cases[i].want);
	}
}

/* Each candidate's row from the views: its state and reason, its place, its wait. */
static void judge_rows(void **state)
{
	struct files f = { 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_build_ctx ctx = { "job", "training", NULL, NULL, NULL, 0 };
	struct aj_place_row rows[3];
	char where[3][AJ_PLACE_WHERE_MAX];
	const int served[] = { 1, 0, 1 };
	const char *const why_not[] = { "", "given up: it did not start within max_wait", "" };
	struct aj_candidates c;
	struct aj_views v;
	struct aj_waits w;

	(void)state;
	assert_int_equal(aj_source_memory_init(&f.src, "t"), 0);
	assert_int_equal(load_any(&f, "base: []\nconfig:\n  placement:\n"
				  "    candidates: [volcano, kube, missing]\n", "training", &c, &err), 0);
	aj_views_init(&v);
	aj_waits_init(&w);
	snprintf(v.queues_why, sizeof(v.queues_why),
		 "the CRD queues.scheduling.volcano.sh is not installed");
	/* 2 pods of 1 GPU: the 1-8 GPU band */
	assert_int_equal(aj_waits_add(&w, "template/volcano", AJ_BAND_GPU_8, 40, 1000), 0);
	assert_int_equal(aj_place_judge(&v, &w, &c, &ctx, served, why_not, rows, where, &err), 0);
	assert_string_equal(rows[0].name, "template/volcano");
	assert_string_equal(rows[0].backend, "volcano");
	assert_string_equal(rows[0].where, "training/");
	assert_int_equal(rows[0].state, AJ_PLACE_UNKNOWN);
	assert_string_equal(rows[0].reason, "Volcano queues unknown: the CRD "
			    "queues.scheduling.volcano.sh is not installed");
	assert_int_equal(rows[0].gpus, 2);
	assert_int_equal(rows[0].expected_wait, 40);
	assert_int_equal(rows[1].state, AJ_PLACE_EXCLUDED);
	assert_string_equal(rows[1].where, "training/team-a");
	assert_string_equal(rows[1].reason, "given up: it did not start within max_wait");
	assert_int_equal(rows[2].state, AJ_PLACE_EXCLUDED);
	assert_string_equal(rows[2].backend, "");
	assert_non_null(strstr(rows[2].reason, "template/missing is left out: it does not resolve"));
	/* every candidate served: the kube one meets its gate, a LocalQueue the views lack */
	assert_int_equal(aj_place_judge(&v, &w, &c, &ctx, NULL, NULL, rows, where, &err), 0);
	assert_int_equal(rows[1].state, AJ_PLACE_FULL);
	assert_string_equal(rows[1].reason, "LocalQueue training/team-a does not exist");
	assert_int_equal(rows[1].expected_wait, -1);
	aj_place_rank(rows, 3);
	assert_string_equal(rows[0].name, "template/kube");
	assert_int_equal(aj_place_pick(rows, 3), 3);
	aj_waits_release(&w);
	aj_views_release(&v);
	aj_candidates_release(&c);
	files_release(&f);
	aj_errors_release(&err);
}

/* Azure candidates judged on the bodies their builders make: the compute's nodes, a VC's quota. */
static void judge_azure_rows(void **state)
{
	struct files f = { 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_build_ctx ctx = { "job", "training", NULL, NULL, NULL, 0 };
	struct aj_place_row rows[5];
	char where[5][AJ_PLACE_WHERE_MAX];
	struct aj_candidates c;
	struct aj_views v;
	struct aj_waits w;
	struct aj_vc *vcs = aj_calloc(1, sizeof(*vcs));
	struct aj_vc_quota *q;
	cJSON *computes = cJSON_Parse(
		"[{\"name\": \"gpu-cluster\", \"properties\": {\"computeType\": \"AmlCompute\","
		" \"properties\": {\"scaleSettings\": {\"maxNodeCount\": 8}, \"currentNodeCount\": 7,"
		" \"nodeStateCounts\": {\"runningNodeCount\": 7}}}}]");

	(void)state;
	assert_non_null(vcs);
	assert_non_null(computes);
	assert_int_equal(aj_source_memory_init(&f.src, "t"), 0);
	files_add(&f, "template/aml", "base: []\nconfig:\n  target: {service: aml, name: gpu-cluster}\n"
		  "  environment: {image: img:1}\n  jobs: [{name: train, sku: G8}]\n");
	files_add(&f, "template/amlother", "base: []\nconfig:\n  target: {service: aml, name: big,"
		  " workspace_name: other}\n  environment: {image: img:1}\n  jobs: [{name: train, sku: G8}]\n");
	files_add(&f, "template/sing", "base: []\nconfig:\n  target: {service: sing}\n"
		  "  environment: {image: img:1}\n  jobs: [{name: train, sku: \"{nodes}x80G8-A100\"}]\n");
	/* the same body as template/sing in another subscription: no repeat */
	files_add(&f, "template/singother", "base: []\nconfig:\n  target: {service: sing, subscription_id: s2}\n"
		  "  environment: {image: img:1}\n  jobs: [{name: train, sku: \"{nodes}x80G8-A100\"}]\n");
	if (load_any(&f, "base: []\nconfig:\n  placement:\n"
		     "    candidates: [aml, amlother, sing, volcano, singother]\n", "training", &c, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	aj_views_init(&v);
	aj_waits_init(&w);
	v.azure.read = 1;
	assert_int_equal(aj_views_set_computes(&v.azure, "/subscriptions/s/resourceGroups/rg/providers/"
					       "Microsoft.MachineLearningServices/workspaces/ws",
					       computes), 0);
	aj_vc_init(vcs);
	assert_int_equal(aj_vc_set(vcs, "s", "rg", "vc-a"), 0);
	assert_non_null(q = aj_vc_quota_row(vcs, "ND_A100_v4"));
	q->limit[AJ_TIER_PREMIUM] = 32;
	assert_int_equal(aj_views_set_vcs(&v.azure, vcs, 1), 0);
	snprintf(v.queues_why, sizeof(v.queues_why), "the CRD queues.scheduling.volcano.sh is not installed");
	assert_int_equal(aj_place_judge(&v, &w, &c, &ctx, NULL, NULL, rows, where, &err), 0);
	assert_int_equal(c.valid, 5);
	/* where: what the templates say, the rest the controller's workspace */
	assert_string_equal(rows[0].where, "gpu-cluster");
	assert_string_equal(rows[1].where, "other/big");
	assert_string_equal(rows[4].where, "s2");
	/* 2 nodes asked (the shape), 1 of 8 free */
	assert_string_equal(rows[0].backend, "aml");
	assert_int_equal(rows[0].state, AJ_PLACE_FULL);
	assert_string_equal(rows[0].reason, "compute gpu-cluster: 1 of 8 nodes free (7 running), the job needs 2");
	assert_int_equal(rows[1].state, AJ_PLACE_UNKNOWN);
	assert_string_equal(rows[1].reason, "workspace other is not read for placement (not the one these views hold)");
	assert_int_equal(rows[2].state, AJ_PLACE_FITS);
	assert_string_equal(rows[2].reason, "virtual cluster s/rg/vc-a: Premium quota for 2 x "
			    "ND96amrs_A100_v4 (16 units), 16 left");
	/* the VCs of the target's subscription only, as the forwarder would choose: none there */
	assert_int_equal(rows[4].state, AJ_PLACE_FULL);
	assert_non_null(strstr(rows[4].reason, "none found"));
	aj_place_rank(rows, 5);
	assert_string_equal(rows[0].name, "template/sing");
	assert_string_equal(rows[1].name, "template/aml");
	assert_int_equal(aj_place_pick(rows, 5), 0);
	/* more nodes free: the first in the user's order wins among those that fit */
	cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetArrayItem(computes, 0),
		"properties"), "properties"), "currentNodeCount")->valuedouble = 2;
	aj_views_azure_release(&v.azure);
	v.azure.read = 1;
	assert_int_equal(aj_views_set_computes(&v.azure, "/subscriptions/s/resourceGroups/rg/providers/"
					       "Microsoft.MachineLearningServices/workspaces/ws",
					       computes), 0);
	snprintf(v.azure.vcs_why, sizeof(v.azure.vcs_why), "Azure is unreachable");
	assert_int_equal(aj_place_judge(&v, &w, &c, &ctx, NULL, NULL, rows, where, &err), 0);
	aj_place_rank(rows, 5);
	assert_string_equal(rows[0].name, "template/aml");
	assert_string_equal(rows[0].reason, "compute gpu-cluster: 6 of 8 nodes free");
	/* no VC read: the sing row is unknown and ranks after every known one, in the user's order */
	assert_string_equal(rows[2].name, "template/sing");
	assert_int_equal(rows[2].state, AJ_PLACE_UNKNOWN);
	assert_string_equal(rows[2].reason, "virtual clusters unknown: Azure is unreachable");
	aj_waits_release(&w);
	aj_views_release(&v);
	aj_candidates_release(&c);
	files_release(&f);
	aj_errors_release(&err);
	cJSON_Delete(computes);
}

/*
 * AjJobs placed from one snapshot, each pick charged to it: the Volcano
 * queue holds two of the jobs (2 pods of 1 GPU each), so the third goes
 * to the Kueue candidate, and the Volcano row says why it now waits.
 */
static void picks_charged(void **state)
{
	static const char *const want[] = { "template/volcano", "template/volcano", "template/kube",
					    "template/kube" };
	struct files f = { 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_build_ctx ctx = { "job", "training", NULL, NULL, NULL, 0 };
	struct aj_place_row rows[2];
	char where[2][AJ_PLACE_WHERE_MAX];
	struct aj_candidates c;
	struct aj_views v;
	struct aj_waits w;
#define NODE(name) "{\"metadata\": {\"name\": \"" name "\"}, \"status\": {\"allocatable\":" \
	" {\"cpu\": \"64\", \"memory\": \"512Gi\", \"nvidia.com/gpu\": \"8\", \"pods\": \"110\"}," \
	" \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\"}]}}"
	cJSON *nodes = cJSON_Parse("{\"items\": [" NODE("n0") ", " NODE("n1") "]}");
#undef NODE
	cJSON *queues = cJSON_Parse(
		"{\"items\": [{\"metadata\": {\"name\": \"default\"},"
		" \"spec\": {\"capability\": {\"nvidia.com/gpu\": 4}}, \"status\": {\"state\": \"Open\"}}]}");
	cJSON *cqs = cJSON_Parse(
		"{\"items\": [{\"metadata\": {\"name\": \"team-a\"}, \"spec\": {\"resourceGroups\": [{"
		" \"coveredResources\": [\"nvidia.com/gpu\"], \"flavors\": [{\"name\": \"any\","
		" \"resources\": [{\"name\": \"nvidia.com/gpu\", \"nominalQuota\": 4}]}]}]},"
		" \"status\": {\"conditions\": [{\"type\": \"Active\", \"status\": \"True\"}]}}]}");
	cJSON *lqs = cJSON_Parse(
		"{\"items\": [{\"metadata\": {\"namespace\": \"training\", \"name\": \"team-a\"},"
		" \"spec\": {\"clusterQueue\": \"team-a\"}}]}");
	cJSON *flavors = cJSON_Parse("{\"items\": [{\"metadata\": {\"name\": \"any\"}}]}");
	size_t i, k, at;

	(void)state;
	assert_non_null(nodes);
	assert_non_null(queues);
	assert_non_null(cqs);
	assert_non_null(lqs);
	assert_non_null(flavors);
	assert_int_equal(aj_source_memory_init(&f.src, "t"), 0);
	if (load_any(&f, "base: []\nconfig:\n  placement:\n    candidates: [volcano, kube]\n",
		     "training", &c, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	aj_views_init(&v);
	aj_waits_init(&w);
	assert_int_equal(aj_views_set_nodes(&v, nodes, NULL), 0);
	assert_int_equal(aj_views_set_queues(&v, queues), 0);
	assert_int_equal(aj_views_set_kueue(&v, cqs, lqs, flavors), 0);
	for (k = 0; k < 5; k++) {
		assert_int_equal(aj_place_judge(&v, &w, &c, &ctx, NULL, NULL, rows, where, &err), 0);
		aj_place_rank(rows, 2);
		if (k == 4) {
			/* both full now: the job waits, each row with the placements that filled it */
			assert_int_equal(aj_place_pick(rows, 2), 2);
			break;
		}
		if (aj_place_pick(rows, 2))
			fail_msg("pick %zu: %s: %s; %s: %s", k, rows[0].name, rows[0].reason, rows[1].name,
				 rows[1].reason);
		assert_int_equal(rows[0].state, AJ_PLACE_FITS);
		assert_string_equal(rows[0].name, want[k]);
		for (i = 0, at = c.nr; i < c.nr; i++)
			if (!strcmp(c.items[i].name, rows[0].name))
				at = i;
		assert_true(at < c.nr);
		assert_int_equal(aj_place_charge(&v, &c.items[at].p, &ctx, &err), 0);
	}
	assert_string_equal(rows[0].name, "template/volcano");
	assert_int_equal(rows[0].state, AJ_PLACE_FULL);
	assert_string_equal(rows[0].reason, "queue default: capability nvidia.com/gpu 4, allocated 4 "
			    "after 2 placements since the last read, the job asks 2");
	assert_string_equal(rows[1].reason, "ClusterQueue team-a: 0 of 4 nvidia.com/gpu free after 2 "
			    "placements since the last read, the job asks 2");
	/* one pod of each job on each node (one per node): 4 of 8 GPUs left on both */
	assert_int_equal(v.nodes[0].free.v[AJ_FIT_GPU], 4);
	assert_int_equal(v.nodes[1].free.v[AJ_FIT_GPU], 4);
	assert_int_equal(v.nodes[0].charged, 4);
	aj_waits_release(&w);
	aj_views_release(&v);
	aj_candidates_release(&c);
	files_release(&f);
	aj_errors_release(&err);
	cJSON_Delete(nodes);
	cJSON_Delete(queues);
	cJSON_Delete(cqs);
	cJSON_Delete(lqs);
	cJSON_Delete(flavors);
}

static void wait_history(void **state)
{
	struct aj_waits w;
	long i;

	(void)state;
	assert_int_equal(aj_waits_band(0, 64), AJ_BAND_CPU);
	assert_int_equal(aj_waits_band(8, 1), AJ_BAND_GPU_8);
	assert_int_equal(aj_waits_band(8, 2), AJ_BAND_GPU_64);
	assert_int_equal(aj_waits_band(8, 8), AJ_BAND_GPU_64);
	assert_int_equal(aj_waits_band(8, 9), AJ_BAND_GPU_512);
	assert_int_equal(aj_waits_band(8, 65), AJ_BAND_GPU_MORE);
	assert_int_equal(aj_waits_band(1L << 40, 1L << 40), AJ_BAND_GPU_MORE);
	aj_waits_init(&w);
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_8), -1);
	assert_int_equal(aj_waits_add(&w, "template/kube", AJ_BAND_GPU_8, 100, 1000), 0);
	assert_int_equal(aj_waits_add(&w, "template/kube", AJ_BAND_GPU_8, 10, 1001), 0);
	assert_int_equal(aj_waits_add(&w, "template/kube", AJ_BAND_GPU_8, 40, 1002), 0);
	/* lower median of 10, 40, 100 */
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_8), 40);
	/* the same job seen again counts once: 10, 40, 100, not 10, 10, 10, 40, 100 */
	assert_int_equal(aj_waits_add(&w, "template/kube", AJ_BAND_GPU_8, 10, 1001), 0);
	assert_int_equal(aj_waits_add(&w, "template/kube", AJ_BAND_GPU_8, 10, 1001), 0);
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_8), 40);
	/* another band and another candidate learn nothing from it */
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_64), -1);
	assert_int_equal(aj_waits_expected(&w, "template/volcano", AJ_BAND_GPU_8), -1);
	/* a negative wait (clock skew) counts as 0; even count: the lower median */
	assert_int_equal(aj_waits_add(&w, "template/kube", AJ_BAND_GPU_8, -5, 1003), 0);
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_8), 10);
	/* 16 newer samples of 500 s push every older one out, whatever their order */
	for (i = 0; i < AJ_WAITS_SAMPLES; i++)
		assert_int_equal(aj_waits_add(&w, "template/kube", AJ_BAND_GPU_8, 500, 3000 - i), 0);
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_8), 500);
	/* an older sample than everything kept is not taken */
	assert_int_equal(aj_waits_add(&w, "template/kube", AJ_BAND_GPU_8, 1, 10), 0);
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_8), 500);
	aj_waits_release(&w);
}

/* An AjJob's status with one condition and the given attempts (JSON text). */
static cJSON *ajjob_with(const char *cond, const char *cond_status, const char *since,
			 const char *attempts)
{
	char text[1024];
	cJSON *job;

	snprintf(text, sizeof(text),
		 "{\"status\":{\"conditions\":[{\"type\":\"Submitted\",\"status\":\"True\","
		 "\"lastTransitionTime\":\"2026-03-01T09:00:00Z\"},{\"type\":\"%s\","
		 "\"status\":\"%s\",\"lastTransitionTime\":\"%s\"}],"
		 "\"placement\":{\"chosen\":\"x\",\"attempts\":%s}}}",
		 cond, cond_status, since, attempts);
	job = cJSON_Parse(text);
	assert_non_null(job);
	return job;
}

/* What an AjJob's status teaches: its last attempt's wait until Running (else its end). */
static void wait_learning(void **state)
{
	static const struct {
		const char *cond, *on, *since, *attempts;
	} teach_nothing[] = {
		/* not running yet */
		{ "Running", "False", "2026-03-01T10:02:30Z",
		  "[{\"candidate\":\"template/sing\",\"submitted\":\"2026-03-01T10:00:00Z\"}]" },
		/* Running before its submission: the clocks disagree, no sample */
		{ "Running", "True", "2026-03-01T09:59:00Z",
		  "[{\"candidate\":\"template/sing\",\"submitted\":\"2026-03-01T10:00:00Z\"}]" },
		/* no attempt, an attempt with no time or no candidate */
		{ "Running", "True", "2026-03-01T10:02:30Z", "[]" },
		{ "Running", "True", "2026-03-01T10:02:30Z", "[{\"candidate\":\"template/sing\"}]" },
		{ "Running", "True", "2026-03-01T10:02:30Z",
		  "[{\"submitted\":\"2026-03-01T10:00:00Z\"}]" },
		/* failed: it never ran */
		{ "Failed", "True", "2026-03-01T10:02:30Z",
		  "[{\"candidate\":\"template/sing\",\"submitted\":\"2026-03-01T10:00:00Z\"}]" },
	};
	struct aj_waits w;
	cJSON *job;
	size_t i;

	(void)state;
	aj_waits_init(&w);
	/* the last attempt counts: 4 GPUs on kube, Running 150 s after its submission */
	job = ajjob_with("Running", "True", "2026-03-01T10:02:30Z",
			 "[{\"candidate\":\"template/volcano\",\"submitted\":\"2026-03-01T09:00:00Z\","
			 "\"outcome\":\"GaveUp\"},{\"candidate\":\"template/kube\","
			 "\"submitted\":\"2026-03-01T10:00:00Z\",\"gpus\":4}]");
	assert_int_equal(aj_waits_learn(&w, job), 0);
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_8), 150);
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_CPU), -1);
	assert_int_equal(aj_waits_expected(&w, "template/volcano", AJ_BAND_GPU_8), -1);
	/* the same AjJob again (each status write brings it back) is one sample */
	assert_int_equal(aj_waits_learn(&w, job), 0);
	cJSON_Delete(job);
	job = ajjob_with("Running", "True", "2026-03-01T11:00:10Z",
			 "[{\"candidate\":\"template/kube\",\"submitted\":\"2026-03-01T11:00:00Z\","
			 "\"gpus\":8}]");
	assert_int_equal(aj_waits_learn(&w, job), 0);
	cJSON_Delete(job);
	/* 10 and 150 (not 10, 150, 150): the lower median */
	assert_int_equal(aj_waits_expected(&w, "template/kube", AJ_BAND_GPU_8), 10);
	/* done before its Running was written: its end bounds its start; no gpus: the CPU band */
	job = ajjob_with("Succeeded", "True", "2026-03-01T10:00:30Z",
			 "[{\"candidate\":\"template/volcano\",\"submitted\":\"2026-03-01T10:00:00Z\"}]");
	assert_int_equal(aj_waits_learn(&w, job), 0);
	cJSON_Delete(job);
	assert_int_equal(aj_waits_expected(&w, "template/volcano", AJ_BAND_CPU), 30);
	/* an attempt that says when it started: that, not its end (Running is False by then) */
	job = ajjob_with("Succeeded", "True", "2026-03-01T12:10:00Z",
			 "[{\"candidate\":\"template/aml\",\"submitted\":\"2026-03-01T12:00:00Z\","
			 "\"started\":\"2026-03-01T12:00:40Z\",\"outcome\":\"Succeeded\"}]");
	assert_int_equal(aj_waits_learn(&w, job), 0);
	cJSON_Delete(job);
	assert_int_equal(aj_waits_expected(&w, "template/aml", AJ_BAND_CPU), 40);
	for (i = 0; i < sizeof(teach_nothing) / sizeof(teach_nothing[0]); i++) {
		job = ajjob_with(teach_nothing[i].cond, teach_nothing[i].on, teach_nothing[i].since,
				 teach_nothing[i].attempts);
		assert_int_equal(aj_waits_learn(&w, job), 0);
		cJSON_Delete(job);
		assert_int_equal(aj_waits_expected(&w, "template/sing", AJ_BAND_CPU), -1);
	}
	/* an AjJob that is no placement's, or none at all */
	job = cJSON_Parse("{\"status\":{\"phase\":\"Running\"}}");
	assert_int_equal(aj_waits_learn(&w, job), 0);
	cJSON_Delete(job);
	assert_int_equal(aj_waits_learn(&w, NULL), 0);
	aj_waits_release(&w);
}

/* The ranking as status.placement (and aj place -o json) says it. */
static void status_json(void **state)
{
	struct aj_place_row rows[] = {
		{ "template/kube", "kube", "training/team-a", 1, AJ_PLACE_FITS, 40, "fits", 1, 0 },
		{ "template/sing", "sing", "s/rg/ws/vc", 2, AJ_PLACE_UNKNOWN, -1, "unread", 2, 0 },
		{ "template/gone", "", "", 0, AJ_PLACE_EXCLUDED, -1, "left out", 0, 0 },
	};
	const cJSON *c;
	cJSON *pl;

	(void)state;
	pl = aj_place_status_json(rows, 3, "template/kube", 900);
	assert_non_null(pl);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(pl, "chosen")->valuestring,
			    "template/kube");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(pl, "maxWaitSeconds")->valueint, 900);
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pl, "candidates")), 3);
	c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pl, "candidates"), 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "name")->valuestring, "template/kube");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "backend")->valuestring, "kube");
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "where")->valuestring,
			    "training/team-a");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(c, "rank")->valueint, 1);
	assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(c, "canStartNow")));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "state")->valuestring, "CanStartNow");
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(c, "expectedWaitSeconds")->valueint, 40);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "reason")->valuestring, "fits");
	c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pl, "candidates"), 1);
	assert_true(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(c, "canStartNow")));
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "state")->valuestring, "Unknown");
	/* no history: no expectedWaitSeconds */
	assert_null(cJSON_GetObjectItemCaseSensitive(c, "expectedWaitSeconds"));
	c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(pl, "candidates"), 2);
	assert_int_equal(cJSON_GetObjectItemCaseSensitive(c, "rank")->valueint, 0);
	assert_string_equal(cJSON_GetObjectItemCaseSensitive(c, "state")->valuestring, "Excluded");
	cJSON_Delete(pl);
	/* waiting unplaced, no max_wait: neither chosen nor maxWaitSeconds */
	pl = aj_place_status_json(rows, 1, NULL, 0);
	assert_non_null(pl);
	assert_null(cJSON_GetObjectItemCaseSensitive(pl, "chosen"));
	assert_null(cJSON_GetObjectItemCaseSensitive(pl, "maxWaitSeconds"));
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pl, "candidates")), 1);
	cJSON_Delete(pl);
}

static void failover_steps(void **state)
{
	static const struct {
		struct aj_failover_in in;
		enum aj_failover_step want;
		double again;
	} rows[] = {
		/* max_wait, now, submitted, started, cancelling, gone, left */
		{ { 0, 5000, 0, 0, 0, 0, 2 }, AJ_FAILOVER_NONE, 0 },        /* no max_wait: never */
		{ { 900, 600, 0, 0, 0, 0, 2 }, AJ_FAILOVER_NONE, 300 },     /* within it: look at 900 */
		{ { 900, 900, 0, 0, 0, 0, 2 }, AJ_FAILOVER_CANCEL, 0 },     /* due */
		{ { 900, 5000, 0, 1, 0, 0, 2 }, AJ_FAILOVER_NONE, 0 },      /* it started: stays */
		{ { 900, 900, 0, 0, 0, 0, 0 }, AJ_FAILOVER_CANCEL, 0 },     /* the last one too */
		{ { 900, 100, 500, 0, 0, 0, 1 }, AJ_FAILOVER_NONE, 900 },   /* clock behind: full wait */
		{ { 900, 950, 0, 0, 1, 0, 1 }, AJ_FAILOVER_WAIT_GONE, AJ_FAILOVER_RECHECK },
		{ { 900, 950, 0, 1, 1, 0, 1 }, AJ_FAILOVER_KEEP, 0 },       /* started while cancelled */
		{ { 900, 950, 0, 1, 1, 1, 1 }, AJ_FAILOVER_PLACE, 0 },      /* gone wins over started */
		{ { 900, 950, 0, 0, 1, 1, 1 }, AJ_FAILOVER_PLACE, 0 },
		{ { 900, 950, 0, 0, 1, 1, 0 }, AJ_FAILOVER_GIVE_UP, 0 },
		{ { 900, 950, 0, 0, 0, 1, 1 }, AJ_FAILOVER_NONE, 0 },       /* lost, not ours */
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct aj_failover_out out = { AJ_FAILOVER_KEEP, -1 };

		aj_failover_decide(&rows[i].in, &out);
		if (out.step != rows[i].want || out.again_after != rows[i].again)
			fail_msg("row %zu: want %s after %g, got %s after %g", i,
				 aj_failover_step_name(rows[i].want), rows[i].again,
				 aj_failover_step_name(out.step), out.again_after);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(durations),
		cmocka_unit_test(placement_is_checked),
		cmocka_unit_test(placement_reads_what_was_written),
		cmocka_unit_test(candidates_load_like_run),
		cmocka_unit_test(candidates_left_out),
		cmocka_unit_test(candidates_kept_once),
		cmocka_unit_test(placement_leaf_has_no_target),
		cmocka_unit_test(ranking),
		cmocka_unit_test(pick),
		cmocka_unit_test(judge_rows),
		cmocka_unit_test(judge_azure_rows),
		cmocka_unit_test(picks_charged),
		cmocka_unit_test(wait_history),
		cmocka_unit_test(wait_learning),
		cmocka_unit_test(status_json),
		cmocka_unit_test(failover_steps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
