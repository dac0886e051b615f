/*
 * The Kubernetes client against a real kube-apiserver.
 *
 * Needs KUBECONFIG (or AJ_CP_ENV, the env file written by
 * tests/controlplane/start.sh). Every test works in its own namespace,
 * deleted at the end. AjJob status tests run when the AjJob CRD is
 * installed and are skipped otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/client.h"
#include "kube/kubeconfig.h"
#include "kube/watch.h"

extern char **environ;

static const struct aj_kube_resource ajjobs = { "aj.dev", "v1alpha1", "ajjobs", 1 };

static char ns[64];
static struct aj_kube kube;

/* A variable from the environment, else from the control plane's env file. */
static const char *setting(const char *name)
{
	static char values[8][4096];
	static const char *names[8];
	static int nr;
	const char *v = getenv(name), *file = getenv("AJ_CP_ENV");
	char line[4096], prefix[128];
	int i;
	FILE *f;

	if (v && *v)
		return v;
	for (i = 0; i < nr; i++)
		if (!strcmp(names[i], name))
			return values[i];
	if (nr == 8 || !file || !(f = fopen(file, "r")))
		return NULL;
	snprintf(prefix, sizeof(prefix), "export %s='", name);
	v = NULL;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(prefix), len;

		if (strncmp(line, prefix, n))
			continue;
		len = strcspn(line + n, "'");
		snprintf(values[nr], sizeof(values[nr]), "%.*s", (int)len, line + n);
		names[nr] = name;
		v = values[nr++];
		break;
	}
	fclose(f);
	return v;
}

static void fail_errors(struct aj_errors *err, const char *what)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	aj_errors_format_all(err, &b);
	print_error("%s", aj_buf_cstr(&b));
	aj_buf_release(&b);
	fail_msg("%s failed", what);
}

#define OK(call, what) do { \
		struct aj_errors e_ = AJ_ERRORS_INIT; \
		struct aj_errors *oe = &e_; \
		if ((call)) fail_errors(oe, what); \
		aj_errors_release(&e_); \
	} while (0)

static int errors_contain(const struct aj_errors *e, const char *frag)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	int found;

	aj_errors_format_all(e, &b);
	found = strstr(aj_buf_cstr(&b), frag) != NULL;
	if (!found)
		print_error("no \"%s\" in:\n%s", frag, aj_buf_cstr(&b));
	aj_buf_release(&b);
	return found;
}

static int load_client(struct aj_kube *k)
{
	struct aj_kube_config cfg;
	struct aj_kube_config_opts o = { 0 };
	struct aj_errors err = AJ_ERRORS_INIT;

	o.kubeconfig = setting("KUBECONFIG");
	if (!o.kubeconfig) {
		print_error("KUBECONFIG (or AJ_CP_ENV) is not set\n");
		return -1;
	}
	if (aj_kube_config_load(&cfg, &o, &err) || aj_kube_init(k, &cfg, &err)) {
		fail_errors(&err, "loading the kubeconfig");
		return -1;
	}
	/* Tests issue bursts of requests; pacing is unit-tested. */
	aj_kube_set_rate(k, 100, 200);
	return 0;
}

static cJSON *parse(const char *json)
{
	cJSON *v = cJSON_Parse(json);

	assert_non_null(v);
	return v;
}

static const char *str_at(const cJSON *obj, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, a);

	if (b)
		v = cJSON_GetObjectItemCaseSensitive(v, b);
	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int group_setup(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_namespaces, NULL, NULL, NULL };
	char body[256];
	cJSON *obj;

	(void)state;
	aj_alloc_hook_cjson();
	OK(aj_kube_global_init(oe), "libcurl init");
	if (load_client(&kube))
		return -1;
	snprintf(ns, sizeof(ns), "aj-kube-it-%ld-%ld", (long)getpid(), (long)time(NULL) % 100000);
	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
	obj = parse(body);
	OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create namespace");
	cJSON_Delete(obj);
	return 0;
}

static int group_teardown(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_namespaces, NULL, ns, NULL };
	struct aj_errors err = AJ_ERRORS_INIT;
	int ret;

	(void)state;
	ret = aj_kube_delete(&kube, &ref, NULL, NULL, NULL, &err);
	aj_errors_release(&err);
	aj_kube_release(&kube);
	return ret;
}

static cJSON *configmap(const char *name, const char *label, const char *a)
{
	char body[512];

	snprintf(body, sizeof(body),
		 "{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"%s\","
		 "\"labels\":{\"set\":\"%s\"}},\"data\":{\"a\":\"%s\"}}", name, label, a);
	return parse(body);
}

