#include "controller.h"

#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "azure/credential.h"
#include "cache.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "health.h"
#include "identity.h"
#include "jobmetrics.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/ratelimit.h"
#include "kube/watch.h"
#include "lease.h"
#include "log.h"
#include "metrics.h"
#include "place/read/cluster.h"
#include "placer.h"
#include "podfail.h"
#include "reconcile.h"
#include "resources.h"
#include "runner/runner.h"
#include "workqueue.h"

/* the AjJobs, the AjTemplates, what each runner owns, and aj's pods */
#define AJ_WATCHES_MAX (3 + AJ_RUNNERS_MAX)

/* aj's pods, whatever their backend (backend.h): the pod watch's selector */
#define POD_SELECTOR "aj.dev/ajjob"

struct ctl;

/* One watch's identity, for its callback and for readiness. */
struct feed {
	struct ctl *ctl;
	enum aj_cache_kind kind;
	const struct aj_runner *runner;  /* of AJ_CACHE_OWNED feeds */
	/*
	 * aj's pods: nothing is cached, a failure is recorded (podfail.h); a
	 * courtesy, so neither readiness nor the workers wait for it
	 */
	int pods;
	const char *what;          /* "ajjobs.aj.dev" */
	struct aj_strmap listed;   /* keys seen so far in the list being read */
	atomic_int synced;
	char last_error[512];      /* why it has not listed yet (guarded by ctl->lock) */
	/* failures since the last good list or event, and when they began (ctl->lock) */
	unsigned failures;
	double failing_since;
};

struct ctl {
	const struct aj_controller_opts *o;
	atomic_int *stop;
	struct aj_cache cache;
	struct aj_workqueue queue;
	struct aj_metrics metrics;
	struct aj_health_server health;
	struct aj_reconciler rec;
	struct aj_placer placer;   /* the views placement AjJobs are ranked by */
	struct aj_podfail podfail; /* the pod watch's failures, by AjJob */
	struct feed feeds[AJ_WATCHES_MAX];
	size_t nr_feeds;
	char identity[256];
	atomic_int leader;
	atomic_int lost;
	struct aj_token_cache *identity_tokens;   /* the controller's Azure identity */
	pthread_mutex_t lock;      /* guards the feeds' last_error and missing */
	char missing[512];         /* write permissions we lack ("" when none) */
};

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void aj_controller_opts_defaults(struct aj_controller_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->workers = 2;
	o->qps = 20;
	o->burst = 40;
	o->health_addr = "0.0.0.0";
	o->health_port = 8081;
	o->lease_name = "aj-controller";
}

static void watch_log(void *ctx, void *watch_ctx, const char *message)
{
	struct ctl *c = ctx;
	struct feed *f = watch_ctx;

	aj_log(AJ_LOG_WARN, "watch failed; retrying", "error", message, AJ_LOG_END);
	pthread_mutex_lock(&c->lock);
	if (!f->failures++)
		f->failing_since = now_s();
	/* A 404 on a collection means the resource type is not served. */
	if (strstr(message, "(HTTP 404)"))
		snprintf(f->last_error, sizeof(f->last_error),
			 "the CRD %s is not installed (%s)", f->what, message);
	else
		snprintf(f->last_error, sizeof(f->last_error), "%s", message);
	pthread_mutex_unlock(&c->lock);
}

/* --- watches feed the cache and the queue --- */

/*
 * AjJob changes (new jobs, cancel requests) go first; changes of what they
 * own only need status mirrored, which waits while AjJobs wait for creates.
 */
static void enqueue(struct ctl *c, const char *key, int low)
{
	if (low ? aj_workqueue_add_low(&c->queue, key) : aj_workqueue_add(&c->queue, key))
		aj_log(AJ_LOG_ERROR, "out of memory queueing", "ajjob", key, AJ_LOG_END);
}

/* The key of the AjJob controlling obj ("" when none). */
static void owner_key(const cJSON *obj, char *out, size_t size)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata"), *ref;
	const cJSON *ns = cJSON_GetObjectItemCaseSensitive(meta, "namespace");

	out[0] = '\0';
	cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(meta, "ownerReferences")) {
		const cJSON *kind = cJSON_GetObjectItemCaseSensitive(ref, "kind");
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(ref, "name");

		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")) &&
		    cJSON_IsString(kind) && !strcmp(kind->valuestring, "AjJob") &&
		    cJSON_IsString(name) && cJSON_IsString(ns)) {
			snprintf(out, size, "%s/%s", ns->valuestring, name->valuestring);
			return;
		}
	}
}

/*
 * A pod event: a failure is recorded for its AjJob, which is queued (at the
 * low level, as changes of what it owns) when the failure is new.
 */
