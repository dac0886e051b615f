#include "support.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/yaml.h"

/* Load text that must fail; return the formatted errors (static buffer). */
static const char *load_error_n(const char *text, size_t len)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *n = (struct aj_node *)&err; /* must stay untouched */
	const char *msg;

	assert_int_equal(aj_yaml_load(text, len, "t.yaml", &n, &err), -1);
	assert_true(n == (struct aj_node *)&err);
	assert_false(aj_errors_empty(&err));
	msg = aj_test_errors_text(&err);
	aj_errors_release(&err);
	return msg;
}

static const char *load_error(const char *text)
{
	return load_error_n(text, strlen(text));
}

#define assert_error(text, fragment) do { \
	const char *msg_ = load_error(text); \
	if (!strstr(msg_, (fragment))) \
		fail_msg("expected \"%s\" in: %s", (fragment), msg_); \
} while (0)

struct scalar_case {
	const char *text;
	enum aj_node_type type;
	long long i;
	double f;
};

static void plain_scalars_follow_the_core_schema(void **state)
{
	static const struct scalar_case cases[] = {
		{ "~", AJ_NODE_NULL, 0, 0 },
		{ "null", AJ_NODE_NULL, 0, 0 },
		{ "NULL", AJ_NODE_NULL, 0, 0 },
		{ "", AJ_NODE_NULL, 0, 0 },
		{ "true", AJ_NODE_BOOL, 1, 0 },
		{ "False", AJ_NODE_BOOL, 0, 0 },
		{ "TRUE", AJ_NODE_BOOL, 1, 0 },
		{ "0", AJ_NODE_INT, 0, 0 },
		{ "-17", AJ_NODE_INT, -17, 0 },
		{ "+12", AJ_NODE_INT, 12, 0 },
		{ "007", AJ_NODE_INT, 7, 0 },
		{ "0o17", AJ_NODE_INT, 15, 0 },
		{ "0x1F", AJ_NODE_INT, 31, 0 },
		{ "9223372036854775807", AJ_NODE_INT, 9223372036854775807LL, 0 },
		{ "-9223372036854775808", AJ_NODE_INT, -9223372036854775807LL - 1, 0 },
		{ "1.5", AJ_NODE_FLOAT, 0, 1.5 },
		{ "-.5", AJ_NODE_FLOAT, 0, -0.5 },
		{ "1.", AJ_NODE_FLOAT, 0, 1.0 },
		{ "1e3", AJ_NODE_FLOAT, 0, 1000.0 },
		{ "2.5E-1", AJ_NODE_FLOAT, 0, 0.25 },
		{ ".inf", AJ_NODE_FLOAT, 0, INFINITY },
		{ "-.Inf", AJ_NODE_FLOAT, 0, -INFINITY },
		/* YAML 1.1 spellings are plain strings under the core schema. */
		{ "yes", AJ_NODE_STRING, 0, 0 },
		{ "off", AJ_NODE_STRING, 0, 0 },
		{ "1_000", AJ_NODE_STRING, 0, 0 },
		{ "0b101", AJ_NODE_STRING, 0, 0 },
		{ "0x", AJ_NODE_STRING, 0, 0 },
		{ "-0x1F", AJ_NODE_STRING, 0, 0 },
		{ "0o8", AJ_NODE_STRING, 0, 0 },
		{ "8+", AJ_NODE_STRING, 0, 0 },
		{ ".", AJ_NODE_STRING, 0, 0 },
		{ "1e", AJ_NODE_STRING, 0, 0 },
		{ "1.2.3", AJ_NODE_STRING, 0, 0 },
		{ "2001-12-14", AJ_NODE_STRING, 0, 0 },
		{ "nan", AJ_NODE_STRING, 0, 0 },
		{ "Nullx", AJ_NODE_STRING, 0, 0 },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char text[64];
		struct aj_node *doc, *v;

		snprintf(text, sizeof(text), "v: %s\n", cases[i].text);
		doc = aj_test_yaml(text);
		v = aj_node_get(doc, "v");
		assert_non_null(v);
		if (v->type != cases[i].type)
			fail_msg("%s: got %s", cases[i].text, aj_node_type_name(v->type));
		if (v->type == AJ_NODE_INT || v->type == AJ_NODE_BOOL)
			assert_true(v->type == AJ_NODE_INT ?
				    v->v.integer == cases[i].i :
				    v->v.boolean == cases[i].i);
		if (v->type == AJ_NODE_FLOAT)
			assert_true(v->v.number == cases[i].f);
		if (v->type == AJ_NODE_STRING)
			assert_string_equal(v->str, cases[i].text);
		aj_node_free(doc);
	}
}

