#include "views.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/strmap.h"

#define KUEUE_QUEUE_LABEL "kueue.x-k8s.io/queue-name"

void aj_views_init(struct aj_views *v)
{
	memset(v, 0, sizeof(*v));
}

static void owned_release(struct aj_views_owned *o)
{
	size_t i;

	for (i = 0; i < o->nr; i++)
		aj_free(o->items[i]);
	aj_free(o->items);
	memset(o, 0, sizeof(*o));
}

void aj_views_azure_release(struct aj_views_azure *a)
{
	size_t i;

	for (i = 0; i < a->vcs_nr; i++)
		aj_vc_release(&a->vcs[i]);
	aj_free(a->vcs);
	owned_release(&a->owned);
	memset(a, 0, sizeof(*a));
}

void aj_views_release(struct aj_views *v)
{
	aj_views_azure_release(&v->azure);
	owned_release(&v->owned);
	aj_views_init(v);
}

/* p, now o's to free; NULL (p freed) when it cannot be kept */
static void *keep_in(struct aj_views_owned *o, void *p)
{
	if (!p || AJ_GROW(o->items, o->nr + 1, o->alloc)) {
		aj_free(p);
		return NULL;
	}
	o->items[o->nr++] = p;
	return p;
}

static void *vcalloc(struct aj_views *v, size_t n, size_t size)
{
	return keep_in(&v->owned, aj_calloc(n ? n : 1, size));
}

