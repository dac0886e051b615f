/*
 * Singularity VC auto-selection: one test per ranking rule and tie-breaker
 * (seed specification, "Sing example and auto-selection"), the matching
 * filters, quotas read from a VC resource, and every refusal.
 *
 * Units: GPU series count GPUs, CPU series vCPUs; a job takes
 * units per instance x nodes. Expected choices are worked out by hand from
 * the quotas each test sets up.
 */
#include "support.h"

#include <limits.h>

#include <string.h>

#include "azure/vcselect.h"
#include "core/alloc.h"
#include "core/error.h"

#define MAX_VCS 6

struct world {
	struct aj_vc vcs[MAX_VCS];
	size_t nr;
};

static struct aj_vc *vc(struct world *w, const char *sub, const char *rg, const char *name)
{
	struct aj_vc *v = &w->vcs[w->nr++];

	aj_vc_init(v);
	assert_int_equal(aj_vc_set(v, sub, rg, name), 0);
	return v;
}

static void quota(struct aj_vc *v, const char *series, enum aj_tier t, long limit, long used)
{
	struct aj_vc_quota *q = aj_vc_quota_row(v, series);

	assert_non_null(q);
	q->limit[t] = limit;
	q->used[t] = used;
}

static void user_quota(struct aj_vc *v, const char *series, long limit, long used)
{
	struct aj_vc_quota *q = aj_vc_quota_row(v, series);

	assert_non_null(q);
	q->user_limit = limit;
	q->user_used = used;
}

static void world_release(struct world *w)
{
	size_t i;

	for (i = 0; i < w->nr; i++)
		aj_vc_release(&w->vcs[i]);
	w->nr = 0;
}

static struct aj_vc_request request(const char *sku, int nodes, const char *tier)
{
	struct aj_vc_request r = { sku, nodes, 0, tier, NULL, NULL, NULL, NULL, 0 };

	return r;
}

/* Select; must succeed. */
static void choose(struct world *w, const struct aj_vc_request *r, struct aj_vc_choice *c)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	if (aj_vc_select(r, w->vcs, w->nr, c, &err))
		fail_msg("selection failed: %s", aj_test_errors_text(&err));
	assert_non_null(c->chosen.vc);
	aj_errors_release(&err);
}

/* Select; must fail with fragment in the error. */
static void refuse(struct world *w, const struct aj_vc_request *r, const char *fragment)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_vc_choice c;

	assert_int_equal(aj_vc_select(r, w->vcs, w->nr, &c, &err), -1);
	assert_null(c.chosen.vc);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got: %s", fragment, aj_test_errors_text(&err));
	aj_vc_choice_release(&c);
	aj_errors_release(&err);
}

static const struct aj_vc_candidate *other(const struct aj_vc_choice *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->others_nr; i++)
		if (!strcmp(c->others[i].vc->name, name))
			return &c->others[i];
	fail_msg("no other candidate %s", name);
	return NULL;
}

static void why_contains(const struct aj_vc_choice *c, const char *name, const char *fragment)
{
	const struct aj_vc_candidate *o = other(c, name);

	if (!o)
		return;   /* other() has failed the test */
	if (!o->why || !strstr(o->why, fragment))
		fail_msg("%s: want \"%s\" in \"%s\"", name, fragment, o->why ? o->why : "(null)");
}

/* Rule 1: the requested tier wins over more quota in a fallback tier. */
static void rank_requested_tier_first(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("80G8-A100", 1, "Premium");
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s1", "rg", "rich"), "ND_A100_v4", AJ_TIER_STANDARD, 512, 0);
	quota(vc(&w, "s1", "rg", "tight"), "ND_A100_v4", AJ_TIER_PREMIUM, 8, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "tight");
	assert_int_equal(c.chosen.tier, AJ_TIER_PREMIUM);
	assert_string_equal(c.chosen.instance_type, "ND96amrs_A100_v4");
	assert_int_equal(c.chosen.units, 8);
	assert_int_equal(c.chosen.remaining, 0);
	why_contains(&c, "rich", "best tier Standard ranks below Premium on s1/rg/tight");
	aj_vc_choice_release(&c);
	world_release(&w);
}

