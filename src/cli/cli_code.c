/*
 * cli_code.c - the code archive of the current directory as the offline
 * commands see it: `aj code stats` (what a submission from here would ship)
 * and the digest that render --digest and run --dry-run show.
 *
 * The template gives code.ignore; the rest (built-ins, .codeignore or
 * .amltignore, the walk and the archive) is src/code/ on the current
 * directory, exactly as a submission uses it.
 */
#include <string.h>

#include "backend/codeship.h"
#include "cli.h"
#include "code/archive.h"
#include "code/ignore.h"
#include "code/stats.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/source.h"
#include "pipeline/pipeline.h"

/* How many of the largest files and directories are listed. */
#define TOP 10

/* Writes the archive to a file (fd -1: nowhere) and shows how far the walk got. */
struct file_sink {
	int fd;
	const struct aj_archive_result *res;   /* counted as the archive is written */
	struct aj_cli_progress progress;
};

static int sink_file(void *data, const void *buf, size_t len, struct aj_errors *err)
{
	struct file_sink *s = data;

	aj_cli_progress_update(&s->progress, s->res->files, s->res->content_bytes);
	return s->fd < 0 ? 0 : aj_archive_sink_fd(&s->fd, buf, len, err);
}

int aj_cli_code_archive(const struct aj_jobspec *spec, int fd, struct aj_archive_result *res,
			struct aj_errors *err)
{
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct file_sink sink;
	int rc;

	/* the sink reads the counts while the archive fills them in */
	memset(res, 0, sizeof(*res));
	sink.fd = fd;
	sink.res = res;
	aj_cli_progress_start(&sink.progress, "archiving the code", 0);
	rc = aj_ignore_setup(&ig, ".", &spec->code.ignore, err) ||
	     aj_archive_create(".", &ig, 0, sink_file, &sink, res, err);
	aj_cli_progress_end(&sink.progress);
	aj_ignore_release(&ig);
	return rc ? -1 : 0;
}

int aj_cli_code_digest(struct aj_pipeline *pl, struct aj_errors *err)
{
	struct aj_archive_result res;

	return aj_cli_code_archive(&pl->spec, -1, &res, err) ||
	       aj_pipeline_set_code(pl, res.sha256_hex, err) ? -1 : 0;
}

/* A problem that leaves config.code unread (the key itself, config not a map, memory). */
static int about_code(const struct aj_errors *problems)
{
	const char *path;
	size_t i, len = strlen("config.code");

	if (problems->oom)
		return 1;
	for (i = 0; i < problems->nr; i++) {
		path = problems->items[i].path;
		if (path && (!strcmp(path, "config") ||
			     (!strncmp(path, "config.code", len) && strchr(".[", path[len]))))
			return 1;
	}
	return 0;
}

/*
 * Resolve and load the template. The stats need only its code part: the
 * rest of a template not finished yet (an image, a shape) is said as a
 * warning, and only a template that does not resolve or whose code part is
 * wrong fails. 0 / -1.
 */
static int stats_load(struct aj_pipeline_in *in, struct aj_pipeline *pl, struct aj_errors *err)
{
	struct aj_errors problems = AJ_ERRORS_INIT;

	if (aj_pipeline_resolve(in, pl, err))
		return -1;
	if (!aj_pipeline_load(in, pl, &problems)) {
		aj_errors_release(&problems);
		return 0;
	}
	if (about_code(&problems)) {
		aj_errors_splice(err, &problems);
		aj_errors_release(&problems);
		return -1;
	}
	aj_cli_print_warnings(aj_cli_code_stats.name, "the template is not complete elsewhere "
			      "(these stats need only its code part)", &problems);
	aj_errors_release(&problems);
	return 0;
}

static int stats_run(const struct aj_cli_opts *o, const char *canonical,
		     struct aj_errors *err)
{
	struct aj_source src;
	struct aj_pipeline pl;
	struct aj_pipeline_in in = { &src, canonical, &o->shape, NULL, 0, NULL, NULL, NULL };
	struct aj_ignore ig = AJ_IGNORE_INIT;
	struct aj_code_stats st;
	struct aj_buf out = AJ_BUF_INIT(AJ_BUF_LARGE);
	int rc;

	memset(&src, 0, sizeof(src));
	memset(&st, 0, sizeof(st));
	aj_pipeline_init(&pl);
	rc = aj_cli_open_home(&src, err) || stats_load(&in, &pl, err) ||
	     aj_ignore_setup(&ig, ".", &pl.spec.code.ignore, err) ||
	     aj_code_stats_collect(".", &ig, TOP, 1, AJ_ARCHIVE_LEVEL_DEFAULT, &st, err) ||
	     aj_code_stats_format(&st, &out) ||
	     aj_cli_write(aj_buf_cstr(&out), out.len, err);
	if (rc && out.failed)
		aj_errors_oom(err);
	aj_buf_release(&out);
	aj_code_stats_release(&st);
	aj_ignore_release(&ig);
	aj_pipeline_release(&pl);
	aj_source_release(&src);
	return rc ? -1 : 0;
}

static int stats(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	char *canonical;
	int rc;

	if (!o->template_name)
		return aj_cli_usage_error(aj_cli_code_stats.name,
					  "no template: use -t NAME (try aj code stats --help)");
	canonical = aj_cli_template_canonical(aj_cli_code_stats.name, o->template_name);
	if (!canonical)
		return AJ_EXIT_USAGE;
	rc = stats_run(o, canonical, &err);
	aj_cli_print_errors(&err);
	aj_errors_release(&err);
	aj_free(canonical);
	return rc ? AJ_EXIT_FAIL : AJ_EXIT_OK;
}

const struct aj_cli_command aj_cli_code_stats = {
	"code stats",
	"show what a submission would ship from here",
	"usage: aj code stats -t NAME\n"
	"\n"
	"Walk the current directory with the ignore rules a submission uses\n"
	"(built-ins, the template's code.ignore, then .codeignore or\n"
	".amltignore) and print the files and bytes shipped, those left out by\n"
	"each rule, skipped special files, the largest files and directories,\n"
	"and the size and SHA-256 of the code archive.\n"
	"\n"
	"  -t, --template NAME   the template (<home>/template/NAME.yaml)\n",
	AJ_OPT_TEMPLATE,
	AJ_ARGS_NONE,
	stats
};
