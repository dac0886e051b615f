/*
 * schema.h - every template key aj knows, declared once.
 *
 * One table lists each key of a config by its pattern below `config`
 * ("target.memory", "jobs[*].submit_args.env", "storage.<name>.mount_dir"),
 * what it holds and what it means. It drives three things: the unknown-key
 * check of a merged config (an unknown key is an error at its own
 * file:line:column, with `did you mean "memory"?` when a known key is near,
 * see suggest.h), the same check run by the owner of one part of `_extra`
 * on its own keys (the Volcano tasks, the code upload), and the key
 * reference in docs/templates.md (aj_schema_markdown; a test keeps the
 * document and the table equal).
 *
 * The check only asks whether each key is known. Types and values are the
 * conversion's business (jobspec.h); free-form mappings (environment
 * variables, labels, node selectors, `_extra` itself) are not looked into.
 *
 * Ownership: nothing is allocated except error entries in err.
 */
#ifndef AJ_SCHEMA_H
#define AJ_SCHEMA_H

struct aj_buf;
struct aj_errors;
struct aj_node;

/*
 * Report every unknown key in `n`, the value at table pattern `pattern`
 * ("" for config itself), whose key path in messages is `path` ("config").
 * 0 when every key is known, -1 otherwise (or on out of memory).
 */
int aj_schema_check(const struct aj_node *n, const char *pattern, const char *path,
		    struct aj_errors *err);

/* The two keys of a template file, for the top-level check of resolve.c. */
extern const char *const aj_schema_file_keys[];
#define AJ_SCHEMA_FILE_KEYS 2

/* The key reference as a Markdown table (docs/templates.md). 0 / -1. */
int aj_schema_markdown(struct aj_buf *out);

#endif
