#include "node.h"

#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "error.h"

struct aj_srcfile *aj_srcfile_new(const char *name)
{
	size_t len = strlen(name);
	struct aj_srcfile *f = aj_malloc(sizeof(*f) + len + 1);

	if (!f)
		return NULL;
	f->refs = 1;
	memcpy(f->name, name, len + 1);
	return f;
}

struct aj_srcfile *aj_srcfile_ref(struct aj_srcfile *f)
{
	if (f)
		f->refs++;
	return f;
}

void aj_srcfile_unref(struct aj_srcfile *f)
{
	if (f && --f->refs == 0)
		aj_free(f);
}

static void pos_set(struct aj_pos *dst, const struct aj_pos *src)
{
	if (!src) {
		dst->file = NULL;
		dst->line = 0;
		dst->column = 0;
		return;
	}
	dst->file = aj_srcfile_ref(src->file);
	dst->line = src->line;
	dst->column = src->column;
}

struct aj_node *aj_node_new(enum aj_node_type type, const struct aj_pos *pos)
{
	struct aj_node *n = aj_calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->type = type;
	pos_set(&n->pos, pos);
	return n;
}

/* A scalar node owning a copy of its text. */
static struct aj_node *scalar_new(enum aj_node_type type, const char *s,
				  size_t len, const struct aj_pos *pos)
{
	struct aj_node *n = aj_node_new(type, pos);

	if (!n)
		return NULL;
	n->str = aj_strndup(s, len);
	if (!n->str) {
		aj_node_free(n);
		return NULL;
	}
	n->len = len;
	return n;
}

struct aj_node *aj_node_new_string(const char *s, size_t len, const struct aj_pos *pos)
{
	return scalar_new(AJ_NODE_STRING, s, len, pos);
}

struct aj_node *aj_node_new_int(long long v, const struct aj_pos *pos)
{
	char text[32];
	int len = snprintf(text, sizeof(text), "%lld", v);
	struct aj_node *n = scalar_new(AJ_NODE_INT, text, (size_t)len, pos);

	if (n)
		n->v.integer = v;
	return n;
}

int aj_float_text(double v, char out[AJ_FLOAT_TEXT_MAX])
{
	int len, prec;

	if (isnan(v))
		return snprintf(out, AJ_FLOAT_TEXT_MAX, ".nan");
	if (isinf(v))
		return snprintf(out, AJ_FLOAT_TEXT_MAX, "%s", v < 0 ? "-.inf" : ".inf");
	for (prec = 15;; prec++) {
		len = snprintf(out, AJ_FLOAT_TEXT_MAX, "%.*g", prec, v);
		if (prec == 17 || strtod(out, NULL) == v)
			break;
	}
	/* "3" would read back as an integer. */
	if (!strpbrk(out, ".eE"))
		len += snprintf(out + len, AJ_FLOAT_TEXT_MAX - (size_t)len, ".0");
	return len;
}

struct aj_node *aj_node_new_float(double v, const struct aj_pos *pos)
{
	char text[AJ_FLOAT_TEXT_MAX];
	int len = aj_float_text(v, text);
	struct aj_node *n = scalar_new(AJ_NODE_FLOAT, text, (size_t)len, pos);

	if (n)
		n->v.number = v;
	return n;
}

struct aj_node *aj_node_new_bool(int v, const struct aj_pos *pos)
{
	const char *text = v ? "true" : "false";
	struct aj_node *n = scalar_new(AJ_NODE_BOOL, text, strlen(text), pos);

	if (n)
		n->v.boolean = !!v;
	return n;
}

static void pair_release(struct aj_pair *p)
{
	aj_free(p->key);
	aj_srcfile_unref(p->keypos.file);
	aj_node_free(p->value);
}

void aj_node_free(struct aj_node *n)
{
	size_t i;

	if (!n)
		return;
	if (n->type == AJ_NODE_SEQ)
		for (i = 0; i < n->nr; i++)
			aj_node_free(n->items[i]);
	else if (n->type == AJ_NODE_MAP)
		for (i = 0; i < n->nr; i++)
			pair_release(&n->pairs[i]);
	aj_free(n->items);
	aj_free(n->pairs);
	aj_free(n->str);
	aj_srcfile_unref(n->pos.file);
	aj_free(n);
}

struct aj_node *aj_node_copy(const struct aj_node *n)
{
	struct aj_node *c;
	size_t i;

