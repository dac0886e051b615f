/*
 * runner.c - the runners' table and its look-ups (runner.h), as
 * src/backend/backend.c is the backends'. One row per runner; the first
 * names the service an AjJob that resolves to no runner is told under.
 */
#include "runner.h"

#include <string.h>

#include "azure.h"
#include "kube.h"
#include "volcano.h"

const struct aj_runner *const aj_runners[] = { &aj_runner_volcano, &aj_runner_kube, &aj_runner_azure };
const size_t aj_runners_nr = sizeof(aj_runners) / sizeof(aj_runners[0]);
_Static_assert(sizeof(aj_runners) / sizeof(aj_runners[0]) <= AJ_RUNNERS_MAX,
	       "the cache and the reconciler have a slot per runner (AJ_RUNNERS_MAX)");

const struct aj_runner *aj_runner_for(const char *service)
{
	size_t i;
	const char *const *s;

	for (i = 0; service && i < aj_runners_nr; i++)
		for (s = aj_runners[i]->services; *s; s++)
			if (!strcmp(*s, service))
				return aj_runners[i];
	return NULL;
}

size_t aj_runner_slot(const struct aj_runner *r)
{
	size_t i;

	for (i = 0; i < aj_runners_nr && aj_runners[i] != r; i++)
		;
	return i;
}

const char *aj_runner_default_service(void)
{
	return aj_runners[0]->services[0];
}
