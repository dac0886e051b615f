#include "placer.h"

#include <string.h>

#include "core/error.h"
#include "place/judge.h"
#include "place/read/cluster.h"

void aj_placer_init(struct aj_placer *p)
{
	memset(p, 0, sizeof(*p));
	pthread_mutex_init(&p->lock, NULL);
	aj_views_init(&p->views);
	aj_waits_init(&p->waits);
}

void aj_placer_release(struct aj_placer *p)
{
	aj_waits_release(&p->waits);
	aj_views_release(&p->views);
	pthread_mutex_destroy(&p->lock);
}

/* The snapshot, read again when stale (under the lock). 0 / -1. */
static int fresh(struct aj_placer *p, struct aj_kube *k, long long now)
{
	struct aj_views v;

	if (p->read_at && now - p->read_at < AJ_PLACER_FRESH && now >= p->read_at)
		return 0;
	aj_views_init(&v);
	if (aj_views_read_cluster(k, &v)) {
		aj_views_release(&v);
		return -1;
	}
	aj_views_release(&p->views);
	p->views = v;
	p->read_at = now;
	return 0;
}

int aj_placer_rank(struct aj_placer *p, struct aj_kube *k, const struct aj_candidates *c,
		   const struct aj_build_ctx *ctx, const int *served, const char *const *why_not,
		   long long now, struct aj_place_row *rows, char (*where)[AJ_PLACE_WHERE_MAX],
		   struct aj_errors *err)
{
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (fresh(p, k, now)) {
		pthread_mutex_unlock(&p->lock);
		return aj_errors_oom(err);
	}
	rc = aj_place_judge(&p->views, &p->waits, c, ctx, served, why_not, rows, where, err);
	pthread_mutex_unlock(&p->lock);
	if (!rc)
		aj_place_rank(rows, c->nr);
	return rc;
}

void aj_placer_learn(struct aj_placer *p, const cJSON *ajjob)
{
	pthread_mutex_lock(&p->lock);
	/* out of memory: one sample fewer, nothing else */
	(void)aj_waits_learn(&p->waits, ajjob);
	pthread_mutex_unlock(&p->lock);
}
