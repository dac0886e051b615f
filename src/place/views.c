#include "views.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/json.h"
#include "core/strmap.h"

#define KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

void aj_views_init(struct aj_views *v)
{
	memset(v, 0, sizeof(*v));
}

void aj_views_release(struct aj_views *v)
{
	size_t i;

	for (i = 0; i < v->owned_nr; i++)
		aj_free(v->owned[i]);
	aj_free(v->owned);
	aj_views_init(v);
}

/* p, now the snapshot's to free; NULL (p freed) when it cannot be kept */
static void *keep(struct aj_views *v, void *p)
{
	if (!p || AJ_GROW(v->owned, v->owned_nr + 1, v->owned_alloc)) {
		aj_free(p);
		return NULL;
	}
	v->owned[v->owned_nr++] = p;
	return p;
}

static void *vcalloc(struct aj_views *v, size_t n, size_t size)
{
	return keep(v, aj_calloc(n ? n : 1, size));
}

/* a copy of s ("" for NULL), kept */
static char *vstr(struct aj_views *v, const char *s)
{
	return keep(v, aj_strdup(s ? s : ""));
}

/* A quantity as the API writes it: a string, or a bare number. */
static int quantity(enum aj_fit_res r, const cJSON *q, long long *out)
{
	char num[48];

	if (cJSON_IsString(q))
		return aj_fit_quantity(r, q->valuestring, out);
	if (!cJSON_IsNumber(q) || q->valuedouble < 0 || q->valuedouble > 1e15)
		return -1;
	snprintf(num, sizeof(num), "%.6f", q->valuedouble);
	return aj_fit_quantity(r, num, out);
}

/* The resources of a {name: quantity} map into out (others untouched). */
static void res_map(const cJSON *map, struct aj_fit_res_v *out)
{
	const cJSON *q;
	long long val;
	int r;

	cJSON_ArrayForEach(q, map) {
		r = aj_fit_res_of(q->string);
		if (r >= 0 && !quantity(r, q, &val))
			out->v[r] = val;
	}
}

/* A {key: value} map as labels, kept. */
static int labels(struct aj_views *v, const cJSON *map, const struct aj_fit_label **out,
		  size_t *nr)
{
	struct aj_fit_label *l;
	const cJSON *e;
	size_t n = 0;

	*nr = 0;
	*out = NULL;
	if (!cJSON_GetArraySize(map))
		return 0;
	if (!(l = vcalloc(v, (size_t)cJSON_GetArraySize(map), sizeof(*l))))
		return -1;
	cJSON_ArrayForEach(e, map) {
		if (!cJSON_IsString(e))
			continue;
		if (!(l[n].key = vstr(v, e->string)) || !(l[n].value = vstr(v, e->valuestring)))
			return -1;
		n++;
	}
	*out = l;
	*nr = n;
	return 0;
}

static int true_condition(const cJSON *obj, const char *type, const char **message)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, aj_json_get(aj_json_get(obj, "status"), "conditions")) {
		const char *t = aj_json_str(c, "type"), *s = aj_json_str(c, "status");

		if (t && !strcmp(t, type)) {
			if (message)
				*message = aj_json_str(c, "message");
			return s && !strcmp(s, "True");
		}
	}
	if (message)
		*message = NULL;
	return 0;
}

/* The requests of one pod spec: its containers' requests, else their limits. */
static void pod_requests(const cJSON *spec, struct aj_fit_res_v *out)
{
	const cJSON *c;
	int r;

	for (r = 0; r < AJ_FIT_RES_NR; r++)
		out->v[r] = 0;
	cJSON_ArrayForEach(c, aj_json_get(spec, "containers")) {
		const cJSON *res = aj_json_get(c, "resources");
		struct aj_fit_res_v req, lim;

		aj_fit_res_unset(&req);
		aj_fit_res_unset(&lim);
		res_map(aj_json_get(res, "requests"), &req);
		res_map(aj_json_get(res, "limits"), &lim);
		for (r = 0; r < AJ_FIT_RES_NR; r++)
			if (r != AJ_FIT_PODS)
				out->v[r] += req.v[r] >= 0 ? req.v[r] : lim.v[r] >= 0 ? lim.v[r] : 0;
	}
}

