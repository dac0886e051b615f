/*
 * common.c - what the builders share (common.h).
 */
#include "common.h"

#include <stddef.h>
#include <string.h>

#include "core/buf.h"
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
