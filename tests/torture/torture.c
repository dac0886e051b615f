/*
 * Allocation-failure torture. Each operation below is run once to count the
 * allocations it makes and to keep its result; then, for every n below that
 * count, it is run again with allocation n and every later one failing. Each
 * such run must either fail cleanly (-1 with an "out of memory" entry and no
 * result) or, when the failed allocation was optional, give the very same
 * result. Nothing may leak: in a plain build the heap in use after a run must
 * equal the heap before it (glibc mallinfo2, which also sees libyaml's and
 * OpenSSL's allocations); under AddressSanitizer LeakSanitizer checks at exit.
 *
 * Operations: every example template from its directory through the
 * pipeline (resolve, JobSpec, prepare, validate, build); an AjJob bundle
 * read and built the same way; YAML load and
 * emit; SKU resolution; ignore rules; the controller's cache and status;
 * kubeconfig loading; watch and Status decoding; SAS signing.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "support.h"

#include "azure/sas.h"
#include "backend/backend.h"
#include "cache.h"
#include "code/ignore.h"
#include "core/alloc.h"
#include "core/ajjob.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/jobspec.h"
#include "core/node.h"
#include "core/resolve.h"
#include "core/sku.h"
#include "core/source.h"
#include "core/yaml.h"
#include "io/source_dir.h"
#include "kube/kubeconfig.h"
#include "kube/status.h"
#include "kube/watch.h"
#include "pipeline/pipeline.h"
#include "status.h"

#if defined(__SANITIZE_ADDRESS__)
#define HEAP_CHECK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HEAP_CHECK 0
#endif
#endif
#ifndef HEAP_CHECK
#define HEAP_CHECK 1
#endif

#define EXAMPLES AJ_SOURCE_DIR "/examples/.azure_jobs"

/* An operation: 0 with *out (its result), or -1 with err filled. */
typedef int (*op_fn)(const void *arg, struct aj_errors *err, cJSON **out);

static size_t heap_in_use(void)
{
	return HEAP_CHECK ? mallinfo2().uordblks : 0;
}

static int oom(struct aj_errors *err)
{
	return aj_errors_oom(err);
}

/*
 * Run op with every allocation failing from n on, for each n the successful
 * run reached. Returns the allocation count (for the report).
 */
static long torture(const char *name, op_fn op, const void *arg)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *want = NULL;
	long count, n;
	size_t before;

	/* Warm up once (one-time library state), then count. */
	if (op(arg, &err, &want))
		fail_msg("%s: %s", name, aj_test_errors_text(&err));
	cJSON_Delete(want);
	want = NULL;
	aj_alloc_fail_after(-1);
	if (op(arg, &err, &want))
		fail_msg("%s: %s", name, aj_test_errors_text(&err));
	count = aj_alloc_count();
	assert_true(count > 0);
	for (n = 0; n < count; n++) {
		struct aj_errors e = AJ_ERRORS_INIT;
		cJSON *got = NULL;
		int r;

		before = heap_in_use();
		aj_alloc_fail_after(n);
		r = op(arg, &e, &got);
		aj_alloc_fail_after(-1);
		if (r) {
			if (r != -1 || got)
				fail_msg("%s: allocation %ld: returned %d with a result", name, n, r);
			if (!aj_test_errors_contain(&e, "out of memory"))
				fail_msg("%s: allocation %ld: not reported as out of memory: %s",
					 name, n, aj_test_errors_text(&e));
		} else if (!cJSON_Compare(want, got, 1)) {
			fail_msg("%s: allocation %ld failed, yet the operation succeeded "
				 "with a different result", name, n);
		}
		cJSON_Delete(got);
		aj_errors_release(&e);
		if (heap_in_use() != before)
			fail_msg("%s: allocation %ld: %zu bytes leaked", name, n,
				 heap_in_use() - before);
	}
	cJSON_Delete(want);
	aj_errors_release(&err);
	print_message("%-28s %6ld allocations, each failed in turn\n", name, count);
	return count;
}

