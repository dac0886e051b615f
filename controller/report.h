/*
 * report.h - the one status and Event layer of every runner: what a
 * reconcile tells about an AjJob goes through here, so every runner writes
 * its status the same way (a merge patch carrying the resourceVersion it
 * read, nothing when unchanged) and names the controller's identity in its
 * Events.
 *
 * Ownership: the report points at the reconcile's AjJob view and client;
 * it owns its resourceVersion copy (aj_report_release).
 */
#ifndef AJ_REPORT_H
#define AJ_REPORT_H

#include <cjson/cJSON.h>

#include "status.h"

struct aj_ajjob_view;
struct aj_buf;
struct aj_cache;
struct aj_errors;
struct aj_kube;
struct aj_metrics;

struct aj_report {
	struct aj_kube *k;
	const struct aj_ajjob_view *v;
	const char *instance;     /* this controller's identity, in Events */
	/* where a phase change is counted (jobmetrics.h); NULL: nowhere */
	struct aj_metrics *metrics;
	/*
	 * The cache a written AjJob goes into at once (NULL: none), so the next
	 * reconcile builds on it (and its resourceVersion) instead of meeting a
	 * Conflict until the watch brings it.
	 */
	struct aj_cache *cache;
	char *rv;                 /* resourceVersion to write against (follows our writes) */
	char key[320];            /* "ns/name", for logs */
	char now[40];             /* RFC 3339, for condition transitions */
	char now_micro[48];       /* with microseconds, for Events */
};

/* Reads the clock once: every time written in this reconcile is the same. 0 / -1 (OOM). */
int aj_report_init(struct aj_report *rep, struct aj_kube *k, const struct aj_ajjob_view *v,
		   const char *instance);
void aj_report_release(struct aj_report *rep);

/*
 * Write the status st describes, with extra's members (e.g. "azure")
 * replacing the ones carried over (extra NULL: none). Nothing is written
 * when it equals the AjJob's. A written phase change is counted in
 * rep->metrics. 0 / -1 with err (a stale resourceVersion conflicts: the
 * retry reads the cache again).
 */
int aj_report_status(struct aj_report *rep, const struct aj_status *st, const cJSON *extra,
		     struct aj_errors *err);

/* Post an Event about the AjJob (best effort; see events.h for once). */
void aj_report_event(struct aj_report *rep, int warning, const char *reason,
		     const char *action, const char *note, int once);

/* Fail the AjJob (phase Failed, nothing submitted) and say why in a Warning Event. */
int aj_report_fail(struct aj_report *rep, const char *backend, const char *reason,
		   const char *action, const char *message, struct aj_errors *err);

#endif
