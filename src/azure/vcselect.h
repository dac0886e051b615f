/*
 * vcselect.h - choosing the Singularity virtual cluster (VC), SLA tier and
 * instance type for a job from the VCs' quotas. Pure: the caller fetches
 * the VCs (Resource Graph) and their quotas (the VC resource) and hands
 * them in; nothing here does I/O, so every ranking rule is unit-tested.
 *
 * Matching: the SKU picks instance families (sku.h) with the exact GPU count
 * (GPU SKUs) or the CPU size tier given by -p (CPU SKUs); a written
 * accelerator and per-GPU memory must match exactly. NVLink is a preference,
 * not a filter. A direct instance name ("ND96amrs_A100_v4") stands for its
 * own family. A candidate is a (VC, family, tier) whose tier quota and the
 * user's overall quota both cover units per instance x nodes.
 *
 * Tiers: the requested tier (Premium when none), then the tiers below it in
 * the order Premium, Standard, Basic; a job never moves to a tier above the
 * one it asked for.
 *
 * Ranking, first difference wins:
 *   1. tier position (requested first, then the fallbacks in order);
 *   2. NVIDIA before AMD when the SKU names no accelerator;
 *   3. NVLink when the SKU asks for it;
 *   4. more effective quota left after the job (min of tier and user);
 *   5. VC coordinates subscription/resourceGroup/name, byte order;
 *   6. the family's place in the built-in preference order.
 * An explicit VC (request.vc) goes through the same matching and fallback.
 *
 * Quota units: what the VC reports, counted per GPU for GPU series and per
 * vCPU for CPU series. A series without an overall (user) limit has no user
 * cap; regions are summed.
 *
 * Ownership: struct aj_vc owns its strings and quota rows (aj_vc_release);
 * a choice points into the caller's VC array (which must outlive it) and
 * owns its reason strings (aj_vc_choice_release).
 */
#ifndef AJ_AZURE_VCSELECT_H
#define AJ_AZURE_VCSELECT_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct aj_errors;

enum aj_tier { AJ_TIER_PREMIUM, AJ_TIER_STANDARD, AJ_TIER_BASIC };
#define AJ_TIERS 3

const char *aj_tier_name(enum aj_tier t);
/* Case-insensitive "premium", "standard", "basic". 0 / -1. */
int aj_tier_parse(const char *s, enum aj_tier *out);

/* One series' quota on a VC; a limit of -1 means none is reported. */
struct aj_vc_quota {
	char *series;
	long limit[AJ_TIERS];
	long used[AJ_TIERS];
	long user_limit;          /* the overall (group policy) cap */
	long user_used;
};

struct aj_vc {
	char *subscription;
	char *resource_group;
	char *name;
	char *location;           /* NULL when unknown */
	struct aj_vc_quota *quotas;
	size_t quotas_nr, quotas_alloc;
};

void aj_vc_init(struct aj_vc *vc);
void aj_vc_release(struct aj_vc *vc);
/* Set the coordinates (copied). 0 / -1. */
int aj_vc_set(struct aj_vc *vc, const char *subscription, const char *resource_group,
	      const char *name);
/* The row for series, added (all limits -1) when absent; NULL on OOM. */
struct aj_vc_quota *aj_vc_quota_row(struct aj_vc *vc, const char *series);

/*
 * Read the quotas from a VC resource as ARM returns it
 * (properties.managed.defaultGroupPolicyOverallQuotas.limits[] for the
 * user cap, properties.managed.quotas.<region>.limits[] per tier). A null
 * or unknown slaTier in a region list counts as Basic. Rows come out sorted
 * by series. 0 / -1 (malformed: the error names the VC).
 */
int aj_vc_read_quotas(struct aj_vc *vc, const cJSON *resource, struct aj_errors *err);

/* Remaining tier quota (limit - used, at least 0), or -1 when none is reported. */
long aj_vc_quota_free(const struct aj_vc_quota *q, enum aj_tier t);

struct aj_vc_request {
	const char *sku;             /* resolved SKU: shorthand or instance type */
	int nodes;
	int processes;               /* -p: the CPU size tier for CPU SKUs */
	const char *tier;            /* requested SLA tier; NULL: Premium */
	const char *subscription;    /* filters; NULL or "": any */
	const char *resource_group;
	const char *vc;              /* explicit VC name; NULL or "": choose */
	/*
	 * Instead of sku (then NULL): the instance types a sing body lists
	 * ("Singularity.ND96amrs_A100_v4"), each standing for its own family
	 * as a direct instance name does.
	 */
	const char *const *instance_types;
	size_t instance_types_nr;
};

struct aj_vc_candidate {
	const struct aj_vc *vc;
	const char *series;          /* NULL when the VC offers nothing that fits */
	const char *instance_type;
	const char *vendor;
	int nvlink;
	enum aj_tier tier;
	long units;                  /* what the job takes: per instance x nodes */
	long remaining;              /* effective quota left after the job */
	char *why;                   /* for the others: why it lost or was refused */
};

struct aj_vc_choice {
	struct aj_vc_candidate chosen;    /* .vc NULL when nothing qualified */
	struct aj_vc_candidate *others;   /* every other VC considered, best first */
	size_t others_nr;
};

void aj_vc_choice_release(struct aj_vc_choice *c);

/*
 * Choose. 0 with out->chosen set; -1 when the SKU is not understood or no
 * family matches it (config.jobs[0].sku), the explicit VC is unknown
 * (config.target.name), or no VC has the quota (the error lists each VC's
 * reason; out->others holds them too). out is filled in every case.
 */
int aj_vc_select(const struct aj_vc_request *req, const struct aj_vc *vcs, size_t nr,
		 struct aj_vc_choice *out, struct aj_errors *err);

#endif
