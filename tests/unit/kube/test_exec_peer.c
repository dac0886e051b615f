/*
 * The exec client (kube/exec.c) and the code receive script against
 * tests/peers/exec_peer.py, a loopback WebSocket server that speaks the
 * exec channel protocol and really runs the command here: output and exit
 * codes, stdin to its end (v5 close message), the v4 fallback, fragmented
 * messages, the bearer token, and the upload of a real code archive that
 * succeeds, is skipped when present, and leaves nothing behind when the
 * connection drops mid-stream or a byte is corrupted.
 */
#include "support.h"
#include "code_fs.h"
#include "peer.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dirent.h>
#include <fcntl.h>
#include <openssl/sha.h>

#include "backend/backend.h"
#include "backend/codeship.h"
#include "code/archive.h"
#include "code/ignore.h"
#include "core/alloc.h"
#include "core/error.h"
#include "kube/client.h"
#include "kube/exec.h"

#define TOKEN "peer-token-1"

/* The exec peer, requiring TOKEN; extra arguments NULL-terminated. */
static void peer_start(struct aj_test_peer *p, char *const *extra)
{
	char *argv[24] = { (char *)"--token", (char *)TOKEN };
	size_t n = 2;

	while (extra && *extra && n < sizeof(argv) / sizeof(argv[0]) - 1)
		argv[n++] = *extra++;
	aj_test_peer_start(p, "exec_peer.py", argv);
}

/* Wait until the peer logged that `count` commands exited (it records each). */
static void peer_wait_exited(const struct aj_test_peer *p, int count)
{
	int i;

	for (i = 0; i < 1200; i++) {
		struct timespec ts = { 0, 25 * 1000 * 1000 };
		size_t len;
		char *text = access(p->log, R_OK) ? NULL : aj_test_read(p->log, &len);
		const char *s = text;
		int n = 0;

		while (s && (s = strstr(s, "\"event\": \"exited\""))) {
			n++;
			s++;
		}
		free(text);
		if (n >= count)
			return;
		nanosleep(&ts, NULL);
	}
	fail_msg("the peer's command did not exit");
}

/* A client for the peer; with ca_pem (a file) over TLS trusting only that. */
static void client_ca(struct aj_kube *k, const struct aj_test_peer *p, const char *token, const char *ca_pem)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	char url[64];

	aj_kube_config_init(&cfg);
	snprintf(url, sizeof(url), "%s://127.0.0.1:%d", ca_pem ? "https" : "http", p->port);
	if (ca_pem)
		cfg.ca.data = (unsigned char *)aj_test_read(ca_pem, &cfg.ca.len);
	cfg.server = aj_strdup(url);
	cfg.namespace = aj_strdup("team-a");
	cfg.token = aj_strdup(token);
	assert_int_equal(aj_kube_init(k, &cfg, &err), 0);
	aj_errors_release(&err);
}

static void client(struct aj_kube *k, const struct aj_test_peer *p, const char *token)
{
	client_ca(k, p, token, NULL);
}

struct source {
	const unsigned char *data;
	size_t len, pos, step;
};

static int read_source(void *data, void *buf, size_t cap, size_t *len, struct aj_errors *err)
{
	struct source *s = data;
	size_t n = s->len - s->pos;

	(void)err;
	if (n > cap)
		n = cap;
	if (s->step && n > s->step)
		n = s->step;
	memcpy(buf, s->data + s->pos, n);
	s->pos += n;
	*len = n;
	return 0;
}

/* Run argv in pod team-a/helper; returns aj_exec_run's result. */
static int run(struct aj_kube *k, const char *const *argv, size_t argc, struct source *in,
	       struct aj_exec_result *res, struct aj_errors *err)
{
	struct aj_exec_request r;

	memset(&r, 0, sizeof(r));
	r.ns = "team-a";
	r.pod = "helper";
	r.container = "upload";
	r.argv = argv;
	r.argc = argc;
	r.out_max = 1u << 20;
	r.idle_timeout = 60;
	if (in) {
		r.read = read_source;
		r.read_data = in;
	}
	aj_exec_result_init(res);
	return aj_exec_run(k, &r, res, err);
}

