#include "azure/blob.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "azure/access.h"
#include "azure/credential.h"
#include "azure/sas.h"
#include "core/alloc.h"
#include "core/base64.h"
#include "core/error.h"

#define BLOCK_MAX ((size_t)4000 * 1024 * 1024)
#define BLOCKS_MAX 50000
#define STORAGE_MESSAGE_MAX 300

void aj_blob_config_default(struct aj_blob_config *c)
{
	memset(c, 0, sizeof(*c));
	aj_retry_policy_default(&c->retry);
	c->scope = "https://storage.azure.com/.default";
	c->block_size = 8u * 1024u * 1024u;
	c->parallel = AJ_BLOB_PARALLEL_DEFAULT;
}

int aj_blob_endpoint(const char *tmpl, const char *account, struct aj_buf *out)
{
	static const char key[] = "{account}";
	const char *p = tmpl, *hit;

	while ((hit = strstr(p, key))) {
		if (aj_buf_add(out, p, (size_t)(hit - p)) || aj_buf_addstr(out, account))
			return -1;
		p = hit + sizeof(key) - 1;
	}
	if (aj_buf_addstr(out, p))
		return -1;
	while (out->len > 1 && out->buf[out->len - 1] == '/')
		out->buf[--out->len] = '\0';
	return 0;
}

int aj_blob_init(struct aj_blob *b, const struct aj_blob_config *c,
		 struct aj_errors *err)
{
	size_t n = c->endpoint ? strlen(c->endpoint) : 0;

	memset(b, 0, sizeof(*b));
	if (!n)
		return aj_errors_add(err, NULL, "blob: no endpoint configured");
	if (!c->tokens && !c->sas)
		return aj_errors_add(err, NULL, "blob: neither a token source nor a SAS is configured");
	if (c->block_size > BLOCK_MAX)
		return aj_errors_add(err, NULL, "blob: block size %zu is above the 4000 MiB limit",
				     c->block_size);
	while (n && c->endpoint[n - 1] == '/')
		n--;
	b->endpoint = aj_strndup(c->endpoint, n);
	b->scope = aj_strdup(c->scope ? c->scope : "https://storage.azure.com/.default");
	b->sas = c->sas ? aj_strdup(c->sas[0] == '?' ? c->sas + 1 : c->sas) : NULL;
	if (!b->endpoint || !b->scope || (c->sas && !b->sas)) {
		aj_blob_release(b);
		return aj_errors_oom(err);
	}
	if (aj_http_init(&b->http, &c->http, &c->hooks, err)) {
		aj_blob_release(b);
		return -1;
	}
	b->tokens = c->tokens;
	b->retry = c->retry;
	b->block_size = c->block_size ? c->block_size : 8u * 1024u * 1024u;
	b->single_put_max = c->single_put_max ? c->single_put_max : b->block_size;
	b->parallel = c->parallel < 1 ? 1 : c->parallel > AJ_BLOB_PARALLEL_MAX ?
		      AJ_BLOB_PARALLEL_MAX : c->parallel;
	return 0;
}

void aj_blob_release(struct aj_blob *b)
{
	aj_http_release(&b->http);
	aj_free(b->endpoint);
	aj_free(b->scope);
	if (b->sas) {
		OPENSSL_cleanse(b->sas, strlen(b->sas));
		aj_free(b->sas);
	}
	b->endpoint = b->scope = b->sas = NULL;
}

/* {endpoint}/{container}/{name, each segment encoded}[?query][&sas] */
static int blob_url(const struct aj_blob *b, const char *container,
		    const char *name, const char *query, struct aj_buf *url)
{
	int rc = aj_buf_addf(url, "%s/", b->endpoint);

	if (container) {
		rc |= aj_http_urlencode(url, container);
		rc |= aj_buf_addch(url, '/');
	}
	for (const char *s = name; s && *s;) {
		size_t n = strcspn(s, "/");
		char *seg = aj_strndup(s, n);

		if (!seg)
			return -1;
		rc |= aj_http_urlencode(url, seg);
		aj_free(seg);
		s += n;
		if (*s == '/') {
			rc |= aj_buf_addch(url, '/');
			s++;
		}
	}
	if (query)
		rc |= aj_buf_addf(url, "?%s", query);
	if (b->sas && !b->tokens)
		rc |= aj_buf_addf(url, "%c%s", query ? '&' : '?', b->sas);
	return rc;
}

