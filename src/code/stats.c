#include "code/stats.h"

#include <string.h>

#include "code/ignore.h"
#include "code/walk.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

/* A directory being summed: its path length in dirpath and bytes so far. */
struct open_dir {
	size_t len;
	uint64_t bytes;
};

struct collector {
	struct aj_code_stats *st;
	const struct aj_ignore *ig;
	size_t top;
	struct aj_code_rule_count *counts;   /* one per rule of ig */
	struct open_dir *dirs;
	size_t nr_dirs;
	size_t dirs_alloc;
	char dirpath[AJ_WALK_PATH_MAX + 1];
};

/* Byte order of a C string and a counted string. */
static int path_cmp(const char *a, const char *b, size_t blen)
{
	size_t alen = strlen(a);
	int c = memcmp(a, b, alen < blen ? alen : blen);

	if (c)
		return c;
	return (alen > blen) - (alen < blen);
}

/* Keep list[0..*nr) the `top` biggest, biggest first, ties by path. */
static int top_add(struct aj_code_size *list, size_t *nr, size_t top,
		   const char *path, size_t len, uint64_t bytes)
{
	size_t i = *nr;
	char *copy;

	if (!top)
		return 0;
	while (i > 0 && (list[i - 1].bytes < bytes ||
			 (list[i - 1].bytes == bytes &&
			  path_cmp(list[i - 1].path, path, len) > 0)))
		i--;
	if (i >= top)
		return 0;
	copy = aj_strndup(path, len);
	if (!copy)
		return -1;
	if (*nr == top) {
		aj_free(list[top - 1].path);
		(*nr)--;
	}
	memmove(list + i + 1, list + i, (*nr - i) * sizeof(*list));
	list[i].path = copy;
	list[i].bytes = bytes;
	(*nr)++;
	return 0;
}

/* Close the innermost open directory, adding its total to its parent. */
static int dir_close(struct collector *c)
{
	struct open_dir d = c->dirs[--c->nr_dirs];

	if (c->nr_dirs)
		c->dirs[c->nr_dirs - 1].bytes += d.bytes;
	return top_add(c->st->largest_dirs, &c->st->nr_largest_dirs, c->top,
		       c->dirpath, d.len, d.bytes);
}

static int under(const struct collector *c, const struct aj_walk_entry *ent)
{
	size_t n = c->dirs[c->nr_dirs - 1].len;

	return ent->len > n && ent->path[n] == '/' && !memcmp(ent->path, c->dirpath, n);
}

static int count_entry(const struct aj_walk_entry *ent, void *data,
		       struct aj_errors *e)
{
	struct collector *c = data;
	struct aj_code_stats *st = c->st;
	uint64_t size = ent->type == AJ_WALK_FILE ? (uint64_t)ent->st->st_size : 0;

	while (c->nr_dirs && !under(c, ent))
		if (dir_close(c))
			return aj_errors_oom(e);
	if (ent->ignored) {
		struct aj_code_rule_count *rc = &c->counts[ent->rule - c->ig->rules];

		if (ent->type != AJ_WALK_DIR) {
			rc->rule = ent->rule;
			rc->files++;
			rc->bytes += size;
			st->ignored_files++;
			st->ignored_bytes += size;
		}
		return 0;
	}
	switch (ent->type) {
	case AJ_WALK_SPECIAL: {
		struct aj_code_skip *s;

		if (AJ_GROW(st->skipped, st->nr_skipped + 1, st->skipped_alloc))
			return aj_errors_oom(e);
		s = &st->skipped[st->nr_skipped];
		s->path = aj_strndup(ent->path, ent->len);
		if (!s->path)
			return aj_errors_oom(e);
		s->reason = ent->skipped;
		st->nr_skipped++;
		return 0;
	}
	case AJ_WALK_SYMLINK:
		st->symlinks++;
		return 0;
	case AJ_WALK_DIR:
		st->dirs++;
		if (AJ_GROW(c->dirs, c->nr_dirs + 1, c->dirs_alloc))
			return aj_errors_oom(e);
		c->dirs[c->nr_dirs].len = ent->len;
		c->dirs[c->nr_dirs].bytes = 0;
		c->nr_dirs++;
		memcpy(c->dirpath, ent->path, ent->len + 1);
		return 0;
	default:
		break;
	}
	st->files++;
	st->bytes += size;
	if (c->nr_dirs)
		c->dirs[c->nr_dirs - 1].bytes += size;
	if (top_add(st->largest_files, &st->nr_largest_files, c->top,
		    ent->path, ent->len, size))
		return aj_errors_oom(e);
	return 0;
}

/* Keep the counts of rules that excluded something, in rule order. */
static int keep_rule_counts(struct collector *c)
{
	struct aj_code_stats *st = c->st;
	size_t i, n = 0;

	for (i = 0; i < c->ig->nr; i++)
		n += c->counts[i].files > 0;
	if (!n)
		return 0;
	st->rules = aj_calloc(n, sizeof(*st->rules));
	if (!st->rules)
		return -1;
	for (i = 0; i < c->ig->nr; i++)
		if (c->counts[i].files)
			st->rules[st->nr_rules++] = c->counts[i];
	return 0;
}

