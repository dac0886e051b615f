/*
 * source.h - where templates come from.
 *
 * The resolver reads template files only through this interface, by
 * canonical name: the path below the template home without ".yaml", with "/"
 * separators ("template/gpu", "storage/default"). The same resolver therefore
 * reads from a directory (the CLI), from the bundle embedded in an AjJob, or
 * from AjTemplate objects in a cluster (the controller), and a chain of
 * sources tries each in turn.
 *
 * Ownership: a source owns its context; aj_source_release() frees it. read()
 * hands the caller a tree and a display name (both caller-owned).
 */
#ifndef AJ_SOURCE_H
#define AJ_SOURCE_H

struct aj_errors;
struct aj_node;
struct aj_strlist;

#define AJ_SOURCE_NOT_FOUND 1

struct aj_source_ops {
	/*
	 * Read the file with canonical name `name`. Returns 0 with *doc (the
	 * whole file: a mapping with `base` and `config`, or a NULL node for an
	 * empty file) and *display (how messages name it, e.g.
	 * ".azure_jobs/template/gpu.yaml"); AJ_SOURCE_NOT_FOUND when it does not
	 * exist (nothing recorded in err); -1 with err filled on any other failure.
	 */
	int (*read)(void *ctx, const char *name, struct aj_node **doc,
		    char **display, struct aj_errors *err);
	/*
	 * Append the canonical names of the files directly in `folder`
	 * ("template"), sorted; a folder that does not exist adds nothing.
	 * May be NULL for sources that cannot list.
	 */
	int (*list)(void *ctx, const char *folder, struct aj_strlist *out,
		    struct aj_errors *err);
	/* How a missing name is described in messages ("<home>/x/y.yaml"). */
	int (*describe)(void *ctx, const char *name, char **display);
	void (*free)(void *ctx);
};

struct aj_source {
	const struct aj_source_ops *ops;
	void *ctx;
};

void aj_source_release(struct aj_source *s);

/*
 * A source whose files are given as trees, keyed by canonical name (the bundle
 * inside an AjJob, or tests). Takes ownership of nothing: it copies.
 * `origin` prefixes display names: "AjJob ns/name: template/gpu".
 * aj_source_memory_add() replaces a name added before (doc may be NULL for
 * an empty file) and returns -1 for an invalid name or out of memory.
 */
int aj_source_memory_init(struct aj_source *s, const char *origin);
int aj_source_memory_add(struct aj_source *s, const char *name,
			 const struct aj_node *doc);

/*
 * A source that tries `first`, then `second`; list() merges both (sorted,
 * each name once); missing names are described by `first`. Takes ownership
 * of both, on failure too (they are left empty either way).
 */
int aj_source_chain_init(struct aj_source *s, struct aj_source *first,
			 struct aj_source *second);

/*
 * Is `name` a safe canonical name? (non-empty segments of [A-Za-z0-9._-],
 * no "." or ".." segment, no leading "/", at most 253 bytes.)
 */
int aj_canonical_valid(const char *name);

/*
 * The canonical name a `base` entry written in file `referrer` points to:
 * a dotted name "sub.name" is "sub/name" below the home (split at the first
 * dot, so "a.b.c" is "a/b.c"); a plain name is a sibling of the referrer.
 * Fails, with a message at the position of `at` (the base entry), for empty
 * or over-long names, slashes or backslashes, "..", and characters outside
 * [A-Za-z0-9._-]. *out is the caller's.
 */
int aj_canonical_base(const char *referrer, const char *base, char **out,
		      struct aj_errors *err, const struct aj_node *at);

#endif
