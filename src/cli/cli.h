/*
 * cli.h - the `aj` command line: what the command files share.
 *
 * main.c finds the command, cli_opts.c parses its options into a struct
 * aj_cli_opts and each command file (cli_template.c, cli_run.c, cli_kube.c)
 * runs one command from it. cli_output.c prints documents and error lists.
 * cli_kube.c holds everything that talks to a cluster: `aj run` without
 * --dry-run hands it the AjJob, and list, status and cancel live there.
 *
 * Two programs are linked from these files. `aj` has the offline commands
 * (template, render, run --dry-run, code stats, help) and no network
 * library; a command with no run function (cli_commands.c), or aj run when
 * it submits, goes to aj_cli_network(), which in `aj` executes the helper
 * program aj-net with the same arguments (cli_exec.c) and in aj-net runs
 * the network code (cli_net.c: cli_kube.c, cli_azure.c, cli_submit.c,
 * cli_code_upload.c, cli_code_blob.c).
 *
 * Conventions: options come before the positional arguments; for run and
 * render everything from the first non-option (or after "--") is the user
 * command, kept as the argv slice it was given. Commands return an exit
 * status: AJ_EXIT_OK, AJ_EXIT_FAIL (bad input, invalid template) or
 * AJ_EXIT_USAGE (bad command line). Errors go to stderr, one per line.
 *
 * Ownership: struct aj_cli_opts only points into argv and the environment;
 * it owns nothing.
 */
#ifndef AJ_CLI_H
#define AJ_CLI_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "azure/arm.h"
#include "core/jobspec.h"
#include "core/resolve.h"
#include "core/source.h"
#include "pipeline/candidates.h"
#include "pipeline/pipeline.h"
#include "place/workspaces.h"

struct aj_errors;
struct aj_kube;
struct aj_kube_config;
struct aj_kube_config_opts;
struct aj_node;
struct aj_source;

enum {
	AJ_EXIT_OK = 0,
	AJ_EXIT_FAIL = 1,
	AJ_EXIT_USAGE = 2
};

/* Options a command may accept (bits of struct aj_cli_command.options). */
enum {
	AJ_OPT_TEMPLATE = 1u << 0,   /* -t, --template NAME */
	AJ_OPT_NODES = 1u << 1,      /* -n, --nodes N */
	AJ_OPT_PROCESSES = 1u << 2,  /* -p, --processes N */
	AJ_OPT_PPN = 1u << 3,        /* --ppn N */
	AJ_OPT_NAMESPACE = 1u << 4,  /* --namespace NS */
	AJ_OPT_NAME = 1u << 5,       /* --name NAME */
	AJ_OPT_DRY_RUN = 1u << 6,    /* --dry-run */
	AJ_OPT_OUTPUT = 1u << 7,     /* -o, --output yaml|json */
	AJ_OPT_AMLT = 1u << 8,       /* --amlt */
	AJ_OPT_JOBSPEC = 1u << 9,    /* --jobspec */
	AJ_OPT_CONTEXT = 1u << 10,   /* --context NAME */
	AJ_OPT_KUBECONFIG = 1u << 11, /* --kubeconfig FILE */
	AJ_OPT_WAIT = 1u << 12,      /* -w, --wait */
	AJ_OPT_ALL_NAMESPACES = 1u << 13, /* -A, --all-namespaces */
	AJ_OPT_WIDE = 1u << 14,      /* not an option: -o also accepts wide */
	AJ_OPT_FULL = 1u << 15,      /* --full */
	AJ_OPT_DIGEST = 1u << 16,    /* --digest */
	AJ_OPT_QUIET = 1u << 17,     /* -q, --quiet */
	AJ_OPT_FOLLOW = 1u << 18,    /* -f, --follow */
	AJ_OPT_TASK = 1u << 19,      /* --task T */
	AJ_OPT_RANK = 1u << 20,      /* --rank N */
	AJ_OPT_TAIL = 1u << 21,      /* --tail N */
	AJ_OPT_SINCE = 1u << 22,     /* --since DURATION */
	AJ_OPT_TIMESTAMPS = 1u << 23, /* --timestamps */
	AJ_OPT_PREVIOUS = 1u << 24,  /* -p, --previous (aj logs: -p is not --processes) */
	AJ_OPT_PHASE = 1u << 25,     /* --phase P */
	AJ_OPT_SELECTOR = 1u << 26,  /* -l, --selector S */
	AJ_OPT_WATCH = 1u << 27,     /* -w, --watch (aj list: -w is not --wait) */
	AJ_OPT_ALL = 1u << 28,       /* --all */
	AJ_OPT_NO_WAIT = 1u << 29,   /* --no-wait */
	AJ_OPT_TTL = 1u << 30        /* --ttl DURATION */
};

