/*
 * cli_status.c - `aj status NAME`: what the AjJob is doing. The AjJob's
 * fields and conditions, its tasks (status.tasks) and Azure details
 * (status.azure) when the controller reports them, then one row per pod
 * (task, rank, node, phase, restarts, exit code or reason, age), why
 * pending pods wait (their scheduling condition), and the last Events of
 * the AjJob, its backend's Job (status.<backend>.jobName of a cluster
 * backend) and that Job's PodGroup (a gang scheduler's, named <job>-...).
 *
 * -o yaml|json prints the AjJob (without managedFields) with two more keys,
 * `pods` (the rows) and `events`, so scripts read the same data.
 * The pod and event lists are the API server's; a list the user may not
 * read is left out with a note, the AjJob is still shown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/backend.h"
#include "backend/common.h"
#include "cli.h"
#include "cli_kube.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/client.h"

/* Events shown per AjJob (the newest). */
#define STATUS_EVENTS 10

static const struct aj_kube_resource pods_res = { "", "v1", "pods", 1 };
static const struct aj_kube_resource events_res = { "", "v1", "events", 1 };

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
	aj_cli_add_one_line(b, value ? value : "-");
	aj_buf_addch(b, '\n');
}

/* --- gathering --- */

static int add_str(cJSON *o, const char *key, const char *v)
{
	return v && !cJSON_AddStringToObject(o, key, v) ? -1 : 0;
}

/* One pod as a row: the fields aj status shows. NULL on OOM. */
static cJSON *pod_row(const cJSON *pod, const char *rank_annotation)
{
	const cJSON *cs = cJSON_GetArrayItem(aj_cli_at(pod, "status.containerStatuses"), 0);
	const cJSON *c, *term = aj_cli_at(cs, "state.terminated");
	const cJSON *labels = aj_cli_at(pod, "metadata.labels");
	const cJSON *ann = aj_cli_at(pod, "metadata.annotations");
	const cJSON *task = cJSON_GetObjectItemCaseSensitive(labels, "aj.dev/task");
	const cJSON *rank = rank_annotation ? cJSON_GetObjectItemCaseSensitive(ann, rank_annotation)
					    : NULL;
	const char *reason = NULL, *message = NULL;
	cJSON *row = cJSON_CreateObject();
	double restarts = 0;
	int rc = 0;

	if (!row)
		return NULL;
	cJSON_ArrayForEach(c, aj_cli_at(pod, "status.containerStatuses")) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "restartCount");

		if (cJSON_IsNumber(n))
			restarts += n->valuedouble;
	}
	cJSON_ArrayForEach(c, aj_cli_at(pod, "status.conditions")) {
		const char *type = aj_cli_str_at(c, "type"), *status = aj_cli_str_at(c, "status");

		if (type && status && !strcmp(type, "PodScheduled") && strcmp(status, "True")) {
			reason = aj_cli_str_at(c, "reason");
			message = aj_cli_str_at(c, "message");
		}
	}
	if (term) {
		reason = aj_cli_str_at(term, "reason");
		message = aj_cli_str_at(term, "message");
		if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(term, "exitCode")) &&
		    !cJSON_AddNumberToObject(row, "exitCode",
					     cJSON_GetObjectItemCaseSensitive(term, "exitCode")->valuedouble))
			rc = -1;
	} else if (aj_cli_at(cs, "state.waiting")) {
		reason = aj_cli_str_at(cs, "state.waiting.reason");
		message = aj_cli_str_at(cs, "state.waiting.message");
	}
	rc |= add_str(row, "name", aj_cli_str_at(pod, "metadata.name"));
	rc |= add_str(row, "task", cJSON_IsString(task) ? task->valuestring : NULL);
	rc |= add_str(row, "rank", cJSON_IsString(rank) ? rank->valuestring : NULL);
	rc |= add_str(row, "node", aj_cli_str_at(pod, "spec.nodeName"));
	rc |= add_str(row, "phase", aj_cli_str_at(pod, "status.phase"));
	if (!cJSON_AddNumberToObject(row, "restarts", restarts))
		rc = -1;
	rc |= add_str(row, "reason", reason);
	rc |= add_str(row, "message", message);
	rc |= add_str(row, "created", aj_cli_str_at(pod, "metadata.creationTimestamp"));
	if (rc) {
		cJSON_Delete(row);
		return NULL;
	}
	return row;
}

