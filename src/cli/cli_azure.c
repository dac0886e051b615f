/*
 * cli_azure.c - the Singularity catalog: `aj quota list`, `aj sku list`,
 * `aj image list`, the commands that explain what auto-selection
 * (src/azure/vcselect.h) sees.
 *
 * They talk to Azure Resource Manager with the user's credential (the chain
 * of src/azure/credential.h: AZURE_* service principal or workload identity,
 * managed identity, then `az login`). AJ_AZURE_ARM_ENDPOINT and
 * AJ_AZURE_CA_FILE point them at another endpoint (tests use the loopback
 * peer). Output is a table, or the same data with -o json|yaml.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "azure/aml.h"
#include "azure/arm.h"
#include "azure/credential.h"
#include "azure/vcselect.h"
#include "cli.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/sku.h"
#include "core/strlist.h"
#include "core/json.h"

/* --- Azure --- */

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? v : NULL;
}

int aj_cli_azure_open(struct aj_cli_azure *a, struct aj_errors *err)
{
	struct aj_identity_config ic;
	struct aj_arm_config ac;
	struct aj_credential *cred;

	memset(a, 0, sizeof(*a));
	aj_identity_config_default(&ic);
	aj_identity_config_from_env(&ic);
	ic.http.ca_file = env("AJ_AZURE_CA_FILE");
	if (aj_credential_chain_new(&ic, &cred, err) ||
	    aj_token_cache_new(cred, &ic.hooks, &a->tokens, err))
		return -1;
	aj_arm_config_default(&ac);
	if (env("AJ_AZURE_ARM_ENDPOINT"))
		ac.endpoint = env("AJ_AZURE_ARM_ENDPOINT");
	ac.http.ca_file = ic.http.ca_file;
	if (aj_arm_init(&a->arm, &ac, a->tokens, err))
		return -1;
	a->arm_ready = 1;
	return 0;
}

int aj_cli_azure_workspace(struct aj_place_workspace *out, struct aj_errors *err)
{
	const char *v = env("AJ_AZURE_WORKSPACE");

	if (!v)
		return 0;
	if (aj_place_workspace_parse(v, out))
		return aj_errors_add(err, NULL, "AJ_AZURE_WORKSPACE: \"%s\": expected "
				     "SUBSCRIPTION/RESOURCE_GROUP/WORKSPACE", v);
	return 1;
}

void aj_cli_azure_close(struct aj_cli_azure *a)
{
	if (a->arm_ready)
		aj_arm_release(&a->arm);
	aj_token_cache_free(a->tokens);
	a->arm_ready = 0;
	a->tokens = NULL;
}

/*
 * Every virtual cluster of every enabled subscription, with its quotas. A
 * VC whose quotas cannot be read is kept (empty) and its error recorded.
 */
static int load_vcs(struct aj_cli_azure *a, struct aj_vc **vcs, size_t *nr, struct aj_errors *err)
{
	struct aj_strlist subs = AJ_STRLIST_INIT;
	size_t i;
	int rc = 0;

	*vcs = NULL;
	*nr = 0;
	if (aj_aml_subscriptions(&a->arm, &subs, err) ||
	    aj_aml_vc_discover(&a->arm, &subs, vcs, nr, err))
		rc = -1;
	for (i = 0; !rc && i < *nr; i++)
		if (aj_aml_vc_quotas(&a->arm, &(*vcs)[i], err))
			rc = -1;
	aj_strlist_release(&subs);
	return rc;
}

static void vc_cell(struct aj_cli_table *t, const struct aj_vc *vc, int full)
{
	if (full)
		aj_cli_table_addf(t, "%s/%s/%s", vc->subscription, vc->resource_group, vc->name);
	else
		aj_cli_table_add(t, vc->name);
}

/* --- the family catalog --- */

static const struct aj_sku_family *family_of(const char *series)
{
	const struct aj_sku_family *f;
	size_t nr, i;

	f = aj_sku_families(&nr);
	for (i = 0; i < nr; i++)
		if (!strcmp(f[i].series, series))
			return &f[i];
	return NULL;
}

