#define _GNU_SOURCE
#include "support.h"
#include "code_fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code/ignore.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/strlist.h"

/*
 * Expected outcome of one path: 0 included (no rule or a negation decides),
 * 1 excluded; `line` is the deciding rule's line (0: none).
 */
struct want {
	const char *path;
	int is_dir;
	int excluded;
	int line;
};

static void load(struct aj_ignore *ig, const char *text)
{
	struct aj_errors e = AJ_ERRORS_INIT;

	aj_ignore_init(ig);
	if (aj_ignore_add_text(ig, text, strlen(text), ".codeignore", &e))
		fail_msg("%s", aj_test_errors_text(&e));
	aj_errors_release(&e);
}

static void expect_all(const char *text, const struct want *w, size_t n)
{
	struct aj_ignore ig;
	size_t i;

	load(&ig, text);
	for (i = 0; i < n; i++) {
		const struct aj_ignore_rule *r =
			aj_ignore_check(&ig, w[i].path, strlen(w[i].path), w[i].is_dir);
		int got = aj_ignore_excludes(r), line = r ? r->line : 0;

		if (got != w[i].excluded || line != w[i].line)
			fail_msg("patterns \"%s\", path %s%s: got excluded=%d line=%d, "
				 "want excluded=%d line=%d", text, w[i].path,
				 w[i].is_dir ? "/" : "", got, line, w[i].excluded,
				 w[i].line);
	}
	aj_ignore_release(&ig);
}

#define EXPECT(text, ...) do { \
	static const struct want w_[] = { __VA_ARGS__ }; \
	expect_all(text, w_, sizeof(w_) / sizeof(w_[0])); \
} while (0)

static void star_matches_within_a_component(void **state)
{
	(void)state;
	EXPECT("*.log",
	       { "a.log", 0, 1, 1 }, { "dir/a.log", 0, 1, 1 },
	       { "a.log.txt", 0, 0, 0 }, { "alog", 0, 0, 0 },
	       { "x/y/.log", 0, 1, 1 });
	EXPECT("doc/*.txt",
	       { "doc/x.txt", 0, 1, 1 }, { "doc/sub/x.txt", 0, 0, 0 },
	       { "a/doc/x.txt", 0, 0, 0 }, { "doc/.txt", 0, 1, 1 });
	EXPECT("f*o",
	       { "fo", 0, 1, 1 }, { "fxyzo", 0, 1, 1 }, { "a/fo", 0, 1, 1 },
	       { "foo.c", 0, 0, 0 });
	EXPECT("*", { "a", 0, 1, 1 }, { "d/e", 1, 1, 1 });
}

static void slash_anchors_to_the_root(void **state)
{
	(void)state;
	EXPECT("/a.log", { "a.log", 0, 1, 1 }, { "d/a.log", 0, 0, 0 });
	EXPECT("a/b", { "a/b", 0, 1, 1 }, { "x/a/b", 0, 0, 0 });
	EXPECT("/*.c", { "m.c", 0, 1, 1 }, { "src/m.c", 0, 0, 0 });
}

static void trailing_slash_means_directory(void **state)
{
	(void)state;
	EXPECT("build/",
	       { "build", 1, 1, 1 }, { "build", 0, 0, 0 },
	       { "src/build", 1, 1, 1 }, { "build/x.o", 0, 1, 1 },
	       { "src/build/deep/x", 0, 1, 1 });
	EXPECT("a/b/", { "a/b", 1, 1, 1 }, { "a/b", 0, 0, 0 }, { "c/a/b", 1, 0, 0 });
}

static void double_star_forms(void **state)
{
	(void)state;
	EXPECT("**/foo",
	       { "foo", 0, 1, 1 }, { "a/b/foo", 0, 1, 1 }, { "afoo", 0, 0, 0 });
	EXPECT("**/foo/bar",
	       { "foo/bar", 0, 1, 1 }, { "x/foo/bar", 0, 1, 1 },
	       { "foo/x/bar", 0, 0, 0 });
	EXPECT("abc/**",
	       { "abc/x", 0, 1, 1 }, { "abc/x/y", 0, 1, 1 }, { "abc", 1, 0, 0 });
	EXPECT("a/**/b",
	       { "a/b", 0, 1, 1 }, { "a/x/b", 0, 1, 1 }, { "a/x/y/b", 0, 1, 1 },
	       { "ab", 0, 0, 0 }, { "a/xb", 0, 0, 0 });
	/* Not between slashes: an ordinary star. */
	EXPECT("/x**y", { "xaby", 0, 1, 1 }, { "xa/by", 0, 0, 0 });
	EXPECT("**", { "a", 0, 1, 1 }, { "a/b", 0, 1, 1 });
}

