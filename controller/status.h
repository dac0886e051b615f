/*
 * status.h - the AjJob status the controller writes, computed purely from
 * what it observed, so every transition is unit-tested without a cluster.
 *
 * Phases and condition types are the AjJob contract's (core/ajjob.h).
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

#include <stddef.h>

#include <cjson/cJSON.h>

/* the phases, condition types and status.placement: the AjJob contract */
#include "core/ajjob.h"

/* Bits of aj_status.flags: AJ_STATUS_FLAG(AJ_COND_RESTARTING) and so on. */
#define AJ_STATUS_FLAG(cond) (1u << (cond))
/* status.<member> member: when the storage Secret is due for renewal (RFC 3339) */
#define AJ_STATUS_RENEW "storageRenewAfter"

/*
 * One task of a job (status.tasks[]): its pods by state, the same for every
 * backend. Pods not created yet count as pending while the job runs.
 */
struct aj_task_pods {
	const char *name;
	long long replicas, pending, running, succeeded, failed;
};

/* Tasks a status holds at most (the CRD's maxItems). */
#define AJ_TASKS_MAX 64

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
	/*
	 * status.tasks and the line status.tasksSummary says them in; none
	 * (nr_tasks 0): both left out.
	 */
	const struct aj_task_pods *tasks;
	size_t nr_tasks;
	/*
	 * Status members some runner writes whole (its detail; up to a NULL or
	 * `nr_kept`): carried over from prev as they are, the runner's own
	 * member included (its jobName is in it); NULL: none.
	 */
	const char *const *kept;
	size_t nr_kept;
};

/*
 * The tasks in one line: the state most pods are headed for first, then the
 * rest that has pods ("2/2 running", "0/4 running, 4 pending", "2/2
 * succeeded", "1/2 failed, 1 succeeded"). Cut to size, never overrun.
 */
void aj_status_tasks_summary(const struct aj_task_pods *tasks, size_t n, char *out, size_t size);

/*
 * The status to write, given the current one (prev; NULL or not an object
 * when there is none) and `now` (RFC 3339, for transitions). *changed says
 * whether it differs from prev. NULL on out of memory.
 */
cJSON *aj_status_next(const cJSON *prev, const struct aj_status *st,
		      const char *now, int *changed);

#endif
