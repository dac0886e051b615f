/*
 * client.h - a small Kubernetes REST client (libcurl + cJSON).
 *
 * Covers what the CLI and the controller need: get, list (selectors,
 * pagination, resourceVersion), create, update (PUT), merge and JSON patch,
 * delete (propagation policy, preconditions) and the /status subresource,
 * for core ("api/v1") and group ("apis/GROUP/VERSION") resources,
 * namespaced or cluster-scoped. Objects stay cJSON; nothing is typed here.
 *
 * One struct aj_kube holds one reused curl easy handle (connection reuse,
 * one TLS handshake for many requests). It is NOT thread-safe: use one
 * client per thread. The server certificate is verified (unless the
 * configuration has insecure-skip-tls-verify, which only the CLI allows); inline CA,
 * certificate and key data are handed to curl as memory blobs, so no key
 * is ever written to a temporary file. The bearer token is re-read from its
 * file (in-cluster, tokenFile) when the file changes, checked at most every
 * AJ_KUBE_TOKEN_RECHECK seconds and at once after a 401. Requests are paced
 * by a token bucket (ratelimit.h). Debug output never shows the token.
 *
 * Every request fails with -1 and one entry in err naming the operation;
 * when st is not NULL (it must have been initialised with
 * aj_kube_status_init) it receives the decoded Status (status.h), so callers
 * branch on st->reason (AlreadyExists vs Conflict, NotFound, Expired...).
 * On success st->code holds the HTTP code and st->reason is AJ_KUBE_OK.
 *
 * Ownership: objects returned through `out` are the caller's (cJSON_Delete).
 * Objects passed in are only read.
 */
#ifndef AJ_KUBE_CLIENT_H
#define AJ_KUBE_CLIENT_H

#include <stdio.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "kube/kubeconfig.h"
#include "kube/ratelimit.h"
#include "kube/status.h"

struct aj_errors;

/* A resource type: group "" is the core group (api/v1). */
struct aj_kube_resource {
	const char *group;
	const char *version;
	const char *plural;
	int namespaced;
};

extern const struct aj_kube_resource aj_kube_namespaces;
extern const struct aj_kube_resource aj_kube_configmaps;
extern const struct aj_kube_resource aj_kube_crds;

/* Optional list/watch query parameters; NULL / 0 = not sent. */
struct aj_kube_list_opts {
	const char *label_selector;
	const char *field_selector;
	const char *resource_version;
	const char *resource_version_match;  /* "NotOlderThan", "Exact" */
	const char *continue_token;
	long limit;                          /* page size */
	long timeout_seconds;
};

enum aj_kube_patch_type {
	AJ_KUBE_MERGE_PATCH,   /* application/merge-patch+json */
	AJ_KUBE_JSON_PATCH     /* application/json-patch+json */
};

enum aj_kube_propagation {
	AJ_KUBE_PROPAGATION_DEFAULT = 0,   /* not sent: the resource's default */
	AJ_KUBE_PROPAGATION_ORPHAN,
	AJ_KUBE_PROPAGATION_BACKGROUND,
	AJ_KUBE_PROPAGATION_FOREGROUND
};

struct aj_kube_delete_opts {
	enum aj_kube_propagation propagation;
	const char *precondition_uid;
	const char *precondition_resource_version;
};

/* Which object a request is about. name NULL = the collection. */
struct aj_kube_ref {
	const struct aj_kube_resource *res;
	const char *ns;            /* NULL/"" for cluster-scoped */
	const char *name;
	const char *subresource;   /* "status", or NULL */
};

#define AJ_KUBE_TOKEN_RECHECK 60.0
#define AJ_KUBE_MAX_BODY (256u * 1024u * 1024u)

struct aj_kube {
	struct aj_kube_config cfg;
	void *curl;                 /* CURL *, reused */
	struct aj_ratelimit rl;
	struct aj_buf body;         /* response of the current request */
	char *retry_after;          /* Retry-After header of the response */
	char errbuf[256];           /* CURLOPT_ERRORBUFFER */
	double token_checked;       /* clock time of the last token file stat */
	struct timespec token_mtime;
	long long token_size;
	long timeout;               /* seconds for one REST request; 0 = none */
	FILE *debug;                /* request trace, token redacted; NULL = off */
	/*
	 * Told of every REST exchange as it ends (metrics): the method and the
	 * HTTP code, 0 when no answer came. NULL = nobody is told.
	 */
	void (*observe)(void *ctx, const char *method, long code);
	void *observe_ctx;
};

