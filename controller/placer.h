/*
 * placer.h - the controller's views of what limits a start (place/views.h)
 * and the ranking of one placement AjJob's candidates from them.
 *
 * The views are one snapshot shared by every worker: read again
 * (place/read/cluster.h), by the worker that needs them, when older than
 * AJ_PLACER_FRESH seconds (never a list per AjJob: a burst of AjJobs
 * shares one snapshot). The Azure part, when a runner reads one (the
 * azure runner with a workspace: place/read/azure.h with the
 * controller's identity), holds the computes of every workspace named by
 * the candidates ranked so far (the first AJ_PLACER_WORKSPACES met; a
 * candidate of another is UNKNOWN with why) and the VCs, read together
 * on their own, when older than the runner's views_every (30 s: ARM is
 * spared) or when a candidate names a workspace not read yet, and kept
 * across the cluster's reads. The candidates are judged against it as
 * place/judge.h and place/workspaces.h say, the same rows `aj place`
 * prints. A pick that is submitted is charged to the snapshot
 * (place/views.h aj_views_charge) until the part it took room in is read
 * again, so AjJobs placed from one snapshot do not all choose the room
 * only some of them fit in.
 *
 * Beside it, the nodes alone (their allocatable, no pods) tell a job
 * the scheduler calls unschedulable when it could never fit them at all
 * (aj_placer_never_fits); listed at most every AJ_PLACER_NODES_FRESH
 * seconds for all of those jobs together.
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
#include "place/judge.h"
#include "place/rank.h"
#include "place/views.h"
#include "place/waits.h"
#include "place/workspaces.h"

struct aj_errors;
struct aj_kube;

#define AJ_PLACER_FRESH 5
/* The nodes alone (aj_placer_never_fits) are listed again when older than this (seconds). */
#define AJ_PLACER_NODES_FRESH 30
/* Workspaces whose computes are read for placement, at most (one list each per read). */
#define AJ_PLACER_WORKSPACES 4

struct aj_placer {
	pthread_mutex_t lock;
	struct aj_views views;
	long long read_at;        /* Unix seconds; 0: never read */
	struct aj_waits waits;    /* submission to Running of placed AjJobs, by candidate and band */
	/* the Azure part's reader (NULL: none) and its configuration, borrowed */
	int (*read_azure)(const void *config, const struct aj_place_workspace *ws, size_t nr,
			  struct aj_views_azure *parts);
	const void *azure_config;
	int azure_every;          /* seconds */
	long long azure_read_at;  /* Unix seconds; 0: never read */
	struct aj_place_workspace azure_default;   /* where a template naming none goes */
	/* the workspaces candidates named, in the order met, and their parts (the VCs in the first) */
	struct aj_place_workspace azure_ws[AJ_PLACER_WORKSPACES];
	size_t azure_ws_nr;
	struct aj_views_azure azure[AJ_PLACER_WORKSPACES];
	size_t azure_nr;          /* parts read: the first azure_nr of azure_ws */
	struct aj_views empty;    /* the nodes alone, with their allocatable (no pods listed) */
	long long empty_at;       /* Unix seconds; 0: never read */
};

void aj_placer_init(struct aj_placer *p);
void aj_placer_release(struct aj_placer *p);

/*
 * Read the Azure part with read(config) every `every` seconds, for the
 * workspaces the candidates ranked name (workspace(config): the default).
 */
void aj_placer_set_azure(struct aj_placer *p,
			 int (*read)(const void *config, const struct aj_place_workspace *ws,
				     size_t nr, struct aj_views_azure *parts),
			 void (*workspace)(const void *config, struct aj_place_workspace *out),
			 const void *config, int every);

/*
 * Learn from an AjJob as a watch brings it (the start-up list, then each
 * change), as aj_waits_learn() says (`aj place` learns the same way); seen
 * again, it counts once. No store of its own: a restarted controller
 * learns it all again from the AjJobs.
 */
void aj_placer_learn(struct aj_placer *p, const cJSON *ajjob);

/*
 * One row per candidate of c (rows: room for c->nr), in rank order
 * (rank.h), each with the expected wait of its band (0 GPUs: the CPU
 * band; -1 with no history); a candidate not valid, or whose service this
 * controller does not serve (served[i] 0, with why_not[i] as its reason),
 * is EXCLUDED.
 * ctx names the AjJob's objects. The views are read with k when stale at
 * `now`. submit: the pick (aj_place_pick(), when it can start now) will be
 * submitted, and is charged to the snapshot under the same lock
 * (place/judge.h aj_place_charge); 0 for a look that creates nothing.
 * 0 / -1 (out of memory).
 */
int aj_placer_rank(struct aj_placer *p, struct aj_kube *k, const struct aj_candidates *c,
		   const struct aj_build_ctx *ctx, const int *served, const char *const *why_not,
		   long long now, int submit, struct aj_place_row *rows,
		   char (*where)[AJ_PLACE_WHERE_MAX], struct aj_errors *err);

/*
 * aj's own fact when the job of obj (an object of a kind views.h reads, as
 * the cluster holds it) could never fit the schedulable nodes, were they
 * empty (aj_fit_nodes_empty), into out: "asks 40 pods × 8 nvidia.com/gpu =
 * 320; the schedulable nodes hold 64". "" when it could, when obj is of
 * no kind the views know, or when the nodes could not be listed. The
 * nodes come from a view of their own shared by every worker, listed (the
 * nodes alone) when older than AJ_PLACER_NODES_FRESH at `now`: never a
 * list per job. 0 / -1 (out of memory).
 */
int aj_placer_never_fits(struct aj_placer *p, struct aj_kube *k, const cJSON *obj, long long now,
			 char *out, size_t size);

#endif
