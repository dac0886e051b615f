#include "kubeconfig.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/base64.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/node.h"
#include "core/strlist.h"
#include "core/yaml.h"

void aj_kube_config_init(struct aj_kube_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
}

static void blob_release(struct aj_kube_blob *b, int secret)
{
	if (b->data && secret)
		explicit_bzero(b->data, b->len);
	aj_free(b->data);
	b->data = NULL;
	b->len = 0;
}

void aj_kube_config_release(struct aj_kube_config *cfg)
{
	if (cfg->token)
		explicit_bzero(cfg->token, strlen(cfg->token));
	aj_free(cfg->token);
	aj_free(cfg->token_file);
	aj_free(cfg->server);
	aj_free(cfg->namespace);
	aj_free(cfg->context);
	aj_free(cfg->origin);
	aj_free(cfg->ca_file);
	aj_free(cfg->cert_file);
	aj_free(cfg->key_file);
	blob_release(&cfg->ca, 0);
	blob_release(&cfg->cert, 0);
	blob_release(&cfg->key, 1);
	aj_kube_config_init(cfg);
}

void aj_kube_config_opts_from_env(struct aj_kube_config_opts *o)
{
	o->kubeconfig_env = getenv("KUBECONFIG");
	o->home = getenv("HOME");
	o->service_host = getenv("KUBERNETES_SERVICE_HOST");
	o->service_port = getenv("KUBERNETES_SERVICE_PORT");
}

int aj_kube_read_file(const char *path, size_t max, struct aj_buf *out,
		      struct aj_errors *err)
{
	char chunk[8192];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return aj_errors_add(err, NULL, "%s: cannot open: %s", path,
				     strerror(errno));
	aj_buf_init(out, max);
	for (;;) {
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if (aj_buf_add(out, chunk, (size_t)n)) {
			close(fd);
			explicit_bzero(chunk, sizeof(chunk));
			return aj_errors_add(err, NULL,
					     "%s: larger than %zu bytes or out of memory",
					     path, max);
		}
	}
	explicit_bzero(chunk, sizeof(chunk));
	if (n < 0) {
		int e = errno;

		close(fd);
		aj_buf_release(out);
		return aj_errors_add(err, NULL, "%s: cannot read: %s", path,
				     strerror(e));
	}
	close(fd);
	return 0;
}

/* Inline PEM: *-data is base64. 0, -1 when malformed, -2 out of memory. */
static int decode_blob(const char *data, struct aj_kube_blob *blob)
{
	size_t len = strlen(data), max = AJ_BASE64_DECODED_MAX(len);

	blob->len = 0;
	blob->data = aj_malloc(max);
	if (!blob->data)
		return -2;
	if (!aj_base64_decode(data, len, blob->data, &blob->len))
		return 0;
	explicit_bzero(blob->data, max);
	aj_free(blob->data);
	blob->data = NULL;
	return -1;
}

/* --- kubeconfig files --- */

struct kc_file {
	char *path;
	char *dir;               /* for relative file names */
	struct aj_node *root;    /* NULL for an empty file */
};

struct kc {
	struct kc_file *files;
	size_t nr, alloc;
	struct aj_errors *err;
};

/* One named entry of clusters/users/contexts, found in some file. */
struct kc_entry {
	const struct kc_file *file;
	const struct aj_node *body;   /* the "cluster"/"user"/"context" map */
	const struct aj_node *item;   /* the list item (for positions) */
	char path[64];                /* "clusters[2].cluster" */
};

static void kc_release(struct kc *kc)
{
	size_t i;

	for (i = 0; i < kc->nr; i++) {
		aj_free(kc->files[i].path);
		aj_free(kc->files[i].dir);
		aj_node_free(kc->files[i].root);
	}
	aj_free(kc->files);
}

static int expect_type(struct aj_errors *err, const struct aj_node *n,
		       const char *path, enum aj_node_type t)
{
	struct aj_where w;

	if (n->type == t)
		return 0;
	aj_node_where(n, path, &w);
	return aj_errors_add(err, &w, "expected %s, got %s", aj_node_type_name(t),
			     aj_node_type_name(n->type));
}

