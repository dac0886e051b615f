#include "support.h"

#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/merge.h"
#include "core/node.h"
#include "core/yaml.h"

#define MAX_INPUTS 4

/*
 * Merge the YAML texts in `inputs` (NULL-terminated) and compare with the
 * YAML text `expected` ("null" for no result).
 */
static void check_merge(const char *const *inputs, const char *expected)
{
	struct aj_node *in[MAX_INPUTS], *want = aj_test_yaml(expected), *got = NULL;
	size_t n = 0, i;

	for (n = 0; inputs[n]; n++)
		in[n] = aj_test_yaml(inputs[n]);
	assert_int_equal(aj_merge((const struct aj_node *const *)in, n, &got), 0);
	if (!aj_node_equal(got, want))
		fail_msg("merge of %zu inputs did not give %s", n, expected);
	for (i = 0; i < n; i++)
		aj_node_free(in[i]);
	aj_node_free(want);
	aj_node_free(got);
}

#define MERGE(expected, ...) do { \
	const char *const in_[] = { __VA_ARGS__, NULL }; \
	check_merge(in_, (expected)); \
} while (0)

static void v1_disjoint_and_overlapping_keys(void **state)
{
	(void)state;
	MERGE("{a: 1, b: 2}", "{a: 1}", "{b: 2}");
	MERGE("{a: 3, b: 2, c: 4}", "{a: 1}", "{b: 2}", "{a: 3, c: 4}");
}

static void v2_nested_dicts_merge_recursively(void **state)
{
	(void)state;
	MERGE("{a: {b: {c: 3, d: 2, e: 4}}}",
	      "{a: {b: {c: 1, d: 2}}}", "{a: {b: {c: 3, e: 4}}}");
}

static void v3_scalar_lists_concatenate(void **state)
{
	(void)state;
	MERGE("[1, 2, 3, 4]", "[1, 2]", "[3, 4]");
	MERGE("[a, b, c]", "[\"a\", \"b\"]", "[\"c\"]");
	MERGE("[]", "[]", "[]");
	/* Nested lists count as scalars here: no dictionary anywhere. */
	MERGE("[[1], [2], 3]", "[[1]]", "[[2], 3]");
}

static void v4_lists_with_dicts_merge_by_index(void **state)
{
	(void)state;
	MERGE("[{a: 1, c: 3}, {b: 2}]", "[{a: 1}, {b: 2}]", "[{c: 3}]");
	MERGE("[{c: 3, a: 1}, {b: 2}]", "[{c: 3}]", "[{a: 1}, {b: 2}]");
}

static void v5_scalars_last_wins(void **state)
{
	(void)state;
	MERGE("override", "{a: 1}", "\"override\"");
	MERGE("3", "1", "2", "3");
	MERGE("false", "true", "false");
}

static void v6_nulls_never_override(void **state)
{
	struct aj_node *got = (struct aj_node *)&got;

	(void)state;
	assert_int_equal(aj_merge(NULL, 0, &got), 0);
	assert_null(got);
	MERGE("null", "null", "null");
	MERGE("{a: 1}", "null", "{a: 1}");
	MERGE("{a: 2}", "{a: 1}", "null", "{a: 2}");
	MERGE("{a: 1}", "{}", "{a: 1}");
	MERGE("{a: 1}", "{a: 1}", "{a: null}");
	MERGE("{a: 1}", "{a: null}", "{a: 1}");
	/* A key only ever null stays, as null. */
	MERGE("{a: null, b: 1}", "{a: null}", "{b: 1}");
}

static void v10_job_defaults_meet_child_commands(void **state)
{
	(void)state;
	MERGE("{jobs: [{name: default, sku: small, command: [echo hi]}]}",
	      "{jobs: [{name: \"default\", sku: \"small\"}]}",
	      "{jobs: [{command: [\"echo hi\"]}]}");
	/* Commands accumulate, base first. */
	MERGE("{jobs: [{command: [a, b]}]}",
	      "{jobs: [{command: [a]}]}", "{jobs: [{command: [b]}]}");
}

static void empty_lists_never_clear(void **state)
{
	(void)state;
	MERGE("{a: [1]}", "{a: [1]}", "{a: []}");
	MERGE("[1, null]", "[1]", "[null]");
}