static void configmap_crud_and_patches(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, "crud", NULL };
	struct aj_kube_status st;
	cJSON *obj = configmap("crud", "crud", "1"), *got = NULL, *patch;

	(void)state;
	aj_kube_status_init(&st);
	OK(aj_kube_create(&kube, &ref, obj, &got, &st, oe), "create");
	assert_int_equal(st.code, 201);
	assert_int_equal(st.reason, AJ_KUBE_OK);
	assert_string_equal(str_at(got, "metadata", "namespace"), ns);
	assert_non_null(str_at(got, "metadata", "uid"));
	cJSON_Delete(got);
	cJSON_Delete(obj);

	OK(aj_kube_get(&kube, &ref, &got, &st, oe), "get");
	assert_int_equal(st.code, 200);
	assert_string_equal(str_at(got, "data", "a"), "1");
	cJSON_Delete(got);

	/* Merge patch adds a key and keeps the others. */
	patch = parse("{\"data\":{\"b\":\"2\"}}");
	OK(aj_kube_patch(&kube, &ref, AJ_KUBE_MERGE_PATCH, patch, &got, &st, oe), "merge patch");
	assert_string_equal(str_at(got, "data", "a"), "1");
	assert_string_equal(str_at(got, "data", "b"), "2");
	cJSON_Delete(got);
	cJSON_Delete(patch);

	/* JSON patch with a test op: applies when the test holds... */
	patch = parse("[{\"op\":\"test\",\"path\":\"/data/a\",\"value\":\"1\"},"
		      "{\"op\":\"replace\",\"path\":\"/data/a\",\"value\":\"3\"},"
		      "{\"op\":\"remove\",\"path\":\"/data/b\"}]");
	OK(aj_kube_patch(&kube, &ref, AJ_KUBE_JSON_PATCH, patch, &got, &st, oe), "JSON patch");
	assert_string_equal(str_at(got, "data", "a"), "3");
	assert_null(str_at(got, "data", "b"));
	cJSON_Delete(got);
	{
		/* ...and fails as a whole when it does not (a is now "3"). */
		struct aj_errors err = AJ_ERRORS_INIT;

		assert_int_equal(aj_kube_patch(&kube, &ref, AJ_KUBE_JSON_PATCH, patch, &got,
					       &st, &err), -1);
		assert_null(got);
		assert_true(st.code == 422 || st.code == 500);
		assert_true(errors_contain(&err, "patch configmaps/crud in namespace "));
		aj_errors_release(&err);
	}
	cJSON_Delete(patch);

	/* Delete with a uid precondition that does not match: Conflict. */
	{
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_kube_delete_opts d = { AJ_KUBE_PROPAGATION_BACKGROUND,
						 "00000000-0000-0000-0000-000000000000", NULL };

		assert_int_equal(aj_kube_delete(&kube, &ref, &d, NULL, &st, &err), -1);
		assert_int_equal(st.code, 409);
		assert_int_equal(st.reason, AJ_KUBE_CONFLICT);
		assert_true(errors_contain(&err, "the UID in the precondition"));
		aj_errors_release(&err);
	}
	OK(aj_kube_delete(&kube, &ref, NULL, NULL, &st, oe), "delete");
	assert_int_equal(st.code, 200);
	{
		struct aj_errors err = AJ_ERRORS_INIT;

		assert_int_equal(aj_kube_get(&kube, &ref, &got, &st, &err), -1);
		assert_int_equal(st.reason, AJ_KUBE_NOT_FOUND);
		assert_int_equal(st.code, 404);
		assert_string_equal(st.name, "crud");
		assert_string_equal(st.kind, "configmaps");
		assert_true(errors_contain(&err, "get configmaps/crud in namespace "));
		assert_true(errors_contain(&err, ": NotFound (HTTP 404): configmaps \"crud\" not found"));
		aj_errors_release(&err);
	}
	aj_kube_status_release(&st);
}

static void list_selectors_and_pages(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, NULL, NULL };
	struct aj_kube_list_opts o = { 0 };
	struct aj_kube_status st;
	cJSON *list = NULL, *it;
	char name[32];
	int i, n;

	(void)state;
	aj_kube_status_init(&st);
	for (i = 0; i < 5; i++) {
		cJSON *obj;

		snprintf(name, sizeof(name), "page-%d", i);
		obj = configmap(name, i < 4 ? "paged" : "other", "x");
		OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create");
		cJSON_Delete(obj);
	}
	o.label_selector = "set=paged";
	o.limit = 2;
	/* One page: two items and a continue token. */
	OK(aj_kube_list(&kube, &ref, &o, &list, &st, oe), "list page");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 2);
	assert_non_null(str_at(list, "metadata", "continue"));
	cJSON_Delete(list);
	/* All pages: the four labelled ones, in name order, no continue left. */
	OK(aj_kube_list_all(&kube, &ref, &o, &list, &st, oe), "list all");
	n = 0;
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(list, "items")) {
		snprintf(name, sizeof(name), "page-%d", n++);
		assert_string_equal(str_at(it, "metadata", "name"), name);
	}
	assert_int_equal(n, 4);
	assert_null(str_at(list, "metadata", "continue"));
	assert_non_null(str_at(list, "metadata", "resourceVersion"));
	cJSON_Delete(list);
	/* A set-based selector and a field selector (percent-encoded). */
	o.label_selector = "set in (other,none)";
	o.field_selector = "metadata.name!=page-0";
	OK(aj_kube_list_all(&kube, &ref, &o, &list, &st, oe), "list selectors");
	assert_int_equal(cJSON_GetArraySize(cJSON_GetObjectItem(list, "items")), 1);
	assert_string_equal(str_at(cJSON_GetArrayItem(cJSON_GetObjectItem(list, "items"), 0),
				   "metadata", "name"), "page-4");
	cJSON_Delete(list);
	aj_kube_status_release(&st);
}

