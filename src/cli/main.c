/*
 * main.c - `aj` and `aj-net`: find the command, parse its options, run it
 * (a network command through aj_cli_network(), see cli.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "core/alloc.h"

#ifndef AJ_VERSION
#define AJ_VERSION "0.0.0"
#endif

static const struct aj_cli_command *const top_commands[] = {
	&aj_cli_run,
	&aj_cli_render,
	&aj_cli_place,
	&aj_cli_list,
	&aj_cli_status,
	&aj_cli_cancel,
	&aj_cli_logs,
	&aj_cli_delete,
	NULL
};

/*
 * Commands named "<group> <subcommand>". A group is the first word of its
 * commands' names; `aj GROUP` alone, `aj GROUP --help` and an unknown
 * subcommand all list the group's subcommands from this table.
 */
static const struct aj_cli_command *const group_commands[] = {
	&aj_cli_template_list,
	&aj_cli_template_show,
	&aj_cli_template_validate,
	&aj_cli_code_stats,
	&aj_cli_code_upload_cmd,
	/* they talk to Azure (cli_azure.c) */
	&aj_cli_quota_list,
	&aj_cli_sku_list,
	&aj_cli_image_list,
	NULL
};

/* What each group is for, in `aj GROUP --help`. */
static const struct {
	const char *name;
	const char *about;
} groups[] = {
	{ "template", "Inspect and check the templates under <home>/template/." },
	{ "code", "The code a job takes along: what would be shipped, and shipping it." },
	{ "quota", "Singularity quota of the virtual clusters." },
	{ "sku", "Singularity SKUs the virtual clusters have quota for." },
	{ "image", "Singularity curated images." },
};

static void print_commands(FILE *f, const struct aj_cli_command *const *cmds)
{
	size_t i;

	for (i = 0; cmds[i]; i++)
		fprintf(f, "  aj %-18s %s\n", cmds[i]->name, cmds[i]->summary);
}

static void print_usage(FILE *f)
{
	fputs("usage: aj [--version] [--help] COMMAND [OPTIONS] [ARGS]\n"
	      "\n"
	      "Describe ML training jobs once as YAML templates and run them on\n"
	      "Kubernetes with Volcano, Azure ML or Singularity.\n"
	      "\n"
	      "Commands:\n", f);
	print_commands(f, top_commands);
	print_commands(f, group_commands);
	fputs("\n"
	      "Templates are read from $AJ_HOME, or .azure_jobs in the current\n"
	      "directory. The cluster is the kubeconfig's (--kubeconfig, else\n"
	      "$KUBECONFIG, else ~/.kube/config). Run `aj COMMAND --help` for a\n"
	      "command's options.\n"
	      "\n"
	      "Environment:\n"
	      "  AJ_HOME                 the template home (else ./.azure_jobs)\n"
	      "  KUBECONFIG              kubeconfig files, ':'-separated (in a pod:\n"
	      "                          KUBERNETES_SERVICE_HOST/_PORT and its token)\n"
	      "  AJ_AZURE_WORKSPACE      SUBSCRIPTION/RESOURCE_GROUP/WORKSPACE that aml and\n"
	      "                          sing jobs send their code to\n"
	      "  AJ_AZURE_ARM_ENDPOINT   Azure Resource Manager (else the public cloud)\n"
	      "  AJ_AZURE_BLOB_ENDPOINT  blob endpoint with {account} for the account\n"
	      "  AJ_AZURE_CA_FILE        CA bundle trusted for Azure (emulators, proxies)\n"
	      "  AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_CLIENT_SECRET,\n"
	      "  AZURE_FEDERATED_TOKEN_FILE, AZURE_AUTHORITY_HOST\n"
	      "                          the Azure credential (else managed identity,\n"
	      "                          else `az login`)\n"
	      "  AJ_CODE_HELPER_TIMEOUT  seconds aj code upload waits for its pod (300)\n"
	      "  AJ_EXEC_PATH            where aj finds aj-net\n"
	      "\n"
	      "Exit status: 0 success, 1 failure, 2 usage error; aj run --follow, aj\n"
	      "status --wait: 1 also when the job failed; 130 after Ctrl-C.\n", f);
}

