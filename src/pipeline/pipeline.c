/*
 * pipeline.c - template to objects, the one way (pipeline.h).
 */
#include "pipeline.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/node.h"
#include "core/placement.h"
#include "core/schema.h"
#include "core/source.h"

void aj_pipeline_init(struct aj_pipeline *p)
{
	memset(p, 0, sizeof(*p));
	aj_template_init(&p->tpl);
	aj_jobspec_init(&p->spec);
}

void aj_pipeline_release(struct aj_pipeline *p)
{
	aj_jobspec_release(&p->spec);
	aj_template_release(&p->tpl);
	aj_pipeline_init(p);
}

/*
 * The node a key path names under the resolved config, or NULL; *key: the
 * position of its key when the path ends at a mapping key (else NULL). Keys
 * may hold dots (label keys: "app.kubernetes.io/name"), so at each mapping
 * the longest key that the path continues with wins; "[i]" indexes
 * sequences.
 */
static const struct aj_node *node_at_path(const struct aj_node *n, const char *path,
					  const struct aj_pos **key)
{
	*key = NULL;
	while (n && *path) {
		const struct aj_node *next = NULL;
		size_t i, best = 0;

		if (*path == '[') {
			char *end;
			unsigned long idx = strtoul(path + 1, &end, 10);

			if (n->type != AJ_NODE_SEQ || *end != ']' || idx >= n->nr)
				return NULL;
			n = n->items[idx];
			path = end + 1;
			*key = NULL;
		} else if (n->type == AJ_NODE_MAP) {
			for (i = 0; i < n->nr; i++) {
				size_t len = n->pairs[i].keylen;

				if (len > best && !strncmp(path, n->pairs[i].key, len) &&
				    (!path[len] || path[len] == '.' || path[len] == '[')) {
					best = len;
					next = n->pairs[i].value;
					*key = &n->pairs[i].keypos;
				}
			}
			if (!next)
				return NULL;
			n = next;
			path += best;
		} else {
			return NULL;
		}
		if (*path == '.')
			path++;
	}
	return n;
}

/*
 * Entries from `from` on that name no file: a key path under config gets
 * the position of the value it names (backends check typed values, which
 * do not carry positions), or of its key for an entry about the key
 * (AJ_WHERE_KEY); the rest, problems with the merged config that no single
 * value caused (a missing key), the leaf's file.
 */
static void locate(struct aj_errors *err, size_t from, const struct aj_template *tpl)
{
	static const char prefix[] = "config.";
	size_t i;

	for (i = from; i < err->nr; i++) {
		struct aj_error *e = &err->items[i];
		const struct aj_node *n = NULL;
		const struct aj_pos *key = NULL;
		struct aj_where w = { NULL, 0, 0, NULL };

		if (e->file)
			continue;
		if (e->path && !strncmp(e->path, prefix, sizeof(prefix) - 1))
			n = node_at_path(tpl->config, e->path + sizeof(prefix) - 1, &key);
		if (n)
			aj_node_where(n, e->path, &w);
		if (n && key && key->file && e->line == AJ_WHERE_KEY) {
			w.file = key->file->name;
			w.line = key->line;
			w.column = key->column;
		}
		if (w.file) {
			e->file = aj_strdup(w.file);
			e->line = w.line;
			e->column = w.column;
		} else if (tpl->display) {
			e->file = aj_strdup(tpl->display);
			e->line = e->column = 0;
		}
	}
}

/*
 * The row for the service as written (any case), looked up before the
 * conversion because the row says where its tasks are; NULL when unknown.
 */
static const struct aj_backend *peek_backend(const struct aj_node *config)
{
	const struct aj_node *n = aj_node_at(config, "target.service");

	if (!n || n->type == AJ_NODE_NULL)
		return aj_backend_find(AJ_DEFAULT_SERVICE);
	return n->type == AJ_NODE_STRING ? aj_backend_find(n->str) : NULL;
}

/*
 * target.service's row, the spec's name made the row's; or an error naming
 * the services the table has.
 */
static const struct aj_backend *find_backend(struct aj_pipeline *p, struct aj_errors *err)
{
	const struct aj_backend *const *all = aj_backend_all();
	const struct aj_backend *be = aj_backend_find(p->spec.target.service);
	struct aj_buf names = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_where w;
	char *name;
	size_t i;

	if (!p->spec.target.service)
		return NULL;      /* not a string: the conversion said so */
	if (be) {
		if (!(name = aj_strdup(be->name))) {
			aj_errors_oom(err);
			return NULL;
		}
		aj_free(p->spec.target.service);
		p->spec.target.service = name;
		return be;
	}
	for (i = 0; all[i]; i++)
		aj_buf_addf(&names, "%s%s", i ? ", " : "", all[i]->name);
	aj_node_where(aj_node_at(p->tpl.config, "target.service"), "config.target.service", &w);
	if (names.failed)
		aj_errors_oom(err);
	else
		aj_errors_add(err, &w, "unknown value \"%s\" (expected one of: %s)",
			      p->spec.target.service, aj_buf_cstr(&names));
	aj_buf_release(&names);
	return NULL;
}

