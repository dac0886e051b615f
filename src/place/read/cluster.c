#include "cluster.h"

#include <stdio.h>

#include "core/buf.h"
#include "core/error.h"
#include "kube/client.h"
#include "kube/status.h"
#include "place/views.h"

static const struct aj_kube_resource nodes = { "", "v1", "nodes", 0 };
static const struct aj_kube_resource pods_res = { "", "v1", "pods", 1 };
static const struct aj_kube_resource queues = { "scheduling.volcano.sh", "v1beta1", "queues", 0 };
static const struct aj_kube_resource cqs = { "kueue.x-k8s.io", "v1beta2", "clusterqueues", 0 };
static const struct aj_kube_resource lqs = { "kueue.x-k8s.io", "v1beta2", "localqueues", 1 };
static const struct aj_kube_resource flavors = { "kueue.x-k8s.io", "v1beta2", "resourceflavors", 0 };

#define NODES_UNKNOWN "every cluster candidate of a placement is ranked unknown (the nodes' free room cannot be read)"
#define KUEUE_UNKNOWN "a candidate with a Kueue queue is ranked unknown"

const struct aj_views_list aj_views_cluster_lists[] = {
	{ &nodes, NODES_UNKNOWN },
	{ &pods_res, NODES_UNKNOWN },
	{ &queues, "a Volcano candidate of a placement is ranked unknown" },
	{ &cqs, KUEUE_UNKNOWN },
	{ &lqs, KUEUE_UNKNOWN },
	{ &flavors, KUEUE_UNKNOWN },
	{ NULL, NULL }
};

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
			snprintf(why, size, "listing %s%s%s is forbidden to this identity", res->plural,
				 *res->group ? "." : "", res->group);
		else {
			aj_errors_format_line(&err, &text);
			snprintf(why, size, "listing %s failed: %s", res->plural, aj_buf_cstr(&text));
		}
	}
	aj_buf_release(&text);
	aj_kube_status_release(&ks);
	aj_errors_release(&err);
	return rc;
}

int aj_views_read_cluster(struct aj_kube *k, struct aj_views *v)
{
	cJSON *n = NULL, *pods = NULL, *q = NULL, *c = NULL, *l = NULL, *f = NULL;
	int a, b, rc = -1;

	a = list(k, &nodes, NULL, &n, v->nodes_why, sizeof(v->nodes_why));
	b = a ? 0 : list(k, &pods_res, "status.phase!=Succeeded,status.phase!=Failed", &pods,
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

int aj_views_read_nodes(struct aj_kube *k, struct aj_views *v)
{
	cJSON *n = NULL;
	int a = list(k, &nodes, NULL, &n, v->nodes_why, sizeof(v->nodes_why));
	int rc = a < 0 || (!a && aj_views_set_nodes(v, n, NULL)) ? -1 : 0;

	cJSON_Delete(n);
	return rc;
}
