#include "azure_forward.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "azure/aml.h"
#include "azure/arm.h"
#include "azure/vcselect.h"
#include "backend/azureml.h"
#include "backend/backend.h"
#include "backend/common.h"
#include "cache.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/jobspec.h"
#include "core/strlist.h"
#include "core/json.h"
#include "log.h"
#include "place/read/azure.h"
#include "place/views.h"
#include "place/workspaces.h"
#include "report.h"
#include "status.h"

#define INSTANCE_PREFIX "Singularity."

/* SUB/RG/NAME; in an allow entry any part may be "*". */
struct coords {
	char *sub;
	char *rg;
	char *name;
};

struct entry {
	char *ns;
	int vc;                  /* vc: rather than workspace: */
	struct coords c;
};

struct aj_azure_forwarder {
	struct coords ws;        /* the default workspace */
	struct entry *entries;
	size_t entries_nr, entries_alloc;
	char *arm_endpoint;
	char *ca_file;
	double poll;
	struct aj_token_cache *tokens;   /* the controller's identity (not owned) */
};

/* --- configuration --- */

static void coords_release(struct coords *c)
{
	aj_free(c->sub);
	aj_free(c->rg);
	aj_free(c->name);
	memset(c, 0, sizeof(*c));
}

/* Parse "SUB/RG/NAME" (len bytes of s). 0 / -1 (malformed or OOM). */
static int coords_parse(const char *s, size_t len, struct coords *out)
{
	const char *a = memchr(s, '/', len), *b;

	memset(out, 0, sizeof(*out));
	if (!a || !(b = memchr(a + 1, '/', len - (size_t)(a + 1 - s))) ||
	    memchr(b + 1, '/', len - (size_t)(b + 1 - s)) || a == s || b == a + 1 ||
	    b + 1 == s + len)
		return -1;
	out->sub = aj_strndup(s, (size_t)(a - s));
	out->rg = aj_strndup(a + 1, (size_t)(b - a - 1));
	out->name = aj_strndup(b + 1, len - (size_t)(b + 1 - s));
	if (!out->sub || !out->rg || !out->name) {
		coords_release(out);
		return -1;
	}
	return 0;
}

static int part_matches(const char *pattern, const char *value)
{
	return !strcmp(pattern, "*") || !strcasecmp(pattern, value);
}

static int coords_match(const struct coords *pattern, const char *sub, const char *rg,
			const char *name)
{
	return part_matches(pattern->sub, sub) && part_matches(pattern->rg, rg) &&
	       part_matches(pattern->name, name);
}

/* One "NS=ENTRY,ENTRY" rule. */
static int parse_rule(struct aj_azure_forwarder *f, const char *s, size_t len,
		      struct aj_errors *err)
{
	const char *eq = memchr(s, '=', len), *p, *end = s + len;

	if (!eq || eq == s)
		return aj_errors_add(err, NULL, "--azure-allow: \"%.*s\": expected NS=ENTRY[,ENTRY...]",
				     (int)len, s);
	for (p = eq + 1; p < end;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
		struct entry *e;
		size_t skip;

		if (AJ_GROW(f->entries, f->entries_nr + 1, f->entries_alloc))
			return aj_errors_oom(err);
		e = &f->entries[f->entries_nr];
		memset(e, 0, sizeof(*e));
		if (n > 3 && !strncmp(p, "vc:", 3)) {
			e->vc = 1;
			skip = 3;
		} else if (n > 10 && !strncmp(p, "workspace:", 10)) {
			skip = 10;
		} else {
			return aj_errors_add(err, NULL, "--azure-allow: \"%.*s\": expected "
					     "workspace:SUB/RG/NAME or vc:SUB/RG/NAME", (int)n, p);
		}
		if (coords_parse(p + skip, n - skip, &e->c))
			return aj_errors_add(err, NULL, "--azure-allow: \"%.*s\": expected SUB/RG/NAME "
					     "after the kind", (int)n, p);
		if (!(e->ns = aj_strndup(s, (size_t)(eq - s)))) {
			coords_release(&e->c);
			return aj_errors_oom(err);
		}
		f->entries_nr++;
		p += n + (comma ? 1 : 0);
	}
	return 0;
}

