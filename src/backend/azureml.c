#include "azureml.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "backend.h"
#include "common.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"

/* The marker local rank 0 leaves once setup is done on a node. */
#define SETUP_DONE "/tmp/.aj_setup_done"
#define SETUP_WAIT_SECONDS 600

static int distributed(const struct aj_jobspec *spec)
{
	return spec->nodes > 1 || spec->processes_per_node > 1;
}

/*
 * shmSize takes digits and one of bkmg (either case). Kubernetes-style
 * binary suffixes (Ki, Mi, Gi, Ti) are accepted and rewritten; anything
 * else is refused. 0, or -1 when s is not a size.
 */
static int shm_for_azureml(const char *s, char *out, size_t size)
{
	const char *p = s;
	unsigned long long v = 0;

	while (*p >= '0' && *p <= '9') {
		v = v * 10 + (unsigned long long)(*p++ - '0');
		if (v > (unsigned long long)INT_MAX * 1024ull)
			return -1;
	}
	if (p == s)
		return -1;
	if (!*p || (strchr("bBkKmMgG", *p) && !p[1])) {
		snprintf(out, size, "%llu%s", v, *p ? p : "b");
		return 0;
	}
	if (p[1] != 'i' || p[2])
		return -1;
	switch (*p) {
	case 'K': snprintf(out, size, "%lluk", v); return 0;
	case 'M': snprintf(out, size, "%llum", v); return 0;
	case 'G': snprintf(out, size, "%llug", v); return 0;
	case 'T': snprintf(out, size, "%llug", v * 1024ull); return 0;
	default: return -1;
	}
}

static int shm_error(const struct aj_job *j, struct aj_errors *err)
{
	struct aj_where w = { NULL, 0, 0, "config.jobs[0].submit_args.container_args.shm_size" };

	return aj_errors_add(err, &w, "\"%s\" is not a size such as 64g or 64Gi",
			     j->container.shm_size);
}

static int valid_mount_name(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* Two mounts whose output names are one ("data-in" and "data_in")? Reports it. */
static int output_clash(const struct aj_jobspec *spec, size_t i, struct aj_errors *err)
{
	struct aj_buf a = AJ_BUF_INIT(AJ_BUF_SMALL), b = AJ_BUF_INIT(AJ_BUF_SMALL);
	int ret = 0;
	size_t k;

	aj_azureml_output_name(&a, spec->storage[i].name);
	for (k = 0; k < i && !ret; k++) {
		aj_buf_reset(&b);
		aj_azureml_output_name(&b, spec->storage[k].name);
		if (!strcmp(aj_buf_cstr(&a), aj_buf_cstr(&b))) {
			struct aj_where w = { NULL, 0, 0, "config.storage" };

			ret = aj_errors_add(err, &w, "mounts \"%s\" and \"%s\" would both be the Azure "
					    "ML output %s: rename one", spec->storage[k].name,
					    spec->storage[i].name, aj_buf_cstr(&a));
		}
	}
	aj_buf_release(&a);
	aj_buf_release(&b);
	return ret;
}

enum aj_code_route aj_azureml_code_route(const struct aj_jobspec *spec)
{
	(void)spec;
	return AJ_CODE_DATASTORE;
}

int aj_azureml_validate(const struct aj_jobspec *spec, const char *service,
			struct aj_errors *err)
{
	const struct aj_job *j = spec->jobs_nr ? &spec->jobs[0] : NULL;
	char shm[64];
	int ret = 0;
	size_t i;

	if (spec->heterogeneous) {
		struct aj_where w = { NULL, 0, 0, "config.jobs[0].sku" };

		ret = aj_errors_add(err, &w, "heterogeneous jobs need service volcano, not %s",
				    service);
	}
	if (!spec->environment.image || !*spec->environment.image) {
		struct aj_where w = { NULL, 0, 0, "config.environment.image" };

		ret = aj_errors_add(err, &w, "required for service %s", service);
	}
	if (j && j->container.shm_size && shm_for_azureml(j->container.shm_size, shm, sizeof(shm)))
		ret = shm_error(j, err);
	for (i = 0; j && i < j->tags.nr; i++) {
		if (j->tags.items[i][0] == ':' || !j->tags.items[i][0]) {
			struct aj_where w = { NULL, 0, 0, "config.jobs[0].tags" };

			ret = aj_errors_add(err, &w, "tag \"%s\" has no key (expected key:value)",
					    j->tags.items[i]);
		}
	}
	for (i = 0; i < spec->storage_nr; i++) {
		if (!valid_mount_name(spec->storage[i].name)) {
			struct aj_where w = { NULL, 0, 0, "config.storage" };

			ret = aj_errors_add(err, &w,
					    "mount name \"%s\" may hold only letters, digits, '_' and '-'",
					    spec->storage[i].name);
		} else if (output_clash(spec, i, err)) {
			ret = -1;
		}
	}
	return ret;
}

/* mount with '-' as '_': what Azure names and shell variables accept */
static int add_underscored(struct aj_buf *b, const char *mount)
{
	int ret = 0;

	for (; *mount && !ret; mount++)
		ret = aj_buf_addch(b, *mount == '-' ? '_' : *mount);
	return ret;
}

int aj_azureml_datastore_name(struct aj_buf *b, const char *mount)
{
	return aj_buf_addstr(b, "aj_") || add_underscored(b, mount) ? -1 : 0;
}

int aj_azureml_output_name(struct aj_buf *b, const char *mount)
{
	return (*mount >= '0' && *mount <= '9' && aj_buf_addch(b, '_')) ||
	       add_underscored(b, mount) ? -1 : 0;
}

/* Setup once per node: local rank 0 runs it, the other local ranks wait. */
static int add_setup(struct aj_buf *b, const struct aj_jobspec *spec)
{
	const struct aj_strlist *setup = &spec->environment.setup;

	if (!setup->nr || !distributed(spec))
		return aj_shell_add_lines(b, setup);
	if (aj_buf_addstr(b, "if [ \"${LOCAL_RANK:-0}\" = 0 ]; then\n") ||
	    aj_shell_add_lines(b, setup))
		return -1;
	return aj_buf_addf(b,
			   "touch " SETUP_DONE "\n"
			   "else\n"
			   "aj_waited=0\n"
			   "while [ ! -e " SETUP_DONE " ]; do\n"
			   "if [ \"$aj_waited\" -ge %d ]; then echo 'aj: setup did not finish on this node' >&2; exit 1; fi\n"
			   "sleep 1; aj_waited=$((aj_waited + 1))\n"
			   "done\n"
			   "fi\n", SETUP_WAIT_SECONDS);
}

static char *build_command(const struct aj_jobspec *spec)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_LARGE);

	if (aj_buf_addstr(&b, "set -eo pipefail\n") || add_setup(&b, spec) ||
	    aj_shell_add_command(&b, spec, &spec->tasks[0], 0))
		return NULL;
	return aj_buf_detach(&b, NULL);
}

