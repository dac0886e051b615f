/* The azure runner (azure.h): a pure decide() and the steps around azure_forward.h. */
#include "azure.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "azure/aml.h"
#include "azure_forward.h"
#include "cache.h"
#include "core/buf.h"
#include "core/error.h"
#include "log.h"
#include "report.h"

#define NEED_PERMIT AJ_AZURE_NEED_PERMIT
#define NEED_JOB AJ_AZURE_NEED_JOB
#define DO_HOLD AJ_AZURE_DO_HOLD
#define DO_SUBMIT AJ_AZURE_DO_SUBMIT

/* --- decide (pure) --- */

static int is(const char *a, const char *b)
{
	return a && !strcmp(a, b);
}

static int ended(const struct aj_seen *s)
{
	return aj_aml_state_terminal(aj_aml_state_of(s->o.phase));
}

/* Seconds to the next poll: longer the longer nothing has changed. */
static double poll_delay(const struct aj_seen *s)
{
	double d = s->every;

	if (s->changed_at > 0 && s->now > s->changed_at)
		d += (double)(s->now - s->changed_at) / 10;
	return d > s->every * AJ_AZURE_POLL_STRETCH ? s->every * AJ_AZURE_POLL_STRETCH : d;
}

void aj_azure_tasks(const char *status, const char *name, long long replicas,
		    struct aj_owned_facts *f)
{
	struct aj_task_pods *t = &f->tasks[0];

	f->nr_tasks = 0;
	if (replicas <= 0)
		return;
	memset(t, 0, sizeof(*t));
	t->name = name ? name : AJ_AZURE_TASK;
	t->replicas = replicas;
	switch (aj_aml_state_of(status)) {
	case AJ_AML_QUEUED:
		t->pending = replicas;
		break;
	case AJ_AML_RUNNING:
		t->running = replicas;
		break;
	case AJ_AML_COMPLETED:
		t->succeeded = replicas;
		break;
	case AJ_AML_FAILED:
		t->failed = replicas;
		break;
	default:
		return;   /* cancelled: its nodes are gone, as a cancelled cluster job's pods */
	}
	f->nr_tasks = 1;
}