static int parse_allow(struct aj_azure_forwarder *f, const char *allow, struct aj_errors *err)
{
	const char *p = allow;

	while (p && *p) {
		size_t n = strcspn(p, ";");

		if (n && parse_rule(f, p, n, err))
			return -1;
		p += n + (p[n] ? 1 : 0);
	}
	return 0;
}

int aj_azure_allowed(const struct aj_azure_forwarder *f, const char *ns, int vc,
		     const char *sub, const char *rg, const char *name)
{
	size_t i;
	int own = 0;

	for (i = 0; i < f->entries_nr; i++)
		own |= !strcmp(f->entries[i].ns, ns);
	for (i = 0; i < f->entries_nr; i++) {
		const struct entry *e = &f->entries[i];

		if (!strcmp(e->ns, own ? ns : "*") && e->vc == vc && coords_match(&e->c, sub, rg, name))
			return 1;
	}
	return 0;
}

static void arm_log(void *ctx, const char *line)
{
	(void)ctx;
	aj_log(AJ_LOG_DEBUG, "azure", "detail", line, AJ_LOG_END);
}

int aj_azure_forwarder_new(const struct aj_azure_opts *o, struct aj_token_cache *tokens,
			   struct aj_azure_forwarder **out, struct aj_errors *err)
{
	struct aj_azure_forwarder *f = aj_calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return aj_errors_oom(err);
	f->tokens = tokens;
	f->poll = o->poll_seconds > 0 ? o->poll_seconds : 30;
	if (!o->workspace || coords_parse(o->workspace, strlen(o->workspace), &f->ws)) {
		aj_errors_add(err, NULL, "--azure-workspace: \"%s\": expected SUBSCRIPTION/RESOURCE_GROUP/NAME",
			      o->workspace ? o->workspace : "");
		goto fail;
	}
	if (parse_allow(f, o->allow, err))
		goto fail;
	if ((o->arm_endpoint && !(f->arm_endpoint = aj_strdup(o->arm_endpoint))) ||
	    (o->ca_file && !(f->ca_file = aj_strdup(o->ca_file)))) {
		aj_errors_oom(err);
		goto fail;
	}
	*out = f;
	return 0;
fail:
	aj_azure_forwarder_free(f);
	return -1;
}

void aj_azure_forwarder_free(struct aj_azure_forwarder *f)
{
	size_t i;

	if (!f)
		return;
	for (i = 0; i < f->entries_nr; i++) {
		aj_free(f->entries[i].ns);
		coords_release(&f->entries[i].c);
	}
	aj_free(f->entries);
	coords_release(&f->ws);
	aj_free(f->arm_endpoint);
	aj_free(f->ca_file);
	aj_free(f);
}

double aj_azure_poll(const struct aj_azure_forwarder *f)
{
	return f->poll;
}

/* --- placement's view --- */

/* Does some namespace's rule name this VC? */
static int vc_for_someone(const void *ctx, const struct aj_vc *vc)
{
	const struct aj_azure_forwarder *f = ctx;
	size_t i;

	for (i = 0; i < f->entries_nr; i++)
		if (f->entries[i].vc &&
		    coords_match(&f->entries[i].c, vc->subscription, vc->resource_group, vc->name))
			return 1;
	return 0;
}

static int vc_for_ns(const void *ctx, const char *ns, const struct aj_vc *vc)
{
	return aj_azure_allowed(ctx, ns, 1, vc->subscription, vc->resource_group, vc->name);
}

void aj_azure_views_workspace(const void *forwarder, struct aj_place_workspace *out)
{
	const struct aj_azure_forwarder *f = forwarder;

	snprintf(out->subscription, sizeof(out->subscription), "%s", f->ws.sub);
	snprintf(out->resource_group, sizeof(out->resource_group), "%s", f->ws.rg);
	snprintf(out->name, sizeof(out->name), "%s", f->ws.name);
}

int aj_azure_read_views(const void *forwarder, const struct aj_place_workspace *ws, size_t nr,
			struct aj_views_azure *parts)
{
	const struct aj_azure_forwarder *f = forwarder;
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_arm_config c;
	struct aj_arm arm;
	size_t i;
	int rc = 0;