/*
 * Many stars and a path that almost matches (found by fuzz_ignore): each
 * star must not retry every split of the path, or this takes 10^15 steps.
 */
static void many_stars_do_not_retry_every_split(void **state)
{
	struct aj_ignore ig;
	char pat[160], path[160];
	size_t i, n;

	(void)state;
	for (int anchored = 0; anchored < 2; anchored++) {
		n = (size_t)snprintf(pat, sizeof(pat), "%s", anchored ? "d/" : "");
		for (i = 0; i < 20; i++)
			n += (size_t)snprintf(pat + n, sizeof(pat) - n, "*a");
		snprintf(pat + n, sizeof(pat) - n, "*b\n");
		load(&ig, pat);
		n = (size_t)snprintf(path, sizeof(path), "%sb", anchored ? "d/" : "x/");
		for (i = 0; i < 60; i++)
			path[n++] = 'a';
		path[n] = '\0';
		/* no 'b' after the twenty a's */
		assert_false(aj_ignore_excludes(aj_ignore_check(&ig, path, n, 0)));
		/* the b is there, but past a '/' the stars may not cross */
		memcpy(path + n, "/b", 3);
		assert_false(aj_ignore_excludes(aj_ignore_check(&ig, path, n + 2, 0)));
		/* and where it may be */
		memcpy(path + n, "b", 2);
		assert_true(aj_ignore_excludes(aj_ignore_check(&ig, path, n + 1, 0)));
		aj_ignore_release(&ig);
	}
}

static void question_mark_and_classes(void **state)
{
	(void)state;
	EXPECT("?.c", { "a.c", 0, 1, 1 }, { "ab.c", 0, 0, 0 }, { ".c", 0, 0, 0 });
	EXPECT("a?b", { "a/b", 0, 0, 0 }, { "axb", 0, 1, 1 });
	EXPECT("[a-c].txt", { "b.txt", 0, 1, 1 }, { "d.txt", 0, 0, 0 });
	EXPECT("[!a-c].txt", { "d.txt", 0, 1, 1 }, { "b.txt", 0, 0, 0 });
	EXPECT("[^a].txt", { "b.txt", 0, 1, 1 }, { "a.txt", 0, 0, 0 });
	EXPECT("[]a]x", { "]x", 0, 1, 1 }, { "ax", 0, 1, 1 }, { "bx", 0, 0, 0 });
	EXPECT("[a-]x", { "-x", 0, 1, 1 }, { "ax", 0, 1, 1 }, { "bx", 0, 0, 0 });
	EXPECT("[[:digit:]]*", { "1abc", 0, 1, 1 }, { "abc", 0, 0, 0 });
	EXPECT("x[[:upper:][:space:]]", { "xQ", 0, 1, 1 }, { "x ", 0, 1, 1 },
	       { "xq", 0, 0, 0 });
	EXPECT("a[/]b", { "a/b", 0, 0, 0 });
	/* As git: vertical tab and form feed are not [:space:]. */
	EXPECT("x[[:space:]]y", { "x\ty", 0, 1, 1 }, { "x\vy", 0, 0, 0 },
	       { "x\fy", 0, 0, 0 });
	EXPECT("a[[:cntrl:]]b[[:punct:]]", { "a\tb_", 0, 1, 1 }, { "a b_", 0, 0, 0 });
}

