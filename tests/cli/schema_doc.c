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

/* The _extra parts of every row, each once, in the table's order. */
static int add_parts(struct aj_buf *out)
{
	const struct aj_backend *const *all = aj_backend_all();
	const struct aj_schema *done[PARTS_MAX];
	size_t nr = 0, i, j, k;
	struct aj_buf tasks = AJ_BUF_INIT(AJ_BUF_SMALL);

	for (i = 0; all[i]; i++) {
		for (j = 0; all[i]->extra && all[i]->extra[j]; j++) {
			const struct aj_schema *s = all[i]->extra[j];
			const char *key = all[i]->tasks_key;
			size_t len = strlen(s->root) - strlen(EXTRA);

			for (k = 0; k < nr && done[k] != s; k++)
				;
			if (k < nr)
				continue;
			if (nr == PARTS_MAX || aj_schema_markdown(s, NULL, out))
				return -1;
			done[nr++] = s;
			/* the tasks are read below this part: their keys follow it */
			if (key && !strncmp(key, s->root + strlen(EXTRA), len) && key[len] == '.') {
				aj_buf_reset(&tasks);
				if (aj_buf_addf(&tasks, EXTRA "%s.<name>", key) ||
				    aj_schema_markdown(&aj_schema_task, aj_buf_cstr(&tasks), out))
					return -1;
			}
		}
	}
	aj_buf_release(&tasks);
	return 0;
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
