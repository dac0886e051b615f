/*
 * support.h - helpers shared by the unit tests.
 *
 * aj_test_yaml() parses a YAML literal into a tree (failing the test on a
 * parse error); aj_test_errors_contain() checks that some formatted entry of
 * an error list contains a fragment. aj_test_spec() turns a YAML literal
 * into a JobSpec, and aj_test_json_*() read built objects by path. Trees and
 * specs returned are the caller's.
 */
#ifndef AJ_TEST_SUPPORT_H
#define AJ_TEST_SUPPORT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <cjson/cJSON.h>

struct aj_build_ctx;
struct aj_fit_result;
struct aj_errors;
struct aj_jobspec;
struct aj_node;
struct aj_shape_args;

struct aj_node *aj_test_yaml(const char *text);
int aj_test_errors_contain(const struct aj_errors *e, const char *fragment);
/* All entries formatted, one per line (static buffer, for failure messages). */
const char *aj_test_errors_text(const struct aj_errors *e);

/* Convert the `config` of a YAML literal into s (initialised here); fails the test on error. */
void aj_test_spec(const char *yaml, const struct aj_shape_args *args,
		  const char *const *argv, size_t argc, struct aj_jobspec *s);

/*
 * Prepare, validate and build yaml with `service`, making allocation n fail for
 * n = 0, 1, ... until it succeeds; every failure must be a clean "out of
 * memory" with nothing built. Returns the number of allocations needed.
 */
long aj_test_backend_oom(const char *service, const char *yaml, const struct aj_shape_args *args,
			 const char *const *argv, size_t argc, const struct aj_build_ctx *ctx);

/* The checks of `service` (prepare, validate) refuse yaml with a message holding fragment. */
void aj_test_backend_rejects(const char *service, const char *yaml,
			     const struct aj_shape_args *args, const char *fragment);

/*
 * Built objects: the value at a path such as
 * `spec.tasks[0].template.spec.containers[0].resources.limits."nvidia.com/gpu"`
 * (quote keys holding dots), or NULL. The typed forms fail the test when the
 * value is missing or of another type.
 */
const cJSON *aj_test_json_at(const cJSON *root, const char *path);
const char *aj_test_json_str(const cJSON *root, const char *path);
long aj_test_json_int(const cJSON *root, const char *path);
int aj_test_json_size(const cJSON *root, const char *path);

/*
 * The kubelet turns $$ into $ (and expands $(VAR)) in a container's command
 * and env: aj doubles every $, so undoing that must give back every byte,
 * and a lone $ (which the kubelet could expand) must never appear. Returns
 * a malloc'd string (free).
 */
char *aj_test_kubelet_view(const char *s);
/* env[i] of a built container is name=value. */
void aj_test_env_is(const cJSON *container, int i, const char *name, const char *value);

struct aj_plan;
/*
 * A controller plan's Events are `want`: "Reason[!] Reason..." in order, !
 * marking one told once; fails the test naming the case otherwise.
 */
void aj_test_plan_events(const char *name, const char *want, const struct aj_plan *p);

struct aj_runner;
struct aj_owned_facts;
struct aj_task_pods;
/* r->summarize() of the object json into *f; the object (the names point into it) to free. */
cJSON *aj_test_summarize(const struct aj_runner *r, const char *json, struct aj_owned_facts *f);
/* A task's counts are want's; fails the test naming the case otherwise. */
void aj_test_task_is(const char *name, const struct aj_task_pods *got,
		     const struct aj_task_pods *want);

/* A fit answer (place/fit.h) is state (enum aj_place_state) with exactly reason; `what` names the case. */
void aj_test_fit_check(const struct aj_fit_result *got, int state, const char *reason,
		       const char *what);

#endif
