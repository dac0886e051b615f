#include "placer.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/timestamp.h"
#include "kube/client.h"
#include "report.h"
#include "resources.h"
#include "status.h"

static const struct aj_kube_resource nodes = { "", "v1", "nodes", 0 };
static const struct aj_kube_resource queues = { "scheduling.volcano.sh", "v1beta1", "queues", 0 };
static const struct aj_kube_resource cqs = { "kueue.x-k8s.io", "v1beta2", "clusterqueues", 0 };
static const struct aj_kube_resource lqs = { "kueue.x-k8s.io", "v1beta2", "localqueues", 1 };
static const struct aj_kube_resource flavors = { "kueue.x-k8s.io", "v1beta2", "resourceflavors", 0 };

#define NODES_UNKNOWN "every cluster candidate of a placement is ranked unknown (the nodes' free room cannot be read)"
#define KUEUE_UNKNOWN "a candidate with a Kueue queue is ranked unknown"

const struct aj_placer_list aj_placer_lists[] = {
	{ &nodes, NODES_UNKNOWN },
	{ &aj_res_pods, NODES_UNKNOWN },
	{ &queues, "a Volcano candidate of a placement is ranked unknown" },
	{ &cqs, KUEUE_UNKNOWN },
	{ &lqs, KUEUE_UNKNOWN },
	{ &flavors, KUEUE_UNKNOWN },
	{ NULL, NULL }
};

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

/*
 * Every object of res (all namespaces) into *out; 0, or 1 with why (the CRD
 * not installed, the list refused, the server's words), -1 out of memory.
 */