	aj_arm_config_default(&c);
	if (f->arm_endpoint)
		c.endpoint = f->arm_endpoint;
	c.http.ca_file = f->ca_file;
	c.hooks.log = arm_log;
	/* a snapshot shared by every placement waits under a lock: fail fast, read again later */
	c.http.connect_timeout_ms = 3000;
	c.http.timeout_ms = 15000;
	c.retry.max_retries = 1;
	c.retry.max_total_ms = 20000;
	if (aj_arm_init(&arm, &c, f->tokens, &err)) {
		rc = err.oom ? -1 : 0;
		for (i = 0; i < nr; i++)
			aj_views_azure_unknown(&parts[i], "no ARM client");
		aj_errors_release(&err);
		return rc;
	}
	rc = aj_views_read_azure_each(&arm, ws, nr, vc_for_someone, f, parts);
	for (i = 0; i < nr; i++) {
		parts[i].vc_allowed = vc_for_ns;
		parts[i].vc_allowed_ctx = f;
	}
	aj_arm_release(&arm);
	return rc;
}

/* --- one AjJob's calls --- */

struct aj_azure_call {
	const struct aj_azure_forwarder *f;
	const struct aj_ajjob_view *v;
	const char *key;
	struct coords ws;
	struct aj_aml_workspace w;       /* over ws */
	struct aj_buf ws_id, name;       /* the workspace's ARM id, the job's name */
	struct aj_aml_job job;           /* as last read or PUT */
	cJSON *detail;                   /* status.azure of job */
	struct aj_arm arm;
	int arm_open;
	char forbidden[768];
};

static int arm_open(struct aj_azure_call *r, struct aj_errors *err)
{
	struct aj_arm_config c;

	if (r->arm_open)
		return 0;
	aj_arm_config_default(&c);
	if (r->f->arm_endpoint)
		c.endpoint = r->f->arm_endpoint;
	c.http.ca_file = r->f->ca_file;
	c.hooks.log = arm_log;
	if (aj_arm_init(&r->arm, &c, r->f->tokens, err))
		return -1;
	r->arm_open = 1;
	return 0;
}

/* "/subscriptions/S/resourceGroups/R/providers/.../NAME" into c (NAME last). */
static int arm_id_parse(const char *id, struct coords *c)
{
	const char *s, *g, *n;

	memset(c, 0, sizeof(*c));
	if (!id || strncasecmp(id, "/subscriptions/", 15))
		return -1;
	s = id + 15;
	g = strchr(s, '/');
	if (!g || strncasecmp(g, "/resourceGroups/", 16))
		return -1;
	n = strrchr(id, '/') + 1;
	c->sub = aj_strndup(s, (size_t)(g - s));
	c->rg = aj_strndup(g + 16, strcspn(g + 16, "/"));
	c->name = aj_strdup(n);
	if (!c->sub || !c->rg || !c->name || !*c->name) {
		coords_release(c);
		return -1;
	}
	return 0;
}

/* The name of the virtual cluster a compute id names, or NULL (an AML compute). */
static const char *vc_name(const char *compute_id)
{
	const char *p;

	for (p = compute_id; p && *p; p++)
		if (!strncasecmp(p, "/virtualclusters/", 17) && p[17] && !strchr(p + 17, '/'))
			return p + 17;
	return NULL;
}

/* status.azure from what Azure reports about the job. */
static cJSON *azure_status(const char *job_name, const struct aj_aml_job *job, const char *ws_id)
{
	cJSON *az = cJSON_CreateObject();
	const char *vc = vc_name(job->compute_id), *it = job->instance_type;

	if (it && !strncmp(it, INSTANCE_PREFIX, strlen(INSTANCE_PREFIX)))
		it += strlen(INSTANCE_PREFIX);
	if (!az || !cJSON_AddStringToObject(az, "jobName", job->name ? job->name : job_name) ||
	    (job->portal_url && !cJSON_AddStringToObject(az, "portalUrl", job->portal_url)) ||
	    (vc && !cJSON_AddStringToObject(az, "virtualCluster", vc)) ||
	    (job->tier && !cJSON_AddStringToObject(az, "tier", job->tier)) ||
	    (it && !cJSON_AddStringToObject(az, "instanceType", it)) ||
	    !cJSON_AddStringToObject(az, "workspace", ws_id)) {
		cJSON_Delete(az);
		return NULL;
	}
	return az;
}

