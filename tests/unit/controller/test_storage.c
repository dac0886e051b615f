/*
 * The controller's storage Secret: endpoint templates, the blobfuse2
 * configuration, and the Secret built for a job with a storage mount and
 * blob code. The expected signatures were computed outside this code with
 * Python's hmac over the 24-line string-to-sign of signed version
 * 2024-11-04 (the same procedure reproduces the reference vector of
 * azure-rest.md 4.3), with the key bytes 0..31 and now = 2026-01-01T00:00:00Z.
 */
#include "support.h"

#include <string.h>

#include "azure/blob.h"
#include "azure/sas.h"
#include "backend/backend.h"
#include "backend/codeship.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "storage.h"

#define SHA_EMPTY "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
#define NOW 1767225600  /* 2026-01-01T00:00:00Z */
#define KEY_PART "&spr=https&skoid=11111111-1111-1111-1111-111111111111" \
	"&sktid=22222222-2222-2222-2222-222222222222" \
	"&skt=2026-01-01T00%3A00%3A00Z&ske=2026-01-08T00%3A00%3A00Z&sks=b&skv=2024-11-04"
#define STORAGE_SAS "sv=2024-11-04&sr=c&sp=racwdl&se=2026-01-02T00%3A00%3A00Z" KEY_PART \
	"&sig=mDEhCuVJAlijeCDke21C70kMecYVonjZnwT3kDEXCyA%3D"
#define CODE_SAS "sv=2024-11-04&sr=b&sp=r&se=2026-01-02T00%3A00%3A00Z" KEY_PART \
	"&sig=lVVz9zx%2BHO5nJJEv8CMejE7j%2FmxsTmjBUCwl6x62JqU%3D"

static struct aj_sas_key vector_key(void)
{
	struct aj_sas_key k = {
		.signed_oid = (char *)"11111111-1111-1111-1111-111111111111",
		.signed_tid = (char *)"22222222-2222-2222-2222-222222222222",
		.signed_start = (char *)"2026-01-01T00:00:00Z",
		.signed_expiry = (char *)"2026-01-08T00:00:00Z",
		.signed_service = (char *)"b",
		.signed_version = (char *)"2024-11-04",
		.value = (char *)"AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
	};
	return k;
}

static const char *blobfuse_want =
	"# blobfuse2 configuration written by aj-controller; the SAS is renewed\n"
	"# before it expires and blobfuse2 reloads this file.\n"
	"logging:\n  type: base\n  level: log_warning\n"
	"components:\n  - libfuse\n  - file_cache\n  - attr_cache\n  - azstorage\n"
	"libfuse:\n  attribute-expiration-sec: 120\n  entry-expiration-sec: 120\n"
	"  negative-entry-expiration-sec: 240\n"
	"file_cache:\n  timeout-sec: 120\n"
	"attr_cache:\n  timeout-sec: 7200\n"
	"azstorage:\n  type: block\n  account-name: acct1\n  container: results\n"
	"  endpoint: 'https://acct1.blob.core.windows.net'\n  mode: sas\n"
	"  sas: '" STORAGE_SAS "'\n";

