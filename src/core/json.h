/*
 * json.h - conversions between the document tree and cJSON.
 *
 * Output documents (Kubernetes objects, Azure request bodies, the typed
 * JobSpec dump) are built as cJSON and printed as JSON or YAML (yaml.h).
 * Objects read from the API server arrive as cJSON and become trees here so
 * the resolver can work on them.
 *
 * Numbers: cJSON holds doubles and prints 15 significant digits, so an
 * integer of 16 digits or more becomes a raw cJSON item (cJSON_IsRaw,
 * printed verbatim) instead of losing digits; a whole-valued float (2.0)
 * comes back from cJSON as an integer, and cJSON's JSON text keeps 15
 * significant digits of a float (the YAML emitter keeps all). NaN and
 * infinities print as null in JSON (as .nan/.inf in YAML).
 *
 * Ownership: results are the caller's (cJSON_Delete / aj_node_free).
 */
#ifndef AJ_JSON_H
#define AJ_JSON_H

#include <cjson/cJSON.h>

struct aj_buf;
struct aj_errors;
struct aj_node;

/* Kubernetes list responses can be large; nesting is capped like YAML. */
#define AJ_JSON_MAX_BYTES (64u * 1024u * 1024u)
#define AJ_JSON_MAX_DEPTH 128

/* Tree to cJSON, keys in order (a NULL tree gives null). NULL on out of memory. */
cJSON *aj_node_to_cjson(const struct aj_node *n);

/*
 * cJSON to tree. Positions carry `origin` as the file name (line 0) so errors
 * can still say which object a value came from. Depth is capped like YAML;
 * duplicate object keys are an error. A JSON null gives a null node.
 */
int aj_node_from_cjson(const cJSON *v, const char *origin, struct aj_node **out,
		       struct aj_errors *err);

/*
 * Parse JSON text into cJSON with a size/depth check; a syntax error names
 * origin with the line and column where parsing stopped.
 */
int aj_json_parse(const char *data, size_t len, const char *origin, cJSON **out,
		  struct aj_errors *err);

/*
 * A JSON number in [0, max] as a whole number (fraction dropped), else dflt:
 * converting a double out of range is undefined, and peers send anything.
 */
long long aj_json_whole(const cJSON *v, double max, long long dflt);

/* Print v as indented JSON followed by a newline. -1 on OOM or buffer limit. */
int aj_json_print(const cJSON *v, struct aj_buf *out);

#endif
