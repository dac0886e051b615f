/*
 * access.h - what to tell a user whom Azure refused (HTTP 401 or 403): the
 * identity aj acted as, read from the claims of its access token (client id,
 * object id, managed identity resource, or user name; never the token
 * itself), and the role the refused request needs, from its path: for ARM
 * (arm.c) and for Blob storage (blob.c), where a SAS may stand in for the
 * token.
 *
 * Pure: no I/O. Ownership: appends to the caller's buffer.
 */
#ifndef AJ_AZURE_ACCESS_H
#define AJ_AZURE_ACCESS_H

struct aj_buf;

/*
 * Append "; aj acted as <identity>, which needs <role> on <scope>" (403) or
 * "; the token of <identity> was not accepted: ..." (401) for a request of
 * method to path_or_url (an ARM path or URL). token may be NULL or not a
 * JWT: the identity is then "an identity whose token aj cannot read".
 * 0 / -1 (out's limit or memory).
 */
int aj_azure_access_hint(const char *token, const char *method, const char *path_or_url,
			 long status, struct aj_buf *out);

/*
 * The same for a Blob storage request (method to url, redacted or not):
 * 403 names the data role it needs ("Storage Blob Data Reader" to read,
 * "... Contributor" to write, a delegator role for a user delegation key);
 * 401 as above. token NULL: the request carried a SAS, which is said to be
 * refused (never shown). 0 / -1.
 */
int aj_azure_blob_access_hint(const char *token, const char *method, const char *url,
			      long status, struct aj_buf *out);

#endif