static void nan_and_text_kept(void **state)
{
	struct aj_node *doc = aj_test_yaml("a: .NaN\nb: 0x1F\n");

	(void)state;
	assert_true(isnan(aj_node_get(doc, "a")->v.number));
	/* The text as written stays available. */
	assert_string_equal(aj_node_get(doc, "b")->str, "0x1F");
	aj_node_free(doc);
}

static void quoted_and_block_scalars_are_strings(void **state)
{
	struct aj_node *doc = aj_test_yaml(
		"a: 'true'\nb: \"1\"\nc: |\n  line1\n  line2\nd: >-\n  folded\n  text\n"
		"e: \"tab\\there\\u00e9\"\nf: ''\n");
	struct aj_node *e;

	(void)state;
	assert_int_equal(aj_node_get(doc, "a")->type, AJ_NODE_STRING);
	assert_string_equal(aj_node_get(doc, "a")->str, "true");
	assert_int_equal(aj_node_get(doc, "b")->type, AJ_NODE_STRING);
	assert_string_equal(aj_node_get(doc, "c")->str, "line1\nline2\n");
	assert_string_equal(aj_node_get(doc, "d")->str, "folded text");
	e = aj_node_get(doc, "e");
	assert_string_equal(e->str, "tab\there\xc3\xa9");
	assert_int_equal(aj_node_get(doc, "f")->type, AJ_NODE_STRING);
	assert_int_equal(aj_node_get(doc, "f")->len, 0);
	aj_node_free(doc);
}

static void keys_keep_order_and_positions(void **state)
{
	struct aj_node *doc = aj_test_yaml(
		"# comment\nzeta: 1\nalpha:\n  - x\n  -   y\nmid: {k: v}\n1: one\n");
	struct aj_node *alpha;

	(void)state;
	assert_int_equal(doc->type, AJ_NODE_MAP);
	assert_int_equal(doc->nr, 4);
	assert_string_equal(doc->pairs[0].key, "zeta");
	assert_string_equal(doc->pairs[1].key, "alpha");
	assert_string_equal(doc->pairs[2].key, "mid");
	assert_string_equal(doc->pairs[3].key, "1");
	assert_int_equal(doc->pairs[0].keypos.line, 2);
	assert_int_equal(doc->pairs[0].keypos.column, 1);
	assert_int_equal(doc->pairs[0].value->pos.line, 2);
	assert_int_equal(doc->pairs[0].value->pos.column, 7);
	alpha = doc->pairs[1].value;
	assert_int_equal(alpha->type, AJ_NODE_SEQ);
	assert_int_equal(alpha->items[1]->pos.line, 5);
	assert_int_equal(alpha->items[1]->pos.column, 7);
	assert_int_equal(doc->pairs[2].value->pairs[0].keypos.column, 7);
	assert_string_equal(doc->pos.file->name, "test.yaml");
	aj_node_free(doc);
}

static void columns_count_characters(void **state)
{
	struct aj_node *doc = aj_test_yaml("ключ: значение\n");

	(void)state;
	assert_int_equal(doc->pairs[0].value->pos.column, 7);
	aj_node_free(doc);
}

static void explicit_tags(void **state)
{
	struct aj_node *doc = aj_test_yaml(
		"a: !!str 12\nb: !!int \"12\"\nc: !!float 3\nd: !!bool 'true'\n"
		"e: !!null ''\nf: ! 12\ng: !!map {x: 1}\nh: !!seq [1]\n");

	(void)state;
	assert_int_equal(aj_node_get(doc, "a")->type, AJ_NODE_STRING);
	assert_int_equal(aj_node_get(doc, "b")->type, AJ_NODE_INT);
	assert_int_equal(aj_node_get(doc, "b")->v.integer, 12);
	assert_int_equal(aj_node_get(doc, "c")->type, AJ_NODE_FLOAT);
	assert_true(aj_node_get(doc, "c")->v.number == 3.0);
	assert_int_equal(aj_node_get(doc, "d")->type, AJ_NODE_BOOL);
	assert_int_equal(aj_node_get(doc, "e")->type, AJ_NODE_NULL);
	assert_int_equal(aj_node_get(doc, "f")->type, AJ_NODE_STRING);
	assert_int_equal(aj_node_get(doc, "g")->type, AJ_NODE_MAP);
	assert_int_equal(aj_node_get(doc, "h")->type, AJ_NODE_SEQ);
	aj_node_free(doc);
}