static int list(struct aj_kube *k, const struct aj_kube_resource *res, const char *fields,
		cJSON **out, char *why, size_t size)
{
	struct aj_kube_ref ref = { res, NULL, NULL, NULL };
	struct aj_kube_list_opts o = { NULL, fields, NULL, NULL, NULL, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_kube_status ks;
	int rc = 0;

	*out = NULL;
	aj_kube_status_init(&ks);
	if (aj_kube_list_all(k, &ref, &o, out, &ks, &err)) {
		rc = err.oom ? -1 : 1;
		if (ks.code == 404)
			snprintf(why, size, "the CRD %s.%s is not installed", res->plural, res->group);
		else if (ks.code == 403)
			snprintf(why, size, "the controller may not list %s%s%s", res->plural,
				 *res->group ? "." : "", res->group);
		else {
			aj_report_errors_text(&err, &text);
			snprintf(why, size, "listing %s failed: %s", res->plural, aj_buf_cstr(&text));
		}
	}
	aj_buf_release(&text);
	aj_kube_status_release(&ks);
	aj_errors_release(&err);
	return rc;
}

/* Read every part of the views again into v (initialised). 0 / -1 (out of memory). */
static int read_views(struct aj_kube *k, struct aj_views *v)
{
	cJSON *n = NULL, *pods = NULL, *q = NULL, *c = NULL, *l = NULL, *f = NULL;
	int a, b, rc = -1;

	a = list(k, &nodes, NULL, &n, v->nodes_why, sizeof(v->nodes_why));
	b = a ? 0 : list(k, &aj_res_pods, "status.phase!=Succeeded,status.phase!=Failed", &pods,
			 v->nodes_why, sizeof(v->nodes_why));
	if (a < 0 || b < 0 || (!a && !b && aj_views_set_nodes(v, n, pods)))
		goto out;
	a = list(k, &queues, NULL, &q, v->queues_why, sizeof(v->queues_why));
	if (a < 0 || (!a && aj_views_set_queues(v, q)))
		goto out;
	a = list(k, &cqs, NULL, &c, v->kueue_why, sizeof(v->kueue_why));
	a = a ? a : list(k, &lqs, NULL, &l, v->kueue_why, sizeof(v->kueue_why));
	a = a ? a : list(k, &flavors, NULL, &f, v->kueue_why, sizeof(v->kueue_why));
	if (a < 0 || (!a && aj_views_set_kueue(v, c, l, f)))
		goto out;
	rc = 0;
out:
	cJSON_Delete(n);
	cJSON_Delete(pods);
	cJSON_Delete(q);
	cJSON_Delete(c);
	cJSON_Delete(l);
	cJSON_Delete(f);
	return rc;
}

/* The snapshot, read again when stale (under the lock). 0 / -1. */
static int fresh(struct aj_placer *p, struct aj_kube *k, long long now)
{
	struct aj_views v;

	if (p->read_at && now - p->read_at < AJ_PLACER_FRESH && now >= p->read_at)
		return 0;
	aj_views_init(&v);
	if (read_views(k, &v)) {
		aj_views_release(&v);
		return -1;
	}
	aj_views_release(&p->views);
	p->views = v;
	p->read_at = now;
	return 0;
}

/* One valid candidate's row: its objects built, its ask judged. 0 / -1. */
static int judge(struct aj_placer *p, const struct aj_pipeline *pl, const struct aj_build_ctx *ctx,
		 struct aj_place_row *row, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_fit_result out;
	struct aj_views_ask a;
	cJSON *objects = NULL;
	int r, rc = 0;

	row->state = AJ_PLACE_UNKNOWN;
	if (pl->backend->target != AJ_TARGET_CLUSTER) {
		snprintf(row->reason, sizeof(row->reason),
			 "the controller reads no Azure capacity for placement");
		return 0;
	}
	if (aj_pipeline_build(pl, ctx, &objects, &problems)) {
		aj_report_errors_text(&problems, &text);
		row->state = AJ_PLACE_EXCLUDED;
		snprintf(row->reason, sizeof(row->reason), "does not build: %s", aj_buf_cstr(&text));
		rc = problems.oom ? aj_errors_oom(err) : 0;
		goto out;
	}
	r = aj_views_ask_read(cJSON_GetArrayItem(objects, 0), &a);
	if (r > 0 && aj_views_fit(&p->views, &a, ctx->namespace_, &out))
		r = -1;
	if (r > 0) {
		long long gpus = aj_fit_ask_total(&a.ask, AJ_FIT_GPU);

		row->state = out.state;
		row->gpus = gpus > 1000000000 ? 1000000000 : (long)gpus;
		memcpy(row->reason, out.reason, sizeof(row->reason));
	} else if (!r) {
		snprintf(row->reason, sizeof(row->reason), "its objects are of no kind the views know");
	}
	aj_views_ask_release(&a);
	if (r < 0)
		rc = aj_errors_oom(err);
out:
	cJSON_Delete(objects);
	aj_buf_release(&text);
	aj_errors_release(&problems);
	return rc;
}

int aj_placer_rank(struct aj_placer *p, struct aj_kube *k, const struct aj_candidates *c,
		   const struct aj_build_ctx *ctx, const int *served, const char *const *why_not,
		   long long now, struct aj_place_row *rows, char (*where)[128],
		   struct aj_errors *err)
{
	size_t i;
	int rc = 0;

	pthread_mutex_lock(&p->lock);
	if (fresh(p, k, now)) {
		pthread_mutex_unlock(&p->lock);
		return aj_errors_oom(err);
	}
	for (i = 0; !rc && i < c->nr; i++) {
		const struct aj_candidate *cand = &c->items[i];
		struct aj_buf w = AJ_BUF_INIT(128);
		struct aj_place_row *row = &rows[i];

		memset(row, 0, sizeof(*row));
		row->name = cand->name;
		row->order = cand->order;
		row->expected_wait = -1;
		row->where = where[i];
		where[i][0] = '\0';
		row->backend = cand->ok ? cand->p.backend->name : "";
		if (cand->ok && !aj_candidate_place(cand, ctx->namespace_, &w))
			snprintf(where[i], sizeof(where[i]), "%s", aj_buf_cstr(&w));
		aj_buf_release(&w);
		if (!cand->ok) {
			struct aj_buf why = AJ_BUF_INIT(AJ_PLACE_REASON_MAX);

			row->state = AJ_PLACE_EXCLUDED;
			aj_report_errors_text(&cand->why, &why);
			snprintf(row->reason, sizeof(row->reason), "%s",
				 why.failed ? "left out (its reason is too long)" : aj_buf_cstr(&why));
			aj_buf_release(&why);
		} else if (!served[i]) {
			row->state = AJ_PLACE_EXCLUDED;
			snprintf(row->reason, sizeof(row->reason), "%s", why_not[i]);
		} else {
			rc = judge(p, &cand->p, ctx, row, err);
			row->expected_wait = aj_waits_expected(&p->waits, row->name,
							       aj_waits_band(row->gpus, 1));
		}
	}
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