static void mixed_lists_use_index_merge(void **state)
{
	(void)state;
	MERGE("[3, 2]", "[{a: 1}, 2]", "[3]");
	MERGE("[{b: 1}, 2]", "[1, 2]", "[{b: 1}]");
	/* Null items do not override at a position; all-null stays null. */
	MERGE("[{a: 1}, null]", "[{a: 1}, null]", "[null]");
	MERGE("[{a: 1}, x]", "[{a: 1}]", "[null, x]");
}

static void mixed_kinds_last_wins(void **state)
{
	(void)state;
	MERGE("5", "{x: 1}", "5");
	MERGE("[1]", "5", "[1]");
	MERGE("{k: v}", "[1]", "{k: v}");
	MERGE("[1]", "{k: v}", "[1]");
	MERGE("{a: x}", "{a: {b: 1}}", "{a: x}");
	MERGE("{a: {b: 1}}", "{a: [1]}", "{a: {b: 1}}");
}

static void key_order_is_first_seen(void **state)
{
	(void)state;
	MERGE("{z: 1, a: 2, m: 3, b: 4}", "{z: 0, a: 2}", "{m: 3, z: 1}", "{b: 4}");
}

static struct aj_node *load_named(const char *text, const char *name)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *n = NULL;

	assert_int_equal(aj_yaml_load(text, strlen(text), name, &n, &err), 0);
	return n;
}

static void positions_come_from_the_winning_file(void **state)
{
	struct aj_node *a = load_named("target:\n  name: x\n  gpus: 8\n", "base.yaml");
	struct aj_node *b = load_named("\ntarget:\n  name: y\n", "child.yaml");
	const struct aj_node *in[] = { a, b };
	struct aj_node *got = NULL, *v;

	(void)state;
	assert_int_equal(aj_merge(in, 2, &got), 0);
	v = aj_node_at(got, "target.name");
	assert_string_equal(v->pos.file->name, "child.yaml");
	assert_int_equal(v->pos.line, 3);
	v = aj_node_at(got, "target.gpus");
	assert_string_equal(v->pos.file->name, "base.yaml");
	assert_int_equal(v->pos.line, 3);
	aj_node_free(a);
	aj_node_free(b);
	aj_node_free(got);
}

/* Does any node of tree `t` appear (by address) in tree `in`? */
static int shares_node(const struct aj_node *t, const struct aj_node *in)
{
	size_t i;

	if (!t || !in)
		return 0;
	if (t == in)
		return 1;
	for (i = 0; i < in->nr; i++) {
		const struct aj_node *child = in->type == AJ_NODE_SEQ ?
			in->items[i] : in->pairs[i].value;

		if (shares_node(t, child))
			return 1;
	}
	for (i = 0; i < t->nr; i++) {
		const struct aj_node *child = t->type == AJ_NODE_SEQ ?
			t->items[i] : t->pairs[i].value;

		if (shares_node(child, in))
			return 1;
	}
	return 0;
}

static void result_never_aliases_inputs(void **state)
{
	struct aj_node *a = aj_test_yaml("{x: {y: [1, 2]}, l: [{k: 1}], only_a: {deep: [z]}}");
	struct aj_node *b = aj_test_yaml("{x: {w: 1}, l: [{j: 2}, {k: 3}]}");
	struct aj_node *a0 = aj_node_copy(a), *b0 = aj_node_copy(b);
	const struct aj_node *in[] = { a, b };
	struct aj_node *got = NULL;

	(void)state;
	assert_int_equal(aj_merge(in, 2, &got), 0);
	assert_false(shares_node(got, a));
	assert_false(shares_node(got, b));
	/* Changing the result leaves the inputs as they were. */
	assert_int_equal(aj_node_set(aj_node_at(got, "only_a"), "deep", 4,
				     aj_node_new_int(1, NULL), NULL), 0);
	assert_int_equal(aj_node_append(aj_node_at(got, "x.y"), aj_node_new_int(3, NULL)), 0);
	assert_true(aj_node_equal(a, a0));
	assert_true(aj_node_equal(b, b0));
	/* A single input is copied too. */
	aj_node_free(got);
	assert_int_equal(aj_merge(in, 1, &got), 0);
	assert_true(aj_node_equal(got, a));
	assert_false(shares_node(got, a));
	aj_node_free(got);
	aj_node_free(a);
	aj_node_free(b);
	aj_node_free(a0);
	aj_node_free(b0);
}

