#include "schema.h"

#include <string.h>

#include "buf.h"
#include "error.h"
#include "node.h"
#include "suggest.h"

enum kind {
	KEYS,       /* a mapping whose keys are listed below it */
	NAMES,      /* a mapping of user-chosen names, each one `<name>` below it */
	LIST,       /* a list whose items are `[*]` below it */
	VALUE,      /* a value the conversion checks; not looked into */
	FREE        /* a mapping whose keys are the user's (not looked into) */
};

struct key {
	const char *pattern;
	enum kind kind;
	const char *holds;
	const char *meaning;
};

/*
 * Patterns below `config`; a key's parent is listed before it. Keys marked
 * "amlt" are read by amlt only (--amlt) and passed through by aj.
 */
static const struct key keys[] = {
	{ "description", VALUE, "string", "amlt: experiment description" },
	{ "target", KEYS, "mapping", "where the job runs" },
	{ "target.service", VALUE, "aml, kube, sing or volcano", "the backend (default aml)" },
	{ "target.name", VALUE, "string", "Azure ML compute or Singularity virtual cluster" },
	{ "target.workspace_name", VALUE, "string", "Azure ML workspace" },
	{ "target.subscription_id", VALUE, "string", "Azure subscription (Singularity: VC filter)" },
	{ "target.resource_group", VALUE, "string", "Azure resource group (Singularity: VC filter)" },
	{ "target.group_policy_name", VALUE, "string", "amlt: Singularity group policy" },
	{ "target.namespace", VALUE, "string", "Volcano: Kubernetes namespace" },
	{ "target.queue", VALUE, "string", "Volcano: queue" },
	{ "target.context", VALUE, "string", "Volcano: kubeconfig context" },
	{ "target.priority_class", VALUE, "string", "Volcano: pod priority class" },
	{ "target.gpus_per_node", VALUE, "integer >= 0",
	  "SKU processes when -p is not given (compatibility field)" },
	{ "target.cpus_per_node", VALUE, "integer >= 1", "Volcano: CPUs per pod" },
	{ "target.memory", VALUE, "quantity", "Volcano: memory per pod" },
	{ "target.rdma", VALUE, "boolean", "Volcano: RDMA device (default: on with GPUs)" },
	{ "target.labels", FREE, "mapping", "Volcano: labels of every pod" },
	{ "environment", KEYS, "mapping", "what the job runs in" },
	{ "environment.image", VALUE, "string", "container image" },
	{ "environment.registry", VALUE, "string", "Azure ML / Singularity: registry put before the image" },
	{ "environment.setup", VALUE, "list of strings", "shell lines run once per node before the command" },
	{ "code", KEYS, "mapping", "which files ship with the job" },
	{ "code.local_dir", VALUE, "string", "amlt: code directory (aj packs the directory it runs in)" },
	{ "code.ignore", VALUE, "list of strings", "ignore patterns (gitignore syntax)" },
	{ "storage", NAMES, "mapping", "blob containers to mount, by name" },
	{ "storage.<name>", KEYS, "mapping", "one container" },
	{ "storage.<name>.storage_account_name", VALUE, "string", "storage account" },
	{ "storage.<name>.container_name", VALUE, "string", "blob container" },
	{ "storage.<name>.mount_dir", VALUE, "absolute path", "where it is mounted" },
	{ "jobs", LIST, "list of mappings", "the jobs; aj runs the first" },
	{ "jobs[*]", KEYS, "mapping", "one job" },
	{ "jobs[*].name", VALUE, "string", "job name" },
	{ "jobs[*].sku", VALUE, "string or mapping of node ranges", "the SKU (see SKU)" },
	{ "jobs[*].command", VALUE, "list of strings", "shell lines run before the user command" },
	{ "jobs[*].identity", VALUE, "managed or user", "Azure ML identity" },
	{ "jobs[*].sla_tier", VALUE, "Basic, Standard or Premium", "Singularity SLA tier" },
	{ "jobs[*].priority", VALUE, "Low, Medium or High", "Singularity priority" },
	{ "jobs[*].tags", VALUE, "list of strings", "Azure ML tags" },
	{ "jobs[*].instance_count", VALUE, "integer >= 1", "nodes when -n is not given" },
	{ "jobs[*].process_count_per_node", VALUE, "integer >= 1",
	  "launcher processes when --ppn is not given (default 1)" },
	{ "jobs[*].submit_args", KEYS, "mapping", "how the job is submitted" },
	{ "jobs[*].submit_args.env", FREE, "mapping", "environment variables" },
	{ "jobs[*].submit_args.container_args", KEYS, "mapping", "container options" },
	{ "jobs[*].submit_args.container_args.shm_size", VALUE, "quantity (or Docker's 64g)",
	  "size of /dev/shm" },
	{ "jobs[*].submit_args.container_args.cpus", VALUE, "integer >= 1",
	  "CPUs when target.cpus_per_node is absent" },
	{ "jobs[*].submit_args.container_args.memory", VALUE, "quantity",
	  "memory when target.memory is absent" },
	{ "jobs[*].submit_args.container_args.capabilities", VALUE, "list of strings",
	  "Linux capabilities to add (ALL refused)" },
	{ "jobs[*].submit_args.container_args.scratch_mount_path", VALUE, "absolute path",
	  "node-backed emptyDir for nested containers" },
	{ "jobs[*].submit_args.container_args.scratch_size", VALUE, "quantity",
	  "its size limit and ephemeral-storage request" },
	{ "_extra", FREE, "mapping", "aj-only data; each part below is checked by its consumer" },
	{ "_extra.volcano", KEYS, "mapping", "Volcano options" },
	{ "_extra.volcano.max_retry", VALUE, "integer 0-100", "gang restarts before the job fails" },
	/* FREE for the walk: the task reader checks each task (jobspec.h) */
	{ "_extra.volcano.tasks", FREE, "mapping", "heterogeneous tasks, by name" },
	{ "_extra.volcano.tasks.<name>", KEYS, "mapping", "one task (all but the last two required)" },
	{ "_extra.volcano.tasks.<name>.replicas", VALUE, "integer >= 1", "pods" },
	{ "_extra.volcano.tasks.<name>.cpus_per_node", VALUE, "integer >= 1", "CPUs per pod" },
	{ "_extra.volcano.tasks.<name>.memory", VALUE, "quantity", "memory per pod" },
	{ "_extra.volcano.tasks.<name>.gpus_per_node", VALUE, "integer >= 0", "GPUs per pod" },
	{ "_extra.volcano.tasks.<name>.rdma", VALUE, "boolean", "RDMA device" },
	{ "_extra.volcano.tasks.<name>.processes_per_node", VALUE, "integer >= 1",
	  "launcher processes per pod" },
	{ "_extra.volcano.tasks.<name>.node_selector", FREE, "mapping", "node labels to match" },
	{ "_extra.volcano.tasks.<name>.command", VALUE, "list of strings",
	  "shell lines replacing the user command" },
	{ "_extra.code_upload", KEYS, "mapping", "how code reaches Volcano pods" },
	{ "_extra.code_upload.strategy", VALUE, "kubectl-exec or blob", "default kubectl-exec" },
	{ "_extra.code_upload.blob", KEYS, "mapping", "the blob strategy" },
	{ "_extra.code_upload.blob.storage_account", VALUE, "string", "storage account" },
	{ "_extra.code_upload.blob.container", VALUE, "string", "blob container" },
	{ "_extra.code_upload.blob.upload_dir", VALUE, "string", "folder in the container (default aj-code)" },
	{ "_extra.code_upload.blob.sas_expiry_days", VALUE, "integer 1-7", "lifetime of the read SAS (default 1)" },
	{ "_extra.code_upload.blob.pod_download_retries", VALUE, "integer 0-100",
	  "download retries in the pod (default 5)" },
};

