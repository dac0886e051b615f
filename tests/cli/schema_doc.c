/*
 * schema_doc: with no argument, print the template key reference: the
 * config's keys (src/core/schema.c), then the parts of _extra each backend
 * row lists, each once, a backend's heterogeneous tasks below their key;
 * with a Markdown file, check that the file
 * holds exactly that table between its "<!-- keys:begin -->" and
 * "<!-- keys:end -->" lines (exit 1 and the expected table otherwise).
 */
#include <stdio.h>
#include <string.h>

#include "backend/backend.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/schema.h"

#define BEGIN "<!-- keys:begin -->\n"
#define END "<!-- keys:end -->\n"
#define EXTRA "_extra."
#define PARTS_MAX 16

/*
 * The _extra parts of every row, each once, in the table's order; a row's
 * heterogeneous tasks below the part that holds them.
 */
static int add_parts(struct aj_buf *out)
{
	const struct aj_backend *const *all = aj_backend_all();
	const struct aj_schema *parts[PARTS_MAX];
	size_t nr = aj_backend_extra_parts(parts, PARTS_MAX), i, j;
	struct aj_buf tasks = AJ_BUF_INIT(AJ_BUF_SMALL);
	int rc = nr > PARTS_MAX ? -1 : 0;

	for (i = 0; !rc && i < nr; i++) {
		const char *part = parts[i]->root + strlen(EXTRA);
		size_t len = strlen(part);

		rc = aj_schema_markdown(parts[i], NULL, out);
		for (j = 0; !rc && all[j]; j++) {
			const char *key = all[j]->tasks_key;

			if (!key || strncmp(key, part, len) || key[len] != '.')
				continue;
			aj_buf_reset(&tasks);
			rc = aj_buf_addf(&tasks, EXTRA "%s.<name>", key) ||
			     aj_schema_markdown(&aj_schema_task, aj_buf_cstr(&tasks), out);
			break;
		}
	}
	aj_buf_release(&tasks);
	return rc;
}

int main(int argc, char **argv)
{
	struct aj_buf table = AJ_BUF_INIT(AJ_BUF_SMALL), doc = AJ_BUF_INIT(AJ_BUF_LARGE);
	char chunk[4096];
	const char *begin, *end;
	size_t n;
	FILE *f;
	int ok;

	if (aj_buf_addstr(&table, AJ_SCHEMA_MARKDOWN_HEAD) ||
	    aj_schema_markdown(&aj_schema_config, NULL, &table) || add_parts(&table))
		return 2;
	if (argc < 2) {
		fputs(aj_buf_cstr(&table), stdout);
		return 0;
	}
	f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		aj_buf_add(&doc, chunk, n);
	fclose(f);
	begin = strstr(aj_buf_cstr(&doc), BEGIN);
	end = begin ? strstr(begin, END) : NULL;
	ok = begin && end && (size_t)(end - begin) == strlen(BEGIN) + table.len &&
	     !memcmp(begin + strlen(BEGIN), aj_buf_cstr(&table), table.len);
	if (!ok)
		fprintf(stderr, "%s: the key reference between %.*s and %.*s differs from "
			"the key tables; it should read:\n%s", argv[1], (int)strlen(BEGIN) - 1,
			BEGIN, (int)strlen(END) - 1, END, aj_buf_cstr(&table));
	aj_buf_release(&table);
	aj_buf_release(&doc);
	return ok ? 0 : 1;
}
