#include "api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_fs.h"
#include "core/json.h"
#include "core/alloc.h"
#include "core/error.h"
#include "runner/runner.h"
#include "support.h"

#define TOKEN "reconcile-token"

/* The whole store, as the peer keeps it. */
static cJSON *store(const struct aj_test_api *a)
{
	size_t len;
	char *path = aj_test_join(a->p.dir, "objects.json"), *text = aj_test_read(path, &len);
	cJSON *all = cJSON_Parse(text);

	if (!all)
		fail_msg("objects.json is not JSON");
	free(text);
	free(path);
	return all;
}

static void store_write(const struct aj_test_api *a, const cJSON *all)
{
	char *text = cJSON_Print(all);

	assert_non_null(text);
	aj_test_write(a->p.dir, "objects.json", text, strlen(text), 0644);
	free(text);
}

void aj_test_api_start(struct aj_test_api *a, const char *objects)
{
	char crt[1024], key[1024], url[64];
	char *args[] = { (char *)"--token", (char *)TOKEN, (char *)"--cert", crt, (char *)"--key",
			 key, NULL };
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *all = cJSON_Parse(objects);
	size_t i, whole = 0;

	assert_non_null(all);
	memset(a, 0, sizeof(*a));
	a->certs = aj_test_mkdtemp();
	aj_test_make_cert(a->certs, "peer");
	snprintf(crt, sizeof(crt), "%s/peer.crt", a->certs);
	snprintf(key, sizeof(key), "%s/peer.key", a->certs);
	aj_test_peer_start(&a->p, "ajjob_peer.py", args);
	store_write(a, all);
	cJSON_Delete(all);

	aj_kube_config_init(&cfg);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d", a->p.port);
	cfg.ca.data = (unsigned char *)aj_test_read(crt, &cfg.ca.len);
	cfg.server = aj_strdup(url);
	cfg.token = aj_strdup(TOKEN);
	if (aj_kube_init(&a->k, &cfg, &err))
		fail_msg("client: %s", aj_test_errors_text(&err));
	aj_kube_set_rate(&a->k, 0, 0);

	assert_int_equal(aj_cache_init(&a->cache), 0);
	/* as the controller names them (controller.c) */
	for (i = 0; i < aj_runners_nr; i++)
		if (aj_runners[i]->member_whole)
			a->cache.whole[whole++] = aj_runners[i]->status_member;
	aj_reconciler_init(&a->rec, &a->cache, "aj-controller-test");
}

void aj_test_api_stop(struct aj_test_api *a)
{
	aj_cache_release(&a->cache);
	aj_kube_release(&a->k);
	aj_test_peer_stop(&a->p);
	aj_test_rm_rf(a->certs);
	free(a->certs);
}

cJSON *aj_test_api_get(const struct aj_test_api *a, const char *path)
{
	cJSON *all = store(a), *obj = cJSON_DetachItemFromObjectCaseSensitive(all, path);

	cJSON_Delete(all);
	return obj;
}

/* o.k = a copy of v, replacing what was there. */
static void put(cJSON *o, const char *k, const cJSON *v)
{
	cJSON *c = cJSON_Duplicate(v, 1);

	assert_non_null(c);
	if (cJSON_GetObjectItemCaseSensitive(o, k))
		cJSON_ReplaceItemInObjectCaseSensitive(o, k, c);
	else
		cJSON_AddItemToObject(o, k, c);
}

void aj_test_api_patch(const struct aj_test_api *a, const char *path, const char *patch)
{
	cJSON *all = store(a), *obj = cJSON_GetObjectItemCaseSensitive(all, path);
	cJSON *p = cJSON_Parse(patch), *m, *c;

	assert_non_null(obj);
	assert_non_null(p);
	/* two levels are enough for what the tests change: status.x, metadata.x */
	cJSON_ArrayForEach(m, p) {
		cJSON *have = cJSON_GetObjectItemCaseSensitive(obj, m->string);

		if (cJSON_IsObject(m) && cJSON_IsObject(have)) {
			cJSON_ArrayForEach(c, m)
				put(have, c->string, c);
		} else {
			put(obj, m->string, m);
		}
	}
	store_write(a, all);
	cJSON_Delete(p);
	cJSON_Delete(all);
}

cJSON *aj_test_api_list(const struct aj_test_api *a, const char *collection)
{
	cJSON *all = store(a), *list = cJSON_CreateArray(), *o;
	size_t n = strlen(collection);

	cJSON_ArrayForEach(o, all)
		if (!strncmp(o->string, collection, n) && o->string[n] == '/' &&
		    !strchr(o->string + n + 1, '/'))
			cJSON_AddItemToArray(list, cJSON_Duplicate(o, 1));
	cJSON_Delete(all);
	return list;
}

