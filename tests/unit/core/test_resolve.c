#include "support.h"

#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/node.h"
#include "core/resolve.h"
#include "core/source.h"
#include "io/source_dir.h"

#define HOME AJ_TEST_DATA "/resolve"

/* ---- a directory source that counts reads per name ---- */

struct counting {
	struct aj_source inner;
	struct aj_strlist names;   /* one entry per read() call */
};

static int counting_read(void *ctx, const char *name, struct aj_node **doc,
			 char **display, struct aj_errors *err)
{
	struct counting *c = ctx;

	assert_int_equal(aj_strlist_add(&c->names, name), 0);
	return c->inner.ops->read(c->inner.ctx, name, doc, display, err);
}

static int counting_describe(void *ctx, const char *name, char **display)
{
	struct counting *c = ctx;

	return c->inner.ops->describe(c->inner.ctx, name, display);
}

static const struct aj_source_ops counting_ops = {
	counting_read, NULL, counting_describe, NULL,
};

static void home_source(struct aj_source *s)
{
	struct aj_errors err = AJ_ERRORS_INIT;

	assert_int_equal(aj_source_dir_init(s, HOME, ".azure_jobs", &err), 0);
}

/* Resolve `name` from the test home; the caller releases t. */
static int resolve(const char *name, struct aj_template *t, struct aj_errors *err)
{
	struct aj_source s;
	int r;

	home_source(&s);
	aj_template_init(t);
	r = aj_template_resolve(&s, name, t, err);
	aj_source_release(&s);
	return r;
}

static void check_config(const char *name, const char *expected)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;
	struct aj_node *want = aj_test_yaml(expected);

	if (resolve(name, &t, &err))
		fail_msg("%s: %s", name, aj_test_errors_text(&err));
	if (!want)
		want = aj_node_new(AJ_NODE_MAP, NULL);
	if (!aj_node_equal(t.config, want))
		fail_msg("%s did not resolve to %s", name, expected);
	aj_node_free(want);
	aj_template_release(&t);
}

static void check_error(const char *name, const char *fragment)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;

	assert_int_equal(resolve(name, &t, &err), -1);
	if (!aj_test_errors_contain(&err, fragment))
		fail_msg("expected \"%s\" in: %s", fragment, aj_test_errors_text(&err));
	assert_null(t.config);
	aj_template_release(&t);
	aj_errors_release(&err);
}

static void v7_child_overrides_its_base(void **state)
{
	(void)state;
	check_config("template/child", "{from_base: true, shared: child, from_child: true}");
}

static void v8_bases_merge_left_to_right(void **state)
{
	(void)state;
	check_config("template/multi", "{source: child, only_a: 1, only_b: 2}");
	check_config("template/gc_child", "{level: child, gp_only: true, parent_only: true}");
}

static void v9_dotted_base_is_below_the_home(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;

	(void)state;
	check_config("template/dotted", "{gpu: true, name: my_job}");
	assert_int_equal(resolve("template/dotted", &t, &err), 0);
	assert_int_equal(t.files.nr, 2);
	assert_string_equal(t.files.items[1], "envs/gpu");
	aj_template_release(&t);
}

static void v11_cycles_show_the_chain(void **state)
{
	(void)state;
	check_error("template/self", ".azure_jobs/template/self.yaml:1:7: circular template "
		    "inheritance: template/self -> template/self");
	check_error("template/ping", ".azure_jobs/template/pong.yaml:2:14: circular template "
		    "inheritance: template/ping -> template/pong -> template/ping");
	check_error("template/x", ".azure_jobs/template/z.yaml:3:5: circular template "
		    "inheritance: template/x -> template/y -> template/z -> template/x");
}

static void v11_bad_base_types(void **state)
{
	(void)state;
	check_error("template/int_base", ".azure_jobs/template/int_base.yaml:2:7: "
		    "base must be a string or a list of strings, got integer");
	check_error("template/bad_list", ".azure_jobs/template/bad_list.yaml:3:5: "
		    "base[1] must be a string, got integer");
}

