/*
 * ajjob.h - the AjJob contract: what `aj run` writes and the controller
 * reads, in one module so the two cannot drift apart.
 *
 * An AjJob's spec carries the leaf template as written (spec.template,
 * named spec.name), every other file its base chain read (spec.components,
 * keyed by canonical name), the command (one item per argument), the
 * resolved shape (spec.nodes, processes, processesPerNode; omitted for a
 * heterogeneous job) and the code it takes (spec.code.digest, spec.code.uri).
 * aj_ajjob_write() produces that object from a resolved template and its
 * JobSpec; aj_bundle_read() reads a spec back into a template source that
 * resolves exactly as the CLI did (the controller may chain it with
 * AjTemplate objects for bases the bundle lacks: AjJobs written by hand).
 * The phases and condition types of the status are here too, so the CLI
 * and the controller name them through one enum, and the status reads
 * both make (when a condition became True, status.placement). docs/api.md describes the
 * fields; crd/ holds the schema. Core types only.
 *
 * Ownership: aj_ajjob_write() returns a new cJSON object (cJSON_Delete);
 * aj_bundle owns its source, strings and command; aj_bundle_release()
 * frees them.
 */
#ifndef AJ_AJJOB_H
#define AJ_AJJOB_H

#include <cjson/cJSON.h>

#include "jobspec.h"
#include "source.h"
#include "strlist.h"

struct aj_errors;
struct aj_node;
struct aj_template;

/* The API group and version of both kinds (crd/). */
#define AJ_AJJOB_GROUP "aj.dev"
#define AJ_AJJOB_VERSION "v1alpha1"
#define AJ_AJJOB_API_VERSION AJ_AJJOB_GROUP "/" AJ_AJJOB_VERSION
#define AJ_AJJOB_KIND "AjJob"
#define AJ_AJJOB_PLURAL "ajjobs"
#define AJ_AJTEMPLATE_KIND "AjTemplate"
#define AJ_AJTEMPLATE_PLURAL "ajtemplates"
/* How kubectl and aj name one AjJob: ajjob.aj.dev/NAME. */
#define AJ_AJJOB_RESOURCE "ajjob." AJ_AJJOB_GROUP
/* The annotation that asks the controller to cancel a job ("true"). */
#define AJ_CANCEL_ANNOTATION AJ_AJJOB_GROUP "/cancel"
/* spec: seconds a finished AjJob is kept before the controller deletes it (0: keep it) */
#define AJ_AJJOB_TTL "ttlSecondsAfterFinished"
#define AJ_AJJOB_TTL_MAX 2147483647L

/*
 * status.phase: Pending → Submitted → Running → Succeeded | Failed, and
 * from any of the first three Cancelling → Cancelled (docs/api.md draws
 * it). A phase never goes back: aj_phase_rank() orders them.
 */
enum aj_phase {
	AJ_PHASE_PENDING,
	AJ_PHASE_SUBMITTED,
	AJ_PHASE_RUNNING,
	AJ_PHASE_SUCCEEDED,
	AJ_PHASE_FAILED,
	AJ_PHASE_CANCELLED,
	AJ_PHASE_CANCELLING
};
#define AJ_PHASES 7
/* Every phase's name, in enum order, then NULL. */
extern const char *const aj_phase_names[AJ_PHASES + 1];

const char *aj_phase_name(enum aj_phase p);
/* 0 and *out set, or -1 for an unknown name (NULL included). */
int aj_phase_parse(const char *s, enum aj_phase *out);
int aj_phase_terminal(enum aj_phase p);
/* Pending 0 < Submitted 1 < Running 2 < Cancelling 3 < the terminal ones 4. */
int aj_phase_rank(enum aj_phase p);

/* The condition types of status.conditions, in the order written. */
enum aj_condition {
	AJ_COND_SUBMITTED,
	AJ_COND_RUNNING,
	AJ_COND_SUCCEEDED,
	AJ_COND_FAILED,
	AJ_COND_RESTARTING,
	AJ_COND_SUSPENDED,
	AJ_COND_UNSCHEDULABLE
};
#define AJ_STATUS_CONDITIONS 7
extern const char *const aj_status_conditions[AJ_STATUS_CONDITIONS];

/* status.placement: a placement AjJob's candidates, choice and attempts (docs/placement.md) */
#define AJ_STATUS_PLACEMENT "placement"

/* Condition `type` of status (status.conditions[]), or NULL. */
const cJSON *aj_status_condition(const cJSON *status, const char *type);
/*
 * When condition `type` of status became True (its lastTransitionTime, Unix
 * seconds); 0 when it is not True or says no valid time.
 */
long long aj_status_true_since(const cJSON *status, const char *type);

/*
 * The AjJob for a resolved template and its JobSpec (spec->command is the
 * command; the shape and spec->code.digest come from spec), named `name`
 * in namespace `ns`, with `code_uri` (aml, sing: the uploaded code's
 * datastore path) or NULL. NULL on failure, err filled.
 */
cJSON *aj_ajjob_write(const char *name, const char *ns, const struct aj_template *tpl,
		      const struct aj_jobspec *spec, const char *code_uri,
		      struct aj_errors *err);

/*
 * The AjJob of a placement leaf (core/placement.h): the leaf as
 * spec.template, and in spec.components the leaf's other files and every
 * file of each candidate in cands (nr of them, each once, a candidate's
 * leaf among them), so the controller resolves each candidate from the
 * bundle as `aj run -t CANDIDATE` would. The shape is only what the
 * command line gave (`given`, 0: not given): each candidate resolves the
 * rest from its own template. NULL on failure, err filled.
 */
cJSON *aj_ajjob_write_placement(const char *name, const char *ns, const struct aj_template *leaf,
				const struct aj_template *const *cands, size_t nr,
				const struct aj_shape_args *given, const struct aj_strlist *command,
				const char *digest, const char *code_uri, struct aj_errors *err);

/* Set the AjJob's spec.ttlSecondsAfterFinished (0 .. AJ_AJJOB_TTL_MAX). 0 / -1 (OOM). */
int aj_ajjob_set_ttl(cJSON *ajjob, long seconds);

/* An AjJob's spec as read back: the inputs of the pipeline. */
struct aj_bundle {
	struct aj_source source;   /* leaf + components */
	int has_source;
	char *leaf;                /* canonical leaf name (spec.name) */
	struct aj_shape_args args; /* spec.nodes / processes / processesPerNode */
	struct aj_strlist command; /* spec.command */
	char *code_digest;         /* spec.code.digest, or NULL */
	char *code_uri;            /* spec.code.uri, or NULL */
};

void aj_bundle_init(struct aj_bundle *b);
void aj_bundle_release(struct aj_bundle *b);

/*
 * Read an AjJob's spec (a tree, e.g. from aj_node_from_cjson). `origin`
 * names the object in messages ("AjJob training/bert-1"). Collects every
 * problem with its key path (spec.components["x"]: invalid name); -1 if any.
 */
int aj_bundle_read(struct aj_bundle *b, const struct aj_node *spec,
		   const char *origin, struct aj_errors *err);

#endif
