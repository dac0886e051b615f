/*
 * runner.h - one backend's part of the controller, as src/backend/ holds
 * one backend's part of the pipeline. The runners are rows in one table
 * (aj_runners); reconcile.c drives the one that serves an AjJob.
 *
 * One reconcile of an AjJob:
 *
 *   observe  reconcile.c fills a struct aj_seen from the cache (the AjJob's
 *            record and the record of the object it owns) and the clock;
 *   decide   runner->decide(seen, plan): pure, no I/O, no clock (seen.now),
 *            so every transition is a row in a unit test;
 *   act      reconcile.c carries out the generic steps of the plan (build,
 *            Secret, create, get, delete, status, Events, finalizer,
 *            requeue) and asks the runner for its own (runner->observe for
 *            the facts of plan.need outside AJ_NEED_GENERIC, runner->act for
 *            the steps from AJ_DO_RUNNER on, runner->cancel).
 *
 * A runner that owns no cluster object (owns NULL: its job lives elsewhere,
 * as Azure's) finds it with its observe, names it in status.<member>.jobName
 * and may hold the AjJob with a finalizer of its own until the job ended.
 *
 * A plan that needs facts (plan.need) is decided again once they are in the
 * seen state, at most AJ_DECIDE_ROUNDS times; each round adds at least one.
 *
 * State: nothing is kept between reconciles except what the cache holds by
 * design: the AjJob's record (its status, which names the owned object),
 * the owned object's record (fed by the runner's watch) and the
 * controller's notes on the AjJob's record (storage_due, reason_due). The
 * owned object's name derives from the AjJob alone, so a crash between two
 * steps loses nothing: the next create meets AlreadyExists and adopts what
 * the AjJob owns.
 *
 * Adding a runner: a const struct aj_runner in one file (runner_NAME.c)
 * and its row in aj_runners (reconcile.c); see docs/architecture.md.
 *
 * Ownership: a plan points into the aj_seen it was decided from and into
 * its own buffers; a seen state points into the reconcile's own data. The
 * runners are static tables.
 */
#ifndef AJ_RUNNER_H
#define AJ_RUNNER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "status.h"

struct aj_ajjob_view;
struct aj_errors;
struct aj_jobspec;
struct aj_kube_resource;
struct aj_run;

/* What the cache keeps of an owned object besides its uid, owner and deletion. */
#define AJ_OWNED_NUMBERS 2
/* facts.flags bit every runner means alike: a pod mounts the AjJob's storage Secret */
#define AJ_OWNED_MOUNTS_STORAGE 1u
struct aj_owned_facts {
	const char *phase;              /* the backend's word for its state, or NULL */
	unsigned flags;                 /* the runner's bits */
	long long n[AJ_OWNED_NUMBERS];  /* the runner's counters (32 bits in the cache) */
	/* its tasks' pods by state (status.tasks; names point into the object) */
	size_t nr_tasks;
	struct aj_task_pods tasks[AJ_TASKS_MAX];
};

/* Facts a plan may need. reconcile.c fetches the generic ones (AJ_NEED_GENERIC). */
enum {
	AJ_NEED_BUILD = 1u << 0,    /* resolve the AjJob and build its objects */
	AJ_NEED_OBJECT = 1u << 1,   /* GET the owned object (the watch lags behind a create) */
	AJ_NEED_AJJOB = 1u << 3,    /* the AjJob's object (the cache drops it once submitted): held */
	/* runner->observe fetches the rest */
	AJ_NEED_PODS = 1u << 2,     /* whether the object's pods are gone (pods_left) */
	AJ_NEED_RUNNER = 1u << 8    /* the first of the runner's own */
};
#define AJ_NEED_GENERIC (AJ_NEED_BUILD | AJ_NEED_OBJECT | AJ_NEED_AJJOB)

/* Steps a plan asks for, taken in this order. */
enum {
	AJ_DO_STORAGE = 1u << 0,    /* write the storage Secret (storage.h) */
	AJ_DO_CREATE = 1u << 1,     /* create the built objects */
	AJ_DO_DELETE = 1u << 2,     /* runner->cancel: delete (or cancel) what the AjJob owns */
	AJ_DO_STATUS = 1u << 3,     /* write the status the plan describes */
	AJ_DO_STORAGE_NOTE = 1u << 4, /* remember plan.storage_due on the AjJob's record */
	AJ_DO_RETRY = 1u << 5,      /* end with an error: back off and come again */
	AJ_DO_RELEASE = 1u << 6,    /* remove runner->finalizer: the AjJob may go */
	/* runner->act takes the rest, before the plan is final, recording them in seen.done */
	AJ_DO_RUNNER = 1u << 8      /* the first of the runner's own */
};