int aj_pipeline_resolve(const struct aj_pipeline_in *in, struct aj_pipeline *p,
			struct aj_errors *err)
{
	return aj_template_resolve(in->source, in->template_name, &p->tpl, err);
}

int aj_pipeline_load(const struct aj_pipeline_in *in, struct aj_pipeline *p,
		     struct aj_errors *err)
{
	struct aj_jobspec_in conv = { in->shape, in->argv, in->argc, NULL };
	const struct aj_backend *be;
	size_t before;
	int rc;

	if (!p->tpl.name && aj_pipeline_resolve(in, p, err))
		return -1;
	if (aj_placement_declared(p->tpl.config))
		return aj_errors_add(err, &(struct aj_where){ .file = p->tpl.display,
				     .path = "config.placement" },
				     "%s chooses among candidate templates: it has no target of its own",
				     p->tpl.name);
	before = err->nr;
	be = peek_backend(p->tpl.config);
	conv.tasks_key = be ? be->tasks_key : NULL;
	rc = aj_jobspec_convert(p->tpl.config, p->tpl.name, &conv, &p->spec, err);
	p->backend = find_backend(p, err);
	if (rc || !p->backend) {
		/* the tasks' own problems too, so one run reports them all */
		if (p->spec.heterogeneous && p->backend)
			aj_backend_check(p->backend, &p->spec, err);
		locate(err, before, &p->tpl);
		return -1;
	}
	rc = aj_backend_check(p->backend, &p->spec, err) ||
	     (in->permitted && p->backend->target == AJ_TARGET_CLUSTER &&
	      aj_backend_permit(&p->spec, in->namespace_, in->permitted, err));
	locate(err, before, &p->tpl);
	if (rc)
		return -1;
	return in->code_digest ? aj_pipeline_set_code(p, in->code_digest, err) : 0;
}

int aj_pipeline_set_code(struct aj_pipeline *p, const char *digest, struct aj_errors *err)
{
	char *copy = aj_strdup(digest);

	if (!copy)
		return aj_errors_oom(err);
	aj_free(p->spec.code.digest);
	p->spec.code.digest = copy;
	return 0;
}

int aj_pipeline_build(const struct aj_pipeline *p, const struct aj_build_ctx *ctx,
		      cJSON **out, struct aj_errors *err)
{
	return p->backend->build(&p->spec, ctx, out, err);
}

#define PARTS_MAX 16

/* Each task declared at a row's tasks_key, against the keys of one task. */
static int check_tasks(const struct aj_node *extra, struct aj_errors *err)
{
	const struct aj_backend *const *all = aj_backend_all();
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i, j;
	int rc = 0;

	for (i = 0; all[i]; i++) {
		const struct aj_node *tasks = all[i]->tasks_key && extra && extra->type == AJ_NODE_MAP ?
			aj_node_at(extra, all[i]->tasks_key) : NULL;

		for (j = 0; tasks && tasks->type == AJ_NODE_MAP && j < tasks->nr; j++) {
			aj_buf_reset(&path);
			if (aj_buf_addf(&path, "config._extra.%s.%s", all[i]->tasks_key,
					tasks->pairs[j].key)) {
				rc = aj_errors_oom(err);
				break;
			}
			if (aj_schema_check(&aj_schema_task, tasks->pairs[j].value, "",
					    aj_buf_cstr(&path), err))
				rc = -1;
		}
	}
	aj_buf_release(&path);
	return rc;
}

int aj_pipeline_check_keys(const struct aj_template *tpl, struct aj_errors *err)
{
	const struct aj_schema *parts[PARTS_MAX];
	size_t nr = aj_backend_extra_parts(parts, PARTS_MAX);
	const struct aj_node *extra = aj_node_get(tpl->config, "_extra");
	int rc = aj_schema_check(&aj_schema_config, tpl->config, "", "config", err);

	if (aj_backend_check_parts(parts, nr < PARTS_MAX ? nr : PARTS_MAX, extra, err))
		rc = -1;
	if (check_tasks(extra, err))
		rc = -1;
	return rc;
}
