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

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/aj-kubeconfig-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Write dir/name; returns the full path (static, overwritten per call). */
static const char *put(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	return path;
}

static char *full(const char *name)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return strdup(path);
}

static int load(struct aj_kube_config *cfg, const struct aj_kube_config_opts *o,
		struct aj_errors *err)
{
	return aj_kube_config_load(cfg, o, err);
}

/* Load only `name` through --kubeconfig and expect a failure with `msg`. */
static void expect_error(const char *name, const char *text, const char *msg)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char *path;

	put(name, text);
	path = full(name);
	o.kubeconfig = path;
	assert_int_equal(load(&cfg, &o, &err), -1);
	if (!aj_test_errors_contain(&err, msg)) {
		print_error("%s\n", aj_test_errors_text(&err));
		fail_msg("expected \"%s\"", msg);
	}
	assert_null(cfg.server);
	aj_errors_release(&err);
	free(path);
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
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char *path;

	(void)state;
	put("config", inline_config);
	path = full("config");
	o.kubeconfig = path;
	assert_int_equal(load(&cfg, &o, &err), 0);
	assert_string_equal(cfg.server, "https://10.0.0.1:6443");
	assert_string_equal(cfg.context, "prod-admin");
	assert_string_equal(cfg.namespace, "ml");
	assert_string_equal(cfg.origin, path);
	assert_null(cfg.ca_file);
	assert_int_equal(cfg.ca.len, 5);
	assert_memory_equal(cfg.ca.data, "hello", 5);
	assert_int_equal(cfg.cert.len, 5);
	assert_memory_equal(cfg.cert.data, "world", 5);
	assert_int_equal(cfg.key.len, 3);
	assert_memory_equal(cfg.key.data, "key", 3);
	assert_null(cfg.cert_file);
	assert_null(cfg.key_file);
	assert_null(cfg.token);
	aj_kube_config_release(&cfg);
	assert_null(cfg.server);
	free(path);
}

static void file_references_are_relative_to_the_kubeconfig(void **state)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char *path, *ca, *key, *tok, p[512];

	(void)state;
	snprintf(p, sizeof(p), "%s/pki", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	put("pki/ca.crt", "CA");
	put("pki/admin.crt", "CERT");
	put("pki/admin.key", "KEY");
	put("token", "  s3cret-token \n");
	put("config",
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
	path = full("config");
	ca = full("pki/ca.crt");
	key = full("pki/admin.key");
	tok = full("token");
	o.kubeconfig = path;
	assert_int_equal(load(&cfg, &o, &err), 0);
	assert_string_equal(cfg.ca_file, ca);
	assert_string_equal(cfg.key_file, key);
	assert_non_null(strstr(cfg.cert_file, "/pki/admin.crt"));
	assert_null(cfg.ca.data);
	assert_null(cfg.key.data);
	assert_string_equal(cfg.token_file, tok);
	/* Trimmed file contents, not the inline token. */
	assert_string_equal(cfg.token, "  s3cret-token");
	assert_string_equal(cfg.namespace, "default");
	aj_kube_config_release(&cfg);
	free(path);
	free(ca);
	free(key);
	free(tok);
}

static void kubeconfig_list_merges_first_wins(void **state)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char list[2048], *one, *two, *none;

	(void)state;
	put("one",
	    "clusters:\n"
	    "- name: shared\n"
	    "  cluster: {server: https://one.example}\n"
	    "users:\n"
	    "- name: u\n"
	    "  user: {token: token-one}\n"
	    "current-context: from-two\n");
	put("two",
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
	one = full("one");
	two = full("two");
	none = full("does-not-exist");
	/* Empty entries and missing files are skipped, as kubectl does. */
	snprintf(list, sizeof(list), "%s::%s:%s:", none, one, two);
	o.kubeconfig_env = list;
	o.home = "/nonexistent-home";
	assert_int_equal(load(&cfg, &o, &err), 0);
	/* current-context from the first file that sets it; the context from
	 * the only file that has it; the cluster and user from the first. */
	assert_string_equal(cfg.context, "from-two");
	assert_string_equal(cfg.server, "https://one.example");
	assert_string_equal(cfg.token, "token-one");
	assert_string_equal(cfg.origin, two);
	aj_kube_config_release(&cfg);

	/* Reversed order: two wins everything. */
	snprintf(list, sizeof(list), "%s:%s", two, one);
	assert_int_equal(load(&cfg, &o, &err), 0);
	assert_string_equal(cfg.context, "other");
	assert_string_equal(cfg.server, "https://only-two.example");
	assert_string_equal(cfg.namespace, "other-ns");
	assert_string_equal(cfg.token, "token-two");
	aj_kube_config_release(&cfg);
	assert_true(aj_errors_empty(&err));
	free(one);
	free(two);
	free(none);
}

static void context_and_namespace_overrides(void **state)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char *path;

	(void)state;
	put("config",
	    "clusters:\n"
	    "- {name: a, cluster: {server: 'https://a.example'}}\n"
	    "- {name: b, cluster: {server: 'https://b.example'}}\n"
	    "contexts:\n"
	    "- {name: ca, context: {cluster: a, namespace: ns-a}}\n"
	    "- {name: cb, context: {cluster: b}}\n"
	    "current-context: ca\n");
	path = full("config");
	o.kubeconfig = path;
	o.context = "cb";
	assert_int_equal(load(&cfg, &o, &err), 0);
	assert_string_equal(cfg.server, "https://b.example");
	assert_string_equal(cfg.namespace, "default");
	assert_null(cfg.token);
	assert_null(cfg.cert.data);
	aj_kube_config_release(&cfg);
	o.context = NULL;
	o.namespace = "forced";
	assert_int_equal(load(&cfg, &o, &err), 0);
	assert_string_equal(cfg.server, "https://a.example");
	assert_string_equal(cfg.namespace, "forced");
	aj_kube_config_release(&cfg);
	o.context = "nope";
	assert_int_equal(load(&cfg, &o, &err), -1);
	assert_true(aj_test_errors_contain(&err, "context \"nope\" (from --context) not found in "));
	aj_errors_release(&err);
	free(path);
}

