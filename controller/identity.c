#include "identity.h"

#include "azure/credential.h"
#include "log.h"

static void azure_log(void *ctx, const char *line)
{
	(void)ctx;
	aj_log(AJ_LOG_DEBUG, "azure", "detail", line, AJ_LOG_END);
}

int aj_identity_tokens_new(const char *ca_file, const char *client_id,
			   struct aj_token_cache **out, struct aj_errors *err)
{
	struct aj_identity_config ic;
	struct aj_credential *cred;

	*out = NULL;
	aj_identity_config_default(&ic);
	aj_identity_config_from_env(&ic);
	ic.http.ca_file = ca_file;
	ic.hooks.log = azure_log;
	if (client_id)
		ic.mi_client_id = client_id;
	if (aj_credential_chain_new(&ic, &cred, err))
		return -1;
	return aj_token_cache_new(cred, &ic.hooks, out, err);
}
