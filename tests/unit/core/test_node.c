#include "support.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"

static struct aj_node *str_node(const char *s)
{
	return aj_node_new_string(s, strlen(s), NULL);
}

static void set_keeps_order_and_replaces_in_place(void **state)
{
	struct aj_node *m = aj_node_new(AJ_NODE_MAP, NULL);

	(void)state;
	assert_int_equal(aj_node_set(m, "b", 1, aj_node_new_int(1, NULL), NULL), 0);
	assert_int_equal(aj_node_set(m, "a", 1, aj_node_new_int(2, NULL), NULL), 0);
	assert_int_equal(aj_node_set(m, "c", 1, aj_node_new_int(3, NULL), NULL), 0);
	assert_int_equal(aj_node_set(m, "a", 1, str_node("two"), NULL), 0);
	assert_int_equal(m->nr, 3);
	assert_string_equal(m->pairs[0].key, "b");
	assert_string_equal(m->pairs[1].key, "a");
	assert_string_equal(m->pairs[2].key, "c");
	assert_int_equal(aj_node_get(m, "a")->type, AJ_NODE_STRING);
	assert_string_equal(aj_node_get(m, "a")->str, "two");
	assert_null(aj_node_get(m, "zz"));
	assert_int_equal(aj_node_remove(m, "b"), 1);
	assert_int_equal(aj_node_remove(m, "b"), 0);
	assert_int_equal(m->nr, 2);
	assert_string_equal(m->pairs[0].key, "a");
	assert_string_equal(m->pairs[1].key, "c");
	aj_node_free(m);
}

static void dotted_lookup(void **state)
{
	struct aj_node *t = aj_test_yaml("target:\n  name: gpu01\n  opts: {a: 1}\n");

	(void)state;
	assert_string_equal(aj_node_at(t, "target.name")->str, "gpu01");
	assert_int_equal(aj_node_at(t, "target.opts.a")->v.integer, 1);
	assert_null(aj_node_at(t, "target.name.x"));
	assert_null(aj_node_at(t, "target.missing"));
	assert_null(aj_node_at(t, "nope"));
	aj_node_free(t);
}

static void typed_constructors_print_their_value(void **state)
{
	struct aj_node *i = aj_node_new_int(-42, NULL);
	struct aj_node *b = aj_node_new_bool(7, NULL);
	struct aj_node *f = aj_node_new_float(1.5, NULL);
	struct aj_node *inf = aj_node_new_float(-INFINITY, NULL);
	struct aj_node *n = aj_node_new(AJ_NODE_NULL, NULL);

	(void)state;
	assert_string_equal(i->str, "-42");
	assert_int_equal(i->v.integer, -42);
	assert_string_equal(b->str, "true");
	assert_int_equal(b->v.boolean, 1);
	assert_string_equal(f->str, "1.5");
	assert_string_equal(inf->str, "-.inf");
	assert_null(n->str);
	assert_true(aj_node_is_scalar(n));
	aj_node_free(i);
	aj_node_free(b);
	aj_node_free(f);
	aj_node_free(inf);
	aj_node_free(n);
}

static void copy_is_deep_and_keeps_positions(void **state)
{
	struct aj_node *t = aj_test_yaml("a:\n  - x\n  - {y: 2}\nb: true\n");
	struct aj_node *c = aj_node_copy(t);
	struct aj_node *y;

	(void)state;
	assert_true(aj_node_equal(t, c));
	y = aj_node_at(c, "a")->items[1];
	assert_string_equal(y->pairs[0].key, "y");
	assert_int_equal(y->pairs[0].keypos.line, 3);
	assert_int_equal(y->pairs[0].keypos.column, 6);
	assert_string_equal(y->pos.file->name, "test.yaml");
	/* The copy shares no node: changing it leaves the original alone. */
	assert_int_equal(aj_node_set(y, "y", 1, aj_node_new_int(3, NULL), NULL), 0);
	assert_false(aj_node_equal(t, c));
	assert_int_equal(aj_node_at(t, "a")->items[1]->pairs[0].value->v.integer, 2);
	/* Both trees share the one file name. */
	assert_true(y->pos.file == aj_node_at(t, "b")->pos.file);
	aj_node_free(t);
	assert_string_equal(y->pos.file->name, "test.yaml");
	aj_node_free(c);
}

