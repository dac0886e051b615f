/*
 * cli_code_upload.c - a volcano job's code, through its shared volume.
 *
 * The CLI moves the code, not the controller: the CLI has the code tree
 * and acts with the user's own credentials, so uploading needs nothing the
 * user could not do with kubectl, while the controller would need exec
 * rights on pods in every namespace it serves.
 *
 * aj_cli_code_upload() (aj run before it creates the AjJob, aj code upload):
 *  1. archive the current directory into an unlinked temporary file; its
 *     SHA-256 names the upload (the archive is deterministic, so the same
 *     tree always lands in the same place);
 *  2. create a helper pod (aj_code_helper_pod: the job's image, the claim
 *     mounted, no privileges, a deadline) and wait until it runs;
 *  3. exec aj_code_check_script: an upload already there is not repeated;
 *  4. exec aj_code_receive_script with the archive on stdin: it checks the
 *     digest on the far side and only then renames its temporary directory
 *     to <mount>/.aj-code/<digest>, so an interrupted or corrupted upload is
 *     never visible to a job;
 *  5. delete the helper pod, whatever happened: also on SIGINT or SIGTERM,
 *     which end the wait for it at once (a transfer under way finishes or
 *     fails first); the signal is then raised again, so aj ends as it would
 *     have. A second one ends aj at once.
 * The job's pods then copy that directory into their work directory
 * (volcano.c). `aj code upload` runs this alone and prints the digest.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/codeship.h"
#include "cli.h"
#include "code/archive.h"
#include "code/ignore.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/json.h"
#include "core/resolve.h"
#include "core/source.h"
#include "kube/client.h"
#include "kube/exec.h"

#define HELPER_TIMEOUT_DEFAULT 300
#define HELPER_TIMEOUT_MAX 86400
#define RECEIVE_MISMATCH 3
#define WAIT_SAY_EVERY 5          /* seconds between "waiting for" lines */

static const struct aj_kube_resource pods = { "", "v1", "pods", 1 };

int aj_cli_code_archive_file(const struct aj_jobspec *spec, struct aj_archive_result *res,
			     struct aj_errors *err)
{
	const char *tmp = getenv("TMPDIR");
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	int fd = -1;

	aj_buf_addf(&path, "%s/aj-code-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (path.failed) {
		aj_errors_oom(err);
		goto out;
	}
	fd = mkstemp(path.buf);
	if (fd < 0) {
		aj_errors_add(err, NULL, "cannot create a temporary file in %s: %s",
			      tmp && *tmp ? tmp : "/tmp", strerror(errno));
		goto out;
	}
	unlink(path.buf);
	if (aj_cli_code_archive(spec, fd, res, err) || lseek(fd, 0, SEEK_SET)) {
		if (!aj_errors_count(err))
			aj_errors_add(err, NULL, "cannot rewind the code archive: %s", strerror(errno));
		close(fd);
		fd = -1;
	}
out:
	aj_buf_release(&path);
	return fd;
}

int aj_cli_code_read(void *data, void *buf, size_t cap, size_t *len, struct aj_errors *err)
{
	struct aj_cli_code_reader *r = data;
	ssize_t n;

	do
		n = read(r->fd, buf, cap);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return aj_errors_add(err, NULL, "reading the code archive: %s", strerror(errno));
	*len = (size_t)n;
	r->done += (uint64_t)n;
	aj_cli_progress_update(&r->progress, 0, r->done);
	return 0;
}

static int helper_timeout(void)
{
	const char *v = getenv("AJ_CODE_HELPER_TIMEOUT");
	char *end;
	long t;

	if (!v || !*v)
		return HELPER_TIMEOUT_DEFAULT;
	errno = 0;
	t = strtol(v, &end, 10);
	return errno || *end || t < 1 || t > HELPER_TIMEOUT_MAX ? HELPER_TIMEOUT_DEFAULT : (int)t;
}

/* Why a pod waits: its container's waiting reason, else its phase. */
static const char *pod_reason(const cJSON *pod)
{
	const cJSON *cs = cJSON_GetArrayItem(aj_json_get(aj_json_get(pod, "status"),
						      "containerStatuses"), 0);
	const char *r = aj_json_str(aj_json_get(aj_json_get(cs, "state"), "waiting"), "reason");

	if (r)
		return r;
	r = aj_json_str(aj_json_get(pod, "status"), "phase");
	return r ? r : "no status yet";
}

/* The signal that asked aj to stop while a helper pod existed, or 0. */
static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