static int taints(struct aj_views *v, const cJSON *list, struct aj_fit_node *n)
{
	struct aj_fit_taint *t;
	const cJSON *e;
	size_t k = 0;

	if (!cJSON_GetArraySize(list))
		return 0;
	if (!(t = vcalloc(v, (size_t)cJSON_GetArraySize(list), sizeof(*t))))
		return -1;
	cJSON_ArrayForEach(e, list) {
		if (!(t[k].key = vstr(v, aj_json_str(e, "key"))) ||
		    !(t[k].effect = vstr(v, aj_json_str(e, "effect"))))
			return -1;
		if (aj_json_str(e, "value") && !(t[k].value = vstr(v, aj_json_str(e, "value"))))
			return -1;
		k++;
	}
	n->taints = t;
	n->taints_nr = k;
	return 0;
}

static int finished(const cJSON *pod)
{
	const char *phase = aj_json_str(aj_json_get(pod, "status"), "phase");

	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

int aj_views_set_nodes(struct aj_views *v, const cJSON *nodes, const cJSON *pods)
{
	const cJSON *items = aj_json_get(nodes, "items"), *e;
	struct aj_strmap by_name;
	size_t n = 0;
	int r, rc = -1;

	aj_strmap_init(&by_name);
	v->nodes = vcalloc(v, (size_t)cJSON_GetArraySize(items), sizeof(*v->nodes));
	if (!v->nodes)
		goto out;
	cJSON_ArrayForEach(e, items) {
		struct aj_fit_node *nd = &v->nodes[n];
		const cJSON *meta = aj_json_get(e, "metadata"), *spec = aj_json_get(e, "spec");

		if (!(nd->name = vstr(v, aj_json_str(meta, "name"))) ||
		    labels(v, aj_json_get(meta, "labels"), &nd->labels, &nd->labels_nr) ||
		    taints(v, aj_json_get(spec, "taints"), nd))
			goto out;
		nd->unschedulable = cJSON_IsTrue(aj_json_get(spec, "unschedulable")) ||
				    !true_condition(e, "Ready", NULL);
		aj_fit_res_unset(&nd->free);
		res_map(aj_json_get(aj_json_get(e, "status"), "allocatable"), &nd->free);
		nd->alloc = nd->free;
		if (aj_strmap_put(&by_name, nd->name, (void *)(uintptr_t)(n + 1), NULL))
			goto out;
		n++;
	}
	v->nodes_nr = n;
	cJSON_ArrayForEach(e, aj_json_get(pods, "items")) {
		const cJSON *spec = aj_json_get(e, "spec");
		const char *on = aj_json_str(spec, "nodeName");
		struct aj_fit_res_v req;
		struct aj_fit_node *nd;
		int found = 0;
		size_t at;

		if (!on || finished(e))
			continue;
		at = (size_t)(uintptr_t)aj_strmap_get(&by_name, on, &found);
		if (!found)
			continue;
		nd = &v->nodes[at - 1];
		pod_requests(spec, &req);
		req.v[AJ_FIT_PODS] = 1;
		for (r = 0; r < AJ_FIT_RES_NR; r++)
			if (nd->free.v[r] >= 0)
				nd->free.v[r] = nd->free.v[r] > req.v[r] ? nd->free.v[r] - req.v[r] : 0;
	}
	rc = 0;
out:
	aj_strmap_release(&by_name);
	return rc;
}

int aj_views_set_queues(struct aj_views *v, const cJSON *queues)
{
	const cJSON *items = aj_json_get(queues, "items"), *e;
	size_t n = 0;

	v->queues = vcalloc(v, (size_t)cJSON_GetArraySize(items), sizeof(*v->queues));
	if (!v->queues)
		return -1;
	cJSON_ArrayForEach(e, items) {
		struct aj_fit_queue *q = &v->queues[n];
		const cJSON *status = aj_json_get(e, "status");

		if (!(q->name = vstr(v, aj_json_str(aj_json_get(e, "metadata"), "name"))))
			return -1;
		if (aj_json_str(status, "state") && !(q->state = vstr(v, aj_json_str(status, "state"))))
			return -1;
		aj_fit_res_unset(&q->capability);
		aj_fit_res_unset(&q->allocated);
		res_map(aj_json_get(aj_json_get(e, "spec"), "capability"), &q->capability);
		res_map(aj_json_get(status, "allocated"), &q->allocated);
		n++;
	}
	v->queues_nr = n;
	return 0;
}

/* {name, resources: [{name, <key>}]} entries of list: the one named flavor's into out */
static void flavor_amounts(const cJSON *list, const char *flavor, const char *key,
			   struct aj_fit_res_v *out)
{
	const cJSON *f, *r;
	long long val;
	int k;

	cJSON_ArrayForEach(f, list) {
		const char *name = aj_json_str(f, "name");

		if (!name || strcmp(name, flavor))
			continue;
		cJSON_ArrayForEach(r, aj_json_get(f, "resources")) {
			k = aj_fit_res_of(aj_json_str(r, "name"));
			if (k >= 0 && !quantity(k, aj_json_get(r, key), &val))
				out->v[k] = val;
		}
	}
}

static const cJSON *named(const cJSON *list, const char *name)
{
	const cJSON *e;

	cJSON_ArrayForEach(e, aj_json_get(list, "items")) {
		const char *n = aj_json_str(aj_json_get(e, "metadata"), "name");

		if (n && name && !strcmp(n, name))
			return e;
	}
	return NULL;
}

static int cluster_queue(struct aj_views *v, const cJSON *e, const cJSON *flavors,
			 struct aj_fit_cluster_queue *cq)
{
	const cJSON *spec = aj_json_get(e, "spec"), *g, *f;
	const cJSON *reserved = aj_json_get(aj_json_get(e, "status"), "flavorsReservation");
	/* borrowing beyond the nominal quota needs a cohort to borrow from */
	int cohort = aj_json_str(spec, "cohort") || aj_json_str(spec, "cohortName");
	const char *why = NULL;
	struct aj_fit_flavor *fl;
	size_t n = 0, total = 0;
	int r;

	if (!(cq->name = vstr(v, aj_json_str(aj_json_get(e, "metadata"), "name"))))
		return -1;
	cq->active = true_condition(e, "Active", &why);
	if (why && !(cq->inactive_why = vstr(v, why)))
		return -1;
	cJSON_ArrayForEach(g, aj_json_get(spec, "resourceGroups"))
		total += (size_t)cJSON_GetArraySize(aj_json_get(g, "flavors"));
	if (!(fl = vcalloc(v, total, sizeof(*fl))))
		return -1;
	cJSON_ArrayForEach(g, aj_json_get(spec, "resourceGroups")) {
		cJSON_ArrayForEach(f, aj_json_get(g, "flavors")) {
			const cJSON *rf = named(flavors, aj_json_str(f, "name"));

			if (!(fl[n].name = vstr(v, aj_json_str(f, "name"))) ||
			    labels(v, aj_json_get(aj_json_get(rf, "spec"), "nodeLabels"),
				   &fl[n].node_labels, &fl[n].node_labels_nr))
				return -1;
			aj_fit_res_unset(&fl[n].nominal);
			aj_fit_res_unset(&fl[n].borrow);
			aj_fit_res_unset(&fl[n].reserved);
			flavor_amounts(aj_json_get(g, "flavors"), fl[n].name, "nominalQuota",
				       &fl[n].nominal);
			if (cohort)
				flavor_amounts(aj_json_get(g, "flavors"), fl[n].name, "borrowingLimit",
					       &fl[n].borrow);
			flavor_amounts(reserved, fl[n].name, "total", &fl[n].reserved);
			for (r = 0; r < AJ_FIT_RES_NR; r++)
				if (!cohort || fl[n].borrow.v[r] < 0)
					fl[n].borrow.v[r] = 0;
			n++;
		}
	}
	cq->flavors = fl;
	cq->flavors_nr = n;
	return 0;
}

int aj_views_set_kueue(struct aj_views *v, const cJSON *cqs, const cJSON *lqs,
		       const cJSON *flavors)
{
	const cJSON *items = aj_json_get(cqs, "items"), *e;
	size_t n = 0;

	v->cqs = vcalloc(v, (size_t)cJSON_GetArraySize(items), sizeof(*v->cqs));
	if (!v->cqs)
		return -1;
	cJSON_ArrayForEach(e, items)
		if (cluster_queue(v, e, flavors, &v->cqs[n++]))
			return -1;
	v->cqs_nr = n;
	items = aj_json_get(lqs, "items");
	v->lqs = vcalloc(v, (size_t)cJSON_GetArraySize(items), sizeof(*v->lqs));
	if (!v->lqs)
		return -1;
	n = 0;
	cJSON_ArrayForEach(e, items) {
		const cJSON *meta = aj_json_get(e, "metadata");

		if (!(v->lqs[n].ns = vstr(v, aj_json_str(meta, "namespace"))) ||
		    !(v->lqs[n].name = vstr(v, aj_json_str(meta, "name"))) ||
		    !(v->lqs[n].cluster_queue =
			      vstr(v, aj_json_str(aj_json_get(e, "spec"), "clusterQueue"))))
			return -1;
		n++;
	}
	v->lqs_nr = n;
	return 0;
}

/* --- the ask --- */

void aj_views_ask_release(struct aj_views_ask *a)
{
	aj_free(a->tasks);
	aj_free(a->selector);
	aj_free(a->tolerations);
	memset(a, 0, sizeof(*a));
}

/* The job's selector, tolerations and spread from the pod spec that speaks for it. */
static int ask_pods_of(const cJSON *spec, struct aj_views_ask *a)
{
	const cJSON *e, *sel = aj_json_get(spec, "nodeSelector"), *tols = aj_json_get(spec, "tolerations");
	size_t n = 0;

	a->selector = aj_calloc((size_t)cJSON_GetArraySize(sel) + 1, sizeof(*a->selector));
	a->tolerations = aj_calloc((size_t)cJSON_GetArraySize(tols) + 1, sizeof(*a->tolerations));
	if (!a->selector || !a->tolerations)
		return -1;
	cJSON_ArrayForEach(e, sel)
		if (cJSON_IsString(e)) {
			a->selector[n].key = e->string;
			a->selector[n++].value = e->valuestring;
		}
	a->ask.selector = a->selector;
	a->ask.selector_nr = n;
	n = 0;
	cJSON_ArrayForEach(e, tols) {
		const char *op = aj_json_str(e, "operator");

		a->tolerations[n].key = aj_json_str(e, "key");
		a->tolerations[n].exists = op && !strcmp(op, "Exists");
		a->tolerations[n].value = aj_json_str(e, "value");
		a->tolerations[n++].effect = aj_json_str(e, "effect");
	}
	a->ask.tolerations = a->tolerations;
	a->ask.tolerations_nr = n;
	a->ask.one_per_node = aj_json_get(aj_json_get(spec, "affinity"), "podAntiAffinity") != NULL;
	return 0;
}

static long count_of(const cJSON *n, long dflt)
{
	return cJSON_IsNumber(n) && n->valuedouble >= 0 && n->valuedouble < 1e7 ?
	       (long)n->valuedouble : dflt;
}

int aj_views_ask_read(const cJSON *obj, struct aj_views_ask *a)
{
	const char *api = aj_json_str(obj, "apiVersion"), *kind = aj_json_str(obj, "kind");
	const cJSON *spec = aj_json_get(obj, "spec"), *t, *speaker = NULL;
	int speaker_gpu = 0;
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	if (!api || !kind || strcmp(kind, "Job"))
		return 0;
	if (!strncmp(api, "batch.volcano.sh/", 17)) {
		const cJSON *tasks = aj_json_get(spec, "tasks");

		a->volcano_queue = aj_json_str(spec, "queue") ? aj_json_str(spec, "queue") : "default";
		if (!(a->tasks = aj_calloc((size_t)cJSON_GetArraySize(tasks) + 1, sizeof(*a->tasks))))
			return -1;
		cJSON_ArrayForEach(t, tasks) {
			const cJSON *ps = aj_json_get(aj_json_get(t, "template"), "spec");

			a->tasks[n].name = aj_json_str(t, "name");
			a->tasks[n].pods = count_of(aj_json_get(t, "replicas"), 1);
			pod_requests(ps, &a->tasks[n].req);
			/* the first task, or the first that asks for GPUs */
			if (!speaker || (!speaker_gpu && a->tasks[n].req.v[AJ_FIT_GPU] > 0)) {
				speaker = ps;
				speaker_gpu = a->tasks[n].req.v[AJ_FIT_GPU] > 0;
			}
			n++;
		}
	} else if (!strcmp(api, "batch/v1")) {
		const cJSON *ps = aj_json_get(aj_json_get(spec, "template"), "spec");

		a->local_queue = aj_json_str(aj_json_get(aj_json_get(obj, "metadata"), "labels"),
					     KUEUE_QUEUE_LABEL);
		if (!(a->tasks = aj_calloc(1, sizeof(*a->tasks))))
			return -1;
		a->tasks[0].name = aj_json_str(aj_json_get(obj, "metadata"), "name");
		a->tasks[0].pods = count_of(aj_json_get(spec, "parallelism"), 1);
		pod_requests(ps, &a->tasks[0].req);
		speaker = ps;
		n = 1;
	} else {
		return 0;
	}
	a->ask.tasks = a->tasks;
	a->ask.tasks_nr = n;
	return ask_pods_of(speaker, a) ? -1 : 1;
}

/* --- the answer --- */

static const struct aj_fit_queue *find_queue(const struct aj_views *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->queues_nr; i++)
		if (!strcmp(v->queues[i].name, name))
			return &v->queues[i];
	return NULL;
}

