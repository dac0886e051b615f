#include "placement.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "duration.h"
#include "error.h"
#include "node.h"
#include "source.h"

#define TEMPLATE_DIR "template/"

void aj_placement_init(struct aj_placement *pl)
{
	memset(pl, 0, sizeof(*pl));
}

void aj_placement_release(struct aj_placement *pl)
{
	size_t i;

	for (i = 0; i < pl->nr; i++) {
		aj_free(pl->items[i].name);
		aj_free(pl->items[i].file);
	}
	aj_free(pl->items);
	aj_placement_init(pl);
}

int aj_placement_declared(const struct aj_node *config)
{
	return aj_node_get(config, "placement") != NULL;
}

/* "kube" or "template/kube" as the canonical "template/kube"; NULL when invalid. */
static char *candidate_name(const char *written)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	char *out;

	if (!strncmp(written, TEMPLATE_DIR, strlen(TEMPLATE_DIR)))
		written += strlen(TEMPLATE_DIR);
	if (!*written || strchr(written, '/'))
		return NULL;
	aj_buf_addstr(&b, TEMPLATE_DIR);
	aj_buf_addstr(&b, written);
	out = aj_buf_detach(&b, NULL);
	if (out && !aj_canonical_valid(out)) {
		aj_free(out);
		return NULL;
	}
	return out;
}

static int add_candidate(struct aj_placement *pl, const struct aj_node *item, char *name)
{
	struct aj_placement_candidate *c;

	c = &pl->items[pl->nr];
	c->name = name;
	c->file = item->pos.file ? aj_strdup(item->pos.file->name) : NULL;
	c->line = item->pos.line;
	c->column = item->pos.column;
	pl->nr++;
	return item->pos.file && !c->file ? -1 : 0;
}

static int read_candidates(const struct aj_node *list, struct aj_placement *pl,
			   struct aj_errors *err)
{
	char path[64];
	size_t i, j;
	int rc = 0;

	if (!list)
		return aj_errors_add(err, &(struct aj_where){ .path = "config.placement" },
				     "candidates: required (the leaf templates to choose among)");
	if (list->type != AJ_NODE_SEQ || !list->nr)
		return aj_node_error(err, list, "config.placement.candidates",
			  "expected a non-empty list of template names");
	if (list->nr > AJ_PLACEMENT_MAX_CANDIDATES)
		return aj_node_error(err, list, "config.placement.candidates", "%zu candidates; at most %d",
			  list->nr, AJ_PLACEMENT_MAX_CANDIDATES);
	pl->items = aj_calloc(list->nr, sizeof(*pl->items));
	if (!pl->items)
		return aj_errors_oom(err);
	for (i = 0; i < list->nr; i++) {
		const struct aj_node *item = list->items[i];
		char *name;

		snprintf(path, sizeof(path), "config.placement.candidates[%zu]", i);
		if (item->type != AJ_NODE_STRING) {
			rc = aj_node_error(err, item, path, "expected a template name such as template/volcano");
			continue;
		}
		name = candidate_name(item->str);
		if (!name) {
			rc = aj_node_error(err, item, path, "'%s' is not a leaf template name (template/NAME)",
				item->str);
			continue;
		}
		for (j = 0; j < pl->nr && strcmp(pl->items[j].name, name); j++)
			;
		if (j < pl->nr) {
			rc = aj_node_error(err, item, path, "%s is listed twice", name);
			aj_free(name);
			continue;
		}
		if (add_candidate(pl, item, name))
			return aj_errors_oom(err);
	}
	return rc;
}

static int read_max_wait(const struct aj_node *n, long *out, struct aj_errors *err)
{
	static const char *const path = "config.placement.max_wait";
	long v = 0;

	if (!n || n->type == AJ_NODE_NULL)
		return 0;
	if (n->type == AJ_NODE_INT && n->v.integer > 0 && n->v.integer <= LONG_MAX / 2)
		v = (long)n->v.integer;
	else if (n->type != AJ_NODE_STRING || aj_duration_parse(n->str, &v))
		return aj_node_error(err, n, path, "expected " AJ_DURATION_HINT " (or whole seconds)");
	if (v < AJ_PLACEMENT_MIN_WAIT)
		return aj_node_error(err, n, path, "%lds is too short to tell a waiting job from a starting one; "
			  "at least %ds", v, AJ_PLACEMENT_MIN_WAIT);
	*out = v;
	return 0;
}

int aj_placement_read(const struct aj_node *config, struct aj_placement *pl,
		      struct aj_errors *err)
{
	const struct aj_node *n = aj_node_get(config, "placement");
	size_t i;
	int rc = 0;

	if (!n)
		return 0;
	if (n->type != AJ_NODE_MAP)
		return aj_node_error(err, n, "config.placement", "expected a mapping with candidates and max_wait");
	/* The candidates carry their own config: anything else here would be ignored. */
	for (i = 0; i < config->nr; i++) {
		const struct aj_pair *p = &config->pairs[i];
		struct aj_where w = { p->keypos.file ? p->keypos.file->name : NULL,
				      p->keypos.line, p->keypos.column, NULL };
		char path[128];

		if (!strcmp(p->key, "placement"))
			continue;
		w.path = path;
		snprintf(path, sizeof(path), "config.%.100s", p->key);
		rc = aj_errors_add(err, &w, "a leaf with placement holds nothing else: "
				   "each candidate template carries its own %s", p->key);
	}
	if (read_candidates(aj_node_get(n, "candidates"), pl, err))
		rc = -1;
	if (read_max_wait(aj_node_get(n, "max_wait"), &pl->max_wait, err))
		rc = -1;
	return rc ? -1 : 1;
}
