/*
 * placer.h - the controller's views of what limits a start (place/views.h)
 * and the ranking of one placement AjJob's candidates from them.
 *
 * The views are one snapshot shared by every worker: read again, by the
 * worker that needs them, when older than AJ_PLACER_FRESH seconds, with
 * one list each of the nodes, the pods not finished, Volcano's Queues and
 * Kueue's ClusterQueues, LocalQueues and ResourceFlavors (never a list per
 * AjJob: a burst of AjJobs shares one snapshot). A part whose list fails
 * keeps why (its CRD not installed, the list refused), and the candidates
 * that need it are UNKNOWN with that reason.
 *
 * Each valid candidate's objects are built as the runner would build them
 * and its ask read from the first (views.h); a candidate whose objects go
 * outside the cluster (Azure) is UNKNOWN: the controller reads no Azure
 * capacity for placement yet.
 *
 * Ownership: struct aj_placer owns its snapshot (aj_placer_release); rows
 * borrow their names from the candidates. Thread-safe: the snapshot is
 * read and judged under the placer's lock.
 */
#ifndef AJ_PLACER_H
#define AJ_PLACER_H

#include <pthread.h>

#include "backend/backend.h"
#include "pipeline/candidates.h"
#include "place/rank.h"
#include "place/views.h"
#include "place/waits.h"

struct aj_errors;
struct aj_kube;
struct aj_kube_resource;

#define AJ_PLACER_FRESH 5

/*
 * The lists the views are read with, each in all namespaces whatever the
 * controller watches, and what placement loses when that list is refused:
 * the start-up permission check (controller.c) warns with it. Ends with a
 * NULL res.
 */
struct aj_placer_list {
	const struct aj_kube_resource *res;
	const char *without;
};
extern const struct aj_placer_list aj_placer_lists[];

struct aj_placer {
	pthread_mutex_t lock;
	struct aj_views views;
	long long read_at;        /* Unix seconds; 0: never read */
	struct aj_waits waits;    /* submission to Running of placed AjJobs, by candidate and band */
};

void aj_placer_init(struct aj_placer *p);
void aj_placer_release(struct aj_placer *p);

/*
 * Learn from an AjJob as a watch brings it (the start-up list, then each
 * change): a placed one running on its last attempt gives one sample of
 * that candidate's wait (Running's transition minus the attempt's
 * submission; for one that succeeded before its Running was written, its
 * end), in the band of the attempt's GPUs; seen again, it counts
 * once (waits.h). No store of its own: a restarted controller learns it
 * all again from the AjJobs.
 */
void aj_placer_learn(struct aj_placer *p, const cJSON *ajjob);

/*
 * One row per candidate of c (rows: room for c->nr), in rank order
 * (rank.h), each with the expected wait of its band (0 GPUs: the CPU
 * band; -1 with no history); a candidate not valid, or whose service this
 * controller does not serve (served[i] 0, with why_not[i] as its reason),
 * is EXCLUDED.
 * ctx names the AjJob's objects. The views are read with k when stale at
 * `now`. 0 / -1 (out of memory).
 */
int aj_placer_rank(struct aj_placer *p, struct aj_kube *k, const struct aj_candidates *c,
		   const struct aj_build_ctx *ctx, const int *served, const char *const *why_not,
		   long long now, struct aj_place_row *rows, char (*where)[128],
		   struct aj_errors *err);

#endif
