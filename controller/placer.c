#include "placer.h"

#include <string.h>

#include "core/error.h"
#include "core/json.h"
#include "core/timestamp.h"
#include "place/judge.h"
#include "place/read/cluster.h"
#include "status.h"

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

/* The snapshot, each part read again when stale (under the lock). 0 / -1. */
static int fresh(struct aj_placer *p, struct aj_kube *k, long long now)
{
	struct aj_views v;

	if (stale(p->read_at, now, AJ_PLACER_FRESH)) {
		aj_views_init(&v);
		if (aj_views_read_cluster(k, &v)) {
			aj_views_release(&v);
			return -1;
		}
		/* the Azure part has its own pace: kept */
		v.azure = p->views.azure;
		memset(&p->views.azure, 0, sizeof(p->views.azure));
		aj_views_release(&p->views);
		p->views = v;
		p->read_at = now;
	}
	if (p->read_azure && stale(p->azure_read_at, now, p->azure_every)) {
		aj_views_azure_release(&p->views.azure);
		if (p->read_azure(p->azure_config, &p->views.azure))
			return -1;
		p->azure_read_at = now;
	}
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
	const cJSON *status = aj_json_get(ajjob, "status");
	const cJSON *atts = aj_json_get(aj_json_get(status, AJ_STATUS_PLACEMENT), "attempts");
	const cJSON *last = cJSON_GetArrayItem(atts, cJSON_GetArraySize(atts) - 1);
	const char *cand = aj_json_str(last, "candidate");
	long long sub = aj_timestamp_parse(aj_json_str(last, "submitted"), 0);
	long long run = aj_status_true_since(status, "Running");
	long gpus = (long)aj_json_whole(aj_json_get(last, "gpus"), 1e9, 0);

	/* a short job may end before its Running is written: its end bounds its start */
	if (run <= 0)
		run = aj_status_true_since(status, "Succeeded");
	if (!cand || sub <= 0 || run <= 0 || run < sub)
		return;
	pthread_mutex_lock(&p->lock);
	/* out of memory: one sample fewer, nothing else */
	(void)aj_waits_add(&p->waits, cand, aj_waits_band(gpus, 1), (long)(run - sub), (long)run);
	pthread_mutex_unlock(&p->lock);
}
