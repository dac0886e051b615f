/*
 * walk.h - visit a code tree in a fixed order, applying the ignore rules.
 *
 * The walk starts at a root directory (the invocation directory) and reports
 * every entry below it, depth first. Entries of a directory come in byte
 * order of their names, a directory's name compared as if it ended in '/', so
 * the full paths (directories with a trailing '/') arrive strictly sorted and
 * a directory comes right before its content. Symlinks are reported as
 * symlinks and never followed. An excluded directory is reported once and not
 * entered (unless AJ_WALK_DESCEND_IGNORED asks to count its content). FIFOs,
 * sockets and devices that are not excluded are reported as skipped with a
 * reason.
 *
 * Ownership: everything in an entry is borrowed for the callback's duration.
 */
#ifndef AJ_CODE_WALK_H
#define AJ_CODE_WALK_H

#include <stddef.h>
#include <sys/stat.h>

struct aj_errors;
struct aj_ignore;
struct aj_ignore_rule;

/* Longest relative path accepted (bytes, without the NUL). */
#define AJ_WALK_PATH_MAX 4095u

enum aj_walk_type {
	AJ_WALK_FILE,
	AJ_WALK_DIR,
	AJ_WALK_SYMLINK,
	AJ_WALK_SPECIAL,   /* fifo, socket or device: never archived */
};

struct aj_walk_entry {
	const char *path;        /* relative to the root, '/'-separated */
	size_t len;
	const char *name;        /* last component (inside path) */
	int dirfd;               /* open parent directory, for openat() & co */
	const struct stat *st;   /* lstat() of the entry */
	enum aj_walk_type type;
	int ignored;             /* excluded by `rule` (or by a parent's rule) */
	const struct aj_ignore_rule *rule;  /* deciding rule, may be a negation */
	const char *skipped;     /* AJ_WALK_SPECIAL: "fifo", "socket", ... */
};

/* Flags. */
#define AJ_WALK_DESCEND_IGNORED 1u  /* report the content of excluded dirs */

/* Return 0 to go on, -1 (after adding to e) to stop the walk. */
typedef int (*aj_walk_fn)(const struct aj_walk_entry *ent, void *data,
			  struct aj_errors *e);

/*
 * Walk `root` with the rules of `ig`. Errors (unreadable directory, path too
 * long, a callback's failure) stop the walk and name the path.
 */
int aj_walk(const char *root, const struct aj_ignore *ig, unsigned flags,
	    aj_walk_fn fn, void *data, struct aj_errors *e);

#endif