static void typed_errors(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, "typed", NULL };
	struct aj_kube_status st;
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *obj = configmap("typed", "t", "1"), *got = NULL, *stale;

	(void)state;
	aj_kube_status_init(&st);
	OK(aj_kube_create(&kube, &ref, obj, &got, &st, oe), "create");
	/* AlreadyExists: 409 with its own reason. */
	assert_int_equal(aj_kube_create(&kube, &ref, obj, NULL, &st, &err), -1);
	assert_int_equal(st.code, 409);
	assert_int_equal(st.reason, AJ_KUBE_ALREADY_EXISTS);
	assert_true(errors_contain(&err, "create configmaps/typed in namespace "));
	assert_true(errors_contain(&err, "AlreadyExists (HTTP 409): configmaps \"typed\" already exists"));
	aj_errors_release(&err);

	/* Conflict: also 409, an update from a stale resourceVersion. */
	stale = cJSON_Duplicate(got, 1);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(got, "data"), "a", cJSON_CreateString("2"));
	OK(aj_kube_update(&kube, &ref, got, NULL, &st, oe), "update");
	assert_int_equal(st.code, 200);
	cJSON_ReplaceItemInObject(cJSON_GetObjectItem(stale, "data"), "a", cJSON_CreateString("3"));
	assert_int_equal(aj_kube_update(&kube, &ref, stale, NULL, &st, &err), -1);
	assert_int_equal(st.code, 409);
	assert_int_equal(st.reason, AJ_KUBE_CONFLICT);
	assert_true(errors_contain(&err, "the object has been modified"));
	aj_errors_release(&err);
	cJSON_Delete(stale);
	cJSON_Delete(got);
	cJSON_Delete(obj);

	/* Invalid: a name that is not a DNS subdomain, with its cause. */
	obj = configmap("Bad_Name", "t", "1");
	ref.name = "Bad_Name";
	assert_int_equal(aj_kube_create(&kube, &ref, obj, NULL, &st, &err), -1);
	assert_int_equal(st.code, 422);
	assert_int_equal(st.reason, AJ_KUBE_INVALID);
	assert_true(st.nr_causes >= 1);
	assert_string_equal(st.causes[0].field, "metadata.name");
	assert_string_equal(st.causes[0].reason, "FieldValueInvalid");
	assert_true(errors_contain(&err, "metadata.name: Invalid value: \"Bad_Name\""));
	aj_errors_release(&err);
	cJSON_Delete(obj);

	/* A name that would change the path is refused before any request. */
	ref.name = "..";
	assert_int_equal(aj_kube_get(&kube, &ref, &got, &st, &err), -1);
	assert_true(errors_contain(&err, "names must not be empty, \".\" or \"..\""));
	aj_errors_release(&err);
	/* Percent-encoding reaches the server intact: it looks the name up. */
	ref.name = "a b?c#d";
	assert_int_equal(aj_kube_get(&kube, &ref, &got, &st, &err), -1);
	assert_int_equal(st.reason, AJ_KUBE_NOT_FOUND);
	assert_non_null(st.name);
	assert_string_equal(st.name, "a b?c#d");
	aj_errors_release(&err);
	aj_kube_status_release(&st);
}