/* Optional string field; *out NULL when absent or null. */
static int get_str(struct aj_errors *err, const struct aj_node *map,
		   const char *prefix, const char *key, const char **out)
{
	const struct aj_node *v = aj_node_get(map, key);
	char path[128];

	*out = NULL;
	if (!v || v->type == AJ_NODE_NULL)
		return 0;
	snprintf(path, sizeof(path), "%s.%s", prefix, key);
	if (expect_type(err, v, path, AJ_NODE_STRING))
		return -1;
	*out = v->str;
	return 0;
}

/* Check one list (clusters, users, contexts): items with unique names. */
static int check_list(struct kc *kc, const struct aj_node *root,
		      const char *list, const char *inner)
{
	const struct aj_node *seq = aj_node_get(root, list);
	size_t i, j;
	char path[64];

	if (!seq || seq->type == AJ_NODE_NULL)
		return 0;
	if (expect_type(kc->err, seq, list, AJ_NODE_SEQ))
		return -1;
	for (i = 0; i < seq->nr; i++) {
		const struct aj_node *it = seq->items[i];
		const struct aj_node *name, *body;

		snprintf(path, sizeof(path), "%s[%zu]", list, i);
		if (expect_type(kc->err, it, path, AJ_NODE_MAP))
			return -1;
		name = aj_node_get(it, "name");
		snprintf(path, sizeof(path), "%s[%zu].name", list, i);
		if (!name)
			return aj_node_error(kc->err, it, path, "required");
		if (expect_type(kc->err, name, path, AJ_NODE_STRING))
			return -1;
		body = aj_node_get(it, inner);
		snprintf(path, sizeof(path), "%s[%zu].%s", list, i, inner);
		if (body && body->type != AJ_NODE_NULL &&
		    expect_type(kc->err, body, path, AJ_NODE_MAP))
			return -1;
		for (j = 0; j < i; j++) {
			const struct aj_node *other = aj_node_get(seq->items[j], "name");

			if (!strcmp(other->str, name->str)) {
				snprintf(path, sizeof(path), "%s[%zu].name", list, i);
				return aj_node_error(kc->err, name, path,
					       "duplicate name \"%s\"", name->str);
			}
		}
	}
	return 0;
}

static int kc_add_file(struct kc *kc, const char *path)
{
	struct aj_buf data;
	struct kc_file *f;
	const char *slash;

	if (AJ_GROW(kc->files, kc->nr + 1, kc->alloc))
		return aj_errors_oom(kc->err);
	f = &kc->files[kc->nr];
	memset(f, 0, sizeof(*f));
	if (aj_kube_read_file(path, AJ_KUBE_MAX_FILE, &data, kc->err))
		return -1;
	kc->nr++;
	f->path = aj_strdup(path);
	slash = strrchr(path, '/');
	f->dir = slash ? aj_strndup(path, (size_t)(slash - path + (slash == path)))
		       : aj_strdup(".");
	if (!f->path || !f->dir) {
		aj_buf_release(&data);
		return aj_errors_oom(kc->err);
	}
	if (aj_yaml_load(aj_buf_cstr(&data), data.len, path, &f->root, kc->err)) {
		aj_buf_release(&data);
		return -1;
	}
	/* Inline keys live in this text: do not leave them in freed memory. */
	if (data.buf)
		explicit_bzero(data.buf, data.len);
	aj_buf_release(&data);
	if (!f->root)
		return 0;
	if (expect_type(kc->err, f->root, "", AJ_NODE_MAP) ||
	    check_list(kc, f->root, "clusters", "cluster") ||
	    check_list(kc, f->root, "users", "user") ||
	    check_list(kc, f->root, "contexts", "context"))
		return -1;
	return 0;
}

/* First file (in order) whose list holds `name`; 1 found, 0 not. */
static int kc_find(const struct kc *kc, const char *list, const char *inner,
		   const char *name, struct kc_entry *out)
{
	size_t i, j;

	for (i = 0; i < kc->nr; i++) {
		const struct aj_node *seq = kc->files[i].root
			? aj_node_get(kc->files[i].root, list) : NULL;

		if (!seq || seq->type != AJ_NODE_SEQ)
			continue;
		for (j = 0; j < seq->nr; j++) {
			const struct aj_node *it = seq->items[j];

			if (strcmp(aj_node_get(it, "name")->str, name))
				continue;
			out->file = &kc->files[i];
			out->item = it;
			out->body = aj_node_get(it, inner);
			if (out->body && out->body->type != AJ_NODE_MAP)
				out->body = NULL;
			snprintf(out->path, sizeof(out->path), "%s[%zu].%s", list,
				 j, inner);
			return 1;
		}
	}
	return 0;
}