static void pod_seen(struct ctl *c, const cJSON *pod)
{
	struct aj_pod_failure f;
	int r;

	if (!aj_pod_failure_read(pod, &f))
		return;
	aj_podfail_owner(&c->cache, &f);
	/* the failed pods a finished job keeps (listed again at start) tell nothing new */
	if (aj_cache_ajjob_ended(&c->cache, f.ajjob))
		return;
	r = aj_podfail_put(&c->podfail, &f);
	if (r < 0) {
		aj_log(AJ_LOG_ERROR, "out of memory recording a pod failure", "ajjob", f.ajjob,
		       AJ_LOG_END);
	} else if (r) {
		char text[512];

		aj_pod_failure_format(&f, text, sizeof(text));
		aj_log(AJ_LOG_INFO, "pod failed", "ajjob", f.ajjob, "failure", text, "container",
		       f.container, AJ_LOG_END);
		enqueue(c, f.ajjob, 1);
	}
}

/* An AjJob that ended (or went: ajjob NULL) needs no failure recorded any more. */
static void forget_failure(struct ctl *c, const cJSON *ajjob, const char *key)
{
	enum aj_phase phase;

	if (!ajjob || (!aj_phase_parse(aj_json_str(aj_json_get(ajjob, "status"), "phase"), &phase) &&
		       aj_phase_terminal(phase)))
		aj_podfail_forget(&c->podfail, key);
}

/*
 * Add or replace one object (taken). The cache is updated before the AjJob
 * is queued, so the worker that picks it up sees this change.
 */
static void feed_put(struct feed *f, cJSON *obj)
{
	struct ctl *c = f->ctl;
	char key[320], owner[320];
	int r = 0;

	if (f->pods) {
		pod_seen(c, obj);
		cJSON_Delete(obj);
		return;
	}
	if (aj_cache_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return;
	}
	switch (f->kind) {
	case AJ_CACHE_AJJOBS:
		/* the waits placement ranks by: rebuilt as the list brings every AjJob, then kept */
		aj_placer_learn(&c->placer, obj);
		forget_failure(c, obj, key);
		r = aj_cache_ajjob_put(&c->cache, obj);
		enqueue(c, key, 0);
		break;
	case AJ_CACHE_TEMPLATES:
		r = aj_cache_template_put(&c->cache, obj);
		break;
	default: {
		struct aj_owned_facts facts;

		owner_key(obj, owner, sizeof(owner));
		memset(&facts, 0, sizeof(facts));
		f->runner->summarize(obj, &facts);
		r = aj_cache_owned_put(&c->cache, aj_runner_slot(f->runner), obj, &facts);
		if (owner[0])
			enqueue(c, owner, 1);
		break;
	}
	}
	if (r)
		aj_log(AJ_LOG_ERROR, "out of memory caching", "object", key, AJ_LOG_END);
}

static int on_event(void *ctx, struct aj_watch_event *ev)
{
	struct feed *f = ctx;
	struct ctl *c = f->ctl;
	char key[320];

	if (ev->type != AJ_WATCH_LIST || ev->last) {
		/* the feed works again: a list completed or the stream delivers */
		pthread_mutex_lock(&c->lock);
		f->failures = 0;
		pthread_mutex_unlock(&c->lock);
	}

	switch (ev->type) {
	case AJ_WATCH_LIST: {
		cJSON *items = cJSON_GetObjectItemCaseSensitive(ev->object, "items"), *it;

		if (f->pods) {
			cJSON_ArrayForEach(it, items) {
				pod_seen(c, it);
			}
			if (ev->last)
				atomic_store(&f->synced, 1);
			return 0;
		}
		if (ev->first) {
			aj_strmap_release(&f->listed);
			aj_strmap_init(&f->listed);
		}
		cJSON_ArrayForEach(it, items)
			if (!aj_cache_key(it, key, sizeof(key)) &&
			    aj_strmap_put(&f->listed, key, NULL, NULL))
				return -1;   /* out of memory: the loop lists again */
		while (items && items->child)
			feed_put(f, cJSON_DetachItemViaPointer(items, items->child));
		if (ev->last) {
			/* Objects deleted while we were not watching leave the cache. */
			aj_cache_sweep(&c->cache, f->kind, &f->listed);
			aj_strmap_release(&f->listed);
			atomic_store(&f->synced, 1);
		}
		return 0;
	}
	case AJ_WATCH_ADDED:
	case AJ_WATCH_MODIFIED:
		feed_put(f, ev->object);
		ev->object = NULL;
		return 0;
	case AJ_WATCH_DELETED:
		/* a pod's last state: a failure not seen before it went is still told */
		if (f->pods) {
			pod_seen(c, ev->object);
			return 0;
		}
		if (aj_cache_key(ev->object, key, sizeof(key)))
			return 0;
		if (f->kind == AJ_CACHE_AJJOBS) {
			aj_cache_ajjob_delete(&c->cache, key);
			forget_failure(c, NULL, key);
		} else if (f->kind == AJ_CACHE_TEMPLATES) {
			aj_cache_template_delete(&c->cache, key);
		} else {
			char owner[320];

			owner_key(ev->object, owner, sizeof(owner));
			aj_cache_owned_delete(&c->cache, aj_runner_slot(f->runner), key);
			if (owner[0])
				enqueue(c, owner, 1);
		}
		return 0;
	default:
		return 0;
	}
}

