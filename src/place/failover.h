/*
 * failover.h - when a job has waited too long on its candidate, and what
 * comes next.
 *
 * One attempt is one copy of the job on one candidate. Never two live
 * copies: the next candidate is placed only after the backend confirmed
 * that nothing of the previous attempt is left (Volcano Job and pods gone,
 * Kueue Workload and Job gone, Azure job Canceled). An attempt that starts
 * while it is being cancelled, before the backend confirmed it gone, is
 * kept (the status records startedDuringFailover). When the last candidate
 * is given up on too, the job fails with every attempt's reason.
 *
 * Ownership: nothing is allocated. Pure: the clock is an input.
 */
#ifndef AJ_PLACE_FAILOVER_H
#define AJ_PLACE_FAILOVER_H

#include <stddef.h>

enum aj_failover_step {
	AJ_FAILOVER_NONE,       /* nothing now: started, no max_wait, or within it */
	AJ_FAILOVER_CANCEL,     /* max_wait passed and it has not started: cancel it there */
	AJ_FAILOVER_WAIT_GONE,  /* cancelled: wait until its backend confirms it gone */
	AJ_FAILOVER_KEEP,       /* it started while being cancelled: keep it */
	AJ_FAILOVER_PLACE,      /* confirmed gone: place again among the rest */
	AJ_FAILOVER_GIVE_UP     /* confirmed gone and no candidate is left: the job fails */
};

struct aj_failover_in {
	long max_wait;          /* seconds; 0: never fail over */
	double now;             /* Unix seconds */
	double submitted;       /* when this attempt was submitted */
	int started;            /* its backend says it started (Running, or ended) */
	int cancelling;         /* a cancel of this attempt was issued */
	int gone;               /* its backend confirmed nothing of it is left */
	size_t left;            /* valid candidates not given up on, this one excluded */
};

struct aj_failover_out {
	enum aj_failover_step step;
	/* NONE within max_wait, WAIT_GONE: decide again after this many seconds; else 0 */
	double again_after;
};

/* How long to wait between looks while a cancelled attempt is going. */
#define AJ_FAILOVER_RECHECK 5.0

const char *aj_failover_step_name(enum aj_failover_step s);

void aj_failover_decide(const struct aj_failover_in *in, struct aj_failover_out *out);

#endif
