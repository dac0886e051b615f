/*
 * run.h - one reconcile of one AjJob as the reconciler holds it (struct
 * aj_run), shared by the reconciler, which fills it, and run.c, which
 * gives the runners what they may use of it (runner.h, "what runners may
 * use while acting"). The runners themselves see it only through those.
 *
 * Ownership: the reconciler initialises and releases every member;
 * pointers to the reconciler's parts (cache, storage, config) are borrowed.
 */
#ifndef AJ_RUNNER_RUN_H
#define AJ_RUNNER_RUN_H

#include <cjson/cJSON.h>

#include "cache.h"
#include "core/buf.h"
#include "pipeline/pipeline.h"
#include "report.h"
#include "runner.h"

struct aj_kube;
struct aj_reconciler;

struct aj_run {
	struct aj_reconciler *r;       /* the reconciler's own (opaque here) */
	struct aj_cache *cache;
	const struct aj_runner *runner;  /* chosen before deciding; NULL: no runner of ours */
	void *config;                  /* the runner's configuration, or NULL */
	struct aj_kube *k;
	struct aj_ajjob_view v;
	struct aj_report rep;
	struct aj_seen s;
	char job[64];                  /* the owned object's name */
	struct aj_owned_view ov;       /* its record (cache, or a GET) */
	struct aj_pipeline pl;         /* the AjJob's template, JobSpec and backend */
	int loaded;                    /* pl holds the JobSpec (resolved once, or failed: build_msg) */
	cJSON *objects;                /* built */
	char *service;                 /* spec.target.service once resolved */
	struct aj_buf build_msg, storage_msg, create_msg;
	struct aj_run_scratch scratch;
	/*
	 * A placement AjJob (placer.h): the status.placement to record before
	 * anything is created (NULL: nothing new), the chosen candidate's
	 * attempt (the aj.dev/attempt label; 0: not a placement), and whether
	 * no candidate can start it now (it waits unplaced).
	 */
	cJSON *placement;
	int attempt;
	int placing_wait;
};

#endif