/* What a command takes after its options. */
enum aj_cli_args {
	AJ_ARGS_NONE,
	AJ_ARGS_OPTIONAL_NAME,
	AJ_ARGS_NAME,
	AJ_ARGS_JOB,                      /* an AjJob's name, required */
	AJ_ARGS_JOBS,                     /* AjJob names (o->names), any number */
	AJ_ARGS_COMMAND
};

enum aj_cli_format {
	AJ_FORMAT_YAML,
	AJ_FORMAT_JSON,
	AJ_FORMAT_WIDE
};

/* Most names one command line may give (aj delete A B ...). */
#define AJ_CLI_MAX_NAMES 256

struct aj_cli_opts {
	const char *template_name;
	struct aj_shape_args shape;       /* 0: not given */
	const char *namespace_;
	const char *name;
	int dry_run;
	int amlt;
	int jobspec;
	enum aj_cli_format format;
	int format_set;                   /* -o was given */
	const char *context;
	const char *kubeconfig;
	int wait;
	int all_namespaces;
	int full;
	int digest;                       /* --digest: archive the tree for the code digest */
	int quiet;                        /* --quiet: no progress line */
	int follow;                       /* -f */
	const char *task;                 /* --task */
	long rank;                        /* --rank; -1: not given */
	long tail;                        /* --tail; -1: not given */
	long since;                       /* --since in seconds; 0: not given */
	long ttl;                         /* --ttl in seconds; -1: not given */
	int timestamps;
	int previous;
	const char *phase;                /* --phase, one of aj_phase_names (core/ajjob.h) */
	const char *selector;             /* -l, --selector */
	int watch;
	int all;
	int no_wait;
	const char *arg;                  /* the NAME argument, or NULL */
	const char *names[AJ_CLI_MAX_NAMES];  /* AJ_ARGS_JOBS: every NAME */
	size_t nnames;
	const char *const *argv;          /* the user command */
	size_t argc;
	char **words;                     /* aj's own argv, NULL-terminated (set by main.c) */
};

struct aj_cli_command {
	const char *name;                 /* "run", "template list" */
	const char *summary;              /* one line for `aj --help` */
	const char *usage;                /* the whole --help text */
	unsigned options;                 /* AJ_OPT_* bits */
	enum aj_cli_args args;
	int (*run)(const struct aj_cli_opts *o);   /* NULL: served by aj_cli_network() */
};

extern const struct aj_cli_command aj_cli_template_list;
extern const struct aj_cli_command aj_cli_template_show;
extern const struct aj_cli_command aj_cli_template_validate;
extern const struct aj_cli_command aj_cli_run;
extern const struct aj_cli_command aj_cli_render;
extern const struct aj_cli_command aj_cli_place;
extern const struct aj_cli_command aj_cli_code_stats;
extern const struct aj_cli_command aj_cli_list;
extern const struct aj_cli_command aj_cli_status;
extern const struct aj_cli_command aj_cli_cancel;
extern const struct aj_cli_command aj_cli_logs;
extern const struct aj_cli_command aj_cli_delete;
extern const struct aj_cli_command aj_cli_code_upload_cmd;
extern const struct aj_cli_command aj_cli_quota_list;
extern const struct aj_cli_command aj_cli_sku_list;
extern const struct aj_cli_command aj_cli_image_list;

