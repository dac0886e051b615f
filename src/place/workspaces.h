/*
 * place/workspaces.h - which Azure ML workspace each candidate of a
 * placement is judged in, and the candidates judged each against the Azure
 * part of its own workspace.
 *
 * An Azure candidate (its backend's target is Azure) is judged in the
 * workspace its job is sent to, named as the forwarder and `aj code
 * upload` name it: a default workspace (the controller's
 * --azure-workspace, the CLI's AJ_AZURE_WORKSPACE) with its name replaced
 * by the template's target.workspace_name; with no default, the target's
 * subscription_id, resource_group and workspace_name when it names all
 * three. The views hold one workspace's computes; the candidates of
 * several workspaces are judged workspace by workspace (judge.h), the
 * virtual clusters read once for all of them.
 *
 * Ownership: everything is held in the structs (bounded); the candidates,
 * views and parts are borrowed. Pure: no I/O, no clock.
 */
#ifndef AJ_PLACE_WORKSPACES_H
#define AJ_PLACE_WORKSPACES_H

#include <stddef.h>

#include "core/jobspec.h"
#include "core/placement.h"
#include "pipeline/candidates.h"
#include "place/judge.h"
#include "place/views.h"

/* Longer than Azure allows for a subscription id, resource group or workspace name. */
#define AJ_PLACE_WORKSPACE_PART 128

struct aj_place_workspace {
	char subscription[AJ_PLACE_WORKSPACE_PART];
	char resource_group[AJ_PLACE_WORKSPACE_PART];
	char name[AJ_PLACE_WORKSPACE_PART];
};

/* "SUBSCRIPTION/RESOURCE_GROUP/NAME", three non-empty parts. 0 / -1 not of that form. */
int aj_place_workspace_parse(const char *s, struct aj_place_workspace *out);

/*
 * The workspace a job with target t is sent to: dflt (NULL: none) with
 * t->workspace_name for its name when given, else t's three names.
 * 0 / -1 none named (or a name longer than Azure allows).
 */
int aj_place_workspace_of(const struct aj_target *t, const struct aj_place_workspace *dflt,
			  struct aj_place_workspace *out);

/* The same workspace (as written). */
int aj_place_workspace_same(const struct aj_place_workspace *a, const struct aj_place_workspace *b);

#define AJ_PLACE_NOT_AZURE (-1)      /* judged in the cluster's views */
#define AJ_PLACE_NO_WORKSPACE (-2)   /* an Azure candidate that names no workspace */

struct aj_place_workspaces {
	struct aj_place_workspace items[AJ_PLACEMENT_MAX_CANDIDATES];   /* distinct, in order met */
	size_t nr;
	/* each candidate's: an index in items, or one of the two above */
	int of[AJ_PLACEMENT_MAX_CANDIDATES];
};

/*
 * The distinct workspaces of c's valid Azure candidates (names compared
 * as written, as the judge compares them), dflt as for
 * aj_place_workspace_of. A candidate that is not valid is NOT_AZURE (the
 * judge excludes it).
 */
void aj_place_workspaces_group(const struct aj_candidates *c, const struct aj_place_workspace *dflt,
			       struct aj_place_workspaces *out);

/*
 * aj_place_judge (the same arguments) with each Azure candidate judged
 * against parts[g->of[i]] as the views' Azure part (g->nr of them, in the
 * order of g->items, each with its workspace's computes), the VCs for all
 * those read (a workspace set) vcs's (NULL: each part's own); a part not
 * read keeps its own reasons. One naming no workspace is judged against a
 * part that is unknown with none_why. The others are judged against v as
 * it is. 0 / -1 (out of memory, in err).
 */
int aj_place_judge_workspaces(const struct aj_views *v, const struct aj_views_azure *parts,
			      const struct aj_views_azure *vcs,
			      const struct aj_place_workspaces *g, const char *none_why,
			      const struct aj_waits *w, const struct aj_candidates *c,
			      const struct aj_build_ctx *ctx, const int *served,
			      const char *const *why_not, struct aj_place_row *rows,
			      char (*where)[AJ_PLACE_WHERE_MAX], struct aj_errors *err);

/*
 * Charge the pick, candidate `chosen` of c (judged FITS by
 * aj_place_judge_workspaces with the same v, parts, vcs and g), to the
 * views it was judged in (aj_place_charge): v for a cluster candidate;
 * for an Azure one its workspace's part, the VCs vcs's. Those are written
 * through the arrays they hold, never grown: the caller's parts may be
 * copies of the parts it keeps. 0 / -1 (out of memory, in err).
 */
int aj_place_charge_workspaces(struct aj_views *v, const struct aj_views_azure *parts,
			       const struct aj_views_azure *vcs,
			       const struct aj_place_workspaces *g, const struct aj_candidates *c,
			       size_t chosen, const struct aj_build_ctx *ctx, struct aj_errors *err);

#endif
