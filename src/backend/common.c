/*
 * common.c - what the builders share (common.h).
 */
#include "common.h"

#include <stddef.h>
#include <string.h>

#include "backend.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/strlist.h"

#define DNS_LABEL_MAX 63

static int is_lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

int aj_dns_label(const char *s, size_t max)
{
	size_t len = strlen(s), i;

	if (!len || len > max || !is_lower_alnum(s[0]) || !is_lower_alnum(s[len - 1]))
		return 0;
	for (i = 0; i < len; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return 0;
	return 1;
}

int aj_shell_quote(struct aj_buf *b, const char *s)
{
	int ret = aj_buf_addch(b, '\'');

	for (; *s && !ret; s++)
		ret = *s == '\'' ? aj_buf_addstr(b, "'\\''") : aj_buf_addch(b, *s);
	return ret ? -1 : aj_buf_addch(b, '\'');
}

int aj_shell_add_lines(struct aj_buf *b, const struct aj_strlist *lines)
{
	size_t i;

	for (i = 0; i < lines->nr; i++)
		if (aj_buf_addstr(b, lines->items[i]) || aj_buf_addch(b, '\n'))
			return -1;
	return 0;
}

int aj_shell_add_command(struct aj_buf *b, const struct aj_jobspec *spec,
			 const struct aj_task *task, int by_argv)
{
	size_t i;

	if (spec->jobs_nr && aj_shell_add_lines(b, &spec->jobs[0].command))
		return -1;
	if (task->has_command)
		return aj_shell_add_lines(b, &task->command);
	if (by_argv)
		return task->command.nr ? aj_buf_addstr(b, "\"$@\"\n") : 0;
	for (i = 0; i < task->command.nr; i++)
		if ((i && aj_buf_addch(b, ' ')) || aj_shell_quote(b, task->command.items[i]))
			return -1;
	return task->command.nr ? aj_buf_addch(b, '\n') : 0;
}

int aj_kubelet_escape(struct aj_buf *b, const char *s)
{
	const char *d;

	while ((d = strchr(s, '$'))) {
		if (aj_buf_add(b, s, (size_t)(d - s + 1)) || aj_buf_addch(b, '$'))
			return -1;
		s = d + 1;
	}
	return aj_buf_addstr(b, s);
}

int aj_request_over_limit(const cJSON *obj, const char *what, struct aj_errors *err)
{
	char *text = cJSON_PrintUnformatted(obj);
	size_t len = text ? strlen(text) : 0;

	cJSON_free(text);
	if (len <= AJ_REQUEST_MAX)
		return 0;
	aj_errors_add(err, NULL, "the %s would be %zu bytes, over the API server's limit of "
		      "%u bytes for one object (etcd's default): shorten what the template repeats in "
		      "every pod (environment.setup, submit_args.env, the command)", what, len,
		      AJ_REQUEST_MAX);
	return 1;
}

/* Attach item under key (or append it to an array parent); frees it on failure. */
static cJSON *attach(cJSON *parent, const char *key, cJSON *item, int *oom)
{
	int ok;

	if (!parent || !item) {
		cJSON_Delete(item);
		*oom = 1;
		return NULL;
	}
	ok = cJSON_IsArray(parent) ? cJSON_AddItemToArray(parent, item) :
		cJSON_AddItemToObject(parent, key, item);
	if (!ok) {
		cJSON_Delete(item);
		*oom = 1;
		return NULL;
	}
	return item;
}

cJSON *aj_body_add_object(cJSON *parent, const char *key, int *oom)
{
	return attach(parent, key, parent ? cJSON_CreateObject() : NULL, oom);
}

cJSON *aj_body_add_array(cJSON *parent, const char *key, int *oom)
{
	return attach(parent, key, parent ? cJSON_CreateArray() : NULL, oom);
}

void aj_body_add_string(cJSON *parent, const char *key, const char *value, int *oom)
{
	attach(parent, key, parent ? cJSON_CreateString(value) : NULL, oom);
}

void aj_body_add_int(cJSON *parent, const char *key, long long value, int *oom)
{
	attach(parent, key, parent ? cJSON_CreateNumber((double)value) : NULL, oom);
}

void aj_body_add_bool(cJSON *parent, const char *key, int value, int *oom)
{
	attach(parent, key, parent ? cJSON_CreateBool(value) : NULL, oom);
}

void aj_body_add_toleration(cJSON *tolerations, const char *key, const char *value, int *oom)
{
	cJSON *t = aj_body_add_object(tolerations, NULL, oom);

	aj_body_add_string(t, "key", key, oom);
	aj_body_add_string(t, "operator", value ? "Equal" : "Exists", oom);
	if (value)
		aj_body_add_string(t, "value", value, oom);
	aj_body_add_string(t, "effect", "NoSchedule", oom);
}

void aj_body_add_labels(cJSON *labels, const struct aj_kvlist *kv, int *oom)
{
	size_t i;

	for (i = 0; i < kv->nr; i++)
		aj_body_add_string(labels, kv->items[i].key, kv->items[i].value, oom);
}

void aj_body_add_label_default(cJSON *labels, const char *key, const char *value, int *oom)
{
	if (!cJSON_GetObjectItemCaseSensitive(labels, key))
		aj_body_add_string(labels, key, value, oom);
}

void aj_body_add_owner(cJSON *meta, const char *api_version, const char *name, const char *uid,
		       int *oom)
{
	cJSON *o = aj_body_add_object(aj_body_add_array(meta, "ownerReferences", oom), NULL, oom);

	aj_body_add_string(o, "apiVersion", api_version, oom);
	aj_body_add_string(o, "kind", "AjJob", oom);
	aj_body_add_string(o, "name", name, oom);
	aj_body_add_string(o, "uid", uid, oom);
	aj_body_add_bool(o, "controller", 1, oom);
	aj_body_add_bool(o, "blockOwnerDeletion", 1, oom);
}

cJSON *aj_body_add_metadata(cJSON *obj, const char *name, const struct aj_target *t,
			    const struct aj_build_ctx *ctx, int *oom)
{
	const char *ns = ctx->namespace_ ? ctx->namespace_ : t->namespace_;
	cJSON *meta = aj_body_add_object(obj, "metadata", oom);
	cJSON *labels;

	aj_body_add_string(meta, "name", name, oom);
	if (ns)
		aj_body_add_string(meta, "namespace", ns, oom);
	labels = aj_body_add_object(meta, "labels", oom);
	aj_body_add_labels(labels, &t->labels, oom);
	aj_body_add_label_default(labels, "app", name, oom);
	if (ctx->owner_uid)
		aj_body_add_owner(meta, ctx->owner_api_version, ctx->owner_name, ctx->owner_uid, oom);
	return labels;
}

int aj_paths_overlap(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n;

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (lb > 1 && b[lb - 1] == '/')
		lb--;
	n = la < lb ? la : lb;
	if (strncmp(a, b, n))
		return 0;
	return la == lb || (la < lb ? b[n] == '/' || n == 1 : a[n] == '/' || n == 1);
}

const char *aj_label_reserved(const char *key)
{
	static const struct {
		const char *key;
		int prefix;         /* key is a prefix: every key below it */
		const char *owner;
	} reserved[] = {
		{ "aj.dev/ajjob", 0, "aj" },
		{ "aj.dev/task", 0, "aj" },
		{ "volcano.sh/", 1, "Volcano" },
		{ "batch.kubernetes.io/", 1, "the Job controller" },
	};
	size_t i;

	for (i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (reserved[i].prefix ? !strncmp(key, reserved[i].key, strlen(reserved[i].key)) :
		    !strcmp(key, reserved[i].key))
			return reserved[i].owner;
	return NULL;
}

int aj_dns_subdomain(const char *s)
{
	char label[DNS_LABEL_MAX + 1];
	const char *dot;
	size_t n;

	if (strlen(s) > 253)
		return 0;
	for (;; s = dot + 1) {
		dot = strchr(s, '.');
		n = dot ? (size_t)(dot - s) : strlen(s);
		if (n > DNS_LABEL_MAX)
			return 0;
		memcpy(label, s, n);
		label[n] = '\0';
		if (!aj_dns_label(label, DNS_LABEL_MAX))
			return 0;
		if (!dot)
			return 1;
	}
}