/*
 * Run a command that needs the network: in aj, execute aj-net with
 * o->words (returns only when that fails, with AJ_EXIT_FAIL); in aj-net,
 * run it. Returns the exit status.
 */
int aj_cli_network(const struct aj_cli_command *cmd, const struct aj_cli_opts *o);

/* The network commands' code (aj-net only); exit statuses. */
int aj_cli_run_submit(const struct aj_cli_opts *o);
int aj_cli_place_run(const struct aj_cli_opts *o);
int aj_cli_list_run(const struct aj_cli_opts *o);
int aj_cli_status_run(const struct aj_cli_opts *o);
int aj_cli_cancel_run(const struct aj_cli_opts *o);
int aj_cli_logs_run(const struct aj_cli_opts *o);
int aj_cli_delete_run(const struct aj_cli_opts *o);
int aj_cli_code_upload_run(const struct aj_cli_opts *o);
int aj_cli_quota_list_run(const struct aj_cli_opts *o);
int aj_cli_sku_list_run(const struct aj_cli_opts *o);
int aj_cli_image_list_run(const struct aj_cli_opts *o);

/*
 * The pipeline (pipeline/pipeline.h) as aj run and aj render use it
 * (cli_run.c): the template home as the source, the command line as the
 * inputs, then the object name and namespace.
 * aj_cli_pipeline_load: load canonical with the command line's shape and
 * command, the code digest as `digest` says, and name the job. A
 * placement leaf loads its candidates instead (pipeline/candidates.h),
 * saying on stderr which are left out and why; the first valid one leads
 * (the name, the namespace, the kubeconfig context), and every valid one
 * that ships code takes the same digest.
 * aj_cli_pipeline_build: the backend's objects into *out (the caller's),
 * every valid candidate's of a placement; `preview` for output that is
 * only shown.
 * aj_cli_pipeline_ajjob: the AjJob for it (core/ajjob.h; NULL on failure,
 * err filled); a placement's carries every candidate's files.
 * aj_cli_pipeline_finish: print and release err, release p and canonical;
 * returns the exit status for rc.
 */
enum aj_cli_digest {
	AJ_CLI_DIGEST_NONE,           /* leave spec.code.digest unset */
	AJ_CLI_DIGEST_PLACEHOLDER,    /* AJ_CODE_DIGEST_PLACEHOLDER where code would go */
	AJ_CLI_DIGEST_COMPUTE         /* archive the tree */
};

struct aj_cli_pipeline {
	const char *cmd;              /* the command, for warnings ("run") */
	int placement_only;           /* refuse a template that declares no placement (aj place) */
	struct aj_source src;
	struct aj_pipeline pl;        /* template, JobSpec, backend (a placement: its leaf only) */
	struct aj_candidates cands;   /* a placement's candidates (cands.nr 0: none) */
	struct aj_pipeline *lead;     /* &pl, or a placement's first valid candidate's */
	struct aj_shape_args given;   /* a placement: the shape as given (candidates resolve the rest) */
	char *name;                   /* the AjJob / object name */
	char *code_uri;               /* aml, sing: the uploaded code's datastore path */
	const char *namespace_;       /* the AjJob's namespace */
	long ttl;                     /* its spec.ttlSecondsAfterFinished; -1: none */
};

void aj_cli_pipeline_init(struct aj_cli_pipeline *p);
/* A placement's candidates that ship code all name one digest. 0 / -1. */
int aj_cli_candidates_one_code(const struct aj_candidates *c, struct aj_errors *err);
int aj_cli_pipeline_load(const struct aj_cli_opts *o, const char *canonical,
			 enum aj_cli_digest digest, struct aj_cli_pipeline *p,
			 struct aj_errors *err);
int aj_cli_pipeline_build(const struct aj_cli_pipeline *p, int preview, cJSON **out,
			  struct aj_errors *err);
cJSON *aj_cli_pipeline_ajjob(const struct aj_cli_pipeline *p, struct aj_errors *err);
int aj_cli_pipeline_finish(int rc, struct aj_errors *err, struct aj_cli_pipeline *p,
			   char *canonical);

