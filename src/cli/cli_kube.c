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
#include "backend/common.h"
#include "cli.h"
#include "cli_kube.h"
#include "core/alloc.h"
#include "core/ajjob.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/node.h"
#include "core/strlist.h"
#include "core/timestamp.h"
#include "kube/client.h"
#include "kube/watch.h"

#define NAME_MAX_LEN 253          /* a DNS-1123 subdomain */
#define NAMESPACE_MAX_LEN 63
/* One REST request may take this long before the CLI gives up (seconds). */
#define REQUEST_TIMEOUT 30

const struct aj_kube_resource aj_cli_ajjobs = {
	AJ_AJJOB_GROUP, AJ_AJJOB_VERSION, AJ_AJJOB_PLURAL, 1
};

/* --- reading objects --- */

/* The value at a dotted path of object keys, or NULL. */
const cJSON *aj_cli_at(const cJSON *obj, const char *dotted)
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
const char *aj_cli_str_at(const cJSON *obj, const char *dotted)
{
	const cJSON *v = aj_cli_at(obj, dotted);

	return cJSON_IsString(v) && *v->valuestring ? v->valuestring : NULL;
}

/* An AjJob the controller has not reported on yet is Pending. */
const char *aj_cli_phase(const cJSON *job)
{
	const char *p = aj_cli_str_at(job, "status.phase");

	return p ? p : aj_phase_name(AJ_PHASE_PENDING);
}

/* A phase this aj does not know (a newer controller's) is not an end. */
int aj_cli_phase_terminal(const char *p)
{
	enum aj_phase ph;

	return !aj_phase_parse(p, &ph) && aj_phase_terminal(ph);
}

int aj_cli_phase_exit(const char *p)
{
	enum aj_phase ph;

	return !aj_phase_parse(p, &ph) && ph == AJ_PHASE_SUCCEEDED ? AJ_EXIT_OK : AJ_EXIT_FAIL;
}

/* Append s on one line: each run of line breaks becomes "; ". */
void aj_cli_add_one_line(struct aj_buf *b, const char *s)
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

void aj_cli_age(char *out, size_t size, const char *t, time_t now)
{
	human_age(out, size, seconds_since(t, now));
}

/* A copy of obj without metadata.managedFields, which kubectl hides too. */
cJSON *aj_cli_printable(const cJSON *obj)
{
	cJSON *copy = cJSON_Duplicate(obj, 1);

	cJSON_DeleteItemFromObjectCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(copy, "metadata"), "managedFields");
	return copy;
}

int aj_cli_print_object(const cJSON *obj, enum aj_cli_format format,
			struct aj_errors *err)
{
	cJSON *copy = aj_cli_printable(obj);
	int rc = copy ? aj_cli_print_doc(copy, format, err) : aj_errors_oom(err);

	cJSON_Delete(copy);
	return rc;
}

void aj_cli_catch_sigint(void (*handler)(int), struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = handler;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, old);
}

/* --- connecting --- */

