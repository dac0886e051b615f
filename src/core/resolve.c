#include "resolve.h"

#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "merge.h"
#include "node.h"
#include "schema.h"
#include "source.h"
#include "suggest.h"

/* Longest base chain; far beyond any real template tree. */
#define RESOLVE_MAX_DEPTH 64
#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

void aj_template_init(struct aj_template *t)
{
	memset(t, 0, sizeof(*t));
	aj_strlist_init(&t->bases);
	aj_strlist_init(&t->files);
}

void aj_template_release(struct aj_template *t)
{
	size_t i;

	for (i = 0; i < t->files.nr; i++)
		aj_node_free(t->docs[i]);
	aj_free(t->docs);
	aj_strlist_release(&t->files);
	aj_strlist_release(&t->bases);
	aj_node_free(t->config);
	aj_free(t->name);
	aj_free(t->display);
	aj_template_init(t);
}

static void where_in(const char *display, const struct aj_node *n, struct aj_where *w)
{
	aj_node_where(n, NULL, w);
	w->file = display;
}

int aj_template_bases(const struct aj_node *doc, const char *display,
		      struct aj_strlist *out, int *present, struct aj_errors *err)
{
	const struct aj_node *base = aj_node_get(doc, "base");
	struct aj_where w;
	size_t i;

	*present = base != NULL;
	if (!base || base->type == AJ_NODE_NULL)
		return 0;
	where_in(display, base, &w);
	if (base->type == AJ_NODE_STRING)
		return aj_strlist_add(out, base->str) ? aj_errors_oom(err) : 0;
	if (base->type != AJ_NODE_SEQ)
		return aj_errors_add(err, &w, "base must be a string or a list of strings, got %s",
				     aj_node_type_name(base->type));
	for (i = 0; i < base->nr; i++) {
		const struct aj_node *item = base->items[i];

		if (item->type != AJ_NODE_STRING) {
			where_in(display, item, &w);
			return aj_errors_add(err, &w, "base[%zu] must be a string, got %s",
					     i, aj_node_type_name(item->type));
		}
		if (aj_strlist_add(out, item->str))
			return aj_errors_oom(err);
	}
	return 0;
}

/* The base entry node behind bases[i] (for error positions). */
static const struct aj_node *base_entry(const struct aj_node *doc, size_t i)
{
	const struct aj_node *base = aj_node_get(doc, "base");

	return base && base->type == AJ_NODE_SEQ ? base->items[i] : base;
}

struct file_info {
	char *display;
	size_t *bases;              /* indexes into t->files */
	size_t nr_bases;
	struct aj_node *resolved;   /* filled by the merge pass */
	size_t nodes;               /* nodes in resolved */
};

struct resolver {
	struct aj_source *src;
	struct aj_template *t;
	struct aj_errors *err;
	struct file_info *info;     /* parallel to t->files */
	size_t info_alloc;
	struct aj_strlist path;     /* names from the leaf to the file being read */
	size_t merged;              /* nodes fed to merges so far (AJ_RESOLVE_MAX_NODES) */
};

/* "a -> b -> c" from the current path plus `last`. */
static int chain_text(const struct resolver *r, const char *last, struct aj_buf *b)
{
	size_t i;

	for (i = 0; i < r->path.nr; i++)
		aj_buf_addf(b, "%s -> ", r->path.items[i]);
	return aj_buf_addstr(b, last);
}

/* "<prefix><chain><suffix>", the chain ending in `last`. */
static int chain_error(struct resolver *r, const struct aj_where *w, const char *last,
		       const char *prefix, const char *suffix)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	if (chain_text(r, last, &b))
		return aj_errors_oom(r->err);
	aj_errors_add(r->err, w, "%s%s%s", prefix, aj_buf_cstr(&b), suffix);
	aj_buf_release(&b);
	return -1;
}

/*
 * A file holds `base` and `config` only: a misspelt `cofnig` would otherwise
 * drop the whole payload and fail later, far from the typo. Reports all.
 */
static int check_file_keys(struct resolver *r, const struct aj_node *doc, const char *display)
{
	int ret = 0;
	size_t i;

	for (i = 0; i < doc->nr; i++) {
		const struct aj_pair *p = &doc->pairs[i];
		const char *near;
		struct aj_where w = { display, p->keypos.line, p->keypos.column, p->key };

		if (!strcmp(p->key, "base") || !strcmp(p->key, "config"))
			continue;
		near = aj_suggest(p->key, aj_schema_file_keys, AJ_SCHEMA_FILE_KEYS);
		if (near)
			ret = aj_errors_add(r->err, &w, "unknown key (did you mean \"%s\"?)", near);
		else
			ret = aj_errors_add(r->err, &w, "unknown key: a template file holds "
					    "only base and config");
	}
	return ret;
}

