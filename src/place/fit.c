#include "fit.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

#define QTY_MAX (1LL << 62)

static const char *const res_names[AJ_FIT_RES_NR] = { "cpu", "memory", "nvidia.com/gpu", "pods" };

/* The order resources are told in: the scarce one first. */
static const enum aj_fit_res told[AJ_FIT_RES_NR] = { AJ_FIT_GPU, AJ_FIT_CPU, AJ_FIT_MEMORY,
						     AJ_FIT_PODS };

const char *aj_fit_res_name(enum aj_fit_res r)
{
	return (unsigned)r < AJ_FIT_RES_NR ? res_names[r] : "?";
}

int aj_fit_res_of(const char *name)
{
	int r;

	for (r = 0; r < AJ_FIT_RES_NR; r++)
		if (name && !strcmp(name, res_names[r]))
			return r;
	return -1;
}

void aj_fit_res_unset(struct aj_fit_res_v *r)
{
	int i;

	for (i = 0; i < AJ_FIT_RES_NR; i++)
		r->v[i] = -1;
}

/* a * b, or -1 past QTY_MAX */
static long long mul_capped(long long a, long long b)
{
	long long p;

	if (__builtin_mul_overflow(a, b, &p) || p > QTY_MAX)
		return -1;
	return p;
}

static int suffix(const char *s, int *exp10, long long *bin)
{
	static const struct { const char *s; int exp10; long long bin; } units[] = {
		{ "", 0, 1 },          { "m", -3, 1 },        { "k", 3, 1 },
		{ "M", 6, 1 },         { "G", 9, 1 },         { "T", 12, 1 },
		{ "P", 15, 1 },        { "E", 18, 1 },        { "Ki", 0, 1LL << 10 },
		{ "Mi", 0, 1LL << 20 }, { "Gi", 0, 1LL << 30 }, { "Ti", 0, 1LL << 40 },
		{ "Pi", 0, 1LL << 50 }, { "Ei", 0, 1LL << 60 },
	};
	size_t i;

	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(s, units[i].s)) {
			*exp10 = units[i].exp10;
			*bin = units[i].bin;
			return 0;
		}
	/* exponent form: e3, E-2 */
	if ((*s == 'e' || *s == 'E') && s[1]) {
		int sign = 1, e = 0;

		s++;
		if (*s == '-' || *s == '+')
			sign = *s++ == '-' ? -1 : 1;
		if (!*s)
			return -1;
		for (; *s; s++) {
			if (*s < '0' || *s > '9' || e > 100)
				return -1;
			e = e * 10 + (*s - '0');
		}
		*exp10 = sign * e;
		*bin = 1;
		return 0;
	}
	return -1;
}

int aj_fit_quantity(enum aj_fit_res r, const char *text, long long *out)
{
	long long num = 0, div = 1;
	int digits = 0, exp10;
	long long bin;
	const char *s = text;

	if (!s || (unsigned)r >= AJ_FIT_RES_NR)
		return -1;
	if (*s == '+')
		s++;
	for (; *s >= '0' && *s <= '9'; s++, digits++)
		if ((num = mul_capped(num, 10)) < 0 || (num += *s - '0') > QTY_MAX)
			return -1;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++, digits++) {
			/* past 18 decimals nothing a request holds changes */
			if (div >= 1000000000000000000LL)
				continue;
			if ((num = mul_capped(num, 10)) < 0 || (num += *s - '0') > QTY_MAX)
				return -1;
			div *= 10;
		}
	if (!digits || suffix(s, &exp10, &bin))
		return -1;
	if (r == AJ_FIT_CPU)
		exp10 += 3;
	if ((num = mul_capped(num, bin)) < 0)
		return -1;
	for (; exp10 > 0; exp10--)
		if ((num = mul_capped(num, 10)) < 0)
			return -1;
	for (; exp10 < 0; exp10++) {
		if (div > QTY_MAX / 10)
			return -1;
		div *= 10;
	}
	*out = num / div + (num % div != 0);
	return 0;
}

