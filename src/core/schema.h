/*
 * schema.h - every template key aj knows, each declared once, by its owner.
 *
 * A table lists keys by their pattern below the table's root
 * ("target.memory", "jobs[*].submit_args.env", "storage.<name>.mount_dir"),
 * what each holds and what it means. Core declares the config's keys
 * (aj_schema_config) and those of one heterogeneous task (aj_schema_task);
 * each part of `_extra` is declared by the backend module that reads it and
 * named in its backend row (backend.h), so core names no backend's key.
 * A table drives the unknown-key check (an unknown key is an error at its
 * own file:line:column, with `did you mean "memory"?` when a known key is
 * near, see suggest.h) and the key reference in docs/templates.md
 * (aj_schema_markdown; a test keeps the document and the tables equal).
 *
 * The check only asks whether each key is known. Types and values are the
 * conversion's business (jobspec.h); free-form mappings (environment
 * variables, labels, node selectors, `_extra` itself) are not looked into.
 *
 * Ownership: tables are static; nothing is allocated except error entries
 * in err.
 */
#ifndef AJ_SCHEMA_H
#define AJ_SCHEMA_H

#include <stddef.h>

struct aj_buf;
struct aj_errors;
struct aj_node;

enum aj_schema_kind {
	AJ_SCHEMA_KEYS,     /* a mapping whose keys are listed below it */
	AJ_SCHEMA_NAMES,    /* a mapping of user-chosen names, each one `<name>` below it */
	AJ_SCHEMA_LIST,     /* a list whose items are `[*]` below it */
	AJ_SCHEMA_VALUE,    /* a value the conversion checks; not looked into */
	AJ_SCHEMA_FREE      /* a mapping whose keys are the user's (not looked into) */
};

struct aj_schema_key {
	const char *pattern;      /* below the table's root; a key's parent is listed before it */
	enum aj_schema_kind kind;
	const char *holds;
	const char *meaning;
};

/* One table: a mapping (its root) and the keys below it. */
struct aj_schema {
	/*
	 * The root's pattern below config ("_extra.volcano"); "" for config
	 * itself and for a table its user places (aj_schema_task).
	 */
	const char *root;
	const char *holds;        /* of the root, for the reference */
	const char *meaning;
	const struct aj_schema_key *keys;
	size_t nr;
};

/* The keys of config, `_extra` free (its parts are their readers' tables). */
extern const struct aj_schema aj_schema_config;
/* The keys of one heterogeneous task (aj_jobspec_read_tasks). */
extern const struct aj_schema aj_schema_task;

/*
 * Report every unknown key in `n`, the value at pattern `pattern` of table
 * s ("" for the root itself), whose key path in messages is `path`
 * ("config"). 0 when every key is known, -1 otherwise (or on out of memory).
 */
int aj_schema_check(const struct aj_schema *s, const struct aj_node *n, const char *pattern,
		    const char *path, struct aj_errors *err);

/* The two keys of a template file, for the top-level check of resolve.c. */
extern const char *const aj_schema_file_keys[];
#define AJ_SCHEMA_FILE_KEYS 2

/* The header of the key reference (docs/templates.md), a Markdown table. */
#define AJ_SCHEMA_MARKDOWN_HEAD "| key | holds | meaning |\n|---|---|---|\n"

/*
 * Append the rows of table s to the reference: its root's row (unless the
 * root is ""), then one per key. `root` (NULL: s->root) places a table such
 * as aj_schema_task ("_extra.volcano.tasks.<name>"). 0 / -1.
 */
int aj_schema_markdown(const struct aj_schema *s, const char *root, struct aj_buf *out);

#endif