/* "A100 80GB", "CPU", or "" for a series aj does not know. */
static void accelerator(const char *series, char *out, size_t size)
{
	const struct aj_sku_family *f = family_of(series);

	if (!f)
		snprintf(out, size, "%s", "");
	else if (!f->model)
		snprintf(out, size, "CPU");
	else
		snprintf(out, size, "%s %dGB", f->model, f->memory_gb);
}

/* The SKU shorthand for size i of f: "80G8-A100-NvLink", "C3". */
static void shorthand(const struct aj_sku_family *f, size_t i, char *out, size_t size)
{
	if (!f->model)
		snprintf(out, size, "C%zu", i + 1);
	else
		snprintf(out, size, "%dG%d-%s%s", f->memory_gb, f->units[i], f->model,
			 f->nvlink ? "-NvLink" : "");
}

static int has_quota(const struct aj_vc_quota *q)
{
	int t;

	for (t = 0; t < AJ_TIERS; t++)
		if (q->limit[t] > 0)
			return 1;
	return q->user_limit > 0;
}

/* --- JSON --- */

static cJSON *limit_json(long limit, long used)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddNumberToObject(o, "limit", (double)limit) ||
	    !cJSON_AddNumberToObject(o, "used", (double)used)) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *vc_json(const struct aj_vc *vc)
{
	cJSON *o = cJSON_CreateObject();

	if (!o || !cJSON_AddStringToObject(o, "subscription", vc->subscription) ||
	    !cJSON_AddStringToObject(o, "resourceGroup", vc->resource_group) ||
	    !cJSON_AddStringToObject(o, "name", vc->name) ||
	    (vc->location && !cJSON_AddStringToObject(o, "location", vc->location))) {
		cJSON_Delete(o);
		return NULL;
	}
	return o;
}

static cJSON *quota_json(const struct aj_vc_quota *q)
{
	cJSON *o = cJSON_CreateObject(), *tiers;
	char acc[64];
	int t;

	accelerator(q->series, acc, sizeof(acc));
	if (!o || !cJSON_AddStringToObject(o, "series", q->series) ||
	    (*acc && !cJSON_AddStringToObject(o, "accelerator", acc)) ||
	    !(tiers = cJSON_AddObjectToObject(o, "tiers")))
		goto fail;
	for (t = 0; t < AJ_TIERS; t++)
		if (q->limit[t] >= 0 &&
		    aj_cli_attach(tiers, aj_tier_name((enum aj_tier)t), limit_json(q->limit[t], q->used[t])))
			goto fail;
	if (q->user_limit >= 0 && aj_cli_attach(o, "user", limit_json(q->user_limit, q->user_used)))
		goto fail;
	return o;
fail:
	cJSON_Delete(o);
	return NULL;
}

static int print_json(cJSON *doc, const struct aj_cli_opts *o, struct aj_errors *err)
{
	int rc = doc ? aj_cli_print_doc(doc, o->format, err) : aj_errors_oom(err);

	cJSON_Delete(doc);
	return rc;
}

/* --- aj quota list --- */

static int quota_table(const struct aj_vc *vcs, size_t nr, int full, struct aj_errors *err)
{
	static const char *const head[] = {
		"VIRTUAL CLUSTER", "LOCATION", "SERIES", "ACCELERATOR", "PREMIUM", "STANDARD",
		"BASIC", "USER"
	};
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(8);
	size_t i, j, c;
	int rc, t2;

	for (c = 0; c < 8; c++)
		aj_cli_table_add(&t, head[c]);
	for (i = 0; i < nr; i++)
		for (j = 0; j < vcs[i].quotas_nr; j++) {
			const struct aj_vc_quota *q = &vcs[i].quotas[j];
			char acc[64];

			if (!full && !has_quota(q))
				continue;
			accelerator(q->series, acc, sizeof(acc));
			vc_cell(&t, &vcs[i], full);
			aj_cli_table_add(&t, vcs[i].location);
			aj_cli_table_add(&t, q->series);
			aj_cli_table_add(&t, acc);
			for (t2 = 0; t2 < AJ_TIERS; t2++)
				if (q->limit[t2] < 0)
					aj_cli_table_add(&t, NULL);
				else
					aj_cli_table_addf(&t, "%ld/%ld", q->used[t2], q->limit[t2]);
			if (q->user_limit < 0)
				aj_cli_table_add(&t, NULL);
			else
				aj_cli_table_addf(&t, "%ld/%ld", q->user_used, q->user_limit);
		}
	rc = aj_cli_table_print(&t, err);
	aj_cli_table_release(&t);
	return rc;
}