/* The file list as "a, b" for "not found in ..." messages. */
static void kc_files_text(const struct kc *kc, struct aj_buf *out)
{
	size_t i;

	for (i = 0; i < kc->nr; i++)
		aj_buf_addf(out, "%s%s", i ? ", " : "", kc->files[i].path);
}

/* A file name from the kubeconfig, made absolute relative to its file. */
static char *kc_path(const struct kc_entry *e, const char *name)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	if (name[0] == '/')
		return aj_strdup(name);
	aj_buf_addf(&b, "%s/%s", e->file->dir, name);
	return aj_buf_detach(&b, NULL);
}

/*
 * One credential or CA given as "<key>" (a file) or "<key>-data" (base64
 * PEM). Reads neither; checks the file is readable so a typo fails here and
 * not as an obscure TLS error later.
 */
static int kc_file_or_data(struct kc *kc, const struct kc_entry *e,
			   const char *key, char **file, struct aj_kube_blob *blob)
{
	char datakey[64], path[160];
	const char *fname, *data;
	int rc;

	snprintf(datakey, sizeof(datakey), "%s-data", key);
	if (get_str(kc->err, e->body, e->path, key, &fname) ||
	    get_str(kc->err, e->body, e->path, datakey, &data))
		return -1;
	if (fname && data) {
		snprintf(path, sizeof(path), "%s.%s", e->path, key);
		return aj_node_error(kc->err, aj_node_get(e->body, key), path,
			       "set either %s or its -data form, not both", key);
	}
	if (data) {
		const struct aj_node *n = aj_node_get(e->body, datakey);

		snprintf(path, sizeof(path), "%s.%s", e->path, datakey);
		rc = decode_blob(data, blob);
		if (rc)
			return rc == -1 ? aj_node_error(kc->err, n, path, "not valid base64")
					: aj_errors_oom(kc->err);
		if (!blob->len)
			return aj_node_error(kc->err, n, path, "empty");
		return 0;
	}
	if (!fname)
		return 0;
	*file = kc_path(e, fname);
	if (!*file)
		return aj_errors_oom(kc->err);
	if (access(*file, R_OK)) {
		snprintf(path, sizeof(path), "%s.%s", e->path, key);
		return aj_node_error(kc->err, aj_node_get(e->body, key), path,
			       "cannot read %s: %s", *file, strerror(errno));
	}
	return 0;
}

static int kc_cluster(struct kc *kc, const struct kc_entry *e,
		      const struct aj_kube_config_opts *o, struct aj_kube_config *cfg)
{
	const struct aj_node *insecure = aj_node_get(e->body, "insecure-skip-tls-verify");
	const char *server;
	char path[128];
	size_t len;

	snprintf(path, sizeof(path), "%s.insecure-skip-tls-verify", e->path);
	if (insecure && insecure->type != AJ_NODE_NULL) {
		if (expect_type(kc->err, insecure, path, AJ_NODE_BOOL))
			return -1;
		cfg->insecure = insecure->v.boolean;
	}
	if (cfg->insecure && !o->allow_insecure)
		return aj_node_error(kc->err, insecure, path,
			       "refused: the controller never turns TLS verification "
			       "off; give the cluster's CA with certificate-authority "
			       "or certificate-authority-data");
	if (get_str(kc->err, e->body, e->path, "server", &server))
		return -1;
	snprintf(path, sizeof(path), "%s.server", e->path);
	if (!server || !*server)
		return aj_node_error(kc->err, e->body, path, "required");
	if (strncmp(server, "https://", 8) || !server[8])
		return aj_node_error(kc->err, aj_node_get(e->body, "server"), path,
			       "\"%s\": only https:// servers are supported "
			       "(credentials never travel unencrypted)", server);
	len = strlen(server);
	while (len > 8 && server[len - 1] == '/')
		len--;
	cfg->server = aj_strndup(server, len);
	if (!cfg->server)
		return aj_errors_oom(kc->err);
	if (kc_file_or_data(kc, e, "certificate-authority", &cfg->ca_file, &cfg->ca))
		return -1;
	/* As client-go: a CA says "verify with this", which contradicts the flag. */
	snprintf(path, sizeof(path), "%s.insecure-skip-tls-verify", e->path);
	if (cfg->insecure && (cfg->ca_file || cfg->ca.data))
		return aj_node_error(kc->err, insecure, path,
			       "set either insecure-skip-tls-verify or a "
			       "certificate-authority, not both");
	return 0;
}

