#include "support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"

static char *print(const cJSON *v)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	assert_int_equal(aj_json_print(v, &b), 0);
	return aj_buf_detach(&b, NULL);
}

static void tree_to_cjson_keeps_types_and_order(void **state)
{
	struct aj_node *doc = aj_test_yaml(
		"z: 1\na: [true, null, 2.5, -7, 'x\"y']\nm: {}\n"
		"big: 9223372036854775807\nneg: -1000000000000000\nedge: 999999999999999\n");
	cJSON *j = aj_node_to_cjson(doc);
	char *text = print(j);

	(void)state;
	assert_string_equal(text,
		"{\n"
		"  \"z\": 1,\n"
		"  \"a\": [true, null, 2.5, -7, \"x\\\"y\"],\n"
		"  \"m\": {},\n"
		"  \"big\": 9223372036854775807,\n"
		"  \"neg\": -1000000000000000,\n"
		"  \"edge\": 999999999999999\n"
		"}\n");
	aj_free(text);
	/* two spaces per level, as kubectl prints; a tab inside a string stays \t */
	text = print(cJSON_GetObjectItem(j, "z"));
	assert_string_equal(text, "1\n");
	aj_free(text);
	{
		cJSON *o = cJSON_Parse("{\"a\": {\"b\": [{\"c\": \"x\\ty\"}], \"e\": {}}}");

		text = print(o);
		assert_string_equal(text, "{\n  \"a\": {\n    \"b\": [{\n        \"c\": \"x\\ty\"\n"
				    "      }],\n    \"e\": {}\n  }\n}\n");
		cJSON_Delete(o);
	}
	assert_true(cJSON_IsRaw(cJSON_GetObjectItem(j, "big")));
	assert_true(cJSON_IsNumber(cJSON_GetObjectItem(j, "edge")));
	aj_free(text);
	cJSON_Delete(j);
	aj_node_free(doc);
	j = aj_node_to_cjson(NULL);
	assert_true(cJSON_IsNull(j));
	cJSON_Delete(j);
}

static void cjson_to_tree_types(void **state)
{
	static const char text[] =
		"{\"i\": 42, \"f\": 0.5, \"e\": 1e300, \"t\": true, \"n\": null, "
		"\"s\": \"caf\\u00e9\", \"l\": [1, [2]], \"o\": {\"k\": \"v\"}, \"neg\": -3}";
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *j = NULL;
	struct aj_node *n = NULL, *want;

	(void)state;
	assert_int_equal(aj_json_parse(text, strlen(text), "AjJob ns/a", &j, &err), 0);
	assert_int_equal(aj_node_from_cjson(j, "AjJob ns/a", &n, &err), 0);
	want = aj_test_yaml("{i: 42, f: 0.5, e: 1.0e+300, t: true, n: null, s: café, "
			    "l: [1, [2]], o: {k: v}, neg: -3}");
	assert_true(aj_node_equal(n, want));
	assert_int_equal(aj_node_get(n, "i")->type, AJ_NODE_INT);
	assert_int_equal(aj_node_get(n, "f")->type, AJ_NODE_FLOAT);
	assert_string_equal(aj_node_at(n, "o.k")->pos.file->name, "AjJob ns/a");
	assert_int_equal(aj_node_at(n, "o.k")->pos.line, 0);
	aj_node_free(n);
	aj_node_free(want);
	cJSON_Delete(j);
	/* A bare null is a null node. */
	j = cJSON_CreateNull();
	assert_int_equal(aj_node_from_cjson(j, "x", &n, &err), 0);
	assert_int_equal(n->type, AJ_NODE_NULL);
	aj_node_free(n);
	cJSON_Delete(j);
}

static void big_integers_survive_both_ways(void **state)
{
	struct aj_node *doc = aj_test_yaml("[9223372036854775807, -9223372036854775808, 1.5e300]");
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *back = NULL;
	cJSON *j = aj_node_to_cjson(doc);

	(void)state;
	assert_int_equal(aj_node_from_cjson(j, "rt", &back, &err), 0);
	assert_true(aj_node_equal(doc, back));
	assert_int_equal(back->items[0]->v.integer, 9223372036854775807LL);
	aj_node_free(back);
	cJSON_Delete(j);
	aj_node_free(doc);
	/* A raw number too large for 64 bits becomes a float; junk is refused. */
	j = cJSON_CreateRaw("123456789012345678901234");
	assert_int_equal(aj_node_from_cjson(j, "rt", &back, &err), 0);
	assert_int_equal(back->type, AJ_NODE_FLOAT);
	assert_true(back->v.number == 123456789012345678901234.0);
	aj_node_free(back);
	cJSON_Delete(j);
	j = cJSON_CreateRaw("{oops");
	assert_int_equal(aj_node_from_cjson(j, "obj", &back, &err), -1);
	assert_true(aj_test_errors_contain(&err, "obj: unsupported raw JSON value {oops"));
	aj_errors_release(&err);
	cJSON_Delete(j);
}

