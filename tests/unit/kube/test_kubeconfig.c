#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/error.h"
#include "kube/kubeconfig.h"

/* A scratch directory per test. */
static char dir[256];

/*
 * What a test loads with: the options, the result, the errors and the
 * paths made by full(); teardown releases them all.
 */
static struct {
	struct aj_kube_config_opts o;
	struct aj_kube_config cfg;
	struct aj_errors err;
	char *paths[32];
	size_t nr_paths;
} fx;

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	memset(&fx, 0, sizeof(fx));
	aj_kube_config_init(&fx.cfg);
	snprintf(dir, sizeof(dir), "%s/aj-kubeconfig-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	aj_kube_config_release(&fx.cfg);
	aj_errors_release(&fx.err);
	for (size_t i = 0; i < fx.nr_paths; i++)
		free(fx.paths[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* dir/name, kept until teardown. */
static const char *full(const char *name)
{
	char path[512];

	assert_true(fx.nr_paths < sizeof(fx.paths) / sizeof(fx.paths[0]));
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fx.paths[fx.nr_paths] = strdup(path);
	assert_non_null(fx.paths[fx.nr_paths]);
	return fx.paths[fx.nr_paths++];
}

/* Write dir/name; returns its full path. */
static const char *put(const char *name, const char *text)
{
	const char *path = full(name);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

static void make_dir(const char *name)
{
	assert_int_equal(mkdir(full(name), 0700), 0);
}

static int load(void)
{
	return aj_kube_config_load(&fx.cfg, &fx.o, &fx.err);
}

/* Load only `name` through --kubeconfig and expect a failure with `msg`. */
static void expect_error(const char *name, const char *text, const char *msg)
{
	memset(&fx.o, 0, sizeof(fx.o));
	fx.o.kubeconfig = put(name, text);
	assert_int_equal(load(), -1);
	if (!aj_test_errors_contain(&fx.err, msg)) {
		print_error("%s\n", aj_test_errors_text(&fx.err));
		fail_msg("expected \"%s\"", msg);
	}
	assert_null(fx.cfg.server);
	aj_errors_release(&fx.err);
}

/* "aGVsbG8=" is "hello", "d29ybGQ=" is "world", "a2V5" is "key". */
static const char inline_config[] =
	"apiVersion: v1\n"
	"kind: Config\n"
	"clusters:\n"
	"- name: prod\n"
	"  cluster:\n"
	"    server: https://10.0.0.1:6443/\n"
	"    certificate-authority-data: aGVsbG8=\n"
	"users:\n"
	"- name: admin\n"
	"  user:\n"
	"    client-certificate-data: d29ybGQ=\n"
	"    client-key-data: a2V5\n"
	"contexts:\n"
	"- name: prod-admin\n"
	"  context: {cluster: prod, user: admin, namespace: ml}\n"
	"current-context: prod-admin\n";

static void inline_data(void **state)
{
	(void)state;
	fx.o.kubeconfig = put("config", inline_config);
	assert_int_equal(load(), 0);
	assert_string_equal(fx.cfg.server, "https://10.0.0.1:6443");
	assert_string_equal(fx.cfg.context, "prod-admin");
	assert_string_equal(fx.cfg.namespace, "ml");
	assert_string_equal(fx.cfg.origin, fx.o.kubeconfig);
	assert_null(fx.cfg.ca_file);
	assert_int_equal(fx.cfg.ca.len, 5);
	assert_memory_equal(fx.cfg.ca.data, "hello", 5);
	assert_int_equal(fx.cfg.cert.len, 5);
	assert_memory_equal(fx.cfg.cert.data, "world", 5);
	assert_int_equal(fx.cfg.key.len, 3);
	assert_memory_equal(fx.cfg.key.data, "key", 3);
	assert_null(fx.cfg.cert_file);
	assert_null(fx.cfg.key_file);
	assert_null(fx.cfg.token);
	aj_kube_config_release(&fx.cfg);
	assert_null(fx.cfg.server);
}

static void file_references_are_relative_to_the_kubeconfig(void **state)
{
	const char *ca, *key, *tok;

	(void)state;
	make_dir("pki");
	ca = put("pki/ca.crt", "CA");
	put("pki/admin.crt", "CERT");
	key = put("pki/admin.key", "KEY");
	tok = put("token", "  s3cret-token \n");
	fx.o.kubeconfig = put("config",
	    "clusters:\n"
	    "- name: c\n"
	    "  cluster:\n"
	    "    server: https://localhost:1234\n"
	    "    certificate-authority: pki/ca.crt\n"
	    "users:\n"
	    "- name: u\n"
	    "  user:\n"
	    "    client-certificate: pki/admin.crt\n"
	    "    client-key: pki/admin.key\n"
	    "    tokenFile: token\n"
	    "    token: ignored-when-a-file-is-given\n"
	    "contexts:\n"
	    "- name: x\n"
	    "  context:\n"
	    "    cluster: c\n"
	    "    user: u\n"
	    "current-context: x\n");
	assert_int_equal(load(), 0);
	assert_string_equal(fx.cfg.ca_file, ca);
	assert_string_equal(fx.cfg.key_file, key);
	assert_non_null(strstr(fx.cfg.cert_file, "/pki/admin.crt"));
	assert_null(fx.cfg.ca.data);
	assert_null(fx.cfg.key.data);
	assert_string_equal(fx.cfg.token_file, tok);
	/* Trimmed file contents, not the inline token. */
	assert_string_equal(fx.cfg.token, "  s3cret-token");
	assert_string_equal(fx.cfg.namespace, "default");
}

static void kubeconfig_list_merges_first_wins(void **state)
{
	char list[2048];
	const char *one, *two;

	(void)state;
	one = put("one",
	    "clusters:\n"
	    "- name: shared\n"
	    "  cluster: {server: https://one.example}\n"
	    "users:\n"
	    "- name: u\n"
	    "  user: {token: token-one}\n"
	    "current-context: from-two\n");
	two = put("two",
	    "clusters:\n"
	    "- name: shared\n"
	    "  cluster: {server: https://two.example}\n"
	    "- name: only-two\n"
	    "  cluster: {server: https://only-two.example}\n"
	    "users:\n"
	    "- name: u\n"
	    "  user: {token: token-two}\n"
	    "contexts:\n"
	    "- name: from-two\n"
	    "  context: {cluster: shared, user: u}\n"
	    "- name: other\n"
	    "  context: {cluster: only-two, user: u, namespace: other-ns}\n"
	    "current-context: other\n");
	/* Empty entries and missing files are skipped, as kubectl does. */
	snprintf(list, sizeof(list), "%s::%s:%s:", full("does-not-exist"), one, two);
	fx.o.kubeconfig_env = list;
	fx.o.home = "/nonexistent-home";
	assert_int_equal(load(), 0);
	/* current-context from the first file that sets it; the context from
	 * the only file that has it; the cluster and user from the first. */
	assert_string_equal(fx.cfg.context, "from-two");
	assert_string_equal(fx.cfg.server, "https://one.example");
	assert_string_equal(fx.cfg.token, "token-one");
	assert_string_equal(fx.cfg.origin, two);
	aj_kube_config_release(&fx.cfg);

	/* Reversed order: two wins everything. */
	snprintf(list, sizeof(list), "%s:%s", two, one);
	assert_int_equal(load(), 0);
	assert_string_equal(fx.cfg.context, "other");
	assert_string_equal(fx.cfg.server, "https://only-two.example");
	assert_string_equal(fx.cfg.namespace, "other-ns");
	assert_string_equal(fx.cfg.token, "token-two");
	assert_true(aj_errors_empty(&fx.err));
}

static void context_and_namespace_overrides(void **state)
{
	(void)state;
	fx.o.kubeconfig = put("config",
	    "clusters:\n"
	    "- {name: a, cluster: {server: 'https://a.example'}}\n"
	    "- {name: b, cluster: {server: 'https://b.example'}}\n"
	    "contexts:\n"
	    "- {name: ca, context: {cluster: a, namespace: ns-a}}\n"
	    "- {name: cb, context: {cluster: b}}\n"
	    "current-context: ca\n");
	fx.o.context = "cb";
	assert_int_equal(load(), 0);
	assert_string_equal(fx.cfg.server, "https://b.example");
	assert_string_equal(fx.cfg.namespace, "default");
	assert_null(fx.cfg.token);
	assert_null(fx.cfg.cert.data);
	aj_kube_config_release(&fx.cfg);
	fx.o.context = NULL;
	fx.o.namespace = "forced";
	assert_int_equal(load(), 0);
	assert_string_equal(fx.cfg.server, "https://a.example");
	assert_string_equal(fx.cfg.namespace, "forced");
	aj_kube_config_release(&fx.cfg);
	fx.o.context = "nope";
	assert_int_equal(load(), -1);
	assert_true(aj_test_errors_contain(&fx.err, "context \"nope\" (from --context) not found in "));
}

/* The tail of the documents below: context x, on cluster c, is current. */
#define CONTEXT_X_ON_C \
	"contexts:\n" \
	"- {name: x, context: {cluster: c}}\n" \
	"current-context: x\n"

/* A cluster asking to skip verification, as kubeadm-less setups write it. */
#define INSECURE_CLUSTER(extra) \
	"clusters:\n" \
	"- name: c\n" \
	"  cluster:\n" \
	"    server: https://x:6443\n" \
	"    insecure-skip-tls-verify: true\n" \
	extra \
	CONTEXT_X_ON_C

/* The controller (allow_insecure 0) never connects unverified. */
static void insecure_skip_tls_verify_refused(void **state)
{
	(void)state;
	expect_error("k.yaml", INSECURE_CLUSTER(""),
		     "k.yaml:5:31: clusters[0].cluster.insecure-skip-tls-verify: refused: "
		     "the controller never turns TLS verification off");
	/* A string is not read as a boolean, whoever loads it. */
	expect_error("k.yaml",
		     "clusters:\n"
		     "- name: c\n"
		     "  cluster: {server: https://x, insecure-skip-tls-verify: 'yes'}\n"
		     CONTEXT_X_ON_C,
		     "clusters[0].cluster.insecure-skip-tls-verify: expected boolean, got string");
	/* false is verification as usual. */
	memset(&fx.o, 0, sizeof(fx.o));
	fx.o.kubeconfig = put("k.yaml",
			      "clusters:\n"
			      "- name: c\n"
			      "  cluster: {server: https://x, insecure-skip-tls-verify: false}\n"
			      CONTEXT_X_ON_C);
	assert_int_equal(load(), 0);
	assert_int_equal(fx.cfg.insecure, 0);
}

static void missing_and_wrong_keys(void **state)
{
	(void)state;
	expect_error("k.yaml",
		     "clusters:\n"
		     "- name: c\n"
		     "  cluster:\n"
		     "    certificate-authority-data: aGVsbG8=\n"
		     CONTEXT_X_ON_C,
		     "k.yaml:4:5: clusters[0].cluster.server: required");
	expect_error("k.yaml",
		     "clusters:\n"
		     "- name: c\n"
		     "  cluster:\n"
		     "    server: 443\n"
		     CONTEXT_X_ON_C,
		     "k.yaml:4:13: clusters[0].cluster.server: expected string, got integer");
	expect_error("k.yaml",
		     "clusters:\n"
		     "- {name: c, cluster: {server: 'http://plain:8080'}}\n"
		     CONTEXT_X_ON_C,
		     "k.yaml:2:31: clusters[0].cluster.server: \"http://plain:8080\": only https:// servers are supported");
	expect_error("k.yaml",
		     "clusters:\n"
		     "- {name: c, cluster: {server: 'https://x'}}\n"
		     "contexts:\n"
		     "- name: x\n"
		     "  context:\n"
		     "    cluster: missing\n"
		     "current-context: x\n",
		     "k.yaml:6:14: contexts[0].context.cluster: cluster \"missing\" not found");
	expect_error("k.yaml",
		     "clusters:\n"
		     "- {name: c, cluster: {server: 'https://x'}}\n"
		     "contexts:\n"
		     "- name: x\n"
		     "  context:\n"
		     "    cluster: c\n"
		     "    user: ghost\n"
		     "current-context: x\n",
		     "k.yaml:7:11: contexts[0].context.user: user \"ghost\" not found");
	expect_error("k.yaml",
		     "contexts:\n"
		     "- {name: x, context: {user: u}}\n"
		     "current-context: x\n",
		     "k.yaml:2:22: contexts[0].context.cluster: required");
	expect_error("k.yaml",
		     "current-context: elsewhere\n",
		     "k.yaml:1:18: current-context: context \"elsewhere\" not found");
	expect_error("k.yaml",
		     "clusters:\n"
		     "- {name: c, cluster: {server: 'https://x'}}\n",
		     "k.yaml: no current-context is set; choose one with --context");
	expect_error("k.yaml",
		     "clusters:\n"
		     "- cluster: {server: 'https://x'}\n",
		     "k.yaml:2:3: clusters[0].name: required");
	expect_error("k.yaml",
		     "users:\n"
		     "- {name: u, user: {}}\n"
		     "- {name: u, user: {}}\n",
		     "k.yaml:3:10: users[1].name: duplicate name \"u\"");
	expect_error("k.yaml", "clusters: {}\n",
		     "k.yaml:1:11: clusters: expected list, got mapping");
	expect_error("k.yaml", "- a\n- b\n", "k.yaml:1:1: expected mapping, got list");
}

static void credential_problems(void **state)
{
	static const char head[] =
		"clusters:\n"
		"- {name: c, cluster: {server: 'https://x'}}\n"
		"contexts:\n"
		"- {name: x, context: {cluster: c, user: u}}\n"
		"current-context: x\n"
		"users:\n"
		"- name: u\n"
		"  user:\n";
	/* The user's fields after head, and the error they must give. */
	static const struct {
		const char *user, *msg;
	} cases[] = {
		{ "    exec: {command: aws}\n",
		  "k.yaml:9:11: users[0].user.exec: exec credential plugins are not supported" },
		{ "    auth-provider: {name: gcp}\n",
		  "users[0].user.auth-provider: auth providers are not supported" },
		{ "    username: me\n    password: pw\n",
		  "users[0].user.username: basic authentication is not supported" },
		{ "    client-certificate-data: d29ybGQ=\n",
		  "k.yaml:9:5: users[0].user.client-key: required: a client certificate needs its key" },
		{ "    client-key-data: a2V5\n",
		  "users[0].user.client-certificate: required" },
		{ "    client-key-data: 'not base64!'\n    client-certificate-data: d29ybGQ=\n",
		  "k.yaml:9:22: users[0].user.client-key-data: not valid base64" },
		{ "    client-key: k.pem\n    client-key-data: a2V5\n",
		  "users[0].user.client-key: set either client-key or its -data form, not both" },
		{ "    client-key: no-such.pem\n    client-certificate-data: d29ybGQ=\n",
		  "users[0].user.client-key: cannot read " },
		{ "    tokenFile: empty-token\n",
		  "empty-token: the token file is empty" },
	};
	char text[1024];

	(void)state;
	put("empty-token", "\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%s%s", head, cases[i].user);
		expect_error("k.yaml", text, cases[i].msg);
	}
}

static void no_configuration_anywhere(void **state)
{
	const char *missing = full("missing");

	(void)state;
	fx.o.home = dir;
	assert_int_equal(load(), -1);
	assert_true(aj_test_errors_contain(&fx.err, "no Kubernetes configuration: "));
	assert_true(aj_test_errors_contain(&fx.err, "KUBERNETES_SERVICE_HOST is unset"));
	aj_errors_release(&fx.err);
	fx.o.kubeconfig = missing;
	assert_int_equal(load(), -1);
	assert_true(aj_test_errors_contain(&fx.err, "/missing (from --kubeconfig): no such file"));
	aj_errors_release(&fx.err);
	fx.o.kubeconfig = NULL;
	fx.o.kubeconfig_env = missing;
	assert_int_equal(load(), -1);
	assert_true(aj_test_errors_contain(&fx.err, "/missing: none of these files exists"));
}

static void home_kube_config_is_the_default(void **state)
{
	(void)state;
	make_dir(".kube");
	put(".kube/config", inline_config);
	fx.o.home = dir;
	/* A kubeconfig wins over the in-cluster environment. */
	fx.o.service_host = "10.96.0.1";
	fx.o.service_port = "443";
	assert_int_equal(load(), 0);
	assert_string_equal(fx.cfg.server, "https://10.0.0.1:6443");
}

/* dir/sa as a pod's service account directory, used by the in-cluster options. */
static void make_serviceaccount(const char *ns)
{
	make_dir("sa");
	put("sa/token", "eyJhbGciOi.token\n");
	put("sa/ca.crt", "-----BEGIN CERTIFICATE-----\n");
	if (ns)
		put("sa/namespace", ns);
	fx.o.service_host = "10.96.0.1";
	fx.o.service_port = "443";
	fx.o.serviceaccount_dir = full("sa");
}

/* The CLI (allow_insecure 1) honours it as kubectl does. */
static void insecure_skip_tls_verify_honoured(void **state)
{
	(void)state;
	memset(&fx.o, 0, sizeof(fx.o));
	fx.o.allow_insecure = 1;
	fx.o.kubeconfig = put("k.yaml", INSECURE_CLUSTER("") "users: [{name: u, user: {token: t0k}}]\n");
	assert_int_equal(load(), 0);
	assert_int_equal(fx.cfg.insecure, 1);
	assert_string_equal(fx.cfg.server, "https://x:6443");
	assert_null(fx.cfg.ca_file);
	assert_null(fx.cfg.ca.data);
	aj_kube_config_release(&fx.cfg);

	/* A CA means "verify with it": the two together are a contradiction (client-go refuses it too). */
	fx.o.kubeconfig = put("k2.yaml", INSECURE_CLUSTER("    certificate-authority-data: aGVsbG8=\n"));
	assert_int_equal(load(), -1);
	assert_true(aj_test_errors_contain(&fx.err, "k2.yaml:5:31: clusters[0].cluster."
					   "insecure-skip-tls-verify: set either "
					   "insecure-skip-tls-verify or a certificate-authority, not both"));
	assert_null(fx.cfg.server);
	aj_errors_release(&fx.err);

	/* In-cluster configuration has no such setting: always verified with the ServiceAccount's CA. */
	make_serviceaccount("ml-system");
	assert_int_equal(aj_kube_config_in_cluster(&fx.cfg, &fx.o, &fx.err), 0);
	assert_int_equal(fx.cfg.insecure, 0);
	assert_string_equal(fx.cfg.ca_file, full("sa/ca.crt"));
}

static void in_cluster(void **state)
{
	(void)state;
	make_serviceaccount("ml-system");
	fx.o.home = "/nonexistent-home";
	assert_int_equal(load(), 0);
	assert_string_equal(fx.cfg.server, "https://10.96.0.1:443");
	assert_string_equal(fx.cfg.token, "eyJhbGciOi.token");
	assert_string_equal(fx.cfg.token_file, full("sa/token"));
	assert_string_equal(fx.cfg.ca_file, full("sa/ca.crt"));
	assert_string_equal(fx.cfg.namespace, "ml-system");
	assert_string_equal(fx.cfg.origin, "in-cluster");
	assert_null(fx.cfg.context);
	aj_kube_config_release(&fx.cfg);

	fx.o.service_host = "fd00::1";
	fx.o.namespace = "override";
	assert_int_equal(aj_kube_config_in_cluster(&fx.cfg, &fx.o, &fx.err), 0);
	assert_string_equal(fx.cfg.server, "https://[fd00::1]:443");
	assert_string_equal(fx.cfg.namespace, "override");
	aj_kube_config_release(&fx.cfg);

	fx.o.service_port = "https";
	assert_int_equal(aj_kube_config_in_cluster(&fx.cfg, &fx.o, &fx.err), -1);
	assert_true(aj_test_errors_contain(&fx.err, "KUBERNETES_SERVICE_PORT=https: not a port number"));
}

static void in_cluster_missing_files(void **state)
{
	(void)state;
	make_serviceaccount(NULL);
	/* No namespace file: "default". */
	assert_int_equal(aj_kube_config_in_cluster(&fx.cfg, &fx.o, &fx.err), 0);
	assert_string_equal(fx.cfg.namespace, "default");
	aj_kube_config_release(&fx.cfg);
	assert_int_equal(unlink(full("sa/token")), 0);
	assert_int_equal(aj_kube_config_in_cluster(&fx.cfg, &fx.o, &fx.err), -1);
	assert_true(aj_test_errors_contain(&fx.err, "/sa/token: cannot open: No such file or directory"));
	aj_errors_release(&fx.err);
	fx.o.service_host = NULL;
	assert_int_equal(aj_kube_config_in_cluster(&fx.cfg, &fx.o, &fx.err), -1);
	assert_true(aj_test_errors_contain(&fx.err, "needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT"));
}

static void load_survives_allocation_failures(void **state)
{
	long n;

	(void)state;
	fx.o.kubeconfig = put("config", inline_config);
	for (n = 0;; n++) {
		struct aj_kube_config cfg;
		struct aj_errors err = AJ_ERRORS_INIT;
		int ret;

		aj_alloc_fail_after(n);
		ret = aj_kube_config_load(&cfg, &fx.o, &err);
		aj_alloc_fail_after(-1);
		if (!ret) {
			aj_kube_config_release(&cfg);
			aj_errors_release(&err);
			break;
		}
		assert_false(aj_errors_empty(&err));
		assert_null(cfg.server);
		aj_errors_release(&err);
	}
	assert_true(n > 20);
}

#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(inline_data),
		T(file_references_are_relative_to_the_kubeconfig),
		T(kubeconfig_list_merges_first_wins),
		T(context_and_namespace_overrides),
		T(insecure_skip_tls_verify_refused),
		T(insecure_skip_tls_verify_honoured),
		T(missing_and_wrong_keys),
		T(credential_problems),
		T(no_configuration_anywhere),
		T(home_kube_config_is_the_default),
		T(in_cluster),
		T(in_cluster_missing_files),
		T(load_survives_allocation_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
