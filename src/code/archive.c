#include "code/archive.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <archive.h>
#include <archive_entry.h>
/*
 * OpenSSL's low-level SHA-256 (SHA256_Init/Update/Final), not EVP: EVP sets
 * up the provider machinery on first use (about 6 M instructions, reading
 * openssl.cnf), more than a whole `aj render`; these run the same assembly
 * (SHA extensions where the CPU has them) with no set-up, and link
 * statically into the offline aj (src/CMakeLists.txt). Deprecated in
 * OpenSSL 3.0, still part of its API.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>

#include "code/ignore.h"
#include "code/walk.h"
#include "core/alloc.h"
#include "core/error.h"

#define CHUNK (256u * 1024u)
#define LINK_MAX_LEN 4096u

/*
 * What the archive holds for one walk entry: the normalised header and, for
 * a regular file, the open file to stream.
 */
struct item {
	unsigned type;        /* AE_IFREG, AE_IFDIR, AE_IFLNK */
	unsigned perm;
	int64_t size;
	int fd;               /* regular files; -1 otherwise */
	char link[LINK_MAX_LEN];
};

/* "path: what[: detail]" */
static int entry_error(const struct aj_walk_entry *ent, struct aj_errors *e,
		       const char *what, const char *detail)
{
	struct aj_where w = { ent->path, 0, 0, NULL };

	if (detail)
		return aj_errors_add(e, &w, "%s: %s", what, detail);
	return aj_errors_add(e, &w, "%s", what);
}

/* Fill it for an included, archivable entry (files are opened). */
static int item_open(const struct aj_walk_entry *ent, struct item *it,
		     struct aj_errors *e)
{
	struct stat st;
	ssize_t n;

	it->fd = -1;
	it->size = 0;
	switch (ent->type) {
	case AJ_WALK_DIR:
		it->type = AE_IFDIR;
		it->perm = 0755;
		return 0;
	case AJ_WALK_SYMLINK:
		it->type = AE_IFLNK;
		it->perm = 0777;
		n = readlinkat(ent->dirfd, ent->name, it->link, sizeof(it->link));
		if (n < 0)
			return entry_error(ent, e, "cannot read symlink", strerror(errno));
		if ((size_t)n >= sizeof(it->link))
			return entry_error(ent, e, "symlink target too long", NULL);
		it->link[n] = '\0';
		return 0;
	default:
		break;
	}
	it->type = AE_IFREG;
	it->fd = openat(ent->dirfd, ent->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (it->fd < 0)
		return entry_error(ent, e, "cannot open", strerror(errno));
	if (fstat(it->fd, &st) || !S_ISREG(st.st_mode)) {
		close(it->fd);
		it->fd = -1;
		return entry_error(ent, e, "changed type while archiving", NULL);
	}
	it->perm = (st.st_mode & 0111) ? 0755 : 0644;
	it->size = st.st_size;
	return 0;
}

static void item_close(struct item *it)
{
	if (it->fd >= 0)
		close(it->fd);
	it->fd = -1;
}

/*
 * Read the next chunk of a file declared as it->size bytes, *done bytes
 * already read. Returns the chunk length (0 at the declared end), or -1: a
 * read error, or a file that got shorter or longer than declared.
 */
static ssize_t item_read(const struct aj_walk_entry *ent, struct item *it,
			 char *buf, int64_t *done, struct aj_errors *e)
{
	size_t want = CHUNK;
	char extra;
	ssize_t n;

	if (it->size - *done < (int64_t)want)
		want = (size_t)(it->size - *done);
	if (!want) {
		do
			n = read(it->fd, &extra, 1);
		while (n < 0 && errno == EINTR);
		if (n > 0)
			return entry_error(ent, e, "changed size while archiving (grew)", NULL);
		return n < 0 ? entry_error(ent, e, "cannot read", strerror(errno)) : 0;
	}
	do
		n = read(it->fd, buf, want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return entry_error(ent, e, "cannot read", strerror(errno));
	if (n == 0)
		return entry_error(ent, e, "changed size while archiving (shrank)", NULL);
	*done += n;
	return n;
}

static void set_header(struct archive_entry *ae, const struct aj_walk_entry *ent,
		       const struct item *it)
{
	archive_entry_clear(ae);
	archive_entry_copy_pathname(ae, ent->path);
	archive_entry_set_filetype(ae, it->type);
	archive_entry_set_perm(ae, it->perm);
	archive_entry_set_uid(ae, 0);
	archive_entry_set_gid(ae, 0);
	archive_entry_set_mtime(ae, 0, 0);
	archive_entry_set_size(ae, it->size);
	if (it->type == AE_IFLNK)
		archive_entry_copy_symlink(ae, it->link);
}

static void hex_digest(const unsigned char *md, char *hex)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 32; i++) {
		hex[2 * i] = digits[md[i] >> 4];
		hex[2 * i + 1] = digits[md[i] & 15];
	}
	hex[64] = '\0';
}

