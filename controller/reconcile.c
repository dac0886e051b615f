#include "reconcile.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "backend/backend.h"
#include "cache.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/bundle.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/json.h"
#include "core/node.h"
#include "core/resolve.h"
#include "core/source.h"
#include "core/timestamp.h"
#include "events.h"
#include "kube/client.h"
#include "lifecycle.h"
#include "log.h"
#include "reconcile_azure.h"
#include "resources.h"
#include "status.h"
#include "storage.h"
#include "workqueue.h"

/*
 * Longest Volcano Job name we derive: pods are named <job>-<task>-<index>
 * (at most 63), so this leaves room for the master/worker tasks with
 * four-digit indexes and for short heterogeneous task names.
 */
#define AJ_VOLCANO_NAME_MAX 45

/* One reconcile's view of an AjJob and what it has decided to say. */
struct job {
	struct aj_reconciler *r;
	struct aj_kube *k;
	struct aj_ajjob_view v;
	char key[320];
	char now[40];
	char now_micro[48];
	long long secret_renew;   /* renewal time of the Secret written here, 0: none */
};

static unsigned long long event_seq(void)
{
	static unsigned long long seq;
	unsigned long long s = __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED);

	if (s == 0) {
		struct timespec ts;

		/* Unique across restarts: start from the wall clock in ns. */
		clock_gettime(CLOCK_REALTIME, &ts);
		s = (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
		__atomic_store_n(&seq, s + 1, __ATOMIC_RELAXED);
	}
	return s;
}

static void post_event(struct job *j, int warning, const char *reason, const char *action,
		       const char *note, int once)
{
	struct aj_event e = {
		j->v.ns, j->v.name, j->v.uid, j->v.resource_version, warning, reason,
		action, note, j->r->instance, j->now_micro, event_seq(), once
	};

	aj_event_post(j->k, &e);
}

static void event(struct job *j, int warning, const char *reason, const char *action,
		  const char *note)
{
	post_event(j, warning, reason, action, note, 0);
}

/* Volcano object name for an AjJob name: stable, DNS-1035, short enough. */
static void volcano_name(const char *ajjob, char *out, size_t size)
{
	char clean[256];
	size_t i, n = 0;
	uint64_t h = 1469598103934665603ull;

	if (!(ajjob[0] >= 'a' && ajjob[0] <= 'z')) {
		clean[n++] = 'j';
		clean[n++] = '-';
	}
	for (i = 0; ajjob[i] && n < sizeof(clean) - 1; i++) {
		char c = ajjob[i];

		h = (h ^ (unsigned char)c) * 1099511628211ull;
		clean[n++] = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ? c : '-';
	}
	clean[n] = '\0';
	if (n <= AJ_VOLCANO_NAME_MAX) {
		snprintf(out, size, "%s", clean);
		return;
	}
	/* Too long: keep a readable prefix and make it unique with a hash. */
	n = AJ_VOLCANO_NAME_MAX - 9;
	while (n > 0 && clean[n - 1] == '-')
		n--;
	snprintf(out, size, "%.*s-%08x", (int)n, clean, (unsigned)(h ^ (h >> 32)));
}

static void errors_text(const struct aj_errors *err, struct aj_buf *out)
{
	size_t i, n = aj_errors_count(err);

	for (i = 0; i < n; i++) {
		if (i)
			aj_buf_addstr(out, "; ");
		aj_errors_format(err, i, out);
	}
}

