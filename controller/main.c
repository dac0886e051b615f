/*
 * aj-controller: turns AjJob resources into their backends' jobs through
 * the runners (runner/runner.h), each configured by its own options. Flags
 * override environment variables (AJ_*), which override the defaults; see
 * --help.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdatomic.h>
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
#include "runner/runner.h"

/* Set by the signal handler, read by the controller's threads: lock free, so both may. */
static atomic_int stop;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static void usage(FILE *f)
{
	size_t i;
	const struct aj_runner_option *op;
	char flag[64];

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
	      "  --ttl-seconds-after-finished N  delete finished AjJobs N seconds after they\n"
	      "                           finished, unless their spec.ttlSecondsAfterFinished\n"
	      "                           says otherwise (0: keep them, the default)\n"
	      "                           [AJ_TTL_SECONDS_AFTER_FINISHED]\n", f);
	for (i = 0; i < aj_runners_nr; i++) {
		if (!aj_runners[i]->options)
			continue;
		fprintf(f, "%s\n", aj_runners[i]->options_title);
		for (op = aj_runners[i]->options; op->flag; op++) {
			snprintf(flag, sizeof(flag), "--%s %s", op->flag, op->arg);
			fprintf(f, "  %-24s %-37s [%s]\n", flag, op->help, op->env);
		}
	}
	fputs("The controller's Azure identity (identity from AZURE_* variables):\n"
	      "  --azure-ca-file FILE     CA bundle for Azure endpoints         [AJ_AZURE_CA_FILE]\n"
	      "  --azure-client-id ID     user-assigned managed identity        [AJ_AZURE_IDENTITY_CLIENT_ID]\n"
	      "Storage mounts and blob code on the cluster (user-delegation SAS with that identity):\n"
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

static int parse_int_to(const char *s, long min, long max, int *out)
{
	long v;

	if (parse_int(s, min, max, &v))
		return -1;
	*out = (int)v;
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

static const struct option base_opts[] = {
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
	{ "ttl-seconds-after-finished", required_argument, NULL, 'T' },
	{ "azure-ca-file", required_argument, NULL, 'C' },
	{ "azure-client-id", required_argument, NULL, 'I' },
	{ "azure-blob-endpoint", required_argument, NULL, 'B' },
	{ "storage-sas-lifetime", required_argument, NULL, 'S' },
	{ "version", no_argument, NULL, 'V' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};
#define BASE_OPTS (sizeof(base_opts) / sizeof(base_opts[0]) - 1)
/* getopt's value of runner slot i's option j: past every character */
#define RUNNER_OPT(i, j) (1000 + (int)((i) * AJ_RUNNER_OPTIONS_MAX + (j)))

/* The base options, then every runner's, then the end. */
static void all_options(struct option *all)
{
	size_t i, j, n = BASE_OPTS;

	memcpy(all, base_opts, BASE_OPTS * sizeof(*all));
	for (i = 0; i < aj_runners_nr; i++)
		for (j = 0; aj_runners[i]->options && aj_runners[i]->options[j].flag; j++) {
			struct option op = { aj_runners[i]->options[j].flag, required_argument, NULL,
					     RUNNER_OPT(i, j) };

			all[n++] = op;
		}
	memset(&all[n], 0, sizeof(all[n]));
}

/* A runner's option value: refused by its check? (A bad variable is ignored, a bad flag is not.) */
static int runner_value_bad(const struct aj_runner_option *op, const char *v)
{
	return op->check && op->check(v);
}

/* The defaults, then the environment (AJ_*): flags override both. */
static void opts_from_env(struct aj_controller_opts *o, const char **level)
{
	const char *v;
	long n;
	size_t i, j;

	aj_controller_opts_defaults(o);
	*level = env("AJ_LOG_LEVEL");
	o->watch_namespace = env("AJ_WATCH_NAMESPACE");
	o->health_addr = env("AJ_HEALTH_ADDR") ? env("AJ_HEALTH_ADDR") : o->health_addr;
	o->lease_namespace = env("AJ_LEASE_NAMESPACE");
	o->identity = env("POD_NAME");
	o->privileged_namespaces = env("AJ_PRIVILEGED_NAMESPACES");
	o->leader_elect = (v = env("AJ_LEADER_ELECT")) && !strcmp(v, "true");
	/* a bad value in the environment keeps the default */
	if ((v = env("AJ_WORKERS")))
		parse_int_to(v, 1, 256, &o->workers);
	if ((v = env("AJ_QPS")))
		parse_double(v, 0.1, &o->qps);
	if ((v = env("AJ_BURST")))
		parse_int_to(v, 1, 100000, &o->burst);
	if ((v = env("AJ_HEALTH_PORT")))
		parse_int_to(v, 0, 65535, &o->health_port);
	if ((v = env("AJ_TTL_SECONDS_AFTER_FINISHED")))
		parse_int(v, 0, 2147483647, &o->ttl_after_finished);
	o->identity_ca_file = env("AJ_AZURE_CA_FILE");
	o->identity_client_id = env("AJ_AZURE_IDENTITY_CLIENT_ID");
	for (i = 0; i < aj_runners_nr; i++)
		for (j = 0; aj_runners[i]->options && aj_runners[i]->options[j].flag; j++)
			if ((v = env(aj_runners[i]->options[j].env)) &&
			    !runner_value_bad(&aj_runners[i]->options[j], v))
				o->runner_values[i][j] = v;
	o->storage.blob_endpoint = env("AJ_AZURE_BLOB_ENDPOINT");
	if ((v = env("AJ_STORAGE_SAS_LIFETIME")) && !parse_int(v, 60, 7 * 86400, &n))
		o->storage.lifetime = n;
}

/* One flag with its argument. 0, or -1 for an invalid value. */
static int set_flag(struct aj_controller_opts *o, int ch, const char *arg, const char **level)
{
	long n;

	switch (ch) {
	case 'k': o->kubeconfig = arg; return 0;
	case 'c': o->context = arg; return 0;
	case 'n': o->watch_namespace = arg; return 0;
	case 'w': return parse_int_to(arg, 1, 256, &o->workers);
	case 'q': return parse_double(arg, 0.1, &o->qps);
	case 'b': return parse_int_to(arg, 1, 100000, &o->burst);
	case 'a': o->health_addr = arg; return 0;
	case 'p': return parse_int_to(arg, 0, 65535, &o->health_port);
	case 'f': o->port_file = arg; return 0;
	case 'l': o->leader_elect = 1; return 0;
	case 'L': o->lease_namespace = arg; return 0;
	case 'N': o->lease_name = arg; return 0;
	case 'i': o->identity = arg; return 0;
	case 'v': *level = arg; return 0;
	case 'P': o->privileged_namespaces = arg; return 0;
	case 'T': return parse_int(arg, 0, 2147483647, &o->ttl_after_finished);
	case 'C': o->identity_ca_file = arg; return 0;
	case 'I': o->identity_client_id = arg; return 0;
	case 'B': o->storage.blob_endpoint = arg; return 0;
	case 'S':
		if (parse_int(arg, 60, 7 * 86400, &n))
			return -1;
		o->storage.lifetime = n;
		return 0;
	default:
		if (ch >= RUNNER_OPT(0, 0) && ch < RUNNER_OPT(aj_runners_nr, 0)) {
			size_t i = (size_t)(ch - RUNNER_OPT(0, 0)) / AJ_RUNNER_OPTIONS_MAX;
			size_t j = (size_t)(ch - RUNNER_OPT(0, 0)) % AJ_RUNNER_OPTIONS_MAX;

			if (runner_value_bad(&aj_runners[i]->options[j], arg))
				return -1;
			o->runner_values[i][j] = arg;
		}
		return 0;
	}
}

/* The flags. -1 to go on, else the exit status (--help, --version, a bad flag). */
static int parse_flags(int argc, char **argv, struct aj_controller_opts *o, const char **level)
{
	struct option longopts[BASE_OPTS + AJ_RUNNERS_MAX * AJ_RUNNER_OPTIONS_MAX + 1];
	int ch;
	size_t i;

	all_options(longopts);
	while ((ch = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (ch == 'V') {
			printf("aj-controller %s\n", AJ_VERSION);
			return 0;
		}
		if (ch == 'h' || ch == '?') {
			usage(ch == 'h' ? stdout : stderr);
			return ch == 'h' ? 0 : 2;
		}
		if (set_flag(o, ch, optarg, level)) {
			for (i = 0; longopts[i].name && longopts[i].val != ch; i++)
				;
			fprintf(stderr, "aj-controller: invalid value for --%s: %s\n",
				longopts[i].name ? longopts[i].name : "?", optarg);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "aj-controller: unexpected argument: %s\n", argv[optind]);
		return 2;
	}
	/* one CA bundle for everything Azure (and one identity: identity.h) */
	o->storage.ca_file = o->identity_ca_file;
	return -1;
}

/* What the flags cannot check one by one. 0, or 2 after saying why. */
static int check_opts(const struct aj_controller_opts *o, const char *level)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	int lvl;

	if (aj_backend_permit_list_check(o->privileged_namespaces, &err)) {
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
	return 0;
}

/*
 * A few threads, mostly waiting on the network: per-thread malloc arenas
 * would cost more memory than their contention would save. Big buffers
 * (list pages, response bodies, tables) get mappings of their own, unmapped
 * when freed, instead of growing the heap; setting the threshold keeps
 * glibc from raising it after the first such free.
 */
static void tune_memory(void)
{
	aj_alloc_hook_cjson();
	mallopt(M_ARENA_MAX, 2);
	mallopt(M_MMAP_THRESHOLD, 64 * 1024);
}

static void install_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Run the controller: 0, or 1 after logging why it failed. */
static int run(const struct aj_controller_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	if (!aj_kube_global_init(&err) && !aj_controller_run(o, &stop, &err)) {
		aj_errors_release(&err);
		return 0;
	}
	aj_errors_format_all(&err, &b);
	aj_log(AJ_LOG_ERROR, "aj-controller failed", "error", aj_buf_cstr(&b), AJ_LOG_END);
	aj_buf_release(&b);
	aj_errors_release(&err);
	return 1;
}

int main(int argc, char **argv)
{
	struct aj_controller_opts o;
	const char *level;
	int rc;

	tune_memory();
	opts_from_env(&o, &level);
	if ((rc = parse_flags(argc, argv, &o, &level)) >= 0 || (rc = check_opts(&o, level)))
		return rc;
	install_signals();
	return run(&o);
}
