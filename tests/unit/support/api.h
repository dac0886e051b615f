/*
 * api.h - the controller's reconciler driven end to end without a cluster:
 * tests/peers/ajjob_peer.py as the API server (its objects.json store), a
 * client of it, the cache the watches would fill and a reconciler over both.
 *
 * Ownership: the fixture owns the peer, the client, the cache and the
 * certificates' directory until aj_test_api_stop(); objects returned are
 * the caller's (cJSON_Delete).
 */
#ifndef AJ_TEST_API_H
#define AJ_TEST_API_H

#include <cjson/cJSON.h>

#include "cache.h"
#include "kube/client.h"
#include "peer.h"
#include "reconcile.h"

struct aj_test_api {
	struct aj_test_peer p;
	struct aj_kube k;
	struct aj_cache cache;
	struct aj_reconciler rec;
	char *certs;
};

/*
 * The store of the tests: AjJob ml/train (uid u-1, generation 1) of an
 * inline template for `service` running `python train.py` on one C2 node,
 * in JSON for aj_test_api_start() (static buffer).
 */
const char *aj_test_api_train(const char *service);

/* Start the peer with objects ({path: object} JSON) and a reconciler over an empty cache. */
void aj_test_api_start(struct aj_test_api *a, const char *objects);
void aj_test_api_stop(struct aj_test_api *a);

/* The object at an API path as the server holds it now, or NULL. */
cJSON *aj_test_api_get(const struct aj_test_api *a, const char *path);
/* Change an object on the server: a JSON merge patch of the one at path. */
void aj_test_api_patch(const struct aj_test_api *a, const char *path, const char *patch);
/* The objects under a collection path (Events: /api/v1/namespaces/NS/events). */
cJSON *aj_test_api_list(const struct aj_test_api *a, const char *collection);

/*
 * How many GETs of path (no query string) the peer answered; with
 * first_query, the first one's query (a JSON object of lists, the
 * caller's; NULL when there was none).
 */
size_t aj_test_api_gets(const struct aj_test_api *a, const char *path, cJSON **first_query);

/* The Events posted in namespace ns: their reasons, sorted, space-separated, must be want. */
void aj_test_api_events_are(const struct aj_test_api *a, const char *ns, const char *want);
/* status.<key> of an AjJob as a string, or NULL. */
const char *aj_test_status_of(const cJSON *ajjob, const char *key);

/* What the watches would do: the server's AjJob at path into the cache. */
void aj_test_api_watch_ajjob(struct aj_test_api *a, const char *path);
/* ...and an object runner rn owns. */
void aj_test_api_watch_owned(struct aj_test_api *a, const struct aj_runner *rn, const char *path);

/*
 * The AjJob at path (key "ns/name") due for its look at the scheduler: with
 * long_ago, submitted in 2020 (its conditions replaced by Submitted alone);
 * into the cache with its reason_due passed.
 */
void aj_test_api_look_due(struct aj_test_api *a, const char *path, const char *key, int long_ago);

/* One reconcile of key; fails the test unless it ends with kind (and, when again, about after, and level). */
void aj_test_api_reconcile(struct aj_test_api *a, const char *key, enum aj_action_kind kind,
			   double after, enum aj_action_level level);

#endif