static int workspace_id(const struct coords *ws, struct aj_buf *out)
{
	struct aj_aml_workspace w = { ws->sub, ws->rg, ws->name, NULL };

	return aj_aml_workspace_id(&w, out);
}

/* --- Singularity: the VC --- */

static int vc_allowed_here(const void *ctx, const struct aj_vc *vc)
{
	const struct aj_azure_call *r = ctx;

	return aj_azure_allowed(r->f, r->v->ns, 1, vc->subscription, vc->resource_group, vc->name);
}

static void vc_unread(const void *ctx, const struct aj_vc *vc, const struct aj_errors *why)
{
	const struct aj_azure_call *r = ctx;
	struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

	aj_errors_format_line(why, &b);
	aj_log(AJ_LOG_WARN, "cannot read virtual cluster quotas", "ajjob", r->key,
	       "virtualCluster", vc->name, "error", aj_buf_cstr(&b), AJ_LOG_END);
	aj_buf_release(&b);
}

/*
 * The VCs the namespace may use among those the credential sees in
 * subscription sub (NULL: every one), with their quotas. 0 / -1 to retry.
 */
static int discover_vcs(struct aj_azure_call *r, const char *sub, struct aj_vc **vcs, size_t *nr,
			struct aj_errors *err)
{
	long status;

	return aj_aml_vcs_read(&r->arm, sub, vc_allowed_here, vc_unread, r, vcs, nr, &status, err);
}

/*
 * Choose the VC for spec. 0 with *choice (over *vcs), 1 when the AjJob
 * cannot run (message in problems), -1 to retry.
 */
static int choose_vc(struct aj_azure_call *r, const struct aj_jobspec *spec, const struct coords *ws,
		     struct aj_vc **vcs, size_t *nr, struct aj_vc_choice *choice,
		     struct aj_errors *problems, struct aj_errors *err)
{
	const struct aj_target *t = &spec->target;
	struct aj_vc_request req = { spec->sku, spec->nodes, spec->processes,
				     spec->jobs[0].sla_tier, t->subscription_id,
				     t->resource_group, t->name, NULL, 0 };
	int ret;

	if (t->name && *t->name) {
		const char *sub = t->subscription_id ? t->subscription_id : ws->sub;
		const char *rg = t->resource_group ? t->resource_group : ws->rg;
		struct aj_errors qerr = AJ_ERRORS_INIT;

		if (!aj_azure_allowed(r->f, r->v->ns, 1, sub, rg, t->name)) {
			aj_errors_add(problems, NULL, "namespace %s may not use virtual cluster %s/%s/%s",
				      r->v->ns, sub, rg, t->name);
			return 1;
		}
		if (!(*vcs = aj_calloc(1, sizeof(**vcs))))
			return aj_errors_oom(err);
		aj_vc_init(*vcs);
		*nr = 1;
		req.subscription = sub;
		req.resource_group = rg;
		if (aj_vc_set(*vcs, sub, rg, t->name))
			return aj_errors_oom(err);
		switch (aj_aml_vc_quotas(&r->arm, *vcs, &qerr)) {
		case 0:
			break;
		case 1:
			aj_errors_add(problems, NULL, "virtual cluster %s/%s/%s not found", sub, rg,
				      t->name);
			return 1;
		default:
			aj_errors_splice(err, &qerr);
			return -1;
		}
	} else if (discover_vcs(r, t->subscription_id, vcs, nr, err)) {
		return -1;
	}
	ret = aj_vc_select(&req, *vcs, *nr, choice, problems) ? 1 : 0;
	if (ret && problems->oom)
		ret = aj_errors_oom(err);
	return ret;
}