/* --- permissions --- */

/*
 * Watches show missing read permissions; writes would fail only when an
 * AjJob needs them. So ask the API server up front (SelfSubjectAccessReview,
 * which every authenticated identity may create) and stay unready, naming
 * what is missing, until the permissions are there.
 */
static int allowed(struct aj_kube *k, const char *ns, const char *verb, const char *group,
		   const char *resource, const char *sub, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_access_reviews, NULL, NULL, NULL };
	cJSON *req = cJSON_CreateObject(), *spec, *attrs, *resp = NULL;
	int ok = -1;

	if (req && cJSON_AddStringToObject(req, "apiVersion", "authorization.k8s.io/v1") &&
	    cJSON_AddStringToObject(req, "kind", "SelfSubjectAccessReview") &&
	    (spec = cJSON_AddObjectToObject(req, "spec")) &&
	    (attrs = cJSON_AddObjectToObject(spec, "resourceAttributes")) &&
	    cJSON_AddStringToObject(attrs, "namespace", ns ? ns : "") &&
	    cJSON_AddStringToObject(attrs, "verb", verb) &&
	    cJSON_AddStringToObject(attrs, "group", group) &&
	    cJSON_AddStringToObject(attrs, "resource", resource) &&
	    (!sub || cJSON_AddStringToObject(attrs, "subresource", sub))) {
		if (!aj_kube_create(k, &ref, req, &resp, NULL, err))
			ok = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(resp, "status"), "allowed"));
	} else {
		aj_errors_oom(err);
	}
	cJSON_Delete(req);
	cJSON_Delete(resp);
	return ok;
}

/*
 * Is verb on resource allowed in ns? When not, a permission the controller
 * cannot work without (without NULL) is an error added to miss; one whose
 * lack only degrades something is a warning saying what (without).
 * 1 allowed, 0 not, -1 not known.
 */
static int check_one(struct aj_kube *k, const struct aj_access *a, const char *ns,
		      const char *where, const char *without, struct aj_buf *miss)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	int r = allowed(k, ns, a->verb, a->group, a->resource, a->sub, &err);

	if (r == 0) {
		char what[160];

		snprintf(what, sizeof(what), "%s %s%s%s%s%s in %s", a->verb, a->resource,
			 a->sub ? "/" : "", a->sub ? a->sub : "", a->group[0] ? "." : "", a->group,
			 where);
		if (without) {
			aj_log(AJ_LOG_WARN, "missing permission", "permission", what, "consequence",
			       without, AJ_LOG_END);
		} else {
			aj_log(AJ_LOG_ERROR, "missing permission", "permission", what, AJ_LOG_END);
			aj_buf_addf(miss, "%s%s", miss->len ? "; " : "", what);
		}
	} else if (r < 0) {
		aj_log(AJ_LOG_WARN, "could not check a permission", "error",
		       err.nr ? err.items[0].message : "out of memory", AJ_LOG_END);
	}
	aj_errors_release(&err);
	return r;
}

/*
 * Check every write (and unwatched read) the controller makes; record what is
 * missing. The placer's lists only degrade placement: warned of, never unready.
 */
static void check_permissions(struct ctl *c, struct aj_kube *k, const char *lease_ns)
{
	static const struct aj_access common[] = {
		{ "patch", "aj.dev", "ajjobs", "status" },
		{ "create", "events.k8s.io", "events", NULL },
		{ NULL, NULL, NULL, NULL }
	};
	static const struct aj_access lease = { "update", "coordination.k8s.io", "leases", NULL };
	const char *ns = c->o->watch_namespace && c->o->watch_namespace[0] ? c->o->watch_namespace : NULL;
	struct aj_buf miss = AJ_BUF_INIT(sizeof(c->missing) - 1);
	const struct aj_views_list *l;
	const struct aj_access *a;
	size_t i;

	for (a = common; a->verb; a++)
		check_one(k, a, ns, ns ? ns : "all namespaces", NULL, &miss);
	for (i = 0; i < aj_runners_nr; i++)
		for (a = aj_runners[i]->access; a && a->verb; a++)
			check_one(k, a, ns, ns ? ns : "all namespaces", NULL, &miss);
	if (lease_ns)
		check_one(k, &lease, lease_ns, lease_ns, NULL, &miss);
	for (l = aj_views_cluster_lists; l->res; l++) {
		struct aj_access list = { "list", l->res->group, l->res->plural, NULL };

		check_one(k, &list, NULL, l->res->namespaced ? "all namespaces" : "the cluster",
			  l->without, &miss);
	}
	pthread_mutex_lock(&c->lock);
	snprintf(c->missing, sizeof(c->missing), "%s", aj_buf_cstr(&miss));
	pthread_mutex_unlock(&c->lock);
	aj_buf_release(&miss);
}