int aj_code_stats_collect(const char *root, const struct aj_ignore *ig,
			  size_t top, int with_archive, int level,
			  struct aj_code_stats *st, struct aj_errors *e)
{
	struct collector *c;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	c = aj_calloc(1, sizeof(*c));
	if (!c)
		return aj_errors_oom(e);
	c->st = st;
	c->ig = ig;
	c->top = top;
	c->counts = aj_calloc(ig->nr ? ig->nr : 1, sizeof(*c->counts));
	st->largest_files = aj_calloc(top ? top : 1, sizeof(*st->largest_files));
	st->largest_dirs = aj_calloc(top ? top : 1, sizeof(*st->largest_dirs));
	if (!c->counts || !st->largest_files || !st->largest_dirs) {
		aj_errors_oom(e);
		goto out;
	}
	if (aj_walk(root, ig, AJ_WALK_DESCEND_IGNORED, count_entry, c, e))
		goto out;
	while (c->nr_dirs)
		if (dir_close(c)) {
			aj_errors_oom(e);
			goto out;
		}
	if (keep_rule_counts(c)) {
		aj_errors_oom(e);
		goto out;
	}
	if (with_archive) {
		if (aj_archive_create(root, ig, level, NULL, NULL, &st->archive, e))
			goto out;
		st->archived = 1;
	}
	ret = 0;
out:
	if (ret)
		aj_code_stats_release(st);
	aj_free(c->counts);
	aj_free(c->dirs);
	aj_free(c);
	return ret;
}

void aj_code_stats_release(struct aj_code_stats *st)
{
	size_t i;

	for (i = 0; i < st->nr_largest_files; i++)
		aj_free(st->largest_files[i].path);
	for (i = 0; i < st->nr_largest_dirs; i++)
		aj_free(st->largest_dirs[i].path);
	for (i = 0; i < st->nr_skipped; i++)
		aj_free(st->skipped[i].path);
	aj_free(st->largest_files);
	aj_free(st->largest_dirs);
	aj_free(st->skipped);
	aj_free(st->rules);
	memset(st, 0, sizeof(*st));
}

/* "1.5 MiB"-style sizes; exact bytes below 1 KiB. */
static int add_size(struct aj_buf *out, uint64_t bytes)
{
	static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	int u = -1;

	if (bytes < 1024)
		return aj_buf_addf(out, "%llu B", (unsigned long long)bytes);
	while (v >= 1024 && u < 3) {
		v /= 1024;
		u++;
	}
	return aj_buf_addf(out, "%.1f %s", v, units[u]);
}

static void add_sizes(struct aj_buf *out, const char *title,
		      const struct aj_code_size *list, size_t nr)
{
	size_t i;

	if (!nr)
		return;
	aj_buf_addf(out, "%s:\n", title);
	for (i = 0; i < nr; i++) {
		aj_buf_addstr(out, "  ");
		add_size(out, list[i].bytes);
		aj_buf_addf(out, "  %s\n", list[i].path);
	}
}

int aj_code_stats_format(const struct aj_code_stats *st, struct aj_buf *out)
{
	size_t i;

	aj_buf_addf(out, "included: %llu files, ", (unsigned long long)st->files);
	add_size(out, st->bytes);
	aj_buf_addf(out, " (%llu directories, %llu symlinks)\n",
		    (unsigned long long)st->dirs, (unsigned long long)st->symlinks);
	aj_buf_addf(out, "ignored: %llu files, ", (unsigned long long)st->ignored_files);
	add_size(out, st->ignored_bytes);
	aj_buf_addch(out, '\n');
	for (i = 0; i < st->nr_rules; i++) {
		const struct aj_code_rule_count *r = &st->rules[i];

		aj_buf_addstr(out, "  ");
		aj_ignore_rule_origin(r->rule, out);
		aj_buf_addf(out, ": %s: %llu files, ", r->rule->text,
			    (unsigned long long)r->files);
		add_size(out, r->bytes);
		aj_buf_addch(out, '\n');
	}
	for (i = 0; i < st->nr_skipped; i++)
		aj_buf_addf(out, "skipped: %s (%s)\n", st->skipped[i].path,
			    st->skipped[i].reason);
	add_sizes(out, "largest files", st->largest_files, st->nr_largest_files);
	add_sizes(out, "largest directories", st->largest_dirs, st->nr_largest_dirs);
	if (st->archived) {
		aj_buf_addstr(out, "archive: ");
		add_size(out, st->archive.size);
		aj_buf_addf(out, " (%llu bytes), sha256 %s\n",
			    (unsigned long long)st->archive.size, st->archive.sha256_hex);
	}
	return out->failed ? -1 : 0;
}
