/*
 * metrics.h - a small Prometheus metrics registry rendered in the text
 * exposition format (version 0.0.4) on /metrics.
 *
 * Families are registered once at start-up with their type and help text;
 * series are created on first use, keyed by their label set, written as
 * Prometheus writes them (`controller="ajjob",result="success"`; build it
 * with aj_metrics_labels(), which escapes values). The controller reuses
 * controller-runtime's metric names so existing dashboards work.
 *
 * Thread-safe. Ownership: the registry owns everything; aj_metrics_release()
 * frees it.
 */
#ifndef AJ_METRICS_H
#define AJ_METRICS_H

#include <pthread.h>
#include <stddef.h>

struct aj_buf;

enum aj_metric_type { AJ_METRIC_COUNTER, AJ_METRIC_GAUGE, AJ_METRIC_HISTOGRAM };

struct aj_metric_series {
	char *labels;
	double value;             /* counter / gauge */
	unsigned long *buckets;   /* histogram: cumulative counts per bound */
	double sum;
	unsigned long count;
};

struct aj_metric_family {
	char *name;
	char *help;
	enum aj_metric_type type;
	double *bounds;           /* histogram upper bounds, ascending */
	size_t nbounds;
	struct aj_metric_series *series;
	size_t nr, alloc;
};

struct aj_metrics {
	pthread_mutex_t lock;
	struct aj_metric_family *families;
	size_t nr, alloc;
};

int aj_metrics_init(struct aj_metrics *m);
void aj_metrics_release(struct aj_metrics *m);

/* bounds/nbounds only for histograms. 0 / -1. */
int aj_metrics_register(struct aj_metrics *m, const char *name,
			enum aj_metric_type type, const char *help,
			const double *bounds, size_t nbounds);

/*
 * Label set text from name/value pairs ended by a (const char *)NULL,
 * values escaped: aj_metrics_labels(out, sizeof(out), "controller", "ajjob",
 * (const char *)NULL).
 * Returns 0, or -1 if it did not fit.
 */
int aj_metrics_labels(char *out, size_t size, ...);

/*
 * Updates; an unknown family, a wrong type or out of memory returns -1 and
 * changes nothing. set() works on gauges and on counters whose running total
 * is kept elsewhere (mirrored when scraped).
 */
int aj_metrics_add(struct aj_metrics *m, const char *name, const char *labels, double v);
int aj_metrics_set(struct aj_metrics *m, const char *name, const char *labels, double v);
int aj_metrics_observe(struct aj_metrics *m, const char *name, const char *labels, double v);

/* Append the exposition text of every family. */
int aj_metrics_render(struct aj_metrics *m, struct aj_buf *out);

#endif
