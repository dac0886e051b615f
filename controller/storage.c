#include "storage.h"

#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>

#include "azure/blob.h"
#include "azure/credential.h"
#include "azure/sas.h"
#include "backend/backend.h"
#include "backend/codeship.h"
#include "backend/common.h"
#include "backend/storage_secret.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/timestamp.h"
#include "kube/client.h"
#include "kube/status.h"
#include "log.h"

#define STORAGE_PERMISSIONS "racwdl"
#define CODE_PERMISSIONS "r"
/* user delegation keys start early: the service's clock may be behind ours */
#define KEY_SKEW 300
#define RENEW_ANNOTATION "aj.dev/sas-renew-after"

static const struct aj_kube_resource res_secrets = { "", "v1", "secrets", 1 };

struct aj_storage_minter {
	char *endpoint;
	char *ca_file;
	long lifetime;
	struct aj_token_cache *tokens;   /* the controller's identity (not owned) */
};

int aj_storage_minter_new(const struct aj_storage_opts *o, struct aj_token_cache *tokens, struct aj_storage_minter **out,
			  struct aj_errors *err)
{
	struct aj_storage_minter *m;
	const char *ep = o->blob_endpoint ? o->blob_endpoint : AJ_BLOB_ENDPOINT_DEFAULT;

	*out = NULL;
	if (o->lifetime && (o->lifetime < 60 || o->lifetime > AJ_STORAGE_LIFETIME_MAX))
		return aj_errors_add(err, NULL, "storage SAS lifetime %ld s is outside 60 s to 7 days",
				     o->lifetime);
	if (strncmp(ep, "https://", 8) && strncmp(ep, "http://", 7))
		return aj_errors_add(err, NULL, "blob endpoint \"%s\" is not an http(s) URL", ep);
	m = aj_calloc(1, sizeof(*m));
	if (!m)
		return aj_errors_oom(err);
	m->tokens = tokens;
	m->lifetime = o->lifetime ? o->lifetime : AJ_STORAGE_LIFETIME_DEFAULT;
	m->endpoint = aj_strdup(ep);
	m->ca_file = o->ca_file ? aj_strdup(o->ca_file) : NULL;
	if (!m->endpoint || (o->ca_file && !m->ca_file)) {
		aj_errors_oom(err);
		goto fail;
	}
	*out = m;
	return 0;
fail:
	aj_storage_minter_free(m);
	return -1;
}

void aj_storage_minter_free(struct aj_storage_minter *m)
{
	if (!m)
		return;
	aj_free(m->endpoint);
	aj_free(m->ca_file);
	aj_free(m);
}

int aj_storage_blobfuse_config(const char *account, const char *container,
			       const char *endpoint, const char *sas, struct aj_buf *out)
{
	/* account and container are checked names; the SAS is URL-encoded */
	return aj_buf_addf(out,
			   "# blobfuse2 configuration written by aj-controller; the SAS is renewed\n"
			   "# before it expires and blobfuse2 reloads this file.\n"
			   "logging:\n"
			   "  type: base\n"
			   "  level: log_warning\n"
			   "components:\n"
			   "  - libfuse\n"
			   "  - file_cache\n"
			   "  - attr_cache\n"
			   "  - azstorage\n"
			   "libfuse:\n"
			   "  attribute-expiration-sec: 120\n"
			   "  entry-expiration-sec: 120\n"
			   "  negative-entry-expiration-sec: 240\n"
			   "file_cache:\n"
			   "  timeout-sec: 120\n"
			   "attr_cache:\n"
			   "  timeout-sec: 7200\n"
			   "azstorage:\n"
			   "  type: block\n"
			   "  account-name: %s\n"
			   "  container: %s\n"
			   "  endpoint: '%s'\n"
			   "  mode: sas\n"
			   "  sas: '%s'\n",
			   account, container, endpoint, sas);
}

static const struct aj_sas_key *key_for(const struct aj_storage_secret_in *in, const char *account)
{
	size_t i;

	for (i = 0; i < in->accounts_nr; i++)
		if (!strcmp(in->accounts[i], account))
			return in->keys[i];
	return NULL;
}

/* One SAS query into *sas (wiped and reset first). 0 / -1. */
static int sign(const struct aj_storage_secret_in *in, const char *account, const char *container,
		const char *blob, const char *perms, time_t expiry, struct aj_buf *sas,
		struct aj_errors *err)
{
	const struct aj_sas_key *key = key_for(in, account);
	char se[AJ_TIMESTAMP_SIZE];
	struct aj_sas_params p;

