/*
 * cli_template.c - `aj template list|show|validate`: look at the templates
 * under <home>/template/ without submitting anything.
 *
 * A file there with a `base` key is a leaf template; one without is a
 * component other templates reuse, and validate accepts it as it is.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/json.h"
#include "core/node.h"
#include "core/resolve.h"
#include "core/source.h"
#include "core/strlist.h"
#include "core/placement.h"
#include "pipeline/candidates.h"
#include "pipeline/pipeline.h"

#define TEMPLATE_PREFIX "template/"

/* The canonical names of every file in <home>/template/, sorted. */
static int list_templates(struct aj_source *src, struct aj_strlist *out,
			  struct aj_errors *err)
{
	struct aj_where w = { aj_cli_home(), 0, 0, NULL };

	if (!src->ops->list)
		return aj_errors_add(err, &w, "this template source cannot be listed");
	if (src->ops->list(src->ctx, "template", out, err))
		return -1;
	if (!out->nr)
		return aj_errors_add(err, &w, "no templates found in template/");
	return 0;
}

static const char *short_name(const char *canonical)
{
	size_t n = strlen(TEMPLATE_PREFIX);

	return strncmp(canonical, TEMPLATE_PREFIX, n) ? canonical : canonical + n;
}

/* First job's `sku`, or NULL. */
static const struct aj_node *first_sku(const struct aj_node *config)
{
	const struct aj_node *jobs = aj_node_get(config, "jobs");

	if (!jobs || jobs->type != AJ_NODE_SEQ || !jobs->nr)
		return NULL;
	return aj_node_get(jobs->items[0], "sku");
}

/* A range mapping shows only its ranges: "range{1,2-4,8+}". */
static void describe_sku(const struct aj_node *sku, struct aj_buf *out)
{
	size_t i;

	if (!sku || sku->type == AJ_NODE_NULL) {
		aj_buf_addstr(out, "-");
	} else if (sku->type == AJ_NODE_MAP) {
		aj_buf_addstr(out, "range{");
		for (i = 0; i < sku->nr; i++)
			aj_buf_addf(out, "%s%s", i ? "," : "", sku->pairs[i].key);
		aj_buf_addch(out, '}');
	} else if (aj_node_is_scalar(sku)) {
		aj_buf_addstr(out, sku->str);
	} else {
		aj_buf_addstr(out, "?");
	}
}

static void join_bases(const struct aj_template *t, const char *sep,
		       struct aj_buf *out)
{
	size_t i;

	for (i = 0; i < t->bases.nr; i++)
		aj_buf_addf(out, "%s%s", i ? sep : "", t->bases.items[i]);
}

/* Move the buffer's text into the next cell. 0, or -1 (recorded). */
static int add_cell(struct aj_strlist *cells, struct aj_buf *b, struct aj_errors *err)
{
	return aj_strlist_add_owned(cells, aj_buf_detach(b, NULL)) ? aj_errors_oom(err) : 0;
}

/*
 * The direct bases of a leaf that did not resolve, read from its own tree
 * when it was read and its `base` is well formed (the problem then lies
 * further up the chain); 0, or -1 when they cannot be known. The resolution
 * has reported why.
 */
static int bases_as_written(struct aj_template *t)
{
	struct aj_errors ignored = AJ_ERRORS_INIT;
	int present, rc;

	if (!t->files.nr || !t->docs[0])
		return -1;
	rc = aj_template_bases(t->docs[0], t->files.items[0], &t->bases, &present, &ignored);
	aj_errors_release(&ignored);
	return rc;
}

/*
 * The cells of one `template list` row, appended to cells. A file that
 * does not resolve is `error` in STATUS, `?` where a value cannot be known.
 */
static int list_row(struct aj_source *src, const char *name,
		    struct aj_strlist *cells, struct aj_errors *err)
{
	struct aj_template t;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	const struct aj_node *service = NULL;
	int invalid, unknown_bases = 0, rc;

	aj_template_init(&t);
	invalid = aj_template_resolve(src, name, &t, err);
	if (!invalid)
		service = aj_node_at(t.config, "target.service");
	else
		unknown_bases = bases_as_written(&t);

	aj_buf_addstr(&b, short_name(name));
	rc = add_cell(cells, &b, err);
	if (unknown_bases || !t.bases.nr)
		aj_buf_addstr(&b, unknown_bases ? "?" : "-");
	else
		join_bases(&t, ",", &b);
	rc |= add_cell(cells, &b, err);
	if (invalid)
		aj_buf_addstr(&b, "?");
	else if (aj_placement_declared(t.config))
		aj_buf_addstr(&b, "placement");
	else if (service && service->type == AJ_NODE_STRING)
		aj_buf_addstr(&b, service->str);
	else
		aj_buf_addstr(&b, "-");
	rc |= add_cell(cells, &b, err);
	if (invalid)
		aj_buf_addstr(&b, "?");
	else
		describe_sku(first_sku(t.config), &b);
	rc |= add_cell(cells, &b, err);
	aj_buf_addstr(&b, invalid ? "error" : "ok");
	rc |= add_cell(cells, &b, err);