/* Write status (merge patch with our resourceVersion: a stale one conflicts). */
static int write_status(struct job *j, const struct aj_status *st, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_ajjobs, j->v.ns, j->v.name, "status" };
	cJSON *patch = NULL, *meta, *next;
	int changed = 0, r;

	next = aj_status_next(j->v.status, st, j->now, &changed);
	if (!next)
		return aj_errors_oom(err);
	/* The cache keeps a hash of the status, not all of it. */
	changed = !j->v.status || aj_cache_json_hash(next) != j->v.status_hash;
	if (!changed) {
		cJSON_Delete(next);
		return 0;
	}
	patch = cJSON_CreateObject();
	if (!patch || !(meta = cJSON_AddObjectToObject(patch, "metadata")) ||
	    !cJSON_AddStringToObject(meta, "resourceVersion", j->v.resource_version) ||
	    !cJSON_AddItemToObject(patch, "status", next)) {
		if (!patch || !cJSON_GetObjectItem(patch, "status"))
			cJSON_Delete(next);
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	r = aj_kube_patch(j->k, &ref, AJ_KUBE_MERGE_PATCH, patch, NULL, NULL, err);
	cJSON_Delete(patch);
	return r;
}

static int fail_job(struct job *j, const char *backend, const char *reason,
		    const char *message, struct aj_errors *err)
{
	struct aj_status st = { AJ_PHASE_FAILED, 0, reason, message, backend,
				j->v.generation, NULL, 0, 0, 0, NULL };

	if (write_status(j, &st, err))
		return -1;
	event(j, 1, reason, "Resolve", message);
	aj_log(AJ_LOG_WARN, "ajjob failed", "ajjob", j->key, "reason", reason,
	       "message", message, AJ_LOG_END);
	return 0;
}

/*
 * Resolve and build. Returns 0 with *objects, 1 when the AjJob itself is at
 * fault (problems in `problems`, *service set when known), -1 on OOM; aml
 * and sing AjJobs go to the Azure forwarder when there is one (2, or 3 when
 * it asks for a retry with its errors in `problems`). A volcano AjJob's
 * storage Secret is written here, before anything refers to it (4: writing
 * it failed and should be retried, errors in `problems`).
 */
static int build(struct job *j, char **service, cJSON **objects,
		 struct aj_errors *problems)
{
	static const char *const api_version = AJ_API_VERSION;
	struct aj_bundle b;
	struct aj_source templates, chain;
	struct aj_template t;
	struct aj_jobspec spec;
	struct aj_node *specnode = NULL;
	const struct aj_backend *be;
	const cJSON *digest;
	struct aj_buf origin = AJ_BUF_INIT(AJ_BUF_SMALL);
	char vname[64];
	int ret = 1, have_chain = 0;

