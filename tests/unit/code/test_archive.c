#define _GNU_SOURCE
#include "support.h"
#include "code_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>

#include "code/archive.h"
#include "code/ignore.h"
#include "code/walk.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

#define BIG_SIZE 600000u

static char long_dir[128], long_file[256];

static unsigned char *big_content(void)
{
	unsigned char *b = malloc(BIG_SIZE);
	unsigned x = 12345;
	size_t i;

	for (i = 0; i < BIG_SIZE; i++) {
		x = x * 1103515245u + 12345u;
		b[i] = (unsigned char)(x >> 16);
	}
	return b;
}

/* The tree every test starts from; see expected_entries for what is kept. */
static char *make_tree(void)
{
	char *root = aj_test_mkdtemp(), *p;
	unsigned char *big = big_content();

	snprintf(long_dir, sizeof(long_dir), "deep/%0110d", 0);
	memset(long_dir + 5, 'd', 110);
	snprintf(long_file, sizeof(long_file), "%s/%0110d", long_dir, 0);
	memset(long_file + strlen(long_dir) + 1, 'f', 110);

	aj_test_write(root, ".codeignore", "*.log\n!keep.log\n/build/\n", 24, 0644);
	aj_test_write(root, ".git/config", "[core]\n", 7, 0644);
	aj_test_write(root, "node_modules/x/y.js", "y", 1, 0644);
	aj_test_write(root, "a.txt", "alpha\n", 6, 0644);
	aj_test_write(root, "a/b.txt", "beta\n", 5, 0600);
	aj_test_write(root, "a/run.sh", "#!/bin/sh\n", 10, 0750);
	aj_test_mkdir(root, "a-b");
	aj_test_write(root, "build/out.o", "o", 1, 0644);
	aj_test_write(root, "src/build/keep.o", "k", 1, 0644);
	aj_test_write(root, "src/x.log", "log", 3, 0644);
	aj_test_write(root, "src/keep.log", "keep", 4, 0644);
	aj_test_write(root, "src/big.bin", big, BIG_SIZE, 0644);
	aj_test_write(root, long_file, "long", 4, 0644);
	p = aj_test_join(root, "src/ldir");
	assert_int_equal(symlink("../a", p), 0);
	free(p);
	p = aj_test_join(root, "src/lout");
	assert_int_equal(symlink("/nonexistent/dir", p), 0);
	free(p);
	p = aj_test_join(root, "fifo");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	free(big);
	return root;
}

struct expected {
	const char *path;     /* NULL: the long path entries */
	unsigned type;
	unsigned perm;
	const char *link;
};

/* In archive order, derived by hand from the byte-order rule. */
static const struct expected expected_entries[] = {
	{ ".codeignore", AE_IFREG, 0644, NULL },
	{ "a-b/", AE_IFDIR, 0755, NULL },
	{ "a.txt", AE_IFREG, 0644, NULL },
	{ "a/", AE_IFDIR, 0755, NULL },
	{ "a/b.txt", AE_IFREG, 0644, NULL },
	{ "a/run.sh", AE_IFREG, 0755, NULL },
	{ "deep/", AE_IFDIR, 0755, NULL },
	{ NULL, AE_IFDIR, 0755, NULL },
	{ NULL, AE_IFREG, 0644, NULL },
	{ "src/", AE_IFDIR, 0755, NULL },
	{ "src/big.bin", AE_IFREG, 0644, NULL },
	{ "src/build/", AE_IFDIR, 0755, NULL },
	{ "src/build/keep.o", AE_IFREG, 0644, NULL },
	{ "src/keep.log", AE_IFREG, 0644, NULL },
	{ "src/ldir", AE_IFLNK, 0777, "../a" },
	{ "src/lout", AE_IFLNK, 0777, "/nonexistent/dir" },
};
#define NR_EXPECTED (sizeof(expected_entries) / sizeof(expected_entries[0]))

static const char *expected_path(size_t i, char *buf, size_t size)
{
	if (expected_entries[i].path)
		return expected_entries[i].path;
	if (expected_entries[i].type == AE_IFDIR)
		snprintf(buf, size, "%s/", long_dir);
	else
		snprintf(buf, size, "%s", long_file);
	return buf;
}

