/*
 * cli_progress.c - one progress line on stderr for long work (see cli.h).
 */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

#define REDRAW_MS 200
#define MIB (1024.0 * 1024.0)

int aj_cli_quiet;

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void aj_cli_progress_format(char *out, size_t cap, const char *what, uint64_t files,
			    uint64_t bytes, uint64_t total, int64_t ms)
{
	double rate = ms > 0 ? (double)bytes / MIB * 1000.0 / (double)ms : 0;
	int n = snprintf(out, cap, "aj: %s", what);

	if (n < 0 || (size_t)n >= cap)
		return;
	if (files)
		n += snprintf(out + n, cap - (size_t)n, " %llu files,", (unsigned long long)files);
	if ((size_t)n >= cap)
		return;
	if (total)
		n += snprintf(out + n, cap - (size_t)n, " %.1f of %.1f MiB", (double)bytes / MIB,
			      (double)total / MIB);
	else
		n += snprintf(out + n, cap - (size_t)n, " %.1f MiB", (double)bytes / MIB);
	if ((size_t)n >= cap)
		return;
	n += snprintf(out + n, cap - (size_t)n, ", %.1f MiB/s", rate);
	if ((size_t)n < cap && total && rate > 0 && bytes <= total)
		snprintf(out + n, cap - (size_t)n, ", ETA %.0f s",
			 (double)(total - bytes) / MIB / rate);
}

void aj_cli_progress_start(struct aj_cli_progress *p, const char *what, uint64_t total)
{
	p->what = what;
	p->total = total;
	p->start_ms = p->last_ms = now_ms();
	p->on = !aj_cli_quiet && isatty(STDERR_FILENO);
	p->shown = 0;
}

void aj_cli_progress_update(struct aj_cli_progress *p, uint64_t files, uint64_t bytes)
{
	char line[160];
	int64_t t;

	if (!p->on || (t = now_ms()) - p->last_ms < REDRAW_MS)
		return;
	p->last_ms = t;
	aj_cli_progress_format(line, sizeof(line), p->what, files, bytes, p->total,
			       t - p->start_ms);
	fprintf(stderr, "\r%s\033[K", line);
	p->shown = 1;
}

void aj_cli_progress_end(struct aj_cli_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}