/* A row's rank as a number, -1 when it has none. */
static long rank_num(const cJSON *row)
{
	const char *r = aj_cli_str_at(row, "rank");

	return r ? strtol(r, NULL, 10) : -1;
}

static int task_rank_cmp(const void *a, const void *b)
{
	const cJSON *x = *(const cJSON *const *)a, *y = *(const cJSON *const *)b;
	const char *tx = aj_cli_str_at(x, "task"), *ty = aj_cli_str_at(y, "task");
	int c = strcmp(tx ? tx : "", ty ? ty : "");

	if (c)
		return c;
	if (rank_num(x) != rank_num(y))
		return rank_num(x) < rank_num(y) ? -1 : 1;
	return strcmp(aj_cli_str_at(x, "name") ? aj_cli_str_at(x, "name") : "",
		      aj_cli_str_at(y, "name") ? aj_cli_str_at(y, "name") : "");
}

/* Sort a cJSON array in place with cmp over its items. 0 / -1 (OOM). */
static int sort_array(cJSON *arr, int (*cmp)(const void *, const void *))
{
	size_t n = (size_t)cJSON_GetArraySize(arr), i = 0;
	cJSON **items, *it;

	if (n < 2)
		return 0;
	if (!(items = aj_calloc(n, sizeof(*items))))
		return -1;
	while ((it = arr->child)) {
		items[i++] = cJSON_DetachItemViaPointer(arr, it);
	}
	qsort(items, n, sizeof(*items), cmp);
	for (i = 0; i < n; i++)
		cJSON_AddItemToArray(arr, items[i]);
	aj_free(items);
	return 0;
}

static int gather_pods(struct aj_kube *k, const cJSON *job, cJSON *rows, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &pods_res, k->cfg.namespace, NULL, NULL };
	const char *backend = aj_cli_str_at(job, "status.backend");
	const struct aj_backend *be = backend ? aj_backend_find(backend) : NULL;
	struct aj_kube_list_opts lo;
	struct aj_buf sel = AJ_BUF_INIT(AJ_BUF_SMALL);
	const cJSON *item;
	cJSON *list = NULL, *row;
	int rc;

	if (be && !be->rank_annotation)
		return 0;   /* the job runs outside the cluster */
	memset(&lo, 0, sizeof(lo));
	aj_buf_addf(&sel, "aj.dev/ajjob=%s", aj_cli_str_at(job, "metadata.name"));
	if (sel.failed)
		return aj_errors_oom(err);
	lo.label_selector = aj_buf_cstr(&sel);
	rc = aj_kube_list_all(k, &ref, &lo, &list, NULL, err);
	aj_buf_release(&sel);
	if (rc)
		return -1;
	cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(list, "items")) {
		if (!(row = pod_row(item, be ? be->rank_annotation : NULL)) ||
		    !cJSON_AddItemToArray(rows, row)) {
			cJSON_Delete(row);
			cJSON_Delete(list);
			return aj_errors_oom(err);
		}
	}
	cJSON_Delete(list);
	return sort_array(rows, task_rank_cmp) ? aj_errors_oom(err) : 0;
}

static const char *event_time(const cJSON *ev)
{
	const char *t = aj_cli_str_at(ev, "lastTimestamp");

	if (!t)
		t = aj_cli_str_at(ev, "eventTime");
	return t ? t : aj_cli_str_at(ev, "metadata.creationTimestamp");
}

static int event_cmp(const void *a, const void *b)
{
	const char *x = aj_cli_str_at(*(const cJSON *const *)a, "time");
	const char *y = aj_cli_str_at(*(const cJSON *const *)b, "time");

	return strcmp(x ? x : "", y ? y : "");
}

/* Is s a Kubernetes uid (8-4-4-4-12 hexadecimal digits)? */
static int is_uid(const char *s)
{
	return strlen(s) == 36 && strspn(s, "0123456789abcdef-") == 36;
}

/*
 * The Events about kind/name, as rows appended to rows; with by_uid set,
 * about every kind object named name followed by a uid.
 */