/*
 * Parse argv[0..argc) (the words after the command name) for cmd into o.
 * Returns AJ_EXIT_OK, AJ_EXIT_USAGE after printing the problem, or -1 when
 * --help was asked for and the usage has been printed.
 */
int aj_cli_parse(const struct aj_cli_command *cmd, int argc, char **argv,
		 struct aj_cli_opts *o);

/* The template home: $AJ_HOME when set and non-empty, else ".azure_jobs". */
const char *aj_cli_home(void);
/* Open the template home as a source; fails with a message if it is missing. */
int aj_cli_open_home(struct aj_source *src, struct aj_errors *err);
/*
 * The canonical name of a template given as NAME, "NAME.yaml" or
 * "template/NAME" (caller frees), or NULL after printing a usage error.
 */
char *aj_cli_template_canonical(const char *cmd, const char *name);
/*
 * The same, or for a file outside template/ its path below the home as
 * DIR/NAME[.yaml] ("storage/default"), for commands that look at
 * components too.
 */
char *aj_cli_file_canonical(const char *cmd, const char *name);

/* Characters of aj_cli_name_suffix(), after its '-'. */
#define AJ_CLI_NAME_SUFFIX_LEN 5
/*
 * Append '-' and AJ_CLI_NAME_SUFFIX_LEN random characters of [a-z0-9] to b
 * (a DNS label stays one; cli_name.c). 0, or -1 with err when no random
 * bytes could be read (b's own failure is b->failed).
 */
int aj_cli_name_suffix(struct aj_buf *b, struct aj_errors *err);

/* Print every entry of err to stderr, one line each. */
void aj_cli_print_errors(const struct aj_errors *err);
/*
 * Problems that do not stop an inspection command: "aj CMD: warning: WHY:"
 * on stderr, then each entry as aj_cli_print_errors() prints it, indented.
 */
void aj_cli_print_warnings(const char *cmd, const char *why, const struct aj_errors *w);
/* Print a usage problem as "aj CMD: message" to stderr; returns AJ_EXIT_USAGE. */
int aj_cli_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print v to stdout as YAML or JSON. 0, or -1 with err filled. */
int aj_cli_print_doc(const cJSON *v, enum aj_cli_format format,
		     struct aj_errors *err);
/* Write text to stdout and flush; -1 with err filled if the write failed. */
int aj_cli_write(const char *text, size_t len, struct aj_errors *err);

/*
 * A text table (aj list, aj status, the Azure listings): cells are added row
 * after row; printing aligns the columns three spaces apart (as kubectl
 * does) and leaves the last one unpadded; an empty or NULL cell prints as "-". A failed add is
 * remembered and reported by aj_cli_table_print(). The table owns its cells
 * until aj_cli_table_release().
 */
