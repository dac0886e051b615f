#include "jobspec.h"

#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "buf.h"
#include "error.h"
#include "node.h"
#include "schema.h"
#include "sku.h"

void aj_kvlist_release(struct aj_kvlist *l)
{
	size_t i;

	for (i = 0; i < l->nr; i++) {
		aj_free(l->items[i].key);
		aj_free(l->items[i].value);
	}
	aj_free(l->items);
	l->items = NULL;
	l->nr = 0;
	l->alloc = 0;
}

int aj_kvlist_add(struct aj_kvlist *l, const char *key, const char *value)
{
	struct aj_kv kv;

	kv.key = aj_strdup(key);
	kv.value = aj_strdup(value);
	if (!kv.key || !kv.value || AJ_GROW(l->items, l->nr + 1, l->alloc)) {
		aj_free(kv.key);
		aj_free(kv.value);
		return -1;
	}
	l->items[l->nr++] = kv;
	return 0;
}

const char *aj_kvlist_get(const struct aj_kvlist *l, const char *key)
{
	size_t i;

	for (i = 0; i < l->nr; i++)
		if (!strcmp(l->items[i].key, key))
			return l->items[i].value;
	return NULL;
}

static void target_init(struct aj_target *t)
{
	memset(t, 0, sizeof(*t));
	t->gpus_per_node = AJ_UNSET;
	t->cpus_per_node = AJ_UNSET;
	t->rdma = AJ_UNSET;
}

static void target_release(struct aj_target *t)
{
	aj_free(t->service);
	aj_free(t->name);
	aj_free(t->workspace_name);
	aj_free(t->subscription_id);
	aj_free(t->resource_group);
	aj_free(t->group_policy_name);
	aj_free(t->namespace_);
	aj_free(t->queue);
	aj_free(t->context);
	aj_free(t->priority_class);
	aj_free(t->memory);
	aj_kvlist_release(&t->labels);
	aj_kvlist_release(&t->node_selector);
	target_init(t);
}

static void job_init(struct aj_job *j)
{
	memset(j, 0, sizeof(*j));
	j->container.cpus = AJ_UNSET;
	j->instance_count = AJ_UNSET;
	j->process_count_per_node = AJ_UNSET;
}

static void job_release(struct aj_job *j)
{
	aj_free(j->name);
	aj_free(j->identity);
	aj_free(j->sla_tier);
	aj_free(j->priority);
	aj_strlist_release(&j->tags);
	aj_kvlist_release(&j->env);
	aj_free(j->container.shm_size);
	aj_free(j->container.memory);
	aj_strlist_release(&j->container.capabilities);
	aj_free(j->container.scratch_mount_path);
	aj_free(j->container.scratch_size);
	aj_strlist_release(&j->command);
	job_init(j);
}

void aj_task_release(struct aj_task *t)
{
	aj_free(t->name);
	aj_free(t->memory);
	aj_kvlist_release(&t->node_selector);
	aj_strlist_release(&t->command);
	memset(t, 0, sizeof(*t));
}

void aj_jobspec_init(struct aj_jobspec *s)
{
	memset(s, 0, sizeof(*s));
	target_init(&s->target);
}

void aj_jobspec_release(struct aj_jobspec *s)
{
	size_t i;

	aj_free(s->template_name);
	target_release(&s->target);
	aj_free(s->environment.image);
	aj_free(s->environment.registry);
	aj_strlist_release(&s->environment.setup);
	aj_free(s->code.local_dir);
	aj_free(s->code.digest);
	aj_strlist_release(&s->code.ignore);
	for (i = 0; i < s->storage_nr; i++) {
		aj_free(s->storage[i].name);
		aj_free(s->storage[i].account);
		aj_free(s->storage[i].container);
		aj_free(s->storage[i].mount_dir);
	}
	aj_free(s->storage);
	for (i = 0; i < s->jobs_nr; i++)
		job_release(&s->jobs[i]);
	aj_free(s->jobs);
	aj_free(s->sku);
	for (i = 0; i < s->tasks_nr; i++)
		aj_task_release(&s->tasks[i]);
	aj_free(s->tasks);
	aj_strlist_release(&s->command);
	aj_node_free(s->extra);
	aj_jobspec_init(s);
}

/*
 * Conversion state: the key path of the value being read (grown and cut back
 * as the reader descends) and whether anything went wrong. A failed path
 * buffer only costs the path in messages; OOM is reported at the end.
 */
struct conv {
	struct aj_errors *err;
	struct aj_buf path;
	int failed;
	int oom;
	const char *tasks;        /* "config._extra.<tasks_key>" for messages */
};

