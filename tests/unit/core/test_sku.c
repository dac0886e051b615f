/*
 * SKU templating, range mappings, the shorthand and instance types.
 * Vectors cite the reference section they come from (original-aj-behaviour
 * §2.1-§2.3); where the seed specification differs, the seed's rule is tested
 * and the difference named.
 */
#include "support.h"

#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"
#include "core/sku.h"

/* Resolve the `sku` key of a YAML snippet; returns the result or NULL, errors in *err. */
static char *resolve(const char *yaml, int nodes, int processes, struct aj_errors *err)
{
	struct aj_node *doc = aj_test_yaml(yaml);
	char *out = NULL;
	int ret = aj_sku_resolve(aj_node_get(doc, "sku"), "config.jobs[0].sku", nodes,
				 processes, &out, err);

	aj_node_free(doc);
	assert_int_equal(ret, out ? 0 : -1);
	return out;
}

static void expect(const char *yaml, int nodes, int processes, const char *want)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	char *got = resolve(yaml, nodes, processes, &err);

	if (!got)
		fail_msg("%s: %s", yaml, aj_test_errors_text(&err));
	assert_string_equal(got, want);
	assert_true(aj_errors_empty(&err));
	aj_free(got);
	aj_errors_release(&err);
}

static void expect_error(const char *yaml, int nodes, const char *fragment)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	char *got = resolve(yaml, nodes, 8, &err);

	assert_null(got);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("want \"%s\", got: %s", fragment, aj_test_errors_text(&err));
	aj_errors_release(&err);
}

/* §2.1 string templates */
static void strings_substitute(void **state)
{
	(void)state;
	expect("sku: Standard_NC{nodes}s_v3", 4, 1, "Standard_NC4s_v3");
	expect("sku: ND_A100_{nodes}x{processes}", 2, 8, "ND_A100_2x8");
	expect("sku: \"{nodes}x80G{processes}-A100\"", 2, 8, "2x80G8-A100");
	expect("sku: G1", 3, 3, "G1");
	expect("sku: \"{{literal}}-{nodes}\"", 2, 0, "{literal}-2");
	expect("sku: \"C{processes}\"", 1, 0, "C0");
}

/* §2.1 range mappings: first match in written order */
static void ranges_pick_first_match(void **state)
{
	(void)state;
	expect("sku: {\"1\": small, \"2\": medium}", 2, 1, "medium");
	expect("sku: {\"1-2\": \"small_{nodes}\", \"3-8\": \"large_{nodes}\"}", 5, 1, "large_5");
	expect("sku: {\"4+\": \"huge_{nodes}\"}", 10, 1, "huge_10");
	expect("sku: {\"8+\": big, \"1-8\": small}", 8, 1, "big");
	expect("sku: {1: one, 2-4: \"{nodes}x{processes}\"}", 3, 8, "3x8");
	/* seed example */
	expect("sku:\n  \"1\": \"1x40G{processes}-A100\"\n  \"2-4\": \"{nodes}x80G{processes}-A100\"\n"
	       "  \"8+\": \"{nodes}x80G{processes}-A100-NvLink\"\n", 8, 8, "8x80G8-A100-NvLink");
	expect("sku:\n  \"1\": \"1x40G{processes}-A100\"\n  \"2-4\": \"{nodes}x80G{processes}-A100\"\n",
	       1, 4, "1x40G4-A100");
}

static void errors_name_the_problem(void **state)
{
	(void)state;
	/* §2.1: no match, empty mapping, unsupported type */
	expect_error("sku: {\"1\": small}", 99, "config.jobs[0].sku: no range matches 99 nodes (ranges: \"1\")");
	expect_error("sku:\n  \"1\": a\n  \"2-4\": b\n  \"8+\": c\n", 6,
		     "test.yaml:2:3: config.jobs[0].sku: no range matches 6 nodes (ranges: \"1\", \"2-4\", \"8+\")");
	expect_error("sku: {}", 1, "config.jobs[0].sku: no SKU ranges");
	expect_error("sku: 42", 1, "test.yaml:1:6: config.jobs[0].sku: expected string or mapping of node ranges, got integer");
	expect_error("sku: [G1]", 1, "got list");
	expect_error("other: 1", 1, "config.jobs[0].sku: required");
	/* placeholders and braces */
	expect_error("sku: \"{nodes}x{gpus}\"", 1, "unknown placeholder {gpus} in SKU \"{nodes}x{gpus}\"");
	expect_error("sku: \"{}G1\"", 1, "unknown placeholder {}");
	expect_error("sku: \"{nodes:02d}\"", 1, "unknown placeholder {nodes:02d}");
	expect_error("sku: \"{nodes\"", 1, "unbalanced '{'");
	expect_error("sku: \"nodes}\"", 1, "unbalanced '}'");
	expect_error("sku: {\"2\": \"{bad}\"}", 2, "unknown placeholder {bad}");
	/* malformed range keys, each named with its own position */
	expect_error("sku:\n  \"1-\": a\n", 1, "test.yaml:2:3: config.jobs[0].sku: malformed node range \"1-\"");
	expect_error("sku: {\"a\": x}", 1, "malformed node range \"a\"");
	expect_error("sku: {\"4-2\": x}", 1, "malformed node range \"4-2\"");
	expect_error("sku: {\"0\": x}", 1, "malformed node range \"0\"");
	expect_error("sku: {\"2-+\": x}", 2, "malformed node range \"2-+\"");
	expect_error("sku: {\"99999999999\": x}", 1, "malformed node range");
	expect_error("sku: {\"1\": 5}", 1, "range \"1\": expected string, got integer");
}

