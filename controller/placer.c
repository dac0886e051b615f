#include "placer.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "place/judge.h"
#include "place/read/cluster.h"

void aj_placer_init(struct aj_placer *p)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	aj_views_init(&p->views);
	aj_views_init(&p->empty);
	aj_waits_init(&p->waits);
}

void aj_placer_release(struct aj_placer *p)
{
	size_t i;

	for (i = 0; i < p->azure_nr; i++)
		aj_views_azure_release(&p->azure[i]);
	aj_waits_release(&p->waits);
	aj_views_release(&p->empty);
	aj_views_release(&p->views);
	pthread_mutex_destroy(&p->lock);
}

void aj_placer_set_azure(struct aj_placer *p,
			 int (*read)(const void *config, const struct aj_place_workspace *ws,
				     size_t nr, struct aj_views_azure *parts),
			 void (*workspace)(const void *config, struct aj_place_workspace *out),
			 const void *config, int every)
{
	p->read_azure = read;
	p->azure_config = config;
	p->azure_every = every;
	workspace(config, &p->azure_default);
}

static int stale(long long read_at, long long now, long long every)
{
	return !read_at || now - read_at >= every || now < read_at;
}

/* *cur read again with read when older than max_age seconds at now (under the lock). 0 / -1. */
static int refresh(struct aj_views *cur, long long *at, long long max_age, struct aj_kube *k,
		   long long now, int (*read)(struct aj_kube *k, struct aj_views *v))
{
	struct aj_views v;

	if (!stale(*at, now, max_age))
		return 0;
	aj_views_init(&v);
	if (read(k, &v)) {
		aj_views_release(&v);
		return -1;
	}
	aj_views_release(cur);
	*cur = v;
	*at = now;
	return 0;
}

/*
 * The workspaces of g not known yet added while there is room (under the
 * lock): the next read, made now, has them.
 */
static void know(struct aj_placer *p, const struct aj_place_workspaces *g)
{
	size_t i, k;

	for (i = 0; i < g->nr; i++) {
		for (k = 0; k < p->azure_ws_nr; k++)
			if (aj_place_workspace_same(&p->azure_ws[k], &g->items[i]))
				break;
		if (k == p->azure_ws_nr && k < AJ_PLACER_WORKSPACES) {
			p->azure_ws[p->azure_ws_nr++] = g->items[i];
			p->azure_read_at = 0;
		}
	}
}

/*
 * The snapshot, each part read again when stale (under the lock); the
 * Azure part, at its own pace, only once a candidate names a workspace.
 * 0 / -1.
 */
static int fresh(struct aj_placer *p, struct aj_kube *k, long long now)
{
	size_t i;

	if (refresh(&p->views, &p->read_at, AJ_PLACER_FRESH, k, now, aj_views_read_cluster))
		return -1;
	if (!p->read_azure || !p->azure_ws_nr || !stale(p->azure_read_at, now, p->azure_every))
		return 0;
	for (i = 0; i < p->azure_nr; i++)
		aj_views_azure_release(&p->azure[i]);
	p->azure_nr = p->azure_ws_nr;
	if (p->read_azure(p->azure_config, p->azure_ws, p->azure_nr, p->azure))
		return -1;
	p->azure_read_at = now;
	return 0;
}

/* The index in c of the candidate whose row is row (rows borrow the candidates' names); c->nr: none. */
static size_t candidate_of(const struct aj_candidates *c, const struct aj_place_row *row)
{
	size_t i;

	for (i = 0; i < c->nr && c->items[i].name != row->name; i++)
		;
	return i;
}

/*
 * The part of each workspace of g as read into parts (borrowed); one
 * beyond the bound unknown with why (under the lock).
 */
static void parts_of(const struct aj_placer *p, const struct aj_place_workspaces *g,
		     struct aj_views_azure *parts)
{
	char why[AJ_VIEWS_WHY_MAX];
	size_t i, k;