/* v in r's unit as a person reads it: "500m", "16", "64Gi" */
static void fmt_qty(enum aj_fit_res r, long long v, char *out, size_t size)
{
	static const char *const bin[] = { "Ei", "Pi", "Ti", "Gi", "Mi", "Ki" };
	size_t i;

	if (r == AJ_FIT_CPU) {
		if (v % 1000)
			snprintf(out, size, "%lldm", v);
		else
			snprintf(out, size, "%lld", v / 1000);
		return;
	}
	if (r == AJ_FIT_MEMORY && v > 0)
		for (i = 0; i < sizeof(bin) / sizeof(bin[0]); i++) {
			long long unit = 1LL << (10 * (6 - i));

			if (v % unit == 0) {
				snprintf(out, size, "%lld%s", v / unit, bin[i]);
				return;
			}
		}
	snprintf(out, size, "%lld", v);
}

/* one pod's ask of r: pods take one slot each whatever the template says */
static long long pod_req(const struct aj_fit_task *t, enum aj_fit_res r)
{
	if (r == AJ_FIT_PODS)
		return 1;
	return t->req.v[r] > 0 ? t->req.v[r] : 0;
}

long long aj_fit_ask_total(const struct aj_fit_ask *ask, enum aj_fit_res r)
{
	long long total = 0, p;
	size_t i;

	for (i = 0; i < ask->tasks_nr; i++) {
		if (ask->tasks[i].pods <= 0)
			continue;
		p = mul_capped(pod_req(&ask->tasks[i], r), ask->tasks[i].pods);
		if (p < 0 || (total += p) > QTY_MAX)
			return QTY_MAX;
	}
	return total;
}