int aj_cli_kube_config_load(struct aj_kube_config *cfg,
			    struct aj_kube_config_opts *co, struct aj_errors *err)
{
	co->allow_insecure = 1;
	if (aj_kube_config_load(cfg, co, err))
		return -1;
	if (cfg->insecure)
		fprintf(stderr, "aj: warning: the certificate of %s is not verified "
			"(insecure-skip-tls-verify in %s): anyone on the way can read "
			"and change this connection\n", cfg->server, cfg->origin);
	return 0;
}

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
	if (aj_cli_kube_config_load(&cfg, &co, err)) {
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
int aj_cli_kube_open_plain(struct aj_kube *k, const struct aj_cli_command *cmd,
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

int aj_cli_kube_done(int rc, struct aj_kube *k, struct aj_errors *err)
{
	aj_cli_print_errors(err);
	aj_errors_release(err);
	aj_kube_release(k);
	return rc;
}

/*
 * ", but one exists in namespace(s) a, b (add --namespace a)" for AjJobs
 * named `name` elsewhere: one cluster-wide list by name. Nothing when there
 * are none or the user may not list them.
 */
static void add_elsewhere(struct aj_kube *k, const char *name, struct aj_buf *msg)
{
	struct aj_kube_ref ref = { &aj_cli_ajjobs, NULL, NULL, NULL };
	struct aj_kube_list_opts lo;
	struct aj_errors ignored = AJ_ERRORS_INIT;
	struct aj_buf sel = AJ_BUF_INIT(AJ_BUF_SMALL), where = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *first = NULL, *ns;
	const cJSON *item;
	cJSON *list = NULL;
	size_t n = 0;

	memset(&lo, 0, sizeof(lo));
	aj_buf_addf(&sel, "metadata.name=%s", name);
	lo.field_selector = aj_buf_cstr(&sel);
	if (!sel.failed && !aj_kube_list_all(k, &ref, &lo, &list, NULL, &ignored)) {
		cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items")) {
			if (!(ns = aj_cli_str_at(item, "metadata.namespace")))
				continue;
			aj_buf_addf(&where, "%s%s", n++ ? ", " : "", ns);
			if (!first)
				first = ns;
		}
		if (first && !where.failed)
			aj_buf_addf(msg, ", but one exists in namespace%s %s (add --namespace %s)",
				    n > 1 ? "s" : "", aj_buf_cstr(&where), first);
	}
	cJSON_Delete(list);
	aj_errors_release(&ignored);
	aj_buf_release(&sel);
	aj_buf_release(&where);
}

int aj_cli_kube_get_job(struct aj_kube *k, const char *ns, const char *name, cJSON **out,
			struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_cli_ajjobs, ns, name, NULL };
	struct aj_errors local = AJ_ERRORS_INIT;
	struct aj_kube_status st;
	struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
	int rc;

	aj_kube_status_init(&st);
	rc = aj_kube_get(k, &ref, out, &st, &local);
	if (rc && st.reason == AJ_KUBE_NOT_FOUND) {
		aj_buf_addf(&msg, AJJOB_KIND "/%s not found in namespace %s", name, ns);
		add_elsewhere(k, name, &msg);
		if (msg.failed)
			aj_errors_oom(err);
		else
			aj_errors_add(err, NULL, "%s", aj_buf_cstr(&msg));
		aj_buf_release(&msg);
	} else
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

/* Static so that the SIGINT handler can reach it (waiting and aj list -w). */
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
	const char *phase = aj_cli_phase(job), *msg = aj_cli_str_at(job, "status.message");
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
		aj_cli_add_one_line(&line, msg);
	}
	aj_buf_addch(&line, '\n');
	rc = line.failed ? aj_errors_oom(w->err)
			 : aj_cli_write(aj_buf_cstr(&line), line.len, w->err);
	aj_buf_release(&line);
	if (rc)
		wait_finish(w, AJ_EXIT_FAIL);
	else if (aj_cli_phase_terminal(phase))
		wait_finish(w, aj_cli_phase_exit(phase));
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
int aj_cli_kube_wait_job(struct aj_kube *k, const char *ns, const char *name,
			 const char *phase, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_cli_ajjobs, ns, NULL, NULL };
	struct aj_kube_list_opts lo;
	struct waiter w;
	struct sigaction old;
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
	interrupted = 0;
	aj_cli_catch_sigint(on_interrupt, &old);
	/* The loop returns 0 only once stopped: the job ended, or Ctrl-C. */
	if (!aj_watch_loop_run(&wait_loop, -1, err)) {
		if (w.finished) {
			rc = w.status;
		} else {
			fprintf(stderr, "aj: stopped waiting; " AJJOB_KIND "/%s goes on "
				"(follow it again: aj status %s --namespace %s --wait)\n",
				name, name, ns);
			rc = AJ_CLI_EXIT_INTERRUPTED;
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
	const char *name = aj_cli_str_at(job, "metadata.name"), *ns = aj_cli_str_at(job, "metadata.namespace");
	struct aj_kube_ref ref = { &aj_cli_ajjobs, ns, name, NULL };
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
			rc = aj_cli_print_object(created, o->format, err);
		else if (printf(AJJOB_KIND "/%s created\n", name) < 0 || fflush(stdout))
			rc = aj_errors_add(err, NULL, "cannot write to standard output");
	}
	cJSON_Delete(created);
	return rc;
}