/* ---- the template pipeline --------------------------------------------- */

static const char *const command[] = { "python", "train.py", "--msg", "it's $(here)" };

/* The pipeline from `in` to the objects, as the CLI and the controller run it. */
static int build(const struct aj_pipeline_in *in, struct aj_errors *err, cJSON **out)
{
	struct aj_build_ctx ctx = { "job-1", "team", "uid-1", "job-1", AJ_AJJOB_API_VERSION, 0 };
	struct aj_pipeline pl;
	int r;

	aj_pipeline_init(&pl);
	r = aj_pipeline_load(in, &pl, err) || aj_pipeline_build(&pl, &ctx, out, err) ? -1 : 0;
	aj_pipeline_release(&pl);
	return r;
}

static int op_template(const void *arg, struct aj_errors *err, cJSON **out)
{
	struct aj_shape_args args = { 0, 0, 0 };
	struct aj_source src;
	struct aj_pipeline_in in = { &src, arg, &args, command, 4, NULL, NULL, NULL };
	int r;

	if (aj_source_dir_init(&src, EXAMPLES, ".azure_jobs", err))
		return -1;
	r = build(&in, err, out);
	aj_source_release(&src);
	return r;
}

static const char *const bundle_yaml =
	"name: template/gpu\n"
	"template:\n"
	"  base: [common, storage.default]\n"
	"  config:\n"
	"    jobs: [{name: train, sku: {\"1\": G1, \"2-7\": \"{nodes}xG8\", \"8+\": 8xG8-H100}}]\n"
	"components:\n"
	"  template/common:\n"
	"    config: {target: {service: volcano, gpus_per_node: 8}, environment: {image: \"pytorch:2\"}, jobs: [{instance_count: 2}]}\n"
	"  storage/default:\n"
	"    base: []\n"
	"    config: {storage: {shared: {storage_account_name: acct, container_name: data, mount_dir: /mnt/shared}}}\n"
	"command: [python, train.py, \"--msg=it's $(here)\"]\n"
	"nodes: 2\n"
	"processes: 8\n";

static int op_bundle(const void *arg, struct aj_errors *err, cJSON **out)
{
	struct aj_node *spec = NULL;
	struct aj_bundle b;
	int r;

	(void)arg;
	if (aj_yaml_load(bundle_yaml, strlen(bundle_yaml), "ajjob.yaml", &spec, err))
		return -1;
	aj_bundle_init(&b);
	r = aj_bundle_read(&b, spec, "AjJob team/job-1", err);
	if (!r) {
		struct aj_pipeline_in in = { &b.source, b.leaf, &b.args,
					     (const char *const *)b.command.items, b.command.nr,
					     b.code_digest, NULL, NULL };

		r = build(&in, err, out);
	}
	aj_bundle_release(&b);
	aj_node_free(spec);
	return r;
}

/* ---- YAML and SKU ------------------------------------------------------ */

static int op_yaml(const void *arg, struct aj_errors *err, cJSON **out)
{
	static const char text[] =
		"base: &b [x, y]\n"
		"config:\n"
		"  a: *b\n"
		"  \"quoted key\": {n: 1, f: 2.5, t: true, z: null, s: 'it''s'}\n"
		"  long: |\n    line one\n    line two\n"
		"  list: [1, [2, [3]], {k: v}]\n";
	struct aj_buf emitted = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_node *tree = NULL;
	cJSON *j;

	(void)arg;
	if (aj_yaml_load(text, sizeof(text) - 1, "t.yaml", &tree, err))
		return -1;
	j = aj_node_to_cjson(tree);
	aj_node_free(tree);
	if (!j)
		return oom(err);
	if (aj_yaml_emit(j, &emitted, err)) {
		cJSON_Delete(j);
		return -1;
	}
	if (!cJSON_AddStringToObject(j, "emitted", aj_buf_cstr(&emitted))) {
		cJSON_Delete(j);
		aj_buf_release(&emitted);
		return oom(err);
	}
	aj_buf_release(&emitted);
	*out = j;
	return 0;
}

