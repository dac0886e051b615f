#include "client.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <curl/curl.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"

const struct aj_kube_resource aj_kube_namespaces = { "", "v1", "namespaces", 0 };
const struct aj_kube_resource aj_kube_configmaps = { "", "v1", "configmaps", 1 };
const struct aj_kube_resource aj_kube_crds = {
	"apiextensions.k8s.io", "v1", "customresourcedefinitions", 0
};

/* --- URLs --- */

int aj_kube_escape(struct aj_buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_' ||
		    c == '~')
			aj_buf_addch(out, (char)c);
		else {
			aj_buf_addch(out, '%');
			aj_buf_addch(out, hex[c >> 4]);
			aj_buf_addch(out, hex[c & 15]);
		}
	}
	return out->failed ? -1 : 0;
}

/* A path segment that the server could not take literally. */
static int bad_segment(const char *s)
{
	return !*s || !strcmp(s, ".") || !strcmp(s, "..");
}

int aj_kube_path(struct aj_buf *out, const struct aj_kube_ref *ref)
{
	const struct aj_kube_resource *r = ref->res;

	if (r->group && *r->group) {
		aj_buf_addstr(out, "/apis/");
		aj_kube_escape(out, r->group);
		aj_buf_addch(out, '/');
	} else {
		aj_buf_addstr(out, "/api/");
	}
	aj_kube_escape(out, r->version);
	if (r->namespaced && ref->ns && *ref->ns) {
		aj_buf_addstr(out, "/namespaces/");
		aj_kube_escape(out, ref->ns);
	}
	aj_buf_addch(out, '/');
	aj_kube_escape(out, r->plural);
	if (ref->name) {
		aj_buf_addch(out, '/');
		aj_kube_escape(out, ref->name);
		if (ref->subresource) {
			aj_buf_addch(out, '/');
			aj_kube_escape(out, ref->subresource);
		}
	}
	return out->failed ? -1 : 0;
}

int aj_kube_query(struct aj_buf *out, const char *key, const char *value)
{
	aj_buf_addch(out, strchr(aj_buf_cstr(out), '?') ? '&' : '?');
	aj_kube_escape(out, key);
	aj_buf_addch(out, '=');
	aj_kube_escape(out, value);
	return out->failed ? -1 : 0;
}

int aj_kube_list_query(struct aj_buf *out, const struct aj_kube_list_opts *o)
{
	char num[32];

	if (!o)
		return 0;
	if (o->label_selector && *o->label_selector)
		aj_kube_query(out, "labelSelector", o->label_selector);
	if (o->field_selector && *o->field_selector)
		aj_kube_query(out, "fieldSelector", o->field_selector);
	if (o->limit > 0) {
		snprintf(num, sizeof(num), "%ld", o->limit);
		aj_kube_query(out, "limit", num);
	}
	if (o->continue_token && *o->continue_token)
		aj_kube_query(out, "continue", o->continue_token);
	if (o->resource_version)
		aj_kube_query(out, "resourceVersion", o->resource_version);
	if (o->resource_version_match && *o->resource_version_match)
		aj_kube_query(out, "resourceVersionMatch", o->resource_version_match);
	if (o->timeout_seconds > 0) {
		snprintf(num, sizeof(num), "%ld", o->timeout_seconds);
		aj_kube_query(out, "timeoutSeconds", num);
	}
	return out->failed ? -1 : 0;
}

int aj_kube_redact_header(struct aj_buf *out, const char *line, size_t len)
{
	static const char auth[] = "authorization:";
	size_t n = sizeof(auth) - 1;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (len >= n && !strncasecmp(line, auth, n)) {
		/* Keep a scheme word ("Bearer"), drop the credential. */
		size_t i, w;

		i = n;
		while (i < len && line[i] == ' ')
			i++;
		for (w = i; w < len && ((line[w] | 0x20) >= 'a' && (line[w] | 0x20) <= 'z'); w++)
			;
		i = w < len && line[w] == ' ' && w > i ? w : n;
		aj_buf_add(out, line, i);
		aj_buf_addstr(out, " <redacted>");
	} else {
		aj_buf_add(out, line, len);
	}
	return aj_buf_addch(out, '\n');
}

/* --- client --- */

