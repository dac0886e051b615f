/*
 * cli_kube.h - what the cluster commands of aj-net share (cli_kube.c,
 * cli_logs.c, cli_status.c, cli_place.c): reading AjJobs, ages,
 * connecting, the not-found message, the placement table.
 *
 * Ownership: objects returned through `out` are the caller's
 * (cJSON_Delete); strings returned point into the objects given.
 */
#ifndef AJ_CLI_KUBE_H
#define AJ_CLI_KUBE_H

#include <stddef.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "core/ajjob.h"
#include "core/buf.h"

struct aj_errors;
struct aj_kube;
struct aj_kube_resource;

/* the AjJob contract's names (core/ajjob.h) */
#define AJJOB_KIND AJ_AJJOB_RESOURCE
#define AJ_CLI_EXIT_INTERRUPTED 130
#define AJ_CLI_CANCEL_ANNOTATION AJ_CANCEL_ANNOTATION

extern const struct aj_kube_resource aj_cli_ajjobs;

/* The value at a dotted path of object keys, or NULL. */
const cJSON *aj_cli_at(const cJSON *obj, const char *dotted);
/* The string there, or NULL when absent, empty or not a string. */
const char *aj_cli_str_at(const cJSON *obj, const char *dotted);
/* The AjJob's phase; Pending until the controller reports one. */
const char *aj_cli_phase(const cJSON *job);
int aj_cli_phase_terminal(const char *phase);
/* The exit status for a finished AjJob: 0 Succeeded, 1 otherwise. */
int aj_cli_phase_exit(const char *phase);
/* Append s on one line: each run of line breaks becomes "; ". */
void aj_cli_add_one_line(struct aj_buf *b, const char *s);
/* kubectl's age of an RFC 3339 time ("4m30s"), "<unknown>" if t is none. */
void aj_cli_age(char *out, size_t size, const char *t, time_t now);

/*
 * Check --namespace and the NAME argument(s), then connect (k is zeroed
 * first). Returns an exit status: AJ_EXIT_OK, or the failure (printed for
 * usage errors, in err otherwise).
 */
int aj_cli_kube_open_plain(struct aj_kube *k, const struct aj_cli_command *cmd,
			   const struct aj_cli_opts *o, struct aj_errors *err);
/* Let handler take SIGINT (Ctrl-C); the handler before goes to *old. */
struct sigaction;
void aj_cli_catch_sigint(void (*handler)(int), struct sigaction *old);
/* Print and release err, release k; returns rc. */
int aj_cli_kube_done(int rc, struct aj_kube *k, struct aj_errors *err);
/*
 * GET the AjJob ns/name. A missing one gets "ajjob.aj.dev/NAME not found in
 * namespace NS", and the namespaces where one of that name exists when the
 * user may list AjJobs cluster-wide (one list, only then). 0 / -1.
 */
int aj_cli_kube_get_job(struct aj_kube *k, const char *ns, const char *name, cJSON **out,
			struct aj_errors *err);

/*
 * A placement's candidates (status.placement as aj_place_status_json()
 * writes it) as rows of t, which must be empty: RANK, CANDIDATE, BACKEND,
 * WHERE, STATE, WAIT, REASON, after a column with * for the chosen one
 * when `mark` (aj status; aj place shows its pick in a line of its own).
 * Sets t->cols.
 */
void aj_cli_candidates_table(struct aj_cli_table *t, const cJSON *placement, int mark);

/* A copy of obj without metadata.managedFields (kubectl hides them too); NULL on OOM. */
cJSON *aj_cli_printable(const cJSON *obj);
/* Print that copy as yaml or json. 0 / -1. */
int aj_cli_print_object(const cJSON *obj, enum aj_cli_format format, struct aj_errors *err);
/*
 * Follow the AjJob ns/name until it ends, a line per phase; `phase` is the
 * one already shown (NULL: none). Returns the exit status, -1 with err.
 */
int aj_cli_kube_wait_job(struct aj_kube *k, const char *ns, const char *name,
			 const char *phase, struct aj_errors *err);

/* Logs of the AjJob ns/name (cli_logs.c): see aj logs --help. */
struct aj_cli_logs_opts {
	const char *task;        /* NULL: all */
	long rank;               /* -1: all */
	int follow, timestamps, previous;
	long tail;               /* -1: all */
	long since;              /* seconds; 0: all */
};
/*
 * Print the logs; with follow, until the AjJob ends (then *phase, when not
 * NULL, is its final phase, owned by the caller) or Ctrl-C. Returns an exit
 * status (130 when interrupted), -1 with err filled.
 */
int aj_cli_logs_follow(struct aj_kube *k, const char *ns, const char *name,
		       const struct aj_cli_logs_opts *lo, char **phase, struct aj_errors *err);
/* A line about the logs on stderr ("aj: ..."), after the log lines so far (cli_output.c). */
void aj_cli_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * The exit status of a logs reader that returned rc (0 or -1): 130 when
 * interrupted, an error when stdout could not be written, 1 when some
 * logs could not be read (cli_output.c).
 */
int aj_cli_logs_exit(int rc, int interrupted, int write_failed, int failed, struct aj_errors *err);
/*
 * The same for an AjJob (job: as read) whose backend runs outside the
 * cluster: its Azure ML job's log files (cli_logs_aml.c). Without an Azure
 * ML job yet (aj_cli_logs_azure_known) it says so and returns at once: a
 * follower waits for one first.
 */
int aj_cli_logs_azure(const cJSON *job, const struct aj_cli_logs_opts *lo, char **phase,
		      struct aj_errors *err);
/* Has the controller forwarded the AjJob: does status.azure name its job and workspace? */
int aj_cli_logs_azure_known(const cJSON *job);

#endif
