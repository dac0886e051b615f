/*
 * cache.h - what the controller remembers of the cluster, fed by the watches
 * and read by the workers.
 *
 * Only what reconciling needs is kept, so memory stays small with many
 * AjJobs. Each AjJob is one compact record: its key, uid, resourceVersion,
 * generation, phase, flags, backend and backend object name, when its
 * storage Secret is next due, its ttlSecondsAfterFinished (the one part of
 * the spec needed after submission), a hash of its status and the few status
 * fields the next status is computed from (the conditions' status and
 * transition time, the name of the object it owns, a status member its
 * runner writes whole: aj_cache.whole); its full
 * object only until it has been submitted (the spec is immutable, and after
 * submission only status mirroring is left). The objects AjJobs own (one
 * table per runner, runner/runner.h) are kept as their uid, owner, whether they are
 * being deleted and what the runner's summarize() takes from them (a phase,
 * flags, two counters, the tasks' pod counts); AjTemplates as their base
 * and config, since they are read on every resolution.
 *
 * AjJob and owned-object records live in the cache's own 64 KiB blocks, not
 * among the parser's short-lived allocations: thousands of small long-lived
 * pieces scattered through a heap that parsing grew would keep most of its
 * pages resident.
 *
 * Keys are "namespace/name". Thread-safe (one lock; every call is short).
 *
 * Ownership: upserts take ownership of the object passed (it is freed or
 * kept); lookups fill caller-owned views whose strings and object copies the
 * caller releases with the matching *_release().
 */
#ifndef AJ_CACHE_H
#define AJ_CACHE_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/strmap.h"
#include "status.h"

struct aj_source;
struct aj_errors;

struct aj_ajjob_view {
	char *ns;
	char *name;
	char *uid;
	char *resource_version;
	long long generation;
	long long observed_generation;   /* -1 when no status yet */
	int has_phase;
	enum aj_phase phase;
	int deleting;                    /* metadata.deletionTimestamp set */
	int cancel;                      /* annotation aj.dev/cancel: "true" */
	char *job;                       /* status.<member>.jobName: the object it owns, or NULL */
	cJSON *object;                   /* full object while not submitted, else NULL */
	/*
	 * What the reconcilers read of the status (phase, backend,
	 * observedGeneration; the conditions' type, status and
	 * lastTransitionTime; the member naming its object; a member kept whole), or NULL when the AjJob has no
	 * status. Whether a new status differs from the one the
	 * AjJob has is aj_cache_json_hash(new) != status_hash.
	 */
	cJSON *status;
	uint64_t status_hash;
	/*
	 * When its storage Secret must be written next (Unix seconds), 0 when
	 * it needs none, AJ_CACHE_DUE_UNKNOWN when not known since the record
	 * was made (the controller started, or a new AjJob took the name).
	 */
	long long storage_due;
	/*
	 * When the scheduler may next be asked why the job waits (Unix
	 * seconds; 0 when not known: the controller's own note, like
	 * storage_due).
	 */
	long long reason_due;
	long long created;               /* metadata.creationTimestamp (Unix seconds), 0: unknown */
	long long ttl;                   /* spec.ttlSecondsAfterFinished, -1 when not set */
	unsigned conditions;             /* bit i: aj_status_conditions[i] is True */
	char *unschedulable;             /* the Unschedulable condition's message, or NULL */
};

#define AJ_CACHE_DUE_UNKNOWN (-1LL)

/*
 * Runners, at most (runner/runner.h): the cache keeps a table of owned
 * objects for each, and the reconciler a configuration.
 */
#define AJ_RUNNERS_MAX 4

/* What the cache keeps of an owned object besides its uid, owner and deletion. */
#define AJ_OWNED_NUMBERS 2
/* facts.flags bit every runner means alike: a pod mounts the AjJob's storage Secret */
#define AJ_OWNED_MOUNTS_STORAGE 1u
/* What a runner's summarize() reads from an object it owns. */
struct aj_owned_facts {
	const char *phase;              /* the backend's word for its state, or NULL */
	unsigned flags;                 /* the runner's bits */
	long long n[AJ_OWNED_NUMBERS];  /* the runner's counters (32 bits in the cache) */
	/* its tasks' pods by state (status.tasks; names point into the object) */
	size_t nr_tasks;
	struct aj_task_pods tasks[AJ_TASKS_MAX];
};

/* An object an AjJob owns, as its runner summarized it (runner/runner.h). */
struct aj_owned_view {
	char *uid;
	char *owner_uid;
	char *owner_name;                /* the controlling AjJob, or NULL */
	char *phase;                     /* aj_owned_facts.phase, or NULL */
	unsigned flags;                  /* aj_owned_facts.flags */
	int deleting;                    /* metadata.deletionTimestamp set */
	long long n[AJ_OWNED_NUMBERS];   /* aj_owned_facts.n */
	struct aj_task_pods *tasks;      /* aj_owned_facts.tasks (one allocation, names in it) */
	size_t nr_tasks;
};

#define AJ_CACHE_MEMBERS 8

/* Records by key (open addressing; each record holds its own key). */
struct aj_cache_table {
	struct aj_cache_rec **slots;
	size_t cap;                      /* power of two, or 0 */
	size_t nr;                       /* live records */
	size_t used;                     /* live records + tombstones */
};