int aj_kube_read_token(const char *file, char **out, struct aj_errors *err)
{
	struct aj_buf b;
	size_t len;

	if (aj_kube_read_file(file, 64u * 1024u, &b, err))
		return -1;
	len = b.len;
	while (len && (b.buf[len - 1] == '\n' || b.buf[len - 1] == '\r' ||
		       b.buf[len - 1] == ' ' || b.buf[len - 1] == '\t'))
		len--;
	if (!len) {
		aj_buf_release(&b);
		return aj_errors_add(err, NULL, "%s: the token file is empty", file);
	}
	*out = aj_strndup(b.buf, len);
	explicit_bzero(b.buf, b.len);
	aj_buf_release(&b);
	return *out ? 0 : aj_errors_oom(err);
}

static int kc_user(struct kc *kc, const struct kc_entry *e,
		   struct aj_kube_config *cfg)
{
	static const char *const unsupported[][2] = {
		{ "exec", "exec credential plugins are not supported; use a token, tokenFile or a client certificate" },
		{ "auth-provider", "auth providers are not supported; use a token, tokenFile or a client certificate" },
		{ "username", "basic authentication is not supported" },
		{ "password", "basic authentication is not supported" },
	};
	const char *token, *token_file;
	char path[128];
	size_t i;

	for (i = 0; i < sizeof(unsupported) / sizeof(unsupported[0]); i++) {
		const struct aj_node *n = aj_node_get(e->body, unsupported[i][0]);

		snprintf(path, sizeof(path), "%s.%s", e->path, unsupported[i][0]);
		if (n && n->type != AJ_NODE_NULL)
			return aj_node_error(kc->err, n, path, "%s", unsupported[i][1]);
	}
	if (kc_file_or_data(kc, e, "client-certificate", &cfg->cert_file, &cfg->cert) ||
	    kc_file_or_data(kc, e, "client-key", &cfg->key_file, &cfg->key) ||
	    get_str(kc->err, e->body, e->path, "token", &token) ||
	    get_str(kc->err, e->body, e->path, "tokenFile", &token_file))
		return -1;
	if ((cfg->cert_file || cfg->cert.data) != (cfg->key_file || cfg->key.data)) {
		snprintf(path, sizeof(path), "%s.%s", e->path,
			 cfg->key_file || cfg->key.data ? "client-certificate"
							 : "client-key");
		return aj_node_error(kc->err, e->body, path,
			       "required: a client certificate needs its key "
			       "and the key its certificate");
	}
	/* Like client-go: the file wins and is re-read; token is its first value. */
	if (token_file) {
		cfg->token_file = kc_path(e, token_file);
		if (!cfg->token_file)
			return aj_errors_oom(kc->err);
		return aj_kube_read_token(cfg->token_file, &cfg->token, kc->err);
	}
	if (token && *token) {
		cfg->token = aj_strdup(token);
		if (!cfg->token)
			return aj_errors_oom(kc->err);
	}
	return 0;
}

static int kc_resolve(struct kc *kc, const struct aj_kube_config_opts *o,
		      struct aj_kube_config *cfg)
{
	const struct aj_node *cur = NULL, *n;
	const char *ctx_name = o->context, *cluster, *user, *ns;
	struct kc_entry ctx, cl, us;
	struct aj_buf files = AJ_BUF_INIT(AJ_BUF_SMALL);
	char path[128];
	size_t i;
	int ret = -1;

