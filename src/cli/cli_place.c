/*
 * cli_place.c - `aj place` (aj-net): the ranking aj-controller would make
 * now for a placement leaf, creating nothing.
 *
 * The candidates load as `aj run -t` loads them (cli_run.c); the views,
 * the judging, the ranking, the pick and the JSON are placement's own
 * (place/), the same the controller's placer uses, so the two cannot
 * disagree on the same snapshot. What differs is what each can see: the
 * controller learns expected waits from every namespace's AjJobs, aj place
 * from the AjJobs of the job's namespace; and aj place cannot know which
 * backends the controller is configured to serve, so every valid
 * candidate is judged. The Azure part is read with the user's credential,
 * only when a candidate is an Azure one, in the workspace each names
 * (place/workspaces.h, AJ_AZURE_WORKSPACE the default); the controller's
 * namespace allow-list is its own configuration, so every VC the user sees
 * counts.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_kube.h"
#include "core/error.h"
#include "kube/client.h"
#include "kube/status.h"
#include "place/judge.h"
#include "place/rank.h"
#include "place/read/azure.h"
#include "place/read/cluster.h"
#include "place/views.h"
#include "place/waits.h"
#include "place/workspaces.h"

/*
 * The expected waits, learnt from the namespace's AjJobs. Not reaching the
 * cluster (or not being let in) is the command's failure, as for aj list;
 * a list refused otherwise (RBAC, no CRD) only leaves the history empty.
 * 0 / -1.
 */
static int learn_waits(struct aj_kube *k, const char *ns, struct aj_waits *w,
		       struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_cli_ajjobs, ns, NULL, NULL };
	struct aj_kube_list_opts lo;
	struct aj_errors local = AJ_ERRORS_INIT;
	struct aj_kube_status st;
	const cJSON *item;
	cJSON *list = NULL;
	int rc = 0;

	memset(&lo, 0, sizeof(lo));
	aj_kube_status_init(&st);
	if (aj_kube_list_all(k, &ref, &lo, &list, &st, &local)) {
		if (local.oom || st.reason == AJ_KUBE_TRANSPORT || st.reason == AJ_KUBE_UNAUTHORIZED) {
			aj_errors_splice(err, &local);
			rc = -1;
		} else {
			aj_cli_print_warnings(aj_cli_place.name, "no expected waits", &local);
		}
	}
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items")) {
		if (!rc && aj_waits_learn(w, item))
			rc = aj_errors_oom(err);
	}
	cJSON_Delete(list);
	aj_kube_status_release(&st);
	aj_errors_release(&local);
	return rc;
}

/*
 * The Azure part of each workspace g names into parts (zeroed, g->nr of
 * them), the VCs into the first only; why the candidates naming none are
 * unknown into none_why. Azure not reached or refused makes the parts
 * unknown with why, not the command fail. 0 / -1 (out of memory).
 */
static int read_azure(const struct aj_candidates *c, struct aj_place_workspaces *g,
		      struct aj_views_azure *parts, char *none_why, size_t size)
{
	struct aj_errors why = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_place_workspace dflt;
	struct aj_cli_azure az;
	size_t i;
	int set = aj_cli_azure_workspace(&dflt, &why), rc = 0;

	aj_place_workspaces_group(c, set > 0 ? &dflt : NULL, g);
	snprintf(none_why, size, "%s", AJ_CLI_NO_WORKSPACE);
	if (set < 0) {
		/* a default not understood names no workspace for anyone */
		aj_errors_format_line(&why, &text);
		snprintf(none_why, size, "%s", aj_buf_cstr(&text));
		for (i = 0; i < c->nr; i++)
			if (g->of[i] >= 0)
				g->of[i] = AJ_PLACE_NO_WORKSPACE;
		g->nr = 0;
	}
	memset(&az, 0, sizeof(az));
	if (g->nr && aj_cli_azure_open(&az, &why)) {
		aj_buf_addstr(&text, "no Azure credential: ");
		aj_errors_format_line(&why, &text);
		for (i = 0; i < g->nr; i++)
			aj_views_azure_unknown(&parts[i], aj_buf_cstr(&text));
		rc = why.oom ? -1 : 0;
	} else {
		rc = aj_views_read_azure_each(&az.arm, g->items, g->nr, NULL, NULL, parts);
	}
	aj_cli_azure_close(&az);
	aj_buf_release(&text);
	aj_errors_release(&why);
	return rc;
}