int aj_kube_global_init(struct aj_errors *err)
{
	CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);

	if (rc != CURLE_OK)
		return aj_errors_add(err, NULL, "cannot initialise libcurl: %s",
				     curl_easy_strerror(rc));
	return 0;
}

static void stat_token(struct aj_kube *k)
{
	struct stat sb;

	if (k->cfg.token_file && !stat(k->cfg.token_file, &sb)) {
		k->token_mtime = sb.st_mtim;
		k->token_size = (long long)sb.st_size;
	}
}

int aj_kube_init(struct aj_kube *k, struct aj_kube_config *cfg,
		 struct aj_errors *err)
{
	memset(k, 0, sizeof(*k));
	k->cfg = *cfg;
	aj_kube_config_init(cfg);
	aj_buf_init(&k->body, AJ_KUBE_MAX_BODY);
	aj_ratelimit_init(&k->rl, AJ_KUBE_DEFAULT_QPS, AJ_KUBE_DEFAULT_BURST,
			  NULL, NULL);
	k->timeout = 120;
	k->token_checked = aj_monotonic_now(NULL);
	stat_token(k);
	k->curl = curl_easy_init();
	if (!k->curl) {
		aj_kube_release(k);
		return aj_errors_add(err, NULL, "cannot create a libcurl handle");
	}
	return 0;
}

void aj_kube_release(struct aj_kube *k)
{
	if (k->curl)
		curl_easy_cleanup(k->curl);
	aj_kube_config_release(&k->cfg);
	aj_buf_release(&k->body);
	aj_free(k->retry_after);
	memset(k, 0, sizeof(*k));
}

void aj_kube_set_rate(struct aj_kube *k, double qps, int burst)
{
	aj_ratelimit_init(&k->rl, qps, burst, NULL, NULL);
}

int aj_kube_token_refresh(struct aj_kube *k, int force, int *changed,
			  struct aj_errors *err)
{
	struct timespec old_mtime = k->token_mtime;
	long long old_size = k->token_size;
	double now = aj_monotonic_now(NULL);
	struct aj_errors local = AJ_ERRORS_INIT;
	char *tok;

	*changed = 0;
	if (!k->cfg.token_file ||
	    (!force && now - k->token_checked < AJ_KUBE_TOKEN_RECHECK))
		return 0;
	k->token_checked = now;
	stat_token(k);
	if (!force && old_mtime.tv_sec == k->token_mtime.tv_sec &&
	    old_mtime.tv_nsec == k->token_mtime.tv_nsec &&
	    old_size == k->token_size)
		return 0;
	/* A failed re-read keeps the old token: the file may be mid-rotation. */
	if (aj_kube_read_token(k->cfg.token_file, &tok, &local)) {
		if (k->cfg.token) {
			aj_errors_release(&local);
			return 0;
		}
		aj_errors_splice(err, &local);
		return -1;
	}
	if (k->cfg.token && !strcmp(k->cfg.token, tok)) {
		explicit_bzero(tok, strlen(tok));
		aj_free(tok);
		return 0;
	}
	if (k->cfg.token) {
		explicit_bzero(k->cfg.token, strlen(k->cfg.token));
		aj_free(k->cfg.token);
	}
	k->cfg.token = tok;
	*changed = 1;
	return 0;
}

static int debug_cb(CURL *h, curl_infotype type, char *data, size_t size,
		    void *userp)
{
	FILE *f = userp;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *prefix = type == CURLINFO_HEADER_OUT ? "> " : "< ";
	size_t i = 0, j;

	(void)h;
	if (type != CURLINFO_HEADER_OUT && type != CURLINFO_HEADER_IN)
		return 0;
	while (i < size) {
		for (j = i; j < size && data[j] != '\n'; j++)
			;
		if (j > i + 1 || (j == i + 1 && data[i] != '\r')) {
			aj_buf_addstr(&b, prefix);
			aj_kube_redact_header(&b, data + i, j - i);
		}
		i = j + 1;
	}
	fputs(aj_buf_cstr(&b), f);
	aj_buf_release(&b);
	return 0;
}

/* Add a header holding a secret; the list copy is wiped when freed. */
static struct curl_slist *add_header(struct curl_slist *l, int *failed,
				     const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct curl_slist *add_header(struct curl_slist *l, int *failed,
				     const char *fmt, ...)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct curl_slist *n;
	va_list ap;

	va_start(ap, fmt);
	aj_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (b.failed) {
		*failed = 1;
		return l;
	}
	n = curl_slist_append(l, aj_buf_cstr(&b));
	explicit_bzero(b.buf, b.len);
	aj_buf_release(&b);
	if (!n) {
		*failed = 1;
		return l;
	}
	return n;
}

