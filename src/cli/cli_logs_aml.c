/*
 * cli_logs_aml.c - `aj logs NAME` for an AjJob that runs on Azure ML or
 * Singularity: the job's log files as `az ml job stream` reads them.
 *
 * status.azure names the job and its workspace. The workspace's discovery
 * document gives the data-plane endpoint; the run history's details give
 * the job's status and logFiles (name -> SAS URL). The files chosen by
 * azure/amllogs.h are read from what was shown on (HTTP Range, 1 MiB at a
 * time) and merged by file, each line prefixed "[rank] ". Without -f every
 * file is read once to its end; with -f the details are read again on the
 * SDK's curve (every 2 s at first, up to 60 s) until the job is terminal,
 * and the files drained once more. A job whose run or files are not there
 * yet is said once on stderr (and awaited with -f), never waited for in
 * silence. Memory: one 1 MiB read and one line of AJ_LOGLINE_MAX per file.
 * SAS URLs and tokens are never printed: errors name files, not URLs.
 * Ctrl-C ends with exit status 130, the job untouched.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "azure/aml.h"
#include "azure/amllogs.h"
#include "azure/arm.h"
#include "azure/http.h"
#include "azure/runhistory.h"
#include "cli.h"
#include "cli_kube.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

/* Interrupt checks while waiting between looks at the job. */
#define AML_SLICE_MS 100

struct aml {
	struct aj_cli_azure az;
	const char *job, *ws;
	char *base;
	int follow;
	struct aj_amllogs files;
	struct aj_buf line;
	int said_no_run, said_no_files, failed, write_failed;
	struct aj_errors *err;
};

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

struct emit_ctx {
	struct aml *m;
	const struct aj_amllogs_file *f;
};

/* One line as the job wrote it (a leading time stays), after the file's prefix. */
static int emit(void *ctx, const char *ts, size_t ts_len, const char *text, size_t len, int eol)
{
	struct emit_ctx *c = ctx;
	struct aj_buf *b = &c->m->line;

	(void)eol;
	aj_buf_reset(b);
	aj_buf_addstr(b, c->f->prefix);
	if (ts) {
		aj_buf_add(b, ts, ts_len);
		aj_buf_addch(b, ' ');
	}
	aj_buf_add(b, text, len);
	aj_buf_addch(b, '\n');
	if (b->failed)
		return aj_errors_oom(c->m->err);
	if (fwrite(b->buf, 1, b->len, stdout) != b->len) {
		c->m->write_failed = 1;
		return -1;
	}
	return 0;
}

/* Everything new in file f (its URL from logFiles), in pieces of AJ_AMLLOGS_CHUNK. */
static int read_file(struct aml *m, struct aj_amllogs_file *f, const char *url)
{
	struct emit_ctx c = { m, f };
	struct aj_http_response resp;
	int more = 1, rc = 0;

	while (more && !interrupted && !rc) {
		size_t skip;
		int64_t next;

		aj_http_response_init(&resp);
		if (aj_runhistory_read(&m->az.arm.http, url, f->offset, AJ_AMLLOGS_CHUNK, &resp, m->err)) {
			aj_http_response_release(&resp);
			return -1;
		}
		switch (aj_amllogs_judge(resp.status, resp.body.len, f->offset, AJ_AMLLOGS_CHUNK,
					 &skip, &next, &more)) {
		case AJ_AMLLOGS_DATA:
			rc = aj_logline_feed(&f->lines, resp.body.buf + skip, resp.body.len - skip, emit, &c);
			f->offset = next;
			if (!rc && fflush(stdout))
				m->write_failed = rc = -1;
			break;
		case AJ_AMLLOGS_NOTHING:
			break;
		case AJ_AMLLOGS_MISSING:
			if (!f->said_missing)
				aj_cli_say("log file %s of Azure ML job %s is not there yet", f->name, m->job);
			f->said_missing = 1;
			break;
		case AJ_AMLLOGS_REFUSED:
			aj_cli_say("cannot read log file %s of Azure ML job %s: HTTP %ld", f->name, m->job,
			    resp.status);
			m->failed = 1;
			more = 0;
			break;
		}
		aj_http_response_release(&resp);
	}
	return rc;
}

