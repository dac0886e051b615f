#define _GNU_SOURCE
#include "support.h"
#include "code_fs.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code/archive.h"
#include "code/ignore.h"
#include "code/stats.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/strlist.h"

static char filler[5000];

static void write_sized(const char *root, const char *rel, size_t size)
{
	aj_test_write(root, rel, filler, size, 0644);
}

/*
 * Shipped: .codeignore 20, README 1000, keep.log 20, src/a.py 100,
 * src/b.py 300, src/deep/c.py 50 (6 files, 1490 bytes; dirs src, src/deep;
 * symlink ln). Left out: node_modules (2 files, 100 bytes, built-in),
 * data/big.bin (5000, code.ignore[0]), x.log (10, .codeignore:2).
 */
static char *make_tree(void)
{
	char *root = aj_test_mkdtemp(), *p;

	memset(filler, 'x', sizeof(filler));
	aj_test_write(root, ".codeignore", "# c\n*.log\n!keep.log\n", 20, 0644);
	write_sized(root, "README", 1000);
	write_sized(root, "keep.log", 20);
	write_sized(root, "x.log", 10);
	write_sized(root, "src/a.py", 100);
	write_sized(root, "src/b.py", 300);
	write_sized(root, "src/deep/c.py", 50);
	write_sized(root, "data/big.bin", 5000);
	write_sized(root, "node_modules/x.js", 70);
	write_sized(root, "node_modules/y/z.js", 30);
	p = aj_test_join(root, "ln");
	assert_int_equal(symlink("src", p), 0);
	free(p);
	p = aj_test_join(root, "pipe");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	return root;
}

static void setup_rules(struct aj_ignore *ig, const char *root)
{
	struct aj_strlist tmpl = AJ_STRLIST_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;

	aj_strlist_add(&tmpl, "data/");
	aj_ignore_init(ig);
	if (aj_ignore_setup(ig, root, &tmpl, &e))
		fail_msg("%s", aj_test_errors_text(&e));
	aj_strlist_release(&tmpl);
	aj_errors_release(&e);
}

static void counts_included_and_ignored_by_rule(void **state)
{
	char *root = make_tree();
	struct aj_ignore ig;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_code_stats st;
	struct aj_archive_result direct;

	(void)state;
	setup_rules(&ig, root);
	if (aj_code_stats_collect(root, &ig, 3, 1, 1, &st, &e))
		fail_msg("%s", aj_test_errors_text(&e));
	assert_int_equal(st.files, 6);
	assert_int_equal(st.bytes, 1490);
	assert_int_equal(st.dirs, 2);
	assert_int_equal(st.symlinks, 1);
	assert_int_equal(st.ignored_files, 4);
	assert_int_equal(st.ignored_bytes, 5110);

	assert_int_equal(st.nr_rules, 3);
	assert_string_equal(st.rules[0].rule->text, "node_modules");
	assert_string_equal(st.rules[0].rule->source, "built-in");
	assert_int_equal(st.rules[0].files, 2);
	assert_int_equal(st.rules[0].bytes, 100);
	assert_string_equal(st.rules[1].rule->text, "data/");
	assert_int_equal(st.rules[1].rule->line, 1);
	assert_int_equal(st.rules[1].files, 1);
	assert_int_equal(st.rules[1].bytes, 5000);
	assert_string_equal(st.rules[2].rule->text, "*.log");
	assert_string_equal(st.rules[2].rule->source, ".codeignore");
	assert_int_equal(st.rules[2].rule->line, 2);
	assert_int_equal(st.rules[2].bytes, 10);

	assert_int_equal(st.nr_skipped, 1);
	assert_string_equal(st.skipped[0].path, "pipe");
	assert_string_equal(st.skipped[0].reason, "fifo");

	assert_int_equal(st.nr_largest_files, 3);
	assert_string_equal(st.largest_files[0].path, "README");
	assert_int_equal(st.largest_files[0].bytes, 1000);
	assert_string_equal(st.largest_files[1].path, "src/b.py");
	assert_string_equal(st.largest_files[2].path, "src/a.py");
	assert_int_equal(st.nr_largest_dirs, 2);
	assert_string_equal(st.largest_dirs[0].path, "src");
	assert_int_equal(st.largest_dirs[0].bytes, 450);
	assert_string_equal(st.largest_dirs[1].path, "src/deep");
	assert_int_equal(st.largest_dirs[1].bytes, 50);

	assert_true(st.archived);
	assert_int_equal(aj_archive_create(root, &ig, 1, NULL, NULL, &direct, &e), 0);
	assert_string_equal(st.archive.sha256_hex, direct.sha256_hex);
	assert_int_equal(st.archive.size, direct.size);
	assert_int_equal(st.archive.files, 6);

	aj_code_stats_release(&st);
	aj_ignore_release(&ig);
	aj_errors_release(&e);
	aj_test_rm_rf(root);
	free(root);
}