	aj_bundle_init(&b);
	aj_template_init(&t);
	aj_jobspec_init(&spec);
	if (aj_buf_addf(&origin, "AjJob %s", j->key))
		goto oom;
	if (aj_node_from_cjson(cJSON_GetObjectItemCaseSensitive(j->v.object, "spec"),
			       aj_buf_cstr(&origin), &specnode, problems) ||
	    aj_bundle_read(&b, specnode, aj_buf_cstr(&origin), problems))
		goto out;
	if (aj_cache_template_source(j->r->cache, j->v.ns, &templates, problems))
		goto oom;
	/* The chain owns both sources from here on. */
	if (aj_source_chain_init(&chain, &b.source, &templates))
		goto oom;
	b.has_source = 0;
	have_chain = 1;
	if (aj_template_resolve(&chain, b.leaf, &t, problems) ||
	    aj_jobspec_from_config(t.config, t.name, &b.args,
				   (const char *const *)b.command.items, b.command.nr,
				   &spec, problems))
		goto out;
	if (!(*service = aj_strdup(spec.target.service)))
		goto oom;
	/* the code `aj run` uploaded (shared volume, blob or datastore) */
	digest = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j->v.object, "spec"), "code"), "digest");
	if (cJSON_IsString(digest) && !(spec.code.digest = aj_strdup(digest->valuestring)))
		goto oom;
	if (strcmp(spec.target.service, "volcano") && j->r->azure &&
	    aj_azure_serves(spec.target.service)) {
		/* 2: forwarded; 3: the forwarder wants a retry (errors in problems) */
		ret = aj_reconcile_azure(j->r->azure, j->k, &j->v, &spec, problems) ? 3 : 2;
		goto out;
	}
	if (strcmp(spec.target.service, "volcano")) {
		aj_errors_add(problems, NULL, "backend %s is not served by this controller: "
			      "it forwards volcano jobs only", spec.target.service);
		goto out;
	}
	if (spec.target.namespace_ && strcmp(spec.target.namespace_, j->v.ns)) {
		struct aj_where w = { NULL, 0, 0, "config.target.namespace" };

		aj_errors_add(problems, &w, "\"%s\" differs from the AjJob's namespace \"%s\": "
			      "the Volcano Job is created beside its AjJob",
			      spec.target.namespace_, j->v.ns);
		goto out;
	}
	be = aj_backend_find(spec.target.service);
	volcano_name(j->v.name, vname, sizeof(vname));
	{
		struct aj_build_ctx ctx = { vname, j->v.ns, j->v.uid, j->v.name, api_version, 0 };

		if (!be || be->validate(&spec, problems) ||
		    aj_backend_permit(&spec, j->v.ns, j->r->privileged_namespaces, problems) ||
		    be->build(&spec, &ctx, objects, problems))
			goto out;
		if (j->r->storage) {
			char secret[AJ_STORAGE_SECRET_SIZE];
			struct aj_storage_target st = { j->key, j->v.ns, secret, vname, j->v.name,
							j->v.uid, api_version };
			time_t renew;
			int s;

			/* cannot fail: Volcano Job names are at most AJ_VOLCANO_NAME_MAX characters */
			(void)aj_storage_secret_name(vname, secret);
			s = aj_storage_ensure(j->r->storage, j->k, &spec, &st, &renew, problems);
			if (s < 0)
				goto oom;
			if (s != AJ_STORAGE_OK) {
				ret = s == AJ_STORAGE_RETRY ? 4 : 1;
				goto out;
			}
			aj_cache_ajjob_set_storage_due(j->r->cache, j->key, (long long)renew);
			j->secret_renew = (long long)renew;
		}
	}
	ret = 0;
	goto out;
oom:
	ret = -1;
out:
	if (problems->oom)
		ret = -1;
	if (have_chain)
		aj_source_release(&chain);
	aj_jobspec_release(&spec);
	aj_template_release(&t);
	aj_bundle_release(&b);
	aj_node_free(specnode);
	aj_buf_release(&origin);
	return ret;
}

static const char *str_at(const cJSON *o, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(o, a), b);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Does obj have a controller ownerReference to our AjJob? */
static int owned_by(const cJSON *obj, const char *uid)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, cJSON_GetObjectItemCaseSensitive(
				   cJSON_GetObjectItemCaseSensitive(obj, "metadata"),
				   "ownerReferences")) {
		const cJSON *u = cJSON_GetObjectItemCaseSensitive(ref, "uid");

		if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ref, "controller")) &&
		    cJSON_IsString(u) && uid && !strcmp(u->valuestring, uid))
			return 1;
	}
	return 0;
}

/* Created Volcano Jobs whose AjJob status is not written yet: key -> name. */
static int remember_created(struct aj_reconciler *r, const char *key, const char *vname)
{
	char *copy = aj_strdup(vname);
	void *old = NULL;
	int ret;

	if (!copy)
		return -1;
	pthread_mutex_lock(&r->lock);
	ret = aj_strmap_put(&r->created, key, copy, &old);
	pthread_mutex_unlock(&r->lock);
	aj_free(ret ? copy : old);
	return ret;
}

/* Take the name remembered for key (caller frees), or NULL. */
static char *take_created(struct aj_reconciler *r, const char *key)
{
	char *v;

	pthread_mutex_lock(&r->lock);
	v = aj_strmap_remove(&r->created, key, NULL);
	pthread_mutex_unlock(&r->lock);
	return v;
}