static void all_malformed_keys_reported(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	(void)state;
	assert_null(resolve("sku: {\"x\": a, \"1\": b, \"y\": c}", 1, 1, &err));
	assert_int_equal(aj_errors_count(&err), 2);
	assert_true(aj_test_errors_contain(&err, "\"x\""));
	assert_true(aj_test_errors_contain(&err, "\"y\""));
	aj_errors_release(&err);
}

static void placeholder_detection(void **state)
{
	(void)state;
	assert_true(aj_sku_has_placeholder("{nodes}xG8"));
	assert_true(aj_sku_has_placeholder("G{processes}"));
	assert_false(aj_sku_has_placeholder("heterogeneous"));
	assert_false(aj_sku_has_placeholder("{node}"));
}

static void parse_ok(const char *s, int nodes, int mem, int cpu, int count, const char *accel,
		     int nvlink)
{
	struct aj_sku_spec sp;

	if (aj_sku_parse(s, &sp) != 0)
		fail_msg("%s did not parse", s);
	assert_int_equal(sp.nodes, nodes);
	assert_int_equal(sp.memory_gb, mem);
	assert_int_equal(sp.cpu, cpu);
	assert_int_equal(sp.count, count);
	assert_int_equal(sp.nvlink, nvlink);
	if (accel) {
		assert_int_equal(sp.accelerators.nr, 1);
		assert_string_equal(sp.accelerators.items[0], accel);
	} else {
		assert_int_equal(sp.accelerators.nr, 0);
	}
	aj_sku_spec_release(&sp);
}

/* §2.2 shorthand vectors */
static void shorthand_parses(void **state)
{
	(void)state;
	parse_ok("1xC1", 1, 0, 1, 1, NULL, 0);
	parse_ok("1x80G8-A100-NvLink", 1, 80, 0, 8, "A100", 1);
	parse_ok("2x80G8-A100-NvLink", 2, 80, 0, 8, "A100", 1);
	parse_ok("2x40G4-A100", 2, 40, 0, 4, "A100", 0);
	parse_ok("G1", 1, 0, 0, 1, NULL, 0);
	parse_ok("4xC1", 4, 0, 1, 1, NULL, 0);
	parse_ok("C4", 1, 0, 1, 4, NULL, 0);
	parse_ok("G", 1, 0, 0, 1, NULL, 0);
	parse_ok("1x80G8-A100-IB", 1, 80, 0, 8, "A100", 0);
	parse_ok("G8-nvlink", 1, 0, 0, 8, NULL, 1);
	parse_ok("8G", 1, 8, 0, 1, NULL, 0);
}

/* §2.2 quirk not kept: a non-matching string is not a default 1-GPU SKU */
static void not_shorthand(void **state)
{
	static const char *const bad[] = {
		"????", "", "x", "2x", "G0", "0xG1", "C4-A100", "C2-NvLink", "2xG8-", "G8--A100",
		"Standard_ND40rs_v2", "g8", "2x80", "G8 ", "G8-A1/00", NULL
	};
	struct aj_sku_spec sp;
	size_t i;

	(void)state;
	for (i = 0; bad[i]; i++) {
		if (aj_sku_parse(bad[i], &sp) != 1)
			fail_msg("\"%s\" parsed as shorthand", bad[i]);
		assert_int_equal(sp.accelerators.nr, 0);
		aj_sku_spec_release(&sp);
	}
}

