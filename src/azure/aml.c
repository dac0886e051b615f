#include "azure/aml.h"

#include <string.h>

#include <openssl/evp.h>

#include "azure/arm.h"
#include "azure/vcselect.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/json.h"
#include "core/strlist.h"

#define PROVIDER "/providers/Microsoft.MachineLearningServices"

static const char *api(const struct aj_aml_workspace *ws)
{
	return ws->api_version ? ws->api_version : AJ_AML_API_VERSION;
}

int aj_aml_workspace_id(const struct aj_aml_workspace *ws, struct aj_buf *out)
{
	return aj_buf_addf(out, "/subscriptions/%s/resourceGroups/%s" PROVIDER "/workspaces/%s",
			   ws->subscription, ws->resource_group, ws->name);
}

int aj_aml_vc_id(const char *subscription, const char *resource_group, const char *name,
		 struct aj_buf *out)
{
	return aj_buf_addf(out, "/subscriptions/%s/resourceGroups/%s" PROVIDER "/virtualclusters/%s",
			   subscription, resource_group, name);
}

static int sha256_hex(const char *s, char *out, size_t digits)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	size_t i;

	if (!EVP_Digest(s, strlen(s), md, &len, EVP_sha256(), NULL) || len * 2 < digits)
		return -1;
	for (i = 0; i < digits; i++)
		out[i] = hex[(md[i / 2] >> (i % 2 ? 0 : 4)) & 0xf];
	out[digits] = '\0';
	return 0;
}

