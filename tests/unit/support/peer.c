#include "peer.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "code_fs.h"

extern char **environ;

void aj_test_peer_start(struct aj_test_peer *p, const char *script, char *const *extra)
{
	char path[1024], *argv[40], portfile[1024], port[32];
	size_t n = 0;
	int i;

	p->dir = aj_test_mkdtemp();
	p->log = aj_test_join(p->dir, "log");
	snprintf(path, sizeof(path), "%s/tests/peers/%s", AJ_SOURCE_DIR, script);
	snprintf(portfile, sizeof(portfile), "%s/port", p->dir);
	argv[n++] = (char *)"python3";
	argv[n++] = path;
	argv[n++] = (char *)"--port-file";
	argv[n++] = portfile;
	argv[n++] = (char *)"--log";
	argv[n++] = p->log;
	argv[n++] = (char *)"--dir";
	argv[n++] = p->dir;
	while (extra && *extra && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *extra++;
	argv[n] = NULL;
	assert_int_equal(posix_spawnp(&p->pid, "python3", NULL, NULL, argv, environ), 0);
	for (i = 0; i < 1200; i++) {
		struct timespec ts = { 0, 25 * 1000 * 1000 };
		FILE *f = fopen(portfile, "r");

		if (f) {
			int ok = fgets(port, sizeof(port), f) != NULL;

			fclose(f);
			if (ok && (p->port = (int)strtol(port, NULL, 10)) > 0)
				return;
		}
		nanosleep(&ts, NULL);
	}
	fail_msg("peer %s did not start", script);
}

void aj_test_peer_stop(struct aj_test_peer *p)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };
	int status, i;

	kill(p->pid, SIGTERM);
	while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
		;
	/* python3 may be a launcher whose interpreter outlives it for a moment */
	for (i = 0; i < 50 && (aj_test_rm_rf(p->dir) || !access(p->dir, F_OK)); i++)
		nanosleep(&ts, NULL);
	free(p->dir);
	free(p->log);
}

void aj_test_make_cert(const char *dir, const char *name)
{
	char key[1024], crt[1024];
	char *argv[] = {
		(char *)"openssl", (char *)"req", (char *)"-x509", (char *)"-newkey", (char *)"ec",
		(char *)"-pkeyopt", (char *)"ec_paramgen_curve:prime256v1", (char *)"-nodes",
		(char *)"-keyout", key, (char *)"-out", crt, (char *)"-days", (char *)"1",
		(char *)"-subj", (char *)"/CN=127.0.0.1", (char *)"-addext",
		(char *)"subjectAltName=IP:127.0.0.1", NULL
	};

	snprintf(key, sizeof(key), "%s/%s.key", dir, name);
	snprintf(crt, sizeof(crt), "%s/%s.crt", dir, name);
	assert_int_equal(aj_test_spawn(argv, NULL, NULL, NULL, NULL), 0);
}
