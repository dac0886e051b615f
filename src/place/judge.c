#include "judge.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"

/* Does a job sent to workspace_name (NULL or "": the default) go elsewhere than the views read? */
static int other_workspace(const struct aj_views *v, const char *workspace_name)
{
	const char *read = v->azure.workspace ? strrchr(v->azure.workspace, '/') : NULL;

	return read && workspace_name && *workspace_name && strcmp(read + 1, workspace_name);
}

/* Is pl an Azure job the views cannot judge (its workspace is not the one read)? */
static int unjudged(const struct aj_views *v, const struct aj_pipeline *pl)
{
	return pl->backend->target == AJ_TARGET_AZURE &&
	       other_workspace(v, pl->spec.target.workspace_name);
}

/*
 * pl's objects built (*objects, the caller's to delete) and the job's ask
 * read from the first (aj_views_ask_read's answer), with the template's
 * VC target beside it; -2 when they do not build (problems say why).
 */
static int read_ask(const struct aj_pipeline *pl, const struct aj_build_ctx *ctx,
		    cJSON **objects, struct aj_views_ask *a, struct aj_errors *problems)
{
	int r;

	memset(a, 0, sizeof(*a));
	if (aj_pipeline_build(pl, ctx, objects, problems))
		return -2;
	r = aj_views_ask_read(cJSON_GetArrayItem(*objects, 0), a);
	if (r > 0 && a->supercomputer) {
		/* where the forwarder chooses the VC: the target's, which the body does not say */
		a->vc_subscription = pl->spec.target.subscription_id;
		a->vc_resource_group = pl->spec.target.resource_group;
		a->vc_name = pl->spec.target.name;
	}
	return r;
}

/* One valid candidate's state: its objects built, its ask judged. 0 / -1. */
static int judge_one(const struct aj_views *v, const struct aj_pipeline *pl,
		     const struct aj_build_ctx *ctx, struct aj_place_row *row, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_fit_result out;
	struct aj_views_ask a;
	cJSON *objects = NULL;
	int r, rc = 0;

	row->state = AJ_PLACE_UNKNOWN;
	if (unjudged(v, pl)) {
		snprintf(row->reason, sizeof(row->reason),
			 "workspace %s is not read for placement (not the one these views hold)",
			 pl->spec.target.workspace_name);
		return 0;
	}
	r = read_ask(pl, ctx, &objects, &a, &problems);
	if (r == -2) {
		aj_errors_format_line(&problems, &text);
		row->state = AJ_PLACE_EXCLUDED;
		snprintf(row->reason, sizeof(row->reason), "does not build: %s", aj_buf_cstr(&text));
		rc = problems.oom ? aj_errors_oom(err) : 0;
		goto out;
	}
	if (r > 0 && aj_views_fit(v, &a, ctx->namespace_, &out))
		r = -1;
	if (r > 0) {
		long long gpus = aj_fit_ask_total(&a.ask, AJ_FIT_GPU);

		row->state = out.state;
		row->gpus = gpus > 1000000000 ? 1000000000 : (long)gpus;
		memcpy(row->reason, out.reason, sizeof(row->reason));
	} else if (!r) {
		snprintf(row->reason, sizeof(row->reason), "its objects are of no kind the views know");
	}
	if (r < 0)
		rc = aj_errors_oom(err);
out:
	aj_views_ask_release(&a);
	cJSON_Delete(objects);
	aj_buf_release(&text);
	aj_errors_release(&problems);
	return rc;
}

int aj_place_judge(const struct aj_views *v, const struct aj_waits *w,
		   const struct aj_candidates *c, const struct aj_build_ctx *ctx,
		   const int *served, const char *const *why_not, struct aj_place_row *rows,
		   char (*where)[AJ_PLACE_WHERE_MAX], struct aj_errors *err)
{
	size_t i;
	int rc = 0;

	for (i = 0; !rc && i < c->nr; i++) {
		const struct aj_candidate *cand = &c->items[i];
		struct aj_buf place = AJ_BUF_INIT(AJ_PLACE_WHERE_MAX);
		struct aj_place_row *row = &rows[i];

		memset(row, 0, sizeof(*row));
		row->name = cand->name;
		row->order = cand->order;
		row->expected_wait = -1;
		row->where = where[i];
		where[i][0] = '\0';
		row->backend = cand->ok ? cand->p.backend->name : "";
		if (cand->ok && !aj_candidate_place(cand, ctx->namespace_, &place))
			snprintf(where[i], AJ_PLACE_WHERE_MAX, "%s", aj_buf_cstr(&place));
		aj_buf_release(&place);
		if (!cand->ok) {
			struct aj_buf why = AJ_BUF_INIT(AJ_PLACE_REASON_MAX);

			row->state = AJ_PLACE_EXCLUDED;
			aj_errors_format_line(&cand->why, &why);
			snprintf(row->reason, sizeof(row->reason), "%s",
				 why.failed ? "left out (its reason is too long)" : aj_buf_cstr(&why));
			aj_buf_release(&why);
		} else if (served && !served[i]) {
			row->state = AJ_PLACE_EXCLUDED;
			snprintf(row->reason, sizeof(row->reason), "%s", why_not[i]);
		} else {
			rc = judge_one(v, &cand->p, ctx, row, err);
			row->expected_wait = aj_waits_expected(w, row->name,
							       aj_waits_band(row->gpus, 1));
		}
	}
	return rc;
}

int aj_place_charge(struct aj_views *v, const struct aj_pipeline *pl,
		    const struct aj_build_ctx *ctx, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	struct aj_views_ask a;
	cJSON *objects = NULL;
	int r;

	if (unjudged(v, pl))
		return 0;
	r = read_ask(pl, ctx, &objects, &a, &problems);
	if (r > 0 && aj_views_charge(v, &a, ctx->namespace_))
		r = -1;
	if (r == -2 && !problems.oom)
		r = 0;
	aj_views_ask_release(&a);
	cJSON_Delete(objects);
	aj_errors_release(&problems);
	return r < 0 ? aj_errors_oom(err) : 0;
}