static void bad_tags_are_rejected(void **state)
{
	(void)state;
	assert_error("a: !!int abc\n", "t.yaml:1:4: value \"abc\" tagged !!int is not a valid integer");
	assert_error("a: !!bool yes\n", "tagged !!bool is not a valid boolean");
	assert_error("a: !custom x\n", "t.yaml:1:4: unsupported YAML tag !custom");
	assert_error("a: !!binary aGk=\n", "unsupported YAML tag tag:yaml.org,2002:binary");
	assert_error("a: !!set {x: null}\n", "unsupported YAML tag tag:yaml.org,2002:set");
	assert_error("a: !!map [1]\n", "unsupported YAML tag tag:yaml.org,2002:map");
}

static void out_of_range_numbers_are_errors(void **state)
{
	(void)state;
	assert_error("x: 1\ny: 9223372036854775808\n",
		     "t.yaml:2:4: integer 9223372036854775808 is out of range");
	assert_error("x: 0x10000000000000000\n", "integer 0x10000000000000000 is out of range");
	assert_error("x: [1e400]\n", "t.yaml:1:5: number 1e400 is out of range");
}

static void duplicate_keys_name_both_positions(void **state)
{
	(void)state;
	assert_error("a: 1\nb: 2\na: 3\n",
		     "t.yaml:3:1: duplicate key \"a\" (first defined at line 1, column 1)");
	/* Keys compare by text: 1 and "1" are the same key. */
	assert_error("x:\n  1: a\n  '1': b\n", "t.yaml:3:3: duplicate key \"1\"");
	/* The earliest repeat is reported, whatever the sort order. */
	assert_error("z: 1\nb: 1\nb: 2\nz: 2\n", "t.yaml:3:1: duplicate key \"b\"");
}

static void large_mappings_detect_duplicates(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);
	const char *msg;
	int i;

	(void)state;
	for (i = 0; i < 5000; i++)
		aj_buf_addf(&b, "k%d: %d\n", i, i);
	aj_buf_addstr(&b, "k1234: again\n");
	msg = load_error(aj_buf_cstr(&b));
	assert_non_null(strstr(msg, "t.yaml:5001:1: duplicate key \"k1234\" "
				    "(first defined at line 1235, column 1)"));
	aj_buf_release(&b);
}

static void keys_must_be_scalars(void **state)
{
	(void)state;
	assert_error("? [a, b]\n: c\n", "t.yaml:1:3: mapping keys must be scalars, not a list");
	assert_error("{? {a: 1} : c}\n", "mapping keys must be scalars, not a mapping");
	assert_error("a: &m {x: 1}\n*m : 2\n", "mapping keys must be scalars, alias *m is a mapping");
}

static void merge_keys_are_rejected(void **state)
{
	struct aj_node *doc;

	(void)state;
	assert_error("base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n",
		     "t.yaml:3:3: merge keys (<<) are not supported");
	/* A quoted "<<" is an ordinary key. */
	doc = aj_test_yaml("'<<': 1\n");
	assert_int_equal(aj_node_get(doc, "<<")->v.integer, 1);
	aj_node_free(doc);
}

static void one_document_only(void **state)
{
	(void)state;
	assert_error("a: 1\n---\nb: 2\n",
		     "t.yaml:2:1: more than one YAML document");
	assert_error("---\n...\n---\nx\n", "more than one YAML document");
}

static void empty_inputs_give_null(void **state)
{
	static const char *const inputs[] = {
		"", "\n\n", "# only a comment\n  # another\n", "---\n", "~\n", "null",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_node *n = (struct aj_node *)&err;

		assert_int_equal(aj_yaml_load(inputs[i], strlen(inputs[i]), "e.yaml", &n, &err), 0);
		assert_null(n);
		assert_true(aj_errors_empty(&err));
	}
}

