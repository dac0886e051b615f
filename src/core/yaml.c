#include "yaml.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <yaml.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "node.h"

#define TAG_PREFIX "tag:yaml.org,2002:"
/* How much of a user's text a message quotes. */
#define TEXT_MAX 80

/* ---- YAML 1.2 core schema ---------------------------------------------- */

static int all_in(const char *s, size_t len, const char *set)
{
	size_t i;

	if (!len)
		return 0;
	for (i = 0; i < len; i++)
		if (!s[i] || !strchr(set, s[i]))
			return 0;
	return 1;
}

static int is_text(const char *s, size_t len, const char *const *words)
{
	for (; *words; words++)
		if (strlen(*words) == len && !memcmp(s, *words, len))
			return 1;
	return 0;
}

static const char *const null_words[] = { "~", "null", "Null", "NULL", NULL };
static const char *const true_words[] = { "true", "True", "TRUE", NULL };
static const char *const false_words[] = { "false", "False", "FALSE", NULL };
static const char *const inf_words[] = { ".inf", ".Inf", ".INF", NULL };
static const char *const nan_words[] = { ".nan", ".NaN", ".NAN", NULL };

#define DIGITS "0123456789"

static int is_core_int(const char *s, size_t len)
{
	if (len > 2 && s[0] == '0' && s[1] == 'o')
		return all_in(s + 2, len - 2, "01234567");
	if (len > 2 && s[0] == '0' && s[1] == 'x')
		return all_in(s + 2, len - 2, DIGITS "abcdefABCDEF");
	if (len && (s[0] == '-' || s[0] == '+'))
		s++, len--;
	return all_in(s, len, DIGITS);
}

/* [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )? */
static int is_core_float(const char *s, size_t len)
{
	size_t i = 0, digits = 0;

	if (i < len && (s[i] == '-' || s[i] == '+'))
		i++;
	if (is_text(s + i, len - i, inf_words))
		return 1;
	if (is_text(s, len, nan_words))
		return 1;
	while (i < len && s[i] >= '0' && s[i] <= '9')
		i++, digits++;
	if (i < len && s[i] == '.') {
		size_t frac = 0;

		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			frac++;
		if (!digits && !frac)
			return 0;
		digits += frac;
	}
	if (!digits)
		return 0;
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < len && (s[i] == '-' || s[i] == '+'))
			i++;
		return all_in(s + i, len - i, DIGITS);
	}
	return i == len;
}

/* The type a plain scalar resolves to under the core schema. */
static enum aj_node_type core_type(const char *s, size_t len)
{
	if (!len || is_text(s, len, null_words))
		return AJ_NODE_NULL;
	if (is_text(s, len, true_words) || is_text(s, len, false_words))
		return AJ_NODE_BOOL;
	if (is_core_int(s, len))
		return AJ_NODE_INT;
	if (is_core_float(s, len))
		return AJ_NODE_FLOAT;
	return AJ_NODE_STRING;
}

/* s is NUL-terminated and already matched is_core_int. */
static int parse_int(const char *s, long long *out)
{
	int base = 10;
	char *end;

	if (s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
		base = s[1] == 'o' ? 8 : 16;
		s += 2;
	}
	errno = 0;
	*out = strtoll(s, &end, base);
	return errno || *end ? -1 : 0;
}

