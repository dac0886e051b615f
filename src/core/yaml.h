/*
 * yaml.h - YAML text to document tree (libyaml), and cJSON values to YAML text.
 *
 * Loading: one document per input; an empty input or a comments-only input
 * gives a NULL node. Scalars follow the YAML 1.2 core schema (null, true/false,
 * integers, floats; anything quoted is a string). Mapping keys must be
 * scalars and unique. Anchors and aliases work; the total number of nodes an
 * input may expand to (aliases counted at full size) and the nesting depth are
 * capped, so an alias bomb fails instead of eating memory. The first problem
 * stops the load and is reported with the file, line and column.
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
#define AJ_YAML_MAX_NODES 1000000u
#define AJ_YAML_MAX_BYTES (16u * 1024u * 1024u)

int aj_yaml_load(const char *data, size_t len, const char *filename,
		 struct aj_node **out, struct aj_errors *err);

/*
 * Append v as a YAML block document to out. Strings that would read back as
 * another type ("true", "1", "8+", "") are quoted; key order is kept.
 */
int aj_yaml_emit(const cJSON *v, struct aj_buf *out, struct aj_errors *err);

#endif