int aj_kube_setup_handle(struct aj_kube *k, void *curl,
			 struct curl_slist **headers, const char *content_type,
			 struct aj_errors *err)
{
	const struct aj_kube_config *c = &k->cfg;
	struct curl_blob blob;
	int failed = 0;
	CURL *h = curl;

	*headers = NULL;
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "https");
	/* Off only for a kubeconfig's insecure-skip-tls-verify, which the CLI warns of. */
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, c->insecure ? 0L : 1L);
	curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, c->insecure ? 0L : 2L);
	curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "aj");
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 15L);
	/* Memory blobs are not copied: they live as long as the client. */
	blob.flags = CURL_BLOB_NOCOPY;
	if (c->ca_file) {
		curl_easy_setopt(h, CURLOPT_CAINFO, c->ca_file);
	} else if (c->ca.data) {
		blob.data = c->ca.data;
		blob.len = c->ca.len;
		curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &blob);
	}
	if (c->cert_file) {
		curl_easy_setopt(h, CURLOPT_SSLCERT, c->cert_file);
	} else if (c->cert.data) {
		blob.data = c->cert.data;
		blob.len = c->cert.len;
		curl_easy_setopt(h, CURLOPT_SSLCERT_BLOB, &blob);
	}
	curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
	if (c->key_file) {
		curl_easy_setopt(h, CURLOPT_SSLKEY, c->key_file);
	} else if (c->key.data) {
		blob.data = c->key.data;
		blob.len = c->key.len;
		curl_easy_setopt(h, CURLOPT_SSLKEY_BLOB, &blob);
	}
	curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
	if (k->debug) {
		curl_easy_setopt(h, CURLOPT_DEBUGFUNCTION, debug_cb);
		curl_easy_setopt(h, CURLOPT_DEBUGDATA, k->debug);
		curl_easy_setopt(h, CURLOPT_VERBOSE, 1L);
	}
	*headers = add_header(*headers, &failed, "Accept: application/json");
	if (content_type)
		*headers = add_header(*headers, &failed, "Content-Type: %s",
				      content_type);
	if (c->token)
		*headers = add_header(*headers, &failed,
				      "Authorization: Bearer %s", c->token);
	if (failed) {
		curl_slist_free_all(*headers);
		*headers = NULL;
		return aj_errors_oom(err);
	}
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, *headers);
	return 0;
}

/* Free a header list, wiping the bearer token it holds. */
static void free_headers(struct curl_slist *l)
{
	struct curl_slist *p;

	for (p = l; p; p = p->next)
		explicit_bzero(p->data, strlen(p->data));
	curl_slist_free_all(l);
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	struct aj_buf *b = userp;

	if (aj_buf_add(b, data, size * nmemb))
		return 0;   /* too large: abort the transfer */
	return size * nmemb;
}

static size_t header_cb(char *data, size_t size, size_t nmemb, void *userp)
{
	static const char name[] = "retry-after:";
	struct aj_kube *k = userp;
	size_t len = size * nmemb, n = sizeof(name) - 1;

	if (len > n && !strncasecmp(data, name, n)) {
		aj_free(k->retry_after);
		k->retry_after = aj_strndup(data + n, len - n);
	}
	return len;
}

