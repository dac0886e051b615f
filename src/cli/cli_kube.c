/*
 * cli_kube.c - the commands that talk to a cluster: `aj run` without
 * --dry-run (create the AjJob, optionally wait for it), `aj list`,
 * `aj status` and `aj cancel`.
 *
 * Output follows kubectl where it has a habit (the "ajjob.aj.dev/NAME
 * created" line, aligned tables with ages such as "4m30s", managedFields
 * left out of printed objects) so the two read alike side by side. Waiting
 * uses one watch on the AjJob (a field selector on its name) rather than
 * polling; Ctrl-C ends the wait and leaves the job alone.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "cli.h"
#include "core/alloc.h"
#include "core/ajjob.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/node.h"
#include "core/strlist.h"
#include "core/timestamp.h"
#include "kube/client.h"
#include "kube/watch.h"

/* the AjJob contract's names (core/ajjob.h) */
#define AJJOB_KIND AJ_AJJOB_RESOURCE
#define CANCEL_ANNOTATION AJ_CANCEL_ANNOTATION
#define NAME_MAX_LEN 253          /* a DNS-1123 subdomain */
#define NAMESPACE_MAX_LEN 63
/* One REST request may take this long before the CLI gives up (seconds). */
#define REQUEST_TIMEOUT 30
#define EXIT_INTERRUPTED 130

static const struct aj_kube_resource ajjobs = {
	AJ_AJJOB_GROUP, AJ_AJJOB_VERSION, AJ_AJJOB_PLURAL, 1
};

/* --- reading objects --- */

/* The value at a dotted path of object keys, or NULL. */
static const cJSON *at(const cJSON *obj, const char *dotted)
{
	char key[64];
	const char *dot;
	size_t len;

	while (obj && *dotted) {
		dot = strchr(dotted, '.');
		len = dot ? (size_t)(dot - dotted) : strlen(dotted);
		if (len >= sizeof(key))
			return NULL;
		memcpy(key, dotted, len);
		key[len] = '\0';
		obj = cJSON_GetObjectItemCaseSensitive(obj, key);
		dotted += len + (dot ? 1 : 0);
	}
	return obj;
}

/* The string at a dotted path, or NULL when absent, empty or not a string. */
static const char *str_at(const cJSON *obj, const char *dotted)
{
	const cJSON *v = at(obj, dotted);

	return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* An AjJob the controller has not reported on yet is Pending. */
static const char *phase_of(const cJSON *job)
{
	const char *p = str_at(job, "status.phase");

	return p ? p : aj_phase_name(AJ_PHASE_PENDING);
}

/* A phase this aj does not know (a newer controller's) is not an end. */
static int phase_terminal(const char *p)
{
	enum aj_phase ph;

	return !aj_phase_parse(p, &ph) && aj_phase_terminal(ph);
}

/* The exit status of a job that ended in phase p. */
static int phase_exit(const char *p)
{
	enum aj_phase ph;

	return !aj_phase_parse(p, &ph) && ph == AJ_PHASE_SUCCEEDED ? AJ_EXIT_OK : AJ_EXIT_FAIL;
}

/* Append s on one line: each run of line breaks becomes "; ". */
static void add_one_line(struct aj_buf *b, const char *s)
{
	int pending = 0;

	for (; *s; s++) {
		if (*s == '\n' || *s == '\r') {
			pending = 1;
			continue;
		}
		if (pending && b->len)
			aj_buf_addstr(b, "; ");
		pending = 0;
		aj_buf_addch(b, *s == '\t' ? ' ' : *s);
	}
}

/*
 * Seconds since an RFC 3339 UTC time ("2024-05-01T12:00:00Z", fractions
 * allowed), or -1 when t is not one.
 */
static long long seconds_since(const char *t, time_t now)
{
	long long then = aj_timestamp_parse(t, 0);

	if (then < 0)
		return -1;
	return now >= then ? (long long)now - then : 0;
}

/*
 * A duration the way kubectl prints ages: exact seconds below two minutes,
 * then two units at most, coarser as it grows ("90s", "4m30s", "25m",
 * "3h25m", "10h", "2d5h", "12d", "2y30d", "9y").
 */
static void human_age(char *out, size_t size, long long s)
{
	long long m = s / 60, h = s / 3600, d = s / 86400, y = d / 365;

	if (s < 0)
		snprintf(out, size, "<unknown>");
	else if (s < 120)
		snprintf(out, size, "%llds", s);
	else if (m < 10 && s % 60)
		snprintf(out, size, "%lldm%llds", m, s % 60);
	else if (m < 180)
		snprintf(out, size, "%lldm", m);
	else if (h < 8 && m % 60)
		snprintf(out, size, "%lldh%lldm", h, m % 60);
	else if (h < 48)
		snprintf(out, size, "%lldh", h);
	else if (h < 192 && h % 24)
		snprintf(out, size, "%lldd%lldh", d, h % 24);
	else if (d < 730)
		snprintf(out, size, "%lldd", d);
	else if (y < 8 && d % 365)
		snprintf(out, size, "%lldy%lldd", y, d % 365);
	else
		snprintf(out, size, "%lldy", y);
}

static void age_of(char *out, size_t size, const char *t, time_t now)
{
	human_age(out, size, seconds_since(t, now));
}

/* A copy of obj without metadata.managedFields, which kubectl hides too. */
static cJSON *printable(const cJSON *obj)
{
	cJSON *copy = cJSON_Duplicate(obj, 1);

	cJSON_DeleteItemFromObjectCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(copy, "metadata"), "managedFields");
	return copy;
}