static int add_name_part(struct aj_buf *out, const char *s, size_t max)
{
	size_t i;

	for (i = 0; i < max && s[i]; i++) {
		char c = s[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '_' || c == '-';

		if (aj_buf_addch(out, ok ? c : '-'))
			return -1;
	}
	return 0;
}

int aj_aml_job_name(const char *ns, const char *name, const char *uid, struct aj_buf *out)
{
	/* "k8s-" + ns + "-" + name + "-" + 8 hex */
	const size_t room = AJ_AML_JOB_NAME_MAX - 4 - 1 - 1 - 8;
	size_t ns_len = strlen(ns), name_len = strlen(name);
	char h[9];

	if (ns_len + name_len > room) {
		/* Namespaces are at most 63 bytes; the name gets what is left. */
		if (ns_len > room / 2)
			ns_len = room / 2;
		name_len = room - ns_len;
	}
	if (sha256_hex(uid, h, 8))
		return -1;
	return aj_buf_addstr(out, "k8s-") || add_name_part(out, ns, ns_len) ||
	       aj_buf_addch(out, '-') || add_name_part(out, name, name_len) ||
	       aj_buf_addf(out, "-%s", h);
}

int aj_aml_environment_version(const char *image, char out[17])
{
	return sha256_hex(image, out, 16);
}

/* A request whose 404 is an answer rather than a failure: 0, 1 (404), -1. */
static int request_maybe(struct aj_arm *a, const char *method, const char *path,
			 const char *api_version, const cJSON *body,
			 struct aj_arm_response *resp, struct aj_errors *err)
{
	struct aj_errors e = AJ_ERRORS_INIT;

	if (!aj_arm_request(a, method, path, api_version, body, resp, &e)) {
		aj_errors_release(&e);
		return 0;
	}
	if (resp->status == 404 && !e.oom) {
		aj_errors_release(&e);
		return 1;
	}
	aj_errors_splice(err, &e);
	return -1;
}

/*
 * GET version of the asset `name` in the workspace's `collection`
 * ("environments", "codes"); PUT body there when it is absent (body NULL:
 * out of memory building it). *id gets its ARM id; `kind` names it in errors.
 */
static int version_ensure(struct aj_arm *a, const struct aj_aml_workspace *ws,
			  const char *collection, const char *kind, const char *name,
			  const char *version, const cJSON *body, char **id,
			  struct aj_errors *err)
{
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_arm_response resp;
	int r;

	*id = NULL;
	aj_arm_response_init(&resp);
	if (!body || aj_aml_workspace_id(ws, &path) ||
	    aj_buf_addf(&path, "/%s/%s/versions/%s", collection, name, version)) {
		aj_buf_release(&path);
		return aj_errors_oom(err);
	}
	r = request_maybe(a, "GET", aj_buf_cstr(&path), api(ws), NULL, &resp, err);
	if (r == 1) {
		aj_arm_response_release(&resp);
		r = aj_arm_request(a, "PUT", aj_buf_cstr(&path), api(ws), body, &resp, err);
	}
	if (!r && !aj_json_str(resp.json, "id"))
		r = aj_errors_add(err, NULL, "%s %s version %s: the reply carries no id", kind,
				  name, version);
	if (!r && !(*id = aj_strdup(aj_json_str(resp.json, "id"))))
		r = aj_errors_oom(err);
	aj_arm_response_release(&resp);
	aj_buf_release(&path);
	return r ? -1 : 0;
}

/* {"properties": {k1: v1, k2: v2}} (k2 may be NULL). */
static cJSON *properties_body(const char *k1, const char *v1, const char *k2, const char *v2)
{
	cJSON *body = cJSON_CreateObject(), *props = cJSON_AddObjectToObject(body, "properties");

	if (!props || !cJSON_AddStringToObject(props, k1, v1) ||
	    (k2 && !cJSON_AddStringToObject(props, k2, v2))) {
		cJSON_Delete(body);
		return NULL;
	}
	return body;
}

int aj_aml_environment_ensure(struct aj_arm *a, const struct aj_aml_workspace *ws,
			      const char *name, const char *image, char **id,
			      struct aj_errors *err)
{
	cJSON *body = properties_body("image", image, "osType", "Linux");
	char version[17];
	int r;

	*id = NULL;
	if (aj_aml_environment_version(image, version))
		r = aj_errors_oom(err);
	else
		r = version_ensure(a, ws, "environments", "environment", name, version, body, id, err);
	cJSON_Delete(body);
	return r;
}

int aj_aml_datastore_ensure(struct aj_arm *a, const struct aj_aml_workspace *ws,
			    const char *name, const char *account, const char *container,
			    struct aj_errors *err)
{
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_arm_response resp;
	cJSON *body = NULL, *props, *cred;
	int r;

	aj_arm_response_init(&resp);
	if (aj_aml_workspace_id(ws, &path) || aj_buf_addf(&path, "/datastores/%s", name)) {
		r = aj_errors_oom(err);
		goto out;
	}
	r = request_maybe(a, "GET", aj_buf_cstr(&path), api(ws), NULL, &resp, err);
	if (r != 1)
		goto out;
	body = cJSON_CreateObject();
	props = cJSON_AddObjectToObject(body, "properties");
	if (!props || !cJSON_AddStringToObject(props, "datastoreType", "AzureBlob") ||
	    !cJSON_AddStringToObject(props, "accountName", account) ||
	    !cJSON_AddStringToObject(props, "containerName", container) ||
	    !(cred = cJSON_AddObjectToObject(props, "credentials")) ||
	    !cJSON_AddStringToObject(cred, "credentialsType", "None")) {
		r = aj_errors_oom(err);
		goto out;
	}
	aj_arm_response_release(&resp);
	r = aj_arm_request(a, "PUT", aj_buf_cstr(&path), api(ws), body, &resp, err);
out:
	cJSON_Delete(body);
	aj_arm_response_release(&resp);
	aj_buf_release(&path);
	return r ? -1 : 0;
}

void aj_aml_datastore_release(struct aj_aml_datastore *d)
{
	aj_free(d->name);
	aj_free(d->account);
	aj_free(d->container);
	aj_free(d->endpoint);
	memset(d, 0, sizeof(*d));
}

/* Fill out from a datastore resource; 1 when it is not a usable blob datastore. */
static int datastore_read(const cJSON *res, struct aj_aml_datastore *out, struct aj_errors *err)
{
	const cJSON *props = aj_json_get(res, "properties");
	const char *type = aj_json_str(props, "datastoreType");
	const char *endpoint = aj_json_str(props, "endpoint");

	if (!type || strcmp(type, "AzureBlob") || !aj_json_str(res, "name") ||
	    !aj_json_str(props, "accountName") || !aj_json_str(props, "containerName"))
		return 1;
	out->name = aj_strdup(aj_json_str(res, "name"));
	out->account = aj_strdup(aj_json_str(props, "accountName"));
	out->container = aj_strdup(aj_json_str(props, "containerName"));
	out->endpoint = aj_strdup(endpoint && *endpoint ? endpoint : "core.windows.net");
	if (!out->name || !out->account || !out->container || !out->endpoint) {
		aj_aml_datastore_release(out);
		return aj_errors_oom(err);
	}
	return 0;
}

int aj_aml_datastore_get(struct aj_arm *a, const struct aj_aml_workspace *ws,
			 const char *name, struct aj_aml_datastore *out, struct aj_errors *err)
{
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL), wsid = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_arm_response resp;
	int r;

	memset(out, 0, sizeof(*out));
	aj_arm_response_init(&resp);
	if (aj_aml_workspace_id(ws, &wsid)) {
		r = aj_errors_oom(err);
		goto out;
	}
	if (!name) {
		const cJSON *v;

		if (aj_buf_addf(&path, "%s/datastores?isDefault=true", aj_buf_cstr(&wsid))) {
			r = aj_errors_oom(err);
			goto out;
		}
		r = request_maybe(a, "GET", aj_buf_cstr(&path), api(ws), NULL, &resp, err);
		if (r < 0)
			goto out;
		cJSON_ArrayForEach(v, aj_json_get(resp.json, "value")) {
			r = datastore_read(v, out, err);
			if (r <= 0)
				goto out;
		}
		aj_arm_response_release(&resp);
		aj_buf_reset(&path);
		name = "workspaceblobstore";
	}
	if (aj_buf_addf(&path, "%s/datastores/%s", aj_buf_cstr(&wsid), name)) {
		r = aj_errors_oom(err);
		goto out;
	}
	r = request_maybe(a, "GET", aj_buf_cstr(&path), api(ws), NULL, &resp, err);
	if (!r)
		r = datastore_read(resp.json, out, err);
	if (r > 0)
		aj_errors_add(err, NULL, "workspace %s has no blob datastore %s", ws->name, name);
out:
	aj_arm_response_release(&resp);
	aj_buf_release(&path);
	aj_buf_release(&wsid);
	return r;
}

