/*
 * reconcile.h - bring one AjJob and its backend object into agreement.
 *
 * For a volcano AjJob: resolve its template bundle (then the namespace's
 * AjTemplates), build the Volcano Job, create it under a name derived only
 * from the AjJob (so a crash between create and status update can never
 * produce a second one: the retry meets AlreadyExists and adopts it if the
 * AjJob owns it), then mirror the Volcano Job's phase into the AjJob status.
 * An invalid template fails the AjJob with every problem listed and creates
 * nothing. Cancelling (annotation aj.dev/cancel: "true") deletes the Volcano
 * Job and ends in Cancelled. Every transition is also an Event.
 *
 * The reconciler reads the cache and writes through the worker's own client.
 * Ownership: nothing is kept between calls.
 */
#ifndef AJ_RECONCILE_H
#define AJ_RECONCILE_H

struct aj_cache;
struct aj_errors;
struct aj_kube;
struct aj_metrics;

struct aj_reconciler {
	struct aj_cache *cache;
	const char *instance;     /* this controller's name in Events */
};

/*
 * Reconcile the AjJob at key ("ns/name"). 0 when done (nothing to retry),
 * -1 with err when it should be retried with backoff (API errors, conflicts).
 */
int aj_reconcile(struct aj_reconciler *r, struct aj_kube *k, const char *key,
		 struct aj_errors *err);

#endif