static int gather_events_of(struct aj_kube *k, const char *kind, const char *name, int by_uid,
			    cJSON *rows, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &events_res, k->cfg.namespace, NULL, NULL };
	struct aj_kube_list_opts lo;
	struct aj_buf sel = AJ_BUF_INIT(AJ_BUF_SMALL), obj = AJ_BUF_INIT(AJ_BUF_SMALL);
	const cJSON *ev;
	cJSON *list = NULL, *row;
	int rc;

	memset(&lo, 0, sizeof(lo));
	aj_buf_addf(&sel, "involvedObject.kind=%s", kind);
	if (!by_uid)
		aj_buf_addf(&sel, ",involvedObject.name=%s", name);
	if (sel.failed)
		return aj_errors_oom(err);
	lo.field_selector = aj_buf_cstr(&sel);
	rc = aj_kube_list_all(k, &ref, &lo, &list, NULL, err);
	aj_buf_release(&sel);
	cJSON_ArrayForEach(ev, cJSON_GetObjectItemCaseSensitive(list, "items")) {
		const cJSON *count = cJSON_GetObjectItemCaseSensitive(ev, "count");
		const char *about = aj_cli_str_at(ev, "involvedObject.name");

		if (by_uid && (!about || strncmp(about, name, strlen(name)) ||
			       !is_uid(about + strlen(name))))
			continue;
		aj_buf_reset(&obj);
		aj_buf_addf(&obj, "%s/%s", kind, about ? about : name);
		if (obj.failed) {
			rc = aj_errors_oom(err);
			break;
		}
		row = cJSON_CreateObject();
		if (!row || add_str(row, "object", aj_buf_cstr(&obj)) ||
		    add_str(row, "type", aj_cli_str_at(ev, "type")) ||
		    add_str(row, "reason", aj_cli_str_at(ev, "reason")) ||
		    add_str(row, "message", aj_cli_str_at(ev, "message")) ||
		    add_str(row, "time", event_time(ev)) ||
		    !cJSON_AddNumberToObject(row, "count", cJSON_IsNumber(count) ? count->valuedouble : 1) ||
		    !cJSON_AddItemToArray(rows, row)) {
			cJSON_Delete(row);
			rc = aj_errors_oom(err);
			break;
		}
	}
	cJSON_Delete(list);
	aj_buf_release(&obj);
	return rc;
}

/* The job a cluster backend made for the AjJob (status.<backend>.jobName), or NULL. */
static const char *backend_job(const cJSON *job)
{
	const char *service = aj_cli_str_at(job, "status.backend");
	const struct aj_backend *be = service ? aj_backend_find(service) : NULL;
	const cJSON *member;

	if (!be || be->target != AJ_TARGET_CLUSTER)
		return NULL;
	member = cJSON_GetObjectItemCaseSensitive(aj_cli_at(job, "status"), be->name);
	return aj_cli_str_at(member, "jobName");
}

/* The AjJob's, its backend Job's and that Job's PodGroup's Events, the newest STATUS_EVENTS. */
static int gather_events(struct aj_kube *k, const cJSON *job, cJSON *rows, struct aj_errors *err)
{
	const char *bjob = backend_job(job);
	struct aj_buf pg = AJ_BUF_INIT(AJ_BUF_SMALL);
	int rc = gather_events_of(k, "AjJob", aj_cli_str_at(job, "metadata.name"), 0, rows, err);

	if (!rc && bjob)
		rc = gather_events_of(k, "Job", bjob, 0, rows, err);
	if (!rc && bjob) {
		/* Volcano names a Job's PodGroup <job>-<uid of the Job> */
		aj_buf_addf(&pg, "%s-", bjob);
		rc = pg.failed ? aj_errors_oom(err)
			       : gather_events_of(k, "PodGroup", aj_buf_cstr(&pg), 1, rows, err);
	}
	aj_buf_release(&pg);
	if (!rc && sort_array(rows, event_cmp))
		rc = aj_errors_oom(err);
	while (!rc && cJSON_GetArraySize(rows) > STATUS_EVENTS)
		cJSON_DeleteItemFromArray(rows, 0);
	return rc;
}

/* --- text --- */

static void add_cell(struct aj_cli_table *t, const cJSON *row, const char *key)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *v = aj_cli_str_at(row, key);

	if (v)
		aj_cli_add_one_line(&b, v);
	t->failed |= b.failed;
	aj_cli_table_add(t, aj_buf_cstr(&b));
	aj_buf_release(&b);
}

static int number_of(const cJSON *o, const char *key, double *out)
{
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsNumber(n))
		return 0;
	*out = n->valuedouble;
	return 1;
}

static int print_table(const char *title, struct aj_cli_table *t, struct aj_errors *err)
{
	int rc = aj_cli_write(title, strlen(title), err) || aj_cli_table_print(t, err) ? -1 : 0;

	aj_cli_table_release(t);
	return rc;
}