static void output_and_exit_codes(void **state)
{
	static const char *const argv[] = { "sh", "-c", "printf 'out %s' \"$1\"; echo err >&2; exit 4",
					    "x", "a b'c" };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct aj_test_peer p;
	char *log;
	size_t len;

	(void)state;
	peer_start(&p, NULL);
	client(&k, &p, TOKEN);
	if (run(&k, argv, 5, NULL, &res, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_int_equal(res.protocol, 5);
	assert_int_equal(res.exit_code, 4);
	assert_string_equal(aj_buf_cstr(&res.out), "out a b'c");
	assert_string_equal(aj_buf_cstr(&res.err), "err\n");
	aj_exec_result_release(&res);
	/* the request as the peer saw it: path, each argument, container, streams */
	log = aj_test_read(p.log, &len);
	assert_non_null(strstr(log, "\"path\": \"/api/v1/namespaces/team-a/pods/helper/exec\""));
	assert_non_null(strstr(log, "\"command\": [\"sh\", \"-c\", \"printf 'out %s' \\\"$1\\\"; "
			       "echo err >&2; exit 4\", \"x\", \"a b'c\"]"));
	assert_non_null(strstr(log, "\"container\": [\"upload\"]"));
	assert_non_null(strstr(log, "\"stdin\": [\"false\"]"));
	assert_non_null(strstr(log, "\"authorized\": true"));
	free(log);
	aj_kube_release(&k);
	aj_errors_release(&err);
	aj_test_peer_stop(&p);
}

/* Incompressible bytes, different for each seed. */
static unsigned char *pattern(size_t len, uint32_t seed)
{
	unsigned char *d = malloc(len);
	uint32_t x = 2463534242u ^ (seed * 2654435761u);
	size_t i;

	assert_non_null(d);
	for (i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		d[i] = (unsigned char)x;
	}
	return d;
}

static void hex(const unsigned char *md, char out[65])
{
	size_t i;

	for (i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* 1 MiB + 17 bytes in odd-sized pieces reach the command whole; v5 ends stdin. */
static void stdin_to_the_end(void **state)
{
	static const char *const argv[] = { "sha256sum" };
	size_t len = (1u << 20) + 17;
	unsigned char *data = pattern(len, 1), md[32];
	struct source in = { data, len, 0, 4093 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct aj_test_peer p;
	char want[65];

	(void)state;
	SHA256(data, len, md);
	hex(md, want);
	peer_start(&p, NULL);
	client(&k, &p, TOKEN);
	if (run(&k, argv, 1, &in, &res, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.sent, len);
	assert_int_equal(res.out.len, 64 + 4);
	assert_memory_equal(res.out.buf, want, 64);
	aj_exec_result_release(&res);
	aj_kube_release(&k);
	aj_errors_release(&err);
	aj_test_peer_stop(&p);
	free(data);
}

/* A server without v5: v4 is chosen; input of a known length still works. */
static void v4_fallback(void **state)
{
	static char *args[] = { "--protocols", "v4.channel.k8s.io", NULL };
	static const char *const argv[] = { "sh", "-c", "head -c 100000 | wc -c" };
	unsigned char *data = pattern(100000, 2);
	struct source in = { data, 100000, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct aj_test_peer p;

	(void)state;
	peer_start(&p, args);
	client(&k, &p, TOKEN);
	if (run(&k, argv, 3, &in, &res, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_int_equal(res.protocol, 4);
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(strtol(aj_buf_cstr(&res.out), NULL, 10), 100000);
	aj_exec_result_release(&res);
	aj_kube_release(&k);
	aj_errors_release(&err);
	aj_test_peer_stop(&p);
	free(data);
}

/* The peer sends stdout in three fragments, the stream byte alone first. */
static void fragmented_output(void **state)
{
	static const char *const argv[] = { "sh", "-c", "head -c 300000 /dev/zero | tr '\\0' x" };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct aj_test_peer p;
	size_t i;

	(void)state;
	peer_start(&p, NULL);
	client(&k, &p, TOKEN);
	if (run(&k, argv, 3, NULL, &res, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_int_equal(res.exit_code, 0);
	assert_int_equal(res.out.len, 300000);
	for (i = 0; i < res.out.len; i++)
		if (res.out.buf[i] != 'x')
			fail_msg("byte %zu is %d", i, res.out.buf[i]);
	aj_exec_result_release(&res);
	aj_kube_release(&k);
	aj_errors_release(&err);
	aj_test_peer_stop(&p);
}

static void wrong_token_refused(void **state)
{
	static const char *const argv[] = { "true" };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct aj_test_peer p;

	(void)state;
	peer_start(&p, NULL);
	client(&k, &p, "not-the-token");
	assert_int_equal(run(&k, argv, 1, NULL, &res, &err), -1);
	assert_true(aj_test_errors_contain(&err, "exec in pod team-a/helper: the server refused the exec "
					   "upgrade (HTTP 401)"));
	assert_false(aj_test_errors_contain(&err, "not-the-token"));
	aj_exec_result_release(&res);
	aj_kube_release(&k);
	aj_errors_release(&err);
	aj_test_peer_stop(&p);
}

/* Over TLS the server is verified against the kubeconfig's CA, and only that. */
static void tls_verified(void **state)
{
	static const char *const argv[] = { "echo", "over tls" };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct aj_test_peer p;
	char *certs = aj_test_mkdtemp(), crt[1024], key[1024], other[1024];
	char *args[] = { (char *)"--cert", crt, (char *)"--key", key, NULL };

	(void)state;
	aj_test_make_cert(certs, "server");
	aj_test_make_cert(certs, "other");
	snprintf(crt, sizeof(crt), "%s/server.crt", certs);
	snprintf(key, sizeof(key), "%s/server.key", certs);
	snprintf(other, sizeof(other), "%s/other.crt", certs);
	peer_start(&p, args);
	client_ca(&k, &p, TOKEN, crt);
	if (run(&k, argv, 2, NULL, &res, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_string_equal(aj_buf_cstr(&res.out), "over tls\n");
	aj_exec_result_release(&res);
	aj_kube_release(&k);

	client_ca(&k, &p, TOKEN, other);
	assert_int_equal(run(&k, argv, 2, NULL, &res, &err), -1);
	assert_true(aj_test_errors_contain(&err, "exec in pod team-a/helper: cannot connect"));
	aj_exec_result_release(&res);
	aj_kube_release(&k);
	aj_errors_release(&err);
	aj_test_peer_stop(&p);
	aj_test_rm_rf(certs);
	free(certs);
}

/* --- the code receive script, driven through the peer --- */

struct upload {
	char *tree;
	unsigned char *archive;
	size_t len;
	char digest[65];
	char *store;
};

static void upload_init(struct upload *u, const struct aj_test_peer *p)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_strlist none = AJ_STRLIST_INIT;
	struct aj_archive_result res;
	char *path;
	int fd;
	size_t i;

	u->tree = aj_test_mkdtemp();
	aj_test_write(u->tree, "train.py", "print('hi')\n", 12, 0644);
	aj_test_write(u->tree, "run.sh", "#!/bin/sh\n", 10, 0755);
	for (i = 0; i < 20; i++) {
		char name[32];
		unsigned char *blob = pattern(20000 + i, (uint32_t)i + 3);

		snprintf(name, sizeof(name), "data/part-%02zu.bin", i);
		aj_test_write(u->tree, name, blob, 20000 + i, 0644);
		free(blob);
	}
	path = aj_test_join(u->tree, "../archive.tgz");
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(aj_ignore_setup(&ig, u->tree, &none, &err), 0);
	if (aj_archive_create(u->tree, &ig, 0, aj_archive_sink_fd, &fd, &res, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	close(fd);
	u->archive = (unsigned char *)aj_test_read(path, &u->len);
	unlink(path);
	free(path);
	assert_int_equal(u->len, res.size);
	memcpy(u->digest, res.sha256_hex, 65);
	u->store = aj_test_join(p->dir, "pvc/.aj-code");
	aj_ignore_release(&ig);
	aj_errors_release(&err);
}

static void upload_release(struct upload *u)
{
	aj_test_rm_rf(u->tree);
	free(u->tree);
	free(u->archive);
	free(u->store);
}

/* Run the receive (or check) script; -1 if the exec itself failed. */
static int receive(struct aj_kube *k, struct upload *u, int check, struct aj_exec_result *res,
		   struct aj_errors *err)
{
	char size[32];
	const char *argv[] = { "sh", "-c", check ? aj_code_check_script : aj_code_receive_script,
			       "aj", u->store, u->digest, size };
	struct source in = { u->archive, u->len, 0, 0 };

	snprintf(size, sizeof(size), "%zu", u->len);
	return run(k, argv, check ? 6 : 7, check ? NULL : &in, res, err);
}

/* The names in the store joined with ',' ("" when none or no store). */
static void store_entries(const char *store, char *out, size_t size)
{
	DIR *d = opendir(store);
	struct dirent *e;

	out[0] = '\0';
	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			snprintf(out + strlen(out), size - strlen(out), "%s%s", *out ? "," : "", e->d_name);
	closedir(d);
}

static void upload_and_skip(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct upload u;
	struct aj_test_peer p;
	char entries[512], *path, *got, *text;
	size_t len;

	(void)state;
	peer_start(&p, NULL);
	upload_init(&u, &p);
	client(&k, &p, TOKEN);
	assert_int_equal(receive(&k, &u, 1, &res, &err), 0);
	assert_int_equal(res.exit_code, 1);          /* not there yet */
	aj_exec_result_release(&res);
	if (receive(&k, &u, 0, &res, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_int_equal(res.exit_code, 0);
	aj_exec_result_release(&res);
	store_entries(u.store, entries, sizeof(entries));
	assert_string_equal(entries, u.digest);      /* no temporary left */
	path = aj_test_join(u.store, u.digest);
	got = aj_test_join(path, "data/part-07.bin");
	free(aj_test_read(got, &len));
	assert_int_equal(len, 20007);
	free(got);
	got = aj_test_join(path, "train.py");
	text = aj_test_read(got, &len);
	assert_string_equal(text, "print('hi')\n");
	free(text);
	free(got);
	got = aj_test_join(path, "run.sh");
	assert_int_equal(access(got, X_OK), 0);
	free(got);
	free(path);
	assert_int_equal(receive(&k, &u, 1, &res, &err), 0);
	assert_int_equal(res.exit_code, 0);          /* present: an upload would be skipped */
	aj_exec_result_release(&res);
	aj_kube_release(&k);
	aj_errors_release(&err);
	upload_release(&u);
	aj_test_peer_stop(&p);
}

/* The connection drops mid-stream: the client fails, the far side keeps nothing. */
static void dropped_connection_keeps_nothing(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct upload u;
	struct aj_test_peer p;
	char entries[512], half[32];
	char *args[] = { "--drop-after", half, NULL };

	(void)state;
	snprintf(half, sizeof(half), "%d", 200000);
	peer_start(&p, args);
	upload_init(&u, &p);
	assert_true(u.len > 300000);
	client(&k, &p, TOKEN);
	assert_int_equal(receive(&k, &u, 0, &res, &err), -1);
	assert_true(aj_test_errors_contain(&err, "exec in pod team-a/helper: the connection closed "
					   "before the command finished"));
	aj_exec_result_release(&res);
	peer_wait_exited(&p, 1);
	store_entries(u.store, entries, sizeof(entries));
	assert_string_equal(entries, "");
	aj_kube_release(&k);
	aj_errors_release(&err);
	upload_release(&u);
	aj_test_peer_stop(&p);
}

/* One byte changed in transit: the far side detects it and keeps nothing. */
static void digest_mismatch_keeps_nothing(void **state)
{
	static char *args[] = { "--corrupt-at", "1000", NULL };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_exec_result res;
	struct aj_kube k;
	struct upload u;
	struct aj_test_peer p;
	char entries[512];

	(void)state;
	peer_start(&p, args);
	upload_init(&u, &p);
	client(&k, &p, TOKEN);
	if (receive(&k, &u, 0, &res, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_int_equal(res.exit_code, 3);
	assert_non_null(strstr(aj_buf_cstr(&res.err), "aj: digest mismatch: received"));
	assert_non_null(strstr(aj_buf_cstr(&res.err), u.digest));
	aj_exec_result_release(&res);
	store_entries(u.store, entries, sizeof(entries));
	assert_string_equal(entries, "");
	aj_kube_release(&k);
	aj_errors_release(&err);
	upload_release(&u);
	aj_test_peer_stop(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(output_and_exit_codes),
		cmocka_unit_test(stdin_to_the_end),
		cmocka_unit_test(v4_fallback),
		cmocka_unit_test(fragmented_output),
		cmocka_unit_test(wrong_token_refused),
		cmocka_unit_test(tls_verified),
		cmocka_unit_test(upload_and_skip),
		cmocka_unit_test(dropped_connection_keeps_nothing),
		cmocka_unit_test(digest_mismatch_keeps_nothing),
	};

	signal(SIGPIPE, SIG_IGN);
	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