/* --- health --- */

static int synced(const struct ctl *c)
{
	size_t i;

	for (i = 0; i < c->nr_feeds; i++)
		if (!c->feeds[i].pods && !atomic_load(&c->feeds[i].synced))
			return 0;
	return 1;
}

static int ready(void *ctx, struct aj_buf *why)
{
	struct ctl *c = ctx;
	size_t i;

	pthread_mutex_lock(&c->lock);
	if (c->missing[0]) {
		aj_buf_addf(why, "missing permission: %s", c->missing);
		pthread_mutex_unlock(&c->lock);
		return 0;
	}
	pthread_mutex_unlock(&c->lock);
	for (i = 0; i < c->nr_feeds; i++) {
		struct feed *f = &c->feeds[i];
		double stale;

		if (f->pods)
			continue;
		if (!atomic_load(&f->synced)) {
			pthread_mutex_lock(&c->lock);
			aj_buf_addf(why, "%s not listed yet%s%s", f->what,
				    f->last_error[0] ? ": " : "", f->last_error);
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		/*
		 * Listed once but failing again and again for longer than the
		 * relist period (the longest backoff): the cache has gone stale,
		 * so say so rather than stay ready while nothing is handled.
		 */
		pthread_mutex_lock(&c->lock);
		stale = f->failures >= 2 ? now_s() - f->failing_since : 0;
		if (stale > AJ_BACKOFF_MAX) {
			aj_buf_addf(why, "%s has not synced for %.0f s: %s", f->what, stale,
				    f->last_error);
			pthread_mutex_unlock(&c->lock);
			return 0;
		}
		pthread_mutex_unlock(&c->lock);
	}
	return 1;
}

static void tally_one(void *ctx, const char *backend, enum aj_phase phase)
{
	aj_jobtally_count(ctx, backend, phase);
}

static int render_metrics(void *ctx, struct aj_buf *out)
{
	struct ctl *c = ctx;
	const char *q = "name=\"ajjob\"";
	struct aj_jobtally tally;
	struct mallinfo2 heap;

	aj_metrics_set(&c->metrics, "workqueue_depth", q, (double)aj_workqueue_len(&c->queue));
	pthread_mutex_lock(&c->queue.lock);
	aj_metrics_set(&c->metrics, "workqueue_adds_total", q, (double)c->queue.adds);
	aj_metrics_set(&c->metrics, "workqueue_retries_total", q, (double)c->queue.retries);
	pthread_mutex_unlock(&c->queue.lock);
	aj_metrics_set(&c->metrics, "leader_election_master_status", "name=\"aj-controller\"",
		       atomic_load(&c->leader) ? 1 : 0);
	aj_metrics_set(&c->metrics, "aj_ajjobs_cached", "", (double)aj_cache_ajjob_count(&c->cache));
	aj_metrics_set(&c->metrics, "aj_cache_bytes", "", (double)aj_cache_bytes(&c->cache));
	/* what the heap holds: live allocations, and free chunks malloc keeps (resident or not) */
	heap = mallinfo2();
	aj_metrics_set(&c->metrics, "aj_heap_in_use_bytes", "", (double)heap.uordblks);
	aj_metrics_set(&c->metrics, "aj_heap_free_bytes", "", (double)heap.fordblks);
	aj_jobtally_init(&tally);
	aj_cache_ajjob_phases(&c->cache, tally_one, &tally);
	aj_jobmetrics_tally(&c->metrics, &tally);
	return aj_metrics_render(&c->metrics, out);
}

static int register_metrics(struct aj_metrics *m)
{
	static const double seconds[] = {
		0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60
	};

	/* controller-runtime's names, so its dashboards apply. */
	return aj_metrics_register(m, "controller_runtime_reconcile_total", AJ_METRIC_COUNTER,
				   "Total number of reconciliations per controller.", NULL, 0) ||
	       aj_metrics_register(m, "controller_runtime_reconcile_errors_total", AJ_METRIC_COUNTER,
				   "Total number of reconciliation errors per controller.", NULL, 0) ||
	       aj_metrics_register(m, "controller_runtime_reconcile_time_seconds", AJ_METRIC_HISTOGRAM,
				   "Length of time per reconciliation per controller.", seconds,
				   sizeof(seconds) / sizeof(seconds[0])) ||
	       aj_metrics_register(m, "workqueue_depth", AJ_METRIC_GAUGE,
				   "Current depth of workqueue.", NULL, 0) ||
	       aj_metrics_register(m, "workqueue_adds_total", AJ_METRIC_COUNTER,
				   "Total number of adds handled by workqueue.", NULL, 0) ||
	       aj_metrics_register(m, "workqueue_retries_total", AJ_METRIC_COUNTER,
				   "Total number of retries handled by workqueue.", NULL, 0) ||
	       aj_metrics_register(m, "leader_election_master_status", AJ_METRIC_GAUGE,
				   "1 when this instance is the leader, else 0.", NULL, 0) ||
	       aj_metrics_register(m, "aj_ajjobs_cached", AJ_METRIC_GAUGE,
				   "AjJobs held in the controller's cache.", NULL, 0) ||
	       aj_metrics_register(m, "aj_cache_bytes", AJ_METRIC_GAUGE,
				   "Bytes the cache holds for AjJobs and the objects they own.", NULL, 0) ||
	       aj_metrics_register(m, "aj_heap_in_use_bytes", AJ_METRIC_GAUGE,
				   "Bytes of the heap in live allocations (mallinfo2 uordblks).", NULL, 0) ||
	       aj_metrics_register(m, "aj_heap_free_bytes", AJ_METRIC_GAUGE,
				   "Bytes of free heap chunks malloc keeps (mallinfo2 fordblks).", NULL, 0) ||
	       aj_metrics_register(m, "rest_client_requests_total", AJ_METRIC_COUNTER,
				   "Number of HTTP requests, partitioned by status code and method.",
				   NULL, 0) ||
	       aj_jobmetrics_register(m) ||
	       /* as controller-runtime, the error count exists from the start: 0 is a value */
	       aj_metrics_add(m, "controller_runtime_reconcile_errors_total",
			      "controller=\"ajjob\"", 0);
}

/* --- clients --- */

/* client-go's series: code "<error>" when no answer came. */
static void count_request(void *ctx, const char *method, long code)
{
	struct aj_metrics *m = ctx;
	char labels[96], num[24];

	snprintf(num, sizeof(num), "%ld", code);
	if (!aj_metrics_labels(labels, sizeof(labels), "code", code ? num : "<error>",
			       "method", method, (const char *)NULL))
		aj_metrics_add(m, "rest_client_requests_total", labels, 1);
}

static int client_new(const struct aj_controller_opts *o, struct aj_kube *k, double qps,
		      int burst, struct aj_metrics *m, struct aj_errors *err)
{
	struct aj_kube_config cfg;
	struct aj_kube_config_opts co;

	memset(&co, 0, sizeof(co));
	aj_kube_config_opts_from_env(&co);
	co.kubeconfig = o->kubeconfig;
	co.context = o->context;
	aj_kube_config_init(&cfg);
	if (aj_kube_config_load(&cfg, &co, err)) {
		aj_kube_config_release(&cfg);
		return -1;
	}
	if (aj_kube_init(k, &cfg, err))
		return -1;
	aj_kube_set_rate(k, qps, burst);
	k->observe = count_request;
	k->observe_ctx = m;
	return 0;
}

/* --- workers and lease --- */

struct worker {
	struct ctl *ctl;
	struct aj_kube k;
	pthread_t thread;
	int started;
};

/*
 * Queue key again as action a says: now behind every create (low), after a
 * while, or after a while behind every create and status write (idle). 0 / -1.
 */
static int again(struct aj_workqueue *q, const char *key, const struct aj_action *a)
{
	if (a->level == AJ_ACTION_IDLE)
		return aj_workqueue_add_idle_after(q, key, a->after);
	if (a->level == AJ_ACTION_LOW && a->after <= 0)
		return aj_workqueue_add_low(q, key);
	return aj_workqueue_add_after(q, key, a->after);
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct ctl *c = w->ctl;
	const char *labels_ok = "controller=\"ajjob\",result=\"success\"";
	const char *labels_err = "controller=\"ajjob\",result=\"error\"";
	const char *labels_requeue = "controller=\"ajjob\",result=\"requeue\"";
	char *key;

	while (aj_workqueue_get(&c->queue, &key)) {
		struct aj_errors err = AJ_ERRORS_INIT;
		double t0 = now_s();
		struct aj_action a = aj_reconcile(&c->rec, &w->k, key, &err);

		aj_metrics_observe(&c->metrics, "controller_runtime_reconcile_time_seconds",
				   "controller=\"ajjob\"", now_s() - t0);
		aj_metrics_add(&c->metrics, "controller_runtime_reconcile_total",
			       a.kind == AJ_ACTION_RETRY ? labels_err :
			       a.kind == AJ_ACTION_AGAIN && a.level == AJ_ACTION_LOW ? labels_requeue :
			       labels_ok, 1);
		if (a.kind == AJ_ACTION_RETRY) {
			struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);

			aj_errors_format_all(&err, &msg);
			aj_metrics_add(&c->metrics, "controller_runtime_reconcile_errors_total",
				       "controller=\"ajjob\"", 1);
			aj_log(AJ_LOG_WARN, "reconcile failed; will retry", "ajjob", key,
			       "error", aj_buf_cstr(&msg), AJ_LOG_END);
			aj_buf_release(&msg);
			aj_workqueue_add_rate_limited(&c->queue, key);
		} else {
			aj_workqueue_forget(&c->queue, key);
			if (a.kind == AJ_ACTION_AGAIN && again(&c->queue, key, &a))
				aj_log(AJ_LOG_ERROR, "out of memory queueing", "ajjob", key, AJ_LOG_END);
		}
		aj_errors_release(&err);
		aj_workqueue_done(&c->queue, key);
	}
	return NULL;
}

