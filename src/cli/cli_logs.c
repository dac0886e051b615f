/*
 * cli_logs.c - `aj logs NAME`: the container logs of an AjJob's pods,
 * read through the API server (pods/log), merged line by line with a
 * "[task-rank] " prefix.
 *
 * Pods are found by the label aj.dev/ajjob=NAME (and aj.dev/task with
 * --task) that every cluster backend puts on its pods; the rank is the pod
 * annotation the backend names (struct aj_backend.rank_annotation), the
 * task the label aj.dev/task.
 *
 * Without -f the pods are read one after the other, in task and rank order.
 * With -f every pod has its own stream (kube/stream.h: one libcurl multi
 * handle, one thread) and the pod list and the AjJob are read again every
 * AJ_LOGS_POLL_MS: a new pod (a restart) gets a stream, a pod that is not
 * running yet is said to be awaited, a deleted one is said to be gone, a
 * stream that ended while its pod runs (the API server or kubelet dropped
 * it) is asked again from the newest timestamp seen (sinceTime; the lines
 * already shown are dropped, core/logline.h), and once the AjJob has ended
 * every pod that ran is read to the end of its log (drain()). Memory is bounded per stream:
 * libcurl's receive buffer (16 KiB) and one unfinished line of at most
 * AJ_LOGLINE_MAX (64 KiB, longer lines are cut into lines of that size), so
 * a 100-pod job holds at most about 8 MiB of log data.
 *
 * An AjJob whose backend runs outside the cluster is read there
 * (cli_logs_aml.c); with -f one the controller has not forwarded yet is
 * awaited like pods that have not started (said once, the AjJob read again
 * every period), then followed to its end.
 *
 * Every stream asks for timestamps (to resume); they are shown only with
 * --timestamps. Bytes are written as they came. Ctrl-C ends at once with
 * exit status 130, the job untouched.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "cli.h"
#include "cli_kube.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/logline.h"
#include "kube/client.h"
#include "kube/stream.h"

#define AJ_LOGS_POLL_MS 2000
/* Interrupt checks while a period passes with no stream open. */
#define AJ_LOGS_SLICE_MS 100
/* Failed streams of one pod in a row before aj gives up on it. */
#define AJ_LOGS_MAX_FAILURES 5
/* Once the AjJob has ended, how long its pods' streams may take to end by themselves. */
#define AJ_LOGS_DRAIN_MS 15000
#define AJ_LOGS_TASK_LABEL "aj.dev/task"
#define AJ_LOGS_JOB_LABEL "aj.dev/ajjob"

struct logs;

struct pod {
	char *uid, *name, *container, *prefix;
	char *task;
	long rank;                 /* -1: the pod has no rank annotation */
	struct aj_logline lines;
	struct aj_kube_stream *stream;
	int opened;                /* a stream was opened (later ones resume) */
	int ended;                 /* the last stream ended by itself */
	int done;                  /* nothing more to read */
	int said_waiting;
	int finished_polls;        /* polls that saw it finished with its stream open */
	int in_list;
	int failures;
	struct logs *l;
};

struct logs {
	struct aj_kube *k;
	const char *ns, *name;
	const struct aj_cli_logs_opts *o;
	int follow;
	struct aj_kube_streams streams;
	struct pod **pods;
	size_t nr, alloc;
	const char *rank_annotation;
	struct aj_buf line;        /* the output line being written */
	int ending;                /* the AjJob has ended: its streams drain */
	int failed;                /* some pod's logs could not be read */
	int write_failed;
	int outside;               /* the backend runs outside the cluster: read there */
	int awaiting_outside;      /* ...once the controller has forwarded the job (-f) */
	int outside_rc;            /* ...with this exit status */
	char **phase;              /* where the final phase goes, or NULL */
	struct aj_errors *err;
};

static struct aj_kube_streams *active;
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
	if (active)
		aj_kube_streams_stop(active);
}

/* Sleep ms, waking for Ctrl-C. */
static void pause_ms(long ms)
{
	const struct timespec slice = { 0, AJ_LOGS_SLICE_MS * 1000000L };

	for (; ms > 0 && !interrupted; ms -= AJ_LOGS_SLICE_MS)
		nanosleep(&slice, NULL);
}

static const struct aj_kube_resource pods_res = { "", "v1", "pods", 1 };

static void pod_free(struct pod *p)
{
	if (!p)
		return;
	aj_logline_release(&p->lines);
	aj_free(p->uid);
	aj_free(p->name);
	aj_free(p->container);
	aj_free(p->prefix);
	aj_free(p->task);
	aj_free(p);
}

