/*
 * archive.h - the deterministic code archive (tar + gzip) and its digest.
 *
 * The archive holds the walk's included entries (see walk.h) in the walk's
 * sorted order as a pax-restricted tar (plain ustar headers unless a name
 * needs more), gzip-compressed. Everything that could differ between two
 * checkouts of the same tree is fixed: owner uid/gid 0 with empty names,
 * mtime 0, modes 0644 / 0755 (executables, directories) / 0777 (symlinks),
 * no atime, ctime, xattrs or ACLs, no gzip timestamp. The same tree, rules,
 * level and zlib therefore always give the same bytes and the same SHA-256.
 *
 * Files are streamed in fixed chunks and the SHA-256 of the compressed bytes
 * is computed as they are written, so memory use does not grow with the tree.
 *
 * Ownership: the caller owns the sink and its data; results are plain values.
 */
#ifndef AJ_CODE_ARCHIVE_H
#define AJ_CODE_ARCHIVE_H

#include <stddef.h>
#include <stdint.h>

struct aj_errors;
struct aj_ignore;

#define AJ_ARCHIVE_LEVEL_DEFAULT 6

/* Receives the compressed bytes in order; 0, or -1 after adding to e. */
typedef int (*aj_archive_sink)(void *data, const void *buf, size_t len,
			       struct aj_errors *e);

struct aj_archive_result {
	uint64_t files;
	uint64_t dirs;
	uint64_t symlinks;
	uint64_t skipped;        /* special files left out */
	uint64_t content_bytes;  /* bytes of file content archived */
	uint64_t size;           /* compressed archive bytes */
	unsigned char sha256[32];
	char sha256_hex[65];
};

/*
 * Archive `root` under the rules `ig` with gzip `level` (1-9, 0 for the
 * default), handing the bytes to sink (NULL: only size and digest). On error
 * (unreadable file, path too long, a file changing size while read, the sink
 * failing) returns -1 naming the path; whatever reached the sink is garbage.
 */
int aj_archive_create(const char *root, const struct aj_ignore *ig, int level,
		      aj_archive_sink sink, void *sink_data,
		      struct aj_archive_result *res, struct aj_errors *e);

/* A sink writing to the file descriptor pointed to by data (an int *). */
int aj_archive_sink_fd(void *data, const void *buf, size_t len,
		       struct aj_errors *e);

/*
 * Check an archive read from fd without extracting it: its SHA-256 must be
 * sha256_hex (when not NULL) and, when root is not NULL, its entries must be
 * exactly what aj_archive_create would write for root under ig (same paths,
 * types, modes, link targets and bytes). Reports the first difference.
 */
int aj_archive_verify(int fd, const char *root, const struct aj_ignore *ig,
		      const char *sha256_hex, struct aj_errors *e);

#endif
