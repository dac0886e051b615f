/*
 * sas.h - shared access signatures for Blob Storage.
 *
 * A user-delegation SAS is signed with a key obtained from Get User
 * Delegation Key (blob.h) under an Entra token; a service SAS is signed with
 * the account key (for emulators and listSecrets). Both are pinned to signed
 * version AJ_SAS_VERSION, whose string-to-sign layout is fixed: 24 lines for
 * user delegation, 16 for the service form. Permissions may be given in any
 * order; they are put in the canonical order the service checks.
 *
 * Output is the query string without a leading '?', values URL-encoded.
 *
 * Secrets: the delegation key, the account key and the resulting signature
 * are never written into errors; intermediate buffers are wiped.
 *
 * Ownership: struct aj_sas_key owns its strings (aj_sas_key_release wipes
 * the key value).
 */
#ifndef AJ_AZURE_SAS_H
#define AJ_AZURE_SAS_H

#include "core/buf.h"

struct aj_errors;

#define AJ_SAS_VERSION "2024-11-04"

/* A user delegation key, as returned by the service. */
struct aj_sas_key {
	char *signed_oid;
	char *signed_tid;
	char *signed_start;
	char *signed_expiry;
	char *signed_service;
	char *signed_version;
	char *value;          /* base64 key */
};

void aj_sas_key_release(struct aj_sas_key *k);

struct aj_sas_params {
	const char *account;     /* for the canonicalized resource */
	const char *container;
	const char *blob;        /* NULL: a container SAS (sr=c) */
	const char *permissions; /* e.g. "rcw" */
	const char *start;       /* optional, YYYY-MM-DDThh:mm:ssZ */
	const char *expiry;      /* required, same form */
	const char *ip;          /* optional sip */
	const char *protocol;    /* NULL: "https" */
	const char *identifier;  /* si: a stored access policy (service SAS only) */
};

int aj_sas_user_delegation(const struct aj_sas_params *p,
			   const struct aj_sas_key *key, struct aj_buf *query,
			   struct aj_errors *err);
int aj_sas_service(const struct aj_sas_params *p, const char *account_key,
		   struct aj_buf *query, struct aj_errors *err);

/* The string-to-sign of the user-delegation form (for tests and debugging). */
int aj_sas_user_delegation_string(const struct aj_sas_params *p,
				  const struct aj_sas_key *key,
				  struct aj_buf *out, struct aj_errors *err);

#endif