static cJSON *quota_doc(const struct aj_vc *vcs, size_t nr, int full)
{
	cJSON *doc = cJSON_CreateArray();
	size_t i, j;

	for (i = 0; doc && i < nr; i++) {
		cJSON *vc = vc_json(&vcs[i]);
		cJSON *list = vc ? cJSON_AddArrayToObject(vc, "quotas") : NULL;

		if (!list || !cJSON_AddItemToArray(doc, vc)) {
			cJSON_Delete(vc);
			cJSON_Delete(doc);
			return NULL;
		}
		for (j = 0; j < vcs[i].quotas_nr; j++) {
			cJSON *q;

			if (!full && !has_quota(&vcs[i].quotas[j]))
				continue;
			q = quota_json(&vcs[i].quotas[j]);

			if (!q || !cJSON_AddItemToArray(list, q)) {
				cJSON_Delete(q);
				cJSON_Delete(doc);
				return NULL;
			}
		}
	}
	return doc;
}

int aj_cli_quota_list_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_cli_azure a;
	struct aj_vc *vcs = NULL;
	size_t nr = 0;
	int rc;

	rc = aj_cli_azure_open(&a, &err) || load_vcs(&a, &vcs, &nr, &err);
	if (!rc)
		rc = o->format_set ? print_json(quota_doc(vcs, nr, o->full), o, &err)
				   : quota_table(vcs, nr, o->full, &err);
	aj_cli_print_errors(&err);
	aj_aml_vcs_free(vcs, nr);
	aj_cli_azure_close(&a);
	aj_errors_release(&err);
	return rc ? AJ_EXIT_FAIL : AJ_EXIT_OK;
}

/* --- aj sku list --- */

/* Free units of q in tier t as a cell ("-" when the tier has no quota). */
static void free_cell(struct aj_cli_table *t, const struct aj_vc_quota *q, enum aj_tier tier)
{
	long f = aj_vc_quota_free(q, tier);

	if (f < 0 || !q->limit[tier])
		aj_cli_table_add(t, NULL);
	else
		aj_cli_table_addf(t, "%ld", f);
}

/* Calls fn for every (VC, family, size) the VCs have quota for. */
struct sku_row {
	const struct aj_vc *vc;
	const struct aj_vc_quota *q;
	const struct aj_sku_family *f;
	size_t size;
};

static int each_sku(const struct aj_vc *vcs, size_t nr, int (*fn)(const struct sku_row *, void *),
		    void *ctx)
{
	size_t i, j, s;

	for (i = 0; i < nr; i++)
		for (j = 0; j < vcs[i].quotas_nr; j++) {
			const struct aj_vc_quota *q = &vcs[i].quotas[j];
			const struct aj_sku_family *f = family_of(q->series);

			if (!f || !has_quota(q))
				continue;
			for (s = 0; s < AJ_SKU_FAMILY_SIZES && f->names[s]; s++) {
				struct sku_row r = { &vcs[i], q, f, s };

				if (fn(&r, ctx))
					return -1;
			}
		}
	return 0;
}

static int sku_table_row(const struct sku_row *r, void *ctx)
{
	struct aj_cli_table *t = ctx;
	char sku[64];
	int tier;

	shorthand(r->f, r->size, sku, sizeof(sku));
	vc_cell(t, r->vc, 0);
	aj_cli_table_add(t, sku);
	aj_cli_table_addf(t, "Singularity.%s", r->f->names[r->size]);
	aj_cli_table_addf(t, "%d", r->f->units[r->size]);
	for (tier = 0; tier < AJ_TIERS; tier++)
		free_cell(t, r->q, (enum aj_tier)tier);
	return t->failed ? -1 : 0;
}