/* The AjJob's backend object exists: say so in its status (and an Event). */
static int record_submitted(struct job *j, const char *service, const char *vname,
			    int created, struct aj_errors *err)
{
	char msg[256];
	struct aj_status st = { AJ_PHASE_SUBMITTED, 1, "VolcanoJobCreated", msg,
				service, j->v.generation, vname, j->secret_renew, 0, 0, NULL };

	snprintf(msg, sizeof(msg), "Volcano Job %s submitted", vname);
	if (write_status(j, &st, err))
		return -1;
	/* a job that stays Pending changes nothing Volcano would tell us of: look then */
	if (j->r->queue &&
	    aj_workqueue_add_after(j->r->queue, j->key, AJ_LIFE_REASON_GRACE + 1))
		return aj_errors_oom(err);
	if (created) {
		snprintf(msg, sizeof(msg), "created Volcano Job %s", vname);
		event(j, 0, "VolcanoJobCreated", "Create", msg);
	}
	return 0;
}

/* The storage Secret could not be written: say why in an Event, retry later. */
static void storage_failed(struct job *j, struct aj_errors *problems, struct aj_errors *err)
{
	struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);

	errors_text(problems, &msg);
	event(j, 1, "StorageSecretFailed", "Mint",
	      msg.failed ? "the storage Secret could not be written" : aj_buf_cstr(&msg));
	aj_buf_release(&msg);
	aj_errors_splice(err, problems);
}

/* First submission: build, create (or adopt), record it. */
static int submit(struct job *j, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	struct aj_kube_status ks;
	cJSON *objects = NULL, *created = NULL;
	const cJSON *vj;
	char *service = NULL;
	const char *vname;
	int b, ret = -1;

	aj_kube_status_init(&ks);
	b = build(j, &service, &objects, &problems);
	if (b < 0) {
		ret = aj_errors_oom(err);
		goto out;
	}
	if (b == 4) {
		storage_failed(j, &problems, err);
		goto out;
	}
	if (b >= 2) {
		if (b == 3)
			aj_errors_splice(err, &problems);
		ret = b == 3 ? -1 : 0;
		goto out;
	}
	if (b > 0) {
		struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);

		errors_text(&problems, &msg);
		ret = fail_job(j, service ? service : "unknown", "InvalidTemplate",
			       msg.failed ? "invalid template (message too long)" : aj_buf_cstr(&msg),
			       err);
		aj_buf_release(&msg);
		goto out;
	}
	vj = cJSON_GetArrayItem(objects, 0);
	vname = str_at(vj, "metadata", "name");
	{
		struct aj_kube_ref ref = { &aj_res_volcano_jobs, j->v.ns, NULL, NULL };
		struct aj_errors cerr = AJ_ERRORS_INIT;

		if (aj_kube_create(j->k, &ref, vj, &created, &ks, &cerr)) {
			if (ks.reason != AJ_KUBE_ALREADY_EXISTS) {
				/* admission and validation say no for good; 5xx and timeouts are retried */
				if (aj_life_create_rejected(ks.code)) {
					struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);

					if (ks.message)
						aj_buf_addf(&msg, "Volcano Job %s was rejected: %s",
							    vname, ks.message);
					else
						errors_text(&cerr, &msg);
					ret = fail_job(j, service, "VolcanoJobRejected",
						       msg.failed ? "the Volcano Job was rejected"
								  : aj_buf_cstr(&msg), err);
					aj_buf_release(&msg);
				} else {
					aj_errors_splice(err, &cerr);
				}
				aj_errors_release(&cerr);
				goto out;
			}
			aj_errors_release(&cerr);
			/* Created before (we crashed, or the status write failed): adopt if ours. */
			ref.name = vname;
			if (aj_kube_get(j->k, &ref, &created, NULL, err))
				goto out;
			if (!owned_by(created, j->v.uid)) {
				char msg[512];

				snprintf(msg, sizeof(msg), "a Volcano Job named %s already exists "
					 "and does not belong to this AjJob", vname);
				ret = fail_job(j, service, "NameConflict", msg, err);
				goto out;
			}
			aj_log(AJ_LOG_INFO, "adopted existing volcano job", "ajjob", j->key,
			       "volcanoJob", vname, AJ_LOG_END);
		} else {
			/*
			 * Created: record it and come back for the status once no
			 * AjJob waits for its create, so a burst of new AjJobs spends
			 * the API budget on creates first.
			 */
			aj_log(AJ_LOG_INFO, "created volcano job", "ajjob", j->key,
			       "volcanoJob", vname, AJ_LOG_END);
			ret = remember_created(j->r, j->key, vname) ? aj_errors_oom(err)
								    : AJ_RECONCILE_REQUEUE;
			goto out;
		}
	}
	ret = record_submitted(j, service, vname, 0, err);
