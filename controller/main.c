/*
 * aj-controller: turns AjJob resources into Volcano Jobs, and forwards aml
 * and sing AjJobs to Azure ML when given a workspace. Flags override
 * environment variables (AJ_*), which override the defaults; see --help.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "controller.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "kube/client.h"
#include "log.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fputs("usage: aj-controller [options]\n"
	      "  --kubeconfig FILE        kubeconfig (default: KUBECONFIG, ~/.kube/config, in-cluster)\n"
	      "  --context NAME           kubeconfig context\n"
	      "  --namespace NS           watch one namespace (default: all)   [AJ_WATCH_NAMESPACE]\n"
	      "  --workers N              concurrent reconciles (2)             [AJ_WORKERS]\n"
	      "  --qps Q --burst B        API request rate for all workers (20/40) [AJ_QPS, AJ_BURST]\n"
	      "  --health-addr ADDR       address of /healthz /readyz /metrics (0.0.0.0) [AJ_HEALTH_ADDR]\n"
	      "  --health-port PORT       port (8081; 0 picks one)            [AJ_HEALTH_PORT]\n"
	      "  --port-file FILE         write the bound port to FILE\n"
	      "  --leader-elect           elect a leader with a Lease           [AJ_LEADER_ELECT=true]\n"
	      "  --lease-namespace NS     namespace of the Lease (default: the client's) [AJ_LEASE_NAMESPACE]\n"
	      "  --lease-name NAME        name of the Lease (aj-controller)\n"
	      "  --identity ID            leader identity (default: host name and pid) [POD_NAME]\n"
	      "  --log-level LEVEL        debug|info|warn|error (info)          [AJ_LOG_LEVEL]\n"
	      "  --privileged-namespaces LIST  namespaces (comma-separated, * for all) where jobs\n"
	      "                           may add capabilities or mount storage (none)\n"
	      "                           [AJ_PRIVILEGED_NAMESPACES]\n"
	      "Azure ML / Singularity forwarding (on with a workspace; identity from AZURE_* variables):\n"
	      "  --azure-workspace S/RG/W default workspace                     [AJ_AZURE_WORKSPACE]\n"
	      "  --azure-allow RULES      NS=workspace:S/RG/W,vc:S/RG/VC;...     [AJ_AZURE_ALLOW]\n"
	      "  --azure-arm-endpoint URL ARM endpoint                          [AJ_AZURE_ARM_ENDPOINT]\n"
	      "  --azure-ca-file FILE     CA bundle for Azure endpoints         [AJ_AZURE_CA_FILE]\n"
	      "  --azure-client-id ID     user-assigned managed identity        [AJ_AZURE_IDENTITY_CLIENT_ID]\n"
	      "  --azure-poll SECONDS     job status poll interval (30)         [AJ_AZURE_POLL_SECONDS]\n"
	      "Storage mounts and blob code on Volcano (user-delegation SAS with the same identity):\n"
	      "  --azure-blob-endpoint URL  blob endpoint, {account} replaced by the account\n"
	      "                           (https://{account}.blob.core.windows.net) [AJ_AZURE_BLOB_ENDPOINT]\n"
	      "  --storage-sas-lifetime SECONDS  storage SAS lifetime, renewed at 2/3 (86400)\n"
	      "                           [AJ_STORAGE_SAS_LIFETIME]\n"
	      "  --version, --help\n", f);
}

/* A whole decimal number in [min, max]; -1 otherwise. */
static int parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_double(const char *s, double min, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min))
		return -1;
	*out = v;
	return 0;
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "kubeconfig", required_argument, NULL, 'k' },
		{ "context", required_argument, NULL, 'c' },
		{ "namespace", required_argument, NULL, 'n' },
		{ "workers", required_argument, NULL, 'w' },
		{ "qps", required_argument, NULL, 'q' },
		{ "burst", required_argument, NULL, 'b' },
		{ "health-addr", required_argument, NULL, 'a' },
		{ "health-port", required_argument, NULL, 'p' },
		{ "port-file", required_argument, NULL, 'f' },
		{ "leader-elect", no_argument, NULL, 'l' },
		{ "lease-namespace", required_argument, NULL, 'L' },
		{ "lease-name", required_argument, NULL, 'N' },
		{ "identity", required_argument, NULL, 'i' },
		{ "log-level", required_argument, NULL, 'v' },
		{ "privileged-namespaces", required_argument, NULL, 'P' },
		{ "azure-workspace", required_argument, NULL, 'W' },
		{ "azure-allow", required_argument, NULL, 'A' },
		{ "azure-arm-endpoint", required_argument, NULL, 'E' },
		{ "azure-ca-file", required_argument, NULL, 'C' },
		{ "azure-client-id", required_argument, NULL, 'I' },
		{ "azure-poll", required_argument, NULL, 'O' },
		{ "azure-blob-endpoint", required_argument, NULL, 'B' },
		{ "storage-sas-lifetime", required_argument, NULL, 'S' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	struct aj_controller_opts o;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct sigaction sa;
	const char *level = env("AJ_LOG_LEVEL"), *v;
	long n;
	int ch, lvl, rc;

	aj_alloc_hook_cjson();
	/*
	 * A few threads, mostly waiting on the network: per-thread malloc
	 * arenas would cost more memory than their contention would save.
	 * Big buffers (list pages, response bodies, tables) get mappings of
	 * their own, unmapped when freed, instead of growing the heap; setting
	 * the threshold keeps glibc from raising it after the first such free.
	 */
	mallopt(M_ARENA_MAX, 2);
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
	aj_controller_opts_defaults(&o);
	o.watch_namespace = env("AJ_WATCH_NAMESPACE");
	o.health_addr = env("AJ_HEALTH_ADDR") ? env("AJ_HEALTH_ADDR") : o.health_addr;
	o.lease_namespace = env("AJ_LEASE_NAMESPACE");
	o.identity = env("POD_NAME");
	o.privileged_namespaces = env("AJ_PRIVILEGED_NAMESPACES");
	o.leader_elect = (v = env("AJ_LEADER_ELECT")) && !strcmp(v, "true");
	if (((v = env("AJ_WORKERS")) && parse_int(v, 1, 256, &n) == 0))
		o.workers = (int)n;
	if ((v = env("AJ_QPS")))
		parse_double(v, 0.1, &o.qps);
	if ((v = env("AJ_BURST")) && !parse_int(v, 1, 100000, &n))
		o.burst = (int)n;
	if ((v = env("AJ_HEALTH_PORT")) && !parse_int(v, 0, 65535, &n))
		o.health_port = (int)n;
	o.azure.workspace = env("AJ_AZURE_WORKSPACE");
	o.azure.allow = env("AJ_AZURE_ALLOW");
	o.azure.arm_endpoint = env("AJ_AZURE_ARM_ENDPOINT");
	o.azure.ca_file = env("AJ_AZURE_CA_FILE");
	o.azure.identity_client_id = env("AJ_AZURE_IDENTITY_CLIENT_ID");
	if ((v = env("AJ_AZURE_POLL_SECONDS")))
		parse_double(v, 0.1, &o.azure.poll_seconds);
	o.storage.blob_endpoint = env("AJ_AZURE_BLOB_ENDPOINT");
	if ((v = env("AJ_STORAGE_SAS_LIFETIME")) && !parse_int(v, 60, 7 * 86400, &n))
		o.storage.lifetime = n;

	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'k': o.kubeconfig = optarg; break;
		case 'c': o.context = optarg; break;
		case 'n': o.watch_namespace = optarg; break;
		case 'w':
			if (parse_int(optarg, 1, 256, &n))
				goto bad;
			o.workers = (int)n;
			break;
		case 'q':
			if (parse_double(optarg, 0.1, &o.qps))
				goto bad;
			break;
		case 'b':
			if (parse_int(optarg, 1, 100000, &n))
				goto bad;
			o.burst = (int)n;
			break;
		case 'a': o.health_addr = optarg; break;
		case 'p':
			if (parse_int(optarg, 0, 65535, &n))
				goto bad;
			o.health_port = (int)n;
			break;
		case 'f': o.port_file = optarg; break;
		case 'l': o.leader_elect = 1; break;
		case 'L': o.lease_namespace = optarg; break;
		case 'N': o.lease_name = optarg; break;
		case 'i': o.identity = optarg; break;
		case 'v': level = optarg; break;
		case 'P': o.privileged_namespaces = optarg; break;
		case 'W': o.azure.workspace = optarg; break;
		case 'A': o.azure.allow = optarg; break;
		case 'E': o.azure.arm_endpoint = optarg; break;
		case 'C': o.azure.ca_file = optarg; break;
		case 'I': o.azure.identity_client_id = optarg; break;
		case 'O':
			if (parse_double(optarg, 0.1, &o.azure.poll_seconds))
				goto bad;
			break;
		case 'B': o.storage.blob_endpoint = optarg; break;
		case 'S':
			if (parse_int(optarg, 60, 7 * 86400, &n))
				goto bad;
			o.storage.lifetime = n;
			break;
		case 'V':
			printf("aj-controller %s\n", AJ_VERSION);
			return 0;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	/* one identity and CA bundle for everything Azure */
	o.storage.ca_file = o.azure.ca_file;
	o.storage.identity_client_id = o.azure.identity_client_id;
	if (optind < argc) {
		fprintf(stderr, "aj-controller: unexpected argument: %s\n", argv[optind]);
		return 2;
	}
	if (aj_backend_permit_list_check(o.privileged_namespaces, &err)) {
		struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

		aj_errors_format_all(&err, &b);
		fprintf(stderr, "aj-controller: --privileged-namespaces: %s", aj_buf_cstr(&b));
		aj_buf_release(&b);
		aj_errors_release(&err);
		return 2;
	}
	if (level) {
		if ((lvl = aj_log_level_parse(level)) < 0) {
			fprintf(stderr, "aj-controller: --log-level: unknown level %s\n", level);
			return 2;
		}
		aj_log_set_level((enum aj_log_level)lvl);
	}

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (aj_kube_global_init(&err))
		goto fail;
	rc = aj_controller_run(&o, &stop, &err);
	if (rc)
		goto fail;
	aj_errors_release(&err);
	return 0;
bad:
	for (n = 0; longopts[n].name && longopts[n].val != ch; n++)
		;
	fprintf(stderr, "aj-controller: invalid value for --%s: %s\n",
		longopts[n].name ? longopts[n].name : "?", optarg);
	return 2;
fail: {
		struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

		aj_errors_format_all(&err, &b);
		aj_log(AJ_LOG_ERROR, "aj-controller failed", "error", aj_buf_cstr(&b), AJ_LOG_END);
		aj_buf_release(&b);
		aj_errors_release(&err);
		return 1;
	}
}
