/*
 * cli_run.c - `aj run`, `aj render` and `aj place`: one pipeline,
 * different ends.
 *
 * Both resolve the template, convert it to a JobSpec with the command line's
 * shape and let the backend validate it. run then creates the AjJob custom
 * resource for the controller (cli_submit.c, in aj-net), prints it with
 * --dry-run, or hands an amlt config to amlt; render prints what the
 * backend would create, the JobSpec, or the amlt config; place ranks a
 * placement leaf's candidates (cli_place.c, in aj-net). None archives
 * the tree for the code digest unless --digest asks: they show
 * AJ_CODE_DIGEST_PLACEHOLDER, so their time does not grow with the tree.
 */
#include <errno.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend/backend.h"
#include "backend/common.h"
#include "cli.h"
#include "core/ajjob.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/json.h"
#include "core/node.h"
#include "core/placement.h"
#include "core/resolve.h"
#include "core/source.h"
#include "core/yaml.h"

extern char **environ;

#define NAME_MAX_LEN 63           /* an RFC 1123 label */
/* Derived names stay short: backends build pod and service names from them. */
#define NAME_PREFIX_MAX 40

void aj_cli_pipeline_init(struct aj_cli_pipeline *p)
{
	memset(p, 0, sizeof(*p));
	p->ttl = -1;
	p->cmd = "run";
	aj_pipeline_init(&p->pl);
	aj_candidates_init(&p->cands);
	p->lead = &p->pl;
}

static void pipeline_release(struct aj_cli_pipeline *p)
{
	aj_free(p->name);
	aj_free(p->code_uri);
	aj_candidates_release(&p->cands);
	aj_pipeline_release(&p->pl);
	aj_source_release(&p->src);
}

/*
 * The first job's name made into a label that starts with a letter, plus "-"
 * and a random suffix so that repeated runs of one template do not collide.
 */
static char *derive_name(const char *job, struct aj_errors *err)
{
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);
	char *out;

	for (; job && *job && b.len < NAME_PREFIX_MAX; job++) {
		char c = *job;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')))
			c = '-';
		if (c == '-' && (!b.len || b.buf[b.len - 1] == '-'))
			continue;
		if (!b.len && c >= '0' && c <= '9')
			aj_buf_addstr(&b, "aj-");
		aj_buf_addch(&b, c);
	}
	while (b.len && b.buf[b.len - 1] == '-')
		b.buf[--b.len] = '\0';
	if (!b.len)
		aj_buf_addstr(&b, "aj");
	if (aj_cli_name_suffix(&b, err)) {
		aj_buf_release(&b);
		return NULL;
	}
	out = aj_buf_detach(&b, NULL);
	if (!out)
		aj_errors_oom(err);
	return out;
}

/* Command-line problems both commands share; AJ_EXIT_OK when none. */
static int check_usage(const struct aj_cli_command *cmd, const struct aj_cli_opts *o)
{
	if (!o->template_name)
		return aj_cli_usage_error(cmd->name, "no template: use -t NAME (try aj %s --help)",
					  cmd->name);
	if (o->name && !aj_dns_label(o->name, NAME_MAX_LEN))
		return aj_cli_usage_error(cmd->name,
					  "--name: '%s' is not a valid name (lowercase letters, digits and '-', at most 63, alphanumeric at both ends)",
					  o->name);
	if (o->namespace_ && !aj_dns_label(o->namespace_, NAME_MAX_LEN))
		return aj_cli_usage_error(cmd->name, "--namespace: '%s' is not a valid namespace",
					  o->namespace_);
	return AJ_EXIT_OK;
}

static int same_ignore(const struct aj_strlist *a, const struct aj_strlist *b)
{
	size_t i;

	for (i = 0; a->nr == b->nr && i < a->nr; i++)
		if (strcmp(a->items[i], b->items[i]))
			return 0;
	return a->nr == b->nr;
}

/* The candidate that ships code with the first digest, or NULL. */
static const struct aj_pipeline *first_code(const struct aj_candidates *c)
{
	size_t i;

	for (i = 0; i < c->nr; i++)
		if (c->items[i].ok && c->items[i].p.spec.code.digest)
			return &c->items[i].p;
	return NULL;
}

