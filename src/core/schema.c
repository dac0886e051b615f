#include "schema.h"

#include <string.h>

#include "buf.h"
#include "error.h"
#include "node.h"
#include "suggest.h"

/*
 * Patterns below `config`; a key's parent is listed before it. Keys marked
 * "amlt" are read by amlt only (--amlt) and passed through by aj.
 */
static const struct aj_schema_key config_keys[] = {
	{ "description", AJ_SCHEMA_VALUE, "string", "amlt: experiment description" },
	{ "target", AJ_SCHEMA_KEYS, "mapping", "where the job runs" },
	{ "target.service", AJ_SCHEMA_VALUE, "a backend's name (see Targets)",
	  "the backend (default aml)" },
	{ "target.name", AJ_SCHEMA_VALUE, "string", "Azure ML compute or Singularity virtual cluster" },
	{ "target.workspace_name", AJ_SCHEMA_VALUE, "string", "Azure ML workspace" },
	{ "target.subscription_id", AJ_SCHEMA_VALUE, "string", "Azure subscription (Singularity: VC filter)" },
	{ "target.resource_group", AJ_SCHEMA_VALUE, "string", "Azure resource group (Singularity: VC filter)" },
	{ "target.group_policy_name", AJ_SCHEMA_VALUE, "string", "amlt: Singularity group policy" },
	{ "target.namespace", AJ_SCHEMA_VALUE, "string", "Volcano: Kubernetes namespace" },
	{ "target.queue", AJ_SCHEMA_VALUE, "string", "Volcano: queue" },
	{ "target.context", AJ_SCHEMA_VALUE, "string", "Volcano: kubeconfig context" },
	{ "target.priority_class", AJ_SCHEMA_VALUE, "string", "Volcano: pod priority class" },
	{ "target.gpus_per_node", AJ_SCHEMA_VALUE, "integer >= 0",
	  "SKU processes when -p is not given (compatibility field)" },
	{ "target.cpus_per_node", AJ_SCHEMA_VALUE, "integer >= 1", "Volcano: CPUs per pod" },
	{ "target.memory", AJ_SCHEMA_VALUE, "quantity", "Volcano: memory per pod" },
	{ "target.rdma", AJ_SCHEMA_VALUE, "boolean", "Volcano: RDMA device (default: on with GPUs)" },
	{ "target.labels", AJ_SCHEMA_FREE, "mapping", "Volcano: labels of every pod" },
	{ "target.node_selector", AJ_SCHEMA_FREE, "mapping",
	  "Volcano: node labels every pod must match (a task's own win per key)" },
	{ "environment", AJ_SCHEMA_KEYS, "mapping", "what the job runs in" },
	{ "environment.image", AJ_SCHEMA_VALUE, "string", "container image" },
	{ "environment.registry", AJ_SCHEMA_VALUE, "string", "Azure ML / Singularity: registry put before the image" },
	{ "environment.setup", AJ_SCHEMA_VALUE, "list of strings", "shell lines run once per node before the command" },
	{ "code", AJ_SCHEMA_KEYS, "mapping", "which files ship with the job" },
	{ "code.local_dir", AJ_SCHEMA_VALUE, "string", "amlt: code directory (aj packs the directory it runs in)" },
	{ "code.ignore", AJ_SCHEMA_VALUE, "list of strings", "ignore patterns (gitignore syntax)" },
	{ "storage", AJ_SCHEMA_NAMES, "mapping", "blob containers to mount, by name" },
	{ "storage.<name>", AJ_SCHEMA_KEYS, "mapping", "one container" },
	{ "storage.<name>.storage_account_name", AJ_SCHEMA_VALUE, "string", "storage account" },
	{ "storage.<name>.container_name", AJ_SCHEMA_VALUE, "string", "blob container" },
	{ "storage.<name>.mount_dir", AJ_SCHEMA_VALUE, "absolute path", "where it is mounted" },
	{ "jobs", AJ_SCHEMA_LIST, "list of mappings", "the jobs; aj runs the first" },
	{ "jobs[*]", AJ_SCHEMA_KEYS, "mapping", "one job" },
	{ "jobs[*].name", AJ_SCHEMA_VALUE, "string", "job name" },
	{ "jobs[*].sku", AJ_SCHEMA_VALUE, "string or mapping of node ranges", "the SKU (see SKU)" },
	{ "jobs[*].command", AJ_SCHEMA_VALUE, "list of strings", "shell lines run before the user command" },
	{ "jobs[*].identity", AJ_SCHEMA_VALUE, "managed or user", "Azure ML identity" },
	{ "jobs[*].sla_tier", AJ_SCHEMA_VALUE, "Basic, Standard or Premium", "Singularity SLA tier" },
	{ "jobs[*].priority", AJ_SCHEMA_VALUE, "Low, Medium or High", "Singularity priority" },
	{ "jobs[*].tags", AJ_SCHEMA_VALUE, "list of strings", "Azure ML tags" },
	{ "jobs[*].instance_count", AJ_SCHEMA_VALUE, "integer >= 1", "nodes when -n is not given" },
	{ "jobs[*].process_count_per_node", AJ_SCHEMA_VALUE, "integer >= 1",
	  "launcher processes when --ppn is not given (default 1)" },
	{ "jobs[*].submit_args", AJ_SCHEMA_KEYS, "mapping", "how the job is submitted" },
	{ "jobs[*].submit_args.env", AJ_SCHEMA_FREE, "mapping", "environment variables" },
	{ "jobs[*].submit_args.container_args", AJ_SCHEMA_KEYS, "mapping", "container options" },
	{ "jobs[*].submit_args.container_args.shm_size", AJ_SCHEMA_VALUE, "quantity (or Docker's 64g)",
	  "size of /dev/shm" },
	{ "jobs[*].submit_args.container_args.cpus", AJ_SCHEMA_VALUE, "integer >= 1",
	  "CPUs when target.cpus_per_node is absent" },
	{ "jobs[*].submit_args.container_args.memory", AJ_SCHEMA_VALUE, "quantity",
	  "memory when target.memory is absent" },
	{ "jobs[*].submit_args.container_args.capabilities", AJ_SCHEMA_VALUE, "list of strings",
	  "Linux capabilities to add (ALL refused)" },
	{ "jobs[*].submit_args.container_args.scratch_mount_path", AJ_SCHEMA_VALUE, "absolute path",
	  "node-backed emptyDir for nested containers" },
	{ "jobs[*].submit_args.container_args.scratch_size", AJ_SCHEMA_VALUE, "quantity",
	  "its size limit and ephemeral-storage request" },
	{ "_extra", AJ_SCHEMA_FREE, "mapping", "aj-only data; each part below is checked by its consumer" },
};

