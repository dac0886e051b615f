/*
 * Prints a /metrics page the way the controller renders it (metrics.c, with
 * the AjJob families of jobmetrics.c and label values that need escaping),
 * for promtool to parse: test-exposition.sh.
 */
#include <stdio.h>

#include "core/buf.h"
#include "jobmetrics.h"
#include "metrics.h"

int main(void)
{
	static const double bounds[] = { 0.005, 0.5, 60 };
	struct aj_metrics m;
	struct aj_buf out = AJ_BUF_INIT(1 << 20);
	struct aj_jobtally t;
	char labels[256];
	int rc = 1;

	if (aj_metrics_init(&m))
		return 1;
	aj_jobtally_init(&t);
	aj_jobtally_count(&t, "volcano", AJ_PHASE_RUNNING);
	aj_jobtally_count(&t, "aml", AJ_PHASE_SUCCEEDED);
	aj_jobtally_count(&t, NULL, AJ_PHASE_PENDING);
	if (aj_jobmetrics_register(&m) ||
	    aj_metrics_register(&m, "rest_client_requests_total", AJ_METRIC_COUNTER,
				"Number of HTTP requests, partitioned by status code and method.", NULL, 0) ||
	    aj_metrics_register(&m, "controller_runtime_reconcile_time_seconds", AJ_METRIC_HISTOGRAM,
				"Length of time per reconciliation per controller.", bounds, 3) ||
	    aj_metrics_labels(labels, sizeof(labels), "code", "<error>", "method", "GET \"quoted\" \\ and\nnewline",
			      (const char *)NULL) ||
	    aj_metrics_add(&m, "rest_client_requests_total", labels, 3) ||
	    aj_metrics_observe(&m, "controller_runtime_reconcile_time_seconds", "controller=\"ajjob\"", 0.01) ||
	    aj_jobmetrics_tally(&m, &t) ||
	    aj_jobmetrics_transition(&m, "volcano", AJ_PHASE_SUBMITTED, AJ_PHASE_RUNNING, 100, 0, 160) ||
	    aj_jobmetrics_transition(&m, "aml", AJ_PHASE_RUNNING, AJ_PHASE_SUCCEEDED, 100, 160, 7360) ||
	    aj_jobmetrics_transition(&m, "sing", AJ_PHASE_CANCELLING, AJ_PHASE_CANCELLED, 100, 0, 101) ||
	    aj_metrics_render(&m, &out))
		goto done;
	rc = fwrite(aj_buf_cstr(&out), 1, out.len, stdout) == out.len ? 0 : 1;
done:
	aj_buf_release(&out);
	aj_metrics_release(&m);
	return rc;
}
