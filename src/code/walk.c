#include "code/walk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "code/ignore.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

struct walker {
	const struct aj_ignore *ig;
	unsigned flags;
	aj_walk_fn fn;
	void *data;
	struct aj_errors *e;
	char path[AJ_WALK_PATH_MAX + 1];
};

/* One directory entry; names live in a per-directory arena. */
struct dent {
	size_t off;
	size_t len;
	const char *name;
	struct stat st;
};

static int dent_cmp(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int c = memcmp(x->name, y->name, n);
	unsigned char cx, cy;

	if (c)
		return c;
	/* A directory sorts as if its name ended in '/'. */
	cx = x->len > n ? (unsigned char)x->name[n] : S_ISDIR(x->st.st_mode) ? '/' : 0;
	cy = y->len > n ? (unsigned char)y->name[n] : S_ISDIR(y->st.st_mode) ? '/' : 0;
	return (int)cx - (int)cy;
}

static const char *special_kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "fifo";
	if (S_ISSOCK(mode))
		return "socket";
	if (S_ISCHR(mode))
		return "character device";
	if (S_ISBLK(mode))
		return "block device";
	return "unknown file type";
}

static int path_error(struct walker *w, size_t len, const char *what, int err)
{
	struct aj_where where = { NULL, 0, 0, NULL };

	w->path[len] = '\0';
	where.file = len ? w->path : ".";
	return aj_errors_add(w->e, &where, "%s: %s", what, strerror(err));
}

/*
 * Read and lstat every entry of the open directory d (path w->path[0..base)),
 * sorted. Entries that vanish meanwhile are left out.
 */
static int read_entries(struct walker *w, DIR *d, size_t base,
			struct dent **out, size_t *nr_out, struct aj_buf *names)
{
	struct dent *ents = NULL;
	size_t nr = 0, alloc = 0, i;
	int fd = dirfd(d);

	for (;;) {
		struct dirent *de;
		size_t len;

		errno = 0;
		de = readdir(d);
		if (!de) {
			if (errno) {
				aj_free(ents);
				return path_error(w, base, "cannot read directory", errno);
			}
			break;
		}
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		len = strlen(de->d_name);
		if (AJ_GROW(ents, nr + 1, alloc) || aj_buf_add(names, de->d_name, len + 1)) {
			aj_free(ents);
			return aj_errors_oom(w->e);
		}
		if (fstatat(fd, de->d_name, &ents[nr].st, AT_SYMLINK_NOFOLLOW)) {
			if (errno == ENOENT)
				continue;
			aj_free(ents);
			return aj_errors_add(w->e, NULL, "%.*s%s%s: cannot stat: %s",
					     (int)base, w->path, base ? "/" : "",
					     de->d_name, strerror(errno));
		}
		ents[nr].off = names->len - len - 1;
		ents[nr].len = len;
		nr++;
	}
	for (i = 0; i < nr; i++)
		ents[i].name = names->buf + ents[i].off;
	if (nr > 1)
		qsort(ents, nr, sizeof(*ents), dent_cmp);
	*out = ents;
	*nr_out = nr;
	return 0;
}

static int walk_dir(struct walker *w, int fd, size_t base,
		    const struct aj_ignore_rule *excluded_by);

static int visit(struct walker *w, int fd, size_t base, const struct dent *de,
		 const struct aj_ignore_rule *excluded_by)
{
	struct aj_walk_entry ent;
	size_t len = base + (base ? 1 : 0) + de->len;
	mode_t mode = de->st.st_mode;

	if (len > AJ_WALK_PATH_MAX)
		return aj_errors_add(w->e, NULL,
				     "%.*s/%s: path too long (%zu bytes, limit %u)",
				     (int)base, w->path, de->name, len,
				     AJ_WALK_PATH_MAX);
	if (base)
		w->path[base] = '/';
	memcpy(w->path + len - de->len, de->name, de->len + 1);

	memset(&ent, 0, sizeof(ent));
	ent.path = w->path;
	ent.len = len;
	ent.name = w->path + len - de->len;
	ent.dirfd = fd;
	ent.st = &de->st;
	ent.type = S_ISREG(mode) ? AJ_WALK_FILE : S_ISDIR(mode) ? AJ_WALK_DIR :
		S_ISLNK(mode) ? AJ_WALK_SYMLINK : AJ_WALK_SPECIAL;
	if (excluded_by) {
		ent.rule = excluded_by;
		ent.ignored = 1;
	} else {
		ent.rule = aj_ignore_match(w->ig, w->path, len, ent.type == AJ_WALK_DIR);
		ent.ignored = aj_ignore_excludes(ent.rule);
	}
	if (ent.type == AJ_WALK_SPECIAL && !ent.ignored)
		ent.skipped = special_kind(mode);
	if (w->fn(&ent, w->data, w->e))
		return -1;

	if (ent.type == AJ_WALK_DIR &&
	    (!ent.ignored || (w->flags & AJ_WALK_DESCEND_IGNORED))) {
		int child = openat(fd, de->name,
				   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (child < 0) {
			/* Counting excluded content is best effort. */
			if (ent.ignored)
				return 0;
			return path_error(w, len, "cannot open directory", errno);
		}
		return walk_dir(w, child, len, ent.ignored ? ent.rule : NULL);
	}
	return 0;
}

/* Walk the directory open as fd (closed here), whose path is w->path[0..base). */
static int walk_dir(struct walker *w, int fd, size_t base,
		    const struct aj_ignore_rule *excluded_by)
{
	struct aj_buf names = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct dent *ents = NULL;
	size_t nr = 0, i;
	DIR *d = fdopendir(fd);
	int ret = 0;

	if (!d) {
		int err = errno;

		close(fd);
		return path_error(w, base, "cannot read directory", err);
	}
	if (read_entries(w, d, base, &ents, &nr, &names))
		ret = -1;
	for (i = 0; !ret && i < nr; i++)
		ret = visit(w, dirfd(d), base, &ents[i], excluded_by);
	aj_free(ents);
	aj_buf_release(&names);
	closedir(d);
	return ret;
}

int aj_walk(const char *root, const struct aj_ignore *ig, unsigned flags,
	    aj_walk_fn fn, void *data, struct aj_errors *e)
{
	struct walker *w;
	int fd, ret;

	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		struct aj_where where = { root, 0, 0, NULL };

		return aj_errors_add(e, &where, "cannot open directory: %s",
				     strerror(errno));
	}
	w = aj_malloc(sizeof(*w));
	if (!w) {
		close(fd);
		return aj_errors_oom(e);
	}
	w->ig = ig;
	w->flags = flags;
	w->fn = fn;
	w->data = data;
	w->e = e;
	w->path[0] = '\0';
	ret = walk_dir(w, fd, 0, NULL);
	aj_free(w);
	return ret;
}