/* The top level must be a mapping (or empty) and `config` a mapping. */
static int check_shape(struct resolver *r, const struct aj_node *doc, const char *display)
{
	const struct aj_node *config;
	struct aj_where w;

	if (!doc)
		return 0;
	where_in(display, doc, &w);
	if (doc->type != AJ_NODE_MAP)
		return aj_errors_add(r->err, &w, "a template file must be a mapping "
				     "with `base` and `config`, got %s",
				     aj_node_type_name(doc->type));
	if (check_file_keys(r, doc, display))
		return -1;
	config = aj_node_get(doc, "config");
	if (config && config->type != AJ_NODE_MAP && config->type != AJ_NODE_NULL) {
		where_in(display, config, &w);
		return aj_errors_add(r->err, &w, "config must be a mapping, got %s",
				     aj_node_type_name(config->type));
	}
	return 0;
}

/* Record a freshly read file; takes doc and display. Returns its index. */
static long add_file(struct resolver *r, const char *name, struct aj_node *doc,
		     char *display)
{
	struct aj_template *t = r->t;
	struct file_info *fi;

	if (AJ_GROW(t->docs, t->files.nr + 1, t->docs_alloc) ||
	    AJ_GROW(r->info, t->files.nr + 1, r->info_alloc) ||
	    aj_strlist_add(&t->files, name)) {
		aj_node_free(doc);
		aj_free(display);
		return aj_errors_oom(r->err);
	}
	t->docs[t->files.nr - 1] = doc;
	fi = &r->info[t->files.nr - 1];
	memset(fi, 0, sizeof(*fi));
	fi->display = display;
	return (long)(t->files.nr - 1);
}

/*
 * For a missing file, the names near it in its folder (`-t cpuu`: did you
 * mean template/cpu?), when the source can list. Best effort: a failed
 * listing only costs the hint.
 */
static void nearest_names(struct resolver *r, const char *name, struct aj_buf *what)
{
	struct aj_strlist names = AJ_STRLIST_INIT;
	struct aj_errors ignored = AJ_ERRORS_INIT;
	const char *slash = strrchr(name, '/');
	char folder[256];
	size_t i, shown = 0;

	if (!r->src->ops->list || !slash || (size_t)(slash - name) >= sizeof(folder))
		goto out;
	memcpy(folder, name, (size_t)(slash - name));
	folder[slash - name] = '\0';
	if (r->src->ops->list(r->src->ctx, folder, &names, &ignored))
		goto out;
	for (i = 0; i < names.nr && shown < 3; i++) {
		const char *other = strrchr(names.items[i], '/');

		if (other && aj_edit_distance(slash + 1, other + 1, AJ_SUGGEST_MAX_DISTANCE) <=
		    AJ_SUGGEST_MAX_DISTANCE)
			aj_buf_addf(what, "%s%s", shown++ ? ", " : " (did you mean ", names.items[i]);
	}
	if (shown)
		aj_buf_addstr(what, "?)");
out:
	aj_strlist_release(&names);
	aj_errors_release(&ignored);
}

/*
 * Read `name` and, depth first, everything it inherits from. `at` is the base
 * entry that named it (NULL for the leaf) and `referrer` that entry's file.
 * Each file is read once; a name already on the path is a cycle.
 */
static long visit(struct resolver *r, const char *name, const char *referrer,
		  const struct aj_node *at)
{
	struct aj_strlist bases = AJ_STRLIST_INIT;
	struct aj_where w = { NULL, 0, 0, NULL };
	struct aj_node *doc = NULL;
	char *display = NULL;
	long idx;
	size_t i;
	int rc, present;

	if (at)
		where_in(referrer, at, &w);
	if (aj_strlist_find(&r->path, name) >= 0)
		return chain_error(r, &w, name, "circular template inheritance: ", "");
	idx = aj_strlist_find(&r->t->files, name);
	if (idx >= 0)
		return idx;
	if (r->path.nr >= RESOLVE_MAX_DEPTH)
		return chain_error(r, &w, name, "template inheritance deeper than "
				   STRINGIFY(RESOLVE_MAX_DEPTH) " levels: ", "");
	rc = r->src->ops->read(r->src->ctx, name, &doc, &display, r->err);
	if (rc == AJ_SOURCE_NOT_FOUND) {
		struct aj_buf what = AJ_BUF_INIT(AJ_BUF_SMALL);

		if (r->src->ops->describe(r->src->ctx, name, &display))
			return aj_errors_oom(r->err);
		aj_buf_addf(&what, ": file not found: %s", display);
		aj_free(display);
		nearest_names(r, name, &what);
		if (what.failed)
			return aj_errors_oom(r->err);
		chain_error(r, &w, name, "", aj_buf_cstr(&what));
		aj_buf_release(&what);
		return -1;
	}
	if (rc)
		return -1;
	idx = add_file(r, name, doc, display);
	if (idx < 0)
		return -1;
	display = r->info[idx].display;
	if (check_shape(r, doc, display) ||
	    aj_template_bases(doc, display, &bases, &present, r->err))
		goto fail;
	if (bases.nr) {
		r->info[idx].bases = aj_calloc(bases.nr, sizeof(size_t));
		if (!r->info[idx].bases) {
			aj_errors_oom(r->err);
			goto fail;
		}
	}
	if (aj_strlist_add(&r->path, name)) {
		aj_errors_oom(r->err);
		goto fail;
	}
	for (i = 0; i < bases.nr; i++) {
		const struct aj_node *entry = base_entry(doc, i);
		char *canonical = NULL;
		long child;

		if (aj_canonical_base(name, bases.items[i], &canonical, r->err, entry))
			goto fail_path;
		child = visit(r, canonical, display, entry);
		aj_free(canonical);
		if (child < 0)
			goto fail_path;
		/* r->info may have moved while visiting. */
		r->info[idx].bases[r->info[idx].nr_bases++] = (size_t)child;
	}
	aj_free(r->path.items[--r->path.nr]);
	aj_strlist_release(&bases);
	return idx;
fail_path:
	aj_free(r->path.items[--r->path.nr]);
fail:
	aj_strlist_release(&bases);
	return -1;
}

