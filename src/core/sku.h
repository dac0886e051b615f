/*
 * sku.h - the SKU of a job: templating, the amlt shorthand, and the
 * Singularity instance types a shorthand stands for.
 *
 * jobs[0].sku is a string with {nodes} and {processes} placeholders, or a
 * mapping from node ranges ("1", "2-4", "8+") to such strings where the first
 * range containing the node count wins. {{ and }} stand for literal braces.
 *
 * The shorthand is [N x][MEM](C|G)[COUNT][-FLAG...]: "2x80G8-A100-NvLink" is
 * two nodes of eight 80 GB A100 GPUs joined by NVLink, "C4" is one node of the
 * fourth-smallest CPU size. Flags are NvLink, IB (ignored) or an accelerator
 * model; CPU SKUs take no accelerator and no NvLink.
 *
 * Ownership: strings handed out are the caller's (aj_free); struct
 * aj_sku_spec owns its accelerator list (aj_sku_spec_release).
 */
#ifndef AJ_SKU_H
#define AJ_SKU_H

#include "strlist.h"

struct aj_errors;
struct aj_node;
struct aj_where;

/*
 * Substitute {nodes} and {processes} in tmpl into *out. An unknown
 * placeholder or an unbalanced brace is an error at w. 0 / -1.
 */
int aj_sku_format(const char *tmpl, int nodes, int processes,
		  const struct aj_where *w, char **out, struct aj_errors *err);

/* True when s holds a {nodes} or {processes} placeholder. */
int aj_sku_has_placeholder(const char *s);

/*
 * Resolve a sku value (string, or range mapping) for `nodes` and `processes`.
 * `path` names the value in messages ("config.jobs[0].sku"). 0 / -1.
 */
int aj_sku_resolve(const struct aj_node *sku, const char *path, int nodes,
		   int processes, char **out, struct aj_errors *err);

struct aj_sku_spec {
	int nodes;                        /* 1 when not written */
	int memory_gb;                    /* per GPU; 0 when not written */
	int cpu;                          /* 1 for C, 0 for G */
	int count;                        /* GPUs, or the CPU size tier */
	struct aj_strlist accelerators;   /* as written, e.g. "A100" */
	int nvlink;
};

void aj_sku_spec_init(struct aj_sku_spec *s);
void aj_sku_spec_release(struct aj_sku_spec *s);

/*
 * Parse the shorthand. 0 when s is one, 1 when it is not (s is then left
 * empty: a string that is not shorthand is never taken as a default
 * 1-GPU SKU), -1 when memory ran out.
 */
int aj_sku_parse(const char *s, struct aj_sku_spec *out);

/*
 * The Singularity instance types (without the "Singularity." prefix) that a
 * resolved SKU stands for, best first, at most AJ_SKU_MAX_TYPES. A leading
 * "<N>x" is dropped; a name holding '_' or starting with "Standard" is an
 * instance type already. Otherwise the shorthand is matched against the
 * built-in family table: GPU SKUs need the exact GPU count, and the
 * accelerator and per-GPU memory match exactly when written; a CPU SKU's
 * count picks the size tier (C1 is each family's smallest). Appends to out;
 * 0 (possibly nothing appended: no family matches), 1 when s is neither a
 * name nor shorthand, -1 on OOM.
 */
#define AJ_SKU_MAX_TYPES 4
int aj_sku_instance_types(const char *s, struct aj_strlist *out);

/*
 * One Singularity instance family: its instance types by size and the
 * quota series id VCs report it under. For GPU families units[] is GPUs per
 * instance; for CPU families it is vCPUs, and the size tier is the index + 1.
 * Quota is counted in these units.
 */
#define AJ_SKU_FAMILY_SIZES 5
struct aj_sku_family {
	const char *series;       /* e.g. "ND_A100_v4" */
	const char *model;        /* GPU model; NULL for CPU families */
	const char *vendor;       /* "NVIDIA", "AMD"; NULL for CPU families */
	int memory_gb;            /* per GPU */
	int nvlink;
	int units[AJ_SKU_FAMILY_SIZES];
	const char *names[AJ_SKU_FAMILY_SIZES];
};

/* The built-in families in preference order; *nr gets their number. */
const struct aj_sku_family *aj_sku_families(size_t *nr);

/*
 * The instance type of family f that spec stands for, or NULL: the CPU/GPU
 * kind, the accelerator and per-GPU memory (when written) and the GPU count
 * or CPU size tier (`count`) must match. NVLink is checked only when
 * need_nvlink is set. *units gets the instance's quota units.
 */
const char *aj_sku_family_instance(const struct aj_sku_family *f,
				   const struct aj_sku_spec *spec, int count,
				   int need_nvlink, int *units);

#endif