int aj_cli_candidates_one_code(const struct aj_candidates *c, struct aj_errors *err)
{
	const struct aj_pipeline *first = first_code(c);
	size_t i;

	for (i = 0; first && i < c->nr; i++)
		if (c->items[i].ok && c->items[i].p.spec.code.digest &&
		    strcmp(c->items[i].p.spec.code.digest, first->spec.code.digest))
			return aj_errors_add(err, NULL, "candidates %s and %s take different code "
					     "(config.code.ignore differs): one AjJob carries one",
					     first->tpl.name, c->items[i].p.tpl.name);
	return 0;
}

/*
 * The digest of every candidate that ships code, archived again only for
 * other ignore rules; they must agree (aj_cli_candidates_one_code).
 */
static int candidates_digest(struct aj_candidates *c, enum aj_cli_digest digest,
			     struct aj_errors *err)
{
	const char *same;
	size_t i, j;

	for (i = 0; i < c->nr; i++) {
		struct aj_pipeline *pl = &c->items[i].p;

		if (!c->items[i].ok || pl->backend->code_route(&pl->spec) == AJ_CODE_NONE)
			continue;
		/* the digest of an earlier candidate that archives the same files */
		same = digest == AJ_CLI_DIGEST_PLACEHOLDER ? AJ_CODE_DIGEST_PLACEHOLDER : NULL;
		for (j = 0; j < i && !same; j++)
			if (c->items[j].ok && c->items[j].p.spec.code.digest &&
			    same_ignore(&c->items[j].p.spec.code.ignore, &pl->spec.code.ignore))
				same = c->items[j].p.spec.code.digest;
		if (same ? aj_pipeline_set_code(pl, same, err) : aj_cli_code_digest(pl, err))
			return -1;
	}
	return aj_cli_candidates_one_code(c, err);
}

/*
 * A placement leaf: its candidates, each loaded as `aj run -t CANDIDATE`
 * would load it, in the AjJob's namespace (--namespace, else the first
 * valid candidate's target.namespace: then loaded again with it, so that
 * one in another namespace is left out as the controller leaves it out).
 */
static int load_placement(const struct aj_cli_opts *o, struct aj_pipeline_in *in,
			  enum aj_cli_digest digest, struct aj_cli_pipeline *p,
			  struct aj_errors *err)
{
	const char *ns = NULL;
	size_t i;

	if (o->amlt)
		return aj_errors_add(err, &(struct aj_where){ .file = p->pl.tpl.display,
				     .path = "config.placement" },
				     "%s chooses among candidate templates: amlt takes one (--amlt)",
				     p->pl.tpl.name);
	p->given = o->shape;
	in->namespace_ = o->namespace_;
	if (aj_candidates_load(in, &p->pl.tpl, &p->cands, err))
		return -1;
	for (i = 0; !o->namespace_ && !ns && i < p->cands.nr; i++)
		if (p->cands.items[i].ok &&
		    p->cands.items[i].p.backend->target == AJ_TARGET_CLUSTER)
			ns = p->cands.items[i].p.spec.target.namespace_;
	if (ns) {
		char *keep = aj_strdup(ns);

		if (!keep)
			return aj_errors_oom(err);
		aj_candidates_release(&p->cands);
		in->namespace_ = keep;
		i = (size_t)aj_candidates_load(in, &p->pl.tpl, &p->cands, err);
		aj_free(keep);
		if (i)
			return -1;
	}
	for (i = 0; i < p->cands.nr; i++)
		if (!p->cands.items[i].ok)
			aj_cli_print_warnings(p->cmd, p->cands.items[i].name, &p->cands.items[i].why);
	for (i = 0; p->lead == &p->pl; i++)
		if (p->cands.items[i].ok)
			p->lead = &p->cands.items[i].p;
	return digest == AJ_CLI_DIGEST_NONE ? 0 : candidates_digest(&p->cands, digest, err);
}

int aj_cli_pipeline_load(const struct aj_cli_opts *o, const char *canonical,
			 enum aj_cli_digest digest, struct aj_cli_pipeline *p,
			 struct aj_errors *err)
{
	struct aj_pipeline_in in = { &p->src, canonical, &o->shape, o->argv, o->argc,
				     NULL, NULL, NULL };
	const struct aj_jobspec *spec = &p->pl.spec;
	struct aj_where w;

