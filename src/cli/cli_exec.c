/*
 * cli_exec.c - aj: hand a network command to the helper program aj-net.
 *
 * aj itself links no network library, so the offline commands start as
 * fast as a program using libyaml and libcJSON can; the commands that talk
 * to a cluster or to Azure run in aj-net, which has every command and links
 * libcurl, libwebsockets and OpenSSL (git does the same with
 * git-remote-https). aj-net is looked for in $AJ_EXEC_PATH when set, else
 * next to the aj executable (a build tree), else in AJ_NET_DIR relative to
 * it (the installed libexec/aj). It gets aj's arguments unchanged, so it
 * parses them as aj did, and takes over the process: same pid, stdio,
 * signals and exit status.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/buf.h"

#ifndef AJ_NET_DIR
#define AJ_NET_DIR "../libexec/aj"
#endif

#define NET_NAME "aj-net"

/* Try dir/aj-net (dir of len bytes); returns only if it could not run. */
static void try_exec(const char *dir, size_t len, const char *rel, char **words, int *err)
{
	struct aj_buf path = AJ_BUF_INIT(PATH_MAX);

	aj_buf_add(&path, dir, len);
	if (rel)
		aj_buf_addf(&path, "/%s", rel);
	aj_buf_addstr(&path, "/" NET_NAME);
	if (!path.failed) {
		execv(aj_buf_cstr(&path), words);
		if (errno != ENOENT || !*err)
			*err = errno;
	}
	aj_buf_release(&path);
}

int aj_cli_network(const struct aj_cli_command *cmd, const struct aj_cli_opts *o)
{
	const char *env = getenv("AJ_EXEC_PATH");
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int err = 0;

	if (env && *env) {
		try_exec(env, strlen(env), NULL, o->words, &err);
	} else if (n > 0 && (size_t)n < sizeof(self) - 1) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		n = slash ? slash - self : 0;
		try_exec(self, (size_t)n, NULL, o->words, &err);
		try_exec(self, (size_t)n, AJ_NET_DIR, o->words, &err);
	}
	fprintf(stderr, "aj %s: cannot run %s%s%s: %s\n", cmd->name, NET_NAME,
		env && *env ? " in " : "", env && *env ? env : "",
		strerror(err ? err : ENOENT));
	return AJ_EXIT_FAIL;
}