static void v11_missing_files_show_the_chain(void **state)
{
	(void)state;
	check_error("template/missing", ".azure_jobs/template/missing.yaml:1:7: template/missing "
		    "-> template/nonexistent: file not found: .azure_jobs/template/nonexistent.yaml");
	check_error("template/typo", ".azure_jobs/template/typo.yaml:1:14: template/typo -> "
		    "storage/defualt: file not found: .azure_jobs/storage/defualt.yaml "
		    "(did you mean storage/default?)");
	check_error("template/nope", "template/nope: file not found: .azure_jobs/template/nope.yaml");
	/* names near the missing one, in the folder's order; none when nothing is near */
	check_error("template/chlid", "template/chlid: file not found: .azure_jobs/template/chlid.yaml "
		    "(did you mean template/child?)");
	{
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_template t;

		assert_int_equal(resolve("template/zzzzzz", &t, &err), -1);
		assert_true(aj_test_errors_contain(&err, "template/zzzzzz: file not found"));
		assert_false(aj_test_errors_contain(&err, "did you mean"));
		aj_template_release(&t);
		aj_errors_release(&err);
	}
}

static void v11_empty_and_null_give_an_empty_mapping(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;

	(void)state;
	assert_int_equal(resolve("template/null_base", &t, &err), 0);
	assert_int_equal(t.config->type, AJ_NODE_MAP);
	assert_int_equal(t.config->nr, 0);
	assert_true(t.has_base);
	assert_int_equal(t.bases.nr, 0);
	aj_template_release(&t);
	assert_int_equal(resolve("template/comments", &t, &err), 0);
	assert_int_equal(t.config->type, AJ_NODE_MAP);
	assert_int_equal(t.config->nr, 0);
	assert_false(t.has_base);
	assert_null(t.docs[0]);
	aj_template_release(&t);
}

static void config_and_file_shape(void **state)
{
	(void)state;
	check_error("template/config_list", ".azure_jobs/template/config_list.yaml:2:9: "
		    "config must be a mapping, got list");
	check_error("template/list_file", ".azure_jobs/template/list_file.yaml:1:1: a template "
		    "file must be a mapping with `base` and `config`, got list");
	/* every unknown top-level key, each at its place: a typo no longer drops the config */
	check_error("template/extra_keys", ".azure_jobs/template/extra_keys.yaml:1:1: description: "
		    "unknown key: a template file holds only base and config");
	check_error("template/extra_keys", ".azure_jobs/template/extra_keys.yaml:3:1: cofnig: unknown key "
		    "(did you mean \"config\"?)");
	check_error("template/escape", ".azure_jobs/template/escape.yaml:1:8: base "
		    "\"../etc/passwd\" is not a valid template name");
	check_error("../outside", "invalid template name \"../outside\"");
}

static void realistic_template(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;
	static const char *const files[] = {
		"template/gpu", "template/common", "account/default", "storage/default",
		"storage/common", "environment/aml",
	};
	size_t i;

	(void)state;
	check_config("template/gpu",
		"code: {local_dir: ., ignore: [data/, outputs/]}\n"
		"target:\n"
		"  service: aml\n"
		"  subscription_id: 00000000-0000-0000-0000-000000000000\n"
		"  name: gpu-cluster\n"
		"storage:\n"
		"  out: {storage_account_name: acct, container_name: outputs, mount_dir: /mnt/out}\n"
		"environment:\n"
		"  image: mcr.microsoft.com/azureml/base:latest\n"
		"  setup: [pip install -e .]\n"
		"jobs:\n"
		"  - command: [nvidia-smi, python train.py]\n"
		"    name: train\n"
		"    sku: '{nodes}xG{processes}'\n");
	assert_int_equal(resolve("template/gpu", &t, &err), 0);
	assert_string_equal(t.name, "template/gpu");
	assert_string_equal(t.display, ".azure_jobs/template/gpu.yaml");
	assert_true(t.has_base);
	assert_int_equal(t.bases.nr, 4);
	assert_string_equal(t.bases.items[1], "account.default");
	assert_int_equal(t.files.nr, 6);
	for (i = 0; i < 6; i++)
		assert_string_equal(t.files.items[i], files[i]);
	/* docs hold each file as written, base and all. */
	assert_string_equal(aj_node_get(t.docs[3], "base")->str, "common");
	/* Values keep the position of the file that supplied them. */
	assert_string_equal(aj_node_at(t.config, "target.service")->pos.file->name,
			    ".azure_jobs/account/default.yaml");
	assert_int_equal(aj_node_at(t.config, "target.service")->pos.line, 3);
	aj_template_release(&t);
}

