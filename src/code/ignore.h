/*
 * ignore.h - the rules that decide which files of a code tree are shipped.
 *
 * Patterns follow gitignore exactly (git is the test oracle): `*`, `**`, `?`,
 * classes, escapes, a trailing `/` for directories only, a leading or middle
 * `/` anchoring to the root, `!` negation, last match wins, and nothing inside
 * an excluded directory can be re-included. Rules come from three sources,
 * concatenated in this order so that later ones win:
 *   1. built-ins (.git, .venv, node_modules, __pycache__ anywhere; everything
 *      in the root .azure_jobs/ except its scripts/ directory);
 *   2. the template's code.ignore list;
 *   3. the first present root file of .codeignore, .amltignore.
 * Where git silently never matches a malformed pattern (unclosed `[`, unknown
 * `[:class:]`, trailing lone `\`), this module reports an error instead.
 *
 * Each pattern is compiled once when added; matching allocates nothing.
 *
 * Ownership: the set owns its rules, their text and their source names.
 * Rule pointers handed out stay valid until the set is released.
 */
#ifndef AJ_CODE_IGNORE_H
#define AJ_CODE_IGNORE_H

#include <stddef.h>
#include <stdint.h>

#include "core/strlist.h"

struct aj_buf;
struct aj_errors;

/* Largest root ignore file read (bigger is an error, not a silent cut). */
#define AJ_IGNORE_FILE_MAX (1024u * 1024u)
/* Longest pattern line accepted. */
#define AJ_IGNORE_PATTERN_MAX 4096u

struct aj_ignore_tok;

struct aj_ignore_rule {
	const char *source;  /* "built-in", "code.ignore", ".codeignore", ... */
	int line;            /* 1-based line of the file, or item of the list */
	int in_list;         /* source is a list (line is the item number) */
	char *text;          /* the pattern as written, after trimming */
	int negate;          /* `!pattern`: a match re-includes */
	int dir_only;        /* `pattern/`: matches directories only */

	/* Compiled form, private to ignore.c. */
	int basename;        /* no slash: matched against the last component */
	char *prefix;        /* literal head, compared with memcmp */
	size_t prefix_len;
	char *suffix;        /* set when the rest is one `*` then literals */
	size_t suffix_len;
	char *must;          /* bytes any match contains (quick reject) */
	size_t must_len;
	struct aj_ignore_tok *toks;
	size_t nr_toks;
	uint64_t (*classes)[4];
};

struct aj_ignore {
	struct aj_ignore_rule *rules;
	size_t nr;
	size_t alloc;
	struct aj_strlist sources;
	/*
	 * Prefilter: bit i % 64 of last_byte[(i / 64) * 256 + c] says rule i
	 * can match a path whose last byte is c; dir_only_mask marks rules that
	 * need a directory. Most rules are rejected without being run.
	 */
	uint64_t *last_byte;
	uint64_t *dir_only_mask;
	size_t words;
};

#define AJ_IGNORE_INIT { NULL, 0, 0, AJ_STRLIST_INIT, NULL, NULL, 0 }

void aj_ignore_init(struct aj_ignore *ig);
void aj_ignore_release(struct aj_ignore *ig);

/*
 * Add one pattern line of a file named `source` (comments and blank lines are
 * accepted and skipped). Errors read "source:lineno: ...".
 */
int aj_ignore_add_line(struct aj_ignore *ig, const char *line, size_t len,
		       const char *source, int lineno, struct aj_errors *e);
/* Add every line of a gitignore-format text (UTF-8 BOM and CRLF tolerated). */
int aj_ignore_add_text(struct aj_ignore *ig, const char *text, size_t len,
		       const char *source, struct aj_errors *e);
/* Add the built-in rules. */
int aj_ignore_add_builtins(struct aj_ignore *ig, struct aj_errors *e);
/*
 * Add a list of patterns, one per item, from the key `source` (for the
 * template, "code.ignore"). Errors name the item: "code.ignore[2]: ...".
 */
int aj_ignore_add_list(struct aj_ignore *ig, const struct aj_strlist *list,
		       const char *source, struct aj_errors *e);
/*
 * Read the first present of root/.codeignore, root/.amltignore. Neither
 * present is fine; present but unreadable, not a regular file or larger than
 * AJ_IGNORE_FILE_MAX is an error naming the file.
 */
int aj_ignore_add_root_file(struct aj_ignore *ig, const char *root,
			    struct aj_errors *e);
/* All three sources in order: built-ins, template list (may be NULL), root file. */
int aj_ignore_setup(struct aj_ignore *ig, const char *root,
		    const struct aj_strlist *template_ignore, struct aj_errors *e);

/*
 * The rule deciding `path` itself (relative, '/'-separated, no trailing
 * slash), assuming no parent directory is excluded: the last matching rule,
 * or NULL. The path is excluded when the rule is not a negation.
 */
const struct aj_ignore_rule *aj_ignore_match(const struct aj_ignore *ig,
					     const char *path, size_t len,
					     int is_dir);
/*
 * Like aj_ignore_match, but first tries every parent directory from the top:
 * the first excluded parent decides (git's rule that an excluded directory's
 * content cannot be re-included).
 */
const struct aj_ignore_rule *aj_ignore_check(const struct aj_ignore *ig,
					     const char *path, size_t len,
					     int is_dir);

/* True when a rule returned by a match excludes (NULL does not). */
int aj_ignore_excludes(const struct aj_ignore_rule *r);

/* Append where a rule comes from: "built-in", ".codeignore:3", "code.ignore[1]". */
int aj_ignore_rule_origin(const struct aj_ignore_rule *r, struct aj_buf *out);

#endif