static void cjson_to_tree_rejects(void **state)
{
	static const char dup[] = "{\"a\": 1, \"b\": 2, \"a\": 3}";
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *n = NULL;
	cJSON *j = NULL, *cur;
	int i;

	(void)state;
	assert_int_equal(aj_json_parse(dup, strlen(dup), "obj", &j, &err), 0);
	assert_int_equal(aj_node_from_cjson(j, "AjTemplate ns/t", &n, &err), -1);
	assert_true(aj_test_errors_contain(&err, "AjTemplate ns/t: duplicate key \"a\""));
	aj_errors_release(&err);
	cJSON_Delete(j);
	j = cJSON_CreateArray();
	for (cur = j, i = 0; i < AJ_JSON_MAX_DEPTH; i++) {
		cJSON *next = cJSON_CreateArray();

		cJSON_AddItemToArray(cur, next);
		cur = next;
	}
	assert_int_equal(aj_node_from_cjson(j, "deep", &n, &err), -1);
	assert_true(aj_test_errors_contain(&err, "deep: nesting deeper than 128 levels"));
	aj_errors_release(&err);
	cJSON_Delete(j);
}

static void parse_errors_name_origin_and_position(void **state)
{
	static const char bad[] = "{\n  \"a\": 1,\n  \"b\": tru\n}";
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf deep = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *j = NULL;
	int i;

	(void)state;
	assert_int_equal(aj_json_parse(bad, strlen(bad), "response", &j, &err), -1);
	assert_null(j);
	assert_true(aj_test_errors_contain(&err, "response:3:8: invalid JSON"));
	aj_errors_release(&err);
	assert_int_equal(aj_json_parse("", 0, "empty", &j, &err), -1);
	assert_true(aj_test_errors_contain(&err, "empty:1:1: invalid JSON"));
	aj_errors_release(&err);
	/* Exactly the cap parses; one more level does not. */
	for (i = 0; i < AJ_JSON_MAX_DEPTH; i++)
		aj_buf_addch(&deep, '[');
	for (i = 0; i < AJ_JSON_MAX_DEPTH; i++)
		aj_buf_addch(&deep, ']');
	assert_int_equal(aj_json_parse(deep.buf, deep.len, "d", &j, &err), 0);
	cJSON_Delete(j);
	aj_buf_reset(&deep);
	for (i = 0; i <= AJ_JSON_MAX_DEPTH; i++)
		aj_buf_addch(&deep, '[');
	for (i = 0; i <= AJ_JSON_MAX_DEPTH; i++)
		aj_buf_addch(&deep, ']');
	assert_int_equal(aj_json_parse(deep.buf, deep.len, "d", &j, &err), -1);
	assert_true(aj_test_errors_contain(&err, "d: JSON nesting deeper than 128 levels"));
	aj_errors_release(&err);
	aj_buf_release(&deep);
}

static void parse_size_is_capped(void **state)
{
	size_t len = AJ_JSON_MAX_BYTES + 1;
	char *big = malloc(len);
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *j = NULL;

	(void)state;
	assert_non_null(big);
	memset(big, ' ', len);
	assert_int_equal(aj_json_parse(big, len, "huge", &j, &err), -1);
	assert_true(aj_test_errors_contain(&err, "huge: JSON text is larger than"));
	aj_errors_release(&err);
	free(big);
}

static void conversions_survive_every_allocation_failure(void **state)
{
	static const char text[] = "{\"a\": [1, 2.5, \"s\", {\"b\": null}], \"c\": true}";
	struct aj_node *want = aj_test_yaml("{a: [1, 2.5, s, {b: null}], c: true}");
	long n;

	(void)state;
	for (n = 0;; n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_node *tree = NULL;
		cJSON *j = NULL, *back;
		int r;

		aj_alloc_fail_after(n);
		r = aj_json_parse(text, strlen(text), "t", &j, &err);
		if (!r) {
			r = aj_node_from_cjson(j, "t", &tree, &err);
			cJSON_Delete(j);
		}
		back = r ? NULL : aj_node_to_cjson(tree);
		aj_alloc_fail_after(-1);
		if (!r && back) {
			assert_true(aj_node_equal(tree, want));
			assert_true(aj_errors_empty(&err));
			cJSON_Delete(back);
			aj_node_free(tree);
			break;
		}
		if (r)
			assert_true(aj_test_errors_contain(&err, "out of memory"));
		aj_node_free(tree);
		aj_errors_release(&err);
		assert_true(n < 10000);
	}
	assert_true(n > 10);
	aj_node_free(want);
}

/* "[[[...0...]]]" nested depth levels inside {"items": [<that>, {"name": "ok"}]}. */
static char *deep_list(size_t depth)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);
	size_t i;

	aj_buf_addstr(&b, "{\"items\": [{\"name\": \"deep\", \"x\": \"[{\\\"\", \"v\": ");
	for (i = 0; i < depth; i++)
		aj_buf_addstr(&b, i % 2 ? "[" : "{\"k\": ");
	aj_buf_addch(&b, '0');
	for (i = depth; i-- > 0;)
		aj_buf_addch(&b, i % 2 ? ']' : '}');
	aj_buf_addstr(&b, "}, {\"name\": \"ok\"}]}\n");
	assert_false(b.failed);
	return aj_buf_detach(&b, NULL);
}