int aj_cli_kube_wait(struct aj_kube *k, const cJSON *job, struct aj_errors *err)
{
	return aj_cli_kube_wait_job(k, aj_cli_str_at(job, "metadata.namespace"), aj_cli_str_at(job, "metadata.name"),
			NULL, err);
}

/* --- aj list --- */

static const char *const list_heads[] = {
	"NAMESPACE", "NAME", "BACKEND", "PHASE", "NODES", "AGE", "PLACED", "MESSAGE"
};

struct lister {
	const struct aj_cli_opts *o;
	int wide, structured;
	size_t first, last;          /* the columns of list_heads shown */
	size_t widths[8];            /* -w: the widths printed so far, kept */
	int header_done;
	int listed;                  /* the first list has been shown */
	struct aj_errors *err;
	int failed;
};

static int list_wanted(const struct lister *ls, const cJSON *job)
{
	return !ls->o->phase || !strcmp(aj_cli_phase(job), ls->o->phase);
}

static void list_row(struct aj_cli_table *t, const cJSON *job, const char *phase, int all,
		     int wide, time_t now)
{
	const cJSON *nodes = aj_cli_at(job, "spec.nodes");
	char num[32], age[32];

	if (all)
		aj_cli_table_add(t, aj_cli_str_at(job, "metadata.namespace"));
	aj_cli_table_add(t, aj_cli_str_at(job, "metadata.name"));
	aj_cli_table_add(t, aj_cli_str_at(job, "status.backend"));
	aj_cli_table_add(t, phase ? phase : aj_cli_phase(job));
	num[0] = '\0';
	if (cJSON_IsNumber(nodes))
		snprintf(num, sizeof(num), "%.0f", nodes->valuedouble);
	aj_cli_table_add(t, num);
	aj_cli_age(age, sizeof(age), aj_cli_str_at(job, "metadata.creationTimestamp"), now);
	aj_cli_table_add(t, age);
	if (wide) {
		struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
		const char *m = aj_cli_str_at(job, "status.message");

		/* a placement AjJob's chosen candidate */
		aj_cli_table_add(t, aj_cli_str_at(job, "status.placement.chosen"));
		if (m)
			aj_cli_add_one_line(&msg, m);
		if (msg.failed)
			t->failed = 1;
		aj_cli_table_add(t, aj_buf_cstr(&msg));
		aj_buf_release(&msg);
	}
}

/*
 * Print the wanted AjJobs of `jobs` (one object, or an array), as rows (the
 * header before the first) or, with -o yaml|json, as objects. `phase`
 * replaces their phase (NULL: their own). 0 / -1.
 */
static int list_print(struct lister *ls, const cJSON *jobs, const char *phase)
{
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(ls->last - ls->first);
	const cJSON *job = cJSON_IsArray(jobs) ? jobs->child : jobs;
	time_t now = time(NULL);
	size_t i, rows = 0;
	int rc = 0;

	t.widths = ls->widths;
	if (!ls->header_done)
		for (i = ls->first; i < ls->last; i++)
			aj_cli_table_add(&t, list_heads[i]);
	for (; job; job = cJSON_IsArray(jobs) ? job->next : NULL) {
		if (!list_wanted(ls, job))
			continue;
		rows++;
		if (ls->structured)
			rc = rc || (ls->o->format == AJ_FORMAT_YAML && aj_cli_write("---\n", 4, ls->err)) ||
			     aj_cli_print_object(job, ls->o->format, ls->err);
		else
			list_row(&t, job, phase, ls->o->all_namespaces, ls->wide, now);
	}
	if (rows && !ls->structured) {
		rc = aj_cli_table_print(&t, ls->err);
		ls->header_done = 1;
	}
	aj_cli_table_release(&t);
	return rc ? -1 : 0;
}

