/*
 * runner.h - one backend's part of the controller, as src/backend/ holds
 * one backend's part of the pipeline. The runners are rows in one table
 * (aj_runners, runner.c); reconcile.c chooses the one that serves an AjJob
 * and drives it. Nothing outside controller/runner/ names a runner.
 *
 * One reconcile of an AjJob:
 *
 *   choose   reconcile.c picks the runner first: the one of its
 *            status.backend, else one whose finalizer it carries, else one
 *            whose object the cache shows it owning, else the one serving
 *            the service it resolves to; an AjJob that resolves
 *            to no runner of this controller is failed by the generic
 *            aj_decide_unresolved(), a finished one has its time to live
 *            kept by aj_decide_finished(); nothing changes runners later;
 *   observe  reconcile.c fills a struct aj_seen from the cache (the AjJob's
 *            record and the record of the object it owns) and the clock;
 *   decide   runner->decide(seen, plan): pure, no I/O, no clock (seen.now),
 *            so every transition is a row in a unit test. A plan either
 *            asks for one more thing (plan.need: facts to fetch, or one
 *            step of AJ_DO_STEPS: one side effect) and is decided again
 *            once it is done, or it is final;
 *   act      reconcile.c takes the step or the final plan's effects (delete,
 *            Events, status, finalizer, notes), asking the runner for its
 *            own (runner->observe for the facts of plan.need outside
 *            AJ_NEED_GENERIC, runner->act for the steps from AJ_DO_RUNNER
 *            on, runner->cancel), and returns the one struct aj_action
 *            aj_plan_action() gives the final plan. The worker alone queues.
 *
 * A reconcile decides at most AJ_DECIDE_ROUNDS times: each round but the
 * last fetches a need or takes a step.
 *
 * A runner that owns no cluster object (owns NULL: its job lives elsewhere,
 * as Azure's) finds it with its observe, names it in status.<member>.jobName
 * and may hold the AjJob with a finalizer of its own until the job ended.
 *
 * State: nothing is kept between reconciles except what the cache holds by
 * design: the AjJob's record (its status, which names the owned object),
 * the owned object's record (fed by the runner's watch) and the
 * controller's notes on the AjJob's record (storage_due, reason_due); and
 * beside the cache, the latest failure the pod watch saw of the AjJob's pods
 * (podfail.h: a courtesy; after a restart only the pods still there tell
 * it again). The owned object's name derives from the AjJob alone, so a
 * crash between two steps loses nothing: the next create meets
 * AlreadyExists and adopts what the AjJob owns. Every timer a plan needs is asked for again by every
 * reconcile (the work queue keeps the earliest).
 *
 * Adding a runner: a const struct aj_runner in one file of this folder and
 * its row in aj_runners (runner.c); see docs/architecture.md.
 *
 * Ownership: a plan points into the aj_seen it was decided from and into
 * its own buffers; a seen state points into the reconcile's own data. The
 * runners are static tables.
 */
#ifndef AJ_RUNNER_H
#define AJ_RUNNER_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "cache.h"
#include "status.h"

struct aj_ajjob_view;
struct aj_errors;
struct aj_jobspec;
struct aj_kube_resource;
struct aj_place_workspace;
struct aj_run;
struct aj_token_cache;
struct aj_views_azure;

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

/*
 * What a plan does. The steps (AJ_DO_STEPS) are one side effect each, taken
 * one per round and recorded in seen.done, then the plan is decided again;
 * the rest are the final plan's, taken in this order.
 */
enum {
	AJ_DO_STORAGE = 1u << 0,    /* step: write the storage Secret (storage.h) */
	AJ_DO_CREATE = 1u << 1,     /* step: create the built objects */
	AJ_DO_EXPIRE = 1u << 7,     /* delete the finished AjJob (its time to live is up) */
	AJ_DO_DELETE = 1u << 2,     /* runner->cancel: delete (or cancel) what the AjJob owns */
	AJ_DO_STATUS = 1u << 3,     /* write the status the plan describes */
	AJ_DO_RELEASE = 1u << 6,    /* remove runner->finalizer: the AjJob may go */
	AJ_DO_STORAGE_NOTE = 1u << 4, /* remember plan.storage_due on the AjJob's record */
	AJ_DO_RETRY = 1u << 5,      /* end with an error: back off and come again */
	/* steps of the runner's own, taken by runner->act */
	AJ_DO_RUNNER = 1u << 8      /* the first of the runner's own */
};
#define AJ_DO_STEPS (AJ_DO_STORAGE | AJ_DO_CREATE | ~(AJ_DO_RUNNER - 1))

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
	long long finished_at;      /* a finished AjJob's: its terminal condition's transition (0: unknown) */
	long long ttl;              /* its spec.ttlSecondsAfterFinished (-1: not set) */
	long long ttl_default;      /* the controller's (0: keep forever) */
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
	/* the same fact as the pod watch recorded it for the object's pods (podfail.h), read
	 * with failure: the pod may be gone before the list; NULL: none recorded */
	const char *pod_failure;
	const char *reason;         /* the scheduler's (or queue's) reason; NULL: none found */
	const char *never;          /* with a reason, aj's fact: the job can never fit the
				     * schedulable nodes (aj_run_never_fits); NULL or "": it could */
	const char *admitted_to;    /* the ClusterQueue Kueue admitted the job to; NULL: unknown */
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
/* Decides in one reconcile, at most: resolve, storage, create, a GET, a final plan and room. */
#define AJ_DECIDE_ROUNDS 8

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
	char reason_more[2][48];    /* aj_decide_owned's own reasons: Resumed, Running */
	char message[1024];
	char note[1024];            /* an Event note that differs from the message */
};

