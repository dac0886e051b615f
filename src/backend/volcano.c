/*
 * volcano.c - one gang-scheduled Volcano Job (batch.volcano.sh/v1alpha1).
 *
 * Homogeneous jobs become a `master` task of one pod and, with more than one
 * node, a `worker` task of nodes-1 pods, all alike. Heterogeneous jobs take
 * their tasks from config._extra.volcano.tasks (exactly one `master` with one
 * replica, listed first), each with its own resources and node selector.
 *
 * Ranks: the svc plugin gives every pod the host name <job>-<task>-<i>.<job>
 * and the env plugin its index VK_TASK_INDEX. Each container gets
 * MASTER_ADDR (the master's host), MASTER_PORT, WORLD_SIZE (all launcher
 * processes), AJ_NODES, AJ_PROCESSES_PER_NODE and AJ_TASK; its script sets
 * NODE_RANK to the task's offset (pods in earlier tasks) plus VK_TASK_INDEX.
 * A variable the template sets in submit_args.env wins over these.
 *
 * Pods run ["/bin/bash", "-lc", script]: set -eo pipefail, NODE_RANK, the
 * code copy, environment.setup, jobs[0].command, then the task command (the
 * user command quoted word by word). The image is used exactly as written.
 *
 * Lifecycle: the master task finishing completes the job (workers that never
 * exit are stopped); a pod evicted or failed restarts the whole gang, at most
 * _extra.volcano.max_retry times (default 3), then the job fails.
 *
 * Code: with both shared-volume variables set (codeship.h) the claim is
 * mounted in every pod; with a code digest in the spec each pod
 * first copies <mount>/.aj-code/<digest> into the emptyDir at AJ_WORK_DIR and
 * runs there (spec->code.digest). The CLI put it there (cli_code_upload.c).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "backend.h"
#include "codeship.h"
#include "common.h"
#include "pod.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/node.h"
#include "core/schema.h"
#include "core/sku.h"
#include "core/strlist.h"
#include "storage_secret.h"

#define MASTER_PORT "6105"
#define RDMA_PORT 18515
#define RDMA_RESOURCE "rdma/rdma_shared_device_a"
#define TASKS_PATH "config._extra.volcano.tasks"
#define MAX_RETRY_PATH "config._extra.volcano.max_retry"
#define STRATEGY_BLOB "blob"
#define MAX_RETRY_DEFAULT 3
#define MAX_RETRY_LIMIT 100
#define SCRATCH_PATH "config.jobs[0].submit_args.container_args.scratch_mount_path"

/* Name limits: the job name feeds <job>-svc / <job>-ssh (63) and a DNS-1035 Service. */
#define JOB_NAME_MAX 59
#define LABEL_MAX 63
/* "config.target.labels." and the longest label key: a subdomain, '/', a name */
#define LABEL_PATH_MAX (sizeof("config.target.labels.") + 253 + 1 + LABEL_MAX)

/* One Volcano task as built: a JobSpec task, or half of the homogeneous one. */
struct role {
	const char *name;
	int replicas;
	int offset;               /* node rank of its first pod */
	int cpus;                 /* AJ_UNSET: none requested */
	const char *memory;       /* NULL: none requested */
	int gpus;
	int rdma;
	int ppn;
	const struct aj_task *task;
};

static struct aj_where where_path(const char *path)
{
	struct aj_where w = { NULL, 0, 0, path };

	return w;
}

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

/*
 * shm_size is shared with Azure ML, whose sizes are Docker's (64g = 64 GiB):
 * those lowercase forms become binary quantities; the conversion has checked
 * that anything else is a Kubernetes quantity. 0 / -1 (out of memory).
 */
static int shm_quantity(const char *s, struct aj_buf *out)
{
	size_t len = strlen(s), digits = strspn(s, "0123456789");

	if (digits && digits + 1 == len && strchr("bkmgt", s[digits])) {
		if (aj_buf_add(out, s, digits))
			return -1;
		return s[digits] == 'b' ? 0 : aj_buf_addf(out, "%ci", s[digits] - 'a' + 'A');
	}
	return aj_buf_addstr(out, s);
}

/* The name of a capability without its CAP_ prefix; NULL if invalid or ALL. */
static const char *capability_name(const char *in)
{
	size_t i;

	if (!strncasecmp(in, "CAP_", 4))
		in += 4;
	if (!*in || !strcasecmp(in, "ALL"))
		return NULL;
	for (i = 0; in[i]; i++)
		if (!is_lower_alnum((char)(in[i] | 0x20)) && in[i] != '_')
			return NULL;
	return in;
}

/* Capabilities upper-cased, deduplicated, in written order. 0 / -1. */
static int capabilities(const struct aj_strlist *in, struct aj_strlist *out, struct aj_errors *err)
{
	char path[80] = "";
	struct aj_where w = where_path(path);
	int ret = 0;
	size_t i, k;

	for (i = 0; i < in->nr; i++) {
		const char *name = capability_name(in->items[i]);
		char *cap;

		if (!name) {
			snprintf(path, sizeof(path),
				 "config.jobs[0].submit_args.container_args.capabilities[%zu]", i);
			if (!strcasecmp(in->items[i], "ALL") || !strcasecmp(in->items[i], "CAP_ALL"))
				ret = aj_errors_add(err, &w, "ALL is not allowed: list each capability");
			else
				ret = aj_errors_add(err, &w, "\"%s\" is not a capability name",
						    in->items[i]);
			continue;
		}
		cap = aj_strdup(name);
		if (!cap)
			return aj_errors_oom(err);
		for (k = 0; cap[k]; k++)
			if (cap[k] >= 'a' && cap[k] <= 'z')
				cap[k] = (char)(cap[k] - 'a' + 'A');
		if (aj_strlist_find(out, cap) >= 0)
			aj_free(cap);
		else if (aj_strlist_add_owned(out, cap))
			return aj_errors_oom(err);
	}
	return ret;
}