static int print_object(const cJSON *obj, enum aj_cli_format format,
			struct aj_errors *err)
{
	cJSON *copy = printable(obj);
	int rc = copy ? aj_cli_print_doc(copy, format, err) : aj_errors_oom(err);

	cJSON_Delete(copy);
	return rc;
}

/* --- connecting --- */

int aj_cli_kube_open(struct aj_kube *k, const struct aj_cli_opts *o,
		     const char *context, const struct aj_node *context_node,
		     struct aj_errors *err)
{
	struct aj_kube_config_opts co;
	struct aj_kube_config cfg;
	struct aj_where w;

	memset(k, 0, sizeof(*k));
	if (aj_kube_global_init(err))
		return -1;
	memset(&co, 0, sizeof(co));
	aj_kube_config_opts_from_env(&co);
	co.kubeconfig = o->kubeconfig;
	co.context = o->context ? o->context : context;
	co.namespace = o->namespace_;
	if (aj_kube_config_load(&cfg, &co, err)) {
		/* The loader blames --context; say where the context really came from. */
		if (!o->context && context) {
			aj_node_where(context_node, "config.target.context", &w);
			aj_errors_add(err, &w, "the template selects context \"%s\" "
				      "(override with --context)", context);
		}
		return -1;
	}
	if (aj_kube_init(k, &cfg, err))
		return -1;
	k->timeout = REQUEST_TIMEOUT;
	return 0;
}

/* Open the cluster for list, status and cancel: no template involved. */
static int open_plain(struct aj_kube *k, const struct aj_cli_command *cmd,
		      const struct aj_cli_opts *o, struct aj_errors *err)
{
	memset(k, 0, sizeof(*k));
	if (o->namespace_ && !aj_dns_label(o->namespace_, NAMESPACE_MAX_LEN))
		return aj_cli_usage_error(cmd->name, "--namespace: '%s' is not a valid namespace",
					  o->namespace_);
	if (o->arg && (strlen(o->arg) > NAME_MAX_LEN || !*o->arg))
		return aj_cli_usage_error(cmd->name, "'%s' is not a valid AjJob name", o->arg);
	return aj_cli_kube_open(k, o, NULL, NULL, err) ? AJ_EXIT_FAIL : AJ_EXIT_OK;
}

static int done(int rc, struct aj_kube *k, struct aj_errors *err)
{
	aj_cli_print_errors(err);
	aj_errors_release(err);
	aj_kube_release(k);
	return rc;
}

/* Fetch the AjJob; a missing one gets a message naming it and its namespace. */
static int get_job(struct aj_kube *k, const char *name, cJSON **out,
		   struct aj_errors *err)
{
	struct aj_kube_ref ref = { &ajjobs, k->cfg.namespace, name, NULL };
	struct aj_errors local = AJ_ERRORS_INIT;
	struct aj_kube_status st;
	int rc;