static void escapes_comments_and_spaces(void **state)
{
	(void)state;
	EXPECT("\\*.txt", { "*.txt", 0, 1, 1 }, { "a.txt", 0, 0, 0 });
	EXPECT("\\!important", { "!important", 0, 1, 1 }, { "important", 0, 0, 0 });
	EXPECT("\\#hash", { "#hash", 0, 1, 1 });
	EXPECT("#hash\n\n   \nx", { "#hash", 0, 0, 0 }, { "x", 0, 1, 4 });
	EXPECT("foo   ", { "foo", 0, 1, 1 }, { "foo ", 0, 0, 0 });
	EXPECT("foo\\ ", { "foo ", 0, 1, 1 }, { "foo", 0, 0, 0 });
	EXPECT("foo\\  ", { "foo ", 0, 1, 1 });
	EXPECT("a\\?", { "a?", 0, 1, 1 }, { "ab", 0, 0, 0 });
}

static void negation_and_last_match(void **state)
{
	(void)state;
	EXPECT("*.log\n!keep.log",
	       { "keep.log", 0, 0, 2 }, { "a.log", 0, 1, 1 },
	       { "d/keep.log", 0, 0, 2 });
	EXPECT("!a.txt\na.txt", { "a.txt", 0, 1, 2 });
	/* Inside an excluded directory nothing comes back... */
	EXPECT("build/\n!build/keep.txt",
	       { "build/keep.txt", 0, 1, 1 }, { "build", 1, 1, 1 });
	/* ...but excluding the entries leaves the directory open. */
	EXPECT("build/*\n!build/keep.txt",
	       { "build/keep.txt", 0, 0, 2 }, { "build/other", 0, 1, 1 },
	       { "build", 1, 0, 0 });
	EXPECT("/*\n!/src/\n/src/*\n!/src/main/",
	       { "src/main/a.c", 0, 0, 0 }, { "src/test/a.c", 0, 1, 3 },
	       { "README", 0, 1, 1 });
}

static void crlf_and_bom(void **state)
{
	(void)state;
	EXPECT("\xef\xbb\xbf" "a\r\nb\r\n", { "a", 0, 1, 1 }, { "b", 0, 1, 2 },
	       { "a\r", 0, 0, 0 });
}

static void builtins_keep_azure_jobs_scripts(void **state)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	static const struct want w[] = {
		{ ".git", 1, 1, 1 }, { "sub/.git", 0, 1, 1 },
		{ ".venv", 1, 1, 2 }, { "a/b/node_modules", 1, 1, 3 },
		{ "pkg/__pycache__", 1, 1, 4 }, { "pkg/__pycache__/m.pyc", 0, 1, 4 },
		{ ".azure_jobs", 1, 0, 0 }, { ".azure_jobs/out.json", 0, 1, 5 },
		{ ".azure_jobs/logs", 1, 1, 5 }, { ".azure_jobs/logs/x", 0, 1, 5 },
		{ ".azure_jobs/scripts", 1, 0, 6 },
		{ ".azure_jobs/scripts/copy_ssh.sh", 0, 0, 0 },
		{ ".azure_jobs/scripts/sub/x.sh", 0, 0, 0 },
		{ ".azure_jobs/scripts", 0, 1, 5 },
		{ "sub/.azure_jobs/x", 0, 0, 0 }, { "src/main.py", 0, 0, 0 },
		{ ".gitignore", 0, 0, 0 },
	};
	size_t i;

	(void)state;
	assert_int_equal(aj_ignore_add_builtins(&ig, &e), 0);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		const struct aj_ignore_rule *r =
			aj_ignore_check(&ig, w[i].path, strlen(w[i].path), w[i].is_dir);

		if (aj_ignore_excludes(r) != w[i].excluded || (r ? r->line : 0) != w[i].line)
			fail_msg("%s: got %d/%d", w[i].path, aj_ignore_excludes(r),
				 r ? r->line : 0);
		if (r)
			assert_string_equal(r->source, "built-in");
	}
	aj_ignore_release(&ig);
	aj_errors_release(&e);
}

static const struct aj_ignore_rule *check(const struct aj_ignore *ig,
					  const char *path, int is_dir)
{
	return aj_ignore_check(ig, path, strlen(path), is_dir);
}

