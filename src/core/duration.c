#include "duration.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int aj_duration_parse(const char *s, long *out)
{
	const char *p = s;
	long total = 0, v;
	char *end;

	while (*p) {
		/* strtol would take a sign or leading blanks: only digits start a part */
		if (*p < '0' || *p > '9')
			return -1;
		errno = 0;
		v = strtol(p, &end, 10);
		if (errno || v > 1000000L || !*end || !strchr("smh", *end))
			return -1;
		total += v * (*end == 'h' ? 3600 : *end == 'm' ? 60 : 1);
		p = end + 1;
	}
	if (!total)
		return -1;
	*out = total;
	return 0;
}