static void syntax_errors_carry_positions(void **state)
{
	(void)state;
	assert_error("a: b: c\n", "t.yaml:1:5: invalid YAML: mapping values are not allowed");
	assert_error("a: [1, 2\nb: 3\n", "invalid YAML: did not find expected ',' or ']'");
	assert_error("a: 'open\n", "t.yaml:2:1: invalid YAML: found unexpected end of stream");
	assert_error("a:\n\tb: 1\n", "t.yaml:2:1: invalid YAML: found character that cannot start any token");
}

static void invalid_utf8_and_nul_are_rejected(void **state)
{
	const char *msg;

	(void)state;
	msg = load_error("a: ok\nb: \xff\n");
	assert_non_null(strstr(msg, "t.yaml:2:4: invalid YAML: invalid leading UTF-8 octet (byte 0xff)"));
	msg = load_error("a: \xc3\x28\n");
	assert_non_null(strstr(msg, "t.yaml:1:5: invalid YAML: invalid trailing UTF-8 octet (byte 0x28)"));
	msg = load_error_n("a: x\0y\n", 7);
	assert_non_null(strstr(msg, "t.yaml:1:5: invalid YAML: control characters are not allowed (byte 0x00)"));
	/* An escaped NUL is valid YAML but cannot live in a C string. */
	msg = load_error("a: 1\nb: \"x\\0y\"\n");
	assert_non_null(strstr(msg, "t.yaml:2:4: strings may not contain NUL (\\0) characters"));
}

static void anchors_and_aliases_expand_to_copies(void **state)
{
	struct aj_node *doc = aj_test_yaml(
		"defaults: &d {gpus: 8, tags: [a, b]}\n"
		"job: *d\n"
		"k: &key name\n"
		"*key : aliased key\n"
		"again: &d 1\n"
		"last: *d\n");
	struct aj_node *d, *job;

	(void)state;
	d = aj_node_get(doc, "defaults");
	job = aj_node_get(doc, "job");
	assert_true(aj_node_equal(d, job));
	assert_true(d != job && d->pairs[1].value != job->pairs[1].value);
	assert_string_equal(aj_node_get(doc, "name")->str, "aliased key");
	/* A redefined anchor refers to its latest definition. */
	assert_int_equal(aj_node_get(doc, "last")->v.integer, 1);
	aj_node_free(doc);
}

static void alias_errors(void **state)
{
	(void)state;
	assert_error("a: *nowhere\n", "t.yaml:1:4: unknown anchor *nowhere");
	assert_error("a: &x [1, *x]\n", "t.yaml:1:11: alias *x refers to a node that contains it");
}

static void alias_bomb_fails_early_and_small(void **state)
{
	static const char bomb[] =
		"a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
		"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
		"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
		"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
		"f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
		"g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
		"h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
		"i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
	const char *msg;
	long allocations;

	(void)state;
	aj_alloc_fail_after(-1);
	msg = load_error(bomb);
	allocations = aj_alloc_count();
	assert_non_null(strstr(msg, "document expands to more than 200000 nodes"));
	/* It stops near the cap, far from the 10^9 nodes the text describes. */
	assert_true(allocations < 3L * (long)AJ_YAML_MAX_NODES);
}

static void nesting_is_capped(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_node *doc;
	int i;

	(void)state;
	for (i = 0; i < AJ_YAML_MAX_DEPTH; i++)
		aj_buf_addch(&b, '[');
	for (i = 0; i < AJ_YAML_MAX_DEPTH; i++)
		aj_buf_addch(&b, ']');
	doc = aj_test_yaml(aj_buf_cstr(&b));
	aj_node_free(doc);
	aj_buf_reset(&b);
	for (i = 0; i <= AJ_YAML_MAX_DEPTH; i++)
		aj_buf_addch(&b, '[');
	for (i = 0; i <= AJ_YAML_MAX_DEPTH; i++)
		aj_buf_addch(&b, ']');
	assert_non_null(strstr(load_error(aj_buf_cstr(&b)),
			       "t.yaml:1:129: nesting deeper than 128 levels"));
	/* An alias cannot be used to build a deeper tree either. */
	aj_buf_reset(&b);
	aj_buf_addstr(&b, "a: &a ");
	for (i = 0; i < 100; i++)
		aj_buf_addch(&b, '[');
	for (i = 0; i < 100; i++)
		aj_buf_addch(&b, ']');
	aj_buf_addstr(&b, "\nb: ");
	for (i = 0; i < 40; i++)
		aj_buf_addch(&b, '[');
	aj_buf_addstr(&b, "*a");
	for (i = 0; i < 40; i++)
		aj_buf_addch(&b, ']');
	assert_non_null(strstr(load_error(aj_buf_cstr(&b)), "nesting deeper than 128 levels"));
	aj_buf_release(&b);
}