/* --- output --- */

static int emit(void *ctx, const char *ts, size_t ts_len, const char *text, size_t len, int eol)
{
	struct pod *p = ctx;
	struct aj_buf *b = &p->l->line;

	(void)eol;   /* a piece of a longer line is a line of its own */
	aj_buf_reset(b);
	aj_buf_addstr(b, p->prefix);
	if (ts && p->l->o->timestamps) {
		aj_buf_add(b, ts, ts_len);
		aj_buf_addch(b, ' ');
	}
	aj_buf_add(b, text, len);
	aj_buf_addch(b, '\n');
	if (b->failed)
		return aj_errors_oom(p->l->err);
	if (fwrite(b->buf, 1, b->len, stdout) != b->len) {
		p->l->write_failed = 1;
		return -1;
	}
	return 0;
}

/* Nothing more comes from p: its unfinished line is shown. */
static void pod_done(struct logs *l, struct pod *p)
{
	if (p->stream)
		aj_kube_stream_close(&l->streams, p->stream);
	p->stream = NULL;
	if (!p->done)
		aj_logline_flush(&p->lines, emit, p);
	p->done = 1;
	fflush(stdout);
}

/* --- pods --- */

static int pod_started(const cJSON *pod)
{
	const cJSON *cs = cJSON_GetArrayItem(aj_cli_at(pod, "status.containerStatuses"), 0);

	return aj_cli_at(cs, "state.running") || aj_cli_at(cs, "state.terminated");
}

static int pod_finished(const cJSON *pod)
{
	const char *phase = aj_cli_str_at(pod, "status.phase");

	return phase && (!strcmp(phase, "Succeeded") || !strcmp(phase, "Failed"));
}

/* Why a pod waits: its scheduling condition's message, or its container's reason. */
static const char *waiting_reason(const cJSON *pod)
{
	const cJSON *c, *cs;

	cJSON_ArrayForEach(c, aj_cli_at(pod, "status.conditions")) {
		const char *type = aj_cli_str_at(c, "type"), *status = aj_cli_str_at(c, "status");

		if (type && status && !strcmp(type, "PodScheduled") && strcmp(status, "True"))
			return aj_cli_str_at(c, "message") ? aj_cli_str_at(c, "message")
							  : aj_cli_str_at(c, "reason");
	}
	cs = cJSON_GetArrayItem(aj_cli_at(pod, "status.containerStatuses"), 0);
	return aj_cli_str_at(cs, "state.waiting.reason");
}

/*
 * The pod's rank from its backend's annotation; before the AjJob's status
 * names the backend (a pod may come first), from the first annotation of
 * any cluster backend the pod carries.
 */
static long rank_of(const struct logs *l, const cJSON *pod)
{
	const cJSON *ann = aj_cli_at(pod, "metadata.annotations");
	const cJSON *v = l->rank_annotation ?
			 cJSON_GetObjectItemCaseSensitive(ann, l->rank_annotation) : NULL;
	const struct aj_backend *const *be;
	char *end;
	long r;

	for (be = aj_backend_all(); !l->rank_annotation && !v && *be; be++)
		if ((*be)->rank_annotation)
			v = cJSON_GetObjectItemCaseSensitive(ann, (*be)->rank_annotation);

	if (!cJSON_IsString(v) || !*v->valuestring)
		return -1;
	r = strtol(v->valuestring, &end, 10);
	return *end || r < 0 ? -1 : r;
}

static struct pod *pod_new(struct logs *l, const cJSON *item)
{
	const char *uid = aj_cli_str_at(item, "metadata.uid"), *name = aj_cli_str_at(item, "metadata.name");
	const cJSON *c = cJSON_GetArrayItem(aj_cli_at(item, "spec.containers"), 0);
	const char *container = aj_cli_str_at(c, "name");
	const cJSON *labels = aj_cli_at(item, "metadata.labels");
	const cJSON *task = cJSON_GetObjectItemCaseSensitive(labels, AJ_LOGS_TASK_LABEL);
	struct aj_buf prefix = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct pod *p;