/* Rule 1: without requested-tier quota anywhere, Standard then Basic. */
static void rank_fallback_order(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("80G8-A100", 2, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s", "rg", "basic"), "ND_A100_v4", AJ_TIER_BASIC, 1000, 0);
	quota(vc(&w, "s", "rg", "standard"), "ND_A100_v4", AJ_TIER_STANDARD, 16, 0);
	/* Premium quota too small for 2 x 8 GPUs */
	quota(vc(&w, "s", "rg", "premium"), "ND_A100_v4", AJ_TIER_PREMIUM, 24, 10);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "standard");
	assert_int_equal(c.chosen.tier, AJ_TIER_STANDARD);
	assert_int_equal(c.chosen.units, 16);
	why_contains(&c, "basic", "best tier Basic ranks below Standard");
	why_contains(&c, "premium", "ND_A100_v4 Premium: 14 free, 16 needed");
	/* the losers rank before the refused VC */
	assert_int_equal(c.others_nr, 2);
	assert_string_equal(c.others[0].vc->name, "basic");
	assert_string_equal(c.others[1].vc->name, "premium");
	aj_vc_choice_release(&c);
	world_release(&w);
}

/* Rule 1: a job never moves above the tier it asked for. */
static void rank_never_escalates(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("80G8-A100", 1, "standard");

	(void)state;
	quota(vc(&w, "s", "rg", "only-premium"), "ND_A100_v4", AJ_TIER_PREMIUM, 64, 0);
	refuse(&w, &r, "s/rg/only-premium: no Standard or Basic quota for ND_A100_v4");
	world_release(&w);
}

/* Rule 2: NVIDIA before AMD when no accelerator is named, even with less quota. */
static void rank_nvidia_preferred(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8", 1, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s", "rg", "amd"), "ND_MI300X_v4", AJ_TIER_PREMIUM, 800, 0);
	quota(vc(&w, "s", "rg", "nvidia"), "ND_H100_v5", AJ_TIER_PREMIUM, 8, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "nvidia");
	assert_string_equal(c.chosen.instance_type, "ND96r_H100_v5");
	why_contains(&c, "amd", "offers AMD (ND96isr_MI300X_v5); NVIDIA is preferred");
	aj_vc_choice_release(&c);

	/* The preference also holds between families of one VC. */
	quota(&w.vcs[0], "ND_H100_v5", AJ_TIER_PREMIUM, 8, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "amd");
	assert_string_equal(c.chosen.instance_type, "ND96r_H100_v5");
	aj_vc_choice_release(&c);
	world_release(&w);
}

/* Rule 2 applies only without an accelerator: a named one is an exact filter. */
static void rank_named_accelerator(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8-MI300X", 1, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s", "rg", "amd"), "ND_MI300X_v4", AJ_TIER_PREMIUM, 8, 0);
	quota(vc(&w, "s", "rg", "nvidia"), "ND_H100_v5", AJ_TIER_PREMIUM, 800, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "amd");
	assert_string_equal(c.chosen.vendor, "AMD");
	why_contains(&c, "nvidia", "no quota for ND_MI300X_v4");
	aj_vc_choice_release(&c);
	world_release(&w);
}

/* Rule 3: NVLink, when asked for, beats more quota on a family without it. */
static void rank_nvlink(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("80G4-A100-NvLink", 1, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s", "rg", "pcie"), "NC_A100_v4", AJ_TIER_PREMIUM, 400, 0);
	quota(vc(&w, "s", "rg", "sxm"), "ND_A100_v4", AJ_TIER_PREMIUM, 4, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "sxm");
	assert_string_equal(c.chosen.instance_type, "ND48am_A100_v4");
	assert_true(c.chosen.nvlink);
	why_contains(&c, "pcie", "NC96ad_A100_v4 has no NVLink");
	aj_vc_choice_release(&c);

	/* Not asked for: quota decides. */
	r.sku = "80G4-A100";
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "pcie");
	assert_string_equal(c.chosen.instance_type, "NC96ad_A100_v4");
	assert_int_equal(c.chosen.remaining, 396);
	aj_vc_choice_release(&c);
	world_release(&w);
}