static int list_event(void *ctx, struct aj_watch_event *ev)
{
	struct lister *ls = ctx;
	int rc = 0;

	switch (ev->type) {
	case AJ_WATCH_LIST:
		/* a relist after an expired watch: the rows were shown */
		if (!ls->listed)
			rc = list_print(ls, cJSON_GetObjectItemCaseSensitive(ev->object, "items"), NULL);
		if (ev->last)
			ls->listed = 1;
		break;
	case AJ_WATCH_ADDED:
	case AJ_WATCH_MODIFIED:
		rc = list_print(ls, ev->object, NULL);
		break;
	case AJ_WATCH_DELETED:
		rc = list_print(ls, ev->object, "Deleted");
		break;
	default:
		break;
	}
	if (rc) {
		ls->failed = 1;
		aj_watch_loop_stop(&wait_loop);
	}
	return 0;
}

/* -w: the rows, then one for each change, until Ctrl-C. */
static int list_watch(struct aj_kube *k, const struct aj_kube_ref *ref,
		      const struct aj_kube_list_opts *lo, struct lister *ls)
{
	struct sigaction old;
	int rc = -1;

	if (aj_watch_loop_init(&wait_loop, k, ls->err))
		return -1;
	if (aj_watch_add(&wait_loop, ref, lo, list_event, ls, ls->err))
		goto out;
	interrupted = 0;
	aj_cli_catch_sigint(on_interrupt, &old);
	rc = aj_watch_loop_run(&wait_loop, -1, ls->err);
	sigaction(SIGINT, &old, NULL);
	if (!rc)
		rc = ls->failed ? -1 : interrupted ? AJ_CLI_EXIT_INTERRUPTED : AJ_EXIT_OK;
out:
	aj_watch_loop_release(&wait_loop);
	return rc;
}

/* Keep the items of list in phase p (-o yaml|json --phase). */
static void list_filter(cJSON *list, const struct lister *ls)
{
	cJSON *items = cJSON_GetObjectItemCaseSensitive(list, "items"), *item = items ? items->child : NULL;

	while (item) {
		cJSON *next = item->next;

		if (!list_wanted(ls, item))
			cJSON_Delete(cJSON_DetachItemViaPointer(items, item));
		item = next;
	}
}

int aj_cli_list_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube k;
	struct aj_kube_ref ref = { &aj_cli_ajjobs, NULL, NULL, NULL };
	struct aj_kube_list_opts lo;
	struct lister ls;
	cJSON *items_list = NULL;
	int rc;

	if (o->all_namespaces && o->namespace_)
		return aj_cli_usage_error(aj_cli_list.name,
					  "--namespace and --all-namespaces exclude each other");
	memset(&ls, 0, sizeof(ls));
	ls.o = o;
	ls.err = &err;
	ls.wide = o->format_set && o->format == AJ_FORMAT_WIDE;
	ls.structured = o->format_set && !ls.wide;
	ls.first = o->all_namespaces ? 0 : 1;
	ls.last = ls.wide ? 8 : 6;
	memset(&lo, 0, sizeof(lo));
	lo.label_selector = o->selector;
	rc = aj_cli_kube_open_plain(&k, &aj_cli_list, o, &err);
	if (rc)
		return aj_cli_kube_done(rc, &k, &err);
	if (!o->all_namespaces)
		ref.ns = k.cfg.namespace;
	if (o->watch) {
		rc = list_watch(&k, &ref, &lo, &ls);
		return aj_cli_kube_done(rc < 0 ? AJ_EXIT_FAIL : rc, &k, &err);
	}
	if (aj_kube_list_all(&k, &ref, &lo, &items_list, NULL, &err))
		return aj_cli_kube_done(AJ_EXIT_FAIL, &k, &err);
	list_filter(items_list, &ls);
	if (ls.structured) {
		rc = aj_cli_print_object(items_list, o->format, &err) ? AJ_EXIT_FAIL : AJ_EXIT_OK;
		cJSON_Delete(items_list);
		return aj_cli_kube_done(rc, &k, &err);
	}
	if (!cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(items_list, "items"))) {
		if (o->all_namespaces)
			fputs("No resources found\n", stderr);
		else
			fprintf(stderr, "No resources found in %s namespace.\n", k.cfg.namespace);
		cJSON_Delete(items_list);
		return aj_cli_kube_done(AJ_EXIT_OK, &k, &err);
	}
	rc = list_print(&ls, cJSON_GetObjectItemCaseSensitive(items_list, "items"), NULL)
	     ? AJ_EXIT_FAIL : AJ_EXIT_OK;
	cJSON_Delete(items_list);
	return aj_cli_kube_done(rc, &k, &err);
}