out:
	aj_kube_status_release(&ks);
	cJSON_Delete(objects);
	cJSON_Delete(created);
	aj_free(service);
	aj_errors_release(&problems);
	return ret;
}

/*
 * Rewrite the storage Secret of a submitted AjJob with fresh SAS: the same
 * build as the submission. A failure is an Event and another attempt later,
 * never a reason to stop mirroring the job: the Secret keeps the old SAS
 * until they expire.
 */
#define AJ_STORAGE_RETRY_SECONDS 60

static int renew_storage(struct job *j, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;
	cJSON *objects = NULL;
	char *service = NULL;
	int b, ret = 0;

	if (!j->v.object) {
		struct aj_kube_ref ref = { &aj_res_ajjobs, j->v.ns, j->v.name, NULL };

		if (aj_kube_get(j->k, &ref, &j->v.object, NULL, err))
			return -1;
	}
	b = build(j, &service, &objects, &problems);
	if (b < 0) {
		ret = aj_errors_oom(err);
	} else if (b) {
		struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);

		errors_text(&problems, &msg);
		event(j, 1, "StorageRenewalFailed", "Mint",
		      msg.failed ? "the storage Secret could not be renewed" : aj_buf_cstr(&msg));
		aj_log(AJ_LOG_WARN, "storage secret not renewed", "ajjob", j->key,
		       "error", msg.failed ? "(message too long)" : aj_buf_cstr(&msg), AJ_LOG_END);
		aj_buf_release(&msg);
		/* a failed write comes back after the delay, not before */
		aj_cache_ajjob_set_storage_due(j->r->cache, j->key,
					       (long long)time(NULL) + AJ_STORAGE_RETRY_SECONDS);
		if (aj_storage_defer(j->r->storage, j->key, AJ_STORAGE_RETRY_SECONDS))
			ret = aj_errors_oom(err);
	}
	cJSON_Delete(objects);
	aj_free(service);
	aj_errors_release(&problems);
	return ret;
}

/*
 * Is the storage Secret to be written now? When not known (after a restart)
 * the status says when it is due, and a Volcano Job that mounts no Secret
 * needs none: only a job with neither is read and resolved again. -1: OOM.
 */
static int storage_due(struct job *j, const struct aj_volcano_view *vv)
{
	long long now = (long long)time(NULL), due;

	if (j->v.storage_due != AJ_CACHE_DUE_UNKNOWN)
		return j->v.storage_due && j->v.storage_due <= now;
	due = aj_timestamp_parse(cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(j->v.status, "volcano"), AJ_STATUS_RENEW)), 0);
	if (vv->storage && due <= now)
		return 1;
	if (!vv->storage)
		due = 0;
	aj_cache_ajjob_set_storage_due(j->r->cache, j->key, due);
	return due && aj_storage_defer(j->r->storage, j->key, (long)(due - now)) ? -1 : 0;
}

/* The pods carrying the Volcano Job's name (caller frees *out). */
static int list_pods(struct job *j, cJSON **out, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_pods, j->v.ns, NULL, NULL };
	struct aj_kube_list_opts o;
	char sel[320];

	memset(&o, 0, sizeof(o));
	snprintf(sel, sizeof(sel), "volcano.sh/job-name=%s", j->v.volcano_job);
	o.label_selector = sel;
	return aj_kube_list_all(j->k, &ref, &o, out, NULL, err);
}