/* The headers of one request; *tok: the token sent, if any (the caller releases it). */
static int add_auth_headers(struct aj_blob *b, struct aj_http_request *req, struct aj_token *tok,
			    struct aj_errors *err)
{
	char date[64];
	time_t now = (time_t)(aj_azure_now_ms(&b->http.hooks) / 1000);
	struct tm tm;
	int rc;

	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	rc = aj_http_request_header(req, "x-ms-version: %s", AJ_BLOB_VERSION);
	rc |= aj_http_request_header(req, "x-ms-date: %s", date);
	if (rc)
		return aj_errors_oom(err);
	if (b->tokens) {
		if (aj_token_cache_get(b->tokens, b->scope, tok, err))
			return -1;
		if (aj_http_request_header(req, "Authorization: Bearer %s", tok->value))
			return aj_errors_oom(err);
	}
	return 0;
}

/* Text of the first <tag>...</tag> in xml, or NULL. */
static char *xml_text(const char *xml, const char *tag)
{
	struct aj_buf open = AJ_BUF_INIT(256), close = AJ_BUF_INIT(256);
	const char *s, *e;
	char *r = NULL;

	if (!aj_buf_addf(&open, "<%s>", tag) && !aj_buf_addf(&close, "</%s>", tag) &&
	    (s = strstr(xml, aj_buf_cstr(&open))) != NULL) {
		s += open.len;
		e = strstr(s, aj_buf_cstr(&close));
		if (e)
			r = aj_strndup(s, (size_t)(e - s));
	}
	aj_buf_release(&open);
	aj_buf_release(&close);
	return r;
}

/* token: the one sent, NULL when the request carried the SAS. */
static int storage_error(const char *method, const char *url, const char *token,
			 const struct aj_http_response *resp, struct aj_errors *err)
{
	struct aj_buf where = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *code = aj_http_header(resp, AJ_HDR_ERROR_CODE);
	char *msg = resp->body.len ? xml_text(aj_buf_cstr(&resp->body), "Message") : NULL;
	char *xml_code = !code && resp->body.len ? xml_text(aj_buf_cstr(&resp->body), "Code") : NULL;

	size_t mlen = msg ? strcspn(msg, "\r\n") : 0;
	struct aj_buf m = AJ_BUF_INIT(AJ_BUF_SMALL);

	if (xml_code)
		code = xml_code;
	if (mlen > STORAGE_MESSAGE_MAX)
		mlen = STORAGE_MESSAGE_MAX;
	aj_http_url_redacted(&where, url);
	aj_buf_addf(&m, "blob %s %s: HTTP %ld", method, aj_buf_cstr(&where), resp->status);
	if (code)
		aj_buf_addf(&m, " %s", code);
	if (mlen)
		aj_buf_addf(&m, ": %.*s", (int)mlen, msg);
	if (resp->attempts > 1)
		aj_buf_addf(&m, " (after %d attempts)", resp->attempts);
	/* who was refused and what it needs: the token's claims, never the token or the SAS */
	if (resp->status == 401 || resp->status == 403)
		aj_azure_blob_access_hint(token, method, aj_buf_cstr(&where), resp->status, &m);
	aj_errors_add(err, NULL, "%s", m.failed ? "blob request failed" : aj_buf_cstr(&m));
	aj_buf_release(&m);
	aj_free(msg);
	aj_free(xml_code);
	aj_buf_release(&where);
	return -1;
}

/*
 * Send one storage request. `ok` lists the statuses that count as success
 * (0-terminated); any other is reported as a storage error.
 */
static int blob_send(struct aj_blob *b, struct aj_http_request *req,
		     struct aj_http_response *resp, const long *ok,
		     struct aj_errors *err)
{
	struct aj_token tok = { NULL, 0, 0 };
	int rc = -1;

