/*
 * azure.h - the azure runner (runner.h): aml and sing AjJobs become
 * Azure ML jobs (azure_forward.h does the calls). It owns nothing in the
 * cluster: its job lives in Azure, is named in status.azure.jobName, and is
 * polled rather than watched. Its decide() reads, in this order:
 *
 *   the AjJob being deleted   its finalizer aj.dev/azure-job gone: nothing
 *                             to do; the workspace not allowed (an edited
 *                             annotation), or the job terminal or gone:
 *                             remove the finalizer; else POST cancel (not
 *                             again while CancelRequested) and look again
 *                             every poll interval
 *   not submitted             resolve and build (InvalidTemplate); the
 *                             namespace may not use the workspace
 *                             (Forbidden); add the finalizer and the
 *                             annotation aj.dev/azure-workspace; a job
 *                             already there under the derived name is
 *                             adopted; cancelled before submission; submit
 *                             (NoCompute, CodeUnavailable, AzureRejected;
 *                             throttling and outages: back off and retry)
 *   submitted                 the job gone: Failed (AzureJobGone); cancel
 *                             asked and the job not ended: POST cancel;
 *                             then mirror it
 *
 * Mirroring: NotStarted .. Queued Submitted, Running (and Finalizing,
 * CancelRequested, NotResponding, Paused) Running, Completed Succeeded,
 * Failed Failed, Canceled Cancelled, under reason "AzureJob<status>";
 * status.azure is written whole from the job, and status.tasks holds its
 * one task (aj_azure_tasks: named by the job's k8s-task tag, its instance
 * count as replicas). A job not ended is polled
 * again after the poll interval plus a tenth of the time since the status
 * last changed, at most AJ_AZURE_POLL_STRETCH intervals.
 *
 * Fail-over (placement's max_wait): an attempt is read with a GET of its
 * job; it has started when Running (or ended on its own), and once
 * cancelled it is gone when Azure reports it Canceled (or the job is not
 * there); only a Completed or Failed end then shows it ran meanwhile. A
 * job of attempt n > 1 is named from the uid and n (aml.h), so that the
 * next attempt never meets the Canceled one.
 *
 * Configuration: its options (--azure-workspace, --azure-allow,
 * --azure-arm-endpoint, --azure-poll and their AJ_AZURE_* variables) and
 * the controller's identity make the struct aj_azure_forwarder its
 * configure hook returns; without a workspace aml and sing are not served.
 */
#ifndef AJ_RUNNER_AZURE_H
#define AJ_RUNNER_AZURE_H

#include "runner.h"

extern const struct aj_runner aj_runner_azure;

#define AJ_AZURE_FINALIZER "aj.dev/azure-job"
#define AJ_AZURE_POLL_STRETCH 20
/* Seconds between reads of placement's Azure view (computes, VC quotas): ARM is spared. */
#define AJ_AZURE_VIEWS_EVERY 30
/* Its needs and steps (runner.h). */
#define AJ_AZURE_NEED_PERMIT AJ_NEED_RUNNER        /* forbidden, every */
#define AJ_AZURE_NEED_JOB (AJ_NEED_RUNNER << 1)    /* GET: exists, o.phase, detail */
#define AJ_AZURE_DO_HOLD AJ_DO_RUNNER              /* add the finalizer and annotation */
#define AJ_AZURE_DO_SUBMIT (AJ_DO_RUNNER << 1)     /* complete the body and PUT it */

/* A job's one task when it does not say its name (submitted without the k8s-task tag). */
#define AJ_AZURE_TASK "main"

/*
 * status.tasks of a job in status (Azure's word) running replicas instances
 * of task name (NULL: AJ_AZURE_TASK): all pending while queued, running
 * while running, succeeded or failed at the end; none when cancelled or
 * replicas is unknown (0). Into f->tasks[0] and f->nr_tasks; pure.
 */
void aj_azure_tasks(const char *status, const char *name, long long replicas,
		    struct aj_owned_facts *f);

#endif
