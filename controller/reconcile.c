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
#include "log.h"
#include "reconcile_azure.h"
#include "resources.h"
#include "status.h"
#include "storage.h"

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

static void event(struct job *j, int warning, const char *reason, const char *action,
		  const char *note)
{
	struct aj_event e = {
		j->v.ns, j->v.name, j->v.uid, j->v.resource_version, warning, reason,
		action, note, j->r->instance, j->now_micro, event_seq()
	};

	aj_event_post(j->k, &e);
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
				j->v.generation, NULL, 0 };

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
				service, j->v.generation, vname, j->secret_renew };

	snprintf(msg, sizeof(msg), "Volcano Job %s submitted", vname);
	if (write_status(j, &st, err))
		return -1;
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
				int permanent = ks.reason == AJ_KUBE_INVALID;

				if (permanent) {
					struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);

					errors_text(&cerr, &msg);
					ret = fail_job(j, service, "VolcanoJobRejected",
						       aj_buf_cstr(&msg), err);
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

static int cancel(struct job *j, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_volcano_jobs, j->v.ns, j->v.volcano_job, NULL };
	struct aj_kube_delete_opts o = { AJ_KUBE_PROPAGATION_BACKGROUND, NULL, NULL };
	struct aj_kube_status ks;
	struct aj_status st = { AJ_PHASE_CANCELLED, 1, "Cancelled",
				"cancelled by request (aj.dev/cancel)", "volcano",
				j->v.generation, NULL, 0 };
	struct aj_errors derr = AJ_ERRORS_INIT;
	int r;

	aj_kube_status_init(&ks);
	r = aj_kube_delete(j->k, &ref, &o, NULL, &ks, &derr);
	if (r && ks.reason == AJ_KUBE_NOT_FOUND) {
		r = 0;   /* already gone */
		aj_errors_release(&derr);
	}
	aj_errors_splice(err, &derr);
	aj_kube_status_release(&ks);
	if (r || write_status(j, &st, err))
		return -1;
	event(j, 0, "Cancelled", "Delete", "Volcano Job deleted on request");
	return 0;
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

/* Mirror the Volcano Job's phase into the AjJob; keep its storage Secret fresh. */
static int observe(struct job *j, struct aj_errors *err)
{
	struct aj_volcano_view vv;
	char vkey[320], msg[512];
	enum aj_phase p;
	int found, ret;

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
		if (ret && ks.reason == AJ_KUBE_NOT_FOUND) {
			struct aj_status st = { AJ_PHASE_FAILED, 1, "VolcanoJobDeleted", msg,
						"volcano", j->v.generation, NULL, 0 };

			aj_errors_release(&gerr);
			aj_kube_status_release(&ks);
			snprintf(msg, sizeof(msg), "Volcano Job %s was deleted before it finished",
				 j->v.volcano_job);
			if (write_status(j, &st, err))
				return -1;
			event(j, 1, "VolcanoJobDeleted", "Observe", msg);
			return 0;
		}
		aj_kube_status_release(&ks);
		aj_errors_splice(err, &gerr);
		if (ret)
			return -1;
		ret = aj_cache_volcano_put(j->r->cache, obj) ||
		      aj_cache_volcano_get(j->r->cache, vkey, &vv) != 1;
		if (ret)
			return aj_errors_oom(err);
	}
	if (j->r->storage) {
		int due = storage_due(j, &vv);

		if (due < 0 || (due && renew_storage(j, err))) {
			aj_volcano_view_release(&vv);
			return due < 0 ? aj_errors_oom(err) : -1;
		}
	}
	p = aj_phase_from_volcano(vv.phase);
	snprintf(msg, sizeof(msg), "Volcano Job %s is %s", j->v.volcano_job,
		 vv.phase ? vv.phase : "Pending");
	{
		static const char *const reasons[] = {
			"VolcanoJobPending", "VolcanoJobPending", "VolcanoJobRunning",
			"VolcanoJobCompleted", "VolcanoJobFailed", "VolcanoJobAborted"
		};
		struct aj_status st = { p, 1, reasons[p], msg, "volcano", j->v.generation, NULL,
					j->secret_renew };
		int was = j->v.has_phase ? (int)j->v.phase : -1;

		ret = write_status(j, &st, err);
		if (!ret && was != (int)p)
			event(j, p == AJ_PHASE_FAILED, reasons[p], "Observe", msg);
	}
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
	/* Gone: the API server's garbage collector follows our owner references. */
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
					"volcano", j.v.generation, NULL, 0 };

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
	} else if (j.v.cancel) {
		ret = cancel(&j, err);
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
