/* The failures of aj's pods, as the pod watch saw them (podfail.h). */
#include "podfail.h"

#include <stdio.h>
#include <string.h>

#include "cache.h"
#include "core/alloc.h"
#include "core/json.h"
#include "core/timestamp.h"

#define AJJOB_LABEL "aj.dev/ajjob"
#define TASK_LABEL "aj.dev/task"

struct aj_podfail_entry {
	struct aj_pod_failure f;
	unsigned long long seq;
};

/* The earliest container of list to end with a non-zero code, into f (the earlier one kept). */
static void earliest_code(const cJSON *list, struct aj_pod_failure *f)
{
	const cJSON *cs;

	cJSON_ArrayForEach(cs, list) {
		const cJSON *t = aj_json_get(aj_json_get(cs, "state"), "terminated");
		const cJSON *code = aj_json_get(t, "exitCode");
		const char *r = aj_json_str(t, "reason"), *name = aj_json_str(cs, "name");
		long long at;

		if (!cJSON_IsNumber(code) || code->valuedouble == 0)
			continue;
		at = aj_timestamp_parse(aj_json_str(t, "finishedAt"), 0);
		if (f->has_code && !(at >= 0 && (f->at < 0 || at < f->at)))
			continue;
		f->has_code = 1;
		f->exit_code = code->valueint;
		f->at = at;
		snprintf(f->container, sizeof(f->container), "%s", name ? name : "");
		snprintf(f->reason, sizeof(f->reason), "%s", r ? r : "");
	}
}

/* The uid of the object controlling obj, into out ("" none). */
static void controller_uid(const cJSON *meta, char *out, size_t size)
{
	const cJSON *ref;

	out[0] = '\0';
	cJSON_ArrayForEach(ref, aj_json_get(meta, "ownerReferences")) {
		const char *uid = aj_json_str(ref, "uid");

		if (cJSON_IsTrue(aj_json_get(ref, "controller")) && uid) {
			snprintf(out, size, "%s", uid);
			return;
		}
	}
}

int aj_pod_failure_read(const cJSON *pod, struct aj_pod_failure *out)
{
	const cJSON *meta = aj_json_get(pod, "metadata"), *st = aj_json_get(pod, "status");
	const char *ns = aj_json_str(meta, "namespace"), *name = aj_json_str(meta, "name");
	const char *ajjob = aj_json_str(aj_json_get(meta, "labels"), AJJOB_LABEL);
	const char *task = aj_json_str(aj_json_get(meta, "labels"), TASK_LABEL);
	const char *phase = aj_json_str(st, "phase");
	int n;

	memset(out, 0, sizeof(*out));
	out->at = -1;
	if (!ns || !name || !ajjob)
		return 0;
	earliest_code(aj_json_get(st, "initContainerStatuses"), out);
	earliest_code(aj_json_get(st, "containerStatuses"), out);
	if (!out->has_code) {
		const char *r = aj_json_str(st, "reason"), *m = aj_json_str(st, "message");

		if (!phase || strcmp(phase, "Failed"))
			return 0;
		snprintf(out->reason, sizeof(out->reason), "%s%s%s", r ? r : "Failed",
			 m ? ": " : "", m ? m : "");
	}
	n = snprintf(out->ajjob, sizeof(out->ajjob), "%s/%s", ns, ajjob);
	if (n < 0 || (size_t)n >= sizeof(out->ajjob))
		return 0;
	snprintf(out->task, sizeof(out->task), "%s", task ? task : "?");
	snprintf(out->pod, sizeof(out->pod), "%s", name);
	controller_uid(meta, out->owner_uid, sizeof(out->owner_uid));
	out->collateral = aj_json_get(meta, "deletionTimestamp") != NULL;
	return 1;
}

void aj_pod_failure_format(const struct aj_pod_failure *f, char *out, size_t size)
{
	if (f->has_code)
		snprintf(out, size, "task %s, pod %s: exit code %d%s%s%s", f->task, f->pod,
			 f->exit_code, f->reason[0] ? " (" : "", f->reason, f->reason[0] ? ")" : "");
	else
		snprintf(out, size, "task %s, pod %s: %s", f->task, f->pod, f->reason);
}

