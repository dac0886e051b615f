/*
 * storage_secret.c - blobfuse2 mounts from the job's Secret (storage_secret.h).
 */
#include "storage_secret.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "codeship.h"
#include "common.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"

#define STORAGE_NAME_MAX 63
/* aj's own directory: the work directory, the Secret and the blobfuse2 caches */
#define AJ_ROOT "/aj"
#define MOUNT_WAIT_SECONDS 60

static struct aj_where where(const char *path)
{
	struct aj_where w = { NULL, 0, 0, path };

	return w;
}

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int aj_storage_secret_name(const char *job, char out[AJ_STORAGE_SECRET_SIZE])
{
	int n = snprintf(out, AJ_STORAGE_SECRET_SIZE, "%s" AJ_STORAGE_SECRET_SUFFIX, job);

	return n < 0 || n >= AJ_STORAGE_SECRET_SIZE ? -1 : 0;
}

int aj_storage_account_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 3 || n > 24)
		return 0;
	for (i = 0; i < n; i++)
		if (!is_lower_alnum(s[i]))
			return 0;
	return 1;
}

int aj_storage_container_name(const char *s)
{
	size_t n = strlen(s);

	return n >= 3 && !strstr(s, "--") && aj_dns_label(s, 63);
}

/*
 * A storage name becomes a Secret key and a cache directory: letters,
 * digits, '-' and '_', starting with a letter or digit.
 */
static int storage_name(const char *s)
{
	size_t n = strlen(s), i;

	if (!n || n > STORAGE_NAME_MAX || !isalnum((unsigned char)s[0]))
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return 0;
	return 1;
}

/* Absolute, not /, and no empty, "." or ".." component (a trailing '/' is fine). */
static int clean_abs_path(const char *s)
{
	const char *p = s;

	if (s[0] != '/' || !s[1])
		return 0;
	while (*p == '/') {
		size_t n = strcspn(p + 1, "/");

		if (!n)
			return !p[1] && p != s;     /* "//" inside, or a lone "/" */
		if ((n == 1 && p[1] == '.') || (n == 2 && p[1] == '.' && p[2] == '.'))
			return 0;
		p += n + 1;
	}
	return 1;
}

int aj_storage_secret_check(const struct aj_jobspec *spec, struct aj_errors *err)
{
	struct aj_code_volume v;
	int ret = 0, has_volume = aj_code_volume(spec, &v);
	size_t i, k;

	for (i = 0; i < spec->storage_nr; i++) {
		const struct aj_storage *st = &spec->storage[i];
		char path[320];
		struct aj_where w = where(path);
		const char *dir = st->mount_dir;

		snprintf(path, sizeof(path), "config.storage.%s", st->name);
		if (!storage_name(st->name))
			ret = aj_errors_add(err, &w, "storage name \"%s\" must be at most %d letters, "
					    "digits, '-' and '_', starting with a letter or digit",
					    st->name, STORAGE_NAME_MAX);
		snprintf(path, sizeof(path), "config.storage.%s.storage_account_name", st->name);
		if (st->account && !aj_storage_account_name(st->account))
			ret = aj_errors_add(err, &w, "\"%s\" is not a storage account name "
					    "(3-24 lowercase letters and digits)", st->account);
		snprintf(path, sizeof(path), "config.storage.%s.container_name", st->name);
		if (st->container && !aj_storage_container_name(st->container))
			ret = aj_errors_add(err, &w, "\"%s\" is not a container name (3-63 lowercase "
					    "letters, digits and single '-', alphanumeric at both ends)",
					    st->container);
		if (!dir)
			continue;
		snprintf(path, sizeof(path), "config.storage.%s.mount_dir", st->name);
		if (!clean_abs_path(dir)) {
			ret = aj_errors_add(err, &w, "\"%s\" must be an absolute path other than / "
					    "without empty, . or .. components", dir);
			continue;
		}
		if (aj_paths_overlap(dir, AJ_SHM_PATH))
			ret = aj_errors_add(err, &w, "%s overlaps the shared-memory mount " AJ_SHM_PATH, dir);
		if (aj_paths_overlap(dir, AJ_ROOT))
			ret = aj_errors_add(err, &w, "%s overlaps " AJ_ROOT ", which holds the work "
					    "directory " AJ_WORK_DIR ", the storage Secret and caches", dir);
		if (has_volume && aj_paths_overlap(dir, v.mount_dir))
			ret = aj_errors_add(err, &w, "%s overlaps the shared volume %s (%s)", dir,
					    v.pvc, v.mount_dir);
		for (k = 0; k < i; k++)
			if (spec->storage[k].mount_dir &&
			    aj_paths_overlap(dir, spec->storage[k].mount_dir))
				ret = aj_errors_add(err, &w, "%s overlaps storage mount %s (%s)", dir,
						    spec->storage[k].name, spec->storage[k].mount_dir);
	}
	return ret;
}

int aj_storage_secret_script(struct aj_buf *b, const struct aj_jobspec *spec)
{
	struct aj_buf arg = AJ_BUF_INIT(AJ_BUF_SMALL);
	int ret = 0;
	size_t i;

	if (!spec->storage_nr)
		return 0;
	ret = aj_buf_addf(b, "aj_mounted() {\n"
			  "  for _ in $(seq %d); do mountpoint -q \"$1\" && return 0; sleep 1; done\n"
			  "  echo \"aj: storage $2 is not mounted at $1 after %d s\" >&2\n"
			  "  return 1\n"
			  "}\n", MOUNT_WAIT_SECONDS, MOUNT_WAIT_SECONDS);
	for (i = 0; !ret && i < spec->storage_nr; i++) {
		const struct aj_storage *st = &spec->storage[i];

		aj_buf_reset(&arg);
		ret = aj_buf_addf(&arg, AJ_STORAGE_CACHE_DIR "/%s", st->name) ||
		      aj_buf_addstr(b, "mkdir -p ") || aj_shell_quote(b, st->mount_dir) ||
		      aj_buf_addstr(b, " ") || aj_shell_quote(b, aj_buf_cstr(&arg)) ||
		      aj_buf_addstr(b, "\nblobfuse2 mount ") || aj_shell_quote(b, st->mount_dir);
		aj_buf_reset(&arg);
		ret = ret || aj_buf_addf(&arg, "--config-file=" AJ_STORAGE_SECRET_DIR "/%s"
					 AJ_STORAGE_KEY_SUFFIX, st->name) ||
		      aj_buf_addstr(b, " ") || aj_shell_quote(b, aj_buf_cstr(&arg));
		aj_buf_reset(&arg);
		ret = ret || aj_buf_addf(&arg, "--tmp-path=" AJ_STORAGE_CACHE_DIR "/%s", st->name) ||
		      aj_buf_addstr(b, " ") || aj_shell_quote(b, aj_buf_cstr(&arg)) ||
		      aj_buf_addstr(b, "\naj_mounted ") || aj_shell_quote(b, st->mount_dir) ||
		      aj_buf_addstr(b, " ") || aj_shell_quote(b, st->name) || aj_buf_addstr(b, "\n");
	}
	aj_buf_release(&arg);
	return ret ? -1 : 0;
}
