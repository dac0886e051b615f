/*
 * backend.c - the table of backends: one row each.
 */
#include "backend.h"

#include <stddef.h>
#include <string.h>
#include <strings.h>

#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/node.h"
#include "core/schema.h"

#define EXTRA_ROOT "_extra."

extern const struct aj_backend aj_backend_aml;
extern const struct aj_backend aj_backend_kube;
extern const struct aj_backend aj_backend_sing;
extern const struct aj_backend aj_backend_volcano;

static const struct aj_backend *const backends[] = {
	&aj_backend_aml,
	&aj_backend_kube,
	&aj_backend_sing,
	&aj_backend_volcano,
	NULL
};

const struct aj_backend *aj_backend_find(const char *service)
{
	size_t i;

	for (i = 0; service && backends[i]; i++)
		if (!strcasecmp(backends[i]->name, service))
			return backends[i];
	return NULL;
}

const struct aj_backend *const *aj_backend_all(void)
{
	return backends;
}

size_t aj_backend_extra_parts(const struct aj_schema **out, size_t max)
{
	size_t nr = 0, i, j, k;

	for (i = 0; backends[i]; i++) {
		for (j = 0; backends[i]->extra && backends[i]->extra[j]; j++) {
			const struct aj_schema *s = backends[i]->extra[j];

			for (k = 0; k < nr && k < max && out[k] != s; k++)
				;
			if (k < nr && k < max)
				continue;
			if (nr < max)
				out[nr] = s;
			nr++;
		}
	}
	return nr;
}

int aj_backend_check_parts(const struct aj_schema *const *parts, size_t nr,
			   const struct aj_node *extra, struct aj_errors *err)
{
	const struct aj_node *x = extra && extra->type == AJ_NODE_MAP ? extra : NULL;
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i;
	int ret = 0;

	for (i = 0; x && parts && i < nr && parts[i]; i++) {
		const struct aj_schema *s = parts[i];
		const struct aj_node *part = aj_node_at(x, s->root + strlen(EXTRA_ROOT));

		aj_buf_reset(&path);
		if (aj_buf_addf(&path, "config.%s", s->root)) {
			ret = aj_errors_oom(err);
			break;
		}
		if (aj_schema_check(s, part, "", aj_buf_cstr(&path), err))
			ret = -1;
	}
	aj_buf_release(&path);
	return ret;
}

int aj_backend_check(const struct aj_backend *b, struct aj_jobspec *spec, struct aj_errors *err)
{
	int rc = b->prepare ? b->prepare(spec, err) : 0;

	if (aj_backend_check_parts(b->extra, (size_t)-1, spec->extra, err))
		rc = -1;
	return b->validate(spec, err) || rc ? -1 : 0;
}
