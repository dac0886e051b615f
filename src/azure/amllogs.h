/*
 * amllogs.h - which log files of an Azure ML / Singularity job `aj logs`
 * shows, in what order and under what prefix, and how a file is followed:
 * the decisions, without I/O (the requests are in runhistory.h).
 *
 * The run history lists a job's files as logFiles (name -> SAS URL), as
 * `az ml job stream` reads them. Shown are the user's output files,
 * user_logs/std_log*.txt (one per process: std_log.txt, or
 * std_log_process_N.txt, std_log_worker_N.txt ...); a job without any
 * falls back to the older runtime's azureml-logs/NN_*.txt. Each file is
 * read from the offset already shown on (HTTP Range, in pieces of
 * AJ_AMLLOGS_CHUNK), cut into lines bounded by core/logline.h, and its
 * lines prefixed "[label] ": the rank for std_log_process_N / rank_N (0 for
 * std_log.txt), else the file's role (worker-1, ps-0, 70_driver_log).
 *
 * Ownership: a struct aj_amllogs owns its files and their strings
 * (aj_amllogs_release); logFiles objects are borrowed.
 */
#ifndef AJ_AZURE_AMLLOGS_H
#define AJ_AZURE_AMLLOGS_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "core/buf.h"
#include "core/logline.h"

struct aj_errors;

/* Bytes asked for in one ranged read: bounded memory per request. */
#define AJ_AMLLOGS_CHUNK (1024u * 1024u)

/* The file's label ("0", "3", "worker-1"); 0, -1 on OOM. */
int aj_amllogs_label(const char *name, struct aj_buf *out);
/* The rank a file's label names, -1 when it names a role, not a rank. */
long aj_amllogs_rank(const char *name);
/* 1 when name is a user output file (user_logs/std_log*.txt). */
int aj_amllogs_is_user_log(const char *name);
/* 1 when name is an older runtime's log (azureml-logs/NN*.txt). */
int aj_amllogs_is_runtime_log(const char *name);
/* Order of files: ranks by number, then roles by name. */
int aj_amllogs_cmp(const char *a, const char *b);

struct aj_amllogs_file {
	char *name;
	char *prefix;              /* "[label] " */
	int64_t offset;            /* bytes shown so far */
	struct aj_logline lines;
	int said_missing;          /* its blob was said not to be there yet */
};

struct aj_amllogs {
	struct aj_amllogs_file *files;   /* sorted by aj_amllogs_cmp */
	size_t nr, alloc;
	long rank;                 /* -1: every file; else only that rank's */
	int runtime;               /* showing the azureml-logs fallback */
};

void aj_amllogs_init(struct aj_amllogs *s, long rank);
void aj_amllogs_release(struct aj_amllogs *s);
/*
 * Take in a run's logFiles: files that qualify and are new are added in
 * order (those already there keep their offsets). The fallback is used
 * only while no user log has been seen. 0, -1 on OOM.
 */
int aj_amllogs_update(struct aj_amllogs *s, const cJSON *log_files, struct aj_errors *err);
/* The file called name, or NULL. */
struct aj_amllogs_file *aj_amllogs_find(struct aj_amllogs *s, const char *name);

/* What a ranged GET's answer means for a file. */
enum aj_amllogs_answer {
	AJ_AMLLOGS_DATA,      /* show body[skip..]; read again at once when *more */
	AJ_AMLLOGS_NOTHING,   /* no byte after the offset yet */
	AJ_AMLLOGS_MISSING,   /* the blob is not there yet (404) */
	AJ_AMLLOGS_REFUSED    /* anything else: an error */
};

/*
 * Judge the answer to "Range: bytes=offset-(offset+chunk-1)": 206 holds
 * the range, 200 the whole file (a server that ignores Range: the bytes
 * before offset are skipped), 416 nothing past the end. *new_offset is the
 * file's offset after showing body[skip..].
 */
enum aj_amllogs_answer aj_amllogs_judge(long status, size_t body_len, int64_t offset,
					size_t chunk, size_t *skip, int64_t *new_offset,
					int *more);

/*
 * Wait before the next look at a followed job, elapsed_ms after the first:
 * the SDK's curve, 2 s at first growing towards 60 s for long jobs.
 */
int64_t aj_amllogs_poll_ms(int64_t elapsed_ms);

#endif
