#include "candidates.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/jobspec.h"
#include "core/node.h"
#include "core/resolve.h"
#include "core/schema.h"

void aj_candidates_init(struct aj_candidates *c)
{
	memset(c, 0, sizeof(*c));
	aj_placement_init(&c->placement);
}

void aj_candidates_release(struct aj_candidates *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++) {
		aj_pipeline_release(&c->items[i].p);
		aj_errors_release(&c->items[i].why);
	}
	aj_free(c->items);
	aj_placement_release(&c->placement);
	aj_candidates_init(c);
}

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

int aj_candidate_place(const struct aj_candidate *cand, const char *namespace_, struct aj_buf *out)
{
	const struct aj_target *t = &cand->p.spec.target;

	const char *const azure[] = { t->subscription_id, t->resource_group, t->workspace_name, t->name };
	const char *sep = "";
	size_t i;

	if (cand->p.backend->target == AJ_TARGET_CLUSTER)
		return aj_buf_addf(out, "%s/%s", t->namespace_ ? t->namespace_ : or_empty(namespace_),
				   or_empty(t->queue));
	/* what the template says: parts left to the controller's workspace are not written */
	for (i = 0; i < sizeof(azure) / sizeof(azure[0]); i++) {
		if (!azure[i] || !*azure[i])
			continue;
		aj_buf_addf(out, "%s%s", sep, azure[i]);
		sep = "/";
	}
	return out->failed ? -1 : 0;
}

/* The first line of a left-out candidate's reason, at its entry in the leaf. */
static void left_out(struct aj_candidate *cand, const struct aj_placement_candidate *pc,
		     size_t i, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void left_out(struct aj_candidate *cand, const struct aj_placement_candidate *pc,
		     size_t i, const char *fmt, ...)
{
	char path[64];
	struct aj_where w = { pc->file, pc->line, pc->column, path };
	struct aj_errors first = AJ_ERRORS_INIT;
	va_list ap;

	snprintf(path, sizeof(path), "config.placement.candidates[%zu]", i);
	va_start(ap, fmt);
	aj_errors_vadd(&first, &w, fmt, ap);
	va_end(ap);
	/* the entry's line first, then what the candidate's own files said */
	aj_errors_splice(&first, &cand->why);
	aj_errors_splice(&cand->why, &first);
	aj_errors_release(&first);
}

static void load_one(const struct aj_pipeline_in *in, struct aj_candidates *c, size_t i)
{
	const struct aj_placement_candidate *pc = &c->placement.items[i];
	struct aj_candidate *cand = &c->items[i];
	struct aj_pipeline_in one = *in;

	cand->name = pc->name;
	cand->order = i;
	aj_pipeline_init(&cand->p);
	aj_errors_init(&cand->why);
	one.template_name = pc->name;
	if (aj_pipeline_resolve(&one, &cand->p, &cand->why)) {
		left_out(cand, pc, i, "%s is left out: it does not resolve", pc->name);
		return;
	}
	if (aj_placement_declared(cand->p.tpl.config)) {
		left_out(cand, pc, i, "%s is left out: it declares a placement itself "
			 "(candidates do not nest)", pc->name);
		return;
	}
	if (aj_pipeline_load(&one, &cand->p, &cand->why)) {
		left_out(cand, pc, i, "%s is left out: it does not validate", pc->name);
		return;
	}
	if (in->namespace_ && cand->p.backend->target == AJ_TARGET_CLUSTER &&
	    cand->p.spec.target.namespace_ && strcmp(cand->p.spec.target.namespace_, in->namespace_)) {
		left_out(cand, pc, i, "%s is left out: its target.namespace is %s, not the "
			 "AjJob's namespace %s", pc->name, cand->p.spec.target.namespace_, in->namespace_);
		return;
	}
	cand->ok = 1;
}

/*
 * A valid candidate that would create the same objects in the same place
 * as an earlier one (the same backend, place, pods and all) is kept once: trying it again
 * would wait in the same place for the same thing. Two in one queue that
 * ask for different nodes are both kept. Objects are built under one
 * placeholder name so only what the templates say can differ; one that
 * does not build is no repeat (its own build reports it).
 */
static int drop_repeats(const struct aj_pipeline_in *in, struct aj_candidates *c)
{
	const struct aj_build_ctx ctx = { "aj-candidate", in->namespace_, NULL, NULL, NULL, 1 };
	cJSON **objects = aj_calloc(c->nr ? c->nr : 1, sizeof(*objects));
	struct aj_buf a = AJ_BUF_INIT(AJ_BUF_SMALL), b = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i, j;
	int rc = 0;

	if (!objects)
		return -1;
	for (i = 0; !rc && i < c->nr; i++) {
		struct aj_errors ignored = AJ_ERRORS_INIT;

		if (c->items[i].ok && aj_pipeline_build(&c->items[i].p, &ctx, &objects[i], &ignored))
			objects[i] = NULL;
		rc = ignored.oom ? -1 : 0;
		aj_errors_release(&ignored);
		for (j = 0; !rc && objects[i] && j < i; j++) {
			if (!objects[j] || c->items[i].p.backend != c->items[j].p.backend ||
			    !cJSON_Compare(objects[i], objects[j], 1))
				continue;
			/* an Azure body does not name its workspace: the same body elsewhere is no repeat */
			aj_buf_reset(&a);
			aj_buf_reset(&b);
			if (aj_candidate_place(&c->items[i], in->namespace_, &a) ||
			    aj_candidate_place(&c->items[j], in->namespace_, &b)) {
				rc = -1;
				break;
			}
			if (strcmp(aj_buf_cstr(&a), aj_buf_cstr(&b)))
				continue;
			c->items[i].ok = 0;
			left_out(&c->items[i], &c->placement.items[i], i,
				 "%s is left out: it would create the same objects as %s (kept once)",
				 c->items[i].name, c->items[j].name);
			break;
		}
	}
	for (i = 0; i < c->nr; i++)
		cJSON_Delete(objects[i]);
	aj_free(objects);
	aj_buf_release(&a);
	aj_buf_release(&b);
	return rc;
}

int aj_candidates_load(const struct aj_pipeline_in *in, const struct aj_template *leaf,
		       struct aj_candidates *c, struct aj_errors *err)
{
	size_t i;
	int rc = aj_placement_read(leaf->config, &c->placement, err);

	if (rc && aj_schema_check(&aj_schema_config, aj_node_get(leaf->config, "placement"),
				  "placement", "config.placement", err))
		rc = -1;
	if (rc <= 0)
		return rc ? -1 : aj_errors_add(err, &(struct aj_where){ .file = leaf->display,
						.path = "config.placement" },
						"%s declares no placement", leaf->name);
	c->items = aj_calloc(c->placement.nr, sizeof(*c->items));
	if (!c->items)
		return aj_errors_oom(err);
	c->nr = c->placement.nr;
	for (i = 0; i < c->nr; i++)
		load_one(in, c, i);
	if (drop_repeats(in, c))
		return aj_errors_oom(err);
	for (i = 0; i < c->nr; i++)
		c->valid += c->items[i].ok;
	if (c->valid)
		return 0;
	for (i = 0; i < c->nr; i++)
		aj_errors_splice(err, &c->items[i].why);
	return -1;
}
