/*
 * common.h - what the builders share: the one shell quoting function and
 * the tail of every job script (user text reaches a shell only through
 * these), the kubelet's escaping, Kubernetes names and paths, the kernel's
 * and the API server's size limits, and cJSON builders that remember
 * running out of memory. Pure.
 */
#ifndef AJ_BACKEND_COMMON_H
#define AJ_BACKEND_COMMON_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct aj_buf;
struct aj_build_ctx;
struct aj_errors;
struct aj_jobspec;
struct aj_kvlist;
struct aj_strlist;
struct aj_target;
struct aj_task;

/* Append s as one single-quoted shell word (' becomes '\''). 0 / -1. */
int aj_shell_quote(struct aj_buf *b, const char *s);

/*
 * Is s a DNS-1123 label of at most max bytes (lowercase alphanumerics and
 * '-', alphanumeric at both ends)? Kubernetes object names built from a job
 * name must be.
 */
int aj_dns_label(const char *s, size_t max);

/* Append each line followed by a newline. 0 / -1. */
int aj_shell_add_lines(struct aj_buf *b, const struct aj_strlist *lines);

/*
 * Append what a task runs after setup: jobs[0].command lines, then the task's
 * own command lines, or the user command: with by_argv, `"$@"` (the
 * arguments travel as separate argv items after the script, never through
 * the shell's parser), otherwise every argument quoted. 0 / -1.
 */
int aj_shell_add_command(struct aj_buf *b, const struct aj_jobspec *spec,
			 const struct aj_task *task, int by_argv);

/*
 * Kubernetes expands $(VAR) and turns $$ into $ in a container's command,
 * args and env values before anything runs: append s with every $ doubled,
 * so what runs is s byte for byte. 0 / -1.
 */
int aj_kubelet_escape(struct aj_buf *b, const char *s);

/*
 * The kernel's limits on what exec() takes: one argument or environment
 * string (MAX_ARG_STRLEN, with its NUL) and all of them together with their
 * pointers (ARG_MAX with the usual 8 MiB stack).
 */
#define AJ_ARG_STRLEN_MAX (128u * 1024u)
#define AJ_ARG_TOTAL_MAX (2u * 1024u * 1024u)

/* The largest object the API server stores (etcd's default request limit). */
#define AJ_REQUEST_MAX (1536u * 1024u)

/*
 * The API server refuses an object over AJ_REQUEST_MAX whatever is retried:
 * say so before the create, naming the object (`what`, "Volcano Job"). 1 when
 * over (reported), 0 when it fits; out of memory counts as fitting (the
 * caller reports it).
 */
int aj_request_over_limit(const cJSON *obj, const char *what, struct aj_errors *err);

/*
 * cJSON builders that remember running out of memory in *oom, so a backend
 * can build a whole body and check once. A NULL parent (an earlier failure)
 * is a no-op; with an array parent the key is ignored. The new container is
 * returned (NULL on failure).
 */
cJSON *aj_body_add_object(cJSON *parent, const char *key, int *oom);
cJSON *aj_body_add_array(cJSON *parent, const char *key, int *oom);
void aj_body_add_string(cJSON *parent, const char *key, const char *value, int *oom);
void aj_body_add_int(cJSON *parent, const char *key, long long value, int *oom);
void aj_body_add_bool(cJSON *parent, const char *key, int value, int *oom);
/* A toleration of the NoSchedule taint of key with value (any value when NULL). */
void aj_body_add_toleration(cJSON *tolerations, const char *key, const char *value, int *oom);
/* Each label of kv into the labels object. */
void aj_body_add_labels(cJSON *labels, const struct aj_kvlist *kv, int *oom);
/* labels[key] = value unless target.labels set key already: app and role are the user's to name. */
void aj_body_add_label_default(cJSON *labels, const char *key, const char *value, int *oom);
/* metadata.ownerReferences: the AjJob (apiVersion, name, uid) as the controlling owner. */
void aj_body_add_owner(cJSON *meta, const char *api_version, const char *name, const char *uid,
		       int *oom);
/*
 * The metadata of an object aj creates for ctx's job: name, the namespace
 * (ctx's, else target.namespace), target.labels and app: <name>, and the
 * AjJob as its controlling owner when ctx names one. Returns the labels
 * object, for more.
 */
cJSON *aj_body_add_metadata(cJSON *obj, const char *name, const struct aj_target *t,
			    const struct aj_build_ctx *ctx, int *oom);

/*
 * Who sets label key `key` on the objects and pods of a cluster backend,
 * when the user may not: "aj" for the pods' label contract (aj.dev/ajjob,
 * aj.dev/task, backend.h; other aj.dev/ keys, such as the kwok test
 * stages' aj.dev/kwok-*, stay the user's), "Volcano" for volcano.sh/ keys,
 * "the Job controller" for batch.kubernetes.io/ keys. NULL otherwise.
 */
const char *aj_label_reserved(const char *key);

/* A DNS-1123 subdomain: dot-separated DNS labels, at most 253 bytes in all. */
int aj_dns_subdomain(const char *s);

/* Do two absolute paths overlap (one is the other or below it)? */
int aj_paths_overlap(const char *a, const char *b);

/* The shared-memory mount every pod gets. */
#define AJ_SHM_PATH "/dev/shm"

#endif
