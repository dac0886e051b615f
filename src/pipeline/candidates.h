/*
 * candidates.h - the candidates of a placement leaf (core/placement.h),
 * each loaded through the pipeline exactly as `aj run -t CANDIDATE` would
 * load it alone: the same source, shape, command, code digest, namespace
 * and permit list.
 *
 * A candidate that does not resolve or validate, that itself declares a
 * placement (candidates do not nest), or whose cluster objects would go to
 * another namespace than the AjJob's is left out: its entry keeps the
 * reason, starting with a line at the candidate's file:line:column. The set
 * is refused only when no candidate is valid. Two valid candidates that
 * would create the same objects (backend, place, pods: the same job in the
 * same place) are kept once: the later one is left out, saying which it
 * repeats. Two in one place that differ (other nodes, another image) are
 * both kept.
 *
 * Ownership: struct aj_candidates owns its placement, every candidate's
 * pipeline and errors; aj_candidates_release() frees them. The caller's
 * source and inputs must outlive the load. Pure: no I/O.
 */
#ifndef AJ_CANDIDATES_H
#define AJ_CANDIDATES_H

#include <stddef.h>

#include "core/error.h"
#include "core/placement.h"
#include "pipeline/pipeline.h"

struct aj_candidate {
	const char *name;         /* the placement's entry ("template/kube") */
	size_t order;             /* the user's order of preference, from 0 */
	int ok;                   /* loaded and valid */
	struct aj_pipeline p;     /* what was loaded (released either way) */
	struct aj_errors why;     /* !ok: why it was left out */
};

struct aj_candidates {
	struct aj_placement placement;
	struct aj_candidate *items;   /* placement.nr of them, in the user's order */
	size_t nr;
	size_t valid;
};

void aj_candidates_init(struct aj_candidates *c);
void aj_candidates_release(struct aj_candidates *c);

/*
 * Read the placement of `leaf` (resolved from in->template_name) and load
 * every candidate with in's other inputs (in->namespace_, when set, is the
 * AjJob's namespace). 0 when at least one candidate is valid; -1 when the
 * placement itself is wrong or none is valid, with the placement's
 * problems or every candidate's reason in err. c must be initialised.
 */
int aj_candidates_load(const struct aj_pipeline_in *in, const struct aj_template *leaf,
		       struct aj_candidates *c, struct aj_errors *err);

/*
 * Where a valid candidate would run, for telling duplicates apart and for
 * the ranking's rows: "<namespace>/<queue>" of a cluster backend (the
 * AjJob's namespace when the template names none), else the Azure target
 * "<subscription>/<resource group>/<workspace>/<compute or VC>" as written,
 * the parts not given (the controller's workspace decides them) left out:
 * "gpu-a". Appends to out; 0 / -1 (out of memory).
 */
int aj_candidate_place(const struct aj_candidate *cand, const char *namespace_, struct aj_buf *out);

#endif