static void pace(struct aj_kube *k)
{
	double d = aj_ratelimit_reserve(&k->rl);
	struct timespec ts;

	if (d <= 0)
		return;
	ts.tv_sec = (time_t)d;
	ts.tv_nsec = (long)((d - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

struct request {
	const char *method;
	const char *what;          /* "get configmaps/foo", for messages */
	const char *path;          /* with query */
	const char *content_type;
	const char *body;          /* NULL: none */
};

/* One HTTP exchange; fills st and k->body. 0 = got an HTTP answer. */
static int perform(struct aj_kube *k, const struct request *rq,
		   struct aj_kube_status *st, struct aj_errors *err)
{
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct curl_slist *headers = NULL;
	CURL *h = k->curl;
	CURLcode rc;
	long code = 0;

	/* Keep a small body buffer between requests, not a large list's. */
	if (k->body.alloc > 256u * 1024u)
		aj_buf_release(&k->body);
	aj_buf_reset(&k->body);
	aj_free(k->retry_after);
	k->retry_after = NULL;
	curl_easy_reset(h);
	if (aj_buf_addf(&url, "%s%s", k->cfg.server, rq->path))
		return aj_errors_oom(err);
	if (aj_kube_setup_handle(k, h, &headers, rq->content_type, err)) {
		aj_buf_release(&url);
		return -1;
	}
	k->errbuf[0] = '\0';
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, k->errbuf);
	curl_easy_setopt(h, CURLOPT_URL, aj_buf_cstr(&url));
	curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, &k->body);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, k);
	if (k->timeout > 0)
		curl_easy_setopt(h, CURLOPT_TIMEOUT, k->timeout);
	if (strcmp(rq->method, "GET") && strcmp(rq->method, "POST"))
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, rq->method);
	if (rq->body) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, (long)strlen(rq->body));
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, rq->body);
	} else if (!strcmp(rq->method, "POST")) {
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE, 0L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, "");
	}
	if (k->debug)
		fprintf(k->debug, "%s %s\n", rq->method, aj_buf_cstr(&url));
	rc = curl_easy_perform(h);
	free_headers(headers);
	if (rc == CURLE_OK)
		curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &code);
	if (k->observe)
		k->observe(k->observe_ctx, rq->method, code);
	if (rc != CURLE_OK) {
		const char *msg = k->errbuf[0] ? k->errbuf : curl_easy_strerror(rc);

		if (rc == CURLE_WRITE_ERROR && k->body.failed)
			msg = "response larger than the client accepts";
		aj_errors_add(err, NULL, "%s: cannot reach the API server at %s: %s",
			      rq->what, k->cfg.server, msg);
		if (aj_kube_status_transport(st, msg))
			aj_errors_oom(err);
		aj_buf_release(&url);
		return -1;
	}
	aj_buf_release(&url);
	if (aj_kube_status_decode(st, code, k->body.buf, k->body.len,
				  k->retry_after))
		return aj_errors_oom(err);
	return 0;
}

static int request(struct aj_kube *k, const struct request *rq, cJSON **out,
		   struct aj_kube_status *user_st, struct aj_errors *err)
{
	struct aj_kube_status local, *st;
	int changed = 0;

	aj_kube_status_init(&local);
	st = user_st ? user_st : &local;
	if (out)
		*out = NULL;
	if (user_st)
		aj_kube_status_release(user_st);
	pace(k);
	if (aj_kube_token_refresh(k, 0, &changed, err) || perform(k, rq, st, err))
		goto fail;
	/* A rotated token: re-read it at once and retry one time. */
	if (st->code == 401 && k->cfg.token_file) {
		if (aj_kube_token_refresh(k, 1, &changed, err))
			goto fail;
		if (changed && perform(k, rq, st, err))
			goto fail;
	}
	if (st->code < 200 || st->code >= 300) {
		aj_kube_status_to_errors(st, rq->what, err);
		goto fail;
	}
	if (out && k->body.len) {
		int trailing;

		/* lenient: one AjJob nested deeper than cJSON goes must not fail a list */
		*out = aj_json_parse_lenient(k->body.buf, k->body.len, &trailing);
		if (*out && trailing) {
			cJSON_Delete(*out);
			*out = NULL;
		}
		if (!*out) {
			aj_errors_add(err, NULL, "%s: the API server answered "
				      "with invalid JSON", rq->what);
			goto fail;
		}
	}
	aj_kube_status_release(&local);
	return 0;
fail:
	aj_kube_status_release(&local);
	return -1;
}

void aj_kube_describe(struct aj_buf *b, const char *verb,
		      const struct aj_kube_ref *ref)
{
	aj_buf_addf(b, "%s %s", verb, ref->res->plural);
	if (ref->res->group && *ref->res->group)
		aj_buf_addf(b, ".%s", ref->res->group);
	if (ref->name)
		aj_buf_addf(b, "/%s", ref->name);
	if (ref->subresource)
		aj_buf_addf(b, "/%s", ref->subresource);
	if (ref->res->namespaced && ref->ns && *ref->ns)
		aj_buf_addf(b, " in namespace %s", ref->ns);
}

