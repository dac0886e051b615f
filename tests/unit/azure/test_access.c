/*
 * What a 401/403 from Azure tells the user: the identity from the token's
 * claims (never the token) and the role the refused request needs.
 * The JWTs below carry hand-written claims and a dummy signature.
 */
#include "support.h"

#include <string.h>

#include "azure/access.h"
#include "core/buf.h"

/* {"appid":"11111111-2222-3333-4444-555555555555","oid":"aaaaaaaa-0000-4000-8000-000000000001","idtyp":"app"} */
#define APP_JWT "eyJhbGciOiJSUzI1NiJ9.eyJhcHBpZCI6IjExMTExMTExLTIyMjItMzMzMy00NDQ0LTU1NTU1NTU1NTU1NSIs" \
	"Im9pZCI6ImFhYWFhYWFhLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwMSIsImlkdHlwIjoiYXBwIn0.c2ln"
/* {"appid":"22222222-...-000000000002","xms_mirid":".../userAssignedIdentities/aj-jobs"} */
#define MI_JWT "eyJhbGciOiJSUzI1NiJ9.eyJhcHBpZCI6IjIyMjIyMjIyLTAwMDAtNDAwMC04MDAwLTAwMDAwMDAwMDAwMiIsInht" \
	"c19taXJpZCI6Ii9zdWJzY3JpcHRpb25zL3MvcmVzb3VyY2Vncm91cHMvcmcvcHJvdmlkZXJzL01pY3Jvc29mdC5NYW5h" \
	"Z2VkSWRlbnRpdHkvdXNlckFzc2lnbmVkSWRlbnRpdGllcy9hai1qb2JzIn0.c2ln"
/* {"upn":"ada@example.com","oid":"x"} */
#define USER_JWT "eyJhbGciOiJSUzI1NiJ9.eyJ1cG4iOiJhZGFAZXhhbXBsZS5jb20iLCJvaWQiOiJ4In0.c2ln"

#define hint_is(...) expect_hint(aj_azure_access_hint, __VA_ARGS__)
#define blob_hint_is(...) expect_hint(aj_azure_blob_access_hint, __VA_ARGS__)

#define WS "/subscriptions/s1/resourceGroups/rg/providers/Microsoft.MachineLearningServices/workspaces/ws"

typedef int hint_fn(const char *token, const char *method, const char *path_or_url, long status,
		    struct aj_buf *out);

/* The hint fn gives (ARM's or Blob storage's) is want, and holds no token. */
static void expect_hint(hint_fn *fn, const char *token, const char *method, const char *path,
			long status, const char *want)
{
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_SMALL);

	assert_int_equal(fn(token, method, path, status, &out), 0);
	assert_string_equal(aj_buf_cstr(&out), want);
	if (token)
		assert_null(strstr(aj_buf_cstr(&out), "eyJ"));
	aj_buf_release(&out);
}

static void forbidden_names_the_identity_and_the_role(void **state)
{
	(void)state;
	hint_is(APP_JWT, "PUT", WS "/jobs/k8s-a", 403,
		"; aj acted as the application with client id 11111111-2222-3333-4444-555555555555 "
		"(object id aaaaaaaa-0000-4000-8000-000000000001), which needs a role such as "
		"\"AzureML Data Scientist\" or Contributor on the workspace " WS);
	hint_is(MI_JWT, "GET", "https://management.example/" WS "/datastores?isDefault=true", 403,
		"; aj acted as the user-assigned managed identity aj-jobs (client id "
		"22222222-0000-4000-8000-000000000002), which needs a role such as "
		"\"AzureML Data Scientist\" or Contributor on the workspace " WS);
	hint_is(USER_JWT, "GET", "/subscriptions/s1/resourceGroups/sing/providers/"
		"Microsoft.MachineLearningServices/virtualclusters/vc1", 403,
		"; aj acted as user ada@example.com, which needs Reader on the virtual cluster "
		"/subscriptions/s1/resourceGroups/sing/providers/Microsoft.MachineLearningServices/"
		"virtualclusters/vc1");
	hint_is(APP_JWT, "POST", "/providers/Microsoft.ResourceGraph/resources", 403,
		"; aj acted as the application with client id 11111111-2222-3333-4444-555555555555 "
		"(object id aaaaaaaa-0000-4000-8000-000000000001), which needs Reader on the "
		"subscriptions that hold the virtual clusters");
	hint_is(USER_JWT, "GET", "/subscriptions/s1/resourceGroups/rg/providers/Other/x", 403,
		"; aj acted as user ada@example.com, which needs a role that allows GET on "
		"/subscriptions/s1/resourceGroups/rg");
}

