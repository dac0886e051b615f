/*
 * runhistory.h - the Azure ML data-plane calls `aj logs` makes for a job,
 * the ones `az ml job stream` makes: the workspace's discovery document
 * (its "api" endpoint), the run's details (status and logFiles, name ->
 * SAS URL) from the run history, and ranged reads of one log file.
 *
 * Secrets: the run history is asked with the ARM bearer token; a log file
 * is read by its SAS URL alone (no token is sent there), and errors name
 * the file's URL without its query, never the SAS.
 *
 * Ownership: the ARM client is borrowed; strings and JSON handed out are
 * the caller's (aj_free, cJSON_Delete).
 */
#ifndef AJ_AZURE_RUNHISTORY_H
#define AJ_AZURE_RUNHISTORY_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "azure/http.h"

struct aj_arm;
struct aj_errors;

/*
 * The data-plane endpoint of workspace ws_id (an ARM id): GET the
 * workspace, then its properties.discoveryUrl, whose "api" is the answer
 * (*base, without a trailing slash).
 */
int aj_runhistory_endpoint(struct aj_arm *a, const char *ws_id, char **base,
			   struct aj_errors *err);

/*
 * GET {base}/history/v1.0{ws_id}/runs/{run}/details into *details. 0
 * found, 1 when the run history does not know the run (yet), -1 failed.
 */
int aj_runhistory_details(struct aj_arm *a, const char *base, const char *ws_id,
			  const char *run, cJSON **details, struct aj_errors *err);

/*
 * GET bytes [offset, offset + len) of the blob at sas_url with the
 * storage retry policy. 0 when an answer came (resp: its status and
 * body, for aj_amllogs_judge), -1 when none did.
 */
int aj_runhistory_read(struct aj_http *h, const char *sas_url, int64_t offset, size_t len,
		       struct aj_http_response *resp, struct aj_errors *err);

#endif
