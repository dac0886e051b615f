#include "failover.h"

const char *aj_failover_step_name(enum aj_failover_step s)
{
	static const char *const names[] = { "none", "cancel", "wait-gone", "keep", "place", "give-up" };

	return (unsigned)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

void aj_failover_decide(const struct aj_failover_in *in, struct aj_failover_out *out)
{
	double waited = in->now - in->submitted;

	out->again_after = 0;
	if (in->cancelling) {
		if (in->gone)
			out->step = in->left ? AJ_FAILOVER_PLACE : AJ_FAILOVER_GIVE_UP;
		else if (in->started)
			out->step = AJ_FAILOVER_KEEP;
		else {
			out->step = AJ_FAILOVER_WAIT_GONE;
			out->again_after = AJ_FAILOVER_RECHECK;
		}
		return;
	}
	/* gone without a cancel of ours is the runner's business (a lost object) */
	out->step = AJ_FAILOVER_NONE;
	if (in->started || in->gone || in->max_wait <= 0)
		return;
	if (waited < 0)
		waited = 0;   /* a clock behind the submission time waits the full time */
	if (waited >= (double)in->max_wait)
		out->step = AJ_FAILOVER_CANCEL;
	else
		out->again_after = (double)in->max_wait - waited;
}
