/*
 * The watch loop (kube/watch.c) over a real WebSocket against
 * tests/peers/watch_peer.py, a loopback stand-in for one collection whose
 * streams follow a script: messages in several frames and larger than the
 * receive buffer, resuming from a bookmark, relisting on an ERROR 410 and
 * on a refused upgrade with 410, a malformed message, a 404, a dropped
 * connection, a stream that ends at once, a silent (dead) stream, the Origin
 * header and the token.
 */
#include "support.h"
#include "code_fs.h"
#include "peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/client.h"
#include "kube/watch.h"

#define TOKEN "watch-token-1"

static const struct aj_kube_resource configmaps = { "", "v1", "configmaps", 1 };

struct recorder {
	char log[32][48];   /* "LIST 0", "ADDED a", "BOOKMARK 20", ... */
	long pad[32];       /* length of each object's data.pad (-1: none) */
	int nr;
	char messages[2048];
	int stop_after;     /* stop the loop once this many entries are in (0: never) */
	struct aj_watch_loop *loop;
};

static int record(void *ctx, struct aj_watch_event *ev)
{
	struct recorder *r = ctx;
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(ev->object, "metadata");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	const cJSON *rv = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
	const cJSON *pad = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(ev->object, "data"), "pad");

	assert_true(r->nr < 32);
	r->pad[r->nr] = cJSON_IsString(pad) ? (long)strlen(pad->valuestring) : -1;
	if (ev->type == AJ_WATCH_LIST)
		snprintf(r->log[r->nr++], sizeof(r->log[0]), "LIST %d",
			 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ev->object, "items")));
	else if (ev->type == AJ_WATCH_BOOKMARK)
		snprintf(r->log[r->nr++], sizeof(r->log[0]), "BOOKMARK %s",
			 cJSON_IsString(rv) ? rv->valuestring : "?");
	else
		snprintf(r->log[r->nr++], sizeof(r->log[0]), "%s %s", aj_watch_type_name(ev->type),
			 cJSON_IsString(name) ? name->valuestring : "?");
	if (r->stop_after && r->nr >= r->stop_after)
		aj_watch_loop_stop(r->loop);
	return 0;
}

static void log_message(void *ctx, void *watch_ctx, const char *message)
{
	struct recorder *r = watch_ctx;
	size_t len = strlen(r->messages);

	(void)ctx;
	snprintf(r->messages + len, sizeof(r->messages) - len, "%s\n", message);
}

/* One test's peer, client and loop; certs holds the peer's certificate. */
struct fixture {
	struct aj_test_peer p;
	struct aj_kube k;
	struct aj_watch_loop l;
	struct recorder r;
	char *certs;
};

/* A client trusting the peer's certificate, given inline as a kubeconfig's CA data is. */
static void client(struct aj_kube *k, const struct aj_test_peer *p, const char *certs)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	char url[64], *crt = aj_test_join(certs, "peer.crt");

	aj_kube_config_init(&cfg);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", p->port);
	cfg.ca.data = (unsigned char *)aj_test_read(crt, &cfg.ca.len);
	free(crt);
	cfg.server = aj_strdup(url);
	cfg.namespace = aj_strdup("w");
	cfg.token = aj_strdup(TOKEN);
	if (aj_kube_init(k, &cfg, &err))
		fail_msg("client: %s", aj_test_errors_text(&err));
	aj_kube_set_rate(k, 0, 0);
}

/* Start the peer with a script, a client and a loop with one watch on namespace w. */
static void setup(struct fixture *f, const char *script)
{
	char copy[2048], crt[1024], key[1024];
	char *args[] = { (char *)"--token", (char *)TOKEN, (char *)"--script", copy,
			 (char *)"--cert", crt, (char *)"--key", key, NULL };
	struct aj_kube_ref ref = { &configmaps, "w", NULL, NULL };
	struct aj_errors err = AJ_ERRORS_INIT;

	memset(f, 0, sizeof(*f));
	assert_true(strlen(script) < sizeof(copy));
	snprintf(copy, sizeof(copy), "%s", script);
	f->certs = aj_test_mkdtemp();
	aj_test_make_cert(f->certs, "peer");
	snprintf(crt, sizeof(crt), "%s/peer.crt", f->certs);
	snprintf(key, sizeof(key), "%s/peer.key", f->certs);
	f->r.loop = &f->l;
	aj_test_peer_start(&f->p, "watch_peer.py", args);
	client(&f->k, &f->p, f->certs);
	if (aj_watch_loop_init(&f->l, &f->k, &err) ||
	    aj_watch_add(&f->l, &ref, NULL, record, &f->r, &err))
		fail_msg("loop: %s", aj_test_errors_text(&err));
	f->l.log = log_message;
	f->l.min_timeout = 20;
	f->l.max_timeout = 40;
}

