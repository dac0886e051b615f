/*
 * health.h - the controller's HTTP endpoints for the kubelet and Prometheus:
 *   GET /healthz  200 "ok" while the process serves at all (liveness);
 *   GET /readyz   200 "ok" when ready(), else 503 with the reason (readiness:
 *                 CRDs present, permissions granted, caches synced);
 *   GET /metrics  the Prometheus text from metrics().
 * Anything else is 404. Served by libwebsockets on its own thread.
 *
 * Ownership: the server owns its context and thread; aj_health_stop() joins
 * and frees them. The callbacks must be thread-safe; they fill the buffer
 * they are given.
 */
#ifndef AJ_HEALTH_H
#define AJ_HEALTH_H

#include <pthread.h>
#include <stdatomic.h>

struct aj_buf;
struct aj_errors;
struct lws_context;

struct aj_health_ops {
	/* 1 ready, 0 not (why filled). */
	int (*ready)(void *ctx, struct aj_buf *why);
	int (*metrics)(void *ctx, struct aj_buf *out);
	void *ctx;
};

struct aj_health_server {
	struct lws_context *lws;
	pthread_t thread;
	int running;
	atomic_int stop;          /* set by aj_health_stop(), read by the server thread */
	int port;                 /* the bound port (useful with port 0) */
	struct aj_health_ops ops;
};

/* Listen on addr:port (port 0: any free port). 0 / -1. */
int aj_health_start(struct aj_health_server *s, const char *addr, int port,
		    const struct aj_health_ops *ops, struct aj_errors *err);
void aj_health_stop(struct aj_health_server *s);

#endif