static void equality_is_structural_and_ordered(void **state)
{
	struct aj_node *a = aj_test_yaml("{x: 1, y: [a, 2.0]}");
	struct aj_node *b = aj_test_yaml("\n\n{x: 1,\n y: [a, 2.0]}");
	struct aj_node *c = aj_test_yaml("{y: [a, 2.0], x: 1}");
	struct aj_node *d = aj_test_yaml("{x: 1, y: [a, 2]}");
	struct aj_node *e = aj_test_yaml("{x: '1', y: [a, 2.0]}");
	struct aj_node *n1 = aj_test_yaml("[.nan]");
	struct aj_node *n2 = aj_test_yaml("[.NaN]");

	(void)state;
	assert_true(aj_node_equal(a, b));
	assert_false(aj_node_equal(a, c));
	assert_false(aj_node_equal(a, d));
	assert_false(aj_node_equal(a, e));
	assert_true(aj_node_equal(n1, n2));
	assert_true(aj_node_equal(NULL, NULL));
	assert_false(aj_node_equal(a, NULL));
	aj_node_free(a);
	aj_node_free(b);
	aj_node_free(c);
	aj_node_free(d);
	aj_node_free(e);
	aj_node_free(n1);
	aj_node_free(n2);
}

static void type_names_for_messages(void **state)
{
	(void)state;
	assert_string_equal(aj_node_type_name(AJ_NODE_NULL), "null");
	assert_string_equal(aj_node_type_name(AJ_NODE_BOOL), "boolean");
	assert_string_equal(aj_node_type_name(AJ_NODE_INT), "integer");
	assert_string_equal(aj_node_type_name(AJ_NODE_FLOAT), "float");
	assert_string_equal(aj_node_type_name(AJ_NODE_STRING), "string");
	assert_string_equal(aj_node_type_name(AJ_NODE_SEQ), "list");
	assert_string_equal(aj_node_type_name(AJ_NODE_MAP), "mapping");
}

static void where_points_at_the_node(void **state)
{
	struct aj_node *t = aj_test_yaml("target:\n  gpus: eight\n");
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_where w;

	(void)state;
	aj_node_where(aj_node_at(t, "target.gpus"), "config.target.gpus", &w);
	aj_errors_add(&err, &w, "expected integer");
	assert_true(aj_test_errors_contain(&err,
		"test.yaml:2:9: config.target.gpus: expected integer"));
	aj_node_where(NULL, "x", &w);
	assert_null(w.file);
	assert_int_equal(w.line, 0);
	aj_errors_release(&err);
	aj_node_free(t);
}

static void containers_take_ownership_on_failure(void **state)
{
	struct aj_node *seq = aj_node_new(AJ_NODE_SEQ, NULL);
	struct aj_node *map = aj_node_new(AJ_NODE_MAP, NULL);
	struct aj_node *item = str_node("x"), *value = str_node("y");

	(void)state;
	aj_alloc_fail_after(0);
	assert_int_equal(aj_node_append(seq, item), -1);
	assert_int_equal(aj_node_set(map, "k", 1, value, NULL), -1);
	assert_null(aj_node_new_int(1, NULL));
	assert_int_equal(aj_node_append(seq, NULL), -1);
	aj_alloc_fail_after(-1);
	/* Wrong container types also free what they were given. */
	assert_int_equal(aj_node_append(map, str_node("z")), -1);
	assert_int_equal(aj_node_set(seq, "k", 1, str_node("z"), NULL), -1);
	assert_int_equal(seq->nr, 0);
	assert_int_equal(map->nr, 0);
	aj_node_free(seq);
	aj_node_free(map);
}

static void copy_survives_every_allocation_failure(void **state)
{
	struct aj_node *t = aj_test_yaml("a: [1, {b: c, d: [e, 2.5]}]\nf: null\ng: ''\n");
	struct aj_node *c = NULL;
	long n;

	(void)state;
	for (n = 0;; n++) {
		aj_alloc_fail_after(n);
		c = aj_node_copy(t);
		aj_alloc_fail_after(-1);
		if (c)
			break;
		assert_true(n < 1000);
	}
	assert_true(n > 10);
	assert_true(aj_node_equal(t, c));
	aj_node_free(c);
	aj_node_free(t);
}

