/*
 * reconcile.h - bring one AjJob and its backend object into agreement.
 *
 * For a volcano AjJob: resolve its template bundle (then the namespace's
 * AjTemplates), build the Volcano Job, create it under a name derived only
 * from the AjJob (so a crash between create and status update can never
 * produce a second one: the retry meets AlreadyExists and adopts it if the
 * AjJob owns it), then mirror the Volcano Job's phase into the AjJob status.
 * An invalid template fails the AjJob with every problem listed and creates
 * nothing. The AjJob then follows its Volcano Job through the state machine
 * of lifecycle.h. Cancelling (annotation aj.dev/cancel: "true") deletes the
 * Volcano Job (propagation Foreground) and ends in Cancelled once it and its
 * pods are gone. Every transition is also an Event.
 *
 * The reconciler reads the cache and writes through the worker's own client.
 * Ownership: nothing is kept between calls.
 */
#ifndef AJ_RECONCILE_H
#define AJ_RECONCILE_H

#include <pthread.h>

#include "core/strmap.h"

struct aj_cache;
struct aj_errors;
struct aj_kube;

struct aj_azure_forwarder;
struct aj_storage_minter;
struct aj_workqueue;

struct aj_reconciler {
	struct aj_cache *cache;
	const char *instance;     /* this controller's name in Events */
	/*
	 * Volcano Jobs created whose AjJob status is still to be written
	 * (key -> name). Creates go first when many AjJobs arrive at once;
	 * a restart loses nothing, as the next create finds and adopts them.
	 */
	struct aj_strmap created;
	pthread_mutex_t lock;
	/* where jobs may add capabilities or mount storage (aj_backend_permit) */
	const char *privileged_namespaces;
	struct aj_azure_forwarder *azure;   /* aml/sing AjJobs (reconcile_azure.h); NULL: refused */
	/* the storage Secret of volcano AjJobs (storage.h); NULL: none written */
	struct aj_storage_minter *storage;
	/* where AjJobs to look at again later are queued (pending reasons); NULL: none */
	struct aj_workqueue *queue;
};

int aj_reconciler_init(struct aj_reconciler *r, struct aj_cache *cache, const char *instance);
void aj_reconciler_release(struct aj_reconciler *r);

#define AJ_RECONCILE_DONE 0
#define AJ_RECONCILE_REQUEUE 1

/*
 * Reconcile the AjJob at key ("ns/name"). AJ_RECONCILE_DONE when done,
 * AJ_RECONCILE_REQUEUE when it should come back once no other AjJob waits
 * (low priority), -1 with err when it should be retried with backoff (API errors,
 * conflicts).
 */
int aj_reconcile(struct aj_reconciler *r, struct aj_kube *k, const char *key,
		 struct aj_errors *err);

#endif