/* s is NUL-terminated and already matched is_core_float. */
static int parse_float(const char *s, size_t len, double *out)
{
	char *end;
	size_t i = s[0] == '-' || s[0] == '+' ? 1 : 0;

	if (is_text(s, len, nan_words)) {
		*out = NAN;
		return 0;
	}
	if (is_text(s + i, len - i, inf_words)) {
		*out = s[0] == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	errno = 0;
	*out = strtod(s, &end);
	if (*end || (errno == ERANGE && isinf(*out)))
		return -1;
	return 0;
}

/* ---- loading ------------------------------------------------------------ */

struct frame {
	struct aj_node *node;    /* the container being filled */
	struct aj_node *key;     /* mappings: key waiting for its value */
	size_t anchor;           /* index + 1 of the anchor naming node, or 0 */
	size_t count_start;      /* loader count when the container began */
	int height;              /* nesting height of the finished children */
};

struct anchor {
	char *name;
	struct aj_node *node;    /* in the tree, or owned when `owned` */
	size_t size;             /* nodes it expands to */
	int height;
	int done;                /* an alias to an unfinished node is a loop */
	int owned;
};

struct loader {
	const char *data;
	size_t len;
	const char *filename;
	struct aj_srcfile *file;
	struct aj_errors *err;
	yaml_parser_t parser;
	struct frame *stack;
	size_t depth, stack_alloc;
	struct anchor *anchors;
	size_t nr_anchors, anchors_alloc;
	size_t count;
	struct aj_node *root;
	int have_root;
};

static int fail_at(struct loader *l, const yaml_mark_t *m, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail_at(struct loader *l, const yaml_mark_t *m, const char *fmt, ...)
{
	struct aj_where w = { l->filename, 0, 0, NULL };
	va_list ap;

	if (m) {
		w.line = (int)m->line + 1;
		w.column = (int)m->column + 1;
	}
	va_start(ap, fmt);
	aj_errors_vadd(l->err, &w, fmt, ap);
	va_end(ap);
	return -1;
}

static void mark_pos(struct loader *l, const yaml_mark_t *m, struct aj_pos *pos)
{
	pos->file = l->file;
	pos->line = (int)m->line + 1;
	pos->column = (int)m->column + 1;
}

/* Line and column of a byte offset (reader errors carry only the offset). */
static void offset_mark(const struct loader *l, size_t offset, yaml_mark_t *m)
{
	size_t i;

	m->index = offset;
	m->line = 0;
	m->column = 0;
	for (i = 0; i < offset && i < l->len; i++) {
		if (l->data[i] == '\n') {
			m->line++;
			m->column = 0;
		} else if (((unsigned char)l->data[i] & 0xc0) != 0x80) {
			m->column++;
		}
	}
}

static int parser_error(struct loader *l)
{
	yaml_parser_t *p = &l->parser;
	yaml_mark_t m = p->problem_mark;

	switch (p->error) {
	case YAML_MEMORY_ERROR:
		return aj_errors_oom(l->err);
	case YAML_READER_ERROR:
		offset_mark(l, p->problem_offset, &m);
		if (p->problem_value >= 0)
			return fail_at(l, &m, "invalid YAML: %s (byte 0x%02x)",
				       p->problem, (unsigned)p->problem_value);
		return fail_at(l, &m, "invalid YAML: %s", p->problem);
	default:
		if (p->context)
			return fail_at(l, &m, "invalid YAML: %s %s (line %d, column %d)",
				       p->problem ? p->problem : "syntax error",
				       p->context, (int)p->context_mark.line + 1,
				       (int)p->context_mark.column + 1);
		return fail_at(l, &m, "invalid YAML: %s",
			       p->problem ? p->problem : "syntax error");
	}
}

static int count_nodes(struct loader *l, size_t n, const yaml_mark_t *m)
{
	if (n > AJ_YAML_MAX_NODES - l->count)
		return fail_at(l, m, "document expands to more than %u nodes "
			       "(aliases count at full size)", AJ_YAML_MAX_NODES);
	l->count += n;
	return 0;
}

static int add_anchor(struct loader *l, const yaml_char_t *name,
		      struct aj_node *node, int done, int owned)
{
	struct anchor *a;
	char *copy;

	copy = aj_strdup((const char *)name);
	if (!copy || AJ_GROW(l->anchors, l->nr_anchors + 1, l->anchors_alloc)) {
		aj_free(copy);
		if (owned)
			aj_node_free(node);
		return aj_errors_oom(l->err);
	}
	a = &l->anchors[l->nr_anchors++];
	a->name = copy;
	a->node = node;
	a->size = 1;
	a->height = 0;
	a->done = done;
	a->owned = owned;
	return 0;
}

static const struct anchor *find_anchor(const struct loader *l, const char *name)
{
	size_t i;

	for (i = l->nr_anchors; i > 0; i--)
		if (!strcmp(l->anchors[i - 1].name, name))
			return &l->anchors[i - 1];
	return NULL;
}

static struct frame *top(struct loader *l)
{
	return l->depth ? &l->stack[l->depth - 1] : NULL;
}

static int expecting_key(struct loader *l)
{
	struct frame *f = top(l);

	return f && f->node->type == AJ_NODE_MAP && !f->key;
}

/* Hand a finished node of nesting height `height` to its parent (takes it). */
static int attach(struct loader *l, struct aj_node *n, int height)
{
	struct frame *f = top(l);
	struct aj_pair *p;

	if (!f) {
		l->root = n;
		l->have_root = 1;
		return 0;
	}
	if (height + 1 > f->height)
		f->height = height + 1;
	if (f->node->type == AJ_NODE_SEQ) {
		if (aj_node_append(f->node, n))
			return aj_errors_oom(l->err);
		return 0;
	}
	if (!f->key) {
		f->key = n;
		return 0;
	}
	if (AJ_GROW(f->node->pairs, f->node->nr + 1, f->node->alloc)) {
		aj_node_free(n);
		return aj_errors_oom(l->err);
	}
	/* The key's text and position move into the pair. */
	p = &f->node->pairs[f->node->nr++];
	p->key = f->key->str;
	p->keylen = f->key->len;
	p->keypos = f->key->pos;
	p->value = n;
	f->key->str = NULL;
	f->key->pos.file = NULL;
	aj_node_free(f->key);
	f->key = NULL;
	return 0;
}

static int tag_is(const yaml_char_t *tag, const char *name)
{
	return tag && !strncmp((const char *)tag, TAG_PREFIX, strlen(TAG_PREFIX)) &&
	       !strcmp((const char *)tag + strlen(TAG_PREFIX), name);
}

static int unsupported_tag(struct loader *l, const yaml_mark_t *m,
			   const yaml_char_t *tag)
{
	return fail_at(l, m, "unsupported YAML tag %.*s", TEXT_MAX, (const char *)tag);
}

/* The type a scalar event asks for: its tag, or the core schema. */
static int scalar_type(struct loader *l, const yaml_event_t *ev,
		       enum aj_node_type *type)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	const yaml_char_t *tag = ev->data.scalar.tag;
	enum aj_node_type core = core_type(s, len);
	static const struct {
		const char *name;
		enum aj_node_type type;
	} tags[] = {
		{ "str", AJ_NODE_STRING }, { "int", AJ_NODE_INT },
		{ "float", AJ_NODE_FLOAT }, { "bool", AJ_NODE_BOOL },
		{ "null", AJ_NODE_NULL },
	};
	size_t i;

	if (!tag || !strcmp((const char *)tag, "!")) {
		*type = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !tag ?
			core : AJ_NODE_STRING;
		return 0;
	}
	for (i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		if (!tag_is(tag, tags[i].name))
			continue;
		*type = tags[i].type;
		if (*type == AJ_NODE_STRING || core == *type ||
		    (*type == AJ_NODE_FLOAT && core == AJ_NODE_INT))
			return 0;
		return fail_at(l, &ev->start_mark, "value \"%.*s\" tagged !!%s is not a valid %s",
			       TEXT_MAX, s, tags[i].name, aj_node_type_name(*type));
	}
	return unsupported_tag(l, &ev->start_mark, tag);
}

static int on_scalar(struct loader *l, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	enum aj_node_type type = AJ_NODE_STRING;
	struct aj_node *n;
	struct aj_pos pos;
	int key = expecting_key(l);

	if (scalar_type(l, ev, &type))
		return -1;
	/* Keeps every string a C string, as cJSON, argv and env need. */
	if (memchr(s, '\0', len))
		return fail_at(l, &ev->start_mark, "strings may not contain NUL (\\0) characters");
	if (key && ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    !ev->data.scalar.tag && len == 2 && !memcmp(s, "<<", 2))
		return fail_at(l, &ev->start_mark,
			       "merge keys (<<) are not supported; repeat the keys "
			       "or share them through `base`");
	if (count_nodes(l, 1, &ev->start_mark))
		return -1;
	mark_pos(l, &ev->start_mark, &pos);
	n = aj_node_new_string(s, len, &pos);
	if (!n)
		return aj_errors_oom(l->err);
	n->type = type;
	if (type == AJ_NODE_BOOL) {
		n->v.boolean = is_text(s, len, true_words);
	} else if (type == AJ_NODE_INT) {
		if (parse_int(s, &n->v.integer)) {
			aj_node_free(n);
			return fail_at(l, &ev->start_mark,
				       "integer %.*s is out of range (64-bit signed)",
				       TEXT_MAX, s);
		}
	} else if (type == AJ_NODE_FLOAT) {
		if (parse_float(s, len, &n->v.number)) {
			aj_node_free(n);
			return fail_at(l, &ev->start_mark, "number %.*s is out of range",
				       TEXT_MAX, s);
		}
	}
	if (ev->data.scalar.anchor) {
		struct aj_node *target = n;

		/* A key node is consumed by its pair, so its anchor keeps a copy. */
		if (key && !(target = aj_node_copy(n))) {
			aj_node_free(n);
			return aj_errors_oom(l->err);
		}
		if (add_anchor(l, ev->data.scalar.anchor, target, 1, key)) {
			aj_node_free(n);
			return -1;
		}
	}
	return attach(l, n, 0);
}

static int on_alias(struct loader *l, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	const struct anchor *a = find_anchor(l, name);
	struct aj_node *n;

	if (!a)
		return fail_at(l, &ev->start_mark, "unknown anchor *%.*s", TEXT_MAX, name);
	if (!a->done)
		return fail_at(l, &ev->start_mark,
			       "alias *%.*s refers to a node that contains it",
			       TEXT_MAX, name);
	if (expecting_key(l) && !aj_node_is_scalar(a->node))
		return fail_at(l, &ev->start_mark,
			       "mapping keys must be scalars, alias *%.*s is a %s",
			       TEXT_MAX, name, aj_node_type_name(a->node->type));
	if ((int)l->depth + a->height > AJ_YAML_MAX_DEPTH)
		return fail_at(l, &ev->start_mark,
			       "nesting deeper than %d levels", AJ_YAML_MAX_DEPTH);
	if (count_nodes(l, a->size, &ev->start_mark))
		return -1;
	n = aj_node_copy(a->node);
	if (!n)
		return aj_errors_oom(l->err);
	return attach(l, n, a->height);
}

static int on_start(struct loader *l, const yaml_event_t *ev, int is_map)
{
	const yaml_char_t *tag = is_map ? ev->data.mapping_start.tag :
		ev->data.sequence_start.tag;
	const yaml_char_t *anchor = is_map ? ev->data.mapping_start.anchor :
		ev->data.sequence_start.anchor;
	struct frame *f;
	struct aj_node *n;
	struct aj_pos pos;

	if (expecting_key(l))
		return fail_at(l, &ev->start_mark,
			       "mapping keys must be scalars, not a %s",
			       is_map ? "mapping" : "list");
	if (tag && strcmp((const char *)tag, "!") &&
	    !tag_is(tag, is_map ? "map" : "seq"))
		return unsupported_tag(l, &ev->start_mark, tag);
	if (l->depth >= AJ_YAML_MAX_DEPTH)
		return fail_at(l, &ev->start_mark,
			       "nesting deeper than %d levels", AJ_YAML_MAX_DEPTH);
	if (count_nodes(l, 1, &ev->start_mark))
		return -1;
	mark_pos(l, &ev->start_mark, &pos);
	n = aj_node_new(is_map ? AJ_NODE_MAP : AJ_NODE_SEQ, &pos);
	if (!n || AJ_GROW(l->stack, l->depth + 1, l->stack_alloc)) {
		aj_node_free(n);
		return aj_errors_oom(l->err);
	}
	f = &l->stack[l->depth++];
	f->node = n;
	f->key = NULL;
	f->anchor = 0;
	f->count_start = l->count - 1;
	f->height = 1;
	if (anchor) {
		if (add_anchor(l, anchor, n, 0, 0))
			return -1;
		f->anchor = l->nr_anchors;
	}
	return 0;
}

/* Report the repeat of a key that comes first in the document. */
static int check_duplicates(struct loader *l, const struct aj_node *map)
{
	const struct aj_pair *first, *again;
	size_t i, j;
	yaml_mark_t m;
	int r = aj_node_find_duplicate(map, &i, &j);

	if (r < 0)
		return aj_errors_oom(l->err);
	if (!r)
		return 0;
	first = &map->pairs[i];
	again = &map->pairs[j];
	m.index = 0;
	m.line = (size_t)again->keypos.line - 1;
	m.column = (size_t)again->keypos.column - 1;
	return fail_at(l, &m, "duplicate key \"%.*s\" (first defined at line %d, column %d)",
		       TEXT_MAX, again->key, first->keypos.line, first->keypos.column);
}

static int on_end(struct loader *l, const yaml_event_t *ev)
{
	struct frame f = l->stack[--l->depth];

	(void)ev;
	if (f.node->type == AJ_NODE_MAP && check_duplicates(l, f.node)) {
		aj_node_free(f.node);
		return -1;
	}
	if (f.anchor) {
		struct anchor *a = &l->anchors[f.anchor - 1];

		a->done = 1;
		a->size = l->count - f.count_start;
		a->height = f.height;
	}
	return attach(l, f.node, f.height);
}

static void loader_release(struct loader *l)
{
	size_t i;

	for (i = l->depth; i > 0; i--) {
		aj_node_free(l->stack[i - 1].key);
		aj_node_free(l->stack[i - 1].node);
	}
	aj_free(l->stack);
	for (i = 0; i < l->nr_anchors; i++) {
		aj_free(l->anchors[i].name);
		if (l->anchors[i].owned)
			aj_node_free(l->anchors[i].node);
	}
	aj_free(l->anchors);
	aj_srcfile_unref(l->file);
	yaml_parser_delete(&l->parser);
}

static int on_event(struct loader *l, const yaml_event_t *ev, int *done)
{
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		*done = 1;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		if (l->have_root)
			return fail_at(l, &ev->start_mark,
				       "more than one YAML document; a file holds exactly one");
		return 0;
	case YAML_SCALAR_EVENT:
		return on_scalar(l, ev);
	case YAML_ALIAS_EVENT:
		return on_alias(l, ev);
	case YAML_SEQUENCE_START_EVENT:
		return on_start(l, ev, 0);
	case YAML_MAPPING_START_EVENT:
		return on_start(l, ev, 1);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		return on_end(l, ev);
	default:
		return 0;
	}
}

