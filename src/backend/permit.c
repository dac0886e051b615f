/*
 * permit.c - which jobs need more than a plain pod, and where they may run.
 *
 * A user allowed to create AjJobs in a namespace must not get more than a
 * user allowed to create pods there. Two things a template can ask for go
 * beyond what Pod Security's baseline lets an ordinary pod do: added Linux
 * capabilities and storage mounts (their blobfuse2 pods run privileged for
 * /dev/fuse). The controller builds them only in namespaces its
 * configuration lists; the cluster's admission still checks every pod.
 */
#include "backend.h"
#include "common.h"

#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/jobspec.h"

#define NS_MAX 63
#define PERMIT_SETTING "--privileged-namespaces (AJ_PRIVILEGED_NAMESPACES)"

/* The next comma-separated entry of *list, spaces trimmed; 0 at the end. */
static int next_entry(const char **list, const char **start, size_t *len)
{
	const char *p = *list, *end;

	if (!p || !*p)
		return 0;
	end = strchr(p, ',');
	if (!end)
		end = p + strlen(p);
	*list = *end ? end + 1 : end;
	while (p < end && *p == ' ')
		p++;
	while (end > p && end[-1] == ' ')
		end--;
	*start = p;
	*len = (size_t)(end - p);
	return 1;
}

static int permitted_in(const char *permitted, const char *ns)
{
	const char *e;
	size_t len;

	while (next_entry(&permitted, &e, &len))
		if ((len == 1 && *e == '*') || (len == strlen(ns) && !strncmp(e, ns, len)))
			return 1;
	return 0;
}

int aj_backend_permit_list_check(const char *permitted, struct aj_errors *err)
{
	char name[NS_MAX + 1];
	const char *e;
	size_t len;
	int ret = 0;

	while (next_entry(&permitted, &e, &len)) {
		if (len == 1 && *e == '*')
			continue;
		if (len && len <= NS_MAX) {
			memcpy(name, e, len);
			name[len] = '\0';
			if (aj_dns_label(name, NS_MAX))
				continue;
		}
		ret = aj_errors_add(err, NULL, "\"%.*s\" is not a namespace name or \"*\"", (int)len, e);
	}
	return ret;
}

int aj_backend_permit(const struct aj_jobspec *spec, const char *ns,
		      const char *permitted, struct aj_errors *err)
{
	const char *why = permitted && *permitted ? "does not list it" : "permits none by default";
	int ret = 0;
	size_t i;

	if (ns && permitted_in(permitted, ns))
		return 0;
	if (spec->jobs_nr && spec->jobs[0].container.capabilities.nr) {
		struct aj_where w = { NULL, 0, 0,
				      "config.jobs[0].submit_args.container_args.capabilities" };

		ret = aj_errors_add(err, &w, "adding capabilities is not permitted in namespace "
				    "\"%s\": the controller's " PERMIT_SETTING " %s",
				    ns ? ns : "", why);
	}
	for (i = 0; i < spec->storage_nr; i++) {
		char path[256];
		struct aj_where w = { NULL, 0, 0, path };

		snprintf(path, sizeof(path), "config.storage.%s", spec->storage[i].name);
		ret = aj_errors_add(err, &w, "storage mounts run privileged pods, not permitted "
				    "in namespace \"%s\": the controller's " PERMIT_SETTING " %s",
				    ns ? ns : "", why);
	}
	return ret;
}
