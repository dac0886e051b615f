/*
 * The pipeline's two entry paths agree: every example template rendered as
 * the CLI does (its template directory) and as the controller does (the
 * AjJob that `aj run` writes, stored as JSON, read back by the AjJob reader)
 * gives the same objects, byte for byte.
 */
#include "support.h"

#include <string.h>

#include "backend/backend.h"
#include "core/ajjob.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/schema.h"
#include "core/source.h"
#include "core/strlist.h"
#include "io/source_dir.h"
#include "core/placement.h"
#include "pipeline/candidates.h"
#include "pipeline/pipeline.h"

#define EXAMPLES AJ_SOURCE_DIR "/examples/.azure_jobs"
#define DIGEST "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static const char *const command[] = { "python", "train.py", "--msg", "it's $(here) $$5" };

/*
 * Load from in, set the code digest where the backend ships code (as the
 * CLI does once it knows it; NULL: the controller's in->code_digest is
 * all), build; the objects printed into out.
 */
static void render(const struct aj_pipeline_in *in, const char *digest,
		   const struct aj_build_ctx *ctx, struct aj_pipeline *pl, struct aj_buf *out)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *objects = NULL;

	if (aj_pipeline_load(in, pl, &err) ||
	    (digest && pl->backend->code_route(&pl->spec) != AJ_CODE_NONE &&
	     aj_pipeline_set_code(pl, digest, &err)) ||
	    aj_pipeline_build(pl, ctx, &objects, &err))
		fail_msg("%s: %s", in->template_name, aj_test_errors_text(&err));
	assert_int_equal(aj_json_print(objects, out), 0);
	cJSON_Delete(objects);
	aj_errors_release(&err);
}

/*
 * An AjJob (taken) through JSON text, what the API server stores, read
 * back into b; *tree is the caller's (aj_node_free) once b is released.
 */
static void read_back(cJSON *job, struct aj_bundle *b, struct aj_node **tree)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_LARGE);
	cJSON *stored = NULL;

	assert_non_null(job);
	assert_int_equal(aj_json_print(job, &text), 0);
	assert_int_equal(aj_json_parse(aj_buf_cstr(&text), text.len, "AjJob", &stored, &err), 0);
	assert_int_equal(aj_node_from_cjson(stored, "AjJob team/x", tree, &err), 0);
	aj_bundle_init(b);
	if (aj_bundle_read(b, aj_node_get(*tree, "spec"), "AjJob team/x", &err))
		fail_msg("%s", aj_test_errors_text(&err));
	cJSON_Delete(stored);
	cJSON_Delete(job);
	aj_buf_release(&text);
	aj_errors_release(&err);
}

/* The controller's inputs from a bundle read back, in namespace ns. */
static struct aj_pipeline_in bundle_in(struct aj_bundle *b, const char *ns)
{
	return (struct aj_pipeline_in){ &b->source, b->leaf, &b->args,
					(const char *const *)b->command.items, b->command.nr,
					b->code_digest, ns, "*" };
}

/*
 * The controller's path: the AjJob the CLI's pipeline p writes, through
 * JSON text (what the API server stores), read back and built.
 */
static void render_ajjob(const struct aj_pipeline *p, const struct aj_build_ctx *ctx,
			 struct aj_buf *out)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *tree = NULL;
	struct aj_bundle b;
	struct aj_pipeline pl;
	struct aj_pipeline_in in;

	read_back(aj_ajjob_write("x", "team", &p->tpl, &p->spec, NULL, &err), &b, &tree);
	in = bundle_in(&b, "team");
	aj_pipeline_init(&pl);
	render(&in, NULL, ctx, &pl, out);
	aj_pipeline_release(&pl);
	aj_bundle_release(&b);
	aj_node_free(tree);
	aj_errors_release(&err);
}

/*
 * One template with one shape and one code digest through both paths.
 * Returns whether the job was heterogeneous (the caller then tries no
 * other shape: -n and -p are refused).
 */
static int both_paths(struct aj_source *src, const char *name, const struct aj_shape_args *shape,
		      const char *digest, int preview)
{
	struct aj_build_ctx ctx = { "x", "team", NULL, NULL, NULL, preview };
	struct aj_pipeline_in in = { src, name, shape, command, 4, NULL, NULL, NULL };
	struct aj_buf cli = AJ_BUF_INIT(AJ_BUF_LARGE), controller = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_pipeline pl;
	int hetero;

	aj_pipeline_init(&pl);
	render(&in, digest, &ctx, &pl, &cli);
	render_ajjob(&pl, &ctx, &controller);
	if (strcmp(aj_buf_cstr(&cli), aj_buf_cstr(&controller)))
		fail_msg("%s: the controller's objects differ from the CLI's:\n%s\n---\n%s", name,
			 aj_buf_cstr(&cli), aj_buf_cstr(&controller));
	/* the code went with the AjJob wherever the backend ships it */
	if (pl.backend->code_route(&pl.spec) != AJ_CODE_NONE)
		assert_non_null(strstr(aj_buf_cstr(&controller), digest));
	else
		assert_null(pl.spec.code.digest);
	hetero = pl.spec.heterogeneous;
	aj_pipeline_release(&pl);
	aj_buf_release(&cli);
	aj_buf_release(&controller);
	return hetero;
}