/*
 * libarchive converts names from the thread's locale to UTF-8 for pax
 * headers (and fails on non-ASCII names in the "C" locale). Pin this thread
 * to C.UTF-8 while an archive object lives, so the bytes never depend on the
 * caller's environment. Thread-local: nothing global changes.
 */
struct locale_pin {
	locale_t utf8;
	locale_t old;
};

static void locale_pin(struct locale_pin *p)
{
	p->utf8 = newlocale(LC_CTYPE_MASK, "C.UTF-8", (locale_t)0);
	p->old = p->utf8 ? uselocale(p->utf8) : (locale_t)0;
}

static void locale_unpin(struct locale_pin *p)
{
	if (!p->utf8)
		return;
	uselocale(p->old);
	freelocale(p->utf8);
}

/* ---- writing ---- */

struct writer {
	struct archive *a;
	struct archive_entry *ae;
	SHA256_CTX md;
	aj_archive_sink sink;
	void *sink_data;
	struct aj_archive_result *res;
	struct aj_errors *e;
	int sink_failed;
	char *buf;
};

static la_ssize_t on_write(struct archive *a, void *data, const void *buf,
			   size_t len)
{
	struct writer *w = data;

	SHA256_Update(&w->md, buf, len);
	w->res->size += len;
	if (w->sink && w->sink(w->sink_data, buf, len, w->e)) {
		w->sink_failed = 1;
		archive_set_error(a, EIO, "output failed");
		return -1;
	}
	return (la_ssize_t)len;
}

static int archive_fail(struct writer *w, const struct aj_walk_entry *ent)
{
	struct aj_where where = { ent ? ent->path : NULL, 0, 0, NULL };

	if (w->sink_failed)
		return -1;   /* the sink said why */
	return aj_errors_add(w->e, &where, "cannot archive: %s",
			     archive_error_string(w->a) ? archive_error_string(w->a)
			     : "unknown libarchive error");
}

static int add_entry(const struct aj_walk_entry *ent, void *data,
		     struct aj_errors *e)
{
	struct writer *w = data;
	struct item it;
	int64_t done = 0;
	int ret = 0;

	if (ent->ignored)
		return 0;
	if (ent->skipped) {
		w->res->skipped++;
		return 0;
	}
	if (item_open(ent, &it, e))
		return -1;
	set_header(w->ae, ent, &it);
	/* ARCHIVE_WARN: a name that is not UTF-8, stored as raw bytes. */
	if (archive_write_header(w->a, w->ae) < ARCHIVE_WARN) {
		item_close(&it);
		return archive_fail(w, ent);
	}
	if (it.type == AE_IFREG) {
		ssize_t n;

		while ((n = item_read(ent, &it, w->buf, &done, e)) > 0) {
			if (archive_write_data(w->a, w->buf, (size_t)n) != n) {
				ret = archive_fail(w, ent);
				break;
			}
		}
		if (n < 0)
			ret = -1;
		w->res->files++;
		w->res->content_bytes += (uint64_t)done;
	} else if (it.type == AE_IFDIR) {
		w->res->dirs++;
	} else {
		w->res->symlinks++;
	}
	item_close(&it);
	return ret;
}

static int writer_setup(struct writer *w, int level)
{
	char lv[4];

	snprintf(lv, sizeof(lv), "%d", level);
	if (archive_write_set_format_pax_restricted(w->a) != ARCHIVE_OK ||
	    archive_write_add_filter_gzip(w->a) != ARCHIVE_OK ||
	    archive_write_set_filter_option(w->a, "gzip", "compression-level", lv) != ARCHIVE_OK ||
	    /* No time in the gzip header: same tree, same bytes. */
	    archive_write_set_filter_option(w->a, "gzip", "timestamp", NULL) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(w->a, 1) != ARCHIVE_OK)
		return -1;
	return archive_write_open2(w->a, w, NULL, on_write, NULL, NULL) == ARCHIVE_OK ? 0 : -1;
}