struct leader {
	struct ctl *ctl;
	struct aj_kube k;
	struct aj_lease lease;
	pthread_t thread;
	int started;
};

static void *lead(void *arg)
{
	struct leader *l = arg;
	struct ctl *c = l->ctl;

	while (!atomic_load(c->stop) && !atomic_load(&c->lost)) {
		struct aj_errors err = AJ_ERRORS_INIT;
		int r = aj_lease_try(&l->lease, &err), was = atomic_load(&c->leader), lost = 0;

		if (r < 0)
			aj_log(AJ_LOG_WARN, "lease update failed", "error",
			       err.nr ? err.items[0].message : "out of memory", AJ_LOG_END);
		if (r == 1 && !was)
			aj_log(AJ_LOG_INFO, "became leader", "identity", c->identity, AJ_LOG_END);
		if (aj_lease_lost(&l->lease) || (was && r == 0)) {
			aj_log(AJ_LOG_ERROR, "lost leadership; stopping", "identity", c->identity, AJ_LOG_END);
			atomic_store(&c->lost, 1);
			lost = 1;
		}
		atomic_store(&c->leader, r == 1 || (r < 0 && was && !lost));
		aj_errors_release(&err);
		sleep_s(l->lease.retry);
	}
	return NULL;
}

/* Everything aj_controller_run() starts, so each step can be a function. */
struct run {
	struct ctl c;
	struct aj_kube wk;             /* the watches' client */
	struct aj_watch_loop loop;
	struct worker *workers;
	struct leader ld;
	int have_wk, have_loop, have_health;
};

