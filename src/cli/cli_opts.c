/*
 * cli_opts.c - option parsing shared by every command, and the template home.
 *
 * Hand-written rather than getopt_long so that parsing stops exactly at the
 * user command (which may itself start with "-" after "--"), error messages
 * name the command, and no global parser state is involved.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "core/ajjob.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/duration.h"
#include "core/error.h"
#include "core/source.h"
#include "core/suggest.h"
#include "io/source_dir.h"

/* Upper bound for -n/-p/--ppn: far above any real cluster, far below INT_MAX. */
#define AJ_CLI_MAX_COUNT 100000

struct opt_def {
	unsigned bit;
	char short_name;          /* 0: long form only */
	const char *long_name;
	int has_value;
};

static const struct opt_def opt_defs[] = {
	{ AJ_OPT_TEMPLATE, 't', "template", 1 },
	{ AJ_OPT_NODES, 'n', "nodes", 1 },
	{ AJ_OPT_PROCESSES, 'p', "processes", 1 },
	{ AJ_OPT_PPN, 0, "ppn", 1 },
	{ AJ_OPT_NAMESPACE, 0, "namespace", 1 },
	{ AJ_OPT_NAME, 0, "name", 1 },
	{ AJ_OPT_DRY_RUN, 'd', "dry-run", 0 },
	{ AJ_OPT_OUTPUT, 'o', "output", 1 },
	{ AJ_OPT_AMLT, 0, "amlt", 0 },
	{ AJ_OPT_JOBSPEC, 0, "jobspec", 0 },
	{ AJ_OPT_CONTEXT, 0, "context", 1 },
	{ AJ_OPT_KUBECONFIG, 0, "kubeconfig", 1 },
	{ AJ_OPT_WAIT, 'w', "wait", 0 },
	{ AJ_OPT_ALL_NAMESPACES, 'A', "all-namespaces", 0 },
	{ AJ_OPT_FULL, 0, "full", 0 },
	{ AJ_OPT_DIGEST, 0, "digest", 0 },
	{ AJ_OPT_QUIET, 'q', "quiet", 0 },
	{ AJ_OPT_FOLLOW, 'f', "follow", 0 },
	{ AJ_OPT_TASK, 0, "task", 1 },
	{ AJ_OPT_RANK, 0, "rank", 1 },
	{ AJ_OPT_TAIL, 0, "tail", 1 },
	{ AJ_OPT_SINCE, 0, "since", 1 },
	{ AJ_OPT_TIMESTAMPS, 0, "timestamps", 0 },
	{ AJ_OPT_PREVIOUS, 'p', "previous", 0 },
	{ AJ_OPT_PHASE, 0, "phase", 1 },
	{ AJ_OPT_SELECTOR, 'l', "selector", 1 },
	{ AJ_OPT_WATCH, 'w', "watch", 0 },
	{ AJ_OPT_ALL, 0, "all", 0 },
	{ AJ_OPT_NO_WAIT, 0, "no-wait", 0 },
	{ AJ_OPT_TTL, 0, "ttl", 1 },
};

int aj_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fputs(cmd ? "aj " : "aj", stderr);
	if (cmd)
		fputs(cmd, stderr);
	fputs(": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return AJ_EXIT_USAGE;
}

static const struct opt_def *find_long(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < sizeof(opt_defs) / sizeof(opt_defs[0]); i++)
		if (strlen(opt_defs[i].long_name) == len &&
		    !strncmp(opt_defs[i].long_name, name, len))
			return &opt_defs[i];
	return NULL;
}

/* A letter may mean one option to one command and another to the next (-p, -w). */
static const struct opt_def *find_short(char c, unsigned options)
{
	const struct opt_def *any = NULL;
	size_t i;

	for (i = 0; i < sizeof(opt_defs) / sizeof(opt_defs[0]); i++)
		if (opt_defs[i].short_name && opt_defs[i].short_name == c) {
			if (options & opt_defs[i].bit)
				return &opt_defs[i];
			if (!any)
				any = &opt_defs[i];
		}
	return any;
}

static int parse_count(const char *cmd, const char *opt, const char *s, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 1 || v > AJ_CLI_MAX_COUNT)
		return aj_cli_usage_error(cmd, "%s: expected a positive integer, got '%s'",
					  opt, s);
	*out = (int)v;
	return AJ_EXIT_OK;
}

