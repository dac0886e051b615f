#include "support.h"

#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

char *aj_test_run(const char *const argv[], size_t *len)
{
	posix_spawn_file_actions_t fa;
	char *out = NULL;
	size_t n = 0, cap = 0;
	int fds[2], status;
	char *const *args;
	pid_t pid;
	ssize_t r;

	/* posix_spawn takes char *const[] but never writes through it */
	memcpy(&args, &argv, sizeof(args));
	assert_int_equal(pipe(fds), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addclose(&fa, fds[0]);
	posix_spawn_file_actions_addclose(&fa, fds[1]);
	if (posix_spawn(&pid, argv[0], &fa, NULL, args, environ))
		fail_msg("cannot run %s", argv[0]);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	do {
		if (n + 4096 > cap) {
			cap = cap ? cap * 2 : 8192;
			out = realloc(out, cap);
			assert_non_null(out);
		}
		r = read(fds[0], out + n, cap - n);
		if (r > 0)
			n += (size_t)r;
	} while (r > 0);
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		fail_msg("%s exited with status %d", argv[0], status);
	*len = n;
	return out;
}