int aj_aml_datastore_url(const struct aj_aml_datastore *d, const char *path,
			 struct aj_buf *out)
{
	return aj_buf_addf(out, "https://%s.blob.%s/%s%s%s", d->account, d->endpoint,
			   d->container, path ? "/" : "", path ? path : "");
}

int aj_aml_code_ensure(struct aj_arm *a, const struct aj_aml_workspace *ws,
		       const char *name, const char *version, const char *code_uri,
		       char **id, struct aj_errors *err)
{
	cJSON *body = properties_body("codeUri", code_uri, NULL, NULL);
	int r = version_ensure(a, ws, "codes", "code", name, version, body, id, err);

	cJSON_Delete(body);
	return r;
}

void aj_aml_job_release(struct aj_aml_job *j)
{
	aj_free(j->name);
	aj_free(j->status);
	aj_free(j->portal_url);
	aj_free(j->compute_id);
	aj_free(j->instance_type);
	aj_free(j->tier);
	aj_free(j->task);
	memset(j, 0, sizeof(*j));
}

static int dup_opt(char **dst, const char *s)
{
	return s && !(*dst = aj_strdup(s)) ? -1 : 0;
}

int aj_aml_job_read(const cJSON *resource, struct aj_aml_job *out)
{
	const cJSON *props = aj_json_get(resource, "properties");
	const cJSON *res = aj_json_get(props, "resources");

	memset(out, 0, sizeof(*out));
	if (dup_opt(&out->name, aj_json_str(resource, "name")) ||
	    dup_opt(&out->status, aj_json_str(props, "status")) ||
	    dup_opt(&out->portal_url, aj_json_str(aj_json_get(aj_json_get(props, "services"),
							      "Studio"), "endpoint")) ||
	    dup_opt(&out->compute_id, aj_json_str(props, "computeId")) ||
	    dup_opt(&out->instance_type, aj_json_str(res, "instanceType")) ||
	    dup_opt(&out->tier, aj_json_str(aj_json_get(aj_json_get(res, "properties"),
							"AISuperComputer"), "slaTier")) ||
	    dup_opt(&out->task, aj_json_str(aj_json_get(props, "tags"), "k8s-task"))) {
		aj_aml_job_release(out);
		return -1;
	}
	out->instances = aj_json_whole(aj_json_get(res, "instanceCount"), 2147483647.0, 0);
	return 0;
}

