/*
 * events.h - Kubernetes Events (events.k8s.io/v1) about AjJobs, so
 * `kubectl describe ajjob` and `kubectl events` tell users what happened.
 *
 * Building is pure (aj_event_build); posting is best effort: an Event that
 * cannot be written is logged, never a reason to fail a reconcile.
 *
 * Ownership: aj_event_build returns a new object (caller frees).
 */
#ifndef AJ_EVENTS_H
#define AJ_EVENTS_H

#include <cjson/cJSON.h>

struct aj_kube;

struct aj_event {
	const char *ns;
	const char *name;         /* the AjJob */
	const char *uid;
	const char *resource_version;
	int warning;              /* Warning, else Normal */
	const char *reason;       /* CamelCase: "VolcanoJobCreated" */
	const char *action;       /* CamelCase verb: "Create", "Resolve" */
	const char *note;         /* for people; cut to the API's 1 KiB limit */
	const char *instance;     /* reporting instance (pod name) */
	const char *now;          /* RFC 3339 with microseconds */
	unsigned long long seq;   /* makes the Event name unique */
	/*
	 * Named after the AjJob's uid and the reason instead: posting it again
	 * creates nothing (AlreadyExists is not an error), so an Event that must
	 * be told once can be posted before the status that records it.
	 */
	int once;
};

cJSON *aj_event_build(const struct aj_event *e);
void aj_event_post(struct aj_kube *k, const struct aj_event *e);

/* Current time as RFC 3339: seconds ("…Z") and micro ("….000000Z"). */
void aj_time_now(char *seconds, size_t ssize, char *micro, size_t msize);

#endif
