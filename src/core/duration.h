/*
 * duration.h - durations as people write them: "90s", "15m", "1h30m".
 *
 * One parser for the command line (--ttl, --since) and templates
 * (placement.max_wait), so both accept exactly the same spellings: one or
 * more <digits><unit> parts with units s, m and h, each part at most
 * 1,000,000, the whole greater than zero.
 *
 * Ownership: nothing is allocated.
 */
#ifndef AJ_DURATION_H
#define AJ_DURATION_H

/* The hint every caller's message gives. */
#define AJ_DURATION_HINT "a duration such as 90s, 5m or 1h30m"

/* Seconds in s into *out. 0, or -1 when s is not a duration (*out untouched). */
int aj_duration_parse(const char *s, long *out);

#endif
