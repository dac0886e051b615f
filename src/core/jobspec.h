/*
 * jobspec.h - the typed build boundary.
 *
 * A resolved config (resolve.h) is converted once into a struct aj_jobspec.
 * Conversion checks every key it reads and reports every problem as
 * "path: message" with the position of the offending value
 * ("config.target.gpus_per_node: expected integer, got string \"eight\""),
 * not just the first. Backends read only the JobSpec, never the raw tree;
 * the one exception is `extra` (config._extra copied verbatim), which shared
 * code never interprets and each backend reads under its own schema.
 *
 * Integers that a template may omit use AJ_UNSET; tri-state booleans use
 * AJ_UNSET / 0 / 1.
 *
 * Ownership: the JobSpec owns every string, list and tree it points to;
 * aj_jobspec_release() frees them.
 */
#ifndef AJ_JOBSPEC_H
#define AJ_JOBSPEC_H

#include <stddef.h>

#include "strlist.h"

struct aj_errors;
struct aj_node;

#define AJ_UNSET (-1)

/* target.service when a template names none (the seed's rule). */
#define AJ_DEFAULT_SERVICE "aml"

struct aj_kv {
	char *key;
	char *value;
};

struct aj_kvlist {
	struct aj_kv *items;
	size_t nr;
	size_t alloc;
};

void aj_kvlist_release(struct aj_kvlist *l);
/* Append copies of key and value. 0 / -1 (OOM). */
int aj_kvlist_add(struct aj_kvlist *l, const char *key, const char *value);
const char *aj_kvlist_get(const struct aj_kvlist *l, const char *key);

struct aj_target {
	char *service;            /* "aml" when absent */
	char *name;               /* AML compute, Sing VC */
	char *workspace_name;
	char *subscription_id;
	char *resource_group;
	char *group_policy_name;
	char *namespace_;         /* Kubernetes namespace (volcano) */
	char *queue;
	char *context;
	char *priority_class;
	int gpus_per_node;        /* AJ_UNSET when absent */
	int cpus_per_node;        /* AJ_UNSET when absent */
	char *memory;             /* Kubernetes quantity, e.g. "512Gi" */
	int rdma;                 /* AJ_UNSET / 0 / 1 */
	struct aj_kvlist labels;
	struct aj_kvlist node_selector;   /* every pod's; a task's node_selector wins per key */
};

struct aj_environment {
	char *image;
	char *registry;
	struct aj_strlist setup;
};

struct aj_code {
	char *local_dir;          /* amlt compatibility data only */
	struct aj_strlist ignore;
	/*
	 * SHA-256 (hex) of the code archive placed in the job's shared volume,
	 * or NULL. Not from the template: the CLI sets it after uploading, the
	 * controller from the AjJob's spec.code.digest.
	 */
	char *digest;
};

struct aj_storage {
	char *name;               /* the key under config.storage */
	char *account;
	char *container;
	char *mount_dir;
};

struct aj_container_args {
	char *shm_size;
	int cpus;                 /* AJ_UNSET when absent */
	char *memory;
	struct aj_strlist capabilities;   /* as written; backends normalise */
	char *scratch_mount_path;
	char *scratch_size;
};

struct aj_job {
	char *name;
	char *identity;
	char *sla_tier;
	char *priority;
	struct aj_strlist tags;
	struct aj_kvlist env;             /* submit_args.env, values as text */
	struct aj_container_args container;
	int instance_count;               /* AJ_UNSET when absent */
	int process_count_per_node;       /* AJ_UNSET when absent */
	struct aj_strlist command;        /* the template's job commands */
};

/* One group of identical pods/instances. Homogeneous jobs have one task. */
struct aj_task {
	char *name;
	int replicas;
	int cpus_per_node;                /* AJ_UNSET: from target */
	char *memory;                     /* NULL: from target */
	int gpus_per_node;                /* AJ_UNSET: from target */
	int rdma;                         /* AJ_UNSET / 0 / 1 */
	int processes_per_node;           /* launcher processes */
	struct aj_kvlist node_selector;
	/*
	 * What the task runs after setup and the job commands: its own shell
	 * lines when has_command (they replace the user command), otherwise a
	 * copy of the user command, one argument per item.
	 */
	int has_command;
	struct aj_strlist command;
};

