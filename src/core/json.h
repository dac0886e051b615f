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

/*
 * cJSON refuses nesting deeper than its compiled limit (1000) while the API
 * server stores objects nested up to 10000 deep, and one refused object
 * would make a whole list page or watch stream undecodable. This parse
 * falls back, when cJSON refuses the text, to a copy in which every array
 * or object deeper than AJ_JSON_CUT_DEPTH is replaced by null. The cut
 * keeps more levels than AJ_JSON_MAX_DEPTH, so the object that held the
 * deep value still fails its conversion (aj_node_from_cjson: "nesting
 * deeper than 128 levels") and nothing deep is ever used silently. Scanning
 * is iterative, so no depth of input can exhaust the stack. *trailing is
 * set when something other than white space follows the value. NULL when
 * the text is not JSON (or memory ran out).
 */
#define AJ_JSON_CUT_DEPTH 256
cJSON *aj_json_parse_lenient(const char *s, size_t len, int *trailing);

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

/*
 * Member k of object o, or NULL (o NULL or no object, or no such member);
 * the typed form gives its string, or NULL when it is not one.
 */
const cJSON *aj_json_get(const cJSON *o, const char *k);
const char *aj_json_str(const cJSON *o, const char *k);

/* Print v as JSON indented by two spaces, then a newline. -1 on OOM or buffer limit. */
int aj_json_print(const cJSON *v, struct aj_buf *out);

#endif
