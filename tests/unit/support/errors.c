#include "support.h"

#include <stdio.h>
#include <string.h>

#include "core/buf.h"
#include "core/error.h"

const char *aj_test_errors_text(const struct aj_errors *e)
{
	static char text[8192];
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	aj_errors_format_all(e, &b);
	snprintf(text, sizeof(text), "%s", aj_buf_cstr(&b));
	aj_buf_release(&b);
	return text;
}

int aj_test_errors_contain(const struct aj_errors *e, const char *fragment)
{
	size_t i;
	int found = 0;

	for (i = 0; i < aj_errors_count(e) && !found; i++) {
		struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

		aj_errors_format(e, i, &b);
		found = strstr(aj_buf_cstr(&b), fragment) != NULL;
		aj_buf_release(&b);
	}
	return found;
}
