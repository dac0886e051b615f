#include "reconcile_azure.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

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
#include "pipeline/pipeline.h"
#include "core/timestamp.h"
#include "report.h"
#include "kube/client.h"
#include "log.h"
#include "resources.h"
#include "status.h"
#include "workqueue.h"

#define FINALIZER "aj.dev/azure-job"
#define WS_ANNOTATION "aj.dev/azure-workspace"
#define INSTANCE_PREFIX "Singularity."
#define POLL_STRETCH 20          /* longest poll: this many poll intervals */

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
	struct aj_workqueue *queue;
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

int aj_azure_forwarder_new(const struct aj_azure_opts *o, struct aj_workqueue *queue,
			   struct aj_token_cache *tokens, struct aj_azure_forwarder **out,
			   struct aj_errors *err)
{
	struct aj_azure_forwarder *f = aj_calloc(1, sizeof(*f));

	*out = NULL;
	if (!f)
		return aj_errors_oom(err);
	f->queue = queue;
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

int aj_azure_serves(const char *service)
{
	return service && (!strcmp(service, "aml") || !strcmp(service, "sing"));
}

static const cJSON *at(const cJSON *o, const char *k)
{
	return cJSON_GetObjectItemCaseSensitive(o, k);
}

static const char *str_at(const cJSON *o, const char *k)
{
	const cJSON *v = at(o, k);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static int has_finalizer(const cJSON *obj)
{
	const cJSON *fin;

	cJSON_ArrayForEach(fin, at(at(obj, "metadata"), "finalizers"))
		if (cJSON_IsString(fin) && !strcmp(fin->valuestring, FINALIZER))
			return 1;
	return 0;
}

int aj_azure_claims(const struct aj_ajjob_view *v)
{
	return aj_azure_serves(str_at(v->status, "backend")) ||
	       (v->deleting && has_finalizer(v->object));
}

/* --- one reconcile --- */

struct run {
	struct aj_azure_forwarder *f;
	struct aj_kube *k;
	const struct aj_ajjob_view *v;
	struct aj_report *rep;
	const char *key;
	const char *backend;
	struct aj_arm arm;
	int arm_open;
};

static int arm_open(struct run *r, struct aj_errors *err)
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

/* Later writes of this reconcile carry the resourceVersion the server answered with. */
static int set_rv(struct run *r, const cJSON *obj)
{
	const char *rv = str_at(at(obj, "metadata"), "resourceVersion");
	char *copy;

	if (!rv)
		return 0;
	if (!(copy = aj_strdup(rv)))
		return -1;
	aj_free(r->rep->rv);
	r->rep->rv = copy;
	return 0;
}

/* Merge-patch the AjJob object and free patch; with follow_rv, see set_rv. */
static int patch_ajjob(struct run *r, cJSON *patch, int follow_rv, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_ajjobs, r->v->ns, r->v->name, NULL };
	cJSON *out = NULL;
	int ret = aj_kube_patch(r->k, &ref, AJ_KUBE_MERGE_PATCH, patch, &out, NULL, err);

	if (!ret && follow_rv && set_rv(r, out))
		ret = aj_errors_oom(err);
	cJSON_Delete(out);
	cJSON_Delete(patch);
	return ret;
}

/* Write the status (azure: the new status.azure, NULL to keep it). */
static int write_status(struct run *r, const struct aj_status *st, const cJSON *azure,
			struct aj_errors *err)
{
	cJSON *extra = NULL, *az;
	int ret;