/* status.tasks: a list of {name, replicas, pending, ...} or a map by task name. */
static int print_tasks(const cJSON *tasks, struct aj_errors *err)
{
	static const char *const heads[] = {
		"TASK", "REPLICAS", "PENDING", "RUNNING", "SUCCEEDED", "FAILED", "RESTARTS"
	};
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(7);
	const cJSON *task;
	size_t i;
	double v;

	if (!cJSON_GetArraySize(tasks))
		return 0;
	t.indent = "  ";
	for (i = 0; i < t.cols; i++)
		aj_cli_table_add(&t, heads[i]);
	cJSON_ArrayForEach(task, tasks) {
		aj_cli_table_add(&t, cJSON_IsArray(tasks) ? aj_cli_str_at(task, "name") : task->string);
		for (i = 1; i < t.cols; i++) {
			char key[16];
			size_t j;

			for (j = 0; heads[i][j] && j + 1 < sizeof(key); j++)
				key[j] = (char)(heads[i][j] | 0x20);   /* the column, lowercased */
			key[j] = '\0';
			if (number_of(task, key, &v))
				aj_cli_table_addf(&t, "%.0f", v);
			else
				aj_cli_table_add(&t, NULL);
		}
	}
	return print_table("Tasks:\n", &t, err);
}

void aj_cli_candidates_table(struct aj_cli_table *t, const cJSON *placement, int mark)
{
	static const char *const heads[] = { "", "RANK", "CANDIDATE", "BACKEND", "WHERE", "STATE",
					     "WAIT", "REASON" };
	const char *chosen = aj_cli_str_at(placement, "chosen");
	const cJSON *c;
	size_t i;
	double v;

	t->cols = mark ? 8 : 7;
	for (i = 0; i < t->cols; i++)
		aj_cli_table_add(t, heads[i + !mark]);
	cJSON_ArrayForEach(c, aj_cli_at(placement, "candidates")) {
		const char *name = aj_cli_str_at(c, "name");

		if (mark)
			aj_cli_table_add(t, chosen && name && !strcmp(chosen, name) ? "*" : NULL);
		if (number_of(c, "rank", &v) && v > 0)
			aj_cli_table_addf(t, "%.0f", v);
		else
			aj_cli_table_add(t, NULL);
		add_cell(t, c, "name");
		add_cell(t, c, "backend");
		add_cell(t, c, "where");
		add_cell(t, c, "state");
		if (number_of(c, "expectedWaitSeconds", &v))
			aj_cli_table_addf(t, "%.0fs", v);
		else
			aj_cli_table_add(t, NULL);
		add_cell(t, c, "reason");
	}
}

/*
 * status.placement: the candidates in rank order (the chosen one marked
 * with *), then each attempt.
 */
static int print_placement(const cJSON *placement, struct aj_errors *err)
{
	static const char *const att_heads[] = { "ATTEMPT", "CANDIDATE", "SUBMITTED", "ENDED",
						 "OUTCOME", "REASON" };
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(8), a = AJ_CLI_TABLE_INIT(6);
	const cJSON *c;
	size_t i, n = 0;
	int rc;

	if (!cJSON_GetArraySize(aj_cli_at(placement, "candidates")))
		return 0;
	t.indent = "  ";
	aj_cli_candidates_table(&t, placement, 1);
	rc = print_table("Placement:\n", &t, err);
	if (rc || !cJSON_GetArraySize(aj_cli_at(placement, "attempts"))) {
		aj_cli_table_release(&a);
		return rc;
	}
	a.indent = "  ";
	for (i = 0; i < a.cols; i++)
		aj_cli_table_add(&a, att_heads[i]);
	cJSON_ArrayForEach(c, aj_cli_at(placement, "attempts")) {
		aj_cli_table_addf(&a, "%zu", ++n);
		add_cell(&a, c, "candidate");
		add_cell(&a, c, "submitted");
		add_cell(&a, c, "ended");
		add_cell(&a, c, "outcome");
		add_cell(&a, c, "reason");
	}
	return print_table("Attempts:\n", &a, err);
}