/*
 * Each runner's configuration from its options (a runner left without one
 * is off), and the status members the cache keeps whole for them. 0 / -1.
 */
static int configure_runners(struct ctl *c, struct aj_errors *err)
{
	struct aj_runner_env env = { c->identity_tokens, c->o->identity_ca_file,
				     c->o->identity_client_id };
	size_t i, whole = 0;

	/* a placement AjJob's choice and attempts, carried over by every status write */
	c->cache.whole[whole++] = AJ_STATUS_PLACEMENT;
	for (i = 0; i < aj_runners_nr; i++) {
		const struct aj_runner *rn = aj_runners[i];

		if (rn->member_whole && whole < AJ_RUNNERS_MAX)
			c->cache.whole[whole++] = rn->status_member;
		if (rn->configure &&
		    rn->configure(c->o->runner_values[i], &env, &c->rec.runner_config[i], err))
			return -1;
		/* a configured runner that says where its jobs can go feeds placement */
		if (rn->read_views && c->rec.runner_config[i])
			aj_placer_set_azure(&c->placer, rn->read_views, rn->views_workspace,
					    c->rec.runner_config[i], rn->views_every);
	}
	return 0;
}

/* Start-up: the cache, queue, metrics, identity and the runners' shared parts. */
static int start_up(struct run *x, const struct aj_controller_opts *o, atomic_int *stop,
		    struct aj_errors *err)
{
	struct ctl *c = &x->c;
	char host[200] = "aj-controller";

	c->o = o;
	c->stop = stop;
	aj_placer_init(&c->placer);
	if (aj_podfail_init(&c->podfail, 0))
		return aj_errors_add(err, NULL, "cannot create a mutex");
	c->rec.podfail = &c->podfail;
	if (aj_cache_init(&c->cache) || aj_workqueue_init(&c->queue, NULL) ||
	    aj_metrics_init(&c->metrics) || register_metrics(&c->metrics))
		return aj_errors_oom(err);
	gethostname(host, sizeof(host) - 1);
	if (o->identity)
		snprintf(c->identity, sizeof(c->identity), "%s", o->identity);
	else
		snprintf(c->identity, sizeof(c->identity), "%s_%ld", host, (long)getpid());
	aj_reconciler_init(&c->rec, &c->cache, c->identity);
	c->rec.privileged_namespaces = o->privileged_namespaces;
	c->rec.metrics = &c->metrics;
	c->rec.ttl_after_finished = o->ttl_after_finished;
	c->rec.placer = &c->placer;
	/* one credential provider for the identity: every token user shares it */
	if (aj_identity_tokens_new(o->identity_ca_file, o->identity_client_id,
				   &c->identity_tokens, err) ||
	    aj_storage_minter_new(&o->storage, c->identity_tokens, &c->rec.storage, err) ||
	    configure_runners(c, err))
		return -1;
	if (client_new(o, &x->wk, 0, 0, &c->metrics, err))
		return -1;
	x->have_wk = 1;
	return 0;
}