/* How the create of the owned object (or the runner's submit) ended. */
enum {
	AJ_CREATE_NONE, AJ_CREATE_OK, AJ_CREATE_EXISTS,
	AJ_CREATE_REJECTED,         /* the AjJob is at fault (create_error, create_reason) */
	AJ_CREATE_RETRY             /* failed for now (create_error): back off and come again */
};

struct aj_seen {
	long long now;              /* Unix seconds */
	/* the AjJob */
	const char *ajjob;          /* its name */
	enum aj_phase prev;         /* its phase now (Pending when it has none) */
	unsigned prev_flags;        /* conditions True now (AJ_STATUS_FLAG of AJ_COND_*) */
	const char *prev_reason;    /* the Unschedulable condition's message, or NULL */
	int cancel;                 /* annotation aj.dev/cancel: "true" */
	int removing;               /* its deletionTimestamp is set (only a finalizer holds it) */
	int held;                   /* it carries runner->finalizer (known with AJ_NEED_AJJOB) */
	int submitted;              /* its status names the owned object */
	long long submitted_at;     /* the Submitted condition's transition (0: unknown) */
	long long changed_at;       /* the latest transition of any condition (0: unknown) */
	long long reason_due;       /* next scheduler look-up (0: none planned: submitted before we started) */
	/* storage Secret: the cache's note (AJ_CACHE_DUE_UNKNOWN: none since the
	 * record was made), else the status' storageRenewAfter (0: none) */
	long long storage_due, storage_renew;
	int storage_on;             /* the controller writes storage Secrets */
	/* the object it owns */
	const char *job;            /* its name */
	const char *uid;            /* its uid when it exists */
	int exists, deleting;
	int ours;                   /* its controller ownerReference is this AjJob */
	struct aj_owned_facts o;
	/* what this reconcile found so far */
	unsigned have;              /* AJ_NEED_* fetched */
	unsigned done;              /* AJ_DO_STORAGE, AJ_DO_CREATE taken */
	const char *build_error;    /* the AjJob's own problems; NULL: built */
	const char *storage_error;  /* the Secret was not written (why); NULL: written */
	int storage_retry;          /* ...and writing it again may help */
	long long storage_written;  /* when the Secret written is due again (0: none needed) */
	int create;                 /* AJ_CREATE_* */
	const char *create_error;   /* the API server's refusal */
	const char *create_reason;  /* the reason a refusal is told under; NULL: <prefix>Rejected */
	/* runner facts, fetched for its needs */
	const char *failure;        /* "task worker, pod P: exit code 3 (Error)"; NULL: none */
	const char *reason;         /* the scheduler's reason; NULL: none found */
	long long pods_left;        /* pods still carrying the job's name */
	const char *forbidden;      /* why the AjJob may not use what it names; NULL: it may */
	const cJSON *detail;        /* status.<member> as observed, written whole; NULL: none */
	double every;               /* seconds between looks at a job no watch reports on */
};

/* A submitted job waits this long before the scheduler is asked why (seconds)... */
#define AJ_REASON_GRACE 5
/* ...and then again after as long as it has waited, at least this... */
#define AJ_REASON_EVERY 15
/* ...and at most this: a queue of thousands of Pending jobs costs a few look-ups a second. */
#define AJ_REASON_MAX 300

#define AJ_PLAN_EVENTS 3
#define AJ_DECIDE_ROUNDS 4

struct aj_plan_event {
	int warning;
	const char *reason;
	const char *action;         /* CamelCase verb: "Create", "Observe" */
	const char *note;
	/*
	 * Posted under a name made of the AjJob's uid and the reason (before the
	 * status), so a controller that dies between the two and posts again
	 * creates no second Event: it is told exactly once.
	 */
	int once;
};

