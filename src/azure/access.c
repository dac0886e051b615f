#include "azure/access.h"

#include <string.h>

#include <cjson/cJSON.h>

#include "core/alloc.h"
#include "core/base64.h"
#include "core/buf.h"

/* A JWT's claims (its middle part, base64url) as JSON, or NULL. */
static cJSON *jwt_claims(const char *token)
{
	const char *p = token ? strchr(token, '.') : NULL;
	const char *end = p ? strchr(p + 1, '.') : NULL;
	size_t n, i, got = 0;
	char *b64;
	unsigned char *raw;
	cJSON *claims = NULL;

	if (!end || end - p - 1 > 16384)
		return NULL;
	n = (size_t)(end - p - 1);
	b64 = aj_malloc(n + 1);
	raw = aj_malloc(AJ_BASE64_DECODED_MAX(n) + 1);
	if (b64 && raw) {
		for (i = 0; i < n; i++)
			b64[i] = p[1 + i] == '-' ? '+' : p[1 + i] == '_' ? '/' : p[1 + i];
		if (!aj_base64_decode(b64, n, raw, &got))
			claims = cJSON_ParseWithLength((const char *)raw, got);
	}
	aj_free(b64);
	aj_free(raw);
	if (claims && !cJSON_IsObject(claims)) {
		cJSON_Delete(claims);
		claims = NULL;
	}
	return claims;
}

static const char *claim(const cJSON *claims, const char *name)
{
	return cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(claims, name));
}

/*
 * "managed identity aj-jobs (client id C)", "application (client id C, object
 * id O)", "user U", or "identity with object id O" (a token naming no more)
 */
static void identity(const char *token, struct aj_buf *out)
{
	cJSON *c = jwt_claims(token);
	const char *mi = claim(c, "xms_mirid"), *app = claim(c, "appid");
	const char *oid = claim(c, "oid");
	const char *user = claim(c, "upn");

	if (!app)
		app = claim(c, "azp");
	if (!user)
		user = claim(c, "unique_name");
	if (mi) {
		const char *name = strrchr(mi, '/');

		aj_buf_addf(out, "%s managed identity %s", strstr(mi, "/userAssignedIdentities/") ?
			    "the user-assigned" : "the system-assigned", name ? name + 1 : mi);
		if (app)
			aj_buf_addf(out, " (client id %s)", app);
	} else if (user) {
		aj_buf_addf(out, "user %s", user);
	} else if (app) {
		aj_buf_addf(out, "the application with client id %s", app);
		if (oid)
			aj_buf_addf(out, " (object id %s)", oid);
	} else if (oid) {
		aj_buf_addf(out, "the identity with object id %s", oid);
	} else {
		aj_buf_addstr(out, "an identity whose token aj cannot read");
	}
	cJSON_Delete(c);
}

/* Append the ARM id in path up to the name after `kind` ("/workspaces/"): 1, or 0 when absent. */
static int scope_of(const char *path, const char *kind, struct aj_buf *out)
{
	const char *s = strstr(path, "/subscriptions/"), *k;
	size_t n;

	k = s ? strstr(s, kind) : NULL;
	if (!k)
		return 0;
	k += strlen(kind);
	n = strcspn(k, "/?");
	aj_buf_add(out, s, (size_t)(k - s) + n);
	return 1;
}

/* Who was refused; 1 when that says it all (401: the token itself was refused). */
static int refused(const char *token, long status, struct aj_buf *out)
{
	aj_buf_addstr(out, status == 401 ? "; the token of " : "; aj acted as ");
	identity(token, out);
	if (status != 401)
		return 0;
	aj_buf_addstr(out, " was not accepted: check that the identity exists in the tenant "
		      "of the subscription and that the clock is right");
	return 1;
}

int aj_azure_access_hint(const char *token, const char *method, const char *path_or_url,
			 long status, struct aj_buf *out)
{
	struct aj_buf scope = AJ_BUF_INIT(4096);
	const char *p = path_or_url ? path_or_url : "";
	int read = method && !strcmp(method, "GET");

	if (refused(token, status, out)) {
		/* said */
	} else if (scope_of(p, "/workspaces/", &scope)) {
		aj_buf_addf(out, ", which needs a role such as \"AzureML Data Scientist\" or "
			    "Contributor on the workspace %s", aj_buf_cstr(&scope));
	} else if (scope_of(p, "/virtualclusters/", &scope)) {
		aj_buf_addf(out, ", which needs %s on the virtual cluster %s",
			    read ? "Reader" : "a role that may submit jobs (Contributor)",
			    aj_buf_cstr(&scope));
	} else if (strstr(p, "/providers/Microsoft.ResourceGraph/")) {
		aj_buf_addstr(out, ", which needs Reader on the subscriptions that hold the virtual "
			      "clusters");
	} else {
		aj_buf_addf(out, ", which needs a role that allows %s on %s", method ? method : "this",
			    scope_of(p, "/resourceGroups/", &scope) ? aj_buf_cstr(&scope) :
			    "the resource");
	}
	aj_buf_release(&scope);
	return out->failed ? -1 : 0;
}

int aj_azure_blob_access_hint(const char *token, const char *method, const char *url,
			      long status, struct aj_buf *out)
{
	int read = method && (!strcmp(method, "GET") || !strcmp(method, "HEAD"));

	if (!token) {
		aj_buf_addf(out, "; the storage service refused the SAS aj was given: it has expired, "
			    "is not valid yet, or does not allow %s (%s)", method ? method : "this request",
			    read ? "a read needs r" : "a write needs c and w");
	} else if (refused(token, status, out)) {
		/* said */
	} else if (url && strstr(url, "comp=userdelegationkey")) {
		aj_buf_addstr(out, ", which needs a role that may make user delegation keys, such as "
			      "\"Storage Blob Delegator\" or \"Storage Blob Data Contributor\", on the "
			      "storage account");
	} else {
		aj_buf_addf(out, ", which needs \"Storage Blob Data %s\" on the container or its "
			    "storage account (a data role: Owner or Contributor on the account is not "
			    "enough)", read ? "Reader" : "Contributor");
	}
	return out->failed ? -1 : 0;
}
