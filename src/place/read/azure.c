#include "azure.h"

#include <stdio.h>
#include <string.h>

#include "azure/arm.h"
#include "azure/vcselect.h"
#include "core/buf.h"
#include "core/error.h"
#include "place/views.h"
#include "place/workspaces.h"

/*
 * Why a read failed, into why: unreachable, not found, refused with who
 * was refused and the role it needs (arm.c's hint, first: the request and
 * ARM's words would crowd it out), or ARM's words.
 */
static void failed(const char *what, long status, const struct aj_errors *err, char *why,
		   size_t size)
{
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *hint;

	aj_errors_format_line(err, &text);
	hint = strstr(aj_buf_cstr(&text), "aj acted as ");
	if (!hint)
		hint = strstr(aj_buf_cstr(&text), "the token of ");
	if (!status)
		snprintf(why, size, "Azure is unreachable: %s", aj_buf_cstr(&text));
	else if (status == 404)
		snprintf(why, size, "%s: not found", what);
	else if ((status == 401 || status == 403) && hint)
		snprintf(why, size, "%s: refused (HTTP %ld): %s", what, status, hint);
	else
		snprintf(why, size, "%s: %s", what, aj_buf_cstr(&text));
	aj_buf_release(&text);
}

int aj_views_read_azure(struct aj_arm *arm, const struct aj_views_azure_scope *s,
			struct aj_views_azure *a)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf ws = AJ_BUF_INIT(AJ_BUF_SMALL), what = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *computes = NULL;
	struct aj_vc *vcs = NULL;
	size_t nr = 0;
	long status = 0;
	int rc = -1;

	a->read = 1;
	if (aj_aml_workspace_id(&s->workspace, &ws) ||
	    aj_buf_addf(&what, "workspace %s", s->workspace.name))
		goto out;
	if (aj_aml_computes(arm, &s->workspace, &computes, &status, &err)) {
		if (err.oom)
			goto out;
		failed(aj_buf_cstr(&what), status, &err, a->computes_why, sizeof(a->computes_why));
		if (aj_views_set_computes(a, aj_buf_cstr(&ws), NULL))
			goto out;
		/* no answer at all: the same endpoint is not tried again for the VCs */
		if (!status) {
			snprintf(a->vcs_why, sizeof(a->vcs_why), "%s", a->computes_why);
			rc = 0;
			goto out;
		}
	} else if (aj_views_set_computes(a, aj_buf_cstr(&ws), computes)) {
		goto out;
	}
	aj_errors_release(&err);
	if (s->computes_only) {
		rc = 0;
		goto out;
	}
	if (aj_aml_vcs_read(arm, s->subscription, s->vc_wanted, NULL, s->ctx, &vcs, &nr, &status,
			    &err)) {
		if (err.oom)
			goto out;
		failed("virtual clusters", status, &err, a->vcs_why, sizeof(a->vcs_why));
	}
	rc = aj_views_set_vcs(a, vcs, nr);
	vcs = NULL;
	nr = 0;
out:
	aj_aml_vcs_free(vcs, nr);
	cJSON_Delete(computes);
	aj_buf_release(&ws);
	aj_buf_release(&what);
	aj_errors_release(&err);
	return rc;
}

int aj_views_read_azure_each(struct aj_arm *arm, const struct aj_place_workspace *ws, size_t nr,
			     int (*vc_wanted)(const void *ctx, const struct aj_vc *vc),
			     const void *ctx, struct aj_views_azure *parts)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		struct aj_views_azure_scope scope = {
			{ ws[i].subscription, ws[i].resource_group, ws[i].name, NULL }, NULL,
			vc_wanted, ctx, i > 0
		};

		if (aj_views_read_azure(arm, &scope, &parts[i]))
			return -1;
	}
	return 0;
}