/*
 * SIGINT and SIGTERM stop the wait (no SA_RESTART, so a sleep ends early);
 * the handler resets itself, so a second signal ends aj. A signal the
 * caller ignores (a background job's SIGINT) stays ignored.
 */
static void catch_stop(struct sigaction old[2])
{
	static const int sigs[2] = { SIGINT, SIGTERM };
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	stop_signal = 0;
	for (i = 0; i < 2; i++) {
		sigaction(sigs[i], NULL, &old[i]);
		if (old[i].sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
}

/* Restore the dispositions; a signal that came meanwhile is raised again. */
static void release_stop(const struct sigaction old[2])
{
	sigaction(SIGINT, &old[0], NULL);
	sigaction(SIGTERM, &old[1], NULL);
	if (stop_signal)
		raise(stop_signal);
}

/*
 * Poll until the helper pod runs; it never will if it failed or finished.
 * Says every WAIT_SAY_EVERY seconds what it waits for.
 */
static int wait_running(struct aj_kube *k, const struct aj_kube_ref *ref, struct aj_errors *err)
{
	int timeout = helper_timeout(), waited;
	struct timespec second = { 1, 0 };
	char reason[128] = "no status yet";

	for (waited = 0; waited <= timeout && !stop_signal; waited++) {
		cJSON *pod = NULL;
		char phase[32];

		if (aj_kube_get(k, ref, &pod, NULL, err))
			return -1;
		snprintf(phase, sizeof(phase), "%s", aj_json_str(aj_json_get(pod, "status"),
								 "phase") ?
			 aj_json_str(aj_json_get(pod, "status"), "phase") : "");
		snprintf(reason, sizeof(reason), "%s", pod_reason(pod));
		cJSON_Delete(pod);
		if (!strcmp(phase, "Running"))
			return 0;
		if (!strcmp(phase, "Failed") || !strcmp(phase, "Succeeded"))
			return aj_errors_add(err, NULL, "helper pod %s/%s ended (%s) before the upload",
					     ref->ns, ref->name, phase);
		if (waited && !(waited % WAIT_SAY_EVERY))
			fprintf(stderr, "aj: waiting for helper pod %s/%s to run: %s (%d s of %d)\n",
				ref->ns, ref->name, reason, waited, timeout);
		if (waited < timeout && !stop_signal)
			nanosleep(&second, NULL);
	}
	if (stop_signal)
		return aj_errors_add(err, NULL, "interrupted while waiting for helper pod %s/%s",
				     ref->ns, ref->name);
	return aj_errors_add(err, NULL, "helper pod %s/%s did not start within %d s (%s); "
			     "AJ_CODE_HELPER_TIMEOUT sets the wait", ref->ns, ref->name, timeout,
			     reason);
}

/* Run one script in the helper pod; *code is its exit code. */
static int run_script(struct aj_kube *k, const struct aj_kube_ref *pod, const char *script,
		      const char *const *args, size_t nargs, struct aj_cli_code_reader *in, int *code,
		      struct aj_buf *stderr_text, struct aj_errors *err)
{
	const char *argv[8] = { "sh", "-c", script, "aj" };
	struct aj_exec_request r;
	struct aj_exec_result res;
	size_t i;
	int rc;

	for (i = 0; i < nargs && i + 4 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[i + 4] = args[i];
	memset(&r, 0, sizeof(r));
	r.ns = pod->ns;
	r.pod = pod->name;
	r.argv = argv;
	r.argc = 4 + i;
	if (in) {
		r.read = aj_cli_code_read;
		r.read_data = in;
	}
	aj_exec_result_init(&res);
	rc = aj_exec_run(k, &r, &res, err);
	*code = res.exit_code;
	if (!rc && res.err.len)
		aj_buf_add(stderr_text, res.err.buf, res.err.len);
	aj_exec_result_release(&res);
	return rc;
}

static char *helper_name(const char *digest, struct aj_errors *err)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	char *out;

	aj_buf_addf(&b, "aj-code-%.12s", digest);
	if (aj_cli_name_suffix(&b, err)) {
		aj_buf_release(&b);
		return NULL;
	}
	out = aj_buf_detach(&b, NULL);
	if (!out)
		aj_errors_oom(err);
	return out;
}

/* Steps 3 and 4 in a running helper pod. */
static int transfer(struct aj_kube *k, const struct aj_kube_ref *ref, const char *store,
		    const struct aj_archive_result *res, int fd, struct aj_errors *err)
{
	const char *args[3];
	struct aj_buf text = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_cli_code_reader in = { -1, 0, { 0 } };
	char size[32];
	int code, rc;

	args[0] = store;
	args[1] = res->sha256_hex;
	if (run_script(k, ref, aj_code_check_script, args, 2, NULL, &code, &text, err))
		goto fail;
	if (!code) {
		fprintf(stderr, "aj: code %.12s is already in the volume\n", res->sha256_hex);
		aj_buf_release(&text);
		return 0;
	}
	if (code != 1) {
		aj_errors_add(err, NULL, "checking for code in pod %s/%s failed (exit %d)",
			      ref->ns, ref->name, code);
		goto fail;
	}
	snprintf(size, sizeof(size), "%llu", (unsigned long long)res->size);
	args[2] = size;
	aj_buf_reset(&text);
	in.fd = fd;
	aj_cli_progress_start(&in.progress, "sending the code", res->size);
	rc = run_script(k, ref, aj_code_receive_script, args, 3, &in, &code, &text, err);
	aj_cli_progress_end(&in.progress);
	if (rc)
		goto fail;
	if (code) {
		/* the far side says why: a digest mismatch or a tool failing */
		while (text.len && text.buf[text.len - 1] == '\n')
			text.buf[--text.len] = '\0';
		aj_errors_add(err, NULL, "receiving code in pod %s/%s failed (exit %d)%s%s%s",
			      ref->ns, ref->name, code, code == RECEIVE_MISMATCH ? ", nothing kept" : "",
			      text.len ? ": " : "", aj_buf_cstr(&text));
		goto fail;
	}
	fprintf(stderr, "aj: code %.12s uploaded (%llu bytes)\n", res->sha256_hex,
		(unsigned long long)res->size);
	aj_buf_release(&text);
	return 0;
fail:
	aj_buf_release(&text);
	return -1;
}

void aj_cli_code_say_none(const struct aj_jobspec *spec)
{
	const char *pvc = spec->jobs_nr ? aj_kvlist_get(&spec->jobs[0].env, AJ_PVC_NAME_VAR) : NULL;
	const char *dir = spec->jobs_nr ? aj_kvlist_get(&spec->jobs[0].env, AJ_PVC_DIR_VAR) : NULL;
	int half = (pvc && *pvc) != (dir && *dir);

	if (half)
		fprintf(stderr, "aj: no code is transferred: submit_args.env sets %s but not %s\n",
			pvc && *pvc ? AJ_PVC_NAME_VAR : AJ_PVC_DIR_VAR,
			pvc && *pvc ? AJ_PVC_DIR_VAR : AJ_PVC_NAME_VAR);
	else if (aj_code_via_blob(spec))
		fprintf(stderr, "aj: no code goes through a shared volume: "
			"_extra.code_upload.strategy is blob\n");
	else
		fprintf(stderr, "aj: no code is transferred: the first job's submit_args.env "
			"sets neither " AJ_PVC_NAME_VAR " nor " AJ_PVC_DIR_VAR "\n");
}

int aj_cli_code_upload(struct aj_kube *k, const char *ns, struct aj_pipeline *pl,
		       struct aj_errors *err)
{
	const struct aj_jobspec *spec = &pl->spec;
	struct aj_archive_result res;
	struct aj_code_volume v;
	struct aj_kube_ref ref = { &pods, ns, NULL, NULL };
	struct aj_kube_delete_opts del = { AJ_KUBE_PROPAGATION_BACKGROUND, NULL, NULL };
	struct aj_buf store = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct sigaction old[2];
	cJSON *pod = NULL;
	char *name = NULL;
	int fd, rc = -1;

	if (pl->backend->code_route(spec) != AJ_CODE_VOLUME || !aj_code_volume(spec, &v))
		return 0;
	fd = aj_cli_code_archive_file(spec, &res, err);
	if (fd < 0)
		return -1;
	if (aj_buf_addf(&store, "%s/" AJ_CODE_STORE, v.mount_dir) ||
	    !(name = helper_name(res.sha256_hex, err)) ||
	    !(pod = aj_code_helper_pod(spec, name, ns))) {
		if (!aj_errors_count(err))
			aj_errors_oom(err);
		goto out;
	}
	fprintf(stderr, "aj: code %.12s (%llu files, %llu bytes) goes to volume %s in %s\n",
		res.sha256_hex, (unsigned long long)res.files, (unsigned long long)res.size,
		v.pvc, ns);
	/* from before the create on, so that no signal leaves the pod behind */
	catch_stop(old);
	if (aj_kube_create(k, &ref, pod, NULL, NULL, err)) {
		release_stop(old);
		goto out;
	}
	ref.name = name;
	rc = wait_running(k, &ref, err) ||
	     transfer(k, &ref, aj_buf_cstr(&store), &res, fd, err) ? -1 : 0;
	if (aj_kube_delete(k, &ref, &del, NULL, NULL, err)) {
		fprintf(stderr, "aj: could not delete helper pod %s/%s; delete it with kubectl\n",
			ns, name);
		rc = -1;
	} else if (stop_signal) {
		fprintf(stderr, "aj: interrupted; helper pod %s/%s deleted\n", ns, name);
	}
	if (stop_signal)
		aj_cli_print_errors(err);
	release_stop(old);
	if (!rc && spec->code.digest && strcmp(spec->code.digest, res.sha256_hex))
		rc = aj_errors_add(err, NULL, "the code changed while it was being submitted "
				   "(%.12s, then %.12s): submit again", spec->code.digest,
				   res.sha256_hex);
	else if (!rc && !spec->code.digest)
		rc = aj_pipeline_set_code(pl, res.sha256_hex, err);
out:
	close(fd);
	cJSON_Delete(pod);
	aj_free(name);
	aj_buf_release(&store);
	return rc;
}

/* --- aj code upload --- */

/* The services whose objects go to the cluster: only they take code through a volume. */
static void cluster_services(struct aj_buf *out)
{
	const struct aj_backend *const *be;

	for (be = aj_backend_all(); *be; be++)
		if ((*be)->target == AJ_TARGET_CLUSTER)
			aj_buf_addf(out, "%s%s", out->len ? ", " : "", (*be)->name);
}

static int upload_run(const struct aj_cli_opts *o, const char *canonical, struct aj_errors *err)
{
	struct aj_source src;
	struct aj_pipeline pl;
	struct aj_pipeline_in in = { &src, canonical, &o->shape, NULL, 0, NULL, NULL, NULL };
	struct aj_kube_config_opts ko;
	struct aj_kube_config cfg;
	struct aj_kube k;
	struct aj_buf names = AJ_BUF_INIT(AJ_BUF_SMALL);
	int rc, have_kube = 0;

	memset(&src, 0, sizeof(src));
	memset(&ko, 0, sizeof(ko));
	aj_pipeline_init(&pl);
	aj_kube_config_init(&cfg);
	rc = aj_cli_open_home(&src, err) || aj_pipeline_load(&in, &pl, err);
	if (!rc && pl.backend->target != AJ_TARGET_CLUSTER) {
		cluster_services(&names);
		rc = aj_errors_add(err, NULL, "%s: code goes through a shared volume only for "
				   "service %s", pl.tpl.display, aj_buf_cstr(&names));
	}
	if (!rc) {
		aj_kube_config_opts_from_env(&ko);
		ko.context = pl.spec.target.context;
		ko.namespace = o->namespace_ ? o->namespace_ : pl.spec.target.namespace_;
		rc = aj_kube_global_init(err) || aj_cli_kube_config_load(&cfg, &ko, err) ||
		     aj_kube_init(&k, &cfg, err);
		have_kube = !rc;
	}
	if (!rc)
		rc = aj_cli_code_upload(&k, k.cfg.namespace, &pl, err);
	if (!rc && pl.spec.code.digest)
		printf("%s\n", pl.spec.code.digest);
	else if (!rc)
		aj_cli_code_say_none(&pl.spec);
	if (have_kube)
		aj_kube_release(&k);
	aj_kube_config_release(&cfg);
	aj_buf_release(&names);
	aj_pipeline_release(&pl);
	aj_source_release(&src);
	return rc ? -1 : 0;
}

int aj_cli_code_upload_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	char *canonical;
	int rc;

	if (!o->template_name)
		return aj_cli_usage_error(aj_cli_code_upload_cmd.name,
					  "no template: use -t NAME (try aj code upload --help)");
	canonical = aj_cli_template_canonical(aj_cli_code_upload_cmd.name, o->template_name);
	if (!canonical)
		return AJ_EXIT_USAGE;
	rc = upload_run(o, canonical, &err);
	aj_cli_print_errors(&err);
	aj_errors_release(&err);
	aj_free(canonical);
	return rc ? AJ_EXIT_FAIL : AJ_EXIT_OK;
}
