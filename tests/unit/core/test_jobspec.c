/*
 * The typed JobSpec conversion: every field of a full template, the job shape
 * rules (seed "Homogeneous job shape"), heterogeneous refusals (seed
 * "Heterogeneous Tasks"), strict typing with positions, and clean failure
 * when memory runs out. Expected values are written out by hand from the
 * YAML inputs.
 */
#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/node.h"
#include "core/yaml.h"

static struct aj_node *load_file(const char *name)
{
	char path[512], *data;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_node *doc = NULL;
	FILE *f;
	long len;

	snprintf(path, sizeof(path), "%s/spec/%s", AJ_TEST_DATA, name);
	f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	data = malloc((size_t)len + 1);
	assert_non_null(data);
	assert_int_equal(fread(data, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	if (aj_yaml_load(data, (size_t)len, name, &doc, &err))
		fail_msg("%s", aj_test_errors_text(&err));
	free(data);
	aj_errors_release(&err);
	return doc;
}

struct conv {
	struct aj_node *doc;
	struct aj_jobspec spec;
	struct aj_errors err;
	int ret;
};

static void convert_doc(struct conv *c, struct aj_node *doc, const struct aj_shape_args *args,
			const char *const *argv, size_t argc)
{
	/* as the pipeline converts for volcano, whose tasks are _extra.volcano.tasks */
	struct aj_jobspec_in in = { args, argv, argc, "volcano.tasks" };

	c->doc = doc;
	aj_jobspec_init(&c->spec);
	aj_errors_init(&c->err);
	c->ret = aj_jobspec_convert(aj_node_get(doc, "config"), "template/t", &in, &c->spec,
				    &c->err);
}

static void convert(struct conv *c, const char *yaml, const struct aj_shape_args *args)
{
	static const char *const argv[] = { "python", "train.py" };

	convert_doc(c, aj_test_yaml(yaml), args, argv, 2);
}

static void done(struct conv *c)
{
	aj_jobspec_release(&c->spec);
	aj_errors_release(&c->err);
	aj_node_free(c->doc);
}

static void expect_ok(struct conv *c)
{
	if (c->ret)
		fail_msg("conversion failed: %s", aj_test_errors_text(&c->err));
	assert_true(aj_errors_empty(&c->err));
}

static void expect_error(struct conv *c, const char *fragment)
{
	assert_int_equal(c->ret, -1);
	if (!aj_test_errors_contain(&c->err, fragment))
		fail_msg("want \"%s\", got:\n%s", fragment, aj_test_errors_text(&c->err));
}

/* Convert yaml expecting one failure containing fragment. */
static void rejects(const char *yaml, const struct aj_shape_args *args, const char *fragment)
{
	struct conv c;

	convert(&c, yaml, args);
	expect_error(&c, fragment);
	done(&c);
}

static const struct aj_shape_args no_args = { 0, 0, 0 };

static void full_template_converts(void **state)
{
	static const char *const argv[] = { "python", "train.py", "--lr", "0.1" };
	struct aj_shape_args args = { 0, 8, 0 };
	struct conv c;
	const struct aj_job *j;

	(void)state;
	convert_doc(&c, load_file("full.yaml"), &args, argv, 4);
	expect_ok(&c);
	assert_string_equal(c.spec.template_name, "template/t");
	assert_string_equal(c.spec.target.service, "sing");
	assert_string_equal(c.spec.target.name, "vc-a");
	assert_string_equal(c.spec.target.workspace_name, "ws-a");
	assert_string_equal(c.spec.target.subscription_id, "sub-123");
	assert_string_equal(c.spec.target.resource_group, "rg-1");
	assert_string_equal(c.spec.target.group_policy_name, "gp-1");
	assert_string_equal(c.spec.target.namespace_, "training");
	assert_string_equal(c.spec.target.queue, "q1");
	assert_string_equal(c.spec.target.context, "ctx-a");
	assert_string_equal(c.spec.target.priority_class, "high-prio");
	assert_int_equal(c.spec.target.gpus_per_node, 8);
	assert_int_equal(c.spec.target.cpus_per_node, 96);
	assert_string_equal(c.spec.target.memory, "512Gi");
	assert_int_equal(c.spec.target.rdma, 1);
	assert_int_equal(c.spec.target.labels.nr, 2);
	assert_string_equal(aj_kvlist_get(&c.spec.target.labels, "team"), "research");
	assert_string_equal(aj_kvlist_get(&c.spec.target.labels, "tier"), "2");

	assert_string_equal(c.spec.environment.image,
			    "amlt-sing/acpt-torch2.7.1-py3.10-cuda12.6-ubuntu22.04");
	assert_string_equal(c.spec.environment.registry, "myregistry.azurecr.io");
	assert_int_equal(c.spec.environment.setup.nr, 2);
	assert_string_equal(c.spec.environment.setup.items[0], "python -m pip install -e .");
	assert_string_equal(c.spec.environment.setup.items[1], "echo ready");
	assert_string_equal(c.spec.code.local_dir, "$CONFIG_DIR/../..");
	assert_int_equal(c.spec.code.ignore.nr, 2);
	assert_string_equal(c.spec.code.ignore.items[1], "outputs/");

	assert_int_equal(c.spec.storage_nr, 2);
	assert_string_equal(c.spec.storage[0].name, "shared");
	assert_string_equal(c.spec.storage[0].account, "acct1");
	assert_string_equal(c.spec.storage[0].container, "c1");
	assert_string_equal(c.spec.storage[0].mount_dir, "/mnt/shared");
	assert_string_equal(c.spec.storage[1].name, "fast-data");
	assert_string_equal(c.spec.storage[1].mount_dir, "/mnt/fast/");

	assert_int_equal(c.spec.jobs_nr, 2);
	j = &c.spec.jobs[0];
	assert_string_equal(j->name, "train");
	assert_string_equal(j->identity, "managed");
	assert_string_equal(j->sla_tier, "Premium");
	assert_string_equal(j->priority, "High");
	assert_int_equal(j->tags.nr, 2);
	assert_string_equal(j->tags.items[1], "project:x:y");
	assert_int_equal(j->instance_count, 2);
	assert_int_equal(j->process_count_per_node, 4);
	assert_int_equal(j->command.nr, 2);
	assert_string_equal(j->command.items[0], "nvidia-smi");
	assert_int_equal(j->env.nr, 6);
	assert_string_equal(j->env.items[0].key, "NCCL_DEBUG");
	assert_string_equal(j->env.items[0].value, "WARN");
	assert_string_equal(aj_kvlist_get(&j->env, "RETRIES"), "3");
	assert_string_equal(aj_kvlist_get(&j->env, "RATIO"), "0.5");
	assert_string_equal(aj_kvlist_get(&j->env, "VERBOSE"), "true");
	assert_string_equal(aj_kvlist_get(&j->env, "QUIET"), "false");
	assert_string_equal(aj_kvlist_get(&j->env, "EMPTY"), "");
	assert_null(aj_kvlist_get(&j->env, "MISSING"));
	assert_string_equal(j->container.shm_size, "64g");
	assert_int_equal(j->container.cpus, 90);
	assert_string_equal(j->container.memory, "1024Mi");
	assert_int_equal(j->container.capabilities.nr, 2);
	assert_string_equal(j->container.capabilities.items[1], "cap_net_admin");
	assert_string_equal(j->container.scratch_mount_path, "/var/lib/containers");
	assert_string_equal(j->container.scratch_size, "200Gi");
	assert_string_equal(c.spec.jobs[1].name, "second");
	assert_int_equal(c.spec.jobs[1].instance_count, AJ_UNSET);

	/* shape: nodes from the template, -p 8 over gpus_per_node, ppn from the template */
	assert_false(c.spec.heterogeneous);
	assert_int_equal(c.spec.nodes, 2);
	assert_int_equal(c.spec.processes, 8);
	assert_int_equal(c.spec.processes_per_node, 4);
	assert_string_equal(c.spec.sku, "2x80G8-A100-NvLink");
	assert_int_equal(c.spec.command.nr, 4);
	assert_string_equal(c.spec.command.items[3], "0.1");
	assert_int_equal(c.spec.tasks_nr, 1);
	assert_string_equal(c.spec.tasks[0].name, "train");
	assert_int_equal(c.spec.tasks[0].replicas, 2);
	assert_int_equal(c.spec.tasks[0].processes_per_node, 4);
	assert_false(c.spec.tasks[0].has_command);
	assert_int_equal(c.spec.tasks[0].command.nr, 4);
	assert_string_equal(c.spec.tasks[0].command.items[2], "--lr");

	/* _extra is carried verbatim */
	assert_non_null(c.spec.extra);
	assert_true(aj_node_equal(c.spec.extra, aj_node_at(c.doc, "config._extra")));
	done(&c);
}

static void defaults_when_absent(void **state)
{
	struct conv c;

	(void)state;
	convert(&c, "config: {jobs: [{sku: G1, instance_count: 1}], target: {gpus_per_node: 1}}",
		&no_args);
	expect_ok(&c);
	assert_string_equal(c.spec.target.service, "aml");
	assert_int_equal(c.spec.target.cpus_per_node, AJ_UNSET);
	assert_int_equal(c.spec.target.rdma, AJ_UNSET);
	assert_null(c.spec.target.memory);
	assert_null(c.spec.environment.image);
	assert_int_equal(c.spec.storage_nr, 0);
	assert_null(c.spec.extra);
	assert_int_equal(c.spec.processes_per_node, 1);
	assert_string_equal(c.spec.tasks[0].name, "main");
	assert_int_equal(c.spec.jobs[0].container.cpus, AJ_UNSET);
	done(&c);

	/* nulls count as absent */
	convert(&c, "config: {target: {service: null, name: ~, gpus_per_node: 2}, "
		"jobs: [{sku: G1, instance_count: 1, tags: null}], _extra: null}", &no_args);
	expect_ok(&c);
	assert_string_equal(c.spec.target.service, "aml");
	assert_null(c.spec.target.name);
	assert_null(c.spec.extra);
	done(&c);
}

/* seed "Homogeneous job shape": command line first, then the template */
static void shape_precedence(void **state)
{
	static const char *yaml =
		"config:\n"
		"  target: {gpus_per_node: 4}\n"
		"  jobs: [{sku: \"{nodes}xG{processes}\", instance_count: 3, process_count_per_node: 2}]\n";
	struct aj_shape_args args = { 5, 8, 6 };
	struct conv c;

	(void)state;
	convert(&c, yaml, &no_args);
	expect_ok(&c);
	assert_int_equal(c.spec.nodes, 3);
	assert_int_equal(c.spec.processes, 4);
	assert_int_equal(c.spec.processes_per_node, 2);
	assert_string_equal(c.spec.sku, "3xG4");
	done(&c);

	convert(&c, yaml, &args);
	expect_ok(&c);
	assert_int_equal(c.spec.nodes, 5);
	assert_int_equal(c.spec.processes, 8);
	assert_int_equal(c.spec.processes_per_node, 6);
	assert_string_equal(c.spec.sku, "5xG8");
	assert_int_equal(c.spec.tasks[0].replicas, 5);
	assert_int_equal(c.spec.tasks[0].processes_per_node, 6);
	done(&c);

	/* CPU-only: gpus_per_node 0 gives SKU processes 0 */
	convert(&c, "config: {target: {gpus_per_node: 0}, jobs: [{sku: \"C{processes}\", instance_count: 1}]}",
		&no_args);
	expect_ok(&c);
	assert_int_equal(c.spec.processes, 0);
	assert_string_equal(c.spec.sku, "C0");
	done(&c);
}

static void shape_has_no_fallback(void **state)
{
	struct aj_shape_args only_n = { 2, 0, 0 };
	struct conv c;

	(void)state;
	convert(&c, "config: {jobs: [{sku: G1}]}", &no_args);
	expect_error(&c, "nodes: not set: pass -n or set jobs[0].instance_count in template/t.yaml");
	expect_error(&c, "processes: not set: pass -p or set target.gpus_per_node in template/t.yaml");
	assert_int_equal(aj_errors_count(&c.err), 2);
	assert_null(c.spec.sku);
	assert_int_equal(c.spec.tasks_nr, 0);
	done(&c);

	rejects("config: {jobs: [{sku: G1}]}", &only_n, "processes: not set");
	rejects("config: {target: {gpus_per_node: 1}, jobs: [{sku: G1}]}", &no_args, "nodes: not set");

	/* an invalid template value is reported once, not also as "not set" */
	convert(&c, "config: {target: {gpus_per_node: eight}, jobs: [{sku: G1, instance_count: 1}]}",
		&no_args);
	expect_error(&c, "test.yaml:1:34: config.target.gpus_per_node: expected integer, got string \"eight\"");
	assert_int_equal(aj_errors_count(&c.err), 1);
	done(&c);
}

static void no_shape_without_args(void **state)
{
	struct conv c;

	(void)state;
	c.doc = aj_test_yaml("config: {jobs: [{sku: \"{nodes}xG8\"}]}");
	aj_jobspec_init(&c.spec);
	aj_errors_init(&c.err);
	c.ret = aj_jobspec_from_config(aj_node_get(c.doc, "config"), "t", NULL, NULL, 0, &c.spec,
				       &c.err);
	expect_ok(&c);
	assert_null(c.spec.sku);
	assert_int_equal(c.spec.nodes, 0);
	done(&c);
}

static void strict_types(void **state)
{
	(void)state;
	rejects("config:\n  target:\n    gpus_per_node: eight\n  jobs: [{sku: G1}]\n", &no_args,
		"test.yaml:3:20: config.target.gpus_per_node: expected integer, got string \"eight\"");
	rejects("config: {target: {gpus_per_node: 1.5}, jobs: [{sku: G1}]}", &no_args,
		"config.target.gpus_per_node: expected integer, got float 1.5");
	rejects("config: {target: {gpus_per_node: -1}, jobs: [{sku: G1}]}", &no_args,
		"config.target.gpus_per_node: must be between 0 and 2147483647, got -1");
	rejects("config: {target: {cpus_per_node: 0}, jobs: [{sku: G1}]}", &no_args,
		"config.target.cpus_per_node: must be between 1");
	rejects("config: {jobs: [{sku: G1, instance_count: 0}]}", &no_args,
		"config.jobs[0].instance_count: must be between 1");
	rejects("config: {jobs: [{sku: G1, instance_count: 99999999999}]}", &no_args,
		"config.jobs[0].instance_count: must be between 1 and 2147483647, got 99999999999");
	rejects("config: {jobs: [{sku: G1, process_count_per_node: \"4\"}]}", &no_args,
		"config.jobs[0].process_count_per_node: expected integer, got string \"4\"");
	rejects("config: {target: {rdma: \"yes\"}, jobs: [{sku: G1}]}", &no_args,
		"config.target.rdma: expected boolean (true or false), got string \"yes\"");
	rejects("config: {target: {rdma: 1}, jobs: [{sku: G1}]}", &no_args,
		"config.target.rdma: expected boolean (true or false), got integer 1");
	rejects("config: {target: {name: 42}, jobs: [{sku: G1}]}", &no_args,
		"config.target.name: expected string, got integer 42");
	rejects("config: {target: {memory: [1]}, jobs: [{sku: G1}]}", &no_args,
		"config.target.memory: expected quantity");
	rejects("config: {target: {memory: -5}, jobs: [{sku: G1}]}", &no_args,
		"test.yaml:1:27: config.target.memory: -5 must not be negative");
	rejects("config: {target: {labels: [a]}, jobs: [{sku: G1}]}", &no_args,
		"config.target.labels: expected mapping, got list");
	rejects("config: {target: [1], jobs: [{sku: G1}]}", &no_args,
		"config.target: expected mapping, got list");
	rejects("config: {environment: {setup: \"pip install\"}, jobs: [{sku: G1}]}", &no_args,
		"config.environment.setup: expected list of strings, got string \"pip install\"");
	rejects("config: {environment: {setup: [ok, 3]}, jobs: [{sku: G1}]}", &no_args,
		"config.environment.setup[1]: expected string, got integer 3");
	rejects("config: {code: {ignore: [{a: 1}]}, jobs: [{sku: G1}]}", &no_args,
		"config.code.ignore[0]: expected string, got mapping");
	rejects("config: {jobs: [{sku: G1, identity: robot}]}", &no_args,
		"config.jobs[0].identity: unknown value \"robot\" (expected one of: managed, user)");
	rejects("config: {jobs: [{sku: G1, sla_tier: Gold}]}", &no_args,
		"config.jobs[0].sla_tier: unknown value \"Gold\" (expected one of: Basic, Standard, Premium)");
	rejects("config: {jobs: [{sku: G1, priority: urgent}]}", &no_args,
		"config.jobs[0].priority: unknown value \"urgent\"");
	rejects("config: {jobs: [{sku: G1, tags: [a, 1]}]}", &no_args,
		"config.jobs[0].tags[1]: expected string, got integer 1");
	rejects("config: {jobs: [{sku: G1, command: echo}]}", &no_args,
		"config.jobs[0].command: expected list of strings");
	rejects("config: {jobs: [{sku: G1, submit_args: [x]}]}", &no_args,
		"config.jobs[0].submit_args: expected mapping, got list");
	rejects("config: {jobs: [{sku: G1, submit_args: {container_args: {cpus: many}}}]}", &no_args,
		"config.jobs[0].submit_args.container_args.cpus: expected integer");
	rejects("config: {jobs: [{sku: G1, submit_args: {container_args: {scratch_mount_path: var/x}}}]}",
		&no_args, "config.jobs[0].submit_args.container_args.scratch_mount_path: must be an absolute path other than /");
	rejects("config: {jobs: [{sku: G1, submit_args: {container_args: {scratch_mount_path: /}}}]}",
		&no_args, "scratch_mount_path: must be an absolute path other than /");
	rejects("config: {jobs: [{sku: G1, submit_args: {container_args: {capabilities: SYS_ADMIN}}}]}",
		&no_args, "container_args.capabilities: expected list of strings");
	rejects("config: {jobs: [{sku: G1}], storage: [a]}", &no_args,
		"config.storage: expected mapping, got list");
	/* long strings are cut, control characters escaped */
	rejects("config: {target: {gpus_per_node: \"a\\nb\"}, jobs: [{sku: G1}]}", &no_args,
		"got string \"a\\x0ab\"");
	rejects("config: {target: {cpus_per_node: \"0123456789012345678901234567890123456789012345678901234567890123456789\"}, jobs: [{sku: G1}]}",
		&no_args, "got string \"0123456789012345678901234567890123456789...\"");
}

static void nul_rejected(const char *section, const char *key, const char *fragment)
{
	struct aj_node *doc = aj_test_yaml("config: {target: {gpus_per_node: 1}, environment: {}, "
					   "jobs: [{sku: G1, instance_count: 1}]}");
	struct aj_node *map = aj_node_at(doc, "config");
	struct conv c;

	map = aj_node_get(map, section);
	assert_int_equal(aj_node_set(map, key, strlen(key), aj_node_new_string("a\0b", 3, NULL), NULL), 0);
	convert_doc(&c, doc, &no_args, NULL, 0);
	expect_error(&c, fragment);
	done(&c);
}

static void nul_bytes_and_bad_arguments(void **state)
{
	struct aj_shape_args negative = { -1, 0, 0 };

	(void)state;
	/* YAML refuses NUL; trees from JSON objects may carry one */
	nul_rejected("target", "name", "config.target.name: string contains a NUL byte");
	nul_rejected("environment", "image", "config.environment.image: string contains a NUL byte");
	rejects("config: {jobs: [{sku: G1, submit_args: {env: {\"\": x}}}]}", &no_args,
		"config.jobs[0].submit_args.env.: invalid name");
	rejects("config: {jobs: [{sku: G1, instance_count: 1}], target: {gpus_per_node: 1}}", &negative,
		"-n, -p and --ppn must be positive");
}

static void env_values(void **state)
{
	(void)state;
	rejects("config: {jobs: [{sku: G1, submit_args: {env: {A: [1, 2]}}}]}", &no_args,
		"config.jobs[0].submit_args.env.A: expected a string, number or boolean, got list");
	rejects("config: {jobs: [{sku: G1, submit_args: {env: {A: {b: 1}}}}]}", &no_args,
		"config.jobs[0].submit_args.env.A: expected a string, number or boolean, got mapping");
	rejects("config: {jobs: [{sku: G1, submit_args: {env: {A: }}}]}", &no_args,
		"config.jobs[0].submit_args.env.A: expected a string, number or boolean, got null");
	rejects("config: {jobs: [{sku: G1, submit_args: {env: {\"A=B\": x}}}]}", &no_args,
		"config.jobs[0].submit_args.env.A=B: invalid name");
	rejects("config: {jobs: [{sku: G1, submit_args: {env: [A]}}]}", &no_args,
		"config.jobs[0].submit_args.env: expected mapping, got list");
}

static void jobs_structure(void **state)
{
	(void)state;
	rejects("config: {target: {service: aml}}", &no_args, "config.jobs: required: a non-empty list of jobs");
	rejects("config: {jobs: {sku: G1}}", &no_args, "config.jobs: expected non-empty list of jobs, got mapping");
	rejects("config: {jobs: []}", &no_args, "config.jobs: must not be empty");
	rejects("config: {jobs: [G1]}", &no_args, "config.jobs[0]: expected mapping, got string \"G1\"");
	rejects("config:\n  jobs:\n    - name: a\n", &no_args, "test.yaml:3:7: config.jobs[0].sku: required");
	rejects("config: {jobs: [{sku: null}]}", &no_args, "config.jobs[0].sku: required");
	rejects("config: {jobs: [{sku: 5}]}", &no_args,
		"config.jobs[0].sku: expected string or mapping of node ranges, got integer 5");
	rejects("config: {jobs: [{sku: G1, instance_count: 1}, {sku: [x]}], target: {gpus_per_node: 1}}",
		&no_args, "config.jobs[1].sku: expected string or mapping");
	rejects("config: {jobs: [{sku: \"{nodes}x{gpu}\", instance_count: 1}], target: {gpus_per_node: 1}}",
		&no_args, "config.jobs[0].sku: unknown placeholder {gpu}");
	rejects("config: 5", &no_args, "config: expected mapping, got integer 5");
	rejects("other: 1", &no_args, "config: required");
}

static void storage_entries(void **state)
{
	struct conv c;

	(void)state;
	convert(&c, "config:\n  jobs: [{sku: G1}]\n  storage:\n    s1: {container_name: c}\n"
		"    s2: {storage_account_name: a, container_name: c, mount_dir: mnt/x}\n"
		"    s3: plain\n"
		"    s4: {storage_account_name: a, container_name: c, mount_dir: /}\n", &no_args);
	expect_error(&c, "test.yaml:4:9: config.storage.s1.storage_account_name: required");
	expect_error(&c, "config.storage.s1.mount_dir: required");
	expect_error(&c, "test.yaml:5:65: config.storage.s2.mount_dir: must be an absolute path, got \"mnt/x\"");
	expect_error(&c, "config.storage.s3: expected mapping, got string \"plain\"");
	expect_error(&c, "test.yaml:7:65: config.storage.s4.mount_dir: must be an absolute path other than /, got \"/\"");
	done(&c);
}

static void every_problem_reported(void **state)
{
	struct conv c;

	(void)state;
	convert(&c, "config:\n"
		"  target: {service: x, gpus_per_node: y, rdma: z}\n"
		"  environment: {image: 1}\n"
		"  jobs: [{sku: G1, instance_count: w, tags: 3}]\n", &no_args);
	assert_int_equal(c.ret, -1);
	/* the service's name is the backend table's to check (test_pipeline) */
	assert_int_equal(aj_errors_count(&c.err), 5);
	expect_error(&c, "config.target.gpus_per_node");
	expect_error(&c, "config.target.rdma");
	expect_error(&c, "config.environment.image");
	expect_error(&c, "config.jobs[0].instance_count");
	expect_error(&c, "config.jobs[0].tags");
	done(&c);
}

/* seed "Heterogeneous Tasks": the global shape is refused */
/* Issue: typos were accepted; every unknown key is now reported at its own place. */
static void unknown_keys(void **state)
{
	static const char *yaml =
		"config:\n"
		"  target: {service: volcano, memroy: 4Gi, gpu_per_node: 1}\n"
		"  jobs:\n"
		"    - sku: G1\n"
		"      instance_cout: 2\n"
		"      submit_args: {env: {ANY_NAME: 1}, container_args: {SHM_SIZE: 1Gi}}\n"
		"  storage: {shared: {mount_dir: /m, account: a, storage_account_name: a, container_name: c}}\n"
		"  _extra: {whatever: {goes: here}}\n"
		"  cofnig: {}\n"
		"  zzz: 1\n";
	struct conv c;

	(void)state;
	convert(&c, yaml, &no_args);
	expect_error(&c, "test.yaml:2:30: config.target.memroy: unknown key (did you mean \"memory\"?)");
	expect_error(&c, "test.yaml:2:43: config.target.gpu_per_node: unknown key "
		     "(did you mean \"gpus_per_node\"?)");
	expect_error(&c, "test.yaml:5:7: config.jobs[0].instance_cout: unknown key "
		     "(did you mean \"instance_count\"?)");
	expect_error(&c, "test.yaml:6:58: config.jobs[0].submit_args.container_args.SHM_SIZE: "
		     "unknown key (did you mean \"shm_size\"?)");
	expect_error(&c, "test.yaml:7:37: config.storage.shared.account: unknown key (known here: "
		     "storage_account_name, container_name, mount_dir)");
	expect_error(&c, "test.yaml:9:3: config.cofnig: unknown key (known here: description, target, "
		     "environment, code, storage, jobs, placement, _extra)");
	expect_error(&c, "test.yaml:10:3: config.zzz: unknown key (known here: description, target, "
		     "environment, code, storage, jobs, placement, _extra)");
	assert_int_equal(aj_errors_count(&c.err), 9);    /* and nodes, processes not set */
	done(&c);
}

/* Issue: memory: 4 was 4 bytes and "4GB" had no line; quantities need a unit. */
static void quantities_need_units(void **state)
{
	struct conv c;

	(void)state;
	rejects("config: {target: {memory: 4}, jobs: [{sku: G1}]}", &no_args,
		"test.yaml:1:27: config.target.memory: 4 has no unit: write it with one of "
		"Ki, Mi, Gi, Ti or k, M, G, T, such as 4Gi");
	rejects("config: {target: {memory: \"4\"}, jobs: [{sku: G1}]}", &no_args,
		"test.yaml:1:27: config.target.memory: \"4\" has no unit");
	rejects("config: {target: {memory: \"4GB\"}, jobs: [{sku: G1}]}", &no_args,
		"test.yaml:1:27: config.target.memory: \"4GB\" is not a Kubernetes quantity: "
		"write 4G (decimal) or 4Gi (binary)");
	rejects("config: {target: {memory: 2kb}, jobs: [{sku: G1}]}", &no_args,
		"config.target.memory: \"2kb\" is not a Kubernetes quantity: write 2k (decimal) or 2Ki (binary)");
	rejects("config: {target: {memory: -1Gi}, jobs: [{sku: G1}]}", &no_args,
		"test.yaml:1:27: config.target.memory: \"-1Gi\" must not be negative");
	rejects("config: {target: {memory: 1.5.5Gi}, jobs: [{sku: G1}]}", &no_args,
		"config.target.memory: \"1.5.5Gi\" is not a Kubernetes quantity: a number and a unit");
	rejects("config: {target: {memory: 100m}, jobs: [{sku: G1}]}", &no_args,
		"config.target.memory: \"100m\" is not a Kubernetes quantity");
	rejects("config: {jobs: [{sku: G1, submit_args: {container_args: {scratch_size: 200}}}]}",
		&no_args, "config.jobs[0].submit_args.container_args.scratch_size: 200 has no unit");
	rejects("config: {jobs: [{sku: G1, submit_args: {container_args: {shm_size: 64GB}}}]}",
		&no_args, "config.jobs[0].submit_args.container_args.shm_size: \"64GB\" is not a "
		"Kubernetes quantity: write 64G (decimal) or 64Gi (binary)");
	rejects("config: {jobs: [{sku: G1, submit_args: {container_args: {shm_size: lots}}}]}",
		&no_args, "shm_size: \"lots\" is not a Kubernetes quantity");
	convert(&c, "config: {target: {memory: 1.5Gi}, jobs: [{sku: G1, submit_args: "
		"{container_args: {shm_size: 64g, memory: 8G, scratch_size: 1Ti}}}]}", NULL);
	expect_ok(&c);
	assert_string_equal(c.spec.target.memory, "1.5Gi");
	assert_string_equal(c.spec.jobs[0].container.shm_size, "64g");
	assert_string_equal(c.spec.jobs[0].container.memory, "8G");
	done(&c);
	/* Docker's lowercase forms are for shm_size only */
	rejects("config: {target: {memory: 64g}, jobs: [{sku: G1}]}", &no_args,
		"config.target.memory: \"64g\" is not a Kubernetes quantity");
}

/* Seed: tasks declared => heterogeneous, whatever jobs[0].sku says. */
static void tasks_make_heterogeneous(void **state)
{
	static const char *yaml =
		"config:\n"
		"  target: {service: volcano}\n"
		"  jobs: [{sku: \"{nodes}xG8\"}]\n"
		"  _extra: {volcano: {tasks: {master: {}}}}\n";
	struct aj_shape_args args = { 2, 8, 1 };
	struct conv c;

	(void)state;
	convert(&c, yaml, &args);
	assert_true(c.spec.heterogeneous);
	expect_error(&c, "test.yaml:3:16: config.jobs[0].sku: SKU placeholders ({nodes}, {processes}) "
		     "are not allowed in a heterogeneous job: the tasks under "
		     "config._extra.volcano.tasks declare the shape");
	expect_error(&c, "-n: not allowed for a heterogeneous job");
	expect_error(&c, "-p: not allowed for a heterogeneous job");
	expect_error(&c, "--ppn: not allowed for a heterogeneous job");
	assert_int_equal(aj_errors_count(&c.err), 4);
	done(&c);

	rejects("config: {jobs: [{sku: {\"1\": G8}}], _extra: {volcano: {tasks: {master: {}}}}}",
		&no_args, "config.jobs[0].sku: node ranges are not allowed in a heterogeneous job");
	convert(&c, "config: {jobs: [{sku: G8}], _extra: {volcano: {tasks: {master: {}}}}}", &no_args);
	expect_ok(&c);
	assert_true(c.spec.heterogeneous);
	assert_string_equal(c.spec.sku, "G8");
	done(&c);
}

static void heterogeneous_refusals(void **state)
{
	static const char *yaml =
		"config:\n"
		"  target: {service: volcano, gpus_per_node: 8, cpus_per_node: 4, memory: 1Gi, rdma: true}\n"
		"  jobs: [{sku: heterogeneous, instance_count: 2, process_count_per_node: 8}]\n";
	struct aj_shape_args args = { 2, 8, 4 };
	struct conv c;

	(void)state;
	convert(&c, yaml, &args);
	expect_error(&c, "-n: not allowed for a heterogeneous job");
	expect_error(&c, "-p: not allowed for a heterogeneous job");
	expect_error(&c, "--ppn: not allowed for a heterogeneous job");
	expect_error(&c, "test.yaml:2:45: config.target.gpus_per_node: not allowed in a heterogeneous job");
	expect_error(&c, "config.target.cpus_per_node: not allowed in a heterogeneous job");
	expect_error(&c, "config.target.memory: not allowed in a heterogeneous job");
	expect_error(&c, "config.target.rdma: not allowed in a heterogeneous job");
	expect_error(&c, "config.jobs[0].instance_count: not allowed in a heterogeneous job");
	expect_error(&c, "config.jobs[0].process_count_per_node: not allowed in a heterogeneous job");
	assert_int_equal(aj_errors_count(&c.err), 9);
	done(&c);

	convert(&c, "config: {target: {service: volcano}, jobs: [{sku: heterogeneous}]}", &no_args);
	expect_ok(&c);
	assert_true(c.spec.heterogeneous);
	assert_string_equal(c.spec.sku, "heterogeneous");
	assert_int_equal(c.spec.nodes, 0);
	assert_int_equal(c.spec.tasks_nr, 0);
	done(&c);
}

static void kvlist(void **state)
{
	struct aj_kvlist l = { NULL, 0, 0 };

	(void)state;
	assert_int_equal(aj_kvlist_add(&l, "a", "1"), 0);
	assert_int_equal(aj_kvlist_add(&l, "b", ""), 0);
	assert_string_equal(aj_kvlist_get(&l, "a"), "1");
	assert_string_equal(aj_kvlist_get(&l, "b"), "");
	assert_null(aj_kvlist_get(&l, "c"));
	aj_alloc_fail_after(0);
	assert_int_equal(aj_kvlist_add(&l, "c", "3"), -1);
	aj_alloc_fail_after(1);
	assert_int_equal(aj_kvlist_add(&l, "c", "3"), -1);
	aj_alloc_fail_after(-1);
	assert_int_equal(l.nr, 2);
	aj_kvlist_release(&l);
	assert_int_equal(l.nr, 0);
	assert_null(l.items);
}

/* Every allocation may fail: the conversion must fail cleanly (ASan checks leaks). */
static void survives_allocation_failures(void **state)
{
	static const char *const argv[] = { "python", "train.py" };
	struct aj_shape_args args = { 0, 8, 0 };
	struct aj_node *doc = load_file("full.yaml");
	struct aj_node *bad = aj_test_yaml("config: {target: {gpus_per_node: x, service: y}, "
					   "jobs: [{sku: {\"q\": 1}, env: 3}], storage: {a: {}}}");
	long n;

	(void)state;
	for (n = 0;; n++) {
		struct aj_jobspec s, s2;
		struct aj_errors err = AJ_ERRORS_INIT;
		int ret, ret2;

		aj_jobspec_init(&s);
		aj_jobspec_init(&s2);
		aj_alloc_fail_after(n);
		ret = aj_jobspec_from_config(aj_node_get(doc, "config"), "t", &args, argv, 2, &s, &err);
		ret2 = aj_jobspec_from_config(aj_node_get(bad, "config"), "t", &args, argv, 2, &s2, &err);
		aj_alloc_fail_after(-1);
		assert_int_equal(ret2, -1);
		assert_false(aj_errors_empty(&err));
		if (ret)
			assert_true(aj_errors_count(&err) >= 1);
		aj_jobspec_release(&s);
		aj_jobspec_release(&s2);
		aj_errors_release(&err);
		if (!ret)
			break;
	}
	assert_true(n > 50);
	aj_node_free(doc);
	aj_node_free(bad);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(full_template_converts),
		cmocka_unit_test(defaults_when_absent),
		cmocka_unit_test(shape_precedence),
		cmocka_unit_test(shape_has_no_fallback),
		cmocka_unit_test(no_shape_without_args),
		cmocka_unit_test(strict_types),
		cmocka_unit_test(nul_bytes_and_bad_arguments),
		cmocka_unit_test(env_values),
		cmocka_unit_test(jobs_structure),
		cmocka_unit_test(storage_entries),
		cmocka_unit_test(every_problem_reported),
		cmocka_unit_test(heterogeneous_refusals),
		cmocka_unit_test(unknown_keys),
		cmocka_unit_test(quantities_need_units),
		cmocka_unit_test(tasks_make_heterogeneous),
		cmocka_unit_test(kvlist),
		cmocka_unit_test(survives_allocation_failures),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