struct aj_cli_table {
	struct aj_strlist cells;
	size_t cols;
	const char *indent;   /* before every row; NULL for none */
	int failed;
	/*
	 * NULL, or cols widths that printing widens to and keeps (rows printed
	 * a few at a time line up: aj list -w). Not owned.
	 */
	size_t *widths;
};
#define AJ_CLI_TABLE_INIT(cols) { AJ_STRLIST_INIT, (cols), NULL, 0, NULL }
void aj_cli_table_add(struct aj_cli_table *t, const char *cell);
void aj_cli_table_addf(struct aj_cli_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
int aj_cli_table_print(const struct aj_cli_table *t, struct aj_errors *err);
void aj_cli_table_release(struct aj_cli_table *t);
/* Add item to obj under key; on failure delete item. 0 / -1 (out of memory). */
int aj_cli_attach(cJSON *obj, const char *key, cJSON *item);
/* The typed JobSpec as JSON (for render --jobspec). NULL on out of memory. */
cJSON *aj_cli_jobspec_json(const struct aj_jobspec *s);

/*
 * aj_kube_config_load() as kubectl loads: a cluster's insecure-skip-tls-verify
 * is honoured, with one warning line on stderr naming the server and the
 * kubeconfig. 0 / -1.
 */
int aj_cli_kube_config_load(struct aj_kube_config *cfg,
			    struct aj_kube_config_opts *co, struct aj_errors *err);
/*
 * Connect k to the cluster the options name: --kubeconfig (else KUBECONFIG,
 * ~/.kube/config), --context, else `context` (the template's
 * target.context, at `context_node` for messages; both may be NULL), else
 * the kubeconfig's current context. k->cfg.namespace is --namespace, else
 * the context's namespace. k is zeroed first, so aj_kube_release() is
 * always safe afterwards. 0 / -1.
 */
int aj_cli_kube_open(struct aj_kube *k, const struct aj_cli_opts *o,
		     const char *context, const struct aj_node *context_node,
		     struct aj_errors *err);
/*
 * Connect k to the cluster of a loaded pipeline as aj run does (aj-net:
 * cli_submit.c): the lead's target.context unless --context; the AjJob's
 * namespace becomes the context's when neither --namespace nor
 * target.namespace names one. 0 / -1.
 */
int aj_cli_pipeline_connect(struct aj_cli_pipeline *p, const struct aj_cli_opts *o,
			    struct aj_kube *k, struct aj_errors *err);
/*
 * aj_cli_kube_submit: create the AjJob `job` (its metadata names it) and
 * print its name, or the created object with -o. 0 / -1.
 * aj_cli_kube_wait: follow that AjJob to the end (--wait). Returns -1 with
 * err filled, else the exit status (0, or 1 when the job did not succeed,
 * 130 when waiting was interrupted).
 */
int aj_cli_kube_submit(struct aj_kube *k, const cJSON *job,
		       const struct aj_cli_opts *o, struct aj_errors *err);
int aj_cli_kube_wait(struct aj_kube *k, const cJSON *job, struct aj_errors *err);
/*
 * aj run --follow: print the logs of that AjJob's pods as `aj logs -f`
 * does until it ends; the same exit statuses as aj_cli_kube_wait.
 */
int aj_cli_kube_follow(struct aj_kube *k, const cJSON *job, struct aj_errors *err);

/*
 * A progress line for long work (cli_progress.c): archiving the code,
 * sending it. Shown only when stderr is a terminal and not aj_cli_quiet
 * (--quiet), rewritten in place at most five times a second, erased by
 * aj_cli_progress_end. aj_cli_progress_format writes the line for `bytes`
 * of `total` (0: unknown) after `ms` into out: files, MiB, rate, ETA.
 */
extern int aj_cli_quiet;

struct aj_cli_progress {
	const char *what;
	uint64_t total;
	int64_t start_ms, last_ms;
	int on, shown;
};

void aj_cli_progress_start(struct aj_cli_progress *p, const char *what, uint64_t total);
void aj_cli_progress_update(struct aj_cli_progress *p, uint64_t files, uint64_t bytes);
void aj_cli_progress_end(struct aj_cli_progress *p);
void aj_cli_progress_format(char *out, size_t cap, const char *what, uint64_t files,
			    uint64_t bytes, uint64_t total, int64_t ms);

/*
 * The code archive (cli_code.c), in both programs. Where the code goes is
 * the backend's answer (aj_backend.code_route); its digest is set through
 * aj_pipeline_set_code() only.
 * aj_cli_code_digest: the SHA-256 of the archive of the current directory
 * as the job's digest, sending nothing (render --digest, run --dry-run,
 * for a job whose backend ships code). 0 / -1.
 * aj_cli_code_archive: archive "." under the template's rules into fd
 * (-1: digest only), *res describing it, with the progress line on a
 * terminal. 0 / -1.
 *
 * Code through the shared volume (cli_code_upload.c, aj-net); these do
 * nothing for a job whose route is not AJ_CODE_VOLUME.
 * aj_cli_code_archive_file: that archive in an unlinked temporary file,
 * rewound; -1 on failure.
 * aj_cli_code_upload: place that archive in the volume through a helper
 * pod in namespace ns and set the digest (a digest already set must match:
 * the tree may not change in between); says on stderr what it sent. 0 / -1.
 * aj_cli_code_say_none: say on stderr why no code goes with a job whose
 * route is AJ_CODE_NONE (aj run says it once the AjJob exists, so a failed
 * submission prints only its error).
 */
struct aj_kube;
struct aj_kube_config;
struct aj_kube_config_opts;
struct aj_archive_result;
int aj_cli_code_digest(struct aj_pipeline *pl, struct aj_errors *err);
int aj_cli_code_archive(const struct aj_jobspec *spec, int fd, struct aj_archive_result *res,
			struct aj_errors *err);
int aj_cli_code_archive_file(const struct aj_jobspec *spec, struct aj_archive_result *res,
			     struct aj_errors *err);
int aj_cli_code_upload(struct aj_kube *k, const char *ns, struct aj_pipeline *pl,
		       struct aj_errors *err);
/*
 * Reads the archive file for an upload (an aj_blob_read_fn, or an exec's
 * stdin) and shows how much of it went on `progress`, started by the caller.
 */
struct aj_cli_code_reader {
	int fd;
	uint64_t done;
	struct aj_cli_progress progress;
};
int aj_cli_code_read(void *data, void *buf, size_t cap, size_t *len, struct aj_errors *err);
void aj_cli_code_say_none(const struct aj_jobspec *spec);

/*
 * Azure with the user's credential (cli_azure.c): the chain of
 * azure/credential.h (AZURE_* variables, managed identity, `az login`) behind
 * a token cache, and an ARM client on AJ_AZURE_ARM_ENDPOINT (else the public
 * cloud), both trusting AJ_AZURE_CA_FILE when set. close is safe after a
 * failed open.
 */
struct aj_cli_azure {
	struct aj_token_cache *tokens;
	struct aj_arm arm;
	int arm_ready;
};

int aj_cli_azure_open(struct aj_cli_azure *a, struct aj_errors *err);
void aj_cli_azure_close(struct aj_cli_azure *a);

/*
 * The user's default workspace, AJ_AZURE_WORKSPACE
 * (SUBSCRIPTION/RESOURCE_GROUP/NAME, as the controller's
 * --azure-workspace), into out: 1 set, 0 not set, -1 not of that form (in
 * err). Where a job goes from it: aj_place_workspace_of(); naming none is
 * said with AJ_CLI_NO_WORKSPACE.
 */
int aj_cli_azure_workspace(struct aj_place_workspace *out, struct aj_errors *err);
#define AJ_CLI_NO_WORKSPACE "no workspace is named: set target.subscription_id, resource_group " \
	"and workspace_name in the template, or AJ_AZURE_WORKSPACE=SUBSCRIPTION/RESOURCE_GROUP/WORKSPACE"

/*
 * Code through Blob Storage (cli_code_blob.c), sent with the user's
 * credential before the AjJob exists:
 *  - AJ_CODE_DATASTORE (aml, sing): the files of the archive go to the
 *    workspace's default datastore under aj-code/<sha256>/, which the
 *    controller registers as the code version <sha256> (the workspace is
 *    AJ_AZURE_WORKSPACE, SUBSCRIPTION/RESOURCE_GROUP/NAME, with NAME
 *    replaced by target.workspace_name);
 *  - AJ_CODE_BLOB (_extra.code_upload.strategy blob): the archive itself
 *    goes to <upload_dir>/<sha256>.tar.gz in the named account and container.
 * An upload already complete there is not repeated. AJ_AZURE_BLOB_ENDPOINT
 * is the blob endpoint with {account} for the account name, as for the
 * controller (emulators, tests).
 * aj_cli_code_blob_upload: archive ".", upload, set the digest (one already
 * set must match) and for the datastore *uri to the path
 * azureml://datastores/<ds>/paths/aj-code/<sha256>/ (caller frees; NULL
 * otherwise). Nothing for the other routes. Says on stderr what it sent or
 * found. 0 / -1.
 */
int aj_cli_code_blob_upload(struct aj_pipeline *pl, char **uri, struct aj_errors *err);

#endif
