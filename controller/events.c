#include "events.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "kube/client.h"
#include "log.h"
#include "resources.h"

/* events.k8s.io/v1 rejects notes over 1 KiB. */
#define AJ_EVENT_NOTE_MAX 1024

cJSON *aj_event_build(const struct aj_event *e)
{
	cJSON *ev = cJSON_CreateObject(), *meta, *reg;
	char name[320], note[AJ_EVENT_NOTE_MAX];
	size_t len = strlen(e->note);

	if (e->once) {
		int w = snprintf(name, sizeof(name), "%s.%.8s-", e->name, e->uid ? e->uid : "");
		size_t n = w < 0 ? 0 : (size_t)w < sizeof(name) ? (size_t)w : sizeof(name) - 1;
		const char *r;

		/* an Event name is a DNS subdomain: the reason in lower case */
		for (r = e->reason; *r && n + 1 < sizeof(name); r++)
			name[n++] = *r >= 'A' && *r <= 'Z' ? (char)(*r - 'A' + 'a') : *r;
		name[n] = '\0';
	} else {
		snprintf(name, sizeof(name), "%s.%llx", e->name, e->seq);
	}
	if (len >= sizeof(note)) {
		/* Cut on a UTF-8 boundary and say so. */
		size_t cut = sizeof(note) - 4;

		while (cut > 0 && ((unsigned char)e->note[cut] & 0xC0) == 0x80)
			cut--;
		snprintf(note, sizeof(note), "%.*s...", (int)cut, e->note);
	} else {
		memcpy(note, e->note, len + 1);
	}
	if (!ev || !cJSON_AddStringToObject(ev, "apiVersion", "events.k8s.io/v1") ||
	    !cJSON_AddStringToObject(ev, "kind", "Event") ||
	    !(meta = cJSON_AddObjectToObject(ev, "metadata")) ||
	    !cJSON_AddStringToObject(meta, "name", name) ||
	    !cJSON_AddStringToObject(meta, "namespace", e->ns) ||
	    !cJSON_AddStringToObject(ev, "eventTime", e->now) ||
	    !cJSON_AddStringToObject(ev, "reportingController", AJ_CONTROLLER_NAME) ||
	    !cJSON_AddStringToObject(ev, "reportingInstance", e->instance) ||
	    !cJSON_AddStringToObject(ev, "action", e->action) ||
	    !cJSON_AddStringToObject(ev, "reason", e->reason) ||
	    !cJSON_AddStringToObject(ev, "type", e->warning ? "Warning" : "Normal") ||
	    !cJSON_AddStringToObject(ev, "note", note) ||
	    !(reg = cJSON_AddObjectToObject(ev, "regarding")) ||
	    !cJSON_AddStringToObject(reg, "apiVersion", AJ_API_VERSION) ||
	    !cJSON_AddStringToObject(reg, "kind", "AjJob") ||
	    !cJSON_AddStringToObject(reg, "namespace", e->ns) ||
	    !cJSON_AddStringToObject(reg, "name", e->name) ||
	    (e->uid && !cJSON_AddStringToObject(reg, "uid", e->uid)) ||
	    (e->resource_version &&
	     !cJSON_AddStringToObject(reg, "resourceVersion", e->resource_version))) {
		cJSON_Delete(ev);
		return NULL;
	}
	return ev;
}

void aj_event_post(struct aj_kube *k, const struct aj_event *e)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_kube_ref ref = { &aj_res_events, e->ns, NULL, NULL };
	struct aj_kube_status st;
	cJSON *ev = aj_event_build(e);

	aj_kube_status_init(&st);
	if (!ev || (aj_kube_create(k, &ref, ev, NULL, &st, &err) &&
		    !(e->once && st.reason == AJ_KUBE_ALREADY_EXISTS)))
		aj_log(AJ_LOG_WARN, "could not record an event", "ajjob", e->name,
		       "reason", e->reason, "error",
		       err.nr ? err.items[0].message : "out of memory", AJ_LOG_END);
	cJSON_Delete(ev);
	aj_kube_status_release(&st);
	aj_errors_release(&err);
}

void aj_time_now(char *seconds, size_t ssize, char *micro, size_t msize)
{
	struct timespec ts;
	struct tm tm;
	char base[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	if (seconds)
		snprintf(seconds, ssize, "%sZ", base);
	if (micro)
		snprintf(micro, msize, "%s.%06ldZ", base, ts.tv_nsec / 1000L);
}
