/*
 * cli_name.c - the random part of the names aj gives what it creates (an
 * AjJob of `aj run`, the helper pod of `aj code upload`), so that repeated
 * runs do not collide.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "core/buf.h"
#include "core/error.h"

int aj_cli_name_suffix(struct aj_buf *b, struct aj_errors *err)
{
	static const char alphabet[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	unsigned char rnd[AJ_CLI_NAME_SUFFIX_LEN];
	size_t i;

	if (getentropy(rnd, sizeof(rnd)))
		return aj_errors_add(err, NULL, "cannot read random bytes: %s", strerror(errno));
	aj_buf_addch(b, '-');
	for (i = 0; i < sizeof(rnd); i++)
		aj_buf_addch(b, alphabet[rnd[i] % (sizeof(alphabet) - 1)]);
	return 0;
}