static void load_rules(struct aj_ignore *ig, const char *root)
{
	struct aj_errors e = AJ_ERRORS_INIT;

	aj_ignore_init(ig);
	if (aj_ignore_setup(ig, root, NULL, &e))
		fail_msg("%s", aj_test_errors_text(&e));
	aj_errors_release(&e);
}

/* A path for an archive, in a temp dir of its own (outside the tree). */
static char *new_out(void)
{
	char *dir = aj_test_mkdtemp(), *out = aj_test_join(dir, "out.tgz");

	free(dir);
	return out;
}

static void drop_out(char *out)
{
	*strrchr(out, '/') = '\0';
	aj_test_rm_rf(out);
	free(out);
}

/* Archive root into out_path; returns the result. */
static struct aj_archive_result archive_to(const char *root, const char *out_path)
{
	struct aj_ignore ig;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_archive_result res;
	int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	load_rules(&ig, root);
	if (aj_archive_create(root, &ig, 1, aj_archive_sink_fd, &fd, &res, &e))
		fail_msg("%s", aj_test_errors_text(&e));
	close(fd);
	aj_ignore_release(&ig);
	aj_errors_release(&e);
	return res;
}

static void headers_are_sorted_and_normalised(void **state)
{
	char *root = make_tree(), *out = new_out();
	struct aj_archive_result res = archive_to(root, out);
	struct archive *a = archive_read_new();
	struct archive_entry *ae;
	char buf[300];
	size_t i = 0;

	(void)state;
	assert_int_equal(res.files, 8);
	assert_int_equal(res.dirs, 6);
	assert_int_equal(res.symlinks, 2);
	assert_int_equal(res.skipped, 1);
	assert_int_equal(res.content_bytes, 24 + 6 + 5 + 10 + 4 + BIG_SIZE + 1 + 4);
	archive_read_support_format_tar(a);
	archive_read_support_filter_gzip(a);
	assert_int_equal(archive_read_open_filename(a, out, 65536), ARCHIVE_OK);
	while (archive_read_next_header(a, &ae) == ARCHIVE_OK) {
		const struct expected *x;

		if (i >= NR_EXPECTED)
			fail_msg("extra entry %s", archive_entry_pathname(ae));
		x = &expected_entries[i];
		assert_string_equal(archive_entry_pathname(ae), expected_path(i, buf, sizeof(buf)));
		assert_int_equal(archive_entry_filetype(ae), x->type);
		assert_int_equal(archive_entry_perm(ae), x->perm);
		assert_int_equal(archive_entry_uid(ae), 0);
		assert_int_equal(archive_entry_gid(ae), 0);
		assert_true(!archive_entry_uname(ae) || !*archive_entry_uname(ae));
		assert_true(!archive_entry_gname(ae) || !*archive_entry_gname(ae));
		assert_int_equal(archive_entry_mtime(ae), 0);
		assert_false(archive_entry_atime_is_set(ae));
		assert_false(archive_entry_ctime_is_set(ae));
		if (x->link)
			assert_string_equal(archive_entry_symlink(ae), x->link);
		i++;
	}
	assert_int_equal(i, NR_EXPECTED);
	archive_read_free(a);
	drop_out(out);
	aj_test_rm_rf(root);
	free(root);
}

static void same_bytes(const char *a, const char *b)
{
	size_t la, lb;
	char *x = aj_test_read(a, &la), *y = aj_test_read(b, &lb);

	if (la != lb || memcmp(x, y, la))
		fail_msg("%s and %s differ", a, b);
	free(x);
	free(y);
}

static int count_entries;

static int count_one(const char *path, const struct stat *st, int flag,
		     struct FTW *ftw)
{
	(void)path;
	(void)st;
	(void)flag;
	count_entries += ftw->level > 0;
	return 0;
}

