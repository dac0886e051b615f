/*
 * json.h - conversions between the document tree and cJSON.
 *
 * Output documents (Kubernetes objects, Azure request bodies, the typed
 * JobSpec dump) are built as cJSON and printed as JSON or YAML (yaml.h).
 * Objects read from the API server arrive as cJSON and become trees here so
 * the resolver can work on them.
 *
 * Ownership: results are the caller's (cJSON_Delete / aj_node_free).
 */
#ifndef AJ_JSON_H
#define AJ_JSON_H

#include <cjson/cJSON.h>

struct aj_buf;
struct aj_errors;
struct aj_node;

/* Tree to cJSON, keys in order. NULL on out of memory. */
cJSON *aj_node_to_cjson(const struct aj_node *n);

/*
 * cJSON to tree. Positions carry `origin` as the file name (line 0) so errors
 * can still say which object a value came from. Depth is capped like YAML.
 */
int aj_node_from_cjson(const cJSON *v, const char *origin, struct aj_node **out,
		       struct aj_errors *err);

/* Parse JSON text into cJSON with a size/depth check; error names origin. */
int aj_json_parse(const char *data, size_t len, const char *origin, cJSON **out,
		  struct aj_errors *err);

/* Print v as indented JSON followed by a newline. */
int aj_json_print(const cJSON *v, struct aj_buf *out);

#endif
