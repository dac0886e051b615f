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
	&aj_cli_list,
	&aj_cli_status,
	&aj_cli_cancel,
	&aj_cli_logs,
	&aj_cli_delete,
	NULL
};

static const struct aj_cli_command *const template_commands[] = {
	&aj_cli_template_list,
	&aj_cli_template_show,
	&aj_cli_template_validate,
	NULL
};

static const struct aj_cli_command *const code_commands[] = {
	&aj_cli_code_stats,
	&aj_cli_code_upload_cmd,
	NULL
};

/* "<group> <subcommand>" commands that talk to Azure (cli_azure.c). */
static const struct aj_cli_command *const azure_commands[] = {
	&aj_cli_quota_list,
	&aj_cli_sku_list,
	&aj_cli_image_list,
	NULL
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
	print_commands(f, template_commands);
	print_commands(f, code_commands);
	print_commands(f, azure_commands);
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

static void print_template_usage(FILE *f)
{
	fputs("usage: aj template SUBCOMMAND [OPTIONS] [NAME]\n"
	      "\n"
	      "Inspect and check the templates under <home>/template/.\n"
	      "\n", f);
	print_commands(f, template_commands);
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
	if (!strcmp(argv[1], "template")) {
		if (argc < 3) {
			print_template_usage(stderr);
			return AJ_EXIT_USAGE;
		}
		if (is_help(argv[2])) {
			print_template_usage(stdout);
			return AJ_EXIT_OK;
		}
		cmd = find_command(template_commands, "template ", argv[2]);
		if (!cmd)
			return aj_cli_usage_error("template",
						  "unknown subcommand '%s' (list, show, validate)",
						  argv[2]);
		return run_command(cmd, argv, argc, 3);
	}
	if (!strcmp(argv[1], "code")) {
		cmd = argc < 3 ? NULL : find_command(code_commands, "code ", argv[2]);
		if (!cmd)
			return aj_cli_usage_error("code", "expected a subcommand: stats");
		return run_command(cmd, argv, argc, 3);
	}
	if (argc >= 3 && !strchr(argv[1], ' ') && strlen(argv[1]) < 32) {
		char group[40];

		snprintf(group, sizeof(group), "%s ", argv[1]);
		if ((cmd = find_command(azure_commands, group, argv[2])))
			return run_command(cmd, argv, argc, 3);
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
