#include "source_dir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/node.h"
#include "core/source.h"
#include "core/strlist.h"
#include "core/yaml.h"

struct dir {
	char *home;
	char *display_home;
};

/* "<root>/<name><suffix>"; NULL on out of memory. */
static char *join(const char *root, const char *name, const char *suffix)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	aj_buf_addf(&b, "%s/%s%s", root, name, suffix);
	return aj_buf_detach(&b, NULL);
}

static int read_error(struct aj_errors *err, const char *display, const char *what)
{
	struct aj_where w = { display, 0, 0, NULL };

	return aj_errors_add(err, &w, "%s", what);
}

static int too_large(struct aj_errors *err, const char *display)
{
	struct aj_where w = { display, 0, 0, NULL };

	return aj_errors_add(err, &w, "file is larger than %u bytes", AJ_YAML_MAX_BYTES);
}

/* Read an open regular file of at most AJ_YAML_MAX_BYTES. */
static int read_all(int fd, const char *display, struct aj_buf *out,
		    struct aj_errors *err)
{
	char chunk[16384];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return read_error(err, display, strerror(errno));
		if (!n)
			return 0;
		/* The file may have grown since fstat(). */
		if ((size_t)n > out->max - out->len)
			return too_large(err, display);
		if (aj_buf_add(out, chunk, (size_t)n))
			return aj_errors_oom(err);
	}
}

static int dir_read(void *ctx, const char *name, struct aj_node **doc,
		    char **display, struct aj_errors *err)
{
	struct dir *d = ctx;
	struct aj_buf text = AJ_BUF_INIT(AJ_YAML_MAX_BYTES);
	char *path, *shown;
	struct stat st;
	int fd, ret;

	if (!aj_canonical_valid(name))
		return aj_errors_add(err, NULL, "invalid template name \"%.80s\"", name);
	path = join(d->home, name, ".yaml");
	shown = join(d->display_home, name, ".yaml");
	if (!path || !shown) {
		aj_free(path);
		aj_free(shown);
		return aj_errors_oom(err);
	}
	/* O_NONBLOCK: a FIFO must not hang the open; it is refused below. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	aj_free(path);
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT || e == ENOTDIR) {
			aj_free(shown);
			return AJ_SOURCE_NOT_FOUND;
		}
		ret = read_error(err, shown, strerror(e));
		aj_free(shown);
		return ret;
	}
	if (fstat(fd, &st))
		ret = read_error(err, shown, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		ret = read_error(err, shown, "not a regular file");
	else if (st.st_size > (off_t)AJ_YAML_MAX_BYTES)
		ret = too_large(err, shown);
	else
		ret = read_all(fd, shown, &text, err);
	close(fd);
	if (!ret)
		ret = aj_yaml_load(text.buf ? text.buf : "", text.len, shown, doc, err);
	aj_buf_release(&text);
	if (ret) {
		aj_free(shown);
		return -1;
	}
	*display = shown;
	return 0;
}

static int is_regular(const char *dirpath, const char *entry)
{
	char *p = join(dirpath, entry, "");
	struct stat st;
	int ok;

	if (!p)
		return -1;
	ok = !stat(p, &st) && S_ISREG(st.st_mode);
	aj_free(p);
	return ok;
}

static int dir_list(void *ctx, const char *folder, struct aj_strlist *out,
		    struct aj_errors *err)
{
	struct dir *d = ctx;
	struct aj_strlist found = AJ_STRLIST_INIT;
	struct aj_where w = { NULL, 0, 0, NULL };
	char *dirpath, *shown;
	struct dirent *de;
	DIR *dh;
	size_t i;
	int ret = 0;

	if (!aj_canonical_valid(folder))
		return aj_errors_add(err, NULL, "invalid template folder \"%.80s\"", folder);
	dirpath = join(d->home, folder, "");
	shown = join(d->display_home, folder, "");
	if (!dirpath || !shown) {
		ret = aj_errors_oom(err);
		goto out;
	}
	w.file = shown;
	dh = opendir(dirpath);
	if (!dh) {
		if (errno != ENOENT)
			ret = aj_errors_add(err, &w, "%s", strerror(errno));
		goto out;
	}
	while (!ret && (errno = 0, de = readdir(dh))) {
		size_t len = strlen(de->d_name);
		char *name;
		int regular;

		if (len <= 5 || strcmp(de->d_name + len - 5, ".yaml"))
			continue;
		name = aj_strndup(de->d_name, len - 5);
		if (!name) {
			ret = aj_errors_oom(err);
			break;
		}
		regular = aj_canonical_valid(name) ? is_regular(dirpath, de->d_name) : 0;
		if (regular < 0 || (regular && aj_strlist_add_owned(&found, join(folder, name, ""))))
			ret = aj_errors_oom(err);
		aj_free(name);
	}
	if (!ret && errno)
		ret = aj_errors_add(err, &w, "%s", strerror(errno));
	closedir(dh);
	aj_strlist_sort(&found);
	for (i = 0; i < found.nr && !ret; i++)
		if (aj_strlist_add(out, found.items[i]))
			ret = aj_errors_oom(err);
out:
	aj_strlist_release(&found);
	aj_free(dirpath);
	aj_free(shown);
	return ret;
}

static int dir_describe(void *ctx, const char *name, char **display)
{
	struct dir *d = ctx;

	*display = join(d->display_home, name, ".yaml");
	return *display ? 0 : -1;
}

static void dir_free(void *ctx)
{
	struct dir *d = ctx;

	if (!d)
		return;
	aj_free(d->home);
	aj_free(d->display_home);
	aj_free(d);
}

static const struct aj_source_ops dir_ops = {
	dir_read, dir_list, dir_describe, dir_free,
};

int aj_source_dir_init(struct aj_source *s, const char *home,
		       const char *display_home, struct aj_errors *err)
{
	struct dir *d = aj_calloc(1, sizeof(*d));

	s->ops = NULL;
	s->ctx = NULL;
	if (!d)
		return aj_errors_oom(err);
	d->home = aj_strdup(home);
	d->display_home = aj_strdup(display_home);
	if (!d->home || !d->display_home) {
		dir_free(d);
		return aj_errors_oom(err);
	}
	s->ops = &dir_ops;
	s->ctx = d;
	return 0;
}