/*
 * Every view of what limits a start, read once: the single place where
 * the ranking's state comes from (the Azure parts as read_azure says).
 * 0 / -1.
 */
static int read_views(struct aj_kube *k, const struct aj_candidates *c, struct aj_views *v,
		      struct aj_place_workspaces *g, struct aj_views_azure *parts, char *none_why,
		      size_t size, struct aj_errors *err)
{
	return aj_views_read_cluster(k, v) || read_azure(c, g, parts, none_why, size) ?
	       aj_errors_oom(err) : 0;
}

/* The table, then what the controller would do. 0 / -1. */
static int print_ranking(const cJSON *doc, const struct aj_place_row *rows, size_t n,
			 size_t pick, struct aj_errors *err)
{
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(0);
	char line[AJ_PLACE_REASON_MAX + 64];
	int rc;

	aj_cli_candidates_table(&t, doc, 0);
	rc = aj_cli_table_print(&t, err);
	aj_cli_table_release(&t);
	if (pick < n)
		snprintf(line, sizeof(line), "would submit to %s\n", rows[pick].name);
	else
		snprintf(line, sizeof(line), "would wait unplaced: %s\n",
			 n && rows[0].rank ? "no candidate can start now" : "no candidate is ranked");
	return rc ? rc : aj_cli_write(line, strlen(line), err);
}

int aj_cli_place_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube kube;
	struct aj_cli_pipeline p;
	struct aj_views views;
	struct aj_waits waits;
	struct aj_place_row rows[AJ_PLACEMENT_MAX_CANDIDATES];
	struct aj_views_azure parts[AJ_PLACEMENT_MAX_CANDIDATES];
	struct aj_place_workspaces g;
	char none_why[AJ_VIEWS_WHY_MAX];
	char where[AJ_PLACEMENT_MAX_CANDIDATES][AJ_PLACE_WHERE_MAX];
	char *canonical = aj_cli_template_canonical(aj_cli_place.name, o->template_name);
	cJSON *doc = NULL;
	size_t i, pick = 0;
	int rc;

	if (!canonical)
		return AJ_EXIT_USAGE;
	memset(&kube, 0, sizeof(kube));
	memset(parts, 0, sizeof(parts));
	g.nr = 0;
	aj_views_init(&views);
	aj_waits_init(&waits);
	aj_cli_pipeline_init(&p);
	p.cmd = aj_cli_place.name;
	p.placement_only = 1;
	/* nothing is created: the placeholder digest builds every candidate's objects */
	rc = aj_cli_pipeline_load(o, canonical, AJ_CLI_DIGEST_PLACEHOLDER, &p, &err);
	if (!rc)
		rc = aj_cli_pipeline_connect(&p, o, &kube, &err);
	if (!rc)
		rc = learn_waits(&kube, p.namespace_, &waits, &err);
	if (!rc)
		rc = read_views(&kube, &p.cands, &views, &g, parts, none_why, sizeof(none_why),
				&err);
	if (!rc) {
		struct aj_build_ctx ctx = { p.name, p.namespace_, NULL, NULL, NULL, 1 };

		rc = aj_place_judge_workspaces(&views, parts, &parts[0], &g, none_why, &waits,
					       &p.cands, &ctx, NULL, NULL, rows, where, &err);
	}
	if (!rc) {
		aj_place_rank(rows, p.cands.nr);
		pick = aj_place_pick(rows, p.cands.nr);
		doc = aj_place_status_json(rows, p.cands.nr, pick < p.cands.nr ? rows[pick].name : NULL,
					   p.cands.placement.max_wait);
		rc = doc ? 0 : aj_errors_oom(&err);
	}
	if (!rc)
		rc = o->format_set ? aj_cli_print_doc(doc, o->format, &err) :
		     print_ranking(doc, rows, p.cands.nr, pick, &err);
	cJSON_Delete(doc);
	aj_waits_release(&waits);
	aj_views_release(&views);
	for (i = 0; i < g.nr; i++)
		aj_views_azure_release(&parts[i]);
	aj_kube_release(&kube);
	return aj_cli_pipeline_finish(rc, &err, &p, canonical);
}