static void ajjob_status_subresource(void **state)
{
	struct aj_kube_ref crd = { &aj_kube_crds, NULL, "ajjobs.aj.dev", NULL };
	struct aj_kube_ref ref = { &ajjobs, ns, "train-1", NULL };
	struct aj_kube_status st;
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *obj, *got = NULL, *patch;

	(void)state;
	aj_kube_status_init(&st);
	if (aj_kube_get(&kube, &crd, &got, &st, &err)) {
		assert_int_equal(st.reason, AJ_KUBE_NOT_FOUND);
		aj_errors_release(&err);
		aj_kube_status_release(&st);
		skip();
	}
	cJSON_Delete(got);
	obj = parse("{\"apiVersion\":\"aj.dev/v1alpha1\",\"kind\":\"AjJob\","
		    "\"metadata\":{\"name\":\"train-1\"},"
		    "\"spec\":{\"name\":\"template/gpu\",\"template\":{\"config\":{}},"
		    "\"command\":[\"python\",\"train.py\"]},"
		    "\"status\":{\"phase\":\"Succeeded\"}}");
	OK(aj_kube_create(&kube, &ref, obj, &got, &st, oe), "create AjJob");
	/* With a status subresource, status in a create is dropped. */
	assert_null(cJSON_GetObjectItem(got, "status"));
	cJSON_Delete(got);
	cJSON_Delete(obj);

	ref.subresource = "status";
	patch = parse("{\"status\":{\"phase\":\"Running\",\"backend\":\"volcano\","
		      "\"observedGeneration\":1}}");
	OK(aj_kube_patch(&kube, &ref, AJ_KUBE_MERGE_PATCH, patch, &got, &st, oe), "patch status");
	assert_string_equal(str_at(got, "status", "phase"), "Running");
	assert_string_equal(str_at(got, "status", "backend"), "volcano");
	cJSON_Delete(got);
	cJSON_Delete(patch);

	/* The schema's enum is enforced on /status: Invalid, with the field. */
	patch = parse("{\"status\":{\"phase\":\"Bogus\"}}");
	assert_int_equal(aj_kube_patch(&kube, &ref, AJ_KUBE_MERGE_PATCH, patch, &got, &st, &err), -1);
	assert_int_equal(st.reason, AJ_KUBE_INVALID);
	assert_true(st.nr_causes >= 1);
	assert_string_equal(st.causes[0].field, "status.phase");
	assert_true(errors_contain(&err, "status.phase: Unsupported value: \"Bogus\""));
	aj_errors_release(&err);
	cJSON_Delete(patch);

	/* A status write through the main resource is ignored. */
	ref.subresource = NULL;
	patch = parse("{\"status\":{\"phase\":\"Failed\"}}");
	OK(aj_kube_patch(&kube, &ref, AJ_KUBE_MERGE_PATCH, patch, &got, &st, oe), "patch main");
	assert_string_equal(str_at(got, "status", "phase"), "Running");
	cJSON_Delete(got);
	cJSON_Delete(patch);
	aj_kube_status_release(&st);
}

/* --- watches --- */

struct recorder {
	char log[64][48];   /* "ADDED w1", ... (bookmarks not logged) */
	int nr;
	int lists;
	int list_items;     /* items in the latest list */
	int bookmarks;
	char bookmark_rv[32];   /* resourceVersion of the latest bookmark */
	int refuse;         /* refuse this many events (forces a relist) */
	char messages[2048];    /* what the loop reported for this watch */
};

static void log_message(void *ctx, void *watch_ctx, const char *message)
{
	struct recorder *r = watch_ctx;
	size_t len = strlen(r->messages);

	(void)ctx;
	print_message("watch: %s\n", message);
	snprintf(r->messages + len, sizeof(r->messages) - len, "%s\n", message);
}

static int record(void *ctx, struct aj_watch_event *ev)
{
	struct recorder *r = ctx;

	if (ev->type == AJ_WATCH_LIST) {
		/* Pages of one list: count the list once, its items across pages. */
		if (ev->first) {
			r->lists++;
			r->list_items = 0;
		}
		r->list_items += cJSON_GetArraySize(cJSON_GetObjectItem(ev->object, "items"));
		return 0;
	}
	if (ev->type == AJ_WATCH_BOOKMARK) {
		r->bookmarks++;
		snprintf(r->bookmark_rv, sizeof(r->bookmark_rv), "%s",
			 str_at(ev->object, "metadata", "resourceVersion"));
		return 0;
	}
	if (r->refuse > 0) {
		r->refuse--;
		return -1;
	}
	if (r->nr < 64)
		snprintf(r->log[r->nr++], sizeof(r->log[0]), "%s %s",
			 aj_watch_type_name(ev->type), str_at(ev->object, "metadata", "name"));
	return 0;
}

/* Run the loop until r holds `want` entries or `seconds` pass. */
static void run_until(struct aj_watch_loop *l, struct recorder *r, int want, int seconds)
{
	int i;

	for (i = 0; i < seconds * 10 && r->nr < want; i++)
		OK(aj_watch_loop_run(l, 100, oe), "watch loop");
}