/*
 * Why the scheduler keeps the job waiting: its PodGroup's Unschedulable
 * condition, else the newest Unschedulable Event about the PodGroup (a job
 * refused at enqueue has no pods, and the reason only in Events). *keep
 * holds what *why points into. A failed look-up is logged, not retried:
 * the reason is a courtesy, and the next look-up comes anyway.
 */
static void scheduler_reason(struct job *j, const struct aj_volcano_view *vv, cJSON **keep,
			     const char **why)
{
	struct aj_kube_ref ref = { &aj_res_podgroups, j->v.ns, NULL, NULL };
	struct aj_kube_list_opts o;
	struct aj_kube_status ks;
	struct aj_errors gerr = AJ_ERRORS_INIT;
	char pg[320], sel[400];

	*why = NULL;
	snprintf(pg, sizeof(pg), "%s-%s", j->v.volcano_job, vv->uid ? vv->uid : "");
	ref.name = pg;
	aj_kube_status_init(&ks);
	if (!aj_kube_get(j->k, &ref, keep, &ks, &gerr))
		*why = aj_life_podgroup_reason(*keep);
	if (!*why && (!gerr.nr || ks.reason == AJ_KUBE_NOT_FOUND)) {
		aj_errors_release(&gerr);
		cJSON_Delete(*keep);
		*keep = NULL;
		memset(&o, 0, sizeof(o));
		snprintf(sel, sizeof(sel), "involvedObject.kind=PodGroup,involvedObject.name=%s,"
			 "reason=Unschedulable", pg);
		o.field_selector = sel;
		ref.res = &aj_res_core_events;
		ref.name = NULL;
		if (!aj_kube_list_all(j->k, &ref, &o, keep, NULL, &gerr))
			*why = aj_life_latest_event(*keep);
	}
	if (gerr.nr)
		aj_log(AJ_LOG_WARN, "could not read why the job waits", "ajjob", j->key,
		       "error", gerr.items[0].message, AJ_LOG_END);
	aj_kube_status_release(&ks);
	aj_errors_release(&gerr);
}

/* Seconds since the epoch of the Submitted condition's transition, 0 when unknown. */
static long long submitted_at(const struct job *j)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(j->v.status, "conditions")) {
		const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(c, "type"));

		if (type && !strcmp(type, aj_status_conditions[0])) {
			long long t = aj_timestamp_parse(cJSON_GetStringValue(
				cJSON_GetObjectItemCaseSensitive(c, "lastTransitionTime")), 0);

			return t > 0 ? t : 0;
		}
	}
	return 0;
}

/*
 * Fetch what the plan still needs into s (pointing into *keep and failure),
 * one round trip each. -1 with err when a needed read failed.
 */
static int fetch_needs(struct job *j, const struct aj_volcano_view *vv, unsigned need,
		       struct aj_life_seen *s, cJSON **keep, char *failure, size_t fsize,
		       struct aj_errors *err)
{
	cJSON *pods = NULL;

	if (need & (AJ_LIFE_NEED_FAILURE | AJ_LIFE_NEED_PODS)) {
		if (list_pods(j, &pods, err))
			return -1;
		s->pods_left = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(pods, "items"));
		s->failure = aj_life_failure_from_pods(pods, failure, fsize) ? failure : NULL;
		cJSON_Delete(pods);
		s->have |= AJ_LIFE_NEED_FAILURE | AJ_LIFE_NEED_PODS;
	}
	if (need & AJ_LIFE_NEED_REASON) {
		scheduler_reason(j, vv, keep, &s->reason);
		s->have |= AJ_LIFE_NEED_REASON;
	}
	return 0;
}

