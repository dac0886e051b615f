/*
 * cli_commands.c - the commands aj-net serves: their names, options and
 * help, apart from their code (cli_kube.c, cli_azure.c,
 * cli_code_upload.c), so that aj lists, parses and explains them without
 * loading a network library and hands them to aj_cli_network().
 */
#include <stddef.h>

#include "backend/codeship.h"
#include "cli.h"

#define CLUSTER_HELP \
	"      --namespace NS    namespace (else the context's, then default)\n" \
	"      --context NAME    kubeconfig context (else the current one)\n" \
	"      --kubeconfig FILE kubeconfig (else $KUBECONFIG, ~/.kube/config)\n"

#define CREDENTIAL_HELP \
	"Azure credential: AZURE_TENANT_ID/AZURE_CLIENT_ID with AZURE_CLIENT_SECRET or\n" \
	"AZURE_FEDERATED_TOKEN_FILE, else managed identity, else `az login`.\n" \
	"AJ_AZURE_ARM_ENDPOINT and AJ_AZURE_CA_FILE select another endpoint.\n"

const struct aj_cli_command aj_cli_list = {
	"list",
	"list AjJobs in the cluster",
	"usage: aj list [--namespace NS | -A] [-o wide|yaml|json]\n"
	"\n"
	"One row per AjJob: NAME, BACKEND, PHASE, NODES, AGE (MESSAGE too\n"
	"with -o wide; NAMESPACE first with -A). -o yaml|json prints the list.\n"
	"\n"
	CLUSTER_HELP
	"  -A, --all-namespaces  every namespace\n"
	"  -o, --output FORMAT   wide, yaml or json\n",
	AJ_OPT_NAMESPACE | AJ_OPT_CONTEXT | AJ_OPT_KUBECONFIG | AJ_OPT_ALL_NAMESPACES |
	AJ_OPT_OUTPUT | AJ_OPT_WIDE,
	AJ_ARGS_NONE,
	NULL
};

const struct aj_cli_command aj_cli_status = {
	"status",
	"show an AjJob's phase, conditions and Volcano Job",
	"usage: aj status NAME [--namespace NS] [-o yaml|json] [--wait]\n"
	"\n"
	"Phase, backend, Volcano Job, message and conditions of the AjJob NAME.\n"
	"\n"
	CLUSTER_HELP
	"  -o, --output FORMAT   print the object as yaml or json instead\n"
	"  -w, --wait            then follow it until it ends, one line per phase;\n"
	"                        exit 0 if it succeeded, 1 if it failed or was\n"
	"                        cancelled. Ctrl-C stops waiting, not the job.\n",
	AJ_OPT_NAMESPACE | AJ_OPT_CONTEXT | AJ_OPT_KUBECONFIG | AJ_OPT_OUTPUT | AJ_OPT_WAIT,
	AJ_ARGS_JOB,
	NULL
};

const struct aj_cli_command aj_cli_cancel = {
	"cancel",
	"ask the controller to stop an AjJob",
	"usage: aj cancel NAME [--namespace NS]\n"
	"\n"
	"Set the annotation aj.dev/cancel=true on the AjJob NAME. The controller\n"
	"then deletes its Volcano Job and marks it Cancelled. A job that has\n"
	"already ended is left as it is.\n"
	"\n"
	CLUSTER_HELP,
	AJ_OPT_NAMESPACE | AJ_OPT_CONTEXT | AJ_OPT_KUBECONFIG,
	AJ_ARGS_JOB,
	NULL
};

const struct aj_cli_command aj_cli_quota_list = {
	"quota list",
	"Singularity quota per virtual cluster, series and SLA tier",
	"usage: aj quota list [--full] [-o json|yaml]\n"
	"\n"
	"Show, for every Singularity virtual cluster the credential can see, the\n"
	"quota of each series as used/limit per SLA tier (Premium, Standard,\n"
	"Basic) and the user's overall cap. Units are GPUs, or vCPUs for CPU\n"
	"series. Auto-selection ranks virtual clusters on these numbers.\n"
	"\n"
	"  --full          every series, also those without quota, and each\n"
	"                  virtual cluster as subscription/resource group/name\n"
	"  -o, --output    json or yaml instead of the table\n"
	"\n" CREDENTIAL_HELP,
	AJ_OPT_OUTPUT | AJ_OPT_FULL,
	AJ_ARGS_NONE,
	NULL
};

const struct aj_cli_command aj_cli_sku_list = {
	"sku list",
	"Singularity SKUs the virtual clusters have quota for",
	"usage: aj sku list [-o json|yaml]\n"
	"\n"
	"List the instance types of every series a virtual cluster has quota for,\n"
	"with the SKU shorthand that selects each (jobs[0].sku, e.g. 80G8-A100-NvLink\n"
	"or C3), the quota units one instance takes and the units free per tier.\n"
	"\n"
	"  -o, --output    json or yaml instead of the table\n"
	"\n" CREDENTIAL_HELP,
	AJ_OPT_OUTPUT,
	AJ_ARGS_NONE,
	NULL
};

const struct aj_cli_command aj_cli_image_list = {
	"image list",
	"Singularity curated images (for environment.image amlt-sing/NAME)",
	"usage: aj image list [-o json|yaml] [FILTER]\n"
	"\n"
	"List the curated Singularity images of the first subscription that offers\n"
	"them, as amlt-sing/NAME with their aliases. FILTER keeps those whose name or\n"
	"an alias contains it (case-insensitive).\n"
	"\n"
	"  -o, --output    json or yaml instead of the table\n"
	"\n" CREDENTIAL_HELP,
	AJ_OPT_OUTPUT,
	AJ_ARGS_OPTIONAL_NAME,
	NULL
};

const struct aj_cli_command aj_cli_code_upload_cmd = {
	"code upload",
	"put the code of this directory into a volcano job's shared volume",
	"usage: aj code upload -t NAME [--namespace NS] [--quiet]\n"
	"\n"
	"Archive the current directory as a submission would, and place it in\n"
	"the PersistentVolumeClaim named by the first job's submit_args.env\n"
	"(AMLT_PERSISTENT_VOLUME_NAME, mounted at AMLT_PERSISTENT_VOLUME_MOUNT_DIR)\n"
	"through a short-lived helper pod, under .aj-code/<sha256>. An archive\n"
	"already there is not sent again. Prints the SHA-256, which `aj run`\n"
	"also writes into the AjJob it makes (spec.code.digest).\n"
	"\n"
	"The cluster is the kubeconfig's (KUBECONFIG, ~/.kube/config) with\n"
	"target.context; the namespace is --namespace, else target.namespace,\n"
	"else the context's. AJ_CODE_HELPER_TIMEOUT (seconds, 300) bounds the\n"
	"wait for the helper pod; aj says every 5 s what it waits for, and\n"
	"Ctrl-C or SIGTERM deletes the pod before aj ends.\n"
	"\n"
	"  -t, --template NAME   the template (<home>/template/NAME.yaml)\n"
	"      --namespace NS    namespace of the job\n"
	"  -q, --quiet           no progress line while the code is archived and\n"
	"                        sent (there is one only on a terminal)\n",
	AJ_OPT_TEMPLATE | AJ_OPT_NAMESPACE | AJ_OPT_QUIET,
	AJ_ARGS_NONE,
	NULL
};