int aj_pod_failure_wins(const struct aj_pod_failure *cand, const struct aj_pod_failure *kept)
{
	if (cand->collateral != kept->collateral)
		return !cand->collateral;
	/* the later; an end not known counts as later (events come in order) */
	return !(cand->at >= 0 && kept->at >= 0 && cand->at < kept->at);
}

/* The same failure told again (a later event of the same pod)? */
static int same(const struct aj_pod_failure *a, const struct aj_pod_failure *b)
{
	return !strcmp(a->pod, b->pod) && !strcmp(a->owner_uid, b->owner_uid) &&
	       !strcmp(a->container, b->container) && !strcmp(a->reason, b->reason) &&
	       a->has_code == b->has_code && a->exit_code == b->exit_code && a->at == b->at &&
	       a->collateral == b->collateral;
}

void aj_podfail_owner(struct aj_cache *c, struct aj_pod_failure *f)
{
	const char *slash = strchr(f->ajjob, '/');
	size_t slot;

	for (slot = 0; slash && slot < AJ_RUNNERS_MAX; slot++) {
		struct aj_owned_view ov;
		int found = aj_cache_owned_get(c, slot, f->ajjob, &ov);

		if (found == 1 && ov.owner_name) {
			char key[sizeof(f->ajjob)];

			snprintf(key, sizeof(key), "%.*s/%s", (int)(slash - f->ajjob), f->ajjob,
				 ov.owner_name);
			memcpy(f->ajjob, key, sizeof(key));
		}
		aj_owned_view_release(&ov);
		if (found == 1)
			return;
	}
}

int aj_podfail_init(struct aj_podfail *m, size_t max)
{
	memset(m, 0, sizeof(*m));
	m->max = max ? max : AJ_PODFAIL_MAX;
	return pthread_mutex_init(&m->lock, NULL) ? -1 : 0;
}

void aj_podfail_release(struct aj_podfail *m)
{
	aj_free(m->e);
	pthread_mutex_destroy(&m->lock);
	m->e = NULL;
	m->nr = m->alloc = 0;
}

/* The entry of key, or NULL (locked). */
static struct aj_podfail_entry *find(struct aj_podfail *m, const char *key)
{
	size_t i;

	for (i = 0; i < m->nr; i++)
		if (!strcmp(m->e[i].f.ajjob, key))
			return &m->e[i];
	return NULL;
}

int aj_podfail_put(struct aj_podfail *m, const struct aj_pod_failure *f)
{
	struct aj_podfail_entry *e;
	int r = 1;

	pthread_mutex_lock(&m->lock);
	e = find(m, f->ajjob);
	if (e) {
		if (!aj_pod_failure_wins(f, &e->f) || same(f, &e->f))
			r = 0;
	} else if (m->nr < m->max) {
		if (AJ_GROW(m->e, m->nr + 1, m->alloc))
			r = -1;
		else
			e = &m->e[m->nr++];
	} else {
		size_t i;

		/* full: the AjJob recorded longest ago gives way */
		e = &m->e[0];
		for (i = 1; i < m->nr; i++)
			if (m->e[i].seq < e->seq)
				e = &m->e[i];
	}
	if (r == 1) {
		e->f = *f;
		e->seq = ++m->seq;
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

int aj_podfail_get(struct aj_podfail *m, const char *key, const char *uid,
		   struct aj_pod_failure *out)
{
	struct aj_podfail_entry *e;
	int r = 0;

	pthread_mutex_lock(&m->lock);
	e = find(m, key);
	if (e && (!uid || !strcmp(uid, e->f.owner_uid))) {
		*out = e->f;
		r = 1;
	}
	pthread_mutex_unlock(&m->lock);
	return r;
}

void aj_podfail_forget(struct aj_podfail *m, const char *key)
{
	struct aj_podfail_entry *e;

	pthread_mutex_lock(&m->lock);
	e = find(m, key);
	if (e)
		*e = m->e[--m->nr];
	pthread_mutex_unlock(&m->lock);
}

size_t aj_podfail_count(struct aj_podfail *m)
{
	size_t n;

	pthread_mutex_lock(&m->lock);
	n = m->nr;
	pthread_mutex_unlock(&m->lock);
	return n;
}