static void watch_sees_changes_in_order(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, "w1", NULL };
	struct aj_kube_list_opts sel = { 0 };
	struct aj_watch_loop loop;
	struct recorder r;
	cJSON *obj, *patch;
	int i;

	(void)state;
	memset(&r, 0, sizeof(r));
	sel.label_selector = "set=watched";
	OK(aj_watch_loop_init(&loop, &kube, oe), "loop init");
	loop.log = log_message;
	OK(aj_watch_add(&loop, &ref, &sel, record, &r, oe), "watch add");
	for (i = 0; i < 50 && !r.lists; i++)
		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
	assert_int_equal(r.lists, 1);
	assert_string_not_equal(aj_watch_resource_version(&loop, 0), "");

	obj = configmap("w1", "watched", "1");
	OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create");
	cJSON_Delete(obj);
	patch = parse("{\"data\":{\"a\":\"2\"}}");
	OK(aj_kube_patch(&kube, &ref, AJ_KUBE_MERGE_PATCH, patch, NULL, NULL, oe), "patch");
	cJSON_Delete(patch);
	/* Not matching the selector: never seen. */
	obj = configmap("unwatched", "other", "1");
	ref.name = "unwatched";
	OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create");
	cJSON_Delete(obj);
	ref.name = "w1";
	OK(aj_kube_delete(&kube, &ref, NULL, NULL, NULL, oe), "delete");

	run_until(&loop, &r, 3, 20);
	assert_int_equal(r.nr, 3);
	assert_string_equal(r.log[0], "ADDED w1");
	assert_string_equal(r.log[1], "MODIFIED w1");
	assert_string_equal(r.log[2], "DELETED w1");
	assert_int_equal(aj_watch_lists(&loop, 0), 1);
	aj_watch_loop_release(&loop);
}

static void watch_resumes_after_the_stream_ends(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, NULL, NULL };
	struct aj_kube_list_opts sel = { 0 };
	struct aj_watch_loop loop;
	struct recorder a, b;
	char name[32];
	int i;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	OK(aj_watch_loop_init(&loop, &kube, oe), "loop init");
	loop.log = log_message;
	/* Streams end every 2 s; the server honours timeoutSeconds. */
	loop.min_timeout = loop.max_timeout = 2;
	sel.label_selector = "set=resume";
	OK(aj_watch_add(&loop, &ref, &sel, record, &a, oe), "watch add");
	/* A second watch on the same loop, on another selector. */
	sel.label_selector = "set=resume-b";
	OK(aj_watch_add(&loop, &ref, &sel, record, &b, oe), "watch add");
	for (i = 0; i < 50 && (!a.lists || !b.lists); i++)
		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
	for (i = 0; i < 3; i++) {
		cJSON *obj;

		snprintf(name, sizeof(name), "r%d", i);
		obj = configmap(name, "resume", "1");
		OK(aj_kube_create(&kube, &((struct aj_kube_ref){ &aj_kube_configmaps, ns, name, NULL }),
				  obj, NULL, NULL, oe), "create");
		cJSON_Delete(obj);
		/* Let a stream or two end between the changes. */
		OK(aj_watch_loop_run(&loop, 2500, oe), "watch loop");
	}
	{
		cJSON *obj = configmap("rb", "resume-b", "1");

		OK(aj_kube_create(&kube, &((struct aj_kube_ref){ &aj_kube_configmaps, ns, "rb", NULL }),
				  obj, NULL, NULL, oe), "create");
		cJSON_Delete(obj);
	}
	run_until(&loop, &a, 3, 10);
	run_until(&loop, &b, 1, 10);
	/* Each change exactly once, in order, across several streams. */
	assert_int_equal(a.nr, 3);
	assert_string_equal(a.log[0], "ADDED r0");
	assert_string_equal(a.log[1], "ADDED r1");
	assert_string_equal(a.log[2], "ADDED r2");
	assert_int_equal(b.nr, 1);
	assert_string_equal(b.log[0], "ADDED rb");
	assert_true(aj_watch_streams(&loop, 0) >= 3);
	/* Resumed from the resourceVersion: never listed again. */
	assert_int_equal(a.lists, 1);
	assert_int_equal(aj_watch_lists(&loop, 0), 1);
	aj_watch_loop_release(&loop);
}

static void watch_relists_when_an_event_is_refused(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, "relist", NULL };
	struct aj_kube_list_opts sel = { 0 };
	struct aj_watch_loop loop;
	struct recorder r;
	cJSON *obj;
	int i;

	(void)state;
	memset(&r, 0, sizeof(r));
	r.refuse = 1;
	sel.label_selector = "set=relist";
	OK(aj_watch_loop_init(&loop, &kube, oe), "loop init");
	loop.log = log_message;
	OK(aj_watch_add(&loop, &ref, &sel, record, &r, oe), "watch add");
	for (i = 0; i < 50 && !r.lists; i++)
		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
	assert_int_equal(r.list_items, 0);
	obj = configmap("relist", "relist", "1");
	OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create");
	cJSON_Delete(obj);
	/* The ADDED event is refused: after a backoff the watch lists again,
	 * and the new list holds the object. */
	for (i = 0; i < 100 && r.lists < 2; i++)
		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
	assert_int_equal(r.lists, 2);
	assert_int_equal(r.list_items, 1);
	assert_int_equal(r.nr, 0);
	assert_int_equal(aj_watch_lists(&loop, 0), 2);
	assert_int_equal(aj_watch_streams(&loop, 0), 2);
	aj_watch_loop_release(&loop);
}