static char *registry_image(const struct aj_environment *e)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t len = e->registry ? strlen(e->registry) : 0;

	while (len && e->registry[len - 1] == '/')
		len--;
	if (len && (aj_buf_add(&b, e->registry, len) || aj_buf_addch(&b, '/')))
		return NULL;
	if (aj_buf_addstr(&b, e->image))
		return NULL;
	return aj_buf_detach(&b, NULL);
}

/* jobs[0].tags "key:value" → {"key": "value"}; a bare "key" gets "". */
static void add_tags(cJSON *props, const struct aj_job *j, int *oom)
{
	cJSON *tags;
	size_t i;

	if (!j->tags.nr)
		return;
	tags = aj_body_add_object(props, "tags", oom);
	for (i = 0; i < j->tags.nr && tags; i++) {
		const char *t = j->tags.items[i];
		const char *colon = strchr(t, ':');
		char *key = colon ? aj_strndup(t, (size_t)(colon - t)) : aj_strdup(t);

		if (!key) {
			*oom = 1;
			return;
		}
		cJSON_DeleteItemFromObjectCaseSensitive(tags, key);
		aj_body_add_string(tags, key, colon ? colon + 1 : "", oom);
		aj_free(key);
	}
}

int aj_azureml_body_start(struct aj_azureml_body *b, const struct aj_jobspec *spec,
			  const struct aj_build_ctx *ctx, const char *environment_image,
			  struct aj_errors *err)
{
	const struct aj_job *j = spec->jobs;
	char *command = spec->tasks_nr ? build_command(spec) : NULL;
	char *image = environment_image || !spec->environment.image ? NULL :
		registry_image(&spec->environment);
	char num[32];
	size_t i;

	if (!spec->jobs_nr || spec->tasks_nr != 1 || spec->heterogeneous || !ctx->job_name) {
		aj_free(command);
		aj_free(image);
		b->root = NULL;
		return aj_errors_add(err, NULL, "cannot build an Azure ML job: %s",
				     ctx->job_name ? "the job shape is not resolved" : "no job name");
	}
	b->oom = !command || (!environment_image && !image);
	b->root = cJSON_CreateObject();
	b->properties = aj_body_add_object(b->root, "properties", &b->oom);
	aj_body_add_string(b->properties, "jobType", "Command", &b->oom);
	aj_body_add_string(b->properties, "displayName", ctx->job_name, &b->oom);
	if (command)
		aj_body_add_string(b->properties, "command", command, &b->oom);
	if (environment_image || image)
		aj_body_add_string(b->properties, "environmentId",
				   environment_image ? environment_image : image, &b->oom);
	if (spec->code.digest) {
		struct aj_buf code = AJ_BUF_INIT(AJ_BUF_SMALL);

		b->oom |= aj_buf_addf(&code, "codes/" AJ_AZUREML_CODE_NAME "/versions/%s",
				      spec->code.digest) != 0;
		if (!code.failed)
			aj_body_add_string(b->properties, "codeId", aj_buf_cstr(&code), &b->oom);
		aj_buf_release(&code);
	}
	aj_free(command);
	aj_free(image);