/* --- aj cancel, aj delete --- */

/* Set the cancel annotation on the AjJob name (a merge patch touches only it). 0 / -1. */
static int request_cancel(struct aj_kube *k, const char *name, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_cli_ajjobs, k->cfg.namespace, name, NULL };
	cJSON *patch = cJSON_CreateObject(), *ann;
	int rc;

	ann = cJSON_AddObjectToObject(cJSON_AddObjectToObject(patch, "metadata"), "annotations");
	if (!ann || !cJSON_AddStringToObject(ann, AJ_CLI_CANCEL_ANNOTATION, "true")) {
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	rc = aj_kube_patch(k, &ref, AJ_KUBE_MERGE_PATCH, patch, NULL, NULL, err);
	cJSON_Delete(patch);
	if (!rc)
		printf(AJJOB_KIND "/%s cancel requested\n", name);
	return rc;
}

int aj_cli_cancel_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube k;
	cJSON *job = NULL;
	const char *phase;
	int rc = aj_cli_kube_open_plain(&k, &aj_cli_cancel, o, &err);

	if (rc)
		return aj_cli_kube_done(rc, &k, &err);
	if (aj_cli_kube_get_job(&k, k.cfg.namespace, o->arg, &job, &err))
		return aj_cli_kube_done(AJ_EXIT_FAIL, &k, &err);
	phase = aj_cli_phase(job);
	if (aj_cli_phase_terminal(phase)) {
		printf(AJJOB_KIND "/%s already %s; nothing to cancel\n", o->arg, phase);
		cJSON_Delete(job);
		return aj_cli_kube_done(AJ_EXIT_OK, &k, &err);
	}
	cJSON_Delete(job);
	rc = request_cancel(&k, o->arg, &err);
	return aj_cli_kube_done(rc ? AJ_EXIT_FAIL : AJ_EXIT_OK, &k, &err);
}

/* Wait until the AjJob name is gone (a finalizer may hold it a while). 0 / -1. */
static int wait_deleted(struct aj_kube *k, const char *name, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_cli_ajjobs, k->cfg.namespace, name, NULL };
	struct timespec pause = { 0, 500 * 1000 * 1000 };
	struct aj_kube_status st;
	int rc;

	aj_kube_status_init(&st);
	while (!interrupted) {
		struct aj_errors local = AJ_ERRORS_INIT;

		rc = aj_kube_get(k, &ref, NULL, &st, &local);
		if (rc && st.reason == AJ_KUBE_NOT_FOUND) {
			aj_errors_release(&local);
			break;
		}
		if (rc) {
			aj_errors_splice(err, &local);
			aj_errors_release(&local);
			aj_kube_status_release(&st);
			return -1;
		}
		aj_errors_release(&local);
		nanosleep(&pause, NULL);
	}
	aj_kube_status_release(&st);
	return 0;
}

/*
 * Cancel (when it has not ended), wait for the Cancelled status, delete
 * (the Volcano Job goes with it by garbage collection), wait until gone.
 * Returns 0, 1 when this one failed (err filled), or 130 after Ctrl-C.
 */