static void origin(const struct aj_ignore_rule *r, const char *want)
{
	struct aj_buf b = AJ_BUF_INIT(256);

	assert_non_null(r);
	assert_int_equal(aj_ignore_rule_origin(r, &b), 0);
	assert_string_equal(aj_buf_cstr(&b), want);
	aj_buf_release(&b);
}

static void sources_concatenate_in_order(void **state)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_strlist tmpl = AJ_STRLIST_INIT;
	char *dir = aj_test_mkdtemp(), *p;
	const struct aj_ignore_rule *r;

	(void)state;
	aj_strlist_add(&tmpl, "*.ckpt");
	aj_strlist_add(&tmpl, "!node_modules");
	aj_strlist_add(&tmpl, "data/");
	aj_test_write(dir, ".codeignore", "# root rules\n!best.ckpt\n", 24, 0644);
	aj_test_write(dir, ".amltignore", "*.py\n", 5, 0644);
	assert_int_equal(aj_ignore_setup(&ig, dir, &tmpl, &e), 0);

	r = check(&ig, "node_modules", 1);
	assert_false(aj_ignore_excludes(r));
	origin(r, "code.ignore[1]");
	r = check(&ig, "x/last.ckpt", 0);
	assert_true(aj_ignore_excludes(r));
	origin(r, "code.ignore[0]");
	assert_string_equal(r->text, "*.ckpt");
	r = check(&ig, "best.ckpt", 0);
	assert_false(aj_ignore_excludes(r));
	origin(r, ".codeignore:2");
	assert_null(check(&ig, "main.py", 0));   /* .amltignore not read */
	origin(check(&ig, ".git", 1), "built-in");
	aj_ignore_release(&ig);

	/* Without .codeignore the .amltignore is the root file. */
	p = aj_test_join(dir, ".codeignore");
	assert_int_equal(unlink(p), 0);
	free(p);
	assert_int_equal(aj_ignore_setup(&ig, dir, NULL, &e), 0);
	origin(check(&ig, "main.py", 0), ".amltignore:1");
	aj_ignore_release(&ig);

	aj_test_rm_rf(dir);
	free(dir);
	aj_strlist_release(&tmpl);
	aj_errors_release(&e);
}

static void expect_error(const char *text, const char *fragment)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;

	assert_int_equal(aj_ignore_add_text(&ig, text, strlen(text), ".codeignore", &e), -1);
	if (!aj_test_errors_contain(&e, fragment))
		fail_msg("want \"%s\", got: %s", fragment, aj_test_errors_text(&e));
	aj_ignore_release(&ig);
	aj_errors_release(&e);
}

static void malformed_patterns_are_errors(void **state)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_strlist l = AJ_STRLIST_INIT;
	char big[AJ_IGNORE_PATTERN_MAX + 2];

	(void)state;
	expect_error("ok\n[abc\n", ".codeignore:2: unclosed character class in pattern \"[abc\"");
	expect_error("foo\\", ".codeignore:1: pattern ends with a lone backslash \"foo\\\"");
	expect_error("[[:word:]]", ".codeignore:1: unknown character class in pattern");
	expect_error("[a\\", "unclosed character class");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	expect_error(big, ".codeignore:1: pattern longer than 4096 bytes:");

	aj_strlist_add(&l, "fine");
	aj_strlist_add(&l, "a\nb");
	assert_int_equal(aj_ignore_add_list(&ig, &l, "code.ignore", &e), -1);
	assert_true(aj_test_errors_contain(&e, "code.ignore[1]: line break or NUL byte in pattern"));
	aj_ignore_release(&ig);
	aj_strlist_release(&l);
	aj_errors_release(&e);
}