struct aj_plan {
	unsigned need;              /* AJ_NEED_* still to fetch before acting */
	unsigned act;               /* AJ_DO_* */
	/* the status (AJ_DO_STATUS) */
	enum aj_phase phase;
	int submitted;              /* the Submitted condition */
	const char *reason;         /* CamelCase */
	unsigned flags;             /* AJ_STATUS_FLAG(AJ_COND_*) */
	const char *unschedulable;
	long long retry_count;
	long long storage_renew_after;  /* status' renewal time; 0: keep */
	const char *job;            /* name the owned object in the status; NULL: keep */
	const struct aj_task_pods *tasks;  /* the object's tasks (into the seen state); 0: none */
	size_t nr_tasks;
	struct aj_plan_event events[AJ_PLAN_EVENTS];
	size_t nr_events;
	long long reason_due;       /* next reason look-up to remember; 0: no change */
	long long storage_due;      /* with AJ_DO_STORAGE_NOTE */
	long long storage_requeue;  /* seconds to the Secret's next write; 0: none queued here */
	double requeue_after;       /* seconds; 0: none (a watch event brings it back) */
	const cJSON *detail;        /* status.<member> to write whole (points into seen); NULL: keep */
	int requeue_idle;           /* the requeue waits at the idle level, behind every create and status write */
	int requeue_low;            /* come back once no AjJob waits for its create */
	char reason_buf[64];
	char message[1024];
	char note[1024];            /* an Event note that differs from the message */
};

/* A permission the runner needs besides its watch, checked at start-up. */
struct aj_access {
	const char *verb, *group, *resource, *sub;
};

struct aj_runner {
	const char *name;                   /* "volcano" */
	const char *const *services;        /* target.service values it runs; NULL ends */
	const char *kind;                   /* for people: "Volcano Job" */
	const char *reason_prefix;          /* of the shared reasons: "VolcanoJob" + "Created" */
	const char *status_member;          /* status.<member>.jobName names its object */
	/* the object it creates and watches (a controller ownerReference to its
	 * AjJob); NULL when it owns nothing in the cluster */
	const struct aj_kube_resource *owns;
	const char *owns_crd;               /* "jobs.batch.volcano.sh", named by /readyz */
	/*
	 * Its finalizer on the AjJobs it serves, or NULL: an AjJob being
	 * deleted that carries it is this runner's to let go (AJ_DO_RELEASE).
	 */
	const char *finalizer;
	/* off (its services not served) unless the controller configures it (aj_run_config) */
	int configured;
	/*
	 * The resources of the builder's objects after the first (which is the
	 * owned object, created last): created before it, in order, each with
	 * a controller ownerReference to the AjJob and not watched; one already
	 * there is taken as is. NULL: the builder returns one object.
	 */
	const struct aj_kube_resource *const *also;
	size_t also_nr;
	const struct aj_access *access;     /* ends with a NULL verb */
	/* What the cache keeps of an owned object (pure; obj is read only). */
	void (*summarize)(const cJSON *obj, struct aj_owned_facts *out);
	/* The owned object's name for AjJob `ajjob` (stable, valid). */
	void (*object_name)(const char *ajjob, char *out, size_t size);
	/* (seen, now) -> plan; pure. */
	void (*decide)(const struct aj_seen *s, struct aj_plan *p);
	/* Fetch the needs outside AJ_NEED_GENERIC into s (setting s->have). 0 / -1. */
	int (*observe)(struct aj_run *run, unsigned need, struct aj_seen *s,
		       struct aj_errors *err);
	/* Take the steps of act from AJ_DO_RUNNER on into s (setting s->done). 0 / -1. */
	int (*act)(struct aj_run *run, unsigned act, struct aj_seen *s, struct aj_errors *err);
	/* Delete (or cancel) what the AjJob owns (AJ_DO_DELETE). 0 / -1. */
	int (*cancel)(struct aj_run *run, struct aj_errors *err);
};

/* Rows in aj_runners, at most. */
#define AJ_RUNNERS_MAX 4

extern const struct aj_runner *const aj_runners[];
extern const size_t aj_runners_nr;

/* The runner of a target.service, or NULL. */
const struct aj_runner *aj_runner_for(const char *service);
/* Its index in aj_runners (the cache keeps its objects under it). */
size_t aj_runner_slot(const struct aj_runner *r);

/* --- shared decisions (decide.c; pure) --- */

/*
 * The AjJob has no object of its own yet: build, write its Secret, create,
 * adopt what it owns, or fail it (invalid, rejected, a name taken). 1 when
 * the plan is made, 0 when the object is recorded and the runner mirrors it.
 */
