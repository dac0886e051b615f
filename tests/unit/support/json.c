#include "support.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One path segment: "key", "\"key.with.dots\"" or "[3]". */
static const char *segment(const char *p, char *key, size_t size, long *index)
{
	size_t n = 0;
	char *end;

	*index = -1;
	if (*p == '[') {
		*index = strtol(p + 1, &end, 10);
		return *end == ']' ? end + 1 : NULL;
	}
	if (*p == '"') {
		for (p++; *p && *p != '"' && n + 1 < size; p++)
			key[n++] = *p;
		p = *p == '"' ? p + 1 : NULL;
	} else {
		for (; *p && *p != '.' && *p != '[' && n + 1 < size; p++)
			key[n++] = *p;
	}
	key[n] = '\0';
	return p;
}

const cJSON *aj_test_json_at(const cJSON *root, const char *path)
{
	const char *p = path;
	const cJSON *cur = root;

	while (cur && p && *p) {
		char key[256];
		long index;

		if (*p == '.')
			p++;
		p = segment(p, key, sizeof(key), &index);
		if (!p)
			return NULL;
		cur = index >= 0 ? cJSON_GetArrayItem(cur, (int)index) :
			cJSON_GetObjectItemCaseSensitive(cur, key);
	}
	return cur;
}

const char *aj_test_json_str(const cJSON *root, const char *path)
{
	const cJSON *v = aj_test_json_at(root, path);

	if (!cJSON_IsString(v))
		fail_msg("%s: no string there", path);
	return v->valuestring;
}

long aj_test_json_int(const cJSON *root, const char *path)
{
	const cJSON *v = aj_test_json_at(root, path);

	if (!cJSON_IsNumber(v))
		fail_msg("%s: no number there", path);
	return (long)v->valuedouble;
}

int aj_test_json_size(const cJSON *root, const char *path)
{
	const cJSON *v = aj_test_json_at(root, path);

	if (!cJSON_IsArray(v) && !cJSON_IsObject(v))
		fail_msg("%s: no array or object there", path);
	return cJSON_GetArraySize(v);
}

char *aj_test_kubelet_view(const char *s)
{
	char *out = malloc(strlen(s) + 1), *o = out;

	assert_non_null(out);
	for (; *s; s++) {
		if (*s == '$') {
			assert_int_equal(s[1], '$');
			s++;
		}
		*o++ = *s;
	}
	*o = '\0';
	return out;
}

void aj_test_env_is(const cJSON *container, int i, const char *name, const char *value)
{
	char path[64];

	snprintf(path, sizeof(path), "env[%d].name", i);
	assert_string_equal(aj_test_json_str(container, path), name);
	snprintf(path, sizeof(path), "env[%d].value", i);
	assert_string_equal(aj_test_json_str(container, path), value);
}
