/*
 * schema_doc: with no argument, print the template key reference that
 * src/core/schema.c declares; with a Markdown file, check that the file
 * holds exactly that table between its "<!-- keys:begin -->" and
 * "<!-- keys:end -->" lines (exit 1 and the expected table otherwise).
 */
#include <stdio.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/schema.h"

#define BEGIN "<!-- keys:begin -->\n"
#define END "<!-- keys:end -->\n"

int main(int argc, char **argv)
{
	struct aj_buf table = AJ_BUF_INIT(AJ_BUF_SMALL), doc = AJ_BUF_INIT(AJ_BUF_LARGE);
	char chunk[4096];
	const char *begin, *end;
	size_t n;
	FILE *f;
	int ok;

	if (aj_schema_markdown(&table))
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
			"src/core/schema.c; it should read:\n%s", argv[1], (int)strlen(BEGIN) - 1,
			BEGIN, (int)strlen(END) - 1, END, aj_buf_cstr(&table));
	aj_buf_release(&table);
	aj_buf_release(&doc);
	return ok ? 0 : 1;
}