static void tar_extracts_the_same_bytes(void **state)
{
	char *root = make_tree(), *dest = aj_test_mkdtemp();
	char *out = new_out();
	char *argv[] = { (char *)"tar", (char *)"-xzf", out, (char *)"-C", dest, NULL };
	char buf[300], link[64];
	size_t i;

	(void)state;
	archive_to(root, out);
	assert_int_equal(aj_test_spawn(argv, NULL, NULL, NULL, NULL), 0);
	for (i = 0; i < NR_EXPECTED; i++) {
		const char *rel = expected_path(i, buf, sizeof(buf));
		char *src = aj_test_join(root, rel), *dst = aj_test_join(dest, rel);
		struct stat st;
		ssize_t n;

		assert_int_equal(lstat(dst, &st), 0);
		switch (expected_entries[i].type) {
		case AE_IFREG:
			assert_true(S_ISREG(st.st_mode));
			same_bytes(src, dst);
			break;
		case AE_IFDIR:
			assert_true(S_ISDIR(st.st_mode));
			break;
		default:
			assert_true(S_ISLNK(st.st_mode));
			n = readlink(dst, link, sizeof(link) - 1);
			assert_true(n > 0);
			link[n] = '\0';
			assert_string_equal(link, expected_entries[i].link);
		}
		free(src);
		free(dst);
	}
	/* Nothing else came out: no .git, node_modules, build, x.log, fifo. */
	count_entries = 0;
	nftw(dest, count_one, 16, FTW_PHYS);
	assert_int_equal(count_entries, NR_EXPECTED);
	drop_out(out);
	aj_test_rm_rf(root);
	aj_test_rm_rf(dest);
	free(root);
	free(dest);
}

static void touch_all(const char *root)
{
	const char *paths[] = { "a.txt", "a/b.txt", "src/big.bin", "src", "a", "." };
	struct timespec ts[2] = { { 1700000000, 0 }, { 1700000000, 0 } };
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char *p = aj_test_join(root, paths[i]);

		assert_int_equal(utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW), 0);
		free(p);
	}
}

static void digest_is_deterministic(void **state)
{
	char *root = make_tree(), *out = new_out();
	char *argv[] = { (char *)"sha256sum", out, NULL };
	struct aj_archive_result r1, r2, r3, r4;
	char *sum = NULL, *p, *gz;
	size_t len;
	int fd;

	(void)state;
	r1 = archive_to(root, out);
	/* The digest is the SHA-256 of the bytes written, as sha256sum sees it. */
	assert_int_equal(aj_test_spawn(argv, NULL, NULL, &sum, NULL), 0);
	assert_memory_equal(sum, r1.sha256_hex, 64);
	gz = aj_test_read(out, &len);
	assert_int_equal(len, r1.size);
	assert_int_equal((unsigned char)gz[0], 0x1f);
	assert_int_equal((unsigned char)gz[1], 0x8b);
	assert_memory_equal(gz + 4, "\0\0\0\0", 4);   /* no gzip timestamp */
	free(gz);
	free(sum);

	r2 = archive_to(root, out);
	assert_string_equal(r1.sha256_hex, r2.sha256_hex);

	/* Times and non-executable permission bits do not matter... */
	touch_all(root);
	p = aj_test_join(root, "a/b.txt");
	assert_int_equal(chmod(p, 0640), 0);
	free(p);
	r3 = archive_to(root, out);
	assert_string_equal(r1.sha256_hex, r3.sha256_hex);

	/* ...one changed byte does. */
	p = aj_test_join(root, "src/big.bin");
	fd = open(p, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, "\x01", 1, 300000), 1);
	close(fd);
	free(p);
	r4 = archive_to(root, out);
	assert_string_not_equal(r1.sha256_hex, r4.sha256_hex);
	assert_int_equal(r1.content_bytes, r4.content_bytes);

	drop_out(out);
	aj_test_rm_rf(root);
	free(root);
}