	if (add_auth_headers(b, req, &tok, err) ||
	    aj_http_send(&b->http, &b->retry, req, resp, err))
		goto out;
	aj_azure_logf(&b->http.hooks, "blob %s: %ld (x-ms-request-id %s)", req->method,
		      resp->status, aj_http_header(resp, AJ_HDR_REQUEST_ID) ?
		      aj_http_header(resp, AJ_HDR_REQUEST_ID) : "-");
	for (rc = 0; *ok; ok++)
		if (resp->status == *ok)
			goto out;
	rc = storage_error(req->method, req->url, tok.value, resp, err);
out:
	aj_token_release(&tok);
	return rc;
}

static int md5_b64(const void *data, size_t len, struct aj_buf *out)
{
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int n = 0;

	if (!EVP_Digest(data, len, d, &n, EVP_md5(), NULL))
		return -1;
	return aj_base64_encode(out, d, n);
}

static const struct aj_blob_put_options no_options;

int aj_blob_put(struct aj_blob *b, const char *container, const char *name,
		const void *data, size_t len, const struct aj_blob_put_options *o,
		struct aj_errors *err)
{
	static const long ok[] = { 201, 0 }, ok_exists[] = { 201, 409, 0 };
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL), md5 = AJ_BUF_INIT(64);
	struct aj_http_request req;
	struct aj_http_response resp;
	int rc = -1;

	if (!o)
		o = &no_options;
	aj_http_response_init(&resp);
	if (blob_url(b, container, name, NULL, &url) ||
	    (o->md5 && md5_b64(data, len, &md5))) {
		aj_buf_release(&url);
		aj_buf_release(&md5);
		return aj_errors_oom(err);
	}
	aj_http_request_init(&req, "PUT", aj_buf_cstr(&url));
	req.body = len ? data : "";
	req.body_len = len;
	rc = aj_http_request_header(&req, "x-ms-blob-type: BlockBlob");
	if (o->content_type)
		rc |= aj_http_request_header(&req, "x-ms-blob-content-type: %s", o->content_type);
	if (o->md5)
		rc |= aj_http_request_header(&req, "Content-MD5: %s", aj_buf_cstr(&md5));
	if (o->create_only)
		rc |= aj_http_request_header(&req, "If-None-Match: *");
	if (rc)
		aj_errors_oom(err);
	else
		rc = blob_send(b, &req, &resp, o->create_only ? ok_exists : ok, err);
	aj_http_request_release(&req);
	aj_http_response_release(&resp);
	aj_buf_release(&url);
	aj_buf_release(&md5);
	return rc ? -1 : 0;
}

int aj_blob_head(struct aj_blob *b, const char *container, const char *name,
		 struct aj_blob_props *out, struct aj_errors *err)
{
	static const long ok[] = { 200, 404, 0 };
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_http_request req;
	struct aj_http_response resp;
	const char *len;
	char *end;
	int rc;

	memset(out, 0, sizeof(*out));
	if (blob_url(b, container, name, NULL, &url)) {
		aj_buf_release(&url);
		return aj_errors_oom(err);
	}
	aj_http_response_init(&resp);
	aj_http_request_init(&req, "HEAD", aj_buf_cstr(&url));
	rc = blob_send(b, &req, &resp, ok, err);
	if (!rc && resp.status == 200) {
		out->exists = 1;
		len = aj_http_header(&resp, AJ_HDR_CONTENT_LENGTH);
		errno = 0;
		out->size = len ? strtoull(len, &end, 10) : 0;
		if (!len || errno || end == len || *end)
			rc = aj_errors_add(err, NULL, "blob HEAD %s/%s: no valid Content-Length",
					   container, name);
	}
	aj_http_request_release(&req);
	aj_http_response_release(&resp);
	aj_buf_release(&url);
	return rc;
}

int aj_blob_exists(struct aj_blob *b, const char *container, const char *name,
		   int *exists, struct aj_errors *err)
{
	struct aj_blob_props p;
	int rc = aj_blob_head(b, container, name, &p, err);

	*exists = p.exists;
	return rc;
}

/* Block ids must all have the same length: base64 of "aj-block-%08u". */
static int block_id(unsigned idx, struct aj_buf *out)
{
	char raw[32];
	int n = snprintf(raw, sizeof(raw), "aj-block-%08u", idx);

	return aj_base64_encode(out, raw, (size_t)n);
}