static void root_file_errors_name_the_file(void **state)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	char *dir = aj_test_mkdtemp();
	char *big = calloc(1, AJ_IGNORE_FILE_MAX + 1), *link;

	(void)state;
	assert_int_equal(aj_ignore_add_root_file(&ig, dir, &e), 0);
	assert_int_equal(ig.nr, 0);

	aj_test_mkdir(dir, ".codeignore");
	assert_int_equal(aj_ignore_add_root_file(&ig, dir, &e), -1);
	assert_true(aj_test_errors_contain(&e, ".codeignore: not a regular file"));
	aj_test_rm_rf(dir);
	free(dir);
	aj_errors_release(&e);

	dir = aj_test_mkdtemp();
	memset(big, '#', AJ_IGNORE_FILE_MAX + 1);
	aj_test_write(dir, ".amltignore", big, AJ_IGNORE_FILE_MAX + 1, 0644);
	assert_int_equal(aj_ignore_add_root_file(&ig, dir, &e), -1);
	assert_true(aj_test_errors_contain(&e, ".amltignore: larger than 1048576 bytes"));
	aj_errors_release(&e);

	/* Broken symlink: present but cannot be opened. */
	link = aj_test_join(dir, ".codeignore");
	assert_int_equal(symlink("missing-target", link), 0);
	free(link);
	assert_int_equal(aj_ignore_add_root_file(&ig, dir, &e), -1);
	assert_true(aj_test_errors_contain(&e, ".codeignore: cannot open:"));

	aj_ignore_release(&ig);
	aj_errors_release(&e);
	aj_test_rm_rf(dir);
	free(dir);
	free(big);
}

static const char torture_text[] =
	"*.log\n!keep.log\n/build/\ndoc/**/*.md\n[a-c]?[!x]\\*\n"
	"x[[:digit:]]y\n**/tmp/\nfoo\\ \n";

static void out_of_memory_is_clean(void **state)
{
	struct aj_strlist tmpl = AJ_STRLIST_INIT;
	long n;
	int done = 0;

	(void)state;
	aj_strlist_add(&tmpl, "*.ckpt");
	aj_strlist_add(&tmpl, "a/**/b");
	for (n = 0; !done; n++) {
		struct aj_ignore ig = AJ_IGNORE_INIT;
		struct aj_errors e = AJ_ERRORS_INIT;
		int rc;

		aj_alloc_fail_after(n);
		rc = aj_ignore_add_builtins(&ig, &e);
		if (!rc)
			rc = aj_ignore_add_list(&ig, &tmpl, "code.ignore", &e);
		if (!rc)
			rc = aj_ignore_add_text(&ig, torture_text,
						sizeof(torture_text) - 1, ".codeignore", &e);
		/* Matching allocates nothing: it must work even now. */
		if (!rc) {
			done = 1;
			assert_true(aj_ignore_excludes(check(&ig, "x/build/k.log", 0)));
			assert_false(aj_ignore_excludes(check(&ig, "keep.log", 0)));
			assert_true(aj_ignore_excludes(check(&ig, "build/x", 0)));
			assert_true(aj_ignore_excludes(check(&ig, "doc/a/b/r.md", 0)));
			assert_true(aj_ignore_excludes(check(&ig, "ab-*", 0)));
			assert_true(aj_ignore_excludes(check(&ig, "a/x/y/b", 0)));
			assert_true(aj_ignore_excludes(check(&ig, "foo ", 0)));
		} else {
			assert_true(e.oom);
		}
		aj_alloc_fail_after(-1);
		aj_ignore_release(&ig);
		aj_errors_release(&e);
	}
	assert_true(n > 20);
	aj_strlist_release(&tmpl);
}

/* ---- git as the oracle ---- */

static unsigned long long rng_state;

static unsigned rnd(unsigned n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (unsigned)(rng_state % n);
}

static const char *const tree_names[] = {
	"a", "b", "c", "ab", "ba", "abc", "foo", "bar", "x.c", "y.c", "a.txt",
	"b.log", "foo.log", "doc", "src", "build", "tmp", "[ab]", "*x", "!n",
	"#h", "sp ", "a b", "A", "9z", "a.b.c", "-", "]", "fo", "obj",
};

static const char *const pattern_parts[] = {
	"*", "**", "?", "a", "b", "ab", "a*", "*b", "*.c", "*.log", "foo",
	"bar", "[ab]", "[!a]*", "[a-c]", "?b", "doc", "build", "x.c", "tmp",
	"\\[ab\\]", "[[:alpha:]]*", "f*o", "*o*", "a**", "**b", "\\!n", "\\#h",
	"sp\\ ", "\\*x", "[^b]", "[]]", "[a-]", "**/a", "a/**", "src", "*.*",
	"a?", "[[:digit:]]?", "*[bc]", "[!.]*", "b*a*", "\\?",
};