/* Point the sing body at the chosen VC, tier and instance type. */
static int place_on_vc(cJSON *props, const struct aj_vc_candidate *c, const char *vc_id)
{
	cJSON *res = cJSON_GetObjectItemCaseSensitive(props, "resources");
	cJSON *sc = cJSON_GetObjectItemCaseSensitive(
		cJSON_GetObjectItemCaseSensitive(res, "properties"), "AISuperComputer");
	struct aj_buf it = AJ_BUF_INIT(AJ_BUF_SMALL);
	cJSON *list;
	int oom = 0;

	if (!res || !sc || aj_buf_addf(&it, INSTANCE_PREFIX "%s", c->instance_type))
		return -1;
	cJSON_DeleteItemFromObjectCaseSensitive(props, "computeId");
	cJSON_DeleteItemFromObjectCaseSensitive(res, "instanceType");
	cJSON_DeleteItemFromObjectCaseSensitive(sc, "instanceType");
	cJSON_DeleteItemFromObjectCaseSensitive(sc, "instanceTypes");
	cJSON_DeleteItemFromObjectCaseSensitive(sc, "slaTier");
	cJSON_DeleteItemFromObjectCaseSensitive(sc, "VirtualClusterArmId");
	aj_body_add_string(props, "computeId", vc_id, &oom);
	aj_body_add_string(res, "instanceType", aj_buf_cstr(&it), &oom);
	aj_body_add_string(sc, "instanceType", aj_buf_cstr(&it), &oom);
	list = aj_body_add_array(sc, "instanceTypes", &oom);
	aj_body_add_string(list, NULL, aj_buf_cstr(&it), &oom);
	aj_body_add_string(sc, "slaTier", aj_tier_name(c->tier), &oom);
	aj_body_add_string(sc, "VirtualClusterArmId", vc_id, &oom);
	aj_buf_release(&it);
	return oom ? -1 : 0;
}

/* Replace key in obj with a string. */
static void put_string(cJSON *obj, const char *key, const char *value, int *oom)
{
	cJSON_DeleteItemFromObjectCaseSensitive(obj, key);
	aj_body_add_string(obj, key, value, oom);
}

/*
 * The datastore named by spec.code.uri, "azureml://datastores/<ds>/paths/
 * AJ_AZUREML_CODE_DIR/<digest>/" as `aj run` records it; NULL (the default
 * datastore) without one. 0, 1 when the AjJob's code reference is wrong
 * (problems), -1 (out of memory).
 */
static int code_datastore(const struct aj_azure_call *r, const char *digest, char **name,
			  struct aj_errors *problems, struct aj_errors *err)
{
	static const char pre[] = "azureml://datastores/";
	const char *uri = aj_json_str(aj_json_get(aj_json_get(r->v->object, "spec"), "code"),
				      "uri"), *p;
	struct aj_buf want = AJ_BUF_INIT(AJ_BUF_SMALL);
	int bad;

	*name = NULL;
	if (!uri)
		return 0;
	p = strncmp(uri, pre, sizeof(pre) - 1) ? NULL : strstr(uri + sizeof(pre) - 1, "/paths/");
	if (aj_buf_addf(&want, "/paths/" AJ_AZUREML_CODE_DIR "/%s/", digest))
		return aj_errors_oom(err);
	bad = !p || p == uri + sizeof(pre) - 1 || strcmp(p, aj_buf_cstr(&want));
	aj_buf_release(&want);
	if (bad) {
		aj_errors_add(problems, NULL, "spec.code.uri: \"%s\" is not azureml://datastores/"
			      "<datastore>/paths/" AJ_AZUREML_CODE_DIR "/%s/ (spec.code.digest)", uri, digest);
		return 1;
	}
	*name = aj_strndup(uri + sizeof(pre) - 1, (size_t)(p - uri - (sizeof(pre) - 1)));
	return *name ? 0 : aj_errors_oom(err);
}

/*
 * The code `aj run` uploaded: register version <digest> of code
 * AJ_AZUREML_CODE_NAME on its folder (GET first, so only the first job with
 * that code creates it) and point codeId at it. 0, 1 (problems), -1.
 */
