/*
 * reconcile.h - bring one AjJob and what it owns into agreement, through
 * the runner that serves it (runner/runner.h): choose the runner, then
 * observe from the cache, decide (pure) and act in rounds, and end with
 * one action for the worker to queue.
 *
 * An AjJob not yet resolved is resolved from its template bundle (then the
 * namespace's AjTemplates) and built by its backend; its object is created
 * under a name derived only from the AjJob (so a crash between create and
 * status update can never produce a second one: the retry meets
 * AlreadyExists and adopts it if the AjJob owns it); then the object's state
 * is mirrored into the AjJob status. An invalid template fails the AjJob
 * with every problem listed and creates nothing. Cancelling (annotation
 * aj.dev/cancel: "true") deletes the object (propagation Foreground) and
 * ends in Cancelled once it and its pods are gone. Every transition is also
 * an Event (report.h). A runner that owns no cluster object (Azure's, for
 * aml and sing) follows its job through its own observe, and its finalizer
 * keeps a deleted AjJob until that job has ended. A finished AjJob is
 * deleted (propagation Background) once its time to live is up
 * (aj_decide_ttl), and looked at again then until it is.
 *
 * The reconciler reads the cache and writes through the worker's own
 * client. State: none of its own between calls; what the cache holds by
 * design (runner.h) is all.
 */
#ifndef AJ_RECONCILE_H
#define AJ_RECONCILE_H

#include "runner/runner.h"

struct aj_cache;
struct aj_errors;
struct aj_kube;
struct aj_metrics;

struct aj_placer;
struct aj_podfail;
struct aj_storage_minter;

struct aj_reconciler {
	struct aj_cache *cache;
	const char *instance;     /* this controller's name in Events */
	struct aj_metrics *metrics;   /* phase changes are counted here (jobmetrics.h); NULL: not */
	/* where jobs may add capabilities or mount storage (aj_backend_permit) */
	const char *privileged_namespaces;
	/*
	 * Each runner's own configuration, by aj_runner_slot(), as its
	 * configure hook made it; NULL turns a runner with such a hook off.
	 */
	void *runner_config[AJ_RUNNERS_MAX];
	/* the storage Secret of cluster AjJobs (storage.h); NULL: none written */
	struct aj_storage_minter *storage;
	/* seconds a finished AjJob is kept when its spec does not say; 0: forever */
	long long ttl_after_finished;
	/* ranks a placement AjJob's candidates (placer.h); NULL: placement AjJobs fail */
	struct aj_placer *placer;
	/* the failures the pod watch saw (podfail.h); NULL: no pod watch */
	struct aj_podfail *podfail;
};

/* Shares nothing but what it is given; no release needed. */
void aj_reconciler_init(struct aj_reconciler *r, struct aj_cache *cache, const char *instance);

/*
 * Reconcile the AjJob at key ("ns/name"). The one action to take next
 * (runner.h): done, again after a while at a level, or retry with backoff
 * (API errors, conflicts; err says why). Queues nothing itself.
 */
struct aj_action aj_reconcile(struct aj_reconciler *r, struct aj_kube *k, const char *key,
			      struct aj_errors *err);

#endif