#define AJ_CACHE_CLASSES 64              /* 16-byte size classes up to 1 KiB */

/* Where records live: 64 KiB blocks, freed records reused by size class. */
struct aj_cache_pool {
	void *blocks;                    /* linked through each block's first word */
	char *tail;                      /* unused end of the newest block */
	size_t tail_left;
	void *free[AJ_CACHE_CLASSES];    /* freed records, linked through their first word */
	size_t bytes;                    /* blocks and records too big for a class */
	size_t block_bytes;              /* blocks alone */
	size_t free_bytes;               /* freed records waiting in free[] */
};

struct aj_cache {
	pthread_mutex_t lock;
	struct aj_cache_pool pool;
	struct aj_cache_table ajjobs;
	struct aj_cache_table owned[AJ_RUNNERS_MAX];   /* by runner slot */
	struct aj_strmap templates;      /* key -> cJSON spec */
	size_t object_bytes;             /* full objects of AjJobs not yet submitted */
	/* the status members naming owned objects ("volcano"), each once: records index them */
	char members[AJ_CACHE_MEMBERS][16];
	/*
	 * Status members a runner writes whole (its detail), kept whole in
	 * the record and in the views; the first NULL ends. Set once before
	 * the watches start (the controller names its runners'); not owned.
	 */
	const char *whole[AJ_RUNNERS_MAX];
};

int aj_cache_init(struct aj_cache *c);
void aj_cache_release(struct aj_cache *c);

/* "ns/name" of an object into out; -1 if it has no name or it does not fit. */
int aj_cache_key(const cJSON *obj, char *out, size_t size);

/* Watch feed: take obj (freed or kept). 0 / -1 (OOM: the entry is dropped). */
int aj_cache_ajjob_put(struct aj_cache *c, cJSON *obj);
void aj_cache_ajjob_delete(struct aj_cache *c, const char *key);
/*
 * Remember storage_due (see aj_ajjob_view) for the AjJob at key. It is the
 * controller's own note, kept across watch updates of the same AjJob and
 * gone with it. 1 when set, 0 when the AjJob is not cached.
 */
int aj_cache_ajjob_set_storage_due(struct aj_cache *c, const char *key, long long due);
/* The same for reason_due. */
int aj_cache_ajjob_set_reason_due(struct aj_cache *c, const char *key, long long due);
/* 1 with *v filled, 0 when absent, -1 on OOM. */
int aj_cache_ajjob_get(struct aj_cache *c, const char *key, struct aj_ajjob_view *v);
void aj_ajjob_view_release(struct aj_ajjob_view *v);
size_t aj_cache_ajjob_count(struct aj_cache *c);
/* 1 when the AjJob at key is cached with a phase that is final (Succeeded, Failed, Cancelled). */
int aj_cache_ajjob_ended(struct aj_cache *c, const char *key);
/*
 * fn(ctx, status.backend or NULL, phase) for every cached AjJob (Pending
 * when it has no phase yet), under the cache's lock: fn must not call back
 * into the cache.
 */
void aj_cache_ajjob_phases(struct aj_cache *c,
			   void (*fn)(void *ctx, const char *backend, enum aj_phase phase), void *ctx);
/* Bytes held for AjJobs and owned objects (records, tables, full objects). */
size_t aj_cache_bytes(struct aj_cache *c);

/*
 * A hash of a JSON value that, like cJSON_Compare(a, b, 1), ignores the
 * order of object members: equal values hash alike whoever printed them.
 */
uint64_t aj_cache_json_hash(const cJSON *v);

/*
 * An object of runner slot `slot` (aj_runner_slot()): take obj (freed or
 * kept) with f, what the runner's summarize() read from it. 0 / -1.
 */
int aj_cache_owned_put(struct aj_cache *c, size_t slot, cJSON *obj,
		       const struct aj_owned_facts *f);
void aj_cache_owned_delete(struct aj_cache *c, size_t slot, const char *key);
int aj_cache_owned_get(struct aj_cache *c, size_t slot, const char *key, struct aj_owned_view *v);
void aj_owned_view_release(struct aj_owned_view *v);

int aj_cache_template_put(struct aj_cache *c, cJSON *obj);
void aj_cache_template_delete(struct aj_cache *c, const char *key);
/*
 * A template source over the AjTemplates of namespace ns: canonical name
 * "storage/default" is AjTemplate "storage.default". 0 / -1.
 */
int aj_cache_template_source(struct aj_cache *c, const char *ns,
			     struct aj_source *out, struct aj_errors *err);

/* Which map a bulk operation is about: owned objects are AJ_CACHE_OWNED + slot. */
enum aj_cache_kind { AJ_CACHE_AJJOBS, AJ_CACHE_TEMPLATES, AJ_CACHE_OWNED };

/*
 * After a full list: drop every entry of `kind` whose key is not in keep
 * (objects deleted while no watch was running). Returns how many went.
 */
size_t aj_cache_sweep(struct aj_cache *c, enum aj_cache_kind kind,
		      const struct aj_strmap *keep);

#endif