/* Several watches on one loop (one event loop, one connection each), changes interleaved. */
static void watches_share_one_loop_in_order(void **state)
{
	static const char *const sets[3] = { "multi-0", "multi-1", "multi-2" };
	struct aj_kube_list_opts sel = { 0 };
	struct aj_watch_loop loop;
	struct recorder r[3];
	char name[32], want[48], selector[32];
	int i, j, round;

	(void)state;
	memset(r, 0, sizeof(r));
	OK(aj_watch_loop_init(&loop, &kube, oe), "loop init");
	loop.log = log_message;
	for (i = 0; i < 3; i++) {
		struct aj_kube_ref ref = { &aj_kube_configmaps, ns, NULL, NULL };

		snprintf(selector, sizeof(selector), "set=%s", sets[i]);
		sel.label_selector = selector;
		OK(aj_watch_add(&loop, &ref, &sel, record, &r[i], oe), "watch add");
	}
	for (i = 0; i < 50 && (!r[0].lists || !r[1].lists || !r[2].lists); i++)
		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
	/* Round 0 creates m<w>-<k>, round 1 patches them, round 2 deletes them. */
	for (round = 0; round < 3; round++)
		for (j = 0; j < 4; j++)
			for (i = 0; i < 3; i++) {
				struct aj_kube_ref ref = { &aj_kube_configmaps, ns, name, NULL };

				snprintf(name, sizeof(name), "m%d-%d", i, j);
				if (round == 0) {
					cJSON *obj = configmap(name, sets[i], "1");

					OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create");
					cJSON_Delete(obj);
				} else if (round == 1) {
					cJSON *patch = parse("{\"data\":{\"a\":\"2\"}}");

					OK(aj_kube_patch(&kube, &ref, AJ_KUBE_MERGE_PATCH, patch, NULL,
							 NULL, oe), "patch");
					cJSON_Delete(patch);
				} else {
					OK(aj_kube_delete(&kube, &ref, NULL, NULL, NULL, oe), "delete");
				}
			}
	for (i = 0; i < 3; i++)
		run_until(&loop, &r[i], 12, 20);
	for (i = 0; i < 3; i++) {
		static const char *const types[3] = { "ADDED", "MODIFIED", "DELETED" };

		assert_int_equal(r[i].nr, 12);
		for (round = 0; round < 3; round++)
			for (j = 0; j < 4; j++) {
				snprintf(want, sizeof(want), "%s m%d-%d", types[round], i, j);
				assert_string_equal(r[i].log[round * 4 + j], want);
			}
		assert_int_equal(aj_watch_lists(&loop, (size_t)i), 1);
		assert_int_equal(aj_watch_streams(&loop, (size_t)i), 1);
		assert_string_equal(r[i].messages, "");
	}
	aj_watch_loop_release(&loop);
}

/* Bookmarks move the resume point; streams resume from it without a list. */
static void watch_resumes_from_bookmarks(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, NULL, NULL };
	struct aj_kube_list_opts sel = { 0 };
	struct aj_watch_loop loop;
	struct recorder r;
	char name[32];
	int i, n = 0;

	(void)state;
	memset(&r, 0, sizeof(r));
	OK(aj_watch_loop_init(&loop, &kube, oe), "loop init");
	loop.log = log_message;
	/* The server sends a bookmark 2 s before a stream's deadline. */
	loop.min_timeout = 5;
	loop.max_timeout = 7;
	sel.label_selector = "set=bookmarked";
	OK(aj_watch_add(&loop, &ref, &sel, record, &r, oe), "watch add");
	/*
	 * Changes this watch does not see move the server's version on; the
	 * bookmarks carry it (a bookmark older than the stream is not sent).
	 */
	for (i = 0; i < 400 && (r.bookmarks < 2 || aj_watch_streams(&loop, 0) < 3); i++) {
		if (i % 10 == 0) {
			cJSON *obj;

			snprintf(name, sizeof(name), "noise-%d", n++);
			obj = configmap(name, "noise", "1");
			ref.name = name;
			OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create");
			ref.name = NULL;
			cJSON_Delete(obj);
		}
		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
	}
	assert_true(r.bookmarks >= 2);
	assert_string_equal(aj_watch_resource_version(&loop, 0), r.bookmark_rv);
	assert_int_equal(r.nr, 0);
	assert_true(aj_watch_streams(&loop, 0) >= 3);
	assert_int_equal(aj_watch_lists(&loop, 0), 1);
	assert_string_equal(r.messages, "");
	aj_watch_loop_release(&loop);
}

/* Run a command to its end; its exit status (-1 when it could not run). */
static int run_command(char *const *argv)
{
	pid_t pid;
	int status;

	if (posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ))
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void create_cm(const char *name, const char *label)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, name, NULL };
	cJSON *obj = configmap(name, label, "1");

	OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create");
	cJSON_Delete(obj);
}

/*
 * The API server crashes mid-watch and comes back. Its new watch cache
 * starts after the watches' version, so resuming is "too old" (410): both
 * watches list again and go on, each change seen once. Runs alone (it
 * restarts the shared server): integration_kube_client --restart.
 */