static void unauthorized_says_the_token_was_refused(void **state)
{
	(void)state;
	hint_is(MI_JWT, "PUT", WS "/jobs/j", 401,
		"; the token of the user-assigned managed identity aj-jobs (client id "
		"22222222-0000-4000-8000-000000000002) was not accepted: check that the identity "
		"exists in the tenant of the subscription and that the clock is right");
}

static void unreadable_tokens_still_give_the_role(void **state)
{
	(void)state;
	/* not a JWT (the test peer's tokens), no token, claims that are not JSON */
	hint_is("eyJ0.imds.1.abc", "PUT", WS "/codes/aj-code/versions/1", 403,
		"; aj acted as an identity whose token aj cannot read, which needs a role such as "
		"\"AzureML Data Scientist\" or Contributor on the workspace " WS);
	hint_is(NULL, "GET", "/subscriptions", 403,
		"; aj acted as an identity whose token aj cannot read, which needs a role that "
		"allows GET on the resource");
	hint_is("a.bm90IGpzb24.c", "GET", "/subscriptions", 401,
		"; the token of an identity whose token aj cannot read was not accepted: check "
		"that the identity exists in the tenant of the subscription and that the clock is "
		"right");
}

/* {"oid":"5e5f1b1a-0000-4000-8000-00000000a11d","tid":"t"}: a token that names no more */
#define OID_JWT "eyJhbGciOiJSUzI1NiJ9.eyJvaWQiOiI1ZTVmMWIxYS0wMDAwLTQwMDAtODAwMC0wMDAwMDAwMGExMWQi" \
	"LCJ0aWQiOiJ0In0.c2ln"
#define BLOB "https://acct.blob.core.windows.net/code/aj-code/x.tar.gz"

/* Blob storage wants data roles; a SAS is said to be refused, never shown. */
static void blob_refusals_name_the_identity_and_the_data_role(void **state)
{
	(void)state;
	blob_hint_is(APP_JWT, "PUT", BLOB, 403,
		     "; aj acted as the application with client id 11111111-2222-3333-4444-555555555555 "
		     "(object id aaaaaaaa-0000-4000-8000-000000000001), which needs \"Storage Blob Data "
		     "Contributor\" on the container or its storage account (a data role: Owner or "
		     "Contributor on the account is not enough)");
	blob_hint_is(MI_JWT, "HEAD", BLOB, 403,
		     "; aj acted as the user-assigned managed identity aj-jobs (client id "
		     "22222222-0000-4000-8000-000000000002), which needs \"Storage Blob Data Reader\" "
		     "on the container or its storage account (a data role: Owner or Contributor on "
		     "the account is not enough)");
	blob_hint_is(OID_JWT, "POST", "https://acct.blob.core.windows.net/?restype=service&"
		     "comp=userdelegationkey", 403,
		     "; aj acted as the identity with object id 5e5f1b1a-0000-4000-8000-00000000a11d, "
		     "which needs a role that may make user delegation keys, such as \"Storage Blob "
		     "Delegator\" or \"Storage Blob Data Contributor\", on the storage account");
	blob_hint_is(USER_JWT, "GET", BLOB, 401,
		     "; the token of user ada@example.com was not accepted: check that the identity "
		     "exists in the tenant of the subscription and that the clock is right");
	blob_hint_is(NULL, "PUT", BLOB "?sv=2024-11-04&sig=REDACTED", 403,
		     "; the storage service refused the SAS aj was given: it has expired, is not valid "
		     "yet, or does not allow PUT (a write needs c and w)");
	blob_hint_is(NULL, "GET", BLOB, 403,
		     "; the storage service refused the SAS aj was given: it has expired, is not valid "
		     "yet, or does not allow GET (a read needs r)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(forbidden_names_the_identity_and_the_role),
		cmocka_unit_test(unauthorized_says_the_token_was_refused),
		cmocka_unit_test(unreadable_tokens_still_give_the_role),
		cmocka_unit_test(blob_refusals_name_the_identity_and_the_data_role),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
