/*
 * runhistory.c - discovery, run details and ranged log reads for aj logs
 * (see runhistory.h).
 */
#include "azure/runhistory.h"

#include <inttypes.h>
#include <string.h>

#include "azure/aml.h"
#include "azure/arm.h"
#include "azure/blob.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

int aj_runhistory_endpoint(struct aj_arm *a, const char *ws_id, char **base,
			   struct aj_errors *err)
{
	struct aj_arm_response ws;
	struct aj_http_request req;
	struct aj_http_response resp;
	struct aj_buf where = AJ_BUF_INIT(AJ_BUF_SMALL);
	const cJSON *url, *api;
	cJSON *doc = NULL;
	int rc = -1;
	size_t n;

	*base = NULL;
	aj_arm_response_init(&ws);
	aj_http_response_init(&resp);
	if (aj_arm_request(a, "GET", ws_id, AJ_AML_API_VERSION, NULL, &ws, err))
		goto out;
	url = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(ws.json, "properties"),
					       "discoveryUrl");
	if (!cJSON_IsString(url) || !*url->valuestring) {
		aj_errors_add(err, NULL, "workspace %s has no properties.discoveryUrl", ws_id);
		goto out;
	}
	/* the discovery document is public: no token goes with it */
	aj_http_request_init(&req, "GET", url->valuestring);
	rc = aj_http_send(&a->http, &a->retry, &req, &resp, err);
	aj_http_request_release(&req);
	if (rc)
		goto out;
	rc = -1;
	aj_http_url_redacted(&where, url->valuestring);
	doc = resp.status == 200 ? cJSON_ParseWithLength(resp.body.buf ? resp.body.buf : "",
							 resp.body.len) : NULL;
	api = cJSON_GetObjectItemCaseSensitive(doc, "api");
	if (!cJSON_IsString(api) || strncmp(api->valuestring, "http", 4)) {
		aj_errors_add(err, NULL, "GET %s: HTTP %ld: no \"api\" endpoint in the workspace's "
			      "discovery document", aj_buf_cstr(&where), resp.status);
		goto out;
	}
	n = strlen(api->valuestring);
	while (n && api->valuestring[n - 1] == '/')
		n--;
	if (!(*base = aj_strndup(api->valuestring, n))) {
		aj_errors_oom(err);
		goto out;
	}
	rc = 0;
out:
	cJSON_Delete(doc);
	aj_buf_release(&where);
	aj_http_response_release(&resp);
	aj_arm_response_release(&ws);
	return rc;
}

int aj_runhistory_details(struct aj_arm *a, const char *base, const char *ws_id,
			  const char *run, cJSON **details, struct aj_errors *err)
{
	struct aj_buf url = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_errors local = AJ_ERRORS_INIT;
	struct aj_arm_response resp;
	int rc;

	*details = NULL;
	aj_arm_response_init(&resp);
	aj_buf_addf(&url, "%s/history/v1.0%s/runs/", base, ws_id);
	aj_http_urlencode(&url, run);
	aj_buf_addstr(&url, "/details");
	if (url.failed) {
		aj_buf_release(&url);
		return aj_errors_oom(err);
	}
	rc = aj_arm_request(a, "GET", aj_buf_cstr(&url), NULL, NULL, &resp, &local);
	if (rc && resp.status == 404) {
		rc = 1;
	} else if (rc) {
		aj_errors_splice(err, &local);
	} else if (!cJSON_IsObject(resp.json)) {
		rc = aj_errors_add(err, NULL, "the run history sent no details for job %s", run);
	} else {
		*details = resp.json;
		resp.json = NULL;
	}
	aj_errors_release(&local);
	aj_arm_response_release(&resp);
	aj_buf_release(&url);
	return rc;
}

int aj_runhistory_read(struct aj_http *h, const char *sas_url, int64_t offset, size_t len,
		       struct aj_http_response *resp, struct aj_errors *err)
{
	struct aj_http_request req;
	struct aj_retry_policy retry;
	int rc;

	aj_retry_policy_default(&retry);
	aj_http_request_init(&req, "GET", sas_url);
	if (aj_http_request_header(&req, "x-ms-version: %s", AJ_BLOB_VERSION) ||
	    aj_http_request_header(&req, "Range: bytes=%" PRId64 "-%" PRId64, offset,
				   offset + (int64_t)len - 1)) {
		aj_http_request_release(&req);
		return aj_errors_oom(err);
	}
	rc = aj_http_send(h, &retry, &req, resp, err);
	aj_http_request_release(&req);
	return rc;
}
