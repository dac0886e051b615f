/*
 * cli_net.c - aj-net: the network commands' code, found by command.
 *
 * aj hands these commands over with their arguments unchanged
 * (cli_exec.c); aj-net parses them again and runs them here. Everything
 * else aj-net does exactly as aj does, from the same files.
 */
#include <stddef.h>

#include "cli.h"

static const struct {
	const struct aj_cli_command *cmd;
	int (*run)(const struct aj_cli_opts *o);
} network_commands[] = {
	{ &aj_cli_run, aj_cli_run_submit },
	{ &aj_cli_place, aj_cli_place_run },
	{ &aj_cli_list, aj_cli_list_run },
	{ &aj_cli_status, aj_cli_status_run },
	{ &aj_cli_cancel, aj_cli_cancel_run },
	{ &aj_cli_logs, aj_cli_logs_run },
	{ &aj_cli_delete, aj_cli_delete_run },
	{ &aj_cli_code_upload_cmd, aj_cli_code_upload_run },
	{ &aj_cli_quota_list, aj_cli_quota_list_run },
	{ &aj_cli_sku_list, aj_cli_sku_list_run },
	{ &aj_cli_image_list, aj_cli_image_list_run },
};

int aj_cli_network(const struct aj_cli_command *cmd, const struct aj_cli_opts *o)
{
	size_t i;

	for (i = 0; i < sizeof(network_commands) / sizeof(network_commands[0]); i++)
		if (network_commands[i].cmd == cmd)
			return network_commands[i].run(o);
	return aj_cli_usage_error(cmd->name, "not a network command");
}