/* Rule 4: most effective quota left after the job; the user cap counts. */
static void rank_remaining_quota(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("40G8-A100", 2, NULL);
	struct aj_vc_choice c;
	struct aj_vc *capped;

	(void)state;
	quota(vc(&w, "s", "rg", "small"), "NDv4", AJ_TIER_PREMIUM, 64, 32);
	capped = vc(&w, "s", "rg", "capped");
	quota(capped, "NDv4", AJ_TIER_PREMIUM, 1000, 0);
	user_quota(capped, "NDv4", 40, 0);     /* 40 - 16 = 24 effective */
	quota(vc(&w, "s", "rg", "big"), "NDv4", AJ_TIER_PREMIUM, 128, 64);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "big");
	assert_int_equal(c.chosen.remaining, 48);
	assert_string_equal(c.chosen.instance_type, "ND96rs_v4");
	why_contains(&c, "capped", "leaves 24 free after the job, 48 on s/rg/big");
	why_contains(&c, "small", "leaves 16 free after the job, 48 on s/rg/big");
	assert_string_equal(c.others[0].vc->name, "capped");
	assert_string_equal(c.others[1].vc->name, "small");
	aj_vc_choice_release(&c);
	world_release(&w);
}

/* Rule 5: equal rank goes to the smaller subscription, then group, then name. */
static void rank_coordinates(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8-H100", 1, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "sub-b", "a", "a"), "ND_H100_v5", AJ_TIER_PREMIUM, 16, 0);
	quota(vc(&w, "sub-a", "rg-2", "a"), "ND_H100_v5", AJ_TIER_PREMIUM, 16, 0);
	quota(vc(&w, "sub-a", "rg-1", "z"), "ND_H100_v5", AJ_TIER_PREMIUM, 16, 0);
	quota(vc(&w, "sub-a", "rg-1", "m"), "ND_H100_v5", AJ_TIER_PREMIUM, 16, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->subscription, "sub-a");
	assert_string_equal(c.chosen.vc->resource_group, "rg-1");
	assert_string_equal(c.chosen.vc->name, "m");
	assert_int_equal(c.others_nr, 3);
	assert_string_equal(c.others[0].vc->name, "z");
	assert_string_equal(c.others[1].vc->resource_group, "rg-2");
	assert_string_equal(c.others[2].vc->subscription, "sub-b");
	why_contains(&c, "z", "ranks equal and sorts after sub-a/rg-1/m");
	aj_vc_choice_release(&c);
	world_release(&w);
}

/* Rule 6: inside one VC, equal families go by the built-in preference order. */
static void rank_family_order(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("80G1-A100", 1, NULL);
	struct aj_vc_choice c;
	struct aj_vc *v;

	(void)state;
	v = vc(&w, "s", "rg", "both");
	quota(v, "NC_A100_v4", AJ_TIER_PREMIUM, 8, 0);
	quota(v, "ND_A100_v4", AJ_TIER_PREMIUM, 8, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.series, "ND_A100_v4");
	assert_string_equal(c.chosen.instance_type, "ND12am_A100_v4");
	assert_int_equal(c.others_nr, 0);
	aj_vc_choice_release(&c);
	world_release(&w);
}