static const struct aj_fit_cluster_queue *find_cq(const struct aj_views *v, const char *ns,
						  const char *lq, const char **cq_name)
{
	size_t i;

	*cq_name = NULL;
	for (i = 0; i < v->lqs_nr && !*cq_name; i++)
		if (!strcmp(v->lqs[i].ns, ns) && !strcmp(v->lqs[i].name, lq))
			*cq_name = v->lqs[i].cluster_queue;
	for (i = 0; *cq_name && i < v->cqs_nr; i++)
		if (!strcmp(v->cqs[i].name, *cq_name))
			return &v->cqs[i];
	return NULL;
}

static void unknown(struct aj_fit_result *out, const char *what, const char *why)
{
	out->state = AJ_PLACE_UNKNOWN;
	snprintf(out->reason, sizeof(out->reason), "%s unknown: %s", what, why);
}

/* The gate's answer into gate: 1 when it decided (FULL or UNKNOWN) */
static int gate(const struct aj_views *v, const struct aj_views_ask *a, const char *ns,
		struct aj_fit_result *out)
{
	const struct aj_fit_cluster_queue *cq;
	const struct aj_fit_queue *q;
	const char *cq_name;

	out->state = AJ_PLACE_FITS;
	out->reason[0] = '\0';
	if (a->volcano_queue) {
		if (v->queues_why[0]) {
			unknown(out, "Volcano queues", v->queues_why);
			return 1;
		}
		if (!(q = find_queue(v, a->volcano_queue))) {
			out->state = AJ_PLACE_FULL;
			snprintf(out->reason, sizeof(out->reason), "queue %s does not exist",
				 a->volcano_queue);
			return 1;
		}
		aj_fit_queue(q, &a->ask, out);
	} else if (a->local_queue) {
		if (v->kueue_why[0]) {
			unknown(out, "Kueue queues", v->kueue_why);
			return 1;
		}
		if (!(cq = find_cq(v, ns, a->local_queue, &cq_name))) {
			out->state = AJ_PLACE_FULL;
			if (cq_name)
				snprintf(out->reason, sizeof(out->reason),
					 "ClusterQueue %s of LocalQueue %s/%s does not exist", cq_name,
					 ns, a->local_queue);
			else
				snprintf(out->reason, sizeof(out->reason),
					 "LocalQueue %s/%s does not exist", ns, a->local_queue);
			return 1;
		}
		aj_fit_cluster_queue(cq, &a->ask, out);
	}
	return out->state != AJ_PLACE_FITS;
}

int aj_views_fit(const struct aj_views *v, const struct aj_views_ask *a, const char *ns,
		 struct aj_fit_result *out)
{
	struct aj_fit_result g, n;

	if (gate(v, a, ns, &g)) {
		*out = g;
		return 0;
	}
	if (v->nodes_why[0]) {
		unknown(out, "nodes", v->nodes_why);
		return 0;
	}
	if (aj_fit_nodes(v->nodes, v->nodes_nr, &a->ask, &n))
		return -1;
	if (n.state != AJ_PLACE_FITS || !g.reason[0]) {
		*out = n;
		return 0;
	}
	out->state = AJ_PLACE_FITS;
	/* a cut reason is still one line, its start the gate's */
	if (snprintf(out->reason, sizeof(out->reason), "%s; %s", g.reason, n.reason) < 0)
		out->reason[0] = '\0';
	return 0;
}
