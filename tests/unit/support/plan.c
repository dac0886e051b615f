#include "support.h"

#include <stdio.h>
#include <string.h>

#include "runner.h"

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
