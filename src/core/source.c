#include "source.h"

#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "node.h"
#include "strlist.h"

#define CANONICAL_MAX 253

void aj_source_release(struct aj_source *s)
{
	if (s->ops && s->ops->free)
		s->ops->free(s->ctx);
	s->ops = NULL;
	s->ctx = NULL;
}

/* ---- names ------------------------------------------------------------- */

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

int aj_canonical_valid(const char *name)
{
	const char *seg = name, *p;
	size_t len = strlen(name);

	if (!len || len > CANONICAL_MAX)
		return 0;
	for (p = name;; p++) {
		if (*p == '/' || !*p) {
			size_t n = (size_t)(p - seg);

			if (!n || (n == 1 && seg[0] == '.') ||
			    (n == 2 && seg[0] == '.' && seg[1] == '.'))
				return 0;
			if (!*p)
				return 1;
			seg = p + 1;
		} else if (!name_char(*p)) {
			return 0;
		}
	}
}

int aj_canonical_base(const char *referrer, const char *base, char **out,
		      struct aj_errors *err, const struct aj_node *at)
{
	struct aj_buf b = AJ_BUF_INIT(CANONICAL_MAX + 1);
	struct aj_where w;
	const char *dot = strchr(base, '.'), *slash = strrchr(referrer, '/');
	const char *why = NULL;
	char *name;

	aj_node_where(at, NULL, &w);
	if (!*base)
		why = "it is empty";
	else if (strchr(base, '/') || strchr(base, '\\'))
		why = "use dots, not slashes (\"storage.default\")";
	else if (strstr(base, ".."))
		why = "\"..\" is not allowed";
	else if (dot && (dot == base || !dot[1]))
		why = "a dotted name needs a folder and a file (\"storage.default\")";
	if (why)
		return aj_errors_add(err, &w, "base \"%.80s\" is not a valid template name: %s",
				     base, why);
	if (dot) {
		/* "sub.name" is below the home, whoever refers to it. */
		aj_buf_add(&b, base, (size_t)(dot - base));
		aj_buf_addch(&b, '/');
		aj_buf_addstr(&b, dot + 1);
	} else {
		if (slash)
			aj_buf_add(&b, referrer, (size_t)(slash - referrer) + 1);
		aj_buf_addstr(&b, base);
	}
	if (b.failed)
		return strlen(base) > CANONICAL_MAX ?
			aj_errors_add(err, &w, "base \"%.80s...\" is too long", base) :
			aj_errors_oom(err);
	if (!aj_canonical_valid(aj_buf_cstr(&b))) {
		aj_buf_release(&b);
		return aj_errors_add(err, &w, "base \"%.80s\" is not a valid template name: "
				     "use letters, digits, '.', '_' and '-' only", base);
	}
	name = aj_buf_detach(&b, NULL);
	if (!name)
		return aj_errors_oom(err);
	*out = name;
	return 0;
}

/* ---- memory source ----------------------------------------------------- */

struct memory {
	char *origin;
	struct aj_strlist names;
	struct aj_node **docs;     /* parallel to names; NULL for an empty file */
	size_t docs_alloc;
};

static char *memory_display(const struct memory *m, const char *name)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	aj_buf_addf(&b, "%s: %s", m->origin, name);
	return aj_buf_detach(&b, NULL);
}

static int memory_read(void *ctx, const char *name, struct aj_node **doc,
		       char **display, struct aj_errors *err)
{
	struct memory *m = ctx;
	long i = aj_strlist_find(&m->names, name);
	struct aj_node *copy = NULL;
	char *d;

	if (i < 0)
		return AJ_SOURCE_NOT_FOUND;
	if (m->docs[i] && !(copy = aj_node_copy(m->docs[i])))
		return aj_errors_oom(err);
	d = memory_display(m, name);
	if (!d) {
		aj_node_free(copy);
		return aj_errors_oom(err);
	}
	*doc = copy;
	*display = d;
	return 0;
}

/* Does `name` sit directly in `folder` ("template/x" in "template")? */
static int in_folder(const char *name, const char *folder)
{
	size_t n = strlen(folder);

	return !strncmp(name, folder, n) && name[n] == '/' && !strchr(name + n + 1, '/');
}

/* Sort `names`, append each distinct one to out, and release `names`. */
static int add_sorted(struct aj_strlist *out, struct aj_strlist *names,
		      struct aj_errors *err)
{
	size_t i;
	int ret = 0;