	for (i = 0; i < g->nr; i++) {
		for (k = 0; k < p->azure_nr; k++)
			if (aj_place_workspace_same(&p->azure_ws[k], &g->items[i]))
				break;
		if (k < p->azure_nr) {
			parts[i] = p->azure[k];
			continue;
		}
		memset(&parts[i], 0, sizeof(parts[i]));
		snprintf(why, sizeof(why), "workspace %.64s is not read: placement reads the computes "
			 "of the first %d workspaces named", g->items[i].name, AJ_PLACER_WORKSPACES);
		aj_views_azure_unknown(&parts[i], why);
	}
}

int aj_placer_rank(struct aj_placer *p, struct aj_kube *k, const struct aj_candidates *c,
		   const struct aj_build_ctx *ctx, const int *served, const char *const *why_not,
		   long long now, int submit, struct aj_place_row *rows,
		   char (*where)[AJ_PLACE_WHERE_MAX], struct aj_errors *err)
{
	struct aj_views_azure parts[AJ_PLACEMENT_MAX_CANDIDATES];
	struct aj_place_workspaces g;
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	g.nr = 0;
	for (i = 0; i < c->nr && i < AJ_PLACEMENT_MAX_CANDIDATES; i++)
		g.of[i] = AJ_PLACE_NOT_AZURE;
	if (p->read_azure) {
		aj_place_workspaces_group(c, &p->azure_default, &g);
		know(p, &g);
	}
	if (fresh(p, k, now)) {
		pthread_mutex_unlock(&p->lock);
		return aj_errors_oom(err);
	}
	parts_of(p, &g, parts);
	/* with a default, a workspace goes unnamed only when its name is too long for Azure */
	/* the VCs were read with the first workspace */
	rc = aj_place_judge_workspaces(&p->views, parts, p->azure_nr ? &p->azure[0] : NULL, &g,
				       "its workspace_name is too long", &p->waits, c, ctx, served,
				       why_not, rows, where, err);
	if (!rc)
		aj_place_rank(rows, c->nr);
	/*
	 * Charged in the same hold of the lock as the judgement: no other
	 * worker judges from this snapshot between the pick and its charge.
	 */
	if (!rc && submit && (i = aj_place_pick(rows, c->nr)) < c->nr &&
	    rows[i].state == AJ_PLACE_FITS && (i = candidate_of(c, &rows[i])) < c->nr &&
	    c->items[i].ok)
		rc = aj_place_charge_workspaces(&p->views, parts,
						p->azure_nr ? &p->azure[0] : NULL, &g, c, i, ctx, err);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

void aj_placer_learn(struct aj_placer *p, const cJSON *ajjob)
{
	pthread_mutex_lock(&p->lock);
	/* out of memory: one sample fewer, nothing else */
	(void)aj_waits_learn(&p->waits, ajjob);
	pthread_mutex_unlock(&p->lock);
}

int aj_placer_never_fits(struct aj_placer *p, struct aj_kube *k, const cJSON *obj, long long now,
			 char *out, size_t size)
{
	struct aj_fit_result r;
	struct aj_views_ask a;
	int got = 0;

	out[0] = '\0';
	memset(&a, 0, sizeof(a));
	pthread_mutex_lock(&p->lock);
	/* a refused list keeps why: no fact until the next read */
	if (refresh(&p->empty, &p->empty_at, AJ_PLACER_NODES_FRESH, k, now, aj_views_read_nodes))
		got = -1;
	else if (!p->empty.nodes_why[0])
		got = aj_views_ask_read(obj, &a);
	if (got > 0 && aj_fit_nodes_empty(p->empty.nodes, p->empty.nodes_nr, &a.ask, &r))
		got = -1;
	if (got > 0 && r.state == AJ_PLACE_FULL)
		snprintf(out, size, "%s", r.reason);
	pthread_mutex_unlock(&p->lock);
	aj_views_ask_release(&a);
	return got < 0 ? -1 : 0;
}
