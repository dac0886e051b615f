/*
 * controller.h - the aj-controller process: watches, cache, work queue,
 * workers, leader election and the health/metrics endpoints, wired together.
 *
 *   watch loop (main thread) ──► cache ──► work queue ──► workers (reconcile)
 *   lease thread: acquire, renew; losing the lease stops the process
 *   health thread: /healthz /readyz /metrics
 *
 * Nothing starts reconciling before this instance leads (when leader
 * election is on). SIGTERM stops the watches, lets each worker finish the
 * AjJob in hand, releases the lease and returns 0.
 */
#ifndef AJ_CONTROLLER_H
#define AJ_CONTROLLER_H

#include <stdatomic.h>

#include "cache.h"
#include "runner/runner.h"
#include "storage.h"

struct aj_errors;

struct aj_controller_opts {
	const char *kubeconfig;        /* NULL: KUBECONFIG, ~/.kube/config, in-cluster */
	const char *context;
	const char *watch_namespace;   /* NULL or "": every namespace */
	int workers;                   /* concurrent reconciles (2) */
	double qps;                    /* API requests per second, all clients (20) */
	int burst;                     /* (40) */
	const char *health_addr;       /* "0.0.0.0" */
	int health_port;               /* 8081; 0 picks a free port */
	const char *port_file;         /* write the bound health port here (tests) */
	int leader_elect;
	const char *lease_namespace;   /* default: the kubeconfig's namespace */
	const char *lease_name;        /* "aj-controller" */
	const char *identity;          /* default: host name + pid */
	/* comma-separated namespaces where jobs may add capabilities or mount
	 * storage, "*" for all; NULL: none */
	const char *privileged_namespaces;
	/* seconds a finished AjJob is kept unless its spec says; 0: forever (the default) */
	long ttl_after_finished;
	/* the controller's Azure identity (identity.h), for the storage SAS and the runners */
	const char *identity_ca_file;      /* CA bundle for Azure endpoints; NULL: the system's */
	const char *identity_client_id;    /* a user-assigned managed identity, or NULL */
	struct aj_storage_opts storage; /* SAS for storage mounts and blob code */
	/* each runner's option values (runner.h), by slot and option; NULL: not given */
	const char *runner_values[AJ_RUNNERS_MAX][AJ_RUNNER_OPTIONS_MAX];
};

void aj_controller_opts_defaults(struct aj_controller_opts *o);

/*
 * Run until *stop becomes non-zero (0; a signal handler may set it: the
 * type is lock free), or until leadership is lost or a fatal error happens
 * (-1 with err).
 */
int aj_controller_run(const struct aj_controller_opts *o, atomic_int *stop,
		      struct aj_errors *err);

#endif