	if (!uid || !name || !container)
		return NULL;
	p = aj_calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->l = l;
	aj_logline_init(&p->lines, 0);
	p->rank = rank_of(l, item);
	p->uid = aj_strdup(uid);
	p->name = aj_strdup(name);
	p->container = aj_strdup(container);
	p->task = aj_strdup(cJSON_IsString(task) ? task->valuestring : container);
	if (p->rank >= 0)
		aj_buf_addf(&prefix, "[%s-%ld] ", p->task ? p->task : "", p->rank);
	else
		aj_buf_addf(&prefix, "[%s] ", p->task ? p->task : "");
	p->prefix = aj_buf_detach(&prefix, NULL);
	if (!p->uid || !p->name || !p->container || !p->task || !p->prefix) {
		pod_free(p);
		return NULL;
	}
	return p;
}

static int pod_cmp(const void *a, const void *b)
{
	const struct pod *x = *(struct pod *const *)a, *y = *(struct pod *const *)b;
	int c = strcmp(x->task, y->task);

	if (c)
		return c;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return strcmp(x->name, y->name);
}

static struct pod *find_pod(struct logs *l, const char *uid)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->pods[i]->uid, uid))
			return l->pods[i];
	return NULL;
}

/* The pods of the job now, sorted; new ones added. Returns the list (caller's) or NULL. */
static cJSON *list_pods(struct logs *l)
{
	struct aj_kube_ref ref = { &pods_res, l->ns, NULL, NULL };
	struct aj_kube_list_opts lo;
	struct aj_buf sel = AJ_BUF_INIT(AJ_BUF_SMALL);
	const cJSON *item;
	cJSON *list = NULL;
	size_t i;

	memset(&lo, 0, sizeof(lo));
	aj_buf_addf(&sel, AJ_LOGS_JOB_LABEL "=%s", l->name);
	if (l->o->task)
		aj_buf_addf(&sel, "," AJ_LOGS_TASK_LABEL "=%s", l->o->task);
	if (sel.failed) {
		aj_errors_oom(l->err);
		return NULL;
	}
	lo.label_selector = aj_buf_cstr(&sel);
	if (aj_kube_list_all(l->k, &ref, &lo, &list, NULL, l->err)) {
		aj_buf_release(&sel);
		return NULL;
	}
	aj_buf_release(&sel);
	for (i = 0; i < l->nr; i++)
		l->pods[i]->in_list = 0;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items")) {
		const char *uid = aj_cli_str_at(item, "metadata.uid");
		struct pod *p;

		if (!uid)
			continue;
		if (!(p = find_pod(l, uid))) {
			if (l->o->rank >= 0 && rank_of(l, item) != l->o->rank)
				continue;
			if (l->nr == l->alloc) {
				size_t n = l->alloc ? l->alloc * 2 : 16;
				struct pod **grown = aj_realloc(l->pods, n * sizeof(*grown));

				if (!grown)
					goto oom;
				l->pods = grown;
				l->alloc = n;
			}
			if (!(p = pod_new(l, item)))
				goto oom;
			l->pods[l->nr++] = p;
		}
		p->in_list = 1;
	}
	if (l->nr)  /* qsort wants an array, even of none */
		qsort(l->pods, l->nr, sizeof(*l->pods), pod_cmp);
	return list;
oom:
	cJSON_Delete(list);
	aj_errors_oom(l->err);
	return NULL;
}

static const cJSON *item_for(const cJSON *list, const struct pod *p)
{
	const cJSON *item;

	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items")) {
		const char *uid = aj_cli_str_at(item, "metadata.uid");

		if (uid && !strcmp(uid, p->uid))
			return item;
	}
	return NULL;
}

/* --- streams --- */

static int on_data(void *ctx, const char *data, size_t len)
{
	struct pod *p = ctx;

	p->failures = 0;
	if (aj_logline_feed(&p->lines, data, len, emit, p))
		return -1;
	/* whole lines as they come, also into a pipe or file */
	if (fflush(stdout)) {
		p->l->write_failed = 1;
		return -1;
	}
	return 0;
}

static void on_end(void *ctx, const struct aj_kube_status *st, int stopped)
{
	struct pod *p = ctx;
	struct logs *l = p->l;
	const char *msg = st->message ? st->message : aj_kube_reason_name(st->reason);

	p->stream = NULL;
	fflush(stdout);
	if (stopped || (st->code >= 200 && st->code < 300)) {
		p->ended = 1;
		if (!l->follow || stopped)
			pod_done(l, p);
		return;
	}
	p->failures++;
	if (!l->follow || st->reason == AJ_KUBE_NOT_FOUND || p->failures >= AJ_LOGS_MAX_FAILURES) {
		if (st->reason == AJ_KUBE_NOT_FOUND && l->follow)
			aj_cli_say("pod %s was deleted", p->name);
		else
			aj_cli_say("cannot read the logs of pod %s: %s", p->name, msg);
		l->failed = 1;
		pod_done(l, p);
		return;
	}
	if (st->code == 0)
		aj_cli_say("the log stream of pod %s dropped (%s); asking again", p->name, msg);
	p->ended = 1;
}