/*
 * What one reconcile ends with (aj_plan_action): done; again after `after`
 * seconds at `level` (the work queue hands out normal keys before low ones
 * and both before idle ones); or retry with the key's backoff (err says
 * why). The worker queues it; nothing else does.
 */
enum aj_action_kind { AJ_ACTION_DONE, AJ_ACTION_AGAIN, AJ_ACTION_RETRY };
enum aj_action_level { AJ_ACTION_NORMAL, AJ_ACTION_LOW, AJ_ACTION_IDLE };
struct aj_action {
	enum aj_action_kind kind;
	double after;               /* seconds (AJ_ACTION_AGAIN; 0: now) */
	enum aj_action_level level;
};

/* A permission the runner needs besides its watch, checked at start-up. */
struct aj_access {
	const char *verb, *group, *resource, *sub;
};

/* An option of a runner: the flag --<flag> and the variable <env> (main.c). */
struct aj_runner_option {
	const char *flag;                   /* "azure-workspace" */
	const char *env;                    /* "AJ_AZURE_WORKSPACE" */
	const char *arg;                    /* the value's name in --help: "S/RG/W" */
	const char *help;
	/* 0 when value is good (a bad flag stops the start, a bad variable is ignored); NULL: any */
	int (*check)(const char *value);
};
#define AJ_RUNNER_OPTIONS_MAX 8

/* What the controller shares with the runners it configures. */
struct aj_runner_env {
	struct aj_token_cache *tokens;      /* the controller's Azure identity (identity.h) */
	const char *ca_file;                /* CA bundle for Azure endpoints; NULL: the system's */
	const char *identity_client_id;     /* a user-assigned managed identity, or NULL */
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
	/*
	 * status.<member> is the runner's detail, written whole (plan.detail):
	 * the cache keeps it whole and every status write carries it over.
	 */
	int member_whole;
	/* Its options (--help shows them under options_title), ending with a NULL flag; NULL: none. */
	const char *options_title;
	const struct aj_runner_option *options;
	/*
	 * Its configuration (aj_run_config) from its options' values (values[i]
	 * for options[i], NULL when not given) and env; *config left NULL turns
	 * the runner off (its services are not served). NULL: it needs none and
	 * is always on. 0 / -1 with err. config_free releases the configuration.
	 */
	int (*configure)(const char *const *values, const struct aj_runner_env *env, void **config,
			 struct aj_errors *err);
	void (*config_free)(void *config);
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
	/*
	 * Placement's view of where its jobs go (place/read/azure.h), read
	 * with its configuration (not NULL) every views_every seconds by the
	 * placer: parts[k] the Azure part of workspace ws[k] (nr of them, in
	 * one read: the VCs into parts[0] only). views_workspace: the workspace
	 * its jobs go to when a template names none (place/workspaces.h).
	 * NULL: its candidates are judged without one. 0 / -1 (OOM).
	 */
	int (*read_views)(const void *config, const struct aj_place_workspace *ws, size_t nr,
			  struct aj_views_azure *parts);
	void (*views_workspace)(const void *config, struct aj_place_workspace *out);
	int views_every;
	/*
	 * Fail-over (place/failover.h) of a runner that owns no cluster object:
	 * the needs its observe fetches for a submitted attempt's state, and
	 * that state from them (pure): started (it runs, or ended on its own;
	 * once a cancel was issued, only an end of its own counts), gone
	 * (nothing of it left). NULL: its attempts are not failed over. A
	 * runner that owns an object needs neither: the object is watched.
	 */
	unsigned attempt_needs;
	void (*attempt)(const struct aj_seen *s, int cancelling, int *started, int *gone);
};

/* --- the table (runner.c); AJ_RUNNERS_MAX rows at most (cache.h) --- */

extern const struct aj_runner *const aj_runners[];
extern const size_t aj_runners_nr;

/* The runner of a target.service, or NULL. */
const struct aj_runner *aj_runner_for(const char *service);
/* Its index in aj_runners (the cache keeps its objects under it). */
size_t aj_runner_slot(const struct aj_runner *r);
/* The service an AjJob that resolves to no runner is told under (status.backend). */
const char *aj_runner_default_service(void);

/* --- shared decisions (decide.c; pure) --- */

/*
 * The AjJob has no object of its own yet: build, write its Secret, create,
 * adopt what it owns, or fail it (invalid, rejected, a name taken). 1 when
 * the plan is made, 0 when the object is recorded and the runner mirrors it.
 */
