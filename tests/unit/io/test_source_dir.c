#define _XOPEN_SOURCE 700

#include "support.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"
#include "core/source.h"
#include "core/strlist.h"
#include "core/yaml.h"
#include "io/source_dir.h"

static char home[64];

static void put(const char *rel, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", home, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void sub(const char *rel, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", home, rel);
}

static int setup(void **state)
{
	char path[256];

	(void)state;
	snprintf(home, sizeof(home), "/tmp/aj-source-dir-XXXXXX");
	if (!mkdtemp(home))
		return -1;
	sub("template", path, sizeof(path));
	mkdir(path, 0755);
	sub("template/folder.yaml", path, sizeof(path));
	mkdir(path, 0755);
	sub("storage", path, sizeof(path));
	mkdir(path, 0755);
	put("template/gpu.yaml", "base: [common]\nconfig:\n  target: {name: gpu01}\n");
	put("template/common.yaml", "config: {code: {local_dir: .}}\n");
	put("template/broken.yaml", "config:\n  a: [1,\n");
	put("template/empty.yaml", "");
	put("template/notes.txt", "not a template\n");
	put("template/bad name.yaml", "config: {}\n");
	put("storage/default.yaml", "config: {}\n");
	sub("template/fifo.yaml", path, sizeof(path));
	mkfifo(path, 0644);
	sub("template/link.yaml", path, sizeof(path));
	if (symlink("gpu.yaml", path))
		return -1;
	return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	(void)state;
	return nftw(home, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static struct aj_source open_home(void)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_source s;

	assert_int_equal(aj_source_dir_init(&s, home, ".azure_jobs", &err), 0);
	return s;
}

static int read_name(struct aj_source *s, const char *name, struct aj_node **doc,
		     char **display, struct aj_errors *err)
{
	return s->ops->read(s->ctx, name, doc, display, err);
}

static void reads_a_file_by_canonical_name(void **state)
{
	struct aj_source s = open_home();
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *doc = NULL;
	char *display = NULL;

	(void)state;
	assert_int_equal(read_name(&s, "template/gpu", &doc, &display, &err), 0);
	assert_string_equal(display, ".azure_jobs/template/gpu.yaml");
	assert_string_equal(aj_node_at(doc, "config.target.name")->str, "gpu01");
	assert_string_equal(doc->pos.file->name, ".azure_jobs/template/gpu.yaml");
	assert_int_equal(aj_node_at(doc, "config.target.name")->pos.line, 3);
	aj_node_free(doc);
	aj_free(display);
	/* A symbolic link to a regular file reads like the file. */
	assert_int_equal(read_name(&s, "template/link", &doc, &display, &err), 0);
	assert_string_equal(display, ".azure_jobs/template/link.yaml");
	assert_string_equal(aj_node_at(doc, "config.target.name")->str, "gpu01");
	aj_node_free(doc);
	aj_free(display);
	/* An empty file is a NULL document. */
	doc = (struct aj_node *)&err;
	assert_int_equal(read_name(&s, "template/empty", &doc, &display, &err), 0);
	assert_null(doc);
	aj_free(display);
	assert_true(aj_errors_empty(&err));
	aj_source_release(&s);
}

static void missing_files_are_not_found(void **state)
{
	struct aj_source s = open_home();
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *doc = NULL;
	char *display = NULL;

	(void)state;
	assert_int_equal(read_name(&s, "template/nope", &doc, &display, &err),
			 AJ_SOURCE_NOT_FOUND);
	assert_int_equal(read_name(&s, "nofolder/x", &doc, &display, &err),
			 AJ_SOURCE_NOT_FOUND);
	/* A path through a regular file (ENOTDIR) is missing too. */
	assert_int_equal(read_name(&s, "template/gpu.yaml/x", &doc, &display, &err),
			 AJ_SOURCE_NOT_FOUND);
	assert_true(aj_errors_empty(&err));
	assert_null(display);
	assert_int_equal(s.ops->describe(s.ctx, "storage/defualt", &display), 0);
	assert_string_equal(display, ".azure_jobs/storage/defualt.yaml");
	aj_free(display);
	aj_source_release(&s);
}

static void expect_read_error(const char *name, const char *fragment)
{
	struct aj_source s = open_home();
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *doc = NULL;
	char *display = NULL;

	assert_int_equal(read_name(&s, name, &doc, &display, &err), -1);
	assert_null(doc);
	assert_null(display);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("expected \"%s\" in: %s", fragment, aj_test_errors_text(&err));
	aj_errors_release(&err);
	aj_source_release(&s);
}

static void unreadable_and_odd_files_fail_clearly(void **state)
{
	char path[256];
	int fd;

	(void)state;
	expect_read_error("template/folder", ".azure_jobs/template/folder.yaml: not a regular file");
	expect_read_error("template/fifo", ".azure_jobs/template/fifo.yaml: not a regular file");
	expect_read_error("template/broken", ".azure_jobs/template/broken.yaml:3:1: invalid YAML");
	expect_read_error("../etc/passwd", "invalid template name \"../etc/passwd\"");
	/* A sparse file just past the cap is refused from its size alone. */
	sub("template/huge.yaml", path, sizeof(path));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)AJ_YAML_MAX_BYTES + 1), 0);
	close(fd);
	expect_read_error("template/huge", ".azure_jobs/template/huge.yaml: file is larger than");
	unlink(path);
	/* Permissions mean nothing to root, so only check them otherwise. */
	if (geteuid() != 0) {
		put("template/secret.yaml", "config: {}\n");
		sub("template/secret.yaml", path, sizeof(path));
		chmod(path, 0);
		expect_read_error("template/secret", ".azure_jobs/template/secret.yaml: Permission denied");
		unlink(path);
	}
}