	if (!n)
		return NULL;
	c = aj_node_new(n->type, &n->pos);
	if (!c)
		return NULL;
	c->v = n->v;
	if (n->str) {
		c->str = aj_strndup(n->str, n->len);
		if (!c->str)
			goto fail;
		c->len = n->len;
	}
	if (n->type == AJ_NODE_SEQ) {
		for (i = 0; i < n->nr; i++) {
			struct aj_node *item = aj_node_copy(n->items[i]);

			if (!item || aj_node_append(c, item))
				goto fail;
		}
	} else if (n->type == AJ_NODE_MAP) {
		if (AJ_GROW(c->pairs, n->nr, c->alloc))
			goto fail;
		for (i = 0; i < n->nr; i++) {
			const struct aj_pair *p = &n->pairs[i];
			struct aj_pair *q = &c->pairs[c->nr];

			q->value = aj_node_copy(p->value);
			q->key = q->value ? aj_strndup(p->key, p->keylen) : NULL;
			if (!q->key) {
				aj_node_free(q->value);
				goto fail;
			}
			q->keylen = p->keylen;
			pos_set(&q->keypos, &p->keypos);
			c->nr++;
		}
	}
	return c;
fail:
	aj_node_free(c);
	return NULL;
}

int aj_node_append(struct aj_node *seq, struct aj_node *item)
{
	if (!item)
		return -1;
	if (seq->type != AJ_NODE_SEQ || AJ_GROW(seq->items, seq->nr + 1, seq->alloc)) {
		aj_node_free(item);
		return -1;
	}
	seq->items[seq->nr++] = item;
	return 0;
}

static struct aj_pair *pair_find(const struct aj_node *map, const char *key,
				 size_t keylen)
{
	size_t i;

	if (!map || map->type != AJ_NODE_MAP)
		return NULL;
	for (i = 0; i < map->nr; i++)
		if (map->pairs[i].keylen == keylen &&
		    !memcmp(map->pairs[i].key, key, keylen))
			return &map->pairs[i];
	return NULL;
}

int aj_node_set(struct aj_node *map, const char *key, size_t keylen,
		struct aj_node *value, const struct aj_pos *keypos)
{
	struct aj_pair *p;

	if (!value)
		return -1;
	if (map->type != AJ_NODE_MAP) {
		aj_node_free(value);
		return -1;
	}
	p = pair_find(map, key, keylen);
	if (!p)
		return aj_node_add(map, key, keylen, value, keypos);
	aj_node_free(p->value);
	p->value = value;
	if (keypos) {
		aj_srcfile_unref(p->keypos.file);
		pos_set(&p->keypos, keypos);
	}
	return 0;
}

int aj_node_add(struct aj_node *map, const char *key, size_t keylen,
		struct aj_node *value, const struct aj_pos *keypos)
{
	struct aj_pair *p;
	char *k;

	if (!value)
		return -1;
	k = aj_strndup(key, keylen);
	if (map->type != AJ_NODE_MAP || !k ||
	    AJ_GROW(map->pairs, map->nr + 1, map->alloc)) {
		aj_free(k);
		aj_node_free(value);
		return -1;
	}
	p = &map->pairs[map->nr++];
	p->key = k;
	p->keylen = keylen;
	p->value = value;
	pos_set(&p->keypos, keypos);
	return 0;
}

struct aj_node *aj_node_get(const struct aj_node *map, const char *key)
{
	struct aj_pair *p = pair_find(map, key, strlen(key));

	return p ? p->value : NULL;
}

int aj_node_remove(struct aj_node *map, const char *key)
{
	struct aj_pair *p = pair_find(map, key, strlen(key));
	size_t i;

	if (!p)
		return 0;
	i = (size_t)(p - map->pairs);
	pair_release(p);
	memmove(&map->pairs[i], &map->pairs[i + 1],
		(map->nr - i - 1) * sizeof(*map->pairs));
	map->nr--;
	return 1;
}

struct aj_node *aj_node_at(const struct aj_node *root, const char *dotted)
{
	const struct aj_node *n = root;

	while (n) {
		const char *dot = strchr(dotted, '.');
		size_t len = dot ? (size_t)(dot - dotted) : strlen(dotted);
		struct aj_pair *p = pair_find(n, dotted, len);

		if (!p)
			return NULL;
		if (!dot)
			return p->value;
		n = p->value;
		dotted = dot + 1;
	}
	return NULL;
}

int aj_node_is_scalar(const struct aj_node *n)
{
	return n && n->type != AJ_NODE_SEQ && n->type != AJ_NODE_MAP;
}

const char *aj_node_type_name(enum aj_node_type t)
{
	switch (t) {
	case AJ_NODE_NULL:
		return "null";
	case AJ_NODE_BOOL:
		return "boolean";
	case AJ_NODE_INT:
		return "integer";
	case AJ_NODE_FLOAT:
		return "float";
	case AJ_NODE_STRING:
		return "string";
	case AJ_NODE_SEQ:
		return "list";
	case AJ_NODE_MAP:
		return "mapping";
	}
	return "unknown";
}

