#include "json.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "node.h"

/*
 * cJSON prints numbers with 15 significant digits, so integers from 10^15 on
 * go out as raw text to keep every digit.
 */
#define EXACT_PRINTED_INT 999999999999999LL

static cJSON *int_to_cjson(long long v)
{
	char text[32];

	if (v >= -EXACT_PRINTED_INT && v <= EXACT_PRINTED_INT)
		return cJSON_CreateNumber((double)v);
	snprintf(text, sizeof(text), "%lld", v);
	return cJSON_CreateRaw(text);
}

cJSON *aj_node_to_cjson(const struct aj_node *n)
{
	cJSON *out;
	size_t i;

	if (!n)
		return cJSON_CreateNull();
	switch (n->type) {
	case AJ_NODE_NULL:
		return cJSON_CreateNull();
	case AJ_NODE_BOOL:
		return cJSON_CreateBool(n->v.boolean);
	case AJ_NODE_INT:
		return int_to_cjson(n->v.integer);
	case AJ_NODE_FLOAT:
		return cJSON_CreateNumber(n->v.number);
	case AJ_NODE_STRING:
		return cJSON_CreateString(n->str ? n->str : "");
	case AJ_NODE_SEQ:
	case AJ_NODE_MAP:
		break;
	}
	out = n->type == AJ_NODE_SEQ ? cJSON_CreateArray() : cJSON_CreateObject();
	if (!out)
		return NULL;
	for (i = 0; i < n->nr; i++) {
		cJSON *item = aj_node_to_cjson(n->type == AJ_NODE_SEQ ?
					       n->items[i] : n->pairs[i].value);
		int ok = item && (n->type == AJ_NODE_SEQ ?
				  cJSON_AddItemToArray(out, item) :
				  cJSON_AddItemToObject(out, n->pairs[i].key, item));

		if (!ok) {
			cJSON_Delete(item);
			cJSON_Delete(out);
			return NULL;
		}
	}
	return out;
}

struct from_cjson {
	struct aj_srcfile *file;
	const char *origin;
	struct aj_errors *err;
};

/* Where node_from() is, innermost first: for the key path of an error. */
struct from_frame {
	const struct from_frame *up;
	const char *key;          /* member name, or NULL for item `index` */
	size_t index;
};

/*
 * cJSON decodes \u0000 into a NUL byte and so cuts the string there,
 * silently. The parsers below first replace each such escape by the byte
 * NUL_MARK, which valid UTF-8 never holds, so that conversion can refuse
 * the string by name instead of using its head.
 */
#define NUL_MARK 0xff

