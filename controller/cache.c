#include "cache.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/source.h"

struct ajjob_entry {
	char *uid;
	char *resource_version;
	long long generation;
	long long observed_generation;
	int has_phase;
	enum aj_phase phase;
	int deleting;
	int cancel;
	char *volcano_job;
	/* Compact JSON: a parsed tree costs several times more memory. */
	char *object;
	char *status;
};

struct volcano_entry {
	char *owner_uid;
	char *owner_name;
	char *phase;
};

int aj_cache_init(struct aj_cache *c)
{
	aj_strmap_init(&c->ajjobs);
	aj_strmap_init(&c->volcano);
	aj_strmap_init(&c->templates);
	return pthread_mutex_init(&c->lock, NULL) ? -1 : 0;
}

static void ajjob_entry_free(struct ajjob_entry *e)
{
	if (!e)
		return;
	aj_free(e->uid);
	aj_free(e->resource_version);
	aj_free(e->volcano_job);
	aj_free(e->object);
	aj_free(e->status);
	aj_free(e);
}

static void volcano_entry_free(struct volcano_entry *e)
{
	if (!e)
		return;
	aj_free(e->owner_uid);
	aj_free(e->owner_name);
	aj_free(e->phase);
	aj_free(e);
}

void aj_cache_release(struct aj_cache *c)
{
	size_t pos = 0;
	const char *k;
	void *v;

	while (aj_strmap_next(&c->ajjobs, &pos, &k, &v))
		ajjob_entry_free(v);
	pos = 0;
	while (aj_strmap_next(&c->volcano, &pos, &k, &v))
		volcano_entry_free(v);
	pos = 0;
	while (aj_strmap_next(&c->templates, &pos, &k, &v))
		cJSON_Delete(v);
	aj_strmap_release(&c->ajjobs);
	aj_strmap_release(&c->volcano);
	aj_strmap_release(&c->templates);
	pthread_mutex_destroy(&c->lock);
}