/* Nodes in a tree (depth is capped by the loaders, so recursion is bounded). */
static size_t node_count(const struct aj_node *n)
{
	size_t count = 1, i;

	if (!n)
		return 0;
	for (i = 0; n->type == AJ_NODE_SEQ && i < n->nr; i++)
		count += node_count(n->items[i]);
	for (i = 0; n->type == AJ_NODE_MAP && i < n->nr; i++)
		count += node_count(n->pairs[i].value);
	return count;
}

/*
 * Merge pass: a file's bases left to right, then its own config. Each file
 * is merged once (diamonds share the result), and the nodes fed to merges
 * are counted against AJ_RESOLVE_MAX_NODES, which bounds the work.
 */
static int resolve_file(struct resolver *r, size_t idx)
{
	struct file_info *fi = &r->info[idx];
	const struct aj_node **values;
	struct aj_node *out = NULL;
	size_t i;
	int rc;

	if (fi->resolved)
		return 0;
	for (i = 0; i < fi->nr_bases; i++)
		if (resolve_file(r, fi->bases[i]))
			return -1;
	values = aj_malloc((fi->nr_bases + 1) * sizeof(*values));
	if (!values)
		return aj_errors_oom(r->err);
	for (i = 0; i < fi->nr_bases; i++) {
		values[i] = r->info[fi->bases[i]].resolved;
		r->merged += r->info[fi->bases[i]].nodes;
	}
	values[i] = aj_node_get(r->t->docs[idx], "config");
	r->merged += node_count(values[i]);
	if (r->merged > AJ_RESOLVE_MAX_NODES) {
		struct aj_where w = { fi->display, 0, 0, NULL };

		aj_free(values);
		return aj_errors_add(r->err, &w, "merging the bases of %s would copy more than %u "
				     "nodes (bases reached along many paths repeat their lists each "
				     "time): reach shared bases through fewer paths",
				     r->t->files.items[idx], AJ_RESOLVE_MAX_NODES);
	}
	rc = aj_merge(values, fi->nr_bases + 1, &out);
	aj_free(values);
	if (rc)
		return aj_errors_oom(r->err);
	if (!out) {
		out = aj_node_new(AJ_NODE_MAP, NULL);
		if (!out)
			return aj_errors_oom(r->err);
	}
	fi->resolved = out;
	fi->nodes = node_count(out);
	return 0;
}

static int fill_leaf(struct resolver *r, const char *name)
{
	struct aj_template *t = r->t;
	int present;

	t->name = aj_strdup(name);
	t->display = aj_strdup(r->info[0].display);
	if (!t->name || !t->display)
		return aj_errors_oom(r->err);
	if (aj_template_bases(t->docs[0], t->display, &t->bases, &present, r->err))
		return -1;
	t->has_base = present;
	t->config = r->info[0].resolved;
	r->info[0].resolved = NULL;
	return 0;
}

int aj_template_resolve(struct aj_source *src, const char *name,
			struct aj_template *t, struct aj_errors *err)
{
	struct resolver r;
	size_t i;
	int ret;

	if (!aj_canonical_valid(name))
		return aj_errors_add(err, NULL, "invalid template name \"%.80s\"", name);
	memset(&r, 0, sizeof(r));
	r.src = src;
	r.t = t;
	r.err = err;
	aj_strlist_init(&r.path);
	ret = visit(&r, name, NULL, NULL) < 0 ? -1 : 0;
	if (!ret)
		ret = resolve_file(&r, 0);
	if (!ret)
		ret = fill_leaf(&r, name);
	for (i = 0; i < t->files.nr; i++) {
		aj_free(r.info[i].display);
		aj_free(r.info[i].bases);
		aj_node_free(r.info[i].resolved);
	}
	aj_free(r.info);
	aj_strlist_release(&r.path);
	return ret;
}