/* _extra.volcano.max_retry: how often the gang restarts before failing. */
static int max_retry(const struct aj_jobspec *spec, int *out, struct aj_errors *err)
{
	const struct aj_node *n = spec->extra && spec->extra->type == AJ_NODE_MAP ?
		aj_node_at(spec->extra, "volcano.max_retry") : NULL;
	struct aj_where w;

	*out = MAX_RETRY_DEFAULT;
	if (!n || n->type == AJ_NODE_NULL)
		return 0;
	if (n->type == AJ_NODE_INT && n->v.integer >= 0 && n->v.integer <= MAX_RETRY_LIMIT) {
		*out = (int)n->v.integer;
		return 0;
	}
	aj_node_where(n, MAX_RETRY_PATH, &w);
	return aj_errors_add(err, &w, "expected an integer from 0 to %d", MAX_RETRY_LIMIT);
}

static int check_container(const struct aj_jobspec *spec, struct aj_errors *err)
{
	const struct aj_container_args *a = &spec->jobs[0].container;
	struct aj_strlist caps = AJ_STRLIST_INIT;
	struct aj_code_volume v;
	int ret = 0;
	size_t i;

	if (capabilities(&a->capabilities, &caps, err))
		ret = -1;
	aj_strlist_release(&caps);
	if (!a->scratch_mount_path)
		return ret;
	if (aj_paths_overlap(a->scratch_mount_path, AJ_SHM_PATH) ||
	    aj_paths_overlap(a->scratch_mount_path, AJ_WORK_DIR)) {
		struct aj_where w = where_path(SCRATCH_PATH);

		ret = aj_errors_add(err, &w, "%s overlaps %s", a->scratch_mount_path,
				    aj_paths_overlap(a->scratch_mount_path, AJ_SHM_PATH) ?
				    "the shared-memory mount " AJ_SHM_PATH :
				    "the work directory " AJ_WORK_DIR);
	}
	if (aj_code_volume(spec, &v) && aj_paths_overlap(a->scratch_mount_path, v.mount_dir)) {
		struct aj_where w = where_path(SCRATCH_PATH);

		ret = aj_errors_add(err, &w, "%s overlaps the shared volume %s (%s)",
				    a->scratch_mount_path, v.pvc, v.mount_dir);
	}
	/* the Secret holds the blob code URL and the storage configurations */
	if ((spec->storage_nr || aj_code_via_blob(spec)) &&
	    aj_paths_overlap(a->scratch_mount_path, AJ_STORAGE_SECRET_DIR)) {
		struct aj_where w = where_path(SCRATCH_PATH);

		ret = aj_errors_add(err, &w, "%s overlaps the Blob Secret mount " AJ_STORAGE_SECRET_DIR,
				    a->scratch_mount_path);
	}
	if (spec->storage_nr && aj_paths_overlap(a->scratch_mount_path, AJ_STORAGE_CACHE_DIR)) {
		struct aj_where w = where_path(SCRATCH_PATH);

		ret = aj_errors_add(err, &w, "%s overlaps the storage cache " AJ_STORAGE_CACHE_DIR,
				    a->scratch_mount_path);
	}
	for (i = 0; i < spec->storage_nr; i++) {
		if (spec->storage[i].mount_dir &&
		    aj_paths_overlap(a->scratch_mount_path, spec->storage[i].mount_dir)) {
			struct aj_where w = where_path(SCRATCH_PATH);

			ret = aj_errors_add(err, &w, "%s overlaps storage mount %s (%s)",
					    a->scratch_mount_path, spec->storage[i].name,
					    spec->storage[i].mount_dir);
		}
	}
	return ret;
}

/* Drop tasks that failed validation, so a failed spec never looks validated. */
static void clear_tasks(struct aj_jobspec *spec)
{
	size_t i;

	for (i = 0; i < spec->tasks_nr; i++)
		aj_task_release(&spec->tasks[i]);
	spec->tasks_nr = 0;
}

/*
 * Heterogeneous: read config._extra.volcano.tasks into spec->tasks, master
 * first (it holds node rank 0). A failed read leaves no tasks.
 */
static int volcano_prepare(struct aj_jobspec *spec, struct aj_errors *err)
{
	const struct aj_node *volcano = spec->extra && spec->extra->type == AJ_NODE_MAP ?
		aj_node_get(spec->extra, "volcano") : NULL;
	const struct aj_node *tasks = volcano && volcano->type == AJ_NODE_MAP ?
		aj_node_get(volcano, "tasks") : NULL;
	size_t i;

	if (!spec->heterogeneous || spec->tasks_nr)
		return 0;
	if (aj_jobspec_read_tasks(tasks, TASKS_PATH, spec, err)) {
		clear_tasks(spec);
		return -1;
	}
	for (i = 1; i < spec->tasks_nr; i++) {
		if (!strcmp(spec->tasks[i].name, "master")) {
			struct aj_task m = spec->tasks[i];

			memmove(&spec->tasks[1], &spec->tasks[0], i * sizeof(m));
			spec->tasks[0] = m;
			break;
		}
	}
	return 0;
}

/* The tasks prepare read: names, exactly one master of one replica, commands. */
static int check_tasks(const struct aj_jobspec *spec, struct aj_errors *err)
{
	char path[320] = "";
	struct aj_where w = where_path(path);
	size_t i, masters = 0;
	int ret = 0;

	for (i = 0; i < spec->tasks_nr; i++) {
		const struct aj_task *t = &spec->tasks[i];

		snprintf(path, sizeof(path), TASKS_PATH ".%s", t->name);
		if (!aj_dns_label(t->name, LABEL_MAX))
			ret = aj_errors_add(err, &w, "task name \"%s\" must be a lowercase DNS label "
					    "(letters, digits, '-')", t->name);
		if (!strcmp(t->name, "master")) {
			masters++;
			if (t->replicas != 1)
				ret = aj_errors_add(err, &w, "task master must have replicas: 1, not %d",
						    t->replicas);
		}
		if (t->has_command && !t->command.nr)
			ret = aj_errors_add(err, &w, "task %s: command must not be empty", t->name);
	}
	snprintf(path, sizeof(path), TASKS_PATH);
	if (masters != 1)
		ret = aj_errors_add(err, &w, "exactly one task named master is required");
	return ret;
}

