/*
 * node.h - the document tree: what YAML and JSON are loaded into, what merge
 * and resolution work on, and what the typed JobSpec is converted from.
 *
 * A node is a scalar (null, bool, int, float, string), a sequence or a
 * mapping. Mappings keep their keys in the order written and never hold a
 * key twice. Every node records where it came from (file, line, column), and
 * deep copies keep that, so an error about a merged value still points at the
 * file that supplied it.
 *
 * Ownership: a tree owns all of its nodes. aj_node_free() frees a node and
 * everything below it. Functions that insert a node into a container take
 * ownership of it, on success and on failure alike. Positions share one
 * reference-counted file name (struct aj_srcfile) per loaded file.
 */
#ifndef AJ_NODE_H
#define AJ_NODE_H

#include <stddef.h>

struct aj_errors;
struct aj_where;

enum aj_node_type {
	AJ_NODE_NULL,
	AJ_NODE_BOOL,
	AJ_NODE_INT,
	AJ_NODE_FLOAT,
	AJ_NODE_STRING,
	AJ_NODE_SEQ,
	AJ_NODE_MAP
};

/* A file name shared by every node loaded from that file. */
struct aj_srcfile {
	unsigned long refs;
	char name[];
};

struct aj_srcfile *aj_srcfile_new(const char *name);
struct aj_srcfile *aj_srcfile_ref(struct aj_srcfile *f);
void aj_srcfile_unref(struct aj_srcfile *f);

struct aj_pos {
	struct aj_srcfile *file;  /* counted reference, or NULL */
	int line;                 /* 1-based, 0 when unknown */
	int column;               /* 1-based, 0 when unknown */
};

struct aj_pair {
	char *key;                /* owned, NUL-terminated */
	size_t keylen;            /* strlen(key): loaders reject NUL bytes */
	struct aj_pos keypos;
	struct aj_node *value;    /* owned, never NULL (a null is a NULL node) */
};

struct aj_node {
	enum aj_node_type type;
	struct aj_pos pos;
	/*
	 * Scalars: the text as written (or as printed for values built with
	 * the typed constructors); NULL for nodes made by aj_node_new().
	 */
	char *str;
	size_t len;
	union {
		int boolean;
		long long integer;
		double number;
	} v;
	/* Sequences: items[0..nr). Mappings: pairs[0..nr). */
	struct aj_node **items;
	struct aj_pair *pairs;
	size_t nr;
	size_t alloc;
};

/* Constructors return NULL on out of memory. pos may be NULL. */
struct aj_node *aj_node_new(enum aj_node_type type, const struct aj_pos *pos);
struct aj_node *aj_node_new_string(const char *s, size_t len, const struct aj_pos *pos);
struct aj_node *aj_node_new_int(long long v, const struct aj_pos *pos);
struct aj_node *aj_node_new_bool(int v, const struct aj_pos *pos);
struct aj_node *aj_node_new_float(double v, const struct aj_pos *pos);
void aj_node_free(struct aj_node *n);

/* Deep copy (positions kept). NULL on out of memory. */
struct aj_node *aj_node_copy(const struct aj_node *n);

/* Sequences: append, taking ownership of item (freed on failure). 0 / -1. */
int aj_node_append(struct aj_node *seq, struct aj_node *item);

/*
 * Mappings: set key to value, taking ownership of value (freed on failure).
 * Replaces (and frees) an existing value in place, keeping the key's position
 * in the order; a new key goes last. keypos may be NULL. 0 / -1 (OOM).
 */
int aj_node_set(struct aj_node *map, const char *key, size_t keylen,
		struct aj_node *value, const struct aj_pos *keypos);

/*
 * Mappings: append a key the caller knows is absent (no lookup, so building
 * a large mapping stays linear). Takes ownership of value. 0 / -1.
 */
int aj_node_add(struct aj_node *map, const char *key, size_t keylen,
		struct aj_node *value, const struct aj_pos *keypos);

/*
 * The earliest repeated key of a mapping built with aj_node_add(): returns 1
 * with the indexes of its first and second occurrence, 0 when every key is
 * unique, -1 on out of memory.
 */
int aj_node_find_duplicate(const struct aj_node *map, size_t *first, size_t *again);

/* Mapping lookup (a linear scan); NULL when absent or when n is not a mapping. */
struct aj_node *aj_node_get(const struct aj_node *map, const char *key);
/* Remove key from a mapping (freeing its value); 1 if removed, 0 if absent. */
int aj_node_remove(struct aj_node *map, const char *key);

/*
 * A read-only hash index over a mapping's keys, for callers that look up many
 * keys in mappings that may be large (merge, conversions). Small mappings are
 * scanned instead. Valid until the mapping changes. init: 0 / -1 (OOM).
 */
struct aj_keyindex {
	const struct aj_node *map;
	size_t *slots;
	size_t mask;
};

int aj_keyindex_init(struct aj_keyindex *ix, const struct aj_node *map);
const struct aj_pair *aj_keyindex_find(const struct aj_keyindex *ix,
				       const char *key, size_t keylen);
void aj_keyindex_release(struct aj_keyindex *ix);

/* Lookups following a dotted path of mapping keys ("target.name"). */
struct aj_node *aj_node_at(const struct aj_node *root, const char *dotted);

int aj_node_is_scalar(const struct aj_node *n);

/*
 * The shortest text that reads back as the same float in YAML, always marked
 * as a float ("0.1", "3.0", "1e+20", "-.inf", ".nan"). Returns its length.
 */
#define AJ_FLOAT_TEXT_MAX 32
int aj_float_text(double v, char out[AJ_FLOAT_TEXT_MAX]);
/* Human name of a type, for messages: "null", "boolean", "integer", ... */
const char *aj_node_type_name(enum aj_node_type t);

/*
 * Structural equality of two trees (positions ignored; mapping key order
 * matters, since merge results promise an order; NaN equals NaN).
 */
int aj_node_equal(const struct aj_node *a, const struct aj_node *b);

/* Fill a struct aj_where for an error about node n at key path `path`. */
void aj_node_where(const struct aj_node *n, const char *path, struct aj_where *w);
/* Record an error about node n at key path `path` (aj_node_where); always -1. */
int aj_node_error(struct aj_errors *err, const struct aj_node *n, const char *path,
		  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
