/*
 * judge.h - one placement AjJob's candidates judged against the views:
 * the rows that rank.h orders, the same for the controller and `aj place`.
 *
 * A valid candidate's objects are built as its runner would build them
 * and the ask read from the first (views.h), an Azure one's from the job
 * body (its compute's free nodes or a VC's quota, the VCs chosen where its
 * target says, as the forwarder chooses them; UNKNOWN when the views
 * hold no Azure part, or its target names a workspace other than the one
 * whose computes were read). A candidate left out when it was loaded, or that the
 * caller does not serve, is EXCLUDED with its reason. Each row gets the
 * expected wait of its band from the history (waits.h; -1 with none).
 *
 * A pick that is submitted is charged to the views it was judged from
 * (aj_place_charge), so the next AjJob judged from them sees the room
 * the first one takes (views.h aj_views_charge).
 *
 * Ownership: rows borrow their names from the candidates and `where` from
 * the caller's buffers; each row's reason is its own. Pure: no I/O, no
 * clock.
 */
#ifndef AJ_PLACE_JUDGE_H
#define AJ_PLACE_JUDGE_H

#include <stddef.h>

#include "backend/backend.h"
#include "pipeline/candidates.h"
#include "place/rank.h"
#include "place/views.h"
#include "place/waits.h"

struct aj_errors;

/* Room for one row's place: "volcano training/default". */
#define AJ_PLACE_WHERE_MAX 128

/*
 * One row per candidate of c into rows (room for c->nr), in the user's
 * order: unranked (aj_place_rank() orders them). served[i] 0 excludes a
 * valid candidate with why_not[i] as its reason (a service the caller does
 * not serve, a candidate given up on); served may be NULL (every one).
 * ctx names the AjJob's objects. 0 / -1 (out of memory, in err).
 */
int aj_place_judge(const struct aj_views *v, const struct aj_waits *w,
		   const struct aj_candidates *c, const struct aj_build_ctx *ctx,
		   const int *served, const char *const *why_not, struct aj_place_row *rows,
		   char (*where)[AJ_PLACE_WHERE_MAX], struct aj_errors *err);

/*
 * Charge v with the job of pl (a valid candidate, ctx naming the AjJob's
 * objects) placed there: its objects built and its ask read as the judge
 * reads them, then aj_views_charge(). A job the views cannot judge (its
 * objects of no kind they know, an Azure job of another workspace) or
 * that does not fit there now charges nothing. 0 / -1 (out of memory, in
 * err).
 */
int aj_place_charge(struct aj_views *v, const struct aj_pipeline *pl,
		    const struct aj_build_ctx *ctx, struct aj_errors *err);

#endif
