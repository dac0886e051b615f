/*
 * log.h - the controller's structured logger: one JSON object per line on
 * stderr, {"ts":"…","level":"info","msg":"…", key: value…}, so log pipelines
 * can parse every field. Values are strings; callers never pass secrets.
 *
 * The level and the output stream are process-wide (set once at start-up);
 * writes are serialised so lines from worker threads never interleave.
 */
#ifndef AJ_LOG_H
#define AJ_LOG_H

#include <stdio.h>

enum aj_log_level { AJ_LOG_DEBUG, AJ_LOG_INFO, AJ_LOG_WARN, AJ_LOG_ERROR };

/* Parse "debug"|"info"|"warn"|"error"; -1 for anything else. */
int aj_log_level_parse(const char *s);
void aj_log_set_level(enum aj_log_level level);
/* Where lines go (stderr by default); for tests. */
void aj_log_set_stream(FILE *f);

/* Ends the key/value list of aj_log() (a typed null pointer, as varargs need). */
#define AJ_LOG_END ((const char *)NULL)

/*
 * Log msg with key/value string pairs, terminated by AJ_LOG_END:
 *   aj_log(AJ_LOG_INFO, "created volcano job", "ajjob", "ns/x", "job", name, AJ_LOG_END);
 */
void aj_log(enum aj_log_level level, const char *msg, ...);

#endif
