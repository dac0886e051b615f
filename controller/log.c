#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

static enum aj_log_level min_level = AJ_LOG_INFO;
static FILE *stream;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const names[] = { "debug", "info", "warn", "error" };

int aj_log_level_parse(const char *s)
{
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return (int)i;
	return -1;
}

void aj_log_set_level(enum aj_log_level level)
{
	min_level = level;
}

void aj_log_set_stream(FILE *f)
{
	stream = f;
}

void aj_log(enum aj_log_level level, const char *msg, ...)
{
	char ts[40];
	struct timespec now;
	struct tm tm;
	cJSON *o;
	char *line = NULL;
	va_list ap;
	const char *k;

	if (level < min_level)
		return;
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(ts + strlen(ts), sizeof(ts) - strlen(ts), ".%03ldZ",
		 now.tv_nsec / 1000000L);

	o = cJSON_CreateObject();
	if (o && cJSON_AddStringToObject(o, "ts", ts) &&
	    cJSON_AddStringToObject(o, "level", names[level]) &&
	    cJSON_AddStringToObject(o, "msg", msg)) {
		va_start(ap, msg);
		while ((k = va_arg(ap, const char *))) {
			const char *v = va_arg(ap, const char *);

			if (!cJSON_AddStringToObject(o, k, v ? v : ""))
				break;
		}
		va_end(ap);
		line = cJSON_PrintUnformatted(o);
	}
	pthread_mutex_lock(&lock);
	/* Out of memory still leaves a trace of what was being said. */
	fprintf(stream ? stream : stderr, "%s\n",
		line ? line : "{\"level\":\"error\",\"msg\":\"log line lost: out of memory\"}");
	fflush(stream ? stream : stderr);
	pthread_mutex_unlock(&lock);
	cJSON_free(line);
	cJSON_Delete(o);
}