/* status.azure: its text and number fields as they are. */
static int print_azure(const cJSON *azure, struct aj_errors *err)
{
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_SMALL);
	const cJSON *f;
	int rc;

	if (!cJSON_IsObject(azure) || !azure->child)
		return 0;
	aj_buf_addstr(&out, "Azure:\n");
	cJSON_ArrayForEach(f, azure) {
		if (cJSON_IsString(f)) {
			aj_buf_addf(&out, "  %-20s ", f->string);
			aj_cli_add_one_line(&out, f->valuestring);
			aj_buf_addch(&out, '\n');
		} else if (cJSON_IsNumber(f)) {
			aj_buf_addf(&out, "  %-20s %g\n", f->string, f->valuedouble);
		}
	}
	rc = out.failed ? aj_errors_oom(err) : aj_cli_write(aj_buf_cstr(&out), out.len, err);
	aj_buf_release(&out);
	return rc;
}

static int print_pods(const cJSON *pods, time_t now, struct aj_errors *err)
{
	static const char *const heads[] = {
		"TASK", "RANK", "POD", "NODE", "PHASE", "RESTARTS", "EXIT/REASON", "AGE"
	};
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(8);
	struct aj_buf waits = AJ_BUF_INIT(AJ_BUF_SMALL);
	const cJSON *p;
	char age[32];
	double v;
	size_t i;
	int rc;

	t.indent = "  ";
	for (i = 0; i < t.cols; i++)
		aj_cli_table_add(&t, heads[i]);
	cJSON_ArrayForEach(p, pods) {
		const char *reason = aj_cli_str_at(p, "reason"), *phase = aj_cli_str_at(p, "phase");

		add_cell(&t, p, "task");
		add_cell(&t, p, "rank");
		add_cell(&t, p, "name");
		add_cell(&t, p, "node");
		add_cell(&t, p, "phase");
		aj_cli_table_addf(&t, "%.0f", number_of(p, "restarts", &v) ? v : 0);
		if (number_of(p, "exitCode", &v))
			aj_cli_table_addf(&t, reason ? "%.0f (%s)" : "%.0f%s", v, reason ? reason : "");
		else
			aj_cli_table_add(&t, reason);
		aj_cli_age(age, sizeof(age), aj_cli_str_at(p, "created"), now);
		aj_cli_table_add(&t, age);
		if (phase && !strcmp(phase, "Pending") && aj_cli_str_at(p, "message")) {
			aj_buf_addf(&waits, "  %s waits: ", aj_cli_str_at(p, "name"));
			aj_cli_add_one_line(&waits, aj_cli_str_at(p, "message"));
			aj_buf_addch(&waits, '\n');
		}
	}
	rc = print_table("Pods:\n", &t, err);
	if (!rc && waits.len)
		rc = waits.failed ? aj_errors_oom(err) : aj_cli_write(waits.buf, waits.len, err);
	aj_buf_release(&waits);
	return rc;
}

static int print_events(const cJSON *events, time_t now, struct aj_errors *err)
{
	static const char *const heads[] = { "AGE", "TYPE", "REASON", "OBJECT", "MESSAGE" };
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(5);
	const cJSON *e;
	char age[32];
	size_t i;

	t.indent = "  ";
	for (i = 0; i < t.cols; i++)
		aj_cli_table_add(&t, heads[i]);
	cJSON_ArrayForEach(e, events) {
		aj_cli_age(age, sizeof(age), aj_cli_str_at(e, "time"), now);
		aj_cli_table_add(&t, age);
		add_cell(&t, e, "type");
		add_cell(&t, e, "reason");
		add_cell(&t, e, "object");
		add_cell(&t, e, "message");
	}
	return print_table("Events:\n", &t, err);
}