static int delete_one(struct aj_kube *k, const char *name, int wait, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_cli_ajjobs, k->cfg.namespace, name, NULL };
	struct aj_kube_delete_opts d = { AJ_KUBE_PROPAGATION_BACKGROUND, NULL, NULL };
	cJSON *job = NULL;
	const char *phase;
	int rc;

	if (aj_cli_kube_get_job(k, k->cfg.namespace, name, &job, err))
		return AJ_EXIT_FAIL;
	phase = aj_cli_phase(job);
	if (!aj_cli_phase_terminal(phase)) {
		rc = request_cancel(k, name, err);
		if (!rc && wait && !strcmp(phase, aj_phase_name(AJ_PHASE_PENDING)) &&
		    !aj_cli_str_at(job, "status.backend"))
			rc = 0;   /* no controller has seen it: there is nothing to cancel yet */
		else if (!rc && wait)
			rc = aj_cli_kube_wait_job(k, k->cfg.namespace, name, phase, err);
		if (rc == AJ_CLI_EXIT_INTERRUPTED || rc < 0) {
			cJSON_Delete(job);
			return rc < 0 ? AJ_EXIT_FAIL : rc;
		}
	}
	cJSON_Delete(job);
	if (aj_kube_delete(k, &ref, &d, NULL, NULL, err))
		return AJ_EXIT_FAIL;
	if (wait && wait_deleted(k, name, err))
		return AJ_EXIT_FAIL;
	if (interrupted)
		return AJ_CLI_EXIT_INTERRUPTED;
	printf(AJJOB_KIND "/%s deleted\n", name);
	fflush(stdout);
	return AJ_EXIT_OK;
}

int aj_cli_delete_run(const struct aj_cli_opts *o)
{
	const struct aj_cli_command *cmd = &aj_cli_delete;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_ref ref = { &aj_cli_ajjobs, NULL, NULL, NULL };
	struct aj_strlist names = AJ_STRLIST_INIT;
	struct sigaction old;
	struct aj_kube k;
	const cJSON *item;
	cJSON *list = NULL;
	size_t i;
	int rc, one, failed = 0;

	if (o->all == (o->nnames > 0))
		return aj_cli_usage_error(cmd->name, o->all ? "--all and NAMEs exclude each other"
					  : "missing AjJob NAME (or --all; try aj delete --help)");
	if (o->phase && !o->all)
		return aj_cli_usage_error(cmd->name, "--phase selects with --all");
	if (o->wait && o->no_wait)
		return aj_cli_usage_error(cmd->name, "--wait and --no-wait exclude each other");
	for (i = 0; i < o->nnames; i++)
		if (strlen(o->names[i]) > NAME_MAX_LEN || !*o->names[i])
			return aj_cli_usage_error(cmd->name, "'%s' is not a valid AjJob name",
						  o->names[i]);
	rc = aj_cli_kube_open_plain(&k, cmd, o, &err);
	if (rc)
		return aj_cli_kube_done(rc, &k, &err);
	for (i = 0; i < o->nnames; i++)
		failed |= aj_strlist_add(&names, o->names[i]);
	if (o->all) {
		ref.ns = k.cfg.namespace;
		if (aj_kube_list_all(&k, &ref, NULL, &list, NULL, &err)) {
			aj_strlist_release(&names);
			return aj_cli_kube_done(AJ_EXIT_FAIL, &k, &err);
		}
		cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items")) {
			if (!o->phase || !strcmp(aj_cli_phase(item), o->phase))
				failed |= aj_strlist_add(&names, aj_cli_str_at(item, "metadata.name"));
		}
		cJSON_Delete(list);
		if (!names.nr)
			fprintf(stderr, "No resources found in %s namespace.\n", k.cfg.namespace);
	}
	if (failed) {
		aj_strlist_release(&names);
		aj_errors_oom(&err);
		return aj_cli_kube_done(AJ_EXIT_FAIL, &k, &err);
	}
	interrupted = 0;
	aj_cli_catch_sigint(on_interrupt, &old);
	rc = AJ_EXIT_OK;
	/* each name on its own: one that fails does not keep the others */
	for (i = 0; i < names.nr && !interrupted; i++) {
		one = delete_one(&k, names.items[i], !o->no_wait, &err);
		aj_cli_print_errors(&err);
		aj_errors_release(&err);
		if (one == AJ_CLI_EXIT_INTERRUPTED || interrupted) {
			rc = AJ_CLI_EXIT_INTERRUPTED;
			break;
		}
		if (one)
			rc = AJ_EXIT_FAIL;
	}
	sigaction(SIGINT, &old, NULL);
	aj_strlist_release(&names);
	return aj_cli_kube_done(rc, &k, &err);
}