	for (i = 0; i < kc->nr && !cur; i++) {
		n = kc->files[i].root ? aj_node_get(kc->files[i].root, "current-context") : NULL;
		if (!n || n->type == AJ_NODE_NULL)
			continue;
		if (expect_type(kc->err, n, "current-context", AJ_NODE_STRING))
			return -1;
		if (*n->str)
			cur = n;
	}
	kc_files_text(kc, &files);
	if (!ctx_name && !cur) {
		aj_errors_add(kc->err, NULL,
			      "%s: no current-context is set; choose one with --context",
			      aj_buf_cstr(&files));
		goto out;
	}
	if (!ctx_name)
		ctx_name = cur->str;
	if (!kc_find(kc, "contexts", "context", ctx_name, &ctx)) {
		if (o->context)
			aj_errors_add(kc->err, NULL, "context \"%s\" (from --context) "
				      "not found in %s", ctx_name, aj_buf_cstr(&files));
		else
			aj_node_error(kc->err, cur, "current-context",
				"context \"%s\" not found", ctx_name);
		goto out;
	}
	if (!ctx.body) {
		aj_node_error(kc->err, ctx.item, ctx.path, "required");
		goto out;
	}
	if (get_str(kc->err, ctx.body, ctx.path, "cluster", &cluster) ||
	    get_str(kc->err, ctx.body, ctx.path, "user", &user) ||
	    get_str(kc->err, ctx.body, ctx.path, "namespace", &ns))
		goto out;
	snprintf(path, sizeof(path), "%s.cluster", ctx.path);
	if (!cluster || !*cluster) {
		aj_node_error(kc->err, ctx.body, path, "required");
		goto out;
	}
	if (!kc_find(kc, "clusters", "cluster", cluster, &cl)) {
		aj_node_error(kc->err, aj_node_get(ctx.body, "cluster"), path,
			"cluster \"%s\" not found", cluster);
		goto out;
	}
	if (!cl.body) {
		aj_node_error(kc->err, cl.item, cl.path, "required");
		goto out;
	}
	if (kc_cluster(kc, &cl, o, cfg))
		goto out;
	if (user && *user) {
		snprintf(path, sizeof(path), "%s.user", ctx.path);
		if (!kc_find(kc, "users", "user", user, &us)) {
			aj_node_error(kc->err, aj_node_get(ctx.body, "user"), path,
				"user \"%s\" not found", user);
			goto out;
		}
		if (us.body && kc_user(kc, &us, cfg))
			goto out;
	}
	if (o->namespace && *o->namespace)
		ns = o->namespace;
	cfg->namespace = aj_strdup(ns && *ns ? ns : "default");
	cfg->context = aj_strdup(ctx_name);
	cfg->origin = aj_strdup(ctx.file->path);
	if (!cfg->namespace || !cfg->context || !cfg->origin) {
		aj_errors_oom(kc->err);
		goto out;
	}
	ret = 0;
out:
	aj_buf_release(&files);
	return ret;
}

static int file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 || errno != ENOENT;
}

/* The kubeconfig files to read, in precedence order. */
static int kc_list_files(const struct aj_kube_config_opts *o,
			 struct aj_strlist *out, struct aj_errors *err)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *p, *end;

	if (o->kubeconfig) {
		if (!file_exists(o->kubeconfig))
			return aj_errors_add(err, NULL, "%s (from --kubeconfig): "
					     "no such file", o->kubeconfig);
		return aj_strlist_add(out, o->kubeconfig) ? aj_errors_oom(err) : 0;
	}
	if (o->kubeconfig_env && *o->kubeconfig_env) {
		for (p = o->kubeconfig_env; *p; p = *end ? end + 1 : end) {
			char *one;

			end = strchr(p, ':');
			if (!end)
				end = p + strlen(p);
			if (end == p)
				continue;
			one = aj_strndup(p, (size_t)(end - p));
			if (!one)
				return aj_errors_oom(err);
			if (!file_exists(one) || aj_strlist_find(out, one) >= 0) {
				aj_free(one);
				continue;
			}
			if (aj_strlist_add_owned(out, one))
				return aj_errors_oom(err);
		}
		return 0;
	}
	if (o->home && *o->home) {
		if (aj_buf_addf(&b, "%s/.kube/config", o->home))
			return aj_errors_oom(err);
		if (file_exists(aj_buf_cstr(&b)) &&
		    aj_strlist_add(out, aj_buf_cstr(&b))) {
			aj_buf_release(&b);
			return aj_errors_oom(err);
		}
		aj_buf_release(&b);
	}
	return 0;
}