static void diamonds_read_each_file_once(void **state)
{
	struct counting c = { { NULL, NULL }, AJ_STRLIST_INIT };
	struct aj_source s = { &counting_ops, &c };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;
	static const char *const order[] = {
		"template/diamond", "template/left", "storage/shared", "template/right",
	};
	size_t i;

	(void)state;
	home_source(&c.inner);
	aj_template_init(&t);
	assert_int_equal(aj_template_resolve(&s, "template/diamond", &t, &err), 0);
	assert_int_equal(c.names.nr, 4);
	assert_int_equal(t.files.nr, 4);
	for (i = 0; i < 4; i++) {
		assert_string_equal(c.names.items[i], order[i]);
		assert_string_equal(t.files.items[i], order[i]);
	}
	/* Same result as merging the shared base into both sides. */
	check_config("template/diamond",
		"storage:\n"
		"  shared: {storage_account_name: acct, container_name: data, mount_dir: /mnt/shared}\n"
		"jobs:\n"
		"  - name: default\n"
		"    sku: G1\n"
		"    command: [setup, left, setup, right, train]\n"
		"side: right\n");
	aj_template_release(&t);
	aj_strlist_release(&c.names);
	aj_source_release(&c.inner);
}

static void graph_fails_before_merging(void **state)
{
	struct counting c = { { NULL, NULL }, AJ_STRLIST_INIT };
	struct aj_source s = { &counting_ops, &c };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;

	(void)state;
	home_source(&c.inner);
	aj_template_init(&t);
	/* typo's first base resolves fine; the second is missing. */
	assert_int_equal(aj_template_resolve(&s, "template/typo", &t, &err), -1);
	assert_null(t.config);
	assert_int_equal(aj_errors_count(&err), 1);
	assert_int_equal(c.names.nr, 3);
	assert_string_equal(c.names.items[2], "storage/defualt");
	aj_template_release(&t);
	aj_errors_release(&err);
	aj_strlist_release(&c.names);
	aj_source_release(&c.inner);
}

static struct aj_source *memory_bundle(struct aj_source *s, int depth)
{
	struct aj_node *leaf = aj_test_yaml("base: [mid, storage.x]\nconfig: {a: [1], b: {c: 1}}\n");
	struct aj_node *mid = aj_test_yaml("base: storage.x\nconfig: {a: [2], m: true}\n");
	struct aj_node *sx = aj_test_yaml("config: {b: {d: 2}, a: [0]}\n");
	int i;

	assert_int_equal(aj_source_memory_init(s, "AjJob ns/job"), 0);
	assert_int_equal(aj_source_memory_add(s, "template/leaf", leaf), 0);
	assert_int_equal(aj_source_memory_add(s, "template/mid", mid), 0);
	assert_int_equal(aj_source_memory_add(s, "storage/x", sx), 0);
	assert_int_equal(aj_source_memory_add(s, "template/empty", NULL), 0);
	/* A chain template/d0 -> d1 -> ... -> d<depth-1>. */
	for (i = 0; i < depth; i++) {
		char name[32], text[64];
		struct aj_node *d;

		snprintf(name, sizeof(name), "template/d%d", i);
		snprintf(text, sizeof(text), "base: d%d\nconfig: {n: %d}\n", i + 1, i);
		if (i == depth - 1)
			snprintf(text, sizeof(text), "config: {n: %d}\n", i);
		d = aj_test_yaml(text);
		assert_int_equal(aj_source_memory_add(s, name, d), 0);
		aj_node_free(d);
	}
	aj_node_free(leaf);
	aj_node_free(mid);
	aj_node_free(sx);
	return s;
}