/* A count that may be 0 (--tail, --rank). */
static int parse_index(const char *cmd, const char *opt, const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > 100000000L)
		return aj_cli_usage_error(cmd, "%s: expected a number >= 0, got '%s'", opt, s);
	*out = v;
	return AJ_EXIT_OK;
}

/* A duration as kubectl takes it: "90s", "5m", "1h30m" (units s, m, h). */
static int parse_duration(const char *cmd, const char *opt, const char *s, long *out)
{
	if (aj_duration_parse(s, out))
		return aj_cli_usage_error(cmd, "%s: expected " AJ_DURATION_HINT ", got '%s'", opt, s);
	return AJ_EXIT_OK;
}

static int parse_phase(const char *cmd, const char *opt, const char *s, const char **out)
{
	const char *near;
	size_t i;

	for (i = 0; aj_phase_names[i]; i++)
		if (!strcmp(aj_phase_names[i], s)) {
			*out = aj_phase_names[i];
			return AJ_EXIT_OK;
		}
	near = aj_suggest(s, aj_phase_names, i);
	if (near)
		return aj_cli_usage_error(cmd, "%s: unknown phase '%s': did you mean %s?", opt, s, near);
	return aj_cli_usage_error(cmd, "%s: unknown phase '%s' (Pending, Submitted, Running, "
				  "Succeeded, Failed, Cancelled, Cancelling)", opt, s);
}

static int apply(const struct aj_cli_command *cmd, const struct opt_def *d,
		 const char *spelled, const char *value, struct aj_cli_opts *o)
{
	switch (d->bit) {
	case AJ_OPT_TEMPLATE:
		o->template_name = value;
		return AJ_EXIT_OK;
	case AJ_OPT_NODES:
		/* kubectl's -n is the namespace; here it is the node count */
		if (*value && !strchr("0123456789+-", *value))
			return aj_cli_usage_error(cmd->name, "%s: expected a positive integer, got '%s' "
						  "(-n is the node count here; the namespace is "
						  "--namespace)", spelled, value);
		return parse_count(cmd->name, spelled, value, &o->shape.nodes);
	case AJ_OPT_PROCESSES:
		return parse_count(cmd->name, spelled, value, &o->shape.processes);
	case AJ_OPT_PPN:
		return parse_count(cmd->name, spelled, value,
				   &o->shape.processes_per_node);
	case AJ_OPT_NAMESPACE:
		o->namespace_ = value;
		return AJ_EXIT_OK;
	case AJ_OPT_NAME:
		o->name = value;
		return AJ_EXIT_OK;
	case AJ_OPT_DRY_RUN:
		o->dry_run = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_AMLT:
		o->amlt = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_JOBSPEC:
		o->jobspec = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_CONTEXT:
		o->context = value;
		return AJ_EXIT_OK;
	case AJ_OPT_KUBECONFIG:
		o->kubeconfig = value;
		return AJ_EXIT_OK;
	case AJ_OPT_WAIT:
		o->wait = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_ALL_NAMESPACES:
		o->all_namespaces = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_FULL:
		o->full = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_DIGEST:
		o->digest = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_QUIET:
		o->quiet = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_FOLLOW:
		o->follow = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_TASK:
		o->task = value;
		return AJ_EXIT_OK;
	case AJ_OPT_RANK:
		return parse_index(cmd->name, spelled, value, &o->rank);
	case AJ_OPT_TAIL:
		return parse_index(cmd->name, spelled, value, &o->tail);
	case AJ_OPT_SINCE:
		return parse_duration(cmd->name, spelled, value, &o->since);
	case AJ_OPT_TIMESTAMPS:
		o->timestamps = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_PREVIOUS:
		o->previous = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_PHASE:
		return parse_phase(cmd->name, spelled, value, &o->phase);
	case AJ_OPT_SELECTOR:
		o->selector = value;
		return AJ_EXIT_OK;
	case AJ_OPT_WATCH:
		o->watch = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_ALL:
		o->all = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_NO_WAIT:
		o->no_wait = 1;
		return AJ_EXIT_OK;
	case AJ_OPT_TTL:
		/* 0 keeps the job even when the controller has a default */
		if (!strcmp(value, "0")) {
			o->ttl = 0;
			return AJ_EXIT_OK;
		}
		if (parse_duration(cmd->name, spelled, value, &o->ttl))
			return AJ_EXIT_USAGE;
		if (o->ttl > AJ_AJJOB_TTL_MAX)
			return aj_cli_usage_error(cmd->name, "%s: at most %ld seconds, got '%s'",
						  spelled, AJ_AJJOB_TTL_MAX, value);
		return AJ_EXIT_OK;
	default: /* AJ_OPT_OUTPUT */
		o->format_set = 1;
		if (!strcmp(value, "yaml"))
			o->format = AJ_FORMAT_YAML;
		else if (!strcmp(value, "json"))
			o->format = AJ_FORMAT_JSON;
		else if (!strcmp(value, "wide") && (cmd->options & AJ_OPT_WIDE))
			o->format = AJ_FORMAT_WIDE;
		else
			return aj_cli_usage_error(cmd->name,
						  "%s: expected %s, got '%s'", spelled,
						  cmd->options & AJ_OPT_WIDE ?
						  "wide, yaml or json" : "yaml or json",
						  value);
		return AJ_EXIT_OK;
	}
}

