/*
 * backend.c - the table of backends: one row each.
 */
#include "backend.h"

#include <stddef.h>
#include <strings.h>

extern const struct aj_backend aj_backend_aml;
extern const struct aj_backend aj_backend_sing;
extern const struct aj_backend aj_backend_volcano;

static const struct aj_backend *const backends[] = {
	&aj_backend_aml,
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
