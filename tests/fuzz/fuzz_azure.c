/*
 * Azure token and error bodies. The first byte picks the shape (managed
 * identity / Entra "access_token" or the CLI's "accessToken", and the HTTP
 * status); the rest is the body. It is read as a token response, as an
 * identity error and as an ARM error; the first line is also read as an
 * expiry time and a Retry-After value. A token taken must be non-empty with
 * an expiry; a rejected token response must not quote the token.
 *
 * The token and identity-error readers are private to credential.c, so this
 * file compiles it in (the library's copy is then not linked).
 */
#include "../../src/azure/credential.c"

#include <stdint.h>

#include "azure/arm.h"
#include "core/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_token(const struct aj_buf *body, const char *key)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_LARGE);
	struct aj_token tok = { NULL, 0, 0 };
	cJSON *j;
	const cJSON *v;

	if (token_from_json(body, "fuzz", 1700000000, key, &tok, &err)) {
		if (aj_errors_empty(&err) || tok.value)
			abort();
		j = cJSON_ParseWithLength(aj_buf_cstr(body), body->len);
		v = cJSON_GetObjectItemCaseSensitive(j, key);
		if (cJSON_IsString(v) && strlen(v->valuestring) >= 8 &&
		    !aj_errors_format_all(&err, &text) &&
		    strstr(aj_buf_cstr(&text), v->valuestring))
			abort();   /* the secret reached an error message */
		cJSON_Delete(j);
	} else if (!tok.value || !*tok.value || tok.expires_on <= 0) {
		abort();
	}
	aj_token_release(&tok);
	aj_buf_release(&text);
	aj_errors_release(&err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const long codes[] = { 400, 401, 403, 404, 410, 429, 500, 503 };
	struct aj_http_response resp;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *nl;
	char *line;
	cJSON *j;

	aj_alloc_hook_cjson();
	if (size < 1)
		return 0;
	aj_http_response_init(&resp);
	resp.status = codes[data[0] % 8];
	resp.attempts = 1 + (data[0] >> 6);
	if (size > 1 && aj_buf_add(&resp.body, data + 1, size - 1))
		goto out;
	check_token(&resp.body, data[0] & 8 ? "accessToken" : "access_token");

	if (identity_error(&resp, "fuzz", &err) != -1 || aj_errors_empty(&err))
		abort();

	j = cJSON_ParseWithLength(aj_buf_cstr(&resp.body), resp.body.len);
	if (j && !aj_arm_error_text(j, &text) && text.len > 1000 + 3)
		abort();   /* the error text is capped */
	cJSON_Delete(j);

	nl = memchr(data + 1, '\n', size - 1);
	line = aj_strndup((const char *)data + 1, nl ? (size_t)(nl - (const char *)data - 1) : size - 1);
	if (line) {
		(void)aj_token_parse_time(line);
		(void)aj_retry_after_parse(line, 1700000000000LL);
		aj_free(line);
	}
out:
	aj_http_response_release(&resp);
	aj_buf_release(&text);
	aj_errors_release(&err);
	return 0;
}