static int sku_json_row(const struct sku_row *r, void *ctx)
{
	cJSON *doc = ctx, *o = cJSON_CreateObject(), *free_units;
	char sku[64];
	int tier;

	shorthand(r->f, r->size, sku, sizeof(sku));
	if (!o || !cJSON_AddItemToArray(doc, o)) {
		cJSON_Delete(o);
		return -1;
	}
	if (!cJSON_AddStringToObject(o, "virtualCluster", r->vc->name) ||
	    !cJSON_AddStringToObject(o, "subscription", r->vc->subscription) ||
	    !cJSON_AddStringToObject(o, "resourceGroup", r->vc->resource_group) ||
	    !cJSON_AddStringToObject(o, "sku", sku) ||
	    !cJSON_AddStringToObject(o, "series", r->f->series) ||
	    !cJSON_AddStringToObject(o, "instanceType", r->f->names[r->size]) ||
	    !cJSON_AddNumberToObject(o, "unitsPerInstance", r->f->units[r->size]) ||
	    !(free_units = cJSON_AddObjectToObject(o, "free")))
		return -1;
	for (tier = 0; tier < AJ_TIERS; tier++) {
		long f = aj_vc_quota_free(r->q, (enum aj_tier)tier);

		if (f >= 0 && !cJSON_AddNumberToObject(free_units, aj_tier_name((enum aj_tier)tier),
						       (double)f))
			return -1;
	}
	return 0;
}

int aj_cli_sku_list_run(const struct aj_cli_opts *o)
{
	static const char *const head[] = {
		"VIRTUAL CLUSTER", "SKU", "INSTANCE TYPE", "UNITS", "PREMIUM FREE",
		"STANDARD FREE", "BASIC FREE"
	};
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(7);
	struct aj_cli_azure a;
	struct aj_vc *vcs = NULL;
	cJSON *doc = NULL;
	size_t nr = 0, c;
	int rc;

	rc = aj_cli_azure_open(&a, &err) || load_vcs(&a, &vcs, &nr, &err);
	if (!rc && o->format_set) {
		doc = cJSON_CreateArray();
		rc = !doc || each_sku(vcs, nr, sku_json_row, doc) ? aj_errors_oom(&err)
			: aj_cli_print_doc(doc, o->format, &err);
	} else if (!rc) {
		for (c = 0; c < 7; c++)
			aj_cli_table_add(&t, head[c]);
		rc = each_sku(vcs, nr, sku_table_row, &t) ? aj_errors_oom(&err)
			: aj_cli_table_print(&t, &err);
	}
	aj_cli_print_errors(&err);
	cJSON_Delete(doc);
	aj_cli_table_release(&t);
	aj_aml_vcs_free(vcs, nr);
	aj_cli_azure_close(&a);
	aj_errors_release(&err);
	return rc ? AJ_EXIT_FAIL : AJ_EXIT_OK;
}

/* --- aj image list --- */

/* names[] and aliases[] sit on the image or in its properties. */
static const cJSON *image_list(const cJSON *img, const char *key)
{
	const cJSON *v = aj_json_get(img, key);

	return v ? v : aj_json_get(aj_json_get(img, "properties"), key);
}

/* The image's name: the first of its names with a tag. */
static const char *image_name(const cJSON *img)
{
	const cJSON *n;

	cJSON_ArrayForEach(n, image_list(img, "names"))
		if (cJSON_IsString(n) && strchr(n->valuestring, ':'))
			return n->valuestring;
	return NULL;
}

static int image_matches(const cJSON *img, const char *filter)
{
	const cJSON *a;
	const char *name = image_name(img);
	size_t flen = filter ? strlen(filter) : 0;
	const char *p;

	if (!filter)
		return 1;
	for (p = name; p && *p; p++)
		if (!strncasecmp(p, filter, flen))
			return 1;
	cJSON_ArrayForEach(a, image_list(img, "aliases"))
		for (p = cJSON_IsString(a) ? a->valuestring : NULL; p && *p; p++)
			if (!strncasecmp(p, filter, flen))
				return 1;
	return 0;
}