	b->env = aj_body_add_object(b->properties, "environmentVariables", &b->oom);
	for (i = 0; i < j->env.nr; i++)
		aj_body_add_string(b->env, j->env.items[i].key, j->env.items[i].value, &b->oom);
	snprintf(num, sizeof(num), "%d", spec->nodes);
	aj_azureml_env_default(b, "AJ_NODES", num);
	snprintf(num, sizeof(num), "%d", spec->processes_per_node);
	aj_azureml_env_default(b, "AJ_PROCESSES_PER_NODE", num);

	if (distributed(spec)) {
		cJSON *d = aj_body_add_object(b->properties, "distribution", &b->oom);

		aj_body_add_string(d, "distributionType", "PyTorch", &b->oom);
		aj_body_add_int(d, "processCountPerInstance", spec->processes_per_node, &b->oom);
	}
	b->resources = aj_body_add_object(b->properties, "resources", &b->oom);
	aj_body_add_int(b->resources, "instanceCount", spec->nodes, &b->oom);
	if (j->container.shm_size) {
		char shm[64];

		if (shm_for_azureml(j->container.shm_size, shm, sizeof(shm))) {
			cJSON_Delete(b->root);
			b->root = NULL;
			return shm_error(j, err);
		}
		aj_body_add_string(b->resources, "shmSize", shm, &b->oom);
		aj_azureml_env_default(b, "SHM_SIZE", shm);
	}
	add_tags(b->properties, j, &b->oom);
	if (b->oom) {
		cJSON_Delete(b->root);
		b->root = NULL;
		return aj_errors_oom(err);
	}
	return 0;
}

void aj_azureml_env_default(struct aj_azureml_body *b, const char *key, const char *value)
{
	if (b->env && !cJSON_GetObjectItemCaseSensitive(b->env, key))
		aj_body_add_string(b->env, key, value, &b->oom);
}

/* Set key in obj to value, replacing what was there; key NULL means OOM. */
static void put_string(cJSON *obj, const char *key, const char *value, int *oom)
{
	if (!key) {
		*oom = 1;
		return;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	aj_body_add_string(obj, key, value, oom);
}

static const char *cstr_or_null(const struct aj_buf *b)
{
	return b->failed ? NULL : aj_buf_cstr(b);
}

/* Storage mounts: a read-write output per mount, its path on the compute, a reference variable. */
static void add_storage(struct aj_azureml_body *b, const struct aj_jobspec *spec,
			const char *job_name)
{
	cJSON *outputs, *props;
	size_t i;

	if (!spec->storage_nr)
		return;
	outputs = aj_body_add_object(b->properties, "outputs", &b->oom);
	props = aj_body_add_object(b->properties, "properties", &b->oom);
	for (i = 0; i < spec->storage_nr && !b->oom; i++) {
		const struct aj_storage *st = &spec->storage[i];
		struct aj_buf key = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct aj_buf val = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct aj_buf name = AJ_BUF_INIT(AJ_BUF_SMALL);
		size_t dir_len = strlen(st->mount_dir);
		cJSON *out;

		/* outputs and variables take [A-Za-z_][A-Za-z0-9_]*: "data-in" is data_in */
		aj_azureml_output_name(&name, st->name);
		out = aj_body_add_object(outputs, cstr_or_null(&name), &b->oom);

		aj_body_add_string(out, "jobOutputType", "uri_folder", &b->oom);
		aj_buf_addstr(&val, "azureml://datastores/");
		aj_azureml_datastore_name(&val, st->name);
		aj_buf_addf(&val, "/paths/%s/", job_name);
		put_string(out, "uri", cstr_or_null(&val), &b->oom);
		aj_body_add_string(out, "mode", "ReadWriteMount", &b->oom);

		/* the path with exactly one trailing slash */
		while (dir_len > 1 && st->mount_dir[dir_len - 1] == '/')
			dir_len--;
		aj_buf_reset(&val);
		aj_buf_add(&val, st->mount_dir, dir_len);
		if (dir_len > 1)
			aj_buf_addch(&val, '/');
		aj_buf_addf(&key, "AZURE_ML_OUTPUT_PathOnCompute_%s", aj_buf_cstr(&name));
		put_string(props, cstr_or_null(&key), cstr_or_null(&val), &b->oom);

		aj_buf_reset(&key);
		aj_buf_addf(&key, "AZUREML_DATAREFERENCE_%s", aj_buf_cstr(&name));
		put_string(b->env, cstr_or_null(&key), st->mount_dir, &b->oom);
		aj_buf_release(&name);
		aj_buf_release(&key);
		aj_buf_release(&val);
	}
}

int aj_azureml_body_finish(struct aj_azureml_body *b, const struct aj_jobspec *spec,
			   cJSON **out, struct aj_errors *err)
{
	cJSON *arr;

	*out = NULL;
	add_storage(b, spec, cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(b->properties,
										   "displayName")));
	arr = cJSON_CreateArray();
	if (b->oom || !arr || !cJSON_AddItemToArray(arr, b->root)) {
		cJSON_Delete(arr);
		cJSON_Delete(b->root);
		b->root = NULL;
		return aj_errors_oom(err);
	}
	b->root = NULL;
	*out = arr;
	return 0;
}
