#include "timestamp.h"

#include <string.h>

/* n decimal digits, nothing else (sscanf's %2d would take " 1" and "+1"). */
static int digits(const char *s, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return 0;
}

long long aj_timestamp_parse(const char *s, int local_ok)
{
	struct tm tm;
	int y, mo, d, h, mi, se, utc;
	const char *p;
	time_t t;

	if (!s || strlen(s) < 19 || digits(s, 4, &y) || s[4] != '-' ||
	    digits(s + 5, 2, &mo) || s[7] != '-' || digits(s + 8, 2, &d) ||
	    (s[10] != 'T' && s[10] != ' ') || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &mi) || s[16] != ':' || digits(s + 17, 2, &se))
		return -1;
	p = s + 19;
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			;
	utc = !strcmp(p, "Z") || !strcmp(p, "+00:00");
	if (!utc && (*p || !local_ok))
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = se;
	tm.tm_isdst = -1;
	t = utc ? timegm(&tm) : mktime(&tm);
	return t == (time_t)-1 ? -1 : (long long)t;
}

void aj_timestamp_format(time_t t, char out[AJ_TIMESTAMP_SIZE])
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, AJ_TIMESTAMP_SIZE, "%Y-%m-%dT%H:%M:%SZ", &tm);
}
