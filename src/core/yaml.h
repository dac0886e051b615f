/*
 * yaml.h - YAML text to document tree (libyaml), and cJSON values to YAML text.
 *
 * Loading: one document per input; an empty input, a comments-only input or
 * a document that is just null gives a NULL node. Plain scalars follow the
 * YAML 1.2 core schema (null/~/empty, true/false, decimal, 0o and 0x integers,
 * floats with .inf/.nan); quoted and block scalars are strings; the tags
 * !!str, !!int, !!float, !!bool, !!null, !!seq and !!map are honoured and any
 * other tag is rejected. An integer outside 64 bits is an error, not a float.
 * Mapping keys must be scalars and unique (the key's text is kept as
 * written); YAML 1.1 merge keys (<<) are rejected rather than silently read
 * as a plain key. Anchors and aliases work (an alias is expanded to a copy);
 * the total number of nodes an input may expand to (aliases counted at full
 * size) and the nesting depth are capped, so an alias bomb fails early and
 * small. The first problem stops the load and is reported with the file, line
 * and column (1-based; columns count characters).
 *
 * Ownership: *out is the caller's (aj_node_free). Nothing is allocated for the
 * caller on failure.
 */
#ifndef AJ_YAML_H
#define AJ_YAML_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct aj_buf;
struct aj_errors;
struct aj_node;

#define AJ_YAML_MAX_DEPTH 128
/* Bounds the memory an alias bomb can claim (~100 bytes a node). */
#define AJ_YAML_MAX_NODES 200000u
#define AJ_YAML_MAX_BYTES (16u * 1024u * 1024u)

int aj_yaml_load(const char *data, size_t len, const char *filename,
		 struct aj_node **out, struct aj_errors *err);

/*
 * Append v as a YAML block document to out. Strings that would read back as
 * another type ("true", "1", "8+", "") are quoted; key order is kept.
 */
int aj_yaml_emit(const cJSON *v, struct aj_buf *out, struct aj_errors *err);

#endif