static void watch_survives_api_server_restart(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, NULL, NULL };
	struct aj_kube_ref probe = { &aj_kube_namespaces, NULL, ns, NULL };
	struct aj_kube_list_opts sel = { 0 };
	struct aj_watch_loop loop;
	struct recorder a, b;
	char script[1024];
	char *argv[] = { (char *)"bash", script, NULL };
	int i, up = 0;

	(void)state;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	snprintf(script, sizeof(script), "%s/tests/integration/kube/restart-apiserver.sh", AJ_SOURCE_DIR);
	OK(aj_watch_loop_init(&loop, &kube, oe), "loop init");
	loop.log = log_message;
	sel.label_selector = "set=restart-a";
	OK(aj_watch_add(&loop, &ref, &sel, record, &a, oe), "watch add");
	sel.label_selector = "set=restart-b";
	OK(aj_watch_add(&loop, &ref, &sel, record, &b, oe), "watch add");
	for (i = 0; i < 50 && (!a.lists || !b.lists); i++)
		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
	OK(aj_watch_loop_run(&loop, 500, oe), "watch loop");
	create_cm("ra1", "restart-a");
	create_cm("rb1", "restart-b");
	run_until(&loop, &a, 1, 20);
	run_until(&loop, &b, 1, 20);
	/* A change neither watch sees: the server's version passes theirs. */
	create_cm("rn", "restart-none");
	assert_int_equal(run_command(argv), 0);
	for (i = 0; i < 600 && (!up || a.lists < 2 || b.lists < 2); i++) {
		struct aj_errors e = AJ_ERRORS_INIT;
		cJSON *got = NULL;

		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
		if (!up && !aj_kube_get(&kube, &probe, &got, NULL, &e))
			up = 1;
		cJSON_Delete(got);
		aj_errors_release(&e);
	}
	assert_true(up);
	assert_int_equal(a.lists, 2);
	assert_int_equal(b.lists, 2);
	assert_int_equal(a.list_items, 1);
	assert_non_null(strstr(a.messages, "(HTTP 410)"));
	create_cm("ra2", "restart-a");
	create_cm("rb2", "restart-b");
	run_until(&loop, &a, 2, 30);
	run_until(&loop, &b, 2, 30);
	assert_int_equal(a.nr, 2);
	assert_string_equal(a.log[0], "ADDED ra1");
	assert_string_equal(a.log[1], "ADDED ra2");
	assert_int_equal(b.nr, 2);
	assert_string_equal(b.log[0], "ADDED rb1");
	assert_string_equal(b.log[1], "ADDED rb2");
	aj_watch_loop_release(&loop);
}

/* --- credentials and transport --- */

static int config_with_token(struct aj_kube_config *cfg, const char *token)
{
	const char *server = setting("AJ_KUBE_SERVER"), *ca = setting("AJ_KUBE_CA");

	aj_kube_config_init(cfg);
	if (!server || !ca)
		return -1;
	cfg->server = aj_strdup(server);
	cfg->ca_file = aj_strdup(ca);
	cfg->namespace = aj_strdup("default");
	cfg->token = token ? aj_strdup(token) : NULL;
	return 0;
}

static void token_rotation_after_401(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_namespaces, NULL, "default", NULL };
	const char *good = setting("AJ_KUBE_TOKEN");
	struct aj_kube_config cfg;
	struct aj_kube_status st;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube k;
	char file[] = "/tmp/aj-token-XXXXXX";
	char trace[] = "/tmp/aj-trace-XXXXXX";
	char text[65536];
	cJSON *got = NULL;
	FILE *f;
	int fd;
	size_t n;

	(void)state;
	aj_kube_status_init(&st);
	if (!good || config_with_token(&cfg, "stale-token") < 0)
		skip();
	fd = mkstemp(file);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "stale-token\n", 12), 12);
	close(fd);
	cfg.token_file = aj_strdup(file);
	OK(aj_kube_init(&k, &cfg, oe), "init");
	fd = mkstemp(trace);
	assert_true(fd >= 0);
	k.debug = fdopen(fd, "w+");

	/* The stale token: 401 Unauthorized, a typed API error. */
	assert_int_equal(aj_kube_get(&k, &ref, &got, &st, &err), -1);
	assert_int_equal(st.reason, AJ_KUBE_UNAUTHORIZED);
	assert_int_equal(st.code, 401);
	aj_errors_release(&err);

	/* The file rotates; the next 401 re-reads it and the retry succeeds. */
	f = fopen(file, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", good);
	fclose(f);
	OK(aj_kube_get(&k, &ref, &got, &st, oe), "get after rotation");
	assert_string_equal(str_at(got, "metadata", "name"), "default");
	cJSON_Delete(got);

	/* The debug trace shows the requests but never a token. */
	fflush(k.debug);
	rewind(k.debug);
	n = fread(text, 1, sizeof(text) - 1, k.debug);
	text[n] = '\0';
	assert_non_null(strstr(text, "GET https://"));
	/* HTTP/2 spells header names in lower case. */
	assert_non_null(strcasestr(text, "authorization: Bearer <redacted>"));
	assert_null(strstr(text, good));
	assert_null(strstr(text, "stale-token"));
	fclose(k.debug);
	k.debug = NULL;
	aj_kube_release(&k);
	aj_kube_status_release(&st);
	unlink(file);
	if (getenv("AJ_KEEP_TRACE")) print_message("trace: %s\n", trace); else unlink(trace);
}