static int check_ref(const struct aj_kube_ref *ref, int need_name,
		     const char *what, struct aj_errors *err)
{
	if (need_name && !ref->name)
		return aj_errors_add(err, NULL, "%s: an object name is required", what);
	if ((ref->name && bad_segment(ref->name)) ||
	    (ref->ns && *ref->ns && bad_segment(ref->ns)))
		return aj_errors_add(err, NULL, "%s: names must not be empty, "
				     "\".\" or \"..\"", what);
	if (ref->res->namespaced && need_name && (!ref->ns || !*ref->ns))
		return aj_errors_add(err, NULL, "%s: a namespace is required", what);
	return 0;
}

/* How a request addresses its object. */
enum target {
	TARGET_OBJECT,       /* .../NAME[/SUB]; the name is required */
	TARGET_COLLECTION,   /* .../PLURAL (list, and create: named in messages) */
};

/* Run method on ref with an optional JSON body and extra query. */
static int call(struct aj_kube *k, const char *verb, const char *method,
		const struct aj_kube_ref *ref, enum target target,
		const struct aj_kube_list_opts *lo, const char *content_type,
		const cJSON *body, cJSON **out, struct aj_kube_status *st,
		struct aj_errors *err)
{
	struct aj_buf what = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct request rq = { method, NULL, NULL, content_type, NULL };
	struct aj_kube_ref at = *ref;
	char *text = NULL;
	int ret = -1;

	if (out)
		*out = NULL;
	if (st)
		aj_kube_status_release(st);
	aj_kube_describe(&what, verb, ref);
	if (target == TARGET_COLLECTION) {
		at.name = NULL;
		at.subresource = NULL;
	}
	if (what.failed || aj_kube_path(&path, &at) || aj_kube_list_query(&path, lo)) {
		aj_errors_oom(err);
		goto out;
	}
	rq.what = aj_buf_cstr(&what);
	rq.path = aj_buf_cstr(&path);
	if (check_ref(&at, target == TARGET_OBJECT, rq.what, err))
		goto out;
	if (body) {
		text = cJSON_PrintUnformatted(body);
		if (!text) {
			aj_errors_oom(err);
			goto out;
		}
		rq.body = text;
	}
	ret = request(k, &rq, out, st, err);
out:
	cJSON_free(text);
	aj_buf_release(&what);
	aj_buf_release(&path);
	return ret;
}

int aj_kube_get(struct aj_kube *k, const struct aj_kube_ref *ref, cJSON **out,
		struct aj_kube_status *st, struct aj_errors *err)
{
	return call(k, "get", "GET", ref, TARGET_OBJECT, NULL, NULL, NULL, out,
		    st, err);
}

int aj_kube_list(struct aj_kube *k, const struct aj_kube_ref *ref,
		 const struct aj_kube_list_opts *o, cJSON **out,
		 struct aj_kube_status *st, struct aj_errors *err)
{
	struct aj_kube_ref coll = *ref;

	coll.name = NULL;
	coll.subresource = NULL;
	return call(k, "list", "GET", &coll, TARGET_COLLECTION, o, NULL, NULL,
		    out, st, err);
}

static const char *list_continue(const cJSON *list)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(list, "metadata");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(meta, "continue");

	return cJSON_IsString(c) && *c->valuestring ? c->valuestring : NULL;
}

int aj_kube_list_all(struct aj_kube *k, const struct aj_kube_ref *ref,
		     const struct aj_kube_list_opts *o, cJSON **out,
		     struct aj_kube_status *st, struct aj_errors *err)
{
	struct aj_kube_list_opts page = { 0 };
	cJSON *all = NULL, *next = NULL, *items, *it;
	char *cont = NULL;