#define KEYS_NR (sizeof(keys) / sizeof(keys[0]))

const char *const aj_schema_file_keys[] = { "base", "config" };

static const struct key *find(const char *pattern, size_t len)
{
	size_t i;

	for (i = 0; i < KEYS_NR; i++)
		if (strlen(keys[i].pattern) == len && !memcmp(keys[i].pattern, pattern, len))
			return &keys[i];
	return NULL;
}

/* The last segment of the child patterns of `parent` (children[], nr). */
static size_t children(const char *parent, const char **out, size_t max)
{
	size_t plen = strlen(parent), nr = 0, i;

	for (i = 0; i < KEYS_NR && nr < max; i++) {
		const char *p = keys[i].pattern;
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
	struct aj_errors *err;
	struct aj_buf path;
	char pattern[PATTERN_MAX];
	int failed;
};

static void unknown(struct walk *w, const struct aj_pair *p, const char *parent)
{
	const char *known[CHILDREN_MAX];
	size_t nr = children(parent, known, CHILDREN_MAX), i;
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
	int known = len && find(w->pattern, len);

	if (known)
		walk(w, n, len);
	w->pattern[plen] = '\0';
	return known;
}

static void walk(struct walk *w, const struct aj_node *n, size_t plen)
{
	static const struct key root = { "", KEYS, "mapping", "the config" };
	const struct key *k = plen ? find(w->pattern, plen) : &root;
	size_t i, at;

	if (!k)
		return;
	if (k->kind == LIST && n->type == AJ_NODE_SEQ) {
		for (i = 0; i < n->nr; i++) {
			at = w->path.len;
			aj_buf_addf(&w->path, "[%zu]", i);
			descend(w, n->items[i], plen, "[*]", 3);
			w->path.len = at;
		}
	}
	if ((k->kind != KEYS && k->kind != NAMES) || n->type != AJ_NODE_MAP)
		return;
	for (i = 0; i < n->nr; i++) {
		const struct aj_pair *p = &n->pairs[i];

		at = w->path.len;
		if (aj_buf_addf(&w->path, ".%s", p->key)) {
			aj_errors_oom(w->err);
			w->failed = 1;
			return;
		}
		if (k->kind == NAMES)
			descend(w, p->value, plen, "<name>", 6);
		else if (!descend(w, p->value, plen, p->key, p->keylen))
			unknown(w, p, w->pattern);
		w->path.len = at;
		w->path.buf[at] = '\0';
	}
}

int aj_schema_check(const struct aj_node *n, const char *pattern, const char *path,
		    struct aj_errors *err)
{
	struct walk w = { err, AJ_BUF_INIT(AJ_BUF_SMALL), "", 0 };
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

int aj_schema_markdown(struct aj_buf *out)
{
	size_t i;

	aj_buf_addstr(out, "| key | holds | meaning |\n|---|---|---|\n");
	for (i = 0; i < KEYS_NR; i++)
		aj_buf_addf(out, "| `%s` | %s | %s |\n", keys[i].pattern, keys[i].holds,
			    keys[i].meaning);
	return out->failed ? -1 : 0;
}