/* A watch with a bearer token and the CA from a file (the others use a client certificate and inline CA). */
static void watch_with_token(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_configmaps, ns, "tok", NULL };
	struct aj_kube_list_opts sel = { 0 };
	struct aj_kube_config cfg;
	struct aj_watch_loop loop;
	struct aj_kube k;
	struct recorder r;
	cJSON *obj;
	int i;

	(void)state;
	memset(&r, 0, sizeof(r));
	if (!setting("AJ_KUBE_TOKEN") || config_with_token(&cfg, setting("AJ_KUBE_TOKEN")) < 0)
		skip();
	OK(aj_kube_init(&k, &cfg, oe), "init");
	OK(aj_watch_loop_init(&loop, &k, oe), "loop init");
	loop.log = log_message;
	sel.label_selector = "set=token";
	OK(aj_watch_add(&loop, &((struct aj_kube_ref){ &aj_kube_configmaps, ns, NULL, NULL }),
			&sel, record, &r, oe), "watch add");
	for (i = 0; i < 50 && !r.lists; i++)
		OK(aj_watch_loop_run(&loop, 100, oe), "watch loop");
	/* Give the stream a moment to be up before the change. */
	OK(aj_watch_loop_run(&loop, 500, oe), "watch loop");
	obj = configmap("tok", "token", "1");
	OK(aj_kube_create(&kube, &ref, obj, NULL, NULL, oe), "create");
	cJSON_Delete(obj);
	run_until(&loop, &r, 1, 20);
	assert_string_equal(r.log[0], "ADDED tok");
	assert_string_equal(r.messages, "");
	aj_watch_loop_release(&loop);
	aj_kube_release(&k);
}

static void transport_and_tls_errors(void **state)
{
	struct aj_kube_ref ref = { &aj_kube_namespaces, NULL, "default", NULL };
	struct aj_kube_config cfg;
	struct aj_kube_status st;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube k;
	cJSON *got = NULL;

	(void)state;
	aj_kube_status_init(&st);
	/* Nobody listens on port 1. */
	aj_kube_config_init(&cfg);
	cfg.server = aj_strdup("https://127.0.0.1:1");
	OK(aj_kube_init(&k, &cfg, oe), "init");
	assert_int_equal(aj_kube_get(&k, &ref, &got, &st, &err), -1);
	assert_int_equal(st.reason, AJ_KUBE_TRANSPORT);
	assert_int_equal(st.code, 0);
	assert_true(errors_contain(&err, "cannot reach the API server at https://127.0.0.1:1"));
	aj_errors_release(&err);
	aj_kube_release(&k);

	/* The real server, but without its CA: verification fails. */
	if (config_with_token(&cfg, setting("AJ_KUBE_TOKEN")) < 0)
		skip();
	aj_free(cfg.ca_file);
	cfg.ca_file = NULL;
	OK(aj_kube_init(&k, &cfg, oe), "init");
	assert_int_equal(aj_kube_get(&k, &ref, &got, &st, &err), -1);
	assert_int_equal(st.reason, AJ_KUBE_TRANSPORT);
	assert_true(errors_contain(&err, "certificate"));
	aj_errors_release(&err);
	aj_kube_release(&k);
	aj_kube_status_release(&st);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(configmap_crud_and_patches),
		cmocka_unit_test(list_selectors_and_pages),
		cmocka_unit_test(typed_errors),
		cmocka_unit_test(ajjob_status_subresource),
		cmocka_unit_test(watch_sees_changes_in_order),
		cmocka_unit_test(watch_resumes_after_the_stream_ends),
		cmocka_unit_test(watch_relists_when_an_event_is_refused),
		cmocka_unit_test(watches_share_one_loop_in_order),
		cmocka_unit_test(watch_resumes_from_bookmarks),
		cmocka_unit_test(watch_with_token),
		cmocka_unit_test(token_rotation_after_401),
		cmocka_unit_test(transport_and_tls_errors),
	};
	const struct CMUnitTest restart[] = {
		cmocka_unit_test(watch_survives_api_server_restart),
	};

	if (argc > 1 && !strcmp(argv[1], "--restart"))
		return cmocka_run_group_tests(restart, group_setup, group_teardown);
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