static void size_is_capped(void **state)
{
	size_t len = AJ_YAML_MAX_BYTES + 1;
	char *big = malloc(len);

	(void)state;
	assert_non_null(big);
	memset(big, ' ', len);
	assert_non_null(strstr(load_error_n(big, len), "t.yaml: file is larger than"));
	free(big);
}

static void load_survives_every_allocation_failure(void **state)
{
	static const char text[] =
		"base: [a, b]\n"
		"config:\n"
		"  x: &x {k: [1, 2.5, true, ~, 'q']}\n"
		"  &kk y: *x\n"
		"  z: *kk\n"
		"  w: |\n    block\n";
	struct aj_node *doc = NULL, *ref = aj_test_yaml(text);
	long n;

	(void)state;
	for (n = 0;; n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		int r;

		aj_alloc_fail_after(n);
		r = aj_yaml_load(text, strlen(text), "t.yaml", &doc, &err);
		aj_alloc_fail_after(-1);
		if (!r) {
			assert_true(aj_errors_empty(&err));
			break;
		}
		assert_true(aj_test_errors_contain(&err, "out of memory"));
		aj_errors_release(&err);
		assert_true(n < 10000);
	}
	assert_true(n > 20);
	assert_true(aj_node_equal(doc, ref));
	assert_string_equal(aj_node_at(doc, "config.z")->str, "y");
	aj_node_free(doc);
	aj_node_free(ref);
}

/* ---- emitting ---- */

static char *emit_text(const cJSON *v)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);

	if (aj_yaml_emit(v, &b, &err))
		fail_msg("emit failed: %s", aj_test_errors_text(&err));
	aj_errors_release(&err);
	return aj_buf_detach(&b, NULL);
}

static void emit_is_block_style_and_quotes_what_would_change(void **state)
{
	struct aj_node *doc = aj_test_yaml(
		"name: train\n"
		"flags: {a: 'true', b: '1', c: '8+', d: '', e: '~', f: yes}\n"
		"cmd: [python train.py, --lr=3, 'a: b', '- x']\n"
		"script: \"set -e\\nrun\\n\"\n"
		"n: [1, -2, 2.5, true, null]\n"
		"empty: {}\n"
		"none: []\n");
	cJSON *j = aj_node_to_cjson(doc);
	char *text = emit_text(j);

	(void)state;
	assert_string_equal(text,
		"name: train\n"
		"flags:\n"
		"  a: 'true'\n"
		"  b: '1'\n"
		"  c: '8+'\n"
		"  d: ''\n"
		"  e: '~'\n"
		"  f: 'yes'\n"
		"cmd:\n"
		"- python train.py\n"
		"- --lr=3\n"
		"- 'a: b'\n"
		"- '- x'\n"
		"script: |\n"
		"  set -e\n"
		"  run\n"
		"'n':\n"
		"- 1\n"
		"- -2\n"
		"- 2.5\n"
		"- true\n"
		"- null\n"
		"empty: {}\n"
		"none: []\n");
	aj_free(text);
	cJSON_Delete(j);
	aj_node_free(doc);
}