	aj_kube_status_init(&st);
	rc = aj_kube_get(k, &ref, out, &st, &local);
	if (rc && st.reason == AJ_KUBE_NOT_FOUND)
		aj_errors_add(err, NULL, AJJOB_KIND "/%s not found in namespace %s",
			      name, k->cfg.namespace);
	else
		aj_errors_splice(err, &local);
	aj_errors_release(&local);
	aj_kube_status_release(&st);
	return rc;
}

/* --- waiting --- */

struct waiter {
	const char *name;
	char *phase;          /* the last phase printed */
	int seen;             /* the AjJob showed up in the watch */
	int status;           /* exit status once finished */
	int finished;
	struct aj_errors *err;
};

/* Static so that the SIGINT handler can reach it. */
static struct aj_watch_loop wait_loop;
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
	aj_watch_loop_stop(&wait_loop);
}

static void wait_finish(struct waiter *w, int status)
{
	w->finished = 1;
	w->status = status;
	aj_watch_loop_stop(&wait_loop);
}

/* Print "ajjob.aj.dev/NAME PHASE: message" when the phase changed. */
static int wait_saw(struct waiter *w, const cJSON *job)
{
	const char *phase = phase_of(job), *msg = str_at(job, "status.message");
	struct aj_buf line = AJ_BUF_INIT(AJ_BUF_SMALL);
	char *copy;
	int rc;

	w->seen = 1;
	if (w->phase && !strcmp(w->phase, phase))
		return 0;
	copy = aj_strdup(phase);
	if (!copy)
		return aj_errors_oom(w->err);
	aj_free(w->phase);
	w->phase = copy;
	aj_buf_addf(&line, AJJOB_KIND "/%s %s", w->name, phase);
	if (msg) {
		aj_buf_addstr(&line, ": ");
		add_one_line(&line, msg);
	}
	aj_buf_addch(&line, '\n');
	rc = line.failed ? aj_errors_oom(w->err)
			 : aj_cli_write(aj_buf_cstr(&line), line.len, w->err);
	aj_buf_release(&line);
	if (rc)
		wait_finish(w, AJ_EXIT_FAIL);
	else if (phase_terminal(phase))
		wait_finish(w, phase_exit(phase));
	return 0;
}

static void wait_gone(struct waiter *w)
{
	printf(AJJOB_KIND "/%s deleted\n", w->name);
	fflush(stdout);
	wait_finish(w, AJ_EXIT_FAIL);
}

static int wait_event(void *ctx, struct aj_watch_event *ev)
{
	struct waiter *w = ctx;
	const cJSON *items, *item;

	if (w->finished)
		return 0;
	switch (ev->type) {
	case AJ_WATCH_LIST:
		items = cJSON_GetObjectItemCaseSensitive(ev->object, "items");
		item = cJSON_GetArrayItem(items, 0);
		/* The first list may come from a cache that lags our own create. */
		if (item)
			return wait_saw(w, item);
		if (w->seen)
			wait_gone(w);
		return 0;
	case AJ_WATCH_ADDED:
	case AJ_WATCH_MODIFIED:
		return wait_saw(w, ev->object);
	case AJ_WATCH_DELETED:
		wait_gone(w);
		return 0;
	default:
		return 0;
	}
}

/* Problems the watch retries by itself: say so, the wait goes on. */
static void wait_log(void *ctx, void *watch_ctx, const char *message)
{
	(void)ctx;
	(void)watch_ctx;
	fprintf(stderr, "aj: still waiting: %s\n", message);
}

/*
 * Follow the AjJob ns/name until it ends. `phase` is the phase already
 * shown (NULL: none). Returns the exit status, or -1 with err filled.
 */
