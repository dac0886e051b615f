#include "support.h"

#include <string.h>

#include "core/ajjob.h"
#include "core/error.h"
#include "core/node.h"
#include "core/resolve.h"

static const char *const good =
	"name: template/gpu\n"
	"template:\n"
	"  base: [common, storage.default]\n"
	"  config:\n"
	"    jobs: [{name: train, sku: G8}]\n"
	"components:\n"
	"  template/common:\n"
	"    config: {target: {service: volcano}, jobs: [{sku: G1, instance_count: 2}]}\n"
	"  storage/default:\n"
	"    base: []\n"
	"    config: {storage: {shared: {mount_dir: /mnt/shared}}}\n"
	"command: [python, train.py, \"--msg=it's $(here)\"]\n"
	"nodes: 2\n"
	"processes: 8\n";

/* The document read, the bundle, its resolved template and the errors of one test. */
static struct {
	struct aj_node *spec;
	struct aj_errors err;
	struct aj_bundle b;
	struct aj_template t;
} fx;

static int setup(void **state)
{
	(void)state;
	memset(&fx, 0, sizeof(fx));
	aj_bundle_init(&fx.b);
	aj_template_init(&fx.t);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	aj_template_release(&fx.t);
	aj_bundle_release(&fx.b);
	aj_node_free(fx.spec);
	aj_errors_release(&fx.err);
	return 0;
}

/* Read yaml as the spec of AjJob ns/x into fx.b. */
static int read_bundle(const char *yaml)
{
	fx.spec = aj_test_yaml(yaml);
	return aj_bundle_read(&fx.b, fx.spec, "AjJob ns/x", &fx.err);
}

static int resolve(void)
{
	return aj_template_resolve(&fx.b.source, fx.b.leaf, &fx.t, &fx.err);
}

static void a_bundle_resolves_like_the_files_it_came_from(void **state)
{
	const struct aj_node *job;

	(void)state;
	assert_int_equal(read_bundle(good), 0);
	assert_string_equal(fx.b.leaf, "template/gpu");
	assert_int_equal(fx.b.args.nodes, 2);
	assert_int_equal(fx.b.args.processes, 8);
	assert_int_equal(fx.b.args.processes_per_node, 0);
	assert_int_equal(fx.b.command.nr, 3);
	assert_string_equal(fx.b.command.items[2], "--msg=it's $(here)");

	assert_int_equal(resolve(), 0);
	/* common then storage then the leaf: the leaf's sku wins, instance_count stays. */
	job = aj_node_get(fx.t.config, "jobs")->items[0];
	assert_string_equal(aj_node_at(fx.t.config, "target.service")->str, "volcano");
	assert_string_equal(aj_node_get(job, "sku")->str, "G8");
	assert_int_equal(aj_node_get(job, "instance_count")->v.integer, 2);
	assert_string_equal(aj_node_at(fx.t.config, "storage.shared.mount_dir")->str, "/mnt/shared");
	assert_int_equal(fx.t.files.nr, 3);
}

static void a_missing_component_is_reported_with_the_chain(void **state)
{
	(void)state;
	assert_int_equal(read_bundle(
		"name: template/gpu\n"
		"template: {base: [storage.default], config: {}}\n"
		"command: [echo]\n"), 0);
	assert_int_equal(resolve(), -1);
	assert_true(aj_test_errors_contain(&fx.err, "template/gpu -> storage/default"));
}

