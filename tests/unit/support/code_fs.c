#define _GNU_SOURCE
#include "code_fs.h"

#include <errno.h>
#include <fcntl.h>
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

int aj_test_rm_rf(const char *path)
{
	/* rm copes with trees deeper than PATH_MAX; nftw does not. */
	char *copy = strdup(path);
	char *argv[] = { (char *)"rm", (char *)"-rf", (char *)"--", copy, NULL };
	int rc = aj_test_spawn(argv, NULL, NULL, NULL, NULL);

	free(copy);
	return rc == 0 ? 0 : -1;
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

char *aj_test_read(const char *path, size_t *len)
{
	struct stat st;
	char *buf;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st))
		fail_msg("open %s: %s", path, strerror(errno));
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		fail_msg("out of memory");
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			fail_msg("read %s: %s", path, strerror(errno));
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
}

int aj_test_spawn(char *const argv[], const char *in_path,
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