/*
 * Issue: an AjJob nested ~1000 deep made the whole list page undecodable
 * (cJSON stops at 1000) and stalled the namespace. The page decodes; the
 * deep item is cut far below the conversion cap, so it still fails alone.
 */
static void lenient_parse_keeps_the_page(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *n = NULL;
	char *text = deep_list(10000);
	cJSON *v, *items;
	int trailing = 1;

	(void)state;
	assert_null(cJSON_Parse(text));                 /* what cJSON alone does */
	v = aj_json_parse_lenient(text, strlen(text), &trailing);
	assert_non_null(v);
	assert_false(trailing);
	items = cJSON_GetObjectItem(v, "items");
	assert_int_equal(cJSON_GetArraySize(items), 2);
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "name")->valuestring, "deep");
	/* a string holding brackets and an escaped quote is not nesting */
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 0), "x")->valuestring, "[{\"");
	assert_string_equal(cJSON_GetObjectItem(cJSON_GetArrayItem(items, 1), "name")->valuestring, "ok");
	assert_int_equal(aj_node_from_cjson(cJSON_GetArrayItem(items, 0), "AjJob ns/deep", &n, &err), -1);
	assert_true(aj_test_errors_contain(&err, "nesting deeper than 128 levels"));
	assert_int_equal(aj_node_from_cjson(cJSON_GetArrayItem(items, 1), "AjJob ns/ok", &n, &err), 0);
	aj_node_free(n);
	cJSON_Delete(v);
	free(text);

	/* within cJSON's reach nothing is cut */
	text = deep_list(900);
	v = aj_json_parse_lenient(text, strlen(text), &trailing);
	assert_non_null(v);
	cJSON_Delete(v);
	free(text);

	assert_null(aj_json_parse_lenient("{\"a\": [}", 8, &trailing));
	assert_null(aj_json_parse_lenient("]", 1, &trailing));
	v = aj_json_parse_lenient("{} x", 4, &trailing);
	assert_non_null(v);
	assert_true(trailing);
	cJSON_Delete(v);
	aj_errors_release(&err);
}

/* One value of text, parsed both ways and converted: the error of the conversion. */
static void nul_refused(const char *text, const char *fragment)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *n = NULL;
	cJSON *j = NULL;
	int trailing = 1;

	assert_int_equal(aj_json_parse(text, strlen(text), "obj", &j, &err), 0);
	assert_int_equal(aj_node_from_cjson(j, "AjJob ns/a", &n, &err), -1);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got: %s", fragment, aj_test_errors_text(&err));
	assert_null(n);
	aj_errors_release(&err);
	cJSON_Delete(j);
	/* the same through the list/watch parser */
	j = aj_json_parse_lenient(text, strlen(text), &trailing);
	assert_non_null(j);
	assert_int_equal(trailing, 0);
	assert_int_equal(aj_node_from_cjson(j, "AjJob ns/a", &n, &err), -1);
	assert_true(aj_test_errors_contain(&err, fragment));
	aj_errors_release(&err);
	cJSON_Delete(j);
}

static void a_nul_escape_is_refused_with_its_key_path(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *n = NULL;
	cJSON *j = NULL;
	static const char ok[] = "{\"a\": \"back\\\\u0000slash\", \"b\": \"\\u0001\"}";

	(void)state;
	nul_refused("{\"spec\": {\"command\": [\"python\", \"x.py\", \"a\\u0000b\"]}}",
		    "AjJob ns/a: spec.command[2]: the string holds a NUL character (\\u0000), "
		    "which aj cannot pass on: remove it");
	nul_refused("{\"spec\": {\"template\": {\"config\": {\"k\\u0000ey\": 1}}}}",
		    "AjJob ns/a: spec.template.config: a member name holds a NUL character");
	nul_refused("[\"\\u0000\"]", "AjJob ns/a: [0]: the string holds a NUL");
	/* An escaped backslash before u0000 is text, and other control escapes stay. */
	assert_int_equal(aj_json_parse(ok, strlen(ok), "obj", &j, &err), 0);
	assert_int_equal(aj_node_from_cjson(j, "AjJob ns/a", &n, &err), 0);
	assert_string_equal(aj_node_get(n, "a")->str, "back\\u0000slash");
	assert_string_equal(aj_node_get(n, "b")->str, "\x01");
	aj_node_free(n);
	cJSON_Delete(j);
	aj_errors_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tree_to_cjson_keeps_types_and_order),
		cmocka_unit_test(cjson_to_tree_types),
		cmocka_unit_test(big_integers_survive_both_ways),
		cmocka_unit_test(cjson_to_tree_rejects),
		cmocka_unit_test(parse_errors_name_origin_and_position),
		cmocka_unit_test(parse_size_is_capped),
		cmocka_unit_test(lenient_parse_keeps_the_page),
		cmocka_unit_test(conversions_survive_every_allocation_failure),
		cmocka_unit_test(a_nul_escape_is_refused_with_its_key_path),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