#define NR(a) (sizeof(a) / sizeof((a)[0]))

const struct aj_schema aj_schema_config = { "", "mapping", "the config", config_keys,
					    NR(config_keys) };

static const struct aj_schema_key task_keys[] = {
	{ "replicas", AJ_SCHEMA_VALUE, "integer >= 1", "pods" },
	{ "cpus_per_node", AJ_SCHEMA_VALUE, "integer >= 1", "CPUs per pod" },
	{ "memory", AJ_SCHEMA_VALUE, "quantity", "memory per pod" },
	{ "gpus_per_node", AJ_SCHEMA_VALUE, "integer >= 0", "GPUs per pod" },
	{ "rdma", AJ_SCHEMA_VALUE, "boolean", "RDMA device" },
	{ "processes_per_node", AJ_SCHEMA_VALUE, "integer >= 1", "launcher processes per pod" },
	{ "node_selector", AJ_SCHEMA_FREE, "mapping", "node labels to match" },
	{ "command", AJ_SCHEMA_VALUE, "list of strings", "shell lines replacing the user command" },
};

const struct aj_schema aj_schema_task = { "", "mapping", "one task (all but the last two required)",
					  task_keys, NR(task_keys) };

const char *const aj_schema_file_keys[] = { "base", "config" };

static const struct aj_schema_key *find(const struct aj_schema *s, const char *pattern, size_t len)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		if (strlen(s->keys[i].pattern) == len && !memcmp(s->keys[i].pattern, pattern, len))
			return &s->keys[i];
	return NULL;
}

/* The last segment of the child patterns of `parent` (children[], nr). */
static size_t children(const struct aj_schema *s, const char *parent, const char **out,
		       size_t max)
{
	size_t plen = strlen(parent), nr = 0, i;

	for (i = 0; i < s->nr && nr < max; i++) {
		const char *p = s->keys[i].pattern;
		const char *rest = plen ? p + plen + 1 : p;

		if (plen && (strncmp(p, parent, plen) || p[plen] != '.'))
			continue;
		if (!strchr(rest, '.') && !strchr(rest, '['))
			out[nr++] = rest;
	}
	return nr;
}

#define CHILDREN_MAX 32
#define PATTERN_MAX 128

struct walk {
	const struct aj_schema *schema;
	struct aj_errors *err;
	struct aj_buf path;
	char pattern[PATTERN_MAX];
	int failed;
};