/* GPU count and per-GPU memory are exact filters. */
static void match_gpu_exact(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G3", 1, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s", "rg", "v"), "ND_A100_v4", AJ_TIER_PREMIUM, 64, 0);
	quota(&w.vcs[0], "NDv4", AJ_TIER_PREMIUM, 64, 0);
	refuse(&w, &r, "config.jobs[0].sku: \"G3\": no Singularity instance family matches");
	r.sku = "40G8-A100";
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.series, "NDv4");
	aj_vc_choice_release(&c);
	r.sku = "48G8-A100";
	refuse(&w, &r, "\"48G8-A100\": no Singularity instance family matches");
	r.sku = "G8-B200";
	refuse(&w, &r, "\"G8-B200\": no Singularity instance family matches");
	world_release(&w);
}

/* CPU SKUs: -p picks the size tier; quota is in vCPUs. */
static void match_cpu_tier(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("C", 2, NULL);
	struct aj_vc_choice c;

	(void)state;
	r.processes = 3;
	quota(vc(&w, "s", "rg", "cpu"), "Eadsv5", AJ_TIER_PREMIUM, 40, 0);
	quota(vc(&w, "s", "rg", "gpu"), "ND_A100_v4", AJ_TIER_PREMIUM, 400, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.instance_type, "E16ads_v5");
	assert_int_equal(c.chosen.units, 32);       /* 16 vCPUs x 2 nodes */
	assert_int_equal(c.chosen.remaining, 8);
	why_contains(&c, "gpu", "no quota for Eadsv5, Dv3");
	aj_vc_choice_release(&c);
	r.processes = 4;                             /* 32 x 2 = 64 > 40 */
	refuse(&w, &r, "Eadsv5 Premium: 40 free, 64 needed");
	r.processes = 6;
	refuse(&w, &r, "no Singularity CPU family has size tier 6");
	world_release(&w);
}

/* The user (overall) quota must cover the job too. */
static void match_user_quota(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8-H100", 1, NULL);
	struct aj_vc *v;

	(void)state;
	v = vc(&w, "s", "rg", "v");
	quota(v, "ND_H100_v5", AJ_TIER_PREMIUM, 64, 0);
	user_quota(v, "ND_H100_v5", 16, 12);
	refuse(&w, &r, "s/rg/v: ND_H100_v5 user quota: 4 free, 8 needed");
	world_release(&w);
}

/* A direct instance type stands for its family. */
static void match_direct_instance(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("2xSingularity.ND96amrs_A100_v4", 2, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s", "rg", "v"), "ND_A100_v4", AJ_TIER_PREMIUM, 16, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.instance_type, "ND96amrs_A100_v4");
	assert_int_equal(c.chosen.units, 16);
	aj_vc_choice_release(&c);
	r.sku = "ND1000_unknown_v9";
	refuse(&w, &r, "\"ND1000_unknown_v9\": no Singularity instance family matches");
	world_release(&w);
}

/* An explicit VC: only it is considered, with the same tier fallback. */
static void explicit_vc(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8-H100", 1, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s", "rg", "better"), "ND_H100_v5", AJ_TIER_PREMIUM, 800, 0);
	quota(vc(&w, "s", "rg", "mine"), "ND_H100_v5", AJ_TIER_BASIC, 8, 0);
	r.vc = "Mine";                   /* ARM names are case-insensitive */
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "mine");
	assert_int_equal(c.chosen.tier, AJ_TIER_BASIC);
	assert_int_equal(c.others_nr, 0);
	aj_vc_choice_release(&c);
	r.tier = "Basic";
	quota(&w.vcs[1], "ND_H100_v5", AJ_TIER_BASIC, 8, 4);
	refuse(&w, &r, "s/rg/mine: ND_H100_v5 Basic: 4 free, 8 needed");
	world_release(&w);
}

static void explicit_vc_unknown(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8-H100", 1, NULL);

	(void)state;
	quota(vc(&w, "s", "rg", "there"), "ND_H100_v5", AJ_TIER_PREMIUM, 800, 0);
	r.vc = "elsewhere";
	refuse(&w, &r, "config.target.name: virtual cluster \"elsewhere\" not found");
	r.vc = "there";
	r.subscription = "other-sub";
	refuse(&w, &r, "virtual cluster \"there\" not found in subscription other-sub");
	world_release(&w);
}