/* One look at the job: its details, then every file's new bytes. *state: where it stands. */
static int look(struct aml *m, enum aj_aml_state *state)
{
	const cJSON *log_files;
	cJSON *details = NULL;
	const char *status;
	size_t i;
	int rc = aj_runhistory_details(&m->az.arm, m->base, m->ws, m->job, &details, m->err);

	*state = AJ_AML_QUEUED;
	if (rc < 0)
		return -1;
	if (rc) {
		if (!m->said_no_run)
			aj_cli_say("Azure ML job %s has no run history yet: no logs %s", m->job,
			    m->follow ? "yet, waiting" : "yet (aj logs -f waits for them)");
		m->said_no_run = 1;
		return 0;
	}
	status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(details, "status"));
	*state = aj_aml_state_of(status);
	log_files = cJSON_GetObjectItemCaseSensitive(details, "logFiles");
	if (aj_amllogs_update(&m->files, log_files, m->err)) {
		cJSON_Delete(details);
		return -1;
	}
	if (!m->files.nr && !m->said_no_files && !aj_aml_state_terminal(*state)) {
		aj_cli_say("Azure ML job %s is %s: no log files yet%s", m->job, status ? status : "NotStarted",
		    m->follow ? ", waiting" : "");
		m->said_no_files = 1;
	}
	for (i = 0; i < m->files.nr && !interrupted; i++) {
		struct aj_amllogs_file *f = &m->files.files[i];
		const char *url = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(log_files, f->name));

		if (url && read_file(m, f, url)) {
			cJSON_Delete(details);
			return -1;
		}
	}
	if (aj_aml_state_terminal(*state) && !m->files.nr)
		aj_cli_say("Azure ML job %s is %s and has no log files", m->job, status);
	cJSON_Delete(details);
	return 0;
}

/* Sleep ms, waking for Ctrl-C. */
static void wait_ms(int64_t ms)
{
	while (ms > 0 && !interrupted) {
		int64_t step = ms < AML_SLICE_MS ? ms : AML_SLICE_MS;

		aj_azure_sleep_ms(NULL, step);
		ms -= step;
	}
}

static const char *phase_of(enum aj_aml_state s)
{
	return s == AJ_AML_COMPLETED ? "Succeeded" : s == AJ_AML_CANCELED ? "Cancelled" : "Failed";
}

static int run(struct aml *m, char **phase)
{
	enum aj_aml_state state;
	int64_t start = aj_azure_now_ms(NULL);
	size_t i;

	if (aj_cli_azure_open(&m->az, m->err) ||
	    aj_runhistory_endpoint(&m->az.arm, m->ws, &m->base, m->err))
		return -1;
	for (;;) {
		if (look(m, &state))
			return -1;
		if (interrupted || !m->follow || m->write_failed || aj_aml_state_terminal(state))
			break;
		wait_ms(aj_amllogs_poll_ms(aj_azure_now_ms(NULL) - start));
		if (interrupted)
			break;
	}
	for (i = 0; i < m->files.nr && !interrupted; i++) {
		struct emit_ctx c = { m, &m->files.files[i] };

		if (aj_logline_flush(&m->files.files[i].lines, emit, &c))
			return -1;
	}
	if (phase && m->follow && !interrupted && aj_aml_state_terminal(state) &&
	    !(*phase = aj_strdup(phase_of(state))))
		return aj_errors_oom(m->err);
	return 0;
}

/* Options that only pods have. */
static int cluster_only(const struct aj_cli_logs_opts *lo, const char *name, const char *backend,
			struct aj_errors *err)
{
	const char *opt = lo->task ? "--task" : lo->tail >= 0 ? "--tail" : lo->since > 0 ? "--since" :
			  lo->timestamps ? "--timestamps" : lo->previous ? "--previous" : NULL;

	if (!opt)
		return 0;
	return aj_errors_add(err, NULL, "%s is for the pods of cluster backends; " AJJOB_KIND
			     "/%s runs on %s (its logs take -f and --rank)", opt, name, backend);
}

int aj_cli_logs_azure_known(const cJSON *job)
{
	return aj_cli_str_at(job, "status.azure.jobName") && aj_cli_str_at(job, "status.azure.workspace");
}

int aj_cli_logs_azure(const cJSON *job, const struct aj_cli_logs_opts *lo, char **phase,
		      struct aj_errors *err)
{
	const char *name = aj_cli_str_at(job, "metadata.name");
	const char *backend = aj_cli_str_at(job, "status.backend");
	struct sigaction old;
	struct aml m;
	int rc;

	if (cluster_only(lo, name, backend, err))
		return AJ_EXIT_USAGE;
	memset(&m, 0, sizeof(m));
	m.job = aj_cli_str_at(job, "status.azure.jobName");
	m.ws = aj_cli_str_at(job, "status.azure.workspace");
	m.follow = lo->follow && !aj_cli_phase_terminal(aj_cli_phase(job));
	m.err = err;
	if (!aj_cli_logs_azure_known(job)) {
		aj_cli_say(AJJOB_KIND "/%s has no Azure ML job yet (phase %s): no logs yet", name,
		    aj_cli_phase(job));
		return AJ_EXIT_OK;
	}
	aj_amllogs_init(&m.files, lo->rank);
	aj_buf_init(&m.line, AJ_LOGLINE_MAX + AJ_BUF_SMALL);
	interrupted = 0;
	aj_cli_catch_sigint(on_interrupt, &old);
	rc = run(&m, phase);
	sigaction(SIGINT, &old, NULL);
	fflush(stdout);
	rc = aj_cli_logs_exit(rc, interrupted, m.write_failed, m.failed, err);
	aj_cli_azure_close(&m.az);
	aj_amllogs_release(&m.files);
	aj_buf_release(&m.line);
	aj_free(m.base);
	return rc;
}