static size_t path_push(struct conv *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static size_t path_push(struct conv *c, const char *fmt, ...)
{
	size_t len = c->path.len;
	va_list ap;

	va_start(ap, fmt);
	if (aj_buf_vaddf(&c->path, fmt, ap))
		c->oom = 1;
	va_end(ap);
	return len;
}

static void path_pop(struct conv *c, size_t len)
{
	if (c->path.buf && len <= c->path.len) {
		c->path.len = len;
		c->path.buf[len] = '\0';
	}
}

static void fail(struct conv *c, const struct aj_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct conv *c, const struct aj_node *n, const char *fmt, ...)
{
	struct aj_where w = { NULL, 0, 0, NULL };
	va_list ap;

	if (n)
		aj_node_where(n, aj_buf_cstr(&c->path), &w);
	else
		w.path = aj_buf_cstr(&c->path);
	va_start(ap, fmt);
	aj_errors_vadd(c->err, &w, fmt, ap);
	va_end(ap);
	c->failed = 1;
}

/* How much of a wrong string value a message quotes. */
#define DESCRIBE_MAX 40

/* "string \"eight\"", "integer 5", "mapping": what a value is, for messages. */
static const char *describe(const struct aj_node *n, char *out, size_t size)
{
	const char *type = aj_node_type_name(n->type);
	size_t i, o;

	if (n->type == AJ_NODE_SEQ || n->type == AJ_NODE_MAP || n->type == AJ_NODE_NULL || !n->str)
		return type;
	if (n->type != AJ_NODE_STRING) {
		snprintf(out, size, "%s %s", type, n->str);
		return out;
	}
	o = (size_t)snprintf(out, size, "%s \"", type);
	for (i = 0; i < n->len && i < DESCRIBE_MAX && o + 8 < size; i++) {
		unsigned char ch = (unsigned char)n->str[i];

		if (ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\')
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", ch);
		else
			out[o++] = (char)ch;
	}
	snprintf(out + o, size - o, i < n->len ? "...\"" : "\"");
	return out;
}

/* A string value quoted and escaped for a message: "\"4GB\"". */
static const char *quoted(const struct aj_node *n, char *out, size_t size)
{
	return describe(n, out, size) + strlen("string ");
}

static void fail_type(struct conv *c, const struct aj_node *n, const char *expected)
{
	char desc[96];

	fail(c, n, "expected %s, got %s", expected, describe(n, desc, sizeof(desc)));
}

/* The value at key, or NULL when absent or null (a child cannot unset a key). */
static const struct aj_node *get(const struct aj_node *map, const char *key)
{
	const struct aj_node *n = map ? aj_node_get(map, key) : NULL;

	return n && n->type != AJ_NODE_NULL ? n : NULL;
}

/* Is map a mapping (or absent)? Reports otherwise. */
static int want_map(struct conv *c, const struct aj_node *map, const char *key)
{
	size_t at;

	if (!map || map->type == AJ_NODE_MAP)
		return 1;
	at = path_push(c, ".%s", key);
	fail_type(c, map, "mapping");
	path_pop(c, at);
	return 0;
}

static char *dup_or_oom(struct conv *c, const char *s, size_t len)
{
	char *d = aj_strndup(s, len);

	if (!d)
		c->oom = 1;
	return d;
}

static void read_string(struct conv *c, const struct aj_node *map, const char *key, char **out)
{
	const struct aj_node *n = get(map, key);
	size_t at;

	if (!n)
		return;
	at = path_push(c, ".%s", key);
	if (n->type != AJ_NODE_STRING)
		fail_type(c, n, "string");
	else if (strlen(n->str) != n->len)
		fail(c, n, "string contains a NUL byte");
	else
		*out = dup_or_oom(c, n->str, n->len);
	path_pop(c, at);
}

static void read_int(struct conv *c, const struct aj_node *map, const char *key, int min, int *out)
{
	const struct aj_node *n = get(map, key);
	size_t at;

	if (!n)
		return;
	at = path_push(c, ".%s", key);
	if (n->type != AJ_NODE_INT)
		fail_type(c, n, "integer");
	else if (n->v.integer < min || n->v.integer > INT_MAX)
		fail(c, n, "must be between %d and %d, got %lld", min, INT_MAX, n->v.integer);
	else
		*out = (int)n->v.integer;
	path_pop(c, at);
}

static void read_bool(struct conv *c, const struct aj_node *map, const char *key, int *out)
{
	const struct aj_node *n = get(map, key);
	size_t at;

	if (!n)
		return;
	at = path_push(c, ".%s", key);
	if (n->type != AJ_NODE_BOOL)
		fail_type(c, n, "boolean (true or false)");
	else
		*out = n->v.boolean ? 1 : 0;
	path_pop(c, at);
}

#define QUANTITY_UNITS "Ki, Mi, Gi, Ti or k, M, G, T"

/*
 * The unit of a quantity "<digits>[.<digits>]<unit>", or NULL when s is not
 * one. Units are Kubernetes' binary and decimal ones; a plain number has
 * none (bytes are never what a template means). docker adds Docker's
 * lowercase forms (64g = 64Gi), which shm_size shares with Azure ML.
 */
static const char *quantity_unit(const char *s, int docker)
{
	static const char *const units[] = {
		"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "k", "M", "G", "T", "P", "E", NULL
	};
	const char *p = s + strspn(s, "0123456789");
	size_t i;

	if (p == s)
		return NULL;
	if (*p == '.') {
		p++;
		if (!strspn(p, "0123456789"))
			return NULL;
		p += strspn(p, "0123456789");
	}
	for (i = 0; units[i]; i++)
		if (!strcmp(p, units[i]))
			return p;
	return docker && p[0] && !p[1] && strchr("bkmgt", p[0]) ? p : NULL;
}

/* "4GB" -> "4G (decimal) or 4Gi (binary)": a unit written as bytes, spelt right. */
static int bytes_unit_hint(const char *s, char *out, size_t size)
{
	size_t digits = strspn(s, "0123456789.");
	const char *u = s + digits;
	char upper, decimal;

	if (!digits || digits > 20 || !u[0] || !strchr("KkMmGgTtPpEe", u[0]) ||
	    (u[1] != 'B' && u[1] != 'b') || u[2])
		return 0;
	upper = (char)toupper((unsigned char)u[0]);
	decimal = upper == 'K' ? 'k' : upper;     /* Kubernetes' kilo is lowercase */
	snprintf(out, size, "%.*s%c (decimal) or %.*s%ci (binary)", (int)digits, s, decimal,
		 (int)digits, s, upper);
	return 1;
}

/* A quantity such as "512Gi" (docker: also "64g"); NUL-free, with a unit. */
static void read_quantity_as(struct conv *c, const struct aj_node *map, const char *key,
			     int docker, char **out)
{
	const struct aj_node *n = get(map, key);
	char desc[96], hint[64];
	size_t at;

	if (!n)
		return;
	at = path_push(c, ".%s", key);
	if ((n->type == AJ_NODE_INT || n->type == AJ_NODE_FLOAT) && n->str && n->str[0] == '-')
		fail(c, n, "%s must not be negative", n->str);
	else if ((n->type == AJ_NODE_INT || n->type == AJ_NODE_FLOAT) && n->str)
		fail(c, n, "%s has no unit: write it with one of " QUANTITY_UNITS ", such as %sGi",
		     n->str, n->str);
	else if (n->type != AJ_NODE_STRING)
		fail_type(c, n, "quantity (a string such as \"64Gi\")");
	else if (strlen(n->str) != n->len)
		fail(c, n, "string contains a NUL byte");
	else if (n->str[0] == '-')
		fail(c, n, "%s must not be negative", quoted(n, desc, sizeof(desc)));
	else if (quantity_unit(n->str, docker))
		*out = dup_or_oom(c, n->str, n->len);
	else if (n->len == strspn(n->str, "0123456789") && n->len)
		fail(c, n, "\"%s\" has no unit: write it with one of " QUANTITY_UNITS ", such as %sGi",
		     n->str, n->str);
	else if (bytes_unit_hint(n->str, hint, sizeof(hint)))
		fail(c, n, "\"%s\" is not a Kubernetes quantity: write %s", n->str, hint);
	else
		fail(c, n, "%s is not a Kubernetes quantity: a number and a unit (" QUANTITY_UNITS
		     "), such as 64Gi", quoted(n, desc, sizeof(desc)));
	path_pop(c, at);
}

static void read_quantity(struct conv *c, const struct aj_node *map, const char *key, char **out)
{
	read_quantity_as(c, map, key, 0, out);
}

/* A string restricted to a few words (case-insensitive); stored as listed. */
static void read_enum(struct conv *c, const struct aj_node *map, const char *key,
		      const char *const *words, char **out)
{
	struct aj_buf list = AJ_BUF_INIT(AJ_BUF_SMALL);
	char *s = NULL;
	size_t i, at;

	read_string(c, map, key, &s);
	if (!s)
		return;
	for (i = 0; words[i]; i++) {
		if (!strcasecmp(s, words[i])) {
			aj_free(s);
			*out = dup_or_oom(c, words[i], strlen(words[i]));
			return;
		}
	}
	for (i = 0; words[i]; i++)
		aj_buf_addf(&list, "%s%s", i ? ", " : "", words[i]);
	at = path_push(c, ".%s", key);
	fail(c, get(map, key), "unknown value \"%s\" (expected one of: %s)", s, aj_buf_cstr(&list));
	path_pop(c, at);
	aj_buf_release(&list);
	aj_free(s);
}

static void read_strlist(struct conv *c, const struct aj_node *map, const char *key,
			 struct aj_strlist *out)
{
	const struct aj_node *n = get(map, key);
	size_t i, at;

	if (!n)
		return;
	at = path_push(c, ".%s", key);
	if (n->type != AJ_NODE_SEQ) {
		fail_type(c, n, "list of strings");
		path_pop(c, at);
		return;
	}
	for (i = 0; i < n->nr; i++) {
		const struct aj_node *it = n->items[i];
		size_t at2 = path_push(c, "[%zu]", i);

		if (it->type != AJ_NODE_STRING)
			fail_type(c, it, "string");
		else if (strlen(it->str) != it->len)
			fail(c, it, "string contains a NUL byte");
		else if (aj_strlist_add_owned(out, aj_strndup(it->str, it->len)))
			c->oom = 1;
		path_pop(c, at2);
	}
	path_pop(c, at);
}

/*
 * A mapping of names to scalar values kept as text (environment variables,
 * labels). Booleans become "true"/"false"; numbers keep their written form.
 */
static void read_kv(struct conv *c, const struct aj_node *map, const char *key,
		    struct aj_kvlist *out)
{
	const struct aj_node *n = get(map, key);
	size_t i, at;

	if (!n)
		return;
	at = path_push(c, ".%s", key);
	if (n->type != AJ_NODE_MAP) {
		fail_type(c, n, "mapping");
		path_pop(c, at);
		return;
	}
	for (i = 0; i < n->nr; i++) {
		const struct aj_pair *p = &n->pairs[i];
		const struct aj_node *v = p->value;
		size_t at2 = path_push(c, ".%s", p->key);
		const char *text = NULL;

		if (!p->keylen || strlen(p->key) != p->keylen || strchr(p->key, '='))
			fail(c, v, "invalid name (empty, or holding '=' or a NUL byte)");
		else if (v->type == AJ_NODE_BOOL)
			text = v->v.boolean ? "true" : "false";
		else if (v->type == AJ_NODE_NULL)
			fail(c, v, "expected a string, number or boolean, got null (write \"\" for an empty value)");
		else if (!aj_node_is_scalar(v))
			fail_type(c, v, "a string, number or boolean");
		else if (strlen(v->str) != v->len)
			fail(c, v, "string contains a NUL byte");
		else
			text = v->str;
		if (text && aj_kvlist_add(out, p->key, text))
			c->oom = 1;
		path_pop(c, at2);
	}
	path_pop(c, at);
}

static void read_target(struct conv *c, const struct aj_node *config, struct aj_target *t)
{
	const struct aj_node *n = get(config, "target");
	size_t at;

	if (!want_map(c, n, "target"))
		n = NULL;
	at = path_push(c, ".target");
	/* the backend table knows the services: the pipeline checks the name */
	read_string(c, n, "service", &t->service);
	if (!t->service && !get(n, "service"))
		t->service = dup_or_oom(c, AJ_DEFAULT_SERVICE, strlen(AJ_DEFAULT_SERVICE));
	read_string(c, n, "name", &t->name);
	read_string(c, n, "workspace_name", &t->workspace_name);
	read_string(c, n, "subscription_id", &t->subscription_id);
	read_string(c, n, "resource_group", &t->resource_group);
	read_string(c, n, "group_policy_name", &t->group_policy_name);
	read_string(c, n, "namespace", &t->namespace_);
	read_string(c, n, "queue", &t->queue);
	read_string(c, n, "context", &t->context);
	read_string(c, n, "priority_class", &t->priority_class);
	read_int(c, n, "gpus_per_node", 0, &t->gpus_per_node);
	read_int(c, n, "cpus_per_node", 1, &t->cpus_per_node);
	read_quantity(c, n, "memory", &t->memory);
	read_bool(c, n, "rdma", &t->rdma);
	read_kv(c, n, "labels", &t->labels);
	read_kv(c, n, "node_selector", &t->node_selector);
	path_pop(c, at);
}

static void read_environment(struct conv *c, const struct aj_node *config, struct aj_environment *e)
{
	const struct aj_node *n = get(config, "environment");
	size_t at;

	if (!want_map(c, n, "environment"))
		return;
	at = path_push(c, ".environment");
	read_string(c, n, "image", &e->image);
	read_string(c, n, "registry", &e->registry);
	read_strlist(c, n, "setup", &e->setup);
	path_pop(c, at);
}

static void read_code(struct conv *c, const struct aj_node *config, struct aj_code *code)
{
	const struct aj_node *n = get(config, "code");
	size_t at;

	if (!want_map(c, n, "code"))
		return;
	at = path_push(c, ".code");
	read_string(c, n, "local_dir", &code->local_dir);
	read_strlist(c, n, "ignore", &code->ignore);
	path_pop(c, at);
}

/* A required string member of one storage entry. */
static void read_required(struct conv *c, const struct aj_node *map, const char *key, char **out)
{
	size_t at;

	read_string(c, map, key, out);
	if (*out || get(map, key))
		return;
	at = path_push(c, ".%s", key);
	fail(c, map, "required");
	path_pop(c, at);
}

static void read_storage(struct conv *c, const struct aj_node *config, struct aj_jobspec *s)
{
	const struct aj_node *n = get(config, "storage");
	size_t i, at;

	if (!want_map(c, n, "storage") || !n || !n->nr)
		return;
	s->storage = aj_calloc(n->nr, sizeof(*s->storage));
	if (!s->storage) {
		c->oom = 1;
		return;
	}
	at = path_push(c, ".storage");
	for (i = 0; i < n->nr; i++) {
		const struct aj_pair *p = &n->pairs[i];
		struct aj_storage *st = &s->storage[s->storage_nr++];
		size_t at2 = path_push(c, ".%s", p->key);

		st->name = dup_or_oom(c, p->key, p->keylen);
		if (p->value->type != AJ_NODE_MAP) {
			fail_type(c, p->value, "mapping");
			path_pop(c, at2);
			continue;
		}
		read_required(c, p->value, "storage_account_name", &st->account);
		read_required(c, p->value, "container_name", &st->container);
		read_required(c, p->value, "mount_dir", &st->mount_dir);
		if (st->mount_dir && (st->mount_dir[0] != '/' || !strcmp(st->mount_dir, "/"))) {
			size_t at3 = path_push(c, ".mount_dir");

			/* "/" would hide the image's whole file system. */
			fail(c, get(p->value, "mount_dir"), "must be an absolute path%s, got \"%s\"",
			     st->mount_dir[0] == '/' ? " other than /" : "", st->mount_dir);
			path_pop(c, at3);
		}
		path_pop(c, at2);
	}
	path_pop(c, at);
}

static const char *const identities[] = { "managed", "user", NULL };
static const char *const sla_tiers[] = { "Basic", "Standard", "Premium", NULL };
static const char *const priorities[] = { "Low", "Medium", "High", NULL };

static void read_container_args(struct conv *c, const struct aj_node *sub, struct aj_container_args *a)
{
	const struct aj_node *n = get(sub, "container_args");
	size_t at;

	if (!want_map(c, n, "container_args"))
		return;
	at = path_push(c, ".container_args");
	read_quantity_as(c, n, "shm_size", 1, &a->shm_size);
	read_int(c, n, "cpus", 1, &a->cpus);
	read_quantity(c, n, "memory", &a->memory);
	read_strlist(c, n, "capabilities", &a->capabilities);
	read_string(c, n, "scratch_mount_path", &a->scratch_mount_path);
	read_quantity(c, n, "scratch_size", &a->scratch_size);
	if (a->scratch_mount_path && (a->scratch_mount_path[0] != '/' ||
				      !strcmp(a->scratch_mount_path, "/"))) {
		size_t at2 = path_push(c, ".scratch_mount_path");

		fail(c, get(n, "scratch_mount_path"), "must be an absolute path other than /");
		path_pop(c, at2);
	}
	path_pop(c, at);
}

static void read_job(struct conv *c, const struct aj_node *n, struct aj_job *j)
{
	const struct aj_node *sub = get(n, "submit_args");
	const struct aj_node *sku = get(n, "sku");
	size_t at;

	read_string(c, n, "name", &j->name);
	read_enum(c, n, "identity", identities, &j->identity);
	read_enum(c, n, "sla_tier", sla_tiers, &j->sla_tier);
	read_enum(c, n, "priority", priorities, &j->priority);
	read_strlist(c, n, "tags", &j->tags);
	read_int(c, n, "instance_count", 1, &j->instance_count);
	read_int(c, n, "process_count_per_node", 1, &j->process_count_per_node);
	read_strlist(c, n, "command", &j->command);
	if (sku && sku->type != AJ_NODE_STRING && sku->type != AJ_NODE_MAP) {
		at = path_push(c, ".sku");
		fail_type(c, sku, "string or mapping of node ranges");
		path_pop(c, at);
	}
	if (!want_map(c, sub, "submit_args"))
		return;
	at = path_push(c, ".submit_args");
	read_kv(c, sub, "env", &j->env);
	read_container_args(c, sub, &j->container);
	path_pop(c, at);
}

/* jobs must be a non-empty list of mappings; returns the list or NULL. */
static const struct aj_node *read_jobs(struct conv *c, const struct aj_node *config, struct aj_jobspec *s)
{
	const struct aj_node *n = get(config, "jobs");
	size_t i, at = path_push(c, ".jobs");

	if (!n || n->type != AJ_NODE_SEQ || !n->nr) {
		if (!n)
			fail(c, config, "required: a non-empty list of jobs");
		else if (n->type != AJ_NODE_SEQ)
			fail_type(c, n, "non-empty list of jobs");
		else
			fail(c, n, "must not be empty");
		path_pop(c, at);
		return NULL;
	}
	s->jobs = aj_calloc(n->nr, sizeof(*s->jobs));
	if (!s->jobs) {
		c->oom = 1;
		path_pop(c, at);
		return NULL;
	}
	for (i = 0; i < n->nr; i++) {
		size_t at2 = path_push(c, "[%zu]", i);

		job_init(&s->jobs[s->jobs_nr++]);
		if (n->items[i]->type != AJ_NODE_MAP)
			fail_type(c, n->items[i], "mapping");
		else
			read_job(c, n->items[i], &s->jobs[i]);
		path_pop(c, at2);
	}
	path_pop(c, at);
	return n->items[0]->type == AJ_NODE_MAP ? n : NULL;
}

/* Report a value that a heterogeneous job must not set. */
static void reject_in_hetero(struct conv *c, const struct aj_node *map, const char *key,
			     const char *prefix, const char *why)
{
	const struct aj_node *n = get(map, key);
	size_t at;

	if (!n)
		return;
	at = path_push(c, "%s.%s", prefix, key);
	fail(c, n, "not allowed in a heterogeneous job: %s", why);
	path_pop(c, at);
}

static void shape_hetero(struct conv *c, const struct aj_node *config, const struct aj_node *job0,
			 const struct aj_shape_args *args)
{
	static const char *const target_keys[] = { "gpus_per_node", "cpus_per_node", "memory", "rdma" };
	struct aj_buf per_task = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i;

	if (aj_buf_addf(&per_task, "each task in %s declares its own resources", c->tasks))
		c->oom = 1;
	if (args->nodes)
		aj_errors_add(c->err, NULL, "-n: not allowed for a heterogeneous job (tasks declare replicas)");
	if (args->processes)
		aj_errors_add(c->err, NULL, "-p: not allowed for a heterogeneous job (tasks declare gpus_per_node)");
	if (args->processes_per_node)
		aj_errors_add(c->err, NULL, "--ppn: not allowed for a heterogeneous job (tasks declare processes_per_node)");
	if (args->nodes || args->processes || args->processes_per_node)
		c->failed = 1;
	for (i = 0; i < sizeof(target_keys) / sizeof(target_keys[0]); i++)
		reject_in_hetero(c, get(config, "target"), target_keys[i], ".target",
				 aj_buf_cstr(&per_task));
	aj_buf_release(&per_task);
	reject_in_hetero(c, job0, "instance_count", ".jobs[0]", "tasks declare replicas");
	reject_in_hetero(c, job0, "process_count_per_node", ".jobs[0]",
			 "tasks declare processes_per_node");
}

/*
 * The SKU of a heterogeneous job is a label: placeholders and node ranges
 * would ask for a global shape the tasks replace.
 */
static void hetero_sku(struct conv *c, const struct aj_node *sku)
{
	size_t at = path_push(c, ".jobs[0].sku");

	if (sku->type == AJ_NODE_MAP)
		fail(c, sku, "node ranges are not allowed in a heterogeneous job: the tasks "
		     "under %s declare the shape", c->tasks);
	else if (sku->type == AJ_NODE_STRING && aj_sku_has_placeholder(sku->str))
		fail(c, sku, "SKU placeholders ({nodes}, {processes}) are not allowed in a "
		     "heterogeneous job: the tasks under %s declare the shape", c->tasks);
	path_pop(c, at);
}

/*
 * nodes, SKU processes and launcher processes: command line first, then the
 * template, never an implicit default (except 1 launcher process). A
 * template value that was present but invalid has been reported already.
 */
static void shape_homogeneous(struct conv *c, const struct aj_node *config,
			      const struct aj_node *job0, const struct aj_shape_args *args,
			      struct aj_jobspec *s)
{
	const struct aj_job *j = &s->jobs[0];
	const char *task_name = j->name ? j->name : "main";
	struct aj_task *t;
	size_t i, at;
	int ok = 1;

	if (args->nodes < 0 || args->processes < 0 || args->processes_per_node < 0) {
		aj_errors_add(c->err, NULL, "-n, -p and --ppn must be positive");
		c->failed = 1;
		return;
	}
	s->nodes = args->nodes ? args->nodes : j->instance_count;
	s->processes = args->processes ? args->processes : s->target.gpus_per_node;
	s->processes_per_node = args->processes_per_node ? args->processes_per_node :
		j->process_count_per_node != AJ_UNSET ? j->process_count_per_node : 1;
	if (s->nodes == AJ_UNSET) {
		struct aj_where w = { NULL, 0, 0, "nodes" };

		ok = 0;
		if (!get(job0, "instance_count")) {
			aj_errors_add(c->err, &w, "not set: pass -n or set jobs[0].instance_count in %s.yaml",
				      s->template_name ? s->template_name : "template/?");
			c->failed = 1;
		}
	}
	if (s->processes == AJ_UNSET) {
		struct aj_where w = { NULL, 0, 0, "processes" };

		ok = 0;
		if (!get(get(config, "target"), "gpus_per_node")) {
			aj_errors_add(c->err, &w, "not set: pass -p or set target.gpus_per_node in %s.yaml",
				      s->template_name ? s->template_name : "template/?");
			c->failed = 1;
		}
	}
	if (!ok)
		return;
	at = path_push(c, ".jobs[0].sku");
	if (aj_sku_resolve(get(job0, "sku"), aj_buf_cstr(&c->path), s->nodes, s->processes,
			   &s->sku, c->err))
		c->failed = 1;
	path_pop(c, at);

	s->tasks = aj_calloc(1, sizeof(*s->tasks));
	if (!s->tasks) {
		c->oom = 1;
		return;
	}
	s->tasks_alloc = 1;
	s->tasks_nr = 1;
	t = &s->tasks[0];
	t->name = dup_or_oom(c, task_name, strlen(task_name));
	t->replicas = s->nodes;
	t->cpus_per_node = AJ_UNSET;
	t->gpus_per_node = AJ_UNSET;
	t->rdma = AJ_UNSET;
	t->processes_per_node = s->processes_per_node;
	for (i = 0; i < s->command.nr; i++)
		if (aj_strlist_add(&t->command, s->command.items[i]))
			c->oom = 1;
}

int aj_jobspec_from_config(const struct aj_node *config, const char *name,
			   const struct aj_shape_args *args,
			   const char *const *argv, size_t argc,
			   struct aj_jobspec *s, struct aj_errors *err)
{
	struct aj_jobspec_in in = { args, argv, argc, NULL };

	return aj_jobspec_convert(config, name, &in, s, err);
}

int aj_jobspec_convert(const struct aj_node *config, const char *name,
		       const struct aj_jobspec_in *in, struct aj_jobspec *s,
		       struct aj_errors *err)
{
	struct conv c = { err, AJ_BUF_INIT(AJ_BUF_SMALL), 0, 0, NULL };
	const struct aj_shape_args *args = in->shape;
	const struct aj_node *jobs, *job0 = NULL, *sku, *extra, *tasks;
	struct aj_buf where = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i;

	if (in->tasks_key)
		aj_buf_addf(&where, "config._extra.%s", in->tasks_key);
	else
		aj_buf_addstr(&where, "the backend's task declarations");
	if (where.failed)
		return aj_errors_oom(err);
	c.tasks = aj_buf_cstr(&where);
	path_push(&c, "config");
	if (!config || config->type != AJ_NODE_MAP) {
		if (config)
			fail_type(&c, config, "mapping");
		else
			fail(&c, NULL, "required");
		aj_buf_release(&c.path);
		aj_buf_release(&where);
		return -1;
	}
	s->template_name = dup_or_oom(&c, name ? name : "", strlen(name ? name : ""));
	for (i = 0; i < in->argc; i++)
		if (aj_strlist_add(&s->command, in->argv[i]))
			c.oom = 1;
	read_target(&c, config, &s->target);
	read_environment(&c, config, &s->environment);
	read_code(&c, config, &s->code);
	read_storage(&c, config, s);
	jobs = read_jobs(&c, config, s);
	if (jobs)
		job0 = jobs->items[0];
	extra = get(config, "_extra");
	if (extra && !(s->extra = aj_node_copy(extra)))
		c.oom = 1;

	if (aj_schema_check(&aj_schema_config, config, "", "config", err))
		c.failed = 1;

	sku = get(job0, "sku");
	tasks = in->tasks_key && extra && extra->type == AJ_NODE_MAP ?
		aj_node_at(extra, in->tasks_key) : NULL;
	if (job0 && !sku) {
		size_t at = path_push(&c, ".jobs[0].sku");

		fail(&c, job0, "required");
		path_pop(&c, at);
	} else if ((sku && sku->type == AJ_NODE_STRING && !strcmp(sku->str, "heterogeneous")) ||
		   (sku && tasks)) {
		/* declared tasks make a job heterogeneous whatever its SKU says */
		s->heterogeneous = 1;
		if (sku->type == AJ_NODE_STRING)
			s->sku = dup_or_oom(&c, sku->str, sku->len);
		hetero_sku(&c, sku);
		if (args)
			shape_hetero(&c, config, job0, args);
	} else if (args && sku && (sku->type == AJ_NODE_STRING || sku->type == AJ_NODE_MAP)) {
		shape_homogeneous(&c, config, job0, args, s);
	}
	aj_buf_release(&c.path);
	aj_buf_release(&where);
	if (c.oom)
		aj_errors_oom(err);
	return c.failed || c.oom ? -1 : 0;
}

/* The first six keys of aj_schema_task are required. */
#define TASK_REQUIRED 6

static void read_task(struct conv *c, const struct aj_node *n, const struct aj_jobspec *s,
		      struct aj_task *t)
{
	size_t i, k;

	if (aj_schema_check(&aj_schema_task, n, "", aj_buf_cstr(&c->path), c->err))
		c->failed = 1;
	for (k = 0; k < TASK_REQUIRED; k++) {
		const char *key = aj_schema_task.keys[k].pattern;

		if (!get(n, key)) {
			size_t at = path_push(c, ".%s", key);

			fail(c, n, "required: every task declares its resources and process count");
			path_pop(c, at);
		}
	}
	read_int(c, n, "replicas", 1, &t->replicas);
	read_int(c, n, "cpus_per_node", 1, &t->cpus_per_node);
	read_quantity(c, n, "memory", &t->memory);
	read_int(c, n, "gpus_per_node", 0, &t->gpus_per_node);
	read_bool(c, n, "rdma", &t->rdma);
	read_int(c, n, "processes_per_node", 1, &t->processes_per_node);
	read_kv(c, n, "node_selector", &t->node_selector);
	if (get(n, "command")) {
		t->has_command = 1;
		read_strlist(c, n, "command", &t->command);
	} else {
		for (i = 0; i < s->command.nr; i++)
			if (aj_strlist_add(&t->command, s->command.items[i]))
				c->oom = 1;
	}
}

int aj_jobspec_read_tasks(const struct aj_node *tasks, const char *path,
			  struct aj_jobspec *s, struct aj_errors *err)
{
	struct conv c = { err, AJ_BUF_INIT(AJ_BUF_SMALL), 0, 0, NULL };
	size_t i;

	path_push(&c, "%s", path);
	if (!tasks || tasks->type != AJ_NODE_MAP || !tasks->nr) {
		if (!tasks || tasks->type == AJ_NODE_NULL)
			fail(&c, tasks, "required: a mapping of task names to task declarations");
		else if (tasks->type != AJ_NODE_MAP)
			fail_type(&c, tasks, "mapping of task names to task declarations");
		else
			fail(&c, tasks, "must declare at least one task");
	} else if (AJ_GROW(s->tasks, s->tasks_nr + tasks->nr, s->tasks_alloc)) {
		c.oom = 1;
	} else {
		for (i = 0; i < tasks->nr; i++) {
			const struct aj_pair *p = &tasks->pairs[i];
			struct aj_task *t = &s->tasks[s->tasks_nr++];
			size_t at = path_push(&c, ".%s", p->key);

			memset(t, 0, sizeof(*t));
			t->cpus_per_node = AJ_UNSET;
			t->gpus_per_node = AJ_UNSET;
			t->rdma = AJ_UNSET;
			t->name = dup_or_oom(&c, p->key, p->keylen);
			if (p->value->type != AJ_NODE_MAP)
				fail_type(&c, p->value, "mapping");
			else
				read_task(&c, p->value, s, t);
			path_pop(&c, at);
		}
	}
	aj_buf_release(&c.path);
	if (c.oom)
		aj_errors_oom(err);
	return c.failed || c.oom ? -1 : 0;
}