static const cJSON *get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = get(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* NULL stays NULL; otherwise a copy, with *oom set when it fails. */
static char *dup_or_null(const char *s, int *oom)
{
	char *r;

	if (!s)
		return NULL;
	r = aj_strdup(s);
	if (!r)
		*oom = 1;
	return r;
}

int aj_cache_key(const cJSON *obj, char *out, size_t size)
{
	const cJSON *meta = get(obj, "metadata");
	const char *ns = str(meta, "namespace"), *name = str(meta, "name");
	int n;

	if (!name)
		return -1;
	n = snprintf(out, size, "%s/%s", ns ? ns : "", name);
	return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* Replace the value at key, freeing the old one with free_fn. */
static int put_locked(struct aj_cache *c, struct aj_strmap *m, const char *key,
		      void *value, void (*free_fn)(void *))
{
	void *old = NULL;
	int r;

	pthread_mutex_lock(&c->lock);
	r = aj_strmap_put(m, key, value, &old);
	if (r)
		/* Keep nothing stale: a missing entry is refetched by the next event. */
		old = aj_strmap_remove(m, key, NULL);
	pthread_mutex_unlock(&c->lock);
	free_fn(old);
	if (r)
		free_fn(value);
	return r;
}

static void free_ajjob(void *p)
{
	ajjob_entry_free(p);
}

static void free_volcano(void *p)
{
	volcano_entry_free(p);
}

static void free_json(void *p)
{
	cJSON_Delete(p);
}

static void remove_locked(struct aj_cache *c, struct aj_strmap *m, const char *key,
			  void (*free_fn)(void *))
{
	void *old;

	pthread_mutex_lock(&c->lock);
	old = aj_strmap_remove(m, key, NULL);
	pthread_mutex_unlock(&c->lock);
	free_fn(old);
}

/*
 * Store a freshly built entry under key. A missing or incomplete one (out of
 * memory) drops the old entry too: a missing entry is refetched by the next
 * event, a stale one would be trusted.
 */
static int store(struct aj_cache *c, struct aj_strmap *m, const char *key, void *entry,
		 int oom, void (*free_fn)(void *))
{
	if (!entry || oom) {
		free_fn(entry);
		remove_locked(c, m, key, free_fn);
		return -1;
	}
	return put_locked(c, m, key, entry, free_fn);
}

int aj_cache_ajjob_put(struct aj_cache *c, cJSON *obj)
{
	const cJSON *meta = get(obj, "metadata"), *status = get(obj, "status");
	const cJSON *gen = get(meta, "generation"), *obs = get(status, "observedGeneration");
	const char *cancel = str(get(meta, "annotations"), "aj.dev/cancel");
	struct ajjob_entry *e;
	char key[320];
	int oom = 0;

	if (aj_cache_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return -1;
	}
	e = aj_calloc(1, sizeof(*e));
	if (e) {
		e->uid = dup_or_null(str(meta, "uid"), &oom);
		e->resource_version = dup_or_null(str(meta, "resourceVersion"), &oom);
		e->generation = cJSON_IsNumber(gen) ? (long long)gen->valuedouble : 0;
		e->observed_generation = cJSON_IsNumber(obs) ? (long long)obs->valuedouble : -1;
		e->has_phase = !aj_phase_parse(str(status, "phase"), &e->phase);
		e->deleting = str(meta, "deletionTimestamp") != NULL;
		e->cancel = cancel && !strcmp(cancel, "true");
		e->volcano_job = dup_or_null(str(get(status, "volcano"), "jobName"), &oom);
		if (status) {
			e->status = cJSON_PrintUnformatted(status);
			oom |= !e->status;
		}
		/* Once submitted for this generation only the summary is needed. */
		if (!e->has_phase || e->phase == AJ_PHASE_PENDING ||
		    e->observed_generation != e->generation) {
			e->object = cJSON_PrintUnformatted(obj);
			oom |= !e->object;
		}
	}
	cJSON_Delete(obj);
	return store(c, &c->ajjobs, key, e, oom, free_ajjob);
}

void aj_cache_ajjob_delete(struct aj_cache *c, const char *key)
{
	remove_locked(c, &c->ajjobs, key, free_ajjob);
}

void aj_ajjob_view_release(struct aj_ajjob_view *v)
{
	aj_free(v->ns);
	aj_free(v->name);
	aj_free(v->uid);
	aj_free(v->resource_version);
	aj_free(v->volcano_job);
	cJSON_Delete(v->object);
	cJSON_Delete(v->status);
	memset(v, 0, sizeof(*v));
}

int aj_cache_ajjob_get(struct aj_cache *c, const char *key, struct aj_ajjob_view *v)
{
	const struct ajjob_entry *e;
	const char *slash = strchr(key, '/');
	int oom = 0, found;

	memset(v, 0, sizeof(*v));
	if (!slash)
		return 0;
	pthread_mutex_lock(&c->lock);
	e = aj_strmap_get(&c->ajjobs, key, &found);
	if (found) {
		v->ns = aj_strndup(key, (size_t)(slash - key));
		v->name = aj_strdup(slash + 1);
		oom = !v->ns || !v->name;
		v->uid = dup_or_null(e->uid, &oom);
		v->resource_version = dup_or_null(e->resource_version, &oom);
		v->generation = e->generation;
		v->observed_generation = e->observed_generation;
		v->has_phase = e->has_phase;
		v->phase = e->phase;
		v->deleting = e->deleting;
		v->cancel = e->cancel;
		v->volcano_job = dup_or_null(e->volcano_job, &oom);
		if (e->object && !(v->object = cJSON_Parse(e->object)))
			oom = 1;
		if (e->status && !(v->status = cJSON_Parse(e->status)))
			oom = 1;
	}
	pthread_mutex_unlock(&c->lock);
	if (oom) {
		aj_ajjob_view_release(v);
		return -1;
	}
	return found;
}

size_t aj_cache_ajjob_count(struct aj_cache *c)
{
	size_t n;

	pthread_mutex_lock(&c->lock);
	n = c->ajjobs.nr;
	pthread_mutex_unlock(&c->lock);
	return n;
}

/* The ownerReference with controller: true and kind AjJob, if any. */
static const cJSON *controller_ref(const cJSON *obj)
{
	const cJSON *ref;

	cJSON_ArrayForEach(ref, get(get(obj, "metadata"), "ownerReferences")) {
		const char *kind = str(ref, "kind");

		if (cJSON_IsTrue(get(ref, "controller")) && kind && !strcmp(kind, "AjJob"))
			return ref;
	}
	return NULL;
}

int aj_cache_volcano_put(struct aj_cache *c, cJSON *obj)
{
	const cJSON *ref = controller_ref(obj);
	struct volcano_entry *e;
	char key[320];
	int oom = 0;

	if (aj_cache_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return -1;
	}
	e = aj_calloc(1, sizeof(*e));
	if (e) {
		e->owner_uid = dup_or_null(str(ref, "uid"), &oom);
		e->owner_name = dup_or_null(str(ref, "name"), &oom);
		e->phase = dup_or_null(str(get(get(obj, "status"), "state"), "phase"), &oom);
	}
	cJSON_Delete(obj);
	return store(c, &c->volcano, key, e, oom, free_volcano);
}

void aj_cache_volcano_delete(struct aj_cache *c, const char *key)
{
	remove_locked(c, &c->volcano, key, free_volcano);
}

void aj_volcano_view_release(struct aj_volcano_view *v)
{
	aj_free(v->owner_uid);
	aj_free(v->owner_name);
	aj_free(v->phase);
	memset(v, 0, sizeof(*v));
}

int aj_cache_volcano_get(struct aj_cache *c, const char *key, struct aj_volcano_view *v)
{
	const struct volcano_entry *e;
	int oom = 0, found;

	memset(v, 0, sizeof(*v));
	pthread_mutex_lock(&c->lock);
	e = aj_strmap_get(&c->volcano, key, &found);
	if (found) {
		v->owner_uid = dup_or_null(e->owner_uid, &oom);
		v->owner_name = dup_or_null(e->owner_name, &oom);
		v->phase = dup_or_null(e->phase, &oom);
	}
	pthread_mutex_unlock(&c->lock);
	if (oom) {
		aj_volcano_view_release(v);
		return -1;
	}
	return found;
}

int aj_cache_template_put(struct aj_cache *c, cJSON *obj)
{
	char key[320];
	cJSON *spec;

	if (aj_cache_key(obj, key, sizeof(key))) {
		cJSON_Delete(obj);
		return -1;
	}
	spec = cJSON_DetachItemFromObjectCaseSensitive(obj, "spec");
	cJSON_Delete(obj);
	if (!spec)
		spec = cJSON_CreateObject();
	if (!spec) {
		remove_locked(c, &c->templates, key, free_json);
		return -1;
	}
	return put_locked(c, &c->templates, key, spec, free_json);
}

void aj_cache_template_delete(struct aj_cache *c, const char *key)
{
	remove_locked(c, &c->templates, key, free_json);
}

/* AjTemplate "storage.default" names canonical "storage/default". */
static char *canonical_of(const char *name)
{
	char *r = aj_strdup(name), *dot;

	if (r && (dot = strchr(r, '.')))
		*dot = '/';
	return r;
}

int aj_cache_template_source(struct aj_cache *c, const char *ns,
			     struct aj_source *out, struct aj_errors *err)
{
	size_t pos = 0, nslen = strlen(ns);
	const char *key;
	void *spec;
	int r = 0;

	if (aj_source_memory_init(out, "AjTemplate"))
		return aj_errors_oom(err);
	pthread_mutex_lock(&c->lock);
	while (!r && aj_strmap_next(&c->templates, &pos, &key, &spec)) {
		struct aj_buf origin = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct aj_node *doc = NULL;
		char *canonical;

		if (strncmp(key, ns, nslen) || key[nslen] != '/')
			continue;
		canonical = canonical_of(key + nslen + 1);
		aj_buf_addf(&origin, "AjTemplate %s", key);
		if (!canonical || origin.failed) {
			r = aj_errors_oom(err);
		} else if (aj_canonical_valid(canonical)) {
			/* A malformed AjTemplate fails the jobs that use it, not others. */
			struct aj_errors ignored = AJ_ERRORS_INIT;

			if (!aj_node_from_cjson(spec, aj_buf_cstr(&origin), &doc, &ignored) &&
			    aj_source_memory_add(out, canonical, doc))
				r = aj_errors_oom(err);
			if (ignored.oom)
				r = aj_errors_oom(err);
			aj_errors_release(&ignored);
		}
		aj_node_free(doc);
		aj_free(canonical);
		aj_buf_release(&origin);
	}
	pthread_mutex_unlock(&c->lock);
	if (r)
		aj_source_release(out);
	return r;
}

size_t aj_cache_sweep(struct aj_cache *c, enum aj_cache_kind kind,
		      const struct aj_strmap *keep)
{
	static void (*const frees[])(void *) = { free_ajjob, free_volcano, free_json };
	struct aj_strmap *m = kind == AJ_CACHE_AJJOBS ? &c->ajjobs
			      : kind == AJ_CACHE_VOLCANO ? &c->volcano : &c->templates;
	size_t pos = 0, gone = 0;
	const char *key;
	void *v;

	pthread_mutex_lock(&c->lock);
	while (aj_strmap_next(m, &pos, &key, &v)) {
		int found;

		aj_strmap_get(keep, key, &found);
		if (found)
			continue;
		/* Removing the current key during iteration is allowed. */
		frees[kind](aj_strmap_remove(m, key, NULL));
		gone++;
	}
	pthread_mutex_unlock(&c->lock);
	return gone;
}