static void merge_survives_every_allocation_failure(void **state)
{
	struct aj_node *a = aj_test_yaml("{a: {b: [1, 2]}, j: [{n: x}, {m: y}], s: 1, z: ~}");
	struct aj_node *b = aj_test_yaml("{a: {b: [3], c: 'q'}, j: [{o: 1}], s: [1], z: ~}");
	struct aj_node *want = aj_test_yaml(
		"{a: {b: [1, 2, 3], c: q}, j: [{n: x, o: 1}, {m: y}], s: [1], z: ~}");
	const struct aj_node *in[] = { a, NULL, b };
	struct aj_node *got = NULL;
	long n;

	(void)state;
	for (n = 0;; n++) {
		int r;

		aj_alloc_fail_after(n);
		r = aj_merge(in, 3, &got);
		aj_alloc_fail_after(-1);
		if (!r)
			break;
		assert_null(got);
		assert_true(n < 10000);
	}
	assert_true(n > 20);
	assert_true(aj_node_equal(got, want));
	aj_node_free(got);
	aj_node_free(a);
	aj_node_free(b);
	aj_node_free(want);
}

static void large_mappings_merge_by_key(void **state)
{
	struct aj_buf a = AJ_BUF_INIT(AJ_BUF_SMALL), b = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf want = AJ_BUF_INIT(AJ_BUF_SMALL);
	int i;

	(void)state;
	/* a: k0..k39 = i; b: k59 down to k20 = 100 + i. */
	for (i = 0; i < 40; i++)
		aj_buf_addf(&a, "k%d: %d\n", i, i);
	for (i = 59; i >= 20; i--)
		aj_buf_addf(&b, "k%d: %d\n", i, 100 + i);
	/* First-seen order: a's keys, then b's new keys in b's order. */
	for (i = 0; i < 40; i++)
		aj_buf_addf(&want, "k%d: %d\n", i, i < 20 ? i : 100 + i);
	for (i = 59; i >= 40; i--)
		aj_buf_addf(&want, "k%d: %d\n", i, 100 + i);
	MERGE(aj_buf_cstr(&want), aj_buf_cstr(&a), aj_buf_cstr(&b));
	/* The indexes fail cleanly too. */
	{
		struct aj_node *in[2] = { aj_test_yaml(aj_buf_cstr(&a)), aj_test_yaml(aj_buf_cstr(&b)) };
		struct aj_node *w = aj_test_yaml(aj_buf_cstr(&want)), *got = NULL;
		long n;

		for (n = 0;; n++) {
			int r;

			aj_alloc_fail_after(n);
			r = aj_merge((const struct aj_node *const *)in, 2, &got);
			aj_alloc_fail_after(-1);
			if (!r)
				break;
			assert_true(n < 100000);
		}
		assert_true(aj_node_equal(got, w));
		aj_node_free(got);
		aj_node_free(w);
		aj_node_free(in[0]);
		aj_node_free(in[1]);
	}
	aj_buf_release(&a);
	aj_buf_release(&b);
	aj_buf_release(&want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(v1_disjoint_and_overlapping_keys),
		cmocka_unit_test(v2_nested_dicts_merge_recursively),
		cmocka_unit_test(v3_scalar_lists_concatenate),
		cmocka_unit_test(v4_lists_with_dicts_merge_by_index),
		cmocka_unit_test(v5_scalars_last_wins),
		cmocka_unit_test(v6_nulls_never_override),
		cmocka_unit_test(v10_job_defaults_meet_child_commands),
		cmocka_unit_test(empty_lists_never_clear),
		cmocka_unit_test(mixed_lists_use_index_merge),
		cmocka_unit_test(mixed_kinds_last_wins),
		cmocka_unit_test(key_order_is_first_seen),
		cmocka_unit_test(large_mappings_merge_by_key),
		cmocka_unit_test(positions_come_from_the_winning_file),
		cmocka_unit_test(result_never_aliases_inputs),
		cmocka_unit_test(merge_survives_every_allocation_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