/* The command whose name, after `prefix`, is `word`. */
static const struct aj_cli_command *find_command(const struct aj_cli_command *const *cmds,
						 const char *prefix, const char *word)
{
	size_t i, plen = strlen(prefix);

	for (i = 0; cmds[i]; i++)
		if (!strncmp(cmds[i]->name, prefix, plen) &&
		    !strcmp(cmds[i]->name + plen, word))
			return cmds[i];
	return NULL;
}

static int is_help(const char *a)
{
	return !strcmp(a, "--help") || !strcmp(a, "-h") || !strcmp(a, "help");
}

/* The group named word, or NULL. */
static const char *group_about(const char *word)
{
	size_t i;

	for (i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (!strcmp(groups[i].name, word))
			return groups[i].about;
	return NULL;
}

static void print_group_usage(FILE *f, const char *group, const char *about)
{
	size_t i, len = strlen(group);

	fprintf(f, "usage: aj %s SUBCOMMAND [OPTIONS] [ARGS]\n\n%s\n\n", group, about);
	for (i = 0; group_commands[i]; i++)
		if (!strncmp(group_commands[i]->name, group, len) &&
		    group_commands[i]->name[len] == ' ')
			fprintf(f, "  aj %-18s %s\n", group_commands[i]->name,
				group_commands[i]->summary);
}

/* The group's subcommands as "list, show, validate" into out. */
static void group_subcommands(const char *group, char *out, size_t size)
{
	size_t i, len = strlen(group), used = 0;

	out[0] = '\0';
	for (i = 0; group_commands[i] && used < size; i++) {
		const char *name = group_commands[i]->name;
		int n;

		if (strncmp(name, group, len) || name[len] != ' ')
			continue;
		n = snprintf(out + used, size - used, "%s%s", used ? ", " : "", name + len + 1);
		if (n < 0)
			break;
		used += (size_t)n;
	}
}

/* Run cmd on the words after its name, words[skip..]; words is all of argv. */
static int run_command(const struct aj_cli_command *cmd, char **words, int argc, int skip)
{
	struct aj_cli_opts o;
	int rc = aj_cli_parse(cmd, argc - skip, words + skip, &o);

	if (rc < 0)
		return AJ_EXIT_OK;
	if (rc)
		return rc;
	o.words = words;
	aj_cli_quiet = o.quiet;
	return cmd->run ? cmd->run(&o) : aj_cli_network(cmd, &o);
}

static int dispatch(int argc, char **argv)
{
	const struct aj_cli_command *cmd;
	const char *about;

	if (argc < 2) {
		print_usage(stderr);
		return AJ_EXIT_USAGE;
	}
	if (is_help(argv[1])) {
		print_usage(stdout);
		return AJ_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("aj %s\n", AJ_VERSION);
		return AJ_EXIT_OK;
	}
	if ((about = group_about(argv[1]))) {
		char group[40], subs[160];

		if (argc < 3 || is_help(argv[2])) {
			print_group_usage(argc < 3 ? stderr : stdout, argv[1], about);
			return argc < 3 ? AJ_EXIT_USAGE : AJ_EXIT_OK;
		}
		snprintf(group, sizeof(group), "%s ", argv[1]);
		cmd = find_command(group_commands, group, argv[2]);
		if (cmd)
			return run_command(cmd, argv, argc, 3);
		group_subcommands(argv[1], subs, sizeof(subs));
		return aj_cli_usage_error(argv[1], "unknown subcommand '%s' (%s)", argv[2], subs);
	}
	cmd = find_command(top_commands, "", argv[1]);
	if (!cmd) {
		if (argv[1][0] == '-')
			return aj_cli_usage_error(NULL, "unknown option '%s' (try aj --help)",
						  argv[1]);
		return aj_cli_usage_error(NULL, "unknown command '%s' (try aj --help)",
					  argv[1]);
	}
	return run_command(cmd, argv, argc, 2);
}

/* The commands a `help` word may name: "aj help template show" and the like. */
#define HELP_WORDS_MAX 4

int main(int argc, char **argv)
{
	aj_alloc_hook_cjson();
	/* `aj help run` is `aj run --help` */
	if (argc >= 3 && argc - 2 <= HELP_WORDS_MAX && !strcmp(argv[1], "help")) {
		char *again[HELP_WORDS_MAX + 3], help[] = "--help";
		int i;

		again[0] = argv[0];
		for (i = 2; i < argc; i++)
			again[i - 1] = argv[i];
		again[argc - 1] = help;
		again[argc] = NULL;
		return dispatch(argc, again);
	}
	return dispatch(argc, argv);
}
