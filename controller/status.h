/*
 * status.h - the AjJob status the controller writes, computed purely from
 * what it observed, so every transition is unit-tested without a cluster.
 *
 * Phase: Pending → Submitted → Running → Succeeded | Failed | Cancelled.
 * Conditions (metav1.Condition shape), always all four once written:
 *   Submitted  the backend object exists (or was created and has finished)
 *   Running    the backend reports the job running
 *   Succeeded  finished successfully
 *   Failed     finished unsuccessfully, was cancelled, or could not be built
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
	AJ_PHASE_CANCELLED
};

/* The condition types written, in the order written. */
#define AJ_STATUS_CONDITIONS 4
/* status.volcano member: when the storage Secret is due for renewal (RFC 3339) */
#define AJ_STATUS_RENEW "storageRenewAfter"
extern const char *const aj_status_conditions[AJ_STATUS_CONDITIONS];

const char *aj_phase_name(enum aj_phase p);
/* 0 and *out set, or -1 for an unknown name. */
int aj_phase_parse(const char *s, enum aj_phase *out);
int aj_phase_terminal(enum aj_phase p);

/*
 * A Volcano Job's status.state.phase as an AjJob phase. An empty or missing
 * phase is Submitted (Volcano has not looked at it yet); unknown phases too.
 */
enum aj_phase aj_phase_from_volcano(const char *volcano_phase);

struct aj_status {
	enum aj_phase phase;
	int submitted;            /* the backend object was created */
	const char *reason;       /* CamelCase, e.g. "VolcanoJobCreated" */
	const char *message;      /* for people; "" for none */
	const char *backend;      /* "volcano", "aml", "sing" */
	long long generation;     /* metadata.generation this status is about */
	const char *volcano_job;  /* NULL: keep what prev had */
	/*
	 * When the storage Secret just written is due for renewal (Unix time),
	 * written as status.volcano.storageRenewAfter so that a restarted
	 * controller knows it without reading the Secret (it may not) or
	 * minting again; 0: keep what prev had.
	 */
	long long storage_renew_after;
};

/*
 * The status to write, given the current one (prev; NULL or not an object
 * when there is none) and `now` (RFC 3339, for transitions). *changed says
 * whether it differs from prev. NULL on out of memory.
 */
cJSON *aj_status_next(const cJSON *prev, const struct aj_status *st,
		      const char *now, int *changed);

#endif