static void say(struct aj_fit_result *out, enum aj_place_state state, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(struct aj_fit_result *out, enum aj_place_state state, const char *fmt, ...)
{
	va_list ap;

	out->state = state;
	va_start(ap, fmt);
	vsnprintf(out->reason, sizeof(out->reason), fmt, ap);
	va_end(ap);
}

const char *aj_fit_since(int charged, char *buf, size_t size)
{
	buf[0] = '\0';
	if (charged > 0)
		snprintf(buf, size, " after %d placement%s since the last read", charged,
			 charged == 1 ? "" : "s");
	return buf;
}

/* the first resource, in told order, the job asks of a queue (pods left aside) */
static int primary(const struct aj_fit_ask *ask)
{
	int i;

	for (i = 0; i < AJ_FIT_RES_NR; i++)
		if (told[i] != AJ_FIT_PODS && aj_fit_ask_total(ask, told[i]) > 0)
			return told[i];
	return AJ_FIT_CPU;
}

void aj_fit_queue(const struct aj_fit_queue *q, const struct aj_fit_ask *ask,
		  struct aj_fit_result *out)
{
	char a[32], b[32], c[32], since[64];
	long long total, alloc;
	int i, r, p;

	if (q->state && strcmp(q->state, "Open")) {
		say(out, AJ_PLACE_FULL, "queue %s is %s", q->name, q->state);
		return;
	}
	for (i = 0; i < AJ_FIT_RES_NR; i++) {
		r = told[i];
		total = aj_fit_ask_total(ask, r);
		if (!total || q->capability.v[r] < 0)
			continue;
		alloc = q->allocated.v[r] > 0 ? q->allocated.v[r] : 0;
		if (alloc + total > q->capability.v[r]) {
			fmt_qty(r, q->capability.v[r], a, sizeof(a));
			fmt_qty(r, alloc, b, sizeof(b));
			fmt_qty(r, total, c, sizeof(c));
			say(out, AJ_PLACE_FULL, "queue %s: capability %s %s, allocated %s%s, the job asks %s",
			    q->name, res_names[r], a, b, aj_fit_since(q->charged, since, sizeof(since)), c);
			return;
		}
	}
	p = primary(ask);
	if (q->capability.v[p] < 0) {
		say(out, AJ_PLACE_FITS, "queue %s: open, no capability on %s", q->name, res_names[p]);
		return;
	}
	alloc = q->allocated.v[p] > 0 ? q->allocated.v[p] : 0;
	fmt_qty(p, q->capability.v[p] - alloc, a, sizeof(a));
	fmt_qty(p, q->capability.v[p], b, sizeof(b));
	say(out, AJ_PLACE_FITS, "queue %s: %s of %s %s free%s", q->name, a, b, res_names[p],
	    aj_fit_since(q->charged, since, sizeof(since)));
}

void aj_fit_queue_charge(struct aj_fit_queue *q, const struct aj_fit_ask *ask)
{
	long long total;
	int r;

	for (r = 0; r < AJ_FIT_RES_NR; r++) {
		total = aj_fit_ask_total(ask, r);
		if (total)
			q->allocated.v[r] = (q->allocated.v[r] > 0 ? q->allocated.v[r] : 0) + total;
	}
	q->charged++;
}

static const char *label_get(const struct aj_fit_label *l, size_t nr, const char *key)
{
	size_t i;

	for (i = 0; i < nr; i++)
		if (l[i].key && !strcmp(l[i].key, key))
			return l[i].value ? l[i].value : "";
	return NULL;
}

/* Kueue's rule: a flavor's node labels must not contradict the pods' selector */
static int flavor_allowed(const struct aj_fit_flavor *f, const struct aj_fit_ask *ask)
{
	const char *want;
	size_t i;

	for (i = 0; i < f->node_labels_nr; i++) {
		want = label_get(ask->selector, ask->selector_nr, f->node_labels[i].key);
		if (want && strcmp(want, f->node_labels[i].value ? f->node_labels[i].value : ""))
			return 0;
	}
	return 1;
}

/* what the flavor can still give of r beyond what is reserved; -1: it does not cover r */
static long long flavor_free(const struct aj_fit_flavor *f, int r)
{
	long long lim;

	if (f->nominal.v[r] < 0)
		return -1;
	lim = f->nominal.v[r] + (f->borrow.v[r] > 0 ? f->borrow.v[r] : 0);
	lim -= f->reserved.v[r] > 0 ? f->reserved.v[r] : 0;
	return lim > 0 ? lim : 0;
}

static int flavor_holds(const struct aj_fit_flavor *f, const struct aj_fit_ask *ask)
{
	long long total;
	int r;

	for (r = 0; r < AJ_FIT_RES_NR; r++) {
		total = aj_fit_ask_total(ask, r);
		/* pods are a quota only where a flavor names them */
		if (!total || (r == AJ_FIT_PODS && f->nominal.v[r] < 0))
			continue;
		if (flavor_free(f, r) < total)
			return 0;
	}
	return 1;
}

/* over the allowed flavors: free and total of r (total -1: none covers r) */
static void cq_sum(const struct aj_fit_cluster_queue *cq, const struct aj_fit_ask *ask, int r,
		   long long *free, long long *total)
{
	size_t i;

	*free = 0;
	*total = -1;
	for (i = 0; i < cq->flavors_nr; i++) {
		const struct aj_fit_flavor *f = &cq->flavors[i];

		if (!flavor_allowed(f, ask) || f->nominal.v[r] < 0)
			continue;
		*free += flavor_free(f, r);
		*total = (*total < 0 ? 0 : *total) + f->nominal.v[r] +
			 (f->borrow.v[r] > 0 ? f->borrow.v[r] : 0);
	}
}

/* the flavor Kueue would assign: the first allowed one that holds the job; cq->flavors_nr: none */
static size_t cq_flavor(const struct aj_fit_cluster_queue *cq, const struct aj_fit_ask *ask)
{
	size_t i;

	for (i = 0; i < cq->flavors_nr; i++)
		if (flavor_allowed(&cq->flavors[i], ask) && flavor_holds(&cq->flavors[i], ask))
			break;
	return i;
}

void aj_fit_cluster_queue(const struct aj_fit_cluster_queue *cq, const struct aj_fit_ask *ask,
			  struct aj_fit_result *out)
{
	char a[32], b[32], c[32], since[64];
	long long free, total, want;
	size_t i, allowed = 0;
	int k, r;

	if (!cq->active) {
		say(out, AJ_PLACE_FULL, "ClusterQueue %s is not active%s%s", cq->name,
		    cq->inactive_why ? ": " : "", cq->inactive_why ? cq->inactive_why : "");
		return;
	}
	aj_fit_since(cq->charged, since, sizeof(since));
	if ((i = cq_flavor(cq, ask)) < cq->flavors_nr) {
		r = primary(ask);
		cq_sum(cq, ask, r, &free, &total);
		fmt_qty(r, free, a, sizeof(a));
		fmt_qty(r, total, b, sizeof(b));
		say(out, AJ_PLACE_FITS, "ClusterQueue %s: %s of %s %s free%s (flavor %s)", cq->name, a,
		    b, res_names[r], since, cq->flavors[i].name);
		return;
	}
	for (i = 0; i < cq->flavors_nr; i++)
		allowed += (size_t)flavor_allowed(&cq->flavors[i], ask);
	if (!allowed) {
		say(out, AJ_PLACE_FULL, "ClusterQueue %s: no flavor allows the job's node selector",
		    cq->name);
		return;
	}
	/* the first resource no allowed flavor has enough of, else they hold it only apart */
	for (k = 0; k < AJ_FIT_RES_NR; k++) {
		r = told[k];
		want = aj_fit_ask_total(ask, r);
		if (!want || r == AJ_FIT_PODS)
			continue;
		for (i = 0; i < cq->flavors_nr; i++)
			if (flavor_allowed(&cq->flavors[i], ask) &&
			    flavor_free(&cq->flavors[i], r) >= want)
				break;
		if (i < cq->flavors_nr)
			continue;
		cq_sum(cq, ask, r, &free, &total);
		if (total < 0) {
			say(out, AJ_PLACE_FULL, "ClusterQueue %s: no flavor covers %s", cq->name,
			    res_names[r]);
			return;
		}
		fmt_qty(r, free, a, sizeof(a));
		fmt_qty(r, total, b, sizeof(b));
		fmt_qty(r, want, c, sizeof(c));
		say(out, AJ_PLACE_FULL, "ClusterQueue %s: %s of %s %s free%s, the job asks %s",
		    cq->name, a, b, res_names[r], since, c);
		return;
	}
	say(out, AJ_PLACE_FULL, "ClusterQueue %s: no one flavor has room for all the job asks%s",
	    cq->name, since);
}

void aj_fit_cluster_queue_charge(struct aj_fit_cluster_queue *cq, const struct aj_fit_ask *ask)
{
	size_t i = cq_flavor(cq, ask);
	struct aj_fit_flavor *f;
	long long total;
	int r;

	if (!cq->active || i == cq->flavors_nr)
		return;
	f = &cq->flavors[i];
	for (r = 0; r < AJ_FIT_RES_NR; r++) {
		total = aj_fit_ask_total(ask, r);
		if (total && f->nominal.v[r] >= 0)
			f->reserved.v[r] = (f->reserved.v[r] > 0 ? f->reserved.v[r] : 0) + total;
	}
	cq->charged++;
}

/* --- nodes --- */

static int selected(const struct aj_fit_node *n, const struct aj_fit_ask *ask)
{
	const char *have;
	size_t i;

	for (i = 0; i < ask->selector_nr; i++) {
		have = label_get(n->labels, n->labels_nr, ask->selector[i].key);
		if (!have || strcmp(have, ask->selector[i].value ? ask->selector[i].value : ""))
			return 0;
	}
	return 1;
}

static int empty(const char *s)
{
	return !s || !*s;
}

static int tolerated(const struct aj_fit_taint *t, const struct aj_fit_ask *ask)
{
	const struct aj_fit_toleration *o;
	size_t i;

	/* PreferNoSchedule only steers */
	if (t->effect && !strcmp(t->effect, "PreferNoSchedule"))
		return 1;
	for (i = 0; i < ask->tolerations_nr; i++) {
		o = &ask->tolerations[i];
		if (!empty(o->effect) && (!t->effect || strcmp(o->effect, t->effect)))
			continue;
		if (empty(o->key)) {
			if (o->exists)
				return 1;
			continue;
		}
		if (!t->key || strcmp(o->key, t->key))
			continue;
		if (o->exists || !strcmp(o->value ? o->value : "", t->value ? t->value : ""))
			return 1;
	}
	return 0;
}

/* the first taint of n the job does not tolerate, or NULL */
static const struct aj_fit_taint *untolerated(const struct aj_fit_node *n,
					      const struct aj_fit_ask *ask)
{
	size_t i;

	for (i = 0; i < n->taints_nr; i++)
		if (!tolerated(&n->taints[i], ask))
			return &n->taints[i];
	return NULL;
}

/* may the job's pods go on n: schedulable, selected, its taints tolerated */
static int usable(const struct aj_fit_node *n, const struct aj_fit_ask *ask)
{
	return !n->unschedulable && selected(n, ask) && !untolerated(n, ask);
}

/* Why no node is eligible: the first selector label no schedulable node has, ... */
static void why_none(const struct aj_fit_node *nodes, size_t nr, const struct aj_fit_ask *ask,
		     struct aj_fit_result *out)
{
	const struct aj_fit_taint *t = NULL;
	const char *have;
	size_t i, k;

	for (k = 0; k < ask->selector_nr; k++) {
		for (i = 0; i < nr; i++) {
			have = label_get(nodes[i].labels, nodes[i].labels_nr, ask->selector[k].key);
			if (!nodes[i].unschedulable && have &&
			    !strcmp(have, ask->selector[k].value ? ask->selector[k].value : ""))
				break;
		}
		if (i == nr) {
			say(out, AJ_PLACE_FULL, "no schedulable node has %s=%s", ask->selector[k].key,
			    ask->selector[k].value ? ask->selector[k].value : "");
			return;
		}
	}
	for (i = 0; i < nr && !t; i++)
		if (!nodes[i].unschedulable && selected(&nodes[i], ask))
			t = untolerated(&nodes[i], ask);
	if (t) {
		say(out, AJ_PLACE_FULL, "no schedulable node%s tolerated: %s has %s%s%s:%s",
		    ask->selector_nr ? " the job selects is" : " is", nodes[i - 1].name, t->key,
		    t->value ? "=" : "", t->value ? t->value : "", t->effect ? t->effect : "");
		return;
	}
	say(out, AJ_PLACE_FULL, "no schedulable node%s",
	    ask->selector_nr ? " has all the labels the job selects" : "");
}

/* bigger pods first: GPUs, then CPU, then memory; then the job's order */
static int by_size(const void *pa, const void *pb)
{
	const struct aj_fit_task *a = *(const struct aj_fit_task *const *)pa;
	const struct aj_fit_task *b = *(const struct aj_fit_task *const *)pb;
	int i;

	for (i = 0; i < 3; i++) {
		long long x = pod_req(a, told[i]), y = pod_req(b, told[i]);

		if (x != y)
			return x < y ? 1 : -1;
	}
	return (a > b) - (a < b);
}

/* how many pods of t fit in free (-1 in free: not offered) */
static long long room(const long long *free, const struct aj_fit_task *t)
{
	long long best = -1, n, req;
	int r;

	for (r = 0; r < AJ_FIT_RES_NR; r++) {
		req = pod_req(t, r);
		if (!req || (r == AJ_FIT_PODS && free[r] < 0))
			continue;
		n = free[r] < 0 ? 0 : free[r] / req;
		if (best < 0 || n < best)
			best = n;
	}
	return best < 0 ? QTY_MAX : best;
}

static void describe_pod(const struct aj_fit_task *t, char *out, size_t size)
{
	size_t len = 0;
	char q[32];
	int i;

	out[0] = '\0';
	for (i = 0; i < 3 && len < size; i++) {
		if (!pod_req(t, told[i]))
			continue;
		fmt_qty(told[i], pod_req(t, told[i]), q, sizeof(q));
		len += (size_t)snprintf(out + len, size - len, "%s%s %s", len ? ", " : "", q,
					res_names[told[i]]);
	}
	if (!out[0])
		snprintf(out, size, "no requests");
}

/* The first-fit decreasing packing of a job's pods: the eligible nodes' room left, where pods went. */
struct packing {
	long long (*free)[AJ_FIT_RES_NR];   /* per eligible node, what the packing left */
	size_t *eligible;                    /* their indexes among the nodes */
	size_t ne;
	unsigned char *taken;                /* per eligible node: pods of the job went there */
};

static void packing_release(struct packing *pk)
{
	aj_free(pk->eligible);
	aj_free(pk->free);
	aj_free(pk->taken);
}

/* " (room on 2 taken since the last read)" when placements were charged to eligible nodes */
static const char *nodes_since(const struct aj_fit_node *nodes, const struct packing *pk,
			       char *buf, size_t size)
{
	size_t i, hit = 0;

	for (i = 0; i < pk->ne; i++)
		hit += nodes[pk->eligible[i]].charged > 0;
	buf[0] = '\0';
	if (hit)
		snprintf(buf, size, " (room on %zu taken since the last read)", hit);
	return buf;
}

/* Pack the job's pods onto the nodes into pk (packing_release) and say how it went. 0 / -1 (OOM). */
static int pack(const struct aj_fit_node *nodes, size_t nodes_nr, const struct aj_fit_ask *ask,
		struct packing *pk, struct aj_fit_result *out)
{
	const struct aj_fit_task **order = NULL;
	long long placed, k;
	long long pods = aj_fit_ask_total(ask, AJ_FIT_PODS);
	size_t used = 0, i, j, ne = 0;
	char what[96], since[80];
	int r, rc = -1;

	memset(pk, 0, sizeof(*pk));
	if (!pods) {
		say(out, AJ_PLACE_FITS, "no pods to place");
		return 0;
	}
	pk->eligible = aj_calloc(nodes_nr ? nodes_nr : 1, sizeof(*pk->eligible));
	pk->free = aj_calloc(nodes_nr ? nodes_nr : 1, sizeof(*pk->free));
	pk->taken = aj_calloc(nodes_nr ? nodes_nr : 1, 1);
	order = aj_calloc(ask->tasks_nr ? ask->tasks_nr : 1, sizeof(*order));
	if (!pk->eligible || !pk->free || !pk->taken || !order)
		goto out;
	for (i = 0; i < nodes_nr; i++)
		if (usable(&nodes[i], ask)) {
			for (r = 0; r < AJ_FIT_RES_NR; r++)
				pk->free[ne][r] = nodes[i].free.v[r];
			pk->eligible[ne++] = i;
		}
	pk->ne = ne;
	rc = 0;
	if (!ne) {
		why_none(nodes, nodes_nr, ask, out);
		goto out;
	}
	nodes_since(nodes, pk, since, sizeof(since));
	for (i = 0; i < ask->tasks_nr; i++)
		order[i] = &ask->tasks[i];
	qsort(order, ask->tasks_nr, sizeof(*order), by_size);
	for (i = 0; i < ask->tasks_nr; i++) {
		const struct aj_fit_task *t = order[i];

		placed = 0;
		for (j = 0; j < ne && placed < t->pods; j++) {
			if (ask->one_per_node && pk->taken[j])
				continue;
			k = room(pk->free[j], t);
			if (ask->one_per_node && k > 1)
				k = 1;
			if (k > t->pods - placed)
				k = t->pods - placed;
			if (k <= 0)
				continue;
			for (r = 0; r < AJ_FIT_RES_NR; r++)
				if (pk->free[j][r] > 0)
					pk->free[j][r] -= k * pod_req(t, r);
			if (!pk->taken[j]) {
				pk->taken[j] = 1;
				used++;
			}
			placed += k;
		}
		if (t->pods > 0 && placed < t->pods) {
			describe_pod(t, what, sizeof(what));
			say(out, AJ_PLACE_FULL,
			    "%zu matching node%s have room for %lld of the %ld pods of task %s (%s each%s)%s",
			    ne, ne == 1 ? "" : "s", placed, t->pods, t->name ? t->name : "main", what,
			    ask->one_per_node ? ", one per node" : "", since);
			goto out;
		}
	}
	say(out, AJ_PLACE_FITS, "%s%lld pod%s fit%s on %zu of %zu matching nodes%s",
	    pods > 1 ? "all " : "", pods, pods > 1 ? "s" : "", pods > 1 ? "" : "s", used, ne, since);
out:
	aj_free(order);
	return rc;
}

int aj_fit_nodes(const struct aj_fit_node *nodes, size_t nodes_nr, const struct aj_fit_ask *ask,
		 struct aj_fit_result *out)
{
	struct packing pk;
	int rc = pack(nodes, nodes_nr, ask, &pk, out);

	packing_release(&pk);
	return rc;
}

int aj_fit_nodes_charge(struct aj_fit_node *nodes, size_t nodes_nr, const struct aj_fit_ask *ask)
{
	struct aj_fit_result out;
	struct packing pk;
	size_t j;
	int r, rc = pack(nodes, nodes_nr, ask, &pk, &out);

	/* the judge's packing, kept: the next job packs around these pods */
	for (j = 0; !rc && out.state == AJ_PLACE_FITS && j < pk.ne; j++) {
		struct aj_fit_node *n = &nodes[pk.eligible[j]];

		if (!pk.taken[j])
			continue;
		for (r = 0; r < AJ_FIT_RES_NR; r++)
			n->free.v[r] = pk.free[j][r];
		n->charged++;
	}
	packing_release(&pk);
	return rc;
}

/* " (3 running, 1 unusable)": what the nodes that are not free do */
static void busy_nodes(const struct aj_fit_compute *c, char *out, size_t size)
{
	const long n[] = { c->running, c->preparing, c->unusable, c->leaving, c->preempted };
	static const char *const what[] = { "running", "preparing", "unusable", "leaving",
					    "preempted" };
	size_t i, len = 0;
	int w;

	out[0] = '\0';
	for (i = 0; i < sizeof(n) / sizeof(n[0]); i++) {
		if (n[i] <= 0 || len >= size)
			continue;
		w = snprintf(out + len, size - len, "%s%ld %s", len ? ", " : " (", n[i], what[i]);
		len = w < 0 ? size : len + (size_t)w;
	}
	if (len && len + 1 < size)
		snprintf(out + len, size - len, ")");
}

void aj_fit_compute(const struct aj_fit_compute *c, long instances, struct aj_fit_result *out)
{
	char busy_text[96], since[64];
	long busy, free_nodes;

	if (!c->type || strcmp(c->type, "AmlCompute")) {
		out->state = AJ_PLACE_UNKNOWN;
		snprintf(out->reason, sizeof(out->reason),
			 "compute %s is %s %s: only an AmlCompute's free nodes are read", c->name,
			 c->type ? "a" : "of no", c->type ? c->type : "type");
		return;
	}
	if (c->state && strcmp(c->state, "Succeeded")) {
		out->state = AJ_PLACE_FULL;
		snprintf(out->reason, sizeof(out->reason), "compute %s is %s", c->name, c->state);
		return;
	}
	/* allocated nodes doing something; an idle one takes a job at once */
	busy = c->current > c->idle ? c->current - c->idle : 0;
	free_nodes = c->max > busy ? c->max - busy : 0;
	if (instances < 1)
		instances = 1;
	aj_fit_since(c->charged, since, sizeof(since));
	if (free_nodes >= instances) {
		say(out, AJ_PLACE_FITS, "compute %s: %ld of %ld nodes free%s", c->name, free_nodes,
		    c->max, since);
		return;
	}
	busy_nodes(c, busy_text, sizeof(busy_text));
	say(out, AJ_PLACE_FULL, "compute %s: %ld of %ld nodes free%s%s, the job needs %ld", c->name,
	    free_nodes, c->max, busy_text, since, instances);
}

void aj_fit_compute_charge(struct aj_fit_compute *c, long instances)
{
	long from_idle;

	if (instances < 1)
		instances = 1;
	/* idle nodes take the job first, then nodes not yet allocated */
	from_idle = c->idle > 0 ? (c->idle < instances ? c->idle : instances) : 0;
	c->idle -= from_idle;
	c->current += instances - from_idle;
	c->running += instances;
	c->charged++;
}

/* --- could it ever fit (the nodes empty) --- */

/*
 * What the usable nodes hold of r when empty; -1 when it is not limited
 * (pod slots a node does not state). One pod per node: a node holds one.
 */
static long long held(const struct aj_fit_node *nodes, size_t nr, const struct aj_fit_ask *ask,
		      int r)
{
	long long sum = 0, v;
	size_t i;

	for (i = 0; i < nr; i++) {
		if (!usable(&nodes[i], ask))
			continue;
		v = nodes[i].alloc.v[r];
		if (r == AJ_FIT_PODS && ask->one_per_node)
			v = v < 0 || v >= 1 ? 1 : 0;
		else if (r == AJ_FIT_PODS && v < 0)
			return -1;
		if (v > 0 && (sum += v) > QTY_MAX)
			sum = QTY_MAX;
	}
	return sum;
}

/* "asks 64 pods × 8 nvidia.com/gpu = 512" (or "asks 520 nvidia.com/gpu over 65 pods" when pods differ) */
static void asks(const struct aj_fit_ask *ask, int r, long long total, char *out, size_t size)
{
	long long per = -1, pods = 0;
	char a[32], b[32];
	size_t i;

	if (r == AJ_FIT_PODS) {
		snprintf(out, size, "asks %lld pods%s", total, ask->one_per_node ? ", one per node" : "");
		return;
	}
	for (i = 0; i < ask->tasks_nr; i++) {
		const struct aj_fit_task *t = &ask->tasks[i];

		if (t->pods <= 0 || !pod_req(t, r))
			continue;
		per = per < 0 || per == pod_req(t, r) ? pod_req(t, r) : 0;
		pods += t->pods;
	}
	fmt_qty(r, total, b, sizeof(b));
	if (per <= 0) {
		snprintf(out, size, "asks %s %s over %lld pods", b, res_names[r], pods);
		return;
	}
	fmt_qty(r, per, a, sizeof(a));
	snprintf(out, size, "asks %lld pod%s × %s %s = %s", pods, pods == 1 ? "" : "s", a,
		 res_names[r], b);
}

/* The scarcest resource's total beyond what the usable nodes hold: 1 said, 0 none is. */
static int over_total(const struct aj_fit_node *nodes, size_t nr, const struct aj_fit_ask *ask,
		      const char *which, struct aj_fit_result *out)
{
	long double worst = 0, ratio;
	long long want, have, w_want = 0, w_have = 0;
	char what[160], q[32];
	int k, r, w = -1;

	for (k = 0; k < AJ_FIT_RES_NR; k++) {
		r = told[k];
		want = aj_fit_ask_total(ask, r);
		have = held(nodes, nr, ask, r);
		if (!want || have < 0 || want <= have)
			continue;
		ratio = have ? (long double)want / (long double)have : (long double)QTY_MAX;
		if (w < 0 || ratio > worst) {
			w = r;
			worst = ratio;
			w_want = want;
			w_have = have;
		}
	}
	if (w < 0)
		return 0;
	asks(ask, w, w_want, what, sizeof(what));
	if (w == AJ_FIT_PODS && ask->one_per_node)
		say(out, AJ_PLACE_FULL, "%s; there are %lld schedulable nodes%s", what, w_have, which);
	else if (w == AJ_FIT_PODS)
		say(out, AJ_PLACE_FULL, "%s; the schedulable nodes%s hold %lld pod slots", what, which,
		    w_have);
	else {
		fmt_qty(w, w_have, q, sizeof(q));
		say(out, AJ_PLACE_FULL, "%s; the schedulable nodes%s hold %s", what, which, q);
	}
	return 1;
}

/* A pod bigger than the largest usable node: 1 said, 0 none is. */
static int too_big(const struct aj_fit_node *nodes, size_t nr, const struct aj_fit_ask *ask,
		   const char *which, struct aj_fit_result *out)
{
	long long most;
	char a[32], b[32];
	size_t i, j;
	int k, r;

	for (i = 0; i < ask->tasks_nr; i++) {
		const struct aj_fit_task *t = &ask->tasks[i];

		for (k = 0; k < AJ_FIT_RES_NR && t->pods > 0; k++) {
			r = told[k];
			if (r == AJ_FIT_PODS || !pod_req(t, r))
				continue;
			most = 0;
			for (j = 0; j < nr; j++)
				if (usable(&nodes[j], ask) && nodes[j].alloc.v[r] > most)
					most = nodes[j].alloc.v[r];
			if (pod_req(t, r) <= most)
				continue;
			fmt_qty(r, pod_req(t, r), a, sizeof(a));
			fmt_qty(r, most, b, sizeof(b));
			say(out, AJ_PLACE_FULL, "one pod%s%s asks %s %s; the largest schedulable node%s has %s",
			    ask->tasks_nr > 1 ? " of task " : "",
			    ask->tasks_nr > 1 ? (t->name ? t->name : "main") : "", a, res_names[r], which,
			    b);
			return 1;
		}
	}
	return 0;
}

int aj_fit_nodes_empty(const struct aj_fit_node *nodes, size_t nodes_nr,
		       const struct aj_fit_ask *ask, struct aj_fit_result *out)
{
	struct aj_fit_node *empty = aj_calloc(nodes_nr ? nodes_nr : 1, sizeof(*empty));
	struct aj_fit_result packed;
	size_t i, schedulable = 0, usable_nr = 0;
	const char *which;

	if (!empty)
		return -1;
	for (i = 0; i < nodes_nr; i++) {
		empty[i] = nodes[i];
		empty[i].free = nodes[i].alloc;
		empty[i].charged = 0;   /* empty: no placement took room */
		schedulable += !nodes[i].unschedulable;
		usable_nr += (size_t)usable(&nodes[i], ask);
	}
	if (aj_fit_nodes(empty, nodes_nr, ask, &packed)) {
		aj_free(empty);
		return -1;
	}
	aj_free(empty);
	/* a selector or taints that leave some out: say so */
	which = usable_nr < schedulable ? " it may use" : "";
	if (packed.state != AJ_PLACE_FULL || !usable_nr ||
	    (!over_total(nodes, nodes_nr, ask, which, out) &&
	     !too_big(nodes, nodes_nr, ask, which, out)))
		*out = packed;
	return 0;
}