enum aj_aml_state aj_aml_state_of(const char *status)
{
	static const struct {
		const char *name;
		enum aj_aml_state state;
	} map[] = {
		{ "Running", AJ_AML_RUNNING },
		{ "Finalizing", AJ_AML_RUNNING },
		{ "CancelRequested", AJ_AML_RUNNING },
		/* may return to any earlier state */
		{ "NotResponding", AJ_AML_RUNNING },
		{ "Paused", AJ_AML_RUNNING },
		{ "Completed", AJ_AML_COMPLETED },
		{ "Failed", AJ_AML_FAILED },
		{ "Canceled", AJ_AML_CANCELED },
	};
	size_t i;

	for (i = 0; status && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(status, map[i].name))
			return map[i].state;
	return AJ_AML_QUEUED;
}

int aj_aml_state_terminal(enum aj_aml_state s)
{
	return s == AJ_AML_COMPLETED || s == AJ_AML_FAILED || s == AJ_AML_CANCELED;
}

/*
 * method on the job name (+ tail) of ws into resp (initialised here). With
 * maybe, a 404 returns 1 instead of an error, as request_maybe() does.
 */
static int job_request(struct aj_arm *a, const struct aj_aml_workspace *ws, const char *name,
		       const char *tail, const char *method, const cJSON *body, int maybe,
		       struct aj_arm_response *resp, struct aj_errors *err)
{
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	int r;

	aj_arm_response_init(resp);
	if (aj_aml_workspace_id(ws, &path) || aj_buf_addstr(&path, "/jobs/") ||
	    aj_buf_addstr(&path, name) || aj_buf_addstr(&path, tail))
		r = aj_errors_oom(err);
	else if (maybe)
		r = request_maybe(a, method, aj_buf_cstr(&path), api(ws), body, resp, err);
	else
		r = aj_arm_request(a, method, aj_buf_cstr(&path), api(ws), body, resp, err);
	aj_buf_release(&path);
	return r;
}

/* Fill out from resp; -1 (OOM). */
static int read_reply(const struct aj_arm_response *resp, struct aj_aml_job *out,
		      struct aj_errors *err)
{
	if (aj_aml_job_read(resp->json, out))
		return aj_errors_oom(err);
	return 0;
}

int aj_aml_job_put(struct aj_arm *a, const struct aj_aml_workspace *ws, const char *name,
		   const cJSON *body, struct aj_aml_job *out, int *created,
		   long *http_status, struct aj_errors *err)
{
	struct aj_arm_response resp;
	int r;

	memset(out, 0, sizeof(*out));
	*created = 0;
	r = job_request(a, ws, name, "", "PUT", body, 0, &resp, err);
	*http_status = resp.status;
	if (!r) {
		*created = resp.status == 201;
		r = read_reply(&resp, out, err);
	}
	aj_arm_response_release(&resp);
	return r;
}

int aj_aml_job_get(struct aj_arm *a, const struct aj_aml_workspace *ws, const char *name,
		   struct aj_aml_job *out, struct aj_errors *err)
{
	struct aj_arm_response resp;
	int r;

	memset(out, 0, sizeof(*out));
	r = job_request(a, ws, name, "", "GET", NULL, 1, &resp, err);
	if (!r && read_reply(&resp, out, err))
		r = -1;
	aj_arm_response_release(&resp);
	return r;
}

int aj_aml_job_cancel(struct aj_arm *a, const struct aj_aml_workspace *ws, const char *name,
		      struct aj_errors *err)
{
	struct aj_arm_response resp;
	int r = job_request(a, ws, name, "/cancel", "POST", NULL, 1, &resp, err);