static int op_sku(const void *arg, struct aj_errors *err, cJSON **out)
{
	static const char text[] = "{\"1\": G1, \"2-4\": \"{nodes}x{processes}G8-A100\", \"5+\": 8xG8-H100-NvLink}";
	struct aj_strlist types = AJ_STRLIST_INIT;
	struct aj_node *doc = NULL;
	char *sku = NULL;
	cJSON *j = NULL, *arr;
	size_t i;
	int r;

	(void)arg;
	if (aj_yaml_load(text, sizeof(text) - 1, "sku.yaml", &doc, err))
		return -1;
	r = aj_sku_resolve(doc, "config.jobs[0].sku", 3, 8, &sku, err);
	aj_node_free(doc);
	if (r)
		return -1;
	r = aj_sku_instance_types(sku, &types);
	if (r < 0) {
		aj_free(sku);
		return oom(err);
	}
	j = cJSON_CreateObject();
	arr = cJSON_AddArrayToObject(j, "types");
	if (!cJSON_AddStringToObject(j, "sku", sku) || !arr)
		goto fail;
	for (i = 0; i < types.nr; i++)
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(types.items[i])))
			goto fail;
	aj_free(sku);
	aj_strlist_release(&types);
	*out = j;
	return 0;
fail:
	cJSON_Delete(j);
	aj_free(sku);
	aj_strlist_release(&types);
	return oom(err);
}

/* ---- code ignore rules ------------------------------------------------- */

static int op_ignore(const void *arg, struct aj_errors *err, cJSON **out)
{
	static const char file[] = "# comment\n*.log\n!keep.log\nbuild/\n/data/**/raw\n[a-c]?.bin\n";
	static const char *const paths[] = {
		"x.log", "keep.log", "build", "src/build", "data/a/b/raw",
		"b1.bin", "d1.bin", ".git", "pkg/node_modules", ".azure_jobs/scripts"
	};
	struct aj_strlist list = AJ_STRLIST_INIT;
	struct aj_ignore ig;
	cJSON *j = NULL;
	size_t i;
	int r = -1;

	(void)arg;
	aj_ignore_init(&ig);
	if (aj_strlist_add(&list, "*.ckpt") || aj_strlist_add(&list, "outputs/")) {
		oom(err);
		goto out;
	}
	if (aj_ignore_add_builtins(&ig, err) || aj_ignore_add_list(&ig, &list, "code.ignore", err) ||
	    aj_ignore_add_text(&ig, file, sizeof(file) - 1, ".codeignore", err))
		goto out;
	j = cJSON_CreateObject();
	if (!j) {
		oom(err);
		goto out;
	}
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		const struct aj_ignore_rule *rule = aj_ignore_check(&ig, paths[i], strlen(paths[i]), 1);

		if (!cJSON_AddBoolToObject(j, paths[i], aj_ignore_excludes(rule))) {
			oom(err);
			goto out;
		}
	}
	*out = j;
	j = NULL;
	r = 0;
out:
	cJSON_Delete(j);
	aj_ignore_release(&ig);
	aj_strlist_release(&list);
	return r;
}

/* ---- controller: cache and status -------------------------------------- */