	aj_strlist_sort(names);
	for (i = 0; i < names->nr && !ret; i++) {
		if (i && !strcmp(names->items[i], names->items[i - 1]))
			continue;
		if (aj_strlist_add(out, names->items[i]))
			ret = aj_errors_oom(err);
	}
	aj_strlist_release(names);
	return ret;
}

static int memory_list(void *ctx, const char *folder, struct aj_strlist *out,
		       struct aj_errors *err)
{
	struct memory *m = ctx;
	struct aj_strlist found = AJ_STRLIST_INIT;
	size_t i;

	for (i = 0; i < m->names.nr; i++) {
		if (in_folder(m->names.items[i], folder) &&
		    aj_strlist_add(&found, m->names.items[i])) {
			aj_strlist_release(&found);
			return aj_errors_oom(err);
		}
	}
	return add_sorted(out, &found, err);
}

static int memory_describe(void *ctx, const char *name, char **display)
{
	*display = memory_display(ctx, name);
	return *display ? 0 : -1;
}

static void memory_free(void *ctx)
{
	struct memory *m = ctx;
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->names.nr; i++)
		aj_node_free(m->docs[i]);
	aj_free(m->docs);
	aj_strlist_release(&m->names);
	aj_free(m->origin);
	aj_free(m);
}

static const struct aj_source_ops memory_ops = {
	memory_read, memory_list, memory_describe, memory_free,
};

int aj_source_memory_init(struct aj_source *s, const char *origin)
{
	struct memory *m = aj_calloc(1, sizeof(*m));

	s->ops = NULL;
	s->ctx = NULL;
	if (!m)
		return -1;
	m->origin = aj_strdup(origin);
	if (!m->origin) {
		aj_free(m);
		return -1;
	}
	s->ops = &memory_ops;
	s->ctx = m;
	return 0;
}

int aj_source_memory_add(struct aj_source *s, const char *name,
			 const struct aj_node *doc)
{
	struct memory *m = s->ctx;
	struct aj_node *copy = NULL;
	long i;

	if (s->ops != &memory_ops || !aj_canonical_valid(name))
		return -1;
	if (doc && !(copy = aj_node_copy(doc)))
		return -1;
	i = aj_strlist_find(&m->names, name);
	if (i >= 0) {
		aj_node_free(m->docs[i]);
		m->docs[i] = copy;
		return 0;
	}
	if (AJ_GROW(m->docs, m->names.nr + 1, m->docs_alloc) ||
	    aj_strlist_add(&m->names, name)) {
		aj_node_free(copy);
		return -1;
	}
	m->docs[m->names.nr - 1] = copy;
	return 0;
}

/* ---- chain source ------------------------------------------------------ */

struct chain {
	struct aj_source first, second;
};

static int chain_read(void *ctx, const char *name, struct aj_node **doc,
		      char **display, struct aj_errors *err)
{
	struct chain *c = ctx;
	int r = c->first.ops->read(c->first.ctx, name, doc, display, err);

	if (r != AJ_SOURCE_NOT_FOUND)
		return r;
	return c->second.ops->read(c->second.ctx, name, doc, display, err);
}

/* Both sources' names, sorted, each once. */
static int chain_list(void *ctx, const char *folder, struct aj_strlist *out,
		      struct aj_errors *err)
{
	struct chain *c = ctx;
	struct aj_strlist all = AJ_STRLIST_INIT;
	const struct aj_source *parts[2] = { &c->first, &c->second };
	size_t i;

	for (i = 0; i < 2; i++) {
		if (parts[i]->ops->list &&
		    parts[i]->ops->list(parts[i]->ctx, folder, &all, err)) {
			aj_strlist_release(&all);
			return -1;
		}
	}
	return add_sorted(out, &all, err);
}

static int chain_describe(void *ctx, const char *name, char **display)
{
	struct chain *c = ctx;

	return c->first.ops->describe(c->first.ctx, name, display);
}

static void chain_free(void *ctx)
{
	struct chain *c = ctx;

	if (!c)
		return;
	aj_source_release(&c->first);
	aj_source_release(&c->second);
	aj_free(c);
}

static const struct aj_source_ops chain_ops = {
	chain_read, chain_list, chain_describe, chain_free,
};

int aj_source_chain_init(struct aj_source *s, struct aj_source *first,
			 struct aj_source *second)
{
	struct chain *c = aj_malloc(sizeof(*c));

	s->ops = NULL;
	s->ctx = NULL;
	if (!c) {
		aj_source_release(first);
		aj_source_release(second);
		return -1;
	}
	c->first = *first;
	c->second = *second;
	first->ops = second->ops = NULL;
	first->ctx = second->ctx = NULL;
	s->ops = &chain_ops;
	s->ctx = c;
	return 0;
}
