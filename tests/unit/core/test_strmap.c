#include "support.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/strmap.h"

#define N 5000

static void key_of(int i, char *out, size_t n)
{
	snprintf(out, n, "ns-%d/job-%d", i % 7, i);
}

static void put_get_remove_agree_with_a_plain_array(void **state)
{
	struct aj_strmap m = AJ_STRMAP_INIT;
	static int present[N];
	char key[64];
	int i, found;

	(void)state;
	for (i = 0; i < N; i++) {
		key_of(i, key, sizeof(key));
		assert_int_equal(aj_strmap_put(&m, key, &present[i], NULL), 0);
		present[i] = 1;
	}
	/* Remove every third key, then re-add every ninth: tombstones reused. */
	for (i = 0; i < N; i += 3) {
		key_of(i, key, sizeof(key));
		assert_ptr_equal(aj_strmap_remove(&m, key, &found), &present[i]);
		assert_true(found);
		present[i] = 0;
	}
	for (i = 0; i < N; i += 9) {
		key_of(i, key, sizeof(key));
		assert_int_equal(aj_strmap_put(&m, key, &present[i], NULL), 0);
		present[i] = 1;
	}
	for (i = 0; i < N; i++) {
		key_of(i, key, sizeof(key));
		assert_ptr_equal(aj_strmap_get(&m, key, &found),
				 present[i] ? &present[i] : NULL);
		assert_int_equal(found, present[i]);
	}
	{
		size_t pos = 0, seen = 0, expect = 0;
		const char *k;
		void *v;

		while (aj_strmap_next(&m, &pos, &k, &v)) {
			assert_int_equal(*(int *)v, 1);
			seen++;
		}
		for (i = 0; i < N; i++)
			expect += (size_t)present[i];
		assert_int_equal(seen, expect);
		assert_int_equal(m.nr, expect);
	}
	aj_strmap_release(&m);
}

static void put_replaces_and_reports_old_value(void **state)
{
	struct aj_strmap m = AJ_STRMAP_INIT;
	int a = 1, b = 2, found = 1;
	void *old = NULL;

	(void)state;
	assert_null(aj_strmap_get(&m, "x", &found));
	assert_false(found);
	assert_int_equal(aj_strmap_put(&m, "x", &a, &old), 0);
	assert_null(old);
	assert_int_equal(aj_strmap_put(&m, "x", &b, &old), 0);
	assert_ptr_equal(old, &a);
	assert_ptr_equal(aj_strmap_get(&m, "x", NULL), &b);
	assert_int_equal(m.nr, 1);
	aj_strmap_release(&m);
}

/* The map's own copy of a key: not the caller's string, and the same one after the table grows. */
static void key_gives_the_maps_copy_until_removed(void **state)
{
	struct aj_strmap m = AJ_STRMAP_INIT;
	char key[64] = "ns/first";
	const char *copy;
	int i;

	(void)state;
	assert_null(aj_strmap_key(&m, key));
	assert_int_equal(aj_strmap_put(&m, key, NULL, NULL), 0);
	copy = aj_strmap_key(&m, key);
	assert_non_null(copy);
	assert_ptr_not_equal(copy, key);
	assert_string_equal(copy, "ns/first");
	for (i = 0; i < 100; i++) {
		key_of(i, key, sizeof(key));
		assert_int_equal(aj_strmap_put(&m, key, NULL, NULL), 0);
	}
	assert_ptr_equal(aj_strmap_key(&m, "ns/first"), copy);
	aj_strmap_remove(&m, "ns/first", NULL);
	assert_null(aj_strmap_key(&m, "ns/first"));
	aj_strmap_release(&m);
}

static void out_of_memory_leaves_the_map_usable(void **state)
{
	struct aj_strmap m = AJ_STRMAP_INIT;
	char key[64];
	long n;
	int i;

	(void)state;
	for (n = 0;; n++) {
		int failed = 0;

		aj_alloc_fail_after(n);
		for (i = 0; i < 40 && !failed; i++) {
			key_of(i, key, sizeof(key));
			failed = aj_strmap_put(&m, key, NULL, NULL) != 0;
		}
		aj_alloc_fail_after(-1);
		/* Whatever was inserted is intact; nothing else is. */
		for (i = 0; i < 40; i++) {
			int found;

			key_of(i, key, sizeof(key));
			aj_strmap_get(&m, key, &found);
			if (!found)
				break;
		}
		assert_int_equal((size_t)i, m.nr);
		aj_strmap_release(&m);
		if (!failed)
			break;
	}
	assert_true(n > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(put_get_remove_agree_with_a_plain_array),
		cmocka_unit_test(put_replaces_and_reports_old_value),
		cmocka_unit_test(key_gives_the_maps_copy_until_removed),
		cmocka_unit_test(out_of_memory_leaves_the_map_usable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