static int wait_job(struct aj_kube *k, const char *ns, const char *name,
		    const char *phase, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &ajjobs, ns, NULL, NULL };
	struct aj_kube_list_opts lo;
	struct waiter w;
	struct sigaction sa, old;
	struct aj_buf selector = AJ_BUF_INIT(AJ_BUF_SMALL);
	int rc = -1;

	memset(&w, 0, sizeof(w));
	memset(&lo, 0, sizeof(lo));
	w.name = name;
	w.err = err;
	if (phase && !(w.phase = aj_strdup(phase)))
		return aj_errors_oom(err);
	if (aj_buf_addf(&selector, "metadata.name=%s", name)) {
		aj_free(w.phase);
		return aj_errors_oom(err);
	}
	lo.field_selector = aj_buf_cstr(&selector);
	if (aj_watch_loop_init(&wait_loop, k, err))
		goto out;
	wait_loop.log = wait_log;
	if (aj_watch_add(&wait_loop, &ref, &lo, wait_event, &w, err))
		goto release;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_interrupt;
	sigemptyset(&sa.sa_mask);
	interrupted = 0;
	sigaction(SIGINT, &sa, &old);
	/* The loop returns 0 only once stopped: the job ended, or Ctrl-C. */
	if (!aj_watch_loop_run(&wait_loop, -1, err)) {
		if (w.finished) {
			rc = w.status;
		} else {
			fprintf(stderr, "aj: stopped waiting; " AJJOB_KIND "/%s goes on "
				"(follow it again: aj status %s --namespace %s --wait)\n",
				name, name, ns);
			rc = EXIT_INTERRUPTED;
		}
	}
	sigaction(SIGINT, &old, NULL);
release:
	aj_watch_loop_release(&wait_loop);
out:
	aj_buf_release(&selector);
	aj_free(w.phase);
	return rc;
}

/* --- aj run --- */

int aj_cli_kube_submit(struct aj_kube *k, const cJSON *job,
		       const struct aj_cli_opts *o, struct aj_errors *err)
{
	const char *name = str_at(job, "metadata.name"), *ns = str_at(job, "metadata.namespace");
	struct aj_kube_ref ref = { &ajjobs, ns, name, NULL };
	struct aj_errors local = AJ_ERRORS_INIT;
	struct aj_kube_status st;
	cJSON *created = NULL;
	int rc;

	aj_kube_status_init(&st);
	rc = aj_kube_create(k, &ref, job, &created, &st, &local);
	if (rc && st.reason == AJ_KUBE_ALREADY_EXISTS)
		aj_errors_add(err, NULL, AJJOB_KIND "/%s already exists in namespace %s: "
			      "choose another --name (or leave --name out for a fresh one)",
			      name, ns);
	else
		aj_errors_splice(err, &local);
	aj_errors_release(&local);
	aj_kube_status_release(&st);
	if (!rc) {
		if (o->format_set)
			rc = print_object(created, o->format, err);
		else if (printf(AJJOB_KIND "/%s created\n", name) < 0 || fflush(stdout))
			rc = aj_errors_add(err, NULL, "cannot write to standard output");
	}
	cJSON_Delete(created);
	return rc;
}

int aj_cli_kube_wait(struct aj_kube *k, const cJSON *job, struct aj_errors *err)
{
	return wait_job(k, str_at(job, "metadata.namespace"), str_at(job, "metadata.name"),
			NULL, err);
}

/* --- aj list --- */

static void list_row(struct aj_cli_table *t, const cJSON *job, int all, int wide, time_t now)
{
	const cJSON *nodes = at(job, "spec.nodes");
	char num[32], age[32];

	if (all)
		aj_cli_table_add(t, str_at(job, "metadata.namespace"));
	aj_cli_table_add(t, str_at(job, "metadata.name"));
	aj_cli_table_add(t, str_at(job, "status.backend"));
	aj_cli_table_add(t, phase_of(job));
	num[0] = '\0';
	if (cJSON_IsNumber(nodes))
		snprintf(num, sizeof(num), "%.0f", nodes->valuedouble);
	aj_cli_table_add(t, num);
	age_of(age, sizeof(age), str_at(job, "metadata.creationTimestamp"), now);
	aj_cli_table_add(t, age);
	if (wide) {
		struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
		const char *m = str_at(job, "status.message");

		if (m)
			add_one_line(&msg, m);
		if (msg.failed)
			t->failed = 1;
		aj_cli_table_add(t, aj_buf_cstr(&msg));
		aj_buf_release(&msg);
	}
}