int aj_archive_create(const char *root, const struct aj_ignore *ig, int level,
		      aj_archive_sink sink, void *sink_data,
		      struct aj_archive_result *res, struct aj_errors *e)
{
	struct writer w;
	struct locale_pin pin;
	int ret = -1;

	memset(res, 0, sizeof(*res));
	memset(&w, 0, sizeof(w));
	if (level == 0)
		level = AJ_ARCHIVE_LEVEL_DEFAULT;
	if (level < 1 || level > 9)
		return aj_errors_add(e, NULL, "gzip level %d out of range 1-9", level);
	w.sink = sink;
	w.sink_data = sink_data;
	w.res = res;
	w.e = e;
	locale_pin(&pin);
	w.buf = aj_malloc(CHUNK);
	SHA256_Init(&w.md);
	w.a = archive_write_new();
	w.ae = archive_entry_new();
	if (!w.buf || !w.a || !w.ae) {
		aj_errors_oom(e);
		goto out;
	}
	if (writer_setup(&w, level)) {
		archive_fail(&w, NULL);
		goto out;
	}
	if (aj_walk(root, ig, 0, add_entry, &w, e))
		goto out;
	if (archive_write_close(w.a) != ARCHIVE_OK) {
		archive_fail(&w, NULL);
		goto out;
	}
	SHA256_Final(res->sha256, &w.md);
	hex_digest(res->sha256, res->sha256_hex);
	ret = 0;
out:
	if (w.a)
		archive_write_free(w.a);
	if (w.ae)
		archive_entry_free(w.ae);
	aj_free(w.buf);
	locale_unpin(&pin);
	return ret;
}

int aj_archive_sink_fd(void *data, const void *buf, size_t len,
		       struct aj_errors *e)
{
	int fd = *(int *)data;
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return aj_errors_add(e, NULL, "cannot write archive: %s",
					     strerror(errno));
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* ---- verifying ---- */

struct reader {
	struct archive *a;
	SHA256_CTX md;
	int fd;
	int read_failed;
	char *in;       /* compressed input */
	char *buf;      /* file bytes ... */
	char *cmp;      /* ... and the archive's, to compare */
	uint64_t entries;
};

static la_ssize_t on_read(struct archive *a, void *data, const void **buf)
{
	struct reader *r = data;
	ssize_t n;

	do
		n = read(r->fd, r->in, CHUNK);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		r->read_failed = 1;
		archive_set_error(a, errno, "cannot read archive");
		return -1;
	}
	SHA256_Update(&r->md, r->in, (size_t)n);
	*buf = r->in;
	return n;
}

static int mismatch(const struct aj_walk_entry *ent, struct aj_errors *e,
		    const char *what)
{
	struct aj_where w = { ent->path, 0, 0, NULL };

	return aj_errors_add(e, &w, "archive differs from the tree: %s", what);
}

/* Compare the archive's file data with the open file, chunk by chunk. */
static int compare_data(struct reader *r, const struct aj_walk_entry *ent,
			struct item *it, struct aj_errors *e)
{
	int64_t done = 0;
	ssize_t n;

	while ((n = item_read(ent, it, r->buf, &done, e)) > 0) {
		ssize_t got = 0;

		while (got < n) {
			la_ssize_t k = archive_read_data(r->a, r->cmp + got,
							 (size_t)(n - got));

			if (k < 0)
				return aj_errors_add(e, NULL, "cannot read archive: %s",
						     archive_error_string(r->a));
			if (k == 0)
				return mismatch(ent, e, "content is shorter");
			got += k;
		}
		if (memcmp(r->buf, r->cmp, (size_t)n))
			return mismatch(ent, e, "content differs");
	}
	return n < 0 ? -1 : 0;
}

static int check_entry(const struct aj_walk_entry *ent, void *data,
		       struct aj_errors *e)
{
	struct reader *r = data;
	struct archive_entry *ae;
	struct item it;
	const char *name;
	size_t len;
	int rc, ret = 0;

