#define _GNU_SOURCE
#include "code_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "support.h"

extern char **environ;

char *aj_test_mkdtemp(void)
{
	const char *base = getenv("TMPDIR");
	char *path = aj_test_join(base && *base ? base : "/tmp", "aj-test-XXXXXX");

	if (!mkdtemp(path))
		fail_msg("mkdtemp %s: %s", path, strerror(errno));
	return path;
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP) {
		chmod(path, 0700);
		return rmdir(path);
	}
	return unlink(path);
}

int aj_test_rm_rf(const char *path)
{
	return nftw(path, rm_one, 64, FTW_DEPTH | FTW_PHYS);
}

char *aj_test_join(const char *dir, const char *rel)
{
	size_t a = strlen(dir), b = strlen(rel);
	char *s = malloc(a + b + 2);

	if (!s)
		fail_msg("out of memory");
	memcpy(s, dir, a);
	s[a] = '/';
	memcpy(s + a + 1, rel, b + 1);
	return s;
}

static void make_parents(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", path, strerror(errno));
		*p = '/';
	}
}

void aj_test_mkdir(const char *dir, const char *rel)
{
	char *path = aj_test_join(dir, rel);

	make_parents(path);
	if (mkdir(path, 0755) && errno != EEXIST)
		fail_msg("mkdir %s: %s", path, strerror(errno));
	free(path);
}

void aj_test_write(const char *dir, const char *rel, const void *data,
		   size_t len, mode_t mode)
{
	char *path = aj_test_join(dir, rel);
	int fd;

	make_parents(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		fail_msg("write %s: %s", path, strerror(errno));
	fchmod(fd, mode);
	close(fd);
	free(path);
}

int aj_test_run(char *const argv[], const char *in_path,
		char *const envp[], char **out, size_t *out_len)
{
	posix_spawn_file_actions_t fa;
	int pipefd[2], status = -1;
	pid_t pid;
	char *buf = NULL;
	size_t len = 0, alloc = 0;

	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, in_path ? in_path : "/dev/null",
					 O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv,
			 envp ? envp : environ)) {
		posix_spawn_file_actions_destroy(&fa);
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(pipefd[1]);
	for (;;) {
		ssize_t r;

		if (len + 4096 + 1 > alloc) {
			alloc = alloc ? alloc * 2 : 65536;
			buf = realloc(buf, alloc);
			if (!buf)
				fail_msg("out of memory");
		}
		r = read(pipefd[0], buf + len, alloc - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(pipefd[0]);
	if (waitpid(pid, &status, 0) < 0)
		status = -1;
	else
		status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	if (out) {
		if (!buf)
			buf = calloc(1, 1);
		buf[len] = '\0';
		*out = buf;
		if (out_len)
			*out_len = len;
	} else {
		free(buf);
	}
	return status;
}