/* The first subscription that offers images: their resources, kept in *out. */
static int load_images(struct aj_cli_azure *a, cJSON **out, struct aj_errors *err)
{
	struct aj_strlist subs = AJ_STRLIST_INIT;
	size_t i;
	int rc = aj_aml_subscriptions(&a->arm, &subs, err);

	*out = NULL;
	for (i = 0; !rc && !*out && i < subs.nr; i++) {
		struct aj_buf path = AJ_BUF_INIT(AJ_BUF_SMALL);
		struct aj_arm_response r;

		aj_arm_response_init(&r);
		aj_buf_addf(&path, "/subscriptions/%s/providers/Microsoft.Singularity/images",
			    subs.items[i]);
		rc = path.failed ? aj_errors_oom(err)
			: aj_arm_request(&a->arm, "GET", aj_buf_cstr(&path), AJ_AML_IMAGES_API_VERSION,
					 NULL, &r, err);
		if (!rc && cJSON_GetArraySize(aj_json_get(r.json, "value")) > 0)
			*out = cJSON_DetachItemFromObjectCaseSensitive(r.json, "value");
		aj_arm_response_release(&r);
		aj_buf_release(&path);
	}
	aj_strlist_release(&subs);
	return rc;
}

static int image_join_aliases(const cJSON *img, struct aj_buf *b)
{
	const cJSON *a;

	aj_buf_reset(b);
	cJSON_ArrayForEach(a, image_list(img, "aliases"))
		if (cJSON_IsString(a))
			aj_buf_addf(b, "%s%s", b->len ? ", " : "", a->valuestring);
	return b->failed ? -1 : 0;
}

int aj_cli_image_list_run(const struct aj_cli_opts *o)
{
	struct aj_errors err = AJ_ERRORS_INIT;
	struct aj_cli_table t = AJ_CLI_TABLE_INIT(2);
	struct aj_buf aliases = AJ_BUF_INIT(AJ_BUF_SMALL);
	struct aj_cli_azure a;
	cJSON *images = NULL, *doc = NULL;
	const cJSON *img;
	int rc;

	rc = aj_cli_azure_open(&a, &err) || load_images(&a, &images, &err);
	if (!rc) {
		doc = cJSON_CreateArray();
		t.failed = !doc;
		aj_cli_table_add(&t, "IMAGE");
		aj_cli_table_add(&t, "ALIASES");
		if (!doc) {
			cJSON_Delete(images);
			images = NULL;
		}
		cJSON_ArrayForEach(img, images) {
			const char *name = image_name(img);
			cJSON *row, *al;

			if (!name || !image_matches(img, o->arg))
				continue;
			row = cJSON_CreateObject();
			al = image_list(img, "aliases") ? cJSON_Duplicate(image_list(img, "aliases"), 1)
							 : cJSON_CreateArray();
			/* al belongs to row once attached (or is freed by the attempt) */
			if (!row || aj_cli_attach(row, "aliases", al) ||
			    !cJSON_AddStringToObject(row, "name", name) || !cJSON_AddItemToArray(doc, row)) {
				if (!row)
					cJSON_Delete(al);
				cJSON_Delete(row);
				t.failed = 1;
				break;
			}
			if (image_join_aliases(img, &aliases)) {
				t.failed = 1;
				break;
			}
			aj_cli_table_addf(&t, "amlt-sing/%s", name);
			aj_cli_table_add(&t, aj_buf_cstr(&aliases));
		}
		if (t.failed || !doc)
			rc = aj_errors_oom(&err);
		else
			rc = o->format_set ? aj_cli_print_doc(doc, o->format, &err) : aj_cli_table_print(&t, &err);
	}
	aj_cli_print_errors(&err);
	cJSON_Delete(doc);
	cJSON_Delete(images);
	aj_buf_release(&aliases);
	aj_cli_table_release(&t);
	aj_cli_azure_close(&a);
	aj_errors_release(&err);
	return rc ? AJ_EXIT_FAIL : AJ_EXIT_OK;
}