static void every_problem_is_reported_with_its_key_path(void **state)
{
	(void)state;
	assert_int_equal(read_bundle(
		"name: 42\n"
		"template: {config: {}}\n"
		"components:\n"
		"  ../etc/passwd: {config: {}}\n"
		"  storage/default: [not, a, mapping]\n"
		"command: [python, 7]\n"
		"nodes: 0\n"
		"processesPerNode: many\n"), -1);
	assert_true(aj_test_errors_contain(&fx.err, "test.yaml:1:7: spec.name: expected a string"));
	assert_true(aj_test_errors_contain(&fx.err, "spec.components[\"../etc/passwd\"]: invalid template name"));
	assert_true(aj_test_errors_contain(&fx.err, "spec.components[\"storage/default\"]: expected a mapping"));
	assert_true(aj_test_errors_contain(&fx.err, "spec.command[1]: expected a string"));
	assert_true(aj_test_errors_contain(&fx.err, "test.yaml:7:8: spec.nodes: expected an integer of at least 1"));
	assert_true(aj_test_errors_contain(&fx.err, "spec.processesPerNode: expected an integer"));
	assert_int_equal(aj_errors_count(&fx.err), 6);
}

/* spec.code is the code the job takes: read as written, strings only. */
static void the_code_is_read_with_the_bundle(void **state)
{
	(void)state;
	assert_int_equal(read_bundle(
		"name: template/gpu\n"
		"template: {config: {}}\n"
		"command: [echo]\n"
		"code: {digest: abc, uri: \"azureml://datastores/d/paths/aj-code/abc/\"}\n"), 0);
	assert_string_equal(fx.b.code_digest, "abc");
	assert_string_equal(fx.b.code_uri, "azureml://datastores/d/paths/aj-code/abc/");
	aj_bundle_release(&fx.b);
	aj_node_free(fx.spec);

	assert_int_equal(read_bundle("name: template/gpu\ntemplate: {config: {}}\ncommand: [echo]\n"), 0);
	assert_null(fx.b.code_digest);
	assert_null(fx.b.code_uri);
	aj_bundle_release(&fx.b);
	aj_node_free(fx.spec);

	assert_int_equal(read_bundle("name: template/gpu\ntemplate: {config: {}}\ncommand: [echo]\n"
				     "code: {digest: 7, uri: [x]}\n"), -1);
	assert_true(aj_test_errors_contain(&fx.err, "test.yaml:4:16: spec.code.digest: expected a string"));
	assert_true(aj_test_errors_contain(&fx.err, "spec.code.uri: expected a string"));
	aj_bundle_release(&fx.b);
	aj_node_free(fx.spec);

	assert_int_equal(read_bundle("name: template/gpu\ntemplate: {config: {}}\ncommand: [echo]\n"
				     "code: abc\n"), -1);
	assert_true(aj_test_errors_contain(&fx.err, "spec.code: expected a mapping"));
}

/* An unsafe leaf name is blamed on spec.name, where it is written. */
static void an_invalid_leaf_name_is_reported_at_spec_name(void **state)
{
	(void)state;
	assert_int_equal(read_bundle(
		"name: ../../etc/passwd\n"
		"template: {config: {}}\n"
		"command: [python]\n"), -1);
	if (!aj_test_errors_contain(&fx.err, "test.yaml:1:7: spec.name: invalid template name"))
		fail_msg("%s", aj_test_errors_text(&fx.err));
	assert_false(aj_test_errors_contain(&fx.err, "spec.template"));
}

static void command_and_template_are_required(void **state)
{
	(void)state;
	assert_int_equal(read_bundle("name: template/x\ncommand: []\n"), -1);
	assert_true(aj_test_errors_contain(&fx.err, "spec.template: required"));
	assert_true(aj_test_errors_contain(&fx.err, "spec.command: expected a non-empty list"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(a_bundle_resolves_like_the_files_it_came_from, setup, teardown),
		cmocka_unit_test_setup_teardown(a_missing_component_is_reported_with_the_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(every_problem_is_reported_with_its_key_path, setup, teardown),
		cmocka_unit_test_setup_teardown(an_invalid_leaf_name_is_reported_at_spec_name, setup, teardown),
		cmocka_unit_test_setup_teardown(command_and_template_are_required, setup, teardown),
		cmocka_unit_test_setup_teardown(the_code_is_read_with_the_bundle, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