	if (aj_cli_open_home(&p->src, err) || aj_pipeline_resolve(&in, &p->pl, err))
		return -1;
	if (p->placement_only && !aj_placement_declared(p->pl.tpl.config))
		return aj_errors_add(err, NULL, "%s declares no placement: aj %s ranks a placement "
				     "leaf's candidates", p->pl.tpl.name, p->cmd);
	if (aj_placement_declared(p->pl.tpl.config)) {
		if (load_placement(o, &in, digest, p, err))
			return -1;
		spec = &p->lead->spec;
	} else if (aj_pipeline_load(&in, &p->pl, err)) {
		return -1;
	}
	if (o->amlt && spec->heterogeneous) {
		aj_node_where(aj_node_get(p->pl.tpl.config, "jobs"), "config.jobs[0].sku", &w);
		return aj_errors_add(err, &w,
				     "heterogeneous jobs cannot be handed to amlt (--amlt)");
	}
	/* amlt takes the tree itself: no digest names it */
	if (!o->amlt && digest != AJ_CLI_DIGEST_NONE && !p->cands.nr &&
	    p->pl.backend->code_route(spec) != AJ_CODE_NONE &&
	    (digest == AJ_CLI_DIGEST_COMPUTE ? aj_cli_code_digest(&p->pl, err) :
	     aj_pipeline_set_code(&p->pl, AJ_CODE_DIGEST_PLACEHOLDER, err)))
		return -1;
	p->name = o->name ? aj_strdup(o->name) :
		  derive_name(spec->jobs_nr ? spec->jobs[0].name : NULL, err);
	if (!p->name)
		return o->name ? aj_errors_oom(err) : -1;
	/* The AjJob lives where its objects go unless told otherwise. */
	p->namespace_ = o->namespace_ ? o->namespace_ :
			spec->target.namespace_ ? spec->target.namespace_ : "default";
	p->ttl = o->ttl;
	return 0;
}

/*
 * One argument of the user command as amlt must see it: shell-quoted, and
 * every '$' doubled because amlt expands $NAME in commands itself.
 */
static int amlt_word(struct aj_buf *line, const char *arg)
{
	struct aj_buf quoted = AJ_BUF_INIT(AJ_BUF_LARGE);
	const char *c;
	int rc = aj_shell_quote(&quoted, arg);

	for (c = aj_buf_cstr(&quoted); !rc && *c; c++)
		rc = *c == '$' ? aj_buf_addstr(line, "$$") : aj_buf_addch(line, *c);
	aj_buf_release(&quoted);
	return rc;
}

/*
 * The amlt config: the resolved config without _extra, the first job's SKU
 * resolved and the user command appended to its commands as one quoted line.
 */
static cJSON *amlt_config(const struct aj_cli_pipeline *p, const struct aj_cli_opts *o,
			  struct aj_errors *err)
{
	struct aj_node *copy = aj_node_copy(p->pl.tpl.config), *jobs, *job, *cmds;
	struct aj_buf line = AJ_BUF_INIT(AJ_BUF_LARGE);
	cJSON *out = NULL;
	size_t i;

	if (!copy)
		goto oom;
	aj_node_remove(copy, "_extra");
	jobs = aj_node_get(copy, "jobs");
	job = jobs && jobs->type == AJ_NODE_SEQ && jobs->nr ? jobs->items[0] : NULL;
	if (job && job->type == AJ_NODE_MAP) {
		if (p->pl.spec.sku &&
		    aj_node_set(job, "sku", 3,
				aj_node_new_string(p->pl.spec.sku, strlen(p->pl.spec.sku), NULL),
				NULL))
			goto oom;
		cmds = aj_node_get(job, "command");
		if (o->argc && (!cmds || cmds->type != AJ_NODE_SEQ)) {
			if (aj_node_set(job, "command", 7, aj_node_new(AJ_NODE_SEQ, NULL),
					NULL))
				goto oom;
			cmds = aj_node_get(job, "command");
		}
		for (i = 0; i < o->argc; i++)
			if ((i && aj_buf_addch(&line, ' ')) || amlt_word(&line, o->argv[i]))
				goto oom;
		if (line.failed ||
		    (o->argc && aj_node_append(cmds, aj_node_new_string(aj_buf_cstr(&line),
									line.len, NULL))))
			goto oom;
	}
	out = aj_node_to_cjson(copy);
	if (!out)
		goto oom;
	goto done;
oom:
	aj_errors_oom(err);
done:
	aj_buf_release(&line);
	aj_node_free(copy);
	return out;
}