static int op_cache(const void *arg, struct aj_errors *err, cJSON **out)
{
	static const char ajjob[] =
		"{\"apiVersion\":\"aj.dev/v1alpha1\",\"kind\":\"AjJob\",\"metadata\":{\"name\":\"j\","
		"\"namespace\":\"team\",\"uid\":\"u-1\",\"resourceVersion\":\"7\",\"generation\":2,"
		"\"annotations\":{\"aj.dev/cancel\":\"true\"}},\"spec\":{\"name\":\"template/x\"},"
		"\"status\":{\"phase\":\"Submitted\",\"observedGeneration\":1,"
		"\"volcano\":{\"jobName\":\"j\"}}}";
	static const char tmpl[] =
		"{\"apiVersion\":\"aj.dev/v1alpha1\",\"kind\":\"AjTemplate\",\"metadata\":{"
		"\"name\":\"storage.default\",\"namespace\":\"team\",\"uid\":\"u-2\"},"
		"\"spec\":{\"config\":{\"storage\":{\"s\":{\"mount_dir\":\"/mnt\"}}}}}";
	struct aj_ajjob_view v;
	struct aj_cache c;
	struct aj_source src;
	cJSON *obj, *j = NULL;
	int r = -1, got;

	(void)arg;
	memset(&v, 0, sizeof(v));
	if (aj_cache_init(&c))
		return oom(err);
	obj = cJSON_Parse(ajjob);
	if (!obj || aj_cache_ajjob_put(&c, obj)) {
		oom(err);
		goto out;
	}
	obj = cJSON_Parse(tmpl);
	if (!obj || aj_cache_template_put(&c, obj)) {
		oom(err);
		goto out;
	}
	if (aj_cache_template_source(&c, "team", &src, err))
		goto out;
	aj_source_release(&src);
	got = aj_cache_ajjob_get(&c, "team/j", &v);
	if (got < 0) {
		oom(err);
		goto out;
	}
	assert_int_equal(got, 1);
	j = cJSON_CreateObject();
	if (!cJSON_AddStringToObject(j, "uid", v.uid) ||
	    !cJSON_AddNumberToObject(j, "generation", (double)v.generation) ||
	    !cJSON_AddNumberToObject(j, "observed", (double)v.observed_generation) ||
	    !cJSON_AddStringToObject(j, "phase", aj_phase_name(v.phase)) ||
	    !cJSON_AddBoolToObject(j, "cancel", v.cancel) ||
	    !cJSON_AddStringToObject(j, "volcano", v.job ? v.job : "")) {
		cJSON_Delete(j);
		j = NULL;
		oom(err);
		goto out;
	}
	*out = j;
	r = 0;
out:
	aj_ajjob_view_release(&v);
	aj_cache_release(&c);
	return r;
}

static int op_status(const void *arg, struct aj_errors *err, cJSON **out)
{
	static const char prev_text[] =
		"{\"phase\":\"Pending\",\"observedGeneration\":1,\"conditions\":[{\"type\":\"Submitted\","
		"\"status\":\"False\",\"reason\":\"Pending\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}]}";
	struct aj_status st = { AJ_PHASE_FAILED, 0, "InvalidSpec",
				"template/x.yaml:3:5: config.jobs[0].sku: expected string",
				"volcano", 2, "volcano", NULL, 0, 0, 0, NULL, NULL, 0, NULL, 0 };
	cJSON *prev = cJSON_Parse(prev_text);
	int changed = 0;

	(void)arg;
	if (!prev)
		return oom(err);
	*out = aj_status_next(prev, &st, "2026-01-02T00:00:00Z", &changed);
	cJSON_Delete(prev);
	if (!*out)
		return oom(err);
	assert_true(changed);
	return 0;
}

/* ---- Kubernetes client: kubeconfig, watch and Status decoding ---------- */

static int op_kubeconfig(const void *arg, struct aj_errors *err, cJSON **out)
{
	struct aj_kube_config_opts o;
	struct aj_kube_config cfg;
	cJSON *j;

	memset(&o, 0, sizeof(o));
	o.kubeconfig = arg;
	o.context = "dev";
	if (aj_kube_config_load(&cfg, &o, err))
		return -1;
	j = cJSON_CreateObject();
	if (!cJSON_AddStringToObject(j, "server", cfg.server) ||
	    !cJSON_AddStringToObject(j, "namespace", cfg.namespace) ||
	    !cJSON_AddNumberToObject(j, "ca", (double)cfg.ca.len) ||
	    !cJSON_AddBoolToObject(j, "token", cfg.token != NULL)) {
		cJSON_Delete(j);
		aj_kube_config_release(&cfg);
		return oom(err);
	}
	aj_kube_config_release(&cfg);
	*out = j;
	return 0;
}