static int put_block(struct aj_blob *b, const char *container, const char *name,
		     unsigned idx, const char *data, size_t len, int md5,
		     struct aj_errors *err)
{
	static const long ok[] = { 201, 0 };
	struct aj_buf id = AJ_BUF_INIT(128), q = AJ_BUF_INIT(256);
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL), sum = AJ_BUF_INIT(64);
	struct aj_http_request req;
	struct aj_http_response resp;
	int rc;

	aj_http_response_init(&resp);
	rc = block_id(idx, &id);
	rc |= aj_buf_addstr(&q, "comp=block&blockid=");
	rc |= aj_http_urlencode(&q, aj_buf_cstr(&id));
	rc |= blob_url(b, container, name, aj_buf_cstr(&q), &url);
	if (md5)
		rc |= md5_b64(data, len, &sum);
	aj_http_request_init(&req, "PUT", aj_buf_cstr(&url));
	req.body = data;
	req.body_len = len;
	if (md5)
		rc |= aj_http_request_header(&req, "Content-MD5: %s", aj_buf_cstr(&sum));
	if (rc)
		rc = aj_errors_oom(err);
	else
		rc = blob_send(b, &req, &resp, ok, err);
	aj_http_request_release(&req);
	aj_http_response_release(&resp);
	aj_buf_release(&id);
	aj_buf_release(&q);
	aj_buf_release(&url);
	aj_buf_release(&sum);
	return rc;
}

static int put_block_list(struct aj_blob *b, const char *container, const char *name,
			  unsigned nr, const char *blob_md5,
			  const struct aj_blob_put_options *o, struct aj_errors *err)
{
	static const long ok[] = { 201, 0 };
	struct aj_buf xml = AJ_BUF_INIT(AJ_BUF_LARGE), url = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_http_request req;
	struct aj_http_response resp;
	int rc;

	aj_http_response_init(&resp);
	rc = aj_buf_addstr(&xml, "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>");
	for (unsigned i = 0; i < nr; i++) {
		rc |= aj_buf_addstr(&xml, "<Latest>");
		rc |= block_id(i, &xml);
		rc |= aj_buf_addstr(&xml, "</Latest>");
	}
	rc |= aj_buf_addstr(&xml, "</BlockList>");
	rc |= blob_url(b, container, name, "comp=blocklist", &url);
	aj_http_request_init(&req, "PUT", aj_buf_cstr(&url));
	req.body = aj_buf_cstr(&xml);
	req.body_len = xml.len;
	rc |= aj_http_request_header(&req, "Content-Type: application/xml");
	if (o->content_type)
		rc |= aj_http_request_header(&req, "x-ms-blob-content-type: %s", o->content_type);
	if (blob_md5)
		rc |= aj_http_request_header(&req, "x-ms-blob-content-md5: %s", blob_md5);
	if (o->create_only)
		rc |= aj_http_request_header(&req, "If-None-Match: *");
	if (rc) {
		rc = aj_errors_oom(err);
	} else {
		static const long ok_exists[] = { 201, 409, 0 };

		rc = blob_send(b, &req, &resp, o->create_only ? ok_exists : ok, err);
	}
	aj_http_request_release(&req);
	aj_http_response_release(&resp);
	aj_buf_release(&xml);
	aj_buf_release(&url);
	return rc;
}

/* Fill block from the reader; *got < cap only at the end of the data. */
static int fill(aj_blob_read_fn read, void *data, char *block, size_t cap, size_t *got,
		struct aj_errors *err)
{
	*got = 0;
	while (*got < cap) {
		size_t n = 0;

		if (read(data, block + *got, cap - *got, &n, err))
			return -1;
		if (!n)
			break;
		*got += n;
	}
	return 0;
}

/*
 * Parallel Put Block. The caller's thread reads the data once, in order
 * (the blob's MD5 is over the whole, so it is computed there), into one of
 * parallel + 1 buffers and queues it; `parallel` senders, each with its own
 * connection, take blocks off the queue and put them, each request retried
 * on its own. A failure stops the reading and the other senders after their
 * current block; nothing is visible until the caller commits the list.
 */