/* Run until the recorder stops the loop, at most `seconds`. */
static void run(struct aj_watch_loop *l, struct recorder *r, int want, int seconds)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	r->stop_after = want;
	if (aj_watch_loop_run(l, seconds * 1000L, &err))
		fail_msg("run: %s", aj_test_errors_text(&err));
	if (r->nr < want) {
		int i;

		for (i = 0; i < r->nr; i++)
			print_message("seen: %s\n", r->log[i]);
		print_message("logged: %s\n", r->messages);
		fail_msg("%d of %d events within %d s", r->nr, want, seconds);
	}
}

/* The peer's requests, one JSON object each. */
static cJSON *requests(const struct aj_test_peer *p)
{
	size_t len;
	char *text = aj_test_read(p->log, &len), *line, *next;
	cJSON *all = cJSON_CreateArray();

	for (line = text; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		cJSON_AddItemToArray(all, cJSON_Parse(line));
	}
	free(text);
	return all;
}

/* Query parameter `key` of request i ("" when absent). */
static const char *query(const cJSON *req, const char *key)
{
	const cJSON *v = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(req, "query"), key), 0);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static const char *kind(const cJSON *req)
{
	return aj_test_json_str(req, "kind");
}

static void teardown(struct fixture *f)
{
	aj_watch_loop_release(&f->l);
	aj_kube_release(&f->k);
	aj_test_peer_stop(&f->p);
	aj_test_rm_rf(f->certs);
	free(f->certs);
}

static void reassembly_resume_and_relists(void **state)
{
	static const char script[] =
		"[{\"events\": [{\"type\": \"ADDED\", \"name\": \"a\", \"rv\": \"11\", \"pieces\": 3},"
		"  {\"type\": \"MODIFIED\", \"name\": \"a\", \"rv\": \"12\", \"pad\": 300000, \"pieces\": 4},"
		"  {\"type\": \"BOOKMARK\", \"rv\": \"20\", \"pieces\": 2}], \"end\": \"close\"},"
		" {\"events\": [{\"type\": \"ERROR\", \"code\": 410, \"reason\": \"Expired\"}], \"end\": \"hold\"},"
		" {\"status\": 410},"
		" {\"events\": [{\"type\": \"DELETED\", \"name\": \"a\", \"rv\": \"31\"}], \"end\": \"hold\"}]";
	static const char *const want[] = {
		"LIST 0", "ADDED a", "MODIFIED a", "BOOKMARK 20", "LIST 1", "LIST 1", "DELETED a"
	};
	struct fixture f;
	cJSON *reqs, *req;
	int i, lists = 0, watches = 0;

	(void)state;
	setup(&f, script);
	run(&f.l, &f.r, 7, 30);
	for (i = 0; i < 7; i++)
		assert_string_equal(f.r.log[i], want[i]);
	/* 300 kB in four frames, each more than lws hands over at once: whole. */
	assert_int_equal(f.r.pad[2], 300000);
	assert_int_equal(f.r.pad[1], 0);
	assert_string_equal(aj_watch_resource_version(&f.l, 0), "31");
	assert_int_equal(aj_watch_lists(&f.l, 0), 3);
	assert_int_equal(aj_watch_streams(&f.l, 0), 4);

	reqs = requests(&f.p);
	cJSON_ArrayForEach(req, reqs) {
		if (!strcmp(kind(req), "list")) {
			/* Never resourceVersion=0, which would ignore the page limit. */
			assert_string_equal(query(req, "resourceVersion"), "");
			lists++;
			continue;
		}
		/* Every watch: the Origin header, the token, bookmarks, a timeout in range. */
		assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "origin")));
		assert_true(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(req, "authorized")));
		assert_string_equal(aj_test_json_str(req, "path"), "/api/v1/namespaces/w/configmaps");
		assert_string_equal(query(req, "allowWatchBookmarks"), "true");
		assert_true(atol(query(req, "timeoutSeconds")) >= 20);
		assert_true(atol(query(req, "timeoutSeconds")) < 40);
		/* From the list, then from the bookmark, then from the relists. */
		assert_string_equal(query(req, "resourceVersion"), watches == 0 ? "10" : "20");
		watches++;
	}
	assert_int_equal(lists, 3);
	assert_int_equal(watches, 4);
	cJSON_Delete(reqs);
	/* Expected ends are not failures; the ERROR event and the 410 are reported. */
	assert_non_null(strstr(f.r.messages, "watch ERROR event: Expired (HTTP 410)"));
	assert_non_null(strstr(f.r.messages, "the stream: Gone (HTTP 410)"));
	assert_null(strstr(f.r.messages, "dropped"));
	teardown(&f);
}