/* Values given on the command line; 0 means not given. */
struct aj_shape_args {
	int nodes;                /* -n */
	int processes;            /* -p / --processes */
	int processes_per_node;   /* --ppn */
};

struct aj_jobspec {
	char *template_name;
	struct aj_target target;
	struct aj_environment environment;
	struct aj_code code;
	struct aj_storage *storage;
	size_t storage_nr;
	struct aj_job *jobs;              /* at least one */
	size_t jobs_nr;

	/* Job shape, resolved from the command line first, then the template. */
	int heterogeneous;                /* jobs[0].sku == "heterogeneous" */
	int nodes;                        /* 0 when heterogeneous */
	int processes;                    /* SKU processes per node (-p); 0 when heterogeneous */
	int processes_per_node;           /* launcher processes (--ppn); 0 when heterogeneous */
	char *sku;                        /* resolved SKU string */
	/*
	 * Homogeneous: one task named after jobs[0] (replicas = nodes).
	 * Heterogeneous: filled by the backend's validate().
	 */
	struct aj_task *tasks;
	size_t tasks_nr;
	size_t tasks_alloc;

	struct aj_strlist command;        /* the user command, one argument each */
	struct aj_node *extra;            /* config._extra verbatim, or NULL */
};

void aj_jobspec_init(struct aj_jobspec *s);
void aj_jobspec_release(struct aj_jobspec *s);
void aj_task_release(struct aj_task *t);

/*
 * Convert a resolved config into s (initialised by the caller). `name` is the
 * template's canonical name; argv/argc the user command. Collects every
 * problem; returns -1 if there was any (s then holds whatever was converted
 * and must still be released).
 *
 * Null values count as absent (a merge cannot remove a key). Every key must
 * be one schema.h declares (amlt's pass-through keys included): an unknown
 * key is reported at its position, with "did you mean" when one is near.
 * Quantities need a unit.
 * args NULL means the shape is unknown (checking a template without a
 * command line): the job shape and the SKU are then not resolved.
 *
 * Shape: nodes = -n, else jobs[0].instance_count; SKU processes = -p, else
 * target.gpus_per_node (0 for a CPU-only template, so a C{processes} SKU
 * needs -p); launcher processes = --ppn, else jobs[0].process_count_per_node,
 * else 1. A homogeneous job gets one task named after jobs[0] ("main" when
 * unnamed). A heterogeneous job refuses -n, -p, --ppn, the target resources
 * and jobs[0].instance_count / process_count_per_node; its tasks come from
 * the backend.
 */
int aj_jobspec_from_config(const struct aj_node *config, const char *name,
			   const struct aj_shape_args *args,
			   const char *const *argv, size_t argc,
			   struct aj_jobspec *s, struct aj_errors *err);

/*
 * What conversion takes besides the config: the shape (NULL: unknown), the
 * user command, and where under _extra the service's backend reads
 * heterogeneous tasks ("volcano.tasks"; NULL: it has none). The pipeline
 * fills it from the backend table, so core names no backend's key.
 */
struct aj_jobspec_in {
	const struct aj_shape_args *shape;
	const char *const *argv;
	size_t argc;
	const char *tasks_key;
};

/*
 * aj_jobspec_from_config() with the inputs in one struct: declared tasks
 * (at in->tasks_key) make a job heterogeneous whatever its SKU says. The
 * service is read as written (the default AJ_DEFAULT_SERVICE); which
 * services exist is the backend table's business.
 */
int aj_jobspec_convert(const struct aj_node *config, const char *name,
		       const struct aj_jobspec_in *in, struct aj_jobspec *s,
		       struct aj_errors *err);

/*
 * Read heterogeneous task declarations into s->tasks, in the order written:
 * `tasks` maps a task name to {replicas, cpus_per_node, memory,
 * gpus_per_node, rdma, processes_per_node} (all required) plus optional
 * node_selector (mapping) and command (list of shell lines, replacing the
 * user command; tasks without one run the user command). Unknown keys are
 * errors (aj_schema_task): this schema is aj's own. `path` names `tasks` in
 * messages ("config._extra.volcano.tasks").
 * Collects every problem; 0 / -1.
 */
int aj_jobspec_read_tasks(const struct aj_node *tasks, const char *path,
			  struct aj_jobspec *s, struct aj_errors *err);

#endif