static void memory_source_resolves_a_bundle(void **state)
{
	struct aj_source s;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;
	struct aj_node *want = aj_test_yaml("{b: {d: 2, c: 1}, a: [0, 2, 0, 1], m: true}");
	struct aj_strlist names = AJ_STRLIST_INIT;
	struct aj_node *list;

	(void)state;
	memory_bundle(&s, 0);
	aj_template_init(&t);
	assert_int_equal(aj_template_resolve(&s, "template/leaf", &t, &err), 0);
	assert_true(aj_node_equal(t.config, want));
	assert_string_equal(t.display, "AjJob ns/job: template/leaf");
	assert_int_equal(t.files.nr, 3);
	aj_template_release(&t);
	assert_int_equal(aj_template_resolve(&s, "template/empty", &t, &err), 0);
	assert_int_equal(t.config->nr, 0);
	aj_template_release(&t);
	assert_int_equal(aj_template_resolve(&s, "template/none", &t, &err), -1);
	assert_true(aj_test_errors_contain(&err, "template/none: file not found: "
					   "AjJob ns/job: template/none"));
	aj_errors_release(&err);
	aj_template_release(&t);
	assert_int_equal(s.ops->list(s.ctx, "template", &names, &err), 0);
	assert_int_equal(names.nr, 3);
	assert_string_equal(names.items[0], "template/empty");
	assert_string_equal(names.items[1], "template/leaf");
	assert_string_equal(names.items[2], "template/mid");
	aj_strlist_release(&names);
	/* Bad names are refused; re-adding replaces. */
	assert_int_equal(aj_source_memory_add(&s, "../x", want), -1);
	list = aj_test_yaml("[1]");
	assert_int_equal(aj_source_memory_add(&s, "template/empty", list), 0);
	aj_node_free(list);
	assert_int_equal(aj_template_resolve(&s, "template/empty", &t, &err), -1);
	assert_true(aj_test_errors_contain(&err, "AjJob ns/job: template/empty:1:1: a template "
					   "file must be a mapping"));
	aj_errors_release(&err);
	aj_template_release(&t);
	aj_node_free(want);
	aj_source_release(&s);
}

static void chains_deeper_than_the_cap_fail(void **state)
{
	struct aj_source s;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;

	(void)state;
	memory_bundle(&s, 65);
	aj_template_init(&t);
	/* 64 files in a chain resolve; 65 do not. */
	assert_int_equal(aj_template_resolve(&s, "template/d1", &t, &err), 0);
	assert_int_equal(aj_node_get(t.config, "n")->v.integer, 1);
	assert_int_equal(t.files.nr, 64);
	aj_template_release(&t);
	assert_int_equal(aj_template_resolve(&s, "template/d0", &t, &err), -1);
	assert_true(aj_test_errors_contain(&err, "template inheritance deeper than 64 "
					   "levels: template/d0 -> template/d1 -> "));
	aj_errors_release(&err);
	aj_template_release(&t);
	aj_source_release(&s);
}

static void chain_source_prefers_the_first(void **state)
{
	struct aj_source mem, dir, chain;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_template t;
	struct aj_node *over = aj_test_yaml("config: {from_base: overridden}\n");
	struct aj_strlist names = AJ_STRLIST_INIT;
	size_t i;

	(void)state;
	assert_int_equal(aj_source_memory_init(&mem, "bundle"), 0);
	assert_int_equal(aj_source_memory_add(&mem, "template/base", over), 0);
	assert_int_equal(aj_source_memory_add(&mem, "template/zzz", over), 0);
	home_source(&dir);
	assert_int_equal(aj_source_chain_init(&chain, &mem, &dir), 0);
	assert_null(mem.ops);
	aj_template_init(&t);
	assert_int_equal(aj_template_resolve(&chain, "template/child", &t, &err), 0);
	assert_string_equal(aj_node_get(t.config, "from_base")->str, "overridden");
	assert_string_equal(t.display, ".azure_jobs/template/child.yaml");
	aj_template_release(&t);
	assert_int_equal(chain.ops->list(chain.ctx, "template", &names, &err), 0);
	assert_string_equal(names.items[0], "template/a");
	assert_string_equal(names.items[names.nr - 1], "template/zzz");
	assert_true(aj_strlist_find(&names, "template/base") > 0);
	for (i = 1; i < names.nr; i++)
		assert_string_not_equal(names.items[i], names.items[i - 1]);
	aj_strlist_release(&names);
	aj_node_free(over);
	aj_source_release(&chain);
}

