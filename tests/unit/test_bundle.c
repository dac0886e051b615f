#include "support.h"

#include <string.h>

#include "core/bundle.h"
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

static void a_bundle_resolves_like_the_files_it_came_from(void **state)
{
	struct aj_node *spec = aj_test_yaml(good);
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_bundle b;
	struct aj_template t;

	(void)state;
	aj_bundle_init(&b);
	aj_template_init(&t);
	assert_int_equal(aj_bundle_read(&b, spec, "AjJob ns/x", &err), 0);
	assert_string_equal(b.leaf, "template/gpu");
	assert_int_equal(b.args.nodes, 2);
	assert_int_equal(b.args.processes, 8);
	assert_int_equal(b.args.processes_per_node, 0);
	assert_int_equal(b.command.nr, 3);
	assert_string_equal(b.command.items[2], "--msg=it's $(here)");

	assert_int_equal(aj_template_resolve(&b.source, b.leaf, &t, &err), 0);
	/* common then storage then the leaf: the leaf's sku wins, instance_count stays. */
	assert_string_equal(aj_node_at(t.config, "target.service")->str, "volcano");
	assert_string_equal(aj_node_get(aj_node_get(t.config, "jobs")->items[0], "sku")->str, "G8");
	assert_int_equal(aj_node_get(aj_node_get(t.config, "jobs")->items[0], "instance_count")->v.integer, 2);
	assert_string_equal(aj_node_at(t.config, "storage.shared.mount_dir")->str, "/mnt/shared");
	assert_int_equal(t.files.nr, 3);

	aj_template_release(&t);
	aj_bundle_release(&b);
	aj_node_free(spec);
	aj_errors_release(&err);
}

static void a_missing_component_is_reported_with_the_chain(void **state)
{
	struct aj_node *spec = aj_test_yaml(
		"name: template/gpu\n"
		"template: {base: [storage.default], config: {}}\n"
		"command: [echo]\n");
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_bundle b;
	struct aj_template t;

	(void)state;
	aj_bundle_init(&b);
	aj_template_init(&t);
	assert_int_equal(aj_bundle_read(&b, spec, "AjJob ns/x", &err), 0);
	assert_int_equal(aj_template_resolve(&b.source, b.leaf, &t, &err), -1);
	assert_true(aj_test_errors_contain(&err, "template/gpu -> storage/default"));
	aj_template_release(&t);
	aj_bundle_release(&b);
	aj_node_free(spec);
	aj_errors_release(&err);
}

static void every_problem_is_reported_with_its_key_path(void **state)
{
	struct aj_node *spec = aj_test_yaml(
		"name: 42\n"
		"template: {config: {}}\n"
		"components:\n"
		"  ../etc/passwd: {config: {}}\n"
		"  storage/default: [not, a, mapping]\n"
		"command: [python, 7]\n"
		"nodes: 0\n"
		"processesPerNode: many\n");
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_bundle b;

	(void)state;
	aj_bundle_init(&b);
	assert_int_equal(aj_bundle_read(&b, spec, "AjJob ns/x", &err), -1);
	assert_true(aj_test_errors_contain(&err, "test.yaml:1:7: spec.name: expected a string"));
	assert_true(aj_test_errors_contain(&err, "spec.components[\"../etc/passwd\"]: invalid template name"));
	assert_true(aj_test_errors_contain(&err, "spec.components[\"storage/default\"]: expected a mapping"));
	assert_true(aj_test_errors_contain(&err, "spec.command[1]: expected a string"));
	assert_true(aj_test_errors_contain(&err, "test.yaml:7:8: spec.nodes: expected an integer of at least 1"));
	assert_true(aj_test_errors_contain(&err, "spec.processesPerNode: expected an integer"));
	assert_int_equal(aj_errors_count(&err), 6);
	aj_bundle_release(&b);
	aj_node_free(spec);
	aj_errors_release(&err);
}

/* An unsafe leaf name is blamed on spec.name, where it is written. */
static void an_invalid_leaf_name_is_reported_at_spec_name(void **state)
{
	struct aj_node *spec = aj_test_yaml(
		"name: ../../etc/passwd\n"
		"template: {config: {}}\n"
		"command: [python]\n");
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_bundle b;

	(void)state;
	aj_bundle_init(&b);
	assert_int_equal(aj_bundle_read(&b, spec, "AjJob ns/x", &err), -1);
	if (!aj_test_errors_contain(&err, "test.yaml:1:7: spec.name: invalid template name"))
		fail_msg("%s", aj_test_errors_text(&err));
	assert_false(aj_test_errors_contain(&err, "spec.template"));
	aj_bundle_release(&b);
	aj_node_free(spec);
	aj_errors_release(&err);
}

static void command_and_template_are_required(void **state)
{
	struct aj_node *spec = aj_test_yaml("name: template/x\ncommand: []\n");
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_bundle b;

	(void)state;
	aj_bundle_init(&b);
	assert_int_equal(aj_bundle_read(&b, spec, "AjJob ns/x", &err), -1);
	assert_true(aj_test_errors_contain(&err, "spec.template: required"));
	assert_true(aj_test_errors_contain(&err, "spec.command: expected a non-empty list"));
	aj_bundle_release(&b);
	aj_node_free(spec);
	aj_errors_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_bundle_resolves_like_the_files_it_came_from),
		cmocka_unit_test(a_missing_component_is_reported_with_the_chain),
		cmocka_unit_test(every_problem_is_reported_with_its_key_path),
		cmocka_unit_test(an_invalid_leaf_name_is_reported_at_spec_name),
		cmocka_unit_test(command_and_template_are_required),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