struct block {
	char *data;
	size_t len;
	unsigned idx;
};

struct sender {
	struct upload *up;
	struct aj_blob blob;       /* the caller's settings, its own connection */
	struct aj_errors err;
	pthread_t thread;
	int started;
};

struct upload {
	struct aj_blob *b;
	const char *container, *name;
	int md5;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct block *queue;       /* blocks read, not yet taken; a ring of nbuf */
	char **free_bufs;          /* buffers nobody holds */
	size_t nbuf, head, queued, nfree;
	int done;                  /* the reader has queued its last block */
	int failed;
};

static int take(struct upload *up, struct block *blk)
{
	int got = 0;

	pthread_mutex_lock(&up->lock);
	while (!up->queued && !up->done && !up->failed)
		pthread_cond_wait(&up->changed, &up->lock);
	if (up->queued && !up->failed) {
		*blk = up->queue[up->head];
		up->head = (up->head + 1) % up->nbuf;
		up->queued--;
		got = 1;
	}
	pthread_mutex_unlock(&up->lock);
	return got;
}

static void give_back(struct upload *up, char *buf, int failed)
{
	pthread_mutex_lock(&up->lock);
	up->free_bufs[up->nfree++] = buf;
	up->failed |= failed;
	pthread_cond_broadcast(&up->changed);
	pthread_mutex_unlock(&up->lock);
}

static void *send_blocks(void *arg)
{
	struct sender *s = arg;
	struct block blk;

	while (take(s->up, &blk))
		give_back(s->up, blk.data, put_block(&s->blob, s->up->container, s->up->name,
						     blk.idx, blk.data, blk.len, s->up->md5,
						     &s->err) != 0);
	return NULL;
}

/* A free buffer, waiting for one; NULL once the upload failed. */
static char *free_buffer(struct upload *up)
{
	char *buf = NULL;

	pthread_mutex_lock(&up->lock);
	while (!up->nfree && !up->failed)
		pthread_cond_wait(&up->changed, &up->lock);
	if (!up->failed)
		buf = up->free_bufs[--up->nfree];
	pthread_mutex_unlock(&up->lock);
	return buf;
}

static void queue_block(struct upload *up, char *buf, size_t len, unsigned idx, int last)
{
	pthread_mutex_lock(&up->lock);
	up->queue[(up->head + up->queued) % up->nbuf] = (struct block){ buf, len, idx };
	up->queued++;
	up->done = last;
	pthread_cond_broadcast(&up->changed);
	pthread_mutex_unlock(&up->lock);
}

static void stop_upload(struct upload *up, int failed)
{
	pthread_mutex_lock(&up->lock);
	up->done = 1;
	up->failed |= failed;
	pthread_cond_broadcast(&up->changed);
	pthread_mutex_unlock(&up->lock);
}

static int sender_open(struct sender *s, struct upload *up, struct aj_errors *err)
{
	const struct aj_blob *b = up->b;
	struct aj_http_options ho = { b->http.ca_file, b->http.timeout_ms,
				      b->http.connect_timeout_ms };

	s->up = up;
	s->blob = *b;
	return aj_http_init(&s->blob.http, &ho, &b->http.hooks, err);
}

/*
 * Read the blocks and have them sent; *nr is their number. The first block
 * is already in `first` (full). The caller commits the list.
 */
static int send_all(struct upload *up, aj_blob_read_fn read, void *data, char *first,
		    size_t n, EVP_MD_CTX *md, unsigned *nr, struct aj_errors *err)
{
	size_t bs = up->b->block_size;
	char *buf = first;
	int rc = 0;

	for (*nr = 0; buf && !rc; ) {
		if (*nr >= BLOCKS_MAX)
			rc = aj_errors_add(err, NULL, "blob: %s needs more than %d blocks of %zu bytes",
					   up->name, BLOCKS_MAX, bs);
		else if (md && !EVP_DigestUpdate(md, buf, n))
			rc = aj_errors_oom(err);
		if (rc) {
			give_back(up, buf, 1);
			break;
		}
		queue_block(up, buf, n, (*nr)++, n < bs);
		if (n < bs)
			break;
		buf = free_buffer(up);
		if (buf && (rc = fill(read, data, buf, bs, &n, err)) == 0 && !n) {
			give_back(up, buf, 0);   /* the data ended with the last block */
			break;
		}
		if (rc)
			give_back(up, buf, 1);
	}
	stop_upload(up, rc != 0);
	return rc;
}