/* A watch in the controller's namespace (all when none); selector: the pod watch's. */
static int add_feed(struct run *x, const struct aj_kube_resource *res, enum aj_cache_kind kind,
		    const struct aj_runner *runner, const char *what, const char *selector,
		    struct aj_errors *err)
{
	struct ctl *c = &x->c;
	struct feed *f = &c->feeds[c->nr_feeds++];
	struct aj_kube_ref ref = { res, c->o->watch_namespace, NULL, NULL };
	struct aj_kube_list_opts lo;

	memset(&lo, 0, sizeof(lo));
	lo.label_selector = selector;
	f->ctl = c;
	f->kind = kind;
	f->runner = runner;
	f->what = what;
	f->pods = selector != NULL;
	if (ref.ns && !ref.ns[0])
		ref.ns = NULL;
	return aj_watch_add(&x->loop, &ref, &lo, on_event, f, err);
}

/*
 * aj's pods, watched only where the controller may: without the permission
 * the controller works on, and a failed job whose pod its backend deleted
 * before the look says no pod (the start-up warning says so).
 */
static int add_pod_feed(struct run *x, struct aj_errors *err)
{
	static const struct aj_access watch_pods = { "watch", "", "pods", NULL };
	const char *ns = x->c.o->watch_namespace && x->c.o->watch_namespace[0]
			 ? x->c.o->watch_namespace : NULL;

	if (!check_one(&x->wk, &watch_pods, ns, ns ? ns : "all namespaces",
		       "a failed job whose pod was deleted before it was listed is not told "
		       "which pod failed with which exit code", NULL))
		return 0;
	return add_feed(x, &aj_res_pods, AJ_CACHE_OWNED, NULL, "pods", POD_SELECTOR, err);
}

/* Watches: the AjJobs, the AjTemplates and what each runner owns; then the health server. */
static int start_watches(struct run *x, struct aj_errors *err)
{
	struct ctl *c = &x->c;
	const struct aj_controller_opts *o = c->o;
	size_t i;

	if (aj_watch_loop_init(&x->loop, &x->wk, err))
		return -1;
	x->have_loop = 1;
	x->loop.log = watch_log;
	x->loop.log_ctx = c;
	if (add_feed(x, &aj_res_ajjobs, AJ_CACHE_AJJOBS, NULL, "ajjobs.aj.dev", NULL, err) ||
	    add_feed(x, &aj_res_ajtemplates, AJ_CACHE_TEMPLATES, NULL, "ajtemplates.aj.dev", NULL,
		     err))
		return -1;
	for (i = 0; i < aj_runners_nr; i++)
		if (aj_runners[i]->owns &&
		    add_feed(x, aj_runners[i]->owns, (enum aj_cache_kind)(AJ_CACHE_OWNED + i),
			     aj_runners[i], aj_runners[i]->owns_crd, NULL, err))
			return -1;
	if (add_pod_feed(x, err))
		return -1;
	{
		struct aj_health_ops ops = { ready, render_metrics, c };

		if (aj_health_start(&c->health, o->health_addr, o->health_port, &ops, err))
			return -1;
	}
	x->have_health = 1;
	if (o->port_file) {
		FILE *f = fopen(o->port_file, "w");

		if (f) {
			fprintf(f, "%d\n", c->health.port);
			fclose(f);
		}
	}
	return 0;
}

/* Leader: nothing is reconciled by a non-leader. */
static int start_leader(struct run *x, struct aj_errors *err)
{
	struct ctl *c = &x->c;
	const struct aj_controller_opts *o = c->o;
	struct leader *ld = &x->ld;

	if (!o->leader_elect) {
		atomic_store(&c->leader, 1);
		return 0;
	}
	ld->ctl = c;
	if (client_new(o, &ld->k, 0, 0, &c->metrics, err) ||
	    aj_lease_init(&ld->lease, &ld->k,
			  o->lease_namespace ? o->lease_namespace : ld->k.cfg.namespace,
			  o->lease_name, c->identity))
		return -1;
	ld->started = !pthread_create(&ld->thread, NULL, lead, ld);
	return ld->started ? 0 : aj_errors_add(err, NULL, "cannot start the leader election thread");
}

/* Workers: one client each, sharing the request budget. */
static int start_workers(struct run *x, struct aj_errors *err)
{
	struct ctl *c = &x->c;
	const struct aj_controller_opts *o = c->o;
	int i, burst = o->burst / o->workers > 0 ? o->burst / o->workers : 1;

	for (i = 0; i < o->workers; i++) {
		x->workers[i].ctl = c;
		if (client_new(o, &x->workers[i].k, o->qps / o->workers, burst, &c->metrics, err))
			return -1;
		x->workers[i].started = !pthread_create(&x->workers[i].thread, NULL, work,
							&x->workers[i]);
		if (!x->workers[i].started) {
			aj_kube_release(&x->workers[i].k);
			return aj_errors_add(err, NULL, "cannot start worker threads");
		}
	}
	return 0;
}