static void canonical_names(void **state)
{
	static const char *const good[] = {
		"template/gpu", "a", "a/b/c", "x/..y", "under_score/dash-ed.v1",
	};
	static const char *const bad[] = {
		"", "/abs", "a//b", "a/./b", "a/../b", "..", ".", "a b", "a\\b", "trail/",
		"ü/x",
	};
	char longname[300];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		assert_true(aj_canonical_valid(good[i]));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (aj_canonical_valid(bad[i]))
			fail_msg("accepted \"%s\"", bad[i]);
	memset(longname, 'a', sizeof(longname));
	longname[253] = '\0';
	assert_true(aj_canonical_valid(longname));
	longname[253] = 'a';
	longname[254] = '\0';
	assert_false(aj_canonical_valid(longname));
}

static void base_names(void **state)
{
	static const struct { const char *referrer, *base, *want; } good[] = {
		{ "template/x", "common", "template/common" },
		{ "storage/default", "common", "storage/common" },
		{ "template/x", "storage.default", "storage/default" },
		{ "storage/default", "environment.aml", "environment/aml" },
		{ "template/x", "a.b.c", "a/b.c" },
		{ "top", "sibling", "sibling" },
	};
	static const struct { const char *base, *why; } bad[] = {
		{ "", "it is empty" },
		{ "a/b", "use dots, not slashes" },
		{ "a\\b", "use dots, not slashes" },
		{ "/etc/passwd", "use dots, not slashes" },
		{ "..", "\"..\" is not allowed" },
		{ "a..b", "\"..\" is not allowed" },
		{ ".hidden", "needs a folder and a file" },
		{ "storage.", "needs a folder and a file" },
		{ "has space", "use letters, digits" },
	};
	struct aj_node *doc = aj_test_yaml("config: {}\nbase: [x]\n");
	const struct aj_node *at = aj_node_get(doc, "base")->items[0];
	char longbase[300];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		char *out = NULL;

		assert_int_equal(aj_canonical_base(good[i].referrer, good[i].base, &out,
						   &err, at), 0);
		assert_string_equal(out, good[i].want);
		aj_free(out);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		char *out = NULL;

		assert_int_equal(aj_canonical_base("template/x", bad[i].base, &out, &err, at), -1);
		assert_null(out);
		assert_true(aj_test_errors_contain(&err, "test.yaml:2:8: base \""));
		if (!aj_test_errors_contain(&err, bad[i].why))
			fail_msg("%s: %s", bad[i].base, aj_test_errors_text(&err));
		aj_errors_release(&err);
	}
	memset(longbase, 'b', sizeof(longbase));
	longbase[299] = '\0';
	{
		struct aj_errors err = AJ_ERRORS_INIT;
		char *out = NULL;

		assert_int_equal(aj_canonical_base("template/x", longbase, &out, &err, at), -1);
		assert_true(aj_test_errors_contain(&err, "is too long"));
		aj_errors_release(&err);
	}
	aj_node_free(doc);
}

static void bases_helper(void **state)
{
	struct aj_node *one = aj_test_yaml("base: storage.default\n");
	struct aj_node *none = aj_test_yaml("config: {}\n");
	struct aj_node *obj = aj_test_yaml("base: {x: 1}\n");
	struct aj_strlist l = AJ_STRLIST_INIT;
	struct aj_errors err = AJ_ERRORS_INIT;
	int present = -1;

	(void)state;
	assert_int_equal(aj_template_bases(one, "one.yaml", &l, &present, &err), 0);
	assert_true(present);
	assert_int_equal(l.nr, 1);
	assert_string_equal(l.items[0], "storage.default");
	aj_strlist_release(&l);
	assert_int_equal(aj_template_bases(none, "none.yaml", &l, &present, &err), 0);
	assert_false(present);
	assert_int_equal(l.nr, 0);
	assert_int_equal(aj_template_bases(NULL, "empty.yaml", &l, &present, &err), 0);
	assert_false(present);
	assert_int_equal(aj_template_bases(obj, "obj.yaml", &l, &present, &err), -1);
	assert_true(aj_test_errors_contain(&err, "obj.yaml:1:7: base must be a string or a "
					   "list of strings, got mapping"));
	aj_errors_release(&err);
	aj_node_free(one);
	aj_node_free(none);
	aj_node_free(obj);
}