	if (ent->ignored || ent->skipped)
		return 0;
	rc = archive_read_next_header(r->a, &ae);
	if (rc == ARCHIVE_EOF)
		return mismatch(ent, e, "missing from the archive");
	if (rc < ARCHIVE_WARN)
		return aj_errors_add(e, NULL, "cannot read archive: %s",
				     archive_error_string(r->a));
	r->entries++;
	name = archive_entry_pathname(ae);
	len = name ? strlen(name) : 0;
	if (len && name[len - 1] == '/')
		len--;
	if (len != ent->len || memcmp(name, ent->path, len))
		return mismatch(ent, e, "a different path is in its place");
	if (item_open(ent, &it, e))
		return -1;
	if (archive_entry_filetype(ae) != it.type ||
	    (unsigned)archive_entry_perm(ae) != it.perm ||
	    archive_entry_uid(ae) || archive_entry_gid(ae) ||
	    archive_entry_mtime(ae) != 0)
		ret = mismatch(ent, e, "type, mode, owner or time differs");
	else if (it.type == AE_IFLNK &&
		 strcmp(archive_entry_symlink(ae) ? archive_entry_symlink(ae) : "", it.link))
		ret = mismatch(ent, e, "symlink target differs");
	else if (archive_entry_size(ae) != it.size)
		ret = mismatch(ent, e, "size differs");
	else if (it.type == AE_IFREG)
		ret = compare_data(r, ent, &it, e);
	item_close(&it);
	return ret;
}

static int verify_stream(struct reader *r, const char *root,
			 const struct aj_ignore *ig, struct aj_errors *e)
{
	struct archive_entry *ae;
	int rc;

	if (root && aj_walk(root, ig, 0, check_entry, r, e))
		return -1;
	while ((rc = archive_read_next_header(r->a, &ae)) == ARCHIVE_OK ||
	       rc == ARCHIVE_WARN) {
		if (root)
			return aj_errors_add(e, NULL, "archive differs from the tree: "
					     "extra entry \"%s\"", archive_entry_pathname(ae));
		if (archive_read_data_skip(r->a) != ARCHIVE_OK)
			break;
	}
	if (rc != ARCHIVE_EOF)
		return aj_errors_add(e, NULL, "cannot read archive: %s",
				     archive_error_string(r->a));
	return 0;
}

int aj_archive_verify(int fd, const char *root, const struct aj_ignore *ig,
		      const char *sha256_hex, struct aj_errors *e)
{
	struct reader r;
	struct locale_pin pin;
	unsigned char md[32];
	char hex[65];
	la_ssize_t n;
	int ret = -1;

	memset(&r, 0, sizeof(r));
	r.fd = fd;
	locale_pin(&pin);
	r.in = aj_malloc(CHUNK);
	r.buf = aj_malloc(CHUNK);
	r.cmp = aj_malloc(CHUNK);
	SHA256_Init(&r.md);
	r.a = archive_read_new();
	if (!r.in || !r.buf || !r.cmp || !r.a) {
		aj_errors_oom(e);
		goto out;
	}
	if (archive_read_support_format_tar(r.a) != ARCHIVE_OK ||
	    archive_read_support_filter_gzip(r.a) != ARCHIVE_OK ||
	    archive_read_open(r.a, &r, NULL, on_read, NULL) != ARCHIVE_OK) {
		aj_errors_add(e, NULL, "cannot read archive: %s",
			      archive_error_string(r.a));
		goto out;
	}
	if (verify_stream(&r, root, ig, e))
		goto out;
	/* Hash whatever the reader left unread (padding). */
	do {
		const void *unused;

		n = on_read(r.a, &r, &unused);
	} while (n > 0);
	if (n < 0) {
		aj_errors_add(e, NULL, "cannot read archive: %s", strerror(errno));
		goto out;
	}
	SHA256_Final(md, &r.md);
	hex_digest(md, hex);
	if (sha256_hex && strcmp(hex, sha256_hex)) {
		aj_errors_add(e, NULL, "archive SHA-256 is %s, expected %s", hex, sha256_hex);
		goto out;
	}
	ret = 0;
out:
	if (r.a)
		archive_read_free(r.a);
	aj_free(r.in);
	aj_free(r.buf);
	aj_free(r.cmp);
	locale_unpin(&pin);
	return ret;
}
