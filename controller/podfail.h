/*
 * podfail.h - the failures of aj's pods as the pod watch saw them, so a
 * failed job's message can name the pod that failed it after its backend
 * deleted the pod (Volcano deletes a failed job's pods, sometimes before the
 * controller lists them).
 *
 * The watch (controller.c, label selector aj.dev/ajjob) reads each pod
 * event with aj_pod_failure_read() (pure) and keeps a failure in a small
 * bounded map, one failure per AjJob ("namespace/name": the AjJob that owns
 * the object named by the pod's aj.dev/ajjob label, aj_podfail_owner): no
 * pod is cached. A runner's observe takes the
 * failure recorded for its object (aj_podfail_get, matched by the owning
 * object's uid) into its seen state; the decision stays pure.
 *
 * Which failure is kept: a pod that failed on its own (no deletionTimestamp
 * when its container ended) over one killed because its job was being torn
 * down; between two of the same kind the latest, so after restarts the one
 * that ended the job. The map holds AJ_PODFAIL_MAX failures at most; a new
 * AjJob's failure beyond that replaces the oldest recorded. An AjJob's
 * failure is forgotten when it is deleted or ends (aj_podfail_forget).
 *
 * Thread-safe (one lock; every call is short). Ownership: the map owns its
 * entries; callers own the struct aj_pod_failure they pass or fill.
 */
#ifndef AJ_PODFAIL_H
#define AJ_PODFAIL_H

#include <pthread.h>
#include <stddef.h>

#include <cjson/cJSON.h>

/* AjJobs with a failure recorded, at most (an entry is about 720 bytes). */
#define AJ_PODFAIL_MAX 512

/* One pod's failure; strings cut to their buffers. */
struct aj_pod_failure {
	/*
	 * "namespace/name" of the AjJob: read as the pod's aj.dev/ajjob label,
	 * which names the object the AjJob owns (the AjJob's own name unless
	 * that is no DNS label or too long), then aj_podfail_owner()'s
	 */
	char ajjob[320];
	char owner_uid[40];       /* uid of the object controlling the pod ("" unknown) */
	char task[64];            /* its aj.dev/task label ("?" unknown) */
	char pod[64];
	char container[64];       /* "" when no container ended with a code */
	char reason[128];         /* the container's reason (Error, OOMKilled), else the pod's
				   * reason and message (Evicted: ...); "" none */
	int has_code;             /* exit_code is a container's */
	int exit_code;
	long long at;             /* when it ended (Unix seconds; the event's order when unknown) */
	int collateral;           /* the pod was being deleted when it failed */
};

/*
 * Did this pod fail? A container (init containers too) terminated with a
 * non-zero exit code (the earliest to end), else the pod's phase Failed
 * (evicted, ...). 1 with *out filled, 0 when not (or it carries no
 * aj.dev/ajjob label or namespace). Pure.
 */
int aj_pod_failure_read(const cJSON *pod, struct aj_pod_failure *out);

/* "task T, pod P: exit code N (Reason)", or "task T, pod P: Reason". */
void aj_pod_failure_format(const struct aj_pod_failure *f, char *out, size_t size);

/* Does `cand` replace `kept` as the AjJob's failure (the rule above)? Pure. */
int aj_pod_failure_wins(const struct aj_pod_failure *cand, const struct aj_pod_failure *kept);

struct aj_cache;

/*
 * Turn f->ajjob from the owned object's key into its AjJob's, as the cache
 * has the object (any runner's table) controlled by an AjJob; left as it
 * is when the cache has none (the label is then the AjJob's name).
 */
void aj_podfail_owner(struct aj_cache *c, struct aj_pod_failure *f);

struct aj_podfail_entry;

struct aj_podfail {
	pthread_mutex_t lock;
	struct aj_podfail_entry *e;   /* nr live entries, alloc allocated */
	size_t nr, alloc, max;
	unsigned long long seq;       /* insertion order, for the oldest */
};

/* max: entries at most (0: AJ_PODFAIL_MAX). 0 / -1. */
int aj_podfail_init(struct aj_podfail *m, size_t max);
void aj_podfail_release(struct aj_podfail *m);
/*
 * Record f for f->ajjob. 1 when the AjJob's failure changed (queue it), 0
 * when the one kept wins or is the same, -1 on OOM.
 */
int aj_podfail_put(struct aj_podfail *m, const struct aj_pod_failure *f);
/*
 * The failure recorded for AjJob key whose pod the object of uid owned
 * (NULL uid: any). 1 with *out filled, 0 when none.
 */
int aj_podfail_get(struct aj_podfail *m, const char *key, const char *uid,
		   struct aj_pod_failure *out);
void aj_podfail_forget(struct aj_podfail *m, const char *key);
size_t aj_podfail_count(struct aj_podfail *m);

#endif
