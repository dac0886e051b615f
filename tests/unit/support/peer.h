/*
 * peer.h - loopback peers for unit tests: python3 tests/peers/NAME.py,
 * started in a fresh temporary directory with the arguments every peer
 * takes (--port-file, --log, --dir) and waited for until it wrote its port;
 * and the self-signed certificates peers serve TLS with.
 *
 * Ownership: aj_test_peer_stop() ends the peer, removes its directory and
 * frees the paths.
 */
#ifndef AJ_TEST_PEER_H
#define AJ_TEST_PEER_H

#include <sys/types.h>

struct aj_test_peer {
	pid_t pid;
	char *dir;    /* the peer's directory (--dir) */
	char *log;    /* its request log, one JSON object a line (--log) */
	int port;
};

/* script is the file name in tests/peers; extra is NULL-terminated. Fails the test on error. */
void aj_test_peer_start(struct aj_test_peer *p, const char *script, char *const *extra);
void aj_test_peer_stop(struct aj_test_peer *p);

/* A self-signed certificate for 127.0.0.1 in dir: NAME.crt, NAME.key. */
void aj_test_make_cert(const char *dir, const char *name);

#endif
