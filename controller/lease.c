#include "lease.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "events.h"
#include "kube/client.h"
#include "resources.h"

static double monotonic(void *ctx)
{
	struct timespec ts;

	(void)ctx;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int aj_lease_init(struct aj_lease *l, struct aj_kube *k, const char *ns,
		  const char *name, const char *identity)
{
	memset(l, 0, sizeof(*l));
	l->k = k;
	l->duration = 15;
	l->renew_deadline = 10;
	l->retry = 2;
	l->now = monotonic;
	l->ns = aj_strdup(ns);
	l->name = aj_strdup(name);
	l->identity = aj_strdup(identity);
	if (!l->ns || !l->name || !l->identity) {
		aj_lease_release(l);
		return -1;
	}
	return 0;
}

void aj_lease_release(struct aj_lease *l)
{
	aj_free(l->ns);
	aj_free(l->name);
	aj_free(l->identity);
	aj_free(l->observed);
	l->ns = l->name = l->identity = l->observed = NULL;
}

static const char *spec_str(const cJSON *lease, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(lease, "spec"), key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double spec_num(const cJSON *lease, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(lease, "spec"), key);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Set spec to hold the lease for us (acquire: a new holder). */
static int fill_spec(struct aj_lease *l, cJSON *lease, int acquire, const char *holder)
{
	char micro[48];
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(lease, "spec");
	/* Taking over from a previous holder counts as a transition. */
	double transitions = spec_str(lease, "holderIdentity")
			     ? spec_num(lease, "leaseTransitions") + 1 : 0;

	aj_time_now(NULL, 0, micro, sizeof(micro));
	if (!spec && !(spec = cJSON_AddObjectToObject(lease, "spec")))
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "holderIdentity");
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "leaseDurationSeconds");
	cJSON_DeleteItemFromObjectCaseSensitive(spec, "renewTime");
	if (!cJSON_AddStringToObject(spec, "holderIdentity", holder) ||
	    !cJSON_AddNumberToObject(spec, "leaseDurationSeconds", holder[0] ? l->duration : 1) ||
	    !cJSON_AddStringToObject(spec, "renewTime", micro))
		return -1;
	if (acquire) {
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "acquireTime");
		cJSON_DeleteItemFromObjectCaseSensitive(spec, "leaseTransitions");
		if (!cJSON_AddStringToObject(spec, "acquireTime", micro) ||
		    !cJSON_AddNumberToObject(spec, "leaseTransitions", transitions))
			return -1;
	}
	return 0;
}

/* Track when the record last changed, on our own clock. */
static int observe(struct aj_lease *l, const cJSON *lease)
{
	struct aj_buf rec = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *holder = spec_str(lease, "holderIdentity");
	const char *renew = spec_str(lease, "renewTime");
	char *s;

	aj_buf_addf(&rec, "%s|%s", holder ? holder : "", renew ? renew : "");
	s = aj_buf_detach(&rec, NULL);
	if (!s)
		return -1;
	if (!l->observed || strcmp(l->observed, s)) {
		aj_free(l->observed);
		l->observed = s;
		l->observed_at = l->now(l->clock_ctx);
	} else {
		aj_free(s);
	}
	return 0;
}

static int won(struct aj_lease *l)
{
	l->leader = 1;
	l->renewed_at = l->now(l->clock_ctx);
	return 1;
}

int aj_lease_try(struct aj_lease *l, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_leases, l->ns, l->name, NULL };
	struct aj_kube_status ks;
	struct aj_errors gerr = AJ_ERRORS_INIT;
	cJSON *lease = NULL;
	const char *holder;
	double duration;
	int r;

	aj_kube_status_init(&ks);
	r = aj_kube_get(l->k, &ref, &lease, &ks, &gerr);
	if (r && ks.reason == AJ_KUBE_NOT_FOUND) {
		cJSON *meta;

		aj_errors_release(&gerr);
		aj_kube_status_release(&ks);
		lease = cJSON_CreateObject();
		ref.name = NULL;
		if (!lease || !cJSON_AddStringToObject(lease, "apiVersion", "coordination.k8s.io/v1") ||
		    !cJSON_AddStringToObject(lease, "kind", "Lease") ||
		    !(meta = cJSON_AddObjectToObject(lease, "metadata")) ||
		    !cJSON_AddStringToObject(meta, "name", l->name) ||
		    !cJSON_AddStringToObject(meta, "namespace", l->ns) ||
		    fill_spec(l, lease, 1, l->identity)) {
			cJSON_Delete(lease);
			return aj_errors_oom(err);
		}
		/* Losing a create race (AlreadyExists) is just not winning this round. */
		r = aj_kube_create(l->k, &ref, lease, NULL, NULL, err);
		cJSON_Delete(lease);
		return r ? -1 : won(l);
	}
	aj_kube_status_release(&ks);
	aj_errors_splice(err, &gerr);
	if (r)
		return -1;
	if (observe(l, lease)) {
		cJSON_Delete(lease);
		return aj_errors_oom(err);
	}
	holder = spec_str(lease, "holderIdentity");
	duration = spec_num(lease, "leaseDurationSeconds");
	if (holder && holder[0] && strcmp(holder, l->identity) &&
	    l->observed_at + duration > l->now(l->clock_ctx)) {
		l->leader = 0;
		cJSON_Delete(lease);
		return 0;
	}
	/* Ours to renew, or expired/released: take it (resourceVersion guards races). */
	if (fill_spec(l, lease, !holder || strcmp(holder, l->identity), l->identity)) {
		cJSON_Delete(lease);
		return aj_errors_oom(err);
	}
	r = aj_kube_update(l->k, &ref, lease, NULL, NULL, err);
	cJSON_Delete(lease);
	return r ? -1 : won(l);
}

int aj_lease_lost(struct aj_lease *l)
{
	return l->leader && l->now(l->clock_ctx) - l->renewed_at > l->renew_deadline;
}

int aj_lease_give_up(struct aj_lease *l, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_leases, l->ns, l->name, NULL };
	cJSON *lease = NULL;
	const char *holder;
	int r;

	if (!l->leader)
		return 0;
	l->leader = 0;
	if (aj_kube_get(l->k, &ref, &lease, NULL, err))
		return -1;
	holder = spec_str(lease, "holderIdentity");
	if (!holder || strcmp(holder, l->identity)) {
		cJSON_Delete(lease);
		return 0;
	}
	if (fill_spec(l, lease, 0, "")) {
		cJSON_Delete(lease);
		return aj_errors_oom(err);
	}
	r = aj_kube_update(l->k, &ref, lease, NULL, NULL, err);
	cJSON_Delete(lease);
	return r;
}