	aj_buf_release(&b);
	aj_template_release(&t);
	return invalid || rc ? -1 : 0;
}

#define LIST_COLUMNS 5

/* Columns are padded to their widest cell; the last one is not padded. */
static void print_cell(size_t column, size_t width, const char *text)
{
	if (column + 1 < LIST_COLUMNS)
		printf("%-*s  ", (int)width, text);
	else
		printf("%s\n", text);
}

static void print_table(const struct aj_strlist *cells)
{
	static const char *const header[LIST_COLUMNS] = {
		"NAME", "BASES", "SERVICE", "SKU", "STATUS"
	};
	size_t width[LIST_COLUMNS], i, c;

	for (c = 0; c < LIST_COLUMNS; c++)
		width[c] = strlen(header[c]);
	for (i = 0; i < cells->nr; i++) {
		size_t len = strlen(cells->items[i]);

		if (len > width[i % LIST_COLUMNS])
			width[i % LIST_COLUMNS] = len;
	}
	for (c = 0; c < LIST_COLUMNS; c++)
		print_cell(c, width[c], header[c]);
	for (i = 0; i < cells->nr; i++)
		print_cell(i % LIST_COLUMNS, width[i % LIST_COLUMNS], cells->items[i]);
}

static int template_list(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_source src = { NULL, NULL };
	struct aj_strlist names = AJ_STRLIST_INIT, cells = AJ_STRLIST_INIT;
	size_t i;
	int failed = 0;

	(void)o;
	if (aj_cli_open_home(&src, &err) || list_templates(&src, &names, &err)) {
		failed = 1;
	} else {
		for (i = 0; i < names.nr; i++)
			if (list_row(&src, names.items[i], &cells, &err))
				failed = 1;
		if (cells.nr == names.nr * LIST_COLUMNS) {
			print_table(&cells);
			if (aj_cli_write(NULL, 0, &err))
				failed = 1;
		}
	}
	aj_cli_print_errors(&err);
	aj_strlist_release(&cells);
	aj_strlist_release(&names);
	aj_source_release(&src);
	aj_errors_release(&err);
	return failed ? AJ_EXIT_FAIL : AJ_EXIT_OK;
}

static int show(const struct aj_template *t, enum aj_cli_format format,
		struct aj_errors *err)
{
	struct aj_buf head = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *doc;
	int rc;

	/* The chain is a YAML comment, so the output still parses as the config. */
	if (format == AJ_FORMAT_YAML && t->bases.nr) {
		aj_buf_addstr(&head, "# inheritance: ");
		join_bases(t, " -> ", &head);
		aj_buf_addf(&head, " -> %s\n", short_name(t->name));
		if (head.failed)
			return aj_errors_oom(err);
	}
	doc = aj_node_to_cjson(t->config);
	if (!doc) {
		aj_buf_release(&head);
		return aj_errors_oom(err);
	}
	rc = aj_cli_write(aj_buf_cstr(&head), head.len, err);
	if (!rc)
		rc = aj_cli_print_doc(doc, format, err);
	cJSON_Delete(doc);
	aj_buf_release(&head);
	return rc;
}

static int template_show(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_source src = { NULL, NULL };
	struct aj_template t;
	char *name = aj_cli_template_canonical(aj_cli_template_show.name, o->arg);
	int rc;

	if (!name)
		return AJ_EXIT_USAGE;
	aj_template_init(&t);
	rc = aj_cli_open_home(&src, &err) || aj_template_resolve(&src, name, &t, &err) ||
	     show(&t, o->format, &err);
	aj_cli_print_errors(&err);
	aj_template_release(&t);
	aj_source_release(&src);
	aj_errors_release(&err);
	aj_free(name);
	return rc ? AJ_EXIT_FAIL : AJ_EXIT_OK;
}

/*
 * A placement leaf: each candidate as a leaf of its own. One left out is a
 * warning, as it is when the job is placed; none valid is the error.
 */
static int validate_candidates(const struct aj_pipeline_in *in, const struct aj_template *leaf,
			       struct aj_errors *err)
{
	struct aj_candidates c;
	size_t i;
	int rc;

	aj_candidates_init(&c);
	rc = aj_candidates_load(in, leaf, &c, err);
	for (i = 0; !rc && i < c.nr; i++)
		if (!c.items[i].ok)
			aj_cli_print_warnings("template validate", c.items[i].name, &c.items[i].why);
	aj_candidates_release(&c);
	return rc;
}

/*
 * A leaf gets the whole pipeline short of building: conversion to a JobSpec
 * and the backend's own checks. Without shape arguments the conversion
 * leaves the job shape and the SKU unresolved, so nothing here depends on a
 * command line. A component has its keys checked where any leaf would
 * merge it: at config (aj_pipeline_check_keys).
 */
