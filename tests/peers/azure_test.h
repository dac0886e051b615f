/*
 * azure_test.h - helpers for the Azure client tests (header-only: each test
 * program includes it once).
 *
 * The peer: start, steer and stop tests/peers/azure_peer.py.
 * aj_peer_start() runs the peer under python3 with a port file in a fresh
 * temporary directory and waits for it to listen; aj_peer_control() posts
 * JSON to /_peer/<what>; aj_peer_requests() returns what the peer recorded;
 * aj_peer_stop() ends the process it started (by its pid) and cleans up.
 * The peer is driven over plain libcurl, independently of the client code
 * under test.
 *
 * The clock: struct aj_fake_clock plugs into struct aj_azure_hooks; time
 * moves only when the code sleeps or the test advances it, every sleep is
 * recorded, jitter is fixed at its lowest value, and debug lines are kept
 * so a test can check that no secret was logged.
 */
#ifndef AJ_TEST_AZURE_H
#define AJ_TEST_AZURE_H

#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "azure/http.h"

extern char **environ;

struct aj_peer {
	pid_t pid;
	char dir[64];
	char base[64];   /* http://127.0.0.1:PORT */
};

static size_t aj_peer_collect(char *data, size_t size, size_t n, void *ctx)
{
	char **acc = ctx;
	size_t old = *acc ? strlen(*acc) : 0;
	char *p = realloc(*acc, old + size * n + 1);

	if (!p)
		return 0;
	memcpy(p + old, data, size * n);
	p[old + size * n] = '\0';
	*acc = p;
	return size * n;
}

/* method + path (+ JSON body); returns the status, *out gets the body (free()). */
static long aj_peer_call(const struct aj_peer *p, const char *method,
			 const char *path, const char *body, char **out)
{
	char url[512];
	char *acc = NULL;
	long status = 0;
	CURL *c = curl_easy_init();
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");

	snprintf(url, sizeof(url), "%s%s", p->base, path);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, aj_peer_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &acc);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 20L);
	if (body)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	if (curl_easy_perform(c) == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	if (out)
		*out = acc;
	else
		free(acc);
	return status;
}

/* POST /_peer/<what> with a JSON body (or none); 0 when the peer said 200. */
static int aj_peer_control(const struct aj_peer *p, const char *what, const char *json)
{
	char path[128];

	snprintf(path, sizeof(path), "/_peer/%s", what);
	return aj_peer_call(p, "POST", path, json ? json : "", NULL) == 200 ? 0 : -1;
}

/* The recorded requests as a cJSON array (cJSON_Delete), or NULL. */
static cJSON *aj_peer_requests(const struct aj_peer *p)
{
	char *body = NULL;
	cJSON *j = NULL;

	if (aj_peer_call(p, "GET", "/_peer/requests", NULL, &body) == 200)
		j = cJSON_Parse(body);
	free(body);
	return j;
}

static int aj_peer_start(struct aj_peer *p)
{
	char script[1024], portfile[128];
	char *argv[5];
	FILE *f;

	memset(p, 0, sizeof(*p));
	snprintf(p->dir, sizeof(p->dir), "/tmp/aj-peer.XXXXXX");
	if (!mkdtemp(p->dir))
		return -1;
	snprintf(script, sizeof(script), "%s/tests/peers/azure_peer.py", AJ_SOURCE_DIR);
	snprintf(portfile, sizeof(portfile), "%s/port", p->dir);
	argv[0] = (char *)"python3";
	argv[1] = script;
	argv[2] = (char *)"--port-file";
	argv[3] = portfile;
	argv[4] = NULL;
	if (posix_spawnp(&p->pid, "python3", NULL, NULL, argv, environ))
		return -1;
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 50 * 1000 * 1000 };
		int port = 0;

		f = fopen(portfile, "r");
		if (f) {
			if (fscanf(f, "%d", &port) == 1 && port > 0) {
				fclose(f);
				snprintf(p->base, sizeof(p->base), "http://127.0.0.1:%d", port);
				return 0;
			}
			fclose(f);
		}
		nanosleep(&ts, NULL);
	}
	return -1;
}

static void aj_peer_stop(struct aj_peer *p)
{
	char path[128];
	int status;

	if (p->pid > 0) {
		kill(p->pid, SIGTERM);
		while (waitpid(p->pid, &status, 0) < 0 && errno == EINTR)
			;
		p->pid = 0;
	}
	snprintf(path, sizeof(path), "%s/port", p->dir);
	unlink(path);
	rmdir(p->dir);
}

#define AJ_FAKE_SLEEPS_MAX 64

struct aj_fake_clock {
	int64_t now_ms;
	int64_t sleeps[AJ_FAKE_SLEEPS_MAX];
	int nr_sleeps;
	char log[16384];
};

static int64_t aj_fake_now(void *ctx)
{
	return ((struct aj_fake_clock *)ctx)->now_ms;
}

static void aj_fake_sleep(void *ctx, int64_t ms)
{
	struct aj_fake_clock *c = ctx;

	if (c->nr_sleeps < AJ_FAKE_SLEEPS_MAX)
		c->sleeps[c->nr_sleeps++] = ms;
	c->now_ms += ms;
}

static uint32_t aj_fake_random(void *ctx)
{
	(void)ctx;
	return 0;
}

static void aj_fake_log(void *ctx, const char *line)
{
	struct aj_fake_clock *c = ctx;
	size_t n = strlen(c->log);

	snprintf(c->log + n, sizeof(c->log) - n, "%s\n", line);
}

/* Reset the clock to `start_ms` and return hooks bound to it. */
static struct aj_azure_hooks aj_fake_hooks(struct aj_fake_clock *c, int64_t start_ms)
{
	struct aj_azure_hooks h = { aj_fake_now, aj_fake_sleep, aj_fake_random,
				    aj_fake_log, c };

	memset(c, 0, sizeof(*c));
	c->now_ms = start_ms;
	return h;
}

/* Requests recorded by the peer whose path contains `fragment`. */
static int aj_peer_count(const struct aj_peer *p, const char *fragment)
{
	cJSON *all = aj_peer_requests(p), *r;
	int n = 0;

	cJSON_ArrayForEach(r, all) {
		const cJSON *path = cJSON_GetObjectItem(r, "path");

		if (cJSON_IsString(path) && strstr(path->valuestring, fragment))
			n++;
	}
	cJSON_Delete(all);
	return n;
}

#endif
