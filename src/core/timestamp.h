/*
 * timestamp.h - times as Kubernetes and Azure write them (RFC 3339, UTC).
 *
 * Pure: no clock is read here; callers pass the times. Nothing is
 * allocated: the caller owns every buffer.
 */
#ifndef AJ_CORE_TIMESTAMP_H
#define AJ_CORE_TIMESTAMP_H

#include <time.h>

/* "YYYY-MM-DDThh:mm:ssZ" and its NUL. */
#define AJ_TIMESTAMP_SIZE 21

/*
 * "YYYY-MM-DD[T ]hh:mm:ss[.fraction](Z|+00:00)" as Unix seconds, or -1
 * when s is not such a time. Without a zone the time is refused, or read
 * as local time when local_ok (the Azure CLI writes expiresOn that way).
 */
long long aj_timestamp_parse(const char *s, int local_ok);

/* t as "YYYY-MM-DDThh:mm:ssZ". */
void aj_timestamp_format(time_t t, char out[AJ_TIMESTAMP_SIZE]);

#endif