int aj_kube_config_load(struct aj_kube_config *cfg,
			const struct aj_kube_config_opts *o, struct aj_errors *err)
{
	struct aj_strlist files = AJ_STRLIST_INIT;
	struct kc kc = { NULL, 0, 0, err };
	size_t i;
	int ret = -1;

	aj_kube_config_init(cfg);
	if (kc_list_files(o, &files, err))
		goto out;
	if (!files.nr) {
		if (o->service_host && *o->service_host) {
			ret = aj_kube_config_in_cluster(cfg, o, err);
			goto out;
		}
		if (o->kubeconfig_env && *o->kubeconfig_env)
			aj_errors_add(err, NULL, "KUBECONFIG=%s: none of these files exists",
				      o->kubeconfig_env);
		else
			aj_errors_add(err, NULL, "no Kubernetes configuration: "
				      "%s/.kube/config does not exist, KUBECONFIG is "
				      "unset and KUBERNETES_SERVICE_HOST is unset "
				      "(not running in a cluster)",
				      o->home ? o->home : "$HOME");
		goto out;
	}
	for (i = 0; i < files.nr; i++)
		if (kc_add_file(&kc, files.items[i]))
			goto out;
	ret = kc_resolve(&kc, o, cfg);
out:
	if (ret)
		aj_kube_config_release(cfg);
	kc_release(&kc);
	aj_strlist_release(&files);
	return ret;
}

int aj_kube_config_in_cluster(struct aj_kube_config *cfg,
			      const struct aj_kube_config_opts *o,
			      struct aj_errors *err)
{
	const char *dir = o->serviceaccount_dir ? o->serviceaccount_dir
						: AJ_KUBE_SERVICEACCOUNT_DIR;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf ns;
	struct aj_errors ns_err = AJ_ERRORS_INIT;
	const char *host = o->service_host, *port = o->service_port;
	size_t len;

	aj_kube_config_init(cfg);
	if (!host || !*host || !port || !*port)
		return aj_errors_add(err, NULL, "in-cluster configuration needs "
				     "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT");
	if (strspn(port, "0123456789") != strlen(port))
		return aj_errors_add(err, NULL, "KUBERNETES_SERVICE_PORT=%s: "
				     "not a port number", port);
	/* An IPv6 address needs brackets in a URL. */
	if (strchr(host, ':'))
		aj_buf_addf(&b, "https://[%s]:%s", host, port);
	else
		aj_buf_addf(&b, "https://%s:%s", host, port);
	cfg->server = aj_buf_detach(&b, NULL);
	aj_buf_addf(&b, "%s/token", dir);
	cfg->token_file = aj_buf_detach(&b, NULL);
	aj_buf_addf(&b, "%s/ca.crt", dir);
	cfg->ca_file = aj_buf_detach(&b, NULL);
	cfg->origin = aj_strdup("in-cluster");
	if (!cfg->server || !cfg->token_file || !cfg->ca_file || !cfg->origin)
		goto oom;
	if (access(cfg->ca_file, R_OK)) {
		aj_errors_add(err, NULL, "%s: cannot read: %s", cfg->ca_file,
			      strerror(errno));
		goto fail;
	}
	if (aj_kube_read_token(cfg->token_file, &cfg->token, err))
		goto fail;
	aj_buf_addf(&b, "%s/namespace", dir);
	if (b.failed)
		goto oom;
	if (!aj_kube_read_file(aj_buf_cstr(&b), 4096, &ns, &ns_err)) {
		len = ns.len;
		while (len && (ns.buf[len - 1] == '\n' || ns.buf[len - 1] == ' '))
			len--;
		if (len)
			cfg->namespace = aj_strndup(ns.buf, len);
		aj_buf_release(&ns);
	}
	aj_errors_release(&ns_err);
	aj_buf_release(&b);
	if (o->namespace && *o->namespace) {
		aj_free(cfg->namespace);
		cfg->namespace = aj_strdup(o->namespace);
	} else if (!cfg->namespace) {
		cfg->namespace = aj_strdup("default");
	}
	if (!cfg->namespace)
		goto oom;
	return 0;
oom:
	aj_errors_oom(err);
fail:
	aj_buf_release(&b);
	aj_kube_config_release(cfg);
	return -1;
}