static void resolve_survives_every_allocation_failure(void **state)
{
	struct aj_source s;
	struct aj_node *want = aj_test_yaml("{b: {d: 2, c: 1}, a: [0, 2, 0, 1], m: true}");
	long n;

	(void)state;
	memory_bundle(&s, 0);
	for (n = 0;; n++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_template t;
		int r;

		aj_template_init(&t);
		aj_alloc_fail_after(n);
		r = aj_template_resolve(&s, "template/leaf", &t, &err);
		aj_alloc_fail_after(-1);
		if (!r) {
			assert_true(aj_node_equal(t.config, want));
			aj_template_release(&t);
			break;
		}
		assert_true(aj_test_errors_contain(&err, "out of memory"));
		aj_template_release(&t);
		aj_errors_release(&err);
		assert_true(n < 10000);
	}
	assert_true(n > 30);
	aj_node_free(want);
	aj_source_release(&s);
}

/*
 * Issue: 4 layers of 63 bases that all name the next layer took ~16 CPU
 * seconds: every path repeats the scalar lists. Each file is merged once
 * and the copying is capped, so this fails fast with the cap in the message,
 * while 2 layers (63 x 63 setup lines = 3969 + 63 + 1) still resolve.
 */
static void diamond_layers(struct aj_source *s, int layers, int width)
{
	char name[64], text[4096];
	int l, i, k;

	assert_int_equal(aj_source_memory_init(s, "AjJob ns/d"), 0);
	for (l = 0; l <= layers; l++) {
		for (i = 0; i < (l ? width : 1); i++) {
			size_t n = 0;
			struct aj_node *doc;

			n += (size_t)snprintf(text + n, sizeof(text) - n, "base: [");
			for (k = 0; l < layers && k < width; k++)
				n += (size_t)snprintf(text + n, sizeof(text) - n, "%sl%d.f%d", k ? ", " : "",
						      l + 1, k);
			snprintf(text + n, sizeof(text) - n, "]\nconfig: {environment: {setup: [l%d-%d]}}\n",
				 l, i);
			doc = aj_test_yaml(text);
			if (l)
				snprintf(name, sizeof(name), "l%d/f%d", l, i);
			else
				snprintf(name, sizeof(name), "template/leaf");
			assert_int_equal(aj_source_memory_add(s, name, doc), 0);
			aj_node_free(doc);
		}
	}
}

static void diamond_cost_is_bounded(void **state)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_source s;
	struct aj_template t;

	(void)state;
	diamond_layers(&s, 2, 63);
	aj_template_init(&t);
	assert_int_equal(aj_template_resolve(&s, "template/leaf", &t, &err), 0);
	assert_int_equal(t.files.nr, 1 + 63 + 63);
	assert_int_equal(aj_node_at(t.config, "environment.setup")->nr, 63 * 63 + 63 + 1);
	aj_template_release(&t);
	aj_source_release(&s);

	diamond_layers(&s, 4, 63);
	assert_int_equal(aj_template_resolve(&s, "template/leaf", &t, &err), -1);
	assert_true(aj_test_errors_contain(&err, "AjJob ns/d: l1/f"));
	assert_true(aj_test_errors_contain(&err, "would copy more than 1000000 nodes (bases "
					   "reached along many paths repeat their lists each time)"));
	aj_template_release(&t);
	aj_source_release(&s);
	aj_errors_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(v7_child_overrides_its_base),
		cmocka_unit_test(v8_bases_merge_left_to_right),
		cmocka_unit_test(v9_dotted_base_is_below_the_home),
		cmocka_unit_test(v11_cycles_show_the_chain),
		cmocka_unit_test(v11_bad_base_types),
		cmocka_unit_test(v11_missing_files_show_the_chain),
		cmocka_unit_test(v11_empty_and_null_give_an_empty_mapping),
		cmocka_unit_test(config_and_file_shape),
		cmocka_unit_test(realistic_template),
		cmocka_unit_test(diamonds_read_each_file_once),
		cmocka_unit_test(graph_fails_before_merging),
		cmocka_unit_test(memory_source_resolves_a_bundle),
		cmocka_unit_test(diamond_cost_is_bounded),
		cmocka_unit_test(chains_deeper_than_the_cap_fail),
		cmocka_unit_test(chain_source_prefers_the_first),
		cmocka_unit_test(canonical_names),
		cmocka_unit_test(base_names),
		cmocka_unit_test(bases_helper),
		cmocka_unit_test(resolve_survives_every_allocation_failure),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