	if (!key)
		return aj_errors_add(err, NULL, "storage: no delegation key for account %s", account);
	aj_timestamp_format(expiry, se);
	memset(&p, 0, sizeof(p));
	p.account = account;
	p.container = container;
	p.blob = blob;
	p.permissions = perms;
	p.expiry = se;
	if (sas->buf)
		OPENSSL_cleanse(sas->buf, sas->alloc);
	aj_buf_reset(sas);
	return aj_sas_user_delegation(&p, key, sas, err);
}

static void add_owner(cJSON *meta, const struct aj_storage_target *t, int *oom)
{
	cJSON *o = aj_body_add_object(aj_body_add_array(meta, "ownerReferences", oom), NULL, oom);

	aj_body_add_string(o, "apiVersion", t->owner_api_version, oom);
	aj_body_add_string(o, "kind", "AjJob", oom);
	aj_body_add_string(o, "name", t->owner_name, oom);
	aj_body_add_string(o, "uid", t->owner_uid, oom);
	aj_body_add_bool(o, "controller", 1, oom);
	aj_body_add_bool(o, "blockOwnerDeletion", 1, oom);
}

/* The Secret without its data: metadata, owner, labels; *data and *ann to fill. NULL on OOM. */
static cJSON *secret_shell(const struct aj_storage_target *t, cJSON **data, cJSON **ann)
{
	cJSON *secret = cJSON_CreateObject(), *meta, *labels;
	int oom = !secret;

	aj_body_add_string(secret, "apiVersion", "v1", &oom);
	aj_body_add_string(secret, "kind", "Secret", &oom);
	aj_body_add_string(secret, "type", "Opaque", &oom);
	meta = aj_body_add_object(secret, "metadata", &oom);
	aj_body_add_string(meta, "name", t->secret, &oom);
	aj_body_add_string(meta, "namespace", t->ns, &oom);
	labels = aj_body_add_object(meta, "labels", &oom);
	aj_body_add_string(labels, "app.kubernetes.io/managed-by", "aj", &oom);
	aj_body_add_string(labels, "app", t->job, &oom);
	*ann = aj_body_add_object(meta, "annotations", &oom);
	add_owner(meta, t, &oom);
	*data = aj_body_add_object(secret, "stringData", &oom);
	if (oom) {
		cJSON_Delete(secret);
		*data = *ann = NULL;   /* adding to NULL only says out of memory */
		return NULL;
	}
	return secret;
}

int aj_storage_secret(const struct aj_storage_secret_in *in, cJSON **out, time_t *renew_at,
		      struct aj_errors *err)
{
	const struct aj_jobspec *spec = in->spec;
	struct aj_buf sas = AJ_BUF_INIT(AJ_BUF_LARGE), text = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_buf ep = AJ_BUF_INIT(AJ_BUF_SMALL), name = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *data, *ann, *secret = secret_shell(in->target, &data, &ann);
	long shortest = 0;
	char when[AJ_TIMESTAMP_SIZE];
	int oom = !secret, ret = -1;
	size_t i;

	*out = NULL;
	for (i = 0; !oom && i < spec->storage_nr; i++) {
		const struct aj_storage *st = &spec->storage[i];

		aj_buf_reset(&ep);
		aj_buf_reset(&name);
		if (text.buf)
			OPENSSL_cleanse(text.buf, text.alloc);
		aj_buf_reset(&text);
		if (sign(in, st->account, st->container, NULL, STORAGE_PERMISSIONS,
			 in->now + in->lifetime, &sas, err))
			goto out;
		if (aj_blob_endpoint(in->endpoint, st->account, &ep) ||
		    aj_buf_addf(&name, "%s" AJ_STORAGE_KEY_SUFFIX, st->name) ||
		    aj_storage_blobfuse_config(st->account, st->container, aj_buf_cstr(&ep),
					       aj_buf_cstr(&sas), &text))
			oom = 1;
		else
			aj_body_add_string(data, aj_buf_cstr(&name), aj_buf_cstr(&text), &oom);
		shortest = in->lifetime;
	}
	if (!oom && in->blob && spec->code.digest) {
		long life = (long)in->blob->sas_expiry_days * 86400;

		aj_buf_reset(&ep);
		aj_buf_reset(&name);
		if (text.buf)
			OPENSSL_cleanse(text.buf, text.alloc);
		aj_buf_reset(&text);
		if (aj_code_blob_name(in->blob, spec->code.digest, &name)) {
			oom = 1;
		} else {
			if (sign(in, in->blob->account, in->blob->container, aj_buf_cstr(&name),
				 CODE_PERMISSIONS, in->now + life, &sas, err))
				goto out;
			if (aj_blob_endpoint(in->endpoint, in->blob->account, &ep) ||
			    aj_buf_addf(&text, "%s/%s/%s?%s", aj_buf_cstr(&ep), in->blob->container,
					aj_buf_cstr(&name), aj_buf_cstr(&sas)))
				oom = 1;
			else
				aj_body_add_string(data, AJ_CODE_URL_KEY, aj_buf_cstr(&text), &oom);
		}
		if (!shortest || life < shortest)
			shortest = life;
	}
	*renew_at = in->now + shortest * 2 / 3;
	aj_timestamp_format(*renew_at, when);
	aj_body_add_string(ann, RENEW_ANNOTATION, when, &oom);
	if (oom) {
		aj_errors_oom(err);
		goto out;
	}
	*out = secret;
	secret = NULL;
	ret = 0;
out:
	if (sas.buf)
		OPENSSL_cleanse(sas.buf, sas.alloc);
	if (text.buf)
		OPENSSL_cleanse(text.buf, text.alloc);
	aj_buf_release(&sas);
	aj_buf_release(&text);
	aj_buf_release(&ep);
	aj_buf_release(&name);
	cJSON_Delete(secret);
	return ret;
}

