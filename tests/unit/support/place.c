/* Placement helpers of support.h. */
#include "support.h"

#include <string.h>

#include "place/fit.h"

void aj_test_fit_check(const struct aj_fit_result *got, int state, const char *reason,
		       const char *what)
{
	if ((int)got->state != state || strcmp(got->reason, reason))
		fail_msg("%s: got %s \"%s\", want %s \"%s\"", what, aj_place_state_name(got->state),
			 got->reason, aj_place_state_name((enum aj_place_state)state), reason);
}