/* An option this command does not take: the nearest one it does, if any. */
static int unknown_option(const struct aj_cli_command *cmd, const char *a)
{
	const char *names[sizeof(opt_defs) / sizeof(opt_defs[0])], *near;
	size_t nr = 0, i, len = strcspn(a, "=");
	char word[64];

	for (i = 0; i < sizeof(opt_defs) / sizeof(opt_defs[0]); i++)
		if (cmd->options & opt_defs[i].bit)
			names[nr++] = opt_defs[i].long_name;
	/* kubectl users type -n for the namespace; in aj, -n is run's and render's node count */
	if (a[1] == 'n' && (cmd->options & AJ_OPT_NAMESPACE))
		return aj_cli_usage_error(cmd->name, "unknown option '%s': the namespace is "
					  "--namespace NS (-n is the node count of aj run and "
					  "aj render)", a);
	if (a[1] == 'n')
		return aj_cli_usage_error(cmd->name, "unknown option '%s': aj %s takes no "
					  "namespace (-n is the node count of aj run and aj render)",
					  a, cmd->name);
	snprintf(word, sizeof(word), "%.*s", (int)len, a + strspn(a, "-"));
	near = strlen(a) > 2 ? aj_suggest(word, names, nr) : NULL;
	if (near)
		return aj_cli_usage_error(cmd->name, "unknown option '%s': did you mean --%s?",
					  a, near);
	return aj_cli_usage_error(cmd->name, "unknown option '%s' (try aj %s --help)", a, cmd->name);
}

/*
 * Parse the option at argv[*i] (which starts with "-"), consuming its value
 * from the next word when needed.
 */
static int parse_option(const struct aj_cli_command *cmd, int argc, char **argv,
			int *i, struct aj_cli_opts *o)
{
	const char *a = argv[*i], *value = NULL;
	const struct opt_def *d;
	char spelled[64];

	if (a[1] == '-') {
		const char *eq = strchr(a + 2, '=');
		size_t len = eq ? (size_t)(eq - (a + 2)) : strlen(a + 2);

		d = find_long(a + 2, len);
		if (eq)
			value = eq + 1;
	} else {
		d = find_short(a[1], cmd->options);
		if (a[2])
			value = a + 2;
	}
	if (!d || !(cmd->options & d->bit))
		return unknown_option(cmd, a);
	if (d->short_name && a[1] != '-')
		snprintf(spelled, sizeof(spelled), "-%c", d->short_name);
	else
		snprintf(spelled, sizeof(spelled), "--%s", d->long_name);
	if (!d->has_value) {
		if (value)
			return aj_cli_usage_error(cmd->name, "%s takes no value", spelled);
		return apply(cmd, d, spelled, NULL, o);
	}
	if (!value) {
		if (*i + 1 >= argc)
			return aj_cli_usage_error(cmd->name, "%s needs a value", spelled);
		value = argv[++*i];
	}
	return apply(cmd, d, spelled, value, o);
}

