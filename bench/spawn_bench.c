/*
 * spawn_bench - whole-process wall times of several commands, started
 * alternately (so load from elsewhere on the machine hits them alike) with
 * posix_spawn, stdout on /dev/null, for bench/render.sh and
 * bench/original.sh.
 *
 *   spawn_bench RUNS [-C DIR] CMD ARGS... [-- [-C DIR] CMD ARGS...]...
 *
 * Each command runs RUNS times (-C: in DIR); a failing run stops the
 * benchmark. Prints one line per command, in order: "p50 p90" in
 * microseconds.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#define MAX_CMDS 8

extern char **environ;

struct cmd {
	char **argv;
	posix_spawn_file_actions_t fa;
	double *t;
};

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double once(struct cmd *c)
{
	struct timespec a, b;
	pid_t pid;
	int st;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (posix_spawn(&pid, c->argv[0], &c->fa, NULL, c->argv, environ) ||
	    waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "%s failed\n", c->argv[0]);
		exit(1);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a.tv_sec) * 1e6 + (double)(b.tv_nsec - a.tv_nsec) / 1e3;
}

int main(int argc, char **argv)
{
	struct cmd cmds[MAX_CMDS];
	long runs, i;
	int n = 0, k, a = 2;

	if (argc < 3 || (runs = strtol(argv[1], NULL, 10)) < 1) {
		fprintf(stderr, "usage: spawn_bench RUNS [-C DIR] CMD ARGS... [-- ...]\n");
		return 2;
	}
	while (a < argc && n < MAX_CMDS) {
		struct cmd *c = &cmds[n++];

		posix_spawn_file_actions_init(&c->fa);
		posix_spawn_file_actions_addopen(&c->fa, 1, "/dev/null", O_WRONLY, 0);
		if (!strcmp(argv[a], "-C") && a + 2 < argc) {
			posix_spawn_file_actions_addchdir_np(&c->fa, argv[a + 1]);
			a += 2;
		}
		c->argv = argv + a;
		while (a < argc && strcmp(argv[a], "--"))
			a++;
		if (a < argc)
			argv[a++] = NULL;   /* ends this command's argv */
		c->t = calloc((size_t)runs, sizeof(*c->t));
		if (!c->t)
			return 1;
	}
	for (i = 0; i < runs; i++)
		for (k = 0; k < n; k++)
			cmds[k].t[i] = once(&cmds[k]);
	for (k = 0; k < n; k++) {
		qsort(cmds[k].t, (size_t)runs, sizeof(double), cmp);
		printf("%.0f %.0f\n", cmds[k].t[runs / 2], cmds[k].t[runs * 9 / 10]);
	}
	return 0;
}