int aj_cli_list_run(const struct aj_cli_opts *o)
{
	static const char *const heads[] = {
		"NAMESPACE", "NAME", "BACKEND", "PHASE", "NODES", "AGE", "MESSAGE"
	};
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube k;
	struct aj_kube_ref ref = { &ajjobs, NULL, NULL, NULL };
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(0);
	const cJSON *item;
	cJSON *items_list = NULL;
	int rc, wide = o->format_set && o->format == AJ_FORMAT_WIDE;
	size_t i, first = o->all_namespaces ? 0 : 1, last = wide ? 7 : 6;
	time_t now = time(NULL);

	if (o->all_namespaces && o->namespace_)
		return aj_cli_usage_error(aj_cli_list.name,
					  "--namespace and --all-namespaces exclude each other");
	rc = open_plain(&k, &aj_cli_list, o, &err);
	if (rc)
		return done(rc, &k, &err);
	if (!o->all_namespaces)
		ref.ns = k.cfg.namespace;
	if (aj_kube_list_all(&k, &ref, NULL, &items_list, NULL, &err))
		return done(AJ_EXIT_FAIL, &k, &err);
	if (o->format_set && !wide) {
		rc = print_object(items_list, o->format, &err) ? AJ_EXIT_FAIL : AJ_EXIT_OK;
		cJSON_Delete(items_list);
		return done(rc, &k, &err);
	}
	if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(items_list, "items"))) {
		if (o->all_namespaces)
			fputs("No resources found\n", stderr);
		else
			fprintf(stderr, "No resources found in %s namespace.\n", k.cfg.namespace);
		cJSON_Delete(items_list);
		return done(AJ_EXIT_OK, &k, &err);
	}
	t.cols = last - first;
	for (i = first; i < last; i++)
		aj_cli_table_add(&t, heads[i]);
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(items_list, "items")) {
		list_row(&t, item, o->all_namespaces, wide, now);
	}
	rc = aj_cli_table_print(&t, &err) ? AJ_EXIT_FAIL : AJ_EXIT_OK;
	aj_cli_table_release(&t);
	cJSON_Delete(items_list);
	return done(rc, &k, &err);
}

/* --- aj status --- */

/* The command as a shell would need it typed: words quoted only when needed. */
static void add_command(struct aj_buf *b, const cJSON *cmd)
{
	const cJSON *arg;
	const char *s;

	cJSON_ArrayForEach(arg, cmd) {
		if (!cJSON_IsString(arg))
			continue;
		s = arg->valuestring;
		if (b->len)
			aj_buf_addch(b, ' ');
		if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				 "0123456789@%+=:,./_-") == strlen(s))
			aj_buf_addstr(b, s);
		else
			aj_shell_quote(b, s);
	}
}

static void field(struct aj_buf *b, const char *label, const char *value)
{
	aj_buf_addf(b, "%-14s", label);
	add_one_line(b, value ? value : "-");
	aj_buf_addch(b, '\n');
}