static int open_stream(struct logs *l, struct pod *p, int follow)
{
	struct aj_kube_ref ref = { &pods_res, l->ns, p->name, "log" };
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *since = NULL;
	char num[32];
	int rc;

	if (p->opened) {
		aj_logline_resume(&p->lines);
		since = aj_logline_since(&p->lines);
	}
	aj_kube_path(&path, &ref);
	aj_kube_query(&path, "container", p->container);
	aj_kube_query(&path, "timestamps", "true");
	if (follow)
		aj_kube_query(&path, "follow", "true");
	if (l->o->previous)
		aj_kube_query(&path, "previous", "true");
	if (since) {
		aj_kube_query(&path, "sinceTime", since);
	} else {
		if (l->o->tail >= 0) {
			snprintf(num, sizeof(num), "%ld", l->o->tail);
			aj_kube_query(&path, "tailLines", num);
		}
		if (l->o->since > 0) {
			snprintf(num, sizeof(num), "%ld", l->o->since);
			aj_kube_query(&path, "sinceSeconds", num);
		}
	}
	if (path.failed)
		return aj_errors_oom(l->err);
	p->opened = 1;
	p->ended = 0;
	rc = aj_kube_stream_open(&l->streams, aj_buf_cstr(&path), on_data, on_end, p,
				 &p->stream, l->err);
	aj_buf_release(&path);
	return rc;
}

/* --- the two ways to read --- */

/* Every pod's log to its end, one pod after the other. */
static int read_once(struct logs *l, const cJSON *list)
{
	size_t i;

	for (i = 0; i < l->nr && !interrupted; i++) {
		struct pod *p = l->pods[i];
		const cJSON *item = item_for(list, p);

		if (!pod_started(item) && !pod_finished(item)) {
			const char *why = waiting_reason(item);

			aj_cli_say("pod %s has not started yet, no logs%s%s", p->name, why ? ": " : "",
			    why ? why : "");
			continue;
		}
		if (open_stream(l, p, 0))
			return -1;
		while (p->stream && !interrupted)
			if (aj_kube_streams_run(&l->streams, AJ_LOGS_POLL_MS, l->err))
				return -1;
	}
	return 0;
}

/* One look at the pods while following: start, resume and end streams. */
static int follow_pods(struct logs *l, const cJSON *list)
{
	size_t i;

	for (i = 0; i < l->nr; i++) {
		struct pod *p = l->pods[i];
		const cJSON *item = item_for(list, p);
		int finished = pod_finished(item);

		if (p->done)
			continue;
		if (!p->in_list) {
			aj_cli_say("pod %s was deleted", p->name);
			pod_done(l, p);
			continue;
		}
		if (!pod_started(item) && !finished) {
			if (!p->said_waiting) {
				const char *why = waiting_reason(item);

				aj_cli_say("waiting for pod %s to start%s%s", p->name, why ? ": " : "",
				    why ? why : "");
			}
			p->said_waiting = 1;
			continue;
		}
		if (p->stream) {
			/* a kubelet ends the stream of a finished container; give it one period */
			if (finished && ++p->finished_polls > 1)
				pod_done(l, p);
			continue;
		}
		/* a stream that ended is not asked again once the job is over */
		if (p->ended && (finished || l->ending)) {
			pod_done(l, p);
			continue;
		}
		if (open_stream(l, p, !finished))
			return -1;
	}
	return 0;
}

/*
 * The AjJob has ended: each pod that ran is read to the end of its log, a
 * stream of its own for one that has none yet, and the streams get
 * AJ_LOGS_DRAIN_MS to end by themselves (a finished container's does), so
 * a short job that ended before its streams were open still shows every
 * rank's lines. 0 / -1.
 */