static void add_appends_without_lookup(void **state)
{
	struct aj_node *m = aj_node_new(AJ_NODE_MAP, NULL);
	size_t first = 99, again = 99;

	(void)state;
	assert_int_equal(aj_node_add(m, "a", 1, aj_node_new_int(1, NULL), NULL), 0);
	assert_int_equal(aj_node_add(m, "b", 1, aj_node_new_int(2, NULL), NULL), 0);
	assert_int_equal(aj_node_find_duplicate(m, &first, &again), 0);
	assert_int_equal(aj_node_add(m, "a", 1, aj_node_new_int(3, NULL), NULL), 0);
	assert_int_equal(m->nr, 3);
	assert_int_equal(aj_node_find_duplicate(m, &first, &again), 1);
	assert_int_equal(first, 0);
	assert_int_equal(again, 2);
	/* Not a mapping: the value is freed. */
	assert_int_equal(aj_node_add(m->pairs[0].value, "x", 1, str_node("v"), NULL), -1);
	aj_node_free(m);
}

static void duplicates_in_large_mappings(void **state)
{
	struct aj_node *m = aj_node_new(AJ_NODE_MAP, NULL);
	size_t first = 0, again = 0;
	char key[16];
	int i;

	(void)state;
	for (i = 0; i < 1000; i++) {
		int len = snprintf(key, sizeof(key), "k%d", i);

		assert_int_equal(aj_node_add(m, key, (size_t)len, aj_node_new_int(i, NULL), NULL), 0);
	}
	assert_int_equal(aj_node_find_duplicate(m, &first, &again), 0);
	/* Two repeats: the one whose second occurrence comes first wins. */
	assert_int_equal(aj_node_add(m, "k700", 4, aj_node_new_int(0, NULL), NULL), 0);
	assert_int_equal(aj_node_add(m, "k3", 2, aj_node_new_int(0, NULL), NULL), 0);
	assert_int_equal(aj_node_find_duplicate(m, &first, &again), 1);
	assert_int_equal(first, 700);
	assert_int_equal(again, 1000);
	aj_alloc_fail_after(0);
	assert_int_equal(aj_node_find_duplicate(m, &first, &again), -1);
	aj_alloc_fail_after(-1);
	aj_node_free(m);
}

static void key_index_finds_keys(void **state)
{
	struct aj_node *small = aj_test_yaml("{a: 1, b: 2}");
	struct aj_node *big = aj_node_new(AJ_NODE_MAP, NULL);
	struct aj_keyindex ix;
	char key[16];
	int i;

	(void)state;
	for (i = 0; i < 500; i++) {
		int len = snprintf(key, sizeof(key), "key%d", i);

		assert_int_equal(aj_node_add(big, key, (size_t)len, aj_node_new_int(i, NULL), NULL), 0);
	}
	assert_int_equal(aj_keyindex_init(&ix, small), 0);
	assert_int_equal(aj_keyindex_find(&ix, "b", 1)->value->v.integer, 2);
	assert_null(aj_keyindex_find(&ix, "c", 1));
	aj_keyindex_release(&ix);
	assert_int_equal(aj_keyindex_init(&ix, big), 0);
	assert_non_null(ix.slots);
	for (i = 0; i < 500; i++) {
		int len = snprintf(key, sizeof(key), "key%d", i);

		assert_int_equal(aj_keyindex_find(&ix, key, (size_t)len)->value->v.integer, i);
	}
	assert_null(aj_keyindex_find(&ix, "key500", 6));
	assert_null(aj_keyindex_find(&ix, "key1", 3));
	aj_keyindex_release(&ix);
	aj_alloc_fail_after(0);
	assert_int_equal(aj_keyindex_init(&ix, big), -1);
	aj_alloc_fail_after(-1);
	aj_node_free(small);
	aj_node_free(big);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(set_keeps_order_and_replaces_in_place),
		cmocka_unit_test(dotted_lookup),
		cmocka_unit_test(typed_constructors_print_their_value),
		cmocka_unit_test(copy_is_deep_and_keeps_positions),
		cmocka_unit_test(equality_is_structural_and_ordered),
		cmocka_unit_test(type_names_for_messages),
		cmocka_unit_test(where_points_at_the_node),
		cmocka_unit_test(containers_take_ownership_on_failure),
		cmocka_unit_test(copy_survives_every_allocation_failure),
		cmocka_unit_test(add_appends_without_lookup),
		cmocka_unit_test(duplicates_in_large_mappings),
		cmocka_unit_test(key_index_finds_keys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
