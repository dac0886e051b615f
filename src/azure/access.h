/*
 * access.h - what to tell a user whom Azure refused (HTTP 401 or 403): the
 * identity aj acted as, read from the claims of its access token (client id,
 * object id, managed identity resource, or user name; never the token
 * itself), and the role the refused request needs, from its path.
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

#endif