/* a copy of s ("" for NULL), kept */
static char *vstr(struct aj_views *v, const char *s)
{
	return keep_in(&v->owned, aj_strdup(s ? s : ""));
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
	aj_free(a->instance_types);
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

/* --- Azure --- */

int aj_views_set_computes(struct aj_views_azure *a, const char *workspace, const cJSON *computes)
{
	const cJSON *e;
	size_t n = 0;

	a->workspace = keep_in(&a->owned, aj_strdup(workspace ? workspace : ""));
	a->computes = keep_in(&a->owned, aj_calloc((size_t)cJSON_GetArraySize(computes) + 1,
						   sizeof(*a->computes)));
	if (!a->workspace || !a->computes)
		return -1;
	cJSON_ArrayForEach(e, computes) {
		const cJSON *props = aj_json_get(e, "properties");
		const cJSON *pp = aj_json_get(props, "properties");
		const cJSON *counts = aj_json_get(pp, "nodeStateCounts");
		const char *type = aj_json_str(props, "computeType");
		const char *state = aj_json_str(props, "provisioningState");
		struct aj_fit_compute *c = &a->computes[n];

		if (!aj_json_str(e, "name"))
			continue;
		if (!(c->name = keep_in(&a->owned, aj_strdup(aj_json_str(e, "name")))) ||
		    (type && !(c->type = keep_in(&a->owned, aj_strdup(type)))) ||
		    (state && !(c->state = keep_in(&a->owned, aj_strdup(state)))))
			return -1;
		c->max = count_of(aj_json_get(aj_json_get(pp, "scaleSettings"), "maxNodeCount"), 0);
		c->current = count_of(aj_json_get(pp, "currentNodeCount"), 0);
		c->idle = count_of(aj_json_get(counts, "idleNodeCount"), 0);
		c->running = count_of(aj_json_get(counts, "runningNodeCount"), 0);
		c->preparing = count_of(aj_json_get(counts, "preparingNodeCount"), 0);
		c->unusable = count_of(aj_json_get(counts, "unusableNodeCount"), 0);
		c->leaving = count_of(aj_json_get(counts, "leavingNodeCount"), 0);
		c->preempted = count_of(aj_json_get(counts, "preemptedNodeCount"), 0);
		n++;
	}
	a->computes_nr = n;
	return 0;
}

void aj_views_azure_unknown(struct aj_views_azure *a, const char *why)
{
	a->read = 1;
	snprintf(a->computes_why, sizeof(a->computes_why), "%s", why);
	snprintf(a->vcs_why, sizeof(a->vcs_why), "%s", why);
}

int aj_views_set_vcs(struct aj_views_azure *a, struct aj_vc *vcs, size_t nr)
{
	a->vcs = vcs;
	a->vcs_nr = nr;
	a->vcs_charged = keep_in(&a->owned, aj_calloc(nr ? nr : 1, sizeof(int)));
	return a->vcs_charged ? 0 : -1;
}

/* An Azure ML command job's ask from its properties. 1 / -1 (OOM). */
static int ask_azure(const cJSON *props, struct aj_views_ask *a)
{
	const cJSON *res = aj_json_get(props, "resources");
	const cJSON *sc = aj_json_get(aj_json_get(res, "properties"), "AISuperComputer");
	const cJSON *types = aj_json_get(sc, "instanceTypes"), *t;

	a->azure = 1;
	a->compute = aj_json_str(props, "computeId");
	a->instances = count_of(aj_json_get(res, "instanceCount"), 1);
	if (a->instances < 1)
		a->instances = 1;
	if (!sc)
		return 1;
	a->supercomputer = 1;
	a->tier = aj_json_str(sc, "slaTier");
	a->vc = aj_json_str(sc, "VirtualClusterArmId");
	a->instance_types = aj_calloc((size_t)cJSON_GetArraySize(types) + 1,
				      sizeof(*a->instance_types));
	if (!a->instance_types)
		return -1;
	cJSON_ArrayForEach(t, types) {
		if (cJSON_IsString(t))
			a->instance_types[a->instance_types_nr++] = t->valuestring;
	}
	return 1;
}

int aj_views_ask_read(const cJSON *obj, struct aj_views_ask *a)
{
	const char *api = aj_json_str(obj, "apiVersion"), *kind = aj_json_str(obj, "kind");
	const cJSON *spec = aj_json_get(obj, "spec"), *t, *speaker = NULL;
	int speaker_gpu = 0;
	size_t n = 0;

	memset(a, 0, sizeof(*a));
	if (!api && aj_json_str(aj_json_get(obj, "properties"), "jobType") &&
	    !strcmp(aj_json_str(aj_json_get(obj, "properties"), "jobType"), "Command"))
		return ask_azure(aj_json_get(obj, "properties"), a);
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

/* The queue named name: its index, v->queues_nr when none. */
static size_t find_queue(const struct aj_views *v, const char *name)
{
	size_t i;

	for (i = 0; i < v->queues_nr; i++)
		if (!strcmp(v->queues[i].name, name))
			break;
	return i;
}

/* The ClusterQueue behind LocalQueue ns/lq: its index, v->cqs_nr when none (*cq_name, when named). */
static size_t find_cq(const struct aj_views *v, const char *ns, const char *lq,
		      const char **cq_name)
{
	size_t i;

	*cq_name = NULL;
	for (i = 0; i < v->lqs_nr && !*cq_name; i++)
		if (!strcmp(v->lqs[i].ns, ns) && !strcmp(v->lqs[i].name, lq))
			*cq_name = v->lqs[i].cluster_queue;
	for (i = 0; *cq_name && i < v->cqs_nr; i++)
		if (!strcmp(v->cqs[i].name, *cq_name))
			return i;
	return v->cqs_nr;
}

static void unknown(struct aj_fit_result *out, const char *what, const char *why)
{
	out->state = AJ_PLACE_UNKNOWN;
	/* a long why is cut: the reason stays one line */
	if (snprintf(out->reason, sizeof(out->reason), "%s unknown: %s", what, why) < 0)
		out->reason[0] = '\0';
}

/* The gate's answer into gate: 1 when it decided (FULL or UNKNOWN) */
static int gate(const struct aj_views *v, const struct aj_views_ask *a, const char *ns,
		struct aj_fit_result *out)
{
	const char *cq_name;
	size_t i;

	out->state = AJ_PLACE_FITS;
	out->reason[0] = '\0';
	if (a->volcano_queue) {
		if (v->queues_why[0]) {
			unknown(out, "Volcano queues", v->queues_why);
			return 1;
		}
		if ((i = find_queue(v, a->volcano_queue)) == v->queues_nr) {
			out->state = AJ_PLACE_FULL;
			snprintf(out->reason, sizeof(out->reason), "queue %s does not exist",
				 a->volcano_queue);
			return 1;
		}
		aj_fit_queue(&v->queues[i], &a->ask, out);
	} else if (a->local_queue) {
		if (v->kueue_why[0]) {
			unknown(out, "Kueue queues", v->kueue_why);
			return 1;
		}
		if ((i = find_cq(v, ns, a->local_queue, &cq_name)) == v->cqs_nr) {
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
		aj_fit_cluster_queue(&v->cqs[i], &a->ask, out);
	}
	return out->state != AJ_PLACE_FITS;
}

/* "/subscriptions/S/resourceGroups/R/.../NAME" into its parts (bounded). 0 / -1. */
static int arm_id_parts(const char *id, char sub[128], char rg[128], char name[128])
{
	const char *s, *g, *n;

	if (strncasecmp(id, "/subscriptions/", 15))
		return -1;
	s = id + 15;
	g = strchr(s, '/');
	if (!g || strncasecmp(g, "/resourceGroups/", 16) || !(n = strrchr(id, '/')) || !n[1])
		return -1;
	snprintf(sub, 128, "%.*s", (int)(g - s), s);
	snprintf(rg, 128, "%.*s", (int)strcspn(g + 16, "/"), g + 16);
	snprintf(name, 128, "%s", n + 1);
	return 0;
}

/*
 * The VC the forwarder would choose for the job among those ns may use:
 * 1 with *c (its vc pointing into az->vcs, no why), 0 when none has the
 * quota (problems say why), -1 (OOM).
 */
static int vc_choose(const struct aj_views_azure *az, const struct aj_views_ask *a, const char *ns,
		     struct aj_vc_candidate *c, struct aj_errors *problems)
{
	struct aj_vc_request req;
	struct aj_vc_choice choice;
	struct aj_vc *mine;
	size_t *at;
	char sub[128], rg[128], name[128];
	size_t i, n = 0;
	int rc = 0;

	mine = aj_calloc(az->vcs_nr + 1, sizeof(*mine));
	at = aj_calloc(az->vcs_nr + 1, sizeof(*at));
	if (!mine || !at) {
		aj_free(mine);
		aj_free(at);
		return -1;
	}
	/* the namespace's VCs, borrowed as they are (the choice only reads them) */
	for (i = 0; i < az->vcs_nr; i++)
		if (!az->vc_allowed || az->vc_allowed(az->vc_allowed_ctx, ns, &az->vcs[i])) {
			at[n] = i;
			mine[n++] = az->vcs[i];
		}
	memset(&req, 0, sizeof(req));
	req.nodes = a->instances > 100000 ? 100000 : (int)a->instances;
	req.tier = a->tier;
	req.instance_types = a->instance_types;
	req.instance_types_nr = a->instance_types_nr;
	if (a->vc && !arm_id_parts(a->vc, sub, rg, name)) {
		req.subscription = sub;
		req.resource_group = rg;
		req.vc = name;
	} else {
		req.subscription = a->vc_subscription;
		req.resource_group = a->vc_resource_group;
		req.vc = a->vc_name;
		/* a VC named alone is in the workspace's subscription and resource group */
		if (a->vc_name && *a->vc_name && !arm_id_parts(az->workspace, sub, rg, name)) {
			req.subscription = a->vc_subscription && *a->vc_subscription ? a->vc_subscription : sub;
			req.resource_group = a->vc_resource_group && *a->vc_resource_group ?
					     a->vc_resource_group : rg;
		}
	}
	if (!aj_vc_select(&req, mine, n, &choice, problems)) {
		*c = choice.chosen;
		c->vc = &az->vcs[at[choice.chosen.vc - mine]];
		c->why = NULL;
		rc = 1;
	} else if (problems->oom) {
		rc = -1;
	}
	aj_vc_choice_release(&choice);
	aj_free(mine);
	aj_free(at);
	return rc;
}

/* A VC among those ns may use with quota for the job. 0 / -1 (OOM). */
static int fit_vc(const struct aj_views_azure *az, const struct aj_views_ask *a, const char *ns,
		  struct aj_fit_result *out)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	struct aj_vc_candidate c;
	char since[64];
	int r;

	if (az->vcs_why[0]) {
		unknown(out, "virtual clusters", az->vcs_why);
		return 0;
	}
	r = vc_choose(az, a, ns, &c, &problems);
	if (r > 0) {
		out->state = AJ_PLACE_FITS;
		snprintf(out->reason, sizeof(out->reason),
			 "virtual cluster %s/%s/%s: %s quota for %ld x %s (%ld units), %ld left%s",
			 c.vc->subscription, c.vc->resource_group, c.vc->name, aj_tier_name(c.tier),
			 a->instances > 100000 ? 100000 : a->instances, c.instance_type, c.units,
			 c.remaining,
			 aj_fit_since(az->vcs_charged ? az->vcs_charged[c.vc - az->vcs] : 0, since,
				      sizeof(since)));
	} else if (!r) {
		/* the selection's words without the template key it would blame */
		out->state = AJ_PLACE_FULL;
		snprintf(out->reason, sizeof(out->reason), "%s",
			 problems.nr ? problems.items[0].message : "no virtual cluster");
	}
	aj_errors_release(&problems);
	return r < 0 ? -1 : 0;
}

/*
 * The compute the job names, in the workspace read: its index, or
 * az->computes_nr with why not into out (UNKNOWN).
 */
static size_t find_compute(const struct aj_views_azure *az, const struct aj_views_ask *a,
			   struct aj_fit_result *out)
{
	const char *name = a->compute, *ws;
	size_t i, len;

	out->state = AJ_PLACE_UNKNOWN;
	if (az->computes_why[0]) {
		unknown(out, "Azure ML computes", az->computes_why);
		return az->computes_nr;
	}
	ws = strrchr(az->workspace, '/') ? strrchr(az->workspace, '/') + 1 : az->workspace;
	if (!name) {
		snprintf(out->reason, sizeof(out->reason), "the job names no compute");
		return az->computes_nr;
	}
	if (strchr(name, '/')) {
		/* an ARM id: in the workspace read, or not judged */
		len = strlen(az->workspace);
		if (strncasecmp(name, az->workspace, len) || strncasecmp(name + len, "/computes/", 10)) {
			snprintf(out->reason, sizeof(out->reason),
				 "compute %s is not in workspace %s, whose computes are read", name, ws);
			return az->computes_nr;
		}
		name += len + 10;
	}
	for (i = 0; i < az->computes_nr; i++)
		if (!strcmp(az->computes[i].name, name))
			return i;
	snprintf(out->reason, sizeof(out->reason), "compute %s not found in workspace %s", name, ws);
	return i;
}

/* The compute's free nodes, or a VC's quota. 0 / -1 (OOM). */
static int fit_azure(const struct aj_views_azure *az, const struct aj_views_ask *a, const char *ns,
		     struct aj_fit_result *out)
{
	size_t i;

	out->state = AJ_PLACE_UNKNOWN;
	if (!az->read) {
		snprintf(out->reason, sizeof(out->reason), "no Azure capacity is read for placement");
		return 0;
	}
	if (a->supercomputer)
		return fit_vc(az, a, ns, out);
	if ((i = find_compute(az, a, out)) < az->computes_nr)
		aj_fit_compute(&az->computes[i], a->instances, out);
	return 0;
}

int aj_views_fit(const struct aj_views *v, const struct aj_views_ask *a, const char *ns,
		 struct aj_fit_result *out)
{
	struct aj_fit_result g, n;

	if (a->azure)
		return fit_azure(&v->azure, a, ns, out);

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

/* --- the charge --- */

/* The chosen VC's quota used by the job's units. 0 / -1 (OOM). */
static int charge_vc(struct aj_views_azure *az, const struct aj_views_ask *a, const char *ns)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	struct aj_vc_candidate c;
	struct aj_vc *vc;
	size_t i;
	int r = vc_choose(az, a, ns, &c, &problems);

	aj_errors_release(&problems);
	if (r <= 0)
		return r;
	vc = &az->vcs[c.vc - az->vcs];
	for (i = 0; i < vc->quotas_nr; i++)
		if (!strcmp(vc->quotas[i].series, c.series)) {
			vc->quotas[i].used[c.tier] += c.units;
			vc->quotas[i].user_used += c.units;
		}
	az->vcs_charged[vc - az->vcs]++;
	return 0;
}

int aj_views_charge(struct aj_views *v, const struct aj_views_ask *a, const char *ns)
{
	struct aj_fit_result out;
	const char *cq_name;
	size_t i;

	if (aj_views_fit(v, a, ns, &out))
		return -1;
	if (out.state != AJ_PLACE_FITS)
		return 0;
	if (a->azure && a->supercomputer)
		return charge_vc(&v->azure, a, ns);
	if (a->azure) {
		if ((i = find_compute(&v->azure, a, &out)) < v->azure.computes_nr)
			aj_fit_compute_charge(&v->azure.computes[i], a->instances);
		return 0;
	}
	if (a->volcano_queue && (i = find_queue(v, a->volcano_queue)) < v->queues_nr)
		aj_fit_queue_charge(&v->queues[i], &a->ask);
	else if (a->local_queue && (i = find_cq(v, ns, a->local_queue, &cq_name)) < v->cqs_nr)
		aj_fit_cluster_queue_charge(&v->cqs[i], &a->ask);
	return aj_fit_nodes_charge(v->nodes, v->nodes_nr, &a->ask);
}
