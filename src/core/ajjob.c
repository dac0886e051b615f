/*
 * ajjob.c - the AjJob contract (ajjob.h): phases and conditions, the
 * writer `aj run` uses and the reader the controller uses.
 */
#include "ajjob.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "json.h"
#include "node.h"
#include "resolve.h"
#include "timestamp.h"

const char *const aj_phase_names[AJ_PHASES + 1] = {
	"Pending", "Submitted", "Running", "Succeeded", "Failed", "Cancelled", "Cancelling", NULL
};

const char *const aj_status_conditions[AJ_STATUS_CONDITIONS] = {
	"Submitted", "Running", "Succeeded", "Failed", "Restarting", "Suspended", "Unschedulable"
};

const char *aj_phase_name(enum aj_phase p)
{
	return aj_phase_names[p];
}

int aj_phase_parse(const char *s, enum aj_phase *out)
{
	size_t i;

	for (i = 0; i < AJ_PHASES; i++)
		if (s && !strcmp(s, aj_phase_names[i])) {
			*out = (enum aj_phase)i;
			return 0;
		}
	return -1;
}

int aj_phase_terminal(enum aj_phase p)
{
	return p == AJ_PHASE_SUCCEEDED || p == AJ_PHASE_FAILED || p == AJ_PHASE_CANCELLED;
}