/* The job's state as the AjJob's phase; the next poll unless it ended. */
static void mirror(const struct aj_seen *s, struct aj_plan *p)
{
	static const enum aj_phase phases[] = {
		AJ_PHASE_SUBMITTED, AJ_PHASE_RUNNING, AJ_PHASE_SUCCEEDED, AJ_PHASE_FAILED,
		AJ_PHASE_CANCELLED
	};
	const char *status = s->o.phase ? s->o.phase : "NotStarted";
	char *c;

	p->act |= AJ_DO_STATUS;
	p->submitted = 1;
	p->phase = phases[aj_aml_state_of(s->o.phase)];
	snprintf(p->reason_buf, sizeof(p->reason_buf), "AzureJob%s", status);
	/* a reason is CamelCase: whatever else Azure says becomes '_' */
	for (c = p->reason_buf + 8; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9')))
			*c = '_';
	p->reason = p->reason_buf;
	snprintf(p->message, sizeof(p->message), "Azure ML job %s is %s", s->job, status);
	p->detail = s->detail;
	p->tasks = s->o.tasks;
	p->nr_tasks = s->o.nr_tasks;
	if (s->prev != p->phase)
		aj_plan_event(p, p->phase == AJ_PHASE_FAILED, p->reason, "Observe", p->message, 0);
	if (!ended(s))
		p->requeue_after = poll_delay(s);
}

/* The AjJob is being deleted: cancel its job, then let it go. */
static void finalize(const struct aj_seen *s, struct aj_plan *p)
{
	if (!(s->have & AJ_NEED_AJJOB))
		p->need |= AJ_NEED_AJJOB;
	else if (!s->held)
		return;   /* not (or no longer) ours to hold */
	else if (!(s->have & NEED_PERMIT))
		p->need |= NEED_PERMIT | NEED_JOB;
	else if (s->forbidden || !s->exists || ended(s))
		/* a workspace not allowed holds nothing of ours (its annotation was edited) */
		p->act |= AJ_DO_RELEASE;
	else {
		if (!is(s->o.phase, "CancelRequested"))
			p->act |= AJ_DO_DELETE;
		p->requeue_after = s->every;
	}
}

/* Nothing submitted for the AjJob yet (that it knows of). */
static void submit(const struct aj_seen *s, struct aj_plan *p)
{
	if (!(s->have & AJ_NEED_BUILD))
		p->need |= AJ_NEED_BUILD;
	else if (s->build_error)
		aj_plan_fail(p, "InvalidTemplate", "Forward", s->build_error);
	else if (!(s->have & NEED_PERMIT))
		p->need |= NEED_PERMIT | NEED_JOB;
	else if (s->forbidden)
		aj_plan_fail(p, "Forbidden", "Forward", s->forbidden);
	else if (!s->held)
		p->act |= DO_HOLD;   /* before anything exists in Azure */
	else if (s->exists)
		mirror(s, p);        /* submitted now, or before a lost reply or crash: adopted */
	else if (s->create == AJ_CREATE_REJECTED)
		aj_plan_fail(p, s->create_reason, "Forward", s->create_error ? s->create_error : "");
	else if (s->create == AJ_CREATE_RETRY)
		p->act |= AJ_DO_RETRY;
	else if (s->cancel)
		aj_plan_cancelled(p);
	else
		p->act |= DO_SUBMIT;
}

static void decide(const struct aj_seen *s, struct aj_plan *p)
{
	memset(p, 0, sizeof(*p));
	if (s->removing)
		finalize(s, p);
	else if (!s->submitted)
		submit(s, p);
	else if (!(s->have & NEED_JOB))
		p->need |= NEED_JOB;
	else if (!s->exists) {
		snprintf(p->note, sizeof(p->note), "Azure ML job %s no longer exists", s->job);
		aj_plan_fail(p, "AzureJobGone", "Forward", p->note);
	} else {
		if (s->cancel && !ended(s) && !is(s->o.phase, "CancelRequested"))
			p->act |= AJ_DO_DELETE;
		mirror(s, p);
	}
}

/* The attempt's state for fail-over (runner.h), from a GET of the job. */
static void attempt(const struct aj_seen *s, int cancelling, int *started, int *gone)
{
	enum aj_aml_state st = aj_aml_state_of(s->o.phase);

	*gone = !s->exists || st == AJ_AML_CANCELED;
	/* a cancelled job may still say Running (or CancelRequested) until Azure stops it */
	*started = s->exists && (st == AJ_AML_COMPLETED || st == AJ_AML_FAILED ||
				 (!cancelling && st == AJ_AML_RUNNING));
}

/* --- observe and act --- */

/* The reconcile's calls to Azure, made on first use. NULL with err (OOM). */
static struct aj_azure_call *call_of(struct aj_run *run, struct aj_errors *err)
{
	struct aj_run_scratch *sc = aj_run_scratch(run);
	struct aj_azure_call *c;

	if (sc->state)
		return sc->state;
	if (aj_azure_call_new(aj_run_config(run), aj_run_ajjob(run), aj_run_spec(run),
			      aj_run_key(run), &c, err))
		return NULL;
	sc->state = c;
	sc->state_free = aj_azure_call_free;
	return c;
}

/* The job as the call last read it into s. 0 / -1 (OOM). */
static int seen_job(struct aj_azure_call *c, int found, struct aj_seen *s, struct aj_errors *err)
{
	const struct aj_aml_job *job = aj_azure_call_read(c);

	s->exists = found;
	s->o.phase = found ? job->status : NULL;
	s->detail = found ? aj_azure_call_detail(c) : NULL;
	aj_azure_tasks(s->o.phase, job->task, found ? job->instances : 0, &s->o);
	return found && !s->detail ? aj_errors_oom(err) : 0;
}

static int observe(struct aj_run *run, unsigned need, struct aj_seen *s, struct aj_errors *err)
{
	struct aj_azure_call *c = call_of(run, err);
	int found;

	if (!c)
		return -1;
	s->job = aj_azure_call_job(c);
	s->every = aj_azure_poll(aj_run_config(run));
	if (need & NEED_PERMIT) {
		s->forbidden = aj_azure_call_forbidden(c);
		s->have |= NEED_PERMIT;
		if (s->forbidden && s->removing)
			aj_log(AJ_LOG_WARN, "workspace not allowed; finalizer removed without cancel",
			       "ajjob", aj_run_key(run), AJ_LOG_END);
	}
	/* a workspace the namespace may not use is not asked */
	if ((need & NEED_JOB) && !s->forbidden) {
		if ((found = aj_azure_call_get(c, err)) < 0 || seen_job(c, !found, s, err))
			return -1;
		if (!found && !s->submitted && !s->removing)
			aj_log(AJ_LOG_INFO, "adopted existing azure job", "ajjob", aj_run_key(run),
			       "azureJob", s->job, AJ_LOG_END);
	}
	s->have |= need & NEED_JOB;
	return 0;
}

/* DO_HOLD: the finalizer and the workspace annotation, in one merge patch. 0 / -1. */
static int hold(struct aj_run *run, struct aj_azure_call *c, struct aj_errors *err)
{
	const cJSON *meta = cJSON_GetObjectItemCaseSensitive(aj_run_ajjob(run)->object, "metadata");
	const cJSON *had = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
	cJSON *patch = cJSON_CreateObject(), *pm, *fins, *ann;

	pm = cJSON_AddObjectToObject(patch, "metadata");
	fins = had ? cJSON_Duplicate(had, 1) : cJSON_CreateArray();
	if (!pm || !fins || !cJSON_AddItemToObject(pm, "finalizers", fins)) {
		cJSON_Delete(fins);
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	if (!cJSON_AddItemToArray(fins, cJSON_CreateString(AJ_AZURE_FINALIZER)) ||
	    !(ann = cJSON_AddObjectToObject(pm, "annotations")) ||
	    !cJSON_AddStringToObject(ann, AJ_AZURE_WS_ANNOTATION, aj_azure_call_workspace(c))) {
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	return aj_run_patch_ajjob(run, patch, err);
}

/* problems as text the rest of the reconcile keeps (scratch.keep); NULL: OOM. */
static const char *kept_text(struct aj_run *run, const struct aj_errors *problems)
{
	struct aj_run_scratch *sc = aj_run_scratch(run);
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *text = NULL;

	aj_errors_format_line(problems, &b);
	if (sc->keep || (sc->keep = cJSON_CreateArray()))
		text = cJSON_CreateString(b.failed ? "(message too long)" : aj_buf_cstr(&b));
	if (text && !cJSON_AddItemToArray(sc->keep, text)) {
		cJSON_Delete(text);
		text = NULL;
	}
	aj_buf_release(&b);
	return text ? cJSON_GetStringValue(text) : NULL;
}

/* DO_SUBMIT: the submit's outcome into s (an error is a fact: the AjJob's or Azure's). 0 / -1. */
static int submit_job(struct aj_run *run, struct aj_azure_call *c, struct aj_seen *s,
		      struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT, serr = AJ_ERRORS_INIT;
	const char *reason = NULL;
	int created, r;

	r = aj_azure_call_submit(c, aj_run_spec(run), cJSON_GetArrayItem(aj_run_built(run), 0),
				 &created, &reason, &problems, &serr);
	s->done |= DO_SUBMIT;
	if (!r) {
		aj_log(AJ_LOG_INFO, created ? "submitted azure job" : "azure job already there",
		       "ajjob", aj_run_key(run), "azureJob", s->job, AJ_LOG_END);
		r = seen_job(c, 1, s, err);
	} else if (problems.oom || serr.oom) {
		r = aj_errors_oom(err);
	} else {
		s->create = r > 0 ? AJ_CREATE_REJECTED : AJ_CREATE_RETRY;
		s->create_reason = reason;
		s->create_error = kept_text(run, r > 0 ? &problems : &serr);
		r = s->create_error ? 0 : aj_errors_oom(err);
	}
	aj_errors_release(&problems);
	aj_errors_release(&serr);
	return r;
}

static int act(struct aj_run *run, unsigned act, struct aj_seen *s, struct aj_errors *err)
{
	struct aj_azure_call *c = call_of(run, err);

	if (!c)
		return -1;
	if (act & DO_HOLD) {
		if (hold(run, c, err))
			return -1;
		s->held = 1;
		s->done |= DO_HOLD;
		return 0;
	}
	return (act & DO_SUBMIT) ? submit_job(run, c, s, err) : 0;
}

/* AJ_DO_DELETE: POST cancel; a job gone already is found so on the next poll. */
static int cancel(struct aj_run *run, struct aj_errors *err)
{
	struct aj_azure_call *c = call_of(run, err);

	if (!c || aj_azure_call_cancel(c, err) < 0)
		return -1;
	aj_log(AJ_LOG_INFO, aj_run_ajjob(run)->deleting ? "ajjob deleted; azure job cancel requested"
							: "cancel requested",
	       "ajjob", aj_run_key(run), "azureJob", aj_azure_call_job(c), AJ_LOG_END);
	return 0;
}

/* --- configuration --- */

/* A poll interval: seconds, at least a tenth. 0 / -1. */
static int poll_seconds(const char *v, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || !(d >= 0.1))
		return -1;
	*out = d;
	return 0;
}

static int check_poll(const char *v)
{
	double d;

	return poll_seconds(v, &d);
}

enum { OPT_WORKSPACE, OPT_ALLOW, OPT_ARM_ENDPOINT, OPT_POLL };

static const struct aj_runner_option options[] = {
	[OPT_WORKSPACE] = { "azure-workspace", "AJ_AZURE_WORKSPACE", "S/RG/W", "default workspace",
			    NULL },
	[OPT_ALLOW] = { "azure-allow", "AJ_AZURE_ALLOW", "RULES", "NS=workspace:S/RG/W,vc:S/RG/VC;...",
			NULL },
	[OPT_ARM_ENDPOINT] = { "azure-arm-endpoint", "AJ_AZURE_ARM_ENDPOINT", "URL", "ARM endpoint",
			       NULL },
	[OPT_POLL] = { "azure-poll", "AJ_AZURE_POLL_SECONDS", "SECONDS",
		       "job status poll interval (30)", check_poll },
	{ NULL, NULL, NULL, NULL, NULL }
};

/* The forwarder, with a workspace; none (aml and sing not served) without. */
static int configure(const char *const *values, const struct aj_runner_env *env, void **config,
		     struct aj_errors *err)
{
	struct aj_azure_opts o = { values[OPT_WORKSPACE], values[OPT_ALLOW],
				   values[OPT_ARM_ENDPOINT], env->ca_file, env->identity_client_id,
				   0 };
	struct aj_azure_forwarder *f;

	*config = NULL;
	if (!o.workspace)
		return 0;
	if (values[OPT_POLL] && poll_seconds(values[OPT_POLL], &o.poll_seconds))
		return aj_errors_add(err, NULL, "--azure-poll: \"%s\" is not a number of seconds "
				     "of at least 0.1", values[OPT_POLL]);
	if (aj_azure_forwarder_new(&o, env->tokens, &f, err))
		return -1;
	*config = f;
	return 0;
}

static void config_free(void *config)
{
	aj_azure_forwarder_free(config);
}

static const char *const service_names[] = { "aml", "sing", NULL };

const struct aj_runner aj_runner_azure = {
	.name = "azure",
	.services = service_names,
	.kind = "Azure ML job",
	.reason_prefix = "AzureJob",
	.status_member = "azure",
	.finalizer = AJ_AZURE_FINALIZER,
	.member_whole = 1,
	.options_title = "Azure ML / Singularity forwarding (on with a workspace; identity from "
			 "AZURE_* variables):",
	.options = options,
	.configure = configure,
	.config_free = config_free,
	.decide = decide,
	.observe = observe,
	.act = act,
	.cancel = cancel,
	.read_views = aj_azure_read_views,
	.views_workspace = aj_azure_views_workspace,
	.views_every = AJ_AZURE_VIEWS_EVERY,
	.attempt_needs = NEED_PERMIT | NEED_JOB,
	.attempt = attempt,
};
