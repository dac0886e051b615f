/*
 * "Did you mean": the edit distance (with swaps of neighbours), its cap, the
 * case-insensitive comparison and the choice among candidates. Distances
 * are counted by hand.
 */
#include "support.h"

#include "core/suggest.h"

static void distances(void **state)
{
	(void)state;
	assert_int_equal(aj_edit_distance("memory", "memory", 2), 0);
	assert_int_equal(aj_edit_distance("memroy", "memory", 2), 1);        /* swap */
	assert_int_equal(aj_edit_distance("Memory", "memory", 2), 0);        /* case */
	assert_int_equal(aj_edit_distance("gpu_per_node", "gpus_per_node", 2), 1);
	assert_int_equal(aj_edit_distance("instance_cout", "instance_count", 2), 1);
	assert_int_equal(aj_edit_distance("cofnig", "config", 2), 1);
	assert_int_equal(aj_edit_distance("dry-rn", "dry-run", 2), 1);
	assert_int_equal(aj_edit_distance("", "ab", 2), 2);
	assert_int_equal(aj_edit_distance("abc", "xyz", 5), 3);
	/* past the cap the answer is only "more than max" */
	assert_true(aj_edit_distance("abcdef", "uvwxyz", 2) > 2);
	assert_true(aj_edit_distance("a", "abcd", 2) > 2);
}

static void nearest(void **state)
{
	static const char *const keys[] = { "memory", "rdma", "name", "queue" };
	static const char *const ties[] = { "cat", "bat" };

	(void)state;
	assert_string_equal(aj_suggest("memroy", keys, 4), "memory");
	assert_string_equal(aj_suggest("RDMA", keys, 4), "rdma");
	assert_string_equal(aj_suggest("nme", keys, 4), "name");
	assert_null(aj_suggest("gpus", keys, 4));
	assert_null(aj_suggest("", keys, 4));
	assert_null(aj_suggest("memory", keys, 0));
	assert_string_equal(aj_suggest("at", ties, 2), "cat");           /* earliest on a tie */
	assert_string_equal(aj_suggest("bat", ties, 2), "bat");          /* nearest wins */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(distances),
		cmocka_unit_test(nearest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