static void types_are(const char *sku, const char *const *want)
{
	struct aj_strlist got = AJ_STRLIST_INIT;
	size_t i;

	assert_int_equal(aj_sku_instance_types(sku, &got), 0);
	for (i = 0; want[i]; i++) {
		if (i >= got.nr)
			fail_msg("%s: missing %s", sku, want[i]);
		assert_string_equal(got.items[i], want[i]);
	}
	assert_int_equal(got.nr, i);
	aj_strlist_release(&got);
}

/* §2.3 family table; counts and memory are exact per the seed */
static void instance_types(void **state)
{
	(void)state;
	types_are("1xC1", (const char *const[]){ "E4ads_v5", "D4_v3", NULL });
	types_are("C4", (const char *const[]){ "E32ads_v5", "D32_v3", NULL });
	types_are("G1", (const char *const[]){ "ND12am_A100_v4", "NC24ad_A100_v4", "ND12_v4",
					       "ND12_H100_v5", NULL });
	types_are("80G8-H100", (const char *const[]){ "ND96r_H100_v5", "LMD_BM_GPUH100.8-n1", NULL });
	types_are("1x80G8-A100-NvLink", (const char *const[]){ "ND96amrs_A100_v4", NULL });
	types_are("2x40G8-A100-NvLink", (const char *const[]){ "ND96rs_v4", NULL });
	types_are("G2-V100", (const char *const[]){ "ND10_v2", NULL });
	types_are("G16-MI200", (const char *const[]){ "ND96asr_MI200_v4", NULL });
	/* reference gives a duplicated ND24is_MI300X_v5: deduplicated here */
	types_are("G2-MI300X", (const char *const[]){ "ND24is_MI300X_v5", NULL });
	/* reference adds NC96ad_A100_v4 (closest count, 4 GPUs): the seed wants the exact count */
	types_are("1x80G8-A100-IB", (const char *const[]){ "ND96amrs_A100_v4", NULL });
	/* reference matches A10 as a substring of A100: the seed wants an exact accelerator */
	types_are("G1-A10", (const char *const[]){ NULL });
	/* no closest-count or clamped fallbacks */
	types_are("G3", (const char *const[]){ NULL });
	types_are("C9", (const char *const[]){ NULL });
	types_are("16C1", (const char *const[]){ NULL });
	/* direct names */
	types_are("E16ads_v5", (const char *const[]){ "E16ads_v5", NULL });
	types_are("2xStandard_ND40rs_v2", (const char *const[]){ "Standard_ND40rs_v2", NULL });
}

static void instance_types_not_shorthand(void **state)
{
	struct aj_strlist got = AJ_STRLIST_INIT;

	(void)state;
	assert_int_equal(aj_sku_instance_types("????", &got), 1);
	assert_int_equal(aj_sku_instance_types("2x", &got), 1);
	assert_int_equal(got.nr, 0);
	aj_strlist_release(&got);
}

static void survives_allocation_failures(void **state)
{
	struct aj_node *doc = aj_test_yaml("sku: {\"x\": a, \"1-4\": \"{nodes}x80G{processes}-A100\", \"5\": 6}");
	struct aj_node *ok = aj_test_yaml("sku: {\"9+\": a, \"1-4\": \"{nodes}x80G{processes}-A100\"}");
	long n;

	(void)state;
	for (n = 0;; n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_strlist types = AJ_STRLIST_INIT;
		char *out = NULL, *bad = NULL;
		int r1, r2, r3;

		aj_alloc_fail_after(n);
		r1 = aj_sku_resolve(aj_node_get(ok, "sku"), "sku", 2, 8, &out, &err);
		r2 = aj_sku_resolve(aj_node_get(doc, "sku"), "sku", 2, 8, &bad, &err);
		r3 = aj_sku_instance_types("G1", &types);
		aj_alloc_fail_after(-1);
		assert_int_equal(r2, -1);
		assert_null(bad);
		assert_false(aj_errors_empty(&err));
		aj_strlist_release(&types);
		aj_errors_release(&err);
		if (!r1 && !r3) {
			assert_non_null(out);
			aj_free(out);
			break;
		}
		aj_free(out);
	}
	assert_true(n > 3);
	aj_node_free(doc);
	aj_node_free(ok);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(strings_substitute),
		cmocka_unit_test(ranges_pick_first_match),
		cmocka_unit_test(errors_name_the_problem),
		cmocka_unit_test(all_malformed_keys_reported),
		cmocka_unit_test(placeholder_detection),
		cmocka_unit_test(shorthand_parses),
		cmocka_unit_test(not_shorthand),
		cmocka_unit_test(instance_types),
		cmocka_unit_test(instance_types_not_shorthand),
		cmocka_unit_test(survives_allocation_failures),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