static int reference_code(struct aj_azure_call *r, const struct aj_aml_workspace *w, const char *digest,
			  cJSON *props, struct aj_errors *problems, struct aj_errors *err)
{
	struct aj_aml_datastore ds;
	struct aj_buf dir = AJ_BUF_INIT(AJ_BUF_SMALL), uri = AJ_BUF_INIT(AJ_BUF_SMALL);
	char *name = NULL, *id = NULL;
	int oom = 0, ret;

	memset(&ds, 0, sizeof(ds));
	ret = code_datastore(r, digest, &name, problems, err);
	if (!ret) {
		struct aj_errors derr = AJ_ERRORS_INIT;

		ret = aj_aml_datastore_get(&r->arm, w, name, &ds, &derr);
		aj_errors_splice(ret > 0 ? problems : err, &derr);
		aj_errors_release(&derr);
	}
	if (!ret && (aj_buf_addf(&dir, AJ_AZUREML_CODE_DIR "/%s", digest) ||
		     aj_aml_datastore_url(&ds, aj_buf_cstr(&dir), &uri)))
		ret = aj_errors_oom(err);
	if (!ret)
		ret = aj_aml_code_ensure(&r->arm, w, AJ_AZUREML_CODE_NAME, digest, aj_buf_cstr(&uri),
					 &id, err);
	if (!ret) {
		put_string(props, "codeId", id, &oom);
		ret = oom ? aj_errors_oom(err) : 0;
	}
	aj_free(id);
	aj_free(name);
	aj_aml_datastore_release(&ds);
	aj_buf_release(&dir);
	aj_buf_release(&uri);
	return ret;
}

/*
 * The assets the body refers to: the environment version of its image, the
 * code, each storage mount's datastore; the experiment. 0, 1 when its code
 * cannot be referenced (problems), -1 to retry.
 */
static int register_assets(struct aj_azure_call *r, const struct aj_jobspec *spec, cJSON *props,
			   struct aj_errors *problems, struct aj_errors *err)
{
	struct aj_buf name = AJ_BUF_INIT(AJ_BUF_SMALL), ds = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *image = aj_json_str(props, "environmentId");
	char *env_id = NULL;
	size_t i;
	int oom = 0, ret = -1;

	/* Namespaces are DNS labels, which asset and experiment names accept. */
	if (aj_buf_addf(&name, "k8s-%s", r->v->ns) || !image)
		goto oom;
	if (aj_aml_environment_ensure(&r->arm, &r->w, aj_buf_cstr(&name), image, &env_id, err))
		goto out;
	put_string(props, "environmentId", env_id, &oom);
	if (spec->code.digest &&
	    (ret = reference_code(r, &r->w, spec->code.digest, props, problems, err)))
		goto out;
	ret = -1;
	for (i = 0; i < spec->storage_nr; i++) {
		const struct aj_storage *st = &spec->storage[i];

		aj_buf_reset(&ds);
		if (aj_azureml_datastore_name(&ds, st->name))
			goto oom;
		if (aj_aml_datastore_ensure(&r->arm, &r->w, aj_buf_cstr(&ds), st->account,
					    st->container, err))
			goto out;
	}
	put_string(props, "experimentName", aj_buf_cstr(&name), &oom);
	ret = oom ? aj_errors_oom(err) : 0;
	goto out;
oom:
	ret = aj_errors_oom(err);
out:
	aj_free(env_id);
	aj_buf_release(&name);
	aj_buf_release(&ds);
	return ret;
}

/*
 * The compute: the AML compute target.name, or the Singularity VC chosen.
 * 0, 1 when there is none the AjJob may use (problems), -1 to retry.
 */
static int place(struct aj_azure_call *r, const struct aj_jobspec *spec, cJSON *props,
		 struct aj_errors *problems, struct aj_errors *err)
{
	struct aj_buf compute = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_vc *vcs = NULL;
	struct aj_vc_choice choice;
	size_t nr = 0;
	int c, oom = 0;

	if (!strcmp(spec->target.service, "aml")) {
		if (aj_buf_addf(&compute, "%s/computes/%s", aj_buf_cstr(&r->ws_id), spec->target.name))
			oom = 1;
		put_string(props, "computeId", aj_buf_cstr(&compute), &oom);
		aj_buf_release(&compute);
		return oom ? aj_errors_oom(err) : 0;
	}
	memset(&choice, 0, sizeof(choice));
	c = choose_vc(r, spec, &r->ws, &vcs, &nr, &choice, problems, err);
	if (!c && (aj_aml_vc_id(choice.chosen.vc->subscription, choice.chosen.vc->resource_group,
				choice.chosen.vc->name, &compute) ||
		   place_on_vc(props, &choice.chosen, aj_buf_cstr(&compute))))
		c = aj_errors_oom(err);
	if (!c)
		aj_log(AJ_LOG_INFO, "virtual cluster chosen", "ajjob", r->key,
		       "virtualCluster", aj_buf_cstr(&compute),
		       "tier", aj_tier_name(choice.chosen.tier),
		       "instanceType", choice.chosen.instance_type, AJ_LOG_END);
	aj_vc_choice_release(&choice);
	aj_aml_vcs_free(vcs, nr);
	aj_buf_release(&compute);
	return c;
}