static void ties_sort_by_path(void **state)
{
	char *root = aj_test_mkdtemp();
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_code_stats st;

	(void)state;
	memset(filler, 'x', sizeof(filler));
	write_sized(root, "b/f", 10);
	write_sized(root, "a/f", 10);
	write_sized(root, "c", 5);
	assert_int_equal(aj_code_stats_collect(root, &ig, 2, 0, 0, &st, &e), 0);
	assert_int_equal(st.nr_largest_files, 2);
	assert_string_equal(st.largest_files[0].path, "a/f");
	assert_string_equal(st.largest_files[1].path, "b/f");
	assert_string_equal(st.largest_dirs[0].path, "a");
	assert_string_equal(st.largest_dirs[1].path, "b");
	assert_false(st.archived);
	aj_code_stats_release(&st);
	aj_errors_release(&e);
	aj_test_rm_rf(root);
	free(root);
}

static void report_names_rules_and_sizes(void **state)
{
	char *root = make_tree();
	struct aj_ignore ig;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_code_stats st;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *text;

	(void)state;
	setup_rules(&ig, root);
	assert_int_equal(aj_code_stats_collect(root, &ig, 2, 1, 1, &st, &e), 0);
	assert_int_equal(aj_code_stats_format(&st, &b), 0);
	text = aj_buf_cstr(&b);
	assert_non_null(strstr(text, "included: 6 files, 1.5 KiB (2 directories, 1 symlinks)\n"));
	assert_non_null(strstr(text, "ignored: 4 files, 5.0 KiB\n"));
	assert_non_null(strstr(text, "  built-in: node_modules: 2 files, 100 B\n"));
	assert_non_null(strstr(text, "  code.ignore[0]: data/: 1 files, 4.9 KiB\n"));
	assert_non_null(strstr(text, "  .codeignore:2: *.log: 1 files, 10 B\n"));
	assert_non_null(strstr(text, "skipped: pipe (fifo)\n"));
	assert_non_null(strstr(text, "largest files:\n  1000 B  README\n  300 B  src/b.py\n"));
	assert_non_null(strstr(text, "largest directories:\n  450 B  src\n  50 B  src/deep\n"));
	assert_non_null(strstr(text, st.archive.sha256_hex));
	aj_buf_release(&b);
	aj_code_stats_release(&st);
	aj_ignore_release(&ig);
	aj_errors_release(&e);
	aj_test_rm_rf(root);
	free(root);
}

static void missing_root_is_an_error(void **state)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_code_stats st;

	(void)state;
	assert_int_equal(aj_code_stats_collect("/nonexistent/code", &ig, 3, 0, 0, &st, &e), -1);
	assert_true(aj_test_errors_contain(&e, "/nonexistent/code: cannot open directory: No such file"));
	aj_errors_release(&e);
}

static void out_of_memory_is_clean(void **state)
{
	char *root = make_tree();
	struct aj_ignore ig;
	struct aj_code_stats st;
	long n;
	int rc = -1;

	(void)state;
	setup_rules(&ig, root);
	for (n = 0; rc; n++) {
		struct aj_errors e = AJ_ERRORS_INIT;

		aj_alloc_fail_after(n);
		rc = aj_code_stats_collect(root, &ig, 2, 1, 1, &st, &e);
		aj_alloc_fail_after(-1);
		if (rc)
			assert_true(e.oom);
		aj_errors_release(&e);
	}
	assert_true(n > 10);
	assert_int_equal(st.files, 6);
	assert_int_equal(st.nr_rules, 3);
	aj_code_stats_release(&st);
	aj_ignore_release(&ig);
	aj_test_rm_rf(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counts_included_and_ignored_by_rule),
		cmocka_unit_test(ties_sort_by_path),
		cmocka_unit_test(report_names_rules_and_sizes),
		cmocka_unit_test(missing_root_is_an_error),
		cmocka_unit_test(out_of_memory_is_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