static int add_positional(const struct aj_cli_command *cmd, const char *a, struct aj_cli_opts *o)
{
	if (cmd->args == AJ_ARGS_JOBS) {
		if (o->nnames == AJ_CLI_MAX_NAMES)
			return aj_cli_usage_error(cmd->name, "more than %d names", AJ_CLI_MAX_NAMES);
		o->names[o->nnames++] = a;
		if (!o->arg)
			o->arg = a;
		return AJ_EXIT_OK;
	}
	if (cmd->args == AJ_ARGS_NONE || o->arg)
		return aj_cli_usage_error(cmd->name, "unexpected argument '%s'", a);
	o->arg = a;
	return AJ_EXIT_OK;
}

static void print_help(const struct aj_cli_command *cmd)
{
	fputs(cmd->usage, stdout);
}

int aj_cli_parse(const struct aj_cli_command *cmd, int argc, char **argv,
		 struct aj_cli_opts *o)
{
	int i, rc;

	memset(o, 0, sizeof(*o));
	o->format = AJ_FORMAT_YAML;
	o->rank = -1;
	o->tail = -1;
	o->ttl = -1;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			print_help(cmd);
			return -1;
		}
		if (a[0] != '-' || !a[1]) {
			if (cmd->args == AJ_ARGS_COMMAND)
				break;
			rc = add_positional(cmd, a, o);
			if (rc)
				return rc;
			continue;
		}
		rc = parse_option(cmd, argc, argv, &i, o);
		if (rc)
			return rc;
	}
	if (cmd->args == AJ_ARGS_COMMAND) {
		o->argv = (const char *const *)(argv + i);
		o->argc = (size_t)(argc - i);
	} else {
		/* Words after "--" are positional too. */
		for (; i < argc; i++)
			if ((rc = add_positional(cmd, argv[i], o)))
				return rc;
	}
	if ((cmd->args == AJ_ARGS_NAME || cmd->args == AJ_ARGS_JOB) && !o->arg)
		return aj_cli_usage_error(cmd->name, "missing %s NAME (try aj %s --help)",
					  cmd->args == AJ_ARGS_JOB ? "AjJob" : "template",
					  cmd->name);
	return AJ_EXIT_OK;
}

const char *aj_cli_home(void)
{
	const char *home = getenv("AJ_HOME");

	return home && *home ? home : ".azure_jobs";
}

int aj_cli_open_home(struct aj_source *src, struct aj_errors *err)
{
	const char *home = aj_cli_home();
	struct aj_where w = { home, 0, 0, NULL };
	struct stat st;

	if (stat(home, &st) || !S_ISDIR(st.st_mode))
		return aj_errors_add(err, &w,
				     "template home not found (set AJ_HOME, or run aj where .azure_jobs/ is)");
	return aj_source_dir_init(src, home, home, err);
}

/* any_dir: a name with a slash is a path below the home, not below template/. */
static char *canonical(const char *cmd, const char *name, int any_dir)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	int in_template = 1;
	size_t len;
	char *out;

	if (!strncmp(name, "template/", 9))
		name += 9;
	else if (any_dir && strchr(name, '/'))
		in_template = 0;
	len = strlen(name);
	if (len > 5 && !strcmp(name + len - 5, ".yaml"))
		len -= 5;
	if (in_template)
		aj_buf_addstr(&b, "template/");
	aj_buf_add(&b, name, len);
	if (b.failed) {
		aj_cli_usage_error(cmd, "out of memory");
		return NULL;
	}
	if (!len || (in_template && memchr(name, '/', len)) || !aj_canonical_valid(aj_buf_cstr(&b))) {
		aj_buf_release(&b);
		aj_cli_usage_error(cmd, "invalid template name '%s'", name);
		return NULL;
	}
	out = aj_buf_detach(&b, NULL);
	if (!out)
		aj_cli_usage_error(cmd, "out of memory");
	return out;
}

char *aj_cli_template_canonical(const char *cmd, const char *name)
{
	return canonical(cmd, name, 0);
}

char *aj_cli_file_canonical(const char *cmd, const char *name)
{
	return canonical(cmd, name, 1);
}