/* Carry out a plan: delete, tell once-only Events, write the status, tell the rest, requeue. */
static int act(struct job *j, const struct aj_life_plan *p, struct aj_errors *err)
{
	struct aj_status st = { p->phase, 1, p->reason, p->message, "volcano", j->v.generation,
				NULL, j->secret_renew, p->retry_count, p->flags,
				p->unschedulable };
	size_t i;

	if (p->delete_job) {
		struct aj_kube_ref ref = { &aj_res_volcano_jobs, j->v.ns, j->v.volcano_job, NULL };
		/* Foreground: the Job goes only once the garbage collector removed its pods */
		struct aj_kube_delete_opts o = { AJ_KUBE_PROPAGATION_FOREGROUND, NULL, NULL };
		struct aj_kube_status ks;
		struct aj_errors derr = AJ_ERRORS_INIT;
		int r;

		aj_kube_status_init(&ks);
		r = aj_kube_delete(j->k, &ref, &o, NULL, &ks, &derr);
		if (r && ks.reason == AJ_KUBE_NOT_FOUND)
			r = 0;   /* already gone: the next turn sees it */
		else
			aj_errors_splice(err, &derr);
		aj_errors_release(&derr);
		aj_kube_status_release(&ks);
		if (r)
			return -1;
	}
	for (i = 0; i < p->nr_events; i++)
		if (p->events[i].once)
			post_event(j, p->events[i].warning, p->events[i].reason, "Observe",
				   p->events[i].note, 1);
	if (write_status(j, &st, err))
		return -1;
	for (i = 0; i < p->nr_events; i++)
		if (!p->events[i].once)
			event(j, p->events[i].warning, p->events[i].reason,
			      p->phase == AJ_PHASE_CANCELLING ? "Delete" : "Observe", p->events[i].note);
	if (p->reason_due)
		aj_cache_ajjob_set_reason_due(j->r->cache, j->key, p->reason_due);
	if (p->requeue_after > 0 && j->r->queue &&
	    aj_workqueue_add_after(j->r->queue, j->key, (double)p->requeue_after))
		return aj_errors_oom(err);
	return 0;
}

/*
 * Follow the Volcano Job through the AjJob state machine (lifecycle.h);
 * keep its storage Secret fresh while it runs.
 */
static int observe(struct job *j, struct aj_errors *err)
{
	struct aj_volcano_view vv;
	struct aj_life_seen s;
	struct aj_life_plan plan;
	cJSON *keep = NULL;
	char vkey[320], failure[512];
	int found, ret, round;

	snprintf(vkey, sizeof(vkey), "%s/%s", j->v.ns, j->v.volcano_job);
	found = aj_cache_volcano_get(j->r->cache, vkey, &vv);

	if (found < 0)
		return aj_errors_oom(err);
	if (!found) {
		struct aj_kube_ref ref = { &aj_res_volcano_jobs, j->v.ns, j->v.volcano_job, NULL };
		struct aj_kube_status ks;
		struct aj_errors gerr = AJ_ERRORS_INIT;
		cJSON *obj = NULL;

		/* The watch may lag behind our own create: ask the server. */
		aj_kube_status_init(&ks);
		ret = aj_kube_get(j->k, &ref, &obj, &ks, &gerr);
		if (!ret) {
			found = !aj_cache_volcano_put(j->r->cache, obj) &&
				aj_cache_volcano_get(j->r->cache, vkey, &vv) == 1;
			if (!found)
				ret = aj_errors_oom(err);
		} else if (ks.reason == AJ_KUBE_NOT_FOUND) {
			ret = 0;
		} else {
			aj_errors_splice(err, &gerr);
		}
		aj_errors_release(&gerr);
		aj_kube_status_release(&ks);
		if (ret)
			return -1;
	}
	if (found && j->r->storage && !j->v.cancel) {
		int due = storage_due(j, &vv);

		if (due < 0 || (due && renew_storage(j, err))) {
			aj_volcano_view_release(&vv);
			return due < 0 ? aj_errors_oom(err) : -1;
		}
	}
	memset(&s, 0, sizeof(s));
	s.job = j->v.volcano_job;
	s.prev = j->v.has_phase ? j->v.phase : AJ_PHASE_PENDING;
	s.prev_flags = j->v.conditions;
	s.prev_reason = j->v.unschedulable;
	s.cancel = j->v.cancel;
	s.exists = found;
	s.deleting = vv.deleting;
	s.phase = vv.phase;
	s.retry_count = vv.retry_count;
	s.max_retry = vv.max_retry;
	s.now = (long long)time(NULL);
	s.submitted_at = submitted_at(j);
	s.reason_due = j->v.reason_due;
	aj_life_decide(&s, &plan);
	/* each round fetches at least one missing fact, so this ends */
	for (round = 0; plan.need && round < 3; round++) {
		if (fetch_needs(j, &vv, plan.need, &s, &keep, failure, sizeof(failure), err)) {
			ret = -1;
			goto out;
		}
		aj_life_decide(&s, &plan);
	}
	ret = act(j, &plan, err);
out:
	cJSON_Delete(keep);
	aj_volcano_view_release(&vv);
	return ret;
}