int aj_yaml_load(const char *data, size_t len, const char *filename,
		 struct aj_node **out, struct aj_errors *err)
{
	struct loader l;
	int done = 0, ret = 0;

	memset(&l, 0, sizeof(l));
	l.data = data;
	l.len = len;
	l.filename = filename;
	l.err = err;
	if (len > AJ_YAML_MAX_BYTES)
		return fail_at(&l, NULL, "file is larger than %u bytes", AJ_YAML_MAX_BYTES);
	l.file = aj_srcfile_new(filename);
	if (!l.file)
		return aj_errors_oom(err);
	if (!yaml_parser_initialize(&l.parser)) {
		aj_srcfile_unref(l.file);
		return aj_errors_oom(err);
	}
	yaml_parser_set_input_string(&l.parser, (const unsigned char *)data, len);
	yaml_parser_set_encoding(&l.parser, YAML_UTF8_ENCODING);
	while (!done && !ret) {
		yaml_event_t ev;

		if (!yaml_parser_parse(&l.parser, &ev)) {
			ret = parser_error(&l);
			break;
		}
		ret = on_event(&l, &ev, &done);
		yaml_event_delete(&ev);
	}
	if (ret) {
		aj_node_free(l.root);
		l.root = NULL;
	}
	loader_release(&l);
	if (ret)
		return -1;
	/* A document that is only null carries nothing: same as empty. */
	if (l.root && l.root->type == AJ_NODE_NULL) {
		aj_node_free(l.root);
		l.root = NULL;
	}
	*out = l.root;
	return 0;
}