static void verify_reads_without_extracting(void **state)
{
	char *root = make_tree(), *out = new_out();
	struct aj_archive_result res = archive_to(root, out);
	struct aj_ignore ig;
	struct aj_errors e = AJ_ERRORS_INIT;
	int fd;

	(void)state;
	load_rules(&ig, root);
	fd = open(out, O_RDONLY);
	if (aj_archive_verify(fd, root, &ig, res.sha256_hex, &e))
		fail_msg("%s", aj_test_errors_text(&e));
	close(fd);

	/* Digest only. */
	fd = open(out, O_RDONLY);
	assert_int_equal(aj_archive_verify(fd, NULL, NULL, res.sha256_hex, &e), 0);
	close(fd);
	fd = open(out, O_RDONLY);
	assert_int_equal(aj_archive_verify(fd, NULL, NULL, "00", &e), -1);
	assert_true(aj_test_errors_contain(&e, "expected 00"));
	close(fd);
	aj_errors_release(&e);

	/* A changed byte in the tree is found and named. */
	aj_test_write(root, "src/keep.log", "KEEP", 4, 0644);
	fd = open(out, O_RDONLY);
	assert_int_equal(aj_archive_verify(fd, root, &ig, NULL, &e), -1);
	assert_true(aj_test_errors_contain(&e, "src/keep.log: archive differs from the tree: content differs"));
	close(fd);
	aj_errors_release(&e);

	/* A new file is missing from the archive. */
	aj_test_write(root, "src/keep.log", "keep", 4, 0644);
	aj_test_write(root, "src/new.py", "n", 1, 0644);
	fd = open(out, O_RDONLY);
	assert_int_equal(aj_archive_verify(fd, root, &ig, NULL, &e), -1);
	assert_true(aj_test_errors_contain(&e, "src/new.py: archive differs from the tree"));
	close(fd);

	drop_out(out);
	aj_ignore_release(&ig);
	aj_errors_release(&e);
	aj_test_rm_rf(root);
	free(root);
}

static int collect(const struct aj_walk_entry *ent, void *data, struct aj_errors *e)
{
	struct aj_buf *b = data;

	(void)e;
	aj_buf_addf(b, "%s%s %d%s%s\n", ent->path, ent->type == AJ_WALK_DIR ? "/" : "",
		    ent->ignored, ent->type == AJ_WALK_SYMLINK ? " link" : "",
		    ent->skipped ? ent->skipped : "");
	return 0;
}

static void walk_reports_in_order(void **state)
{
	char *root = aj_test_mkdtemp(), *p;
	struct aj_ignore ig;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct sockaddr_un sa;
	int fd;

	(void)state;
	aj_test_write(root, "b", "", 0, 0644);
	aj_test_write(root, "a.c", "", 0, 0644);
	aj_test_write(root, "a/z", "", 0, 0644);
	aj_test_write(root, "A", "", 0, 0644);
	aj_test_write(root, "node_modules/m.js", "", 0, 0644);
	aj_test_write(root, "\xc3\xa9", "", 0, 0644);
	p = aj_test_join(root, "ln");
	assert_int_equal(symlink("a", p), 0);
	free(p);
	p = aj_test_join(root, "pipe");
	assert_int_equal(mkfifo(p, 0644), 0);
	free(p);
	p = aj_test_join(root, "sock");
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	assert_true(strlen(p) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, p, strlen(p));
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(fd);
	free(p);
	load_rules(&ig, root);
	assert_int_equal(aj_walk(root, &ig, 0, collect, &b, &e), 0);
	assert_string_equal(aj_buf_cstr(&b),
			    "A 0\n" "a.c 0\n" "a/ 0\n" "a/z 0\n" "b 0\n" "ln 0 link\n"
			    "node_modules/ 1\n" "pipe 0fifo\n" "sock 0socket\n" "\xc3\xa9 0\n");
	aj_buf_reset(&b);
	assert_int_equal(aj_walk(root, &ig, AJ_WALK_DESCEND_IGNORED, collect, &b, &e), 0);
	assert_non_null(strstr(aj_buf_cstr(&b), "node_modules/ 1\nnode_modules/m.js 1\n"));
	aj_buf_release(&b);
	aj_ignore_release(&ig);
	aj_errors_release(&e);
	aj_test_rm_rf(root);
	free(root);
}

static void path_too_long_is_named(void **state)
{
	char *root = aj_test_mkdtemp();
	char name[251];
	struct aj_ignore ig;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_archive_result res;
	int i, fd = open(root, O_RDONLY | O_DIRECTORY);

	(void)state;
	memset(name, 'n', 250);
	name[250] = '\0';
	/* 17 levels of 250 bytes: past the 4095-byte limit. */
	for (i = 0; i < 17; i++) {
		int next;

		assert_int_equal(mkdirat(fd, name, 0755), 0);
		next = openat(fd, name, O_RDONLY | O_DIRECTORY);
		assert_true(next >= 0);
		close(fd);
		fd = next;
	}
	close(fd);
	load_rules(&ig, root);
	assert_int_equal(aj_archive_create(root, &ig, 1, NULL, NULL, &res, &e), -1);
	assert_true(aj_test_errors_contain(&e, "/nnnnnnnnnn"));
	assert_true(aj_test_errors_contain(&e, ": path too long (4266 bytes, limit 4095)"));
	aj_ignore_release(&ig);
	aj_errors_release(&e);
	aj_test_rm_rf(root);
	free(root);
}

