/*
 * status.h - Kubernetes API errors, decoded from the metav1.Status body.
 *
 * Every failed request ends up here: the HTTP code, the Status "reason" as
 * an enum (409 AlreadyExists and 409 Conflict differ only by reason), the
 * server's message, the details (name, kind, causes[] for Invalid), and the
 * Retry-After delay. Transport failures (connection refused, TLS) are a
 * reason of their own, AJ_KUBE_TRANSPORT, with HTTP code 0, so a caller can
 * tell "the server said no" from "we never reached it".
 *
 * When the body is not a Status (a proxy's HTML page, an empty 503), the
 * reason is derived from the HTTP code the way client-go does.
 *
 * Ownership: a struct aj_kube_status owns its strings; release it with
 * aj_kube_status_release() (safe on a zeroed or released struct).
 */
#ifndef AJ_KUBE_STATUS_H
#define AJ_KUBE_STATUS_H

#include <stddef.h>

#include <cjson/cJSON.h>

struct aj_errors;

enum aj_kube_reason {
	AJ_KUBE_OK = 0,
	AJ_KUBE_TRANSPORT,        /* no HTTP answer: DNS, connect, TLS, timeout */
	AJ_KUBE_UNKNOWN,          /* an error the server gave no known reason for */
	AJ_KUBE_BAD_REQUEST,
	AJ_KUBE_UNAUTHORIZED,
	AJ_KUBE_FORBIDDEN,
	AJ_KUBE_NOT_FOUND,
	AJ_KUBE_METHOD_NOT_ALLOWED,
	AJ_KUBE_NOT_ACCEPTABLE,
	AJ_KUBE_ALREADY_EXISTS,
	AJ_KUBE_CONFLICT,
	AJ_KUBE_GONE,
	AJ_KUBE_EXPIRED,
	AJ_KUBE_REQUEST_ENTITY_TOO_LARGE,
	AJ_KUBE_UNSUPPORTED_MEDIA_TYPE,
	AJ_KUBE_INVALID,
	AJ_KUBE_TOO_MANY_REQUESTS,
	AJ_KUBE_INTERNAL_ERROR,
	AJ_KUBE_SERVICE_UNAVAILABLE,
	AJ_KUBE_SERVER_TIMEOUT,
	AJ_KUBE_TIMEOUT,
	AJ_KUBE_STORE_READ_ERROR
};

/* One entry of details.causes[] (field validation problems). */
struct aj_kube_cause {
	char *reason;   /* "FieldValueInvalid", ...; may be NULL */
	char *field;    /* "metadata.name"; may be NULL */
	char *message;  /* may be NULL */
};

struct aj_kube_status {
	long code;                  /* HTTP code; 0 for transport errors */
	enum aj_kube_reason reason;
	char *reason_text;          /* reason as sent ("AlreadyExists"), or NULL */
	char *message;              /* server or transport message, or NULL */
	char *name;                 /* details.name, or NULL */
	char *group;                /* details.group, or NULL */
	char *kind;                 /* details.kind, or NULL */
	struct aj_kube_cause *causes;
	size_t nr_causes;
	size_t alloc_causes;
	long retry_after;           /* seconds; -1 when not given */
};

void aj_kube_status_init(struct aj_kube_status *st);
void aj_kube_status_release(struct aj_kube_status *st);

/*
 * Fill st from an HTTP answer: code, body (may be NULL/empty or not JSON)
 * and the Retry-After header value (NULL when absent; wins over
 * details.retryAfterSeconds). Releases what st held before. 0 / -1 (OOM).
 */
int aj_kube_status_decode(struct aj_kube_status *st, long code,
			  const char *body, size_t len, const char *retry_after);

/*
 * Same, from a Status object already parsed (the object of a watch ERROR
 * event). code is used when the object carries none.
 */
int aj_kube_status_from_json(struct aj_kube_status *st, long code,
			     const cJSON *obj);

/* Fill st for a transport failure with the given message. 0 / -1 (OOM). */
int aj_kube_status_transport(struct aj_kube_status *st, const char *message);

/* "AlreadyExists", "NotFound", ...; "Transport" and "Unknown" for the others. */
const char *aj_kube_reason_name(enum aj_kube_reason r);
/* Reason for an HTTP code with no Status body (client-go's mapping). */
enum aj_kube_reason aj_kube_reason_for_code(long code);

/* True for 410 Gone and Expired: the resourceVersion is too old, relist. */
int aj_kube_status_expired(const struct aj_kube_status *st);

/*
 * Record st in err as one entry: "<what>: <Reason> (HTTP <code>): <message>"
 * followed by one entry per cause ("<field>: <message>", key path = field).
 * Returns -1.
 */
int aj_kube_status_to_errors(const struct aj_kube_status *st, const char *what,
			     struct aj_errors *err);

#endif