/* ---- emitting ----------------------------------------------------------- */

struct emitter {
	yaml_emitter_t e;
	struct aj_buf *out;
	struct aj_errors *err;
};

static int write_out(void *data, unsigned char *buffer, size_t size)
{
	return aj_buf_add(data, buffer, size) ? 0 : 1;
}

static int emitter_error(struct emitter *em)
{
	if (em->e.error == YAML_MEMORY_ERROR)
		return aj_errors_oom(em->err);
	if (em->e.error == YAML_WRITER_ERROR)
		return aj_errors_add(em->err, NULL,
				     "cannot write YAML: output too large or out of memory");
	return aj_errors_add(em->err, NULL, "cannot write YAML: %s",
			     em->e.problem ? em->e.problem : "emitter error");
}

/* Emit and release ev (libyaml takes it over even when it fails). */
static int emit(struct emitter *em, yaml_event_t *ev, int ok)
{
	if (!ok)
		return aj_errors_oom(em->err);
	if (!yaml_emitter_emit(&em->e, ev))
		return emitter_error(em);
	return 0;
}

/* Spellings that other YAML readers (1.1: PyYAML, amlt) take as non-strings. */
static const char *const yaml11_words[] = {
	"y", "n", "yes", "no", "on", "off", "true", "false", "null", "=", "<<", NULL,
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Must a string be quoted to read back as a string, here and in YAML 1.1
 * readers? Anything the core schema types, anything that starts like a number
 * (covers 1.1 octals, sexagesimals, timestamps, "8+"), and 1.1 booleans.
 */
static int needs_quotes(const char *s, size_t len)
{
	const char *const *w;

	if (core_type(s, len) != AJ_NODE_STRING || is_digit(s[0]))
		return 1;
	if ((s[0] == '+' || s[0] == '-' || s[0] == '.') &&
	    (is_digit(s[1]) || s[1] == '.'))
		return 1;
	for (w = yaml11_words; *w; w++)
		if (!strcasecmp(s, *w))
			return 1;
	return 0;
}

/* Well-formed UTF-8: no overlong forms, surrogates or values past U+10FFFF. */
static int utf8_valid(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i], width, k;
		unsigned long v;

		if (c < 0x80) {
			i++;
			continue;
		}
		width = c >= 0xf0 && c < 0xf5 ? 4 : c >= 0xe0 && c < 0xf0 ? 3 :
			c >= 0xc2 && c < 0xe0 ? 2 : 0;
		if (!width || len - i < width)
			return 0;
		v = c & (0x7f >> width);
		for (k = 1; k < width; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			v = (v << 6) | (s[i + k] & 0x3f);
		}
		if ((width == 3 && (v < 0x800 || (v >= 0xd800 && v < 0xe000))) ||
		    (width == 4 && (v < 0x10000 || v > 0x10ffff)))
			return 0;
		i += width;
	}
	return 1;
}

