#include "jobmetrics.h"

#include <string.h>

#include "backend/backend.h"
#include "metrics.h"

#define UNKNOWN_ROW (AJ_JOBTALLY_ROWS - 1)

/* Jobs take seconds to days: 1 s .. 24 h. */
static const double spans[] = {
	1, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 43200, 86400
};

static size_t backend_count(void)
{
	const struct aj_backend *const *all = aj_backend_all();
	size_t n = 0;

	while (all[n])
		n++;
	return n;
}

/* The row of a backend name in a tally. */
static size_t backend_row(const char *backend)
{
	const struct aj_backend *const *all = aj_backend_all();
	size_t i;

	for (i = 0; backend && all[i] && i < UNKNOWN_ROW; i++)
		if (!strcmp(all[i]->name, backend))
			return i;
	return UNKNOWN_ROW;
}

static const char *row_name(size_t row)
{
	return row == UNKNOWN_ROW ? "unknown" : aj_backend_all()[row]->name;
}

int aj_jobmetrics_register(struct aj_metrics *m)
{
	size_t n = sizeof(spans) / sizeof(spans[0]);

	if (backend_count() > UNKNOWN_ROW)
		return -1;
	return aj_metrics_register(m, AJ_JOBMETRICS_JOBS, AJ_METRIC_GAUGE,
				   "AjJobs by phase and backend.", NULL, 0) ||
	       aj_metrics_register(m, AJ_JOBMETRICS_TO_RUNNING, AJ_METRIC_HISTOGRAM,
				   "Seconds from an AjJob's creation until it was first seen Running.",
				   spans, n) ||
	       aj_metrics_register(m, AJ_JOBMETRICS_DURATION, AJ_METRIC_HISTOGRAM,
				   "Seconds from Running (or creation, when Running was never seen) "
				   "until an AjJob finished, by outcome.", spans, n) ||
	       aj_metrics_register(m, AJ_JOBMETRICS_EXPIRED, AJ_METRIC_COUNTER,
				   "Finished AjJobs deleted after their ttlSecondsAfterFinished.",
				   NULL, 0) ? -1 : 0;
}

int aj_jobmetrics_expired(struct aj_metrics *m, const char *backend)
{
	char labels[128];

	return aj_metrics_labels(labels, sizeof(labels), "backend",
				 row_name(backend_row(backend)), (const char *)NULL) ||
	       aj_metrics_add(m, AJ_JOBMETRICS_EXPIRED, labels, 1) ? -1 : 0;
}

static double span(long long from, long long to)
{
	return to > from ? (double)(to - from) : 0;
}

int aj_jobmetrics_transition(struct aj_metrics *m, const char *backend,
			     enum aj_phase from, enum aj_phase to,
			     long long created_unix, long long running_unix,
			     long long now_unix)
{
	const char *b = row_name(backend_row(backend));
	char labels[128];

	if (to == AJ_PHASE_RUNNING && aj_phase_rank(from) < aj_phase_rank(AJ_PHASE_RUNNING))
		return aj_metrics_labels(labels, sizeof(labels), "backend", b, (const char *)NULL) ||
		       aj_metrics_observe(m, AJ_JOBMETRICS_TO_RUNNING, labels,
					  span(created_unix, now_unix)) ? -1 : 0;
	if (aj_phase_terminal(to) && !aj_phase_terminal(from))
		return aj_metrics_labels(labels, sizeof(labels), "outcome", aj_phase_name(to),
					 "backend", b, (const char *)NULL) ||
		       aj_metrics_observe(m, AJ_JOBMETRICS_DURATION, labels,
					  span(running_unix ? running_unix : created_unix,
					       now_unix)) ? -1 : 0;
	return 0;
}

void aj_jobtally_init(struct aj_jobtally *t)
{
	memset(t, 0, sizeof(*t));
}

void aj_jobtally_count(struct aj_jobtally *t, const char *backend, enum aj_phase phase)
{
	if ((unsigned)phase < AJ_JOBMETRICS_PHASES)
		t->n[backend_row(backend)][phase]++;
}

int aj_jobmetrics_tally(struct aj_metrics *m, const struct aj_jobtally *t)
{
	size_t nb = backend_count(), row, p;
	char labels[128];

	for (row = 0; row < AJ_JOBTALLY_ROWS; row++) {
		if (row >= nb && row != UNKNOWN_ROW)
			continue;
		for (p = 0; p < AJ_JOBMETRICS_PHASES; p++)
			if (aj_metrics_labels(labels, sizeof(labels), "phase",
					      aj_phase_name((enum aj_phase)p), "backend",
					      row_name(row), (const char *)NULL) ||
			    aj_metrics_set(m, AJ_JOBMETRICS_JOBS, labels, (double)t->n[row][p]))
				return -1;
	}
	return 0;
}
