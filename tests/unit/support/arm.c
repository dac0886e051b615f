#include "arm.h"

#include "core/error.h"

int aj_test_arm_open(struct aj_test_arm *f, const char *base, const struct aj_azure_hooks *hooks,
		     int max_retries)
{
	struct aj_identity_config ic;
	struct aj_arm_config ac;
	struct aj_credential *cred;
	struct aj_errors e = AJ_ERRORS_INIT;
	int rc = -1;

	aj_identity_config_default(&ic);
	ic.hooks = *hooks;
	ic.authority_host = base;
	ic.tenant_id = "tenant-x";
	ic.client_id = "client-1";
	ic.client_secret = "secret";
	if (aj_credential_secret_new(&ic, &cred, &e) ||
	    aj_token_cache_new(cred, &ic.hooks, &f->tokens, &e))
		goto out;
	aj_arm_config_default(&ac);
	ac.endpoint = base;
	ac.hooks = *hooks;
	ac.retry.max_retries = max_retries;
	ac.http.timeout_ms = 3000;
	rc = aj_arm_init(&f->arm, &ac, f->tokens, &e);
out:
	aj_errors_release(&e);
	return rc;
}

void aj_test_arm_close(struct aj_test_arm *f)
{
	aj_arm_release(&f->arm);
	aj_token_cache_free(f->tokens);
}