static int emit_scalar(struct emitter *em, const char *text, size_t len,
		       yaml_scalar_style_t style)
{
	yaml_event_t ev;

	if (len > INT_MAX)
		return aj_errors_add(em->err, NULL, "cannot write YAML: string too long");
	/* libyaml would refuse it too, but in a way that looks like OOM. */
	if (!utf8_valid((const unsigned char *)text, len))
		return aj_errors_add(em->err, NULL,
				     "cannot write YAML: a string is not valid UTF-8");
	return emit(em, &ev, yaml_scalar_event_initialize(&ev, NULL, NULL,
		(const yaml_char_t *)text, (int)len, 1, 1, style));
}

/*
 * Multi-line strings go literal (libyaml falls back to double quotes when a
 * literal block cannot hold them exactly); strings that would change type go
 * quoted; the rest plain when libyaml allows it.
 */
static int emit_string(struct emitter *em, const char *s)
{
	size_t len = strlen(s);
	yaml_scalar_style_t style = YAML_ANY_SCALAR_STYLE;

	if (memchr(s, '\n', len))
		style = YAML_LITERAL_SCALAR_STYLE;
	else if (needs_quotes(s, len))
		style = YAML_SINGLE_QUOTED_SCALAR_STYLE;
	return emit_scalar(em, s, len, style);
}

