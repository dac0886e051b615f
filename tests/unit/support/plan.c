#include "support.h"

#include <stdio.h>
#include <string.h>

#include "runner/runner.h"

void aj_test_plan_events(const char *name, const char *want, const struct aj_plan *p)
{
	char got[256] = "";
	size_t i, n = 0;

	for (i = 0; i < p->nr_events; i++)
		n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%s%s", i ? " " : "",
				      p->events[i].reason, p->events[i].once ? "!" : "");
	if (strcmp(got, want))
		fail_msg("%s: events \"%s\", expected \"%s\"", name, got, want);
}

cJSON *aj_test_summarize(const struct aj_runner *r, const char *json, struct aj_owned_facts *f)
{
	cJSON *obj = cJSON_Parse(json);

	assert_non_null(obj);
	memset(f, 0, sizeof(*f));
	r->summarize(obj, f);
	return obj;
}

void aj_test_task_is(const char *name, const struct aj_task_pods *got,
		     const struct aj_task_pods *want)
{
	if (strcmp(got->name, want->name) || got->replicas != want->replicas ||
	    got->pending != want->pending || got->running != want->running ||
	    got->succeeded != want->succeeded || got->failed != want->failed)
		fail_msg("%s: %s %lld: %lld pending %lld running %lld succeeded %lld failed, "
			 "expected %s %lld: %lld %lld %lld %lld", name, got->name, got->replicas,
			 got->pending, got->running, got->succeeded, got->failed, want->name,
			 want->replicas, want->pending, want->running, want->succeeded, want->failed);
}