/* A label value, or the name part of a label key: [A-Za-z0-9._-], alnum ends. */
static int label_name(const char *s, size_t len, int may_be_empty)
{
	size_t i;

	if (!len)
		return may_be_empty;
	if (len > LABEL_MAX || !isalnum((unsigned char)s[0]) ||
	    !isalnum((unsigned char)s[len - 1]))
		return 0;
	for (i = 0; i < len; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_.", s[i]))
			return 0;
	return 1;
}

/* A label key: [prefix/]name, the prefix a DNS subdomain. */
static int label_key(const char *s)
{
	const char *slash = strchr(s, '/');
	char prefix[254];
	size_t n;

	if (!slash)
		return label_name(s, strlen(s), 0);
	n = (size_t)(slash - s);
	if (!n || n >= sizeof(prefix))
		return 0;
	memcpy(prefix, s, n);
	prefix[n] = '\0';
	return aj_dns_subdomain(prefix) && label_name(slash + 1, strlen(slash + 1), 0);
}

/*
 * Names the Volcano Job carries as written: the API server would refuse
 * them at create time, so say which key is wrong before anything is sent.
 */
static int check_target_names(const struct aj_target *t, struct aj_errors *err)
{
	int ret = 0;
	size_t i;

	if (t->namespace_ && !aj_dns_label(t->namespace_, LABEL_MAX)) {
		struct aj_where w = where_path("config.target.namespace");

		ret = aj_errors_add(err, &w, "\"%s\" is not a valid namespace (a lowercase "
				    "DNS label of at most 63 characters)", t->namespace_);
	}
	if (t->queue && !aj_dns_subdomain(t->queue)) {
		struct aj_where w = where_path("config.target.queue");

		ret = aj_errors_add(err, &w, "\"%s\" is not a valid queue name (a lowercase "
				    "DNS subdomain of at most 253 characters)", t->queue);
	}
	if (t->priority_class && !aj_dns_subdomain(t->priority_class)) {
		struct aj_where w = where_path("config.target.priority_class");

		ret = aj_errors_add(err, &w, "\"%s\" is not a valid priority class name (a "
				    "lowercase DNS subdomain of at most 253 characters)",
				    t->priority_class);
	}
	for (i = 0; i < t->node_selector.nr; i++) {
		const struct aj_kv *kv = &t->node_selector.items[i];
		struct aj_where w = where_path("config.target.node_selector");

		if (!label_key(kv->key) || !label_name(kv->value, strlen(kv->value), 1))
			ret = aj_errors_add(err, &w, "\"%s: %s\" is not a node label (a key [prefix/]name "
					    "and a value of at most 63 characters of [A-Za-z0-9._-])",
					    kv->key, kv->value);
	}
	for (i = 0; i < t->labels.nr; i++) {
		const struct aj_kv *kv = &t->labels.items[i];
		struct aj_where w = where_path("config.target.labels");
		const char *owner = aj_label_reserved(kv->key);
		char at[LABEL_PATH_MAX];

		if (!label_key(kv->key)) {
			ret = aj_errors_add(err, &w, "\"%s\" is not a valid label key ([prefix/]name, "
					    "the name at most 63 characters of [A-Za-z0-9._-])", kv->key);
		} else if (owner) {
			/* at the label's key: the pipeline locates the key path */
			snprintf(at, sizeof(at), "config.target.labels.%s", kv->key);
			w.path = at;
			w.line = AJ_WHERE_KEY;
			ret = aj_errors_add(err, &w, "reserved: %s sets this label on the pods "
					    "itself (choose a key of your own)", owner);
		} else if (!label_name(kv->value, strlen(kv->value), 1)) {
			ret = aj_errors_add(err, &w, "%s: \"%s\" is not a valid label value (at most "
					    "63 characters of [A-Za-z0-9._-])", kv->key, kv->value);
		}
	}
	return ret;
}

int aj_pod_validate(const struct aj_jobspec *spec, const char *service, struct aj_errors *err)
{
	struct aj_code_blob blob;
	int ret = 0;

	if (!spec->environment.image || !*spec->environment.image) {
		struct aj_where w = where_path("config.environment.image");

		ret = aj_errors_add(err, &w, "required for service %s", service);
	}
	if (spec->jobs_nr && check_container(spec, err))
		ret = -1;
	if (aj_codeship_check(spec, err))
		ret = -1;
	if (aj_storage_secret_check(spec, err) || aj_code_blob(spec, &blob, err) < 0)
		ret = -1;
	if (check_target_names(&spec->target, err))
		ret = -1;
	return ret;
}

static int volcano_validate(const struct aj_jobspec *spec, struct aj_errors *err)
{
	int ret = aj_pod_validate(spec, "volcano", err), retries;

	if (max_retry(spec, &retries, err))
		ret = -1;
	/* no tasks: prepare could not read them and has said why */
	if (spec->heterogeneous && spec->tasks_nr && check_tasks(spec, err))
		ret = -1;
	return ret;
}

/*
 * GPUs per pod for the homogeneous shape. The seed makes -p the SKU
 * processes and target.gpus_per_node only its fallback, so for a G SKU the
 * resolved SKU's count decides (-p 4 with {nodes}xG{processes}: 4 GPUs);
 * otherwise (C SKUs, names that are not shorthand) target.gpus_per_node.
 */
static int homogeneous_gpus(const struct aj_jobspec *spec, int *gpus)
{
	struct aj_sku_spec sku;
	int ret;

	*gpus = spec->target.gpus_per_node != AJ_UNSET ? spec->target.gpus_per_node : 0;
	if (!spec->sku)
		return 0;
	ret = aj_sku_parse(spec->sku, &sku);
	if (ret < 0)
		return -1;
	if (!ret && !sku.cpu)
		*gpus = sku.count;
	aj_sku_spec_release(&sku);
	return 0;
}

/* The tasks to build, in order, with node-rank offsets. */
static int roles(const struct aj_jobspec *spec, struct role *r, size_t *nr)
{
	const struct aj_target *tg = &spec->target;
	const struct aj_container_args *a = &spec->jobs[0].container;
	int offset = 0, gpus;
	size_t i;

	*nr = 0;
	if (spec->heterogeneous) {
		for (i = 0; i < spec->tasks_nr; i++) {
			const struct aj_task *t = &spec->tasks[i];
			struct role x = { t->name, t->replicas, offset, t->cpus_per_node, t->memory,
					  t->gpus_per_node, t->rdma == 1, t->processes_per_node, t };

			r[(*nr)++] = x;
			offset += t->replicas;
		}
		return 0;
	}
	if (homogeneous_gpus(spec, &gpus))
		return -1;
	r[0].name = "master";
	r[0].replicas = 1;
	r[0].offset = 0;
	r[0].cpus = tg->cpus_per_node != AJ_UNSET ? tg->cpus_per_node : a->cpus;
	r[0].memory = tg->memory ? tg->memory : a->memory;
	r[0].gpus = gpus;
	r[0].rdma = tg->rdma != AJ_UNSET ? tg->rdma : gpus > 0;
	r[0].ppn = spec->processes_per_node;
	r[0].task = &spec->tasks[0];
	*nr = 1;
	if (spec->nodes > 1) {
		r[1] = r[0];
		r[1].name = "worker";
		r[1].replicas = spec->nodes - 1;
		r[1].offset = 1;
		*nr = 2;
	}
	return 0;
}

static int check_names(const char *job, const struct role *r, size_t nr, struct aj_errors *err)
{
	struct aj_where w = where_path("metadata.name");
	size_t len = strlen(job), i;
	int ret = 0;

	if (!aj_dns_label(job, JOB_NAME_MAX) || !(job[0] >= 'a' && job[0] <= 'z'))
		return aj_errors_add(err, &w, "job name \"%s\" must be at most %d lowercase letters, "
				     "digits and '-', starting with a letter and ending with a "
				     "letter or digit", job, JOB_NAME_MAX);
	for (i = 0; i < nr; i++) {
		char last[16];
		size_t pod;

		snprintf(last, sizeof(last), "%d", r[i].replicas - 1);
		pod = len + 1 + strlen(r[i].name) + 1 + strlen(last);
		if (pod > LABEL_MAX)
			ret = aj_errors_add(err, &w, "pod name %s-%s-%s is %zu characters, over %d: "
					    "shorten the job or task name", job, r[i].name, last,
					    pod, LABEL_MAX);
	}
	return ret;
}

/* A string the kubelet expands ($(VAR), $$), escaped so it arrives as written. */
static void add_kube_string(cJSON *parent, const char *key, const char *value, int *oom)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);

	if (!value || aj_kubelet_escape(&b, value))
		*oom = 1;
	else
		aj_body_add_string(parent, key, aj_buf_cstr(&b), oom);
	aj_buf_release(&b);
}