/* Tags naming the AjJob and the task, beside the template's. 0 / -1 (OOM). */
static int tag(struct aj_azure_call *r, const struct aj_jobspec *spec, cJSON *props,
	       struct aj_errors *err)
{
	cJSON *tags = cJSON_GetObjectItemCaseSensitive(props, "tags");
	int oom = 0;

	if (!tags)
		tags = aj_body_add_object(props, "tags", &oom);
	put_string(tags, "k8s-namespace", r->v->ns, &oom);
	put_string(tags, "k8s-name", r->v->name, &oom);
	put_string(tags, "k8s-uid", r->v->uid, &oom);
	/* what status.tasks calls the job's one task (the builder takes no other shape) */
	if (spec->tasks_nr)
		put_string(tags, "k8s-task", spec->tasks[0].name, &oom);
	return oom ? aj_errors_oom(err) : 0;
}

/* A refusal will not change by retrying; throttling and outages will. */
static int refused(long http_status)
{
	return http_status >= 400 && http_status < 500 && http_status != 408 &&
	       http_status != 429 && http_status != 401;
}

int aj_azure_call_submit(struct aj_azure_call *r, const struct aj_jobspec *spec, cJSON *body,
			 int *created, const char **reason, struct aj_errors *problems,
			 struct aj_errors *err)
{
	cJSON *props = cJSON_GetObjectItemCaseSensitive(body, "properties");
	struct aj_errors perr = AJ_ERRORS_INIT;
	long http_status = 0;
	int c;

	*created = 0;
	if (arm_open(r, err))
		return -1;
	c = register_assets(r, spec, props, problems, err);
	*reason = "CodeUnavailable";
	if (!c) {
		c = place(r, spec, props, problems, err);
		*reason = "NoCompute";
	}
	if (!c)
		c = tag(r, spec, props, err);
	if (c)
		return c;
	aj_aml_job_release(&r->job);
	if (!aj_aml_job_put(&r->arm, &r->w, aj_buf_cstr(&r->name), body, &r->job, created,
			    &http_status, &perr))
		return 0;
	c = refused(http_status) && !perr.oom ? 1 : -1;
	if (c > 0) {
		struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);

		*reason = "AzureRejected";
		aj_errors_format_line(&perr, &msg);
		aj_errors_add(problems, NULL, "Azure ML refused the job: %s", aj_buf_cstr(&msg));
		aj_buf_release(&msg);
	} else {
		aj_errors_splice(err, &perr);
	}
	aj_errors_release(&perr);
	return c;
}

/* The job's workspace: status.azure.workspace, else the annotation, else the default. */
static int job_workspace(struct aj_azure_call *r, struct coords *ws)
{
	const char *id = aj_json_str(aj_json_get(r->v->status, "azure"), "workspace");

	if (!id)
		id = aj_json_str(aj_json_get(aj_json_get(r->v->object, "metadata"), "annotations"),
				 AJ_AZURE_WS_ANNOTATION);
	if (id && !arm_id_parse(id, ws))
		return 0;
	memset(ws, 0, sizeof(*ws));
	ws->sub = aj_strdup(r->f->ws.sub);
	ws->rg = aj_strdup(r->f->ws.rg);
	ws->name = aj_strdup(r->f->ws.name);
	if (ws->sub && ws->rg && ws->name)
		return 0;
	coords_release(ws);
	return -1;
}

/* The workspace a submission goes to: the default, or the target's workspace_name in it. */
static int submit_workspace(struct aj_azure_call *r, const struct aj_jobspec *spec,
			    struct coords *ws)
{
	const char *name = spec->target.workspace_name;

	memset(ws, 0, sizeof(*ws));
	ws->sub = aj_strdup(r->f->ws.sub);
	ws->rg = aj_strdup(r->f->ws.rg);
	ws->name = aj_strdup(name && *name ? name : r->f->ws.name);
	if (ws->sub && ws->rg && ws->name)
		return 0;
	coords_release(ws);
	return -1;
}