static void unknown(struct walk *w, const struct aj_pair *p, const char *parent)
{
	const char *known[CHILDREN_MAX];
	size_t nr = children(w->schema, parent, known, CHILDREN_MAX), i;
	const char *near = aj_suggest(p->key, known, nr);
	struct aj_where where = { p->keypos.file ? p->keypos.file->name : NULL,
				  p->keypos.line, p->keypos.column, aj_buf_cstr(&w->path) };
	struct aj_buf list = AJ_BUF_INIT(AJ_BUF_SMALL);

	w->failed = 1;
	if (near) {
		aj_errors_add(w->err, &where, "unknown key (did you mean \"%s\"?)", near);
		return;
	}
	for (i = 0; i < nr; i++)
		aj_buf_addf(&list, "%s%s", i ? ", " : "", known[i]);
	aj_errors_add(w->err, &where, "unknown key (known here: %s)", aj_buf_cstr(&list));
	aj_buf_release(&list);
}

/*
 * Append segment seg to the pattern of length plen ("." before a key, none
 * before "[*]"). Returns the new length, or 0 when it does not fit.
 */
static size_t pattern_push(struct walk *w, size_t plen, const char *seg, size_t seglen)
{
	size_t dot = plen && seg[0] != '[';

	if (plen + dot + seglen >= PATTERN_MAX)
		return 0;
	if (dot)
		w->pattern[plen] = '.';
	memcpy(w->pattern + plen + dot, seg, seglen);
	w->pattern[plen + dot + seglen] = '\0';
	return plen + dot + seglen;
}

static void walk(struct walk *w, const struct aj_node *n, size_t plen);

/* Walk n as the child `seg` of the current pattern; 0 when no such key exists. */
static int descend(struct walk *w, const struct aj_node *n, size_t plen, const char *seg,
		   size_t seglen)
{
	size_t len = strcspn(seg, ".[") == seglen || seg[0] == '[' ?
		pattern_push(w, plen, seg, seglen) : 0;
	int known = len && find(w->schema, w->pattern, len);

	if (known)
		walk(w, n, len);
	w->pattern[plen] = '\0';
	return known;
}

static void walk(struct walk *w, const struct aj_node *n, size_t plen)
{
	static const struct aj_schema_key root = { "", AJ_SCHEMA_KEYS, "mapping", "the root" };
	const struct aj_schema_key *k = plen ? find(w->schema, w->pattern, plen) : &root;
	size_t i, at;

	if (!k)
		return;
	if (k->kind == AJ_SCHEMA_LIST && n->type == AJ_NODE_SEQ) {
		for (i = 0; i < n->nr; i++) {
			at = w->path.len;
			aj_buf_addf(&w->path, "[%zu]", i);
			descend(w, n->items[i], plen, "[*]", 3);
			w->path.len = at;
		}
	}
	if ((k->kind != AJ_SCHEMA_KEYS && k->kind != AJ_SCHEMA_NAMES) || n->type != AJ_NODE_MAP)
		return;
	for (i = 0; i < n->nr; i++) {
		const struct aj_pair *p = &n->pairs[i];

		at = w->path.len;
		if (aj_buf_addf(&w->path, ".%s", p->key)) {
			aj_errors_oom(w->err);
			w->failed = 1;
			return;
		}
		if (k->kind == AJ_SCHEMA_NAMES)
			descend(w, p->value, plen, "<name>", 6);
		else if (!descend(w, p->value, plen, p->key, p->keylen))
			unknown(w, p, w->pattern);
		w->path.len = at;
		w->path.buf[at] = '\0';
	}
}

int aj_schema_check(const struct aj_schema *s, const struct aj_node *n, const char *pattern,
		    const char *path, struct aj_errors *err)
{
	struct walk w = { s, err, AJ_BUF_INIT(AJ_BUF_SMALL), "", 0 };
	size_t plen = strlen(pattern);

	if (!n || plen >= PATTERN_MAX)
		return 0;
	memcpy(w.pattern, pattern, plen + 1);
	if (aj_buf_addstr(&w.path, path))
		return aj_errors_oom(err);
	walk(&w, n, plen);
	aj_buf_release(&w.path);
	return w.failed ? -1 : 0;
}

int aj_schema_markdown(const struct aj_schema *s, const char *root, struct aj_buf *out)
{
	size_t i;

	if (!root)
		root = s->root;
	if (*root)
		aj_buf_addf(out, "| `%s` | %s | %s |\n", root, s->holds, s->meaning);
	for (i = 0; i < s->nr; i++)
		aj_buf_addf(out, "| `%s%s%s` | %s | %s |\n", root, *root ? "." : "",
			    s->keys[i].pattern, s->keys[i].holds, s->keys[i].meaning);
	return out->failed ? -1 : 0;
}