static void emit_round_trips_tricky_strings(void **state)
{
	static const char *const corpus[] = {
		"", "true", "True", "FALSE", "1", "-1", "+1", "1.5", ".5", "1e3", "8+",
		"0x1F", "0o17", "~", "null", "Null", "a: b", "- x", "-", "?", ":",
		"#comment", "a #b", "[x]", "{x}", "*alias", "&anchor", "!tag", "%dir",
		"@at", "`tick", "'single'", "\"double\"", "<<", "=", "yes", "off",
		"  lead", "trail  ", " both ", "\ttab", "tab\tin", "ünïcödé €",
		"日本語", "emoji \xf0\x9f\x9a\x80", "line1\nline2", "x\n", "end\n\n",
		"\nlead newline", "  indented\nnext", "trail \nspace", "\r\n",
		"back\\slash", "bell\x07", "del\x7f", "nbsp\xc2\xa0", "sep\xe2\x80\xa8x",
		"nel\xc2\x85x", "bom\xef\xbb\xbf", "2001-12-14", "12:30:45",
		"1_000", "0777", ".inf", "-.inf", ".nan", "---", "...", "--- x",
		"a\n---\nb", "very long string that goes on and on past any line width "
		"limit an emitter might fold at, and keeps going for a while longer",
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		struct aj_node *back = NULL;
		struct aj_errors err = AJ_ERRORS_INIT;
		cJSON *m = cJSON_CreateObject();
		char *text;

		/* Each string as a value, as a key and as a list item. */
		cJSON_AddStringToObject(m, "v", corpus[i]);
		cJSON_AddStringToObject(m, corpus[i], "key");
		cJSON_AddItemToObject(m, "l", cJSON_CreateStringArray(&corpus[i], 1));
		text = emit_text(m);
		if (aj_yaml_load(text, strlen(text), "rt.yaml", &back, &err))
			fail_msg("corpus %zu did not re-read: %s\n%s", i,
				 aj_test_errors_text(&err), text);
		if (!back || aj_node_get(back, "v")->type != AJ_NODE_STRING ||
		    strcmp(aj_node_get(back, "v")->str, corpus[i]) ||
		    !aj_node_get(back, corpus[i]) ||
		    strcmp(aj_node_at(back, "l")->items[0]->str, corpus[i]))
			fail_msg("corpus %zu changed on the round trip:\n%s", i, text);
		aj_free(text);
		aj_node_free(back);
		cJSON_Delete(m);
	}
}

static void emit_round_trips_a_tree(void **state)
{
	static const char text[] =
		"config:\n"
		"  target: {service: volcano, gpus_per_node: 8, memory: 512Gi, rdma: true}\n"
		"  jobs:\n"
		"  - name: train\n"
		"    sku: '{nodes}xG{processes}'\n"
		"    command: [python -m x, 'echo \"$A\"', \"multi\\nline\"]\n"
		"    tags: []\n"
		"    env: {A: '1', B: ~, C: -7, D: 0.25, E: 1e-7, F: 9007199254740993}\n"
		"  nested: [[1, [2, {x: [3]}]], {}]\n";
	struct aj_node *doc = aj_test_yaml(text), *back = NULL;
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *j = aj_node_to_cjson(doc);
	char *out = emit_text(j);

	(void)state;
	assert_int_equal(aj_yaml_load(out, strlen(out), "rt.yaml", &back, &err), 0);
	if (!aj_node_equal(doc, back))
		fail_msg("tree changed on the round trip:\n%s", out);
	aj_free(out);
	aj_node_free(back);
	cJSON_Delete(j);
	aj_node_free(doc);
}

static void emit_scalars_and_special_numbers(void **state)
{
	cJSON *a = cJSON_CreateArray();
	char *text;

	(void)state;
	cJSON_AddItemToArray(a, cJSON_CreateNumber(NAN));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(-INFINITY));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(0.1));
	cJSON_AddItemToArray(a, cJSON_CreateNumber(1e20));
	cJSON_AddItemToArray(a, cJSON_CreateRaw("123456789012345678901"));
	cJSON_AddItemToArray(a, cJSON_CreateRaw("not a number"));
	text = emit_text(a);
	assert_string_equal(text, "- .nan\n- -.inf\n- 0.1\n- 1e+20\n"
			    "- 123456789012345678901\n- not a number\n");
	aj_free(text);
	cJSON_Delete(a);
	a = cJSON_CreateString("true");
	text = emit_text(a);
	assert_string_equal(text, "'true'\n");
	aj_free(text);
	cJSON_Delete(a);
}