struct events {
	int n;
	int types[8];
	long codes[8];
};

static int on_event(void *ctx, struct aj_watch_event *ev)
{
	struct events *e = ctx;
	struct aj_kube_status st;

	if (e->n == 8)
		return -1;
	e->codes[e->n] = 0;
	if (ev->type == AJ_WATCH_ERROR) {
		aj_kube_status_init(&st);
		if (aj_kube_status_from_json(&st, 0, ev->object))
			return -1;
		e->codes[e->n] = st.code;
		aj_kube_status_release(&st);
	}
	e->types[e->n++] = (int)ev->type;
	return 0;
}

static int op_watch(const void *arg, struct aj_errors *err, cJSON **out)
{
	static const char stream[] =
		"{\"type\":\"ADDED\",\"object\":{\"kind\":\"AjJob\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"5\"}}}\n"
		"{\"type\":\"MODIFIED\",\"object\":{\"kind\":\"AjJob\",\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"6\"}}}\n"
		"{\"type\":\"BOOKMARK\",\"object\":{\"metadata\":{\"resourceVersion\":\"9\"}}}\n"
		"{\"type\":\"ERROR\",\"object\":{\"kind\":\"Status\",\"code\":410,\"reason\":\"Expired\"}}\n";
	struct aj_watch_decoder d;
	struct events e = { 0, { 0 }, { 0 } };
	cJSON *j;
	size_t start, end, off;
	int i, r = 0;

	(void)arg;
	aj_watch_decoder_init(&d);
	/* One message per line, in pieces of 17 bytes. */
	for (start = 0; start < sizeof(stream) - 1 && !r; start = end) {
		end = (size_t)((const char *)memchr(stream + start, '\n', sizeof(stream) - 1 - start) - stream) + 1;
		for (off = start; off < end && !r; off += 17) {
			size_t n = end - off < 17 ? end - off : 17;

			r = aj_watch_decoder_feed(&d, stream + off, n, off == start, off + n == end,
						  "watch ajjobs", on_event, &e, err);
		}
	}
	aj_watch_decoder_release(&d);
	if (r)
		return -1;
	j = cJSON_CreateArray();
	for (i = 0; i < e.n; i++) {
		cJSON *ev = cJSON_CreateObject();

		if (!cJSON_AddItemToArray(j, ev) ||
		    !cJSON_AddStringToObject(ev, "type", aj_watch_type_name(e.types[i])) ||
		    !cJSON_AddNumberToObject(ev, "code", (double)e.codes[i])) {
			if (!j)
				cJSON_Delete(ev);
			cJSON_Delete(j);
			return oom(err);
		}
	}
	*out = j;
	return 0;
}

static int op_kube_status(const void *arg, struct aj_errors *err, cJSON **out)
{
	static const char body[] =
		"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"message\":\"AjJob \\\"x\\\" is invalid\","
		"\"reason\":\"Invalid\",\"details\":{\"name\":\"x\",\"group\":\"aj.dev\",\"kind\":\"AjJob\","
		"\"causes\":[{\"reason\":\"FieldValueInvalid\",\"field\":\"spec.nodes\",\"message\":\"must be >= 1\"},"
		"{\"reason\":\"FieldValueRequired\",\"field\":\"spec.name\",\"message\":\"Required value\"}]},\"code\":422}";
	struct aj_kube_status st;
	struct aj_errors rendered = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *j;

	(void)arg;
	aj_kube_status_init(&st);
	if (aj_kube_status_decode(&st, 422, body, sizeof(body) - 1, "3"))
		return oom(err);
	aj_kube_status_to_errors(&st, "create AjJob team/x", &rendered);
	aj_kube_status_release(&st);
	if (rendered.oom || aj_errors_format_all(&rendered, &text)) {
		aj_errors_release(&rendered);
		aj_buf_release(&text);
		return oom(err);
	}
	aj_errors_release(&rendered);
	j = cJSON_CreateString(aj_buf_cstr(&text));
	aj_buf_release(&text);
	if (!j)
		return oom(err);
	*out = j;
	return 0;
}