/* Overwrite the SAS-bearing values before freeing the Secret. */
static void secret_free(cJSON *secret)
{
	cJSON *v;

	cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(secret, "stringData"))
		if (cJSON_IsString(v))
			OPENSSL_cleanse(v->valuestring, strlen(v->valuestring));
	cJSON_Delete(secret);
}

/* The distinct accounts spec signs for, in first-use order. */
static void accounts_of(const struct aj_jobspec *spec, const struct aj_code_blob *blob,
		       const char **out, size_t *nr)
{
	size_t i, k;

	*nr = 0;
	for (i = 0; i <= spec->storage_nr; i++) {
		const char *a = i < spec->storage_nr ? spec->storage[i].account :
				blob ? blob->account : NULL;

		if (!a)
			continue;
		for (k = 0; k < *nr && strcmp(out[k], a); k++)
			;
		if (k == *nr)
			out[(*nr)++] = a;
	}
}

/* Get User Delegation Key for account, valid [now - skew, now + life]. */
static int delegation_key(struct aj_storage_minter *m, const char *account, time_t now,
			  long life, struct aj_sas_key *key, struct aj_errors *problems)
{
	struct aj_blob_config bc;
	struct aj_blob b;
	struct aj_buf ep = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors e = AJ_ERRORS_INIT;
	char start[AJ_TIMESTAMP_SIZE], expiry[AJ_TIMESTAMP_SIZE];
	int ret = -1;

	aj_timestamp_format(now - KEY_SKEW, start);
	aj_timestamp_format(now + life, expiry);
	if (aj_blob_endpoint(m->endpoint, account, &ep))
		return aj_errors_oom(problems);
	aj_blob_config_default(&bc);
	bc.endpoint = aj_buf_cstr(&ep);
	bc.http.ca_file = m->ca_file;
	bc.tokens = m->tokens;
	if (!aj_blob_init(&b, &bc, &e)) {
		ret = aj_blob_user_delegation_key(&b, start, expiry, key, &e);
		aj_blob_release(&b);
	}
	if (ret) {
		struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);

		aj_errors_format_all(&e, &msg);
		if (e.oom)
			aj_errors_oom(problems);
		else
			aj_errors_add(problems, NULL, "cannot get a user delegation key for storage "
				      "account %s with the controller's identity: %s", account,
				      msg.failed ? "(message too long)" : aj_buf_cstr(&msg));
		aj_buf_release(&msg);
	}
	aj_errors_release(&e);
	aj_buf_release(&ep);
	return ret;
}

/* Create the Secret, or rewrite ours. AJ_STORAGE_* or -1 (OOM). */
static int write_secret(struct aj_kube *k, const struct aj_storage_target *t, cJSON *secret,
			struct aj_errors *problems)
{
	struct aj_kube_ref ref = { &res_secrets, t->ns, NULL, NULL };
	struct aj_kube_status ks;
	struct aj_errors e = AJ_ERRORS_INIT;
	cJSON *patch = NULL, *op;
	int ret = AJ_STORAGE_OK, oom = 0;