static void add_env_entry(cJSON *env, const char *name, const char *value, int *oom)
{
	cJSON *e = aj_body_add_object(env, NULL, oom);

	aj_body_add_string(e, "name", name, oom);
	add_kube_string(e, "value", value, oom);
}

static void add_env(cJSON *env, const struct aj_job *j, const char *name, const char *value,
		    int *oom)
{
	if (aj_kvlist_get(&j->env, name))
		return;
	add_env_entry(env, name, value, oom);
}

static void add_env_int(cJSON *env, const struct aj_job *j, const char *name, long long v,
			int *oom)
{
	char num[32];

	snprintf(num, sizeof(num), "%lld", v);
	add_env(env, j, name, num, oom);
}

static char *script(const struct aj_jobspec *spec, const struct role *r, const char *index_var,
		    const char *digest, const struct aj_code_blob *blob)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);

	if (aj_buf_addf(&b, "set -eo pipefail\nexport NODE_RANK=$((%d + ${%s:-0}))\n",
			r->offset, index_var) ||
	    aj_storage_secret_script(&b, spec) ||
	    aj_codeship_script(&b, spec, digest, blob) ||
	    aj_shell_add_lines(&b, &spec->environment.setup) ||
	    aj_shell_add_command(&b, spec, r->task, 1)) {
		aj_buf_release(&b);
		return NULL;
	}
	return aj_buf_detach(&b, NULL);
}

struct build {
	const struct aj_jobspec *spec;
	const struct aj_pod_shape *shape;
	const char *job;
	const char *shm;          /* normalised shm size, or NULL */
	const struct aj_strlist *caps;
	const char *digest;       /* code to copy from the shared volume or download, or NULL */
	const struct aj_code_blob *blob;  /* the code comes from a blob, or NULL */
	int has_volume;
	char secret[AJ_STORAGE_SECRET_SIZE];  /* the storage Secret, when storage or a blob is used */
	struct aj_code_volume volume;
	int max_retry;
	int total_pods;
	long long world_size;
	struct aj_errors *err;
	int too_big;              /* an exec limit was passed (reported once) */
	int oom;
	/* owned by build_init, released by build_release */
	struct aj_strlist caps_store;
	struct aj_buf shm_store;
	struct aj_code_blob blob_store;
};

static void add_resources(struct build *bd, cJSON *container, const struct role *r)
{
	const struct aj_container_args *a = &bd->spec->jobs[0].container;
	cJSON *res = aj_body_add_object(container, "resources", &bd->oom);
	const char *kinds[] = { "requests", "limits" };
	char num[32];
	size_t k;

	for (k = 0; k < 2; k++) {
		cJSON *m = aj_body_add_object(res, kinds[k], &bd->oom);

		if (r->cpus != AJ_UNSET) {
			snprintf(num, sizeof(num), "%d", r->cpus);
			aj_body_add_string(m, "cpu", num, &bd->oom);
		}
		if (r->memory)
			aj_body_add_string(m, "memory", r->memory, &bd->oom);
		if (r->gpus > 0) {
			snprintf(num, sizeof(num), "%d", r->gpus);
			aj_body_add_string(m, "nvidia.com/gpu", num, &bd->oom);
		}
		if (r->rdma)
			aj_body_add_string(m, RDMA_RESOURCE, "1", &bd->oom);
		if (a->scratch_size)
			aj_body_add_string(m, "ephemeral-storage", a->scratch_size, &bd->oom);
	}
}