static int drain(struct logs *l, const cJSON *list)
{
	long waited;
	size_t i;

	for (i = 0; i < l->nr; i++) {
		struct pod *p = l->pods[i];
		const cJSON *item = item_for(list, p);

		if (p->done || p->stream)
			continue;
		if (p->ended || !p->in_list || (!pod_started(item) && !pod_finished(item)))
			pod_done(l, p);
		else if (open_stream(l, p, 0))
			return -1;
	}
	for (waited = 0; l->streams.nr && waited < AJ_LOGS_DRAIN_MS && !interrupted;
	     waited += AJ_LOGS_POLL_MS)
		if (aj_kube_streams_run(&l->streams, AJ_LOGS_POLL_MS, l->err))
			return -1;
	return 0;
}

/*
 * The backend's rank annotation, once the controller has named the backend.
 * A backend outside the cluster has no pods: its logs are read from there
 * (cli_logs_aml.c), which sets l->outside and l->outside_rc. 0, or -1 when
 * that reading failed (err filled).
 */
static int learn_backend(struct logs *l, const cJSON *job)
{
	const char *name = aj_cli_str_at(job, "status.backend");
	const struct aj_backend *be = name ? aj_backend_find(name) : NULL;

	if (!be)
		return 0;
	if (be->target == AJ_TARGET_AZURE) {
		/* -f before the job is forwarded: wait for it, as for pods not started */
		if (l->o->follow && !aj_cli_phase_terminal(aj_cli_phase(job)) &&
		    !aj_cli_logs_azure_known(job)) {
			if (!l->awaiting_outside)
				aj_cli_say("waiting for the Azure ML job of " AJJOB_KIND "/%s (phase %s)",
					   l->name, aj_cli_phase(job));
			l->awaiting_outside = 1;
			return 0;
		}
		l->outside = 1;
		l->outside_rc = aj_cli_logs_azure(job, l->o, l->phase, l->err);
		return l->outside_rc < 0 ? -1 : 0;
	}
	l->rank_annotation = be->rank_annotation;
	return 0;
}

/*
 * Read the AjJob and its pods again into *job and *list (kept as they were
 * when this fails). 0; 1 when the API server could not answer this time
 * (said on stderr: the next period tries again); -1 when the AjJob is gone
 * or memory ran out (err filled).
 */
static int refresh(struct logs *l, cJSON **job, cJSON **list)
{
	struct aj_errors local = AJ_ERRORS_INIT, *err = l->err;
	cJSON *j = NULL, *p = NULL;
	int gone;

	l->err = &local;
	if (!aj_cli_kube_get_job(l->k, l->ns, l->name, &j, &local))
		p = list_pods(l);
	l->err = err;
	if (p) {
		cJSON_Delete(*job);
		cJSON_Delete(*list);
		*job = j;
		*list = p;
		return 0;
	}
	cJSON_Delete(j);
	gone = local.oom || (local.nr && strstr(local.items[0].message, " not found in namespace "));
	if (!gone) {
		/* said, and tried again next period: not the command's error */
		if (local.nr)
			aj_cli_say("still following: %s", local.items[0].message);
		aj_errors_release(&local);
		return 1;
	}
	aj_errors_splice(err, &local);
	aj_errors_release(&local);
	return -1;
}

static int run(struct logs *l, const cJSON *first_job, char **phase)
{
	cJSON *job = cJSON_Duplicate(first_job, 1), *list = NULL;
	int rc = -1, r, failures = 0;
	size_t i;

	if (!job)
		return aj_errors_oom(l->err);
	if (learn_backend(l, job) || l->outside)
		goto out;
	l->follow = l->o->follow && !aj_cli_phase_terminal(aj_cli_phase(job));
	if (!(list = list_pods(l)))
		goto out;
	if (!l->follow) {
		if (!l->nr)
			aj_cli_say("no pods of " AJJOB_KIND "/%s (phase %s)", l->name, aj_cli_phase(job));
		rc = read_once(l, list);
		goto out;
	}
	if (!l->nr && !l->awaiting_outside)
		aj_cli_say("waiting for the pods of " AJJOB_KIND "/%s (phase %s)", l->name, aj_cli_phase(job));
	while (!interrupted) {
		if (follow_pods(l, list))
			goto out;
		if (aj_kube_streams_run(&l->streams, AJ_LOGS_POLL_MS, l->err))
			goto out;
		/* no stream to wait on (nothing started yet): the period still passes */
		if (!l->streams.nr)
			pause_ms(AJ_LOGS_POLL_MS);
		if (interrupted || l->ending)
			break;
		r = refresh(l, &job, &list);
		if (r < 0)
			goto out;
		if (r > 0 && ++failures >= AJ_LOGS_MAX_FAILURES) {
			aj_errors_add(l->err, NULL, "gave up following " AJJOB_KIND "/%s after %d "
				      "failed looks in a row", l->name, failures);
			goto out;
		}
		if (!r)
			failures = 0;
		if (!l->rank_annotation && (learn_backend(l, job) || l->outside))
			goto out;
		/* the job ended: one more period, then the streams drain */
		l->ending = aj_cli_phase_terminal(aj_cli_phase(job));
	}
	if (!interrupted && l->ending && drain(l, list))
		goto out;
	for (i = 0; i < l->nr; i++)
		if (!interrupted)
			pod_done(l, l->pods[i]);
	if (phase && job && !interrupted && !(*phase = aj_strdup(aj_cli_phase(job))))
		aj_errors_oom(l->err);
	rc = 0;
out:
	cJSON_Delete(list);
	cJSON_Delete(job);
	return rc;
}