/* seed "Storage" plus the blob strategy: one Secret, a key for each */
static void secret_content(void **state)
{
	static const struct aj_shape_args one = { 1, 0, 0 };
	struct aj_sas_key key = vector_key();
	const struct aj_sas_key *keys[] = { &key };
	const char *accounts[] = { "acct1" };
	struct aj_storage_target t = { "team/train", "team", "train-storage", "train", "train",
				       "uid-1", "aj.dev/v1alpha1" };
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_code_blob blob;
	struct aj_storage_secret_in in;
	struct aj_jobspec s;
	cJSON *secret = NULL;
	time_t renew = 0;

	(void)state;
	aj_test_spec("config: {target: {service: volcano, gpus_per_node: 0}, environment: {image: x}, "
		     "jobs: [{sku: C1}], storage: {data: {storage_account_name: acct1, "
		     "container_name: results, mount_dir: /mnt/data}}, "
		     "_extra: {code_upload: {strategy: blob, blob: {storage_account: acct1, "
		     "container: code}}}}", &one, NULL, 0, &s);
	s.code.digest = aj_strdup(SHA_EMPTY);
	assert_int_equal(aj_code_blob(&s, &blob, &err), 1);
	memset(&in, 0, sizeof(in));
	in.spec = &s;
	in.blob = &blob;
	in.endpoint = AJ_BLOB_ENDPOINT_DEFAULT;
	in.lifetime = 86400;
	in.now = NOW;
	in.accounts = accounts;
	in.keys = keys;
	in.accounts_nr = 1;
	in.target = &t;
	assert_int_equal(aj_storage_secret(&in, &secret, &renew, &err), 0);

	assert_string_equal(aj_test_json_str(secret, "kind"), "Secret");
	assert_string_equal(aj_test_json_str(secret, "metadata.name"), "train-storage");
	assert_string_equal(aj_test_json_str(secret, "metadata.namespace"), "team");
	assert_string_equal(aj_test_json_str(secret, "metadata.labels.app"), "train");
	assert_string_equal(aj_test_json_str(secret, "metadata.ownerReferences[0].kind"), "AjJob");
	assert_string_equal(aj_test_json_str(secret, "metadata.ownerReferences[0].uid"), "uid-1");
	assert_string_equal(aj_test_json_str(secret, "metadata.ownerReferences[0].name"), "train");
	assert_true(cJSON_IsTrue(aj_test_json_at(secret, "metadata.ownerReferences[0].controller")));
	/* both live a day: renewed after 16 hours */
	assert_int_equal((long)renew, NOW + 16 * 3600);
	assert_string_equal(aj_test_json_str(secret, "metadata.annotations.\"aj.dev/sas-renew-after\""),
			    "2026-01-01T16:00:00Z");
	assert_int_equal(aj_test_json_size(secret, "stringData"), 2);
	assert_string_equal(aj_test_json_str(secret, "stringData.\"data.yaml\""), blobfuse_want);
	assert_string_equal(aj_test_json_str(secret, "stringData.\"code-url\""),
			    "https://acct1.blob.core.windows.net/code/aj-code/" SHA_EMPTY ".tar.gz?"
			    CODE_SAS);
	cJSON_Delete(secret);

	/* out of memory at every allocation in turn: a clean failure, nothing half-built */
	{
		long n;

		for (n = 0;; n++) {
			struct aj_errors oom = AJ_ERRORS_INIT;
			int r;

			aj_alloc_fail_after(n);
			r = aj_storage_secret(&in, &secret, &renew, &oom);
			aj_alloc_fail_after(-1);
			if (!r) {
				assert_string_equal(aj_test_json_str(secret, "stringData.\"code-url\""),
						    "https://acct1.blob.core.windows.net/code/aj-code/"
						    SHA_EMPTY ".tar.gz?" CODE_SAS);
				cJSON_Delete(secret);
				aj_errors_release(&oom);
				break;
			}
			assert_null(secret);
			assert_true(aj_test_errors_contain(&oom, "out of memory"));
			aj_errors_release(&oom);
		}
		assert_true(n > 20);
	}

	/* a short storage lifetime sets the renewal; a missing key is an error */
	in.lifetime = 90;
	assert_int_equal(aj_storage_secret(&in, &secret, &renew, &err), 0);
	assert_int_equal((long)renew, NOW + 60);
	cJSON_Delete(secret);
	in.accounts_nr = 0;
	assert_int_equal(aj_storage_secret(&in, &secret, &renew, &err), -1);
	assert_null(secret);
	assert_true(aj_test_errors_contain(&err, "no delegation key for account acct1"));
	aj_errors_release(&err);
	aj_jobspec_release(&s);
}

static void blobfuse_config(void **state)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);

	(void)state;
	assert_int_equal(aj_storage_blobfuse_config("acct1", "results",
						    "https://acct1.blob.core.windows.net",
						    STORAGE_SAS, &b), 0);
	assert_string_equal(aj_buf_cstr(&b), blobfuse_want);
	aj_buf_release(&b);
}

/* A JobSpec without storage or blob code needs no Secret and no renewal */
static void minter_due(void **state)
{
	static const struct aj_shape_args one = { 1, 0, 0 };
	struct aj_storage_opts o = { NULL, NULL, 0 };
	struct aj_storage_target t = { "ns/a", "ns", "a-storage", "a", "a", "u", "aj.dev/v1alpha1" };
	struct aj_storage_minter *m = NULL;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_jobspec s;
	time_t renew = 1;

	(void)state;
	assert_int_equal(aj_storage_minter_new(&o, NULL, &m, &err), 0);
	aj_test_spec("config: {target: {service: volcano, gpus_per_node: 0}, environment: {image: x}, "
		     "jobs: [{sku: C1}]}", &one, NULL, 0, &s);
	/* no Kubernetes client: writing anything would crash */
	assert_int_equal(aj_storage_ensure(m, NULL, &s, &t, &renew, &err), AJ_STORAGE_OK);
	assert_true(renew == 0);
	aj_jobspec_release(&s);
	aj_storage_minter_free(m);

	o.lifetime = 30;
	assert_int_equal(aj_storage_minter_new(&o, NULL, &m, &err), -1);
	assert_true(aj_test_errors_contain(&err, "storage SAS lifetime 30 s is outside 60 s to 7 days"));
	aj_errors_release(&err);
	o.lifetime = 0;
	o.blob_endpoint = "ftp://{account}";
	assert_int_equal(aj_storage_minter_new(&o, NULL, &m, &err), -1);
	assert_true(aj_test_errors_contain(&err, "blob endpoint \"ftp://{account}\" is not an http(s) URL"));
	aj_errors_release(&err);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(blobfuse_config),
		cmocka_unit_test(secret_content),
		cmocka_unit_test(minter_due),
	};

	aj_alloc_hook_cjson();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