/*
 * What the pod's exec() gets must fit the kernel's limits, or the pod could
 * never start while the job looks submitted: each string (the script, each
 * argument, each NAME=value) under AJ_ARG_STRLEN_MAX, all of them with
 * their pointers under AJ_ARG_TOTAL_MAX. Reported once per build.
 */
static void check_exec_limits(struct build *bd, const struct role *r, const char *script)
{
	const struct aj_task *t = r->task;
	const struct aj_kvlist *env = &bd->spec->jobs[0].env;
	size_t total, i, len;

	if (bd->too_big || !script)
		return;
	total = sizeof("/bin/bash") + sizeof("-lc") + strlen(script) + 1 + 3 * sizeof(char *);
	if (strlen(script) + 1 > AJ_ARG_STRLEN_MAX) {
		bd->too_big = 1;
		aj_errors_add(bd->err, NULL, "task %s: the pod's script is %zu bytes, over the kernel's "
			      "limit of %u bytes for one argument (MAX_ARG_STRLEN): shorten "
			      "environment.setup, jobs[0].command or the task's command", r->name,
			      strlen(script), AJ_ARG_STRLEN_MAX);
		return;
	}
	for (i = 0; !t->has_command && i < t->command.nr; i++) {
		len = strlen(t->command.items[i]) + 1;
		total += len + sizeof(char *) + (i ? 0 : sizeof("aj") + sizeof(char *));
		if (len > AJ_ARG_STRLEN_MAX) {
			struct aj_where w = { NULL, 0, 0, NULL };
			char path[32];

			snprintf(path, sizeof(path), "command[%zu]", i);
			w.path = path;
			bd->too_big = 1;
			aj_errors_add(bd->err, &w, "an argument of %zu bytes is over the kernel's limit "
				      "of %u bytes for one argument (MAX_ARG_STRLEN)", len - 1,
				      AJ_ARG_STRLEN_MAX);
			return;
		}
	}
	for (i = 0; i < env->nr; i++) {
		len = strlen(env->items[i].key) + strlen(env->items[i].value) + 2;
		total += len + sizeof(char *);
		if (len > AJ_ARG_STRLEN_MAX) {
			struct aj_where w = { NULL, 0, 0, "config.jobs[0].submit_args.env" };

			bd->too_big = 1;
			aj_errors_add(bd->err, &w, "%s: the variable is %zu bytes, over the kernel's limit "
				      "of %u bytes for one environment string (MAX_ARG_STRLEN)",
				      env->items[i].key, len - 1, AJ_ARG_STRLEN_MAX);
			return;
		}
	}
	if (total > AJ_ARG_TOTAL_MAX) {
		bd->too_big = 1;
		aj_errors_add(bd->err, NULL, "task %s: the command, its arguments and the environment "
			      "come to %zu bytes, over the kernel's limit of %u for all of them "
			      "(ARG_MAX): pass fewer or shorter arguments", r->name, total,
			      AJ_ARG_TOTAL_MAX);
	}
}

static void add_container(struct build *bd, cJSON *pod, const struct role *r)
{
	const struct aj_jobspec *spec = bd->spec;
	const struct aj_job *j = &spec->jobs[0];
	const struct aj_container_args *a = &j->container;
	cJSON *containers = aj_body_add_array(pod, "containers", &bd->oom);
	cJSON *c = aj_body_add_object(containers, NULL, &bd->oom);
	cJSON *cmd, *env, *mounts, *m;
	char *text = script(spec, r, bd->shape->index_var, bd->digest, bd->blob);
	size_t i;

	aj_body_add_string(c, "name", r->name, &bd->oom);
	aj_body_add_string(c, "image", spec->environment.image, &bd->oom);
	if (bd->digest)
		aj_body_add_string(c, "workingDir", AJ_WORK_DIR, &bd->oom);
	/* bash -lc SCRIPT aj ARG...: the script reads the user's arguments as "$@" */
	cmd = aj_body_add_array(c, "command", &bd->oom);
	aj_body_add_string(cmd, NULL, "/bin/bash", &bd->oom);
	aj_body_add_string(cmd, NULL, "-lc", &bd->oom);
	add_kube_string(cmd, NULL, text, &bd->oom);
	if (!r->task->has_command && r->task->command.nr) {
		aj_body_add_string(cmd, NULL, "aj", &bd->oom);
		for (i = 0; i < r->task->command.nr; i++)
			add_kube_string(cmd, NULL, r->task->command.items[i], &bd->oom);
	}
	check_exec_limits(bd, r, text);
	aj_free(text);

	env = aj_body_add_array(c, "env", &bd->oom);
	for (i = 0; i < j->env.nr; i++)
		add_env_entry(env, j->env.items[i].key, j->env.items[i].value, &bd->oom);
	add_env(env, j, "MASTER_ADDR", bd->shape->master_addr, &bd->oom);
	add_env(env, j, "MASTER_PORT", MASTER_PORT, &bd->oom);
	add_env_int(env, j, "WORLD_SIZE", bd->world_size, &bd->oom);
	add_env_int(env, j, "AJ_NODES", bd->total_pods, &bd->oom);
	add_env_int(env, j, "AJ_PROCESSES_PER_NODE", r->ppn, &bd->oom);
	add_env(env, j, "AJ_TASK", r->name, &bd->oom);

	add_resources(bd, c, r);
	mounts = aj_body_add_array(c, "volumeMounts", &bd->oom);
	m = aj_body_add_object(mounts, NULL, &bd->oom);
	aj_body_add_string(m, "name", "dshm", &bd->oom);
	aj_body_add_string(m, "mountPath", AJ_SHM_PATH, &bd->oom);
	if (a->scratch_mount_path) {
		m = aj_body_add_object(mounts, NULL, &bd->oom);
		aj_body_add_string(m, "name", "scratch", &bd->oom);
		aj_body_add_string(m, "mountPath", a->scratch_mount_path, &bd->oom);
	}
	if (bd->has_volume) {
		m = aj_body_add_object(mounts, NULL, &bd->oom);
		aj_body_add_string(m, "name", "shared", &bd->oom);
		aj_body_add_string(m, "mountPath", bd->volume.mount_dir, &bd->oom);
	}
	if (bd->digest) {
		m = aj_body_add_object(mounts, NULL, &bd->oom);
		aj_body_add_string(m, "name", "code", &bd->oom);
		aj_body_add_string(m, "mountPath", AJ_WORK_DIR, &bd->oom);
	}
	if (bd->secret[0]) {
		m = aj_body_add_object(mounts, NULL, &bd->oom);
		aj_body_add_string(m, "name", "storage-secret", &bd->oom);
		aj_body_add_string(m, "mountPath", AJ_STORAGE_SECRET_DIR, &bd->oom);
		aj_body_add_bool(m, "readOnly", 1, &bd->oom);
	}
	if (spec->storage_nr) {
		m = aj_body_add_object(mounts, NULL, &bd->oom);
		aj_body_add_string(m, "name", "storage-cache", &bd->oom);
		aj_body_add_string(m, "mountPath", AJ_STORAGE_CACHE_DIR, &bd->oom);
	}
	if (r->rdma) {
		cJSON *ports = aj_body_add_array(c, "ports", &bd->oom);
		cJSON *p = aj_body_add_object(ports, NULL, &bd->oom);

		aj_body_add_string(p, "name", "rdma", &bd->oom);
		aj_body_add_int(p, "containerPort", RDMA_PORT, &bd->oom);
	}
	if (bd->caps->nr || spec->storage_nr) {
		cJSON *sc = aj_body_add_object(c, "securityContext", &bd->oom);

		/* blobfuse2 needs /dev/fuse and mount(2); nothing else is privileged */
		if (spec->storage_nr)
			aj_body_add_bool(sc, "privileged", 1, &bd->oom);
		if (bd->caps->nr) {
			cJSON *cp = aj_body_add_object(sc, "capabilities", &bd->oom);
			cJSON *add = aj_body_add_array(cp, "add", &bd->oom);

			for (i = 0; i < bd->caps->nr; i++)
				aj_body_add_string(add, NULL, bd->caps->items[i], &bd->oom);
		}
	}
}