int aj_reconcile(struct aj_reconciler *r, struct aj_kube *k, const char *key,
		 struct aj_errors *err)
{
	struct job j;
	char *created = NULL;
	int found, ret = 0;

	memset(&j, 0, sizeof(j));
	j.r = r;
	j.k = k;
	snprintf(j.key, sizeof(j.key), "%s", key);
	aj_time_now(j.now, sizeof(j.now), j.now_micro, sizeof(j.now_micro));
	found = aj_cache_ajjob_get(r->cache, key, &j.v);
	if (found < 0)
		return aj_errors_oom(err);
	if (found && r->azure && aj_azure_claims(&j.v)) {
		ret = aj_reconcile_azure(r->azure, k, &j.v, NULL, err);
		goto out;
	}
	/*
	 * Gone: kube-controller-manager's garbage collector follows our owner
	 * references to the Volcano Job, and Volcano's to its pods and PodGroup.
	 */
	if (!found || j.v.deleting) {
		aj_free(take_created(r, key));
		goto out;
	}
	if (j.v.has_phase && aj_phase_terminal(j.v.phase) &&
	    j.v.observed_generation == j.v.generation)
		goto out;
	if (!j.v.volcano_job && (created = take_created(r, key))) {
		/* the Secret, if any, was written before the create */
		j.secret_renew = j.v.storage_due > 0 ? j.v.storage_due : 0;
		ret = record_submitted(&j, "volcano", created, 1, err);
		/* Keep it for the retry if the status write failed. */
		if (ret && remember_created(r, key, created))
			ret = aj_errors_oom(err);
	} else if (!j.v.volcano_job && j.v.cancel) {
		/* Cancelled before it was ever submitted: create nothing. */
		struct aj_status st = { AJ_PHASE_CANCELLED, 0, "Cancelled",
					"cancelled by request (aj.dev/cancel) before submission",
					"volcano", j.v.generation, NULL, 0, 0, 0, NULL };

		ret = write_status(&j, &st, err);
		if (!ret)
			event(&j, 0, "Cancelled", "Cancel", st.message);
	} else if (!j.v.volcano_job) {
		if (!j.v.object) {
			struct aj_kube_ref ref = { &aj_res_ajjobs, j.v.ns, j.v.name, NULL };

			if (aj_kube_get(k, &ref, &j.v.object, NULL, err)) {
				ret = -1;
				goto out;
			}
		}
		ret = submit(&j, err);
	} else {
		ret = observe(&j, err);
	}
out:
	aj_free(created);
	aj_ajjob_view_release(&j.v);
	return ret;
}

int aj_reconciler_init(struct aj_reconciler *r, struct aj_cache *cache, const char *instance)
{
	r->cache = cache;
	r->instance = instance;
	r->azure = NULL;
	r->storage = NULL;
	r->queue = NULL;
	aj_strmap_init(&r->created);
	return pthread_mutex_init(&r->lock, NULL) ? -1 : 0;
}

void aj_reconciler_release(struct aj_reconciler *r)
{
	size_t pos = 0;
	const char *k;
	void *v;

	while (aj_strmap_next(&r->created, &pos, &k, &v))
		aj_free(v);
	aj_strmap_release(&r->created);
	pthread_mutex_destroy(&r->lock);
}