/* Subscription and resource group filter which VCs are considered. */
static void filters(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8-H100", 1, NULL);
	struct aj_vc_choice c;

	(void)state;
	quota(vc(&w, "s1", "rg-a", "v1"), "ND_H100_v5", AJ_TIER_PREMIUM, 800, 0);
	quota(vc(&w, "s2", "rg-a", "v2"), "ND_H100_v5", AJ_TIER_PREMIUM, 80, 0);
	quota(vc(&w, "s2", "rg-b", "v3"), "ND_H100_v5", AJ_TIER_PREMIUM, 16, 0);
	r.subscription = "s2";
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "v2");
	assert_int_equal(c.others_nr, 1);
	aj_vc_choice_release(&c);
	r.resource_group = "RG-B";
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "v3");
	assert_int_equal(c.others_nr, 0);
	aj_vc_choice_release(&c);
	r.subscription = "s3";
	refuse(&w, &r, "config.target: no virtual cluster has Premium quota for 1 x \"G8-H100\" "
	       "(or a lower tier): none found");
	world_release(&w);
}

static void no_vc_with_quota(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8-H100", 1, "Standard");

	(void)state;
	quota(vc(&w, "s", "rg", "full"), "ND_H100_v5", AJ_TIER_STANDARD, 64, 60);
	quota(vc(&w, "s", "rg", "cpu-only"), "Dv3", AJ_TIER_STANDARD, 64, 0);
	vc(&w, "s", "rg", "empty");
	refuse(&w, &r, "no virtual cluster has Standard quota for 1 x \"G8-H100\" (or a lower "
	       "tier): s/rg/full: ND_H100_v5 Standard: 4 free, 8 needed; s/rg/cpu-only: no "
	       "Standard or Basic quota for ND_H100_v5, LMD_BM_GPUH100; s/rg/empty: no Standard "
	       "or Basic quota for ND_H100_v5, LMD_BM_GPUH100");
	world_release(&w);
}

static void bad_input(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("eight gpus", 1, NULL);

	(void)state;
	refuse(&w, &r, "\"eight gpus\": neither a Singularity instance type nor SKU shorthand");
	r.sku = "G8";
	r.tier = "Gold";
	refuse(&w, &r, "config.jobs[0].sla_tier: \"Gold\" is not an SLA tier");
	r.tier = NULL;
	r.nodes = 0;
	refuse(&w, &r, "cannot choose a virtual cluster for 0 nodes");
}

static const char vc_resource[] =
	"{\"name\":\"myvc\",\"location\":\"westus2\",\"properties\":{\"managed\":{"
	"\"defaultGroupPolicyOverallQuotas\":{\"limits\":["
	"{\"id\":\"ND_A100_v4\",\"name\":\"x\",\"slaTier\":null,\"limit\":128,\"used\":64}]},"
	"\"quotas\":{"
	"\"westus2\":{\"limits\":["
	"{\"id\":\"ND_A100_v4\",\"slaTier\":\"Premium\",\"limit\":64,\"used\":32},"
	"{\"id\":\"ND_A100_v4\",\"slaTier\":\"standard\",\"limit\":32,\"used\":0},"
	"{\"id\":\"Dv3\",\"slaTier\":null,\"limit\":100}]},"
	"\"eastus\":{\"limits\":["
	"{\"id\":\"ND_A100_v4\",\"slaTier\":\"Premium\",\"limit\":16,\"used\":16}]}}}}}";