static void insecure_skip_tls_verify_refused(void **state)
{
	(void)state;
	expect_error("k.yaml",
		     "clusters:\n"
		     "- name: c\n"
		     "  cluster:\n"
		     "    server: https://x\n"
		     "    insecure-skip-tls-verify: true\n"
		     "contexts:\n"
		     "- {name: x, context: {cluster: c}}\n"
		     "current-context: x\n",
		     "k.yaml:5:31: clusters[0].cluster.insecure-skip-tls-verify: refused: "
		     "TLS verification cannot be turned off");
	/* A string "true" is refused as well rather than misread. */
	expect_error("k.yaml",
		     "clusters:\n"
		     "- name: c\n"
		     "  cluster: {server: https://x, insecure-skip-tls-verify: 'yes'}\n"
		     "contexts:\n"
		     "- {name: x, context: {cluster: c}}\n"
		     "current-context: x\n",
		     "clusters[0].cluster.insecure-skip-tls-verify: refused");
}

static void missing_and_wrong_keys(void **state)
{
	(void)state;
	expect_error("k.yaml",
		     "clusters:\n"
		     "- name: c\n"
		     "  cluster:\n"
		     "    certificate-authority-data: aGVsbG8=\n"
		     "contexts:\n"
		     "- {name: x, context: {cluster: c}}\n"
		     "current-context: x\n",
		     "k.yaml:4:5: clusters[0].cluster.server: required");
	expect_error("k.yaml",
		     "clusters:\n"
		     "- name: c\n"
		     "  cluster:\n"
		     "    server: 443\n"
		     "contexts:\n"
		     "- {name: x, context: {cluster: c}}\n"
		     "current-context: x\n",
		     "k.yaml:4:13: clusters[0].cluster.server: expected string, got integer");
	expect_error("k.yaml",
		     "clusters:\n"
		     "- {name: c, cluster: {server: 'http://plain:8080'}}\n"
		     "contexts:\n"
		     "- {name: x, context: {cluster: c}}\n"
		     "current-context: x\n",
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
	char text[1024];

	(void)state;
	snprintf(text, sizeof(text), "%s    exec: {command: aws}\n", head);
	expect_error("k.yaml", text, "k.yaml:9:11: users[0].user.exec: exec credential plugins are not supported");
	snprintf(text, sizeof(text), "%s    auth-provider: {name: gcp}\n", head);
	expect_error("k.yaml", text, "users[0].user.auth-provider: auth providers are not supported");
	snprintf(text, sizeof(text), "%s    username: me\n    password: pw\n", head);
	expect_error("k.yaml", text, "users[0].user.username: basic authentication is not supported");
	snprintf(text, sizeof(text), "%s    client-certificate-data: d29ybGQ=\n", head);
	expect_error("k.yaml", text, "k.yaml:9:5: users[0].user.client-key: required: a client certificate needs its key");
	snprintf(text, sizeof(text), "%s    client-key-data: a2V5\n", head);
	expect_error("k.yaml", text, "users[0].user.client-certificate: required");
	snprintf(text, sizeof(text), "%s    client-key-data: 'not base64!'\n    client-certificate-data: d29ybGQ=\n", head);
	expect_error("k.yaml", text, "k.yaml:9:22: users[0].user.client-key-data: not valid base64");
	snprintf(text, sizeof(text), "%s    client-key: k.pem\n    client-key-data: a2V5\n", head);
	expect_error("k.yaml", text, "users[0].user.client-key: set either client-key or its -data form, not both");
	snprintf(text, sizeof(text), "%s    client-key: no-such.pem\n    client-certificate-data: d29ybGQ=\n", head);
	expect_error("k.yaml", text, "users[0].user.client-key: cannot read ");
	put("empty-token", "\n");
	snprintf(text, sizeof(text), "%s    tokenFile: empty-token\n", head);
	expect_error("k.yaml", text, "empty-token: the token file is empty");
}

static void no_configuration_anywhere(void **state)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char *missing = full("missing");

	(void)state;
	o.home = dir;
	assert_int_equal(load(&cfg, &o, &err), -1);
	assert_true(aj_test_errors_contain(&err, "no Kubernetes configuration: "));
	assert_true(aj_test_errors_contain(&err, "KUBERNETES_SERVICE_HOST is unset"));
	aj_errors_release(&err);
	o.kubeconfig = missing;
	assert_int_equal(load(&cfg, &o, &err), -1);
	assert_true(aj_test_errors_contain(&err, "/missing (from --kubeconfig): no such file"));
	aj_errors_release(&err);
	o.kubeconfig = NULL;
	o.kubeconfig_env = missing;
	assert_int_equal(load(&cfg, &o, &err), -1);
	assert_true(aj_test_errors_contain(&err, "/missing: none of these files exists"));
	aj_errors_release(&err);
	free(missing);
}

