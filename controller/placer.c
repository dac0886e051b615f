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
	aj_waits_release(&p->waits);
	aj_views_release(&p->empty);
	aj_views_release(&p->views);
	pthread_mutex_destroy(&p->lock);
}

void aj_placer_set_azure(struct aj_placer *p,
			 int (*read)(const void *config, struct aj_views_azure *out),
			 const void *config, int every)
{
	p->read_azure = read;
	p->azure_config = config;
	p->azure_every = every;
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

/* The snapshot, each part read again when stale (under the lock). 0 / -1. */
static int fresh(struct aj_placer *p, struct aj_kube *k, long long now)
{
	struct aj_views_azure azure = p->views.azure;
	int rc;

	/* the Azure part has its own pace: kept across the cluster's reads, which leave it empty */
	memset(&p->views.azure, 0, sizeof(p->views.azure));
	rc = refresh(&p->views, &p->read_at, AJ_PLACER_FRESH, k, now, aj_views_read_cluster);
	p->views.azure = azure;
	if (rc)
		return -1;
	if (p->read_azure && stale(p->azure_read_at, now, p->azure_every)) {
		aj_views_azure_release(&p->views.azure);
		if (p->read_azure(p->azure_config, &p->views.azure))
			return -1;
		p->azure_read_at = now;
	}
	return 0;
}

/* The candidate of c whose row is row (rows borrow the candidates' names); NULL: none. */
static const struct aj_candidate *candidate_of(const struct aj_candidates *c,
					       const struct aj_place_row *row)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->items[i].name == row->name)
			return &c->items[i];
	return NULL;
}

int aj_placer_rank(struct aj_placer *p, struct aj_kube *k, const struct aj_candidates *c,
		   const struct aj_build_ctx *ctx, const int *served, const char *const *why_not,
		   long long now, int submit, struct aj_place_row *rows,
		   char (*where)[AJ_PLACE_WHERE_MAX], struct aj_errors *err)
{
	const struct aj_candidate *chosen;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (fresh(p, k, now)) {
		pthread_mutex_unlock(&p->lock);
		return aj_errors_oom(err);
	}
	rc = aj_place_judge(&p->views, &p->waits, c, ctx, served, why_not, rows, where, err);
	if (!rc)
		aj_place_rank(rows, c->nr);
	/*
	 * Charged in the same hold of the lock as the judgement: no other
	 * worker judges from this snapshot between the pick and its charge.
	 */
	if (!rc && submit && aj_place_pick(rows, c->nr) < c->nr && rows[0].state == AJ_PLACE_FITS &&
	    (chosen = candidate_of(c, &rows[0])) && chosen->ok)
		rc = aj_place_charge(&p->views, &chosen->p, ctx, err);
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
