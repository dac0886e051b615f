/*
 * volcano.h - the volcano runner (runner.h) and the pure readings of
 * the objects around a Volcano Job that its observe step uses, for tests.
 *
 * Ownership: the returned strings point into the objects passed.
 */
#ifndef AJ_RUNNER_VOLCANO_H
#define AJ_RUNNER_VOLCANO_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "runner.h"

extern const struct aj_runner aj_runner_volcano;

/* Its needs (runner.h). */
#define AJ_VOLCANO_NEED_FAILURE AJ_NEED_RUNNER         /* the failed pod */
#define AJ_VOLCANO_NEED_REASON (AJ_NEED_RUNNER << 1)   /* the scheduler's reason */
/* What aj_owned_facts.n holds: status.retryCount, spec.maxRetry. */
enum { AJ_VOLCANO_RETRIES, AJ_VOLCANO_MAX_RETRY };

/*
 * From a PodList of the job's pods: the pod that failed it, as
 * "task T, pod P: exit code N (Reason)" or "task T, pod P: Evicted: message",
 * the earliest to finish when several did. 1 with out filled, 0 when none
 * failed (out empty).
 */
int aj_volcano_failure_from_pods(const cJSON *pods, char *out, size_t size);

/* A PodGroup's Unschedulable condition message when it is True, else NULL. */
const char *aj_volcano_podgroup_reason(const cJSON *podgroup);

/* The message of the newest Event in an EventList (lastTimestamp, then eventTime), or NULL. */
const char *aj_volcano_latest_event(const cJSON *events);

#endif