/* A malformed message and a refused upgrade (404) relist after a backoff. */
static void malformed_message_and_404_relist(void **state)
{
	static const char script[] =
		"[{\"events\": [{\"raw\": \"{\\\"type\\\": \\\"ADDED\\\", \", \"pieces\": 2}], \"end\": \"hold\"},"
		" {\"status\": 404},"
		" {\"events\": [{\"type\": \"ADDED\", \"name\": \"b\", \"rv\": \"12\"}], \"end\": \"hold\"}]";
	static const char *const want[] = { "LIST 0", "LIST 0", "LIST 0", "ADDED b" };
	struct fixture f;
	int i;

	(void)state;
	setup(&f, script);
	run(&f.l, &f.r, 4, 30);
	for (i = 0; i < 4; i++)
		assert_string_equal(f.r.log[i], want[i]);
	assert_non_null(strstr(f.r.messages, "watch configmaps in namespace w: "
			       "the stream: event 1: not valid JSON"));
	/* What the controller turns into "the CRD ... is not installed". */
	assert_non_null(strstr(f.r.messages, "the stream: NotFound (HTTP 404)"));
	assert_int_equal(aj_watch_lists(&f.l, 0), 3);
	assert_int_equal(aj_watch_streams(&f.l, 0), 3);
	teardown(&f);
}

/* A dropped connection and a 401 resume from the last version, no relist. */
static void drop_and_401_resume(void **state)
{
	static const char script[] =
		"[{\"events\": [{\"type\": \"ADDED\", \"name\": \"b\", \"rv\": \"12\"}], \"end\": \"drop\"},"
		" {\"status\": 401},"
		" {\"events\": [{\"type\": \"ADDED\", \"name\": \"c\", \"rv\": \"13\"}], \"end\": \"hold\"}]";
	static const char *const want[] = { "LIST 0", "ADDED b", "ADDED c" };
	static const char *const from[] = { "10", "12", "12" };
	struct fixture f;
	cJSON *reqs, *req;
	int i, watches = 0;

	(void)state;
	setup(&f, script);
	run(&f.l, &f.r, 3, 30);
	for (i = 0; i < 3; i++)
		assert_string_equal(f.r.log[i], want[i]);
	assert_non_null(strstr(f.r.messages, "the connection dropped"));
	assert_non_null(strstr(f.r.messages, "the stream: Unauthorized (HTTP 401)"));
	assert_int_equal(aj_watch_lists(&f.l, 0), 1);
	reqs = requests(&f.p);
	cJSON_ArrayForEach(req, reqs)
		if (!strcmp(kind(req), "watch"))
			assert_string_equal(query(req, "resourceVersion"), from[watches++]);
	assert_int_equal(watches, 3);
	cJSON_Delete(reqs);
	teardown(&f);
}

/* A stream that ends at once without an event is a failure: backoff first. */
static void empty_short_stream_backs_off(void **state)
{
	static const char script[] =
		"[{\"events\": [], \"end\": \"close\"},"
		" {\"events\": [{\"type\": \"ADDED\", \"name\": \"c\", \"rv\": \"13\"}], \"end\": \"hold\"}]";
	struct fixture f;
	cJSON *reqs, *req;
	double t[2] = { 0, 0 };
	int watches = 0;

	(void)state;
	setup(&f, script);
	run(&f.l, &f.r, 2, 30);
	assert_string_equal(f.r.log[1], "ADDED c");
	reqs = requests(&f.p);
	cJSON_ArrayForEach(req, reqs)
		if (!strcmp(kind(req), "watch") && watches < 2)
			t[watches++] = cJSON_GetObjectItemCaseSensitive(req, "time")->valuedouble;
	assert_int_equal(watches, 2);
	/* The backoff starts at 0.8 s (jitter only lengthens it). */
	assert_true(t[1] - t[0] >= 0.75);
	cJSON_Delete(reqs);
	assert_int_equal(aj_watch_lists(&f.l, 0), 1);
	teardown(&f);
}

/* A stream silent for its timeout plus 30 s is closed as dead and started again. */
static void silent_stream_is_dropped(void **state)
{
	static const char script[] =
		"[{\"events\": [], \"end\": \"hold\"},"
		" {\"events\": [{\"type\": \"ADDED\", \"name\": \"d\", \"rv\": \"14\"}], \"end\": \"hold\"}]";
	struct fixture f;

	(void)state;
	setup(&f, script);
	f.l.min_timeout = f.l.max_timeout = 1;
	run(&f.l, &f.r, 2, 60);
	assert_string_equal(f.r.log[1], "ADDED d");
	assert_non_null(strstr(f.r.messages, "nothing received for 31 s; reconnecting"));
	assert_int_equal(aj_watch_lists(&f.l, 0), 1);
	assert_int_equal(aj_watch_streams(&f.l, 0), 2);
	teardown(&f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(reassembly_resume_and_relists),
		cmocka_unit_test(malformed_message_and_404_relist),
		cmocka_unit_test(drop_and_401_resume),
		cmocka_unit_test(empty_short_stream_backs_off),
		cmocka_unit_test(silent_stream_is_dropped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
