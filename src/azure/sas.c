#include "azure/sas.h"

#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "azure/http.h"
#include "core/alloc.h"
#include "core/base64.h"
#include "core/error.h"

/* Account keys are 88 characters, delegation keys 44: anything far longer is not a key. */
#define KEY_B64_MAX 512

void aj_sas_key_release(struct aj_sas_key *k)
{
	aj_free(k->signed_oid);
	aj_free(k->signed_tid);
	aj_free(k->signed_start);
	aj_free(k->signed_expiry);
	aj_free(k->signed_service);
	aj_free(k->signed_version);
	if (k->value) {
		OPENSSL_cleanse(k->value, strlen(k->value));
		aj_free(k->value);
	}
	memset(k, 0, sizeof(*k));
}

static void buf_wipe(struct aj_buf *b)
{
	if (b->buf)
		OPENSSL_cleanse(b->buf, b->alloc);
	aj_buf_release(b);
}

static const char *opt(const char *s)
{
	return s ? s : "";
}

/* Permissions in the order the service expects; rejects unknown letters. */
static int canonical_permissions(const struct aj_sas_params *p, char out[32],
				 struct aj_errors *err)
{
	const char *order = p->blob ? "racwdxyltmeopi" : "racwdxltfmeopi";
	size_t n = 0;

	if (!p->permissions || !*p->permissions)
		return aj_errors_add(err, NULL, "SAS: no permissions given");
	for (const char *c = p->permissions; *c; c++)
		if (!strchr(order, *c))
			return aj_errors_add(err, NULL, "SAS: permission '%c' is not valid for a %s",
					     *c, p->blob ? "blob" : "container");
	for (const char *o = order; *o; o++)
		if (strchr(p->permissions, *o))
			out[n++] = *o;
	out[n] = '\0';
	return 0;
}

static int check_params(const struct aj_sas_params *p, char perms[32],
			struct aj_errors *err)
{
	if (!p->account || !*p->account || !p->container || !*p->container)
		return aj_errors_add(err, NULL, "SAS: account and container are required");
	if (!p->expiry || !*p->expiry)
		return aj_errors_add(err, NULL, "SAS: an expiry time is required");
	return canonical_permissions(p, perms, err);
}

/* /blob/{account}/{container}[/{blob}], the blob name un-encoded, '\' as '/'. */
static int canonical_resource(const struct aj_sas_params *p, struct aj_buf *out)
{
	int rc = aj_buf_addf(out, "/blob/%s/%s", p->account, p->container);

	if (p->blob) {
		rc |= aj_buf_addch(out, '/');
		for (const char *c = p->blob; *c; c++)
			rc |= aj_buf_addch(out, *c == '\\' ? '/' : *c);
	}
	return rc;
}

static int string_to_sign(const struct aj_sas_params *p, const struct aj_sas_key *k,
			  const char *perms, struct aj_buf *out)
{
	int rc = aj_buf_addf(out, "%s\n%s\n%s\n", perms, opt(p->start), p->expiry);

	rc |= canonical_resource(p, out);
	if (k) {
		/* skoid sktid skt ske sks skv, then saoid suoid scid (unused). */
		rc |= aj_buf_addf(out, "\n%s\n%s\n%s\n%s\n%s\n%s\n\n\n\n",
				  opt(k->signed_oid), opt(k->signed_tid),
				  opt(k->signed_start), opt(k->signed_expiry),
				  opt(k->signed_service), opt(k->signed_version));
	} else {
		rc |= aj_buf_addf(out, "\n%s\n", opt(p->identifier));
	}
	/* sip spr sv sr, then snapshot time, ses, rscc rscd rsce rscl rsct. */
	rc |= aj_buf_addf(out, "%s\n%s\n%s\n%s\n\n\n\n\n\n\n", opt(p->ip),
			  p->protocol ? p->protocol : "https", AJ_SAS_VERSION,
			  p->blob ? "b" : "c");
	return rc;
}

int aj_sas_user_delegation_string(const struct aj_sas_params *p,
				  const struct aj_sas_key *key,
				  struct aj_buf *out, struct aj_errors *err)
{
	char perms[32];

	if (check_params(p, perms, err))
		return -1;
	if (string_to_sign(p, key, perms, out))
		return aj_errors_oom(err);
	return 0;
}

static int add_param(struct aj_buf *q, const char *name, const char *value)
{
	int rc;

	if (!value || !*value)
		return 0;
	rc = aj_buf_addf(q, "%s%s=", q->len ? "&" : "", name);
	return rc | aj_http_urlencode(q, value);
}

static int sign(const struct aj_sas_params *p, const struct aj_sas_key *k,
		const char *key_b64, struct aj_buf *query, struct aj_errors *err)
{
	unsigned char key[AJ_BASE64_DECODED_MAX(KEY_B64_MAX)];
	struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf sig = AJ_BUF_INIT(128);
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int mac_len = 0;
	char perms[32];
	size_t key_len = 0;
	int rc = -1;

	if (check_params(p, perms, err))
		return -1;
	if (!key_b64 || strlen(key_b64) > KEY_B64_MAX ||
	    aj_base64_decode(key_b64, strlen(key_b64), key, &key_len) || !key_len) {
		aj_errors_add(err, NULL, "SAS: the %s is not valid base64",
			      k ? "user delegation key" : "account key");
		goto done;
	}
	if (string_to_sign(p, k, perms, &msg)) {
		aj_errors_oom(err);
		goto done;
	}
	if (!HMAC(EVP_sha256(), key, (int)key_len, (const unsigned char *)msg.buf,
		  msg.len, mac, &mac_len) ||
	    aj_base64_encode(&sig, mac, mac_len)) {
		aj_errors_add(err, NULL, "SAS: signing failed");
		goto done;
	}
	rc = add_param(query, "sv", AJ_SAS_VERSION);
	rc |= add_param(query, "sr", p->blob ? "b" : "c");
	rc |= add_param(query, "sp", perms);
	rc |= add_param(query, "st", p->start);
	rc |= add_param(query, "se", p->expiry);
	rc |= add_param(query, "sip", p->ip);
	rc |= add_param(query, "spr", p->protocol ? p->protocol : "https");
	if (k) {
		rc |= add_param(query, "skoid", k->signed_oid);
		rc |= add_param(query, "sktid", k->signed_tid);
		rc |= add_param(query, "skt", k->signed_start);
		rc |= add_param(query, "ske", k->signed_expiry);
		rc |= add_param(query, "sks", k->signed_service);
		rc |= add_param(query, "skv", k->signed_version);
	} else {
		rc |= add_param(query, "si", p->identifier);
	}
	rc |= add_param(query, "sig", aj_buf_cstr(&sig));
	if (rc)
		aj_errors_oom(err);
done:
	OPENSSL_cleanse(mac, sizeof(mac));
	OPENSSL_cleanse(key, sizeof(key));
	buf_wipe(&sig);
	aj_buf_release(&msg);
	return rc ? -1 : 0;
}

int aj_sas_user_delegation(const struct aj_sas_params *p,
			   const struct aj_sas_key *key, struct aj_buf *query,
			   struct aj_errors *err)
{
	return sign(p, key, key->value, query, err);
}

int aj_sas_service(const struct aj_sas_params *p, const char *account_key,
		   struct aj_buf *query, struct aj_errors *err)
{
	return sign(p, NULL, account_key, query, err);
}