/* A placement's AjJob: the leaf, every valid candidate's files, the shape as given. */
static cJSON *placement_ajjob(const struct aj_cli_pipeline *p, struct aj_errors *err)
{
	const struct aj_template *tpls[AJ_PLACEMENT_MAX_CANDIDATES];
	const struct aj_pipeline *code = first_code(&p->cands);
	size_t i, nr = 0;

	for (i = 0; i < p->cands.nr && nr < AJ_PLACEMENT_MAX_CANDIDATES; i++)
		if (p->cands.items[i].ok)
			tpls[nr++] = &p->cands.items[i].p.tpl;
	return aj_ajjob_write_placement(p->name, p->namespace_, &p->pl.tpl, tpls, nr,
					&p->given, &p->lead->spec.command,
					code ? code->spec.code.digest : NULL, p->code_uri, err);
}

cJSON *aj_cli_pipeline_ajjob(const struct aj_cli_pipeline *p, struct aj_errors *err)
{
	cJSON *job = p->cands.nr ? placement_ajjob(p, err) :
		     aj_ajjob_write(p->name, p->namespace_, &p->pl.tpl, &p->pl.spec, p->code_uri,
				    err);

	if (job && p->ttl >= 0 && aj_ajjob_set_ttl(job, p->ttl)) {
		cJSON_Delete(job);
		aj_errors_oom(err);
		return NULL;
	}
	return job;
}

/* Look for an executable `name` on $PATH. */
static int on_path(const char *name)
{
	const char *path = getenv("PATH"), *p, *end;
	struct aj_buf b = AJ_BUF_INIT(PATH_MAX);
	int found = 0;

	for (p = path ? path : ""; *p && !found; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (end == p)
			continue;
		aj_buf_reset(&b);
		aj_buf_add(&b, p, (size_t)(end - p));
		aj_buf_addf(&b, "/%s", name);
		found = !b.failed && !access(aj_buf_cstr(&b), X_OK);
	}
	aj_buf_release(&b);
	return found;
}