static void home_kube_config_is_the_default(void **state)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char p[512];

	(void)state;
	snprintf(p, sizeof(p), "%s/.kube", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	put(".kube/config", inline_config);
	o.home = dir;
	/* A kubeconfig wins over the in-cluster environment. */
	o.service_host = "10.96.0.1";
	o.service_port = "443";
	assert_int_equal(load(&cfg, &o, &err), 0);
	assert_string_equal(cfg.server, "https://10.0.0.1:6443");
	aj_kube_config_release(&cfg);
}

static void make_serviceaccount(const char *ns)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/sa", dir);
	assert_int_equal(mkdir(p, 0700), 0);
	put("sa/token", "eyJhbGciOi.token\n");
	put("sa/ca.crt", "-----BEGIN CERTIFICATE-----\n");
	if (ns)
		put("sa/namespace", ns);
}

static void in_cluster(void **state)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char *sa = full("sa"), *ca = full("sa/ca.crt"), *tok = full("sa/token");

	(void)state;
	make_serviceaccount("ml-system");
	o.home = "/nonexistent-home";
	o.service_host = "10.96.0.1";
	o.service_port = "443";
	o.serviceaccount_dir = sa;
	assert_int_equal(load(&cfg, &o, &err), 0);
	assert_string_equal(cfg.server, "https://10.96.0.1:443");
	assert_string_equal(cfg.token, "eyJhbGciOi.token");
	assert_string_equal(cfg.token_file, tok);
	assert_string_equal(cfg.ca_file, ca);
	assert_string_equal(cfg.namespace, "ml-system");
	assert_string_equal(cfg.origin, "in-cluster");
	assert_null(cfg.context);
	aj_kube_config_release(&cfg);

	o.service_host = "fd00::1";
	o.namespace = "override";
	assert_int_equal(aj_kube_config_in_cluster(&cfg, &o, &err), 0);
	assert_string_equal(cfg.server, "https://[fd00::1]:443");
	assert_string_equal(cfg.namespace, "override");
	aj_kube_config_release(&cfg);

	o.service_port = "https";
	assert_int_equal(aj_kube_config_in_cluster(&cfg, &o, &err), -1);
	assert_true(aj_test_errors_contain(&err, "KUBERNETES_SERVICE_PORT=https: not a port number"));
	aj_errors_release(&err);
	free(sa);
	free(ca);
	free(tok);
}

static void in_cluster_missing_files(void **state)
{
	struct aj_kube_config cfg;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_config_opts o = { 0 };
	char *sa = full("sa");
	char p[512];

	(void)state;
	make_serviceaccount(NULL);
	o.service_host = "10.96.0.1";
	o.service_port = "443";
	o.serviceaccount_dir = sa;
	/* No namespace file: "default". */
	assert_int_equal(aj_kube_config_in_cluster(&cfg, &o, &err), 0);
	assert_string_equal(cfg.namespace, "default");
	aj_kube_config_release(&cfg);
	snprintf(p, sizeof(p), "%s/sa/token", dir);
	assert_int_equal(unlink(p), 0);
	assert_int_equal(aj_kube_config_in_cluster(&cfg, &o, &err), -1);
	assert_true(aj_test_errors_contain(&err, "/sa/token: cannot open: No such file or directory"));
	aj_errors_release(&err);
	o.service_host = NULL;
	assert_int_equal(aj_kube_config_in_cluster(&cfg, &o, &err), -1);
	assert_true(aj_test_errors_contain(&err, "needs KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT"));
	aj_errors_release(&err);
	free(sa);
}

static void load_survives_allocation_failures(void **state)
{
	struct aj_kube_config_opts o = { 0 };
	char *path;
	long n;

	(void)state;
	put("config", inline_config);
	path = full("config");
	o.kubeconfig = path;
	for (n = 0;; n++) {
		struct aj_kube_config cfg;
		struct aj_errors err = AJ_ERRORS_INIT;
		int ret;

		aj_alloc_fail_after(n);
		ret = load(&cfg, &o, &err);
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
	free(path);
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