/* Global init of libcurl: call once before any thread starts. */
int aj_kube_global_init(struct aj_errors *err);

/*
 * Build a client from cfg, which it takes over (cfg is left empty, also on
 * failure). Rate defaults to AJ_KUBE_DEFAULT_QPS / _BURST.
 */
int aj_kube_init(struct aj_kube *k, struct aj_kube_config *cfg,
		 struct aj_errors *err);
void aj_kube_release(struct aj_kube *k);

/* qps <= 0 disables client-side limiting (rely on API priority and fairness). */
void aj_kube_set_rate(struct aj_kube *k, double qps, int burst);

int aj_kube_get(struct aj_kube *k, const struct aj_kube_ref *ref, cJSON **out,
		struct aj_kube_status *st, struct aj_errors *err);
/* One page; the caller follows metadata.continue (or use aj_kube_list_all). */
int aj_kube_list(struct aj_kube *k, const struct aj_kube_ref *ref,
		 const struct aj_kube_list_opts *o, cJSON **out,
		 struct aj_kube_status *st, struct aj_errors *err);
/*
 * Every page, items concatenated into the first page's list object; the
 * list's metadata.resourceVersion is that of the last page (a consistent
 * snapshot, since continue tokens pin the version). o->limit sets the page
 * size (500 when 0).
 */
int aj_kube_list_all(struct aj_kube *k, const struct aj_kube_ref *ref,
		     const struct aj_kube_list_opts *o, cJSON **out,
		     struct aj_kube_status *st, struct aj_errors *err);
int aj_kube_create(struct aj_kube *k, const struct aj_kube_ref *ref,
		   const cJSON *obj, cJSON **out, struct aj_kube_status *st,
		   struct aj_errors *err);
/* PUT; obj carries metadata.resourceVersion for optimistic concurrency. */
int aj_kube_update(struct aj_kube *k, const struct aj_kube_ref *ref,
		   const cJSON *obj, cJSON **out, struct aj_kube_status *st,
		   struct aj_errors *err);
int aj_kube_patch(struct aj_kube *k, const struct aj_kube_ref *ref,
		  enum aj_kube_patch_type type, const cJSON *patch, cJSON **out,
		  struct aj_kube_status *st, struct aj_errors *err);
int aj_kube_delete(struct aj_kube *k, const struct aj_kube_ref *ref,
		   const struct aj_kube_delete_opts *o, cJSON **out,
		   struct aj_kube_status *st, struct aj_errors *err);

/* --- URL building (exposed for tests and for watch.c) --- */

/*
 * Append the path of ref ("/api/v1/namespaces/NS/configmaps/NAME/status")
 * to out, each segment percent-encoded. 0 / -1.
 */
int aj_kube_path(struct aj_buf *out, const struct aj_kube_ref *ref);
/* Append "?key=value" or "&key=value" (value percent-encoded). 0 / -1. */
int aj_kube_query(struct aj_buf *out, const char *key, const char *value);
/* Append the list options as query parameters. 0 / -1. */
int aj_kube_list_query(struct aj_buf *out, const struct aj_kube_list_opts *o);
/* Percent-encode everything but RFC 3986 unreserved characters. 0 / -1. */
int aj_kube_escape(struct aj_buf *out, const char *s);

/* "get configmaps/foo in namespace bar", for messages. */
void aj_kube_describe(struct aj_buf *b, const char *verb,
		      const struct aj_kube_ref *ref);

/*
 * Write one header line for debug output to out, replacing the credential
 * of an Authorization header with "<redacted>". 0 / -1.
 */
int aj_kube_redact_header(struct aj_buf *out, const char *line, size_t len);

/*
 * Token to use now: re-reads the token file when due (or when force is
 * set, after a 401). Sets *changed when the token differs from before.
 * Exposed for the watch, which builds its own requests. 0 / -1.
 */
int aj_kube_token_refresh(struct aj_kube *k, int force, int *changed,
			  struct aj_errors *err);

/*
 * Configure a curl easy handle for this server: CA, client certificate,
 * TLS verification, keepalive, headers (including the current bearer
 * token). Shared by REST requests and watches. *headers is the caller's
 * (curl_slist_free_all). 0 / -1.
 */
struct curl_slist;
int aj_kube_setup_handle(struct aj_kube *k, void *curl,
			 struct curl_slist **headers, const char *content_type,
			 struct aj_errors *err);

#endif