	if (o)
		page = *o;
	if (page.limit <= 0)
		page.limit = 500;
	*out = NULL;
	if (aj_kube_list(k, ref, &page, &all, st, err))
		return -1;
	items = cJSON_GetObjectItemCaseSensitive(all, "items");
	if (!cJSON_IsArray(items)) {
		/* "items": null is how an empty list can arrive. */
		cJSON_DeleteItemFromObjectCaseSensitive(all, "items");
		items = cJSON_AddArrayToObject(all, "items");
		if (!items)
			goto oom;
	}
	/* Later pages must not repeat the version: the token pins it. */
	page.resource_version = NULL;
	page.resource_version_match = NULL;
	while (list_continue(all)) {
		cJSON *meta = cJSON_GetObjectItemCaseSensitive(all, "metadata");

		aj_free(cont);
		cont = aj_strdup(list_continue(all));
		if (!cont)
			goto oom;
		page.continue_token = cont;
		if (aj_kube_list(k, ref, &page, &next, st, err))
			goto fail;
		it = cJSON_GetObjectItemCaseSensitive(next, "items");
		while (cJSON_IsArray(it) && it->child) {
			cJSON *one = cJSON_DetachItemViaPointer(it, it->child);

			cJSON_AddItemToArray(items, one);
		}
		/* Take the last page's metadata (its continue, its version). */
		it = cJSON_DetachItemFromObjectCaseSensitive(next, "metadata");
		if (it && !cJSON_ReplaceItemViaPointer(all, meta, it)) {
			cJSON_Delete(it);
			goto oom;
		}
		cJSON_Delete(next);
		next = NULL;
	}
	aj_free(cont);
	*out = all;
	return 0;
oom:
	aj_errors_oom(err);
fail:
	aj_free(cont);
	cJSON_Delete(next);
	cJSON_Delete(all);
	return -1;
}

int aj_kube_create(struct aj_kube *k, const struct aj_kube_ref *ref,
		   const cJSON *obj, cJSON **out, struct aj_kube_status *st,
		   struct aj_errors *err)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
	const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
	struct aj_kube_ref named = *ref;

	/* POST goes to the collection; messages name the object. */
	named.name = cJSON_IsString(name) ? name->valuestring : NULL;
	named.subresource = NULL;
	return call(k, "create", "POST", &named, TARGET_COLLECTION, NULL,
		    "application/json", obj, out, st, err);
}

int aj_kube_update(struct aj_kube *k, const struct aj_kube_ref *ref,
		   const cJSON *obj, cJSON **out, struct aj_kube_status *st,
		   struct aj_errors *err)
{
	return call(k, "update", "PUT", ref, TARGET_OBJECT, NULL,
		    "application/json", obj, out, st, err);
}

int aj_kube_patch(struct aj_kube *k, const struct aj_kube_ref *ref,
		  enum aj_kube_patch_type type, const cJSON *patch, cJSON **out,
		  struct aj_kube_status *st, struct aj_errors *err)
{
	const char *ct = type == AJ_KUBE_JSON_PATCH ? "application/json-patch+json"
						    : "application/merge-patch+json";

	return call(k, "patch", "PATCH", ref, TARGET_OBJECT, NULL, ct, patch,
		    out, st, err);
}

int aj_kube_delete(struct aj_kube *k, const struct aj_kube_ref *ref,
		   const struct aj_kube_delete_opts *o, cJSON **out,
		   struct aj_kube_status *st, struct aj_errors *err)
{
	static const char *const policies[] = { NULL, "Orphan", "Background",
						"Foreground" };
	cJSON *body = cJSON_CreateObject(), *pre = NULL;
	int ret, failed = !body;

	if (body) {
		failed |= !cJSON_AddStringToObject(body, "kind", "DeleteOptions");
		failed |= !cJSON_AddStringToObject(body, "apiVersion", "v1");
	}
	if (body && o && o->propagation > AJ_KUBE_PROPAGATION_DEFAULT &&
	    o->propagation <= AJ_KUBE_PROPAGATION_FOREGROUND)
		failed |= !cJSON_AddStringToObject(body, "propagationPolicy",
						   policies[o->propagation]);
	if (body && o && (o->precondition_uid || o->precondition_resource_version)) {
		pre = cJSON_AddObjectToObject(body, "preconditions");
		failed |= !pre;
		if (pre && o->precondition_uid)
			failed |= !cJSON_AddStringToObject(pre, "uid",
							   o->precondition_uid);
		if (pre && o->precondition_resource_version)
			failed |= !cJSON_AddStringToObject(
				pre, "resourceVersion", o->precondition_resource_version);
	}
	if (failed) {
		cJSON_Delete(body);
		if (out)
			*out = NULL;
		return aj_errors_oom(err);
	}
	ret = call(k, "delete", "DELETE", ref, TARGET_OBJECT, NULL,
		   "application/json", body, out, st, err);
	cJSON_Delete(body);
	return ret;
}