static void emit_rejects_bad_input(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *bad = cJSON_CreateString("bad \xff utf8");
	cJSON *deep = cJSON_CreateArray(), *cur = deep;
	int i;

	(void)state;
	assert_int_equal(aj_yaml_emit(bad, &b, &err), -1);
	assert_true(aj_test_errors_contain(&err, "cannot write YAML: a string is not valid UTF-8"));
	assert_int_equal(b.len, 0);
	aj_errors_release(&err);
	/* Overlong, surrogate, past U+10FFFF, truncated. */
	for (i = 0; i < 4; i++) {
		static const char *const bytes[] = {
			"\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ok \xe2\x82",
		};
		cJSON *s = cJSON_CreateString(bytes[i]);

		assert_int_equal(aj_yaml_emit(s, &b, &err), -1);
		assert_true(aj_test_errors_contain(&err, "a string is not valid UTF-8"));
		aj_errors_release(&err);
		cJSON_Delete(s);
	}
	for (i = 0; i < AJ_YAML_MAX_DEPTH; i++) {
		cJSON *next = cJSON_CreateArray();

		cJSON_AddItemToArray(cur, next);
		cur = next;
	}
	assert_int_equal(aj_yaml_emit(deep, &b, &err), -1);
	assert_true(aj_test_errors_contain(&err, "nesting deeper than 128 levels"));
	aj_errors_release(&err);
	/* Output that passes the buffer's limit fails without partial text. */
	aj_buf_release(&b);
	aj_buf_init(&b, 4);
	assert_int_equal(aj_yaml_emit(bad, &b, &err), -1);
	aj_errors_release(&err);
	cJSON_Delete(bad);
	bad = cJSON_CreateString("longer than four");
	assert_int_equal(aj_yaml_emit(bad, &b, &err), -1);
	assert_true(aj_test_errors_contain(&err, "output too large"));
	aj_errors_release(&err);
	aj_buf_release(&b);
	cJSON_Delete(bad);
	cJSON_Delete(deep);
}

static void emit_survives_every_allocation_failure(void **state)
{
	struct aj_node *doc = aj_test_yaml("a: [1, {b: 'true', c: \"x\\ny\"}]\nd: 2.5\n");
	cJSON *j = aj_node_to_cjson(doc);
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	long n;

	(void)state;
	for (n = 0;; n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		int r;

		aj_alloc_fail_after(n);
		r = aj_yaml_emit(j, &b, &err);
		aj_alloc_fail_after(-1);
		if (!r)
			break;
		assert_false(aj_errors_empty(&err));
		aj_errors_release(&err);
		aj_buf_release(&b);
		aj_buf_init(&b, AJ_BUF_SMALL);
		assert_true(n < 1000);
	}
	assert_true(n > 0);
	assert_string_equal(aj_buf_cstr(&b), "a:\n- 1\n- b: 'true'\n  c: |-\n    x\n    y\nd: 2.5\n");
	aj_buf_release(&b);
	cJSON_Delete(j);
	aj_node_free(doc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(emit_is_block_style_and_quotes_what_would_change),
		cmocka_unit_test(emit_round_trips_tricky_strings),
		cmocka_unit_test(emit_round_trips_a_tree),
		cmocka_unit_test(emit_scalars_and_special_numbers),
		cmocka_unit_test(emit_rejects_bad_input),
		cmocka_unit_test(emit_survives_every_allocation_failure),
		cmocka_unit_test(plain_scalars_follow_the_core_schema),
		cmocka_unit_test(nan_and_text_kept),
		cmocka_unit_test(quoted_and_block_scalars_are_strings),
		cmocka_unit_test(keys_keep_order_and_positions),
		cmocka_unit_test(columns_count_characters),
		cmocka_unit_test(explicit_tags),
		cmocka_unit_test(bad_tags_are_rejected),
		cmocka_unit_test(out_of_range_numbers_are_errors),
		cmocka_unit_test(duplicate_keys_name_both_positions),
		cmocka_unit_test(large_mappings_detect_duplicates),
		cmocka_unit_test(keys_must_be_scalars),
		cmocka_unit_test(merge_keys_are_rejected),
		cmocka_unit_test(one_document_only),
		cmocka_unit_test(empty_inputs_give_null),
		cmocka_unit_test(syntax_errors_carry_positions),
		cmocka_unit_test(invalid_utf8_and_nul_are_rejected),
		cmocka_unit_test(anchors_and_aliases_expand_to_copies),
		cmocka_unit_test(alias_errors),
		cmocka_unit_test(alias_bomb_fails_early_and_small),
		cmocka_unit_test(nesting_is_capped),
		cmocka_unit_test(size_is_capped),
		cmocka_unit_test(load_survives_every_allocation_failure),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