	if (azure && (!(extra = cJSON_CreateObject()) || !(az = cJSON_Duplicate(azure, 1)) ||
		      !cJSON_AddItemToObject(extra, "azure", az))) {
		if (extra && !at(extra, "azure"))
			cJSON_Delete(az);
		cJSON_Delete(extra);
		return aj_errors_oom(err);
	}
	ret = aj_report_status(r->rep, st, extra, err);
	cJSON_Delete(extra);
	return ret;
}

static int fail(struct run *r, const char *reason, const char *message, struct aj_errors *err)
{
	return aj_report_fail(r->rep, r->backend, reason, "Forward", message, err);
}

static int fail_errors(struct run *r, const char *reason, const char *prefix,
		       const struct aj_errors *problems, struct aj_errors *err)
{
	struct aj_buf msg = AJ_BUF_INIT(AJ_BUF_SMALL);
	int ret;

	aj_buf_addstr(&msg, prefix);
	aj_report_errors_text(problems, &msg);
	ret = fail(r, reason, msg.failed ? prefix : aj_buf_cstr(&msg), err);
	aj_buf_release(&msg);
	return ret;
}

/* Seconds to the next poll: longer the longer nothing has changed. */
static double poll_delay(const struct run *r)
{
	const cJSON *c;
	time_t last = -1, now = time(NULL);
	double d = r->f->poll;

	cJSON_ArrayForEach(c, at(r->v->status, "conditions")) {
		time_t t = (time_t)aj_timestamp_parse(str_at(c, "lastTransitionTime"), 0);

		if (t > last)
			last = t;
	}
	if (last > 0 && now > last)
		d += (double)(now - last) / 10;
	return d > r->f->poll * POLL_STRETCH ? r->f->poll * POLL_STRETCH : d;
}

static void requeue(struct run *r, double delay)
{
	if (aj_workqueue_add_after(r->f->queue, r->key, delay))
		aj_log(AJ_LOG_ERROR, "out of memory queueing", "ajjob", r->key, AJ_LOG_END);
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

/* Mirror the job's state into the AjJob; queue the next poll unless it ended. */
static int mirror(struct run *r, const char *job_name, const struct aj_aml_job *job,
		  const char *ws_id, struct aj_errors *err)
{
	static const enum aj_phase phases[] = {
		AJ_PHASE_SUBMITTED, AJ_PHASE_RUNNING, AJ_PHASE_SUCCEEDED, AJ_PHASE_FAILED,
		AJ_PHASE_CANCELLED
	};
	enum aj_aml_state s = aj_aml_state_of(job->status);
	const char *status = job->status ? job->status : "NotStarted";
	char reason[64], msg[512];
	struct aj_status st = { phases[s], 1, reason, msg, r->backend, r->v->generation, NULL, NULL,
				0, 0, 0, NULL, NULL, 0 };
	cJSON *az = azure_status(job_name, job, ws_id);
	int was = r->v->has_phase ? (int)r->v->phase : -1, ret;
	size_t i;

	if (!az)
		return aj_errors_oom(err);
	snprintf(reason, sizeof(reason), "AzureJob%s", status);
	for (i = 8; reason[i]; i++)
		if (!((reason[i] >= 'a' && reason[i] <= 'z') || (reason[i] >= 'A' && reason[i] <= 'Z') ||
		      (reason[i] >= '0' && reason[i] <= '9')))
			reason[i] = '_';
	snprintf(msg, sizeof(msg), "Azure ML job %s is %s", job_name, status);
	ret = write_status(r, &st, az, err);
	cJSON_Delete(az);
	if (ret)
		return -1;
	if (was != (int)st.phase)
		aj_report_event(r->rep, st.phase == AJ_PHASE_FAILED, reason, "Observe", msg, 0);
	if (!aj_aml_state_terminal(s))
		requeue(r, poll_delay(r));
	return 0;
}

static int workspace_id(const struct coords *ws, struct aj_buf *out)
{
	struct aj_aml_workspace w = { ws->sub, ws->rg, ws->name, NULL };

	return aj_aml_workspace_id(&w, out);
}

/* Add our finalizer and the workspace annotation (before anything exists in Azure). */
static int ensure_finalizer(struct run *r, const char *ws_id, struct aj_errors *err)
{
	const cJSON *obj = r->v->object, *meta = at(obj, "metadata");
	const char *have = str_at(at(meta, "annotations"), WS_ANNOTATION);
	cJSON *patch, *pm, *fins, *ann;

	if (has_finalizer(obj) && have && !strcmp(have, ws_id))
		return 0;
	patch = cJSON_CreateObject();
	pm = cJSON_AddObjectToObject(patch, "metadata");
	fins = at(meta, "finalizers") ? cJSON_Duplicate(at(meta, "finalizers"), 1)
				      : cJSON_CreateArray();
	if (!pm || !fins || !cJSON_AddItemToObject(pm, "finalizers", fins)) {
		cJSON_Delete(fins);
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	if ((!has_finalizer(obj) && !cJSON_AddItemToArray(fins, cJSON_CreateString(FINALIZER))) ||
	    !cJSON_AddStringToObject(pm, "resourceVersion", r->rep->rv) ||
	    !(ann = cJSON_AddObjectToObject(pm, "annotations")) ||
	    !cJSON_AddStringToObject(ann, WS_ANNOTATION, ws_id)) {
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	return patch_ajjob(r, patch, 1, err);
}

static int remove_finalizer(struct run *r, const cJSON *obj, struct aj_errors *err)
{
	cJSON *patch = cJSON_CreateObject(), *pm, *fins;
	const cJSON *fin;
	int ret;

	pm = cJSON_AddObjectToObject(patch, "metadata");
	fins = cJSON_AddArrayToObject(pm, "finalizers");
	if (!fins || !cJSON_AddStringToObject(pm, "resourceVersion",
					       str_at(at(obj, "metadata"), "resourceVersion"))) {
		cJSON_Delete(patch);
		return aj_errors_oom(err);
	}
	cJSON_ArrayForEach(fin, at(at(obj, "metadata"), "finalizers")) {
		cJSON *copy;

		if (cJSON_IsString(fin) && !strcmp(fin->valuestring, FINALIZER))
			continue;
		if (!(copy = cJSON_Duplicate(fin, 1)) || !cJSON_AddItemToArray(fins, copy)) {
			cJSON_Delete(copy);
			cJSON_Delete(patch);
			return aj_errors_oom(err);
		}
	}
	ret = patch_ajjob(r, patch, 0, err);
	if (!ret)
		aj_log(AJ_LOG_INFO, "azure job finished; finalizer removed", "ajjob", r->key,
		       AJ_LOG_END);
	return ret;
}

/* --- Singularity: the VC --- */

/*
 * Choose the VC for spec. 0 with *choice (over *vcs), 1 when the AjJob
 * cannot run (message in problems), -1 to retry.
 */
static int choose_vc(struct run *r, const struct aj_jobspec *spec, const struct coords *ws,
		     struct aj_vc **vcs, size_t *nr, struct aj_vc_choice *choice,
		     struct aj_errors *problems, struct aj_errors *err)
{
	const struct aj_target *t = &spec->target;
	struct aj_vc_request req = { spec->sku, spec->nodes, spec->processes,
				     spec->jobs[0].sla_tier, t->subscription_id,
				     t->resource_group, t->name };
	struct aj_strlist subs = AJ_STRLIST_INIT;
	size_t i, keep = 0;
	int ret = -1;

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
	} else {
		if (t->subscription_id && aj_strlist_add(&subs, t->subscription_id)) {
			aj_errors_oom(err);
			goto out;
		}
		if (!t->subscription_id && aj_aml_subscriptions(&r->arm, &subs, err))
			goto out;
		if (aj_aml_vc_discover(&r->arm, &subs, vcs, nr, err))
			goto out;
		/* Only the VCs this namespace may use are candidates. */
		for (i = 0; i < *nr; i++) {
			struct aj_vc *vc = &(*vcs)[i];
			struct aj_errors qerr = AJ_ERRORS_INIT;

			if (!aj_azure_allowed(r->f, r->v->ns, 1, vc->subscription, vc->resource_group, vc->name)) {
				aj_vc_release(vc);
				continue;
			}
			if (aj_aml_vc_quotas(&r->arm, vc, &qerr) < 0) {
				struct aj_buf b = AJ_BUF_INIT(AJ_BUF_SMALL);

				aj_report_errors_text(&qerr, &b);
				aj_log(AJ_LOG_WARN, "cannot read virtual cluster quotas", "ajjob", r->key,
				       "virtualCluster", vc->name, "error", aj_buf_cstr(&b), AJ_LOG_END);
				aj_buf_release(&b);
			}
			aj_errors_release(&qerr);
			if (keep != i)
				(*vcs)[keep] = *vc;
			keep++;
		}
		*nr = keep;
	}
	ret = aj_vc_select(&req, *vcs, *nr, choice, problems) ? 1 : 0;
	if (ret && problems->oom)
		ret = aj_errors_oom(err);
out:
	aj_strlist_release(&subs);
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
static int code_datastore(const struct run *r, const char *digest, char **name,
			  struct aj_errors *problems, struct aj_errors *err)
{
	static const char pre[] = "azureml://datastores/";
	const char *uri = str_at(at(at(r->v->object, "spec"), "code"), "uri"), *p;
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
static int reference_code(struct run *r, const struct aj_aml_workspace *w, const char *digest,
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
 * Fill in what needs live calls: environment, code, compute, experiment, tags.
 * 0, 1 when the AjJob cannot run (problems), 2 when its code cannot be
 * referenced (problems), -1 to retry.
 */
static int complete_body(struct run *r, const struct aj_jobspec *spec, const struct coords *ws,
			 const char *ws_id, cJSON *props, struct aj_errors *problems,
			 struct aj_errors *err)
{
	struct aj_aml_workspace w = { ws->sub, ws->rg, ws->name, NULL };
	struct aj_buf name = AJ_BUF_INIT(AJ_BUF_SMALL), compute = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_buf ds = AJ_BUF_INIT(AJ_BUF_SMALL);
	const char *image = str_at(props, "environmentId");
	char *env_id = NULL;
	cJSON *tags;
	size_t i;
	int oom = 0, ret = -1;

	/* Namespaces are DNS labels, which asset and experiment names accept. */
	if (aj_buf_addf(&name, "k8s-%s", r->v->ns) || !image)
		goto oom;
	if (aj_aml_environment_ensure(&r->arm, &w, aj_buf_cstr(&name), image, &env_id, err))
		goto out;
	put_string(props, "environmentId", env_id, &oom);
	if (spec->code.digest) {
		ret = reference_code(r, &w, spec->code.digest, props, problems, err);
		if (ret) {
			ret = ret > 0 ? 2 : -1;
			goto out;
		}
		ret = -1;
	}
	for (i = 0; i < spec->storage_nr; i++) {
		const struct aj_storage *st = &spec->storage[i];

		aj_buf_reset(&ds);
		if (aj_azureml_datastore_name(&ds, st->name))
			goto oom;
		if (aj_aml_datastore_ensure(&r->arm, &w, aj_buf_cstr(&ds), st->account, st->container,
					    err))
			goto out;
	}
	put_string(props, "experimentName", aj_buf_cstr(&name), &oom);
	if (!strcmp(spec->target.service, "aml")) {
		if (aj_buf_addf(&compute, "%s/computes/%s", ws_id, spec->target.name))
			goto oom;
		put_string(props, "computeId", aj_buf_cstr(&compute), &oom);
	} else {
		struct aj_vc *vcs = NULL;
		struct aj_vc_choice choice;
		size_t nr = 0;
		int c;

		memset(&choice, 0, sizeof(choice));
		c = choose_vc(r, spec, ws, &vcs, &nr, &choice, problems, err);
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
		if (c) {
			ret = c;
			goto out;
		}
	}
	tags = cJSON_GetObjectItemCaseSensitive(props, "tags");
	if (!tags)
		tags = aj_body_add_object(props, "tags", &oom);
	put_string(tags, "k8s-namespace", r->v->ns, &oom);
	put_string(tags, "k8s-name", r->v->name, &oom);
	put_string(tags, "k8s-uid", r->v->uid, &oom);
	if (oom)
		goto oom;
	ret = 0;
	goto out;
oom:
	ret = aj_errors_oom(err);
out:
	aj_free(env_id);
	aj_buf_release(&name);
	aj_buf_release(&compute);
	aj_buf_release(&ds);
	return ret;
}

static int submit(struct run *r, const struct aj_pipeline *pl, struct aj_errors *err)
{
	const struct aj_jobspec *spec = &pl->spec;
	const struct aj_target *t = &spec->target;
	struct aj_errors problems = AJ_ERRORS_INIT;
	struct aj_buf job_name = AJ_BUF_INIT(AJ_BUF_SMALL), ws_id = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct coords ws = r->f->ws;
	struct aj_aml_workspace w;
	struct aj_aml_job job;
	struct aj_build_ctx ctx = { r->v->name, r->v->ns, r->v->uid, r->v->name, AJ_API_VERSION, 0 };
	cJSON *objects = NULL, *body;
	long http_status = 0;
	int ret = -1, created = 0, c;

	memset(&job, 0, sizeof(job));
	if (t->workspace_name && *t->workspace_name)
		ws.name = t->workspace_name;
	w = (struct aj_aml_workspace){ ws.sub, ws.rg, ws.name, NULL };
	if (workspace_id(&ws, &ws_id) ||
	    aj_aml_job_name(r->v->ns, r->v->name, r->v->uid ? r->v->uid : "", &job_name)) {
		ret = aj_errors_oom(err);
		goto out;
	}
	if (!aj_azure_allowed(r->f, r->v->ns, 0, ws.sub, ws.rg, ws.name)) {
		char msg[768];

		snprintf(msg, sizeof(msg), "namespace %s may not use workspace %s/%s/%s "
			 "(the controller's --azure-allow rules)", r->v->ns, ws.sub, ws.rg, ws.name);
		ret = fail(r, "Forbidden", msg, err);
		goto out;
	}
	if (aj_pipeline_build(pl, &ctx, &objects, &problems)) {
		ret = problems.oom ? aj_errors_oom(err)
				   : fail_errors(r, "InvalidTemplate", "", &problems, err);
		goto out;
	}
	if (ensure_finalizer(r, aj_buf_cstr(&ws_id), err) || arm_open(r, err))
		goto out;

	/* Submitted before (a lost reply, a crash, a failed status write): adopt it. */
	c = aj_aml_job_get(&r->arm, &w, aj_buf_cstr(&job_name), &job, err);
	if (c < 0)
		goto out;
	if (c == 0) {
		aj_log(AJ_LOG_INFO, "adopted existing azure job", "ajjob", r->key,
		       "azureJob", aj_buf_cstr(&job_name), AJ_LOG_END);
		ret = mirror(r, aj_buf_cstr(&job_name), &job, aj_buf_cstr(&ws_id), err);
		goto out;
	}
	body = cJSON_GetArrayItem(objects, 0);
	c = complete_body(r, spec, &ws, aj_buf_cstr(&ws_id),
			  cJSON_GetObjectItemCaseSensitive(body, "properties"), &problems, err);
	if (c) {
		ret = c < 0 ? -1 : fail_errors(r, c == 2 ? "CodeUnavailable" : "NoCompute", "",
					       &problems, err);
		goto out;
	}
	{
		struct aj_errors perr = AJ_ERRORS_INIT;

		if (aj_aml_job_put(&r->arm, &w, aj_buf_cstr(&job_name), body, &job, &created,
				   &http_status, &perr)) {
			/* A refusal will not change by retrying; throttling and outages will. */
			if (http_status >= 400 && http_status < 500 && http_status != 408 &&
			    http_status != 429 && http_status != 401 && !perr.oom)
				ret = fail_errors(r, "AzureRejected", "Azure ML refused the job: ",
						  &perr, err);
			else
				aj_errors_splice(err, &perr);
			aj_errors_release(&perr);
			goto out;
		}
	}
	aj_log(AJ_LOG_INFO, created ? "submitted azure job" : "azure job already there",
	       "ajjob", r->key, "azureJob", aj_buf_cstr(&job_name), AJ_LOG_END);
	ret = mirror(r, aj_buf_cstr(&job_name), &job, aj_buf_cstr(&ws_id), err);
out:
	aj_aml_job_release(&job);
	cJSON_Delete(objects);
	aj_buf_release(&job_name);
	aj_buf_release(&ws_id);
	aj_errors_release(&problems);
	return ret;
}

/* The job's workspace: status.azure.workspace, else the annotation, else the default. */
static int job_workspace(struct run *r, const cJSON *obj, struct coords *ws)
{
	const char *id = str_at(at(r->v->status, "azure"), "workspace");

	if (!id)
		id = str_at(at(at(obj, "metadata"), "annotations"), WS_ANNOTATION);
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

static int job_name_of(struct run *r, struct aj_buf *out)
{
	const char *name = str_at(at(r->v->status, "azure"), "jobName");

	return name ? aj_buf_addstr(out, name)
		    : aj_aml_job_name(r->v->ns, r->v->name, r->v->uid ? r->v->uid : "", out);
}

/* Mirror the job; cancel it first when asked to. */
static int observe(struct run *r, struct aj_errors *err)
{
	struct aj_buf name = AJ_BUF_INIT(AJ_BUF_SMALL), ws_id = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct coords ws;
	struct aj_aml_workspace w;
	struct aj_aml_job job;
	int ret = -1, c;

	memset(&job, 0, sizeof(job));
	if (job_workspace(r, NULL, &ws))
		return aj_errors_oom(err);
	w = (struct aj_aml_workspace){ ws.sub, ws.rg, ws.name, NULL };
	if (job_name_of(r, &name) || workspace_id(&ws, &ws_id)) {
		ret = aj_errors_oom(err);
		goto out;
	}
	if (arm_open(r, err))
		goto out;
	c = aj_aml_job_get(&r->arm, &w, aj_buf_cstr(&name), &job, err);
	if (c < 0)
		goto out;
	if (c > 0) {
		char msg[512];

		snprintf(msg, sizeof(msg), "Azure ML job %s no longer exists", aj_buf_cstr(&name));
		ret = fail(r, "AzureJobGone", msg, err);
		goto out;
	}
	if (r->v->cancel && !aj_aml_state_terminal(aj_aml_state_of(job.status)) &&
	    (!job.status || strcmp(job.status, "CancelRequested"))) {
		if (aj_aml_job_cancel(&r->arm, &w, aj_buf_cstr(&name), err) < 0)
			goto out;
		aj_log(AJ_LOG_INFO, "cancel requested", "ajjob", r->key,
		       "azureJob", aj_buf_cstr(&name), AJ_LOG_END);
	}
	ret = mirror(r, aj_buf_cstr(&name), &job, aj_buf_cstr(&ws_id), err);
out:
	aj_aml_job_release(&job);
	coords_release(&ws);
	aj_buf_release(&name);
	aj_buf_release(&ws_id);
	return ret;
}

/* The AjJob is being deleted: cancel its job, then let it go. */
static int finalize(struct run *r, struct aj_errors *err)
{
	struct aj_kube_ref ref = { &aj_res_ajjobs, r->v->ns, r->v->name, NULL };
	struct aj_buf name = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_kube_status ks;
	struct aj_errors gerr = AJ_ERRORS_INIT;
	struct coords ws;
	struct aj_aml_workspace w;
	struct aj_aml_job job;
	cJSON *obj = NULL;
	int ret = -1, c;

	memset(&job, 0, sizeof(job));
	memset(&ws, 0, sizeof(ws));
	/* Finalizers and annotations: the cache keeps neither once submitted. */
	aj_kube_status_init(&ks);
	if (aj_kube_get(r->k, &ref, &obj, &ks, &gerr)) {
		int gone = ks.reason == AJ_KUBE_NOT_FOUND;

		aj_kube_status_release(&ks);
		if (gone) {
			aj_errors_release(&gerr);
			return 0;
		}
		aj_errors_splice(err, &gerr);
		return -1;
	}
	aj_kube_status_release(&ks);
	if (!has_finalizer(obj)) {
		cJSON_Delete(obj);
		return 0;
	}
	if (job_workspace(r, obj, &ws) || job_name_of(r, &name)) {
		ret = aj_errors_oom(err);
		goto out;
	}
	w = (struct aj_aml_workspace){ ws.sub, ws.rg, ws.name, NULL };
	if (!aj_azure_allowed(r->f, r->v->ns, 0, ws.sub, ws.rg, ws.name)) {
		/* Only an edited annotation leads here: nothing of ours can be there. */
		aj_log(AJ_LOG_WARN, "workspace not allowed; finalizer removed without cancel",
		       "ajjob", r->key, AJ_LOG_END);
		ret = remove_finalizer(r, obj, err);
		goto out;
	}
	if (arm_open(r, err))
		goto out;
	c = aj_aml_job_get(&r->arm, &w, aj_buf_cstr(&name), &job, err);
	if (c < 0)
		goto out;
	if (c > 0 || aj_aml_state_terminal(aj_aml_state_of(job.status))) {
		ret = remove_finalizer(r, obj, err);
		goto out;
	}
	if (!job.status || strcmp(job.status, "CancelRequested")) {
		c = aj_aml_job_cancel(&r->arm, &w, aj_buf_cstr(&name), err);
		if (c < 0)
			goto out;
		if (c > 0) {
			ret = remove_finalizer(r, obj, err);
			goto out;
		}
		aj_log(AJ_LOG_INFO, "ajjob deleted; azure job cancel requested", "ajjob", r->key,
		       "azureJob", aj_buf_cstr(&name), AJ_LOG_END);
	}
	requeue(r, r->f->poll);
	ret = 0;
out:
	aj_aml_job_release(&job);
	coords_release(&ws);
	aj_buf_release(&name);
	cJSON_Delete(obj);
	return ret;
}

int aj_reconcile_azure(struct aj_azure_forwarder *f, struct aj_kube *k, struct aj_report *rep,
		       const struct aj_pipeline *pl, struct aj_errors *err)
{
	const struct aj_ajjob_view *v = rep->v;
	struct run r;
	int ret;

	memset(&r, 0, sizeof(r));
	r.f = f;
	r.k = k;
	r.v = v;
	r.rep = rep;
	r.key = rep->key;
	r.backend = pl ? pl->spec.target.service : str_at(v->status, "backend");
	if (!r.backend)
		r.backend = "aml";
	if (v->deleting)
		ret = finalize(&r, err);
	else if (pl)
		ret = submit(&r, pl, err);
	else if (!str_at(at(v->status, "azure"), "jobName") ||
		 (v->has_phase && aj_phase_terminal(v->phase) &&
		  v->observed_generation == v->generation))
		ret = 0;    /* never submitted (refused), or finished */
	else
		ret = observe(&r, err);
	if (r.arm_open)
		aj_arm_release(&r.arm);
	return ret;
}
