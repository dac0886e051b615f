/*
 * kubeconfig.h - where the API server is and how to authenticate to it.
 *
 * Two sources give a struct aj_kube_config:
 *  - kubeconfig files: one explicit file (--kubeconfig), else the
 *    ':'-separated KUBECONFIG list, else ~/.kube/config. Lists merge as
 *    kubectl merges them: for clusters, users and contexts the first file
 *    that defines a name wins; current-context comes from the first file
 *    that sets it; files of the list that do not exist are skipped.
 *    --context and --namespace override the selection; the namespace
 *    falls back to "default". Relative file names are relative to the
 *    kubeconfig that holds them.
 *  - in-cluster: KUBERNETES_SERVICE_HOST/PORT and the service account
 *    directory (token, ca.crt, namespace).
 *
 * The server certificate is verified unless a cluster sets
 * insecure-skip-tls-verify and the caller allows it (the CLI does, as
 * kubectl does, and warns; the controller never does, and in-cluster
 * configuration has no such setting). Credentials this client cannot honour
 * (exec plugins, auth providers, basic auth) are refused rather than
 * silently connecting without them. Errors name file:line and key path.
 *
 * Ownership: the config owns every string and blob; aj_kube_config_release()
 * frees them and wipes the token and the private key first.
 */
#ifndef AJ_KUBE_KUBECONFIG_H
#define AJ_KUBE_KUBECONFIG_H

#include <stddef.h>

struct aj_buf;
struct aj_errors;

/* PEM bytes held in memory (inline *-data fields). */
struct aj_kube_blob {
	unsigned char *data;
	size_t len;
};

struct aj_kube_config {
	char *server;        /* "https://host:port", no trailing '/' */
	char *namespace;     /* never NULL after a successful load */
	char *context;       /* selected context; NULL in-cluster */
	char *origin;        /* for messages: the kubeconfig file or "in-cluster" */
	/* Each of CA, certificate and key is a file or a blob, never both. */
	char *ca_file;
	struct aj_kube_blob ca;
	char *cert_file;
	struct aj_kube_blob cert;
	char *key_file;
	struct aj_kube_blob key;
	char *token;         /* secret; NULL when none */
	char *token_file;    /* re-read by the client when it changes */
	int insecure;        /* insecure-skip-tls-verify: the server is not verified */
};

struct aj_kube_config_opts {
	const char *kubeconfig;      /* --kubeconfig: must exist */
	const char *kubeconfig_env;  /* value of KUBECONFIG, or NULL */
	const char *home;            /* for ~/.kube/config; NULL skips it */
	const char *context;         /* --context, or NULL */
	const char *namespace;       /* --namespace, or NULL */
	/* In-cluster fallback (used only when no kubeconfig file exists). */
	const char *service_host;    /* KUBERNETES_SERVICE_HOST, or NULL */
	const char *service_port;    /* KUBERNETES_SERVICE_PORT, or NULL */
	const char *serviceaccount_dir; /* NULL: the standard directory */
	/* Honour a cluster's insecure-skip-tls-verify (0: refuse it). */
	int allow_insecure;
};

#define AJ_KUBE_SERVICEACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"
#define AJ_KUBE_MAX_FILE (4u * 1024u * 1024u)

void aj_kube_config_init(struct aj_kube_config *cfg);
void aj_kube_config_release(struct aj_kube_config *cfg);

/* Fill the environment-derived fields of o from getenv (others untouched). */
void aj_kube_config_opts_from_env(struct aj_kube_config_opts *o);

/*
 * Load following the order above: kubeconfig files, then in-cluster when
 * no kubeconfig exists and service_host is set. 0 / -1 (errors in err).
 */
int aj_kube_config_load(struct aj_kube_config *cfg,
			const struct aj_kube_config_opts *o, struct aj_errors *err);

/* In-cluster only; o->service_host and o->service_port are required. */
int aj_kube_config_in_cluster(struct aj_kube_config *cfg,
			      const struct aj_kube_config_opts *o,
			      struct aj_errors *err);

/*
 * Read a whole file (at most max bytes) into out. Errors name the file and
 * the system error. 0 / -1.
 */
int aj_kube_read_file(const char *path, size_t max, struct aj_buf *out,
		      struct aj_errors *err);

/*
 * Read a bearer token file: trailing whitespace trimmed, must not be empty.
 * *out is the caller's (wipe and aj_free it). 0 / -1.
 */
int aj_kube_read_token(const char *path, char **out, struct aj_errors *err);

#endif