/*
 * The job name derived for the AjJob's current attempt: from its uid, and
 * from "uid/n" for placement's attempt n > 1 (the job of the attempt given
 * up on stays in Azure, Canceled). 0 / -1 (OOM).
 */
static int attempt_job_name(const struct aj_ajjob_view *v, struct aj_buf *out)
{
	int n = cJSON_GetArraySize(aj_json_get(aj_json_get(v->status, AJ_STATUS_PLACEMENT),
					       "attempts"));
	char key[160];

	if (n <= 1)
		return aj_aml_job_name(v->ns, v->name, v->uid ? v->uid : "", out);
	snprintf(key, sizeof(key), "%s/%d", v->uid ? v->uid : "", n);
	return aj_aml_job_name(v->ns, v->name, key, out);
}

int aj_azure_call_new(const struct aj_azure_forwarder *f, const struct aj_ajjob_view *v,
		      const struct aj_jobspec *spec, const char *key,
		      struct aj_azure_call **out, struct aj_errors *err)
{
	struct aj_azure_call *r = aj_calloc(1, sizeof(*r));
	const char *name;

	*out = NULL;
	if (!r)
		return aj_errors_oom(err);
	r->f = f;
	r->v = v;
	r->key = key;
	r->ws_id = (struct aj_buf)AJ_BUF_INIT(AJ_BUF_SMALL);
	r->name = (struct aj_buf)AJ_BUF_INIT(AJ_BUF_SMALL);
	name = aj_json_str(aj_json_get(v->status, "azure"), "jobName");
	if ((spec ? submit_workspace(r, spec, &r->ws) : job_workspace(r, &r->ws)) ||
	    workspace_id(&r->ws, &r->ws_id) ||
	    (name ? aj_buf_addstr(&r->name, name) : attempt_job_name(v, &r->name))) {
		aj_azure_call_free(r);
		return aj_errors_oom(err);
	}
	r->w = (struct aj_aml_workspace){ r->ws.sub, r->ws.rg, r->ws.name, NULL };
	*out = r;
	return 0;
}

void aj_azure_call_free(void *call)
{
	struct aj_azure_call *r = call;

	if (!r)
		return;
	if (r->arm_open)
		aj_arm_release(&r->arm);
	aj_aml_job_release(&r->job);
	cJSON_Delete(r->detail);
	coords_release(&r->ws);
	aj_buf_release(&r->ws_id);
	aj_buf_release(&r->name);
	aj_free(r);
}

const char *aj_azure_call_job(const struct aj_azure_call *c)
{
	return aj_buf_cstr(&c->name);
}

const char *aj_azure_call_workspace(const struct aj_azure_call *c)
{
	return aj_buf_cstr(&c->ws_id);
}

const char *aj_azure_call_forbidden(struct aj_azure_call *c)
{
	if (aj_azure_allowed(c->f, c->v->ns, 0, c->ws.sub, c->ws.rg, c->ws.name))
		return NULL;
	snprintf(c->forbidden, sizeof(c->forbidden), "namespace %s may not use workspace %s/%s/%s "
		 "(the controller's --azure-allow rules)", c->v->ns, c->ws.sub, c->ws.rg, c->ws.name);
	return c->forbidden;
}

int aj_azure_call_get(struct aj_azure_call *c, struct aj_errors *err)
{
	if (arm_open(c, err))
		return -1;
	aj_aml_job_release(&c->job);
	return aj_aml_job_get(&c->arm, &c->w, aj_buf_cstr(&c->name), &c->job, err);
}

const struct aj_aml_job *aj_azure_call_read(const struct aj_azure_call *c)
{
	return &c->job;
}

const cJSON *aj_azure_call_detail(struct aj_azure_call *c)
{
	cJSON_Delete(c->detail);
	c->detail = azure_status(aj_buf_cstr(&c->name), &c->job, aj_buf_cstr(&c->ws_id));
	return c->detail;
}

int aj_azure_call_cancel(struct aj_azure_call *c, struct aj_errors *err)
{
	if (arm_open(c, err))
		return -1;
	return aj_aml_job_cancel(&c->arm, &c->w, aj_buf_cstr(&c->name), err);
}