static void add_pod(struct build *bd, cJSON *tmpl, const struct role *r)
{
	const struct aj_container_args *a = &bd->spec->jobs[0].container;
	cJSON *meta = aj_body_add_object(tmpl, "metadata", &bd->oom);
	cJSON *labels = aj_body_add_object(meta, "labels", &bd->oom);
	cJSON *pod = aj_body_add_object(tmpl, "spec", &bd->oom);
	cJSON *tols, *vols, *v, *dir, *nodes = NULL;
	size_t i;

	aj_body_add_labels(labels, &bd->spec->target.labels, &bd->oom);
	aj_body_add_label_default(labels, "app", bd->job, &bd->oom);
	aj_body_add_label_default(labels, "role", r->name, &bd->oom);
	/* how aj logs and aj status find the pods of an AjJob (backend.h) */
	aj_body_add_string(labels, "aj.dev/ajjob", bd->job, &bd->oom);
	aj_body_add_string(labels, "aj.dev/task", r->name, &bd->oom);

	if (bd->shape->scheduler)
		aj_body_add_string(pod, "schedulerName", bd->shape->scheduler, &bd->oom);
	aj_body_add_string(pod, "restartPolicy", "Never", &bd->oom);
	if (r->task->node_selector.nr || bd->spec->target.node_selector.nr) {
		nodes = aj_body_add_object(pod, "nodeSelector", &bd->oom);
		/* the task's own first: target.node_selector fills the keys it leaves */
		aj_body_add_labels(nodes, &r->task->node_selector, &bd->oom);
		for (i = 0; i < bd->spec->target.node_selector.nr; i++)
			aj_body_add_label_default(nodes, bd->spec->target.node_selector.items[i].key,
						  bd->spec->target.node_selector.items[i].value, &bd->oom);
	}
	if (bd->total_pods > 1) {
		cJSON *aff = aj_body_add_object(pod, "affinity", &bd->oom);
		cJSON *anti = aj_body_add_object(aff, "podAntiAffinity", &bd->oom);
		cJSON *req = aj_body_add_array(anti, "requiredDuringSchedulingIgnoredDuringExecution",
					       &bd->oom);
		cJSON *term = aj_body_add_object(req, NULL, &bd->oom);
		cJSON *sel = aj_body_add_object(term, "labelSelector", &bd->oom);
		cJSON *ml = aj_body_add_object(sel, "matchLabels", &bd->oom);

		/* set on every pod by the workload's controller, and not user-editable */
		aj_body_add_string(ml, bd->shape->peer_label, bd->job, &bd->oom);
		aj_body_add_string(term, "topologyKey", "kubernetes.io/hostname", &bd->oom);
	}
	tols = aj_body_add_array(pod, "tolerations", &bd->oom);
	if (r->gpus > 0)
		aj_body_add_toleration(tols, "nvidia.com/gpu", NULL, &bd->oom);
	if (r->rdma)
		aj_body_add_toleration(tols, "rdma", NULL, &bd->oom);
	/* nodes dedicated by a taint named as the label that selects them (the local real node) */
	for (v = nodes ? nodes->child : NULL; v; v = v->next)
		aj_body_add_toleration(tols, v->string, v->valuestring, &bd->oom);
	vols = aj_body_add_array(pod, "volumes", &bd->oom);
	v = aj_body_add_object(vols, NULL, &bd->oom);
	aj_body_add_string(v, "name", "dshm", &bd->oom);
	dir = aj_body_add_object(v, "emptyDir", &bd->oom);
	aj_body_add_string(dir, "medium", "Memory", &bd->oom);
	if (bd->shm)
		aj_body_add_string(dir, "sizeLimit", bd->shm, &bd->oom);
	if (a->scratch_mount_path) {
		v = aj_body_add_object(vols, NULL, &bd->oom);
		aj_body_add_string(v, "name", "scratch", &bd->oom);
		dir = aj_body_add_object(v, "emptyDir", &bd->oom);
		if (a->scratch_size)
			aj_body_add_string(dir, "sizeLimit", a->scratch_size, &bd->oom);
	}
	if (bd->has_volume) {
		v = aj_body_add_object(vols, NULL, &bd->oom);
		aj_body_add_string(v, "name", "shared", &bd->oom);
		dir = aj_body_add_object(v, "persistentVolumeClaim", &bd->oom);
		aj_body_add_string(dir, "claimName", bd->volume.pvc, &bd->oom);
	}
	if (bd->digest) {
		v = aj_body_add_object(vols, NULL, &bd->oom);
		aj_body_add_string(v, "name", "code", &bd->oom);
		aj_body_add_object(v, "emptyDir", &bd->oom);
	}
	if (bd->secret[0]) {
		v = aj_body_add_object(vols, NULL, &bd->oom);
		aj_body_add_string(v, "name", "storage-secret", &bd->oom);
		dir = aj_body_add_object(v, "secret", &bd->oom);
		aj_body_add_string(dir, "secretName", bd->secret, &bd->oom);
		aj_body_add_int(dir, "defaultMode", 0400, &bd->oom);
	}
	if (bd->spec->storage_nr) {
		v = aj_body_add_object(vols, NULL, &bd->oom);
		aj_body_add_string(v, "name", "storage-cache", &bd->oom);
		aj_body_add_object(v, "emptyDir", &bd->oom);
	}
	add_container(bd, pod, r);
}