static int emit_number(struct emitter *em, double d)
{
	char text[AJ_FLOAT_TEXT_MAX];
	int len;

	/* cJSON keeps doubles: whole values within 2^53 print as integers. */
	if (d == floor(d) && fabs(d) < 9007199254740992.0)
		len = snprintf(text, sizeof(text), "%.0f", d);
	else
		len = aj_float_text(d, text);
	return emit_scalar(em, text, (size_t)len, YAML_PLAIN_SCALAR_STYLE);
}

static int emit_value(struct emitter *em, const cJSON *v, int depth)
{
	const cJSON *c;
	yaml_event_t ev;
	int is_map = cJSON_IsObject(v);

	if (!is_map && !cJSON_IsArray(v)) {
		if (cJSON_IsString(v) && v->valuestring)
			return emit_string(em, v->valuestring);
		if (cJSON_IsNumber(v))
			return emit_number(em, v->valuedouble);
		if (cJSON_IsBool(v) || cJSON_IsNull(v)) {
			const char *t = cJSON_IsNull(v) ? "null" : cJSON_IsTrue(v) ? "true" : "false";

			return emit_scalar(em, t, strlen(t), YAML_PLAIN_SCALAR_STYLE);
		}
		if (cJSON_IsRaw(v) && v->valuestring) {
			enum aj_node_type t = core_type(v->valuestring, strlen(v->valuestring));

			if (t == AJ_NODE_INT || t == AJ_NODE_FLOAT)
				return emit_scalar(em, v->valuestring, strlen(v->valuestring),
						   YAML_PLAIN_SCALAR_STYLE);
			return emit_string(em, v->valuestring);
		}
		return aj_errors_add(em->err, NULL, "cannot write YAML: invalid value");
	}
	if (depth >= AJ_YAML_MAX_DEPTH)
		return aj_errors_add(em->err, NULL,
				     "cannot write YAML: nesting deeper than %d levels",
				     AJ_YAML_MAX_DEPTH);
	if (is_map ?
	    emit(em, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
							       YAML_BLOCK_MAPPING_STYLE)) :
	    emit(em, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
								YAML_BLOCK_SEQUENCE_STYLE)))
		return -1;
	for (c = v->child; c; c = c->next) {
		if (is_map && !c->string)
			return aj_errors_add(em->err, NULL, "cannot write YAML: key missing");
		if ((is_map && emit_string(em, c->string)) || emit_value(em, c, depth + 1))
			return -1;
	}
	return emit(em, &ev, is_map ? yaml_mapping_end_event_initialize(&ev) :
		    yaml_sequence_end_event_initialize(&ev));
}

int aj_yaml_emit(const cJSON *v, struct aj_buf *out, struct aj_errors *err)
{
	struct aj_buf text = AJ_BUF_INIT(out->max);
	struct emitter em;
	yaml_event_t ev;
	int ret;

	em.out = &text;
	em.err = err;
	if (!yaml_emitter_initialize(&em.e))
		return aj_errors_oom(err);
	yaml_emitter_set_output(&em.e, write_out, &text);
	yaml_emitter_set_unicode(&em.e, 1);
	yaml_emitter_set_width(&em.e, -1);
	ret = emit(&em, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	if (!ret)
		ret = emit(&em, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL,
									   NULL, 1));
	if (!ret)
		ret = emit_value(&em, v, 0);
	if (!ret)
		ret = emit(&em, &ev, yaml_document_end_event_initialize(&ev, 1));
	if (!ret)
		ret = emit(&em, &ev, yaml_stream_end_event_initialize(&ev));
	yaml_emitter_delete(&em.e);
	if (!ret && aj_buf_add(out, text.buf ? text.buf : "", text.len))
		ret = aj_errors_add(err, NULL, "cannot write YAML: output too large or out of memory");
	aj_buf_release(&text);
	return ret;
}