static int upload_blocks(struct aj_blob *b, const char *container, const char *name,
			 aj_blob_read_fn read, void *data, const struct aj_blob_put_options *o,
			 char *block, size_t n, struct aj_errors *err)
{
	EVP_MD_CTX *md = o->md5 ? EVP_MD_CTX_new() : NULL;
	struct upload up;
	unsigned nsend = b->parallel, nr = 0, i;
	struct sender *s = aj_calloc(nsend, sizeof(*s));
	struct aj_buf sum = AJ_BUF_INIT(64);
	unsigned char d[EVP_MAX_MD_SIZE];
	unsigned int dn = 0;
	int rc = -1;

	memset(&up, 0, sizeof(up));
	up.b = b;
	up.container = container;
	up.name = name;
	up.md5 = o->md5;
	up.nbuf = nsend + 1;
	up.queue = aj_calloc(up.nbuf, sizeof(*up.queue));
	up.free_bufs = aj_calloc(up.nbuf, sizeof(*up.free_bufs));
	pthread_mutex_init(&up.lock, NULL);
	pthread_cond_init(&up.changed, NULL);
	if (!s || !up.queue || !up.free_bufs || (o->md5 && (!md || !EVP_DigestInit_ex(md, EVP_md5(), NULL)))) {
		aj_errors_oom(err);
		goto done;
	}
	/* `block` is the first buffer; the others come from here */
	for (i = 1; i < up.nbuf; i++)
		if (!(up.free_bufs[up.nfree++] = aj_malloc(b->block_size))) {
			up.nfree--;
			aj_errors_oom(err);
			goto done;
		}
	for (i = 0; i < nsend; i++) {
		if (sender_open(&s[i], &up, err))
			goto stop;
		s[i].started = !pthread_create(&s[i].thread, NULL, send_blocks, &s[i]);
		if (!s[i].started) {
			aj_http_release(&s[i].blob.http);
			aj_errors_add(err, NULL, "blob: cannot start a sender thread");
			goto stop;
		}
	}
	rc = send_all(&up, read, data, block, n, md, &nr, err);
	goto join;
stop:
	stop_upload(&up, 1);
join:
	for (i = 0; i < nsend; i++) {
		if (!s[i].started)
			continue;
		pthread_join(s[i].thread, NULL);
		aj_http_release(&s[i].blob.http);
		if (aj_errors_count(&s[i].err))
			rc = -1;
		aj_errors_splice(err, &s[i].err);
	}
	if (up.failed)
		rc = -1;
	if (!rc && md && (!EVP_DigestFinal_ex(md, d, &dn) || aj_base64_encode(&sum, d, dn)))
		rc = aj_errors_oom(err);
	if (!rc)
		rc = put_block_list(b, container, name, nr, md ? aj_buf_cstr(&sum) : NULL, o, err);
done:
	/* every buffer is free or still queued (a failed upload); `block` is the caller's */
	for (i = 0; i < up.nfree; i++)
		if (up.free_bufs[i] != block)
			aj_free(up.free_bufs[i]);
	for (i = 0; i < up.queued; i++)
		if (up.queue[(up.head + i) % up.nbuf].data != block)
			aj_free(up.queue[(up.head + i) % up.nbuf].data);
	pthread_cond_destroy(&up.changed);
	pthread_mutex_destroy(&up.lock);
	aj_free(up.free_bufs);
	aj_free(up.queue);
	aj_free(s);
	EVP_MD_CTX_free(md);
	aj_buf_release(&sum);
	return rc;
}

int aj_blob_upload(struct aj_blob *b, const char *container, const char *name,
		   aj_blob_read_fn read, void *data, const struct aj_blob_put_options *o,
		   struct aj_errors *err)
{
	char *block = aj_malloc(b->block_size);
	size_t n;
	int rc = -1;