static void add_policy(cJSON *policies, const char *event, const char *action, int *oom)
{
	cJSON *p = aj_body_add_object(policies, NULL, oom);

	aj_body_add_string(p, "event", event, oom);
	aj_body_add_string(p, "action", action, oom);
}

static cJSON *build_job(struct build *bd, const struct aj_build_ctx *ctx,
			const struct role *r, size_t nr)
{
	const struct aj_target *t = &bd->spec->target;
	cJSON *job = cJSON_CreateObject();
	cJSON *spec, *plugins, *tasks, *policies;
	size_t i;

	if (!job)
		bd->oom = 1;
	aj_body_add_string(job, "apiVersion", "batch.volcano.sh/v1alpha1", &bd->oom);
	aj_body_add_string(job, "kind", "Job", &bd->oom);
	aj_body_add_metadata(job, bd->job, &bd->spec->target, ctx, &bd->oom);
	spec = aj_body_add_object(job, "spec", &bd->oom);
	aj_body_add_string(spec, "schedulerName", "volcano", &bd->oom);
	aj_body_add_string(spec, "queue", t->queue ? t->queue : "default", &bd->oom);
	aj_body_add_int(spec, "minAvailable", bd->total_pods, &bd->oom);
	if (t->priority_class)
		aj_body_add_string(spec, "priorityClassName", t->priority_class, &bd->oom);
	aj_body_add_int(spec, "maxRetry", bd->max_retry, &bd->oom);
	/*
	 * The pods are one gang: losing any of them restarts them all. No task
	 * has policies of its own: Volcano completes the job once every pod has
	 * succeeded (minAvailable is every pod, in the job and in each task), so
	 * no exit of one task stops the others (docs/volcano.md, Lifecycle).
	 */
	policies = aj_body_add_array(spec, "policies", &bd->oom);
	add_policy(policies, "PodEvicted", "RestartJob", &bd->oom);
	add_policy(policies, "PodFailed", "RestartJob", &bd->oom);
	plugins = aj_body_add_object(spec, "plugins", &bd->oom);
	aj_body_add_array(plugins, "ssh", &bd->oom);
	aj_body_add_array(plugins, "svc", &bd->oom);
	aj_body_add_array(plugins, "env", &bd->oom);
	tasks = aj_body_add_array(spec, "tasks", &bd->oom);
	for (i = 0; i < nr; i++) {
		cJSON *task = aj_body_add_object(tasks, NULL, &bd->oom);

		aj_body_add_string(task, "name", r[i].name, &bd->oom);
		aj_body_add_int(task, "replicas", r[i].replicas, &bd->oom);
		aj_body_add_int(task, "minAvailable", r[i].replicas, &bd->oom);
		add_pod(bd, aj_body_add_object(task, "template", &bd->oom), &r[i]);
	}
	return job;
}

/*
 * What every pod build needs before the objects: the context, the code
 * digest and how it travels, the container, code and storage checks,
 * capabilities and the shared-memory size. bd is released by
 * build_release() whatever this returns. 0 / -1.
 */
static int build_init(struct build *bd, const struct aj_jobspec *spec,
		      const struct aj_build_ctx *ctx, const struct aj_pod_shape *shape,
		      struct aj_errors *err)
{
	struct aj_buf shm = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_strlist caps = AJ_STRLIST_INIT;
	int is_blob;