static int write_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t n = write(fd, data, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Write the amlt config to a temporary file and run `amlt run FILE NAME`. */
static int amlt_submit(const struct aj_cli_pipeline *p, const cJSON *config,
		       struct aj_errors *err)
{
	struct aj_buf yaml = AJ_BUF_INIT(AJ_BUF_LARGE), path = AJ_BUF_INIT(PATH_MAX);
	const char *tmp = getenv("TMPDIR");
	char *argv[5];
	pid_t pid;
	int fd = -1, status, rc = -1;

	if (!on_path("amlt"))
		return aj_errors_add(err, NULL,
				     "amlt is not on PATH: install amlt, or print the config with --dry-run --amlt");
	if (aj_yaml_emit(config, &yaml, err))
		goto out;
	aj_buf_addf(&path, "%s/aj-amlt-XXXXXX.yaml", tmp && *tmp ? tmp : "/tmp");
	if (path.failed) {
		aj_errors_oom(err);
		goto out;
	}
	fd = mkstemps(path.buf, 5);
	if (fd < 0) {
		aj_errors_add(err, NULL, "cannot create a temporary file in %s: %s",
			      tmp && *tmp ? tmp : "/tmp", strerror(errno));
		goto out;
	}
	rc = write_all(fd, yaml.buf, yaml.len);
	if (close(fd))
		rc = -1;
	fd = -1;
	if (rc) {
		aj_errors_add(err, NULL, "cannot write %s: %s", path.buf, strerror(errno));
		goto unlink;
	}
	rc = -1;
	argv[0] = "amlt";
	argv[1] = "run";
	argv[2] = path.buf;
	argv[3] = p->name;
	argv[4] = NULL;
	errno = posix_spawnp(&pid, "amlt", NULL, NULL, argv, environ);
	if (errno) {
		aj_errors_add(err, NULL, "cannot start amlt: %s", strerror(errno));
		goto unlink;
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR) {
			aj_errors_add(err, NULL, "waiting for amlt: %s", strerror(errno));
			goto unlink;
		}
	}
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		rc = 0;
	else
		aj_errors_add(err, NULL, "amlt run failed (exit status %d)",
			      WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
unlink:
	unlink(path.buf);
out:
	if (fd >= 0)
		close(fd);
	aj_buf_release(&path);
	aj_buf_release(&yaml);
	return rc;
}

int aj_cli_pipeline_build(const struct aj_cli_pipeline *p, int preview, cJSON **out,
			  struct aj_errors *err)
{
	struct aj_build_ctx ctx;

	cJSON *more;
	size_t i;

	memset(&ctx, 0, sizeof(ctx));
	ctx.job_name = p->name;
	ctx.namespace_ = p->namespace_;
	ctx.preview = preview;
	if (aj_pipeline_build(p->lead, &ctx, out, err))
		return -1;
	/* the other candidates' objects after the lead's, as the controller may build any */
	for (i = 0; i < p->cands.nr; i++) {
		if (!p->cands.items[i].ok || &p->cands.items[i].p == p->lead)
			continue;
		if (aj_pipeline_build(&p->cands.items[i].p, &ctx, &more, err)) {
			cJSON_Delete(*out);
			*out = NULL;
			return -1;
		}
		while (cJSON_GetArraySize(more))
			cJSON_AddItemToArray(*out, cJSON_DetachItemFromArray(more, 0));
		cJSON_Delete(more);
	}
	return 0;
}

int aj_cli_pipeline_finish(int rc, struct aj_errors *err, struct aj_cli_pipeline *p,
			   char *canonical)
{
	aj_cli_print_errors(err);
	aj_errors_release(err);
	pipeline_release(p);
	aj_free(canonical);
	return rc < 0 ? AJ_EXIT_FAIL : rc;
}

/*
 * Submitting goes to aj-net (cli_submit.c); what stays here is offline:
 * --dry-run prints the AjJob, --amlt hands the config to amlt. The objects
 * are built and thrown away first, as the controller will build them from
 * the AjJob (object name limits, for one).
 */
static int run(const struct aj_cli_opts *o)
{
	const struct aj_cli_command *cmd = &aj_cli_run;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_cli_pipeline p;
	char *canonical;
	cJSON *doc = NULL;
	int rc = check_usage(cmd, o);

	if (rc)
		return rc;
	if ((o->wait || o->follow) && (o->dry_run || o->amlt))
		return aj_cli_usage_error(cmd->name, "%s follows a submitted AjJob: "
					  "it excludes --dry-run and --amlt",
					  o->wait ? "--wait" : "--follow");
	if (o->wait && o->follow)
		return aj_cli_usage_error(cmd->name, "--wait and --follow exclude each other "
					  "(--follow also ends with the job's result)");
	if (!o->argc || !o->argv[0][0])
		return aj_cli_usage_error(cmd->name, "missing COMMAND (try aj run --help)");
	if (!o->dry_run && !o->amlt)
		return aj_cli_network(cmd, o);
	canonical = aj_cli_template_canonical(cmd->name, o->template_name);
	if (!canonical)
		return AJ_EXIT_USAGE;
	aj_cli_pipeline_init(&p);
	p.cmd = cmd->name;
	/* what --dry-run prints is applied later: its digest must be the real one */
	rc = aj_cli_pipeline_load(o, canonical, AJ_CLI_DIGEST_COMPUTE, &p, &err);
	if (!rc && !o->amlt) {
		rc = aj_cli_pipeline_build(&p, 1, &doc, &err);
		cJSON_Delete(doc);
	}
	if (!rc) {
		doc = o->amlt ? amlt_config(&p, o, &err) : aj_cli_pipeline_ajjob(&p, &err);
		if (!doc)
			rc = -1;
		else if (!o->dry_run)
			rc = amlt_submit(&p, doc, &err);
		else
			rc = aj_cli_print_doc(doc, o->amlt ? AJ_FORMAT_YAML : o->format, &err);
		cJSON_Delete(doc);
	}
	return aj_cli_pipeline_finish(rc, &err, &p, canonical);
}

/* Several objects print as one Kubernetes List so the output stays one document. */
static cJSON *single_document(cJSON *objects, struct aj_errors *err)
{
	cJSON *list, *one;

	if (cJSON_GetArraySize(objects) == 1) {
		one = cJSON_DetachItemFromArray(objects, 0);
		cJSON_Delete(objects);
		return one;
	}
	list = cJSON_CreateObject();
	if (!list || !cJSON_AddStringToObject(list, "apiVersion", "v1") ||
	    !cJSON_AddStringToObject(list, "kind", "List") ||
	    !cJSON_AddItemToObject(list, "items", objects)) {
		cJSON_Delete(list);
		cJSON_Delete(objects);
		aj_errors_oom(err);
		return NULL;
	}
	return list;
}

static int render(const struct aj_cli_opts *o)
{
	const struct aj_cli_command *cmd = &aj_cli_render;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_cli_pipeline p;
	char *canonical;
	cJSON *doc = NULL;
	int rc = check_usage(cmd, o);

	if (rc)
		return rc;
	if (o->amlt && o->jobspec)
		return aj_cli_usage_error(cmd->name, "--amlt and --jobspec exclude each other");
	canonical = aj_cli_template_canonical(cmd->name, o->template_name);
	if (!canonical)
		return AJ_EXIT_USAGE;
	aj_cli_pipeline_init(&p);
	p.cmd = cmd->name;
	rc = aj_cli_pipeline_load(o, canonical, o->digest ? AJ_CLI_DIGEST_COMPUTE :
				  AJ_CLI_DIGEST_PLACEHOLDER, &p, &err);
	if (!rc && o->jobspec) {
		doc = aj_cli_jobspec_json(&p.lead->spec);
		rc = doc ? 0 : aj_errors_oom(&err);
	} else if (!rc && o->amlt) {
		doc = amlt_config(&p, o, &err);
		rc = doc ? 0 : -1;
	} else if (!rc) {
		rc = aj_cli_pipeline_build(&p, 1, &doc, &err);
		if (!rc) {
			doc = single_document(doc, &err);
			rc = doc ? 0 : -1;
		}
	}
	if (!rc)
		rc = aj_cli_print_doc(doc, o->amlt ? AJ_FORMAT_YAML : o->format, &err);
	cJSON_Delete(doc);
	return aj_cli_pipeline_finish(rc, &err, &p, canonical);
}

#define SHAPE_ONLY_HELP \
	"  -t, --template NAME   the template (<home>/template/NAME.yaml)\n" \
	"  -n, --nodes N         node count (else jobs[0].instance_count)\n" \
	"  -p, --processes P     SKU processes per node (else target.gpus_per_node)\n" \
	"      --ppn K           launcher processes per node (else\n" \
	"                        jobs[0].process_count_per_node, then 1)\n"

#define SHAPE_HELP \
	SHAPE_ONLY_HELP \
	"      --namespace NS    Kubernetes namespace of the AjJob (else\n" \
	"                        target.namespace, then the context's namespace;\n" \
	"                        default when nothing is submitted)\n" \
	"      --name NAME       object name (else the first job's name plus a\n" \
	"                        random suffix)\n" \
	"  -o, --output FORMAT   yaml (default) or json\n"

const struct aj_cli_command aj_cli_run = {
	"run",
	"submit a job to the cluster as an AjJob",
	"usage: aj run -t NAME [OPTIONS] [--] COMMAND [ARGS...]\n"
	"\n"
	"Resolve the template, build and validate the job, and create the AjJob\n"
	"resource the controller runs: the leaf template and every file it\n"
	"inherits from, the command (one item per argument, never joined) and\n"
	"the resolved node and process counts. Prints ajjob.aj.dev/NAME created.\n"
	"Options come before COMMAND; everything from COMMAND on is the job's.\n"
	"\n"
	SHAPE_HELP
	"  -d, --dry-run         print the AjJob instead of creating it, ready for\n"
	"                        kubectl apply: the current directory is archived\n"
	"                        for the code digest, as a submission does\n"
	"      --digest          no effect (--dry-run always computes the digest;\n"
	"                        kept for scripts)\n"
	"  -w, --wait            follow the AjJob until it ends, one line per\n"
	"                        phase; exit 0 if it succeeded, 1 if it failed or\n"
	"                        was cancelled. Ctrl-C stops waiting, not the job.\n"
	"  -f, --follow          print the pods' logs as aj logs -f does until the\n"
	"                        job ends; exit 0 if it succeeded, 1 if it failed or\n"
	"                        was cancelled, 130 after Ctrl-C (the job goes on)\n"
	"      --context NAME    kubeconfig context (else target.context, then\n"
	"                        the current context)\n"
	"      --kubeconfig FILE kubeconfig (else $KUBECONFIG, ~/.kube/config)\n"
	"      --amlt            hand the resolved config (without _extra) to\n"
	"                        `amlt run`; with --dry-run print it instead\n"
	"  -q, --quiet           no progress line while the code is archived and\n"
	"                        sent (there is one only on a terminal)\n"
	"      --ttl DURATION    the controller deletes the AjJob this long after\n"
	"                        it finished (90s, 5m, 1h30m; 0 keeps it, whatever\n"
	"                        the controller's default)\n",
	AJ_OPT_TEMPLATE | AJ_OPT_NODES | AJ_OPT_PROCESSES | AJ_OPT_PPN |
	AJ_OPT_NAMESPACE | AJ_OPT_NAME | AJ_OPT_DRY_RUN | AJ_OPT_OUTPUT | AJ_OPT_AMLT |
	AJ_OPT_CONTEXT | AJ_OPT_KUBECONFIG | AJ_OPT_WAIT | AJ_OPT_DIGEST | AJ_OPT_QUIET |
	AJ_OPT_FOLLOW | AJ_OPT_TTL,
	AJ_ARGS_COMMAND,
	run
};

const struct aj_cli_command aj_cli_render = {
	"render",
	"print what the backend would create for a job",
	"usage: aj render -t NAME [OPTIONS] [--] [COMMAND [ARGS...]]\n"
	"\n"
	"Run the same pipeline as `aj run` and print the backend's output: the\n"
	"Volcano Job (a List when there are several objects) or the Azure ML\n"
	"request body for aml and sing. Where the job ships code, its digest shows\n"
	"as \"" AJ_CODE_DIGEST_PLACEHOLDER "\" unless --digest: the current\n"
	"directory is not read.\n"
	"\n"
	SHAPE_HELP
	"      --digest          archive the current directory for the code digest,\n"
	"                        as aj run does\n"
	"      --jobspec         print the typed job spec instead\n"
	"      --amlt            print the amlt config (resolved, without _extra)\n",
	AJ_OPT_TEMPLATE | AJ_OPT_NODES | AJ_OPT_PROCESSES | AJ_OPT_PPN |
	AJ_OPT_NAMESPACE | AJ_OPT_NAME | AJ_OPT_OUTPUT | AJ_OPT_AMLT | AJ_OPT_JOBSPEC |
	AJ_OPT_DIGEST,
	AJ_ARGS_COMMAND,
	render
};

/* The offline checks here, the ranking in aj-net (cli_place.c). */
static int place(const struct aj_cli_opts *o)
{
	int rc = check_usage(&aj_cli_place, o);

	return rc ? rc : aj_cli_network(&aj_cli_place, o);
}

const struct aj_cli_command aj_cli_place = {
	"place",
	"rank a placement template's candidates as the controller would now",
	"usage: aj place -t NAME [OPTIONS] [--] [COMMAND [ARGS...]]\n"
	"\n"
	"Load the candidates of the placement template NAME as `aj run -t NAME`\n"
	"would (the same shape, command and namespace), read the cluster once\n"
	"(nodes, pods, Volcano queues, Kueue queues) and the expected waits of\n"
	"the AjJobs of the namespace, and print the ranking aj-controller would\n"
	"make now: one row per candidate (RANK, CANDIDATE, BACKEND, WHERE, STATE,\n"
	"WAIT, REASON), then the candidate it would submit to, or that the job\n"
	"would wait unplaced. Nothing is created and no code is read or sent.\n"
	"Azure candidates show Unknown: no Azure capacity is read for placement.\n"
	"\n"
	SHAPE_ONLY_HELP
	"      --namespace NS    namespace of the AjJob (else target.namespace,\n"
	"                        then the context's)\n"
	"      --context NAME    kubeconfig context (else target.context, then\n"
	"                        the current context)\n"
	"      --kubeconfig FILE kubeconfig (else $KUBECONFIG, ~/.kube/config)\n"
	"  -o, --output FORMAT   json or yaml: the ranking as the AjJob's\n"
	"                        status.placement says it (chosen: the pick)\n"
	"\n"
	"Exit status: 0 (whatever the pick), 1 when the template is no placement\n"
	"or the cluster cannot be read, 2 usage error.\n",
	AJ_OPT_TEMPLATE | AJ_OPT_NODES | AJ_OPT_PROCESSES | AJ_OPT_PPN | AJ_OPT_NAMESPACE |
	AJ_OPT_OUTPUT | AJ_OPT_CONTEXT | AJ_OPT_KUBECONFIG,
	AJ_ARGS_COMMAND,
	place
};
