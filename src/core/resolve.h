/*
 * resolve.h - template inheritance: a leaf file plus its `base` chain, merged
 * into one config.
 *
 * A file is a mapping with `base` and `config` (any other top-level key is
 * an error, with "did you mean" for a near miss such as `cofnig`; an empty
 * file counts as {}). `base` may be absent, null, one string
 * or a list of strings (source.h says where each name points). `config` may be
 * absent or null ({}) or a mapping. Bases merge left to right (each one
 * resolved recursively first) and the file's own `config` merges last
 * (merge.h).
 *
 * The whole graph is read and checked before anything is merged, so a missing
 * file, a cycle, a bad `base` or `config`, or a chain deeper than 64 files
 * fails first. Messages show the chain, at the position of the base entry:
 *   ".azure_jobs/template/a.yaml:1:7: circular template inheritance:
 *    template/a -> template/b -> template/a"
 *   "...: template/child -> storage/defualt: file not found:
 *    .azure_jobs/storage/defualt.yaml"
 * Diamonds are fine: each file is read and resolved once. Scalar lists
 * reached along many paths still repeat, so the nodes fed to merges are
 * capped at AJ_RESOLVE_MAX_NODES per resolution (like the YAML alias cap);
 * past it the resolution fails with a message naming the file.
 *
 * Ownership: struct aj_template owns everything it points to;
 * aj_template_release() frees it.
 */
#ifndef AJ_RESOLVE_H
#define AJ_RESOLVE_H

#include <stddef.h>

#include "strlist.h"

struct aj_errors;
struct aj_node;
struct aj_source;

#define AJ_RESOLVE_MAX_NODES 1000000u

struct aj_template {
	char *name;               /* canonical leaf name, e.g. "template/gpu" */
	char *display;            /* how messages name the leaf file */
	int has_base;             /* the leaf has a `base` key: a leaf template */
	struct aj_strlist bases;  /* the leaf's direct bases, as written */
	struct aj_node *config;   /* resolved config; an empty mapping at least */
	/*
	 * Every file read, in first-read order starting with the leaf, each
	 * once: canonical names and the files' own trees (base + config as
	 * written), so a caller can bundle exactly what was resolved.
	 */
	struct aj_strlist files;
	struct aj_node **docs;
	size_t docs_alloc;
};

void aj_template_init(struct aj_template *t);
void aj_template_release(struct aj_template *t);

/* Resolve canonical `name` from src into t (which must be initialised). */
int aj_template_resolve(struct aj_source *src, const char *name,
			struct aj_template *t, struct aj_errors *err);

/*
 * The `base` entries of one file's tree as a list (absent or null gives an
 * empty list). Fails for any other type with a message naming the file.
 * Also reports whether the key was present.
 */
int aj_template_bases(const struct aj_node *doc, const char *display,
		      struct aj_strlist *out, int *present, struct aj_errors *err);

#endif