static int validate_one(struct aj_source *src, const char *name,
			struct aj_errors *err)
{
	struct aj_errors mine = AJ_ERRORS_INIT;
	struct aj_pipeline_in in = { src, name, NULL, NULL, 0, NULL, NULL, NULL };
	struct aj_pipeline pl;
	int rc;

	aj_pipeline_init(&pl);
	rc = aj_pipeline_resolve(&in, &pl, &mine);
	if (!rc && aj_placement_declared(pl.tpl.config))
		rc = validate_candidates(&in, &pl.tpl, &mine);
	else if (!rc)
		rc = pl.tpl.has_base ? aj_pipeline_load(&in, &pl, &mine) :
			aj_pipeline_check_keys(&pl.tpl, &mine);
	aj_errors_splice(err, &mine);
	aj_pipeline_release(&pl);
	return rc;
}

/* The templates to validate: `one` if given, else all of them. */
static int validate_names(struct aj_source *src, const char *one,
			  struct aj_strlist *names, struct aj_errors *err)
{
	if (!one)
		return list_templates(src, names, err);
	return aj_strlist_add(names, one) ? aj_errors_oom(err) : 0;
}

static int template_validate(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_source src = { NULL, NULL };
	struct aj_strlist names = AJ_STRLIST_INIT;
	struct aj_buf bad = AJ_BUF_INIT(AJ_BUF_SMALL);
	size_t i, valid = 0, invalid = 0;
	char *one = NULL;
	int rc = AJ_EXIT_OK;

	if (o->arg) {
		one = aj_cli_file_canonical(aj_cli_template_validate.name, o->arg);
		if (!one)
			return AJ_EXIT_USAGE;
	}
	if (aj_cli_open_home(&src, &err) || validate_names(&src, one, &names, &err)) {
		rc = AJ_EXIT_FAIL;
		goto out;
	}
	for (i = 0; i < names.nr; i++) {
		if (!validate_one(&src, names.items[i], &err)) {
			valid++;
			continue;
		}
		aj_buf_addf(&bad, "%s%s", invalid++ ? ", " : "",
			    short_name(names.items[i]));
	}
	printf("%zu template(s) valid\n", valid);
	if (invalid) {
		printf("%zu template(s) invalid: %s\n", invalid, aj_buf_cstr(&bad));
		rc = AJ_EXIT_FAIL;
	}
	if (aj_cli_write(NULL, 0, &err))
		rc = AJ_EXIT_FAIL;
out:
	aj_cli_print_errors(&err);
	aj_buf_release(&bad);
	aj_strlist_release(&names);
	aj_source_release(&src);
	aj_errors_release(&err);
	aj_free(one);
	return rc;
}

const struct aj_cli_command aj_cli_template_list = {
	"template list",
	"list the templates: name, bases, service, SKU, status",
	"usage: aj template list\n"
	"\n"
	"One row per file in <home>/template/: its name, its direct bases as\n"
	"written, the resolved target.service, the first job's SKU (a range\n"
	"mapping shows its ranges, e.g. range{1,2-4,8+}) and STATUS: ok, or\n"
	"error for a file that does not resolve (inheritance, YAML, file shape;\n"
	"`aj template validate` checks more). Such a row shows ? for what cannot\n"
	"be known, its errors are printed on stderr as FILE:LINE:COLUMN: MESSAGE\n"
	"and the exit status is 1; the other rows are listed as usual.\n",
	0,
	AJ_ARGS_NONE,
	template_list
};

const struct aj_cli_command aj_cli_template_show = {
	"template show",
	"print a template's resolved config",
	"usage: aj template show [-o yaml|json] NAME\n"
	"\n"
	"Resolve NAME (template/NAME.yaml) through its bases and print the merged\n"
	"config, _extra included, keys in first-seen order. The YAML output starts\n"
	"with a comment naming the direct bases; the JSON output is the config only.\n"
	"\n"
	"  -o, --output FORMAT   yaml (default) or json\n",
	AJ_OPT_OUTPUT,
	AJ_ARGS_NAME,
	template_show
};

const struct aj_cli_command aj_cli_template_validate = {
	"template validate",
	"check every template (or one) without contacting anything",
	"usage: aj template validate [NAME]\n"
	"\n"
	"Check the templates in <home>/template/, or only NAME (a file elsewhere\n"
	"in the home by its path: storage/default). A file with a `base` key is a\n"
	"leaf: its inheritance must resolve, and its config must convert to a job\n"
	"spec that its backend accepts. Checks that need -n or -p are left to run\n"
	"and render. A file without `base` is a component: it must parse, and its\n"
	"whole tree must hold known keys where a leaf merges it (config, _extra\n"
	"parts included). Nothing live (clusters, quota, permissions) is checked.\n"
	"\n"
	"Prints \"N template(s) valid\", then the invalid ones; each problem goes\n"
	"to stderr as FILE:LINE:COLUMN: KEY: MESSAGE. Exit status 1 if any failed.\n",
	0,
	AJ_ARGS_OPTIONAL_NAME,
	template_validate
};