/* Quotas as the VC resource carries them. */
static void read_quotas(void **state)
{
	struct aj_vc v;
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *j = cJSON_Parse(vc_resource);

	(void)state;
	aj_vc_init(&v);
	assert_int_equal(aj_vc_set(&v, "s", "rg", "myvc"), 0);
	assert_int_equal(aj_vc_read_quotas(&v, j, &err), 0);
	assert_string_equal(v.location, "westus2");
	assert_int_equal(v.quotas_nr, 2);
	assert_string_equal(v.quotas[0].series, "Dv3");     /* sorted by series */
	assert_int_equal(v.quotas[0].limit[AJ_TIER_BASIC], 100);
	assert_int_equal(v.quotas[0].used[AJ_TIER_BASIC], 0);
	assert_int_equal(v.quotas[0].limit[AJ_TIER_PREMIUM], -1);
	assert_int_equal(v.quotas[0].user_limit, -1);
	assert_string_equal(v.quotas[1].series, "ND_A100_v4");
	assert_int_equal(v.quotas[1].limit[AJ_TIER_PREMIUM], 80);   /* regions summed */
	assert_int_equal(v.quotas[1].used[AJ_TIER_PREMIUM], 48);
	assert_int_equal(aj_vc_quota_free(&v.quotas[1], AJ_TIER_PREMIUM), 32);
	assert_int_equal(v.quotas[1].limit[AJ_TIER_STANDARD], 32);
	assert_int_equal(v.quotas[1].user_limit, 128);
	assert_int_equal(v.quotas[1].user_used, 64);
	assert_int_equal(aj_vc_quota_free(&v.quotas[1], AJ_TIER_BASIC), -1);
	aj_vc_release(&v);
	cJSON_Delete(j);

	j = cJSON_Parse("{\"properties\":{\"managed\":{\"quotas\":{\"r\":{\"limits\":"
			"[{\"id\":\"NDv2\",\"limit\":\"lots\"}]}}}}}");
	aj_vc_init(&v);
	assert_int_equal(aj_vc_set(&v, "s", "rg", "bad"), 0);
	assert_int_equal(aj_vc_read_quotas(&v, j, &err), -1);
	assert_true(aj_test_errors_contain(&err, "virtual cluster bad: quotas.r.limits[0]: "
					   "expected {id, limit, used}"));
	aj_vc_release(&v);
	cJSON_Delete(j);
	aj_errors_release(&err);
}

/* Absurd limits in many regions add up to a cap instead of overflowing (found by fuzz_vcselect). */
static void huge_quotas_stop_at_a_cap(void **state)
{
	struct aj_vc v;
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *j = cJSON_Parse("{\"properties\":{\"managed\":{"
		"\"defaultGroupPolicyOverallQuotas\":{\"limits\":[{\"id\":\"S\",\"limit\":4e18},"
		"{\"id\":\"S\",\"limit\":4e18,\"used\":4e18},{\"id\":\"S\",\"limit\":4e18,\"used\":4e18}]},"
		"\"quotas\":{\"a\":{\"limits\":[{\"id\":\"S\",\"slaTier\":\"Premium\",\"limit\":4e18}]},"
		"\"b\":{\"limits\":[{\"id\":\"S\",\"slaTier\":\"Premium\",\"limit\":4e18,\"used\":1}]},"
		"\"c\":{\"limits\":[{\"id\":\"S\",\"slaTier\":\"Premium\",\"limit\":4e18,\"used\":2}]}}}}}");

	(void)state;
	aj_vc_init(&v);
	assert_int_equal(aj_vc_set(&v, "s", "rg", "huge"), 0);
	assert_int_equal(aj_vc_read_quotas(&v, j, &err), 0);
	assert_int_equal(v.quotas_nr, 1);
	assert_true(v.quotas[0].limit[AJ_TIER_PREMIUM] == LONG_MAX / 2);
	assert_int_equal(v.quotas[0].used[AJ_TIER_PREMIUM], 3);
	assert_true(aj_vc_quota_free(&v.quotas[0], AJ_TIER_PREMIUM) == LONG_MAX / 2 - 3);
	assert_true(v.quotas[0].user_limit == LONG_MAX / 2);
	assert_true(v.quotas[0].user_used == LONG_MAX / 2);
	aj_vc_release(&v);
	cJSON_Delete(j);
	aj_errors_release(&err);
}

