/*
 * pipeline.h - the one way from a template to a backend's objects, for the
 * CLI and the controller alike:
 *
 *   source + inputs -> resolve -> JobSpec -> backend: prepare, validate,
 *   permit -> code digest -> build
 *
 * The CLI passes a directory source (src/io/source_dir.h) and the command
 * line; the controller passes the AjJob's bundle (core/ajjob.h), chained
 * with its AjTemplate cache, and the AjJob's shape, command and code. Both
 * get the same template, JobSpec and objects, because nothing between the
 * source and the objects is done anywhere else.
 *
 * This layer sits above core and the backends: it may include both, core
 * includes neither it nor any backend. Pure: no I/O, no clock.
 *
 * Ownership: the caller owns the source (it must outlive the load) and the
 * inputs; struct aj_pipeline owns its template and JobSpec
 * (aj_pipeline_release); the backend is a static table row. build() hands
 * the caller a cJSON array (cJSON_Delete).
 */
#ifndef AJ_PIPELINE_H
#define AJ_PIPELINE_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "backend/backend.h"
#include "core/jobspec.h"
#include "core/resolve.h"

struct aj_errors;
struct aj_source;

struct aj_pipeline_in {
	struct aj_source *source;          /* where the files come from */
	const char *template_name;         /* canonical leaf name, "template/gpu" */
	/* -n/-p/--ppn or the AjJob's shape; NULL: unknown (template validate) */
	const struct aj_shape_args *shape;
	const char *const *argv;           /* the user command, one item per argument */
	size_t argc;
	/*
	 * The code the job takes: the AjJob's spec.code.digest, or NULL. It is
	 * set as given (aj_pipeline_set_code), and a backend that cannot ship
	 * code for this spec refuses it at build. The CLI passes NULL and sets
	 * the digest once it knows one, where the backend ships code.
	 */
	const char *code_digest;
	/*
	 * The permit check (aj_backend_permit) of a backend whose objects go to
	 * the cluster: the namespace they go to and the controller's
	 * privileged-namespace list. permitted NULL skips it: the CLI does not
	 * know the controller's setting, and the controller checks every AjJob
	 * before it builds anything.
	 */
	const char *namespace_;
	const char *permitted;
};

struct aj_pipeline {
	struct aj_template tpl;            /* the resolved template */
	struct aj_jobspec spec;            /* its JobSpec, prepared by the backend */
	const struct aj_backend *backend;  /* target.service's row; NULL before load */
};

void aj_pipeline_init(struct aj_pipeline *p);
void aj_pipeline_release(struct aj_pipeline *p);

/* Only the first step: resolve in->template_name into p->tpl. 0 / -1. */
int aj_pipeline_resolve(const struct aj_pipeline_in *in, struct aj_pipeline *p,
			struct aj_errors *err);

/*
 * Resolve in->template_name (unless aj_pipeline_resolve() did), convert it with the shape and command, find
 * the backend for target.service, let it prepare and validate the spec,
 * check the permit, and set the code digest. Reports every problem it can
 * (a heterogeneous job's tasks even when the conversion failed); problems
 * no value caused are given the leaf's file. 0, or -1 with err filled (p
 * then holds what was done and must still be released).
 */
int aj_pipeline_load(const struct aj_pipeline_in *in, struct aj_pipeline *p,
		     struct aj_errors *err);

/*
 * The key check of a component, a resolved file without `base`:
 * whatever leaf inherits it, its config merges at config, so its whole
 * tree is checked against the config's keys, each part of _extra that a
 * backend reads against that backend module's keys, and each declared task
 * against a task's. Unknown keys are errors at their position, with "did
 * you mean" when a key is near. 0 / -1.
 */
int aj_pipeline_check_keys(const struct aj_template *tpl, struct aj_errors *err);

/*
 * The one place a job's code digest is set (a digest already set is
 * replaced). Callers that choose what to show or send ask
 * p->backend->code_route(&p->spec) first: AJ_CODE_NONE ships no code.
 * 0 / -1 (out of memory).
 */
int aj_pipeline_set_code(struct aj_pipeline *p, const char *digest, struct aj_errors *err);

/* The backend's objects for the loaded job into a new array *out. 0 / -1. */
int aj_pipeline_build(const struct aj_pipeline *p, const struct aj_build_ctx *ctx,
		      cJSON **out, struct aj_errors *err);

#endif