const cJSON *aj_status_condition(const cJSON *status, const char *type)
{
	const cJSON *c;

	cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(status, "conditions")) {
		const char *t = aj_json_str(c, "type");

		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

long long aj_status_true_since(const cJSON *status, const char *type)
{
	const cJSON *c = aj_status_condition(status, type);
	const char *on = aj_json_str(c, "status");
	long long t;

	if (!on || strcmp(on, "True"))
		return 0;
	t = aj_timestamp_parse(aj_json_str(c, "lastTransitionTime"), 0);
	return t > 0 ? t : 0;
}

int aj_phase_rank(enum aj_phase p)
{
	switch (p) {
	case AJ_PHASE_PENDING:
		return 0;
	case AJ_PHASE_SUBMITTED:
		return 1;
	case AJ_PHASE_RUNNING:
		return 2;
	case AJ_PHASE_CANCELLING:
		return 3;
	default:
		return 4;
	}
}

/* Add item to obj under key (or to an array obj); on failure delete item. 0 / -1. */
static int attach(cJSON *obj, const char *key, cJSON *item)
{
	int ok = item && (cJSON_IsArray(obj) ? cJSON_AddItemToArray(obj, item)
					      : cJSON_AddItemToObject(obj, key, item));

	if (!ok)
		cJSON_Delete(item);
	return ok ? 0 : -1;
}

/* One file of the resolved chain as the AjJob carries it: {base, config}. */
static cJSON *file_json(const struct aj_node *doc, const char *display,
			struct aj_errors *err)
{
	struct aj_strlist bases = AJ_STRLIST_INIT;
	const struct aj_node *config = doc ? aj_node_get(doc, "config") : NULL;
	cJSON *out = cJSON_CreateObject(), *arr;
	size_t i;
	int present;

	if (!out)
		goto oom;
	if (doc && aj_template_bases(doc, display, &bases, &present, err))
		goto fail;
	arr = cJSON_AddArrayToObject(out, "base");
	for (i = 0; arr && i < bases.nr; i++)
		if (attach(arr, NULL, cJSON_CreateString(bases.items[i])))
			goto oom;
	if (!arr || attach(out, "config", config && config->type != AJ_NODE_NULL ?
			   aj_node_to_cjson(config) : cJSON_CreateObject()))
		goto oom;
	aj_strlist_release(&bases);
	return out;
oom:
	aj_errors_oom(err);
fail:
	aj_strlist_release(&bases);
	cJSON_Delete(out);
	return NULL;
}

static int add_count(cJSON *o, const char *key, int v)
{
	return v <= 0 || cJSON_AddNumberToObject(o, key, v) ? 0 : -1;
}

/*
 * Passing the resolved shape rather than only the flags given makes the
 * controller's resolution identical to the CLI's by construction.
 */
int aj_ajjob_set_ttl(cJSON *ajjob, long seconds)
{
	cJSON *spec = cJSON_GetObjectItemCaseSensitive(ajjob, "spec");

	cJSON_DeleteItemFromObjectCaseSensitive(spec, AJ_AJJOB_TTL);
	return spec && cJSON_AddNumberToObject(spec, AJ_AJJOB_TTL, (double)seconds) ? 0 : -1;
}

/* Add tpl's files from the first'th on to comps, each once (candidates share components). */
static int add_files(cJSON *comps, const struct aj_template *tpl, size_t first,
		     struct aj_errors *err)
{
	cJSON *f;
	size_t i;

	for (i = first; i < tpl->files.nr; i++) {
		if (cJSON_GetObjectItemCaseSensitive(comps, tpl->files.items[i]))
			continue;
		f = file_json(tpl->docs[i], i ? tpl->files.items[i] : tpl->display, err);
		if (!f)
			return -1;
		if (attach(comps, tpl->files.items[i], f))
			return aj_errors_oom(err);
	}
	return 0;
}

/*
 * The writer of both kinds of AjJob: the leaf and its files, the files of
 * the placement's candidates (cands, nr), the command, the code and the
 * shape (counts of 0 are left out).
 */
static cJSON *write_ajjob(const char *name, const char *ns, const struct aj_template *tpl,
			  const struct aj_template *const *cands, size_t nr,
			  const struct aj_shape_args *shape, const struct aj_strlist *command,
			  const char *digest, const char *code_uri, struct aj_errors *err)
{
	cJSON *job = cJSON_CreateObject(), *meta, *sp, *comps, *cmd, *f, *code;
	size_t i;

	if (!job || !cJSON_AddStringToObject(job, "apiVersion", AJ_AJJOB_API_VERSION) ||
	    !cJSON_AddStringToObject(job, "kind", AJ_AJJOB_KIND) ||
	    !(meta = cJSON_AddObjectToObject(job, "metadata")) ||
	    !cJSON_AddStringToObject(meta, "name", name) ||
	    !cJSON_AddStringToObject(meta, "namespace", ns) ||
	    !(sp = cJSON_AddObjectToObject(job, "spec")) ||
	    !cJSON_AddStringToObject(sp, "name", tpl->name))
		goto oom;
	f = file_json(tpl->files.nr ? tpl->docs[0] : NULL, tpl->display, err);
	if (!f)
		goto fail;
	if (attach(sp, "template", f) || !(comps = cJSON_AddObjectToObject(sp, "components")))
		goto oom;
	/* the leaf is spec.template, never a component of its own */
	if (tpl->files.nr && !cJSON_AddObjectToObject(comps, tpl->files.items[0]))
		goto oom;
	if (add_files(comps, tpl, 1, err))
		goto fail;
	for (i = 0; i < nr; i++)
		if (add_files(comps, cands[i], 0, err))
			goto fail;
	if (tpl->files.nr)
		cJSON_DeleteItemFromObjectCaseSensitive(comps, tpl->files.items[0]);
	if (!(cmd = cJSON_AddArrayToObject(sp, "command")))
		goto oom;
	for (i = 0; i < command->nr; i++)
		if (attach(cmd, NULL, cJSON_CreateString(command->items[i])))
			goto oom;
	if (digest &&
	    (!(code = cJSON_AddObjectToObject(sp, "code")) ||
	     !cJSON_AddStringToObject(code, "digest", digest) ||
	     (code_uri && !cJSON_AddStringToObject(code, "uri", code_uri))))
		goto oom;
	if (add_count(sp, "nodes", shape->nodes) ||
	    add_count(sp, "processes", shape->processes) ||
	    add_count(sp, "processesPerNode", shape->processes_per_node))
		goto oom;
	return job;
oom:
	aj_errors_oom(err);
fail:
	cJSON_Delete(job);
	return NULL;
}

cJSON *aj_ajjob_write(const char *name, const char *ns, const struct aj_template *tpl,
		      const struct aj_jobspec *spec, const char *code_uri,
		      struct aj_errors *err)
{
	struct aj_shape_args shape = { 0, 0, 0 };

	if (!spec->heterogeneous) {
		shape.nodes = spec->nodes;
		shape.processes = spec->processes;
		shape.processes_per_node = spec->processes_per_node;
	}
	return write_ajjob(name, ns, tpl, NULL, 0, &shape, &spec->command, spec->code.digest,
			   code_uri, err);
}

cJSON *aj_ajjob_write_placement(const char *name, const char *ns, const struct aj_template *leaf,
				const struct aj_template *const *cands, size_t nr,
				const struct aj_shape_args *given, const struct aj_strlist *command,
				const char *digest, const char *code_uri, struct aj_errors *err)
{
	return write_ajjob(name, ns, leaf, cands, nr, given, command, digest, code_uri, err);
}

void aj_bundle_init(struct aj_bundle *b)
{
	memset(b, 0, sizeof(*b));
	aj_strlist_init(&b->command);
}

void aj_bundle_release(struct aj_bundle *b)
{
	if (b->has_source)
		aj_source_release(&b->source);
	aj_free(b->leaf);
	aj_free(b->code_digest);
	aj_free(b->code_uri);
	aj_strlist_release(&b->command);
	aj_bundle_init(b);
}

static int fail_at(struct aj_errors *err, const struct aj_node *n, const char *path,
		   const char *msg)
{
	struct aj_where w;

	aj_node_where(n, path, &w);
	return aj_errors_add(err, &w, "%s", msg);
}

/* One file of the bundle: a mapping with optional `base` and `config`. */
static int add_file(struct aj_bundle *b, const char *name, const struct aj_node *file,
		    const char *path, struct aj_errors *err)
{
	if (!aj_canonical_valid(name))
		return fail_at(err, file, path, "invalid template name (use names like template/gpu)");
	if (file->type != AJ_NODE_MAP)
		return fail_at(err, file, path, "expected a mapping with base and config");
	if (aj_source_memory_add(&b->source, name, file))
		return aj_errors_oom(err);
	return 0;
}

static int read_count(const struct aj_node *spec, const char *key, int *out,
		      struct aj_errors *err)
{
	const struct aj_node *n = aj_node_get(spec, key);
	char path[64];

	*out = 0;
	if (!n || n->type == AJ_NODE_NULL)
		return 0;
	snprintf(path, sizeof(path), "spec.%s", key);
	if (n->type != AJ_NODE_INT || n->v.integer < 1 || n->v.integer > INT_MAX)
		return fail_at(err, n, path, "expected an integer of at least 1");
	*out = (int)n->v.integer;
	return 0;
}

/* spec.code.<key>: a string, or absent. */
static int read_code(const struct aj_node *code, const char *key, char **out,
		     struct aj_errors *err)
{
	const struct aj_node *n = aj_node_get(code, key);
	char path[32];

	if (!n || n->type == AJ_NODE_NULL)
		return 0;
	snprintf(path, sizeof(path), "spec.code.%s", key);
	if (n->type != AJ_NODE_STRING)
		return fail_at(err, n, path, "expected a string");
	*out = aj_strdup(n->str);
	return *out ? 0 : aj_errors_oom(err);
}

int aj_bundle_read(struct aj_bundle *b, const struct aj_node *spec,
		   const char *origin, struct aj_errors *err)
{
	const struct aj_node *name, *tmpl, *comps, *cmd, *code;
	int ret = 0;
	size_t i;

	if (!spec || spec->type != AJ_NODE_MAP)
		return fail_at(err, spec, "spec", "expected a mapping");
	if (aj_source_memory_init(&b->source, origin))
		return aj_errors_oom(err);
	b->has_source = 1;

	name = aj_node_get(spec, "name");
	tmpl = aj_node_get(spec, "template");
	if (!name || name->type != AJ_NODE_STRING)
		ret = fail_at(err, name ? name : spec, "spec.name",
			      name ? "expected a string" : "required");
	else if (!aj_canonical_valid(name->str))
		ret = fail_at(err, name, "spec.name",
			      "invalid template name (use names like template/gpu)");
	else if (!tmpl)
		ret = fail_at(err, spec, "spec.template", "required");
	else if (!(b->leaf = aj_strdup(name->str)))
		ret = aj_errors_oom(err);
	else
		ret |= add_file(b, b->leaf, tmpl, "spec.template", err);

	comps = aj_node_get(spec, "components");
	if (comps && comps->type != AJ_NODE_NULL && comps->type != AJ_NODE_MAP)
		ret = fail_at(err, comps, "spec.components", "expected a mapping");
	for (i = 0; comps && comps->type == AJ_NODE_MAP && i < comps->nr; i++) {
		struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);

		if (aj_buf_addf(&path, "spec.components[\"%s\"]", comps->pairs[i].key))
			return aj_errors_oom(err);
		if (b->leaf && !strcmp(comps->pairs[i].key, b->leaf))
			ret = fail_at(err, comps->pairs[i].value, aj_buf_cstr(&path),
				      "duplicates the leaf template spec.name");
		else
			ret |= add_file(b, comps->pairs[i].key, comps->pairs[i].value,
					aj_buf_cstr(&path), err);
		aj_buf_release(&path);
	}

	cmd = aj_node_get(spec, "command");
	if (!cmd || cmd->type != AJ_NODE_SEQ || !cmd->nr)
		ret = fail_at(err, cmd ? cmd : spec, "spec.command",
			      cmd ? "expected a non-empty list of strings" : "required");
	for (i = 0; cmd && cmd->type == AJ_NODE_SEQ && i < cmd->nr; i++) {
		char path[48];

		snprintf(path, sizeof(path), "spec.command[%zu]", i);
		if (cmd->items[i]->type != AJ_NODE_STRING)
			ret = fail_at(err, cmd->items[i], path, "expected a string");
		else if (aj_strlist_add(&b->command, cmd->items[i]->str))
			return aj_errors_oom(err);
	}

	ret |= read_count(spec, "nodes", &b->args.nodes, err);
	ret |= read_count(spec, "processes", &b->args.processes, err);
	ret |= read_count(spec, "processesPerNode", &b->args.processes_per_node, err);

	code = aj_node_get(spec, "code");
	if (code && code->type != AJ_NODE_NULL && code->type != AJ_NODE_MAP)
		ret = fail_at(err, code, "spec.code", "expected a mapping");
	else if (code && code->type == AJ_NODE_MAP)
		ret |= read_code(code, "digest", &b->code_digest, err) |
		       read_code(code, "uri", &b->code_uri, err);
	return ret ? -1 : 0;
}