int aj_decide_submit(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p);
/* When a job still waiting, asked why now, is asked again (the reason_due to note). */
long long aj_decide_reason_due(const struct aj_seen *s);
/* Renew the storage Secret when due (adds to p; 1 when p waits for a need). */
int aj_decide_storage(const struct aj_seen *s, struct aj_plan *p);
/* Cancel requested or under way: delete, wait for the pods, Cancelled. */
void aj_decide_cancel(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p);
/* The owned object went before the job ended: Failed. */
void aj_decide_gone(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p);
/*
 * The outline of every cluster runner's decide(): submit or adopt, renew
 * storage, then cancel (a job that ended before the cancel was acted on
 * keeps its outcome), the object gone, or the runner's own mapping of an
 * object that ended (finished) or still runs (mirror). p is cleared first.
 * 1 when submitting or the storage made the plan, 0 when the object was
 * followed.
 */
int aj_decide_owned(const struct aj_runner *r, const struct aj_seen *s, int ended,
		     void (*finished)(const struct aj_seen *s, struct aj_plan *p),
		     void (*mirror)(const struct aj_seen *s, struct aj_plan *p), struct aj_plan *p);
/* What a finished AjJob's time to live says (aj_decide_ttl). */
enum { AJ_TTL_KEEP, AJ_TTL_WAIT, AJ_TTL_DELETE };
/*
 * A finished AjJob's time to live, like a batch/v1 Job's: ttl is its
 * spec.ttlSecondsAfterFinished (-1 when not set: the controller's dflt
 * counts), 0 keeps it forever; finished is when it finished (its terminal
 * condition's transition, Unix seconds; 0 unknown: kept). AJ_TTL_WAIT with
 * *wait the seconds left, counted from the finish time even when that is
 * ahead of now (clock skew), or AJ_TTL_DELETE once they are up.
 */
int aj_decide_ttl(long long ttl, long long dflt, long long finished, long long now,
		  long long *wait);

/*
 * After a summarize() filled f's tasks: while the object runs (not ended),
 * a task's pods not created yet count as pending too; an ended object with
 * no pod left to count (Volcano deletes them all when a job fails) tells
 * nothing of its tasks (nr_tasks 0) rather than that none ran.
 */
void aj_owned_tasks_settle(struct aj_owned_facts *f, int ended);
void aj_plan_event(struct aj_plan *p, int warning, const char *reason, const char *action,
		   const char *note, int once);
/* Failed before anything was submitted (or with a name taken): the AjJob is at fault. */
void aj_plan_fail(struct aj_plan *p, const char *reason, const char *action, const char *message);
/* Cancelled (aj.dev/cancel) before anything was submitted. */
void aj_plan_cancelled(struct aj_plan *p);
/*
 * An object name for AjJob `ajjob`: stable, a DNS-1035 label (lower case,
 * other characters '-', "j-" in front of a first character that is no
 * letter), at most max characters (longer: a prefix and 8 hex digits of a
 * hash of the whole name).
 */
void aj_runner_object_name(const char *ajjob, size_t max, char *out, size_t size);

/* --- what runners may use while acting (reconcile.c) --- */

/*
 * Room a runner's observe may fill for the rest of the reconcile:
 * reconcile.c frees keep, and state with state_free, at its end.
 */
struct aj_run_scratch {
	char text[512];
	cJSON *keep;
	void *state;
	void (*state_free)(void *state);
};

struct aj_run_scratch *aj_run_scratch(struct aj_run *run);
struct aj_kube *aj_run_kube(struct aj_run *run);
const char *aj_run_ns(const struct aj_run *run);
/* "ns/name" of the AjJob, for logs. */
const char *aj_run_key(const struct aj_run *run);
/* The AjJob as the cache (or AJ_NEED_AJJOB, AJ_NEED_BUILD) gave it. */
const struct aj_ajjob_view *aj_run_ajjob(const struct aj_run *run);
/* Its JobSpec and what the backend built (objects[0] first), once AJ_NEED_BUILD built; else NULL. */
const struct aj_jobspec *aj_run_spec(const struct aj_run *run);
cJSON *aj_run_built(const struct aj_run *run);
/* The runner's configuration (aj_reconciler.runner_config), or NULL. */
void *aj_run_config(const struct aj_run *run);
/*
 * Merge-patch the AjJob (patch is taken), against the resourceVersion this
 * reconcile read; later writes carry the one answered. 0 / -1.
 */
int aj_run_patch_ajjob(struct aj_run *run, cJSON *patch, struct aj_errors *err);
/* Delete the owned object, propagation Foreground; gone already is fine. */
int aj_run_delete_owned(struct aj_run *run, struct aj_errors *err);
/* The pods in the AjJob's namespace matching a label selector (caller frees *out). */
int aj_run_pods(struct aj_run *run, const char *selector, cJSON **out, struct aj_errors *err);

#endif