	aj_arm_response_release(&resp);
	return r;
}

int aj_aml_computes(struct aj_arm *a, const struct aj_aml_workspace *ws, cJSON **value,
		    long *http_status, struct aj_errors *err)
{
	struct aj_buf next = AJ_BUF_INIT(AJ_BUF_SMALL);
	int r = 0;

	*http_status = 0;
	if (!(*value = cJSON_CreateArray()) || aj_aml_workspace_id(ws, &next) ||
	    aj_buf_addstr(&next, "/computes"))
		r = aj_errors_oom(err);
	while (!r && next.len) {
		struct aj_arm_response resp;
		const char *link;
		cJSON *items, *c;

		aj_arm_response_init(&resp);
		r = aj_arm_request(a, "GET", aj_buf_cstr(&next), api(ws), NULL, &resp, err);
		*http_status = a->last_status;
		aj_buf_reset(&next);
		items = r ? NULL : cJSON_GetObjectItemCaseSensitive(resp.json, "value");
		/* moved from the page into the one list */
		while (cJSON_GetArraySize(items) && (c = cJSON_DetachItemFromArray(items, 0)))
			cJSON_AddItemToArray(*value, c);
		link = r ? NULL : aj_json_str(resp.json, "nextLink");
		if (link && aj_buf_addstr(&next, link))
			r = aj_errors_oom(err);
		aj_arm_response_release(&resp);
	}
	aj_buf_release(&next);
	if (r) {
		cJSON_Delete(*value);
		*value = NULL;
	}
	return r;
}

int aj_aml_subscriptions(struct aj_arm *a, struct aj_strlist *out, struct aj_errors *err)
{
	char *next = aj_strdup("/subscriptions");
	int r = next ? 0 : aj_errors_oom(err);

	while (!r && next) {
		struct aj_arm_response resp;
		const cJSON *s;

		aj_arm_response_init(&resp);
		r = aj_arm_request(a, "GET", next, AJ_AML_SUBSCRIPTIONS_API_VERSION, NULL, &resp, err);
		aj_free(next);
		next = NULL;
		const cJSON *value = r ? NULL : aj_json_get(resp.json, "value");

		cJSON_ArrayForEach(s, value) {
			const char *id = aj_json_str(s, "subscriptionId");
			const char *state = aj_json_str(s, "state");

			if (id && (!state || !strcmp(state, "Enabled")) && aj_strlist_add(out, id))
				r = aj_errors_oom(err);
		}
		if (!r && aj_json_str(resp.json, "nextLink") &&
		    !(next = aj_strdup(aj_json_str(resp.json, "nextLink"))))
			r = aj_errors_oom(err);
		aj_arm_response_release(&resp);
	}
	aj_free(next);
	return r;
}

void aj_aml_vcs_free(struct aj_vc *vcs, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		aj_vc_release(&vcs[i]);
	aj_free(vcs);
}

static cJSON *graph_body(const struct aj_strlist *subscriptions, const char *skip)
{
	cJSON *body = cJSON_CreateObject(), *subs;
	size_t i;

	if (!body || !cJSON_AddStringToObject(body, "query",
			"resources | where type == 'microsoft.machinelearningservices/virtualclusters' "
			"| order by name asc | project name, resourceGroup, subscriptionId") ||
	    !(subs = cJSON_AddArrayToObject(body, "subscriptions")))
		goto fail;
	for (i = 0; i < subscriptions->nr; i++) {
		cJSON *s = cJSON_CreateString(subscriptions->items[i]);

		if (!s || !cJSON_AddItemToArray(subs, s)) {
			cJSON_Delete(s);
			goto fail;
		}
	}
	if (skip) {
		cJSON *opts = cJSON_AddObjectToObject(body, "options");

		if (!opts || !cJSON_AddStringToObject(opts, "$skipToken", skip))
			goto fail;
	}
	return body;
fail:
	cJSON_Delete(body);
	return NULL;
}

