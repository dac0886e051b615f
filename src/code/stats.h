/*
 * stats.h - what a code upload would contain (`aj code stats -t NAME`).
 *
 * One walk that also enters excluded directories counts, for a code tree and
 * its ignore rules: the files and bytes shipped, the files and bytes left out
 * per deciding rule (its source, line and pattern), the special files
 * skipped, the largest files and directories shipped; optionally a second
 * pass builds the archive (discarding it) for its size and SHA-256.
 *
 * Ownership: the stats own their path strings; rule pointers borrow from the
 * struct aj_ignore used to collect them, which must outlive the stats.
 */
#ifndef AJ_CODE_STATS_H
#define AJ_CODE_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "code/archive.h"

struct aj_buf;
struct aj_errors;
struct aj_ignore;
struct aj_ignore_rule;

struct aj_code_rule_count {
	const struct aj_ignore_rule *rule;
	uint64_t files;     /* non-directory entries excluded by this rule */
	uint64_t bytes;
};

struct aj_code_size {
	char *path;
	uint64_t bytes;
};

struct aj_code_skip {
	char *path;
	const char *reason;  /* "fifo", "socket", ... (static) */
};

struct aj_code_stats {
	uint64_t files;          /* regular files shipped */
	uint64_t bytes;
	uint64_t dirs;
	uint64_t symlinks;
	uint64_t ignored_files;  /* non-directory entries left out */
	uint64_t ignored_bytes;
	struct aj_code_rule_count *rules;   /* rules that left something out, in rule order */
	size_t nr_rules;
	struct aj_code_size *largest_files; /* biggest first, ties by path */
	size_t nr_largest_files;
	struct aj_code_size *largest_dirs;  /* shipped bytes below each directory */
	size_t nr_largest_dirs;
	struct aj_code_skip *skipped;
	size_t nr_skipped;
	size_t skipped_alloc;
	int archived;                       /* archive below is set */
	struct aj_archive_result archive;
};

/*
 * Collect stats for root under ig, keeping the `top` largest files and
 * directories; with_archive also builds the archive at gzip `level` for its
 * size and digest. On error the stats are released.
 */
int aj_code_stats_collect(const char *root, const struct aj_ignore *ig,
			  size_t top, int with_archive, int level,
			  struct aj_code_stats *st, struct aj_errors *e);
void aj_code_stats_release(struct aj_code_stats *st);

/* Human-readable report, as `aj code stats` prints it. */
int aj_code_stats_format(const struct aj_code_stats *st, struct aj_buf *out);

#endif
