#include "workspaces.h"

#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "core/error.h"

/* One part of at most AJ_PLACE_WORKSPACE_PART - 1 bytes, non-empty. 0 / -1. */
static int part(char *out, const char *s, size_t n)
{
	if (!n || n >= AJ_PLACE_WORKSPACE_PART)
		return -1;
	memcpy(out, s, n);
	out[n] = '\0';
	return 0;
}

static int named(const char *s)
{
	return s && *s;
}

int aj_place_workspace_parse(const char *s, struct aj_place_workspace *out)
{
	const char *a = strchr(s, '/');
	const char *b = a ? strchr(a + 1, '/') : NULL;

	if (!b || strchr(b + 1, '/') || part(out->subscription, s, (size_t)(a - s)) ||
	    part(out->resource_group, a + 1, (size_t)(b - a - 1)) ||
	    part(out->name, b + 1, strlen(b + 1)))
		return -1;
	return 0;
}

int aj_place_workspace_of(const struct aj_target *t, const struct aj_place_workspace *dflt,
			  struct aj_place_workspace *out)
{
	const char *name = t->workspace_name;

	if (dflt) {
		*out = *dflt;
		return named(name) ? part(out->name, name, strlen(name)) : 0;
	}
	if (!named(t->subscription_id) || !named(t->resource_group) || !named(name))
		return -1;
	return part(out->subscription, t->subscription_id, strlen(t->subscription_id)) ||
	       part(out->resource_group, t->resource_group, strlen(t->resource_group)) ||
	       part(out->name, name, strlen(name)) ? -1 : 0;
}

int aj_place_workspace_same(const struct aj_place_workspace *a, const struct aj_place_workspace *b)
{
	return !strcmp(a->subscription, b->subscription) &&
	       !strcmp(a->resource_group, b->resource_group) && !strcmp(a->name, b->name);
}

void aj_place_workspaces_group(const struct aj_candidates *c, const struct aj_place_workspace *dflt,
			       struct aj_place_workspaces *out)
{
	struct aj_place_workspace w;
	size_t i, k;

	out->nr = 0;
	for (i = 0; i < c->nr && i < AJ_PLACEMENT_MAX_CANDIDATES; i++) {
		const struct aj_candidate *cand = &c->items[i];

		out->of[i] = AJ_PLACE_NOT_AZURE;
		if (!cand->ok || cand->p.backend->target != AJ_TARGET_AZURE)
			continue;
		if (aj_place_workspace_of(&cand->p.spec.target, dflt, &w)) {
			out->of[i] = AJ_PLACE_NO_WORKSPACE;
			continue;
		}
		for (k = 0; k < out->nr && !aj_place_workspace_same(&out->items[k], &w); k++)
			;
		if (k == out->nr)
			out->items[out->nr++] = w;
		out->of[i] = (int)k;
	}
}

/*
 * one's Azure part: part, with the VCs of vcs (NULL: the part's own). The
 * VCs are the identity's, whatever the workspace: read once (a part not
 * read at all keeps its own why).
 */
static void with_part(struct aj_views *one, const struct aj_views_azure *part,
		      const struct aj_views_azure *vcs)
{
	one->azure = *part;
	if (part->workspace && vcs) {
		one->azure.vcs = vcs->vcs;
		one->azure.vcs_nr = vcs->vcs_nr;
		one->azure.vcs_charged = vcs->vcs_charged;
		memcpy(one->azure.vcs_why, vcs->vcs_why, sizeof(one->azure.vcs_why));
		one->azure.vc_allowed = vcs->vc_allowed;
		one->azure.vc_allowed_ctx = vcs->vc_allowed_ctx;
	}
}

/*
 * The candidates of group `which` judged against v, their rows copied into
 * rows; those the caller does not serve (excluded with its reason) with the
 * cluster's group. 0 / -1.
 */
static int judge_group(const struct aj_views *v, const struct aj_place_workspaces *g, int which,
		       const struct aj_waits *w, const struct aj_candidates *c,
		       const struct aj_build_ctx *ctx, const int *served,
		       const char *const *why_not, struct aj_place_row *rows,
		       char (*where)[AJ_PLACE_WHERE_MAX], struct aj_errors *err)
{
	struct aj_place_row mine[AJ_PLACEMENT_MAX_CANDIDATES];
	const char *why[AJ_PLACEMENT_MAX_CANDIDATES];
	int here[AJ_PLACEMENT_MAX_CANDIDATES], judged[AJ_PLACEMENT_MAX_CANDIDATES];
	size_t i, n = 0;

	for (i = 0; i < c->nr; i++) {
		int excluded = served && !served[i];

		/* a candidate not valid, or not served, gets its row once, with the cluster's */
		here[i] = excluded ? which == AJ_PLACE_NOT_AZURE : g->of[i] == which;
		judged[i] = here[i] && !excluded;
		why[i] = excluded ? why_not[i] : "";
		n += (size_t)here[i];
	}
	if (!n)
		return 0;
	if (aj_place_judge(v, w, c, ctx, judged, why, mine, where, err))
		return -1;
	for (i = 0; i < c->nr; i++)
		if (here[i])
			rows[i] = mine[i];
	return 0;
}

int aj_place_judge_workspaces(const struct aj_views *v, const struct aj_views_azure *parts,
			      const struct aj_views_azure *vcs,
			      const struct aj_place_workspaces *g, const char *none_why,
			      const struct aj_waits *w, const struct aj_candidates *c,
			      const struct aj_build_ctx *ctx, const int *served,
			      const char *const *why_not, struct aj_place_row *rows,
			      char (*where)[AJ_PLACE_WHERE_MAX], struct aj_errors *err)
{
	struct aj_views one = *v;   /* shallow: only its Azure part changes, nothing is freed */
	size_t k;

	if (c->nr > AJ_PLACEMENT_MAX_CANDIDATES)
		return aj_errors_add(err, NULL, "more than %d candidates", AJ_PLACEMENT_MAX_CANDIDATES);
	if (judge_group(v, g, AJ_PLACE_NOT_AZURE, w, c, ctx, served, why_not, rows, where, err))
		return -1;
	memset(&one.azure, 0, sizeof(one.azure));
	aj_views_azure_unknown(&one.azure, none_why);
	if (judge_group(&one, g, AJ_PLACE_NO_WORKSPACE, w, c, ctx, served, why_not, rows, where, err))
		return -1;
	for (k = 0; k < g->nr; k++) {
		with_part(&one, &parts[k], vcs);
		if (judge_group(&one, g, (int)k, w, c, ctx, served, why_not, rows, where, err))
			return -1;
	}
	return 0;
}

int aj_place_charge_workspaces(struct aj_views *v, const struct aj_views_azure *parts,
			       const struct aj_views_azure *vcs,
			       const struct aj_place_workspaces *g, const struct aj_candidates *c,
			       size_t chosen, const struct aj_build_ctx *ctx, struct aj_errors *err)
{
	struct aj_views one = *v;   /* shallow: a charge writes into the arrays it shares */
	int k = chosen < c->nr ? g->of[chosen] : AJ_PLACE_NO_WORKSPACE;

	if (k == AJ_PLACE_NO_WORKSPACE)
		return 0;
	if (k == AJ_PLACE_NOT_AZURE)
		return aj_place_charge(v, &c->items[chosen].p, ctx, err);
	with_part(&one, &parts[k], vcs);
	return aj_place_charge(&one, &c->items[chosen].p, ctx, err);
}