int aj_aml_vc_discover(struct aj_arm *a, const struct aj_strlist *subscriptions,
		       struct aj_vc **vcs, size_t *nr, struct aj_errors *err)
{
	size_t alloc = *nr;
	char *skip = NULL;
	int r = 0;

	if (!subscriptions->nr)
		return 0;
	do {
		struct aj_arm_response resp;
		cJSON *body = graph_body(subscriptions, skip);
		const cJSON *row, *data;

		aj_free(skip);
		skip = NULL;
		if (!body)
			return aj_errors_oom(err);
		aj_arm_response_init(&resp);
		r = aj_arm_request(a, "POST", "/providers/Microsoft.ResourceGraph/resources",
				   AJ_AML_GRAPH_API_VERSION, body, &resp, err);
		cJSON_Delete(body);
		data = r ? NULL : aj_json_get(resp.json, "data");
		cJSON_ArrayForEach(row, data) {
			const char *name = aj_json_str(row, "name");
			const char *rg = aj_json_str(row, "resourceGroup");
			const char *sub = aj_json_str(row, "subscriptionId");

			if (!name || !rg || !sub)
				continue;
			if (AJ_GROW(*vcs, *nr + 1, alloc)) {
				r = aj_errors_oom(err);
				break;
			}
			aj_vc_init(&(*vcs)[*nr]);
			(*nr)++;
			if (aj_vc_set(&(*vcs)[*nr - 1], sub, rg, name)) {
				r = aj_errors_oom(err);
				break;
			}
		}
		if (!r && aj_json_str(resp.json, "$skipToken") &&
		    !(skip = aj_strdup(aj_json_str(resp.json, "$skipToken"))))
			r = aj_errors_oom(err);
		aj_arm_response_release(&resp);
	} while (!r && skip);
	aj_free(skip);
	return r;
}

int aj_aml_vcs_read(struct aj_arm *a, const char *sub,
		    int (*keep)(const void *ctx, const struct aj_vc *vc),
		    void (*unread)(const void *ctx, const struct aj_vc *vc, const struct aj_errors *why),
		    const void *ctx, struct aj_vc **vcs, size_t *nr, long *http_status,
		    struct aj_errors *err)
{
	struct aj_strlist subs = AJ_STRLIST_INIT;
	struct aj_errors e = AJ_ERRORS_INIT;
	size_t i, from = *nr, kept = *nr;
	int ret = -1;

	*http_status = 0;
	if (sub && aj_strlist_add(&subs, sub)) {
		aj_errors_oom(err);
		goto out;
	}
	if ((!sub && aj_aml_subscriptions(a, &subs, &e)) || aj_aml_vc_discover(a, &subs, vcs, nr, &e)) {
		*http_status = a->last_status;
		aj_errors_splice(err, &e);
		goto out;
	}
	for (i = from; i < *nr; i++) {
		struct aj_vc *vc = &(*vcs)[i];
		struct aj_errors qerr = AJ_ERRORS_INIT;

		if (keep && !keep(ctx, vc)) {
			aj_vc_release(vc);
			continue;
		}
		if (aj_aml_vc_quotas(a, vc, &qerr) < 0 && unread)
			unread(ctx, vc, &qerr);
		aj_errors_release(&qerr);
		if (kept != i)
			(*vcs)[kept] = *vc;
		kept++;
	}
	*nr = kept;
	ret = 0;
out:
	aj_errors_release(&e);
	aj_strlist_release(&subs);
	return ret;
}

int aj_aml_vc_quotas(struct aj_arm *a, struct aj_vc *vc, struct aj_errors *err)
{
	struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_arm_response resp;
	int r;

	aj_arm_response_init(&resp);
	if (aj_aml_vc_id(vc->subscription, vc->resource_group, vc->name, &path)) {
		aj_buf_release(&path);
		return aj_errors_oom(err);
	}
	r = request_maybe(a, "GET", aj_buf_cstr(&path), AJ_AML_VC_API_VERSION, NULL, &resp, err);
	if (!r && aj_vc_read_quotas(vc, resp.json, err))
		r = -1;
	aj_arm_response_release(&resp);
	aj_buf_release(&path);
	return r;
}
