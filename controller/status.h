/*
 * status.h - the AjJob status the controller writes, computed purely from
 * what it observed, so every transition is unit-tested without a cluster.
 *
 * Phase: Pending → Submitted → Running → Succeeded | Failed, and from any
 * of the first three Cancelling → Cancelled (docs/api.md draws it). A phase
 * never goes back: aj_phase_rank() orders them.
 * Conditions (metav1.Condition shape), always all seven once written:
 *   Submitted      the backend object exists (or was created and has finished)
 *   Running        the backend reports the job running
 *   Succeeded      finished successfully
 *   Failed         finished unsuccessfully, was cancelled, or could not be built
 *   Restarting     Volcano is replacing the job's pods (status.retryCount counts)
 *   Suspended      the Volcano Job was aborted; a ResumeJob Command resumes it
 *   Unschedulable  the scheduler's reason a submitted job waits (its message)
 * A condition's lastTransitionTime moves only when its status changes, so
 * repeated reconciles of an unchanged job write nothing.
 *
 * Ownership: aj_status_next() returns a new cJSON object (caller frees).
 */
#ifndef AJ_STATUS_H
#define AJ_STATUS_H

#include <cjson/cJSON.h>

enum aj_phase {
	AJ_PHASE_PENDING,
	AJ_PHASE_SUBMITTED,
	AJ_PHASE_RUNNING,
	AJ_PHASE_SUCCEEDED,
	AJ_PHASE_FAILED,
	AJ_PHASE_CANCELLED,
	AJ_PHASE_CANCELLING
};

/* The condition types written, in the order written. */
#define AJ_STATUS_CONDITIONS 7
/* Indexes into aj_status_conditions of the conditions aj_status.flags sets. */
enum { AJ_COND_RESTARTING = 4, AJ_COND_SUSPENDED = 5, AJ_COND_UNSCHEDULABLE = 6 };
#define AJ_STATUS_FLAG(cond) (1u << (cond))
/* status.<member> member: when the storage Secret is due for renewal (RFC 3339) */
#define AJ_STATUS_RENEW "storageRenewAfter"
extern const char *const aj_status_conditions[AJ_STATUS_CONDITIONS];

const char *aj_phase_name(enum aj_phase p);
/* 0 and *out set, or -1 for an unknown name. */
int aj_phase_parse(const char *s, enum aj_phase *out);
int aj_phase_terminal(enum aj_phase p);
/* Pending 0 < Submitted 1 < Running 2 < Cancelling 3 < the terminal ones 4. */
int aj_phase_rank(enum aj_phase p);

struct aj_status {
	enum aj_phase phase;
	int submitted;            /* the backend object was created */
	const char *reason;       /* CamelCase, e.g. "VolcanoJobCreated" */
	const char *message;      /* for people; "" for none */
	const char *backend;      /* "volcano", "aml", "sing" */
	long long generation;     /* metadata.generation this status is about */
	/* status.<member>.jobName names the object the AjJob owns ("volcano"); NULL: none */
	const char *member;
	const char *job;          /* its jobName; NULL: keep what prev had */
	/*
	 * When the storage Secret just written is due for renewal (Unix time),
	 * written as status.<member>.storageRenewAfter so that a restarted
	 * controller knows it without reading the Secret (it may not) or
	 * minting again; 0: keep what prev had.
	 */
	long long storage_renew_after;
	/* Volcano's status.retryCount, written when > 0; 0: keep what prev had */
	long long retry_count;
	/* AJ_STATUS_FLAG(AJ_COND_*): which of the last three conditions are True */
	unsigned flags;
	/* the Unschedulable condition's message when it is True (else the status message) */
	const char *unschedulable;
};

/*
 * The status to write, given the current one (prev; NULL or not an object
 * when there is none) and `now` (RFC 3339, for transitions). *changed says
 * whether it differs from prev. NULL on out of memory.
 */
cJSON *aj_status_next(const cJSON *prev, const struct aj_status *st,
		      const char *now, int *changed);

#endif