static void lists_templates_sorted(void **state)
{
	struct aj_source s = open_home();
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_strlist l = AJ_STRLIST_INIT;
	static const char *const want[] = {
		"template/broken", "template/common", "template/empty", "template/gpu",
		"template/link",
	};
	size_t i;

	(void)state;
	assert_int_equal(s.ops->list(s.ctx, "template", &l, &err), 0);
	/* Not listed: the directory, the FIFO, notes.txt, "bad name". */
	assert_int_equal(l.nr, 5);
	for (i = 0; i < 5; i++)
		assert_string_equal(l.items[i], want[i]);
	aj_strlist_release(&l);
	assert_int_equal(s.ops->list(s.ctx, "storage", &l, &err), 0);
	assert_int_equal(l.nr, 1);
	assert_string_equal(l.items[0], "storage/default");
	aj_strlist_release(&l);
	assert_int_equal(s.ops->list(s.ctx, "nothing", &l, &err), 0);
	assert_int_equal(l.nr, 0);
	assert_int_equal(s.ops->list(s.ctx, "../x", &l, &err), -1);
	assert_true(aj_test_errors_contain(&err, "invalid template folder"));
	aj_errors_release(&err);
	aj_source_release(&s);
}

static void survives_every_allocation_failure(void **state)
{
	long n;

	(void)state;
	for (n = 0;; n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_strlist l = AJ_STRLIST_INIT;
		struct aj_source s = { NULL, NULL };
		struct aj_node *doc = NULL;
		char *display = NULL;
		int r;

		aj_alloc_fail_after(n);
		r = aj_source_dir_init(&s, home, ".azure_jobs", &err);
		if (!r)
			r = read_name(&s, "template/gpu", &doc, &display, &err);
		if (!r)
			r = s.ops->list(s.ctx, "template", &l, &err);
		aj_alloc_fail_after(-1);
		aj_node_free(doc);
		aj_free(display);
		aj_source_release(&s);
		if (!r) {
			assert_int_equal(l.nr, 5);
			aj_strlist_release(&l);
			break;
		}
		assert_true(aj_test_errors_contain(&err, "out of memory"));
		aj_strlist_release(&l);
		aj_errors_release(&err);
		assert_true(n < 10000);
	}
	assert_true(n > 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reads_a_file_by_canonical_name),
		cmocka_unit_test(missing_files_are_not_found),
		cmocka_unit_test(unreadable_and_odd_files_fail_clearly),
		cmocka_unit_test(lists_templates_sorted),
		cmocka_unit_test(survives_every_allocation_failure),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