/* Sink that changes src/big.bin once archiving is well into it. */
struct changer {
	char *path;
	int grow;
	int done;
	uint64_t seen;
};

static int change_file(void *data, const void *buf, size_t len, struct aj_errors *e)
{
	struct changer *c = data;

	(void)buf;
	(void)e;
	c->seen += len;
	if (!c->done && c->seen > 65536) {
		c->done = 1;
		if (c->grow) {
			int fd = open(c->path, O_WRONLY | O_APPEND);

			assert_int_equal(write(fd, "more", 4), 4);
			close(fd);
		} else {
			assert_int_equal(truncate(c->path, 1000), 0);
		}
	}
	return 0;
}

static void file_changing_size_is_an_error(void **state)
{
	int grow;

	(void)state;
	for (grow = 0; grow < 2; grow++) {
		char *root = make_tree();
		struct changer c = { NULL, grow, 0, 0 };
		struct aj_ignore ig;
		struct aj_errors e = AJ_ERRORS_INIT;
		struct aj_archive_result res;

		c.path = aj_test_join(root, "src/big.bin");
		load_rules(&ig, root);
		assert_int_equal(aj_archive_create(root, &ig, 1, change_file, &c, &res, &e), -1);
		if (!aj_test_errors_contain(&e, grow ?
					    "src/big.bin: changed size while archiving (grew)" :
					    "src/big.bin: changed size while archiving (shrank)"))
			fail_msg("got: %s", aj_test_errors_text(&e));
		aj_ignore_release(&ig);
		aj_errors_release(&e);
		aj_test_rm_rf(root);
		free(root);
		free(c.path);
	}
}

static void unopenable_file_is_named(void **state)
{
	char *root = aj_test_mkdtemp();
	struct aj_ignore ig;
	struct aj_errors e = AJ_ERRORS_INIT;
	struct aj_archive_result res;
	struct rlimit old, low;
	int probe;

	(void)state;
	aj_test_write(root, "d/e/f.txt", "f", 1, 0644);
	load_rules(&ig, root);
	/*
	 * Works as root too: allow exactly the descriptors the walk needs for
	 * the root, d and d/e, so opening f.txt fails.
	 */
	probe = dup(0);
	close(probe);
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	low.rlim_cur = (rlim_t)probe + 3;
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	assert_int_equal(aj_archive_create(root, &ig, 1, NULL, NULL, &res, &e), -1);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	if (!aj_test_errors_contain(&e, "d/e/f.txt: cannot open: Too many open files"))
		fail_msg("got: %s", aj_test_errors_text(&e));
	aj_ignore_release(&ig);
	aj_errors_release(&e);
	aj_test_rm_rf(root);
	free(root);
}

static void out_of_memory_is_clean(void **state)
{
	char *root = make_tree();
	struct aj_ignore ig;
	struct aj_archive_result want, got;
	struct aj_errors e = AJ_ERRORS_INIT;
	long n;
	int rc = -1;

	(void)state;
	load_rules(&ig, root);
	assert_int_equal(aj_archive_create(root, &ig, 1, NULL, NULL, &want, &e), 0);
	for (n = 0; rc; n++) {
		aj_alloc_fail_after(n);
		rc = aj_archive_create(root, &ig, 1, NULL, NULL, &got, &e);
		aj_alloc_fail_after(-1);
		if (rc) {
			assert_true(e.oom);
			aj_errors_release(&e);
		}
	}
	assert_true(n > 3);
	assert_string_equal(want.sha256_hex, got.sha256_hex);
	aj_ignore_release(&ig);
	aj_test_rm_rf(root);
	free(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(headers_are_sorted_and_normalised),
		cmocka_unit_test(tar_extracts_the_same_bytes),
		cmocka_unit_test(digest_is_deterministic),
		cmocka_unit_test(verify_reads_without_extracting),
		cmocka_unit_test(walk_reports_in_order),
		cmocka_unit_test(path_too_long_is_named),
		cmocka_unit_test(file_changing_size_is_an_error),
		cmocka_unit_test(unopenable_file_is_named),
		cmocka_unit_test(out_of_memory_is_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