/* ---- Azure: SAS ---------------------------------------------------------- */

static int op_sas(const void *arg, struct aj_errors *err, cJSON **out)
{
	struct aj_sas_params p = { "acct", "code", "job-1/code.tar.gz", "rcw",
				   "2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z",
				   NULL, NULL, NULL };
	struct aj_sas_key key = { "oid", "tid", "2026-01-01T00:00:00Z", "2026-01-03T00:00:00Z",
				  "b", "2024-11-04", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" };
	struct aj_buf a = AJ_BUF_INIT(AJ_BUF_SMALL), b = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *j = NULL;
	int r;

	(void)arg;
	r = aj_sas_service(&p, "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", &a, err);
	if (!r)
		r = aj_sas_user_delegation(&p, &key, &b, err);
	if (!r) {
		j = cJSON_CreateObject();
		if (!cJSON_AddStringToObject(j, "service", aj_buf_cstr(&a)) ||
		    !cJSON_AddStringToObject(j, "delegation", aj_buf_cstr(&b))) {
			cJSON_Delete(j);
			j = NULL;
			r = oom(err);
		}
	}
	aj_buf_release(&a);
	aj_buf_release(&b);
	*out = j;
	return r;
}

/* ---- the tests ----------------------------------------------------------- */

static void templates(void **state)
{
	static const char *const leaves[] = {
		"template/volcano", "template/volcano-cpu", "template/aml", "template/sing",
		"template/heterogeneous", "template/nested", "template/multinode",
		"template/pretrain"
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(leaves) / sizeof(leaves[0]); i++)
		torture(leaves[i], op_template, leaves[i]);
}

static void bundle(void **state)
{
	(void)state;
	torture("bundle", op_bundle, NULL);
}

static void yaml_and_sku(void **state)
{
	(void)state;
	torture("yaml load+emit", op_yaml, NULL);
	torture("sku resolve", op_sku, NULL);
}

static void ignore(void **state)
{
	(void)state;
	torture("ignore rules", op_ignore, NULL);
}

static void controller(void **state)
{
	(void)state;
	torture("cache put/get", op_cache, NULL);
	torture("status next", op_status, NULL);
}

static void kube(void **state)
{
	static const char text[] =
		"apiVersion: v1\nkind: Config\ncurrent-context: other\n"
		"clusters:\n- name: c1\n  cluster:\n    server: https://127.0.0.1:6443/\n"
		"    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCg==\n"
		"users:\n- name: u1\n  user:\n    token: abc.def\n"
		"contexts:\n- name: dev\n  context: {cluster: c1, user: u1, namespace: team}\n"
		"- name: other\n  context: {cluster: c1, user: u1}\n";
	char path[] = "/tmp/aj-torture-kubeconfig-XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, sizeof(text) - 1), (ssize_t)(sizeof(text) - 1));
	close(fd);
	torture("kubeconfig load", op_kubeconfig, path);
	unlink(path);
	torture("watch decode", op_watch, NULL);
	torture("kube status decode", op_kube_status, NULL);
}

static void azure(void **state)
{
	(void)state;
	torture("sas sign", op_sas, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(templates),
		cmocka_unit_test(bundle),
		cmocka_unit_test(yaml_and_sku),
		cmocka_unit_test(ignore),
		cmocka_unit_test(controller),
		cmocka_unit_test(kube),
		cmocka_unit_test(azure),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