static int from_fail(struct from_cjson *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int from_fail(struct from_cjson *c, const char *fmt, ...)
{
	struct aj_where w = { c->origin, 0, 0, NULL };
	va_list ap;

	va_start(ap, fmt);
	aj_errors_vadd(c->err, &w, fmt, ap);
	va_end(ap);
	return -1;
}

/* A raw number (an integer too large for a double, see aj_node_to_cjson). */
static int raw_number(struct from_cjson *c, const char *text,
		      const struct aj_pos *pos, struct aj_node **out)
{
	char *end;
	long long i;
	double d;

	errno = 0;
	i = strtoll(text, &end, 10);
	if (!errno && end != text && !*end) {
		*out = aj_node_new_int(i, pos);
		return 0;
	}
	errno = 0;
	d = strtod(text, &end);
	if (!errno && end != text && !*end) {
		*out = aj_node_new_float(d, pos);
		return 0;
	}
	return from_fail(c, "unsupported raw JSON value %.80s", text);
}

/* "spec.command[2]" for the frames up to the root. */
static void frame_path(const struct from_frame *f, struct aj_buf *out)
{
	if (!f)
		return;
	frame_path(f->up, out);
	if (f->key)
		aj_buf_addf(out, "%s%s", out->len ? "." : "", f->key);
	else
		aj_buf_addf(out, "[%zu]", f->index);
}

static int nul_fail(struct from_cjson *c, const struct from_frame *f, const char *what)
{
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_where w = { c->origin, 0, 0, NULL };
	int r;

	frame_path(f, &path);
	w.path = path.len ? aj_buf_cstr(&path) : NULL;
	r = aj_errors_add(c->err, &w, "%s holds a NUL character (\\u0000), which aj cannot pass on: "
			  "remove it", what);
	aj_buf_release(&path);
	return r;
}

static int node_from(struct from_cjson *c, const cJSON *v, int depth,
		     const struct from_frame *at, struct aj_node **out)
{
	struct aj_pos pos = { c->file, 0, 0 };
	struct aj_node *n = NULL;
	const cJSON *child;
	size_t index = 0;

	if (cJSON_IsString(v) && v->valuestring && strchr(v->valuestring, NUL_MARK))
		return nul_fail(c, at, "the string");
	if (cJSON_IsNull(v))
		n = aj_node_new(AJ_NODE_NULL, &pos);
	else if (cJSON_IsBool(v))
		n = aj_node_new_bool(cJSON_IsTrue(v), &pos);
	else if (cJSON_IsString(v) && v->valuestring)
		n = aj_node_new_string(v->valuestring, strlen(v->valuestring), &pos);
	else if (cJSON_IsNumber(v))
		/* Whole numbers in the 64-bit range come back as integers. */
		n = v->valuedouble == floor(v->valuedouble) &&
		    v->valuedouble >= -9223372036854775808.0 &&
		    v->valuedouble < 9223372036854775808.0 ?
			aj_node_new_int((long long)v->valuedouble, &pos) :
			aj_node_new_float(v->valuedouble, &pos);
	else if (cJSON_IsRaw(v) && v->valuestring) {
		if (raw_number(c, v->valuestring, &pos, &n))
			return -1;
	} else if (cJSON_IsArray(v) || cJSON_IsObject(v)) {
		if (depth >= AJ_JSON_MAX_DEPTH)
			return from_fail(c, "nesting deeper than %d levels",
					 AJ_JSON_MAX_DEPTH);
		n = aj_node_new(cJSON_IsArray(v) ? AJ_NODE_SEQ : AJ_NODE_MAP, &pos);
	} else {
		return from_fail(c, "unsupported JSON value");
	}
	if (!n)
		return aj_errors_oom(c->err);
	for (child = aj_node_is_scalar(n) ? NULL : v->child; child; child = child->next, index++) {
		struct from_frame here = { at, n->type == AJ_NODE_MAP ? child->string : NULL, index };
		struct aj_node *item = NULL;

		if (here.key && strchr(here.key, NUL_MARK)) {
			aj_node_free(n);
			return nul_fail(c, at, "a member name");
		}
		if (node_from(c, child, depth + 1, &here, &item)) {
			aj_node_free(n);
			return -1;
		}
		if (n->type == AJ_NODE_SEQ) {
			if (aj_node_append(n, item))
				goto oom;
			continue;
		}
		if (!child->string) {
			aj_node_free(item);
			aj_node_free(n);
			return from_fail(c, "object member without a name");
		}
		if (aj_node_add(n, child->string, strlen(child->string), item, &pos))
			goto oom;
	}
	if (n->type == AJ_NODE_MAP) {
		size_t first, again;
		int dup = aj_node_find_duplicate(n, &first, &again);

		if (dup < 0)
			goto oom;
		if (dup) {
			from_fail(c, "duplicate key \"%.80s\"", n->pairs[again].key);
			aj_node_free(n);
			return -1;
		}
	}
	*out = n;
	return 0;
oom:
	aj_node_free(n);
	return aj_errors_oom(c->err);
}

int aj_node_from_cjson(const cJSON *v, const char *origin, struct aj_node **out,
		       struct aj_errors *err)
{
	struct from_cjson c;
	struct aj_node *n;
	int ret;

	c.origin = origin;
	c.err = err;
	c.file = aj_srcfile_new(origin);
	if (!c.file)
		return aj_errors_oom(err);
	ret = node_from(&c, v, 0, NULL, &n);
	aj_srcfile_unref(c.file);
	if (!ret)
		*out = n;
	return ret;
}

static int cjson_depth_ok(const cJSON *v, int depth)
{
	const cJSON *c;

	if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
		return 1;
	if (depth >= AJ_JSON_MAX_DEPTH)
		return 0;
	for (c = v->child; c; c = c->next)
		if (!cjson_depth_ok(c, depth + 1))
			return 0;
	return 1;
}

/*
 * The text to parse: s itself, or in *copy s with every \u0000 escape as
 * NUL_MARK (see above). Text that already holds the byte is not valid
 * UTF-8 and is left as it is. NULL when out of memory.
 */
static const char *mark_nuls(const char *s, size_t *len, struct aj_buf *copy)
{
	size_t i, from = 0;
	int in_string = 0;

	if (memchr(s, NUL_MARK, *len))
		return s;
	for (i = 0; i < *len; i++) {
		if (!in_string) {
			in_string = s[i] == '"';
			continue;
		}
		if (s[i] == '"') {
			in_string = 0;
		} else if (s[i] == '\\') {
			if (*len - i >= 6 && !memcmp(s + i + 1, "u0000", 5)) {
				if (aj_buf_add(copy, s + from, i - from) || aj_buf_addch(copy, (char)NUL_MARK))
					return NULL;
				from = i + 6;
			}
			i++;
		}
	}
	if (!from)
		return s;
	if (aj_buf_add(copy, s + from, *len - from))
		return NULL;
	*len = copy->len;
	return copy->buf;
}

int aj_json_parse(const char *data, size_t len, const char *origin, cJSON **out,
		  struct aj_errors *err)
{
	struct aj_where w = { origin, 0, 0, NULL };
	const char *end = NULL;
	cJSON *v;
	void *probe;
	size_t i;

	struct aj_buf marked = AJ_BUF_INIT(AJ_JSON_MAX_BYTES);
	const char *text;

	if (len > AJ_JSON_MAX_BYTES)
		return aj_errors_add(err, &w, "JSON text is larger than %u bytes",
				     AJ_JSON_MAX_BYTES);
	text = mark_nuls(data, &len, &marked);
	if (!text)
		return aj_errors_oom(err);
	data = text;
	v = cJSON_ParseWithLengthOpts(data, len, &end, 0);
	if (!v) {
		/* too deep for cJSON: parse the cut copy so the message says so */
		int trailing = 0;

		v = aj_json_parse_lenient(data, len, &trailing);
		if (v && trailing) {
			cJSON_Delete(v);
			v = NULL;
		}
	}
	if (v && !cjson_depth_ok(v, 0)) {
		cJSON_Delete(v);
		aj_buf_release(&marked);
		return aj_errors_add(err, &w, "JSON nesting deeper than %d levels",
				     AJ_JSON_MAX_DEPTH);
	}
	if (v) {
		aj_buf_release(&marked);
		*out = v;
		return 0;
	}
	/*
	 * cJSON reports running out of memory as a syntax error; if memory is
	 * exhausted right now, say that instead of blaming the input.
	 */
	probe = aj_malloc(1);
	if (!probe) {
		aj_buf_release(&marked);
		return aj_errors_oom(err);
	}
	aj_free(probe);
	w.line = 1;
	w.column = 1;
	for (i = 0; end && end >= data && i < (size_t)(end - data) && i < len; i++) {
		if (data[i] == '\n') {
			w.line++;
			w.column = 1;
		} else if (((unsigned char)data[i] & 0xc0) != 0x80) {
			w.column++;
		}
	}
	aj_buf_release(&marked);
	return aj_errors_add(err, &w, "invalid JSON");
}

int aj_json_print(const cJSON *v, struct aj_buf *out)
{
	char *text = cJSON_Print(v);
	const char *p;
	int ret = 0, indent = 1;

	if (!text)
		return -1;
	/*
	 * cJSON indents with tabs and puts one after each colon; strings hold
	 * a tab only as \t, so every raw tab is layout: two spaces of indent
	 * at the start of a line (as kubectl and jq print), one space after.
	 */
	for (p = text; *p && !ret; p++) {
		size_t tabs = *p == '{' && p[1] == '\n' ? strspn(p + 2, "\t") : 0;

		if (*p == '{' && p[1] == '\n' && p[2 + tabs] == '}') {
			ret = aj_buf_addstr(out, "{}");      /* cJSON's "{\n\t}" for {} */
			p += 2 + tabs;
			indent = 0;
			continue;
		}
		if (*p == '\t')
			ret = aj_buf_addstr(out, indent ? "  " : " ");
		else
			ret = aj_buf_addch(out, *p);
		indent = *p == '\n' || (indent && *p == '\t');
	}
	ret = ret || aj_buf_addch(out, '\n') ? -1 : 0;
	cJSON_free(text);
	return ret;
}

long long aj_json_whole(const cJSON *v, double max, long long dflt)
{
	return cJSON_IsNumber(v) && v->valuedouble >= 0 && v->valuedouble <= max
	       ? (long long)v->valuedouble : dflt;
}

/* Copy s into out with every container deeper than AJ_JSON_CUT_DEPTH as null. */
static int cut_deep(const char *s, size_t len, struct aj_buf *out)
{
	size_t i, depth = 0, skip_from = 0;
	int in_string = 0, skipping = 0;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = 0;
			continue;
		}
		if (c == '"') {
			in_string = 1;
		} else if (c == '{' || c == '[') {
			if (++depth > AJ_JSON_CUT_DEPTH && !skipping) {
				skipping = 1;
				if (aj_buf_add(out, s + skip_from, i - skip_from) ||
				    aj_buf_addstr(out, "null"))
					return -1;
			}
		} else if (c == '}' || c == ']') {
			if (!depth)
				return -1;
			if (depth-- == AJ_JSON_CUT_DEPTH + 1 && skipping) {
				skipping = 0;
				skip_from = i + 1;
			}
		}
	}
	if (skipping)
		return -1;
	return aj_buf_add(out, s + skip_from, len - skip_from);
}

static int only_space(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p == end;
}

cJSON *aj_json_parse_lenient(const char *s, size_t len, int *trailing)
{
	struct aj_buf copy = AJ_BUF_INIT(AJ_JSON_MAX_BYTES);
	struct aj_buf marked = AJ_BUF_INIT(AJ_JSON_MAX_BYTES);
	const char *end = NULL;
	cJSON *v;

	s = mark_nuls(s, &len, &marked);
	v = s ? cJSON_ParseWithLengthOpts(s, len, &end, 0) : NULL;
	if (v) {
		*trailing = !only_space(end, s + len);
		aj_buf_release(&marked);
		return v;
	}
	if (!s || cut_deep(s, len, &copy) || !copy.len) {
		aj_buf_release(&copy);
		aj_buf_release(&marked);
		return NULL;
	}
	aj_buf_release(&marked);
	v = cJSON_ParseWithLengthOpts(copy.buf, copy.len, &end, 0);
	if (v)
		*trailing = !only_space(end, copy.buf + copy.len);
	aj_buf_release(&copy);
	return v;
}

const cJSON *aj_json_get(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

const char *aj_json_str(const cJSON *o, const char *k)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o, k));
}