int aj_node_equal(const struct aj_node *a, const struct aj_node *b)
{
	size_t i;

	if (!a || !b)
		return a == b;
	if (a->type != b->type)
		return 0;
	switch (a->type) {
	case AJ_NODE_NULL:
		return 1;
	case AJ_NODE_BOOL:
		return a->v.boolean == b->v.boolean;
	case AJ_NODE_INT:
		return a->v.integer == b->v.integer;
	case AJ_NODE_FLOAT:
		return a->v.number == b->v.number ||
		       (isnan(a->v.number) && isnan(b->v.number));
	case AJ_NODE_STRING:
		return a->len == b->len && !memcmp(a->str, b->str, a->len);
	case AJ_NODE_SEQ:
	case AJ_NODE_MAP:
		if (a->nr != b->nr)
			return 0;
		for (i = 0; i < a->nr; i++) {
			if (a->type == AJ_NODE_SEQ) {
				if (!aj_node_equal(a->items[i], b->items[i]))
					return 0;
				continue;
			}
			if (a->pairs[i].keylen != b->pairs[i].keylen ||
			    memcmp(a->pairs[i].key, b->pairs[i].key, a->pairs[i].keylen) ||
			    !aj_node_equal(a->pairs[i].value, b->pairs[i].value))
				return 0;
		}
		return 1;
	}
	return 0;
}

void aj_node_where(const struct aj_node *n, const char *path, struct aj_where *w)
{
	w->file = n && n->pos.file ? n->pos.file->name : NULL;
	w->line = n ? n->pos.line : 0;
	w->column = n ? n->pos.column : 0;
	w->path = path;
}

int aj_node_error(struct aj_errors *err, const struct aj_node *n, const char *path,
		  const char *fmt, ...)
{
	struct aj_where w;
	va_list ap;

	aj_node_where(n, path, &w);
	va_start(ap, fmt);
	aj_errors_vadd(err, &w, fmt, ap);
	va_end(ap);
	return -1;
}

/* ---- key index ----------------------------------------------------------- */

/* Below this many keys a scan is as fast as hashing. */
#define KEYINDEX_MIN 16

static size_t key_hash(const char *key, size_t len)
{
	unsigned long long h = 14695981039346656037ULL;
	size_t i;

	for (i = 0; i < len; i++) {
		h ^= (unsigned char)key[i];
		h *= 1099511628211ULL;
	}
	return (size_t)h;
}

static int same_key(const struct aj_pair *p, const char *key, size_t keylen)
{
	return p->keylen == keylen && !memcmp(p->key, key, keylen);
}

/*
 * Hash every key of map into ix (open addressing; a slot holds index + 1).
 * Stops at the first key seen before: returns 1 with *first and *again set.
 */
static int keyindex_fill(struct aj_keyindex *ix, const struct aj_node *map,
			 size_t *first, size_t *again)
{
	size_t size = 16, i;

	while (size < 2 * map->nr) {
		if (size > SIZE_MAX / 4)
			return -1;
		size *= 2;
	}
	ix->slots = aj_calloc(size, sizeof(*ix->slots));
	if (!ix->slots)
		return -1;
	ix->mask = size - 1;
	for (i = 0; i < map->nr; i++) {
		const struct aj_pair *p = &map->pairs[i];
		size_t h = key_hash(p->key, p->keylen) & ix->mask;

		while (ix->slots[h] && !same_key(&map->pairs[ix->slots[h] - 1], p->key, p->keylen))
			h = (h + 1) & ix->mask;
		if (ix->slots[h]) {
			*first = ix->slots[h] - 1;
			*again = i;
			return 1;
		}
		ix->slots[h] = i + 1;
	}
	return 0;
}

int aj_keyindex_init(struct aj_keyindex *ix, const struct aj_node *map)
{
	size_t first, again;

	ix->map = map;
	ix->slots = NULL;
	ix->mask = 0;
	if (map->type != AJ_NODE_MAP || map->nr < KEYINDEX_MIN)
		return 0;
	/* A duplicate cannot be in a tree built through this API; keep the first. */
	if (keyindex_fill(ix, map, &first, &again) < 0) {
		aj_keyindex_release(ix);
		return -1;
	}
	return 0;
}

const struct aj_pair *aj_keyindex_find(const struct aj_keyindex *ix,
				       const char *key, size_t keylen)
{
	size_t h;

	if (!ix->slots)
		return pair_find(ix->map, key, keylen);
	for (h = key_hash(key, keylen) & ix->mask; ix->slots[h]; h = (h + 1) & ix->mask)
		if (same_key(&ix->map->pairs[ix->slots[h] - 1], key, keylen))
			return &ix->map->pairs[ix->slots[h] - 1];
	return NULL;
}

void aj_keyindex_release(struct aj_keyindex *ix)
{
	aj_free(ix->slots);
	ix->slots = NULL;
}

int aj_node_find_duplicate(const struct aj_node *map, size_t *first, size_t *again)
{
	struct aj_keyindex ix = { map, NULL, 0 };
	size_t i, j;
	int r;

	if (map->nr < KEYINDEX_MIN) {
		for (j = 1; j < map->nr; j++)
			for (i = 0; i < j; i++)
				if (same_key(&map->pairs[i], map->pairs[j].key, map->pairs[j].keylen)) {
					*first = i;
					*again = j;
					return 1;
				}
		return 0;
	}
	r = keyindex_fill(&ix, map, first, again);
	aj_keyindex_release(&ix);
	return r;
}