	memset(bd, 0, sizeof(*bd));
	bd->caps_store = caps;
	bd->shm_store = shm;
	bd->spec = spec;
	bd->shape = shape;
	bd->job = ctx->job_name;
	bd->caps = &bd->caps_store;
	bd->err = err;
	if (!ctx->job_name || !spec->jobs_nr || !spec->tasks_nr || !spec->environment.image)
		return aj_errors_add(err, NULL, "cannot build a %s job: %s", shape->name,
				     !ctx->job_name ? "no job name" :
				     !spec->environment.image ? "config.environment.image is not set" :
				     "the job shape is not resolved");
	if (ctx->owner_uid && (!ctx->owner_api_version || !ctx->owner_name))
		return aj_errors_add(err, NULL, "an owner uid needs the owner's name and apiVersion");
	if (spec->code.digest && !aj_sha256_hex(spec->code.digest) &&
	    !(ctx->preview && !strcmp(spec->code.digest, AJ_CODE_DIGEST_PLACEHOLDER)))
		return aj_errors_add(err, NULL, "code digest \"%s\" is not a SHA-256 in hex",
				     spec->code.digest);
	bd->has_volume = aj_code_volume(spec, &bd->volume);
	bd->digest = spec->code.digest;
	is_blob = aj_code_blob(spec, &bd->blob_store, err);
	if (is_blob < 0)
		return -1;
	if (bd->digest && is_blob) {
		bd->blob = &bd->blob_store;
	} else if (bd->digest && !aj_code_via_volume(spec, &bd->volume)) {
		struct aj_where w = where_path("config.jobs[0].submit_args.env");

		return aj_errors_add(err, &w, "the job carries code (%s) but its code does not go "
				     "through a shared volume: set both " AJ_PVC_NAME_VAR " and "
				     AJ_PVC_DIR_VAR ", or use _extra.code_upload.strategy "
				     STRATEGY_BLOB, bd->digest);
	}
	if ((spec->storage_nr || bd->blob) && aj_storage_secret_name(bd->job, bd->secret))
		return aj_errors_add(err, NULL, "job name \"%s\" is too long", bd->job);
	/* validated: this only reads the values now */
	if (capabilities(&spec->jobs[0].container.capabilities, &bd->caps_store, err))
		return -1;
	if (spec->jobs[0].container.shm_size) {
		if (shm_quantity(spec->jobs[0].container.shm_size, &bd->shm_store) ||
		    bd->shm_store.failed)
			return aj_errors_oom(err);
		bd->shm = aj_buf_cstr(&bd->shm_store);
	}
	return 0;
}

static void build_release(struct build *bd)
{
	aj_buf_release(&bd->shm_store);
	aj_strlist_release(&bd->caps_store);
}

/* The one object of a build in a new array, or NULL (out of memory) with obj freed. */
static cJSON *one_object(cJSON *obj)
{
	cJSON *arr = obj ? cJSON_CreateArray() : NULL;

	if (!arr || !cJSON_AddItemToArray(arr, obj)) {
		cJSON_Delete(obj);
		cJSON_Delete(arr);
		return NULL;
	}
	return arr;
}

static int volcano_build(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
			 cJSON **out, struct aj_errors *err)
{
	struct aj_buf addr = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_pod_shape shape = { "Volcano", "volcano", "VK_TASK_INDEX", "volcano.sh/job-name",
				      NULL };
	struct build bd;
	struct role *r = NULL;
	size_t nr, i;
	cJSON *job;
	int ret = -1;

	*out = NULL;
	/* the svc plugin names the master pod <job>-master-0 in the subdomain <job> */
	if (ctx->job_name && aj_buf_addf(&addr, "%s-master-0.%s", ctx->job_name, ctx->job_name))
		return aj_errors_oom(err);
	shape.master_addr = aj_buf_cstr(&addr);
	if (build_init(&bd, spec, ctx, &shape, err))
		goto out;
	r = aj_calloc(spec->tasks_nr + 1, sizeof(*r));
	if (!r || roles(spec, r, &nr)) {
		ret = aj_errors_oom(err);
		goto out;
	}
	if (max_retry(spec, &bd.max_retry, err) || check_names(bd.job, r, nr, err))
		goto out;
	for (i = 0; i < nr; i++) {
		bd.total_pods += r[i].replicas;
		bd.world_size += (long long)r[i].replicas * r[i].ppn;
	}
	job = build_job(&bd, ctx, r, nr);
	if (!bd.oom && (bd.too_big || aj_request_over_limit(job, "Volcano Job", err))) {
		cJSON_Delete(job);
		goto out;
	}
	if (bd.oom) {
		cJSON_Delete(job);
		job = NULL;
	}
	*out = one_object(job);
	ret = *out ? 0 : aj_errors_oom(err);
out:
	build_release(&bd);
	aj_buf_release(&addr);
	aj_free(r);
	return ret;
}

int aj_pod_template(const struct aj_jobspec *spec, const struct aj_build_ctx *ctx,
		    const struct aj_pod_shape *shape, const char *task, cJSON **out,
		    struct aj_errors *err)
{
	struct build bd;
	struct role r[2];
	size_t nr;
	cJSON *tmpl = NULL;
	int ret = -1;

	*out = NULL;
	if (build_init(&bd, spec, ctx, shape, err))
		goto out;
	if (spec->heterogeneous || roles(spec, r, &nr)) {
		ret = spec->heterogeneous ? aj_errors_add(err, NULL, "a %s job has one pod template: "
							  "heterogeneous tasks cannot be built",
							  shape->name) : aj_errors_oom(err);
		goto out;
	}
	r[0].name = task;
	r[0].replicas = spec->nodes;
	bd.total_pods = spec->nodes;
	bd.world_size = (long long)spec->nodes * r[0].ppn;
	tmpl = cJSON_CreateObject();
	if (!tmpl)
		bd.oom = 1;
	else
		add_pod(&bd, tmpl, &r[0]);
	if (bd.oom || bd.too_big) {
		cJSON_Delete(tmpl);
		ret = bd.oom ? aj_errors_oom(err) : -1;
		goto out;
	}
	*out = tmpl;
	ret = 0;
out:
	build_release(&bd);
	return ret;
}

/* _extra.volcano; each task is checked by the task reader (aj_schema_task) */
static const struct aj_schema_key volcano_keys[] = {
	{ "max_retry", AJ_SCHEMA_VALUE, "integer 0-100", "gang restarts before the job fails" },
	{ "tasks", AJ_SCHEMA_FREE, "mapping", "heterogeneous tasks, by name" },
};

static const struct aj_schema volcano_schema = {
	"_extra.volcano", "mapping", "Volcano options", volcano_keys,
	sizeof(volcano_keys) / sizeof(volcano_keys[0])
};

static const struct aj_schema *const volcano_extra[] = { &volcano_schema, &aj_codeship_schema, NULL };

const struct aj_backend aj_backend_volcano = {
	.name = "volcano",
	.target = AJ_TARGET_CLUSTER,
	.code_route = aj_codeship_route,
	.tasks_key = "volcano.tasks",
	.extra = volcano_extra,
	.prepare = volcano_prepare,
	.validate = volcano_validate,
	.build = volcano_build,
	.rank_annotation = "volcano.sh/task-index",
};