/* Every allocation failure is a clean "out of memory". */
static void oom(void **state)
{
	struct world w = { 0 };
	struct aj_vc_request r = request("G8", 1, NULL);
	long n;

	(void)state;
	quota(vc(&w, "s", "rg", "a"), "ND_H100_v5", AJ_TIER_STANDARD, 800, 0);
	quota(vc(&w, "s", "rg", "b"), "ND_H100_v5", AJ_TIER_PREMIUM, 80, 0);
	quota(vc(&w, "s", "rg", "c"), "ND_MI300X_v4", AJ_TIER_PREMIUM, 80, 0);
	vc(&w, "s", "rg", "d");
	for (n = 0;; n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_vc_choice c;
		int ret;

		aj_alloc_fail_after(n);
		ret = aj_vc_select(&r, w.vcs, w.nr, &c, &err);
		aj_alloc_fail_after(-1);
		if (!ret) {
			assert_string_equal(c.chosen.vc->name, "b");
			assert_int_equal(c.others_nr, 3);
			aj_vc_choice_release(&c);
			aj_errors_release(&err);
			break;
		}
		assert_true(aj_test_errors_contain(&err, "out of memory"));
		aj_vc_choice_release(&c);
		aj_errors_release(&err);
	}
	assert_true(n > 3);
	world_release(&w);
}

/* A sing body's instance types instead of the SKU: each its own family, the same choice. */
static void instance_types_stand_for_families(void **state)
{
	static const char *const types[] = { "Singularity.ND96amrs_A100_v4",
					     "Singularity.ND96asr_v4" };
	struct world w = { 0 };
	struct aj_vc_request r = request(NULL, 2, NULL);
	struct aj_vc_choice c;
	struct aj_vc *big;

	(void)state;
	r.instance_types = types;
	r.instance_types_nr = 2;
	quota(vc(&w, "s", "rg", "a100-80"), "ND_A100_v4", AJ_TIER_PREMIUM, 8, 0);
	big = vc(&w, "s", "rg", "a100-40");
	quota(big, "ND_A100_v4", AJ_TIER_STANDARD, 64, 0);
	choose(&w, &r, &c);
	assert_string_equal(c.chosen.vc->name, "a100-40");
	assert_int_equal(c.chosen.tier, AJ_TIER_STANDARD);
	assert_string_equal(c.chosen.instance_type, "ND96amrs_A100_v4");
	assert_int_equal(c.chosen.units, 16);
	why_contains(&c, "a100-80", "ND_A100_v4 Premium: 8 free, 16 needed");
	aj_vc_choice_release(&c);
	/* none of them a Singularity family */
	{
		static const char *const odd[] = { "Singularity.NoSuch_v9" };

		r.instance_types = odd;
		r.instance_types_nr = 1;
		refuse(&w, &r, "\"Singularity.NoSuch_v9\": no Singularity instance family matches");
	}
	world_release(&w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rank_requested_tier_first),
		cmocka_unit_test(rank_fallback_order),
		cmocka_unit_test(rank_never_escalates),
		cmocka_unit_test(rank_nvidia_preferred),
		cmocka_unit_test(rank_named_accelerator),
		cmocka_unit_test(rank_nvlink),
		cmocka_unit_test(rank_remaining_quota),
		cmocka_unit_test(rank_coordinates),
		cmocka_unit_test(rank_family_order),
		cmocka_unit_test(match_gpu_exact),
		cmocka_unit_test(match_cpu_tier),
		cmocka_unit_test(match_user_quota),
		cmocka_unit_test(match_direct_instance),
		cmocka_unit_test(explicit_vc),
		cmocka_unit_test(explicit_vc_unknown),
		cmocka_unit_test(filters),
		cmocka_unit_test(no_vc_with_quota),
		cmocka_unit_test(bad_input),
		cmocka_unit_test(read_quotas),
		cmocka_unit_test(huge_quotas_stop_at_a_cap),
		cmocka_unit_test(oom),
		cmocka_unit_test(instance_types_stand_for_families),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
