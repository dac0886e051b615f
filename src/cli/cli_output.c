/*
 * cli_output.c - what `aj` prints: documents on stdout, errors on stderr,
 * and the typed JobSpec as JSON for `aj render --jobspec`.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/strlist.h"
#include "core/yaml.h"

void aj_cli_print_errors(const struct aj_errors *err)
{
	struct aj_buf line = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i, n = aj_errors_count(err);

	for (i = 0; i < n; i++) {
		aj_buf_reset(&line);
		/* Entries without a file still say who is talking. */
		if (i >= err->nr || !err->items[i].file)
			aj_buf_addstr(&line, "aj: ");
		aj_errors_format(err, i, &line);
		if (line.failed)
			fputs("aj: out of memory\n", stderr);
		else
			fprintf(stderr, "%s\n", aj_buf_cstr(&line));
	}
	aj_buf_release(&line);
}

int aj_cli_write(const char *text, size_t len, struct aj_errors *err)
{
	if ((len && fwrite(text, 1, len, stdout) != len) || fflush(stdout) ||
	    ferror(stdout))
		return aj_errors_add(err, NULL, "cannot write to standard output");
	return 0;
}

void aj_cli_table_add(struct aj_cli_table *t, const char *cell)
{
	if (aj_strlist_add(&t->cells, cell && *cell ? cell : "-"))
		t->failed = 1;
}

void aj_cli_table_addf(struct aj_cli_table *t, const char *fmt, ...)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	va_list ap;

	va_start(ap, fmt);
	aj_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	if (b.failed)
		t->failed = 1;
	else
		aj_cli_table_add(t, aj_buf_cstr(&b));
	aj_buf_release(&b);
}

int aj_cli_table_print(const struct aj_cli_table *t, struct aj_errors *err)
{
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_LARGE);
	size_t *width, i, c;
	int rc;

	if (t->failed || !(width = aj_calloc(t->cols, sizeof(*width))))
		return aj_errors_oom(err);
	for (i = 0; i < t->cells.nr; i++) {
		size_t len = strlen(t->cells.items[i]);

		if (len > width[i % t->cols])
			width[i % t->cols] = len;
	}
	for (c = 0; t->widths && c < t->cols; c++) {
		if (t->widths[c] > width[c])
			width[c] = t->widths[c];
		t->widths[c] = width[c];
	}
	for (i = 0; i < t->cells.nr; i++) {
		c = i % t->cols;
		if (!c && t->indent)
			aj_buf_addstr(&out, t->indent);
		if (c + 1 < t->cols)
			aj_buf_addf(&out, "%-*s   ", (int)width[c], t->cells.items[i]);
		else
			aj_buf_addf(&out, "%s\n", t->cells.items[i]);
	}
	aj_free(width);
	rc = out.failed ? aj_errors_oom(err) : aj_cli_write(aj_buf_cstr(&out), out.len, err);
	aj_buf_release(&out);
	return rc;
}

void aj_cli_table_release(struct aj_cli_table *t)
{
	aj_strlist_release(&t->cells);
}

int aj_cli_print_doc(const cJSON *v, enum aj_cli_format format,
		     struct aj_errors *err)
{
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_LARGE);
	int rc;

	if (format == AJ_FORMAT_JSON)
		rc = aj_json_print(v, &out) ? aj_errors_oom(err) : 0;
	else
		rc = aj_yaml_emit(v, &out, err);
	if (!rc)
		rc = aj_cli_write(aj_buf_cstr(&out), out.len, err);
	aj_buf_release(&out);
	return rc;
}

int aj_cli_attach(cJSON *obj, const char *key, cJSON *item)
{
	if (item && cJSON_AddItemToObject(obj, key, item))
		return 0;
	cJSON_Delete(item);
	return -1;
}

/*
 * Builders for the JobSpec dump. Each returns 0 or -1 (out of memory); unset
 * values are left out so the dump shows what the spec actually holds.
 */
static int add_str(cJSON *o, const char *key, const char *v)
{
	return !v || cJSON_AddStringToObject(o, key, v) ? 0 : -1;
}

static int add_int(cJSON *o, const char *key, int v)
{
	return v == AJ_UNSET || cJSON_AddNumberToObject(o, key, v) ? 0 : -1;
}

static int add_tristate(cJSON *o, const char *key, int v)
{
	return v == AJ_UNSET || cJSON_AddBoolToObject(o, key, v) ? 0 : -1;
}

static int add_strlist(cJSON *o, const char *key, const struct aj_strlist *l)
{
	cJSON *arr = cJSON_AddArrayToObject(o, key);
	size_t i;

	if (!arr)
		return -1;
	for (i = 0; i < l->nr; i++)
		if (!cJSON_AddItemToArray(arr, cJSON_CreateString(l->items[i])))
			return -1;
	return 0;
}

static int add_kvlist(cJSON *o, const char *key, const struct aj_kvlist *l)
{
	cJSON *map = cJSON_AddObjectToObject(o, key);
	size_t i;

	if (!map)
		return -1;
	for (i = 0; i < l->nr; i++)
		if (!cJSON_AddStringToObject(map, l->items[i].key, l->items[i].value))
			return -1;
	return 0;
}