int aj_decide_submit(const struct aj_runner *r, const struct aj_seen *s, struct aj_plan *p);
/* When a job still waiting, asked why now, is asked again (the reason_due to note). */
long long aj_decide_reason_due(const struct aj_seen *s);
/*
 * A submitted object that waits for its scheduler (Volcano's) or its queue
 * (Kueue's), which the runner's mirror has already said in p (phase,
 * reason, message): ask why (need, whose facts set s->reason) once it has
 * waited AJ_REASON_GRACE, then after as long as it has waited
 * (aj_decide_reason_due), on timed turns at the idle level; in between the
 * reason the status holds stays. A reason just asked for that comes with
 * aj's own fact (s->never: the job can never fit the schedulable nodes) is
 * "<reason>; aj: can never fit: <fact>". With a reason: reason and
 * condition Unschedulable (its message the reason), the message "<kind>
 * <job> is <state>: <reason>", and a Warning Event Unschedulable (its note
 * the reason) when the reason appears or changes, not on every look.
 */
void aj_decide_waiting(const struct aj_runner *r, const struct aj_seen *s, unsigned need,
		       const char *state, struct aj_plan *p);
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
 * object that ended (finished) or still runs (mirror). After a mirror the
 * lines every cluster runner shares: <prefix>Resumed when the Suspended
 * condition goes, never back to an earlier phase (a restarted or suspended
 * job that ran stays Running), <prefix>Running once. p is cleared first.
 * 1 when submitting or the storage made the plan, 0 when the object was
 * followed.
 */
int aj_decide_owned(const struct aj_runner *r, const struct aj_seen *s, int ended,
		     void (*finished)(const struct aj_seen *s, struct aj_plan *p),
		     void (*mirror)(const struct aj_seen *s, struct aj_plan *p), struct aj_plan *p);
/*
 * A finished AjJob (of any runner): wait for its time to live, then delete
 * it (AJ_DO_EXPIRE, told as Event Expired), or keep it. p is cleared first.
 */
void aj_decide_finished(const struct aj_seen *s, struct aj_plan *p);
/*
 * An AjJob that resolves to no runner this controller has (s->build_error
 * says why): Failed (InvalidTemplate), or Cancelled when that was asked.
 * p is cleared first.
 */
void aj_decide_unresolved(const struct aj_seen *s, struct aj_plan *p);
/*
 * The one action a final plan ends the reconcile with: retry when it says
 * so, else the earliest of what it asks for (requeue_low: now at the low
 * level; requeue_after: at the normal or, with requeue_idle, the idle
 * level; storage_requeue: normal), a tie going to the higher level; else done.
 */
struct aj_action aj_plan_action(const struct aj_plan *p);
/*
 * The create of an object answered HTTP code: is the AjJob at fault
 * (admission or validation said no), so retrying cannot help? 4xx except
 * 401 (the controller's own credentials), 404 (the CRD not served), 409
 * and 429 (conflict, throttling). Transport failures (0) and 5xx are retried.
 */
int aj_create_rejected(long code);
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

/* --- what runners may use while acting (run.c) --- */

/*
 * Room a runner's observe may fill for the rest of the reconcile: the
 * reconcile frees keep, and state with state_free, at its end.
 */
struct aj_run_scratch {
	char text[1024];            /* a fact observe read: a failure, a queue's reason */
	char fact[256];             /* aj's fact beside the reason (aj_run_never_fits) */
	char pod_failure[512];      /* the pod watch's record of a failure (aj_run_pod_failure) */
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
/* The runner's configuration (its configure hook's), or NULL. */
void *aj_run_config(const struct aj_run *run);
/*
 * Merge-patch the AjJob (patch is taken), against the resourceVersion this
 * reconcile read; later writes carry the one answered. 0 / -1.
 */
int aj_run_patch_ajjob(struct aj_run *run, cJSON *patch, struct aj_errors *err);
/* Delete the owned object, propagation Foreground; gone already is fine. */
int aj_run_delete_owned(struct aj_run *run, struct aj_errors *err);
/*
 * aj's fact when the owned object's job could never fit the schedulable
 * nodes (the object read with a GET, the nodes from the placer's kept view
 * of them: aj_placer_never_fits) into *fact (the scratch's), else NULL: it
 * could, or it is unknown (no placer, a failed read: logged, the fact is a
 * courtesy). 0 / -1 (out of memory).
 */
int aj_run_never_fits(struct aj_run *run, const char **fact, struct aj_errors *err);
/* The pods in the AjJob's namespace matching a label selector (caller frees *out). */
int aj_run_pods(struct aj_run *run, const char *selector, cJSON **out, struct aj_errors *err);
/*
 * The failure the pod watch recorded for the owned object's pods (podfail.h),
 * formatted into out ("task T, pod P: exit code N (Reason)"); NULL when none
 * (or no pod watch).
 */
const char *aj_run_pod_failure(struct aj_run *run, char *out, size_t size);

#endif
