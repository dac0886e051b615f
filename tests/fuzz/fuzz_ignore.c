/*
 * Ignore patterns against paths. The input is pattern text (gitignore
 * format), a line "--", then one path per line. Each path is checked as a
 * file and as a directory, with and without its parents. A rule handed back
 * must belong to the set; matching a path twice gives the same rule.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "code/ignore.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int owned(const struct aj_ignore *ig, const struct aj_ignore_rule *r)
{
	return !r || (r >= ig->rules && r < ig->rules + ig->nr);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data, *end = p + size, *sep = NULL, *q;
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf origin = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i;

	aj_alloc_hook_cjson();
	for (q = p; q + 4 <= end; q++)
		if (!memcmp(q, "\n--\n", 4)) {
			sep = q;
			break;
		}
	aj_ignore_init(&ig);
	if (aj_ignore_add_text(&ig, p, (size_t)((sep ? sep : end) - p), ".codeignore", &err)) {
		if (aj_errors_empty(&err))
			abort();
		goto out;
	}
	for (i = 0; i < ig.nr; i++)
		if (aj_ignore_rule_origin(&ig.rules[i], &origin))
			goto out;
	if (!sep)
		goto out;
	for (p = sep + 4; p < end; p = q + 1) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t len;
		int dir;

		q = nl ? nl : end;
		len = (size_t)(q - p);
		for (dir = 0; dir < 2; dir++) {
			const struct aj_ignore_rule *a = aj_ignore_match(&ig, p, len, dir);
			const struct aj_ignore_rule *b = aj_ignore_check(&ig, p, len, dir);

			if (!owned(&ig, a) || !owned(&ig, b) ||
			    a != aj_ignore_match(&ig, p, len, dir))
				abort();
			(void)aj_ignore_excludes(b);
		}
	}
out:
	aj_buf_release(&origin);
	aj_ignore_release(&ig);
	aj_errors_release(&err);
	return 0;
}