/* The watch loop on this thread until stopped; workers start once every cache is listed. */
static int watch_until_stopped(struct run *x, struct aj_errors *err)
{
	struct ctl *c = &x->c;
	const char *lease_ns = c->o->leader_elect ? x->ld.lease.ns : NULL;
	double trimmed = 0, checked;

	check_permissions(c, &x->wk, lease_ns);
	checked = now_s();
	while (!atomic_load(c->stop) && !atomic_load(&c->lost)) {
		/* Until the permissions are there, look again now and then. */
		if (c->missing[0] && now_s() - checked > 30) {
			check_permissions(c, &x->wk, lease_ns);
			checked = now_s();
		}
		/*
		 * Like controller-runtime, reconcile only once every cache is
		 * listed: an AjTemplate not yet seen would fail an AjJob, and an
		 * owned object not yet seen would cost a GET.
		 */
		if (atomic_load(&c->leader) && !x->workers[0].started && synced(c) &&
		    start_workers(x, err))
			return -1;
		if (aj_watch_loop_run(&x->loop, 500, err))
			return -1;
		/*
		 * Bursts of events and reconciles leave freed pages scattered in
		 * the heap; hand them back to the system when things are quiet.
		 */
		if (!aj_workqueue_len(&c->queue) && now_s() - trimmed > 5) {
			malloc_trim(0);
			trimmed = now_s();
		}
	}
	return atomic_load(&c->lost) ? aj_errors_add(err, NULL, "lost leadership") : 0;
}

/* Drain: workers finish the AjJob in hand, then see the shutdown; the lease goes. */
static void drain(struct run *x)
{
	struct ctl *c = &x->c;
	int i;

	aj_workqueue_shutdown(&c->queue);
	for (i = 0; x->workers && i < c->o->workers; i++)
		if (x->workers[i].started) {
			pthread_join(x->workers[i].thread, NULL);
			aj_kube_release(&x->workers[i].k);
		}
	aj_free(x->workers);
	if (x->ld.started) {
		struct aj_errors gerr = AJ_ERRORS_INIT;

		atomic_store(&c->lost, 1);   /* stops the lease thread */
		pthread_join(x->ld.thread, NULL);
		if (aj_lease_give_up(&x->ld.lease, &gerr))
			aj_log(AJ_LOG_WARN, "could not release the lease", AJ_LOG_END);
		aj_errors_release(&gerr);
	}
	if (x->ld.lease.name) {
		aj_lease_release(&x->ld.lease);
		aj_kube_release(&x->ld.k);
	}
}

static void shut_down(struct run *x)
{
	struct ctl *c = &x->c;
	size_t i;

	if (x->have_health)
		aj_health_stop(&c->health);
	if (x->have_loop)
		aj_watch_loop_release(&x->loop);
	for (i = 0; i < c->nr_feeds; i++)
		aj_strmap_release(&c->feeds[i].listed);
	if (x->have_wk)
		aj_kube_release(&x->wk);
	for (i = 0; i < aj_runners_nr; i++)
		if (aj_runners[i]->config_free && c->rec.runner_config[i])
			aj_runners[i]->config_free(c->rec.runner_config[i]);
	aj_storage_minter_free(c->rec.storage);
	aj_token_cache_free(c->identity_tokens);
	aj_cache_release(&c->cache);
	aj_placer_release(&c->placer);
	aj_podfail_release(&c->podfail);
	aj_workqueue_release(&c->queue);
	aj_metrics_release(&c->metrics);
	pthread_mutex_destroy(&c->lock);
}

int aj_controller_run(const struct aj_controller_opts *o, atomic_int *stop,
		      struct aj_errors *err)
{
	struct run *x = aj_calloc(1, sizeof(*x));
	int ret = -1;

	if (!x)
		return aj_errors_oom(err);
	if (pthread_mutex_init(&x->c.lock, NULL)) {
		aj_free(x);
		return aj_errors_add(err, NULL, "cannot create a mutex");
	}
	if (!start_up(x, o, stop, err) && !start_watches(x, err) && !start_leader(x, err)) {
		aj_log(AJ_LOG_INFO, "aj-controller started", "identity", x->c.identity, "namespace",
		       o->watch_namespace && o->watch_namespace[0] ? o->watch_namespace : "(all)",
		       AJ_LOG_END);
		if (!(x->workers = aj_calloc((size_t)o->workers, sizeof(*x->workers))))
			aj_errors_oom(err);
		else
			ret = watch_until_stopped(x, err);
	}
	drain(x);
	shut_down(x);
	aj_free(x);
	aj_log(AJ_LOG_INFO, "aj-controller stopped", AJ_LOG_END);
	return ret;
}