size_t aj_test_api_gets(const struct aj_test_api *a, const char *path, cJSON **first_query)
{
	FILE *f = fopen(a->p.log, "r");
	char line[8192];
	size_t n = 0;

	assert_non_null(f);
	if (first_query)
		*first_query = NULL;
	while (fgets(line, sizeof(line), f)) {
		cJSON *req = cJSON_Parse(line);

		if (req && !strcmp(aj_json_str(req, "method"), "GET") &&
		    !strcmp(aj_json_str(req, "path"), path)) {
			if (!n++ && first_query)
				*first_query = cJSON_DetachItemFromObjectCaseSensitive(req, "query");
		}
		cJSON_Delete(req);
	}
	fclose(f);
	return n;
}

void aj_test_api_look_due(struct aj_test_api *a, const char *path, const char *key, int long_ago)
{
	if (long_ago)
		aj_test_api_patch(a, path, "{\"status\": {\"conditions\": [{\"type\": \"Submitted\","
				  " \"status\": \"True\", \"lastTransitionTime\": \"2020-01-01T00:00:00Z\"}]}}");
	aj_test_api_watch_ajjob(a, path);
	assert_int_equal(aj_cache_ajjob_set_reason_due(&a->cache, key, 1), 1);
}

void aj_test_api_watch_ajjob(struct aj_test_api *a, const char *path)
{
	cJSON *obj = aj_test_api_get(a, path);

	assert_non_null(obj);
	assert_int_equal(aj_cache_ajjob_put(&a->cache, obj), 0);
}

void aj_test_api_watch_owned(struct aj_test_api *a, const struct aj_runner *rn, const char *path)
{
	cJSON *obj = aj_test_api_get(a, path);
	struct aj_owned_facts f;

	assert_non_null(obj);
	memset(&f, 0, sizeof(f));
	rn->summarize(obj, &f);
	assert_int_equal(aj_cache_owned_put(&a->cache, aj_runner_slot(rn), obj, &f), 0);
}

void aj_test_api_reconcile(struct aj_test_api *a, const char *key, enum aj_action_kind kind,
			   double after, enum aj_action_level level)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_action got = aj_reconcile(&a->rec, &a->k, key, &err);

	/*
	 * Seconds pass between two looks at the clock: a wait up to a second
	 * shorter, a poll longer by a tenth of the seconds since the last
	 * change (a slow machine: up to 5 s).
	 */
	if (got.kind != kind || (kind == AJ_ACTION_AGAIN && (got.after < after - 1 ||
							    got.after > after + 0.5 || got.level != level)))
		fail_msg("%s: action %d after %g level %d, expected %d after %g level %d (%s)", key,
			 got.kind, got.after, got.level, kind, after, level,
			 aj_test_errors_text(&err));
	aj_errors_release(&err);
}

const char *aj_test_api_train(const char *service)
{
	static char json[2048];

	snprintf(json, sizeof(json),
		 "{\"/apis/aj.dev/v1alpha1/namespaces/ml/ajjobs/train\": {"
		 " \"apiVersion\": \"aj.dev/v1alpha1\", \"kind\": \"AjJob\","
		 " \"metadata\": {\"name\": \"train\", \"namespace\": \"ml\", \"uid\": \"u-1\","
		 "  \"resourceVersion\": \"1\", \"generation\": 1},"
		 " \"spec\": {\"name\": \"template/job\", \"template\": {\"base\": [], \"config\": {"
		 "  \"target\": {\"service\": \"%s\", \"gpus_per_node\": 0, \"cpus_per_node\": 2,"
		 "   \"memory\": \"4Gi\"},"
		 "  \"environment\": {\"image\": \"busybox\"},"
		 "  \"jobs\": [{\"name\": \"train\", \"sku\": \"C2\", \"instance_count\": 1}]}},"
		 " \"command\": [\"python\", \"train.py\"]}}}", service);
	return json;
}

static int by_text(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void aj_test_api_events_are(const struct aj_test_api *a, const char *ns, const char *want)
{
	char path[128];
	cJSON *list, *e;
	const char *reasons[16];
	char got[256] = "";
	size_t nr = 0, i;

	snprintf(path, sizeof(path), "/apis/events.k8s.io/v1/namespaces/%s/events", ns);
	list = aj_test_api_list(a, path);
	cJSON_ArrayForEach(e, list)
		if (nr < 16)
			reasons[nr++] = aj_json_str(e, "reason");
	qsort(reasons, nr, sizeof(reasons[0]), by_text);
	for (i = 0; i < nr; i++) {
		size_t n = strlen(got);

		snprintf(got + n, sizeof(got) - n, "%s%s", i ? " " : "", reasons[i]);
	}
	if (strcmp(got, want))
		fail_msg("events \"%s\", expected \"%s\"", got, want);
	cJSON_Delete(list);
}

const char *aj_test_status_of(const cJSON *ajjob, const char *key)
{
	return aj_json_str(aj_json_get(ajjob, "status"), key);
}