static int describe(const cJSON *job, const cJSON *pods, const cJSON *events, struct aj_errors *err)
{
	static const char *const heads[] = { "TYPE", "STATUS", "REASON", "AGE", "MESSAGE" };
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_LARGE), cmd = AJ_BUF_INIT(AJ_BUF_LARGE);
	const cJSON *nodes = aj_cli_at(job, "spec.nodes"), *conds = aj_cli_at(job, "status.conditions"), *c;
	time_t now = time(NULL);
	char num[32], age[32];
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(5);
	size_t i;
	int rc;

	add_command(&cmd, aj_cli_at(job, "spec.command"));
	num[0] = '\0';
	if (cJSON_IsNumber(nodes))
		snprintf(num, sizeof(num), "%.0f", nodes->valuedouble);
	aj_cli_age(age, sizeof(age), aj_cli_str_at(job, "metadata.creationTimestamp"), now);
	field(&out, "Name:", aj_cli_str_at(job, "metadata.name"));
	field(&out, "Namespace:", aj_cli_str_at(job, "metadata.namespace"));
	field(&out, "Template:", aj_cli_str_at(job, "spec.name"));
	field(&out, "Command:", cmd.len ? aj_buf_cstr(&cmd) : NULL);
	field(&out, "Nodes:", *num ? num : NULL);
	field(&out, "Age:", age);
	field(&out, "Backend:", aj_cli_str_at(job, "status.backend"));
	field(&out, "Phase:", aj_cli_phase(job));
	field(&out, "Backend job:", backend_job(job));
	if (cJSON_GetObjectItemCaseSensitive(aj_cli_at(job, "metadata.annotations"),
					     AJ_CLI_CANCEL_ANNOTATION))
		field(&out, "Cancel:", "requested");
	field(&out, "Message:", aj_cli_str_at(job, "status.message"));
	aj_buf_release(&cmd);
	if (out.failed)
		return aj_errors_oom(err);
	rc = aj_cli_write(aj_buf_cstr(&out), out.len, err);
	aj_buf_release(&out);
	if (!rc && cJSON_GetArraySize(conds)) {
		t.indent = "  ";
		for (i = 0; i < t.cols; i++)
			aj_cli_table_add(&t, heads[i]);
		cJSON_ArrayForEach(c, conds) {
			aj_cli_age(age, sizeof(age), aj_cli_str_at(c, "lastTransitionTime"), now);
			add_cell(&t, c, "type");
			add_cell(&t, c, "status");
			add_cell(&t, c, "reason");
			aj_cli_table_add(&t, age);
			add_cell(&t, c, "message");
		}
		rc = print_table("Conditions:\n", &t, err);
	}
	if (!rc)
		rc = print_placement(aj_cli_at(job, "status.placement"), err);
	if (!rc)
		rc = print_tasks(aj_cli_at(job, "status.tasks"), err);
	if (!rc)
		rc = print_azure(aj_cli_at(job, "status.azure"), err);
	if (!rc && cJSON_GetArraySize(pods))
		rc = print_pods(pods, now, err);
	if (!rc && cJSON_GetArraySize(events))
		rc = print_events(events, now, err);
	return rc;
}

/* A list that failed (RBAC, say) leaves its part out with a note; the rest is shown. */
static void note_missing(const char *what, struct aj_errors *local)
{
	if (local->nr)
		fprintf(stderr, "aj: %s left out: %s\n", what, local->items[0].message);
	aj_errors_release(local);
}

int aj_cli_status_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT, local = AJ_ERRORS_INIT;
	struct aj_kube k;
	cJSON *job = NULL, *pods = cJSON_CreateArray(), *events = cJSON_CreateArray(), *doc = NULL;
	int rc = aj_cli_kube_open_plain(&k, &aj_cli_status, o, &err);

	if (!rc && (!pods || !events))
		rc = AJ_EXIT_FAIL;
	if (rc)
		goto out;
	rc = AJ_EXIT_FAIL;
	if (aj_cli_kube_get_job(&k, k.cfg.namespace, o->arg, &job, &err))
		goto out;
	gather_pods(&k, job, pods, &local);
	note_missing("pods", &local);
	gather_events(&k, job, events, &local);
	note_missing("events", &local);
	if (o->format_set) {
		int failed;

		if (!(doc = aj_cli_printable(job)))
			goto out;
		failed = aj_cli_attach(doc, "pods", pods);
		failed |= aj_cli_attach(doc, "events", events);
		pods = events = NULL;   /* doc's now, or deleted */
		if (failed) {
			aj_errors_oom(&err);
			goto out;
		}
		rc = aj_cli_print_doc(doc, o->format, &err) ? AJ_EXIT_FAIL : AJ_EXIT_OK;
	} else {
		rc = describe(job, pods, events, &err) ? AJ_EXIT_FAIL : AJ_EXIT_OK;
	}
	if (!rc && o->wait) {
		if (aj_cli_phase_terminal(aj_cli_phase(job)))
			rc = aj_cli_phase_exit(aj_cli_phase(job));
		else
			rc = aj_cli_kube_wait_job(&k, k.cfg.namespace, o->arg, aj_cli_phase(job), &err);
	}
out:
	if ((!pods || !events) && !o->format_set && !err.nr)
		aj_errors_oom(&err);
	cJSON_Delete(doc);
	cJSON_Delete(pods);
	cJSON_Delete(events);
	cJSON_Delete(job);
	return aj_cli_kube_done(rc < 0 ? AJ_EXIT_FAIL : rc, &k, &err);
}