static void examples_agree(void **state)
{
	static const struct aj_shape_args from_template = { 0, 0, 0 }, given = { 3, 4, 2 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_source src;
	struct aj_strlist names = AJ_STRLIST_INIT;
	size_t i, leaves = 0;

	(void)state;
	assert_int_equal(aj_source_dir_init(&src, EXAMPLES, ".azure_jobs", &err), 0);
	assert_int_equal(src.ops->list(src.ctx, "template", &names, &err), 0);
	for (i = 0; i < names.nr; i++) {
		struct aj_pipeline_in in = { &src, names.items[i], NULL, NULL, 0, NULL, NULL, NULL };
		struct aj_pipeline pl;
		int leaf;

		aj_pipeline_init(&pl);
		assert_int_equal(aj_pipeline_resolve(&in, &pl, &err), 0);
		leaf = pl.tpl.has_base && !aj_placement_declared(pl.tpl.config);
		aj_pipeline_release(&pl);
		if (!leaf)
			continue;          /* a component, or a placement (below): nothing to render */
		leaves++;
		both_paths(&src, names.items[i], &from_template, AJ_CODE_DIGEST_PLACEHOLDER, 1);
		if (!both_paths(&src, names.items[i], &from_template, DIGEST, 0))
			both_paths(&src, names.items[i], &given, DIGEST, 0);
	}
	/* aml, heterogeneous, multinode, nested, pretrain, sing, volcano-cpu, volcano */
	assert_true(leaves >= 8);
	aj_strlist_release(&names);
	aj_source_release(&src);
	aj_errors_release(&err);
}

/* Each valid candidate's objects into one text, candidate by candidate. */
static void render_candidates(struct aj_candidates *c, const char *digest, struct aj_buf *out)
{
	struct aj_build_ctx ctx = { "x", "training", NULL, NULL, NULL, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	cJSON *objects;
	size_t i;

	for (i = 0; i < c->nr; i++) {
		struct aj_pipeline *pl = &c->items[i].p;

		if (!c->items[i].ok)
			continue;
		objects = NULL;
		assert_int_equal(aj_buf_addf(out, "%s:\n", c->items[i].name), 0);
		if ((digest && pl->backend->code_route(&pl->spec) != AJ_CODE_NONE &&
		     aj_pipeline_set_code(pl, digest, &err)) ||
		    aj_pipeline_build(pl, &ctx, &objects, &err))
			fail_msg("%s: %s", c->items[i].name, aj_test_errors_text(&err));
		assert_int_equal(aj_json_print(objects, out), 0);
		cJSON_Delete(objects);
	}
	aj_errors_release(&err);
}

/*
 * A placement leaf's AjJob (aj run -t anywhere): it carries every
 * candidate's files and the shape only as given, and the controller,
 * loading the candidates from it, builds each one's objects exactly as the
 * CLI does from the directory.
 */
static void placement_bundle(void **state)
{
	static const struct aj_shape_args shapes[] = { { 0, 0, 0 }, { 3, 8, 2 } };
	static const char *const files[] = { "account/default", "environment/base",
		"environment/sing", "environment/volcano", "storage/default", "template/base",
		"template/kube", "template/sing", "template/volcano" };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_strlist cmd = AJ_STRLIST_INIT;
	struct aj_source src;
	size_t s, i;

	(void)state;
	for (i = 0; i < 4; i++)
		assert_int_equal(aj_strlist_add(&cmd, command[i]), 0);
	assert_int_equal(aj_source_dir_init(&src, EXAMPLES, ".azure_jobs", &err), 0);
	for (s = 0; s < 2; s++) {
		struct aj_pipeline_in in = { &src, "template/anywhere", &shapes[s], command, 4, NULL,
					     "training", NULL };
		struct aj_buf cli = AJ_BUF_INIT(AJ_BUF_LARGE), ctl = AJ_BUF_INIT(AJ_BUF_LARGE);
		const struct aj_template *tpls[3];
		struct aj_candidates c, c2;
		struct aj_pipeline leaf, leaf2;
		struct aj_node *tree = NULL, *spec;
		struct aj_bundle b;

		aj_pipeline_init(&leaf);
		aj_pipeline_init(&leaf2);
		aj_candidates_init(&c);
		aj_candidates_init(&c2);
		if (aj_pipeline_resolve(&in, &leaf, &err) ||
		    aj_candidates_load(&in, &leaf.tpl, &c, &err))
			fail_msg("%s", aj_test_errors_text(&err));
		assert_int_equal(c.valid, 3);
		for (i = 0; i < 3; i++)
			tpls[i] = &c.items[i].p.tpl;
		read_back(aj_ajjob_write_placement("x", "training", &leaf.tpl, tpls, 3, &shapes[s],
						   &cmd, DIGEST, NULL, &err), &b, &tree);
		spec = aj_node_get(tree, "spec");
		assert_string_equal(b.leaf, "template/anywhere");
		assert_int_equal(aj_node_get(spec, "components")->nr, 9);
		for (i = 0; i < 9; i++)
			if (!aj_node_get(aj_node_get(spec, "components"), files[i]))
				fail_msg("the AjJob lacks %s", files[i]);
		/* the shape as given, no more: each candidate resolves the rest */
		assert_int_equal(b.args.nodes, shapes[s].nodes);
		assert_int_equal(b.args.processes, shapes[s].processes);
		assert_int_equal(b.args.processes_per_node, shapes[s].processes_per_node);

		in = bundle_in(&b, "training");
		if (aj_pipeline_resolve(&in, &leaf2, &err) ||
		    aj_candidates_load(&in, &leaf2.tpl, &c2, &err))
			fail_msg("%s", aj_test_errors_text(&err));
		assert_int_equal(c2.valid, 3);
		render_candidates(&c, DIGEST, &cli);
		render_candidates(&c2, NULL, &ctl);
		if (strcmp(aj_buf_cstr(&cli), aj_buf_cstr(&ctl)))
			fail_msg("the controller's candidates differ from the CLI's:\n%s\n---\n%s",
				 aj_buf_cstr(&cli), aj_buf_cstr(&ctl));
		assert_non_null(strstr(aj_buf_cstr(&ctl), DIGEST));
		aj_buf_release(&cli);
		aj_buf_release(&ctl);
		aj_candidates_release(&c);
		aj_candidates_release(&c2);
		aj_pipeline_release(&leaf);
		aj_pipeline_release(&leaf2);
		aj_bundle_release(&b);
		aj_node_free(tree);
	}
	aj_strlist_release(&cmd);
	aj_source_release(&src);
	aj_errors_release(&err);
}

/*
 * A backend's errors about typed values name the value's file, line and
 * column, as conversion errors do: the pipeline finds the node by its path.
 */
static void backend_errors_are_located(void **state)
{
	static const char *const cases[][2] = {
		{ "  target: {service: volcano, namespace: Team, queue: q, labels: {app.kubernetes.io/x: -bad}}\n"
		  "  jobs: [{sku: G1}]\n",
		  "test.yaml:4:41: config.target.namespace: \"Team\" is not a valid namespace" },
		{ "  target: {service: volcano, namespace: Team, queue: q, labels: {app.kubernetes.io/x: -bad}}\n"
		  "  jobs: [{sku: G1}]\n",
		  "test.yaml:4:65: config.target.labels: app.kubernetes.io/x: \"-bad\" is not a valid label value" },
		{ "  target: {service: volcano}\n"
		  "  jobs: [{sku: G1, submit_args: {container_args: {scratch_mount_path: /dev/shm/x}}}]\n",
		  "test.yaml:5:71: config.jobs[0].submit_args.container_args.scratch_mount_path: "
		  "/dev/shm/x overlaps the shared-memory mount" },
		{ "  target: {service: volcano}\n"
		  "  jobs: [{sku: G1, submit_args: {container_args: {capabilities: [SYS_ADMIN, ALL]}}}]\n",
		  "test.yaml:5:77: config.jobs[0].submit_args.container_args.capabilities[1]: "
		  "ALL is not allowed" },
		{ "  target: {service: volcano}\n"
		  "  jobs: [{sku: heterogeneous}]\n"
		  "  _extra:\n"
		  "    volcano:\n"
		  "      tasks:\n"
		  "        Worker: {replicas: 2, cpus_per_node: 1, memory: 1Gi, gpus_per_node: 0, rdma: false, "
		  "processes_per_node: 1}\n",
		  "test.yaml:9:17: config._extra.volcano.tasks.Worker: task name \"Worker\" must be" },
	};
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct aj_errors err = AJ_ERRORS_INIT;
		struct aj_buf yaml = AJ_BUF_INIT(AJ_BUF_SMALL), text = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct aj_shape_args one = { 1, 1, 0 };
		struct aj_source src;
		struct aj_node *doc;
		struct aj_pipeline pl;
		struct aj_pipeline_in in = { &src, "template/t", &one, command, 4, NULL, NULL, NULL };

		aj_buf_addf(&yaml, "base: []\nconfig:\n  environment: {image: x}\n%s", cases[i][0]);
		doc = aj_test_yaml(aj_buf_cstr(&yaml));
		assert_int_equal(aj_source_memory_init(&src, "t"), 0);
		assert_int_equal(aj_source_memory_add(&src, "template/t", doc), 0);
		aj_pipeline_init(&pl);
		assert_int_equal(aj_pipeline_load(&in, &pl, &err), -1);
		assert_int_equal(aj_errors_format_all(&err, &text), 0);
		if (!strstr(aj_buf_cstr(&text), cases[i][1]))
			fail_msg("want \"%s\", got:\n%s", cases[i][1], aj_buf_cstr(&text));
		aj_pipeline_release(&pl);
		aj_source_release(&src);
		aj_node_free(doc);
		aj_buf_release(&yaml);
		aj_buf_release(&text);
		aj_errors_release(&err);
	}
}

/* Load one template/t from YAML with shape; returns load's result, err filled. */
static int load_yaml(const char *yaml, const struct aj_shape_args *shape, struct aj_pipeline *pl,
		     struct aj_errors *err)
{
	struct aj_source src;
	struct aj_node *doc = aj_test_yaml(yaml);
	struct aj_pipeline_in in = { &src, "template/t", shape, command, 4, NULL, NULL, NULL };
	int rc;

	assert_int_equal(aj_source_memory_init(&src, "t"), 0);
	assert_int_equal(aj_source_memory_add(&src, "template/t", doc), 0);
	aj_pipeline_init(pl);
	rc = aj_pipeline_load(&in, pl, err);
	aj_source_release(&src);
	aj_node_free(doc);
	return rc;
}

/*
 * The services are the backend table's: an unknown one is reported at its
 * place beside the conversion's problems, and a name in another case is
 * the row's.
 */
static void services_come_from_the_table(void **state)
{
	struct aj_shape_args one = { 1, 1, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_pipeline pl;

	(void)state;
	assert_int_equal(load_yaml("base: []\nconfig:\n  target: {service: k8s, rdma: z}\n"
				   "  jobs: [{sku: G1}]\n", &one, &pl, &err), -1);
	assert_true(aj_test_errors_contain(&err, "test.yaml:3:21: config.target.service: unknown "
					   "value \"k8s\" (expected one of: aml, kube, sing, volcano)"));
	assert_true(aj_test_errors_contain(&err, "config.target.rdma: expected boolean"));
	assert_null(pl.backend);
	aj_pipeline_release(&pl);
	aj_errors_release(&err);

	assert_int_equal(load_yaml("base: []\nconfig:\n  target: {service: Volcano}\n"
				   "  environment: {image: x}\n  jobs: [{sku: G1}]\n", &one, &pl, &err), 0);
	assert_string_equal(pl.spec.target.service, "volcano");
	assert_ptr_equal(pl.backend, aj_backend_find("volcano"));
	aj_pipeline_release(&pl);
}

/* The backend's row says where tasks live: declaring them makes the job heterogeneous. */
static void declared_tasks_make_heterogeneous(void **state)
{
	static const char yaml[] =
		"base: []\nconfig:\n  target: {service: volcano}\n  environment: {image: x}\n"
		"  jobs: [{sku: \"{nodes}xG8\"}]\n"
		"  _extra: {volcano: {tasks: {master: {replicas: 1, cpus_per_node: 1, memory: 1Gi, "
		"gpus_per_node: 0, rdma: false, processes_per_node: 1}}}}\n";
	struct aj_shape_args none = { 0, 0, 0 }, n2 = { 2, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_pipeline pl;

	(void)state;
	assert_int_equal(load_yaml(yaml, &n2, &pl, &err), -1);
	assert_true(aj_test_errors_contain(&err, "-n: not allowed for a heterogeneous job"));
	assert_true(aj_test_errors_contain(&err, "SKU placeholders ({nodes}, {processes}) are not "
					   "allowed in a heterogeneous job: the tasks under "
					   "config._extra.volcano.tasks declare the shape"));
	aj_pipeline_release(&pl);
	aj_errors_release(&err);

	assert_int_equal(load_yaml(yaml, &none, &pl, &err), -1);
	assert_true(pl.spec.heterogeneous);
	assert_int_equal(pl.spec.tasks_nr, 1);
	aj_pipeline_release(&pl);
	aj_errors_release(&err);
}

/*
 * An entry about a key (AJ_WHERE_KEY: a reserved label) is put at the key,
 * not at its value; the other entries under the same mapping at the value.
 */
static void key_entries_point_at_the_key(void **state)
{
	struct aj_shape_args one = { 1, 1, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_pipeline pl;

	(void)state;
	assert_int_equal(load_yaml("base: []\nconfig:\n  target:\n    service: volcano\n"
				   "    labels:\n      team: a\n      volcano.sh/queue-name:   q\n"
				   "    namespace: Bad\n"
				   "  environment: {image: x}\n  jobs: [{sku: G1}]\n", &one, &pl, &err), -1);
	assert_true(aj_test_errors_contain(&err, "test.yaml:7:7: config.target.labels.volcano.sh/"
					   "queue-name: reserved: Volcano sets this label"));
	assert_true(aj_test_errors_contain(&err, "test.yaml:8:16: config.target.namespace: \"Bad\""));
	aj_pipeline_release(&pl);
	aj_errors_release(&err);
}

static int accept(const struct aj_jobspec *spec, struct aj_errors *err)
{
	(void)spec;
	(void)err;
	return 0;
}

/*
 * Which parts of _extra are checked, and against which keys, is the row's
 * to say: a row listing a part of its own has that part's typos caught (and
 * no other's), the real rows catch theirs, and a row listing none (aml)
 * leaves _extra alone.
 */
static void extra_keys_come_from_the_row(void **state)
{
	static const struct aj_schema_key probe_keys[] = {
		{ "depth", AJ_SCHEMA_VALUE, "integer", "how deep" },
		{ "inner", AJ_SCHEMA_KEYS, "mapping", "below" },
		{ "inner.width", AJ_SCHEMA_VALUE, "integer", "how wide" },
	};
	static const struct aj_schema probe = { "_extra.probe", "mapping", "a probe", probe_keys, 3 };
	static const struct aj_schema *const parts[] = { &probe, NULL };
	static const struct aj_backend row = { .name = "probe", .extra = parts, .validate = accept };
	static const char yaml[] =
		"config: {target: {gpus_per_node: 0}, environment: {image: x}, jobs: [{sku: C1}],\n"
		"  _extra: {probe: {dpeth: 1, inner: {widht: 2}},\n"
		"    volcano: {max_rety: 3}, code_upload: {stratgy: blob}}}";
	struct aj_shape_args one = { 1, 0, 0 };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;

	(void)state;
	aj_test_spec(yaml, &one, NULL, 0, &s);
	assert_int_equal(aj_backend_check(&row, &s, &err), -1);
	assert_int_equal(err.nr, 2);
	assert_true(aj_test_errors_contain(&err, "test.yaml:2:20: config._extra.probe.dpeth: "
					   "unknown key (did you mean \"depth\"?)"));
	assert_true(aj_test_errors_contain(&err, "test.yaml:2:38: config._extra.probe.inner.widht: "
					   "unknown key (did you mean \"width\"?)"));
	aj_errors_release(&err);

	assert_int_equal(aj_backend_check(aj_backend_find("volcano"), &s, &err), -1);
	assert_true(aj_test_errors_contain(&err, "test.yaml:3:15: config._extra.volcano.max_rety: "
					   "unknown key (did you mean \"max_retry\"?)"));
	assert_true(aj_test_errors_contain(&err, "test.yaml:3:43: config._extra.code_upload.stratgy: "
					   "unknown key (did you mean \"strategy\"?)"));
	assert_false(aj_test_errors_contain(&err, "probe"));
	aj_errors_release(&err);

	assert_int_equal(aj_backend_check(aj_backend_find("kube"), &s, &err), -1);
	assert_true(aj_test_errors_contain(&err, "config._extra.code_upload.stratgy: unknown key"));
	assert_false(aj_test_errors_contain(&err, "max_rety"));
	aj_errors_release(&err);

	aj_backend_check(aj_backend_find("aml"), &s, &err);
	assert_false(aj_test_errors_contain(&err, "unknown key"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(examples_agree),
		cmocka_unit_test(placement_bundle),
		cmocka_unit_test(backend_errors_are_located),
		cmocka_unit_test(services_come_from_the_table),
		cmocka_unit_test(declared_tasks_make_heterogeneous),
		cmocka_unit_test(extra_keys_come_from_the_row),
		cmocka_unit_test(key_entries_point_at_the_key),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
