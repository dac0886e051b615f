#include "bundle.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "node.h"

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

int aj_bundle_read(struct aj_bundle *b, const struct aj_node *spec,
		   const char *origin, struct aj_errors *err)
{
	const struct aj_node *name, *tmpl, *comps, *cmd;
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
	return ret ? -1 : 0;
}