int aj_cli_logs_follow(struct aj_kube *k, const char *ns, const char *name,
		       const struct aj_cli_logs_opts *lo, char **phase, struct aj_errors *err)
{
	struct logs l;
	struct sigaction old;
	cJSON *job = NULL;
	size_t i;
	int rc;

	if (phase)
		*phase = NULL;
	memset(&l, 0, sizeof(l));
	l.k = k;
	l.ns = ns;
	l.name = name;
	l.o = lo;
	l.err = err;
	aj_buf_init(&l.line, AJ_LOGLINE_MAX + AJ_BUF_SMALL);
	if (aj_cli_kube_get_job(k, ns, name, &job, err))
		return -1;
	if (aj_kube_streams_init(&l.streams, k, err)) {
		cJSON_Delete(job);
		return -1;
	}
	interrupted = 0;
	active = &l.streams;
	aj_cli_catch_sigint(on_interrupt, &old);
	l.phase = phase;
	rc = run(&l, job, phase);
	sigaction(SIGINT, &old, NULL);
	active = NULL;
	fflush(stdout);
	rc = l.outside ? l.outside_rc
		       : aj_cli_logs_exit(rc, interrupted, l.write_failed, l.failed, err);
	aj_kube_streams_release(&l.streams);
	for (i = 0; i < l.nr; i++)
		pod_free(l.pods[i]);
	aj_free(l.pods);
	aj_buf_release(&l.line);
	cJSON_Delete(job);
	return rc;
}

int aj_cli_logs_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_cli_logs_opts lo;
	struct aj_kube k;
	int rc;

	if (o->follow && o->previous)
		return aj_cli_usage_error(aj_cli_logs.name, "--previous shows containers that "
					  "have ended: it cannot be followed (leave out -f)");
	rc = aj_cli_kube_open_plain(&k, &aj_cli_logs, o, &err);
	if (rc)
		return aj_cli_kube_done(rc, &k, &err);
	memset(&lo, 0, sizeof(lo));
	lo.task = o->task;
	lo.rank = o->rank;
	lo.follow = o->follow;
	lo.timestamps = o->timestamps;
	lo.previous = o->previous;
	lo.tail = o->tail;
	lo.since = o->since;
	rc = aj_cli_logs_follow(&k, k.cfg.namespace, o->arg, &lo, NULL, &err);
	return aj_cli_kube_done(rc < 0 ? AJ_EXIT_FAIL : rc, &k, &err);
}

int aj_cli_kube_follow(struct aj_kube *k, const cJSON *job, struct aj_errors *err)
{
	const char *name = aj_cli_str_at(job, "metadata.name");
	const char *ns = aj_cli_str_at(job, "metadata.namespace");
	struct aj_cli_logs_opts lo;
	char *phase = NULL;
	int rc;

	memset(&lo, 0, sizeof(lo));
	lo.rank = -1;
	lo.tail = -1;
	lo.follow = 1;
	/* the AjJob where it was created, whatever the context's namespace */
	rc = aj_cli_logs_follow(k, ns, name, &lo, &phase, err);
	if (rc == AJ_CLI_EXIT_INTERRUPTED)
		fprintf(stderr, "aj: stopped following; " AJJOB_KIND "/%s goes on "
			"(aj logs %s -f --namespace %s)\n", name, name, ns);
	else if (rc >= 0 && phase) {
		fprintf(stderr, "aj: " AJJOB_KIND "/%s %s\n", name, phase);
		/* the job's result, unless its logs could not be read */
		rc = rc == AJ_EXIT_OK ? aj_cli_phase_exit(phase) : rc;
	}
	aj_free(phase);
	return rc;
}