static int add_target(cJSON *o, const struct aj_target *t)
{
	cJSON *m = cJSON_AddObjectToObject(o, "target");
	int rc = 0;

	if (!m)
		return -1;
	rc |= add_str(m, "service", t->service);
	rc |= add_str(m, "name", t->name);
	rc |= add_str(m, "workspace_name", t->workspace_name);
	rc |= add_str(m, "subscription_id", t->subscription_id);
	rc |= add_str(m, "resource_group", t->resource_group);
	rc |= add_str(m, "group_policy_name", t->group_policy_name);
	rc |= add_str(m, "namespace", t->namespace_);
	rc |= add_str(m, "queue", t->queue);
	rc |= add_str(m, "context", t->context);
	rc |= add_str(m, "priority_class", t->priority_class);
	rc |= add_int(m, "gpus_per_node", t->gpus_per_node);
	rc |= add_int(m, "cpus_per_node", t->cpus_per_node);
	rc |= add_str(m, "memory", t->memory);
	rc |= add_tristate(m, "rdma", t->rdma);
	rc |= add_kvlist(m, "labels", &t->labels);
	rc |= add_kvlist(m, "node_selector", &t->node_selector);
	return rc;
}

static int add_environment(cJSON *o, const struct aj_jobspec *s)
{
	cJSON *env = cJSON_AddObjectToObject(o, "environment");
	cJSON *code = cJSON_AddObjectToObject(o, "code");
	int rc = 0;

	if (!env || !code)
		return -1;
	rc |= add_str(env, "image", s->environment.image);
	rc |= add_str(env, "registry", s->environment.registry);
	rc |= add_strlist(env, "setup", &s->environment.setup);
	rc |= add_str(code, "local_dir", s->code.local_dir);
	rc |= add_strlist(code, "ignore", &s->code.ignore);
	rc |= add_str(code, "digest", s->code.digest);
	return rc;
}

static int add_storage(cJSON *o, const struct aj_jobspec *s)
{
	cJSON *arr = cJSON_AddArrayToObject(o, "storage");
	size_t i;
	int rc = 0;

	if (!arr)
		return -1;
	for (i = 0; i < s->storage_nr; i++) {
		cJSON *m = cJSON_CreateObject();

		if (!cJSON_AddItemToArray(arr, m))
			return -1;
		rc |= add_str(m, "name", s->storage[i].name);
		rc |= add_str(m, "account", s->storage[i].account);
		rc |= add_str(m, "container", s->storage[i].container);
		rc |= add_str(m, "mount_dir", s->storage[i].mount_dir);
	}
	return rc;
}

static int add_container(cJSON *o, const struct aj_container_args *c)
{
	cJSON *m = cJSON_AddObjectToObject(o, "container_args");
	int rc = 0;

	if (!m)
		return -1;
	rc |= add_str(m, "shm_size", c->shm_size);
	rc |= add_int(m, "cpus", c->cpus);
	rc |= add_str(m, "memory", c->memory);
	rc |= add_strlist(m, "capabilities", &c->capabilities);
	rc |= add_str(m, "scratch_mount_path", c->scratch_mount_path);
	rc |= add_str(m, "scratch_size", c->scratch_size);
	return rc;
}

static int add_job(cJSON *arr, const struct aj_job *j)
{
	cJSON *m = cJSON_CreateObject();
	int rc = 0;

	if (!cJSON_AddItemToArray(arr, m))
		return -1;
	rc |= add_str(m, "name", j->name);
	rc |= add_str(m, "identity", j->identity);
	rc |= add_str(m, "sla_tier", j->sla_tier);
	rc |= add_str(m, "priority", j->priority);
	rc |= add_strlist(m, "tags", &j->tags);
	rc |= add_kvlist(m, "env", &j->env);
	rc |= add_container(m, &j->container);
	rc |= add_int(m, "instance_count", j->instance_count);
	rc |= add_int(m, "process_count_per_node", j->process_count_per_node);
	rc |= add_strlist(m, "command", &j->command);
	return rc;
}

static int add_task(cJSON *arr, const struct aj_task *t)
{
	cJSON *m = cJSON_CreateObject();
	int rc = 0;

	if (!cJSON_AddItemToArray(arr, m))
		return -1;
	rc |= add_str(m, "name", t->name);
	rc |= add_int(m, "replicas", t->replicas);
	rc |= add_int(m, "cpus_per_node", t->cpus_per_node);
	rc |= add_str(m, "memory", t->memory);
	rc |= add_int(m, "gpus_per_node", t->gpus_per_node);
	rc |= add_tristate(m, "rdma", t->rdma);
	rc |= add_int(m, "processes_per_node", t->processes_per_node);
	rc |= add_kvlist(m, "node_selector", &t->node_selector);
	rc |= add_strlist(m, "command", &t->command);
	return rc;
}

static int add_extra(cJSON *o, const struct aj_node *extra)
{
	return aj_cli_attach(o, "extra", extra ? aj_node_to_cjson(extra) : cJSON_CreateNull());
}

cJSON *aj_cli_jobspec_json(const struct aj_jobspec *s)
{
	cJSON *o = cJSON_CreateObject(), *jobs, *tasks;
	size_t i;
	int rc = 0;

	if (!o)
		return NULL;
	rc |= add_str(o, "template", s->template_name);
	rc |= add_str(o, "service", s->target.service);
	rc |= cJSON_AddBoolToObject(o, "heterogeneous", s->heterogeneous) ? 0 : -1;
	rc |= add_int(o, "nodes", s->nodes);
	rc |= add_int(o, "processes", s->processes);
	rc |= add_int(o, "processes_per_node", s->processes_per_node);
	rc |= add_str(o, "sku", s->sku);
	rc |= add_strlist(o, "command", &s->command);
	tasks = cJSON_AddArrayToObject(o, "tasks");
	for (i = 0; tasks && i < s->tasks_nr; i++)
		rc |= add_task(tasks, &s->tasks[i]);
	rc |= add_target(o, &s->target);
	rc |= add_environment(o, s);
	rc |= add_storage(o, s);
	jobs = cJSON_AddArrayToObject(o, "jobs");
	for (i = 0; jobs && i < s->jobs_nr; i++)
		rc |= add_job(jobs, &s->jobs[i]);
	rc |= add_extra(o, s->extra);
	if (rc || !tasks || !jobs) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}