struct oracle_path {
	char path[256];
	int is_dir;
};

struct oracle_case {
	struct oracle_path paths[400];
	size_t nr;
	char patterns[2048];
};

static void gen_tree(struct oracle_case *c, const char *root, const char *prefix,
		     int depth)
{
	unsigned k, count = 1 + rnd(depth ? 4 : 6);
	int used[sizeof(tree_names) / sizeof(tree_names[0])] = { 0 };

	for (k = 0; k < count && c->nr < 400; k++) {
		unsigned pick = rnd(sizeof(tree_names) / sizeof(tree_names[0]));
		struct oracle_path *p;
		unsigned kind = rnd(20);
		char *full;

		if (used[pick])
			continue;
		used[pick] = 1;
		p = &c->paths[c->nr++];
		snprintf(p->path, sizeof(p->path), "%s%s%s", prefix,
			 *prefix ? "/" : "", tree_names[pick]);
		full = aj_test_join(root, p->path);
		if (depth < 3 && kind < 8) {
			p->is_dir = 1;
			if (mkdir(full, 0755))
				fail_msg("mkdir %s: %s", full, strerror(errno));
			gen_tree(c, root, p->path, depth + 1);
		} else if (kind == 8) {
			if (symlink(".", full))
				fail_msg("symlink %s: %s", full, strerror(errno));
		} else {
			aj_test_write(root, p->path, "x", 1, 0644);
		}
		free(full);
	}
}

static void gen_patterns(struct oracle_case *c)
{
	struct aj_buf b = AJ_BUF_INIT(sizeof(c->patterns) - 1);
	unsigned k, count = 1 + rnd(6);
	size_t nparts = sizeof(pattern_parts) / sizeof(pattern_parts[0]);

	for (k = 0; k < count; k++) {
		unsigned j, parts = 1 + rnd(3), extra = rnd(40);

		if (extra == 0) {
			aj_buf_addstr(&b, "# comment\n");
			continue;
		}
		if (extra == 1) {
			aj_buf_addstr(&b, "\n");
			continue;
		}
		if (rnd(4) == 0)
			aj_buf_addch(&b, '!');
		if (rnd(5) == 0)
			aj_buf_addch(&b, '/');
		for (j = 0; j < parts; j++) {
			if (j)
				aj_buf_addch(&b, '/');
			aj_buf_addstr(&b, pattern_parts[rnd((unsigned)nparts)]);
		}
		if (rnd(5) == 0)
			aj_buf_addch(&b, '/');
		if (extra == 2)
			aj_buf_addstr(&b, "  ");
		aj_buf_addch(&b, '\n');
	}
	snprintf(c->patterns, sizeof(c->patterns), "%s", aj_buf_cstr(&b));
	aj_buf_release(&b);
}

/* Clear everything in the work tree but .git. */
static void clear_tree(const char *root)
{
	size_t k;

	for (k = 0; k < sizeof(tree_names) / sizeof(tree_names[0]); k++) {
		char *p = aj_test_join(root, tree_names[k]);
		struct stat st;

		if (!lstat(p, &st))
			aj_test_rm_rf(p);
		free(p);
	}
}