	aj_kube_status_init(&ks);
	if (!aj_kube_create(k, &ref, secret, NULL, &ks, &e))
		goto out;
	if (ks.reason != AJ_KUBE_ALREADY_EXISTS)
		goto failed;
	aj_errors_release(&e);
	aj_kube_status_release(&ks);
	aj_kube_status_init(&ks);
	/* ours only: the test fails the whole patch for anyone else's Secret */
	patch = cJSON_CreateArray();
	oom = !patch;
	op = aj_body_add_object(patch, NULL, &oom);
	aj_body_add_string(op, "op", "test", &oom);
	aj_body_add_string(op, "path", "/metadata/ownerReferences/0/uid", &oom);
	aj_body_add_string(op, "value", t->owner_uid, &oom);
	op = aj_body_add_object(patch, NULL, &oom);
	aj_body_add_string(op, "op", "add", &oom);
	aj_body_add_string(op, "path", "/metadata/annotations", &oom);
	if (op && !cJSON_AddItemReferenceToObject(op, "value", cJSON_GetObjectItemCaseSensitive(
				cJSON_GetObjectItemCaseSensitive(secret, "metadata"), "annotations")))
		oom = 1;
	op = aj_body_add_object(patch, NULL, &oom);
	aj_body_add_string(op, "op", "add", &oom);
	aj_body_add_string(op, "path", "/stringData", &oom);
	if (op && !cJSON_AddItemReferenceToObject(op, "value",
						  cJSON_GetObjectItemCaseSensitive(secret, "stringData")))
		oom = 1;
	if (oom) {
		ret = aj_errors_oom(problems);
		goto out;
	}
	ref.name = t->secret;
	if (!aj_kube_patch(k, &ref, AJ_KUBE_JSON_PATCH, patch, NULL, &ks, &e))
		goto out;
failed:
	/* Invalid: a patch whose ownership test failed, or a Secret the server refuses */
	if (ks.reason == AJ_KUBE_INVALID) {
		ret = AJ_STORAGE_REJECTED;
		if (patch)
			aj_errors_add(problems, NULL, "a Secret named %s already exists and does not "
				      "belong to this AjJob", t->secret);
		else
			aj_errors_splice(problems, &e);
	} else {
		ret = AJ_STORAGE_RETRY;
		aj_errors_splice(problems, &e);
	}
out:
	cJSON_Delete(patch);
	aj_errors_release(&e);
	aj_kube_status_release(&ks);
	return ret;
}

int aj_storage_ensure(struct aj_storage_minter *m, struct aj_kube *k,
		      const struct aj_jobspec *spec, const struct aj_storage_target *t,
		      time_t *renew, struct aj_errors *problems)
{
	struct aj_code_blob blob;
	struct aj_sas_key *keys = NULL;
	const struct aj_sas_key **kp = NULL;
	const char **accounts = NULL;
	struct aj_storage_secret_in in;
	cJSON *secret = NULL;
	time_t now = time(NULL), renew_at = 0;
	long life;
	size_t nr = 0, i;
	int is_blob, ret = AJ_STORAGE_REJECTED;

	*renew = 0;
	is_blob = aj_code_blob(spec, &blob, problems);
	if (is_blob < 0)
		return problems->oom ? -1 : AJ_STORAGE_REJECTED;
	if (!spec->storage_nr && !(is_blob && spec->code.digest))
		return AJ_STORAGE_OK;
	life = m->lifetime;
	if (is_blob && spec->code.digest && (long)blob.sas_expiry_days * 86400 > life)
		life = (long)blob.sas_expiry_days * 86400;
	accounts = aj_calloc(spec->storage_nr + 1, sizeof(*accounts));
	keys = aj_calloc(spec->storage_nr + 1, sizeof(*keys));
	kp = aj_calloc(spec->storage_nr + 1, sizeof(*kp));
	if (!accounts || !keys || !kp) {
		ret = aj_errors_oom(problems);
		goto out;
	}
	accounts_of(spec, is_blob && spec->code.digest ? &blob : NULL, accounts, &nr);
	for (i = 0; i < nr; i++) {
		if (delegation_key(m, accounts[i], now, life, &keys[i], problems)) {
			ret = problems->oom ? -1 : AJ_STORAGE_RETRY;
			goto out;
		}
	}
	for (i = 0; i < nr; i++)
		kp[i] = &keys[i];
	memset(&in, 0, sizeof(in));
	in.spec = spec;
	in.blob = is_blob && spec->code.digest ? &blob : NULL;
	in.endpoint = m->endpoint;
	in.lifetime = m->lifetime;
	in.now = now;
	in.accounts = accounts;
	in.keys = kp;
	in.accounts_nr = nr;
	in.target = t;
	if (aj_storage_secret(&in, &secret, &renew_at, problems)) {
		ret = problems->oom ? -1 : AJ_STORAGE_REJECTED;
		goto out;
	}
	ret = write_secret(k, t, secret, problems);
	if (ret == AJ_STORAGE_OK) {
		*renew = renew_at;
		aj_log(AJ_LOG_INFO, "storage secret written", "ajjob", t->key, "secret", t->secret,
		       AJ_LOG_END);
	}
out:
	secret_free(secret);
	for (i = 0; keys && i < nr; i++)
		aj_sas_key_release(&keys[i]);
	aj_free(keys);
	aj_free(kp);
	aj_free(accounts);
	return ret;
}
