/*
 * rank.h - the order in which a job's candidates are tried.
 *
 * One row per candidate, filled by whoever reads the backends' state (the
 * controller's views, `aj place`): can the whole job start there now, how
 * long jobs of its shape waited there lately (waits.h), and one line of
 * why. The rank is:
 *   1. can start now, before cannot, before unknown (its state could not be
 *      read: a CRD missing, Azure unreachable), each row saying why;
 *   2. then the shorter expected wait, a known wait before none;
 *   3. then the user's order of preference.
 * Rows given up on (fail-over) or left out are not ranked.
 *
 * Ownership: rows borrow their strings from the caller; reason is the
 * row's own. aj_place_status_json() returns a new object. Pure: no I/O,
 * no clock.
 */
#ifndef AJ_PLACE_RANK_H
#define AJ_PLACE_RANK_H

#include <stddef.h>

#include <cjson/cJSON.h>

enum aj_place_state {
	AJ_PLACE_FITS,       /* the whole job can start now */
	AJ_PLACE_FULL,       /* read, and it cannot start now */
	AJ_PLACE_UNKNOWN,    /* its state could not be read */
	AJ_PLACE_EXCLUDED    /* given up on, or left out: not ranked */
};

#define AJ_PLACE_REASON_MAX 192

struct aj_place_row {
	const char *name;          /* the candidate template, "template/kube" */
	const char *backend;       /* its backend's name */
	const char *where;         /* where it would run (candidates.h) */
	size_t order;              /* the user's order of preference, from 0 */
	enum aj_place_state state;
	long expected_wait;        /* seconds; -1: no history */
	char reason[AJ_PLACE_REASON_MAX];
	size_t rank;               /* from 1 after aj_place_rank(); 0: not ranked */
	long gpus;                 /* the job's GPUs there, all pods (its wait band); 0: none or unknown */
};

/* The state's name as the status and `aj place` show it. */
const char *aj_place_state_name(enum aj_place_state s);

/* Sort rows into rank order and number the ranked ones from 1. */
void aj_place_rank(struct aj_place_row *rows, size_t n);

/*
 * The row to submit to, of rows in rank order: the first when it can
 * start now, or when no state could be read at all (every one unknown:
 * trying beats waiting on nothing); n when the job waits unplaced (the
 * best can only wait, or nothing is ranked).
 */
size_t aj_place_pick(const struct aj_place_row *rows, size_t n);

/*
 * The ranking as the AjJob's status.placement says it (docs/api.md):
 * "chosen" (when not NULL), "maxWaitSeconds" (when > 0) and "candidates",
 * one object per row in the order given (name, backend, where, rank,
 * canStartNow, state, expectedWaitSeconds when known, reason). The
 * controller adds the attempts; `aj place` prints it as it is. A new
 * object (the caller's), NULL on out of memory.
 */
cJSON *aj_place_status_json(const struct aj_place_row *rows, size_t n, const char *chosen,
			    long max_wait);

#endif