static int describe(const cJSON *job, struct aj_errors *err)
{
	static const char *const heads[] = { "TYPE", "STATUS", "REASON", "AGE", "MESSAGE" };
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_LARGE), cmd = AJ_BUF_INIT(AJ_BUF_LARGE);
	const cJSON *nodes = at(job, "spec.nodes"), *conds = at(job, "status.conditions"), *c;
	time_t now = time(NULL);
	char num[32], age[32];
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(5);
	size_t i;
	int rc;

	add_command(&cmd, at(job, "spec.command"));
	num[0] = '\0';
	if (cJSON_IsNumber(nodes))
		snprintf(num, sizeof(num), "%.0f", nodes->valuedouble);
	age_of(age, sizeof(age), str_at(job, "metadata.creationTimestamp"), now);
	field(&out, "Name:", str_at(job, "metadata.name"));
	field(&out, "Namespace:", str_at(job, "metadata.namespace"));
	field(&out, "Template:", str_at(job, "spec.name"));
	field(&out, "Command:", cmd.len ? aj_buf_cstr(&cmd) : NULL);
	field(&out, "Nodes:", *num ? num : NULL);
	field(&out, "Age:", age);
	field(&out, "Backend:", str_at(job, "status.backend"));
	field(&out, "Phase:", phase_of(job));
	field(&out, "Volcano job:", str_at(job, "status.volcano.jobName"));
	if (cJSON_GetObjectItemCaseSensitive(at(job, "metadata.annotations"),
					     CANCEL_ANNOTATION))
		field(&out, "Cancel:", "requested");
	field(&out, "Message:", str_at(job, "status.message"));
	aj_buf_release(&cmd);
	if (out.failed)
		return aj_errors_oom(err);
	rc = aj_cli_write(aj_buf_cstr(&out), out.len, err);
	aj_buf_release(&out);
	if (rc || !cJSON_GetArraySize(conds))
		return rc;
	t.indent = "  ";
	for (i = 0; i < t.cols; i++)
		aj_cli_table_add(&t, heads[i]);
	cJSON_ArrayForEach(c, conds) {
		struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
		const char *m = str_at(c, "message");

		if (m)
			add_one_line(&msg, m);
		age_of(age, sizeof(age), str_at(c, "lastTransitionTime"), now);
		t.failed |= msg.failed;
		aj_cli_table_add(&t, str_at(c, "type"));
		aj_cli_table_add(&t, str_at(c, "status"));
		aj_cli_table_add(&t, str_at(c, "reason"));
		aj_cli_table_add(&t, age);
		aj_cli_table_add(&t, aj_buf_cstr(&msg));
		aj_buf_release(&msg);
	}
	rc = aj_cli_write("Conditions:\n", 12, err) || aj_cli_table_print(&t, err) ? -1 : 0;
	aj_cli_table_release(&t);
	return rc;
}

int aj_cli_status_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube k;
	cJSON *job = NULL;
	int rc = open_plain(&k, &aj_cli_status, o, &err);

	if (rc)
		return done(rc, &k, &err);
	if (get_job(&k, o->arg, &job, &err))
		return done(AJ_EXIT_FAIL, &k, &err);
	rc = o->format_set ? print_object(job, o->format, &err) : describe(job, &err);
	if (!rc && o->wait) {
		if (phase_terminal(phase_of(job)))
			rc = phase_exit(phase_of(job));
		else
			rc = wait_job(&k, k.cfg.namespace, o->arg, phase_of(job), &err);
	}
	cJSON_Delete(job);
	return done(rc < 0 ? AJ_EXIT_FAIL : rc, &k, &err);
}

/* --- aj cancel --- */

int aj_cli_cancel_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube k;
	struct aj_kube_ref ref;
	cJSON *job = NULL, *patch = NULL, *ann;
	const char *phase;
	int rc = open_plain(&k, &aj_cli_cancel, o, &err);

	if (rc)
		return done(rc, &k, &err);
	if (get_job(&k, o->arg, &job, &err))
		return done(AJ_EXIT_FAIL, &k, &err);
	phase = phase_of(job);
	if (phase_terminal(phase)) {
		printf(AJJOB_KIND "/%s already %s; nothing to cancel\n", o->arg, phase);
		cJSON_Delete(job);
		return done(AJ_EXIT_OK, &k, &err);
	}
	cJSON_Delete(job);
	/* A merge patch touches only this annotation, whatever else changed. */
	patch = cJSON_CreateObject();
	ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"),
				      "annotations");
	if (!ann || !cJSON_AddStringToObject(ann, CANCEL_ANNOTATION, "true")) {
		cJSON_Delete(patch);
		aj_errors_oom(&err);
		return done(AJ_EXIT_FAIL, &k, &err);
	}
	ref.res = &ajjobs;
	ref.ns = k.cfg.namespace;
	ref.name = o->arg;
	ref.subresource = NULL;
	rc = aj_kube_patch(&k, &ref, AJ_KUBE_MERGE_PATCH, patch, NULL, NULL, &err);
	cJSON_Delete(patch);
	if (!rc)
		printf(AJJOB_KIND "/%s cancel requested\n", o->arg);
	return done(rc ? AJ_EXIT_FAIL : AJ_EXIT_OK, &k, &err);
}