static void run_oracle_case(char *root, char *const env[], unsigned seed)
{
	static struct oracle_case c;
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	char *argv[] = { (char *)"git", (char *)"-C", (char *)root,
			 (char *)"check-ignore", (char *)"--no-index", (char *)"-v",
			 (char *)"-n", (char *)"-z", (char *)"--stdin", NULL };
	char *in_path = aj_test_join(root, ".git/oracle-in");
	struct aj_buf in = AJ_BUF_INIT(AJ_BUF_LARGE);
	char *out = NULL, *p;
	size_t out_len = 0, i;
	FILE *f;
	int rc;

	memset(&c, 0, sizeof(c));
	clear_tree(root);
	gen_tree(&c, root, "", 0);
	gen_patterns(&c);
	aj_test_write(root, ".gitignore", c.patterns, strlen(c.patterns), 0644);
	for (i = 0; i < c.nr; i++)
		aj_buf_add(&in, c.paths[i].path, strlen(c.paths[i].path) + 1);
	f = fopen(in_path, "wb");
	assert_non_null(f);
	fwrite(in.buf, 1, in.len, f);
	fclose(f);
	/* 0: something ignored, 1: nothing ignored, else a failure. */
	rc = aj_test_spawn(argv, in_path, env, &out, &out_len);
	if (rc != 0 && rc != 1)
		fail_msg("seed %u: git check-ignore failed", seed);

	if (aj_ignore_add_text(&ig, c.patterns, strlen(c.patterns), ".gitignore", &e))
		fail_msg("seed %u: %s", seed, aj_test_errors_text(&e));
	p = out;
	for (i = 0; i < c.nr; i++) {
		/* -z -v -n: source NUL line NUL pattern NUL path NUL */
		const char *src = p, *line = src + strlen(src) + 1;
		const char *pat = line + strlen(line) + 1;
		const char *path = pat + strlen(pat) + 1;
		const struct aj_ignore_rule *r;
		int git_excluded = *pat && *pat != '!';
		int git_line = *line ? (int)strtol(line, NULL, 10) : 0;

		if ((size_t)(path - out) >= out_len)
			fail_msg("seed %u: short git output", seed);
		p = out + (path - out) + strlen(path) + 1;
		assert_string_equal(path, c.paths[i].path);
		r = aj_ignore_check(&ig, path, strlen(path), c.paths[i].is_dir);
		if (aj_ignore_excludes(r) != git_excluded || (r ? r->line : 0) != git_line)
			fail_msg("seed %u: path \"%s\"%s, patterns:\n%s\n"
				 "git: excluded=%d line=%d (%s); ours: excluded=%d line=%d",
				 seed, path, c.paths[i].is_dir ? " (dir)" : "", c.patterns,
				 git_excluded, git_line, pat, aj_ignore_excludes(r),
				 r ? r->line : 0);
	}
	aj_ignore_release(&ig);
	aj_errors_release(&e);
	aj_buf_release(&in);
	free(out);
	free(in_path);
}

static void git_agrees_on_random_trees(void **state)
{
	char *root = aj_test_mkdtemp();
	char *home = aj_test_join(root, ".git");
	char path_env[4096], home_env[4200];
	char *env[] = { path_env, home_env, (char *)"GIT_CONFIG_NOSYSTEM=1",
			(char *)"LC_ALL=C", NULL };
	char *init[] = { (char *)"git", (char *)"init", (char *)"-q", root, NULL };
	unsigned seed;

	(void)state;
	snprintf(path_env, sizeof(path_env), "PATH=%s",
		 getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
	/* HOME inside .git: no user config or global excludes leak in. */
	snprintf(home_env, sizeof(home_env), "HOME=%s", home);
	if (aj_test_spawn(init, NULL, env, NULL, NULL) != 0)
		fail_msg("git init failed: git is the oracle for these rules");
	for (seed = 1; seed <= 600; seed++) {
		rng_state = 0x9e3779b97f4a7c15ull ^ ((unsigned long long)seed * 0x100000001b3ull);
		run_oracle_case(root, env, seed);
	}
	aj_test_rm_rf(root);
	free(root);
	free(home);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(star_matches_within_a_component),
		cmocka_unit_test(slash_anchors_to_the_root),
		cmocka_unit_test(trailing_slash_means_directory),
		cmocka_unit_test(double_star_forms),
		cmocka_unit_test(many_stars_do_not_retry_every_split),
		cmocka_unit_test(question_mark_and_classes),
		cmocka_unit_test(escapes_comments_and_spaces),
		cmocka_unit_test(negation_and_last_match),
		cmocka_unit_test(crlf_and_bom),
		cmocka_unit_test(builtins_keep_azure_jobs_scripts),
		cmocka_unit_test(sources_concatenate_in_order),
		cmocka_unit_test(malformed_patterns_are_errors),
		cmocka_unit_test(root_file_errors_name_the_file),
		cmocka_unit_test(out_of_memory_is_clean),
		cmocka_unit_test(git_agrees_on_random_trees),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