	if (!o)
		o = &no_options;
	if (!block)
		return aj_errors_oom(err);
	if (!fill(read, data, block, b->block_size, &n, err))
		rc = n < b->block_size ? aj_blob_put(b, container, name, block, n, o, err)
				       : upload_blocks(b, container, name, read, data, o, block, n, err);
	aj_free(block);
	return rc;
}

struct file_reader {
	int fd;
	const char *path;
};

static int read_file(void *data, void *buf, size_t cap, size_t *len, struct aj_errors *err)
{
	struct file_reader *f = data;
	ssize_t n;

	do
		n = read(f->fd, buf, cap);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return aj_errors_add(err, NULL, "blob: cannot read %s: %s", f->path, strerror(errno));
	*len = (size_t)n;
	return 0;
}

int aj_blob_upload_file(struct aj_blob *b, const char *container, const char *name,
			const char *path, const struct aj_blob_put_options *o,
			struct aj_errors *err)
{
	struct file_reader f = { -1, path };
	struct stat st;
	char *small;
	size_t n;
	int rc = -1;

	f.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f.fd < 0)
		return aj_errors_add(err, NULL, "blob: cannot open %s: %s", path, strerror(errno));
	if (fstat(f.fd, &st)) {
		aj_errors_add(err, NULL, "blob: cannot stat %s: %s", path, strerror(errno));
	} else if ((uint64_t)st.st_size > b->single_put_max) {
		rc = aj_blob_upload(b, container, name, read_file, &f, o, err);
	} else if (!(small = aj_malloc(st.st_size ? (size_t)st.st_size : 1))) {
		aj_errors_oom(err);
	} else {
		if (!fill(read_file, &f, small, (size_t)st.st_size, &n, err))
			rc = aj_blob_put(b, container, name, small, n, o, err);
		aj_free(small);
	}
	close(f.fd);
	return rc;
}

int aj_blob_user_delegation_key(struct aj_blob *b, const char *start,
				const char *expiry, struct aj_sas_key *out,
				struct aj_errors *err)
{
	static const long ok[] = { 200, 0 };
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL), xml = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_http_request req;
	struct aj_http_response resp;
	const char *body;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!b->tokens)
		return aj_errors_add(err, NULL, "blob: a user delegation key needs an Entra token, not a SAS");
	aj_http_response_init(&resp);
	rc = blob_url(b, NULL, NULL, "restype=service&comp=userdelegationkey", &url);
	rc |= aj_buf_addf(&xml, "<?xml version=\"1.0\" encoding=\"utf-8\"?><KeyInfo><Start>%s</Start><Expiry>%s</Expiry></KeyInfo>",
			  start, expiry);
	aj_http_request_init(&req, "POST", aj_buf_cstr(&url));
	req.body = aj_buf_cstr(&xml);
	req.body_len = xml.len;
	rc |= aj_http_request_header(&req, "Content-Type: application/xml");
	if (rc)
		rc = aj_errors_oom(err);
	else
		rc = blob_send(b, &req, &resp, ok, err);
	if (!rc) {
		body = aj_buf_cstr(&resp.body);
		out->signed_oid = xml_text(body, "SignedOid");
		out->signed_tid = xml_text(body, "SignedTid");
		out->signed_start = xml_text(body, "SignedStart");
		out->signed_expiry = xml_text(body, "SignedExpiry");
		out->signed_service = xml_text(body, "SignedService");
		out->signed_version = xml_text(body, "SignedVersion");
		out->value = xml_text(body, "Value");
		if (!out->signed_oid || !out->signed_tid || !out->signed_start ||
		    !out->signed_expiry || !out->signed_service ||
		    !out->signed_version || !out->value) {
			aj_sas_key_release(out);
			rc = aj_errors_add(err, NULL, "blob: the user delegation key response lacks a field");
		}
	}
	if (resp.body.buf)
		OPENSSL_cleanse(resp.body.buf, resp.body.alloc);
	aj_http_request_release(&req);
	aj_http_response_release(&resp);
	aj_buf_release(&url);
	aj_buf_release(&xml);
	return rc;
}
